/* test_record_vg.c - `frames record --engine valgrind` against independent references:
   the ptrace engine (same instruction sequence, same values where both record them) on
   static probe programs, callgrind's per-instruction counts, strace's syscalls per
   thread (threads and forks). Skips when the Valgrind tool was not built. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <ctype.h>
#include <stdint.h>
#include <unistd.h>

#include "frames.h"
#include "testutil.h"
#include "probes.h"

#ifdef TU_RECORD_BUILT

#define dir tu_workdir          /* the suite's work directory (testutil.h) */
#define at tu_workdir_path

static void compile(const char *name, const char *ext, const char *src, const char *flags) {
    char file[64], *out;
    int st;
    snprintf(file, sizeof file, "%s.%s", name, ext);
    assert_int_equal(tu_write_file(at(file), src, strlen(src)), 0);
    out = tu_run(&st, "cc %s -o %s/%s %s 2>&1", flags, dir, name, at(file));
    if (st) fprintf(stderr, "%s", out);
    assert_int_equal(st, 0);
    free(out);
}

/* frames record with an engine; the program's stdout goes to a file (the same kind of
   stdout for every engine and for strace). Returns the exit status. */
static int rec(const char *engine, const char *opts, const char *trace, const char *cmd) {
    int st;
    /* no core file (Valgrind writes vgcore.PID into the current directory) */
    char *out = tu_run(&st, "ulimit -c 0; LC_ALL=C %s record -f --engine %s %s -o %s -- %s >%s/out.txt 2>%s/err.txt",
                       tu_frames_bin(), engine, opts, trace, cmd, dir, dir);
    free(out);
    return st;
}

/* A finished trace, read frame by frame (a frame is valid until the next call). */
static frames_reader *open_trace(const char *path) { return tu_open_finished(path, NULL); }

static int next_frame(frames_reader *r, frames_frame *f) {
    frames_error err;
    int rc = frames_reader_next(r, f);
    assert_true(rc >= 0);
    if (rc > 0) assert_int_equal(frames_validate_frame(f, &err), 0);
    return rc > 0;
}

static int next_std(frames_reader *r, frames_frame *f) {
    while (next_frame(r, f))
        if (f->kind == FRAMES_KIND_STD) return 1;
    return 0;
}

static int name_is(frames_bytes b, const char *s) {
    return b.len == strlen(s) && !memcmp(b.ptr, s, b.len);
}

/* Values in one operand list of the two engines: a register both list has the same value
   (except the stack pointer: Valgrind's stack is elsewhere; and R11 after syscall, which
   Valgrind leaves alone where the kernel stores RFLAGS); memory operands pair up in order
   with the same values, and the same addresses outside the stack. */
static void same_values(const frames_operand *a, uint32_t na, const frames_operand *b, uint32_t nb,
                        uint64_t pc, int is_syscall, int *compared) {
    uint32_t i, j, ma = 0, mb = 0;
    for (i = 0; i < na; i++) {
        if (a[i].spec != FRAMES_REG || name_is(a[i].name, "RSP") || (is_syscall && name_is(a[i].name, "R11")))
            continue;
        for (j = 0; j < nb; j++)
            if (b[j].spec == FRAMES_REG && b[j].name.len == a[i].name.len &&
                !memcmp(b[j].name.ptr, a[i].name.ptr, a[i].name.len)) {
                uint8_t va[64], vb[64];
                assert_true(a[i].value.len <= 64 && b[j].value.len <= 64);
                memcpy(va, a[i].value.ptr, a[i].value.len);
                memcpy(vb, b[j].value.ptr, b[j].value.len);
                if (name_is(a[i].name, "RFLAGS")) /* RF: set while single-stepping rep moves */
                    va[2] &= (uint8_t)~1u, vb[2] &= (uint8_t)~1u;
                if (a[i].value.len != b[j].value.len || memcmp(va, vb, a[i].value.len))
                    fail_msg("0x%llx: %.*s differs", (unsigned long long)pc, (int)a[i].name.len,
                             (const char *)a[i].name.ptr);
                (*compared)++;
            }
    }
    for (i = 0; i < na; i++) ma += a[i].spec == FRAMES_MEM;
    for (j = 0; j < nb; j++) mb += b[j].spec == FRAMES_MEM;
    if (ma != mb) fail_msg("0x%llx: %u memory operands against %u", (unsigned long long)pc, ma, mb);
    /* data: the operand at the same address and with the same role; stack: in order */
    for (i = 0, j = 0; i < na; i++) {
        const frames_operand *m = NULL;
        uint32_t k;
        if (a[i].spec != FRAMES_MEM) continue;
        for (k = 0; k < nb && !m; k++)
            if (b[k].spec == FRAMES_MEM && b[k].address == a[i].address && b[k].read == a[i].read) m = &b[k];
        if (!m) {
            while (j < nb && (b[j].spec != FRAMES_MEM || b[j].address < 0x7f0000000000ull)) j++;
            if (j == nb) fail_msg("0x%llx: no memory operand at 0x%llx", (unsigned long long)pc,
                                  (unsigned long long)a[i].address);
            m = &b[j++];
        }
        assert_int_equal(a[i].value.len, m->value.len);
        if (memcmp(a[i].value.ptr, m->value.ptr, a[i].value.len))
            fail_msg("0x%llx: memory value differs", (unsigned long long)pc);
        (*compared)++;
    }
}

/* The same instructions (address, bytes) in the same order, the same values. */
static void engines_agree(const char *prog, uint64_t want_insns) {
    frames_reader *v, *p;
    frames_frame a, b;
    uint64_t insns = 0;
    int compared = 0, more;
    assert_int_equal(rec("valgrind", "", at("v.frames"), prog), rec("ptrace", "", at("p.frames"), prog));
    v = open_trace(at("v.frames"));
    p = open_trace(at("p.frames"));
    while ((more = next_std(v, &a)) != 0) {
        int sc;
        assert_true(next_std(p, &b));
        insns++;
        assert_int_equal(a.std.address, b.std.address);
        assert_int_equal(a.std.rawbytes.len, b.std.rawbytes.len);
        assert_memory_equal(a.std.rawbytes.ptr, b.std.rawbytes.ptr, b.std.rawbytes.len);
        assert_int_equal(a.std.has_post, b.std.has_post);
        sc = a.std.rawbytes.len == 2 && a.std.rawbytes.ptr[0] == 0x0f && a.std.rawbytes.ptr[1] == 0x05;
        same_values(a.std.pre, a.std.npre, b.std.pre, b.std.npre, a.std.address, sc, &compared);
        same_values(a.std.post, a.std.npost, b.std.post, b.std.npost, a.std.address, sc, &compared);
    }
    assert_false(next_std(p, &b));
    assert_int_equal(insns, want_insns);
    assert_true(compared > (int)want_insns); /* values were compared, not just counted */
    frames_reader_close(v);
    frames_reader_close(p);
}

/* ------------------------------------------------------------------ probe programs */

/* Flags read and written, rep string moves, exchanges and locked read-modify-writes,
   SSE arithmetic, sub-registers. */
static const char probe2_src[] =
    "        .globl _start\n"
    "        .data\n"
    "buf:    .quad 0x1122334455667788, 0x0102030405060708\n"
    "src:    .ascii \"abcdefgh\"\n"
    "dst:    .quad 0\n"
    "        .text\n"
    "_start: lea buf(%rip), %rbx\n"
    "        mov $5, %eax\n"
    "        add $-6, %eax\n"
    "        adc $0, %ecx\n"
    "        setc %dl\n"
    "        mov %ah, %dh\n"
    "        lea src(%rip), %rsi\n"
    "        lea dst(%rip), %rdi\n"
    "        mov $4, %ecx\n"
    "        cld\n"
    "        rep movsb\n"
    "        mov $7, %eax\n"
    "        xchg %eax, (%rbx)\n"
    "        lock xaddl %eax, (%rbx)\n"
    "        mov (%rbx), %eax\n"
    "        mov $1, %edx\n"
    "        lock cmpxchgl %edx, (%rbx)\n"
    "        movdqu (%rbx), %xmm2\n"
    "        paddq %xmm2, %xmm2\n"
    "        movq %xmm2, %r9\n"
    "        add %r9, %rdx\n"
    "        mov $60, %eax\n"
    "        xor %edi, %edi\n"
    "        syscall\n";
#define PROBE2_INSNS (11 + 4 + 12)

static void test_probe_same_as_ptrace(void **state) {
    (void)state;
    compile("probe", "S", probe_prog_src, "-nostdlib -static");
    engines_agree(at("probe"), PROBE_PROG_INSNS);
}

static void test_probe2_same_as_ptrace(void **state) {
    (void)state;
    compile("probe2", "S", probe2_src, "-nostdlib -static");
    engines_agree(at("probe2"), PROBE2_INSNS);
}

static uint64_t nm_symbol(const char *prog, const char *sym) {
    int st;
    unsigned long long a = 0;
    char *out = tu_run(&st, "nm %s | awk '$3 == \"%s\" { print $1 }'", prog, sym);
    assert_int_equal(sscanf(out, "%llx", &a), 1);
    free(out);
    return a;
}

/* ------------------------------------------------------------------ callgrind */

/* callgrind --dump-instr=yes: self cost per instruction address ("0x.." absolute, "+n"
   "-n" relative, "*" same; the line after calls= is a call's inclusive cost). */
static uint64_t callgrind_counts(const char *path, uint64_t *pcs, uint64_t *ns, size_t cap, size_t *n) {
    char *text = (char *)tu_read_file(path, NULL), *line, *save = NULL;
    uint64_t pos = 0, total = 0;
    int after_calls = 0;
    assert_non_null(text);
    *n = 0;
    for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *last = strrchr(line, ' ');
        if (!strncmp(line, "calls=", 6)) {
            after_calls = 1;
            continue;
        }
        if (!strncmp(line, "totals:", 7)) total = strtoull(line + 7, NULL, 10);
        if (line[0] == '0' && line[1] == 'x') pos = strtoull(line, NULL, 16);
        else if (line[0] == '+' || line[0] == '-') pos += (uint64_t)strtoll(line, NULL, 10);
        else if (line[0] != '*') continue;
        if (!after_calls && last) {
            size_t i;
            for (i = 0; i < *n && pcs[i] != pos; i++) {}
            if (i == *n) {
                assert_true(*n < cap);
                pcs[(*n)++] = pos;
                ns[i] = 0;
            }
            ns[i] += strtoull(last + 1, NULL, 10);
        }
        after_calls = 0;
    }
    free(text);
    return total;
}

/* Per-address counts equal callgrind's; callgrind does not count the block the process
   exits in (3 instructions: mov $60, mov $7, syscall). */
static void test_counts_vs_callgrind(void **state) {
    static uint64_t pcs[4096], ns[4096];
    size_t n, i, k;
    uint64_t total, ours = 0;
    frames_reader *v;
    frames_frame f;
    int st;
    char *out;
    (void)state;
    compile("probe", "S", probe_prog_src, "-nostdlib -static");
    assert_int_equal(rec("valgrind", "", at("v.frames"), at("probe")), 7); /* the probe's status */
    out = tu_run(&st, "valgrind --tool=callgrind --dump-instr=yes --callgrind-out-file=%s %s >/dev/null 2>&1",
                 at("cg.out"), at("probe"));
    free(out);
    assert_int_equal(st, 7);
    total = callgrind_counts(at("cg.out"), pcs, ns, 4096, &n);
    v = open_trace(at("v.frames"));
    while (next_std(v, &f)) {
        ours++;
        for (i = 0; i < n && pcs[i] != f.std.address; i++) {}
        if (i < n) ns[i]--; /* counted down to zero below */
        else assert_true(f.std.address >= nm_symbol(at("probe"), "L_exit") - 10 &&
                         f.std.address <= nm_symbol(at("probe"), "L_exit"));
    }
    frames_reader_close(v);
    assert_int_equal(ours, total + 3);
    for (k = 0; k < n; k++)
        if (ns[k]) fail_msg("0x%llx: count differs from callgrind's by %lld", (unsigned long long)pcs[k], (long long)ns[k]);
}

/* ------------------------------------------------------------------ strace, threads, forks */

static long sysno(const char *name) {
    static const char *headers[] = {"/usr/include/x86_64-linux-gnu/asm/unistd_64.h", "/usr/include/asm/unistd_64.h"};
    char line[256], sym[128], want[128];
    long nr = -1, v;
    size_t i;
    snprintf(want, sizeof want, "__NR_%s", name);
    for (i = 0; i < 2 && nr < 0; i++) {
        FILE *f = fopen(headers[i], "r");
        if (!f) continue;
        while (nr < 0 && fgets(line, sizeof line, f))
            if (sscanf(line, "#define %127s %ld", sym, &v) == 2 && !strcmp(sym, want)) nr = v;
        fclose(f);
    }
    return nr;
}

/* Syscall numbers per thread, threads in order of first appearance. */
typedef struct per_thread {
    long tid[8];
    long nr[8][256];
    size_t n[8], nthreads;
} per_thread;

static size_t thread_slot(per_thread *p, long tid) {
    size_t i;
    for (i = 0; i < p->nthreads; i++)
        if (p->tid[i] == tid) return i;
    assert_true(p->nthreads < 8);
    p->tid[p->nthreads] = tid;
    return p->nthreads++;
}

/* Valgrind 3.19 answers clone3 and rseq with ENOSYS (glibc then uses clone, and no
   rseq): those calls are left out on both sides (docs/recording.md); so is futex, which
   pthread_join calls only when the thread has not ended yet (timing, not tracing). */
static void add_call(per_thread *p, long tid, long nr) {
    size_t s = thread_slot(p, tid);
    if (nr == sysno("clone3") || nr == sysno("rseq") || nr == sysno("clone") || nr == sysno("futex")) return;
    assert_true(p->n[s] < 256);
    p->nr[s][p->n[s]++] = nr;
}

/* strace -f, with the same kind of stdout (a file) and locale as the recording. */
static void strace_calls(const char *cmd, per_thread *p) {
    char *text, *line, *save = NULL;
    int st;
    memset(p, 0, sizeof *p);
    free(tu_run(&st, "LC_ALL=C strace -f -qq -o %s %s >%s/out.txt 2>/dev/null", at("strace.txt"), cmd, dir));
    text = (char *)tu_read_file(at("strace.txt"), NULL);
    assert_non_null(text);
    for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char name[64];
        long tid;
        int off = 0;
        if (sscanf(line, "%ld %n", &tid, &off) != 1) continue;
        if (!strncmp(line + off, "<...", 4) || sscanf(line + off, "%63[a-z0-9_](", name) != 1) continue;
        add_call(p, tid, sysno(name));
    }
    free(text);
}

static void trace_calls(const char *trace, per_thread *p) {
    frames_reader *r = open_trace(trace);
    frames_frame f;
    memset(p, 0, sizeof *p);
    while (next_frame(r, &f)) {
        if (f.kind == FRAMES_KIND_STD) thread_slot(p, (long)f.std.thread_id);
        if (f.kind == FRAMES_KIND_SYSCALL) add_call(p, (long)f.syscall.thread_id, (long)f.syscall.number);
    }
    frames_reader_close(r);
}

/* The trace starts in the new image: strace's first call is the execve itself. */
static void calls_agree(const char *cmd, const char *opts, size_t want_threads) {
    per_thread s, t;
    size_t i, k;
    strace_calls(cmd, &s);
    assert_int_equal(rec("valgrind", opts, at("sys.frames"), cmd), 0);
    trace_calls(at("sys.frames"), &t);
    assert_int_equal(s.nr[0][0], sysno("execve"));
    assert_int_equal(t.nthreads, want_threads);
    assert_int_equal(s.nthreads, want_threads);
    for (i = 0; i < want_threads; i++) {
        size_t skip = i == 0;
        assert_int_equal(t.n[i], s.n[i] - skip);
        for (k = 0; k < t.n[i]; k++)
            if (t.nr[i][k] != s.nr[i][k + skip])
                fail_msg("thread %lu call %lu: trace %ld, strace %ld", (unsigned long)i, (unsigned long)k,
                         t.nr[i][k], s.nr[i][k + skip]);
    }
}

/* Each thread's syscalls equal strace's; the second thread's loop runs 500 times under
   its own thread id. */
static void test_threads(void **state) {
    frames_reader *r;
    frames_frame f;
    uint64_t loop, n = 0, tid = 0, first = 0;
    (void)state;
    compile("threads", "c", probe_threads_src, "-O1 -static -pthread");
    calls_agree(at("threads"), "", 2);
    loop = nm_symbol(at("threads"), "thread_loop");
    r = open_trace(at("sys.frames"));
    while (next_std(r, &f)) {
        if (!first) first = f.std.thread_id;
        if (f.std.address == loop) {
            n++;
            tid = f.std.thread_id;
        }
    }
    frames_reader_close(r);
    assert_int_equal(n, 500);
    assert_true(tid && tid != first);
}

/* --follow-forks: the child's syscalls under its own id, as strace sees them; without it
   the child runs untraced (but runs: its output is there). */
static void test_forks(void **state) {
    per_thread t;
    char *out;
    (void)state;
    compile("forker", "c", probe_fork_src, "-O1 -static");
    calls_agree(at("forker"), "--follow-forks --no-mem", 2);
    assert_int_equal(rec("valgrind", "--no-mem", at("nofork.frames"), at("forker")), 0);
    trace_calls(at("nofork.frames"), &t);
    assert_int_equal(t.nthreads, 1);
    out = (char *)tu_read_file(at("out.txt"), NULL);
    assert_string_equal(out, "child\n");
    free(out);
}

/* A fault without a handler: Valgrind reports the signal, the trace is finished and its
   last instruction is the faulting store, without a post list. */
static void test_crash_leaves_finished_trace(void **state) {
    static const char src[] =
        "        .globl _start\n"
        "_start: mov $3, %eax\n"
        ".globl fault_here\n"
        "fault_here: movq $1, 0\n";
    frames_reader *r;
    frames_frame f;
    uint64_t last = 0, n = 0;
    int has_post = 1;
    (void)state;
    compile("crash", "S", src, "-nostdlib -static");
    rec("valgrind", "", at("crash.frames"), at("crash"));
    r = open_trace(at("crash.frames"));
    while (next_std(r, &f)) {
        last = f.std.address;
        has_post = f.std.has_post;
        n++;
    }
    frames_reader_close(r);
    assert_int_equal(n, 2);
    assert_int_equal(last, nm_symbol(at("crash"), "fault_here"));
    assert_false(has_post);
}

/* --sample 100:900 on the probe (3017 instructions): windows at 0, 1000, 2000, 3000
   record 100 + 100 + 100 + 17; --no-mem: registers only. */
static void test_sampling_and_no_mem(void **state) {
    frames_reader *r;
    frames_frame f;
    uint64_t n = 0, mem = 0, values = 0;
    uint32_t i;
    (void)state;
    compile("probe", "S", probe_prog_src, "-nostdlib -static");
    assert_int_equal(rec("valgrind", "--sample 100:900", at("s.frames"), at("probe")), 7);
    r = open_trace(at("s.frames"));
    while (next_std(r, &f)) n++;
    frames_reader_close(r);
    assert_int_equal(n, 3 * 100 + 17);
    assert_int_equal(rec("valgrind", "--no-mem", at("nm.frames"), at("probe")), 7);
    r = open_trace(at("nm.frames"));
    while (next_std(r, &f)) {
        for (i = 0; i < f.std.npre; i++) mem += f.std.pre[i].spec == FRAMES_MEM;
        for (i = 0; i < f.std.npost; i++) mem += f.std.post[i].spec == FRAMES_MEM;
        values += f.std.npre + f.std.npost;
    }
    frames_reader_close(r);
    assert_int_equal(mem, 0);
    assert_true(values > 3000);
}

/* -o x.frames.zst: a compressed trace that the zstd command decompresses into a finished
   trace with the same instructions as the uncompressed one. */
static void test_compressed_output(void **state) {
    frames_reader *r, *z;
    frames_frame f, g;
    uint64_t n = 0;
    int st;
    char *out;
    (void)state;
    compile("probe", "S", probe_prog_src, "-nostdlib -static");
    assert_int_equal(rec("valgrind", "", at("p.frames"), at("probe")), 7);
    assert_int_equal(rec("valgrind", "", at("p.frames.zst"), at("probe")), 7);
    out = tu_run(&st, "zstd -q -d -c %s > %s", at("p.frames.zst"), at("pz.frames"));
    free(out);
    assert_int_equal(st, 0);
    r = open_trace(at("p.frames"));
    z = open_trace(at("pz.frames"));
    while (next_std(r, &f)) {
        uint64_t pc = f.std.address;
        assert_true(next_std(z, &g));
        assert_int_equal(g.std.address, pc);
        n++;
    }
    assert_false(next_std(z, &g));
    frames_reader_close(r);
    frames_reader_close(z);
    assert_true(n > 3000);
}

/* SIGINT to frames record: the program is killed, the trace finished. */
static void test_interrupt_finishes_trace(void **state) {
    static const char spin_src[] = "int main(void) { volatile long i = 0; for (;;) i++; }\n";
    frames_reader *r;
    frames_frame f;
    uint64_t n = 0;
    int st;
    char *out;
    (void)state;
    compile("spin", "c", spin_src, "-O1 -static");
    out = tu_run(&st, "%s record -f --engine valgrind -o %s -- %s >/dev/null 2>%s & pid=$!; sleep 3; kill -INT $pid; wait $pid",
                 tu_frames_bin(), at("spin.frames"), at("spin"), at("err.txt"));
    free(out);
    assert_int_equal(st, 128 + 2); /* SIGINT, as the shell reports an interrupted command */
    out = (char *)tu_read_file(at("err.txt"), NULL);
    assert_non_null(strstr(out, "killed by signal 9"));
    free(out);
    r = open_trace(at("spin.frames"));
    while (next_std(r, &f)) n++;
    frames_reader_close(r);
    assert_true(n > 1000);
}

static int setup(void **state) {
    (void)state;
    return tu_workdir_make("frames-vg");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_probe_same_as_ptrace),
        cmocka_unit_test(test_probe2_same_as_ptrace),
        cmocka_unit_test(test_counts_vs_callgrind),
        cmocka_unit_test(test_threads),
        cmocka_unit_test(test_forks),
        cmocka_unit_test(test_crash_leaves_finished_trace),
        cmocka_unit_test(test_sampling_and_no_mem),
        cmocka_unit_test(test_interrupt_finishes_trace),
        cmocka_unit_test(test_compressed_output),
    };
    if (!tu_vg_tool_built()) {
        printf("test_record_vg: the valgrind tool was not built (needs the valgrind package): skipped\n");
        return 0;
    }
    return cmocka_run_group_tests(tests, setup, tu_workdir_teardown);
}

#else
TU_SKIPPED_MAIN("test_record_vg", TU_RECORD_NOT_BUILT)
#endif
