/* test_wire: the protobuf wire codec on inputs built byte by byte (pbbuild.h): varint and
   zigzag extremes, every wire type of unknown fields, groups and their depth limit,
   lengths past the end, lenient decoding (several options, unknown options, packed
   lists, field order, last-wins, merging), and the encoder's exact bytes and sizes. */
#include "frames.h"

#include "pbbuild.h"
#include "testutil.h"

static frames_decoder dec;

static int setup(void **state) {
    (void)state;
    frames_decoder_init(&dec, NULL, 0, NULL);
    return 0;
}

static int teardown(void **state) {
    (void)state;
    frames_decoder_free(&dec);
    return 0;
}

static int decode(const pb_buf *p, frames_frame *f, frames_error *err) {
    return frames_decode_frame(&dec, p->b, p->n, f, err);
}

/* frame { std_frame { address, thread_id 1, rawbytes, operand_pre_list { pre } } } with
   extra bytes (or none) appended inside the std_frame. */
static void std_frame_of(pb_buf *out, uint64_t address, const char *raw, size_t nraw, const pb_buf *pre,
                         const pb_buf *extra) {
    pb_buf s;
    pb_reset(&s);
    pb_u64(&s, 1, address);
    pb_u64(&s, 2, 1);
    pb_bytes(&s, 3, raw, nraw);
    pb_msg(&s, 4, pre);
    if (extra) pb_raw(&s, extra->b, extra->n);
    pb_reset(out);
    pb_msg(out, 1, &s);
}

/* The same with a nop and an empty pre list. */
static void std_frame_with(pb_buf *out, uint64_t address, const pb_buf *extra) {
    pb_buf empty;
    pb_reset(&empty);
    std_frame_of(out, address, "\x90", 1, &empty, extra);
}

/* frames_frame_peek_kind names the kind frames_decode_frame finds, for every kind the
   encoder writes, and gives up (NONE) where only decoding can tell. */
static void test_peek_kind_agrees_with_the_decoder(void **state) {
    static const uint8_t odd[][3] = {{0x08, 0x01, 0}, {0x3a, 0x00, 0}, {0x8a, 0x01, 0x00}};
    frames_decoder d;
    frames_frame f, g;
    uint8_t buf[64];
    size_t len, i;
    int kind;
    (void)state;
    frames_decoder_init(&d, NULL, 0, NULL);
    for (kind = FRAMES_KIND_STD; kind <= FRAMES_KIND_KEY; kind++) {
        memset(&f, 0, sizeof f);
        f.kind = (frames_kind)kind;
        assert_int_equal(frames_encode_frame(&f, FRAMES_ENC_LENIENT, buf, sizeof buf, &len, NULL), 0);
        assert_int_equal(frames_decode_frame(&d, buf, len, &g, NULL), 0);
        assert_int_equal(frames_frame_peek_kind(buf, len), (int)g.kind);
        assert_int_equal(g.kind, kind);
    }
    /* a varint first field, an unknown option (7), a two-byte tag, nothing */
    for (i = 0; i < sizeof odd / sizeof odd[0]; i++)
        assert_int_equal(frames_frame_peek_kind(odd[i], 3), FRAMES_KIND_NONE);
    assert_int_equal(frames_frame_peek_kind(buf, 0), FRAMES_KIND_NONE);
    frames_decoder_free(&d);
}

static void test_varint_ten_bytes(void **state) {
    pb_buf p;
    frames_frame f;
    frames_error err;
    (void)state;
    std_frame_with(&p, UINT64_MAX, NULL);
    assert_int_equal(decode(&p, &f, &err), FRAMES_OK);
    assert_int_equal(f.kind, FRAMES_KIND_STD);
    assert_true(f.std.address == UINT64_MAX);
    assert_int_equal(f.flags & FRAMES_FF_NONCANONICAL, 0);
}

static void test_varint_non_minimal_is_flagged(void **state) {
    /* address 1 as 81 80 80 00 (4 bytes): accepted, value 1, flagged non-canonical */
    static const uint8_t in[] = {0x0a, 0x0c, 0x08, 0x81, 0x80, 0x80, 0x00, 0x10, 0x01,
                                 0x1a, 0x01, 0x90, 0x22, 0x00};
    frames_frame f;
    frames_error err;
    (void)state;
    assert_int_equal(frames_decode_frame(&dec, in, sizeof in, &f, &err), FRAMES_OK);
    assert_true(f.std.address == 1);
    assert_true(f.flags & FRAMES_FF_NONCANONICAL);
}

static void test_varint_overflow_is_an_error(void **state) {
    /* 11 continuation bytes: no valid varint */
    pb_buf p;
    frames_frame f;
    frames_error err;
    int i;
    (void)state;
    pb_reset(&p);
    pb_byte(&p, 0x1a);
    pb_byte(&p, 13);
    pb_byte(&p, 0x08);
    for (i = 0; i < 11; i++) pb_byte(&p, 0xff);
    pb_byte(&p, 0x01);
    assert_int_equal(decode(&p, &f, &err), FRAMES_E_DECODE);
    assert_non_null(strstr(err.message, "varint"));
}

static void test_varint_runs_past_end(void **state) {
    static const uint8_t in[] = {0x1a, 0x02, 0x08, 0x80};
    frames_frame f;
    frames_error err;
    (void)state;
    assert_int_equal(frames_decode_frame(&dec, in, sizeof in, &f, &err), FRAMES_E_DECODE);
    assert_true(err.offset == FRAMES_NO_POS || err.offset <= sizeof in);
}

static void test_zigzag_extremes(void **state) {
    static const int64_t args[] = {0, -1, 1, INT64_MIN, INT64_MAX, 0x7ffe1234};
    pb_buf s, list, p;
    frames_frame f;
    frames_error err;
    uint8_t out[128];
    size_t len, i;
    (void)state;
    pb_reset(&s);
    pb_reset(&list);
    pb_u64(&s, 1, 0x400010);
    pb_u64(&s, 2, 7);
    pb_u64(&s, 3, 231);
    for (i = 0; i < 6; i++) pb_sint(&list, 1, args[i]);
    pb_msg(&s, 4, &list);
    pb_reset(&p);
    pb_msg(&p, 2, &s);
    assert_int_equal(decode(&p, &f, &err), FRAMES_OK);
    assert_int_equal(f.kind, FRAMES_KIND_SYSCALL);
    assert_int_equal(f.syscall.nargs, 6);
    for (i = 0; i < 6; i++) assert_true(f.syscall.args[i] == args[i]);
    /* INT64_MIN is the 10-byte ff..ff 01 (spec §8.5) and the re-encoding is identical */
    assert_non_null(memmem(p.b, p.n, "\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 11));
    assert_int_equal(frames_encode_frame(&f, 0, out, sizeof out, &len, &err), FRAMES_OK);
    assert_int_equal(len, p.n);
    assert_memory_equal(out, p.b, p.n);
}

static void test_sint32_bit_length_extremes(void **state) {
    static const int32_t lens[] = {0, -1, 64, INT32_MIN, INT32_MAX};
    size_t i;
    (void)state;
    for (i = 0; i < 5; i++) {
        pb_buf pre, p;
        frames_frame f;
        frames_error err;
        pb_reset(&pre);
        pb_reg_operand(&pre, "RAX", lens[i], 1, 0, "\x01\x02", 2);
        std_frame_of(&p, 0x1000, "\x90", 1, &pre, NULL);
        assert_int_equal(decode(&p, &f, &err), FRAMES_OK);
        assert_int_equal(f.std.npre, 1);
        assert_int_equal(f.std.pre[0].bit_length, lens[i]);
        assert_int_equal(f.std.pre[0].value.len, 2);
        assert_memory_equal(f.std.pre[0].name.ptr, "RAX", 3);
    }
}

static void test_sint32_wider_than_32_bits(void **state) {
    /* bit_length carried as a 64-bit zigzag value: truncated to 32 bits and flagged */
    pb_buf pre, p;
    frames_frame f;
    frames_error err;
    (void)state;
    pb_reset(&pre);
    pb_reg_operand_wire(&pre, "R", ((uint64_t)1 << 40) | 128, 1, 0, "", 0); /* low 32 bits: zigzag 128 = 64 */
    std_frame_of(&p, 1, "", 0, &pre, NULL);
    assert_int_equal(decode(&p, &f, &err), FRAMES_OK);
    assert_int_equal(f.std.pre[0].bit_length, 64);
    assert_true(f.flags & FRAMES_FF_WIDE_VALUE);
}

static void test_unknown_fields_of_every_wire_type(void **state) {
    pb_buf extra, p;
    frames_frame f;
    frames_error err;
    (void)state;
    pb_reset(&extra);
    pb_u64(&extra, 15, 12345);                 /* VARINT */
    pb_fixed64(&extra, 16, 0x1122334455667788); /* I64 */
    pb_bytes(&extra, 17, "xyz", 3);            /* LEN */
    pb_fixed32(&extra, 18, 0xdeadbeef);        /* I32 */
    pb_tag(&extra, 19, 3);                     /* SGROUP { varint } EGROUP */
    pb_u64(&extra, 1, 7);
    pb_tag(&extra, 19, 4);
    std_frame_with(&p, 0x401000, &extra);
    assert_int_equal(decode(&p, &f, &err), FRAMES_OK);
    assert_true(f.std.address == 0x401000); /* the group's inner field 1 is not the address */
    assert_true(f.flags & FRAMES_FF_UNKNOWN_FIELD);
    assert_true(f.flags & FRAMES_FF_GROUP);
}

static void test_invalid_wire_types(void **state) {
    int wt;
    (void)state;
    for (wt = 6; wt <= 7; wt++) {
        pb_buf extra, p;
        frames_frame f;
        frames_error err;
        pb_reset(&extra);
        pb_tag(&extra, 20, (uint32_t)wt);
        pb_byte(&extra, 0);
        std_frame_with(&p, 1, &extra);
        assert_int_equal(decode(&p, &f, &err), FRAMES_E_DECODE);
    }
}

static void test_unmatched_end_group(void **state) {
    pb_buf extra, p;
    frames_frame f;
    frames_error err;
    (void)state;
    pb_reset(&extra);
    pb_tag(&extra, 19, 3);
    pb_tag(&extra, 20, 4); /* ends a group that was not opened */
    std_frame_with(&p, 1, &extra);
    assert_int_equal(decode(&p, &f, &err), FRAMES_E_DECODE);
}

static void test_group_depth_limit(void **state) {
    pb_buf extra, p;
    frames_frame f;
    frames_error err;
    int i;
    (void)state;
    /* 40 nested groups pass the default limit (64) */
    pb_reset(&extra);
    for (i = 0; i < 40; i++) pb_tag(&extra, 20, 3);
    for (i = 0; i < 40; i++) pb_tag(&extra, 20, 4);
    std_frame_with(&p, 1, &extra);
    assert_int_equal(decode(&p, &f, &err), FRAMES_OK);
    /* a lower limit set by the caller stops them */
    dec.limits.max_depth = 16;
    assert_int_equal(decode(&p, &f, &err), FRAMES_E_LIMIT);
    frames_limits_default(&dec.limits);
    /* 1000 nested groups never finish: the default limit stops them too */
    pb_reset(&extra);
    for (i = 0; i < 1000; i++) pb_tag(&extra, 20, 3);
    std_frame_with(&p, 1, &extra);
    assert_int_equal(decode(&p, &f, &err), FRAMES_E_LIMIT);
    /* strict mode rejects any group */
    pb_reset(&extra);
    pb_tag(&extra, 20, 3);
    pb_tag(&extra, 20, 4);
    std_frame_with(&p, 1, &extra);
    dec.strict = 1;
    assert_int_equal(decode(&p, &f, &err), FRAMES_E_DECODE);
    dec.strict = 0;
}

static void test_length_past_end(void **state) {
    /* rawbytes claims 100 bytes, 2 remain */
    static const uint8_t in[] = {0x0a, 0x08, 0x08, 0x01, 0x10, 0x01, 0x1a, 0x64, 0x90, 0x90};
    /* the frame's own LEN claims more than the message holds */
    static const uint8_t in2[] = {0x0a, 0x7f, 0x08, 0x01};
    frames_frame f;
    frames_error err;
    (void)state;
    assert_int_equal(frames_decode_frame(&dec, in, sizeof in, &f, &err), FRAMES_E_DECODE);
    assert_non_null(strstr(err.message, "length"));
    assert_int_equal(frames_decode_frame(&dec, in2, sizeof in2, &f, &err), FRAMES_E_DECODE);
}

static void test_unknown_frame_options(void **state) {
    uint32_t opt;
    (void)state;
    for (opt = 7; opt <= 9; opt++) { /* moflow: block, call, ret */
        pb_buf inner, p;
        frames_frame f;
        frames_error err;
        pb_reset(&inner);
        pb_u64(&inner, 1, 0x8048000);
        pb_reset(&p);
        pb_msg(&p, opt, &inner);
        assert_int_equal(decode(&p, &f, &err), FRAMES_OK);
        assert_int_equal(f.kind, FRAMES_KIND_UNKNOWN);
        assert_int_equal(f.unknown.field, opt);
        assert_int_equal(f.unknown.wire_type, 2);
        assert_int_equal(f.unknown.payload.len, inner.n);
        assert_memory_equal(f.unknown.payload.ptr, inner.b, inner.n);
        assert_true(f.flags & FRAMES_FF_UNKNOWN_OPTION);
    }
}

static void test_several_options_in_one_frame(void **state) {
    pb_buf exc, mod, p;
    frames_frame f;
    frames_error err;
    uint8_t out[64];
    size_t len;
    (void)state;
    pb_reset(&exc);
    pb_u64(&exc, 1, 14);
    pb_reset(&mod);
    pb_str(&mod, 1, "libc.so");
    pb_u64(&mod, 2, 0x1000);
    pb_u64(&mod, 3, 0x2000);
    pb_reset(&p);
    pb_msg(&p, 5, &mod); /* modload first on the wire, exception second */
    pb_msg(&p, 3, &exc);
    assert_int_equal(decode(&p, &f, &err), FRAMES_OK);
    assert_int_equal(f.kind, FRAMES_KIND_EXCEPTION); /* the lowest-numbered option */
    assert_true(f.present == ((1u << FRAMES_KIND_EXCEPTION) | (1u << FRAMES_KIND_MODLOAD)));
    assert_true(f.exception.number == 14);
    assert_true(f.modload.high_address == 0x2000);
    assert_true(f.flags & FRAMES_FF_MULTI_OPTION);
    /* the writer refuses it unless asked to be lenient, then writes both in field order */
    assert_int_equal(frames_validate_frame(&f, &err), FRAMES_E_INVALID);
    assert_int_equal(frames_encode_frame(&f, 0, out, sizeof out, &len, &err), FRAMES_E_INVALID);
    assert_int_equal(frames_encode_frame(&f, FRAMES_ENC_LENIENT, out, sizeof out, &len, &err), FRAMES_OK);
    assert_int_equal(len, p.n);
    assert_int_equal(out[0], 0x1a);
}

static void test_empty_frame(void **state) {
    frames_frame f;
    frames_error err;
    (void)state;
    assert_int_equal(frames_decode_frame(&dec, "", 0, &f, &err), FRAMES_OK);
    assert_int_equal(f.kind, FRAMES_KIND_NONE);
    assert_true(f.flags & FRAMES_FF_EMPTY_VARIANT);
    dec.strict = 1;
    assert_int_equal(frames_decode_frame(&dec, "", 0, &f, &err), FRAMES_E_DECODE);
    dec.strict = 0;
    assert_int_equal(frames_validate_frame(&f, &err), FRAMES_E_INVALID);
}

static void test_packed_and_mixed_arguments(void **state) {
    pb_buf s, list, packed, p;
    frames_frame f;
    frames_error err;
    (void)state;
    pb_reset(&packed);
    pb_varint(&packed, pb_zz(-2));
    pb_varint(&packed, pb_zz(300));
    pb_reset(&list);
    pb_sint(&list, 1, 5);        /* unpacked */
    pb_msg(&list, 1, &packed);   /* packed run of two */
    pb_sint(&list, 1, -7);       /* unpacked again */
    pb_reset(&s);
    pb_u64(&s, 1, 1);
    pb_u64(&s, 2, 1);
    pb_u64(&s, 3, 1);
    pb_msg(&s, 4, &list);
    pb_reset(&p);
    pb_msg(&p, 2, &s);
    assert_int_equal(decode(&p, &f, &err), FRAMES_OK);
    assert_int_equal(f.syscall.nargs, 4);
    assert_true(f.syscall.args[0] == 5 && f.syscall.args[1] == -2 && f.syscall.args[2] == 300 &&
                f.syscall.args[3] == -7);
    assert_true(f.flags & FRAMES_FF_PACKED);
}

static void test_field_order_and_last_wins(void **state) {
    pb_buf s, empty, p;
    frames_frame f;
    frames_error err;
    (void)state;
    pb_reset(&s);
    pb_reset(&empty);
    pb_msg(&s, 4, &empty);   /* pre list first */
    pb_u64(&s, 2, 3);        /* thread id */
    pb_u64(&s, 1, 0x10);     /* address, twice: the last wins */
    pb_bytes(&s, 3, "\xc3", 1);
    pb_u64(&s, 1, 0x20);
    pb_reset(&p);
    pb_msg(&p, 1, &s);
    assert_int_equal(decode(&p, &f, &err), FRAMES_OK);
    assert_true(f.std.address == 0x20);
    assert_true(f.std.thread_id == 3);
    assert_true(f.flags & FRAMES_FF_NONCANONICAL);
    assert_true(f.flags & FRAMES_FF_DUPLICATE);
}

static void test_repeated_submessage_is_merged(void **state) {
    /* operand_pre_list twice: libprotobuf merges, so the elements append */
    pb_buf a, b, s, p;
    frames_frame f;
    frames_error err;
    (void)state;
    pb_reset(&a);
    pb_reg_operand(&a, "RAX", 64, 1, 0, "\x01", 1);
    pb_reset(&b);
    pb_reg_operand(&b, "RBX", 64, 1, 0, "\x02", 1);
    pb_reset(&s);
    pb_u64(&s, 1, 1);
    pb_u64(&s, 2, 1);
    pb_bytes(&s, 3, "", 0);
    pb_msg(&s, 4, &a);
    pb_msg(&s, 4, &b);
    pb_reset(&p);
    pb_msg(&p, 1, &s);
    assert_int_equal(decode(&p, &f, &err), FRAMES_OK);
    assert_int_equal(f.std.npre, 2);
    assert_memory_equal(f.std.pre[0].name.ptr, "RAX", 3);
    assert_memory_equal(f.std.pre[1].name.ptr, "RBX", 3);
}

static void test_bool_other_than_0_1(void **state) {
    pb_buf pre, p;
    frames_frame f;
    frames_error err;
    (void)state;
    pb_reset(&pre);
    pb_reg_operand(&pre, "R", 8, 2, 0, "\x00", 1); /* read: 2 */
    std_frame_of(&p, 1, "", 0, &pre, NULL);
    assert_int_equal(decode(&p, &f, &err), FRAMES_OK);
    assert_int_equal(f.std.pre[0].read, 1);
    assert_true(f.flags & FRAMES_FF_BAD_BOOL);
}

static void test_missing_required_fields(void **state) {
    /* exception_frame without exception_number; std_frame with only an address */
    static const uint8_t exc[] = {0x1a, 0x02, 0x10, 0x05};
    static const uint8_t std[] = {0x0a, 0x02, 0x08, 0x01};
    frames_frame f;
    frames_error err;
    (void)state;
    assert_int_equal(frames_decode_frame(&dec, exc, sizeof exc, &f, &err), FRAMES_OK);
    assert_true(f.flags & FRAMES_FF_INCOMPLETE);
    assert_true(f.exception.number == 0 && f.exception.has_thread_id && f.exception.thread_id == 5);
    assert_int_equal(frames_decode_frame(&dec, std, sizeof std, &f, &err), FRAMES_OK);
    assert_true(f.flags & FRAMES_FF_INCOMPLETE);
    assert_int_equal(f.std.npre, 0);
}

/* The examples of the spec (§9), byte for byte. */
static void test_encode_spec_examples(void **state) {
    static const uint8_t std48[] = {
        0x0a, 0x2e, 0x08, 0x80, 0x80, 0x92, 0x40, 0x10, 0x01, 0x1a, 0x02, 0x89, 0xd8, 0x22, 0x21,
        0x0a, 0x1f, 0x0a, 0x07, 0x12, 0x05, 0x0a, 0x03, 0x45, 0x42, 0x58, 0x10, 0x40, 0x1a, 0x08,
        0x08, 0x01, 0x10, 0x00, 0x18, 0x00, 0x20, 0x00, 0x22, 0x02, 0x08, 0x01, 0x2a, 0x04, 0xef,
        0xbe, 0xad, 0xde};
    static const uint8_t sys[] = {0x12, 0x16, 0x08, 0x90, 0x80, 0x80, 0x02, 0x10, 0x07, 0x18,
                                  0xe7, 0x01, 0x22, 0x0a, 0x08, 0x00, 0x08, 0x01, 0x08, 0xe8,
                                  0xc8, 0xf0, 0xff, 0x0f};
    static const uint8_t smallest[] = {0x1a, 0x02, 0x08, 0x00};
    static const int64_t args[] = {0, -1, 0x7ffe1234};
    frames_operand op;
    frames_frame f;
    frames_error err;
    uint8_t out[128];
    size_t len;
    (void)state;
    op = tu_reg_op("EBX", "\xef\xbe\xad\xde", 4, 1, 0);
    f = tu_std_frame(0x8048000, 1, "\x89\xd8", 2);
    f.std.pre = &op;
    f.std.npre = 1;
    assert_int_equal(frames_frame_size(&f), sizeof std48);
    assert_int_equal(frames_encode_frame(&f, 0, out, sizeof out, &len, &err), FRAMES_OK);
    assert_int_equal(len, sizeof std48);
    assert_memory_equal(out, std48, sizeof std48);

    f = tu_syscall_frame(0x400010, 7, 231, args, 3);
    assert_int_equal(frames_encode_frame(&f, 0, out, sizeof out, &len, &err), FRAMES_OK);
    assert_int_equal(len, sizeof sys);
    assert_memory_equal(out, sys, sizeof sys);

    memset(&f, 0, sizeof f);
    f.kind = FRAMES_KIND_EXCEPTION;
    assert_int_equal(frames_encode_frame(&f, 0, out, sizeof out, &len, &err), FRAMES_OK);
    assert_int_equal(len, sizeof smallest);
    assert_memory_equal(out, smallest, sizeof smallest);
}

static void test_encode_into_small_buffer(void **state) {
    frames_frame f;
    frames_error err;
    uint8_t out[8];
    size_t len = 0;
    (void)state;
    f = tu_modload_frame("/lib/x86_64-linux-gnu/libc.so.6", 0x7f0000000000, 0x7f0000200000);
    assert_int_equal(frames_encode_frame(&f, 0, out, sizeof out, &len, &err), FRAMES_E_SPACE);
    assert_int_equal(len, frames_frame_size(&f));
}

static void test_absent_and_empty_post_list_differ(void **state) {
    frames_frame f;
    frames_error err;
    uint8_t out[64];
    size_t len;
    (void)state;
    memset(&f, 0, sizeof f);
    f.kind = FRAMES_KIND_STD;
    f.std.rawbytes = frames_bytes_of("", 0);
    assert_int_equal(frames_encode_frame(&f, 0, out, sizeof out, &len, &err), FRAMES_OK);
    assert_memory_equal(out, "\x0a\x08\x08\x00\x10\x00\x1a\x00\x22\x00", 10);
    assert_int_equal(len, 10);
    f.std.has_post = 1;
    assert_int_equal(frames_encode_frame(&f, 0, out, sizeof out, &len, &err), FRAMES_OK);
    assert_int_equal(len, 12);
    assert_memory_equal(out + 10, "\x2a\x00", 2);
}

static void test_caller_scratch_without_allocation(void **state) {
    /* a decoder over a caller buffer never allocates; a frame that needs more fails */
    uint64_t scratch[64];
    frames_decoder small;
    pb_buf pre, p;
    frames_frame f;
    frames_error err;
    int i;
    (void)state;
    pb_reset(&pre);
    for (i = 0; i < 3; i++) pb_reg_operand(&pre, "RAX", 64, 1, 0, "12345678", 8);
    std_frame_of(&p, 1, "", 0, &pre, NULL);
    frames_decoder_init(&small, scratch, sizeof scratch, NULL);
    assert_int_equal(frames_decode_frame(&small, p.b, p.n, &f, &err), FRAMES_OK);
    assert_int_equal(f.std.npre, 3);
    pb_reset(&pre);
    for (i = 0; i < 40; i++) pb_reg_operand(&pre, "RAX", 64, 1, 0, "12345678", 8);
    std_frame_of(&p, 1, "", 0, &pre, NULL);
    assert_int_equal(frames_decode_frame(&small, p.b, p.n, &f, &err), FRAMES_E_NOMEM);
    frames_decoder_free(&small);
}

static void test_meta_round_trip(void **state) {
    static const frames_bytes args[] = {{(const uint8_t *)"a", 1}, {(const uint8_t *)"b\0c", 3}};
    frames_meta m, back;
    frames_error err;
    uint8_t out[512], again[512];
    size_t len, len2;
    (void)state;
    memset(&m, 0, sizeof m);
    m.tracer_name = frames_str("t");
    m.tracer_args = args;
    m.ntracer_args = 2;
    m.tracer_version = frames_str("1");
    m.target_path = frames_str("/bin/a");
    m.target_md5sum = frames_bytes_of("\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f", 16);
    m.fstats_size = -5;
    m.fstats_atime = -0.0;
    m.time = 1700000000.0;
    assert_int_equal(frames_encode_meta(&m, out, sizeof out, &len, &err), FRAMES_OK);
    assert_int_equal(len, frames_meta_size(&m));
    assert_int_equal(frames_decode_meta(&dec, out, len, &back, &err), FRAMES_OK);
    assert_int_equal(back.ntracer_args, 2);
    assert_int_equal(back.tracer_args[1].len, 3);
    assert_int_equal(back.fstats_size, -5);
    assert_true(back.time == 1700000000.0);
    assert_int_equal(frames_encode_meta(&back, again, sizeof again, &len2, &err), FRAMES_OK);
    assert_int_equal(len2, len);
    assert_memory_equal(again, out, len);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_peek_kind_agrees_with_the_decoder),
        cmocka_unit_test(test_varint_ten_bytes),
        cmocka_unit_test(test_varint_non_minimal_is_flagged),
        cmocka_unit_test(test_varint_overflow_is_an_error),
        cmocka_unit_test(test_varint_runs_past_end),
        cmocka_unit_test(test_zigzag_extremes),
        cmocka_unit_test(test_sint32_bit_length_extremes),
        cmocka_unit_test(test_sint32_wider_than_32_bits),
        cmocka_unit_test(test_unknown_fields_of_every_wire_type),
        cmocka_unit_test(test_invalid_wire_types),
        cmocka_unit_test(test_unmatched_end_group),
        cmocka_unit_test(test_group_depth_limit),
        cmocka_unit_test(test_length_past_end),
        cmocka_unit_test(test_unknown_frame_options),
        cmocka_unit_test(test_several_options_in_one_frame),
        cmocka_unit_test(test_empty_frame),
        cmocka_unit_test(test_packed_and_mixed_arguments),
        cmocka_unit_test(test_field_order_and_last_wins),
        cmocka_unit_test(test_repeated_submessage_is_merged),
        cmocka_unit_test(test_bool_other_than_0_1),
        cmocka_unit_test(test_missing_required_fields),
        cmocka_unit_test(test_encode_spec_examples),
        cmocka_unit_test(test_encode_into_small_buffer),
        cmocka_unit_test(test_absent_and_empty_post_list_differ),
        cmocka_unit_test(test_caller_scratch_without_allocation),
        cmocka_unit_test(test_meta_round_trip),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
