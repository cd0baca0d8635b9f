/* frames_vprof.h - value profiles of frames traces: redundant loads, silent stores and
   zero-value loads, per instruction. Single-header C99 library (also compiles as C++) on
   top of frames.h. MIT licence, see end of file.

   ---------------------------------------------------------------------------------------
   WHAT IT IS

   The offline counterparts of VClinic's value-profiling clients: feed it the frames of a
   trace (or single accesses from a live tracer) and it counts, per instruction, the loads
   that read again what the same address gave last time with nothing written in between,
   the stores that write what memory already holds, and the loads of zero. Bounded
   memory (capped pages and tables), no allocation per access once they have grown, no
   global state, no stdio.

   ---------------------------------------------------------------------------------------
   USAGE

   In exactly one C or C++ file (frames.h's implementation may live in another file),
   with frames_replay.h's (the call stack and the registers it walks with):

       #define FRAMES_REPLAY_IMPLEMENTATION
       #define FRAMES_VPROF_IMPLEMENTATION
       #include "frames_vprof.h"

   Profiling the frames of a reader r:

       frames_vprof *vp; frames_error err; frames_frame f; frames_vprof_insn top[10];
       if (frames_vprof_open(&vp, NULL, &err) < 0) { fputs(err.message, stderr); return 1; }
       while (frames_reader_next(r, &f) > 0) frames_vprof_add_frame(vp, &f);
       const frames_vprof_stats *s = frames_vprof_stats_get(vp);
       size_t n = frames_vprof_top(vp, FRAMES_VPROF_REDUNDANT_LOADS, top, 10);
       frames_vprof_close(vp);

   A tracer without frames (a DBI client, an emulator) can feed accesses directly with
   frames_vprof_load / _store / _observe and get the same results online.

   ---------------------------------------------------------------------------------------
   API OVERVIEW (details at each declaration below)

     frames_vprof_options_default, frames_vprof_open / _close
     frames_vprof_add_frame                 one frame of a trace (only std_frames count)
     frames_vprof_load / _store / _observe  single accesses, for live tracers
     frames_vprof_stats_get, frames_vprof_error
     frames_vprof_top, frames_vprof_metric_of   the instructions ranked by a metric
     frames_vprof_client_add                the framework: filters, batches of records
     frames_vprof_context_path / _pc / _parent, frames_vprof_stack_stats   calling contexts
     frames_vprof_builtin_open / _close / _top / _stats_get   zero-loads, redundant-loads,
                                            silent-stores, dead-stores, values

   ---------------------------------------------------------------------------------------
   THE MODEL (exact definitions; docs/vprof.md has worked examples)

   Accesses. Only memory operands of std_frames count; register operands are ignored.
   An access covers the bytes [address, address + size) where size is the length of the
   operand's value (bit_length is only used for a store whose value is missing, rounded
   up to whole bytes). Within one frame the operands are taken in this order:
     1. operand_pre_list, in order: `read` set -> a LOAD of the value; otherwise an
        OBSERVATION of the memory content before the instruction (the recording
        convention for "value before it is overwritten": read = written = false).
     2. operand_post_list, in order: `written` set -> a STORE of the value; otherwise an
        OBSERVATION of the content after the instruction.
     3. pre-list operands with `written` set and no written post-list operand at the same
        address (e.g. a read-modify-write that a tracer lists in pre only) -> a STORE of an
        unknown value.
   Memory operands without value (and without size), larger than FRAMES_VPROF_MAX_ACCESS
   bytes or wrapping past the end of the address space are skipped and counted.

   Memory content. Memory is a set of bytes. A byte's value is known after a load, store
   or observation that covers it, unknown before any such access and after a store of
   unknown value covering it. All threads share one memory (frames in trace order).

   Redundant load: the previous load with the same start address had the same size and
   the same value, and no store (of any value, silent or not, by any thread) has written
   any byte of the loaded range since that previous load. Overlapping loads at other
   addresses neither make nor break redundancy; a load of a different size at the same
   address is not redundant and becomes the previous load. Values of up to 8 bytes are
   compared exactly, longer values (SIMD) by a 64-bit hash of their bytes.
   Silent store: every byte the store writes had a known value right before the store,
   equal to the byte written. A store with any unknown byte is "unchecked" (neither
   silent nor not silent); checked_stores counts the others.
   Zero-value load: every byte of the loaded value is zero.

   Bounded memory. Memory content is frames_replay.h's memory alone (one model for the
   library: bytes, known or not): pages of FRAMES_REPLAY_MEM_PAGE bytes, at most
   max_addresses / 8 of them (as much memory as max_addresses 8-byte granules took when
   content was a table of granules: about 70 MiB at the default 2^21). Previous loads are
   a table by start address of at most `max_addresses` entries, and where they start a
   second such memory. An access that would need a new page or entry beyond a cap is
   counted in stats.untracked_accesses and address_cap_hit is set: loads there are not
   redundant and stores there are unchecked, so every count is then a lower bound.
   stats.content_granules is the granules of the pages held. Per-instruction rows (keyed
   by the frame's address) are bounded by `max_instructions`; accesses of instructions
   beyond it count only in the totals.

   ---------------------------------------------------------------------------------------
   OPTIONS (#define before including the implementation)

   FRAMES_VPROF_STATIC    this header's functions static (and frames.h's too when it is
                          first included through this header)
   frames.h's options hold here too (FRAMES_STATIC, FRAMES_DEF, FRAMES_MALLOC & co,
   FRAMES_NO_POSIX, FRAMES_NO_TEXT, and FRAMES_NO_STDIO: this header needs no stdio).
   ---------------------------------------------------------------------------------------
   SECTIONS (in file order; each starts with a banner of '=' or '-' lines,
   the title on the line below it: grep -n '^   TITLE' finds it)

   Options, rows and statistics
   The profiler
   The framework: clients, records, calling contexts
   Built-in profilers
   IMPLEMENTATION
     State: the memory model, tables of loads and rows
     Lifecycle
     Accesses: loads, stores, observations
     Framework: contexts
     Framework: data objects
     Framework: records of a frame
     Frames
     Ranking
     Built-in profilers
*/
#ifndef FRAMES_VPROF_H_INCLUDED
#define FRAMES_VPROF_H_INCLUDED

#if defined(FRAMES_VPROF_STATIC) && !defined(FRAMES_STATIC) && !defined(FRAMES_H_INCLUDED)
#define FRAMES_STATIC   /* frames.h comes with it: one private copy of both */
#endif
#include "frames.h"
#if defined(FRAMES_VPROF_STATIC) && !defined(FRAMES_REPLAY_H_INCLUDED)
#define FRAMES_REPLAY_STATIC   /* frames_replay.h comes with it: one private copy */
#endif
#include "frames_replay.h"

#if defined(FRAMES_VPROF_STATIC) && !defined(FRAMES_VPROF_DEF)   /* even after a shared frames.h */
#define FRAMES_VPROF_DEF FRAMES__STATIC_DEF
#elif !defined(FRAMES_VPROF_DEF)
#define FRAMES_VPROF_DEF FRAMES_DEF
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ======================================================================================
   Options, rows and statistics
   ====================================================================================== */

#define FRAMES_VPROF_MAX_ACCESS 4096u   /* largest access in bytes that is profiled */

typedef struct frames_vprof_options {
    uint64_t max_addresses;     /* entries per memory table (default 1 << 21) */
    uint64_t max_instructions;  /* per-instruction rows (default 1 << 20) */
    void *alloc_ctx;            /* passed to FRAMES_MALLOC & co */
    /* the framework (clients): */
    uint32_t arch;              /* frames header arch and machine: the call stack and the */
    uint64_t machine;           /*   register model (arch 0: no contexts, no registers) */
    uint32_t context_depth;     /* call sites kept per context, outermost (default 64) */
    uint64_t max_contexts;      /* calling context tree nodes (default 1 << 20) */
    uint32_t max_stack_depth;   /* call stack frames per thread (default 4096) */
    uint64_t sample_on, sample_every;  /* records for sample_on of every sample_every
                                  std_frames (0: every frame); the models see them all */
    int counts_off;             /* 1: for clients only: the memory model (their records'
                                  old values) is kept, the per-instruction rows and the
                                  redundant, silent and zero counts are not (stats count
                                  loads and stores only; frames_vprof_top finds nothing) */
} frames_vprof_options;

FRAMES_VPROF_DEF void frames_vprof_options_default(frames_vprof_options *o);

/* One instruction (frame address) and its accesses. */
typedef struct frames_vprof_insn {
    uint64_t address;
    uint64_t loads, redundant_loads, zero_loads;
    uint64_t stores, checked_stores, silent_stores;
} frames_vprof_insn;

typedef struct frames_vprof_stats {
    uint64_t frames, std_frames;
    uint64_t loads, redundant_loads, zero_loads;
    uint64_t stores;               /* every store, of known or unknown value */
    uint64_t checked_stores;       /* stores whose every byte had a known old value */
    uint64_t silent_stores;
    uint64_t unknown_value_stores; /* stores whose written value the trace lacks */
    uint64_t skipped_operands;     /* memory operands not profiled (see THE MODEL) */
    uint64_t untracked_accesses;   /* accesses a full memory table could not take */
    uint64_t load_addresses;       /* entries in the previous-load table */
    uint64_t content_granules;     /* 8-byte granules of the memory model's pages */
    uint64_t instructions;         /* per-instruction rows */
    uint64_t untracked_instructions; /* accesses of instructions beyond the row cap */
    uint64_t max_addresses, max_instructions;
    int address_cap_hit, instruction_cap_hit;
} frames_vprof_stats;

/* What frames_vprof_top ranks by. */
typedef enum frames_vprof_metric {
    FRAMES_VPROF_REDUNDANT_LOADS = 0,
    FRAMES_VPROF_SILENT_STORES = 1,
    FRAMES_VPROF_ZERO_LOADS = 2,
    FRAMES_VPROF_LOADS = 3,
    FRAMES_VPROF_STORES = 4,
    FRAMES_VPROF_ACCESSES = 5      /* loads + stores: every row */
} frames_vprof_metric;

/* ======================================================================================
   The profiler
   ====================================================================================== */

typedef struct frames_vprof frames_vprof;

/* Create a profiler (o may be NULL). Returns FRAMES_OK or FRAMES_E_NOMEM/E_INVALID. */
FRAMES_VPROF_DEF int frames_vprof_open(frames_vprof **vp, const frames_vprof_options *o,
                                 frames_error *err);
FRAMES_VPROF_DEF void frames_vprof_close(frames_vprof *vp);

/* Profile one frame (any kind; only std_frames have accesses). Returns FRAMES_OK, or
   FRAMES_E_NOMEM when a table could not grow (the access is then treated as untracked,
   the state stays consistent and profiling can go on). */
FRAMES_VPROF_DEF int frames_vprof_add_frame(frames_vprof *vp, const frames_frame *f);

/* Single accesses, for tracers that feed the profiler directly. `pc` names the
   instruction; a store's value may be NULL (unknown value). */
FRAMES_VPROF_DEF int frames_vprof_load(frames_vprof *vp, uint64_t pc, uint64_t address,
                                 const void *value, size_t size);
FRAMES_VPROF_DEF int frames_vprof_store(frames_vprof *vp, uint64_t pc, uint64_t address,
                                  const void *value, size_t size);
FRAMES_VPROF_DEF int frames_vprof_observe(frames_vprof *vp, uint64_t address, const void *value,
                                    size_t size);

FRAMES_VPROF_DEF const frames_vprof_stats *frames_vprof_stats_get(const frames_vprof *vp);
/* The error of the last failing call (code 0 if none). */
FRAMES_VPROF_DEF const frames_error *frames_vprof_error(const frames_vprof *vp);

/* The (at most) n instructions with the largest nonzero `metric`, largest first, ties by
   lower address, copied into out[0..n). Returns how many were written. No allocation. */
FRAMES_VPROF_DEF size_t frames_vprof_top(const frames_vprof *vp, frames_vprof_metric metric,
                                   frames_vprof_insn *out, size_t n);
/* The value of `metric` for a row. */
FRAMES_VPROF_DEF uint64_t frames_vprof_metric_of(const frames_vprof_insn *row,
                                           frames_vprof_metric metric);


/* ======================================================================================
   The framework: clients, records, calling contexts
   VClinic's shape in our conventions. A client registers an instruction filter, an
   operand filter and a callback; for every std_frame that passes (and falls in a
   sampling window) the callback receives one batch: the records of the frame's operands
   that pass, reads (pre-list) first. Contexts come from the call stack of
   frames_replay.h (frames_replay_stack_*), registers' old values from its register model
   (frames_replay_regs_*), memory's old values from the profiler's memory model
   (THE MODEL above). Options arch/machine name the trace's architecture (the frames
   header's) for the call stack and the registers; 0 leaves contexts empty.
   ====================================================================================== */

/* Operand filter bits (frames_vprof_client.operands) and record flags. */
#define FRAMES_VPROF_MEM   0x01u    /* memory operands */
#define FRAMES_VPROF_GPR   0x02u    /* general purpose (and other non-vector) registers */
#define FRAMES_VPROF_SIMD  0x04u    /* vector and float registers (xmm, ymm, zmm, st, v, q, d, s) */
#define FRAMES_VPROF_READ  0x10u    /* values read (operand_pre_list, `read` set) */
#define FRAMES_VPROF_WRITE 0x20u    /* values written (operand_post_list, `written` set) */
#define FRAMES_VPROF_INT   0x40u    /* integer-typed values */
#define FRAMES_VPROF_FLOAT 0x80u    /* float-typed values */

/* Element type of a value. x86 (options arch FRAMES_ARCH_I386): decoded from the
   instruction's prefixes and opcode: SSE/AVX/AVX-512 ps and ss forms give FLOAT32
   lanes, pd and sd forms FLOAT64 lanes, x87 m32fp/m64fp forms FLOAT32/FLOAT64, integer
   SIMD and everything else integers. Other architectures: a frame with a vector/float
   register operand is a float instruction, its 4-byte values FLOAT32, 8-byte and wider
   ones FLOAT64 lanes (sizes a multiple of 4 but not 8: FLOAT32 lanes). General register
   operands are always integers. Integers by size: INT8..INT64; wider: INT64 lanes, odd
   sizes INT8 lanes. */
typedef enum frames_vprof_type {
    FRAMES_VPROF_INT8 = 1, FRAMES_VPROF_INT16, FRAMES_VPROF_INT32, FRAMES_VPROF_INT64,
    FRAMES_VPROF_FLOAT32, FRAMES_VPROF_FLOAT64
} frames_vprof_type;

typedef struct frames_vprof_record {
    uint64_t index;            /* the instruction: std_frame number from 0 */
    uint64_t pc, thread;
    uint64_t address;          /* memory operands */
    const char *reg;           /* register operands: the name as the trace spells it */
    uint32_t reg_len;
    uint32_t flags;            /* FRAMES_VPROF_MEM/GPR/SIMD | READ/WRITE | INT/FLOAT */
    const uint8_t *value;      /* size bytes, little-endian */
    uint32_t size, elem_size;
    frames_vprof_type type;
    const uint8_t *old;        /* writes: the value before, when every byte was known;
                                  NULL otherwise */
    uint32_t context;          /* context handle: call path and pc (0: contexts off) */
    uint32_t object;           /* memory: the data object (heap block or global) holding
                                  address (0: none or data attribution off), see
                                  frames_vprof_object_get */
} frames_vprof_record;

typedef struct frames_vprof_client {
    uint32_t operands;         /* FRAMES_VPROF_* bits: a record passes when its class,
                                  direction and type bits are all asked for */
    uint32_t min_size, max_size;   /* value sizes in bytes (0: no bound) */
    /* instruction filter (NULL: every instruction) */
    int (*insn_filter)(void *ctx, const frames_std_frame *sf);
    void (*batch)(void *ctx, const frames_vprof_record *records, size_t n);
    void *ctx;
} frames_vprof_client;

/* Register a client (at most 16; before the first frame). FRAMES_OK or E_INVALID/E_LIMIT. */
FRAMES_VPROF_DEF int frames_vprof_client_add(frames_vprof *vp, const frames_vprof_client *c);

/* Calling contexts: a tree of (parent, pc) nodes. The context of an instruction is the
   node of its pc under the node of its function's call path, which is the chain of
   call sites of the call stack, outermost first, at most context_depth of them (the
   outermost ones). Handles are 1.. (0: none). */
/* The pcs of context h, outermost first (call sites, then the instruction), into
   out[0..cap); returns the path's length (may exceed cap). */
FRAMES_VPROF_DEF size_t frames_vprof_context_path(const frames_vprof *vp, uint32_t h,
                                                  uint64_t *out, size_t cap);
FRAMES_VPROF_DEF uint64_t frames_vprof_context_pc(const frames_vprof *vp, uint32_t h);
FRAMES_VPROF_DEF uint32_t frames_vprof_context_parent(const frames_vprof *vp, uint32_t h);
/* Data objects: heap blocks from the allocator calls of the trace. `classify` says what
   the instruction at pc is when it starts an allocator (FRAMES_VPROF_MALLOC & co, 0 for
   none); it is asked once per context of a pc (a symbol lookup of the caller's, e.g.
   "malloc", "_Znwm"). x86-64 System V only: sizes and pointers from rdi, rsi, rax. */
enum { FRAMES_VPROF_MALLOC = 1, FRAMES_VPROF_CALLOC, FRAMES_VPROF_REALLOC, FRAMES_VPROF_FREE };
typedef int (*frames_vprof_classify_fn)(void *ctx, uint64_t pc);
FRAMES_VPROF_DEF void frames_vprof_data(frames_vprof *vp, frames_vprof_classify_fn classify,
                                        void *ctx);
enum { FRAMES_VPROF_HEAP = 1, FRAMES_VPROF_GLOBAL, FRAMES_VPROF_STACK };
typedef struct frames_vprof_object {
    uint64_t address, size;
    uint32_t context;          /* heap: the call path of the allocating call */
    int live;                  /* not freed yet (a global: always) */
    int kind;                  /* FRAMES_VPROF_HEAP, _GLOBAL or _STACK (one object for
                                  every access between a thread's rsp and the highest rsp
                                  it had, x86-64 with frames_vprof_data) */
    const char *name;          /* global: its symbol (name_len bytes, from the finder) */
    size_t name_len;
} frames_vprof_object;
/* Globals and statics: `find` names the data object that holds addr (*start, *size, and
   its symbol, a string that must stay valid while the profile is open) and returns 1,
   or returns 0 (e.g. with frames_sym_lookup_data). It is asked for memory accesses
   outside the objects known so far; an object found once is known from then on. */
typedef int (*frames_vprof_global_fn)(void *ctx, uint64_t addr, uint64_t *start,
                                      uint64_t *size, const char **name, size_t *name_len);
FRAMES_VPROF_DEF void frames_vprof_globals(frames_vprof *vp, frames_vprof_global_fn find,
                                           void *ctx);
/* Object h (1..), or NULL. */
FRAMES_VPROF_DEF const frames_vprof_object *frames_vprof_object_get(const frames_vprof *vp,
                                                                    uint32_t h);
/* The call stack the profiler walks with (NULL without an architecture). */
FRAMES_VPROF_DEF const frames_replay_stack_stats *frames_vprof_stack_stats(const frames_vprof *vp);

/* ======================================================================================
   Built-in profilers
   Written on the client API above. Entries are ranked by bytes (then count, then
   contexts). See docs/vprof.md for each definition.
     zero-loads       per context: loads of all-zero values; nonzero[] is the OR of every
                      byte loaded there (0: that byte was always zero), float_seen the
                      float fields ever nonzero (1 sign, 2 exponent, 4 mantissa)
     redundant-loads  pairs (previous load -> this load) of the same address and size
                      that loaded the same value (LoadSpy's definition: stores between
                      do not matter)
     silent-stores    per context: writes of the value already there (memory; with
                      registers set, register writes too); floats equal within the
                      relative delta approx (0: exact)
     dead-stores      pairs (dead write -> killing write): bytes written again with no
                      read between; bytes counted, count = killing writes
     values           (context, value): how often each value was accessed
   ====================================================================================== */

typedef struct frames_vprof_builtin frames_vprof_builtin;

typedef struct frames_vprof_builtin_options {
    int registers;           /* silent-stores: register writes too */
    double approx;           /* silent-stores: relative delta for floats (0: exact) */
    uint64_t max_entries;    /* distinct entries kept (default 1 << 20) */
    uint64_t max_addresses;  /* shadow memory entries (default 1 << 21) */
    int data;                /* entries per data object too (frames_vprof_data first) */
    int threads;             /* entries per thread too (of the later access of a pair) */
} frames_vprof_builtin_options;

typedef struct frames_vprof_entry {
    uint32_t context[2];     /* one context, or a pair (earlier access, later access) */
    uint32_t ncontexts;
    uint32_t object;         /* with data, the data object the (later) access hit: by
                                object_kind, a heap block's allocating call path (a
                                context handle) or a global's object handle; 0 none */
    int object_kind;         /* FRAMES_VPROF_HEAP, _GLOBAL or _STACK (0: none) */
    uint64_t thread;         /* with threads: the thread of the (later) access */
    uint32_t size;           /* zero-loads, values: access size (the largest seen) */
    uint64_t count;          /* wasteful accesses */
    uint64_t bytes;          /* their bytes */
    uint64_t total;          /* single-context profilers: every access of the context */
    uint64_t value;          /* values: the value's first 8 bytes */
    uint8_t nonzero[32];     /* zero-loads: OR of the bytes loaded */
    uint32_t float_seen;     /* zero-loads of floats: fields seen nonzero */
    int is_float;
    frames_vprof_type type;  /* zero-loads, values: the element type of the accesses (of
                                the last one, should an instruction's vary) */
} frames_vprof_entry;

typedef struct frames_vprof_builtin_stats {
    uint64_t records;        /* records the profiler looked at */
    uint64_t total_bytes;    /* the bytes of every wasteful access (shares are of this) */
    uint64_t unknown_old;    /* silent-stores: writes whose old value was unknown */
    uint64_t dropped;        /* entries or shadow cells over the caps: lower bounds */
} frames_vprof_builtin_stats;

FRAMES_VPROF_DEF void frames_vprof_builtin_options_default(frames_vprof_builtin_options *o);
/* name: "zero-loads", "redundant-loads", "silent-stores", "dead-stores", "values".
   Registers itself as a client of vp. FRAMES_OK, FRAMES_E_INVALID (unknown name). */
FRAMES_VPROF_DEF int frames_vprof_builtin_open(frames_vprof_builtin **b, frames_vprof *vp,
                                               const char *name,
                                               const frames_vprof_builtin_options *o,
                                               frames_error *err);
FRAMES_VPROF_DEF void frames_vprof_builtin_close(frames_vprof_builtin *b);
/* The n entries with most bytes, best first, into out. Returns how many. */
FRAMES_VPROF_DEF size_t frames_vprof_builtin_top(const frames_vprof_builtin *b,
                                                 frames_vprof_entry *out, size_t n);
FRAMES_VPROF_DEF const frames_vprof_builtin_stats *
frames_vprof_builtin_stats_get(const frames_vprof_builtin *b);

#ifdef __cplusplus
}
#endif
#endif /* FRAMES_VPROF_H_INCLUDED */

/* ======================================================================================
   IMPLEMENTATION
   ====================================================================================== */
#if defined(FRAMES_VPROF_IMPLEMENTATION) || defined(FRAMES_ALL_IMPLEMENTATION)
#ifndef FRAMES_VPROF_IMPLEMENTATION_INCLUDED
#define FRAMES_VPROF_IMPLEMENTATION_INCLUDED

#define FRAMES__WANT_HELPERS
#include "frames.h"
#include <stddef.h>
#if defined(FRAMES_STATIC) || defined(FRAMES_REPLAY_STATIC)
/* the replay's functions are private to this file: its implementation goes here too */
#define FRAMES_REPLAY_IMPLEMENTATION
#include "frames_replay.h"
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* --------------------------------------------------------------------------------------
   State: the memory model, tables of loads and rows
   -------------------------------------------------------------------------------------- */

/* Every table is a frames__htab whose slots start with the table's hash and then the
   uint64_t key (frames__vprof_find, _insert). */

/* Previous load at a start address. The hash is frames__mix64(address), a bijection,
   but for its top bit (the table's mark): that bit is kept with the size, so the slot is
   its own key in 24 bytes (a quarter less memory to miss in than with the address). */
typedef struct frames__vprof_load {
    uint64_t hash;
    uint64_t value;     /* bytes (size <= 8, little-endian) or a hash of them */
    uint32_t size_top;  /* size << 1 | the top bit of frames__mix64(address) */
} frames__vprof_load;


typedef struct frames__vprof_row {
    uint64_t hash;
    frames_vprof_insn insn;   /* its address is the key */
} frames__vprof_row;

#define FRAMES__VPROF_MAX_CLIENTS 16u
#define FRAMES__VPROF_CCACHE 4096u

/* A context node slot: the key is a hash of (parent, pc), the node is checked. */
typedef struct frames__vprof_cslot {
    uint64_t hash;
    uint64_t key;
    uint32_t id;
} frames__vprof_cslot;

typedef struct frames__vprof_node {
    uint64_t pc;
    uint32_t parent;
    int alloc;                 /* data: the pc starts an allocator (-1: not asked yet) */
} frames__vprof_node;

/* An allocator call waiting for its return. */
typedef struct frames__vprof_pending {
    uint64_t thread, ret, size, old;
    uint32_t context;
    int kind;
} frames__vprof_pending;
#define FRAMES__VPROF_PENDING 64u
#define FRAMES__VPROF_STACK_THREADS 256u   /* threads whose stack is known; later ones: none */

struct frames_vprof {
    frames_vprof_options opt;
    frames_vprof_stats stats;
    frames__htab loads, rows;
    frames_replay_mem *mem;     /* the memory model: frames_replay.h's, alone */
    frames_replay_mem *starts;  /* its known bytes: where a previous load starts (so that a
                                   store finds the loads it ends without probing every
                                   start address) */
    uint32_t max_load_size;     /* largest load seen: bounds store invalidation probes */
    frames_error err;
    /* the framework */
    frames_vprof_client clients[FRAMES__VPROF_MAX_CLIENTS];
    size_t nclients;
    int want_regs;
    frames_replay_stack *stack;
    frames_replay_regs *regs;
    uint64_t stack_errors;
    frames__htab contexts;           /* (parent, pc) -> node */
    frames__vprof_node *nodes;
    size_t nnodes, capnodes;
    struct { uint64_t key; uint32_t id; } ccache[FRAMES__VPROF_CCACHE];
    int context_cap_hit;
    frames_vprof_record *recs, *pass;       /* this frame's records, one client's share */
    size_t nrecs, caprecs, cappass;
    uint8_t oldbuf[16384];                  /* old values of this frame's writes */
    size_t oldlen;
    uint64_t window_pos;
    uint64_t objects_dropped;               /* allocations not tracked */
    /* data objects */
    frames_vprof_classify_fn classify;
    void *classify_ctx;
    frames_vprof_global_fn find_global;
    void *find_global_ctx;
    uint32_t stack_object;                  /* the handle of "the stack", 0 before */
    struct { uint64_t thread, top; } stack_tops[FRAMES__VPROF_STACK_THREADS];
    size_t nstack_tops;
    frames_vprof_object *objects;           /* every block, by handle - 1 */
    size_t nobjects, capobjects;
    uint32_t *live;                         /* live blocks' handles sorted by address */
    size_t nlive, caplive;
    frames__vprof_pending pending[FRAMES__VPROF_PENDING];
    size_t npending;
};


/* The error goes to the profile (frames_vprof_error) and to *err when given. */
static int frames__vprof_fail(frames_vprof *vp, frames_error *err, int code, const char *fmt,
                              ...) FRAMES__PRINTF(4, 5);
static int frames__vprof_fail(frames_vprof *vp, frames_error *err, int code, const char *fmt,
                              ...) {
    frames_error e;
    va_list ap;
    va_start(ap, fmt);
    frames__vfail(&e, code, FRAMES_NO_POS, vp ? vp->stats.frames : FRAMES_NO_POS,
                  FRAMES__FAIL_PLAIN, fmt, ap);
    va_end(ap);
    if (vp) vp->err = e;
    if (err) *err = e;
    return code;
}

FRAMES_VPROF_DEF void frames_vprof_options_default(frames_vprof_options *o) {
    memset(o, 0, sizeof *o);
    o->max_addresses = (uint64_t)1 << 21;
    o->max_instructions = (uint64_t)1 << 20;
    o->context_depth = 64;
    o->max_contexts = (uint64_t)1 << 20;
    o->max_stack_depth = 4096;
}

/* A table's bound as a size_t (a 32-bit host's tables stop at its address space). */
static size_t frames__vprof_bound(uint64_t n) {
    return n > (uint64_t)SIZE_MAX ? SIZE_MAX : (size_t)n;
}

/* Pages of the memory model for max_addresses 8-byte granules' worth of memory: a page
   costs about as much as 8 granule entries did when memory was one table of granules. */
static uint64_t frames__vprof_pages(uint64_t max_addresses) {
    return max_addresses / 8 + (max_addresses % 8 != 0);
}

/* The key of a slot: the uint64_t after the table's hash. */
static uint64_t frames__vprof_key(const void *slot) {
    uint64_t k;
    memcpy(&k, (const unsigned char *)slot + sizeof(uint64_t), sizeof k);
    return k;
}

/* The previous load at a, or NULL; *h: frames__mix64(a). */
static frames__vprof_load *frames__vprof_load_find(const frames_vprof *vp, uint64_t a,
                                                   uint64_t *h) {
    size_t at = 0;
    frames__vprof_load *l;
    *h = frames__mix64(a);
    while ((l = FRAMES__HTAB_NEXT(&vp->loads, frames__vprof_load, *h, &at)) &&
           (l->size_top & 1) != (uint32_t)(*h >> 63)) {
    }
    return l;
}

static int frames__vprof_fail(frames_vprof *vp, frames_error *err, int code, const char *fmt,
                              ...) FRAMES__PRINTF(4, 5);

/* The previous load at a; when absent it is added (*created set, value and size 0).
   NULL when the table is at its cap (*rc = 0) or cannot grow (*rc < 0). */
static frames__vprof_load *frames__vprof_load_slot(frames_vprof *vp, uint64_t a, int *created,
                                                   int *rc) {
    uint64_t h;
    frames__vprof_load *l = frames__vprof_load_find(vp, a, &h);
    *rc = FRAMES_OK;
    *created = 0;
    if (l) return l;
    if (vp->loads.len >= vp->loads.max) return NULL;
    if (!(l = (frames__vprof_load *)frames__htab_add(&vp->loads, h, vp->opt.alloc_ctx))) {
        *rc = frames__vprof_fail(vp, NULL, FRAMES_E_NOMEM,
                                 "out of memory for a profile table of %llu entries",
                                 (unsigned long long)vp->loads.len);
        return NULL;
    }
    l->size_top = (uint32_t)(h >> 63);
    *created = 1;
    return l;
}

/* Slot holding key, or NULL. */
static void *frames__vprof_find(const frames__htab *t, uint64_t key) {
    size_t at = 0;
    void *s;
    while ((s = frames__htab_next(t, frames__mix64(key), &at)) && frames__vprof_key(s) != key) {
    }
    return s;
}

/* Slot for key; when absent it is inserted zeroed but for key, and *created is set.
   NULL when the table is at its cap (*rc = 0) or cannot grow (*rc < 0). */
static void *frames__vprof_insert(frames_vprof *vp, frames__htab *t, uint64_t key,
                                  int *created, int *rc) {
    void *s = frames__vprof_find(t, key);
    *rc = FRAMES_OK;
    *created = 0;
    if (s) return s;
    if (t->len >= t->max) return NULL;
    if (!(s = frames__htab_add(t, frames__mix64(key), vp->opt.alloc_ctx))) {
        *rc = frames__vprof_fail(vp, NULL, FRAMES_E_NOMEM,
                                 "out of memory for a profile table of %llu entries",
                                 (unsigned long long)t->len);
        return NULL;
    }
    memcpy((unsigned char *)s + sizeof(uint64_t), &key, sizeof key);
    *created = 1;
    return s;
}

/* --------------------------------------------------------------------------------------
   Lifecycle
   -------------------------------------------------------------------------------------- */

FRAMES_VPROF_DEF int frames_vprof_open(frames_vprof **out, const frames_vprof_options *o,
                                 frames_error *err) {
    frames_vprof_options def;
    frames_vprof *vp;
    *out = NULL;
    if (!o) {
        frames_vprof_options_default(&def);
        o = &def;
    }
    if (o->max_addresses == 0 || o->max_instructions == 0)
        return frames__vprof_fail(NULL, err, FRAMES_E_INVALID,
                                  "max_addresses and max_instructions must not be 0");
    vp = (frames_vprof *)FRAMES_MALLOC(sizeof *vp, o->alloc_ctx);
    if (!vp) return frames__vprof_fail(NULL, err, FRAMES_E_NOMEM, "out of memory");
    memset(vp, 0, sizeof *vp);
    vp->opt = *o;
    vp->stats.max_addresses = o->max_addresses;
    vp->stats.max_instructions = o->max_instructions;
    frames__htab_init(&vp->loads, sizeof(frames__vprof_load),
                      frames__vprof_bound(o->max_addresses));
    frames__htab_init(&vp->rows, sizeof(frames__vprof_row),
                      frames__vprof_bound(o->max_instructions));
    frames__htab_init(&vp->contexts, sizeof(frames__vprof_cslot), 
                      frames__vprof_bound(o->max_contexts ? o->max_contexts : 1));
    if (frames_replay_mem_open(&vp->mem, frames__vprof_pages(o->max_addresses), o->alloc_ctx,
                               err) < 0 ||
        frames_replay_mem_open(&vp->starts, frames__vprof_pages(o->max_addresses), o->alloc_ctx,
                               err) < 0) {
        frames_vprof_close(vp);
        return FRAMES_E_NOMEM;
    }
    if (o->arch) {
        frames_replay_stack_options so;
        int rc;
        frames_replay_stack_options_default(&so);
        if (o->max_stack_depth) so.max_depth = o->max_stack_depth;
        so.alloc_ctx = o->alloc_ctx;
        rc = frames_replay_stack_open(&vp->stack, o->arch, o->machine, &so, err);
        if (rc == FRAMES_OK)
            rc = frames_replay_regs_open(&vp->regs, o->arch, o->machine, 0, o->alloc_ctx, err);
        if (rc < 0) {
            frames_vprof_close(vp);
            return rc;
        }
    }
    *out = vp;
    if (err) memset(err, 0, sizeof *err);
    return FRAMES_OK;
}

FRAMES_VPROF_DEF void frames_vprof_close(frames_vprof *vp) {
    void *ctx;
    if (!vp) return;
    ctx = vp->opt.alloc_ctx;
    frames__htab_free(&vp->loads, ctx);
    frames_replay_mem_close(vp->mem);
    frames_replay_mem_close(vp->starts);
    frames__htab_free(&vp->rows, ctx);
    frames__htab_free(&vp->contexts, ctx);
    FRAMES_FREE(vp->nodes, ctx);
    FRAMES_FREE(vp->recs, ctx);
    FRAMES_FREE(vp->pass, ctx);
    FRAMES_FREE(vp->objects, ctx);
    FRAMES_FREE(vp->live, ctx);
    frames_replay_stack_close(vp->stack);
    frames_replay_regs_close(vp->regs);
    FRAMES_FREE(vp, ctx);
}

FRAMES_VPROF_DEF const frames_vprof_stats *frames_vprof_stats_get(const frames_vprof *vp) {
    return &vp->stats;
}

FRAMES_VPROF_DEF const frames_error *frames_vprof_error(const frames_vprof *vp) { return &vp->err; }

/* --------------------------------------------------------------------------------------
   Accesses: loads, stores, observations
   -------------------------------------------------------------------------------------- */

/* The row of instruction pc, or NULL beyond the row cap. */
static frames_vprof_insn *frames__vprof_row_of(frames_vprof *vp, uint64_t pc, int *rc) {
    int created;
    frames__vprof_row *r =
        (frames__vprof_row *)frames__vprof_insert(vp, &vp->rows, pc, &created, rc);
    if (!r) {
        if (*rc == FRAMES_OK) vp->stats.instruction_cap_hit = 1;
        vp->stats.untracked_instructions++;
        return NULL;
    }
    vp->stats.instructions = vp->rows.len;
    return &r->insn;
}

static uint64_t frames__vprof_value_key(const uint8_t *v, size_t n) {
    uint64_t k = 0;
    size_t i;
    if (n <= 8) {
        for (i = 0; i < n; i++) k |= (uint64_t)v[i] << (8 * i);
        return k;
    }
    return frames__mix64(frames__hash_bytes(FRAMES__HASH_SEED ^ n, v, n));
}

/* Call fn for each granule piece of [a, a+n): granule index, first byte offset in the
   granule, byte count, offset into the access. */
#define FRAMES__VPROF_FOR_GRANULES(a, n, g, off, cnt, pos)                                   \
    for (pos = 0, g = (a) >> 3, off = (unsigned)((a)&7),                                     \
        cnt = (unsigned)((n) - pos < 8u - off ? (n) - pos : 8u - off);                        \
         pos < (n); pos += cnt, g++, off = 0,                                                \
        cnt = (unsigned)((n) - pos < 8u ? (n) - pos : 8u))

/* Record known content. Returns 1 if some byte could not be tracked. */
static int frames__vprof_set_known(frames_vprof *vp, uint64_t a, const uint8_t *v, size_t n,
                                   int *rc) {
    int r = frames_replay_mem_set(vp->mem, a, v, n);
    if (r == FRAMES_E_NOMEM)
        *rc = frames__vprof_fail(vp, NULL, r, "out of memory for the memory model");
    return r != FRAMES_OK;
}

static void frames__vprof_content_stats(frames_vprof *vp) {
    vp->stats.content_granules = frames_replay_mem_pages(vp->mem) * (FRAMES_REPLAY_MEM_PAGE / 8);
    vp->stats.load_addresses = vp->loads.len;
}

/* A store to [a, a+n) ends every previous load that overlaps it. Those loads start at
   most max_load_size - 1 bytes before a, where the starts memory knows a byte. */
static void frames__vprof_invalidate_loads(frames_vprof *vp, uint64_t a, size_t n) {
    uint64_t lo, end = a + n, c;   /* no wrap: checked by the callers */
    uint8_t v[64], known[64];
    size_t k, len;
    if (vp->loads.len == 0) return;
    lo = a >= vp->max_load_size - 1 ? a - (vp->max_load_size - 1) : 0;
    for (c = lo; c < end; c += len) {
        len = end - c < sizeof v ? (size_t)(end - c) : sizeof v;
        if (!frames_replay_mem_read(vp->starts, c, v, known, len)) continue;
        for (k = 0; k < len; k++) {
            frames__vprof_load *l;
            uint64_t h;
            if (!known[k] || !(l = frames__vprof_load_find(vp, c + k, &h))) continue;
            if (c + k + (l->size_top >> 1) > a) {
                frames__htab_erase(&vp->loads, l);
                frames_replay_mem_forget(vp->starts, c + k, 1);
            }
        }
    }
}

/* counts_off: an access only updates the memory model (v NULL: a store of an unknown
   value) and is counted in *count. */
static int frames__vprof_model_only(frames_vprof *vp, uint64_t a, const uint8_t *v, size_t n,
                                    uint64_t *count) {
    int rc = FRAMES_OK;
    (*count)++;
    if (!v) {
        frames_replay_mem_forget(vp->mem, a, n);
        vp->stats.unknown_value_stores++;
    } else if (frames__vprof_set_known(vp, a, v, n, &rc)) {
        vp->stats.untracked_accesses++;
        vp->stats.address_cap_hit |= rc == FRAMES_OK;
    }
    return rc;
}

static int frames__vprof_bad_range(frames_vprof *vp, uint64_t a, size_t n) {
    if (n == 0 || n > FRAMES_VPROF_MAX_ACCESS || a > UINT64_MAX - n) {
        vp->stats.skipped_operands++;
        return 1;
    }
    return 0;
}

FRAMES_VPROF_DEF int frames_vprof_load(frames_vprof *vp, uint64_t pc, uint64_t a, const void *value,
                                 size_t n) {
    const uint8_t *v = (const uint8_t *)value;
    frames_vprof_insn *row;
    frames__vprof_load *l;
    static const uint8_t one = 1;
    uint64_t key;
    size_t i;
    int rc = FRAMES_OK, r = FRAMES_OK, created, zero = 1, redundant = 0, untracked;
    if (!v || frames__vprof_bad_range(vp, a, n)) {
        if (!v) vp->stats.skipped_operands++;
        return FRAMES_OK;
    }
    if (vp->opt.counts_off) return frames__vprof_model_only(vp, a, v, n, &vp->stats.loads);
    row = frames__vprof_row_of(vp, pc, &rc);
    for (i = 0; i < n; i++)
        if (v[i]) {
            zero = 0;
            break;
        }
    key = frames__vprof_value_key(v, n);
    untracked = frames__vprof_set_known(vp, a, v, n, &rc);
    /* a previous load is only kept where the starts memory can say where it starts */
    l = frames_replay_mem_set(vp->starts, a, &one, 1) == FRAMES_OK
            ? frames__vprof_load_slot(vp, a, &created, &r)
            : NULL;
    if (l) {
        redundant = !created && l->size_top >> 1 == n && l->value == key;
        l->size_top = (uint32_t)n << 1 | (l->size_top & 1);
        l->value = key;
    } else {
        if (r < 0) rc = r;
        untracked = 1;
    }
    if ((uint32_t)n > vp->max_load_size) vp->max_load_size = (uint32_t)n;
    frames__vprof_content_stats(vp);
    if (untracked) {
        vp->stats.untracked_accesses++;
        vp->stats.address_cap_hit |= rc == FRAMES_OK;
    }
    vp->stats.loads++;
    vp->stats.redundant_loads += (uint64_t)redundant;
    vp->stats.zero_loads += (uint64_t)zero;
    if (row) {
        row->loads++;
        row->redundant_loads += (uint64_t)redundant;
        row->zero_loads += (uint64_t)zero;
    }
    return rc;
}

FRAMES_VPROF_DEF int frames_vprof_store(frames_vprof *vp, uint64_t pc, uint64_t a, const void *value,
                                  size_t n) {
    const uint8_t *v = (const uint8_t *)value;
    frames_vprof_insn *row;
    int rc = FRAMES_OK, cmp = -1;
    if (frames__vprof_bad_range(vp, a, n)) return FRAMES_OK;
    if (vp->opt.counts_off) return frames__vprof_model_only(vp, a, v, n, &vp->stats.stores);
    row = frames__vprof_row_of(vp, pc, &rc);
    if (v) cmp = frames_replay_mem_compare(vp->mem, a, v, n);
    frames__vprof_invalidate_loads(vp, a, n);
    if (v) {
        if (frames__vprof_set_known(vp, a, v, n, &rc)) {
            vp->stats.untracked_accesses++;
            vp->stats.address_cap_hit |= rc == FRAMES_OK;
        }
    } else {
        frames_replay_mem_forget(vp->mem, a, n);
        vp->stats.unknown_value_stores++;
    }
    frames__vprof_content_stats(vp);
    vp->stats.stores++;
    if (cmp >= 0) vp->stats.checked_stores++;
    if (cmp == 1) vp->stats.silent_stores++;
    if (row) {
        row->stores++;
        if (cmp >= 0) row->checked_stores++;
        if (cmp == 1) row->silent_stores++;
    }
    return rc;
}

FRAMES_VPROF_DEF int frames_vprof_observe(frames_vprof *vp, uint64_t a, const void *value, size_t n) {
    int rc = FRAMES_OK;
    if (!value || n == 0) return FRAMES_OK;
    if (frames__vprof_bad_range(vp, a, n)) return FRAMES_OK;
    if (frames__vprof_set_known(vp, a, (const uint8_t *)value, n, &rc)) {
        vp->stats.untracked_accesses++;
        vp->stats.address_cap_hit |= rc == FRAMES_OK;
    }
    frames__vprof_content_stats(vp);
    return rc;
}

/* --------------------------------------------------------------------------------------
   Framework: contexts
   -------------------------------------------------------------------------------------- */

static uint64_t frames__vprof_ckey(uint32_t parent, uint64_t pc) {
    return frames__mix64(pc ^ frames__mix64((uint64_t)parent + 0x9e3779b97f4a7c15ull));
}

/* The node (parent, pc), created when absent; parent when the tree is full. */
static uint32_t frames__vprof_child(frames_vprof *vp, uint32_t parent, uint64_t pc) {
    uint64_t key = frames__vprof_ckey(parent, pc);
    size_t c = (size_t)(key & (FRAMES__VPROF_CCACHE - 1));
    frames__vprof_cslot *s;
    int created, rc;
    if (vp->ccache[c].id && vp->ccache[c].key == key) return vp->ccache[c].id;
    s = (frames__vprof_cslot *)frames__vprof_insert(vp, &vp->contexts, key, &created, &rc);
    if (!s) {
        vp->context_cap_hit = 1;
        return parent;
    }
    if (created) {
        if (FRAMES__GROW(vp->nodes, vp->capnodes, vp->nnodes + 1, vp->opt.alloc_ctx) < 0) {
            frames__htab_erase(&vp->contexts, s);
            vp->context_cap_hit = 1;
            return parent;
        }
        vp->nodes[vp->nnodes].parent = parent;
        vp->nodes[vp->nnodes].pc = pc;
        vp->nodes[vp->nnodes].alloc = -1;
        s->id = (uint32_t)++vp->nnodes;
    } else if (vp->nodes[s->id - 1].parent != parent || vp->nodes[s->id - 1].pc != pc) {
        vp->context_cap_hit = 1;   /* a 64-bit hash collision: merged into the parent */
        return parent;
    }
    vp->ccache[c].key = key;
    vp->ccache[c].id = s->id;
    return s->id;
}

/* The node of the call path of thread's running function (0 at the outermost level). */
static uint32_t frames__vprof_function_node(frames_vprof *vp, uint64_t thread) {
    size_t d, lim, i;
    frames_replay_call *st;
    if (!vp->stack) return 0;
    st = frames_replay_stack_get(vp->stack, thread, &d);
    lim = d < vp->opt.context_depth ? d : vp->opt.context_depth;
    if (lim == 0) return 0;
    for (i = lim; i > 0 && !st[i - 1].user; i--) {
    }
    for (; i < lim; i++)
        st[i].user = frames__vprof_child(vp, i ? (uint32_t)st[i - 1].user : 0, st[i].site);
    return (uint32_t)st[lim - 1].user;
}

FRAMES_VPROF_DEF uint64_t frames_vprof_context_pc(const frames_vprof *vp, uint32_t h) {
    return h && h <= vp->nnodes ? vp->nodes[h - 1].pc : 0;
}

FRAMES_VPROF_DEF uint32_t frames_vprof_context_parent(const frames_vprof *vp, uint32_t h) {
    return h && h <= vp->nnodes ? vp->nodes[h - 1].parent : 0;
}

FRAMES_VPROF_DEF size_t frames_vprof_context_path(const frames_vprof *vp, uint32_t h,
                                                  uint64_t *out, size_t cap) {
    size_t n = 0, i;
    uint32_t x;
    for (x = h; x && x <= vp->nnodes; x = vp->nodes[x - 1].parent) n++;
    for (x = h, i = n; x && x <= vp->nnodes; x = vp->nodes[x - 1].parent)
        if (--i < cap) out[i] = vp->nodes[x - 1].pc;
    return n;
}

FRAMES_VPROF_DEF const frames_replay_stack_stats *frames_vprof_stack_stats(const frames_vprof *vp) {
    return vp->stack ? frames_replay_stack_stats_get(vp->stack) : NULL;
}

FRAMES_VPROF_DEF int frames_vprof_client_add(frames_vprof *vp, const frames_vprof_client *c) {
    if (!c || !c->batch)
        return frames__vprof_fail(vp, NULL, FRAMES_E_INVALID, "a client needs a batch callback");
    if (vp->nclients >= FRAMES__VPROF_MAX_CLIENTS)
        return frames__vprof_fail(vp, NULL, FRAMES_E_LIMIT, "at most %u clients",
                                  FRAMES__VPROF_MAX_CLIENTS);
    vp->clients[vp->nclients++] = *c;
    if (c->operands & (FRAMES_VPROF_GPR | FRAMES_VPROF_SIMD)) vp->want_regs = 1;
    return FRAMES_OK;
}

/* --------------------------------------------------------------------------------------
   Framework: data objects
   -------------------------------------------------------------------------------------- */

FRAMES_VPROF_DEF void frames_vprof_data(frames_vprof *vp, frames_vprof_classify_fn classify,
                                        void *ctx) {
    vp->classify = classify;
    vp->classify_ctx = ctx;
    vp->want_regs = 1;
}

FRAMES_VPROF_DEF void frames_vprof_globals(frames_vprof *vp, frames_vprof_global_fn find,
                                           void *ctx) {
    vp->find_global = find;
    vp->find_global_ctx = ctx;
}

FRAMES_VPROF_DEF const frames_vprof_object *frames_vprof_object_get(const frames_vprof *vp,
                                                                    uint32_t h) {
    return h && h <= vp->nobjects ? &vp->objects[h - 1] : NULL;
}

/* Index in live of the first block with address > a. */
static size_t frames__vprof_live_after(const frames_vprof *vp, uint64_t a) {
    size_t lo = 0, hi = vp->nlive;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (vp->objects[vp->live[mid] - 1].address <= a) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

static uint32_t frames__vprof_object_at(const frames_vprof *vp, uint64_t a) {
    size_t i = frames__vprof_live_after(vp, a);
    const frames_vprof_object *o;
    if (i == 0) return 0;
    o = &vp->objects[vp->live[i - 1] - 1];
    return a - o->address < o->size ? vp->live[i - 1] : 0;
}

static void frames__vprof_free_block(frames_vprof *vp, uint64_t a) {
    size_t i = frames__vprof_live_after(vp, a);
    if (i == 0 || vp->objects[vp->live[i - 1] - 1].address != a) return;
    vp->objects[vp->live[i - 1] - 1].live = 0;
    memmove(&vp->live[i - 1], &vp->live[i], (vp->nlive - i) * sizeof *vp->live);
    vp->nlive--;
}

/* A new live object (a heap block allocated at ctx); its handle, 0 when dropped. */
static uint32_t frames__vprof_new_block(frames_vprof *vp, uint64_t a, uint64_t size, uint32_t ctx) {
    size_t i;
    if (!a || !size || a > UINT64_MAX - size || vp->nobjects >= vp->opt.max_contexts ||
        FRAMES__GROW(vp->objects, vp->capobjects, vp->nobjects + 1, vp->opt.alloc_ctx) < 0 ||
        FRAMES__GROW(vp->live, vp->caplive, vp->nlive + 1, vp->opt.alloc_ctx) < 0) {
        vp->objects_dropped++;
        return 0;
    }
    frames__vprof_free_block(vp, a);   /* a block at the same address was freed unseen */
    vp->objects[vp->nobjects].address = a;
    vp->objects[vp->nobjects].size = size;
    vp->objects[vp->nobjects].context = ctx;
    vp->objects[vp->nobjects].live = 1;
    vp->objects[vp->nobjects].kind = FRAMES_VPROF_HEAP;
    vp->objects[vp->nobjects].name = NULL;
    vp->objects[vp->nobjects].name_len = 0;
    vp->nobjects++;
    i = frames__vprof_live_after(vp, a);
    memmove(&vp->live[i + 1], &vp->live[i], (vp->nlive - i) * sizeof *vp->live);
    vp->live[i] = (uint32_t)vp->nobjects;
    vp->nlive++;
    return (uint32_t)vp->nobjects;
}

static uint64_t frames__vprof_reg64(const frames_vprof *vp, uint64_t thread, const char *name,
                                    int *ok);

/* Whether a lies on the stack of thread: between its rsp (before the instruction, less
   the red zone of 128 bytes, which also covers a push or call) and the highest rsp it
   had (its stack top as far as the trace shows it). x86-64 (rsp) only. */
static int frames__vprof_on_stack(frames_vprof *vp, uint64_t thread, uint64_t a) {
    int ok;
    size_t i;
    uint64_t sp;
    if (!vp->regs || !vp->classify) return 0;
    sp = frames__vprof_reg64(vp, thread, "rsp", &ok);
    if (!ok) return 0;
    for (i = 0; i < vp->nstack_tops && vp->stack_tops[i].thread != thread; i++) {
    }
    if (i == vp->nstack_tops) {
        if (i == FRAMES__VPROF_STACK_THREADS) return 0;
        vp->stack_tops[vp->nstack_tops].thread = thread;
        vp->stack_tops[vp->nstack_tops++].top = sp;
    }
    if (sp > vp->stack_tops[i].top) vp->stack_tops[i].top = sp;
    return a + 128 >= sp && a < vp->stack_tops[i].top + 8;   /* + the slot rsp points at */
}

/* The one object standing for every thread's stack (created on first use), 0 if none. */
static uint32_t frames__vprof_stack_object(frames_vprof *vp) {
    frames_vprof_object *o;
    if (vp->stack_object) return vp->stack_object;
    if (vp->nobjects >= vp->opt.max_contexts ||
        FRAMES__GROW(vp->objects, vp->capobjects, vp->nobjects + 1, vp->opt.alloc_ctx) < 0)
        return 0;
    o = &vp->objects[vp->nobjects++];
    memset(o, 0, sizeof *o);
    o->kind = FRAMES_VPROF_STACK;
    o->live = 1;
    o->name = "stack";
    o->name_len = 5;
    return vp->stack_object = (uint32_t)vp->nobjects;
}

/* The object holding a (accessed by thread): a live one, else the stack, else a global
   the finder names (known from then on). */
static uint32_t frames__vprof_data_object(frames_vprof *vp, uint64_t thread, uint64_t a) {
    uint32_t h = vp->nlive ? frames__vprof_object_at(vp, a) : 0;
    uint64_t start, size;
    const char *name;
    size_t len;
    if (!h && frames__vprof_on_stack(vp, thread, a)) return frames__vprof_stack_object(vp);
    if (h || !vp->find_global ||
        vp->find_global(vp->find_global_ctx, a, &start, &size, &name, &len) != 1 ||
        a < start || a - start >= size || !(h = frames__vprof_new_block(vp, start, size, 0)))
        return h;
    vp->objects[h - 1].kind = FRAMES_VPROF_GLOBAL;
    vp->objects[h - 1].name = name;
    vp->objects[h - 1].name_len = len;
    return h;
}

static uint64_t frames__vprof_reg64(const frames_vprof *vp, uint64_t thread, const char *name,
                                    int *ok) {
    uint8_t v[8];
    size_t n;
    uint64_t x = 0;
    int i;
    *ok = frames_replay_regs_get(vp->regs, thread, name, v, sizeof v, &n) == 1 && n == 8;
    for (i = 7; i >= 0; i--) x = x << 8 | v[i];
    return x;
}

/* Before the registers take frame s: an allocator returning (its result is in rax) or
   starting (its arguments in rdi, rsi; ctx is the allocator's first instruction's
   context, whose parent is the allocating call path). */
static void frames__vprof_track_heap(frames_vprof *vp, const frames_std_frame *s, uint32_t ctx) {
    size_t i;
    int ok1 = 0, ok2 = 1, kind;
    frames__vprof_node *node;
    for (i = vp->npending; i > 0; i--) {
        frames__vprof_pending *p = &vp->pending[i - 1];
        uint64_t rax;
        if (p->thread != s->thread_id || p->ret != s->address) continue;
        rax = frames__vprof_reg64(vp, s->thread_id, "rax", &ok1);
        if (p->kind == FRAMES_VPROF_REALLOC && ok1 && rax) frames__vprof_free_block(vp, p->old);
        if (ok1) frames__vprof_new_block(vp, rax, p->size, p->context);
        vp->pending[i - 1] = vp->pending[--vp->npending];
        break;
    }
    if (!ctx || !vp->classify) return;
    node = &vp->nodes[ctx - 1];
    if (node->alloc < 0) node->alloc = vp->classify(vp->classify_ctx, s->address);
    kind = node->alloc;
    if (kind <= 0 || !vp->stack) return;
    {
        size_t d;
        const frames_replay_call *st = frames_replay_stack_get(vp->stack, s->thread_id, &d);
        uint64_t a0 = frames__vprof_reg64(vp, s->thread_id, "rdi", &ok1), a1 = 0;
        frames__vprof_pending *p;
        if (kind == FRAMES_VPROF_CALLOC || kind == FRAMES_VPROF_REALLOC)
            a1 = frames__vprof_reg64(vp, s->thread_id, "rsi", &ok2);
        if (!ok1 || !ok2 || !d) {
            vp->objects_dropped++;
            return;
        }
        if (kind == FRAMES_VPROF_FREE) {
            frames__vprof_free_block(vp, a0);
            return;
        }
        if (vp->npending >= FRAMES__VPROF_PENDING) {
            vp->objects_dropped++;
            return;
        }
        p = &vp->pending[vp->npending++];
        p->thread = s->thread_id;
        p->ret = st[d - 1].ret;
        p->kind = kind;
        p->old = kind == FRAMES_VPROF_REALLOC ? a0 : 0;
        p->size = kind == FRAMES_VPROF_CALLOC ? (a1 && a0 > UINT64_MAX / a1 ? 0 : a0 * a1)
                  : kind == FRAMES_VPROF_REALLOC ? a1 : a0;
        p->context = node->parent;
    }
}

/* --------------------------------------------------------------------------------------
   Framework: records of a frame
   -------------------------------------------------------------------------------------- */

static int frames__vprof_is_digit(char c) { return c >= '0' && c <= '9'; }

/* Vector and float registers by name (x86 xmm/ymm/zmm/mm/st, ARM v/q/d/s/h/b + digit). */
static int frames__vprof_simd_name(const frames_bytes *nm) {
    const char *p = (const char *)nm->ptr;
    size_t n = nm->len;
    if (n >= 3 && (p[0] == 'x' || p[0] == 'y' || p[0] == 'z' || p[0] == 'X' || p[0] == 'Y' ||
                   p[0] == 'Z') && (p[1] == 'm' || p[1] == 'M') && (p[2] == 'm' || p[2] == 'M'))
        return 1;
    if (n >= 2 && (p[0] == 's' || p[0] == 'S') && (p[1] == 't' || p[1] == 'T')) return 1;
    if (n >= 3 && (p[0] == 'm' || p[0] == 'M') && (p[1] == 'm' || p[1] == 'M') &&
        frames__vprof_is_digit(p[2]))
        return 1;
    if (n >= 2 && frames__vprof_is_digit(p[1])) {
        switch (p[0] | 0x20) {   /* ARM v, q, d, s, h, b in either case */
        case 'v': case 'q': case 'd': case 's': case 'h': case 'b': return 1;
        default: break;
        }
    }
    return 0;
}

/* x86 (i386, x86-64): the element type an SSE, AVX or x87 instruction gives its memory
   and vector operands, decoded from its prefixes and opcode (the Intel SDM's opcode
   maps): FRAMES_VPROF_FLOAT32 (ps, ss), FRAMES_VPROF_FLOAT64 (pd, sd), 1 for integer
   data (MMX/SSE2 integer operations, moves as movdqa, x87 integer forms), 0 when it is
   not such an instruction. */
#define FRAMES__VPROF_X86_INT 1           /* ints, not an enum: C++ compares the types */
#define FRAMES__VPROF_FLOAT_BY_SIZE 100

/* Packed/scalar single or double by the mandatory prefix (none/F3: single, 66/F2: double). */
static int frames__vprof_x86_ps_pd(int pp) {
    return pp == 1 || pp == 3 ? FRAMES_VPROF_FLOAT64 : FRAMES_VPROF_FLOAT32;
}

/* map 1 (0F), 2 (0F 38), 3 (0F 3A); pp 0 none, 1 66, 2 F3, 3 F2; w: VEX/EVEX.W. */
static int frames__vprof_x86_map_type(int map, uint8_t op, int pp, int w) {
    if (map == 1) {
        if ((op >= 0x10 && op <= 0x17) || op == 0x28 || op == 0x29 || op == 0x2b ||
            (op >= 0x2c && op <= 0x2f) || (op >= 0x51 && op <= 0x5f && op != 0x5b) ||
            op == 0xc2 || op == 0xc6)
            return frames__vprof_x86_ps_pd(pp);
        if (op == 0x5b) return pp ? FRAMES_VPROF_FLOAT32 : FRAMES__VPROF_X86_INT;   /* cvt(t)ps2dq : cvtdq2ps */
        if (op == 0x7c || op == 0x7d || op == 0xd0) return frames__vprof_x86_ps_pd(pp);   /* hadd, addsub */
        if (op == 0xe6) return pp == 2 ? FRAMES__VPROF_X86_INT : FRAMES_VPROF_FLOAT64;   /* cvtdq2pd : cvt(t)pd2dq */
        if (op == 0x2a || (op >= 0x60 && op <= 0x7f) || op >= 0xd1 || op == 0xc4 || op == 0xc5)
            return FRAMES__VPROF_X86_INT;
        return 0;
    }
    if (map == 3 && op >= 0x08 && op <= 0x0d)   /* round, blend: ps ss, pd sd */
        return op == 0x09 || op == 0x0b || op == 0x0d ? FRAMES_VPROF_FLOAT64 : FRAMES_VPROF_FLOAT32;
    if (map == 3 && (op == 0x40 || op == 0x41)) return op == 0x41 ? FRAMES_VPROF_FLOAT64 : FRAMES_VPROF_FLOAT32;
    if (map == 2 && op >= 0x96 && op <= 0xbf) return w ? FRAMES_VPROF_FLOAT64 : FRAMES_VPROF_FLOAT32;   /* FMA */
    if (map == 2 && (op == 0x18 || op == 0x19)) return op == 0x19 ? FRAMES_VPROF_FLOAT64 : FRAMES_VPROF_FLOAT32;
    if (map == 2 && (op == 0x14 || op == 0x15)) return op == 0x15 ? FRAMES_VPROF_FLOAT64 : FRAMES_VPROF_FLOAT32;
    return FRAMES__VPROF_X86_INT;   /* the rest of 0F 38 / 0F 3A: integer (pshufb, pmul, ...) */
}

static int frames__vprof_x86_type(const uint8_t *p, size_t n, int x64) {
    size_t i = 0;
    int pp = 0;
    for (; i < n; i++) {   /* legacy prefixes; the last of F2/F3 wins over 66 */
        uint8_t c = p[i];
        if (c == 0x66) { if (!pp) pp = 1; }
        else if (c == 0xf3) pp = 2;
        else if (c == 0xf2) pp = 3;
        else if (c != 0xf0 && c != 0x2e && c != 0x36 && c != 0x3e && c != 0x26 && c != 0x64 &&
                 c != 0x65 && c != 0x67) break;
    }
    if (x64 && i < n && (p[i] & 0xf0) == 0x40) i++;   /* REX */
    if (i >= n) return 0;
    if ((p[i] == 0xc5 || p[i] == 0xc4 || p[i] == 0x62) && i + 1 < n &&
        (x64 || (p[i + 1] & 0xc0) == 0xc0)) {   /* VEX, EVEX (in 32-bit mode: not LDS/LES/BOUND) */
        if (p[i] == 0xc5 && i + 2 < n) return frames__vprof_x86_map_type(1, p[i + 2], p[i + 1] & 3, 0);
        if (p[i] == 0xc4 && i + 3 < n)
            return frames__vprof_x86_map_type(p[i + 1] & 0x1f, p[i + 3], p[i + 2] & 3, p[i + 2] >> 7);
        if (p[i] == 0x62 && i + 4 < n)
            return frames__vprof_x86_map_type(p[i + 1] & 3, p[i + 4], p[i + 2] & 3, p[i + 2] >> 7);
        return 0;
    }
    if (p[i] >= 0xd8 && p[i] <= 0xdf) {   /* x87: memory forms by opcode and ModRM.reg */
        unsigned reg;
        if (i + 1 >= n || (p[i + 1] & 0xc0) == 0xc0) return 0;
        reg = (p[i + 1] >> 3) & 7;
        switch (p[i]) {
        case 0xd8: return FRAMES_VPROF_FLOAT32;
        case 0xdc: return FRAMES_VPROF_FLOAT64;
        case 0xd9: return reg == 0 || reg == 2 || reg == 3 ? FRAMES_VPROF_FLOAT32 : 0;
        case 0xdd: return reg == 0 || reg == 2 || reg == 3 ? FRAMES_VPROF_FLOAT64 : 0;
        default: return reg == 5 || reg == 7 ? 0 : FRAMES__VPROF_X86_INT;   /* fild, fist; m80 */
        }
    }
    if (p[i] != 0x0f || i + 1 >= n) return 0;
    if (p[i + 1] == 0x38 || p[i + 1] == 0x3a)
        return i + 2 < n ? frames__vprof_x86_map_type(p[i + 1] == 0x38 ? 2 : 3, p[i + 2], pp, 0) : 0;
    return frames__vprof_x86_map_type(1, p[i + 1], pp, 0);
}

/* The element type of the instruction's float data: FLOAT32/FLOAT64 decoded (x86), or
   inferred (another architecture: a frame with a vector/float register operand has float
   data),
   FRAMES__VPROF_X86_INT for integer data, 0 for none; FRAMES__VPROF_FLOAT_BY_SIZE for
   float data of another architecture: FLOAT32 lanes for sizes that are multiples of 4
   but not 8, FLOAT64 lanes otherwise. */
static int frames__vprof_float_insn(const frames_vprof *vp, const frames_std_frame *s);

static void frames__vprof_type_of(frames_vprof_record *r, int fl) {
    uint32_t n = r->size;
    if (fl == FRAMES__VPROF_FLOAT_BY_SIZE)
        fl = n == 4 || n % 8 ? FRAMES_VPROF_FLOAT32 : FRAMES_VPROF_FLOAT64;
    /* a general register is never a float lane (an address register of a float load) */
    if (fl > FRAMES__VPROF_X86_INT && !(r->flags & FRAMES_VPROF_GPR) && n % 4 == 0 &&
        (fl == FRAMES_VPROF_FLOAT32 || n % 8 == 0)) {
        r->type = (frames_vprof_type)fl;
        r->elem_size = fl == FRAMES_VPROF_FLOAT32 ? 4 : 8;
        r->flags |= FRAMES_VPROF_FLOAT;
        return;
    }
    r->flags |= FRAMES_VPROF_INT;
    if (n == 1 || n == 2 || n == 4) {
        r->type = n == 1 ? FRAMES_VPROF_INT8 : n == 2 ? FRAMES_VPROF_INT16 : FRAMES_VPROF_INT32;
        r->elem_size = n;
    } else if (n % 8 == 0) {
        r->type = FRAMES_VPROF_INT64;
        r->elem_size = 8;
    } else {
        r->type = FRAMES_VPROF_INT8;
        r->elem_size = 1;
    }
}

/* The value before a write: a pre-list operand that shows the same location, else the
   memory model (memory) or the register model (registers). */
static const uint8_t *frames__vprof_old(frames_vprof *vp, const frames_std_frame *s,
                                        const frames_operand *w, size_t n) {
    uint32_t i;
    uint8_t *out;
    size_t got;
    for (i = 0; i < s->npre; i++) {
        const frames_operand *p = &s->pre[i];
        if (p->spec != w->spec || p->value.len != n) continue;
        if ((w->spec & FRAMES_MEM) ? p->address == w->address
                                   : (p->name.len == w->name.len &&
                                      memcmp(p->name.ptr, w->name.ptr, p->name.len) == 0))
            return p->value.ptr;
    }
    if (vp->oldlen + n > sizeof vp->oldbuf) return NULL;
    out = vp->oldbuf + vp->oldlen;
    if (w->spec & FRAMES_MEM) {
        if (frames_replay_mem_read(vp->mem, w->address, out, NULL, n) != n) return NULL;
    } else {
        char name[64];
        if (!vp->regs || !w->name.len || w->name.len >= sizeof name) return NULL;   /* unnamed: unknown */
        memcpy(name, w->name.ptr, w->name.len);
        name[w->name.len] = 0;
        if (frames_replay_regs_get(vp->regs, s->thread_id, name, out, n, &got) != 1 || got != n)
            return NULL;
    }
    vp->oldlen += n;
    return out;
}

static uint32_t frames__vprof_insn_context(frames_vprof *vp, const frames_std_frame *s);

/* What an instruction's records share, found when its first record is made (most
   instructions have none: no call path walk, no operand name scan for them). */
typedef struct frames__vprof_insn_info {
    int known;
    int float_insn;
    uint32_t ctx;
} frames__vprof_insn_info;

static int frames__vprof_add_record(frames_vprof *vp, const frames_std_frame *s,
                                    const frames_operand *op, uint32_t dir,
                                    frames__vprof_insn_info *in) {
    frames_vprof_record *r;
    if (!op->value.len || op->value.len > FRAMES_VPROF_MAX_ACCESS) return FRAMES_OK;
    if (!(op->spec & FRAMES_MEM) && !vp->want_regs) return FRAMES_OK;
    if (FRAMES__GROW(vp->recs, vp->caprecs, vp->nrecs + 1, vp->opt.alloc_ctx) < 0)
        return frames__vprof_fail(vp, NULL, FRAMES_E_NOMEM, "out of memory for records");
    if (!in->known) {
        in->known = 1;
        in->float_insn = frames__vprof_float_insn(vp, s);
        if (!in->ctx) in->ctx = frames__vprof_insn_context(vp, s);
    }
    r = &vp->recs[vp->nrecs++];
    memset(r, 0, sizeof *r);
    r->index = vp->stats.std_frames - 1;
    r->pc = s->address;
    r->thread = s->thread_id;
    r->value = op->value.ptr;
    r->size = (uint32_t)op->value.len;
    r->context = in->ctx;
    if (op->spec & FRAMES_MEM) {
        r->flags = FRAMES_VPROF_MEM;
        r->address = op->address;
        if (vp->classify || vp->find_global)
            r->object = frames__vprof_data_object(vp, s->thread_id, op->address);
    } else {
        r->flags = frames__vprof_simd_name(&op->name) ? FRAMES_VPROF_SIMD : FRAMES_VPROF_GPR;
        r->reg = (const char *)op->name.ptr;
        r->reg_len = (uint32_t)op->name.len;
    }
    r->flags |= dir;
    frames__vprof_type_of(r, in->float_insn);
    if (dir == FRAMES_VPROF_WRITE) r->old = frames__vprof_old(vp, s, op, op->value.len);
    return FRAMES_OK;
}

static int frames__vprof_float_insn(const frames_vprof *vp, const frames_std_frame *s) {
    uint32_t i;
    if (vp->opt.arch == FRAMES_ARCH_I386)
        return frames__vprof_x86_type(s->rawbytes.ptr, s->rawbytes.len,
                                      frames_arch_is_x86_64(vp->opt.arch, vp->opt.machine));
    for (i = 0; i < s->npre; i++)
        if ((s->pre[i].spec & FRAMES_REG) && frames__vprof_simd_name(&s->pre[i].name))
            return FRAMES__VPROF_FLOAT_BY_SIZE;
    for (i = 0; s->has_post && i < s->npost; i++)
        if ((s->post[i].spec & FRAMES_REG) && frames__vprof_simd_name(&s->post[i].name))
            return FRAMES__VPROF_FLOAT_BY_SIZE;
    return 0;
}

static int frames__vprof_in_window(frames_vprof *vp) {
    uint64_t i;
    if (!vp->opt.sample_every) return 1;
    i = vp->window_pos;
    vp->window_pos = i + 1 == vp->opt.sample_every ? 0 : i + 1;
    return i < vp->opt.sample_on;
}

/* Deliver one batch per client: the records of this frame that pass its filters. */
static void frames__vprof_deliver(frames_vprof *vp, const frames_std_frame *s) {
    size_t c, i, n;
    for (c = 0; c < vp->nclients; c++) {
        const frames_vprof_client *cl = &vp->clients[c];
        uint32_t want = cl->operands;
        if (cl->insn_filter && !cl->insn_filter(cl->ctx, s)) continue;
        /* copied into pass only once a record is left out: usually the batch is recs */
        for (i = n = 0; i < vp->nrecs; i++) {
            const frames_vprof_record *r = &vp->recs[i];
            if ((r->flags & want & 0x07u) && (r->flags & want & 0x30u) &&
                (r->flags & want & 0xC0u) && (!cl->min_size || r->size >= cl->min_size) &&
                (!cl->max_size || r->size <= cl->max_size)) {
                if (n != i) vp->pass[n] = *r;
                n++;
            } else if (n == i) {
                memcpy(vp->pass, vp->recs, n * sizeof *vp->pass);
            }
        }
        if (n) cl->batch(cl->ctx, n == vp->nrecs ? vp->recs : vp->pass, n);
    }
}

/* The context of the instruction s: its pc under its function's call path. */
static uint32_t frames__vprof_insn_context(frames_vprof *vp, const frames_std_frame *s) {
    return frames__vprof_child(vp, frames__vprof_function_node(vp, s->thread_id), s->address);
}

/* The framework's part of one std_frame: stack, records, registers. */
static int frames__vprof_frame_clients(frames_vprof *vp, const frames_frame *f) {
    const frames_std_frame *s = &f->std;
    frames__vprof_insn_info in;
    uint32_t i;
    int rc = FRAMES_OK;
    if (vp->stack) {
        int r = frames_replay_stack_apply_frame(vp->stack, f);
        if (r < 0) vp->stack_errors++;
    }
    vp->nrecs = 0;
    vp->oldlen = 0;
    memset(&in, 0, sizeof in);
    if (vp->classify) {
        in.ctx = frames__vprof_insn_context(vp, s);
        frames__vprof_track_heap(vp, s, in.ctx);
    }
    if (vp->nclients && frames__vprof_in_window(vp)) {
        for (i = 0; i < s->npre && rc == FRAMES_OK; i++)
            if (s->pre[i].read)
                rc = frames__vprof_add_record(vp, s, &s->pre[i], FRAMES_VPROF_READ, &in);
        for (i = 0; s->has_post && i < s->npost && rc == FRAMES_OK; i++)
            if (s->post[i].written)
                rc = frames__vprof_add_record(vp, s, &s->post[i], FRAMES_VPROF_WRITE, &in);
        if (vp->nrecs > vp->cappass) {
            frames_vprof_record *p = (frames_vprof_record *)FRAMES_REALLOC(
                vp->pass, vp->nrecs * sizeof *p, vp->opt.alloc_ctx);
            if (!p) return frames__vprof_fail(vp, NULL, FRAMES_E_NOMEM, "out of memory for records");
            vp->pass = p;
            vp->cappass = vp->nrecs;
        }
        frames__vprof_deliver(vp, s);
    }
    if (vp->regs && vp->want_regs) frames_replay_regs_apply_frame(vp->regs, f);
    return rc;
}

/* --------------------------------------------------------------------------------------
   Frames
   -------------------------------------------------------------------------------------- */

static int frames__vprof_is_mem(const frames_operand *op) { return (op->spec & FRAMES_MEM) != 0; }

static int frames__vprof_has_post_store(const frames_std_frame *s, uint64_t a) {
    uint32_t i;
    if (!s->has_post) return 0;
    for (i = 0; i < s->npost; i++)
        if (frames__vprof_is_mem(&s->post[i]) && s->post[i].written && s->post[i].address == a)
            return 1;
    return 0;
}

/* Bytes a store without value covers: from bit_length, rounded up. */
static size_t frames__vprof_declared_size(const frames_operand *op) {
    if (op->value.len) return op->value.len;
    return op->bit_length > 0 ? ((size_t)op->bit_length + 7) / 8 : 0;
}

static int frames__vprof_keep(int rc, int r) { return rc < 0 ? rc : r; }

FRAMES_VPROF_DEF int frames_vprof_add_frame(frames_vprof *vp, const frames_frame *f) {
    const frames_std_frame *s = &f->std;
    uint64_t pc = s->address;
    uint32_t i;
    int rc = FRAMES_OK;
    vp->stats.frames++;
    if (f->kind != FRAMES_KIND_STD) return FRAMES_OK;
    vp->stats.std_frames++;
    if ((vp->stack || vp->nclients) && (rc = frames__vprof_frame_clients(vp, f)) < 0) return rc;
    for (i = 0; i < s->npre; i++) {
        const frames_operand *op = &s->pre[i];
        if (!frames__vprof_is_mem(op)) continue;
        if (op->read) {
            rc = frames__vprof_keep(rc, frames_vprof_load(vp, pc, op->address, op->value.ptr,
                                                          op->value.len));
        } else if (op->value.len) {
            rc = frames__vprof_keep(rc, frames_vprof_observe(vp, op->address, op->value.ptr,
                                                             op->value.len));
        }
    }
    for (i = 0; s->has_post && i < s->npost; i++) {
        const frames_operand *op = &s->post[i];
        if (!frames__vprof_is_mem(op)) continue;
        if (op->written) {
            size_t n = frames__vprof_declared_size(op);
            rc = frames__vprof_keep(rc, frames_vprof_store(vp, pc, op->address,
                                                           op->value.len ? op->value.ptr : NULL, n));
        } else if (op->value.len) {
            rc = frames__vprof_keep(rc, frames_vprof_observe(vp, op->address, op->value.ptr,
                                                             op->value.len));
        }
    }
    for (i = 0; i < s->npre; i++) {
        const frames_operand *op = &s->pre[i];
        if (!frames__vprof_is_mem(op) || !op->written || frames__vprof_has_post_store(s, op->address))
            continue;
        rc = frames__vprof_keep(rc, frames_vprof_store(vp, pc, op->address, NULL,
                                                       frames__vprof_declared_size(op)));
    }
    return rc;
}

FRAMES_VPROF_DEF uint64_t frames_vprof_metric_of(const frames_vprof_insn *r, frames_vprof_metric m) {
    switch (m) {
    case FRAMES_VPROF_REDUNDANT_LOADS: return r->redundant_loads;
    case FRAMES_VPROF_SILENT_STORES: return r->silent_stores;
    case FRAMES_VPROF_ZERO_LOADS: return r->zero_loads;
    case FRAMES_VPROF_LOADS: return r->loads;
    case FRAMES_VPROF_STORES: return r->stores;
    case FRAMES_VPROF_ACCESSES: return r->loads + r->stores;
    }
    return 0;
}

/* --------------------------------------------------------------------------------------
   Ranking
   -------------------------------------------------------------------------------------- */

/* a ranks before b: larger metric, then lower address. */
static int frames__vprof_before(const frames_vprof_insn *a, const frames_vprof_insn *b,
                                frames_vprof_metric m) {
    uint64_t x = frames_vprof_metric_of(a, m), y = frames_vprof_metric_of(b, m);
    return x != y ? x > y : a->address < b->address;
}

/* Min-heap (by rank: the worst kept row at the root) over out[0..n). */
static void frames__vprof_sift_down(frames_vprof_insn *h, size_t n, size_t i,
                                    frames_vprof_metric m) {
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, w = i;
        frames_vprof_insn t;
        if (l < n && frames__vprof_before(&h[w], &h[l], m)) w = l;
        if (r < n && frames__vprof_before(&h[w], &h[r], m)) w = r;
        if (w == i) return;
        t = h[i];
        h[i] = h[w];
        h[w] = t;
        i = w;
    }
}

static void frames__vprof_sift_up(frames_vprof_insn *h, size_t i, frames_vprof_metric m) {
    while (i > 0) {
        size_t p = (i - 1) / 2;
        frames_vprof_insn t;
        if (!frames__vprof_before(&h[p], &h[i], m)) return;
        t = h[i];
        h[i] = h[p];
        h[p] = t;
        i = p;
    }
}

FRAMES_VPROF_DEF size_t frames_vprof_top(const frames_vprof *vp, frames_vprof_metric m,
                                   frames_vprof_insn *out, size_t n) {
    size_t have = 0, i;
    uint64_t k;
    if (n == 0) return 0;
    for (k = 0; k < vp->rows.cap; k++) {
        const frames__vprof_row *r = (const frames__vprof_row *)frames__htab_at(&vp->rows, k);
        if (!r || frames_vprof_metric_of(&r->insn, m) == 0) continue;
        if (have < n) {
            out[have] = r->insn;
            frames__vprof_sift_up(out, have++, m);
        } else if (frames__vprof_before(&r->insn, &out[0], m)) {
            out[0] = r->insn;
            frames__vprof_sift_down(out, n, 0, m);
        }
    }
    /* heap sort: repeatedly move the worst kept row to the end */
    for (i = have; i > 1; i--) {
        frames_vprof_insn t = out[0];
        out[0] = out[i - 1];
        out[i - 1] = t;
        frames__vprof_sift_down(out, i - 1, 0, m);
    }
    return have;
}

/* --------------------------------------------------------------------------------------
   Built-in profilers
   Each is a client: its batch callback sees only records. Entries live in a table keyed
   by (context, context) or a hash of (context, value); shadow memory in a table keyed
   by address (redundant-loads) or 8-byte granule (dead-stores).
   -------------------------------------------------------------------------------------- */

enum { FRAMES__VB_ZERO, FRAMES__VB_REDUNDANT, FRAMES__VB_SILENT, FRAMES__VB_DEAD, FRAMES__VB_VALUES };

typedef struct frames__vb_slot {
    uint64_t hash;
    uint64_t key;
    uint32_t entry;      /* index + 1 into entries */
} frames__vb_slot;

/* redundant-loads: the previous load at an address. */
typedef struct frames__vb_load {
    uint64_t hash;
    uint64_t address, value;
    uint32_t size, context;
} frames__vb_load;

/* dead-stores: per byte of a granule, its last writer while no read has seen it. */
typedef struct frames__vb_gran {
    uint64_t hash;
    uint64_t index;
    uint32_t writer[8];
    uint8_t unread;
} frames__vb_gran;

struct frames_vprof_builtin {
    frames_vprof *vp;    /* for its tables' allocator and errors */
    int kind;
    frames_vprof_builtin_options o;
    frames__htab index, shadow;
    frames_vprof_entry *entries;
    size_t nentries, capentries;
    frames_vprof_builtin_stats st;
};

FRAMES_VPROF_DEF void frames_vprof_builtin_options_default(frames_vprof_builtin_options *o) {
    memset(o, 0, sizeof *o);
    o->max_entries = (uint64_t)1 << 20;
    o->max_addresses = (uint64_t)1 << 21;
}

/* The entry of key (created with the given contexts), NULL over the cap. */
static frames_vprof_entry *frames__vb_entry(frames_vprof_builtin *b, uint64_t key, uint32_t c0,
                                            uint32_t c1, uint32_t nctx,
                                            const frames_vprof_record *r) {
    uint32_t obj = r->object;
    uint64_t thread = b->o.threads ? r->thread : 0;
    int created, rc;
    frames__vb_slot *s;
    frames_vprof_entry *e;
    int kind = 0;
    if (!b->o.data) obj = 0;
    if (obj) {   /* heap blocks by allocation site, globals by themselves */
        const frames_vprof_object *ob = frames_vprof_object_get(b->vp, obj);
        kind = ob->kind;
        if (kind == FRAMES_VPROF_HEAP) obj = ob->context;
    }
    if (obj)   /* (key, object): a 64-bit hash, checked below */
        key = frames__mix64(key ^ frames__mix64((uint64_t)obj + 0x632be59bd9b4e019ull *
                                                                    (uint64_t)kind));
    if (thread)   /* (key, thread): likewise */
        key = frames__mix64(key ^ frames__mix64(thread ^ 0x94d049bb133111ebull));
    s = (frames__vb_slot *)frames__vprof_insert(b->vp, &b->index, key, &created, &rc);
    if (!s) {
        b->st.dropped++;
        return NULL;
    }
    if (created) {
        if (FRAMES__GROW(b->entries, b->capentries, b->nentries + 1, b->vp->opt.alloc_ctx) < 0) {
            frames__htab_erase(&b->index, s);
            b->st.dropped++;
            return NULL;
        }
        e = &b->entries[b->nentries];
        memset(e, 0, sizeof *e);
        e->context[0] = c0;
        e->context[1] = c1;
        e->ncontexts = nctx;
        e->object = obj;
        e->object_kind = obj ? kind : 0;
        e->thread = thread;
        s->entry = (uint32_t)++b->nentries;
    }
    e = &b->entries[s->entry - 1];
    if (e->context[0] != c0 || e->context[1] != c1 || e->object != obj ||
        (obj && e->object_kind != kind) || e->thread != thread) {
        b->st.dropped++;   /* a hash collision */
        return NULL;
    }
    return e;
}

static uint64_t frames__vb_pair(uint32_t a, uint32_t c) { return (uint64_t)a << 32 | c; }

static void frames__vb_waste(frames_vprof_builtin *b, frames_vprof_entry *e, uint64_t bytes) {
    b->st.total_bytes += bytes;
    if (!e) return;
    e->count++;
    e->bytes += bytes;
}

static void frames__vb_zero(frames_vprof_builtin *b, const frames_vprof_record *r) {
    frames_vprof_entry *e = frames__vb_entry(b, r->context, r->context, 0, 1, r);
    uint32_t i, zero = 1;
    for (i = 0; i < r->size; i++)
        if (r->value[i]) zero = 0;
    if (zero) frames__vb_waste(b, e, r->size);
    if (!e) return;
    e->total++;
    e->type = r->type;
    if (r->size > e->size) e->size = r->size;
    for (i = 0; i < r->size && i < sizeof e->nonzero; i++) e->nonzero[i] |= r->value[i];
    if (r->type == FRAMES_VPROF_FLOAT32 || r->type == FRAMES_VPROF_FLOAT64) {
        uint32_t es = r->elem_size, k;
        e->is_float = 1;
        for (k = 0; k + es <= r->size; k += es) {
            uint64_t v = 0, man, ex, sg;
            memcpy(&v, r->value + k, es);   /* little-endian hosts; values are little-endian */
            if (es == 4) {
                sg = v >> 31 & 1;
                ex = v >> 23 & 0xFF;
                man = v & 0x7FFFFF;
            } else {
                sg = v >> 63;
                ex = v >> 52 & 0x7FF;
                man = v & 0xFFFFFFFFFFFFFull;
            }
            e->float_seen |= (sg ? 1u : 0u) | (ex ? 2u : 0u) | (man ? 4u : 0u);
        }
    }
}

static void frames__vb_redundant(frames_vprof_builtin *b, const frames_vprof_record *r) {
    int created, rc;
    uint64_t v = frames__vprof_value_key(r->value, r->size);
    frames__vb_load *l = (frames__vb_load *)frames__vprof_insert(b->vp, &b->shadow, r->address,
                                                                 &created, &rc);
    if (!l) {
        b->st.dropped++;
        return;
    }
    if (!created && l->size == r->size && l->value == v)
        frames__vb_waste(b, frames__vb_entry(b, frames__vb_pair(l->context, r->context),
                                             l->context, r->context, 2, r),
                         r->size);
    l->size = r->size;
    l->value = v;
    l->context = r->context;
}

static int frames__vb_equal(const frames_vprof_builtin *b, const frames_vprof_record *r) {
    uint32_t k;
    if (b->o.approx <= 0 ||
        (r->type != FRAMES_VPROF_FLOAT32 && r->type != FRAMES_VPROF_FLOAT64))
        return memcmp(r->old, r->value, r->size) == 0;
    for (k = 0; k + r->elem_size <= r->size; k += r->elem_size) {
        double x, y, d, m;
        if (r->elem_size == 4) {
            float fx, fy;
            memcpy(&fx, r->value + k, 4);
            memcpy(&fy, r->old + k, 4);
            x = fx;
            y = fy;
        } else {
            memcpy(&x, r->value + k, 8);
            memcpy(&y, r->old + k, 8);
        }
        if (x == y) continue;
        d = x > y ? x - y : y - x;
        m = (x < 0 ? -x : x) > (y < 0 ? -y : y) ? (x < 0 ? -x : x) : (y < 0 ? -y : y);
        if (!(d <= b->o.approx * m)) return 0;   /* NaN: not equal */
    }
    return 1;
}

static void frames__vb_silent(frames_vprof_builtin *b, const frames_vprof_record *r) {
    frames_vprof_entry *e;
    if (!(r->flags & FRAMES_VPROF_MEM) && !b->o.registers) return;
    if (!r->old) {
        b->st.unknown_old++;
        return;
    }
    e = frames__vb_entry(b, r->context, r->context, 0, 1, r);
    if (e) e->total++;
    if (frames__vb_equal(b, r)) frames__vb_waste(b, e, r->size);
}

/* Bytes of [a, a+n) by granule: visit(b, granule, first offset, count, record). */
static void frames__vb_dead(frames_vprof_builtin *b, const frames_vprof_record *r) {
    uint64_t g;
    unsigned off, cnt, i;
    size_t pos;
    int created, rc;
    uint32_t killed[FRAMES_VPROF_MAX_ACCESS > 64 ? 64 : FRAMES_VPROF_MAX_ACCESS];
    uint64_t kbytes[sizeof killed / sizeof killed[0]];
    size_t nk = 0, k;
    int write = (r->flags & FRAMES_VPROF_WRITE) != 0;
    if (r->address > UINT64_MAX - r->size) return;
    FRAMES__VPROF_FOR_GRANULES(r->address, (size_t)r->size, g, off, cnt, pos) {
        frames__vb_gran *s = write ? (frames__vb_gran *)frames__vprof_insert(
                                         b->vp, &b->shadow, g, &created, &rc)
                                   : (frames__vb_gran *)frames__vprof_find(&b->shadow, g);
        if (!s) {
            if (write) b->st.dropped++;
            continue;
        }
        for (i = off; i < off + cnt; i++) {
            uint8_t bit = (uint8_t)(1u << i);
            if (!write) {
                s->unread &= (uint8_t)~bit;
                continue;
            }
            if (s->unread & bit) {   /* written before, never read since: dead */
                for (k = 0; k < nk && killed[k] != s->writer[i]; k++) {
                }
                if (k == nk && nk < sizeof killed / sizeof killed[0]) {
                    killed[nk] = s->writer[i];
                    kbytes[nk++] = 0;
                }
                if (k < nk) kbytes[k]++;
            }
            s->writer[i] = r->context;
            s->unread |= bit;
        }
        if (!write && !s->unread) frames__htab_erase(&b->shadow, s);
    }
    for (k = 0; k < nk; k++)
        frames__vb_waste(b, frames__vb_entry(b, frames__vb_pair(killed[k], r->context),
                                             killed[k], r->context, 2, r),
                         kbytes[k]);
}

static void frames__vb_values(frames_vprof_builtin *b, const frames_vprof_record *r) {
    uint64_t v = 0;
    frames_vprof_entry *e;
    memcpy(&v, r->value, r->size < 8 ? r->size : 8);
    e = frames__vb_entry(b, frames__mix64(frames__vprof_value_key(r->value, r->size) ^
                                          frames__mix64((uint64_t)r->context << 8 | r->size)),
                         r->context, 0, 1, r);
    if (!e) return;
    if (e->count && (e->value != v || e->size != r->size)) {   /* 64-bit hash collision */
        b->st.dropped++;
        return;
    }
    e->value = v;
    e->size = r->size;
    e->type = r->type;
    e->total++;
    frames__vb_waste(b, e, r->size);
}

static void frames__vb_batch(void *ctx, const frames_vprof_record *recs, size_t n) {
    frames_vprof_builtin *b = (frames_vprof_builtin *)ctx;
    size_t i;
    for (i = 0; i < n; i++) {
        const frames_vprof_record *r = &recs[i];
        b->st.records++;
        switch (b->kind) {
        case FRAMES__VB_ZERO: frames__vb_zero(b, r); break;
        case FRAMES__VB_REDUNDANT: frames__vb_redundant(b, r); break;
        case FRAMES__VB_SILENT: frames__vb_silent(b, r); break;
        case FRAMES__VB_DEAD: frames__vb_dead(b, r); break;
        default: frames__vb_values(b, r); break;
        }
    }
}

FRAMES_VPROF_DEF int frames_vprof_builtin_open(frames_vprof_builtin **out, frames_vprof *vp,
                                               const char *name,
                                               const frames_vprof_builtin_options *o,
                                               frames_error *err) {
    static const char *const names[] = {"zero-loads", "redundant-loads", "silent-stores",
                                        "dead-stores", "values"};
    frames_vprof_builtin_options d;
    frames_vprof_builtin *b;
    frames_vprof_client c;
    int kind, rc;
    *out = NULL;
    for (kind = 0; kind < 5 && strcmp(name, names[kind]); kind++) {
    }
    if (kind == 5)
        return frames__vprof_fail(vp, err, FRAMES_E_INVALID, "unknown profiler '%s'", name);
    if (!o) {
        frames_vprof_builtin_options_default(&d);
        o = &d;
    }
    b = (frames_vprof_builtin *)frames__zalloc(sizeof *b, vp->opt.alloc_ctx);
    if (!b) return frames__vprof_fail(vp, err, FRAMES_E_NOMEM, "out of memory");
    b->vp = vp;
    b->kind = kind;
    b->o = *o;
    frames__htab_init(&b->index, sizeof(frames__vb_slot), 
                      frames__vprof_bound(o->max_entries ? o->max_entries : 1));
    if (kind == FRAMES__VB_REDUNDANT)
        frames__htab_init(&b->shadow, sizeof(frames__vb_load),
                          frames__vprof_bound(o->max_addresses));
    else
        frames__htab_init(&b->shadow, sizeof(frames__vb_gran),
                          frames__vprof_bound(o->max_addresses));
    memset(&c, 0, sizeof c);
    c.operands = FRAMES_VPROF_MEM | FRAMES_VPROF_INT | FRAMES_VPROF_FLOAT;
    c.operands |= kind == FRAMES__VB_ZERO || kind == FRAMES__VB_REDUNDANT ? FRAMES_VPROF_READ
                  : kind == FRAMES__VB_SILENT ? FRAMES_VPROF_WRITE
                                              : FRAMES_VPROF_READ | FRAMES_VPROF_WRITE;
    if (kind == FRAMES__VB_VALUES) c.operands = FRAMES_VPROF_MEM | FRAMES_VPROF_READ |
                                                FRAMES_VPROF_INT | FRAMES_VPROF_FLOAT;
    if (kind == FRAMES__VB_SILENT && o->registers)
        c.operands |= FRAMES_VPROF_GPR | FRAMES_VPROF_SIMD;
    c.batch = frames__vb_batch;
    c.ctx = b;
    if ((rc = frames_vprof_client_add(vp, &c)) < 0) {
        frames_vprof_builtin_close(b);
        if (err) *err = vp->err;
        return rc;
    }
    *out = b;
    return FRAMES_OK;
}

FRAMES_VPROF_DEF void frames_vprof_builtin_close(frames_vprof_builtin *b) {
    void *a;
    if (!b) return;
    a = b->vp->opt.alloc_ctx;
    frames__htab_free(&b->index, a);
    frames__htab_free(&b->shadow, a);
    FRAMES_FREE(b->entries, a);
    FRAMES_FREE(b, a);
}

FRAMES_VPROF_DEF const frames_vprof_builtin_stats *
frames_vprof_builtin_stats_get(const frames_vprof_builtin *b) {
    return &b->st;
}

/* a ranks before c: more bytes, more count, lower contexts. */
static int frames__vb_before(const frames_vprof_entry *a, const frames_vprof_entry *c) {
    if (a->bytes != c->bytes) return a->bytes > c->bytes;
    if (a->count != c->count) return a->count > c->count;
    if (a->context[0] != c->context[0]) return a->context[0] < c->context[0];
    if (a->context[1] != c->context[1]) return a->context[1] < c->context[1];
    return a->value < c->value;
}

FRAMES_VPROF_DEF size_t frames_vprof_builtin_top(const frames_vprof_builtin *b,
                                                 frames_vprof_entry *out, size_t n) {
    size_t have = 0, i, j;
    for (i = 0; i < b->nentries; i++) {   /* insertion into the kept n (n is small) */
        const frames_vprof_entry *e = &b->entries[i];
        if (!e->count) continue;
        if (have == n && (n == 0 || !frames__vb_before(e, &out[n - 1]))) continue;
        j = have < n ? have++ : n - 1;
        for (; j > 0 && frames__vb_before(e, &out[j - 1]); j--) out[j] = out[j - 1];
        out[j] = *e;
    }
    return have;
}

#ifdef __cplusplus
}
#endif
#endif /* FRAMES_VPROF_IMPLEMENTATION_INCLUDED */
#endif /* FRAMES_VPROF_IMPLEMENTATION || FRAMES_ALL_IMPLEMENTATION */

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
