/* test_nostdio - frames.h built the way a freestanding tracer builds it (FRAMES_NO_STDIO:
   no snprintf, no strerror, no errno). Its own message formatter is checked against the C
   library's snprintf on every directive the library's messages use, and a reader and a
   writer built that way still work on memory and report errors with their position.
   (build.sh headers checks which C library functions such an object needs.) */
#define FRAMES_NO_STDIO
#define FRAMES_STATIC
#define FRAMES_IMPLEMENTATION
#include "frames.h"

#include <stdio.h>   /* the oracle only: the library above was built without it */

#include "testutil.h"

#define SAME(...)                                                                          \
    do {                                                                                   \
        char want[256], got[256];                                                          \
        int wn = snprintf(want, sizeof want, __VA_ARGS__);                                 \
        size_t gn = frames__fmt(got, sizeof got, __VA_ARGS__);                             \
        assert_string_equal(got, want);                                                    \
        assert_int_equal(gn, (size_t)wn);                                                  \
    } while (0)

static void test_formatter_matches_snprintf(void **state) {
    (void)state;
    SAME("plain text, no directive");
    SAME("%s and %s", "one", "two");
    SAME("%d %d %d %i", 0, -1, 2147483647, -2147483647 - 1);
    SAME("%u %x %X %o", 4000000000u, 0xdeadbeefu, 0xabcdefu, 0755u);
    SAME("%llu %llx %lld", 18446744073709551615ull, 0x0123456789abcdefull, -9223372036854775807ll - 1);
    SAME("%lu %lx %ld", 4294967295ul, 0xfffful, -5l);
    SAME("%zu bytes", (size_t)123456789);
    SAME("%016llx|%08x|%02x|%04x|%3u|%-5d|%5d|", 0x1234ull, 0xabu, 7u, 0u, 5u, 42, -42);
    SAME("%.*s|%.80s|%.3s", 3, "abcdef", "short", "ab");
    SAME("%c%c%%", 'o', 'k');
    SAME("'%.*s' at %llu", 4, "key=value", 99ull);
    SAME("%-10s|%10s|", "left", "right");
    SAME("%05d|%-6d|%-8x|%08llx|%.5u|%8.3d|", -42, -42, 255u, 0ull, 42u, 7);
    SAME("%s", "");
}

static void test_formatter_truncates_like_snprintf(void **state) {
    char got[8], want[8];
    volatile size_t vcap = sizeof got;   /* the compiler must not see the cut coming */
    size_t n, cap = vcap;
    int wn;
    const char *word = "abcdef";
    (void)state;
    n = frames__fmt(got, cap, "%s-%llu", word, 123456ull);
    wn = snprintf(want, cap, "%s-%llu", word, 123456ull);
    assert_string_equal(got, want);
    assert_int_equal(n, (size_t)wn);
    assert_int_equal(frames__fmt(NULL, 0, "%d", 12345), 5);
}

static void test_fail_carries_the_position(void **state) {
    frames_error e;
    (void)state;
    assert_int_equal(frames__fail(&e, FRAMES_E_DECODE, 0x40, 7, "bad %s", "varint"), FRAMES_E_DECODE);
    assert_string_equal(e.message, "bad varint (frame 7, offset 0x40)");
    frames__fail(&e, FRAMES_E_IO, 0x10, FRAMES_NO_POS, "short read");
    assert_string_equal(e.message, "short read (at offset 0x10)");
    assert_string_equal(frames_strerror(FQ_E_STALE), "index does not match the trace");
    assert_string_equal(frames_strerror(12345), "unknown error");
}

/* A no-stdio writer into memory and a no-stdio reader of it: the frames come back, and a
   damaged copy is reported with its offset. */
static void test_write_and_read_without_stdio(void **state) {
    frames_membuf mem;
    frames_sink sink = frames_sink_memory(&mem);
    frames_writer *w;
    frames_reader *r;
    frames_error err;
    frames_frame f;
    uint8_t code[2] = {0x90, 0xc3};
    size_t size;
    uint64_t i, n = 0;
    int rc;
    (void)state;
    frames_membuf_init(&mem, NULL);
    assert_int_equal(frames_writer_open(&w, &sink, NULL, NULL, &err), 0);
    for (i = 0; i < 5; i++) {
        f = tu_std_frame(0x1000 + i, 1, code, 2);
        assert_int_equal(frames_writer_add(w, &f), 0);
    }
    assert_int_equal(frames_writer_close(w), FRAMES_OK);   /* finished in memory */
    size = mem.size;
    assert_int_equal(frames_reader_open_memory(&r, mem.data, size, NULL, &err), 0);
    while ((rc = frames_reader_next(r, &f)) > 0) assert_int_equal(f.std.address, 0x1000 + n++);
    assert_int_equal(rc, 0);
    assert_int_equal(n, 5);
    frames_reader_close(r);
    mem.data[0] ^= 0xff;   /* the magic */
    rc = frames_reader_open_memory(&r, mem.data, size, NULL, &err);
    assert_true(rc < 0);
    assert_int_equal(err.code, rc);
    assert_non_null(strstr(err.message, "offset 0x"));
    frames_membuf_free(&mem);
}

/* The memory sink honours its bound and patches only bytes it holds. */
static void test_memory_sink_bounds(void **state) {
    frames_membuf m;
    frames_sink s = frames_sink_memory(&m);
    uint8_t bytes[64] = {1, 2, 3};
    (void)state;
    frames_membuf_init(&m, NULL);
    m.max = 100;
    assert_int_equal(s.write(s.ctx, bytes, 64), FRAMES_OK);
    assert_int_equal(s.write(s.ctx, bytes, 64), FRAMES_E_LIMIT);   /* would pass 100 */
    assert_int_equal(m.size, 64);
    assert_int_equal(s.patch(s.ctx, 60, bytes, 4), FRAMES_OK);
    assert_int_equal(s.patch(s.ctx, 61, bytes, 4), FRAMES_E_RANGE);
    assert_memory_equal(m.data + 60, bytes, 4);
    frames_membuf_free(&m);
    assert_null(m.data);
    assert_int_equal(m.max, 100);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_formatter_matches_snprintf),
        cmocka_unit_test(test_formatter_truncates_like_snprintf),
        cmocka_unit_test(test_fail_carries_the_position),
        cmocka_unit_test(test_write_and_read_without_stdio),
        cmocka_unit_test(test_memory_sink_bounds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
