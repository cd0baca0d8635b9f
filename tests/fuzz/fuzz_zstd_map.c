// fuzz-needs: zstd.h -lzstd -lpthread
// fuzz-flags: -max_len=65536

/* fuzz_zstd_map - the chunk map of a compressed trace (frames_zstd.h) on arbitrary bytes:
   seek table parsing and the walk over zstd and skippable frames.

   Invariants:
   - the map opens or fails cleanly; chunks are contiguous in the uncompressed trace
     (each starts where the one before ends), lie inside the file in increasing order, and
     none exceeds max_chunk;
   - a seek table the map uses describes exactly the chunks the walk finds (the same file
     offsets and sizes): a table is used only when it agrees with the frames;
   - the sizes add up to the uncompressed size the map reports. */
#include "fuzz_util.h"
#define FRAMES_ZSTD_IMPLEMENTATION
#include "frames_zstd.h"

static void fz_check_map(const frames_zstd_map *m, size_t size, uint64_t max_chunk) {
    const frames_zstd_info *in = frames_zstd_map_info_get(m);
    uint64_t k, u = 0, end = 0;
    for (k = 0; k < in->chunks; k++) {
        const frames_zstd_chunk *c = frames_zstd_map_chunk_at(m, k);
        FZ_CHECK(c != NULL);
        FZ_CHECK(c->uoffset == u);
        FZ_CHECK(c->offset >= end && c->offset + c->csize <= size);
        FZ_CHECK(c->usize <= max_chunk);
        u += c->usize;
        end = c->offset + c->csize;
    }
    FZ_CHECK(u == in->size);
    FZ_CHECK(frames_zstd_map_chunk_at(m, in->chunks) == NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    frames_zstd_options zo;
    frames_zstd_map *a = NULL, *b = NULL;
    frames_error err;
    int ra, rb;
    uint64_t k;
    frames_zstd_options_default(&zo);
    zo.max_chunk = (uint64_t)1 << 20;
    ra = frames_zstd_map_open(&a, data, size, &zo, &err);
    if (ra < 0) FZ_CHECK(memchr(err.message, 0, sizeof err.message) != NULL);
    zo.flags = FRAMES_ZSTD_IGNORE_SEEK_TABLE;
    rb = frames_zstd_map_open(&b, data, size, &zo, &err);
    if (ra == FRAMES_OK) fz_check_map(a, size, zo.max_chunk);
    if (rb == FRAMES_OK) fz_check_map(b, size, zo.max_chunk);
    if (ra == FRAMES_OK && rb == FRAMES_OK && frames_zstd_map_info_get(a)->seek_table_used &&
        !frames_zstd_map_info_get(b)->cut) {
        const frames_zstd_info *ia = frames_zstd_map_info_get(a), *ib = frames_zstd_map_info_get(b);
        FZ_CHECK(ia->chunks == ib->chunks);
        for (k = 0; k < ia->chunks; k++) {
            const frames_zstd_chunk *x = frames_zstd_map_chunk_at(a, k), *y = frames_zstd_map_chunk_at(b, k);
            FZ_CHECK(x->offset == y->offset && x->csize == y->csize && x->usize == y->usize);
        }
    }
    frames_zstd_map_close(a);
    frames_zstd_map_close(b);
    return 0;
}
