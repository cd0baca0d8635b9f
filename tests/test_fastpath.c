/* test_fastpath: the codec's fast paths for the shapes tracers write (plain operands,
   std_frames of them) at every size boundary, against pbbuild.h, an encoder written
   independently of frames.h:
   - frames_encode_frame, frames_frame_size and frames_writer_add give exactly the bytes
     pbbuild.h builds, for register names, addresses, bit lengths, values, usage flags
     and taints on both sides of each limit of the fast paths;
   - decoding those bytes gives the model they were built from, without flags, and the
     same whether the operand lists go through the one-pass list decoder and its operand
     templates (a warm decoder) or the general decoder (a fresh decoder, whose arena is
     still empty, decodes every operand the general way);
   - unknown fields at every level of an operand list and bools of 2 decode exactly as
     the general decoder decodes them, flags included;
   - near misses (every byte of such frames changed, lengths cut): whatever decodes
     without NONCANONICAL or INCOMPLETE re-encodes to exactly its input, and the fresh
     and warm decoders agree;
   - invalid operands in a std_frame (checked after encoding, only when an operand is
     not plain) are refused by frames_encode_frame and frames_writer_add, and a refused
     frame leaves no trace in the output, not even a TOC entry;
   - frames_peek_std takes every frame built here and gives the address, thread and
     instruction length the decoder gives; on the near misses, whatever it takes and the
     decoder decodes, they agree on. */
#include "frames.h"

#include "pbbuild.h"
#include "testutil.h"

/* ---------------------------------------------------------------- the expected bytes */

/* operand_info as libprotobuf writes it (fields in order, every usage bool written, an
   unset taint as no_taint: true) when unknown_at is 0 and `read` and `no_taint` are the
   model's bools; else an operand the general decoder must take: an unknown varint field
   (number 9) at `unknown_at` (1 in reg_operand / mem_operand, 2 in operand_info_specific,
   3 first in operand_info, 4 between bit_length and usage, 5 last in usage, 6 last in
   taint_info, 7 after the value), or `read` / `no_taint` written as 2 or more. */
static void pb_operand_as(pb_buf *out, const frames_operand *op, int unknown_at, uint64_t read,
                          uint64_t no_taint) {
    static pb_buf inner, spec, usage, taint, o;
    pb_reset(&inner);
    pb_reset(&spec);
    pb_reset(&usage);
    pb_reset(&taint);
    pb_reset(&o);
    if (op->spec == FRAMES_REG) pb_bytes(&inner, 1, op->name.ptr, op->name.len);
    else pb_u64(&inner, 1, op->address);
    if (unknown_at == 1) pb_u64(&inner, 9, 5);
    pb_msg(&spec, op->spec == FRAMES_REG ? 2 : 1, &inner);
    if (unknown_at == 2) pb_u64(&spec, 9, 5);
    pb_u64(&usage, 1, read);
    pb_u64(&usage, 2, op->written != 0);
    pb_u64(&usage, 3, op->index != 0);
    pb_u64(&usage, 4, op->base != 0);
    if (unknown_at == 5) pb_u64(&usage, 9, 5);
    if (op->taint.set == FRAMES_TAINT_ID) pb_u64(&taint, 2, op->taint.id);
    else if (op->taint.set == FRAMES_TAINT_MULTIPLE) pb_u64(&taint, 3, op->taint.multiple != 0);
    else pb_u64(&taint, 1, no_taint);
    if (unknown_at == 6) pb_u64(&taint, 9, 5);
    if (unknown_at == 3) pb_u64(&o, 9, 5);
    pb_msg(&o, 1, &spec);
    pb_sint(&o, 2, op->bit_length);
    if (unknown_at == 4) pb_u64(&o, 9, 5);
    pb_msg(&o, 3, &usage);
    pb_msg(&o, 4, &taint);
    pb_bytes(&o, 5, op->value.ptr, op->value.len);
    if (unknown_at == 7) pb_u64(&o, 9, 5);
    pb_msg(out, 1, &o);
}

static void pb_operand(pb_buf *out, const frames_operand *op) {
    pb_operand_as(out, op, 0, op->read != 0, op->taint.set == 0 || op->taint.no_taint != 0);
}

static void pb_frame(pb_buf *out, const frames_std_frame *s) {
    static pb_buf std, list;
    uint32_t i;
    pb_reset(&std);
    pb_u64(&std, 1, s->address);
    pb_u64(&std, 2, s->thread_id);
    pb_bytes(&std, 3, s->rawbytes.ptr, s->rawbytes.len);
    pb_reset(&list);
    for (i = 0; i < s->npre; i++) pb_operand(&list, &s->pre[i]);
    pb_msg(&std, 4, &list);
    if (s->has_post) {
        pb_reset(&list);
        for (i = 0; i < s->npost; i++) pb_operand(&list, &s->post[i]);
        pb_msg(&std, 5, &list);
    }
    if (s->has_mode) pb_bytes(&std, 6, s->mode.ptr, s->mode.len);
    pb_reset(out);
    pb_msg(out, 1, &std);
}

/* ---------------------------------------------------------------- models */

static uint8_t data[512]; /* names and values are views into this */

/* What the decoder gives for what the encoder was given (bools become 0/1, an unset
   taint is no_taint: true). */
static frames_operand normalized(const frames_operand *op) {
    frames_operand n = *op;
    n.read = op->read != 0;
    n.written = op->written != 0;
    n.index = op->index != 0;
    n.base = op->base != 0;
    if (op->spec == FRAMES_REG) n.address = 0;
    else n.name = frames_bytes_of(NULL, 0);
    if (op->taint.set == 0 || op->taint.set == FRAMES_TAINT_NONE) {
        n.taint.set = FRAMES_TAINT_NONE;
        n.taint.no_taint = op->taint.set == 0 || op->taint.no_taint != 0;
        n.taint.id = 0;
        n.taint.multiple = 0;
    } else if (op->taint.set == FRAMES_TAINT_ID) {
        n.taint.no_taint = n.taint.multiple = 0;
    } else {
        n.taint.multiple = op->taint.multiple != 0;
        n.taint.no_taint = 0;
        n.taint.id = 0;
    }
    return n;
}

static int bytes_eq(frames_bytes a, frames_bytes b) {
    return a.len == b.len && (a.len == 0 || memcmp(a.ptr, b.ptr, a.len) == 0);
}

static int operand_eq(const frames_operand *a, const frames_operand *b) {
    return a->spec == b->spec && a->read == b->read && a->written == b->written &&
           a->index == b->index && a->base == b->base && a->bit_length == b->bit_length &&
           a->address == b->address && bytes_eq(a->name, b->name) &&
           a->taint.set == b->taint.set && a->taint.no_taint == b->taint.no_taint &&
           a->taint.multiple == b->taint.multiple && a->taint.id == b->taint.id &&
           bytes_eq(a->value, b->value);
}

static int operands_eq(const frames_operand *a, uint32_t na, const frames_operand *b, uint32_t nb) {
    uint32_t i;
    if (na != nb) return 0;
    for (i = 0; i < na; i++)
        if (!operand_eq(&a[i], &b[i])) return 0;
    return 1;
}

/* Everything a decoded frame holds (for frames of any kind only std is compared in
   depth; the rest must agree in kind, flags and presence). */
static int frame_eq(const frames_frame *a, const frames_frame *b) {
    const frames_std_frame *x = &a->std, *y = &b->std;
    return a->kind == b->kind && a->present == b->present && a->flags == b->flags &&
           x->address == y->address && x->thread_id == y->thread_id &&
           bytes_eq(x->rawbytes, y->rawbytes) && x->has_post == y->has_post &&
           x->has_mode == y->has_mode && bytes_eq(x->mode, y->mode) &&
           operands_eq(x->pre, x->npre, y->pre, y->npre) &&
           operands_eq(x->post, x->npost, y->post, y->npost);
}

/* ---------------------------------------------------------------- the shapes */

static frames_operand reg_op(size_t name_len, size_t value_len) {
    frames_operand op;
    memset(&op, 0, sizeof op);
    op.spec = FRAMES_REG;
    op.name = frames_bytes_of(data + 100, name_len);
    op.bit_length = 64;
    op.read = 1;
    op.taint.set = FRAMES_TAINT_NONE;
    op.taint.no_taint = 1;
    op.value = frames_bytes_of(data + 7, value_len);
    return op;
}

static frames_operand mem_op(uint64_t address, size_t value_len) {
    frames_operand op = reg_op(0, value_len);
    op.spec = FRAMES_MEM;
    op.name = frames_bytes_of(NULL, 0);
    op.address = address;
    return op;
}

static frames_frame std_of(frames_operand *ops, uint32_t npre, uint32_t npost) {
    frames_frame f;
    memset(&f, 0, sizeof f);
    f.kind = FRAMES_KIND_STD;
    f.std.address = 0x401000;
    f.std.thread_id = 1;
    f.std.rawbytes = frames_bytes_of(data + 3, 3);
    f.std.pre = ops;
    f.std.npre = npre;
    f.std.post = ops + npre;
    f.std.npost = npost;
    f.std.has_post = npost > 0;
    return f;
}

/* The operand in the middle of a list of three, and alone in the post list. */
static frames_frame frame_around(frames_operand *ops, const frames_operand *op) {
    ops[0] = reg_op(5, 8);
    ops[1] = *op;
    ops[2] = mem_op(0x7ffc12345678ull, 8);
    ops[3] = *op;
    return std_of(ops, 3, 1);
}

/* ---------------------------------------------------------------- checks */

static frames_decoder fresh_dec, warm_dec;

static int setup(void **state) {
    static uint8_t enc[256];
    frames_operand op;
    frames_frame f, d;
    size_t i, len;
    (void)state;
    for (i = 0; i < sizeof data; i++) data[i] = (uint8_t)(i * 37 + 11);
    /* the warm decoder gets its arena from a first frame with an operand list */
    frames_decoder_init(&warm_dec, NULL, 0, NULL);
    op = reg_op(5, 8);
    f = std_of(&op, 1, 0);
    if (frames_encode_frame(&f, 0, enc, sizeof enc, &len, NULL) != FRAMES_OK ||
        frames_decode_frame(&warm_dec, enc, len, &d, NULL) != FRAMES_OK)
        return -1;
    return 0;
}

static void warm_close(void);

static int teardown(void **state) {
    (void)state;
    frames_decoder_free(&warm_dec);
    warm_close();
    return 0;
}

/* Decode with a fresh decoder (no arena yet: the general list path) and with the warm
   one (the one-pass list path when the shape allows it); both must agree. */
static int decode_both(const uint8_t *p, size_t n, frames_frame *warm) {
    frames_frame fresh;
    int rc_fresh, rc_warm;
    frames_decoder_init(&fresh_dec, NULL, 0, NULL);
    rc_fresh = frames_decode_frame(&fresh_dec, p, n, &fresh, NULL);
    rc_warm = frames_decode_frame(&warm_dec, p, n, warm, NULL);
    assert_int_equal(rc_fresh, rc_warm);
    if (rc_fresh == FRAMES_OK) assert_true(frame_eq(&fresh, warm));
    frames_decoder_free(&fresh_dec);
    return rc_warm;
}

/* A memory sink (frames_sink_memory) emptied for each use; its buffer is kept. */
static frames_sink sink_of(frames_membuf *m) {
    m->size = 0;
    return frames_sink_memory(m);
}

/* Encoding f gives pbbuild's bytes (encode, size, writer), decoding them gives f back. */
/* One writer that gets every frame checked, one after another: from the second frame on,
   frames_writer_add writes plain frames in one pass with the sizes of the previous frame's
   lengths guessed (and encodes them the exact way when a guess is wrong), so the frames
   of these tests, whose sizes go up and down across every limit, try both ways. */
static frames_writer warm;
static frames_membuf warm_sink;
static int warm_open;

static void warm_close(void) {
    if (warm_open) frames_writer_abandon(&warm);
    warm_open = 0;
}

static void warm_check(const frames_frame *f, const pb_buf *want) {
    frames_sink k = sink_of(&warm_sink);
    frames_error err;
    size_t i;
    uint64_t size = 0;
    if (!warm_open) {
        assert_int_equal(frames_writer_init(&warm, &k, NULL, NULL, &err), FRAMES_OK);
        warm_open = 1;
    }
    warm_sink.size = 0;   /* the header and earlier frames are not looked at again */
    assert_int_equal(frames_writer_add(&warm, f), FRAMES_OK);
    assert_int_equal(frames_writer_flush(&warm), FRAMES_OK);
    assert_int_equal(warm_sink.size, 8 + want->n);
    for (i = 0; i < 8; i++) size |= (uint64_t)warm_sink.data[i] << (8 * i);
    assert_int_equal(size, want->n);
    assert_memory_equal(warm_sink.data + 8, want->b, want->n);
    warm_sink.size = 0;
}

/* frames_peek_std gives what the decoder gives for every input it accepts that decodes
   (it does not look inside the operand lists, so damage there is the decoder's to find),
   and accepts every frame a writer writes (must_accept). */
static void check_head(const uint8_t *in, size_t n, int must_accept) {
    uint64_t pc = 0, tid = 0;
    size_t len = 0;
    frames_frame d;
    int head = frames_peek_std(in, n, &pc, &tid, &len);
    if (must_accept) assert_int_equal(head, 1);
    if (!head || decode_both(in, n, &d) != FRAMES_OK) return;
    assert_int_equal(d.kind, FRAMES_KIND_STD);
    assert_int_equal(d.std.address, pc);
    assert_int_equal(d.std.thread_id, tid);
    assert_int_equal(d.std.rawbytes.len, len);
}

static void check_frame(const frames_frame *f) {
    static pb_buf want;
    static uint8_t out[1 << 14];
    static frames_membuf sb;
    frames_sink k = sink_of(&sb);
    frames_writer w;
    frames_frame d;
    frames_error err;
    size_t len = 0, first;
    uint32_t i;
    pb_frame(&want, &f->std);
    assert_int_equal(frames_frame_size(f), want.n);
    assert_int_equal(frames_encode_frame(f, 0, out, sizeof out, &len, &err), FRAMES_OK);
    assert_int_equal(len, want.n);
    assert_memory_equal(out, want.b, want.n);
    /* exactly enough room, and one byte short */
    assert_int_equal(frames_encode_frame(f, 0, out, want.n, &len, &err), FRAMES_OK);
    assert_memory_equal(out, want.b, want.n);
    assert_int_equal(frames_encode_frame(f, 0, out, want.n - 1, &len, &err), FRAMES_E_SPACE);
    assert_int_equal(len, want.n);
    /* the writer: the frame after its size word */
    assert_int_equal(frames_writer_init(&w, &k, NULL, NULL, &err), FRAMES_OK);
    first = sb.size;
    assert_int_equal(frames_writer_add(&w, f), FRAMES_OK);
    assert_int_equal(frames_writer_flush(&w), FRAMES_OK);
    assert_int_equal(sb.size, first + 8 + want.n);
    assert_memory_equal(sb.data + first + 8, want.b, want.n);
    frames_writer_abandon(&w);
    warm_check(f, &want);
    check_head(want.b, want.n, 1);
    /* decoding */
    assert_int_equal(decode_both(want.b, want.n, &d), FRAMES_OK);
    assert_int_equal(d.flags, 0);
    assert_int_equal(d.kind, FRAMES_KIND_STD);
    assert_int_equal(d.std.npre, f->std.npre);
    assert_int_equal(d.std.npost, f->std.npost);
    for (i = 0; i < f->std.npre; i++) {
        frames_operand n = normalized(&f->std.pre[i]);
        assert_true(operand_eq(&d.std.pre[i], &n));
    }
    for (i = 0; i < f->std.npost; i++) {
        frames_operand n = normalized(&f->std.post[i]);
        assert_true(operand_eq(&d.std.post[i], &n));
    }
}

static void check_operand(const frames_operand *op) {
    frames_operand ops[4];
    frames_frame f = frame_around(ops, op);
    check_frame(&f);
}

/* ---------------------------------------------------------------- tests */

static void test_register_names(void **state) {
    /* the fast paths take names up to 123 bytes (operand_info_specific below 128) */
    static const size_t lens[] = {0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 100, 122, 123, 124, 125, 127, 128, 200, 300};
    size_t i;
    (void)state;
    for (i = 0; i < sizeof lens / sizeof lens[0]; i++) {
        frames_operand op = reg_op(lens[i], 8);
        check_operand(&op);
    }
}

static void test_addresses(void **state) {
    /* varints of 1 to 10 bytes (the word-at-a-time paths take up to 8): the smallest
       and the largest address of every width */
    int bits;
    (void)state;
    for (bits = 0; bits <= 64; bits++) {
        uint64_t top = bits == 0 ? 0 : bits == 64 ? UINT64_MAX : ((uint64_t)1 << bits) - 1;
        frames_operand op = mem_op(top, 8);
        check_operand(&op);
        if (bits > 0) {
            op = mem_op((uint64_t)1 << (bits - 1), 4);
            check_operand(&op);
        }
    }
}

static void test_bit_lengths(void **state) {
    static const int32_t bits[] = {0, 1, -1, 8, 32, 63, 64, -64, 65, 127, 128, 8191, 8192,
                                   -8193, 1 << 20, INT32_MAX, INT32_MIN, INT32_MIN + 1};
    size_t i;
    (void)state;
    for (i = 0; i < sizeof bits / sizeof bits[0]; i++) {
        frames_operand op = reg_op(5, 8);
        op.bit_length = bits[i];
        check_operand(&op);
        op = mem_op(0x7ffc00001000ull, 2);
        op.bit_length = bits[i];
        check_operand(&op);
    }
}

static void test_values(void **state) {
    /* values below 128 bytes are plain; 0-16 take the short copies */
    static const size_t lens[] = {0, 1, 2, 3, 4, 7, 8, 9, 15, 16, 17, 32, 100, 127, 128, 129, 300};
    size_t i;
    (void)state;
    for (i = 0; i < sizeof lens / sizeof lens[0]; i++) {
        frames_operand op = reg_op(5, lens[i]);
        check_operand(&op);
        op = mem_op(0x1000, lens[i]);
        check_operand(&op);
    }
}

static void test_usage_flags_and_taints(void **state) {
    unsigned m, t;
    (void)state;
    for (m = 0; m < 16; m++) {
        for (t = 0; t < 7; t++) {
            frames_operand op = reg_op(3, 8);
            op.read = (uint8_t)((m & 1) ? 1 + (m & 2) * 60 : 0); /* also nonzero values other than 1 */
            op.written = (uint8_t)((m >> 1) & 1);
            op.index = (uint8_t)((m >> 2) & 1 ? 255 : 0);
            op.base = (uint8_t)((m >> 3) & 1);
            switch (t) {
            case 0: op.taint.set = 0; break;
            case 1: op.taint.no_taint = 0; break;
            case 2: op.taint.no_taint = 7; break;
            case 3: op.taint.set = FRAMES_TAINT_ID; op.taint.id = 5; break;
            case 4: op.taint.set = FRAMES_TAINT_ID; op.taint.id = UINT64_MAX; break;
            case 5: op.taint.set = FRAMES_TAINT_MULTIPLE; op.taint.multiple = 1; break;
            default: op.taint.set = FRAMES_TAINT_MULTIPLE; op.taint.multiple = 0; break;
            }
            check_operand(&op);
        }
    }
}

static void test_frame_shapes(void **state) {
    /* list lengths around the 32 operands a frame may have to be written in one pass
       (and past the decoder arena's first block), post absent or empty, a mode, big
       addresses, long raw bytes */
    static const uint32_t shapes[][2] = {{0, 0}, {1, 0}, {0, 1}, {1, 1}, {3, 1}, {5, 5},
                                         {16, 16}, {17, 16}, {32, 0}, {0, 32}, {33, 0},
                                         {31, 2}, {40, 40}};
    static frames_operand ops[81];
    size_t k;
    uint32_t i;
    (void)state;
    for (k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
        uint32_t npre = shapes[k][0], npost = shapes[k][1];
        frames_frame f;
        for (i = 0; i < npre + npost; i++)
            ops[i] = i % 3 == 2 ? mem_op(i * 0x10001ull, i % 17) : reg_op(i % 9, (i * 5) % 130);
        f = std_of(ops, npre, npost);
        check_frame(&f);
        f.std.has_post = 1;   /* an empty post list is written when asked for */
        f.std.npost = 0;
        check_frame(&f);
        f.std.has_post = 0;
        f.std.has_mode = 1;
        f.std.mode = frames_str("arm:t32");
        f.std.address = UINT64_MAX - k;
        f.std.thread_id = (uint64_t)1 << 40;
        f.std.rawbytes = frames_bytes_of(data, 15 + k * 11);
        check_frame(&f);
    }
}

/* Decoded as canonical: then it re-encodes to exactly its input. */
static void check_canonical_round_trip(const uint8_t *in, size_t n) {
    static uint8_t out[8192];
    frames_frame d;
    size_t len = 0;
    check_head(in, n, 0);
    if (decode_both(in, n, &d) != FRAMES_OK) return;
    if (d.flags & (FRAMES_FF_NONCANONICAL | FRAMES_FF_INCOMPLETE)) return;
    assert_int_equal(frames_encode_frame(&d, FRAMES_ENC_LENIENT, out, sizeof out, &len, NULL), FRAMES_OK);
    assert_int_equal(len, n);
    assert_memory_equal(out, in, n);
}

/* Every byte of canonical frames changed in several ways, and the frames cut at every
   length: the decoders agree with each other, and what they call canonical re-encodes
   to the input. */
static void test_near_misses(void **state) {
    static const uint8_t deltas[] = {1, 2, 0x7f, 0x80, 0xfe, 0xff};
    static uint8_t in[4096];
    static pb_buf want;
    frames_operand ops[4], op;
    frames_frame f;
    size_t i, k, m;
    int shape;
    (void)state;
    for (shape = 0; shape < 3; shape++) {
        op = shape == 0 ? reg_op(5, 8) : shape == 1 ? mem_op(0x7ffc12345678ull, 8) : reg_op(0, 0);
        op.bit_length = shape == 2 ? 8 : 64;
        f = frame_around(ops, &op);
        pb_frame(&want, &f.std);
        for (i = 0; i < want.n; i++) {
            for (k = 0; k <= sizeof deltas; k++) {
                memcpy(in, want.b, want.n);
                in[i] = k == sizeof deltas ? 0 : (uint8_t)(in[i] + deltas[k]);
                check_canonical_round_trip(in, want.n);
            }
        }
        for (m = 0; m < want.n; m++) check_canonical_round_trip(want.b, m);
    }
}

/* A std_frame of plain operands around one odd operand (pre: plain, odd, plain; post:
   odd), with an unknown field between list elements (list_unknown) or after the lists
   (std_unknown). */
static void pb_odd_frame(pb_buf *out, int mem, int unknown_at, uint64_t flag, uint64_t no_taint,
                         size_t value_len, int list_unknown, int std_unknown) {
    static pb_buf std, list;
    frames_operand plain = reg_op(5, 8);
    frames_operand odd = mem ? mem_op(0x7ffc12345678ull, value_len) : reg_op(3, value_len);
    pb_reset(&std);
    pb_u64(&std, 1, 0x401000);
    pb_u64(&std, 2, 1);
    pb_bytes(&std, 3, data + 3, 3);
    pb_reset(&list);
    pb_operand(&list, &plain);
    if (list_unknown) pb_u64(&list, 2, 5);
    pb_operand_as(&list, &odd, unknown_at, flag, no_taint);
    pb_operand(&list, &plain);
    pb_msg(&std, 4, &list);
    pb_reset(&list);
    pb_operand_as(&list, &odd, unknown_at, flag, no_taint);
    pb_msg(&std, 5, &list);
    if (std_unknown) pb_u64(&std, 9, 5);
    pb_reset(out);
    pb_msg(out, 1, &std);
}

/* Unknown fields at every level of an operand list, bools of 2, values around 128 bytes:
   the fast paths decline (or take) them and the result is exactly the general decoder's,
   flags included, for register and memory operands. */
static void test_unknown_fields_and_odd_bools(void **state) {
    static const size_t value_lens[] = {0, 8, 111, 112, 113, 127, 128};
    static pb_buf in;
    frames_frame d;
    int mem, at, lu, su;
    uint64_t flag, nt;
    size_t v;
    (void)state;
    for (mem = 0; mem < 2; mem++)
        for (at = 0; at <= 7; at++)
            for (flag = 0; flag <= 2; flag++)
                for (nt = 0; nt <= 2; nt++)
                    for (v = 0; v < sizeof value_lens / sizeof value_lens[0]; v++)
                        for (lu = 0; lu < 2; lu++)
                            for (su = 0; su < 2; su++) {
                                uint32_t want = 0;
                                if (at || lu || su) want |= FRAMES_FF_UNKNOWN_FIELD;
                                if (flag > 1 || nt > 1) want |= FRAMES_FF_BAD_BOOL;
                                pb_odd_frame(&in, mem, at, flag, nt, value_lens[v], lu, su);
                                assert_int_equal(decode_both(in.b, in.n, &d), FRAMES_OK);
                                assert_int_equal(d.flags & (FRAMES_FF_UNKNOWN_FIELD | FRAMES_FF_BAD_BOOL), want);
                                assert_int_equal(d.std.npre, 3);
                                assert_int_equal(d.std.npost, 1);
                                assert_int_equal(d.std.pre[1].read, flag != 0);
                                assert_int_equal(d.std.post[0].taint.no_taint, nt != 0);
                                assert_int_equal(d.std.post[0].value.len, value_lens[v]);
                                assert_int_equal(d.std.post[0].spec, mem ? FRAMES_MEM : FRAMES_REG);
                            }
}

/* Operands that are not valid are refused after encoding, with nothing written. */
static void test_invalid_operands_refused(void **state) {
    static uint8_t out[1024];
    static frames_membuf a, b;
    frames_operand ops[4], bad;
    frames_frame good, f;
    frames_writer_options o;
    frames_writer wa, wb;
    frames_error err;
    frames_sink ka = sink_of(&a), kb = sink_of(&b);
    size_t len;
    int which, j;
    (void)state;
    ops[0] = reg_op(5, 8);
    ops[1] = mem_op(0x1000, 8);
    ops[2] = reg_op(0, 16);
    ops[3] = reg_op(3, 4);
    good = std_of(ops, 3, 1);
    frames_writer_options_default(&o);
    o.frames_per_toc = 1; /* a TOC entry before every frame but the first */
    assert_int_equal(frames_writer_init(&wa, &ka, &o, NULL, &err), FRAMES_OK);
    assert_int_equal(frames_writer_init(&wb, &kb, &o, NULL, &err), FRAMES_OK);
    for (which = 0; which < 5; which++) {
        bad = reg_op(5, 8);
        switch (which) {
        case 0: bad.spec = 0; break;
        case 1: bad.spec = FRAMES_MEM | FRAMES_REG; break;
        case 2: bad.spec = 4; break;
        case 3: bad.taint.set = FRAMES_TAINT_ID | FRAMES_TAINT_NONE; break;
        default: bad.taint.set = 8; break;
        }
        for (j = 0; j < 4; j++) { /* the bad operand in each position, pre and post */
            frames_operand list[4];
            memcpy(list, ops, sizeof list);
            list[j] = bad;
            f = std_of(list, 3, 1);
            assert_int_equal(frames_validate_frame(&f, &err), FRAMES_E_INVALID);
            len = 99;
            assert_int_equal(frames_encode_frame(&f, 0, out, sizeof out, &len, &err), FRAMES_E_INVALID);
            assert_int_equal(len, 0);
            assert_int_equal(err.code, FRAMES_E_INVALID);
            assert_int_equal(frames_encode_frame(&f, 0, out, 4, &len, &err), FRAMES_E_INVALID);
            assert_int_equal(frames_encode_frame(&f, FRAMES_ENC_LENIENT, out, sizeof out, &len, &err), FRAMES_OK);
            if (j == 3) { /* a post list that is not written is checked all the same */
                f.std.has_post = 0;
                assert_int_equal(frames_encode_frame(&f, 0, out, sizeof out, &len, &err), FRAMES_E_INVALID);
                assert_int_equal(frames_writer_add(&wa, &f), FRAMES_E_INVALID);
                f.std.has_post = 1;
            }
            /* writer a gets good, bad (refused), good; writer b only the good ones */
            assert_int_equal(frames_writer_add(&wa, &good), FRAMES_OK);
            assert_int_equal(frames_writer_add(&wa, &f), FRAMES_E_INVALID);
            assert_int_equal(frames_writer_error(&wa)->frame, frames_writer_count(&wa));
            assert_int_equal(frames_writer_add(&wb, &good), FRAMES_OK);
        }
    }
    assert_int_equal(frames_writer_count(&wa), 20);
    assert_int_equal(frames_writer_close(&wa), FRAMES_OK);
    assert_int_equal(frames_writer_close(&wb), FRAMES_OK);
    assert_int_equal(a.size, b.size);
    assert_memory_equal(a.data, b.data, a.size);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_register_names),
        cmocka_unit_test(test_addresses),
        cmocka_unit_test(test_bit_lengths),
        cmocka_unit_test(test_values),
        cmocka_unit_test(test_usage_flags_and_taints),
        cmocka_unit_test(test_frame_shapes),
        cmocka_unit_test(test_near_misses),
        cmocka_unit_test(test_unknown_fields_and_odd_bools),
        cmocka_unit_test(test_invalid_operands_refused),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
