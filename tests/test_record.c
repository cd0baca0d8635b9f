/* test_record.c - the recording API of frames.h (frames_rec_*, frames_writer_add_frames):
   value -> frames mapping against upstream bytes, buffer flushes, sampling windows,
   filters, several threads into one trace, crash safety (SIGKILL, fatal-signal handler). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>

#include "frames.h"
#include "testutil.h"

/* ------------------------------------------------------------------ helpers */

/* A flush callback that appends every batch to memory and checks that it holds exactly
   `nframes` whole frames. */
typedef struct batches {
    uint8_t *data;
    size_t len, cap;
    unsigned calls;
    uint64_t frames;
    size_t largest;
    int fail_next;   /* make the next call fail (error path) */
} batches;

static int count_frames(const uint8_t *p, size_t len, uint64_t *n) {
    size_t pos = 0;
    uint64_t k = 0, flen;
    while (pos < len) {
        if (len - pos < 8) return -1;
        memcpy(&flen, p + pos, 8);
        if (flen == 0 || flen > len - pos - 8) return -1;
        pos += 8 + (size_t)flen;
        k++;
    }
    *n = k;
    return 0;
}

static int to_batches(void *ctx, const void *frames, size_t len, uint32_t nframes) {
    batches *b = (batches *)ctx;
    uint64_t n = 0;
    if (b->fail_next) {
        b->fail_next = 0;
        return FRAMES_E_IO;
    }
    if (count_frames((const uint8_t *)frames, len, &n) != 0 || n != nframes) return FRAMES_E_INVALID;
    b->data = (uint8_t *)tu_append(b->data, &b->len, &b->cap, frames, len);
    b->calls++;
    b->frames += nframes;
    if (len > b->largest) b->largest = len;
    return 0;
}

/* Iterate the frames collected in a batches buffer. */
typedef struct frame_iter {
    const batches *b;
    size_t pos;
    frames_decoder dec;
} frame_iter;

static void iter_init(frame_iter *it, const batches *b) {
    it->b = b;
    it->pos = 0;
    frames_decoder_init(&it->dec, NULL, 0, NULL);
}

static int iter_next(frame_iter *it, frames_frame *f, frames_bytes *raw) {
    uint64_t flen;
    frames_error err;
    if (it->pos >= it->b->len) return 0;
    memcpy(&flen, it->b->data + it->pos, 8);
    if (raw) *raw = frames_bytes_of(it->b->data + it->pos + 8, (size_t)flen);
    assert_int_equal(frames_decode_frame(&it->dec, it->b->data + it->pos + 8, (size_t)flen, f, &err), 0);
    it->pos += 8 + (size_t)flen;
    return 1;
}

static void iter_free(frame_iter *it) { frames_decoder_free(&it->dec); }

static uint8_t bigbuf[1 << 16];

static void bytes_eq(frames_bytes b, const void *want, size_t n) {
    assert_int_equal(b.len, n);
    assert_memory_equal(b.ptr, want, n);
}

/* ------------------------------------------------------------------ mapping */

/* The annotated std_frame of frames-format.md §2.4 (inc rax, RAX 0x29 -> 0x2a), typed from
   the specification, recorded through the API. */
static void test_mapping_spec_example(void **state) {
    static const uint8_t want[] = {
        0x0a, 0x5c, 0x08, 0x80, 0xa0, 0x80, 0x02, 0x10, 0x01, 0x1a, 0x03, 0x48, 0xff, 0xc0,
        0x22, 0x26, 0x0a, 0x24, 0x0a, 0x07, 0x12, 0x05, 0x0a, 0x03, 0x52, 0x41, 0x58, 0x10,
        0x80, 0x01, 0x1a, 0x08, 0x08, 0x01, 0x10, 0x00, 0x18, 0x00, 0x20, 0x00, 0x22, 0x02,
        0x08, 0x01, 0x2a, 0x08, 0x29, 0, 0, 0, 0, 0, 0, 0,
        0x2a, 0x26, 0x0a, 0x24, 0x0a, 0x07, 0x12, 0x05, 0x0a, 0x03, 0x52, 0x41, 0x58, 0x10,
        0x80, 0x01, 0x1a, 0x08, 0x08, 0x00, 0x10, 0x01, 0x18, 0x00, 0x20, 0x00, 0x22, 0x02,
        0x08, 0x01, 0x2a, 0x08, 0x2a, 0, 0, 0, 0, 0, 0, 0};
    static const uint8_t inc_rax[] = {0x48, 0xff, 0xc0};
    frames_recorder *r = (frames_recorder *)calloc(1, sizeof *r);
    batches b = {0};
    uint64_t rax = 0x29, len;
    (void)state;
    assert_int_equal(frames_rec_init(r, bigbuf, sizeof bigbuf, to_batches, &b, 1), 0);
    assert_int_equal(frames_rec_begin(r, 0x401000, inc_rax, 3), 1);
    assert_int_equal(frames_rec_reg(r, FRAMES_VAL_GPR | FRAMES_VAL_READ | FRAMES_VAL_WRITE |
                                           FRAMES_VAL_BEFORE, "RAX", &rax, 8), 1);
    rax++;
    assert_int_equal(frames_rec_reg(r, FRAMES_VAL_GPR | FRAMES_VAL_WRITE | FRAMES_VAL_AFTER,
                                    "RAX", &rax, 8), 1);
    assert_int_equal(frames_rec_end(r), 1);
    assert_int_equal(frames_rec_flush(r), 0);
    assert_int_equal(b.frames, 1);
    memcpy(&len, b.data, 8);
    assert_int_equal(len, sizeof want);
    assert_memory_equal(b.data + 8, want, sizeof want);
    free(b.data);
    free(r);
}

/* Frames 0, 2 and 3 of r11_pintraces_like_x86 (written by upstream libtrace) rebuilt with
   the recorder from their decoded content must give the same bytes. (Frame 1 has 1-bit
   flag operands; the recorder always writes bit_length = 8 * size.) */
static void test_mapping_matches_upstream_frames(void **state) {
    frames_reader *rd;
    frames_error err;
    frames_raw raw;
    frames_frame f;
    frames_recorder *r = (frames_recorder *)calloc(1, sizeof *r);
    batches b = {0};
    frames_decoder dec;
    uint8_t payload[3][512];
    size_t plen[3], pos = 0, k = 0;
    uint32_t i;
    (void)state;
    frames_decoder_init(&dec, NULL, 0, NULL);
    assert_int_equal(frames_reader_open_path(&rd, tu_shared("vectors/frames/r11_pintraces_like_x86.frames"),
                                             NULL, &err), 0);
    assert_int_equal(frames_rec_init(r, bigbuf, sizeof bigbuf, to_batches, &b, 1), 0);
    while (frames_reader_next_raw(rd, &raw) > 0) {
        if (raw.index == 1) continue;
        assert_true(raw.payload.len <= sizeof payload[0]);
        memcpy(payload[k], raw.payload.ptr, raw.payload.len);
        plen[k++] = raw.payload.len;
        assert_int_equal(frames_decode_frame(&dec, raw.payload.ptr, raw.payload.len, &f, &err), 0);
        if (f.kind == FRAMES_KIND_MODLOAD) {
            char name[64] = {0};
            memcpy(name, f.modload.module_name.ptr, f.modload.module_name.len);
            assert_int_equal(frames_rec_modload(r, name, f.modload.low_address, f.modload.high_address), 0);
        } else if (f.kind == FRAMES_KIND_SYSCALL) {
            frames_rec_thread(r, f.syscall.thread_id);
            assert_int_equal(frames_rec_syscall(r, f.syscall.address, f.syscall.number,
                                                f.syscall.args, f.syscall.nargs), 0);
        } else {
            assert_int_equal(f.kind, FRAMES_KIND_STD);
            frames_rec_thread(r, f.std.thread_id);
            assert_int_equal(frames_rec_begin(r, f.std.address, f.std.rawbytes.ptr, f.std.rawbytes.len), 1);
            for (i = 0; i < f.std.npre + f.std.npost; i++) {
                int pre = i < f.std.npre;
                const frames_operand *op = pre ? &f.std.pre[i] : &f.std.post[i - f.std.npre];
                uint32_t attr = (pre ? FRAMES_VAL_BEFORE : FRAMES_VAL_AFTER) |
                                (op->read ? FRAMES_VAL_READ : 0) | (op->written ? FRAMES_VAL_WRITE : 0);
                assert_int_equal(op->bit_length, (int32_t)(8 * op->value.len));
                if (op->spec == FRAMES_MEM) {
                    assert_int_equal(frames_rec_mem(r, attr, op->address, op->value.ptr, op->value.len), 1);
                } else {
                    char name[32] = {0};
                    memcpy(name, op->name.ptr, op->name.len);
                    assert_int_equal(frames_rec_reg(r, attr | FRAMES_VAL_GPR, name, op->value.ptr,
                                                    op->value.len), 1);
                }
            }
            assert_int_equal(frames_rec_end(r), 1);
        }
    }
    assert_int_equal(k, 3);
    assert_int_equal(frames_rec_finish(r), 0);
    assert_int_equal(b.frames, 3);
    for (k = 0; k < 3; k++) {
        uint64_t len;
        memcpy(&len, b.data + pos, 8);
        assert_int_equal(len, plen[k]);
        assert_memory_equal(b.data + pos + 8, payload[k], plen[k]);
        pos += 8 + plen[k];
    }
    frames_reader_close(rd);
    frames_decoder_free(&dec);
    free(b.data);
    free(r);
}

/* Pre/post placement, usage flags, bit_length, base/index, memory operands, an
   instruction that never completed, and other frame kinds in order. */
static void test_mapping_rules(void **state) {
    static const uint8_t code[] = {0x48, 0x89, 0x04, 0x8b}; /* mov [rbx+rcx*4], rax */
    frames_recorder *r = (frames_recorder *)calloc(1, sizeof *r);
    batches b = {0};
    frame_iter it;
    frames_frame f;
    uint64_t rbx = 0x1000, rcx = 2, rax = 0x1122334455667788ull, old = 7;
    uint8_t zmm[64];
    int64_t args[3] = {1, -1, 0x7fff0000};
    size_t i;
    (void)state;
    for (i = 0; i < 64; i++) zmm[i] = (uint8_t)i;
    assert_int_equal(frames_rec_init(r, bigbuf, sizeof bigbuf, to_batches, &b, 77), 0);
    assert_int_equal(frames_rec_modload(r, "/lib/x.so", 0x1000, 0x2000), 0);
    assert_int_equal(frames_rec_begin(r, 0x400000, code, sizeof code), 1);
    assert_int_equal(frames_rec_reg(r, FRAMES_VAL_GPR | FRAMES_VAL_READ | FRAMES_VAL_BEFORE | FRAMES_VAL_BASE,
                                    "RBX", &rbx, 8), 1);
    assert_int_equal(frames_rec_reg(r, FRAMES_VAL_GPR | FRAMES_VAL_READ | FRAMES_VAL_BEFORE | FRAMES_VAL_INDEX,
                                    "RCX", &rcx, 8), 1);
    assert_int_equal(frames_rec_reg(r, FRAMES_VAL_GPR | FRAMES_VAL_READ | FRAMES_VAL_BEFORE, "RAX", &rax, 8), 1);
    /* post values may be recorded interleaved with pre values: order within a list holds */
    assert_int_equal(frames_rec_mem(r, FRAMES_VAL_WRITE | FRAMES_VAL_AFTER, 0x1008, &rax, 8), 1);
    assert_int_equal(frames_rec_mem(r, FRAMES_VAL_MEM | FRAMES_VAL_WRITE | FRAMES_VAL_BEFORE, 0x1008, &old, 8), 1);
    assert_int_equal(frames_rec_reg(r, FRAMES_VAL_SIMD | FRAMES_VAL_WRITE | FRAMES_VAL_AFTER | FRAMES_VAL_FLOAT,
                                    "ZMM0", zmm, 64), 1);
    assert_int_equal(frames_rec_syscall(r, 0x400004, 1, args, 3), 0); /* goes before the open insn */
    assert_int_equal(frames_rec_end(r), 1);
    assert_int_equal(frames_rec_begin(r, 0x400004, code, 2), 1);
    assert_int_equal(frames_rec_reg(r, FRAMES_VAL_PC | FRAMES_VAL_READ | FRAMES_VAL_BEFORE, "RIP", &rbx, 8), 1);
    assert_int_equal(frames_rec_exception(r, 11, 0x400004, FRAMES_NO_POS), 0);
    assert_int_equal(frames_rec_finish(r), 0); /* open instruction: written without post list */

    iter_init(&it, &b);
    assert_true(iter_next(&it, &f, NULL));
    assert_int_equal(f.kind, FRAMES_KIND_MODLOAD);
    bytes_eq(f.modload.module_name, "/lib/x.so", 9);
    assert_int_equal(f.modload.high_address, 0x2000);
    assert_true(iter_next(&it, &f, NULL));
    assert_int_equal(f.kind, FRAMES_KIND_SYSCALL);
    assert_int_equal(f.syscall.thread_id, 77);
    assert_int_equal(f.syscall.nargs, 3);
    assert_int_equal(f.syscall.args[1], -1);
    assert_int_equal(f.syscall.args[2], 0x7fff0000);
    assert_true(iter_next(&it, &f, NULL));
    assert_int_equal(f.kind, FRAMES_KIND_STD);
    assert_int_equal(f.std.address, 0x400000);
    assert_int_equal(f.std.thread_id, 77);
    bytes_eq(f.std.rawbytes, code, sizeof code);
    assert_int_equal(f.std.npre, 4);
    assert_true(f.std.has_post);
    assert_int_equal(f.std.npost, 2);
    /* RBX: read, base */
    bytes_eq(f.std.pre[0].name, "RBX", 3);
    assert_true(f.std.pre[0].read && !f.std.pre[0].written && f.std.pre[0].base && !f.std.pre[0].index);
    assert_int_equal(f.std.pre[0].bit_length, 64);
    assert_true(f.std.pre[1].index && !f.std.pre[1].base);
    bytes_eq(f.std.pre[2].value, &rax, 8);
    /* the value before the write: pre list, read = written = false */
    assert_int_equal(f.std.pre[3].spec, FRAMES_MEM);
    assert_int_equal(f.std.pre[3].address, 0x1008);
    assert_true(!f.std.pre[3].read && !f.std.pre[3].written);
    bytes_eq(f.std.pre[3].value, &old, 8);
    assert_int_equal(f.std.pre[3].taint.set, FRAMES_TAINT_NONE);
    /* post: memory written, then ZMM0 with 512 bits */
    assert_int_equal(f.std.post[0].spec, FRAMES_MEM);
    assert_true(f.std.post[0].written && !f.std.post[0].read);
    bytes_eq(f.std.post[0].value, &rax, 8);
    bytes_eq(f.std.post[1].name, "ZMM0", 4);
    assert_int_equal(f.std.post[1].bit_length, 512);
    bytes_eq(f.std.post[1].value, zmm, 64);
    assert_true(iter_next(&it, &f, NULL));
    assert_int_equal(f.kind, FRAMES_KIND_EXCEPTION);
    assert_int_equal(f.exception.number, 11);
    assert_true(f.exception.has_thread_id && f.exception.has_from_addr && !f.exception.has_to_addr);
    assert_true(iter_next(&it, &f, NULL));
    assert_int_equal(f.kind, FRAMES_KIND_STD);
    assert_false(f.std.has_post); /* never completed */
    assert_int_equal(f.std.npre, 1);
    assert_false(iter_next(&it, &f, NULL));
    assert_int_equal(r->stats.recorded, 2);
    assert_int_equal(r->stats.frames, 5);
    iter_free(&it);
    free(b.data);
    free(r);
}

static void test_errors(void **state) {
    frames_recorder *r = (frames_recorder *)calloc(1, sizeof *r);
    batches b = {0};
    uint8_t v[65] = {0};
    int i;
    (void)state;
    assert_int_equal(frames_rec_init(r, bigbuf, 100, to_batches, &b, 1), FRAMES_E_INVALID);
    assert_int_equal(frames_rec_init(r, bigbuf, sizeof bigbuf, to_batches, &b, 1), 0);
    assert_int_equal(frames_rec_reg(r, FRAMES_VAL_GPR | FRAMES_VAL_READ | FRAMES_VAL_BEFORE, "RAX", v, 8),
                     FRAMES_E_STATE);
    assert_int_equal(frames_rec_end(r), FRAMES_E_STATE);
    assert_int_equal(frames_rec_begin(r, 1, v, 40), FRAMES_E_INVALID); /* > 32 raw bytes */
    assert_int_equal(frames_rec_begin(r, 1, v, 1), 1);
    assert_int_equal(frames_rec_begin(r, 2, v, 1), FRAMES_E_STATE);
    assert_non_null(strstr(frames_rec_error(r)->message, "still open"));
    assert_int_equal(frames_rec_reg(r, FRAMES_VAL_GPR | FRAMES_VAL_READ | FRAMES_VAL_BEFORE, "RAX", v, 65),
                     FRAMES_E_INVALID);
    assert_int_equal(frames_rec_reg(r, FRAMES_VAL_GPR | FRAMES_VAL_SIMD | FRAMES_VAL_BEFORE, "RAX", v, 8),
                     FRAMES_E_INVALID);
    assert_int_equal(frames_rec_reg(r, FRAMES_VAL_GPR | FRAMES_VAL_BEFORE | FRAMES_VAL_AFTER, "RAX", v, 8),
                     FRAMES_E_INVALID);
    assert_int_equal(frames_rec_reg(r, FRAMES_VAL_GPR | FRAMES_VAL_BEFORE, "A_VERY_LONG_REGISTER_NAME", v, 8),
                     FRAMES_E_INVALID);
    assert_int_equal(frames_rec_mem(r, FRAMES_VAL_GPR | FRAMES_VAL_BEFORE, 0, v, 8), FRAMES_E_INVALID);
    for (i = 0; i < FRAMES_REC_MAX_VALUES; i++)
        assert_int_equal(frames_rec_mem(r, FRAMES_VAL_READ | FRAMES_VAL_BEFORE, (uint64_t)i, v, 1), 1);
    assert_int_equal(frames_rec_mem(r, FRAMES_VAL_READ | FRAMES_VAL_BEFORE, 99, v, 1), FRAMES_E_LIMIT);
    assert_int_equal(r->stats.overflow, 1);
    assert_int_equal(frames_rec_end(r), 1);
    /* a failing flush keeps the frames; the next flush delivers them */
    b.fail_next = 1;
    assert_int_equal(frames_rec_flush(r), FRAMES_E_IO);
    assert_int_equal(b.frames, 0);
    assert_int_equal(frames_rec_flush(r), 0);
    assert_int_equal(b.frames, 1);
    free(b.data);
    free(r);
}

/* ------------------------------------------------------------------ buffers */

/* Record `n` instructions with a few values each (deterministic content). */
static void record_some(frames_recorder *r, uint64_t first_pc, unsigned n) {
    unsigned i;
    uint8_t raw[4] = {0x90, 0x90, 0x90, 0x90};
    for (i = 0; i < n; i++) {
        uint64_t v = first_pc + i, w = ~v;
        if (frames_rec_begin(r, first_pc + i, raw, 1 + i % 4) <= 0) {
            frames_rec_end(r);
            continue;
        }
        assert_int_equal(frames_rec_reg(r, FRAMES_VAL_GPR | FRAMES_VAL_READ | FRAMES_VAL_BEFORE, "RDI", &v, 8), 1);
        if (i % 3 == 0) assert_int_equal(frames_rec_mem(r, FRAMES_SEL_MEM_READ, v * 8, &w, 1 + i % 8), 1);
        assert_int_equal(frames_rec_reg(r, FRAMES_VAL_GPR | FRAMES_VAL_WRITE | FRAMES_VAL_AFTER, "RSI", &w, 8), 1);
        assert_int_equal(frames_rec_end(r), 1);
    }
}

/* Batches are whole frames, never larger than the buffer; appended with
   frames_writer_add_frames they give the same file as frames_writer_add frame by frame
   (TOC entries fall inside batches: m = 7). */
static void test_flush_batches_equal_writer(void **state) {
    static uint8_t small[FRAMES_REC_MIN_BUFFER];
    frames_recorder *r = (frames_recorder *)calloc(1, sizeof *r);
    batches b = {0};
    frames_writer_options o;
    frames_writer *w1, *w2;
    frame_iter it;
    frames_frame f;
    frames_error err;
    const char *p1 = tu_tmp_path(".frames"), *p2 = tu_tmp_path(".frames");
    unsigned char *d1, *d2;
    size_t n1, n2;
    uint64_t count = 0;
    (void)state;
    assert_int_equal(frames_rec_init(r, small, sizeof small, to_batches, &b, 5), 0);
    record_some(r, 0x1000, 3000);
    assert_true(b.calls >= 10); /* the buffer filled up many times */
    assert_true(b.largest <= sizeof small);
    assert_int_equal(frames_rec_finish(r), 0);
    assert_int_equal(b.frames, 3000);
    assert_int_equal(r->stats.flushes, b.calls);
    assert_int_equal(r->stats.bytes, b.len);

    frames_writer_options_default(&o);
    o.frames_per_toc = 7;
    o.arch = FRAMES_ARCH_I386;
    o.machine = FRAMES_MACH_X86_64;
    assert_int_equal(frames_writer_open_path(&w1, p1, &o, NULL, &err), 0);
    assert_int_equal(frames_writer_open_path(&w2, p2, &o, NULL, &err), 0);
    {   /* the batches in pieces of uneven size */
        size_t pos = 0, take;
        uint64_t flen;
        while (pos < b.len) {
            size_t end = pos;
            unsigned k;
            for (k = 0; k < 1 + (pos / 97) % 13 && end < b.len; k++) {
                memcpy(&flen, b.data + end, 8);
                end += 8 + (size_t)flen;
            }
            take = end - pos;
            assert_int_equal(frames_writer_add_frames(w1, b.data + pos, take), 0);
            pos = end;
        }
    }
    iter_init(&it, &b);
    while (iter_next(&it, &f, NULL)) {
        assert_int_equal(frames_writer_add(w2, &f), 0);
        assert_int_equal(f.std.address, 0x1000 + count);
        count++;
    }
    iter_free(&it);
    assert_int_equal(count, 3000);
    assert_int_equal(frames_writer_close(w1), 0);
    assert_int_equal(frames_writer_close(w2), 0);
    d1 = tu_read_file(p1, &n1);
    d2 = tu_read_file(p2, &n2);
    assert_non_null(d1);
    assert_int_equal(n1, n2);
    assert_memory_equal(d1, d2, n1);
    free(d1);
    free(d2);
    unlink(p1);
    unlink(p2);
    free(b.data);
    free(r);
}

static void test_add_frames_rejects_malformed(void **state) {
    frames_writer *w;
    frames_error err;
    const char *p = tu_tmp_path(".frames");
    uint8_t batch[8 + 4 + 8 + 4] = {4, 0, 0, 0, 0, 0, 0, 0, 0x1a, 0x02, 0x08, 0x00,
                                    9, 0, 0, 0, 0, 0, 0, 0, 0x1a, 0x02, 0x08, 0x00};
    struct stat st1, st2;
    frames_frame f;
    frames_reader *rd;
    int i;
    (void)state;
    assert_int_equal(frames_writer_open_path(&w, p, NULL, NULL, &err), 0);
    assert_int_equal(stat(p, &st1), 0);
    assert_int_equal(frames_writer_add_frames(w, batch, sizeof batch), FRAMES_E_INVALID);
    assert_int_equal(frames_writer_count(w), 0);
    assert_int_equal(stat(p, &st2), 0);
    assert_int_equal(st1.st_size, st2.st_size);
    /* a frame added the ordinary way (buffered by the writer) stays before the batch */
    memset(&f, 0, sizeof f);
    f.kind = FRAMES_KIND_EXCEPTION;
    f.exception.number = 5;
    assert_int_equal(frames_writer_add(w, &f), 0);
    batch[12] = 4; /* now two valid exception frames */
    assert_int_equal(frames_writer_add_frames(w, batch, sizeof batch), 0);
    assert_int_equal(frames_writer_count(w), 3);
    assert_int_equal(frames_writer_close(w), 0);
    assert_int_equal(frames_reader_open_path(&rd, p, NULL, &err), 0);
    for (i = 0; i < 3; i++) {
        assert_int_equal(frames_reader_next(rd, &f), 1);
        assert_int_equal(f.exception.number, i == 0 ? 5 : 0);
    }
    assert_int_equal(frames_reader_next(rd, &f), 0);
    frames_reader_close(rd);
    unlink(p);
}

/* No allocation per record (glibc's malloc statistics; ASan replaces the allocator). */
static void test_no_malloc_per_record(void **state) {
#if defined(__SANITIZE_ADDRESS__)
#define TR_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TR_ASAN 1
#endif
#endif
#ifdef TR_ASAN
    (void)state;
    skip();
#else
    frames_recorder *r = (frames_recorder *)calloc(1, sizeof *r);
    batches b = {0};
    struct mallinfo2 before, after;
    (void)state;
    b.data = (uint8_t *)malloc(8 << 20);
    b.cap = 8 << 20;
    assert_int_equal(frames_rec_init(r, bigbuf, sizeof bigbuf, to_batches, &b, 1), 0);
    record_some(r, 0, 10); /* warm up (stdio, lazy binding) */
    before = mallinfo2();
    record_some(r, 0, 20000);
    after = mallinfo2();
    assert_true(b.len < b.cap);
    assert_int_equal(before.uordblks, after.uordblks);
    assert_int_equal(before.hblks, after.hblks);
    free(b.data);
    free(r);
#endif
}

/* ------------------------------------------------------------------ sampling, filters */

static void test_sampling_windows(void **state) {
    frames_recorder *r = (frames_recorder *)calloc(1, sizeof *r);
    batches b = {0};
    frame_iter it;
    frames_frame f;
    uint64_t i, expect;
    uint8_t nop = 0x90, v = 1;
    (void)state;
    assert_int_equal(frames_rec_init(r, bigbuf, sizeof bigbuf, to_batches, &b, 1), 0);
    assert_int_equal(frames_rec_sampling(r, 3, 5), 0);
    for (i = 0; i < 40; i++) {
        int want = i % 8 < 3;
        assert_int_equal(frames_rec_sampling_active(r), want);
        assert_int_equal(frames_rec_begin(r, i, &nop, 1), want);
        /* values of skipped instructions are ignored, not errors */
        assert_int_equal(frames_rec_mem(r, FRAMES_SEL_MEM_READ, i, &v, 1), want);
        assert_int_equal(frames_rec_end(r), want);
    }
    /* cancel does not advance the window; skip does */
    assert_int_equal(frames_rec_begin(r, 100, &nop, 1), 1); /* 40 % 8 = 0 */
    frames_rec_cancel(r);
    assert_int_equal(frames_rec_begin(r, 101, &nop, 1), 1);
    assert_int_equal(frames_rec_end(r), 1);
    frames_rec_skip(r, 8 * 1000 + 2); /* window position 1 -> 3: skipping starts */
    assert_int_equal(frames_rec_sampling_active(r), 0);
    frames_rec_skip(r, 5);
    assert_int_equal(frames_rec_begin(r, 102, &nop, 1), 1);
    assert_int_equal(frames_rec_end(r), 1);
    assert_int_equal(frames_rec_flush(r), 0);
    iter_init(&it, &b);
    for (i = 0, expect = 0; i < 40; i++) {
        if (i % 8 >= 3) continue;
        assert_true(iter_next(&it, &f, NULL));
        assert_int_equal(f.std.address, i);
        expect++;
    }
    assert_true(iter_next(&it, &f, NULL));
    assert_int_equal(f.std.address, 101);
    assert_true(iter_next(&it, &f, NULL));
    assert_int_equal(f.std.address, 102);
    assert_false(iter_next(&it, &f, NULL));
    iter_free(&it);
    assert_int_equal(r->stats.recorded, expect + 2);
    assert_int_equal(r->stats.instructions, 40 + 1 + 8 * 1000 + 2 + 5 + 1);
    /* record nothing; switch sampling off */
    assert_int_equal(frames_rec_sampling(r, 0, 4), 0);
    for (i = 0; i < 9; i++) {
        assert_int_equal(frames_rec_begin(r, i, &nop, 1), 0);
        assert_int_equal(frames_rec_end(r), 0);
    }
    assert_int_equal(frames_rec_sampling(r, 0, 0), 0);
    assert_int_equal(frames_rec_begin(r, 0, &nop, 1), 1);
    frames_rec_cancel(r);
    assert_int_equal(frames_rec_sampling(r, UINT64_MAX, 2), FRAMES_E_INVALID);
    free(b.data);
    free(r);
}

static void test_filters(void **state) {
    static const uint32_t sel[] = {FRAMES_SEL_REG_READ, FRAMES_SEL_MEM_OLD,
                                   FRAMES_VAL_SIMD | FRAMES_VAL_FLOAT};
    static const struct { uint32_t attr; int kept; } cases[] = {
        {FRAMES_VAL_GPR | FRAMES_VAL_READ | FRAMES_VAL_BEFORE, 1},
        {FRAMES_VAL_CTRL | FRAMES_VAL_READ | FRAMES_VAL_WRITE | FRAMES_VAL_BEFORE, 1},
        {FRAMES_VAL_GPR | FRAMES_VAL_WRITE | FRAMES_VAL_AFTER, 0},
        {FRAMES_VAL_GPR | FRAMES_VAL_READ | FRAMES_VAL_AFTER, 0},
        {FRAMES_VAL_MEM | FRAMES_VAL_READ | FRAMES_VAL_BEFORE, 0},
        {FRAMES_VAL_MEM | FRAMES_VAL_WRITE | FRAMES_VAL_BEFORE, 1},
        {FRAMES_VAL_MEM | FRAMES_VAL_WRITE | FRAMES_VAL_AFTER, 0},
        {FRAMES_VAL_SIMD | FRAMES_VAL_WRITE | FRAMES_VAL_AFTER | FRAMES_VAL_FLOAT, 1},
        {FRAMES_VAL_SIMD | FRAMES_VAL_WRITE | FRAMES_VAL_AFTER, 0},   /* class INT by default */
        {FRAMES_VAL_SIMD | FRAMES_VAL_READ | FRAMES_VAL_BEFORE, 1},   /* via REG_READ */
        {FRAMES_VAL_PC | FRAMES_VAL_BEFORE, 0},                       /* no action */
    };
    frames_recorder *r = (frames_recorder *)calloc(1, sizeof *r);
    batches b = {0};
    frame_iter it;
    frames_frame f;
    uint32_t bad = 0x80000000u;
    uint64_t v = 0;
    size_t i, kept = 0;
    uint8_t nop = 0x90;
    (void)state;
    assert_int_equal(frames_rec_init(r, bigbuf, sizeof bigbuf, to_batches, &b, 1), 0);
    assert_int_equal(frames_rec_filter(r, &bad, 1), FRAMES_E_INVALID);
    assert_int_equal(frames_rec_filter(r, sel, FRAMES_REC_MAX_SELECTORS + 1), FRAMES_E_INVALID);
    assert_int_equal(frames_rec_filter(r, sel, 3), 0);
    assert_false(frames_rec_wants(r, cases[0].attr)); /* no open instruction */
    assert_int_equal(frames_rec_begin(r, 0, &nop, 1), 1);
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint32_t a = cases[i].attr;
        v = i;
        assert_int_equal(frames_rec_wants(r, a), cases[i].kept);
        if (a & FRAMES_VAL_MEM) assert_int_equal(frames_rec_mem(r, a, i, &v, 8), cases[i].kept);
        else assert_int_equal(frames_rec_reg(r, a, "R", &v, 8), cases[i].kept);
        kept += (size_t)cases[i].kept;
    }
    assert_int_equal(frames_rec_end(r), 1);
    assert_int_equal(frames_rec_flush(r), 0);
    assert_int_equal(r->stats.values, kept);
    assert_int_equal(r->stats.filtered, sizeof cases / sizeof cases[0] - kept);
    iter_init(&it, &b);
    assert_true(iter_next(&it, &f, NULL));
    assert_int_equal(f.std.npre + f.std.npost, kept);
    /* the kept values are the right ones, in order: their value is the case index */
    {
        size_t pre = 0, post = 0;
        for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            const frames_operand *op;
            uint64_t got;
            if (!cases[i].kept) continue;
            op = (cases[i].attr & FRAMES_VAL_BEFORE) ? &f.std.pre[pre++] : &f.std.post[post++];
            memcpy(&got, op->value.ptr, 8);
            assert_int_equal(got, i);
        }
    }
    iter_free(&it);
    /* no selectors: everything */
    assert_int_equal(frames_rec_filter(r, NULL, 0), 0);
    assert_int_equal(frames_rec_begin(r, 0, &nop, 1), 1);
    assert_true(frames_rec_wants(r, FRAMES_VAL_PC | FRAMES_VAL_BEFORE));
    frames_rec_cancel(r);
    free(b.data);
    free(r);
}

/* A prepared register value gives the bytes frames_rec_reg gives with the same
   attributes, name and size, for every register kind, position, class, address role,
   name length and size; the filter, sampling and the value limit apply to it alike; and
   frames_rec_prepare refuses what frames_rec_reg refuses. */
static void test_prepared_values(void **state) {
    static const uint32_t kinds[] = {FRAMES_VAL_GPR, FRAMES_VAL_SIMD, FRAMES_VAL_CTRL, FRAMES_VAL_PC,
                                     FRAMES_VAL_OREG};
    static const uint32_t hows[] = {FRAMES_VAL_READ | FRAMES_VAL_BEFORE, FRAMES_VAL_WRITE | FRAMES_VAL_BEFORE,
                                    FRAMES_VAL_READ | FRAMES_VAL_WRITE | FRAMES_VAL_BEFORE,
                                    FRAMES_VAL_WRITE | FRAMES_VAL_AFTER, FRAMES_VAL_BEFORE,
                                    FRAMES_VAL_READ | FRAMES_VAL_AFTER};
    static const uint32_t extras[] = {0, FRAMES_VAL_BASE, FRAMES_VAL_INDEX, FRAMES_VAL_BASE | FRAMES_VAL_INDEX,
                                      FRAMES_VAL_FLOAT, FRAMES_VAL_INT};
    static const char *names[] = {"", "R", "RAX", "XMM15", "ABCDEFGHIJKLMNOPQRSTUVW"}; /* 23 bytes */
    static const size_t sizes[] = {1, 2, 4, 7, 8, 10, 15, 16, 17, 32, 63, 64};
    static uint8_t buf2[1 << 16];
    frames_recorder *a = (frames_recorder *)calloc(1, sizeof *a), *p = (frames_recorder *)calloc(1, sizeof *p);
    batches ba = {0}, bp = {0};
    frames_rec_prep prep;
    frames_error err;
    uint8_t v[64 + 16], nop = 0x90; /* values of up to 64 bytes from v + z, z < 12 */
    size_t k, h, x, n, z, count = 0;
    const uint32_t sel = FRAMES_SEL_REG_READ;
    (void)state;
    for (k = 0; k < sizeof v; k++) v[k] = (uint8_t)(0xa0 + k);
    assert_int_equal(frames_rec_init(a, bigbuf, sizeof bigbuf, to_batches, &ba, 5), 0);
    assert_int_equal(frames_rec_init(p, buf2, sizeof buf2, to_batches, &bp, 5), 0);
    for (k = 0; k < sizeof kinds / sizeof *kinds; k++)
        for (h = 0; h < sizeof hows / sizeof *hows; h++)
            for (x = 0; x < sizeof extras / sizeof *extras; x++)
                for (n = 0; n < sizeof names / sizeof *names; n++) {
                    uint32_t attr = kinds[k] | hows[h] | extras[x];
                    assert_int_equal(frames_rec_begin(a, 0x1000 + count, &nop, 1), 1);
                    assert_int_equal(frames_rec_begin(p, 0x1000 + count, &nop, 1), 1);
                    for (z = 0; z < sizeof sizes / sizeof *sizes; z++) {
                        assert_int_equal(frames_rec_prepare(&prep, attr, names[n], sizes[z], &err), 0);
                        assert_int_equal(frames_rec_reg(a, attr, names[n], v + z, sizes[z]), 1);
                        assert_int_equal(frames_rec_reg_prepared(p, &prep, v + z), 1);
                    }
                    assert_int_equal(frames_rec_end(a), 1);
                    assert_int_equal(frames_rec_end(p), 1);
                    count++;
                }
    assert_int_equal(frames_rec_flush(a), 0);
    assert_int_equal(frames_rec_flush(p), 0);
    assert_int_equal(ba.frames, count);
    assert_int_equal(ba.len, bp.len);
    assert_memory_equal(ba.data, bp.data, ba.len);
    assert_int_equal(a->stats.values, p->stats.values);

    /* what frames_rec_reg refuses */
    assert_int_equal(frames_rec_prepare(&prep, FRAMES_VAL_MEM | FRAMES_VAL_READ | FRAMES_VAL_BEFORE, NULL, 8, &err),
                     FRAMES_E_INVALID);
    assert_int_equal(err.code, FRAMES_E_INVALID);
    assert_int_equal(frames_rec_prepare(&prep, FRAMES_VAL_GPR | FRAMES_VAL_READ, "RAX", 8, NULL), FRAMES_E_INVALID);
    assert_int_equal(frames_rec_prepare(&prep, FRAMES_VAL_GPR | FRAMES_VAL_GPR << 1 | FRAMES_VAL_BEFORE, "RAX", 8,
                                        NULL), FRAMES_E_INVALID);
    assert_int_equal(frames_rec_prepare(&prep, FRAMES_VAL_GPR | FRAMES_VAL_BEFORE, "RAX", 0, NULL), FRAMES_E_INVALID);
    assert_int_equal(frames_rec_prepare(&prep, FRAMES_VAL_GPR | FRAMES_VAL_BEFORE, "RAX", 65, NULL), FRAMES_E_INVALID);
    assert_int_equal(frames_rec_prepare(&prep, FRAMES_VAL_GPR | FRAMES_VAL_BEFORE, "ABCDEFGHIJKLMNOPQRSTUVWX", 8,
                                        NULL), FRAMES_E_INVALID);
    assert_int_equal(frames_rec_reg(a, FRAMES_VAL_GPR | FRAMES_VAL_BEFORE, "RAX", v, 8), FRAMES_E_STATE);
    assert_int_equal(frames_rec_prepare(&prep, FRAMES_VAL_GPR | FRAMES_VAL_WRITE | FRAMES_VAL_AFTER, "RAX", 8, NULL), 0);
    assert_int_equal(frames_rec_reg_prepared(p, &prep, v), FRAMES_E_STATE); /* no open instruction */

    /* the filter: kept and dropped as frames_rec_reg */
    assert_int_equal(frames_rec_filter(p, &sel, 1), 0);
    assert_int_equal(frames_rec_begin(p, 0, &nop, 1), 1);
    assert_int_equal(frames_rec_reg_prepared(p, &prep, v), 0);
    assert_int_equal(p->stats.filtered, 1);
    assert_int_equal(frames_rec_prepare(&prep, FRAMES_VAL_GPR | FRAMES_VAL_READ | FRAMES_VAL_BEFORE, "RAX", 8, NULL), 0);
    assert_int_equal(frames_rec_reg_prepared(p, &prep, v), 1);
    /* the limit of values per instruction */
    for (k = 1; k < FRAMES_REC_MAX_VALUES; k++) assert_int_equal(frames_rec_reg_prepared(p, &prep, v), 1);
    assert_int_equal(frames_rec_reg_prepared(p, &prep, v), FRAMES_E_LIMIT);
    frames_rec_cancel(p);
    /* sampling: a skipped instruction keeps nothing */
    assert_int_equal(frames_rec_sampling(p, 1, 1), 0);
    assert_int_equal(frames_rec_begin(p, 0, &nop, 1), 1);
    frames_rec_cancel(p);
    frames_rec_skip(p, 1);
    assert_int_equal(frames_rec_begin(p, 0, &nop, 1), 0);
    assert_int_equal(frames_rec_reg_prepared(p, &prep, v), 0);
    assert_int_equal(frames_rec_end(p), 0);
    free(ba.data);
    free(bp.data);
    free(a);
    free(p);
}

/* ------------------------------------------------------------------ threads */

#define NTHREADS 4
#define PER_THREAD 5000

typedef struct thread_arg {
    frames_rec_shared *shared;
    uint64_t tid;
    int rc;
} thread_arg;

static void mutex_lock(void *m) { pthread_mutex_lock((pthread_mutex_t *)m); }
static void mutex_unlock(void *m) { pthread_mutex_unlock((pthread_mutex_t *)m); }

static void *recording_thread(void *p) {
    thread_arg *a = (thread_arg *)p;
    frames_recorder *r = (frames_recorder *)malloc(sizeof *r);
    uint8_t *buf = (uint8_t *)malloc(FRAMES_REC_MIN_BUFFER);
    uint64_t i, v;
    uint8_t raw[2] = {0x0f, 0x0b};
    a->rc = frames_rec_init(r, buf, FRAMES_REC_MIN_BUFFER, frames_rec_flush_to_writer, a->shared, a->tid);
    for (i = 0; i < PER_THREAD && a->rc == 0; i++) {
        v = a->tid << 32 | i;
        if (frames_rec_begin(r, v, raw, 2) != 1 ||
            frames_rec_reg(r, FRAMES_VAL_GPR | FRAMES_VAL_READ | FRAMES_VAL_BEFORE, "RAX", &v, 8) != 1 ||
            frames_rec_end(r) != 1)
            a->rc = -1;
    }
    if (a->rc == 0) a->rc = frames_rec_finish(r);
    free(buf);
    free(r);
    return NULL;
}

/* Four threads, one recorder each, one writer: every frame arrives whole, each thread's
   frames in order, the TOC is valid. */
static void test_threads_one_trace(void **state) {
    pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    frames_rec_shared shared;
    frames_writer_options o;
    frames_reader *rd;
    frames_reader_info st;
    frames_error err;
    frames_frame f;
    pthread_t th[NTHREADS];
    thread_arg args[NTHREADS];
    uint64_t next[NTHREADS] = {0}, n = 0;
    const char *p = tu_tmp_path(".frames");
    int i, rc, switches = 0;
    uint64_t last_tid = 0;
    (void)state;
    frames_writer_options_default(&o);
    o.frames_per_toc = 1000;
    memset(&shared, 0, sizeof shared);
    assert_int_equal(frames_writer_open_path(&shared.writer, p, &o, NULL, &err), 0);
    shared.lock = mutex_lock;
    shared.unlock = mutex_unlock;
    shared.lock_ctx = &mu;
    for (i = 0; i < NTHREADS; i++) {
        args[i].shared = &shared;
        args[i].tid = (uint64_t)i + 1;
        assert_int_equal(pthread_create(&th[i], NULL, recording_thread, &args[i]), 0);
    }
    for (i = 0; i < NTHREADS; i++) {
        pthread_join(th[i], NULL);
        assert_int_equal(args[i].rc, 0);
    }
    assert_int_equal(frames_writer_close(shared.writer), 0);
    assert_int_equal(frames_reader_open_path(&rd, p, NULL, &err), 0);
    while ((rc = frames_reader_next(rd, &f)) > 0) {
        uint64_t t = f.std.thread_id;
        assert_int_equal(f.kind, FRAMES_KIND_STD);
        assert_true(t >= 1 && t <= NTHREADS);
        assert_int_equal(f.std.address, t << 32 | next[t - 1]);
        next[t - 1]++;
        if (t != last_tid) switches++;
        last_tid = t;
        n++;
    }
    assert_int_equal(rc, 0);
    assert_int_equal(n, NTHREADS * PER_THREAD);
    for (i = 0; i < NTHREADS; i++) assert_int_equal(next[i], PER_THREAD);
    assert_true(switches >= NTHREADS);
    assert_int_equal(frames_reader_info_get(rd, &st), 0);
    assert_true(st.finished);
    assert_true(st.toc_used);
    assert_true(st.cxx_legacy_accepts);
    assert_int_equal(frames_reader_seek(rd, 12345), 0);
    assert_int_equal(frames_reader_next(rd, &f), 1);
    frames_reader_close(rd);
    unlink(p);
}

/* ------------------------------------------------------------------ crash safety */

/* The child records 2000 instructions with a small buffer, reports how many frames the
   writer has received, and is SIGKILLed: the file must be an unfinished trace holding
   exactly those frames, in order, ending on a frame boundary. */
static void test_crash_sigkill_leaves_readable_trace(void **state) {
    const char *p = tu_tmp_path(".frames");
    int fds[2], status;
    uint64_t flushed = 0, n = 0, i;
    pid_t pid;
    frames_reader *rd;
    frames_reader_info st;
    frames_error err;
    frames_frame f;
    int rc;
    (void)state;
    assert_int_equal(pipe(fds), 0);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        static uint8_t buf[FRAMES_REC_MIN_BUFFER];
        static frames_recorder r;
        frames_rec_shared sh;
        memset(&sh, 0, sizeof sh);
        if (frames_writer_open_path(&sh.writer, p, NULL, NULL, &err) < 0) _exit(10);
        if (frames_rec_init(&r, buf, sizeof buf, frames_rec_flush_to_writer, &sh, 9) < 0) _exit(11);
        record_some(&r, 0, 2000);
        flushed = frames_writer_count(sh.writer);
        if (write(fds[1], &flushed, 8) != 8) _exit(12);
        kill(getpid(), SIGKILL);
        _exit(13);
    }
    close(fds[1]);
    assert_int_equal(read(fds[0], &flushed, 8), 8);
    close(fds[0]);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    assert_true(flushed > 100 && flushed < 2000); /* some flushed, some lost in the buffer */
    assert_int_equal(frames_reader_open_path(&rd, p, NULL, &err), 0);
    for (i = 0; (rc = frames_reader_next(rd, &f)) > 0; i++) {
        assert_int_equal(f.std.address, i);
        n++;
    }
    assert_int_equal(rc, 0);
    assert_int_equal(n, flushed);
    assert_int_equal(frames_reader_info_get(rd, &st), 0);
    assert_false(st.finished);
    assert_false(st.truncated);
    assert_true(st.ocaml_accepts);
    frames_reader_close(rd);
    unlink(p);
}

/* A fatal-signal handler finishes the trace: the faulting instruction (open, with its
   pre values) is the last frame, without a post list; header and TOC are written. */
static frames_recorder crash_rec;
static frames_rec_shared crash_shared;
static uint64_t crash_toc[64];
static volatile int crash_spin;

static void spin_lock(void *p) {
    (void)p;
    while (__atomic_exchange_n(&crash_spin, 1, __ATOMIC_ACQUIRE)) {
    }
}
static void spin_unlock(void *p) {
    (void)p;
    __atomic_store_n(&crash_spin, 0, __ATOMIC_RELEASE);
}

static void on_fatal(int sig) {
    int rc = frames_rec_crash_finish(&crash_rec, &crash_shared);
    (void)sig;
    _exit(rc == FRAMES_OK ? 42 : 43);
}

static void test_crash_signal_handler_finishes(void **state) {
    const char *p = tu_tmp_path(".frames");
    int status, rc;
    pid_t pid;
    frames_reader *rd;
    frames_reader_info st;
    frames_error err;
    frames_frame f;
    uint64_t n = 0;
    int saw_open = 0;
    (void)state;
    /* the child's deliberate invalid write is an error to memcheck, which changes its
       exit status (build.sh valgrind sets FRAMES_VALGRIND) */
    if (getenv("FRAMES_VALGRIND")) skip();
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        static uint8_t buf[FRAMES_REC_MIN_BUFFER];
        frames_writer_options o;
        struct sigaction sa;
        volatile int *volatile nowhere = NULL;
        uint64_t addr = 0;
        frames_writer_options_default(&o);
        o.frames_per_toc = 100;
        o.toc_storage = crash_toc;
        o.toc_capacity = 64;
        crash_shared.lock = spin_lock;
        crash_shared.unlock = spin_unlock;
        if (frames_writer_open_path(&crash_shared.writer, p, &o, NULL, &err) < 0) _exit(10);
        if (frames_rec_init(&crash_rec, buf, sizeof buf, frames_rec_flush_to_writer, &crash_shared, 3) < 0)
            _exit(11);
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_fatal;
        sigaction(SIGSEGV, &sa, NULL);
        record_some(&crash_rec, 0, 1000);
        frames_rec_begin(&crash_rec, 0xdead, "\x8b\x00", 2);
        frames_rec_reg(&crash_rec, FRAMES_VAL_GPR | FRAMES_VAL_READ | FRAMES_VAL_BEFORE, "RAX", &addr, 8);
        *nowhere = 1; /* the instruction faults */
        _exit(14);
    }
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 42);
    assert_int_equal(frames_reader_open_path(&rd, p, NULL, &err), 0);
    assert_int_equal(frames_reader_info_get(rd, &st), 0);
    assert_true(st.finished);
    assert_int_equal(st.header.nframes, 1001);
    while ((rc = frames_reader_next(rd, &f)) > 0) {
        if (n < 1000) {
            assert_int_equal(f.std.address, n);
            assert_true(f.std.has_post);
        } else {
            assert_int_equal(f.std.address, 0xdead);
            assert_false(f.std.has_post);
            bytes_eq(f.std.pre[0].name, "RAX", 3);
            saw_open = 1;
        }
        n++;
    }
    assert_int_equal(rc, 0);
    assert_int_equal(n, 1001);
    assert_true(saw_open);
    assert_int_equal(frames_reader_info_get(rd, &st), 0);
    assert_true(st.toc_used);
    assert_true(st.cxx_legacy_accepts);
    frames_reader_close(rd);
    unlink(p);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mapping_spec_example),
        cmocka_unit_test(test_mapping_matches_upstream_frames),
        cmocka_unit_test(test_mapping_rules),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_flush_batches_equal_writer),
        cmocka_unit_test(test_add_frames_rejects_malformed),
        cmocka_unit_test(test_no_malloc_per_record),
        cmocka_unit_test(test_sampling_windows),
        cmocka_unit_test(test_filters),
        cmocka_unit_test(test_prepared_values),
        cmocka_unit_test(test_threads_one_trace),
        cmocka_unit_test(test_crash_sigkill_leaves_readable_trace),
        cmocka_unit_test(test_crash_signal_handler_finishes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
