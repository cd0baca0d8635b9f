/* test_qindex.c - the persistent index of frames_query.h and `frames index`.

   The reference for every result is the same query without an index (whose own results
   tests/test_query.c checks against trace-db's listings and hand-counted expectations;
   tests/test_query_indexed.c runs all of those again with an index). Here: filters and
   picks that take the index's shortcuts, traces built to reach its rare paths, stale and
   foreign indexes, damaged index files, and the command line. */
#include "testutil.h"

#include <sys/stat.h>
#include <utime.h>

#include "frames_query.h"
#include "tdbbuild.h"

/* ---------------------------------------------------------------- helpers */

/* Byte buffers (indexes, traces) are tdbbuild.h's growing tdb. */
typedef tdb buf;

/* The default open options with flags (FQ_OPEN_*). */
static fq_open_options options_with(uint32_t flags) {
    fq_open_options o;
    fq_open_options_default(&o);
    o.flags = flags;
    return o;
}

static fq_trace *open_mem(const void *data, size_t n, uint32_t flags) {
    fq_open_options o = options_with(flags);
    fq_trace *t = NULL;
    frames_error err;
    if (fq_trace_open_memory(&t, data, n, &o, &err) < 0) fail_msg("open: %s", err.message);
    return t;
}

static fq_trace *open_path(const char *path, uint32_t flags) {
    fq_open_options o = options_with(flags);
    fq_trace *t = NULL;
    frames_error err;
    if (fq_trace_open_path(&t, path, &o, &err) < 0) fail_msg("open %s: %s", path, err.message);
    return t;
}

/* The index of t, in memory. */
static buf build_index(fq_trace *t, fq_index_info *info) {
    buf b = {NULL, 0, 0};
    frames_sink sink;
    frames_error err;
    memset(&sink, 0, sizeof sink);
    sink.ctx = &b;
    sink.write = tdb_write;
    if (fq_index_build(t, &sink, info, &err) < 0) fail_msg("build: %s", err.message);
    assert_int_equal(b.n % 8, 0);
    return b;
}

/* The index of the trace in tr (opened, indexed and closed here). */
static buf index_of(const buf *tr) {
    fq_trace *t = open_mem(tr->p, tr->n, 0);
    buf ix = build_index(t, NULL);
    fq_trace_close(t);
    return ix;
}

/* A query in pieces. */
typedef struct qdesc {
    const char *vars[4];
    const char *where, *soft;
    uint64_t mask, stmt;
    uint64_t pcs[6];
    int npcs;
    uint32_t flags;
} qdesc;

static fq_plan *compile(fq_trace *t, const qdesc *d, fq_query **qp) {
    fq_query *q;
    fq_query_open(&q, NULL, NULL);
    fq_plan *p;
    frames_error err;
    int i;
    for (i = 0; i < 4 && d->vars[i]; i++) {
        const char *colon = strchr(d->vars[i], ':');
        char name[32];
        memcpy(name, d->vars[i], (size_t)(colon - d->vars[i]));
        name[colon - d->vars[i]] = 0;
        assert_int_equal(fq_query_var(q, name, colon + 1), i);
    }
    if (d->where && fq_query_where_text(q, d->where, &err) < 0) fail_msg("where: %s", err.message);
    if (d->soft && fq_query_soft_text(q, d->soft, &err) < 0) fail_msg("soft: %s", err.message);
    fq_query_statement(q, d->mask, d->stmt);
    for (i = 0; i < d->npcs; i++) assert_int_equal(fq_query_pc_range(q, d->pcs[2 * i], d->pcs[2 * i + 1]), 0);
    fq_query_flags(q, d->flags);
    if (fq_compile(&p, q, t, &err) < 0) fail_msg("compile: %s", err.message);
    *qp = q;
    return p;
}

static int json_line(void *ctx, const fq_result *r) {
    char line[8192];
    size_t n = fq_format_result(r, FQ_LIST_JSON, line, sizeof line);
    assert_true(n < sizeof line);
    tdb_raw((buf *)ctx, line, n);
    tdb_raw((buf *)ctx, "\n", 1);
    return 0;
}

/* Run d on t: the JSON listing (malloc'd) and the return code in *rc. */
static char *run_json(fq_trace *t, const qdesc *d, unsigned threads, uint64_t chunk, int pick,
                      uint64_t seed, int *rc) {
    fq_query *q;
    fq_plan *p = compile(t, d, &q);
    fq_run_options o;
    frames_error err;
    buf out = {NULL, 0, 0};
    uint64_t n;
    fq_run_options_default(&o);
    o.threads = threads;
    o.chunk = chunk;
    o.pick = pick;
    o.seed = seed;
    tdb_raw(&out, "", 0);
    *rc = fq_run(p, &o, json_line, &out, &n, &err);
    if (*rc == 0) {   /* the count-only path agrees */
        uint64_t m;
        assert_int_equal(fq_run(p, &o, NULL, NULL, &m, &err), 0);
        if (!(d->flags & FQ_DEDUP)) assert_int_equal(m, n);
    }
    fq_plan_close(p);
    fq_query_close(q);
    return (char *)out.p;
}

/* Every field a bindings_only caller may read, a line per result. */
static int binding_line(void *ctx, const fq_result *r) {
    char line[8192];
    size_t n;
    uint32_t i, k;
    n = (size_t)snprintf(line, sizeof line, "%llu %llu %llu %llu %d", (unsigned long long)r->index,
                         (unsigned long long)r->counter, (unsigned long long)r->stmt,
                         (unsigned long long)r->tid, r->has_tid);
    for (i = 0; i < r->nbind && n < sizeof line - 512; i++) {
        const fq_binding *b = &r->bind[i];
        n += (size_t)snprintf(line + n, sizeof line - n, " | %u %u %d %u %.*s:%.*s %u %u %u %u %llu %lld %a %llu %llu ",
                              b->var, b->slot, b->format, b->flags, (int)b->name.len, (const char *)b->name.ptr,
                              (int)b->type.len, (const char *)b->type.ptr, b->name_index, b->type_index, b->bits,
                              b->mem_index, (unsigned long long)b->u, (long long)b->i, b->f,
                              (unsigned long long)b->size, (unsigned long long)b->addr);
        for (k = 0; k < b->bytes.len && k < 64; k++) n += (size_t)snprintf(line + n, sizeof line - n, "%02x", b->bytes.ptr[k]);
    }
    assert_true(n < sizeof line - 1);
    tdb_raw((buf *)ctx, line, n);
    tdb_raw((buf *)ctx, "\n", 1);
    return 0;
}

/* Run d on t and list every result's bindings (malloc'd); rc in *rc. */
static char *run_bindings(fq_trace *t, const qdesc *d, unsigned threads, uint64_t chunk, int bindings_only,
                          int *rc) {
    fq_query *q;
    fq_plan *p = compile(t, d, &q);
    fq_run_options o;
    frames_error err;
    buf out = {NULL, 0, 0};
    fq_run_options_default(&o);
    o.threads = threads;
    o.chunk = chunk;
    o.bindings_only = bindings_only;
    tdb_raw(&out, "", 0);
    *rc = fq_run(p, &o, binding_line, &out, NULL, &err);
    fq_plan_close(p);
    fq_query_close(q);
    return (char *)out.p;
}

/* d gives the same listing on a (no index) and b (index), over several thread counts;
   and the same bindings when b's run is told that the caller reads only them (trace-db
   columns then deliver results without the trace). */
static void same(fq_trace *a, fq_trace *b, const qdesc *d, const char *what) {
    static const unsigned threads[3] = {1, 3, 2};
    static const uint64_t chunks[3] = {0, 7, 64};
    int i, ra, rb;
    for (i = 0; i < 3; i++) {
        char *x = run_json(a, d, threads[i], chunks[i], 0, 0, &ra);
        char *y = run_json(b, d, threads[i], chunks[i], 0, 0, &rb);
        assert_int_equal(ra, 0);
        if (rb != 0 || strcmp(x, y) != 0)
            fail_msg("%s (threads %u): results differ with the index (rc %d)", what, threads[i], rb);
        free(x);
        free(y);
        x = run_bindings(a, d, threads[i], chunks[i], 0, &ra);
        y = run_bindings(b, d, threads[i], chunks[i], 1, &rb);
        assert_int_equal(ra, 0);
        if (rb != 0 || strcmp(x, y) != 0)
            fail_msg("%s (threads %u): bindings_only results differ with the index (rc %d)", what, threads[i], rb);
        free(x);
        free(y);
    }
}

/* Picks agree (the point chosen, and the run) for many seeds. */
static void same_picks(fq_trace *a, fq_trace *b, const qdesc *d, unsigned nseeds, const char *what) {
    fq_query *qa, *qb;
    fq_plan *pa = compile(a, d, &qa), *pb = compile(b, d, &qb);
    frames_error err;
    uint64_t seed;
    for (seed = 0; seed < nseeds; seed++) {
        uint64_t ka = 0, kb = 0;
        int ra = fq_pick_point(pa, seed, &ka, &err), rb = fq_pick_point(pb, seed, &kb, &err);
        if (ra != rb || (ra == 0 && ka != kb))
            fail_msg("%s: seed %llu picks %d/%llu without the index, %d/%llu with it", what,
                     (unsigned long long)seed, ra, (unsigned long long)ka, rb, (unsigned long long)kb);
        if (seed % 16 == 0) {
            int rca, rcb;
            char *x = run_json(a, d, 1, 0, 1, seed, &rca), *y = run_json(b, d, 2, 0, 1, seed, &rcb);
            assert_int_equal(rca, 0);
            assert_int_equal(rcb, 0);
            assert_string_equal(x, y);
            free(x);
            free(y);
        }
    }
    fq_plan_close(pa);
    fq_plan_close(pb);
    fq_query_close(qa);
    fq_query_close(qb);
}

/* A trace-db trace: a header of types int (SIGNED 4), char* (POINTER 8), then points. */
static const char tdb_names[] = "int\0char*\0x\0y\0p\0";
static const uint32_t tdb_types[2][3] = {{0, 1, 4}, {1, 3, 8}};   /* int, char* */
static void ix_header(buf *b) { tdb_header(b, tdb_names, sizeof tdb_names - 1, tdb_types, 2); }
/* Point: optional statement, BUFFER_SIZE every 100 points, x, y : int, p : char*. */
static void tdb_point(buf *b, uint64_t k, int has_stmt, uint64_t stmt) {
    if (has_stmt) tdb_stmt(b, stmt);
    if (k % 100 == 0) tdb_bufsize(b, 0x1000 + k, 50 + k % 7);
    tdb_var(b, 2, 0, (k * 7919) % 1000, 4);
    tdb_var(b, 3, 0, (k * 104729) % 1000, 4);
    tdb_var(b, 4, 1, 0x1000 + k / 100 * 100 + k % 60, 8);
    tdb_u8(b, 0);
}

static const qdesc tdb_queries[] = {
    {{"a:int"}, "(> (v/value a) 500)", NULL, UINT64_MAX, 7, {0}, 0, 0},
    {{"a:int"}, "(> (v/value a) 500)", NULL, 0x7, 1, {0}, 0, 0},           /* 4 lists */
    {{"a:int"}, NULL, NULL, 0x1f, 31, {0}, 0, 0},
    {{"a:int"}, NULL, NULL, 0x1, 1, {0}, 0, 0},                             /* half: a scan */
    {{"a:int"}, NULL, NULL, UINT64_MAX, 99, {0}, 0, 0},                     /* no such statement */
    {{"a:int"}, NULL, NULL, 0, 0, {3, 5, 4, 9}, 2, 0},                      /* overlapping ranges */
    {{"a:int"}, NULL, NULL, 0x1, 0, {3, 5, 20, 40}, 2, 0},                  /* ranges and a mask */
    {{"a:int", "b:int"}, "(< (v/value a) (v/value b))", NULL, 0, 0, {12, 12, 30, 30}, 2, 0},
    {{"a:int", "b:int"}, "(< (v/value a) (v/value b))", NULL, 0x3, 2, {0}, 0, FQ_DEDUP},
    {{"q:char*"}, "(> (v/size q) 40)", NULL, UINT64_MAX, 5, {0}, 0, 0},   /* buffer sizes */
    {{"q:char*"}, "(> (v/size q) 40)", NULL, 0x7, 6, {0}, 0, 0},
    {{"q:*"}, NULL, "(> (v/value q) 900)", 0xf, 3, {0}, 0, 0},              /* soft, any type */
    {{NULL}, "(> (index) 400)", NULL, 0x7, 7, {0}, 0, 0},                   /* no variables */
    {{"a:int"}, "(> (v/value a) 500)", NULL, 0, 0, {0}, 0, 0},              /* no filter */
    {{"q:char*"}, "(> (v/size q) 40)", NULL, 0, 0, {0}, 0, 0},
};

static const char *small_trace(void) { return tu_shared("vectors/tracedb/small.trace"); }

/* ---------------------------------------------------------------- same results */

static void test_tracedb_same_results(void **state) {
    fq_trace *a = open_path(small_trace(), 0), *b = open_path(small_trace(), 0);
    fq_index_info info;
    buf ix = build_index(a, &info);
    frames_error err;
    size_t i;
    uint64_t s;
    (void)state;
    /* small.trace: 1000 points, statements k % 32, one char* per point */
    assert_int_equal(info.points, 1000);
    assert_int_equal(info.candidates, 1000);
    assert_int_equal(info.statements, 32);
    assert_int_equal(info.pointers, 1000);
    assert_int_equal(info.bytes, ix.n);
    assert_int_equal(fq_index_attach(b, ix.p, ix.n, &err), 0);
    assert_int_equal(fq_index_info_get(b, &info), 1);
    assert_int_equal(fq_index_info_get(a, &info), 0);
    for (i = 0; i < sizeof tdb_queries / sizeof tdb_queries[0]; i++) {
        char what[32];
        snprintf(what, sizeof what, "query %u", (unsigned)i);
        same(a, b, &tdb_queries[i], what);
    }
    for (s = 0; s < 32; s++) {   /* every statement's posting list */
        qdesc d = {{"a:int", "b:int"}, "(distinct-vars a b)", NULL, UINT64_MAX, 0, {0}, 0, 0};
        d.stmt = s;
        same(a, b, &d, "one statement");
    }
    fq_trace_close(a);
    fq_trace_close(b);
    free(ix.p);
}

static void test_tracedb_same_picks(void **state) {
    fq_trace *a = open_path(small_trace(), 0), *b = open_path(small_trace(), 0);
    buf ix = build_index(a, NULL);
    frames_error err;
    size_t i;
    (void)state;
    assert_int_equal(fq_index_attach(b, ix.p, ix.n, &err), 0);
    for (i = 0; i < sizeof tdb_queries / sizeof tdb_queries[0]; i++) same_picks(a, b, &tdb_queries[i], 100, "pick");
    fq_trace_close(a);
    fq_trace_close(b);
    free(ix.p);
}

/* Two points of 3000 have statement 1000: 64 random draws rarely find them, so the pick
   counts the candidates (the index's posting list) and takes one of them uniformly. */
static void test_pick_rare_statement(void **state) {
    buf tr = {NULL, 0, 0}, ix;
    fq_trace *a, *b;
    frames_error err;
    qdesc d = {{"a:int"}, NULL, NULL, UINT64_MAX, 1000, {0}, 0, 0};
    fq_query *q;
    fq_plan *p;
    uint64_t k, seed, seen777 = 0, seen2500 = 0;
    (void)state;
    ix_header(&tr);
    for (k = 0; k < 3000; k++) tdb_point(&tr, k, 1, k == 777 || k == 2500 ? 1000 : k % 32);
    a = open_mem(tr.p, tr.n, 0);
    b = open_mem(tr.p, tr.n, 0);
    ix = build_index(a, NULL);
    assert_int_equal(fq_index_attach(b, ix.p, ix.n, &err), 0);
    same_picks(a, b, &d, 64, "rare statement");
    p = compile(b, &d, &q);
    for (seed = 0; seed < 200; seed++) {
        assert_int_equal(fq_pick_point(p, seed, &k, &err), 0);
        assert_true(k == 777 || k == 2500);
        seen777 += k == 777;
        seen2500 += k == 2500;
    }
    assert_true(seen777 > 60 && seen2500 > 60);
    fq_plan_close(p);
    fq_query_close(q);
    d.stmt = 0;
    d.mask = 0;
    d.npcs = 1;
    d.pcs[0] = 999, d.pcs[1] = 1001;
    same_picks(a, b, &d, 50, "rare range");
    fq_trace_close(a);
    fq_trace_close(b);
    free(ix.p);
    free(tr.p);
}

/* Points without STATEMENT_ID: with FQ_OPEN_INHERIT_STMT they take the previous one, so
   the index built that way serves only traces opened that way. */
static void test_inherited_statements(void **state) {
    buf tr = {NULL, 0, 0}, ix, plain = {NULL, 0, 0};
    fq_trace *a, *b, *c;
    frames_error err;
    uint64_t k;
    size_t i;
    (void)state;
    ix_header(&tr);
    for (k = 0; k < 700; k++) tdb_point(&tr, k, k % 5 != 3, k % 9);
    a = open_mem(tr.p, tr.n, FQ_OPEN_INHERIT_STMT);
    b = open_mem(tr.p, tr.n, FQ_OPEN_INHERIT_STMT);
    ix = build_index(a, NULL);
    assert_int_equal(fq_index_attach(b, ix.p, ix.n, &err), 0);
    for (i = 0; i < sizeof tdb_queries / sizeof tdb_queries[0]; i++) same(a, b, &tdb_queries[i], "inherit");
    for (k = 0; k < 9; k++) {
        qdesc d = {{"a:int"}, NULL, NULL, UINT64_MAX, 0, {0}, 0, 0};
        d.stmt = k;
        same(a, b, &d, "inherit, one statement");
        same_picks(a, b, &d, 40, "inherit");
    }
    /* opened without inheritance, those points have statement 0: the index does not fit */
    c = open_mem(tr.p, tr.n, 0);
    assert_int_equal(fq_index_attach(c, ix.p, ix.n, &err), FQ_E_STALE);
    assert_non_null(strstr(err.message, "FQ_OPEN_INHERIT_STMT"));
    assert_non_null(strstr(err.message, "140 points"));
    fq_trace_close(c);
    /* every point with a statement: one index serves both ways of opening */
    ix_header(&plain);
    for (k = 0; k < 300; k++) tdb_point(&plain, k, 1, k % 9);
    fq_trace_close(a);
    a = open_mem(plain.p, plain.n, FQ_OPEN_INHERIT_STMT);
    free(ix.p);
    ix = build_index(a, NULL);
    c = open_mem(plain.p, plain.n, 0);
    assert_int_equal(fq_index_attach(c, ix.p, ix.n, &err), 0);
    same(a, c, &tdb_queries[1], "inherit-built index without inheritance");
    fq_trace_close(a);
    fq_trace_close(b);
    fq_trace_close(c);
    free(ix.p);
    free(tr.p);
    free(plain.p);
}

/* A trace cut inside a point or damaged: the index keeps the complete points and the
   report of the cut, as the trace's own indexing pass does. */
static void test_cut_trace(void **state) {
    buf tr = {NULL, 0, 0}, ix;
    fq_trace *a, *b;
    fq_trace_info ia, ib;
    frames_error err;
    uint64_t k;
    (void)state;
    ix_header(&tr);
    for (k = 0; k < 500; k++) tdb_point(&tr, k, 1, k % 32);
    tr.p[tr.n - 40] = 9;   /* a bad tag inside the last point */
    a = open_mem(tr.p, tr.n, 0);
    b = open_mem(tr.p, tr.n, 0);
    ix = build_index(a, NULL);
    assert_int_equal(fq_index_attach(b, ix.p, ix.n, &err), 0);
    fq_trace_info_get(a, &ia);
    fq_trace_info_get(b, &ib);
    assert_int_equal(ia.points, 499);
    assert_true(ib.complete);
    assert_int_equal(ib.points, 499);
    assert_int_equal(ib.damaged, 1);
    assert_int_equal(ib.truncated, ia.truncated);
    assert_int_equal(ib.cut_offset, ia.cut_offset);
    assert_string_equal(ib.message, ia.message);
    same(a, b, &tdb_queries[0], "cut");
    same(a, b, &tdb_queries[13], "cut, scan");
    fq_trace_close(a);
    fq_trace_close(b);
    free(ix.p);
    free(tr.p);
}

/* Offsets that do not fit in 32 bits (a point of more than 4 GiB) are stored as "too far":
   those points are reached by walking from their block. Marking deltas that way must not
   change anything. */
static void test_far_deltas(void **state) {
    fq_trace *a = open_path(small_trace(), 0), *b = open_path(small_trace(), 0);
    buf ix = build_index(a, NULL);
    frames_error err;
    uint64_t odelta, k;
    (void)state;
    odelta = (uint64_t)ix.p[144 + 16] | (uint64_t)ix.p[145 + 16] << 8 | (uint64_t)ix.p[146 + 16] << 16;
    for (k = 0; k < 1000; k++)
        if (k % 3 == 0 || (k >= 128 && k < 192)) memset(ix.p + odelta + 4 * k, 0xff, 4);
    assert_int_equal(fq_index_attach(b, ix.p, ix.n, &err), 0);
    same(a, b, &tdb_queries[0], "far deltas");
    same(a, b, &tdb_queries[1], "far deltas");
    same(a, b, &tdb_queries[10], "far deltas, sizes");
    same_picks(a, b, &tdb_queries[0], 64, "far deltas");
    fq_trace_close(a);
    fq_trace_close(b);
    free(ix.p);
    /* frames: frame records walked from the block's first frame */
    {
        const char *path = tu_shared("vectors/frames/r10_default_m_n10001.frames");
        qdesc d = {{NULL}, NULL, NULL, 0, 0, {0x1000 + 200, 0x1000 + 210, 0x1000 + 9990, 0x1000 + 10000}, 2, 0};
        a = open_path(path, 0);
        b = open_path(path, 0);
        ix = build_index(a, NULL);
        odelta = (uint64_t)ix.p[144 + 16] | (uint64_t)ix.p[145 + 16] << 8 | (uint64_t)ix.p[146 + 16] << 16;
        for (k = 192; k < 256; k++) memset(ix.p + odelta + 4 * k, 0xff, 4);
        for (k = 9990; k < 10001; k += 2) memset(ix.p + odelta + 4 * k, 0xff, 4);
        assert_int_equal(fq_index_attach(b, ix.p, ix.n, &err), 0);
        same(a, b, &d, "frames, far deltas");
        same_picks(a, b, &d, 3, "frames, far deltas");
        /* an offset that points elsewhere: reported */
        memset(ix.p + odelta + 4 * 9995, 0, 4);
        fq_trace_close(b);
        b = open_path(path, 0);
        assert_int_equal(fq_index_attach(b, ix.p, ix.n, &err), 0);
        {
            int rc;
            char *x = run_json(b, &d, 1, 0, 0, 0, &rc);
            assert_int_equal(rc, FQ_E_STALE);
            free(x);
        }
        fq_trace_close(a);
        fq_trace_close(b);
        free(ix.p);
    }
}

/* Frames traces: the index's posting lists hold the std_frames of each address. */
static const char *const frames_files[] = {
    "r01_min_default_i386.frames", "r02_all_frame_types_x86_64.frames", "r03_extremes_arm.frames",
    "r04_empty_values_aarch64.frames", "r05_toc_m4_n10_mips.frames", "r06_toc_m4_n8_ppc64.frames",
    "r07_toc_m1_n5.frames", "r08_toc_m2_n1.frames", "r09_unfinished_no_finish_call.frames",
    "r10_default_m_n10001.frames", "r11_pintraces_like_x86.frames", "rz_r05_zero_pad.frames",
    "tcg_r02_all_frame_types.frames", "tcg_r10_m64_n10001.frames"};

static int collect_pc(void *ctx, const fq_result *r) {
    buf *b = (buf *)ctx;
    tdb_raw(b, &r->stmt, sizeof r->stmt);
    return 0;
}

static void test_frames_same_results(void **state) {
    size_t f;
    (void)state;
    for (f = 0; f < sizeof frames_files / sizeof frames_files[0]; f++) {
        char rel[128];
        const char *path;
        fq_trace *a, *b;
        fq_query *q;
        fq_plan *p;
        fq_index_info info;
        frames_error err;
        buf pcs = {NULL, 0, 0}, ix;
        uint64_t n, i, lo = UINT64_MAX, hi = 0;
        qdesc all = {{"r:reg*"}, NULL, NULL, 0, 0, {0}, 0, 0};
        snprintf(rel, sizeof rel, "vectors/frames/%s", frames_files[f]);
        path = tu_shared(rel);
        a = open_path(path, 0);
        b = open_path(path, 0);
        ix = build_index(a, &info);
        assert_int_equal(fq_index_attach(b, ix.p, ix.n, &err), 0);
        assert_int_equal(info.pointers, 0);
        /* the addresses of the std_frames, from a query without variables */
        fq_query_open(&q, NULL, NULL);
        assert_int_equal(fq_compile(&p, q, a, &err), 0);
        assert_int_equal(fq_run(p, NULL, collect_pc, &pcs, &n, &err), 0);
        assert_int_equal(info.candidates, n);
        fq_plan_close(p);
        fq_query_close(q);
        same(a, b, &all, frames_files[f]);
        for (i = 0; i < n; i += n > 1000 ? n / 3 : 1 + n / 16) {   /* big traces: a few addresses */
            uint64_t pc;
            qdesc d = {{"r:*"}, "(!= (v/bits r) 8)", NULL, UINT64_MAX, 0, {0}, 0, 0};
            memcpy(&pc, pcs.p + 8 * i, 8);
            if (pc < lo) lo = pc;
            if (pc > hi) hi = pc;
            d.stmt = pc;
            same(a, b, &d, frames_files[f]);
            d.mask = 0;
            d.stmt = 0;
            d.npcs = 2;
            d.pcs[0] = pc, d.pcs[1] = pc > UINT64_MAX - 2 ? pc : pc + 2;
            d.pcs[2] = pc / 2, d.pcs[3] = pc;
            same(a, b, &d, frames_files[f]);
            /* without an index a rare pick scans with a cursor per frame: few seeds */
            same_picks(a, b, &d, n > 1000 ? 3 : 20, frames_files[f]);
        }
        if (n) {
            qdesc d = {{"r:*"}, NULL, NULL, 0x3, 0, {0}, 1, 0};
            d.pcs[0] = lo, d.pcs[1] = lo + (hi - lo) / 3;
            same(a, b, &d, frames_files[f]);
            same_picks(a, b, &d, n > 1000 ? 3 : 30, frames_files[f]);
        }
        fq_trace_close(a);
        fq_trace_close(b);
        free(ix.p);
        free(pcs.p);
    }
}

/* ---------------------------------------------------------------- stale and foreign */

/* The header checksum after a deliberate change (to reach the checks behind it). */
static void reseal(unsigned char *ix) {
    uint64_t h = 0;
    size_t i;
    /* fq__hash64 with seed 0 over bytes 0..503 */
    for (i = 0; i + 8 <= 504; i += 8) {
        uint64_t w = 0;
        int k;
        for (k = 7; k >= 0; k--) w = w << 8 | ix[i + (size_t)k];
        h = (h ^ w) * 0x9e3779b97f4a7c15ull;
        h ^= h >> 32;
    }
    h = (h ^ 504) * 0xbf58476d1ce4e5b9ull;
    h ^= h >> 31;
    tu_put_le(ix + 504, h, 8);
}

static void expect_refused(fq_trace *t, const buf *ix, int code, const char *msg) {
    frames_error err;
    qdesc d = {{"a:*"}, NULL, NULL, 0, 0, {0}, 0, 0};
    int rc;
    char *x;
    assert_int_equal(fq_index_attach(t, ix->p, ix->n, &err), code);
    if (!strstr(err.message, msg)) fail_msg("expected '%s' in '%s'", msg, err.message);
    /* the trace is still usable without an index */
    x = run_json(t, &d, 1, 0, 0, 0, &rc);
    assert_int_equal(rc, 0);
    free(x);
}

static void test_stale_and_foreign(void **state) {
    size_t len;
    unsigned char *tr = tu_read_file(small_trace(), &len), *copy = (unsigned char *)malloc(len + 1);
    fq_trace *a = open_mem(tr, len, 0), *t;
    buf ix = build_index(a, NULL), fr, bad = {NULL, 0, 0};
    (void)state;
    /* another trace of another size */
    t = open_mem(tr, len - 1, 0);
    expect_refused(t, &ix, FQ_E_STALE, "bytes, this one has");
    fq_trace_close(t);
    /* same size, another header */
    memcpy(copy, tr, len);
    copy[8] ^= 1;   /* first letter of the first name */
    t = open_mem(copy, len, 0);
    expect_refused(t, &ix, FQ_E_STALE, "another header");
    fq_trace_close(t);
    /* same size and header, other contents (a value in the middle) */
    memcpy(copy, tr, len);
    copy[len / 2] ^= 0x40;
    t = open_mem(copy, len, 0);
    expect_refused(t, &ix, FQ_E_STALE, "other contents");
    fq_trace_close(t);
    /* a frames trace's index on a trace-db trace */
    t = open_path(tu_shared("vectors/frames/r11_pintraces_like_x86.frames"), 0);
    fr = build_index(t, NULL);
    fq_trace_close(t);
    t = open_mem(tr, len, 0);
    expect_refused(t, &fr, FQ_E_STALE, "of a frames trace");
    /* not an index at all; another version */
    tdb_raw(&bad, tr, 600);
    expect_refused(t, &bad, FRAMES_E_FORMAT, "not a frames query index");
    memcpy(bad.p, ix.p, 512);
    tu_put_le(bad.p + 8, 1, 4);   /* the format before the value columns */
    reseal(bad.p);
    expect_refused(t, &bad, FQ_E_STALE, "version 1");
    expect_refused(t, &bad, FQ_E_STALE, "rebuild it");
    fq_trace_close(t);
    fq_trace_close(a);
    free(ix.p);
    free(fr.p);
    free(bad.p);
    free(tr);
    free(copy);
}

/* Files: the modification time binds the index to one version of the trace. */
static void test_files_and_mtime(void **state) {
    size_t len;
    unsigned char *tr = tu_read_file(small_trace(), &len);
    char trace[512], index[530];
    fq_trace *t;
    fq_index_info info;
    frames_error err;
    struct utimbuf ut;
    (void)state;
    snprintf(trace, sizeof trace, "%s", tu_tmp_path(".trace"));
    snprintf(index, sizeof index, "%s.fqidx", trace);
    assert_int_equal(tu_write_file(trace, tr, len), 0);
    t = open_path(trace, 0);
    assert_int_equal(fq_index_save(t, index, &info, &err), 0);
    assert_int_equal(info.points, 1000);
    /* replacing an existing index */
    assert_int_equal(fq_index_save(t, index, &info, &err), 0);
    fq_trace_close(t);
    t = open_path(trace, 0);
    assert_int_equal(fq_index_open(t, index, &err), 0);
    assert_int_equal(fq_index_open(t, index, &err), FRAMES_E_STATE);   /* one per trace */
    fq_trace_close(t);
    /* same bytes, another modification time */
    ut.actime = ut.modtime = 1000000000;
    assert_int_equal(utime(trace, &ut), 0);
    t = open_path(trace, 0);
    assert_int_equal(fq_index_open(t, index, &err), FQ_E_STALE);
    assert_non_null(strstr(err.message, "modified after the index was built"));
    assert_int_equal(fq_index_open(t, "/nonexistent/x.fqidx", &err), FRAMES_E_IO);
    /* an index that cannot be written leaves nothing behind */
    assert_int_equal(fq_index_save(t, "/nonexistent/dir/x.fqidx", NULL, &err), FRAMES_E_IO);
    /* a trace read from memory has no time: size and contents bind it */
    fq_trace_close(t);
    t = open_mem(tr, len, 0);
    assert_int_equal(fq_index_open(t, index, &err), 0);
    fq_trace_close(t);
    {   /* a file (its samples read with pread) edited in a sampled block, same size and
           time: refused */
        struct stat st;
        size_t at = (len - 4096) / 63 * 32 + 100;
        t = open_path(trace, 0);
        assert_int_equal(fq_index_save(t, index, NULL, &err), 0);
        fq_trace_close(t);
        assert_int_equal(stat(trace, &st), 0);
        tr[at] ^= 0x5a;
        assert_int_equal(tu_write_file(trace, tr, len), 0);
        ut.actime = st.st_atime;
        ut.modtime = st.st_mtime;
        assert_int_equal(utime(trace, &ut), 0);
        t = open_path(trace, 0);
        assert_int_equal(fq_index_open(t, index, &err), FQ_E_STALE);
        assert_non_null(strstr(err.message, "other contents"));
        fq_trace_close(t);
        tr[at] ^= 0x5a;   /* restored: accepted again */
        assert_int_equal(tu_write_file(trace, tr, len), 0);
        assert_int_equal(utime(trace, &ut), 0);
        t = open_path(trace, 0);
        assert_int_equal(fq_index_open(t, index, &err), 0);
        fq_trace_close(t);
    }
    remove(index);
    remove(trace);
    free(tr);
}

/* ---------------------------------------------------------------- damaged indexes */

static uint64_t rng_state = 0x243f6a8885a308d3ull;
static uint64_t rng(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* Queries over a trace whose index may be damaged: every run either succeeds or reports
   the damage (FQ_E_STALE); never anything else (ASan/UBSan watch the memory). */
static void battery(fq_trace *t) {
    static const size_t pick[] = {0, 1, 5, 7, 9, 10, 11, 12, 13, 14};
    size_t i;
    for (i = 0; i < sizeof pick / sizeof pick[0]; i++) {
        int rc;
        char *x = run_json(t, &tdb_queries[pick[i]], i % 2 ? 2 : 1, 0, 0, 0, &rc);
        if (rc != 0 && rc != FQ_E_STALE) fail_msg("query %u: rc %d", (unsigned)pick[i], rc);
        free(x);
        x = run_json(t, &tdb_queries[pick[i]], 1, 0, 1, i * 7919, &rc);
        if (rc != 0 && rc != FQ_E_STALE) fail_msg("pick %u: rc %d", (unsigned)pick[i], rc);
        free(x);
    }
}

static uint64_t get_le(const unsigned char *p, int n) {
    uint64_t v = 0;
    int i;
    for (i = n - 1; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

static void test_damaged_index(void **state) {
    fq_trace *a = open_path(small_trace(), 0);
    buf ix = build_index(a, NULL), bad = {NULL, 0, 0};
    frames_error err;
    size_t cut, i, n;
    int iter;
    (void)state;
    fq_trace_close(a);
    tdb_raw(&bad, ix.p, ix.n);
    /* cut short anywhere: refused */
    for (cut = 0; cut < ix.n; cut += cut < 600 ? 1 : 61) {
        fq_trace *t = open_path(small_trace(), 0);
        int rc = fq_index_attach(t, ix.p, cut, &err);
        assert_true(rc == FRAMES_E_FORMAT);
        fq_trace_close(t);
    }
    /* any header byte changed: refused (the checksum, or what it protects) */
    for (i = 0; i < 512; i++) {
        fq_trace *t = open_path(small_trace(), 0);
        memcpy(bad.p, ix.p, ix.n);
        bad.p[i] ^= (unsigned char)(1u << (i % 8));
        assert_true(fq_index_attach(t, bad.p, bad.n, &err) < 0);
        fq_trace_close(t);
    }
    /* counts that do not fit the trace, with a valid checksum */
    {
        static const size_t fields[] = {72, 80, 88, 96, 104, 112, 116, 144, 152, 168, 232, 248};
        for (i = 0; i < sizeof fields / sizeof fields[0]; i++) {
            fq_trace *t = open_path(small_trace(), 0);
            memcpy(bad.p, ix.p, ix.n);
            tu_put_le(bad.p + fields[i], 0xfffffffffff0ull, fields[i] == 112 || fields[i] == 116 ? 4 : 8);
            reseal(bad.p);
            assert_int_equal(fq_index_attach(t, bad.p, bad.n, &err), FRAMES_E_FORMAT);
            fq_trace_close(t);
        }
    }
    /* section bytes changed at random: accepted when attached (they are not read then),
       and every query either works or reports the damage */
    n = ix.n - 512;
    for (iter = 0; iter < 300; iter++) {
        fq_trace *t = open_path(small_trace(), 0);
        int flips = 1 + (int)(rng() % 8), k;
        memcpy(bad.p, ix.p, ix.n);
        for (k = 0; k < flips; k++) {
            size_t at = 512 + (size_t)(rng() % n);
            bad.p[at] = iter % 3 == 0 ? 0xff : (unsigned char)(bad.p[at] ^ (1u << (rng() % 8)));
        }
        if (fq_index_attach(t, bad.p, bad.n, &err) == 0) battery(t);
        fq_trace_close(t);
    }
    /* a posting list out of order and a block offset into the header: reported */
    {
        fq_trace *t = open_path(small_trace(), 0);
        uint64_t post = 0, blocks = 0;
        int rc;
        char *x;
        qdesc d = {{"a:int"}, NULL, NULL, UINT64_MAX, 0, {0}, 0, 0};
        for (i = 0; i < 8; i++) post |= (uint64_t)ix.p[144 + 16 * 6 + i] << (8 * i);
        for (i = 0; i < 8; i++) blocks |= (uint64_t)ix.p[144 + i] << (8 * i);
        memcpy(bad.p, ix.p, ix.n);
        tu_put_le(bad.p + post + 4, 0, 4);   /* statement 0: points 0, 0, 64, ... */
        tu_put_le(bad.p + blocks + 32, 3, 8); /* block 1 starts inside the header */
        assert_int_equal(fq_index_attach(t, bad.p, bad.n, &err), 0);
        x = run_json(t, &d, 1, 0, 0, 0, &rc);
        assert_int_equal(rc, FQ_E_STALE);
        free(x);
        d.stmt = 1;   /* point 65 is in block 1 */
        x = run_json(t, &d, 2, 0, 0, 0, &rc);
        assert_int_equal(rc, FQ_E_STALE);
        free(x);
        fq_trace_close(t);
    }
    /* the statement table, which the lookups trust, is checked whole when attached: a
       statement's first posting moved (its listing lost points, the column kernel's count
       did not: found by fuzz_qindex), statements out of order, the closing entry */
    {
        static const size_t edits[][2] = {{8, 16}, {16 + 8, 0xffffff}, {16, 0}};
        uint64_t stmts = get_le(ix.p + 144 + 16 * 5, 8), nstmt = get_le(ix.p + 96, 8);
        assert_true(nstmt >= 2);
        for (i = 0; i < sizeof edits / sizeof edits[0] + 1; i++) {
            fq_trace *t = open_path(small_trace(), 0);
            memcpy(bad.p, ix.p, ix.n);
            if (i < sizeof edits / sizeof edits[0]) tu_put_le(bad.p + stmts + edits[i][0], edits[i][1], 8);
            else tu_put_le(bad.p + stmts + 16 * nstmt, 1, 8);
            if (fq_index_attach(t, bad.p, bad.n, &err) != FRAMES_E_FORMAT || !strstr(err.message, "statement table"))
                fail_msg("statement table edit %u: attached (%s)", (unsigned)i, err.message);
            fq_trace_close(t);
        }
    }
    free(ix.p);
    free(bad.p);
}

/* ---------------------------------------------------------------- value columns */

/* A trace-db trace with a type of every format and width: i8, u16, long, ulong, int (0 to
   2 per point), char*, blob (varlen, every other point), float, u24; statements k % 5,
   and 100 every 37 points; values at the extremes of their types. */
static const char mt_names[] = "i8\0u16\0long\0ulong\0int\0char*\0blob\0float\0u24\0"
                               "a\0b\0c\0d\0e\0p\0s\0f\0g\0";
enum { MT_NTYPES = 9 };
static const uint32_t mt_types[MT_NTYPES][3] = {   /* name, format, size */
    {0, 1, 1}, {1, 0, 2}, {2, 1, 8}, {3, 0, 8}, {4, 1, 4}, {5, 3, 8}, {6, 4, 0}, {7, 2, 4}, {8, 0, 3},
};

static void mt_trace(buf *b, uint64_t npoints) {
    static const uint64_t longs[6] = {0x8000000000000000ull, UINT64_MAX, 0, 1, 0x7fffffffffffffffull, 12345};
    static const uint64_t ulongs[5] = {0, 1, UINT64_MAX, 0x8000000000000000ull, 0x7fffffffffffffffull};
    uint64_t k, i;
    tdb_header(b, mt_names, sizeof mt_names - 1, mt_types, MT_NTYPES);
    for (k = 0; k < npoints; k++) {
        float f = (float)((double)k / 7.0 - 40.0);
        uint32_t fb;
        tdb_stmt(b, k % 37 == 0 ? 100 : k % 5);
        if (k % 50 == 0) tdb_bufsize(b, 0x9000 + k, 20 + k % 30);
        tdb_var(b, 9, 0, (k * 37) % 256, 1);
        tdb_var(b, 10, 1, (k * 7919) % 65536, 2);
        tdb_var(b, 11, 2, k % 7 == 6 ? k * 1000 - 300000 : longs[k % 6], 8);
        tdb_var(b, 12, 3, k % 6 == 5 ? k : ulongs[k % 5], 8);
        for (i = 0; i < k % 3; i++) tdb_var(b, 13, 4, (k * 13 + i * 500) % 2000 - 1000, 4);
        tdb_var(b, 14, 5, 0x9000 + k / 50 * 50 + k % 40, 8);
        if (k % 2) {   /* a blob: its length, then its bytes */
            tdb_var(b, 15, 6, k % 4, 4);
            tdb_raw(b, "wxyz", (size_t)(k % 4));
        }
        memcpy(&fb, &f, 4);
        tdb_var(b, 16, 7, fb, 4);
        tdb_var(b, 17, 8, (k * 104729) % 0x1000000, 3);
        tdb_u8(b, 0);
    }
}

/* Every comparison form the column kernel turns into intervals, and the forms it leaves
   to the general path, over every format: the same counts and listings as without the
   index. */
static void test_columns_same_results(void **state) {
    static const char *const types[] = {"i8", "u16", "long", "ulong", "int", "char*", "blob", "float", "u24",
                                        "int,ulong", "*"};
    static const char *const wheres[] = {
        NULL, "(> (v/value a) 0)", "(< (v/value a) 0)", "(>= (v/value a) -9223372036854775808)",
        "(<= (v/value a) 9223372036854775807)", "(> (v/value a) 18446744073709551615)",
        "(>= (v/value a) 18446744073709551615)", "(< (v/value a) -1)", "(<= (v/value a) -9223372036854775808)",
        "(= (v/value a) 1)", "(!= (v/value a) 1)", "(and (> (v/value a) -100) (< (v/value a) 100))",
        "(and (> (v/value a) 100) (< (v/value a) 50))", "(< 5 (v/value a))", "(>= -3 (v/value a))",
        "(= 0 (v/value a))", "(> (v/size a) 30)", "(and (> (v/size a) 30) (< (v/value a) 0x9050))",
        "(> (v/value a) 2.5)", "(> (v/value a) -0x8000000000000001)", "(< (v/bits a) 24)",
        "(= (v/name a) \"e\")", "(or (> (v/value a) 100) (< (v/value a) -100))", "(> (+ (v/value a) 1) 0)",
        "(> (index) 300)", "(= (pc) 3)"};
    buf tr = {NULL, 0, 0}, ix;
    fq_trace *a, *b;
    frames_error err;
    size_t i, j;
    (void)state;
    mt_trace(&tr, 600);
    a = open_mem(tr.p, tr.n, 0);
    b = open_mem(tr.p, tr.n, 0);
    ix = build_index(a, NULL);
    assert_int_equal(fq_index_attach(b, ix.p, ix.n, &err), 0);
    for (i = 0; i < sizeof types / sizeof types[0]; i++)
        for (j = 0; j < sizeof wheres / sizeof wheres[0]; j++) {
            qdesc d = {{NULL}, NULL, NULL, 0, 0, {0}, 0, 0};
            char what[160], var[40];
            snprintf(var, sizeof var, "a:%s", types[i]);
            d.vars[0] = var;
            d.where = wheres[j];
            snprintf(what, sizeof what, "%s %s", var, wheres[j] ? wheres[j] : "");
            same(a, b, &d, what);
            d.mask = UINT64_MAX;   /* one statement */
            d.stmt = 3;
            same(a, b, &d, what);
            d.mask = 0x1;          /* several statements, merged for listings */
            d.stmt = 0;
            same(a, b, &d, what);
        }
    {   /* two variables, a soft predicate, names, distinct records */
        qdesc d2 = {{"a:int,long", "b:*"}, "(distinct-vars a b)", "(> (v/value b) 10)", 0, 0, {0}, 0, 0};
        same(a, b, &d2, "two variables, soft");
        d2.flags = FQ_COMPAT_DISTINCT_VALUE;
        same(a, b, &d2, "distinct records");
        d2.flags = FQ_DEDUP;
        same(a, b, &d2, "dedup");
    }
    fq_trace_close(a);
    fq_trace_close(b);
    free(ix.p);
    free(tr.p);
}

/* A bindings_only listing with the index's columns reads nothing of the trace's points:
   with every point overwritten after the index is attached, it still lists what the
   intact trace holds, where a full listing finds the trace no longer matches. Blob
   types (contents in the trace only) take the trace's path. */
static void test_bindings_without_trace(void **state) {
    static const qdesc queries[] = {
        {{"a:int"}, "(> (v/value a) 0)", NULL, 0, 0, {0}, 0, 0},
        {{"a:int,long", "b:char*"}, "(> (v/size b) 3)", NULL, UINT64_MAX, 3, {0}, 0, 0},
        {{"a:i8,u16,long,ulong,int,char*,float,u24"}, NULL, NULL, 1, 0, {0}, 0, FQ_DEDUP}};
    static const qdesc blob = {{"a:blob"}, NULL, NULL, 0, 0, {0}, 0, 0};
    buf tr = {NULL, 0, 0}, ix;
    fq_trace *a, *b;
    frames_error err;
    size_t i;
    int rc;
    (void)state;
    mt_trace(&tr, 400);
    ix = index_of(&tr);
    a = open_mem(tr.p, tr.n, 0);
    {
        unsigned char *copy = (unsigned char *)malloc(tr.n);
        uint64_t first;
        memcpy(copy, tr.p, tr.n);
        b = open_mem(copy, tr.n, 0);
        assert_int_equal(fq_index_attach(b, ix.p, ix.n, &err), 0);
        first = get_le(ix.p + 136, 8);   /* the index's offset of the first point */
        assert_true(first > 0 && first < tr.n);
        memset(copy + first, 0xee, tr.n - first);
        for (i = 0; i < sizeof queries / sizeof queries[0]; i++) {
            char *x = run_bindings(a, &queries[i], 1, 0, 0, &rc), *y;
            assert_int_equal(rc, 0);
            assert_true(strlen(x) > 100);
            y = run_bindings(b, &queries[i], 2, 0, 1, &rc);
            assert_int_equal(rc, 0);
            assert_string_equal(x, y);
            free(y);
            y = run_bindings(b, &queries[i], 1, 0, 0, &rc);
            assert_int_equal(rc, FQ_E_STALE);
            free(y);
            free(x);
        }
        free(run_bindings(b, &blob, 1, 0, 1, &rc));
        assert_int_equal(rc, FQ_E_STALE);
        fq_trace_close(b);
        free(copy);
    }
    fq_trace_close(a);
    free(ix.p);
    free(tr.p);
}

typedef struct progress_log {
    uint64_t calls, last, total;
    int backwards, total_changed;
} progress_log;

static void log_progress(void *ctx, uint64_t done, uint64_t total) {
    progress_log *l = (progress_log *)ctx;
    if (l->calls && done < l->last) l->backwards = 1;
    if (l->calls && total != l->total) l->total_changed = 1;
    l->calls++;
    l->last = done;
    l->total = total;
}

/* fq_index_progress: reports that never go back, end at the total, one at least every
   65536 points of each walk; and the index is the same with and without them. */
static void test_index_progress(void **state) {
    buf tr = {NULL, 0, 0}, plain, watched;
    fq_trace *t;
    progress_log l;
    (void)state;
    mt_trace(&tr, 200000);
    plain = index_of(&tr);
    t = open_mem(tr.p, tr.n, 0);
    memset(&l, 0, sizeof l);
    fq_index_progress(t, log_progress, &l);
    watched = build_index(t, NULL);
    fq_trace_close(t);
    assert_int_equal(plain.n, watched.n);
    assert_memory_equal(plain.p, watched.p, plain.n);
    assert_false(l.backwards);
    assert_false(l.total_changed);
    assert_true(l.total > 0);
    assert_int_equal(l.last, l.total);
    assert_true(l.calls >= 3 * (200000 / 65536));   /* loading, points, columns */
    free(plain.p);
    free(watched.p);
    free(tr.p);
}

/* The records the columns must hold, found by walking the trace here: per point, its
   statement and its variables (type, name, position, value bytes). */
typedef struct mt_rec {
    uint32_t type, name, slot, len;
    const unsigned char *val;
} mt_rec;

typedef struct mt_point {
    uint64_t stmt;
    size_t first, n;   /* records[first .. first + n) */
} mt_point;

static size_t mt_walk(const unsigned char *d, size_t len, mt_point **pts, mt_rec **recs, size_t *nrec,
                      uint32_t *ntypes, uint32_t types[][3]) {
    uint64_t nchars = get_le(d, 8), off = 8 + nchars, i;
    size_t np = 0, nr = 0;
    *ntypes = (uint32_t)get_le(d + off, 4);
    off += 4;
    for (i = 0; i < *ntypes; i++, off += 12) {
        types[i][0] = (uint32_t)get_le(d + off, 4);
        types[i][1] = (uint32_t)get_le(d + off + 4, 4);
        types[i][2] = (uint32_t)get_le(d + off + 8, 4);
    }
    *pts = NULL;
    *recs = NULL;
    while (off < len) {
        uint32_t slot = 0;
        *pts = (mt_point *)realloc(*pts, (np + 1) * sizeof **pts);
        (*pts)[np].stmt = 0;
        (*pts)[np].first = nr;
        for (;;) {
            unsigned tag = d[off++];
            if (tag == 0) break;
            if (tag == 1) (*pts)[np].stmt = get_le(d + off, 8), off += 8;
            else if (tag == 3) off += 16;
            else if (tag == 4) off += 8;
            else {
                mt_rec *r;
                uint32_t type = (uint32_t)get_le(d + off + 4, 4), size = types[type][2];
                *recs = (mt_rec *)realloc(*recs, (nr + 1) * sizeof **recs);
                r = &(*recs)[nr++];
                r->name = (uint32_t)get_le(d + off, 4);
                r->type = type;
                r->slot = slot++;
                off += 8;
                if (types[type][1] == 4 && size == 0) size = (uint32_t)get_le(d + off, 4), off += 4;
                r->len = size;
                r->val = d + off;
                off += size;
            }
        }
        (*pts)[np].n = nr - (*pts)[np].first;
        np++;
    }
    *nrec = nr;
    return np;
}

/* v/size of every char* variable, from a query without an index (the trace's own memory
   map): per point, 1 + size, or 0 when it has none. */
typedef struct mt_sizes {
    uint64_t *size;
} mt_sizes;

static int mt_size_of(void *ctx, const fq_result *r) {
    mt_sizes *s = (mt_sizes *)ctx;
    s->size[r->counter] = (r->bind[0].flags & FQ_B_HAS_SIZE) ? 1 + r->bind[0].size : 0;
    return 0;
}

static int mt_cmp_stmt(const void *x, const void *y) {
    const mt_point *a = *(const mt_point *const *)x, *b = *(const mt_point *const *)y;
    if (a->stmt != b->stmt) return a->stmt < b->stmt ? -1 : 1;
    return a < b ? -1 : a > b;
}

/* The columns of trace tr's index hold exactly its variables, in posting order. */
static void check_columns(const unsigned char *tr, size_t len, const buf *ix, const char *ptrtype) {
    mt_point *pts, **order;
    mt_rec *recs;
    size_t np, nrec, j;
    uint32_t ntypes, types[64][3], t;
    uint64_t dir = get_le(ix->p + 144 + 16 * 7, 8), dirlen = get_le(ix->p + 152 + 16 * 7, 8);
    uint64_t data = get_le(ix->p + 144 + 16 * 8, 8), datalen = get_le(ix->p + 152 + 16 * 8, 8), total = 0;
    mt_sizes sz;
    fq_trace *plain = open_mem(tr, len, 0);
    fq_query *q;
    fq_plan *p;
    frames_error err;
    qdesc d = {{NULL}, NULL, NULL, 0, 0, {0}, 0, 0};
    char var[40];
    np = mt_walk(tr, len, &pts, &recs, &nrec, &ntypes, types);
    assert_int_equal(dirlen, ntypes * 32);
    assert_int_equal(get_le(ix->p + 72, 8), np);
    /* the sizes, through the trace's own indexing */
    sz.size = (uint64_t *)calloc(np, sizeof(uint64_t));
    snprintf(var, sizeof var, "q:%s", ptrtype);
    d.vars[0] = var;
    p = compile(plain, &d, &q);
    assert_int_equal(fq_run(p, NULL, mt_size_of, &sz, NULL, &err), 0);
    fq_plan_close(p);
    fq_query_close(q);
    fq_trace_close(plain);
    /* posting order: statements ascending, points ascending */
    order = (mt_point **)malloc(np * sizeof *order);
    for (j = 0; j < np; j++) order[j] = &pts[j];
    qsort(order, np, sizeof *order, mt_cmp_stmt);
    for (t = 0; t < ntypes; t++) {
        const unsigned char *e = ix->p + dir + 32 * t;
        uint64_t n = get_le(e, 8), r = 0, at = data + get_le(e + 8, 8), col[7];
        uint32_t cw = (uint32_t)get_le(e + 16, 4), c = (uint32_t)get_le(e + 20, 4), sw = e[24], nw = e[25], vw = e[26];
        int ptr = types[t][1] == 3, blob = types[t][1] == 4, k;
        uint64_t lens[7];
        lens[0] = cw ? np * cw : 0;
        lens[1] = cw ? (np / 64 + 1) * 8 : 0;
        lens[2] = n * sw, lens[3] = n * nw, lens[4] = n * vw;
        lens[5] = ptr ? n * 8 : 0, lens[6] = ptr ? (n + 63) / 64 * 8 : 0;
        for (k = 0; k < 7; k++) {
            col[k] = at;
            at += (lens[k] + 7) / 8 * 8;
        }
        if (n) {
            assert_true(at <= data + datalen);
            assert_int_equal(e[27], (ptr ? 1 : 0) | (blob ? 2 : 0));
            assert_int_equal(vw, blob ? 4 : types[t][2]);
        }
        for (j = 0; j < np; j++) {
            const mt_point *pt = order[j];
            uint64_t expect = 0, i;
            for (i = 0; i < pt->n; i++) expect += recs[pt->first + i].type == t;
            if (!n) {
                assert_int_equal(expect, 0);
                continue;
            }
            assert_int_equal(cw ? get_le(ix->p + col[0] + cw * j, (int)cw) : c, expect);
            if (cw && j % 64 == 0) assert_int_equal(get_le(ix->p + col[1] + 8 * (j / 64), 8), r);
            for (i = 0; i < pt->n; i++) {
                const mt_rec *rc = &recs[pt->first + i];
                if (rc->type != t) continue;
                assert_int_equal(get_le(ix->p + col[2] + sw * r, (int)sw), rc->slot);
                assert_int_equal(get_le(ix->p + col[3] + nw * r, (int)nw), rc->name);
                if (blob) assert_int_equal(get_le(ix->p + col[4] + 4 * r, 4), rc->len);
                else assert_memory_equal(ix->p + col[4] + vw * r, rc->val, vw);
                if (ptr) {
                    uint64_t want = sz.size[pt - pts];
                    int valid = (int)(ix->p[col[6] + r / 8] >> (r % 8) & 1);
                    assert_int_equal(valid, want != 0);
                    if (valid) assert_int_equal(get_le(ix->p + col[5] + 8 * r, 8), want - 1);
                }
                r++;
            }
        }
        assert_int_equal(r, n);
        total += n;
    }
    assert_int_equal(total, nrec);
    free(order);
    free(sz.size);
    free(pts);
    free(recs);
}

static void test_columns_contents(void **state) {
    buf tr = {NULL, 0, 0}, ix;
    fq_trace *t;
    fq_index_info info;
    size_t len;
    unsigned char *small = tu_read_file(small_trace(), &len);
    (void)state;
    mt_trace(&tr, 700);
    t = open_mem(tr.p, tr.n, 0);
    ix = build_index(t, &info);
    assert_int_equal(info.records, 700 * 7 + 699 + 350);   /* 7 a point, ints k % 3, blobs half */
    check_columns(tr.p, tr.n, &ix, "char*");
    fq_trace_close(t);
    free(ix.p);
    t = open_mem(small, len, 0);
    ix = build_index(t, &info);
    check_columns(small, len, &ix, "char*");
    fq_trace_close(t);
    free(ix.p);
    free(small);
    free(tr.p);
}

/* Forged column sections: a directory that does not fit is refused when attached;
   counts, marks, names and postings that do not fit are reported when read, by listings
   and counts alike. */
static void test_columns_forged(void **state) {
    buf tr = {NULL, 0, 0}, ix, bad = {NULL, 0, 0};
    fq_trace *t;
    frames_error err;
    uint64_t dir, data, post;
    size_t i;
    (void)state;
    mt_trace(&tr, 300);
    t = open_mem(tr.p, tr.n, 0);
    ix = build_index(t, NULL);
    fq_trace_close(t);
    dir = get_le(ix.p + 144 + 16 * 7, 8);
    data = get_le(ix.p + 144 + 16 * 8, 8);
    post = get_le(ix.p + 144 + 16 * 6, 8);
    tdb_raw(&bad, ix.p, ix.n);
    {   /* the directory: every field of the int type (4) made impossible */
        static const struct { unsigned at, n; uint64_t v; } forge[] = {
            {0, 8, 0xffffffffff}, {8, 8, 4}, {8, 8, 0x7ffffff8}, {16, 4, 3}, {16, 4, 0}, {20, 4, 5},
            {24, 1, 3}, {25, 1, 0}, {26, 1, 8}, {27, 1, 1}, {28, 4, 1}};
        for (i = 0; i < sizeof forge / sizeof forge[0]; i++) {
            t = open_mem(tr.p, tr.n, 0);
            memcpy(bad.p, ix.p, ix.n);
            tu_put_le(bad.p + dir + 32 * 4 + forge[i].at, forge[i].v, (int)forge[i].n);
            if (fq_index_attach(t, bad.p, bad.n, &err) != FRAMES_E_FORMAT)
                fail_msg("directory field %u = %llu accepted", forge[i].at, (unsigned long long)forge[i].v);
            assert_non_null(strstr(err.message, "column"));
            fq_trace_close(t);
        }
    }
    {   /* the data section cut short (its length and the file) */
        t = open_mem(tr.p, tr.n, 0);
        memcpy(bad.p, ix.p, ix.n);
        tu_put_le(bad.p + 152 + 16 * 8, get_le(ix.p + 152 + 16 * 8, 8) - 8, 8);
        reseal(bad.p);
        assert_int_equal(fq_index_attach(t, bad.p, bad.n - 8, &err), FRAMES_E_FORMAT);
        fq_trace_close(t);
    }
    {   /* data: the int counts (type 4, counts first), a mark, a name, a posting */
        qdesc d = {{"a:int"}, NULL, NULL, 0, 0, {0}, 0, 0}, dn = {{"a:int"}, "(= (v/name a) \"e\")", NULL, 0, 0, {0}, 0, 0};
        uint64_t cols = data + get_le(ix.p + dir + 32 * 4 + 8, 8), np = 300, n4 = get_le(ix.p + dir + 32 * 4, 8);
        uint64_t marks = cols + (np + 7) / 8 * 8, names = marks + (np / 64 + 1) * 8 + (n4 + 7) / 8 * 8;
        struct { uint64_t at, v; int n; const qdesc *q; } forge[4];
        assert_int_equal(get_le(ix.p + dir + 32 * 4 + 16, 4), 1);   /* 0, 1 or 2 a point: counts */
        forge[0].at = cols + 10, forge[0].v = 200, forge[0].n = 1, forge[0].q = &d;
        forge[1].at = marks + 8, forge[1].v = 3, forge[1].n = 8, forge[1].q = &d;
        forge[2].at = names + 5, forge[2].v = 250, forge[2].n = 1, forge[2].q = &dn;
        forge[3].at = post + 4 * 3, forge[3].v = 0, forge[3].n = 4, forge[3].q = &d;
        for (i = 0; i < 4; i++) {
            unsigned th;
            t = open_mem(tr.p, tr.n, 0);
            memcpy(bad.p, ix.p, ix.n);
            tu_put_le(bad.p + forge[i].at, forge[i].v, forge[i].n);
            assert_int_equal(fq_index_attach(t, bad.p, bad.n, &err), 0);
            for (th = 1; th <= 2; th++) {
                int rc;
                uint64_t n;
                fq_query *q;
                fq_plan *p = compile(t, forge[i].q, &q);
                fq_run_options o;
                char *x = run_json(t, forge[i].q, th, 0, 0, 0, &rc);
                if (rc != FQ_E_STALE) fail_msg("forgery %u, listing: rc %d", (unsigned)i, rc);
                free(x);
                fq_run_options_default(&o);
                o.threads = th;
                rc = fq_run(p, &o, NULL, NULL, &n, &err);
                if (i != 3 && rc != FQ_E_STALE) fail_msg("forgery %u, count: rc %d", (unsigned)i, rc);
                if (rc == FQ_E_STALE) assert_non_null(strstr(err.message, "rebuild"));
                fq_plan_close(p);
                fq_query_close(q);
            }
            fq_trace_close(t);
        }
    }
    free(ix.p);
    free(bad.p);
    free(tr.p);
}

/* ---------------------------------------------------------------- the command line */

static char *sh(int *status, const char *fmt, const char *a, const char *b) {
    char cmd[4096];
    snprintf(cmd, sizeof cmd, fmt, tu_frames_bin(), a, b);
    return tu_run(status, "%s", cmd);
}

#define ANY_STATUS (-1)

/* Run sh(fmt, a, b): its exit status is want (ANY_STATUS: not checked) and its output
   holds has (NULL: not checked). */
static void sh_expect(int want, const char *has, const char *fmt, const char *a, const char *b) {
    int st;
    char *out = sh(&st, fmt, a, b);
    if (want != ANY_STATUS) assert_int_equal(st, want);
    if (has) assert_non_null(strstr(out, has));
    free(out);
}

static void test_cli(void **state) {
    size_t len;
    unsigned char *tr = tu_read_file(small_trace(), &len);
    char trace[512], index[530], other[512], *out, *plain;
    int st;
    struct utimbuf ut;
    (void)state;
    snprintf(trace, sizeof trace, "%s", tu_tmp_path(".trace"));
    snprintf(index, sizeof index, "%s.fqidx", trace);
    snprintf(other, sizeof other, "%s", tu_tmp_path(".idx"));
    assert_int_equal(tu_write_file(trace, tr, len), 0);

    /* without an index */
    plain = sh(&st, "'%s' query '%s' --var a:int --where '(> (v/value a) 500)' --stmt 7%s 2>&1", trace, "");
    assert_int_equal(st, 0);
    out = sh(&st, "'%s' query '%s' --var a:int --stmt 7 -v --count%s 2>&1", trace, "");
    assert_non_null(strstr(out, "frames query: no index ("));
    assert_non_null(strstr(out, ".fqidx not found)\n96\n"));
    free(out);
    /* frames index: the default path, a report */
    sh_expect(0, ".fqidx: 1000 points (1000 in posting lists), 32 statements, 1000 buffer sizes",
              "'%s' index '%s'%s", trace, "");
    sh_expect(0, "valid, 1000 points", "'%s' index --check '%s'%s", trace, "");
    out = sh(&st, "'%s' query '%s' --var a:int --where '(> (v/value a) 500)' --stmt 7%s 2>&1", trace, "");
    assert_int_equal(st, 0);
    assert_string_equal(out, plain);
    free(out);
    sh_expect(ANY_STATUS, "(used): 1000 points, 32 statements\n96\n",
              "'%s' query '%s' --var a:int --stmt 7 -v --count%s 2>&1", trace, "");
    sh_expect(ANY_STATUS, "{\"index\":\"used\",\"path\":",
              "'%s' query '%s' --var a:int --stmt 7 -v --json --limit 1%s 2>&1", trace, "");
    out = sh(&st, "'%s' query '%s' --var a:int --stmt 7 -v --no-index --count%s 2>&1", trace, "");
    assert_string_equal(out, "frames query: no index\n96\n");
    free(out);
    /* -o and --index */
    sh_expect(0, "\"valid\":true,\"points\":1000,", "'%s' index '%s' -o '%s' --json", trace, other);
    sh_expect(ANY_STATUS, "(used)",
              "'%s' query '%s' --index '%s' --var a:int --stmt 7 -v --count 2>&1", trace, other);
    /* the trace changes (here: its time): warned, ignored, same results */
    ut.actime = ut.modtime = 1000000000;
    assert_int_equal(utime(trace, &ut), 0);
    out = sh(&st, "'%s' query '%s' --var a:int --where '(> (v/value a) 500)' --stmt 7%s 2>/dev/null", trace, "");
    assert_int_equal(st, 0);
    assert_string_equal(out, plain);
    free(out);
    out = sh(&st, "'%s' query '%s' --var a:int --stmt 7 --count%s 2>&1", trace, "");
    assert_non_null(strstr(out, "ignoring the index"));
    assert_non_null(strstr(out, "modified after the index was built (rebuild it); frames index rebuilds it"));
    free(out);
    sh_expect(1, NULL, "'%s' index --check '%s'%s 2>&1", trace, "");
    /* --build-index replaces it */
    out = sh(&st, "'%s' query '%s' --var a:int --stmt 7 --count -v --build-index%s 2>&1", trace, "");
    assert_non_null(strstr(out, "(built)"));
    assert_null(strstr(out, "ignoring"));
    free(out);
    sh_expect(0, NULL, "'%s' index --check '%s'%s 2>&1", trace, "");
    /* a damaged index: ignored with a warning */
    assert_int_equal(tu_write_file(other, "FQINDEX", 7), 0);
    out = sh(&st, "'%s' query '%s' --index '%s' --var a:int --stmt 7 --count 2>&1", trace, other);
    assert_int_equal(st, 0);
    assert_non_null(strstr(out, "not a frames query index"));
    assert_non_null(strstr(out, "96\n"));
    free(out);
    /* usage errors */
    sh_expect(2, NULL, "'%s' index -'%s'%s < /dev/null 2>&1", "", "");
    sh_expect(2, NULL, "'%s' index '%s' -o '%s' 2>&1", trace, trace);
    sh_expect(2, NULL, "'%s' query '%s' --no-index --build-index%s 2>&1", trace, "");
    sh_expect(0, "usage: frames index", "'%s' index --help%s%s", "", "");
    remove(index);
    remove(other);
    remove(trace);
    free(plain);
    free(tr);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tracedb_same_results),
        cmocka_unit_test(test_tracedb_same_picks),
        cmocka_unit_test(test_pick_rare_statement),
        cmocka_unit_test(test_inherited_statements),
        cmocka_unit_test(test_cut_trace),
        cmocka_unit_test(test_far_deltas),
        cmocka_unit_test(test_frames_same_results),
        cmocka_unit_test(test_stale_and_foreign),
        cmocka_unit_test(test_files_and_mtime),
        cmocka_unit_test(test_damaged_index),
        cmocka_unit_test(test_columns_same_results),
        cmocka_unit_test(test_bindings_without_trace),
        cmocka_unit_test(test_index_progress),
        cmocka_unit_test(test_columns_contents),
        cmocka_unit_test(test_columns_forged),
        cmocka_unit_test(test_cli),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
