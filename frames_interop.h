/* frames_interop.h - coverage (drcov), Tenet traces, statistics, slicing and splitting of
   BAP frames traces. Single-header C99 library on top of frames.h (also compiles as C++).
   MIT licence, see end of file.

   ---------------------------------------------------------------------------------------
   WHAT IT IS

   The analysis half of the `frames` command as a library, so that a tracer, a fuzzer or
   an emulator can produce the same outputs without running the command:

   - frames_cov:    groups executed instructions into basic blocks per thread and module
                    and writes DynamoRIO drcov files (Lighthouse, bncov, Cutter, ...).
   - frames_tenet:  turns std_frames into Tenet's text trace (register deltas, mr=/mw=).
   - frames_stats:  frame counts by kind, instructions, unique pcs, per-module coverage,
                    hottest pcs, syscall histogram, threads.
   - frames_slice:  copies selected frames (index range, pc range, thread) into a new valid
                    trace without re-encoding them.
   - frames_split_ranges: TOC-aligned frame ranges for processing one trace in parallel.

   Each object is fed one decoded frame at a time (frames_reader_next), keeps no pointer
   into the frame after the call returns, and works on stream readers. Memory grows with
   what the trace contains (unique blocks, unique pcs, threads, modules), never with a
   length field read from the file.

   ---------------------------------------------------------------------------------------
   USAGE

   In exactly one C or C++ file (frames.h's implementation may live in the same file or in
   another one):

       #define FRAMES_IMPLEMENTATION          // unless another file has it
       #include "frames.h"
       #define FRAMES_INTEROP_IMPLEMENTATION
       #include "frames_interop.h"

   Coverage of a trace as a drcov file:

       frames_cov *cov; frames_frame f; int rc;
       frames_cov_open(&cov, NULL, &err);
       while ((rc = frames_reader_next(r, &f)) > 0) frames_cov_add_frame(cov, &f);
       frames_cov_finish(cov);
       frames_cov_write_drcov(cov, frames_out_file, out);   // FILE *out opened "wb"
       frames_cov_close(cov);

   ---------------------------------------------------------------------------------------
   OPTIONS (#define before including the implementation)

   FRAMES_INTEROP_STATIC      this header's functions static (frames.h's too if not yet included)
   FRAMES_INTEROP_DEF         their linkage (default FRAMES_DEF)
   FRAMES_INTEROP_TENET_HOLD  the most Tenet text held back while the first line's
                              initial register values are looked for (default 64 MiB)
   FRAMES_INTEROP_NO_REPLAY_IMPL  frames_tenet's register model is frames_replay.h's, whose
                              implementation this one brings along; define this when
                              another file of the program compiles it (a shared build:
                              FRAMES_REPLAY_IMPLEMENTATION or FRAMES_ALL_IMPLEMENTATION
                              there), so that it is not defined twice
   frames.h's options hold here too (FRAMES_STATIC, FRAMES_DEF, FRAMES_MALLOC & co). The
   writers (drcov, Tenet) need the text printers and are left out under FRAMES_NO_TEXT.

   ---------------------------------------------------------------------------------------
   RULES (what the converters decide where the formats are silent)

   Basic blocks (frames_cov). Instructions are std_frames, taken per thread in trace
   order. A block is a maximal run of instructions of one thread in which every next
   instruction starts where the previous one ends (address + length of rawbytes) and all
   lie in the same module. A block therefore ends at a control transfer (the next executed
   pc is elsewhere), at a thread's last instruction and at a module boundary. A branch that
   falls through does not end a block: without a disassembler it cannot be told from any
   other instruction, and the bytes covered are the same. An instruction recorded without
   rawbytes counts as 1 byte long, so that its address is still covered. Blocks longer than
   65535 bytes are written as several entries (drcov sizes are 16 bits). Only unique
   blocks are kept, ordered by (module id, offset, size).
   Modules come from modload frames (high_address is inclusive, as Pin's and BAP's tracers
   write it: end = high_address + 1), or from frames_cov_add_module (then modload frames
   are ignored). An instruction belongs to the most recently loaded module that contains
   its address at the time it executes; instructions in no module are counted, not
   written. At most 65535 modules (drcov module ids are 16 bits); blocks starting 4 GiB
   or more past their module base cannot be written (32-bit offsets) and are counted.

   drcov file (DynamoRIO's drcov, version 2, module table version 2, the seven-column
   table DynamoRIO writes on Windows, which Lighthouse, bncov and DynamoRIO's own tools
   read on every platform):
       DRCOV VERSION: 2
       DRCOV FLAVOR: drcov
       Module Table: version 2, count N
       Columns: id, base, end, entry, checksum, timestamp, path
         0, 0x0000000008048000, 0x0000000008060000, 0x0000000000000000, 0x00000000, 0x00000000, /bin/ls
       BB Table: M bbs
       M binary entries of 8 bytes, little-endian: uint32 start (offset from the module
       base), uint16 size, uint16 module id.
   entry, checksum and timestamp are unknown in a frames trace and written as 0. Control
   characters in module names become '?' so that the table stays one line per module.

   Tenet (frames_tenet), as Tenet's reference tracers (pintenet, the QEMU plugin) write it:
   one line per executed instruction of one thread,
       eax=0x3,ebx=0x8049000,eip=0x8048102,mr=0x8049000:bebafeca
   Line k holds the registers whose value differs from what the previous lines said
   (the registers as frames_replay.h's model knows them before instruction k: after its
   operand_pre_list and the operand_post_list of instruction k-1, sub-registers included:
   a write of EAX is a write of RAX's low half, zero-extending on x86-64; a register only
   partly known is not written), then the pc of instruction k, then the memory accessed by instruction
   k-1 (mr = pre-list memory operands marked read, with the value read; mw = post-list
   memory operands marked written, with the value written; hex bytes in the order they are
   stored in the trace, i.e. memory order for little-endian targets). The effects of the
   last instruction therefore have no line, exactly as with the reference tracers.
   The first line holds, besides the pc, every register of the set that the thread reads
   whole (pre lists) before any of its instructions writes it (a post-list operand of the
   register or of a part of it, e.g. EAX or AL of RAX, with a value or not), with the value
   of that first read:
   it is the register's value at the first instruction, and Tenet's loader expects the
   first line to give every register. Registers the thread writes before reading, or never
   reads, have no known initial value and are left out (frames_tenet_info: initial,
   written_first). To know them the converter holds the lines back (in memory, at most
   FRAMES_INTEROP_TENET_HOLD bytes) until every register of the set has been read or written,
   or until frames_tenet_finish; past the bound the first line is written with what is
   known so far (info.first_line_cut) and later first reads become ordinary changes.
   Registers: the architecture's Tenet set only (x86: eax..edi + eip; amd64: rax..r15 +
   rip; arm32: r0..r12, sp, lr + pc); names as frames_replay.h matches them (any case, with
   or without BAP's "R_" prefix, sub-registers as parts of theirs, ARM r13/r14/r15 are
   sp/lr/pc). Operands of other registers (flags, vector, segment registers), of names
   the model does not know, and of the set without a value are skipped and counted
   (info.skipped_operands): Tenet's parser rejects unknown names. One thread per file (Tenet's tracers write trace.<tid>.log).

   ---------------------------------------------------------------------------------------
   API OVERVIEW

   Coverage     frames_cov_open / _add_module / _add_frame / _finish / _info_get /
                _module_at / _blocks / _write_drcov / _error / _close
   Tenet        frames_tenet_arch_of / _arch_name / _arch_parse / _arch_reg,
                frames_tenet_open / _add_frame / _finish / _info_get / _error / _close
   Statistics   frames_stats_open / _add_frame / _finish / _summary_get / _hottest /
                _syscalls / _threads / _modules / _error / _close
   Slicing      frames_slice_filter_default, frames_slice_match, frames_slice (open the
                output with frames_writer_options_like to keep the source's container)
   Splitting    frames_split_alignment, frames_split_ranges
   ---------------------------------------------------------------------------------------
   SECTIONS (in file order; each starts with a banner of '=' or '-' lines,
   the title on the line below it: grep -n '^   TITLE' finds it)

   Coverage: basic blocks and drcov
   Tenet text traces
   Statistics
   Slicing and splitting
   IMPLEMENTATION
     Shared pieces: errors, growable arrays, a u64 -> (count, aux) hash map, module tables
     Coverage
     Tenet
     Statistics
     Slicing and splitting
*/

/* Strict ISO modes hide POSIX declarations that frames_replay.h's implementation (which
   this one brings along for frames_tenet) uses: ask for them as frames.h does, when no
   feature-test macro was chosen and this header comes before any system header. */
#if (defined(FRAMES_INTEROP_IMPLEMENTATION) || defined(FRAMES_ALL_IMPLEMENTATION)) &&          \
    defined(__STRICT_ANSI__) && !defined(_WIN32) && !defined(FRAMES_NO_POSIX) &&           \
    !defined(_DEFAULT_SOURCE) && !defined(_GNU_SOURCE) && !defined(_POSIX_C_SOURCE) &&      \
    !defined(_XOPEN_SOURCE) && !defined(_BSD_SOURCE)
#define _DEFAULT_SOURCE 1
#endif

#ifndef FRAMES_INTEROP_H_INCLUDED
#define FRAMES_INTEROP_H_INCLUDED

#if defined(FRAMES_INTEROP_STATIC) && !defined(FRAMES_STATIC) && !defined(FRAMES_H_INCLUDED)
#define FRAMES_STATIC   /* frames.h comes with it: one private copy of both */
#endif
#include "frames.h"
#if defined(FRAMES_INTEROP_STATIC) && !defined(FRAMES_INTEROP_DEF)   /* even after a shared frames.h */
#define FRAMES_INTEROP_DEF FRAMES__STATIC_DEF
#elif !defined(FRAMES_INTEROP_DEF)
#define FRAMES_INTEROP_DEF FRAMES_DEF
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ======================================================================================
   Coverage: basic blocks and drcov
   ====================================================================================== */

typedef struct frames_cov frames_cov;

typedef struct frames_cov_module {
    const char *name;      /* NUL-terminated copy (may contain NUL: use name_len) */
    size_t name_len;
    uint64_t base;         /* first address */
    uint64_t end;          /* one past the last address */
} frames_cov_module;

typedef struct frames_cov_block {
    uint32_t offset;       /* start - module base */
    uint16_t size;         /* bytes */
    uint16_t module;       /* module id (index in the module table) */
} frames_cov_block;

typedef struct frames_cov_info {
    uint64_t instructions;     /* std_frames seen */
    uint64_t outside;          /* instructions in no module (not in any block) */
    uint64_t far_blocks;       /* block pieces 4 GiB or more past their module base */
    uint64_t modules_ignored;  /* modload frames with low > high, or past 65535 modules */
    uint64_t threads;          /* distinct thread ids of std_frames */
    uint32_t nmodules;
    size_t nblocks;            /* unique blocks so far (all of them after finish) */
} frames_cov_info;

FRAMES_INTEROP_DEF int frames_cov_open(frames_cov **c, void *alloc_ctx, frames_error *err);
/* An explicit module [base, end). Once one is added, modload frames are ignored. */
FRAMES_INTEROP_DEF int frames_cov_add_module(frames_cov *c, const void *name, size_t name_len,
                                     uint64_t base, uint64_t end);
/* Feed every frame in trace order (kinds other than std and modload are ignored). */
FRAMES_INTEROP_DEF int frames_cov_add_frame(frames_cov *c, const frames_frame *f);
/* Close the blocks still open and sort the block table. Call once, after the last frame. */
FRAMES_INTEROP_DEF int frames_cov_finish(frames_cov *c);
FRAMES_INTEROP_DEF void frames_cov_info_get(const frames_cov *c, frames_cov_info *info);
FRAMES_INTEROP_DEF const frames_cov_module *frames_cov_module_at(const frames_cov *c, uint32_t id);
FRAMES_INTEROP_DEF const frames_cov_block *frames_cov_blocks(const frames_cov *c, size_t *n);
FRAMES_INTEROP_DEF const frames_error *frames_cov_error(const frames_cov *c);
FRAMES_INTEROP_DEF void frames_cov_close(frames_cov *c);
#ifndef FRAMES_NO_TEXT
/* The whole drcov file (text header + binary table) through `out` (after finish). */
FRAMES_INTEROP_DEF int frames_cov_write_drcov(const frames_cov *c, frames_out_fn out, void *ctx);
#endif

/* ======================================================================================
   Tenet text traces
   ====================================================================================== */

typedef enum frames_tenet_arch {
    FRAMES_TENET_NONE = 0,
    FRAMES_TENET_X86 = 1,     /* Tenet's ArchX86:   eax ebx ecx edx ebp esp esi edi, eip */
    FRAMES_TENET_AMD64 = 2,   /* Tenet's ArchAMD64: rax .. r15, rip */
    FRAMES_TENET_ARM32 = 3    /* Tenet's ArchArm32: r0 .. r12 sp lr, pc */
} frames_tenet_arch;

/* From the trace header: x86-64 (frames_arch_is_x86_64) -> AMD64, other i386 -> X86,
   arm -> ARM32, anything else -> NONE (Tenet has no register set for it). */
FRAMES_INTEROP_DEF frames_tenet_arch frames_tenet_arch_of(uint64_t arch, uint64_t machine);
FRAMES_INTEROP_DEF const char *frames_tenet_arch_name(frames_tenet_arch a);   /* "x86", ... */
FRAMES_INTEROP_DEF frames_tenet_arch frames_tenet_arch_parse(const char *name); /* NONE if unknown */
/* Register i of the set in Tenet's order, without the pc ("rax", ...); NULL past the end. */
FRAMES_INTEROP_DEF const char *frames_tenet_arch_reg(frames_tenet_arch a, unsigned i);

#ifndef FRAMES_INTEROP_TENET_HOLD
#define FRAMES_INTEROP_TENET_HOLD ((size_t)64 << 20)
#endif

typedef struct frames_tenet frames_tenet;

typedef struct frames_tenet_info {
    uint64_t lines;            /* lines written */
    uint64_t thread_id;        /* the thread converted (valid when thread_chosen) */
    int thread_chosen;
    uint64_t other_threads;    /* std_frames of other threads, skipped */
    uint64_t skipped_operands; /* register operands outside the Tenet set (flags, ...) */
    /* bit i = register i of the set (frames_tenet_arch_reg), once the first line is out: */
    uint32_t initial;          /* on the first line: read before written */
    uint32_t written_first;    /* written (or a part of it) before any read: no initial value */
    int first_line_cut;        /* written at the FRAMES_INTEROP_TENET_HOLD bound, before the end */
} frames_tenet_info;

#ifndef FRAMES_NO_TEXT
/* thread_id NULL: convert the thread of the first std_frame. */
FRAMES_INTEROP_DEF int frames_tenet_open(frames_tenet **t, frames_tenet_arch arch,
                                   const uint64_t *thread_id, void *alloc_ctx,
                                   frames_error *err);
/* One line per std_frame of the chosen thread, through `out`: held back until the first
   line is known (see RULES), then written as they come. */
FRAMES_INTEROP_DEF int frames_tenet_add_frame(frames_tenet *t, const frames_frame *f,
                                      frames_out_fn out, void *ctx);
/* Writes the lines still held back. Call once, after the last frame. */
FRAMES_INTEROP_DEF int frames_tenet_finish(frames_tenet *t, frames_out_fn out, void *ctx);
FRAMES_INTEROP_DEF void frames_tenet_info_get(const frames_tenet *t, frames_tenet_info *info);
FRAMES_INTEROP_DEF const frames_error *frames_tenet_error(const frames_tenet *t);
FRAMES_INTEROP_DEF void frames_tenet_close(frames_tenet *t);
#endif

/* ======================================================================================
   Statistics
   ====================================================================================== */

typedef struct frames_stats frames_stats;

typedef struct frames_stats_count {
    uint64_t key;     /* pc or syscall number */
    uint64_t count;
} frames_stats_count;

typedef struct frames_stats_thread {
    uint64_t thread_id;
    uint64_t frames;        /* std, syscall and exception frames naming the thread */
    uint64_t instructions;  /* std_frames */
    uint64_t syscalls;
} frames_stats_thread;

typedef struct frames_stats_module {
    const char *name;          /* NUL-terminated copy; name_len bytes */
    size_t name_len;
    uint64_t base, end;        /* [base, end) as in frames_cov */
    uint64_t instructions;     /* executed instructions attributed to the module */
    uint64_t unique_pcs;       /* distinct instruction addresses in it */
    uint64_t covered_bytes;    /* sum of the lengths of those instructions */
} frames_stats_module;

typedef struct frames_stats_summary {
    uint64_t frames;
    uint64_t by_kind[8];       /* index frames_kind (NONE .. UNKNOWN) */
    uint64_t instructions;     /* std_frames */
    uint64_t unique_pcs;
    uint64_t outside;          /* instructions in no module */
    uint64_t threads;
    uint64_t syscall_numbers;  /* distinct syscall numbers */
    uint64_t modules;
} frames_stats_summary;

FRAMES_INTEROP_DEF int frames_stats_open(frames_stats **s, void *alloc_ctx, frames_error *err);
/* An explicit module [base, end) for the modules table (before the first frame). Once
   one is added, modload frames are ignored, as in frames_cov_add_module. */
FRAMES_INTEROP_DEF int frames_stats_add_module(frames_stats *s, const void *name, size_t name_len,
                                       uint64_t base, uint64_t end);
FRAMES_INTEROP_DEF int frames_stats_add_frame(frames_stats *s, const frames_frame *f);
/* What frames_stats_add_frame does for a std_frame, from its head alone (frames_peek_std):
   the statistics use nothing else of it. */
FRAMES_INTEROP_DEF int frames_stats_add_std(frames_stats *s, uint64_t address, uint64_t thread_id,
                                    size_t nrawbytes);
/* Sort the thread and syscall tables. Call once, after the last frame. */
FRAMES_INTEROP_DEF int frames_stats_finish(frames_stats *s);
FRAMES_INTEROP_DEF void frames_stats_summary_get(const frames_stats *s, frames_stats_summary *sum);
/* Up to max most executed pcs, by count (descending) then pc; returns how many. */
FRAMES_INTEROP_DEF size_t frames_stats_hottest(const frames_stats *s, frames_stats_count *out, size_t max);
/* After finish: sorted by number / thread id; modules in load order. */
FRAMES_INTEROP_DEF const frames_stats_count *frames_stats_syscalls(const frames_stats *s, size_t *n);
FRAMES_INTEROP_DEF const frames_stats_thread *frames_stats_threads(const frames_stats *s, size_t *n);
FRAMES_INTEROP_DEF const frames_stats_module *frames_stats_modules(const frames_stats *s, size_t *n);
FRAMES_INTEROP_DEF const frames_error *frames_stats_error(const frames_stats *s);
FRAMES_INTEROP_DEF void frames_stats_close(frames_stats *s);

/* ======================================================================================
   Slicing and splitting
   ====================================================================================== */

/* A frame is selected when it is inside [first, end) and passes every filter that is on:
   - pc:  std and syscall frames whose address, and exception frames whose from_addr, is
          in [pc_lo, pc_hi);
   - tid: std, syscall frames and exception frames with that thread_id.
   A frame without the field a filter needs fails that filter, except modload frames,
   which always pass the pc and tid filters (module maps stay usable on a slice). */
typedef struct frames_slice_filter {
    uint64_t first, end;       /* frame index range; end = UINT64_MAX: to the end */
    uint64_t pc_lo, pc_hi;
    uint64_t thread_id;
    int has_pc, has_tid;
} frames_slice_filter;

FRAMES_INTEROP_DEF void frames_slice_filter_default(frames_slice_filter *flt);  /* everything */
/* The pc/tid part of the rule above (the index range is the caller's). */
FRAMES_INTEROP_DEF int frames_slice_match(const frames_slice_filter *flt, const frames_frame *f);
/* progress (frames_progress_fn of frames.h) is called every 4096 frames read: done = the
   index of the next frame, total = flt->end (0 when the range is open). */

/* Copy the selected frames of r (from its current position; seeks to flt->first when the
   reader has random access, else reads forward) to w as they are stored (no re-encoding).
   *copied (may be NULL) receives the number of frames written. Does not finish w. Open w
   with frames_writer_options_like(r) for a slice with the source's version, arch,
   machine, frames per TOC entry, TOC convention and meta bytes. */
FRAMES_INTEROP_DEF int frames_slice(frames_reader *r, frames_writer *w, const frames_slice_filter *flt,
                            frames_progress_fn progress, void *progress_ctx,
                            uint64_t *copied, frames_error *err);

/* Alignment of chunk boundaries: m (frames per TOC entry) when the reader uses its TOC,
   so that every boundary is a TOC entry and seeking there costs O(1); else 1. */
FRAMES_INTEROP_DEF uint64_t frames_split_alignment(frames_reader *r);
/* Split [0, nframes) into at most `chunks` non-empty ranges whose boundaries are multiples
   of `align` (the last ends at nframes), as even as possible in whole aligned blocks.
   bounds[] receives k+1 increasing boundaries for the k ranges [bounds[i], bounds[i+1]);
   it must hold min(chunks, ceil(nframes / align), 2^32 - 1) + 1 entries. Returns k (0 when
   nframes or chunks is 0). */
FRAMES_INTEROP_DEF uint64_t frames_split_ranges(uint64_t nframes, uint64_t align, uint64_t chunks,
                                        uint64_t *bounds);

#ifdef __cplusplus
}
#endif
#endif /* FRAMES_INTEROP_H_INCLUDED */

/* ======================================================================================
   IMPLEMENTATION
   ====================================================================================== */
#if defined(FRAMES_INTEROP_IMPLEMENTATION) || defined(FRAMES_ALL_IMPLEMENTATION)
#ifndef FRAMES_INTEROP_IMPLEMENTATION_INCLUDED
#define FRAMES_INTEROP_IMPLEMENTATION_INCLUDED

#define FRAMES__WANT_HELPERS
#include "frames.h"
#ifndef FRAMES_NO_TEXT
/* frames_tenet follows the registers with frames_replay.h's register model: its
   implementation comes along (private to this file with FRAMES_INTEROP_STATIC or
   FRAMES_STATIC), unless FRAMES_INTEROP_NO_REPLAY_IMPL says another file of the program
   compiles it */
#if defined(FRAMES_INTEROP_STATIC) && !defined(FRAMES_REPLAY_H_INCLUDED) && !defined(FRAMES_REPLAY_STATIC)
#define FRAMES_REPLAY_STATIC
#endif
#if !defined(FRAMES_INTEROP_NO_REPLAY_IMPL) || defined(FRAMES_STATIC) || defined(FRAMES_REPLAY_STATIC)
#ifndef FRAMES_REPLAY_IMPLEMENTATION
#define FRAMES_REPLAY_IMPLEMENTATION
#endif
#endif
#include "frames_replay.h"
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* --------------------------------------------------------------------------------------
   Shared pieces: errors, growable arrays, a u64 -> (count, aux) hash map, module tables
   -------------------------------------------------------------------------------------- */

/* The u64 -> (count, aux) maps: frames.h's hash table of these slots. */
typedef struct frames__interop_slot {
    uint64_t hash;   /* the table's */
    uint64_t key, count, aux;
} frames__interop_slot;

/* One slot a key the trace shows: memory grows with what was read, as the trace's own
   frames do (no bound beyond the allocator's). */
static void frames__interop_map_init(frames__htab *m) {
    FRAMES__HTAB_INIT(m, frames__interop_slot, (size_t)-1);
}

/* The slot of key, created (zeroed, *fresh = 1) if absent. NULL when out of memory. */
static frames__interop_slot *frames__interop_map_put(frames__htab *m, uint64_t key, int *fresh,
                                                     void *actx) {
    uint64_t h = frames__mix64(key);
    size_t at = 0;
    frames__interop_slot *s;
    while ((s = FRAMES__HTAB_NEXT(m, frames__interop_slot, h, &at)) && s->key != key) {}
    *fresh = !s;
    if (!s && (s = (frames__interop_slot *)frames__htab_add(m, h, actx)) != NULL) s->key = key;
    return s;
}

#define FRAMES__INTEROP_NOMOD 0xffffffffu
#define FRAMES__INTEROP_MAXMODS 65535u

typedef struct frames__interop_mod {
    char *name;
    size_t name_len;
    uint64_t base, end;
} frames__interop_mod;

typedef struct frames__interop_mods {
    frames__interop_mod *v;
    size_t n, cap;
    uint32_t last;       /* cache: index of the last module found */
    int overlap;         /* some modules overlap: search newest first every time */
    uint64_t ignored;
} frames__interop_mods;

/* Adds [base, end); 1 added, 0 ignored (empty range or table full), -1 out of memory. */
static int frames__interop_mods_add(frames__interop_mods *t, const void *name, size_t len, uint64_t base,
                               uint64_t end, void *actx) {
    frames__interop_mod *m;
    size_t i;
    if (base >= end || t->n >= FRAMES__INTEROP_MAXMODS) {
        t->ignored++;
        return 0;
    }
    if (len > (size_t)-1 - 1) return -1;
    if (FRAMES__GROW(t->v, t->cap, (t->n) + 1, actx) < 0) return -1;
    m = &t->v[t->n];
    m->name = (char *)FRAMES_MALLOC(len + 1, actx);
    if (!m->name) return -1;
    if (len) memcpy(m->name, name, len);
    m->name[len] = 0;
    m->name_len = len;
    m->base = base;
    m->end = end;
    for (i = 0; i < t->n; i++)
        if (t->v[i].base < end && base < t->v[i].end) t->overlap = 1;
    t->n++;
    t->last = FRAMES__INTEROP_NOMOD;
    return 1;
}

static int frames__interop_mods_add_modload(frames__interop_mods *t, const frames_modload_frame *ml,
                                       void *actx) {
    uint64_t end;
    if (ml->low_address > ml->high_address) {
        t->ignored++;
        return 0;
    }
    end = ml->high_address == UINT64_MAX ? UINT64_MAX : ml->high_address + 1;
    return frames__interop_mods_add(t, ml->module_name.ptr, ml->module_name.len, ml->low_address,
                               end, actx);
}

/* The most recently added module containing pc, or FRAMES__INTEROP_NOMOD. */
static uint32_t frames__interop_mods_find(frames__interop_mods *t, uint64_t pc) {
    size_t i;
    if (!t->overlap && t->last != FRAMES__INTEROP_NOMOD && pc >= t->v[t->last].base &&
        pc < t->v[t->last].end)
        return t->last;
    for (i = t->n; i-- > 0;)
        if (pc >= t->v[i].base && pc < t->v[i].end) return t->last = (uint32_t)i;
    return FRAMES__INTEROP_NOMOD;
}

static void frames__interop_mods_free(frames__interop_mods *t, void *actx) {
    size_t i;
    for (i = 0; i < t->n; i++) FRAMES_FREE(t->v[i].name, actx);
    FRAMES_FREE(t->v, actx);
    memset(t, 0, sizeof *t);
}

/* --------------------------------------------------------------------------------------
   Coverage
   -------------------------------------------------------------------------------------- */

typedef struct frames__interop_thread_block {
    uint64_t start, next;
    uint32_t module;
    int open;
} frames__interop_thread_block;

struct frames_cov {
    frames__interop_mods mods;
    int explicit_mods;
    frames__htab threads;                      /* tid -> aux = index in thr */
    frames__interop_thread_block *thr;
    size_t nthr, capthr;
    frames__htab blockset;                     /* packed (module, offset, size) */
    frames_cov_block *blocks;
    size_t nblocks, capblocks;
    frames_cov_module *pub;                /* public view of the module table */
    size_t capppub;
    frames_cov_info info;
    int finished;
    void *actx;
    frames_error err;
};

FRAMES_INTEROP_DEF int frames_cov_open(frames_cov **out, void *alloc_ctx, frames_error *err) {
    frames_cov *c = (frames_cov *)FRAMES_MALLOC(sizeof *c, alloc_ctx);
    *out = NULL;
    if (!c) {
        frames__fail(err, FRAMES_E_NOMEM, FRAMES_NO_POS, FRAMES_NO_POS, "coverage: out of memory");
        return FRAMES_E_NOMEM;
    }
    memset(c, 0, sizeof *c);
    c->actx = alloc_ctx;
    c->mods.last = FRAMES__INTEROP_NOMOD;
    frames__interop_map_init(&c->threads);
    frames__interop_map_init(&c->blockset);
    frames__clear_error(&c->err);
    *out = c;
    return FRAMES_OK;
}

static int frames__cov_nomem(frames_cov *c) {
    frames__fail(&c->err, FRAMES_E_NOMEM, FRAMES_NO_POS, FRAMES_NO_POS, "coverage: out of memory after %llu instructions",
                      (unsigned long long)c->info.instructions);
    return FRAMES_E_NOMEM;
}

FRAMES_INTEROP_DEF int frames_cov_add_module(frames_cov *c, const void *name, size_t name_len,
                                     uint64_t base, uint64_t end) {
    int rc;
    if (c->finished) {
        frames__fail(&c->err, FRAMES_E_STATE, FRAMES_NO_POS, FRAMES_NO_POS, "coverage: module added after finish");
        return FRAMES_E_STATE;
    }
    if (base >= end) {
        frames__fail(&c->err, FRAMES_E_INVALID, FRAMES_NO_POS, FRAMES_NO_POS,
                          "coverage: module range 0x%llx-0x%llx is empty",
                          (unsigned long long)base, (unsigned long long)end);
        return FRAMES_E_INVALID;
    }
    c->explicit_mods = 1;
    rc = frames__interop_mods_add(&c->mods, name, name_len, base, end, c->actx);
    if (rc < 0) return frames__cov_nomem(c);
    if (rc == 0) {
        frames__fail(&c->err, FRAMES_E_LIMIT, FRAMES_NO_POS, FRAMES_NO_POS, "coverage: more than %u modules",
                          FRAMES__INTEROP_MAXMODS);
        return FRAMES_E_LIMIT;
    }
    return FRAMES_OK;
}

/* Record the block [start, next) of module m, split into pieces of at most 65535 bytes. */
static int frames__cov_emit(frames_cov *c, uint64_t start, uint64_t next, uint32_t m) {
    uint64_t base = c->mods.v[m].base;
    while (start < next) {
        uint64_t size = next - start, off = start - base;
        if (size > 0xffff) size = 0xffff;
        if (off > 0xffffffffull) {
            c->info.far_blocks++;
        } else {
            uint64_t key = ((uint64_t)m << 48) | (off << 16) | size;
            int fresh;
            frames__interop_slot *s = frames__interop_map_put(&c->blockset, key, &fresh, c->actx);
            if (!s) return frames__cov_nomem(c);
            if (fresh) {
                frames_cov_block *b;
                if (FRAMES__GROW(c->blocks, c->capblocks, (c->nblocks) + 1, c->actx) < 0)
                    return frames__cov_nomem(c);
                b = &c->blocks[c->nblocks++];
                b->offset = (uint32_t)off;
                b->size = (uint16_t)size;
                b->module = (uint16_t)m;
            }
        }
        start += size;
    }
    return FRAMES_OK;
}

static frames__interop_thread_block *frames__cov_thread(frames_cov *c, uint64_t tid) {
    int fresh;
    frames__interop_slot *s = frames__interop_map_put(&c->threads, tid, &fresh, c->actx);
    if (!s) return NULL;
    if (fresh) {
        if (FRAMES__GROW(c->thr, c->capthr, (c->nthr) + 1, c->actx) < 0)
            return NULL;
        s->aux = c->nthr;
        memset(&c->thr[c->nthr], 0, sizeof c->thr[0]);
        c->nthr++;
        c->info.threads++;
    }
    return &c->thr[s->aux];
}

FRAMES_INTEROP_DEF int frames_cov_add_frame(frames_cov *c, const frames_frame *f) {
    frames__interop_thread_block *t;
    uint64_t pc, len, next;
    uint32_t m;
    if (c->finished) {
        frames__fail(&c->err, FRAMES_E_STATE, FRAMES_NO_POS, FRAMES_NO_POS, "coverage: frame added after finish");
        return FRAMES_E_STATE;
    }
    if (f->kind == FRAMES_KIND_MODLOAD) {
        if (!c->explicit_mods &&
            frames__interop_mods_add_modload(&c->mods, &f->modload, c->actx) < 0)
            return frames__cov_nomem(c);
        return FRAMES_OK;
    }
    if (f->kind != FRAMES_KIND_STD) return FRAMES_OK;
    pc = f->std.address;
    len = f->std.rawbytes.len ? (uint64_t)f->std.rawbytes.len : 1;
    next = pc + len < pc ? UINT64_MAX : pc + len;
    c->info.instructions++;
    m = frames__interop_mods_find(&c->mods, pc);
    t = frames__cov_thread(c, f->std.thread_id);
    if (!t) return frames__cov_nomem(c);
    if (t->open && t->next == pc && t->module == m) {
        t->next = next;
        return FRAMES_OK;
    }
    if (t->open) {
        int rc = frames__cov_emit(c, t->start, t->next, t->module);
        t->open = 0;
        if (rc < 0) return rc;
    }
    if (m == FRAMES__INTEROP_NOMOD) {
        c->info.outside++;
        return FRAMES_OK;
    }
    t->open = 1;
    t->start = pc;
    t->next = next;
    t->module = m;
    return FRAMES_OK;
}

static int frames__cov_block_cmp(const void *a, const void *b) {
    const frames_cov_block *x = (const frames_cov_block *)a, *y = (const frames_cov_block *)b;
    if (x->module != y->module) return x->module < y->module ? -1 : 1;
    if (x->offset != y->offset) return x->offset < y->offset ? -1 : 1;
    if (x->size != y->size) return x->size < y->size ? -1 : 1;
    return 0;
}

FRAMES_INTEROP_DEF int frames_cov_finish(frames_cov *c) {
    size_t i;
    if (c->finished) return FRAMES_OK;
    for (i = 0; i < c->nthr; i++) {
        if (c->thr[i].open) {
            int rc = frames__cov_emit(c, c->thr[i].start, c->thr[i].next, c->thr[i].module);
            c->thr[i].open = 0;
            if (rc < 0) return rc;
        }
    }
    if (c->nblocks > 1) qsort(c->blocks, c->nblocks, sizeof *c->blocks, frames__cov_block_cmp);
    c->pub = (frames_cov_module *)FRAMES_MALLOC((c->mods.n ? c->mods.n : 1) * sizeof *c->pub,
                                                c->actx);
    if (!c->pub) return frames__cov_nomem(c);
    for (i = 0; i < c->mods.n; i++) {
        c->pub[i].name = c->mods.v[i].name;
        c->pub[i].name_len = c->mods.v[i].name_len;
        c->pub[i].base = c->mods.v[i].base;
        c->pub[i].end = c->mods.v[i].end;
    }
    c->finished = 1;
    return FRAMES_OK;
}

FRAMES_INTEROP_DEF void frames_cov_info_get(const frames_cov *c, frames_cov_info *info) {
    *info = c->info;
    info->modules_ignored = c->mods.ignored;
    info->nmodules = (uint32_t)c->mods.n;
    info->nblocks = c->nblocks;
}

FRAMES_INTEROP_DEF const frames_cov_module *frames_cov_module_at(const frames_cov *c, uint32_t id) {
    return c->finished && id < c->mods.n ? &c->pub[id] : NULL;
}

FRAMES_INTEROP_DEF const frames_cov_block *frames_cov_blocks(const frames_cov *c, size_t *n) {
    *n = c->nblocks;
    return c->blocks;
}

FRAMES_INTEROP_DEF const frames_error *frames_cov_error(const frames_cov *c) { return &c->err; }

FRAMES_INTEROP_DEF void frames_cov_close(frames_cov *c) {
    if (!c) return;
    frames__interop_mods_free(&c->mods, c->actx);
    frames__htab_free(&c->threads, c->actx);
    frames__htab_free(&c->blockset, c->actx);
    FRAMES_FREE(c->thr, c->actx);
    FRAMES_FREE(c->blocks, c->actx);
    FRAMES_FREE(c->pub, c->actx);
    FRAMES_FREE(c, c->actx);
}

#ifndef FRAMES_NO_TEXT
static int frames__interop_put(frames_out_fn out, void *ctx, const char *fmt, ...) FRAMES__PRINTF(3, 4);
static int frames__interop_put(frames_out_fn out, void *ctx, const char *fmt, ...) {
    char buf[160];
    int n;
    va_list ap;
    va_start(ap, fmt);
    n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n < 0) return FRAMES_E_IO;
    if ((size_t)n >= sizeof buf) n = (int)sizeof buf - 1;
    return out(ctx, buf, (size_t)n) ? FRAMES_E_IO : FRAMES_OK;
}

/* Module path for the table: control characters would split the line. */
static int frames__interop_put_path(frames_out_fn out, void *ctx, const char *s, size_t n) {
    char buf[256];
    size_t i, k = 0;
    if (n == 0) return out(ctx, "<unnamed>", 9) ? FRAMES_E_IO : FRAMES_OK;
    for (i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        buf[k++] = (char)(ch < 0x20 || ch == 0x7f ? '?' : ch);
        if (k == sizeof buf) {
            if (out(ctx, buf, k)) return FRAMES_E_IO;
            k = 0;
        }
    }
    return k && out(ctx, buf, k) ? FRAMES_E_IO : FRAMES_OK;
}

FRAMES_INTEROP_DEF int frames_cov_write_drcov(const frames_cov *c, frames_out_fn out, void *ctx) {
    size_t i;
    unsigned char entry[8 * 128];
    size_t k = 0;
    if (!c->finished) return FRAMES_E_STATE;
    if (frames__interop_put(out, ctx,
                       "DRCOV VERSION: 2\nDRCOV FLAVOR: drcov\n"
                       "Module Table: version 2, count %u\n"
                       "Columns: id, base, end, entry, checksum, timestamp, path\n",
                       (unsigned)c->mods.n) < 0)
        return FRAMES_E_IO;
    for (i = 0; i < c->mods.n; i++) {
        const frames__interop_mod *m = &c->mods.v[i];
        if (frames__interop_put(out, ctx, "%3u, 0x%016llx, 0x%016llx, 0x%016llx, 0x%08x, 0x%08x, ",
                           (unsigned)i, (unsigned long long)m->base,
                           (unsigned long long)m->end, 0ull, 0u, 0u) < 0 ||
            frames__interop_put_path(out, ctx, m->name, m->name_len) < 0 || out(ctx, "\n", 1))
            return FRAMES_E_IO;
    }
    if (frames__interop_put(out, ctx, "BB Table: %llu bbs\n", (unsigned long long)c->nblocks) < 0)
        return FRAMES_E_IO;
    for (i = 0; i < c->nblocks; i++) {
        const frames_cov_block *b = &c->blocks[i];
        unsigned char *e = entry + k;
        e[0] = (unsigned char)(b->offset & 0xff);
        e[1] = (unsigned char)((b->offset >> 8) & 0xff);
        e[2] = (unsigned char)((b->offset >> 16) & 0xff);
        e[3] = (unsigned char)(b->offset >> 24);
        e[4] = (unsigned char)(b->size & 0xff);
        e[5] = (unsigned char)(b->size >> 8);
        e[6] = (unsigned char)(b->module & 0xff);
        e[7] = (unsigned char)(b->module >> 8);
        k += 8;
        if (k == sizeof entry) {
            if (out(ctx, (const char *)entry, k)) return FRAMES_E_IO;
            k = 0;
        }
    }
    if (k && out(ctx, (const char *)entry, k)) return FRAMES_E_IO;
    return FRAMES_OK;
}
#endif

/* --------------------------------------------------------------------------------------
   Tenet
   -------------------------------------------------------------------------------------- */

FRAMES_INTEROP_DEF frames_tenet_arch frames_tenet_arch_of(uint64_t arch, uint64_t machine) {
    if (arch == FRAMES_ARCH_I386) return frames_arch_is_x86_64(arch, machine) ? FRAMES_TENET_AMD64 : FRAMES_TENET_X86;
    if (arch == FRAMES_ARCH_ARM) return FRAMES_TENET_ARM32;
    return FRAMES_TENET_NONE;
}

FRAMES_INTEROP_DEF const char *frames_tenet_arch_name(frames_tenet_arch a) {
    switch (a) {
    case FRAMES_TENET_X86: return "x86";
    case FRAMES_TENET_AMD64: return "amd64";
    case FRAMES_TENET_ARM32: return "arm32";
    default: return "unknown";
    }
}

/* Register sets in Tenet's order, without the instruction pointer (written last). */
static const char *const frames__tn_x86[] = {"eax", "ebx", "ecx", "edx", "ebp", "esp", "esi", "edi"};
static const char *const frames__tn_amd64[] = {"rax", "rbx", "rcx", "rdx", "rbp", "rsp",
                                               "rsi", "rdi", "r8",  "r9",  "r10", "r11",
                                               "r12", "r13", "r14", "r15"};
static const char *const frames__tn_arm32[] = {"r0", "r1", "r2",  "r3",  "r4",  "r5", "r6", "r7",
                                               "r8", "r9", "r10", "r11", "r12", "sp", "lr"};

FRAMES_INTEROP_DEF const char *frames_tenet_arch_reg(frames_tenet_arch a, unsigned i) {
    switch (a) {
    case FRAMES_TENET_X86: return i < 8 ? frames__tn_x86[i] : NULL;
    case FRAMES_TENET_AMD64: return i < 16 ? frames__tn_amd64[i] : NULL;
    case FRAMES_TENET_ARM32: return i < 15 ? frames__tn_arm32[i] : NULL;
    default: return NULL;
    }
}

FRAMES_INTEROP_DEF frames_tenet_arch frames_tenet_arch_parse(const char *name) {
    if (!strcmp(name, "x86") || !strcmp(name, "i386")) return FRAMES_TENET_X86;
    if (!strcmp(name, "amd64") || !strcmp(name, "x86-64") || !strcmp(name, "x86_64"))
        return FRAMES_TENET_AMD64;
    if (!strcmp(name, "arm32") || !strcmp(name, "arm")) return FRAMES_TENET_ARM32;
    return FRAMES_TENET_NONE;
}

#ifndef FRAMES_NO_TEXT
struct frames_tenet {
    const char *const *names;
    unsigned nregs;
    const char *ip;
    uint64_t mask;                  /* register width (the pc) */
    frames_replay_regs *model;      /* the thread's registers (frames_replay.h) */
    frames_replay_alias alias[16];  /* register i of the set in the model */
    signed char set_of[64];         /* model register (bit of its masks) -> index in the set, -1 */
    uint32_t pc_reg;                /* the pc in the model */
    uint64_t cur[16];               /* values the lines written so far say */
    uint32_t known;
    uint32_t touched;               /* registers the lists since the last line named */
    uint32_t written;               /* registers an instruction wrote (or a part of) */
    uint64_t init[16];              /* initial values (info.initial) for the first line */
    int holding;                    /* lines held back: the first line is not known yet */
    uint64_t first_pc;
    char *hold;                     /* lines 2.. while holding */
    size_t holdlen, holdcap;
    char *mem;                      /* ",mr=0x..:hex" items of the previous instruction */
    size_t memlen, memcap;
    frames_tenet_info info;
    int have_tid;
    void *actx;
    frames_error err;
};

FRAMES_INTEROP_DEF void frames_tenet_close(frames_tenet *t) {
    if (!t) return;
    frames_replay_regs_close(t->model);
    FRAMES_FREE(t->mem, t->actx);
    FRAMES_FREE(t->hold, t->actx);
    FRAMES_FREE(t, t->actx);
}

FRAMES_INTEROP_DEF int frames_tenet_open(frames_tenet **out, frames_tenet_arch arch,
                                   const uint64_t *thread_id, void *alloc_ctx,
                                   frames_error *err) {
    frames_tenet *t;
    uint32_t march;
    uint64_t machine = 0;
    unsigned r;
    int rc;
    *out = NULL;
    if (arch != FRAMES_TENET_X86 && arch != FRAMES_TENET_AMD64 && arch != FRAMES_TENET_ARM32) {
        frames__fail(err, FRAMES_E_INVALID, FRAMES_NO_POS, FRAMES_NO_POS,
                          "tenet: no Tenet register set for this architecture "
                          "(Tenet knows x86, amd64 and arm32)");
        return FRAMES_E_INVALID;
    }
    t = (frames_tenet *)FRAMES_MALLOC(sizeof *t, alloc_ctx);
    if (!t) {
        frames__fail(err, FRAMES_E_NOMEM, FRAMES_NO_POS, FRAMES_NO_POS, "tenet: out of memory");
        return FRAMES_E_NOMEM;
    }
    memset(t, 0, sizeof *t);
    t->actx = alloc_ctx;
    frames__clear_error(&t->err);
    t->holding = 1;
    if (arch == FRAMES_TENET_X86) {
        t->names = frames__tn_x86;
        t->nregs = sizeof frames__tn_x86 / sizeof frames__tn_x86[0];
        t->ip = "eip";
        t->mask = 0xffffffffu;
        march = FRAMES_ARCH_I386;
        machine = FRAMES_MACH_I386;
    } else if (arch == FRAMES_TENET_AMD64) {
        t->names = frames__tn_amd64;
        t->nregs = sizeof frames__tn_amd64 / sizeof frames__tn_amd64[0];
        t->ip = "rip";
        t->mask = UINT64_MAX;
        march = FRAMES_ARCH_I386;
        machine = FRAMES_MACH_X86_64;
    } else {
        t->names = frames__tn_arm32;
        t->nregs = sizeof frames__tn_arm32 / sizeof frames__tn_arm32[0];
        t->ip = "pc";
        t->mask = 0xffffffffu;
        march = FRAMES_ARCH_ARM;
    }
    /* one thread is followed: its file is the only one */
    if ((rc = frames_replay_regs_open(&t->model, march, machine, 1, alloc_ctx, err)) < 0) {
        frames_tenet_close(t);
        return rc;
    }
    memset(t->set_of, -1, sizeof t->set_of);
    t->pc_reg = frames_replay_regs_lookup(t->model, t->ip, strlen(t->ip), &t->alias[0]) ? t->alias[0].reg : UINT32_MAX;
    for (r = 0; r < t->nregs; r++) {
        /* the set's names are full registers of the model's tables, below bit 63 */
        if (!frames_replay_regs_lookup(t->model, t->names[r], strlen(t->names[r]), &t->alias[r]) ||
            t->alias[r].reg >= 63) {
            const char *name = t->names[r];
            frames_tenet_close(t);
            return frames__fail(err, FRAMES_E_INVALID, FRAMES_NO_POS, FRAMES_NO_POS,
                                "tenet: register %s is not in the replay model", name);
        }
        t->set_of[t->alias[r].reg] = (signed char)r;
    }
    if (thread_id) {
        t->have_tid = 1;
        t->info.thread_id = *thread_id;
        t->info.thread_chosen = 1;
    }
    *out = t;
    return FRAMES_OK;
}

/* The registers of the set among the model's register bits. */
static uint32_t frames__tn_set_mask(const frames_tenet *t, uint64_t named) {
    uint32_t m = 0;
    unsigned r;
    for (r = 0; r < t->nregs; r++)
        if ((named >> t->alias[r].reg) & 1) m |= 1u << r;
    return m;
}

/* Operands of a list Tenet cannot carry: registers outside the set (or unknown to the
   model), and the set's registers without a value. The pc is no operand of the lines. */
static void frames__tn_count_skipped(frames_tenet *t, const frames_operand *ops, uint32_t n) {
    uint32_t i;
    for (i = 0; i < n; i++) {
        frames_replay_alias a;
        if (ops[i].spec != FRAMES_REG) continue;
        if (!frames_replay_regs_lookup(t->model, (const char *)ops[i].name.ptr, ops[i].name.len, &a)) {
            t->info.skipped_operands++;
        } else if (a.reg < 63 && t->set_of[a.reg] >= 0) {
            if (ops[i].value.len == 0) t->info.skipped_operands++;
        } else if (a.reg != t->pc_reg) {
            t->info.skipped_operands++;
        }
    }
}

/* One list of s applied to the model: the registers it names are compared at the next
   line; a post list's are written. */
static void frames__tn_apply(frames_tenet *t, const frames_std_frame *s, int post) {
    uint64_t named = 0;
    uint32_t m;
    frames_replay_regs_apply_list(t->model, s, post, &named);   /* one thread: no limit */
    m = frames__tn_set_mask(t, named);
    t->touched |= m;
    if (post) t->written |= m;
    frames__tn_count_skipped(t, post ? s->post : s->pre, post ? s->npost : s->npre);
}

/* Register i of the set as the model knows it now: 1 and *v, or 0 (not wholly known). */
static int frames__tn_value(const frames_tenet *t, uint64_t tid, unsigned i, uint64_t *v) {
    uint8_t b[8];
    if (frames_replay_regs_read(t->model, tid, &t->alias[i], b) != 1) return 0;
    *v = frames__value_u64(b, t->alias[i].size);
    return 1;
}

/* Appends one line (a, then b, then a newline) to the lines held back. */
static int frames__tn_hold(frames_tenet *t, const char *a, size_t an, const char *b, size_t bn) {
    size_t need = t->holdlen + an + bn + 1;
    if (need > t->holdcap) {
        size_t ncap = t->holdcap ? t->holdcap : 4096;
        char *p;
        while (ncap < need) ncap *= 2;
        p = (char *)FRAMES_REALLOC(t->hold, ncap, t->actx);
        if (!p) return -1;
        t->hold = p;
        t->holdcap = ncap;
    }
    memcpy(t->hold + t->holdlen, a, an);
    if (bn) memcpy(t->hold + t->holdlen + an, b, bn);
    t->hold[t->holdlen + an + bn] = '\n';
    t->holdlen = need;
    return 0;
}

/* "name=0xVALUE," into line; returns the bytes written. */
static size_t frames__tn_item(char *line, const char *name, uint64_t v) {
    size_t k = strlen(name), n;
    memcpy(line, name, k);
    line[k] = '=';
    n = k + 1 + frames__hex_u64(line + k + 1, v);
    line[n++] = ',';
    return n;
}

/* The first line (initial values, first pc), then the lines held back; from now on lines
   are written as they come. */
static int frames__tn_release(frames_tenet *t, frames_out_fn out, void *ctx) {
    char line[16 * 24 + 32];
    size_t n = 0;
    unsigned r;
    t->holding = 0;
    t->info.written_first = t->written & ~t->info.initial;
    if (!t->info.lines) return FRAMES_OK;
    for (r = 0; r < t->nregs; r++)
        if (t->info.initial & (1u << r)) n += frames__tn_item(line + n, t->names[r], t->init[r]);
    n += frames__tn_item(line + n, t->ip, t->first_pc) - 1;
    line[n++] = '\n';
    if (out(ctx, line, n) || (t->holdlen && out(ctx, t->hold, t->holdlen))) {
        frames__fail(&t->err, FRAMES_E_IO, FRAMES_NO_POS, FRAMES_NO_POS, "tenet: write failed after %llu lines",
                          (unsigned long long)t->info.lines);
        return FRAMES_E_IO;
    }
    FRAMES_FREE(t->hold, t->actx);
    t->hold = NULL;
    t->holdlen = t->holdcap = 0;
    return FRAMES_OK;
}

static int frames__tn_mem_append(frames_tenet *t, const char *s, size_t n) {
    if (t->memlen + n + 1 > t->memcap) {
        size_t ncap = t->memcap ? t->memcap : 256;
        char *p;
        while (ncap < t->memlen + n + 1) {
            if (ncap > (size_t)-1 / 2) return -1;
            ncap *= 2;
        }
        p = (char *)FRAMES_REALLOC(t->mem, ncap, t->actx);
        if (!p) return -1;
        t->mem = p;
        t->memcap = ncap;
    }
    memcpy(t->mem + t->memlen, s, n);
    t->memlen += n;
    return 0;
}

/* Queue ",mr=0xADDR:HEX" / ",mw=..." for the memory operands of one list. */
static int frames__tn_mem(frames_tenet *t, const frames_operand *ops, uint32_t n, int post) {
    static const char digits[] = "0123456789abcdef";
    uint32_t i;
    for (i = 0; i < n; i++) {
        char head[32], hex[128];
        size_t j, k = 0, hn;
        if (!(ops[i].spec & FRAMES_MEM) || ops[i].value.len == 0) continue;
        if (post ? !ops[i].written : !ops[i].read) continue;
        head[0] = ',';
        head[1] = 'm';
        head[2] = post ? 'w' : 'r';
        head[3] = '=';
        hn = 4 + frames__hex_u64(head + 4, ops[i].address);
        head[hn++] = ':';
        if (frames__tn_mem_append(t, head, hn) < 0) return -1;
        for (j = 0; j < ops[i].value.len; j++) {
            hex[k++] = digits[ops[i].value.ptr[j] >> 4];
            hex[k++] = digits[ops[i].value.ptr[j] & 15];
            if (k == sizeof hex) {
                if (frames__tn_mem_append(t, hex, k) < 0) return -1;
                k = 0;
            }
        }
        if (k && frames__tn_mem_append(t, hex, k) < 0) return -1;
    }
    return 0;
}

FRAMES_INTEROP_DEF int frames_tenet_add_frame(frames_tenet *t, const frames_frame *f,
                                      frames_out_fn out, void *ctx) {
    const frames_std_frame *s = &f->std;
    char line[16 * 24 + 32];   /* 16 registers of <= 23 bytes ("r15=0x" + 16 digits + ","), pc */
    size_t n = 0;
    unsigned r;
    uint32_t all = (uint32_t)((1ull << t->nregs) - 1);
    if (f->kind != FRAMES_KIND_STD) return FRAMES_OK;
    if (!t->have_tid) {
        t->have_tid = 1;
        t->info.thread_chosen = 1;
        t->info.thread_id = s->thread_id;
    } else if (s->thread_id != t->info.thread_id) {
        t->info.other_threads++;
        return FRAMES_OK;
    }
    frames__tn_apply(t, s, 0);
    for (r = 0; r < t->nregs; r++) {
        uint32_t bit = 1u << r;
        uint64_t v;
        if (!(t->touched & bit) || !frames__tn_value(t, s->thread_id, r, &v)) continue;
        if (t->holding && !(t->known & bit) && !(t->written & bit)) {
            /* read whole before anything wrote it: its initial value, on the first line */
            t->cur[r] = t->init[r] = v;
            t->known |= bit;
            t->info.initial |= bit;
        } else if (!(t->known & bit) || t->cur[r] != v) {
            n += frames__tn_item(line + n, t->names[r], v);
            t->cur[r] = v;
            t->known |= bit;
        }
    }
    n += frames__tn_item(line + n, t->ip, s->address & t->mask) - 1;
    if (t->holding && !t->info.lines) {
        t->first_pc = s->address & t->mask; /* the line is made when its registers are known */
    } else if (t->holding) {
        if (frames__tn_hold(t, line, n, t->mem, t->memlen) < 0) {
            frames__fail(&t->err, FRAMES_E_NOMEM, FRAMES_NO_POS, FRAMES_NO_POS, "tenet: out of memory");
            return FRAMES_E_NOMEM;
        }
    } else if (out(ctx, line, n) || (t->memlen && out(ctx, t->mem, t->memlen)) || out(ctx, "\n", 1)) {
        frames__fail(&t->err, FRAMES_E_IO, FRAMES_NO_POS, FRAMES_NO_POS, "tenet: write failed after %llu lines",
                          (unsigned long long)t->info.lines);
        return FRAMES_E_IO;
    }
    t->info.lines++;
    t->touched = 0;
    t->memlen = 0;
    if (frames__tn_mem(t, s->pre, s->npre, 0) < 0 ||
        (s->has_post && frames__tn_mem(t, s->post, s->npost, 1) < 0)) {
        frames__fail(&t->err, FRAMES_E_NOMEM, FRAMES_NO_POS, FRAMES_NO_POS, "tenet: out of memory");
        return FRAMES_E_NOMEM;
    }
    if (s->has_post) frames__tn_apply(t, s, 1);
    if (t->holding && ((t->info.initial | t->written) & all) == all) return frames__tn_release(t, out, ctx);
    if (t->holding && t->holdlen >= FRAMES_INTEROP_TENET_HOLD) {
        t->info.first_line_cut = 1;
        return frames__tn_release(t, out, ctx);
    }
    return FRAMES_OK;
}

FRAMES_INTEROP_DEF int frames_tenet_finish(frames_tenet *t, frames_out_fn out, void *ctx) {
    return t->holding ? frames__tn_release(t, out, ctx) : FRAMES_OK;
}

FRAMES_INTEROP_DEF void frames_tenet_info_get(const frames_tenet *t, frames_tenet_info *info) {
    *info = t->info;
}

FRAMES_INTEROP_DEF const frames_error *frames_tenet_error(const frames_tenet *t) { return &t->err; }

#endif /* FRAMES_NO_TEXT */

/* --------------------------------------------------------------------------------------
   Statistics
   -------------------------------------------------------------------------------------- */

typedef struct frames__interop_modstat {
    uint64_t instructions, unique_pcs, covered_bytes;
} frames__interop_modstat;

struct frames_stats {
    frames_stats_summary sum;
    frames__htab pcs;                    /* pc -> count; aux = length | (module + 1) << 32 */
    frames__htab sys;                    /* number -> count */
    frames__htab thr;                    /* tid -> aux = index in threads */
    frames_stats_thread *threads;
    size_t nthreads, capthreads;
    size_t last_thread;                 /* index of the thread of the last frame + 1, or 0 */
    frames_stats_count *syscalls;
    size_t nsyscalls;
    frames__interop_mods mods;
    frames__interop_modstat *modstat;
    size_t capmodstat;
    frames_stats_module *pubmods;
    int finished;
    int explicit_mods;                  /* frames_stats_add_module: modload frames ignored */
    void *actx;
    frames_error err;
};

FRAMES_INTEROP_DEF int frames_stats_open(frames_stats **out, void *alloc_ctx, frames_error *err) {
    frames_stats *s = (frames_stats *)FRAMES_MALLOC(sizeof *s, alloc_ctx);
    *out = NULL;
    if (!s) {
        frames__fail(err, FRAMES_E_NOMEM, FRAMES_NO_POS, FRAMES_NO_POS, "stats: out of memory");
        return FRAMES_E_NOMEM;
    }
    memset(s, 0, sizeof *s);
    s->actx = alloc_ctx;
    s->mods.last = FRAMES__INTEROP_NOMOD;
    frames__interop_map_init(&s->pcs);
    frames__interop_map_init(&s->sys);
    frames__interop_map_init(&s->thr);
    frames__clear_error(&s->err);
    *out = s;
    return FRAMES_OK;
}

static int frames__st_nomem(frames_stats *s) {
    frames__fail(&s->err, FRAMES_E_NOMEM, FRAMES_NO_POS, FRAMES_NO_POS, "stats: out of memory after %llu frames",
                      (unsigned long long)s->sum.frames);
    return FRAMES_E_NOMEM;
}

static frames_stats_thread *frames__st_thread(frames_stats *s, uint64_t tid) {
    int fresh;
    frames__interop_slot *slot;
    /* frames come in runs of one thread: no look-up while the thread stays the same */
    if (s->last_thread && s->threads[s->last_thread - 1].thread_id == tid)
        return &s->threads[s->last_thread - 1];
    if (!(slot = frames__interop_map_put(&s->thr, tid, &fresh, s->actx))) return NULL;
    if (fresh) {
        if (FRAMES__GROW(s->threads, s->capthreads, (s->nthreads) + 1, s->actx) < 0)
            return NULL;
        slot->aux = s->nthreads;
        memset(&s->threads[s->nthreads], 0, sizeof s->threads[0]);
        s->threads[s->nthreads].thread_id = tid;
        s->nthreads++;
    }
    s->last_thread = (size_t)slot->aux + 1;
    return &s->threads[slot->aux];
}

static int frames__st_instruction(frames_stats *s, uint64_t address, size_t nrawbytes) {
    int fresh;
    uint32_t m = frames__interop_mods_find(&s->mods, address);
    frames__interop_slot *slot = frames__interop_map_put(&s->pcs, address, &fresh, s->actx);
    if (!slot) return -1;
    if (fresh) {
        uint64_t len = nrawbytes ? (uint64_t)nrawbytes : 1;
        slot->aux = len | ((uint64_t)(m == FRAMES__INTEROP_NOMOD ? 0 : m + 1) << 32);
        if (m != FRAMES__INTEROP_NOMOD) {
            s->modstat[m].unique_pcs++;
            s->modstat[m].covered_bytes += len;
        }
    }
    slot->count++;
    if (m == FRAMES__INTEROP_NOMOD) s->sum.outside++;
    else s->modstat[m].instructions++;
    return 0;
}

/* A counter row for the module just added to s->mods. */
static int frames__st_modstat_grow(frames_stats *s) {
    if (FRAMES__GROW(s->modstat, s->capmodstat, (s->mods.n - 1) + 1, s->actx) < 0) return -1;
    memset(&s->modstat[s->mods.n - 1], 0, sizeof s->modstat[0]);
    return 0;
}

FRAMES_INTEROP_DEF int frames_stats_add_module(frames_stats *s, const void *name, size_t name_len,
                                       uint64_t base, uint64_t end) {
    int rc;
    if (s->finished || s->sum.frames) {
        frames__fail(&s->err, FRAMES_E_STATE, FRAMES_NO_POS, FRAMES_NO_POS,
                     "stats: module added after the first frame");
        return FRAMES_E_STATE;
    }
    if (base >= end) {
        frames__fail(&s->err, FRAMES_E_INVALID, FRAMES_NO_POS, FRAMES_NO_POS,
                     "stats: module range 0x%llx-0x%llx is empty", (unsigned long long)base,
                     (unsigned long long)end);
        return FRAMES_E_INVALID;
    }
    s->explicit_mods = 1;
    rc = frames__interop_mods_add(&s->mods, name, name_len, base, end, s->actx);
    if (rc < 0 || (rc > 0 && frames__st_modstat_grow(s) < 0)) return frames__st_nomem(s);
    if (rc == 0) {
        frames__fail(&s->err, FRAMES_E_LIMIT, FRAMES_NO_POS, FRAMES_NO_POS, "stats: more than %u modules",
                     FRAMES__INTEROP_MAXMODS);
        return FRAMES_E_LIMIT;
    }
    return FRAMES_OK;
}

static int frames__st_after_finish(frames_stats *s) {
    frames__fail(&s->err, FRAMES_E_STATE, FRAMES_NO_POS, FRAMES_NO_POS, "stats: frame added after finish");
    return FRAMES_E_STATE;
}

static int frames__st_std(frames_stats *s, uint64_t address, uint64_t thread_id, size_t nrawbytes) {
    frames_stats_thread *t;
    s->sum.instructions++;
    if (frames__st_instruction(s, address, nrawbytes) < 0 || !(t = frames__st_thread(s, thread_id)))
        return frames__st_nomem(s);
    t->frames++;
    t->instructions++;
    return FRAMES_OK;
}

FRAMES_INTEROP_DEF int frames_stats_add_std(frames_stats *s, uint64_t address, uint64_t thread_id,
                                    size_t nrawbytes) {
    if (s->finished) return frames__st_after_finish(s);
    s->sum.frames++;
    s->sum.by_kind[FRAMES_KIND_STD]++;
    return frames__st_std(s, address, thread_id, nrawbytes);
}

FRAMES_INTEROP_DEF int frames_stats_add_frame(frames_stats *s, const frames_frame *f) {
    frames_stats_thread *t = NULL;
    int kind = (int)f->kind;
    if (s->finished) return frames__st_after_finish(s);
    s->sum.frames++;
    if (kind < 0 || kind > 7) kind = FRAMES_KIND_UNKNOWN;
    s->sum.by_kind[kind]++;
    switch (f->kind) {
    case FRAMES_KIND_STD:
        return frames__st_std(s, f->std.address, f->std.thread_id, f->std.rawbytes.len);
    case FRAMES_KIND_SYSCALL: {
        int fresh;
        frames__interop_slot *slot = frames__interop_map_put(&s->sys, f->syscall.number, &fresh, s->actx);
        if (!slot || !(t = frames__st_thread(s, f->syscall.thread_id))) return frames__st_nomem(s);
        slot->count++;
        t->frames++;
        t->syscalls++;
        break;
    }
    case FRAMES_KIND_EXCEPTION:
        if (f->exception.has_thread_id) {
            if (!(t = frames__st_thread(s, f->exception.thread_id))) return frames__st_nomem(s);
            t->frames++;
        }
        break;
    case FRAMES_KIND_MODLOAD: {
        int rc = s->explicit_mods ? 0 : frames__interop_mods_add_modload(&s->mods, &f->modload, s->actx);
        if (rc < 0 || (rc > 0 && frames__st_modstat_grow(s) < 0)) return frames__st_nomem(s);
        break;
    }
    default:
        break;
    }
    return FRAMES_OK;
}

static int frames__st_count_key_cmp(const void *a, const void *b) {
    const frames_stats_count *x = (const frames_stats_count *)a, *y = (const frames_stats_count *)b;
    return x->key < y->key ? -1 : x->key > y->key;
}

static int frames__st_thread_cmp(const void *a, const void *b) {
    const frames_stats_thread *x = (const frames_stats_thread *)a;
    const frames_stats_thread *y = (const frames_stats_thread *)b;
    return x->thread_id < y->thread_id ? -1 : x->thread_id > y->thread_id;
}

FRAMES_INTEROP_DEF int frames_stats_finish(frames_stats *s) {
    size_t i, k = 0;
    if (s->finished) return FRAMES_OK;
    s->syscalls = (frames_stats_count *)FRAMES_MALLOC((s->sys.len ? s->sys.len : 1) *
                                                      sizeof *s->syscalls, s->actx);
    s->pubmods = (frames_stats_module *)FRAMES_MALLOC((s->mods.n ? s->mods.n : 1) *
                                                      sizeof *s->pubmods, s->actx);
    if (!s->syscalls || !s->pubmods) return frames__st_nomem(s);
    for (i = 0; i < s->sys.cap; i++) {
        const frames__interop_slot *e = (const frames__interop_slot *)frames__htab_at(&s->sys, i);
        if (e) {
            s->syscalls[k].key = e->key;
            s->syscalls[k].count = e->count;
            k++;
        }
    }
    s->nsyscalls = k;
    if (k > 1) qsort(s->syscalls, k, sizeof *s->syscalls, frames__st_count_key_cmp);
    if (s->nthreads > 1) qsort(s->threads, s->nthreads, sizeof *s->threads, frames__st_thread_cmp);
    for (i = 0; i < s->mods.n; i++) {
        frames_stats_module *pm = &s->pubmods[i];
        pm->name = s->mods.v[i].name;
        pm->name_len = s->mods.v[i].name_len;
        pm->base = s->mods.v[i].base;
        pm->end = s->mods.v[i].end;
        pm->instructions = s->modstat[i].instructions;
        pm->unique_pcs = s->modstat[i].unique_pcs;
        pm->covered_bytes = s->modstat[i].covered_bytes;
    }
    s->finished = 1;
    return FRAMES_OK;
}

FRAMES_INTEROP_DEF void frames_stats_summary_get(const frames_stats *s, frames_stats_summary *sum) {
    *sum = s->sum;
    sum->unique_pcs = s->pcs.len;
    sum->threads = s->nthreads;
    sum->syscall_numbers = s->sys.len;
    sum->modules = s->mods.n;
}

/* "a is hotter than b": more executions, then the lower pc. */
static int frames__st_hotter(const frames_stats_count *a, const frames_stats_count *b) {
    return a->count != b->count ? a->count > b->count : a->key < b->key;
}

FRAMES_INTEROP_DEF size_t frames_stats_hottest(const frames_stats *s, frames_stats_count *out, size_t max) {
    size_t i, n = 0;
    if (max == 0) return 0;
    /* out[0..n) is a min-heap (coldest at the root) of the hottest seen so far. */
    for (i = 0; i < s->pcs.cap; i++) {
        const frames__interop_slot *e = (const frames__interop_slot *)frames__htab_at(&s->pcs, i);
        frames_stats_count c;
        size_t j;
        if (!e) continue;
        c.key = e->key;
        c.count = e->count;
        if (n < max) {
            j = n++;
            while (j > 0 && frames__st_hotter(&out[(j - 1) / 2], &c)) {
                out[j] = out[(j - 1) / 2];
                j = (j - 1) / 2;
            }
            out[j] = c;
        } else if (frames__st_hotter(&c, &out[0])) {
            j = 0;
            for (;;) {
                size_t l = 2 * j + 1, r = l + 1, m = j;
                const frames_stats_count *mv = &c;
                if (l < n && frames__st_hotter(mv, &out[l])) { m = l; mv = &out[l]; }
                if (r < n && frames__st_hotter(mv, &out[r])) m = r;
                if (m == j) break;
                out[j] = out[m];
                j = m;
            }
            out[j] = c;
        }
    }
    /* Heap to hottest-first order (insertion sort: n is small). */
    for (i = 1; i < n; i++) {
        frames_stats_count c = out[i];
        size_t j = i;
        while (j > 0 && frames__st_hotter(&c, &out[j - 1])) {
            out[j] = out[j - 1];
            j--;
        }
        out[j] = c;
    }
    return n;
}

FRAMES_INTEROP_DEF const frames_stats_count *frames_stats_syscalls(const frames_stats *s, size_t *n) {
    *n = s->finished ? s->nsyscalls : 0;
    return s->syscalls;
}

FRAMES_INTEROP_DEF const frames_stats_thread *frames_stats_threads(const frames_stats *s, size_t *n) {
    *n = s->nthreads;
    return s->threads;
}

FRAMES_INTEROP_DEF const frames_stats_module *frames_stats_modules(const frames_stats *s, size_t *n) {
    *n = s->finished ? s->mods.n : 0;
    return s->pubmods;
}

FRAMES_INTEROP_DEF const frames_error *frames_stats_error(const frames_stats *s) { return &s->err; }

FRAMES_INTEROP_DEF void frames_stats_close(frames_stats *s) {
    if (!s) return;
    frames__htab_free(&s->pcs, s->actx);
    frames__htab_free(&s->sys, s->actx);
    frames__htab_free(&s->thr, s->actx);
    frames__interop_mods_free(&s->mods, s->actx);
    FRAMES_FREE(s->threads, s->actx);
    FRAMES_FREE(s->syscalls, s->actx);
    FRAMES_FREE(s->modstat, s->actx);
    FRAMES_FREE(s->pubmods, s->actx);
    FRAMES_FREE(s, s->actx);
}

/* --------------------------------------------------------------------------------------
   Slicing and splitting
   -------------------------------------------------------------------------------------- */

FRAMES_INTEROP_DEF void frames_slice_filter_default(frames_slice_filter *flt) {
    memset(flt, 0, sizeof *flt);
    flt->end = UINT64_MAX;
}

FRAMES_INTEROP_DEF int frames_slice_match(const frames_slice_filter *flt, const frames_frame *f) {
    int has_pc = 0, has_tid = 0;
    uint64_t pc = 0, tid = 0;
    if (!flt->has_pc && !flt->has_tid) return 1;
    switch (f->kind) {
    case FRAMES_KIND_MODLOAD: return 1;
    case FRAMES_KIND_STD:
        has_pc = has_tid = 1;
        pc = f->std.address;
        tid = f->std.thread_id;
        break;
    case FRAMES_KIND_SYSCALL:
        has_pc = has_tid = 1;
        pc = f->syscall.address;
        tid = f->syscall.thread_id;
        break;
    case FRAMES_KIND_EXCEPTION:
        has_pc = f->exception.has_from_addr;
        pc = f->exception.from_addr;
        has_tid = f->exception.has_thread_id;
        tid = f->exception.thread_id;
        break;
    default:
        break;
    }
    if (flt->has_pc && (!has_pc || pc < flt->pc_lo || pc >= flt->pc_hi)) return 0;
    if (flt->has_tid && (!has_tid || tid != flt->thread_id)) return 0;
    return 1;
}

FRAMES_INTEROP_DEF int frames_slice(frames_reader *r, frames_writer *w, const frames_slice_filter *flt,
                            frames_progress_fn progress, void *progress_ctx,
                            uint64_t *copied, frames_error *err) {
    frames_decoder dec;
    frames_raw raw;
    frames_frame f;
    uint64_t n = 0;
    int rc, filter = flt->has_pc || flt->has_tid;
    if (copied) *copied = 0;
    if (flt->first >= flt->end) return FRAMES_OK;
    if (frames_reader_tell(r) != flt->first) {
        rc = frames_reader_seek(r, flt->first);
        if (rc == FRAMES_E_RANGE) return FRAMES_OK;   /* starts past the end: nothing */
        if (rc == FRAMES_E_UNSUPPORTED && frames_reader_tell(r) < flt->first) {
            while (frames_reader_tell(r) < flt->first) {   /* stream: read forward */
                rc = frames_reader_next_raw(r, &raw);
                if (rc == 0) return FRAMES_OK;
                if (rc < 0) goto reader_failed;
            }
        } else if (rc < 0) {
            goto reader_failed;
        }
    }
    frames_decoder_init(&dec, NULL, 0, NULL);
    while (frames_reader_tell(r) < flt->end) {
        uint64_t index = frames_reader_tell(r);
        rc = frames_reader_next_raw(r, &raw);
        if (rc == 0) break;
        if (rc < 0) {
            frames_decoder_free(&dec);
            goto reader_failed;
        }
        if (progress && (index & 4095) == 0)
            progress(progress_ctx, index, flt->end == UINT64_MAX ? 0 : flt->end);
        if (filter) {
            frames_error derr;
            rc = frames_decode_frame(&dec, raw.payload.ptr, raw.payload.len, &f, &derr);
            if (rc < 0) {
                frames__fail(err, rc, FRAMES_NO_POS, FRAMES_NO_POS, "slice: frame %llu at offset %llu does not decode: %s",
                                  (unsigned long long)index, (unsigned long long)raw.offset,
                                  derr.message);
                if (err) {
                    err->frame = index;
                    err->offset = raw.offset;
                }
                frames_decoder_free(&dec);
                return rc;
            }
            if (!frames_slice_match(flt, &f)) continue;
        }
        rc = frames_writer_add_encoded(w, raw.payload.ptr, raw.payload.len);
        if (rc < 0) {
            if (err) *err = *frames_writer_error(w);
            frames_decoder_free(&dec);
            return rc;
        }
        n++;
        if (copied) *copied = n;
    }
    frames_decoder_free(&dec);
    return FRAMES_OK;
reader_failed:
    if (err) *err = *frames_reader_error(r);
    return rc;
}

FRAMES_INTEROP_DEF uint64_t frames_split_alignment(frames_reader *r) {
    frames_reader_info st;
    if (frames_reader_info_get(r, &st) == FRAMES_OK && st.toc_used && st.frames_per_toc > 0)
        return st.frames_per_toc;
    return 1;
}

FRAMES_INTEROP_DEF uint64_t frames_split_ranges(uint64_t nframes, uint64_t align, uint64_t chunks,
                                        uint64_t *bounds) {
    uint64_t blocks, k, i;
    if (nframes == 0 || chunks == 0) return 0;
    if (align == 0) align = 1;
    blocks = nframes / align + (nframes % align != 0);
    k = chunks < blocks ? chunks : blocks;
    if (k > 0xffffffffull) k = 0xffffffffull;
    /* Range i gets whole blocks [i*blocks/k, (i+1)*blocks/k), computed without overflow:
       blocks = q*k + rem, so i*blocks/k = i*q + i*rem/k with i <= k < 2^32 and rem < k. */
    for (i = 0; i <= k; i++) {
        uint64_t q = blocks / k, rem = blocks % k;
        uint64_t b = i * q + i * rem / k;
        uint64_t frame = b > nframes / align ? nframes : b * align;
        bounds[i] = frame > nframes ? nframes : frame;
    }
    bounds[k] = nframes;
    return k;
}

#ifdef __cplusplus
}
#endif

#endif /* FRAMES_INTEROP_IMPLEMENTATION_INCLUDED */
#endif /* FRAMES_INTEROP_IMPLEMENTATION || FRAMES_ALL_IMPLEMENTATION */

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
