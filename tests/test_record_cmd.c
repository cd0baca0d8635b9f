/* test_record_cmd.c - `frames record` against independent tools and hand-computed facts:
   per-instruction execution counts of callgrind, syscall sequences of strace -f, values of
   a hand-written program, threads, forks, a fault with a handler, sampling, --no-mem. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/stat.h>

#include "frames.h"
#include "testutil.h"
#include "probes.h"

#ifdef TU_RECORD_BUILT

/* ------------------------------------------------------------------ helpers */

typedef struct path_buf {
    char s[512];
} path_buf;

static path_buf wkeep(const char *name) {
    path_buf p;
    snprintf(p.s, sizeof p.s, "%s", tu_workdir_path(name));
    return p;
}

/* Write a source file and compile it with cc; `flags` e.g. "-nostdlib -static". */
static void build_program(const char *name, const char *ext, const char *src, const char *flags) {
    char file[64];
    int st;
    char *out;
    snprintf(file, sizeof file, "%s.%s", name, ext);
    assert_int_equal(tu_write_file(tu_workdir_path(file), src, strlen(src)), 0);
    out = tu_run(&st, "cc %s -o '%s' '%s' 2>&1", flags, tu_workdir_path(name), tu_workdir_path(file));
    if (st != 0) fprintf(stderr, "%s", out);
    assert_int_equal(st, 0);
    free(out);
}

/* Address of a symbol of a program (nm). */
static uint64_t symbol(const char *prog, const char *name) {
    int st;
    char *out = tu_run(&st, "nm '%s'", prog), *line;
    uint64_t addr = 0;
    assert_int_equal(st, 0);
    for (line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
        unsigned long long a;
        char type, sym[256];
        if (sscanf(line, "%llx %c %255s", &a, &type, sym) == 3 && !strcmp(sym, name)) addr = a;
    }
    free(out);
    assert_true(addr != 0);
    return addr;
}

/* Execution counts per address: a small open-addressing table. */
typedef struct counts {
    uint64_t *addr, *n;
    size_t cap, used;
} counts;

static void counts_init(counts *c) {
    c->cap = 1 << 16;
    c->used = 0;
    c->addr = (uint64_t *)calloc(c->cap, 8);
    c->n = (uint64_t *)calloc(c->cap, 8);
}

static uint64_t *counts_slot(counts *c, uint64_t a) {
    size_t i = (size_t)((a * 0x9e3779b97f4a7c15ull) >> 48) & (c->cap - 1);
    while (c->addr[i] && c->addr[i] != a + 1) i = (i + 1) & (c->cap - 1);
    if (!c->addr[i]) {
        assert_true(++c->used < c->cap / 2);
        c->addr[i] = a + 1;
    }
    return &c->n[i];
}

static void counts_free(counts *c) {
    free(c->addr);
    free(c->n);
}

/* What a trace holds, summarised for the checks. */
typedef struct trace_sum {
    uint64_t std, syscalls_n, modloads, exceptions, unfinished_std;
    long syscalls[512];
    uint64_t syscall_tid[512];
    uint64_t tids[16];
    int ntids;
    counts pcs;
} trace_sum;

static void summarise(const char *path, trace_sum *s) {
    frames_reader *r;
    frames_error err;
    frames_frame f;
    frames_reader_info st;
    int rc, i;
    memset(s, 0, sizeof *s);
    counts_init(&s->pcs);
    assert_int_equal(frames_reader_open_path(&r, path, NULL, &err), 0);
    assert_int_equal(frames_reader_header(r)->arch, FRAMES_ARCH_I386);
    assert_int_equal(frames_reader_header(r)->machine, FRAMES_MACH_X86_64);
    while ((rc = frames_reader_next(r, &f)) > 0) {
        assert_int_equal(frames_validate_frame(&f, &err), 0); /* BAP's strict reader accepts it */
        assert_int_equal(f.flags & FRAMES_FF_PIQIRUN_REJECTS, 0);
        if (f.kind == FRAMES_KIND_STD) {
            s->std++;
            (*counts_slot(&s->pcs, f.std.address))++;
            if (!f.std.has_post) s->unfinished_std++;
            for (i = 0; i < s->ntids && s->tids[i] != f.std.thread_id; i++) {
            }
            if (i == s->ntids && s->ntids < 16) s->tids[s->ntids++] = f.std.thread_id;
        } else if (f.kind == FRAMES_KIND_SYSCALL) {
            if (s->syscalls_n < 512) {
                s->syscalls[s->syscalls_n] = (long)f.syscall.number;
                s->syscall_tid[s->syscalls_n] = f.syscall.thread_id;
            }
            s->syscalls_n++;
        } else if (f.kind == FRAMES_KIND_MODLOAD) {
            s->modloads++;
        } else if (f.kind == FRAMES_KIND_EXCEPTION) {
            s->exceptions++;
        }
    }
    assert_int_equal(rc, 0);
    assert_int_equal(frames_reader_info_get(r, &st), 0);
    assert_true(st.finished);
    assert_false(st.truncated);
    assert_true(st.ocaml_accepts);
    assert_true(st.cxx_legacy_accepts);
    frames_reader_close(r);
}

/* ------------------------------------------------------------------ controlled runs */

/* strace and `frames record` run the same program; their system calls agree only when
   the program sees the same environment in both runs: glibc asks a character device on
   stdout whether it is a terminal (ioctl TCGETS) and a file or pipe not, and LANG decides
   which locale files it opens. So every run below is started with its standard streams,
   environment, directory and CPUs set here, never inherited from whoever runs the suite. */
typedef enum std_kind { STD_FILE, STD_DEVNULL, STD_PIPE, STD_PTY } std_kind;

static const char *const std_kind_names[] = {"file", "/dev/null", "pipe", "pty"};

typedef struct run_env {
    std_kind kind;    /* stdin and stdout; stderr is always a file */
    const char *lang; /* LANG, NULL: unset (no LC_* either) */
    const char *cwd;  /* NULL: the work directory */
    int one_cpu;      /* affinity to one CPU, as taskset -c N */
} run_env;

static const run_env default_env = {STD_FILE, "C.UTF-8", NULL, 0};

/* The program's standard streams for a run: fds[0] stdin, fds[1] stdout in the child,
   *reader the parent's end to drain (-1: none). 0, or -1 when this kind is not available
   here (no /dev/null device in a chroot, no ptys). */
static int open_streams(std_kind kind, int fds[2], int *reader) {
    int p[2], q[2], m;
    *reader = -1;
    if (kind == STD_FILE) {
        fds[0] = open(tu_workdir_path("run.in"), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        fds[1] = open(tu_workdir_path("run.out"), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    } else if (kind == STD_DEVNULL) {
        struct stat st;
        if (stat("/dev/null", &st) != 0 || !S_ISCHR(st.st_mode)) return -1;
        fds[0] = open("/dev/null", O_RDONLY | O_CLOEXEC);
        fds[1] = open("/dev/null", O_WRONLY | O_CLOEXEC);
    } else if (kind == STD_PIPE) {
        assert_int_equal(pipe2(p, O_CLOEXEC), 0);
        assert_int_equal(pipe2(q, O_CLOEXEC), 0);
        close(p[1]); /* stdin: end of file at once */
        fds[0] = p[0];
        fds[1] = q[1];
        *reader = q[0];
    } else {
        const char *name;
        m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
        if (m < 0) return -1;
        if (grantpt(m) != 0 || unlockpt(m) != 0 || !(name = ptsname(m))) {
            close(m);
            return -1;
        }
        fds[0] = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
        if (fds[0] < 0) {
            close(m);
            return -1;
        }
        fds[1] = dup(fds[0]);
        *reader = m;
    }
    assert_true(fds[0] >= 0 && fds[1] >= 0);
    return 0;
}

/* Everything a reader end delivers until end of file (a pty master: EIO once every
   slave is closed). */
static char *drain(int fd) {
    size_t n = 0, cap = 4096;
    char *buf = (char *)malloc(cap);
    ssize_t got;
    assert_non_null(buf);
    for (;;) {
        if (n + 1024 > cap) buf = (char *)realloc(buf, cap *= 2);
        got = read(fd, buf + n, cap - n - 1);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) break;
        n += (size_t)got;
    }
    buf[n] = 0;
    return buf;
}

/* Runs argv (argv[0] found on PATH) in environment e. Returns its exit status, -1 when
   e's kind of standard stream is not available here; *out (if given) gets what the
   program wrote to its standard output. */
static int run_in(const run_env *e, char *const argv[], char **out) {
    static char path_var[4096], lang_var[128], home_var[600];
    char *envp[4];
    int fds[2], reader, err_fd, status = 0, k = 0;
    pid_t pid;
    const char *path = getenv("PATH");
    if (open_streams(e->kind, fds, &reader) < 0) return -1;
    err_fd = open(tu_workdir_path("run.err"), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    assert_true(err_fd >= 0);
    snprintf(path_var, sizeof path_var, "PATH=%s", path && *path ? path : "/usr/bin:/bin");
    snprintf(home_var, sizeof home_var, "HOME=%s", tu_workdir);
    envp[k++] = path_var;
    envp[k++] = home_var;
    if (e->lang) {
        snprintf(lang_var, sizeof lang_var, "LANG=%s", e->lang);
        envp[k++] = lang_var;
    }
    envp[k] = NULL;
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (e->kind == STD_PTY) setsid(); /* the pty becomes the controlling terminal */
        if (dup2(fds[0], 0) < 0 || dup2(fds[1], 1) < 0 || dup2(err_fd, 2) < 0) _exit(126);
        if (e->kind == STD_PTY) ioctl(0, TIOCSCTTY, 0);
        if (chdir(e->cwd ? e->cwd : tu_workdir) != 0) _exit(126);
        if (e->one_cpu) {
            cpu_set_t set, one;
            int c;
            if (sched_getaffinity(0, sizeof set, &set) != 0) _exit(126);
            for (c = 0; c < CPU_SETSIZE && !CPU_ISSET(c, &set); c++) {
            }
            CPU_ZERO(&one);
            CPU_SET(c, &one);
            if (sched_setaffinity(0, sizeof one, &one) != 0) _exit(126);
        }
        execvpe(argv[0], argv, envp);
        _exit(127);
    }
    close(fds[0]);
    close(fds[1]);
    close(err_fd);
    if (out) *out = NULL;
    if (reader >= 0) {
        char *got = drain(reader);
        close(reader);
        if (out) *out = got;
        else free(got);
    }
    assert_int_equal(waitpid(pid, &status, 0), pid);
    if (out && !*out) *out = e->kind == STD_FILE ? (char *)tu_read_file(tu_workdir_path("run.out"), NULL) : strdup("");
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* argv of `PREFIX... -- cmd...` in v (cmd NULL-terminated). */
static char **prefixed(char **v, const char *const *prefix, const char *const *cmd) {
    size_t k = 0;
    while (*prefix) v[k++] = (char *)*prefix++;
    while (*cmd) v[k++] = (char *)*cmd++;
    v[k] = NULL;
    return v;
}

/* Runs `frames record OPTS -o TRACE -- cmd` in e (OPTS: options split at spaces); returns
   its exit status. The summary it prints is in tu_workdir_path("run.err"). */
static int record_in(const run_env *e, const char *trace, const char *opts, const char *const *cmd, char **out) {
    char optbuf[256], *tok, *save = NULL, *v[64];
    const char *pre[32];
    size_t k = 0;
    pre[k++] = tu_frames_bin();
    pre[k++] = "record";
    pre[k++] = "-f";   /* the suites record into the same trace names again and again */
    pre[k++] = "--engine"; /* these are the ptrace engine's tests (test_record_vg: valgrind) */
    pre[k++] = "ptrace";
    snprintf(optbuf, sizeof optbuf, "%s", opts);
    for (tok = strtok_r(optbuf, " ", &save); tok && k < 26; tok = strtok_r(NULL, " ", &save)) pre[k++] = tok;
    pre[k++] = "-o";
    pre[k++] = trace;
    pre[k++] = "--";
    pre[k] = NULL;
    return run_in(e, prefixed(v, pre, cmd), out);
}

/* frames record on one program in the default environment; returns its stderr (the
   summary) and the exit status. The program's stdout is in tu_workdir_path("run.out"). */
static char *record(int *status, const char *trace, const char *opts, const char *prog) {
    const char *cmd[2];
    char *out;
    cmd[0] = prog;
    cmd[1] = NULL;
    *status = record_in(&default_env, trace, opts, cmd, &out);
    free(out);
    return (char *)tu_read_file(tu_workdir_path("run.err"), NULL);
}

/* Build program name from src (ext "c" or "S") and record it into name.frames: its exit
   status is want and the report of `frames record` says says (when not NULL). */
static void build_and_record(const char *name, const char *ext, const char *src, const char *flags,
                             int want, const char *says) {
    char trace[64];
    char *out;
    int st;
    build_program(name, ext, src, flags);
    snprintf(trace, sizeof trace, "%s.frames", name);
    out = record(&st, tu_workdir_path(trace), "", tu_workdir_path(name));
    assert_int_equal(st, want);
    if (says) assert_non_null(strstr(out, says));
    free(out);
}

/* ------------------------------------------------------------------ the static program */

/* probe_prog_src (probes.h): its instruction count, as the hand count there adds up */
#define PROG_INSNS (1 + 3000 + 8 + 5 + 3)

/* callgrind --dump-instr=yes: self cost (Ir) per instruction address. Positions are
   "instr line"; an address is absolute (0x..), relative (+n, -n) or the same (*); the
   line after calls= is the call's inclusive cost, not the instruction's own. */
static uint64_t read_callgrind(const char *path, counts *c) {
    size_t len;
    char *text = (char *)tu_read_file(path, &len), *line, *save = NULL;
    uint64_t pos = 0, total = 0;
    int call_cost = 0;
    assert_non_null(text);
    for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *last = strrchr(line, ' ');
        if (!strncmp(line, "calls=", 6)) { /* its target does not move the position */
            call_cost = 1;
            continue;
        }
        if (!strncmp(line, "totals:", 7)) total = strtoull(line + 7, NULL, 10);
        if (line[0] == '0' && line[1] == 'x') pos = strtoull(line, NULL, 16);
        else if (line[0] == '+' || line[0] == '-') pos += (uint64_t)strtoll(line, NULL, 10);
        else if (line[0] != '*') continue;
        if (!call_cost && last) *counts_slot(c, pos) += strtoull(last + 1, NULL, 10);
        call_cost = 0;
    }
    free(text);
    return total;
}

static void test_static_program_vs_callgrind(void **state) {
    trace_sum s;
    counts cg;
    char *out;
    int st;
    size_t i;
    uint64_t cg_total, missing = 0, missing_insns = 0, exit_pc;
    path_buf prog_path = wkeep("prog");
    const char *prog = prog_path.s;
    (void)state;
    build_program("prog", "S", probe_prog_src, "-nostdlib -static");
    out = record(&st, tu_workdir_path("prog.frames"), "", prog);
    assert_int_equal(st, 7); /* the program's own status */
    assert_non_null(strstr(out, "exited with status 7"));
    free(out);
    out = (char *)tu_read_file(tu_workdir_path("run.out"), NULL);
    assert_string_equal(out, "hi\n"); /* the program's own output passes through */
    free(out);
    summarise(tu_workdir_path("prog.frames"), &s);
    assert_int_equal(s.std, PROG_INSNS);
    /* valgrind reads options from ~/.valgrindrc, ./.valgrindrc and VALGRIND_OPTS: none */
    out = tu_run(&st, "cd '%s' && env -u VALGRIND_OPTS HOME='%s' valgrind --tool=callgrind --dump-instr=yes "
                 "--callgrind-out-file='%s' '%s' <cg.in >cg.log 2>&1",
                 tu_workdir, tu_workdir, tu_workdir_path("cg.out"), prog);
    assert_int_equal(st, 7);
    free(out);
    counts_init(&cg);
    cg_total = read_callgrind(tu_workdir_path("cg.out"), &cg);
    /* every instruction callgrind counted, we counted as often */
    for (i = 0; i < cg.cap; i++) {
        if (!cg.addr[i]) continue;
        assert_int_equal(*counts_slot(&s.pcs, cg.addr[i] - 1), cg.n[i]);
    }
    /* callgrind does not count the block the process exits in (its counters are added
       when a block is left): mov $60, mov $7, syscall */
    exit_pc = symbol(prog, "L_exit");
    for (i = 0; i < s.pcs.cap; i++) {
        if (!s.pcs.addr[i] || *counts_slot(&cg, s.pcs.addr[i] - 1)) continue;
        missing++;
        missing_insns += s.pcs.n[i];
        assert_true(s.pcs.addr[i] - 1 >= exit_pc - 10 && s.pcs.addr[i] - 1 <= exit_pc);
    }
    assert_int_equal(missing, 3);
    assert_int_equal(s.std, cg_total + missing_insns);
    assert_int_equal(s.syscalls_n, 2);
    assert_int_equal(s.syscalls[0], 1);
    assert_int_equal(s.syscalls[1], 60);
    counts_free(&cg);
    counts_free(&s.pcs);
}

/* The first std_frame at `pc`, decoded into f (valid until the reader is closed). */
static frames_reader *frame_at(const char *trace, uint64_t pc, frames_frame *f) {
    frames_reader *r;
    frames_error err;
    assert_int_equal(frames_reader_open_path(&r, trace, NULL, &err), 0);
    while (frames_reader_next(r, f) > 0)
        if (f->kind == FRAMES_KIND_STD && f->std.address == pc) return r;
    fail_msg("no std_frame at 0x%llx", (unsigned long long)pc);
    return NULL;
}

static uint64_t le(frames_bytes b) {
    uint64_t v = 0;
    size_t i;
    for (i = 0; i < b.len && i < 8; i++) v |= (uint64_t)b.ptr[i] << (8 * i);
    return v;
}

static const frames_operand *find_op(const frames_operand *ops, uint32_t n, int mem, const char *name) {
    uint32_t i;
    for (i = 0; i < n; i++) {
        if (mem && ops[i].spec == FRAMES_MEM) return &ops[i];
        if (!mem && ops[i].spec == FRAMES_REG && ops[i].name.len == strlen(name) &&
            !memcmp(ops[i].name.ptr, name, ops[i].name.len))
            return &ops[i];
    }
    fail_msg("operand %s not found", mem ? "mem" : name);
    return NULL;
}

/* Values of the hand-written program, computed by hand. */
static void test_static_program_values(void **state) {
    path_buf prog_path = wkeep("prog"), trace_path = wkeep("prog.frames");
    const char *prog = prog_path.s, *trace = trace_path.s;
    uint64_t buf = symbol(prog, "buf"), ret_addr = symbol(prog, "L_push");
    frames_reader *r;
    frames_frame f;
    const frames_operand *op, *rsp;
    frames_error err;
    uint8_t md5[16];
    char *out;
    int st, i;
    (void)state;
    /* load: RBX (base) = buf, memory read at buf, RDX written with its value */
    r = frame_at(trace, symbol(prog, "L_load"), &f);
    op = find_op(f.std.pre, f.std.npre, 0, "RBX");
    assert_true(op->read && op->base);
    assert_int_equal(le(op->value), buf);
    op = find_op(f.std.pre, f.std.npre, 1, NULL);
    assert_int_equal(op->address, buf);
    assert_true(op->read && !op->written);
    assert_int_equal(op->bit_length, 64);
    assert_int_equal(le(op->value), 0x1122334455667788ull);
    op = find_op(f.std.post, f.std.npost, 0, "RDX");
    assert_true(op->written);
    assert_int_equal(le(op->value), 0x1122334455667788ull);
    frames_reader_close(r);
    /* store: old value 7 before (read = written = false), 0x99 after */
    r = frame_at(trace, symbol(prog, "L_store"), &f);
    op = find_op(f.std.pre, f.std.npre, 1, NULL);
    assert_int_equal(op->address, buf + 8);
    assert_true(!op->read && !op->written);
    assert_int_equal(le(op->value), 7);
    op = find_op(f.std.post, f.std.npost, 1, NULL);
    assert_int_equal(op->address, buf + 8);
    assert_true(op->written);
    assert_int_equal(le(op->value), 0x99);
    frames_reader_close(r);
    /* call: the return address is written below the old RSP */
    r = frame_at(trace, symbol(prog, "L_call"), &f);
    rsp = find_op(f.std.pre, f.std.npre, 0, "RSP");
    op = find_op(f.std.post, f.std.npost, 1, NULL);
    assert_int_equal(op->address, le(rsp->value) - 8);
    assert_int_equal(le(op->value), ret_addr);
    assert_int_equal(le(find_op(f.std.post, f.std.npost, 0, "RSP")->value), le(rsp->value) - 8);
    frames_reader_close(r);
    /* pop: R8 gets the value push stored */
    r = frame_at(trace, symbol(prog, "L_pop"), &f);
    assert_int_equal(le(find_op(f.std.post, f.std.npost, 0, "R8")->value), 0x1122334455667788ull);
    assert_int_equal(le(find_op(f.std.pre, f.std.npre, 1, NULL)->value), 0x1122334455667788ull);
    frames_reader_close(r);
    /* movdqu: 16 bytes from buf into XMM1 */
    r = frame_at(trace, symbol(prog, "L_vec"), &f);
    op = find_op(f.std.post, f.std.npost, 0, "XMM1");
    assert_int_equal(op->bit_length, 128);
    assert_int_equal(le(op->value), 0x1122334455667788ull);
    assert_int_equal(le(frames_bytes_of(op->value.ptr + 8, 8)), 0x99); /* slot after the store */
    frames_reader_close(r);
    /* write(1, msg, 3): the syscall frame precedes the syscall's std_frame; exit(7) has no post */
    assert_int_equal(frames_reader_open_path(&r, trace, NULL, &err), 0);
    for (i = 0; frames_reader_next(r, &f) > 0;) {
        if (f.kind != FRAMES_KIND_SYSCALL) continue;
        if (i++ == 0) {
            assert_int_equal(f.syscall.address, symbol(prog, "L_write"));
            assert_int_equal(f.syscall.number, 1);
            assert_int_equal(f.syscall.nargs, 6);
            assert_int_equal(f.syscall.args[0], 1);
            assert_int_equal(f.syscall.args[1], (int64_t)symbol(prog, "msg"));
            assert_int_equal(f.syscall.args[2], 3);
            assert_int_equal(frames_reader_next(r, &f), 1);
            assert_int_equal(f.kind, FRAMES_KIND_STD);
            assert_int_equal(le(find_op(f.std.post, f.std.npost, 0, "RAX")->value), 3); /* bytes written */
        } else {
            assert_int_equal(f.syscall.number, 60);
            assert_int_equal(f.syscall.args[0], 7);
            assert_int_equal(frames_reader_next(r, &f), 1);
            assert_int_equal(f.std.address, symbol(prog, "L_exit"));
            assert_false(f.std.has_post);
        }
    }
    assert_int_equal(i, 2);
    /* meta: the target and its MD5 (md5sum is the independent reference) */
    {
        const frames_meta *m = frames_reader_meta(r);
        unsigned v;
        out = tu_run(&st, "md5sum '%s'", prog);
        assert_int_equal(st, 0);
        for (i = 0; i < 16; i++) {
            assert_int_equal(sscanf(out + 2 * i, "%2x", &v), 1);
            md5[i] = (uint8_t)v;
        }
        free(out);
        assert_int_equal(m->target_md5sum.len, 16);
        assert_memory_equal(m->target_md5sum.ptr, md5, 16);
        assert_int_equal(m->target_path.len, strlen(prog));
        assert_int_equal(m->ntarget_args, 1);
    }
    frames_reader_close(r);
}

/* ------------------------------------------------------------------ strace */

/* Syscall numbers by name from the kernel headers (asm/unistd_64.h). */
static long syscall_number(const char *name) {
    static const char *headers[] = {"/usr/include/x86_64-linux-gnu/asm/unistd_64.h",
                                    "/usr/include/asm/unistd_64.h"};
    char line[256], want[128];
    size_t i;
    long nr = -1;
    snprintf(want, sizeof want, "__NR_%s", name);
    for (i = 0; i < 2 && nr < 0; i++) {
        FILE *f = fopen(headers[i], "r");
        if (!f) continue;
        while (nr < 0 && fgets(line, sizeof line, f)) {
            char sym[128];
            long n;
            if (sscanf(line, "#define %127s %ld", sym, &n) == 2 && !strcmp(sym, want)) nr = n;
        }
        fclose(f);
    }
    return nr;
}

/* Syscall numbers strace -f reports in `log`, in order, from lines "PID name(args) = ret"
   and "PID name(args <unfinished ...>"; resumed halves, signals and exits are not calls.
   With only_other_pids, only the lines of processes other than the first line's. */
static size_t strace_syscalls_of(const char *log, long *out, size_t cap, int only_other_pids) {
    char *text = (char *)tu_read_file(log, NULL), *line, *save = NULL;
    size_t n = 0;
    long first_pid = -1;
    assert_non_null(text);
    for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char name[64];
        char *p = line;
        long pid = strtol(line, &p, 10);
        if (first_pid < 0) first_pid = pid;
        if (only_other_pids && pid == first_pid) continue;
        while (*p == ' ') p++;
        if (!strncmp(p, "<...", 4) || !strncmp(p, "+++", 3) || !strncmp(p, "---", 3)) continue;
        if (sscanf(p, "%63[a-z0-9_](", name) != 1) continue;
        assert_true(n < cap);
        out[n] = syscall_number(name);
        if (out[n] < 0) fail_msg("unknown syscall name '%s' in strace output", name);
        n++;
    }
    free(text);
    return n;
}

/* Runs cmd under strace -f in e: its syscall numbers into want, its stdout into *out. */
static size_t strace_in(const run_env *e, const char *const *cmd, long *want, size_t cap, int only_children,
                        char **out) {
    path_buf log = wkeep("strace.txt");
    const char *const pre[] = {"strace", "-f", "-qq", "-o", log.s, "--", NULL};
    char *v[64];
    assert_int_equal(run_in(e, prefixed(v, pre, cmd), out), 0);
    return strace_syscalls_of(log.s, want, cap, only_children);
}

/* The syscalls of cmd in e, by strace and in a trace of `frames record`, are the same
   calls in the same order, and the program writes the same output in both runs. The
   trace's syscall numbers are left in *s (caller frees s->pcs). 0, or -1 when e is not
   available here. */
static int compare_with_strace_in(const run_env *e, const char *const *cmd, trace_sum *s) {
    long want[512];
    size_t n, i;
    char *strace_out, *record_out;
    int st;
    st = run_in(e, (char *const[]){(char *)"true", NULL}, NULL);
    if (st < 0) return -1;
    n = strace_in(e, cmd, want, 512, 0, &strace_out);
    st = record_in(e, tu_workdir_path("sys.frames"), "--no-mem", cmd, &record_out);
    if (st != 0) fail_msg("frames record exited with %d (%s, LANG %s)", st, std_kind_names[e->kind],
                          e->lang ? e->lang : "unset");
    assert_string_equal(record_out, strace_out);
    free(strace_out);
    free(record_out);
    summarise(tu_workdir_path("sys.frames"), s);
    /* the trace starts in the new image: strace's first call is the execve itself */
    assert_true(n > 10);
    assert_int_equal(want[0], syscall_number("execve"));
    for (i = 1; i < n && i - 1 < s->syscalls_n; i++)
        if (s->syscalls[i - 1] != want[i]) break;
    if (i < n || s->syscalls_n != n - 1)
        fail_msg("stdout %s, LANG %s, cwd %s%s: syscall %lu of %lu: trace has %ld, strace %ld",
                 std_kind_names[e->kind], e->lang ? e->lang : "unset", e->cwd ? e->cwd : "(work dir)",
                 e->one_cpu ? ", one CPU" : "", (unsigned long)i, (unsigned long)n,
                 i - 1 < s->syscalls_n ? s->syscalls[i - 1] : -1L, i < n ? want[i] : -1L);
    assert_int_equal(s->syscalls[s->syscalls_n - 1], syscall_number("exit_group"));
    assert_true(s->modloads >= 3); /* the program, ld.so, libc at least */
    assert_int_equal(s->unfinished_std, 1); /* only exit_group never completes */
    return 0;
}

static void compare_with_strace(const char *const *cmd) {
    trace_sum s;
    assert_int_equal(compare_with_strace_in(&default_env, cmd, &s), 0);
    counts_free(&s.pcs);
}

static void test_true_syscalls_vs_strace(void **state) {
    static const char *const cmd[] = {"/bin/true", NULL};
    (void)state;
    compare_with_strace(cmd);
}

static void test_echo_syscalls_vs_strace(void **state) {
    static const char *const cmd[] = {"/bin/echo", "hi", NULL};
    char *out;
    (void)state;
    compare_with_strace(cmd);
    out = (char *)tu_read_file(tu_workdir_path("run.out"), NULL);
    assert_string_equal(out, "hi\n");
    free(out);
}

/* The comparison holds whatever the program's stdout is (a file, /dev/null, a pipe, a
   terminal), with and without a locale, from another directory and on one CPU: the
   environments a person at a terminal, CI without stdin and a chroot give. The runs must
   also differ where glibc makes them differ (TCGETS on a character device that is not a
   terminal by its device number, locale files, a terminal's CR LF), or the variants would
   not be testing what they claim. Mostly without a locale: the program runs half as long. */
static void test_echo_vs_strace_in_every_environment(void **state) {
    static const char *const cmd[] = {"/bin/echo", "hi", NULL};
    static const run_env envs[] = {
        {STD_FILE, NULL, NULL, 0}, {STD_DEVNULL, NULL, NULL, 0},     {STD_DEVNULL, "C.UTF-8", NULL, 0},
        {STD_PTY, NULL, NULL, 0},  {STD_PIPE, NULL, "/", 1},
    };
    enum { FILE_C, NULL_C, NULL_UTF8, PTY_C, PIPE_C, NENV };
    static const char *const want_out[] = {"hi\n", "", "", "hi\r\n", "hi\n"};
    uint64_t ncalls[NENV];
    long ioctls[NENV];
    int ran[NENV], i;
    uint64_t k;
    char *out;
    (void)state;
    for (i = 0; i < NENV; i++) {
        trace_sum s;
        ran[i] = compare_with_strace_in(&envs[i], cmd, &s) == 0;
        if (!ran[i]) {
            fprintf(stderr, "(stdout %s is not available here: that case is left out)\n",
                    std_kind_names[envs[i].kind]);
            continue;
        }
        ncalls[i] = s.syscalls_n;
        for (ioctls[i] = 0, k = 0; k < s.syscalls_n && k < 512; k++)
            ioctls[i] += s.syscalls[k] == syscall_number("ioctl");
        counts_free(&s.pcs);
        run_in(&envs[i], (char *const *)cmd, &out);
        assert_string_equal(out, want_out[i]);
        free(out);
    }
    assert_true(ran[FILE_C] && ran[PIPE_C]); /* files and pipes exist everywhere */
    assert_int_equal(ioctls[FILE_C], 0);      /* a file or a pipe is not asked TCGETS */
    assert_int_equal(ioctls[PIPE_C], 0);
    if (ran[NULL_C]) {
        assert_true(ioctls[NULL_C] > 0);                /* /dev/null is */
        assert_true(ncalls[NULL_UTF8] > ncalls[NULL_C]); /* C.UTF-8: locale files */
    }
}

/* ------------------------------------------------------------------ threads, forks, signals */

static void test_threads(void **state) {
    trace_sum s;
    frames_reader *r;
    frames_error err;
    frames_frame f;
    uint64_t loop, main_tid = 0, loop_tid = 0, loop_n = 0, i;
    int saw_write = 0;
    (void)state;
    build_and_record("threads", "c", probe_threads_src, "-O1 -static -pthread", 0, "2 thread(s)");
    summarise(tu_workdir_path("threads.frames"), &s);
    assert_int_equal(s.ntids, 2);
    counts_free(&s.pcs);
    loop = symbol(tu_workdir_path("threads"), "thread_loop");
    assert_int_equal(frames_reader_open_path(&r, tu_workdir_path("threads.frames"), NULL, &err), 0);
    while (frames_reader_next(r, &f) > 0) {
        if (f.kind == FRAMES_KIND_STD) {
            if (!main_tid) main_tid = f.std.thread_id;
            if (f.std.address == loop) {
                loop_n++;
                loop_tid = f.std.thread_id;
            }
        }
        if (f.kind == FRAMES_KIND_SYSCALL && f.syscall.number == 1 && f.syscall.args[2] == 2) {
            assert_int_equal(f.syscall.thread_id, loop_tid); /* the thread's write */
            saw_write = 1;
        }
    }
    frames_reader_close(r);
    assert_int_equal(loop_n, 500); /* dec: once per iteration */
    assert_true(loop_tid != 0 && loop_tid != main_tid);
    assert_true(saw_write);
    for (i = 0; i < (uint64_t)s.ntids; i++) assert_true(s.tids[i] == main_tid || s.tids[i] == loop_tid);
}

/* With --follow-forks the child's syscalls are in the trace under its own thread id and
   equal strace's list for the child; without, the child runs untraced. */
static void test_forks(void **state) {
    long want[512];
    size_t n, i, k;
    trace_sum s;
    uint64_t child = 0;
    int st;
    char *out;
    static const char *cmd[2];
    path_buf forker = wkeep("forker");
    (void)state;
    cmd[0] = forker.s;
    build_program("forker", "c", probe_fork_src, "-O1 -static");
    st = record_in(&default_env, tu_workdir_path("fork.frames"), "--follow-forks --no-mem", cmd, &out);
    assert_int_equal(st, 0);
    free(out);
    out = (char *)tu_read_file(tu_workdir_path("run.err"), NULL);
    assert_non_null(strstr(out, "exited with status 0"));
    free(out);
    summarise(tu_workdir_path("fork.frames"), &s);
    assert_int_equal(s.ntids, 2);
    child = s.tids[1];
    /* strace: the child's lines carry a pid other than the first line's */
    n = strace_in(&default_env, cmd, want, 512, 1, &out);
    free(out);
    assert_true(n >= 2);
    for (i = 0, k = 0; i < s.syscalls_n && i < 512; i++) {
        if (s.syscall_tid[i] != child) continue;
        assert_true(k < n);
        assert_int_equal(s.syscalls[i], want[k]);
        k++;
    }
    assert_int_equal(k, n);
    counts_free(&s.pcs);
    out = record(&st, tu_workdir_path("nofork.frames"), "--no-mem", tu_workdir_path("forker"));
    assert_int_equal(st, 0);
    free(out);
    summarise(tu_workdir_path("nofork.frames"), &s);
    assert_int_equal(s.ntids, 1);
    counts_free(&s.pcs);
    out = (char *)tu_read_file(tu_workdir_path("run.out"), NULL);
    assert_string_equal(out, "child\n");
    free(out);
}

static const char fault_src[] =
    "#include <signal.h>\n"
    "#include <unistd.h>\n"
    "void on_segv(int s) { (void)s; _exit(5); }\n"
    "int main(void) {\n"
    "    signal(SIGSEGV, on_segv);\n"
    "    __asm__ volatile(\".globl fault_here\\nfault_here: movq $1, 0\" ::: \"memory\");\n"
    "    return 0;\n"
    "}\n";

/* The faulting instruction has no post list, an exception frame (signal 11, from the
   faulting pc) follows, and the next instruction is the handler's first. */
static void test_fault_and_handler(void **state) {
    frames_reader *r;
    frames_error err;
    frames_frame f;
    uint64_t fault, handler;
    int stage = 0;
    (void)state;
    build_and_record("fault", "c", fault_src, "-O1 -static", 5, "exited with status 5");
    fault = symbol(tu_workdir_path("fault"), "fault_here");
    handler = symbol(tu_workdir_path("fault"), "on_segv");
    assert_int_equal(frames_reader_open_path(&r, tu_workdir_path("fault.frames"), NULL, &err), 0);
    while (stage < 3 && frames_reader_next(r, &f) > 0) {
        if (stage == 0 && f.kind == FRAMES_KIND_STD && f.std.address == fault) {
            assert_false(f.std.has_post);
            stage = 1;
        } else if (stage == 1) {
            assert_int_equal(f.kind, FRAMES_KIND_EXCEPTION);
            assert_int_equal(f.exception.number, SIGSEGV);
            assert_true(f.exception.has_from_addr);
            assert_int_equal(f.exception.from_addr, fault);
            stage = 2;
        } else if (stage == 2) {
            assert_int_equal(f.kind, FRAMES_KIND_STD);
            assert_int_equal(f.std.address, handler);
            stage = 3;
        }
    }
    assert_int_equal(stage, 3);
    frames_reader_close(r);
}

/* Vector registers come from the XSAVE area: ymm upper halves (AVX component), zmm upper
   halves (ZMM_Hi256) and zmm16-31 (Hi16_ZMM), at the CPU's offsets. Only the parts this
   CPU has are checked. */
/* from CPUID and XGETBV (what the CPU and the kernel enable), not /proc/cpuinfo, which a
   chroot may not have */
#define cpu_has(feature) __builtin_cpu_supports(feature)

static void test_vector_registers(void **state) {
    int avx512 = cpu_has("avx512f");
    char src[2048];
    frames_reader *r;
    frames_error err;
    frames_frame f;
    uint8_t want[64];
    int seen = 0, i;
    (void)state;
    if (!cpu_has("avx")) {
        skip();
        return;
    }
    for (i = 0; i < 64; i++) want[i] = (uint8_t)(i * 3 + 1);
    snprintf(src, sizeof src,
             "        .globl _start\n        .data\n        .align 64\nv:\n"
             "        .rept 64\n        .byte (. - v) * 3 + 1\n        .endr\n"
             "        .text\n_start: vmovdqu v(%%rip), %%ymm2\n%s"
             "        mov $60, %%eax\n        xor %%edi, %%edi\n        syscall\n",
             avx512 ? "        vmovdqu64 v(%rip), %zmm3\n        vmovdqu64 v(%rip), %zmm17\n" : "");
    build_and_record("vec", "S", src, "-nostdlib -static", 0, NULL);
    assert_int_equal(frames_reader_open_path(&r, tu_workdir_path("vec.frames"), NULL, &err), 0);
    while (frames_reader_next(r, &f) > 0) {
        const frames_operand *op;
        if (f.kind != FRAMES_KIND_STD || !f.std.npost || f.std.post[0].spec != FRAMES_REG) continue;
        op = &f.std.post[0];
        if (op->name.len < 4 || (op->name.ptr[0] != 'Y' && op->name.ptr[0] != 'Z')) continue;
        assert_int_equal(op->bit_length, op->name.ptr[0] == 'Y' ? 256 : 512);
        assert_memory_equal(op->value.ptr, want, op->value.len);
        seen++;
    }
    frames_reader_close(r);
    assert_int_equal(seen, avx512 ? 3 : 1);
}

/* ------------------------------------------------------------------ frames tenet */

/* x86-64 general registers and their parts, as frames record names them. */
static const char *const gprs[16][5] = {
    {"RAX", "EAX", "AX", "AL", "AH"}, {"RBX", "EBX", "BX", "BL", "BH"}, {"RCX", "ECX", "CX", "CL", "CH"},
    {"RDX", "EDX", "DX", "DL", "DH"}, {"RBP", "EBP", "BP", "BPL", NULL}, {"RSP", "ESP", "SP", "SPL", NULL},
    {"RSI", "ESI", "SI", "SIL", NULL}, {"RDI", "EDI", "DI", "DIL", NULL}, {"R8", "R8D", "R8W", "R8B", NULL},
    {"R9", "R9D", "R9W", "R9B", NULL}, {"R10", "R10D", "R10W", "R10B", NULL}, {"R11", "R11D", "R11W", "R11B", NULL},
    {"R12", "R12D", "R12W", "R12B", NULL}, {"R13", "R13D", "R13W", "R13B", NULL},
    {"R14", "R14D", "R14W", "R14B", NULL}, {"R15", "R15D", "R15W", "R15B", NULL},
};

/* The register (0..15) an operand name is or is a part of; *whole when it is the register. */
static int gpr_of(frames_bytes name, int *whole) {
    int r, k;
    for (r = 0; r < 16; r++)
        for (k = 0; k < 5 && gprs[r][k]; k++)
            if (name.len == strlen(gprs[r][k]) && !memcmp(name.ptr, gprs[r][k], name.len)) {
                *whole = k == 0;
                return r;
            }
    return -1;
}

/* Tenet expects the first line to give every register. On a trace of frames record, the
   first line of `frames tenet` holds exactly the registers the thread reads (a pre-list
   operand of the whole register, marked read) before any instruction writes it or a part
   of it, each with the value of that first read, and the first pc. The expectation is
   worked out here by walking the trace with the reader: the recorder writes the whole
   state at the thread's first instruction, so that is all 16 registers, all read there. */
static void test_tenet_first_line_has_initial_registers(void **state) {
    static const char *const cmd[] = {"/bin/true", NULL};
    path_buf trace = wkeep("tenet.frames"), log = wkeep("tenet.log");
    frames_reader *r;
    frames_error err;
    frames_frame f;
    uint64_t want[16], tid = 0, first_pc = 0, k = 0, late = 0;
    int seen[16] = {0}, written[16] = {0}, st, g, whole, nseen = 0;
    char *out, *line, *item, *save = NULL;
    uint32_t i;
    (void)state;
    st = record_in(&default_env, trace.s, "--no-mem", cmd, &out);
    assert_int_equal(st, 0);
    free(out);
    assert_int_equal(frames_reader_open_path(&r, trace.s, NULL, &err), 0);
    while (frames_reader_next(r, &f) > 0) {
        if (f.kind != FRAMES_KIND_STD) continue;
        if (!k) {
            tid = f.std.thread_id;
            first_pc = f.std.address;
        }
        if (f.std.thread_id != tid) continue;
        for (i = 0; i < f.std.npre; i++) {
            const frames_operand *o = &f.std.pre[i];
            if (o->spec != FRAMES_REG || !o->read || (g = gpr_of(o->name, &whole)) < 0) continue;
            if (whole && !written[g] && !seen[g]) {
                seen[g] = 1;
                want[g] = le(o->value);
                nseen++;
                late += k > 0; /* first read after the first instruction */
            }
        }
        for (i = 0; f.std.has_post && i < f.std.npost; i++) {
            const frames_operand *o = &f.std.post[i];
            if (o->spec == FRAMES_REG && o->written && (g = gpr_of(o->name, &whole)) >= 0) written[g] = 1;
        }
        k++;
    }
    frames_reader_close(r);
    assert_int_equal(nseen, 16);
    assert_int_equal(late, 0); /* every one at the first instruction */
    out = tu_run(&st, "'%s' tenet '%s' -o '%s' 2>&1", tu_frames_bin(), trace.s, log.s);
    assert_int_equal(st, 0);
    free(out);
    out = (char *)tu_read_file(log.s, NULL);
    assert_non_null(out);
    line = strtok_r(out, "\n", &save);
    assert_non_null(line);
    {
        int on_line[16] = {0}, saw_pc = 0;
        char *isave = NULL;
        for (item = strtok_r(line, ",", &isave); item; item = strtok_r(NULL, ",", &isave)) {
            char *eq = strchr(item, '=');
            uint64_t v;
            assert_non_null(eq);
            *eq = 0;
            assert_true(!strncmp(eq + 1, "0x", 2));
            v = strtoull(eq + 3, NULL, 16);
            if (!strcmp(item, "rip")) {
                assert_int_equal(v, first_pc);
                saw_pc = 1;
                continue;
            }
            for (g = 0; g < 16; g++) {
                char lower[8];
                size_t c;
                for (c = 0; gprs[g][0][c]; c++) lower[c] = (char)tolower((unsigned char)gprs[g][0][c]);
                lower[c] = 0;
                if (!strcmp(item, lower)) break;
            }
            if (g == 16) fail_msg("first line: '%s' is not a register of the set", item);
            if (!seen[g]) fail_msg("first line gives %s, which the trace writes before reading or never reads", item);
            assert_int_equal(v, want[g]);
            on_line[g] = 1;
        }
        assert_true(saw_pc);
        for (g = 0; g < 16; g++)
            if (seen[g] && !on_line[g]) fail_msg("first line lacks %s (read before written)", gprs[g][0]);
    }
    free(out);
}

/* ------------------------------------------------------------------ options */

/* --sample 100:900 on the static program (3017 instructions): windows start at 0, 1000,
   2000 and 3000, so 3 x 100 + 17 std_frames; both syscalls are kept. --no-mem: no memory
   operand anywhere. */
static void test_sampling_and_no_mem(void **state) {
    trace_sum s;
    frames_reader *r;
    frames_error err;
    frames_frame f;
    uint32_t i;
    int st;
    char *out;
    (void)state;
    out = record(&st, tu_workdir_path("sample.frames"), "--sample 100:900", tu_workdir_path("prog"));
    assert_int_equal(st, 7);
    free(out);
    summarise(tu_workdir_path("sample.frames"), &s);
    assert_int_equal(s.std, 3 * 100 + (PROG_INSNS - 3000));
    assert_int_equal(s.syscalls_n, 2);
    counts_free(&s.pcs);
    out = record(&st, tu_workdir_path("nomem.frames"), "--no-mem", tu_workdir_path("prog"));
    assert_int_equal(st, 7);
    free(out);
    assert_int_equal(frames_reader_open_path(&r, tu_workdir_path("nomem.frames"), NULL, &err), 0);
    while (frames_reader_next(r, &f) > 0) {
        if (f.kind != FRAMES_KIND_STD) continue;
        for (i = 0; i < f.std.npre; i++) assert_int_equal(f.std.pre[i].spec, FRAMES_REG);
        for (i = 0; i < f.std.npost; i++) assert_int_equal(f.std.post[i].spec, FRAMES_REG);
    }
    frames_reader_close(r);
}

/* SIGTERM to the tracer: the program is killed and the trace finished (header, TOC), its
   last instruction without a post list. */
static void test_interrupt_finishes_trace(void **state) {
    static const char spin_src[] = "int main(void) { volatile long i = 0; for (;;) i++; }\n";
    path_buf trace = wkeep("spin.frames"), prog = wkeep("spin");
    frames_reader *r;
    frames_frame f;
    uint64_t n = 0;
    int st, last_has_post = 1;
    pid_t pid;
    (void)state;
    build_program("spin", "c", spin_src, "-O1 -static");
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (!freopen(tu_workdir_path("spin.err"), "w", stderr)) _exit(126);
        execl(tu_frames_bin(), "frames", "record", "-f", "-o", trace.s, "--", prog.s, (char *)NULL);
        _exit(127);
    }
    sleep(1);
    kill(pid, SIGTERM);
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 128 + SIGTERM); /* as the shell reports an interrupted command */
    r = tu_open_finished(trace.s, NULL);
    while (frames_reader_next(r, &f) > 0)
        if (f.kind == FRAMES_KIND_STD) {
            n++;
            last_has_post = f.std.has_post;
        }
    assert_true(n > 1000);
    assert_false(last_has_post);
    frames_reader_close(r);
}

static void test_usage_errors(void **state) {
    int st;
    char *out;
    (void)state;
    free(tu_run(&st, "'%s' record --help", tu_frames_bin()));
    assert_int_equal(st, 0);
    free(tu_run(&st, "'%s' record -o '%s' 2>&1", tu_frames_bin(), tu_workdir_path("x.frames")));
    assert_int_equal(st, 2);
    free(tu_run(&st, "'%s' record --bogus -- /bin/true 2>&1", tu_frames_bin()));
    assert_int_equal(st, 2);
    out = tu_run(&st, "'%s' record -o '%s' -- /nonexistent/program 2>&1", tu_frames_bin(), tu_workdir_path("x.frames"));
    assert_int_equal(st, 127);
    assert_non_null(strstr(out, "not found"));
    free(out);
    out = tu_run(&st, "'%s' record --probe", tu_frames_bin());
    assert_int_equal(st, 0);
    assert_non_null(strstr(out, "PTRACE_SINGLEBLOCK"));
    free(out);
}

static int setup(void **state) {
    (void)state;
    if (tu_workdir_make("frames-record") < 0) return -1;
    return tu_write_file(tu_workdir_path("cg.in"), "", 0);
}

#endif /* TU_RECORD_BUILT */

int main(void) {
#ifdef TU_RECORD_BUILT
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_static_program_vs_callgrind),
        cmocka_unit_test(test_static_program_values),
        cmocka_unit_test(test_sampling_and_no_mem),
        cmocka_unit_test(test_true_syscalls_vs_strace),
        cmocka_unit_test(test_echo_syscalls_vs_strace),
        cmocka_unit_test(test_echo_vs_strace_in_every_environment),
        cmocka_unit_test(test_threads),
        cmocka_unit_test(test_forks),
        cmocka_unit_test(test_fault_and_handler),
        cmocka_unit_test(test_vector_registers),
        cmocka_unit_test(test_tenet_first_line_has_initial_registers),
        cmocka_unit_test(test_interrupt_finishes_trace),
        cmocka_unit_test(test_usage_errors),
    };
    return cmocka_run_group_tests(tests, setup, tu_workdir_teardown);
#else
    printf("test_record_cmd: frames record is not built (needs capstone on x86-64 Linux)\n");
    return 0;
#endif
}
