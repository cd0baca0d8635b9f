/* engine_qemu.c - the QEMU engine of `frames record`: runs a program of another
   architecture under QEMU user mode (a dynamic qemu-ARCH, which can load plugins) with
   the frames plugin (tools/record/qemu/frames_qemu.c). The plugin encodes frames with the
   recording API and writes them in container form (8-byte length, payload) to a pipe;
   this engine checks that stream (untrusted: a bad length or frame fails the run with a
   message) and appends it to the command's writer, so compression and the output file
   stay the command's; --no-mem and --sample are passed to the plugin. docs/qemu.md. */
#include "record.h"

#ifdef RECORD_SUPPORTED
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"

/* --qemu and -L of the command line (rec_qemu_options). */
static const char *opt_qemu, *opt_sysroot;

void rec_qemu_options(const char *qemu, const char *sysroot) {
    opt_qemu = qemu;
    opt_sysroot = sysroot;
}

/* ---------------------------------------------------------------- guests */

/* An architecture the engine records: ELF machine and byte order, QEMU's name, the
   header's values. */
typedef struct rq_guest {
    unsigned elf_machine;
    int elf64, big_endian;
    const char *qemu;          /* qemu-<qemu> */
    const char *what;          /* for messages */
    uint64_t arch, machine;    /* BAP's (frames.h FRAMES_ARCH_*, machine per the spec §11) */
} rq_guest;

static const rq_guest guests[] = {
    {183, 1, 0, "aarch64", "AArch64", FRAMES_ARCH_AARCH64, 0}, /* EM_AARCH64, bfd_mach_aarch64 */
    {40, 0, 0, "arm", "ARM", FRAMES_ARCH_ARM, 0},              /* EM_ARM, bfd_mach_arm_unknown */
    {8, 0, 1, "mips", "MIPS (big-endian)", FRAMES_ARCH_MIPS, 32}, /* EM_MIPS, bfd_mach_mipsisa32 */
    {8, 0, 0, "mipsel", "MIPS (little-endian)", FRAMES_ARCH_MIPS, 32},
    /* EM_RISCV, 64-bit: the frozen arch table (spec 11) has no RISC-V, and a number taken
       from a newer binutils would name another architecture: arch 0 (unknown), the guest
       named in the meta frame's tracer args (docs/qemu.md) */
    {243, 1, 0, "riscv64", "RISC-V 64", 0, 0},
    /* only with --engine qemu (the x86-64 engines come first), to compare with them */
    {62, 1, 0, "x86_64", "x86-64", FRAMES_ARCH_I386, FRAMES_MACH_X86_64},
};

/* The guest of an ELF executable: NULL with why when it is none the engine records (or
   has no program header, which QEMU could not load). */
static const rq_guest *guest_of(const char *path, char *why, size_t cap) {
    unsigned char h[64];
    unsigned machine, phnum;
    size_t i;
    FILE *f = fopen(path, "rb");
    size_t n = f ? fread(h, 1, sizeof h, f) : 0;
    int be, is64;
    if (f) fclose(f);
    if (n < 52 || memcmp(h, "\177ELF", 4)) {
        snprintf(why, cap, "%s: not an ELF executable (the qemu engine records ELF programs)", path);
        return NULL;
    }
    be = h[5] == 2;
    is64 = h[4] == 2;
#define RQ_U16(o) (be ? (unsigned)h[o] << 8 | h[(o) + 1] : (unsigned)h[(o) + 1] << 8 | h[o])
    machine = RQ_U16(18);
    phnum = is64 ? (n == sizeof h ? RQ_U16(56) : 0) : RQ_U16(44);
#undef RQ_U16
    for (i = 0; i < sizeof guests / sizeof guests[0]; i++)
        if (guests[i].elf_machine == machine && guests[i].elf64 == is64 && guests[i].big_endian == be) {
            if (phnum) return &guests[i];
            snprintf(why, cap, "%s: an ELF for %s without program headers: nothing QEMU can load", path,
                     guests[i].what);
            return NULL;
        }
    snprintf(why, cap, "%s: ELF machine %u (%d-bit, %s-endian): the qemu engine records AArch64, ARM "
                       "(little-endian), MIPS 32, RISC-V 64 and x86-64 programs only so far", path, machine, is64 ? 64 : 32,
             be ? "big" : "little");
    return NULL;
}

int rec_qemu_header(const char *path, uint64_t *arch, uint64_t *machine) {
    char why[256];
    const rq_guest *gu = guest_of(path, why, sizeof why);
    if (!gu) return -1;
    *arch = gu->arch;
    *machine = gu->machine;
    return 0;
}

void rec_qemu_meta(const char *path, frames_meta *meta) {
    static char guest[64];
    static frames_bytes args[2];
    char why[256];
    const rq_guest *gu = guest_of(path, why, sizeof why);
    if (!gu) return;
    snprintf(guest, sizeof guest, "guest=%s", gu->qemu);
    args[0] = frames_str("engine=qemu");
    args[1] = frames_str(guest);
    meta->tracer_args = args;
    meta->ntracer_args = 2;
}

/* The qemu-ARCH to run: --qemu, else qemu-ARCH on PATH. 0, or -1 with why. */
static int find_qemu(const rq_guest *gu, char *out, size_t cap, char *why, size_t wcap) {
    const char *path = getenv("PATH"), *p;
    if (opt_qemu) {
        snprintf(out, cap, "%s", opt_qemu);
        if (access(out, X_OK) == 0) return 0;
        snprintf(why, wcap, "--qemu %s: not an executable file", opt_qemu);
        return -1;
    }
    for (p = path ? path : "/usr/bin"; p; p = strchr(p, ':') ? strchr(p, ':') + 1 : NULL) {
        size_t len = strchr(p, ':') ? (size_t)(strchr(p, ':') - p) : strlen(p);
        if (snprintf(out, cap, "%.*s/qemu-%s", (int)len, len ? p : ".", gu->qemu) < (int)cap &&
            access(out, X_OK) == 0)
            return 0;
    }
    snprintf(why, wcap, "an ELF for %s: qemu-%s was not found on PATH (Debian: apt-get install qemu-user; or "
                        "--qemu PATH)", gu->what, gu->qemu);
    return -1;
}

/* The plugin: $FRAMES_QEMU_PLUGIN, else qemu/frames_qemu.so next to the frames binary
   (the build tree), else ../lib/frames/qemu/frames_qemu.so (an installed tree). */
static int plugin_path(char *out, size_t cap) {
    const char *env = getenv("FRAMES_QEMU_PLUGIN");
    char exe[PATH_MAX], *slash;
    ssize_t n;
    if (env && *env) {
        snprintf(out, cap, "%s", env);
        return access(out, R_OK) == 0 ? 0 : -1;
    }
    n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return -1;
    exe[n] = 0;
    if (!(slash = strrchr(exe, '/'))) return -1;
    *slash = 0;
    if (snprintf(out, cap, "%s/qemu/frames_qemu.so", exe) < (int)cap && access(out, R_OK) == 0) return 0;
    if (snprintf(out, cap, "%s/../lib/frames/qemu/frames_qemu.so", exe) >= (int)cap) return -1;
    return access(out, R_OK) == 0 ? 0 : -1;
}

static const char no_plugin[] = "the qemu plugin was not built (tools/record/qemu; build.sh builds it)";

static int rq_available(char *why, size_t cap) {
    char p[PATH_MAX];
    if (plugin_path(p, sizeof p) == 0) return 0;
    snprintf(why, cap, "%s", no_plugin);
    return -1;
}

static int rq_can_run(const char *path, char *why, size_t cap) {
    char q[PATH_MAX];
    const rq_guest *gu = guest_of(path, why, cap);
    return gu && find_qemu(gu, q, sizeof q, why, cap) == 0 ? 0 : -1;
}

/* ---------------------------------------------------------------- the engine */

#define RQ_MAX_FRAME (64u << 20) /* a longer frame is a malformed stream */
#define RQ_MAX_TIDS 4096

typedef struct rq_engine {
    rec_run *r;
    int fd;                    /* the read end of the pipe */
    pid_t pid;                 /* qemu */
    uint64_t bytes;            /* of the stream */
    uint64_t tids[RQ_MAX_TIDS];
    size_t ntids;
    frames_decoder dec;        /* every frame is decoded and validated before it is kept */
} rq_engine;

static void count_thread(rq_engine *e, uint64_t tid) {
    size_t i;
    for (i = e->ntids; i-- > 0;)
        if (e->tids[i] == tid) return;
    if (e->ntids < RQ_MAX_TIDS) e->tids[e->ntids++] = tid;
}

/* The whole frames at the start of data[0..n): counts them, appends them to the writer.
   Returns the bytes consumed (a frame cut at the end waits for more). */
static size_t take_frames(rq_engine *e, const uint8_t *data, size_t n) {
    rec_run *r = e->r;
    size_t pos = 0;
    while (n - pos >= 8) {
        uint64_t len = 0;
        frames_frame f;
        frames_error err;
        int i;
        for (i = 7; i >= 0; i--) len = len << 8 | data[pos + (size_t)i];
        if (len == 0 || len > RQ_MAX_FRAME) {
            rec_fail(r, "the qemu plugin's stream is malformed: a frame of %llu bytes at offset %llu",
                     (unsigned long long)len, (unsigned long long)(e->bytes + pos));
            return n;
        }
        if (n - pos - 8 < len) break;
        if (frames_decode_frame(&e->dec, data + pos + 8, (size_t)len, &f, &err) < 0 ||
            frames_validate_frame(&f, &err) < 0) {
            rec_fail(r, "the qemu plugin's stream is malformed: frame %llu at offset %llu: %s",
                     (unsigned long long)r->frames, (unsigned long long)(e->bytes + pos), err.message);
            return n;
        }
        if (f.kind == FRAMES_KIND_STD) {
            r->instructions++;
            count_thread(e, f.std.thread_id);
        }
        r->syscalls += f.kind == FRAMES_KIND_SYSCALL;
        r->nmodules += f.kind == FRAMES_KIND_MODLOAD;
        r->frames++;
        pos += 8 + (size_t)len;
    }
    if (pos && frames_writer_add_frames(r->w, data, pos) < 0)
        rec_fail(r, "%s", frames_writer_error(r->w)->message);
    e->bytes += pos;
    return pos;
}

static size_t rq_take(void *ctx, const uint8_t *data, size_t n) {
    return take_frames((rq_engine *)ctx, data, n);
}

static void rq_pump(void *state) {
    rq_engine *e = (rq_engine *)state;
    size_t left = rec_stream_pump(e->r, e->fd, e->pid, 1u << 20, rq_take, e);
    if (left && !e->r->failed) {
        rec_fail(e->r, "the qemu plugin's stream ends inside a frame (%zu bytes at offset %llu)", left,
                 (unsigned long long)e->bytes);
        kill(e->pid, SIGKILL);
    }
}

static pid_t rq_spawn(rec_run *t, const char *qemu, const char *plugin, int wfd, const char *path, char **argv,
                      int argc) {
    char **av = (char **)calloc((size_t)argc + 20, sizeof *av);
    char plug[PATH_MAX + 128];
    int n = 0, i;
    pid_t pid;
    if (!av) return -1;
    snprintf(plug, sizeof plug, "%s,fd=%d", plugin, wfd);
    if (t->no_mem) strcat(plug, ",mem=off");
    if (t->sample_off)
        snprintf(plug + strlen(plug), sizeof plug - strlen(plug), ",sample=%llu:%llu",
                 (unsigned long long)t->sample_on, (unsigned long long)t->sample_off);
    av[n++] = (char *)qemu;
    if (opt_sysroot) {
        av[n++] = (char *)"-L";
        av[n++] = (char *)opt_sysroot;
    }
    /* the guest does not see the two variables below (the program's environment is
       the one frames record got) */
    av[n++] = (char *)"-U";
    av[n++] = (char *)"QEMU_SINGLESTEP";
    av[n++] = (char *)"-U";
    av[n++] = (char *)"QEMU_ONE_INSN_PER_TB";
    av[n++] = (char *)"-plugin";
    av[n++] = plug;
    av[n++] = (char *)path;
    for (i = 1; i < argc; i++) av[n++] = argv[i];
    av[n] = NULL;
    pid = fork();
    if (pid == 0) {
        /* one instruction per block, so that the CPU state is exact at each instruction's
           callback: QEMU 7.2 reads QEMU_SINGLESTEP, 8.1 and later QEMU_ONE_INSN_PER_TB */
        setenv("QEMU_SINGLESTEP", "1", 1);
        setenv("QEMU_ONE_INSN_PER_TB", "1", 1);
        if (!strcmp(t->out, "-")) dup2(2, 1);
        execv(qemu, av);
        fprintf(stderr, "frames record: cannot run %s: %s\n", qemu, strerror(errno));
        _exit(127);
    }
    free(av);
    return pid;
}

static void *rq_start(rec_run *r, const char *path, int argc, char **argv) {
    char qemu[PATH_MAX], plugin[PATH_MAX], why[600];
    const rq_guest *gu;
    int fds[2];
    rq_engine *e;
    if (plugin_path(plugin, sizeof plugin) < 0) {
        rec_fail(r, "%s", no_plugin);
        return NULL;
    }
    if (strchr(plugin, ',')) {
        rec_fail(r, "the qemu plugin's path has a comma, which QEMU's -plugin cannot take: %s", plugin);
        return NULL;
    }
    if (!(gu = guest_of(path, why, sizeof why)) || find_qemu(gu, qemu, sizeof qemu, why, sizeof why) < 0) {
        rec_fail(r, "%s", why);
        return NULL;
    }
    if (!(e = (rq_engine *)calloc(1, sizeof *e))) {
        rec_fail(r, "out of memory");
        return NULL;
    }
    e->r = r;
    e->fd = -1;
    frames_decoder_init(&e->dec, NULL, 0, NULL);
    if (rec_stream_pipe(r, fds) < 0) return e;
    e->pid = rq_spawn(r, qemu, plugin, fds[1], path, argv, argc);
    e->fd = rec_stream_started(r, e->pid, fds);
    return e;
}

static void rq_finish(rec_run *r, void *state) {
    rq_engine *e = (rq_engine *)state;
    int status;
    if (!e) return;
    if (e->fd >= 0) {
        status = rec_stream_reap(r, e->fd, e->pid);
        /* no frame at all: the plugin never ran an instruction (QEMU or the plugin
           refused, with its message above) */
        /* exit status 1 is QEMU's for an option it does not know: a static build (Debian's
           qemu-user-static, and its qemu-user 10 of bookworm-backports) has no -plugin */
        if (!e->bytes && !r->failed)
            rec_fail(r, "QEMU did not run the program with the frames plugin (exit status %d)%s",
                     WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status),
                     WIFEXITED(status) && WEXITSTATUS(status) == 1
                         ? ": if QEMU said \"unknown option 'plugin'\", it is a static build, which cannot load "
                           "plugins (--qemu a dynamic one)"
                         : "");
    }
    r->nthreads = e->ntids;
    frames_decoder_free(&e->dec);
    free(e);
}

const rec_engine rec_engine_qemu = {"qemu", 0, rq_available, rq_can_run, rq_start, rq_pump, rq_finish};

#else
typedef int record_engine_qemu_unused; /* ISO C forbids an empty translation unit */
#endif
