/* codec.h - shared by the three implementations of the codec benchmark (bench_codec.c:
   frames.h; codec_pbcxx.cc: libprotobuf C++ as libtrace uses it; codec_pbc.c: protobuf-c
   as QEMU tracewrap uses it).

   - bench_insn / bench_gen: the content of frame i, shaped like PIN tracer output (an
     x86-64 instruction with two 8-byte register reads and one 8-byte memory read before,
     one register write after). Every implementation builds its own message from it inside
     the timed loop, so generating it costs all of them the same.
   - bench_sum_*: a checksum over every decoded field, the same for everybody, so that a
     reader cannot skip work and so that the three decodings can be compared.
   - bench_container_*: the container (header, meta, size-prefixed frames, TOC) written
     and read with stdio the way libtrace's TraceContainerWriter / Reader do it, for the
     two peers (frames.h has its own writer and reader). */
#ifndef FRAMES_BENCH_CODEC_H
#define FRAMES_BENCH_CODEC_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

#define BENCH_ARCH 9        /* i386 (bfd_arch_i386) */
#define BENCH_MACHINE 64    /* x86-64 */
#define BENCH_FRAMES_PER_TOC 10000u
#define BENCH_VERSION 3

typedef struct bench_insn {
    uint64_t address, thread_id;
    uint8_t raw[3];
    uint8_t reg_read[2], reg_written;   /* indexes into bench_reg_names */
    uint64_t read_value[2];
    uint64_t mem_address, mem_value;
    uint64_t written_value;
} bench_insn;

static const char *const bench_reg_names[16] = {
    "R_RAX", "R_RBX", "R_RCX", "R_RDX", "R_RSI", "R_RDI", "R_RBP", "R_RSP",
    "R_R8",  "R_R9",  "R_R10", "R_R11", "R_R12", "R_R13", "R_R14", "R_R15"};
static const size_t bench_reg_len[16] = {5, 5, 5, 5, 5, 5, 5, 5, 4, 4, 5, 5, 5, 5, 5, 5};

/* Frame i: a text-segment address, thread 1, 3 code bytes, registers and values from a
   hash of i, a stack address for the memory read (7-byte varint). */
static inline void bench_gen(uint64_t i, bench_insn *o) {
    uint64_t h = (i + 1) * 0x9e3779b97f4a7c15ull;
    h ^= h >> 31;
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 29;
    o->address = 0x401000 + (i * 3) % 0x80000;
    o->thread_id = 1;
    o->raw[0] = 0x48;
    o->raw[1] = (uint8_t)(h >> 8);
    o->raw[2] = (uint8_t)(0xc0 | (h >> 16));
    o->reg_read[0] = (uint8_t)(h & 15);
    o->reg_read[1] = (uint8_t)((h >> 4) & 15);
    o->reg_written = (uint8_t)((h >> 24) & 15);
    o->read_value[0] = h;
    o->read_value[1] = h >> 17;
    o->mem_address = 0x7ffc00000000ull | ((h >> 12) & 0x3fffff8ull);
    o->mem_value = h * 5;
    o->written_value = h + o->read_value[1];
}

/* Checksum of decoded fields: sums (cheap, so that it does not hide decoder costs): of
   bytes, the length and the first 8 bytes (or the first byte of shorter ones). */
static inline uint64_t bench_bytes8(const void *p, size_t n) {
    uint64_t v = 0;
    if (n >= 8) memcpy(&v, p, 8);
    else if (n) v = *(const uint8_t *)p;
    return v + n;
}

static inline uint64_t bench_sum_frame(uint64_t address, uint64_t thread_id, const void *raw,
                                       size_t raw_len, size_t npre, size_t npost) {
    return address + thread_id + bench_bytes8(raw, raw_len) + npre * 3 + npost * 5;
}

/* One operand: mem (address) or reg (name), bit length, usage bits, taint, value. */
static inline uint64_t bench_sum_operand(int is_mem, uint64_t mem_address, const void *name,
                                         size_t name_len, int32_t bit_length, int read,
                                         int written, int index, int base, uint64_t taint,
                                         const void *value, size_t value_len) {
    uint64_t s = is_mem ? mem_address : bench_bytes8(name, name_len);
    s += (uint32_t)bit_length + (uint64_t)(read | written << 1 | index << 2 | base << 3) + taint;
    return s + bench_bytes8(value, value_len);
}

/* Meta frame content (every implementation encodes it with its own library). */
#define BENCH_META_TRACER_NAME "bap-pintraces"
#define BENCH_META_TRACER_VERSION "bench"
#define BENCH_META_TARGET_PATH "/bin/ls"
#define BENCH_META_USER "root"
#define BENCH_META_HOST "bench-host"
#define BENCH_META_SIZE 142144
#define BENCH_META_ATIME 1700000000.0
#define BENCH_META_MTIME 1600000000.0
#define BENCH_META_CTIME 1650000000.5
#define BENCH_META_TIME 1700000123.0
static const char *const bench_meta_tracer_args[] = {"pin", "-t", "bpt.so", "--", "/bin/ls"};
static const char *const bench_meta_target_args[] = {"/bin/ls", "-l"};
static const char *const bench_meta_target_envp[] = {"HOME=/root", "LANG=C"};
static const uint8_t bench_meta_md5[16] = {0xd4, 0x1d, 0x8c, 0xd9, 0x8f, 0x00, 0xb2, 0x04,
                                           0xe9, 0x80, 0x09, 0x98, 0xec, 0xf8, 0x42, 0x7e};

/* -------------------------------------------------------- container (libtrace style) */

static inline void bench_put_le64(uint8_t *p, uint64_t v) {
    int i;
    for (i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static inline uint64_t bench_le64(const uint8_t *p) {
    uint64_t v = 0;
    int i;
    for (i = 7; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

typedef struct bench_container {
    FILE *f;
    uint64_t count, offset;
    uint64_t *toc;
    size_t ntoc, cap;
} bench_container;

/* Header with n = T = 0, then the meta frame (version 3). */
static inline int bench_container_open(bench_container *c, const char *path, const void *meta,
                                       size_t meta_len) {
    uint8_t h[56];
    memset(c, 0, sizeof *c);
    if (!(c->f = fopen(path, "wb"))) return -1;
    bench_put_le64(h, 0x677C28828AAF6025ull);
    bench_put_le64(h + 8, BENCH_VERSION);
    bench_put_le64(h + 16, BENCH_ARCH);
    bench_put_le64(h + 24, BENCH_MACHINE);
    bench_put_le64(h + 32, 0);
    bench_put_le64(h + 40, 0);
    bench_put_le64(h + 48, meta_len);
    if (fwrite(h, 1, 56, c->f) != 56 || fwrite(meta, 1, meta_len, c->f) != meta_len) return -1;
    c->offset = 56 + meta_len;
    return 0;
}

/* libtrace add(): a TOC entry at the start of every block but the first; size; bytes. */
static inline int bench_container_add(bench_container *c, const void *payload, uint64_t len) {
    uint8_t sz[8];
    if (c->count > 0 && c->count % BENCH_FRAMES_PER_TOC == 0) {
        if (c->ntoc == c->cap) {
            c->cap = c->cap ? 2 * c->cap : 64;
            c->toc = (uint64_t *)realloc(c->toc, c->cap * sizeof *c->toc);
            if (!c->toc) return -1;
        }
        c->toc[c->ntoc++] = c->offset;
    }
    bench_put_le64(sz, len);
    if (fwrite(sz, 1, 8, c->f) != 8 || fwrite(payload, 1, (size_t)len, c->f) != len) return -1;
    c->offset += 8 + len;
    c->count++;
    return 0;
}

/* libtrace finish(): m and the entries at T, then n and T into the header. */
static inline int bench_container_finish(bench_container *c) {
    uint8_t w[8];
    size_t i;
    int rc = 0;
    uint64_t T = c->offset;
    bench_put_le64(w, BENCH_FRAMES_PER_TOC);
    rc |= fwrite(w, 1, 8, c->f) != 8;
    for (i = 0; i < c->ntoc; i++) {
        bench_put_le64(w, c->toc[i]);
        rc |= fwrite(w, 1, 8, c->f) != 8;
    }
    rc |= fseek(c->f, 32, SEEK_SET) != 0;
    bench_put_le64(w, c->count);
    rc |= fwrite(w, 1, 8, c->f) != 8;
    bench_put_le64(w, T);
    rc |= fwrite(w, 1, 8, c->f) != 8;
    rc |= fclose(c->f) != 0;
    free(c->toc);
    return rc ? -1 : 0;
}

typedef struct bench_reader {
    FILE *f;
    uint64_t n, i;
    uint8_t *buf;
    size_t cap;
} bench_reader;

/* libtrace reader: header, skip the meta frame, then exactly n frames. */
static inline int bench_reader_open(bench_reader *r, const char *path) {
    uint8_t h[56];
    memset(r, 0, sizeof *r);
    if (!(r->f = fopen(path, "rb"))) return -1;
    if (fread(h, 1, 56, r->f) != 56 || bench_le64(h + 8) != BENCH_VERSION) return -1;
    r->n = bench_le64(h + 32);
    return fseek(r->f, (long)bench_le64(h + 48), SEEK_CUR);
}

/* Next frame's bytes into r->buf: 1, 0 at the end, -1 on error. */
static inline int bench_reader_next(bench_reader *r, uint64_t *len) {
    uint8_t sz[8];
    if (r->i >= r->n) return 0;
    if (fread(sz, 1, 8, r->f) != 8) return -1;
    *len = bench_le64(sz);
    if (*len > r->cap) {
        r->cap = (size_t)*len * 2;
        r->buf = (uint8_t *)realloc(r->buf, r->cap);
        if (!r->buf) return -1;
    }
    if (fread(r->buf, 1, (size_t)*len, r->f) != *len) return -1;
    r->i++;
    return 1;
}

/* Count without decoding: read each size and seek over the payload. */
static inline int bench_reader_skip(bench_reader *r) {
    uint8_t sz[8];
    if (r->i >= r->n) return 0;
    if (fread(sz, 1, 8, r->f) != 8 || fseek(r->f, (long)bench_le64(sz), SEEK_CUR) != 0) return -1;
    r->i++;
    return 1;
}

static inline void bench_reader_close(bench_reader *r) {
    if (r->f) fclose(r->f);
    free(r->buf);
}

/* Peer entry points, 0 or -1.
   write/read: the container in a file; read returns the frame count and the checksum of
   every field.
   encode_mem: frames 0..n-1 serialized back to back into buf (no size words); *used is the
   total. decode_mem: parse each of the n messages; *sum adds up the addresses (the
   checksum of every field is the read pass's job). No file, no system call. */
int pbcxx_write(const char *path, uint64_t n);
int pbcxx_read(const char *path, uint64_t *count, uint64_t *sum);
int pbcxx_encode_mem(uint8_t *buf, size_t cap, uint64_t n, size_t *used);
int pbcxx_decode_mem(const uint8_t *const *msg, const size_t *len, uint64_t n, uint64_t *sum);
int pbc_write(const char *path, uint64_t n);
int pbc_read(const char *path, uint64_t *count, uint64_t *sum);
int pbc_encode_mem(uint8_t *buf, size_t cap, uint64_t n, size_t *used);
int pbc_decode_mem(const uint8_t *const *msg, const size_t *len, uint64_t n, uint64_t *sum);

#ifdef __cplusplus
}
#endif
#endif
