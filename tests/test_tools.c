/* test_tools: the base subcommands as a user meets them: help, exit codes, errors on
   stderr, standard input and output, truncated and damaged inputs, info's verdicts in
   text and JSON, and fix in place and to another file. */
#include "frames.h"

#include <sys/stat.h>

#include "testutil.h"

#define VEC(name) tu_shared("vectors/frames/" name ".frames")

static char *run(int *st, const char *fmt, const char *a, const char *b) {
    char cmd[8192];
    snprintf(cmd, sizeof cmd, fmt, a, b);
    return tu_run(st, "%s", cmd);
}

static void test_help_and_usage_errors(void **state) {
    static const char *const cmds[] = {"dump", "cat", "info", "fix"};
    size_t i;
    int st;
    char *out;
    (void)state;
    out = tu_run(&st, "'%s' --help", tu_frames_bin());
    assert_int_equal(st, 0);
    assert_non_null(strstr(out, "usage: frames COMMAND"));
    free(out);
    for (i = 0; i < 4; i++) {
        out = tu_run(&st, "'%s' '%s' --help", tu_frames_bin(), cmds[i]);
        assert_int_equal(st, 0);
        assert_non_null(strstr(out, "usage: frames"));
        free(out);
        out = tu_run(&st, "'%s' '%s' --no-such-option x 2>&1", tu_frames_bin(), cmds[i]);
        assert_int_equal(st, 2);
        assert_non_null(strstr(out, "unknown option"));
        free(out);
    }
    out = tu_run(&st, "'%s' frobnicate 2>&1", tu_frames_bin());
    assert_int_equal(st, 2);
    free(out);
    out = tu_run(&st, "'%s' dump /no/such/file 2>&1", tu_frames_bin());
    assert_int_equal(st, 1);
    assert_non_null(strstr(out, "/no/such/file"));
    free(out);
}

static void test_dump_reads_standard_input(void **state) {
    int st1, st2;
    char *a, *b;
    (void)state;
    a = run(&st1, "'%s' dump --pbtext '%s'", tu_frames_bin(), VEC("r05_toc_m4_n10_mips"));
    b = run(&st2, "'%s' dump --pbtext - < '%s'", tu_frames_bin(), VEC("r05_toc_m4_n10_mips"));
    assert_int_equal(st1, 0);
    assert_int_equal(st2, 0);
    assert_string_equal(a, b);
    free(a);
    free(b);
    a = run(&st1, "cat '%s' | '%s' dump --json - | wc -l", VEC("r05_toc_m4_n10_mips"), tu_frames_bin());
    assert_int_equal(st1, 0);
    assert_int_equal(atoi(a), 11); /* the meta and 10 frames */
    free(a);
}

/* A copy of a vector cut to `keep` bytes. */
static const char *truncated_copy(const char *src, size_t keep) {
    const char *tmp = tu_tmp_path(".frames");
    size_t n;
    unsigned char *b = tu_read_file(src, &n);
    assert_non_null(b);
    assert_true(keep <= n);
    assert_int_equal(tu_write_file(tmp, b, keep), 0);
    free(b);
    return tmp;
}

static void test_truncated_input_is_a_warning(void **state) {
    /* r05 cut 10 bytes into frame 6 (at 0x2b4 in its dump) */
    const char *tmp = truncated_copy(VEC("r05_toc_m4_n10_mips"), 0x2b4 + 10);
    char *out, errfile[600];
    unsigned char *err;
    int st;
    (void)state;
    snprintf(errfile, sizeof errfile, "%s.err", tmp);
    {
        char cmd[2048];
        snprintf(cmd, sizeof cmd, "%s dump --pc '%s' 2>'%s' | wc -l", tu_frames_bin(), tmp, errfile);
        out = tu_run(&st, "%s", cmd);
    }
    assert_int_equal(atoi(out), 6);
    free(out);
    err = tu_read_file(errfile, NULL);
    assert_non_null(err);
    assert_non_null(strstr((char *)err, "truncated"));
    assert_non_null(strstr((char *)err, "0x2b4"));
    free(err);
    out = run(&st, "'%s' dump --pc '%s' >/dev/null 2>&1; echo $?", tu_frames_bin(), tmp);
    assert_int_equal(atoi(out), 0);
    free(out);
    unlink(errfile);
    unlink(tmp);
}

static void test_undecodable_frame_exit_1_others_printed(void **state) {
    /* r05 with frame 3's first payload byte (a tag) made invalid (wire type 7) */
    const char *tmp = tu_tmp_path(".frames");
    size_t n;
    unsigned char *b = tu_read_file(VEC("r05_toc_m4_n10_mips"), &n);
    char *out;
    int st;
    (void)state;
    /* frame 3's size prefix is at 0x1c4 in the dump: payload starts 8 bytes later */
    b[0x1c4 + 8] = 0x0f;
    assert_int_equal(tu_write_file(tmp, b, n), 0);
    free(b);
    out = run(&st, "'%s' dump --pc '%s' 2>/dev/null", tu_frames_bin(), tmp);
    assert_int_equal(st, 1);
    {
        int lines = 0;
        char *p;
        for (p = out; *p; p++) lines += *p == '\n';
        assert_int_equal(lines, 9);
    }
    free(out);
    out = run(&st, "'%s' dump '%s' 2>&1 >/dev/null", tu_frames_bin(), tmp);
    assert_non_null(strstr(out, "frame 3"));
    free(out);
    unlink(tmp);
}

/* The readers report what their reading pass found without a second pass over the trace
   (no scan after it): a finished trace whose header claims 15 frames, its TOC fitting no
   convention for that count, and 10 frames in it (r05 with the count at byte 32 made 15)
   warns "header says 15 frames, 10 were found" once, after every frame was read. */
static void test_header_count_warned_once_by_readers(void **state) {
    const char *tmp = tu_tmp_path(".frames");
    const char *cmds[] = {"stat --no-symbols", "dump --pc", "vprof --no-symbols"};
    size_t n, i;
    unsigned char *b = tu_read_file(VEC("r05_toc_m4_n10_mips"), &n);
    char *out, *hit;
    int st;
    (void)state;
    assert_non_null(b);
    assert_true(n > 40 && b[32] == 10);
    b[32] = 15;
    assert_int_equal(tu_write_file(tmp, b, n), 0);
    free(b);
    for (i = 0; i < sizeof cmds / sizeof *cmds; i++) {
        out = tu_run(&st, "'%s' %s '%s' 2>&1 >/dev/null", tu_frames_bin(), cmds[i], tmp);
        assert_int_equal(st, 0);
        hit = strstr(out, "header says 15 frames, 10 were found");
        assert_non_null(hit);
        assert_null(strstr(hit + 1, "header says 15 frames"));
        free(out);
    }
    out = run(&st, "'%s' stat --json --no-symbols '%s' 2>/dev/null", tu_frames_bin(), tmp);
    assert_non_null(strstr(out, "\"frames\":10,"));
    free(out);
    unlink(tmp);
}

/* dump --pc reads std_frames by their head only (frames_peek_std) and decodes the other
   frames: on every shared vector it prints the addresses that decoding every frame with
   the library gives, and stat counts as many instructions. */
static void test_pc_lines_match_full_decoding(void **state) {
    int st;
    char *list = tu_run(&st, "ls %s/*.frames", tu_shared("vectors/frames")), *line, *save = NULL;
    int files = 0;
    (void)state;
    for (line = strtok_r(list, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        frames_reader *r;
        frames_error err;
        frames_frame f;
        size_t cap = 1 << 16, len = 0;
        char *want = (char *)malloc(cap), *got, count[64];
        uint64_t instructions = 0;
        int rc;
        assert_non_null(want);
        want[0] = 0;
        if (frames_reader_open_path(&r, line, NULL, &err) < 0) {   /* the empty vector */
            free(want);
            continue;
        }
        while ((rc = frames_reader_next(r, &f)) != 0) {
            if (rc < 0) continue;
            if (f.kind == FRAMES_KIND_STD) instructions++;
            if (!(f.present & (1u << FRAMES_KIND_STD))) continue;
            if (len + 18 > cap) assert_non_null(want = (char *)realloc(want, cap *= 2));
            len += (size_t)sprintf(want + len, "%016llx\n", (unsigned long long)f.std.address);
        }
        frames_reader_close(r);
        got = run(&st, "'%s' dump --pc '%s' 2>/dev/null", tu_frames_bin(), line);
        assert_string_equal(got, want);
        free(got);
        got = run(&st, "'%s' stat --json --no-symbols '%s' 2>/dev/null", tu_frames_bin(), line);
        snprintf(count, sizeof count, "\"instructions\":%llu,", (unsigned long long)instructions);
        assert_non_null(strstr(got, count));
        free(got);
        free(want);
        files++;
    }
    assert_true(files > 5);
    free(list);
}

static void test_info_verdicts(void **state) {
    char *out;
    int st;
    (void)state;
    out = run(&st, "'%s' info '%s'", tu_frames_bin(), VEC("tcg_r05_m4_n10"));
    assert_int_equal(st, 0);
    assert_non_null(strstr(out, "frames: 10 (header says 10)"));
    assert_non_null(strstr(out, "toc convention: ceil"));
    assert_non_null(strstr(out, "before 2025-07 no; libtrace C++ since 2025-07 yes; BAP OCaml yes"));
    free(out);
    out = run(&st, "'%s' info --json '%s'", tu_frames_bin(), VEC("r09_unfinished_no_finish_call"));
    assert_int_equal(st, 0);
    assert_non_null(strstr(out, "\"frames\":3,"));
    assert_non_null(strstr(out, "\"finished\":false"));
    assert_non_null(strstr(out, "\"toc\":\"none\""));
    assert_non_null(strstr(out, "\"bap_ocaml\":true"));
    assert_non_null(strstr(out, "\"by_kind\":{\"std_frame\":3}"));
    free(out);
}

static void test_fix_in_place_and_to_file(void **state) {
    const char *tmp = truncated_copy(VEC("r05_toc_m4_n10_mips"), 0x2b4 + 10);
    const char *out_path = tu_tmp_path(".frames");
    struct stat before, after;
    char *out;
    int st;
    (void)state;
    chmod(tmp, 0640);
    /* -o leaves the input as it is */
    {
        char cmd[2048];
        snprintf(cmd, sizeof cmd, "%s fix '%s' -o '%s' 2>&1", tu_frames_bin(), tmp, out_path);
        out = tu_run(&st, "%s", cmd);
    }
    assert_int_equal(st, 0);
    assert_non_null(strstr(out, "6 frames"));
    free(out);
    assert_int_equal(stat(tmp, &before), 0);
    assert_int_equal(before.st_size, 0x2b4 + 10);
    out = run(&st, "'%s' info --json '%s'", tu_frames_bin(), out_path);
    assert_non_null(strstr(out, "\"frames\":6,\"header_frames\":6"));
    assert_non_null(strstr(out, "\"libtrace_cxx_legacy\":true"));
    free(out);
    /* in place: a new inode renamed over the original, permissions kept */
    out = run(&st, "'%s' fix '%s' 2>/dev/null", tu_frames_bin(), tmp);
    assert_int_equal(st, 0);
    free(out);
    assert_int_equal(stat(tmp, &after), 0);
    assert_int_equal(after.st_mode & 0777, 0640);
    assert_true(after.st_ino != before.st_ino);
    {
        size_t a, b;
        unsigned char *x = tu_read_file(tmp, &a), *y = tu_read_file(out_path, &b);
        assert_int_equal(a, b);
        assert_memory_equal(x, y, a);
        free(x);
        free(y);
    }
    /* the fixed file's first frames are the original bytes: same as the vector's */
    out = run(&st, "'%s' dump --pc '%s'", tu_frames_bin(), tmp);
    {
        char *want = run(&st, "'%s' dump --pc '%s' | head -6", tu_frames_bin(), VEC("r05_toc_m4_n10_mips"));
        assert_string_equal(out, want);
        free(want);
    }
    free(out);
    unlink(tmp);
    unlink(out_path);
}

static void test_fix_failure_keeps_original(void **state) {
    /* a write that fails half way (file size limit, SIGXFSZ ignored so write() reports
       EFBIG): the original stays as it was and no temporary file is left behind */
    const char *dir = tu_tmp_path(".d");
    char path[700], cmd[2048];
    char *out;
    unsigned char *a, *b;
    size_t na, nb;
    int st;
    (void)state;
    mkdir(dir, 0755);
    snprintf(path, sizeof path, "%s/t.frames", dir);
    a = tu_read_file(VEC("r10_default_m_n10001"), &na);
    assert_int_equal(tu_write_file(path, a, na - 100), 0); /* cut: fix has work to do */
    snprintf(cmd, sizeof cmd, "sh -c \"trap '' XFSZ; ulimit -f 40; exec %s fix '%s'\" 2>&1",
             tu_frames_bin(), path);
    out = tu_run(&st, "%s", cmd);
    assert_int_equal(st, 1);
    free(out);
    b = tu_read_file(path, &nb);
    assert_int_equal(nb, na - 100);
    assert_memory_equal(a, b, nb);
    snprintf(cmd, sizeof cmd, "ls -A '%s'", dir);
    out = tu_run(&st, "%s", cmd);
    assert_string_equal(out, "t.frames\n");
    free(out);
    unlink(path);
    rmdir(dir);
    free(a);
    free(b);
}

static void test_cat_to_standard_output_is_unfinished(void **state) {
    const char *tmp = tu_tmp_path(".frames");
    char cmd[2048];
    char *out;
    int st;
    (void)state;
    snprintf(cmd, sizeof cmd, "{ %s cat '%s' - | cat >'%s'; } 2>&1", tu_frames_bin(),
             VEC("r11_pintraces_like_x86"), tmp);
    out = tu_run(&st, "%s", cmd);
    assert_int_equal(st, 0);
    assert_non_null(strstr(out, "unfinished"));
    free(out);
    out = run(&st, "'%s' info --json '%s'", tu_frames_bin(), tmp);
    assert_non_null(strstr(out, "\"frames\":4,"));
    assert_non_null(strstr(out, "\"finished\":false"));
    free(out);
    /* cat of it finishes it again: the upstream file, byte for byte */
    {
        const char *again = tu_tmp_path(".frames");
        unsigned char *x, *y;
        size_t a, b;
        snprintf(cmd, sizeof cmd, "%s cat '%s' '%s'", tu_frames_bin(), tmp, again);
        free(tu_run(&st, "%s", cmd));
        assert_int_equal(st, 0);
        x = tu_read_file(again, &a);
        y = tu_read_file(VEC("r11_pintraces_like_x86"), &b);
        assert_int_equal(a, b);
        assert_memory_equal(x, y, a);
        free(x);
        free(y);
        unlink(again);
    }
    unlink(tmp);
}

static void test_cat_options(void **state) {
    const char *tmp = tu_tmp_path(".frames");
    char cmd[2048];
    char *out;
    int st;
    (void)state;
    snprintf(cmd, sizeof cmd, "%s cat '%s' '%s' --toc ceil --frames-per-toc 4 --version 2",
             tu_frames_bin(), VEC("r05_toc_m4_n10_mips"), tmp);
    free(tu_run(&st, "%s", cmd));
    assert_int_equal(st, 0);
    out = run(&st, "'%s' info --json '%s'", tu_frames_bin(), tmp);
    assert_non_null(strstr(out, "\"version\":2,"));
    assert_non_null(strstr(out, "\"toc\":\"ceil\""));
    assert_non_null(strstr(out, "\"libtrace_cxx_head\":true"));
    free(out);
    snprintf(cmd, sizeof cmd, "%s cat '%s' '%s' --toc sideways 2>&1", tu_frames_bin(),
             VEC("r05_toc_m4_n10_mips"), tmp);
    free(tu_run(&st, "%s", cmd));
    assert_int_equal(st, 2);
    unlink(tmp);
}

/* The first command README gives a newcomer: tools/demo.sh (./build.sh demo) runs every
   step to the end with stdout on a pipe (its dump | awk step used to die of SIGPIPE under
   pipefail) and shows what each step promises. */
static void test_demo_runs_to_the_end(void **state) {
    int st;
    char *out;
    (void)state;
    out = tu_run(&st, "cd '%s' && bash tools/demo.sh '%s' '%s' 2>&1 | cat", tu_root(), tu_frames_bin(),
                 tu_shared(""));
    assert_non_null(strstr(out, "== frames vprof"));
    assert_non_null(strstr(out, "how many: "));
    assert_non_null(strstr(out, "reg_operand"));
    assert_non_null(strstr(out, "top instructions by zero-value loads"));
    free(out);
    out = tu_run(&st, "cd '%s' && bash tools/demo.sh '%s' '%s' >/dev/null 2>&1; echo $?", tu_root(),
                 tu_frames_bin(), tu_shared(""));
    assert_string_equal(out, "0\n");
    free(out);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_help_and_usage_errors),
        cmocka_unit_test(test_dump_reads_standard_input),
        cmocka_unit_test(test_truncated_input_is_a_warning),
        cmocka_unit_test(test_undecodable_frame_exit_1_others_printed),
        cmocka_unit_test(test_header_count_warned_once_by_readers),
        cmocka_unit_test(test_pc_lines_match_full_decoding),
        cmocka_unit_test(test_info_verdicts),
        cmocka_unit_test(test_fix_in_place_and_to_file),
        cmocka_unit_test(test_fix_failure_keeps_original),
        cmocka_unit_test(test_cat_to_standard_output_is_unfinished),
        cmocka_unit_test(test_cat_options),
        cmocka_unit_test(test_demo_runs_to_the_end),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
