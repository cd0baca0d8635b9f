/* frames_vprof.h - value profiles of frames traces: redundant loads, silent stores and
   zero-value loads, per instruction. Single-header C99 library (also compiles as C++) on
   top of frames.h. MIT licence, see end of file.

   ---------------------------------------------------------------------------------------
   WHAT IT IS

   The offline counterparts of VClinic's value-profiling clients: feed it the frames of a
   trace (or single accesses from a live tracer) and it counts, per instruction, the loads
   that read again what the same address gave last time with nothing written in between,
   the stores that write what memory already holds, and the loads of zero. Bounded
   memory (two capped hash tables), no allocation per access once they have grown, no
   global state, no stdio.

   ---------------------------------------------------------------------------------------
   USAGE

   In exactly one C or C++ file (frames.h's implementation may live in another file):

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

   Bounded memory. Two tables track memory: previous loads by start address and known
   content by 8-byte-aligned granule; each holds at most `max_addresses` entries (default
   2^21, about 64 MiB per table when full). An access that would need a new entry in a
   full table is counted in stats.untracked_accesses and address_cap_hit is set: loads
   there are not redundant and stores there are unchecked, so every count is then a lower
   bound. Per-instruction rows (keyed by the frame's address) are bounded by
   `max_instructions`; accesses of instructions beyond it count only in the totals.

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
   IMPLEMENTATION
     State: hash tables of loads, content granules and rows
     Lifecycle
     Accesses: loads, stores, observations
     Frames
     Ranking
*/
#ifndef FRAMES_VPROF_H_INCLUDED
#define FRAMES_VPROF_H_INCLUDED

#if defined(FRAMES_VPROF_STATIC) && !defined(FRAMES_STATIC) && !defined(FRAMES_H_INCLUDED)
#define FRAMES_STATIC   /* frames.h comes with it: one private copy of both */
#endif
#include "frames.h"

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
    uint64_t content_granules;     /* entries in the content table */
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

#ifdef __cplusplus
extern "C" {
#endif

/* --------------------------------------------------------------------------------------
   State: hash tables of loads, content granules and rows
   -------------------------------------------------------------------------------------- */

#define FRAMES__VPROF_MIN_SLOTS 1024u

/* Previous load at a start address. */
typedef struct frames__vprof_load {
    uint64_t address;
    uint64_t value;     /* bytes (size <= 8, little-endian) or a hash of them */
    uint32_t size;
    uint8_t used;
} frames__vprof_load;

/* One 8-byte-aligned granule: known content, and which of its addresses have a previous
   load (so that a store finds the loads it ends without probing every start address). */
typedef struct frames__vprof_granule {
    uint64_t index;     /* address >> 3 */
    uint8_t bytes[8];
    uint8_t known;      /* bit i: bytes[i] is known */
    uint8_t load_starts;/* bit i: a previous load starts at byte i */
    uint8_t used;
} frames__vprof_granule;

typedef struct frames__vprof_row {
    frames_vprof_insn insn;
    uint8_t used;
} frames__vprof_row;

/* Open addressing with linear probing; slots is a power of two, count <= 3/4 of it. */
typedef struct frames__vprof_table {
    void *slots;
    uint64_t nslots, count, max;
    size_t slot_size, used_off;   /* every slot starts with its uint64_t key */
} frames__vprof_table;

struct frames_vprof {
    frames_vprof_options opt;
    frames_vprof_stats stats;
    frames__vprof_table loads, granules, rows;
    uint32_t max_load_size;     /* largest load seen: bounds store invalidation probes */
    frames_error err;
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
}

static void *frames__vprof_slot(const frames__vprof_table *t, uint64_t i) {
    return (char *)t->slots + i * t->slot_size;
}

static uint64_t frames__vprof_key(const void *slot) {
    uint64_t k;
    memcpy(&k, slot, sizeof k);
    return k;
}

static int frames__vprof_used(const frames__vprof_table *t, const void *slot) {
    return ((const uint8_t *)slot)[t->used_off] != 0;
}

static uint64_t frames__vprof_home(const frames__vprof_table *t, uint64_t key) {
    return frames__mix64(key) & (t->nslots - 1);
}

/* Slot holding key, or NULL. */
static void *frames__vprof_find(const frames__vprof_table *t, uint64_t key) {
    uint64_t i;
    void *s;
    if (t->count == 0) return NULL;
    for (i = frames__vprof_home(t, key);; i = (i + 1) & (t->nslots - 1)) {
        s = frames__vprof_slot(t, i);
        if (!frames__vprof_used(t, s)) return NULL;
        if (frames__vprof_key(s) == key) return s;
    }
}

static int frames__vprof_grow(frames_vprof *vp, frames__vprof_table *t) {
    uint64_t n = t->nslots ? t->nslots * 2 : FRAMES__VPROF_MIN_SLOTS, i, j;
    void *old = t->slots, *s;
    uint64_t oldn = t->nslots;
    if (n > (uint64_t)SIZE_MAX / t->slot_size) return FRAMES_E_NOMEM;
    t->slots = FRAMES_MALLOC((size_t)(n * t->slot_size), vp->opt.alloc_ctx);
    if (!t->slots) {
        t->slots = old;
        return FRAMES_E_NOMEM;
    }
    memset(t->slots, 0, (size_t)(n * t->slot_size));
    t->nslots = n;
    for (i = 0; i < oldn; i++) {
        s = (char *)old + i * t->slot_size;
        if (!frames__vprof_used(t, s)) continue;
        for (j = frames__vprof_home(t, frames__vprof_key(s));
             frames__vprof_used(t, frames__vprof_slot(t, j)); j = (j + 1) & (n - 1)) {
        }
        memcpy(frames__vprof_slot(t, j), s, t->slot_size);
    }
    if (old) FRAMES_FREE(old, vp->opt.alloc_ctx);
    return FRAMES_OK;
}

/* Slot for key; when absent it is inserted zeroed but for key and used, and *created
   is set. NULL when the table is at its cap (*rc = 0) or cannot grow (*rc < 0). */
static void *frames__vprof_insert(frames_vprof *vp, frames__vprof_table *t, uint64_t key,
                                  int *created, int *rc) {
    void *s = frames__vprof_find(t, key);
    uint64_t i;
    *rc = FRAMES_OK;
    *created = 0;
    if (s) return s;
    if (t->count >= t->max) return NULL;
    if ((t->count + 1) * 4 > t->nslots * 3 && (*rc = frames__vprof_grow(vp, t)) < 0) {
        frames__vprof_fail(vp, NULL, *rc, "out of memory for a profile table of %llu entries",
                           (unsigned long long)t->count);
        return NULL;
    }
    for (i = frames__vprof_home(t, key); frames__vprof_used(t, frames__vprof_slot(t, i));
         i = (i + 1) & (t->nslots - 1)) {
    }
    s = frames__vprof_slot(t, i);
    memset(s, 0, t->slot_size);
    memcpy(s, &key, sizeof key);
    ((uint8_t *)s)[t->used_off] = 1;
    t->count++;
    *created = 1;
    return s;
}

/* Delete a slot, shifting later members of its probe run back (no tombstones). */
static void frames__vprof_erase(frames__vprof_table *t, void *slot) {
    uint64_t mask = t->nslots - 1;
    uint64_t i = (uint64_t)((char *)slot - (char *)t->slots) / t->slot_size, j = i, k;
    for (;;) {
        void *sj;
        j = (j + 1) & mask;
        sj = frames__vprof_slot(t, j);
        if (!frames__vprof_used(t, sj)) break;
        k = frames__vprof_home(t, frames__vprof_key(sj));
        /* move j into the hole at i unless its home lies cyclically in (i, j] */
        if ((j > i && (k <= i || k > j)) || (j < i && (k <= i && k > j))) {
            memcpy(frames__vprof_slot(t, i), sj, t->slot_size);
            i = j;
        }
    }
    memset(frames__vprof_slot(t, i), 0, t->slot_size);
    t->count--;
}

static void frames__vprof_table_init(frames__vprof_table *t, size_t slot_size,
                                     size_t used_off, uint64_t max) {
    memset(t, 0, sizeof *t);
    t->slot_size = slot_size;
    t->used_off = used_off;
    t->max = max;
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
    frames__vprof_table_init(&vp->loads, sizeof(frames__vprof_load),
                             offsetof(frames__vprof_load, used), o->max_addresses);
    frames__vprof_table_init(&vp->granules, sizeof(frames__vprof_granule),
                             offsetof(frames__vprof_granule, used), o->max_addresses);
    frames__vprof_table_init(&vp->rows, sizeof(frames__vprof_row),
                             offsetof(frames__vprof_row, used), o->max_instructions);
    *out = vp;
    if (err) memset(err, 0, sizeof *err);
    return FRAMES_OK;
}

FRAMES_VPROF_DEF void frames_vprof_close(frames_vprof *vp) {
    void *ctx;
    if (!vp) return;
    ctx = vp->opt.alloc_ctx;
    if (vp->loads.slots) FRAMES_FREE(vp->loads.slots, ctx);
    if (vp->granules.slots) FRAMES_FREE(vp->granules.slots, ctx);
    if (vp->rows.slots) FRAMES_FREE(vp->rows.slots, ctx);
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
    vp->stats.instructions = vp->rows.count;
    return &r->insn;
}

static uint64_t frames__vprof_value_key(const uint8_t *v, size_t n) {
    uint64_t k = 0, h = 0xcbf29ce484222325ull ^ n;
    size_t i;
    if (n <= 8) {
        for (i = 0; i < n; i++) k |= (uint64_t)v[i] << (8 * i);
        return k;
    }
    for (i = 0; i < n; i++) h = (h ^ v[i]) * 0x100000001b3ull;
    return frames__mix64(h);
}

/* Call fn for each granule piece of [a, a+n): granule index, first byte offset in the
   granule, byte count, offset into the access. */
#define FRAMES__VPROF_FOR_GRANULES(a, n, g, off, cnt, pos)                                   \
    for (pos = 0, g = (a) >> 3, off = (unsigned)((a)&7),                                     \
        cnt = (unsigned)((n) - pos < 8u - off ? (n) - pos : 8u - off);                        \
         pos < (n); pos += cnt, g++, off = 0,                                                \
        cnt = (unsigned)((n) - pos < 8u ? (n) - pos : 8u))

/* Record known content. Returns 1 if some granule could not be tracked. */
static int frames__vprof_set_known(frames_vprof *vp, uint64_t a, const uint8_t *v, size_t n,
                                   int *rc) {
    uint64_t g;
    unsigned off, cnt, i;
    size_t pos;
    int untracked = 0, r, created;
    FRAMES__VPROF_FOR_GRANULES(a, n, g, off, cnt, pos) {
        frames__vprof_granule *s =
            (frames__vprof_granule *)frames__vprof_insert(vp, &vp->granules, g, &created, &r);
        if (!s) {
            untracked = 1;
            if (r < 0) *rc = r;
            continue;
        }
        for (i = 0; i < cnt; i++) {
            s->bytes[off + i] = v[pos + i];
            s->known |= (uint8_t)(1u << (off + i));
        }
    }
    vp->stats.content_granules = vp->granules.count;
    return untracked;
}

static void frames__vprof_forget(frames_vprof *vp, uint64_t a, size_t n) {
    uint64_t g;
    unsigned off, cnt, i;
    size_t pos;
    FRAMES__VPROF_FOR_GRANULES(a, n, g, off, cnt, pos) {
        frames__vprof_granule *s = (frames__vprof_granule *)frames__vprof_find(&vp->granules, g);
        if (!s) continue;
        for (i = 0; i < cnt; i++) s->known &= (uint8_t)~(1u << (off + i));
        if (!s->known && !s->load_starts) frames__vprof_erase(&vp->granules, s);
    }
    vp->stats.content_granules = vp->granules.count;
}

/* 1: every byte known and equal to v; 0: known, different; -1: some byte unknown. */
static int frames__vprof_compare(const frames_vprof *vp, uint64_t a, const uint8_t *v,
                                 size_t n) {
    uint64_t g;
    unsigned off, cnt, i;
    size_t pos;
    int equal = 1;
    FRAMES__VPROF_FOR_GRANULES(a, n, g, off, cnt, pos) {
        const frames__vprof_granule *s =
            (const frames__vprof_granule *)frames__vprof_find(&vp->granules, g);
        if (!s) return -1;
        for (i = 0; i < cnt; i++) {
            if (!(s->known & (1u << (off + i)))) return -1;
            if (s->bytes[off + i] != v[pos + i]) equal = 0;
        }
    }
    return equal;
}

/* A store to [a, a+n) ends every previous load that overlaps it. Those loads start at
   most max_load_size - 1 bytes before a, in granules whose load_starts say where. */
static void frames__vprof_invalidate_loads(frames_vprof *vp, uint64_t a, size_t n) {
    uint64_t lo, end = a + n, g, last;   /* no wrap: checked by the callers */
    unsigned b;
    if (vp->loads.count == 0) return;
    lo = a >= vp->max_load_size - 1 ? a - (vp->max_load_size - 1) : 0;
    last = (end - 1) >> 3;
    for (g = lo >> 3; g <= last; g++) {
        frames__vprof_granule *gr =
            (frames__vprof_granule *)frames__vprof_find(&vp->granules, g);
        if (!gr || !gr->load_starts) continue;
        for (b = 0; b < 8; b++) {
            uint64_t s = (g << 3) + b;
            frames__vprof_load *l;
            if (!(gr->load_starts & (1u << b)) || s < lo || s >= end) continue;
            l = (frames__vprof_load *)frames__vprof_find(&vp->loads, s);
            if (l && s + l->size > a) {
                frames__vprof_erase(&vp->loads, l);
                gr->load_starts &= (uint8_t)~(1u << b);
            }
        }
        /* erasing a load cannot move granule slots: gr stays valid */
        if (!gr->known && !gr->load_starts) frames__vprof_erase(&vp->granules, gr);
    }
    vp->stats.load_addresses = vp->loads.count;
    vp->stats.content_granules = vp->granules.count;
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
    frames__vprof_granule *start;
    uint64_t key;
    size_t i;
    int rc = FRAMES_OK, r, created, zero = 1, redundant = 0, untracked;
    if (!v || frames__vprof_bad_range(vp, a, n)) {
        if (!v) vp->stats.skipped_operands++;
        return FRAMES_OK;
    }
    row = frames__vprof_row_of(vp, pc, &rc);
    for (i = 0; i < n; i++)
        if (v[i]) {
            zero = 0;
            break;
        }
    key = frames__vprof_value_key(v, n);
    untracked = frames__vprof_set_known(vp, a, v, n, &rc);
    /* a previous load is only kept where its start granule can index it */
    start = (frames__vprof_granule *)frames__vprof_find(&vp->granules, a >> 3);
    l = start ? (frames__vprof_load *)frames__vprof_insert(vp, &vp->loads, a, &created, &r)
              : NULL;
    if (start && r < 0) rc = r;
    if (l) {
        redundant = !created && l->size == n && l->value == key;
        l->size = (uint32_t)n;
        l->value = key;
        start->load_starts |= (uint8_t)(1u << (a & 7));
    } else {
        untracked = 1;
    }
    if ((uint32_t)n > vp->max_load_size) vp->max_load_size = (uint32_t)n;
    vp->stats.load_addresses = vp->loads.count;
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
    row = frames__vprof_row_of(vp, pc, &rc);
    if (v) cmp = frames__vprof_compare(vp, a, v, n);
    frames__vprof_invalidate_loads(vp, a, n);
    if (v) {
        if (frames__vprof_set_known(vp, a, v, n, &rc)) {
            vp->stats.untracked_accesses++;
            vp->stats.address_cap_hit |= rc == FRAMES_OK;
        }
    } else {
        frames__vprof_forget(vp, a, n);
        vp->stats.unknown_value_stores++;
    }
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
    for (k = 0; k < vp->rows.nslots; k++) {
        const frames__vprof_row *r = (const frames__vprof_row *)frames__vprof_slot(&vp->rows, k);
        if (!r->used || frames_vprof_metric_of(&r->insn, m) == 0) continue;
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
