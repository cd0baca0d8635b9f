/* test_cli_messages.c - what a person sees from the frames command: a forgotten option
   value named as such, true messages for wrong inputs, one meaning of LO-HI, exclusive
   flags refused, sizes labelled, `frames help`, exit status on every --help page, and the
   man page listing every option of every --help page (so that they cannot drift).
   Real commands through FRAMES_BIN; expectations from the reference vectors' dumps. */
#include "testutil.h"

#include <sys/stat.h>

#include "frames.h"

static const char *vec(const char *name) {
    static char bufs[4][600];
    static int next;
    char *b = bufs[next++ & 3];
    snprintf(b, sizeof bufs[0], "%s", tu_shared(name));
    return b;
}

/* r02 (all frame types, x86-64): std frames at 0x400000 (5 bytes) and 0x400030, one
   taint_intro frame, one modload frame (libc at 0x7f0000000000) - see its .txt dump. */
#define R02 vec("vectors/frames/r02_all_frame_types_x86_64.frames")
#define R10 vec("vectors/frames/r10_default_m_n10001.frames")

static int contains(const char *hay, const char *needle) { return strstr(hay, needle) != NULL; }

static void expect_output(const char *out, const char *needle, const char *cmd) {
    if (!contains(out, needle)) print_error("'%s' printed:\n%s\nexpected: %s\n", cmd, out, needle);
    assert_true(contains(out, needle));
}

/* ---- item 12: a missing option value is named, in every command */

static void test_missing_value_is_named(void **state) {
    static const struct {
        const char *args, *option;
    } cases[] = {
        {"stat %s --top", "--top"},        {"slice %s -o", "-o"},
        {"slice %s --frames", "--frames"}, {"slice %s --pc", "--pc"},
        {"drcov %s -o", "-o"},             {"drcov %s --module", "--module"},
        {"tenet %s --tid", "--tid"},       {"tenet %s --arch", "--arch"},
        {"split %s --chunks", "--chunks"}, {"compress %s -o", "-o"},
        {"compress %s --level", "--level"}, {"compress %s --threads", "--threads"},
        {"decompress %s -o", "-o"},        {"export %s --parquet", "--parquet"},
        {"export %s --parquet d --chunks", "--chunks"}, {"vprof %s --top", "--top"},
        {"query %s --where", "--where"},   {"query %s --pc", "--pc"},
        {"index %s -o", "-o"},             {"fix %s -o", "-o"},
        {"cat %s --toc", "--toc"},         {"cat %s --version", "--version"},
        {"dump %s --module", "--module"},  {"dump %s --sysroot", "--sysroot"},
        {"pt -o x --elf %s --pt", "--pt"},
    };
    size_t i;
    (void)state;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char args[800], want[100], *out;
        int st;
        snprintf(args, sizeof args, cases[i].args, R02);
        out = tu_run(&st, "%s %s 2>&1", tu_frames_bin(), args);
        snprintf(want, sizeof want, "option '%s' needs a value", cases[i].option);
        expect_output(out, want, cases[i].args);
        assert_false(contains(out, "unknown option"));
        assert_int_equal(st, 2);
        free(out);
    }
}

static void test_pt_directory_is_named(void **state) {
    char *out;
    int st;
    (void)state;
    out = tu_run(&st, "%s pt --help 2>&1", tu_frames_bin());
    if (!contains(out, "--pt FILE")) {   /* built without libipt */
        free(out);
        skip();
    }
    free(out);
    out = tu_run(&st, "%s pt --pt '%s' -o - 2>&1 >/dev/null", tu_frames_bin(), tu_tmpdir());
    expect_output(out, "a directory, not a file", "pt --pt DIR");
    assert_false(contains(out, "out of memory"));
    assert_int_equal(st, 1);
    free(out);
}

/* zstd's magic number and then bytes that are no zstd frame: every reader says so. */
static void test_corrupt_zstd_same_message(void **state) {
    static const char *const cmds[] = {"dump", "info", "stat", "query"};
    const char *z = tu_tmp_path(".frames.zst");
    static const unsigned char bad[] = {0x28, 0xb5, 0x2f, 0xfd, 'g', 'a', 'r', 'b', 'a', 'g',
                                        'e', 'g', 'a', 'r', 'b', 'a', 'g', 'e'};
    size_t i;
    (void)state;
    assert_int_equal(tu_write_file(z, bad, sizeof bad), 0);
    for (i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        int st;
        char *out = tu_run(&st, "%s %s '%s' 2>&1 >/dev/null", tu_frames_bin(), cmds[i], z);
        expect_output(out, "corrupt zstd data at file offset 0x0", cmds[i]);
        assert_false(contains(out, "header"));
        assert_int_equal(st, 1);
        free(out);
        /* the same bytes through a pipe (streamed, not mapped) */
        out = tu_run(&st, "cat '%s' | %s %s - 2>&1 >/dev/null", z, tu_frames_bin(), cmds[i]);
        expect_output(out, "corrupt zstd data at file offset 0x0", cmds[i]);
        assert_int_equal(st, 1);
        free(out);
    }
    unlink(z);
}

/* A trace whose one modload frame is unusable (low above high) and one instruction. */
static const char *one_bad_modload_trace(void) {
    const char *path = tu_tmp_path(".frames");
    frames_writer *w;
    frames_error err;
    frames_frame f;
    static const uint8_t nop = 0x90;
    assert_int_equal(frames_writer_open_path(&w, path, NULL, NULL, &err), FRAMES_OK);
    memset(&f, 0, sizeof f);
    f.kind = FRAMES_KIND_MODLOAD;
    f.modload.module_name = frames_str("/bin/prog");
    f.modload.low_address = 0x402000;
    f.modload.high_address = 0x401000;
    assert_int_equal(frames_writer_add(w, &f), FRAMES_OK);
    memset(&f, 0, sizeof f);
    f.kind = FRAMES_KIND_STD;
    f.std.address = 0x401000;
    f.std.rawbytes = frames_bytes_of(&nop, 1);
    assert_int_equal(frames_writer_add(w, &f), FRAMES_OK);
    assert_int_equal(frames_writer_close(w), FRAMES_OK);
    return path;
}

static void test_drcov_one_unusable_modload(void **state) {
    char t[600], d[600], *out;
    int st;
    (void)state;
    snprintf(t, sizeof t, "%s", one_bad_modload_trace());
    snprintf(d, sizeof d, "%s", tu_tmp_path(".drcov"));
    out = tu_run(&st, "%s drcov '%s' -o '%s' 2>&1", tu_frames_bin(), t, d);
    assert_int_equal(st, 0);
    assert_false(contains(out, "no modload frames"));        /* there is one */
    expect_output(out, "1 modload frames have empty ranges", "drcov");
    assert_false(contains(out, "ignored"));                  /* said once, not twice */
    free(out);
    unlink(t);
    unlink(d);
}

/* ---- item 13 */

static void test_stat_module_makes_the_table(void **state) {
    char *out;
    (void)state;
    /* [0x400000, 0x400031) holds both pcs of r02 (0x400000: 5 bytes, 0x400030: 1 byte) */
    out = tu_run_ok("stat --module", "%s stat '%s' --no-symbols --module prog:0x400000-0x400031",
                    tu_frames_bin(), R02);
    expect_output(out, "modules           1\n  prog  0x400000-0x400031: 2 instructions", "stat --module");
    assert_false(contains(out, "libc.so.6  0x"));   /* the modload frame is ignored */
    expect_output(out, "outside modules   0 instructions", "stat --module");
    /* JSON too: the same table */
    free(out);
    out = tu_run_ok("stat --module --json", "%s stat '%s' --json --no-symbols --module "
                    "prog:0x400000-0x400031", tu_frames_bin(), R02);
    expect_output(out, "\"modules\":[{\"name\":\"prog\",\"base\":4194304,\"end\":4194353,"
                       "\"instructions\":2", "stat --module --json");
    free(out);
}

static void test_stat_kind_names_spaced(void **state) {
    char *out = tu_run_ok("stat", "%s stat '%s' --no-symbols", tu_frames_bin(), R02);
    (void)state;
    expect_output(out, "  taint_intro_frame 1\n", "stat");
    expect_output(out, "  std_frame       2\n", "stat");
    free(out);
}

static unsigned count_lines(const char *s) {
    unsigned n = 0;
    for (; *s; s++) n += *s == '\n';
    return n;
}

/* A compressed trace whose zstd chunks are fewer than the TOC blocks: split and export
   must cut the same ranges (chunk-aligned), not export the TOC's equal ranges. */
static void test_export_chunks_are_split_ranges(void **state) {
    char m[600], z[600], dir[600], *ranges, *parts;
    (void)state;
    snprintf(m, sizeof m, "%s", tu_tmp_path(".frames"));
    snprintf(z, sizeof z, "%s", tu_tmp_path(".frames.zst"));
    snprintf(dir, sizeof dir, "%s", tu_tmp_path(".pq"));
    free(tu_run_ok("cat", "%s cat '%s' '%s' --frames-per-toc 100", tu_frames_bin(), R10, m));
    free(tu_run_ok("compress", "%s compress '%s' -o '%s' --chunk 128K", tu_frames_bin(), m, z));
    ranges = tu_run_ok("split", "%s split '%s' --chunks 4", tu_frames_bin(), z);
    parts = tu_run_ok("export", "%s export '%s' --parquet '%s' --chunks 4 && ls '%s/instructions'",
                      tu_frames_bin(), z, dir, dir);
    /* 10001 frames of ~20 bytes in 128K chunks: fewer than 4 chunk-aligned ranges */
    assert_true(count_lines(ranges) >= 1 && count_lines(ranges) < 4);
    assert_int_equal(count_lines(parts), count_lines(ranges));
    free(ranges);
    free(parts);
    free(tu_run_ok("rm", "rm -rf '%s' '%s' '%s'", m, z, dir));
}

/* --pc LO-HI is [LO, HI) everywhere: 0x400000-0x400030 holds r02's first pc only. */
static void test_pc_range_half_open_everywhere(void **state) {
    char s[600], *out;
    (void)state;
    out = tu_run_ok("query --count", "%s query '%s' --count --no-index --pc 0x400000-0x400030",
                    tu_frames_bin(), R02);
    assert_int_equal(strtol(out, NULL, 10), 1);
    free(out);
    out = tu_run_ok("query --count", "%s query '%s' --count --no-index --pc 0x400000-0x400031",
                    tu_frames_bin(), R02);
    assert_int_equal(strtol(out, NULL, 10), 2);
    free(out);
    snprintf(s, sizeof s, "%s", tu_tmp_path(".frames"));
    out = tu_run_ok("slice --pc", "%s slice '%s' --pc 0x400000-0x400030 -o '%s' && %s dump --pc '%s'",
                    tu_frames_bin(), R02, s, tu_frames_bin(), s);
    assert_string_equal(out, "0000000000400000\n");
    free(out);
    unlink(s);
}

static void test_info_zst_sizes_labelled(void **state) {
    char z[600], want[200], *out;
    struct stat st;
    (void)state;
    snprintf(z, sizeof z, "%s", tu_tmp_path(".frames.zst"));
    free(tu_run_ok("compress", "%s compress '%s' -o '%s'", tu_frames_bin(), R10, z));
    assert_int_equal(stat(z, &st), 0);
    out = tu_run_ok("info", "%s info '%s'", tu_frames_bin(), z);
    snprintf(want, sizeof want, "(%llu bytes, ", (unsigned long long)st.st_size);
    expect_output(out, want, "info X.zst");
    assert_int_equal(stat(R10, &st), 0);
    snprintf(want, sizeof want, ", %llu uncompressed)", (unsigned long long)st.st_size);
    expect_output(out, want, "info X.zst");
    free(out);
    unlink(z);
}

static void test_exclusive_flags_refused(void **state) {
    static const char *const cases[] = {"dump --json --pc", "dump --pc --jsonl",
                                        "dump --pbtext --json", "query --count --json",
                                        "export --parquet /nonexistent/x --compression none --zstd-level 3"};
    size_t i;
    (void)state;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int st;
        char *out = tu_run(&st, "%s %s '%s' 2>&1", tu_frames_bin(), cases[i], R02);
        expect_output(out, "exclude each other", cases[i]);
        assert_int_equal(st, 2);
        free(out);
    }
}

/* ---- item 17: help */

/* The command names `frames help` lists (two spaces, name, spaces, summary). */
static int command_names(char names[][32], int max) {
    char *out = tu_run_ok("frames help", "%s help", tu_frames_bin()), *p, *line;
    int n = 0;
    p = strstr(out, "commands:\n");
    assert_non_null(p);
    for (line = strchr(p, '\n') + 1; *line == ' ' && n < max; line = strchr(line, '\n') + 1) {
        sscanf(line, " %31s", names[n]);
        n++;
    }
    free(out);
    return n;
}

static void test_help_command_and_exit_status(void **state) {
    char names[64][32];
    int n = command_names(names, 64), i;
    (void)state;
    assert_true(n >= 15);
    for (i = 0; i < n; i++) {
        char *a = tu_run_ok("help CMD", "%s help %s", tu_frames_bin(), names[i]);
        char *b = tu_run_ok("CMD --help", "%s %s --help", tu_frames_bin(), names[i]);
        assert_string_equal(a, b);
        expect_output(a, "Exit status", names[i]);
        free(a);
        free(b);
    }
    {
        int st;
        free(tu_run(&st, "%s help nosuchcommand 2>/dev/null", tu_frames_bin()));
        assert_int_equal(st, 2);
    }
}

/* The long options a --help page defines: on its usage lines (up to the first empty line)
   and on lines starting with spaces and a dash. Appended to opts as " --x --y ". */
static void help_options(const char *help, char *opts, size_t cap) {
    const char *line = help;
    int in_usage = 1;
    opts[0] = 0;
    while (*line) {
        const char *end = strchr(line, '\n'), *p;
        size_t len = end ? (size_t)(end - line) : strlen(line);
        int defining = in_usage || (line[0] == ' ' && line[strspn(line, " ")] == '-');
        if (len == 0) in_usage = 0;
        for (p = line; defining && p < line + len; p++) {
            size_t k = 2;
            if (p[0] != '-' || p[1] != '-' || !(p[2] >= 'a' && p[2] <= 'z') ||
                (p > line && p[-1] != ' ' && p[-1] != '[' && p[-1] != '|' && p[-1] != '('))
                continue;
            while (p + k < line + len && (strchr("abcdefghijklmnopqrstuvwxyz0123456789:._-", p[k])))
                k++;
            while (strchr("-.:_", p[k - 1])) k--;
            if (strlen(opts) + k + 3 < cap && !(k == 6 && !strncmp(p, "--help", 6))) {
                strcat(opts, " ");
                strncat(opts, p, k);
            }
            p += k;
        }
        if (!end) break;
        line = end + 1;
    }
}

/* The man page's text about one command (its .SS section), escapes removed. */
static char *man_section(const char *man, const char *cmd) {
    char head[64], *out, *o;
    const char *start, *end, *p;
    snprintf(head, sizeof head, "\n.SS %.40s\n", cmd);
    start = strstr(man, head);
    if (!start) return NULL;
    start += strlen(head);
    for (end = start; *end && !(end[0] == '\n' && end[1] == '.' && end[2] == 'S' &&
                                (end[3] == 'S' || end[3] == 'H')); end++) {}
    out = o = (char *)malloc((size_t)(end - start) + 1);
    for (p = start; p < end; p++) {
        if (p[0] == '\\' && p[1] == '-') { *o++ = '-'; p++; continue; }
        if (p[0] == '\\' && p[1] == 'f') { p += 2; continue; }   /* font changes */
        *o++ = *p;
    }
    *o = 0;
    return out;
}

/* An option is documented when its command's section names it; a long form that the help
   pairs with a short one ("-o, --output", "--quiet|-q") when the section has the short
   one (the man page says short options are also spelled long); the name options
   (--module, --sysroot, --no-symbols) when the NAMES section lists the command. */
static int documented(const char *opt, const char *section, const char *help, const char *names_line,
                      const char *cmd) {
    char pair[80];
    const char *p;
    for (p = section; (p = strstr(p, opt)) != NULL; p++) {
        char c = p[strlen(opt)];
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) return 1;
    }
    for (p = help; (p = strstr(p, opt)) != NULL; p++) {
        if (p >= help + 4 && p[-1] == ' ' && p[-2] == ',' && p[-4] == '-') {
            snprintf(pair, sizeof pair, "-%c", p[-3]);
            if (strstr(section, pair)) return 1;
        }
        if (p[strlen(opt)] == '|' && p[strlen(opt) + 1] == '-' && p[strlen(opt) + 2] != '-') {
            snprintf(pair, sizeof pair, "-%c", p[strlen(opt) + 2]);
            if (strstr(section, pair)) return 1;
        }
    }
    if ((!strcmp(opt, "--module") || !strcmp(opt, "--sysroot") || !strcmp(opt, "--no-symbols")) &&
        names_line && strstr(names_line, cmd))
        return 1;
    return 0;
}

static void test_man_page_lists_every_option(void **state) {
    char names[64][32], opts[8192];
    char *man = (char *)tu_read_file(tu_src("docs/frames.1"), NULL), *names_line = NULL;
    int n = command_names(names, 64), i, missing = 0;
    (void)state;
    assert_non_null(man);
    {   /* "The name options, for stat, vprof, query and dump:" */
        const char *l = strstr(man, "The name options, for ");
        if (l) {
            const char *e = strchr(l, '\n');
            names_line = (char *)calloc(1, (size_t)(e - l) + 1);
            memcpy(names_line, l, (size_t)(e - l));
        }
    }
    for (i = 0; i < n; i++) {
        char *help = tu_run_ok("CMD --help", "%s %s --help", tu_frames_bin(), names[i]);
        char *section = man_section(man, names[i]), *tok, *save = NULL;
        if (!section) {
            print_error("docs/frames.1 has no section .SS %s\n", names[i]);
            missing++;
            free(help);
            continue;
        }
        help_options(help, opts, sizeof opts);
        for (tok = strtok_r(opts, " ", &save); tok; tok = strtok_r(NULL, " ", &save))
            if (!documented(tok, section, help, names_line, names[i])) {
                print_error("docs/frames.1 does not list `frames %s %s` (in its --help)\n",
                            names[i], tok);
                missing++;
            }
        free(section);
        free(help);
    }
    free(names_line);
    free(man);
    assert_int_equal(missing, 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_missing_value_is_named),
        cmocka_unit_test(test_pt_directory_is_named),
        cmocka_unit_test(test_corrupt_zstd_same_message),
        cmocka_unit_test(test_drcov_one_unusable_modload),
        cmocka_unit_test(test_stat_module_makes_the_table),
        cmocka_unit_test(test_stat_kind_names_spaced),
        cmocka_unit_test(test_export_chunks_are_split_ranges),
        cmocka_unit_test(test_pc_range_half_open_everywhere),
        cmocka_unit_test(test_info_zst_sizes_labelled),
        cmocka_unit_test(test_exclusive_flags_refused),
        cmocka_unit_test(test_help_command_and_exit_status),
        cmocka_unit_test(test_man_page_lists_every_option),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
