/* test_limits - resource bounds: frames_limits is honoured by every path (decoder,
   memory/file/stream readers, index, meta, warnings) and no hostile length or count leads
   to a large allocation. This translation unit has its own copy of the implementation
   (FRAMES_STATIC) built over a counting allocator, so every byte the library holds is
   measured. */
#pragma GCC diagnostic ignored "-Wunused-function" /* FRAMES_STATIC, testutil.h helpers */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "heapcount.h"

#define FRAMES_STATIC
#define FRAMES_IMPLEMENTATION
#include "frames.h"
#include "testutil.h"

/* ---------------------------------------------------------------- building inputs */

typedef struct buf {
    uint8_t *p;
    size_t len, cap;
} buf;

static void put(buf *b, const void *data, size_t n) {
    if (n == 0) return; /* data may be NULL (an empty buf) */
    b->p = (uint8_t *)tu_append(b->p, &b->len, &b->cap, data, n);
}
static void put_byte(buf *b, uint8_t v) { put(b, &v, 1); }
static void put_varint(buf *b, uint64_t v) {
    while (v >= 0x80) {
        put_byte(b, (uint8_t)(v | 0x80));
        v >>= 7;
    }
    put_byte(b, (uint8_t)v);
}
static void put_le64(buf *b, uint64_t v) {
    int i;
    for (i = 0; i < 8; i++) put_byte(b, (uint8_t)(v >> (8 * i)));
}
/* field `field` as a length-delimited copy of `inner` */
static void put_len(buf *b, uint32_t field, const buf *inner) {
    put_varint(b, (uint64_t)field << 3 | 2);
    put_varint(b, inner->len);
    put(b, inner->p, inner->len);
}


/* ---------------------------------------------------------------- traces in memory */

static uint8_t *vector(const char *name, size_t *len) {
    char rel[256];
    uint8_t *v;
    snprintf(rel, sizeof rel, "vectors/frames/%s.frames", name);
    v = tu_read_file(tu_shared(rel), len);
    assert_non_null(v);
    return v;
}

static int sink_write(void *ctx, const void *data, size_t n) {
    put((buf *)ctx, data, n);
    return FRAMES_OK;
}
static int sink_patch(void *ctx, uint64_t off, const void *data, size_t n) {
    buf *b = ctx;
    assert_true(off + n <= b->len);
    memcpy(b->p + off, data, n);
    return FRAMES_OK;
}

/* A trace of the given encoded frames (finished unless `unfinished`). */
static buf trace_of(const buf *frames, size_t n, int unfinished) {
    buf out = {0};
    frames_sink s;
    frames_writer *w;
    size_t i;
    memset(&s, 0, sizeof s);
    s.ctx = &out;
    s.write = sink_write;
    s.patch = unfinished ? NULL : sink_patch;
    assert_int_equal(frames_writer_open(&w, &s, NULL, NULL, NULL), FRAMES_OK);
    for (i = 0; i < n; i++)
        assert_int_equal(frames_writer_add_encoded(w, frames[i].p, frames[i].len), FRAMES_OK);
    assert_true(frames_writer_close(w) >= 0);
    return out;
}

/* Stream input from memory, 4096 bytes per read. */
static int open_stream(frames_reader **r, tu_trickle *s, const uint8_t *p, size_t n,
                       const frames_reader_options *o) {
    frames_io io;
    s->p = p;
    s->n = n;
    s->pos = 0;
    s->chunk = 4096;
    s->vary = 0;
    io.ctx = s;
    io.read = tu_trickle_read;
    io.close = NULL;
    return frames_reader_open_io(r, &io, o, NULL);
}

/* Read all records; returns how many calls returned `code` (1 for frames). */
static size_t count_results(frames_reader *r, int code) {
    frames_frame f;
    size_t n = 0, calls = 0;
    int rc;
    while ((rc = frames_reader_next(r, &f)) != 0) {
        assert_true(++calls < 1000000);
        if (rc == code) n++;
        if (rc == FRAMES_E_IO) break;
    }
    return n;
}

/* ---------------------------------------------------------------- repeated lists */

/* libprotobuf appends every occurrence of a list (and merges repeated singular
   messages), so the decoder grows lists across occurrences. Growing by copying the whole
   list each time made the arena quadratic in the input: a 23 KB meta frame of repeated
   `tracer` fields held 3.8 MB (found by fuzz_decode's memory bound). */
static void test_repeated_meta_programs_stay_linear(void **state) {
    buf meta = {0}, tracer = {0};
    frames_decoder d;
    frames_meta m;
    int i;
    (void)state;
    put_varint(&tracer, 2 << 3 | 2); /* args: "a" */
    put_varint(&tracer, 1);
    put_byte(&tracer, 'a');
    for (i = 0; i < 4000; i++) put_len(&meta, 1, &tracer);
    hc_mark();
    frames_decoder_init(&d, NULL, 0, NULL);
    assert_int_equal(frames_decode_meta(&d, meta.p, meta.len, &m, NULL), FRAMES_OK);
    assert_int_equal(m.ntracer_args, 4000);
    assert_memory_equal(m.tracer_args[3999].ptr, "a", 1);
    frames_decoder_free(&d);
    /* 16 bytes of frames_bytes per 5 input bytes; geometric growth at most triples it */
    assert_true(hc_state.peak < 16 * meta.len + 4096);
    free(meta.p);
    free(tracer.p);
}

/* The same for frames: operand lists repeated inside a std_frame, and std_frame options
   repeated in a frame (each merged into the first). */
static void test_repeated_operand_lists_stay_linear(void **state) {
    buf frame = {0}, std = {0}, list = {0}, empty = {0};
    frames_decoder d;
    frames_frame f;
    int i;
    (void)state;
    put_len(&list, 1, &empty); /* one empty operand_info */
    for (i = 0; i < 3000; i++) {
        put_len(&std, 4, &list); /* pre list */
        put_len(&std, 5, &list); /* post list, interleaved */
    }
    for (i = 0; i < 4; i++) put_len(&frame, 1, &std);
    hc_mark();
    frames_decoder_init(&d, NULL, 0, NULL);
    assert_int_equal(frames_decode_frame(&d, frame.p, frame.len, &f, NULL), FRAMES_OK);
    assert_int_equal(f.std.npre, 4 * 3000);
    assert_int_equal(f.std.npost, 4 * 3000);
    assert_true(f.flags & FRAMES_FF_DUPLICATE);
    frames_decoder_free(&d);
    /* sizeof(frames_operand) per 4 input bytes, times 3 for geometric growth */
    assert_true(hc_state.peak < 3 * sizeof(frames_operand) * frame.len / 4 + 4096);
    free(frame.p);
    free(std.p);
    free(list.p);
}


/* ---------------------------------------------------------------- options */

/* A zero limit in reader options means that limit's default, field by field: a zeroed
   options struct with only max_scratch set used to get all defaults (the reader reset
   every limit when max_frame_size was 0), silently dropping the caller's bound. */
static void test_zeroed_limits_default_per_field(void **state) {
    size_t len = 0;
    uint8_t *v = vector("r03_extremes_arm", &len);
    frames_reader_options o;
    frames_reader *r;
    (void)state;
    memset(&o, 0, sizeof o);
    o.limits.max_scratch = 256; /* r03 has frames with more operands than that holds */
    assert_int_equal(frames_reader_open_memory(&r, v, len, &o, NULL), FRAMES_OK);
    assert_true(count_results(r, FRAMES_E_LIMIT) > 0);
    frames_reader_close(r);
    memset(&o, 0, sizeof o); /* all defaults: everything decodes */
    assert_int_equal(frames_reader_open_memory(&r, v, len, &o, NULL), FRAMES_OK);
    assert_int_equal(count_results(r, 1), 7);
    frames_reader_close(r);
    free(v);
}

/* The last record of an unfinished trace is dropped as the end of the trace when it is not
   a frame; a frame that merely needs more scratch than max_scratch was dropped too,
   silently, where any other such frame is reported with FRAMES_E_LIMIT. */
static void test_last_frame_over_scratch_limit_is_reported(void **state) {
    size_t len = 0, i;
    uint8_t *v = vector("r09_unfinished_no_finish_call", &len);
    buf t = {0}, list = {0}, std = {0}, frame = {0}, empty = {0};
    frames_reader_options o;
    frames_reader *r;
    frames_reader_info st;
    frames_frame f;
    tu_trickle s;
    int pass;
    (void)state;
    for (i = 0; i < 20; i++) put_len(&list, 1, &empty); /* 20 operands: > 1 KiB decoded */
    put_len(&std, 4, &list);
    put_len(&frame, 1, &std);
    put(&t, v, len);
    put_le64(&t, frame.len);
    put(&t, frame.p, frame.len);
    frames_reader_options_default(&o);
    o.limits.max_scratch = 1024; /* r09's own frames need less */
    for (pass = 0; pass < 2; pass++) {
        if (pass == 0) assert_int_equal(frames_reader_open_memory(&r, t.p, t.len, &o, NULL), FRAMES_OK);
        else assert_int_equal(open_stream(&r, &s, t.p, t.len, &o), FRAMES_OK);
        for (i = 0; i < 3; i++) assert_int_equal(frames_reader_next(r, &f), 1);
        assert_int_equal(frames_reader_next(r, &f), FRAMES_E_LIMIT);
        assert_int_equal(frames_reader_error(r)->frame, 3);
        assert_int_equal(frames_reader_next(r, &f), 0);
        assert_int_equal(frames_reader_info_get(r, &st), FRAMES_OK);
        assert_int_equal(st.nframes, 4);
        frames_reader_close(r);
    }
    free(v);
    free(t.p);
    free(list.p);
    free(std.p);
    free(frame.p);
}

/* ---------------------------------------------------------------- hostile lengths */

/* Bytes held by the library since hc_mark(). */
static size_t held_peak(size_t before) { return hc_state.peak - before; }

/* A meta size word of any value costs no allocation beyond the reader itself (memory)
   and the 64 KiB input window (stream), which grows only with data that arrives. */
static void test_hostile_meta_size(void **state) {
    static const uint64_t sizes[] = {UINT64_MAX, (uint64_t)1 << 40, 255u << 20, 1000};
    size_t len = 0, i;
    uint8_t *v = vector("r05_toc_m4_n10_mips", &len);
    (void)state;
    for (i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        frames_reader *r;
        frames_error err;
        tu_trickle s;
        size_t before;
        int want = sizes[i] > (256u << 20) ? FRAMES_E_LIMIT : FRAMES_E_TRUNCATED;
        tu_put_le64(v + 48, sizes[i]); /* meta_size; 966 bytes follow */
        before = hc_state.live;
        hc_mark();
        assert_int_equal(frames_reader_open_memory(&r, v, len, NULL, &err), want);
        assert_null(r);
        assert_true(held_peak(before) < 16384);
        hc_mark();
        assert_int_equal(open_stream(&r, &s, v, len, NULL), want);
        assert_true(held_peak(before) < 65536 + 16384);
        assert_int_equal(hc_state.live, before);
    }
    free(v);
}

/* A frame size word of any value: the memory reader allocates nothing for it, the
   stream reader neither buffers nor allocates beyond the data present. */
static void test_hostile_frame_size(void **state) {
    static const uint64_t sizes[] = {UINT64_MAX, (uint64_t)1 << 40, 200u << 20, 5000};
    size_t len = 0, i;
    uint8_t *v = vector("r09_unfinished_no_finish_call", &len);
    buf t = {0};
    (void)state;
    put(&t, v, len);
    put_le64(&t, 0);
    for (i = 0; i < 1000; i++) put_byte(&t, 0x5a);
    for (i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        frames_reader *r;
        frames_reader_info st;
        tu_trickle s;
        size_t before = hc_state.live;
        int pass;
        memcpy(t.p + len, &sizes[i], 8); /* little-endian host */
        for (pass = 0; pass < 2; pass++) {
            hc_mark();
            if (pass == 0) assert_int_equal(frames_reader_open_memory(&r, t.p, t.len, NULL, NULL), FRAMES_OK);
            else assert_int_equal(open_stream(&r, &s, t.p, t.len, NULL), FRAMES_OK);
            assert_int_equal(count_results(r, 1), 3);
            assert_int_equal(frames_reader_info_get(r, &st), FRAMES_OK);
            assert_true(st.truncated);
            assert_int_equal(st.truncated_offset, len);
            assert_int_equal(st.truncated_bytes, 1008);
            frames_reader_close(r);
            assert_true(held_peak(before) < (pass ? 65536 : 0) + 32768);
            assert_int_equal(hc_state.live, before);
        }
    }
    free(t.p);
    free(v);
}

/* Counts: a 1 MiB packed argument list is a million arguments (8 MiB decoded). With
   max_scratch at 1 MiB the decoder refuses it having allocated about that much. */
static void test_hostile_count_bounded_by_scratch(void **state) {
    buf frame = {0}, sys = {0}, args = {0}, packed = {0};
    frames_decoder d;
    frames_frame f;
    size_t before = hc_state.live, i;
    (void)state;
    for (i = 0; i < (1u << 20); i++) put_byte(&packed, 0);
    put_len(&args, 1, &packed);
    put_len(&sys, 4, &args);
    put_len(&frame, 2, &sys);
    hc_mark();
    frames_decoder_init(&d, NULL, 0, NULL);
    d.limits.max_scratch = 1u << 20;
    assert_int_equal(frames_decode_frame(&d, frame.p, frame.len, &f, NULL), FRAMES_E_LIMIT);
    frames_decoder_free(&d);
    assert_true(held_peak(before) <= (1u << 20) + 4096);
    d.limits.max_scratch = 0;
    frames_decoder_init(&d, NULL, 0, NULL); /* default 1 GiB: decodes */
    assert_int_equal(frames_decode_frame(&d, frame.p, frame.len, &f, NULL), FRAMES_OK);
    assert_int_equal(f.syscall.nargs, 1u << 20);
    frames_decoder_free(&d);
    assert_int_equal(hc_state.live, before);
    free(frame.p);
    free(sys.p);
    free(args.p);
    free(packed.p);
}

/* ---------------------------------------------------------------- every path */

/* max_frame_size: r03's 34829-byte frame 6 is refused by reading (memory, stream,
   cursor) with FRAMES_E_LIMIT at its index, counted by the scan, skipped by seek; the
   meta frame (418 bytes) is subject to the same limit. */
static void test_frame_size_limit_on_every_path(void **state) {
    size_t len = 0;
    uint8_t *v = vector("r03_extremes_arm", &len);
    frames_reader_options o;
    frames_reader *r;
    frames_cursor *c;
    frames_frame f;
    frames_raw raw;
    uint64_t n;
    tu_trickle s;
    int pass;
    (void)state;
    frames_reader_options_default(&o);
    o.limits.max_frame_size = 417;
    assert_int_equal(frames_reader_open_memory(&r, v, len, &o, NULL), FRAMES_E_LIMIT);
    assert_int_equal(open_stream(&r, &s, v, len, &o), FRAMES_E_LIMIT);
    o.limits.max_frame_size = 34828;
    for (pass = 0; pass < 2; pass++) {
        int i;
        if (pass == 0) assert_int_equal(frames_reader_open_memory(&r, v, len, &o, NULL), FRAMES_OK);
        else assert_int_equal(open_stream(&r, &s, v, len, &o), FRAMES_OK);
        for (i = 0; i < 6; i++) assert_int_equal(frames_reader_next(r, &f), 1);
        assert_int_equal(frames_reader_next(r, &f), FRAMES_E_LIMIT);
        assert_int_equal(frames_reader_error(r)->frame, 6);
        assert_int_equal(frames_reader_error(r)->offset, 0x5b5);
        assert_int_equal(frames_reader_next(r, &f), 0);
        assert_int_equal(frames_reader_count(r, &n), FRAMES_OK);
        assert_int_equal(n, 7);
        frames_reader_close(r);
    }
    o.flags = FRAMES_READ_IGNORE_TOC; /* the scan's index */
    assert_int_equal(frames_reader_open_memory(&r, v, len, &o, NULL), FRAMES_OK);
    assert_int_equal(frames_reader_count(r, &n), FRAMES_OK);
    assert_int_equal(n, 7);
    assert_int_equal(frames_cursor_open(&c, r, 5, NULL), FRAMES_OK);
    assert_int_equal(frames_cursor_next_raw(c, &raw), 1);
    assert_int_equal(frames_cursor_next_raw(c, &raw), FRAMES_E_LIMIT);
    assert_int_equal(frames_cursor_error(c)->frame, 6);
    assert_int_equal(frames_cursor_next_raw(c, &raw), 0);
    frames_cursor_close(c);
    assert_int_equal(frames_reader_seek(r, 6), FRAMES_OK);
    assert_int_equal(frames_reader_next_raw(r, &raw), FRAMES_E_LIMIT);
    frames_reader_close(r);
    free(v);
}

/* A frame whose unknown option holds groups nested `depth` deep. */
static buf nested_groups(int depth) {
    buf b = {0};
    int i;
    for (i = 0; i < depth; i++) put_byte(&b, 9 << 3 | 3);
    for (i = 0; i < depth; i++) put_byte(&b, 9 << 3 | 4);
    return b;
}

/* max_depth: decoder, memory reader, stream reader and cursors honour the caller's. */
static void test_depth_limit_on_every_path(void **state) {
    buf deep = nested_groups(70), t;
    frames_decoder d;
    frames_reader_options o;
    frames_reader *r;
    frames_cursor *c;
    frames_frame f;
    tu_trickle s;
    int pass;
    (void)state;
    frames_decoder_init(&d, NULL, 0, NULL);
    assert_int_equal(frames_decode_frame(&d, deep.p, deep.len, &f, NULL), FRAMES_E_LIMIT);
    d.limits.max_depth = 70;
    assert_int_equal(frames_decode_frame(&d, deep.p, deep.len, &f, NULL), FRAMES_OK);
    assert_int_equal(f.unknown.field, 9);
    frames_decoder_free(&d);
    t = trace_of(&deep, 1, 0);
    frames_reader_options_default(&o);
    for (pass = 0; pass < 4; pass++) {
        int want = pass & 1 ? 1 : FRAMES_E_LIMIT;
        o.limits.max_depth = pass & 1 ? 70 : 69;
        if (pass < 2) assert_int_equal(frames_reader_open_memory(&r, t.p, t.len, &o, NULL), FRAMES_OK);
        else assert_int_equal(open_stream(&r, &s, t.p, t.len, &o), FRAMES_OK);
        assert_int_equal(frames_reader_next(r, &f), want);
        if (pass < 2) {
            assert_int_equal(frames_cursor_open(&c, r, 0, NULL), FRAMES_OK);
            assert_int_equal(frames_cursor_next(c, &f), want);
            frames_cursor_close(c);
        }
        frames_reader_close(r);
    }
    free(deep.p);
    free(t.p);
}

/* max_scratch applies to the meta frame too: a meta frame that needs more is dropped
   with a warning (the frames stay readable), as any meta frame that does not decode. */
static void test_scratch_limit_on_meta(void **state) {
    frames_reader_options o;
    frames_reader *r;
    frames_reader_info st;
    frames_writer *w;
    frames_sink sink;
    buf out = {0};
    frames_meta m;
    frames_bytes args[200];
    int i;
    (void)state;
    memset(&m, 0, sizeof m);
    for (i = 0; i < 200; i++) args[i] = frames_str("x");
    m.tracer_args = args;
    m.ntracer_args = 200; /* 3.2 KiB of frames_bytes decoded */
    memset(&sink, 0, sizeof sink);
    sink.ctx = &out;
    sink.write = sink_write;
    sink.patch = sink_patch;
    assert_int_equal(frames_writer_open(&w, &sink, NULL, &m, NULL), FRAMES_OK);
    assert_int_equal(frames_writer_close(w), FRAMES_OK);
    frames_reader_options_default(&o);
    o.limits.max_scratch = 2048;
    assert_int_equal(frames_reader_open_memory(&r, out.p, out.len, &o, NULL), FRAMES_OK);
    assert_null(frames_reader_meta(r));
    assert_int_equal(frames_reader_info_get(r, &st), FRAMES_OK);
    assert_true(st.nwarnings >= 1);
    assert_non_null(strstr(frames_reader_warning(r, 0), "meta frame"));
    frames_reader_close(r);
    o.limits.max_scratch = 8192;
    assert_int_equal(frames_reader_open_memory(&r, out.p, out.len, &o, NULL), FRAMES_OK);
    assert_non_null(frames_reader_meta(r));
    assert_int_equal(frames_reader_meta(r)->ntracer_args, 200);
    frames_reader_close(r);
    free(out.p);
}

/* The index built by scanning holds one offset per index_stride frames. */
static void test_scan_index_is_bounded(void **state) {
    enum { N = 100000 };
    buf *frames = calloc(N, sizeof *frames), t;
    frames_reader_options o;
    frames_reader *r;
    uint64_t n;
    size_t before, i;
    static const uint32_t strides[] = {0, 1, 256, 4096};
    static uint8_t one = 0x28; /* field 5 as varint: an unknown option, one byte */
    (void)state;
    for (i = 0; i < N; i++) {
        frames[i].p = &one;
        frames[i].len = 1;
    }
    t = trace_of(frames, N, 0);
    for (i = 0; i < sizeof strides / sizeof strides[0]; i++) {
        uint32_t stride = strides[i] ? strides[i] : 256;
        frames_reader_options_default(&o);
        o.flags = FRAMES_READ_IGNORE_TOC;
        o.index_stride = strides[i];
        before = hc_state.live;
        hc_mark();
        assert_int_equal(frames_reader_open_memory(&r, t.p, t.len, &o, NULL), FRAMES_OK);
        assert_int_equal(frames_reader_count(r, &n), FRAMES_OK);
        assert_int_equal(n, N);
        assert_int_equal(frames_reader_seek(r, N - 1), FRAMES_OK);
        /* doubling growth: at most twice the entries, plus the reader */
        assert_true(held_peak(before) <= 2 * 8 * (N / stride + 64) + 16384);
        frames_reader_close(r);
    }
    free(t.p);
    free(frames);
}

/* ---------------------------------------------------------------- allocation failure */

/* Every allocation in turn fails: each call returns its result or FRAMES_E_NOMEM, never
   crashes, and closing frees everything. */
static void run_with_failures(const uint8_t *v, size_t len, int stream) {
    size_t k;
    for (k = 1;; k++) {
        frames_reader *r;
        frames_reader_info st;
        frames_cursor *c;
        frames_frame f;
        uint64_t n;
        tu_trickle s;
        size_t before = hc_state.live;
        int rc, i;
        hc_mark();
        hc_state.fail_at = k;
        rc = stream ? open_stream(&r, &s, v, len, NULL) : frames_reader_open_memory(&r, v, len, NULL, NULL);
        if (rc == FRAMES_OK) {
            for (i = 0; i < 100 && (rc = frames_reader_next(r, &f)) != 0; i++)
                assert_true(rc == 1 || rc == FRAMES_E_NOMEM);
            rc = frames_reader_info_get(r, &st);
            assert_true(rc == FRAMES_OK || rc == FRAMES_E_NOMEM);
            if (!stream) {
                rc = frames_reader_count(r, &n);
                assert_true(rc == FRAMES_OK || rc == FRAMES_E_NOMEM);
                rc = frames_reader_seek(r, 3);
                assert_true(rc == FRAMES_OK || rc == FRAMES_E_NOMEM);
                rc = frames_cursor_open(&c, r, 2, NULL);
                assert_true(rc == FRAMES_OK || rc == FRAMES_E_NOMEM);
                if (rc == FRAMES_OK) {
                    rc = frames_cursor_next(c, &f);
                    assert_true(rc == 1 || rc == FRAMES_E_NOMEM);
                    frames_cursor_close(c);
                }
            }
            frames_reader_close(r);
        } else {
            assert_int_equal(rc, FRAMES_E_NOMEM);
        }
        assert_int_equal(hc_state.live, before);
        if (hc_state.calls < k) break; /* no allocation failed: every point was tried */
    }
    hc_state.fail_at = 0;
    assert_true(k > 3);
}

static void test_allocation_failures(void **state) {
    size_t len = 0;
    uint8_t *v = vector("r03_extremes_arm", &len);
    (void)state;
    run_with_failures(v, len, 0);
    run_with_failures(v, len, 1);
    free(v);
    v = vector("r09_unfinished_no_finish_call", &len);
    run_with_failures(v, len, 0);
    run_with_failures(v, len, 1);
    free(v);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_repeated_meta_programs_stay_linear),
        cmocka_unit_test(test_repeated_operand_lists_stay_linear),
        cmocka_unit_test(test_zeroed_limits_default_per_field),
        cmocka_unit_test(test_last_frame_over_scratch_limit_is_reported),
        cmocka_unit_test(test_hostile_meta_size),
        cmocka_unit_test(test_hostile_frame_size),
        cmocka_unit_test(test_hostile_count_bounded_by_scratch),
        cmocka_unit_test(test_frame_size_limit_on_every_path),
        cmocka_unit_test(test_depth_limit_on_every_path),
        cmocka_unit_test(test_scratch_limit_on_meta),
        cmocka_unit_test(test_scan_index_is_bounded),
        cmocka_unit_test(test_allocation_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
