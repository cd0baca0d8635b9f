/* test_fuzz_regress - regression tests for defects that the fuzz targets of the optional
   headers found (frames_query.h; frames_pt.h where libipt is installed). Each test names
   the target and invariant that caught it; the input is also kept as a seed in
   tests/fuzz/seeds/TARGET/. */
#include "frames.h"
#include "frames_query.h"

#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef FRAMES_HAVE_IPT
#include "frames_pt.h"
#endif
#pragma GCC diagnostic ignored "-Wunused-function" /* testutil.h helpers this suite skips */
#include "testutil.h"
#ifdef FRAMES_HAVE_IPT
#include "ptpackets.h"
#endif

static int format_result(void *ctx, const fq_result *r) {
    char line[256];
    (void)ctx;
    fq_format_result(r, FQ_LIST_JSON, line, sizeof line);
    return 0;
}

/* Run `a : *` (and nothing else) over t, with `threads` threads, counting and with a
   callback that formats every result; returns the number of results. */
static uint64_t count_all_vars(fq_trace *t, unsigned threads) {
    fq_query *q;
    fq_query_open(&q, NULL, NULL);
    fq_plan *p;
    fq_run_options o;
    frames_error err;
    uint64_t n = 0, m = 0;
    assert_non_null(q);
    assert_int_equal(fq_query_var(q, "a", "*"), 0);
    assert_int_equal(fq_compile(&p, q, t, &err), FRAMES_OK);
    fq_run_options_default(&o);
    o.threads = threads;
    assert_int_equal(fq_run(p, &o, NULL, NULL, &n, &err), FRAMES_OK);
    assert_int_equal(fq_run(p, &o, format_result, NULL, &m, &err), FRAMES_OK);
    assert_int_equal(n, m);
    fq_plan_close(p);
    fq_query_close(q);
    return n;
}

/* fuzz_tracedb (index = model): a fixed-size BLOB type of 0xfffffff8 bytes made the
   index's entry length (9 + size, 32 bits) wrap to 1, so the index accepted a 2-byte
   point that the query walker then skipped 4 GiB into: a read far past the file (SEGV
   with two threads). The entry needs 4 GiB of value bytes, so the file ends inside it:
   no complete point. */
static void test_tracedb_blob_size_wraps(void **state) {
    /* names "x", "blob"; one type: "blob", BLOB, 0xfffffff8 bytes; VARIABLE x, END */
    uint8_t d[8 + 7 + 4 + 12 + 10];
    fq_trace *t;
    fq_trace_info in;
    frames_error err;
    (void)state;
    tu_put_le(d, 7, 8);
    memcpy(d + 8, "x\0blob\0", 7);
    tu_put_le(d + 15, 1, 4);
    tu_put_le(d + 19, 1, 4);
    tu_put_le(d + 23, FQ_TYPE_BLOB, 4);
    tu_put_le(d + 27, 0xfffffff8u, 4);
    d[31] = 2;
    tu_put_le(d + 32, 0, 4);
    tu_put_le(d + 36, 0, 4);
    d[40] = 0;
    assert_int_equal(fq_trace_open_memory(&t, d, sizeof d, NULL, &err), FRAMES_OK);
    assert_int_equal(fq_trace_load(t, &err), FRAMES_OK);
    fq_trace_info_get(t, &in);
    assert_int_equal(in.format, FQ_TRACE_TRACEDB);
    assert_int_equal(in.points, 0);
    assert_true(in.truncated);
    assert_int_equal(in.cut_offset, 31);
    assert_int_equal(count_all_vars(t, 1), 0);
    fq_trace_close(t);
    assert_int_equal(fq_trace_open_memory(&t, d, sizeof d, NULL, &err), FRAMES_OK);
    assert_int_equal(count_all_vars(t, 2), 0);   /* workers walk the points themselves */
    fq_trace_close(t);
}

typedef struct seq {
    uint64_t n, hash;
} seq;

static int hash_result(void *ctx, const fq_result *r) {
    seq *q = (seq *)ctx;
    q->hash = (q->hash ^ (r->counter * 1000003 + r->bind[0].slot * 1009 + r->bind[1].slot)) * 0x100000001b3ull;
    q->n++;
    return 0;
}

/* (memory per point; found checking the bound fuzz_qexec's memory check implies, on a
   crafted trace) with one thread, trace-db points are evaluated inside the index pass,
   where results cannot be delivered yet, so the result buffer grew to hold every result
   of a point: a point of 1,000 int variables and the query `a, b : int` held 10^6
   results (16 MB for a 13 KB file; 10^9 with three variables). A point whose results do
   not fit is now left to the normal path, which delivers as it goes. Here the wide point
   lies between two small ones: the results must still come in trace order, the same as
   with several threads. */
static void test_tracedb_wide_point_streams(void **state) {
    uint8_t *d = (uint8_t *)malloc(64 + 3 * 13 * 1000);
    size_t n = 0, i;
    int p, threads;
    fq_trace *t;
    frames_error err;
    seq got[3];
    struct rusage ru;
    long rss0;
    (void)state;
    assert_non_null(d);
    getrusage(RUSAGE_SELF, &ru);
    rss0 = ru.ru_maxrss;
    tu_put_le(d, 6, 8);
    memcpy(d + 8, "v\0int\0", 6);
    tu_put_le(d + 14, 1, 4);
    tu_put_le(d + 18, 1, 4);   /* type 0: "int", SIGNED, 4 bytes */
    tu_put_le(d + 22, FQ_TYPE_SIGNED, 4);
    tu_put_le(d + 26, 4, 4);
    n = 30;
    for (p = 0; p < 3; p++) {
        size_t vars = p == 1 ? 1000 : 2;
        for (i = 0; i < vars; i++) {
            d[n] = 2;
            tu_put_le(d + n + 1, 0, 4);
            tu_put_le(d + n + 5, 0, 4);
            tu_put_le(d + n + 9, i, 4);
            n += 13;
        }
        d[n++] = 0;
    }
    for (threads = 1; threads <= 3; threads++) {
        fq_query *q;
        fq_query_open(&q, NULL, NULL);
        fq_plan *pl;
        fq_run_options o;
        uint64_t count = 0;
        assert_int_equal(fq_trace_open_memory(&t, d, n, NULL, &err), FRAMES_OK);
        assert_int_equal(fq_query_var(q, "a", "int"), 0);
        assert_int_equal(fq_query_var(q, "b", "int"), 1);
        assert_int_equal(fq_compile(&pl, q, t, &err), FRAMES_OK);
        fq_run_options_default(&o);
        o.threads = threads == 3 ? 2 : 1;
        o.chunk = threads == 2 ? 1 : 0;
        memset(&got[threads - 1], 0, sizeof got[0]);
        assert_int_equal(fq_run(pl, &o, hash_result, &got[threads - 1], &count, &err), FRAMES_OK);
        assert_int_equal(count, 4 + 1000000 + 4);
        assert_int_equal(got[threads - 1].n, count);
        if (threads > 1) assert_true(got[threads - 1].hash == got[0].hash);
        fq_plan_close(pl);
        fq_query_close(q);
        fq_trace_close(t);
    }
    /* peak (KiB): 16 MB of results would show (not under valgrind: its own memory counts;
       build.sh valgrind sets FRAMES_VALGRIND) */
    getrusage(RUSAGE_SELF, &ru);
    if (!getenv("FRAMES_VALGRIND") && ru.ru_maxrss - rss0 > 8 * 1024)
        fail_msg("peak memory grew by %ld KiB", ru.ru_maxrss - rss0);
    free(d);
}

/* fuzz_qexec (a failed open leaves no trace): fq_trace_open_memory did not write *t when
   it failed (fq_trace_open_path sets it to NULL, as frames.h's readers do), so a caller
   that closes whatever it got closed an uninitialised pointer. */
static void test_tracedb_failed_open_sets_null(void **state) {
    fq_trace *t = (fq_trace *)&t;   /* anything but NULL */
    frames_error err;
    (void)state;
    assert_int_equal(fq_trace_open_memory(&t, "", 0, NULL, &err), FRAMES_E_FORMAT);
    assert_null(t);
    t = (fq_trace *)&t;
    assert_true(fq_trace_open_memory(&t, "\x01\0\0\0\0\0\0\0x", 9, NULL, &err) < 0);
    assert_null(t);
}

/* fuzz_qexec (one thread = several threads with small work items): a frames trace whose
   TOC promises 10 frames, but whose frame 5 has a size word running past the end. The
   trace was counted from the TOC before frames_reader_info_get found it wrong, so work items
   of one frame asked cursors for frames 5-9: FRAMES_E_RANGE, or records the TOC points at
   behind the cut; one work item read 5 frames and succeeded. */
static void test_frames_count_after_toc_check(void **state) {
    size_t len = 0, i;
    unsigned char *d = tu_read_file(tu_shared("vectors/frames/r05_toc_m4_n10_mips.frames"), &len);
    fq_trace *t;
    fq_trace_info in;
    frames_error err;
    uint64_t n[4];
    (void)state;
    assert_non_null(d);
    assert_int_equal(len, 1014);
    d[605] = 6;   /* the size word of frame 5 (offset 0x259) */
    assert_int_equal(fq_trace_open_memory(&t, d, len, NULL, &err), FRAMES_OK);
    fq_trace_info_get(t, &in);
    assert_int_equal(in.format, FQ_TRACE_FRAMES);
    assert_int_equal(in.points, 5);
    assert_true(in.truncated);
    for (i = 0; i < 4; i++) {
        fq_query *q;
        fq_query_open(&q, NULL, NULL);
        fq_plan *p;
        fq_run_options o;
        assert_int_equal(fq_query_var(q, "x", "*"), 0);
        assert_int_equal(fq_compile(&p, q, t, &err), FRAMES_OK);
        fq_run_options_default(&o);
        o.threads = i < 2 ? 1 : 2;
        o.chunk = i % 2;   /* 0: automatic (one item), 1: one frame per item */
        assert_int_equal(fq_run(p, &o, format_result, NULL, &n[i], &err), FRAMES_OK);
        assert_int_equal(n[i], n[0]);
        fq_plan_close(p);
        fq_query_close(q);
    }
    fq_trace_close(t);
    free(d);
}

#ifdef FRAMES_HAVE_IPT
/* PSB+ that starts decoding at ip in 64-bit mode, then a TNT packet that the code never
   asks for. Returns the length. */
static size_t pt_enter_at(uint8_t *buf, size_t cap, uint64_t ip) {
    struct pt_config cfg;
    struct pt_encoder *e;
    struct pt_packet p;
    uint64_t off = 0;
    pt_config_init(&cfg);
    cfg.begin = buf;
    cfg.end = buf + cap;
    e = pt_alloc_encoder(&cfg);
    assert_non_null(e);
    ptp_psb_plus(e, ip);
    memset(&p, 0, sizeof p);
    p.type = ppt_tnt_8;
    p.payload.tnt.bit_size = 1;
    p.payload.tnt.payload = 1;
    ptp_put(e, &p);
    pt_enc_get_offset(e, &off);
    pt_free_encoder(e);
    return (size_t)off;
}

/* fuzz_ptdecode (decoding terminates; out of memory writing frames of a cycle): code that
   loops through direct jumps or calls needs no trace, so libipt follows it for ever:
   frames_pt_decode wrote frames until memory ran out, and the block decoder (libipt 2.0
   recursing along the cycle to fill its block cache) overflowed the stack at once. Now
   the cycle is a gap (-pte_bad_query) found after a few instructions, with either decoder.
   Also with an address filter on a cpu with erratum SKL014, where libipt's block decoder
   gets the erratum right only if its blocks go on over direct branches, and then overflows
   the stack on these cycles (the block path uses the instruction-flow decoder there). */
static void test_pt_cycle_without_trace(void **state) {
    static const struct {
        const char *code;
        size_t len;
    } cycles[] = {
        {"\xeb\xfe", 2},                                   /* jmp . */
        {"\xe8\xfb\xff\xff\xff", 5},                   /* call . */
        {"\x90\x90\xe8\x02\x00\x00\x00\xeb\xf7\x90\xeb\xf4", 12},   /* nops, call, jmps */
        {"\xf3\x0f\xae\xe0\xeb\xfa", 6},                /* ptwrite eax (no packet), jmp */
    };
    const char *image = tu_tmp_path(".bin");
    uint8_t trace[64];
    size_t tlen = pt_enter_at(trace, sizeof trace, 0x1000), i;
    int decoder, skl014;
    (void)state;
    for (i = 0; i < sizeof cycles / sizeof cycles[0]; i++) {
        assert_int_equal(tu_write_file(image, cycles[i].code, cycles[i].len), 0);
        for (decoder = 0; decoder < 2; decoder++) {
          for (skl014 = 0; skl014 < 2; skl014++) {
            frames_pt_options o;
            frames_pt *pt;
            frames_pt_stats st;
            frames_error err;
            frames_pt_options_default(&o);
            o.decoder = decoder ? FRAMES_PT_DECODER_INSN : FRAMES_PT_DECODER_BLOCK;
            o.end_on_call = o.end_on_jump = 0;   /* ignored */
            if (skl014) {
                assert_int_equal(frames_pt_parse_cpu("6/78", &o.cpu), 0);
                o.addr_filter.config.ctl.addr0_cfg = 1;
                o.addr_filter.addr0_a = 0x1000;
                o.addr_filter.addr0_b = 0x1fff;
            }
            assert_int_equal(frames_pt_open(&pt, &o, &err), FRAMES_OK);
            assert_int_equal(frames_pt_set_trace(pt, trace, tlen, &err), FRAMES_OK);
            assert_int_equal(frames_pt_add_raw(pt, image, 0, 0, 0x1000, &err), FRAMES_OK);
            assert_int_equal(frames_pt_decode(pt, NULL, &st, &err), FRAMES_OK);
            assert_int_equal(st.gaps, 1);
            assert_int_equal(st.gap[0].code, -pte_bad_query);
            assert_true(st.insns >= 1 && st.insns < 64);
            frames_pt_close(pt);
          }
        }
    }
    remove(image);
}

/* Decode pt's session into frames in m (frames_membuf_free it), written as to a pipe: a
   memory sink that cannot seek, so the trace stays unfinished; then close pt. st: the
   statistics (or NULL). */
static void pt_decode_unfinished(frames_pt *pt, frames_membuf *m, frames_pt_stats *st) {
    frames_sink sink;
    frames_writer *w;
    frames_error err;
    frames_membuf_init(m, NULL);
    sink = frames_sink_memory(m);
    sink.patch = NULL;
    assert_int_equal(frames_writer_open(&w, &sink, NULL, NULL, &err), FRAMES_OK);
    assert_int_equal(frames_pt_decode(pt, w, st, &err), FRAMES_OK);
    frames_pt_close(pt);
    assert_true(frames_writer_close(w) >= 0);   /* FRAMES_UNFINISHED: the sink cannot seek */
}

static int insn_seen(void *ctx, const frames_pt_insn *in) {
    (void)ctx;
    (void)in;
    return 0;
}

/* A frame written by frames_pt_decode: a std_frame's address, an exception frame's
   from_addr. */
typedef struct pt_frame_at {
    frames_kind kind;
    uint64_t addr;
} pt_frame_at;

/* Decode pt's session (closing pt; with an instruction callback when insn_callback, so
   that the block path writes frames one by one instead of its cached runs); the frames
   written, at most cap of them into out; st: the statistics (or NULL). */
static size_t pt_frames_written(frames_pt *pt, int insn_callback, frames_pt_stats *st,
                                pt_frame_at *out, size_t cap) {
    frames_pt_callbacks cb;
    frames_reader *r;
    frames_error err;
    frames_frame f;
    frames_membuf m;
    size_t n = 0;
    memset(&cb, 0, sizeof cb);
    if (insn_callback) cb.insn = insn_seen;
    frames_pt_set_callbacks(pt, &cb);
    pt_decode_unfinished(pt, &m, st);
    assert_int_equal(frames_reader_open_memory(&r, m.data, m.size, NULL, &err), FRAMES_OK);
    while (frames_reader_next(r, &f) > 0 && n < cap) {
        if (f.kind != FRAMES_KIND_STD && f.kind != FRAMES_KIND_EXCEPTION) continue;
        out[n].kind = f.kind;
        out[n++].addr = f.kind == FRAMES_KIND_STD ? f.std.address : f.exception.from_addr;
    }
    frames_reader_close(r);
    frames_membuf_free(&m);
    return n;
}

/* Decode trace over image at base; the from_addr of every exception frame written. */
static size_t gap_sources(const char *image, uint64_t base, const uint8_t *trace, size_t tlen,
                          int insn_callback, uint64_t *from, size_t cap) {
    frames_pt *pt;
    frames_error err;
    pt_frame_at fr[64];
    size_t n = 0, i, nf;
    assert_int_equal(frames_pt_open(&pt, NULL, &err), FRAMES_OK);
    assert_int_equal(frames_pt_set_trace(pt, trace, tlen, &err), FRAMES_OK);
    assert_int_equal(frames_pt_add_raw(pt, image, 0, 0, base, &err), FRAMES_OK);
    nf = pt_frames_written(pt, insn_callback, NULL, fr, 64);
    for (i = 0; i < nf; i++)
        if (fr[i].kind == FRAMES_KIND_EXCEPTION && n < cap) from[n++] = fr[i].addr;
    return n;
}

/* fuzz_ptdecode (a second session, with an instruction callback, writes the same frames):
   a block that used the first instructions of a longer cached run took the run's last
   instruction as the last one decoded, so the gap frame after it named the wrong
   instruction (0x100002 instead of 0x100000). Image nop nop hlt at 0x100000; the trace
   enables twice at 0x100000, the second time disabled after one instruction. */
static void test_pt_gap_after_cached_run_prefix(void **state) {
    static const uint8_t trace[] = {
        0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
        0x02, 0x82, 0x99, 0x01, 0x02, 0x23, 0x02, 0x43, 0xa0, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x71, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x90, 0x90, 0xf4, 0x02,
        0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02,
        0x82, 0x99, 0x01, 0x02, 0x23, 0x02, 0x43, 0xa0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x71,
        0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x3d, 0x01, 0x00, 0x01, 0x00, 0x00, 0x00, 0x3d,
        0x01, 0x00, 0x01};
    const char *image = tu_tmp_path(".bin");
    uint64_t runs[8], one[8];
    size_t n, i;
    (void)state;
    assert_int_equal(tu_write_file(image, "\x90\x90\xf4", 3), 0);
    n = gap_sources(image, 0x100000, trace, sizeof trace, 0, runs, 8);
    assert_int_equal(gap_sources(image, 0x100000, trace, sizeof trace, 1, one, 8), n);
    assert_int_equal(n, 2);
    for (i = 0; i < n; i++) assert_int_equal(runs[i], one[i]);
    assert_int_equal(runs[1], 0x100000);
    remove(image);
}

/* fuzz_perf (no reconstruct errors): libipt 2.0.5's block decoder, reusing its block
   cache, moves a block to the cached decision point and counts the instruction there
   before decoding it; when that decode fails, the block comes back with the error and
   with an instruction libipt could not decode as its last (end_ip, not truncated).
   ptxed prints the instructions before it and a decode error for it. The block path
   rebuilt all of them, could not decode the last either, and dropped the whole block as a
   reconstruct error. The fuzzed perf.data got there as this test does: section B (the
   image's first 4 bytes) mapped over A (the whole image) ends inside a mov, which libipt
   decodes as a truncated instruction, its bytes read from both sections, and caches as
   a decision point; after a gap, the PSB+ that restarts decoding at the same place has no
   MODE.Exec, so the mode is unknown: the cache (holding 64-bit) takes the block on to the
   mov, whose decode across the sections needs the decoder's mode and fails. The
   instruction-flow decoder, which has no such cache, cannot decode a thing in an unknown
   mode and stops at the block's start. Image: nop; nop; mov eax, imm32; jz. */
static void test_pt_block_ending_in_undecoded_insn(void **state) {
    static const uint8_t code[] = {0x90, 0x90, 0xb8, 0x01, 0x02, 0x03, 0x04, 0x74, 0x00};
    /* both decoders: the first pass, then a gap at the jz (given a TIP); then the block
       decoder's block from its cache up to the mov, the gap at the mov (ptxed's error ip);
       the instruction-flow decoder's gap at the block's start */
    static const pt_frame_at want[2][8] = {
        {{FRAMES_KIND_STD, 0x1000}, {FRAMES_KIND_STD, 0x1001}, {FRAMES_KIND_STD, 0x1002},
         {FRAMES_KIND_STD, 0x1007}, {FRAMES_KIND_EXCEPTION, 0x1007},
         {FRAMES_KIND_STD, 0x1000}, {FRAMES_KIND_STD, 0x1001}, {FRAMES_KIND_EXCEPTION, 0x1001}},
        {{FRAMES_KIND_STD, 0x1000}, {FRAMES_KIND_STD, 0x1001}, {FRAMES_KIND_STD, 0x1002},
         {FRAMES_KIND_STD, 0x1007}, {FRAMES_KIND_EXCEPTION, 0x1007},
         {FRAMES_KIND_EXCEPTION, 0x1007}}};
    static const size_t nwant[2] = {8, 6};
    static const uint64_t gap_ip[2] = {0x1002, 0x1000};
    const char *image = tu_tmp_path(".bin");
    uint8_t trace[128];
    uint64_t off = 0;
    struct pt_config cfg;
    struct pt_encoder *e;
    struct pt_packet p;
    pt_frame_at fr[16];
    int decoder, callback;
    (void)state;
    assert_int_equal(tu_write_file(image, code, sizeof code), 0);
    pt_config_init(&cfg);
    cfg.begin = trace;
    cfg.end = trace + sizeof trace;
    e = pt_alloc_encoder(&cfg);
    assert_non_null(e);
    ptp_psb_plus(e, 0x1000);
    memset(&p, 0, sizeof p);   /* where jz wants a TNT: a gap */
    p.type = ppt_tip;
    p.payload.ip.ipc = pt_ipc_sext_48;
    p.payload.ip.ip = 0x1000;
    ptp_put(e, &p);
    memset(&p, 0, sizeof p);   /* PSB+ without MODE.Exec at 0x1000 */
    p.type = ppt_psb;
    ptp_put(e, &p);
    p.type = ppt_fup;
    p.payload.ip.ipc = pt_ipc_sext_48;
    p.payload.ip.ip = 0x1000;
    ptp_put(e, &p);
    memset(&p, 0, sizeof p);
    p.type = ppt_psbend;
    ptp_put(e, &p);
    p.type = ppt_tnt_8;   /* more trace: not the end */
    p.payload.tnt.bit_size = 1;
    ptp_put(e, &p);
    pt_enc_get_offset(e, &off);
    pt_free_encoder(e);
    for (decoder = 0; decoder < 2; decoder++) {
        for (callback = 0; callback < 2; callback++) {
            frames_pt_options o;
            frames_pt *pt;
            frames_pt_stats st;
            frames_error err;
            size_t n, i;
            frames_pt_options_default(&o);
            o.decoder = decoder ? FRAMES_PT_DECODER_INSN : FRAMES_PT_DECODER_BLOCK;
            assert_int_equal(frames_pt_open(&pt, &o, &err), FRAMES_OK);
            assert_int_equal(frames_pt_set_trace(pt, trace, (size_t)off, &err), FRAMES_OK);
            assert_int_equal(frames_pt_add_raw(pt, image, 0, 0, 0x1000, &err), FRAMES_OK);
            assert_int_equal(frames_pt_add_raw(pt, image, 0, 4, 0x1000, &err), FRAMES_OK);
            n = pt_frames_written(pt, callback, &st, fr, 16);
            assert_int_equal(st.reconstruct_errors, 0);
            assert_int_equal(st.gaps, 2);
            assert_int_equal(st.gap[0].code, -pte_bad_query);
            assert_int_equal(st.gap[1].code, -pte_bad_insn);
            assert_int_equal(st.gap[1].ip, gap_ip[decoder]);
            assert_int_equal(n, nwant[decoder]);
            assert_int_equal(st.insns, n - 2);   /* the mov's second time is not counted */
            for (i = 0; i < n; i++) {
                assert_int_equal(fr[i].kind, want[decoder][i].kind);
                assert_int_equal(fr[i].addr, want[decoder][i].addr);
            }
        }
    }
    remove(image);
}

/* fuzz_ptdecode (a session with an instruction callback writes the same frames; found as
   a reconstruct error): the block path rebuilds instructions with frames_pt_x86_decode,
   which must find libipt's lengths, and disagreed on 0F FF (UD0): libipt 2.0 gives it no
   ModRM, so every frame of a block from there on was lost. Comparing every opcode with
   libipt (all maps, prefixes, modes) found the other differences below: 0F B9 without
   ModRM, 0F 39 / 0F 3B-3F read like 0F 38, and VEX/EVEX opcodes with the legacy maps'
   rules (EVEX.mm 2 bits, VEX map 0 and 4, no sizes from VEX.pp), and (fuzz_ptdecode
   again) C7 /7 with a ModRM displacement has no xbegin offset. Lengths are libipt's. */
static void test_pt_lengths_as_libipt(void **state) {
    static const struct {
        uint8_t bytes[16];
        uint8_t size;
        uint8_t mode;
    } t[] = {
        {{0x0f, 0xff, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90}, 2, ptem_64bit},          /* ud0 */
        {{0x0f, 0xb9, 0x80, 0x90, 0x90, 0x90, 0x90, 0x90}, 2, ptem_64bit},          /* ud1 */
        {{0x0f, 0x39, 0xc0, 0x90, 0x90, 0x90, 0x90, 0x90}, 8, ptem_64bit},          /* op, modrm, disp32 */
        {{0x66, 0x0f, 0x3f, 0x04, 0x90, 0x90, 0x90, 0x90, 0x90}, 9, ptem_64bit},
        {{0xc5, 0xf8, 0x04, 0xc0}, 3, ptem_64bit},                                  /* no ModRM */
        {{0xc5, 0xf8, 0x0f, 0xc0, 0x90}, 3, ptem_64bit},                            /* no 3DNow */
        {{0xc5, 0xf8, 0x80, 0x90, 0x90, 0x90, 0x90, 0x90}, 7, ptem_64bit},          /* rel32 */
        {{0xc5, 0xf8, 0xba, 0xc0, 0x01}, 5, ptem_64bit},                            /* imm8 */
        {{0xc5, 0xf9, 0x78, 0xc0, 0x01, 0x02}, 4, ptem_64bit},                      /* no extrq imm */
        {{0xc5, 0xf9, 0x80, 0x90, 0x90, 0x90, 0x90, 0x90}, 7, ptem_32bit},          /* pp: no osz */
        {{0xc4, 0xe0, 0x78, 0x05, 0x90, 0x90, 0x90, 0x90}, 8, ptem_64bit},          /* map 0: add eax, imm32 */
        {{0xc4, 0xe4, 0x78, 0x00, 0xc0, 0x01}, 6, ptem_64bit},                      /* map 4: imm8 */
        {{0x62, 0xf5, 0x7c, 0x48, 0x04, 0xc0}, 5, ptem_64bit},                      /* map 5 = 1 */
        {{0x62, 0xf4, 0x7c, 0x48, 0x00, 0xc0}, 6, ptem_64bit},                      /* map 4 = 0 */
        {{0x48, 0xc7, 0x7a, 0xca, 0xe6, 0x6e, 0xdd, 0x7f}, 4, ptem_64bit},          /* C7 /7, disp8: no rel */
        {{0xc7, 0xb8, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08}, 6, ptem_64bit},   /* disp32 */
        {{0xc7, 0x3c, 0x24, 0x01, 0x02, 0x03, 0x04, 0x05}, 7, ptem_64bit},          /* SIB: rel32 */
    };
    size_t i;
    (void)state;
    for (i = 0; i < sizeof t / sizeof t[0]; i++) {
        frames_pt_x86 x;
        if (frames_pt_x86_decode(t[i].bytes, sizeof t[i].bytes, (enum pt_exec_mode)t[i].mode, 0x1000, &x) != 0)
            fail_msg("case %u: no instruction", (unsigned)i);
        if (x.size != t[i].size) fail_msg("case %u: %u bytes, libipt %u", (unsigned)i, x.size, t[i].size);
    }
}

/* fuzz_sideband (perf time to TSC is exact, so monotonic): the formula of
   perf_event_mmap_page, (t / mult) << shift + ((t % mult) << shift) / mult, overflows for
   a time_shift over 32 (the remainder) or a TSC past 64 bits (the quotient): the TSC went
   down as time went up, and sideband records were applied out of place. */
static void test_pt_time_to_tsc_exact(void **state) {
    frames_pt_sb_config c;
    (void)state;
    frames_pt_sb_config_default(&c);
    c.time_mult = 1u << 30;
    c.time_shift = 40;
    assert_int_equal(frames_pt_time_to_tsc(&c, (1u << 29) - 1), (1ull << 39) - (1u << 10));
    assert_int_equal(frames_pt_time_to_tsc(&c, 1u << 29), 1ull << 39);
    c.time_mult = 3;
    c.time_shift = 63;
    assert_int_equal(frames_pt_time_to_tsc(&c, 5), 0xd555555555555555ull);   /* 5 * 2^63 / 3 */
    assert_int_equal(frames_pt_time_to_tsc(&c, 6), UINT64_MAX);              /* 2^64: saturated */
    c.time_zero = 1000;
    c.time_mult = 3;
    c.time_shift = 2;
    assert_int_equal(frames_pt_time_to_tsc(&c, 1010), 13);   /* as before: 12 + 4 / 3 */
    assert_int_equal(frames_pt_time_to_tsc(&c, 0), 0);
}

/* fuzz_sideband (UBSan: applying zero offset to a null pointer): an empty sideband source
   added with copy = 1 (nothing to copy: no buffer) or with no data pointer was read at
   NULL + 0. */
static void test_pt_empty_sideband(void **state) {
    uint8_t trace[64];
    size_t tlen = pt_enter_at(trace, sizeof trace, 0x1000);
    frames_pt *pt;
    frames_pt_stats st;
    frames_error err;
    (void)state;
    assert_int_equal(frames_pt_open(&pt, NULL, &err), FRAMES_OK);
    assert_int_equal(frames_pt_set_trace(pt, trace, tlen, &err), FRAMES_OK);
    assert_int_equal(frames_pt_add_pevent(pt, NULL, "copied", trace, 0, 1, 1, &err), FRAMES_OK);
    assert_int_equal(frames_pt_add_pevent(pt, NULL, "none", NULL, 0, 0, 0, &err), FRAMES_OK);
    assert_int_equal(frames_pt_decode(pt, NULL, &st, &err), FRAMES_OK);
    assert_int_equal(st.sb_records, 0);
    assert_int_equal(st.sb_warnings + st.sb_errors, 0);
    frames_pt_close(pt);
}

/* fuzz_perf (UBSan: null pointer passed to qsort): a perf.data file without kernel
   records sorted its empty (NULL) record list. The smallest such file: a pipe header. */
static void test_perf_without_records(void **state) {
    static const uint8_t pipe[16] = {'P', 'E', 'R', 'F', 'I', 'L', 'E', '2', 16};
    frames_perf *pd;
    frames_error err;
    (void)state;
    assert_int_equal(frames_perf_open_memory(&pd, pipe, sizeof pipe, NULL, &err), FRAMES_OK);
    assert_int_equal(frames_perf_info_get(pd)->pipe_mode, 1);
    assert_int_equal(frames_perf_info_get(pd)->sideband_records, 0);
    assert_int_equal(frames_perf_nstreams(pd), 0);
    assert_int_equal(frames_perf_sideband(pd, -2).len, 0);
    frames_perf_close(pd);
}

/* fuzz_perf (memory held within a multiple of the file size): every attribute of a
   perf.data file may name any part of the file as its ids, and each was copied, with one
   lookup entry per id besides: 200 attributes naming the whole of a 16 KiB file held
   9.8 MB (and record lookups walked all the ids). The ids of all attributes must now fit
   in the file together. */
static void test_perf_overlapping_ids(void **state) {
    enum { SIZE = 16384, K = 200, ASIZE = 64 };
    uint8_t *f = (uint8_t *)calloc(1, SIZE);
    size_t k, data = 104 + K * ASIZE;
    frames_perf *pd;
    frames_error err;
    (void)state;
    assert_non_null(f);
    memcpy(f, "PERFILE2", 8);
    tu_put_le(f + 8, 104, 8);
    tu_put_le(f + 16, ASIZE, 8);
    tu_put_le(f + 24, 104, 8);
    tu_put_le(f + 32, K * ASIZE, 8);
    tu_put_le(f + 40, data, 8);
    tu_put_le(f + 48, (SIZE - data) / 16 * 16, 8);
    for (k = 0; k < K; k++) {
        uint8_t *a = f + 104 + k * ASIZE;
        tu_put_le(a, 1, 4);
        tu_put_le(a + 4, 48, 4);
        tu_put_le(a + 24, 0x10000, 8);   /* PERF_SAMPLE_IDENTIFIER */
        tu_put_le(a + 40, 1ull << 18, 8);
        tu_put_le(a + 48, 0, 8);         /* ids: the whole file */
        tu_put_le(a + 56, SIZE, 8);
    }
    for (k = data; k + 16 <= data + (SIZE - data) / 16 * 16; k += 16) {
        tu_put_le(f + k, 3, 4);          /* COMM */
        tu_put_le(f + k + 6, 16, 2);
    }
    assert_int_equal(frames_perf_open_memory(&pd, f, SIZE, NULL, &err), FRAMES_E_FORMAT);
    assert_non_null(strstr(err.message, "attribute ids overlap"));
    tu_put_le(f + 32, 2 * ASIZE, 8);     /* two attributes sharing ids: half the file each */
    tu_put_le(f + 104 + 56, SIZE / 2, 8);
    tu_put_le(f + 104 + ASIZE + 56, SIZE / 2, 8);
    assert_int_equal(frames_perf_open_memory(&pd, f, SIZE, NULL, &err), FRAMES_OK);
    assert_int_equal(frames_perf_info_get(pd)->nattrs, 2);
    frames_perf_close(pd);
    free(f);
}

static int count_record(void *ctx, const frames_pt_sb_record *r) {
    uint64_t *seen = (uint64_t *)ctx;
    if (r->s_identifier == 5 && (r->samples & FRAMES_PERF_SAMPLE_TIME)) (*seen)++;
    return 0;
}

/* (with the ids bound above) a record's sample type by its PERF_SAMPLE_IDENTIFIER was a
   linear search of the ids per record, so a file of many ids and many records took time
   with their product; the ids are now sorted once and searched. The first entry of an id
   still wins, whatever the order given. */
static void test_pt_sample_ids_first_wins(void **state) {
    static const frames_pt_sample_id ids[] = {
        {7, FRAMES_PERF_SAMPLE_TID | FRAMES_PERF_SAMPLE_IDENTIFIER},
        {5, FRAMES_PERF_SAMPLE_TIME | FRAMES_PERF_SAMPLE_IDENTIFIER},
        {1, FRAMES_PERF_SAMPLE_IDENTIFIER},
        {5, FRAMES_PERF_SAMPLE_IDENTIFIER}};
    uint8_t trace[64], rec[32];
    size_t tlen = pt_enter_at(trace, sizeof trace, 0x1000);
    frames_pt *pt;
    frames_pt_sb_config c;
    frames_pt_callbacks cb;
    frames_pt_stats st;
    frames_error err;
    uint64_t seen = 0;
    (void)state;
    tu_put_le(rec, 12, 4);          /* ITRACE_START, size 32: pid, tid, time, identifier */
    tu_put_le(rec + 4, 0, 2);
    tu_put_le(rec + 6, 32, 2);
    tu_put_le(rec + 8, 1, 4);
    tu_put_le(rec + 12, 1, 4);
    tu_put_le(rec + 16, 0, 8);      /* time 0: due at once */
    tu_put_le(rec + 24, 5, 8);
    frames_pt_sb_config_default(&c);
    c.sample_ids = ids;
    c.nsample_ids = sizeof ids / sizeof ids[0];
    assert_int_equal(frames_pt_open(&pt, NULL, &err), FRAMES_OK);
    assert_int_equal(frames_pt_set_trace(pt, trace, tlen, &err), FRAMES_OK);
    assert_int_equal(frames_pt_add_pevent(pt, &c, "sb", rec, sizeof rec, 1, 1, &err), FRAMES_OK);
    memset(&cb, 0, sizeof cb);
    cb.ctx = &seen;
    cb.sb_record = count_record;
    frames_pt_set_callbacks(pt, &cb);
    assert_int_equal(frames_pt_decode(pt, NULL, &st, &err), FRAMES_OK);
    assert_int_equal(st.sb_errors, 0);
    assert_int_equal(seen, 1);
    frames_pt_close(pt);
}

/* (found while writing docs/security.md, not by a target: the fuzz targets keep MMAP
   names inside a private directory) a sideband MMAP record naming a FIFO blocked decoding
   for ever: the ELF header of every mapped file was read with fopen, which waits for a
   writer. The file is now opened without blocking and read only if regular. */
static void test_pt_sideband_mmap_of_a_fifo(void **state) {
    const char *fifo, *root;
    uint8_t trace[64], rec[48];
    size_t tlen = pt_enter_at(trace, sizeof trace, 0x1000);
    frames_pt *pt;
    frames_pt_sb_config c;
    frames_pt_stats st;
    frames_error err;
    (void)state;
    assert_int_equal(tu_workdir_make("frames-regress"), 0);
    fifo = tu_workdir_path("p");
    root = tu_workdir_path("");   /* the directory with a slash */
    assert_int_equal(mkfifo(fifo, 0600), 0);
    memset(rec, 0, sizeof rec);   /* MMAP, user mode: pid 1, tid 1, 0x1000, 4096 bytes, "p" */
    tu_put_le(rec, 1, 4);
    tu_put_le(rec + 4, 2, 2);
    tu_put_le(rec + 6, sizeof rec, 2);
    tu_put_le(rec + 8, 1, 4);
    tu_put_le(rec + 12, 1, 4);
    tu_put_le(rec + 16, 0x1000, 8);
    tu_put_le(rec + 24, 4096, 8);
    rec[40] = 'p';
    frames_pt_sb_config_default(&c);
    c.sysroot = root;
    alarm(20);   /* a regression blocks: fail instead of hanging the suite */
    assert_int_equal(frames_pt_open(&pt, NULL, &err), FRAMES_OK);
    assert_int_equal(frames_pt_set_trace(pt, trace, tlen, &err), FRAMES_OK);
    assert_int_equal(frames_pt_add_pevent(pt, &c, "sb", rec, sizeof rec, 1, 0, &err), FRAMES_OK);
    assert_int_equal(frames_pt_decode(pt, NULL, &st, &err), FRAMES_OK);
    alarm(0);
    assert_int_equal(st.sb_records, 1);
    assert_int_equal(st.sb_errors, 1);   /* libipt cannot map it */
    frames_pt_close(pt);
    remove(fifo);
    rmdir(tu_workdir);
}

typedef struct modload_seen {
    uint64_t n, low, high;
} modload_seen;

/* fuzz_sideband (a written trace reads back: a modload frame's low <= high): an MMAP
   record whose address + length passes 2^64 (libipt maps only the file's bytes) gave a
   modload frame ending below its start. The end is now saturated. */
static void test_pt_mmap_past_2_64(void **state) {
    const char *path, *root;
    uint8_t trace[64], rec[56];
    size_t tlen = pt_enter_at(trace, sizeof trace, 0x1000);
    frames_pt *pt;
    frames_pt_sb_config c;
    frames_reader *r;
    frames_error err;
    frames_frame f;
    frames_membuf m;
    modload_seen seen = {0, 0, 0};
    (void)state;
    assert_int_equal(tu_workdir_make("frames-regress"), 0);
    path = tu_workdir_path("code.bin");
    root = tu_workdir_path("");   /* the directory with a slash */
    assert_int_equal(tu_write_file(path, "\x90\x90\x90\x90", 4), 0);
    memset(rec, 0, sizeof rec);   /* MMAP, user: pid 1, 0xfff...f000, 1 MiB, "code.bin" */
    tu_put_le(rec, 1, 4);
    tu_put_le(rec + 4, 2, 2);
    tu_put_le(rec + 6, sizeof rec, 2);
    tu_put_le(rec + 8, 1, 4);
    tu_put_le(rec + 12, 1, 4);
    tu_put_le(rec + 16, 0xfffffffffffff000ull, 8);
    tu_put_le(rec + 24, 1u << 20, 8);
    memcpy(rec + 40, "code.bin", 8);
    frames_pt_sb_config_default(&c);
    c.sysroot = root;
    assert_int_equal(frames_pt_open(&pt, NULL, &err), FRAMES_OK);
    assert_int_equal(frames_pt_set_trace(pt, trace, tlen, &err), FRAMES_OK);
    assert_int_equal(frames_pt_add_pevent(pt, &c, "sb", rec, sizeof rec, 1, 0, &err), FRAMES_OK);
    pt_decode_unfinished(pt, &m, NULL);
    assert_int_equal(frames_reader_open_memory(&r, m.data, m.size, NULL, &err), FRAMES_OK);
    while (frames_reader_next(r, &f) > 0)
        if (f.kind == FRAMES_KIND_MODLOAD) {
            seen.n++;
            seen.low = f.modload.low_address;
            seen.high = f.modload.high_address;
        }
    frames_reader_close(r);
    frames_membuf_free(&m);
    assert_int_equal(seen.n, 1);
    assert_int_equal(seen.low, 0xfffffffffffff000ull);
    assert_int_equal(seen.high, UINT64_MAX);
    remove(path);
    rmdir(tu_workdir);
}

/* An ELF64 file with one PT_LOAD program header (phnum, the number the header claims). */
static size_t elf_one_load(uint8_t *e, uint16_t phnum, uint64_t offset, uint64_t vaddr, uint64_t filesz) {
    memset(e, 0, 120 + 16);
    memcpy(e, "\177ELF\2\1\1", 7);
    tu_put_le(e + 16, 2, 2);      /* ET_EXEC */
    tu_put_le(e + 18, 62, 2);     /* x86-64 */
    tu_put_le(e + 20, 1, 4);
    tu_put_le(e + 32, 64, 8);     /* phoff */
    tu_put_le(e + 52, 64, 2);
    tu_put_le(e + 54, 56, 2);
    tu_put_le(e + 56, phnum, 2);
    tu_put_le(e + 64, 1, 4);      /* PT_LOAD, r-x */
    tu_put_le(e + 68, 5, 4);
    tu_put_le(e + 72, offset, 8);
    tu_put_le(e + 80, vaddr, 8);
    tu_put_le(e + 88, vaddr, 8);
    tu_put_le(e + 96, filesz, 8);
    tu_put_le(e + 104, filesz, 8);
    memset(e + 120, 0x90, 16);    /* the code: nops */
    return 120 + 16;
}

/* fuzz_ptelf (memory bounded by the input; ASan; modload low <= high), frames_pt_add_elf:
   a 136-byte file claiming 65535 program headers had 3.5 MiB allocated for them before
   they were found past its end; a segment libipt refuses was named from the array just
   freed (heap-use-after-free); a segment moved by --elf FILE:BASE past 2^64 gave a modload whose end lay
   below its start. Each is now one error naming the file. */
static void test_pt_elf_loading(void **state) {
    static const struct {
        uint16_t phnum;
        uint64_t offset, vaddr, filesz, base;   /* base: the load address given, or 0 */
        int rc;
        const char *says;
    } cases[] = {
        {65535, 120, 0x401000, 16, 0, FRAMES_E_FORMAT, "past its end"},
        {1, 120, 0x401000, 16, 0xfffffffffffffff8ull, FRAMES_E_FORMAT, "passes the end of the address space"},
        {1, 0x10000, 0x401000, 16, 0, FRAMES_PT_E_LIBIPT, "cannot add segment at 0x401000"},
        {1, 120, 0x401000, 16, 0, FRAMES_OK, ""},
    };
    const char *path = tu_tmp_path(".elf");
    uint8_t e[160];
    size_t i;
    (void)state;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        frames_pt *pt;
        frames_error err;
        size_t n = elf_one_load(e, cases[i].phnum, cases[i].offset, cases[i].vaddr, cases[i].filesz);
        assert_int_equal(tu_write_file(path, e, n), 0);
        assert_int_equal(frames_pt_open(&pt, NULL, &err), FRAMES_OK);
        assert_int_equal(frames_pt_add_elf(pt, path, cases[i].base, cases[i].base != 0, &err), cases[i].rc);
        if (cases[i].rc != FRAMES_OK && !strstr(err.message, cases[i].says))
            fail_msg("case %u: %s", (unsigned)i, err.message);
        frames_pt_close(pt);
    }
    remove(path);
}
#endif

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tracedb_blob_size_wraps),
        cmocka_unit_test(test_tracedb_failed_open_sets_null),
        cmocka_unit_test(test_frames_count_after_toc_check),
        cmocka_unit_test(test_tracedb_wide_point_streams),
#ifdef FRAMES_HAVE_IPT
        cmocka_unit_test(test_pt_cycle_without_trace),
        cmocka_unit_test(test_pt_gap_after_cached_run_prefix),
        cmocka_unit_test(test_pt_block_ending_in_undecoded_insn),
        cmocka_unit_test(test_pt_lengths_as_libipt),
        cmocka_unit_test(test_pt_time_to_tsc_exact),
        cmocka_unit_test(test_pt_empty_sideband),
        cmocka_unit_test(test_perf_without_records),
        cmocka_unit_test(test_perf_overlapping_ids),
        cmocka_unit_test(test_pt_sample_ids_first_wins),
        cmocka_unit_test(test_pt_sideband_mmap_of_a_fifo),
        cmocka_unit_test(test_pt_mmap_past_2_64),
        cmocka_unit_test(test_pt_elf_loading),
#endif
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
