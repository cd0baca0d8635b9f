/* frames_replay.h - time travel over a frames trace: the registers and memory before any
   instruction, who wrote a value last, the next execution of a pc. Single-header C99
   library (also compiles as C++) on top of frames.h. MIT licence, see end of file.

   ---------------------------------------------------------------------------------------
   WHAT IT IS

   The one replay state model of the library (registers with sub-register aliasing per
   architecture, "unknown" kept apart from any value) and a state index built in one pass
   over a trace and stored beside it (TRACE.fridx), so that the state before instruction i
   and the accesses to an address or a register are answered without scanning from the
   start. docs/timetravel.md has the model, the index format and its cost.

   ---------------------------------------------------------------------------------------
   USAGE

   In exactly one C or C++ file (frames.h's implementation may live in another file):

       #define FRAMES_REPLAY_IMPLEMENTATION
       #include "frames_replay.h"

   The registers before instruction 1000:

       frames_replay *r; frames_error err; frames_replay_insn in; uint8_t v[8]; size_t n;
       if (frames_replay_open(&r, "t.frames", NULL, &err) < 0) die(err.message);
       frames_replay_goto(r, 1000, &err);
       frames_replay_insn_get(r, &in);
       if (frames_replay_reg_get(r, in.thread, "rax", v, sizeof v, &n) == 1)
           printf("rax: %u bytes known\n", (unsigned)n);
       frames_replay_close(r);

   ---------------------------------------------------------------------------------------
   API OVERVIEW (details at each declaration below)

     frames_replay_options_default, frames_replay_open / _close, frames_replay_info_get
     frames_replay_goto, _position, _insn_get, _threads
     frames_replay_reg_at, _reg_get, _mem_get          the state at the position
     frames_replay_find                                 searches answered from the index
     frames_replay_accesses                             one instruction's matching accesses
     frames_replay_regs_open / _close / _lookup / _apply_frame / _get   the register model
       / _apply_list / _read                            alone, for streaming consumers
     frames_replay_stack_open / _close / _apply_frame / _get / _stats_get / _classify
                                                        the call stack per thread

   ---------------------------------------------------------------------------------------
   THE MODEL

   Instruction i is the i-th std_frame of the trace (from 0, every thread, trace order);
   "position i" is the state before it. Values come from the operands: operand_pre_list
   values are the state before the instruction (reads, and the old content of memory
   about to be written), operand_post_list values the state after it (writes). So the
   state at position i is every operand of the instructions before i, the later one
   winning, overlaid with the pre-list of instruction i itself (what it reads is true
   before it runs). Anything no operand ever showed is unknown, never zero.

   Registers. Each architecture has a table of full registers (the order of GDB's target
   description) and of aliases: a name, the full register, a byte offset and a size
   (eax/ax/al/ah are bytes 0-3/0-1/0/1 of rax, w0 is bytes 0-3 of x0). A write through an
   alias updates only its bytes, except where the architecture zero-extends: x86-64
   32-bit registers (eax, r8d), AArch64 w, s and d registers, and the xmm registers
   written by a VEX- or EVEX-encoded instruction (the upper ymm half becomes zero).
   Names are matched without regard to case ("RAX", "rax") and with or without BAP's "R_"
   prefix (R_EAX); names the table does not know (other tracers' pseudo registers, flags
   as BAP's R_ZF) are ignored.

   Memory. Bytes, not words: a byte's value at position i is the last operand covering it
   before i (or the pre-list of i), else the first operand at or after i that shows its
   content before it changes (a later read or the old value of a later write); a byte
   written before anything showed its content stays unknown. The instruction bytes a
   std_frame carries are memory content too (code reads back). Memory changed without an
   instruction operand (a system call, another process) is not seen by the trace.

   ---------------------------------------------------------------------------------------
   OPTIONS (#define before including the implementation)

   FRAMES_REPLAY_STATIC   this header's functions static (and frames.h's too when it is
                          first included through this header)
   FRAMES_REPLAY_LIBZSTD     open compressed .frames.zst traces too (frames_zstd.h's
                          implementation must be linked, and libzstd; no effect with
                          FRAMES_NO_STDIO or FRAMES_NO_POSIX, which open no files)
   FRAMES_REPLAY_NO_THREADS  build the index on the caller's thread only (else, POSIX
                          only, build_threads 2 indexes a second segment of the trace on
                          a thread of its own: link -lpthread;
                          FRAMES_MALLOC & co are then called from both)
   frames.h's options hold here too (FRAMES_STATIC, FRAMES_DEF, FRAMES_MALLOC & co).
   Without stdio or POSIX (FRAMES_NO_STDIO, FRAMES_NO_POSIX) the register model remains
   and frames_replay_open fails with FRAMES_E_UNSUPPORTED.

   ---------------------------------------------------------------------------------------
   SECTIONS (in file order; each starts with a banner of '=' or '-' lines,
   the title on the line below it: grep -n '^   TITLE' finds it)

   Options and the replay object
   State at the position
   Searches
   The register model alone
   The call stack
   IMPLEMENTATION
     Architecture tables
     Register model
     Index: building
     Index: the build pass's view of a std_frame
     Index: file format, writing and reading
     Replay: open, goto, state
     Replay: searches
     Call stack
   The memory alone
*/
/* FRAMES_ALL_IMPLEMENTATION (frames.h) turns this header's implementation on too. */
#if defined(FRAMES_ALL_IMPLEMENTATION) && !defined(FRAMES_REPLAY_IMPLEMENTATION)
#define FRAMES_REPLAY_IMPLEMENTATION
#endif

/* Strict ISO modes hide the POSIX declarations the implementation uses (stat's
   nanosecond mtime, getpid): ask for them as frames.h does, when no feature-test macro
   was chosen and this header comes before any system header. */
#if defined(FRAMES_REPLAY_IMPLEMENTATION) && defined(__STRICT_ANSI__) && !defined(_WIN32) &&  \
    !defined(FRAMES_NO_POSIX) && !defined(_DEFAULT_SOURCE) && !defined(_GNU_SOURCE) &&     \
    !defined(_POSIX_C_SOURCE) && !defined(_XOPEN_SOURCE) && !defined(_BSD_SOURCE)
#define _DEFAULT_SOURCE 1
#endif

#ifndef FRAMES_REPLAY_H_INCLUDED
#define FRAMES_REPLAY_H_INCLUDED

#if defined(FRAMES_REPLAY_STATIC) && !defined(FRAMES_STATIC) && !defined(FRAMES_H_INCLUDED)
#define FRAMES_STATIC   /* frames.h comes with it: one private copy of both */
#endif
#include "frames.h"

#ifndef FRAMES_REPLAY_DEF
#if defined(FRAMES_REPLAY_STATIC) && (defined(__GNUC__) || defined(__clang__))
#define FRAMES_REPLAY_DEF static __attribute__((unused))
#elif defined(FRAMES_REPLAY_STATIC)
#define FRAMES_REPLAY_DEF static
#else
#define FRAMES_REPLAY_DEF FRAMES_DEF
#endif
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ======================================================================================
   Options and the replay object
   ====================================================================================== */

typedef struct frames_replay frames_replay;

typedef struct frames_replay_options {
    frames_limits limits;          /* reader limits */
    const char *index_path;        /* NULL: TRACE + ".fridx" beside the trace */
    int build_index;               /* 1 (default): build (or rebuild when stale) if needed;
                                      0: fail with FRAMES_E_REPLAY_INDEX when missing/stale */
    frames_progress_fn progress;   /* optional, while building the index */
    void *progress_ctx;
    void *alloc_ctx;
    /* added */
    int write_index;               /* 1 (default): store a built index at index_path
                                      (failure to store is not an error: it stays in memory) */
    uint64_t max_index_bytes;      /* largest index accepted or built (default 4 GiB) */
    uint32_t max_threads;          /* distinct threads accepted (default 65536) */
    uint32_t max_walk_blocks;      /* blocks of 256 instructions one memory query may decode
                                      looking for a byte's value (default 4096) */
    uint32_t build_threads;        /* threads of the index build: 1 one; 2 the trace is
                                      cut in two segments indexed at once, the second on
                                      a thread of its own, then joined (a plain trace
                                      file only; the same index byte for byte:
                                      docs/timetravel.md); 0 (default) 2 for a plain
                                      trace of 32 MiB or more when more than one CPU is
                                      online, else 1. With 2 segments the allocator
                                      (FRAMES_MALLOC & co) is called from both threads. */
    uint64_t build_split;          /* build_threads 2: the byte offset after which the
                                      second segment starts (at the next multiple of 256
                                      instructions); 0 (default): 58% of the trace */
} frames_replay_options;
FRAMES_REPLAY_DEF void frames_replay_options_default(frames_replay_options *o);

/* Open a trace (.frames; .frames.zst with FRAMES_REPLAY_LIBZSTD) and its index: read it
   when it matches the trace (size, mtime, hashes of its head and tail), else build it
   (o->build_index) or fail with FRAMES_E_REPLAY_INDEX. The position is 0. */
FRAMES_REPLAY_DEF int frames_replay_open(frames_replay **out, const char *trace_path,
                                         const frames_replay_options *o, frames_error *err);
FRAMES_REPLAY_DEF void frames_replay_close(frames_replay *r);

typedef struct frames_replay_info {
    uint64_t instructions;   /* std_frames in the trace (instruction i = i-th std_frame, from 0) */
    uint32_t arch;           /* frames header arch (frames_arch) */
    uint64_t machine;
    size_t   threads;        /* distinct thread ids seen */
    size_t   registers;      /* entries in the architecture's register table */
    /* added */
    uint64_t frames;         /* frames of the trace (complete ones) */
    uint64_t values;         /* operands that carry a value (0: nothing can be known) */
    int      truncated;      /* the trace is cut: the index covers its complete frames */
    int      index_built;    /* built by this open (0: read from the file) */
    int      index_stored;   /* the index is in the file index_path (built or read) */
    uint64_t index_bytes;    /* size of the stored index */
    const char *arch_name;   /* "x86-64", "x86", "arm", "aarch64" or "unknown" */
    uint32_t index_segments; /* segments a build by this open joined: 1, 2 (build_threads 2),
                                0 when the index was read */
} frames_replay_info;
FRAMES_REPLAY_DEF int frames_replay_info_get(const frames_replay *r, frames_replay_info *info);
/* Where the index is (or would be) stored. */
FRAMES_REPLAY_DEF const char *frames_replay_index_path(const frames_replay *r);

/* ======================================================================================
   State at the position
   ====================================================================================== */

/* Move to "before instruction index" (index == instructions: after the last one). */
FRAMES_REPLAY_DEF int frames_replay_goto(frames_replay *r, uint64_t index, frames_error *err);
FRAMES_REPLAY_DEF uint64_t frames_replay_position(const frames_replay *r);

/* The instruction at the current position (not valid at the end). */
typedef struct frames_replay_insn {
    uint64_t index, pc, thread;
    uint8_t  bytes[16];
    uint32_t len;            /* 0 when the trace has no bytes for it */
} frames_replay_insn;
/* FRAMES_OK, or FRAMES_E_RANGE at the end. */
FRAMES_REPLAY_DEF int frames_replay_insn_get(const frames_replay *r, frames_replay_insn *insn);

/* Thread ids in order of first appearance; returns how many (may exceed cap). */
FRAMES_REPLAY_DEF size_t frames_replay_threads(const frames_replay *r, uint64_t *tids, size_t cap);

/* Register table of the trace's architecture: full registers in the order of the GDB target
   description (x86-64: rax rbx rcx rdx rsi rdi rbp rsp r8..r15 rip eflags cs ss ds es fs gs
   fs_base gs_base, then what the model knows of x87/SSE/AVX). */
typedef struct frames_replay_reg {
    const char *name;        /* lower case, as gdb names it */
    uint32_t bits;           /* width */
} frames_replay_reg;
FRAMES_REPLAY_DEF const frames_replay_reg *frames_replay_reg_at(const frames_replay *r, size_t i);

/* Value of register `name` (any alias: "eax", "ax", "al", "ah", "w0", ...) of `thread`
   at the current position, little-endian into value[0..size). Returns 1 known, 0 unknown
   (or partly unknown), negative error (unknown name: FRAMES_E_REPLAY_REG; cap smaller
   than the register: FRAMES_E_SPACE). Known bytes of a partly known register are in
   value; the others are 0. */
FRAMES_REPLAY_DEF int frames_replay_reg_get(const frames_replay *r, uint64_t thread,
                                            const char *name, uint8_t *value, size_t cap,
                                            size_t *size);

/* Memory at the current position: bytes[i] valid where known[i] != 0.
   Returns the number of known bytes. */
FRAMES_REPLAY_DEF size_t frames_replay_mem_get(const frames_replay *r, uint64_t addr,
                                               uint8_t *bytes, uint8_t *known, size_t n);

/* ======================================================================================
   Searches
   ====================================================================================== */

/* Searches answered from the index (not by stepping every instruction). */
typedef enum frames_replay_what {
    FRAMES_REPLAY_PC,          /* an execution of pc */
    FRAMES_REPLAY_MEM_WRITE,   /* an access to [addr, addr+len) */
    FRAMES_REPLAY_MEM_READ,
    FRAMES_REPLAY_MEM_ACCESS,  /* read or write */
    FRAMES_REPLAY_REG_WRITE,   /* an access to register reg (aliases overlap: eax hits rax) */
    FRAMES_REPLAY_REG_READ,
    FRAMES_REPLAY_REG_ACCESS   /* added: read or write of reg */
} frames_replay_what;
typedef struct frames_replay_query {
    frames_replay_what what;
    uint64_t pc, addr, len;
    const char *reg;
    int has_thread; uint64_t thread;   /* restrict to one thread */
} frames_replay_query;
/* The first match at an instruction index > from (forward) or < from (backward, dir < 0).
   FRAMES_OK and *index set, or FRAMES_REPLAY_NONE (a positive status) when there is none.
   (Add 1 to from, or start at from = index - 1, to include instruction `from` itself.)
   The position does not change. */
#define FRAMES_REPLAY_NONE 1
FRAMES_REPLAY_DEF int frames_replay_find(frames_replay *r, const frames_replay_query *q,
                                         uint64_t from, int dir, uint64_t *index,
                                         frames_error *err);

/* One access of an instruction to what a query names (memory or register queries). */
typedef struct frames_replay_access {
    uint64_t index, pc, thread;
    int write;               /* 0 read (pre-list), 1 write (post-list) */
    uint64_t addr;           /* memory: operand address */
    char reg[16];            /* register: the operand's name in lower case, else "" */
    uint8_t value[64];       /* the operand's value, little-endian (first 64 bytes) */
    uint32_t len;            /* bytes of value present (0: the operand has no value) */
    uint32_t size;           /* operand size in bytes */
} frames_replay_access;
/* The accesses of instruction `index` that match q (MEM_* or REG_*; READ/WRITE filter),
   in operand order, into out[0..cap). Returns how many there are (may exceed cap), or a
   negative error. The position does not change. */
FRAMES_REPLAY_DEF long frames_replay_accesses(frames_replay *r, const frames_replay_query *q,
                                              uint64_t index, frames_replay_access *out,
                                              size_t cap, frames_error *err);

/* ======================================================================================
   The register model alone
   The state model the replay object uses, for consumers that walk a trace themselves
   (frames tenet, the value profiler, a live tracer): per thread a register file with
   aliasing and known bytes.
   ====================================================================================== */

typedef struct frames_replay_regs frames_replay_regs;

/* Where an alias lives in the register file. */
typedef struct frames_replay_alias {
    uint32_t reg;            /* full register (index in the table) */
    uint32_t offset, size;   /* bytes of it */
    uint32_t zext;           /* a write clears the rest of the full register */
} frames_replay_alias;

/* The model of architecture (arch, machine); an architecture without a table gets an
   empty one (every register name is unknown). max_threads 0: 65536. */
FRAMES_REPLAY_DEF int frames_replay_regs_open(frames_replay_regs **m, uint32_t arch,
                                              uint64_t machine, uint32_t max_threads,
                                              void *alloc_ctx, frames_error *err);
FRAMES_REPLAY_DEF void frames_replay_regs_close(frames_replay_regs *m);
/* 1 and *a filled when name (len bytes, any case) names a register or alias, else 0. */
FRAMES_REPLAY_DEF int frames_replay_regs_lookup(const frames_replay_regs *m, const char *name,
                                                size_t len, frames_replay_alias *a);
FRAMES_REPLAY_DEF size_t frames_replay_regs_count(const frames_replay_regs *m);
FRAMES_REPLAY_DEF const frames_replay_reg *frames_replay_regs_at(const frames_replay_regs *m,
                                                                 size_t i);
/* Apply one frame: a std_frame's register operands (pre values, then post values with
   the architecture's zero extension). Other frames are ignored. Returns FRAMES_OK or
   FRAMES_E_LIMIT (too many threads). */
FRAMES_REPLAY_DEF int frames_replay_regs_apply_frame(frames_replay_regs *m, const frames_frame *f);
/* Register `name` of `thread` as frames_replay_reg_get (1 known, 0 unknown, negative). */
FRAMES_REPLAY_DEF int frames_replay_regs_get(const frames_replay_regs *m, uint64_t thread,
                                             const char *name, uint8_t *value, size_t cap,
                                             size_t *size);
/* For consumers that need the state between a std_frame's two lists (frames tenet's
   lines): apply one list to the frame's thread, the pre list (post 0: values as read) or
   the post list (post 1: with zero extension; the pc stays as it is). *named (NULL: not
   wanted) gets the full registers the list names, with a value or without, as bits
   min(reg, 63). apply_frame is the pre list, the post list, then the pc unknown.
   Returns FRAMES_OK or FRAMES_E_LIMIT (too many threads). */
FRAMES_REPLAY_DEF int frames_replay_regs_apply_list(frames_replay_regs *m, const frames_std_frame *s,
                                                    int post, uint64_t *named);
/* Alias a (from _lookup) of `thread` into value[0..a->size): 1 known, 0 not (fully) known
   (unknown bytes are 0). No name lookup: for consumers reading the same registers often. */
FRAMES_REPLAY_DEF int frames_replay_regs_read(const frames_replay_regs *m, uint64_t thread,
                                              const frames_replay_alias *a, uint8_t *value);

/* ======================================================================================
   The call stack
   Per thread, the calls that have not returned yet, from the call and return
   instructions of the trace (recognised by their bytes: x86 and x86-64 call/ret, AArch64
   bl/blr/ret, ARM and Thumb bl/blx/bx lr/pop {..,pc}/ldr pc,[sp],#4). For walkers that
   need calling contexts (the value profiler) and anything else that asks "in which call
   path is this instruction".

   Rules. A call takes effect at the thread's next instruction: its pc is the callee's
   entry; when that pc is the call's own return address the call is not one (an ARM
   condition that failed, or x86's "call next; pop" that reads the pc). A return takes
   effect at the thread's next instruction too: the stack is unwound to the newest frame
   whose return address is that pc (and, on x86, whose stack pointer is where the return
   read its address), so a longjmp or an exception that skipped frames drops them at the
   next return that matches an older frame, and on x86 already at the next call, whose
   stack pointer is at or above theirs ("unwound" counts them); a return that
   matches no frame (a function entered before the trace starts, a return used as a jump)
   changes nothing and counts as unmatched. A tail call (a jump to another function) is
   not seen: the callee's instructions count in the caller's frame. Beyond max_depth the
   calls are counted and not kept. So after frames_replay_stack_apply_frame(f) the stack
   of f's thread is the call path of f's function, every count a lower bound when the
   trace starts or ends inside calls.
   ====================================================================================== */

typedef struct frames_replay_stack frames_replay_stack;

typedef struct frames_replay_stack_options {
    uint32_t max_depth;      /* frames kept per thread (default 4096) */
    uint32_t max_threads;    /* distinct threads (default 65536) */
    void *alloc_ctx;
} frames_replay_stack_options;
FRAMES_REPLAY_DEF void frames_replay_stack_options_default(frames_replay_stack_options *o);

/* One call that has not returned. */
typedef struct frames_replay_call {
    uint64_t entry;          /* the callee's first instruction */
    uint64_t site;           /* the call instruction */
    uint64_t ret;            /* its return address (site + length) */
    uint64_t sp;             /* x86: where the call stored the return address; 0 unknown */
    uint64_t index;          /* instruction index of the call (std_frames from 0) */
    uint64_t user;           /* 0 when pushed; the caller's own (a context handle, ...) */
} frames_replay_call;

typedef struct frames_replay_stack_stats {
    uint64_t instructions;   /* std_frames applied */
    uint64_t calls, returns; /* calls pushed, returns that popped their frame */
    uint64_t unmatched_returns;   /* returns matching no frame */
    uint64_t unwound;        /* frames dropped by a return to an older frame */
    uint64_t deep_calls;     /* calls beyond max_depth (not kept) */
    uint64_t threads;
    uint32_t max_depth_seen;
    int thread_cap_hit;
} frames_replay_stack_stats;

/* The call stack of architecture (arch, machine) (frames header; an architecture
   without call recognition keeps empty stacks). o may be NULL. FRAMES_OK, or
   FRAMES_E_NOMEM / FRAMES_E_INVALID. */
FRAMES_REPLAY_DEF int frames_replay_stack_open(frames_replay_stack **s, uint32_t arch,
                                               uint64_t machine,
                                               const frames_replay_stack_options *o,
                                               frames_error *err);
FRAMES_REPLAY_DEF void frames_replay_stack_close(frames_replay_stack *s);
/* Apply one frame (trace order; only std_frames matter). FRAMES_OK, FRAMES_E_LIMIT (a
   thread beyond max_threads: its instructions get an empty stack) or FRAMES_E_NOMEM
   (the call is counted as deep). The state stays consistent either way. */
FRAMES_REPLAY_DEF int frames_replay_stack_apply_frame(frames_replay_stack *s,
                                                      const frames_frame *f);
/* The stack of `thread` after the last frame applied: *depth frames, [0] outermost,
   [*depth - 1] the function running. The pointer stays valid until the next
   apply_frame; a consumer may set the frames' `user` fields. NULL and 0 for a thread
   never seen. */
FRAMES_REPLAY_DEF frames_replay_call *frames_replay_stack_get(frames_replay_stack *s,
                                                              uint64_t thread, size_t *depth);
FRAMES_REPLAY_DEF const frames_replay_stack_stats *
frames_replay_stack_stats_get(const frames_replay_stack *s);
/* What a std_frame's instruction bytes are, for (arch, machine) and the frame's mode:
   1 a call, -1 a return, 0 anything else. */
FRAMES_REPLAY_DEF int frames_replay_stack_classify(uint32_t arch, uint64_t machine,
                                                   const frames_std_frame *sf);

#ifdef __cplusplus
}
#endif
#endif /* FRAMES_REPLAY_H_INCLUDED */

/* ======================================================================================
   IMPLEMENTATION
   ====================================================================================== */
#if defined(FRAMES_REPLAY_IMPLEMENTATION) || defined(FRAMES_ALL_IMPLEMENTATION)
#ifndef FRAMES_REPLAY_IMPLEMENTATION_INCLUDED
#define FRAMES_REPLAY_IMPLEMENTATION_INCLUDED

#if !defined(FRAMES_NO_STDIO) && !defined(FRAMES_NO_POSIX) && !defined(FRAMES_REPLAY_NO_THREADS)
#define FRAMES__WANT_WORKER   /* the index build's second segment */
#endif
#define FRAMES__WANT_HELPERS
#include "frames.h"
/* compressed traces are files: without stdio or POSIX there are none to open */
#if defined(FRAMES_REPLAY_LIBZSTD) && !defined(FRAMES_NO_STDIO) && !defined(FRAMES_NO_POSIX)
#define FRAMES__REPLAY_ZSTD 1
#if defined(FRAMES_STATIC) || defined(FRAMES_REPLAY_STATIC)
/* frames_zstd.h's functions are private to this file then: its implementation goes here */
#if defined(FRAMES_REPLAY_STATIC) && !defined(FRAMES_ZSTD_STATIC)
#define FRAMES_ZSTD_STATIC
#endif
#define FRAMES_ZSTD_IMPLEMENTATION
#endif
#include "frames_zstd.h"
#endif
#if !defined(FRAMES_NO_STDIO) && !defined(FRAMES_NO_POSIX)
#define FRAMES__REPLAY_FILES 1
#include <sys/stat.h>
#include <unistd.h>
#ifndef FRAMES_REPLAY_NO_THREADS
#define FRAMES__REPLAY_THREADS 1
#endif
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* --------------------------------------------------------------------------------------
   Architecture tables
   -------------------------------------------------------------------------------------- */

/* A full register: name, width in bits, bytes it takes in the file (>= bits / 8). */
typedef struct frames__replay_full {
    const char *name;
    uint32_t bits, store;
} frames__replay_full;

/* An alias: name, full register (by name), byte offset, size, zero extension. */
typedef struct frames__replay_alias_def {
    const char *name, *full;
    uint16_t offset, size;
    uint8_t zext;
} frames__replay_alias_def;

static const frames__replay_full frames__replay_x64_regs[] = {
    {"rax", 64, 8}, {"rbx", 64, 8}, {"rcx", 64, 8}, {"rdx", 64, 8}, {"rsi", 64, 8},
    {"rdi", 64, 8}, {"rbp", 64, 8}, {"rsp", 64, 8}, {"r8", 64, 8}, {"r9", 64, 8},
    {"r10", 64, 8}, {"r11", 64, 8}, {"r12", 64, 8}, {"r13", 64, 8}, {"r14", 64, 8},
    {"r15", 64, 8}, {"rip", 64, 8}, {"eflags", 32, 8}, {"cs", 32, 4}, {"ss", 32, 4},
    {"ds", 32, 4}, {"es", 32, 4}, {"fs", 32, 4}, {"gs", 32, 4}, {"fs_base", 64, 8},
    {"gs_base", 64, 8},
    {"xmm0", 128, 16}, {"xmm1", 128, 16}, {"xmm2", 128, 16}, {"xmm3", 128, 16},
    {"xmm4", 128, 16}, {"xmm5", 128, 16}, {"xmm6", 128, 16}, {"xmm7", 128, 16},
    {"xmm8", 128, 16}, {"xmm9", 128, 16}, {"xmm10", 128, 16}, {"xmm11", 128, 16},
    {"xmm12", 128, 16}, {"xmm13", 128, 16}, {"xmm14", 128, 16}, {"xmm15", 128, 16},
    {"ymm0h", 128, 16}, {"ymm1h", 128, 16}, {"ymm2h", 128, 16}, {"ymm3h", 128, 16},
    {"ymm4h", 128, 16}, {"ymm5h", 128, 16}, {"ymm6h", 128, 16}, {"ymm7h", 128, 16},
    {"ymm8h", 128, 16}, {"ymm9h", 128, 16}, {"ymm10h", 128, 16}, {"ymm11h", 128, 16},
    {"ymm12h", 128, 16}, {"ymm13h", 128, 16}, {"ymm14h", 128, 16}, {"ymm15h", 128, 16},
};
#define FRAMES__X(n, f, o, s, z) {n, f, o, s, z}
static const frames__replay_alias_def frames__replay_x64_aliases[] = {
    FRAMES__X("eax", "rax", 0, 4, 1), FRAMES__X("ax", "rax", 0, 2, 0), FRAMES__X("al", "rax", 0, 1, 0),
    FRAMES__X("ah", "rax", 1, 1, 0), FRAMES__X("ebx", "rbx", 0, 4, 1), FRAMES__X("bx", "rbx", 0, 2, 0),
    FRAMES__X("bl", "rbx", 0, 1, 0), FRAMES__X("bh", "rbx", 1, 1, 0), FRAMES__X("ecx", "rcx", 0, 4, 1),
    FRAMES__X("cx", "rcx", 0, 2, 0), FRAMES__X("cl", "rcx", 0, 1, 0), FRAMES__X("ch", "rcx", 1, 1, 0),
    FRAMES__X("edx", "rdx", 0, 4, 1), FRAMES__X("dx", "rdx", 0, 2, 0), FRAMES__X("dl", "rdx", 0, 1, 0),
    FRAMES__X("dh", "rdx", 1, 1, 0), FRAMES__X("esi", "rsi", 0, 4, 1), FRAMES__X("si", "rsi", 0, 2, 0),
    FRAMES__X("sil", "rsi", 0, 1, 0), FRAMES__X("edi", "rdi", 0, 4, 1), FRAMES__X("di", "rdi", 0, 2, 0),
    FRAMES__X("dil", "rdi", 0, 1, 0), FRAMES__X("ebp", "rbp", 0, 4, 1), FRAMES__X("bp", "rbp", 0, 2, 0),
    FRAMES__X("bpl", "rbp", 0, 1, 0), FRAMES__X("esp", "rsp", 0, 4, 1), FRAMES__X("sp", "rsp", 0, 2, 0),
    FRAMES__X("spl", "rsp", 0, 1, 0),
    FRAMES__X("r8d", "r8", 0, 4, 1), FRAMES__X("r8w", "r8", 0, 2, 0), FRAMES__X("r8b", "r8", 0, 1, 0),
    FRAMES__X("r9d", "r9", 0, 4, 1), FRAMES__X("r9w", "r9", 0, 2, 0), FRAMES__X("r9b", "r9", 0, 1, 0),
    FRAMES__X("r10d", "r10", 0, 4, 1), FRAMES__X("r10w", "r10", 0, 2, 0), FRAMES__X("r10b", "r10", 0, 1, 0),
    FRAMES__X("r11d", "r11", 0, 4, 1), FRAMES__X("r11w", "r11", 0, 2, 0), FRAMES__X("r11b", "r11", 0, 1, 0),
    FRAMES__X("r12d", "r12", 0, 4, 1), FRAMES__X("r12w", "r12", 0, 2, 0), FRAMES__X("r12b", "r12", 0, 1, 0),
    FRAMES__X("r13d", "r13", 0, 4, 1), FRAMES__X("r13w", "r13", 0, 2, 0), FRAMES__X("r13b", "r13", 0, 1, 0),
    FRAMES__X("r14d", "r14", 0, 4, 1), FRAMES__X("r14w", "r14", 0, 2, 0), FRAMES__X("r14b", "r14", 0, 1, 0),
    FRAMES__X("r15d", "r15", 0, 4, 1), FRAMES__X("r15w", "r15", 0, 2, 0), FRAMES__X("r15b", "r15", 0, 1, 0),
    FRAMES__X("eip", "rip", 0, 4, 1), FRAMES__X("rflags", "eflags", 0, 8, 0),
    FRAMES__X("ymm0", "xmm0", 0, 32, 0), FRAMES__X("ymm1", "xmm1", 0, 32, 0),
    FRAMES__X("ymm2", "xmm2", 0, 32, 0), FRAMES__X("ymm3", "xmm3", 0, 32, 0),
    FRAMES__X("ymm4", "xmm4", 0, 32, 0), FRAMES__X("ymm5", "xmm5", 0, 32, 0),
    FRAMES__X("ymm6", "xmm6", 0, 32, 0), FRAMES__X("ymm7", "xmm7", 0, 32, 0),
    FRAMES__X("ymm8", "xmm8", 0, 32, 0), FRAMES__X("ymm9", "xmm9", 0, 32, 0),
    FRAMES__X("ymm10", "xmm10", 0, 32, 0), FRAMES__X("ymm11", "xmm11", 0, 32, 0),
    FRAMES__X("ymm12", "xmm12", 0, 32, 0), FRAMES__X("ymm13", "xmm13", 0, 32, 0),
    FRAMES__X("ymm14", "xmm14", 0, 32, 0), FRAMES__X("ymm15", "xmm15", 0, 32, 0),
};

static const frames__replay_full frames__replay_x86_regs[] = {
    {"eax", 32, 4}, {"ecx", 32, 4}, {"edx", 32, 4}, {"ebx", 32, 4}, {"esp", 32, 4},
    {"ebp", 32, 4}, {"esi", 32, 4}, {"edi", 32, 4}, {"eip", 32, 4}, {"eflags", 32, 4},
    {"cs", 32, 4}, {"ss", 32, 4}, {"ds", 32, 4}, {"es", 32, 4}, {"fs", 32, 4}, {"gs", 32, 4},
    {"fs_base", 32, 4}, {"gs_base", 32, 4},
    {"xmm0", 128, 16}, {"xmm1", 128, 16}, {"xmm2", 128, 16}, {"xmm3", 128, 16},
    {"xmm4", 128, 16}, {"xmm5", 128, 16}, {"xmm6", 128, 16}, {"xmm7", 128, 16},
    {"ymm0h", 128, 16}, {"ymm1h", 128, 16}, {"ymm2h", 128, 16}, {"ymm3h", 128, 16},
    {"ymm4h", 128, 16}, {"ymm5h", 128, 16}, {"ymm6h", 128, 16}, {"ymm7h", 128, 16},
};
static const frames__replay_alias_def frames__replay_x86_aliases[] = {
    FRAMES__X("ax", "eax", 0, 2, 0), FRAMES__X("al", "eax", 0, 1, 0), FRAMES__X("ah", "eax", 1, 1, 0),
    FRAMES__X("bx", "ebx", 0, 2, 0), FRAMES__X("bl", "ebx", 0, 1, 0), FRAMES__X("bh", "ebx", 1, 1, 0),
    FRAMES__X("cx", "ecx", 0, 2, 0), FRAMES__X("cl", "ecx", 0, 1, 0), FRAMES__X("ch", "ecx", 1, 1, 0),
    FRAMES__X("dx", "edx", 0, 2, 0), FRAMES__X("dl", "edx", 0, 1, 0), FRAMES__X("dh", "edx", 1, 1, 0),
    FRAMES__X("si", "esi", 0, 2, 0), FRAMES__X("di", "edi", 0, 2, 0), FRAMES__X("bp", "ebp", 0, 2, 0),
    FRAMES__X("sp", "esp", 0, 2, 0), FRAMES__X("ip", "eip", 0, 2, 0),
    FRAMES__X("ymm0", "xmm0", 0, 32, 0), FRAMES__X("ymm1", "xmm1", 0, 32, 0),
    FRAMES__X("ymm2", "xmm2", 0, 32, 0), FRAMES__X("ymm3", "xmm3", 0, 32, 0),
    FRAMES__X("ymm4", "xmm4", 0, 32, 0), FRAMES__X("ymm5", "xmm5", 0, 32, 0),
    FRAMES__X("ymm6", "xmm6", 0, 32, 0), FRAMES__X("ymm7", "xmm7", 0, 32, 0),
};

static const frames__replay_full frames__replay_arm_regs[] = {
    {"r0", 32, 4}, {"r1", 32, 4}, {"r2", 32, 4}, {"r3", 32, 4}, {"r4", 32, 4},
    {"r5", 32, 4}, {"r6", 32, 4}, {"r7", 32, 4}, {"r8", 32, 4}, {"r9", 32, 4},
    {"r10", 32, 4}, {"r11", 32, 4}, {"r12", 32, 4}, {"sp", 32, 4}, {"lr", 32, 4},
    {"pc", 32, 4}, {"cpsr", 32, 4},
};
static const frames__replay_alias_def frames__replay_arm_aliases[] = {
    FRAMES__X("r13", "sp", 0, 4, 0), FRAMES__X("r14", "lr", 0, 4, 0), FRAMES__X("r15", "pc", 0, 4, 0),
    FRAMES__X("fp", "r11", 0, 4, 0), FRAMES__X("ip", "r12", 0, 4, 0),
};

static const frames__replay_full frames__replay_a64_regs[] = {
    {"x0", 64, 8}, {"x1", 64, 8}, {"x2", 64, 8}, {"x3", 64, 8}, {"x4", 64, 8},
    {"x5", 64, 8}, {"x6", 64, 8}, {"x7", 64, 8}, {"x8", 64, 8}, {"x9", 64, 8},
    {"x10", 64, 8}, {"x11", 64, 8}, {"x12", 64, 8}, {"x13", 64, 8}, {"x14", 64, 8},
    {"x15", 64, 8}, {"x16", 64, 8}, {"x17", 64, 8}, {"x18", 64, 8}, {"x19", 64, 8},
    {"x20", 64, 8}, {"x21", 64, 8}, {"x22", 64, 8}, {"x23", 64, 8}, {"x24", 64, 8},
    {"x25", 64, 8}, {"x26", 64, 8}, {"x27", 64, 8}, {"x28", 64, 8}, {"x29", 64, 8},
    {"x30", 64, 8}, {"sp", 64, 8}, {"pc", 64, 8}, {"cpsr", 32, 4},
};
static const frames__replay_alias_def frames__replay_a64_aliases[] = {
    FRAMES__X("w0", "x0", 0, 4, 1), FRAMES__X("w1", "x1", 0, 4, 1), FRAMES__X("w2", "x2", 0, 4, 1),
    FRAMES__X("w3", "x3", 0, 4, 1), FRAMES__X("w4", "x4", 0, 4, 1), FRAMES__X("w5", "x5", 0, 4, 1),
    FRAMES__X("w6", "x6", 0, 4, 1), FRAMES__X("w7", "x7", 0, 4, 1), FRAMES__X("w8", "x8", 0, 4, 1),
    FRAMES__X("w9", "x9", 0, 4, 1), FRAMES__X("w10", "x10", 0, 4, 1), FRAMES__X("w11", "x11", 0, 4, 1),
    FRAMES__X("w12", "x12", 0, 4, 1), FRAMES__X("w13", "x13", 0, 4, 1), FRAMES__X("w14", "x14", 0, 4, 1),
    FRAMES__X("w15", "x15", 0, 4, 1), FRAMES__X("w16", "x16", 0, 4, 1), FRAMES__X("w17", "x17", 0, 4, 1),
    FRAMES__X("w18", "x18", 0, 4, 1), FRAMES__X("w19", "x19", 0, 4, 1), FRAMES__X("w20", "x20", 0, 4, 1),
    FRAMES__X("w21", "x21", 0, 4, 1), FRAMES__X("w22", "x22", 0, 4, 1), FRAMES__X("w23", "x23", 0, 4, 1),
    FRAMES__X("w24", "x24", 0, 4, 1), FRAMES__X("w25", "x25", 0, 4, 1), FRAMES__X("w26", "x26", 0, 4, 1),
    FRAMES__X("w27", "x27", 0, 4, 1), FRAMES__X("w28", "x28", 0, 4, 1), FRAMES__X("w29", "x29", 0, 4, 1),
    FRAMES__X("w30", "x30", 0, 4, 1), FRAMES__X("fp", "x29", 0, 8, 0), FRAMES__X("lr", "x30", 0, 8, 0),
    FRAMES__X("wsp", "sp", 0, 4, 1), FRAMES__X("nzcv", "cpsr", 0, 4, 0),
};
#undef FRAMES__X

typedef struct frames__replay_archdef {
    const char *name;
    const frames__replay_full *regs;
    size_t nregs;
    const frames__replay_alias_def *aliases;
    size_t naliases;
    int vex;   /* x86: xmm writes of VEX/EVEX instructions clear the upper ymm half */
    const char *pc;   /* the program counter: the instruction's address at its position */
} frames__replay_archdef;

#define FRAMES__REPLAY_N(a) (sizeof(a) / sizeof((a)[0]))
static const frames__replay_archdef frames__replay_archs[] = {
    {"x86-64", frames__replay_x64_regs, FRAMES__REPLAY_N(frames__replay_x64_regs),
     frames__replay_x64_aliases, FRAMES__REPLAY_N(frames__replay_x64_aliases), 64, "rip"},
    {"x86", frames__replay_x86_regs, FRAMES__REPLAY_N(frames__replay_x86_regs),
     frames__replay_x86_aliases, FRAMES__REPLAY_N(frames__replay_x86_aliases), 32, "eip"},
    {"arm", frames__replay_arm_regs, FRAMES__REPLAY_N(frames__replay_arm_regs),
     frames__replay_arm_aliases, FRAMES__REPLAY_N(frames__replay_arm_aliases), 0, "pc"},
    {"aarch64", frames__replay_a64_regs, FRAMES__REPLAY_N(frames__replay_a64_regs),
     frames__replay_a64_aliases, FRAMES__REPLAY_N(frames__replay_a64_aliases), 0, "pc"},
    {"unknown", NULL, 0, NULL, 0, 0, NULL},
};

/* The table for (arch, machine), following BAP's mapping (spec/frames-format.md §11). */
static const frames__replay_archdef *frames__replay_arch_of(uint32_t arch, uint64_t machine) {
    if (arch == FRAMES_ARCH_I386) return &frames__replay_archs[machine == 64 || machine == 65 ? 0 : 1];
    if (arch == FRAMES_ARCH_ARM) return &frames__replay_archs[2];
    if (arch == FRAMES_ARCH_AARCH64) return &frames__replay_archs[3];
    return &frames__replay_archs[4];
}

/* --------------------------------------------------------------------------------------
   Register model
   -------------------------------------------------------------------------------------- */

/* One name of the name table: a full register (offset 0, its size) or an alias. */
typedef struct frames__replay_name {
    uint64_t hash;               /* frames__htab's */
    const char *name;            /* lower case */
    frames_replay_alias a;
} frames__replay_name;

/* A thread's ordinal (its register file, its call stack) by thread id. */
typedef struct frames__replay_tid {
    uint64_t hash;               /* frames__htab's */
    uint64_t tid;
    size_t index;
} frames__replay_tid;

/* One thread's register file: values and a known flag per byte. */
typedef struct frames__replay_file {
    uint64_t tid;
    uint8_t *val, *known;        /* file_bytes each */
} frames__replay_file;

/* The names a trace uses, as they are spelled there (up to 8 bytes, packed), with the
   answer of the name table: a trace names a few dozen registers millions of times. */
#define FRAMES__REPLAY_FAST 256u
typedef struct frames__replay_fast {
    uint64_t hash;               /* frames__htab's */
    uint64_t key;                /* the name's bytes, the first in the low byte */
    uint32_t len;
    uint32_t found;
    frames_replay_alias a;
} frames__replay_fast;

#define FRAMES__REPLAY_FRONT 128u
struct frames_replay_regs {
    void *actx;
    frames__htab fast;           /* frames__replay_fast: at most FRAMES__REPLAY_FAST names,
                                    filled as they are looked up */
    frames__replay_fast front[FRAMES__REPLAY_FRONT];   /* before fast, one slot a word
                                    (hash unused; len 0: empty) */
    size_t last;                 /* file of the last thread looked up */
    const frames__replay_archdef *def;
    frames_replay_reg *table;    /* full registers (the public view) */
    uint32_t *offset;            /* byte offset of each full register in the file */
    uint32_t *store;             /* bytes of each */
    uint32_t *upper;             /* x86 xmm: index of its ymm upper half, else UINT32_MAX */
    size_t nregs;
    uint32_t file_bytes;
    uint32_t pc;                 /* index of the program counter, UINT32_MAX: none */
    frames__htab names;          /* frames__replay_name: every name of the tables */
    frames__replay_file *files;  /* threads in order of first appearance */
    size_t nfiles, capfiles;
    frames__htab tids;           /* frames__replay_tid: the file of each thread */
    uint32_t max_threads;
    uint64_t values;             /* operands with a value seen */
};

/* Register names are looked up without regard to case; the tables' names are lower
   case and shorter than this. */
#define FRAMES__REPLAY_NAME_MAX 32u

static FRAMES__UNUSED uint64_t frames__replay_hash_name(const char *lower, size_t n) {
    return frames__mix64(frames__hash_bytes(FRAMES__HASH_SEED, lower, n));
}

static FRAMES__UNUSED int frames__replay_name_put(frames_replay_regs *m, const char *name, frames_replay_alias a) {
    frames__replay_name *e =
        (frames__replay_name *)frames__htab_add(&m->names, frames__replay_hash_name(name, strlen(name)), m->actx);
    if (!e) return -1;
    e->name = name;
    e->a = a;
    return 0;
}

/* The ordinal of thread tid in t, or (size_t)-1. */
static FRAMES__UNUSED size_t frames__replay_tid_find(const frames__htab *t, uint64_t tid) {
    size_t at = 0;
    const frames__replay_tid *e;
    uint64_t h = frames__mix64(tid);
    while ((e = FRAMES__HTAB_NEXT(t, frames__replay_tid, h, &at)) != NULL && e->tid != tid) {}
    return e ? e->index : (size_t)-1;
}

/* Thread tid is ordinal index in t (absent before): 0, or -1 when out of memory. */
static FRAMES__UNUSED int frames__replay_tid_add(frames__htab *t, uint64_t tid, size_t index, void *actx) {
    frames__replay_tid *e = (frames__replay_tid *)frames__htab_add(t, frames__mix64(tid), actx);
    if (!e) return -1;
    e->tid = tid;
    e->index = index;
    return 0;
}

static FRAMES__UNUSED size_t frames__replay_reg_index(const frames__replay_archdef *d, const char *name) {
    size_t i;
    for (i = 0; i < d->nregs; i++)
        if (!strcmp(d->regs[i].name, name)) return i;
    return (size_t)-1;
}

FRAMES_REPLAY_DEF void frames_replay_regs_close(frames_replay_regs *m) {
    size_t i;
    void *a;
    if (!m) return;
    a = m->actx;
    for (i = 0; i < m->nfiles; i++) FRAMES_FREE(m->files[i].val, a);
    FRAMES_FREE(m->files, a);
    frames__htab_free(&m->tids, a);
    frames__htab_free(&m->names, a);
    FRAMES_FREE(m->table, a);
    FRAMES_FREE(m->offset, a);
    FRAMES_FREE(m->store, a);
    FRAMES_FREE(m->upper, a);
    frames__htab_free(&m->fast, a);
    FRAMES_FREE(m, a);
}

FRAMES_REPLAY_DEF int frames_replay_regs_open(frames_replay_regs **out, uint32_t arch,
                                              uint64_t machine, uint32_t max_threads,
                                              void *actx, frames_error *err) {
    frames_replay_regs *m;
    const frames__replay_archdef *d = frames__replay_arch_of(arch, machine);
    size_t i, n = d->nregs ? d->nregs : 1;
    uint32_t off = 0;
    *out = NULL;
    m = (frames_replay_regs *)frames__zalloc(sizeof *m, actx);
    if (!m) return frames__fail(err, FRAMES_E_NOMEM, FRAMES_NO_POS, FRAMES_NO_POS, "out of memory");
    m->actx = actx;
    m->def = d;
    m->nregs = d->nregs;
    m->max_threads = max_threads ? max_threads : 65536u;
    m->table = (frames_replay_reg *)frames__zalloc(n * sizeof *m->table, actx);
    m->offset = (uint32_t *)frames__zalloc(n * sizeof *m->offset, actx);
    m->store = (uint32_t *)frames__zalloc(n * sizeof *m->store, actx);
    m->upper = (uint32_t *)frames__zalloc(n * sizeof *m->upper, actx);
    FRAMES__HTAB_INIT(&m->names, frames__replay_name, d->nregs + d->naliases);
    FRAMES__HTAB_INIT(&m->fast, frames__replay_fast, FRAMES__REPLAY_FAST);
    FRAMES__HTAB_INIT(&m->tids, frames__replay_tid, m->max_threads);
    if (!m->table || !m->offset || !m->store || !m->upper) goto nomem;
    for (i = 0; i < d->nregs; i++) {
        frames_replay_alias a;
        m->table[i].name = d->regs[i].name;
        m->table[i].bits = d->regs[i].bits;
        m->offset[i] = off;
        m->store[i] = d->regs[i].store;
        m->upper[i] = UINT32_MAX;
        off += d->regs[i].store;
        a.reg = (uint32_t)i;
        a.offset = 0;
        a.size = d->regs[i].bits / 8;   /* eflags: 4 of its 8 bytes (rflags has all 8) */
        a.zext = 1;   /* a full write (or a shorter value, e.g. a 16-bit segment) fills it */
        if (frames__replay_name_put(m, d->regs[i].name, a) < 0) goto nomem;
    }
    m->file_bytes = off;
    m->pc = d->pc ? (uint32_t)frames__replay_reg_index(d, d->pc) : UINT32_MAX;
    for (i = 0; i < d->naliases; i++) {
        frames_replay_alias a;
        size_t full = frames__replay_reg_index(d, d->aliases[i].full);
        if (full == (size_t)-1) continue;
        a.reg = (uint32_t)full;
        a.offset = d->aliases[i].offset;
        a.size = d->aliases[i].size;
        a.zext = d->aliases[i].zext;
        if (frames__replay_name_put(m, d->aliases[i].name, a) < 0) goto nomem;
    }
    /* ymmN spans xmmN and ymmNh, which the table lays out next to each other; an xmm
       write by a VEX instruction clears ymmNh. */
    for (i = 0; i < d->nregs; i++) {
        char up[16];
        size_t u;
        if (strncmp(d->regs[i].name, "xmm", 3)) continue;
        frames__fmt(up, sizeof up, "ymm%sh", d->regs[i].name + 3);
        u = frames__replay_reg_index(d, up);
        if (u != (size_t)-1) m->upper[i] = (uint32_t)u;
    }
    if (m->upper[0] == UINT32_MAX) {}   /* keep layout: xmm then ymm upper halves below */
    /* lay every xmmN's upper half right after it so that ymmN is one byte range */
    {
        uint32_t o = 0;
        for (i = 0; i < d->nregs; i++) {
            int is_upper = !strncmp(d->regs[i].name, "ymm", 3);
            if (is_upper) continue;
            m->offset[i] = o;
            o += m->store[i];
            if (m->upper[i] != UINT32_MAX) {
                m->offset[m->upper[i]] = o;
                o += m->store[m->upper[i]];
            }
        }
    }
    *out = m;
    return FRAMES_OK;
nomem:
    frames_replay_regs_close(m);
    return frames__fail(err, FRAMES_E_NOMEM, FRAMES_NO_POS, FRAMES_NO_POS, "out of memory");
}

static FRAMES__UNUSED int frames__replay_lookup_table(const frames_replay_regs *m, const char *name,
                                                      size_t len, frames_replay_alias *a) {
    char lower[FRAMES__REPLAY_NAME_MAX];
    const frames__replay_name *e;
    size_t i, at = 0;
    uint64_t h;
    if (len < sizeof lower) {
        for (i = 0; i < len; i++) {
            char c = name[i];
            lower[i] = (char)(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
        }
        h = frames__replay_hash_name(lower, len);
        while ((e = FRAMES__HTAB_NEXT(&m->names, frames__replay_name, h, &at)) != NULL)
            if (!memcmp(e->name, lower, len) && !e->name[len]) {
                *a = e->a;   /* ymmN: the alias size spans the upper half laid out after xmmN */
                return 1;
            }
    }
    /* BAP's lifter names registers R_EAX, R_RSP */
    if (len > 2 && (name[0] == 'R' || name[0] == 'r') && name[1] == '_')
        return frames__replay_lookup_table(m, name + 2, len - 2, a);
    return 0;
}

/* frames_replay_regs_lookup of a name of 1 to 8 bytes whose word is key: the cache of
   the names the trace spells, filled from the name table. */
FRAMES__INLINE int frames__replay_lookup_key(frames_replay_regs *m, uint64_t key, size_t len,
                                             const char *name, frames_replay_alias *a) {
    /* one multiply, its high bits folded onto the low ones that pick the slot: mixed
       enough for a few hundred names, and shorter than frames__mix64 on the hot path */
    uint64_t h = (key ^ (uint64_t)len << 61) * 0x9E3779B97F4A7C15ull;
    frames__replay_fast *e = &m->front[h >> 57 & (FRAMES__REPLAY_FRONT - 1)], *front = e;
    size_t at = 0;
    int found;
    if (e->key == key && e->len == len) {   /* the common case: one load, one compare */
        if (e->found) *a = e->a;
        return (int)e->found;
    }
    h ^= h >> 29;
    while ((e = FRAMES__HTAB_NEXT(&m->fast, frames__replay_fast, h, &at)) != NULL)
        if (e->key == key && e->len == len) {
            *front = *e;
            if (e->found) *a = e->a;
            return (int)e->found;
        }
    found = frames__replay_lookup_table(m, name, len, a);
    /* a full cache (a trace of many names) or no memory: looked up each time */
    if ((e = (frames__replay_fast *)frames__htab_add(&m->fast, h, m->actx)) != NULL) {
        e->key = key;
        e->len = (uint32_t)len;
        e->found = (uint32_t)found;
        if (found) e->a = *a;
    }
    return found;
}

FRAMES_REPLAY_DEF int frames_replay_regs_lookup(const frames_replay_regs *mc, const char *name,
                                                size_t len, frames_replay_alias *a) {
    frames_replay_regs *m = (frames_replay_regs *)mc;   /* the cache of names fills */
    if (!m->nregs || !name) return 0;
    if (len == 0 || len > 8) return frames__replay_lookup_table(m, name, len, a);
    return frames__replay_lookup_key(m, frames__value_u64((const uint8_t *)name, len), len, name, a);
}

FRAMES_REPLAY_DEF size_t frames_replay_regs_count(const frames_replay_regs *m) { return m->nregs; }

FRAMES_REPLAY_DEF const frames_replay_reg *frames_replay_regs_at(const frames_replay_regs *m,
                                                                 size_t i) {
    return i < m->nregs ? &m->table[i] : NULL;
}

/* The register file of thread tid, created on first sight (NULL: out of memory or over
   max_threads; create 0: NULL when absent). */
static FRAMES__UNUSED frames__replay_file *frames__replay_file_of(frames_replay_regs *m, uint64_t tid, int create) {
    size_t i;
    frames__replay_file *f;
    if (m->last < m->nfiles && m->files[m->last].tid == tid) return &m->files[m->last];
    if ((i = frames__replay_tid_find(&m->tids, tid)) != (size_t)-1) {
        m->last = i;
        return &m->files[i];
    }
    if (!create || m->nfiles >= m->max_threads) return NULL;
    if (FRAMES__GROW(m->files, m->capfiles, m->nfiles + 1, m->actx) < 0) return NULL;
    f = &m->files[m->nfiles];
    f->tid = tid;
    f->val = (uint8_t *)frames__zalloc(2 * (size_t)(m->file_bytes ? m->file_bytes : 1), m->actx);
    if (!f->val) return NULL;
    if (frames__replay_tid_add(&m->tids, tid, m->nfiles, m->actx) < 0) {
        FRAMES_FREE(f->val, m->actx);
        return NULL;
    }
    f->known = f->val + m->file_bytes;
    m->nfiles++;
    return f;
}

/* x86: is the instruction VEX- or EVEX-encoded (its xmm writes clear the upper half)? */
static FRAMES__UNUSED int frames__replay_x86_vex(const uint8_t *raw, size_t nraw, int bits) {
    size_t i;
    for (i = 0; i < nraw && i < 15; i++) {
        uint8_t b = raw[i];
        if (b == 0x66 || b == 0x67 || b == 0xF2 || b == 0xF3 || b == 0xF0 || b == 0x2E ||
            b == 0x36 || b == 0x3E || b == 0x26 || b == 0x64 || b == 0x65)
            continue;
        if (bits == 64 && (b & 0xF0) == 0x40) continue;   /* REX */
        if (b == 0xC4 || b == 0xC5 || b == 0x62) {
            /* in 32-bit mode these are LES/LDS/BOUND unless ModRM.mod is 11 */
            if (bits == 64) return 1;
            return i + 1 < nraw && (raw[i + 1] & 0xC0) == 0xC0;
        }
        return 0;
    }
    return 0;
}

/* Write value (len bytes) through alias a into file f; post: a write (zero extension). */
FRAMES__INLINE void frames__replay_file_set(const frames_replay_regs *m, frames__replay_file *f,
                                    const frames_replay_alias *a, const uint8_t *v, size_t len,
                                    int post, int vex) {
    uint32_t base = m->offset[a->reg], full = m->store[a->reg];
    size_t n = len < a->size ? len : a->size;
    if (a->offset + n > full + (m->upper[a->reg] != UINT32_MAX ? m->store[m->upper[a->reg]] : 0))
        return;   /* cannot happen with the tables above */
    if (n == 8) {   /* the common sizes as constants: no call for a few bytes */
        memcpy(f->val + base + a->offset, v, 8);
        memset(f->known + base + a->offset, 1, 8);
    } else if (n == 4) {
        memcpy(f->val + base + a->offset, v, 4);
        memset(f->known + base + a->offset, 1, 4);
    } else {
        memcpy(f->val + base + a->offset, v, n);
        memset(f->known + base + a->offset, 1, n);
    }
    if (!post) return;
    if (a->zext && a->offset == 0 && n < full) {
        memset(f->val + base + n, 0, full - n);
        memset(f->known + base + n, 1, full - n);
    }
    if (vex && m->upper[a->reg] != UINT32_MAX && n <= full) {
        uint32_t ub = m->offset[m->upper[a->reg]], us = m->store[m->upper[a->reg]];
        memset(f->val + ub, 0, us);
        memset(f->known + ub, 1, us);
    }
}

/* The full registers a pc-less operand names, as a mask bit (the index's block masks). */
static FRAMES__UNUSED uint64_t frames__replay_regbit(uint32_t reg) { return 1ull << (reg < 63 ? reg : 63); }

/* An operand as the model applies it, taken from a decoded operand or, by the index's
   build pass, straight from a std_frame's bytes. */
enum { FRAMES__REPLAY_OP_OTHER, FRAMES__REPLAY_OP_REG, FRAMES__REPLAY_OP_NOREG, FRAMES__REPLAY_OP_MEM };
typedef struct frames__replay_op {
    const uint8_t *value;        /* NULL: the operand has none */
    const uint8_t *at;           /* memory, read from bytes: its address's varint */
    uint64_t address;            /* memory: where */
    uint64_t size;               /* memory: bytes it covers */
    frames_replay_alias a;       /* register the name names (kind REG; NOREG: not in the table) */
    uint32_t len;                /* bytes of value */
    uint32_t kind;
} frames__replay_op;

/* The view of one decoded operand, its register name looked up. */
static FRAMES__UNUSED void frames__replay_op_of(frames_replay_regs *m, const frames_operand *o,
                                                frames__replay_op *op) {
    op->value = o->value.len ? o->value.ptr : NULL;
    op->len = (uint32_t)o->value.len;
    op->kind = FRAMES__REPLAY_OP_OTHER;
    if (o->spec == FRAMES_MEM) {
        op->kind = FRAMES__REPLAY_OP_MEM;
        op->address = o->address;
        op->size = o->value.len ? o->value.len
                                : o->bit_length > 0 ? ((uint64_t)o->bit_length + 7) / 8 : 1;
    } else if (o->spec == FRAMES_REG) {
        op->kind = frames_replay_regs_lookup(m, (const char *)o->name.ptr, o->name.len, &op->a)
                       ? FRAMES__REPLAY_OP_REG
                       : FRAMES__REPLAY_OP_NOREG;
    }
}

/* Apply the register operands of a pre list (post 0) or a post list (post 1) to f (raw:
   the instruction's bytes); *named |= the full registers they name (valued or not). */
static FRAMES__UNUSED void frames__replay_apply_ops(frames_replay_regs *m, frames__replay_file *f,
                                                    const frames__replay_op *ops, size_t n, int post,
                                                    const uint8_t *raw, size_t nraw, uint64_t *named) {
    size_t i;
    int vex = -1;
    for (i = 0; i < n; i++) {
        const frames__replay_op *op = &ops[i];
        if (op->kind != FRAMES__REPLAY_OP_REG && op->kind != FRAMES__REPLAY_OP_NOREG) continue;
        if (op->value) m->values++;
        if (op->kind != FRAMES__REPLAY_OP_REG) continue;
        *named |= frames__replay_regbit(op->a.reg);
        if (!op->value || op->a.reg == m->pc) continue;   /* x86 gives the next instruction's address */
        /* the encoding matters only for a write of a register with an upper half (xmm) */
        if (post && vex < 0 && m->upper[op->a.reg] != UINT32_MAX)
            vex = m->def->vex ? frames__replay_x86_vex(raw, nraw, m->def->vex) : 0;
        frames__replay_file_set(m, f, &op->a, op->value, op->len, post, post && vex > 0);
    }
}

/* Apply the pre list (side 0) or the post list (side 1) of s to f; *named |= the full
   registers the list names (valued or not). */
static FRAMES__UNUSED void frames__replay_file_apply(frames_replay_regs *m, frames__replay_file *f,
                                                     const frames_std_frame *s, int side, uint64_t *named) {
    frames__replay_op ops[16];
    const frames_operand *src = side ? s->post : s->pre;
    uint32_t n = side ? s->npost : s->npre, i = 0, k;
    while (i < n) {   /* a batch at a time: an operand's effect does not depend on the next */
        for (k = 0; k < 16 && i < n; k++, i++) frames__replay_op_of(m, &src[i], &ops[k]);
        frames__replay_apply_ops(m, f, ops, k, side, s->rawbytes.ptr, s->rawbytes.len, named);
    }
}

/* The program counter of file f is the address of the instruction about to run. */
static FRAMES__UNUSED void frames__replay_file_pc(const frames_replay_regs *m, frames__replay_file *f, uint64_t pc) {
    uint8_t v[8];
    frames_replay_alias a;
    if (m->pc == UINT32_MAX) return;
    frames__put_le64(v, pc);
    a.reg = m->pc;
    a.offset = 0;
    a.size = m->store[m->pc] < 8 ? m->store[m->pc] : 8;
    a.zext = 1;
    frames__replay_file_set(m, f, &a, v, a.size, 1, 0);
}

/* After an instruction the next pc is not known (the thread's next frame tells it). */
FRAMES__INLINE void frames__replay_file_pc_unknown(const frames_replay_regs *m, frames__replay_file *f) {
    if (m->pc == UINT32_MAX) return;
    if (m->store[m->pc] == 8) memset(f->known + m->offset[m->pc], 0, 8);   /* no call */
    else memset(f->known + m->offset[m->pc], 0, m->store[m->pc]);
}

FRAMES_REPLAY_DEF int frames_replay_regs_apply_frame(frames_replay_regs *m, const frames_frame *fr) {
    frames__replay_file *f;
    uint64_t named = 0;
    if (fr->kind != FRAMES_KIND_STD) return FRAMES_OK;
    f = frames__replay_file_of(m, fr->std.thread_id, 1);
    if (!f) return FRAMES_E_LIMIT;
    frames__replay_file_apply(m, f, &fr->std, 0, &named);
    frames__replay_file_apply(m, f, &fr->std, 1, &named);
    frames__replay_file_pc_unknown(m, f);
    return FRAMES_OK;
}

FRAMES_REPLAY_DEF int frames_replay_regs_apply_list(frames_replay_regs *m, const frames_std_frame *s,
                                                    int post, uint64_t *named) {
    frames__replay_file *f = frames__replay_file_of(m, s->thread_id, 1);
    uint64_t dummy = 0;
    if (!f) return FRAMES_E_LIMIT;
    frames__replay_file_apply(m, f, s, post ? 1 : 0, named ? named : &dummy);
    return FRAMES_OK;
}

/* Read alias a of file f (NULL: unknown) into value: 1 known, 0 not (fully) known. */
static FRAMES__UNUSED int frames__replay_file_get(const frames_replay_regs *m, const frames__replay_file *f,
                                   const frames_replay_alias *a, uint8_t *value) {
    uint32_t base = m->offset[a->reg], i;
    int known = 1;
    for (i = 0; i < a->size; i++) {
        if (f && f->known[base + a->offset + i]) {
            value[i] = f->val[base + a->offset + i];
        } else {
            value[i] = 0;
            known = 0;
        }
    }
    return known;
}

static FRAMES__UNUSED int frames__replay_get(const frames_replay_regs *m, const frames__replay_file *f,
                              const char *name, uint8_t *value, size_t cap, size_t *size) {
    frames_replay_alias a;
    if (!name || !frames_replay_regs_lookup(m, name, strlen(name), &a)) return FRAMES_E_REPLAY_REG;
    if (size) *size = a.size;
    if (cap < a.size) return FRAMES_E_SPACE;
    return frames__replay_file_get(m, f, &a, value);
}

FRAMES_REPLAY_DEF int frames_replay_regs_get(const frames_replay_regs *m, uint64_t thread,
                                             const char *name, uint8_t *value, size_t cap,
                                             size_t *size) {
    return frames__replay_get(m, frames__replay_file_of((frames_replay_regs *)m, thread, 0), name,
                              value, cap, size);
}

FRAMES_REPLAY_DEF int frames_replay_regs_read(const frames_replay_regs *m, uint64_t thread,
                                              const frames_replay_alias *a, uint8_t *value) {
    if (a->reg >= m->nregs) return 0;
    return frames__replay_file_get(m, frames__replay_file_of((frames_replay_regs *)m, thread, 0), a,
                                   value);
}

/* --------------------------------------------------------------------------------------
   Index: building
   The trace is cut into blocks of 256 instructions. Per block: the frame index of its
   first instruction and two masks of the full registers it writes and reads (bit
   min(reg, 63)). Every 8 blocks a keyframe: every thread's register file. Per 64-byte
   line of memory (data and code alike): the blocks that access it, each with the kinds
   (read, write, execute) and the mask of the line's 8-byte words touched.
   -------------------------------------------------------------------------------------- */

#define FRAMES__REPLAY_BLOCK_LOG2 8u
#define FRAMES__REPLAY_BLOCK (1u << FRAMES__REPLAY_BLOCK_LOG2)
#define FRAMES__REPLAY_KEY_BLOCKS 8u
#define FRAMES__REPLAY_LINE_LOG2 6u
enum { FRAMES__REPLAY_R = 1, FRAMES__REPLAY_W = 2, FRAMES__REPLAY_X = 4 };

typedef struct frames__replay_block {
    uint64_t frame, wmask, rmask;
} frames__replay_block;

/* A line while building: its entries as varints in a chain of pool chunks. */
typedef struct frames__replay_bline {
    uint64_t hash;          /* frames__htab's */
    uint64_t line;          /* address >> 6 */
    uint64_t block;         /* block of the pending entry */
    uint64_t last;          /* block of the last flushed entry */
    uint32_t head, tail;    /* chunk indices + 1 */
    uint32_t bytes;         /* encoded bytes */
    uint8_t kinds, mask, pending;
} frames__replay_bline;

#define FRAMES__REPLAY_CHUNK 60u
typedef struct frames__replay_chunk {
    uint32_t next;
    uint8_t used;
    uint8_t data[FRAMES__REPLAY_CHUNK - 1];
} frames__replay_chunk;

/* A line of a read index: its entries' bytes. */
typedef struct frames__replay_line {
    uint64_t line;          /* address >> 6 */
    uint64_t off;           /* into line data */
    uint32_t bytes, entries;
} frames__replay_line;

typedef struct frames__replay_builder {
    void *actx;
    frames__htab lines;     /* frames__replay_bline */
    frames__replay_chunk *chunks;
    size_t nchunks, capchunks;
    uint64_t budget;        /* bytes the structures may take (max_index_bytes) */
    uint64_t used;          /* bytes of chunks */
    frames__replay_bline *last;   /* the line committed last (NULL: none, or the table
                                     moved its slots) */
    /* The accesses of the block being indexed, combined per line before they reach the
       line table (one look-up there per line and block, not per access): a small cache
       by the line's low bits; an entry pushed out, and all at the block's end, are
       committed. */
    struct {
        uint64_t line;
        uint8_t kinds, mask, used;
    } wc[256];
    uint64_t wcblk;          /* the block they belong to */
    frames__replay_op *ops; /* the operands of the instruction being indexed, from opbase */
    size_t capops, opbase;
    struct frames__replay_tpl *tpl;   /* FRAMES__REPLAY_TPLS templates (NULL: none yet) */
} frames__replay_builder;

static FRAMES__UNUSED void frames__replay_builder_free(frames__replay_builder *b) {
    FRAMES_FREE(b->tpl, b->actx);
    frames__htab_free(&b->lines, b->actx);
    FRAMES_FREE(b->chunks, b->actx);
    FRAMES_FREE(b->ops, b->actx);
}

static FRAMES__UNUSED int frames__replay_bline_put(frames__replay_builder *b, frames__replay_bline *l, uint8_t byte) {
    frames__replay_chunk *c;
    if (!l->tail || b->chunks[l->tail - 1].used >= sizeof c->data) {
        if (b->nchunks >= 0xFFFFFFF0u) return -1;
        if (FRAMES__GROW(b->chunks, b->capchunks, b->nchunks + 1, b->actx) < 0) return -1;
        c = &b->chunks[b->nchunks++];
        c->next = 0;
        c->used = 0;
        if (l->tail) b->chunks[l->tail - 1].next = (uint32_t)b->nchunks;
        else l->head = (uint32_t)b->nchunks;
        l->tail = (uint32_t)b->nchunks;
        b->used += sizeof *c;
    }
    c = &b->chunks[l->tail - 1];
    c->data[c->used++] = byte;
    l->bytes++;
    return 0;
}

/* Append the pending entry: varint of (block delta << 11 | word mask << 3 | kinds). */
static FRAMES__UNUSED int frames__replay_bline_flush(frames__replay_builder *b, frames__replay_bline *l) {
    uint64_t v;
    if (!l->pending) return 0;
    v = ((l->block - l->last) << 11) | ((uint64_t)l->mask << 3) | l->kinds;
    l->last = l->block;
    l->pending = 0;
    while (v >= 0x80) {
        if (frames__replay_bline_put(b, l, (uint8_t)(v | 0x80)) < 0) return -1;
        v >>= 7;
    }
    return frames__replay_bline_put(b, l, (uint8_t)v);
}

/* The line's entry, added when new. NULL when the table would take more than the
   budget or memory is out. */
static FRAMES__UNUSED frames__replay_bline *frames__replay_bline_of(frames__replay_builder *b, uint64_t line) {
    frames__replay_bline *l = b->last;
    uint64_t h;
    size_t at = 0;
    if (l && l->line == line) return l;
    h = frames__mix64(line);
    while ((l = FRAMES__HTAB_NEXT(&b->lines, frames__replay_bline, h, &at)) != NULL && l->line != line) {}
    if (!l) {
        if (!(l = (frames__replay_bline *)frames__htab_add(&b->lines, h, b->actx))) return NULL;
        l->line = line;
    }
    return b->last = l;   /* slots move only when the table grows, within _add */
}

/* Commit the accesses to line (kinds, word mask) of block blk to its entries. */
static FRAMES__UNUSED int frames__replay_commit(frames__replay_builder *b, uint64_t blk, uint64_t line,
                                                uint8_t kinds, uint8_t mask) {
    frames__replay_bline *l = frames__replay_bline_of(b, line);
    if (!l) return -1;
    if (l->pending && l->block != blk && frames__replay_bline_flush(b, l) < 0) return -1;
    if (!l->pending) {
        l->pending = 1;
        l->block = blk;
        l->kinds = 0;
        l->mask = 0;
    }
    l->kinds = (uint8_t)(l->kinds | kinds);
    l->mask = (uint8_t)(l->mask | mask);
    return 0;
}

/* Commit every access combined so far (the block ends). */
static FRAMES__UNUSED int frames__replay_commit_all(frames__replay_builder *b) {
    size_t i;
    for (i = 0; i < sizeof b->wc / sizeof b->wc[0]; i++) {
        if (!b->wc[i].used) continue;
        b->wc[i].used = 0;
        if (frames__replay_commit(b, b->wcblk, b->wc[i].line, b->wc[i].kinds, b->wc[i].mask) < 0)
            return -1;
    }
    return 0;
}

/* The slot of b->wc for line. */
FRAMES__INLINE size_t frames__replay_wc_slot(const frames__replay_builder *b, uint64_t line) {
    return (size_t)(line ^ line >> 8) & (sizeof b->wc / sizeof b->wc[0] - 1);
}

/* Note an access of `kinds` to [addr, addr + len) in block blk. */
static FRAMES__UNUSED int frames__replay_note(frames__replay_builder *b, uint64_t blk, uint64_t addr, uint64_t len,
                               uint8_t kinds) {
    uint64_t first, last, line;
    if (blk != b->wcblk) {
        if (frames__replay_commit_all(b) < 0) return -1;
        b->wcblk = blk;
    }
    if (!len) len = 1;
    if (len > 4096) len = 4096;   /* operands are split at 64 bytes by our recorder */
    if (addr + len - 1 < addr) len = 0 - addr;
    first = addr >> FRAMES__REPLAY_LINE_LOG2;
    last = (addr + len - 1) >> FRAMES__REPLAY_LINE_LOG2;
    for (line = first; line <= last; line++) {
        uint64_t lo = line << FRAMES__REPLAY_LINE_LOG2, s = addr > lo ? addr - lo : 0;
        uint64_t e = addr + len - lo < 64 ? addr + len - lo : 64;
        unsigned wlo = (unsigned)(s >> 3), whi = (unsigned)((e - 1) >> 3);
        uint8_t mask = (uint8_t)((2u << whi) - (1u << wlo));   /* words wlo..whi */
        size_t slot = frames__replay_wc_slot(b, line);
        if (b->wc[slot].used && b->wc[slot].line != line) {
            if (frames__replay_commit(b, blk, b->wc[slot].line, b->wc[slot].kinds, b->wc[slot].mask) < 0)
                return -1;
            b->wc[slot].used = 0;
        }
        if (!b->wc[slot].used) {
            b->wc[slot].used = 1;
            b->wc[slot].line = line;
            b->wc[slot].kinds = 0;
            b->wc[slot].mask = 0;
        }
        b->wc[slot].kinds = (uint8_t)(b->wc[slot].kinds | kinds);
        b->wc[slot].mask = (uint8_t)(b->wc[slot].mask | mask);
        if (line == UINT64_MAX >> FRAMES__REPLAY_LINE_LOG2) break;
    }
    return 0;
}

/* frames__replay_note, without a call for most accesses: one inside a line this block
   has accessed already (the next instruction on a code line, the same stack words)
   adds its kinds and words in place. */
FRAMES__INLINE int frames__replay_note_fast(frames__replay_builder *b, uint64_t blk, uint64_t addr, uint64_t len,
                                            uint8_t kinds) {
    uint64_t line = addr >> FRAMES__REPLAY_LINE_LOG2;
    unsigned lo = (unsigned)(addr & 63);
    size_t slot = frames__replay_wc_slot(b, line);
    if (blk == b->wcblk && len - 1 < 64u - lo && b->wc[slot].used && b->wc[slot].line == line) {
        b->wc[slot].kinds = (uint8_t)(b->wc[slot].kinds | kinds);
        b->wc[slot].mask = (uint8_t)(b->wc[slot].mask | ((2u << ((lo + len - 1) >> 3)) - (1u << (lo >> 3))));
        return 0;
    }
    return frames__replay_note(b, blk, addr, len, kinds);
}

/* --------------------------------------------------------------------------------------
   Index: the build pass's view of a std_frame
   The build pass takes records undecoded. A std_frame laid out as writers emit it (its
   fields in order, each operand in the shape tracers write: specific, bit length, usage
   flags, no_taint, a value below 128 bytes) is read from its bytes straight into
   frames__replay_ops, each register name looked up as one word; the decoder reads any
   other record (frames_reader_decode) and its operands become the same view, so both
   are applied by one function. Whatever this reader takes the decoder takes too, with
   the same meaning; anything in doubt is left to the decoder.
   -------------------------------------------------------------------------------------- */

/* One instruction as the build pass applies it: ops[first, first + npre) of the
   builder's array the pre list, the next n - npre the post list. */
typedef struct frames__replay_view {
    uint64_t address, thread;
    uint64_t index, offset;      /* the frame's, in the trace (set by the build pass) */
    const uint8_t *raw;
    size_t nraw, npre, n, first;
    int decoded;                 /* taken from the decoder: raw and the values point into
                                    its memory, which the next decoding reuses */
} frames__replay_view;

/* Field `tag len bytes` at p inside [p, end): its bytes' start, *stop their end; NULL
   when p holds something else. */
FRAMES__INLINE const uint8_t *frames__replay_field(const uint8_t *p, const uint8_t *end, uint8_t tag,
                                                   const uint8_t **stop) {
    uint64_t n;
    if (p >= end || *p != tag || !(p = frames__fast_varint(p + 1, end, &n)) || n > (uint64_t)(end - p))
        return NULL;
    *stop = p + n;
    return p;
}

/* One operand element `0a L` of a list ending at end, in the shape
     0a l 12 l-2 0a l-4 name | 0a l 0a l-2 08 address    register | memory
     10 bits                                             bit length below 2^14
     1a 08 08 r 10 w 18 i 20 b                           usage, each flag 0 or 1
     22 02 08 t                                          no_taint, 0 or 1
     2a n value                                          n < 128, ending the element
   into *op: the position after it, or NULL for any other bytes. */
FRAMES__INLINE const uint8_t *frames__replay_view_op(frames_replay_regs *m, const uint8_t *p, const uint8_t *end,
                                                     frames__replay_op *op) {
    const uint8_t *b, *t;
    size_t L, l;
    uint64_t bits, w;
    if (end - p < 2 || p[0] != 0x0a || (L = p[1]) >= 0x80 || L > (size_t)(end - p) - 2) return NULL;
    b = p + 2 + L;
    p += 2;
    /* the specific part, and the 18 bytes at least that follow it in the element (so
       that the words read below lie in it) */
    if (L < 4 || p[0] != 0x0a || (l = p[1]) < 4 || l >= 0x80 || l + 2 + 18 > L) return NULL;
    t = p + 2 + l;
    w = frames__le64(p) & 0xffffffffffffull;   /* 0a l 12 l-2 0a l-4 */
    if (w == (0x0a0012000aull | (uint64_t)l << 8 | (uint64_t)(l - 2) << 24 | (uint64_t)(l - 4) << 40)) {
        size_t k = l - 4;   /* the name: the element goes on for 18 bytes after it */
        const char *name = (const char *)(p + 6);
        op->kind = FRAMES__REPLAY_OP_NOREG;
        if (m->nregs && k >= 1 && k <= 8 &&
            frames__replay_lookup_key(m, frames__le64(p + 6) & (~0ull >> (64 - 8 * k)), k, name, &op->a))
            op->kind = FRAMES__REPLAY_OP_REG;
        else if (m->nregs && k > 8 && frames__replay_lookup_table(m, name, k, &op->a))
            op->kind = FRAMES__REPLAY_OP_REG;
    } else if (p[2] == 0x0a && p[3] == l - 2 && p[4] == 0x08) {
        if (frames__fast_varint(p + 5, t, &op->address) != t) return NULL;
        op->kind = FRAMES__REPLAY_OP_MEM;
        op->at = p + 5;
    } else {
        return NULL;
    }
    if (t[0] != 0x10 || !(p = frames__fast_varint(t + 1, t + 3, &bits)) || b - p < 16) return NULL;
    /* 1a 08 08 r 10 w 18 i, then 20 b 22 02 08 t 2a n: the flags masked to their low
       bit's neighbours (0 or 1 pass), n checked against the element's end */
    if ((frames__le64(p) & 0xfefffefffeffffffull) != 0x001800100008081aull ||
        (frames__le64(p + 8) & 0x00fffefffffffeffull) != 0x002a000802220020ull ||
        (size_t)p[15] != (size_t)(b - p) - 16)
        return NULL;
    op->len = p[15];
    op->value = op->len ? p + 16 : NULL;
    if (op->kind == FRAMES__REPLAY_OP_MEM) {   /* bit_length is a zigzagged sint32 */
        int64_t sb = (int64_t)(bits >> 1) ^ -(int64_t)(bits & 1);
        op->size = op->len ? op->len : sb > 0 ? ((uint64_t)sb + 7) / 8 : 1;
    }
    return b;
}

/* Room for n + 1 operands in b->ops: 0, or -1 when out of memory. */
static FRAMES__UNUSED int frames__replay_view_room(frames__replay_builder *b, size_t n) {
    return n < b->capops ? 0 : FRAMES__GROW(b->ops, b->capops, n + 1, b->actx);
}

/* An operand list [p, end) appended to b->ops: 1, 0 for bytes of another shape, -1 when
   out of memory. */
static FRAMES__UNUSED int frames__replay_view_list(frames_replay_regs *m, frames__replay_builder *b,
                                                   const uint8_t *p, const uint8_t *end, frames__replay_view *v) {
    frames__replay_op *ops;
    /* an element this reader takes has 24 bytes at least */
    if (frames__replay_view_room(b, b->opbase + v->n + (size_t)(end - p) / 24) < 0) return -1;
    ops = b->ops + b->opbase;
    while (p < end) {
        if (!(p = frames__replay_view_op(m, p, end, &ops[v->n]))) return 0;
        v->n++;
    }
    return 1;
}

/* The record's payload [p, p + len) read as a std_frame in writers' layout (`0a len`
   frame.std_frame spanning it; address, thread, rawbytes, pre list, then maybe the post
   list and mode): 1, 0 when the decoder must read it, -1 when out of memory. */
static FRAMES__UNUSED int frames__replay_view_raw(frames_replay_regs *m, frames__replay_builder *b,
                                                  const uint8_t *p, size_t len, frames__replay_view *v) {
    const uint8_t *end = p + len, *q, *stop;
    int rc;
    v->n = 0;
    v->first = b->opbase;
    v->decoded = 0;
    if (!(p = frames__replay_field(p, end, 0x0a, &stop)) || stop != end) return 0;
    if (p >= end || *p != 0x08 || !(p = frames__fast_varint(p + 1, end, &v->address)) ||
        p >= end || *p != 0x10 || !(p = frames__fast_varint(p + 1, end, &v->thread)) ||
        !(q = frames__replay_field(p, end, 0x1a, &stop)))
        return 0;
    v->raw = q;
    v->nraw = (size_t)(stop - q);
    if (!(q = frames__replay_field(stop, end, 0x22, &stop))) return 0;
    if ((rc = frames__replay_view_list(m, b, q, stop, v)) <= 0) return rc;
    v->npre = v->n;
    p = stop;
    if (p < end && *p == 0x2a) {
        if (!(q = frames__replay_field(p, end, 0x2a, &stop))) return 0;
        if ((rc = frames__replay_view_list(m, b, q, stop, v)) <= 0) return rc;
        p = stop;
    }
    if (p < end && *p == 0x32 && !frames__replay_field(p, end, 0x32, &p)) return 0;
    return p == end;
}

/* Templates: an instruction that runs again is mostly recorded in the same bytes (the
   same pc, thread, instruction bytes, register names, operand shapes), only the values
   and memory addresses differ. A record read by frames__replay_view_raw is kept with
   its view as a template, in a direct-mapped table by its first 16 bytes; a later record
   of the same length whose bytes equal the template's everywhere but in the values and
   the address varints (each still a varint of the same length) reads as the template's
   view with its own values and addresses: frames__replay_view_raw would read it so, as
   every byte it looks at is the same or a value it does not look into. */
#define FRAMES__REPLAY_TPLS_LOG2 11   /* 2,048 templates, 2 MB: with 512 the .zst build took 3% longer */
#define FRAMES__REPLAY_TPLS (1u << FRAMES__REPLAY_TPLS_LOG2)
#define FRAMES__REPLAY_TPL_BYTES 256u
#define FRAMES__REPLAY_TPL_OPS 8u
typedef struct frames__replay_tpl {
    uint64_t address, thread;
    uint32_t len, n, npre, nraw, rawoff;
    uint16_t voff[FRAMES__REPLAY_TPL_OPS], aoff[FRAMES__REPLAY_TPL_OPS];
    uint8_t alen[FRAMES__REPLAY_TPL_OPS];
    frames__replay_op ops[FRAMES__REPLAY_TPL_OPS];
    uint8_t bytes[FRAMES__REPLAY_TPL_BYTES], mask[FRAMES__REPLAY_TPL_BYTES];   /* mask 0: varies */
} frames__replay_tpl;

FRAMES__INLINE frames__replay_tpl *frames__replay_tpl_slot(const frames__replay_builder *b, const uint8_t *p, size_t len) {
    return &b->tpl[frames__shape_slot(p, len, FRAMES__REPLAY_TPLS_LOG2)];
}

/* Keep the view v just read from [p, p + len) as its template (if it fits one). */
static FRAMES__UNUSED void frames__replay_tpl_keep(frames__replay_builder *b, const uint8_t *p, size_t len,
                                                   const frames__replay_view *v) {
    frames__replay_tpl *t;
    size_t k;
    if (len < FRAMES__SHAPE_MIN || len > FRAMES__REPLAY_TPL_BYTES || v->n > FRAMES__REPLAY_TPL_OPS) return;
    if (!b->tpl && !(b->tpl = (frames__replay_tpl *)frames__zalloc(FRAMES__REPLAY_TPLS * sizeof *b->tpl, b->actx)))
        return;
    t = frames__replay_tpl_slot(b, p, len);
    t->len = 0;   /* unusable while it is filled */
    memcpy(t->bytes, p, len);
    memset(t->mask, 0xFF, len);
    for (k = 0; k < v->n; k++) {
        const frames__replay_op *op = &b->ops[v->first + k];
        t->ops[k] = *op;
        t->voff[k] = (uint16_t)(op->value ? op->value - p : 0);
        if (op->value) memset(t->mask + t->voff[k], 0, op->len);
        if (op->kind == FRAMES__REPLAY_OP_MEM) {
            const uint8_t *q = op->at;
            while (*q & 0x80) q++;
            t->aoff[k] = (uint16_t)(op->at - p);
            t->alen[k] = (uint8_t)(q + 1 - op->at);
            memset(t->mask + t->aoff[k], 0, t->alen[k]);
        }
    }
    t->address = v->address;
    t->thread = v->thread;
    t->n = (uint32_t)v->n;
    t->npre = (uint32_t)v->npre;
    t->nraw = (uint32_t)v->nraw;
    t->rawoff = (uint32_t)(v->raw - p);
    t->len = (uint32_t)len;
}

/* The record [p, p + len) read through its template: 1, 0 when it has none (or differs
   from it), -1 when out of memory. */
static FRAMES__UNUSED int frames__replay_tpl_view(frames__replay_builder *b, const uint8_t *p, size_t len,
                                                  frames__replay_view *v) {
    const frames__replay_tpl *t;
    size_t k;
    frames__replay_op *ops;
    if (!b->tpl || len < FRAMES__SHAPE_MIN || len > FRAMES__REPLAY_TPL_BYTES) return 0;
    t = frames__replay_tpl_slot(b, p, len);
    if (t->len != len || !frames__masked_equal(p, t->bytes, t->mask, len)) return 0;
    if (frames__replay_view_room(b, b->opbase + t->n) < 0) return -1;
    ops = b->ops + b->opbase;
    for (k = 0; k < t->n; k++) {
        ops[k] = t->ops[k];
        if (ops[k].value) ops[k].value = p + t->voff[k];
        if (ops[k].kind == FRAMES__REPLAY_OP_MEM) {   /* a varint of the same length */
            if (!frames__varint_of_len(p + t->aoff[k], t->alen[k], &ops[k].address)) return 0;
            ops[k].at = p + t->aoff[k];
        }
    }
    v->address = t->address;
    v->thread = t->thread;
    v->raw = p + t->rawoff;
    v->nraw = t->nraw;
    v->n = t->n;
    v->npre = t->npre;
    v->first = b->opbase;
    v->decoded = 0;
    return 1;
}

/* A decoded std_frame as the view: 0, or -1 when out of memory. */
static FRAMES__UNUSED int frames__replay_view_decoded(frames_replay_regs *m, frames__replay_builder *b,
                                                      const frames_std_frame *s, frames__replay_view *v) {
    uint32_t i;
    v->address = s->address;
    v->thread = s->thread_id;
    v->raw = s->rawbytes.ptr;
    v->nraw = s->rawbytes.len;
    v->n = 0;
    v->first = b->opbase;
    v->decoded = 1;
    for (i = 0; i < s->npre + s->npost; i++) {
        if (frames__replay_view_room(b, b->opbase + v->n) < 0) return -1;
        frames__replay_op_of(m, i < s->npre ? &s->pre[i] : &s->post[i - s->npre], &b->ops[b->opbase + v->n++]);
    }
    v->npre = s->npre;
    return 0;
}

/* --------------------------------------------------------------------------------------
   Index: file format, writing and reading
   All integers little-endian. A 160-byte header, then the sections in this order:
     threads    nthreads x u64 thread id (order of first appearance)
     blocks     nblocks x {u64 first frame, u64 write mask, u64 read mask}
     keys       nkeys x u64 offset into key data
     key data   per keyframe: u32 nfiles, then per file: u32 thread ordinal, the known
                bitmap (file_bytes / 8 rounded up), the known bytes' values in order
     lines      nlines x {u64 line (address >> 6), u64 offset into line data,
                u32 bytes, u32 entries}, sorted by line
     line data  per line: entries, varints of (block delta << 11 | word mask << 3 | kinds)
   Header: "FRIDX\0\1\n", u32 version (3: the trace's hashes are FNV-1a,
   frames__hash_bytes; 2 hashed case-folded bytes; an index of another version is
   rebuilt), u32 header bytes (160), u64 trace size, u64 mtime seconds, u64 mtime nanoseconds, u64 hash of the first 64 KiB, u64 hash of
   the last 64 KiB, u64 instructions, u64 frames, u32 arch, u32 block log2, u64 machine,
   u32 blocks per keyframe, u32 nthreads, u64 nblocks, u64 nkeys, u64 nlines,
   u64 key data bytes, u64 line data bytes, u64 operands with values, u32 file bytes,
   u32 registers, u64 flags (1: the trace is cut).
   -------------------------------------------------------------------------------------- */

#define FRAMES__REPLAY_HDR 160u
#define FRAMES__REPLAY_VERSION 3u
static const uint8_t frames__replay_magic[8] = {'F', 'R', 'I', 'D', 'X', 0, 1, '\n'};

typedef struct frames__replay_stamp {
    uint64_t size, sec, nsec, head, tail;
    int regular;                 /* a regular file: a plain trace is read from memory */
} frames__replay_stamp;

struct frames_replay {
    void *actx;
    frames_replay_options o;
    char *trace_path, *index_path;
    frames_reader *reader;
    frames_replay_regs *regs;      /* the state at the position (base: without the overlay) */
    frames__replay_file *cur;      /* overlay of the instruction at the position: its thread's
                                      file with the pre-list applied */
    uint8_t *cur_mem;              /* storage of cur */
    frames__replay_file curfile;
    frames_replay_insn insn;       /* at the position */
    int have_insn;
    uint64_t pos;
    frames__replay_stamp stamp;
    /* the index */
    uint8_t *ix;                   /* whole index file (or the built one) */
    size_t ixlen;
    uint64_t instructions, frames, values, nblocks, nkeys, nlines;
    uint32_t nthreads, file_bytes, nregs, arch, truncated;
    uint64_t machine;
    const uint8_t *threads, *blocks, *keys, *keydata, *linedir, *linedata;
    uint64_t keydata_len, linedata_len;
    int built, stored;
    uint32_t segments;             /* joined by the build (0: read) */
    /* scratch for line entries */
    uint64_t *eblock;
    uint8_t *ekinds, *emask;
    size_t ecap;
};

/* ...x8 little-endian helpers on the index image */
static FRAMES__UNUSED uint64_t frames__replay_u64(const uint8_t *p) { return frames__le64(p); }
static FRAMES__UNUSED uint32_t frames__replay_u32(const uint8_t *p) { return frames__le32(p); }

#ifdef FRAMES__REPLAY_FILES

/* Size, mtime and hashes of the first and last 64 KiB of the trace file. */
static FRAMES__UNUSED int frames__replay_stamp_of(const char *path, frames__replay_stamp *st, frames_error *err) {
    struct stat sb;
    FILE *f;
    uint8_t *buf;
    size_t n, want = 65536;
    memset(st, 0, sizeof *st);
    if (stat(path, &sb) != 0)
        return frames__fail(err, FRAMES_E_IO, FRAMES_NO_POS, FRAMES_NO_POS, "%s: %s", path, frames__syserr());
    st->size = (uint64_t)sb.st_size;
    st->regular = S_ISREG(sb.st_mode) ? 1 : 0;
    st->sec = (uint64_t)sb.st_mtime;
#if defined(__GLIBC__) && defined(st_mtime)   /* glibc's st_mtime is st_mtim.tv_sec then */
    st->nsec = (uint64_t)sb.st_mtim.tv_nsec;
#endif
    f = fopen(path, "rb");
    if (!f) return frames__fail(err, FRAMES_E_IO, FRAMES_NO_POS, FRAMES_NO_POS, "%s: %s", path, frames__syserr());
    buf = (uint8_t *)malloc(want);
    if (!buf) { fclose(f); return frames__fail(err, FRAMES_E_NOMEM, FRAMES_NO_POS, FRAMES_NO_POS, "out of memory"); }
    n = fread(buf, 1, want, f);
    st->head = frames__hash_bytes(FRAMES__HASH_SEED, buf, n);
    if (st->size > want && fseek(f, -(long)want, SEEK_END) == 0) {
        n = fread(buf, 1, want, f);
        st->tail = frames__hash_bytes(FRAMES__HASH_SEED, buf, n);
    } else {
        st->tail = st->head;
    }
    free(buf);
    fclose(f);
    return FRAMES_OK;
}

#endif /* FRAMES__REPLAY_FILES */

static FRAMES__UNUSED int frames__replay_bad(frames_replay *r, frames_error *err, const char *what) {
    return frames__fail(err, FRAMES_E_REPLAY_INDEX, FRAMES_NO_POS, FRAMES_NO_POS,
                        "%s: malformed index (%s): delete it to rebuild", r->index_path, what);
}

/* Point the section pointers into r->ix and check every count against the file size. */
static FRAMES__UNUSED int frames__replay_parse(frames_replay *r, frames_error *err) {
    const uint8_t *h = r->ix;
    uint64_t need, nb, nk, i, prev = 0;
    if (r->ixlen < FRAMES__REPLAY_HDR || memcmp(h, frames__replay_magic, 8))
        return frames__replay_bad(r, err, "not an index file");
    if (frames__replay_u32(h + 8) != FRAMES__REPLAY_VERSION || frames__replay_u32(h + 12) != FRAMES__REPLAY_HDR)
        return frames__replay_bad(r, err, "unknown version");
    r->instructions = frames__replay_u64(h + 56);
    r->frames = frames__replay_u64(h + 64);
    r->arch = frames__replay_u32(h + 72);
    r->machine = frames__replay_u64(h + 80);
    r->nthreads = frames__replay_u32(h + 92);
    r->nblocks = frames__replay_u64(h + 96);
    r->nkeys = frames__replay_u64(h + 104);
    r->nlines = frames__replay_u64(h + 112);
    r->keydata_len = frames__replay_u64(h + 120);
    r->linedata_len = frames__replay_u64(h + 128);
    r->values = frames__replay_u64(h + 136);
    r->file_bytes = frames__replay_u32(h + 144);
    r->nregs = frames__replay_u32(h + 148);
    r->truncated = (uint32_t)(frames__replay_u64(h + 152) & 1);
    if (frames__replay_u32(h + 76) != FRAMES__REPLAY_BLOCK_LOG2 ||
        frames__replay_u32(h + 88) != FRAMES__REPLAY_KEY_BLOCKS)
        return frames__replay_bad(r, err, "block sizes");
    nb = (r->instructions + FRAMES__REPLAY_BLOCK - 1) >> FRAMES__REPLAY_BLOCK_LOG2;
    nk = (nb + FRAMES__REPLAY_KEY_BLOCKS - 1) / FRAMES__REPLAY_KEY_BLOCKS;
    if (r->instructions > r->frames || r->nblocks != nb || r->nkeys != nk)
        return frames__replay_bad(r, err, "counts");
    if (r->nthreads > r->o.max_threads) return frames__replay_bad(r, err, "threads");
    /* every count is bounded by the file size before it is multiplied */
    if (r->nblocks > r->ixlen / 24 || r->nkeys > r->ixlen / 8 || r->nlines > r->ixlen / 24 ||
        r->keydata_len > r->ixlen || r->linedata_len > r->ixlen)
        return frames__replay_bad(r, err, "sizes");
    need = FRAMES__REPLAY_HDR + 8ull * r->nthreads + 24 * r->nblocks + 8 * r->nkeys + r->keydata_len +
           24 * r->nlines + r->linedata_len;
    if (need != r->ixlen) return frames__replay_bad(r, err, "size does not add up");
    {
        const frames__replay_archdef *d = frames__replay_arch_of(r->arch, r->machine);
        if (r->nregs != d->nregs || r->file_bytes != r->regs->file_bytes)
            return frames__replay_bad(r, err, "register table");
    }
    r->threads = h + FRAMES__REPLAY_HDR;
    r->blocks = r->threads + 8ull * r->nthreads;
    r->keys = r->blocks + 24 * r->nblocks;
    r->keydata = r->keys + 8 * r->nkeys;
    r->linedir = r->keydata + r->keydata_len;
    r->linedata = r->linedir + 24 * r->nlines;
    for (i = 0; i < r->nblocks; i++) {
        uint64_t fr = frames__replay_u64(r->blocks + 24 * i);
        if (fr >= r->frames || (i && fr <= prev)) return frames__replay_bad(r, err, "block frames");
        prev = fr;
    }
    for (i = 0; i < r->nkeys; i++)
        if (frames__replay_u64(r->keys + 8 * i) >= r->keydata_len) return frames__replay_bad(r, err, "keyframe offsets");
    for (i = 0; i < r->nlines; i++) {
        const uint8_t *e = r->linedir + 24 * i;
        uint64_t line = frames__replay_u64(e), off = frames__replay_u64(e + 8);
        uint32_t bytes = frames__replay_u32(e + 16), ents = frames__replay_u32(e + 20);
        if ((i && line <= prev) || off > r->linedata_len || bytes > r->linedata_len - off ||
            ents > bytes || !ents)
            return frames__replay_bad(r, err, "line directory");
        prev = line;
    }
    return FRAMES_OK;
}

/* --------------------------------------------------------------------------------------
   Replay: open, goto, state
   -------------------------------------------------------------------------------------- */

FRAMES_REPLAY_DEF void frames_replay_options_default(frames_replay_options *o) {
    memset(o, 0, sizeof *o);
    frames_limits_default(&o->limits);
    o->build_index = 1;
    o->write_index = 1;
    o->max_index_bytes = 4ull << 30;
    o->max_threads = 65536;
    o->max_walk_blocks = 4096;
}

/* Reset every thread's file to unknown (no thread forgotten: files stay in order). */
static FRAMES__UNUSED void frames__replay_regs_clear(frames_replay_regs *m) {
    size_t i;
    for (i = 0; i < m->nfiles; i++) memset(m->files[i].val, 0, 2 * (size_t)m->file_bytes);
}

/* Load keyframe k into r->regs. */
static FRAMES__UNUSED int frames__replay_load_key(frames_replay *r, uint64_t k, frames_error *err) {
    const uint8_t *p, *end = r->keydata + r->keydata_len;
    uint32_t nf, i, j, bm = (r->file_bytes + 7) / 8;
    frames__replay_regs_clear(r->regs);
    p = r->keydata + frames__replay_u64(r->keys + 8 * k);
    if (end - p < 4) return frames__replay_bad(r, err, "keyframe");
    nf = frames__replay_u32(p);
    p += 4;
    if (nf > r->nthreads) return frames__replay_bad(r, err, "keyframe threads");
    for (i = 0; i < nf; i++) {
        frames__replay_file *f;
        uint32_t ord;
        const uint8_t *bits;
        if ((size_t)(end - p) < 4 + (size_t)bm) return frames__replay_bad(r, err, "keyframe");
        ord = frames__replay_u32(p);
        if (ord >= r->nthreads) return frames__replay_bad(r, err, "keyframe thread");
        f = frames__replay_file_of(r->regs, frames__replay_u64(r->threads + 8ull * ord), 1);
        if (!f) return frames__fail(err, FRAMES_E_NOMEM, FRAMES_NO_POS, FRAMES_NO_POS, "out of memory");
        bits = p + 4;
        p += 4 + bm;
        for (j = 0; j < r->file_bytes; j++) {
            if (!(bits[j >> 3] & (1u << (j & 7)))) continue;
            if (p >= end) return frames__replay_bad(r, err, "keyframe values");
            f->val[j] = *p++;
            f->known[j] = 1;
        }
    }
    return FRAMES_OK;
}

/* Append r->regs as a keyframe to buf. */
static FRAMES__UNUSED int frames__replay_put_key(frames_replay_regs *m, uint8_t **buf, size_t *len, size_t *cap,
                                  void *actx) {
    uint32_t bm = (m->file_bytes + 7) / 8, i, j, nk;
    size_t need = 4;
    for (i = 0; i < m->nfiles; i++) need += 4 + bm + m->file_bytes;
    if (frames__grow((void **)buf, cap, *len + need, 1, actx) < 0) return -1;
    frames__put_le32(*buf + *len, (uint32_t)m->nfiles);
    *len += 4;
    for (i = 0; i < m->nfiles; i++) {
        uint8_t *bits, *v;
        frames__put_le32(*buf + *len, i);
        bits = *buf + *len + 4;
        memset(bits, 0, bm);
        v = bits + bm;
        for (j = nk = 0; j < m->file_bytes; j++) {
            if (!m->files[i].known[j]) continue;
            bits[j >> 3] = (uint8_t)(bits[j >> 3] | (1u << (j & 7)));
            v[nk++] = m->files[i].val[j];
        }
        *len += 4 + bm + nk;
    }
    return 0;
}


static FRAMES__UNUSED void frames__replay_reader_options(const frames_replay *r, frames_reader_options *ro) {
    frames_reader_options_default(ro);
    ro->limits = r->o.limits;
    ro->alloc_ctx = r->actx;
}

static FRAMES__UNUSED int frames__replay_open_reader(frames_replay *r, frames_reader **out, frames_error *err) {
    frames_reader_options ro;
    frames__replay_reader_options(r, &ro);
#ifdef FRAMES__REPLAY_ZSTD
    return frames_zstd_reader_open_path(out, r->trace_path, &ro, NULL, NULL, err);
#else
    return frames_reader_open_path(out, r->trace_path, &ro, err);
#endif
}

#ifdef FRAMES__REPLAY_THREADS
/* A second reader of the trace r->reader holds in memory, over the same bytes: a second
   mapping would fault every page in again (and unmapping it takes time too). */
static FRAMES__UNUSED int frames__replay_open_second(frames_replay *r, frames_reader **out, frames_error *err) {
    frames_reader_options ro;
    size_t size;
    const uint8_t *mem = frames_reader_memory(r->reader, &size);
    if (!mem) return frames__replay_open_reader(r, out, err);
    frames__replay_reader_options(r, &ro);
    return frames_reader_open_memory(out, mem, size, &ro, err);
}
#endif

/* What the build pass's steps return when the index would take more than its budget or
   memory is out (errors are negative). */
#define FRAMES__REPLAY_NOROOM 2
/* The pass stopped before a record it was told to stop at (it is kept in acc.raw). */
#define FRAMES__REPLAY_HELD 3

/* What the build pass gathers besides the line table (frames__replay_builder), for the
   whole trace or for one segment of it. */
typedef struct frames__replay_acc {
    frames_reader *rd;           /* the records */
    frames_replay_regs *m;       /* the register files */
    frames__replay_block *blocks;
    uint64_t *keyoffs;
    uint8_t *keydata;
    size_t nblk, capblk, nkeys, capkeys, keylen, keycap;
    uint64_t insn, nframes;
    frames__replay_file *file;   /* the register file of thread tid */
    uint64_t tid;
    frames_raw raw;              /* the record read and not indexed yet (held) */
    int held, progress;          /* progress: call r->o.progress (the caller's thread) */
} frames__replay_acc;

static FRAMES__UNUSED void frames__replay_acc_free(frames__replay_acc *a, void *actx) {
    FRAMES_FREE(a->keydata, actx);
    FRAMES_FREE(a->keyoffs, actx);
    FRAMES_FREE(a->blocks, actx);
}

/* Index one instruction: its view v, ops its operands. FRAMES_OK, FRAMES__REPLAY_NOROOM,
   or an error (err set). */
static FRAMES__UNUSED int frames__replay_index_insn(frames_replay *r, frames__replay_builder *b,
                                                    frames__replay_acc *a, const frames__replay_view *v,
                                                    const frames__replay_op *ops, frames_error *err) {
    frames_replay_regs *m = a->m;
    uint64_t blk = a->insn >> FRAMES__REPLAY_BLOCK_LOG2;
    frames__replay_block *bl;
    size_t k;
    if ((a->insn & (FRAMES__REPLAY_BLOCK - 1)) == 0) {
        if ((blk % FRAMES__REPLAY_KEY_BLOCKS) == 0) {
            if (FRAMES__GROW(a->keyoffs, a->capkeys, a->nkeys + 1, r->actx) < 0)
                return FRAMES__REPLAY_NOROOM;
            a->keyoffs[a->nkeys++] = a->keylen;
            if (frames__replay_put_key(m, &a->keydata, &a->keylen, &a->keycap, r->actx) < 0 ||
                a->keylen > r->o.max_index_bytes)
                return FRAMES__REPLAY_NOROOM;
        }
        if (FRAMES__GROW(a->blocks, a->capblk, a->nblk + 1, r->actx) < 0) return FRAMES__REPLAY_NOROOM;
        a->blocks[a->nblk].frame = v->index;
        a->blocks[a->nblk].wmask = a->blocks[a->nblk].rmask = 0;
        a->nblk++;
    }
    bl = &a->blocks[a->nblk - 1];
    /* files move only when a thread is added, which a change of thread precedes */
    if (!a->file || v->thread != a->tid) a->file = frames__replay_file_of(m, a->tid = v->thread, 1);
    if (!a->file)
        return frames__fail(err, FRAMES_E_LIMIT, v->offset, v->index, "more than %u threads",
                            (unsigned)m->max_threads);
    frames__replay_apply_ops(m, a->file, ops, v->npre, 0, v->raw, v->nraw, &bl->rmask);
    frames__replay_apply_ops(m, a->file, ops + v->npre, v->n - v->npre, 1, v->raw, v->nraw, &bl->wmask);
    frames__replay_file_pc_unknown(m, a->file);
    if (frames__replay_note_fast(b, blk, v->address, v->nraw ? v->nraw : 1, FRAMES__REPLAY_X) < 0)
        return FRAMES__REPLAY_NOROOM;
    for (k = 0; k < v->n; k++) {
        const frames__replay_op *op = &ops[k];
        if (op->kind != FRAMES__REPLAY_OP_MEM) continue;
        if (op->value) m->values++;
        if (frames__replay_note_fast(b, blk, op->address, op->size,
                                     k >= v->npre ? FRAMES__REPLAY_W : FRAMES__REPLAY_R) < 0)
            return FRAMES__REPLAY_NOROOM;
    }
    a->insn++;
    if (a->progress && r->o.progress && (a->insn & 0xFFFFF) == 0) r->o.progress(r->o.progress_ctx, v->offset, 0);
    if (b->used + (uint64_t)b->lines.cap * sizeof(frames__replay_bline) > r->o.max_index_bytes)
        return FRAMES__REPLAY_NOROOM;
    return FRAMES_OK;
}

/* The record a->raw as a view, its operands at b->ops + b->opbase: 1 for a std_frame,
   0 for a record that is not one or does not decode (skipped), FRAMES__REPLAY_NOROOM, or
   an error (err set). */
static FRAMES__UNUSED int frames__replay_view_of(frames__replay_builder *b, frames__replay_acc *a,
                                                 frames__replay_view *v, frames_error *err) {
    frames_frame f;
    int got;
    v->index = a->raw.index;
    v->offset = a->raw.offset;
    if ((got = frames__replay_tpl_view(b, a->raw.payload.ptr, a->raw.payload.len, v)) != 0)
        return got < 0 ? FRAMES__REPLAY_NOROOM : 1;
    if ((got = frames__replay_view_raw(a->m, b, a->raw.payload.ptr, a->raw.payload.len, v)) != 0) {
        if (got > 0) frames__replay_tpl_keep(b, a->raw.payload.ptr, a->raw.payload.len, v);
        return got < 0 ? FRAMES__REPLAY_NOROOM : 1;
    }
    got = frames_reader_decode(a->rd, &a->raw, &f);
    if (got == FRAMES_E_DECODE) return 0;   /* skip a bad frame, keep counting */
    if (got < 0) {
        if (err) *err = *frames_reader_error(a->rd);
        return got;
    }
    if (f.kind != FRAMES_KIND_STD) return 0;
    return frames__replay_view_decoded(a->m, b, &f.std, v) < 0 ? FRAMES__REPLAY_NOROOM : 1;
}

/* The next record into a->raw (counted in a->nframes): 1, 0 at the end, or an error. */
static FRAMES__UNUSED int frames__replay_read(frames__replay_acc *a, frames_error *err) {
    int got = frames_reader_next_raw(a->rd, &a->raw);
    if (got < 0 && err) *err = *frames_reader_error(a->rd);
    if (got > 0) a->nframes++;
    return got;
}

/* Index records up to the end (0), or up to the first one at a file offset >= stop_off or
   a frame index >= stop_index (FRAMES__REPLAY_HELD: that record is kept in a->raw, not
   indexed); FRAMES__REPLAY_NOROOM or an error (err set). */
static FRAMES__UNUSED int frames__replay_index_run(frames_replay *r, frames__replay_builder *b,
                                                   frames__replay_acc *a, uint64_t stop_off,
                                                   uint64_t stop_index, frames_error *err) {
    frames__replay_view v;
    int got;
    for (;;) {
        if (!a->held && (got = frames__replay_read(a, err)) <= 0) return got;
        a->held = 1;
        if (a->raw.offset >= stop_off || a->raw.index >= stop_index) return FRAMES__REPLAY_HELD;
        a->held = 0;
        if ((got = frames__replay_view_of(b, a, &v, err)) == 0) continue;
        if (got != 1) return got;
        if ((got = frames__replay_index_insn(r, b, a, &v, b->ops + v.first, err)) != FRAMES_OK) return got;
    }
}

/* Commit every access and flush every line's pending entry (the pass ends): 0, -1. */
static FRAMES__UNUSED int frames__replay_finish_lines(frames__replay_builder *b) {
    size_t i;
    if (frames__replay_commit_all(b) < 0) return -1;
    for (i = 0; i < b->lines.cap; i++) {
        frames__replay_bline *l = (frames__replay_bline *)frames__htab_at(&b->lines, i);
        if (l && frames__replay_bline_flush(b, l) < 0) return -1;
    }
    return 0;
}

static FRAMES__UNUSED void frames__replay_builder_init(frames_replay *r, frames__replay_builder *b) {
    memset(b, 0, sizeof *b);
    b->actx = r->actx;
    b->budget = r->o.max_index_bytes;
    /* at most the budget in slots: the table has at most 4 * max of them */
    FRAMES__HTAB_INIT(&b->lines, frames__replay_bline,
                      (size_t)(b->budget / (4 * sizeof(frames__replay_bline)) + 1));
}

/* The first entry's varint of a line's chain (it fits its first chunk): its value and
   bytes. */
static FRAMES__UNUSED unsigned frames__replay_first_entry(const frames__replay_builder *b,
                                                          const frames__replay_bline *l, uint64_t *v) {
    const frames__replay_chunk *c = &b->chunks[l->head - 1];
    unsigned n = 0;
    *v = 0;
    while (n < c->used) {
        *v |= (uint64_t)(c->data[n] & 0x7F) << (7 * n);
        if (!(c->data[n++] & 0x80)) break;
    }
    return n;
}

/* A line of the index being laid out: its entries from the first segment (l1) then the
   second (l2, whose first entry's block delta is from block 0 and is written again as
   the delta from l1's last block). */
typedef struct frames__replay_oline {
    const frames__replay_bline *l1, *l2;
    uint64_t line;
} frames__replay_oline;

/* Copy the chain of l from byte skip on to dst (NULL: count only, from l->bytes: the
   first pass of the layout walks no chain); the entries copied added to *ents. Bytes. */
static FRAMES__UNUSED uint64_t frames__replay_put_chain(const frames__replay_builder *b, const frames__replay_bline *l,
                                                        unsigned skip, uint8_t *dst, uint32_t *ents) {
    uint32_t c = l->head, e = 0;
    uint64_t n = 0;
    size_t j;
    if (!dst) return l->bytes - skip;
    while (c) {
        const frames__replay_chunk *ch = &b->chunks[c - 1];
        memcpy(dst + n, ch->data + skip, ch->used - skip);
        for (j = 0; j < ch->used - skip; j++) e += !(dst[n + j] & 0x80);   /* an entry's last byte */
        n += ch->used - skip;
        skip = 0;
        c = ch->next;
    }
    *ents += e;
    return n;
}

/* Line ol's bytes written to dst (NULL: counted only, *ents then not): bytes; *ents its
   entries. */
static FRAMES__UNUSED uint64_t frames__replay_put_oline(const frames__replay_builder *b1, const frames__replay_builder *b2,
                                                        const frames__replay_oline *ol, uint8_t *dst, uint32_t *ents) {
    uint64_t n = 0, v;
    uint8_t enc[10];
    unsigned skip, k = 0;
    *ents = 0;
    if (ol->l1) n = frames__replay_put_chain(b1, ol->l1, 0, dst, ents);
    if (!ol->l2) return n;
    skip = frames__replay_first_entry(b2, ol->l2, &v);
    if (ol->l1) v -= ol->l1->last << 11;
    while (v >= 0x80) { enc[k++] = (uint8_t)(v | 0x80); v >>= 7; }
    enc[k++] = (uint8_t)v;
    if (dst) memcpy(dst + n, enc, k);
    ++*ents;
    n += k;
    return n + frames__replay_put_chain(b2, ol->l2, skip, dst ? dst + n : NULL, ents);
}

/* Sort lines by address (shell sort: no recursion, no allocation). */
static FRAMES__UNUSED void frames__replay_sort_olines(frames__replay_oline *o, size_t n) {
    size_t gap, a, c;
    for (gap = n / 2; gap > 0; gap /= 2)
        for (a = gap; a < n; a++) {
            frames__replay_oline t = o[a];
            for (c = a; c >= gap && o[c - gap].line > t.line; c -= gap) o[c] = o[c - gap];
            o[c] = t;
        }
}

/* The lines of b1 (and b2: NULL for one segment) in address order into *out: how many,
   or (size_t)-1 when out of memory. */
static FRAMES__UNUSED size_t frames__replay_olines(frames_replay *r, const frames__replay_builder *b1,
                                                   const frames__replay_builder *b2, frames__replay_oline **out) {
    size_t n = 0, n1, i, cap = b1->lines.len + (b2 ? b2->lines.len : 0);
    frames__replay_oline *o = (frames__replay_oline *)FRAMES_MALLOC((cap ? cap : 1) * sizeof *o, r->actx);
    *out = o;
    if (!o) return (size_t)-1;
    for (i = 0; i < b1->lines.cap; i++) {
        const frames__replay_bline *l = (const frames__replay_bline *)frames__htab_at(&b1->lines, i);
        if (l) { o[n].l1 = l; o[n].l2 = NULL; o[n++].line = l->line; }
    }
    frames__replay_sort_olines(o, n);
    if (!b2) return n;
    n1 = n;
    for (i = 0; i < b2->lines.cap; i++) {
        const frames__replay_bline *l = (const frames__replay_bline *)frames__htab_at(&b2->lines, i);
        size_t lo = 0, hi = n1;
        if (!l) continue;
        while (lo < hi) {   /* the first segment's entry for the line, if any */
            size_t mid = lo + (hi - lo) / 2;
            if (o[mid].line < l->line) lo = mid + 1;
            else hi = mid;
        }
        if (lo < n1 && o[lo].line == l->line) o[lo].l2 = l;
        else { o[n].l1 = NULL; o[n].l2 = l; o[n++].line = l->line; }
    }
    frames__replay_sort_olines(o, n);
    return n;
}

/* Lay the index out into r->ix from what the pass gathered (b2: the second segment's
   lines, NULL for none): FRAMES_OK, or FRAMES__REPLAY_NOROOM. */
static FRAMES__UNUSED int frames__replay_layout(frames_replay *r, const frames__replay_acc *a,
                                                const frames__replay_builder *b1,
                                                const frames__replay_builder *b2, int cut) {
    frames_replay_regs *m = a->m;
    frames__replay_oline *order = NULL;
    uint64_t linebytes = 0, doff = 0;
    size_t nl, i, o, total, dir, data;
    uint32_t ents;
    uint8_t *ix;
    if ((nl = frames__replay_olines(r, b1, b2, &order)) == (size_t)-1) return FRAMES__REPLAY_NOROOM;
    for (i = 0; i < nl; i++) linebytes += frames__replay_put_oline(b1, b2, &order[i], NULL, &ents);
    total = FRAMES__REPLAY_HDR + 8 * m->nfiles + 24 * a->nblk + 8 * a->nkeys + a->keylen + 24 * nl + (size_t)linebytes;
    if (total > r->o.max_index_bytes || !(ix = (uint8_t *)FRAMES_MALLOC(total, r->actx))) {
        FRAMES_FREE(order, r->actx);
        return FRAMES__REPLAY_NOROOM;
    }
    memset(ix, 0, FRAMES__REPLAY_HDR);
    memcpy(ix, frames__replay_magic, 8);
    frames__put_le32(ix + 8, FRAMES__REPLAY_VERSION);
    frames__put_le32(ix + 12, FRAMES__REPLAY_HDR);
    frames__put_le64(ix + 16, r->stamp.size);
    frames__put_le64(ix + 24, r->stamp.sec);
    frames__put_le64(ix + 32, r->stamp.nsec);
    frames__put_le64(ix + 40, r->stamp.head);
    frames__put_le64(ix + 48, r->stamp.tail);
    frames__put_le64(ix + 56, a->insn);
    frames__put_le64(ix + 64, a->nframes);
    frames__put_le32(ix + 72, (uint32_t)frames_reader_header(r->reader)->arch);
    frames__put_le32(ix + 76, FRAMES__REPLAY_BLOCK_LOG2);
    frames__put_le64(ix + 80, frames_reader_header(r->reader)->machine);
    frames__put_le32(ix + 88, FRAMES__REPLAY_KEY_BLOCKS);
    frames__put_le32(ix + 92, (uint32_t)m->nfiles);
    frames__put_le64(ix + 96, a->nblk);
    frames__put_le64(ix + 104, a->nkeys);
    frames__put_le64(ix + 112, nl);
    frames__put_le64(ix + 120, a->keylen);
    frames__put_le64(ix + 128, linebytes);
    frames__put_le64(ix + 136, m->values);
    frames__put_le32(ix + 144, m->file_bytes);
    frames__put_le32(ix + 148, (uint32_t)m->nregs);
    frames__put_le64(ix + 152, cut ? 1 : 0);
    o = FRAMES__REPLAY_HDR;
    for (i = 0; i < m->nfiles; i++, o += 8) frames__put_le64(ix + o, m->files[i].tid);
    for (i = 0; i < a->nblk; i++, o += 24) {
        frames__put_le64(ix + o, a->blocks[i].frame);
        frames__put_le64(ix + o + 8, a->blocks[i].wmask);
        frames__put_le64(ix + o + 16, a->blocks[i].rmask);
    }
    for (i = 0; i < a->nkeys; i++, o += 8) frames__put_le64(ix + o, a->keyoffs[i]);
    if (a->keylen) memcpy(ix + o, a->keydata, a->keylen);
    o += a->keylen;
    dir = o;
    data = o + 24 * nl;
    for (i = 0; i < nl; i++) {
        uint64_t n = frames__replay_put_oline(b1, b2, &order[i], ix + data + doff, &ents);
        frames__put_le64(ix + dir + 24 * i, order[i].line);
        frames__put_le64(ix + dir + 24 * i + 8, doff);
        frames__put_le32(ix + dir + 24 * i + 16, (uint32_t)n);
        frames__put_le32(ix + dir + 24 * i + 20, ents);
        doff += n;
    }
    FRAMES_FREE(order, r->actx);
    r->ix = ix;
    r->ixlen = total;
    return FRAMES_OK;
}

#ifdef FRAMES__REPLAY_THREADS
/* The index build in two segments (build_threads 2). The trace is cut at the first
   block boundary (an instruction index a multiple of 256) after a byte offset; a
   thread of its own indexes the second segment from an unknown register file and empty
   line histories, while the caller's thread indexes the first; then they are joined
   into the index one thread builds, byte for byte:
   - the second segment's keyframes: every byte it does not know is the first
     segment's last state (the build only ever makes register bytes known, but the pc,
     which it never knows after an instruction; threads new in the second segment get
     the ordinals after the first's);
   - blocks and keyframes are appended; a line's entries are the first segment's, then
     the second's, whose first block delta is written again from the first's last block.
   The second thread finds the boundary by counting the std_frames before it
   (frames_frame_peek_kind); the join is made only when the first segment, read to
   that frame, indexed exactly that many instructions and neither segment met an error,
   a limit or the budget (checked for the whole: see frames__replay_join_fits);
   otherwise the second segment is dropped and the caller's thread goes on alone, so the
   result never depends on the split. Only for a trace in memory (a regular file, not
   read through a source as a compressed one is): the second segment's reader reads the
   bytes the caller's reader holds (frames__replay_open_second). */
#define FRAMES__REPLAY_SPLIT_PERMILLE 580u   /* the second thread walks the first part */

/* A trace file this large is built in two segments by default (build_threads 0) when
   more than one CPU is online (a smaller one is indexed in a fraction of a second
   anyway). The index is the same either way. */
#define FRAMES__REPLAY_SPLIT_MIN (32ull << 20)

/* The threads the index build takes (build_threads): 2 only for a trace in memory. */
static FRAMES__UNUSED int frames__replay_threads(const frames_replay *r) {
    if (!r->stamp.regular || frames_reader_source(r->reader)) return 1;
    if (r->o.build_threads == 0)
        return r->stamp.size >= FRAMES__REPLAY_SPLIT_MIN && sysconf(_SC_NPROCESSORS_ONLN) > 1 ? 2 : 1;
    return r->o.build_threads >= 2 ? 2 : 1;
}

typedef struct frames__replay_seg {
    frames_replay *r;
    frames__replay_builder b;
    frames__replay_acc a;
    uint64_t from;               /* the byte offset the segment starts after */
    uint64_t first_insn;         /* instructions before its first one (counted) */
    uint64_t first_frame;        /* frame index of its first instruction */
    int rc;                      /* 0: indexed to the end; else dropped */
    frames_error err;
} frames__replay_seg;

/* Does record a->raw count as an instruction of the build (an estimate for a std_frame
   that does not decode: the join checks the count)? */
static FRAMES__UNUSED int frames__replay_is_insn(frames__replay_acc *a) {
    frames_frame f;
    int k = frames_frame_peek_kind(a->raw.payload.ptr, a->raw.payload.len);
    if (k != FRAMES_KIND_NONE) return k == FRAMES_KIND_STD;
    return frames_reader_decode(a->rd, &a->raw, &f) == FRAMES_OK && f.kind == FRAMES_KIND_STD;
}

/* The second segment's thread: walk to its first instruction, index to the end. */
static FRAMES__UNUSED int frames__replay_seg_run(void *arg, const void *job) {
    frames__replay_seg *s = (frames__replay_seg *)arg;
    frames__replay_acc *a = &s->a;
    frames__replay_view v;
    uint64_t n = 0;
    int got;
    (void)job;
    s->rc = -1;   /* 0 once indexed to the end (the worker keeps no error of its own) */
    for (;;) {
        if (frames__replay_read(a, &s->err) <= 0) return FRAMES_OK;
        if (a->raw.offset < s->from) {
            n += (uint64_t)frames__replay_is_insn(a);
            continue;
        }
        if ((got = frames__replay_view_of(&s->b, a, &v, &s->err)) == 0) continue;
        if (got != 1) return FRAMES_OK;
        if (n && (n & (FRAMES__REPLAY_BLOCK - 1)) == 0) break;   /* not instruction 0 */
        n++;
    }
    s->first_insn = a->insn = n;
    s->first_frame = a->raw.index;
    if (frames__replay_index_insn(s->r, &s->b, a, &v, s->b.ops + v.first, &s->err) != FRAMES_OK) return FRAMES_OK;
    if (frames__replay_index_run(s->r, &s->b, a, UINT64_MAX, UINT64_MAX, &s->err) != 0) return FRAMES_OK;
    if (frames__replay_finish_lines(&s->b) < 0) return FRAMES_OK;
    s->rc = 0;
    return FRAMES_OK;
}

/* Would the one-thread build have stayed within the budget (and the line table within
   its slots) where the two segments did? Its chunks are at most both segments' and its
   table holds at most both segments' lines, so at most twice their slots. */
static FRAMES__UNUSED int frames__replay_join_fits(const frames_replay *r, const frames__replay_builder *b1,
                                                   const frames__replay_builder *b2) {
    uint64_t slots = 2 * ((uint64_t)b1->lines.cap + b2->lines.cap);
    return (uint64_t)b1->lines.len + b2->lines.len < b1->lines.max &&
           b1->used + b2->used + slots * sizeof(frames__replay_bline) <= r->o.max_index_bytes;
}

/* Bits set in byte x. */
static FRAMES__UNUSED uint32_t frames__replay_bits8(uint8_t x) {
    uint32_t n = 0;
    for (; x; x = (uint8_t)(x & (x - 1))) n++;
    return n;
}

/* The keyframes of segment s appended to a, rewritten as the one-thread build makes them
   (ord: each of s's threads' ordinal in a->m, whose first n1 files are the first
   segment's last state; at: room for a->m's files; scratch: for one file): 0, or -1
   when out of memory or over the budget. */
static FRAMES__UNUSED int frames__replay_join_keys(frames_replay *r, frames__replay_acc *a, const frames__replay_seg *s,
                                                   const uint32_t *ord, uint32_t n1, const uint8_t **at,
                                                   uint8_t *scratch) {
    frames_replay_regs *m = a->m;
    uint32_t fb = m->file_bytes, bm = (fb + 7) / 8;
    uint8_t *val = scratch, *known = scratch + fb;
    size_t k;
    for (k = 0; k < s->a.nkeys; k++) {
        const uint8_t *q = s->a.keydata + s->a.keyoffs[k] + 4;
        uint32_t nf2 = frames__replay_u32(q - 4), nf = n1, i, j, g, nk;
        for (g = 0; g < m->nfiles; g++) at[g] = NULL;
        for (i = 0; i < nf2; i++) {   /* where each thread's file is in s's keyframe */
            const uint8_t *sb = q + 4;
            if (ord[i] >= n1) nf++;
            at[ord[frames__replay_u32(q)]] = q;
            for (j = nk = 0; j < bm; j++) nk += frames__replay_bits8(sb[j]);
            q += 4 + bm + nk;
        }
        if (FRAMES__GROW(a->keyoffs, a->capkeys, a->nkeys + 1, r->actx) < 0 ||
            frames__grow((void **)&a->keydata, &a->keycap, a->keylen + 4 + (size_t)nf * (4 + bm + fb), 1, r->actx) < 0)
            return -1;
        a->keyoffs[a->nkeys++] = a->keylen;
        frames__put_le32(a->keydata + a->keylen, nf);
        a->keylen += 4;
        for (g = 0; g < nf; g++) {
            uint8_t *bits = a->keydata + a->keylen + 4, *out = bits + bm;
            if (g < n1) { memcpy(val, m->files[g].val, fb); memcpy(known, m->files[g].known, fb); }
            else memset(scratch, 0, 2 * (size_t)fb);
            if (at[g]) {   /* the bytes the second segment knows, over */
                const uint8_t *sb = at[g] + 4, *sv = sb + bm;
                for (j = nk = 0; j < fb; j++)
                    if (sb[j >> 3] & (1u << (j & 7))) { val[j] = sv[nk++]; known[j] = 1; }
            }
            frames__put_le32(a->keydata + a->keylen, g);
            memset(bits, 0, bm);
            for (j = i = 0; j < fb; j++) {
                if (!known[j]) continue;
                bits[j >> 3] = (uint8_t)(bits[j >> 3] | (1u << (j & 7)));
                out[i++] = val[j];
            }
            a->keylen += 4 + bm + i;
        }
        if (a->keylen > r->o.max_index_bytes) return -1;
    }
    return 0;
}

/* Join segment s onto a (the first segment, read to s's first instruction): 0; -1 when
   the one-thread build would have gone otherwise (a untouched: it goes on alone); -2
   out of memory or over the budget. */
static FRAMES__UNUSED int frames__replay_join(frames_replay *r, frames__replay_acc *a, frames__replay_builder *b,
                                              frames__replay_seg *s) {
    frames_replay_regs *m = a->m, *m2 = s->a.m;
    uint32_t *ord = NULL, n1 = (uint32_t)m->nfiles, nnew = 0, i, j;
    uint8_t *scratch = NULL;
    const uint8_t **at = NULL;
    int rc = -2;
    if (s->rc != 0 || a->insn != s->first_insn || !frames__replay_join_fits(r, b, &s->b)) return -1;
    for (i = 0; i < m2->nfiles; i++)
        if (frames__replay_tid_find(&m->tids, m2->files[i].tid) == (size_t)-1) nnew++;
    if ((uint64_t)n1 + nnew > m->max_threads) return -1;
    ord = (uint32_t *)FRAMES_MALLOC((m2->nfiles + 1) * sizeof *ord, r->actx);
    scratch = (uint8_t *)FRAMES_MALLOC(2 * (size_t)m->file_bytes + 1, r->actx);
    at = (const uint8_t **)FRAMES_MALLOC(((size_t)n1 + nnew + 1) * sizeof *at, r->actx);
    if (!ord || !scratch || !at) goto done;
    for (i = 0; i < m2->nfiles; i++) {   /* new threads get the next ordinals, in order */
        const frames__replay_file *f = frames__replay_file_of(m, m2->files[i].tid, 1);
        if (!f) goto done;
        ord[i] = (uint32_t)(f - m->files);
    }
    if (frames__replay_join_keys(r, a, s, ord, n1, at, scratch) < 0) goto done;
    if (FRAMES__GROW(a->blocks, a->capblk, a->nblk + s->a.nblk, r->actx) < 0) goto done;
    if (s->a.nblk) memcpy(a->blocks + a->nblk, s->a.blocks, s->a.nblk * sizeof *a->blocks);
    a->nblk += s->a.nblk;
    for (i = 0; i < m2->nfiles; i++) {   /* the last state: the second segment's bytes over */
        frames__replay_file *f = &m->files[ord[i]];
        for (j = 0; j < m->file_bytes; j++)
            if (m2->files[i].known[j]) { f->val[j] = m2->files[i].val[j]; f->known[j] = 1; }
    }
    m->values += m2->values;
    a->insn = s->a.insn;
    a->nframes = s->a.nframes;
    rc = 0;
done:
    FRAMES_FREE(ord, r->actx);
    FRAMES_FREE(scratch, r->actx);
    FRAMES_FREE((void *)at, r->actx);
    return rc;
}

/* Build over two segments (see above): what frames__replay_index_run returns for the
   first segment (FRAMES__REPLAY_HELD: the caller's thread goes on alone from a->raw);
   *joined 1 when the second segment was joined (its lines are in s->b, and s->a.rd read
   the trace's end). */
static FRAMES__UNUSED int frames__replay_build_split(frames_replay *r, frames__replay_builder *b, frames__replay_acc *a,
                                                     frames__replay_seg *s, int *joined, frames_error *err) {
    const frames_header *h = frames_reader_header(r->reader);
    frames__worker th;
    int got;
    s->r = r;
    frames__replay_builder_init(r, &s->b);
    s->from = r->o.build_split ? r->o.build_split : r->stamp.size / 1000 * FRAMES__REPLAY_SPLIT_PERMILLE;
    if (frames__replay_open_second(r, &s->a.rd, &s->err) != FRAMES_OK ||
        frames_replay_regs_open(&s->a.m, (uint32_t)h->arch, h->machine, r->o.max_threads, r->actx, &s->err) != FRAMES_OK ||
        !frames__worker_start(&th, frames__replay_seg_run, s, NULL, 0, 1))
        return FRAMES__REPLAY_HELD;
    frames__worker_put(&th, NULL);
    got = frames__replay_index_run(r, b, a, s->from, UINT64_MAX, err);
    frames__worker_stop(&th);
    /* the records between the cut's offset and the second segment's first one */
    if (got == FRAMES__REPLAY_HELD && s->rc == 0) got = frames__replay_index_run(r, b, a, UINT64_MAX, s->first_frame, err);
    if (got != FRAMES__REPLAY_HELD || s->rc != 0 || a->raw.index != s->first_frame) return got;
    if (frames__replay_finish_lines(b) < 0) return FRAMES__REPLAY_NOROOM;
    if ((got = frames__replay_join(r, a, b, s)) < 0) return got == -1 ? FRAMES__REPLAY_HELD : FRAMES__REPLAY_NOROOM;
    *joined = 1;
    return 0;
}
#endif

/* Build the index in one pass over the trace into r->ix. */
static FRAMES__UNUSED int frames__replay_build(frames_replay *r, frames_error *err) {
    frames__replay_builder b;
    frames__replay_acc a;
    int rc = FRAMES_OK, got, cut;
    const frames__replay_builder *b2 = NULL;
#ifdef FRAMES__REPLAY_THREADS
    frames__replay_seg *s = NULL;
#endif
    frames__replay_builder_init(r, &b);
    memset(&a, 0, sizeof a);
    a.rd = r->reader;
    a.m = r->regs;
    a.progress = 1;
    r->regs->values = 0;
    if (frames_reader_tell(r->reader) != 0 && frames_reader_seek(r->reader, 0) < 0)
        return frames__fail(err, FRAMES_E_UNSUPPORTED, FRAMES_NO_POS, FRAMES_NO_POS,
                            "%s: cannot read the trace from its start", r->trace_path);
    got = FRAMES__REPLAY_HELD;
#ifdef FRAMES__REPLAY_THREADS
    if (frames__replay_threads(r) == 2) {
        int joined = 0;
        if (!(s = (frames__replay_seg *)frames__zalloc(sizeof *s, r->actx))) goto nomem;
        got = frames__replay_build_split(r, &b, &a, s, &joined, err);
        if (joined) b2 = &s->b;
    }
#endif
    if (got == FRAMES__REPLAY_HELD) got = frames__replay_index_run(r, &b, &a, UINT64_MAX, UINT64_MAX, err);
    if (got == FRAMES__REPLAY_NOROOM) goto nomem;
    if (got < 0) { rc = got; goto done; }
    if (frames__replay_finish_lines(&b) < 0) goto nomem;
    /* the pass has read to the end, so the reader knows whether the trace is cut
       (frames_reader_info_get would check the TOC against every record first) */
#ifdef FRAMES__REPLAY_THREADS
    cut = frames_reader_truncated(b2 ? s->a.rd : r->reader);
#else
    cut = frames_reader_truncated(r->reader);
#endif
    r->segments = b2 ? 2 : 1;
    if (frames__replay_layout(r, &a, &b, b2, cut) == FRAMES_OK) goto done;
nomem:
    rc = frames__fail(err, FRAMES_E_NOMEM, FRAMES_NO_POS, FRAMES_NO_POS,
                      "%s: the index would take more than %llu bytes", r->trace_path,
                      (unsigned long long)r->o.max_index_bytes);
done:
#ifdef FRAMES__REPLAY_THREADS
    if (s) {
        frames__replay_acc_free(&s->a, r->actx);
        frames__replay_builder_free(&s->b);
        if (s->a.m) frames_replay_regs_close(s->a.m);
        if (s->a.rd) frames_reader_close(s->a.rd);
        FRAMES_FREE(s, r->actx);
    }
#endif
    frames__replay_acc_free(&a, r->actx);
    frames__replay_builder_free(&b);
    return rc;
}

#ifdef FRAMES__REPLAY_FILES
/* Read the index file when it belongs to this trace: FRAMES_OK, 1 when absent or stale
   (*why says which), or an error. */
static FRAMES__UNUSED int frames__replay_read_index(frames_replay *r, const char **why, frames_error *err) {
    FILE *f = fopen(r->index_path, "rb");
    long sz;
    uint8_t hdr[FRAMES__REPLAY_HDR];
    if (!f) { *why = "missing"; return 1; }
    if (fseek(f, 0, SEEK_END) != 0 || (sz = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
        fclose(f);
        return frames__fail(err, FRAMES_E_IO, FRAMES_NO_POS, FRAMES_NO_POS, "%s: %s", r->index_path, frames__syserr());
    }
    if ((size_t)sz < sizeof hdr || fread(hdr, 1, sizeof hdr, f) != sizeof hdr ||
        memcmp(hdr, frames__replay_magic, 8)) {
        fclose(f);
        *why = "not an index of this version";
        return 1;
    }
    if (frames__replay_u32(hdr + 8) != FRAMES__REPLAY_VERSION) {
        fclose(f);
        *why = "built by another version of frames";
        return 1;
    }
    if (frames__replay_u64(hdr + 16) != r->stamp.size || frames__replay_u64(hdr + 24) != r->stamp.sec ||
        frames__replay_u64(hdr + 32) != r->stamp.nsec || frames__replay_u64(hdr + 40) != r->stamp.head ||
        frames__replay_u64(hdr + 48) != r->stamp.tail) {
        fclose(f);
        *why = "stale: the trace changed since it was built";
        return 1;
    }
    if ((uint64_t)sz > r->o.max_index_bytes) {
        fclose(f);
        return frames__fail(err, FRAMES_E_REPLAY_INDEX, FRAMES_NO_POS, FRAMES_NO_POS,
                            "%s: index larger than the limit (%llu bytes)", r->index_path,
                            (unsigned long long)r->o.max_index_bytes);
    }
    r->ix = (uint8_t *)FRAMES_MALLOC((size_t)sz, r->actx);
    if (!r->ix) { fclose(f); return frames__fail(err, FRAMES_E_NOMEM, FRAMES_NO_POS, FRAMES_NO_POS, "out of memory"); }
    memcpy(r->ix, hdr, sizeof hdr);
    if (fread(r->ix + sizeof hdr, 1, (size_t)sz - sizeof hdr, f) != (size_t)sz - sizeof hdr) {
        fclose(f);
        return frames__fail(err, FRAMES_E_IO, FRAMES_NO_POS, FRAMES_NO_POS, "%s: short read", r->index_path);
    }
    fclose(f);
    r->ixlen = (size_t)sz;
    return FRAMES_OK;
}

static FRAMES__UNUSED void frames__replay_write_index(frames_replay *r) {
    char tmp[4200];
    FILE *f;
    if (strlen(r->index_path) + 32 >= sizeof tmp) return;
    /* a private name, renamed into place: two builders of one index never mix bytes */
    frames__fmt(tmp, sizeof tmp, "%s.%ld.tmp", r->index_path, (long)getpid());
    f = fopen(tmp, "wb");
    if (!f) return;
    if (fwrite(r->ix, 1, r->ixlen, f) != r->ixlen) { fclose(f); remove(tmp); return; }
    if (fclose(f) != 0 || rename(tmp, r->index_path) != 0) { remove(tmp); return; }
    r->stored = 1;
}
#endif

FRAMES_REPLAY_DEF void frames_replay_close(frames_replay *r) {
    void *a;
    if (!r) return;
    a = r->actx;
    if (r->reader) frames_reader_close(r->reader);
    frames_replay_regs_close(r->regs);
    FRAMES_FREE(r->cur_mem, a);
    FRAMES_FREE(r->ix, a);
    FRAMES_FREE(r->trace_path, a);
    FRAMES_FREE(r->index_path, a);
    FRAMES_FREE(r->eblock, a);
    FRAMES_FREE(r->ekinds, a);
    FRAMES_FREE(r->emask, a);
    FRAMES_FREE(r, a);
}

FRAMES_REPLAY_DEF int frames_replay_open(frames_replay **out, const char *trace_path,
                                         const frames_replay_options *o, frames_error *err) {
#ifndef FRAMES__REPLAY_FILES
    (void)trace_path;
    (void)o;
    *out = NULL;
    return frames__fail(err, FRAMES_E_UNSUPPORTED, FRAMES_NO_POS, FRAMES_NO_POS,
                        "frames_replay_open needs stdio and POSIX");
#else
    frames_replay *r;
    frames_replay_options def;
    const frames_header *h;
    const char *why = NULL;
    int rc;
    *out = NULL;
    if (!o) {
        frames_replay_options_default(&def);
        o = &def;
    }
    if (!trace_path || !strcmp(trace_path, "-"))
        return frames__fail(err, FRAMES_E_INVALID, FRAMES_NO_POS, FRAMES_NO_POS,
                            "replay needs a trace file (not standard input)");
    r = (frames_replay *)frames__zalloc(sizeof *r, o->alloc_ctx);
    if (!r) return frames__fail(err, FRAMES_E_NOMEM, FRAMES_NO_POS, FRAMES_NO_POS, "out of memory");
    r->actx = o->alloc_ctx;
    r->o = *o;
    if (!r->o.max_threads) r->o.max_threads = 65536;
    if (!r->o.max_index_bytes) r->o.max_index_bytes = 4ull << 30;
    if (!r->o.max_walk_blocks) r->o.max_walk_blocks = 4096;
    r->trace_path = frames__strdup(trace_path, r->actx);
    if (o->index_path) r->index_path = frames__strdup(o->index_path, r->actx);
    else if (r->trace_path) {
        size_t n = strlen(trace_path);
        r->index_path = (char *)FRAMES_MALLOC(n + 7, r->actx);
        if (r->index_path) frames__fmt(r->index_path, n + 7, "%s.fridx", trace_path);
    }
    if (!r->trace_path || !r->index_path) {
        frames_replay_close(r);
        return frames__fail(err, FRAMES_E_NOMEM, FRAMES_NO_POS, FRAMES_NO_POS, "out of memory");
    }
    r->o.index_path = NULL;
    if ((rc = frames__replay_stamp_of(trace_path, &r->stamp, err)) < 0 ||
        (rc = frames__replay_open_reader(r, &r->reader, err)) < 0) {
        frames_replay_close(r);
        return rc;
    }
    h = frames_reader_header(r->reader);
    if ((rc = frames_replay_regs_open(&r->regs, (uint32_t)h->arch, h->machine, r->o.max_threads,
                                      r->actx, err)) < 0) {
        frames_replay_close(r);
        return rc;
    }
    rc = frames__replay_read_index(r, &why, err);
    if (rc < 0) { frames_replay_close(r); return rc; }
    if (rc == FRAMES_OK) {
        rc = frames__replay_parse(r, err);
        if (rc < 0) { frames_replay_close(r); return rc; }
        r->stored = 1;
    } else {
        if (!r->o.build_index) {
            rc = frames__fail(err, FRAMES_E_REPLAY_INDEX, FRAMES_NO_POS, FRAMES_NO_POS,
                              "%s: index %s (build it: frames state builds it by default)",
                              r->index_path, why);
            frames_replay_close(r);
            return rc;
        }
        if ((rc = frames__replay_build(r, err)) < 0) { frames_replay_close(r); return rc; }
        r->built = 1;
        if (r->o.write_index) frames__replay_write_index(r);
        if ((rc = frames__replay_parse(r, err)) < 0) { frames_replay_close(r); return rc; }
    }
    frames__replay_regs_clear(r->regs);
    r->pos = (uint64_t)-1;
    if ((rc = frames_replay_goto(r, 0, err)) < 0) { frames_replay_close(r); return rc; }
    *out = r;
    return FRAMES_OK;
#endif
}

FRAMES_REPLAY_DEF const char *frames_replay_index_path(const frames_replay *r) { return r->index_path; }

FRAMES_REPLAY_DEF int frames_replay_info_get(const frames_replay *r, frames_replay_info *info) {
    memset(info, 0, sizeof *info);
    info->instructions = r->instructions;
    info->arch = r->arch;
    info->machine = r->machine;
    info->threads = r->nthreads;
    info->registers = r->regs->nregs;
    info->frames = r->frames;
    info->values = r->values;
    info->truncated = (int)r->truncated;
    info->index_built = r->built;
    info->index_stored = r->stored;
    info->index_bytes = r->ixlen;
    info->arch_name = r->regs->def->name;
    info->index_segments = r->segments;
    return FRAMES_OK;
}

FRAMES_REPLAY_DEF uint64_t frames_replay_position(const frames_replay *r) { return r->pos; }

FRAMES_REPLAY_DEF size_t frames_replay_threads(const frames_replay *r, uint64_t *tids, size_t cap) {
    size_t i;
    for (i = 0; i < r->nthreads && i < cap; i++) tids[i] = frames__replay_u64(r->threads + 8 * i);
    return r->nthreads;
}

FRAMES_REPLAY_DEF const frames_replay_reg *frames_replay_reg_at(const frames_replay *r, size_t i) {
    return frames_replay_regs_at(r->regs, i);
}

FRAMES_REPLAY_DEF int frames_replay_insn_get(const frames_replay *r, frames_replay_insn *insn) {
    if (!r->have_insn) return FRAMES_E_RANGE;
    *insn = r->insn;
    return FRAMES_OK;
}

/* Walk instructions [first, end) calling fn on each std_frame (index, frame); first must
   be a block start or the walk starts at its block. fn returns nonzero to stop. */
typedef int (*frames__replay_walk_fn)(void *ctx, uint64_t index, const frames_std_frame *s);

static FRAMES__UNUSED int frames__replay_walk(frames_replay *r, uint64_t first, uint64_t end,
                               frames__replay_walk_fn fn, void *ctx, frames_error *err) {
    uint64_t blk = first >> FRAMES__REPLAY_BLOCK_LOG2, insn = blk << FRAMES__REPLAY_BLOCK_LOG2;
    frames_frame f;
    int rc;
    if (end > r->instructions) end = r->instructions;
    if (first >= end) return FRAMES_OK;
    if (frames_reader_seek(r->reader, frames__replay_u64(r->blocks + 24 * blk)) < 0) {
        if (err) *err = *frames_reader_error(r->reader);
        return frames_reader_error(r->reader)->code;
    }
    while (insn < end) {
        rc = frames_reader_next(r->reader, &f);
        if (rc == FRAMES_E_DECODE) continue;
        if (rc < 0) {
            if (err) *err = *frames_reader_error(r->reader);
            return rc;
        }
        if (rc == 0)
            return frames__fail(err, FRAMES_E_REPLAY_INDEX, FRAMES_NO_POS, FRAMES_NO_POS,
                                "%s: the trace ends before instruction %llu (stale index?)",
                                r->trace_path, (unsigned long long)insn);
        if (f.kind != FRAMES_KIND_STD) continue;
        if (insn >= first && fn(ctx, insn, &f.std)) return FRAMES_REPLAY_NONE;
        insn++;
    }
    return FRAMES_OK;
}

typedef struct frames__replay_goto_ctx {
    frames_replay *r;
    uint64_t target;
} frames__replay_goto_ctx;

static FRAMES__UNUSED int frames__replay_goto_step(void *ctx, uint64_t index, const frames_std_frame *s) {
    frames__replay_goto_ctx *g = (frames__replay_goto_ctx *)ctx;
    frames_replay *r = g->r;
    frames__replay_file *f = frames__replay_file_of(r->regs, s->thread_id, 1);
    if (index == g->target) {
        uint32_t fb = r->regs->file_bytes;
        size_t n = s->rawbytes.len < 16 ? s->rawbytes.len : 16;
        r->insn.index = index;
        r->insn.pc = s->address;
        r->insn.thread = s->thread_id;
        memset(r->insn.bytes, 0, sizeof r->insn.bytes);
        if (n) memcpy(r->insn.bytes, s->rawbytes.ptr, n);
        r->insn.len = (uint32_t)n;
        r->have_insn = 1;
        if (f) {   /* the overlay: this thread's file with the instruction's pre-list */
            uint64_t named = 0;
            memcpy(r->cur_mem, f->val, 2 * (size_t)fb);
            r->curfile.tid = s->thread_id;
            r->curfile.val = r->cur_mem;
            r->curfile.known = r->cur_mem + fb;
            frames__replay_file_apply(r->regs, &r->curfile, s, 0, &named);
            frames__replay_file_pc(r->regs, &r->curfile, s->address);
            r->cur = &r->curfile;
        }
        return 1;
    }
    if (f) {
        uint64_t named = 0;
        frames__replay_file_apply(r->regs, f, s, 0, &named);
        frames__replay_file_apply(r->regs, f, s, 1, &named);
        frames__replay_file_pc_unknown(r->regs, f);
    }
    return 0;
}

FRAMES_REPLAY_DEF int frames_replay_goto(frames_replay *r, uint64_t index, frames_error *err) {
    frames__replay_goto_ctx g;
    uint64_t key, from;
    int rc;
    if (index > r->instructions)
        return frames__fail(err, FRAMES_E_RANGE, FRAMES_NO_POS, FRAMES_NO_POS,
                            "instruction %llu is past the end (%llu instructions)",
                            (unsigned long long)index, (unsigned long long)r->instructions);
    if (!r->cur_mem) {
        r->cur_mem = (uint8_t *)frames__zalloc(2 * (size_t)(r->regs->file_bytes ? r->regs->file_bytes : 1), r->actx);
        if (!r->cur_mem) return frames__fail(err, FRAMES_E_NOMEM, FRAMES_NO_POS, FRAMES_NO_POS, "out of memory");
    }
    r->cur = NULL;
    r->have_insn = 0;
    r->values = r->values;
    if (!r->instructions) { r->pos = 0; return FRAMES_OK; }
    key = (index >> FRAMES__REPLAY_BLOCK_LOG2) / FRAMES__REPLAY_KEY_BLOCKS;
    if (key >= r->nkeys) key = r->nkeys - 1;
    from = key * FRAMES__REPLAY_KEY_BLOCKS * FRAMES__REPLAY_BLOCK;
    /* going forward in the same keyframe segment: continue from the base state */
    if (r->pos != (uint64_t)-1 && r->pos <= index && r->pos >= from && r->pos < r->instructions) {
        from = r->pos;
    } else if ((rc = frames__replay_load_key(r, key, err)) < 0) {
        r->pos = (uint64_t)-1;
        return rc;
    }
    g.r = r;
    g.target = index;
    /* the base state covers [0, pos); walk [from, index] (index: the overlay only) */
    rc = frames__replay_walk(r, from, index + 1, frames__replay_goto_step, &g, err);
    if (rc < 0) { r->pos = (uint64_t)-1; return rc; }
    r->pos = index;
    return FRAMES_OK;
}

FRAMES_REPLAY_DEF int frames_replay_reg_get(const frames_replay *r, uint64_t thread,
                                            const char *name, uint8_t *value, size_t cap,
                                            size_t *size) {
    const frames__replay_file *f;
    if (r->cur && r->cur->tid == thread) f = r->cur;
    else f = frames__replay_file_of(r->regs, thread, 0);
    return frames__replay_get(r->regs, f, name, value, cap, size);
}

/* --------------------------------------------------------------------------------------
   Replay: searches
   -------------------------------------------------------------------------------------- */

/* A line's entries decoded: blocks ascending, kinds, word masks. */
typedef struct frames__replay_ents {
    uint64_t *block;
    uint8_t *kinds, *mask;
    size_t n;
} frames__replay_ents;

static FRAMES__UNUSED void frames__replay_ents_free(frames_replay *r, frames__replay_ents *e) {
    FRAMES_FREE(e->block, r->actx);
    FRAMES_FREE(e->kinds, r->actx);
    FRAMES_FREE(e->mask, r->actx);
    memset(e, 0, sizeof *e);
}

/* Decode the entries of line (address >> 6) into e (empty when the line was never
   accessed). Entries past a malformed varint or past the last block are dropped. */
static FRAMES__UNUSED int frames__replay_ents_of(frames_replay *r, uint64_t line, frames__replay_ents *e) {
    uint64_t lo = 0, hi = r->nlines, blk = 0;
    const uint8_t *p, *end, *d;
    uint32_t ents;
    memset(e, 0, sizeof *e);
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (frames__replay_u64(r->linedir + 24 * mid) < line) lo = mid + 1;
        else hi = mid;
    }
    if (lo >= r->nlines || frames__replay_u64(r->linedir + 24 * lo) != line) return 0;
    d = r->linedir + 24 * lo;
    p = r->linedata + frames__replay_u64(d + 8);
    end = p + frames__replay_u32(d + 16);
    ents = frames__replay_u32(d + 20);
    e->block = (uint64_t *)FRAMES_MALLOC((size_t)ents * sizeof *e->block, r->actx);
    e->kinds = (uint8_t *)FRAMES_MALLOC(ents, r->actx);
    e->mask = (uint8_t *)FRAMES_MALLOC(ents, r->actx);
    if (!e->block || !e->kinds || !e->mask) {
        frames__replay_ents_free(r, e);
        return -1;
    }
    while (p < end && e->n < ents) {
        uint64_t v = 0;
        unsigned shift = 0;
        while (p < end && shift < 64) {
            v |= (uint64_t)(*p & 0x7F) << shift;
            shift += 7;
            if (!(*p++ & 0x80)) break;
        }
        if (shift >= 64 && (p[-1] & 0x80)) break;
        if ((v >> 11) > r->nblocks - blk) break;
        blk += v >> 11;
        if (blk >= r->nblocks || (e->n && blk <= e->block[e->n - 1])) break;
        e->block[e->n] = blk;
        e->kinds[e->n] = (uint8_t)(v & 7);
        e->mask[e->n] = (uint8_t)(v >> 3);
        e->n++;
    }
    return 0;
}

/* Size of a memory operand in bytes. */
static FRAMES__UNUSED uint64_t frames__replay_opsize(const frames_operand *op) {
    if (op->value.len) return op->value.len;
    return op->bit_length > 0 ? ((uint64_t)op->bit_length + 7) / 8 : 1;
}

/* Memory reconstruction of [lo, lo + n) (one line at most) at position pos. */
typedef struct frames__replay_memctx {
    uint64_t lo, n, pos;
    int forward;
    uint8_t tv[64], ts[64];   /* per byte: value, 0 untouched / 1 value / 2 written unknown */
    uint8_t *val, *done;      /* results: done 1 value, 2 unknown for good */
} frames__replay_memctx;

static FRAMES__UNUSED void frames__replay_mem_op(frames__replay_memctx *c, const frames_operand *op, int mark) {
    uint64_t size = frames__replay_opsize(op), a, s, e;
    if (op->spec != FRAMES_MEM) return;
    s = op->address > c->lo ? op->address : c->lo;
    e = op->address + size < c->lo + c->n ? op->address + size : c->lo + c->n;
    if (op->address + size < op->address) e = c->lo + c->n;
    for (a = s; a < e; a++) {
        uint64_t i = a - c->lo;
        if (c->forward) {
            if (c->done[i]) continue;
            if (mark == 1 && a - op->address < op->value.len) {
                c->val[i] = op->value.ptr[a - op->address];
                c->done[i] = 1;
            } else if (mark == 2) {
                c->done[i] = 2;   /* overwritten before anything showed it */
            }
        } else if (a - op->address < op->value.len) {
            c->tv[i] = op->value.ptr[a - op->address];
            c->ts[i] = 1;
        } else if (mark == 2) {
            c->ts[i] = 2;
        }
    }
}

static FRAMES__UNUSED int frames__replay_mem_step(void *ctx, uint64_t index, const frames_std_frame *s) {
    frames__replay_memctx *c = (frames__replay_memctx *)ctx;
    uint32_t k;
    frames_operand code;   /* the instruction's bytes are memory content too */
    memset(&code, 0, sizeof code);
    code.spec = s->rawbytes.len ? FRAMES_MEM : FRAMES_REG;
    code.address = s->address;
    code.value = s->rawbytes;
    if (c->forward) {
        if (index > c->pos) {
            frames__replay_mem_op(c, &code, 1);
            for (k = 0; k < s->npre; k++) frames__replay_mem_op(c, &s->pre[k], 1);
        }
        for (k = 0; k < s->npost; k++) frames__replay_mem_op(c, &s->post[k], 2);
        return 0;
    }
    if (index > c->pos) return 1;
    frames__replay_mem_op(c, &code, 1);
    for (k = 0; k < s->npre; k++) frames__replay_mem_op(c, &s->pre[k], 1);
    if (index < c->pos)
        for (k = 0; k < s->npost; k++) frames__replay_mem_op(c, &s->post[k], 2);
    return 0;
}

/* Bytes [lo, lo + n) within one line at position pos into bytes/known. */
static FRAMES__UNUSED void frames__replay_mem_line(frames_replay *r, uint64_t pos, uint64_t lo, size_t n,
                                    uint8_t *bytes, uint8_t *known, uint32_t *budget) {
    frames__replay_ents e;
    frames__replay_memctx c;
    uint64_t pblk = pos >> FRAMES__REPLAY_BLOCK_LOG2, line = lo >> FRAMES__REPLAY_LINE_LOG2;
    uint8_t need = 0;
    size_t i, left = n;
    long j;
    memset(known, 0, n);
    if (frames__replay_ents_of(r, line, &e) < 0) return;
    if (!e.n) {   /* a damaged line decodes to nothing but was allocated */
        frames__replay_ents_free(r, &e);
        return;
    }
    memset(&c, 0, sizeof c);
    c.lo = lo;
    c.n = n;
    c.pos = pos;
    c.val = bytes;
    c.done = known;
    for (i = 0; i < n; i++) need = (uint8_t)(need | (1u << (((lo + i) & 63) >> 3)));
    /* backward: the latest operand before pos (or pos's pre-list) */
    for (j = (long)e.n - 1; j >= 0 && left && *budget; j--) {
        if (e.block[j] > pblk || !(e.mask[j] & need)) continue;
        memset(c.ts, 0, sizeof c.ts);
        (*budget)--;
        if (frames__replay_walk(r, e.block[j] << FRAMES__REPLAY_BLOCK_LOG2,
                                (e.block[j] + 1) << FRAMES__REPLAY_BLOCK_LOG2, frames__replay_mem_step, &c,
                                NULL) < 0)
            break;
        for (i = 0; i < n; i++) {
            if (known[i] || !c.ts[i]) continue;
            known[i] = c.ts[i];
            bytes[i] = c.tv[i];
            left--;
        }
    }
    /* forward: the first operand at or after pos that shows the content before it changes */
    c.forward = 1;
    for (j = 0; j < (long)e.n && left && *budget; j++) {
        if (e.block[j] < pblk || !(e.mask[j] & need)) continue;
        (*budget)--;
        if (frames__replay_walk(r, e.block[j] == pblk ? pos : e.block[j] << FRAMES__REPLAY_BLOCK_LOG2,
                                (e.block[j] + 1) << FRAMES__REPLAY_BLOCK_LOG2, frames__replay_mem_step, &c,
                                NULL) < 0)
            break;
        for (i = left = 0; i < n; i++) left += !known[i];
    }
    for (i = 0; i < n; i++)
        if (known[i] != 1) { known[i] = 0; bytes[i] = 0; }
    frames__replay_ents_free(r, &e);
}

FRAMES_REPLAY_DEF size_t frames_replay_mem_get(const frames_replay *rc, uint64_t addr,
                                               uint8_t *bytes, uint8_t *known, size_t n) {
    frames_replay *r = (frames_replay *)rc;   /* the reader moves; the state does not */
    size_t done = 0, count = 0, i;
    uint32_t budget = r->o.max_walk_blocks;
    uint64_t pos = r->pos;
    while (done < n) {
        uint64_t a = addr + done, end = (a | 63) + 1;
        size_t len = end - a < n - done ? (size_t)(end - a) : n - done;
        if (end == 0) len = n - done < (size_t)(0 - a) ? n - done : (size_t)(0 - a);
        if (!len) break;
        frames__replay_mem_line(r, pos, a, len, bytes + done, known + done, &budget);
        done += len;
    }
    for (i = done; i < n; i++) known[i] = 0;
    for (i = 0; i < n; i++) count += known[i] != 0;
    return count;
}

/* Does operand op (side 0 pre, 1 post) match the query? */
static FRAMES__UNUSED int frames__replay_op_matches(const frames_replay *r, const frames_replay_query *q,
                                     const frames_replay_alias *qa, const frames_operand *op, int side) {
    int rd = !side && op->read, wr = side && (op->written || !op->read);
    switch (q->what) {
    case FRAMES_REPLAY_MEM_READ: if (!rd) return 0; break;
    case FRAMES_REPLAY_MEM_WRITE: if (!wr) return 0; break;
    case FRAMES_REPLAY_MEM_ACCESS: if (!rd && !wr) return 0; break;
    case FRAMES_REPLAY_REG_READ: if (!rd) return 0; break;
    case FRAMES_REPLAY_REG_WRITE: if (!wr) return 0; break;
    case FRAMES_REPLAY_REG_ACCESS: if (!rd && !wr) return 0; break;
    default: return 0;
    }
    if (q->what <= FRAMES_REPLAY_MEM_ACCESS) {
        uint64_t size = frames__replay_opsize(op), qlen = q->len ? q->len : 1;
        if (op->spec != FRAMES_MEM) return 0;
        return op->address < q->addr + qlen && q->addr < op->address + size;
    } else {
        frames_replay_alias a;
        uint32_t s, e;
        if (op->spec != FRAMES_REG ||
            !frames_replay_regs_lookup(r->regs, (const char *)op->name.ptr, op->name.len, &a) ||
            a.reg != qa->reg)
            return 0;
        s = a.offset;
        e = a.offset + a.size;
        if (wr && a.zext) { s = 0; e = 0xFFFF; }
        return s < qa->offset + qa->size && qa->offset < e;
    }
}

typedef struct frames__replay_findctx {
    const frames_replay *r;
    const frames_replay_query *q;
    frames_replay_alias qa;
    uint64_t lo, hi;          /* accepted indices [lo, hi) */
    int backward, found;
    uint64_t index;
    frames_replay_access *out;
    size_t cap, count;
} frames__replay_findctx;

static FRAMES__UNUSED int frames__replay_find_step(void *ctx, uint64_t index, const frames_std_frame *s) {
    frames__replay_findctx *c = (frames__replay_findctx *)ctx;
    int side;
    uint32_t k;
    if (index < c->lo) return 0;
    if (index >= c->hi) return 1;
    if (c->q->has_thread && s->thread_id != c->q->thread) return 0;
    if (c->q->what == FRAMES_REPLAY_PC) {
        if (s->address != c->q->pc) return 0;
    } else {
        int hit = 0;
        for (side = 0; side < 2 && !hit; side++)
            for (k = 0; k < (side ? s->npost : s->npre) && !hit; k++)
                hit = frames__replay_op_matches(c->r, c->q, &c->qa, side ? &s->post[k] : &s->pre[k], side);
        if (!hit) return 0;
    }
    c->found = 1;
    c->index = index;
    return !c->backward;   /* backward: keep the last match of the block */
}

static FRAMES__UNUSED int frames__replay_find_block(frames_replay *r, frames__replay_findctx *c, uint64_t blk,
                                     frames_error *err) {
    int rc;
    c->found = 0;
    rc = frames__replay_walk(r, blk << FRAMES__REPLAY_BLOCK_LOG2, (blk + 1) << FRAMES__REPLAY_BLOCK_LOG2,
                             frames__replay_find_step, c, err);
    return rc < 0 ? rc : c->found;
}

FRAMES_REPLAY_DEF int frames_replay_find(frames_replay *r, const frames_replay_query *q,
                                         uint64_t from, int dir, uint64_t *index,
                                         frames_error *err) {
    frames__replay_findctx c;
    uint64_t first, last, blk;
    int rc;
    memset(&c, 0, sizeof c);
    c.r = r;
    c.q = q;
    c.backward = dir < 0;
    if (c.backward) {
        if (from == 0 || !r->instructions) return FRAMES_REPLAY_NONE;
        c.lo = 0;
        c.hi = from < r->instructions ? from : r->instructions;
    } else {
        if (from == UINT64_MAX || from + 1 >= r->instructions) return FRAMES_REPLAY_NONE;
        c.lo = from + 1;
        c.hi = r->instructions;
    }
    first = c.lo >> FRAMES__REPLAY_BLOCK_LOG2;
    last = (c.hi - 1) >> FRAMES__REPLAY_BLOCK_LOG2;
    if (q->what >= FRAMES_REPLAY_REG_WRITE && q->what <= FRAMES_REPLAY_REG_ACCESS) {
        uint64_t bit;
        int wmask = q->what != FRAMES_REPLAY_REG_READ, rmask = q->what != FRAMES_REPLAY_REG_WRITE;
        if (!q->reg || !frames_replay_regs_lookup(r->regs, q->reg, strlen(q->reg), &c.qa))
            return frames__fail(err, FRAMES_E_REPLAY_REG, FRAMES_NO_POS, FRAMES_NO_POS,
                                "unknown register '%s' for %s", q->reg ? q->reg : "(null)",
                                r->regs->def->name);
        bit = frames__replay_regbit(c.qa.reg);
        for (blk = c.backward ? last : first;; blk += c.backward ? (uint64_t)-1 : 1) {
            const uint8_t *b = r->blocks + 24 * blk;
            if ((wmask && (frames__replay_u64(b + 8) & bit)) || (rmask && (frames__replay_u64(b + 16) & bit))) {
                rc = frames__replay_find_block(r, &c, blk, err);
                if (rc < 0) return rc;
                if (rc) { *index = c.index; return FRAMES_OK; }
            }
            if (blk == (c.backward ? first : last)) break;
        }
        return FRAMES_REPLAY_NONE;
    }
    if (q->what == FRAMES_REPLAY_PC || q->what <= FRAMES_REPLAY_MEM_ACCESS) {
        /* candidate blocks from the lines' entries, nearest first across the lines */
        frames__replay_ents *e;
        size_t *at, nl, i;
        uint64_t alo = q->what == FRAMES_REPLAY_PC ? q->pc : q->addr;
        uint64_t alen = q->what == FRAMES_REPLAY_PC ? 1 : (q->len ? q->len : 1);
        uint64_t l0 = alo >> FRAMES__REPLAY_LINE_LOG2, l1;
        uint8_t kinds = q->what == FRAMES_REPLAY_PC ? FRAMES__REPLAY_X
                        : q->what == FRAMES_REPLAY_MEM_READ ? FRAMES__REPLAY_R
                        : q->what == FRAMES_REPLAY_MEM_WRITE ? FRAMES__REPLAY_W
                        : (FRAMES__REPLAY_R | FRAMES__REPLAY_W);
        if (alo + alen - 1 < alo) alen = 0 - alo;
        l1 = (alo + alen - 1) >> FRAMES__REPLAY_LINE_LOG2;
        if (l1 - l0 >= 4096)
            return frames__fail(err, FRAMES_E_INVALID, FRAMES_NO_POS, FRAMES_NO_POS,
                                "address range too long to search (at most 256 KiB)");
        nl = (size_t)(l1 - l0 + 1);
        e = (frames__replay_ents *)frames__zalloc(nl * sizeof *e, r->actx);
        at = (size_t *)frames__zalloc(nl * sizeof *at, r->actx);
        if (!e || !at) {
            FRAMES_FREE(e, r->actx);
            FRAMES_FREE(at, r->actx);
            return frames__fail(err, FRAMES_E_NOMEM, FRAMES_NO_POS, FRAMES_NO_POS, "out of memory");
        }
        rc = FRAMES_REPLAY_NONE;
        for (i = 0; i < nl; i++) {
            uint64_t ll = l0 + i, lo = ll << FRAMES__REPLAY_LINE_LOG2;
            uint64_t s = alo > lo ? alo - lo : 0, en = alo + alen - lo < 64 ? alo + alen - lo : 64;
            uint8_t need = 0;
            uint64_t w;
            size_t k, keep = 0;
            if (frames__replay_ents_of(r, ll, &e[i]) < 0) { rc = FRAMES_E_NOMEM; break; }
            for (w = s >> 3; w <= (en - 1) >> 3 && w < 8; w++) need = (uint8_t)(need | (1u << w));
            for (k = 0; k < e[i].n; k++)   /* keep the candidates only */
                if ((e[i].kinds[k] & kinds) && (e[i].mask[k] & need) && e[i].block[k] >= first &&
                    e[i].block[k] <= last)
                    e[i].block[keep++] = e[i].block[k];
            e[i].n = keep;
            at[i] = c.backward ? keep : 0;   /* backward: one past the next candidate */
        }
        while (rc == FRAMES_REPLAY_NONE) {
            uint64_t best = 0;
            int have = 0;
            for (i = 0; i < nl; i++) {
                if (c.backward ? at[i] == 0 : at[i] >= e[i].n) continue;
                blk = c.backward ? e[i].block[at[i] - 1] : e[i].block[at[i]];
                if (!have || (c.backward ? blk > best : blk < best)) best = blk;
                have = 1;
            }
            if (!have) break;
            for (i = 0; i < nl; i++)   /* consume this block in every line */
                if (c.backward) { if (at[i] && e[i].block[at[i] - 1] == best) at[i]--; }
                else if (at[i] < e[i].n && e[i].block[at[i]] == best) at[i]++;
            rc = frames__replay_find_block(r, &c, best, err);
            if (rc > 0) { *index = c.index; rc = FRAMES_OK; }
            else if (rc == 0) rc = FRAMES_REPLAY_NONE;
        }
        if (rc == FRAMES_E_NOMEM) frames__fail(err, rc, FRAMES_NO_POS, FRAMES_NO_POS, "out of memory");
        for (i = 0; i < nl; i++) frames__replay_ents_free(r, &e[i]);
        FRAMES_FREE(e, r->actx);
        FRAMES_FREE(at, r->actx);
        return rc;
    }
    return frames__fail(err, FRAMES_E_INVALID, FRAMES_NO_POS, FRAMES_NO_POS, "unknown search kind %d",
                        (int)q->what);
}

static FRAMES__UNUSED int frames__replay_collect(void *ctx, uint64_t index, const frames_std_frame *s) {
    frames__replay_findctx *c = (frames__replay_findctx *)ctx;
    int side;
    uint32_t k;
    if (index != c->lo) return 0;
    for (side = 0; side < 2; side++)
        for (k = 0; k < (side ? s->npost : s->npre); k++) {
            const frames_operand *op = side ? &s->post[k] : &s->pre[k];
            frames_replay_access *a;
            if (!frames__replay_op_matches(c->r, c->q, &c->qa, op, side)) continue;
            if (c->count < c->cap) {
                size_t i, nn = op->name.len < sizeof a->reg - 1 ? op->name.len : sizeof a->reg - 1;
                a = &c->out[c->count];
                memset(a, 0, sizeof *a);
                a->index = index;
                a->pc = s->address;
                a->thread = s->thread_id;
                a->write = side;
                if (op->spec == FRAMES_MEM) {
                    a->addr = op->address;
                    a->size = (uint32_t)(frames__replay_opsize(op) < 0xFFFFFFFFu ? frames__replay_opsize(op) : 0xFFFFFFFFu);
                } else {
                    for (i = 0; i < nn; i++) {
                        char ch = (char)op->name.ptr[i];
                        a->reg[i] = ch >= 'A' && ch <= 'Z' ? (char)(ch - 'A' + 'a') : ch;
                    }
                    a->size = op->value.len ? (uint32_t)(op->value.len < 0xFFFFFFFFu ? op->value.len : 0xFFFFFFFFu)
                                            : (uint32_t)(op->bit_length > 0 ? (op->bit_length + 7) / 8 : 0);
                }
                a->len = (uint32_t)(op->value.len < sizeof a->value ? op->value.len : sizeof a->value);
                if (a->len) memcpy(a->value, op->value.ptr, a->len);
            }
            c->count++;
        }
    return 1;
}

FRAMES_REPLAY_DEF long frames_replay_accesses(frames_replay *r, const frames_replay_query *q,
                                              uint64_t index, frames_replay_access *out,
                                              size_t cap, frames_error *err) {
    frames__replay_findctx c;
    int rc;
    memset(&c, 0, sizeof c);
    c.r = r;
    c.q = q;
    c.out = out;
    c.cap = cap;
    c.lo = index;
    if (index >= r->instructions)
        return frames__fail(err, FRAMES_E_RANGE, FRAMES_NO_POS, FRAMES_NO_POS,
                            "instruction %llu is past the end", (unsigned long long)index);
    if (q->what >= FRAMES_REPLAY_REG_WRITE && q->what <= FRAMES_REPLAY_REG_ACCESS &&
        (!q->reg || !frames_replay_regs_lookup(r->regs, q->reg, strlen(q->reg), &c.qa)))
        return frames__fail(err, FRAMES_E_REPLAY_REG, FRAMES_NO_POS, FRAMES_NO_POS,
                            "unknown register '%s'", q->reg ? q->reg : "(null)");
    rc = frames__replay_walk(r, index, index + 1, frames__replay_collect, &c, err);
    if (rc < 0) return rc;
    return (long)c.count;
}

/* --------------------------------------------------------------------------------------
   Call stack
   -------------------------------------------------------------------------------------- */

enum { FRAMES__STACK_X86 = 1, FRAMES__STACK_X64, FRAMES__STACK_ARM, FRAMES__STACK_A64 };

/* One thread: its frames and the call or return its last instruction made, which takes
   effect at its next instruction (whose pc says where the call or return went). */
typedef struct frames__stack_thread {
    uint64_t tid;
    frames_replay_call *frames;
    size_t depth, cap;
    int pending;                 /* 1 call, -1 return, 0 none */
    frames_replay_call call;     /* the pending call (entry unknown yet) */
    uint64_t ret_sp;             /* x86: where the pending return read its address */
    uint64_t deep;               /* calls beyond max_depth not yet returned */
} frames__stack_thread;

struct frames_replay_stack {
    void *actx;
    frames_replay_stack_options o;
    int kind;                    /* FRAMES__STACK_*, 0: no call recognition */
    uint32_t arch;
    uint64_t machine;
    frames__stack_thread *threads;
    size_t nthreads, capthreads;
    frames__htab tids;           /* frames__replay_tid: each thread's index */
    size_t last;                 /* thread of the last frame (index + 1): no probing for runs */
    frames_replay_stack_stats st;
};

FRAMES_REPLAY_DEF void frames_replay_stack_options_default(frames_replay_stack_options *o) {
    memset(o, 0, sizeof *o);
    o->max_depth = 4096;
    o->max_threads = 65536;
}

static int frames__stack_kind(uint32_t arch, uint64_t machine) {
    if (arch == FRAMES_ARCH_I386) return machine == 64 || machine == 65 ? FRAMES__STACK_X64
                                                                        : FRAMES__STACK_X86;
    if (arch == FRAMES_ARCH_ARM) return FRAMES__STACK_ARM;
    if (arch == FRAMES_ARCH_AARCH64) return FRAMES__STACK_A64;
    return 0;
}

/* x86: skip legacy prefixes (and REX in 64-bit mode), then call E8 / FF /2 / FF /3 / 9A,
   return C3 / C2 / CB / CA. */
static int frames__stack_x86(const uint8_t *b, size_t n, int x64) {
    size_t i = 0;
    while (i < n && (b[i] == 0x66 || b[i] == 0x67 || b[i] == 0xF2 || b[i] == 0xF3 ||
                     b[i] == 0x2E || b[i] == 0x3E || b[i] == 0x26 || b[i] == 0x36 ||
                     b[i] == 0x64 || b[i] == 0x65 || b[i] == 0xF0))
        i++;
    if (x64 && i < n && (b[i] & 0xF0) == 0x40) i++;
    if (i >= n) return 0;
    switch (b[i]) {
    case 0xE8: return 1;
    case 0x9A: return x64 ? 0 : 1;
    case 0xFF: return i + 1 < n && (((b[i + 1] >> 3) & 7) == 2 || ((b[i + 1] >> 3) & 7) == 3);
    case 0xC3: case 0xC2: case 0xCB: case 0xCA: return -1;
    default: return 0;
    }
}

static uint32_t frames__stack_le32(const uint8_t *b) {
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

static int frames__stack_a64(uint32_t w) {
    if ((w & 0xFC000000u) == 0x94000000u) return 1;                  /* bl */
    if ((w & 0xFFFFFC1Fu) == 0xD63F0000u) return 1;                  /* blr */
    if ((w & 0xFEFFF800u) == 0xD63F0800u) return 1;                  /* blraa & co */
    if ((w & 0xFFFFFC1Fu) == 0xD65F0000u) return -1;                 /* ret */
    if (w == 0xD65F0BFFu || w == 0xD65F0FFFu) return -1;             /* retaa, retab */
    return 0;
}

static int frames__stack_a32(uint32_t w) {
    if ((w >> 28) == 0xFu) return (w & 0xFE000000u) == 0xFA000000u;  /* blx imm */
    if ((w & 0x0F000000u) == 0x0B000000u) return 1;                  /* bl */
    if ((w & 0x0FFFFFF0u) == 0x012FFF30u) return 1;                  /* blx reg */
    if ((w & 0x0FFFFFFFu) == 0x012FFF1Eu) return -1;                 /* bx lr */
    if ((w & 0x0FFF8000u) == 0x08BD8000u) return -1;                 /* pop {.., pc} */
    if ((w & 0x0FFFFFFFu) == 0x049DF004u) return -1;                 /* ldr pc, [sp], #4 */
    return 0;
}

static int frames__stack_t16(unsigned h) {
    if ((h & 0xFF87u) == 0x4780u) return 1;                          /* blx reg */
    if (h == 0x4770u) return -1;                                     /* bx lr */
    if ((h & 0xFF00u) == 0xBD00u) return -1;                         /* pop {.., pc} */
    return 0;
}

static int frames__stack_t32(unsigned h1, unsigned h2) {
    if ((h1 & 0xF800u) == 0xF000u && (h2 & 0xC000u) == 0xC000u) return 1;   /* bl, blx imm */
    if (h1 == 0xE8BDu && (h2 & 0x8000u)) return -1;                  /* pop.w {.., pc} */
    if (h1 == 0xF85Du && h2 == 0xFB04u) return -1;                   /* ldr.w pc, [sp], #4 */
    return 0;
}

static int frames__stack_thumb(const frames_std_frame *sf) {
    return sf->rawbytes.len == 2 ||
           (sf->has_mode && sf->mode.len == 7 && memcmp(sf->mode.ptr, "arm:t32", 7) == 0);
}

static int frames__stack_classify_kind(int kind, const frames_std_frame *sf) {
    const uint8_t *b = sf->rawbytes.ptr;
    size_t n = sf->rawbytes.len;
    switch (kind) {
    case FRAMES__STACK_X86: return frames__stack_x86(b, n, 0);
    case FRAMES__STACK_X64: return frames__stack_x86(b, n, 1);
    case FRAMES__STACK_A64: return n == 4 ? frames__stack_a64(frames__stack_le32(b)) : 0;
    case FRAMES__STACK_ARM:
        if (frames__stack_thumb(sf)) {
            if (n == 2) return frames__stack_t16((unsigned)b[0] | (unsigned)b[1] << 8);
            if (n == 4)
                return frames__stack_t32((unsigned)b[0] | (unsigned)b[1] << 8,
                                         (unsigned)b[2] | (unsigned)b[3] << 8);
            return 0;
        }
        return n == 4 ? frames__stack_a32(frames__stack_le32(b)) : 0;
    default: return 0;
    }
}

FRAMES_REPLAY_DEF int frames_replay_stack_classify(uint32_t arch, uint64_t machine,
                                                   const frames_std_frame *sf) {
    return frames__stack_classify_kind(frames__stack_kind(arch, machine), sf);
}

FRAMES_REPLAY_DEF int frames_replay_stack_open(frames_replay_stack **out, uint32_t arch,
                                               uint64_t machine,
                                               const frames_replay_stack_options *o,
                                               frames_error *err) {
    frames_replay_stack_options d;
    frames_replay_stack *s;
    *out = NULL;
    if (!o) {
        frames_replay_stack_options_default(&d);
        o = &d;
    }
    if (o->max_depth == 0 || o->max_threads == 0)
        return frames__fail(err, FRAMES_E_INVALID, FRAMES_NO_POS, FRAMES_NO_POS,
                            "call stack: max_depth and max_threads must be positive");
    s = (frames_replay_stack *)frames__zalloc(sizeof *s, o->alloc_ctx);
    if (!s)
        return frames__fail(err, FRAMES_E_NOMEM, FRAMES_NO_POS, FRAMES_NO_POS,
                            "call stack: out of memory");
    s->actx = o->alloc_ctx;
    s->o = *o;
    s->kind = frames__stack_kind(arch, machine);
    FRAMES__HTAB_INIT(&s->tids, frames__replay_tid, o->max_threads);
    s->arch = arch;
    s->machine = machine;
    *out = s;
    return FRAMES_OK;
}

FRAMES_REPLAY_DEF void frames_replay_stack_close(frames_replay_stack *s) {
    size_t i;
    if (!s) return;
    for (i = 0; i < s->nthreads; i++) FRAMES_FREE(s->threads[i].frames, s->actx);
    FRAMES_FREE(s->threads, s->actx);
    frames__htab_free(&s->tids, s->actx);
    FRAMES_FREE(s, s->actx);
}

/* The thread's state (index + 1), creating it when create is set; 0 when unknown, over
   the cap or out of memory. */
static size_t frames__stack_thread_of(frames_replay_stack *s, uint64_t tid, int create) {
    size_t i;
    if (s->last && s->threads[s->last - 1].tid == tid) return s->last;
    if ((i = frames__replay_tid_find(&s->tids, tid)) != (size_t)-1) return s->last = i + 1;
    if (!create) return 0;
    if (s->nthreads >= s->o.max_threads) {
        s->st.thread_cap_hit = 1;
        return 0;
    }
    if (FRAMES__GROW(s->threads, s->capthreads, s->nthreads + 1, s->actx) < 0 ||
        frames__replay_tid_add(&s->tids, tid, s->nthreads, s->actx) < 0)
        return 0;
    memset(&s->threads[s->nthreads], 0, sizeof s->threads[0]);
    s->threads[s->nthreads].tid = tid;
    s->st.threads = ++s->nthreads;
    return s->last = s->nthreads;
}

static int frames__stack_push(frames_replay_stack *s, frames__stack_thread *t, uint64_t entry) {
    /* x86: a live frame's return address lies above the stack pointer; frames at or
       below where this call stores its own were left by a longjmp or an exception */
    while (t->call.sp && t->depth && t->frames[t->depth - 1].sp &&
           t->frames[t->depth - 1].sp <= t->call.sp) {
        t->depth--;
        s->st.unwound++;
    }
    if (t->depth >= s->o.max_depth ||
        FRAMES__GROW(t->frames, t->cap, t->depth + 1, s->actx) < 0) {
        t->deep++;
        s->st.deep_calls++;
        return t->depth >= s->o.max_depth ? FRAMES_OK : FRAMES_E_NOMEM;
    }
    t->frames[t->depth] = t->call;
    t->frames[t->depth].entry = entry;
    t->frames[t->depth].user = 0;
    t->depth++;
    s->st.calls++;
    if (t->depth > s->st.max_depth_seen) s->st.max_depth_seen = (uint32_t)t->depth;
    return FRAMES_OK;
}

/* A return arrived at pc: back to the newest frame it matches. */
static void frames__stack_pop(frames_replay_stack *s, frames__stack_thread *t, uint64_t pc) {
    size_t i;
    if (t->deep) {   /* frames we did not keep return first */
        t->deep--;
        return;
    }
    for (i = t->depth; i > 0; i--) {
        const frames_replay_call *c = &t->frames[i - 1];
        if (c->ret == pc && (!c->sp || !t->ret_sp || c->sp == t->ret_sp)) {
            s->st.unwound += t->depth - i;
            s->st.returns++;
            t->depth = i - 1;
            return;
        }
    }
    s->st.unmatched_returns++;
}

/* The address of the first memory operand of list ops that is written (want_write) or
   read, 0 if none. */
static uint64_t frames__stack_mem(const frames_operand *ops, uint32_t n, int want_write) {
    uint32_t i;
    for (i = 0; i < n; i++)
        if ((ops[i].spec & FRAMES_MEM) && (want_write ? ops[i].written : ops[i].read))
            return ops[i].address;
    return 0;
}

FRAMES_REPLAY_DEF int frames_replay_stack_apply_frame(frames_replay_stack *s,
                                                      const frames_frame *f) {
    const frames_std_frame *sf = &f->std;
    frames__stack_thread *t;
    size_t ti;
    int kind, rc = FRAMES_OK;
    uint64_t next;
    if (f->kind != FRAMES_KIND_STD) return FRAMES_OK;
    s->st.instructions++;
    ti = frames__stack_thread_of(s, sf->thread_id, 1);
    if (!ti) return s->st.thread_cap_hit ? FRAMES_E_LIMIT : FRAMES_E_NOMEM;
    t = &s->threads[ti - 1];
    if (t->pending == 1 && sf->address != t->call.ret) rc = frames__stack_push(s, t, sf->address);
    else if (t->pending == -1 && sf->address != t->call.ret) frames__stack_pop(s, t, sf->address);
    t->pending = 0;
    kind = frames__stack_classify_kind(s->kind, sf);
    if (!kind) return rc;
    next = sf->address + sf->rawbytes.len;   /* the return address, or a not-taken branch */
    t->pending = kind;
    t->call.ret = next;
    if (kind > 0) {
        t->call.site = sf->address;
        t->call.index = s->st.instructions - 1;
        t->call.sp = s->kind <= FRAMES__STACK_X64 && sf->has_post
                         ? frames__stack_mem(sf->post, sf->npost, 1)
                         : 0;
    } else {
        t->ret_sp = s->kind <= FRAMES__STACK_X64 ? frames__stack_mem(sf->pre, sf->npre, 0) : 0;
    }
    return rc;
}

FRAMES_REPLAY_DEF frames_replay_call *frames_replay_stack_get(frames_replay_stack *s,
                                                              uint64_t thread, size_t *depth) {
    size_t ti = frames__stack_thread_of(s, thread, 0);
    *depth = ti ? s->threads[ti - 1].depth : 0;
    return ti ? s->threads[ti - 1].frames : NULL;
}

FRAMES_REPLAY_DEF const frames_replay_stack_stats *
frames_replay_stack_stats_get(const frames_replay_stack *s) {
    return &s->st;
}

#ifdef __cplusplus
}
#endif
#endif /* FRAMES_REPLAY_IMPLEMENTATION_INCLUDED */
#endif /* FRAMES_REPLAY_IMPLEMENTATION */

/* ======================================================================================
   The memory alone
   The replay's memory model (THE MODEL: bytes, each unknown until an operand shows it)
   for consumers that walk a trace forward themselves and need neither the index nor the
   register file (frames_vprof.h's profiles): a sparse, byte-exact memory that keeps
   whether a byte is known apart from its value. Pages of FRAMES_REPLAY_MEM_PAGE bytes
   (their values and a bit per byte: known) are allocated on the first known byte and
   held in a hash table by page number, at most max_pages of them: a byte that needs a
   page beyond that stays unknown (frames_replay_mem_set says FRAMES_E_LIMIT), so what is
   read back is never wrong, only missing. Addresses wrap at 2^64. Lookups go through a
   small cache of recent pages, so the calls are not const.
   ====================================================================================== */
#ifndef FRAMES_REPLAY_MEM_H_INCLUDED
#define FRAMES_REPLAY_MEM_H_INCLUDED
#ifdef __cplusplus
extern "C" {
#endif

#define FRAMES_REPLAY_MEM_PAGE 256u

typedef struct frames_replay_mem frames_replay_mem;

/* An empty memory of at most max_pages pages (0: FRAMES_E_INVALID). FRAMES_OK or
   FRAMES_E_NOMEM / FRAMES_E_INVALID (err may be NULL). */
FRAMES_REPLAY_DEF int frames_replay_mem_open(frames_replay_mem **m, uint64_t max_pages,
                                             void *alloc_ctx, frames_error *err);
FRAMES_REPLAY_DEF void frames_replay_mem_close(frames_replay_mem *m);
/* Bytes [addr, addr + n) are known: values v. FRAMES_OK, or FRAMES_E_LIMIT (page cap) or
   FRAMES_E_NOMEM when some of them could not be kept (those stay as they were: unknown
   if they were, since their page does not exist). */
FRAMES_REPLAY_DEF int frames_replay_mem_set(frames_replay_mem *m, uint64_t addr,
                                            const uint8_t *v, size_t n);
/* Bytes [addr, addr + n) are unknown again (written with a value the trace lacks). */
FRAMES_REPLAY_DEF void frames_replay_mem_forget(frames_replay_mem *m, uint64_t addr, size_t n);
/* The known bytes of [addr, addr + n) into v (unknown ones: 0) and, when known is not
   NULL, known[i] = 1 or 0. Returns how many are known. */
FRAMES_REPLAY_DEF size_t frames_replay_mem_read(frames_replay_mem *m, uint64_t addr, uint8_t *v,
                                                uint8_t *known, size_t n);
/* 1: every byte of [addr, addr + n) known and equal to v; 0: every byte known, some
   different; -1: some byte unknown. */
FRAMES_REPLAY_DEF int frames_replay_mem_compare(frames_replay_mem *m, uint64_t addr,
                                                const uint8_t *v, size_t n);
/* Pages held, and whether a set was refused for the cap. */
FRAMES_REPLAY_DEF uint64_t frames_replay_mem_pages(const frames_replay_mem *m);
FRAMES_REPLAY_DEF int frames_replay_mem_cap_hit(const frames_replay_mem *m);

#ifdef __cplusplus
}
#endif
#endif /* FRAMES_REPLAY_MEM_H_INCLUDED */

#if defined(FRAMES_REPLAY_IMPLEMENTATION) || defined(FRAMES_ALL_IMPLEMENTATION)
#ifndef FRAMES_REPLAY_MEM_IMPLEMENTATION_INCLUDED
#define FRAMES_REPLAY_MEM_IMPLEMENTATION_INCLUDED
#ifdef __cplusplus
extern "C" {
#endif

/* A page is 8-byte granules, each its values and a byte of known bits (bit i: val[i]),
   side by side so that an access finds both in one cache line. */
typedef struct frames__rmem_gran {
    uint8_t val[8];
    uint8_t known;
} frames__rmem_gran;

typedef struct frames__rmem_page {
    frames__rmem_gran g[FRAMES_REPLAY_MEM_PAGE / 8];
} frames__rmem_page;

typedef struct frames__rmem_slot {
    uint64_t hash;
    uint64_t no;                 /* address / FRAMES_REPLAY_MEM_PAGE */
    frames__rmem_page *page;     /* its own allocation: never moves while the table grows */
} frames__rmem_slot;

#define FRAMES__RMEM_CACHE 16u   /* recent pages, direct-mapped by page number */

struct frames_replay_mem {
    frames__htab pages;
    void *actx;
    int cap_hit;
    struct { uint64_t no; frames__rmem_page *page; } cache[FRAMES__RMEM_CACHE];
};

FRAMES_REPLAY_DEF int frames_replay_mem_open(frames_replay_mem **out, uint64_t max_pages,
                                             void *alloc_ctx, frames_error *err) {
    frames_replay_mem *m;
    *out = NULL;
    if (!max_pages) {
        if (err) frames__fail(err, FRAMES_E_INVALID, FRAMES_NO_POS, FRAMES_NO_POS, "max_pages must not be 0");
        return FRAMES_E_INVALID;
    }
    if (!(m = (frames_replay_mem *)frames__zalloc(sizeof *m, alloc_ctx))) {
        if (err) frames__fail(err, FRAMES_E_NOMEM, FRAMES_NO_POS, FRAMES_NO_POS, "out of memory");
        return FRAMES_E_NOMEM;
    }
    m->actx = alloc_ctx;
    FRAMES__HTAB_INIT(&m->pages, frames__rmem_slot,
                      max_pages > (uint64_t)SIZE_MAX ? SIZE_MAX : (size_t)max_pages);
    *out = m;
    return FRAMES_OK;
}

FRAMES_REPLAY_DEF void frames_replay_mem_close(frames_replay_mem *m) {
    size_t i;
    if (!m) return;
    for (i = 0; i < m->pages.cap; i++) {
        frames__rmem_slot *s = (frames__rmem_slot *)frames__htab_at(&m->pages, i);
        if (s) FRAMES_FREE(s->page, m->actx);
    }
    frames__htab_free(&m->pages, m->actx);
    FRAMES_FREE(m, m->actx);
}

/* Page no, or NULL when it has none (create: made, NULL when the cap or memory says no). */
static FRAMES__UNUSED frames__rmem_page *frames__rmem_page_of(frames_replay_mem *m, uint64_t no,
                                                              int create) {
    size_t c = (size_t)(no & (FRAMES__RMEM_CACHE - 1)), at = 0;
    uint64_t h;
    frames__rmem_slot *s;
    frames__rmem_page *p;
    if (m->cache[c].page && m->cache[c].no == no) return m->cache[c].page;
    h = frames__mix64(no);
    while ((s = FRAMES__HTAB_NEXT(&m->pages, frames__rmem_slot, h, &at)) && s->no != no) {
    }
    if (!s) {
        if (!create) return NULL;
        if (m->pages.len >= m->pages.max) {
            m->cap_hit = 1;
            return NULL;
        }
        if (!(p = (frames__rmem_page *)frames__zalloc(sizeof *p, m->actx))) return NULL;
        if (!(s = (frames__rmem_slot *)frames__htab_add(&m->pages, h, m->actx))) {
            FRAMES_FREE(p, m->actx);
            return NULL;
        }
        s->no = no;
        s->page = p;
    }
    m->cache[c].no = no;
    m->cache[c].page = s->page;
    return s->page;
}

/* FRAMES__RMEM_FOR_PAGES(addr, n, no, off, cnt, pos): each page piece of [addr, addr+n):
   page number, first offset in it, byte count, offset into the access. */
#define FRAMES__RMEM_FOR_PAGES(addr, n, no, off, cnt, pos)                                 \
    for (pos = 0, no = (addr) / FRAMES_REPLAY_MEM_PAGE,                                     \
        off = (size_t)((addr) % FRAMES_REPLAY_MEM_PAGE),                                    \
        cnt = (n) < FRAMES_REPLAY_MEM_PAGE - off ? (n) : FRAMES_REPLAY_MEM_PAGE - off;       \
         pos < (n); pos += cnt, no = (no + 1) & (UINT64_MAX / FRAMES_REPLAY_MEM_PAGE), off = 0, \
        cnt = (n) - pos < FRAMES_REPLAY_MEM_PAGE ? (n) - pos : FRAMES_REPLAY_MEM_PAGE)

/* The known bits of bytes [off, off + cnt) of a granule (off + cnt <= 8). */
FRAMES__INLINE uint8_t frames__rmem_mask(size_t off, size_t cnt) {
    return (uint8_t)(((1u << cnt) - 1) << off);
}

/* FRAMES__RMEM_FOR_GRANS(off, cnt, i, o, c, pos): the granule pieces of bytes
   [off, off + cnt) of a page: granule i, first byte o in it, c bytes, pos from off. */
#define FRAMES__RMEM_FOR_GRANS(off, cnt, i, o, c, pos)                                     \
    for (pos = 0, i = (off) >> 3, o = (off)&7, c = (cnt) < 8 - o ? (cnt) : 8 - o; pos < (cnt); \
         pos += c, i++, o = 0, c = (cnt) - pos < 8 ? (cnt) - pos : 8)

FRAMES_REPLAY_DEF int frames_replay_mem_set(frames_replay_mem *m, uint64_t addr,
                                            const uint8_t *v, size_t n) {
    uint64_t no;
    size_t off, cnt, pos, i, o, c, p2;
    int rc = FRAMES_OK;
    FRAMES__RMEM_FOR_PAGES(addr, n, no, off, cnt, pos) {
        frames__rmem_page *p = frames__rmem_page_of(m, no, 1);
        if (!p) {
            rc = m->pages.len >= m->pages.max ? FRAMES_E_LIMIT : FRAMES_E_NOMEM;
            continue;
        }
        FRAMES__RMEM_FOR_GRANS(off, cnt, i, o, c, p2) {
            memcpy(p->g[i].val + o, v + pos + p2, c);
            p->g[i].known = (uint8_t)(p->g[i].known | frames__rmem_mask(o, c));
        }
    }
    return rc;
}

FRAMES_REPLAY_DEF void frames_replay_mem_forget(frames_replay_mem *m, uint64_t addr, size_t n) {
    uint64_t no;
    size_t off, cnt, pos, i, o, c, p2;
    FRAMES__RMEM_FOR_PAGES(addr, n, no, off, cnt, pos) {
        frames__rmem_page *p = frames__rmem_page_of(m, no, 0);
        if (!p) continue;
        FRAMES__RMEM_FOR_GRANS(off, cnt, i, o, c, p2)
            p->g[i].known = (uint8_t)(p->g[i].known & ~frames__rmem_mask(o, c));
    }
}

FRAMES_REPLAY_DEF size_t frames_replay_mem_read(frames_replay_mem *m, uint64_t addr, uint8_t *v,
                                                uint8_t *known, size_t n) {
    uint64_t no;
    size_t off, cnt, pos, i, o, c, p2, k, count = 0;
    FRAMES__RMEM_FOR_PAGES(addr, n, no, off, cnt, pos) {
        const frames__rmem_page *p = frames__rmem_page_of(m, no, 0);
        FRAMES__RMEM_FOR_GRANS(off, cnt, i, o, c, p2) {
            unsigned kb = p ? p->g[i].known : 0;
            for (k = 0; k < c; k++) {
                unsigned in = kb >> (o + k) & 1;
                v[pos + p2 + k] = in ? p->g[i].val[o + k] : 0;
                if (known) known[pos + p2 + k] = (uint8_t)in;
                count += in;
            }
        }
    }
    return count;
}

FRAMES_REPLAY_DEF int frames_replay_mem_compare(frames_replay_mem *m, uint64_t addr,
                                                const uint8_t *v, size_t n) {
    uint64_t no;
    size_t off, cnt, pos, i, o, c, p2;
    int equal = 1;
    FRAMES__RMEM_FOR_PAGES(addr, n, no, off, cnt, pos) {
        const frames__rmem_page *p = frames__rmem_page_of(m, no, 0);
        if (!p) return -1;
        FRAMES__RMEM_FOR_GRANS(off, cnt, i, o, c, p2) {
            uint8_t mk = frames__rmem_mask(o, c);
            if ((p->g[i].known & mk) != mk) return -1;
            if (memcmp(p->g[i].val + o, v + pos + p2, c)) equal = 0;
        }
    }
    return equal;
}

FRAMES_REPLAY_DEF uint64_t frames_replay_mem_pages(const frames_replay_mem *m) {
    return m->pages.len;
}

FRAMES_REPLAY_DEF int frames_replay_mem_cap_hit(const frames_replay_mem *m) { return m->cap_hit; }

#ifdef __cplusplus
}
#endif
#endif /* FRAMES_REPLAY_MEM_IMPLEMENTATION_INCLUDED */
#endif /* FRAMES_REPLAY_IMPLEMENTATION || FRAMES_ALL_IMPLEMENTATION */

/*
 * MIT License
 *
 * Copyright (c) 2026 the frames authors
 *
 * Permission is hereby granted, free of charge, to any person obtaining a copy
 * of this software and associated documentation files (the "Software"), to deal
 * in the Software without restriction, including without limitation the rights
 * to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
 * copies of the Software, and to permit persons to whom the Software is
 * furnished to do so, subject to the following conditions:
 *
 * The above copyright notice and this permission notice shall be included in all
 * copies or substantial portions of the Software.
 *
 * THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
 * IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
 * FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
 * AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
 * LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
 * OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
 * SOFTWARE.
 */
