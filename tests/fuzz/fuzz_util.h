/* fuzz_util.h - helpers shared by the libFuzzer targets in tests/fuzz/.

   Include it INSTEAD of frames.h, as the first include of a target: it defines the
   implementation with a counting allocator, so that every target can check that no input
   makes the library hold more memory than a small multiple of the input size.

   A target file may carry directives for tests/fuzz/run.sh as line comments (a glob in
   a block comment would end it):
       // fuzz-seeds: MODE GLOB...     seeds made at run time from $FRAMES_SHARED/GLOB;
                                       MODE: files (whole files), frames (each frame
                                       payload of frames traces), meta (meta payloads),
                                       unfinished (finished traces as a writer killed
                                       inside finish leaves them), tracedb (trace-db
                                       traces cut after a few points), ptcase (a PT case
                                       directory: image + trace), pevent (a sideband
                                       file with its case's settings), perfdata (a PT
                                       case as perf.data); see seedgen.c
       // fuzz-needs: HEADER LIBS...   build only when <HEADER> is installed; link LIBS
       // fuzz-flags: FLAGS...         extra libFuzzer flags (e.g. -max_len=65536)
   Hand-made seeds and fixed crash inputs live in tests/fuzz/seeds/<target>/. */
#ifndef FRAMES_FUZZ_UTIL_H
#define FRAMES_FUZZ_UTIL_H

/* FRAMES_STATIC and the helpers below: a target uses only some of them */
#if defined(__clang__) || defined(__GNUC__)
#pragma GCC diagnostic ignored "-Wunused-function"
#endif

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../heapcount.h" /* the counting allocator: hc_state, hc_mark */

#define FRAMES_STATIC
#define FRAMES_IMPLEMENTATION
#include "frames.h"

/* An invariant that does not hold is a bug: report it and crash so that libFuzzer saves
   the input. */
#define FZ_CHECK(cond)                                                                     \
    do {                                                                                   \
        if (!(cond)) {                                                                     \
            fprintf(stderr, "%s:%d: invariant failed: %s\n", __FILE__, __LINE__, #cond);  \
            abort();                                                                       \
        }                                                                                  \
    } while (0)

/* Memory the library may hold for an input of n bytes: the decoded model is at most ~32
   times the encoded bytes (a 2-byte empty operand becomes a 64-byte struct), arena growth
   adds half of that, and a stream reader's window and fixed structures add a constant. */
static size_t fz_memory_bound(size_t n) { return 64 * n + (1u << 20); }

/* Check the memory held since hc_mark against fz_memory_bound(n). */
#define FZ_CHECK_MEMORY(base, n) FZ_CHECK_MEMORY_BOUND(base, n, fz_memory_bound(n))

/* ... against a bound of the target's own (a library with fixed-size tables). */
#define FZ_CHECK_MEMORY_BOUND(base, n, bound)                                             \
    do {                                                                                  \
        if (hc_state.peak - (base) > (bound)) {                                      \
            fprintf(stderr, "peak %zu bytes (largest block %zu, %zu calls) for %zu input " \
                    "bytes\n", hc_state.peak - (base), hc_state.largest,        \
                    hc_state.calls, (size_t)(n));                                    \
            FZ_CHECK(!"memory held exceeds the bound");                                   \
        }                                                                                 \
    } while (0)

/* ---------------------------------------------------------------- output buffer */

typedef struct fz_buf {
    char *p;
    size_t len, cap;
    size_t fail_after;   /* make the output callback fail once len would exceed this */
} fz_buf;

static int fz_out(void *ctx, const char *s, size_t n) {
    fz_buf *b = (fz_buf *)ctx;
    if (b->fail_after && b->len + n > b->fail_after) return -1;
    if (b->len + n + 1 > b->cap) {
        size_t ncap = (b->len + n + 1) * 2;
        char *np = (char *)realloc(b->p, ncap);
        if (!np) return -1;
        b->p = np;
        b->cap = ncap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = 0;
    return 0;
}

static void fz_buf_free(fz_buf *b) {
    free(b->p);
    memset(b, 0, sizeof *b);
}

/* ---------------------------------------------------------------- memory sink */

/* A growing byte buffer: inputs built by the targets, and a frames_sink for the writers
   (fz_mem_write, fz_mem_patch). */
typedef struct fz_mem {
    uint8_t *p;
    size_t len, cap;
} fz_mem;

static void fz_mem_put(fz_mem *m, const void *d, size_t n) {
    if (m->len + n > m->cap) {
        m->cap = (m->len + n) * 2 + 256;
        m->p = (uint8_t *)realloc(m->p, m->cap);
        FZ_CHECK(m->p);
    }
    memcpy(m->p + m->len, d, n);
    m->len += n;
}

/* v as n little-endian bytes */
static void fz_mem_le(fz_mem *m, uint64_t v, int n) {
    uint8_t b[8];
    int i;
    for (i = 0; i < n; i++) b[i] = (uint8_t)(v >> (8 * i));
    fz_mem_put(m, b, (size_t)n);
}

static int fz_mem_write(void *ctx, const void *d, size_t n) {
    fz_mem_put((fz_mem *)ctx, d, n);
    return FRAMES_OK;
}

/* A writer patches only bytes it has written. */
static int fz_mem_patch(void *ctx, uint64_t off, const void *d, size_t n) {
    fz_mem *m = (fz_mem *)ctx;
    FZ_CHECK(off <= m->len && n <= m->len - off);
    memcpy(m->p + off, d, n);
    return FRAMES_OK;
}

/* ---------------------------------------------------------------- JSON checker */
/* A strict RFC 8259 recogniser: the printers must produce exactly one valid JSON value,
   and strings must be valid UTF-8 (no raw control characters). */

typedef struct fz_json {
    const unsigned char *p, *end;
    int depth;
} fz_json;

static void fz_json_ws(fz_json *j) {
    while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r'))
        j->p++;
}

static int fz_json_lit(fz_json *j, const char *s) {
    size_t n = strlen(s);
    if ((size_t)(j->end - j->p) < n || memcmp(j->p, s, n)) return 0;
    j->p += n;
    return 1;
}

static int fz_hex(int c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* Length of the UTF-8 sequence at p (0 when invalid). */
static size_t fz_utf8(const unsigned char *p, const unsigned char *end) {
    size_t len, i;
    unsigned c = p[0];
    if (c < 0x80) return 1;
    if (c >= 0xc2 && c <= 0xdf) len = 2;
    else if (c >= 0xe0 && c <= 0xef) len = 3;
    else if (c >= 0xf0 && c <= 0xf4) len = 4;
    else return 0;
    if ((size_t)(end - p) < len) return 0;
    for (i = 1; i < len; i++)
        if ((p[i] & 0xc0) != 0x80) return 0;
    if (c == 0xe0 && p[1] < 0xa0) return 0;   /* overlong */
    if (c == 0xed && p[1] >= 0xa0) return 0;  /* surrogate */
    if (c == 0xf0 && p[1] < 0x90) return 0;   /* overlong */
    if (c == 0xf4 && p[1] >= 0x90) return 0;  /* > U+10FFFF */
    return len;
}

static int fz_json_string(fz_json *j) {
    if (j->p >= j->end || *j->p != '"') return 0;
    j->p++;
    while (j->p < j->end && *j->p != '"') {
        size_t k;
        if (*j->p < 0x20) return 0;
        if (*j->p == '\\') {
            j->p++;
            if (j->p >= j->end) return 0;
            if (*j->p == 'u') {
                int i;
                if (j->end - j->p < 5) return 0;
                for (i = 1; i <= 4; i++)
                    if (!fz_hex(j->p[i])) return 0;
                j->p += 5;
                continue;
            }
            if (!strchr("\"\\/bfnrt", *j->p)) return 0;
            j->p++;
            continue;
        }
        if ((k = fz_utf8(j->p, j->end)) == 0) return 0;
        j->p += k;
    }
    if (j->p >= j->end) return 0;
    j->p++;
    return 1;
}

static int fz_json_number(fz_json *j) {
    const unsigned char *s = j->p;
    if (j->p < j->end && *j->p == '-') j->p++;
    if (j->p >= j->end) return 0;
    if (*j->p == '0') j->p++;
    else if (*j->p >= '1' && *j->p <= '9') while (j->p < j->end && *j->p >= '0' && *j->p <= '9') j->p++;
    else return 0;
    if (j->p < j->end && *j->p == '.') {
        j->p++;
        if (j->p >= j->end || *j->p < '0' || *j->p > '9') return 0;
        while (j->p < j->end && *j->p >= '0' && *j->p <= '9') j->p++;
    }
    if (j->p < j->end && (*j->p == 'e' || *j->p == 'E')) {
        j->p++;
        if (j->p < j->end && (*j->p == '+' || *j->p == '-')) j->p++;
        if (j->p >= j->end || *j->p < '0' || *j->p > '9') return 0;
        while (j->p < j->end && *j->p >= '0' && *j->p <= '9') j->p++;
    }
    return j->p > s;
}

static int fz_json_value(fz_json *j);

static int fz_json_container(fz_json *j, char open, char close, int object) {
    if (++j->depth > 64) return 0;
    j->p++; /* open */
    (void)open;
    fz_json_ws(j);
    if (j->p < j->end && *j->p == close) {
        j->p++;
        j->depth--;
        return 1;
    }
    for (;;) {
        if (object) {
            if (!fz_json_string(j)) return 0;
            fz_json_ws(j);
            if (j->p >= j->end || *j->p != ':') return 0;
            j->p++;
            fz_json_ws(j);
        }
        if (!fz_json_value(j)) return 0;
        fz_json_ws(j);
        if (j->p >= j->end) return 0;
        if (*j->p == close) {
            j->p++;
            j->depth--;
            return 1;
        }
        if (*j->p != ',') return 0;
        j->p++;
        fz_json_ws(j);
    }
}

static int fz_json_value(fz_json *j) {
    if (j->p >= j->end) return 0;
    switch (*j->p) {
    case '{': return fz_json_container(j, '{', '}', 1);
    case '[': return fz_json_container(j, '[', ']', 0);
    case '"': return fz_json_string(j);
    case 't': return fz_json_lit(j, "true");
    case 'f': return fz_json_lit(j, "false");
    case 'n': return fz_json_lit(j, "null");
    default: return fz_json_number(j);
    }
}

/* Is s[0..n) exactly one JSON value (whitespace around allowed)? */
static int fz_json_valid(const char *s, size_t n) {
    fz_json j;
    j.p = (const unsigned char *)s;
    j.end = j.p + n;
    j.depth = 0;
    fz_json_ws(&j);
    if (!fz_json_value(&j)) return 0;
    fz_json_ws(&j);
    return j.p == j.end;
}

/* ---------------------------------------------------------------- input bytes */

/* Consume bytes from the fuzz input as a stream of small decisions. */
typedef struct fz_in {
    const uint8_t *p;
    size_t n;
} fz_in;

static uint64_t fz_take(fz_in *in, unsigned bytes) {
    uint64_t v = 0;
    unsigned i;
    for (i = 0; i < bytes && in->n; i++, in->n--) v |= (uint64_t)*in->p++ << (8 * i);
    return v;
}

static frames_bytes fz_take_bytes(fz_in *in, size_t max) {
    size_t len = (size_t)fz_take(in, 1) % (max + 1);
    frames_bytes b;
    if (len > in->n) len = in->n;
    b.ptr = in->p;
    b.len = len;
    in->p += len;
    in->n -= len;
    return b;
}

#endif
