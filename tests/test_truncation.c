/* test_truncation - every prefix of several reference traces reads back exactly the
   frames that lie wholly inside it, and reports the cut (offset and bytes of the
   incomplete record), with the memory, file (mmap and read()) and stream (FILE*, read
   callback, pipe) readers.

   The expected frames come from the vectors' .txt dumps (written by the upstream
   tooling): "frame N @ 0xOFF size S" gives each frame's record, "first_frame_offset" the
   end of header and meta. */
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "frames.h"
#pragma GCC diagnostic ignored "-Wunused-function" /* testutil.h helpers this suite skips */
#include "testutil.h"

#define MAX_FRAMES 64

typedef struct vector {
    const char *name;
    uint8_t *data;
    size_t size;
    uint64_t first;                 /* first_frame_offset */
    size_t n;                       /* frames */
    uint64_t off[MAX_FRAMES], len[MAX_FRAMES];
    int unfinished;
} vector;

/* Load X.frames and the frame table of X.txt. */
static void load_vector(vector *v, const char *name) {
    char path[256], *txt, *line;
    size_t tlen = 0;
    memset(v, 0, sizeof *v);
    v->name = name;
    snprintf(path, sizeof path, "vectors/frames/%s.frames", name);
    v->data = tu_read_file(tu_shared(path), &v->size);
    assert_non_null(v->data);
    snprintf(path, sizeof path, "vectors/frames/%s.txt", name);
    txt = (char *)tu_read_file(tu_shared(path), &tlen);
    assert_non_null(txt);
    for (line = txt; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
        unsigned long long a, b, c;
        if (sscanf(line, "first_frame_offset: %llu", &a) == 1) v->first = a;
        if (sscanf(line, "frame %llu @ 0x%llx size %llu {", &a, &b, &c) == 3) {
            assert_int_equal(a, v->n);
            assert_true(v->n < MAX_FRAMES);
            v->off[v->n] = b;
            v->len[v->n] = c;
            v->n++;
        }
        if (!strncmp(line, "toc: absent", 11)) v->unfinished = 1;
    }
    free(txt);
    assert_true(v->n > 0 && v->first >= 48 && v->off[0] == v->first);
}

/* What a reader must report for the prefix of `cut` bytes. */
typedef struct expect {
    int opens;          /* header and meta are complete */
    size_t whole;       /* frames wholly inside */
    int truncated;      /* the cut lies inside a record */
    uint64_t t_off, t_bytes;
    int pipe_like;      /* unfinished, only a size word of 10000 present: reads as
                           libtrace's pipe TOC (m), which is not a truncation (frames.h) */
} expect;

static expect expected(const vector *v, size_t cut) {
    expect e;
    memset(&e, 0, sizeof e);
    e.opens = cut >= v->first;
    while (e.whole < v->n && v->off[e.whole] + 8 + v->len[e.whole] <= cut) e.whole++;
    if (e.opens && e.whole < v->n && cut > v->off[e.whole]) {
        e.truncated = 1;
        e.t_off = v->off[e.whole];
        e.t_bytes = cut - v->off[e.whole];
        e.pipe_like = v->unfinished && e.t_bytes == 8 && v->len[e.whole] == 10000 &&
                      (e.whole ? (e.whole - 1) / v->len[e.whole] : 0) == 0;
    }
    return e;
}

/* Read everything from r and compare with the expectation. */
static void check_reader(const vector *v, size_t cut, frames_reader *r, const char *how) {
    expect e = expected(v, cut);
    frames_frame f;
    frames_raw raw;
    frames_reader_info st;
    size_t k = 0;
    int rc;
    while ((rc = frames_reader_next(r, &f)) > 0) {
        if (k >= e.whole) fail_msg("%s %s cut %zu: frame %zu is not wholly inside", v->name, how, cut, k);
        k++;
    }
    if (rc != 0) fail_msg("%s %s cut %zu: %s", v->name, how, cut, frames_reader_error(r)->message);
    if (k != e.whole) fail_msg("%s %s cut %zu: %zu frames, expected %zu", v->name, how, cut, k, e.whole);
    assert_int_equal(frames_reader_next_raw(r, &raw), 0);
    assert_int_equal(frames_reader_info_get(r, &st), FRAMES_OK);
    assert_int_equal(st.nframes, e.whole);
    assert_int_equal(st.frames_decoded, e.whole);
    if (e.pipe_like && !st.truncated) return;
    if (st.truncated != e.truncated || (e.truncated && (st.truncated_offset != e.t_off ||
                                                         st.truncated_bytes != e.t_bytes)))
        fail_msg("%s %s cut %zu: truncated %d at 0x%llx (%llu bytes), expected %d at 0x%llx "
                 "(%llu bytes)", v->name, how, cut, st.truncated,
                 (unsigned long long)st.truncated_offset, (unsigned long long)st.truncated_bytes,
                 e.truncated, (unsigned long long)e.t_off, (unsigned long long)e.t_bytes);
}

/* Random access over a memory-backed prefix: count, seek to every frame, cursors. */
static void check_random_access(const vector *v, size_t cut, frames_reader *r) {
    expect e = expected(v, cut);
    frames_raw raw;
    frames_cursor *c;
    uint64_t n, i;
    assert_int_equal(frames_reader_count(r, &n), FRAMES_OK);
    assert_int_equal(n, e.whole);
    for (i = 0; i < n; i++) {
        assert_int_equal(frames_reader_seek(r, i), FRAMES_OK);
        assert_int_equal(frames_reader_next_raw(r, &raw), 1);
        assert_int_equal(raw.offset, v->off[i]);
        assert_int_equal(raw.payload.len, v->len[i]);
    }
    assert_int_equal(frames_reader_seek(r, n + 1), FRAMES_E_RANGE);
    if (n > 0) {
        assert_int_equal(frames_cursor_open(&c, r, n - 1, NULL), FRAMES_OK);
        assert_int_equal(frames_cursor_next_raw(c, &raw), 1);
        assert_int_equal(raw.offset, v->off[n - 1]);
        assert_int_equal(frames_cursor_next_raw(c, &raw), 0);
        frames_cursor_close(c);
    }
}

static void check_open_failure(const vector *v, size_t cut, int rc, const frames_error *err,
                               const char *how) {
    if (rc >= 0) fail_msg("%s %s cut %zu: opened a file without its header/meta", v->name, how, cut);
    assert_int_equal(rc, cut == 0 ? FRAMES_E_FORMAT : FRAMES_E_TRUNCATED);
    assert_int_equal(err->code, rc);
}

/* ---------------------------------------------------------------- the readers */

static void sweep_memory(const vector *v) {
    size_t cut;
    for (cut = 0; cut <= v->size; cut++) {
        frames_reader *r;
        frames_error err;
        int rc = frames_reader_open_memory(&r, v->data, cut, NULL, &err);
        if (!expected(v, cut).opens) {
            check_open_failure(v, cut, rc, &err, "memory");
            continue;
        }
        assert_int_equal(rc, FRAMES_OK);
        check_reader(v, cut, r, "memory");
        check_random_access(v, cut, r);
        frames_reader_close(r);
    }
}

/* Streams: a read callback returning 1-13 bytes at a time, and a FILE*. */
static void sweep_streams(const vector *v) {
    size_t cut;
    for (cut = 0; cut <= v->size; cut++) {
        frames_reader *r;
        frames_error err;
        tu_trickle s = {v->data, cut, 0, cut % 13 + 1, 13}; /* 1..13 bytes at a time */
        frames_io io = {&s, tu_trickle_read, NULL};
        FILE *f;
        int rc = frames_reader_open_io(&r, &io, NULL, &err);
        if (!expected(v, cut).opens) {
            check_open_failure(v, cut, rc, &err, "callback");
        } else {
            assert_int_equal(rc, FRAMES_OK);
            check_reader(v, cut, r, "callback");
            frames_reader_close(r);
        }
        if (cut == 0) continue; /* fmemopen needs at least one byte */
        f = fmemopen(v->data, cut, "rb");
        assert_non_null(f);
        rc = frames_reader_open_file(&r, f, NULL, &err);
        if (!expected(v, cut).opens) {
            check_open_failure(v, cut, rc, &err, "FILE*");
        } else {
            assert_int_equal(rc, FRAMES_OK);
            check_reader(v, cut, r, "FILE*");
            frames_reader_close(r);
        }
        fclose(f);
    }
}

/* Files: one temporary file truncated to every length, read with mmap and with read(). */
static void sweep_files(const vector *v) {
    const char *path = tu_tmp_path(".frames");
    frames_reader_options o;
    size_t cut;
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600), pass;
    assert_true(fd >= 0);
    assert_int_equal(write(fd, v->data, v->size), (ssize_t)v->size);
    for (cut = v->size + 1; cut-- > 0;) {
        assert_int_equal(ftruncate(fd, (off_t)cut), 0);
        for (pass = 0; pass < 2; pass++) {
            frames_reader *r;
            frames_error err;
            const char *how = pass ? "file read()" : "file mmap";
            int rc;
            frames_reader_options_default(&o);
            if (pass) o.flags |= FRAMES_READ_NO_MMAP;
            rc = frames_reader_open_path(&r, path, &o, &err);
            if (!expected(v, cut).opens) {
                check_open_failure(v, cut, rc, &err, how);
                continue;
            }
            assert_int_equal(rc, FRAMES_OK);
            check_reader(v, cut, r, how);
            if (pass == 0) check_random_access(v, cut, r);
            frames_reader_close(r);
        }
    }
    close(fd);
    unlink(path);
}

/* A real pipe (the fd stream path), cut at every record boundary and 1, 7, 8, 9 bytes
   after it. */
static void sweep_pipes(const vector *v) {
    size_t k, j;
    static const size_t delta[] = {0, 1, 7, 8, 9};
    for (k = 0; k <= v->n; k++) {
        uint64_t at = k < v->n ? v->off[k] : v->off[v->n - 1] + 8 + v->len[v->n - 1];
        for (j = 0; j < sizeof delta / sizeof delta[0]; j++) {
            size_t cut = (size_t)at + delta[j];
            int fds[2];
            pid_t pid;
            frames_reader *r;
            frames_error err;
            int rc, status;
            if (cut > v->size) continue;
            assert_int_equal(pipe(fds), 0);
            pid = fork();
            assert_true(pid >= 0);
            if (pid == 0) {
                close(fds[0]);
                _exit(write(fds[1], v->data, cut) == (ssize_t)cut ? 0 : 1);
            }
            close(fds[1]);
            rc = frames_reader_open_fd(&r, fds[0], NULL, &err);
            assert_int_equal(rc, FRAMES_OK);
            check_reader(v, cut, r, "pipe");
            frames_reader_close(r);
            close(fds[0]);
            assert_int_equal(waitpid(pid, &status, 0), pid);
        }
    }
}

/* ---------------------------------------------------------------- tests */

static const char *const vectors[] = {
    "r02_all_frame_types_x86_64",   /* every frame type, libtrace TOC */
    "r03_extremes_arm",             /* a frame larger than 16 KiB, m = 3 */
    "r05_toc_m4_n10_mips",
    "r09_unfinished_no_finish_call",/* no TOC: n = T = 0 */
    "r11_pintraces_like_x86",
    "tcg_r05_m4_n10",               /* TCG plugin: ceil TOC padded with T */
    "tw_r05_m4_n10",                /* qemu tracewrap, version 2 */
    "rz_r05_zero_pad",              /* TOC padded with 0 */
};
#define NVECTORS (sizeof vectors / sizeof vectors[0])

static void test_memory(void **state) {
    size_t i;
    (void)state;
    for (i = 0; i < NVECTORS; i++) {
        vector v;
        load_vector(&v, vectors[i]);
        sweep_memory(&v);
        free(v.data);
    }
}

static void test_streams(void **state) {
    size_t i;
    (void)state;
    for (i = 0; i < NVECTORS; i++) {
        vector v;
        load_vector(&v, vectors[i]);
        sweep_streams(&v);
        free(v.data);
    }
}

static void test_files(void **state) {
    size_t i;
    (void)state;
    for (i = 0; i < NVECTORS; i++) {
        vector v;
        load_vector(&v, vectors[i]);
        sweep_files(&v);
        free(v.data);
    }
}

static void test_pipes(void **state) {
    size_t i;
    (void)state;
    for (i = 0; i < NVECTORS; i++) {
        vector v;
        load_vector(&v, vectors[i]);
        sweep_pipes(&v);
        free(v.data);
    }
}

/* The expectations themselves: the dumps agree with the reader on the whole files. */
static void test_dumps_match_whole_files(void **state) {
    size_t i, k;
    (void)state;
    for (i = 0; i < NVECTORS; i++) {
        vector v;
        frames_reader *r;
        frames_raw raw;
        load_vector(&v, vectors[i]);
        assert_int_equal(frames_reader_open_memory(&r, v.data, v.size, NULL, NULL), FRAMES_OK);
        assert_int_equal(frames_reader_header(r)->first_frame, v.first);
        for (k = 0; k < v.n; k++) {
            assert_int_equal(frames_reader_next_raw(r, &raw), 1);
            assert_int_equal(raw.offset, v.off[k]);
            assert_int_equal(raw.payload.len, v.len[k]);
        }
        assert_int_equal(frames_reader_next_raw(r, &raw), 0);
        frames_reader_close(r);
        free(v.data);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dumps_match_whole_files),
        cmocka_unit_test(test_memory),
        cmocka_unit_test(test_streams),
        cmocka_unit_test(test_files),
        cmocka_unit_test(test_pipes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
