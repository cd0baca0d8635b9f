/* fuzz_qutil.h - helpers of the query-engine fuzz targets (include after fuzz_util.h and
   frames_query.h's implementation): two small fixed traces built in memory, queries over
   them, a run that records the whole result sequence, and a printer of parsed queries.

   The fixed traces:
   - fz_tdb: a trace-db trace of 12 points, statements k % 4, with every type format:
     x, y : int; n : unsigned int; len : long; c : char; p : char* (into live buffers,
     some freed again); d : double; f : float; s : string (BLOB, length-prefixed);
     h : blob16 (fixed 16-byte BLOB); AUXILIARY values and BUFFER_SIZE records;
   - fz_frames: a frames trace of 10 frames (std frames with register and memory operands
     in the pre and post lists, two threads, 8- to 128-bit values, and a syscall and a
     modload frame that are not points). */
#ifndef FRAMES_FUZZ_QUTIL_H
#define FRAMES_FUZZ_QUTIL_H

static void fz_mem_u8(fz_mem *m, unsigned v) {
    uint8_t b = (uint8_t)v;
    fz_mem_put(m, &b, 1);
}

/* ---------------------------------------------------------------- trace-db */

static const char *const fz_tdb_names[] = {
    "x", "y", "n", "len", "c", "p", "d", "f", "s", "h",
    "int", "unsigned int", "long", "char", "char*", "double", "float", "string", "blob16"};
/* name, format, size */
static const uint32_t fz_tdb_types[][3] = {
    {10, FQ_TYPE_SIGNED, 4}, {11, FQ_TYPE_UNSIGNED, 4}, {12, FQ_TYPE_SIGNED, 8},
    {13, FQ_TYPE_SIGNED, 1}, {14, FQ_TYPE_POINTER, 8}, {15, FQ_TYPE_FLOAT, 8},
    {16, FQ_TYPE_FLOAT, 4}, {17, FQ_TYPE_BLOB, 0}, {18, FQ_TYPE_BLOB, 16}};

static void fz_tdb_var(fz_mem *m, uint32_t name, uint32_t type) {
    fz_mem_u8(m, 2);
    fz_mem_le(m, name, 4);
    fz_mem_le(m, type, 4);
}

static fz_mem fz_tdb_build(void) {
    fz_mem m;
    size_t i, nchars = 0;
    uint32_t k;
    memset(&m, 0, sizeof m);
    for (i = 0; i < sizeof fz_tdb_names / sizeof fz_tdb_names[0]; i++) nchars += strlen(fz_tdb_names[i]) + 1;
    fz_mem_le(&m, nchars, 8);
    for (i = 0; i < sizeof fz_tdb_names / sizeof fz_tdb_names[0]; i++)
        fz_mem_put(&m, fz_tdb_names[i], strlen(fz_tdb_names[i]) + 1);
    fz_mem_le(&m, sizeof fz_tdb_types / sizeof fz_tdb_types[0], 4);
    for (i = 0; i < sizeof fz_tdb_types / sizeof fz_tdb_types[0]; i++) {
        fz_mem_le(&m, fz_tdb_types[i][0], 4);
        fz_mem_le(&m, fz_tdb_types[i][1], 4);
        fz_mem_le(&m, fz_tdb_types[i][2], 4);
    }
    for (k = 0; k < 12; k++) {
        double d = k * 12.5 - 40;
        float f = (float)(k * 0.75);
        uint64_t bits;
        if (k != 5) {   /* point 5 has no statement */
            fz_mem_u8(&m, 1);
            fz_mem_le(&m, k % 4, 8);
        }
        if (k % 3 == 0) {   /* an allocation at 0x1000 + 0x100 k, 0x40 bytes */
            fz_mem_u8(&m, 3);
            fz_mem_le(&m, 0x1000 + 0x100 * k, 8);
            fz_mem_le(&m, 0x40, 8);
        }
        if (k == 7) {   /* free the first one */
            fz_mem_u8(&m, 3);
            fz_mem_le(&m, 0x1000, 8);
            fz_mem_le(&m, 0, 8);
        }
        fz_tdb_var(&m, 0, 0), fz_mem_le(&m, (uint64_t)(int64_t)(k * 97 % 1000) - 300, 4);
        fz_tdb_var(&m, 1, 0), fz_mem_le(&m, k * 211 % 1000, 4);
        fz_tdb_var(&m, 2, 1), fz_mem_le(&m, 0xfffffff0u + k, 4);
        if (k % 2) fz_tdb_var(&m, 3, 2), fz_mem_le(&m, 0 - ((uint64_t)k << 40), 8);
        fz_tdb_var(&m, 4, 3), fz_mem_le(&m, (uint64_t)(int64_t)(k * 20 - 120), 1);
        fz_tdb_var(&m, 5, 4), fz_mem_le(&m, 0x1000 + 0x100 * (k / 3 * 3) + 8 * k, 8);
        memcpy(&bits, &d, 8);
        fz_tdb_var(&m, 6, 5), fz_mem_le(&m, bits, 8);
        memcpy(&bits, &f, 4);
        fz_tdb_var(&m, 7, 6), fz_mem_le(&m, bits, 4);
        fz_tdb_var(&m, 8, 7), fz_mem_le(&m, k % 5, 4), fz_mem_put(&m, "RAXRBX\"\\", k % 5);
        if (k % 4 == 1) fz_tdb_var(&m, 9, 8), fz_mem_put(&m, "0123456789abcdef", 16);
        fz_mem_u8(&m, 4);
        fz_mem_le(&m, k * 1000, 8);
        fz_mem_u8(&m, 0);
    }
    return m;
}

/* ---------------------------------------------------------------- frames */

static frames_operand fz_reg(const char *name, int bits, uint64_t v, int r, int w) {
    static uint8_t vals[64][16];
    static unsigned nv;
    frames_operand o;
    uint8_t *b = vals[nv++ % 64];
    int i;
    memset(&o, 0, sizeof o);
    o.spec = FRAMES_REG;
    o.name = frames_bytes_of(name, strlen(name));
    o.bit_length = bits;
    o.read = (uint8_t)r;
    o.written = (uint8_t)w;
    for (i = 0; i < 16; i++) b[i] = (uint8_t)(i < 8 ? v >> (8 * i) : v >> (8 * (i - 8)) ^ 0x5a);
    o.value = frames_bytes_of(b, (size_t)(bits + 7) / 8);
    return o;
}

static frames_operand fz_memop(uint64_t addr, int bits, uint64_t v, int r, int w) {
    frames_operand o = fz_reg("", bits, v, r, w);
    o.spec = FRAMES_MEM;
    o.name = frames_bytes_of(NULL, 0);
    o.address = addr;
    return o;
}

static fz_mem fz_frames_build(void) {
    fz_mem m;
    frames_sink s;
    frames_writer *w;
    frames_error err;
    frames_frame f;
    frames_operand pre[4], post[3];
    static const uint8_t code[4] = {0x48, 0x89, 0x07, 0x90};
    unsigned k;
    memset(&m, 0, sizeof m);
    memset(&s, 0, sizeof s);
    s.ctx = &m;
    s.write = fz_mem_write;
    s.patch = fz_mem_patch;
    FZ_CHECK(frames_writer_open(&w, &s, NULL, NULL, &err) == FRAMES_OK);
    for (k = 0; k < 10; k++) {
        memset(&f, 0, sizeof f);
        if (k == 4) {
            f.kind = FRAMES_KIND_SYSCALL;
            f.syscall.address = 0x401000;
            f.syscall.number = 60;
        } else if (k == 7) {
            f.kind = FRAMES_KIND_MODLOAD;
            f.modload.module_name = frames_str("libc.so");
            f.modload.low_address = 0x7f0000;
            f.modload.high_address = 0x7fffff;
        } else {
            f.kind = FRAMES_KIND_STD;
            f.std.address = 0x401000 + 4 * k;
            f.std.thread_id = 1 + k % 2;
            f.std.rawbytes = frames_bytes_of(code, 3);
            pre[0] = fz_reg("RAX", 64, 0x1000 + k * 0x10, 1, 0);
            pre[1] = fz_reg(k % 2 ? "EBX" : "RBX", k % 2 ? 32 : 64, 500 + 37 * k, 1, k == 3);
            pre[2] = fz_memop(0x1000 + k * 0x10, 8 << (k % 4), 0xff - k, k % 3 == 0, k % 3 != 0);
            pre[3] = fz_reg("XMM0", 128, k * 0x0101010101ull, 1, 0);
            post[0] = fz_reg("RAX", 64, 0x1008 + k * 0x10, 0, 1);
            post[1] = fz_memop(0x2000 + k, 32, 42 * k, 0, 1);
            post[2] = fz_reg("AL", 8, k, 0, 1);
            f.std.pre = pre;
            f.std.npre = k == 8 ? 0 : 4;
            f.std.post = post;
            f.std.npost = k % 3 == 2 ? 0 : 3;
            f.std.has_post = k % 3 != 2;
        }
        FZ_CHECK(frames_writer_add(w, &f) == FRAMES_OK);
    }
    FZ_CHECK(frames_writer_close(w) == FRAMES_OK);
    return m;
}

/* ---------------------------------------------------------------- runs */

/* The whole result sequence of a run, formatted. */
typedef struct fz_results {
    fz_mem text;        /* trace-db listing lines, '\n' after each */
    uint64_t n;
    uint64_t last_counter;
    int stop_after;     /* nonzero: return 1 from the callback after that many */
    int one_point;      /* every result must come from point `point` */
    uint64_t point;
} fz_results;

static int fz_collect(void *ctx, const fq_result *r) {
    fz_results *c = (fz_results *)ctx;
    char line[2048];
    size_t need;
    FZ_CHECK(r->index == c->n);
    if (c->n) FZ_CHECK(r->counter >= c->last_counter);   /* trace order */
    if (c->one_point) FZ_CHECK(r->counter == c->point);
    c->last_counter = r->counter;
    need = fq_format_result(r, FQ_LIST_TRACEDB, line, sizeof line);
    fz_mem_put(&c->text, line, need < sizeof line ? need : sizeof line - 1);
    fz_mem_put(&c->text, "\n", 1);
    if (c->n < 8) {   /* (checking every line would dominate the run time) */
        need = fq_format_result(r, FQ_LIST_JSON, line, sizeof line);
        if (need < sizeof line) FZ_CHECK(fz_json_valid(line, need));
    }
    c->n++;
    return c->stop_after && c->n >= (uint64_t)c->stop_after;
}

static void fz_results_free(fz_results *c) {
    free(c->text.p);
    memset(c, 0, sizeof *c);
}

static int fz_results_equal(const fz_results *a, const fz_results *b) {
    return a->n == b->n && a->text.len == b->text.len &&
           (a->text.len == 0 || !memcmp(a->text.p, b->text.p, a->text.len));
}

/* Run p with the given threads / chunk / limit; rc of fq_run. */
static int fz_run(const fq_plan *p, unsigned threads, uint64_t chunk, uint64_t limit, fz_results *out,
                  frames_error *err) {
    fq_run_options o;
    uint64_t n = 0;
    int rc;
    memset(out, 0, sizeof *out);
    fq_run_options_default(&o);
    o.threads = threads;
    o.chunk = chunk;
    o.limit = limit;
    rc = fq_run(p, &o, fz_collect, out, &n, err);
    FZ_CHECK(n == out->n);
    if (rc < 0) FZ_CHECK(err->code == rc && err->message[0]);
    return rc;
}

/* The invariants of running one compiled plan: one thread, several threads with small
   work items, counting without a callback, a limit, a callback that stops, pick mode. */
static void fz_check_plan(const fq_plan *p, uint64_t salt) {
    fz_results one, many, part;
    frames_error err;
    fq_run_options o;
    uint64_t counted = 0, k, lim;
    int rc1, rc2;
    /* threads for the count, limit and stop runs of one input in four: each threaded run
       starts its threads and allocates two 512 KiB result slots per thread, half of an
       execution's time when every run did (the one- vs several-thread comparison above
       them runs always) */
    unsigned mt = salt % 4 == 0 ? 2 : 1;
    rc1 = fz_run(p, 1, 0, 0, &one, &err);
    rc2 = fz_run(p, 2 + salt % 2, 1 + salt % 5, 0, &many, &err);
    FZ_CHECK(rc1 == rc2);
    FZ_CHECK(fz_results_equal(&one, &many));
    fz_results_free(&many);
    /* counting: the number of streamed results */
    fq_run_options_default(&o);
    FZ_CHECK(fq_run(p, &o, NULL, NULL, &counted, &err) == rc1);
    if (rc1 == FRAMES_OK) FZ_CHECK(counted == one.n);
    o.threads = mt;
    o.chunk = 1 + salt % 3;
    FZ_CHECK(fq_run(p, &o, NULL, NULL, &counted, &err) == rc1);
    if (rc1 == FRAMES_OK) FZ_CHECK(counted == one.n);
    /* a limit, and a callback that stops: the first results */
    lim = one.n ? 1 + salt % one.n : 1;
    FZ_CHECK(fz_run(p, mt == 1 ? 1 : 1 + salt % 3, 1 + salt % 4, lim, &part, &err) == FRAMES_OK || rc1 < 0);
    FZ_CHECK(part.n == (lim < one.n ? lim : one.n) || rc1 < 0);
    FZ_CHECK(part.text.len <= one.text.len && (part.text.len == 0 || !memcmp(part.text.p, one.text.p, part.text.len)));
    fz_results_free(&part);
    memset(&part, 0, sizeof part);
    part.stop_after = (int)lim;
    fq_run_options_default(&o);
    o.threads = mt;
    o.chunk = 2;
    rc2 = fq_run(p, &o, fz_collect, &part, &counted, &err);
    /* a callback that asks to stop ends the run with FRAMES_E_STOPPED, one that never does with OK */
    FZ_CHECK(rc1 < 0 || rc2 == (part.n >= lim ? FRAMES_E_STOPPED : FRAMES_OK));
    FZ_CHECK(part.n == counted && part.n <= lim);
    FZ_CHECK(part.text.len == 0 || (part.text.len <= one.text.len && !memcmp(part.text.p, one.text.p, part.text.len)));
    fz_results_free(&part);
    /* pick: deterministic, and the results are those of the picked point */
    if (fq_pick_point(p, salt | 1, &k, &err) == FRAMES_OK) {
        uint64_t k2;
        FZ_CHECK(fq_pick_point(p, salt | 1, &k2, &err) == FRAMES_OK && k2 == k);
        memset(&part, 0, sizeof part);
        part.one_point = 1;
        part.point = k;
        fq_run_options_default(&o);
        o.pick = 1;
        o.seed = salt | 1;
        FZ_CHECK(fq_run(p, &o, fz_collect, &part, &counted, &err) == FRAMES_OK);
        FZ_CHECK(part.n == counted);
        fz_results_free(&part);
    }
    fz_results_free(&one);
}

#endif
