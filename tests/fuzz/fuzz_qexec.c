// fuzz-seeds: tracedb vectors/tracedb/*.trace
// fuzz-seeds: files vectors/frames/r0*.frames vectors/frames/r11*.frames
// fuzz-flags: -max_len=16384

/* fuzz_qexec - query execution on arbitrary traces (trace-db or frames, detected as
   `frames query` does) with a fixed set of queries: those of
   ../shared/vectors/tracedb/q*.expected (filters, soft predicates, dedup, trace-db's
   float32 reading) and frames queries over operand types.

   Invariants, for every query that compiles on the input:
   - one thread and several threads with small work items deliver the same result
     sequence (listing text), in trace order;
   - counting without a callback (one or several threads) gives the number of streamed
     results; a limit or a callback that stops gives the first results of the sequence;
   - pick mode chooses the same point for the same seed and delivers only its results;
   - a run fails only with a code and a message (frames traces: frames that do not decode);
   - opening fails only with a code and a message; memory held stays within the bound. */
#include "fuzz_util.h"
#define FRAMES_QUERY_IMPLEMENTATION
#include "frames_query.h"
#include "fuzz_qutil.h"

typedef struct fz_qspec {
    const char *vars[3];   /* NAME:TYPES */
    const char *where;
    const char *soft[2];
    uint64_t mask, stmt;
    uint32_t flags;
    int pc;                /* add the address range [0x401000, 0x401010] */
} fz_qspec;

static const fz_qspec fz_queries[] = {
    /* trace-db (the reference listings' queries) */
    {{"a:int"}, "(> (v/value a) 500)", {0}, 0, 0, 0, 0},
    {{"a:int", "b:int"}, "(and (distinct-vars a b) (< (v/value a) (v/value b)))", {0}, 0, 0, 0, 0},
    {{"a:int"}, "(> (v/value a) 500)", {0}, ~0ull, 7, 0, 0},
    {{"q:char*"}, "(> (v/size q) 40)", {0}, 0, 0, 0, 0},
    {{"a:int", "b:int"}, NULL, {"(> (v/value a) 500)", "(< (v/value b) 100)"}, 0, 0, 0, 0},
    {{"a:int,unsigned int", "l:long"}, "(> (* (v/value a) (v/value l)) 100000000)", {0}, 0, 0, 0, 0},
    {{"a:int"}, "(> (v/value a) 500)", {0}, 0, 0, FQ_DEDUP, 0},
    {{"a:int", "b:int"}, "(> (/ (v/value a) (v/value b)) 2.5)", {0}, 0, 0, 0, 0},
    {{"d:double"}, "(> (v/value d) 50.0)", {0}, 0, 0, FQ_COMPAT_FLOAT32, 0},
    {{"a:unsigned int"}, "(>= (v/value a) 50)", {0}, 1, 1, 0, 0},
    {{"x:*"}, "(or (= (index) 3) (!= (% (v/value x) 3) 0))", {0}, 0, 0, FQ_COMPAT_DISTINCT_VALUE, 0},
    {{0}, "(> (pc) 2)", {0}, 0, 0, 0, 0},
    /* frames */
    {{"a:reg*", "m:mem*"}, "(= (v/value a) (v/addr m))", {0}, 0, 0, 0, 0},
    {{"r:reg64"}, "(and (v/post r) (< (v/value r) 0x10000))", {0}, 0, 0, FQ_DEDUP, 0},
    {{"x:*"}, "(or (v/written x) (= (v/name x) \"RAX\"))", {"(> (v/bits x) 16)"}, 0, 0, 0, 1},
    {{"m:mem8,mem16,mem32,mem64", "r:reg32,reg64"}, "(distinct-vars m r)", {0}, 0xfff, 0, 0, 0},
    {{0}, "(> (tid) 0)", {0}, 0, 0, 0, 0},
};
#define FZ_NQUERIES (sizeof fz_queries / sizeof fz_queries[0])

/* The query of spec s, or NULL when a type does not exist in t (compile error checked). */
static fq_plan *fz_compile_spec(const fz_qspec *s, fq_trace *t) {
    fq_query *q;
    fq_query_open(&q, NULL, NULL);
    fq_plan *p = NULL;
    frames_error err;
    int i, rc;
    FZ_CHECK(q);
    for (i = 0; i < 3 && s->vars[i]; i++) {
        char name[8];
        const char *colon = strchr(s->vars[i], ':');
        memcpy(name, s->vars[i], (size_t)(colon - s->vars[i]));
        name[colon - s->vars[i]] = 0;
        FZ_CHECK(fq_query_var(q, name, colon + 1) == i);
    }
    if (s->where) FZ_CHECK(fq_query_where_text(q, s->where, &err) == FRAMES_OK);
    for (i = 0; i < 2 && s->soft[i]; i++) FZ_CHECK(fq_query_soft_text(q, s->soft[i], &err) == FRAMES_OK);
    fq_query_statement(q, s->mask, s->stmt);
    fq_query_flags(q, s->flags);
    if (s->pc) FZ_CHECK(fq_query_pc_range(q, 0x401000, 0x401010) == FRAMES_OK);
    rc = fq_compile(&p, q, t, &err);
    if (rc < 0) FZ_CHECK(p == NULL && err.code == rc && err.message[0]);
    else FZ_CHECK(p != NULL);
    fq_query_close(q);
    return p;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    size_t base = hc_state.live, i;
    uint8_t *copy = (uint8_t *)malloc(size ? size : 1);   /* exactly the input: ASan sees overreads */
    fq_trace *t;
    fq_trace_info in;
    frames_error err;
    uint64_t salt = size;
    int rc;
    FZ_CHECK(copy);
    memcpy(copy, data, size);
    for (i = 0; i < size && i < 64; i++) salt = salt * 131 + data[size - 1 - i];
    hc_mark();
    rc = fq_trace_open_memory(&t, copy, size, NULL, &err);
    if (rc < 0) {
        FZ_CHECK(t == NULL && err.code == rc && err.message[0]);
        free(copy);
        FZ_CHECK(hc_state.live == base);
        return 0;
    }
    for (i = 0; i < FZ_NQUERIES; i++) {
        fq_plan *p = fz_compile_spec(&fz_queries[i], t);
        if (!p) continue;
        fz_check_plan(p, salt + i);
        fq_plan_close(p);
    }
    fq_trace_info_get(t, &in);
    FZ_CHECK(in.format == FQ_TRACE_TRACEDB || in.format == FQ_TRACE_FRAMES);
    FZ_CHECK(in.file_size == size && strlen(in.message) < sizeof in.message);
    if (in.format == FQ_TRACE_TRACEDB) FZ_CHECK(in.complete || fq_trace_load(t, &err) == FRAMES_OK);
    fq_trace_close(t);
    FZ_CHECK_MEMORY_BOUND(base, size, fz_memory_bound(size) + (8u << 20));
    free(copy);
    FZ_CHECK(hc_state.live == base);
    return 0;
}
