/* test_vprof: frames_vprof.h and `frames vprof` on traces written here with answers
   worked out by hand (comments give the reasoning per frame), on the caps, and on the
   reference vectors r11 (one load, derived from its .txt dump) and r10 (no operands). */
#include "frames.h"
#include "frames_vprof.h"

#include "testutil.h"

/* ---- building traces */

#define MAXOPS 8

typedef struct tframe {
    uint64_t pc;
    frames_operand pre[MAXOPS], post[MAXOPS];
    uint32_t npre, npost;
} tframe;

static tframe *tf_new(tframe *f, uint64_t pc) {
    memset(f, 0, sizeof *f);
    f->pc = pc;
    return f;
}

/* A load frame: mem operand read in the pre list (pintraces' convention). */
static tframe *tf_load(tframe *f, uint64_t pc, uint64_t addr, const void *v, size_t n) {
    tf_new(f, pc)->pre[f->npre++] = tu_mem_op(addr, v, n, 1, 0);
    return f;
}

/* A store frame: mem operand written in the post list. */
static tframe *tf_store(tframe *f, uint64_t pc, uint64_t addr, const void *v, size_t n) {
    tf_new(f, pc)->post[f->npost++] = tu_mem_op(addr, v, n, 0, 1);
    return f;
}

static void to_frame(const tframe *t, frames_frame *f) {
    memset(f, 0, sizeof *f);
    f->kind = FRAMES_KIND_STD;
    f->std.address = t->pc;
    f->std.thread_id = 1;
    f->std.rawbytes = frames_bytes_of("\x90", 1);
    f->std.pre = t->pre;
    f->std.npre = t->npre;
    f->std.post = t->post;
    f->std.npost = t->npost;
    f->std.has_post = 1;
}

typedef struct tracebuf {
    frames_writer *w;
    frames_vprof *vp;   /* also fed directly, to compare the API with the file path */
} tracebuf;

static void tb_add(tracebuf *tb, const tframe *t) {
    frames_frame f;
    to_frame(t, &f);
    assert_int_equal(frames_writer_add(tb->w, &f), FRAMES_OK);
    if (tb->vp) assert_int_equal(frames_vprof_add_frame(tb->vp, &f), FRAMES_OK);
}

static const uint8_t V1234[4] = {0x11, 0x22, 0x33, 0x44};
static const uint8_t V1235[4] = {0x11, 0x22, 0x33, 0x55};
static const uint8_t ZERO8[8] = {0};
static const uint8_t ONE[4] = {1, 0, 0, 0};
static const uint8_t SEVEN[4] = {7, 0, 0, 0};
static const uint8_t EIGHT[4] = {8, 0, 0, 0};

#define A 0x1000u
#define B 0x2000u
#define C 0x3000u
#define D 0x4000u
#define E 0x5000u

/* Writes the hand-computed trace to path; the expected answers are in test_hand_trace. */
static void write_hand_trace(const char *path, frames_vprof *direct) {
    tracebuf tb;
    tframe t;
    frames_error err;
    frames_frame other;
    uint8_t simd[16], simd2[16], b55 = 0x55, b99 = 0x99;
    int i;
    for (i = 0; i < 16; i++) simd[i] = simd2[i] = (uint8_t)(i + 1);
    simd2[15] = 0xff;
    tb.vp = direct;
    assert_int_equal(frames_writer_open_path(&tb.w, path, NULL, NULL, &err), FRAMES_OK);

    /* a modload frame: counts as a frame, has no accesses */
    memset(&other, 0, sizeof other);
    other.kind = FRAMES_KIND_MODLOAD;
    other.modload.module_name = frames_str("/bin/x");
    other.modload.low_address = 0x1000;
    other.modload.high_address = 0x1fff;
    assert_int_equal(frames_writer_add(tb.w, &other), FRAMES_OK);
    if (direct) assert_int_equal(frames_vprof_add_frame(direct, &other), FRAMES_OK);

    tb_add(&tb, tf_load(&t, 0x10, A, V1234, 4));  /* F1  first load of A: not redundant */
    tb_add(&tb, tf_load(&t, 0x10, A, V1234, 4));  /* F2  redundant (1) */
    tb_add(&tb, tf_load(&t, 0x10, A, V1234, 4));  /* F3  redundant (2) */
    tb_add(&tb, tf_store(&t, 0x20, A, V1234, 4)); /* F4  old value known from loads: silent (1) */
    tb_add(&tb, tf_load(&t, 0x10, A, V1234, 4));  /* F5  a (silent) store in between: not redundant */
    tb_add(&tb, tf_load(&t, 0x30, A + 2, V1234 + 2, 2)); /* F6 first load at A+2 */
    tb_add(&tb, tf_load(&t, 0x10, A, V1234, 4));  /* F7  overlapping load at A+2 is no store: redundant (3) */
    tb_add(&tb, tf_store(&t, 0x40, A + 3, &b55, 1)); /* F8 known 0x44 -> 0x55: checked, not silent;
                                                        ends the loads at A and A+2 */
    tb_add(&tb, tf_load(&t, 0x10, A, V1235, 4));  /* F9  not redundant */
    tb_add(&tb, tf_load(&t, 0x10, A, V1235, 2));  /* F10 other size at A: not redundant */
    tb_add(&tb, tf_store(&t, 0xc0, A + 2, &b99, 1)); /* F10b adjacent to [A, A+2): checked, not silent */
    tb_add(&tb, tf_load(&t, 0x10, A, V1235, 2));  /* F11 redundant (4): F10b did not touch [A, A+2) */
    tb_add(&tb, tf_load(&t, 0x50, B, ZERO8, 8));  /* F12 zero (1) */
    tb_add(&tb, tf_load(&t, 0x50, B, ZERO8, 8));  /* F13 zero (2), redundant (5) */
    tb_add(&tb, tf_store(&t, 0x60, C, ONE, 4));   /* F14 C never seen: unchecked */
    tb_add(&tb, tf_store(&t, 0x60, C, ONE, 4));   /* F15 known from F14: silent (2) */

    /* F16 old value observed in the pre list (read = written = false), same value: silent (3) */
    tf_new(&t, 0x70);
    t.pre[t.npre++] = tu_mem_op(D, SEVEN, 4, 0, 0);
    t.post[t.npost++] = tu_mem_op(D, SEVEN, 4, 0, 1);
    tb_add(&tb, &t);
    /* F17 observed 7, writes 8: checked, not silent */
    tf_new(&t, 0x70);
    t.pre[t.npre++] = tu_mem_op(D, SEVEN, 4, 0, 0);
    t.post[t.npost++] = tu_mem_op(D, EIGHT, 4, 0, 1);
    tb_add(&tb, &t);
    /* F18 read-modify-write listed in pre only: a load (first at C: not redundant), then a
       store of unknown value (1) that makes C's content unknown */
    tf_new(&t, 0x80);
    t.pre[t.npre++] = tu_mem_op(C, ONE, 4, 1, 1);
    tb_add(&tb, &t);
    tb_add(&tb, tf_store(&t, 0x60, C, ONE, 4));   /* F19 content unknown again: unchecked */

    tb_add(&tb, tf_load(&t, 0x90, E, simd, 16));  /* F20 SIMD load: first */
    tb_add(&tb, tf_load(&t, 0x90, E, simd, 16));  /* F21 redundant (6) */
    tb_add(&tb, tf_load(&t, 0x90, E, simd2, 16)); /* F22 last byte differs: not redundant */

    /* F23 registers only: ignored */
    tf_new(&t, 0x95);
    t.pre[0].spec = FRAMES_REG;
    t.pre[0].name = frames_str("R_EAX");
    t.pre[0].read = 1;
    t.pre[0].value = frames_bytes_of(ONE, 4);
    t.pre[0].bit_length = 32;
    t.npre = 1;
    tb_add(&tb, &t);
    tb_add(&tb, tf_load(&t, 0xa0, A, NULL, 0));   /* F24 load without value: skipped */

    /* F25 store without value, bit_length 32 at B: unknown value (2), ends the load at B */
    tf_new(&t, 0xb0);
    t.post[t.npost] = tu_mem_op(B, NULL, 0, 0, 1);
    t.post[t.npost++].bit_length = 32;
    tb_add(&tb, &t);
    tb_add(&tb, tf_load(&t, 0x50, B, ZERO8, 8));  /* F26 zero (3), not redundant */

    assert_int_equal(frames_writer_close(tb.w), FRAMES_OK);
}

static void check_row(const frames_vprof_insn *r, uint64_t pc, uint64_t loads, uint64_t red,
                      uint64_t zero, uint64_t stores, uint64_t checked, uint64_t silent) {
    assert_int_equal(r->address, pc);
    assert_int_equal(r->loads, loads);
    assert_int_equal(r->redundant_loads, red);
    assert_int_equal(r->zero_loads, zero);
    assert_int_equal(r->stores, stores);
    assert_int_equal(r->checked_stores, checked);
    assert_int_equal(r->silent_stores, silent);
}

static void check_hand_answers(frames_vprof *vp) {
    const frames_vprof_stats *s = frames_vprof_stats_get(vp);
    frames_vprof_insn rows[16];
    size_t n;
    assert_int_equal(s->frames, 28);      /* the modload and F1-F26 with F10b */
    assert_int_equal(s->std_frames, 27);
    assert_int_equal(s->loads, 16);   /* F1-3,5-7,9-11,12,13,18,20-22,26 */
    assert_int_equal(s->redundant_loads, 6);
    assert_int_equal(s->zero_loads, 3);
    assert_int_equal(s->stores, 10);  /* F4,8,10b,14-19,25 */
    assert_int_equal(s->checked_stores, 6); /* F4,8,10b,15,16,17 */
    assert_int_equal(s->silent_stores, 3);
    assert_int_equal(s->unknown_value_stores, 2);
    assert_int_equal(s->skipped_operands, 1);
    assert_int_equal(s->instructions, 11);
    assert_int_equal(s->untracked_accesses, 0);
    assert_false(s->address_cap_hit);
    assert_false(s->instruction_cap_hit);

    n = frames_vprof_top(vp, FRAMES_VPROF_REDUNDANT_LOADS, rows, 16);
    assert_int_equal(n, 3);
    check_row(&rows[0], 0x10, 8, 4, 0, 0, 0, 0);
    check_row(&rows[1], 0x50, 3, 1, 3, 0, 0, 0);  /* tie with 0x90: lower address first */
    check_row(&rows[2], 0x90, 3, 1, 0, 0, 0, 0);
    n = frames_vprof_top(vp, FRAMES_VPROF_SILENT_STORES, rows, 16);
    assert_int_equal(n, 3);
    check_row(&rows[0], 0x20, 0, 0, 0, 1, 1, 1);
    check_row(&rows[1], 0x60, 0, 0, 0, 3, 1, 1);
    check_row(&rows[2], 0x70, 0, 0, 0, 2, 2, 1);
    n = frames_vprof_top(vp, FRAMES_VPROF_ZERO_LOADS, rows, 16);
    assert_int_equal(n, 1);
    assert_int_equal(rows[0].address, 0x50);
    n = frames_vprof_top(vp, FRAMES_VPROF_STORES, rows, 2);   /* truncated top */
    assert_int_equal(n, 2);
    assert_int_equal(rows[0].address, 0x60);
    assert_int_equal(rows[1].address, 0x70);
    n = frames_vprof_top(vp, FRAMES_VPROF_ACCESSES, rows, 16);
    assert_int_equal(n, 11);
    check_row(&rows[10], 0xc0, 0, 0, 0, 1, 1, 0);   /* 0xc0 ties at 1 with the highest address */
    n = frames_vprof_top(vp, FRAMES_VPROF_ACCESSES, rows, 0);
    assert_int_equal(n, 0);
}

static void test_hand_trace(void **state) {
    const char *path = tu_tmp_path(".frames");
    frames_vprof *direct, *fromfile;
    frames_reader *r;
    frames_error err;
    frames_frame f;
    int rc;
    (void)state;
    assert_int_equal(frames_vprof_open(&direct, NULL, &err), FRAMES_OK);
    write_hand_trace(path, direct);
    check_hand_answers(direct);
    /* the same through the file */
    assert_int_equal(frames_vprof_open(&fromfile, NULL, &err), FRAMES_OK);
    assert_int_equal(frames_reader_open_path(&r, path, NULL, &err), FRAMES_OK);
    while ((rc = frames_reader_next(r, &f)) > 0)
        assert_int_equal(frames_vprof_add_frame(fromfile, &f), FRAMES_OK);
    assert_int_equal(rc, 0);
    check_hand_answers(fromfile);
    frames_reader_close(r);
    frames_vprof_close(direct);
    frames_vprof_close(fromfile);
    remove(path);
}

/* The command prints the same figures (JSON and text). */
static void test_cli_hand_trace(void **state) {
    const char *path = tu_tmp_path(".frames");
    char *out;
    int st;
    (void)state;
    write_hand_trace(path, NULL);
    out = tu_run(&st, "'%s' vprof --json --top 2 '%s'", tu_frames_bin(), path);
    assert_int_equal(st, 0);
    assert_non_null(strstr(out, "\"loads\":16,\"redundant_loads\":6,\"zero_loads\":3,\"stores\":10,"
                                "\"checked_stores\":6,\"silent_stores\":3,\"unknown_value_stores\":2,"
                                "\"skipped_operands\":1,\"instructions\":11"));
    assert_non_null(strstr(out, "\"top_redundant_loads\":[{\"address\":\"0x10\",\"loads\":8,"
                                "\"redundant_loads\":4,"));
    /* 4 of 8 loads of the row, 4 of the 6 redundant loads */
    assert_non_null(strstr(out, "\"percent_of_row\":50.0000,\"percent_of_total\":66.6667}"));
    assert_non_null(strstr(out, "\"top_zero_loads\":[{\"address\":\"0x50\""));
    assert_null(strstr(out, "\"address\":\"0x90\""));   /* --top 2 cut it */
    free(out);
    out = tu_run(&st, "'%s' vprof '%s'", tu_frames_bin(), path);
    assert_int_equal(st, 0);
    assert_non_null(strstr(out, "  redundant          6 (37.50% of loads)"));
    assert_non_null(strstr(out, "  silent             3 (50.00% of stores with a known old value)"));
    assert_non_null(strstr(out, "  0x0000000000000010            8            4   50.00%   66.67%"));
    free(out);
    out = tu_run(&st, "cat '%s' | '%s' vprof --top 0 -", path, tu_frames_bin());
    assert_int_equal(st, 0);
    assert_non_null(strstr(out, "loads                16"));
    assert_null(strstr(out, "top instructions"));
    free(out);
    remove(path);
}

/* Caps: with room for 2 addresses (2 previous loads; memory for 2 granules is one
   page of FRAMES_REPLAY_MEM_PAGE bytes) an address on another page is untracked and
   reported. */
static void test_caps(void **state) {
    frames_vprof_options o;
    frames_vprof *vp;
    frames_error err;
    const frames_vprof_stats *s;
    const uint8_t v[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    (void)state;
    frames_vprof_options_default(&o);
    o.max_addresses = 2;
    o.max_instructions = 1;
    assert_int_equal(frames_vprof_open(&vp, &o, &err), FRAMES_OK);
    assert_int_equal(frames_vprof_load(vp, 0x10, 0x100, v, 8), FRAMES_OK);
    assert_int_equal(frames_vprof_load(vp, 0x10, 0x108, v, 8), FRAMES_OK);
    assert_int_equal(frames_vprof_load(vp, 0x20, 0x300, v, 8), FRAMES_OK); /* untracked */
    assert_int_equal(frames_vprof_load(vp, 0x20, 0x300, v, 8), FRAMES_OK); /* untracked: not redundant */
    assert_int_equal(frames_vprof_load(vp, 0x10, 0x100, v, 8), FRAMES_OK); /* redundant */
    s = frames_vprof_stats_get(vp);
    assert_int_equal(s->loads, 5);
    assert_int_equal(s->redundant_loads, 1);
    assert_int_equal(s->untracked_accesses, 2);
    assert_true(s->address_cap_hit);
    assert_int_equal(s->load_addresses, 2);
    assert_int_equal(s->content_granules, FRAMES_REPLAY_MEM_PAGE / 8);   /* one page */
    assert_true(s->instruction_cap_hit);
    assert_int_equal(s->instructions, 1);
    assert_int_equal(s->untracked_instructions, 2);
    frames_vprof_close(vp);
    o.max_addresses = 0;
    assert_int_equal(frames_vprof_open(&vp, &o, &err), FRAMES_E_INVALID);
    assert_null(vp);
}

/* Content is byte-exact across granules and sizes; wrapping ranges are skipped. */
static void test_bytes_and_edges(void **state) {
    frames_vprof *vp;
    frames_error err;
    const frames_vprof_stats *s;
    const uint8_t v[8] = {1, 2, 3, 4, 5, 6, 7, 8}, w[2] = {8, 9};
    (void)state;
    assert_int_equal(frames_vprof_open(&vp, NULL, &err), FRAMES_OK);
    /* 8 bytes at 0x1004 span two granules; a 2-byte store inside equal to them is silent */
    frames_vprof_observe(vp, 0x1004, v, 8);
    frames_vprof_store(vp, 0x1, 0x1007, v + 3, 2);
    /* one byte past the observed range: unchecked */
    frames_vprof_store(vp, 0x2, 0x100b, w, 2);
    /* a load ending exactly where a store begins survives it */
    frames_vprof_load(vp, 0x3, 0x2000, v, 8);
    frames_vprof_store(vp, 0x4, 0x2008, v, 1);
    frames_vprof_load(vp, 0x3, 0x2000, v, 8);
    /* a store at the last byte of an 8-byte load that starts 7 bytes before it ends it */
    frames_vprof_store(vp, 0x4, 0x2007, v + 7, 1);
    frames_vprof_load(vp, 0x3, 0x2000, v, 8);
    /* ranges that would wrap past the top of the address space are skipped */
    frames_vprof_load(vp, 0x5, UINT64_MAX - 3, v, 8);
    frames_vprof_load(vp, 0x5, 0, v, FRAMES_VPROF_MAX_ACCESS + 1);
    s = frames_vprof_stats_get(vp);
    assert_int_equal(s->stores, 4);
    assert_int_equal(s->checked_stores, 2);  /* 0x1007 and 0x2007 */
    assert_int_equal(s->silent_stores, 2);   /* 0x2007 writes the 8 it loaded */
    assert_int_equal(s->loads, 3);
    assert_int_equal(s->redundant_loads, 1);
    assert_int_equal(s->skipped_operands, 2);
    frames_vprof_close(vp);
}

/* frames_replay.h's memory alone, which vprof's memory model is: bytes known or not,
   apart from their values, across pages, up to the page cap, wrapping at 2^64. */
static void test_replay_memory_alone(void **state) {
    frames_replay_mem *m;
    frames_error err;
    const uint8_t v[8] = {1, 2, 3, 4, 5, 6, 7, 8}, other[8] = {1, 2, 3, 4, 5, 6, 7, 9};
    uint8_t out[16], known[16];
    const uint64_t a = 2 * FRAMES_REPLAY_MEM_PAGE - 4;   /* 4 bytes on page 1, 4 on page 2 */
    size_t i;
    (void)state;
    assert_int_equal(frames_replay_mem_open(&m, 0, NULL, &err), FRAMES_E_INVALID);
    assert_null(m);
    assert_int_equal(frames_replay_mem_open(&m, 2, NULL, &err), FRAMES_OK);
    assert_int_equal(frames_replay_mem_read(m, a, out, known, 8), 0);   /* never shown */
    assert_int_equal(frames_replay_mem_compare(m, a, v, 8), -1);
    assert_int_equal(frames_replay_mem_set(m, a, v, 8), FRAMES_OK);
    assert_int_equal(frames_replay_mem_pages(m), 2);
    /* [a - 4, a + 12): unknown, the 8 bytes, unknown; unknown bytes read as 0 */
    assert_int_equal(frames_replay_mem_read(m, a - 4, out, known, 16), 8);
    for (i = 0; i < 16; i++) {
        int in = i >= 4 && i < 12;
        assert_int_equal(known[i], in);
        assert_int_equal(out[i], in ? v[i - 4] : 0);
    }
    assert_int_equal(frames_replay_mem_compare(m, a, v, 8), 1);
    assert_int_equal(frames_replay_mem_compare(m, a, other, 8), 0);
    assert_int_equal(frames_replay_mem_compare(m, a - 1, v, 8), -1);
    /* a write of a value the trace lacks: those bytes are unknown again, the rest stay */
    frames_replay_mem_forget(m, a + 3, 2);
    assert_int_equal(frames_replay_mem_read(m, a, out, known, 8), 6);
    assert_int_equal(known[3] | known[4], 0);
    assert_int_equal(out[5], 6);
    assert_int_equal(frames_replay_mem_compare(m, a, v, 8), -1);
    assert_int_equal(frames_replay_mem_compare(m, a + 5, v + 5, 3), 1);
    /* a third page is over the cap: refused, and its bytes stay unknown */
    assert_false(frames_replay_mem_cap_hit(m));
    assert_int_equal(frames_replay_mem_set(m, 0x100000, v, 8), FRAMES_E_LIMIT);
    assert_true(frames_replay_mem_cap_hit(m));
    assert_int_equal(frames_replay_mem_read(m, 0x100000, out, NULL, 8), 0);
    assert_int_equal(frames_replay_mem_pages(m), 2);
    frames_replay_mem_close(m);
    /* the top of the address space wraps to 0 */
    assert_int_equal(frames_replay_mem_open(&m, 4, NULL, &err), FRAMES_OK);
    assert_int_equal(frames_replay_mem_set(m, UINT64_MAX - 1, v, 4), FRAMES_OK);
    assert_int_equal(frames_replay_mem_read(m, 0, out, known, 4), 2);
    assert_int_equal(out[0], 3);
    assert_int_equal(out[1], 4);
    assert_int_equal(known[2], 0);
    frames_replay_mem_close(m);
}

/* r11 (from its .txt dump): frame 0 modload, frame 1 registers only, frame 2 loads 4
   bytes be ba fe ca from 0x8049000 at pc 0x8048102 (134512898), frame 3 a syscall. */
static void test_vector_r11(void **state) {
    frames_reader *r;
    frames_vprof *vp;
    frames_error err;
    frames_frame f;
    frames_vprof_insn row;
    const frames_vprof_stats *s;
    char *out;
    int st;
    (void)state;
    assert_int_equal(frames_reader_open_path(&r, tu_shared("vectors/frames/r11_pintraces_like_x86.frames"),
                                             NULL, &err), FRAMES_OK);
    assert_int_equal(frames_vprof_open(&vp, NULL, &err), FRAMES_OK);
    while (frames_reader_next(r, &f) > 0) assert_int_equal(frames_vprof_add_frame(vp, &f), FRAMES_OK);
    s = frames_vprof_stats_get(vp);
    assert_int_equal(s->frames, 4);
    assert_int_equal(s->std_frames, 2);
    assert_int_equal(s->loads, 1);
    assert_int_equal(s->redundant_loads, 0);
    assert_int_equal(s->zero_loads, 0);
    assert_int_equal(s->stores, 0);
    assert_int_equal(s->instructions, 1);
    assert_int_equal(frames_vprof_top(vp, FRAMES_VPROF_LOADS, &row, 1), 1);
    assert_int_equal(row.address, 134512898);
    assert_int_equal(row.loads, 1);
    frames_vprof_close(vp);
    frames_reader_close(r);
    out = tu_run(&st, "'%s' vprof --json '%s'", tu_frames_bin(),
                 tu_shared("vectors/frames/r11_pintraces_like_x86.frames"));
    assert_int_equal(st, 0);
    assert_non_null(strstr(out, "\"frames\":4,\"std_frames\":2,\"loads\":1,\"redundant_loads\":0,"
                                "\"zero_loads\":0,\"stores\":0,"));
    free(out);
}

/* r10: 10,001 nop frames without operands. */
static void test_vector_r10(void **state) {
    char *out;
    int st;
    (void)state;
    out = tu_run(&st, "'%s' vprof --json '%s'", tu_frames_bin(),
                 tu_shared("vectors/frames/r10_default_m_n10001.frames"));
    assert_int_equal(st, 0);
    assert_non_null(strstr(out, "\"frames\":10001,\"std_frames\":10001,\"loads\":0,"));
    free(out);
}

static void test_cli_errors(void **state) {
    char *out;
    int st;
    (void)state;
    out = tu_run(&st, "'%s' vprof 2>&1", tu_frames_bin());
    assert_int_equal(st, 2);
    free(out);
    out = tu_run(&st, "'%s' vprof --top x '%s' 2>&1", tu_frames_bin(),
                 tu_shared("vectors/frames/r11_pintraces_like_x86.frames"));
    assert_int_equal(st, 2);
    free(out);
    out = tu_run(&st, "'%s' vprof /nonexistent/trace.frames 2>&1", tu_frames_bin());
    assert_int_equal(st, 1);
    assert_non_null(strstr(out, "frames vprof: "));
    free(out);
    out = tu_run(&st, "'%s' vprof --help", tu_frames_bin());
    assert_int_equal(st, 0);
    assert_non_null(strstr(out, "usage: frames vprof"));
    free(out);
}

/* ---- the profilers on a recorded program with known waste in named functions */

#ifdef TU_RECORD_BUILT
static const char waste_c[] =
    "#include <emmintrin.h>\n"
    "#include <setjmp.h>\n"
    "#include <stdlib.h>\n"
    "volatile long zeros[4];\n"
    "volatile long cell = 7;\n"
    "volatile long sink;\n"
    "volatile double dcell = 1.0;\n"
    "static const double close_values[4] = {1.000000001, 1.000000002, 1.000000003, 1.000000004};\n"
    "jmp_buf env;\n"
    "long izeros[2];\n"
    "float fzeros[4];\n"
    "volatile double dmix[2] = {0.0, 2.0};\n"
    "volatile __m128i isink;\n"
    "volatile __m128 fsink;\n"
    "volatile double dsink;\n"
    "#define NI __attribute__((noinline))\n"
    "NI void load_zeros(void) { for (int i = 0; i < 10; i++) sink = zeros[1]; }\n"
    "NI void store_same(void) { for (int i = 0; i < 5; i++) cell = 7; }\n"
    "NI void dead(void) { cell = 1; cell = 2; }\n"
    "NI void store_close(void) { for (int i = 0; i < 4; i++) dcell = close_values[i]; }\n"
    "NI void jumper(int d) { if (d) jumper(d - 1); else longjmp(env, 1); }\n"
    "NI void after_jump(void) { for (int i = 0; i < 3; i++) sink = zeros[2]; }\n"
    "NI void outer(void) { load_zeros(); }\n"
    "NI long *make_block(void) { return calloc(8, sizeof(long)); }\n"
    "NI void use_block(volatile long *p) { for (int i = 0; i < 6; i++) sink = p[3]; }\n"
    "NI void stack_zeros(void) { volatile long l[2] = {0, 0}; for (int i = 0; i < 4; i++) sink = l[1]; }\n"
    "NI void vec_int_zeros(void) { isink = _mm_loadu_si128((const __m128i *)izeros); }\n"
    "NI void vec_float_zeros(void) { fsink = _mm_loadu_ps(fzeros); }\n"
    "NI double get_double(int i) { return dmix[i]; }\n"
    "NI void double_mix(void) { for (int i = 0; i < 4; i++) dsink = get_double(i & 1); }\n"
    "int main(void) {\n"
    "    outer(); store_same(); dead(); store_close();\n"
    "    if (!setjmp(env)) jumper(3);\n"
    "    after_jump();\n"
    "    long *b = make_block(); use_block(b); free(b);\n"
    "    stack_zeros();\n"
    "    vec_int_zeros(); vec_float_zeros(); double_mix();\n"
    "    return 0;\n"
    "}\n";

static char waste_dir[512];

/* Sums over the JSON entries whose first context's innermost function is `first` (NULL:
   any) and whose last context's is `last` and contains `via` (NULL: any). */
typedef struct sums {
    uint64_t count, bytes;
    int entries;
} sums;

/* The first needle in [from, end), or NULL. The walks below search with it, never with
   strstr: ASan's strstr measures the whole rest of the report at every call, which made
   the walk of a 750-entry report quadratic (minutes). */
static const char *find_in(const char *from, const char *end, const char *needle) {
    size_t n = strlen(needle);
    for (; from + n <= end; from++)
        if (*from == *needle && !memcmp(from, needle, n)) return from;
    return NULL;
}

/* The innermost "function" of the call path that ends before `end`. */
static void innermost(const char *from, const char *end, char *out, size_t cap) {
    const char *p = from, *q, *best = NULL;
    out[0] = 0;
    while ((q = find_in(p, end, "{\"function\":\"")) != NULL) {
        best = q + 13;
        p = best;
    }
    if (best) {
        size_t n = strcspn(best, "\"");
        snprintf(out, cap, "%.*s", (int)(n < cap - 1 ? n : cap - 1), best);
    }
}

static sums sum_entries(const char *json, const char *first, const char *last, const char *via) {
    sums s = {0, 0, 0};
    const char *e = strstr(json, "\"entries\":["), *end = json + strlen(json);
    assert_non_null(e);
    while ((e = find_in(e, end, "{\"contexts\":[")) != NULL) {
        const char *cend = find_in(e, end, "],\"count\":"), *split;
        char f1[128], f2[128];
        unsigned long long count = 0, bytes = 0;
        assert_non_null(cend);
        split = find_in(e, cend, "],[");
        innermost(e, split ? split : cend, f1, sizeof f1);
        innermost(split ? split : e, cend, f2, sizeof f2);
        {   /* not sscanf: glibc's measures the rest of the report at every call */
            char *q;
            count = strtoull(cend + 10, &q, 10);
            assert_int_equal(strncmp(q, ",\"bytes\":", 9), 0);
            bytes = strtoull(q + 9, NULL, 10);
        }
        if ((!first || !strcmp(f1, first)) && !strcmp(f2, last) &&
            (!via || find_in(split ? split : e, cend, via))) {
            s.count += count;
            s.bytes += bytes;
            s.entries++;
        }
        e = cend;
    }
    return s;
}

/* A copy of the first entry whose last call path's innermost function is fn, or NULL. */
static char *entry_of(const char *json, const char *fn) {
    const char *e = strstr(json, "\"entries\":["), *end = json + strlen(json);
    assert_non_null(e);
    while ((e = find_in(e, end, "{\"contexts\":[")) != NULL) {
        const char *cend = find_in(e, end, "],\"count\":"), *next, *split;
        char f[128];
        assert_non_null(cend);
        split = find_in(e, cend, "],[");
        innermost(split ? split : e, cend, f, sizeof f);
        next = find_in(cend, end, "{\"contexts\":[");
        if (!next) next = end;
        if (!strcmp(f, fn)) {
            char *out = (char *)malloc((size_t)(next - e) + 1);
            assert_non_null(out);
            memcpy(out, e, (size_t)(next - e));
            out[next - e] = 0;
            return out;
        }
        e = cend;
    }
    return NULL;
}

static char *profile_json(const char *profiler, const char *opts) {
    return tu_run_ok("frames vprof --profiler", "'%s' vprof %s/w.frames --profiler %s %s --top 100000 --json",
                     tu_frames_bin(), waste_dir, profiler, opts);
}

static void expect(const char *json, const char *first, const char *last, const char *via,
                   uint64_t count, uint64_t bytes) {
    sums s = sum_entries(json, first, last, via);
    if (s.count != count || s.bytes != bytes)
        print_error("%s -> %s: count %llu bytes %llu, expected %llu %llu\n", first ? first : "*",
                    last, (unsigned long long)s.count, (unsigned long long)s.bytes,
                    (unsigned long long)count, (unsigned long long)bytes);
    assert_int_equal(s.count, count);
    assert_int_equal(s.bytes, bytes);
}

static int waste_setup(void **state) {
    int st;
    char *out;
    (void)state;
    if (!tu_vg_tool_built()) return 0;
    snprintf(waste_dir, sizeof waste_dir, "%s/frames-vprof-XXXXXX", tu_tmpdir());
    if (!mkdtemp(waste_dir)) return -1;
    {
        char src[600];
        snprintf(src, sizeof src, "%s/w.c", waste_dir);
        if (tu_write_file(src, waste_c, sizeof waste_c - 1)) return -1;
    }
    out = tu_run(&st, "cc -O1 -g -o %s/w %s/w.c 2>&1 && ulimit -c 0 && '%s' record -o %s/w.frames -- %s/w >/dev/null 2>&1",
                 waste_dir, waste_dir, tu_frames_bin(), waste_dir, waste_dir);
    free(out);
    return st == 0 ? 0 : -1;
}

static int waste_teardown(void **state) {
    int st;
    (void)state;
    if (waste_dir[0]) free(tu_run(&st, "rm -rf '%s'", waste_dir));
    return 0;
}

static void test_profilers_recorded(void **state) {
    char *j;
    (void)state;
    if (!waste_dir[0]) skip();
    /* 10 loads of zeros[1], 8 bytes each, in main > outer > load_zeros */
    j = profile_json("zero-loads", "");
    expect(j, NULL, "load_zeros", "\"outer\"", 10, 80);
    expect(j, NULL, "after_jump", NULL, 3, 24);
    /* after the longjmp, after_jump runs under main, not under the abandoned jumper frames */
    assert_int_equal(sum_entries(j, NULL, "after_jump", "\"jumper\"").entries, 0);
    assert_non_null(strstr(j, "\"always_zero_bytes\":\"00000000\""));
    /* element types from the opcodes (Intel SDM): movdqu (F3 0F 6F) loads integers,
       16 bytes of them INT64 lanes; movups (0F 10) four floats; movsd (F2 0F 10) a
       double. The float view: 0.0 and 2.0 (0x4000000000000000) loaded by one
       instruction have sign and mantissa always zero, the exponent not */
    {
        static const struct { const char *fn, *type, *view; uint64_t count, bytes; } want[] = {
            {"vec_int_zeros", "int64", NULL, 1, 16},
            {"vec_float_zeros", "float32", "{\"sign\":true,\"exponent\":true,\"mantissa\":true}", 1, 16},
            {"get_double", "float64", "{\"sign\":true,\"exponent\":false,\"mantissa\":true}", 2, 16},
        };
        size_t i;
        for (i = 0; i < sizeof want / sizeof want[0]; i++) {
            char *e = entry_of(j, want[i].fn), tb[64];
            const char *v;
            if (!e) fail_msg("no zero-loads entry in %s", want[i].fn);
            expect(j, NULL, want[i].fn, NULL, want[i].count, want[i].bytes);
            snprintf(tb, sizeof tb, "\"type\":\"%s\"", want[i].type);
            if (!strstr(e, tb)) fail_msg("%s: not %s in %s", want[i].fn, tb, e);
            v = strstr(e, "\"float_always_zero\":");
            if (!want[i].view) assert_null(v);
            else if (!v || strncmp(v + 20, want[i].view, strlen(want[i].view)))
                fail_msg("%s: float view %s, expected %s", want[i].fn, v ? v : "none", want[i].view);
            free(e);
        }
    }
    free(j);
    /* each load after the first of the same cell repeats its value */
    j = profile_json("redundant-loads", "");
    expect(j, "load_zeros", "load_zeros", NULL, 9, 72);
    expect(j, "after_jump", "after_jump", NULL, 2, 16);
    free(j);
    /* sink = 0 over 0 (10), cell = 7 over 7 (5); the doubles only within a delta */
    j = profile_json("silent-stores", "");
    expect(j, NULL, "load_zeros", NULL, 10, 80);
    expect(j, NULL, "store_same", NULL, 5, 40);
    expect(j, NULL, "store_close", NULL, 0, 0);
    free(j);
    j = profile_json("silent-stores", "--approx 1e-6");
    expect(j, NULL, "store_close", NULL, 4, 32);
    free(j);
    j = profile_json("silent-stores", "--approx 1e-10");
    expect(j, NULL, "store_close", NULL, 0, 0);
    free(j);
    /* writes overwritten unread: sink in load_zeros (9) and by after_jump (1 + 2); cell in
       store_same (4), then by dead (1 + 1); dcell (3) */
    j = profile_json("dead-stores", "");
    expect(j, "load_zeros", "load_zeros", NULL, 9, 72);
    expect(j, "load_zeros", "after_jump", NULL, 1, 8);
    expect(j, "after_jump", "after_jump", NULL, 2, 16);
    expect(j, "store_same", "store_same", NULL, 4, 32);
    expect(j, "store_same", "dead", NULL, 1, 8);
    expect(j, "dead", "dead", NULL, 1, 8);
    expect(j, "store_close", "store_close", NULL, 3, 24);
    assert_null(strstr(j, "\"unwound_frames\":0,"));
    free(j);
    /* online: the same program profiled without a trace gives the same entries for the
       program's own functions and the same instruction count (its "trace" member is null
       instead of the file). The whole JSON is not compared: two runs of one program
       differ in the loader's start-up (AT_RANDOM's canary bytes decide a strlen's reads,
       so a dead store there is 7 bytes in one run and 8 in the next) */
    {
        static const char *const profs[] = {"zero-loads", "dead-stores", "silent-stores"};
        static const char *const fns[] = {"load_zeros", "store_same", "dead", "store_close",
                                          "after_jump", "use_block", "main"};
        size_t k, i;
        for (k = 0; k < sizeof profs / sizeof profs[0]; k++) {
            char *off = profile_json(profs[k], ""), *on;
            const char *oi, *ni;
            on = tu_run_ok("frames vprof online",
                           "'%s' vprof --profiler %s --top 100000 --json -- %s/w 2>/dev/null",
                           tu_frames_bin(), profs[k], waste_dir);
            assert_true(!strncmp(on, "{\"trace\":null,", 14));
            oi = strstr(off, "\"instructions\":");
            ni = strstr(on, "\"instructions\":");
            assert_non_null(oi);
            assert_non_null(ni);
            assert_int_equal(strtoull(oi + 15, NULL, 10), strtoull(ni + 15, NULL, 10));
            for (i = 0; i < sizeof fns / sizeof fns[0]; i++) {
                sums a = sum_entries(off, NULL, fns[i], NULL), b = sum_entries(on, NULL, fns[i], NULL);
                if (a.count != b.count || a.bytes != b.bytes || a.entries != b.entries)
                    fail_msg("%s in %s: offline %llu/%llu, online %llu/%llu", profs[k], fns[i],
                             (unsigned long long)a.count, (unsigned long long)a.bytes,
                             (unsigned long long)b.count, (unsigned long long)b.bytes);
            }
            free(on);
            free(off);
        }
    }
    /* a tiny shadow memory: counts become lower bounds, and the report says so */
    {
        char *out = tu_run_ok("frames vprof capped", "'%s' vprof %s/w.frames --profiler dead-stores --max-addresses 4",
                              tu_frames_bin(), waste_dir);
        assert_non_null(strstr(out, "counts are lower bounds"));
        free(out);
        /* register writes add to the memory ones, never take any away */
        out = profile_json("silent-stores", "--registers");
        expect(out, NULL, "store_same", NULL, 5, 40);
        assert_true(sum_entries(out, NULL, "load_zeros", NULL).count >= 10);
        free(out);
    }
    /* --data: the loads of the calloc'd block are attributed to it, by the call path
       that allocated it; the loads of the global zeros[] to that symbol, with its size */
    j = profile_json("zero-loads", "--data");
    expect(j, NULL, "use_block", NULL, 6, 48);
    {
        const char *e = strstr(j, "\"function\":\"use_block\"");
        const char *obj = e ? strstr(e, "\"object\":") : NULL;
        char f[128];
        assert_non_null(obj);
        assert_true(!strncmp(obj, "\"object\":{\"kind\":\"heap\",\"allocation\":[", 38));
        innermost(obj, strstr(obj, "]}"), f, sizeof f);
        assert_string_equal(f, "make_block");
        e = strstr(j, "\"function\":\"load_zeros\"");
        assert_non_null(e);
        obj = "\"object\":{\"kind\":\"global\",\"symbol\":\"zeros\",\"size\":32}";
        assert_true(!strncmp(strstr(e, "\"object\":"), obj, strlen(obj)));
        /* a local array's loads: the stack */
        expect(j, NULL, "stack_zeros", NULL, 4, 32);
        e = strstr(j, "\"function\":\"stack_zeros\"");
        assert_non_null(e);
        obj = "\"object\":{\"kind\":\"stack\"}";
        assert_true(!strncmp(strstr(e, "\"object\":"), obj, strlen(obj)));
    }
    free(j);
    /* every window sampled = no sampling */
    {
        char *a = profile_json("zero-loads", ""), *b = profile_json("zero-loads", "--sample 5/5");
        assert_string_equal(a, b);
        free(a);
        free(b);
        b = profile_json("zero-loads", "--sample 1/1000000");
        expect(b, NULL, "load_zeros", NULL, 0, 0);
        free(b);
    }
}

/* --threads: the zero loads of work() in two threads, 3 in main's and 5 in the other's,
   are two entries that name their threads; without it, one entry of 8. */
static const char threads_c[] =
    "#include <pthread.h>\n"
    "volatile long zeros[4];\n"
    "volatile long sink;\n"
    "__attribute__((noinline)) void work(int n) { for (int i = 0; i < n; i++) sink = zeros[1]; }\n"
    "static void *run(void *a) { (void)a; work(5); return 0; }\n"
    "int main(void) {\n"
    "    pthread_t t;\n"
    "    work(3);\n"
    "    return pthread_create(&t, 0, run, 0) || pthread_join(t, 0);\n"
    "}\n";

static void test_profiler_threads(void **state) {
    char src[600], *j, *e;
    unsigned long long count, thread, threads[2] = {0, 0}, counts[2] = {0, 0};
    int st, n = 0;
    (void)state;
    if (!waste_dir[0]) skip();
    snprintf(src, sizeof src, "%s/t.c", waste_dir);
    assert_int_equal(tu_write_file(src, threads_c, sizeof threads_c - 1), 0);
    free(tu_run(&st, "cc -O1 -g -pthread -o %s/t %s 2>&1 && '%s' record -o %s/t.frames -- %s/t >/dev/null 2>&1",
                waste_dir, src, tu_frames_bin(), waste_dir, waste_dir));
    assert_int_equal(st, 0);
    j = tu_run_ok("frames vprof --threads", "'%s' vprof %s/t.frames --profiler zero-loads --threads --top 100000 --json",
                  tu_frames_bin(), waste_dir);
    for (e = strstr(j, "{\"contexts\":["); e; e = strstr(e + 1, "{\"contexts\":[")) {
        const char *cend = strstr(e, "],\"count\":");
        char f[128];
        assert_non_null(cend);
        innermost(e, cend, f, sizeof f);
        if (strcmp(f, "work")) continue;
        assert_int_equal(sscanf(cend, "],\"count\":%llu", &count), 1);
        assert_non_null(strstr(cend, "\"thread\":"));
        assert_int_equal(sscanf(strstr(cend, "\"thread\":"), "\"thread\":%llu", &thread), 1);
        assert_true(n < 2);
        threads[n] = thread;
        counts[n++] = count;
    }
    assert_int_equal(n, 2);
    assert_true(threads[0] != threads[1]);
    assert_int_equal(counts[0] + counts[1], 8);
    assert_true((counts[0] == 5 && counts[1] == 3) || (counts[0] == 3 && counts[1] == 5));
    free(j);
    j = tu_run_ok("frames vprof", "'%s' vprof %s/t.frames --profiler zero-loads --top 100000 --json",
                  tu_frames_bin(), waste_dir);
    assert_null(strstr(j, "\"thread\":"));
    expect(j, NULL, "work", NULL, 8, 64);
    free(j);
}

/* Offline = online, the whole JSON but "trace": a program whose every run executes the
   same instructions (static, no C library: no loader, no start-up that reads random
   bytes) profiled from its recording and live, by every profiler, with --data. */
static const char det_c[] =
    "volatile long zeros[4];\n"
    "volatile long cell = 7;\n"
    "volatile long sink;\n"
    "#define NI __attribute__((noinline))\n"
    "NI void load_zeros(void) { for (int i = 0; i < 10; i++) sink = zeros[1]; }\n"
    "NI void store_same(void) { for (int i = 0; i < 5; i++) cell = 7; }\n"
    "NI void dead(void) { cell = 1; cell = 2; }\n"
    "void _start(void) {\n"
    "    load_zeros(); store_same(); dead();\n"
    "    __asm__ volatile(\"mov $60, %%eax; xor %%edi, %%edi; syscall\" ::: \"memory\");\n"
    "}\n";

static void test_offline_equals_online(void **state) {
    static const char *const profs[] = {"zero-loads", "redundant-loads", "silent-stores",
                                        "dead-stores", "values"};
    char src[600], *out;
    size_t k;
    int st;
    (void)state;
    if (!waste_dir[0]) skip();
    snprintf(src, sizeof src, "%s/det.c", waste_dir);
    assert_int_equal(tu_write_file(src, det_c, sizeof det_c - 1), 0);
    out = tu_run(&st, "cc -O1 -g -static -nostdlib -fno-stack-protector -fno-pie -no-pie -o %s/det %s 2>&1 && "
                 "'%s' record -o %s/det.frames -- %s/det >/dev/null 2>&1",
                 waste_dir, src, tu_frames_bin(), waste_dir, waste_dir);
    free(out);
    if (st) skip();   /* no static linking here */
    for (k = 0; k < sizeof profs / sizeof profs[0]; k++) {
        char *off = tu_run_ok("frames vprof", "'%s' vprof %s/det.frames --profiler %s --data --json",
                              tu_frames_bin(), waste_dir, profs[k]);
        char *on = tu_run_ok("frames vprof online", "'%s' vprof --profiler %s --data --json -- %s/det",
                             tu_frames_bin(), profs[k], waste_dir);
        const char *rest = strstr(off, ",\"profiler\":");
        assert_true(!strncmp(off, "{\"trace\":\"", 10));
        assert_true(!strncmp(on, "{\"trace\":null,\"profiler\":", 25));
        assert_non_null(rest);
        if (strcmp(rest, on + 13)) fail_msg("%s: offline %s\nonline %s", profs[k], off, on);
        if (k == 0) expect(on, NULL, "load_zeros", NULL, 10, 80);
        if (k == 3) expect(on, "store_same", "store_same", NULL, 4, 32);
        free(off);
        free(on);
    }
}
#else
static void test_offline_equals_online(void **state) {
    (void)state;
    skip();
}
static void test_profiler_threads(void **state) {
    (void)state;
    skip();
}
static int waste_setup(void **state) {
    (void)state;
    return 0;
}
static int waste_teardown(void **state) {
    (void)state;
    return 0;
}
static void test_profilers_recorded(void **state) {
    (void)state;
    skip();
}
#endif

/* A huge address space: 10000 addresses spread over all 2^64 bytes, each stored twice.
   Memory stays within the caps (64 granules: 8 pages of the memory model, 64 shadow
   cells), the accesses over them are counted, and what is counted is exact for the
   addresses that fit: the first 8 pages' stores are checked, the first 64 addresses'
   second stores kill 8 bytes each. */
static void test_huge_address_space(void **state) {
    frames_vprof_options o;
    frames_vprof_builtin_options bo;
    frames_vprof *vp;
    frames_vprof_builtin *b;
    frames_error err;
    const frames_vprof_stats *s;
    const frames_vprof_builtin_stats *bs;
    const uint8_t v[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    uint64_t i, x = 0;
    tframe t;
    frames_frame f;
    (void)state;
    frames_vprof_options_default(&o);
    o.max_addresses = 64;
    frames_vprof_builtin_options_default(&bo);
    bo.max_addresses = 64;
    assert_int_equal(frames_vprof_open(&vp, &o, &err), FRAMES_OK);
    assert_int_equal(frames_vprof_builtin_open(&b, vp, "dead-stores", &bo, &err), FRAMES_OK);
    for (i = 0; i < 10000; i++) {
        uint64_t z = (x += 0x9e3779b97f4a7c15ull);   /* splitmix64: distinct, spread */
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        z ^= z >> 31;
        tf_store(&t, 0x40, z & ~(uint64_t)15, v, 8);
        to_frame(&t, &f);
        assert_int_equal(frames_vprof_add_frame(vp, &f), FRAMES_OK);
        assert_int_equal(frames_vprof_add_frame(vp, &f), FRAMES_OK);
    }
    s = frames_vprof_stats_get(vp);
    bs = frames_vprof_builtin_stats_get(b);
    assert_int_equal(s->stores, 20000);
    assert_true(s->address_cap_hit);
    assert_int_equal(s->content_granules, 8 * (FRAMES_REPLAY_MEM_PAGE / 8));
    assert_int_equal(s->untracked_accesses, 2 * (10000 - 8));
    assert_int_equal(s->checked_stores, 8);   /* the second store of the first 8 */
    assert_int_equal(s->silent_stores, 8);
    assert_int_equal(bs->total_bytes, 64 * 8);
    assert_int_equal(bs->dropped, 2 * (10000 - 64));
    frames_vprof_builtin_close(b);
    frames_vprof_close(vp);
}

/* A trace without calls and without values: empty profiles and a note, no failure. */
static void test_profiler_no_values(void **state) {
    char *out;
    int st;
    (void)state;
    out = tu_run(&st, "'%s' vprof '%s' --profiler zero-loads",
                 tu_frames_bin(), tu_shared("vectors/frames/r10_default_m_n10001.frames"));
    assert_int_equal(st, 0);
    assert_non_null(strstr(out, "no values to profile"));
    assert_non_null(strstr(out, "no calls seen"));
    free(out);
    out = tu_run(&st, "'%s' vprof '%s' --profiler nonsense 2>&1",
                 tu_frames_bin(), tu_shared("vectors/frames/r10_default_m_n10001.frames"));
    assert_int_not_equal(st, 0);
    assert_non_null(strstr(out, "frames vprof: "));
    assert_non_null(strstr(out, "nonsense"));
    free(out);
}

/* ---- the call stack of frames_replay.h: instruction classes (encodings from the
   architecture manuals) and the unwinding rules on a hand-made walk */

static int classify(uint32_t arch, uint64_t mach, const char *bytes, size_t n, const char *mode) {
    frames_std_frame sf;
    memset(&sf, 0, sizeof sf);
    sf.rawbytes = frames_bytes_of(bytes, n);
    if (mode) {
        sf.has_mode = 1;
        sf.mode = frames_bytes_of(mode, strlen(mode));
    }
    return frames_replay_stack_classify(arch, mach, &sf);
}

static void test_stack_classify(void **state) {
    (void)state;
    /* x86-64: call rel32, call *%rax, call *(%rax) with REX, ret, rep ret, jmp *%rax, nop */
    assert_int_equal(classify(FRAMES_ARCH_I386, 64, "\xe8\0\0\0\0", 5, NULL), 1);
    assert_int_equal(classify(FRAMES_ARCH_I386, 64, "\xff\xd0", 2, NULL), 1);
    assert_int_equal(classify(FRAMES_ARCH_I386, 64, "\x41\xff\x10", 3, NULL), 1);
    assert_int_equal(classify(FRAMES_ARCH_I386, 64, "\xc3", 1, NULL), -1);
    assert_int_equal(classify(FRAMES_ARCH_I386, 64, "\xf3\xc3", 2, NULL), -1);
    assert_int_equal(classify(FRAMES_ARCH_I386, 64, "\xff\xe0", 2, NULL), 0);
    assert_int_equal(classify(FRAMES_ARCH_I386, 64, "\x90", 1, NULL), 0);
    /* AArch64: bl, blr x1, ret, b (not a call) */
    assert_int_equal(classify(FRAMES_ARCH_AARCH64, 0, "\x10\x00\x00\x94", 4, NULL), 1);
    assert_int_equal(classify(FRAMES_ARCH_AARCH64, 0, "\x20\x00\x3f\xd6", 4, NULL), 1);
    assert_int_equal(classify(FRAMES_ARCH_AARCH64, 0, "\xc0\x03\x5f\xd6", 4, NULL), -1);
    assert_int_equal(classify(FRAMES_ARCH_AARCH64, 0, "\x10\x00\x00\x14", 4, NULL), 0);
    /* ARM: bl, blx r3, bx lr, pop {r4, pc}; Thumb: bx lr, pop {r7, pc}, bl, blx r3 */
    assert_int_equal(classify(FRAMES_ARCH_ARM, 0, "\x10\x00\x00\xeb", 4, NULL), 1);
    assert_int_equal(classify(FRAMES_ARCH_ARM, 0, "\x33\xff\x2f\xe1", 4, NULL), 1);
    assert_int_equal(classify(FRAMES_ARCH_ARM, 0, "\x1e\xff\x2f\xe1", 4, NULL), -1);
    assert_int_equal(classify(FRAMES_ARCH_ARM, 0, "\x10\x80\xbd\xe8", 4, NULL), -1);
    assert_int_equal(classify(FRAMES_ARCH_ARM, 0, "\x70\x47", 2, NULL), -1);
    assert_int_equal(classify(FRAMES_ARCH_ARM, 0, "\x80\xbd", 2, NULL), -1);
    assert_int_equal(classify(FRAMES_ARCH_ARM, 0, "\x00\xf0\x00\xf8", 4, "arm:t32"), 1);
    assert_int_equal(classify(FRAMES_ARCH_ARM, 0, "\x98\x47", 2, NULL), 1);
}

static void stack_step(frames_replay_stack *s, uint64_t pc, const char *bytes, size_t n) {
    frames_frame f = tu_std_frame(pc, 1, bytes, n);
    assert_int_equal(frames_replay_stack_apply_frame(s, &f), FRAMES_OK);
}

static void test_stack_rules(void **state) {
    frames_replay_stack *s;
    frames_replay_stack_options o;
    frames_replay_call *c;
    size_t d;
    (void)state;
    frames_replay_stack_options_default(&o);
    o.max_depth = 2;
    assert_int_equal(frames_replay_stack_open(&s, FRAMES_ARCH_AARCH64, 0, &o, NULL), FRAMES_OK);
    stack_step(s, 0x1000, "\x10\x00\x00\x94", 4);   /* bl 0x2000 */
    stack_step(s, 0x2000, "\x10\x00\x00\x94", 4);   /* bl 0x3000 */
    stack_step(s, 0x3000, "\x10\x00\x00\x94", 4);   /* bl 0x4000: beyond the depth */
    stack_step(s, 0x4000, "\xc0\x03\x5f\xd6", 4);   /* ret from the deep call */
    stack_step(s, 0x3004, "\x1f\x20\x03\xd5", 4);   /* nop */
    c = frames_replay_stack_get(s, 1, &d);
    assert_int_equal(d, 2);
    assert_int_equal(c[0].site, 0x1000);
    assert_int_equal(c[0].entry, 0x2000);
    assert_int_equal(c[1].site, 0x2000);
    assert_int_equal(c[1].ret, 0x2004);
    /* a longjmp-like jump back into the outermost function, then its caller returns:
       the frame it matches is popped with the one above it */
    stack_step(s, 0x3008, "\xc0\x03\x5f\xd6", 4);   /* ret to 0x1004 (skips a frame) */
    stack_step(s, 0x1004, "\x1f\x20\x03\xd5", 4);
    frames_replay_stack_get(s, 1, &d);
    assert_int_equal(d, 0);
    assert_int_equal(frames_replay_stack_stats_get(s)->unwound, 1);
    assert_int_equal(frames_replay_stack_stats_get(s)->deep_calls, 1);
    /* a return that matches nothing changes nothing and is counted */
    stack_step(s, 0x1008, "\xc0\x03\x5f\xd6", 4);
    stack_step(s, 0x9000, "\x1f\x20\x03\xd5", 4);
    assert_int_equal(frames_replay_stack_stats_get(s)->unmatched_returns, 1);
    /* a call whose next instruction is its return address was not taken */
    stack_step(s, 0x9004, "\x10\x00\x00\x94", 4);
    stack_step(s, 0x9008, "\x1f\x20\x03\xd5", 4);
    frames_replay_stack_get(s, 1, &d);
    assert_int_equal(d, 0);
    frames_replay_stack_close(s);
}

/* A tail call (a plain branch out of a callee) is not a call: the callee of the tail call
   runs in the frame of the function that branched, and its return pops that frame, with
   nothing unwound or unmatched (frames_replay.h, "The call stack"). */
static void test_stack_tail_call(void **state) {
    frames_replay_stack *s;
    frames_replay_call *c;
    size_t d;
    (void)state;
    assert_int_equal(frames_replay_stack_open(&s, FRAMES_ARCH_AARCH64, 0, NULL, NULL), FRAMES_OK);
    stack_step(s, 0x1000, "\x10\x00\x00\x94", 4);   /* bl 0x2000 */
    stack_step(s, 0x2000, "\x00\x0c\x00\x14", 4);   /* b 0x5000: the tail call */
    stack_step(s, 0x5000, "\x1f\x20\x03\xd5", 4);   /* nop in the tail-called function */
    c = frames_replay_stack_get(s, 1, &d);
    assert_int_equal(d, 1);
    assert_int_equal(c[0].site, 0x1000);
    assert_int_equal(c[0].entry, 0x2000);
    assert_int_equal(c[0].ret, 0x1004);
    stack_step(s, 0x5004, "\xc0\x03\x5f\xd6", 4);   /* its ret goes back to the first caller */
    stack_step(s, 0x1004, "\x1f\x20\x03\xd5", 4);
    frames_replay_stack_get(s, 1, &d);
    assert_int_equal(d, 0);
    assert_int_equal(frames_replay_stack_stats_get(s)->unwound, 0);
    assert_int_equal(frames_replay_stack_stats_get(s)->unmatched_returns, 0);
    frames_replay_stack_close(s);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hand_trace),
        cmocka_unit_test(test_cli_hand_trace),
        cmocka_unit_test(test_caps),
        cmocka_unit_test(test_bytes_and_edges),
        cmocka_unit_test(test_replay_memory_alone),
        cmocka_unit_test(test_vector_r11),
        cmocka_unit_test(test_vector_r10),
        cmocka_unit_test(test_cli_errors),
        cmocka_unit_test(test_profiler_no_values),
        cmocka_unit_test(test_huge_address_space),
        cmocka_unit_test(test_stack_classify),
        cmocka_unit_test(test_stack_rules),
        cmocka_unit_test(test_stack_tail_call),
        cmocka_unit_test(test_profilers_recorded),
        cmocka_unit_test(test_profiler_threads),
        cmocka_unit_test(test_offline_equals_online),
    };
    return cmocka_run_group_tests(tests, waste_setup, waste_teardown);
}
