/* test_record_state.c - `frames record` writes the whole initial state: with both engines
   (ptrace, and Valgrind when its tool is built), on a program with threads, a signal
   handler and arch_prctl, whole and sampled (--sample), every GPR, RFLAGS, FS_BASE and
   GS_BASE is known in the replay model (frames_replay.h's register model) before every
   instruction of every thread; the values at the first instruction are gdb's (`starti`
   on the same program, a static one: the same registers at its entry, but for the stack
   pointer, which depends on the environment and, under Valgrind, is Valgrind's). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdint.h>
#include <unistd.h>

#include "frames.h"
#include "frames_replay.h"
#include "testutil.h"

#ifdef TU_RECORD_BUILT

#define at tu_workdir_path

/* The registers every instruction must know, as the replay model names them. */
static const char *const state_regs[] = {"rax", "rbx", "rcx", "rdx", "rsi", "rdi", "rbp", "rsp", "r8", "r9",
                                         "r10", "r11", "r12", "r13", "r14", "r15", "eflags", "fs_base", "gs_base"};
#define NSTATE (sizeof state_regs / sizeof state_regs[0])

/* Threads, a handler run by a signal each thread sends itself, a new FS base. */
static const char prog_src[] =
    "#include <pthread.h>\n"
    "#include <signal.h>\n"
    "#include <asm/prctl.h>\n"
    "#include <sys/syscall.h>\n"
    "#include <unistd.h>\n"
    "static volatile long hits;\n"
    "static void on_usr1(int s) { hits += s; }\n"
    "static void *work(void *p) { long i, s = 0; for (i = 0; i < 200; i++) s += i * (long)p;\n"
    "    pthread_kill(pthread_self(), SIGUSR1); return (void *)s; }\n"
    "int main(void) {\n"
    "    pthread_t t[2]; unsigned long gs = 0; long i;\n"
    "    signal(SIGUSR1, on_usr1);\n"
    "    for (i = 0; i < 2; i++) pthread_create(&t[i], 0, work, (void *)(i + 1));\n"
    "    for (i = 0; i < 2; i++) pthread_join(t[i], 0);\n"
    "    raise(SIGUSR1);\n"
    "    syscall(SYS_arch_prctl, ARCH_GET_GS, &gs);\n"
    "    return hits == 3 * SIGUSR1 ? 0 : 1;\n"
    "}\n";

static void build_prog(void) {
    int st;
    char *out;
    assert_int_equal(tu_write_file(at("prog.c"), prog_src, strlen(prog_src)), 0);
    out = tu_run(&st, "cc -O1 -static -pthread -o '%s' '%s' 2>&1", at("prog"), at("prog.c"));
    if (st) fprintf(stderr, "%s", out);
    assert_int_equal(st, 0);
    free(out);
}

static void record(const char *engine, const char *opts, const char *trace) {
    int st;
    char *out = tu_run(&st, "ulimit -c 0; LC_ALL=C '%s' record -f --engine %s %s --quiet -o '%s' -- '%s' 2>&1",
                       tu_frames_bin(), engine, opts, trace, at("prog"));
    if (st) fprintf(stderr, "%s", out);
    assert_int_equal(st, 0);
    free(out);
}

/* Before every instruction (the model after the earlier frames and its own pre list)
   every register of state_regs is known. Returns how many threads the trace has. */
static size_t every_register_known(const char *trace, uint64_t *exceptions) {
    frames_reader *r;
    frames_replay_regs *m;
    frames_reader_info info;
    frames_error err;
    frames_frame f, pre;
    uint64_t tids[64], insns = 0;
    size_t ntids = 0, i, k;
    assert_int_equal(frames_reader_open_path(&r, trace, NULL, &err), 0);
    assert_int_equal(frames_reader_info_get(r, &info), 0);
    assert_int_equal(frames_replay_regs_open(&m, (uint32_t)info.header.arch, info.header.machine, 64, NULL, &err), 0);
    *exceptions = 0;
    while (frames_reader_next(r, &f) > 0) {
        if (f.kind == FRAMES_KIND_EXCEPTION) ++*exceptions;
        if (f.kind != FRAMES_KIND_STD) continue;
        pre = f;
        pre.std.npost = 0;
        assert_int_equal(frames_replay_regs_apply_frame(m, &pre), 0);
        for (k = 0; k < NSTATE; k++) {
            uint8_t v[8];
            size_t n;
            if (frames_replay_regs_get(m, f.std.thread_id, state_regs[k], v, sizeof v, &n) != 1)
                fail_msg("%s: instruction %llu (0x%llx, thread %llu): %s unknown", trace, (unsigned long long)insns,
                         (unsigned long long)f.std.address, (unsigned long long)f.std.thread_id, state_regs[k]);
        }
        assert_int_equal(frames_replay_regs_apply_frame(m, &f), 0);
        for (i = 0; i < ntids && tids[i] != f.std.thread_id; i++) {}
        if (i == ntids && ntids < 64) tids[ntids++] = f.std.thread_id;
        insns++;
    }
    assert_true(insns > 1000);
    frames_replay_regs_close(m);
    frames_reader_close(r);
    return ntids;
}

static void engine_knows_every_register(const char *engine) {
    char whole[512], sampled[512];
    uint64_t exceptions;
    snprintf(whole, sizeof whole, "%s", at("whole.frames"));
    snprintf(sampled, sizeof sampled, "%s", at("sampled.frames"));
    record(engine, "", whole);
    assert_int_equal(every_register_known(whole, &exceptions), 3);
    assert_int_equal(exceptions, 3); /* SIGUSR1 to each thread */
    record(engine, "--sample 50:450", sampled);
    assert_true(every_register_known(sampled, &exceptions) >= 1);
}

static void test_ptrace_every_register_known(void **state) {
    (void)state;
    engine_knows_every_register("ptrace");
}

static void test_valgrind_every_register_known(void **state) {
    (void)state;
    if (!tu_vg_tool_built()) skip();
    engine_knows_every_register("valgrind");
}

/* gdb's registers at the program's first instruction: name, value (hex). */
static int gdb_register(const char *gdb_out, const char *name, uint64_t *v) {
    const char *p = gdb_out;
    size_t n = strlen(name);
    while ((p = strstr(p, name)) != NULL) {
        if ((p == gdb_out || p[-1] == '\n') && (p[n] == ' ' || p[n] == '\t')) {
            unsigned long long x;
            if (sscanf(p + n, " %llx", &x) == 1) {
                *v = x;
                return 1;
            }
        }
        p += n;
    }
    return 0;
}

static void first_instruction_as_gdb(const char *engine) {
    char *gdb;
    int st;
    frames_reader *r;
    frames_replay_regs *m;
    frames_reader_info info;
    frames_error err;
    frames_frame f;
    size_t k;
    char names[256] = "";
    for (k = 0; k < NSTATE; k++) { /* fs_base and gs_base only when named */
        strcat(names, " ");
        strcat(names, state_regs[k]);
    }
    gdb = tu_run(&st, "gdb -nx -batch -ex starti -ex 'info registers%s' '%s' 2>&1", names, at("prog"));
    assert_int_equal(st, 0);
    record(engine, "", at("first.frames"));
    assert_int_equal(frames_reader_open_path(&r, at("first.frames"), NULL, &err), 0);
    assert_int_equal(frames_reader_info_get(r, &info), 0);
    assert_int_equal(frames_replay_regs_open(&m, (uint32_t)info.header.arch, info.header.machine, 4, NULL, &err), 0);
    while (frames_reader_next(r, &f) > 0 && f.kind != FRAMES_KIND_STD) {}
    assert_int_equal(f.kind, FRAMES_KIND_STD);
    f.std.npost = 0;
    assert_int_equal(frames_replay_regs_apply_frame(m, &f), 0);
    for (k = 0; k < NSTATE; k++) {
        uint64_t live = 0, traced = 0;
        uint8_t v[8];
        size_t n, b;
        if (!strcmp(state_regs[k], "rsp")) continue;
        if (!gdb_register(gdb, state_regs[k], &live)) fail_msg("gdb shows no %s:\n%s", state_regs[k], gdb);
        assert_int_equal(frames_replay_regs_get(m, f.std.thread_id, state_regs[k], v, sizeof v, &n), 1);
        for (b = n; b-- > 0;) traced = traced << 8 | v[b];
        if (!strcmp(state_regs[k], "eflags")) traced &= ~(uint64_t)2, live &= ~(uint64_t)2; /* bit 1: always 1 */
        if (traced != live)
            fail_msg("%s: %s is 0x%llx in the trace, 0x%llx in gdb", engine, state_regs[k],
                     (unsigned long long)traced, (unsigned long long)live);
    }
    frames_replay_regs_close(m);
    frames_reader_close(r);
    free(gdb);
}

static void test_ptrace_first_instruction_as_gdb(void **state) {
    (void)state;
    first_instruction_as_gdb("ptrace");
}

static void test_valgrind_first_instruction_as_gdb(void **state) {
    (void)state;
    if (!tu_vg_tool_built()) skip();
    first_instruction_as_gdb("valgrind");
}

static int setup(void **state) {
    (void)state;
    if (tu_workdir_make("frames-recstate") < 0) return -1;
    build_prog();
    return 0;
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ptrace_every_register_known),
        cmocka_unit_test(test_valgrind_every_register_known),
        cmocka_unit_test(test_ptrace_first_instruction_as_gdb),
        cmocka_unit_test(test_valgrind_first_instruction_as_gdb),
    };
    return cmocka_run_group_tests(tests, setup, tu_workdir_teardown);
}

#else
TU_SKIPPED_MAIN("test_record_state", TU_RECORD_NOT_BUILT)
#endif
