/* The output rule of every command that writes a file (docs/outputs.md, tools/cli.h):
   an output that is one of the inputs is refused (also through a symbolic or hard link or
   another spelling) and the input stays byte for byte; an existing output is replaced
   only with -f; a command that fails leaves no file behind and the old output as it was;
   a write error (/dev/full) is a one-line error and exit status 1, for the commands that
   print as for those that write files. Then damaged and empty inputs: `fix` keeps every
   readable frame of a .frames.zst with a corrupt chunk, `info` reports the loss, and the
   silent successes of issue 27 (compress of non-traces, decompress of an empty file,
   tenet of a missing thread, pt with nothing decoded) are errors. The judges are the
   files' bytes, the plain reader on the original trace, and `zstd -d`. */
#include "testutil.h"

#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>

#include "frames.h"
#ifdef FRAMES_HAVE_ZSTD
#include "frames_zstd.h"
#endif

static const char *vector(void) { return tu_shared("vectors/frames/tcg_r10_m64_n10001.frames"); }

/* A file of the work directory, its path copied (tu_workdir_path rotates its buffers). */
static char *work(const char *name) {
    const char *p = tu_workdir_path(name);
    char *s = (char *)malloc(strlen(p) + 1);
    assert_non_null(s);
    strcpy(s, p);
    return s;
}

/* `frames ARGS 2>&1` run in the work directory: its exit status is want and its output
   holds says (NULL: not checked). */
static void frames_here(int want, const char *says, const char *args) {
    int status;
    char *text = tu_run(&status, "cd '%s' && '%s' %s 2>&1", tu_workdir, tu_frames_bin(), args);
    assert_int_equal(status, want);
    if (says) assert_non_null(strstr(text, says));
    free(text);
}

static void copy_file(const char *from, const char *to) {
    size_t n;
    unsigned char *b = tu_read_file(from, &n);
    assert_non_null(b);
    assert_int_equal(tu_write_file(to, b, n), 0);
    free(b);
}

/* Entries of the work directory (temporary files left behind would show here). */
static int dir_entries(void) {
    DIR *d = opendir(tu_workdir);
    struct dirent *e;
    int n = 0;
    assert_non_null(d);
    while ((e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) n++;
    closedir(d);
    return n;
}

/* One writing command: `frames` + args, where {IN} and {OUT} are replaced. */
typedef struct writer_cmd {
    const char *args;
    const char *input;     /* the work file given as {IN} */
    int fails_midway;      /* the damaged input makes it fail after it started writing */
    int same_each_run;     /* the output is the same bytes every run (no time, no argv) */
} writer_cmd;

static const writer_cmd writers[] = {
    {"slice {IN} -o {OUT}", "t.frames", 1, 1},
    {"cat {IN} {OUT}", "t.frames", 1, 1},
    {"fix {IN} -o {OUT}", "t.frames", 0, 1},   /* fix keeps what reads: see test_fix_damaged */
    {"drcov {IN} -o {OUT}", "t.frames", 1, 1},
    {"tenet {IN} -o {OUT}", "t.frames", 1, 1},
    {"compress {IN} -o {OUT}", "t.frames", 1, 1},
    {"decompress {IN} -o {OUT}", "t.frames.zst", 1, 1},
    {"index {IN} -o {OUT}", "t.frames", 0, 0},   /* holds the time it was built */
#ifdef FRAMES_HAVE_IPT
    {"pt --raw image-0x100000.bin:0x100000 --pt {IN} -o {OUT}", "trace.pt", 0, 0},   /* argv in meta */
#endif
};

/* The command line of w with IN and OUT (paths as given), plus extra options. */
static char *command(const writer_cmd *w, const char *in, const char *out, const char *extra) {
    static char buf[4096];
    const char *s = w->args;
    size_t n = (size_t)snprintf(buf, sizeof buf, "cd '%s' && '%s' ", tu_workdir, tu_frames_bin());
    while (*s && n < sizeof buf - 600) {
        if (!strncmp(s, "{IN}", 4)) n += (size_t)snprintf(buf + n, sizeof buf - n, "'%s'", in), s += 4;
        else if (!strncmp(s, "{OUT}", 5)) n += (size_t)snprintf(buf + n, sizeof buf - n, "'%s'", out), s += 5;
        else buf[n++] = *s++;
    }
    snprintf(buf + n, sizeof buf - n, " %s 2>&1", extra);
    return buf;
}

static int group_setup(void **state) {
    int st;
    (void)state;
    if (tu_workdir_make("frames-outputs") != 0) return -1;
    copy_file(vector(), tu_workdir_path("t.frames"));
    free(tu_run(&st, "'%s' compress '%s' -o '%s' --chunk 16K 2>&1", tu_frames_bin(),
                tu_workdir_path("t.frames"), tu_workdir_path("t.frames.zst")));
#ifdef FRAMES_HAVE_IPT
    copy_file(tu_shared("vectors/pt/loop-tnt/trace.pt"), tu_workdir_path("trace.pt"));
    copy_file(tu_shared("vectors/pt/loop-tnt/image-0x100000.bin"), tu_workdir_path("image-0x100000.bin"));
#endif
    return st;
}

static int group_teardown(void **state) {
    (void)state;
    tu_workdir_remove();
    return 0;
}

/* Run w with OUT, expect status and (when given) a piece of the message. */
static void expect_run(const writer_cmd *w, const char *in, const char *out, const char *extra,
                       int status, const char *message) {
    int st;
    char *text = tu_run(&st, "%s", command(w, in, out, extra));
    if (st != status || (message && !strstr(text, message)))
        fail_msg("`%s`: exit %d (want %d), said: %s (want \"%s\")", command(w, in, out, extra), st,
                 status, text, message ? message : "");
    if (status == 2 && message && strchr(text, '\n') != text + strlen(text) - 1)
        fail_msg("`%s`: the error is not one line: %s", command(w, in, out, extra), text);
    free(text);
}

/* An output that is the input, by name, through "./", a symbolic link or a hard link:
   refused with exit 2, the input unchanged, nothing left behind. */
static void test_output_is_input(void **state) {
    size_t i;
    (void)state;
    for (i = 0; i < sizeof writers / sizeof writers[0]; i++) {
        const writer_cmd *w = &writers[i];
        char *in = work(w->input), *keep = work("keep"), *dot = work("dot");
        int before;
        snprintf(dot, strlen(dot) + 1, "./%s", w->input);
        copy_file(in, keep);
        assert_int_equal(symlink(w->input, tu_workdir_path("sym")), 0);
        assert_int_equal(link(in, tu_workdir_path("hard")), 0);
        before = dir_entries();
        expect_run(w, w->input, w->input, "", 2, "refused");
        expect_run(w, w->input, dot, "", 2, "refused");
        expect_run(w, w->input, "sym", "", 2, "refused");
        expect_run(w, w->input, "hard", "", 2, "refused");
        expect_run(w, w->input, "hard", "-f", 2, "refused");   /* -f does not allow it */
        assert_true(tu_same_bytes(in, keep));
        assert_int_equal(dir_entries(), before);
        unlink(tu_workdir_path("sym"));
        unlink(tu_workdir_path("hard"));
        unlink(keep);
        free(in);
        free(keep);
        free(dot);
    }
}

/* The output was replaced by the command's: the same bytes as a fresh run's, or (for an
   output that records the run) as long. */
static void expect_replaced(const char *out, const char *fresh, int same_each_run) {
    struct stat a, b;
    if (same_each_run) {
        assert_true(tu_same_bytes(out, fresh));
        return;
    }
    assert_int_equal(stat(out, &a), 0);
    assert_int_equal(stat(fresh, &b), 0);
    assert_true(a.st_size > 100 && a.st_size >= b.st_size - 8 && a.st_size <= b.st_size + 8);
}

/* An existing output: refused without -f (kept as it was), replaced with it; the
   replacement is complete, no temporary file stays, and a symbolic link output stays a
   link to the file replaced. */
static void test_existing_output(void **state) {
    static const char precious[] = "a file someone had\n";
    size_t i;
    (void)state;
    for (i = 0; i < sizeof writers / sizeof writers[0]; i++) {
        const writer_cmd *w = &writers[i];
        char *out = work("out"), *fresh = work("fresh"), *target = work("target");
        size_t n;
        unsigned char *got;
        int before;
        expect_run(w, w->input, "fresh", "", 0, NULL);   /* the reference output */
        assert_int_equal(tu_write_file(out, precious, sizeof precious - 1), 0);
        before = dir_entries();
        expect_run(w, w->input, "out", "", 2, "exists: give -f (--force)");
        got = tu_read_file(out, &n);
        assert_int_equal(n, sizeof precious - 1);
        assert_memory_equal(got, precious, n);
        free(got);
        expect_run(w, w->input, "out", "-f", 0, NULL);
        expect_replaced(out, fresh, w->same_each_run);
        assert_int_equal(dir_entries(), before);
        /* through a symbolic link: the file it names is replaced, the link stays */
        assert_int_equal(tu_write_file(target, precious, sizeof precious - 1), 0);
        unlink(out);
        assert_int_equal(symlink("target", out), 0);
        expect_run(w, w->input, "out", "", 2, "exists");
        expect_run(w, w->input, "out", "--force", 0, NULL);
        {
            struct stat st;
            assert_int_equal(lstat(out, &st), 0);
            assert_true(S_ISLNK(st.st_mode));
        }
        expect_replaced(target, fresh, w->same_each_run);
        unlink(out);
        unlink(target);
        unlink(fresh);
        free(out);
        free(fresh);
        free(target);
    }
}

/* An index is written beside its path and renamed over it: a device (/dev/null) or a
   FIFO there is refused, never replaced (as root, the rename would succeed). */
static void test_index_never_replaces_a_device(void **state) {
    struct stat st;
    int before = dir_entries();
    (void)state;
    assert_int_equal(mkfifo(tu_workdir_path("fifo"), 0600), 0);
    frames_here(1, "not a regular file", "index t.frames -o fifo");
    assert_int_equal(lstat(tu_workdir_path("fifo"), &st), 0);
    assert_true(S_ISFIFO(st.st_mode));
    unlink(tu_workdir_path("fifo"));
    assert_int_equal(dir_entries(), before);   /* no temporary file left */
}

/* Killed (SIGTERM, SIGHUP; SIGINT too, which a shell's background job ignores) while its
   output is open: the temporary file goes too. The input is a FIFO nobody writes, so the
   command waits with its output open. */
static void test_interrupted(void **state) {
    static const char *const sigs[] = {"TERM", "HUP"};
    size_t i;
    (void)state;
    /* the command keeps a signal ignored when it starts with it ignored, as nohup wants:
       under `nohup ./build.sh test` SIGHUP would not end it and the wait below would
       never return, so the command gets both signals' default */
    signal(SIGHUP, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    assert_int_equal(mkfifo(tu_workdir_path("never"), 0600), 0);
    for (i = 0; i < 2; i++) {
        int status, before = dir_entries();
        char *text = tu_run(&status,
                            "cd '%s' && { '%s' slice never -o cut.frames & pid=$!; n=0; "
                            "while [ -z \"$(ls cut.frames.* 2>/dev/null)\" ] && [ $n -lt 500 ]; do sleep 0.01; n=$((n+1)); done; "
                            "ls cut.frames.* 2>/dev/null | wc -l; kill -%s $pid; wait $pid; echo \"exit $?\"; } 2>/dev/null",
                            tu_workdir, tu_frames_bin(), sigs[i]);
        /* the temporary file was there, then the signal ended the command and removed it */
        if (strncmp(text, "1\nexit ", 7)) fail_msg("SIG%s: %s", sigs[i], text);
        assert_int_not_equal(strcmp(text + 7, "0\n"), 0);
        free(text);
        assert_int_equal(dir_entries(), before);
    }
    unlink(tu_workdir_path("never"));
}

/* A new output gets the permissions a new file gets (0666 less the umask), not the
   temporary file's 0600. */
static void test_new_output_mode(void **state) {
    struct stat st;
    int status;
    (void)state;
    free(tu_run(&status, "cd '%s' && umask 027 && '%s' slice t.frames --frames 0-5 -o mode.frames",
                tu_workdir, tu_frames_bin()));
    assert_int_equal(status, 0);
    assert_int_equal(stat(tu_workdir_path("mode.frames"), &st), 0);
    assert_int_equal(st.st_mode & 0777, 0640);
    unlink(tu_workdir_path("mode.frames"));
}

#ifdef FRAMES_HAVE_ZSTD
/* t.frames.zst with its chunk k corrupt into `bad`; *first and *end: the frames the chunk
   holds (from the plain reader's offsets and the chunk's place in the trace). */
static void make_damaged(const char *bad, uint64_t k, uint64_t *first, uint64_t *end,
                         uint64_t *total) {
    const char *z = tu_workdir_path("t.frames.zst");
    frames_reader *r, *p;
    frames_error err;
    const frames_zstd_chunk *c;
    frames_raw raw;
    unsigned char *b;
    size_t n, j;
    assert_int_equal(frames_zstd_reader_open_path(&r, z, NULL, NULL, NULL, &err), 0);
    assert_true(frames_zstd_map_info_get(frames_zstd_reader_map(r))->chunks > k + 2);
    c = frames_zstd_map_chunk_at(frames_zstd_reader_map(r), k);
    assert_non_null(c);
    b = tu_read_file(z, &n);
    for (j = 0; j < 16; j++) b[c->offset + c->csize / 2 + j] ^= 0x5a;
    assert_int_equal(tu_write_file(bad, b, n), 0);
    free(b);
    assert_int_equal(frames_reader_open_path(&p, vector(), NULL, &err), 0);
    *first = *end = *total = 0;
    while (frames_reader_next_raw(p, &raw) > 0) {
        if (raw.offset < c->uoffset) *first = *end = raw.index + 1;
        else if (raw.offset < c->uoffset + c->usize) *end = raw.index + 1;
        *total = raw.index + 1;
    }
    assert_true(*first > 0 && *end > *first && *total > *end);
    frames_reader_close(p);
    frames_reader_close(r);
}

/* A failure after writing started (the input's chunk 5 is corrupt): exit 1, the old
   output as it was, no temporary file. */
static void test_failure_keeps_old_output(void **state) {
    static const char precious[] = "the old output\n";
    char *bad = work("bad.frames.zst"), *out = work("out");
    uint64_t first, end, total;
    size_t i;
    (void)state;
    make_damaged(bad, 5, &first, &end, &total);
    for (i = 0; i < sizeof writers / sizeof writers[0]; i++) {
        const writer_cmd *w = &writers[i];
        int before;
        if (!w->fails_midway) continue;
        assert_int_equal(tu_write_file(out, precious, sizeof precious - 1), 0);
        before = dir_entries();
        expect_run(w, "bad.frames.zst", "out", "-f", 1, "corrupt");
        assert_int_equal(dir_entries(), before);
        {
            size_t n;
            unsigned char *got = tu_read_file(out, &n);
            assert_int_equal(n, sizeof precious - 1);
            assert_memory_equal(got, precious, n);
            free(got);
        }
        /* and without an old output, no file at all */
        unlink(out);
        expect_run(w, "bad.frames.zst", "out", "", 1, "corrupt");
        assert_int_equal(access(out, F_OK), -1);
    }
    /* export: the tables of a failed export are not written */
    {
        int st;
        char *text = tu_run(&st, "cd '%s' && '%s' export bad.frames.zst --parquet pq 2>&1", tu_workdir,
                            tu_frames_bin());
        assert_int_equal(st, 1);
        free(text);
        text = tu_run(&st, "ls -A '%s/pq'", tu_workdir);
        assert_string_equal(text, "");
        free(text);
        rmdir(tu_workdir_path("pq"));
    }
    unlink(bad);
    free(bad);
    free(out);
}

/* frames fix of a .frames.zst whose chunk 5 is corrupt: every other frame, in order and
   byte for byte as in the original, in a finished trace; exit 1 naming the loss. In place,
   the damaged file is kept. */
static void test_fix_damaged(void **state) {
    char *bad = work("bad.frames.zst"), *keep = work("keep.zst"), *out = work("fixed.frames");
    uint64_t first, end, total, i = 0;
    frames_reader *p, *f;
    frames_reader_info st;
    frames_error err;
    frames_raw a, b;
    char *text;
    int status;
    (void)state;
    make_damaged(bad, 5, &first, &end, &total);
    copy_file(bad, keep);
    text = tu_run(&status, "'%s' fix '%s' -o '%s' 2>&1", tu_frames_bin(), bad, out);
    assert_int_equal(status, 1);
    assert_non_null(strstr(text, "is damaged"));
    free(text);
    assert_int_equal(frames_reader_open_path(&p, vector(), NULL, &err), 0);
    assert_int_equal(frames_reader_open_path(&f, out, NULL, &err), 0);
    assert_int_equal(frames_reader_info_get(f, &st), 0);
    assert_true(st.finished);
    assert_int_equal(st.nwarnings, 0);
    while (frames_reader_next_raw(p, &a) > 0) {
        if (a.index >= first && a.index < end) continue;   /* the corrupt chunk's frames */
        assert_int_equal(frames_reader_next_raw(f, &b), 1);
        assert_int_equal(a.payload.len, b.payload.len);
        assert_memory_equal(a.payload.ptr, b.payload.ptr, a.payload.len);
        i++;
    }
    assert_int_equal(frames_reader_next_raw(f, &b), 0);
    assert_int_equal(i, total - (end - first));
    frames_reader_close(p);
    frames_reader_close(f);
    /* in place: the damaged file may hold more than a reader gets from it: kept */
    text = tu_run(&status, "'%s' fix '%s' 2>&1", tu_frames_bin(), bad);
    assert_int_equal(status, 1);
    assert_non_null(strstr(text, "left as it was"));
    free(text);
    assert_true(tu_same_bytes(bad, keep));
    unlink(bad);
    unlink(keep);
    unlink(out);
    free(bad);
    free(keep);
    free(out);
}

/* frames info on the same file: the loss is a problem (text and JSON) and exit 1. */
static void test_info_damaged(void **state) {
    char *bad = work("bad.frames.zst"), want[64];
    uint64_t first, end, total;
    char *text;
    int status;
    (void)state;
    make_damaged(bad, 5, &first, &end, &total);
    text = tu_run(&status, "'%s' info '%s' 2>/dev/null", tu_frames_bin(), bad);
    assert_int_equal(status, 1);
    assert_null(strstr(text, "problems: none"));
    snprintf(want, sizeof want, "%llu frames could not be read", (unsigned long long)(end - first));
    assert_non_null(strstr(text, want));
    free(text);
    text = tu_run(&status, "'%s' info --json '%s' 2>/dev/null", tu_frames_bin(), bad);
    assert_int_equal(status, 1);
    assert_null(strstr(text, "\"problems\":[]"));
    snprintf(want, sizeof want, "\"frames_read\":%llu,\"unreadable_frames\":%llu",
             (unsigned long long)(total - (end - first)), (unsigned long long)(end - first));
    assert_non_null(strstr(text, want));
    free(text);
    unlink(bad);
    free(bad);
}

/* frames split on the same file: every range it prints can be sliced, together they are
   every frame but the corrupt chunk's, and it exits 1 naming the damage. */
static void test_split_damaged(void **state) {
    char *bad = work("bad.frames.zst"), *text, *line;
    uint64_t first, end, total, covered = 0;
    int status, ranges = 0;
    (void)state;
    make_damaged(bad, 5, &first, &end, &total);
    text = tu_run(&status, "'%s' split '%s' --chunks 1000 2>/dev/null", tu_frames_bin(), bad);
    assert_int_equal(status, 1);
    for (line = text; *line; line = strchr(line, '\n') + 1) {
        unsigned long long a, b;
        int st;
        char *slice;
        assert_int_equal(sscanf(line, "%llu-%llu", &a, &b), 2);
        assert_true(b <= first || a >= end);   /* no printed range meets the damage */
        covered += b - a;
        slice = tu_run(&st, "'%s' slice '%s' --frames %llu-%llu -o - | '%s' stat - >/dev/null 2>&1",
                       tu_frames_bin(), bad, a, b, tu_frames_bin());
        assert_int_equal(st, 0);
        free(slice);
        ranges++;
    }
    assert_true(ranges > 1);
    assert_int_equal(covered, total - (end - first));
    free(text);
    text = tu_run(&status, "'%s' split '%s' --chunks 4 2>&1 >/dev/null", tu_frames_bin(), bad);
    assert_non_null(strstr(text, "is damaged"));
    free(text);
    unlink(bad);
    free(bad);
}

/* compress refuses what is not a trace, decompress an empty file (as zstd -d does):
   exit 1, no output. */
static void test_compress_non_traces(void **state) {
    char *rnd = work("random.bin"), *empty = work("empty");
    unsigned char bytes[4096];
    size_t i;
    int status;
    (void)state;
    for (i = 0; i < sizeof bytes; i++) bytes[i] = (unsigned char)(i * 2654435761u >> 13);
    assert_int_equal(tu_write_file(rnd, bytes, sizeof bytes), 0);
    assert_int_equal(tu_write_file(empty, "", 0), 0);
    frames_here(1, "not a frames trace", "compress random.bin");
    assert_int_equal(access(tu_workdir_path("random.bin.zst"), F_OK), -1);
    frames_here(1, NULL, "compress empty");
    assert_int_equal(access(tu_workdir_path("empty.zst"), F_OK), -1);
    frames_here(1, NULL, "compress - -o out.zst < random.bin");
    assert_int_equal(access(tu_workdir_path("out.zst"), F_OK), -1);
    /* the judge: zstd -d fails on an empty file too */
    free(tu_run(&status, "zstd -q -d -c '%s' > /dev/null 2>&1", empty));
    assert_int_not_equal(status, 0);
    frames_here(1, "empty", "decompress empty -o out");
    assert_int_equal(access(tu_workdir_path("out"), F_OK), -1);
    unlink(rnd);
    unlink(empty);
    free(rnd);
    free(empty);
}
#endif

/* tenet of a thread the trace does not have: an error, no file. */
static void test_tenet_missing_thread(void **state) {
    char *text;
    int status;
    (void)state;
    text = tu_run(&status, "cd '%s' && '%s' tenet t.frames --tid 99 -o t.log 2>&1", tu_workdir, tu_frames_bin());
    assert_int_equal(status, 1);
    assert_non_null(strstr(text, "thread 99"));
    assert_null(strstr(text, "converted"));
    free(text);
    assert_int_equal(access(tu_workdir_path("t.log"), F_OK), -1);
}

#ifdef FRAMES_HAVE_IPT
/* pt with an image that is a directory, or at an address where the trace runs nothing:
   an error, no file (ptxed's own vector decodes 10 instructions at the right address). */
static void test_pt_nothing_decoded(void **state) {
    (void)state;
    frames_here(1, "a directory, not a file", "pt --raw .:0x100000 --pt trace.pt -o o.frames");
    frames_here(1, "no instruction decoded",
                "pt --raw image-0x100000.bin:0x200000 --pt trace.pt -o o.frames");
    assert_int_equal(access(tu_workdir_path("o.frames"), F_OK), -1);
    frames_here(0, "10 instructions", "pt --raw image-0x100000.bin:0x100000 --pt trace.pt -o o.frames");
    unlink(tu_workdir_path("o.frames"));
}
#endif

/* Every command that prints, and every writer to standard output or straight into a full
   device: exit 1 with one line that names the error. */
static void test_full_disk(void **state) {
    static const char *const commands[] = {
        "info t.frames > /dev/full",
        "info --json t.frames > /dev/full",
        "dump t.frames > /dev/full",
        "dump --pc t.frames > /dev/full",
        "stat t.frames > /dev/full",
        "split t.frames --chunks 4 > /dev/full",
        "vprof t.frames > /dev/full",
        "query t.frames --var a:reg32 --count > /dev/full",
        "index t.frames -o t.fqidx -f --json > /dev/full",
        "slice t.frames -o - > /dev/full",
        "cat t.frames - > /dev/full",
        "fix t.frames -o - > /dev/full",
        "tenet t.frames > /dev/full",
        "drcov t.frames -o - > /dev/full",
        "compress t.frames -o - > /dev/full",
        "decompress t.frames.zst -o - > /dev/full",
        "slice t.frames -o /dev/full",
        "cat t.frames /dev/full",
        "fix t.frames -o /dev/full",
        "tenet t.frames -o /dev/full",
        "drcov t.frames -o /dev/full",
        "compress t.frames -o /dev/full",
        "decompress t.frames.zst -o /dev/full",
        "dump --help > /dev/full",
        "--help > /dev/full",
#ifdef FRAMES_HAVE_IPT
        "pt --raw image-0x100000.bin:0x100000 --pt trace.pt -o /dev/full",
        "pt --raw image-0x100000.bin:0x100000 --pt trace.pt -o /dev/null --json > /dev/full",
#endif
    };
    size_t i;
    (void)state;
    for (i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        int status;
        char *text = tu_run(&status, "cd '%s' && '%s' %s 2>errors.txt", tu_workdir, tu_frames_bin(), commands[i]);
        char *errors;
        free(text);
        if (status != 1) fail_msg("frames %s: exit %d, not 1", commands[i], status);
        /* the error lines (warnings aside): one, naming the cause */
        errors = tu_run(&status, "grep -v 'warning:' '%s'", tu_workdir_path("errors.txt"));
        if (!strstr(errors, "No space left on device") || strchr(errors, '\n') != errors + strlen(errors) - 1)
            fail_msg("frames %s: not one line naming the cause:\n%s", commands[i], errors);
        free(errors);
        unlink(tu_workdir_path("errors.txt"));
    }
}

#if defined(__linux__) && defined(__x86_64__)
/* `frames record` under the same rule: an existing trace is kept without -f, the output
   may not be the program nor a file its arguments name, a trace that cannot be created leaves nothing (exit 125), and
   an interrupted recording (Ctrl-C ends a recording) still gives a finished trace. */
static void test_record_output(void **state) {
    static const char precious[] = "yesterday's trace\n";
    char *old = work("old.frames"), *text;
    size_t n;
    unsigned char *got;
    int status, before;
    (void)state;
    if (!tu_vg_tool_built()) skip();
    assert_int_equal(tu_write_file(old, precious, sizeof precious - 1), 0);
    before = dir_entries();
    frames_here(2, "old.frames exists: give -f (--force)", "record -o old.frames -- /bin/true");
    got = tu_read_file(old, &n);
    assert_int_equal(n, sizeof precious - 1);
    assert_memory_equal(got, precious, n);
    free(got);
    assert_int_equal(dir_entries(), before);
    /* the program itself, through another spelling */
    copy_file("/bin/true", tu_workdir_path("prog"));
    assert_int_equal(chmod(tu_workdir_path("prog"), 0755), 0);
    frames_here(2, "refused", "record -f -o prog -- ./prog");
    text = tu_run(&status, "cmp /bin/true '%s'", tu_workdir_path("prog"));
    assert_int_equal(status, 0);
    free(text);
    /* a file the program is given, as an argument or as --name=FILE, even with -f */
    frames_here(2, "refused", "record -f -o old.frames -- /bin/cat old.frames");
    frames_here(2, "refused", "record -f -o ./old.frames -- /bin/true --in=old.frames");
    got = tu_read_file(old, &n);
    assert_int_equal(n, sizeof precious - 1);
    assert_memory_equal(got, precious, n);
    free(got);
    /* a folder that does not exist: nothing is created, the status says no trace */
    frames_here(125, NULL, "record -o no/such/t.frames -- /bin/true");
    /* -f replaces it with a trace the reader takes, and no temporary file stays */
    text = tu_run(&status, "cd '%s' && '%s' record -f --quiet -o old.frames -- /bin/true && '%s' info old.frames 2>&1",
                  tu_workdir, tu_frames_bin(), tu_frames_bin());
    assert_int_equal(status, 0);
    assert_non_null(strstr(text, "problems: none"));
    free(text);
    assert_int_equal(dir_entries(), before + 1);   /* prog */
    /* interrupted: the program is killed, the trace finished and put in place */
    text = tu_run(&status,
                  "cd '%s' && { '%s' record -o int.frames -- sleep 30 2>/dev/null & pid=$!; n=0; "
                  "while [ -z \"$(ls int.frames.* 2>/dev/null)\" ] && [ $n -lt 1000 ]; do sleep 0.01; n=$((n+1)); done; "
                  "sleep 1; kill -INT $pid; wait $pid; echo \"exit $?\"; ls int.frames*; } 2>&1",
                  tu_workdir, tu_frames_bin());
    if (strcmp(text, "exit 130\nint.frames\n")) fail_msg("interrupted record: %s", text);
    free(text);
    frames_here(0, NULL, "info int.frames");
    unlink(tu_workdir_path("int.frames"));
    unlink(tu_workdir_path("prog"));
    unlink(old);
    free(old);
}
#endif

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_output_is_input),
        cmocka_unit_test(test_existing_output),
        cmocka_unit_test(test_new_output_mode),
        cmocka_unit_test(test_interrupted),
        cmocka_unit_test(test_index_never_replaces_a_device),
#ifdef FRAMES_HAVE_ZSTD
        cmocka_unit_test(test_failure_keeps_old_output),
        cmocka_unit_test(test_fix_damaged),
        cmocka_unit_test(test_info_damaged),
        cmocka_unit_test(test_split_damaged),
        cmocka_unit_test(test_compress_non_traces),
#endif
        cmocka_unit_test(test_tenet_missing_thread),
#ifdef FRAMES_HAVE_IPT
        cmocka_unit_test(test_pt_nothing_decoded),
#endif
        cmocka_unit_test(test_full_disk),
#if defined(__linux__) && defined(__x86_64__)
        cmocka_unit_test(test_record_output),
#endif
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
