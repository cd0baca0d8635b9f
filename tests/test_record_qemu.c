/* test_record_qemu.c - `frames record --engine qemu` on a small static AArch64 program
   (built with Debian's aarch64-linux-gnu-gcc), against QEMU's own view of the same run:
   the instruction sequence equals `-singlestep -d exec,nochain`, every register value
   equals the `-d cpu,nochain` dump before that instruction (and after it, at the next
   one), the stores carry the values the host computes for the same arithmetic, the
   syscalls equal `-strace`; the trace loads in our reader and in `frames stat`. Skips
   when qemu-aarch64, the cross compiler or the plugin (build/qemu) is missing. */
#include <ctype.h>

#include "testutil.h" /* frames.h, stdint.h, unistd.h; build.sh defines _GNU_SOURCE */

#ifdef TU_RECORD_BUILT

#define dir tu_workdir
#define at tu_workdir_path

/* No C library: a few dozen instructions, nothing that depends on the environment.
   SYSNR, ARG0..2, SYSCALL, CLOBBER and MUL are the guest's syscall register, argument
   registers, syscall instruction, the register it also changes and a
   multiplier as wide as its unsigned long. */
static const char prog_src[] =
    "static unsigned long out[8];\n"
    "static long sys3(long n, long a, long b, long c) {\n"
    "    register long nr __asm__(SYSNR) = n, x0 __asm__(ARG0) = a, x1 __asm__(ARG1) = b,\n"
    "        x2 __asm__(ARG2) = c;\n"
    "    __asm__ volatile(SYSCALL : \"+r\"(x0), \"+r\"(nr) : \"r\"(x1), \"r\"(x2) : \"memory\", CLOBBER);\n"
    "    return x0;\n"
    "}\n"
    "void _start(void) {\n"
    "    unsigned long x = 0x1234;\n"
    "    int i;\n"
    "    for (i = 0; i < 8; i++) { x = x * MUL + (unsigned long)i; out[i] = x; }\n"
    "    sys3(NR_WRITE, 1, (long)\"hello\\n\", 6);\n"
    "    sys3(NR_EXIT, (long)(out[7] & 0x7f), 0, 0);\n"
    "    for (;;) {}\n"
    "}\n";

#define NREGS 33 /* the most registers of a guest (AArch64: X0..X30, SP, NZCV) */

/* A guest architecture: how to build the program, what QEMU's -d cpu dump calls each
   register of the trace (same index), the registers of the syscall number and of its
   first argument. */
typedef struct guest {
    const char *name, *qemu, *cc, *defines;
    uint64_t arch, machine;
    int nregs, sysreg, args[3], bits;
    uint64_t mul;
    const char *trace_names[NREGS], *dump_keys[NREGS];
    /* set_tid_address's number and the register of its result: the thread id, which
       differs between QEMU's reference run and the recorded one */
    int nr_set_tid, result;
} guest;

static const guest aarch64 = {
    "aarch64", "qemu-aarch64", "aarch64-linux-gnu-gcc",
    "'-DSYSNR=\"x8\"' '-DARG0=\"x0\"' '-DARG1=\"x1\"' '-DARG2=\"x2\"' '-DSYSCALL=\"svc 0\"' '-DCLOBBER=\"cc\"' -DMUL=0x9e3779b97f4a7c15UL "
    "-DNR_WRITE=64 -DNR_EXIT=93",
    FRAMES_ARCH_AARCH64, 0, 33, 8, {0, 1, 2}, 64, 0x9e3779b97f4a7c15ULL,
    {"X0", "X1", "X2", "X3", "X4", "X5", "X6", "X7", "X8", "X9", "X10", "X11", "X12", "X13", "X14", "X15",
     "X16", "X17", "X18", "X19", "X20", "X21", "X22", "X23", "X24", "X25", "X26", "X27", "X28", "X29",
     "X30", "SP", "NZCV"},
    {"X00=", "X01=", "X02=", "X03=", "X04=", "X05=", "X06=", "X07=", "X08=", "X09=", "X10=", "X11=", "X12=",
     "X13=", "X14=", "X15=", "X16=", "X17=", "X18=", "X19=", "X20=", "X21=", "X22=", "X23=", "X24=", "X25=",
     "X26=", "X27=", "X28=", "X29=", "X30=", " SP=", "PSTATE="},
    96, 0};

/* armhf: Thumb-2 (T32) code by default */
#define ARM_GUEST(name, flags)                                                                             \
    {name, "qemu-arm", "arm-linux-gnueabihf-gcc",                                                         \
     "'-DSYSNR=\"r7\"' '-DARG0=\"r0\"' '-DARG1=\"r1\"' '-DARG2=\"r2\"' '-DSYSCALL=\"svc 0\"' '-DCLOBBER=\"cc\"' "          \
     "-DMUL=0x9e3779b9UL -DNR_WRITE=4 -DNR_EXIT=1 " flags,                                                \
     FRAMES_ARCH_ARM, 0, 16, 7, {0, 1, 2}, 32, 0x9e3779b9ULL,                                              \
     {"R0", "R1", "R2", "R3", "R4", "R5", "R6", "R7", "R8", "R9", "R10", "R11", "R12", "SP", "LR", "CPSR"}, \
     {"R00=", "R01=", "R02=", "R03=", "R04=", "R05=", "R06=", "R07=", "R08=", "R09=", "R10=", "R11=",      \
      "R12=", "R13=", "R14=", "PSR="},                                                                   \
     256, 0}
static const guest arm = ARM_GUEST("arm", "");             /* armhf's default: T32 */
static const guest arm_a32 = ARM_GUEST("arm (A32)", "-marm");

/* MIPS o32, both byte orders: registers r1..r31, HI, LO; the syscall number in v0 (r2),
   arguments from a0 (r4); a3 (r7) is the error flag */
#define MIPS_GUEST(name, qemu, cc)                                                                       \
    {name, qemu, cc,                                                                                    \
     "'-DSYSNR=\"$2\"' '-DARG0=\"$4\"' '-DARG1=\"$5\"' '-DARG2=\"$6\"' '-DSYSCALL=\"syscall\"' '-DCLOBBER=\"$7\"' "      \
     "-DMUL=0x9e3779b9UL -DNR_WRITE=4004 -DNR_EXIT=4001 -fno-pic -mno-abicalls -Wl,-e,_start",         \
     FRAMES_ARCH_MIPS, 32, 33, 1, {3, 4, 5}, 32, 0x9e3779b9ULL,                                                  \
     {"AT", "V0", "V1", "A0", "A1", "A2", "A3", "T0", "T1", "T2", "T3", "T4", "T5", "T6", "T7", "S0",   \
      "S1", "S2", "S3", "S4", "S5", "S6", "S7", "T8", "T9", "K0", "K1", "GP", "SP", "FP", "RA", "HI",   \
      "LO"},                                                                                            \
     {" at ", " v0 ", " v1 ", " a0 ", " a1 ", " a2 ", " a3 ", " t0 ", " t1 ", " t2 ", " t3 ", " t4 ",   \
      " t5 ", " t6 ", " t7 ", " s0 ", " s1 ", " s2 ", " s3 ", " s4 ", " s5 ", " s6 ", " s7 ", " t8 ",   \
      " t9 ", " k0 ", " k1 ", " gp ", " sp ", " s8 ", " ra ", "HI=", "LO="},                          \
     4252, 1}
/* x86-64 under qemu-x86_64 (--engine qemu): the GPRs, not RFLAGS (engine's comment) */
static const guest x86_64 = {
    "x86_64", "qemu-x86_64", "cc",
    "'-DSYSNR=\"rax\"' '-DARG0=\"rdi\"' '-DARG1=\"rsi\"' '-DARG2=\"rdx\"' '-DSYSCALL=\"syscall\"' "
    "'-DCLOBBER=\"rcx\", \"r11\"' -DMUL=0x9e3779b97f4a7c15UL -DNR_WRITE=1 -DNR_EXIT=60 -no-pie",
    FRAMES_ARCH_I386, FRAMES_MACH_X86_64, 16, 0, {5, 4, 3}, 64, 0x9e3779b97f4a7c15ULL,
    {"RAX", "RBX", "RCX", "RDX", "RSI", "RDI", "RBP", "RSP", "R8", "R9", "R10", "R11", "R12", "R13", "R14", "R15"},
    {"RAX=", "RBX=", "RCX=", "RDX=", "RSI=", "RDI=", "RBP=", "RSP=", "R8 =", "R9 =", "R10=", "R11=", "R12=",
     "R13=", "R14=", "R15="},
    218, 0};

/* RISC-V 64 (arch 0: the frozen table has no RISC-V; docs/qemu.md): x1..x31, the
   syscall number in a7 (x17), arguments from a0 (x10); rv64gc: 2- and 4-byte code */
static const guest riscv64 = {
    "riscv64", "qemu-riscv64", "riscv64-linux-gnu-gcc",
    "'-DSYSNR=\"a7\"' '-DARG0=\"a0\"' '-DARG1=\"a1\"' '-DARG2=\"a2\"' '-DSYSCALL=\"ecall\"' '-DCLOBBER=\"memory\"' "
    "-DMUL=0x9e3779b97f4a7c15UL -DNR_WRITE=64 -DNR_EXIT=93 -Wl,--no-relax", /* no gp-relative code: no crt sets gp */
    0, 0, 31, 16, {9, 10, 11}, 64, 0x9e3779b97f4a7c15ULL,
    {"X1", "X2", "X3", "X4", "X5", "X6", "X7", "X8", "X9", "X10", "X11", "X12", "X13", "X14", "X15", "X16", "X17", "X18", "X19", "X20", "X21", "X22", "X23", "X24", "X25", "X26", "X27", "X28", "X29", "X30", "X31"},
    {" x1/ra ", " x2/sp ", " x3/gp ", " x4/tp ", " x5/t0 ", " x6/t1 ", " x7/t2 ", " x8/s0 ", " x9/s1 ", " x10/a0 ", " x11/a1 ", " x12/a2 ", " x13/a3 ", " x14/a4 ", " x15/a5 ", " x16/a6 ", " x17/a7 ", " x18/s2 ", " x19/s3 ", " x20/s4 ", " x21/s5 ", " x22/s6 ", " x23/s7 ", " x24/s8 ", " x25/s9 ", " x26/s10 ", " x27/s11 ", " x28/t3 ", " x29/t4 ", " x30/t5 ", " x31/t6 "},
    96, 9};

static const guest mips = MIPS_GUEST("mips", "qemu-mips", "mips-linux-gnu-gcc");
static const guest mipsel = MIPS_GUEST("mipsel", "qemu-mipsel", "mipsel-linux-gnu-gcc");

#define MAXI 65536 /* instructions of QEMU's log (a static glibc program: ~40000) */

/* QEMU's own log of the run: the pc and the registers before each instruction. */
typedef struct qstate {
    uint64_t pc;
    uint64_t r[NREGS];
} qstate;

static qstate *qlog;
static size_t nq;

static uint64_t hexat(const char *s) { return strtoull(s, NULL, 16); }

/* "Trace 0: 0xHOST [FLAGS/PC/...]" then the registers, "KEY=hex" each. QEMU 10 writes
   the same register lines as 7.2 for AArch64, ARM and RISC-V 64 (compared on the same
   programs); its bracket has other field widths (ARM's pc: 16 digits, not 8), which
   reading the pc after the first '/' does not care about. */
/* Each record is searched within its own bounds (memmem, never strstr over the rest of
   a 30 MB log: under ASan every strstr measures the whole remaining string). */
static void parse_qemu_log(const guest *gu, const char *text, size_t len) {
    const char *p = text, *end = text + len, *next;
    nq = 0;
    for (p = (const char *)memmem(p, (size_t)(end - p), "Trace ", 6); p; p = next) {
        const char *b, *s;
        qstate *q;
        int i;
        next = (const char *)memmem(p + 6, (size_t)(end - p - 6), "Trace ", 6);
        b = (const char *)memchr(p, '[', (size_t)((next ? next : end) - p));
        assert_non_null(b);
        assert_true(nq < MAXI);
        q = &qlog[nq++];
        q->pc = hexat((const char *)memchr(b, '/', (size_t)((next ? next : end) - b)) + 1);
        for (i = 0; i < gu->nregs; i++) {
            size_t kl = strlen(gu->dump_keys[i]);
            assert_non_null(s = (const char *)memmem(b, (size_t)((next ? next : end) - b), gu->dump_keys[i], kl));
            q->r[i] = hexat(s + kl);
        }
    }
}

static int reg_index(const guest *gu, const frames_bytes *name) {
    int i;
    for (i = 0; i < gu->nregs; i++)
        if (name->len == strlen(gu->trace_names[i]) && !memcmp(name->ptr, gu->trace_names[i], name->len)) return i;
    return -1;
}

/* Build the guest's program as dir/NAME; 0, or -1 (with a message) when its compiler or
   QEMU is not installed. */
static int build_prog(const guest *gu, const char *name) {
    int st;
    free(tu_run(&st, "command -v %s >/dev/null && command -v %s >/dev/null", gu->qemu, gu->cc));
    if (st) {
        printf("test_record_qemu: %s or %s missing: %s skipped\n", gu->qemu, gu->cc, gu->name);
        return -1;
    }
    free(tu_run_ok(gu->cc, "%s %s -O1 -static -nostdlib -ffreestanding -o %s/%s %s 2>&1", gu->cc, gu->defines, dir,
                   name, at("prog.c")));
    return 0;
}

static int setup(void **state) {
    (void)state;
    if (tu_workdir_make("frames-qemu") < 0) return -1;
    qlog = (qstate *)calloc(MAXI, sizeof *qlog);
    assert_int_equal(tu_write_file(at("prog.c"), prog_src, strlen(prog_src)), 0);
    return qlog && build_prog(&aarch64, "prog") == 0 ? 0 : -1;
}

static int teardown(void **state) {
    (void)state;
    free(qlog);
    tu_workdir_remove();
    return 0;
}

/* More environment for QEMU and the program, in recorded and reference runs alike. */
static const char *run_env = "";
/* More environment for the runs: QEMU 10 places the guest's stack and mappings where
   the host's mmap puts them (the plugin's own allocations and address randomization
   move them), unless the guest has a reserved address space (QEMU_RESERVED_VA, -R),
   in which they are placed alike in the reference run and the recorded one. */
static const char *run_layout = "";
/* Whether the QEMU gives the program's path and code range (qemu_plugin_path_to_binary,
   _start_code, _end_code): every 7.2 does; a QEMU 10 linked without them (one built
   from Debian's source of 10.0.2 for user mode) does not, and the trace then has no
   module for the program (docs/qemu.md). */
static int program_module = 1;

/* Record prog with the given options into trace (a fresh name); the exit status. */
static int record_prog(const char *prog, const char *opts, const char *trace) {
    int st;
    free(tu_run(&st, "cd %s && env -i PATH=\"$PATH\" %s %s%s record %s -o %s -- ./%s >out.txt 2>err.txt", dir,
                run_env, run_layout, tu_frames_bin(), opts, trace, prog));
    return st;
}

static int record(const char *opts, const char *trace) { return record_prog("prog", opts, trace); }

static frames_reader *open_trace(const char *path, const guest *gu) {
    frames_reader_info info;
    frames_reader *r = tu_open_finished(path, &info);
    assert_int_equal(info.header.arch, gu->arch);
    assert_int_equal(info.header.machine, gu->machine);
    return r;
}

/* The next std_frame of r, 0 at the end. */
static int next_std(frames_reader *r, frames_frame *f) {
    int rc;
    while ((rc = frames_reader_next(r, f)) > 0)
        if (f->kind == FRAMES_KIND_STD) return 1;
    assert_int_equal(rc, 0);
    return 0;
}

/* The host's own computation of what the program stores. */
static void expected_stores(const guest *gu, uint64_t out[8]) {
    uint64_t x = 0x1234, mask = gu->bits == 64 ? ~0ULL : (1ULL << gu->bits) - 1;
    int i;
    for (i = 0; i < 8; i++) out[i] = x = (x * gu->mul + (uint64_t)i) & mask;
}

/* QEMU's option for one instruction per block in the reference run: -singlestep (7.2),
   -one-insn-per-tb (8.1 and later; QEMU 10 no longer knows -singlestep). */
static const char *one_insn = "-singlestep";

/* QEMU's reference run of PROG (same environment as frames record gives the program):
   qlog, nq; returns its exit status. */
static int qemu_reference(const guest *gu, const char *prog) {
    char *log;
    size_t len;
    int rc;
    free(tu_run(&rc, "cd %s && env -i PATH=\"$PATH\" %s %s%s %s -d exec,cpu,nochain -D qemu.log ./%s >qout.txt",
                dir, run_env, run_layout, gu->qemu, one_insn, prog)); /* a file, as in record_prog: stdio asks fstat */
    unlink(at("qout.txt"));
    log = (char *)tu_read_file(at("qemu.log"), &len);
    assert_non_null(log);
    parse_qemu_log(gu, log, len);
    free(log);
    unlink(at("qemu.log"));
    return rc;
}

/* The registers of std_frame f, instruction i of QEMU's log: the snapshot and every
   value before equal the dump before it, every change the dump before the next one,
   and the state rebuilt from the trace so far (regs; *have once the snapshot was seen)
   equals the dump: no change was missed. Memory operands are the caller's. */
/* The thread id set_tid_address returned in the recorded run and in QEMU's reference
   run (0: none yet): the C library copies it between registers, where the two runs'
   values then differ by nothing else. */
static uint64_t tid_trace, tid_qemu;

static int same_value(uint64_t trace, uint64_t qemu) {
    return trace == qemu || (tid_trace && trace == tid_trace && qemu == tid_qemu);
}

static void check_registers(const guest *gu, const frames_frame *f, size_t i, uint64_t *regs, int *have,
                            int tid_result, int check_after) {
    size_t k;
    assert_true(i < nq);
    assert_int_equal(f->std.address, qlog[i].pc); /* -d exec */
    for (k = 0; k < f->std.npre; k++) {
        const frames_operand *o = &f->std.pre[k];
        int ri;
        if (o->spec == FRAMES_MEM) continue;
        assert_true((ri = reg_index(gu, &o->name)) >= 0);
        assert_int_equal(tu_le(o->value.ptr, (int)o->value.len), qlog[i].r[ri]); /* -d cpu, before */
        regs[ri] = qlog[i].r[ri];
        *have |= ri == 0;
    }
    assert_true(*have); /* the first instruction gave every register */
    for (k = 0; k < (size_t)gu->nregs; k++) {
        if (!same_value(regs[k], qlog[i].r[k]))
            print_error("pc 0x%llx (instruction %zu): %s is 0x%llx in the trace, 0x%llx in QEMU's dump\n",
                        (unsigned long long)qlog[i].pc, i, gu->trace_names[k], (unsigned long long)regs[k],
                        (unsigned long long)qlog[i].r[k]);
        assert_true(same_value(regs[k], qlog[i].r[k])); /* nothing missed */
    }
    for (k = 0; k < f->std.npost; k++) {
        const frames_operand *o = &f->std.post[k];
        int ri;
        if (o->spec == FRAMES_MEM) continue;
        assert_true((ri = reg_index(gu, &o->name)) >= 0);
        regs[ri] = tu_le(o->value.ptr, (int)o->value.len);
        if (tid_result && ri == gu->result && i + 1 < nq) tid_trace = regs[ri], tid_qemu = qlog[i + 1].r[ri];
        if (!check_after) continue; /* a signal's handler runs next: QEMU's next dump is its entry */
        if (i + 1 < nq && !same_value(regs[ri], qlog[i + 1].r[ri]))
            print_error("pc 0x%llx (instruction %zu): %s after is 0x%llx in the trace, 0x%llx in QEMU's dump\n",
                        (unsigned long long)qlog[i].pc, i, gu->trace_names[ri], (unsigned long long)regs[ri],
                        (unsigned long long)qlog[i + 1].r[ri]);
        if (i + 1 < nq) assert_true(same_value(regs[ri], qlog[i + 1].r[ri])); /* -d cpu, after */
    }
}

/* PROG of guest gu (built) recorded, against QEMU's own logs of the same run. */
static void check_against_qemu(const guest *gu, const char *prog) {
    char *nm, *s;
    frames_reader *r;
    frames_frame f;
    uint64_t regs[NREGS], want[8], out_addr;
    size_t i = 0, k, nstores = 0, nsys = 0;
    int have = 0, rc;
    unsigned wsize = (unsigned)gu->bits / 8;
    uint64_t mask = gu->bits == 64 ? ~0ULL : (1ULL << gu->bits) - 1;
    expected_stores(gu, want);
    nm = tu_run_ok("nm", "nm %s/%s | grep ' out$'", dir, prog);
    out_addr = hexat(nm);
    free(nm);
    assert_int_equal(qemu_reference(gu, prog), (int)(want[7] & 0x7f));
    assert_true(nq > 50);

    assert_int_equal(record_prog(prog, "--engine qemu", "a.frames"), (int)(want[7] & 0x7f));
    r = open_trace(at("a.frames"), gu);
    while ((rc = frames_reader_next(r, &f)) > 0) {
        if (f.kind == FRAMES_KIND_SYSCALL) {
            /* the svc's syscall frame comes before its std_frame */
            assert_int_equal(f.syscall.address, qlog[i].pc);
            assert_int_equal(f.syscall.number, qlog[i].r[gu->sysreg]);
            for (k = 0; k < 3; k++) assert_int_equal((uint64_t)f.syscall.args[k] & mask, qlog[i].r[gu->args[k]]);
            nsys++;
            continue;
        }
        if (f.kind != FRAMES_KIND_STD) continue;
        check_registers(gu, &f, i, regs, &have, 0, 1);
        if (gu->arch == FRAMES_ARCH_I386) assert_true(f.std.rawbytes.len >= 1 && f.std.rawbytes.len <= 15);
        else assert_true(f.std.rawbytes.len == 4 || ((gu->arch == FRAMES_ARCH_ARM || gu == &riscv64) && f.std.rawbytes.len == 2));
        for (k = 0; k < f.std.npost; k++) {
            const frames_operand *o = &f.std.post[k];
            if (o->spec != FRAMES_MEM) continue;
            assert_true(o->written);
            if (o->address >= out_addr && o->address < out_addr + 8 * wsize) {
                assert_int_equal(o->address, out_addr + wsize * nstores);
                assert_int_equal(o->value.len, wsize);
                assert_int_equal(tu_le(o->value.ptr, (int)wsize), want[nstores]);
                nstores++;
            }
        }
        i++;
    }
    assert_int_equal(rc, 0);
    frames_reader_close(r);
    assert_int_equal(i, nq);
    assert_int_equal(nstores, 8);
    assert_int_equal(nsys, 2);

    /* -strace: write(1,0x...,6) = 6 and exit(N) */
    s = tu_run_ok("qemu -strace", "cd %s && env -i PATH=\"$PATH\" %s%s -strace ./%s 2>&1 >/dev/null; true", dir, run_layout,
                   gu->qemu, prog);
    assert_non_null(strstr(s, " write(1,0x"));
    assert_non_null(strstr(s, ",6) = 6"));
    {
        char ex[32];
        snprintf(ex, sizeof ex, " exit(%d)", (int)(want[7] & 0x7f));
        assert_non_null(strstr(s, ex));
    }
    free(s);
    /* frames stat reads it, with the program's symbols */
    s = tu_run_ok("frames stat", "%s stat %s", tu_frames_bin(), at("a.frames"));
    assert_non_null(strstr(s, "syscall_frame   2"));
    if (program_module) {
        char sym[64];
        snprintf(sym, sizeof sym, "%s!_start", prog);
        assert_non_null(strstr(s, sym));
    } else {
        assert_null(strstr(s, "!_start"));
    }
    free(s);
    /* drcov takes every architecture; Tenet has register sets for x86, amd64 and arm32 */
    free(tu_run_ok("frames drcov", "%s drcov %s -o %s", tu_frames_bin(), at("a.frames"), at("a.drcov")));
    s = tu_run(&rc, "%s tenet %s -o %s 2>&1", tu_frames_bin(), at("a.frames"), at("a.tenet"));
    if (gu->arch == FRAMES_ARCH_ARM || gu->arch == FRAMES_ARCH_I386) {
        char *t = (char *)tu_read_file(at("a.tenet"), NULL);
        assert_int_equal(rc, 0);
        assert_non_null(t);
        assert_non_null(strstr(t, gu->arch == FRAMES_ARCH_ARM ? "r0=0x" : "rax=0x"));
        free(t);
        unlink(at("a.tenet"));
    } else {
        assert_int_not_equal(rc, 0);
        assert_non_null(strstr(s, "Tenet has no register set"));
    }
    free(s);
    unlink(at("a.drcov"));
    unlink(at("a.frames"));

    /* sampling (4 recorded, 4 skipped) into a compressed trace: the pcs are QEMU's at
       the recorded positions */
    assert_int_equal(record_prog(prog, "--engine qemu --quiet --sample 4:4", "a.frames.zst"), (int)(want[7] & 0x7f));
    free(tu_run_ok("zstd -d", "zstd -q -d -c %s > %s", at("a.frames.zst"), at("az.frames")));
    r = open_trace(at("az.frames"), gu);
    for (i = 0, k = 0; (rc = frames_reader_next(r, &f)) > 0;) {
        if (f.kind != FRAMES_KIND_STD) continue;
        while (k < nq && k % 8 >= 4) k++;
        assert_true(k < nq);
        assert_int_equal(f.std.address, qlog[k].pc);
        k++;
        i++;
    }
    assert_int_equal(rc, 0);
    frames_reader_close(r);
    assert_int_equal(i, nq / 8 * 4 + (nq % 8 < 4 ? nq % 8 : 4));
    unlink(at("a.frames.zst"));
    unlink(at("az.frames"));
}

static void test_aarch64_same_as_qemu_logs(void **state) {
    (void)state;
    check_against_qemu(&aarch64, "prog");
}

static void test_arm_same_as_qemu_logs(void **state) {
    (void)state;
    if (build_prog(&arm, "aprog") == 0) check_against_qemu(&arm, "aprog");
}

/* The same program in A32 code (-marm): 4-byte instructions, the T bit (CPSR 0x20)
   clear in the first snapshot */
static void test_arm_a32_same_as_qemu_logs(void **state) {
    frames_reader *r;
    frames_frame f;
    size_t n = 0, k;
    uint64_t want[8];
    (void)state;
    if (build_prog(&arm_a32, "a32prog") != 0) return;
    check_against_qemu(&arm_a32, "a32prog");
    expected_stores(&arm_a32, want);
    assert_int_equal(record_prog("a32prog", "--quiet", "a32.frames"), (int)(want[7] & 0x7f));
    r = open_trace(at("a32.frames"), &arm_a32);
    while (next_std(r, &f)) {
        assert_int_equal(f.std.rawbytes.len, 4);
        for (k = 0; n == 0 && k < f.std.npre; k++)
            if (f.std.pre[k].name.len == 4 && !memcmp(f.std.pre[k].name.ptr, "CPSR", 4))
                assert_int_equal(tu_le(f.std.pre[k].value.ptr, 4) & 0x20, 0);
        n++;
    }
    frames_reader_close(r);
    assert_true(n > 50);
    unlink(at("a32.frames"));
}

static void test_x86_64_same_as_qemu_logs(void **state) {
    (void)state;
    if (build_prog(&x86_64, "xprog") == 0) check_against_qemu(&x86_64, "xprog");
}


/* A static program with the C library (its start-up code: TLS, IRELATIVE relocations,
   SIMD string functions), sorting, formatting a float, atomics (the outline helpers pick
   LSE when the CPU has it), 128-bit multiplication, division: tens of thousands of
   instructions of many encoding classes. The full state rebuilt from its trace equals
   every -d cpu dump: the registers the plugin reads after an instruction (those its
   encoding can write) miss no change. */
static const char libc_src[] =
    "#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n"
    "static int cmp(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }\n"
    "static long counter;\n"
    "int main(int argc, char **argv) {\n"
    "    int v[64]; char buf[256]; long expect = 5;\n"
    "    unsigned long long a = 0x9e3779b97f4a7c15ULL * (unsigned)argc;\n"
    "    for (int i = 0; i < 64; i++) v[i] = (i * 7919) % 101 - 50;\n"
    "    qsort(v, 64, sizeof v[0], cmp);\n"
    "    __atomic_fetch_add(&counter, 5, __ATOMIC_SEQ_CST);\n"
    "    __atomic_compare_exchange_n(&counter, &expect, 9, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);\n"
    "    a = (unsigned long long)(((unsigned __int128)a * a) >> 64) / (unsigned)(v[63] + 1);\n"
    "    snprintf(buf, sizeof buf, \"%d %d %s %.3f %ld %llx\", v[0], v[63], argv[0], 3.25 * argc, counter, a);\n"
    "    printf(\"%s %zu\\n\", buf, strlen(buf));\n"
    "    return (int)(strlen(buf) + (3.25 * argc > 3.0)) & 0x7f;\n"
    "}\n";

static void check_libc_program(const guest *gu, const char *prog) {
    frames_reader *r;
    frames_frame f;
    uint64_t regs[NREGS];
    size_t i = 0;
    int have = 0, st, rc, tid_syscall = 0;
    free(tu_run(&st, "command -v %s >/dev/null && command -v %s >/dev/null", gu->qemu, gu->cc));
    if (st) {
        printf("test_record_qemu: %s or %s missing: %s skipped\n", gu->qemu, gu->cc, gu->name);
        return;
    }
    assert_int_equal(tu_write_file(at("libc.c"), libc_src, strlen(libc_src)), 0);
    free(tu_run_ok(gu->cc, "%s -O2 -static -o %s/%s %s 2>&1", gu->cc, dir, prog, at("libc.c")));
    run_env = "QEMU_RAND_SEED=1"; /* the same AT_RANDOM bytes (the stack guard) in both runs */
    st = qemu_reference(gu, prog);
    tid_trace = tid_qemu = 0;
    assert_true(nq > 10000);
    assert_int_equal(record_prog(prog, "--engine qemu --quiet", "l.frames"), st);
    r = open_trace(at("l.frames"), gu);
    while ((rc = frames_reader_next(r, &f)) > 0) {
        if (f.kind == FRAMES_KIND_SYSCALL) tid_syscall = gu->nr_set_tid && f.syscall.number == (uint64_t)gu->nr_set_tid;
        if (f.kind != FRAMES_KIND_STD) continue;
        check_registers(gu, &f, i++, regs, &have, tid_syscall, 1);
        tid_syscall = 0;
    }
    assert_int_equal(rc, 0);
    frames_reader_close(r);
    run_env = "";
    assert_int_equal(i, nq);
    unlink(at("l.frames"));
}

/* RISC-V 64: arch 0 in the header, the guest in the meta frame's tracer args; the
   small program and the C library's against QEMU's logs */
static void test_riscv64_same_as_qemu_logs(void **state) {
    frames_reader *r;
    const frames_meta *m;
    uint64_t want[8];
    (void)state;
    if (build_prog(&riscv64, "rprog") != 0) return;
    check_against_qemu(&riscv64, "rprog");
    expected_stores(&riscv64, want);
    assert_int_equal(record_prog("rprog", "--quiet", "rm.frames"), (int)(want[7] & 0x7f)); /* chosen by itself */
    r = open_trace(at("rm.frames"), &riscv64);
    assert_non_null(m = frames_reader_meta(r));
    assert_int_equal(m->ntracer_args, 2);
    assert_true(m->tracer_args[1].len == 13 && !memcmp(m->tracer_args[1].ptr, "guest=riscv64", 13));
    frames_reader_close(r);
    unlink(at("rm.frames"));
    check_libc_program(&riscv64, "rlprog");
}

/* Signals: a handler of SIGUSR1 the program sends itself (delivered after kill's
   syscall instruction completed) and of SIGSEGV from a store to address 16 (the store
   does not complete; the handler exits with the sum of both numbers). Each is an
   exception frame (number, interrupted pc, handler) after the interrupted instruction,
   the handler's first instruction carries every register, and the state rebuilt from
   the trace equals every -d cpu dump of QEMU. */
static const char signal_src[] =
    "#include <signal.h>\n#include <unistd.h>\n"
    "static volatile int got;\n"
    "static void on_usr1(int s) { got += s; }\n"
    "static void on_segv(int s) { _exit(got + s); }\n"
    "int main(void) {\n"
    "    signal(SIGUSR1, on_usr1);\n"
    "    signal(SIGSEGV, on_segv);\n"
    "    kill(getpid(), SIGUSR1);\n"
    "    *(volatile int *)16 = got;\n"
    "    return 0;\n"
    "}\n";

#define MAXX 8
#define G_SIGUSR1 10 /* the guests' (AArch64, RISC-V: Linux's generic numbers) */
#define G_SIGSEGV 11

static void check_signal_program(const guest *gu, const char *prog) {
    frames_reader *r;
    frames_frame f;
    uint64_t regs[NREGS], xnum[MAXX], xfrom[MAXX], xto[MAXX], handler[2], prev_pc = 0;
    size_t i = 0, nx = 0, before[MAXX], k;
    int have = 0, rc, tid_syscall = 0, post_x0_zero = 0, prev_has_post = 0;
    char *nm;
    assert_int_equal(tu_write_file(at("sig.c"), signal_src, strlen(signal_src)), 0);
    free(tu_run_ok(gu->cc, "%s -O1 -static -o %s/%s %s 2>&1", gu->cc, dir, prog, at("sig.c")));
    nm = tu_run_ok("nm", "nm %s/%s | grep -w on_usr1", dir, prog);
    handler[0] = hexat(nm);
    free(nm);
    nm = tu_run_ok("nm", "nm %s/%s | grep -w on_segv", dir, prog);
    handler[1] = hexat(nm);
    free(nm);
    run_env = "QEMU_RAND_SEED=1";
    assert_int_equal(qemu_reference(gu, prog), G_SIGUSR1 + G_SIGSEGV);
    tid_trace = tid_qemu = 0;
    assert_int_equal(record_prog(prog, "--engine qemu --quiet", "s.frames"), G_SIGUSR1 + G_SIGSEGV);
    run_env = "";
    /* the exception frames, and what comes before and after each */
    r = open_trace(at("s.frames"), gu);
    while ((rc = frames_reader_next(r, &f)) > 0) {
        if (f.kind == FRAMES_KIND_EXCEPTION) {
            assert_true(nx < MAXX);
            xnum[nx] = f.exception.number;
            xfrom[nx] = f.exception.from_addr;
            xto[nx] = f.exception.to_addr;
            before[nx++] = i - 1;
            if (f.exception.number == G_SIGSEGV) { /* the faulting store: no post list */
                assert_int_equal(xfrom[nx - 1], prev_pc);
                assert_false(prev_has_post);
            } else {
                assert_int_equal(xfrom[nx - 1], prev_pc + 4); /* after the syscall instruction */
                assert_true(post_x0_zero);                     /* kill returned 0 */
            }
        }
        if (f.kind != FRAMES_KIND_STD) continue;
        if (nx && before[nx - 1] == i - 1) assert_int_equal(f.std.address, xto[nx - 1]); /* the handler */
        prev_pc = f.std.address;
        prev_has_post = f.std.has_post;
        post_x0_zero = 0;
        for (k = 0; k < f.std.npost; k++)
            if (f.std.post[k].spec != FRAMES_MEM && reg_index(gu, &f.std.post[k].name) == gu->args[0] &&
                tu_le(f.std.post[k].value.ptr, (int)f.std.post[k].value.len) == 0)
                post_x0_zero = 1;
        i++;
    }
    assert_int_equal(rc, 0);
    frames_reader_close(r);
    assert_int_equal(nx, 2);
    assert_int_equal(xnum[0], G_SIGUSR1);
    assert_int_equal(xto[0], handler[0]);
    assert_int_equal(xnum[1], G_SIGSEGV);
    assert_int_equal(xto[1], handler[1]);
    /* every register against QEMU's dumps */
    r = open_trace(at("s.frames"), gu);
    i = 0;
    while ((rc = frames_reader_next(r, &f)) > 0) {
        if (f.kind == FRAMES_KIND_SYSCALL) tid_syscall = f.syscall.number == (uint64_t)gu->nr_set_tid;
        if (f.kind != FRAMES_KIND_STD) continue;
        check_registers(gu, &f, i, regs, &have, tid_syscall, i != before[0] && i != before[1]);
        tid_syscall = 0;
        i++;
    }
    assert_int_equal(rc, 0);
    frames_reader_close(r);
    assert_int_equal(i, nq);
    unlink(at("s.frames"));
}

static void test_signals(void **state) {
    int st;
    (void)state;
    check_signal_program(&aarch64, "sprog");
    free(tu_run(&st, "command -v qemu-riscv64 >/dev/null && command -v riscv64-linux-gnu-gcc >/dev/null"));
    if (st == 0) check_signal_program(&riscv64, "srprog");
}

static void test_aarch64_libc_program(void **state) {
    (void)state;
    check_libc_program(&aarch64, "lprog");
}


/* Is b the operand a (QEMU's: a full GPR, or memory), or a part of it the Valgrind
   engine names as capstone does (EAX, AX, AL, R8D, R8W, R8B for RAX, R8)? A documented
   difference: the Valgrind engine lists the register an instruction writes under the
   name it writes it by. */
static int same_operand(const frames_operand *a, const frames_operand *b) {
    char qa[8], parts[4][12];
    int i;
    if (a->spec != b->spec) return 0;
    if (a->spec == FRAMES_MEM) return a->address == b->address;
    if (a->name.len >= sizeof qa) return 0;
    memcpy(qa, a->name.ptr, a->name.len);
    qa[a->name.len] = 0;
    snprintf(parts[0], sizeof parts[0], "%s", qa);
    if (isdigit((unsigned char)qa[1])) { /* R8..R15 */
        snprintf(parts[1], sizeof parts[1], "%sD", qa);
        snprintf(parts[2], sizeof parts[2], "%sW", qa);
        snprintf(parts[3], sizeof parts[3], "%sB", qa);
    } else { /* RAX -> EAX, AX, AL; RSI -> ESI, SI, SIL */
        snprintf(parts[1], sizeof parts[1], "E%s", qa + 1);
        snprintf(parts[2], sizeof parts[2], "%s", qa + 1);
        if (qa[2] == 'X') snprintf(parts[3], sizeof parts[3], "%cL", qa[1]);
        else snprintf(parts[3], sizeof parts[3], "%sL", qa + 1);
    }
    for (i = 0; i < 4; i++)
        if (b->name.len == strlen(parts[i]) && !memcmp(b->name.ptr, parts[i], b->name.len)) return 1;
    return 0;
}

/* x86-64 under QEMU and under Valgrind (an independent emulator): the same instructions
   with the same bytes, and every value the QEMU engine writes after an instruction
   (changed registers, stores) is in the Valgrind engine's post list with the same value.
   The program never uses its stack, whose address differs (QEMU's guest stack). */
static void test_x86_64_same_as_valgrind(void **state) {
    frames_reader *q, *v;
    frames_frame fq, fv;
    size_t n = 0, nvals = 0, k, j;
    uint64_t want[8];
    (void)state;
    expected_stores(&x86_64, want);
    if (!tu_vg_tool_built()) {
        printf("test_record_qemu: the valgrind tool was not built: x86-64 comparison skipped\n");
        return;
    }
    if (build_prog(&x86_64, "xprog") != 0) return;
    assert_int_equal(record_prog("xprog", "--engine qemu --quiet", "xq.frames"), (int)(want[7] & 0x7f));
    assert_int_equal(record_prog("xprog", "--engine valgrind --quiet", "xv.frames"), (int)(want[7] & 0x7f));
    q = open_trace(at("xq.frames"), &x86_64);
    v = open_trace(at("xv.frames"), &x86_64);
    while (next_std(q, &fq)) {
        assert_true(next_std(v, &fv));
        assert_int_equal(fq.std.address, fv.std.address);
        assert_int_equal(fq.std.rawbytes.len, fv.std.rawbytes.len);
        assert_memory_equal(fq.std.rawbytes.ptr, fv.std.rawbytes.ptr, fq.std.rawbytes.len);
        for (k = 0; k < fq.std.npost; k++) {
            const frames_operand *o = &fq.std.post[k];
            for (j = 0; j < fv.std.npost && !same_operand(o, &fv.std.post[j]); j++) {}
            if (j == fv.std.npost) print_error("pc 0x%llx: operand %zu of QEMU's post list not in Valgrind's\n",
                                               (unsigned long long)fq.std.address, k);
            assert_true(j < fv.std.npost);
            /* the part Valgrind's lists is the low bytes of the register */
            assert_true(fv.std.post[j].value.len <= o->value.len);
            assert_memory_equal(o->value.ptr, fv.std.post[j].value.ptr, fv.std.post[j].value.len);
            nvals++;
        }
        n++;
    }
    assert_false(next_std(v, &fv));
    frames_reader_close(q);
    frames_reader_close(v);
    assert_true(n > 50);
    assert_true(nvals > 30);
    unlink(at("xq.frames"));
    unlink(at("xv.frames"));
}

/* big-endian: the values (registers, stores) are stored little-endian as everywhere */
static void test_mips_same_as_qemu_logs(void **state) {
    (void)state;
    if (build_prog(&mips, "mprog") == 0) check_against_qemu(&mips, "mprog");
    if (build_prog(&mipsel, "mlprog") == 0) check_against_qemu(&mipsel, "mlprog");
}

/* A dynamic program with -L: the libraries it maps are modules, the trace is whole. */
static void test_dynamic_with_sysroot(void **state) {
    static const char src[] = "#include <stdio.h>\nint main(void) { puts(\"dyn\"); return 3; }\n";
    char *s;
    (void)state;
    if (access("/usr/aarch64-linux-gnu/lib/libc.so.6", R_OK) != 0) {
        printf("test_record_qemu: no /usr/aarch64-linux-gnu (libc6-dev-arm64-cross): -L skipped\n");
        return;
    }
    assert_int_equal(tu_write_file(at("dyn.c"), src, strlen(src)), 0);
    free(tu_run_ok("aarch64-linux-gnu-gcc", "aarch64-linux-gnu-gcc -O1 -o %s %s 2>&1", at("dyn"), at("dyn.c")));
    assert_int_equal(record_prog("dyn", "--quiet -L /usr/aarch64-linux-gnu", "d.frames"), 3);
    s = (char *)tu_read_file(at("out.txt"), NULL);
    assert_string_equal(s, "dyn\n");
    free(s);
    s = tu_run_ok("frames stat", "%s stat %s", tu_frames_bin(), at("d.frames"));
    assert_non_null(strstr(s, "/usr/aarch64-linux-gnu/lib/libc.so.6"));
    assert_non_null(strstr(s, "/dyn  0x")); /* the program, by its absolute path */
    free(s);
    unlink(at("d.frames"));
}

/* Threads (two rounds of three, so that QEMU gives new threads the vCPU indices of
   ended ones): every thread is in the trace under its own id, each worker with the
   same count of instructions (they run the same code), none crashes. */
static void test_threads(void **state) {
    static const char src[] =
        "#include <pthread.h>\n#include <stdio.h>\n"
        "static volatile long v[4];\n"
        "static void *work(void *p) { long i = (long)p; for (int k = 0; k < 1000; k++) v[i] += k; return 0; }\n"
        "int main(void) {\n"
        "    for (int round = 0; round < 2; round++) {\n"
        "        pthread_t t[3];\n"
        "        for (long i = 0; i < 3; i++) pthread_create(&t[i], 0, work, (void *)i);\n"
        "        for (int i = 0; i < 3; i++) pthread_join(t[i], 0);\n"
        "    }\n"
        "    printf(\"%ld\\n\", v[0] + v[1] + v[2]);\n"
        "    return 0;\n"
        "}\n";
    frames_reader *r;
    frames_frame f;
    uint64_t tids[16], counts[16];
    size_t nt = 0, k;
    int rc;
    char *out;
    (void)state;
    assert_int_equal(tu_write_file(at("thr.c"), src, strlen(src)), 0);
    free(tu_run_ok("aarch64-linux-gnu-gcc", "aarch64-linux-gnu-gcc -O1 -static -pthread -o %s %s 2>&1", at("thr"),
                   at("thr.c")));
    assert_int_equal(record_prog("thr", "--quiet", "t.frames"), 0);
    out = (char *)tu_read_file(at("out.txt"), NULL);
    assert_string_equal(out, "2997000\n");
    free(out);
    r = open_trace(at("t.frames"), &aarch64);
    while ((rc = frames_reader_next(r, &f)) > 0) {
        if (f.kind != FRAMES_KIND_STD) continue;
        for (k = 0; k < nt && tids[k] != f.std.thread_id; k++) {}
        if (k == nt) {
            assert_true(nt < 16);
            tids[nt] = f.std.thread_id;
            counts[nt++] = 0;
            /* a thread's first instruction carries every register */
            assert_int_equal(f.std.npre >= 33, 1);
        }
        counts[k]++;
    }
    assert_int_equal(rc, 0);
    frames_reader_close(r);
    assert_int_equal(nt, 7);
    for (k = 2; k < nt; k++) assert_int_equal(counts[k], counts[1]);
    unlink(at("t.frames"));
}

/* The engine is chosen for an AArch64 program; --no-mem drops memory operands; a QEMU
   that is not there is exit 126 with a message, and no trace. */
static void test_default_no_mem_and_errors(void **state) {
    frames_reader *r;
    frames_frame f;
    uint64_t want[8];
    size_t nmem = 0, n = 0, k;
    int rc;
    char *err;
    (void)state;
    expected_stores(&aarch64, want);
    assert_int_equal(record("--no-mem --quiet", "b.frames"), (int)(want[7] & 0x7f));
    r = open_trace(at("b.frames"), &aarch64);
    while ((rc = frames_reader_next(r, &f)) > 0) {
        if (f.kind != FRAMES_KIND_STD) continue;
        n++;
        for (k = 0; k < f.std.npre; k++) nmem += f.std.pre[k].spec == FRAMES_MEM;
        for (k = 0; k < f.std.npost; k++) nmem += f.std.post[k].spec == FRAMES_MEM;
    }
    assert_int_equal(rc, 0);
    frames_reader_close(r);
    assert_true(n > 50);
    assert_int_equal(nmem, 0);
    unlink(at("b.frames"));

    assert_int_equal(record("--qemu /nonexistent/qemu-aarch64", "c.frames"), 126);
    err = (char *)tu_read_file(at("err.txt"), NULL);
    assert_non_null(strstr(err, "frames record: --qemu /nonexistent/qemu-aarch64: not an executable file"));
    free(err);
    assert_int_not_equal(access(at("c.frames"), F_OK), 0);

    /* programs the engine does not record: 126, a message, no trace */
    {
        static const struct {
            const char *args, *message;
        } cases[] = {
            {"--engine qemu -o c.frames -- ./ppc64le", "ELF machine 21 (64-bit, little-endian): the qemu engine records AArch64"},
            {"--engine qemu -o c.frames -- ./hdronly", "an ELF for AArch64 without program headers"},
            {"-o c.frames -- ./hdronly", "an ELF for AArch64, not x86-64: no engine here can run it"},
        };
        uint8_t elf[64] = {0x7f, 'E', 'L', 'F', 2, 1, 1};
        size_t i;
        elf[16] = 2;   /* ET_EXEC */
        elf[18] = 183; /* EM_AARCH64, no program header */
        assert_int_equal(tu_write_file(at("hdronly"), elf, sizeof elf), 0);
        elf[18] = 21; /* EM_PPC64 */
        assert_int_equal(tu_write_file(at("ppc64le"), elf, sizeof elf), 0);
        free(tu_run_ok("chmod", "chmod +x %s %s", at("hdronly"), at("ppc64le")));
        for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            int st;
            free(tu_run(&st, "cd %s && %s record %s >out.txt 2>err.txt", dir, tu_frames_bin(), cases[i].args));
            err = (char *)tu_read_file(at("err.txt"), NULL);
            if (st != 126 || !strstr(err, cases[i].message)) print_error("case %zu: exit %d: %s\n", i, st, err);
            assert_int_equal(st, 126);
            assert_non_null(strstr(err, cases[i].message));
            free(err);
            assert_int_not_equal(access(at("c.frames"), F_OK), 0);
        }
    }
}

/* tools/install.sh (./build.sh install) installs the plugin where the installed command
   finds it: the installed frames records an AArch64 program, with no build tree next to
   it and no FRAMES_QEMU_PLUGIN. */
static void test_installed_plugin(void **state) {
    uint64_t want[8];
    frames_reader *r;
    int st;
    (void)state;
    expected_stores(&aarch64, want);
    free(tu_run_ok("install.sh", "FRAMES_BIN='%s' '%s/tools/install.sh' '%s' 2>&1", tu_frames_bin(), tu_root(),
                   at("prefix")));
    assert_int_equal(access(at("prefix/lib/frames/qemu/frames_qemu.so"), R_OK), 0);
    free(tu_run(&st, "cd %s && env -i PATH=\"$PATH\" prefix/bin/frames record --quiet -o i.frames -- ./prog >out.txt "
                     "2>err.txt", dir));
    assert_int_equal(st, (int)(want[7] & 0x7f));
    r = open_trace(at("i.frames"), &aarch64);
    frames_reader_close(r);
    unlink(at("i.frames"));
    free(tu_run_ok("rm", "rm -rf %s", at("prefix")));
}

/* A "QEMU" (--qemu) that writes what it is given to the plugin's descriptor instead of
   running the program: the engine's checks of the stream. Returns the exit status and
   leaves frames record's messages in err.txt. */
static int fake_qemu(const char *stream_printf, const char *trace) {
    char script[1024];
    int st;
    snprintf(script, sizeof script,
             "#!/bin/sh\n"
             "for a; do case $a in *,fd=*) fd=${a##*,fd=}; fd=${fd%%%%,*};; esac; done\n"
             "printf '%s' >/dev/fd/$fd\n"
             "exit 3\n",
             stream_printf);
    assert_int_equal(tu_write_file(at("fakeqemu"), script, strlen(script)), 0);
    free(tu_run_ok("chmod", "chmod +x %s", at("fakeqemu")));
    free(tu_run(&st, "cd %s && %s record --qemu ./fakeqemu -o %s -- ./prog >out.txt 2>err.txt", dir, tu_frames_bin(),
                trace));
    return st;
}

static void test_bad_streams(void **state) {
    static const struct {
        const char *stream, *message;
    } cases[] = {
        {"", "QEMU did not run the program with the frames plugin (exit status 3)"},
        /* a frame of 0 bytes */
        {"\\0\\0\\0\\0\\0\\0\\0\\0", "the qemu plugin's stream is malformed: a frame of 0 bytes at offset 0"},
        /* 2^56 bytes */
        {"\\0\\0\\0\\0\\0\\0\\0\\1", "the qemu plugin's stream is malformed: a frame of 72057594037927936 bytes"},
        /* 3 bytes that are no frame message */
        {"\\3\\0\\0\\0\\0\\0\\0\\0\\377\\377\\377", "the qemu plugin's stream is malformed: frame 0 at offset 0: "},
        /* cut inside a frame */
        {"\\20\\0\\0\\0\\0\\0\\0\\0abc", "the qemu plugin's stream ends inside a frame"},
    };
    size_t i;
    (void)state;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *err;
        int st = fake_qemu(cases[i].stream, "e.frames");
        err = (char *)tu_read_file(at("err.txt"), NULL);
        if (st != 125 || !strstr(err, cases[i].message)) print_error("case %zu: exit %d: %s\n", i, st, err);
        assert_int_equal(st, 125);
        assert_non_null(strstr(err, cases[i].message));
        free(err);
        unlink(at("e.frames"));
    }
}

/* A QEMU >= 9.2 for the plugin's official API route: $FRAMES_QEMU_NEW_DIR, else
   build/qemu10/usr/bin (./build.sh test fetches it there); NULL (with a note) when there
   is none or it cannot load plugins (a static build: Debian's qemu-user from 9.x on). */
static const char *new_qemu_dir(void) {
    static char path[600];
    const char *env = getenv("FRAMES_QEMU_NEW_DIR");
    char *out;
    int st;
    if (env && *env) snprintf(path, sizeof path, "%s", env);
    else snprintf(path, sizeof path, "%s/build/qemu10/usr/bin", tu_root());
    if (access(path, X_OK) != 0) {
        printf("test_record_qemu: no QEMU >= 9.2 (FRAMES_QEMU_NEW_DIR or build/qemu10/usr/bin): official plugin API "
               "route skipped\n");
        return NULL;
    }
    out = tu_run(&st, "%s/qemu-aarch64 --version | sed -n '1s/.*version \\([0-9]*\\)\\.\\([0-9]*\\).*/\\1 \\2/p'", path);
    {
        int major = 0, minor = 0;
        if (st || sscanf(out, "%d %d", &major, &minor) != 2 || major * 100 + minor < 902) {
            printf("test_record_qemu: %s/qemu-aarch64 is not QEMU >= 9.2: official plugin API route skipped\n", path);
            free(out);
            return NULL;
        }
    }
    free(out);
    free(tu_run(&st, "%s/qemu-aarch64 -h | grep -q '^-plugin'", path));
    if (st) {
        printf("test_record_qemu: %s/qemu-aarch64 cannot load plugins (a static build): official plugin API route "
               "skipped\n", path);
        return NULL;
    }
    return path;
}

/* The checks against QEMU's logs again, under the QEMU >= 9.2 of new_qemu_dir (first on
   PATH, where frames record and the reference runs find qemu-ARCH): the plugin's
   official API route (qemu_plugin_read_register, qemu_plugin_mem_get_value). */
static void test_official_api_route(void **state) {
    const char *newdir = new_qemu_dir(), *old = getenv("PATH");
    char *saved;
    size_t n;
    (void)state;
    if (!newdir) return;
    saved = strdup(old ? old : "/usr/bin:/bin");
    assert_non_null(saved);
    {
        char *path = (char *)malloc((n = strlen(newdir) + strlen(saved) + 2));
        assert_non_null(path);
        snprintf(path, n, "%s:%s", newdir, saved);
        setenv("PATH", path, 1);
        free(path);
    }
    one_insn = "-one-insn-per-tb";
    run_layout = "QEMU_RESERVED_VA=0x100000000 ";
    {
        int st;
        free(tu_run(&st, "nm -D %s/qemu-aarch64 | grep -q ' qemu_plugin_start_code$'", newdir));
        program_module = st == 0;
        if (!program_module)
            printf("test_record_qemu: %s/qemu-aarch64 does not export qemu_plugin_start_code: the traces have no "
                   "module for the program\n", newdir);
    }
    check_against_qemu(&aarch64, "prog");
    if (build_prog(&riscv64, "prog_rv") == 0) check_against_qemu(&riscv64, "prog_rv");
    if (build_prog(&arm, "prog_arm") == 0) check_against_qemu(&arm, "prog_arm");
    check_libc_program(&aarch64, "libc_new");
    one_insn = "-singlestep";
    run_layout = "";
    program_module = 1;
    setenv("PATH", saved, 1);
    free(saved);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_aarch64_same_as_qemu_logs),
        cmocka_unit_test(test_aarch64_libc_program),
        cmocka_unit_test(test_signals),
        cmocka_unit_test(test_arm_same_as_qemu_logs),
        cmocka_unit_test(test_arm_a32_same_as_qemu_logs),
        cmocka_unit_test(test_mips_same_as_qemu_logs),
        cmocka_unit_test(test_riscv64_same_as_qemu_logs),
        cmocka_unit_test(test_x86_64_same_as_qemu_logs),
        cmocka_unit_test(test_x86_64_same_as_valgrind),
        cmocka_unit_test(test_dynamic_with_sysroot),
        cmocka_unit_test(test_threads),
        cmocka_unit_test(test_default_no_mem_and_errors),
        cmocka_unit_test(test_bad_streams),
        cmocka_unit_test(test_installed_plugin),
        cmocka_unit_test(test_official_api_route),
    };
    const char *plugin = tu_beside_frames("qemu/frames_qemu.so");
    int st;
    char *out = tu_run(&st, "command -v qemu-aarch64 >/dev/null && command -v aarch64-linux-gnu-gcc >/dev/null");
    free(out);
    if (st) {
        printf("test_record_qemu: qemu-aarch64 or aarch64-linux-gnu-gcc missing (packages qemu-user, "
               "gcc-aarch64-linux-gnu): skipped\n");
        return 0;
    }
    if (access(plugin, R_OK) != 0) {
        printf("test_record_qemu: the qemu plugin was not built (%s): skipped\n", plugin);
        return 0;
    }
    return cmocka_run_group_tests(tests, setup, teardown);
}

#else
TU_SKIPPED_MAIN("test_record_qemu", TU_RECORD_NOT_BUILT)
#endif
