/* test_interop.c - drcov, Tenet, stat, slice, split, JSONL rows, installation.
   Expected outputs are derived by hand from the reference dumps (the .txt files next to
   the vectors in ../shared/vectors/frames); the derivations are in the comments. */
#include "testutil.h"

#include <sys/stat.h>

#include "frames.h"
#include "frames_interop.h"

/* ---------------------------------------------------------------------------------------
   Helpers
   --------------------------------------------------------------------------------------- */


static const char *vec(const char *name) {
    static char bufs[4][512];
    static int next;
    char *b = bufs[next++ & 3];
    char rel[256];
    snprintf(rel, sizeof rel, "vectors/frames/%s.frames", name);
    snprintf(b, sizeof bufs[0], "%s", tu_shared(rel));
    return b;
}

static frames_reader *open_reader(const char *path) {
    frames_reader *r = NULL;
    frames_error err;
    int rc = frames_reader_open_path(&r, path, NULL, &err);
    if (rc < 0) fail_msg("open %s: %s", path, err.message);
    return r;
}

/* drcov of a trace through the library; modules "NAME:LO-HI" (NULL-terminated). */
static tu_text drcov_of(const char *path, const char *const *mods, frames_cov_info *info) {
    frames_reader *r = open_reader(path);
    frames_cov *cov;
    frames_frame f;
    frames_error err;
    tu_text mb = {0};
    int rc;
    assert_int_equal(frames_cov_open(&cov, NULL, &err), FRAMES_OK);
    for (; mods && *mods; mods++) {
        const char *colon = strrchr(*mods, ':');
        unsigned long long lo, hi;
        assert_non_null(colon);
        assert_int_equal(sscanf(colon + 1, "%llx-%llx", &lo, &hi), 2);
        assert_int_equal(frames_cov_add_module(cov, *mods, (size_t)(colon - *mods), lo, hi), 0);
    }
    while ((rc = frames_reader_next(r, &f)) > 0) assert_int_equal(frames_cov_add_frame(cov, &f), 0);
    assert_int_equal(rc, 0);
    assert_int_equal(frames_cov_finish(cov), 0);
    assert_int_equal(frames_cov_write_drcov(cov, tu_text_out, &mb), 0);
    if (info) frames_cov_info_get(cov, info);
    frames_cov_close(cov);
    frames_reader_close(r);
    return mb;
}

/* A drcov file taken apart by the layout rules, independently of the writer. */
typedef struct drcov_file {
    unsigned nmods;
    unsigned long long base[64], end[64];
    char path[64][256];
    unsigned long long nbbs;
    const unsigned char *bbs;
} drcov_file;

static const char *next_line(const char *p, const char *end, char *line, size_t cap) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    size_t n;
    assert_non_null(nl);
    n = (size_t)(nl - p);
    assert_true(n < cap);
    memcpy(line, p, n);
    line[n] = 0;
    return nl + 1;
}

static void parse_drcov(const char *data, size_t len, drcov_file *d) {
    const char *p = data, *end = data + len;
    char line[512];
    unsigned i;
    int used;
    memset(d, 0, sizeof *d);
    p = next_line(p, end, line, sizeof line);
    assert_string_equal(line, "DRCOV VERSION: 2");
    p = next_line(p, end, line, sizeof line);
    assert_string_equal(line, "DRCOV FLAVOR: drcov");
    p = next_line(p, end, line, sizeof line);
    assert_int_equal(sscanf(line, "Module Table: version 2, count %u%n", &d->nmods, &used), 1);
    assert_int_equal((size_t)used, strlen(line));
    assert_true(d->nmods <= 64);
    p = next_line(p, end, line, sizeof line);
    assert_string_equal(line, "Columns: id, base, end, entry, checksum, timestamp, path");
    for (i = 0; i < d->nmods; i++) {
        unsigned id, ck, ts;
        unsigned long long entry;
        char *fields[8];
        int nf = 0;
        char *s = line, *sep;
        p = next_line(p, end, line, sizeof line);
        /* seven ", "-separated columns (Lighthouse splits on ", " and takes the last) */
        while (nf < 7 && (sep = strstr(s, ", ")) != NULL && nf < 6) {
            *sep = 0;
            fields[nf++] = s;
            s = sep + 2;
        }
        fields[nf++] = s;
        assert_int_equal(nf, 7);
        assert_int_equal(sscanf(fields[0], "%u", &id), 1);
        assert_int_equal(id, i);
        assert_int_equal(strlen(fields[1]), 18);
        assert_int_equal(strlen(fields[2]), 18);
        assert_int_equal(strlen(fields[3]), 18);
        assert_int_equal(strlen(fields[4]), 10);
        assert_int_equal(strlen(fields[5]), 10);
        assert_int_equal(sscanf(fields[1], "0x%llx", &d->base[i]), 1);
        assert_int_equal(sscanf(fields[2], "0x%llx", &d->end[i]), 1);
        assert_int_equal(sscanf(fields[3], "0x%llx", &entry), 1);
        assert_int_equal(sscanf(fields[4], "0x%x", &ck), 1);
        assert_int_equal(sscanf(fields[5], "0x%x", &ts), 1);
        assert_true(d->base[i] < d->end[i]);
        assert_true(strlen(fields[6]) > 0 && strlen(fields[6]) < sizeof d->path[0]);
        strcpy(d->path[i], fields[6]);
    }
    p = next_line(p, end, line, sizeof line);
    assert_int_equal(sscanf(line, "BB Table: %llu bbs%n", &d->nbbs, &used), 1);
    assert_int_equal((size_t)used, strlen(line));
    /* exactly nbbs 8-byte entries up to the end of the file */
    assert_int_equal((size_t)(end - p), d->nbbs * 8);
    d->bbs = (const unsigned char *)p;
}

static void bb_entry(const drcov_file *d, unsigned long long i, unsigned *off, unsigned *size,
                     unsigned *mod) {
    const unsigned char *e = d->bbs + 8 * i;
    *off = (unsigned)e[0] | (unsigned)e[1] << 8 | (unsigned)e[2] << 16 | (unsigned)e[3] << 24;
    *size = (unsigned)e[4] | (unsigned)e[5] << 8;
    *mod = (unsigned)e[6] | (unsigned)e[7] << 8;
}

/* Rules every table must obey: known module, non-empty, inside the module, unique, sorted. */
static void check_bb_rules(const drcov_file *d) {
    unsigned long long i;
    for (i = 0; i < d->nbbs; i++) {
        unsigned off, size, mod;
        bb_entry(d, i, &off, &size, &mod);
        assert_true(mod < d->nmods);
        assert_true(size > 0);
        assert_true(d->base[mod] + off < d->end[mod]);
        if (i) {
            unsigned po, ps, pm;
            bb_entry(d, i - 1, &po, &ps, &pm);
            assert_true(pm < mod || (pm == mod && (po < off || (po == off && ps < size))));
        }
    }
}

/* Synthetic traces: std frames (pc, tid, length, operands) and modload frames. */
typedef struct tw {
    frames_writer *w;
    const char *path;
} tw;

static tw tw_open(uint64_t arch, uint64_t machine, uint64_t m) {
    tw t;
    frames_writer_options o;
    frames_error err;
    frames_writer_options_default(&o);
    o.arch = arch;
    o.machine = machine;
    if (m) o.frames_per_toc = m;
    t.path = tu_tmp_path(".frames");
    assert_int_equal(frames_writer_open_path(&t.w, t.path, &o, NULL, &err), FRAMES_OK);
    return t;
}

static const uint8_t code[64] = {0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90,
                                 0x90, 0x90, 0x90, 0x90, 0x90, 0x90};

static void tw_insn_ops(tw *t, uint64_t pc, uint64_t tid, unsigned len, const frames_operand *pre,
                        uint32_t npre, const frames_operand *post, uint32_t npost) {
    frames_frame f;
    memset(&f, 0, sizeof f);
    f.kind = FRAMES_KIND_STD;
    f.std.address = pc;
    f.std.thread_id = tid;
    f.std.rawbytes = frames_bytes_of(code, len);
    f.std.pre = pre;
    f.std.npre = npre;
    f.std.post = post;
    f.std.npost = npost;
    f.std.has_post = post != NULL;
    assert_int_equal(frames_writer_add(t->w, &f), FRAMES_OK);
}

static void tw_insn(tw *t, uint64_t pc, uint64_t tid, unsigned len) {
    tw_insn_ops(t, pc, tid, len, NULL, 0, NULL, 0);
}

static void tw_modload(tw *t, const char *name, uint64_t lo, uint64_t hi) {
    frames_frame f = tu_modload_frame(name, lo, hi);
    assert_int_equal(frames_writer_add(t->w, &f), FRAMES_OK);
}

static const char *tw_close(tw *t) {
    assert_int_equal(frames_writer_close(t->w), FRAMES_OK);
    return t->path;
}

/* ---------------------------------------------------------------------------------------
   drcov
   --------------------------------------------------------------------------------------- */

/* r11: modload /bin/ls low 0x8048000 high 0x805ffff (inclusive -> end 0x8060000); std
   0x8048100 "\001\330" (2 bytes) then 0x8048102 "\213\003" (2 bytes), thread 1: one block at
   offset 0x100, 4 bytes, module 0. */
static const char r11_drcov_text[] =
    "DRCOV VERSION: 2\n"
    "DRCOV FLAVOR: drcov\n"
    "Module Table: version 2, count 1\n"
    "Columns: id, base, end, entry, checksum, timestamp, path\n"
    "  0, 0x0000000008048000, 0x0000000008060000, 0x0000000000000000, 0x00000000, 0x00000000, /bin/ls\n"
    "BB Table: 1 bbs\n";
static const unsigned char r11_drcov_entry[8] = {0x00, 0x01, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00};

static void test_drcov_r11_exact(void **state) {
    frames_cov_info info;
    tu_text mb = drcov_of(vec("r11_pintraces_like_x86"), NULL, &info);
    size_t tl = strlen(r11_drcov_text);
    (void)state;
    assert_int_equal(mb.n, tl + 8);
    assert_memory_equal(mb.s, r11_drcov_text, tl);
    assert_memory_equal(mb.s + tl, r11_drcov_entry, 8);
    assert_int_equal(info.instructions, 2);
    assert_int_equal(info.outside, 0);
    assert_int_equal(info.nmodules, 1);
    assert_int_equal(info.nblocks, 1);
    free(mb.s);
}

static void test_drcov_command_matches_library(void **state) {
    const char *out = tu_tmp_path(".drcov");
    size_t n;
    unsigned char *got;
    int st;
    char *o;
    (void)state;
    o = tu_run(&st, "'%s' drcov '%s' -o '%s' 2>&1", tu_frames_bin(), vec("r11_pintraces_like_x86"), out);
    assert_int_equal(st, 0);
    assert_string_equal(o, "");
    free(o);
    got = tu_read_file(out, &n);
    assert_non_null(got);
    assert_int_equal(n, strlen(r11_drcov_text) + 8);
    assert_memory_equal(got, r11_drcov_text, strlen(r11_drcov_text));
    assert_memory_equal(got + strlen(r11_drcov_text), r11_drcov_entry, 8);
    free(got);
    unlink(out);
    /* usage errors: exit 2 */
    o = tu_run(&st, "'%s' drcov '%s' 2>&1", tu_frames_bin(), vec("r11_pintraces_like_x86"));
    assert_int_equal(st, 2);
    free(o);
    o = tu_run(&st, "'%s' drcov '%s' -o /dev/null --module nocolon 2>&1", tu_frames_bin(),
               vec("r11_pintraces_like_x86"));
    assert_int_equal(st, 2);
    free(o);
}

/* r10: 10,001 one-byte std frames at 4096 .. 14096, thread 1, no modload. With the module
   a:0x1000-0x4000 the whole run is one block: offset 0, 10001 bytes. */
static void test_drcov_r10_explicit_module(void **state) {
    static const char *const mods[] = {"/tmp/a:0x1000-0x4000", NULL};
    frames_cov_info info;
    drcov_file d;
    unsigned off, size, mod;
    tu_text mb = drcov_of(vec("r10_default_m_n10001"), mods, &info);
    (void)state;
    parse_drcov(mb.s, mb.n, &d);
    assert_int_equal(d.nmods, 1);
    assert_int_equal(d.base[0], 0x1000);
    assert_int_equal(d.end[0], 0x4000);
    assert_string_equal(d.path[0], "/tmp/a");
    assert_int_equal(d.nbbs, 1);
    bb_entry(&d, 0, &off, &size, &mod);
    assert_int_equal(off, 0);
    assert_int_equal(size, 10001);
    assert_int_equal(mod, 0);
    assert_int_equal(info.instructions, 10001);
    free(mb.s);
    /* without modules nothing can be written, and the command says why */
    {
        int st;
        char *o = tu_run(&st, "'%s' drcov '%s' -o /dev/null 2>&1", tu_frames_bin(),
                         vec("r10_default_m_n10001"));
        assert_int_equal(st, 0);
        assert_non_null(strstr(o, "--module"));
        free(o);
    }
}

/* Every reference vector: the file obeys the layout rules. */
static void test_drcov_layout_all_vectors(void **state) {
    static const char *const names[] = {
        "r01_min_default_i386", "r02_all_frame_types_x86_64", "r03_extremes_arm",
        "r04_empty_values_aarch64", "r05_toc_m4_n10_mips", "r06_toc_m4_n8_ppc64",
        "r07_toc_m1_n5", "r08_toc_m2_n1", "r09_unfinished_no_finish_call",
        "r10_default_m_n10001", "r11_pintraces_like_x86", "tcg_r02_all_frame_types",
        "tw_r03_extremes_arm", "tw_r10_default_m_n10001", "tw_r11_pintraces_like_x86"};
    static const char *const mods[] = {"low:0x0-0x2000", "high:0x2000-0x100000", NULL};
    size_t i;
    (void)state;
    for (i = 0; i < sizeof names / sizeof names[0]; i++) {
        int with;
        for (with = 0; with < 2; with++) {
            frames_cov_info info;
            drcov_file d;
            tu_text mb = drcov_of(vec(names[i]), with ? mods : NULL, &info);
            parse_drcov(mb.s, mb.n, &d);
            assert_int_equal(d.nmods, info.nmodules);
            assert_int_equal(d.nbbs, info.nblocks);
            check_bb_rules(&d);
            free(mb.s);
        }
    }
}

/* r02: the only module (libc at 0x7f0000000000) holds none of the two instructions
   (0x400000, 0x400030): an empty table, and the instructions are counted as outside. */
static void test_drcov_r02_outside(void **state) {
    frames_cov_info info;
    drcov_file d;
    tu_text mb = drcov_of(vec("r02_all_frame_types_x86_64"), NULL, &info);
    (void)state;
    parse_drcov(mb.s, mb.n, &d);
    assert_int_equal(d.nmods, 1);
    assert_int_equal(d.base[0], 0x7f0000000000ull);
    assert_int_equal(d.end[0], 0x7f0000200000ull);
    assert_string_equal(d.path[0], "/lib/x86_64-linux-gnu/libc.so.6");
    assert_int_equal(d.nbbs, 0);
    assert_int_equal(info.outside, 2);
    free(mb.s);
}

/* Grouping rules on a synthetic trace:
   modules A [0x1000, 0x2000) and B [0x2000, 0x3000) (modload high is inclusive)
   thread 1: 0x1ffe(1) 0x1fff(1) 0x2000(2) 0x2002(1)  -> A:0xffe+2 (module boundary), B:0+3
   thread 2 interleaved: 0x1800(4) 0x1804(4)           -> A:0x800+8
   thread 1: 0x1ffe(1) 0x1fff(1) again                  -> A:0xffe+2 (duplicate, kept once)
   thread 1: 0x5000(1) outside every module             -> counted as outside
   thread 1: 0x1010 with no rawbytes (counts 1 byte), 0x1011(1) -> A:0x10+2 */
static void test_drcov_grouping_rules(void **state) {
    tw t = tw_open(FRAMES_ARCH_I386, FRAMES_MACH_I386, 0);
    frames_cov_info info;
    drcov_file d;
    tu_text mb;
    unsigned off, size, mod;
    static const unsigned expect[][3] = {{0x10, 2, 0}, {0x800, 8, 0}, {0xffe, 2, 0}, {0, 3, 1}};
    size_t i;
    (void)state;
    tw_modload(&t, "A", 0x1000, 0x1fff);
    tw_modload(&t, "B", 0x2000, 0x2fff);
    tw_insn(&t, 0x1ffe, 1, 1);
    tw_insn(&t, 0x1800, 2, 4);
    tw_insn(&t, 0x1fff, 1, 1);
    tw_insn(&t, 0x1804, 2, 4);
    tw_insn(&t, 0x2000, 1, 2);
    tw_insn(&t, 0x2002, 1, 1);
    tw_insn(&t, 0x1ffe, 1, 1);
    tw_insn(&t, 0x1fff, 1, 1);
    tw_insn(&t, 0x5000, 1, 1);
    tw_insn(&t, 0x1010, 1, 0);
    tw_insn(&t, 0x1011, 1, 1);
    mb = drcov_of(tw_close(&t), NULL, &info);
    parse_drcov(mb.s, mb.n, &d);
    check_bb_rules(&d);
    assert_int_equal(d.nmods, 2);
    assert_int_equal(d.end[0], 0x2000);
    assert_int_equal(d.nbbs, 4);
    for (i = 0; i < 4; i++) {
        bb_entry(&d, i, &off, &size, &mod);
        assert_int_equal(off, expect[i][0]);
        assert_int_equal(size, expect[i][1]);
        assert_int_equal(mod, expect[i][2]);
    }
    assert_int_equal(info.instructions, 11);
    assert_int_equal(info.outside, 1);
    assert_int_equal(info.threads, 2);
    free(mb.s);
    unlink(t.path);
}

/* 70,000 contiguous one-byte instructions: one run, written as 65535 + 4465 bytes. */
static void test_drcov_long_block_split(void **state) {
    tw t = tw_open(FRAMES_ARCH_I386, FRAMES_MACH_I386, 0);
    drcov_file d;
    tu_text mb;
    unsigned off, size, mod;
    uint64_t pc;
    (void)state;
    tw_modload(&t, "big", 0x100000, 0x1fffff);
    for (pc = 0x100000; pc < 0x100000 + 70000; pc++) tw_insn(&t, pc, 1, 1);
    mb = drcov_of(tw_close(&t), NULL, NULL);
    parse_drcov(mb.s, mb.n, &d);
    assert_int_equal(d.nbbs, 2);
    bb_entry(&d, 0, &off, &size, &mod);
    assert_int_equal(off, 0);
    assert_int_equal(size, 65535);
    bb_entry(&d, 1, &off, &size, &mod);
    assert_int_equal(off, 65535);
    assert_int_equal(size, 70000 - 65535);
    free(mb.s);
    unlink(t.path);
}

/* ---------------------------------------------------------------------------------------
   Tenet
   --------------------------------------------------------------------------------------- */

static tu_text tenet_of(const char *path, frames_tenet_arch arch, const uint64_t *tid,
                       frames_tenet_info *info) {
    frames_reader *r = open_reader(path);
    frames_tenet *t;
    frames_frame f;
    frames_error err;
    tu_text mb = {0};
    int rc;
    if (arch == FRAMES_TENET_NONE) {
        const frames_header *h = frames_reader_header(r);
        arch = frames_tenet_arch_of(h->arch, h->machine);
    }
    assert_int_equal(frames_tenet_open(&t, arch, tid, NULL, &err), FRAMES_OK);
    tu_text_out(&mb, "", 0);
    while ((rc = frames_reader_next(r, &f)) > 0)
        assert_int_equal(frames_tenet_add_frame(t, &f, tu_text_out, &mb), 0);
    assert_int_equal(rc, 0);
    assert_int_equal(frames_tenet_finish(t, tu_text_out, &mb), 0);
    if (info) frames_tenet_info_get(t, info);
    frames_tenet_close(t);
    frames_reader_close(r);
    return mb;
}

/* r11 (i386, machine 1 -> Tenet x86), thread 1:
   frame 1 pc 0x8048100 pre R_EAX=1 R_EBX=2; post R_EAX=3, R_ZF, R_CF (not in the set)
   frame 2 pc 0x8048102 pre R_EBX=0x08049000, [0x8049000] read = be ba fe ca; post R_EAX
   line 0: registers known before frame 1, its pc
   line 1: eax from frame 1's post, ebx from frame 2's pre, pc; frame 1 touched no memory.
   Frame 2's effects have no line (the reference tracers write the state before each
   instruction). */
static void test_tenet_r11_exact(void **state) {
    frames_tenet_info info;
    tu_text mb = tenet_of(vec("r11_pintraces_like_x86"), FRAMES_TENET_NONE, NULL, &info);
    (void)state;
    assert_string_equal(mb.s, "eax=0x1,ebx=0x2,eip=0x8048100\n"
                              "eax=0x3,ebx=0x8049000,eip=0x8048102\n");
    assert_int_equal(info.lines, 2);
    assert_int_equal(info.thread_id, 1);
    assert_int_equal(info.skipped_operands, 2); /* R_ZF, R_CF */
    free(mb.s);
}

/* r02 (i386, machine 64 -> amd64), thread 7:
   frame 0 pc 0x400000 pre RSP=0x7ffe0000, [0x7ffe0000] read 88 77 66 55 44 33 22 11,
   RCX=3; post RAX=0x1122334455667788, RFLAGS (not in the set)
   frame 7 pc 0x400030, empty pre. */
static void test_tenet_r02_exact(void **state) {
    tu_text mb = tenet_of(vec("r02_all_frame_types_x86_64"), FRAMES_TENET_NONE, NULL, NULL);
    int st;
    char *o;
    (void)state;
    assert_string_equal(mb.s, "rcx=0x3,rsp=0x7ffe0000,rip=0x400000\n"
                              "rax=0x1122334455667788,rip=0x400030,mr=0x7ffe0000:8877665544332211\n");
    o = tu_run(&st, "'%s' tenet '%s'", tu_frames_bin(), vec("r02_all_frame_types_x86_64"));
    assert_int_equal(st, 0);
    assert_string_equal(o, mb.s);
    free(o);
    free(mb.s);
}

/* Synthetic x86-64, thread 1 (thread 2 interleaved):
   A 0x1000: pre RAX=5 (read), [0x2000] read 01 02; post RAX=7, [0x3000] written ff, RFLAGS
   C 0x5000 thread 2
   B 0x1003: pre RAX=7 (unchanged), RBX=9; no post list
   D 0x1005: no pre; post RCX=1 (last instruction: no line for it)
   line 0: rax=0x5 and rbx=0x9 (read by B before anything wrote it: its initial value),
   pc A; line 1: rax=0x7 (A's post), pc B, A's memory; line 2: pc D. */
static const char *tenet_synthetic(void) {
    static const uint8_t five[8] = {5}, seven[8] = {7}, nine[8] = {9}, one[8] = {1},
                         fl[8] = {0x46, 2}, rd[2] = {1, 2}, wr[1] = {0xff};
    tw t = tw_open(FRAMES_ARCH_I386, FRAMES_MACH_X86_64, 0);
    frames_operand a_pre[2], a_post[3], b_pre[2], d_post[1];
    a_pre[0] = tu_reg_op("RAX", five, 8, 1, 0);
    a_pre[1] = tu_mem_op(0x2000, rd, 2, 1, 0);
    a_post[0] = tu_reg_op("RAX", seven, 8, 0, 1);
    a_post[1] = tu_mem_op(0x3000, wr, 1, 0, 1);
    a_post[2] = tu_reg_op("RFLAGS", fl, 8, 0, 1);
    b_pre[0] = tu_reg_op("rax", seven, 8, 1, 0);
    b_pre[1] = tu_reg_op("R_RBX", nine, 8, 1, 0);
    d_post[0] = tu_reg_op("RCX", one, 8, 0, 1);
    tw_insn_ops(&t, 0x1000, 1, 3, a_pre, 2, a_post, 3);
    tw_insn_ops(&t, 0x5000, 2, 1, b_pre, 1, NULL, 0);
    tw_insn_ops(&t, 0x1003, 1, 2, b_pre, 2, NULL, 0);
    tw_insn_ops(&t, 0x1005, 1, 1, NULL, 0, d_post, 1);
    return tw_close(&t);
}

static void test_tenet_synthetic_threads_and_memory(void **state) {
    const char *path = tenet_synthetic();
    frames_tenet_info info;
    uint64_t two = 2;
    tu_text mb = tenet_of(path, FRAMES_TENET_NONE, NULL, &info);
    int st;
    char *o;
    (void)state;
    assert_string_equal(mb.s, "rax=0x5,rbx=0x9,rip=0x1000\n"
                              "rax=0x7,rip=0x1003,mr=0x2000:0102,mw=0x3000:ff\n"
                              "rip=0x1005\n");
    assert_int_equal(info.initial, 3);       /* rax, rbx */
    assert_int_equal(info.written_first, 4); /* rcx, by D */
    assert_int_equal(info.other_threads, 1);
    assert_int_equal(info.skipped_operands, 1); /* RFLAGS */
    free(mb.s);
    mb = tenet_of(path, FRAMES_TENET_NONE, &two, &info);
    assert_string_equal(mb.s, "rax=0x7,rip=0x5000\n");
    assert_int_equal(info.other_threads, 3);
    free(mb.s);
    o = tu_run(&st, "'%s' tenet '%s' --tid 2 2>/dev/null", tu_frames_bin(), path);
    assert_int_equal(st, 0);
    assert_string_equal(o, "rax=0x7,rip=0x5000\n");
    free(o);
    unlink(path);
}

/* The first line's initial values (x86-64), worked out by hand:
   A 0x1000: pre RSP=0x7000 (read); post ECX=5 (a part of rcx: rcx is written first)
   B 0x1002: pre RCX=5 (too late for the first line), R9=9 (never written before: initial)
   C 0x1004: pre R8D=1 (a part: does not give r8); post R8B=2 (r8 written first)
   D 0x1006: pre R8=2, R9=9 (already on the first line, unchanged)
   line 0: rsp and r9 (in Tenet's order), pc A; line 1: rcx (first seen), pc B;
   line 2: pc C; line 3: r8 (first seen whole), pc D. */
static void test_tenet_first_line_initial_values(void **state) {
    static const uint8_t sp[8] = {0, 0x70}, five[8] = {5}, nine[8] = {9}, one[4] = {1}, two[8] = {2};
    tw t = tw_open(FRAMES_ARCH_I386, FRAMES_MACH_X86_64, 0);
    frames_operand a_pre[1], a_post[1], b_pre[2], c_pre[1], c_post[1], d_pre[2];
    frames_tenet_info info;
    tu_text mb;
    (void)state;
    a_pre[0] = tu_reg_op("RSP", sp, 8, 1, 0);
    a_post[0] = tu_reg_op("ECX", five, 4, 0, 1);
    b_pre[0] = tu_reg_op("RCX", five, 8, 1, 0);
    b_pre[1] = tu_reg_op("R9", nine, 8, 1, 0);
    c_pre[0] = tu_reg_op("R8D", one, 4, 1, 0);
    c_post[0] = tu_reg_op("R8B", two, 1, 0, 1);
    d_pre[0] = tu_reg_op("R8", two, 8, 1, 0);
    d_pre[1] = tu_reg_op("R9", nine, 8, 1, 0);
    tw_insn_ops(&t, 0x1000, 1, 2, a_pre, 1, a_post, 1);
    tw_insn_ops(&t, 0x1002, 1, 2, b_pre, 2, NULL, 0);
    tw_insn_ops(&t, 0x1004, 1, 2, c_pre, 1, c_post, 1);
    tw_insn_ops(&t, 0x1006, 1, 2, d_pre, 2, NULL, 0);
    mb = tenet_of(tw_close(&t), FRAMES_TENET_NONE, NULL, &info);
    assert_string_equal(mb.s, "rsp=0x7000,r9=0x9,rip=0x1000\n"
                              "rcx=0x5,rip=0x1002\n"
                              "rip=0x1004\n"
                              "r8=0x2,rip=0x1006\n");
    assert_int_equal(info.initial, (1u << 5) | (1u << 9));
    assert_int_equal(info.written_first, (1u << 2) | (1u << 8));
    assert_false(info.first_line_cut);
    assert_string_equal(frames_tenet_arch_reg(FRAMES_TENET_AMD64, 9), "r9");
    assert_null(frames_tenet_arch_reg(FRAMES_TENET_AMD64, 16));
    free(mb.s);
    unlink(t.path);
}

/* Writes through sub-registers change the whole register (x86-64, worked out by hand from
   the ISA: a 32-bit write zero-extends, an 8-bit one keeps the other bytes):
   A 0x1000: pre RAX=0x1122334455667788; post R8D=0x6fffffff (`mov r8d, imm`)
   B 0x1006: post AL=0x99
   C 0x1008: post R_EDX=7 (BAP's name) with rdx never known before: rdx = 7
   D 0x100a
   line 0: rax (read first), pc A; line 1: r8=0x6fffffff, pc B; line 2: rax with its low
   byte 0x99, pc C; line 3: rdx=0x7, pc D. Before frames_replay.h's model, lines 1-3 had
   no registers and Tenet kept showing the old r8/rax. */
static void test_tenet_subregister_writes(void **state) {
    static const uint8_t rax[8] = {0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11},
                         r8d[4] = {0xff, 0xff, 0xff, 0x6f}, al[1] = {0x99}, edx[4] = {7};
    tw t = tw_open(FRAMES_ARCH_I386, FRAMES_MACH_X86_64, 0);
    frames_operand a_pre[1], a_post[1], b_post[1], c_post[1];
    frames_tenet_info info;
    tu_text mb;
    (void)state;
    a_pre[0] = tu_reg_op("RAX", rax, 8, 1, 0);
    a_post[0] = tu_reg_op("R8D", r8d, 4, 0, 1);
    b_post[0] = tu_reg_op("AL", al, 1, 0, 1);
    c_post[0] = tu_reg_op("R_EDX", edx, 4, 0, 1);
    tw_insn_ops(&t, 0x1000, 1, 6, a_pre, 1, a_post, 1);
    tw_insn_ops(&t, 0x1006, 1, 2, NULL, 0, b_post, 1);
    tw_insn_ops(&t, 0x1008, 1, 2, NULL, 0, c_post, 1);
    tw_insn_ops(&t, 0x100a, 1, 2, NULL, 0, NULL, 0);
    mb = tenet_of(tw_close(&t), FRAMES_TENET_NONE, NULL, &info);
    assert_string_equal(mb.s, "rax=0x1122334455667788,rip=0x1000\n"
                              "r8=0x6fffffff,rip=0x1006\n"
                              "rax=0x1122334455667799,rip=0x1008\n"
                              "rdx=0x7,rip=0x100a\n");
    assert_int_equal(info.initial, 1u << 0);
    assert_int_equal(info.written_first, (1u << 3) | (1u << 8));
    assert_int_equal(info.skipped_operands, 0);
    free(mb.s);
    unlink(t.path);
}

/* ARM: R13/R14/R15 are sp/lr/pc, values are 32-bit, CPSR is not in the set. */
static void test_tenet_arm_aliases(void **state) {
    static const uint8_t sp[4] = {0x00, 0xf0, 0xff, 0xbe}, lr[4] = {0x11, 0x22, 0, 0},
                         pc[4] = {0x04, 0x80, 0, 0}, r0[8] = {1, 0, 0, 0, 0xff, 0xff, 0xff, 0xff},
                         cpsr[4] = {0x10, 0, 0, 0x60};
    tw t = tw_open(FRAMES_ARCH_ARM, 0, 0);
    frames_operand pre[5];
    tu_text mb;
    frames_tenet_info info;
    (void)state;
    pre[0] = tu_reg_op("R13", sp, 4, 1, 0);
    pre[1] = tu_reg_op("R14", lr, 4, 1, 0);
    pre[2] = tu_reg_op("R15", pc, 4, 1, 0);
    pre[3] = tu_reg_op("R0", r0, 8, 1, 0);
    pre[4] = tu_reg_op("CPSR", cpsr, 4, 1, 0);
    tw_insn_ops(&t, 0x8000, 1, 4, pre, 5, NULL, 0);
    mb = tenet_of(tw_close(&t), FRAMES_TENET_NONE, NULL, &info);
    assert_string_equal(mb.s, "r0=0x1,sp=0xbefff000,lr=0x2211,pc=0x8000\n");
    assert_int_equal(info.skipped_operands, 1);
    free(mb.s);
    unlink(t.path);
}

/* Every line of a Tenet trace must pass Tenet's parser: comma-separated NAME=VALUE items,
   names from the architecture's register list or mr/mw/mrw, hex values, the pc in every
   line, memory as ADDR:HEXBYTES. Checked on the ARM extremes vector. */
static void check_tenet_grammar(const char *text, const char *const *regs, const char *ip) {
    const char *line = text;
    while (*line) {
        const char *nl = strchr(line, '\n');
        char buf[70000], *item, *save = NULL;
        int saw_ip = 0;
        size_t n;
        assert_non_null(nl);
        n = (size_t)(nl - line);
        assert_true(n > 0 && n < sizeof buf);
        memcpy(buf, line, n);
        buf[n] = 0;
        for (item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
            char *eq = strchr(item, '=');
            const char *const *r;
            int known = 0;
            assert_non_null(eq);
            *eq = 0;
            if (!strcmp(item, "mr") || !strcmp(item, "mw") || !strcmp(item, "mrw")) {
                char *colon = strchr(eq + 1, ':');
                size_t k, hl;
                assert_non_null(colon);
                assert_true(strncmp(eq + 1, "0x", 2) == 0);
                hl = strlen(colon + 1);
                assert_true(hl > 0 && hl % 2 == 0);
                for (k = 0; k < hl; k++) assert_non_null(strchr("0123456789abcdef", colon[1 + k]));
                continue;
            }
            if (!strcmp(item, ip)) saw_ip = 1;
            for (r = regs; *r; r++) known |= !strcmp(item, *r);
            assert_true(known || !strcmp(item, ip));
            assert_true(strncmp(eq + 1, "0x", 2) == 0 && strlen(eq + 1) > 2);
        }
        assert_true(saw_ip);
        line = nl + 1;
    }
}

static void test_tenet_grammar_arm_vector(void **state) {
    static const char *const arm[] = {"r0", "r1", "r2",  "r3",  "r4",  "r5", "r6", "r7",
                                      "r8", "r9", "r10", "r11", "r12", "sp", "lr", NULL};
    static const char *const x86[] = {"eax", "ebx", "ecx", "edx", "ebp", "esp", "esi", "edi", NULL};
    tu_text mb = tenet_of(vec("r03_extremes_arm"), FRAMES_TENET_NONE, NULL, NULL);
    (void)state;
    assert_true(mb.n > 0);
    check_tenet_grammar(mb.s, arm, "pc");
    free(mb.s);
    mb = tenet_of(vec("r10_default_m_n10001"), FRAMES_TENET_NONE, NULL, NULL);
    check_tenet_grammar(mb.s, x86, "eip");
    free(mb.s);
}

static void test_tenet_unsupported_arch(void **state) {
    int st;
    char *o;
    (void)state;
    /* r04 is aarch64: Tenet has no register set for it */
    o = tu_run(&st, "'%s' tenet '%s' 2>&1", tu_frames_bin(), vec("r04_empty_values_aarch64"));
    assert_int_equal(st, 1);
    assert_non_null(strstr(o, "aarch64"));
    free(o);
    o = tu_run(&st, "'%s' tenet '%s' --arch sparc 2>&1", tu_frames_bin(), vec("r11_pintraces_like_x86"));
    assert_int_equal(st, 2);
    free(o);
}

/* ---------------------------------------------------------------------------------------
   stat
   --------------------------------------------------------------------------------------- */

/* r11: 4 frames (modload, 2 std, syscall 4), thread 1 has 3 of them; /bin/ls is
   [0x8048000, 0x8060000) = [134512640, 134610944) and holds both 2-byte instructions. */
static void test_stat_r11_json_exact(void **state) {
    int st;
    char *o;
    (void)state;
    /* names from the modload frame (no file under the sysroot: module+offset) and the
       syscall's name (an i386 trace, machine 1: 4 is write) are extra members */
    o = tu_run(&st, "'%s' stat --json --sysroot /nonexistent '%s' 2>/dev/null", tu_frames_bin(),
               vec("r11_pintraces_like_x86"));
    assert_int_equal(st, 0);
    assert_string_equal(
        o, "{\"frames\":4,\"by_kind\":{\"none\":0,\"std_frame\":2,\"syscall_frame\":1,"
           "\"exception_frame\":0,\"taint_intro_frame\":0,\"modload_frame\":1,\"key_frame\":0,"
           "\"unknown\":0},\"instructions\":2,\"unique_pcs\":2,\"outside_modules\":0,"
           "\"threads\":[{\"tid\":1,\"frames\":3,\"instructions\":2,\"syscalls\":1}],"
           "\"modules\":[{\"name\":\"/bin/ls\",\"base\":134512640,\"end\":134610944,"
           "\"instructions\":2,\"unique_pcs\":2,\"covered_bytes\":4}],"
           "\"hottest\":[{\"pc\":134512896,\"count\":1,\"module\":\"/bin/ls\",\"module_offset\":256},"
           "{\"pc\":134512898,\"count\":1,\"module\":\"/bin/ls\",\"module_offset\":258}],"
           "\"syscalls\":[{\"number\":4,\"count\":1,\"name\":\"write\"}]}\n");
    free(o);
    /* --no-symbols: the pcs without names, the members as before */
    o = tu_run(&st, "'%s' stat --json --no-symbols '%s'", tu_frames_bin(), vec("r11_pintraces_like_x86"));
    assert_int_equal(st, 0);
    assert_non_null(strstr(o, "\"hottest\":[{\"pc\":134512896,\"count\":1},{\"pc\":134512898,\"count\":1}],"));
    free(o);
    o = tu_run(&st, "'%s' stat '%s'", tu_frames_bin(), vec("r11_pintraces_like_x86"));
    assert_int_equal(st, 0);
    assert_non_null(strstr(o, "instructions      2\n"));
    assert_non_null(strstr(o, "/bin/ls"));
    free(o);
}

static frames_stats *stats_of(const char *path) {
    frames_reader *r = open_reader(path);
    frames_stats *s;
    frames_frame f;
    frames_error err;
    int rc;
    assert_int_equal(frames_stats_open(&s, NULL, &err), 0);
    while ((rc = frames_reader_next(r, &f)) > 0) assert_int_equal(frames_stats_add_frame(s, &f), 0);
    assert_int_equal(rc, 0);
    assert_int_equal(frames_stats_finish(s), 0);
    frames_reader_close(r);
    return s;
}

/* r02: one frame of every kind and minimal variants: std 2, syscall 1 (231), exception 2
   (one with thread 7), taint_intro 1, modload 1, key 1; thread 7 appears in std x2,
   syscall, exception = 4 frames. */
static void test_stat_r02_kinds(void **state) {
    frames_stats *s = stats_of(vec("r02_all_frame_types_x86_64"));
    frames_stats_summary sum;
    const frames_stats_thread *th;
    const frames_stats_count *sys;
    size_t n;
    (void)state;
    frames_stats_summary_get(s, &sum);
    assert_int_equal(sum.frames, 8);
    assert_int_equal(sum.by_kind[FRAMES_KIND_STD], 2);
    assert_int_equal(sum.by_kind[FRAMES_KIND_SYSCALL], 1);
    assert_int_equal(sum.by_kind[FRAMES_KIND_EXCEPTION], 2);
    assert_int_equal(sum.by_kind[FRAMES_KIND_TAINT_INTRO], 1);
    assert_int_equal(sum.by_kind[FRAMES_KIND_MODLOAD], 1);
    assert_int_equal(sum.by_kind[FRAMES_KIND_KEY], 1);
    assert_int_equal(sum.unique_pcs, 2);
    assert_int_equal(sum.outside, 2);
    th = frames_stats_threads(s, &n);
    assert_int_equal(n, 1);
    assert_int_equal(th[0].thread_id, 7);
    assert_int_equal(th[0].frames, 4);
    assert_int_equal(th[0].instructions, 2);
    assert_int_equal(th[0].syscalls, 1);
    sys = frames_stats_syscalls(s, &n);
    assert_int_equal(n, 1);
    assert_int_equal(sys[0].key, 231);
    assert_int_equal(sys[0].count, 1);
    frames_stats_close(s);
}

/* Hottest pcs: counts descending, ties by pc; threads sorted; syscalls sorted. */
static void test_stat_hottest_synthetic(void **state) {
    tw t = tw_open(FRAMES_ARCH_I386, FRAMES_MACH_I386, 0);
    frames_stats *s;
    frames_stats_count hot[3];
    frames_stats_summary sum;
    const frames_stats_module *mods;
    size_t n;
    int i;
    (void)state;
    tw_modload(&t, "m", 0x10, 0x1f);
    for (i = 0; i < 3; i++) tw_insn(&t, 0x30, 9, 1);   /* 3 times */
    for (i = 0; i < 5; i++) tw_insn(&t, 0x20, 4, 2);   /* 5 times */
    for (i = 0; i < 3; i++) tw_insn(&t, 0x10, 4, 4);   /* 3 times, lower pc than 0x30 */
    tw_insn(&t, 0x18, 4, 1);
    s = stats_of(tw_close(&t));
    n = frames_stats_hottest(s, hot, 3);
    assert_int_equal(n, 3);
    assert_int_equal(hot[0].key, 0x20);
    assert_int_equal(hot[0].count, 5);
    assert_int_equal(hot[1].key, 0x10);
    assert_int_equal(hot[2].key, 0x30);
    frames_stats_summary_get(s, &sum);
    assert_int_equal(sum.unique_pcs, 4);
    assert_int_equal(sum.outside, 8);   /* 0x20 x5 and 0x30 x3 are outside [0x10, 0x20) */
    mods = frames_stats_modules(s, &n);
    assert_int_equal(n, 1);
    assert_int_equal(mods[0].instructions, 4);
    assert_int_equal(mods[0].unique_pcs, 2);
    assert_int_equal(mods[0].covered_bytes, 5);
    assert_int_equal(frames_stats_threads(s, &n)[0].thread_id, 4);
    frames_stats_close(s);
    unlink(t.path);
}

/* ---------------------------------------------------------------------------------------
   slice and split
   --------------------------------------------------------------------------------------- */

/* The raw payloads of frames [first, end) of a trace, read sequentially (no seek). */
static void payloads(const char *path, uint64_t first, uint64_t end, tu_text *out, uint64_t *count) {
    frames_reader *r = open_reader(path);
    frames_raw raw;
    int rc;
    *count = 0;
    while ((rc = frames_reader_next_raw(r, &raw)) > 0) {
        if (raw.index >= first && raw.index < end) {
            uint64_t len = raw.payload.len;
            tu_text_out(out, (const char *)&len, sizeof len);
            tu_text_out(out, (const char *)raw.payload.ptr, raw.payload.len);
            (*count)++;
        }
    }
    assert_int_equal(rc, 0);
    frames_reader_close(r);
}

static void test_slice_frames_range_equal(void **state) {
    const char *src = vec("r10_default_m_n10001"), *out = tu_tmp_path(".frames");
    tu_text a = {0}, b = {0};
    uint64_t na, nb;
    frames_reader *rs, *ro;
    frames_bytes ms, mo;
    int st;
    char *o;
    (void)state;
    o = tu_run(&st, "'%s' slice '%s' --frames 9990-10001 -o '%s' 2>&1", tu_frames_bin(), src, out);
    assert_int_equal(st, 0);
    free(o);
    payloads(src, 9990, 10001, &a, &na);
    payloads(out, 0, UINT64_MAX, &b, &nb);
    assert_int_equal(na, 11);
    assert_int_equal(nb, 11);
    assert_int_equal(a.n, b.n);
    assert_memory_equal(a.s, b.s, a.n);
    rs = open_reader(src);
    ro = open_reader(out);
    assert_int_equal(frames_reader_header(ro)->version, frames_reader_header(rs)->version);
    assert_int_equal(frames_reader_header(ro)->arch, frames_reader_header(rs)->arch);
    assert_int_equal(frames_reader_header(ro)->machine, frames_reader_header(rs)->machine);
    assert_int_equal(frames_reader_header(ro)->nframes, 11);
    ms = frames_reader_meta_bytes(rs);
    mo = frames_reader_meta_bytes(ro);
    assert_int_equal(ms.len, mo.len);
    assert_memory_equal(ms.ptr, mo.ptr, ms.len);
    frames_reader_close(rs);
    frames_reader_close(ro);
    free(a.s);
    free(b.s);
    unlink(out);
}

/* The slice keeps the TOC convention: the TCG plugin's ceil(n/m) TOC (m = 4) for 7 frames
   has 2 entries, where libtrace's floor((n-1)/m) would have 1. */
static void test_slice_keeps_toc_convention(void **state) {
    const char *out = tu_tmp_path(".frames");
    frames_reader *r;
    frames_reader_info st;
    int s;
    char *o;
    (void)state;
    o = tu_run(&s, "'%s' slice '%s' --frames 2-9 -o '%s' 2>&1", tu_frames_bin(), vec("tcg_r05_m4_n10"), out);
    assert_int_equal(s, 0);
    free(o);
    r = open_reader(out);
    assert_int_equal(frames_reader_info_get(r, &st), 0);
    assert_int_equal(st.frames_per_toc, 4);
    assert_int_equal(st.toc_entries, 2);
    assert_true(st.toc_matches & (1u << FRAMES_TOC_CEIL));
    assert_int_equal(frames_reader_header(r)->nframes, 7);
    frames_reader_close(r);
    unlink(out);
}

/* --pc and --tid on r02 (thread 7): frame 0 std 0x400000, 1 syscall 0x400010, 2 exception
   thread 7 from 0x400020, 3 exception without fields, 4 taint_intro, 5 modload, 6 key,
   7 std 0x400030.
   --pc 0x400010-0x400030 keeps 1, 2 and the modload 5; --tid 7 keeps 0, 1, 2, 5, 7. */
static void check_slice_selects(const char *args, const uint64_t *expect, size_t n) {
    const char *src = vec("r02_all_frame_types_x86_64"), *out = tu_tmp_path(".frames");
    tu_text a = {0}, b = {0};
    uint64_t cnt, total = 0;
    size_t i;
    int st;
    char *o = tu_run(&st, "'%s' slice '%s' %s -o '%s' 2>&1", tu_frames_bin(), src, args, out);
    assert_int_equal(st, 0);
    free(o);
    for (i = 0; i < n; i++) {
        payloads(src, expect[i], expect[i] + 1, &a, &cnt);
        total += cnt;
    }
    payloads(out, 0, UINT64_MAX, &b, &cnt);
    assert_int_equal(cnt, n);
    assert_int_equal(total, n);
    assert_int_equal(a.n, b.n);
    assert_memory_equal(a.s, b.s, a.n);
    free(a.s);
    free(b.s);
    unlink(out);
}

static void test_slice_filters(void **state) {
    static const uint64_t by_pc[] = {1, 2, 5}, by_tid[] = {0, 1, 2, 5, 7}, both[] = {5, 7};
    (void)state;
    check_slice_selects("--pc 0x400010-0x400030", by_pc, 3);
    check_slice_selects("--tid 7", by_tid, 5);
    check_slice_selects("--frames 4- --pc 0x400030-0x400031 --tid 7", both, 2);
}

/* A slice read from a pipe and written to a pipe is still a readable trace. */
static void test_slice_streams(void **state) {
    int st;
    char *o;
    (void)state;
    /* r11 frames 1 and 2 are its two std_frames */
    o = tu_run(&st, "cat '%s' | '%s' slice - --frames 1-3 -o - | '%s' stat --json -",
               vec("r11_pintraces_like_x86"), tu_frames_bin(), tu_frames_bin());
    assert_int_equal(st, 0);
    {
        const char *want = "{\"frames\":2,\"by_kind\":{\"none\":0,\"std_frame\":2,";
        assert_true(strncmp(o, want, strlen(want)) == 0);
    }
    free(o);
}

static void test_split_ranges_arithmetic(void **state) {
    uint64_t b[8];
    (void)state;
    /* 10 frames, blocks of 4 -> blocks [0,4) [4,8) [8,10) */
    assert_int_equal(frames_split_ranges(10, 4, 2, b), 2);
    assert_int_equal(b[0], 0);
    assert_int_equal(b[1], 4);
    assert_int_equal(b[2], 10);
    assert_int_equal(frames_split_ranges(10, 4, 7, b), 3);
    assert_int_equal(b[1], 4);
    assert_int_equal(b[2], 8);
    assert_int_equal(b[3], 10);
    /* 100 frames, align 1, 3 chunks: 33 / 33 / 34 */
    assert_int_equal(frames_split_ranges(100, 1, 3, b), 3);
    assert_int_equal(b[1], 33);
    assert_int_equal(b[2], 66);
    assert_int_equal(b[3], 100);
    assert_int_equal(frames_split_ranges(0, 4, 3, b), 0);
    assert_int_equal(frames_split_ranges(5, 4, 0, b), 0);
    /* huge counts do not overflow */
    assert_int_equal(frames_split_ranges(UINT64_MAX, 10000, 2, b), 2);
    assert_true(b[1] % 10000 == 0 && b[1] > 0 && b[1] < UINT64_MAX);
    assert_int_equal(b[2], UINT64_MAX);
}

/* frames split: ranges cover [0, n) exactly and every inner boundary is the start of a
   TOC block: its file offset (found by a sequential scan) is the TOC word for it. */
static void test_split_covers_and_aligns(void **state) {
    static const char *const names[] = {"r10_default_m_n10001", "tcg_r10_m64_n10001",
                                        "tw_r10_default_m_n10001", "r05_toc_m4_n10_mips",
                                        "r06_toc_m4_n8_ppc64", "r07_toc_m1_n5",
                                        "rz_r05_zero_pad", "r09_unfinished_no_finish_call"};
    static const unsigned chunks[] = {1, 2, 3, 4, 7, 64};
    size_t i, c;
    (void)state;
    for (i = 0; i < sizeof names / sizeof names[0]; i++) {
        const char *path = vec(names[i]);
        size_t flen;
        unsigned char *file = tu_read_file(path, &flen);
        uint64_t T = tu_le64(file + 0x28), m = T ? tu_le64(file + T) : 0, n;
        uint64_t *offs = (uint64_t *)malloc(20000 * sizeof *offs);
        frames_reader *r = open_reader(path);
        frames_raw raw;
        n = 0;
        while (frames_reader_next_raw(r, &raw) > 0) offs[n++] = raw.offset;
        frames_reader_close(r);
        for (c = 0; c < sizeof chunks / sizeof chunks[0]; c++) {
            int st;
            char *o = tu_run(&st, "'%s' split '%s' --chunks %u 2>/dev/null", tu_frames_bin(), path,
                             chunks[c]);
            const char *p = o;
            unsigned long long a, b, expect_first = 0, lines = 0;
            assert_int_equal(st, 0);
            while (*p) {
                int used;
                assert_int_equal(sscanf(p, "%llu-%llu\n%n", &a, &b, &used), 2);
                assert_int_equal(a, expect_first);
                assert_true(a < b);
                if (a > 0 && m) {
                    assert_int_equal(a % m, 0);
                    assert_int_equal(offs[a], tu_le64(file + T + 8 * (a / m)));
                }
                expect_first = b;
                lines++;
                p += used;
            }
            assert_int_equal(expect_first, n);
            assert_true(lines >= 1 && lines <= chunks[c]);
            if (m) assert_true(lines == (chunks[c] < (n + m - 1) / m ? chunks[c] : (n + m - 1) / m));
            free(o);
        }
        free(offs);
        free(file);
    }
}

/* The worked example of docs/scale.md: statistics of the chunks, computed by GNU parallel,
   add up to the statistics of the whole trace. */
static void test_scale_doc_example_with_parallel(void **state) {
    const char *t = vec("tcg_r10_m64_n10001");
    int st;
    char *o;
    (void)state;
    o = tu_run(&st,
               "cd '%s' && PATH=$PWD:$PATH; frames split '%s' --chunks 4 | "
               "parallel -k 'frames slice %s --frames {} -o - | frames stat -' | "
               "awk '$1 == \"instructions\" { n += $2 } END { print n }'",
               tu_beside_frames(""), t, t);
    assert_int_equal(st, 0);
    assert_string_equal(o, "10001\n");
    free(o);
}

/* ---------------------------------------------------------------------------------------
   JSONL operand rows
   --------------------------------------------------------------------------------------- */

static tu_text rows_of(const char *path) {
    frames_reader *r = open_reader(path);
    frames_frame f;
    tu_text mb = {0};
    uint64_t i = 0;
    tu_text_out(&mb, "", 0);
    while (frames_reader_next(r, &f) > 0)
        assert_int_equal(frames_print_operand_rows_jsonl(&f, i++, tu_text_out, &mb), 0);
    frames_reader_close(r);
    return mb;
}

static size_t count_lines(const char *s) {
    size_t n = 0;
    for (; *s; s++) n += *s == '\n';
    return n;
}

/* r11: frame 1 has 2 pre + 3 post operands, frame 2 has 2 pre + 1 post: 8 rows. */
static void test_jsonl_rows_r11(void **state) {
    tu_text mb = rows_of(vec("r11_pintraces_like_x86"));
    (void)state;
    assert_int_equal(count_lines(mb.s), 8);
    assert_non_null(strstr(mb.s,
        "{\"frame\":1,\"pc\":134512896,\"tid\":1,\"list\":\"pre\",\"kind\":\"reg\",\"name\":\"R_EAX\","
        "\"address\":null,\"bits\":32,\"read\":true,\"written\":false,\"index\":false,\"base\":false,"
        "\"taint_id\":null,\"value\":\"01000000\",\"value_uint\":1}\n"));
    assert_non_null(strstr(mb.s,
        "{\"frame\":1,\"pc\":134512896,\"tid\":1,\"list\":\"post\",\"kind\":\"reg\",\"name\":\"R_ZF\","
        "\"address\":null,\"bits\":1,\"read\":false,\"written\":true,\"index\":false,\"base\":false,"
        "\"taint_id\":null,\"value\":\"00\",\"value_uint\":0}\n"));
    /* 0xcafebabe = 3405691582 read from 0x8049000 = 134516736 */
    assert_non_null(strstr(mb.s,
        "{\"frame\":2,\"pc\":134512898,\"tid\":1,\"list\":\"pre\",\"kind\":\"mem\",\"name\":null,"
        "\"address\":134516736,\"bits\":32,\"read\":true,\"written\":false,\"index\":false,"
        "\"base\":false,\"taint_id\":null,\"value\":\"bebafeca\",\"value_uint\":3405691582}\n"));
    free(mb.s);
}

/* r02: frame 0 (3 pre, 2 post), frame 7 (none), key frame 6: one value without thread,
   two with thread 7 (RIP = 0x400000, RDI taint 1 = 0x601000). */
static void test_jsonl_rows_r02_key_frame(void **state) {
    tu_text mb = rows_of(vec("r02_all_frame_types_x86_64"));
    (void)state;
    assert_int_equal(count_lines(mb.s), 8);
    assert_non_null(strstr(mb.s,
        "{\"frame\":6,\"pc\":null,\"tid\":null,\"list\":\"key\",\"kind\":\"mem\",\"name\":null,"
        "\"address\":6295552,\"bits\":8,\"read\":false,\"written\":false,\"index\":false,"
        "\"base\":false,\"taint_id\":null,\"value\":\"41\",\"value_uint\":65}\n"));
    assert_non_null(strstr(mb.s,
        "{\"frame\":6,\"pc\":null,\"tid\":7,\"list\":\"key\",\"kind\":\"reg\",\"name\":\"RDI\","
        "\"address\":null,\"bits\":64,\"read\":false,\"written\":false,\"index\":false,"
        "\"base\":false,\"taint_id\":1,\"value\":\"0010600000000000\",\"value_uint\":6295552}\n"));
    assert_non_null(strstr(mb.s,
        "{\"frame\":0,\"pc\":4194304,\"tid\":7,\"list\":\"pre\",\"kind\":\"mem\",\"name\":null,"
        "\"address\":2147352576,\"bits\":64,\"read\":true,\"written\":false,\"index\":false,"
        "\"base\":false,\"taint_id\":42,\"value\":\"8877665544332211\","
        "\"value_uint\":1234605616436508552}\n"));
    free(mb.s);
}

/* r03: a 300-byte value has no value_uint; every row has the same 15 members. */
static void test_jsonl_rows_same_members(void **state) {
    tu_text mb = rows_of(vec("r03_extremes_arm"));
    const char *line = mb.s;
    (void)state;
    assert_true(count_lines(mb.s) > 100);
    while (*line) {
        const char *nl = strchr(line, '\n');
        static const char *const keys[] = {"\"frame\":", ",\"pc\":", ",\"tid\":", ",\"list\":",
                                           ",\"kind\":", ",\"name\":", ",\"address\":",
                                           ",\"bits\":", ",\"read\":", ",\"written\":",
                                           ",\"index\":", ",\"base\":", ",\"taint_id\":",
                                           ",\"value\":", ",\"value_uint\":"};
        const char *p = line;
        size_t k;
        for (k = 0; k < sizeof keys / sizeof keys[0]; k++) {
            const char *hit = strstr(p, keys[k]);
            assert_non_null(hit);
            assert_true(hit < nl);
            p = hit + strlen(keys[k]);
        }
        assert_true(nl[-1] == '}');
        line = nl + 1;
    }
    free(mb.s);
}

/* frames dump --jsonl prints exactly the library's rows, and only them. */
static void test_dump_jsonl_command(void **state) {
    static const char *const names[] = {"r11_pintraces_like_x86", "r02_all_frame_types_x86_64",
                                        "r03_extremes_arm"};
    size_t i;
    (void)state;
    for (i = 0; i < sizeof names / sizeof names[0]; i++) {
        tu_text mb = rows_of(vec(names[i]));
        int st;
        char *o = tu_run(&st, "'%s' dump --jsonl '%s'", tu_frames_bin(), vec(names[i]));
        assert_int_equal(st, 0);
        assert_string_equal(o, mb.s);
        free(o);
        free(mb.s);
    }
}

/* ---------------------------------------------------------------------------------------
   Installation
   --------------------------------------------------------------------------------------- */

static void test_install_prefix_pkg_config(void **state) {
    char prefix[512], cmd[4096];
    const char *prog = "#include <frames.h>\n#define FRAMES_INTEROP_IMPLEMENTATION\n"
                       "#include <frames_interop.h>\n"
                       "int main(int c, char **v) { frames_reader *r; frames_error e; uint64_t n;\n"
                       "  (void)c; if (frames_reader_open_path(&r, v[1], NULL, &e) < 0) return 1;\n"
                       "  if (frames_reader_count(r, &n) < 0) return 1;\n"
                       "  printf(\"%llu\\n\", (unsigned long long)n); frames_reader_close(r); return 0; }\n";
    char *o;
    int st;
    struct stat sb;
    (void)state;
    snprintf(prefix, sizeof prefix, "%s", tu_tmp_path("-prefix"));
    if (strchr(prefix, ' ')) /* pkg-config's flags cannot carry a space in a path */
        snprintf(prefix, sizeof prefix, "/tmp/frames-prefix-%ld", (long)getpid());
    o = tu_run(&st, "FRAMES_BIN='%s' '%s' '%s' 2>&1", tu_frames_bin(), tu_src("tools/install.sh"), prefix);
    assert_int_equal(st, 0);
    free(o);
    snprintf(cmd, sizeof cmd, "%s/bin/frames", prefix);
    assert_int_equal(stat(cmd, &sb), 0);
    assert_true(sb.st_mode & S_IXUSR);
    snprintf(cmd, sizeof cmd, "%s/include/frames.h", prefix);
    assert_int_equal(stat(cmd, &sb), 0);
    snprintf(cmd, sizeof cmd, "%s/include/frames_interop.h", prefix);
    assert_int_equal(stat(cmd, &sb), 0);
    snprintf(cmd, sizeof cmd, "%s/share/man/man1/frames.1", prefix);
    assert_int_equal(stat(cmd, &sb), 0);
    /* the installed command runs */
    o = tu_run(&st, "'%s'/bin/frames --version", prefix);
    assert_int_equal(st, 0);
    assert_true(strncmp(o, "frames ", 7) == 0);
    free(o);
    /* pkg-config finds the headers */
    o = tu_run(&st, "PKG_CONFIG_PATH='%s'/lib/pkgconfig pkg-config --cflags frames", prefix);
    assert_int_equal(st, 0);
    snprintf(cmd, sizeof cmd, "-I%s/include", prefix);
    assert_non_null(strstr(o, cmd));
    free(o);
    if (access(tu_src("frames_pt.h"), F_OK) == 0) {   /* the Intel PT header names libipt */
        o = tu_run(&st, "PKG_CONFIG_PATH='%s'/lib/pkgconfig pkg-config --libs frames_pt", prefix);
        assert_int_equal(st, 0);
        assert_non_null(strstr(o, "-lipt"));
        free(o);
    }
    /* a tiny program built with the installed flags (strict C99, no feature-test macro:
       frames.h asks for the POSIX declarations it needs) reads a trace */
    snprintf(cmd, sizeof cmd, "%s/prog.c", prefix);
    assert_int_equal(tu_write_file(cmd, prog, strlen(prog)), 0);
    o = tu_run(&st,
               "cd '%s' && cc -std=c99 -Wall -Werror $(PKG_CONFIG_PATH=lib/pkgconfig pkg-config "
               "--cflags frames) -DFRAMES_IMPLEMENTATION prog.c -o prog $(PKG_CONFIG_PATH="
               "lib/pkgconfig pkg-config --libs frames) 2>&1 && ./prog '%s'",
               prefix, vec("r11_pintraces_like_x86"));
    assert_int_equal(st, 0);
    assert_string_equal(o, "4\n");
    free(o);
    o = tu_run(&st, "rm -rf '%s'", prefix);
    free(o);
}

/* The man page has a section for every subcommand of `frames --help` and formats cleanly. */
static void test_man_page_covers_commands(void **state) {
    size_t n;
    char *man = (char *)tu_read_file(tu_src("docs/frames.1"), &n);
    int st;
    char *o, *line, *save = NULL;
    (void)state;
    assert_non_null(man);
    o = tu_run(&st, "'%s' --help | awk '/^commands:/{on=1; next} on && NF {print $1} !NF && on {exit}'",
               tu_frames_bin());
    assert_int_equal(st, 0);
    assert_true(strlen(o) > 0);
    for (line = strtok_r(o, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char sect[64];
        snprintf(sect, sizeof sect, "\n.SS %s\n", line);
        if (!strstr(man, sect)) fail_msg("docs/frames.1 has no section '.SS %s'", line);
    }
    free(o);
    free(man);
    o = tu_run(&st, "groff -man -Tutf8 -ww -z '%s' 2>&1", tu_src("docs/frames.1"));
    assert_int_equal(st, 0);
    assert_string_equal(o, "");
    free(o);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_drcov_r11_exact),
        cmocka_unit_test(test_drcov_command_matches_library),
        cmocka_unit_test(test_drcov_r10_explicit_module),
        cmocka_unit_test(test_drcov_layout_all_vectors),
        cmocka_unit_test(test_drcov_r02_outside),
        cmocka_unit_test(test_drcov_grouping_rules),
        cmocka_unit_test(test_drcov_long_block_split),
        cmocka_unit_test(test_tenet_r11_exact),
        cmocka_unit_test(test_tenet_r02_exact),
        cmocka_unit_test(test_tenet_synthetic_threads_and_memory),
        cmocka_unit_test(test_tenet_first_line_initial_values),
        cmocka_unit_test(test_tenet_subregister_writes),
        cmocka_unit_test(test_tenet_arm_aliases),
        cmocka_unit_test(test_tenet_grammar_arm_vector),
        cmocka_unit_test(test_tenet_unsupported_arch),
        cmocka_unit_test(test_stat_r11_json_exact),
        cmocka_unit_test(test_stat_r02_kinds),
        cmocka_unit_test(test_stat_hottest_synthetic),
        cmocka_unit_test(test_slice_frames_range_equal),
        cmocka_unit_test(test_slice_keeps_toc_convention),
        cmocka_unit_test(test_slice_filters),
        cmocka_unit_test(test_slice_streams),
        cmocka_unit_test(test_split_ranges_arithmetic),
        cmocka_unit_test(test_split_covers_and_aligns),
        cmocka_unit_test(test_scale_doc_example_with_parallel),
        cmocka_unit_test(test_jsonl_rows_r11),
        cmocka_unit_test(test_jsonl_rows_r02_key_frame),
        cmocka_unit_test(test_jsonl_rows_same_members),
        cmocka_unit_test(test_dump_jsonl_command),
        cmocka_unit_test(test_install_prefix_pkg_config),
        cmocka_unit_test(test_man_page_covers_commands),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
