/* frames record: trace a program (x86-64 Linux), one std_frame per executed user
   instruction with register and memory operand values, syscall frames, modload frames,
   threads and (on request) forked processes, through the recording API. The command
   parses options, opens the writer, runs one engine (tools/record/record.h: Valgrind with
   the frames tool, the default when the tool is built, or ptrace single-stepping) and
   reports. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "record/record.h"

static const char record_usage[] =
    "usage: frames record [-o OUT] [-f] [--zstd[=LEVEL]] [--engine valgrind|ptrace|qemu] [--no-mem]\n"
    "                     [--follow-forks] [--sample N:M] [--no-pin] [--qemu PATH] [-L SYSROOT]\n"
    "                     [--quiet] -- PROGRAM [ARGS...]\n"
    "       frames record --probe\n"
    "\n"
    "Runs PROGRAM and records every user instruction of every thread into a frames trace\n"
    "(x86-64: arch i386, machine 64; under QEMU: AArch64 arch aarch64, ARM arch arm,\n"
    "machine 0; MIPS arch mips, machine 32; RISC-V 64 arch 0, unknown, the guest named\n"
    "in the meta frame's tracer args):\n"
    "  std_frame     per instruction: address, bytes, thread id; registers read (values\n"
    "                before) and written (values after); memory read (before), memory\n"
    "                written (old value before with read = written = false, new value after)\n"
    "  syscall_frame per syscall instruction: number and the six arguments\n"
    "  modload_frame per executable mapping (at exec and after mmap/mprotect/mremap)\n"
    "  exception_frame per signal delivered to a handler or ending the program (number =\n"
    "                signal, from_addr = pc; ignored signals such as SIGCHLD are not)\n"
    "\n"
    "  --engine E        valgrind: run PROGRAM under Valgrind with the frames tool (millions\n"
    "                    of instructions/s; the default when the tool was built);\n"
    "                    ptrace: single-step it (tens of thousands/s; exact CPU);\n"
    "                    qemu: run it under QEMU user mode with the frames plugin (the\n"
    "                    default for an ELF of another architecture: AArch64, ARM,\n"
    "                    MIPS 32 so far;\n"
    "                    docs/qemu.md)\n"
    "  --qemu PATH       qemu engine: the QEMU to run (default qemu-ARCH on PATH; a\n"
    "                    dynamic build that can load plugins, e.g. Debian's qemu-user)\n"
    "  -L SYSROOT        qemu engine: where a dynamic program's loader and libraries are\n"
    "                    (QEMU's -L, e.g. /usr/aarch64-linux-gnu)\n"
    "  -o OUT            output trace (default trace.frames; - = standard output, and the\n"
    "                    program's standard output then goes to standard error); an existing\n"
    "                    OUT is kept unless -f; OUT appears when the recording ends; it\n"
    "                    may not be PROGRAM nor a file named by its ARGS\n"
    "  -f, --force       replace an existing OUT (docs/outputs.md)\n"
    "  --zstd[=LEVEL]    compressed trace (.frames.zst; an OUT ending in .zst chooses it,\n"
    "                    and --zstd with another OUT is refused); LEVEL 1 by default\n"
    "                    here, not 3 as elsewhere: the compression thread shares the\n"
    "                    machine with the program\n"
    "  --no-mem          no memory operands (registers only; faster)\n"
    "  --follow-forks    also trace child processes (fork, vfork, clone without threads)\n"
    "  --sample N:M      record N instructions, skip M, repeating (per thread); skipped\n"
    "                    instructions still run traced, syscalls are always recorded\n"
    "  --no-pin          ptrace: do not pin tracer and program to one CPU (pinning makes\n"
    "                    each step about 2x faster on VMs; the program sees a one-CPU mask)\n"
    "  --quiet           no summary on standard error\n"
    "  --probe           report whether this kernel honours PTRACE_SINGLEBLOCK, and exit\n"
    "\n"
    "Exit status: the program's own (128+N when signal N ended it, as shells report it),\n"
    "once its trace was written; 125 the trace could not be written or the recording\n"
    "failed (what happened to the trace and to the program is on standard error); 126\n"
    "PROGRAM is not executable or no engine can run it; 127 PROGRAM was not found; 2 usage\n"
    "(before the program runs). Interrupted (SIGINT, SIGTERM, SIGHUP): the program is\n"
    "killed, the trace finished, and the status is 128+that signal.\n";

#ifndef RECORD_SUPPORTED

int cmd_record(int argc, char **argv) {
    if (cli_wants_help(argc, argv)) {
        fputs(record_usage, stdout);
        return CLI_OK;
    }
    return cli_fail(CLI_DATA, "not built: the tracer needs x86-64 Linux");
}

int record_into_sink(const struct frames_sink *sink, int argc, char **argv) {
    (void)sink, (void)argc, (void)argv;
    return cli_fail(CLI_DATA, "not built: the tracer needs x86-64 Linux");
}

#else

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---------------------------------------------------------------- setup */

/* Exit statuses of frames record itself, next to the program's own (env(1)'s habit). */
enum { REC_EXIT_TRACE = 125, REC_EXIT_NOEXEC = 126, REC_EXIT_NOTFOUND = 127 };

/* A regular file we may execute? 0 yes, 1 it exists but is not one, -1 nothing there. */
static int executable(const char *path) {
    struct stat st;
    if (stat(path, &st) < 0) return -1;
    return S_ISREG(st.st_mode) && access(path, X_OK) == 0 ? 0 : 1;
}

/* PROGRAM as execvp would find it: 0 found (path in out), REC_EXIT_NOEXEC when only
   something not executable is there, REC_EXIT_NOTFOUND when nothing is. */
static int find_program(const char *name, char *out, size_t cap) {
    const char *path = getenv("PATH"), *p;
    int seen = 0, e;
    if (strchr(name, '/')) {
        snprintf(out, cap, "%s", name);
        e = executable(out);
        return e == 0 ? 0 : e > 0 ? REC_EXIT_NOEXEC : REC_EXIT_NOTFOUND;
    }
    if (!path) path = "/usr/local/bin:/usr/bin:/bin";
    for (p = path;; p = strchr(p, ':') + 1) {
        size_t len = strchr(p, ':') ? (size_t)(strchr(p, ':') - p) : strlen(p);
        snprintf(out, cap, "%.*s/%s", (int)len, len ? p : ".", name);
        if ((e = executable(out)) == 0) return 0;
        seen |= e > 0;
        if (!strchr(p, ':')) break;
    }
    return seen ? REC_EXIT_NOEXEC : REC_EXIT_NOTFOUND;
}

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* The program's fate, on standard error. */
static void report_program(const rec_run *t, const char *path) {
    int s = t->main_status;
    if (!t->main_done) return;
    if (WIFEXITED(s)) fprintf(stderr, "frames record: %s exited with status %d\n", path, WEXITSTATUS(s));
    else if (WIFSIGNALED(s)) fprintf(stderr, "frames record: %s killed by signal %d (%s)\n", path,
                                     WTERMSIG(s), strsignal(WTERMSIG(s)));
}

/* frames record's status: the program's, unless the trace is not good. */
static int exit_status(const rec_run *t) {
    if (t->failed || !t->main_done) return REC_EXIT_TRACE;
    if (rec_interrupted()) return 128 + rec_interrupted(); /* the program was killed for it */
    if (WIFEXITED(t->main_status)) return WEXITSTATUS(t->main_status);
    if (WIFSIGNALED(t->main_status)) return 128 + WTERMSIG(t->main_status);
    return REC_EXIT_TRACE;
}

static void report(const rec_run *t, const char *path, double secs) {
    fprintf(stderr, "frames record: %llu instructions in %.2f s (%.0f instructions/s), %llu syscalls, "
                    "%llu thread(s), %llu module(s), %llu frames -> %s\n",
            (unsigned long long)t->instructions, secs, secs > 0 ? (double)t->instructions / secs : 0.0,
            (unsigned long long)t->syscalls, (unsigned long long)t->nthreads,
            (unsigned long long)t->nmodules, (unsigned long long)t->frames, t->out);
    if (t->undecoded && t->dec)
        fprintf(stderr, "frames record: %llu instructions capstone could not decode (recorded without "
                        "operands)\n", (unsigned long long)t->undecoded);
    report_program(t, path);
}

/* The engines, the default first among those available. */
static const rec_engine *const engines[] = {&rec_engine_valgrind, &rec_engine_ptrace, &rec_engine_qemu};
#define NENGINES (sizeof engines / sizeof engines[0])

static const rec_engine *find_engine(const char *name) {
    size_t i;
    for (i = 0; i < NENGINES; i++)
        if (!strcmp(engines[i]->name, name)) return engines[i];
    return NULL;
}

/* The first engine that can run here and can run PROGRAM (the last one if none says it
   can run here); NULL with why when none can run PROGRAM. */
static const rec_engine *default_engine(const char *path, char *why, size_t cap) {
    char here[256];
    size_t i;
    int reason = 0;
    for (i = 0; i < NENGINES; i++) {
        if (i + 1 < NENGINES && engines[i]->available(here, sizeof here) != 0) continue;
        if (engines[i]->can_run(path, reason ? here : why, reason ? sizeof here : cap) == 0) return engines[i];
        reason = 1; /* the first engine's reason is the one given */
    }
    { /* ... unless the program is of an architecture the qemu engine records */
        uint64_t arch, machine;
        if (rec_qemu_header(path, &arch, &machine) == 0) rec_engine_qemu.can_run(path, why, cap);
    }
    return NULL;
}

static int parse_args(rec_run *t, int argc, char **argv, int *first, const rec_engine **engine) {
    int i, zstd = 0;
    const char *qemu = NULL, *sysroot = NULL;
    t->out = "trace.frames";
    t->pin = 1;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i], *v = NULL;
        if (!strcmp(a, "--")) { i++; break; }
        if (a[0] != '-') break;
        if ((!strcmp(a, "-o") || !strcmp(a, "--engine") || !strcmp(a, "--sample") || !strcmp(a, "--qemu") ||
             !strcmp(a, "-L")) &&
            !(v = cli_option_value(argc, argv, &i)))
            return CLI_USAGE;
        if (!strcmp(a, "--probe")) return cli_usage_error("--probe is used alone: frames record --probe");
        if (!strcmp(a, "-o")) t->out = v;
        else if (cli_zstd_option(a)) {
            if (cli_zstd_option(a) == CLI_USAGE) return CLI_USAGE;
            zstd = 1;
        }
        else if (cli_force_option(a)) continue;
        else if (!strcmp(a, "--no-mem")) t->no_mem = 1;
        else if (!strcmp(a, "--follow-forks")) t->follow = 1;
        else if (!strcmp(a, "--no-pin")) t->pin = 0;
        else if (!strcmp(a, "--qemu")) qemu = v;
        else if (!strcmp(a, "-L")) sysroot = v;
        else if (!strcmp(a, "--quiet")) t->quiet = 1;
        else if (!strcmp(a, "--engine")) {
            if (!(*engine = find_engine(v))) return cli_usage_error("--engine wants valgrind, ptrace or qemu");
        }
        else if (!strcmp(a, "--sample")) {
            char *colon = strchr(argv[i], ':');   /* argv[i] is v */
            if (!colon) return cli_usage_error("--sample wants N:M");
            *colon = 0;
            if (cli_parse_u64(argv[i], &t->sample_on) || cli_parse_u64(colon + 1, &t->sample_off) ||
                t->sample_on == 0)
                return cli_usage_error("--sample wants N:M with N > 0");
        } else return cli_usage_error("unknown option '%s'", a);
    }
    if (i >= argc) return cli_usage_error("no program given");
    rec_qemu_options(qemu, sysroot);
    /* a plain name must not hold compressed bytes (a reader would take them for a
       corrupt .frames): the name decides, --zstd only confirms or sets the level */
    if (zstd && strcmp(t->out, "-") && !(strlen(t->out) > 4 && !strcmp(t->out + strlen(t->out) - 4, ".zst")))
        return cli_usage_error("--zstd writes a compressed trace: name it OUT.frames.zst (%s does not end in .zst)",
                               t->out);
    *first = i;
    return CLI_OK;
}

static int probe(void) {
    int r = rp_probe_singleblock();
    if (r < 0) return cli_fail(CLI_DATA, "probe failed: %s", strerror(errno));
    printf("PTRACE_SINGLEBLOCK: %s\n", r ? "honoured (stops at taken branches only)"
                                         : "not honoured (stops after every instruction, like "
                                           "PTRACE_SINGLESTEP)");
    return CLI_OK;
}

/* The files the program may read: itself, and each argument (and the value of each
   --name=value argument) that names one. OUT may be none of them: the recording would
   replace a file the program was given (`record -f -o data -- sort data`). NULL when out
   of memory; *n entries (a NULL or "-" entry is skipped by the output rule). */
static const char **program_inputs(const char *path, int argc, char **argv, size_t *n) {
    const char **inputs = (const char **)malloc(sizeof *inputs * (2 * (size_t)argc + 1));
    int i;
    *n = 0;
    if (!inputs) return NULL;
    inputs[(*n)++] = path;
    for (i = 1; i < argc; i++) {
        const char *eq = argv[i][0] == '-' ? strchr(argv[i], '=') : NULL;
        inputs[(*n)++] = argv[i];
        if (eq) inputs[(*n)++] = eq + 1;
    }
    return inputs;
}

/* The trace goes through the output rule (docs/outputs.md): an existing OUT is kept
   unless -f, OUT may not be the program itself nor a file named by its arguments, and
   the trace is written to a temporary file renamed into place when it is finished. */
static int open_writer(rec_run *t, const rec_engine *e, cli_output *o, rp_meta *meta,
                       const char *path, int argc, char **argv) {
    frames_writer_options wo;
    const char **inputs;
    size_t ninputs;
    int rc;
    frames_writer_options_default(&wo);
    wo.arch = FRAMES_ARCH_I386;
    wo.machine = FRAMES_MACH_X86_64;
    if (e == &rec_engine_qemu) rec_qemu_header(path, &wo.arch, &wo.machine); /* the guest's */
    if (t->sink) {   /* another command's consumer (frames vprof online): no file */
        frames_error err;
        rp_meta_build(meta, path, argc, argv);
        if (e == &rec_engine_qemu) rec_qemu_meta(path, &meta->meta);
        if (frames_writer_open(&t->w, t->sink, &wo, &meta->meta, &err) < 0) {
            cli_lib_error(&err);
            rp_meta_free(meta);
            return CLI_DATA;
        }
        t->shared.writer = t->w;
        return CLI_OK;
    }
    if (!(inputs = program_inputs(path, argc, argv, &ninputs))) return cli_fail(CLI_DATA, "out of memory");
    rc = cli_output_open(o, t->out, inputs, ninputs);
    free(inputs);
    if (rc != CLI_OK) return rc;
    rp_meta_build(meta, path, argc, argv);
    if (e == &rec_engine_qemu) rec_qemu_meta(path, &meta->meta);
    if (!(t->w = cli_output_writer(o, &wo, &meta->meta))) {
        cli_output_abort(o);
        rp_meta_free(meta);
        return CLI_DATA;
    }
    t->shared.writer = t->w;
    return CLI_OK;
}

/* A failed recording keeps the frames it wrote when the trace could be finished: a run
   cannot be repeated exactly, and stderr says the trace is incomplete. A trace that could
   not be finished, or holds nothing, is removed (and an older OUT stays as it was).
   Returns 1 when the trace was kept. */
static int close_trace(rec_run *t, cli_output *o) {
    int rc = frames_writer_close(t->w);
    if (t->sink && rc == FRAMES_UNFINISHED) rc = FRAMES_OK;   /* a stream has no TOC */
    if (rc < 0 && !t->failed) t->failed = cli_lib_error(frames_writer_error(t->w));
    if (t->sink) return rc >= 0;
    if (rc < 0 || (t->failed && !t->frames)) {
        cli_output_abort(o);
        return 0;
    }
    if (cli_output_commit(o) != CLI_OK) {
        t->failed = 1;
        return 0;
    }
    return 1;
}

/* Run the program with engine e into a new writer, then report. */
static int record_with(rec_run *t, const rec_engine *e, const char *path, int argc, char **argv) {
    rp_meta meta;
    cli_output o;
    void *state;
    double t0;
    int rc, kept;
    if ((rc = open_writer(t, e, &o, &meta, path, argc, argv)) != CLI_OK)
        return rc == CLI_USAGE ? CLI_USAGE : REC_EXIT_TRACE;
    t0 = now();
    state = e->start(t, path, argc, argv);
    if (state && !t->failed) e->pump(state);
    e->finish(t, state);
    kept = close_trace(t, &o);
    if (!t->failed) {
        if (!t->quiet) report(t, path, now() - t0);
    } else {
        if (t->sink)
            ;   /* no trace: the consumer (frames vprof) says what it got */
        else if (!strcmp(t->out, "-"))
            fprintf(stderr, "frames record: the trace on standard output is incomplete\n");
        else if (kept)
            fprintf(stderr, "frames record: the trace %s is incomplete\n", t->out);
        else
            fprintf(stderr, "frames record: no trace written (%s is as it was)\n", t->out);
        report_program(t, path);
    }
    rp_meta_free(&meta);
    return exit_status(t);
}

int cmd_record(int argc, char **argv) {
    rec_run t;
    const rec_engine *engine = NULL;
    char path[4096];
    int first = 0, rc;
    if (cli_wants_help(argc, argv)) {
        fputs(record_usage, stdout);
        return CLI_OK;
    }
    if (argc == 2 && !strcmp(argv[1], "--probe")) return probe();
    /* measured on gzip: level 1 takes 13% less CPU than 3 for a 3% larger trace, and
       the compression thread competes with the program and the converter for 2 cores */
    cli_zstd_prefer_level(1);
    memset(&t, 0, sizeof t);
    if ((rc = parse_args(&t, argc, argv, &first, &engine)) != CLI_OK) return rc;
    if ((rc = find_program(argv[first], path, sizeof path)) != 0)
        return cli_fail(rc, rc == REC_EXIT_NOEXEC ? "%s: not an executable file" : "%s: program not found",
                        argv[first]);
    if (engine) {
        char why[600];
        if (engine->can_run(path, why, sizeof why) != 0) return cli_fail(REC_EXIT_NOEXEC, "%s", why);
    } else {
        char why[600];
        if (!(engine = default_engine(path, why, sizeof why))) return cli_fail(REC_EXIT_NOEXEC, "%s", why);
    }
    if (!(t.dec = rx_open())) {
        char why[128];
#ifdef RECORD_HAVE_CAPSTONE
        snprintf(why, sizeof why, "%s cannot be loaded", rx_library());
#else
        snprintf(why, sizeof why, "frames was built without capstone (libcapstone-dev)");
#endif
        if (engine->needs_capstone) return cli_fail(REC_EXIT_TRACE, "the %s engine needs capstone: %s", engine->name, why);
        if (!t.quiet && engine != &rec_engine_qemu)
            cli_warn("%s: the registers instructions read are not recorded", why);
    }
    rc = record_with(&t, engine, path, argc - first, argv + first);
    rx_close(t.dec);
    return rc;
}

int record_into_sink(const struct frames_sink *sink, int argc, char **argv) {
    rec_run t;
    const rec_engine *engine;
    char path[4096], why[600];
    int rc;
    memset(&t, 0, sizeof t);
    t.out = "-";
    t.pin = 1;
    t.quiet = 1;
    t.sink = sink;
    if (argc < 1) return cli_usage_error("no program given");
    if ((rc = find_program(argv[0], path, sizeof path)) != 0)
        return cli_fail(rc, rc == REC_EXIT_NOEXEC ? "%s: not an executable file" : "%s: program not found",
                        argv[0]);
    if (!(engine = default_engine(path, why, sizeof why))) return cli_fail(REC_EXIT_NOEXEC, "%s", why);
    t.dec = rx_open();
    if (!t.dec && engine->needs_capstone)
        return cli_fail(REC_EXIT_TRACE, "the %s engine needs capstone", engine->name);
    rc = record_with(&t, engine, path, argc, argv);
    rx_close(t.dec);
    return rc;
}

#endif /* RECORD_SUPPORTED */
