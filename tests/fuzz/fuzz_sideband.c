// fuzz-needs: intel-pt.h -lipt
// fuzz-seeds: pevent vectors/pt/*/sb-*.pevent
// fuzz-flags: -max_len=8192 -dict=tests/fuzz/sideband.dict

/* fuzz_sideband - frames_pt.h's perf_event sideband: the record parser, perf time to TSC,
   and applying records while a fixed PT trace (tests/ptsynth.h, with TSC packets) is
   decoded: process images, fork, exec, context switches, MMAP of files (only files of a
   private directory), primary and secondary sources.

   Input: a 40-byte configuration, then the records:
       0 u64 sample_type   8 u64 time_zero   16 u32 time_mult   20 u16 time_shift
      22 u16 flags: bit 0 a secondary source (the records again), bit 1 tick events,
         bit 2 records past the middle go to the secondary source instead, bit 3 the
         instruction-flow decoder
      24 u64 tsc_offset   32 u64 kernel_start
   Seeds: the sideband files of ../shared/vectors/pt with their case's settings, and
   tests/fuzz/seeds/fuzz_sideband/ (every record type with every sample field).

   Invariants:
   - parsing walks the stream record by record: each record lies inside the input, its
     size is the one in its header, its name is NUL-terminated inside it, its sample
     fields are those of the sample type; parsing stops only at the end, a zero type, or
     an error that fits the bytes (-pte_eos only for a record cut by the end);
   - prefix property: a prefix parses to exactly the records wholly inside it, then the
     end or -pte_eos;
   - perf time to TSC is exact (the floor of (time - zero) * 2^shift / mult), saturated
     when it does not fit, hence monotonic in time;
   - while decoding, every record applied is one the parser found, in order per source,
     and the counts of records and diagnostics are the statistics'; formatted records
     are NUL-terminated also in short buffers; decoding is deterministic and writes a
     trace that reads back. */
#include "fuzz_util.h"
#include "fuzz_pt.h"
#include "../ptsynth.h"

#define FZ_MAX_RECS 2048

typedef struct fz_rec {
    size_t off, size;
    uint32_t type;
} fz_rec;

typedef struct fz_parse {
    fz_rec rec[FZ_MAX_RECS];
    size_t n;
    size_t end;        /* offset where parsing stopped */
    long status;       /* 0 (end) or the negative code there */
} fz_parse;

static uint64_t fz_le(const uint8_t *p, unsigned n) {
    uint64_t v = 0;
    while (n--) v = v << 8 | p[n];
    return v;
}

/* floor((time - zero) * 2^shift / mult), UINT64_MAX when larger; 0 without conversion */
static uint64_t fz_exact_tsc(const frames_pt_sb_config *c, uint64_t time) {
    unsigned __int128 v;
    if (!time || !c->time_mult || c->time_shift > 63) return 0;
    v = ((unsigned __int128)(time - c->time_zero) << c->time_shift) / c->time_mult;
    return v >> 64 ? UINT64_MAX : (uint64_t)v;
}

static void fz_check_record(const frames_pt_sb_config *c, const uint8_t *rec, size_t size,
                            const frames_pt_sb_record *r) {
    uint64_t known = FRAMES_PERF_SAMPLE_TID | FRAMES_PERF_SAMPLE_TIME | FRAMES_PERF_SAMPLE_ID |
                     FRAMES_PERF_SAMPLE_STREAM_ID | FRAMES_PERF_SAMPLE_CPU | FRAMES_PERF_SAMPLE_IDENTIFIER;
    FZ_CHECK(r->size == size && size >= 8 && r->type == fz_le(rec, 4) && r->misc == fz_le(rec + 4, 2));
    FZ_CHECK((r->samples & ~known) == 0);
    if (r->name) {
        const uint8_t *nm = (const uint8_t *)r->name;
        FZ_CHECK(nm >= rec + 8 && nm < rec + size);
        FZ_CHECK(memchr(nm, 0, (size_t)(rec + size - nm)) != NULL);
    }
    if (r->samples & FRAMES_PERF_SAMPLE_TIME) FZ_CHECK(r->tsc == fz_exact_tsc(c, r->s_time));
    else FZ_CHECK(r->tsc == 0);
}

static void fz_parse_all(const frames_pt_sb_config *c, const uint8_t *d, size_t n, fz_parse *out) {
    size_t off = 0;
    out->n = 0;
    out->status = 0;
    for (;;) {
        frames_pt_sb_record r;
        long rc = frames__pt_parse_record(c, d + off, n - off, &r);
        if (rc <= 0) {
            FZ_CHECK(rc == 0 || rc == -pte_eos || rc == -pte_nosync || rc == -pte_bad_packet ||
                     rc == -pte_bad_config);
            if (rc == 0) FZ_CHECK(off == n || (n - off >= 8 && fz_le(d + off, 4) == 0));
            if (rc == -pte_eos) FZ_CHECK(n - off < 8 || fz_le(d + off + 6, 2) > n - off);
            if (rc == -pte_nosync && n - off >= 8 && fz_le(d + off + 6, 2) >= 8)
                FZ_CHECK(fz_le(d + off + 6, 2) <= n - off);
            out->status = rc;
            out->end = off;
            return;
        }
        FZ_CHECK((size_t)rc <= n - off);
        fz_check_record(c, d + off, (size_t)rc, &r);
        if (out->n < FZ_MAX_RECS) {
            out->rec[out->n].off = off;
            out->rec[out->n].size = (size_t)rc;
            out->rec[out->n].type = r.type;
            out->n++;
        }
        off += (size_t)rc;
    }
}

/* A prefix parses to the records wholly inside it, then the end or -pte_eos. */
static void fz_check_prefix(const frames_pt_sb_config *c, const uint8_t *d, const fz_parse *full,
                            size_t cut) {
    static fz_parse p;
    uint8_t *copy = (uint8_t *)malloc(cut ? cut : 1);
    size_t i, whole = 0;
    FZ_CHECK(copy);
    memcpy(copy, d, cut);
    fz_parse_all(c, copy, cut, &p);
    while (whole < full->n && full->rec[whole].off + full->rec[whole].size <= cut) whole++;
    if (whole < FZ_MAX_RECS) {
        FZ_CHECK(p.n == whole);
        for (i = 0; i < whole; i++) FZ_CHECK(p.rec[i].off == full->rec[i].off && p.rec[i].size == full->rec[i].size);
        if (p.end == cut) FZ_CHECK(p.status == 0);   /* nothing left */
        else if (p.end < full->end) FZ_CHECK(p.status == -pte_eos);
        else FZ_CHECK(p.end == full->end && (p.status == full->status || p.status == -pte_eos));
    }
    free(copy);
}

/* ---------------------------------------------------------------- decoding */

static uint8_t *fz_trace;   /* ptsynth over ptsynth_code at FZ_BASE, TSC packets */
static size_t fz_trace_len;
static const char *fz_code_path;
#define FZ_BASE 0x400000ull

static void fz_init(void) {
    ptsynth s;
    uint64_t calls[3], jumps[3];
    if (fz_trace) return;
    ptsynth_init_default(&s, FZ_BASE, 7, calls, jumps);
    s.tsc_every = 16;
    s.psb_every = 512;
    FZ_CHECK(ptsynth_walk(&s, FZ_BASE, 400) == 0);
    fz_trace = (uint8_t *)malloc(s.len);
    FZ_CHECK(fz_trace);
    memcpy(fz_trace, s.trace, s.len);
    fz_trace_len = s.len;
    ptsynth_free(&s);
    fz_code_path = fz_put_file("code.bin", ptsynth_code, sizeof ptsynth_code);
}

typedef struct fz_src {
    const char *name;
    const uint8_t *data;
    size_t size;
    const fz_parse *parse;
    size_t next;          /* index of the next record expected in parse */
} fz_src;

typedef struct fz_seen {
    fz_src src[2];
    unsigned nsrc;
    uint64_t records, diags, contexts;
    int stopped;
} fz_seen;

static int fz_on_record(void *ctx, const frames_pt_sb_record *r) {
    fz_seen *s = (fz_seen *)ctx;
    fz_src *src = NULL;
    char buf[512], small[11];
    unsigned i;
    for (i = 0; i < s->nsrc; i++)
        if (!strcmp(r->source, s->src[i].name)) src = &s->src[i];
    FZ_CHECK(src && r->primary == (src == &s->src[0]));
    FZ_CHECK(r->offset < src->size && r->size <= src->size - r->offset);
    /* the next record of its source that the parser found (records are applied in order) */
    while (src->next < src->parse->n && src->parse->rec[src->next].off < r->offset) src->next++;
    if (src->next < src->parse->n) {
        FZ_CHECK(src->parse->rec[src->next].off == r->offset && src->parse->rec[src->next].size == r->size);
        src->next++;
    }
    s->records++;
    FZ_CHECK(frames_pt_format_sb_record(buf, sizeof buf, r, FRAMES_PT_PRINT_SB_COMPACT) >= 0);
    FZ_CHECK(strlen(buf) < sizeof buf);
    FZ_CHECK(frames_pt_format_sb_record(buf, sizeof buf, r, FRAMES_PT_PRINT_SB_VERBOSE) >= 0);
    FZ_CHECK(strlen(buf) < sizeof buf);
    memset(small, 'x', sizeof small);
    frames_pt_format_sb_record(small, sizeof small, r, FRAMES_PT_PRINT_SB_VERBOSE);
    FZ_CHECK(memchr(small, 0, sizeof small) != NULL);
    if (fz_unsafe_name(r)) return s->stopped = 1;
    return 0;
}

static int fz_on_diag(void *ctx, int code, const char *source, uint64_t off) {
    fz_seen *s = (fz_seen *)ctx;
    unsigned i;
    int found = 0;
    FZ_CHECK(code != 0);
    for (i = 0; i < s->nsrc; i++)
        if (!strcmp(source, s->src[i].name)) {
            found = 1;
            FZ_CHECK(off <= s->src[i].size);
        }
    FZ_CHECK(found);
    if (code > 0) FZ_CHECK(frames_pt_sb_strerror(code) != NULL);
    s->diags++;
    return 0;
}

static int fz_on_context(void *ctx, const char *name, uint32_t pid, uint32_t tid) {
    fz_seen *s = (fz_seen *)ctx;
    (void)pid;
    (void)tid;
    FZ_CHECK(name && name[0]);
    s->contexts++;
    return 0;
}

/* Add a perf sideband source to pt and to what the callbacks expect of it (seen). The
   primary one is borrowed, a secondary one copied: both ways are exercised. */
static void fz_add_source(frames_pt *pt, const frames_pt_sb_config *c, fz_seen *seen, const char *name,
                          const uint8_t *data, size_t size, const fz_parse *parse, int primary) {
    frames_error err;
    fz_src *src = &seen->src[seen->nsrc++];
    src->name = name;
    src->data = data;
    src->size = size;
    src->parse = parse;
    FZ_CHECK(frames_pt_add_pevent(pt, c, name, data, size, primary, !primary, &err) == FRAMES_OK);
}

static void fz_decode(const frames_pt_sb_config *c, unsigned flags, const uint8_t *sb, size_t n,
                      const fz_parse *parse, const fz_parse *parse2, size_t split, fz_mem *out,
                      frames_pt_stats *st) {
    frames_pt_options o;
    frames_pt *pt;
    frames_pt_callbacks cb;
    frames_error err;
    frames_writer *w;
    fz_seen seen;
    int rc;
    memset(&seen, 0, sizeof seen);
    frames_pt_options_default(&o);
    o.tick_events = (flags >> 1) & 1;
    o.decoder = (flags & 8) ? FRAMES_PT_DECODER_INSN : FRAMES_PT_DECODER_BLOCK;
    o.default_tid = 99;
    FZ_CHECK(frames_pt_open(&pt, &o, &err) == FRAMES_OK);
    FZ_CHECK(frames_pt_set_trace(pt, fz_trace, fz_trace_len, &err) == FRAMES_OK);
    FZ_CHECK(frames_pt_add_raw(pt, fz_code_path, 0, 0, FZ_BASE, &err) == FRAMES_OK);
    fz_add_source(pt, c, &seen, "primary", sb, split, parse, 1);
    if (split < n || (flags & 1)) {
        if (split < n) fz_add_source(pt, c, &seen, "secondary", sb + split, n - split, parse2, 0);
        else fz_add_source(pt, c, &seen, "secondary", sb, n, parse2, 0);
    }
    memset(&cb, 0, sizeof cb);
    cb.ctx = &seen;
    cb.sb_record = fz_on_record;
    cb.sb_diag = fz_on_diag;
    cb.context = fz_on_context;
    frames_pt_set_callbacks(pt, &cb);
    w = fz_out_writer(out);
    rc = frames_pt_decode(pt, w, st, &err);
    FZ_CHECK(rc == FRAMES_OK || (seen.stopped && rc == FRAMES_E_STOPPED));
    FZ_CHECK(frames_writer_close(w) == FRAMES_OK);
    frames_pt_close(pt);
    FZ_CHECK(st->sb_records == seen.records);
    FZ_CHECK(st->sb_warnings + st->sb_errors == seen.diags);
    FZ_CHECK(st->context_switches == seen.contexts);
    FZ_CHECK(st->reconstruct_errors == 0);
    if (!seen.stopped) {
        fz_counts k = fz_check_written(out, NULL, 0, 0);
        FZ_CHECK(k.std == st->std_frames && k.modload == st->modload_frames);
    }
}

static fz_parse fz_p1, fz_p2;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    frames_pt_sb_config c;
    const uint8_t *sb;
    size_t n, split, i;
    unsigned flags;
    fz_mem a, b;
    frames_pt_stats sa, sb_st;
    if (size < 40) return 0;
    fz_init();
    frames_pt_sb_config_default(&c);
    c.sample_type = fz_le(data, 8);
    c.time_zero = fz_le(data + 8, 8);
    c.time_mult = (uint32_t)fz_le(data + 16, 4);
    c.time_shift = (uint16_t)fz_le(data + 20, 2);
    flags = (unsigned)fz_le(data + 22, 2);
    c.tsc_offset = fz_le(data + 24, 8);
    c.kernel_start = fz_le(data + 32, 8);
    c.sysroot = fz_sysroot();   /* MMAP names are looked up in the private directory only */
    sb = data + 40;
    n = size - 40;

    /* the parser */
    fz_parse_all(&c, sb, n, &fz_p1);
    fz_check_prefix(&c, sb, &fz_p1, n / 2);
    if (fz_p1.n) fz_check_prefix(&c, sb, &fz_p1, fz_p1.rec[fz_p1.n / 2].off + fz_p1.rec[fz_p1.n / 2].size - 1);
    /* perf time to TSC: exact, so monotonic */
    for (i = 0; i + 16 <= n && i < 256; i += 16) {
        uint64_t t1 = fz_le(sb + i, 8), t2 = fz_le(sb + i + 8, 8);
        FZ_CHECK(frames_pt_time_to_tsc(&c, t1) == fz_exact_tsc(&c, t1));
        if (t1 && t2 && c.time_zero <= t1 && t1 <= t2)
            FZ_CHECK(frames_pt_time_to_tsc(&c, t1) <= frames_pt_time_to_tsc(&c, t2));
    }

    /* decoding with the records applied, twice (a session refuses a bad conversion) */
    if (!c.time_mult || c.time_shift > 63) {
        frames_pt *pt;
        frames_error err;
        FZ_CHECK(frames_pt_open(&pt, NULL, &err) == FRAMES_OK);
        FZ_CHECK(frames_pt_add_pevent(pt, &c, "primary", sb, n, 1, 0, &err) == FRAMES_E_INVALID);
        frames_pt_close(pt);
        return 0;
    }
    split = (flags & 4) && fz_p1.n > 1 ? fz_p1.rec[fz_p1.n / 2].off : n;
    fz_p2 = fz_p1;
    if (split < n) fz_parse_all(&c, sb + split, n - split, &fz_p2);
    fz_decode(&c, flags, sb, n, &fz_p1, &fz_p2, split, &a, &sa);
    fz_decode(&c, flags, sb, n, &fz_p1, &fz_p2, split, &b, &sb_st);
    FZ_CHECK(fz_out_equal(&a, &b) && sa.sb_records == sb_st.sb_records && sa.insns == sb_st.insns);
    free(a.p);
    free(b.p);
    return 0;
}
