/* test_robustness - regression tests for defects found by fuzzing frames.h (each test
   names the invariant of tests/fuzz/ that caught it) and hand-made hostile inputs. */
#include "frames.h"
#pragma GCC diagnostic ignored "-Wunused-function" /* testutil.h helpers this suite skips */
#include "testutil.h"

/* Encode f leniently into a malloc'd buffer. */
static uint8_t *encode(const frames_frame *f, size_t *len) {
    size_t size = frames_frame_size(f);
    uint8_t *buf = malloc(size + 1);
    assert_non_null(buf);
    assert_int_equal(frames_encode_frame(f, FRAMES_ENC_LENIENT, buf, size, len, NULL), FRAMES_OK);
    assert_int_equal(*len, size);
    return buf;
}

/* A frame the decoder calls canonical must re-encode to the same bytes (fuzz_decode).
   Two unknown options: only the first is kept, so the second must mark the frame
   non-canonical. */
static void test_second_unknown_option_is_noncanonical(void **state) {
    static const uint8_t in[] = {0x08, 0x0a, 0x08, 0x00}; /* field 1 as varint, twice */
    frames_decoder d;
    frames_frame f;
    uint8_t *out;
    size_t len;
    (void)state;
    frames_decoder_init(&d, NULL, 0, NULL);
    assert_int_equal(frames_decode_frame(&d, in, sizeof in, &f, NULL), FRAMES_OK);
    assert_int_equal(f.kind, FRAMES_KIND_UNKNOWN);
    assert_int_equal(f.unknown.field, 1);
    assert_int_equal(f.unknown.scalar, 10);
    out = encode(&f, &len);
    assert_int_equal(len, 2); /* the second option is gone ... */
    assert_true(f.flags & FRAMES_FF_NONCANONICAL); /* ... and the decoder says so */
    free(out);
    frames_decoder_free(&d);
}

/* An unknown option with a known option's field number (wrong wire type) before that
   option: the encoder writes the known option first, so this is not canonical. */
static void test_unknown_option_before_known_same_number(void **state) {
    static const uint8_t in[] = {0x08, 0x08,                    /* 1: varint 8 */
                                 0x0a, 0x08, 0x08, 0x00, 0x10, 0x00, /* std_frame */
                                 0x1a, 0x00, 0x22, 0x00};
    static const uint8_t after[] = {0x0a, 0x08, 0x08, 0x00, 0x10, 0x00, 0x1a, 0x00, 0x22, 0x00,
                                    0x08, 0x08};
    frames_decoder d;
    frames_frame f;
    uint8_t *out;
    size_t len;
    (void)state;
    frames_decoder_init(&d, NULL, 0, NULL);
    assert_int_equal(frames_decode_frame(&d, in, sizeof in, &f, NULL), FRAMES_OK);
    assert_int_equal(f.kind, FRAMES_KIND_STD);
    assert_int_equal(f.unknown.field, 1);
    out = encode(&f, &len);
    assert_int_equal(len, sizeof after);
    assert_memory_equal(out, after, len);
    assert_true(f.flags & FRAMES_FF_NONCANONICAL);
    free(out);
    /* the other order is what the encoder writes: canonical */
    assert_int_equal(frames_decode_frame(&d, after, sizeof after, &f, NULL), FRAMES_OK);
    assert_false(f.flags & FRAMES_FF_NONCANONICAL);
    frames_decoder_free(&d);
}

/* An unknown group option is re-emitted verbatim, so a non-minimal varint inside it does
   not make the frame non-canonical (the encoder's output must decode as canonical). */
static void test_unknown_group_option_is_copied_verbatim(void **state) {
    /* option 6 as a group holding field 12 = varint 0x30 written in two bytes */
    static const uint8_t in[] = {0x33, 0x60, 0xb0, 0x00, 0x34};
    frames_decoder d;
    frames_frame f;
    uint8_t *out;
    size_t len;
    (void)state;
    frames_decoder_init(&d, NULL, 0, NULL);
    assert_int_equal(frames_decode_frame(&d, in, sizeof in, &f, NULL), FRAMES_OK);
    assert_int_equal(f.kind, FRAMES_KIND_UNKNOWN);
    assert_int_equal(f.unknown.wire_type, 3);
    assert_true(f.flags & FRAMES_FF_GROUP);
    assert_false(f.flags & FRAMES_FF_NONCANONICAL);
    out = encode(&f, &len);
    assert_int_equal(len, sizeof in);
    assert_memory_equal(out, in, len);
    free(out);
    frames_decoder_free(&d);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_second_unknown_option_is_noncanonical),
        cmocka_unit_test(test_unknown_option_before_known_same_number),
        cmocka_unit_test(test_unknown_group_option_is_copied_verbatim),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
