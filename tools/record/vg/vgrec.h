/* vgrec.h - the raw record stream between the frames Valgrind tool (tools/record/vg/frames_vg.c)
   and its converter in the frames process (tools/record/vg_convert.c). Plain integer layout, no
   library: both sides include it (the tool is built without libc).

   The tool writes CHUNKS to a pipe: u32 pid, u32 length, then `length` bytes of the
   process's record stream (records may span chunks of the same pid). With several
   processes (--follow-forks) chunks are at most VGR_ATOMIC bytes, so that writes of
   different processes never interleave inside a chunk.

   A record starts with a u32 code. Codes below VGR_GROUP_BASE are control records;
   a larger code is a GROUP id, defined once by a VGR_DEF record (at translation time,
   before its first use) and then used by instrumented code with fixed-size values:
     BEGIN  u32 gid (the instruction starts)
     POST   u32 gid, register values (its writes, after; the last POST of an
            instruction wins: one is written before every side exit)
     MEMR   u32 gid, u64 address, value[size]
     MEMW   u32 gid, u64 address, old[size], new[size]
   All integers are little-endian and unaligned. */
#ifndef FRAMES_VGREC_H
#define FRAMES_VGREC_H

#define VGR_ATOMIC 4096 /* PIPE_BUF on Linux */
#define VGR_CHUNK_HEADER 8
#define VGR_GROUP_BASE 16
#define VGR_MAX_REGS 48 /* registers per group */
#define VGR_MAX_BIGMEM (4u << 20) /* bytes of one BIGMEM value (less than the tool's buffer) */

enum {
    VGR_DEF = 1,     /* u32 gid, u64 pc, u8 kind, u8 insn_len, u8 nregs, u8 memsize,
                        bytes[insn_len], nregs x {u8 reg, u8 byte offset, u8 size} */
    VGR_THREAD = 2,  /* u32 tid: the records that follow belong to this thread */
    VGR_SYSCALL = 3, /* u32 number, u64 pc, u64 args[6] (before the syscall runs) */
    VGR_SYSRET = 4,  /* u32 number, u64 result (rax after the syscall) */
    VGR_MODLOAD = 5, /* u16 name length, u16 0, u64 low, u64 high (inclusive), name */
    VGR_SIGNAL = 6,  /* u32 signal, u64 pc (delivered to the current thread) */
    VGR_BIGMEM = 7,  /* u32 how (VGR_MEM_*), u64 address, u32 size, u32 0, bytes[size] */
    VGR_EXIT = 8,    /* u32 tid: the thread ended (its last instruction does not complete) */
    VGR_HELLO = 9,   /* u32 version, u32 parent pid (0 = first process), u32 0 */
    VGR_REGS = 10    /* u32 0, the current thread's register file: u64 gpr[16] (VEX order),
                        rflags, fs_base, gs_base, ftop, fpreg[8], ymm[16][32] */
};
#define VGR_REGS_SIZE (8 + 8 * 28 + 16 * 32)

enum { VGR_BEGIN = 1, VGR_POST = 2, VGR_MEMR = 3, VGR_MEMW = 4, VGR_MEMRW = 5 /* as MEMW: a CAS */ };
enum { VGR_MEM_READ = 1, VGR_MEM_OLD = 2, VGR_MEM_NEW = 3 };

/* Register numbers of the DEF records (value bytes: `size` at `byte offset` of it). */
enum {
    VGR_GPR0 = 0,     /* 0..15: RAX RCX RDX RBX RSP RBP RSI RDI R8..R15 */
    VGR_RFLAGS = 16,  /* computed from VEX's flag thunk, DF, ID and AC */
    VGR_FS_BASE = 17,
    VGR_GS_BASE = 18,
    VGR_FTOP = 19,    /* x87 stack top (4 bytes) */
    VGR_XMM0 = 32,    /* 32..47: XMMn (16 bytes) or YMMn (32 bytes) */
    VGR_MM0 = 48,     /* 48..55: physical x87/MMX register n (VEX keeps 64-bit values) */
    VGR_NREGS = 56
};

#define VGR_VERSION 1

#endif
