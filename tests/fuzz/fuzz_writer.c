// fuzz-flags: -max_len=8192

/* fuzz_writer - the container writer with options and frames built from the input, read
   back by the memory and stream readers, whole and cut at an arbitrary byte.

   Invariants:
   - every frame added is read back, in order, equal to what was added (frames added with
     frames_writer_add_encoded come back byte for byte);
   - a finished trace (seekable sink) has the header's n and T, its TOC convention is among
     those the reader finds, the TOC validates and is used, and seek(i) agrees with
     sequential reading; an unseekable sink leaves a readable unfinished trace;
   - caller-provided buffer and TOC storage give the same bytes as allocated ones, or
     FRAMES_E_NOMEM when the TOC storage is too small; FILE* and fd sinks the same bytes
     as a memory sink;
   - buffer sizes (allocated and caller-provided) are the input's, down to the header and
     meta frame alone, and frames may be empty (FRAMES_KIND_NONE, lenient encoding), so
     that a frame, or its 8-byte size prefix, meets the end of the buffer at every offset
     (issue 27: an empty frame's prefix was written past a buffer with 8 or fewer bytes
     left);
   - the trace cut at any byte reads back exactly the frames wholly inside the cut, with
     the truncation reported at the first incomplete record (an empty frame that ends the
     cut may read as the zero-filled end of an unfinished trace).

   Input: 4 bytes of options, 1 byte frame count, 2 bytes of buffer sizes, the frames. */
#include "fuzz_util.h"
#include "fuzz_model.h"

#define FZ_MAX_FRAMES 40

typedef struct fz_sink {
    uint8_t *p;
    size_t len, cap;
    int fail_after;   /* writes allowed before failing (-1: never) */
} fz_sink;

static int fz_sink_write(void *ctx, const void *data, size_t len) {
    fz_sink *s = (fz_sink *)ctx;
    if (s->fail_after == 0) return FRAMES_E_IO;
    if (s->fail_after > 0) s->fail_after--;
    if (s->len + len > s->cap) {
        size_t ncap = (s->len + len) * 2 + 64;
        uint8_t *np = (uint8_t *)realloc(s->p, ncap);
        if (!np) return FRAMES_E_IO;
        s->p = np;
        s->cap = ncap;
    }
    memcpy(s->p + s->len, data, len);
    s->len += len;
    return FRAMES_OK;
}

static int fz_sink_patch(void *ctx, uint64_t off, const void *data, size_t len) {
    fz_sink *s = (fz_sink *)ctx;
    FZ_CHECK(off + len <= s->len);
    memcpy(s->p + off, data, len);
    return FRAMES_OK;
}

typedef struct fz_added {
    int encoded;            /* added with add_encoded */
    frames_frame f;         /* model (arrays in store) */
    uint8_t *bytes;         /* its encoding, as written */
    size_t len;
} fz_added;

static fz_store stores[FZ_MAX_FRAMES];
static fz_added added[FZ_MAX_FRAMES];
static uint64_t offsets[FZ_MAX_FRAMES + 1];

/* Write the frames; returns the writer status of finish/close. */
static int fz_write(const frames_writer_options *o, fz_sink *sink, int seekable, size_t nadd,
                    int *add_rc_out) {
    frames_writer *w;
    frames_sink s;
    frames_error err;
    size_t i;
    int rc, add_rc = FRAMES_OK;
    memset(&s, 0, sizeof s);
    s.ctx = sink;
    s.write = fz_sink_write;
    s.patch = seekable ? fz_sink_patch : NULL;
    rc = frames_writer_open(&w, &s, o, NULL, &err);
    if (rc < 0) {
        *add_rc_out = rc;
        return rc;
    }
    for (i = 0; i < nadd && add_rc == FRAMES_OK; i++) {
        if (added[i].encoded) add_rc = frames_writer_add_encoded(w, added[i].bytes, added[i].len);
        else add_rc = frames_writer_add(w, &added[i].f);
        if (add_rc == FRAMES_OK) FZ_CHECK(frames_writer_count(w) == i + 1);
    }
    *add_rc_out = add_rc;
    if (add_rc < 0 && getenv("FZ_DEBUG")) fprintf(stderr, "add: %s\n", frames_writer_error(w)->message);
    if (add_rc < 0) {
        frames_writer_abandon(w);
        return add_rc;
    }
    return frames_writer_close(w);
}

/* Every frame of a cut trace that lies wholly inside the cut must come back. */
static void fz_check_cut(const uint8_t *p, size_t cut, size_t n, int finished) {
    frames_reader *r;
    frames_reader_info st;
    frames_raw raw;
    frames_error err;
    size_t whole = 0, k = 0;
    int rc;
    while (whole < n && offsets[whole + 1] <= cut) whole++;
    if (getenv("FZ_DEBUG")) { /* FZ_DEBUG=1 fuzz_writer INPUT: the cut trace in fz_cut.frames */
        FILE *dbg = fopen("fz_cut.frames", "wb");
        if (dbg) {
            fwrite(p, 1, cut, dbg);
            fclose(dbg);
        }
        fprintf(stderr, "cut at %zu: %zu of %zu frames whole\n", cut, whole, n);
    }
    rc = frames_reader_open_memory(&r, p, cut, NULL, &err);
    if (cut < offsets[0]) { /* inside the header or meta */
        FZ_CHECK(rc < 0);
        return;
    }
    FZ_CHECK(rc == FRAMES_OK);
    while ((rc = frames_reader_next_raw(r, &raw)) > 0) {
        FZ_CHECK(k < whole && raw.offset == offsets[k]);
        FZ_CHECK(raw.payload.len == added[k].len &&
                 memcmp(raw.payload.ptr, added[k].bytes, added[k].len) == 0);
        k++;
    }
    /* an empty record that ends an unfinished trace is its zero-filled tail */
    FZ_CHECK(rc == 0 && (k == whole || (k + 1 == whole && added[k].len == 0 && cut == offsets[whole])));
    FZ_CHECK(frames_reader_info_get(r, &st) == FRAMES_OK);
    if (cut > offsets[whole] && whole < n) {
        /* a lone size word after the frames of an unfinished trace may also be the m that
           libtrace writes to pipes: then it is not a truncation (see frames.h) */
        uint64_t v = added[whole].len;
        int pipe_like = !finished && cut - offsets[whole] == 8 && v == 10000 &&
                        (whole ? (whole - 1) / v : 0) == 0;
        FZ_CHECK(pipe_like || (st.truncated && st.truncated_offset == offsets[whole] &&
                               st.truncated_bytes == cut - offsets[whole]));
    }
    frames_reader_close(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    frames_writer_options o;
    fz_sink a, b;
    fz_in in;
    size_t n, i, cut;
    uint64_t opts, sizes, toc_storage[8];
    uint8_t wbuf[600];
    size_t wbuf_size, msize;
    frames_meta meta;
    int seekable, rc, rc2, add_rc, add_rc2;
    size_t base = hc_state.live;
    hc_mark();

    in.p = data;
    in.n = size;
    opts = fz_take(&in, 4);
    n = (size_t)fz_take(&in, 1) % (FZ_MAX_FRAMES + 1);
    sizes = fz_take(&in, 2);
    frames_writer_options_default(&o);
    seekable = !((opts >> 24) & 1);
    o.version = opts & 1 ? 2 : 3;
    o.frames_per_toc = 1 + (opts >> 1) % 7;
    o.toc = 1 + (int)((opts >> 4) % 4);
    o.encode_flags = FRAMES_ENC_LENIENT;
    o.arch = (opts >> 6) & 0xff;
    /* small buffers of any size (frames larger than the buffer take the writer's other
       path; the writer raises an allocated buffer to hold header and meta) */
    o.buffer_size = (opts >> 14) & 1 ? (size_t)(sizes & 0x3ff) : 0;
    /* an empty meta frame lets a caller's buffer be smaller than the header (which then
       goes straight to the sink), even smaller than a size prefix */
    if ((opts >> 27) & 1) o.meta_raw = frames_bytes_of("", 0);
    memset(&meta, 0, sizeof meta);
    msize = o.meta_raw.ptr ? 0 : frames_meta_size(&meta);
    wbuf_size = (size_t)((sizes >> 10) * 37 + (opts >> 15)) % (sizeof wbuf + 1);
    for (i = 0; i < n; i++) {
        fz_added *x = &added[i];
        fz_build_frame(&in, &x->f, &stores[i]);
        /* an empty record at the end of an unfinished trace reads as the end of the trace
           (a zero-filled tail after a crash), so the last frame of one is never empty */
        if (fz_options(&x->f) == 0 && i + 1 == n && !seekable) x->f.kind = FRAMES_KIND_EXCEPTION;
        x->len = frames_frame_size(&x->f);
        x->bytes = (uint8_t *)malloc(x->len + 1);
        FZ_CHECK(x->bytes);
        FZ_CHECK(frames_encode_frame(&x->f, FRAMES_ENC_LENIENT, x->bytes, x->len, &x->len, NULL) ==
                 FRAMES_OK);
        x->encoded = (int)(fz_take(&in, 1) & 1);
    }

    memset(&a, 0, sizeof a);
    a.fail_after = -1;
    rc = fz_write(&o, &a, seekable, n, &add_rc);
    FZ_CHECK(add_rc == FRAMES_OK);
    FZ_CHECK(rc == (seekable ? FRAMES_OK : FRAMES_UNFINISHED));

    /* where each frame is: after header and meta, one after the other */
    {
        frames_reader *r;
        frames_reader_info st;
        frames_frame f;
        frames_raw raw;
        frames_error err;
        uint64_t count;
        FZ_CHECK(frames_reader_open_memory(&r, a.p, a.len, NULL, &err) == FRAMES_OK);
        offsets[0] = frames_reader_header(r)->first_frame;
        for (i = 0; i < n; i++) {
            FZ_CHECK(frames_reader_next(r, &f) == 1);
            FZ_CHECK(fz_frame_eq(&f, &added[i].f));
            offsets[i + 1] = offsets[i] + 8 + added[i].len;
        }
        FZ_CHECK(frames_reader_next(r, &f) == 0);
        FZ_CHECK(frames_reader_info_get(r, &st) == FRAMES_OK);
        FZ_CHECK(!st.truncated && st.nframes == n && st.finished == seekable);
        if (seekable) {
            FZ_CHECK(st.header.nframes == n && st.header.toc_offset == offsets[n]);
            FZ_CHECK(st.toc_used);
            if (n > 0) FZ_CHECK(st.toc_matches & (1u << o.toc));
        } else {
            FZ_CHECK(st.header.nframes == 0 && st.header.toc_offset == 0 && a.len == offsets[n]);
        }
        FZ_CHECK(frames_reader_count(r, &count) == FRAMES_OK && count == n);
        for (i = n; i-- > 0;) {
            FZ_CHECK(frames_reader_seek(r, i) == FRAMES_OK);
            FZ_CHECK(frames_reader_next_raw(r, &raw) == 1 && raw.offset == offsets[i]);
        }
        frames_reader_close(r);
    }

    /* caller storage: no allocation, same bytes (or out of TOC room) */
    {
        size_t need = n > 0 ? (n - 1) / o.frames_per_toc : 0;
        frames_writer_options o2 = o;
        o2.buffer = wbuf;
        o2.buffer_size = wbuf_size;
        o2.toc_storage = toc_storage;
        o2.toc_capacity = sizeof toc_storage / sizeof toc_storage[0];
        memset(&b, 0, sizeof b);
        b.fail_after = -1;
        rc2 = fz_write(&o2, &b, seekable, n, &add_rc2);
        if (wbuf_size < 56 + msize && (wbuf_size >= 56 || wbuf_size < msize)) {
            FZ_CHECK(add_rc2 == FRAMES_E_SPACE); /* header and meta do not fit */
        } else if (need > o2.toc_capacity) {
            FZ_CHECK(add_rc2 == FRAMES_E_NOMEM);
        } else {
            FZ_CHECK(add_rc2 == FRAMES_OK && rc2 == rc);
            FZ_CHECK(b.len == a.len && memcmp(a.p, b.p, a.len) == 0);
        }
        free(b.p);
    }

    /* the FILE* and fd sinks write the same bytes (some inputs: real files are slow) */
    if ((opts >> 25) & 3) {
        FILE *f = tmpfile();
        frames_writer *w;
        FZ_CHECK(f != NULL);
        if ((opts >> 25) & 1) FZ_CHECK(frames_writer_open_file(&w, f, &o, NULL, NULL) == FRAMES_OK);
        else FZ_CHECK(frames_writer_open_fd(&w, fileno(f), &o, NULL, NULL) == FRAMES_OK);
        for (i = 0; i < n; i++) {
            if (added[i].encoded) FZ_CHECK(frames_writer_add_encoded(w, added[i].bytes, added[i].len) == FRAMES_OK);
            else FZ_CHECK(frames_writer_add(w, &added[i].f) == FRAMES_OK);
        }
        FZ_CHECK(frames_writer_close(w) == FRAMES_OK);
        if (seekable) { /* a pipe-like sink writes no TOC: only compare seekable output */
            uint8_t *back = (uint8_t *)malloc(a.len + 1);
            FZ_CHECK(back != NULL);
            fflush(f);
            FZ_CHECK(fseek(f, 0, SEEK_END) == 0 && (size_t)ftell(f) == a.len);
            rewind(f);
            FZ_CHECK(fread(back, 1, a.len, f) == a.len && memcmp(back, a.p, a.len) == 0);
            free(back);
        }
        fclose(f);
    }

    /* a sink that fails: an error, no crash, nothing leaked */
    memset(&b, 0, sizeof b);
    b.fail_after = (int)(fz_take(&in, 1) % 8);
    rc2 = fz_write(&o, &b, seekable, n, &add_rc2);
    FZ_CHECK(rc2 == FRAMES_OK || rc2 == FRAMES_UNFINISHED || rc2 == FRAMES_E_IO ||
             rc2 == FRAMES_E_STATE);
    free(b.p);

    /* cut anywhere */
    cut = a.len ? (size_t)(fz_take(&in, 4) % (a.len + 1)) : 0;
    fz_check_cut(a.p, cut, n, seekable);
    if (n > 0) fz_check_cut(a.p, (size_t)offsets[n - 1] + 8 + added[n - 1].len / 2, n, seekable);

    for (i = 0; i < n; i++) free(added[i].bytes);
    free(a.p);
    FZ_CHECK(hc_state.live == base);
    FZ_CHECK_MEMORY(base, size);
    return 0;
}
