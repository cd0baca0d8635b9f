/* gen_tracedb - write a synthetic trace-db binary trace shaped like
   ../shared/vectors/tracedb/small.trace (see its README and spec/trace-db.md §9).

   usage: gen_tracedb [-n POINTS] [-s SEED] OUT

   Layout of every point k (same entry order as small.trace):
     STATEMENT_ID k % 32
     every 1000 points: BUFFER_SIZE (old buffer, 0) when there is one, then
                        BUFFER_SIZE (new buffer, 64..127 bytes)
     x, y : int in [0, 1000)      z : int in [-500, 500)
     n : unsigned int = 100       i : unsigned int = k % 100
     len : long in [0, 1000000)   p : char* into the live buffer (offset 0..63)
     d : double, two decimals in [0, 100)
   The values come from a fixed xorshift generator, so a seed gives the same file. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rng(void) { /* xorshift64* */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545f4914f6cdd1dull;
}

static uint64_t below(uint64_t n) { return rng() % n; }

static unsigned char buf[1 << 16];
static size_t used;
static FILE *out;

static void flush_buf(void) {
    if (used && fwrite(buf, 1, used, out) != used) {
        perror("gen_tracedb: write");
        exit(1);
    }
    used = 0;
}

static void put(const void *p, size_t n) {
    if (used + n > sizeof buf) flush_buf();
    memcpy(buf + used, p, n);
    used += n;
}

static void put_u8(unsigned v) { unsigned char c = (unsigned char)v; put(&c, 1); }

static void put_le(uint64_t v, int n) {
    unsigned char b[8];
    int i;
    for (i = 0; i < n; i++) b[i] = (unsigned char)(v >> (8 * i));
    put(b, (size_t)n);
}

enum { T_INT, T_UINT, T_LONG, T_PTR, T_DOUBLE };
/* name indices: types first, then variables (as small.trace) */
enum { N_INT, N_UINT, N_LONG, N_PTR, N_DOUBLE, N_X, N_Y, N_Z, N_N, N_I, N_LEN, N_P, N_D };

static void var(unsigned name, unsigned type, uint64_t bits, int size) {
    put_u8(2);
    put_le(name, 4);
    put_le(type, 4);
    put_le(bits, size);
}

static void header(void) {
    static const char *names[] = {"int", "unsigned int", "long", "char*", "double", "x", "y",
                                  "z", "n", "i", "len", "p", "d"};
    static const unsigned types[5][3] = {
        {N_INT, 1, 4}, {N_UINT, 0, 4}, {N_LONG, 1, 8}, {N_PTR, 3, 8}, {N_DOUBLE, 2, 8}};
    uint64_t chars = 0;
    size_t i;
    for (i = 0; i < sizeof names / sizeof names[0]; i++) chars += strlen(names[i]) + 1;
    put_le(chars, 8);
    for (i = 0; i < sizeof names / sizeof names[0]; i++) put(names[i], strlen(names[i]) + 1);
    put_le(5, 4);
    for (i = 0; i < 5; i++) {
        put_le(types[i][0], 4);
        put_le(types[i][1], 4);
        put_le(types[i][2], 4);
    }
}

int main(int argc, char **argv) {
    uint64_t npoints = 1000000, k, base = 0, size = 0;
    const char *path = NULL;
    int i;
    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-n") && i + 1 < argc) npoints = strtoull(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "-s") && i + 1 < argc) rng_state ^= strtoull(argv[++i], NULL, 0);
        else if (argv[i][0] != '-' && !path) path = argv[i];
        else {
            fprintf(stderr, "usage: gen_tracedb [-n POINTS] [-s SEED] OUT\n");
            return 2;
        }
    }
    if (!path) {
        fprintf(stderr, "usage: gen_tracedb [-n POINTS] [-s SEED] OUT\n");
        return 2;
    }
    if (!(out = fopen(path, "wb"))) {
        perror(path);
        return 1;
    }
    header();
    for (k = 0; k < npoints; k++) {
        double d;
        uint64_t dbits;
        put_u8(1);
        put_le(k % 32, 8);
        if (k % 1000 == 0) {
            if (size) {
                put_u8(3);
                put_le(base, 8);
                put_le(0, 8);
            }
            base = 0x10000 + (k / 1000) * 0x100;
            size = 64 + below(64);
            put_u8(3);
            put_le(base, 8);
            put_le(size, 8);
        }
        var(N_X, T_INT, below(1000), 4);
        var(N_Y, T_INT, below(1000), 4);
        var(N_Z, T_INT, (uint64_t)((int64_t)below(1000) - 500), 4);
        var(N_N, T_UINT, 100, 4);
        var(N_I, T_UINT, k % 100, 4);
        var(N_LEN, T_LONG, below(1000000), 8);
        var(N_P, T_PTR, base + below(64), 8);
        d = (double)below(10000) / 100.0;
        memcpy(&dbits, &d, 8);
        var(N_D, T_DOUBLE, dbits, 8);
        put_u8(0);
    }
    flush_buf();
    if (fclose(out) != 0) {
        perror(path);
        return 1;
    }
    return 0;
}
