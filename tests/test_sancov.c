/* test_sancov: the fuzzing-harness tracer tools/sancov/frames_sancov.c, built into real
   programs by the compilers a user has:
   - a libFuzzer harness (clang -fsanitize=fuzzer,address + trace-pc-guard,trace-cmp, the
     wrap options) run on input files: one trace per input whose comparison operands are
     the values the harness compares for that input and whose pcs resolve (through the
     modload frame and nm) to the harness functions that ran, in call order;
   - crashes (a null write, an ASan heap overflow): the trace is finished and libFuzzer's
     own crash report and artifact still happen;
   - a plain gcc trace-pc program that forks (process mode, no wrap options);
   - a persistent loop delimiting inputs with frames_sancov.h.
   Programs are built once into a temporary directory (the repository root is the
   current directory, as under ./build.sh test). */
#include "frames.h"

#include <sys/stat.h>

#include "testutil.h"

#define dir tu_workdir   /* the suite's work directory (testutil.h) */

/* ---- building and running */

static void sh(const char *what, const char *fmt, ...) {
    char cmd[8192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    free(tu_run_ok(what, "cd '%s' && %s 2>&1", tu_root(), cmd)); /* sources are named from the root */
}

static int setup(void **state) {
    (void)state;
    return tu_workdir_make("frames-sancov");
}

/* ---- symbols of a binary: nm -S gives address and size of each function */

typedef struct sym {
    char name[64];
    uint64_t lo, hi;
} sym;

static sym syms[64];
static int nsyms;

static void load_symbols(const char *bin) {
    int st;
    char *out = tu_run(&st, "nm -S --defined-only '%s'", bin), *line, *save = NULL;
    assert_int_equal(st, 0);
    nsyms = 0;
    for (line = strtok_r(out, "\n", &save); line && nsyms < 64; line = strtok_r(NULL, "\n", &save)) {
        unsigned long long a, s;
        char type, name[256];
        if (sscanf(line, "%llx %llx %c %255s", &a, &s, &type, name) != 4) continue;
        if (type != 'T' && type != 't') continue;
        if (strcmp(name, "LLVMFuzzerTestOneInput") && strcmp(name, "check_magic") &&
            strcmp(name, "equal64") && strcmp(name, "classify") && strcmp(name, "crash_now") &&
            strcmp(name, "overflow_read") && strcmp(name, "parent_compare") &&
            strcmp(name, "child_compare") && strcmp(name, "check") && strcmp(name, "main"))
            continue;
        if (strlen(name) >= sizeof syms[0].name) continue;
        memcpy(syms[nsyms].name, name, strlen(name) + 1);
        syms[nsyms].lo = a;
        syms[nsyms++].hi = a + s;
    }
    free(out);
    assert_true(nsyms > 0);
}

static const char *symbol_at(uint64_t addr) {
    int i;
    for (i = 0; i < nsyms; i++)
        if (addr >= syms[i].lo && addr < syms[i].hi) return syms[i].name;
    return NULL;
}

/* ---- a trace in memory */

typedef struct op {
    char name[32];
    int32_t bits;
    uint64_t value;
} op;

typedef struct ev {
    uint64_t pc, tid;
    const char *fn;      /* function the pc resolves to, or NULL */
    int nops;
    op ops[80];
} ev;

typedef struct trace {
    int finished;
    uint64_t base;       /* low_address of the program's modload frame */
    uint8_t input[256];
    size_t input_len;
    int has_input;
    int nev;
    ev *evs;
} trace;

static uint64_t le_value(frames_bytes b) {
    uint64_t v = 0;
    size_t i;
    for (i = 0; i < b.len && i < 8; i++) v |= (uint64_t)b.ptr[i] << (8 * i);
    return v;
}

/* Read a trace; pcs are resolved against the symbols of program `bin`. */
static void load_trace(trace *t, const char *path, const char *bin) {
    frames_reader *r;
    frames_error err;
    frames_frame f;
    frames_reader_info st;
    char real[4096];
    int rc, have_base = 0, i;
    memset(t, 0, sizeof *t);
    assert_non_null(realpath(bin, real));
    if (frames_reader_open_path(&r, path, NULL, &err) < 0) fail_msg("%s: %s", path, err.message);
    while ((rc = frames_reader_next(r, &f)) > 0) {
        if (f.kind == FRAMES_KIND_MODLOAD && f.modload.module_name.len == strlen(real) &&
            !memcmp(f.modload.module_name.ptr, real, strlen(real))) {
            t->base = f.modload.low_address;
            have_base = 1;
        } else if (f.kind == FRAMES_KIND_TAINT_INTRO) {
            frames_bytes v = f.taint_intro.intros[0].value;
            assert_int_equal(f.taint_intro.count, 1);
            assert_true(v.len <= sizeof t->input);
            memcpy(t->input, v.ptr, v.len);
            t->input_len = v.len;
            t->has_input = 1;
        } else if (f.kind == FRAMES_KIND_STD) {
            ev *e;
            assert_true(have_base);   /* modload frames come first */
            t->evs = (ev *)realloc(t->evs, (size_t)(t->nev + 1) * sizeof *t->evs);
            e = &t->evs[t->nev++];
            memset(e, 0, sizeof *e);
            e->pc = f.std.address;
            e->tid = f.std.thread_id;
            e->fn = symbol_at(f.std.address - t->base);
            assert_int_equal(f.std.rawbytes.len, 0);
            assert_true(f.std.npre <= 80);
            for (i = 0; i < (int)f.std.npre; i++) {
                const frames_operand *o = &f.std.pre[i];
                assert_int_equal(o->spec, FRAMES_REG);
                assert_true(o->read);
                assert_true(o->name.len < sizeof e->ops[0].name);
                memcpy(e->ops[i].name, o->name.ptr, o->name.len);
                e->ops[i].bits = o->bit_length;
                assert_int_equal(o->value.len * 8, (size_t)o->bit_length);
                e->ops[i].value = le_value(o->value);
            }
            e->nops = (int)f.std.npre;
        }
    }
    assert_int_equal(rc, 0);
    assert_int_equal(frames_reader_info_get(r, &st), FRAMES_OK);
    t->finished = st.finished;
    frames_reader_close(r);
}

static void free_trace(trace *t) { free(t->evs); }

static int file_exists(const char *p) {
    struct stat st;
    return stat(p, &st) == 0;
}

/* The comparison events of function fn (events with operands). */
static int comparisons_in(const trace *t, const char *fn, const ev **out, int max) {
    int i, n = 0;
    for (i = 0; i < t->nev; i++)
        if (t->evs[i].nops && t->evs[i].fn && !strcmp(t->evs[i].fn, fn) && n < max) out[n++] = &t->evs[i];
    return n;
}

static int first_event_in(const trace *t, const char *fn) {
    int i;
    for (i = 0; i < t->nev; i++)
        if (t->evs[i].fn && !strcmp(t->evs[i].fn, fn)) return i;
    return -1;
}

static void assert_pair(const ev *e, const char *prefix, int bits, uint64_t a, uint64_t b) {
    char n1[32], n2[32];
    snprintf(n1, sizeof n1, "%s.arg1", prefix);
    snprintf(n2, sizeof n2, "%s.arg2", prefix);
    assert_int_equal(e->nops, 2);
    assert_string_equal(e->ops[0].name, n1);
    assert_string_equal(e->ops[1].name, n2);
    assert_int_equal(e->ops[0].bits, bits);
    assert_int_equal(e->ops[1].bits, bits);
    assert_int_equal(e->ops[0].value, a);
    assert_int_equal(e->ops[1].value, b);
}

/* ---- the libFuzzer harness */

static const char *harness_bin(void) {
    static char bin[700];
    snprintf(bin, sizeof bin, "%s/harness", dir);
    return bin;
}

static void build_dropin(void) {
    static int built;
    if (built) return;
    /* warning-free with both compilers, as users will compile it */
    sh("gcc drop-in", "gcc -std=c99 -O2 -Wall -Wextra -Wpedantic -Werror -I. -c "
                      "tools/sancov/frames_sancov.c -o '%s'", tu_workdir_path("fs_gcc.o"));
    sh("clang drop-in", "clang -std=c99 -O2 -Wall -Wextra -Wpedantic -Werror -I. -c "
                        "tools/sancov/frames_sancov.c -o '%s'", tu_workdir_path("fs_clang.o"));
    built = 1;
}

static void build_harness(void) {
    static int built;
    if (built) return;
    build_dropin();
    sh("libFuzzer harness",
       "clang -g -O1 -fPIE -pie -fsanitize=fuzzer,address "
       "-fsanitize-coverage=trace-pc-guard,trace-cmp tests/sancov/harness.c '%s' "
       "-Wl,@tools/sancov/frames_sancov.wrap -o '%s'",
       tu_workdir_path("fs_clang.o"), harness_bin());
    /* without ASan a crash reaches libFuzzer's signal handler, behind the tracer's */
    sh("libFuzzer harness without ASan",
       "clang -g -O1 -fPIE -pie -fsanitize=fuzzer -fsanitize-coverage=trace-pc-guard,trace-cmp "
       "tests/sancov/harness.c '%s' -Wl,@tools/sancov/frames_sancov.wrap -o '%s/harness_plain'",
       tu_workdir_path("fs_clang.o"), dir);
    built = 1;
}

static void write_input(const char *name, const char *data, size_t len) {
    assert_int_equal(tu_write_file(tu_workdir_path(name), data, len), 0);
}

#define IN_MAGIC "FRMSabcdefghabcdefghk"   /* magic, a == b, switch 'k' */
#define IN_OTHER "FRMXabcdefgh12345678z"   /* wrong magic, a != b, switch 'z' */
#define IN_SHORT "short"

static uint64_t le8(const char *s) {
    uint64_t v = 0;
    int i;
    for (i = 0; i < 8; i++) v |= (uint64_t)(uint8_t)s[i] << (8 * i);
    return v;
}

static void check_full_input(const trace *t, const char *in, int expect_magic) {
    const ev *c[8];
    int i, n, seen[3] = {0, 0, 0};
    uint64_t word = le8(in) & 0xffffffffu;
    assert_true(t->finished);
    assert_true(t->has_input);
    assert_int_equal(t->input_len, 21);
    assert_memory_equal(t->input, in, 21);
    /* every pc lies in the instrumented harness functions, one thread */
    for (i = 0; i < t->nev; i++) {
        if (!t->evs[i].fn) fail_msg("pc 0x%llx (offset 0x%llx) is in no harness function",
                                    (unsigned long long)t->evs[i].pc,
                                    (unsigned long long)(t->evs[i].pc - t->base));
        assert_int_equal(t->evs[i].tid, t->evs[0].tid);
    }
    assert_true(t->evs[0].tid != 0);
    assert_string_equal(t->evs[0].fn, "LLVMFuzzerTestOneInput");
    assert_int_equal(t->evs[0].nops, 0);  /* the entry edge */
    /* call order */
    assert_true(first_event_in(t, "check_magic") > 0);
    assert_true(first_event_in(t, "check_magic") < first_event_in(t, "equal64"));
    assert_true(first_event_in(t, "equal64") < first_event_in(t, "classify"));
    assert_int_equal(first_event_in(t, "crash_now"), -1);
    /* check_magic: the constant "FRMS" against the first word */
    assert_int_equal(comparisons_in(t, "check_magic", c, 8), 1);
    assert_pair(c[0], "const_cmp", 32, 0x534d5246u, word);
    assert_int_equal(word == 0x534d5246u, expect_magic);
    /* equal64: both operands from the input */
    assert_int_equal(comparisons_in(t, "equal64", c, 8), 1);
    assert_pair(c[0], "cmp", 64, le8(in + 4), le8(in + 12));
    /* classify: the switch value and its three cases */
    assert_int_equal(comparisons_in(t, "classify", c, 8), 1);
    assert_int_equal(c[0]->nops, 4);
    assert_string_equal(c[0]->ops[0].name, "switch.val");
    assert_int_equal(c[0]->ops[0].value, (uint8_t)in[20]);
    for (i = 1; i < 4; i++) {
        assert_string_equal(c[0]->ops[i].name, "switch.case");
        assert_int_equal(c[0]->ops[i].bits, c[0]->ops[0].bits);
        seen[0] |= c[0]->ops[i].value == 'a';
        seen[1] |= c[0]->ops[i].value == 'k';
        seen[2] |= c[0]->ops[i].value == 'z';
    }
    assert_true(seen[0] && seen[1] && seen[2]);
    /* LLVMFuzzerTestOneInput: size against 21 (64 bits), data[20] against '!' and '@' */
    n = comparisons_in(t, "LLVMFuzzerTestOneInput", c, 8);
    assert_int_equal(n, 3);
    assert_string_equal(c[0]->ops[0].name, "const_cmp.arg1");
    assert_int_equal(c[0]->ops[0].bits, 64);
    assert_int_equal(c[0]->ops[1].value, 21);
    assert_pair(c[1], "const_cmp", 8, '!', (uint8_t)in[20]);
    assert_pair(c[2], "const_cmp", 8, '@', (uint8_t)in[20]);
}

static void test_libfuzzer_inputs(void **state) {
    trace t;
    const ev *c[8];
    int st, i;
    char *out;
    (void)state;
    build_harness();
    load_symbols(harness_bin());
    write_input("in_magic", IN_MAGIC, 21);
    write_input("in_short", IN_SHORT, 5);
    write_input("in_other", IN_OTHER, 21);
    /* -detect_leaks=0: libFuzzer calls an input a second time when the allocation counts
       of its run differ (a leak check), and the thread libFuzzer starts for its RSS limit
       may allocate while the first input runs (about 1 run in 100 here): that second call
       gets a trace of its own, as every call does, and would shift the numbering */
    out = tu_run(&st, "cd '%s' && FRAMES_SANCOV_OUT='%s' ./harness -detect_leaks=0 in_magic in_short "
                      "in_other 2>&1", dir, tu_workdir_path("t-%n.frames"));
    if (st != 0) fail_msg("harness: %s", out);
    assert_null(strstr(out, "frames_sancov:"));   /* no warning */
    free(out);
    assert_false(file_exists(tu_workdir_path("t-3.frames")));

    load_trace(&t, tu_workdir_path("t-0.frames"), harness_bin());
    check_full_input(&t, IN_MAGIC, 1);
    free_trace(&t);

    load_trace(&t, tu_workdir_path("t-1.frames"), harness_bin());
    assert_true(t.finished);
    assert_int_equal(t.input_len, 5);
    for (i = 0; i < t.nev; i++) assert_string_equal(t.evs[i].fn, "LLVMFuzzerTestOneInput");
    assert_int_equal(comparisons_in(&t, "LLVMFuzzerTestOneInput", c, 8), 1);
    assert_int_equal(c[0]->ops[1].value, 5);   /* the size compared with 21 */
    free_trace(&t);

    load_trace(&t, tu_workdir_path("t-2.frames"), harness_bin());
    check_full_input(&t, IN_OTHER, 0);
    free_trace(&t);
}

/* A crash inside an input while fuzzing (the input is the seed corpus): the trace is
   finished before the sanitizer's and libFuzzer's handlers run, which still report and
   write the crash artifact. libFuzzer may run other inputs first: the crash's trace is
   the one that recorded the crashing input. */
static void check_crash(const char *bin, const char *input, const char *name,
                        const char *report, const char *last_fn) {
    trace t;
    int st, i, found = 0;
    char *out, path[1024], binpath[700];
    snprintf(binpath, sizeof binpath, "%s/%s", dir, bin);
    load_symbols(binpath);
    out = tu_run(&st, "cd '%s' && rm -rf crash-* '%s' '%s'.d && mkdir '%s'.d", dir, name, name, name);
    free(out);
    assert_int_equal(tu_write_file(tu_workdir_path(name), input, 21), 0);
    out = tu_run(&st, "cd '%s' && cp '%s' '%s'.d/ && FRAMES_SANCOV_OUT='%s.d/t-%%n.frames' ./%s "
                      "-artifact_prefix='%s/' -runs=10 %s.d 2>&1; ls '%s' | grep -c '^crash-'",
                 dir, name, name, name, bin, dir, name, dir);
    assert_non_null(strstr(out, report));
    assert_non_null(strstr(out, "Test unit written to"));
    assert_non_null(strstr(out, "\n1\n"));   /* one crash artifact */
    free(out);
    for (i = 0; i < 16; i++) {
        snprintf(path, sizeof path, "%s/%s.d/t-%d.frames", dir, name, i);
        if (!file_exists(path)) break;
        load_trace(&t, path, binpath);
        if (t.input_len == 21 && !memcmp(t.input, input, 21)) {
            found++;
            assert_true(t.finished);
            assert_true(t.nev > 0);
            assert_string_equal(t.evs[t.nev - 1].fn, last_fn);
        }
        free_trace(&t);
    }
    assert_int_equal(found, 1);
}

static void test_libfuzzer_crashes(void **state) {
    (void)state;
    build_harness();
    load_symbols(harness_bin());
    /* ASan reports call __asan_on_error, a signal or not */
    check_crash("harness", "FRMSabcdefghabcdefgh!", "segv", "AddressSanitizer: SEGV", "crash_now");
    check_crash("harness", "FRMSabcdefghabcdefgh@", "overflow",
                "AddressSanitizer: heap-buffer-overflow", "overflow_read");
    /* without ASan (clang still links its UBSan runtime, whose SEGV handler reports) only
       the tracer's SIGSEGV handler, in front of it, can finish the trace */
    check_crash("harness_plain", "FRMSabcdefghabcdefgh!", "segv_plain",
                "UndefinedBehaviorSanitizer: SEGV",
                "crash_now");
}

/* Without FRAMES_SANCOV_OUT nothing is written and the harness runs as usual. */
static void test_disabled(void **state) {
    int st;
    char *out;
    (void)state;
    build_harness();
    write_input("in_magic", IN_MAGIC, 21);
    out = tu_run(&st, "cd '%s' && mkdir -p off && cd off && env -u FRAMES_SANCOV_OUT ../harness "
                      "../in_magic >/dev/null 2>&1; echo rc=$?; ls | wc -l", dir);
    assert_string_equal(out, "rc=0\n0\n");
    free(out);
}

/* The traces a run of process_fork left in DIR/sub: the parent's and the forked child's,
   each with its own comparison only. Compressed ones (.frames.zst) are checked with the
   zstd binary and read after `zstd -d`. */
static void check_fork_traces(const char *sub, const char *bin, int compressed) {
    char *names, *name, *save = NULL, path[1024], *out;
    int st, nfiles = 0, parents = 0, children = 0;
    trace t;
    const ev *c[8];
    names = tu_run(&st, "ls '%s/%s'", dir, sub);
    for (name = strtok_r(names, "\n", &save); name; name = strtok_r(NULL, "\n", &save)) {
        nfiles++;
        assert_int_equal(strncmp(name, "p-", 2), 0);
        assert_non_null(strstr(name, compressed ? "-0.frames.zst" : "-0.frames"));
        assert_int_equal(strlen(strstr(name, "-0.frames")), compressed ? 13 : 9);
        snprintf(path, sizeof path, "%s/%s/%s", dir, sub, name);
        if (compressed) {
            out = tu_run(&st, "zstd -q -t '%s' && zstd -q -d -f '%s' -o '%s.plain'", path, path, path);
            assert_int_equal(st, 0);
            free(out);
            strcat(path, ".plain");
        }
        load_trace(&t, path, bin);
        assert_true(t.finished);
        assert_false(t.has_input);   /* no input in process mode */
        if (first_event_in(&t, "parent_compare") >= 0) {
            parents++;
            assert_int_equal(first_event_in(&t, "child_compare"), -1);
            assert_string_equal(t.evs[0].fn, "main");
            assert_int_equal(comparisons_in(&t, "parent_compare", c, 8), 1);
            assert_pair(c[0], "cmp", 64, 0x1000, 0x2111);
        } else {
            children++;   /* starts after the fork: main's rest and child_compare */
            assert_int_equal(comparisons_in(&t, "child_compare", c, 8), 1);
            assert_pair(c[0], "cmp", 32, 0x1007, 0x1009);
        }
        free_trace(&t);
        if (compressed) unlink(path);
    }
    free(names);
    assert_int_equal(nfiles, 2);
    assert_int_equal(parents, 1);
    assert_int_equal(children, 1);
}

/* Build process_fork.c with the drop-in object `obj` (and `libs`) into `name`, run it with
   FRAMES_SANCOV_OUT='SUB/p-%p-%n.frames[.zst]' and check the two traces it leaves. */
static void run_process_fork(const char *obj, const char *libs, const char *name, const char *sub,
                             int compressed) {
    char *out;
    int st;
    char bin[700];
    snprintf(bin, sizeof bin, "%s", tu_workdir_path(name));
    sh("gcc trace-pc program", "gcc -O1 -fPIE -pie -fsanitize-coverage=trace-pc,trace-cmp "
                               "tests/sancov/process_fork.c '%s' -o '%s' %s", obj, bin, libs);
    load_symbols(bin);
    out = tu_run(&st, "cd '%s' && mkdir -p %s && FRAMES_SANCOV_OUT='%s/p-%%p-%%n.frames%s' "
                      "'%s' 0x1000 2>&1", dir, sub, sub, compressed ? ".zst" : "", bin);
    assert_int_equal(st, 0);
    assert_string_equal(out, "");
    free(out);
    check_fork_traces(sub, bin, compressed);
}

/* gcc, trace-pc, no fuzzer runtime, no wrap options: one trace per process; the forked
   child has its own trace with its own comparison only. */
static void test_process_mode_fork(void **state) {
    (void)state;
    build_dropin();
    run_process_fork(tu_workdir_path("fs_gcc.o"), "", "process_fork", "fork", 0);
}

/* The same with FRAMES_SANCOV_OUT ending in .zst and the tracer built with
   -DFRAMES_SANCOV_ZSTD: each process leaves only its compressed trace. */
static void test_process_mode_compressed(void **state) {
    (void)state;
    sh("gcc drop-in with zstd", "gcc -std=c99 -O2 -Wall -Wextra -Wpedantic -Werror -I. "
                                "-DFRAMES_SANCOV_ZSTD -c tools/sancov/frames_sancov.c -o '%s'",
       tu_workdir_path("fs_gcc_zstd.o"));
    run_process_fork(tu_workdir_path("fs_gcc_zstd.o"), "-lzstd", "process_fork_zst", "forkz", 1);
}

static void check_loop_trace(const char *path, const char *bin, uint32_t value, int is_input) {
    trace t;
    const ev *c[8];
    load_trace(&t, path, bin);
    assert_true(t.finished);
    assert_int_equal(t.has_input, is_input);
    if (is_input) {
        assert_int_equal(t.input_len, 4);
        assert_memory_equal(t.input, &value, 4);
    }
    assert_int_equal(comparisons_in(&t, "check", c, 8), 1);
    assert_pair(c[0], "const_cmp", 32, 0xdeadbeefu, value);
    free_trace(&t);
}

/* Inputs delimited by frames_sancov_begin_input/end_input: with FRAMES_SANCOV_MODE=input
   trace i is input i; by default the start-up work gets trace 0 and inputs follow. */
static void test_persistent_loop(void **state) {
    char bin[700], path[1024];
    char *out;
    int st, i;
    (void)state;
    snprintf(bin, sizeof bin, "%s", tu_workdir_path("loop"));
    build_dropin();
    /* clang links its own coverage runtime (weak hooks): the wrap options are needed */
    sh("persistent loop", "clang -O1 -fsanitize-coverage=trace-pc-guard,trace-cmp -Itools/sancov "
                          "tests/sancov/persistent_loop.c '%s' -Wl,@tools/sancov/frames_sancov.wrap "
                          "-o '%s'", tu_workdir_path("fs_clang.o"), bin);
    load_symbols(bin);
    out = tu_run(&st, "FRAMES_SANCOV_MODE=input FRAMES_SANCOV_OUT='%s' '%s' 2>&1", tu_workdir_path("l-%n.frames"), bin);
    assert_int_equal(st, 0);
    assert_string_equal(out, "");
    free(out);
    for (i = 0; i < 3; i++) {
        snprintf(path, sizeof path, "%s/l-%d.frames", dir, i);
        check_loop_trace(path, bin, (uint32_t)(i + 1) * 0x10101u, 1);
    }
    assert_false(file_exists(tu_workdir_path("l-3.frames")));

    out = tu_run(&st, "FRAMES_SANCOV_OUT='%s/' '%s' 2>&1", tu_workdir_path("loopdir"), bin);
    free(out);   /* a pattern ending in / is a directory that must exist: nothing written */
    assert_false(file_exists(tu_workdir_path("loopdir")));
    mkdir(tu_workdir_path("loopdir"), 0755);
    out = tu_run(&st, "FRAMES_SANCOV_OUT='%s' '%s' 2>&1", tu_workdir_path("loopdir"), bin);
    assert_int_equal(st, 0);
    free(out);
    out = tu_run(&st, "ls '%s' | sed 's/sancov-[0-9]*-/sancov-PID-/'", tu_workdir_path("loopdir"));
    assert_string_equal(out, "sancov-PID-0.frames\nsancov-PID-1.frames\nsancov-PID-2.frames\n"
                             "sancov-PID-3.frames\n");
    free(out);
    out = tu_run(&st, "ls '%s'/sancov-*-0.frames", tu_workdir_path("loopdir"));
    out[strcspn(out, "\n")] = 0;
    check_loop_trace(out, bin, 1, 0);   /* start-up: check(1), no input */
    free(out);
    out = tu_run(&st, "ls '%s'/sancov-*-3.frames", tu_workdir_path("loopdir"));
    out[strcspn(out, "\n")] = 0;
    check_loop_trace(out, bin, 3 * 0x10101u, 1);
    free(out);
    /* without %n each trace replaces the one before, through a part file renamed when
       finished: the last input's trace is there, whole, and no part file stays */
    out = tu_run(&st, "cd '%s' && FRAMES_SANCOV_MODE=input FRAMES_SANCOV_OUT=one.frames '%s' 2>&1 && ls one.frames*",
                 tu_workdir_path("loopdir"), bin);
    assert_int_equal(st, 0);
    assert_string_equal(out, "one.frames\n");
    free(out);
    snprintf(path, sizeof path, "%s/one.frames", tu_workdir_path("loopdir"));
    check_loop_trace(path, bin, 3 * 0x10101u, 1);
    /* a device is written, never renamed over (as root a rename would replace it) */
    out = tu_run(&st, "FRAMES_SANCOV_OUT=/dev/null '%s' 2>&1 && test -c /dev/null && echo device", bin);
    assert_int_equal(st, 0);
    assert_string_equal(out, "device\n");
    free(out);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_libfuzzer_inputs),
        cmocka_unit_test(test_libfuzzer_crashes),
        cmocka_unit_test(test_disabled),
        cmocka_unit_test(test_process_mode_fork),
        cmocka_unit_test(test_process_mode_compressed),
        cmocka_unit_test(test_persistent_loop),
    };
    return cmocka_run_group_tests(tests, setup, tu_workdir_teardown);
}
