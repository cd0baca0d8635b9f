// fuzz-flags: -max_len=2048 -dict=tests/fuzz/query.dict

/* fuzz_query - frames_query.h's query language on arbitrary text: the parser, the type
   checks of the builders, the compiler and the evaluator over two small fixed traces
   (fuzz_qutil.h). Seeds: tests/fuzz/seeds/fuzz_query/ (the queries of
   ../shared/vectors/tracedb/ and docs/query.md).

   Invariants:
   - a failed parse returns FQ_E_SYNTAX, FQ_E_QUERY or FRAMES_E_LIMIT with an offset inside
     the text and a non-empty message that starts with that offset's line and column;
     it does not poison the query, and parsing again gives the same error;
   - a parsed expression printed back (fz_print below: canonical s-expressions from the
     parsed nodes) parses again to the same expression (printing that gives the same text);
   - the expression, as the hard predicate (a value X as (= X X)) and as a soft predicate,
     compiles against both traces or fails with a message; a compiled query gives the same
     result sequence with one and with several threads and small work items, counting
     gives the number of streamed results, a limit or a callback that stops gives the
     first results, pick mode is deterministic (fz_check_plan);
   - the printed expression gives exactly the same results as the text it came from. */
#include <ctype.h>

#include "fuzz_util.h"
#define FRAMES_QUERY_IMPLEMENTATION
#include "frames_query.h"
#include "fuzz_qutil.h"

/* free variables: name, trace-db types, frames types (few candidates per point, so that
   every tuple of a point can be evaluated quickly) */
static const char *const fz_vars[][3] = {
    {"a", "int", "reg64"},
    {"b", "int,unsigned int", "reg128,mem32"},
    {"d", "double,float", "mem*"},
    {"q", "char*", "reg32,reg64"},
    {"s", "string,blob16", "mem8,reg8"},
};
#define FZ_NVARS (sizeof fz_vars / sizeof fz_vars[0])

static fz_mem tdb_bytes, frames_bytes_;
static fq_trace *tdb_trace, *frames_trace;

static void fz_init(void) {
    frames_error err;
    if (tdb_trace) return;
    tdb_bytes = fz_tdb_build();
    frames_bytes_ = fz_frames_build();
    FZ_CHECK(fq_trace_open_memory(&tdb_trace, tdb_bytes.p, tdb_bytes.len, NULL, &err) == FRAMES_OK);
    FZ_CHECK(fq_trace_load(tdb_trace, &err) == FRAMES_OK);
    FZ_CHECK(fq_trace_open_memory(&frames_trace, frames_bytes_.p, frames_bytes_.len, NULL, &err) == FRAMES_OK);
}

/* Does the text name the variable (as a whole word; inside a string also counts)? */
static int fz_mentions(const char *text, const char *name) {
    size_t n = strlen(name);
    const char *p;
    for (p = strstr(text, name); p; p = strstr(p + 1, name)) {
        int before = p > text && (isalnum((unsigned char)p[-1]) || p[-1] == '_');
        int after = isalnum((unsigned char)p[n]) || p[n] == '_';
        if (!before && !after) return 1;
    }
    return 0;
}

/* A query with the free variables, all of them (text NULL) or those the text names: a
   result binds every free variable, so each one the predicate leaves free multiplies
   the results by its candidates (with all five, hundreds per point: evaluating and
   formatting them took most of an execution, 86-190 per second). */
static fq_query *fz_new_query(int frames, const char *text) {
    fq_query *q;
    fq_query_open(&q, NULL, NULL);
    size_t i;
    int k = 0;
    FZ_CHECK(q);
    for (i = 0; i < FZ_NVARS; i++)
        if (!text || fz_mentions(text, fz_vars[i][0]))
            FZ_CHECK(fq_query_var(q, fz_vars[i][0], fz_vars[i][frames ? 2 : 1]) == k++);
    return q;
}

/* ---------------------------------------------------------------- printing */

static void fz_print_num(fz_mem *m, const fq__num *k, int op) {
    char buf[64];
    if (op == FQ_OP_FLOAT) {
        double f = k->f;
        if (f != f) FZ_CHECK(!"the parser made a NaN");
        if (f - f != f - f) snprintf(buf, sizeof buf, "%s1e999", f < 0 ? "-" : "");
        else {
            snprintf(buf, sizeof buf, "%.17g", f);
            if (!strpbrk(buf, ".e")) strcat(buf, ".0");
        }
    } else {
        FZ_CHECK(k->kind == FQ__INT && k->n <= 1);
        snprintf(buf, sizeof buf, "%s%llu", k->neg ? "-" : "", (unsigned long long)k->small);
    }
    fz_mem_put(m, buf, strlen(buf));
}

static void fz_print(fz_mem *m, const fq_query *q, fq_node h) {
    const fq__node *n = &q->nodes[h];
    uint32_t i;
    const char *name = fq__op_name(n->op);
    switch (n->op) {
    case FQ_OP_INT: case FQ_OP_UINT: case FQ_OP_FLOAT:
        fz_print_num(m, &n->k, n->op);
        return;
    case FQ_OP_STR: {
        const char *s = q->strs + n->stroff;
        fz_mem_put(m, "\"", 1);
        for (i = 0; i < n->k.len; i++) {
            if (s[i] == '"' || s[i] == '\\') fz_mem_put(m, "\\", 1);
            fz_mem_put(m, s + i, 1);
        }
        fz_mem_put(m, "\"", 1);
        return;
    }
    default:
        break;
    }
    fz_mem_put(m, "(", 1);
    fz_mem_put(m, name, strlen(name));
    if (n->var >= 0) {
        fz_mem_put(m, " ", 1);
        fz_mem_put(m, q->vars[n->var].name, strlen(q->vars[n->var].name));
    }
    if (n->var2 >= 0) {
        fz_mem_put(m, " ", 1);
        fz_mem_put(m, q->vars[n->var2].name, strlen(q->vars[n->var2].name));
    }
    for (i = 0; i < n->nkids; i++) {
        fz_mem_put(m, " ", 1);
        fz_print(m, q, (fq_node)q->kids[n->kid0 + i]);
    }
    fz_mem_put(m, ")", 1);
}

static char *fz_print_text(const fq_query *q, fq_node h) {
    fz_mem m;
    memset(&m, 0, sizeof m);
    fz_print(&m, q, h);
    fz_mem_put(&m, "", 1);
    return (char *)m.p;
}

/* ---------------------------------------------------------------- checks */

/* "line L, column C: " or "column C: " for byte offset off of text, as the message must
   start. */
static void fz_expect_where(const char *text, uint64_t off, char *out, size_t cap) {
    unsigned line = 1, col = 1;
    uint64_t i;
    for (i = 0; i < off; i++) {
        if (text[i] == '\n') line++, col = 1;
        else col++;
    }
    if (line > 1 || strchr(text, '\n')) snprintf(out, cap, "line %u, column %u: ", line, col);
    else snprintf(out, cap, "column %u: ", col);
}

static void fz_check_error(const char *text, int rc, const frames_error *err) {
    char where[64];
    FZ_CHECK(rc == FQ_E_SYNTAX || rc == FQ_E_QUERY || rc == FRAMES_E_LIMIT);
    FZ_CHECK(err->code == rc);
    FZ_CHECK(err->offset <= strlen(text));
    FZ_CHECK(strlen(err->message) < sizeof err->message);
    fz_expect_where(text, err->offset, where, sizeof where);
    FZ_CHECK(strncmp(err->message, where, strlen(where)) == 0);
    FZ_CHECK(err->message[strlen(where)] != 0);
}

/* Compile the query (predicate set) against t; run the plan checks; results in *out when
   it compiles. Returns the compile status. */
static int fz_compile_run(fq_query *q, fq_trace *t, uint64_t salt, int full, fz_results *out) {
    fq_plan *p = NULL;
    frames_error err;
    int rc = fq_compile(&p, q, t, &err);
    memset(out, 0, sizeof *out);
    if (rc < 0) {
        FZ_CHECK(p == NULL && err.code == rc && err.message[0]);
        return rc;
    }
    if (full) fz_check_plan(p, salt);
    FZ_CHECK(fz_run(p, 1, 0, 0, out, &err) == FRAMES_OK);
    fq_plan_close(p);
    return rc;
}

/* The expression h of q as a predicate: itself, or (= h h) for a value. */
static fq_node fz_as_predicate(fq_query *q, fq_node h) {
    if (q->nodes[h].type & FQ__T_BOOL) return h;
    return fq_binary(q, FQ_OP_EQ, h, h);
}

/* Parse text into a fresh query for one trace kind (with the free variables `vars`
   names), set it as the hard (soft) predicate, compile and run; the results in *out.
   Returns the status of the first failing step. */
static int fz_eval_text(const char *text, const char *vars, int frames, int soft, uint64_t salt,
                        int full, fz_results *out) {
    fq_query *q = fz_new_query(frames, vars);
    frames_error err;
    fq_node h;
    int rc = fq_parse(q, text, &h, &err);
    if (rc < 0) {   /* a variable named in a way fz_mentions missed: all of them */
        fq_query_close(q);
        q = fz_new_query(frames, NULL);
        rc = fq_parse(q, text, &h, &err);
    }
    memset(out, 0, sizeof *out);
    if (rc == FRAMES_OK) {
        fq_node pred = fz_as_predicate(q, h);
        FZ_CHECK(pred >= 0);
        rc = soft ? fq_query_soft(q, pred) : fq_query_where(q, pred);
        FZ_CHECK(rc == FRAMES_OK);
        rc = fz_compile_run(q, frames ? frames_trace : tdb_trace, salt, full, out);
    }
    fq_query_close(q);
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *text = (char *)malloc(size + 1);
    fq_query *q;
    frames_error err, err2;
    fq_node h, h2;
    int rc, rc2, frames;
    uint64_t salt = size;
    size_t i;
    FZ_CHECK(text);
    memcpy(text, data, size);
    text[size] = 0;
    for (i = 0; i < size; i++) salt = salt * 31 + data[i];
    fz_init();

    q = fz_new_query(0, NULL);
    rc = fq_parse(q, text, &h, &err);
    if (rc < 0) {
        fz_check_error(text, rc, &err);
        FZ_CHECK(fq_query_error(q)->code == 0);   /* not poisoned */
        rc2 = fq_parse(q, text, &h2, &err2);
        FZ_CHECK(rc2 == rc && err2.offset == err.offset && !strcmp(err.message, err2.message));
        fq_query_close(q);
        free(text);
        return 0;
    }
    FZ_CHECK(err.code == 0 && h >= 0 && (size_t)h < q->nnodes);
    {   /* printed back, it parses to the same expression */
        char *printed = fz_print_text(q, h), *again;
        fq_query *q2 = fz_new_query(0, NULL);
        FZ_CHECK(fq_parse(q2, printed, &h2, &err2) == FRAMES_OK);
        again = fz_print_text(q2, h2);
        FZ_CHECK(!strcmp(printed, again));
        FZ_CHECK(q2->nodes[h2].type == q->nodes[h].type);
        fq_query_close(q2);
        free(again);

        /* evaluation, over both traces, as hard and as soft predicate; the printed text
           gives the same results */
        for (frames = 0; frames < 2; frames++) {
            fz_results a, b;
            int soft = (int)((salt >> frames) & 1);
            rc = fz_eval_text(text, text, frames, soft, salt, 1, &a);
            rc2 = fz_eval_text(printed, text, frames, soft, salt, 0, &b);
            FZ_CHECK(rc == rc2);
            FZ_CHECK(fz_results_equal(&a, &b));
            fz_results_free(&a);
            fz_results_free(&b);
        }
        free(printed);
    }
    fq_query_close(q);
    free(text);
    return 0;
}
