/* Compressed, seekable traces (.frames.zst, frames_zstd.h): layout, reading through the
   frames reader (sequential, seek, cursors in threads), writing (with and without the
   compression thread), bad input, crash safety and the commands. Independent judges: the
   real zstd binary (zstd -d must give the plain trace byte for byte) and the plain
   reader on the same trace. */
#include "testutil.h"

#include <pthread.h>
#include <sys/stat.h>

#include "frames.h"

#ifdef FRAMES_HAVE_ZSTD
#include "frames_zstd.h"
#include <zstd.h>

static uint32_t le32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint64_t le64(const uint8_t *p) { return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32; }

/* A trace of n std frames with register and memory values (sizes vary from frame to
   frame), written with m frames per TOC entry, plain or compressed. */
static void make_trace(const char *path, uint64_t n, uint64_t m, int compressed, int threads,
                       uint64_t chunk) {
    frames_writer_options wo;
    frames_zstd_options zo;
    frames_writer *w;
    frames_error err;
    uint64_t i;
    frames_writer_options_default(&wo);
    wo.frames_per_toc = m;
    wo.arch = FRAMES_ARCH_I386;
    wo.machine = FRAMES_MACH_X86_64;
    frames_zstd_options_default(&zo);
    zo.threads = threads;
    zo.chunk_size = chunk;
    if (compressed) assert_int_equal(frames_zstd_writer_open_path(&w, path, &wo, &zo, NULL, &err), 0);
    else assert_int_equal(frames_writer_open_path(&w, path, &wo, NULL, &err), 0);
    for (i = 0; i < n; i++) {
        frames_frame f;
        frames_operand op[3];
        uint64_t rax = i * 0x9E3779B97F4A7C15ull, mem = i & 0xff;
        uint8_t code[4] = {0x48, 0x01, (uint8_t)(0xc0 + i % 8), 0x90};
        memset(&f, 0, sizeof f);
        memset(op, 0, sizeof op);
        op[0].spec = FRAMES_REG;
        op[0].name = frames_str("RAX");
        op[0].bit_length = 64;
        op[0].read = 1;
        op[0].value = frames_bytes_of(&rax, 8);
        op[1] = op[0];
        op[1].name = frames_str("RBX");
        op[2].spec = FRAMES_MEM;
        op[2].address = 0x7ffc0000 + 8 * (i % 64);
        op[2].bit_length = 64;
        op[2].read = 1;
        op[2].value = frames_bytes_of(&mem, 1 + i % 8);
        f.kind = FRAMES_KIND_STD;
        f.std.address = 0x401000 + 3 * (i % 1000);
        f.std.thread_id = 1 + i % 3;
        f.std.rawbytes = frames_bytes_of(code, 3 + i % 2);
        f.std.pre = op;
        f.std.npre = 1 + (uint32_t)(i % 3);
        assert_int_equal(frames_writer_add(w, &f), 0);
    }
    assert_int_equal(frames_writer_close(w), 0);
}

/* A reader over path with the zstd flags given (FRAMES_ZSTD_*). */
static frames_reader *open_with(const char *path, uint32_t flags, frames_zstd_info *zi) {
    frames_reader *r = NULL;
    frames_zstd_options zo;
    frames_error err;
    int rc;
    frames_zstd_options_default(&zo);
    zo.flags = flags;
    rc = frames_zstd_reader_open_path(&r, path, NULL, &zo, zi, &err);
    if (rc < 0) fail_msg("%s: %s", path, err.message);
    return r;
}

static frames_reader *open_any(const char *path, frames_zstd_info *zi) { return open_with(path, 0, zi); }

/* The seek table entries of a compressed file: pairs (compressed, uncompressed). */
static size_t seek_entries(const uint8_t *z, size_t n, uint32_t *out, size_t max) {
    uint32_t k = le32(z + n - 9), i;
    const uint8_t *e = z + n - 9 - 8 * (size_t)k;
    assert_int_equal(le32(z + n - 4), 0x8F92EAB1u);
    assert_int_equal(z[n - 5], 0);
    assert_int_equal(le32(e - 8), 0x184D2A5Eu);
    assert_int_equal(le32(e - 4), 8 * k + 9);
    for (i = 0; i < k && 2 * i + 1 < max; i++) {
        out[2 * i] = le32(e + 8 * i);
        out[2 * i + 1] = le32(e + 8 * i + 4);
    }
    return k;
}

/* zstd -d gives the plain trace byte for byte, the header is a raw 57-byte first frame
   (patched n and T in place), every chunk but the last ends on a TOC block start, and
   the seek table describes the frames. */
static void test_layout_and_zstd_d(void **state) {
    const char *plain = tu_tmp_path(".frames"), *z = tu_tmp_path(".frames.zst"),
               *dec = tu_tmp_path(".dec");
    uint8_t *zb, *pb;
    size_t zn, pn, k, i;
    uint32_t ent[512];
    uint64_t off = 0, T, mstep, uoff = 0;
    int st;
    char *o;
    (void)state;
    make_trace(plain, 20000, 1000, 0, 1, 0);
    make_trace(z, 20000, 1000, 1, 2, 64 << 10);
    o = tu_run(&st, "zstd -q -d -f '%s' -o '%s' 2>&1", z, dec);
    assert_int_equal(st, 0);
    free(o);
    assert_true(tu_same_bytes(plain, dec));
    zb = tu_read_file(z, &zn);
    pb = tu_read_file(plain, &pn);
    assert_true(zn * 5 < pn);
    assert_int_equal(le32(zb), 0xFD2FB528u);
    assert_int_equal(zb[4], 0x20);
    assert_int_equal(zb[5], 48);
    assert_memory_equal(zb + 9, pb, 48);            /* header stored raw, n and T patched */
    assert_int_equal(le64(zb + 9 + 32), 20000);
    k = seek_entries(zb, zn, ent, 512);
    assert_true(k > 10);
    assert_int_equal(ent[0], 57);
    assert_int_equal(ent[1], 48);
    T = le64(pb + 40);
    mstep = le64(pb + T);
    assert_int_equal(mstep, 1000);
    for (i = 0; i < k; i++) {
        /* every zstd frame holds whole records: its start is a header, meta, frame or TOC
           boundary; chunks after the meta one start on TOC entries (block starts) */
        if (i >= 2 && uoff < T) {
            uint64_t e;
            int found = 0;
            for (e = 0; e < (pn - T - 8) / 8; e++) found |= le64(pb + T + 8 + 8 * e) == uoff;
            assert_true(found);
        }
        assert_int_equal(le32(zb + off), 0xFD2FB528u);
        off += ent[2 * i];
        uoff += ent[2 * i + 1];
    }
    assert_int_equal(uoff, pn);
    assert_int_equal(off + 8 + 8 * k + 9, zn);
    free(zb);
    free(pb);
    unlink(plain);
    unlink(z);
    unlink(dec);
}

/* The compressed file holds the plain writer's bytes whether compression runs on a second
   thread or not, for several chunk sizes and m. */
static void test_writer_threads_and_chunks(void **state) {
    static const uint64_t chunks[] = {1 << 12, 1 << 16, 1 << 20};
    static const uint64_t ms[] = {1, 64, 10000};
    size_t c, j;
    (void)state;
    for (j = 0; j < 3; j++) {
        char plain[512];
        snprintf(plain, sizeof plain, "%s", tu_tmp_path(".frames")); /* tu_tmp_path rotates */
        make_trace(plain, 3000, ms[j], 0, 1, 0);
        for (c = 0; c < 3; c++) {
            const char *z1 = tu_tmp_path(".zst"), *z2 = tu_tmp_path(".zst"), *d = tu_tmp_path(".d");
            char *o;
            int st;
            make_trace(z1, 3000, ms[j], 1, 1, chunks[c]);
            make_trace(z2, 3000, ms[j], 1, 2, chunks[c]);
            assert_true(tu_same_bytes(z1, z2)); /* the thread changes nothing in the output */
            make_trace(z2, 3000, ms[j], 1, 4, chunks[c]);
            assert_true(tu_same_bytes(z1, z2)); /* nor do three compressing in parallel */
            o = tu_run(&st, "zstd -q -d -f '%s' -o '%s'", z1, d);
            free(o);
            assert_int_equal(st, 0);
            assert_true(tu_same_bytes(plain, d));
            unlink(z1);
            unlink(z2);
            unlink(d);
        }
        unlink(plain);
    }
}

static void expect_same_frames(frames_reader *a, frames_reader *b) {
    frames_raw ra, rb;
    int x, y;
    for (;;) {
        x = frames_reader_next_raw(a, &ra);
        y = frames_reader_next_raw(b, &rb);
        assert_int_equal(x, y);
        if (x <= 0) break;
        assert_int_equal(ra.index, rb.index);
        assert_int_equal(ra.offset, rb.offset);
        assert_int_equal(ra.payload.len, rb.payload.len);
        assert_memory_equal(ra.payload.ptr, rb.payload.ptr, ra.payload.len);
    }
    assert_int_equal(x, 0);
}

/* Every reference vector, compressed by frames compress, reads as the plain file does
   (same frames, offsets, stat), and frames decompress gives it back byte for byte. */
static void test_vectors_compressed_read_the_same(void **state) {
    int st;
    char *list = tu_run(&st, "ls %s/*.frames", tu_shared("vectors/frames")), *line, *save = NULL;
    int nvec = 0;
    (void)state;
    assert_int_equal(st, 0);
    for (line = strtok_r(list, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        const char *z = tu_tmp_path(".frames.zst"), *d = tu_tmp_path(".frames");
        frames_reader *a, *b;
        frames_reader_info sa, sb;
        frames_zstd_info zi;
        frames_error err;
        char *o = tu_run(&st, "%s compress '%s' -o '%s' --chunk 4K 2>&1", tu_frames_bin(), line, z);
        if (frames_reader_open_path(&a, line, NULL, &err) < 0) { /* the empty file: no trace */
            assert_int_equal(st, 1);
            assert_non_null(strstr(o, "not a frames trace"));
            assert_int_equal(access(z, F_OK), -1);   /* and no .zst that nothing reads */
            free(o);
            continue;
        }
        assert_int_equal(st, 0);
        free(o);
        o = tu_run(&st, "%s decompress '%s' -o '%s' 2>&1", tu_frames_bin(), z, d);
        assert_int_equal(st, 0);
        free(o);
        assert_true(tu_same_bytes(line, d));
        frames_reader_close(a);
        a = open_any(line, NULL);
        b = open_any(z, &zi);
        assert_true(zi.chunks >= 1);
        assert_true(zi.seek_table_used);
        expect_same_frames(a, b);
        assert_int_equal(frames_reader_info_get(a, &sa), 0);
        assert_int_equal(frames_reader_info_get(b, &sb), 0);
        assert_int_equal(sa.nframes, sb.nframes);
        assert_int_equal(sa.truncated, sb.truncated);
        assert_int_equal(sa.toc_used, sb.toc_used);
        assert_int_equal(sa.file_size, sb.file_size);
        frames_reader_close(a);
        frames_reader_close(b);
        unlink(z);
        unlink(d);
        nvec++;
    }
    assert_true(nvec >= 10);
    free(list);
}

/* Seek to frames anywhere: the frame equals the plain reader's, and each seek
   decompresses at most the chunk that holds it. */
static void test_random_access_one_chunk(void **state) {
    const char *plain = tu_tmp_path(".frames"), *z = tu_tmp_path(".frames.zst");
    frames_reader *a, *b;
    frames_zstd_info zi;
    const frames_zstd_map *m;
    uint64_t i, n, seed = 12345;
    (void)state;
    make_trace(plain, 50000, 500, 0, 1, 0);
    make_trace(z, 50000, 500, 1, 2, 32 << 10);
    a = open_any(plain, NULL);
    b = open_any(z, &zi);
    m = frames_zstd_reader_map(b);
    assert_non_null(m);
    assert_true(zi.chunks > 50);
    assert_int_equal(frames_reader_count(b, &n), 0);
    assert_int_equal(n, 50000);
    for (i = 0; i < 200; i++) {
        frames_raw ra, rb;
        uint64_t before, idx;
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        idx = (seed >> 33) % n;
        before = frames_zstd_map_decompressed(m);
        assert_int_equal(frames_reader_seek(a, idx), 0);
        assert_int_equal(frames_reader_seek(b, idx), 0);
        assert_int_equal(frames_reader_next_raw(a, &ra), 1);
        assert_int_equal(frames_reader_next_raw(b, &rb), 1);
        assert_int_equal(ra.offset, rb.offset);
        assert_memory_equal(ra.payload.ptr, rb.payload.ptr, ra.payload.len);
        assert_true(frames_zstd_map_decompressed(m) - before <= zi.largest_chunk);
    }
    frames_reader_close(a);
    frames_reader_close(b);
    unlink(plain);
    unlink(z);
}

typedef struct {
    frames_reader *r;
    uint64_t first, end, sum;
    int rc;
} job;

static void *run_job(void *arg) {
    job *j = (job *)arg;
    frames_cursor *c;
    frames_frame f;
    frames_error err;
    uint64_t i;
    j->rc = frames_cursor_open(&c, j->r, j->first, &err);
    if (j->rc < 0) return NULL;
    for (i = j->first; i < j->end; i++) {
        if ((j->rc = frames_cursor_next(c, &f)) != 1) break;
        j->sum += f.std.address * (i + 1) + f.std.npre;
    }
    frames_cursor_close(c);
    return NULL;
}

/* Four threads with their own cursors over one compressed reader compute what one pass
   over the plain trace computes. */
static void test_cursors_in_threads(void **state) {
    const char *plain = tu_tmp_path(".frames"), *z = tu_tmp_path(".frames.zst");
    frames_reader *a, *b;
    frames_frame f;
    pthread_t th[4];
    job jobs[4];
    uint64_t want = 0, got = 0, i = 0;
    int t;
    (void)state;
    make_trace(plain, 40000, 1000, 0, 1, 0);
    make_trace(z, 40000, 1000, 1, 2, 16 << 10);
    a = open_any(plain, NULL);
    while (frames_reader_next(a, &f) == 1) {
        want += f.std.address * (i + 1) + f.std.npre;
        i++;
    }
    b = open_any(z, NULL);
    assert_int_equal(frames_reader_index(b), 0);
    for (t = 0; t < 4; t++) {
        jobs[t].r = b;
        jobs[t].first = 10000u * (uint64_t)t + (t ? 17 : 0);
        jobs[t].end = t == 3 ? 40000 : 10000u * (uint64_t)(t + 1) + 17;
        jobs[t].sum = 0;
        assert_int_equal(pthread_create(&th[t], NULL, run_job, &jobs[t]), 0);
    }
    for (t = 0; t < 4; t++) {
        pthread_join(th[t], NULL);
        assert_int_equal(jobs[t].rc, 1);
        got += jobs[t].sum;
    }
    assert_true(got == want);
    frames_reader_close(a);
    frames_reader_close(b);
    unlink(plain);
    unlink(z);
}

/* A corrupt chunk: reading it fails with a message naming the chunk, its file offset and
   its first frame; the chunks after it still read. */
static void test_corrupt_chunk(void **state) {
    const char *z = tu_tmp_path(".frames.zst"), *bad = tu_tmp_path(".frames.zst");
    uint8_t *zb;
    size_t zn;
    uint32_t ent[256];
    uint64_t off = 0, k, i, n;
    frames_reader *r;
    frames_frame f;
    frames_error err;
    frames_cursor *c;
    char expect[96], first_message[sizeof err.message] = "";
    uint32_t flags[2] = {0, FRAMES_ZSTD_NO_READAHEAD}, j;
    int rc;
    (void)state;
    make_trace(z, 20000, 1000, 1, 1, 64 << 10);
    zb = tu_read_file(z, &zn);
    k = seek_entries(zb, zn, ent, 256);
    assert_true(k > 6);
    for (i = 0; i < 4; i++) off += ent[2 * i];
    zb[off + ent[8] / 2] ^= 0x5a;     /* in the middle of chunk 4 */
    zb[off + ent[8] / 2 + 1] ^= 0xa5;
    assert_int_equal(tu_write_file(bad, zb, zn), 0);
    for (j = 0; j < 2; j++) { /* decompressed ahead by the second thread, or not: the same */
        r = open_with(bad, flags[j], NULL);
        n = 0;
        while ((rc = frames_reader_next(r, &f)) == 1) n++;
        assert_true(rc < 0);
        assert_non_null(strstr(frames_reader_error(r)->message, "chunk 4"));
        snprintf(expect, sizeof expect, "file offset 0x%llx, first frame %llu", (unsigned long long)off,
                 (unsigned long long)n);
        assert_non_null(strstr(frames_reader_error(r)->message, expect));
        if (j) assert_string_equal(frames_reader_error(r)->message, first_message);
        else snprintf(first_message, sizeof first_message, "%s", frames_reader_error(r)->message);
        /* the last frames (later chunks) still read */
        assert_int_equal(frames_reader_index(r), 0);
        assert_int_equal(frames_cursor_open(&c, r, 19990, &err), 0);
        for (i = 0; i < 10; i++) assert_int_equal(frames_cursor_next(c, &f), 1);
        assert_int_equal(frames_cursor_next(c, &f), 0);
        frames_cursor_close(c);
        /* frames_reader_skip_damage: on at the next chunk (chunks start on TOC entries, m =
           1000), every later frame reads, and the frames skipped are those of chunk 4 */
        {
            uint64_t lost, after = 0;
            assert_int_equal(frames_reader_seek(r, n), 0);
            assert_true(frames_reader_next(r, &f) < 0);
            assert_int_equal(frames_reader_skip_damage(r, &lost), 1);
            assert_true(lost > 0 && (n + lost) % 1000 == 0);
            assert_int_equal(frames_reader_tell(r), n + lost);
            while ((rc = frames_reader_next(r, &f)) == 1) after++;
            assert_int_equal(rc, 0);
            assert_int_equal(n + lost + after, 20000);
            /* no readable frame was skipped: the first one after is the first of chunk 5 */
            {
                frames_raw raw;
                assert_int_equal(frames_reader_seek(r, n + lost), 0);
                assert_int_equal(frames_reader_next_raw(r, &raw), 1);
                assert_int_equal(raw.offset, frames_zstd_map_chunk_at(frames_zstd_reader_map(r), 5)->uoffset);
            }
        }
        frames_reader_close(r);
    }
    free(zb);
    unlink(z);
    unlink(bad);
}

/* A seek table that lies about a frame is reported and ignored; the frames are walked. */
static void test_lying_seek_table(void **state) {
    const char *z = tu_tmp_path(".frames.zst"), *bad = tu_tmp_path(".frames.zst");
    uint8_t *zb;
    size_t zn;
    uint32_t ent[256], k;
    frames_reader *a, *b;
    frames_zstd_info zi;
    (void)state;
    make_trace(z, 5000, 100, 1, 1, 16 << 10);
    zb = tu_read_file(z, &zn);
    k = (uint32_t)seek_entries(zb, zn, ent, 256);
    /* entry 2 claims 4 more decompressed bytes */
    {
        uint8_t *e = zb + zn - 9 - 8 * (size_t)k + 8 * 2 + 4;
        uint32_t v = le32(e) + 4;
        e[0] = (uint8_t)v; e[1] = (uint8_t)(v >> 8); e[2] = (uint8_t)(v >> 16); e[3] = (uint8_t)(v >> 24);
    }
    assert_int_equal(tu_write_file(bad, zb, zn), 0);
    a = open_any(z, NULL);
    b = open_any(bad, &zi);
    assert_true(zi.seek_table);
    assert_false(zi.seek_table_used);
    assert_true(zi.nwarnings >= 1);
    assert_non_null(strstr(zi.warnings[0], "seek table disagrees"));
    assert_non_null(strstr(zi.warnings[0], "entry 2"));
    expect_same_frames(a, b);
    frames_reader_close(a);
    frames_reader_close(b);
    free(zb);
    unlink(z);
    unlink(bad);
}

/* A seekable file written the way other writers do (zstd's contrib seekable writer):
   `plain` in zstd frames of `step` bytes, then a seek table. sizes = 0: no content size in
   the frame headers. checksums = 1: descriptor 0x80 and a third word per entry, the low
   32 bits of the chunk's XXH64, taken from libzstd (a frame's own content checksum is the
   same word, its last 4 bytes), so our XXH64 is judged by libzstd's. Entry `bad` (if <
   512) lies: `lie` is added to its decompressed size, or its checksum is flipped. */
typedef struct seekable_opts {
    int sizes, checksums;
    size_t bad;
    uint32_t lie;
} seekable_opts;

static void write_seekable(const char *plain, const char *z, size_t step, seekable_opts o) {
    size_t pn, off, k = 0, esize = o.checksums ? 12 : 8;
    uint8_t *pb = tu_read_file(plain, &pn), table[8 + 12 * 512 + 9];
    ZSTD_CCtx *c = ZSTD_createCCtx();
    FILE *f = fopen(z, "wb");
    assert_non_null(f);
    assert_true(pn / step < 512);
    assert_false(ZSTD_isError(ZSTD_CCtx_setParameter(c, ZSTD_c_contentSizeFlag, o.sizes)));
    assert_false(ZSTD_isError(ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, o.checksums)));
    for (off = 0; off < pn; off += step, k++) {
        size_t len = pn - off < step ? pn - off : step, cap = ZSTD_compressBound(len);
        uint8_t *out = (uint8_t *)malloc(cap), *e = table + 8 + esize * k;
        size_t cs = ZSTD_compress2(c, out, cap, pb + off, len);
        assert_false(ZSTD_isError(cs));
        if (!o.sizes) assert_int_equal(ZSTD_getFrameContentSize(out, cs), ZSTD_CONTENTSIZE_UNKNOWN);
        assert_int_equal(fwrite(out, 1, cs, f), cs);
        tu_put_le32(e, (uint32_t)cs);
        tu_put_le32(e + 4, (uint32_t)len + (k == o.bad && !o.checksums ? o.lie : 0));
        if (o.checksums) tu_put_le32(e + 8, le32(out + cs - 4) ^ (k == o.bad ? 1u : 0u));
        free(out);
    }
    tu_put_le32(table, 0x184D2A5Eu);
    tu_put_le32(table + 4, (uint32_t)(esize * k + 9));
    tu_put_le32(table + 8 + esize * k, (uint32_t)k);
    table[12 + esize * k] = o.checksums ? 0x80 : 0;
    tu_put_le32(table + 13 + esize * k, 0x8F92EAB1u);
    assert_int_equal(fwrite(table, 1, 8 + esize * k + 9, f), 8 + esize * k + 9);
    fclose(f);
    ZSTD_freeCCtx(c);
    free(pb);
}

/* Frames without a content size (zstd's own seekable writer makes them): a true seek table
   is used, one whose sizes are wrong is caught by decompressing the frame and ignored
   (found by fuzz_zstd_map: the table was trusted because the header had no size to check). */
static void test_seek_table_of_frames_without_sizes(void **state) {
    const char *plain = tu_tmp_path(".frames"), *z = tu_tmp_path(".frames.zst");
    frames_reader *a, *b;
    frames_zstd_info zi;
    int lie;
    (void)state;
    make_trace(plain, 5000, 500, 0, 1, 0);
    for (lie = 0; lie < 2; lie++) {
        seekable_opts o = {0, 0, 1, 0};
        o.lie = lie ? 4 : 0;
        write_seekable(plain, z, 20000, o);
        a = open_any(plain, NULL);
        b = open_any(z, &zi);
        assert_true(zi.seek_table);
        assert_int_equal(zi.seek_table_used, !lie);
        if (lie) assert_non_null(strstr(zi.warnings[0], "entry 1 (file offset"));
        if (lie) assert_non_null(strstr(zi.warnings[0], "decompresses to a different number"));
        expect_same_frames(a, b);
        frames_reader_close(a);
        frames_reader_close(b);
    }
    unlink(plain);
    unlink(z);
}

/* Seek-table checksums are checked whenever a chunk is decompressed: true ones read, a
   wrong one is a corrupt chunk named with its offsets, the other chunks still read. */
static void test_seek_table_checksums(void **state) {
    const char *plain = tu_tmp_path(".frames"), *z = tu_tmp_path(".frames.zst");
    frames_reader *a, *b;
    frames_zstd_info zi;
    frames_frame f;
    uint64_t n = 0, i;
    const frames_zstd_chunk *bad;
    int rc;
    (void)state;
    make_trace(plain, 5000, 500, 0, 1, 0);
    for (i = 0; i < 3; i++) { /* chunk lengths that end in every tail of XXH64's loop */
        static const size_t steps[] = {4093, 20011, 65543};
        seekable_opts o = {1, 1, 512, 0};
        write_seekable(plain, z, steps[i], o);
        a = open_any(plain, NULL);
        b = open_any(z, &zi);
        assert_true(zi.seek_table_used);
        assert_true(zi.seek_checksums);
        expect_same_frames(a, b);
        frames_reader_close(a);
        frames_reader_close(b);
    }

    {
        seekable_opts o = {1, 1, 3, 0};
        write_seekable(plain, z, 20000, o);
    }
    b = open_any(z, &zi);
    assert_true(zi.seek_table_used);
    bad = frames_zstd_map_chunk_at(frames_zstd_reader_map(b), 3);
    assert_non_null(bad);
    while ((rc = frames_reader_next(b, &f)) == 1) n++;
    assert_int_equal(rc, FRAMES_E_FORMAT);
    assert_non_null(strstr(frames_reader_error(b)->message, "chunk 3 (zstd frame at file offset"));
    assert_non_null(strstr(frames_reader_error(b)->message, "do not match the seek table's checksum"));
    assert_true(n > 0 && n < 2000);
    /* frame 2000 is behind the TOC entry of frame 2000 (m = 500), far after chunk 3 */
    assert_true(bad->uoffset + bad->usize < 150000);
    assert_int_equal(frames_reader_seek(b, 2000), 0);
    assert_int_equal(frames_reader_next(b, &f), 1);
    frames_reader_close(b);
    unlink(plain);
    unlink(z);
}

/* A file cut anywhere reads like `zstd -d` of it would (every record in complete zstd
   blocks), and frames fix turns it into a finished compressed trace with those frames. */
static void test_cut_file_recovers_and_fix(void **state) {
    const char *z = tu_tmp_path(".frames.zst");
    uint8_t *zb;
    size_t zn, cut;
    (void)state;
    make_trace(z, 30000, 1000, 1, 2, 256 << 10);
    zb = tu_read_file(z, &zn);
    for (cut = zn / 5; cut < zn; cut += zn / 5) {
        const char *c = tu_tmp_path(".frames.zst"), *plain = tu_tmp_path(".frames"),
                   *fixed = tu_tmp_path(".frames.zst");
        frames_reader *a, *b;
        frames_reader_info sb;
        frames_zstd_info zi;
        uint64_t n;
        char *o;
        int st;
        assert_int_equal(tu_write_file(c, zb, cut), 0);
        o = tu_run(&st, "zstd -q -d -c '%s' > '%s' 2>/dev/null", c, plain); /* fails: cut */
        free(o);
        a = open_any(plain, NULL);
        b = open_any(c, &zi);
        assert_true(zi.cut || !zi.seek_table);
        expect_same_frames(a, b);
        assert_int_equal(frames_reader_info_get(b, &sb), 0);
        n = sb.nframes;
        assert_true(n > 0);
        frames_reader_close(a);
        frames_reader_close(b);
        o = tu_run(&st, "%s fix '%s' -o '%s' 2>&1", tu_frames_bin(), c, fixed);
        assert_int_equal(st, 0);
        free(o);
        b = open_any(fixed, &zi);
        assert_true(zi.seek_table_used);
        assert_false(zi.cut);
        assert_int_equal(frames_reader_info_get(b, &sb), 0);
        assert_true(sb.finished && sb.toc_used);
        assert_int_equal(sb.nframes, n);
        frames_reader_close(b);
        unlink(c);
        unlink(plain);
        unlink(fixed);
    }
    free(zb);
    unlink(z);
}

/* What a writer flushed is readable although it never finished (no seek table, n = 0). */
static void test_flushed_unfinished_is_readable(void **state) {
    const char *z = tu_tmp_path(".frames.zst");
    frames_writer *w;
    frames_writer_options wo;
    frames_zstd_options zo;
    frames_error err;
    frames_reader *r;
    frames_zstd_info zi;
    frames_frame f;
    uint64_t i, n = 0;
    uint8_t code[2] = {0x90, 0x90};
    (void)state;
    frames_writer_options_default(&wo);
    frames_zstd_options_default(&zo);
    assert_int_equal(frames_zstd_writer_open_path(&w, z, &wo, &zo, NULL, &err), 0);
    for (i = 0; i < 1000; i++) {
        memset(&f, 0, sizeof f);
        f.kind = FRAMES_KIND_STD;
        f.std.address = 0x1000 + i;
        f.std.thread_id = 1;
        f.std.rawbytes = frames_bytes_of(code, 1);
        assert_int_equal(frames_writer_add(w, &f), 0);
        if (i == 700) assert_int_equal(frames_writer_flush(w), 0);
    }
    /* a crash now: what was flushed is on disk, the rest is lost with the process; look
       at the file before freeing the writer (which would write the rest) */
    r = open_any(z, &zi);
    assert_false(zi.seek_table);
    while (frames_reader_next(r, &f) == 1) assert_int_equal(f.std.address, 0x1000 + n++);
    assert_int_equal(n, 701);
    frames_reader_close(r);
    frames_writer_abandon(w);
    unlink(z);
}

/* The commands: cat/slice write .zst by name or --zstd, info shows the compression, split
   gives chunk-aligned ranges, and the GNU parallel recipe of docs/scale.md works on a
   compressed trace. */
static void test_commands(void **state) {
    const char *v = tu_shared("vectors/frames/tcg_r10_m64_n10001.frames");
    const char *z = tu_tmp_path(".frames.zst"), *c = tu_tmp_path(".frames"), *s = tu_tmp_path(".frames.zst");
    char bindir[4096];
    const char *bin = tu_frames_bin(), *slash = strrchr(bin, '/');
    char *o, *o2;
    int st;
    (void)state;
    o = tu_run(&st, "%s cat %s %s --zstd=5 2>&1 && zstd -q -d -c %s | cmp - %s", bin, v, c, c, v);
    assert_int_equal(st, 0);
    free(o);
    o = tu_run(&st, "%s compress %s -o %s --chunk 16K --level 1 2>&1", bin, v, z);
    assert_int_equal(st, 0);
    free(o);
    o = tu_run(&st, "%s info %s", bin, z);
    assert_int_equal(st, 0);
    assert_non_null(strstr(o, "compression: zstd, "));
    assert_non_null(strstr(o, "seek table present"));
    free(o);
    o = tu_run(&st, "%s slice %s --frames 100-300 -o %s 2>&1 && %s stat %s", bin, z, s, bin, s);
    assert_int_equal(st, 0);
    assert_non_null(strstr(o, "instructions"));
    free(o);
    o = tu_run(&st, "zstd -q -t %s && %s info --json %s", s, bin, s);
    assert_int_equal(st, 0);
    assert_non_null(strstr(o, "\"compression\":{\"format\":\"zstd\""));
    free(o);
    /* split: ranges are chunk starts, they cover the trace */
    o = tu_run(&st, "%s split %s --chunks 4", bin, z);
    o2 = tu_run(&st, "%s split %s --chunks 4 --json", bin, z);
    assert_int_equal(st, 0);
    assert_non_null(strstr(o, "0-"));
    assert_non_null(strstr(o, "-10001\n"));
    free(o);
    free(o2);
    assert_non_null(slash);
    snprintf(bindir, sizeof bindir, "%.*s", (int)(slash - bin), bin);
    o = tu_run(&st,
               "cd %s && PATH=$PWD:$PATH; frames split %s --chunks 4 | "
               "parallel -k 'frames slice %s --frames {} -o - | frames stat -' | "
               "awk '$1 == \"instructions\" { n += $2 } END { print n }'",
               bindir, z, z);
    assert_int_equal(st, 0);
    assert_string_equal(o, "10001\n");
    free(o);
    /* query and index on the compressed trace find what they find on the plain one */
    {
        const char *r11 = tu_shared("vectors/frames/r11_pintraces_like_x86.frames");
        const char *z11 = tu_tmp_path(".frames.zst");
        char *a, *b, idx[600];
        const char *q = "--var a:reg32 --var m:mem32 --where '(= (v/value a) (v/addr m))'";
        o = tu_run(&st, "%s compress %s -o %s 2>&1", bin, r11, z11);
        assert_int_equal(st, 0);
        free(o);
        a = tu_run(&st, "%s query %s %s", bin, r11, q);
        assert_int_equal(st, 0);
        b = tu_run(&st, "%s query %s %s", bin, z11, q);
        assert_int_equal(st, 0);
        assert_non_null(strstr(a, "result 0:"));
        assert_string_equal(a, b);
        free(a);
        free(b);
        snprintf(idx, sizeof idx, "%s.fqidx", z);
        a = tu_run(&st, "%s index %s 2>&1 && %s query %s --count --pc 0x0-0xffffffffffff", bin, z, bin, z);
        assert_int_equal(st, 0);
        assert_non_null(strstr(a, "\n10001\n"));
        free(a);
        unlink(idx);
        unlink(z11);
    }
    /* standard input redirected from a compressed file reads with random access (a pipe:
       test_compressed_pipe_and_fifo) */
    o = tu_run(&st, "bash -c '%s dump - < %s | cmp - <(%s dump %s)'", bin, z, bin, v);
    assert_int_equal(st, 0);
    free(o);
    /* the same decompressed by zstd and by frames decompress */
    o = tu_run(&st, "%s decompress %s -o - | cmp - %s && zstd -q -d -c %s | cmp - %s", bin, z, v, z, v);
    assert_int_equal(st, 0);
    free(o);
    unlink(z);
    unlink(c);
    unlink(s);
}

/* got (a command's output, freed here) equals want. */
static void expect_same_output(const char *want, const char *got) {
    assert_string_equal(got, want);
    free((void *)got);
}

/* A compressed trace on a pipe or a FIFO streams through a decompressor: the same frames
   as the file; cut short, the frames `zstd -dc` gives back from the cut (no more, no less);
   corrupt, an error and exit status 1. */
static void test_compressed_pipe_and_fifo(void **state) {
    const char *v = tu_shared("vectors/frames/tcg_r10_m64_n10001.frames");
    const char *z = tu_tmp_path(".frames.zst"), *fifo = tu_tmp_path(".fifo"), *bin = tu_frames_bin();
    const char *tdb = tu_shared("vectors/tracedb/small.trace");
    char *want, *got;
    int st;
    (void)state;
    free(tu_run_ok("compress", "%s compress %s -o %s --chunk 64K 2>&1", bin, v, z));
    want = tu_run_ok("dump", "%s dump %s", bin, v);
    expect_same_output(want, tu_run_ok("dump of a pipe", "cat %s | %s dump -", z, bin));
    assert_int_equal(mkfifo(fifo, 0600), 0);
    expect_same_output(want, tu_run_ok("dump of a FIFO", "cat %s > %s & %s dump %s; wait", z, fifo, bin, fifo));
    free(want);
    unlink(fifo);
    want = tu_run(&st, "head -c 100000 %s | zstd -q -dc 2>/dev/null | %s dump - 2>/dev/null", z, bin);
    assert_true(strlen(want) > 1000);
    expect_same_output(want, tu_run(&st, "head -c 100000 %s | %s dump - 2>/dev/null", z, bin));
    free(want);
    /* the query engine needs the plain bytes in memory: a pipe is copied, then decompressed */
    want = tu_run_ok("query", "%s query %s --var a:reg32 --count", bin, v);
    expect_same_output(want, tu_run_ok("query of a pipe", "cat %s | %s query - --var a:reg32 --count", z, bin));
    expect_same_output(want, tu_run_ok("query of a pipe", "cat %s | %s query - --var a:reg32 --count", v, bin));
    free(want);
    want = tu_run_ok("trace-db query", "%s query %s --count 2>&1", bin, tdb); /* still reads as one */
    expect_same_output(want, tu_run_ok("trace-db query of a pipe", "cat %s | %s query - --count 2>&1", tdb, bin));
    free(want);
    got = tu_run(&st, "(head -c 30000 %s; head -c 200 /dev/zero; tail -c +30201 %s) | %s stat - 2>&1",
                 z, z, bin);
    assert_int_equal(st, 1);
    assert_non_null(strstr(got, "read failed: Bad message"));
    free(got);
    unlink(z);
}

/* Chunks that start anywhere (a foreign writer: zstd --block-size style frames of fixed
   size, records straddling frames) still read, through the straddle buffer. */
static void test_foreign_frames_straddle(void **state) {
    const char *plain = tu_tmp_path(".frames"), *z = tu_tmp_path(".frames.zst");
    frames_reader *a, *b;
    frames_zstd_info zi;
    size_t pn, off;
    uint8_t *pb;
    FILE *f;
    (void)state;
    make_trace(plain, 5000, 1000, 0, 1, 0);
    pb = tu_read_file(plain, &pn);
    f = fopen(z, "wb");
    assert_non_null(f);
    for (off = 0; off < pn; off += 1000) { /* one zstd frame per 1000 bytes */
        size_t len = pn - off < 1000 ? pn - off : 1000, cap = ZSTD_compressBound(len);
        uint8_t *out = (uint8_t *)malloc(cap);
        size_t cs = ZSTD_compress(out, cap, pb + off, len, 1);
        assert_false(ZSTD_isError(cs));
        assert_int_equal(fwrite(out, 1, cs, f), cs);
        free(out);
    }
    fclose(f);
    a = open_any(plain, NULL);
    b = open_any(z, &zi);
    assert_false(zi.seek_table);
    assert_int_equal(zi.chunks, (pn + 999) / 1000);
    expect_same_frames(a, b);
    frames_reader_close(a);
    frames_reader_close(b);
    free(pb);
    unlink(plain);
    unlink(z);
}

/* Threads of this process (Linux: /proc/self/task), or 0 where that cannot be seen. */
static int threads_now(void) {
    int st, n;
    char *o = tu_run(&st, "ls /proc/%ld/task 2>/dev/null | wc -l", (long)getpid());
    n = o ? atoi(o) : 0;
    free(o);
    return n;
}

/* Reading a compressed file with the next chunk decompressed ahead on a second thread
   gives what reading without it gives: the same records, the same end of a cut file, the
   same count of decompressed bytes; the thread exists only while such a reader does, and
   the tools' output is the same with FRAMES_NO_READAHEAD and from a pipe. */
static void test_readahead_same_as_without(void **state) {
    const char *z = tu_tmp_path(".frames.zst"), *cut = tu_tmp_path(".frames.zst"), *bin = tu_frames_bin();
    frames_reader *a, *b;
    frames_zstd_info zi;
    frames_raw raw;
    uint8_t *zb;
    size_t zn;
    uint64_t i;
    int before;
    char *want;
    (void)state;
    make_trace(z, 30000, 1000, 1, 2, 64 << 10);
    a = open_with(z, FRAMES_ZSTD_NO_READAHEAD, &zi);
    b = open_with(z, 0, NULL);
    assert_true(zi.chunks > 10);
    expect_same_frames(a, b);
    assert_int_equal(frames_zstd_map_decompressed(frames_zstd_reader_map(a)),
                     frames_zstd_map_decompressed(frames_zstd_reader_map(b)));
    frames_reader_close(a);
    frames_reader_close(b);
    before = threads_now();
    b = open_with(z, 0, NULL);
    for (i = 0; i < 5000; i++) assert_int_equal(frames_reader_next_raw(b, &raw), 1); /* past chunk 1 */
    if (before) assert_int_equal(threads_now(), before + 1);
    frames_reader_close(b);
    if (before) assert_int_equal(threads_now(), before);
    zb = tu_read_file(z, &zn);
    assert_int_equal(tu_write_file(cut, zb, zn / 2 + 777), 0);
    a = open_with(cut, FRAMES_ZSTD_NO_READAHEAD, &zi);
    b = open_with(cut, 0, NULL);
    assert_true(zi.cut);
    expect_same_frames(a, b);
    assert_int_equal(frames_zstd_map_decompressed(frames_zstd_reader_map(a)),
                     frames_zstd_map_decompressed(frames_zstd_reader_map(b)));
    frames_reader_close(a);
    frames_reader_close(b);
    want = tu_run_ok("stat", "%s stat %s --no-symbols", bin, z);
    expect_same_output(want, tu_run_ok("stat without read-ahead",
                                       "FRAMES_NO_READAHEAD=1 %s stat %s --no-symbols", bin, z));
    expect_same_output(want, tu_run_ok("stat of a pipe (streamed, no read-ahead)",
                                       "cat %s | %s stat - --no-symbols", z, bin));
    free(want);
    free(zb);
    unlink(z);
    unlink(cut);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_readahead_same_as_without),
        cmocka_unit_test(test_layout_and_zstd_d),
        cmocka_unit_test(test_writer_threads_and_chunks),
        cmocka_unit_test(test_vectors_compressed_read_the_same),
        cmocka_unit_test(test_random_access_one_chunk),
        cmocka_unit_test(test_cursors_in_threads),
        cmocka_unit_test(test_corrupt_chunk),
        cmocka_unit_test(test_lying_seek_table),
        cmocka_unit_test(test_seek_table_of_frames_without_sizes),
        cmocka_unit_test(test_seek_table_checksums),
        cmocka_unit_test(test_cut_file_recovers_and_fix),
        cmocka_unit_test(test_flushed_unfinished_is_readable),
        cmocka_unit_test(test_commands),
        cmocka_unit_test(test_foreign_frames_straddle),
        cmocka_unit_test(test_compressed_pipe_and_fifo),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
#else
static void test_not_built(void **state) {
    (void)state;
    skip();
}
int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_not_built)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
#endif
