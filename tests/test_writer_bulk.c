/* test_writer_bulk.c - frames_writer_add_encoded_frames (several pre-encoded frames in one
   copy, used by frames_pt.h's block path) must write exactly what frame-by-frame adding
   writes, TOC entries included, and refuse buffers whose size words do not chain. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "frames.h"

typedef struct membuf {
    uint8_t *data;
    size_t len, cap;
} membuf;

static int mem_write(void *ctx, const void *d, size_t n) {
    membuf *m = (membuf *)ctx;
    if (m->len + n > m->cap) {
        m->cap = (m->len + n) * 2;
        m->data = (uint8_t *)realloc(m->data, m->cap);
    }
    memcpy(m->data + m->len, d, n);
    m->len += n;
    return 0;
}

static int mem_patch(void *ctx, uint64_t off, const void *d, size_t n) {
    membuf *m = (membuf *)ctx;
    if (off + n > m->len) return -1;
    memcpy(m->data + off, d, n);
    return 0;
}

static frames_writer *open_mem(membuf *m, uint64_t per_toc) {
    frames_sink sink;
    frames_writer_options o;
    frames_writer *w = NULL;
    frames_error err;
    memset(m, 0, sizeof *m);
    memset(&sink, 0, sizeof sink);
    sink.ctx = m;
    sink.write = mem_write;
    sink.patch = mem_patch;
    frames_writer_options_default(&o);
    o.frames_per_toc = per_toc;
    o.buffer_size = 256;   /* small: chunks larger than the buffer take the direct path */
    assert_int_equal(frames_writer_open(&w, &sink, &o, NULL, &err), FRAMES_OK);
    return w;
}

/* std_frame i with a few raw bytes, as the writer encodes it */
static frames_frame frame_of(uint64_t i, uint8_t *raw) {
    frames_frame f;
    memset(&f, 0, sizeof f);
    f.kind = FRAMES_KIND_STD;
    f.std.address = 0x400000 + i * 3;
    f.std.thread_id = 7;
    raw[0] = (uint8_t)i;
    raw[1] = 0x90;
    f.std.rawbytes = frames_bytes_of(raw, 1 + i % 2);
    return f;
}

/* n frames in container layout (size word + message) */
static size_t encode_run(uint64_t first, uint64_t n, uint8_t *out) {
    size_t pos = 0, len;
    uint64_t i;
    uint8_t raw[2];
    for (i = first; i < first + n; i++) {
        frames_frame f = frame_of(i, raw);
        assert_int_equal(frames_encode_frame(&f, 0, out + pos + 8, 64, &len, NULL), FRAMES_OK);
        memset(out + pos, 0, 8);
        out[pos] = (uint8_t)len;
        pos += 8 + len;
    }
    return pos;
}

static void bulk_equals_single(void **state) {
    static const uint64_t chunks[] = {1, 2, 3, 5, 8, 13, 1, 21, 34, 7, 4};
    uint64_t per_toc[] = {1, 2, 3, 10, 10000};
    size_t t, c;
    (void)state;
    for (t = 0; t < sizeof per_toc / sizeof per_toc[0]; t++) {
        membuf a, b;
        frames_writer *wa = open_mem(&a, per_toc[t]), *wb = open_mem(&b, per_toc[t]);
        uint64_t next = 0;
        uint8_t buf[64 * 40];
        for (c = 0; c < sizeof chunks / sizeof chunks[0]; c++) {
            uint64_t i;
            uint8_t raw[2];
            size_t len = encode_run(next, chunks[c], buf);
            for (i = next; i < next + chunks[c]; i++) {
                frames_frame f = frame_of(i, raw);
                assert_int_equal(frames_writer_add(wa, &f), FRAMES_OK);
            }
            assert_int_equal(frames_writer_add_encoded_frames(wb, buf, len, chunks[c]), FRAMES_OK);
            next += chunks[c];
        }
        assert_int_equal(frames_writer_count(wb), next);
        assert_int_equal(frames_writer_close(wa), FRAMES_OK);
        assert_int_equal(frames_writer_close(wb), FRAMES_OK);
        assert_int_equal(a.len, b.len);
        assert_memory_equal(a.data, b.data, a.len);
        free(a.data);
        free(b.data);
    }
}

static void bad_chain_writes_nothing(void **state) {
    membuf m;
    frames_writer *w = open_mem(&m, 2);
    uint8_t buf[256];
    size_t len = encode_run(0, 3, buf);
    (void)state;
    /* one byte short, one byte extra, a size running past the end: all refused */
    assert_int_equal(frames_writer_add_encoded_frames(w, buf, len - 1, 3), FRAMES_E_INVALID);
    buf[len] = 0;
    assert_int_equal(frames_writer_add_encoded_frames(w, buf, len + 1, 3), FRAMES_E_INVALID);
    assert_int_equal(frames_writer_add_encoded_frames(w, buf, len, 4), FRAMES_E_INVALID);
    assert_int_equal(frames_writer_count(w), 0);
    assert_int_equal(frames_writer_add_encoded_frames(w, buf, len, 3), FRAMES_OK);
    assert_int_equal(frames_writer_count(w), 3);
    assert_int_equal(frames_writer_add_encoded_frames(w, buf, 0, 0), FRAMES_OK);
    assert_int_equal(frames_writer_close(w), FRAMES_OK);
    {   /* the result reads back as 3 frames */
        frames_reader *r;
        frames_frame f;
        frames_error err;
        int n = 0, rc;
        assert_int_equal(frames_reader_open_memory(&r, m.data, m.len, NULL, &err), FRAMES_OK);
        while ((rc = frames_reader_next(r, &f)) > 0) {
            assert_int_equal(f.kind, FRAMES_KIND_STD);
            assert_int_equal(f.std.address, 0x400000 + (uint64_t)n * 3);
            n++;
        }
        assert_int_equal(rc, 0);
        assert_int_equal(n, 3);
        frames_reader_close(r);
    }
    free(m.data);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(bulk_equals_single),
        cmocka_unit_test(bad_chain_writes_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
