/* test_bad_input - every `frames` subcommand on hostile and damaged traces: it must end
   (within a time limit) with status 0 or 1 and a message, never a signal, a sanitizer
   report or a usage error. The commands come from tools/commands.def, so a new command is
   covered without an edit here: it is run as `frames CMD IN`, and as that may not be how
   it is called, a usage error (2) is accepted for it until the table below says how to
   call it. ./build.sh test also runs this suite against the ASan+UBSan build. */
#include <sys/stat.h>

#include "frames.h"
#include "testutil.h"

/* How to call a command: IN and OUT are replaced by paths; NULL: the command reads no
   trace file (record runs a program). */
static const struct {
    const char *name, *args;
} calls[] = {
    {"record", NULL},
    {"query", "IN --count"}, {"query", "IN --var a:* --where '(> (v/value a) 5)' --json"},
    {"pt", "--perf IN -o OUT"}, {"pt", "--pt IN --raw IN:0x400000 -o OUT"},
    {"pt", "--pt IN --pevent:primary IN --raw IN:0x1000 -o OUT"},
    {"dump", "IN"},         {"dump", "--json IN"},   {"dump", "--pc - < IN"},
    {"cat", "IN OUT"},      {"info", "IN"},          {"info", "--json - < IN"},
    {"fix", "IN -o OUT"},   {"drcov", "IN -o OUT"},  {"tenet", "IN -o OUT"},
    {"stat", "IN"},         {"slice", "IN -o OUT --frames 1-5"},
    {"split", "IN --chunks 3"}, {"vprof", "IN"}, {"index", "IN -o OUT"},
    {"export", "IN --parquet OUT"}, {"export", "IN --parquet OUT --chunks 3"},
    {"gdbserver", "IN --index OUT < /dev/null"},   /* no client: ends at end of input */
};

/* The damaged inputs, written to temporary files. */
typedef struct input {
    const char *what;
    char path[512];
} input;

static size_t make_inputs(input *in, size_t max) {
    size_t n = 0, len = 0, len9 = 0, i;
    uint8_t *v = tu_read_file(tu_shared("vectors/frames/r05_toc_m4_n10_mips.frames"), &len);
    uint8_t *v9 = tu_read_file(tu_shared("vectors/frames/r09_unfinished_no_finish_call.frames"), &len9);
    uint8_t *t = malloc(len + 4096);
    uint32_t x = 12345;
    assert_non_null(v);
    assert_non_null(v9);
    assert_non_null(t);
#define ADD(desc, data, size)                                                      \
    do {                                                                           \
        assert_true(n < max);                                                      \
        in[n].what = desc;                                                         \
        snprintf(in[n].path, sizeof in[n].path, "%s", tu_tmp_path(".frames"));     \
        assert_int_equal(tu_write_file(in[n].path, data, size), 0);                \
        n++;                                                                       \
    } while (0)
    ADD("an empty file", t, 0);
    ADD("47 bytes of a header", v, 47);
    for (i = 0; i < 4096; i++) t[i] = (uint8_t)((x = x * 1103515245 + 12345) >> 16);
    ADD("4 KiB of random bytes", t, 4096);
    ADD("a trace cut inside frame 3", v, 0x1c4 + 20);
    memcpy(t, v, len);
    t[0x1c4 + 8] = 0xff; /* frame 3's first tag: wire type 7 */
    ADD("a frame that does not decode", t, len);
    memcpy(t, v, len);
    tu_put_le64(t + 48, (uint64_t)1 << 40);
    ADD("a meta size of 2^40", t, len);
    memcpy(t, v, len);
    tu_put_le64(t + 32, (uint64_t)1 << 63);
    tu_put_le64(t + 40, 0x1c4 + 3);
    ADD("n = 2^63 and T inside a frame", t, len);
    memcpy(t, v, len);
    tu_put_le64(t + 0x3de + 8, 0x1000000);
    tu_put_le64(t + 0x3de + 16, 0x12f);
    ADD("TOC entries pointing outside and backwards", t, len);
    memcpy(t, v9, len9);
    tu_put_le64(t + len9, (uint64_t)1 << 62);
    memset(t + len9 + 8, 0x41, 100);
    ADD("a size word of 2^62", t, len9 + 108);
    memcpy(t, v9, len9);
    { /* a frame of 2000 nested groups */
        uint8_t *p = t + len9 + 8;
        for (i = 0; i < 2000; i++) p[i] = 9 << 3 | 3;
        for (i = 0; i < 2000; i++) p[2000 + i] = 9 << 3 | 4;
        tu_put_le64(t + len9, 4000);
    }
    ADD("groups nested 2000 deep", t, len9 + 8 + 4000);
    memcpy(t, v, len);
    memset(t + 32, 0, 16);
    ADD("a TOC left by a killed finish (n = T = 0)", t, len);
#undef ADD
    free(v);
    free(v9);
    free(t);
    return n;
}

/* Commands listed in tools/commands.def. */
static size_t commands(char names[][32], size_t max) {
    size_t len = 0, n = 0;
    char *def = (char *)tu_read_file(tu_src("tools/commands.def"), &len), *p;
    assert_non_null(def);
    for (p = def; (p = strstr(p, "\nFRAMES_COMMAND(")) != NULL && n < max; p++) {
        if (sscanf(p + 16, "%31[a-z0-9_]", names[n]) == 1) n++;
    }
    free(def);
    return n;
}

/* A message gives a frame's position once. One formatted into itself (an overlapping
   vsnprintf valgrind found in frames query) repeats it: "frame 3 at offset 0x1c4: frame 3
   at offset 0x1c4: ...". */
static int repeats_position(const char *out) {
    const char *p;
    for (p = out; (p = strstr(p, "frame ")) != NULL; p++) {
        const char *at = strstr(p, " at offset 0x"), *eol = strchr(p, '\n'), *again;
        char pos[80];
        size_t n = strcspn(p, ":\n");
        if (!at || at >= p + n || n >= sizeof pos) continue;
        memcpy(pos, p, n);
        pos[n] = 0;
        again = strstr(p + n, pos);
        if (again && (!eol || again < eol)) return 1;
    }
    return 0;
}

static void run_one(const char *cmd, const char *args, const input *in, int usage_ok) {
    char line[2048], *out;
    const char *outpath = tu_tmp_path(".out");
    size_t i, k = 0;
    int status;
    for (i = 0; args[i] && k + 600 < sizeof line; i++) {
        if (!strncmp(args + i, "IN", 2)) {
            k += (size_t)snprintf(line + k, sizeof line - k, "'%s'", in->path);
            i++;
        } else if (!strncmp(args + i, "OUT", 3)) {
            k += (size_t)snprintf(line + k, sizeof line - k, "'%s'", outpath);
            i += 2;
        } else {
            line[k++] = args[i];
        }
    }
    line[k] = 0;
    /* stdout is discarded; stderr (the message) is what the check looks at */
    out = tu_run(&status, "timeout %d '%s' %s %s 2>&1 >/dev/null", getenv("FRAMES_VALGRIND") ? 300 : 30,
                 tu_frames_bin(), cmd, line);
    if (status != 0 && status != 1 && !(usage_ok && status == 2))
        fail_msg("frames %s %s on %s: exit status %d\n%s", cmd, args, in->what, status, out);
    if (status == 1 && !strstr(out, "frames "))
        fail_msg("frames %s %s on %s: failed without a message", cmd, args, in->what);
    if (repeats_position(out))
        fail_msg("frames %s %s on %s: a message formatted into itself:\n%s", cmd, args, in->what, out);
    free(out);
    if (unlink(outpath) != 0) free(tu_run(&status, "rm -rf '%s'", outpath));   /* a directory */
}

static void test_every_command_on_damaged_traces(void **state) {
    input in[16];
    char names[64][32];
    size_t nin = make_inputs(in, 16), ncmd = commands(names, 64), i, j, c;
    (void)state;
    assert_true(ncmd >= 4);
    for (c = 0; c < ncmd; c++) {
        int listed = 0;
        for (j = 0; j < sizeof calls / sizeof calls[0]; j++) {
            if (strcmp(calls[j].name, names[c])) continue;
            listed = 1;
            if (calls[j].args)
                for (i = 0; i < nin; i++) run_one(names[c], calls[j].args, &in[i], 0);
        }
        if (!listed)
            for (i = 0; i < nin; i++) run_one(names[c], "IN", &in[i], 1);
    }
    for (i = 0; i < nin; i++) unlink(in[i].path);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_command_on_damaged_traces),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
