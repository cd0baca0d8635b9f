// fuzz-needs: zstd.h -lzstd -lpthread
// fuzz-flags: -max_len=65536

/* fuzz_zstd_reader - a frames reader over arbitrary bytes taken as a compressed trace
   (frames_zstd.h): seek table or walked frames, chunks decompressed per cursor.

   Invariants:
   - opening fails cleanly or gives a reader whose chunks are each at most max_chunk;
   - sequential reading terminates, and every record it delivers is the record the plain
     reader delivers at the same index (same offset, same bytes) on what streaming
     decompression (as `zstd -d` does) makes of the input, up to its first error;
   - when every chunk decompresses and the sizes agree, both deliver the same records;
   - seek(i) and a cursor at i give record i again;
   - messages and warnings are NUL-terminated. */
#include "fuzz_util.h"
#define FRAMES_ZSTD_IMPLEMENTATION
#include "frames_zstd.h"
#include <zstd.h>

#define FZ_OUT_MAX ((size_t)4 << 20)

/* What zstd -d makes of the input, up to its first error (or FZ_OUT_MAX bytes). */
static uint8_t *fz_stream_decompress(const uint8_t *data, size_t size, size_t *len) {
    ZSTD_DCtx *d = ZSTD_createDCtx();
    uint8_t *out = (uint8_t *)malloc(FZ_OUT_MAX);
    ZSTD_inBuffer in = {data, size, 0};
    ZSTD_outBuffer o;
    FZ_CHECK(d && out);
    o.dst = out;
    o.size = FZ_OUT_MAX;
    o.pos = 0;
    while (in.pos < in.size && o.pos < o.size) {
        size_t before = in.pos, had = o.pos;
        size_t ret = ZSTD_decompressStream(d, &o, &in);
        if (ZSTD_isError(ret)) break;
        if (in.pos == before && o.pos == had) break;
    }
    *len = o.pos;
    ZSTD_freeDCtx(d);
    return out;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    frames_zstd_options zo;
    frames_zstd_info zi;
    frames_reader *z = NULL, *p = NULL;
    frames_error err;
    frames_raw rz, rp;
    uint8_t *plain;
    size_t plen, calls = 0;
    uint64_t i, n = 0, k;
    int rc, prc = 1, zerr = 0;
    frames_zstd_options_default(&zo);
    zo.max_chunk = (uint64_t)1 << 20;
    rc = frames_zstd_reader_open_memory(&z, data, size, NULL, &zo, &zi, &err);
    if (rc < 0) {
        FZ_CHECK(memchr(err.message, 0, sizeof err.message) != NULL);
        return 0;
    }
    for (i = 0; i < zi.nwarnings; i++) FZ_CHECK(memchr(zi.warnings[i], 0, sizeof zi.warnings[i]));
    {
        const frames_zstd_map *m = frames_zstd_reader_map(z);
        FZ_CHECK(m != NULL);
        for (k = 0; k < zi.chunks; k++) FZ_CHECK(frames_zstd_map_chunk_at(m, k)->usize <= zo.max_chunk);
    }
    plain = fz_stream_decompress(data, size, &plen);
    if (frames_reader_open_memory(&p, plain, plen, NULL, &err) < 0) p = NULL;
    for (;;) {
        FZ_CHECK(++calls <= zi.size / 8 + 16);
        rc = frames_reader_next_raw(z, &rz);
        if (rc < 0) {
            FZ_CHECK(memchr(frames_reader_error(z)->message, 0, sizeof err.message) != NULL);
            if (rc == FRAMES_E_DECODE || rc == FRAMES_E_LIMIT) continue;
            zerr = 1;
            break;
        }
        if (rc == 0) break;
        n++;
        if (p && prc == 1) {
            while ((prc = frames_reader_next_raw(p, &rp)) < 0 &&
                   (prc == FRAMES_E_DECODE || prc == FRAMES_E_LIMIT)) {}
            if (prc == 1) {
                FZ_CHECK(rp.index == rz.index && rp.offset == rz.offset);
                FZ_CHECK(rp.payload.len == rz.payload.len);
                FZ_CHECK(!memcmp(rp.payload.ptr, rz.payload.ptr, rz.payload.len));
            }
        }
    }
    if (p && !zerr && zi.size == plen && !zi.cut) {
        while ((prc = frames_reader_next_raw(p, &rp)) < 0 &&
               (prc == FRAMES_E_DECODE || prc == FRAMES_E_LIMIT)) {}
        FZ_CHECK(prc == 0); /* nothing more in the plain trace either */
    }
    /* random access agrees with sequential reading */
    if (!zerr && n > 0 && frames_reader_count(z, &k) == FRAMES_OK && k == n) {
        frames_cursor *c;
        uint64_t at = (uint64_t)(size * 2654435761u) % n;
        if (frames_reader_seek(z, at) == FRAMES_OK) {
            rc = frames_reader_next_raw(z, &rz);
            FZ_CHECK(rc != 1 || rz.index == at);
        }
        if (frames_reader_index(z) == FRAMES_OK && frames_cursor_open(&c, z, at, &err) == FRAMES_OK) {
            rc = frames_cursor_next_raw(c, &rp);
            FZ_CHECK(rc != 1 || rp.index == at);
            frames_cursor_close(c);
        }
    }
    frames_reader_close(p);
    frames_reader_close(z);
    free(plain);
    return 0;
}
