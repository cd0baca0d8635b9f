/* frames_zstd.h - compressed, seekable frames traces (.frames.zst) over libzstd.
   Single-header C99 library (also compiles as C++) on top of frames.h. MIT licence, see
   the end of the file.

   ---------------------------------------------------------------------------------------
   WHAT IT IS

   A compressed trace is a sequence of standard zstd frames followed by a seek table in
   the layout of zstd's seekable format (contrib/seekable_format): plain `zstd -d` turns it
   into the byte-identical uncompressed trace. Every zstd frame ("chunk") holds whole
   records; chunks end on TOC block starts where the trace's m allows (about chunk_size
   uncompressed bytes each); the 48-byte header is alone in the first frame, stored raw,
   so that finishing a trace patches n and T in place. docs/compression.md has the layout.

   It plugs into frames.h: a reader over a compressed file is an ordinary frames_reader
   (frames_reader_open_source) whose cursors decompress their own chunks, so seek, index,
   cursors in several threads and everything built on them work unchanged; a writer over
   a compressed sink is an ordinary frames_writer (frames_sink), whose chunks can be
   compressed on a second thread. A cursor that reads on from chunk to chunk has the next
   chunk decompressed ahead on a second thread (FRAMES_ZSTD_NO_READAHEAD: not), so that
   decompressing overlaps decoding. Memory: a few chunks per cursor, never the file.

   Needs libzstd (Debian: libzstd-dev, link -lzstd -lpthread). frames.h does not.

   ---------------------------------------------------------------------------------------
   USAGE

   In exactly one C or C++ file (frames.h's implementation may live in another file):

       #define FRAMES_ZSTD_IMPLEMENTATION
       #include "frames_zstd.h"

   Reading any trace, compressed or not (detected by its magic number); seek, index and
   cursors work as for any trace:

       frames_reader *r; frames_error err; frames_frame f; int rc;
       if (frames_zstd_reader_open_path(&r, "trace.frames.zst", NULL, NULL, NULL, &err) < 0) {
           fprintf(stderr, "%s\n", err.message); return 1;
       }
       while ((rc = frames_reader_next(r, &f)) > 0)
           if (f.kind == FRAMES_KIND_STD) printf("%llx\n", (unsigned long long)f.std.address);
       if (rc < 0) fprintf(stderr, "%s\n", frames_reader_error(r)->message);
       frames_reader_close(r);

   Writing a compressed trace (frames as for frames_writer_add):

       frames_writer *w; frames_error err;
       if (frames_zstd_writer_open_path(&w, "out.frames.zst", NULL, NULL, NULL, &err) < 0) {
           fprintf(stderr, "%s\n", err.message); return 1;
       }
       frames_writer_add(w, &f);
       if (frames_writer_close(w) < 0) return 1;   // TOC, header patched in place, seek table

   ---------------------------------------------------------------------------------------
   OPTIONS

   FRAMES_ZSTD_NO_THREADS   never start a compression or read-ahead thread (no pthreads needed)
   FRAMES_ZSTD_STATIC       this header's functions static (frames.h's too if not yet included)
   FRAMES_ZSTD_DEF          their linkage (default FRAMES_DEF)
   frames.h's FRAMES_MALLOC / FRAMES_REALLOC / FRAMES_FREE apply here too, with the
   alloc_ctx of frames_zstd_options (libzstd's own contexts use libzstd's allocator).

   ---------------------------------------------------------------------------------------
   API OVERVIEW (details at each declaration below)

   Chunk map       frames_zstd_map_open / _close / _info_get / _chunk_at / _find /
                   _decompressed
                   (from the seek table, or by walking the zstd frames)
   Reading         frames_zstd_reader_open_memory / _path, frames_zstd_is_compressed,
                   frames_zstd_reader_map, frames_zstd_split_ranges
   Writing         frames_zstd_sink_open / _get / _close, frames_zstd_writer_open_path
   Converting      frames_zstd_decompress_fd / frames_zstd_compress_fd

   ---------------------------------------------------------------------------------------
   SECTIONS (in file order; each starts with a banner of '=' or '-' lines,
   the title on the line below it: grep -n '^   TITLE' finds it)

   Format constants, options, information
   Chunk map: where each chunk is, from the seek table or by walking the zstd frames
   Reading
   Writing
   Converting
   IMPLEMENTATION
     helpers
     chunk map
     reading: source
     writing: sink
     converting
*/
#ifndef FRAMES_ZSTD_H_INCLUDED
#define FRAMES_ZSTD_H_INCLUDED

#if defined(FRAMES_ZSTD_STATIC) && !defined(FRAMES_STATIC) && !defined(FRAMES_H_INCLUDED)
#define FRAMES_STATIC   /* frames.h comes with it: one private copy of both */
#endif
#include "frames.h"
#if defined(FRAMES_ZSTD_STATIC) && !defined(FRAMES_ZSTD_DEF)   /* even after a shared frames.h */
#define FRAMES_ZSTD_DEF FRAMES__STATIC_DEF
#elif !defined(FRAMES_ZSTD_DEF)
#define FRAMES_ZSTD_DEF FRAMES_DEF
#endif

#ifdef FRAMES_NO_STDIO
#error "frames_zstd.h needs the C library (stdio for messages) and libzstd: not for FRAMES_NO_STDIO"
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ======================================================================================
   Format constants, options, information
   ====================================================================================== */

#define FRAMES_ZSTD_FRAME_MAGIC 0xFD2FB528u      /* a zstd frame */
#define FRAMES_ZSTD_SKIPPABLE_MAGIC 0x184D2A50u  /* ..0x184D2A5F: skippable frames */
#define FRAMES_ZSTD_SEEK_TABLE_MAGIC 0x184D2A5Eu /* the skippable frame of the seek table */
#define FRAMES_ZSTD_SEEKABLE_MAGIC 0x8F92EAB1u   /* last 4 bytes of the seek table */
#define FRAMES_ZSTD_FOOTER_SIZE 9u
#define FRAMES_ZSTD_HEADER_FRAME_SIZE 57u        /* zstd frame holding the raw 48-byte header */
#define FRAMES_ZSTD_HEADER_AT 9u                 /* file offset of the header's first byte */
#define FRAMES_ZSTD_DEFAULT_LEVEL 3
#define FRAMES_ZSTD_DEFAULT_CHUNK ((uint64_t)1 << 20)

#define FRAMES_ZSTD_IGNORE_SEEK_TABLE 1u  /* reader: walk the zstd frames */
#define FRAMES_ZSTD_NO_READAHEAD 2u       /* reader: no thread decompressing the next chunk
                                             while the current one is read */

typedef struct frames_zstd_options {
    int level;                /* compression level (default 3; 0 = default) */
    uint64_t chunk_size;      /* uncompressed bytes per chunk (default 1 MiB) */
    uint64_t frames_per_toc;  /* the trace's m: chunks end on TOC block starts (10000) */
    int threads;              /* writer: 1 = compress inline; N > 1 = N-1 compression threads
                                 beside the writer's (default 2, at most 1 + 16). The bytes
                                 written are the same whatever the number. */
    int checksum;             /* zstd content checksum in every chunk (default 1) */
    uint64_t max_chunk;       /* reader: largest chunk accepted, bytes (default 256 MiB) */
    uint32_t flags;           /* FRAMES_ZSTD_* */
    void *alloc_ctx;          /* passed to FRAMES_MALLOC & co (libzstd allocates its own) */
} frames_zstd_options;

FRAMES_ZSTD_DEF void frames_zstd_options_default(frames_zstd_options *o);

typedef struct frames_zstd_chunk {
    uint64_t offset;          /* file offset of its zstd frame */
    uint64_t csize;           /* compressed bytes */
    uint64_t uoffset;         /* offset of its first byte in the uncompressed trace */
    uint64_t usize;           /* uncompressed bytes */
    uint32_t checksum;        /* the seek table's checksum (low 32 bits of the XXH64 of the
                                 uncompressed bytes), checked when the chunk is decompressed;
                                 valid when frames_zstd_info.seek_checksums is set and the
                                 table is used */
} frames_zstd_chunk;

#define FRAMES_ZSTD_MAX_WARNINGS 4
typedef struct frames_zstd_info {
    uint64_t chunks;          /* zstd frames holding trace bytes */
    uint64_t compressed_size; /* file size */
    uint64_t size;            /* uncompressed trace bytes (recoverable ones when cut) */
    uint64_t largest_chunk;   /* uncompressed bytes of the largest chunk */
    int seek_table;           /* a seek table is present */
    int seek_table_used;      /* ... and agrees with the frames (else they were walked) */
    int seek_checksums;       /* its entries carry checksums (checked on every decompression
                                 when the table is used) */
    int cut;                  /* the file ends inside a zstd frame (a writer died) */
    uint64_t cut_offset;      /* file offset of that frame */
    uint32_t nwarnings;
    char warnings[FRAMES_ZSTD_MAX_WARNINGS][200];
} frames_zstd_info;

/* 1 if the bytes start like a zstd stream (a zstd or skippable frame magic), else 0. */
FRAMES_ZSTD_DEF int frames_zstd_is_compressed(const void *p, size_t n);

/* ======================================================================================
   Chunk map: where each chunk is, from the seek table or by walking the zstd frames
   ====================================================================================== */

typedef struct frames_zstd_map frames_zstd_map;

/* Map a compressed file held in memory (data must outlive the map). A seek table that
   disagrees with the frames is reported (a warning) and the frames are walked instead;
   a last frame cut short is decompressed as far as it goes. Fails on a file that is not
   zstd, or on a chunk larger than max_chunk. */
FRAMES_ZSTD_DEF int frames_zstd_map_open(frames_zstd_map **m, const void *data, size_t size,
                                    const frames_zstd_options *o, frames_error *err);
FRAMES_ZSTD_DEF void frames_zstd_map_close(frames_zstd_map *m);
FRAMES_ZSTD_DEF const frames_zstd_info *frames_zstd_map_info_get(const frames_zstd_map *m);
FRAMES_ZSTD_DEF const frames_zstd_chunk *frames_zstd_map_chunk_at(const frames_zstd_map *m, uint64_t i);
/* Index of the chunk holding uncompressed offset off (chunks - 1 past the end). */
FRAMES_ZSTD_DEF uint64_t frames_zstd_map_find(const frames_zstd_map *m, uint64_t off);
/* Bytes decompressed so far by every reader state of the map (random access figures);
   a chunk decompressed ahead counts when its cursor takes it. */
FRAMES_ZSTD_DEF uint64_t frames_zstd_map_decompressed(const frames_zstd_map *m);

/* ======================================================================================
   Reading
   ====================================================================================== */

/* A frames_reader over a compressed trace in memory (data must outlive the reader).
   zinfo (may be NULL) receives the chunk information and warnings. */
FRAMES_ZSTD_DEF int frames_zstd_reader_open_memory(frames_reader **r, const void *data, size_t size,
                                              const frames_reader_options *ro,
                                              const frames_zstd_options *zo,
                                              frames_zstd_info *zinfo, frames_error *err);
#ifndef FRAMES_NO_POSIX
/* Any trace by path: a compressed regular file (also "-" redirected from one) is mapped
   and read chunk by chunk, a plain one opened by frames_reader_open_path. A pipe, FIFO or
   terminal ("-" too) is streamed, forward only, through a streaming decompressor when its
   first bytes are zstd's. zinfo->chunks is 0 for plain and streamed traces. */
FRAMES_ZSTD_DEF int frames_zstd_reader_open_path(frames_reader **r, const char *path,
                                            const frames_reader_options *ro,
                                            const frames_zstd_options *zo,
                                            frames_zstd_info *zinfo, frames_error *err);
#endif
/* The chunk map of a reader opened by the functions above, or NULL (plain or streamed
   trace). Valid until the reader is closed. */
FRAMES_ZSTD_DEF const frames_zstd_map *frames_zstd_reader_map(frames_reader *r);

/* Frame ranges for processing a compressed trace in parallel (frames split): at most
   `chunks` half-open ranges [bounds[i], bounds[i+1]) covering the n frames, each starting
   where a chunk starts, so that a worker decompresses only its own chunks. bounds holds
   chunks + 1 entries. Returns the number of ranges, or 0 when the trace's TOC does not
   show where its chunks start (then split on TOC entries as for plain traces). */
FRAMES_ZSTD_DEF uint64_t frames_zstd_split_ranges(frames_reader *r, uint64_t chunks, uint64_t *bounds);

/* ======================================================================================
   Writing
   ====================================================================================== */

typedef struct frames_zstd_sink frames_zstd_sink;

/* A compressing sink over `down` (which it closes when closed). frames_zstd_sink_get
   gives the frames_sink to hand to frames_writer_open: its close writes the last chunk
   and the seek table and frees zs. Patching is possible when `down` can patch. */
FRAMES_ZSTD_DEF int frames_zstd_sink_open(frames_zstd_sink **zs, const frames_sink *down,
                                     const frames_zstd_options *o, frames_error *err);
FRAMES_ZSTD_DEF frames_sink frames_zstd_sink_get(frames_zstd_sink *zs);
/* Close without a frames_writer (e.g. after frames_zstd_compress_fd): same as the sink's
   close. Returns 0 or a negative code (err filled). */
FRAMES_ZSTD_DEF int frames_zstd_sink_close(frames_zstd_sink *zs, frames_error *err);

#ifndef FRAMES_NO_POSIX
/* A writer whose output is a compressed trace at path ("-": standard output, which
   cannot be patched: the trace stays unfinished, as for plain traces). zo->frames_per_toc
   is taken from wo. */
FRAMES_ZSTD_DEF int frames_zstd_writer_open_path(frames_writer **w, const char *path,
                                            const frames_writer_options *wo,
                                            const frames_zstd_options *zo,
                                            const frames_meta *meta, frames_error *err);
#endif

/* ======================================================================================
   Converting
   ====================================================================================== */

#ifndef FRAMES_NO_POSIX
/* Decompress every zstd frame of in_fd to out_fd, as `zstd -d` does (skippable frames
   skipped). *cut is set when the input ends inside a frame (what came before is written).
   Returns 0 or a negative code (FRAMES_E_FORMAT for an empty input, as zstd -d). */
FRAMES_ZSTD_DEF int frames_zstd_decompress_fd(int in_fd, int out_fd, int *cut, frames_error *err);
/* Copy the bytes of a trace read from in_fd (plain or compressed) into a compressed
   sink, byte for byte, chunked on records and TOC blocks. Bytes that do not start with
   the frames magic number (an empty input, random bytes) are FRAMES_E_FORMAT. */
FRAMES_ZSTD_DEF int frames_zstd_compress_fd(int in_fd, frames_zstd_sink *zs, frames_error *err);
#endif

#ifdef __cplusplus
}
#endif
#endif /* FRAMES_ZSTD_H_INCLUDED */

/* ======================================================================================
   IMPLEMENTATION
   ====================================================================================== */
#if defined(FRAMES_ZSTD_IMPLEMENTATION) || defined(FRAMES_ALL_IMPLEMENTATION)
#ifndef FRAMES_ZSTD_IMPLEMENTATION_INCLUDED
#define FRAMES_ZSTD_IMPLEMENTATION_INCLUDED

#if !defined(FRAMES_ZSTD_NO_THREADS) && defined(FRAMES_NO_POSIX)
#define FRAMES_ZSTD_NO_THREADS
#endif
#ifndef FRAMES_ZSTD_NO_THREADS
#define FRAMES__WANT_WORKER    /* the read-ahead thread */
#endif
#define FRAMES__WANT_HELPERS   /* frames.h's shared private helpers: fail, le loads */
#include "frames.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>
#ifndef FRAMES_NO_POSIX
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#endif
#ifndef FRAMES_ZSTD_NO_THREADS
#include <pthread.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* --------------------------------------------------------------------------------------
   helpers
   -------------------------------------------------------------------------------------- */

static void frames__zstd_warn(frames_zstd_info *in, const char *fmt, ...) FRAMES__PRINTF(2, 3);
static void frames__zstd_warn(frames_zstd_info *in, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    FRAMES__WARN_ADD(in->warnings, in->nwarnings, fmt, ap);   /* a full list drops it */
    va_end(ap);
}

FRAMES_ZSTD_DEF void frames_zstd_options_default(frames_zstd_options *o) {
    memset(o, 0, sizeof *o);
    o->level = FRAMES_ZSTD_DEFAULT_LEVEL;
    o->chunk_size = FRAMES_ZSTD_DEFAULT_CHUNK;
    o->frames_per_toc = FRAMES_DEFAULT_FRAMES_PER_TOC;
    o->threads = 2;
    o->checksum = 1;
    o->max_chunk = (uint64_t)256 << 20;
}

/* Options with zero fields replaced by their defaults. */
static frames_zstd_options frames__zstd_opts(const frames_zstd_options *o) {
    frames_zstd_options d, r;
    frames_zstd_options_default(&d);
    if (!o) return d;
    r = *o;
    if (r.level == 0) r.level = d.level;
    if (r.chunk_size == 0) r.chunk_size = d.chunk_size;
    if (r.frames_per_toc == 0) r.frames_per_toc = d.frames_per_toc;
    if (r.threads == 0) r.threads = d.threads;
    if (r.max_chunk == 0) r.max_chunk = d.max_chunk;
    return r;
}

FRAMES_ZSTD_DEF int frames_zstd_is_compressed(const void *p, size_t n) {
    uint32_t magic;
    if (n < 4) return 0;
    magic = frames__le32((const uint8_t *)p);
    return magic == FRAMES_ZSTD_FRAME_MAGIC ||
           (magic & 0xFFFFFFF0u) == FRAMES_ZSTD_SKIPPABLE_MAGIC;
}

/* --------------------------------------------------------------------------------------
   chunk map
   -------------------------------------------------------------------------------------- */

/* XXH64 (seed 0), as the zstd seekable format's checksums use it (the low 32 bits).
   Written from the algorithm's description: five 64-bit primes, four lanes over 32-byte
   stripes, then 8-, 4- and 1-byte tails and a final avalanche. */
#define FRAMES__XXP1 0x9E3779B185EBCA87ull
#define FRAMES__XXP2 0xC2B2AE3D27D4EB4Full
#define FRAMES__XXP3 0x165667B19E3779F9ull
#define FRAMES__XXP4 0x85EBCA77C2B2AE63ull
#define FRAMES__XXP5 0x27D4EB2F165667C5ull

static uint64_t frames__xx_rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

static uint64_t frames__xx_round(uint64_t acc, uint64_t lane) {
    return frames__xx_rotl(acc + lane * FRAMES__XXP2, 31) * FRAMES__XXP1;
}

static uint64_t frames__xx_merge(uint64_t acc, uint64_t v) {
    return (acc ^ frames__xx_round(0, v)) * FRAMES__XXP1 + FRAMES__XXP4;
}

static uint64_t frames__xxh64(const uint8_t *p, size_t n) {
    const uint8_t *end = p + n;
    uint64_t h;
    if (n >= 32) {
        uint64_t v1 = FRAMES__XXP1 + FRAMES__XXP2, v2 = FRAMES__XXP2, v3 = 0, v4 = 0 - FRAMES__XXP1;
        for (; end - p >= 32; p += 32) {
            v1 = frames__xx_round(v1, frames__le64(p));
            v2 = frames__xx_round(v2, frames__le64(p + 8));
            v3 = frames__xx_round(v3, frames__le64(p + 16));
            v4 = frames__xx_round(v4, frames__le64(p + 24));
        }
        h = frames__xx_rotl(v1, 1) + frames__xx_rotl(v2, 7) + frames__xx_rotl(v3, 12) +
            frames__xx_rotl(v4, 18);
        h = frames__xx_merge(frames__xx_merge(frames__xx_merge(frames__xx_merge(h, v1), v2), v3), v4);
    } else {
        h = FRAMES__XXP5;
    }
    h += (uint64_t)n;
    for (; end - p >= 8; p += 8)
        h = frames__xx_rotl(h ^ frames__xx_round(0, frames__le64(p)), 27) * FRAMES__XXP1 + FRAMES__XXP4;
    if (end - p >= 4) {
        h = frames__xx_rotl(h ^ (uint64_t)frames__le32(p) * FRAMES__XXP1, 23) * FRAMES__XXP2 + FRAMES__XXP3;
        p += 4;
    }
    for (; p < end; p++) h = frames__xx_rotl(h ^ (uint64_t)*p * FRAMES__XXP5, 11) * FRAMES__XXP1;
    h ^= h >> 33;
    h *= FRAMES__XXP2;
    h ^= h >> 29;
    h *= FRAMES__XXP3;
    return h ^ (h >> 32);
}

struct frames_zstd_map {
    const uint8_t *z;
    uint64_t zsize;
    frames_zstd_chunk *chunks;
    uint64_t nchunks;
    size_t cap;
    uint64_t cut_chunk;         /* index of a chunk cut short, or UINT64_MAX */
    frames_zstd_options opt;
    frames_zstd_info info;
    uint64_t decompressed;      /* bytes decompressed by all states (atomic where possible) */
    /* owned input (reader by path) */
    void *owned;
    size_t owned_len;
};

static int frames__zstd_push(frames_zstd_map *m, uint64_t off, uint64_t csize, uint64_t usize,
                             frames_error *err) {
    frames_zstd_chunk *c;
    if (m->nchunks >= SIZE_MAX / sizeof *c ||
        FRAMES__GROW(m->chunks, m->cap, (size_t)m->nchunks + 1, m->opt.alloc_ctx) < 0)
        return frames__fail(err, FRAMES_E_NOMEM, off, FRAMES_NO_POS, "out of memory");
    if (usize > m->opt.max_chunk)
        return frames__fail(err, FRAMES_E_LIMIT, off, FRAMES_NO_POS,
                                 "zstd frame at file offset 0x%llx holds %llu bytes, more than the "
                                 "limit of %llu for one chunk (recompress it in smaller chunks)",
                                 (unsigned long long)off, (unsigned long long)usize,
                                 (unsigned long long)m->opt.max_chunk);
    c = &m->chunks[m->nchunks++];
    c->offset = off;
    c->csize = csize;
    c->uoffset = m->info.size;
    c->usize = usize;
    c->checksum = 0;
    m->info.size += usize;
    if (usize > m->info.largest_chunk) m->info.largest_chunk = usize;
    return FRAMES_OK;
}

/* Decompress src into out (cap bytes; NULL: count only) with a streaming context, up to
   the end of the input or the first error. *produced: bytes that came out; returns 0,
   1 if the input ended inside the frame, or -1 on corrupt data (*why: zstd's reason). */
static int frames__zstd_stream(ZSTD_DCtx *d, const uint8_t *src, size_t n, uint8_t *out,
                               size_t cap, uint64_t limit, uint64_t *produced, const char **why) {
    uint8_t tmp[1 << 16];
    ZSTD_inBuffer in;
    size_t ret = 1;
    *produced = 0;
    *why = "";
    in.src = src;
    in.size = n;
    in.pos = 0;
    ZSTD_DCtx_reset(d, ZSTD_reset_session_only);
    while (ret != 0) {
        ZSTD_outBuffer o;
        size_t before_in = in.pos;
        if (out && *produced < cap) {
            o.dst = out + *produced;
            o.size = cap - (size_t)*produced;
        } else {
            o.dst = tmp;
            o.size = sizeof tmp;
        }
        o.pos = 0;
        ret = ZSTD_decompressStream(d, &o, &in);
        if (ZSTD_isError(ret)) {
            *why = ZSTD_getErrorName(ret);
            return -1;
        }
        if (out && o.dst == tmp && o.pos) {
            *why = "more bytes than its header says";
            return -1;
        }
        *produced += o.pos;
        if (*produced > limit) {
            *why = "more bytes than the chunk limit";
            return -1;
        }
        if (ret == 0) break;            /* frame complete */
        if (in.pos == in.size && o.pos == 0 && in.pos == before_in) return 1; /* cut */
    }
    return 0;
}

/* Forget the chunks pushed so far (a seek table found wrong half way, a new walk). */
static void frames__zstd_chunks_reset(frames_zstd_map *m) {
    m->nchunks = 0;
    m->info.size = 0;
    m->info.largest_chunk = 0;
}

/* Count the bytes a zstd frame without a content size in its header decompresses to, by
   decompressing it (bounded by the chunk limit; *d is created on first use). Returns 0
   (whole), 1 (the input ends inside it), 2 (corrupt: *why says why) with *produced the
   bytes that came out, or FRAMES_E_NOMEM. */
static int frames__zstd_count(frames_zstd_map *m, ZSTD_DCtx **d, const uint8_t *p, size_t n,
                              uint64_t *produced, const char **why) {
    int st;
    *produced = 0;
    *why = "";
    if (!*d && !(*d = ZSTD_createDCtx())) return FRAMES_E_NOMEM;
    st = frames__zstd_stream(*d, p, n, NULL, 0, m->opt.max_chunk, produced, why);
    return st < 0 ? 2 : st;
}

/* Walk the frames from the start: a zstd frame is a chunk, skippable frames (the seek
   table among them) are skipped, a frame cut short ends the walk. */
static int frames__zstd_walk(frames_zstd_map *m, frames_error *err) {
    uint64_t off = 0;
    ZSTD_DCtx *d = NULL;
    int rc = FRAMES_OK;
    frames__zstd_chunks_reset(m);
    while (off < m->zsize && rc == FRAMES_OK) {
        const uint8_t *p = m->z + off;
        uint64_t rem = m->zsize - off;
        uint32_t magic = rem >= 4 ? frames__le32(p) : 0;
        if ((magic & 0xFFFFFFF0u) == FRAMES_ZSTD_SKIPPABLE_MAGIC && rem >= 8) {
            uint64_t sz = 8 + (uint64_t)frames__le32(p + 4);
            if (sz > rem) {
                frames__zstd_warn(&m->info, "skippable frame at 0x%llx runs past the end of the file",
                                  (unsigned long long)off);
                break;
            }
            off += sz;
            continue;
        }
        if (magic != FRAMES_ZSTD_FRAME_MAGIC) {
            frames__zstd_warn(&m->info, "%llu bytes at file offset 0x%llx are not a zstd frame: ignored",
                              (unsigned long long)rem, (unsigned long long)off);
            break;
        }
        {
            size_t cs = ZSTD_findFrameCompressedSize(p, (size_t)rem);
            unsigned long long us = ZSTD_isError(cs) ? ZSTD_CONTENTSIZE_ERROR
                                                     : ZSTD_getFrameContentSize(p, (size_t)cs);
            if (!ZSTD_isError(cs) && us != ZSTD_CONTENTSIZE_ERROR && us != ZSTD_CONTENTSIZE_UNKNOWN) {
                rc = frames__zstd_push(m, off, cs, us, err);
                off += cs;
                continue;
            }
            /* no size in its header, or cut short / corrupt: decompress to count */
            {
                uint64_t produced;
                const char *why;
                int st = frames__zstd_count(m, &d, p, ZSTD_isError(cs) ? (size_t)rem : cs, &produced, &why);
                if (st < 0) {
                    rc = frames__fail(err, st, off, FRAMES_NO_POS, "out of memory");
                    break;
                }
                if (st == 0 && !ZSTD_isError(cs)) {
                    rc = frames__zstd_push(m, off, cs, produced, err);
                    off += cs;
                    continue;
                }
                if (m->nchunks == 0 && produced == 0) {
                    /* nothing at all decompresses: say why, not that the trace is empty */
                    rc = st == 2 ? frames__fail(err, FRAMES_E_DECODE, off, FRAMES_NO_POS,
                                               "corrupt zstd data at file offset 0x%llx: %s",
                                               (unsigned long long)off, why)
                                : frames__fail(err, FRAMES_E_TRUNCATED, off, FRAMES_NO_POS,
                                               "the file ends inside its first zstd frame, "
                                               "before any byte of the trace");
                    break;
                }
                m->info.cut = 1;
                m->info.cut_offset = off;
                frames__zstd_warn(&m->info, "%s at file offset 0x%llx: %llu bytes of it recovered%s%s",
                                  st == 1 ? "the file ends inside the zstd frame"
                                          : "corrupt zstd frame",
                                  (unsigned long long)off, (unsigned long long)produced,
                                  st == 2 ? " before " : "", st == 2 ? why : "");
                if (produced) {
                    m->cut_chunk = m->nchunks;
                    rc = frames__zstd_push(m, off, rem, produced, err);
                }
                off = m->zsize;
            }
        }
    }
    if (d) ZSTD_freeDCtx(d);
    return rc;
}

static int frames__zstd_seek_table_check(frames_zstd_map *m, uint64_t start, uint64_t n,
                                         uint64_t esize, frames_error *err);

/* Read the seek table at the end of the file, if there is one, and use it when every
   entry matches the frame it describes. Returns 1 if used, 0 if not, <0 on error. */
static int frames__zstd_seek_table(frames_zstd_map *m, frames_error *err) {
    const uint8_t *f;
    uint64_t n, esize, tsize, start;
    uint8_t desc;
    if (m->zsize < 8 + FRAMES_ZSTD_FOOTER_SIZE) return 0;
    f = m->z + m->zsize - FRAMES_ZSTD_FOOTER_SIZE;
    if (frames__le32(f + 5) != FRAMES_ZSTD_SEEKABLE_MAGIC) return 0;
    m->info.seek_table = 1;
    n = frames__le32(f);
    desc = f[4];
    esize = desc & 0x80 ? 12 : 8;
    m->info.seek_checksums = (desc & 0x80) != 0;
    tsize = 8 + n * esize + FRAMES_ZSTD_FOOTER_SIZE;
    if ((desc & 0x7C) || tsize > m->zsize) {
        frames__zstd_warn(&m->info, "seek table footer is malformed (%llu entries, descriptor 0x%02x): "
                          "ignored, the frames were walked", (unsigned long long)n, desc);
        return 0;
    }
    start = m->zsize - tsize;
    if (frames__le32(m->z + start) != FRAMES_ZSTD_SEEK_TABLE_MAGIC ||
        frames__le32(m->z + start + 4) != tsize - 8) {
        frames__zstd_warn(&m->info, "seek table at 0x%llx has no skippable frame header: ignored, "
                          "the frames were walked", (unsigned long long)start);
        return 0;
    }
    return frames__zstd_seek_table_check(m, start, n, esize, err);
}

/* Every entry must describe exactly the zstd frame at its offset: whole, with the number of
   bytes its header says, or that it decompresses to when its header does not say. */
static int frames__zstd_seek_table_check(frames_zstd_map *m, uint64_t start, uint64_t n,
                                         uint64_t esize, frames_error *err) {
    ZSTD_DCtx *d = NULL;
    uint64_t off = 0, i;
    int rc = 1;
    for (i = 0; i < n && rc == 1; i++) {
        const uint8_t *e = m->z + start + 8 + i * esize;
        uint64_t cs = frames__le32(e), us = frames__le32(e + 4), counted = 0;
        unsigned long long fcs;
        const char *bad = NULL, *why;
        int st = 0;
        if (cs > start - off) bad = "runs past the seek table";
        else if (cs < 4 || frames__le32(m->z + off) != FRAMES_ZSTD_FRAME_MAGIC)
            bad = "is not a zstd frame";
        else if ((fcs = ZSTD_getFrameContentSize(m->z + off, (size_t)cs)) == ZSTD_CONTENTSIZE_ERROR)
            bad = "has a bad frame header";
        else if (ZSTD_findFrameCompressedSize(m->z + off, (size_t)cs) != cs)
            bad = "is not one whole zstd frame";
        else if (fcs != ZSTD_CONTENTSIZE_UNKNOWN && fcs != us)
            bad = "holds a different number of bytes";
        else if (fcs == ZSTD_CONTENTSIZE_UNKNOWN &&
                 ((st = frames__zstd_count(m, &d, m->z + off, (size_t)cs, &counted, &why)) != 0 || counted != us))
            bad = "decompresses to a different number of bytes";
        if (st < 0) {
            rc = frames__fail(err, st, off, FRAMES_NO_POS, "out of memory");
        } else if (bad) {
            frames__zstd_warn(&m->info, "seek table disagrees with the frames: entry %llu (file offset "
                              "0x%llx) %s; table ignored, the frames were walked",
                              (unsigned long long)i, (unsigned long long)off, bad);
            rc = 0;
        } else if ((st = frames__zstd_push(m, off, cs, us, err)) < 0) {
            rc = st;   /* out of memory, or a chunk above the limit */
        } else if (esize == 12) {
            m->chunks[m->nchunks - 1].checksum = frames__le32(e + 8);
        }
        off += cs;
    }
    if (d) ZSTD_freeDCtx(d);
    if (rc != 1) {
        frames__zstd_chunks_reset(m);
        return rc;
    }
    if (off != start) {
        frames__zstd_warn(&m->info, "seek table describes %llu bytes of frames, the file has %llu: "
                          "ignored, the frames were walked", (unsigned long long)off,
                          (unsigned long long)start);
        frames__zstd_chunks_reset(m);
        return 0;
    }
    return 1;
}

FRAMES_ZSTD_DEF int frames_zstd_map_open(frames_zstd_map **out, const void *data, size_t size,
                                    const frames_zstd_options *o, frames_error *err) {
    frames_zstd_map *m;
    int rc;
    *out = NULL;
    if (!frames_zstd_is_compressed(data, size))
        return frames__fail(err, FRAMES_E_FORMAT, 0, FRAMES_NO_POS, "not a zstd stream");
    m = (frames_zstd_map *)frames__zalloc(sizeof *m, o ? o->alloc_ctx : NULL);
    if (!m) return frames__fail(err, FRAMES_E_NOMEM, FRAMES_NO_POS, FRAMES_NO_POS, "out of memory");
    m->z = (const uint8_t *)data;
    m->zsize = size;
    m->opt = frames__zstd_opts(o);
    m->cut_chunk = UINT64_MAX;
    m->info.compressed_size = size;
    rc = m->opt.flags & FRAMES_ZSTD_IGNORE_SEEK_TABLE ? 0 : frames__zstd_seek_table(m, err);
    if (rc == 1) m->info.seek_table_used = 1;
    else if (rc == 0) rc = frames__zstd_walk(m, err);
    if (rc < 0) {
        frames_zstd_map_close(m);
        return rc;
    }
    m->info.chunks = m->nchunks;
    *out = m;
    return FRAMES_OK;
}

FRAMES_ZSTD_DEF void frames_zstd_map_close(frames_zstd_map *m) {
    if (!m) return;
    FRAMES_FREE(m->chunks, m->opt.alloc_ctx);
#ifndef FRAMES_NO_POSIX
    if (m->owned) munmap(m->owned, m->owned_len);
#endif
    FRAMES_FREE(m, m->opt.alloc_ctx);
}

FRAMES_ZSTD_DEF const frames_zstd_info *frames_zstd_map_info_get(const frames_zstd_map *m) { return &m->info; }
FRAMES_ZSTD_DEF const frames_zstd_chunk *frames_zstd_map_chunk_at(const frames_zstd_map *m, uint64_t i) {
    return i < m->nchunks ? &m->chunks[i] : NULL;
}
FRAMES_ZSTD_DEF uint64_t frames_zstd_map_decompressed(const frames_zstd_map *m) {
#if defined(__GNUC__) || defined(__clang__)
    return __atomic_load_n(&m->decompressed, __ATOMIC_RELAXED);
#else
    return m->decompressed;
#endif
}

FRAMES_ZSTD_DEF uint64_t frames_zstd_map_find(const frames_zstd_map *m, uint64_t off) {
    uint64_t lo = 0, hi = m->nchunks;
    if (m->nchunks == 0) return 0;
    while (hi - lo > 1) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (m->chunks[mid].uoffset <= off) lo = mid;
        else hi = mid;
    }
    return lo;
}

/* --------------------------------------------------------------------------------------
   reading: source
   -------------------------------------------------------------------------------------- */

/* What one cursor holds: its decompression context and the chunk it has decompressed,
   plus a scratch buffer for the rare record that straddles two chunks (traces not
   written by this library), and the read-ahead below. */
typedef struct frames__zstd_ahead frames__zstd_ahead;
typedef struct frames__zstd_state {
    frames_zstd_map *m;
    ZSTD_DCtx *d;
    uint8_t *buf;
    size_t cap;
    uint64_t chunk;            /* chunk in buf, UINT64_MAX: none */
    uint64_t last;             /* the chunk loaded before it (sequential reading), or UINT64_MAX */
    uint8_t *scratch;
    size_t scap;
    frames__zstd_ahead *ahead; /* NULL until the cursor reads two chunks in a row */
    int no_ahead;              /* FRAMES_ZSTD_NO_READAHEAD, or the thread could not start */
    uint64_t view_end;         /* where the bytes the last view returned go on to */
} frames__zstd_state;

/* How decompressing one chunk went, kept apart from the error message so that the
   read-ahead thread can decompress and the reading thread report (with its frame index). */
typedef struct frames__zstd_outcome {
    int nomem;                 /* no buffer for the chunk */
    uint64_t produced;
    const char *bad;           /* NULL: the chunk is whole */
    char sum[80];              /* the checksum mismatch, when bad points here */
} frames__zstd_outcome;

/* Decompress chunk k into *buf (grown to the chunk's size) with d, checking its size and
   the seek table's checksum. Touches nothing shared but the map, which it only reads. */
static void frames__zstd_decompress_chunk(frames_zstd_map *m, ZSTD_DCtx *d, uint64_t k, uint8_t **buf,
                                          size_t *cap, frames__zstd_outcome *out) {
    const frames_zstd_chunk *c = &m->chunks[k];
    const char *why;
    int st;
    out->nomem = 0;
    out->produced = 0;
    out->bad = NULL;
    if (c->usize > *cap) { /* usize was bounded by max_chunk when the map was built */
        uint8_t *nb = (uint8_t *)FRAMES_REALLOC(*buf, (size_t)c->usize, m->opt.alloc_ctx);
        if (!nb) {
            out->nomem = 1;
            return;
        }
        *buf = nb;
        *cap = (size_t)c->usize;
    }
    st = frames__zstd_stream(d, m->z + c->offset, (size_t)c->csize, *buf, (size_t)c->usize, c->usize,
                             &out->produced, &why);
    if (k == m->cut_chunk && out->produced >= c->usize) st = 0; /* the recoverable part */
    if (st == 0 && out->produced == c->usize && m->info.seek_table_used && m->info.seek_checksums &&
        (uint32_t)frames__xxh64(*buf, (size_t)c->usize) != c->checksum) {
        snprintf(out->sum, sizeof out->sum, "its bytes do not match the seek table's checksum 0x%08x",
                 c->checksum);
        out->bad = out->sum;
    } else if (st != 0 || out->produced != c->usize) {
        out->bad = st == 1 ? "it ends early" : st ? why : "it decompresses to a different size";
    }
}

/* --- read-ahead: while the reading thread decodes chunk k, a second thread decompresses
   chunk k + 1 into a buffer of its own with a context of its own; the reader swaps the
   buffers when it gets there. Started only for a cursor that reads two chunks in a row
   (cursors that seek about never get one), bounded to one chunk ahead, and invisible in
   the results: the same bytes, errors reported at the same frame, the same
   frames_zstd_map_decompressed (a chunk counts when the reader takes it). */
#ifndef FRAMES_ZSTD_NO_THREADS
struct frames__zstd_ahead {
    frames__worker worker;
    frames_zstd_map *m;
    ZSTD_DCtx *d;
    uint8_t *buf;
    size_t cap;
    uint64_t chunk;            /* chunk asked for or held, UINT64_MAX: none */
    uint64_t job;              /* the worker's slot: the chunk it decompresses */
    frames__zstd_outcome out;
};

static int frames__zstd_ahead_run(void *ctx, const void *job) {
    frames__zstd_ahead *a = (frames__zstd_ahead *)ctx;
    frames__zstd_decompress_chunk(a->m, a->d, *(const uint64_t *)job, &a->buf, &a->cap, &a->out);
    return FRAMES_OK;
}

static void frames__zstd_ahead_free(frames__zstd_ahead *a) {
    void *actx = a->m->opt.alloc_ctx;
    ZSTD_freeDCtx(a->d);
    FRAMES_FREE(a->buf, actx);
    FRAMES_FREE(a, actx);
}

/* The thread, or NULL (then the cursor decompresses everything itself). */
static frames__zstd_ahead *frames__zstd_ahead_start(frames_zstd_map *m) {
    frames__zstd_ahead *a = (frames__zstd_ahead *)frames__zalloc(sizeof *a, m->opt.alloc_ctx);
    if (!a) return NULL;
    a->m = m;
    a->chunk = UINT64_MAX;
    if (!(a->d = ZSTD_createDCtx()) ||
        !frames__worker_start(&a->worker, frames__zstd_ahead_run, a, &a->job, sizeof a->job, 1)) {
        frames__zstd_ahead_free(a);
        return NULL;
    }
    return a;
}

static void frames__zstd_ahead_stop(frames__zstd_ahead *a) {
    frames__worker_stop(&a->worker);
    frames__zstd_ahead_free(a);
}

/* Chunk k from the thread into s->buf when it holds it (1), else 0. */
static int frames__zstd_ahead_take(frames__zstd_state *s, uint64_t k, frames__zstd_outcome *out) {
    frames__zstd_ahead *a = s->ahead;
    uint8_t *b;
    size_t cap;
    if (!a || a->chunk != k) return 0; /* a->chunk is only written by this thread */
    frames__worker_wait(&a->worker);
    b = s->buf, cap = s->cap;          /* the buffers change hands */
    s->buf = a->buf, s->cap = a->cap;
    a->buf = b, a->cap = cap;
    *out = a->out;
    if (out->bad == a->out.sum) out->bad = out->sum;
    a->chunk = UINT64_MAX;
    return 1;
}

/* After chunk k was loaded: have the next one decompressed ahead when reading goes on. */
static void frames__zstd_ahead_next(frames__zstd_state *s, uint64_t k) {
    uint64_t next;
    if (s->no_ahead || k + 1 >= s->m->nchunks) return;
    if (!s->ahead) {
        if (s->last == UINT64_MAX || s->last + 1 != k) return; /* not reading in a row (yet) */
        if (!(s->ahead = frames__zstd_ahead_start(s->m))) {
            s->no_ahead = 1;
            return;
        }
    }
    next = k + 1;
    frames__worker_put(&s->ahead->worker, &next);
    s->ahead->chunk = next;
}
#else
struct frames__zstd_ahead {
    int unused;
};
static void frames__zstd_ahead_stop(frames__zstd_ahead *a) { (void)a; }
static int frames__zstd_ahead_take(frames__zstd_state *s, uint64_t k, frames__zstd_outcome *out) {
    (void)s;
    (void)k;
    (void)out;
    return 0;
}
static void frames__zstd_ahead_next(frames__zstd_state *s, uint64_t k) {
    (void)s;
    (void)k;
}
#endif

static void *frames__zstd_state_open(void *ctx) {
    frames_zstd_map *m = (frames_zstd_map *)ctx;
    frames__zstd_state *s = (frames__zstd_state *)frames__zalloc(sizeof *s, m->opt.alloc_ctx);
    if (!s) return NULL;
    s->m = m;
    s->chunk = UINT64_MAX;
    s->last = UINT64_MAX;
    s->no_ahead = (m->opt.flags & FRAMES_ZSTD_NO_READAHEAD) != 0;
    if (!(s->d = ZSTD_createDCtx())) {
        FRAMES_FREE(s, m->opt.alloc_ctx);
        return NULL;
    }
    return s;
}

static void frames__zstd_state_close(void *ctx, void *state) {
    frames__zstd_state *s = (frames__zstd_state *)state;
    (void)ctx;
    if (s->ahead) frames__zstd_ahead_stop(s->ahead);
    ZSTD_freeDCtx(s->d);
    FRAMES_FREE(s->buf, s->m->opt.alloc_ctx);
    FRAMES_FREE(s->scratch, s->m->opt.alloc_ctx);
    FRAMES_FREE(s, s->m->opt.alloc_ctx);
}

static int frames__zstd_load(frames__zstd_state *s, uint64_t k, uint64_t frame, frames_error *err) {
    const frames_zstd_chunk *c = &s->m->chunks[k];
    frames__zstd_outcome out;
    if (s->chunk == k) return FRAMES_OK;
    if (s->chunk != UINT64_MAX) s->last = s->chunk;
    s->chunk = UINT64_MAX;
    if (!frames__zstd_ahead_take(s, k, &out))
        frames__zstd_decompress_chunk(s->m, s->d, k, &s->buf, &s->cap, &out);
    if (out.nomem) return frames__fail(err, FRAMES_E_NOMEM, c->uoffset, frame, "out of memory for a chunk");
#if defined(__GNUC__) || defined(__clang__)
    __atomic_fetch_add(&s->m->decompressed, out.produced, __ATOMIC_RELAXED); /* cursors in threads */
#else
    s->m->decompressed += out.produced;
#endif
    if (out.bad) {
        char first[48] = "";
        if (frame != FRAMES_NO_POS)
            snprintf(first, sizeof first, ", first frame %llu", (unsigned long long)frame);
        /* FRAMES_E_FORMAT, not _DECODE: the reader cannot step over the records of a
           chunk it cannot see, so sequential reading stops here (seek to go on) */
        return frames__fail(err, FRAMES_E_FORMAT, c->uoffset, frame,
                                 "chunk %llu (zstd frame at file offset 0x%llx%s, trace bytes "
                                 "0x%llx-0x%llx) is corrupt: %s",
                                 (unsigned long long)k, (unsigned long long)c->offset, first,
                                 (unsigned long long)c->uoffset,
                                 (unsigned long long)(c->uoffset + c->usize), out.bad);
    }
    s->chunk = k;
    frames__zstd_ahead_next(s, k);
    return FRAMES_OK;
}

static const uint8_t *frames__zstd_view(void *state, uint64_t off, size_t len, uint64_t frame,
                                        frames_error *err) {
    frames__zstd_state *s = (frames__zstd_state *)state;
    frames_zstd_map *m = s->m;
    uint64_t k, done = 0;
    const frames_zstd_chunk *c;
    if (s->chunk != UINT64_MAX) { /* most views fall in the chunk already decompressed */
        c = &m->chunks[s->chunk];
        if (off >= c->uoffset && off + len <= c->uoffset + c->usize) {
            s->view_end = c->uoffset + c->usize;
            return s->buf + (off - c->uoffset);
        }
    }
    k = frames_zstd_map_find(m, off);
    c = &m->chunks[k];
    if (m->nchunks == 0 || off + len > m->info.size) {
        frames__fail(err, FRAMES_E_RANGE, off, frame, "read past the end of the trace");
        return NULL;
    }
    if (off + len <= c->uoffset + c->usize) {
        /* the frame index names the chunk's first frame only when off is its start */
        if (frames__zstd_load(s, k, off == c->uoffset ? frame : FRAMES_NO_POS, err) < 0) {
            if (off != c->uoffset && err) err->frame = frame;
            return NULL;
        }
        s->view_end = c->uoffset + c->usize;
        return s->buf + (off - c->uoffset);
    }
    if (len > s->scap) {
        uint8_t *ns = (uint8_t *)FRAMES_REALLOC(s->scratch, len, m->opt.alloc_ctx);
        if (!ns) {
            frames__fail(err, FRAMES_E_NOMEM, off, frame, "out of memory");
            return NULL;
        }
        s->scratch = ns;
        s->scap = len;
    }
    while (done < len) {
        uint64_t at = off + done, take;
        c = &m->chunks[k];
        if (frames__zstd_load(s, k, FRAMES_NO_POS, err) < 0) return NULL;
        take = c->uoffset + c->usize - at;
        if (take > len - done) take = len - done;
        memcpy(s->scratch + done, s->buf + (at - c->uoffset), (size_t)take);
        done += take;
        k++;
    }
    s->view_end = off + len;   /* the copy ends there */
    return s->scratch;
}

static uint64_t frames__zstd_view_end(void *state) { return ((frames__zstd_state *)state)->view_end; }

static void frames__zstd_source_close(void *ctx) { frames_zstd_map_close((frames_zstd_map *)ctx); }

/* The reader keeps the map as its source ctx; frames_zstd_reader_map finds it again by
   the view function. */
static int frames__zstd_open_map(frames_reader **r, frames_zstd_map *m,
                                 const frames_reader_options *ro, frames_zstd_info *zinfo,
                                 frames_error *err) {
    frames_source src;
    memset(&src, 0, sizeof src);
    if (zinfo) *zinfo = m->info;
    src.ctx = m;
    src.size = m->info.size;
    src.state_open = frames__zstd_state_open;
    src.state_close = frames__zstd_state_close;
    src.view = frames__zstd_view;
    src.close = frames__zstd_source_close;
    src.view_end = frames__zstd_view_end;
    return frames_reader_open_source(r, &src, ro, err);
}

FRAMES_ZSTD_DEF int frames_zstd_reader_open_memory(frames_reader **r, const void *data, size_t size,
                                              const frames_reader_options *ro,
                                              const frames_zstd_options *zo,
                                              frames_zstd_info *zinfo, frames_error *err) {
    frames_zstd_map *m;
    int rc;
    *r = NULL;
    if ((rc = frames_zstd_map_open(&m, data, size, zo, err)) < 0) return rc;
    return frames__zstd_open_map(r, m, ro, zinfo, err);
}

FRAMES_ZSTD_DEF const frames_zstd_map *frames_zstd_reader_map(frames_reader *r) {
    const frames_source *src = r ? frames_reader_source(r) : NULL;
    return src && src->view == frames__zstd_view ? (const frames_zstd_map *)src->ctx : NULL;
}

#ifndef FRAMES_NO_POSIX
/* A pipe, FIFO or terminal: its first bytes say whether it is compressed; the reader then
   streams it, through a streaming decompressor when it is (skippable frames, the seek table
   among them, are passed over by libzstd). Memory: zstd's window, at most max_chunk. */
typedef struct frames__zstd_pipe {
    int fd, own_fd;
    int compressed;
    uint8_t head[18];           /* the bytes read to decide (a zstd frame header at most) */
    size_t nhead;
    ZSTD_DCtx *d;
    uint8_t in[1 << 16];
    ZSTD_inBuffer zin;
    void *actx;
} frames__zstd_pipe;

static long long frames__zstd_pipe_fill(frames__zstd_pipe *p, void *buf, size_t n) {
    if (p->nhead) { /* the bytes read to decide come first */
        size_t k = n < p->nhead ? n : p->nhead;
        memcpy(buf, p->head, k);
        memmove(p->head, p->head + k, p->nhead - k);
        p->nhead -= k;
        return (long long)k;
    }
    for (;;) {
        ssize_t got = read(p->fd, buf, n);
        if (got >= 0) return (long long)got;
        if (errno != EINTR) return -1;
    }
}

static long long frames__zstd_pipe_read(void *ctx, void *buf, size_t n) {
    frames__zstd_pipe *p = (frames__zstd_pipe *)ctx;
    ZSTD_outBuffer out;
    if (!p->compressed) return frames__zstd_pipe_fill(p, buf, n);
    out.dst = buf;
    out.size = n;
    out.pos = 0;
    while (out.pos == 0) {
        size_t rc;
        if (p->zin.pos == p->zin.size) {
            long long got = frames__zstd_pipe_fill(p, p->in, sizeof p->in);
            if (got <= 0) return got; /* end (a cut frame: what came out of it is all) or error */
            p->zin.src = p->in;
            p->zin.size = (size_t)got;
            p->zin.pos = 0;
        }
        rc = ZSTD_decompressStream(p->d, &out, &p->zin);
        if (ZSTD_isError(rc)) {
            errno = EBADMSG; /* the reader says "read failed: Bad message" at the offset */
            return -1;
        }
    }
    return (long long)out.pos;
}

static void frames__zstd_pipe_close(void *ctx) {
    frames__zstd_pipe *p = (frames__zstd_pipe *)ctx;
    if (p->own_fd) close(p->fd);
    ZSTD_freeDCtx(p->d);
    FRAMES_FREE(p, p->actx);
}

/* Read the stream's first bytes into head until it holds n (or the stream ends). */
static void frames__zstd_pipe_head(frames__zstd_pipe *p, size_t n) {
    while (p->nhead < n) {
        ssize_t got = read(p->fd, p->head + p->nhead, n - p->nhead);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) break;
        p->nhead += (size_t)got;
    }
}

/* Decompress the first bytes (a frame header's worth) with a scratch context: the zstd
   error when they are no valid start of a frame, else NULL. */
static const char *frames__zstd_pipe_check_header(frames__zstd_pipe *p, int wlog) {
    ZSTD_DCtx *d = ZSTD_createDCtx();
    ZSTD_inBuffer in;
    ZSTD_outBuffer out;
    uint8_t tmp[64];
    size_t rc;
    if (!d) return NULL;   /* the real context will say what is wrong */
    frames__zstd_pipe_head(p, sizeof p->head);
    in.src = p->head;
    in.size = p->nhead;
    in.pos = 0;
    out.dst = tmp;
    out.size = sizeof tmp;
    out.pos = 0;
    rc = ZSTD_DCtx_setParameter(d, ZSTD_d_windowLogMax, wlog);
    if (!ZSTD_isError(rc)) rc = ZSTD_decompressStream(d, &out, &in);
    ZSTD_freeDCtx(d);
    return ZSTD_isError(rc) ? ZSTD_getErrorName(rc) : NULL;
}

/* Stream fd (closed by the reader when own_fd), decompressing when it starts like zstd. */
static int frames__zstd_open_pipe(frames_reader **r, int fd, int own_fd, const frames_reader_options *ro,
                                  const frames_zstd_options *zo, frames_error *err) {
    frames__zstd_pipe *p = (frames__zstd_pipe *)frames__zalloc(sizeof *p, zo ? zo->alloc_ctx : NULL);
    frames_zstd_options o = frames__zstd_opts(zo);
    frames_io io;
    int wlog = 10;
    if (!p) {
        if (own_fd) close(fd);
        return frames__fail(err, FRAMES_E_NOMEM, FRAMES_NO_POS, FRAMES_NO_POS, "out of memory");
    }
    p->fd = fd;
    p->own_fd = own_fd;
    p->actx = o.alloc_ctx;
    io.ctx = p;
    io.read = frames__zstd_pipe_read;
    io.close = frames__zstd_pipe_close;
    frames__zstd_pipe_head(p, 4);
    p->compressed = frames_zstd_is_compressed(p->head, p->nhead);
    while (wlog < 31 && ((uint64_t)1 << wlog) < o.max_chunk) wlog++;
    if (p->compressed && (!(p->d = ZSTD_createDCtx()) ||
                          ZSTD_isError(ZSTD_DCtx_setParameter(p->d, ZSTD_d_windowLogMax, wlog)))) {
        frames__zstd_pipe_close(p);
        return frames__fail(err, FRAMES_E_NOMEM, FRAMES_NO_POS, FRAMES_NO_POS, "out of memory");
    }
    if (p->compressed) {   /* a header that is no zstd frame: say so, as for a file */
        const char *why = frames__zstd_pipe_check_header(p, wlog);
        if (why) {
            frames__zstd_pipe_close(p);
            return frames__fail(err, FRAMES_E_DECODE, 0, FRAMES_NO_POS,
                                "corrupt zstd data at file offset 0x0: %s", why);
        }
    }
    return frames_reader_open_io(r, &io, ro, err);
}

FRAMES_ZSTD_DEF int frames_zstd_reader_open_path(frames_reader **r, const char *path,
                                            const frames_reader_options *ro,
                                            const frames_zstd_options *zo,
                                            frames_zstd_info *zinfo, frames_error *err) {
    struct stat st;
    uint8_t magic[4];
    frames_zstd_map *m;
    void *map;
    int fd, rc;
    int is_stdin = !strcmp(path, "-");
    *r = NULL;
    if (zinfo) memset(zinfo, 0, sizeof *zinfo);
    /* a regular file (standard input redirected from one too) is mapped; a pipe, FIFO or
       terminal is streamed, compressed or not */
    if (!is_stdin && stat(path, &st) != 0) return frames_reader_open_path(r, path, ro, err);
    if (is_stdin) fd = 0;
    else do fd = open(path, O_RDONLY); while (fd < 0 && errno == EINTR);
    if (fd < 0)
        return frames__fail(err, FRAMES_E_IO, FRAMES_NO_POS, FRAMES_NO_POS, "cannot open %s: %s",
                                 path, strerror(errno));
    if (fstat(fd, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
        return frames__zstd_open_pipe(r, fd, !is_stdin, ro, zo, err);
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < 4 ||
        pread(fd, magic, 4, 0) != 4 || !frames_zstd_is_compressed(magic, 4) ||
        (uint64_t)st.st_size > (uint64_t)SIZE_MAX) {
        if (!is_stdin) close(fd);
        return frames_reader_open_path(r, path, ro, err);
    }
    map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (!is_stdin) close(fd);
    if (map == MAP_FAILED)
        return frames__fail(err, FRAMES_E_IO, FRAMES_NO_POS, FRAMES_NO_POS, "cannot map %s: %s",
                                 path, strerror(errno));
    if ((rc = frames_zstd_map_open(&m, map, (size_t)st.st_size, zo, err)) < 0) {
        munmap(map, (size_t)st.st_size);
        return rc;
    }
    m->owned = map;
    m->owned_len = (size_t)st.st_size;
    return frames__zstd_open_map(r, m, ro, zinfo, err);
}

#endif /* FRAMES_NO_POSIX: reader by path */

FRAMES_ZSTD_DEF uint64_t frames_zstd_split_ranges(frames_reader *r, uint64_t chunks, uint64_t *bounds) {
    const frames_zstd_map *m = frames_zstd_reader_map(r);
    frames_reader_info st;
    frames__zstd_state *s;
    const uint8_t *toc;
    uint64_t n, per, T, words, *cand = NULL, ncand = 0, b, i, k = 0;
    if (!m || chunks == 0 || frames_reader_info_get(r, &st) < 0 || !st.toc_used || !st.count_known) return 0;
    if (st.toc != FRAMES_TOC_LIBTRACE && st.toc != FRAMES_TOC_CEIL && st.toc != FRAMES_TOC_TRACEWRAP &&
        st.toc != FRAMES_TOC_CEIL_ZERO)
        return 0;
    n = st.nframes;
    per = st.frames_per_toc;
    T = st.header.toc_offset;
    words = st.toc_entries;
    if (n == 0 || per == 0 || T + 8 + words * 8 > m->info.size) return 0;
    if (!(s = (frames__zstd_state *)frames__zstd_state_open((void *)m))) return 0;
    if (!(toc = words ? frames__zstd_view(s, T + 8, (size_t)(words * 8), FRAMES_NO_POS, NULL)
                      : (const uint8_t *)"") ||
        !(cand = (uint64_t *)FRAMES_MALLOC((size_t)(words + 1) * sizeof *cand, m->opt.alloc_ctx))) {
        frames__zstd_state_close((void *)m, s);
        return 0;
    }
    cand[ncand++] = 0;
    /* entry b is the start of block b + 1 in the conventions above */
    for (b = 0; b < words && (b + 1) * per < n; b++) {
        uint64_t off = frames__le64(toc + 8 * b);
        const frames_zstd_chunk *c = &m->chunks[frames_zstd_map_find(m, off)];
        if (c->uoffset == off) cand[ncand++] = (b + 1) * per;
    }
    frames__zstd_state_close((void *)m, s);
    /* range i starts at the candidate nearest to i * n / chunks, keeping them increasing */
    bounds[k++] = 0;
    for (i = 1; i < chunks; i++) {
        uint64_t want = n / chunks * i + n % chunks * i / chunks, lo = 0, hi = ncand, pick;
        while (hi - lo > 1) {
            uint64_t mid = lo + (hi - lo) / 2;
            if (cand[mid] <= want) lo = mid;
            else hi = mid;
        }
        pick = lo + 1 < ncand && cand[lo + 1] - want < want - cand[lo] ? cand[lo + 1] : cand[lo];
        if (pick > bounds[k - 1] && pick < n) bounds[k++] = pick;
    }
    bounds[k] = n;
    FRAMES_FREE(cand, m->opt.alloc_ctx);
    return k;
}

/* --------------------------------------------------------------------------------------
   writing: sink
   -------------------------------------------------------------------------------------- */

#define FRAMES__ZSTD_MAX_WORKERS 16
enum { FRAMES__ZSTD_FREE, FRAMES__ZSTD_QUEUED, FRAMES__ZSTD_BUSY, FRAMES__ZSTD_DONE };

/* A chunk handed to the compression threads. Only the writer's thread writes to the sink
   below (in chunk order), so the threads share nothing but the job states. */
typedef struct frames__zstd_job {
    uint8_t *buf;               /* the uncompressed chunk */
    size_t len, cap;
    uint8_t *out;               /* its zstd frame */
    size_t outcap, clen;
    uint64_t seq;
    int state;                  /* FRAMES__ZSTD_FREE ... _DONE */
    const char *error;          /* set by the compression thread: zstd's message */
} frames__zstd_job;

/* The sink takes the trace's bytes in whatever pieces the writer hands over, finds the
   record boundaries by their size prefixes (header, meta, frames), and cuts a chunk at
   the first boundary after chunk_size bytes that starts a TOC block (every m frames), or
   at any boundary once a chunk has grown to four times chunk_size (m too large). The
   bytes after the last frame (the TOC) go into the last chunk. */
struct frames_zstd_sink {
    frames_sink down;
    frames_zstd_options opt;
    ZSTD_CCtx *cctx;
    uint8_t *buf;               /* bytes of the chunk being filled, from trace offset start */
    size_t len, cap;
    uint64_t start;
    uint64_t next;              /* trace offset where the record being parsed ends */
    int meta_next;              /* the record ending at next is the meta frame */
    uint64_t frames;            /* frame records ending at or before next */
    uint64_t last_boundary;     /* latest record boundary inside the buffer (0: none) */
    int parsing;                /* 0 once the bytes stop looking like records (the TOC) */
    uint32_t *entries;          /* seek table: compressed, uncompressed size per chunk */
    size_t nentries, entcap;
    int failed;
    frames_error err;
    uint8_t *out;               /* inline compression: the zstd frame of a chunk */
    size_t outcap, clen;
#ifndef FRAMES_ZSTD_NO_THREADS
    int threaded;               /* number of compression threads started (0: inline) */
    pthread_t thread[FRAMES__ZSTD_MAX_WORKERS];
    pthread_mutex_t mu;
    pthread_cond_t cv;          /* a job changed state, or stop */
    frames__zstd_job *jobs;     /* 2 per compression thread */
    size_t njobs;
    uint64_t seq_next;          /* sequence number of the next chunk handed over */
    uint64_t seq_written;       /* chunks before this one are written, in order */
    int stop;
#endif
};

static int frames__zstd_sfail(frames_zstd_sink *zs, int code, const char *what, const char *why) {
    if (!zs->failed) {
        zs->failed = 1;
        frames__fail(&zs->err, code, zs->start, FRAMES_NO_POS, "compressed output: %s%s%s", what,
                          why ? ": " : "", why ? why : "");
    }
    return code;
}

static int frames__zstd_entry(frames_zstd_sink *zs, size_t csize, size_t usize) {
    if (FRAMES__GROW(zs->entries, zs->entcap, zs->nentries + 2, zs->opt.alloc_ctx) < 0)
        return frames__zstd_sfail(zs, FRAMES_E_NOMEM, "out of memory for the seek table", NULL);
    zs->entries[zs->nentries++] = (uint32_t)csize;
    zs->entries[zs->nentries++] = (uint32_t)usize;
    return FRAMES_OK;
}

static const char frames__zstd_oom[] = "out of memory for a chunk";

/* Compress src into *out (grown to the bound). NULL, or zstd's message on failure
   (frames__zstd_oom when memory ran out). */
static const char *frames__zstd_compress(ZSTD_CCtx *c, const uint8_t *src, size_t n, uint8_t **out,
                                         size_t *outcap, size_t *clen, void *actx) {
    size_t bound = ZSTD_compressBound(n), cs;
    if (bound > *outcap) {
        uint8_t *o = (uint8_t *)FRAMES_REALLOC(*out, bound, actx);
        if (!o) return frames__zstd_oom;
        *out = o;
        *outcap = bound;
    }
    cs = ZSTD_compress2(c, *out, *outcap, src, n);
    if (ZSTD_isError(cs)) return ZSTD_getErrorName(cs);
    *clen = cs;
    return NULL;
}

static int frames__zstd_cfail(frames_zstd_sink *zs, const char *why) {
    if (why == frames__zstd_oom) return frames__zstd_sfail(zs, FRAMES_E_NOMEM, why, NULL);
    return frames__zstd_sfail(zs, FRAMES_E_IO, "zstd", why);
}

/* Write one compressed chunk to the sink below and note it in the seek table. */
static int frames__zstd_put(frames_zstd_sink *zs, const uint8_t *z, size_t clen, size_t n) {
    if (zs->down.write(zs->down.ctx, z, clen) < 0)
        return frames__zstd_sfail(zs, FRAMES_E_IO, "write failed", strerror(errno));
    return frames__zstd_entry(zs, clen, n);
}

static ZSTD_CCtx *frames__zstd_cctx(const frames_zstd_options *o) {
    ZSTD_CCtx *c = ZSTD_createCCtx();
    if (c && (ZSTD_isError(ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, o->level)) ||
              ZSTD_isError(ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, o->checksum != 0)))) {
        ZSTD_freeCCtx(c);
        c = NULL;
    }
    return c;
}

#ifndef FRAMES_ZSTD_NO_THREADS
/* A compression thread: takes the oldest queued chunk, compresses it with its own context. */
static void *frames__zstd_worker(void *arg) {
    frames_zstd_sink *zs = (frames_zstd_sink *)arg;
    ZSTD_CCtx *c = frames__zstd_cctx(&zs->opt);
    pthread_mutex_lock(&zs->mu);
    for (;;) {
        frames__zstd_job *job = NULL;
        size_t i;
        for (i = 0; i < zs->njobs; i++)
            if (zs->jobs[i].state == FRAMES__ZSTD_QUEUED && (!job || zs->jobs[i].seq < job->seq))
                job = &zs->jobs[i];
        if (!job) {
            if (zs->stop) break;
            pthread_cond_wait(&zs->cv, &zs->mu);
            continue;
        }
        job->state = FRAMES__ZSTD_BUSY;
        pthread_mutex_unlock(&zs->mu);
        job->error = c ? frames__zstd_compress(c, job->buf, job->len, &job->out, &job->outcap, &job->clen,
                                               zs->opt.alloc_ctx)
                       : frames__zstd_oom;
        pthread_mutex_lock(&zs->mu);
        job->state = FRAMES__ZSTD_DONE;
        pthread_cond_broadcast(&zs->cv);
    }
    pthread_mutex_unlock(&zs->mu);
    ZSTD_freeCCtx(c);
    return NULL;
}

/* With the lock held: write every compressed chunk that is next in order, then return a
   free job (NULL if none and !want). The lock is let go while writing. */
static frames__zstd_job *frames__zstd_collect(frames_zstd_sink *zs, int want) {
    for (;;) {
        frames__zstd_job *next = NULL, *free_job = NULL;
        size_t i;
        for (i = 0; i < zs->njobs; i++) {
            frames__zstd_job *j = &zs->jobs[i];
            if (j->state == FRAMES__ZSTD_DONE && j->seq == zs->seq_written) next = j;
            if (j->state == FRAMES__ZSTD_FREE && !free_job) free_job = j;
        }
        if (next) {
            pthread_mutex_unlock(&zs->mu);
            if (!zs->failed && next->error) frames__zstd_cfail(zs, next->error);
            else if (!zs->failed) frames__zstd_put(zs, next->out, next->clen, next->len);
            pthread_mutex_lock(&zs->mu);
            next->state = FRAMES__ZSTD_FREE;
            zs->seq_written++;
            continue;
        }
        if (free_job || !want) return free_job;
        pthread_cond_wait(&zs->cv, &zs->mu);
    }
}
#endif

/* Wait until every chunk handed to the compression threads is written. */
static void frames__zstd_drain(frames_zstd_sink *zs) {
#ifndef FRAMES_ZSTD_NO_THREADS
    if (!zs->threaded) return;
    pthread_mutex_lock(&zs->mu);
    for (;;) {
        frames__zstd_collect(zs, 0);
        if (zs->seq_written == zs->seq_next) break;
        pthread_cond_wait(&zs->cv, &zs->mu);
    }
    pthread_mutex_unlock(&zs->mu);
#else
    (void)zs;
#endif
}

/* Compress the first n buffered bytes as a chunk; the rest stays for the next one. */
static int frames__zstd_cut(frames_zstd_sink *zs, size_t n) {
    const char *why;
    if (n == 0) return FRAMES_OK;
#ifndef FRAMES_ZSTD_NO_THREADS
    if (zs->threaded) {
        frames__zstd_job *job;
        uint8_t *t;
        size_t tcap, rest = zs->len - n;
        pthread_mutex_lock(&zs->mu);
        job = frames__zstd_collect(zs, 1);
        pthread_mutex_unlock(&zs->mu);
        if (zs->failed) return zs->err.code;
        /* the filled buffer becomes the job's; the bytes after the cut move to the job's old one */
        if (job->cap < rest + zs->opt.chunk_size) {
            uint8_t *nb = (uint8_t *)FRAMES_REALLOC(job->buf, rest + (size_t)zs->opt.chunk_size,
                                                    zs->opt.alloc_ctx);
            if (!nb) return frames__zstd_sfail(zs, FRAMES_E_NOMEM, "out of memory for a chunk", NULL);
            job->buf = nb;
            job->cap = rest + (size_t)zs->opt.chunk_size;
        }
        memcpy(job->buf, zs->buf + n, rest);
        t = job->buf;
        tcap = job->cap;
        job->buf = zs->buf;
        job->cap = zs->cap;
        job->len = n;
        zs->buf = t;
        zs->cap = tcap;
        pthread_mutex_lock(&zs->mu);
        job->seq = zs->seq_next++;
        job->state = FRAMES__ZSTD_QUEUED;
        pthread_cond_broadcast(&zs->cv);
        pthread_mutex_unlock(&zs->mu);
        zs->len = rest;
        zs->start += n;
        return FRAMES_OK;
    }
#endif
    why = frames__zstd_compress(zs->cctx, zs->buf, n, &zs->out, &zs->outcap, &zs->clen, zs->opt.alloc_ctx);
    if (why) return frames__zstd_cfail(zs, why);
    if (frames__zstd_put(zs, zs->out, zs->clen, n) < 0) return zs->err.code;
    memmove(zs->buf, zs->buf + n, zs->len - n);
    zs->len -= n;
    zs->start += n;
    return FRAMES_OK;
}

/* The 48-byte header alone in a zstd frame of one raw block, so that n and T can be
   patched in place: magic, descriptor 0x20 (single segment, 1-byte content size, no
   checksum), content size 48, block header (last, raw, 48 bytes), the header. */
static int frames__zstd_header_frame(frames_zstd_sink *zs) {
    uint8_t f[FRAMES_ZSTD_HEADER_FRAME_SIZE];
    uint32_t bh = 1u | (uint32_t)FRAMES_HEADER_SIZE << 3;
    frames__put_le32(f, FRAMES_ZSTD_FRAME_MAGIC);
    f[4] = 0x20;
    f[5] = (uint8_t)FRAMES_HEADER_SIZE;
    f[6] = (uint8_t)bh;
    f[7] = (uint8_t)(bh >> 8);
    f[8] = (uint8_t)(bh >> 16);
    memcpy(f + FRAMES_ZSTD_HEADER_AT, zs->buf, FRAMES_HEADER_SIZE);
    if (zs->down.write(zs->down.ctx, f, sizeof f) < 0)
        return frames__zstd_sfail(zs, FRAMES_E_IO, "write failed", strerror(errno));
    if (frames__zstd_entry(zs, sizeof f, FRAMES_HEADER_SIZE) < 0) return zs->err.code;
    memmove(zs->buf, zs->buf + FRAMES_HEADER_SIZE, zs->len - FRAMES_HEADER_SIZE);
    zs->len -= FRAMES_HEADER_SIZE;
    zs->start = FRAMES_HEADER_SIZE;
    return FRAMES_OK;
}

/* Walk the record boundaries the buffer now covers; cut where the rule says. */
static int frames__zstd_parse(frames_zstd_sink *zs) {
    while (zs->parsing) {
        uint64_t end = zs->start + zs->len, size, here;
        if (zs->next > end) return FRAMES_OK;          /* the record is not complete yet */
        here = zs->next;                                /* a boundary */
        if (here > zs->start) zs->last_boundary = here;
        if (here - zs->start >= zs->opt.chunk_size &&
            (zs->frames % zs->opt.frames_per_toc == 0 || here - zs->start >= 4 * zs->opt.chunk_size)) {
            if (frames__zstd_cut(zs, (size_t)(here - zs->start)) < 0) return zs->err.code;
            zs->last_boundary = 0;
        }
        if (here + 8 > zs->start + zs->len) return FRAMES_OK; /* size word not here yet */
        size = frames__le64(zs->buf + (here - zs->start));
        if (size > ((uint64_t)1 << 32)) { /* no record: the TOC (m, entries) or foreign bytes */
            zs->parsing = 0;
            return FRAMES_OK;
        }
        zs->next = here + 8 + size;
        if (zs->meta_next) zs->meta_next = 0;
        else zs->frames++;
    }
    return FRAMES_OK;
}

static int frames__zstd_write(void *ctx, const void *data, size_t n) {
    frames_zstd_sink *zs = (frames_zstd_sink *)ctx;
    const uint8_t *p = (const uint8_t *)data;
    if (zs->failed) return zs->err.code;
    while (n > 0) {
        size_t take = n;
        if (zs->start == 0 && zs->len < FRAMES_HEADER_SIZE && take > FRAMES_HEADER_SIZE - zs->len)
            take = FRAMES_HEADER_SIZE - zs->len; /* the header goes out on its own */
        if (zs->len + take > zs->cap) {
            size_t ncap = zs->cap ? zs->cap : (size_t)zs->opt.chunk_size + 65536;
            uint8_t *nb;
            while (ncap < zs->len + take) ncap *= 2;
            if (!(nb = (uint8_t *)FRAMES_REALLOC(zs->buf, ncap, zs->opt.alloc_ctx)))
                return frames__zstd_sfail(zs, FRAMES_E_NOMEM, "out of memory for a chunk", NULL);
            zs->buf = nb;
            zs->cap = ncap;
        }
        memcpy(zs->buf + zs->len, p, take);
        zs->len += take;
        p += take;
        n -= take;
        if (zs->start == 0) {
            if (zs->len < FRAMES_HEADER_SIZE) continue;
            {   /* version 1 (word at offset 8) has no meta frame */
                uint64_t version = frames__le64(zs->buf + 8);
                zs->meta_next = version != 1;
            }
            if (frames__zstd_header_frame(zs) < 0) return zs->err.code;
            zs->next = FRAMES_HEADER_SIZE;
        }
        if (frames__zstd_parse(zs) < 0) return zs->err.code;
    }
    return FRAMES_OK;
}

/* Everything buffered up to the last record boundary becomes a chunk (all of it at the
   end), so that what was flushed is a readable compressed stream. */
static int frames__zstd_flush_to(frames_zstd_sink *zs, int all) {
    size_t n = all || zs->start + zs->len == zs->next || !zs->parsing ? zs->len
             : zs->last_boundary > zs->start ? (size_t)(zs->last_boundary - zs->start) : 0;
    if (zs->start == 0) n = 0; /* not even a header yet */
    if (frames__zstd_cut(zs, n) < 0) return zs->err.code;
    zs->last_boundary = 0;
    frames__zstd_drain(zs);
    return zs->failed ? zs->err.code : FRAMES_OK;
}

static int frames__zstd_flush(void *ctx) {
    frames_zstd_sink *zs = (frames_zstd_sink *)ctx;
    if (zs->failed) return zs->err.code;
    if (frames__zstd_flush_to(zs, 0) < 0) return zs->err.code;
    return zs->down.flush ? zs->down.flush(zs->down.ctx) : FRAMES_OK;
}

static int frames__zstd_patch(void *ctx, uint64_t off, const void *data, size_t n) {
    frames_zstd_sink *zs = (frames_zstd_sink *)ctx;
    if (zs->failed) return zs->err.code;
    if (off >= zs->start && off + n <= zs->start + zs->len) { /* still in the buffer */
        memcpy(zs->buf + (off - zs->start), data, n);
        return FRAMES_OK;
    }
    if (off + n > FRAMES_HEADER_SIZE || zs->start == 0)
        return frames__zstd_sfail(zs, FRAMES_E_UNSUPPORTED, "only the header can be patched", NULL);
    frames__zstd_drain(zs);
    return zs->down.patch(zs->down.ctx, FRAMES_ZSTD_HEADER_AT + off, data, n);
}

static void frames__zstd_sink_free(frames_zstd_sink *zs) {
    void *actx = zs->opt.alloc_ctx;
#ifndef FRAMES_ZSTD_NO_THREADS
    if (zs->threaded) {
        int i;
        pthread_mutex_lock(&zs->mu);
        zs->stop = 1;
        pthread_cond_broadcast(&zs->cv);
        pthread_mutex_unlock(&zs->mu);
        for (i = 0; i < zs->threaded; i++) pthread_join(zs->thread[i], NULL);
        pthread_mutex_destroy(&zs->mu);
        pthread_cond_destroy(&zs->cv);
    }
    if (zs->jobs) {
        size_t i;
        for (i = 0; i < zs->njobs; i++) {
            FRAMES_FREE(zs->jobs[i].buf, actx);
            FRAMES_FREE(zs->jobs[i].out, actx);
        }
        FRAMES_FREE(zs->jobs, actx);
    }
#endif
    ZSTD_freeCCtx(zs->cctx);
    FRAMES_FREE(zs->buf, actx);
    FRAMES_FREE(zs->out, actx);
    FRAMES_FREE(zs->entries, actx);
    FRAMES_FREE(zs, actx);
}

/* The seek table: a skippable frame of one entry per zstd frame, then the footer. */
static int frames__zstd_seek_table_write(frames_zstd_sink *zs) {
    size_t n = zs->nentries / 2, size = 8 + n * 8 + FRAMES_ZSTD_FOOTER_SIZE, i;
    uint8_t *t = (uint8_t *)FRAMES_MALLOC(size, zs->opt.alloc_ctx);
    int rc;
    if (!t) return frames__zstd_sfail(zs, FRAMES_E_NOMEM, "out of memory for the seek table", NULL);
    frames__put_le32(t, FRAMES_ZSTD_SEEK_TABLE_MAGIC);
    frames__put_le32(t + 4, (uint32_t)(size - 8));
    for (i = 0; i < zs->nentries; i++) frames__put_le32(t + 8 + 4 * i, zs->entries[i]);
    frames__put_le32(t + size - 9, (uint32_t)n);
    t[size - 5] = 0; /* descriptor: no checksums (each zstd frame has its own) */
    frames__put_le32(t + size - 4, FRAMES_ZSTD_SEEKABLE_MAGIC);
    rc = zs->down.write(zs->down.ctx, t, size);
    FRAMES_FREE(t, zs->opt.alloc_ctx);
    return rc < 0 ? frames__zstd_sfail(zs, FRAMES_E_IO, "write failed", strerror(errno)) : FRAMES_OK;
}

FRAMES_ZSTD_DEF int frames_zstd_sink_close(frames_zstd_sink *zs, frames_error *err) {
    int rc = FRAMES_OK;
    if (!zs) return FRAMES_OK;
    if (!zs->failed && frames__zstd_flush_to(zs, 1) == FRAMES_OK) frames__zstd_seek_table_write(zs);
    if (!zs->failed && zs->down.flush && zs->down.flush(zs->down.ctx) < 0)
        frames__zstd_sfail(zs, FRAMES_E_IO, "flush failed", strerror(errno));
    if (zs->down.close && zs->down.close(zs->down.ctx) < 0)
        frames__zstd_sfail(zs, FRAMES_E_IO, "close failed", strerror(errno));
    if (zs->failed) {
        rc = zs->err.code;
        if (err) *err = zs->err;
    }
    frames__zstd_sink_free(zs);
    return rc;
}

static int frames__zstd_close(void *ctx) {
    return frames_zstd_sink_close((frames_zstd_sink *)ctx, NULL);
}

#ifndef FRAMES_ZSTD_NO_THREADS
/* Start threads-1 compression threads (as many as can be started; none: compress inline). */
static void frames__zstd_start_workers(frames_zstd_sink *zs) {
    int want = zs->opt.threads - 1;
    if (want > FRAMES__ZSTD_MAX_WORKERS) want = FRAMES__ZSTD_MAX_WORKERS;
    if (want < 1) return;
    zs->njobs = 2 * (size_t)want;
    if (!(zs->jobs = (frames__zstd_job *)frames__zalloc(zs->njobs * sizeof *zs->jobs, zs->opt.alloc_ctx))) {
        zs->njobs = 0;
        return;
    }
    pthread_mutex_init(&zs->mu, NULL);
    pthread_cond_init(&zs->cv, NULL);
    while (zs->threaded < want &&
           pthread_create(&zs->thread[zs->threaded], NULL, frames__zstd_worker, zs) == 0)
        zs->threaded++;
    if (!zs->threaded) {
        pthread_mutex_destroy(&zs->mu);
        pthread_cond_destroy(&zs->cv);
    }
}
#endif

FRAMES_ZSTD_DEF int frames_zstd_sink_open(frames_zstd_sink **out, const frames_sink *down,
                                     const frames_zstd_options *o, frames_error *err) {
    frames_zstd_sink *zs = (frames_zstd_sink *)frames__zalloc(sizeof *zs, o ? o->alloc_ctx : NULL);
    *out = NULL;
    if (!zs) return frames__fail(err, FRAMES_E_NOMEM, FRAMES_NO_POS, FRAMES_NO_POS, "out of memory");
    zs->down = *down;
    zs->opt = frames__zstd_opts(o);
    if (zs->opt.chunk_size > ((uint64_t)1 << 30)) zs->opt.chunk_size = (uint64_t)1 << 30;
    zs->parsing = 1;
    if (!(zs->cctx = frames__zstd_cctx(&zs->opt))) {
        int level = zs->opt.level;
        frames__zstd_sink_free(zs);
        return frames__fail(err, FRAMES_E_INVALID, FRAMES_NO_POS, FRAMES_NO_POS,
                                 "cannot set up zstd compression at level %d", level);
    }
#ifndef FRAMES_ZSTD_NO_THREADS
    frames__zstd_start_workers(zs);
#endif
    *out = zs;
    return FRAMES_OK;
}

FRAMES_ZSTD_DEF frames_sink frames_zstd_sink_get(frames_zstd_sink *zs) {
    return frames__sink_of(zs, frames__zstd_write, zs->down.patch ? frames__zstd_patch : NULL,
                           frames__zstd_flush, frames__zstd_close);
}

#ifndef FRAMES_NO_POSIX
static int frames__zstd_fd_close(void *ctx) {
    return close((int)(intptr_t)ctx) == 0 ? FRAMES_OK : FRAMES_E_IO;
}

FRAMES_ZSTD_DEF int frames_zstd_writer_open_path(frames_writer **w, const char *path,
                                            const frames_writer_options *wo,
                                            const frames_zstd_options *zo,
                                            const frames_meta *meta, frames_error *err) {
    frames_zstd_options z = frames__zstd_opts(zo);
    frames_zstd_sink *zs;
    frames_sink down, s;
    int fd, rc;
    *w = NULL;
    if (wo && wo->frames_per_toc) z.frames_per_toc = wo->frames_per_toc;
    if (!strcmp(path, "-")) fd = 1;
    else {
        do fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0666); while (fd < 0 && errno == EINTR);
        if (fd < 0)
            return frames__fail(err, FRAMES_E_IO, FRAMES_NO_POS, FRAMES_NO_POS, "cannot create %s: %s",
                                     path, strerror(errno));
    }
    down = frames_sink_fd(fd);
    if (fd != 1) down.close = frames__zstd_fd_close;
    if ((rc = frames_zstd_sink_open(&zs, &down, &z, err)) < 0) {
        if (fd != 1) close(fd);
        return rc;
    }
    s = frames_zstd_sink_get(zs);
    if ((rc = frames_writer_open(w, &s, wo, meta, err)) < 0) frames_zstd_sink_close(zs, NULL);
    return rc;
}

#endif /* FRAMES_NO_POSIX: writer by path */

/* --------------------------------------------------------------------------------------
   converting
   -------------------------------------------------------------------------------------- */

#ifndef FRAMES_NO_POSIX
static long long frames__zstd_read_fd(int fd, void *buf, size_t n) {
    for (;;) {
        ssize_t got = read(fd, buf, n);
        if (got >= 0) return (long long)got;
        if (errno != EINTR) return -1;
    }
}

static int frames__zstd_write_fd(int fd, const void *data, size_t n) {
    frames_sink s = frames_sink_fd(fd);
    return s.write(s.ctx, data, n);
}

/* Decompress what in_fd holds after the `have` bytes already in `in` into fn(ctx, ...):
   every zstd frame, skippable frames skipped, as `zstd -d` does. */
static int frames__zstd_unpack(int in_fd, uint8_t *in, size_t have, size_t incap, void *actx,
                               int (*fn)(void *ctx, const void *p, size_t n), void *ctx, int *cut,
                               frames_error *err) {
    ZSTD_DCtx *d = ZSTD_createDCtx();
    uint8_t *out = (uint8_t *)FRAMES_MALLOC(ZSTD_DStreamOutSize(), actx);
    uint64_t consumed = 0;
    size_t ret = 0;
    int rc = FRAMES_OK, eof = 0;
    if (cut) *cut = 0;
    if (!d || !out) {
        rc = frames__fail(err, FRAMES_E_NOMEM, FRAMES_NO_POS, FRAMES_NO_POS, "out of memory");
        goto done;
    }
    while (rc == FRAMES_OK) {
        ZSTD_inBuffer ib;
        if (have == 0) {
            long long got = frames__zstd_read_fd(in_fd, in, incap);
            if (got < 0) {
                rc = frames__fail(err, FRAMES_E_IO, consumed, FRAMES_NO_POS, "read failed: %s",
                                       strerror(errno));
                break;
            }
            if (got == 0) eof = 1;
            have = (size_t)got;
        }
        if (eof) break;
        ib.src = in;
        ib.size = have;
        ib.pos = 0;
        while (ib.pos < ib.size) {
            ZSTD_outBuffer ob;
            ob.dst = out;
            ob.size = ZSTD_DStreamOutSize();
            ob.pos = 0;
            ret = ZSTD_decompressStream(d, &ob, &ib);
            if (ZSTD_isError(ret)) {
                rc = frames__fail(err, FRAMES_E_DECODE, consumed + ib.pos, FRAMES_NO_POS,
                                       "corrupt zstd data at file offset 0x%llx: %s",
                                       (unsigned long long)(consumed + ib.pos), ZSTD_getErrorName(ret));
                break;
            }
            if (ob.pos && fn(ctx, out, ob.pos) < 0) {
                rc = frames__fail(err, FRAMES_E_IO, consumed + ib.pos, FRAMES_NO_POS,
                                       "write failed: %s", strerror(errno));
                break;
            }
        }
        consumed += have;
        have = 0;
    }
    if (rc == FRAMES_OK && consumed == 0) /* as zstd -d: an empty file is not compressed data */
        rc = frames__fail(err, FRAMES_E_FORMAT, FRAMES_NO_POS, FRAMES_NO_POS, "empty input: no zstd frame");
    if (rc == FRAMES_OK && ret != 0 && cut) *cut = 1;
done:
    ZSTD_freeDCtx(d);
    FRAMES_FREE(out, actx);
    return rc;
}

static int frames__zstd_to_fd(void *ctx, const void *p, size_t n) {
    return frames__zstd_write_fd((int)(intptr_t)ctx, p, n);
}

FRAMES_ZSTD_DEF int frames_zstd_decompress_fd(int in_fd, int out_fd, int *cut, frames_error *err) {
    uint8_t *in = (uint8_t *)FRAMES_MALLOC(ZSTD_DStreamInSize(), NULL);
    int rc;
    if (!in) return frames__fail(err, FRAMES_E_NOMEM, FRAMES_NO_POS, FRAMES_NO_POS, "out of memory");
    rc = frames__zstd_unpack(in_fd, in, 0, ZSTD_DStreamInSize(), NULL, frames__zstd_to_fd,
                             (void *)(intptr_t)out_fd, cut, err);
    FRAMES_FREE(in, NULL);
    return rc;
}

/* compress_fd's way into the sink: the bytes must be a trace (the frames magic first), so
   that random bytes or an empty file never become a .zst that no reader reads. */
typedef struct frames__zstd_feed {
    frames_zstd_sink *zs;
    uint8_t head[8];
    size_t nhead;
    int not_trace;
} frames__zstd_feed;

static int frames__zstd_to_sink(void *ctx, const void *p, size_t n) {
    frames__zstd_feed *fd = (frames__zstd_feed *)ctx;
    if (fd->nhead < 8) {
        size_t k = n < 8 - fd->nhead ? n : 8 - fd->nhead;
        memcpy(fd->head + fd->nhead, p, k);
        fd->nhead += k;
        if (fd->nhead == 8 && frames__le64(fd->head) != FRAMES_MAGIC) {
            fd->not_trace = 1;
            return FRAMES_E_FORMAT;
        }
    }
    return frames__zstd_write(fd->zs, p, n);
}

FRAMES_ZSTD_DEF int frames_zstd_compress_fd(int in_fd, frames_zstd_sink *zs, frames_error *err) {
    size_t cap = 1 << 17, have = 0;
    uint8_t *in = (uint8_t *)FRAMES_MALLOC(cap, zs->opt.alloc_ctx);
    frames__zstd_feed feed;
    int rc = FRAMES_OK;
    if (!in) return frames__fail(err, FRAMES_E_NOMEM, FRAMES_NO_POS, FRAMES_NO_POS, "out of memory");
    memset(&feed, 0, sizeof feed);
    feed.zs = zs;
    while (have < 8) { /* enough to see the magic (zstd's or the trace's) */
        long long got = frames__zstd_read_fd(in_fd, in + have, cap - have);
        if (got < 0) rc = frames__fail(err, FRAMES_E_IO, have, FRAMES_NO_POS, "read failed: %s",
                                            strerror(errno));
        if (got <= 0) break;
        have += (size_t)got;
    }
    if (rc == FRAMES_OK && frames_zstd_is_compressed(in, have)) {
        int cut = 0;
        rc = frames__zstd_unpack(in_fd, in, have, cap, zs->opt.alloc_ctx, frames__zstd_to_sink, &feed,
                                 &cut, err);
    } else {
        while (rc == FRAMES_OK && have > 0) {
            long long got;
            if (frames__zstd_to_sink(&feed, in, have) < 0) {
                if (err) *err = zs->err;
                rc = feed.not_trace ? FRAMES_E_FORMAT : zs->err.code;
                break;
            }
            got = frames__zstd_read_fd(in_fd, in, cap);
            if (got < 0) rc = frames__fail(err, FRAMES_E_IO, FRAMES_NO_POS, FRAMES_NO_POS,
                                                "read failed: %s", strerror(errno));
            have = got > 0 ? (size_t)got : 0;
        }
    }
    if (rc == FRAMES_OK && zs->failed) {
        if (err) *err = zs->err;
        rc = zs->err.code;
    }
    if (rc == FRAMES_OK && feed.nhead < 8)
        rc = frames__fail(err, FRAMES_E_FORMAT, FRAMES_NO_POS, FRAMES_NO_POS,
                          "not a frames trace: %llu bytes, shorter than the magic number",
                          (unsigned long long)feed.nhead);
    else if (feed.not_trace)
        rc = frames__fail(err, FRAMES_E_FORMAT, FRAMES_NO_POS, FRAMES_NO_POS,
                          "not a frames trace: no frames magic number at offset 0");
    FRAMES_FREE(in, zs->opt.alloc_ctx);
    return rc;
}

#endif /* FRAMES_NO_POSIX: converting */

#ifdef __cplusplus
}
#endif
#endif /* FRAMES_ZSTD_IMPLEMENTATION_INCLUDED */
#endif /* FRAMES_ZSTD_IMPLEMENTATION || FRAMES_ALL_IMPLEMENTATION */

/*
 * MIT License
 *
 * Copyright (c) 2026 the frames authors
 *
 * Permission is hereby granted, free of charge, to any person obtaining a copy
 * of this software and associated documentation files (the "Software"), to deal
 * in the Software without restriction, including without limitation the rights
 * to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
 * copies of the Software, and to permit persons to whom the Software is
 * furnished to do so, subject to the following conditions:
 *
 * The above copyright notice and this permission notice shall be included in all
 * copies or substantial portions of the Software.
 *
 * THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
 * IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
 * FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
 * AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
 * LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
 * OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
 * SOFTWARE.
 */
