/* frames_qemu.c - the QEMU TCG plugin of `frames record --engine qemu` (user mode).

   Loaded by a dynamic qemu-ARCH (`-plugin frames_qemu.so,fd=N[,mem=off][,sample=N:M]`),
   it encodes frames with the recording API (one frames_recorder per vCPU = guest thread)
   and writes them, in container form (8-byte length, payload, frame after frame), to the
   descriptor fd. engine_qemu.c reads that stream, checks it and appends it to the
   command's writer (compression and the output file stay the command's).

   What is recorded, per executed instruction (QEMU runs one instruction per block,
   -singlestep, so that the CPU state is exact at each instruction's callback):
     - address, bytes, thread id (the guest thread's id: gettid() of the vCPU thread);
     - at a thread's first instruction every register of the table below, values before
       (informational: read = written = false);
     - registers after: the registers of the table whose value differs at the next
       instruction of the thread (the value after this one); only those the
       instruction's encoding can write are read (AArch64, RISC-V: decoded at
       translation, with where it can go next; elsewhere, or at any other next pc,
       all of them);
     - memory: loads (value read, READ|BEFORE) and stores (value written, WRITE|AFTER),
       address and size, read from guest memory after the access;
   syscall frames (number, six arguments) at the svc instruction, whose result is the
   register change after it; modload frames for the program's code and every executable
   mmap/mprotect of a file (named by /proc/self/fd); exception frames for signals
   delivered to handlers (AArch64, RISC-V: signal_delivered).

   Two routes to values, chosen when the plugin loads:
     official  QEMU >= 9.2: qemu_plugin_get_registers / qemu_plugin_read_register and
               qemu_plugin_mem_get_value (found by dlsym), and for a signal frame's
               saved registers qemu_plugin_read_memory_vaddr (QEMU 10): such a QEMU
               exports only its qemu_plugin_* functions, not guest_base;
     gdbstub   QEMU 7.2 (Debian bookworm): the exported gdbstub reader of the target
               (aarch64_cpu_gdb_read_register) on the thread's CPU (current_cpu, a TLS
               symbol), and guest memory at guest_base + address.
   Neither: the plugin refuses to install with a message. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#define FRAMES_IMPLEMENTATION
#define FRAMES_STATIC
#include "frames.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "qemu_api.h"

#define EXPORT __attribute__((visibility("default")))

/* The plugin API version we ask for: 1 for QEMU 7.2's API, 2 where the register API is
   (set by the constructor below, before QEMU reads it). */
EXPORT int qemu_plugin_version = 1;

__attribute__((constructor)) static void choose_version(void) {
    if (dlsym(RTLD_DEFAULT, "qemu_plugin_read_register")) qemu_plugin_version = 2;
}

/* ---------------------------------------------------------------- targets */

#define FQ_ALL (~0ULL)

/* Where an instruction can go next, known at translation: its successor is checked at
   the next instruction of the thread; any other pc (a signal handler, a sigreturn, a
   restarted instruction) means something else changed registers, and they are all read. */
enum fq_succ { FQ_SUCC_NEXT, FQ_SUCC_TARGET, FQ_SUCC_NEXT_OR_TARGET, FQ_SUCC_REG };

typedef struct fq_insn {       /* one translated instruction (kept until exit) */
    struct fq_insn *next;
    uint64_t pc;
    uint32_t len;
    uint8_t bytes[FRAMES_REC_MAX_RAWBYTES];
    uint64_t writes;           /* registers it can change (regs[] bits), FQ_ALL */
    uint64_t then;             /* registers the next instruction can change too (state
                                  this one sets and the next one clears: BTYPE) */
    uint64_t target;           /* FQ_SUCC_TARGET, FQ_SUCC_NEXT_OR_TARGET: the branch's;
                                  FQ_SUCC_REG: the offset added to the register */
    uint8_t succ, succ_reg;    /* enum fq_succ; FQ_SUCC_REG: the regs[] index of the target */
} fq_insn;

/* A register the plugin records: BAP's name, the gdbstub register number (7.2 route),
   the gdb name (official route), its size in bytes. */
typedef struct fq_reg {
    const char *name;
    int gdb;
    const char *gdbname;
    unsigned size;
    uint32_t kind;
} fq_reg;

#define FQ_MAX_REGS 40

typedef struct fq_target {
    const char *qemu;          /* qemu_info_t.target_name */
    /* At translation: the registers (bits of regs[] indices) the instruction can write and
       where it can go next (in->succ), or FQ_ALL: every register is read after it. */
    uint64_t (*writes)(fq_insn *in);
    const char *gdb_reader;    /* the gdbstub reader QEMU 7.2 exports */
    int nregs;
    fq_reg regs[FQ_MAX_REGS];
    int64_t nr_mmap, nr_mprotect; /* syscall numbers (module loads) */
    /* Signals (targets with a decoder: a handler's entry is an unexpected successor):
       rt_sigaction's number (0: signals are not recognised), the registers of the
       handler's signal number and of the stack pointer, and where the ucontext keeps
       the pc and each register of regs[] (the kernel's layout, which QEMU's signal
       code writes: the signal frame at the handler's sp is a siginfo, 128 bytes, then
       the ucontext). */
    int64_t nr_sigaction;
    int sig_reg, sp_reg;
    uint64_t sig_then;         /* registers the handler's first instruction can change too */
    unsigned uc_pc, uc_regs[FQ_MAX_REGS];
    int big_endian;            /* registers and memory in the guest's order: swapped */
} fq_target;

/* A target: QEMU's name for it, its gdbstub reader, its decoder of what an instruction
   writes and its syscall numbers of mmap and mprotect; no registers yet. */
static fq_target target_base(const char *qemu, const char *gdb_reader, uint64_t (*writes)(fq_insn *),
                             int64_t nr_mmap, int64_t nr_mprotect) {
    fq_target t = {.qemu = qemu, .writes = writes, .gdb_reader = gdb_reader,
                   .nr_mmap = nr_mmap, .nr_mprotect = nr_mprotect};
    return t;
}

/* Registers 0..n-1 named PREFIX<i> for BAP and prefix<i> for gdb (x0, r0, ...), gdb
   number i, after t's registers; the names live in the caller's static arrays. */
static void numbered_regs(fq_target *t, int n, char upper, char lower, unsigned size, char (*names)[4],
                          char (*gnames)[4]) {
    int i;
    for (i = 0; i < n; i++) {
        snprintf(names[i], 4, "%c%d", upper, i);
        snprintf(gnames[i], 4, "%c%d", lower, i);
        t->regs[t->nregs++] = (fq_reg){names[i], i, gnames[i], size, FRAMES_VAL_GPR};
    }
}

/* The registers regs[0..n) after t's registers. */
static void append_regs(fq_target *t, const fq_reg *regs, int n) {
    int i;
    for (i = 0; i < n; i++) t->regs[t->nregs++] = regs[i];
}

/* AArch64: what an A64 instruction can write, decoded from its encoding class (Arm ARM
   C4.1, "A64 instruction set encoding") as a superset: every class writes at most the
   register fields named below, a field of 31 is taken as SP (it is SP or XZR), and a
   class not listed (exception generation: svc, brk; SVE; unallocated) reads all. An
   instruction QEMU does not implement raises SIGILL: its successor is then not the one
   expected, and every register is read. Bits: X0..X30 = 0..30, SP = 31, NZCV = 32. */
#define A64_NZCV (1ULL << 32)
#define A64_R(n) (1ULL << ((n) & 31))

static int32_t sext(uint32_t v, unsigned bits) { return (int32_t)(v << (32 - bits)) >> (32 - bits); }

static uint64_t a64_branch(fq_insn *in, uint32_t w) {
    unsigned rn = w >> 5 & 31;
    if ((w & 0x7c000000u) == 0x14000000u) { /* B, BL (imm26) */
        in->succ = FQ_SUCC_TARGET;
        in->target = in->pc + (uint64_t)(int64_t)sext(w & 0x3ffffffu, 26) * 4;
        return w >> 31 ? A64_R(30) : 0;
    }
    if ((w & 0x7e000000u) == 0x34000000u || (w & 0xff000000u) == 0x54000000u) { /* CBZ, CBNZ, B.cond (imm19) */
        in->succ = FQ_SUCC_NEXT_OR_TARGET;
        in->target = in->pc + (uint64_t)(int64_t)sext(w >> 5 & 0x7ffffu, 19) * 4;
        return 0;
    }
    if ((w & 0x7e000000u) == 0x36000000u) { /* TBZ, TBNZ (imm14) */
        in->succ = FQ_SUCC_NEXT_OR_TARGET;
        in->target = in->pc + (uint64_t)(int64_t)sext(w >> 5 & 0x3fffu, 14) * 4;
        return 0;
    }
    if ((w & 0xfe000000u) == 0xd6000000u) /* branches to a register set PSTATE.BTYPE
                                             (cpsr 11:10), which the next instruction clears */
        in->then = A64_NZCV;
    if ((w & 0xff9ffc1fu) == 0xd61f0000u) { /* BR, BLR, RET Xn (no pointer authentication) */
        in->succ = FQ_SUCC_REG;
        in->succ_reg = (uint8_t)rn;
        return A64_R(30) | A64_NZCV;
    }
    if ((w & 0xffc00000u) == 0xd5000000u) /* system: MRS, SYS(L) write Rt; MSR NZCV and the
                                             flag instructions write NZCV; the pointer
                                             authentication hints sign X17 or X30 */
        return A64_R(w) | A64_R(16) | A64_R(17) | A64_R(30) | A64_NZCV;
    return FQ_ALL;
}

static uint64_t a64_load_store(uint32_t w) {
    unsigned rt = w & 31, rn = w >> 5 & 31, rt2 = w >> 10 & 31, rs = w >> 16 & 31;
    switch (w >> 28 & 3) {
    case 0:
        if (w >> 26 & 1) return A64_R(rn);                       /* SIMD structures: the base */
        if (w >> 24 & 1) return A64_R(rt) | A64_R(rn);           /* memory tags */
        /* exclusive, ordered, compare and swap (CASP: pairs) */
        return A64_R(rt) | A64_R(rt + 1) | A64_R(rt2) | A64_R(rs) | A64_R(rs + 1);
    case 1: /* literal loads; LDAPR/STLUR unscaled; memory copy and set (Rd, Rs, Rn) */
        return A64_R(rt) | A64_R(rn) | A64_R(rs);
    case 2: /* pairs: the base when post- or pre-indexed (bit 23) */
        return A64_R(rt) | A64_R(rt2) | (w >> 23 & 1 ? A64_R(rn) : 0);
    default:
        if (w >> 24 & 1) return A64_R(rt);                        /* unsigned offset */
        if (!(w >> 21 & 1)) return A64_R(rt) | (w >> 10 & 1 ? A64_R(rn) : 0); /* imm9: post-, pre-index */
        return A64_R(rt) | A64_R(rn);                             /* register offset, atomics, LDRA* */
    }
}

static uint64_t a64_writes(fq_insn *in) {
    uint32_t w = (uint32_t)in->bytes[0] | (uint32_t)in->bytes[1] << 8 | (uint32_t)in->bytes[2] << 16 |
                 (uint32_t)in->bytes[3] << 24;
    uint64_t flags = w >> 29 & 1 ? A64_NZCV : 0; /* S (ANDS: opc 11) in both data processing classes */
    if (in->len != 4) return FQ_ALL;
    switch (w >> 25 & 15) {
    case 8: case 9:   /* data processing, immediate: Rd */
    case 5: case 13:  /* data processing, register: Rd (conditional compare has S set) */
        return A64_R(w) | flags;
    case 7: case 15:  /* SIMD and FP: the V registers (not recorded), Rd of moves and
                         conversions to a general register, NZCV of compares */
        return A64_R(w) | A64_NZCV;
    case 10: case 11:
        return a64_branch(in, w);
    case 4: case 6: case 12: case 14:
        return a64_load_store(w);
    default:
        return FQ_ALL;
    }
}

/* Every register, after any instruction: the targets without a decoder. */
static uint64_t all_writes(fq_insn *in) {
    (void)in;
    return FQ_ALL;
}

static fq_target aarch64_target(void) {
    static const fq_reg named[] = {{"SP", 31, "sp", 8, FRAMES_VAL_GPR},
                                   {"NZCV", 33, "cpsr", 4, FRAMES_VAL_CTRL}}; /* gdb's cpsr: PSTATE */
    static char names[31][4], gnames[31][4];
    fq_target t = target_base("aarch64", "aarch64_cpu_gdb_read_register", a64_writes, 222, 226);
    int i;
    numbered_regs(&t, 31, 'X', 'x', 8, names, gnames);
    append_regs(&t, named, 2);
    /* struct ucontext: uc_flags, uc_link, uc_stack (24), uc_sigmask (8), 120 bytes, then
       the sigcontext at 176: fault_address, regs[31], sp, pc, pstate */
    t.nr_sigaction = 134;
    t.sig_reg = 0;
    t.sp_reg = 31;
    t.sig_then = A64_NZCV; /* the handler is entered as by BLR: BTYPE 2, cleared by its first instruction */
    t.uc_pc = 440;
    for (i = 0; i < 31; i++) t.uc_regs[i] = 184 + 8 * (unsigned)i;
    t.uc_regs[31] = 432;
    t.uc_regs[32] = 448;
    return t;
}

/* ARM (A32 and T32; qemu-arm): R0..R12, SP, LR and CPSR (gdb 0..14 and 25; the PC,
   15, is the frame's address). */
static fq_target arm_target(void) {
    static const fq_reg named[] = {{"SP", 13, "sp", 4, FRAMES_VAL_GPR},
                                   {"LR", 14, "lr", 4, FRAMES_VAL_GPR},
                                   {"CPSR", 25, "cpsr", 4, FRAMES_VAL_CTRL}};
    static char names[13][4], gnames[13][4];
    /* mmap2 (its offset is in pages; only address and length matter) */
    fq_target t = target_base("arm", "arm_cpu_gdb_read_register", all_writes, 192, 125);
    numbered_regs(&t, 13, 'R', 'r', 4, names, gnames);
    append_regs(&t, named, 3);
    return t;
}

/* MIPS 32 (o32; qemu-mips big-endian, qemu-mipsel little): r1..r31 by their ABI names
   in capitals (BAP's MIPS names), HI and LO (gdb 1..31, 34, 33). */
static fq_target mips_target(int big_endian) {
    static const char *const abi[32] = {"ZERO", "AT", "V0", "V1", "A0", "A1", "A2", "A3", "T0", "T1", "T2",
                                        "T3", "T4", "T5", "T6", "T7", "S0", "S1", "S2", "S3", "S4", "S5",
                                        "S6", "S7", "T8", "T9", "K0", "K1", "GP", "SP", "FP", "RA"};
    static const char *const gdb[32] = {"r0", "r1", "r2", "r3", "r4", "r5", "r6", "r7", "r8", "r9", "r10",
                                        "r11", "r12", "r13", "r14", "r15", "r16", "r17", "r18", "r19", "r20",
                                        "r21", "r22", "r23", "r24", "r25", "r26", "r27", "r28", "r29", "r30",
                                        "r31"};
    static const fq_reg named[] = {{"HI", 34, "hi", 4, FRAMES_VAL_GPR}, {"LO", 33, "lo", 4, FRAMES_VAL_GPR}};
    fq_target t = target_base(big_endian ? "mips" : "mipsel", "mips_cpu_gdb_read_register", all_writes,
                              4090, 4125);
    int i;
    for (i = 1; i < 32; i++) t.regs[t.nregs++] = (fq_reg){abi[i], i, gdb[i], 4, FRAMES_VAL_GPR};
    append_regs(&t, named, 2);
    t.big_endian = big_endian;
    return t;
}

/* RISC-V 64 (qemu-riscv64): X1..X31 (gdb 1..31; X0 is zero and never changes), the
   register names of LLVM's RISC-V target that BAP's disassembler reports. What an
   instruction writes is its rd field (RISC-V unprivileged ISA, chapters "RV32I" and "C"
   for the 16-bit forms): branches and stores write nothing, ecall reads all, a format not
   listed reads all. Bits: X1..X31 = 0..30. */
#define RV_R(x) ((x) ? 1ULL << ((x) - 1) : 0)

static uint64_t rv_jump(fq_insn *in, int64_t offset) {
    in->succ = FQ_SUCC_TARGET;
    in->target = in->pc + (uint64_t)offset;
    return 0;
}

static uint64_t rv_branch(fq_insn *in, int64_t offset) {
    in->succ = FQ_SUCC_NEXT_OR_TARGET;
    in->target = in->pc + (uint64_t)offset;
    return 0;
}

/* jalr and c.jr/c.jalr: to rs1 + offset with bit 0 cleared */
static uint64_t rv_jump_reg(fq_insn *in, unsigned rs1, int64_t offset, unsigned rd) {
    if (!rs1) {
        in->succ = FQ_SUCC_TARGET;
        in->target = (uint64_t)offset & ~1ULL;
    } else {
        in->succ = FQ_SUCC_REG;
        in->succ_reg = (uint8_t)(rs1 - 1);
        in->target = (uint64_t)offset;
    }
    return RV_R(rd);
}

static uint64_t rv_compressed(fq_insn *in, uint32_t h) {
    unsigned f3 = h >> 13 & 7, rd = h >> 7 & 31, rs2 = h >> 2 & 31;
    switch ((h & 3) << 3 | f3) {
    case 0: case 1: case 2: case 3: /* c.addi4spn, c.fld, c.lw, c.ld: rd' */
        return RV_R(8 + (h >> 2 & 7));
    case 8: case 9: case 10: case 11: /* c.addi, c.addiw, c.li, c.lui / c.addi16sp */
        return RV_R(rd);
    case 12: /* c.srli .. c.and: rd' */
        return RV_R(8 + (h >> 7 & 7));
    case 13: /* c.j */
        return rv_jump(in, sext((h >> 12 & 1) << 11 | (h >> 11 & 1) << 4 | (h >> 9 & 3) << 8 | (h >> 8 & 1) << 10 |
                                    (h >> 7 & 1) << 6 | (h >> 6 & 1) << 7 | (h >> 3 & 7) << 1 | (h >> 2 & 1) << 5, 12));
    case 14: case 15: /* c.beqz, c.bnez */
        return rv_branch(in, sext((h >> 12 & 1) << 8 | (h >> 10 & 3) << 3 | (h >> 5 & 3) << 6 | (h >> 3 & 3) << 1 |
                                      (h >> 2 & 1) << 5, 9));
    case 16: case 17: case 18: case 19: /* c.slli, c.fldsp, c.lwsp, c.ldsp */
        return RV_R(rd);
    case 20:
        if (rs2) return RV_R(rd);                            /* c.mv, c.add */
        if (!rd) return FQ_ALL;                              /* c.ebreak */
        return rv_jump_reg(in, rd, 0, h >> 12 & 1 ? 1 : 0);  /* c.jr, c.jalr (ra) */
    case 5: case 6: case 7: case 21: case 22: case 23: /* stores */
        return 0;
    default:
        return FQ_ALL;
    }
}

static uint64_t rv_writes(fq_insn *in) {
    uint32_t w = (uint32_t)in->bytes[0] | (uint32_t)in->bytes[1] << 8;
    unsigned rd, rs1;
    if (in->len == 2) return rv_compressed(in, w);
    if (in->len != 4) return FQ_ALL;
    w |= (uint32_t)in->bytes[2] << 16 | (uint32_t)in->bytes[3] << 24;
    rd = w >> 7 & 31;
    rs1 = w >> 15 & 31;
    switch (w & 0x7f) {
    case 0x37: case 0x17:             /* lui, auipc */
    case 0x13: case 0x1b:             /* op-imm(-32) */
    case 0x33: case 0x3b:             /* op(-32), M */
    case 0x03: case 0x2f:             /* loads, atomics */
    case 0x53:                        /* FP: rd of moves, conversions, compares to X */
        return RV_R(rd);
    case 0x07: case 0x27:             /* FP loads and stores */
    case 0x23:                        /* stores */
    case 0x43: case 0x47: case 0x4b: case 0x4f: /* fused multiply-add (F registers) */
    case 0x0f:                        /* fences */
        return 0;
    case 0x73:                        /* ecall, ebreak (all); CSR instructions: rd */
        return w >> 12 & 7 ? RV_R(rd) : FQ_ALL;
    case 0x6f:                        /* jal */
        rv_jump(in, sext((w >> 31) << 20 | (w >> 21 & 0x3ff) << 1 | (w >> 20 & 1) << 11 | (w >> 12 & 0xff) << 12, 21));
        return RV_R(rd);
    case 0x67:                        /* jalr */
        return rv_jump_reg(in, rs1, sext(w >> 20, 12), rd);
    case 0x63:                        /* branches */
        return rv_branch(in, sext((w >> 31) << 12 | (w >> 25 & 0x3f) << 5 | (w >> 8 & 15) << 1 | (w >> 7 & 1) << 11, 13));
    default:
        return FQ_ALL;
    }
}

static fq_target riscv64_target(void) {
    static const char *const abi[32] = {"zero", "ra", "sp", "gp", "tp",  "t0",  "t1", "t2", "fp", "s1", "a0",
                                        "a1",   "a2", "a3", "a4", "a5",  "a6",  "a7", "s2", "s3", "s4", "s5",
                                        "s6",   "s7", "s8", "s9", "s10", "s11", "t3", "t4", "t5", "t6"};
    static char names[32][4];
    fq_target t = target_base("riscv64", "riscv_cpu_gdb_read_register", rv_writes, 222, 226);
    int i;
    for (i = 1; i < 32; i++) {
        snprintf(names[i], sizeof names[i], "X%d", i);
        t.regs[t.nregs++] = (fq_reg){names[i], i, abi[i], 8, FRAMES_VAL_GPR};
    }
    /* struct ucontext as on AArch64, the sigcontext at 176: pc, then x1..x31 */
    t.nr_sigaction = 134;
    t.sig_reg = 9;  /* a0 */
    t.sp_reg = 1;   /* sp */
    t.uc_pc = 176;
    for (i = 0; i < 31; i++) t.uc_regs[i] = 184 + 8 * (unsigned)i;
    return t;
}

/* x86-64 (qemu-x86_64): the 16 GPRs under the names the other engines of frames record
   write (gdb 0..15). Not RFLAGS: QEMU 7.2's gdbstub reader returns env->eflags without
   the condition codes it computes lazily (-d cpu computes them), so its value would be
   wrong after most arithmetic. */
static fq_target x86_64_target(void) {
    static const char *const names[16] = {"RAX", "RBX", "RCX", "RDX", "RSI", "RDI", "RBP", "RSP",
                                          "R8",  "R9",  "R10", "R11", "R12", "R13", "R14", "R15"};
    static const char *const gdb[16] = {"rax", "rbx", "rcx", "rdx", "rsi", "rdi", "rbp", "rsp",
                                        "r8",  "r9",  "r10", "r11", "r12", "r13", "r14", "r15"};
    fq_target t = target_base("x86_64", "x86_cpu_gdb_read_register", all_writes, 9, 10);
    int i;
    for (i = 0; i < 16; i++) t.regs[t.nregs++] = (fq_reg){names[i], i, gdb[i], 8, FRAMES_VAL_GPR};
    return t;
}

/* ---------------------------------------------------------------- state */


typedef struct fq_cpu {
    frames_recorder rec;
    uint8_t buf[1 << 18];
    int open;                  /* an instruction is open (its post list waits) */
    int started;               /* first instruction seen */
    const fq_insn *insn;       /* the open instruction */
    uint64_t then;             /* the previous one's fq_insn.then */
    uint64_t regs[FQ_MAX_REGS];  /* values before the open instruction (all of them) */
    struct qemu_plugin_register *handles[FQ_MAX_REGS]; /* official route */
    frames_gbytes *scratch;
    void **current_cpu;        /* 7.2 route: this thread's current_cpu */
} fq_cpu;

#define FQ_MAX_CPUS 4096

static struct {
    fq_target t;
    int fd, mem, official;
    uint64_t all;              /* the bits of t.regs */
    uint64_t handlers[65];     /* of each signal, from rt_sigaction (0: none) */
    volatile int forked;       /* in a child QEMU forked for the guest: it records nothing */
    uint64_t sample_on, sample_off;
    pthread_mutex_t lock, out;
    fq_cpu *cpus[FQ_MAX_CPUS];
    fq_insn *insns;
    int failed;
    /* official route */
    frames_garray *(*get_registers)(void);
    int (*read_register)(struct qemu_plugin_register *, frames_gbytes *);
    size_t (*insn_data_copy)(const struct qemu_plugin_insn *, void *, size_t);
    qemu_plugin_mem_value (*mem_get_value)(qemu_plugin_meminfo_t);
    bool (*read_memory)(uint64_t, frames_gbytes *, size_t); /* QEMU 10; NULL before */
    /* 7.2 route */
    int (*gdb_read)(void *cs, frames_gbytes *buf, int n);
    uintptr_t *guest_base;
    /* glib, from QEMU's process */
    frames_gbytes *(*byte_array_new)(void);
} g = {.fd = -1, .mem = 1, .lock = PTHREAD_MUTEX_INITIALIZER, .out = PTHREAD_MUTEX_INITIALIZER};

static void fq_fail(const char *fmt, const char *arg) {
    if (g.failed++) return;
    fputs("frames record: qemu plugin: ", stderr);
    fprintf(stderr, fmt, arg);
    fputc('\n', stderr);
}

/* ---------------------------------------------------------------- output */

static int fq_flush(void *ctx, const void *frames, size_t len, uint32_t n) {
    const uint8_t *p = (const uint8_t *)frames;
    (void)ctx;
    (void)n;
    if (g.forked) return 0; /* a child's copy of the buffers: not ours to write */
    pthread_mutex_lock(&g.out);
    while (len) {
        ssize_t w = write(g.fd, p, len);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            pthread_mutex_unlock(&g.out);
            fq_fail("cannot write the trace stream: %s", strerror(errno));
            return -1;
        }
        p += w;
        len -= (size_t)w;
    }
    pthread_mutex_unlock(&g.out);
    return 0;
}

/* ---------------------------------------------------------------- registers */

/* A value of the guest's byte order as frames stores every value: little-endian. */
static void copy_le(uint8_t *out, const uint8_t *in, unsigned size) {
    unsigned i;
    if (!g.t.big_endian) {
        memcpy(out, in, size);
        return;
    }
    for (i = 0; i < size; i++) out[i] = in[size - 1 - i];
}

/* The registers of mask (bits of the table's indices) into now[] (values of at most 8
   bytes, as numbers: the host is little-endian; 0 when unreadable). One scratch array
   for all of them, emptied by its public length (g_byte_array_set_size per register
   cost a fifth of the time). */
static void read_regs(fq_cpu *c, uint64_t *now, uint64_t mask) {
    void *cpu = g.official ? NULL : *c->current_cpu;
    mask &= g.all;
    c->scratch->len = 0;
    for (; mask; mask &= mask - 1) {
        int i = __builtin_ctzll(mask), n;
        const fq_reg *r = &g.t.regs[i];
        unsigned off = c->scratch->len;
        now[i] = 0;
        if (g.official) n = c->handles[i] ? g.read_register(c->handles[i], c->scratch) : 0;
        else n = g.gdb_read(cpu, c->scratch, r->gdb);
        if (n > 0 && c->scratch->len >= off + r->size) copy_le((uint8_t *)&now[i], c->scratch->data + off, r->size);
    }
}

/* The official route names registers as gdb does; remember the handles of ours. */
static void find_handles(fq_cpu *c) {
    frames_garray *a = g.get_registers();
    unsigned k;
    int i;
    if (!a) return;
    for (k = 0; k < a->len; k++) {
        const qemu_plugin_reg_descriptor *d = (const qemu_plugin_reg_descriptor *)a->data + k;
        for (i = 0; i < g.t.nregs; i++)
            if (d->name && !strcmp(d->name, g.t.regs[i].gdbname)) c->handles[i] = d->handle;
    }
    /* a name we expect that this QEMU does not list would read as 0: say so (once) */
    for (i = 0; i < g.t.nregs; i++)
        if (!c->handles[i]) fq_fail("this QEMU lists no register named %s: its values are recorded as 0",
                                    g.t.regs[i].gdbname);
}

static fq_cpu *cpu_of(unsigned idx) {
    fq_cpu *c;
    if (idx >= FQ_MAX_CPUS) return NULL;
    if ((c = g.cpus[idx]) != NULL) return c;
    pthread_mutex_lock(&g.lock);
    if (!(c = g.cpus[idx]) && (c = (fq_cpu *)calloc(1, sizeof *c)) != NULL) {
        frames_rec_init(&c->rec, c->buf, sizeof c->buf, fq_flush, NULL, (uint64_t)syscall(SYS_gettid));
        if (g.sample_off) frames_rec_sampling(&c->rec, g.sample_on, g.sample_off);
        c->scratch = g.byte_array_new();
        g.cpus[idx] = c;
    }
    pthread_mutex_unlock(&g.lock);
    return c;
}

/* Did the open instruction go where it can go? If not, something else ran between it
   and pc (a signal handler, a sigreturn, a restarted instruction): registers its
   decoding does not name may have changed. */
static int went_as_decoded(const fq_cpu *c, uint64_t pc) {
    const fq_insn *in = c->insn;
    switch (in->succ) {
    case FQ_SUCC_NEXT: return pc == in->pc + in->len;
    case FQ_SUCC_TARGET: return pc == in->target;
    case FQ_SUCC_NEXT_OR_TARGET: return pc == in->pc + in->len || pc == in->target;
    default: return pc == ((c->regs[in->succ_reg] + in->target) & ~1ULL); /* RISC-V's jalr clears bit 0 */
    }
}

/* N bytes of guest memory at addr into out: 0, or -1 when this QEMU does not say. The
   7.2 route reads them where QEMU maps the guest (guest_base); a QEMU >= 9 exports only
   its qemu_plugin_* functions (a dynamic list), so the official route asks
   qemu_plugin_read_memory_vaddr (QEMU 10), through the thread's scratch array. */
static int guest_read(fq_cpu *c, uint64_t addr, void *out, size_t n) {
    if (!g.official) {
        memcpy(out, (const uint8_t *)(*g.guest_base + (uintptr_t)addr), n);
        return 0;
    }
    c->scratch->len = 0;
    if (!g.read_memory || !g.read_memory(addr, c->scratch, n) || c->scratch->len < n) return -1;
    memcpy(out, c->scratch->data, n);
    return 0;
}

/* At the thread's next instruction (pc, registers now), which the open one cannot go
   to: is it a signal handler's entry? QEMU delivers signals between translation blocks
   (one instruction each): the handler's signal number register holds a signal whose
   handler is pc, and the signal frame is at its stack pointer.
   The interrupted state is in that ucontext: its pc is the open instruction's own for
   a fault (it did not complete: written without a post list, as the other engines do),
   else the instruction completed and its post list is the ucontext's registers that
   differ. Then the exception frame (signal, interrupted pc, handler), and the handler's
   first instruction starts with every register (the kernel set them). */
static int signal_delivered(fq_cpu *c, uint64_t pc, const uint64_t *now) {
    uint64_t sig = now[g.t.sig_reg], uc = now[g.t.sp_reg] + 128, from;
    int i;
    if (!g.t.nr_sigaction || sig == 0 || sig > 64 || g.handlers[sig] != pc) return 0;
    from = 0;
    if (guest_read(c, uc + g.t.uc_pc, &from, 8) < 0) return 0; /* not known: all registers are read */
    if (from == c->insn->pc) {
        frames_rec_finish(&c->rec);
    } else {
        for (i = 0; i < g.t.nregs; i++) {
            uint64_t v = 0;
            if (guest_read(c, uc + g.t.uc_regs[i], &v, g.t.regs[i].size) < 0) v = c->regs[i];
            if (v != c->regs[i])
                frames_rec_reg(&c->rec, g.t.regs[i].kind | FRAMES_VAL_WRITE | FRAMES_VAL_AFTER, g.t.regs[i].name, &v,
                               g.t.regs[i].size);
        }
        frames_rec_end(&c->rec);
    }
    frames_rec_exception(&c->rec, sig, from, pc);
    memcpy(c->regs, now, sizeof c->regs);
    c->open = 0;
    c->started = 0; /* the handler's first instruction: every register */
    c->then = g.t.sig_then;
    return 1;
}

/* Close the open instruction, at the thread's next one (at pc): the registers it can
   have written are read, and those that changed are its post list (values after);
   c->regs is then the state before pc. */
static void close_insn(fq_cpu *c, uint64_t pc) {
    uint64_t now[FQ_MAX_REGS], mask = c->insn->writes | c->then;
    int all = 0;
    c->then = c->insn->then;
    if ((mask != FQ_ALL || g.t.nr_sigaction) && !went_as_decoded(c, pc)) {
        read_regs(c, now, FQ_ALL);
        all = 1;
        if (signal_delivered(c, pc, now)) return;
        mask = FQ_ALL;
    }
    mask &= g.all;
    if (!all) read_regs(c, now, mask);
    for (; mask; mask &= mask - 1) {
        int i = __builtin_ctzll(mask);
        if (now[i] != c->regs[i]) {
            c->regs[i] = now[i];
            frames_rec_reg(&c->rec, g.t.regs[i].kind | FRAMES_VAL_WRITE | FRAMES_VAL_AFTER, g.t.regs[i].name,
                           &now[i], g.t.regs[i].size);
        }
    }
    frames_rec_end(&c->rec);
    c->open = 0;
}

/* ---------------------------------------------------------------- callbacks */

/* A function of QEMU's process by name (through memcpy: ISO C has no cast from void *). */
static int qsym(const char *name, void *fn, size_t size) {
    void *p = dlsym(RTLD_DEFAULT, name);
    if (p) memcpy(fn, &p, size);
    return p != NULL;
}

/* The program's code as the first module (more come from mmap), at the first
   instruction: QEMU loads the program after installing the plugin. */
static void first_module(fq_cpu *c) {
    static int done;
    const char *path;
    pthread_mutex_lock(&g.lock);
    if (!done++) {
        char abs[4096];
        qemu_plugin_path_to_binary_fn path_of;
        qemu_plugin_code_bound_fn start, end;
        /* QEMU 10 exports none of them: the program's code is then not a module of the
           trace (the libraries it maps later still are) */
        if (qsym("qemu_plugin_path_to_binary", &path_of, sizeof path_of) &&
            qsym("qemu_plugin_start_code", &start, sizeof start) && qsym("qemu_plugin_end_code", &end, sizeof end)) {
            path = path_of();
            /* absolute, as the other engines name modules (the program's directory is ours) */
            if (path && realpath(path, abs)) path = abs;
            frames_rec_modload(&c->rec, path ? path : "", start(), end() - 1);
        }
    }
    pthread_mutex_unlock(&g.lock);
}

/* The vCPU this host thread (= guest thread) last ran an instruction on. */
static __thread fq_cpu *thread_cpu;

static void on_insn(unsigned vcpu, void *udata) {
    const fq_insn *in = (const fq_insn *)udata;
    fq_cpu *c;
    int i;
    if (g.forked || !(c = cpu_of(vcpu))) return;
    if (thread_cpu != c) {
        /* this thread's first instruction on this vCPU: its id and CPU are known from
           here. QEMU user mode gives a new thread the index of one that ended: what the
           old one left open (its exit's svc) is written without a post list, and the new
           one starts with every register. */
        if (c->started) frames_rec_finish(&c->rec);
        c->open = 0;
        c->started = 0;
        thread_cpu = c;
        frames_rec_thread(&c->rec, (uint64_t)syscall(SYS_gettid));
        if (g.official) find_handles(c);
        else c->current_cpu = (void **)dlsym(RTLD_DEFAULT, "current_cpu"); /* this thread's */
        first_module(c);
    }
    if (c->open) close_insn(c, in->pc);
    else {
        read_regs(c, c->regs, FQ_ALL); /* the thread's first instruction */
        c->then = 0;
    }
    if (frames_rec_begin(&c->rec, in->pc, in->bytes, in->len) > 0 && !c->started)
        for (i = 0; i < g.t.nregs; i++)
            frames_rec_reg(&c->rec, g.t.regs[i].kind | FRAMES_VAL_BEFORE, g.t.regs[i].name, &c->regs[i],
                           g.t.regs[i].size);
    c->started = 1;
    c->open = 1;
    c->insn = in;
}

static void on_mem(unsigned vcpu, qemu_plugin_meminfo_t info, uint64_t vaddr, void *udata) {
    fq_cpu *c = cpu_of(vcpu);
    unsigned size = 1u << qemu_plugin_mem_size_shift(info);
    int store = qemu_plugin_mem_is_store(info);
    uint8_t v[FRAMES_REC_MAX_VALUE_SIZE];
    (void)udata;
    if (!c || !c->open || size > FRAMES_REC_MAX_VALUE_SIZE) return;
    /* the access happened: the bytes at the address are the value loaded or stored (an
       access of a big-endian guest is one value in its order: stored little-endian); the
       official route has QEMU's value of the access, a number in host (little-endian)
       order */
    if (g.official) {
        qemu_plugin_mem_value mv = g.mem_get_value(info);
        if (mv.type == QEMU_PLUGIN_MEM_VALUE_U128) {
            memcpy(v, &mv.data.u128.low, 8);
            memcpy(v + 8, &mv.data.u128.high, 8);
        } else memcpy(v, &mv.data.u64, 8); /* the union's low bytes are the smaller members */
    } else copy_le(v, (const uint8_t *)(*g.guest_base + (uintptr_t)vaddr), size);
    frames_rec_mem(&c->rec, FRAMES_VAL_MEM | (store ? FRAMES_VAL_WRITE | FRAMES_VAL_AFTER : FRAMES_VAL_READ | FRAMES_VAL_BEFORE),
                   vaddr, v, size);
}

static void on_tb(qemu_plugin_id_t id, struct qemu_plugin_tb *tb) {
    size_t i, n = qemu_plugin_tb_n_insns(tb);
    (void)id;
    for (i = 0; i < n; i++) {
        struct qemu_plugin_insn *qi = qemu_plugin_tb_get_insn(tb, i);
        fq_insn *in = (fq_insn *)calloc(1, sizeof *in);
        if (!in) continue;
        in->pc = qemu_plugin_insn_vaddr(qi);
        in->len = (uint32_t)qemu_plugin_insn_size(qi);
        if (in->len > sizeof in->bytes) in->len = sizeof in->bytes;
        if (g.official) g.insn_data_copy(qi, in->bytes, in->len);
        else memcpy(in->bytes, qemu_plugin_insn_data(qi), in->len);
        in->writes = g.t.writes(in);
        pthread_mutex_lock(&g.lock);
        in->next = g.insns;
        g.insns = in;
        pthread_mutex_unlock(&g.lock);
        qemu_plugin_register_vcpu_insn_exec_cb(qi, on_insn, QEMU_PLUGIN_CB_R_REGS, in);
        if (g.mem) qemu_plugin_register_vcpu_mem_cb(qi, on_mem, QEMU_PLUGIN_CB_NO_REGS, QEMU_PLUGIN_MEM_RW, NULL);
    }
}

static void on_syscall(qemu_plugin_id_t id, unsigned vcpu, int64_t num, uint64_t a1, uint64_t a2, uint64_t a3,
                       uint64_t a4, uint64_t a5, uint64_t a6, uint64_t a7, uint64_t a8) {
    fq_cpu *c = cpu_of(vcpu);
    int64_t args[6];
    (void)id;
    (void)a7;
    (void)a8;
    if (!c) return;
    /* the handler of a signal (64-bit struct sigaction: the handler first), for
       signal_delivered */
    if (num == g.t.nr_sigaction && num && a1 >= 1 && a1 <= 64 && a2) {
        uint64_t handler = 0;
        if (guest_read(c, a2, &handler, 8) == 0) g.handlers[a1] = handler;
    }
    args[0] = (int64_t)a1, args[1] = (int64_t)a2, args[2] = (int64_t)a3;
    args[3] = (int64_t)a4, args[4] = (int64_t)a5, args[5] = (int64_t)a6;
    frames_rec_syscall(&c->rec, c->insn ? c->insn->pc : 0, (uint64_t)num, args, 6);
}

/* An executable mapping of a file: a modload frame named by the file. */
static void module_of_fd(fq_cpu *c, int64_t fd, uint64_t lo, uint64_t len) {
    char link[64], name[4096];
    ssize_t n = -1;
    if (fd >= 0) {
        snprintf(link, sizeof link, "/proc/self/fd/%lld", (long long)fd);
        n = readlink(link, name, sizeof name - 1);
    }
    name[n > 0 ? n : 0] = 0;
    if (len) frames_rec_modload(&c->rec, name, lo, lo + len - 1);
}

/* syscall_ret gives no arguments: the ones of the last syscall of each vCPU. */
static __thread int64_t last_args[6];

static void on_syscall_args(qemu_plugin_id_t id, unsigned vcpu, int64_t num, uint64_t a1, uint64_t a2, uint64_t a3,
                            uint64_t a4, uint64_t a5, uint64_t a6, uint64_t a7, uint64_t a8) {
    last_args[0] = (int64_t)a1, last_args[1] = (int64_t)a2, last_args[2] = (int64_t)a3;
    last_args[3] = (int64_t)a4, last_args[4] = (int64_t)a5, last_args[5] = (int64_t)a6;
    on_syscall(id, vcpu, num, a1, a2, a3, a4, a5, a6, a7, a8);
}

static void on_syscall_ret(qemu_plugin_id_t id, unsigned vcpu, int64_t num, int64_t ret) {
    fq_cpu *c = cpu_of(vcpu);
    (void)id;
    if (!c || ret < 0) return; /* a failed call (-errno) */
    if (num == g.t.nr_mmap && (last_args[2] & PROT_EXEC))
        module_of_fd(c, last_args[4], (uint64_t)ret, (uint64_t)last_args[1]);
    else if (num == g.t.nr_mprotect && (last_args[2] & PROT_EXEC) && ret == 0)
        module_of_fd(c, -1, (uint64_t)last_args[0], (uint64_t)last_args[1]);
}

static void finish_cpu(fq_cpu *c) {
    if (!c) return;
    frames_rec_finish(&c->rec); /* an open instruction (exit's svc) has no post list */
    c->open = 0;
}

static void on_vcpu_exit(qemu_plugin_id_t id, unsigned vcpu) {
    (void)id;
    if (vcpu < FQ_MAX_CPUS) finish_cpu(g.cpus[vcpu]);
}

static void on_exit_(qemu_plugin_id_t id, void *udata) {
    unsigned i;
    (void)id;
    (void)udata;
    for (i = 0; i < FQ_MAX_CPUS; i++) finish_cpu(g.cpus[i]);
    if (g.fd >= 0) close(g.fd);
    g.fd = -1;
}

/* ---------------------------------------------------------------- install */

/* The value route: 0, or -1 with the message printed. */
static int choose_route(void) {
    qsym("g_byte_array_new", &g.byte_array_new, sizeof g.byte_array_new);
    qsym("qemu_plugin_get_registers", &g.get_registers, sizeof g.get_registers);
    qsym("qemu_plugin_read_register", &g.read_register, sizeof g.read_register);
    qsym(g.t.gdb_reader, &g.gdb_read, sizeof g.gdb_read);
    g.guest_base = (uintptr_t *)dlsym(RTLD_DEFAULT, "guest_base");
    if (!g.byte_array_new) {
        fq_fail("%s", "this QEMU does not export glib's byte arrays");
        return -1;
    }
    if (g.get_registers && g.read_register && qsym("qemu_plugin_mem_get_value", &g.mem_get_value, sizeof g.mem_get_value)) {
        g.official = 1;
        qsym("qemu_plugin_insn_data", &g.insn_data_copy, sizeof g.insn_data_copy);
        qsym("qemu_plugin_read_memory_vaddr", &g.read_memory, sizeof g.read_memory);
        return 0;
    }
    if (g.gdb_read && g.guest_base && dlsym(RTLD_DEFAULT, "current_cpu")) return 0;
    fq_fail("this QEMU offers no register values to plugins (neither qemu_plugin_read_register, QEMU >= 9.2, "
            "nor the exported %s, current_cpu and guest_base of Debian's QEMU 7.2)", g.t.gdb_reader);
    return -1;
}

static int parse_args(int argc, char **argv) {
    int i;
    for (i = 0; i < argc; i++) {
        const char *a = argv[i];
        unsigned long long on, off;
        if (!strncmp(a, "fd=", 3)) g.fd = atoi(a + 3);
        else if (!strcmp(a, "mem=off")) g.mem = 0;
        else if (!strncmp(a, "sample=", 7) && sscanf(a + 7, "%llu:%llu", &on, &off) == 2 && on > 0) {
            g.sample_on = on;
            g.sample_off = off;
        } else {
            fq_fail("unknown argument '%s'", a);
            return -1;
        }
    }
    if (g.fd < 0) {
        fq_fail("%s", "no fd=N argument (the descriptor of the trace stream)");
        return -1;
    }
    return 0;
}

static void in_child(void) { g.forked = 1; }

EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc, char **argv) {
    if (info->system_emulation) {
        fq_fail("%s", "system emulation is not supported (use qemu-ARCH user mode)");
        return -1;
    }
    if (!strcmp(info->target_name, "aarch64")) g.t = aarch64_target();
    else if (!strcmp(info->target_name, "arm")) g.t = arm_target();
    else if (!strcmp(info->target_name, "mips")) g.t = mips_target(1);
    else if (!strcmp(info->target_name, "mipsel")) g.t = mips_target(0);
    else if (!strcmp(info->target_name, "x86_64")) g.t = x86_64_target();
    else if (!strcmp(info->target_name, "riscv64")) g.t = riscv64_target();
    else {
        fq_fail("target %s is not supported yet (aarch64, arm, mips, mipsel, riscv64 and x86_64 are)",
                info->target_name);
        return -1;
    }
    if (parse_args(argc, argv) < 0 || choose_route() < 0) return -1;
    g.all = g.t.nregs == 64 ? FQ_ALL : (1ULL << g.t.nregs) - 1;
    pthread_atfork(NULL, NULL, in_child); /* getpid() at every instruction was a tenth of the time */
    qemu_plugin_register_vcpu_tb_trans_cb(id, on_tb);
    qemu_plugin_register_vcpu_syscall_cb(id, on_syscall_args);
    qemu_plugin_register_vcpu_syscall_ret_cb(id, on_syscall_ret);
    qemu_plugin_register_vcpu_exit_cb(id, on_vcpu_exit);
    qemu_plugin_register_atexit_cb(id, on_exit_, NULL);
    return 0;
}
