/* test_container: the container around the frames. Traces are built here with an
   independent byte builder (pbbuild.h) so each convention of the spec can be made
   exactly: truncation, unfinished and pipe-written files, every TOC convention and
   broken TOCs, versions 1-3, bad headers, limits, stream and callback readers, cursors
   on threads; and the writer: conventions and their entry counts (spec §4.4), zero
   frames, non-seekable sinks, whole-frame flushes, and no allocation with caller
   storage (this suite has its own static copy of the implementation with a counting
   allocator). */
#include <pthread.h>

#if defined(__GNUC__)
#pragma GCC diagnostic ignored "-Wunused-function"
#endif
#include "heapcount.h"
#define FRAMES_STATIC
#define FRAMES_IMPLEMENTATION
#include "frames.h"

#include "pbbuild.h"
#include "testutil.h"

/* ---- building traces */

/* exception_frame { exception_number: i } - 4 or more bytes, one per frame index */
static void frame_payload(pb_buf *p, uint64_t i) {
    pb_buf e;
    pb_reset(&e);
    pb_u64(&e, 1, i);
    pb_reset(p);
    pb_msg(p, 3, &e);
}

typedef struct trace {
    pb_buf bytes;
    uint64_t offsets[64]; /* of each frame's size prefix */
    uint64_t n, T;
} trace;

/* A trace with n frames; the header says hdr_n and T is set by the caller via finish. */
static void trace_begin(trace *t, uint64_t version, uint64_t n) {
    pb_buf meta, tracer, p;
    uint64_t i;
    pb_reset(&t->bytes);
    pb_le64(&t->bytes, FRAMES_MAGIC);
    pb_le64(&t->bytes, version);
    pb_le64(&t->bytes, 9);
    pb_le64(&t->bytes, 64);
    pb_le64(&t->bytes, 0);
    pb_le64(&t->bytes, 0);
    if (version != 1) { /* every required field, as libtrace writes them */
        pb_buf target, fstats;
        pb_reset(&tracer);
        pb_str(&tracer, 1, "t");
        pb_str(&tracer, 4, "1");
        pb_reset(&target);
        pb_str(&target, 1, "/bin/a");
        pb_bytes(&target, 4, "0123456789abcdef", 16);
        pb_reset(&fstats);
        pb_sint(&fstats, 1, 4096);
        pb_fixed64(&fstats, 2, 0);
        pb_fixed64(&fstats, 3, 0);
        pb_fixed64(&fstats, 4, 0);
        pb_reset(&meta);
        pb_msg(&meta, 1, &tracer);
        pb_msg(&meta, 2, &target);
        pb_msg(&meta, 3, &fstats);
        pb_str(&meta, 4, "u");
        pb_str(&meta, 5, "h");
        pb_fixed64(&meta, 6, 0x41d954fc40000000ull);
        pb_le64(&t->bytes, meta.n);
        pb_raw(&t->bytes, meta.b, meta.n);
    }
    for (i = 0; i < n; i++) {
        t->offsets[i] = t->bytes.n;
        frame_payload(&p, i);
        pb_le64(&t->bytes, p.n);
        pb_raw(&t->bytes, p.b, p.n);
    }
    t->n = n;
    t->T = t->bytes.n;
}

static void put_word(trace *t, size_t at, uint64_t v) {
    int i;
    for (i = 0; i < 8; i++) t->bytes.b[at + (size_t)i] = (uint8_t)(v >> (8 * i));
}

/* Header n and T patched, then m and the given entries. */
static void trace_finish(trace *t, uint64_t m, const uint64_t *entries, size_t k) {
    size_t i;
    put_word(t, 0x20, t->n);
    put_word(t, 0x28, t->T);
    pb_le64(&t->bytes, m);
    for (i = 0; i < k; i++) pb_le64(&t->bytes, entries[i]);
}

static frames_reader *open_trace(const void *b, size_t n, uint32_t flags) {
    frames_reader *r = NULL;
    frames_reader_options o;
    frames_error err;
    frames_reader_options_default(&o);
    o.flags = flags;
    if (frames_reader_open_memory(&r, b, n, &o, &err) < 0) {
        fprintf(stderr, "open: %s\n", err.message);
        return NULL;
    }
    return r;
}

/* Reads every frame; checks each is exception number == its index; returns the count. */
static uint64_t read_all(frames_reader *r) {
    frames_frame f;
    uint64_t n = 0;
    int rc;
    while ((rc = frames_reader_next(r, &f)) > 0) {
        assert_int_equal(f.kind, FRAMES_KIND_EXCEPTION);
        assert_int_equal(f.exception.number, n);
        n++;
    }
    assert_int_equal(rc, 0);
    return n;
}

static void check_seeks(frames_reader *r, const trace *t) {
    uint64_t k;
    frames_raw raw;
    assert_int_equal(frames_reader_seek(r, t->n), FRAMES_OK); /* the end */
    assert_int_equal(frames_reader_next_raw(r, &raw), 0);
    assert_int_equal(frames_reader_seek(r, t->n + 1), FRAMES_E_RANGE);
    for (k = t->n; k-- > 0;) {
        assert_int_equal(frames_reader_seek(r, k), FRAMES_OK);
        assert_int_equal(frames_reader_next_raw(r, &raw), 1);
        assert_int_equal(raw.offset, t->offsets[k]);
    }
}

/* ---- reading */

static void test_truncated_inside_frame_and_size_word(void **state) {
    trace t;
    size_t cut;
    (void)state;
    trace_begin(&t, 3, 5);
    /* every cut inside the last frame record: 4 frames, truncation at its offset */
    for (cut = t.offsets[4] + 1; cut < t.T; cut++) {
        frames_reader *r = open_trace(t.bytes.b, cut, 0);
        frames_reader_info st;
        assert_non_null(r);
        assert_int_equal(read_all(r), 4);
        assert_int_equal(frames_reader_info_get(r, &st), FRAMES_OK);
        if (!st.truncated) fprintf(stderr, "cut %zu: %s\n", cut - (size_t)t.offsets[4], st.nwarnings ? frames_reader_warning(r, 0) : "-");
        assert_true(st.truncated);
        assert_int_equal(st.truncated_offset, t.offsets[4]);
        assert_int_equal(st.truncated_bytes, cut - t.offsets[4]);
        assert_non_null(strstr(frames_reader_warning(r, 0), "truncated"));
        frames_reader_close(r);
    }
}

static void test_unfinished_with_pipe_toc_tail(void **state) {
    /* libtrace writing to a pipe: n = T = 0, then m and the floor((n-1)/m) entries add()
       pushed, each 0xffff... (none for 3 frames; test_robustness has a case with one) */
    trace t;
    frames_reader *r;
    frames_reader_info st;
    (void)state;
    trace_begin(&t, 3, 3);
    pb_le64(&t.bytes, 10000);
    r = open_trace(t.bytes.b, t.bytes.n, 0);
    assert_non_null(r);
    assert_int_equal(read_all(r), 3);
    assert_int_equal(frames_reader_info_get(r, &st), FRAMES_OK);
    assert_false(st.finished);
    assert_false(st.truncated);
    assert_true(st.nwarnings >= 1);
    frames_reader_close(r);
}

static void test_finished_empty_trace(void **state) {
    trace t;
    frames_reader *r;
    frames_reader_info st;
    uint64_t n = 99;
    (void)state;
    trace_begin(&t, 3, 0);
    trace_finish(&t, 10000, NULL, 0);
    r = open_trace(t.bytes.b, t.bytes.n, 0);
    assert_non_null(r);
    assert_int_equal(read_all(r), 0);
    assert_int_equal(frames_reader_count(r, &n), FRAMES_OK);
    assert_int_equal(n, 0);
    assert_int_equal(frames_reader_info_get(r, &st), FRAMES_OK);
    assert_true(st.finished);
    assert_false(st.truncated);
    assert_int_equal(frames_reader_seek(r, 1), FRAMES_E_RANGE);
    frames_reader_close(r);
}

/* k entries of block starts j*m for j = 1.. (libtrace-style content) */
static size_t block_entries(const trace *t, uint64_t m, size_t k, uint64_t *e) {
    size_t i;
    for (i = 0; i < k; i++) e[i] = (i + 1) * m < t->n ? t->offsets[(i + 1) * m] : t->T;
    return k;
}

static void expect_convention(const trace *t, int toc, int usable) {
    frames_reader *r = open_trace(t->bytes.b, t->bytes.n, 0);
    frames_reader_info st;
    assert_non_null(r);
    assert_int_equal(frames_reader_info_get(r, &st), FRAMES_OK);
    if (st.toc_used != usable) fprintf(stderr, "convention %s (used %d), expected %s\n", frames_toc_name(st.toc), st.toc_used, frames_toc_name(toc));
    assert_true(st.toc_matches & (1u << toc));
    assert_int_equal(st.toc_used, usable);
    assert_int_equal(read_all(r), t->n);
    check_seeks(r, t);
    frames_reader_close(r);
}

static void test_every_toc_convention(void **state) {
    trace t;
    uint64_t e[16];
    (void)state;
    /* n = 10, m = 4: libtrace 2, tracewrap 2, ceil 3 (spec §4.4) */
    trace_begin(&t, 3, 10);
    trace_finish(&t, 4, e, block_entries(&t, 4, 2, e));
    expect_convention(&t, FRAMES_TOC_LIBTRACE, 1);
    trace_begin(&t, 3, 10);
    trace_finish(&t, 4, e, block_entries(&t, 4, 3, e)); /* third = T */
    expect_convention(&t, FRAMES_TOC_CEIL, 1);
    trace_begin(&t, 3, 10);
    block_entries(&t, 4, 2, e);
    e[2] = 0;
    trace_finish(&t, 4, e, 3);
    expect_convention(&t, FRAMES_TOC_CEIL_ZERO, 1);
    /* n = 8, m = 4: tracewrap has 2 entries, the last = T */
    trace_begin(&t, 2, 8);
    trace_finish(&t, 4, e, block_entries(&t, 4, 2, e));
    expect_convention(&t, FRAMES_TOC_TRACEWRAP, 1);
    /* the 2015 v1 qemu tracer: m = 1, n-1 entries, the first is frame 0 */
    trace_begin(&t, 1, 5);
    {
        uint64_t i;
        for (i = 0; i < 4; i++) e[i] = t.offsets[i];
        trace_finish(&t, 1, e, 4);
    }
    expect_convention(&t, FRAMES_TOC_SHIFTED, 1);
    /* the early 2025 TCG plugin: toc[0] = 0x30, then block starts; ceil(n/m) entries */
    trace_begin(&t, 3, 10);
    e[0] = 0x30;
    e[1] = t.offsets[4];
    e[2] = t.offsets[8];
    trace_finish(&t, 4, e, 3);
    expect_convention(&t, FRAMES_TOC_BLOCK_STARTS, 1);
    /* the README table: ceil(n/m)+1 entries, block 0 included, the last = T */
    trace_begin(&t, 3, 10);
    e[0] = t.offsets[0];
    e[1] = t.offsets[4];
    e[2] = t.offsets[8];
    e[3] = t.T;
    trace_finish(&t, 4, e, 4);
    expect_convention(&t, FRAMES_TOC_README, 1);
}

static void test_broken_toc_falls_back_to_scan(void **state) {
    trace t;
    uint64_t e[4];
    frames_reader *r;
    frames_reader_info st;
    (void)state;
    /* entries pointing into the middle of frames */
    trace_begin(&t, 3, 10);
    e[0] = t.offsets[4] + 3;
    e[1] = t.offsets[8] - 1;
    trace_finish(&t, 4, e, 2);
    r = open_trace(t.bytes.b, t.bytes.n, 0);
    assert_non_null(r);
    assert_int_equal(frames_reader_info_get(r, &st), FRAMES_OK);
    assert_int_equal(st.toc, FRAMES_TOC_INVALID);
    assert_false(st.toc_used);
    assert_int_equal(read_all(r), 10);
    check_seeks(r, &t);
    frames_reader_close(r);
    /* m = 0 (division by zero upstream): no usable TOC, still every frame */
    trace_begin(&t, 3, 10);
    trace_finish(&t, 0, NULL, 0);
    r = open_trace(t.bytes.b, t.bytes.n, 0);
    assert_non_null(r);
    assert_int_equal(frames_reader_info_get(r, &st), FRAMES_OK);
    assert_false(st.toc_used);
    assert_int_equal(read_all(r), 10);
    check_seeks(r, &t);
    frames_reader_close(r);
    /* the header's n lies (says 50): the frames that are there, with a warning */
    trace_begin(&t, 3, 10);
    trace_finish(&t, 4, e, block_entries(&t, 4, 2, e));
    put_word(&t, 0x20, 50);
    r = open_trace(t.bytes.b, t.bytes.n, 0);
    assert_non_null(r);
    assert_int_equal(read_all(r), 10);
    check_seeks(r, &t);
    frames_reader_close(r);
}

static void test_versions_and_headers(void **state) {
    trace t;
    frames_reader *r;
    frames_error err;
    uint8_t zero[48 + 12];
    pb_buf p;
    (void)state;
    /* version 1: no meta, frames at 0x30 */
    trace_begin(&t, 1, 3);
    assert_int_equal(t.offsets[0], 0x30);
    r = open_trace(t.bytes.b, t.bytes.n, 0);
    assert_non_null(r);
    assert_null(frames_reader_meta(r));
    assert_int_equal(frames_reader_header(r)->first_frame, 0x30);
    assert_int_equal(read_all(r), 3);
    frames_reader_close(r);
    /* version 4: rejected, unless asked */
    trace_begin(&t, 4, 3);
    assert_int_equal(frames_reader_open_memory(&r, t.bytes.b, t.bytes.n, NULL, &err), FRAMES_E_VERSION);
    assert_non_null(strstr(err.message, "version 4"));
    r = open_trace(t.bytes.b, t.bytes.n, FRAMES_READ_ANY_VERSION);
    assert_non_null(r);
    assert_int_equal(read_all(r), 3);
    frames_reader_close(r);
    /* bad magic: rejected, unless asked */
    trace_begin(&t, 3, 2);
    t.bytes.b[0] ^= 0xff;
    assert_int_equal(frames_reader_open_memory(&r, t.bytes.b, t.bytes.n, NULL, &err), FRAMES_E_FORMAT);
    assert_int_equal(err.offset, 0);
    r = open_trace(t.bytes.b, t.bytes.n, FRAMES_READ_IGNORE_MAGIC);
    assert_non_null(r);
    assert_int_equal(read_all(r), 2);
    frames_reader_close(r);
    /* the all-zero header of an unfinished 2014 v1 file, then one frame */
    memset(zero, 0, sizeof zero);
    frame_payload(&p, 0);
    zero[48] = (uint8_t)p.n;
    memcpy(zero + 56, p.b, p.n);
    r = open_trace(zero, 56 + p.n, 0);
    assert_non_null(r);
    assert_int_equal(read_all(r), 1);
    frames_reader_close(r);
    assert_int_equal(frames_reader_open_memory(&r, zero, 56 + p.n, NULL, &err) == FRAMES_OK, 1);
    frames_reader_close(r);
    {
        frames_reader_options o;
        frames_reader_options_default(&o);
        o.flags = FRAMES_READ_NO_ZERO_HEADER;
        assert_int_equal(frames_reader_open_memory(&r, zero, 56 + p.n, &o, &err), FRAMES_E_FORMAT);
    }
    /* a meta size larger than the file */
    trace_begin(&t, 3, 1);
    put_word(&t, 0x30, 1u << 30);
    assert_true(frames_reader_open_memory(&r, t.bytes.b, t.bytes.n, NULL, &err) < 0);
    assert_null(r);
}

static void test_frame_size_limit_is_reported_with_position(void **state) {
    trace t;
    frames_reader *r;
    frames_reader_options o;
    frames_error err;
    frames_frame f;
    pb_buf big;
    int rc, errors = 0, frames = 0;
    (void)state;
    /* frame 1 is a 300-byte modload; limit 100 */
    trace_begin(&t, 3, 1);
    {
        pb_buf m;
        char name[280];
        memset(name, 'a', sizeof name - 1);
        name[sizeof name - 1] = 0;
        pb_reset(&m);
        pb_str(&m, 1, name);
        pb_u64(&m, 2, 1);
        pb_u64(&m, 3, 2);
        pb_reset(&big);
        pb_msg(&big, 5, &m);
    }
    t.offsets[1] = t.bytes.n;
    pb_le64(&t.bytes, big.n);
    pb_raw(&t.bytes, big.b, big.n);
    t.offsets[2] = t.bytes.n;
    frame_payload(&big, 2);
    pb_le64(&t.bytes, big.n);
    pb_raw(&t.bytes, big.b, big.n);
    frames_reader_options_default(&o);
    o.limits.max_frame_size = 100;
    assert_int_equal(frames_reader_open_memory(&r, t.bytes.b, t.bytes.n, &o, &err), FRAMES_OK);
    while ((rc = frames_reader_next(r, &f)) != 0) {
        if (rc < 0) {
            const frames_error *e = frames_reader_error(r);
            assert_int_equal(rc, FRAMES_E_LIMIT);
            assert_int_equal(e->frame, 1);
            assert_int_equal(e->offset, t.offsets[1]);
            assert_non_null(strstr(e->message, "limit"));
            errors++;
            continue;
        }
        frames++;
    }
    assert_int_equal(errors, 1);
    assert_int_equal(frames, 2); /* reading goes on after the oversized frame */
    frames_reader_close(r);
}

/* A malformed frame between good ones: frames_reader_next reports it with its offset,
   index and the decoder's message (the reader decodes without an error record first and
   decodes a failing frame again for the message), then goes on to the next frame. */
static void test_bad_frame_is_reported_with_position(void **state) {
    static const uint8_t bad[] = {0x1a, 0x05, 0x08, 0x01};   /* length past the end */
    trace t;
    frames_reader *r;
    frames_frame f;
    pb_buf p;
    int rc, errors = 0;
    uint64_t good = 0;
    (void)state;
    trace_begin(&t, 3, 1);
    t.offsets[1] = t.bytes.n;
    pb_le64(&t.bytes, sizeof bad);
    pb_raw(&t.bytes, bad, sizeof bad);
    t.offsets[2] = t.bytes.n;
    frame_payload(&p, 2);
    pb_le64(&t.bytes, p.n);
    pb_raw(&t.bytes, p.b, p.n);
    r = open_trace(t.bytes.b, t.bytes.n, 0);
    assert_non_null(r);
    while ((rc = frames_reader_next(r, &f)) != 0) {
        const frames_error *e = frames_reader_error(r);
        if (rc < 0) {
            assert_int_equal(rc, FRAMES_E_DECODE);
            assert_int_equal(e->code, FRAMES_E_DECODE);
            assert_int_equal(e->frame, 1);
            assert_int_equal(e->offset, t.offsets[1]);
            assert_non_null(strstr(e->message, "runs past the enclosing message at byte 2"));
            errors++;
            continue;
        }
        assert_int_equal(f.kind, FRAMES_KIND_EXCEPTION);
        assert_int_equal(f.exception.number, good == 0 ? 0 : 2);
        good++;
    }
    assert_int_equal(errors, 1);
    assert_int_equal(good, 2);
    frames_reader_close(r);
}

/* ---- stream readers */

static void test_stream_reader_one_byte_at_a_time(void **state) {
    trace t;
    uint64_t e[4];
    size_t step;
    (void)state;
    trace_begin(&t, 3, 10);
    trace_finish(&t, 4, e, block_entries(&t, 4, 2, e));
    for (step = 1; step <= 64; step *= 4) {
        tu_trickle tr = {t.bytes.b, t.bytes.n, 0, step, 0};
        frames_io io = {&tr, tu_trickle_read, NULL};
        frames_reader *r;
        frames_reader_info st;
        frames_error err;
        frames_raw raw;
        uint64_t k = 0;
        assert_int_equal(frames_reader_open_io(&r, &io, NULL, &err), FRAMES_OK);
        while (frames_reader_next_raw(r, &raw) > 0) {
            assert_int_equal(raw.offset, t.offsets[k]);
            k++;
        }
        assert_int_equal(k, 10);
        assert_int_equal(frames_reader_seek(r, 0), FRAMES_E_UNSUPPORTED);
        assert_int_equal(frames_reader_info_get(r, &st), FRAMES_OK);
        assert_int_equal(st.nframes, 10);
        assert_true(st.toc_matches & (1u << FRAMES_TOC_LIBTRACE));
        frames_reader_close(r);
    }
    /* a stream cut inside a frame: the complete ones, then the truncation */
    {
        tu_trickle tr = {t.bytes.b, (size_t)t.offsets[7] + 5, 0, 7, 0};
        frames_io io = {&tr, tu_trickle_read, NULL};
        frames_reader *r;
        frames_reader_info st;
        frames_error err;
        assert_int_equal(frames_reader_open_io(&r, &io, NULL, &err), FRAMES_OK);
        assert_int_equal(read_all(r), 7);
        assert_int_equal(frames_reader_info_get(r, &st), FRAMES_OK);
        assert_true(st.truncated);
        assert_int_equal(st.truncated_offset, t.offsets[7]);
        assert_int_equal(st.truncated_bytes, 5);
        frames_reader_close(r);
    }
}

/* ---- cursors on threads */

typedef struct worker {
    frames_reader *r;
    uint64_t first, count, sum;
    int rc;
} worker;

static void *cursor_worker(void *arg) {
    worker *w = (worker *)arg;
    frames_cursor *c;
    frames_frame f;
    frames_error err;
    uint64_t i;
    w->rc = frames_cursor_open(&c, w->r, w->first, &err);
    if (w->rc < 0) return NULL;
    for (i = 0; i < w->count && frames_cursor_next(c, &f) > 0; i++) w->sum += f.exception.number;
    if (i != w->count) w->rc = -1;
    frames_cursor_close(c);
    return NULL;
}

static void test_cursors_on_threads(void **state) {
    trace t;
    uint64_t e[16];
    frames_reader *r;
    pthread_t th[4];
    worker w[4];
    int i;
    (void)state;
    trace_begin(&t, 3, 60);
    trace_finish(&t, 8, e, block_entries(&t, 8, 7, e));
    r = open_trace(t.bytes.b, t.bytes.n, 0);
    assert_non_null(r);
    assert_int_equal(frames_reader_index(r), FRAMES_OK);
    for (i = 0; i < 4; i++) {
        memset(&w[i], 0, sizeof w[i]);
        w[i].r = r;
        w[i].first = (uint64_t)i * 15;
        w[i].count = 15;
        pthread_create(&th[i], NULL, cursor_worker, &w[i]);
    }
    for (i = 0; i < 4; i++) {
        uint64_t a = w[i].first, b = a + 14;
        pthread_join(th[i], NULL);
        assert_int_equal(w[i].rc, 0);
        assert_int_equal(w[i].sum, (a + b) * 15 / 2);
    }
    frames_reader_close(r);
}

/* ---- writing */

typedef struct recorder {
    uint8_t b[1 << 16];
    size_t n;
    int writes, seekable;
    size_t write_ends[1024];
} recorder;

static int rec_write(void *ctx, const void *data, size_t len) {
    recorder *m = (recorder *)ctx;
    memcpy(m->b + m->n, data, len);
    m->n += len;
    if (m->writes < 1024) m->write_ends[m->writes] = m->n;
    m->writes++;
    return 0;
}

static int rec_patch(void *ctx, uint64_t off, const void *data, size_t len) {
    recorder *m = (recorder *)ctx;
    memcpy(m->b + off, data, len);
    return 0;
}

static frames_sink rec_sink(recorder *m, int seekable) {
    frames_sink s;
    memset(&s, 0, sizeof s);
    s.ctx = m;
    s.write = rec_write;
    s.patch = seekable ? rec_patch : NULL;
    m->n = 0;
    m->writes = 0;
    return s;
}

static void exception_frame(frames_frame *f, uint64_t i) {
    memset(f, 0, sizeof *f);
    f->kind = FRAMES_KIND_EXCEPTION;
    f->exception.number = i;
}

static uint64_t word_at(const uint8_t *b, size_t at) {
    uint64_t v = 0;
    int i;
    for (i = 7; i >= 0; i--) v = v << 8 | b[at + (size_t)i];
    return v;
}

/* Entries written for n frames with m per entry under a convention (spec §4.4 table). */
static uint64_t entries_written(int toc, uint64_t n, uint64_t m) {
    static recorder rec;
    frames_sink s = rec_sink(&rec, 1);
    frames_writer_options o;
    frames_writer w;
    frames_frame f;
    frames_error err;
    uint64_t i, T;
    frames_writer_options_default(&o);
    o.toc = toc;
    o.frames_per_toc = m;
    assert_int_equal(frames_writer_init(&w, &s, &o, NULL, &err), FRAMES_OK);
    for (i = 0; i < n; i++) {
        exception_frame(&f, i);
        assert_int_equal(frames_writer_add(&w, &f), FRAMES_OK);
    }
    assert_int_equal(frames_writer_close(&w), FRAMES_OK);
    T = word_at(rec.b, 0x28);
    assert_int_equal(word_at(rec.b, 0x20), n);
    assert_int_equal(word_at(rec.b, (size_t)T), m);
    return (rec.n - T - 8) / 8;
}

static void test_writer_entry_counts_match_spec_table(void **state) {
    static const uint64_t rows[][5] = {/* n, m, libtrace, tracewrap, ceil */
                                       {1, 10, 0, 0, 1},     {3, 2, 1, 1, 2},     {10, 10, 0, 1, 1},
                                       {25, 10, 2, 2, 3},    {100, 64, 1, 1, 2},  {128, 64, 1, 2, 2},
                                       {1000, 1000, 0, 1, 1}, {1001, 1000, 1, 1, 2}};
    size_t i;
    (void)state;
    for (i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        assert_int_equal(entries_written(FRAMES_TOC_LIBTRACE, rows[i][0], rows[i][1]), rows[i][2]);
        assert_int_equal(entries_written(FRAMES_TOC_TRACEWRAP, rows[i][0], rows[i][1]), rows[i][3]);
        assert_int_equal(entries_written(FRAMES_TOC_CEIL, rows[i][0], rows[i][1]), rows[i][4]);
        assert_int_equal(entries_written(FRAMES_TOC_CEIL_ZERO, rows[i][0], rows[i][1]), rows[i][4]);
    }
}

static void test_writer_zero_frames(void **state) {
    static recorder rec;
    frames_sink s = rec_sink(&rec, 1);
    frames_writer w;
    frames_error err;
    frames_reader *r;
    uint64_t F;
    (void)state;
    assert_int_equal(frames_writer_init(&w, &s, NULL, NULL, &err), FRAMES_OK);
    assert_int_equal(frames_writer_close(&w), FRAMES_OK);
    F = 0x38 + word_at(rec.b, 0x30);
    assert_int_equal(word_at(rec.b, 0x20), 0);
    assert_int_equal(word_at(rec.b, 0x28), F); /* T = F */
    assert_int_equal(word_at(rec.b, (size_t)F), 10000);
    assert_int_equal(rec.n, F + 8);
    r = open_trace(rec.b, rec.n, 0);
    assert_non_null(r);
    assert_int_equal(read_all(r), 0);
    frames_reader_close(r);
}

static void test_writer_non_seekable_sink_leaves_readable_unfinished_trace(void **state) {
    static recorder rec;
    frames_sink s = rec_sink(&rec, 0);
    frames_writer w;
    frames_frame f;
    frames_error err;
    frames_reader *r;
    frames_reader_info st;
    uint64_t i;
    (void)state;
    assert_int_equal(frames_writer_init(&w, &s, NULL, NULL, &err), FRAMES_OK);
    for (i = 0; i < 7; i++) {
        exception_frame(&f, i);
        assert_int_equal(frames_writer_add(&w, &f), FRAMES_OK);
    }
    assert_int_equal(frames_writer_finish(&w), FRAMES_UNFINISHED);
    assert_int_equal(frames_writer_close(&w), FRAMES_UNFINISHED);
    assert_int_equal(word_at(rec.b, 0x20), 0);
    assert_int_equal(word_at(rec.b, 0x28), 0);
    r = open_trace(rec.b, rec.n, 0);
    assert_non_null(r);
    assert_int_equal(read_all(r), 7);
    assert_int_equal(frames_reader_info_get(r, &st), FRAMES_OK);
    assert_false(st.finished);
    assert_false(st.truncated);
    assert_int_equal(st.nwarnings, 0); /* no bogus TOC words, unlike libtrace on a pipe */
    frames_reader_close(r);
}

static void test_writer_with_caller_storage_allocates_nothing(void **state) {
    static recorder rec;
    static uint8_t buffer[256];
    static uint64_t toc[16];
    frames_sink s = rec_sink(&rec, 1);
    frames_writer_options o;
    frames_writer w;
    frames_frame f;
    frames_error err;
    frames_reader *r;
    uint64_t i;
    int k;
    long before;
    (void)state;
    frames_writer_options_default(&o);
    o.buffer = buffer;
    o.buffer_size = sizeof buffer;
    o.toc_storage = toc;
    o.toc_capacity = 16;
    o.frames_per_toc = 4;
    before = hc_state.calls;
    assert_int_equal(frames_writer_init(&w, &s, &o, NULL, &err), FRAMES_OK);
    for (i = 0; i < 50; i++) {
        exception_frame(&f, i);
        assert_int_equal(frames_writer_add(&w, &f), FRAMES_OK);
    }
    assert_int_equal(frames_writer_close(&w), FRAMES_OK);
    assert_int_equal(hc_state.calls, before);
    /* every write ended on a frame boundary (or is the header+meta / the TOC) */
    r = open_trace(rec.b, rec.n, 0);
    assert_non_null(r);
    assert_int_equal(read_all(r), 50);
    for (k = 0; k < rec.writes - 1; k++) {
        frames_raw raw;
        int boundary = rec.write_ends[k] == 0x38 + word_at(rec.b, 0x30);
        assert_int_equal(frames_reader_seek(r, 0), FRAMES_OK);
        while (!boundary && frames_reader_next_raw(r, &raw) > 0)
            boundary = raw.offset + 8 + raw.payload.len == rec.write_ends[k];
        assert_true(boundary);
    }
    frames_reader_close(r);
    /* a full caller TOC array is an error, not an allocation */
    o.toc_capacity = 2;
    assert_int_equal(frames_writer_init(&w, &s, &o, NULL, &err), FRAMES_OK);
    for (i = 0; i < 12; i++) { /* entries are pushed before frames 4 and 8 */
        exception_frame(&f, i);
        assert_int_equal(frames_writer_add(&w, &f), FRAMES_OK);
    }
    exception_frame(&f, 12);
    assert_int_equal(frames_writer_add(&w, &f), FRAMES_E_NOMEM);
    frames_writer_abandon(&w);
}

static void test_writer_refuses_bad_options_and_states(void **state) {
    static recorder rec;
    frames_sink s = rec_sink(&rec, 1);
    frames_writer_options o;
    frames_writer w;
    frames_frame f;
    frames_error err;
    (void)state;
    frames_writer_options_default(&o);
    o.frames_per_toc = 0;
    assert_int_equal(frames_writer_init(&w, &s, &o, NULL, &err), FRAMES_E_INVALID);
    frames_writer_options_default(&o);
    o.version = 1;
    assert_int_equal(frames_writer_init(&w, &s, &o, NULL, &err), FRAMES_E_INVALID);
    frames_writer_options_default(&o);
    assert_int_equal(frames_writer_init(&w, &s, &o, NULL, &err), FRAMES_OK);
    memset(&f, 0, sizeof f); /* an empty frame: piqirun rejects it, so we do not write it */
    assert_int_equal(frames_writer_add(&w, &f), FRAMES_E_INVALID);
    assert_int_equal(frames_writer_count(&w), 0);
    assert_int_equal(frames_writer_finish(&w), FRAMES_OK);
    exception_frame(&f, 1);
    assert_int_equal(frames_writer_add(&w, &f), FRAMES_E_STATE);
    assert_int_equal(frames_writer_close(&w), FRAMES_OK);
}

static void test_writer_frame_larger_than_buffer(void **state) {
    static recorder rec;
    static uint8_t buffer[160]; /* header, meta, and much less than the frame */
    static uint8_t value[3000];
    frames_sink s = rec_sink(&rec, 1);
    frames_writer_options o;
    frames_writer w;
    frames_operand op;
    frames_frame f, back;
    frames_error err;
    frames_reader *r;
    (void)state;
    frames_writer_options_default(&o);
    o.buffer = buffer;
    o.buffer_size = sizeof buffer;
    memset(value, 0x5a, sizeof value);
    memset(&op, 0, sizeof op);
    op.spec = FRAMES_MEM;
    op.address = 0x1000;
    op.bit_length = 8 * (int32_t)sizeof value;
    op.read = 1;
    op.value = frames_bytes_of(value, sizeof value);
    memset(&f, 0, sizeof f);
    f.kind = FRAMES_KIND_STD;
    f.std.address = 0x400000;
    f.std.rawbytes = frames_bytes_of("\x90", 1);
    f.std.pre = &op;
    f.std.npre = 1;
    assert_int_equal(frames_writer_init(&w, &s, &o, NULL, &err), FRAMES_OK);
    assert_int_equal(frames_writer_add(&w, &f), FRAMES_OK);
    assert_int_equal(frames_writer_close(&w), FRAMES_OK);
    r = open_trace(rec.b, rec.n, 0);
    assert_non_null(r);
    assert_int_equal(frames_reader_next(r, &back), 1);
    assert_int_equal(back.std.pre[0].value.len, sizeof value);
    assert_memory_equal(back.std.pre[0].value.ptr, value, sizeof value);
    frames_reader_close(r);
}

/* Frames written into a caller's buffer that sits inside a guard area: the guard must be
   untouched and every frame read back. Each frame is given by its exception number, or
   -1 for an empty frame (FRAMES_KIND_NONE, lenient encoding) or -2 for a std_frame. */
static void write_in_guarded_buffer(size_t size, const int *frames, size_t n) {
    static recorder rec;
    static uint8_t area[64 + 256 + 64];
    uint8_t *buffer = area + 64;
    frames_sink s = rec_sink(&rec, 1);
    frames_writer_options o;
    frames_writer w;
    frames_frame f;
    frames_raw raw;
    frames_error err;
    frames_reader *r;
    size_t i;
    assert_true(size <= 256);
    memset(area, 0xa5, sizeof area);
    frames_writer_options_default(&o);
    o.buffer = buffer;
    o.buffer_size = size;
    o.encode_flags = FRAMES_ENC_LENIENT;
    o.meta_raw = frames_bytes_of("", 0); /* an empty meta frame: the buffer may be tiny */
    assert_int_equal(frames_writer_init(&w, &s, &o, NULL, &err), FRAMES_OK);
    for (i = 0; i < n; i++) {
        if (frames[i] == -2) {
            memset(&f, 0, sizeof f);
            f.kind = FRAMES_KIND_STD;
            f.std.address = 0x401000;
            f.std.rawbytes = frames_bytes_of("\x90", 1);
        } else if (frames[i] == -1) {
            memset(&f, 0, sizeof f);
        } else {
            exception_frame(&f, (uint64_t)frames[i]);
        }
        assert_int_equal(frames_writer_add(&w, &f), FRAMES_OK);
    }
    assert_int_equal(frames_writer_close(&w), FRAMES_OK);
    for (i = 0; i < sizeof area; i++)
        if (i < 64 || i >= 64 + size) assert_int_equal(area[i], 0xa5);
    r = open_trace(rec.b, rec.n, 0);
    assert_non_null(r);
    for (i = 0; i < n; i++) {
        assert_int_equal(frames_reader_next_raw(r, &raw), 1);
        if (frames[i] == -1) assert_int_equal(raw.payload.len, 0);
        if (frames[i] >= 0) assert_int_equal(raw.payload.len, 4); /* 1a 02 08 i */
    }
    assert_int_equal(frames_reader_next_raw(r, &raw), 0);
    frames_reader_close(r);
}

/* issue 27: with 8 or fewer bytes left in the buffer the room for a frame's payload is 0,
   an empty frame fitted it, and its 8-byte size prefix was written past the buffer
   (`frames cat` of 1 MB of zeros: SIGSEGV). Six 12-byte records, then an empty frame
   with every remainder from 0 to 16 bytes. */
static void test_writer_empty_frame_at_end_of_buffer(void **state) {
    static const int frames[] = {1, 2, 3, 4, 5, 6, -1, 7, -1, -1};
    size_t left;
    (void)state;
    for (left = 0; left <= 16; left++)
        write_in_guarded_buffer(6 * 12 + left, frames, sizeof frames / sizeof frames[0]);
}

/* The same accounting for a caller buffer smaller than a size prefix (a header larger
   than the buffer goes straight to the sink, and an empty meta frame fits, so 0 to 7
   bytes are accepted): every frame goes around it. A plain std_frame was checked
   against the buffer size minus 8, which wrapped around, and was written into it. */
static void test_writer_buffer_smaller_than_a_size_prefix(void **state) {
    static const int frames[] = {-2, 1, -1, -2, -1};
    size_t size;
    (void)state;
    for (size = 0; size < 8; size++) write_in_guarded_buffer(size, frames, sizeof frames / sizeof frames[0]);
}

/* Writer to a real pipe, reader on the other end of it (stream from an fd). */
static void test_pipe_end_to_end(void **state) {
    int fds[2];
    pid_t pid;
    frames_reader *r;
    frames_error err;
    frames_reader_info st;
    int status;
    (void)state;
    assert_int_equal(pipe(fds), 0);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        frames_writer *w;
        frames_frame f;
        uint64_t i;
        close(fds[0]);
        if (frames_writer_open_fd(&w, fds[1], NULL, NULL, &err) < 0) _exit(2);
        for (i = 0; i < 1000; i++) {
            exception_frame(&f, i);
            if (frames_writer_add(w, &f) < 0) _exit(3);
        }
        _exit(frames_writer_close(w) == FRAMES_UNFINISHED ? 0 : 4);
    }
    close(fds[1]);
    assert_int_equal(frames_reader_open_fd(&r, fds[0], NULL, &err), FRAMES_OK);
    assert_int_equal(read_all(r), 1000);
    assert_int_equal(frames_reader_info_get(r, &st), FRAMES_OK);
    assert_false(st.finished);
    assert_false(st.truncated);
    frames_reader_close(r);
    close(fds[0]);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static void test_fix_repairs_truncated_unfinished_trace(void **state) {
    static recorder rec;
    frames_sink s = rec_sink(&rec, 1);
    frames_fix_report rep;
    frames_error err;
    frames_reader *r, *back;
    frames_reader_info st;
    trace t;
    (void)state;
    trace_begin(&t, 3, 20);
    r = open_trace(t.bytes.b, (size_t)t.offsets[19] + 6, 0); /* cut inside frame 19 */
    assert_non_null(r);
    assert_int_equal(frames_fix(r, &s, NULL, &rep, &err), FRAMES_OK);
    assert_int_equal(rep.frames, 19);
    assert_false(rep.was_finished);
    assert_int_equal(rep.dropped_offset, t.offsets[19]);
    assert_int_equal(rep.dropped_bytes, 6);
    frames_reader_close(r);
    /* the repaired file: the same bytes up to frame 19, n and T patched, m = 10000 */
    assert_int_equal(rec.n, t.offsets[19] + 8);
    assert_memory_equal(rec.b + 0x30, t.bytes.b + 0x30, (size_t)t.offsets[19] - 0x30);
    assert_int_equal(word_at(rec.b, 0x20), 19);
    assert_int_equal(word_at(rec.b, 0x28), t.offsets[19]);
    back = open_trace(rec.b, rec.n, 0);
    assert_non_null(back);
    assert_int_equal(read_all(back), 19);
    assert_int_equal(frames_reader_info_get(back, &st), FRAMES_OK);
    assert_true(st.finished && st.cxx_legacy_accepts && st.ocaml_accepts);
    frames_reader_close(back);
}

/* ---- a paged source (frames_reader_open_source) over a trace in memory, in chunks as a
   compressed trace has them: each view loads its chunk into the one buffer (the chunk
   before is gone, as a decompressing source's is) or copies a range over chunks into
   scratch (and spoils the chunk buffer), so that a reader using bytes of an earlier view
   reads wrong ones */
typedef struct chunked_src {
    const uint8_t *data;
    uint64_t size, chunk;
    unsigned long views;
} chunked_src;

typedef struct chunked_state {
    chunked_src *s;
    uint8_t *buf, *scratch;
    uint64_t lo, end;
    size_t slen;
} chunked_state;

static void *chunked_open(void *ctx) {
    chunked_src *s = (chunked_src *)ctx;
    chunked_state *st = (chunked_state *)calloc(1, sizeof *st);
    if (!st) return NULL;
    st->s = s;
    st->buf = (uint8_t *)malloc((size_t)s->chunk);
    st->scratch = (uint8_t *)malloc((size_t)s->size + 1);
    st->lo = UINT64_MAX;
    return st;
}

static void chunked_close(void *ctx, void *state) {
    chunked_state *st = (chunked_state *)state;
    (void)ctx;
    free(st->buf);
    free(st->scratch);
    free(st);
}

static const uint8_t *chunked_view(void *state, uint64_t off, size_t len, uint64_t frame, frames_error *err) {
    chunked_state *st = (chunked_state *)state;
    chunked_src *s = st->s;
    uint64_t lo = off / s->chunk * s->chunk, hi = lo + s->chunk < s->size ? lo + s->chunk : s->size;
    (void)frame;
    s->views++;
    if (off > s->size || len > s->size - off) {
        if (err) err->code = FRAMES_E_RANGE;
        return NULL;
    }
    if (off + len <= hi) {
        if (lo != st->lo) {
            memset(st->buf, 0xEE, (size_t)s->chunk);
            memcpy(st->buf, s->data + lo, (size_t)(hi - lo));
            st->lo = lo;
        }
        st->end = hi;
        return st->buf + (off - lo);
    }
    memset(st->scratch, 0xEE, st->slen);
    memset(st->buf, 0xEE, (size_t)s->chunk);
    st->lo = UINT64_MAX;
    memcpy(st->scratch, s->data + off, len);
    st->slen = len;
    st->end = off + len;
    return st->scratch;
}

static uint64_t chunked_view_end(void *state) { return ((chunked_state *)state)->end; }

/* The records of a and b from where each stands to the end (or 1,000,000 calls): the
   same codes, indexes, offsets and payload bytes. */
static void same_records(int (*next)(void *, frames_raw *), void *a, void *b) {
    frames_raw x, y;
    int i, ra, rb;
    for (i = 0; i < 1000000; i++) {
        ra = next(a, &x);
        rb = next(b, &y);
        assert_int_equal(ra, rb);
        if (ra == 0) return;
        if (ra < 0) continue;
        assert_int_equal(x.index, y.index);
        assert_int_equal(x.offset, y.offset);
        assert_int_equal(x.payload.len, y.payload.len);
        if (x.payload.len) assert_memory_equal(x.payload.ptr, y.payload.ptr, x.payload.len);
    }
    fail_msg("no end after a million records");
}

static int reader_next_raw(void *r, frames_raw *raw) { return frames_reader_next_raw((frames_reader *)r, raw); }
static int cursor_next_raw(void *c, frames_raw *raw) { return frames_cursor_next_raw((frames_cursor *)c, raw); }

/* A paged reader over data in chunks of `chunk` bytes (with or without view_end) reads
   what a memory reader reads: the views it asked for. */
static unsigned long paged_reads_as_memory(const uint8_t *data, size_t size, uint64_t chunk, int with_end) {
    chunked_src s;
    frames_source src;
    frames_reader *rm = NULL, *rp = NULL;
    frames_cursor *cm = NULL, *cp = NULL;
    frames_error err;
    int om, op;
    s.data = data;
    s.size = size;
    s.chunk = chunk;
    s.views = 0;
    memset(&src, 0, sizeof src);
    src.ctx = &s;
    src.size = size;
    src.state_open = chunked_open;
    src.state_close = chunked_close;
    src.view = chunked_view;
    if (with_end) src.view_end = chunked_view_end;
    om = frames_reader_open_memory(&rm, data, size, NULL, &err);
    op = frames_reader_open_source(&rp, &src, NULL, &err);
    assert_int_equal(om, op);
    if (om < 0) return s.views;
    same_records(reader_next_raw, rm, rp);
    assert_int_equal(frames_reader_truncated(rm), frames_reader_truncated(rp));
    om = frames_cursor_open(&cm, rm, 3, &err);
    op = frames_cursor_open(&cp, rp, 3, &err);
    assert_int_equal(om, op);
    if (om == FRAMES_OK) same_records(cursor_next_raw, cm, cp);
    if (cm) frames_cursor_close(cm);
    if (cp) frames_cursor_close(cp);
    frames_reader_close(rm);
    frames_reader_close(rp);
    return s.views;
}

static void test_paged_source_reads_as_memory(void **state) {
    static const char *const names[] = {"r02_all_frame_types_x86_64", "r05_toc_m4_n10_mips",
                                        "r09_unfinished_no_finish_call", "r10_default_m_n10001",
                                        "r11_pintraces_like_x86", "tcg_r02_all_frame_types"};
    static const uint64_t chunks[] = {7, 64, 1000, 65536};
    size_t i, j, cut;
    (void)state;
    for (i = 0; i < sizeof names / sizeof *names; i++) {
        char rel[128];
        size_t size = 0;
        uint8_t *data;
        snprintf(rel, sizeof rel, "vectors/frames/%s.frames", names[i]);
        assert_non_null(data = tu_read_file(tu_shared(rel), &size));
        for (cut = 0; cut <= 4; cut++) {   /* whole, then cut inside at 4 places */
            size_t n = cut ? size * (5 - cut) / 5 + 3 : size;
            for (j = 0; j < sizeof chunks / sizeof *chunks; j++) {
                unsigned long with = paged_reads_as_memory(data, n, chunks[j], 1);
                unsigned long without = paged_reads_as_memory(data, n, chunks[j], 0);
                /* the 10,001 records of the finished trace come mostly from the views'
                   bytes, not from a view each */
                if (i == 3 && cut == 0 && chunks[j] >= 1000) assert_true(with * 10 < without);
            }
        }
        free(data);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_truncated_inside_frame_and_size_word),
        cmocka_unit_test(test_unfinished_with_pipe_toc_tail),
        cmocka_unit_test(test_finished_empty_trace),
        cmocka_unit_test(test_every_toc_convention),
        cmocka_unit_test(test_broken_toc_falls_back_to_scan),
        cmocka_unit_test(test_versions_and_headers),
        cmocka_unit_test(test_frame_size_limit_is_reported_with_position),
        cmocka_unit_test(test_bad_frame_is_reported_with_position),
        cmocka_unit_test(test_stream_reader_one_byte_at_a_time),
        cmocka_unit_test(test_cursors_on_threads),
        cmocka_unit_test(test_paged_source_reads_as_memory),
        cmocka_unit_test(test_writer_entry_counts_match_spec_table),
        cmocka_unit_test(test_writer_zero_frames),
        cmocka_unit_test(test_writer_non_seekable_sink_leaves_readable_unfinished_trace),
        cmocka_unit_test(test_writer_with_caller_storage_allocates_nothing),
        cmocka_unit_test(test_writer_refuses_bad_options_and_states),
        cmocka_unit_test(test_writer_frame_larger_than_buffer),
        cmocka_unit_test(test_writer_empty_frame_at_end_of_buffer),
        cmocka_unit_test(test_writer_buffer_smaller_than_a_size_prefix),
        cmocka_unit_test(test_pipe_end_to_end),
        cmocka_unit_test(test_fix_repairs_truncated_unfinished_trace),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
