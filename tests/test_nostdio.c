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

typedef struct membuf {
    uint8_t *p;
    size_t n;
} membuf;

static int grow_sink(void *ctx, const void *data, size_t len) {
    membuf *m = (membuf *)ctx;
    uint8_t *nb = (uint8_t *)realloc(m->p, m->n + len);
    if (!nb) return FRAMES_E_IO;
    memcpy(nb + m->n, data, len);
    m->p = nb;
    m->n += len;
    return 0;
}

/* A no-stdio writer into memory and a no-stdio reader of it: the frames come back, and a
   damaged copy is reported with its offset. */
static void test_write_and_read_without_stdio(void **state) {
    membuf mem = {NULL, 0};
    frames_sink sink;
    frames_writer *w;
    frames_reader *r;
    frames_error err;
    frames_frame f;
    uint8_t code[2] = {0x90, 0xc3};
    size_t size;
    uint64_t i, n = 0;
    int rc;
    (void)state;
    memset(&sink, 0, sizeof sink);
    sink.write = grow_sink;
    sink.ctx = &mem;
    assert_int_equal(frames_writer_open(&w, &sink, NULL, NULL, &err), 0);
    for (i = 0; i < 5; i++) {
        memset(&f, 0, sizeof f);
        f.kind = FRAMES_KIND_STD;
        f.std.address = 0x1000 + i;
        f.std.thread_id = 1;
        f.std.rawbytes = frames_bytes_of(code, 2);
        assert_int_equal(frames_writer_add(w, &f), 0);
    }
    assert_true(frames_writer_close(w) >= 0);   /* no seek: left unfinished, readable */
    size = mem.n;
    assert_int_equal(frames_reader_open_memory(&r, mem.p, size, NULL, &err), 0);
    while ((rc = frames_reader_next(r, &f)) > 0) assert_int_equal(f.std.address, 0x1000 + n++);
    assert_int_equal(rc, 0);
    assert_int_equal(n, 5);
    frames_reader_close(r);
    mem.p[0] ^= 0xff;   /* the magic */
    rc = frames_reader_open_memory(&r, mem.p, size, NULL, &err);
    assert_true(rc < 0);
    assert_int_equal(err.code, rc);
    assert_non_null(strstr(err.message, "offset 0x"));
    free(mem.p);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_formatter_matches_snprintf),
        cmocka_unit_test(test_formatter_truncates_like_snprintf),
        cmocka_unit_test(test_fail_carries_the_position),
        cmocka_unit_test(test_write_and_read_without_stdio),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
