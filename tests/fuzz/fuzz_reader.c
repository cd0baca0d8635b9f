// fuzz-seeds: files vectors/frames/*.frames
// fuzz-seeds: unfinished vectors/frames/*.frames
// fuzz-flags: -max_len=65536

/* fuzz_reader - the container reader on arbitrary files: memory, stream (callback with
   random read sizes, FILE*), seek, count, index, cursors, stat, warnings.

   Invariants:
   - every reader terminates: each call that returns a record or an error moves forward;
   - the memory reader with and without the TOC, and the stream readers, deliver the same
     records (offset, size, bytes) and the same errors, and report the same truncation;
   - frames_reader_count equals the records delivered; seek(i) and a cursor opened at i
     continue with record i; seek(count) ends the trace, seek(count + 1) is a range error;
   - decoding a record in the reader gives the same result as frames_decode_frame;
   - a record frames_reader_raw_is_canonical takes (also through the layout of an earlier
     record it took) decodes without a flag and encodes again to exactly its bytes;
   - with a small frame size limit the same records are delivered, those above the limit
     as FRAMES_E_LIMIT, and the stream reader agrees;
   - frames_fix turns every trace that opens into a finished trace with exactly the
     records read, and counts the ones that do not decode;
   - messages and warnings are NUL-terminated; memory held stays within fz_memory_bound. */
#include "fuzz_util.h"

#define FZ_MAX_EVENTS 20000

typedef struct fz_event {
    int rc;             /* 1 record, or the negative code */
    uint64_t index;     /* record index, or error frame */
    uint64_t offset;    /* record offset, or error offset */
    const uint8_t *ptr; /* payload (stream readers: valid only until the next call) */
    size_t len;
    uint64_t hash;      /* of the payload, for comparing with stream readers */
} fz_event;

static uint64_t fz_hash(const uint8_t *p, size_t n) {
    uint64_t h = 1469598103934665603ull;
    while (n--) h = (h ^ *p++) * 1099511628211ull;
    return h;
}

typedef struct fz_run {
    fz_event ev[FZ_MAX_EVENTS];
    size_t n;           /* events */
    uint64_t records;   /* records (delivered or refused by the limit) */
    int open_rc;
    frames_reader_info st;
    int stat_rc;
} fz_run;

static fz_run run_toc, run_notoc, run_stream, run_small, run_small_stream;

/* Sequential reading with next_raw until the end or an I/O error. */
static void fz_read_all(frames_reader *r, fz_run *out, size_t input_size) {
    size_t calls = 0;
    int rc;
    frames_raw raw;
    out->n = 0;
    out->records = 0;
    for (;;) {
        fz_event *e = &out->ev[out->n < FZ_MAX_EVENTS ? out->n : FZ_MAX_EVENTS - 1];
        FZ_CHECK(++calls <= input_size / 8 + 16); /* every call moves at least 8 bytes */
        rc = frames_reader_next_raw(r, &raw);
        if (rc == 0) {
            FZ_CHECK(frames_reader_next_raw(r, &raw) == 0); /* the end stays the end */
            break;
        }
        memset(e, 0, sizeof *e);
        e->rc = rc;
        if (rc > 0) {
            FZ_CHECK(raw.index == out->records);
            e->index = raw.index;
            e->offset = raw.offset;
            e->ptr = raw.payload.ptr;
            e->len = raw.payload.len;
            e->hash = fz_hash(e->ptr, e->len);
            out->records++;
        } else {
            const frames_error *err = frames_reader_error(r);
            FZ_CHECK(err->code == rc && strlen(err->message) < sizeof err->message);
            e->index = err->frame;
            e->offset = err->offset;
            if (rc == FRAMES_E_LIMIT) {
                FZ_CHECK(err->frame == out->records);
                out->records++;
            }
        }
        if (out->n < FZ_MAX_EVENTS) out->n++;
        if (rc == FRAMES_E_IO) break;
        FZ_CHECK(rc == 1 || rc == FRAMES_E_LIMIT);
    }
}

static void fz_check_stat(frames_reader *r, fz_run *out) {
    uint32_t i;
    out->stat_rc = frames_reader_info_get(r, &out->st);
    if (out->stat_rc < 0) return;
    FZ_CHECK(out->st.nwarnings <= 16);
    for (i = 0; i < out->st.nwarnings; i++) {
        const char *w = frames_reader_warning(r, i);
        FZ_CHECK(w && strlen(w) < 160);
    }
    FZ_CHECK(frames_reader_warning(r, out->st.nwarnings) == NULL);
    if (out->st.truncated) FZ_CHECK(out->st.truncated_bytes > 0);
}

static int fz_events_equal(const fz_run *a, const fz_run *b) {
    size_t i;
    if (a->n != b->n || a->records != b->records) return 0;
    for (i = 0; i < a->n; i++) {
        const fz_event *x = &a->ev[i], *y = &b->ev[i];
        if (x->rc != y->rc) return 0;
        if (x->rc > 0 && (x->offset != y->offset || x->len != y->len || x->hash != y->hash))
            return 0;
        if (x->rc == FRAMES_E_LIMIT && (x->offset != y->offset || x->index != y->index)) return 0;
    }
    return 1;
}

static int fz_same_truncation(const fz_run *a, const fz_run *b) {
    return a->st.truncated == b->st.truncated &&
           (!a->st.truncated || (a->st.truncated_offset == b->st.truncated_offset &&
                                 a->st.truncated_bytes == b->st.truncated_bytes));
}

/* Offset of record i in a run, or UINT64_MAX if it was not delivered as a record. */
static uint64_t fz_record_offset(const fz_run *run, uint64_t i) {
    size_t k;
    for (k = 0; k < run->n; k++) {
        const fz_event *e = &run->ev[k];
        if ((e->rc > 0 && e->index == i) || (e->rc == FRAMES_E_LIMIT && e->index == i))
            return e->offset;
    }
    return UINT64_MAX;
}

/* Random access must agree with sequential reading (exact when the TOC is ignored). */
static void fz_check_random_access(frames_reader *r, const fz_run *seq, int exact, uint64_t salt) {
    uint64_t n = 0, i, step;
    frames_raw raw;
    frames_cursor *c;
    frames_error err;
    int rc;
    rc = frames_reader_count(r, &n);
    FZ_CHECK(rc == FRAMES_OK);
    if (exact) FZ_CHECK(n == seq->records);
    FZ_CHECK(frames_reader_index(r) == FRAMES_OK);
    FZ_CHECK(frames_reader_seek(r, n + 1) == FRAMES_E_RANGE);
    FZ_CHECK(frames_reader_seek(r, n) == FRAMES_OK);
    FZ_CHECK(frames_reader_next_raw(r, &raw) == 0);
    step = n > 64 ? n / 16 + salt % 7 : 1;
    for (i = 0; i <= n && n <= seq->records; i += step) {
        FZ_CHECK(frames_reader_seek(r, i) == FRAMES_OK);
        FZ_CHECK(frames_reader_tell(r) == i);
        rc = frames_reader_next_raw(r, &raw);
        if (i == n) {
            FZ_CHECK(rc == 0);
            break;
        }
        FZ_CHECK(rc == 1 || rc == FRAMES_E_LIMIT);
        if (exact) {
            uint64_t off = rc == 1 ? raw.offset : frames_reader_error(r)->offset;
            FZ_CHECK(off == fz_record_offset(seq, i));
        }
        FZ_CHECK(frames_cursor_open(&c, r, i, &err) == FRAMES_OK);
        rc = frames_cursor_next_raw(c, &raw);
        FZ_CHECK(rc == 1 || rc == FRAMES_E_LIMIT);
        if (exact) {
            uint64_t off = rc == 1 ? raw.offset : frames_cursor_error(c)->offset;
            FZ_CHECK(off == fz_record_offset(seq, i));
        }
        FZ_CHECK(frames_cursor_tell(c) == i + 1);
        frames_cursor_close(c);
    }
    FZ_CHECK(frames_cursor_open(&c, r, n + 1, &err) == FRAMES_E_RANGE && c == NULL);
}

/* Decoding through the reader equals decoding the payload alone. */
static void fz_check_decoding(frames_reader *r, const fz_run *seq, uint32_t flags) {
    frames_frame f, g;
    frames_decoder d;
    frames_error err;
    size_t k;
    int rc;
    if (frames_reader_seek(r, 0) < 0) return;
    frames_decoder_init(&d, NULL, 0, NULL);
    d.strict = (flags & FRAMES_READ_STRICT) != 0;
    for (k = 0; k < seq->n && k < 2000; k++) {
        const fz_event *e = &seq->ev[k];
        rc = frames_reader_next(r, &f);
        if (e->rc == 1) {
            int want = frames_decode_frame(&d, e->ptr, e->len, &g, &err);
            FZ_CHECK(rc == (want == FRAMES_OK ? 1 : want));
            if (rc == 1) FZ_CHECK(f.flags == g.flags && f.kind == g.kind);
            else FZ_CHECK(frames_reader_error(r)->frame == e->index);
        } else {
            FZ_CHECK(rc == e->rc);
        }
    }
    frames_decoder_free(&d);
}

/* Every record the canonical check takes, whether by its walk or by the layout an earlier
   record left (the fuzzer's records are often such near copies), is what decoding and
   encoding it again gives. */
static void fz_check_canonical(frames_reader *r) {
    static uint8_t again[65536];
    frames_decoder d;
    frames_frame f;
    frames_raw raw;
    size_t n;
    int k;
    if (frames_reader_seek(r, 0) < 0) return;
    frames_decoder_init(&d, NULL, 0, NULL);
    for (k = 0; k < 2000 && frames_reader_next_raw(r, &raw) > 0; k++) {
        if (!frames_reader_raw_is_canonical(r, &raw)) continue;
        FZ_CHECK(frames_decode_frame(&d, raw.payload.ptr, raw.payload.len, &f, NULL) == FRAMES_OK);
        FZ_CHECK(f.flags == 0);
        n = 0;
        FZ_CHECK(frames_encode_frame(&f, FRAMES_ENC_LENIENT, again, sizeof again, &n, NULL) == FRAMES_OK);
        FZ_CHECK(n == raw.payload.len && memcmp(again, raw.payload.ptr, n) == 0);
    }
    frames_decoder_free(&d);
}

/* Stream input: a callback that returns pseudo-random short reads. */
typedef struct fz_src {
    const uint8_t *p;
    size_t n, pos;
    uint64_t rng;
    size_t fail_at; /* return an error once pos reaches this (0: never) */
} fz_src;

static long long fz_src_read(void *ctx, void *buf, size_t want) {
    fz_src *s = (fz_src *)ctx;
    size_t k;
    if (s->fail_at && s->pos >= s->fail_at) return -1;
    if (s->pos >= s->n) return 0;
    s->rng ^= s->rng << 13;
    s->rng ^= s->rng >> 7;
    s->rng ^= s->rng << 17;
    k = 1 + (size_t)(s->rng % 4096);
    if (s->rng & 0x100000) k = 1 + (size_t)(s->rng % 9);
    if (k > want) k = want;
    if (k > s->n - s->pos) k = s->n - s->pos;
    memcpy(buf, s->p + s->pos, k);
    s->pos += k;
    return (long long)k;
}

static int fz_open_stream(frames_reader **r, const uint8_t *data, size_t size, fz_src *src,
                          const frames_reader_options *o, size_t fail_at) {
    frames_io io;
    frames_error err;
    memset(src, 0, sizeof *src);
    src->p = data;
    src->n = size;
    src->rng = 0x9e3779b97f4a7c15ull ^ size;
    src->fail_at = fail_at;
    io.ctx = src;
    io.read = fz_src_read;
    io.close = NULL;
    return frames_reader_open_io(r, &io, o, &err);
}

/* frames_fix output: a finished trace holding exactly the records read (fz_run). */
static void fz_check_fix(const uint8_t *data, size_t size, const fz_run *seq) {
    frames_reader *r, *back;
    frames_reader_info st;
    frames_fix_report rep;
    frames_error err;
    frames_sink sink;
    frames_frame f;
    fz_mem out;
    fz_run *again = &run_small_stream;
    uint64_t undecodable = 0;
    size_t k;
    int rc;
    if (frames_reader_open_memory(&r, data, size, NULL, &err) < 0) return;
    memset(&out, 0, sizeof out);
    memset(&sink, 0, sizeof sink);
    sink.ctx = &out;
    sink.write = fz_mem_write;
    sink.patch = fz_mem_patch;
    rc = frames_fix(r, &sink, NULL, &rep, &err);
    frames_reader_close(r);
    for (k = 0; k < seq->n; k++)
        if (seq->ev[k].rc == FRAMES_E_LIMIT) { /* fix stops at a refused record */
            FZ_CHECK(rc == FRAMES_E_LIMIT);
            free(out.p);
            return;
        }
    FZ_CHECK(rc == FRAMES_OK);
    FZ_CHECK(rep.frames == seq->records);
    FZ_CHECK(frames_reader_open_memory(&back, out.p, out.len, NULL, &err) == FRAMES_OK);
    fz_read_all(back, again, out.len);
    FZ_CHECK(again->records == seq->records && again->n == seq->n);
    for (k = 0; k < seq->n; k++)
        FZ_CHECK(again->ev[k].len == seq->ev[k].len && again->ev[k].hash == seq->ev[k].hash);
    FZ_CHECK(frames_reader_info_get(back, &st) == FRAMES_OK);
    FZ_CHECK(st.finished && st.toc_used && !st.truncated && st.nframes == seq->records);
    FZ_CHECK(frames_reader_seek(back, 0) == FRAMES_OK);
    while ((rc = frames_reader_next(back, &f)) != 0) undecodable += rc < 0;
    FZ_CHECK(undecodable == rep.undecodable);
    frames_reader_close(back);
    free(out.p);
}

/* Names, meta accessors and decoding cursors: total functions on any reader state. */
static void fz_check_accessors(frames_reader *r, const fz_run *seq) {
    const frames_header *h = frames_reader_header(r);
    const frames_meta *m = frames_reader_meta(r);
    frames_bytes mb = frames_reader_meta_bytes(r);
    frames_cursor *c;
    frames_frame f;
    const char *name = frames_arch_name(h->arch);
    FZ_CHECK(name != NULL && strlen(name) > 0);
    FZ_CHECK(strlen(frames_toc_name((int)(h->nframes % 11) - 1)) > 0);
    FZ_CHECK(strlen(frames_kind_name((int)(h->machine % 11) - 1)) > 0);
    FZ_CHECK(strlen(frames_strerror(-(int)(h->version % 15))) > 0);
    if (m) FZ_CHECK(mb.ptr != NULL && mb.len == h->meta_size);
    if (seq->records > 0 && frames_cursor_open(&c, r, seq->records - 1, NULL) == FRAMES_OK) {
        int rc = frames_cursor_next(c, &f);
        FZ_CHECK(rc == 1 || rc == FRAMES_E_DECODE || rc == FRAMES_E_LIMIT);
        FZ_CHECK(frames_cursor_next(c, &f) == 0);
        frames_cursor_close(c);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    frames_reader *r;
    frames_reader_options o;
    frames_error err;
    fz_src src;
    size_t base = hc_state.live;
    hc_mark();

    /* memory, default options (the TOC is used when it validates) */
    frames_reader_options_default(&o);
    run_toc.open_rc = frames_reader_open_memory(&r, data, size, &o, &err);
    FZ_CHECK(run_toc.open_rc == FRAMES_OK ? r != NULL && err.code == 0
                                          : r == NULL && err.code == run_toc.open_rc);
    if (run_toc.open_rc == FRAMES_OK) {
        fz_read_all(r, &run_toc, size);
        fz_check_stat(r, &run_toc);
        FZ_CHECK(run_toc.stat_rc == FRAMES_OK);
        fz_check_random_access(r, &run_toc, 0, size);
        fz_check_decoding(r, &run_toc, 0);
        fz_check_canonical(r);
        frames_reader_close(r);
    }

    /* memory, TOC ignored: same records; random access exact */
    o.flags = FRAMES_READ_IGNORE_TOC;
    run_notoc.open_rc = frames_reader_open_memory(&r, data, size, &o, &err);
    FZ_CHECK(run_notoc.open_rc == run_toc.open_rc);
    if (run_notoc.open_rc == FRAMES_OK) {
        fz_read_all(r, &run_notoc, size);
        fz_check_stat(r, &run_notoc);
        FZ_CHECK(fz_events_equal(&run_toc, &run_notoc));
        FZ_CHECK(fz_same_truncation(&run_toc, &run_notoc));
        fz_check_random_access(r, &run_notoc, 1, size);
        fz_check_accessors(r, &run_notoc);
        frames_reader_close(r);
        fz_check_fix(data, size, &run_notoc);
    }

    /* stream with random short reads: same records, same truncation */
    frames_reader_options_default(&o);
    run_stream.open_rc = fz_open_stream(&r, data, size, &src, &o, 0);
    FZ_CHECK(run_stream.open_rc == run_toc.open_rc);
    if (run_stream.open_rc == FRAMES_OK) {
        uint64_t n;
        FZ_CHECK(frames_reader_seek(r, 0) == FRAMES_E_UNSUPPORTED);
        FZ_CHECK(frames_reader_count(r, &n) == FRAMES_E_UNSUPPORTED);
        fz_read_all(r, &run_stream, size);
        fz_check_stat(r, &run_stream);
        FZ_CHECK(run_stream.stat_rc == FRAMES_OK);
        FZ_CHECK(fz_events_equal(&run_notoc, &run_stream));
        FZ_CHECK(fz_same_truncation(&run_notoc, &run_stream));
        FZ_CHECK(run_stream.st.nframes == run_notoc.st.nframes);
        FZ_CHECK(frames_reader_count(r, &n) == FRAMES_OK && n == run_stream.records);
        frames_reader_close(r);
    }

    /* a stream that fails part-way: errors, never a crash or a hang */
    if (size > 8) {
        frames_reader_options_default(&o);
        if (fz_open_stream(&r, data, size, &src, &o, 48 + size % (size - 7)) == FRAMES_OK) {
            fz_run *tmp = &run_small_stream;
            fz_read_all(r, tmp, size);
            fz_check_stat(r, tmp);
            frames_reader_close(r);
        }
    }

    /* a small frame size limit: records above it are refused one by one, the same way by
       memory and stream readers */
    frames_reader_options_default(&o);
    o.limits.max_frame_size = 40;
    o.flags = FRAMES_READ_IGNORE_TOC;
    run_small.open_rc = frames_reader_open_memory(&r, data, size, &o, &err);
    if (run_small.open_rc == FRAMES_OK) {
        size_t k;
        fz_read_all(r, &run_small, size);
        fz_check_stat(r, &run_small);
        /* the same records at the same offsets; a smaller limit may only add records at
           the end of an unfinished trace, where bytes it cannot judge (an oversized last
           record, a TOC larger than the limit) stay records instead of being dropped as
           garbage or recognised as a killed writer's TOC */
        FZ_CHECK(run_small.records >= run_notoc.records);
        for (k = 0; k < run_notoc.n; k++) {
            const fz_event *x = &run_notoc.ev[k], *y = &run_small.ev[k];
            FZ_CHECK(x->rc > 0 ? (y->rc > 0 || y->rc == FRAMES_E_LIMIT) : y->rc == x->rc);
            FZ_CHECK(y->offset == x->offset);
        }
        for (k = 0; k < run_small.n; k++)
            if (run_small.ev[k].rc > 0) FZ_CHECK(run_small.ev[k].len <= 40);
        fz_check_random_access(r, &run_small, 1, size);
        frames_reader_close(r);
        FZ_CHECK(fz_open_stream(&r, data, size, &src, &o, 0) == FRAMES_OK);
        fz_read_all(r, &run_small_stream, size);
        fz_check_stat(r, &run_small_stream);
        FZ_CHECK(fz_events_equal(&run_small, &run_small_stream));
        frames_reader_close(r);
    } else {
        FZ_CHECK(run_small.open_rc == FRAMES_E_LIMIT || run_small.open_rc == run_toc.open_rc);
    }

#ifndef FRAMES_NO_STDIO
    /* FILE* stream, lenient header checks, strict decoding */
    {
        FILE *f = fmemopen((void *)(uintptr_t)data, size ? size : 1, "rb");
        if (f && size) {
            frames_reader_options_default(&o);
            o.flags = FRAMES_READ_STRICT | FRAMES_READ_ANY_VERSION | FRAMES_READ_IGNORE_MAGIC;
            if (frames_reader_open_file(&r, f, &o, &err) == FRAMES_OK) {
                frames_frame fr;
                size_t calls = 0;
                int rc;
                while ((rc = frames_reader_next(r, &fr)) != 0 && rc != FRAMES_E_IO)
                    FZ_CHECK(++calls <= size / 8 + 16);
                fz_check_stat(r, &run_small_stream);
                frames_reader_close(r);
            }
        }
        if (f) fclose(f);
    }
#endif

    FZ_CHECK(hc_state.live == base);
    FZ_CHECK_MEMORY(base, size);
    return 0;
}
