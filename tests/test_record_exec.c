/* test_record_exec.c - `frames record` must not change the program it records: programs
   that start other programs (fork+exec, vfork+exec, system(), posix_spawn, exec of the
   main process) print the same and exit the same under both engines, with and without
   --follow-forks, as when run natively; both engines record the same signals. */
#include "testutil.h" /* frames.h, stdint.h, unistd.h; build.sh defines _GNU_SOURCE */

#ifdef TU_RECORD_BUILT

#define dir tu_workdir
#define at tu_workdir_path

static const char spawner_src[] =
    "#include <spawn.h>\n"
    "#include <stdio.h>\n"
    "#include <stdlib.h>\n"
    "#include <string.h>\n"
    "#include <sys/wait.h>\n"
    "#include <unistd.h>\n"
    "extern char **environ;\n"
    "int main(int argc, char **argv) {\n"
    "    int st = -1;\n"
    "    pid_t p;\n"
    "    char *av[] = {\"/bin/echo\", \"child says\", argv[1], NULL};\n"
    "    setvbuf(stdout, NULL, _IONBF, 0);\n"
    "    if (argc < 2) return 2;\n"
    "    if (!strcmp(argv[1], \"system\")) st = system(\"echo shell says hi; exit 3\");\n"
    "    else if (!strcmp(argv[1], \"fork\")) {\n"
    "        if (!(p = fork())) { execv(av[0], av); _exit(9); }\n"
    "        waitpid(p, &st, 0);\n"
    "    } else if (!strcmp(argv[1], \"vfork\")) {\n"
    "        if (!(p = vfork())) { execv(av[0], av); _exit(9); }\n"
    "        waitpid(p, &st, 0);\n"
    "    } else if (!strcmp(argv[1], \"spawn\")) {\n"
    "        if (posix_spawn(&p, av[0], NULL, NULL, av, environ) == 0) waitpid(p, &st, 0);\n"
    "    } else if (!strcmp(argv[1], \"exec\")) {\n"
    "        execv(av[0], av);\n"
    "        return 9;\n"
    "    }\n"
    "    printf(\"%s returned %d\\n\", argv[1], st);\n"
    "    return 5;\n"
    "}\n";

/* Five children (SIGCHLD, ignored by default) and one SIGUSR1 to a handler. */
static const char signals_src[] =
    "#include <signal.h>\n"
    "#include <sys/wait.h>\n"
    "#include <unistd.h>\n"
    "static volatile int got;\n"
    "static void on_usr1(int s) { got = s; }\n"
    "int main(void) {\n"
    "    int i;\n"
    "    signal(SIGUSR1, on_usr1);\n"
    "    for (i = 0; i < 5; i++) {\n"
    "        pid_t p = fork();\n"
    "        if (p == 0) _exit(0);\n"
    "        waitpid(p, 0, 0);\n"
    "    }\n"
    "    raise(SIGUSR1);\n"
    "    return got == SIGUSR1 ? 0 : 1;\n"
    "}\n";

static void compile(const char *name, const char *src) {
    char file[64];
    snprintf(file, sizeof file, "%s.c", name);
    assert_int_equal(tu_write_file(at(file), src, strlen(src)), 0);
    free(tu_run_ok("cc", "cc -O1 -o %s/%s %s 2>&1", dir, name, at(file)));
}

static const char *const engines[] = {"valgrind", "ptrace"};

static int engine_here(const char *engine) { return strcmp(engine, "valgrind") || tu_vg_tool_built(); }

/* The program's stdout (to a file, as under the recorder) and exit status, natively. */
static char *native(const char *cmd, int *status) {
    free(tu_run(status, "cd %s && %s >%s/native.txt 2>/dev/null", dir, cmd, dir));
    return (char *)tu_read_file(at("native.txt"), NULL);
}

/* The same under frames record; *status: frames record's own. */
static char *recorded(const char *engine, const char *opts, const char *cmd, int *status, char **err) {
    free(tu_run(status, "cd %s && ulimit -c 0; LC_ALL=C %s record -f --engine %s %s -o %s/t.frames -- %s >%s/rec.txt "
                        "2>%s/err.txt",
                dir, tu_frames_bin(), engine, opts, dir, cmd, dir, dir));
    *err = (char *)tu_read_file(at("err.txt"), NULL);
    return (char *)tu_read_file(at("rec.txt"), NULL);
}

static void same_as_native(const char *mode) {
    static const char *const follow[] = {"", "--follow-forks"};
    char cmd[600];
    int nst, rst;
    size_t e, f;
    char *want;
    snprintf(cmd, sizeof cmd, "%s/spawner %s", dir, mode);
    want = native(cmd, &nst);
    assert_int_equal(nst, !strcmp(mode, "exec") ? 0 : 5);
    for (e = 0; e < 2; e++) {
        if (!engine_here(engines[e])) continue;
        for (f = 0; f < 2; f++) {
            char *err, *got = recorded(engines[e], follow[f], cmd, &rst, &err), line[64];
            snprintf(line, sizeof line, "exited with status %d\n", nst);
            if (strcmp(got, want) || !strstr(err, line) || rst != nst)
                fprintf(stderr, "%s, engine %s %s: stdout\n%s\nnative\n%s\nstderr\n%s\nstatus %d, native %d\n",
                        mode, engines[e], follow[f], got, want, err, rst, nst);
            assert_string_equal(got, want);
            assert_non_null(strstr(err, line));
            assert_null(strstr(err, "valgrind:")); /* no report of Valgrind's own */
            assert_int_equal(rst, nst);                /* frames record exits as the program did */
            free(got);
            free(err);
        }
    }
    free(want);
}

static void test_fork_exec(void **state) { (void)state; same_as_native("fork"); }
static void test_vfork_exec(void **state) { (void)state; same_as_native("vfork"); }
static void test_system(void **state) { (void)state; same_as_native("system"); }
static void test_posix_spawn(void **state) { (void)state; same_as_native("spawn"); }
static void test_exec_main(void **state) { (void)state; same_as_native("exec"); }

/* The signal numbers of the exception frames of a trace (up to cap); how many. */
static size_t exceptions(const char *path, uint64_t *sigs, size_t cap) {
    frames_reader *r;
    frames_frame f;
    frames_error err;
    size_t n = 0;
    assert_int_equal(frames_reader_open_path(&r, path, NULL, &err), 0);
    while (frames_reader_next(r, &f) > 0)
        if (f.kind == FRAMES_KIND_EXCEPTION && n < cap) sigs[n++] = f.exception.number;
    frames_reader_close(r);
    return n;
}

/* SIGCHLD, which the program leaves at its default (ignore), is not an exception in
   either engine; the SIGUSR1 its handler takes is, once, in both. */
static void test_engines_record_the_same_signals(void **state) {
    size_t e;
    (void)state;
    for (e = 0; e < 2; e++) {
        uint64_t sigs[16];
        int st;
        char *err, *out;
        if (!engine_here(engines[e])) continue;
        out = recorded(engines[e], "", at("signals"), &st, &err);
        assert_int_equal(st, 0);
        assert_non_null(strstr(err, "exited with status 0"));
        assert_int_equal(exceptions(at("t.frames"), sigs, 16), 1);
        assert_int_equal(sigs[0], 10 /* SIGUSR1 */);
        free(out);
        free(err);
    }
}

/* frames record's own output and status for a command line (stdout and stderr together). */
static char *record_args(const char *args, int *status) {
    return tu_run(status, "cd %s && LC_ALL=C %s record %s 2>&1", dir, tu_frames_bin(), args);
}

static void expect(const char *args, int want_status, const char *want_text) {
    int st;
    char *out = record_args(args, &st);
    if (st != want_status || !strstr(out, want_text))
        fprintf(stderr, "record %s: status %d, output\n%s\n", args, st, out);
    assert_int_equal(st, want_status);
    assert_non_null(strstr(out, want_text));
    free(out);
}

/* Mistakes on the command line: each says what is wrong, before anything runs. */
static void test_command_line_mistakes(void **state) {
    (void)state;
    expect("-o", 2, "frames record: option '-o' needs a value");
    expect("--engine", 2, "frames record: option '--engine' needs a value");
    expect("-- /etc/passwd", 126, "frames record: /etc/passwd: not an executable file");
    expect("-- /nonexistent/program", 127, "frames record: /nonexistent/program: program not found");
    expect("--probe -- /bin/true", 2, "frames record: --probe is used alone");
    expect("--zstd -o z.frames -- /bin/true", 2, "z.frames does not end in .zst");
    assert_int_equal(access(at("z.frames"), F_OK), -1); /* nothing written */
}

/* A program no engine can run: an error and 126 with every engine, never a trace. */
static void test_programs_no_engine_can_run(void **state) {
    static const char *const engine_opts[] = {"", "--engine valgrind ", "--engine ptrace "};
    uint8_t elf[64] = {0x7f, 'E', 'L', 'F', 2, 1, 1};
    char args[700];
    size_t e;
    (void)state;
    elf[16] = 2;   /* ET_EXEC */
    elf[18] = 183; /* EM_AARCH64 */
    elf[20] = 1;   /* EV_CURRENT */
    assert_int_equal(tu_write_file(at("arm64"), elf, sizeof elf), 0);
    assert_int_equal(tu_write_file(at("plain"), "hello\n", 6), 0);
    assert_int_equal(tu_write_file(at("script"), "#!/nonexistent/interp\n", 22), 0);
    free(tu_run_ok("chmod", "chmod +x %s/arm64 %s/plain %s/script", dir, dir, dir));
    for (e = 0; e < 3; e++) {
        if (e == 1 && !tu_vg_tool_built()) continue;
        snprintf(args, sizeof args, "%s-o %s -- %s", engine_opts[e], at("x.frames"), at("arm64"));
        expect(args, 126, "an ELF for AArch64, not x86-64: no engine here can run it");
        snprintf(args, sizeof args, "%s-o %s -- %s", engine_opts[e], at("x.frames"), at("plain"));
        expect(args, 126, "neither an ELF executable nor a script");
        snprintf(args, sizeof args, "%s-o %s -- %s", engine_opts[e], at("x.frames"), at("script"));
        expect(args, 126, "its interpreter /nonexistent/interp cannot be run");
        assert_int_equal(access(at("x.frames"), F_OK), -1);
    }
}

/* A crashing program: Valgrind's report goes to a file the message names, not amid
   the program's output; the status is the shell's for the signal. */
static void test_crash_report_in_a_file(void **state) {
    static const char crash_src[] = "int main(void) { *(volatile int *)8 = 1; return 0; }\n";
    int st;
    char *err, *out, *log;
    (void)state;
    if (!tu_vg_tool_built()) return;
    compile("crash", crash_src);
    out = recorded("valgrind", "", at("crash"), &st, &err);
    assert_int_equal(st, 128 + 11);
    assert_null(strstr(err, "=="));
    assert_non_null(strstr(err, "Valgrind's report is in"));
    log = (char *)tu_read_file(at("t.frames.valgrind.log"), NULL);
    assert_non_null(log);
    assert_non_null(strstr(log, "SIGSEGV"));
    free(log);
    free(out);
    free(err);
    assert_int_equal(unlink(at("t.frames.valgrind.log")), 0);
}

static int setup(void **state) {
    (void)state;
    if (tu_workdir_make("frames-recexec")) return -1;
    compile("spawner", spawner_src);
    compile("signals", signals_src);
    return 0;
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fork_exec),
        cmocka_unit_test(test_vfork_exec),
        cmocka_unit_test(test_system),
        cmocka_unit_test(test_posix_spawn),
        cmocka_unit_test(test_exec_main),
        cmocka_unit_test(test_engines_record_the_same_signals),
        cmocka_unit_test(test_command_line_mistakes),
        cmocka_unit_test(test_programs_no_engine_can_run),
        cmocka_unit_test(test_crash_report_in_a_file),
    };
    return cmocka_run_group_tests(tests, setup, tu_workdir_teardown);
}

#else
TU_SKIPPED_MAIN("test_record_exec", TU_RECORD_NOT_BUILT)
#endif
