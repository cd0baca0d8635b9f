/* test_crash - a child process writing a trace is killed with SIGKILL at random points.
   The reader must recover every frame the child had flushed (and nothing that is not a
   frame it wrote), and `frames fix` / frames_fix must turn the file into a finished trace
   holding exactly those frames.

   The child reports through a pipe how many frames each frames_writer_flush has handed
   to the kernel; SIGKILL does not lose data already written, so at least that many
   frames must come back. Frames are a function of their index (kinds, operand lists,
   sizes from a few bytes to 100 KiB, so kills land inside records and inside buffer
   writes), and each recovered payload must equal the encoding of that frame.
   FRAMES_CRASH_SEED=N repeats a run; the seed is printed on failure. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/types.h>
#include <time.h>

#include "frames.h"
#include "testutil.h"

#define BIG 100000

static uint8_t big_bytes[BIG];
static int no_big_frames; /* make_frame: 15 bytes at most instead of 100 KB */

/* Frame i (views into static storage, valid until the next call). */
static void make_frame(uint64_t i, frames_frame *f) {
    static frames_operand ops[3];
    static int64_t args[4];
    static uint8_t value[8];
    static const char *const regs[] = {"RAX", "RBX", "R15"};
    size_t k;
    memset(f, 0, sizeof *f);
    switch (i % 5) {
    case 0:
    case 1:
    case 2:
        f->kind = FRAMES_KIND_STD;
        f->std.address = 0x400000 + i * 3;
        f->std.thread_id = 1 + i % 3;
        /* mostly small, every 41st frame 100 KB: larger than the writer's buffer */
        f->std.rawbytes = frames_bytes_of(big_bytes, i % 41 == 40 && !no_big_frames ? BIG : 1 + i % 15);
        for (k = 0; k < 3; k++) {
            memset(&ops[k], 0, sizeof ops[k]);
            ops[k].spec = FRAMES_REG;
            ops[k].name = frames_str(regs[k]);
            ops[k].bit_length = 64;
            ops[k].read = 1;
            ops[k].value = frames_bytes_of(value, 8);
        }
        memcpy(value, &i, sizeof value < sizeof i ? sizeof value : sizeof i);
        f->std.pre = ops;
        f->std.npre = (uint32_t)(i % 4);
        f->std.has_post = i % 2 == 0;
        f->std.post = ops;
        f->std.npost = (uint32_t)(i % 3);
        break;
    case 3:
        f->kind = FRAMES_KIND_SYSCALL;
        f->syscall.address = i;
        f->syscall.number = i % 300;
        for (k = 0; k < 4; k++) args[k] = (int64_t)(i * 7 + k) - 100;
        f->syscall.args = args;
        f->syscall.nargs = (uint32_t)(i % 5);
        break;
    default:
        f->kind = FRAMES_KIND_MODLOAD;
        f->modload.module_name = frames_str("/lib/x86_64-linux-gnu/libc.so.6");
        f->modload.low_address = i << 12;
        f->modload.high_address = (i << 12) + 0x1000;
        break;
    }
}

/* The bytes the writer writes for frame i (caller frees). */
static uint8_t *encoded_frame(uint64_t i, size_t *len) {
    frames_frame f;
    uint8_t *b;
    make_frame(i, &f);
    *len = frames_frame_size(&f);
    b = malloc(*len);
    assert_non_null(b);
    assert_int_equal(frames_encode_frame(&f, 0, b, *len, len, NULL), FRAMES_OK);
    return b;
}

/* The child: write frames forever (or `limit` of them, then finish), flushing every
   `every` frames and reporting the flushed count on fd `report`. */
static void child_write(const char *path, int report, unsigned every, uint64_t limit) {
    frames_writer *w;
    frames_frame f;
    frames_writer_options o;
    uint64_t i;
    frames_writer_options_default(&o);
    o.frames_per_toc = 16;
    if (frames_writer_open_path(&w, path, &o, NULL, NULL) < 0) _exit(3);
    for (i = 0; limit == 0 || i < limit; i++) {
        make_frame(i, &f);
        if (frames_writer_add(w, &f) < 0) _exit(4);
        if ((i + 1) % every == 0) {
            uint64_t n = i + 1;
            if (frames_writer_flush(w) < 0) _exit(5);
            if (write(report, &n, sizeof n) != (ssize_t)sizeof n) _exit(6);
        }
    }
    if (frames_writer_close(w) < 0) _exit(7);
    _exit(0);
}

/* Last count the child reported before it died. */
static uint64_t drain_reports(int fd) {
    uint64_t n, last = 0;
    while (read(fd, &n, sizeof n) == (ssize_t)sizeof n) last = n;
    return last;
}

/* Every record of the file at path is frame 0, 1, 2, ... in order; returns how many. */
static uint64_t check_frames(const char *path, uint64_t at_least, unsigned seed, int *finished) {
    frames_reader *r;
    frames_reader_info st;
    frames_raw raw;
    frames_error err;
    uint64_t n = 0;
    int rc;
    if (frames_reader_open_path(&r, path, NULL, &err) < 0)
        fail_msg("seed %u: cannot open %s: %s", seed, path, err.message);
    while ((rc = frames_reader_next_raw(r, &raw)) > 0) {
        size_t len;
        uint8_t *want = encoded_frame(n, &len);
        if (raw.payload.len != len || memcmp(raw.payload.ptr, want, len) != 0)
            fail_msg("seed %u: %s: frame %llu differs from what was written", seed, path,
                     (unsigned long long)n);
        free(want);
        n++;
    }
    if (rc < 0) fail_msg("seed %u: %s: %s", seed, path, frames_reader_error(r)->message);
    if (n < at_least)
        fail_msg("seed %u: %s: %llu frames recovered, %llu had been flushed", seed, path,
                 (unsigned long long)n, (unsigned long long)at_least);
    assert_int_equal(frames_reader_info_get(r, &st), FRAMES_OK);
    assert_int_equal(st.nframes, n);
    *finished = st.finished && st.toc_used && st.header.nframes == n;
    frames_reader_close(r);
    return n;
}

/* frames_fix into a file (library level) and `frames fix` (the command, -o and in place):
   each gives a finished trace with exactly the recovered frames. */
static void check_fix(const char *path, uint64_t n, unsigned seed) {
    const char *out = tu_tmp_path(".fixed"), *copy = tu_tmp_path(".inplace");
    frames_reader *r;
    frames_fix_report rep;
    frames_sink sink;
    frames_error err;
    char *text;
    int fd, status, finished;
    size_t len = 0;
    uint8_t *bytes;

    assert_int_equal(frames_reader_open_path(&r, path, NULL, &err), FRAMES_OK);
    fd = open(out, O_RDWR | O_CREAT | O_TRUNC, 0600);
    assert_true(fd >= 0);
    sink = frames_sink_fd(fd);
    if (frames_fix(r, &sink, NULL, &rep, &err) != FRAMES_OK)
        fail_msg("seed %u: frames_fix: %s", seed, err.message);
    assert_int_equal(rep.frames, n);
    close(fd);
    frames_reader_close(r);
    assert_int_equal(check_frames(out, n, seed, &finished), n);
    if (!finished) fail_msg("seed %u: frames_fix output is not a finished trace", seed);
    unlink(out);

    text = tu_run(&status, "'%s' fix '%s' -o '%s' 2>&1", tu_frames_bin(), path, out);
    if (status != 0) fail_msg("seed %u: frames fix -o exited %d: %s", seed, status, text);
    free(text);
    assert_int_equal(check_frames(out, n, seed, &finished), n);
    if (!finished) fail_msg("seed %u: frames fix -o output is not a finished trace", seed);
    unlink(out);

    bytes = tu_read_file(path, &len);
    assert_non_null(bytes);
    assert_int_equal(tu_write_file(copy, bytes, len), 0);
    free(bytes);
    text = tu_run(&status, "'%s' fix '%s' 2>&1", tu_frames_bin(), copy);
    if (status != 0) fail_msg("seed %u: frames fix (in place) exited %d: %s", seed, status, text);
    free(text);
    assert_int_equal(check_frames(copy, n, seed, &finished), n);
    if (!finished) fail_msg("seed %u: frames fix in place left an unfinished trace", seed);
    unlink(copy);
}

/* Does path open as a trace? If not, it must be for a reason a killed writer explains:
   no file yet, an empty file, or a header or meta frame cut short. */
static int opens(const char *path) {
    frames_reader *r;
    frames_error err;
    int rc = frames_reader_open_path(&r, path, NULL, &err);
    if (rc == FRAMES_OK) {
        frames_reader_close(r);
        return 1;
    }
    assert_true(rc == FRAMES_E_IO || rc == FRAMES_E_FORMAT || rc == FRAMES_E_TRUNCATED);
    return 0;
}

static unsigned crash_seed(void) {
    const char *s = getenv("FRAMES_CRASH_SEED");
    struct timeval tv;
    if (s && *s) return (unsigned)strtoul(s, NULL, 10);
    gettimeofday(&tv, NULL);
    return (unsigned)(tv.tv_sec ^ tv.tv_usec ^ getpid());
}

/* One run: start a writer, kill it after `reports` flush reports plus `delay_us`, or let it
   finish `limit` frames (killed maybe during finish). */
static void crash_once(unsigned seed, unsigned every, unsigned reports, unsigned delay_us,
                       uint64_t limit) {
    const char *path = tu_tmp_path(".frames");
    int fds[2], status, finished;
    uint64_t flushed = 0, n, got;
    unsigned seen = 0;
    pid_t pid;
    assert_int_equal(pipe(fds), 0);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(fds[0]);
        child_write(path, fds[1], every, limit);
    }
    close(fds[1]);
    while (seen < reports && read(fds[0], &got, sizeof got) == (ssize_t)sizeof got) {
        flushed = got;
        seen++;
    }
    if (delay_us) usleep(delay_us);
    kill(pid, SIGKILL);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    n = drain_reports(fds[0]);
    if (n > flushed) flushed = n;
    close(fds[0]);
    if (WIFEXITED(status) && WEXITSTATUS(status) != 0)
        fail_msg("seed %u: the writer failed with status %d", seed, WEXITSTATUS(status));
    if (flushed == 0 && !opens(path)) { /* killed before the header was out: no trace */
        char *text = tu_run(&status, "'%s' fix '%s' 2>&1", tu_frames_bin(), path);
        assert_int_equal(status, 1);
        free(text);
        unlink(path);
        return;
    }
    n = check_frames(path, flushed, seed, &finished);
    if (getenv("FRAMES_CRASH_VERBOSE")) {
        struct stat sb;
        stat(path, &sb);
        fprintf(stderr, "crash: %s, %llu frames flushed, %llu recovered, file %lld bytes%s\n",
                WIFEXITED(status) ? "exited" : "killed", (unsigned long long)flushed,
                (unsigned long long)n, (long long)sb.st_size, finished ? ", finished" : "");
    }
    if (WIFEXITED(status)) { /* it finished before the kill */
        assert_int_equal(n, limit);
        if (!finished) fail_msg("seed %u: a writer that exited left no finished trace", seed);
    }
    check_fix(path, n, seed);
    unlink(path);
}

static void test_sigkill_at_random_points(void **state) {
    unsigned seed = crash_seed(), run;
    (void)state;
    srand(seed);
    for (run = 0; run < 24; run++) {
        unsigned every = 1 + (unsigned)rand() % 9;
        unsigned reports = (unsigned)rand() % 40;
        unsigned delay = (unsigned)rand() % 3 ? (unsigned)rand() % 3000 : 0;
        crash_once(seed, every, reports, delay, 0);
    }
}

/* Writers that reach finish (or are killed during it): always readable, finished when
   they exited. */
static void test_sigkill_around_finish(void **state) {
    unsigned seed = crash_seed(), run;
    (void)state;
    srand(seed);
    for (run = 0; run < 12; run++) {
        unsigned limit = 1 + (unsigned)rand() % 200, every = 1 + (unsigned)rand() % 5;
        /* kill after the last report, while the writer finishes or after it exited */
        crash_once(seed, every, limit / every, (unsigned)rand() % 2000, limit);
    }
}

/* Killed before the first frame: a header and meta only, or an empty file. */
static void test_sigkill_before_any_frame(void **state) {
    const char *path = tu_tmp_path(".frames");
    frames_writer *w;
    frames_reader *r;
    frames_raw raw;
    pid_t pid;
    int status;
    char *text;
    (void)state;
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (frames_writer_open_path(&w, path, NULL, NULL, NULL) < 0) _exit(3);
        raise(SIGKILL);
        _exit(4);
    }
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    assert_int_equal(frames_reader_open_path(&r, path, NULL, NULL), FRAMES_OK);
    assert_int_equal(frames_reader_next_raw(r, &raw), 0);
    frames_reader_close(r);
    check_fix(path, 0, 0);
    /* an empty file is not a trace: fix refuses it with a data error */
    assert_int_equal(truncate(path, 0), 0);
    text = tu_run(&status, "'%s' fix '%s' 2>&1", tu_frames_bin(), path);
    assert_int_equal(status, 1);
    free(text);
    unlink(path);
}

/* The states a crash inside frames_writer_finish can leave (it writes the TOC, then n,
   then T): every frame must come back, nothing else, and fix must finish the trace. */
static int mem_write(void *ctx, const void *data, size_t len) {
    FILE *f = ctx;
    return fwrite(data, 1, len, f) == len ? FRAMES_OK : FRAMES_E_IO;
}
static int mem_patch(void *ctx, uint64_t off, const void *data, size_t len) {
    FILE *f = ctx;
    long end = ftell(f);
    if (fseek(f, (long)off, SEEK_SET) || fwrite(data, 1, len, f) != len) return FRAMES_E_IO;
    return fseek(f, end, SEEK_SET) ? FRAMES_E_IO : FRAMES_OK;
}

/* (with m below 8, a TOC cut before its first whole entry reads as a complete record of
   m bytes with no entry to recognise it by: those cuts are left out; docs/security.md) */
static void test_crash_inside_finish(void **state) {
    static const uint64_t ms[] = {8, 16, 64, 10000, 1, 3};
    static const uint64_t counts[] = {1, 2, 17, 33, 100, 301};
    size_t a, b;
    (void)state;
    no_big_frames = 1; /* a file per TOC byte: keep them small */
    for (a = 0; a < sizeof ms / sizeof ms[0]; a++) {
        for (b = 0; b < sizeof counts / sizeof counts[0]; b++) {
            const char *path = tu_tmp_path(".frames");
            frames_writer_options o;
            frames_writer *w;
            frames_sink sink;
            frames_frame f;
            FILE *file = fopen(path, "w+b");
            uint8_t *bytes;
            size_t len = 0, toc_start, cut;
            uint64_t i, n = counts[b];
            int finished, step;
            assert_non_null(file);
            frames_writer_options_default(&o);
            o.frames_per_toc = ms[a];
            memset(&sink, 0, sizeof sink);
            sink.ctx = file;
            sink.write = mem_write;
            sink.patch = mem_patch;
            assert_int_equal(frames_writer_open(&w, &sink, &o, NULL, NULL), FRAMES_OK);
            for (i = 0; i < n; i++) {
                make_frame(i, &f);
                assert_int_equal(frames_writer_add(w, &f), FRAMES_OK);
            }
            assert_int_equal(frames_writer_flush(w), FRAMES_OK);
            toc_start = (size_t)ftell(file);
            assert_int_equal(frames_writer_close(w), FRAMES_OK);
            fclose(file);
            bytes = tu_read_file(path, &len);
            assert_non_null(bytes);
            /* 1: TOC written up to `cut`, header untouched; 2: n patched, T not */
            for (step = 0; step < 2; step++) {
                cut = toc_start + (ms[a] < 8 && n > ms[a] ? 16 : 0);
                for (; cut <= len; cut += step ? len : 1) {
                    uint8_t *copy = malloc(len);
                    memcpy(copy, bytes, len);
                    memset(copy + 40, 0, 8); /* T = 0 */
                    if (step == 0) memset(copy + 32, 0, 8); /* n = 0 */
                    assert_int_equal(tu_write_file(path, copy, step ? len : cut), 0);
                    free(copy);
                    if (getenv("FRAMES_CRASH_VERBOSE"))
                        fprintf(stderr, "m %llu n %llu step %d cut %zu (TOC at %zu, end %zu)\n",
                                (unsigned long long)ms[a], (unsigned long long)n, step, cut,
                                toc_start, len);
                    if (check_frames(path, n, 0, &finished) != n)
                        fail_msg("m %llu, %llu frames, crash at %zu: wrong frame count",
                                 (unsigned long long)ms[a], (unsigned long long)n, cut);
                    assert_false(finished);
                }
            }
            check_fix(path, n, 0);
            free(bytes);
            unlink(path);
        }
    }
    no_big_frames = 0;
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sigkill_before_any_frame),
        cmocka_unit_test(test_sigkill_at_random_points),
        cmocka_unit_test(test_sigkill_around_finish),
        cmocka_unit_test(test_crash_inside_finish),
    };
    size_t i;
    for (i = 0; i < BIG; i++) big_bytes[i] = (uint8_t)(i * 131 + 7);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
