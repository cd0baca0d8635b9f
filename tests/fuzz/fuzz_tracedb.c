// fuzz-seeds: tracedb vectors/tracedb/*.trace
// fuzz-flags: -max_len=16384

/* fuzz_tracedb - frames_query.h's trace-db reader on arbitrary files, against an
   independent reading (fuzz_tdbmodel.h).

   Invariants:
   - the header opens exactly when the model's does; errors carry a code and a message;
   - the index keeps exactly the model's complete points and reports the same cut (offset,
     truncated or damaged); FQ_OPEN_STRICT fails exactly when the file ends inside an
     entry or has a damaged one, and trace-db's silent drop of a last point without
     END_ENTRY is kept;
   - prefix property: every prefix of the file keeps exactly the model's points that end
     inside it (so a cut-short file keeps the complete points of the longer one);
   - a query with no free variable returns one result per point, in order, with the
     model's statement (also inherited with FQ_OPEN_INHERIT_STMT), AUXILIARY values and
     BUFFER_SIZE records; a query binding every variable (type "*") returns each variable
     once, in order: name and type from the dictionary, value bytes exactly where the
     model found them (wholly inside the input), v/size as the model's memory map says;
   - counting without a callback, the index's point count and the streamed results agree;
     several threads and small work items deliver the same sequence as one thread;
   - formatted results are deterministic, NUL-terminated, cut like snprintf, valid JSON;
   - memory held stays within fz_memory_bound of the input size plus the engine's fixed
     tables (fz_query_memory). */
#include "fuzz_util.h"
#define FRAMES_QUERY_IMPLEMENTATION
#include "frames_query.h"
#include "fuzz_tdbmodel.h"

/* The query engine's allocations that do not shrink with the input come on top: index
   blocks and result slots are sized by the trace (at most 512 KiB, 130 KiB and 512 KiB
   a slot, two slots per thread, three threads here), at least 32 KiB a slot. */
static size_t fz_query_memory(size_t n) { return fz_memory_bound(n) + (8u << 20); }

static uint64_t fz_mix(uint64_t h, uint64_t v) { return (h ^ v) * 0x100000001b3ull; }

typedef struct fz_seen {
    const uint8_t *data;
    size_t size;
    const tm_trace *m;
    int inherit, zero_vars;
    uint64_t n, hash;
    size_t var;   /* next model variable (one-variable query) */
    char line[512];
} fz_seen;

static int fz_inside(const fz_seen *s, frames_bytes b) {
    return b.len == 0 || (b.ptr >= s->data && b.len <= s->size &&
                          (size_t)(b.ptr - s->data) <= s->size - b.len);
}

static void fz_check_format(const fq_result *r) {
    static const int styles[3] = {FQ_LIST_TRACEDB, FQ_LIST_CAPI, FQ_LIST_JSON};
    char a[512], b[512], cut[7];
    int i;
    for (i = 0; i < 3; i++) {
        size_t need = fq_format_result(r, styles[i], a, sizeof a), n2;
        FZ_CHECK(strlen(a) == (need < sizeof a ? need : sizeof a - 1));
        n2 = fq_format_result(r, styles[i], b, sizeof b);
        FZ_CHECK(n2 == need && !strcmp(a, b));
        memset(cut, 'x', sizeof cut);
        FZ_CHECK(fq_format_result(r, styles[i], cut, sizeof cut) == need);
        FZ_CHECK(strlen(cut) == (need < sizeof cut ? need : sizeof cut - 1));
        FZ_CHECK(!strncmp(cut, a, strlen(cut)));
        if (styles[i] == FQ_LIST_JSON && need < sizeof a) FZ_CHECK(fz_json_valid(a, need));
    }
}

static int fz_on_result(void *ctx, const fq_result *r) {
    fz_seen *s = (fz_seen *)ctx;
    const tm_trace *m = s->m;
    const tm_point *p;
    size_t i;
    FZ_CHECK(r->index == s->n);
    FZ_CHECK(r->format == FQ_TRACE_TRACEDB && r->frame == NULL && !r->has_tid);
    if (s->zero_vars) {
        FZ_CHECK(r->counter == s->n && r->counter < m->npts && r->nbind == 0);
        p = &m->pts[r->counter];
    } else {
        const tm_var *v;
        const fq_binding *b = &r->bind[0];
        FZ_CHECK(s->var < m->nvars && r->nbind == 1);
        v = &m->vars[s->var++];
        FZ_CHECK(r->counter < m->npts);
        p = &m->pts[r->counter];
        FZ_CHECK(s->var - 1 >= p->var0 && s->var - 1 < p->var0 + p->nvar);
        FZ_CHECK(b->var == 0 && b->slot == v->ord && b->name_index == v->name &&
                 b->type_index == v->type && b->format == (int)m->tfmt[v->type]);
        FZ_CHECK(b->bytes.ptr == s->data + v->voff && b->bytes.len == v->size);
        FZ_CHECK(fz_inside(s, b->bytes) && fz_inside(s, b->name) && fz_inside(s, b->type));
        FZ_CHECK(b->name.ptr == s->data + m->name_off[v->name] && b->name.len == m->name_len[v->name]);
        FZ_CHECK(b->type.ptr == s->data + m->name_off[m->tname[v->type]]);
        FZ_CHECK(!!(b->flags & FQ_B_HAS_SIZE) == v->has_size);
        if (v->has_size) FZ_CHECK(b->size == v->bsize);
        if (b->format == FQ_TYPE_UNSIGNED || b->format == FQ_TYPE_POINTER)
            FZ_CHECK(b->u == tm_le(s->data + v->voff, v->size > 8 ? 8 : v->size));
        if (b->format == FQ_TYPE_SIGNED) {
            uint64_t raw = tm_le(s->data + v->voff, v->size);
            if (v->size < 8 && (raw >> (8 * v->size - 1) & 1)) raw |= ~0ull << (8 * v->size);
            FZ_CHECK(b->i == (int64_t)raw);
        }
    }
    FZ_CHECK(r->stmt == (s->inherit ? p->stmt_inherit : p->stmt));
    FZ_CHECK(r->naux == p->naux && r->nbuf == p->nbuf);
    for (i = 0; i < p->naux; i++) FZ_CHECK(r->aux[i] == m->aux[p->aux0 + i]);
    for (i = 0; i < p->nbuf; i++)
        FZ_CHECK(r->buf[i].address == m->bufs[p->buf0 + i].address &&
                 r->buf[i].size == m->bufs[p->buf0 + i].size);
    if (s->n < 64) fz_check_format(r);
    s->hash = fz_mix(fz_mix(fz_mix(s->hash, r->counter), r->nbind ? r->bind[0].slot : 0), r->stmt);
    s->n++;
    return 0;
}

/* Open data[0..size) as trace-db with the given flags and stride; NULL when it fails. */
static fq_trace *fz_open(const uint8_t *data, size_t size, uint32_t flags, uint32_t stride,
                         frames_error *err) {
    fq_open_options o;
    fq_trace *t = NULL;
    int rc;
    fq_open_options_default(&o);
    o.format = FQ_TRACE_TRACEDB;
    o.flags = flags;
    o.index_stride = stride;
    rc = fq_trace_open_memory(&t, data, size, &o, err);
    if (rc < 0) {
        FZ_CHECK(t == NULL && err->code == rc && err->message[0]);
        FZ_CHECK(strlen(err->message) < sizeof err->message);
        return NULL;
    }
    FZ_CHECK(t && err->code == 0);
    return t;
}

/* Run a query of zero or one ("*") free variables; returns the results (checked against
   the model as they arrive). */
static uint64_t fz_query(fq_trace *t, const tm_trace *m, const uint8_t *data, size_t size,
                         int one_var, int inherit, unsigned threads, uint64_t chunk, uint64_t *hash) {
    fq_query *q;
    fq_query_open(&q, NULL, NULL);
    fq_plan *p = NULL;
    fq_run_options ro;
    frames_error err;
    fz_seen s;
    uint64_t n = 0, counted = 0;
    int rc;
    FZ_CHECK(q);
    if (one_var) FZ_CHECK(fq_query_var(q, "a", "*") == 0);
    rc = fq_compile(&p, q, t, &err);
    if (one_var && m->ntypes == 0) {   /* "*" names no type of this trace */
        FZ_CHECK(rc == FQ_E_QUERY && err.message[0] && p == NULL);
        fq_query_close(q);
        *hash = 0;
        return 0;
    }
    FZ_CHECK(rc == FRAMES_OK);
    memset(&s, 0, sizeof s);
    s.data = data;
    s.size = size;
    s.m = m;
    s.inherit = inherit;
    s.zero_vars = !one_var;
    s.hash = 1469598103934665603ull;
    fq_run_options_default(&ro);
    ro.threads = threads;
    ro.chunk = chunk;
    FZ_CHECK(fq_run(p, &ro, fz_on_result, &s, &n, &err) == FRAMES_OK);
    FZ_CHECK(n == s.n);
    FZ_CHECK(n == (one_var ? m->nvars : m->npts));
    /* counting only: the same number */
    FZ_CHECK(fq_run(p, &ro, NULL, NULL, &counted, &err) == FRAMES_OK);
    FZ_CHECK(counted == n);
    fq_plan_close(p);
    fq_query_close(q);
    *hash = s.hash;
    return n;
}

static void fz_check_info(fq_trace *t, const tm_trace *m, size_t size) {
    fq_trace_info in;
    frames_error err;
    FZ_CHECK(fq_trace_load(t, &err) == FRAMES_OK);
    fq_trace_info_get(t, &in);
    FZ_CHECK(in.format == FQ_TRACE_TRACEDB && in.complete && in.reader == NULL);
    FZ_CHECK(in.points == m->npts && in.file_size == size);
    FZ_CHECK(in.nnames == m->nnames && in.ntypes == m->ntypes);
    FZ_CHECK(in.truncated == m->truncated && in.damaged == m->damaged);
    FZ_CHECK(strlen(in.message) < sizeof in.message);
    if (m->truncated || m->damaged) FZ_CHECK(in.cut_offset == m->cut_offset && in.message[0]);
    else FZ_CHECK(in.message[0] == 0);
    FZ_CHECK(fq_trace_name(t, m->nnames) == NULL && fq_trace_type_name(t, m->ntypes) == NULL);
    if (m->ntypes) {
        const char *nm = fq_trace_type_name(t, 0);
        FZ_CHECK(nm && strlen(nm) == m->name_len[m->tname[0]]);
    }
}

/* Every prefix keeps exactly the model's points that end inside it. */
static void fz_check_prefix(const uint8_t *data, size_t size, const tm_trace *m, uint32_t stride,
                            uint64_t cut) {
    frames_error err;
    fq_trace *t;
    fq_trace_info in;
    uint8_t *copy;
    if (cut > size) cut = size;
    /* a private copy of exactly the prefix, so that ASan sees any read past it */
    copy = (uint8_t *)malloc(cut ? cut : 1);
    FZ_CHECK(copy);
    memcpy(copy, data, cut);
    t = fz_open(copy, cut, 0, stride, &err);
    if (cut < m->points_off) {
        FZ_CHECK(t == NULL);
    } else {
        FZ_CHECK(t != NULL);
        FZ_CHECK(fq_trace_load(t, &err) == FRAMES_OK);
        fq_trace_info_get(t, &in);
        FZ_CHECK(in.points == tm_points_within(m, cut));
        fq_trace_close(t);
    }
    free(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    size_t base = hc_state.live;
    uint32_t stride = size ? 1 + data[size - 1] % 9 : 1;
    frames_error err;
    fq_trace *t;
    tm_trace m;
    uint64_t h1, h2, n1, n2, cut;
    size_t i;
    hc_mark();
    tm_read(&m, data, size);

    t = fz_open(data, size, 0, stride, &err);
    FZ_CHECK(!t == !m.header_ok);
    if (!t) {
        tm_free(&m);
        FZ_CHECK(hc_state.live == base);
        return 0;
    }
    fz_check_info(t, &m, size);
    fz_query(t, &m, data, size, 0, 0, 1, 0, &h1);
    n1 = fz_query(t, &m, data, size, 1, 0, 1, 0, &h1);
    /* several threads, small work items: the same sequence */
    n2 = fz_query(t, &m, data, size, 1, 0, 3, stride * (1 + size % 3), &h2);
    FZ_CHECK(n1 == n2 && h1 == h2);
    fq_trace_close(t);
    FZ_CHECK_MEMORY_BOUND(base, size, fz_query_memory(size));

    /* the same file indexed while a multi-threaded query runs (lazy index) */
    if ((t = fz_open(data, size, 0, stride, &err)) != NULL) {
        n2 = fz_query(t, &m, data, size, 1, 0, 2, stride, &h2);
        FZ_CHECK(n1 == n2 && h1 == h2);
        fq_trace_close(t);
    } else FZ_CHECK(!"reopen failed");

    /* statements inherited */
    t = fz_open(data, size, FQ_OPEN_INHERIT_STMT, stride, &err);
    FZ_CHECK(t);
    fz_query(t, &m, data, size, 0, 1, 1, 0, &h1);
    fq_trace_close(t);

    /* strict: fails exactly on a damaged entry or an end inside one */
    t = fz_open(data, size, FQ_OPEN_STRICT, stride, &err);
    FZ_CHECK(!t == (m.damaged || m.partial));
    if (!t) FZ_CHECK(err.offset == m.cut_offset && err.code == (m.damaged ? FRAMES_E_FORMAT : FRAMES_E_TRUNCATED));
    else {
        fz_check_info(t, &m, size);
        fq_trace_close(t);
    }

    /* prefixes: at point ends and next to them, inside the header, and one chosen by the input */
    for (i = 0; i < m.npts && i < 6; i++) {
        size_t k = i < 3 ? i : m.npts - 1 - (i - 3);
        fz_check_prefix(data, size, &m, stride, m.pts[k].end);
        fz_check_prefix(data, size, &m, stride, m.pts[k].end - 1);
    }
    fz_check_prefix(data, size, &m, stride, m.points_off);
    if (m.points_off) fz_check_prefix(data, size, &m, stride, m.points_off - 1);
    cut = size >= 8 ? tm_le(data + size - 8, 4) % (size + 1) : 0;
    fz_check_prefix(data, size, &m, stride, cut);

    tm_free(&m);
    FZ_CHECK(hc_state.live == base);
    return 0;
}
