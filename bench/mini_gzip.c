/* mini_gzip.c - `gzip -c` for the QEMU engine's benchmark (bench_record_qemu.sh): stdin
   compressed to stdout in the gzip format (RFC 1952) with one deflate block of fixed
   Huffman codes (RFC 1951 3.2.6) and LZ77 matches found by hash chains, as gzip's own
   compressor does (without its dynamic trees). Built static for AArch64 with Debian's
   cross compiler: no AArch64 gzip binary ships with the cross toolchains. The benchmark
   checks the output with the host's gzip -d. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WSIZE 32768u
#define HBITS 15
#define MAXCHAIN 16 /* gzip -4's chain and nice lengths: a bounded run */
#define NICE 64
#define MINMATCH 3
#define MAXMATCH 258

static uint8_t *in;
static size_t n;
static int32_t head[1u << HBITS], prev[WSIZE];

/* output: bits LSB first */
static uint8_t obuf[1u << 16];
static size_t olen;
static uint32_t bitbuf;
static int nbits;

static void out_byte(uint8_t b) {
    if (olen == sizeof obuf) {
        fwrite(obuf, 1, olen, stdout);
        olen = 0;
    }
    obuf[olen++] = b;
}

static void put_bits(uint32_t v, int len) {
    bitbuf |= v << nbits;
    nbits += len;
    while (nbits >= 8) {
        out_byte((uint8_t)bitbuf);
        bitbuf >>= 8;
        nbits -= 8;
    }
}

/* a Huffman code: most significant bit first */
static void put_code(uint32_t code, int len) {
    uint32_t r = 0;
    int i;
    for (i = 0; i < len; i++) r |= ((code >> i) & 1u) << (len - 1 - i);
    put_bits(r, len);
}

static void put_symbol(unsigned s) {
    if (s < 144) put_code(0x30 + s, 8);
    else if (s < 256) put_code(0x190 + s - 144, 9);
    else if (s < 280) put_code(s - 256, 7);
    else put_code(0xc0 + s - 280, 8);
}

static const uint16_t len_base[29] = {3,  4,  5,  6,  7,  8,  9,  10, 11,  13,  15,  17,  19,  23, 27,
                                      31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258};
static const uint8_t len_extra[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
static const uint16_t dist_base[30] = {1,   2,   3,   4,   5,   7,    9,    13,   17,   25,   33,   49,   65,    97,    129,
                                       193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577};
static const uint8_t dist_extra[30] = {0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13};

static void put_match(unsigned len, unsigned dist) {
    unsigned i = 28, d = 29;
    while (len_base[i] > len) i--;
    put_symbol(257 + i);
    put_bits(len - len_base[i], len_extra[i]);
    while (dist_base[d] > dist) d--;
    put_code(d, 5);
    put_bits(dist - dist_base[d], dist_extra[d]);
}

static unsigned hash3(size_t i) { return ((unsigned)in[i] << 10 ^ (unsigned)in[i + 1] << 5 ^ in[i + 2]) & ((1u << HBITS) - 1); }

/* the longest earlier match of in[i..] within the window: its length (0: none) */
static unsigned longest(size_t i, unsigned *dist) {
    int32_t c = head[hash3(i)];
    unsigned best = 0, chain = MAXCHAIN, maxlen = n - i < MAXMATCH ? (unsigned)(n - i) : MAXMATCH;
    while (c >= 0 && i - (size_t)c <= WSIZE - 1 && chain--) {
        unsigned l = 0;
        while (l < maxlen && in[(size_t)c + l] == in[i + l]) l++;
        if (l > best) {
            best = l;
            *dist = (unsigned)(i - (size_t)c);
            if (l >= NICE || l == maxlen) break;
        }
        c = prev[(size_t)c % WSIZE];
    }
    return best >= MINMATCH ? best : 0;
}

static void insert(size_t i) {
    unsigned h = hash3(i);
    prev[i % WSIZE] = head[h];
    head[h] = (int32_t)i;
}

static uint32_t crc32(const uint8_t *p, size_t len) {
    static uint32_t table[256];
    uint32_t c = 0xffffffffu;
    size_t k;
    if (!table[1])
        for (k = 0; k < 256; k++) {
            uint32_t v = (uint32_t)k;
            int j;
            for (j = 0; j < 8; j++) v = v & 1 ? 0xedb88320u ^ (v >> 1) : v >> 1;
            table[k] = v;
        }
    for (k = 0; k < len; k++) c = table[(c ^ p[k]) & 0xff] ^ (c >> 8);
    return c ^ 0xffffffffu;
}

int main(void) {
    static const uint8_t header[10] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3};
    size_t cap = 1u << 20, i = 0, k;
    uint32_t crc;
    in = malloc(cap);
    while (in) {
        size_t got = fread(in + n, 1, cap - n, stdin);
        n += got;
        if (n < cap) break;
        in = realloc(in, cap *= 2);
    }
    if (!in) return 1;
    memset(head, 0xff, sizeof head);
    for (k = 0; k < sizeof header; k++) out_byte(header[k]);
    put_bits(1, 1); /* BFINAL */
    put_bits(1, 2); /* BTYPE 01: fixed Huffman codes */
    while (i < n) {
        unsigned dist = 0, len = n - i >= MINMATCH ? longest(i, &dist) : 0;
        if (len) {
            put_match(len, dist);
            for (k = 0; k < len; k++, i++)
                if (n - i >= MINMATCH) insert(i);
        } else {
            put_symbol(in[i]);
            if (n - i >= MINMATCH) insert(i);
            i++;
        }
    }
    put_symbol(256);
    if (nbits) put_bits(0, 8 - nbits);
    crc = crc32(in, n);
    for (k = 0; k < 4; k++) out_byte((uint8_t)(crc >> 8 * k));
    for (k = 0; k < 4; k++) out_byte((uint8_t)(n >> 8 * k));
    fwrite(obuf, 1, olen, stdout);
    return 0;
}
