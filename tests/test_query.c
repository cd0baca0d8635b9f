/* test_query.c - frames_query.h and `frames query`.

   Expectations come from outside the engine: trace-db's own listings (vectors/tracedb),
   the protobuf text dumps of the frames vectors (counted by hand, noted at each test), the
   trace-db spec's worked examples and hand-computed arithmetic. */
#include "testutil.h"
#include "tdbbuild.h"

#include "frames_query.h"

/* ---------------------------------------------------------------- helpers */


typedef struct collect {
    tu_text out;
    int style;
    uint64_t n;
    uint64_t counters[64];   /* first results' point counters */
} collect;

static int collect_fn(void *ctx, const fq_result *r) {
    collect *c = (collect *)ctx;
    char line[8192];
    size_t n = fq_format_result(r, c->style, line, sizeof line);
    assert_true(n < sizeof line);
    tu_text_add(&c->out, line, n);
    tu_text_add(&c->out, "\n", 1);
    if (c->n < 64) c->counters[c->n] = r->counter;
    c->n++;
    return 0;
}

#ifdef TQ_WITH_INDEX
/* tests/test_query_indexed.c compiles this file with TQ_WITH_INDEX: every trace the tests
   open gets a persistent index, built in memory and attached, so that every query of this
   file also runs through the index against the same expectations. The buffers stay
   reachable until the process ends (an attached index must outlive its trace). */
static uint8_t *tq_indexes[4096];
static size_t tq_nindexes;

static void tq_free_indexes(void) {
    while (tq_nindexes) free(tq_indexes[--tq_nindexes]);
}

static fq_trace *with_index(fq_trace *t) {
    frames_membuf m;
    frames_sink sink = frames_sink_memory(&m);
    frames_error err;
    frames_membuf_init(&m, NULL);
    if (fq_index_build(t, &sink, NULL, &err) < 0) {
        /* only a frames trace with a frame that does not decode cannot be indexed */
        fq_trace_info info;
        fq_trace_info_get(t, &info);
        if (info.format != FQ_TRACE_FRAMES) fail_msg("index: %s", err.message);
        frames_membuf_free(&m);
        return t;
    }
    if (!tq_nindexes) atexit(tq_free_indexes);
    assert_true(tq_nindexes < sizeof tq_indexes / sizeof tq_indexes[0]);
    tq_indexes[tq_nindexes++] = m.data;
    if (fq_index_attach(t, m.data, m.size, &err) < 0) fail_msg("attach: %s", err.message);
    return t;
}
#else
#define with_index(t) (t)
#endif

static fq_trace *open_trace(const char *path, uint32_t flags, uint32_t stride) {
    fq_open_options o;
    fq_trace *t = NULL;
    frames_error err;
    fq_open_options_default(&o);
    o.flags = flags;
    if (stride) o.index_stride = stride;
    if (fq_trace_open_path(&t, path, &o, &err) < 0) fail_msg("open %s: %s", path, err.message);
    return with_index(t);
}

static fq_trace *open_mem(const void *data, size_t n) {
    fq_trace *t = NULL;
    frames_error err;
    if (fq_trace_open_memory(&t, data, n, NULL, &err) < 0) fail_msg("open memory: %s", err.message);
    return with_index(t);
}

/* A query from command-line style pieces. vars: "NAME:TYPES" strings, NULL-terminated. */
typedef struct qspec {
    const char *vars[8];
    const char *where;
    const char *soft[4];
    uint64_t mask, stmt;
    uint32_t flags;
    uint64_t pcs[8];   /* lo, hi pairs */
    int npcs;
} qspec;

static fq_query *build(const qspec *s) {
    fq_query *q;
    fq_query_open(&q, NULL, NULL);
    frames_error err;
    int i;
    assert_non_null(q);
    for (i = 0; s->vars[i]; i++) {
        const char *colon = strchr(s->vars[i], ':');
        char name[64];
        assert_non_null(colon);
        memcpy(name, s->vars[i], (size_t)(colon - s->vars[i]));
        name[colon - s->vars[i]] = 0;
        assert_int_equal(fq_query_var(q, name, colon + 1), i);
    }
    if (s->where && fq_query_where_text(q, s->where, &err) < 0) fail_msg("where: %s", err.message);
    for (i = 0; i < 4 && s->soft[i]; i++)
        if (fq_query_soft_text(q, s->soft[i], &err) < 0) fail_msg("soft: %s", err.message);
    fq_query_statement(q, s->mask, s->stmt);
    for (i = 0; i < s->npcs; i++) assert_int_equal(fq_query_pc_range(q, s->pcs[2 * i], s->pcs[2 * i + 1]), 0);
    fq_query_flags(q, s->flags);
    return q;
}

/* Run a query; the listing goes to c (style), the count is returned. */
static uint64_t run_on(fq_trace *t, const qspec *s, int style, unsigned threads, uint64_t chunk,
                       collect *c) {
    fq_query *q = build(s);
    fq_plan *p;
    fq_run_options o;
    frames_error err;
    uint64_t n = 0;
    if (fq_compile(&p, q, t, &err) < 0) fail_msg("compile: %s", err.message);
    fq_run_options_default(&o);
    o.threads = threads;
    o.chunk = chunk;
    c->style = style;
    if (fq_run(p, &o, collect_fn, c, &n, &err) < 0) fail_msg("run: %s", err.message);
    assert_int_equal(n, c->n);
    fq_plan_close(p);
    fq_query_close(q);
    return n;
}

static uint64_t count_on(fq_trace *t, const qspec *s) {
    collect c;
    uint64_t n;
    memset(&c, 0, sizeof c);
    n = run_on(t, s, FQ_LIST_TRACEDB, 1, 0, &c);
    free(c.out.s);
    return n;
}

static uint64_t count_path(const char *path, const qspec *s) {
    fq_trace *t = open_trace(path, 0, 0);
    uint64_t n = count_on(t, s);
    fq_trace_close(t);
    return n;
}

/* ---------------------------------------------------------------- trace-db reference listings */

/* The "# query: --var a:int --pred (...) ..." line of a .expected file. */
static void parse_expected_query(char *line, qspec *s, int *capi) {
    char *p = line + strlen("# query: "), *parts[32];
    int n = 0, depth = 0, i, nv = 0, ns = 0;
    memset(s, 0, sizeof *s);
    *capi = 0;
    parts[n++] = p;
    for (; *p; p++) {
        if (*p == '(') depth++;
        else if (*p == ')') depth--;
        else if (!depth && p[0] == ' ' && p[1] == '-' && p[2] == '-') {
            *p = 0;
            parts[n++] = p + 1;
        }
    }
    for (i = 0; i < n; i++) {
        char *opt = parts[i], *val = strchr(opt, ' ');
        if (val) *val++ = 0;
        if (!strcmp(opt, "--var")) s->vars[nv++] = val;
        else if (!strcmp(opt, "--pred")) s->where = val;
        else if (!strcmp(opt, "--soft")) s->soft[ns++] = val;
        else if (!strcmp(opt, "--mask")) s->mask = strtoull(val, NULL, 0);
        else if (!strcmp(opt, "--stmt")) s->stmt = strtoull(val, NULL, 0);
        else if (!strcmp(opt, "--capi")) *capi = 1;
        else if (!strcmp(opt, "--dedup")) s->flags |= FQ_DEDUP;
        else fail_msg("unknown option in expected file: %s", opt);
    }
}

/* Body of an .expected file: the result lines, without the query and the run line. */
static char *expected_body(const char *name, qspec *s, int *capi, uint64_t *count, char **qline) {
    char path[256];
    size_t len;
    char *text, *nl, *last;
    snprintf(path, sizeof path, "vectors/tracedb/%s", name);
    text = (char *)tu_read_file(tu_shared(path), &len);
    if (!text) fail_msg("missing %s", tu_shared(path));
    nl = strchr(text, '\n');
    *nl = 0;
    *qline = text;
    parse_expected_query(text, s, capi);
    text[len - 1] = 0;   /* trailing newline */
    last = strrchr(nl + 1, '\n');
    assert_non_null(last);
    assert_int_equal(sscanf(last + 1, "run 1: results=%llu", (unsigned long long *)count), 1);
    last[1] = 0;
    return nl + 1;
}

static void check_listing(const char *name, unsigned threads, uint64_t chunk, uint32_t stride) {
    qspec s;
    int capi;
    uint64_t count;
    char *qline, *body = expected_body(name, &s, &capi, &count, &qline);
    fq_trace *t = open_trace(tu_shared("vectors/tracedb/small.trace"), 0, stride);
    collect c;
    memset(&c, 0, sizeof c);
    assert_int_equal(run_on(t, &s, capi ? FQ_LIST_CAPI : FQ_LIST_TRACEDB, threads, chunk, &c), count);
    if (strcmp(c.out.s, body) != 0) fail_msg("%s (threads %u): listing differs", name, threads);
    free(c.out.s);
    free(qline);
    fq_trace_close(t);
}

static const char *const expected_files[] = {
    "q01_gt500.expected", "q02_lt_pair.expected", "q03_lt_pair_distinct.expected",
    "q04_gt500_stmt7.expected", "q05_all_int.expected", "q06_bufsize.expected",
    "q07_soft.expected", "q08_sum.expected", "q09_mixed_types.expected", "q10_dedup.expected",
    "q11_fdiv.expected", "q13_or_not.expected", "q14_mask_lowbit.expected"};

static void test_tracedb_listings(void **state) {
    size_t i;
    (void)state;
    for (i = 0; i < sizeof expected_files / sizeof expected_files[0]; i++)
        check_listing(expected_files[i], 1, 0, 0);
}

/* Same listings from 3 threads over 37-point work items and a 16-point index: the order
   of results must not depend on the threads. */
static void test_tracedb_listings_threads(void **state) {
    size_t i;
    (void)state;
    for (i = 0; i < sizeof expected_files / sizeof expected_files[0]; i++) {
        check_listing(expected_files[i], 3, 37, 16);
        check_listing(expected_files[i], 2, 16, 16);
    }
}

/* q12: trace-db reads 8-byte doubles through the float member and finds 229; the right
   answer is 509. With FQ_COMPAT_FLOAT32 the engine reproduces trace-db's listing. */
static void test_tracedb_q12_double(void **state) {
    qspec s;
    int capi;
    uint64_t count, i;
    char *qline, *body = expected_body("q12_double_tracedb_bug.expected", &s, &capi, &count, &qline);
    fq_trace *t = open_trace(tu_shared("vectors/tracedb/small.trace"), 0, 0);
    collect c;
    const char *line;
    (void)state;
    assert_int_equal(count, 229);
    memset(&c, 0, sizeof c);
    assert_int_equal(run_on(t, &s, FQ_LIST_TRACEDB, 1, 0, &c), 509);
    /* every listed value is above 50, and all 509 are listed */
    for (line = c.out.s, i = 0; *line; i++) {
        const char *eq = strstr(line, "d:double=");
        assert_non_null(eq);
        assert_true(strtod(eq + 9, NULL) > 50.0);
        line = strchr(line, '\n') + 1;
    }
    assert_int_equal(i, 509);
    free(c.out.s);
    /* the inverse query finds the rest: 1000 points, one double each */
    s.where = "(<= (v/value d) 50.0)";
    assert_int_equal(count_on(t, &s), 491);
    s.where = "(> (v/value d) 50.0)";
    s.flags = FQ_COMPAT_FLOAT32;
    memset(&c, 0, sizeof c);
    assert_int_equal(run_on(t, &s, FQ_LIST_TRACEDB, 1, 0, &c), 229);
    assert_string_equal(c.out.s, body);
    free(c.out.s);
    free(qline);
    fq_trace_close(t);
}

/* ---------------------------------------------------------------- trace-db writer */

/* spec/trace-db.md §1.5, byte for byte. */
static const unsigned char spec_example[107] = {
    0x0e, 0, 0, 0, 0, 0, 0, 0, 'x', 0, 'y', 0, 'i', 'n', 't', 0, 'c', 'h', 'a', 'r', '*', 0,
    2, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 4, 0, 0, 0, 3, 0, 0, 0, 3, 0, 0, 0, 8, 0, 0, 0,
    3, 0, 0x10, 0, 0, 0, 0, 0, 0, 0x10, 0, 0, 0, 0, 0, 0, 0,
    1, 7, 0, 0, 0, 0, 0, 0, 0,
    2, 0, 0, 0, 0, 0, 0, 0, 0, 0xfe, 0xff, 0xff, 0xff,
    2, 1, 0, 0, 0, 1, 0, 0, 0, 0x08, 0x10, 0, 0, 0, 0, 0, 0,
    0};

static void test_spec_example(void **state) {
    fq_trace *t = open_mem(spec_example, sizeof spec_example);
    qspec s;
    collect c;
    (void)state;
    memset(&s, 0, sizeof s);
    s.vars[0] = "a:int";
    memset(&c, 0, sizeof c);
    assert_int_equal(run_on(t, &s, FQ_LIST_TRACEDB, 1, 0, &c), 1);
    assert_string_equal(c.out.s, "result 0: counter=0 stmt=7 x:int=-2\n");
    free(c.out.s);
    s.vars[0] = "p:char*";
    s.where = "(= (v/size p) 8)";   /* 0x1000 + 16 - 0x1008 */
    memset(&c, 0, sizeof c);
    assert_int_equal(run_on(t, &s, FQ_LIST_TRACEDB, 1, 0, &c), 1);
    assert_string_equal(c.out.s, "result 0: counter=0 stmt=7 y:char*=0x1008[size 8]\n");
    free(c.out.s);
    /* zero free variables: one result per point (trace-db gives two, its defect) */
    memset(&s, 0, sizeof s);
    memset(&c, 0, sizeof c);
    assert_int_equal(run_on(t, &s, FQ_LIST_JSON, 1, 0, &c), 1);
    assert_string_equal(c.out.s, "{\"result\":0,\"counter\":0,\"stmt\":7,\"bindings\":[],"
                                 "\"buffers\":[{\"address\":4096,\"size\":16}]}\n");
    free(c.out.s);
    fq_trace_close(t);
}

/* The point of trace-db's unit tests (spec §7): x = 0u, y = 1u, z = -2, big_positive =
   INT64_MAX, big_negative = INT64_MIN, big_unsigned = UINT64_MAX, var = (void*)0x1234
   in a 4-byte buffer. Expectations worked out by hand. */
static tdb unit_trace(void) {
    static const char names[] = "x\0y\0z\0big_positive\0big_negative\0big_unsigned\0var\0"
                                "unsigned int\0int\0long\0unsigned long\0void*";
    static const uint32_t types[][3] = {{7, 0, 4}, {8, 1, 4}, {9, 1, 8}, {10, 0, 8}, {11, 3, 8}};
    tdb t;
    tdb_header(&t, names, sizeof names, types, 5);
    tdb_bufsize(&t, 0x1234, 4);
    tdb_stmt(&t, 1);
    tdb_var(&t, 0, 0, 0, 4);
    tdb_var(&t, 1, 0, 1, 4);
    tdb_var(&t, 2, 1, (uint64_t)-2, 4);
    tdb_var(&t, 3, 2, (uint64_t)INT64_MAX, 8);
    tdb_var(&t, 4, 2, (uint64_t)INT64_MIN, 8);
    tdb_var(&t, 5, 3, UINT64_MAX, 8);
    tdb_var(&t, 6, 4, 0x1234, 8);
    tdb_u8(&t, 0);
    return t;
}

static uint64_t unit_count(fq_trace *t, const char *a, const char *b, const char *where) {
    qspec s;
    memset(&s, 0, sizeof s);
    s.vars[0] = a;
    s.vars[1] = b;
    s.where = where;
    return count_on(t, &s);
}

static void test_unit_point(void **state) {
    tdb b = unit_trace();
    fq_trace *t = open_mem(b.p, b.n);
    const char *ab = "a:unsigned int,int", *bb = "b:unsigned int,int";
    qspec s;
    collect c;
    (void)state;
    memset(&s, 0, sizeof s);
    s.vars[0] = "a:unsigned int";
    s.vars[1] = "b:int";
    memset(&c, 0, sizeof c);
    assert_int_equal(run_on(t, &s, FQ_LIST_TRACEDB, 1, 0, &c), 2);
    assert_string_equal(c.out.s, "result 0: counter=0 stmt=1 x:unsigned int=0 z:int=-2\n"
                                 "result 1: counter=0 stmt=1 y:unsigned int=1 z:int=-2\n");
    free(c.out.s);
    assert_int_equal(unit_count(t, "a:unsigned int", "b:unsigned int", NULL), 4);
    assert_int_equal(unit_count(t, "a:unsigned int", "b:unsigned int", "(distinct-vars a b)"), 2);
    assert_int_equal(unit_count(t, ab, NULL, "(> (v/value a) 0)"), 1);
    assert_int_equal(unit_count(t, ab, NULL, "(< (v/value a) -1)"), 1);
    assert_int_equal(unit_count(t, ab, bb, "(= (+ (v/value a) (v/value b)) -1)"), 2);
    assert_int_equal(unit_count(t, ab, bb, "(= (- (v/value a) (v/value b)) 3)"), 1);
    assert_int_equal(unit_count(t, ab, bb, "(= (* (v/value a) (v/value b)) 0)"), 5);
    /* x/y = 0 and x/z = -0.0; x/x divides by zero (invalid) */
    assert_int_equal(unit_count(t, ab, bb, "(= (/ (v/value a) (v/value b)) 0)"), 2);
    assert_int_equal(unit_count(t, ab, NULL, "(or (and (> (v/value a) 0) (< (v/value a) 3)) (= (v/value a) -2))"), 2);
    /* exact integers: no 64-bit overflow */
    assert_int_equal(unit_count(t, "a:long", "b:unsigned int", "(> (+ (v/value a) (v/value b)) 9223372036854775807)"), 1);
    assert_int_equal(unit_count(t, "a:long", "b:int", "(< (+ (v/value a) (v/value b)) -9223372036854775808)"), 1);
    assert_int_equal(unit_count(t, "a:unsigned long", "b:unsigned int", "(> (+ (v/value a) (v/value b)) 18446744073709551615)"), 1);
    assert_int_equal(unit_count(t, "a:void*", NULL, "(= (v/size a) 4)"), 1);
    assert_int_equal(unit_count(t, "a:void*", NULL, "(= (v/size a) 5)"), 0);
    /* the first result of a + b = -1 binds (z, y): variable 0 varies fastest */
    memset(&s, 0, sizeof s);
    s.vars[0] = ab;
    s.vars[1] = bb;
    s.where = "(= (+ (v/value a) (v/value b)) -1)";
    memset(&c, 0, sizeof c);
    run_on(t, &s, FQ_LIST_CAPI, 1, 0, &c);
    assert_string_equal(c.out.s, "result 0: stmt=1 z=-2 y=1\nresult 1: stmt=1 y=1 z=-2\n");
    free(c.out.s);
    /* soft predicates over the 9 pairs of {x, y, z}: none keeps 9; a >= 0 holds for 6;
       with b = y as well, only (x, y) and (y, y) satisfy both */
    s.where = NULL;
    assert_int_equal(count_on(t, &s), 9);
    s.soft[0] = "(>= (v/value a) 0)";
    assert_int_equal(count_on(t, &s), 6);
    s.soft[1] = "(= (v/value b) 1)";
    assert_int_equal(count_on(t, &s), 2);
    /* no pair satisfies the soft predicate: the maximum is 0 and all 9 are kept */
    s.soft[0] = "(> (v/value a) 100)";
    s.soft[1] = NULL;
    assert_int_equal(count_on(t, &s), 9);
    fq_trace_close(t);
    free(b.p);
}

/* ---------------------------------------------------------------- arithmetic */

/* With no free variable each point gives one result when the predicate holds: a one-point
   trace turns predicates into booleans. */
static int holds(fq_trace *t, const char *pred) {
    qspec s;
    memset(&s, 0, sizeof s);
    s.where = pred;
    return (int)count_on(t, &s);
}

static void test_arithmetic(void **state) {
    tdb b = unit_trace();
    fq_trace *t = open_mem(b.p, b.n);
    static const struct {
        const char *pred;
        int expect;
    } cases[] = {
        {"(= (/ 7 2) 3.5)", 1},                                  /* always a float division */
        {"(= (/ -7 2) -3.5)", 1},
        {"(> (/ 1 0) 0)", 0}, {"(not (> (/ 1 0) 0))", 1},         /* by zero: invalid */
        {"(not (< (/ 1 0.0) 0))", 1},
        {"(= (+ 9223372036854775807 1) 9223372036854775808)", 1}, /* exact */
        {"(> (+ 18446744073709551615 1) 18446744073709551615)", 1},
        {"(= (- 0 18446744073709551615) -18446744073709551615)", 1},
        {"(< (- -9223372036854775808 1) -9223372036854775808)", 1},
        /* (2^64-1)^2 - (2^64)(2^64-2) = 1 needs 128-bit products */
        {"(= (- (* 18446744073709551615 18446744073709551615) (* (+ 18446744073709551615 1) (- 18446744073709551615 1))) 1)", 1},
        /* three factors: 192 bits */
        {"(= (% (* (* 18446744073709551615 18446744073709551615) 18446744073709551615) 18446744073709551615) 0)", 1},
        {"(= (% (+ (* (* 18446744073709551615 18446744073709551615) 18446744073709551615) 5) 18446744073709551615) 5)", 1},
        {"(> (* (* 18446744073709551615 18446744073709551615) 18446744073709551615) (* 18446744073709551615 18446744073709551615))", 1},
        {"(= (* -3 4) -12)", 1}, {"(= (* -3 -4) 12)", 1}, {"(= (* 0 -4) 0)", 1},
        /* integer and float compare exactly: 2^53 + 1 is not 2^53 */
        {"(= 9007199254740993 9007199254740992.0)", 0},
        {"(> 9007199254740993 9007199254740992.0)", 1},
        {"(< 18446744073709551615 18446744073709551616.0)", 1},
        {"(= 18446744073709551616.0 (+ 18446744073709551615 1))", 1},
        {"(< -1 -0.5)", 1}, {"(> 0 -0.0)", 0}, {"(= 0 -0.0)", 1}, {"(= 3 3.0)", 1},
        {"(> 2 1.9999999)", 1}, {"(< 2 2.0000001)", 1},
        {"(= (+ 0.5 0.25) 0.75)", 1}, {"(= (+ 1 0.5) 1.5)", 1},
        /* extensions */
        {"(= (% 7 3) 1)", 1}, {"(= (% -7 2) -1)", 1}, {"(= (% 7 -2) 1)", 1},
        {"(> (% 7 0) -1)", 0}, {"(= (% 7.5 2) 1.5)", 1}, {"(= (% -7.5 2) -1.5)", 1},
        {"(= (% 1e300 7) 1)", 1}, {"(= (% 1e300 7.5) 0)", 1}, {"(= (% 123456789.125 0.25) 0.125)", 1},
        {"(= (% 1152921504606846976.0 7) 1)", 1}, {"(> (% 1.0 0.0) -1)", 0},
        {"(= (& -1 0xff) 255)", 1}, {"(= (| 0x0f 0xf0) 0xff)", 1}, {"(= (^ -1 0) -1)", 1},
        {"(= (& -4 -6) -8)", 1}, {"(= (| -4 1) -3)", 1}, {"(= (^ 5 -1) -6)", 1},
        {"(= (<< 1 64) (+ 18446744073709551615 1))", 1}, {"(= (<< -3 2) -12)", 1},
        {"(= (>> -7 1) -4)", 1}, {"(= (>> 7 1) 3)", 1}, {"(= (>> (<< 1 64) 64) 1)", 1},
        {"(> (<< 1 65) 0)", 0}, {"(> (<< 1 -1) 0)", 0}, {"(> (& 1.0 1) 0)", 0},
        {"(!= 1 2)", 1}, {"(!= 1 1)", 0}, {"(!= 1 (/ 1 0))", 0},
        {"(= 0x10 16)", 1}, {"(= -0x10 -16)", 1}, {"(= 1e3 1000)", 1},
        {"(and)", 1}, {"(or)", 0}, {"(not (and (or) (and)))", 1},
        {"(= (index) 0)", 1}, {"(= (pc) 1)", 1}, {"(> (tid) 0)", 0}, {"(not (= (tid) 0))", 1},
    };
    size_t i;
    (void)state;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (holds(t, cases[i].pred) != cases[i].expect)
            fail_msg("%s: expected %s", cases[i].pred, cases[i].expect ? "true" : "false");
    }
    fq_trace_close(t);
    free(b.p);
}

/* Values of variables: formats, sizes, invalid values, the memory map. */
static void test_values_and_memory_map(void **state) {
    static const char names[] = "c\0s\0f\0d\0blob\0fixed\0p\0q\0r\0e\0g\0"
                                "char\0short\0float\0double\0string\0four\0ptr";
    static const uint32_t types[][3] = {{11, 1, 1}, {12, 1, 2}, {13, 2, 4}, {14, 2, 8}, {15, 4, 0}, {16, 4, 4}, {17, 3, 8}};
    tdb b;
    fq_trace *t;
    qspec s;
    collect c;
    float f = 2.5f;
    double d = -0.125;
    uint32_t fbits;
    uint64_t dbits;
    (void)state;
    memcpy(&fbits, &f, 4);
    memcpy(&dbits, &d, 8);
    tdb_header(&b, names, sizeof names, types, 7);
    /* point 0: allocations at 0x100 (16 bytes) and 0x200 (8 bytes) */
    tdb_bufsize(&b, 0x100, 16);
    tdb_bufsize(&b, 0x200, 8);
    tdb_stmt(&b, 5);
    tdb_var(&b, 0, 0, 0xff, 1);          /* c = -1 */
    tdb_var(&b, 1, 1, 0x8000, 2);        /* s = -32768 */
    tdb_var(&b, 2, 2, fbits, 4);
    tdb_var(&b, 3, 3, dbits, 8);
    tdb_u8(&b, 2);                       /* blob "hi\"\n" with its length */
    tdb_le(&b, 4, 4);
    tdb_le(&b, 4, 4);
    tdb_le(&b, 4, 4);
    tdb_raw(&b, "hi\"\n", 4);
    tdb_u8(&b, 2);                       /* fixed-size blob: no length */
    tdb_le(&b, 5, 4);
    tdb_le(&b, 5, 4);
    tdb_raw(&b, "abcd", 4);
    tdb_var(&b, 6, 6, 0x100, 8);         /* start: 16 */
    tdb_var(&b, 7, 6, 0x108, 8);         /* middle: 8 */
    tdb_var(&b, 8, 6, 0x110, 8);         /* one past the end: 0 (inclusive end) */
    tdb_var(&b, 9, 6, 0x111, 8);         /* outside: no size */
    tdb_var(&b, 10, 6, 0xff, 8);         /* below every allocation: no size */
    tdb_u8(&b, 0);
    /* point 1: 0x100 shrinks to 4 bytes, 0x200 is freed; the size entry after the pointer
       does not count for it (computed at load, in order) */
    tdb_bufsize(&b, 0x100, 4);
    tdb_bufsize(&b, 0x200, 0);
    tdb_var(&b, 6, 6, 0x102, 8);         /* 2 */
    tdb_var(&b, 7, 6, 0x204, 8);         /* freed: no size */
    tdb_var(&b, 8, 6, 0x300, 8);
    tdb_bufsize(&b, 0x300, 32);
    tdb_bufsize(&b, UINT64_MAX, 5);      /* trace-db's sentinel: never stored */
    tdb_u8(&b, 0);
    /* point 2: no statement (0 unless FQ_OPEN_INHERIT_STMT), 0x300 now allocated */
    tdb_var(&b, 8, 6, 0x300, 8);         /* 32 */
    tdb_var(&b, 9, 6, UINT64_MAX, 8);    /* no size */
    tdb_u8(&b, 0);
    t = open_mem(b.p, b.n);
    memset(&s, 0, sizeof s);
    s.vars[0] = "v:*";
    memset(&c, 0, sizeof c);
    assert_int_equal(run_on(t, &s, FQ_LIST_TRACEDB, 1, 0, &c), 16);
    assert_string_equal(c.out.s,
                        "result 0: counter=0 stmt=5 c:char=-1\n"
                        "result 1: counter=0 stmt=5 s:short=-32768\n"
                        "result 2: counter=0 stmt=5 f:float=2.5\n"
                        "result 3: counter=0 stmt=5 d:double=-0.125\n"
                        "result 4: counter=0 stmt=5 blob:string=\"hi\\\"\\x0a\"\n"
                        "result 5: counter=0 stmt=5 fixed:four=\"abcd\"\n"
                        "result 6: counter=0 stmt=5 p:ptr=0x100[size 16]\n"
                        "result 7: counter=0 stmt=5 q:ptr=0x108[size 8]\n"
                        "result 8: counter=0 stmt=5 r:ptr=0x110[size 0]\n"
                        "result 9: counter=0 stmt=5 e:ptr=0x111\n"
                        "result 10: counter=0 stmt=5 g:ptr=0xff\n"
                        "result 11: counter=1 stmt=0 p:ptr=0x102[size 2]\n"
                        "result 12: counter=1 stmt=0 q:ptr=0x204\n"
                        "result 13: counter=1 stmt=0 r:ptr=0x300\n"
                        "result 14: counter=2 stmt=0 r:ptr=0x300[size 32]\n"
                        "result 15: counter=2 stmt=0 e:ptr=0xffffffffffffffff\n");
    free(c.out.s);
    /* v/value by format; blobs are invalid */
    s.where = "(= (v/value v) -1)";
    assert_int_equal(count_on(t, &s), 1);
    s.where = "(= (v/value v) 2.5)";
    assert_int_equal(count_on(t, &s), 1);
    s.where = "(= (v/value v) -0.125)";
    assert_int_equal(count_on(t, &s), 1);
    s.where = "(not (= (v/value v) (v/value v)))";   /* only the two blobs */
    assert_int_equal(count_on(t, &s), 2);
    s.where = "(= (v/bits v) 32)";                   /* float, both 4-byte blobs */
    assert_int_equal(count_on(t, &s), 3);
    s.where = "(= (v/name v) \"blob\")";
    assert_int_equal(count_on(t, &s), 1);
    s.where = "(>= (v/size v) 0)";                   /* pointers with a size */
    assert_int_equal(count_on(t, &s), 5);
    s.where = "(v/read v)";                          /* frames-only flags: false here */
    assert_int_equal(count_on(t, &s), 0);
    fq_trace_close(t);
    /* statements inherited, as trace-db does */
    {
        fq_open_options o;
        frames_error err;
        fq_open_options_default(&o);
        o.flags = FQ_OPEN_INHERIT_STMT;
        assert_int_equal(fq_trace_open_memory(&t, b.p, b.n, &o, &err), 0);
        memset(&s, 0, sizeof s);
        s.mask = UINT64_MAX;
        s.stmt = 5;
        assert_int_equal(count_on(t, &s), 3);
        fq_trace_close(t);
    }
    free(b.p);
}

/* distinct-vars compares positions; the compat flag compares the variable records. */
static void test_distinct_vars(void **state) {
    static const char names[] = "x\0int";
    static const uint32_t types[][3] = {{1, 1, 4}};
    tdb b;
    fq_trace *t;
    qspec s;
    (void)state;
    tdb_header(&b, names, sizeof names, types, 1);
    tdb_var(&b, 0, 0, 7, 4);
    tdb_var(&b, 0, 0, 7, 4);   /* same name, type and value */
    tdb_var(&b, 0, 0, 8, 4);
    tdb_u8(&b, 0);
    t = open_mem(b.p, b.n);
    memset(&s, 0, sizeof s);
    s.vars[0] = "a:int";
    s.vars[1] = "b:int";
    s.where = "(distinct-vars a b)";
    assert_int_equal(count_on(t, &s), 6);
    s.flags = FQ_COMPAT_DISTINCT_VALUE;
    assert_int_equal(count_on(t, &s), 4);
    fq_trace_close(t);
    free(b.p);
}

/* ---------------------------------------------------------------- reading trace-db files */

/* Where the points of small.trace start (and where the last one ends), from the layout:
   header, then END-terminated points; int and unsigned int are 4 bytes, the others 8.
   Returns the number of offsets (points + 1); with out NULL, the start of the last point
   plus one. */
static size_t point_offsets(const unsigned char *d, size_t len, uint64_t *out) {
    size_t off = 8 + 0x35 + 4 + 5 * 12, n = 0, last = off;
    if (out) out[n] = off;
    n++;
    while (off < len) {
        unsigned tag = d[off++];
        if (tag == 0) {
            if (off < len) last = off;
            if (out) out[n] = off;
            n++;
        } else if (tag == 1 || tag == 4) off += 8;
        else if (tag == 3) off += 16;
        else off += 8 + (d[off + 4] >= 2 ? 8 : 4);
    }
    return out ? n : last + 1;
}

static void test_truncated_and_damaged(void **state) {
    size_t len, cut;
    unsigned char *full = tu_read_file(tu_shared("vectors/tracedb/small.trace"), &len);
    uint64_t points_at[1001];
    size_t np;
    qspec s;
    (void)state;
    assert_non_null(full);
    np = point_offsets(full, len, points_at);
    assert_int_equal(np, 1001);
    memset(&s, 0, sizeof s);
    s.vars[0] = "a:int";
    /* cut anywhere: exactly the complete points remain, and the cut is reported */
    for (cut = points_at[0]; cut <= len; cut += cut < points_at[3] ? 1 : 997) {
        fq_trace *t = open_mem(full, cut);
        fq_trace_info info;
        size_t complete = 0;
        while (complete + 1 < np && points_at[complete + 1] <= cut) complete++;
        assert_int_equal(count_on(t, &s), 3 * complete);
        fq_trace_info_get(t, &info);
        assert_true(info.complete);
        assert_int_equal(info.points, complete);
        assert_int_equal(info.truncated, cut != points_at[complete]);
        assert_int_equal(info.damaged, 0);
        if (info.truncated) assert_int_equal(info.cut_offset, points_at[complete]);
        fq_trace_close(t);
    }
    /* strict mode: trace-db loses the whole trace when EOF falls inside an entry */
    {
        fq_open_options o;
        fq_trace *t;
        frames_error err;
        fq_open_options_default(&o);
        o.flags = FQ_OPEN_STRICT;
        assert_int_equal(fq_trace_open_memory(&t, full, points_at[500] + 3, &o, &err), FRAMES_E_TRUNCATED);
        assert_non_null(strstr(err.message, "point 500"));
        /* ... but drops a last point that only lacks END_ENTRY */
        assert_int_equal(fq_trace_open_memory(&t, full, points_at[500] - 1, &o, &err), 0);
        assert_int_equal(count_on(t, &s), 3 * 499);
        fq_trace_close(t);
    }
    /* a bad tag in point 700: the 700 points before it are kept */
    {
        unsigned char *bad = (unsigned char *)malloc(len);
        fq_trace *t;
        fq_trace_info info;
        memcpy(bad, full, len);
        bad[points_at[700]] = 9;
        t = open_mem(bad, len);
        assert_int_equal(count_on(t, &s), 3 * 700);
        fq_trace_info_get(t, &info);
        assert_true(info.damaged);
        assert_int_equal(info.points, 700);
        assert_non_null(strstr(info.message, "bad tag 9"));
        fq_trace_close(t);
        /* a name index out of range */
        memcpy(bad, full, len);
        bad[points_at[10] + 9 + 1] = 0x7f;   /* after STATEMENT_ID: the first variable */
        t = open_mem(bad, len);
        assert_int_equal(count_on(t, &s), 30);
        fq_trace_info_get(t, &info);
        assert_true(info.damaged);
        assert_non_null(strstr(info.message, "name index"));
        fq_trace_close(t);
        free(bad);
    }
    free(full);
}

static void test_bad_headers(void **state) {
    static const struct {
        const char *bytes;
        size_t n;
        const char *msg;
    } cases[] = {
        {"\x10\0\0\0\0\0\0\0x\0abcd", 14, "name dictionary of 16 bytes"},
        {"\x02\0\0\0\0\0\0\0xy\x01\0\0\0", 14, "does not end with a NUL"},
        {"\x02\0\0\0\0\0\0\0x\0\x01\0\0\0\0\0\0\0\x05\0\0\0\x04\0\0\0", 26, "format 5"},
        {"\x02\0\0\0\0\0\0\0x\0\x01\0\0\0\x03\0\0\0\x01\0\0\0\x04\0\0\0", 26, "names string 3"},
        {"\x02\0\0\0\0\0\0\0x\0\x01\0\0\0\0\0\0\0\x00\0\0\0\x10\0\0\0", 26, "16 bytes"},
        {"\x02\0\0\0\0\0\0\0x\0\x02\0\0\0\0\0\0\0\x00\0\0\0\x04\0\0\0", 26, "2 types"},
    };
    size_t i;
    (void)state;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        fq_open_options o;
        fq_trace *t = NULL;
        frames_error err;
        fq_open_options_default(&o);
        o.format = FQ_TRACE_TRACEDB;
        assert_true(fq_trace_open_memory(&t, cases[i].bytes, cases[i].n, &o, &err) < 0);
        assert_null(t);
        if (!strstr(err.message, cases[i].msg)) fail_msg("case %u: '%s'", (unsigned)i, err.message);
        /* detection: neither format */
        o.format = FQ_TRACE_AUTO;
        assert_int_equal(fq_trace_open_memory(&t, cases[i].bytes, cases[i].n, &o, &err), FRAMES_E_FORMAT);
        assert_non_null(strstr(err.message, "neither a frames trace"));
    }
}

/* ---------------------------------------------------------------- the parser */

static void test_parser_errors(void **state) {
    static const struct {
        const char *text;
        int code;
        size_t offset;
        const char *msg;
    } cases[] = {
        {"", FQ_E_SYNTAX, 0, "column 1: expected an expression, found end of input"},
        {"(", FQ_E_SYNTAX, 1, "column 2: expected an operator after '(', found end of input"},
        {"()", FQ_E_SYNTAX, 1, "column 2: expected an operator after '(', found ')'"},
        {"(> (v/value a) 500", FQ_E_SYNTAX, 18, "column 19: expected ')' to close the '(' at column 1, found end of input"},
        {"(> (v/value a) 500))", FQ_E_SYNTAX, 19, "column 20: unexpected ')' after the expression"},
        {"(foo 1 2)", FQ_E_SYNTAX, 1, "column 2: unknown operator 'foo'"},
        {"(> (v/value c) 1)", FQ_E_QUERY, 12, "column 13: unknown variable 'c' (declared: a, b)"},
        {"(> a 1)", FQ_E_QUERY, 3, "column 4: variable 'a' is not a value here: use (v/value a), (v/size a), ..."},
        {"(> (v/value a))", FQ_E_SYNTAX, 14, "column 15: '>' takes 2 operands, found ')' after 1"},
        {"(> 1 2 3)", FQ_E_SYNTAX, 7, "column 8: '>' takes 2 operands, found more"},
        {"(not)", FQ_E_SYNTAX, 4, "column 5: 'not' takes 1 operand, found ')' after 0"},
        {"(v/value)", FQ_E_SYNTAX, 8, "column 9: 'v/value' takes a variable name, found ')'"},
        {"(v/value (a))", FQ_E_SYNTAX, 9, "column 10: 'v/value' takes a variable name, found '('"},
        {"(and (v/value a))", FQ_E_QUERY, 0, "column 1: 'and' needs predicates, operand 1 is a number"},
        {"(+ (> 1 2) 1)", FQ_E_QUERY, 0, "column 1: '+' needs numbers, operand 1 is a predicate"},
        {"(not 5)", FQ_E_QUERY, 0, "column 1: 'not' needs a predicate, got a number"},
        {"(= (v/name a) 5)", FQ_E_QUERY, 0, "column 1: '=' compares a string with a number"},
        {"(< (v/name a) \"x\")", FQ_E_QUERY, 0, "column 1: '<' needs numbers, operand 1 is a string"},
        {"(> 99999999999999999999 1)", FQ_E_SYNTAX, 3, "column 4: integer '99999999999999999999' does not fit in 64 bits"},
        {"(> 0x1ffffffffffffffff 1)", FQ_E_SYNTAX, 3, "column 4: hex literal '0x1ffffffffffffffff' has more than 64 bits"},
        {"(> 12ab 1)", FQ_E_SYNTAX, 3, "column 4: malformed number '12ab'"},
        {"(> 1.2.3 1)", FQ_E_SYNTAX, 3, "column 4: malformed number '1.2.3'"},
        {"(= (v/name a) \"RAX)", FQ_E_SYNTAX, 14, "column 15: unterminated string"},
        {"(and\n  (> (v/value a) 1)\n  (< (v/value b))", FQ_E_SYNTAX, 41, "line 3, column 17: '<' takes 2 operands, found ')' after 1"},
        {"bare", FQ_E_SYNTAX, 0, "column 1: expected '(', a number or a string, found 'bare'"},
        {"(distinct-vars a)", FQ_E_SYNTAX, 16, "column 17: 'distinct-vars' takes a variable name, found ')'"},
    };
    size_t i;
    (void)state;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        fq_query *q;
        fq_query_open(&q, NULL, NULL);
        frames_error err;
        fq_node n;
        fq_query_var(q, "a", "int");
        fq_query_var(q, "b", "int");
        assert_int_equal(fq_parse(q, cases[i].text, &n, &err), cases[i].code);
        if (strcmp(err.message, cases[i].msg) != 0)
            fail_msg("'%s': got \"%s\", expected \"%s\"", cases[i].text, err.message, cases[i].msg);
        assert_int_equal(err.offset, cases[i].offset);
        /* a failed parse does not poison the query */
        assert_int_equal(fq_query_where_text(q, "(> (v/value a) 1)", &err), 0);
        fq_query_close(q);
    }
}

static void test_parser_accepts(void **state) {
    static const char *const ok[] = {
        "(> (v/value a) 500)", "  ( >=  (v/value a)  -5 ) ; a comment", "(equal (v/value a) 0x1F)",
        "(and (distinct-vars a b) (or (not (<= (v/size a) 2.5e1)) (= (v/name b) \"R\\\"AX\")))",
        "(v/read a)", "(and (v/written a) (= (v/post b) 1) (> (v/bits a) 8) (> (v/addr a) 0))",
        "(= (pc) (+ (index) (tid)))", "(!= (% (& (| (^ (<< (v/value a) 2) 1) 3) 7) 5) (>> -8 1))",
        "(> .5 -.5)", "(> +3 -3)",
    };
    size_t i;
    (void)state;
    for (i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        fq_query *q;
        fq_query_open(&q, NULL, NULL);
        frames_error err;
        fq_query_var(q, "a", "int");
        fq_query_var(q, "b", "int");
        if (fq_query_where_text(q, ok[i], &err) < 0) fail_msg("'%s': %s", ok[i], err.message);
        fq_query_close(q);
    }
}

/* The builder API gives the same query as the text, and checks types. */
static void test_builder_api(void **state) {
    fq_trace *t = open_trace(tu_shared("vectors/tracedb/small.trace"), 0, 0);
    fq_query *q;
    fq_query_open(&q, NULL, NULL);
    fq_plan *p;
    frames_error err;
    fq_node a, b, both[2];
    uint64_t n;
    (void)state;
    assert_int_equal(fq_query_var(q, "a", "int"), 0);
    assert_int_equal(fq_query_var(q, "b", "int"), 1);
    a = fq_access(q, FQ_OP_VALUE, 0);
    b = fq_access(q, FQ_OP_VALUE, 1);
    both[0] = fq_distinct(q, 0, 1);
    both[1] = fq_binary(q, FQ_OP_LT, a, b);
    assert_int_equal(fq_query_where(q, fq_nary(q, FQ_OP_AND, both, 2)), 0);
    assert_int_equal(fq_compile(&p, q, t, &err), 0);
    assert_int_equal(fq_run(p, NULL, NULL, NULL, &n, &err), 0);
    assert_int_equal(n, 3000);   /* q03 */
    fq_plan_close(p);
    fq_query_close(q);
    /* type errors are reported by the builder and stick to the query */
    fq_query_open(&q, NULL, NULL);
    fq_query_var(q, "a", "int");
    a = fq_binary(q, FQ_OP_ADD, fq_const_int(q, 1), fq_binary(q, FQ_OP_GT, fq_const_int(q, 1), fq_const_int(q, 2)));
    assert_int_equal(a, FQ_E_QUERY);
    assert_non_null(strstr(fq_query_error(q)->message, "'+' needs numbers"));
    assert_true(fq_query_where(q, a) < 0);
    assert_int_equal(fq_compile(&p, q, t, &err), FQ_E_QUERY);
    fq_query_close(q);
    fq_query_open(&q, NULL, NULL);
    fq_query_var(q, "a", "int");
    assert_true(fq_access(q, FQ_OP_VALUE, 3) < 0);           /* no variable 3 */
    fq_query_close(q);
    fq_query_open(&q, NULL, NULL);
    fq_query_var(q, "a", "int");
    assert_int_equal(fq_query_var(q, "a", "long"), FQ_E_QUERY);   /* declared twice */
    assert_non_null(strstr(fq_query_error(q)->message, "declared twice"));
    fq_query_close(q);
    fq_query_open(&q, NULL, NULL);
    fq_query_var(q, "a", "no such type");
    assert_int_equal(fq_compile(&p, q, t, &err), FQ_E_QUERY);
    assert_non_null(strstr(err.message, "the trace has no type 'no such type'"));
    fq_query_close(q);
    /* exact arithmetic has a bound, checked at compile time */
    fq_query_open(&q, NULL, NULL);
    fq_query_var(q, "a", "int");
    a = fq_access(q, FQ_OP_VALUE, 0);
    {
        int i;
        for (i = 0; i < 7; i++) a = fq_binary(q, FQ_OP_MUL, a, a);   /* 64 * 2^7 bits */
    }
    fq_query_where(q, fq_binary(q, FQ_OP_GT, a, fq_const_int(q, 0)));
    assert_int_equal(fq_compile(&p, q, t, &err), FQ_E_QUERY);
    assert_non_null(strstr(err.message, "exact arithmetic is limited to 4096 bits"));
    fq_query_close(q);
    fq_trace_close(t);
}

/* ---------------------------------------------------------------- frames traces */

static const char *frames_vec(const char *name) {
    static char path[256];
    snprintf(path, sizeof path, "vectors/frames/%s", name);
    return tu_shared(path);
}

/* r11 (pintraces-like): frame 0 modload; frame 1 @0x8048100 pre R_EAX=1 R_EBX=2, post
   R_EAX=3 (written) R_ZF=0 R_CF=0 (1 bit); frame 2 @0x8048102 pre R_EBX=0x08049000 and a
   32-bit memory read at 0x8049000 of 0xcafebabe, post R_EAX=0xcafebabe; frame 3 syscall. */
static void test_frames_r11(void **state) {
    const char *path = frames_vec("r11_pintraces_like_x86.frames");
    fq_trace *t = open_trace(path, 0, 0);
    qspec s;
    collect c;
    (void)state;
    memset(&s, 0, sizeof s);
    /* zero variables: one result per std_frame */
    memset(&c, 0, sizeof c);
    assert_int_equal(run_on(t, &s, FQ_LIST_TRACEDB, 1, 0, &c), 2);
    assert_string_equal(c.out.s, "result 0: counter=1 pc=0x8048100 tid=1\nresult 1: counter=2 pc=0x8048102 tid=1\n");
    free(c.out.s);
    /* a register whose value is the address of a memory operand */
    s.vars[0] = "a:reg32";
    s.vars[1] = "b:mem32";
    s.where = "(= (v/value a) (v/addr b))";
    memset(&c, 0, sizeof c);
    assert_int_equal(run_on(t, &s, FQ_LIST_TRACEDB, 1, 0, &c), 1);
    assert_string_equal(c.out.s, "result 0: counter=2 pc=0x8048102 tid=1 R_EBX:reg32=0x8049000 [0x8049000]:mem32=0xcafebabe\n");
    free(c.out.s);
    /* the loaded value lands in R_EAX after the instruction */
    s.where = "(and (v/post a) (= (v/value a) (v/value b)) (v/read b))";
    memset(&c, 0, sizeof c);
    assert_int_equal(run_on(t, &s, FQ_LIST_TRACEDB, 1, 0, &c), 1);
    assert_string_equal(c.out.s, "result 0: counter=2 pc=0x8048102 tid=1 R_EAX:reg32@post=0xcafebabe [0x8049000]:mem32=0xcafebabe\n");
    free(c.out.s);
    memset(&s, 0, sizeof s);
    s.vars[0] = "a:reg*";
    s.where = "(= (v/name a) \"R_EAX\")";
    assert_int_equal(count_on(t, &s), 3);
    s.where = "(v/written a)";
    assert_int_equal(count_on(t, &s), 4);
    s.vars[0] = "a:reg1";
    s.where = NULL;
    assert_int_equal(count_on(t, &s), 2);
    s.vars[0] = "a:mem*";
    assert_int_equal(count_on(t, &s), 1);
    s.vars[0] = "a:*";   /* 5 operands in frame 1, 3 in frame 2 */
    assert_int_equal(count_on(t, &s), 8);
    s.where = "(= (v/bits a) 32)";
    assert_int_equal(count_on(t, &s), 6);
    s.where = "(= (v/name a) \"\")";   /* memory operands have no name: invalid */
    assert_int_equal(count_on(t, &s), 0);
    /* post(R_EAX) = pre(R_EAX) + pre(R_EBX): the add of frame 1 */
    memset(&s, 0, sizeof s);
    s.vars[0] = "r:reg32";
    s.vars[1] = "x:reg32";
    s.vars[2] = "y:reg32";
    s.where = "(and (v/post r) (not (v/post x)) (not (v/post y)) (distinct-vars x y) "
              "(= (v/value r) (+ (v/value x) (v/value y))))";
    memset(&c, 0, sizeof c);
    assert_int_equal(run_on(t, &s, FQ_LIST_CAPI, 1, 0, &c), 2);
    /* y (slowest) = pre R_EAX first */
    assert_string_equal(c.out.s, "result 0: stmt=0x8048100 R_EAX=0x3 R_EBX=0x2 R_EAX=0x1\n"
                                 "result 1: stmt=0x8048100 R_EAX=0x3 R_EAX=0x1 R_EBX=0x2\n");
    free(c.out.s);
    /* point filters: address ranges, statement mask, threads */
    memset(&s, 0, sizeof s);
    s.pcs[0] = 0x8048102;
    s.pcs[1] = 0x8048102;
    s.npcs = 1;
    assert_int_equal(count_on(t, &s), 1);
    s.pcs[1] = 0x80480ff;
    s.pcs[0] = 0x8048000;
    assert_int_equal(count_on(t, &s), 0);
    s.npcs = 0;
    s.mask = 0xf;
    s.stmt = 0x2;
    assert_int_equal(count_on(t, &s), 1);
    {
        fq_query *q;
        fq_query_open(&q, NULL, NULL);
        fq_plan *p;
        frames_error err;
        uint64_t n;
        fq_query_thread(q, 1);
        assert_int_equal(fq_compile(&p, q, t, &err), 0);
        assert_int_equal(fq_run(p, NULL, NULL, NULL, &n, &err), 0);
        assert_int_equal(n, 2);
        fq_plan_close(p);
        fq_query_thread(q, 2);
        fq_query_close(q);
        fq_query_open(&q, NULL, NULL);
        fq_query_thread(q, 2);
        assert_int_equal(fq_compile(&p, q, t, &err), 0);
        assert_int_equal(fq_run(p, NULL, NULL, NULL, &n, &err), 0);
        assert_int_equal(n, 0);
        fq_plan_close(p);
        fq_query_close(q);
    }
    fq_trace_close(t);
}

/* JSON of a frames result (r11 frame 2's memory read). */
static void test_frames_json(void **state) {
    fq_trace *t = open_trace(frames_vec("r11_pintraces_like_x86.frames"), 0, 0);
    qspec s;
    collect c;
    (void)state;
    memset(&s, 0, sizeof s);
    s.vars[0] = "m:mem32";
    memset(&c, 0, sizeof c);
    assert_int_equal(run_on(t, &s, FQ_LIST_JSON, 1, 0, &c), 1);
    assert_string_equal(c.out.s,
                        "{\"result\":0,\"counter\":2,\"pc\":134512898,\"tid\":1,\"bindings\":[{\"var\":\"m\","
                        "\"type\":\"mem32\",\"post\":false,\"read\":true,\"written\":false,\"addr\":134516736,"
                        "\"bits\":32,\"value\":3405691582,\"bytes\":\"bebafeca\"}]}\n");
    free(c.out.s);
    fq_trace_close(t);
}

/* r02 frame 0 @0x400000 (tid 7): pre RSP=0x7ffe0000, a 64-bit memory read at 0x7ffe0000
   of 0x1122334455667788, RCX=3; post RAX=0x1122334455667788 (written), RFLAGS=0x246 (read
   and written). Frame 7 is a std_frame without operands. */
static void test_frames_r02(void **state) {
    fq_trace *t = open_trace(frames_vec("r02_all_frame_types_x86_64.frames"), 0, 0);
    qspec s;
    (void)state;
    memset(&s, 0, sizeof s);
    assert_int_equal(count_on(t, &s), 2);
    s.vars[0] = "a:reg64";
    s.vars[1] = "b:mem64";
    s.where = "(= (v/value a) (v/addr b))";
    assert_int_equal(count_on(t, &s), 1);
    s.where = "(and (v/post a) (= (v/value a) (v/value b)))";
    assert_int_equal(count_on(t, &s), 1);
    s.where = "(= (v/value b) 0x1122334455667788)";
    assert_int_equal(count_on(t, &s), 4);   /* every register with that memory operand */
    memset(&s, 0, sizeof s);
    s.vars[0] = "a:reg64";
    s.where = "(and (v/read a) (v/written a))";
    assert_int_equal(count_on(t, &s), 1);
    s.where = "(= (& (v/value a) 0x40) 0x40)";   /* ZF of RFLAGS 0x246 */
    assert_int_equal(count_on(t, &s), 1);
    s.where = "(= (tid) 7)";   /* the four registers of frame 0 */
    assert_int_equal(count_on(t, &s), 4);
    fq_trace_close(t);
}

/* r03 frame 0: R0 with bit_length INT32_MIN (width from the 8-byte value), R1 with an
   empty value, R2 with bit_length 0 (32 bits from 4 bytes); post: a 1-byte write at
   UINT64_MAX with bit_length INT32_MAX, a 10-byte write at 2^63 (wider than 64 bits).
   Frame 6: 1200 one-byte reads at 0x20000 + i of the value i % 256. */
static void test_frames_r03(void **state) {
    fq_trace *t = open_trace(frames_vec("r03_extremes_arm.frames"), 0, 0);
    qspec s;
    (void)state;
    memset(&s, 0, sizeof s);
    s.vars[0] = "a:reg64";
    s.where = "(= (v/value a) 18446744073709551615)";
    assert_int_equal(count_on(t, &s), 1);
    s.vars[0] = "a:reg*";
    s.where = "(not (= (v/value a) (v/value a)))";   /* the empty R1 */
    assert_int_equal(count_on(t, &s), 1);
    s.vars[0] = "a:reg32";
    s.where = NULL;
    assert_int_equal(count_on(t, &s), 1);
    s.vars[0] = "a:mem128";
    s.where = "(> (v/value a) 0)";                    /* wider than 64 bits: invalid */
    assert_int_equal(count_on(t, &s), 0);
    s.where = "(= (v/addr a) 9223372036854775808)";
    assert_int_equal(count_on(t, &s), 1);
    s.vars[0] = "a:mem2147483647";
    s.where = "(= (v/addr a) 0xffffffffffffffff)";
    assert_int_equal(count_on(t, &s), 1);
    s.vars[0] = "a:mem8";
    s.where = "(= (v/value a) 255)";                  /* i = 255, 511, 767, 1023 */
    assert_int_equal(count_on(t, &s), 4);
    s.where = "(= (v/addr a) (+ 131072 (v/value a)))";   /* i < 256 */
    assert_int_equal(count_on(t, &s), 256);
    /* 1200 x 1200 pairs, never materialised: consecutive bytes with consecutive values */
    s.vars[1] = "b:mem8";
    s.where = "(and (= (v/addr a) (+ (v/addr b) 1)) (= (v/value a) (+ (v/value b) 1)))";
    assert_int_equal(count_on(t, &s), 1195);
    fq_trace_close(t);
}

/* r04: frame 2 has a register operand with an empty name, bit_length 0 and no value. */
static void test_frames_r04(void **state) {
    fq_trace *t = open_trace(frames_vec("r04_empty_values_aarch64.frames"), 0, 0);
    qspec s;
    collect c;
    (void)state;
    memset(&s, 0, sizeof s);
    assert_int_equal(count_on(t, &s), 3);
    s.vars[0] = "a:reg*";
    memset(&c, 0, sizeof c);
    assert_int_equal(run_on(t, &s, FQ_LIST_TRACEDB, 1, 0, &c), 1);
    assert_string_equal(c.out.s, "result 0: counter=2 pc=0x4 tid=0 :reg0=(empty)\n");
    free(c.out.s);
    s.where = "(or (= (v/value a) 0) (!= (v/value a) 0))";
    assert_int_equal(count_on(t, &s), 0);
    s.where = "(and (= (v/name a) \"\") (= (v/bits a) 0))";
    assert_int_equal(count_on(t, &s), 1);
    fq_trace_close(t);
}

/* r05 (and its TCG, tracewrap and zero-padded twins): 10 frames at 0x1000 + 4i with
   EAX = i before; odd frames write EAX = i + 1. */
static void test_frames_r05_family(void **state) {
    static const char *const files[] = {"r05_toc_m4_n10_mips.frames", "tcg_r05_m4_n10.frames",
                                        "tw_r05_m4_n10.frames", "rz_r05_zero_pad.frames"};
    size_t i;
    (void)state;
    for (i = 0; i < sizeof files / sizeof files[0]; i++) {
        qspec s;
        memset(&s, 0, sizeof s);
        assert_int_equal(count_path(frames_vec(files[i]), &s), 10);
        s.vars[0] = "post:reg32";
        s.vars[1] = "pre:reg32";
        s.where = "(and (v/post post) (not (v/post pre)) (= (v/name post) (v/name pre)) "
                  "(= (v/value post) (+ (v/value pre) 1)))";
        assert_int_equal(count_path(frames_vec(files[i]), &s), 5);
        memset(&s, 0, sizeof s);
        s.vars[0] = "a:reg32";
        s.where = "(= (v/value a) (/ (- (pc) 4096) 4))";   /* pre EAX = i */
        assert_int_equal(count_path(frames_vec(files[i]), &s), 10);
        s.flags = FQ_DEDUP;   /* one witness per (address, operand, type) */
        assert_int_equal(count_path(frames_vec(files[i]), &s), 10);
        s.where = NULL;
        s.pcs[0] = 0x1008;
        s.pcs[1] = 0x100f;
        s.npcs = 1;
        assert_int_equal(count_path(frames_vec(files[i]), &s), 3);   /* frames 2, 3 (pre, post) */
    }
}

/* ---------------------------------------------------------------- threads, pick, limits */

/* r10: 10,001 std_frames at 0x1000 + i, thread 1, no operands. */
static void test_frames_threads_and_counts(void **state) {
    fq_trace *t = open_trace(frames_vec("r10_default_m_n10001.frames"), 0, 0);
    qspec s;
    collect one, many;
    unsigned th;
    (void)state;
    memset(&s, 0, sizeof s);
    s.where = "(= (% (pc) 7) 0)";   /* multiples of 7 in [4096, 14096]: 2013 - 585 */
    memset(&one, 0, sizeof one);
    assert_int_equal(run_on(t, &s, FQ_LIST_TRACEDB, 1, 0, &one), 1428);
    for (th = 2; th <= 5; th++) {
        memset(&many, 0, sizeof many);
        assert_int_equal(run_on(t, &s, FQ_LIST_TRACEDB, th, 97, &many), 1428);
        assert_string_equal(one.out.s, many.out.s);
        free(many.out.s);
    }
    free(one.out.s);
    s.where = "(= (pc) (+ (index) 4096))";
    assert_int_equal(count_on(t, &s), 10001);
    fq_trace_close(t);
}

static int stop_after_3(void *ctx, const fq_result *r) {
    (void)r;
    return ++*(int *)ctx == 3;
}

static void test_limit_and_stop(void **state) {
    fq_trace *t = open_trace(tu_shared("vectors/tracedb/small.trace"), 0, 16);
    fq_query *q;
    fq_query_open(&q, NULL, NULL);
    fq_plan *p;
    fq_run_options o;
    frames_error err;
    uint64_t n;
    int calls = 0;
    unsigned th;
    (void)state;
    fq_query_var(q, "a", "int");
    assert_int_equal(fq_compile(&p, q, t, &err), 0);
    for (th = 1; th <= 3; th++) {
        fq_run_options_default(&o);
        o.threads = th;
        o.chunk = 16;
        o.limit = 7;
        assert_int_equal(fq_run(p, &o, NULL, NULL, &n, &err), 0);
        assert_int_equal(n, 7);
        o.limit = 0;
        calls = 0;
        /* a callback that stops the run: FRAMES_E_STOPPED, as frames_pt_decode gives */
        assert_int_equal(fq_run(p, &o, stop_after_3, &calls, &n, &err), FRAMES_E_STOPPED);
        assert_int_equal(err.code, FRAMES_E_STOPPED);
        assert_non_null(strstr(err.message, "stopped"));
        assert_int_equal(calls, 3);
        assert_int_equal(n, 3);
    }
    fq_plan_close(p);
    fq_query_close(q);
    fq_trace_close(t);
}

/* The lines of a listing at one point, without their "result K: " (in place). */
static const char *strip_indexes(char *listing, const char *needle) {
    char *in = listing, *out = listing;
    if (!listing) return "";
    while (*in) {
        char *nl = strchr(in, '\n'), *colon = strchr(in, ':');
        size_t n = (size_t)(nl - in) + 1;
        if (strstr(in, needle) && strstr(in, needle) < nl) {
            memmove(out, colon + 2, (size_t)(nl + 1 - (colon + 2)));
            out += nl + 1 - (colon + 2);
        }
        in += n;
    }
    *out = 0;
    return listing;
}

/* Pick mode: deterministic per seed, uniform over the candidate points, only candidates,
   and exactly the full query's results at the picked point. */
static void test_pick(void **state) {
    fq_trace *t = open_trace(tu_shared("vectors/tracedb/small.trace"), 0, 0);
    fq_query *q;
    fq_query_open(&q, NULL, NULL);
    fq_plan *p, *p7;
    frames_error err;
    uint64_t k, k2, seed, hist[4] = {0, 0, 0, 0};
    (void)state;
    fq_query_var(q, "a", "int");
    fq_query_where_text(q, "(> (v/value a) 500)", &err);
    assert_int_equal(fq_compile(&p, q, t, &err), 0);
    fq_query_statement(q, UINT64_MAX, 7);
    assert_int_equal(fq_compile(&p7, q, t, &err), 0);
    for (seed = 0; seed < 4000; seed++) {
        assert_int_equal(fq_pick_point(p, seed, &k, &err), 0);
        assert_int_equal(fq_pick_point(p, seed, &k2, &err), 0);
        assert_int_equal(k, k2);
        assert_true(k < 1000);
        hist[k / 250]++;
        if (seed < 300) {   /* statement 7 is every 32nd point from 7 */
            assert_int_equal(fq_pick_point(p7, seed, &k, &err), 0);
            assert_int_equal(k % 32, 7);
        }
    }
    for (k = 0; k < 4; k++) assert_true(hist[k] > 850 && hist[k] < 1150);
    /* the results of a pick are those of the whole query at that point */
    for (seed = 1; seed < 40; seed++) {
        fq_run_options o;
        collect picked, all;
        char needle[64];
        uint64_t n;
        assert_int_equal(fq_pick_point(p, seed, &k, &err), 0);
        fq_run_options_default(&o);
        o.pick = 1;
        o.seed = seed;
        memset(&picked, 0, sizeof picked);
        memset(&all, 0, sizeof all);
        picked.style = all.style = FQ_LIST_TRACEDB;
        assert_int_equal(fq_run(p, &o, collect_fn, &picked, &n, &err), 0);
        assert_int_equal(fq_run(p, NULL, collect_fn, &all, &n, &err), 0);
        for (n = 0; n < picked.n; n++) assert_int_equal(picked.counters[n], k);
        /* same bindings as the full run's results at point k */
        snprintf(needle, sizeof needle, "counter=%llu ", (unsigned long long)k);
        assert_string_equal(strip_indexes(picked.out.s, needle), strip_indexes(all.out.s, needle));
        free(picked.out.s);
        free(all.out.s);
    }
    fq_plan_close(p);
    fq_plan_close(p7);
    fq_query_close(q);
    fq_trace_close(t);
}

/* Pick on frames skips the frames that are not std_frames (r11: frames 1 and 2). */
static void test_pick_frames(void **state) {
    fq_trace *t = open_trace(frames_vec("r11_pintraces_like_x86.frames"), 0, 0);
    fq_query *q;
    fq_query_open(&q, NULL, NULL);
    fq_plan *p;
    frames_error err;
    uint64_t k, seed, seen[4] = {0, 0, 0, 0};
    (void)state;
    assert_int_equal(fq_compile(&p, q, t, &err), 0);
    for (seed = 0; seed < 200; seed++) {
        assert_int_equal(fq_pick_point(p, seed, &k, &err), 0);
        assert_true(k == 1 || k == 2);
        seen[k]++;
    }
    assert_true(seen[1] > 60 && seen[2] > 60);
    fq_plan_close(p);
    /* no candidate at all */
    fq_query_pc_range(q, 0, 10);
    assert_int_equal(fq_compile(&p, q, t, &err), 0);
    assert_int_equal(fq_pick_point(p, 1, &k, &err), -1);
    fq_plan_close(p);
    fq_query_close(q);
    fq_trace_close(t);
}

/* Dedup keeps the first result per statement and bound (name, type); values ignored. */
static void test_dedup(void **state) {
    fq_trace *t = open_trace(tu_shared("vectors/tracedb/small.trace"), 0, 0);
    qspec s;
    collect c;
    (void)state;
    memset(&s, 0, sizeof s);
    s.vars[0] = "a:int";
    s.flags = FQ_DEDUP;
    assert_int_equal(count_on(t, &s), 96);   /* 32 statements x {x, y, z} */
    s.vars[1] = "b:int";
    assert_int_equal(count_on(t, &s), 32 * 9);
    s.where = "(distinct-vars a b)";
    assert_int_equal(count_on(t, &s), 32 * 6);
    memset(&c, 0, sizeof c);
    s.vars[1] = NULL;
    s.where = "(> (v/value a) 990)";
    run_on(t, &s, FQ_LIST_TRACEDB, 3, 16, &c);
    /* the first witnesses, in trace order */
    assert_true(strncmp(c.out.s, "result 0: counter=", 18) == 0);
    free(c.out.s);
    fq_trace_close(t);
}

/* ---------------------------------------------------------------- the command */

static char *frames_cmd(int *status, const char *args) {
    return tu_run(status, "'%s' query %s 2>&1", tu_frames_bin(), args);
}

/* fq_format_result never writes past cap and says how much the whole text needs, at
   the extremes of every number (20 digits) and at every cap around the text's length;
   the expected text is built here with printf. */
static void test_format_caps(void **state) {
    static const char name[] = "longer_name";
    fq_result r;
    fq_binding b[2];
    char want[256], *buf;
    size_t n, cap;
    int k;
    (void)state;
    for (k = 0; k < 3; k++) {
        memset(&r, 0, sizeof r);
        memset(b, 0, sizeof b);
        r.format = FQ_TRACE_TRACEDB;
        r.index = UINT64_MAX - (uint64_t)k;
        r.counter = UINT64_MAX / (uint64_t)(k + 1);
        r.stmt = k == 1 ? 0 : UINT64_MAX;
        r.nbind = (uint32_t)k;   /* 0, 1 and 2 variables */
        r.bind = b;
        b[0].format = FQ_TYPE_SIGNED;
        b[0].i = INT64_MIN;
        b[0].name = frames_bytes_of(name, sizeof name - 1);
        b[0].type = frames_bytes_of("long", 4);
        b[1].format = FQ_TYPE_UNSIGNED;
        b[1].u = 10000000000000000000ull;
        b[1].name = frames_bytes_of("x", 1);
        b[1].type = frames_bytes_of("ulong", 5);
        n = (size_t)snprintf(want, sizeof want, "result %llu: counter=%llu stmt=%llu",
                             (unsigned long long)r.index, (unsigned long long)r.counter,
                             (unsigned long long)r.stmt);
        if (k >= 1) n += (size_t)snprintf(want + n, sizeof want - n, " %s:long=%lld", name, (long long)INT64_MIN);
        if (k >= 2) n += (size_t)snprintf(want + n, sizeof want - n, " x:ulong=%llu", 10000000000000000000ull);
        for (cap = 1; cap <= n + 40; cap++) {
            size_t got;
            buf = (char *)malloc(cap);   /* exactly cap bytes: ASan sees any write past it */
            got = fq_format_result(&r, FQ_LIST_TRACEDB, buf, cap);
            assert_int_equal(got, n);
            assert_int_equal(strlen(buf), cap > n ? n : cap - 1);
            assert_memory_equal(buf, want, strlen(buf));
            free(buf);
        }
    }
}

static void test_cli(void **state) {
    char cmd[2048], *out;
    int st;
    size_t len;
    char *expected = (char *)tu_read_file(tu_shared("vectors/tracedb/q01_gt500.expected"), &len), *body, *end;
    const char *small = tu_shared("vectors/tracedb/small.trace");
    (void)state;
    assert_non_null(expected);
    body = strchr(expected, '\n') + 1;
    end = strstr(body, "run 1:");
    *end = 0;
    snprintf(cmd, sizeof cmd, "'%s' --var a:int --where '(> (v/value a) 500)'", small);
    out = frames_cmd(&st, cmd);
    assert_int_equal(st, 0);
    assert_string_equal(out, body);
    free(out);
    snprintf(cmd, sizeof cmd, "'%s' --var a:int --where='(> (v/value a) 500)' --threads 3 --count", small);
    out = frames_cmd(&st, cmd);
    assert_int_equal(st, 0);
    assert_string_equal(out, "994\n");
    free(out);
    /* --stmt alone means the whole statement */
    snprintf(cmd, sizeof cmd, "'%s' --var a:int --where '(> (v/value a) 500)' --stmt 7 --count", small);
    out = frames_cmd(&st, cmd);
    assert_string_equal(out, "35\n");
    free(out);
    snprintf(cmd, sizeof cmd, "'%s' --var 'a:int,unsigned int' --var l:long --where "
                              "'(> (* (v/value a) (v/value l)) 100000000)' --limit 2", small);
    out = frames_cmd(&st, cmd);
    assert_string_equal(out, "result 0: counter=1 stmt=1 y:int=969 len:long=308804\n"
                             "result 1: counter=2 stmt=2 x:int=523 len:long=749037\n");
    free(out);
    snprintf(cmd, sizeof cmd, "'%s' --var a:int --dedup --count", small);
    out = frames_cmd(&st, cmd);
    assert_string_equal(out, "96\n");
    free(out);
    /* pick: the same seed gives the same results */
    {
        char *again;
        snprintf(cmd, sizeof cmd, "'%s' --var a:int --pick 12345", small);
        out = frames_cmd(&st, cmd);
        again = frames_cmd(&st, cmd);
        assert_int_equal(st, 0);
        assert_string_equal(out, again);
        assert_non_null(strstr(out, "result 2: counter="));
        free(out);
        free(again);
    }
    snprintf(cmd, sizeof cmd, "'%s' --pc 0x8048102 --json --no-symbols", frames_vec("r11_pintraces_like_x86.frames"));
    out = frames_cmd(&st, cmd);
    assert_int_equal(st, 0);
    assert_string_equal(out, "{\"result\":0,\"counter\":2,\"pc\":134512898,\"tid\":1,\"bindings\":[]}\n");
    free(out);
    /* the pc's name from the modload frame (no file under the sysroot: module+offset) */
    out = tu_run(&st, "%s query '%s' --pc 0x8048102 --json --sysroot /nonexistent 2>/dev/null",
                 tu_frames_bin(), frames_vec("r11_pintraces_like_x86.frames"));
    assert_int_equal(st, 0);
    assert_string_equal(out, "{\"result\":0,\"counter\":2,\"pc\":134512898,\"tid\":1,\"bindings\":[],"
                             "\"module\":\"/bin/ls\",\"module_offset\":258}\n");
    free(out);
    out = tu_run(&st, "%s query '%s' --pc 0x8048102 --sysroot /nonexistent 2>/dev/null",
                 tu_frames_bin(), frames_vec("r11_pintraces_like_x86.frames"));
    assert_int_equal(st, 0);
    assert_string_equal(out, "result 0: counter=2 pc=0x8048102 tid=1 sym=ls+0x102\n");
    free(out);
    snprintf(cmd, sizeof cmd, "- --var 'r:reg32' --where '(v/written r)' < '%s'", frames_vec("r11_pintraces_like_x86.frames"));
    out = frames_cmd(&st, cmd);
    assert_int_equal(st, 0);
    assert_string_equal(out, "result 0: counter=1 pc=0x8048100 tid=1 R_EAX:reg32@post=0x3\n"
                             "result 1: counter=2 pc=0x8048102 tid=1 R_EAX:reg32@post=0xcafebabe\n");
    free(out);
    /* usage errors: exit 2 with the position */
    snprintf(cmd, sizeof cmd, "'%s' --var a:int --where '(> (v/value a) 500'", small);
    out = frames_cmd(&st, cmd);
    assert_int_equal(st, 2);
    assert_non_null(strstr(out, "column 19: expected ')'"));
    free(out);
    snprintf(cmd, sizeof cmd, "'%s' --var a:nosuchtype", small);
    out = frames_cmd(&st, cmd);
    assert_int_equal(st, 2);
    assert_non_null(strstr(out, "no type 'nosuchtype'"));
    free(out);
    out = frames_cmd(&st, "--bogus x");
    assert_int_equal(st, 2);
    free(out);
    out = frames_cmd(&st, "/nonexistent/trace");
    assert_int_equal(st, 1);
    assert_non_null(strstr(out, "cannot open"));
    free(out);
    out = frames_cmd(&st, "--help");
    assert_int_equal(st, 0);
    assert_non_null(strstr(out, "usage: frames query TRACE"));
    free(out);
    /* a truncated trace: the complete points, a warning, success */
    {
        unsigned char *full = tu_read_file(small, &len);
        const char *cut = tu_tmp_path(".trace");
        assert_int_equal(tu_write_file(cut, full, len - 100), 0);
        snprintf(cmd, sizeof cmd, "'%s' --var a:int --count", cut);
        out = frames_cmd(&st, cmd);
        assert_int_equal(st, 0);
        assert_non_null(strstr(out, "warning"));
        assert_non_null(strstr(out, "999 complete points kept"));
        assert_non_null(strstr(out, "2997\n"));
        free(out);
        full[point_offsets(full, len, NULL) - 1] = 17;   /* the last point starts with a bad tag */
        assert_int_equal(tu_write_file(cut, full, len), 0);
        out = frames_cmd(&st, cmd);
        assert_int_equal(st, 1);
        free(out);
        remove(cut);
        free(full);
    }
    free(expected);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tracedb_listings),
        cmocka_unit_test(test_tracedb_listings_threads),
        cmocka_unit_test(test_tracedb_q12_double),
        cmocka_unit_test(test_spec_example),
        cmocka_unit_test(test_unit_point),
        cmocka_unit_test(test_arithmetic),
        cmocka_unit_test(test_values_and_memory_map),
        cmocka_unit_test(test_distinct_vars),
        cmocka_unit_test(test_truncated_and_damaged),
        cmocka_unit_test(test_bad_headers),
        cmocka_unit_test(test_parser_errors),
        cmocka_unit_test(test_parser_accepts),
        cmocka_unit_test(test_builder_api),
        cmocka_unit_test(test_frames_r11),
        cmocka_unit_test(test_frames_json),
        cmocka_unit_test(test_frames_r02),
        cmocka_unit_test(test_frames_r03),
        cmocka_unit_test(test_frames_r04),
        cmocka_unit_test(test_frames_r05_family),
        cmocka_unit_test(test_frames_threads_and_counts),
        cmocka_unit_test(test_limit_and_stop),
        cmocka_unit_test(test_pick),
        cmocka_unit_test(test_pick_frames),
        cmocka_unit_test(test_dedup),
        cmocka_unit_test(test_format_caps),
        cmocka_unit_test(test_cli),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
