/* test_helpers - the shared private helpers of frames.h that every header builds on and
   no public call shows whole: the one hash table (frames__htab) checked against a plain
   array of the same keys through random adds, lookups and erases, colliding hashes,
   its max bound and a failing allocator; the one warning list (frames__warn_add); the
   one byte hash (frames__hash_bytes) against FNV-1a's published test vectors. */
#define FRAMES_STATIC
#define FRAMES_IMPLEMENTATION
#define FRAMES_MALLOC(sz, ctx) th_malloc((sz), (ctx))
#define FRAMES_REALLOC(p, sz, ctx) ((void)(ctx), realloc((p), (sz)))
#define FRAMES_FREE(p, ctx) th_free((p), (ctx))
#include <stddef.h>
static void *th_malloc(size_t n, void *ctx);
static void th_free(void *p, void *ctx);

#include "frames.h"

#include "testutil.h"

/* An allocator that fails once the budget of calls in *ctx (when given) is spent. */
static void *th_malloc(size_t n, void *ctx) {
    long *budget = (long *)ctx;
    if (budget && (*budget)-- <= 0) return NULL;
    return malloc(n);
}
static void th_free(void *p, void *ctx) {
    (void)ctx;
    free(p);
}

typedef struct th_slot {
    uint64_t hash;   /* the table's */
    uint64_t key, value;
} th_slot;

/* Keys of a small range hashed to few homes (low bits of the key only), so that runs
   are long and wrap around the end of the table: erase's moves are exercised. */
static uint64_t th_hash(uint64_t key, int collide) {
    return collide ? (key & 7) * 0x0101010101010101ull : frames__mix64(key);
}

static th_slot *th_find(const frames__htab *t, uint64_t key, int collide) {
    size_t at = 0;
    th_slot *s;
    while ((s = FRAMES__HTAB_NEXT(t, th_slot, th_hash(key, collide), &at)) && s->key != key) {}
    return s;
}

static void th_random_against_array(int collide) {
    enum { KEYS = 600, STEPS = 20000 };
    static uint64_t model[KEYS];   /* value + 1 of key i, 0 = absent */
    frames__htab t;
    uint64_t rng = 12345, present = 0;
    int step;
    size_t i;
    memset(model, 0, sizeof model);
    FRAMES__HTAB_INIT(&t, th_slot, KEYS);
    for (step = 0; step < STEPS; step++) {
        uint64_t key, op;
        th_slot *s;
        rng = rng * 6364136223846793005ull + 1442695040888963407ull;
        key = (rng >> 33) % KEYS;
        op = (rng >> 20) % 4;
        s = th_find(&t, key, collide);
        assert_int_equal(s != NULL, model[key] != 0);
        if (s) assert_int_equal(s->value + 1, model[key]);
        if (op < 2 && !s) {   /* add */
            s = (th_slot *)frames__htab_add(&t, th_hash(key, collide), NULL);
            assert_non_null(s);
            assert_int_equal(s->key, 0);   /* zeroed but for the hash */
            s->key = key;
            s->value = rng;
            model[key] = rng + 1;
            present++;
        } else if (op == 2 && s) {
            frames__htab_erase(&t, s);
            model[key] = 0;
            present--;
        }
        assert_int_equal(t.len, present);
        assert_true(t.len * 2 <= t.cap);
    }
    for (i = 0, present = 0; i < t.cap; i++) {   /* the walk sees each key once */
        th_slot *s = (th_slot *)frames__htab_at(&t, i);
        if (!s) continue;
        assert_int_equal(s->value + 1, model[s->key]);
        present++;
    }
    assert_int_equal(present, t.len);
    for (i = 0; i < KEYS; i++) assert_int_equal(th_find(&t, i, collide) != NULL, model[i] != 0);
    frames__htab_clear(&t);
    assert_int_equal(t.len, 0);
    for (i = 0; i < KEYS; i++) assert_null(th_find(&t, i, collide));
    frames__htab_free(&t, NULL);
}

static void test_htab_matches_array(void **state) {
    (void)state;
    th_random_against_array(0);
}

static void test_htab_matches_array_when_hashes_collide(void **state) {
    (void)state;
    th_random_against_array(1);
}

/* Same hash, different keys: every slot of that hash is returned, one a call. */
static void test_htab_next_returns_each_slot_of_a_hash(void **state) {
    frames__htab t;
    int k, seen = 0;
    size_t at = 0;
    th_slot *s;
    (void)state;
    FRAMES__HTAB_INIT(&t, th_slot, 100);
    assert_null(frames__htab_next(&t, 42, &at));   /* empty, nothing allocated */
    for (k = 0; k < 5; k++) {
        s = (th_slot *)frames__htab_add(&t, 42, NULL);
        assert_non_null(s);
        s->key = (uint64_t)k;
    }
    assert_non_null(frames__htab_add(&t, 43, NULL));
    while ((s = (th_slot *)frames__htab_next(&t, 42, &at)) != NULL) seen |= 1 << s->key;
    assert_int_equal(seen, 31);
    frames__htab_free(&t, NULL);
}

/* The table never holds more than max, and never grows beyond 4 * max slots. */
static void test_htab_stops_at_max(void **state) {
    frames__htab t;
    uint64_t k;
    (void)state;
    FRAMES__HTAB_INIT(&t, th_slot, 1000);
    for (k = 0; k < 1000; k++) assert_non_null(frames__htab_add(&t, frames__mix64(k), NULL));
    assert_null(frames__htab_add(&t, frames__mix64(k), NULL));
    assert_int_equal(t.len, 1000);
    assert_true(t.cap <= 4000);
    frames__htab_free(&t, NULL);
}

/* Out of memory while growing: NULL, and the table keeps what it held. */
static void test_htab_survives_failed_growth(void **state) {
    frames__htab t;
    long budget = 1;   /* the first table only */
    uint64_t k;
    (void)state;
    FRAMES__HTAB_INIT(&t, th_slot, 1u << 20);
    for (k = 0; k < FRAMES__HTAB_MIN / 2; k++) {
        th_slot *s = (th_slot *)frames__htab_add(&t, frames__mix64(k), &budget);
        assert_non_null(s);
        s->key = k;
    }
    assert_null(frames__htab_add(&t, frames__mix64(k), &budget));
    assert_int_equal(t.len, FRAMES__HTAB_MIN / 2);
    for (k = 0; k < FRAMES__HTAB_MIN / 2; k++) assert_non_null(th_find(&t, k, 0));
    frames__htab_free(&t, NULL);
}

static int th_warn(char (*rows)[16], uint32_t max, uint32_t *n, const char *fmt, ...) {
    va_list ap;
    int added;
    va_start(ap, fmt);
    added = frames__warn_add(rows[0], max, sizeof rows[0], n, fmt, ap);
    va_end(ap);
    return added;
}

/* Rows fill in order, cut to their size; a full list writes nothing. */
static void test_warn_list_fills_then_refuses(void **state) {
    char rows[3][16];
    uint32_t n = 0;
    (void)state;
    memset(rows, 'x', sizeof rows);
    assert_int_equal(th_warn(rows, 3, &n, "first %d", 1), 1);
    assert_int_equal(th_warn(rows, 3, &n, "a message longer than a row %d", 2), 1);
    assert_int_equal(th_warn(rows, 3, &n, "third"), 1);
    assert_int_equal(th_warn(rows, 3, &n, "fourth"), 0);
    assert_int_equal(n, 3);
    assert_string_equal(rows[0], "first 1");
    assert_string_equal(rows[1], "a message longe");
    assert_string_equal(rows[2], "third");
}

/* FNV-1a 64 of "", "a" and "foobar" as the FNV reference's test suite lists them; a
   hash continued from the hash of a prefix equals the hash of the whole. */
static void test_hash_bytes_is_fnv1a(void **state) {
    (void)state;
    assert_true(frames__hash_bytes(FRAMES__HASH_SEED, "", 0) == 0xcbf29ce484222325ull);
    assert_true(frames__hash_bytes(FRAMES__HASH_SEED, "a", 1) == 0xaf63dc4c8601ec8cull);
    assert_true(frames__hash_bytes(FRAMES__HASH_SEED, "foobar", 6) == 0x85944171f73967e8ull);
    assert_true(frames__hash_bytes(frames__hash_bytes(FRAMES__HASH_SEED, "foo", 3), "bar", 3) ==
                0x85944171f73967e8ull);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_htab_matches_array),
        cmocka_unit_test(test_htab_matches_array_when_hashes_collide),
        cmocka_unit_test(test_htab_next_returns_each_slot_of_a_hash),
        cmocka_unit_test(test_htab_stops_at_max),
        cmocka_unit_test(test_htab_survives_failed_growth),
        cmocka_unit_test(test_warn_list_fills_then_refuses),
        cmocka_unit_test(test_hash_bytes_is_fnv1a),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
