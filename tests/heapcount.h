/* heapcount.h - a counting allocator for the test suites and fuzz targets that measure
   what the library holds.

   Include it before frames.h in a translation unit that has its own copy of the
   implementation (FRAMES_STATIC + FRAMES_IMPLEMENTATION): it routes FRAMES_MALLOC,
   FRAMES_REALLOC and FRAMES_FREE through a counter of live bytes, their peak since
   hc_mark(), the largest block and the number of calls, and can make one chosen call fail
   (hc_state.fail_at) to exercise every allocation-failure path. Updates are atomic: the
   query engine allocates from its worker threads. */
#ifndef FRAMES_TEST_HEAPCOUNT_H
#define FRAMES_TEST_HEAPCOUNT_H

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

typedef struct hc_heap {
    size_t live, peak, largest, calls;
    size_t fail_at; /* make allocation call number fail_at (since hc_mark) fail; 0: never */
} hc_heap;

static hc_heap hc_state;

static void hc_raise(size_t *m, size_t v) {
    size_t cur = __atomic_load_n(m, __ATOMIC_RELAXED);
    while (v > cur && !__atomic_compare_exchange_n(m, &cur, v, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    }
}

/* Counts one call; false when it is the one that must fail. */
static int hc_call(void) {
    size_t k = __atomic_add_fetch(&hc_state.calls, 1, __ATOMIC_RELAXED);
    return !(hc_state.fail_at && k == hc_state.fail_at);
}

static void hc_grow(size_t add, size_t sub, size_t n) {
    size_t live = __atomic_add_fetch(&hc_state.live, add - sub, __ATOMIC_RELAXED);
    hc_raise(&hc_state.largest, n);
    hc_raise(&hc_state.peak, live);
}

/* 16 bytes in front of every block hold its size (keeps 16-byte alignment). */
static void *hc_malloc(size_t n) {
    unsigned char *p;
    if (!hc_call()) return NULL;
    p = (unsigned char *)malloc(n + 16);
    if (!p) return NULL;
    memcpy(p, &n, sizeof n);
    hc_grow(n, 0, n);
    return p + 16;
}

static void hc_free(void *q) {
    size_t n;
    if (!q) return;
    memcpy(&n, (unsigned char *)q - 16, sizeof n);
    __atomic_sub_fetch(&hc_state.live, n, __ATOMIC_RELAXED);
    free((unsigned char *)q - 16);
}

static void *hc_realloc(void *q, size_t n) {
    size_t old;
    unsigned char *p;
    if (!q) return hc_malloc(n);
    if (!hc_call()) return NULL;
    memcpy(&old, (unsigned char *)q - 16, sizeof old);
    p = (unsigned char *)realloc((unsigned char *)q - 16, n + 16);
    if (!p) return NULL;
    memcpy(p, &n, sizeof n);
    hc_grow(n, old, n);
    return p + 16;
}

/* Start measuring: peak, largest and calls from now on; no call fails. */
static void hc_mark(void) {
    hc_state.peak = hc_state.live;
    hc_state.largest = 0;
    hc_state.calls = 0;
    hc_state.fail_at = 0;
}

#define FRAMES_MALLOC(sz, ctx) ((void)(ctx), hc_malloc(sz))
#define FRAMES_REALLOC(p, sz, ctx) ((void)(ctx), hc_realloc((p), (sz)))
#define FRAMES_FREE(p, ctx) ((void)(ctx), hc_free(p))

#endif
