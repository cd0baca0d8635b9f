// fuzz-flags: -max_len=65536

/* fuzz_qindex - frames_query.h's persistent index as untrusted input.

   Two fixed traces are built at start-up (a trace-db trace with pointers, allocations, a
   blob type and a point without STATEMENT_ID, and a frames trace with operands) together
   with their valid indexes. An input is a mode byte, then either a whole index (mode bit
   1) or an edit script applied to the valid index: 4 bytes per edit (24-bit offset, modulo
   the index size, and the byte to store there), and a final short group whose first byte
   cuts the index to that fraction of its size.

   Invariants:
   - attaching never crashes; it fails with FRAMES_E_FORMAT, FQ_E_STALE or FRAMES_E_STATE,
     and the trace stays usable without the index (same results as a fresh trace);
   - with an index attached, every query and pick returns FRAMES_OK or FQ_E_STALE (the
     damage is noticed where it is used), and messages are NUL-terminated;
   - an unedited index gives exactly the results of the trace without an index;
   - a listing that succeeds and a count-only run (the value columns read in statement
     order, or the column kernel) give the same number of results, damaged index or not;
   - memory held stays within fz_memory_bound of the trace and input sizes. */
#include "fuzz_util.h"

#define FRAMES_QUERY_IMPLEMENTATION
#define FRAMES_QUERY_NO_THREADS
#include "frames_query.h"

/* trace-db: types int, char*, blob (size 0), unsigned char (size 1). */
static void fz_tdb_trace(fz_mem *m) {
    static const char names[] = "int\0char*\0str\0uchar\0x\0p\0s\0c\0";
    uint64_t k;
    fz_mem_le(m, sizeof names - 1, 8);
    fz_mem_write(m, names, sizeof names - 1);
    fz_mem_le(m, 4, 4);
    fz_mem_le(m, 0, 4), fz_mem_le(m, 1, 4), fz_mem_le(m, 4, 4);
    fz_mem_le(m, 1, 4), fz_mem_le(m, 3, 4), fz_mem_le(m, 8, 4);
    fz_mem_le(m, 2, 4), fz_mem_le(m, 4, 4), fz_mem_le(m, 0, 4);
    fz_mem_le(m, 3, 4), fz_mem_le(m, 0, 4), fz_mem_le(m, 1, 4);
    for (k = 0; k < 130; k++) {
        if (k != 5) fz_mem_le(m, 1, 1), fz_mem_le(m, k % 7 == 3 ? 1000 + k % 3 : k % 7, 8);
        if (k % 50 == 0) fz_mem_le(m, 3, 1), fz_mem_le(m, 0x5000 + k, 8), fz_mem_le(m, 40 + k % 9, 8);
        if (k % 11 == 0) fz_mem_le(m, 4, 1), fz_mem_le(m, k, 8);
        fz_mem_le(m, 2, 1), fz_mem_le(m, 4, 4), fz_mem_le(m, 0, 4), fz_mem_le(m, (k * 37) % 100, 4);
        fz_mem_le(m, 2, 1), fz_mem_le(m, 5, 4), fz_mem_le(m, 1, 4), fz_mem_le(m, 0x5000 + k / 50 * 50 + k % 45, 8);
        if (k % 3 == 0) fz_mem_le(m, 2, 1), fz_mem_le(m, 6, 4), fz_mem_le(m, 2, 4), fz_mem_le(m, k % 5, 4),
                        fz_mem_write(m, "hello", k % 5);
        fz_mem_le(m, 2, 1), fz_mem_le(m, 7, 4), fz_mem_le(m, 3, 4), fz_mem_le(m, k & 0xff, 1);
        fz_mem_le(m, 0, 1);
    }
}

/* frames: std_frames at a few addresses with register and memory operands, a syscall
   frame now and then, TOC every 16 frames. */
static int fz_frames_trace(fz_mem *m) {
    frames_sink sink;
    frames_writer_options o;
    frames_writer *w;
    frames_error err;
    uint64_t k;
    memset(&sink, 0, sizeof sink);
    sink.ctx = m;
    sink.write = fz_mem_write;
    sink.patch = fz_mem_patch;
    frames_writer_options_default(&o);
    o.frames_per_toc = 16;
    if (frames_writer_open(&w, &sink, &o, NULL, &err) < 0) return -1;
    for (k = 0; k < 90; k++) {
        frames_frame f;
        frames_operand ops[2];
        uint32_t v = (uint32_t)(k * 2654435761u), a = 0x8000 + (uint32_t)k;
        memset(&f, 0, sizeof f);
        memset(ops, 0, sizeof ops);
        if (k % 17 == 5) {
            f.kind = FRAMES_KIND_SYSCALL;
            f.syscall.address = 0x400000;
            f.syscall.number = k;
        } else {
            f.kind = FRAMES_KIND_STD;
            f.std.address = 0x400000 + (k % 9) * 4;
            f.std.thread_id = 1 + k % 2;
            f.std.rawbytes = frames_bytes_of("\x90\x90\x90\x90", 4);
            ops[0].spec = FRAMES_REG;
            ops[0].name = frames_str("EAX");
            ops[0].bit_length = 32;
            ops[0].read = 1;
            ops[0].value = frames_bytes_of(&v, 4);
            ops[1].spec = FRAMES_MEM;
            ops[1].address = a;
            ops[1].bit_length = 32;
            ops[1].written = 1;
            ops[1].value = frames_bytes_of(&v, 4);
            f.std.pre = ops;
            f.std.npre = 2;
        }
        if (frames_writer_add(w, &f) < 0) return -1;
    }
    return frames_writer_close(w);
}

typedef struct fz_fixture {
    fz_mem trace, index;
    int ok;
} fz_fixture;

static fz_fixture fz_fix[2];

static void fz_setup(void) {
    static int done;
    int i;
    if (done) return;
    done = 1;
    fz_tdb_trace(&fz_fix[0].trace);
    fz_fix[1].ok = fz_frames_trace(&fz_fix[1].trace) == 0;
    fz_fix[0].ok = 1;
    for (i = 0; i < 2; i++) {
        fq_trace *t;
        frames_sink sink;
        frames_error err;
        if (!fz_fix[i].ok) continue;
        memset(&sink, 0, sizeof sink);
        sink.ctx = &fz_fix[i].index;
        sink.write = fz_mem_write;
        FZ_CHECK(fq_trace_open_memory(&t, fz_fix[i].trace.p, fz_fix[i].trace.len, NULL, &err) == 0);
        FZ_CHECK(fq_index_build(t, &sink, NULL, &err) == 0);
        fq_trace_close(t);
    }
}

typedef struct fz_q {
    const char *var, *where;
    uint64_t mask, stmt, lo, hi;
    int pick;
} fz_q;

static const fz_q fz_tdb_q[] = {
    {"a:int", "(> (v/value a) 50)", UINT64_MAX, 3, 0, 0, 0},
    {"a:int,uchar", "(and (> (v/value a) 5) (<= (v/value a) 90))", 0, 0, 0, 0, 0},
    {"s:str", "(= (v/name s) \"s\")", 0, 0, 0, 0, 0},
    {"q:*", "(!= (v/value q) 3)", 0x1, 1, 0, 0, 0},
    {"a:*", NULL, 0x3, 1, 0, 0, 0},
    {"q:char*", "(> (v/size q) 10)", 0, 0, 1000, 1002, 0},
    {"s:str", NULL, UINT64_MAX, 0, 0, 0, 0},
    {"a:int", NULL, 0, 0, 0, 0, 0},
    {"q:char*", "(> (v/size q) 10)", 0, 0, 0, 0, 0},
    {"a:*", NULL, UINT64_MAX, 1001, 0, 0, 1},
    {"a:int", NULL, 0x7, 2, 0, 0, 1},
    {"a:int", NULL, 0, 0, 0, 0, 1},
};

static const fz_q fz_frames_q[] = {
    {"r:reg32", "(> (v/value r) 100)", UINT64_MAX, 0x400004, 0, 0, 0},
    {"m:mem*", NULL, 0, 0, 0x400008, 0x400010, 0},
    {"r:*", NULL, 0, 0, 0, 0, 0},
    {"r:*", NULL, 0xc, 0x4, 0, 0, 0},
    {"r:reg*", NULL, UINT64_MAX, 0x400020, 0, 0, 1},
    {"r:reg*", NULL, 0, 0, 0x400000, 0x400004, 1},
};

static uint64_t fz_hash_of(uint64_t h, const char *s, size_t n) {
    while (n--) h = (h ^ (uint8_t)*s++) * 1099511628211ull;
    return h;
}

static int fz_result(void *ctx, const fq_result *r) {
    char line[2048];
    size_t n = fq_format_result(r, FQ_LIST_JSON, line, sizeof line);
    uint64_t *h = (uint64_t *)ctx;
    *h = fz_hash_of(*h, line, n < sizeof line ? n : sizeof line - 1);
    return 0;
}

static int fz_result_text(void *ctx, const fq_result *r) {
    char line[2048];
    size_t n = fq_format_result(r, FQ_LIST_TRACEDB, line, sizeof line);
    uint64_t *h = (uint64_t *)ctx;
    *h = fz_hash_of(*h, line, n < sizeof line ? n : sizeof line - 1);
    return 0;
}

/* Run every query of the fixture on t: a hash of all results and codes. */
static uint64_t fz_battery(fq_trace *t, int frames) {
    const fz_q *qs = frames ? fz_frames_q : fz_tdb_q;
    size_t nq = frames ? sizeof fz_frames_q / sizeof fz_frames_q[0] : sizeof fz_tdb_q / sizeof fz_tdb_q[0], i;
    uint64_t h = 1469598103934665603ull;
    for (i = 0; i < nq; i++) {
        fq_query *q;
        fq_query_open(&q, NULL, NULL);
        fq_plan *p;
        fq_run_options o;
        frames_error err;
        uint64_t n = 0, k = 0;
        const char *colon = strchr(qs[i].var, ':');
        char name[8];
        int rc;
        FZ_CHECK(q != NULL);
        memcpy(name, qs[i].var, (size_t)(colon - qs[i].var));
        name[colon - qs[i].var] = 0;
        FZ_CHECK(fq_query_var(q, name, colon + 1) == 0);
        if (qs[i].where) FZ_CHECK(fq_query_where_text(q, qs[i].where, &err) == 0);
        fq_query_statement(q, qs[i].mask, qs[i].stmt);
        if (qs[i].hi) fq_query_pc_range(q, qs[i].lo, qs[i].hi);
        FZ_CHECK(fq_compile(&p, q, t, &err) == 0);
        fq_run_options_default(&o);
        o.pick = qs[i].pick;
        o.seed = i * 7919;
        rc = fq_run(p, &o, fz_result, &h, &n, &err);
        FZ_CHECK(rc == 0 || rc == FQ_E_STALE);
        if (rc < 0) FZ_CHECK(memchr(err.message, 0, sizeof err.message) != NULL);
        h = fz_hash_of(h, (const char *)&rc, sizeof rc);
        h = fz_hash_of(h, (const char *)&n, sizeof n);
        if (!o.pick) {   /* counting only: the columns in statement order, the kernel */
            uint64_t m = 0;
            int rc2 = fq_run(p, &o, NULL, NULL, &m, &err);
            FZ_CHECK(rc2 == 0 || rc2 == FQ_E_STALE);
            if (rc2 < 0) FZ_CHECK(memchr(err.message, 0, sizeof err.message) != NULL);
            if (rc == 0) FZ_CHECK(rc2 == 0 && m == n);   /* a listing that works counts the same */
            h = fz_hash_of(h, (const char *)&m, sizeof m);
            /* bindings only: trace-db results straight from the columns' records */
            o.bindings_only = 1;
            rc2 = fq_run(p, &o, fz_result_text, &h, &m, &err);
            FZ_CHECK(rc2 == 0 || rc2 == FQ_E_STALE);
            if (rc2 < 0) FZ_CHECK(memchr(err.message, 0, sizeof err.message) != NULL);
            if (rc == 0 && rc2 == 0) FZ_CHECK(m == n);
            h = fz_hash_of(h, (const char *)&m, sizeof m);
        }
        rc = fq_pick_point(p, i, &k, &err);
        FZ_CHECK(rc == 0 || rc == -1 || rc == FQ_E_STALE);
        h = fz_hash_of(h, (const char *)&rc, sizeof rc);
        if (rc == 0) h = fz_hash_of(h, (const char *)&k, sizeof k);
        fq_plan_close(p);
        fq_query_close(q);
    }
    return h;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fz_fixture *fx;
    uint8_t *ix;
    size_t n, i;
    fq_trace *t;
    frames_error err;
    int frames, rc, edited = 0;
    size_t base;
    fz_setup();
    if (size < 1) return 0;
    frames = data[0] & 1;
    fx = &fz_fix[frames];
    if (!fx->ok) return 0;
    if (data[0] & 2) {   /* a whole index */
        n = size - 1;
        ix = (uint8_t *)malloc(n ? n : 1);
        if (!ix) return 0;
        memcpy(ix, data + 1, n);
        edited = 1;
    } else {             /* edits of the valid index */
        n = fx->index.len;
        ix = (uint8_t *)malloc(n);
        if (!ix) return 0;
        memcpy(ix, fx->index.p, n);
        for (i = 1; i + 4 <= size; i += 4) {
            size_t at = ((size_t)data[i] | (size_t)data[i + 1] << 8 | (size_t)data[i + 2] << 16) % n;
            edited |= ix[at] != data[i + 3];
            ix[at] = data[i + 3];
        }
        if (i < size && data[i] != 255) {
            n = n * data[i] / 255;
            edited = 1;
        }
    }
    base = hc_state.live;
    hc_mark();
    FZ_CHECK(fq_trace_open_memory(&t, fx->trace.p, fx->trace.len, NULL, &err) == 0);
    rc = fq_index_attach(t, ix, n, &err);
    FZ_CHECK(rc == 0 || rc == FRAMES_E_FORMAT || rc == FQ_E_STALE);
    FZ_CHECK(memchr(err.message, 0, sizeof err.message) != NULL);
    if (rc == 0) {
        uint64_t with = fz_battery(t, frames);
        if (!edited) {   /* the valid index changes nothing */
            fq_trace *plain;
            FZ_CHECK(fq_trace_open_memory(&plain, fx->trace.p, fx->trace.len, NULL, &err) == 0);
            FZ_CHECK(fz_battery(plain, frames) == with);
            fq_trace_close(plain);
        }
    } else {
        (void)fz_battery(t, frames);   /* still usable without the index */
    }
    fq_trace_close(t);
    FZ_CHECK_MEMORY(base, fx->trace.len + n);
    free(ix);
    return 0;
}
