/* test_replay: frames_replay.h, `frames state` and `frames history` against independent
   references: a program recorded here (Valgrind engine) and the same program stepped live
   by Debian's gdb (registers and memory at each instruction, a watchpoint's stops);
   register aliasing and "unknown" on frames written here with values worked out by hand;
   a trace without values, a cut trace, a stale index and hostile index files. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <ctype.h>
#include <dirent.h>
#include <stdint.h>
#include <unistd.h>

#include "frames.h"
#include "frames_replay.h"
#include "testutil.h"

#define dir tu_workdir
#define at tu_workdir_path

/* File offset of the record of instruction k (the k-th std_frame) of path; 0 when the
   trace has fewer. */
static uint64_t insn_offset(const char *path, uint64_t k) {
    frames_reader *r;
    frames_frame f;
    frames_raw raw;
    frames_error err;
    uint64_t n = 0, off = 0;
    int rc;
    assert_int_equal(frames_reader_open_path(&r, path, NULL, &err), FRAMES_OK);
    while ((rc = frames_reader_next_full(r, &f, &raw)) != 0) {
        if (rc < 0 || f.kind != FRAMES_KIND_STD) continue;
        if (n++ == k) { off = raw.offset; break; }
    }
    frames_reader_close(r);
    return off;
}

/* The index of `path` built in two segments (build_threads 2), the second starting at
   the first multiple of 256 instructions after each byte offset of splits (0: the
   default), is byte for byte the one one thread built at `built`; `joins` of those
   builds must have joined two segments (the others found no boundary after the offset
   and went on alone). Over its budget, it fails as one thread does. */
static void same_index_split(const char *path, const char *built, const uint64_t *splits, size_t nsplits,
                             size_t joins) {
    frames_replay *r;
    frames_replay_options o;
    frames_replay_info info;
    frames_error err;
    unsigned char *a, *b;
    size_t na, nb, i, joined = 0;
    frames_replay_options_default(&o);
    o.index_path = tu_tmp_path(".fridx");
    o.build_threads = 2;
    a = tu_read_file(built, &na);
    assert_non_null(a);
    for (i = 0; i < nsplits; i++) {
        o.build_split = splits[i];
        assert_int_equal(frames_replay_open(&r, path, &o, &err), FRAMES_OK);
        frames_replay_info_get(r, &info);
        joined += info.index_segments == 2;
        frames_replay_close(r);
        b = tu_read_file(o.index_path, &nb);
        assert_non_null(b);
        assert_int_equal(na, nb);
        assert_memory_equal(a, b, na);
        free(b);
        unlink(o.index_path);
    }
    free(a);
    if (joined != joins) fprintf(stderr, "%s: %zu of the builds joined two segments, not %zu\n", path, joined, joins);
    assert_int_equal(joined, joins);
    o.build_split = 0;
    o.max_index_bytes = 200;
    assert_int_equal(frames_replay_open(&r, path, &o, &err), FRAMES_E_NOMEM);
    assert_non_null(strstr(err.message, "would take more than 200 bytes"));
}

/* same_index_split with the cut at instruction k * 256 for k in [1, n] (its record's
   offset, and one byte before it: the same boundary), which must all join. */
static void same_index_blocks(const char *path, const char *built, uint64_t n) {
    uint64_t splits[64];
    size_t i, ns = 0;
    assert_true(2 * n <= 64);
    for (i = 1; i <= n; i++) {
        uint64_t off = insn_offset(path, 256 * (uint64_t)i);
        assert_true(off > 0);
        splits[ns++] = off;
        splits[ns++] = off - 1;
    }
    same_index_split(path, built, splits, ns, ns);
}

/* ---- register aliasing, on frames written here */

static frames_frame one_frame(uint64_t pc, const frames_operand *pre, uint32_t npre,
                              const frames_operand *post, uint32_t npost, const char *bytes,
                              size_t nbytes) {
    frames_frame f;
    memset(&f, 0, sizeof f);
    f.kind = FRAMES_KIND_STD;
    f.std.address = pc;
    f.std.thread_id = 7;
    f.std.rawbytes = frames_bytes_of(bytes, nbytes);
    f.std.pre = pre;
    f.std.npre = npre;
    f.std.post = post;
    f.std.npost = npost;
    f.std.has_post = 1;
    return f;
}

static uint64_t reg64(frames_replay_regs *m, const char *name, int want_known) {
    uint8_t v[64];
    size_t n = 0;
    assert_int_equal(frames_replay_regs_get(m, 7, name, v, sizeof v, &n), want_known);
    return tu_le(v, n < 8 ? (int)n : 8);
}

/* Writes through aliases on x86-64: each step's expected value worked out by hand. */
static void test_x64_aliasing(void **state) {
    frames_replay_regs *m;
    frames_error err;
    frames_operand op;
    frames_frame f;
    uint8_t v[32];
    (void)state;
    assert_int_equal(frames_replay_regs_open(&m, FRAMES_ARCH_I386, 64, 0, NULL, &err), 0);
    /* nothing seen: unknown, never zero */
    reg64(m, "rax", 0);
    assert_int_equal(frames_replay_regs_get(m, 7, "xyz", v, sizeof v, NULL), FRAMES_E_REPLAY_REG);
    tu_put_le64(v, 0x1122334455667788ull);
    op = tu_reg_op("RAX", v, 8, 0, 1);
    f = one_frame(0x1000, NULL, 0, &op, 1, "\x90", 1);
    assert_int_equal(frames_replay_regs_apply_frame(m, &f), 0);
    assert_true(reg64(m, "rax", 1) == 0x1122334455667788ull);
    assert_true(reg64(m, "EAX", 1) == 0x55667788ull);
    assert_true(reg64(m, "ax", 1) == 0x7788);
    assert_true(reg64(m, "al", 1) == 0x88);
    assert_true(reg64(m, "ah", 1) == 0x77);
    v[0] = 0xAA;   /* AH write: byte 1 only */
    op = tu_reg_op("AH", v, 1, 0, 1);
    f = one_frame(0x1001, NULL, 0, &op, 1, "\x90", 1);
    frames_replay_regs_apply_frame(m, &f);
    assert_true(reg64(m, "rax", 1) == 0x112233445566AA88ull);
    tu_put_le16(v, 0xBEEF);   /* AX: bytes 0-1, upper kept */
    op = tu_reg_op("AX", v, 2, 0, 1);
    f = one_frame(0x1002, NULL, 0, &op, 1, "\x90", 1);
    frames_replay_regs_apply_frame(m, &f);
    assert_true(reg64(m, "rax", 1) == 0x112233445566BEEFull);
    tu_put_le32(v, 0xCAFEF00Du);   /* EAX: zero-extends on x86-64 */
    op = tu_reg_op("EAX", v, 4, 0, 1);
    f = one_frame(0x1003, NULL, 0, &op, 1, "\x90", 1);
    frames_replay_regs_apply_frame(m, &f);
    assert_true(reg64(m, "rax", 1) == 0xCAFEF00Dull);
    /* R8B read in the pre list: only that byte becomes known */
    v[0] = 0x5A;
    op = tu_reg_op("R8B", v, 1, 1, 0);
    f = one_frame(0x1004, &op, 1, NULL, 0, "\x90", 1);
    frames_replay_regs_apply_frame(m, &f);
    assert_true(reg64(m, "r8b", 1) == 0x5A);
    assert_true(reg64(m, "r8", 0) == 0x5A);   /* partly known: the known byte, rest 0 */
    /* XMM1 by a legacy SSE instruction keeps ymm1h; by a VEX one (c5 ...) clears it */
    memset(v, 0x11, 32);
    op = tu_reg_op("YMM1", v, 32, 0, 1);
    f = one_frame(0x1005, NULL, 0, &op, 1, "\xc5\xfd\x6f\xca", 4);
    frames_replay_regs_apply_frame(m, &f);
    memset(v, 0x22, 16);
    op = tu_reg_op("XMM1", v, 16, 0, 1);
    f = one_frame(0x1006, NULL, 0, &op, 1, "\x66\x0f\x6f\xca", 4);
    frames_replay_regs_apply_frame(m, &f);
    assert_true(reg64(m, "ymm1h", 1) == 0x1111111111111111ull);
    f = one_frame(0x1007, NULL, 0, &op, 1, "\xc5\xf9\x6f\xca", 4);
    frames_replay_regs_apply_frame(m, &f);
    assert_true(reg64(m, "ymm1h", 1) == 0);
    assert_true(reg64(m, "xmm1", 1) == 0x2222222222222222ull);
    /* eflags is 32 bits as gdb has it; a 64-bit RFLAGS write fills it */
    tu_put_le64(v, 0x246);
    op = tu_reg_op("RFLAGS", v, 8, 0, 1);
    f = one_frame(0x1008, NULL, 0, &op, 1, "\x90", 1);
    frames_replay_regs_apply_frame(m, &f);
    assert_true(reg64(m, "eflags", 1) == 0x246);
    assert_int_equal(frames_replay_regs_at(m, 17)->bits, 32);
    /* the table is gdb's order */
    assert_string_equal(frames_replay_regs_at(m, 0)->name, "rax");
    assert_string_equal(frames_replay_regs_at(m, 7)->name, "rsp");
    assert_string_equal(frames_replay_regs_at(m, 16)->name, "rip");
    assert_string_equal(frames_replay_regs_at(m, 24)->name, "fs_base");
    frames_replay_regs_close(m);
}

/* AArch64: w writes zero-extend; ARM: r13 is sp. */
static void test_arm_aliasing(void **state) {
    frames_replay_regs *m;
    frames_error err;
    frames_operand op;
    frames_frame f;
    uint8_t v[8];
    (void)state;
    assert_int_equal(frames_replay_regs_open(&m, FRAMES_ARCH_AARCH64, 0, 0, NULL, &err), 0);
    tu_put_le64(v, 0xFFFFFFFFFFFFFFFFull);
    op = tu_reg_op("X3", v, 8, 0, 1);
    f = one_frame(0x1000, NULL, 0, &op, 1, NULL, 0);
    frames_replay_regs_apply_frame(m, &f);
    tu_put_le32(v, 7);
    op = tu_reg_op("W3", v, 4, 0, 1);
    f = one_frame(0x1004, NULL, 0, &op, 1, NULL, 0);
    frames_replay_regs_apply_frame(m, &f);
    assert_true(reg64(m, "x3", 1) == 7);
    reg64(m, "x4", 0);
    frames_replay_regs_close(m);
    assert_int_equal(frames_replay_regs_open(&m, FRAMES_ARCH_ARM, 0, 0, NULL, &err), 0);
    tu_put_le32(v, 0x8000);
    op = tu_reg_op("R13", v, 4, 1, 0);
    f = one_frame(0x1000, &op, 1, NULL, 0, NULL, 0);
    frames_replay_regs_apply_frame(m, &f);
    assert_true(reg64(m, "sp", 1) == 0x8000);
    assert_string_equal(frames_replay_regs_at(m, 16)->name, "cpsr");
    frames_replay_regs_close(m);
}

/* Frames read to the end of data[0, len): their count; *last, *lastlen: the offset and
   payload size of the last one; *cut: frames_reader_truncated after the pass. */
static uint64_t read_to_end(const uint8_t *data, size_t len, uint64_t *last, uint64_t *lastlen, int *cut) {
    frames_reader *rd;
    frames_error err;
    frames_raw raw;
    uint64_t n = 0;
    int got;
    assert_int_equal(frames_reader_open_memory(&rd, data, len, NULL, &err), 0);
    assert_int_equal(frames_reader_truncated(rd), 0);   /* nothing read: not known to be cut */
    while ((got = frames_reader_next_raw(rd, &raw)) == 1) {
        n++;
        *last = raw.offset;
        *lastlen = raw.payload.len;
    }
    assert_int_equal(got, 0);
    *cut = frames_reader_truncated(rd);
    frames_reader_close(rd);
    return n;
}

/* frames_reader_truncated, which the index build asks instead of frames_reader_info_get
   (whose TOC check reads every size word again): shared vectors whole are not cut; cut
   inside the last record's size word or payload, a pass reads one frame less and says
   cut, as a fresh reader's scan (frames_reader_info_get) does, at that record. */
static void test_reader_truncated(void **state) {
    static const char *const names[] = {"r02_all_frame_types_x86_64.frames", "r05_toc_m4_n10_mips.frames",
                                        "r09_unfinished_no_finish_call.frames", "r10_default_m_n10001.frames",
                                        "r11_pintraces_like_x86.frames"};
    size_t v, k;
    (void)state;
    for (v = 0; v < sizeof names / sizeof names[0]; v++) {
        char rel[128];
        size_t len;
        uint8_t *data;
        uint64_t n, last = 0, lastlen = 0, l2, ll2;
        int cut;
        snprintf(rel, sizeof rel, "vectors/frames/%s", names[v]);
        data = tu_read_file(tu_shared(rel), &len);
        assert_non_null(data);
        n = read_to_end(data, len, &last, &lastlen, &cut);
        assert_true(n > 0);
        assert_int_equal(cut, 0);
        for (k = 0; k < 2; k++) {
            size_t at_byte = (size_t)(k == 0 ? last + 3 : last + 8 + lastlen - 1);
            frames_reader *rd;
            frames_reader_info ri;
            frames_error err;
            assert_int_equal(read_to_end(data, at_byte, &l2, &ll2, &cut), n - 1);
            assert_int_equal(cut, 1);
            assert_int_equal(frames_reader_open_memory(&rd, data, at_byte, NULL, &err), 0);
            assert_int_equal(frames_reader_info_get(rd, &ri), 0);
            assert_true(ri.truncated);
            assert_int_equal(ri.truncated_offset, last);
            assert_int_equal(frames_reader_truncated(rd), 1);   /* the scan found it too */
            frames_reader_close(rd);
        }
        free(data);
    }
}

/* frames_reader_memory (the second segment's reader reads the first's bytes): a mapped
   trace gives the file's bytes, a reader over memory the same pointer, one reading a
   stream nothing. */
static void test_reader_memory(void **state) {
    const char *path = tu_shared("vectors/frames/r10_default_m_n10001.frames");
    frames_reader *rd, *rd2;
    frames_error err;
    size_t len, n, n2;
    uint8_t *data = tu_read_file(path, &len);
    const uint8_t *mem, *mem2;
    FILE *f;
    (void)state;
    assert_non_null(data);
    assert_int_equal(frames_reader_open_path(&rd, path, NULL, &err), FRAMES_OK);
    mem = frames_reader_memory(rd, &n);
    assert_non_null(mem);
    assert_int_equal(n, len);
    assert_memory_equal(mem, data, len);
    assert_int_equal(frames_reader_open_memory(&rd2, mem, n, NULL, &err), FRAMES_OK);
    mem2 = frames_reader_memory(rd2, &n2);
    assert_ptr_equal(mem2, mem);
    assert_int_equal(n2, n);
    frames_reader_close(rd2);
    frames_reader_close(rd);
    f = fopen(path, "rb");
    assert_non_null(f);
    assert_int_equal(frames_reader_open_file(&rd, f, NULL, &err), FRAMES_OK);
    assert_int_equal(frames_reader_in_memory(rd), 0);   /* a FILE is read as a stream */
    assert_null(frames_reader_memory(rd, &n));
    assert_int_equal(n, 0);
    frames_reader_close(rd);
    fclose(f);
    free(data);
}

#ifdef TU_RECORD_BUILT

/* ---- the live program under gdb and its recording */

static const char prog_src[] =
    "        .data\n"
    "        .globl g\n"
    "g:      .quad 0\n"
    "        .text\n"
    "        .globl _start\n"
    "_start:\n"
    "        mov $0x1122334455667788, %rax\n"
    "        mov %eax, %ebx\n"          /* zero-extends: rbx = 0x55667788 */
    "        mov $5, %ecx\n"
    "1:      add %rcx, %rax\n"
    "        mov %al, %bh\n"            /* a write of byte 1 of rbx */
    "        mov %rax, g(%rip)\n"       /* the global the watchpoint sees */
    "        push %rax\n"
    "        pop %rdx\n"
    "        mov %cx, %dx\n"            /* 16-bit write: upper rdx bytes kept */
    "        dec %ecx\n"
    "        jnz 1b\n"
    "        mov g(%rip), %rsi\n"
    "        mov $60, %eax\n"
    "        xor %edi, %edi\n"
    "        syscall\n";

#define NSTEPS 46          /* instructions before the exit syscall */
#define NREGS 9
static const char *const regs[NREGS] = {"rax", "rbx", "rcx", "rdx", "rsi", "rdi", "rsp", "rip", "eflags"};

typedef struct live_state {
    uint64_t reg[NREGS];
    uint8_t g[8], stack[8], code[8];   /* the global, the 8 bytes below rsp, at pc */
} live_state;

static live_state live[NSTEPS];
static uint64_t g_addr;
static char trace[512];

static int setup(void **state) {
    char *out;
    int st;
    (void)state;
    if (tu_workdir_make("frames-replay") != 0) return -1;
    if (tu_write_file(at("p.S"), prog_src, strlen(prog_src)) != 0) return -1;
    out = tu_run(&st, "cc -nostdlib -static -o %s/p %s 2>&1", dir, at("p.S"));
    free(out);
    if (st) return -1;
    snprintf(trace, sizeof trace, "%s", at("p.frames"));
    out = tu_run(&st, "LC_ALL=C %s record -f -o %s -- %s/p 2>&1", tu_frames_bin(), trace, dir);
    if (st) fprintf(stderr, "%s", out);
    free(out);
    return st ? -1 : 0;
}

/* gdb on the live program: the state before each of the first NSTEPS instructions. */
static void run_gdb(void) {
    FILE *f = fopen(at("cmds.gdb"), "w");
    char *out, *p;
    int i, k;
    assert_non_null(f);
    fprintf(f, "set pagination off\nstarti\nprintf \"G %%lx\\n\", &g\n");
    for (i = 0; i < NSTEPS; i++) {
        fprintf(f, "printf \"S %d\\n\"\n", i);
        for (k = 0; k < NREGS; k++) fprintf(f, "printf \"R %s %%lx\\n\", $%s\n", regs[k], regs[k]);
        fprintf(f, "x/8xb &g\nx/8xb $rsp-8\nx/8xb $pc\nstepi\n");
    }
    fclose(f);
    out = tu_run_ok("gdb", "LC_ALL=C gdb -batch -nx -x %s %s/p 2>&1", at("cmds.gdb"), dir);
    i = -1;
    k = 0;
    for (p = out; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
        unsigned b[8];
        char name[16];
        unsigned long long v;
        int n;
        if (sscanf(p, "G %llx", &v) == 1) g_addr = v;
        else if (sscanf(p, "S %d", &n) == 1) { i = n; k = 0; }
        else if (i >= 0 && sscanf(p, "R %15s %llx", name, &v) == 2) {
            for (n = 0; n < NREGS; n++) if (!strcmp(name, regs[n])) live[i].reg[n] = v;
        } else if (i >= 0 && sscanf(p, "0x%llx%*[^\t\n]\t0x%x\t0x%x\t0x%x\t0x%x\t0x%x\t0x%x\t0x%x\t0x%x", &v,
                                    &b[0], &b[1], &b[2], &b[3], &b[4], &b[5], &b[6], &b[7]) == 9) {
            for (n = 0; n < 8; n++) (k == 0 ? live[i].g : k == 1 ? live[i].stack : live[i].code)[n] = (uint8_t)b[n];
            k++;
        }
    }
    free(out);
    assert_true(g_addr != 0);
    assert_true(i == NSTEPS - 1);
}

/* "name":"0x..." in a JSON object: 1 and *v, or 0 when absent. */
static int json_hex(const char *json, const char *key, uint64_t *v) {
    char pat[64];
    const char *p;
    snprintf(pat, sizeof pat, "\"%s\":\"0x", key);
    p = strstr(json, pat);
    if (!p) return 0;
    *v = strtoull(p + strlen(pat), NULL, 16);
    return 1;
}

/* The "bytes" of the n-th memory entry: 8 bytes, known[i] 0 where "??". */
static void json_bytes(const char *json, int nth, uint8_t *bytes, uint8_t *known) {
    const char *p = json;
    int i;
    for (i = 0; i <= nth; i++) {
        p = strstr(p, "\"bytes\":\"");
        assert_non_null(p);
        p += 9;
    }
    for (i = 0; i < 8; i++, p += 2) {
        known[i] = p[0] != '?';
        bytes[i] = known[i] ? (uint8_t)strtoul((char[]){p[0], p[1], 0}, NULL, 16) : 0;
    }
}

/* frames state at every instruction equals gdb on the live program (rsp and stack
   addresses moved by the one offset Valgrind's stack has); registers the trace has not
   shown yet are absent, never wrong. */
static void test_state_equals_live_gdb(void **state) {
    int i, k, compared = 0;
    uint64_t off = 0, v;
    int have_off = 0;
    (void)state;
    run_gdb();
    for (i = 0; i < NSTEPS; i++) {
        char *out = tu_run_ok("frames state", "%s state %s --at %d --json --mem 0x%llx:8 --mem 0x%llx:8",
                              tu_frames_bin(), trace, i, (unsigned long long)g_addr,
                              (unsigned long long)live[i].reg[7]);
        uint8_t bytes[8], known[8];
        char *full;
        if (!have_off && json_hex(out, "rsp", &v)) {
            off = live[i].reg[6] - v;
            have_off = 1;
        }
        for (k = 0; k < NREGS; k++) {
            if (!json_hex(out, regs[k], &v)) continue;
            if (k == 6) v += off;
            if (k == 8) v &= ~0x200ull;   /* IF: the kernel's, not in Valgrind's flags */
            if (v != (k == 8 ? live[i].reg[k] & ~0x200ull : live[i].reg[k]))
                fail_msg("instruction %d: %s is 0x%llx in the trace, 0x%llx live", i, regs[k],
                         (unsigned long long)v, (unsigned long long)live[i].reg[k]);
            compared++;
        }
        json_bytes(out, 0, bytes, known);
        for (k = 0; k < 8; k++) {
            assert_true(known[k]);   /* the first write shows the old value */
            assert_int_equal(bytes[k], live[i].g[k]);
        }
        /* code: the instruction bytes the trace carries (at least the one at pc) */
        json_bytes(out, 1, bytes, known);
        assert_true(known[0]);
        for (k = 0; k < 8; k++)
            if (known[k]) { assert_int_equal(bytes[k], live[i].code[k]); compared++; }
        /* the 8 bytes below rsp, by the trace's rsp */
        if (have_off && json_hex(out, "rsp", &v)) {
            full = tu_run_ok("frames state", "%s state %s --at %d --json --mem 0x%llx:8", tu_frames_bin(),
                             trace, i, (unsigned long long)(v - 8));
            json_bytes(full, 0, bytes, known);
            for (k = 0; k < 8; k++)
                if (known[k] && bytes[k] != live[i].stack[k])
                    fail_msg("instruction %d: byte %d below rsp is 0x%02x in the trace, 0x%02x live", i, k,
                             bytes[k], live[i].stack[k]);
                else if (known[k])
                    compared++;
            free(full);
        }
        /* after the loop's first round every register the loop uses is known */
        if (i == 20)
            for (k = 0; k < NREGS; k++)
                if (k != 4 && k != 5 && !json_hex(out, regs[k], &v))
                    fail_msg("instruction 20: %s unknown", regs[k]);
        free(out);
    }
    assert_true(have_off);
    assert_true(compared > 200);
}

/* frames history --mem g: the writes are what a gdb watchpoint on the live run stops at
   (the new values, in order), and each write's pc is the store instruction's. */
static void test_history_equals_watchpoint(void **state) {
    FILE *f = fopen(at("watch.gdb"), "w");
    char *live_out, *hist, *p;
    uint64_t watch[32], v;
    int nw = 0, nh = 0;
    (void)state;
    assert_non_null(f);
    fprintf(f, "set pagination off\nset can-use-hw-watchpoints 1\nstarti\nwatch *(long *)&g\n");
    for (nw = 0; nw < 5; nw++) fprintf(f, "continue\nprintf \"W %%lx\\n\", *(long *)&g\n");
    fclose(f);
    live_out = tu_run(&nw, "LC_ALL=C gdb -batch -nx -x %s %s/p 2>&1", at("watch.gdb"), dir);
    nw = 0;
    for (p = live_out; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
        if (sscanf(p, "W %llx", (unsigned long long *)&v) == 1 && nw < 32) watch[nw++] = v;
    free(live_out);
    hist = tu_run_ok("frames history", "%s history %s --mem 0x%llx:8 --json", tu_frames_bin(), trace,
                     (unsigned long long)g_addr);
    for (p = hist; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
        if (!strstr(p, "\"access\":\"write\"") || strstr(p, "\"access\":\"write\"") > strchr(p, '\n')) continue;
        assert_true(json_hex(p, "value", &v));
        assert_true(nh < nw);
        assert_true(v == watch[nh]);
        nh++;
    }
    /* the final read (mov g, %rsi) is there too */
    assert_non_null(strstr(hist, "\"access\":\"read\""));
    free(hist);
    assert_int_equal(nh, 5);
    assert_int_equal(nw, 5);
}

/* The API: find answers forward and backward, equal to what history lists. */
static void test_find(void **state) {
    frames_replay *r;
    frames_error err;
    frames_replay_query q;
    uint64_t idx, first;
    frames_replay_insn in;
    (void)state;
    assert_int_equal(frames_replay_open(&r, trace, NULL, &err), 0);
    memset(&q, 0, sizeof q);
    q.what = FRAMES_REPLAY_MEM_WRITE;
    q.addr = g_addr;
    q.len = 8;
    assert_int_equal(frames_replay_find(r, &q, 0, 1, &first, &err), 0);
    assert_int_equal(frames_replay_goto(r, first, &err), 0);
    assert_int_equal(frames_replay_insn_get(r, &in), 0);
    /* the next write is one loop round (8 instructions) later; backward comes back */
    assert_int_equal(frames_replay_find(r, &q, first, 1, &idx, &err), 0);
    assert_true(idx == first + 8);
    assert_int_equal(frames_replay_find(r, &q, idx, -1, &idx, &err), 0);
    assert_true(idx == first);
    assert_int_equal(frames_replay_find(r, &q, first, -1, &idx, &err), FRAMES_REPLAY_NONE);
    /* the same pc executes every round */
    q.what = FRAMES_REPLAY_PC;
    q.pc = in.pc;
    assert_int_equal(frames_replay_find(r, &q, first, 1, &idx, &err), 0);
    assert_true(idx == first + 8);
    /* eax (rax) written by add before the store */
    q.what = FRAMES_REPLAY_REG_WRITE;
    q.reg = "al";
    assert_int_equal(frames_replay_find(r, &q, first, -1, &idx, &err), 0);
    assert_true(idx == first - 2);
    q.reg = "nosuch";
    assert_int_equal(frames_replay_find(r, &q, first, -1, &idx, &err), FRAMES_E_REPLAY_REG);
    frames_replay_close(r);
}

/* ---- bad input */


/* A cut trace: the index covers its complete frames; a changed trace makes the index
   stale (refused without build_index, rebuilt with it); a hostile index never crashes. */
static void test_cut_and_stale(void **state) {
    frames_replay *r;
    frames_replay_options o;
    frames_replay_info info;
    frames_error err;
    size_t len;
    unsigned char *data = tu_read_file(trace, &len);
    char cut[512], *out;
    int st;
    (void)state;
    assert_non_null(data);
    snprintf(cut, sizeof cut, "%s", at("cut.frames"));
    assert_int_equal(tu_write_file(cut, data, len * 2 / 3), 0);
    out = tu_run(&st, "%s state %s --at 5 --json 2>&1", tu_frames_bin(), cut);
    assert_int_equal(st, 0);
    assert_non_null(strstr(out, "cut"));
    assert_non_null(strstr(out, "\"index\":5"));
    free(out);
    frames_replay_options_default(&o);
    o.build_index = 0;
    assert_int_equal(frames_replay_open(&r, cut, &o, &err), 0);
    frames_replay_info_get(r, &info);
    assert_true(info.truncated);
    assert_true(info.instructions > 0 && info.instructions < NSTEPS);
    frames_replay_close(r);
    /* the trace changes: stale */
    assert_int_equal(tu_write_file(cut, data, len / 2), 0);
    assert_int_equal(frames_replay_open(&r, cut, &o, &err), FRAMES_E_REPLAY_INDEX);
    assert_non_null(strstr(err.message, "stale"));
    o.build_index = 1;
    assert_int_equal(frames_replay_open(&r, cut, &o, &err), 0);
    frames_replay_info_get(r, &info);
    assert_true(info.index_built);
    frames_replay_close(r);
    unlink(cut);
    snprintf(cut + strlen(cut), sizeof cut - strlen(cut), ".fridx");
    unlink(cut);
    free(data);
}

/* Every byte of the index past its stamp set to 0xff or 0x00 in turn (and the file cut
   short): open fails with FRAMES_E_REPLAY_INDEX or works, and the queries stay in bounds. */
static void test_hostile_index(void **state) {
    char ix[600];
    unsigned char *good;
    size_t len, i;
    int pass;
    (void)state;
    snprintf(ix, sizeof ix, "%s.fridx", trace);
    good = tu_read_file(ix, &len);
    assert_non_null(good);
    for (pass = 0; pass < 3; pass++)
        for (i = 56; i < len; i += (len - 56) / 97 + 1) {
            unsigned char *bad = (unsigned char *)malloc(len);
            frames_replay *r;
            frames_replay_options o;
            frames_error err;
            frames_replay_query q;
            uint8_t b[16], k[16];
            uint64_t idx;
            int rc;
            memcpy(bad, good, len);
            if (pass < 2) memset(bad + i, pass ? 0x00 : 0xff, len - i < 8 ? len - i : 8);
            assert_int_equal(tu_write_file(ix, bad, pass == 2 ? i : len), 0);
            frames_replay_options_default(&o);
            o.build_index = 0;
            rc = frames_replay_open(&r, trace, &o, &err);
            if (pass == 2) assert_int_not_equal(rc, FRAMES_OK);
            if (rc == FRAMES_OK) {
                frames_replay_goto(r, 30, &err);
                frames_replay_mem_get(r, g_addr, b, k, 16);
                memset(&q, 0, sizeof q);
                q.what = FRAMES_REPLAY_MEM_ACCESS;
                q.addr = g_addr;
                q.len = 8;
                frames_replay_find(r, &q, 0, 1, &idx, &err);
                frames_replay_find(r, &q, 40, -1, &idx, &err);
                frames_replay_close(r);
            } else {
                assert_int_equal(rc, FRAMES_E_REPLAY_INDEX);
            }
            free(bad);
        }
    assert_int_equal(tu_write_file(ix, good, len), 0);
    free(good);
}

/* The compressed trace answers as the plain one (index built over the .frames.zst). */
static void test_compressed_same_state(void **state) {
    char *plain, *zst;
    int i;
    (void)state;
    free(tu_run_ok("frames compress", "%s compress %s -o %s.zst --chunk 4K", tu_frames_bin(), trace, trace));
    for (i = 0; i < NSTEPS; i += 9) {
        plain = tu_run_ok("state", "%s state %s --at %d --json --mem 0x%llx:8", tu_frames_bin(), trace, i,
                          (unsigned long long)g_addr);
        zst = tu_run_ok("state", "%s state %s.zst --at %d --json --mem 0x%llx:8", tu_frames_bin(), trace, i,
                        (unsigned long long)g_addr);
        assert_string_equal(plain, zst);
        free(plain);
        free(zst);
    }
    plain = tu_run_ok("history", "%s history %s --reg rdx --json", tu_frames_bin(), trace);
    zst = tu_run_ok("history", "%s history %s.zst --reg rdx --json", tu_frames_bin(), trace);
    assert_string_equal(plain, zst);
    free(plain);
    free(zst);
}

/* The index's build pass reads std_frames in writers' layout from their bytes and hands
   any other record to the decoder: the recording rewritten with every operand's taint
   as a taint_id (a shape the byte reader leaves to the decoder; the model ignores taint)
   gets the same index, byte for byte but for the trace's stamp. */
static void test_decoder_path_same_index(void **state) {
    frames_reader *r;
    frames_writer *w;
    frames_writer_options wo;
    frames_frame f;
    frames_error err;
    char tainted[600];
    unsigned char *a, *b;
    size_t na, nb, i;
    int rc;
    (void)state;
    snprintf(tainted, sizeof tainted, "%s", at("tainted.frames"));
    assert_int_equal(frames_reader_open_path(&r, trace, NULL, &err), FRAMES_OK);
    frames_writer_options_like(r, &wo);
    assert_int_equal(frames_writer_open_path(&w, tainted, &wo, frames_reader_meta(r), &err), FRAMES_OK);
    while ((rc = frames_reader_next(r, &f)) > 0) {
        frames_operand *ops = NULL;
        uint32_t n = f.kind == FRAMES_KIND_STD ? f.std.npre + f.std.npost : 0, k;
        if (n) {
            ops = (frames_operand *)malloc(n * sizeof *ops);
            assert_non_null(ops);
            for (k = 0; k < n; k++) {
                ops[k] = k < f.std.npre ? f.std.pre[k] : f.std.post[k - f.std.npre];
                ops[k].taint.set = FRAMES_TAINT_ID;
                ops[k].taint.id = 7;
            }
            f.std.pre = ops;
            f.std.post = ops + f.std.npre;
        }
        assert_int_equal(frames_writer_add(w, &f), FRAMES_OK);
        free(ops);
    }
    assert_int_equal(rc, 0);
    assert_int_equal(frames_writer_close(w), FRAMES_OK);
    frames_reader_close(r);
    free(tu_run_ok("state", "%s state %s --at 0", tu_frames_bin(), trace));
    free(tu_run_ok("state", "%s state %s --at 0", tu_frames_bin(), tainted));
    a = tu_read_file(at("p.frames.fridx"), &na);
    b = tu_read_file(at("tainted.frames.fridx"), &nb);
    assert_non_null(a);
    assert_non_null(b);
    assert_int_equal(na, nb);
    assert_true(na > 160);
    for (i = 16; i < 56; i++) a[i] = b[i];   /* size, mtime and hashes of the trace */
    assert_memory_equal(a, b, na);
    free(a);
    free(b);
    {   /* 46 instructions: no block boundary to cut at, one segment */
        const uint64_t none[1] = {0};
        same_index_split(trace, at("p.frames.fridx"), none, 1, 0);
        same_index_split(tainted, at("tainted.frames.fridx"), none, 1, 0);
    }
}

/* A recording of a dynamically linked program (/bin/true: the loader runs some 10^5
   instructions, with calls, stack and TLS accesses): the index built in two segments,
   cut at several block boundaries and by default, is byte for byte the one-thread one,
   also for a copy of it cut inside a record (the second segment reads the cut end). */
static void test_split_build_recorded(void **state) {
    char rec[600], ix[700], cut[600], cutix[700], *out;
    frames_replay *r;
    frames_replay_options o;
    frames_replay_info info;
    frames_error err;
    unsigned char *data;
    size_t len;
    uint64_t splits[3];
    int st;
    (void)state;
    snprintf(rec, sizeof rec, "%s", at("true.frames"));
    snprintf(ix, sizeof ix, "%s.fridx", rec);
    out = tu_run(&st, "LC_ALL=C %s record -f -o %s -- /bin/true 2>&1", tu_frames_bin(), rec);
    if (st) fprintf(stderr, "%s", out);
    free(out);
    assert_int_equal(st, 0);
    frames_replay_options_default(&o);
    o.build_threads = 1;
    assert_int_equal(frames_replay_open(&r, rec, &o, &err), FRAMES_OK);
    frames_replay_info_get(r, &info);
    frames_replay_close(r);
    assert_true(info.instructions > 20 * 256);
    /* by default, at a third, and inside the record of instruction N - 300 (the next
       boundary is at most N - 299 + 255) */
    splits[0] = 0;
    splits[1] = insn_offset(rec, info.instructions / 3);
    splits[2] = insn_offset(rec, info.instructions - 300) + 1;
    same_index_split(rec, ix, splits, 3, 3);
    same_index_blocks(rec, ix, 3);
    /* cut inside the record of the instruction 200 before the end */
    data = tu_read_file(rec, &len);
    assert_non_null(data);
    snprintf(cut, sizeof cut, "%s", at("truecut.frames"));
    snprintf(cutix, sizeof cutix, "%s.fridx", cut);
    assert_int_equal(tu_write_file(cut, data, (size_t)insn_offset(rec, info.instructions - 200) + 12), 0);
    free(data);
    assert_int_equal(frames_replay_open(&r, cut, &o, &err), FRAMES_OK);
    frames_replay_info_get(r, &info);
    frames_replay_close(r);
    assert_true(info.truncated);
    splits[1] = insn_offset(cut, info.instructions / 3);
    splits[2] = insn_offset(cut, info.instructions - 300) + 1;
    same_index_split(cut, cutix, splits, 3, 3);
    unlink(rec);
    unlink(ix);
    unlink(cut);
    unlink(cutix);
}

#endif /* TU_RECORD_BUILT */

/* Every frames vector of the shared set: the index built in two segments (cut by
   default and at up to 8 block boundaries) is byte for byte the one-thread one; a
   vector that does not open does not in two segments either, with the same error. */
static void test_split_build_vectors(void **state) {
    DIR *d = opendir(tu_shared("vectors/frames"));
    struct dirent *e;
    size_t tried = 0, split = 0;
    (void)state;
    assert_non_null(d);
    while ((e = readdir(d)) != NULL) {
        char path[8500], ix[700];
        frames_replay *r;
        frames_replay_options o;
        frames_replay_info info;
        frames_error err;
        int rc, rc2;
        size_t n = strlen(e->d_name);
        if (n < 7 || strcmp(e->d_name + n - 7, ".frames") != 0) continue;
        snprintf(path, sizeof path, "%s/%s", tu_shared("vectors/frames"), e->d_name);
        snprintf(ix, sizeof ix, "%s", tu_tmp_path(".fridx"));
        frames_replay_options_default(&o);
        o.index_path = ix;
        o.build_threads = 1;
        rc = frames_replay_open(&r, path, &o, &err);
        o.build_threads = 2;
        o.index_path = tu_tmp_path(".fridx");
        if (rc != FRAMES_OK) {
            assert_int_equal(frames_replay_open(&r, path, &o, &err), rc);
            unlink(o.index_path);
            continue;
        }
        frames_replay_info_get(r, &info);
        frames_replay_close(r);
        tried++;
        if (info.instructions > 256) {
            uint64_t k = (info.instructions - 1) / 256;
            same_index_blocks(path, ix, k < 8 ? k : 8);
            split++;
        } else {
            const uint64_t none[1] = {0};
            same_index_split(path, ix, none, 1, 0);
        }
        rc2 = unlink(ix);
        assert_int_equal(rc2, 0);
    }
    closedir(d);
    assert_true(tried >= 10);
    assert_true(split >= 2);
}

/* Two threads over several keyframes (5,000 instructions, a keyframe every 2,048): each
   thread's rax at any position is the value its own last write gave, worked out here. */
static void test_threads_and_keyframes(void **state) {
    const char *path = tu_tmp_path(".frames");
    frames_writer *w;
    frames_replay *r;
    frames_error err;
    frames_operand op;
    frames_frame f;
    frames_replay_info info;
    uint8_t v[8], vals[5000][8];
    uint64_t tids[4];
    size_t n;
    int i, pos;
    frames_writer_options wo;
    char ix[600];
    (void)state;
    frames_writer_options_default(&wo);
    wo.machine = 64;   /* x86-64 */
    assert_int_equal(frames_writer_open_path(&w, path, &wo, NULL, &err), 0);
    for (i = 0; i < 5000; i++) {
        tu_put_le64(vals[i], 0x1000000ull * (uint64_t)i + 7);
        op = tu_reg_op("RAX", vals[i], 8, 0, 1);
        f = one_frame(0x2000 + (uint64_t)(i % 50), NULL, 0, &op, 1, "\x90", 1);
        f.std.thread_id = (uint64_t)(i % 3 == 0 ? 100 : 200);
        assert_int_equal(frames_writer_add(w, &f), 0);
    }
    assert_int_equal(frames_writer_close(w), 0);
    assert_int_equal(frames_replay_open(&r, path, NULL, &err), 0);
    frames_replay_info_get(r, &info);
    assert_true(info.instructions == 5000);
    /* in two segments, cut at every block boundary: thread 200 after 100 (256 k % 3 ==
       1), 100 after 200 (0) and 200 after 200 (2); an offset after the last boundary
       (one segment) */
    snprintf(ix, sizeof ix, "%s.fridx", path);
    same_index_blocks(path, ix, 19);
    {
        const uint64_t late[1] = {insn_offset(path, 4999)};
        same_index_split(path, ix, late, 1, 0);
    }
    assert_int_equal(frames_replay_threads(r, tids, 4), 2);
    assert_true(tids[0] == 100 && tids[1] == 200);
    for (pos = 0; pos <= 5000; pos += 137) {
        int last100 = -1, last200 = -1;
        for (i = 0; i < pos; i++) *(i % 3 == 0 ? &last100 : &last200) = i;
        assert_int_equal(frames_replay_goto(r, (uint64_t)pos, &err), 0);
        assert_int_equal(frames_replay_reg_get(r, 100, "rax", v, sizeof v, &n), last100 >= 0);
        if (last100 >= 0) assert_memory_equal(v, vals[last100], 8);
        assert_int_equal(frames_replay_reg_get(r, 200, "rax", v, sizeof v, &n), last200 >= 0);
        if (last200 >= 0) assert_memory_equal(v, vals[last200], 8);
    }
    frames_replay_close(r);
    free(tu_run(&i, "rm -f %s %s.fridx", path, path));
}

/* One pc after another reading and writing memory at addresses whose varints grow from
   1 to 6 bytes (the index's build takes most records through a template of an earlier
   one of the same pc: same bytes but for values and addresses): the last write to and
   the last read of each address before the end are the instructions that made them, and
   the value read back is the one written. */
static void test_templates_memory(void **state) {
    const char *path = tu_tmp_path(".frames");
    static const uint64_t bases[3] = {0x40, 0x4000, 0x7ffd00000000ull};
    frames_writer *w;
    frames_replay *r;
    frames_error err;
    frames_operand ops[2];
    frames_frame f;
    frames_replay_query q;
    uint8_t val[8], got[8], known[8];
    uint64_t idx;
    int i;
    frames_writer_options wo;
    (void)state;
    frames_writer_options_default(&wo);
    wo.machine = 64;
    assert_int_equal(frames_writer_open_path(&w, path, &wo, NULL, &err), 0);
    for (i = 0; i < 3000; i++) {
        uint64_t b = bases[i % 3] + 16 * (uint64_t)i;
        tu_put_le64(val, 0x0101010101010101ull * (uint64_t)(i & 0xFF) + (uint64_t)i);
        ops[0] = tu_mem_op(b + 8, val, 8, 1, 0);
        ops[1] = tu_mem_op(b, val, 8, 0, 1);
        f = one_frame(0x3000 + (uint64_t)(i % 4) * 3, &ops[0], 1, &ops[1], 1, "\x48\x89\x07", 3);
        assert_int_equal(frames_writer_add(w, &f), 0);
    }
    assert_int_equal(frames_writer_close(w), 0);
    assert_int_equal(frames_replay_open(&r, path, NULL, &err), 0);
    for (i = 0; i < 3000; i += 7) {
        uint64_t b = bases[i % 3] + 16 * (uint64_t)i;
        memset(&q, 0, sizeof q);
        q.what = FRAMES_REPLAY_MEM_WRITE;
        q.addr = b;
        q.len = 8;
        assert_int_equal(frames_replay_find(r, &q, 3000, -1, &idx, &err), FRAMES_OK);
        assert_int_equal(idx, (uint64_t)i);
        q.what = FRAMES_REPLAY_MEM_READ;
        q.addr = b + 8;
        assert_int_equal(frames_replay_find(r, &q, 3000, -1, &idx, &err), FRAMES_OK);
        assert_int_equal(idx, (uint64_t)i);
        assert_int_equal(frames_replay_goto(r, 3000, &err), 0);
        frames_replay_mem_get(r, b, got, known, 8);
        assert_memory_equal(known, "\1\1\1\1\1\1\1\1", 8);
        tu_put_le64(val, 0x0101010101010101ull * (uint64_t)(i & 0xFF) + (uint64_t)i);
        assert_memory_equal(got, val, 8);
    }
    frames_replay_close(r);
    free(tu_run(&i, "rm -f %s %s.fridx", path, path));
}

/* A trace whose operands carry no values: everything unknown, and the command says so. */
static void test_trace_without_values(void **state) {
    const char *path = tu_tmp_path(".frames");
    frames_writer *w;
    frames_error err;
    frames_operand op;
    frames_frame f;
    char *out;
    int st, i;
    (void)state;
    assert_int_equal(frames_writer_open_path(&w, path, NULL, NULL, &err), 0);
    for (i = 0; i < 300; i++) {
        op = tu_reg_op("EAX", NULL, 0, 0, 1);
        op.bit_length = 32;
        f = one_frame(0x1000 + (uint64_t)i, NULL, 0, &op, 1, "\x90", 1);
        assert_int_equal(frames_writer_add(w, &f), 0);
    }
    assert_int_equal(frames_writer_close(w), 0);
    out = tu_run(&st, "%s state %s --at 299 --json 2>&1", tu_frames_bin(), path);
    assert_int_equal(st, 0);
    assert_non_null(strstr(out, "no operand values"));
    assert_null(strstr(out, "\"eax\""));
    assert_null(strstr(out, "\"rax\""));
    free(out);
    out = tu_run(&st, "%s state %s --at 301 2>&1", tu_frames_bin(), path);
    assert_int_equal(st, 1);
    assert_non_null(strstr(out, "past the end"));
    free(out);
    out = tu_run(&st, "%s history %s --reg nosuch 2>&1", tu_frames_bin(), path);
    assert_int_equal(st, 1);
    free(out);
    out = tu_run(&st, "rm -f %s %s.fridx", path, path);
    free(out);
}

int main(void) {
    const struct CMUnitTest units[] = {
        cmocka_unit_test(test_x64_aliasing),
        cmocka_unit_test(test_arm_aliasing),
        cmocka_unit_test(test_trace_without_values),
        cmocka_unit_test(test_threads_and_keyframes),
        cmocka_unit_test(test_templates_memory),
        cmocka_unit_test(test_split_build_vectors),
        cmocka_unit_test(test_reader_truncated),
        cmocka_unit_test(test_reader_memory),
    };
#ifdef TU_RECORD_BUILT
    const struct CMUnitTest live_tests[] = {
        cmocka_unit_test(test_state_equals_live_gdb),
        cmocka_unit_test(test_history_equals_watchpoint),
        cmocka_unit_test(test_find),
        cmocka_unit_test(test_cut_and_stale),
        cmocka_unit_test(test_hostile_index),
        cmocka_unit_test(test_compressed_same_state),
        cmocka_unit_test(test_decoder_path_same_index),
        cmocka_unit_test(test_split_build_recorded),
    };
    int rc = cmocka_run_group_tests(units, NULL, NULL);
    return rc | cmocka_run_group_tests(live_tests, setup, tu_workdir_teardown);
#else
    return cmocka_run_group_tests(units, NULL, NULL);
#endif
}
