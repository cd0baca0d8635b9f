/* test_record_cmd.c - `frames record` against independent tools and hand-computed facts:
   per-instruction execution counts of callgrind, syscall sequences of strace -f, values of
   a hand-written program, threads, forks, a fault with a handler, sampling, --no-mem. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <ctype.h>
#include <signal.h>
#include <stdint.h>

#include "frames.h"
#include "testutil.h"

#if defined(FRAMES_HAVE_CAPSTONE) && defined(__linux__) && defined(__x86_64__)
#define RECORD_BUILT 1
#endif

#ifdef RECORD_BUILT

/* ------------------------------------------------------------------ helpers */

static char workdir[256];

/* Path of a file in the work directory (one of 8 rotating buffers: copy what must last). */
static const char *wpath(const char *name) {
    static char bufs[8][512];
    static int next;
    char *b = bufs[next++ & 7];
    snprintf(b, sizeof bufs[0], "%s/%s", workdir, name);
    return b;
}

typedef struct path_buf {
    char s[512];
} path_buf;

static path_buf wkeep(const char *name) {
    path_buf p;
    snprintf(p.s, sizeof p.s, "%s", wpath(name));
    return p;
}

/* Write a source file and compile it with cc; `flags` e.g. "-nostdlib -static". */
static void build_program(const char *name, const char *ext, const char *src, const char *flags) {
    char file[64];
    int st;
    char *out;
    snprintf(file, sizeof file, "%s.%s", name, ext);
    assert_int_equal(tu_write_file(wpath(file), src, strlen(src)), 0);
    out = tu_run(&st, "cc %s -o %s %s 2>&1", flags, wpath(name), wpath(file));
    if (st != 0) fprintf(stderr, "%s", out);
    assert_int_equal(st, 0);
    free(out);
}

/* Run frames record; returns its stderr (summary) and the exit status. */
static char *record(int *status, const char *trace, const char *opts, const char *cmd) {
    return tu_run(status, "%s record --engine ptrace %s -o %s -- %s 2>&1 >%s", tu_frames_bin(), opts, trace, cmd,
                  wpath("program.out"));
}

/* Address of a symbol of a program (nm). */
static uint64_t symbol(const char *prog, const char *name) {
    int st;
    char *out = tu_run(&st, "nm %s", prog), *line;
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
    assert_int_equal(frames_reader_stat(r, &st), 0);
    assert_true(st.finished);
    assert_false(st.truncated);
    assert_true(st.ocaml_accepts);
    assert_true(st.cxx_legacy_accepts);
    frames_reader_close(r);
}

/* ------------------------------------------------------------------ the static program */

/* A loop, a load, a store, a call, push/pop, a vector load, write(1, "hi\n", 3), exit(7). */
static const char prog_src[] =
    "        .globl _start, L_load, L_store, L_call, L_push, L_pop, L_vec, L_write, L_exit, f, buf, msg\n"
    "        .data\n"
    "buf:    .quad 0x1122334455667788\n"
    "slot:   .quad 7\n"
    "msg:    .ascii \"hi\\n\"\n"
    "        .text\n"
    "_start: mov $1000, %ecx\n"
    "1:      add $1, %rax\n"
    "        dec %ecx\n"
    "        jnz 1b\n"
    "        lea buf(%rip), %rbx\n"
    "L_load: mov (%rbx), %rdx\n"
    "L_store: movq $0x99, 8(%rbx)\n"
    "L_call: call f\n"
    "L_push: push %rdx\n"
    "L_pop:  pop %r8\n"
    "L_vec:  movdqu (%rbx), %xmm1\n"
    "        mov $1, %eax\n"
    "        mov $1, %edi\n"
    "        lea msg(%rip), %rsi\n"
    "        mov $3, %edx\n"
    "L_write: syscall\n"
    "        mov $60, %eax\n"
    "        mov $7, %edi\n"
    "L_exit: syscall\n"
    "f:      ret\n";

/* Instructions the program executes, counted by hand: mov, 1000 x (add, dec, jnz), then
   lea, load, store, call, ret, push, pop, movdqu, 4 movs, syscall, 2 movs, syscall. */
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
    build_program("prog", "S", prog_src, "-nostdlib -static");
    out = record(&st, wpath("prog.frames"), "", prog);
    assert_int_equal(st, 0);
    assert_non_null(strstr(out, "exited with status 7"));
    free(out);
    out = (char *)tu_read_file(wpath("program.out"), NULL);
    assert_string_equal(out, "hi\n"); /* the program's own output passes through */
    free(out);
    summarise(wpath("prog.frames"), &s);
    assert_int_equal(s.std, PROG_INSNS);
    out = tu_run(&st, "valgrind --tool=callgrind --dump-instr=yes --callgrind-out-file=%s %s >/dev/null 2>&1",
                 wpath("cg.out"), prog);
    assert_int_equal(st, 7);
    free(out);
    counts_init(&cg);
    cg_total = read_callgrind(wpath("cg.out"), &cg);
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
        out = tu_run(&st, "md5sum %s", prog);
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

/* Syscall numbers strace -f reports, in order, from lines "PID name(args) = ret" and
   "PID name(args <unfinished ...>"; resumed halves, signals and exits are not calls. */
static size_t strace_syscalls(const char *cmd, long *out, size_t cap) {
    path_buf log_path = wkeep("strace.txt");
    const char *log = log_path.s;
    char *text, *line, *save = NULL;
    size_t n = 0;
    int st;
    free(tu_run(&st, "strace -f -qq -o %s %s >/dev/null 2>&1", log, cmd));
    assert_int_equal(st, 0);
    text = (char *)tu_read_file(log, NULL);
    assert_non_null(text);
    for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char name[64];
        const char *p = line;
        while (isdigit((unsigned char)*p)) p++;
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

static void compare_with_strace(const char *cmd) {
    long want[512];
    size_t n, i;
    trace_sum s;
    char *out;
    int st;
    n = strace_syscalls(cmd, want, 512);
    out = record(&st, wpath("sys.frames"), "--no-mem", cmd);
    assert_int_equal(st, 0);
    free(out);
    summarise(wpath("sys.frames"), &s);
    /* the trace starts in the new image: strace's first call is the execve itself */
    assert_true(n > 10);
    assert_int_equal(want[0], syscall_number("execve"));
    assert_int_equal(s.syscalls_n, n - 1);
    for (i = 1; i < n; i++)
        if (s.syscalls[i - 1] != want[i])
            fail_msg("syscall %lu: trace has %ld, strace %ld", (unsigned long)i, s.syscalls[i - 1], want[i]);
    assert_int_equal(s.syscalls[s.syscalls_n - 1], syscall_number("exit_group"));
    assert_true(s.modloads >= 3); /* the program, ld.so, libc at least */
    assert_int_equal(s.unfinished_std, 1); /* only exit_group never completes */
    counts_free(&s.pcs);
}

static void test_true_syscalls_vs_strace(void **state) {
    (void)state;
    compare_with_strace("/bin/true");
}

static void test_echo_syscalls_vs_strace(void **state) {
    char *out;
    (void)state;
    compare_with_strace("/bin/echo hi");
    out = (char *)tu_read_file(wpath("program.out"), NULL);
    assert_string_equal(out, "hi\n");
    free(out);
}

/* ------------------------------------------------------------------ threads, forks, signals */

static const char threads_src[] =
    "#include <pthread.h>\n"
    "#include <unistd.h>\n"
    "static void *work(void *p) {\n"
    "    __asm__ volatile(\"mov $500, %%ecx\\n.globl thread_loop\\nthread_loop: dec %%ecx\\n jnz thread_loop\"\n"
    "                     ::: \"rcx\", \"cc\");\n"
    "    write(1, \"t\\n\", 2);\n"
    "    return p;\n"
    "}\n"
    "int main(void) {\n"
    "    pthread_t t;\n"
    "    pthread_create(&t, 0, work, 0);\n"
    "    pthread_join(t, 0);\n"
    "    return 0;\n"
    "}\n";

static void test_threads(void **state) {
    trace_sum s;
    frames_reader *r;
    frames_error err;
    frames_frame f;
    uint64_t loop, main_tid = 0, loop_tid = 0, loop_n = 0, i;
    int st, saw_write = 0;
    char *out;
    (void)state;
    build_program("threads", "c", threads_src, "-O1 -static -pthread");
    out = record(&st, wpath("threads.frames"), "", wpath("threads"));
    assert_int_equal(st, 0);
    assert_non_null(strstr(out, "2 thread(s)"));
    free(out);
    summarise(wpath("threads.frames"), &s);
    assert_int_equal(s.ntids, 2);
    counts_free(&s.pcs);
    loop = symbol(wpath("threads"), "thread_loop");
    assert_int_equal(frames_reader_open_path(&r, wpath("threads.frames"), NULL, &err), 0);
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

static const char fork_src[] =
    "#include <sys/wait.h>\n"
    "#include <unistd.h>\n"
    "int main(void) {\n"
    "    int st;\n"
    "    pid_t p = fork();\n"
    "    if (p == 0) { write(1, \"child\\n\", 6); _exit(3); }\n"
    "    waitpid(p, &st, 0);\n"
    "    return WEXITSTATUS(st) == 3 ? 0 : 1;\n"
    "}\n";

/* With --follow-forks the child's syscalls are in the trace under its own thread id and
   equal strace's list for the child; without, the child runs untraced. */
static void test_forks(void **state) {
    long want[512];
    size_t n, i, k;
    trace_sum s;
    uint64_t child = 0;
    int st;
    char *out;
    (void)state;
    build_program("forker", "c", fork_src, "-O1 -static");
    out = record(&st, wpath("fork.frames"), "--follow-forks --no-mem", wpath("forker"));
    assert_int_equal(st, 0);
    assert_non_null(strstr(out, "exited with status 0"));
    free(out);
    summarise(wpath("fork.frames"), &s);
    assert_int_equal(s.ntids, 2);
    child = s.tids[1];
    /* strace: the child's lines carry a pid other than the first line's */
    {
        path_buf log_path = wkeep("strace.txt");
        const char *log = log_path.s;
        char *text, *line, *save = NULL;
        long first_pid = -1;
        free(tu_run(&st, "strace -f -qq -o %s %s >/dev/null 2>&1", log, wpath("forker")));
        text = (char *)tu_read_file(log, NULL);
        n = 0;
        for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
            long pid;
            char name[64];
            int off = 0;
            if (sscanf(line, "%ld %n", &pid, &off) != 1) continue;
            if (first_pid < 0) first_pid = pid;
            if (pid == first_pid || sscanf(line + off, "%63[a-z0-9_](", name) != 1) continue;
            want[n++] = syscall_number(name);
        }
        free(text);
    }
    assert_true(n >= 2);
    for (i = 0, k = 0; i < s.syscalls_n && i < 512; i++) {
        if (s.syscall_tid[i] != child) continue;
        assert_true(k < n);
        assert_int_equal(s.syscalls[i], want[k]);
        k++;
    }
    assert_int_equal(k, n);
    counts_free(&s.pcs);
    out = record(&st, wpath("nofork.frames"), "--no-mem", wpath("forker"));
    assert_int_equal(st, 0);
    free(out);
    summarise(wpath("nofork.frames"), &s);
    assert_int_equal(s.ntids, 1);
    counts_free(&s.pcs);
    out = (char *)tu_read_file(wpath("program.out"), NULL);
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
    int st, stage = 0;
    char *out;
    (void)state;
    build_program("fault", "c", fault_src, "-O1 -static");
    out = record(&st, wpath("fault.frames"), "", wpath("fault"));
    assert_int_equal(st, 0);
    assert_non_null(strstr(out, "exited with status 5"));
    free(out);
    fault = symbol(wpath("fault"), "fault_here");
    handler = symbol(wpath("fault"), "on_segv");
    assert_int_equal(frames_reader_open_path(&r, wpath("fault.frames"), NULL, &err), 0);
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
static int cpu_has(const char *flag) {
    int st, found;
    char *out = tu_run(&st, "grep -m1 -w -o %s /proc/cpuinfo", flag);
    found = st == 0 && strstr(out, flag) != NULL;
    free(out);
    return found;
}

static void test_vector_registers(void **state) {
    int avx512 = cpu_has("avx512f"), st;
    char src[2048], *out;
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
    build_program("vec", "S", src, "-nostdlib -static");
    out = record(&st, wpath("vec.frames"), "", wpath("vec"));
    assert_int_equal(st, 0);
    free(out);
    assert_int_equal(frames_reader_open_path(&r, wpath("vec.frames"), NULL, &err), 0);
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
    out = record(&st, wpath("sample.frames"), "--sample 100:900", wpath("prog"));
    assert_int_equal(st, 0);
    free(out);
    summarise(wpath("sample.frames"), &s);
    assert_int_equal(s.std, 3 * 100 + (PROG_INSNS - 3000));
    assert_int_equal(s.syscalls_n, 2);
    counts_free(&s.pcs);
    out = record(&st, wpath("nomem.frames"), "--no-mem", wpath("prog"));
    assert_int_equal(st, 0);
    free(out);
    assert_int_equal(frames_reader_open_path(&r, wpath("nomem.frames"), NULL, &err), 0);
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
    frames_reader_info info;
    frames_error err;
    frames_frame f;
    uint64_t n = 0;
    int st, last_has_post = 1;
    pid_t pid;
    (void)state;
    build_program("spin", "c", spin_src, "-O1 -static");
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        freopen("/dev/null", "w", stderr);
        execl(tu_frames_bin(), "frames", "record", "-o", trace.s, "--", prog.s, (char *)NULL);
        _exit(127);
    }
    sleep(1);
    kill(pid, SIGTERM);
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
    assert_int_equal(frames_reader_open_path(&r, trace.s, NULL, &err), 0);
    assert_int_equal(frames_reader_stat(r, &info), 0);
    assert_true(info.finished);
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
    free(tu_run(&st, "%s record --help", tu_frames_bin()));
    assert_int_equal(st, 0);
    free(tu_run(&st, "%s record -o %s 2>/dev/null", tu_frames_bin(), wpath("x.frames")));
    assert_int_equal(st, 2);
    free(tu_run(&st, "%s record --bogus -- /bin/true 2>/dev/null", tu_frames_bin()));
    assert_int_equal(st, 2);
    out = tu_run(&st, "%s record -o %s -- /nonexistent/program 2>&1", tu_frames_bin(), wpath("x.frames"));
    assert_int_equal(st, 1);
    assert_non_null(strstr(out, "not found"));
    free(out);
    out = tu_run(&st, "%s record --probe", tu_frames_bin());
    assert_int_equal(st, 0);
    assert_non_null(strstr(out, "PTRACE_SINGLEBLOCK"));
    free(out);
}

static int setup(void **state) {
    (void)state;
    snprintf(workdir, sizeof workdir, "%s/frames-record-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    return mkdtemp(workdir) ? 0 : -1;
}

static int teardown(void **state) {
    int st;
    (void)state;
    free(tu_run(&st, "rm -rf %s", workdir));
    return 0;
}

#endif /* RECORD_BUILT */

int main(void) {
#ifdef RECORD_BUILT
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_static_program_vs_callgrind),
        cmocka_unit_test(test_static_program_values),
        cmocka_unit_test(test_sampling_and_no_mem),
        cmocka_unit_test(test_true_syscalls_vs_strace),
        cmocka_unit_test(test_echo_syscalls_vs_strace),
        cmocka_unit_test(test_threads),
        cmocka_unit_test(test_forks),
        cmocka_unit_test(test_fault_and_handler),
        cmocka_unit_test(test_vector_registers),
        cmocka_unit_test(test_interrupt_finishes_trace),
        cmocka_unit_test(test_usage_errors),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
#else
    printf("test_record_cmd: frames record is not built (needs capstone on x86-64 Linux)\n");
    return 0;
#endif
}
