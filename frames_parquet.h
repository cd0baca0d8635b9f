/* frames_parquet.h - Apache Parquet tables of BAP frames traces, for DuckDB, Spark, pandas.
   Single-header C99 library on top of frames.h (also compiles as C++). MIT licence, see
   end of file.

   ---------------------------------------------------------------------------------------
   WHAT IT IS

   A Parquet file writer (no Parquet library: the Thrift compact encoding of the page
   headers and the footer is written here by hand) and, on top of it, the five tables of a
   trace that `frames export --parquet` writes (docs/parquet.md):

   - instructions  one row per std_frame: frame, pc, tid, bytes, length, mode
   - operands      one row per operand event, the columns of docs/jsonl.md
   - syscalls      frame, pc, tid, number, args (a list of int64)
   - modules       frame, module_name, low_address, high_address
   - exceptions    frame, number, tid, from_addr, to_addr

   What the files hold: row groups of a configurable number of rows, each column chunk
   with min/max statistics (so that `WHERE pc BETWEEN ...` skips row groups) and split into
   pages (integer pages with their own min/max); dictionary encoding where the dictionary
   is smaller than the plain values (register names, thread ids, pcs of hot loops);
   DELTA_BINARY_PACKED integers where deltas take at most a quarter of the plain size
   (frame numbers), DELTA_LENGTH_BYTE_ARRAY byte arrays; zstd page compression when built with
   FRAMES_PARQUET_LIBZSTD (link -lzstd), uncompressed otherwise. Unsigned 64-bit columns
   (addresses, thread ids) are INT64 with the logical type INTEGER(64, unsigned) and the
   converted type UINT_64: the 64 bits are stored as they are, DuckDB reads UBIGINT,
   pandas/pyarrow uint64, Polars UInt64, Spark (3.2+) DECIMAL(20,0); their statistics use
   unsigned order (min_value/max_value with column_orders = TYPE_ORDER).

   The writer buffers one row group per table (every value plain; a column's dictionary
   is built when the row group is written) and allocates only when a buffer grows to the
   largest row group seen: no allocation per row. A second thread (writer_thread, on by
   default) writes each full row group while the caller fills the next, with the same
   bytes as without it.

   ---------------------------------------------------------------------------------------
   USAGE

   In exactly one C or C++ file (frames.h's implementation may live in another one):

       #define FRAMES_IMPLEMENTATION          // unless another file has it
       #include "frames.h"
       #define FRAMES_PARQUET_IMPLEMENTATION
       #include "frames_parquet.h"

   Every table of a trace, one file each:

       FILE *files[FRAMES_PARQUET_NTABLES]; frames_sink sinks[FRAMES_PARQUET_NTABLES];
       frames_parquet_export *x; frames_frame f; uint64_t i = 0; int t;
       for (t = 0; t < FRAMES_PARQUET_NTABLES; t++) {
           char name[64];
           snprintf(name, sizeof name, "%s.parquet", frames_parquet_table_name(t));
           files[t] = fopen(name, "wb");
           sinks[t] = frames_sink_file(files[t]);
       }
       frames_parquet_export_open(&x, sinks, NULL, &err);
       while (frames_reader_next(r, &f) > 0) frames_parquet_export_add(x, &f, i++);
       if (frames_parquet_export_close(x, &err) < 0) fprintf(stderr, "%s\n", err.message);
       for (t = 0; t < FRAMES_PARQUET_NTABLES; t++) fclose(files[t]);

   A table of your own (frames_parquet_open with an array of frames_parquet_column, then
   one frames_parquet_put_* per column and frames_parquet_row_end per row).

   ---------------------------------------------------------------------------------------
   OPTIONS

   #define before including the implementation:
   FRAMES_PARQUET_STATIC   this header's functions static (frames.h's too if not yet included)
   FRAMES_PARQUET_DEF      their linkage (default FRAMES_DEF)
   FRAMES_PARQUET_LIBZSTD   compress pages with zstd (link with -lzstd)
   FRAMES_PARQUET_NO_THREADS never start the writer thread (no pthreads needed; automatic
                            with FRAMES_NO_POSIX); otherwise link with -lpthread
   The FRAMES_STATIC / FRAMES_DEF / FRAMES_MALLOC / FRAMES_REALLOC / FRAMES_FREE macros
   of frames.h apply here too.

   At run time, frames_parquet_options (frames_parquet_options_default):
   row_group_rows (131072), page_rows (131072), compression (zstd when built with it),
   zstd_level (1), dictionary_max_entries (65536), dictionary_max_bytes (1 MiB),
   writer_thread (1: with it, FRAMES_MALLOC / FRAMES_FREE are called from two threads).

   ---------------------------------------------------------------------------------------
   API OVERVIEW (details at each declaration below)

   Parquet file writer               frames_parquet_open, frames_parquet_put_*,
                                     frames_parquet_row_end / _finish / _close /
                                     _abandon / _error
   Trace tables                      frames_parquet_table_name / _table_columns,
                                     frames_parquet_export_open / _add / _close / _abandon

   ---------------------------------------------------------------------------------------
   SECTIONS (in file order; each starts with a banner of '=' or '-' lines,
   the title on the line below it: grep -n '^   TITLE' finds it)

   Options
   Parquet file writer
   Trace tables (columns and meanings: docs/parquet.md)
   IMPLEMENTATION
     growable byte buffer
     Thrift compact protocol
     Parquet writer
     values
     RLE / bit-packed hybrid
     DELTA_BINARY_PACKED
     pages
     writer thread
     footer
     trace tables
*/

#ifndef FRAMES_PARQUET_H_INCLUDED
#define FRAMES_PARQUET_H_INCLUDED

#if defined(FRAMES_PARQUET_STATIC) && !defined(FRAMES_STATIC) && !defined(FRAMES_H_INCLUDED)
#define FRAMES_STATIC   /* frames.h comes with it: one private copy of both */
#endif
#include "frames.h"
#if defined(FRAMES_PARQUET_STATIC) && !defined(FRAMES_PARQUET_DEF)   /* even after a shared frames.h */
#define FRAMES_PARQUET_DEF FRAMES__STATIC_DEF
#elif !defined(FRAMES_PARQUET_DEF)
#define FRAMES_PARQUET_DEF FRAMES_DEF
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ======================================================================================
   Options
   ====================================================================================== */

enum { FRAMES_PARQUET_UNCOMPRESSED = 0, FRAMES_PARQUET_ZSTD = 6 }; /* Parquet codec ids */

typedef struct frames_parquet_options {
    uint32_t row_group_rows;        /* rows per row group (default 131072) */
    uint32_t page_rows;             /* rows per data page (default 131072: zstd compresses
                                       each page alone, larger pages compress better) */
    int compression;                /* FRAMES_PARQUET_ZSTD (default when built with it) or
                                       FRAMES_PARQUET_UNCOMPRESSED */
    int zstd_level;                 /* default 1 (fast; 3+ a little smaller) */
    uint32_t dictionary_max_entries;/* a chunk with more distinct values is plain (65536) */
    uint32_t dictionary_max_bytes;  /* ... or with larger distinct values (1 MiB) */
    const char *created_by;         /* footer's created_by (default "frames version X") */
    void *alloc_ctx;
    int writer_thread;              /* 1 (default): a second thread writes each full row
                                       group (dictionaries, page encodings, zstd, the
                                       sink) while the caller fills the next; the same
                                       bytes as 0 */
} frames_parquet_options;

FRAMES_PARQUET_DEF void frames_parquet_options_default(frames_parquet_options *o);
/* 1 when this build can write zstd pages (FRAMES_PARQUET_LIBZSTD). */
FRAMES_PARQUET_DEF int frames_parquet_have_zstd(void);

/* ======================================================================================
   Parquet file writer
   ====================================================================================== */

typedef enum frames_parquet_kind {
    FRAMES_PARQUET_BOOL,    /* BOOLEAN */
    FRAMES_PARQUET_I32,     /* INT32 */
    FRAMES_PARQUET_I64,     /* INT64 */
    FRAMES_PARQUET_U64,     /* INT64, INTEGER(64, unsigned) / UINT_64, unsigned statistics */
    FRAMES_PARQUET_STRING,  /* BYTE_ARRAY, STRING / UTF8 (the caller gives valid UTF-8) */
    FRAMES_PARQUET_BYTES    /* BYTE_ARRAY, no annotation */
} frames_parquet_kind;

typedef struct frames_parquet_column {
    const char *name;
    frames_parquet_kind kind;
    uint8_t optional;     /* nulls allowed (frames_parquet_put_null) */
    uint8_t list;         /* a LIST of kind (frames_parquet_put_list_i64); not optional */
    uint8_t dictionary;   /* try dictionary encoding */
} frames_parquet_column;

typedef struct frames_parquet frames_parquet;

typedef struct frames_parquet_info {
    uint64_t rows, row_groups, bytes;   /* bytes written to the sink so far (with the writer
                                           thread, row groups and bytes are exact only
                                           after frames_parquet_finish) */
} frames_parquet_info;

/* Write the magic; columns are copied (names too). Up to 64 columns. */
FRAMES_PARQUET_DEF int frames_parquet_open(frames_parquet **w, const frames_sink *sink,
                                   const frames_parquet_column *cols, uint32_t ncols,
                                   const frames_parquet_options *o, frames_error *err);
/* Footer key/value metadata (copied); before frames_parquet_finish. */
FRAMES_PARQUET_DEF int frames_parquet_metadata(frames_parquet *w, const char *key, const char *value);
/* One value per column of the current row, in any order; errors show at row_end. */
FRAMES_PARQUET_DEF void frames_parquet_put_u64(frames_parquet *w, uint32_t col, uint64_t v);
FRAMES_PARQUET_DEF void frames_parquet_put_i64(frames_parquet *w, uint32_t col, int64_t v);
FRAMES_PARQUET_DEF void frames_parquet_put_i32(frames_parquet *w, uint32_t col, int32_t v);
FRAMES_PARQUET_DEF void frames_parquet_put_bool(frames_parquet *w, uint32_t col, int v);
FRAMES_PARQUET_DEF void frames_parquet_put_bytes(frames_parquet *w, uint32_t col, const void *p,
                                         size_t n);
FRAMES_PARQUET_DEF void frames_parquet_put_null(frames_parquet *w, uint32_t col);
FRAMES_PARQUET_DEF void frames_parquet_put_list_i64(frames_parquet *w, uint32_t col,
                                            const int64_t *v, uint32_t n);
/* End the row (writes a row group when it is full). */
FRAMES_PARQUET_DEF int frames_parquet_row_end(frames_parquet *w);
/* Write the last row group and the footer; the object stays for _info and _error. */
FRAMES_PARQUET_DEF int frames_parquet_finish(frames_parquet *w);
/* Finish (if not done) and free; returns the result of finishing. */
FRAMES_PARQUET_DEF int frames_parquet_close(frames_parquet *w);
/* Free without writing the footer (the output is not a Parquet file). */
FRAMES_PARQUET_DEF void frames_parquet_abandon(frames_parquet *w);
FRAMES_PARQUET_DEF const frames_error *frames_parquet_error(const frames_parquet *w);
FRAMES_PARQUET_DEF void frames_parquet_info_get(const frames_parquet *w, frames_parquet_info *info);

/* ======================================================================================
   Trace tables (columns and meanings: docs/parquet.md)
   ====================================================================================== */

enum {
    FRAMES_PARQUET_INSTRUCTIONS, FRAMES_PARQUET_OPERANDS, FRAMES_PARQUET_SYSCALLS,
    FRAMES_PARQUET_MODULES, FRAMES_PARQUET_EXCEPTIONS, FRAMES_PARQUET_NTABLES
};

/* "instructions", ...; "unknown" for other numbers. */
FRAMES_PARQUET_DEF const char *frames_parquet_table_name(int table);
/* The columns of a table (NULL and *n = 0 for other numbers). */
FRAMES_PARQUET_DEF const frames_parquet_column *frames_parquet_table_columns(int table, uint32_t *n);

typedef struct frames_parquet_export frames_parquet_export;

/* sinks[t] for every table t; a sink whose write is NULL skips that table. */
FRAMES_PARQUET_DEF int frames_parquet_export_open(frames_parquet_export **x, const frames_sink *sinks,
                                          const frames_parquet_options *o, frames_error *err);
/* Rows of one decoded frame; index is its frame index in the trace (the frame column).
   Operand rows wait in a batch of up to 128 (filled into the columns a column at a
   time), so an error of the operands table may come back from a later frame's call or
   from frames_parquet_export_close. */
FRAMES_PARQUET_DEF int frames_parquet_export_add(frames_parquet_export *x, const frames_frame *f,
                                         uint64_t index);
/* Rows written so far per table (rows[FRAMES_PARQUET_NTABLES]). */
FRAMES_PARQUET_DEF void frames_parquet_export_rows(const frames_parquet_export *x, uint64_t *rows);
FRAMES_PARQUET_DEF const frames_error *frames_parquet_export_error(const frames_parquet_export *x);
/* Finish every table and free; the first error is copied to err (may be NULL). */
FRAMES_PARQUET_DEF int frames_parquet_export_close(frames_parquet_export *x, frames_error *err);
FRAMES_PARQUET_DEF void frames_parquet_export_abandon(frames_parquet_export *x);

#ifdef __cplusplus
}
#endif

#endif /* FRAMES_PARQUET_H_INCLUDED */

/* ======================================================================================
   IMPLEMENTATION
   ====================================================================================== */

#if defined(FRAMES_PARQUET_IMPLEMENTATION) || defined(FRAMES_ALL_IMPLEMENTATION)
#ifndef FRAMES_PARQUET_IMPLEMENTATION_INCLUDED
#define FRAMES_PARQUET_IMPLEMENTATION_INCLUDED

#if !defined(FRAMES_PARQUET_NO_THREADS) && defined(FRAMES_NO_POSIX)
#define FRAMES_PARQUET_NO_THREADS
#endif
#ifndef FRAMES_PARQUET_NO_THREADS
#define FRAMES__WANT_WORKER    /* the writer thread */
#endif
#define FRAMES__WANT_HELPERS   /* allocator defaults, fail, grow, little-endian stores */
#include "frames.h"
#include <string.h>
#ifdef FRAMES_PARQUET_LIBZSTD
#include <zstd.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Errors of the writer: no position in a trace (frames_parquet_export_add adds the frame). */
#define frames__pq_fail(err, code, ...)                                                     \
    frames__fail((err), (code), FRAMES_NO_POS, FRAMES_NO_POS, __VA_ARGS__)

/* A writer's state; a failed writer refuses every later call with its error. */
typedef enum frames__pq_state {
    FRAMES__PQ_OPEN = 0, FRAMES__PQ_FINISHED = 1, FRAMES__PQ_FAILED = 2
} frames__pq_state;
/* The one way a writer fails for good: the error is kept and the writer marked failed. */
#define frames__pq_wfail(w, code, ...)                                                      \
    ((w)->state = FRAMES__PQ_FAILED, frames__pq_fail(&(w)->err, (code), __VA_ARGS__))

FRAMES_PARQUET_DEF void frames_parquet_options_default(frames_parquet_options *o) {
    memset(o, 0, sizeof *o);
    o->row_group_rows = 131072;
    o->page_rows = 131072;
    o->compression = frames_parquet_have_zstd() ? FRAMES_PARQUET_ZSTD : FRAMES_PARQUET_UNCOMPRESSED;
    o->zstd_level = 1;
    o->dictionary_max_entries = 65536;
    o->dictionary_max_bytes = 1u << 20;
    o->writer_thread = 1;
}

FRAMES_PARQUET_DEF int frames_parquet_have_zstd(void) {
#ifdef FRAMES_PARQUET_LIBZSTD
    return 1;
#else
    return 0;
#endif
}

/* --------------------------------------------------------------------------------------
   growable byte buffer
   -------------------------------------------------------------------------------------- */

typedef struct frames__pq_buf {
    uint8_t *p;
    size_t n, cap;
} frames__pq_buf;

static inline int frames__pq_reserve(frames__pq_buf *b, size_t extra, void *actx) {
    if (b->cap - b->n >= extra) return FRAMES_OK;
    if (extra > ((size_t)-1) - b->n) return FRAMES_E_NOMEM;
    return frames__grow((void **)&b->p, &b->cap, b->n + extra, 1, actx);
}

static inline int frames__pq_append(frames__pq_buf *b, const void *p, size_t n, void *actx) {
    if (frames__pq_reserve(b, n, actx) < 0) return FRAMES_E_NOMEM;
    if (n) memcpy(b->p + b->n, p, n);
    b->n += n;
    return FRAMES_OK;
}

static size_t frames__pq_varint(uint8_t *p, uint64_t v) {
    size_t n = 0;
    while (v >= 0x80) {
        p[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    p[n++] = (uint8_t)v;
    return n;
}

/* --------------------------------------------------------------------------------------
   Thrift compact protocol
   -------------------------------------------------------------------------------------- */

/* Parquet's metadata is Thrift, compact protocol. Fields are written in the order they
   are called; field 0 means "an element of the list being written" (no field header).
   Errors (out of space in a fixed buffer, out of memory) are sticky: check
   frames__parquet_tc_status once at the end. An internal encoding: private to this
   header (test_parquet checks its bytes with a private copy of the implementation). */

enum {   /* compact protocol type ids */
    FRAMES__PARQUET_TC_TRUE = 1, FRAMES__PARQUET_TC_FALSE = 2, FRAMES__PARQUET_TC_BYTE = 3,
    FRAMES__PARQUET_TC_I16 = 4, FRAMES__PARQUET_TC_I32 = 5, FRAMES__PARQUET_TC_I64 = 6,
    FRAMES__PARQUET_TC_DOUBLE = 7, FRAMES__PARQUET_TC_BINARY = 8, FRAMES__PARQUET_TC_LIST = 9,
    FRAMES__PARQUET_TC_SET = 10, FRAMES__PARQUET_TC_MAP = 11, FRAMES__PARQUET_TC_STRUCT = 12
};

#define FRAMES__PARQUET_TC_DEPTH 16

typedef struct frames__parquet_tc {
    uint8_t *buf;
    size_t len, cap;
    int owned;       /* buf is allocated here and grows */
    int status;      /* FRAMES_OK, FRAMES_E_SPACE, FRAMES_E_NOMEM or FRAMES_E_INVALID */
    int depth;
    int16_t last[FRAMES__PARQUET_TC_DEPTH];   /* last field id per open struct */
    void *alloc_ctx;
} frames__parquet_tc;

/* buf NULL: allocate and grow (free with frames__parquet_tc_free); else a fixed buffer. */
static void frames__parquet_tc_init(frames__parquet_tc *t, void *buf, size_t cap, void *alloc_ctx);
static void frames__parquet_tc_free(frames__parquet_tc *t);
static FRAMES__UNUSED int frames__parquet_tc_status(const frames__parquet_tc *t);   /* tests */
static void frames__parquet_tc_bool(frames__parquet_tc *t, int field, int v);
static void frames__parquet_tc_byte(frames__parquet_tc *t, int field, int8_t v);
static void frames__parquet_tc_i16(frames__parquet_tc *t, int field, int16_t v);
static void frames__parquet_tc_i32(frames__parquet_tc *t, int field, int32_t v);
static void frames__parquet_tc_i64(frames__parquet_tc *t, int field, int64_t v);
static void frames__parquet_tc_binary(frames__parquet_tc *t, int field, const void *p, size_t n);
static void frames__parquet_tc_string(frames__parquet_tc *t, int field, const char *s);
/* A list header: elem_type FRAMES__PARQUET_TC_*, then n elements written with field 0. */
static void frames__parquet_tc_list(frames__parquet_tc *t, int field, int elem_type, uint32_t n);
/* A struct (or union): fields, then frames__parquet_tc_end (which writes the stop byte). */
static void frames__parquet_tc_begin(frames__parquet_tc *t, int field);
static void frames__parquet_tc_end(frames__parquet_tc *t);
/* Bytes already encoded (e.g. list elements prepared earlier). */
static void frames__parquet_tc_raw(frames__parquet_tc *t, const void *p, size_t n);

static void frames__parquet_tc_init(frames__parquet_tc *t, void *buf, size_t cap,
                                       void *alloc_ctx) {
    memset(t, 0, sizeof *t);
    t->buf = (uint8_t *)buf;
    t->cap = buf ? cap : 0;
    t->owned = buf == NULL;
    t->alloc_ctx = alloc_ctx;
}

static void frames__parquet_tc_free(frames__parquet_tc *t) {
    if (t->owned) FRAMES_FREE(t->buf, t->alloc_ctx);
    t->buf = NULL;
    t->len = t->cap = 0;
}

static int frames__parquet_tc_status(const frames__parquet_tc *t) { return t->status; }

static uint8_t *frames__tc_room(frames__parquet_tc *t, size_t n) {
    if (t->status) return NULL;
    if (t->cap - t->len < n) {
        if (!t->owned) {
            t->status = FRAMES_E_SPACE;
            return NULL;
        }
        if (n > ((size_t)-1) - t->len ||
            frames__grow((void **)&t->buf, &t->cap, t->len + n, 1, t->alloc_ctx) < 0) {
            t->status = FRAMES_E_NOMEM;
            return NULL;
        }
    }
    return t->buf + t->len;
}

static void frames__tc_uvarint(frames__parquet_tc *t, uint64_t v) {
    uint8_t *p = frames__tc_room(t, 10);
    if (p) t->len += frames__pq_varint(p, v);
}

static uint64_t frames__tc_zigzag(int64_t v) {
    return ((uint64_t)v << 1) ^ (uint64_t)(v < 0 ? -1 : 0);
}

/* Field header: a delta from the previous field id in the high nibble when it is 1..15,
   else the type byte followed by the id as a zigzag varint (i16). Field 0: a list
   element, no header. */
static void frames__tc_field(frames__parquet_tc *t, int field, int type) {
    int16_t *last;
    uint8_t *p;
    if (field == 0 || t->status) return;
    if (field < 0 || field > 32767) {
        t->status = FRAMES_E_INVALID;
        return;
    }
    last = &t->last[t->depth];
    if (field > *last && field - *last <= 15) {
        if ((p = frames__tc_room(t, 1)) == NULL) return;
        *p = (uint8_t)((field - *last) << 4 | type);
        t->len++;
    } else {
        if ((p = frames__tc_room(t, 1)) == NULL) return;
        *p = (uint8_t)type;
        t->len++;
        frames__tc_uvarint(t, frames__tc_zigzag(field));
    }
    *last = (int16_t)field;
}

static void frames__parquet_tc_bool(frames__parquet_tc *t, int field, int v) {
    int type = v ? FRAMES__PARQUET_TC_TRUE : FRAMES__PARQUET_TC_FALSE;
    if (field) {
        frames__tc_field(t, field, type);   /* the value is the type nibble */
    } else {
        uint8_t *p = frames__tc_room(t, 1);
        if (p) {
            *p = (uint8_t)type;
            t->len++;
        }
    }
}

static void frames__parquet_tc_byte(frames__parquet_tc *t, int field, int8_t v) {
    uint8_t *p;
    frames__tc_field(t, field, FRAMES__PARQUET_TC_BYTE);
    if ((p = frames__tc_room(t, 1)) != NULL) {
        *p = (uint8_t)v;
        t->len++;
    }
}

static void frames__parquet_tc_i16(frames__parquet_tc *t, int field, int16_t v) {
    frames__tc_field(t, field, FRAMES__PARQUET_TC_I16);
    frames__tc_uvarint(t, frames__tc_zigzag(v));
}

static void frames__parquet_tc_i32(frames__parquet_tc *t, int field, int32_t v) {
    frames__tc_field(t, field, FRAMES__PARQUET_TC_I32);
    frames__tc_uvarint(t, frames__tc_zigzag(v));
}

static void frames__parquet_tc_i64(frames__parquet_tc *t, int field, int64_t v) {
    frames__tc_field(t, field, FRAMES__PARQUET_TC_I64);
    frames__tc_uvarint(t, frames__tc_zigzag(v));
}

static void frames__parquet_tc_binary(frames__parquet_tc *t, int field, const void *p,
                                         size_t n) {
    frames__tc_field(t, field, FRAMES__PARQUET_TC_BINARY);
    frames__tc_uvarint(t, n);
    frames__parquet_tc_raw(t, p, n);
}

static void frames__parquet_tc_string(frames__parquet_tc *t, int field, const char *s) {
    frames__parquet_tc_binary(t, field, s, strlen(s));
}

static void frames__parquet_tc_list(frames__parquet_tc *t, int field, int elem_type,
                                       uint32_t n) {
    uint8_t *p;
    frames__tc_field(t, field, FRAMES__PARQUET_TC_LIST);
    if ((p = frames__tc_room(t, 1)) == NULL) return;
    if (n < 15) {
        *p = (uint8_t)(n << 4 | (uint32_t)elem_type);
        t->len++;
    } else {
        *p = (uint8_t)(0xf0 | elem_type);
        t->len++;
        frames__tc_uvarint(t, n);
    }
}

static void frames__parquet_tc_begin(frames__parquet_tc *t, int field) {
    frames__tc_field(t, field, FRAMES__PARQUET_TC_STRUCT);
    if (t->status) return;
    if (t->depth + 1 >= FRAMES__PARQUET_TC_DEPTH) {
        t->status = FRAMES_E_INVALID;
        return;
    }
    t->last[++t->depth] = 0;
}

static void frames__parquet_tc_end(frames__parquet_tc *t) {
    uint8_t *p;
    if (t->status) return;
    if (t->depth == 0) {
        t->status = FRAMES_E_INVALID;
        return;
    }
    if ((p = frames__tc_room(t, 1)) == NULL) return;
    *p = 0;   /* stop */
    t->len++;
    t->depth--;
}

static void frames__parquet_tc_raw(frames__parquet_tc *t, const void *p, size_t n) {
    uint8_t *d;
    if (n == 0) return;
    if ((d = frames__tc_room(t, n)) == NULL) return;
    if (n) memcpy(d, p, n);
    t->len += n;
}

/* --------------------------------------------------------------------------------------
   Parquet writer
   -------------------------------------------------------------------------------------- */

enum { FRAMES__PQ_BOOLEAN = 0, FRAMES__PQ_INT32 = 1, FRAMES__PQ_INT64 = 2, FRAMES__PQ_BYTE_ARRAY = 6 };
enum {
    FRAMES__PQ_PLAIN = 0, FRAMES__PQ_RLE = 3, FRAMES__PQ_DELTA_BINARY_PACKED = 5,
    FRAMES__PQ_DELTA_LENGTH_BYTE_ARRAY = 6, FRAMES__PQ_RLE_DICTIONARY = 8
};
enum { FRAMES__PQ_DATA_PAGE = 0, FRAMES__PQ_DICTIONARY_PAGE = 2 };
#define FRAMES__PQ_MAX_COLS 64
#define FRAMES__PQ_STAT_MAX 256   /* byte-array min/max longer than this are not written */

typedef struct frames__pq_mark {
    size_t lev, val;     /* level entries and values before the page */
    uint64_t plain;      /* plain bytes before the page */
} frames__pq_mark;

typedef struct frames__pq_col {
    frames_parquet_column c;
    char name[64];
    int ptype, width;            /* width: 1 bool, 4, 8, 0 byte array */
    int maxdef, maxrep;
    frames__pq_buf def, rep;     /* one byte per level entry */
    size_t nlev, nval;
    frames__pq_buf plain;        /* the plain encoding of every value of the chunk */
    int dict;                    /* a dictionary column: the row group's dictionary is
                                    built when it is written (frames__pq_dict_build);
                                    after, 1 when the values are dictionary indices */
    uint32_t *idx;
    size_t idxcap;
    frames__pq_buf dvals;        /* plain encoding of the distinct values */
    uint32_t *doff;
    size_t doffcap;
    uint32_t ndict;
    uint32_t stored_pages;       /* data pages to store in zstd frames uncompressed */
    uint32_t plain_pages;        /* integer pages to write plain without trying deltas */
    frames__htab didx;           /* the dictionary's entries by hash (frames__pq_dslot) */
    struct frames__pq_front *front;  /* recent values' entries (dictionary columns) */
    uint32_t gen;                /* the row group's front entries carry it */
    frames__pq_mark *marks;
    size_t nmarks, markcap;
    uint64_t nulls;
    int has_mm;                  /* min/max seen */
    uint64_t imin, imax;         /* ints and bools (signed ones stored as bits) */
    frames_bytes bmin, bmax;     /* byte arrays: views into dvals or plain */
} frames__pq_col;

/* The front of a column's dictionary: a value (an integer, or a byte array of up to 7
   bytes packed with its length: frames__pq_short_key) and its entry, in a slot picked by
   the value's top hash bits. Register names, list and kind strings, bit widths and the
   pcs of a loop find their entry with one multiply and one comparison, without the hash
   table (whose misses were a third of the dictionary's time). */
#define FRAMES__PQ_FRONT 256
typedef struct frames__pq_front {
    uint64_t key;
    uint32_t entry, gen;   /* gen: the column's gen when the slot was filled */
} frames__pq_front;

/* A dictionary entry in the column's hash table: the hash, so that a probe compares
   hashes without touching the values, and the entry's index. */
typedef struct frames__pq_dslot {
    uint64_t hash;
    uint32_t entry;
} frames__pq_dslot;

struct frames_parquet {
    frames_sink sink;
    frames_parquet_options o;
    frames__pq_col *cols;
    uint32_t ncols;
    uint64_t offset;             /* bytes written */
    uint64_t rows, group_rows;
    uint64_t page_end;           /* group_rows where the current page ends */
    uint32_t row_puts;
    frames__parquet_tc groups;    /* encoded RowGroup structs (list elements) */
    uint64_t ngroups;
    frames__pq_buf kv;           /* key\0value\0 pairs */
    uint32_t nkv;
    frames__pq_buf body, packed; /* page scratch */
    uint64_t *vals;              /* a page's integers (or byte array lengths) for delta */
    size_t valcap;
    frames__pq_state state;
    int oom;                     /* a put failed */
    frames_error err;
#ifdef FRAMES_PARQUET_LIBZSTD
    ZSTD_CCtx *zctx;
#endif
    struct frames__pq_worker *worker;   /* the writer thread, or NULL */
};

static int frames__pq_write(frames_parquet *w, const void *p, size_t n) {
    if (n && w->sink.write(w->sink.ctx, p, n) < 0) {
        return frames__pq_wfail(w, FRAMES_E_IO, "parquet: write failed at offset %llu: %s",
                               (unsigned long long)w->offset, frames__syserr());
    }
    w->offset += n;
    return FRAMES_OK;
}

static void frames__pq_col_setup(frames__pq_col *c, const frames_parquet_column *def) {
    c->c = *def;
    frames__fmt(c->name, sizeof c->name, "%s", def->name ? def->name : "");
    c->c.name = c->name;
    switch (def->kind) {
    case FRAMES_PARQUET_BOOL: c->ptype = FRAMES__PQ_BOOLEAN; c->width = 1; c->c.dictionary = 0; break;
    case FRAMES_PARQUET_I32: c->ptype = FRAMES__PQ_INT32; c->width = 4; break;
    case FRAMES_PARQUET_I64:
    case FRAMES_PARQUET_U64: c->ptype = FRAMES__PQ_INT64; c->width = 8; break;
    default: c->ptype = FRAMES__PQ_BYTE_ARRAY; c->width = 0; break;
    }
    c->maxrep = def->list ? 1 : 0;
    c->maxdef = (def->list || def->optional) ? 1 : 0;
    c->dict = c->c.dictionary;
}

/* A column of an empty row group (its buffers allocated as values come). */
static int frames__pq_col_init(frames__pq_col *c, const frames_parquet_column *def,
                               const frames_parquet_options *o) {
    frames__pq_col_setup(c, def);
    /* the limit check of frames__pq_dict_find adds at most dictionary_max_entries */
    FRAMES__HTAB_INIT(&c->didx, frames__pq_dslot, (size_t)o->dictionary_max_entries + 1);
    c->gen = 1;
    if (def->dictionary) {
        size_t size = FRAMES__PQ_FRONT * sizeof(frames__pq_front);
        if (!(c->front = (frames__pq_front *)FRAMES_MALLOC(size, o->alloc_ctx))) return FRAMES_E_NOMEM;
        memset(c->front, 0, size);
    }
    return FRAMES_OK;
}

FRAMES_PARQUET_DEF int frames_parquet_open(frames_parquet **wp, const frames_sink *sink,
                                   const frames_parquet_column *cols, uint32_t ncols,
                                   const frames_parquet_options *o, frames_error *err) {
    frames_parquet_options def;
    frames_parquet *w;
    uint32_t i;
    *wp = NULL;
    if (!o) {
        frames_parquet_options_default(&def);
        o = &def;
    }
    if (!sink || !sink->write || !cols || ncols == 0 || ncols > FRAMES__PQ_MAX_COLS)
        return frames__pq_fail(err, FRAMES_E_INVALID, "parquet: need a sink and 1 to %d columns",
                               FRAMES__PQ_MAX_COLS);
    if (o->row_group_rows == 0 || o->page_rows == 0)
        return frames__pq_fail(err, FRAMES_E_INVALID, "parquet: row group and page sizes must be > 0");
    if (o->compression != FRAMES_PARQUET_UNCOMPRESSED &&
        (o->compression != FRAMES_PARQUET_ZSTD || !frames_parquet_have_zstd()))
        return frames__pq_fail(err, FRAMES_E_UNSUPPORTED,
                               "parquet: compression codec %d not available in this build",
                               o->compression);
    for (i = 0; i < ncols; i++)
        if (!cols[i].name || !cols[i].name[0] || strlen(cols[i].name) >= 64 ||
            (cols[i].list && (cols[i].optional || cols[i].kind != FRAMES_PARQUET_I64)))
            return frames__pq_fail(err, FRAMES_E_INVALID,
                                   "parquet: column %u: a name of 1 to 63 bytes; lists are "
                                   "required lists of I64", i);
    w = (frames_parquet *)FRAMES_MALLOC(sizeof *w, o->alloc_ctx);
    if (!w) return frames__pq_fail(err, FRAMES_E_NOMEM, "parquet: out of memory");
    memset(w, 0, sizeof *w);
    w->o = *o;
    w->sink = *sink;
    w->ncols = ncols;
    w->page_end = o->page_rows;
    w->cols = (frames__pq_col *)FRAMES_MALLOC(ncols * sizeof *w->cols, o->alloc_ctx);
    if (!w->cols) {
        FRAMES_FREE(w, o->alloc_ctx);
        return frames__pq_fail(err, FRAMES_E_NOMEM, "parquet: out of memory");
    }
    memset(w->cols, 0, ncols * sizeof *w->cols);
    for (i = 0; i < ncols; i++)
        if (frames__pq_col_init(&w->cols[i], &cols[i], o) < 0) {
            frames_parquet_abandon(w);
            return frames__pq_fail(err, FRAMES_E_NOMEM, "parquet: out of memory");
        }
    frames__parquet_tc_init(&w->groups, NULL, 0, o->alloc_ctx);
#ifdef FRAMES_PARQUET_LIBZSTD
    if (o->compression == FRAMES_PARQUET_ZSTD && (w->zctx = ZSTD_createCCtx()) == NULL) {
        frames_parquet_abandon(w);
        return frames__pq_fail(err, FRAMES_E_NOMEM, "parquet: out of memory (zstd context)");
    }
#endif
    if (frames__pq_write(w, "PAR1", 4) < 0) {
        if (err) *err = w->err;
        frames_parquet_abandon(w);
        return FRAMES_E_IO;
    }
    *wp = w;
    return FRAMES_OK;
}

FRAMES_PARQUET_DEF int frames_parquet_metadata(frames_parquet *w, const char *key, const char *value) {
    void *a = w->o.alloc_ctx;
    if (w->state != FRAMES__PQ_OPEN) return FRAMES_E_STATE;
    if (frames__pq_append(&w->kv, key, strlen(key) + 1, a) < 0 ||
        frames__pq_append(&w->kv, value, strlen(value) + 1, a) < 0)
        return frames__pq_wfail(w, FRAMES_E_NOMEM, "parquet: out of memory");
    w->nkv++;
    return FRAMES_OK;
}

/* --------------------------------------------------------------------------------------
   values
   -------------------------------------------------------------------------------------- */

/* The levels a column has: known to the export for each of its columns (no branch on
   the column's definition per value), looked up for the public puts. */
enum { FRAMES__PQ_ANY, FRAMES__PQ_REQ, FRAMES__PQ_OPT };

FRAMES__INLINE int frames__pq_level(frames__pq_col *c, int def, int rep, void *a) {
    if (c->maxdef) {
        if (frames__pq_reserve(&c->def, 1, a) < 0) return FRAMES_E_NOMEM;
        c->def.p[c->def.n++] = (uint8_t)def;
    }
    if (c->maxrep) {
        if (frames__pq_reserve(&c->rep, 1, a) < 0) return FRAMES_E_NOMEM;
        c->rep.p[c->rep.n++] = (uint8_t)rep;
    }
    c->nlev++;
    return FRAMES_OK;
}

/* The level of a value (def 1) or a null (def 0) in a column of this shape. */
FRAMES__INLINE int frames__pq_level_as(frames__pq_col *c, int shape, int def, void *a) {
    if (shape == FRAMES__PQ_ANY) return frames__pq_level(c, def, 0, a);
    if (shape == FRAMES__PQ_OPT) {
        if (frames__pq_reserve(&c->def, 1, a) < 0) return FRAMES_E_NOMEM;
        c->def.p[c->def.n++] = (uint8_t)def;
    }
    c->nlev++;
    return FRAMES_OK;
}

/* Dictionary hashes. Fixed-width values are hashed as integers (one multiply); byte
   arrays, given in their plain encoding (the 4-byte length first, so n >= 4), with two
   overlapping loads when short (register names, "pre", "mem") and a loop when long. */
static inline uint32_t frames__pq_hash_int(uint64_t v) {
    v *= 0x9e3779b97f4a7c15ull;
    return (uint32_t)(v >> 32);
}

static inline uint32_t frames__pq_hash_bytes(const uint8_t *p, size_t n) {
    uint64_t h;
    if (n <= 8) {
        h = frames__le32(p) | (uint64_t)frames__le32(p + n - 4) << 32;
    } else if (n <= 16) {
        h = (frames__le64(p) * 0xff51afd7ed558ccdull) ^ frames__le64(p + n - 8);
    } else {
        size_t i = 0;
        h = 0x9e3779b97f4a7c15ull ^ n;
        for (; i + 8 <= n; i += 8) {
            h = (h ^ frames__le64(p + i)) * 0xff51afd7ed558ccdull;
            h ^= h >> 32;
        }
        h ^= frames__le64(p + n - 8);
    }
    h ^= h >> 29;
    h *= 0xc4ceb9fe1a85ec53ull;
    return (uint32_t)(h ^ (h >> 32));
}

/* Equal plain encodings of n >= 4 bytes (a libc memcmp call costs more than the
   comparison of a short name). */
static inline int frames__pq_same(const uint8_t *a, const uint8_t *b, size_t n) {
    if (n <= 8)
        return frames__le32(a) == frames__le32(b) && frames__le32(a + n - 4) == frames__le32(b + n - 4);
    if (n <= 16)
        return frames__le64(a) == frames__le64(b) && frames__le64(a + n - 8) == frames__le64(b + n - 8);
    return memcmp(a, b, n) == 0;
}

/* A fixed-width value of column c as stored (width 4: the low 32 bits). */
static inline uint64_t frames__pq_load(const frames__pq_col *c, const uint8_t *p) {
    return c->width == 8 ? frames__le64(p) : c->width == 4 ? frames__le32(p) : *p;
}

/* The plain encoding of entry e of the dictionary: pointer and size. */
static inline const uint8_t *frames__pq_dentry(const frames__pq_col *c, uint32_t e, size_t *n) {
    const uint8_t *p;
    if (c->width) {
        *n = (size_t)c->width;
        return c->dvals.p + (size_t)e * (size_t)c->width;
    }
    p = c->dvals.p + c->doff[e];
    *n = 4 + (size_t)frames__le32(p);
    return p;
}

/* Index of a value in the dictionary, adding it: the integer v of a fixed-width column,
   or the plain encoding enc[0..n) of a byte array. -1 when the dictionary would exceed
   its limits, -2 out of memory. */
static int64_t frames__pq_dict_find(frames__pq_col *c, uint64_t v, const uint8_t *enc, size_t n,
                                    const frames_parquet_options *o, void *a) {
    uint64_t hv = enc ? frames__pq_hash_bytes(enc, n) : frames__pq_hash_int(v);
    frames__pq_dslot *d;
    size_t at = 0;
    while ((d = FRAMES__HTAB_NEXT(&c->didx, frames__pq_dslot, hv, &at)) != NULL) {
        size_t en;
        const uint8_t *p = frames__pq_dentry(c, d->entry, &en);
        if (enc ? en == n && frames__pq_same(p, enc, n) : frames__pq_load(c, p) == v) return d->entry;
    }
    if (!enc) n = (size_t)c->width;
    if (c->ndict >= o->dictionary_max_entries || c->dvals.n + n > o->dictionary_max_bytes)
        return -1;
    if (enc) {
        if (c->ndict >= c->doffcap && FRAMES__GROW(c->doff, c->doffcap, c->ndict + 1, a) < 0)
            return -2;
        c->doff[c->ndict] = (uint32_t)c->dvals.n;
        if (frames__pq_append(&c->dvals, enc, n, a) < 0) return -2;
    } else {
        if (frames__pq_reserve(&c->dvals, 8, a) < 0) return -2;
        frames__put_le64(c->dvals.p + c->dvals.n, v);
        c->dvals.n += n;
    }
    if (!(d = (frames__pq_dslot *)frames__htab_add(&c->didx, hv, a))) return -2;
    d->entry = c->ndict++;
    return d->entry;
}

/* A byte array of n <= 7 bytes as one integer: its bytes, its length in the top byte. */
FRAMES__INLINE uint64_t frames__pq_short_key(const uint8_t *p, size_t n) {
    uint64_t k = 0;
    if (n >= 4)   /* two overlapping loads: the shared bytes are equal */
        k = (uint64_t)frames__le32(p) | (uint64_t)frames__le32(p + n - 4) << (8 * (n - 4));
    else if (n)
        k = (uint64_t)p[0] | (uint64_t)p[n / 2] << (8 * (n / 2)) | (uint64_t)p[n - 1] << (8 * (n - 1));
    return k | (uint64_t)n << 56;
}

FRAMES__INLINE frames__pq_front *frames__pq_front_slot(const frames__pq_col *c, uint64_t key) {
    return &c->front[(key * 0x9e3779b97f4a7c15ull) >> 56];   /* FRAMES__PQ_FRONT slots */
}

static inline void frames__pq_front_put(frames__pq_col *c, uint64_t key, uint32_t entry) {
    frames__pq_front *f = frames__pq_front_slot(c, key);
    f->key = key;
    f->entry = entry;
    f->gen = c->gen;
}

/* The values of column c from i to the next sample point of frames__pq_dict_build (at
   most its nval): the loops test a sample point once per 4096 values; 0 where c turns
   plain. */
static size_t frames__pq_sample_end(const frames__pq_col *c, size_t i) {
    size_t end = (i | 4095) + 1;
    if (i && (i & 4095) == 0 && c->ndict > i / 8) return 0;
    return end < c->nval ? end : c->nval;
}

/* The entry (>= 0) of a value: from the front with this key, or the dictionary's (added
   if new, then put in the front); -1: the dictionary is full, -2: out of memory. */
FRAMES__INLINE int64_t frames__pq_dict_entry(frames_parquet *w, frames__pq_col *c, uint64_t key,
                                             uint64_t v, const uint8_t *enc, size_t n) {
    frames__pq_front *f = frames__pq_front_slot(c, key);
    int64_t e;
    if (f->gen == c->gen && f->key == key) return f->entry;
    e = frames__pq_dict_find(c, v, enc, n, &w->o, w->o.alloc_ctx);
    if (e >= 0) frames__pq_front_put(c, key, (uint32_t)e);
    return e;
}

/* Fixed-width values of this width (a constant in each caller). */
FRAMES__INLINE int frames__pq_dict_ints(frames_parquet *w, frames__pq_col *c, size_t width) {
    const uint8_t *p = c->plain.p;
    uint64_t prev = 0;
    uint32_t last = 0;
    size_t i = 0, end;
    while ((end = frames__pq_sample_end(c, i)) > i) {
        for (; i < end; i++, p += width) {
            uint64_t v = width == 8 ? frames__le64(p) : frames__le32(p);
            int64_t e;
            if (i && v == prev) {
                c->idx[i] = last;
                continue;
            }
            if ((e = frames__pq_dict_entry(w, c, v, v, NULL, 0)) < 0) {
                if (e == -2) return FRAMES_E_NOMEM;
                c->dict = 0;
                return FRAMES_OK;
            }
            c->idx[i] = last = (uint32_t)e;
            prev = v;
        }
    }
    if (i < c->nval) c->dict = 0;
    return FRAMES_OK;
}

/* Byte arrays (each a 4-byte length and its bytes in the plain buffer). */
static int frames__pq_dict_bytes(frames_parquet *w, frames__pq_col *c) {
    const uint8_t *p = c->plain.p, *prev = NULL;
    size_t i = 0, n = 0, pn = 0, end;
    uint32_t last = 0;
    while ((end = frames__pq_sample_end(c, i)) > i) {
        for (; i < end; i++, p += n) {
            int64_t e;
            n = 4 + (size_t)frames__le32(p);
            if (n == pn && frames__pq_same(p, prev, n)) {
                c->idx[i] = last;
                continue;
            }
            if (n > 4 + 64) {
                e = -1;
            } else if (n <= 4 + 7) {
                e = frames__pq_dict_entry(w, c, frames__pq_short_key(p + 4, n - 4), 0, p, n);
            } else {
                e = frames__pq_dict_find(c, 0, p, n, &w->o, w->o.alloc_ctx);
            }
            if (e < 0) {
                if (e == -2) return FRAMES_E_NOMEM;
                c->dict = 0;
                return FRAMES_OK;
            }
            c->idx[i] = last = (uint32_t)e;
            prev = p;
            pn = n;
        }
    }
    if (i < c->nval) c->dict = 0;
    return FRAMES_OK;
}

/* The row group's dictionary of column c (a dictionary column), built from its plain values
   when the row group is written (on the writer thread when there is one), so that adding
   a row only appends values (the lookups were a third of the work of the thread that adds
   rows). The values are taken in order and the column is plain from the first that meets
   one of these (the rules, and the values they meet, of the puts that used to look each
   value up: the files are the same bytes):
   - a sample point (every 4096 values) with more than one distinct value in 8 so far
     (register values, addresses, the pc of each frame's operands): the plain values
     compress better with zstd than the dictionary's indices (the operands' pc: 1.2 MB
     instead of 8.5 MB on bench_parquet's trace), and filling a large hash table (a cache
     miss per new value) was a sixth of an export's time;
   - a value that would take the dictionary past its limits, or a byte array longer than
     64 bytes (a dictionary of them rarely pays).
   The previous value and the front find most entries without the hash table. Sets
   c->dict to 0 when the column is plain; FRAMES_E_NOMEM. */
static int frames__pq_dict_build(frames_parquet *w, frames__pq_col *c) {
    if (!c->dict || c->nval == 0) return FRAMES_OK;
    if (c->nval > c->idxcap && FRAMES__GROW(c->idx, c->idxcap, c->nval, w->o.alloc_ctx) < 0)
        return FRAMES_E_NOMEM;
    if (c->width == 8) return frames__pq_dict_ints(w, c, 8);
    if (c->width == 4) return frames__pq_dict_ints(w, c, 4);
    return frames__pq_dict_bytes(w, c);
}

/* Append a fixed-width value (width 4: v holds the low 32 bits, width 1: 0 or 1) to
   column c of this width (the export passes it as a constant: frames__pq_int_k). */
FRAMES__INLINE int frames__pq_fixed_k(frames_parquet *w, frames__pq_col *c, uint64_t v, int width) {
    if (frames__pq_reserve(&c->plain, 8, w->o.alloc_ctx) < 0) return FRAMES_E_NOMEM;
    frames__put_le64(c->plain.p + c->plain.n, v);
    c->plain.n += (size_t)width;
    c->nval++;
    return FRAMES_OK;
}

FRAMES__INLINE int frames__pq_fixed(frames_parquet *w, frames__pq_col *c, uint64_t v) {
    return frames__pq_fixed_k(w, c, v, c->width);
}

FRAMES__INLINE frames__pq_col *frames__pq_col_of(frames_parquet *w, uint32_t col) {
    if (col >= w->ncols || w->state != FRAMES__PQ_OPEN) {
        if (w->state == FRAMES__PQ_OPEN) frames__pq_wfail(w, FRAMES_E_INVALID, "parquet: no column %u", col);
        return NULL;
    }
    w->row_puts++;
    return &w->cols[col];
}

/* The puts on a column: frames__pq_X_at for the export's rows, which know their columns
   (no lookup, no count: frames__pq_row_done), frames__pq_X for the public functions. */
FRAMES__INLINE void frames__pq_int_k(frames_parquet *w, frames__pq_col *c, int shape, int width,
                                    uint64_t bits) {
    if (frames__pq_level_as(c, shape, 1, w->o.alloc_ctx) < 0 || frames__pq_fixed_k(w, c, bits, width) < 0)
        w->oom = 1;
}

FRAMES__INLINE void frames__pq_int_as(frames_parquet *w, frames__pq_col *c, int shape, uint64_t bits) {
    frames__pq_int_k(w, c, shape, c->width, bits);
}

FRAMES__INLINE void frames__pq_int_at(frames_parquet *w, frames__pq_col *c, uint64_t bits) {
    frames__pq_int_as(w, c, FRAMES__PQ_ANY, bits);
}

FRAMES__INLINE void frames__pq_int(frames_parquet *w, uint32_t col, uint64_t bits) {
    frames__pq_col *c = frames__pq_col_of(w, col);
    if (c) frames__pq_int_at(w, c, bits);
}

FRAMES_PARQUET_DEF void frames_parquet_put_u64(frames_parquet *w, uint32_t col, uint64_t v) {
    frames__pq_int(w, col, v);
}

FRAMES_PARQUET_DEF void frames_parquet_put_i64(frames_parquet *w, uint32_t col, int64_t v) {
    frames__pq_int(w, col, (uint64_t)v);
}

FRAMES_PARQUET_DEF void frames_parquet_put_i32(frames_parquet *w, uint32_t col, int32_t v) {
    frames__pq_int(w, col, (uint64_t)(uint32_t)v);
}

FRAMES_PARQUET_DEF void frames_parquet_put_bool(frames_parquet *w, uint32_t col, int v) {
    frames__pq_int(w, col, v ? 1 : 0);
}

/* Big-endian load: integers that compare as the bytes do (compilers make it one bswap). */
FRAMES__INLINE uint64_t frames__pq_be64(const uint8_t *p) {
    uint64_t v = frames__le64(p);
#if defined(__GNUC__) && defined(FRAMES__LITTLE_ENDIAN)
    return __builtin_bswap64(v);
#else
    v = (v & 0x00ff00ff00ff00ffull) << 8 | (v >> 8 & 0x00ff00ff00ff00ffull);
    v = (v & 0x0000ffff0000ffffull) << 16 | (v >> 16 & 0x0000ffff0000ffffull);
    return v << 32 | v >> 32;
#endif
}

FRAMES__INLINE int frames__pq_bcmp(const uint8_t *a, size_t an, const uint8_t *b, size_t bn) {
    int r;
    if (an >= 8 && bn >= 8) {   /* the first 8 bytes decide for most values: no call */
        uint64_t x = frames__pq_be64(a), y = frames__pq_be64(b);
        if (x != y) return x < y ? -1 : 1;
    }
    r = memcmp(a, b, an < bn ? an : bn);
    if (r) return r;
    return an < bn ? -1 : an > bn;
}

/* d[0..n) = s[0..n): without a call for the short names and values of a trace (two
   overlapping loads and stores), memcpy for longer ones. */
FRAMES__INLINE void frames__pq_copy_short(uint8_t *d, const uint8_t *s, size_t n) {
    if (n >= 8 && n <= 16) {
        uint64_t x = frames__le64(s), y = frames__le64(s + n - 8);
        frames__put_le64(d, x);
        frames__put_le64(d + n - 8, y);
    } else if (n >= 4 && n < 8) {
        uint32_t x = frames__le32(s), y = frames__le32(s + n - 4);
        memcpy(d, &x, 4);
        memcpy(d + n - 4, &y, 4);
    } else if (n && n < 4) {
        d[0] = s[0];
        d[n / 2] = s[n / 2];
        d[n - 1] = s[n - 1];
    } else if (n) {
        memcpy(d, s, n);
    }
}

/* The value of a byte array (its level is in). */
FRAMES__INLINE void frames__pq_bytes_value(frames_parquet *w, frames__pq_col *c, const uint8_t *p,
                                           size_t n) {
    uint8_t *d;
    if (n > 0x7fffffffu || frames__pq_reserve(&c->plain, n + 4, w->o.alloc_ctx) < 0) {
        w->oom = 1;
        return;
    }
    d = c->plain.p + c->plain.n;
    frames__put_le32(d, (uint32_t)n);
    frames__pq_copy_short(d + 4, p, n);
    c->plain.n += n + 4;
    c->nval++;
}

FRAMES__INLINE void frames__pq_bytes_as(frames_parquet *w, frames__pq_col *c, int shape,
                                        const void *p, size_t n) {
    if (frames__pq_level_as(c, shape, 1, w->o.alloc_ctx) < 0) w->oom = 1;
    else frames__pq_bytes_value(w, c, (const uint8_t *)p, n);
}

FRAMES_PARQUET_DEF void frames_parquet_put_bytes(frames_parquet *w, uint32_t col, const void *p,
                                         size_t n) {
    frames__pq_col *c = frames__pq_col_of(w, col);
    if (c) frames__pq_bytes_as(w, c, FRAMES__PQ_ANY, p, n);
}

/* A null in optional column c (not a list). */
FRAMES__INLINE void frames__pq_null_at(frames_parquet *w, frames__pq_col *c) {
    c->nulls++;
    if (frames__pq_level_as(c, FRAMES__PQ_OPT, 0, w->o.alloc_ctx) < 0) w->oom = 1;
}

FRAMES_PARQUET_DEF void frames_parquet_put_null(frames_parquet *w, uint32_t col) {
    frames__pq_col *c = frames__pq_col_of(w, col);
    if (!c) return;
    if (!c->c.optional) {
        frames__pq_wfail(w, FRAMES_E_INVALID, "parquet: column '%s' is not optional", c->name);
        return;
    }
    frames__pq_null_at(w, c);
}

FRAMES_PARQUET_DEF void frames_parquet_put_list_i64(frames_parquet *w, uint32_t col,
                                            const int64_t *v, uint32_t n) {
    frames__pq_col *c = frames__pq_col_of(w, col);
    void *a;
    uint32_t i;
    if (!c) return;
    a = w->o.alloc_ctx;
    if (!c->c.list) {
        frames__pq_wfail(w, FRAMES_E_INVALID, "parquet: column '%s' is not a list", c->name);
        return;
    }
    if (n == 0) {   /* an empty list: one level entry, no value */
        if (frames__pq_level(c, 0, 0, a) < 0) w->oom = 1;
        return;
    }
    for (i = 0; i < n; i++) {
        if (frames__pq_level(c, 1, i ? 1 : 0, a) < 0 || frames__pq_fixed(w, c, (uint64_t)v[i]) < 0) {
            w->oom = 1;
            return;
        }
    }
}

/* --------------------------------------------------------------------------------------
   RLE / bit-packed hybrid
   -------------------------------------------------------------------------------------- */

static inline uint32_t frames__pq_at(const uint8_t *v8, const uint32_t *v32, size_t i) {
    return v8 ? v8[i] : v32[i];
}

/* Runs of 8 or more equal values are RLE runs (header count << 1, then the value in
   ceil(bw / 8) bytes); the rest goes into bit-packed runs of groups of 8 values (header
   groups << 1 | 1, values LSB first), the last group padded with zeros. */
/* The number of values equal to v from i + 1 on, plus 1; levels (bytes) 8 at a time. */
FRAMES__INLINE size_t frames__pq_run(const uint8_t *v8, const uint32_t *v32, size_t i, size_t n,
                                     uint32_t v) {
    size_t j = i + 1;
    if (v8) {
        uint64_t all = 0x0101010101010101ull * v;
        while (j + 8 <= n && frames__le64(v8 + j) == all) j += 8;
    }
    while (j < n && frames__pq_at(v8, v32, j) == v) j++;
    return j - i;
}

/* The group of 8 values from j (those from end on: 0) packed at bw <= 8 bits each, LSB
   first. Levels (bytes of 0 or 1, bit width 1): byte k's bit 0 to bit k with one
   multiply. */
FRAMES__INLINE uint64_t frames__pq_pack8(const uint8_t *v8, const uint32_t *v32, size_t j,
                                         size_t end, int bw) {
    uint64_t acc = 0;
    int k;
    if (j + 8 <= end) {
        if (v8 && bw == 1) return (frames__le64(v8 + j) * 0x0102040810204080ull) >> 56;
        for (k = 0; k < 8; k++) acc |= (uint64_t)frames__pq_at(v8, v32, j + (size_t)k) << (k * bw);
        return acc;
    }
    for (k = 0; j + (size_t)k < end; k++) acc |= (uint64_t)frames__pq_at(v8, v32, j + (size_t)k) << (k * bw);
    return acc;
}

/* Inlined into frames__pq_hybrid8 and _hybrid32: one loop per kind of input. */
FRAMES__INLINE int frames__pq_hybrid(frames__pq_buf *out, const uint8_t *v8, const uint32_t *v32,
                                     size_t n, int bw, void *a) {
    size_t i = 0, vbytes = (size_t)(bw + 7) / 8;
    while (i < n) {
        uint32_t v = frames__pq_at(v8, v32, i);
        size_t run = frames__pq_run(v8, v32, i, n, v);
        if (run >= 8) {
            size_t k;
            if (frames__pq_reserve(out, 10 + vbytes, a) < 0) return FRAMES_E_NOMEM;
            out->n += frames__pq_varint(out->p + out->n, (uint64_t)run << 1);
            for (k = 0; k < vbytes; k++) out->p[out->n++] = (uint8_t)(v >> (8 * k));
            i += run;
        } else {
            size_t start = i, groups, j;
            uint64_t acc = 0;
            int nbits = 0;
            for (;;) {   /* whole groups until a long run starts at a group boundary */
                size_t r = 1;
                i += n - i < 8 ? n - i : 8;
                if (i >= n) break;
                v = frames__pq_at(v8, v32, i);
                while (i + r < n && r < 8 && frames__pq_at(v8, v32, i + r) == v) r++;
                if (r >= 8) break;
            }
            groups = (i - start + 7) / 8;
            if (frames__pq_reserve(out, 10 + groups * (size_t)bw + 8, a) < 0) return FRAMES_E_NOMEM;
            out->n += frames__pq_varint(out->p + out->n, (uint64_t)groups << 1 | 1);
            for (j = start; bw <= 8 && j < start + groups * 8; j += 8) {   /* a group: bw bytes */
                frames__put_le64(out->p + out->n, frames__pq_pack8(v8, v32, j, i, bw));
                out->n += (size_t)bw;
            }
            for (; j < start + groups * 8; j++) {
                uint64_t x = j < i ? frames__pq_at(v8, v32, j) : 0;
                acc |= x << nbits;
                nbits += bw;
                while (nbits >= 8) {
                    out->p[out->n++] = (uint8_t)acc;
                    acc >>= 8;
                    nbits -= 8;
                }
            }
        }
    }
    return FRAMES_OK;
}

static FRAMES__NOINLINE int frames__pq_hybrid8(frames__pq_buf *out, const uint8_t *v, size_t n,
                                               int bw, void *a) {
    return frames__pq_hybrid(out, v, NULL, n, bw, a);
}

static FRAMES__NOINLINE int frames__pq_hybrid32(frames__pq_buf *out, const uint32_t *v, size_t n,
                                                int bw, void *a) {
    return frames__pq_hybrid(out, NULL, v, n, bw, a);
}

/* Levels of a data page v1: a 4-byte length, then the hybrid encoding (bit width 1). */
static int frames__pq_levels(frames__pq_buf *out, const uint8_t *lev, size_t n, void *a) {
    size_t at = out->n;
    if (frames__pq_reserve(out, 4, a) < 0) return FRAMES_E_NOMEM;
    out->n += 4;
    if (frames__pq_hybrid8(out, lev, n, 1, a) < 0) return FRAMES_E_NOMEM;
    frames__put_le32(out->p + at, (uint32_t)(out->n - at - 4));
    return FRAMES_OK;
}

static int frames__pq_bitwidth(uint32_t maxv) {
    int bw = 1;
    while (bw < 32 && (maxv >> bw)) bw++;
    return bw;
}

/* --------------------------------------------------------------------------------------
   DELTA_BINARY_PACKED
   -------------------------------------------------------------------------------------- */

/* Parquet's delta encoding: a header (block size 128, 4 miniblocks of 32 values, the
   count, the first value as a zigzag varint), then per block of 128 deltas the smallest
   delta (zigzag varint), one bit width per miniblock and the miniblocks: each delta less
   the smallest, bit-packed LSB first. The frame column (+0 or +1 per row) takes a few
   bits per block instead of 8 bytes per row. Arithmetic wraps in the physical type
   (INT32: 32 bits), as the format asks. */
#define FRAMES__PQ_DELTA_BLOCK 128
#define FRAMES__PQ_DELTA_MINI 32

/* Append the low bw bits of x (bw <= 56) to acc, which holds nb < 8 pending bits. */
FRAMES__INLINE uint8_t *frames__pq_bits(uint8_t *o, uint64_t x, int bw, uint64_t *acc, int *nb) {
    *acc |= x << *nb;
    *nb += bw;
    while (*nb >= 8) {
        *o++ = (uint8_t)*acc;
        *acc >>= 8;
        *nb -= 8;
    }
    return o;
}

/* 32 values of bw bits (0..64): exactly 4 * bw bytes. */
static uint8_t *frames__pq_pack32(uint8_t *o, const uint64_t *v, int bw) {
    uint64_t acc = 0;
    int nb = 0, i;
    if (bw <= 56) {
        for (i = 0; i < 32; i++) o = frames__pq_bits(o, v[i], bw, &acc, &nb);
    } else {   /* two pieces, each small enough for the accumulator */
        for (i = 0; i < 32; i++) {
            o = frames__pq_bits(o, v[i] & 0xffffffffu, 32, &acc, &nb);
            o = frames__pq_bits(o, v[i] >> 32, bw - 32, &acc, &nb);
        }
    }
    return o;
}

static int frames__pq_bits_of(uint64_t v) {
    int n = 0;
    while (n < 64 && (v >> n)) n++;
    return n;
}

/* v[0..n) (INT64, or INT32 when narrow: the low 32 bits count) delta encoded into out. */
static int frames__pq_delta(frames__pq_buf *out, const uint64_t *v, size_t n, int narrow, void *a) {
    uint64_t d[FRAMES__PQ_DELTA_BLOCK];
    size_t i = 1;
    uint64_t first = n ? v[0] : 0;
    if (frames__pq_reserve(out, 40, a) < 0) return FRAMES_E_NOMEM;
    out->n += frames__pq_varint(out->p + out->n, FRAMES__PQ_DELTA_BLOCK);
    out->n += frames__pq_varint(out->p + out->n, FRAMES__PQ_DELTA_BLOCK / FRAMES__PQ_DELTA_MINI);
    out->n += frames__pq_varint(out->p + out->n, n);
    if (narrow) first = (uint64_t)(int64_t)(int32_t)(uint32_t)first;
    out->n += frames__pq_varint(out->p + out->n, frames__tc_zigzag((int64_t)first));
    while (i < n) {
        size_t k = n - i < FRAMES__PQ_DELTA_BLOCK ? n - i : FRAMES__PQ_DELTA_BLOCK, j, m;
        size_t minis = (k + FRAMES__PQ_DELTA_MINI - 1) / FRAMES__PQ_DELTA_MINI;
        int64_t min;
        uint8_t *o, *widths;
        for (j = 0; j < k; j++) {
            uint64_t x = v[i + j] - v[i + j - 1];
            d[j] = narrow ? (uint64_t)(int64_t)(int32_t)(uint32_t)x : x;
        }
        min = (int64_t)d[0];
        for (j = 1; j < k; j++)
            if ((int64_t)d[j] < min) min = (int64_t)d[j];
        for (j = 0; j < k; j++) d[j] = narrow ? (uint32_t)(d[j] - (uint64_t)min) : d[j] - (uint64_t)min;
        for (; j < FRAMES__PQ_DELTA_BLOCK; j++) d[j] = 0;   /* the last miniblock's padding */
        if (frames__pq_reserve(out, 10 + 4 + minis * 4 * 64, a) < 0) return FRAMES_E_NOMEM;
        o = out->p + out->n;
        o += frames__pq_varint(o, frames__tc_zigzag(min));
        widths = o;
        o += 4;
        for (m = 0; m < 4; m++) {   /* unused miniblocks of the last block: width 0 */
            uint64_t any = 0;
            for (j = m * 32; m < minis && j < m * 32 + 32; j++) any |= d[j];
            widths[m] = (uint8_t)frames__pq_bits_of(any);
        }
        for (m = 0; m < minis; m++) o = frames__pq_pack32(o, d + m * 32, widths[m]);
        out->n = (size_t)(o - out->p);
        i += k;
    }
    return FRAMES_OK;
}

/* --------------------------------------------------------------------------------------
   pages
   -------------------------------------------------------------------------------------- */

typedef struct frames__pq_chunk {
    uint64_t first, data_page, dict_page;
    uint64_t usize, csize;
    uint32_t encodings;          /* 1 << encoding for each one a page used */
} frames__pq_chunk;

/* Statistics of one data page (fixed-width columns): min and max as stored bits. */
typedef struct frames__pq_pstat {
    int has_mm, has_nulls;
    uint64_t min, max, nulls;
} frames__pq_pstat;

#ifdef FRAMES_PARQUET_LIBZSTD
/* A zstd frame of stored blocks (RFC 8878: magic, a header with Single_Segment and a
   4-byte content size, Raw_Blocks of at most 128 KiB): what zstd itself writes for data
   it cannot shrink, for the cost of a copy. out has room for len + 12 + 3 * (len >> 17). */
static size_t frames__pq_zstd_stored(uint8_t *out, const uint8_t *in, size_t len) {
    size_t o = 9, at = 0;
    frames__put_le32(out, 0xfd2fb528u);
    out[4] = 0xa0;   /* Frame_Content_Size_flag 2 (4 bytes), Single_Segment_flag */
    frames__put_le32(out + 5, (uint32_t)len);
    do {
        size_t n = len - at < 131072 ? len - at : 131072;
        uint32_t hdr = (uint32_t)n << 3 | (at + n == len ? 1u : 0u);   /* Block_Type 0: raw */
        out[o] = (uint8_t)hdr;
        out[o + 1] = (uint8_t)(hdr >> 8);
        out[o + 2] = (uint8_t)(hdr >> 16);
        if (n) memcpy(out + o + 3, in + at, n);
        o += 3 + n;
        at += n;
    } while (at < len);
    return o;
}

/* A zstd frame of body[0..len) in w->packed. Data pages of a column whose last page did
   not shrink by 1/16 (random values, hashes) are stored for the next 15 pages: zstd's
   time on them is a third of an export's, for under 2% of their size. */
static int frames__pq_zstd_page(frames_parquet *w, frames__pq_col *c, const uint8_t *body,
                                size_t len, size_t *clen) {
    size_t bound = ZSTD_compressBound(len);
    if (bound < len + 12 + 3 * (len >> 17)) bound = len + 12 + 3 * (len >> 17);
    w->packed.n = 0;
    if (frames__pq_reserve(&w->packed, bound, w->o.alloc_ctx) < 0)
        return frames__pq_wfail(w, FRAMES_E_NOMEM, "parquet: out of memory");
    if (c && c->stored_pages) {
        c->stored_pages--;
        *clen = frames__pq_zstd_stored(w->packed.p, body, len);
        return FRAMES_OK;
    }
    *clen = ZSTD_compressCCtx(w->zctx, w->packed.p, bound, body, len, w->o.zstd_level);
    if (ZSTD_isError(*clen))
        return frames__pq_wfail(w, FRAMES_E_IO, "parquet: zstd: %s",
                               ZSTD_getErrorName(*clen));
    if (c && len >= 4096 && *clen > len - len / 16) c->stored_pages = 15;
    return FRAMES_OK;
}
#endif

/* Write one page: header (Thrift) and body (compressed when asked). c: the column of a
   data page (its compression history), NULL for a dictionary page. */
static void frames__pq_stat_value(frames__parquet_tc *t, int field, const frames__pq_col *c,
                                  uint64_t v, const frames_bytes *b);

static int frames__pq_page(frames_parquet *w, frames__pq_col *c, frames__pq_chunk *ck, int type,
                           uint32_t nvalues, int encoding, const uint8_t *body, size_t len,
                           const frames__pq_pstat *st) {
    uint8_t hdr[128];
    frames__parquet_tc t;
    const uint8_t *out = body;
    size_t clen = len;
    if (len > 0x7fffffffu)
        return frames__pq_wfail(w, FRAMES_E_LIMIT, "parquet: page of %zu bytes", len);
#ifdef FRAMES_PARQUET_LIBZSTD
    if (w->o.compression == FRAMES_PARQUET_ZSTD) {
        int rc = frames__pq_zstd_page(w, c, body, len, &clen);
        if (rc < 0) return rc;
        out = w->packed.p;
    }
#else
    (void)c;
#endif
    frames__parquet_tc_init(&t, hdr, sizeof hdr, NULL);
    frames__parquet_tc_i32(&t, 1, type);
    frames__parquet_tc_i32(&t, 2, (int32_t)len);
    frames__parquet_tc_i32(&t, 3, (int32_t)clen);
    if (type == FRAMES__PQ_DICTIONARY_PAGE) {
        frames__parquet_tc_begin(&t, 7);
        frames__parquet_tc_i32(&t, 1, (int32_t)nvalues);
        frames__parquet_tc_i32(&t, 2, FRAMES__PQ_PLAIN);
        frames__parquet_tc_end(&t);
        ck->dict_page = w->offset;
    } else {
        frames__parquet_tc_begin(&t, 5);
        frames__parquet_tc_i32(&t, 1, (int32_t)nvalues);
        frames__parquet_tc_i32(&t, 2, encoding);
        frames__parquet_tc_i32(&t, 3, FRAMES__PQ_RLE);
        frames__parquet_tc_i32(&t, 4, FRAMES__PQ_RLE);
        if (st && (st->has_nulls || st->has_mm)) {
            frames__parquet_tc_begin(&t, 5);   /* Statistics of the page */
            if (st->has_nulls) frames__parquet_tc_i64(&t, 3, (int64_t)st->nulls);
            if (st->has_mm) {
                frames__pq_stat_value(&t, 5, c, st->max, NULL);
                frames__pq_stat_value(&t, 6, c, st->min, NULL);
            }
            frames__parquet_tc_end(&t);
        }
        frames__parquet_tc_end(&t);
        if (!ck->data_page) ck->data_page = w->offset;
    }
    t.buf[t.len++] = 0;   /* PageHeader's stop (128 bytes leave room) */
    if (t.status) return frames__pq_wfail(w, FRAMES_E_INVALID, "parquet: page header");
    if (!ck->first) ck->first = w->offset;
    ck->usize += t.len + len;
    ck->csize += t.len + clen;
    if (frames__pq_write(w, hdr, t.len) < 0 || frames__pq_write(w, out, clen) < 0)
        return FRAMES_E_IO;
    return FRAMES_OK;
}

/* A value into a page's min/max (signed or unsigned order). */
FRAMES__INLINE void frames__pq_pstat_add(frames__pq_pstat *st, uint64_t v, int sign) {
    if (!st->has_mm) {
        st->min = st->max = v;
        st->has_mm = 1;
    } else if (sign ? (int64_t)v < (int64_t)st->min : v < st->min) {
        st->min = v;
    } else if (sign ? (int64_t)v > (int64_t)st->max : v > st->max) {
        st->max = v;
    }
}

/* The integers of a page (plain, fixed width) into w->vals, with their page statistics
   (signed or unsigned order as the column's). */
static int frames__pq_page_ints(frames_parquet *w, const frames__pq_col *c, const uint8_t *p,
                                size_t nval, frames__pq_pstat *st) {
    int sign = c->c.kind != FRAMES_PARQUET_U64;
    size_t i;
    if (nval > w->valcap && FRAMES__GROW(w->vals, w->valcap, nval, w->o.alloc_ctx) < 0)
        return FRAMES_E_NOMEM;
    for (i = 0; i < nval; i++) {
        uint64_t v = c->width == 8 ? frames__le64(p + 8 * i)
                                   : (uint64_t)(int64_t)(int32_t)frames__le32(p + 4 * i);
        w->vals[i] = v;
        frames__pq_pstat_add(st, v, sign);
    }
    return FRAMES_OK;
}

/* Statistics of a dictionary page's values (fixed width): from the entries it uses. */
static void frames__pq_page_dict_stats(const frames__pq_col *c, const uint32_t *idx, size_t nval,
                                       frames__pq_pstat *st) {
    int sign = c->c.kind != FRAMES_PARQUET_U64;
    uint32_t prev = 0xffffffffu;
    size_t i;
    for (i = 0; i < nval; i++) {
        uint64_t v;
        if (idx[i] == prev) continue;
        prev = idx[i];
        v = c->width == 8 ? frames__le64(c->dvals.p + 8 * (size_t)prev)
                          : (uint64_t)(int64_t)(int32_t)frames__le32(c->dvals.p + 4 * (size_t)prev);
        frames__pq_pstat_add(st, v, sign);
    }
}

/* DELTA_LENGTH_BYTE_ARRAY of plain byte arrays p[0..len) (nval of them): the lengths
   delta encoded, then the bytes without them (no 4-byte length before every value for
   zstd to chew on). */
static int frames__pq_dlba(frames_parquet *w, frames__pq_buf *b, const uint8_t *p, size_t len,
                           size_t nval) {
    void *a = w->o.alloc_ctx;
    size_t i, at;
    if (nval > w->valcap && FRAMES__GROW(w->vals, w->valcap, nval, a) < 0) return FRAMES_E_NOMEM;
    for (i = 0, at = 0; i < nval; i++) {
        w->vals[i] = frames__le32(p + at);
        at += 4 + (size_t)w->vals[i];
    }
    if (frames__pq_delta(b, w->vals, nval, 1, a) < 0 || frames__pq_reserve(b, len, a) < 0)
        return FRAMES_E_NOMEM;
    for (i = 0, at = 0; i < nval; i++) {
        size_t n = (size_t)w->vals[i];
        memcpy(b->p + b->n, p + at + 4, n);
        b->n += n;
        at += 4 + n;
    }
    return FRAMES_OK;
}

/* The values of a plain page of column c: fixed-width integers DELTA_BINARY_PACKED when
   that takes at most a quarter of their plain size (frame numbers, sorted addresses; not
   random register values, which zstd shrinks better plain: after such a page the next 15
   are plain without trying), byte arrays DELTA_LENGTH_BYTE_ARRAY. Returns the encoding. */
static int frames__pq_plain_values(frames_parquet *w, frames__pq_col *c, frames__pq_buf *b,
                                   const uint8_t *p, size_t len, size_t nval,
                                   frames__pq_pstat *st) {
    void *a = w->o.alloc_ctx;
    size_t at = b->n;
    if (c->width == 0) {
        if (frames__pq_dlba(w, b, p, len, nval) < 0) return FRAMES_E_NOMEM;
        return FRAMES__PQ_DELTA_LENGTH_BYTE_ARRAY;
    }
    if (frames__pq_page_ints(w, c, p, nval, st) < 0) return FRAMES_E_NOMEM;
    if (c->plain_pages) {
        c->plain_pages--;
    } else {
        if (frames__pq_delta(b, w->vals, nval, c->width == 4, a) < 0) return FRAMES_E_NOMEM;
        if (b->n - at <= len / 4) return FRAMES__PQ_DELTA_BINARY_PACKED;
        b->n = at;
        c->plain_pages = 15;
    }
    if (frames__pq_append(b, p, len, a) < 0) return FRAMES_E_NOMEM;
    return FRAMES__PQ_PLAIN;
}

/* A plain page's min/max into its chunk's. */
static void frames__pq_merge_mm(frames__pq_col *c, const frames__pq_pstat *st) {
    int sign = c->c.kind != FRAMES_PARQUET_U64;
    if (!st->has_mm) return;
    if (!c->has_mm) {
        c->imin = st->min;
        c->imax = st->max;
        c->has_mm = 1;
        return;
    }
    if (sign ? (int64_t)st->min < (int64_t)c->imin : st->min < c->imin) c->imin = st->min;
    if (sign ? (int64_t)st->max > (int64_t)c->imax : st->max > c->imax) c->imax = st->max;
}

/* Data pages of column c between marks a and b. */
static int frames__pq_data_page(frames_parquet *w, frames__pq_col *c, frames__pq_chunk *ck,
                                const frames__pq_mark *ma, const frames__pq_mark *mb, int bw) {
    void *a = w->o.alloc_ctx;
    frames__pq_buf *b = &w->body;
    size_t nlev = mb->lev - ma->lev, nval = mb->val - ma->val;
    frames__pq_pstat st;
    int enc = FRAMES__PQ_PLAIN;
    memset(&st, 0, sizeof st);
    b->n = 0;
    if (c->maxrep && frames__pq_levels(b, c->rep.p + ma->lev, nlev, a) < 0) goto oom;
    if (c->maxdef && frames__pq_levels(b, c->def.p + ma->lev, nlev, a) < 0) goto oom;
    if (c->c.optional) {
        st.has_nulls = 1;
        st.nulls = nlev - nval;
    }
    if (bw) {
        if (frames__pq_reserve(b, 1, a) < 0) goto oom;
        b->p[b->n++] = (uint8_t)bw;
        if (frames__pq_hybrid32(b, c->idx + ma->val, nval, bw, a) < 0) goto oom;
        if (c->width > 1 && ma->val == 0 && mb->val == c->nval) {   /* the chunk's */
            st.has_mm = c->has_mm;
            st.min = c->imin;
            st.max = c->imax;
        } else if (c->width > 1) {
            frames__pq_page_dict_stats(c, c->idx + ma->val, nval, &st);
        }
        enc = FRAMES__PQ_RLE_DICTIONARY;
    } else if (c->ptype == FRAMES__PQ_BOOLEAN) {
        const uint8_t *v = c->plain.p + ma->val;   /* one byte per value, 0 or 1 */
        size_t i = 0, k;
        if (frames__pq_reserve(b, nval / 8 + 1, a) < 0) goto oom;
        for (; i + 8 <= nval; i += 8)   /* byte k's bit 0 to bit k: one multiply */
            b->p[b->n++] = (uint8_t)((frames__le64(v + i) * 0x0102040810204080ull) >> 56);
        for (; i < nval; i += 8) {
            unsigned byte = 0;
            for (k = 0; k < 8 && i + k < nval; k++) byte |= (unsigned)v[i + k] << k;
            b->p[b->n++] = (uint8_t)byte;
        }
    } else if (mb->plain > ma->plain) {   /* (no plain buffer when every value is null) */
        enc = frames__pq_plain_values(w, c, b, c->plain.p + ma->plain,
                                      (size_t)(mb->plain - ma->plain), nval, &st);
        if (enc < 0) goto oom;
        if (c->width > 1) frames__pq_merge_mm(c, &st);   /* the chunk's min/max */
    }
    ck->encodings |= 1u << enc;
    return frames__pq_page(w, c, ck, FRAMES__PQ_DATA_PAGE, (uint32_t)nlev, enc, b->p, b->n, &st);
oom:
    return frames__pq_wfail(w, FRAMES_E_NOMEM, "parquet: out of memory");
}

static void frames__pq_stat_value(frames__parquet_tc *t, int field, const frames__pq_col *c,
                                  uint64_t v, const frames_bytes *b) {
    uint8_t enc[8];
    if (c->ptype == FRAMES__PQ_BYTE_ARRAY) {
        frames__parquet_tc_binary(t, field, b->ptr, b->len);
    } else {
        frames__put_le64(enc, v);
        frames__parquet_tc_binary(t, field, enc, (size_t)(c->ptype == FRAMES__PQ_BOOLEAN ? 1 : c->width));
    }
}

static void frames__pq_path(frames__parquet_tc *t, int field, const frames__pq_col *c) {
    frames__parquet_tc_list(t, field, FRAMES__PARQUET_TC_BINARY, c->c.list ? 3 : 1);
    frames__parquet_tc_string(t, 0, c->name);
    if (c->c.list) {
        frames__parquet_tc_string(t, 0, "list");
        frames__parquet_tc_string(t, 0, "element");
    }
}

/* The ColumnChunk struct of this chunk (an element of RowGroup.columns). */
static void frames__pq_chunk_meta(frames_parquet *w, const frames__pq_col *c,
                                  const frames__pq_chunk *ck, int dict) {
    frames__parquet_tc *t = &w->groups;
    uint32_t encs = ck->encodings, n = 0, e;
    if (dict) encs |= 1u << FRAMES__PQ_PLAIN;   /* the dictionary page's */
    if (c->maxdef || c->maxrep) encs |= 1u << FRAMES__PQ_RLE;
    for (e = 0; e < 32; e++) n += (encs >> e) & 1;
    frames__parquet_tc_begin(t, 0);
    frames__parquet_tc_i64(t, 2, (int64_t)ck->first);
    frames__parquet_tc_begin(t, 3);
    frames__parquet_tc_i32(t, 1, c->ptype);
    frames__parquet_tc_list(t, 2, FRAMES__PARQUET_TC_I32, n);   /* every encoding used */
    for (e = 0; e < 32; e++)
        if ((encs >> e) & 1) frames__parquet_tc_i32(t, 0, (int32_t)e);
    frames__pq_path(t, 3, c);
    frames__parquet_tc_i32(t, 4, w->o.compression);
    frames__parquet_tc_i64(t, 5, (int64_t)c->nlev);
    frames__parquet_tc_i64(t, 6, (int64_t)ck->usize);
    frames__parquet_tc_i64(t, 7, (int64_t)ck->csize);
    frames__parquet_tc_i64(t, 9, (int64_t)ck->data_page);
    if (dict) frames__parquet_tc_i64(t, 11, (int64_t)ck->dict_page);
    frames__parquet_tc_begin(t, 12);   /* Statistics */
    frames__parquet_tc_i64(t, 3, (int64_t)c->nulls);
    if (c->has_mm && (c->ptype != FRAMES__PQ_BYTE_ARRAY ||
                      (c->bmin.len <= FRAMES__PQ_STAT_MAX && c->bmax.len <= FRAMES__PQ_STAT_MAX))) {
        frames__pq_stat_value(t, 5, c, c->imax, &c->bmax);
        frames__pq_stat_value(t, 6, c, c->imin, &c->bmin);
    }
    frames__parquet_tc_end(t);
    frames__parquet_tc_end(t);
    frames__parquet_tc_end(t);
}

/* Min and max of the chunk's values, from the dictionary (a few entries) or the plain
   values, once per chunk rather than per value (plain integers: from their pages'
   statistics, frames__pq_merge_mm). Byte arrays: views into the buffers. */
static void frames__pq_minmax(frames__pq_col *c) {
    const uint8_t *p, *end, *bmin = NULL, *bmax = NULL;
    size_t nmin = 0, nmax = 0, step;
    int sign = c->c.kind == FRAMES_PARQUET_I32 || c->c.kind == FRAMES_PARQUET_I64;
    c->has_mm = 0;
    if (c->nval == 0 || (!c->dict && c->width > 1)) return;
    if (c->width == 1) {   /* booleans: whether there is a 0, a 1 (memchr, not a loop) */
        int zero = memchr(c->plain.p, 0, c->nval) != NULL, one = memchr(c->plain.p, 1, c->nval) != NULL;
        c->imin = zero ? 0 : 1;
        c->imax = one ? 1 : 0;
        c->has_mm = 1;
        return;
    }
    p = c->dict ? c->dvals.p : c->plain.p;
    end = p + (c->dict ? c->dvals.n : c->plain.n);
    for (; p < end; p += step) {
        if (c->width) {
            uint64_t v = c->width == 8 ? frames__le64(p) : c->width == 4
                ? (uint64_t)(int64_t)(int32_t)frames__le32(p) : (uint64_t)*p;
            step = (size_t)c->width;
            if (!c->has_mm) {
                c->imin = c->imax = v;
            } else if (sign) {
                if ((int64_t)v < (int64_t)c->imin) c->imin = v;
                if ((int64_t)v > (int64_t)c->imax) c->imax = v;
            } else {
                if (v < c->imin) c->imin = v;
                if (v > c->imax) c->imax = v;
            }
        } else {
            size_t n = frames__le32(p);
            step = 4 + n;
            if (!c->has_mm || frames__pq_bcmp(p + 4, n, bmin, nmin) < 0) {
                bmin = p + 4;
                nmin = n;
            }
            if (!c->has_mm || frames__pq_bcmp(p + 4, n, bmax, nmax) > 0) {
                bmax = p + 4;
                nmax = n;
            }
        }
        c->has_mm = 1;
    }
    c->bmin = frames_bytes_of(bmin, nmin);
    c->bmax = frames_bytes_of(bmax, nmax);
}

/* Write column c of the current row group: dictionary page (when it pays), data pages,
   and its ColumnChunk metadata. */
static int frames__pq_flush_col(frames_parquet *w, frames__pq_col *c, frames__pq_chunk *ck) {
    frames__pq_mark end, start;
    int bw = 0, rc;
    size_t i;
    memset(ck, 0, sizeof *ck);
    if (frames__pq_dict_build(w, c) < 0)
        return frames__pq_wfail(w, FRAMES_E_NOMEM, "parquet: out of memory");
    if (c->dict) {   /* written plain when a dictionary and its indices would not be smaller */
        bw = frames__pq_bitwidth(c->ndict ? c->ndict - 1 : 0);
        if ((uint64_t)c->dvals.n + ((uint64_t)c->nval * (uint64_t)bw + 7) / 8 >= c->plain.n) {
            c->dict = 0;
            bw = 0;
        }
    }
    if (bw && (rc = frames__pq_page(w, NULL, ck, FRAMES__PQ_DICTIONARY_PAGE, c->ndict,
                                    FRAMES__PQ_PLAIN, c->dvals.p, c->dvals.n, NULL)) < 0)
        return rc;
    frames__pq_minmax(c);   /* before the pages, which use it or add to it */
    end.lev = c->nlev;
    end.val = c->nval;
    end.plain = c->plain.n;
    memset(&start, 0, sizeof start);
    for (i = 0; i <= c->nmarks; i++) {
        const frames__pq_mark *mb = i < c->nmarks ? &c->marks[i] : &end;
        if (mb->lev == start.lev && i < c->nmarks) continue;
        if ((rc = frames__pq_data_page(w, c, ck, &start, mb, bw)) < 0) return rc;
        start = *mb;
    }
    frames__pq_chunk_meta(w, c, ck, bw != 0);
    return FRAMES_OK;
}

static void frames__pq_reset_col(frames_parquet *w, frames__pq_col *c) {
    c->def.n = c->rep.n = c->plain.n = c->dvals.n = 0;
    c->nlev = c->nval = c->nmarks = 0;
    c->ndict = 0;
    frames__htab_clear(&c->didx);
    c->gen++;   /* empties the front */
    c->dict = c->c.dictionary;
    c->nulls = 0;
    c->has_mm = 0;
    c->bmin.len = c->bmax.len = 0;
    (void)w;
}

static int frames__pq_flush_group(frames_parquet *w) {
    frames__pq_chunk ck;
    uint64_t first = w->offset, usize = 0, csize = 0;
    uint32_t i;
    int rc;
    if (w->group_rows == 0) return FRAMES_OK;
    frames__parquet_tc_begin(&w->groups, 0);
    frames__parquet_tc_list(&w->groups, 1, FRAMES__PARQUET_TC_STRUCT, w->ncols);
    for (i = 0; i < w->ncols; i++) {
        if ((rc = frames__pq_flush_col(w, &w->cols[i], &ck)) < 0) return rc;   /* failed */
        usize += ck.usize;
        csize += ck.csize;
        frames__pq_reset_col(w, &w->cols[i]);
    }
    frames__parquet_tc_i64(&w->groups, 2, (int64_t)usize);
    frames__parquet_tc_i64(&w->groups, 3, (int64_t)w->group_rows);
    frames__parquet_tc_i64(&w->groups, 5, (int64_t)first);
    frames__parquet_tc_i64(&w->groups, 6, (int64_t)csize);
    frames__parquet_tc_i16(&w->groups, 7, (int16_t)(w->ngroups & 0x7fff));
    frames__parquet_tc_end(&w->groups);
    if (w->groups.status) {
        return frames__pq_wfail(w, FRAMES_E_NOMEM, "parquet: out of memory (footer)");
    }
    w->ngroups++;
    w->group_rows = 0;
    return FRAMES_OK;
}

/* --------------------------------------------------------------------------------------
   writer thread
   -------------------------------------------------------------------------------------- */

/* While the caller fills row group k + 1, a second thread writes row group k: its
   dictionaries, page encodings, statistics, zstd and the sink, which were a third of an
   export's CPU before the dictionaries moved here and are 45% of it now. The
   thread writes with a writer of its own (out: the sink, the offset, the footer's row
   groups, page scratch, a zstd context) and a second set of columns; a full row group's
   columns change hands with it. What carries over from one row group of a column to the
   next (pages stored or plain without trying, frames__pq_zstd_page) is handed on, so the
   bytes are those of the writer without the thread. Started at the first full row group
   (small tables never start one); without threads, or when one cannot start, the caller
   writes every row group itself. */
#ifndef FRAMES_PARQUET_NO_THREADS
typedef struct frames__pq_worker {
    frames__worker thread;
    frames_parquet *out;   /* only the thread touches it while a row group is handed over */
} frames__pq_worker;

static int frames__pq_worker_run(void *out, const void *job) {
    (void)job;
    frames__pq_flush_group((frames_parquet *)out);   /* an error stays in out (failed) */
    return FRAMES_OK;
}

/* The thread's writer: w's sink, offset and options, columns of its own. NULL if out of
   memory. */
static frames_parquet *frames__pq_worker_writer(const frames_parquet *w) {
    void *a = w->o.alloc_ctx;
    frames_parquet *out = (frames_parquet *)FRAMES_MALLOC(sizeof *out, a);
    uint32_t i;
    if (!out) return NULL;
    memset(out, 0, sizeof *out);
    out->o = w->o;
    out->sink = w->sink;
    out->offset = w->offset;
    out->ngroups = w->ngroups;
    out->ncols = w->ncols;
    frames__parquet_tc_init(&out->groups, NULL, 0, a);
    out->cols = (frames__pq_col *)FRAMES_MALLOC(w->ncols * sizeof *out->cols, a);
    if (!out->cols) {
        FRAMES_FREE(out, a);
        return NULL;
    }
    memset(out->cols, 0, w->ncols * sizeof *out->cols);
    for (i = 0; i < w->ncols; i++)
        if (frames__pq_col_init(&out->cols[i], &w->cols[i].c, &w->o) < 0) {
            frames_parquet_abandon(out);
            return NULL;
        }
#ifdef FRAMES_PARQUET_LIBZSTD
    if (w->o.compression == FRAMES_PARQUET_ZSTD && (out->zctx = ZSTD_createCCtx()) == NULL) {
        frames_parquet_abandon(out);
        return NULL;
    }
#endif
    return out;
}

static void frames__pq_worker_stop(frames__pq_worker *k, void *a) {
    frames__worker_stop(&k->thread);
    frames_parquet_abandon(k->out);
    FRAMES_FREE(k, a);
}

/* Start w's thread; FRAMES_OK or -1 (then w writes its row groups itself). */
static int frames__pq_worker_start(frames_parquet *w) {
    void *a = w->o.alloc_ctx;
    frames__pq_worker *k = (frames__pq_worker *)FRAMES_MALLOC(sizeof *k, a);
    if (!k) return -1;
    if (!(k->out = frames__pq_worker_writer(w))) {
        FRAMES_FREE(k, a);
        return -1;
    }
    if (!frames__worker_start(&k->thread, frames__pq_worker_run, k->out, NULL, 0, 1)) {
        frames_parquet_abandon(k->out);
        FRAMES_FREE(k, a);
        return -1;
    }
    w->worker = k;
    return FRAMES_OK;
}

/* After a wait: the thread's error becomes w's; and the history of each column's pages
   goes to the columns of `to`, which write the next row group. */
static int frames__pq_worker_sync(frames_parquet *w, frames__pq_col *to) {
    frames_parquet *out = w->worker->out;
    uint32_t i;
    if (out->state == FRAMES__PQ_FAILED) {
        w->err = out->err;
        w->state = FRAMES__PQ_FAILED;
        return w->err.code ? w->err.code : FRAMES_E_IO;
    }
    for (i = 0; i < w->ncols; i++) {
        to[i].stored_pages = out->cols[i].stored_pages;
        to[i].plain_pages = out->cols[i].plain_pages;
    }
    return FRAMES_OK;
}

/* The full row group to the thread; w fills the columns the thread emptied. */
static int frames__pq_hand_over(frames_parquet *w) {
    frames__pq_worker *k = w->worker;
    frames__pq_col *filled = w->cols;
    int rc;
    frames__worker_wait(&k->thread);
    if ((rc = frames__pq_worker_sync(w, filled)) < 0) return rc;
    w->cols = k->out->cols;
    k->out->cols = filled;
    k->out->group_rows = w->group_rows;
    w->group_rows = 0;
    w->ngroups++;   /* for frames_parquet_info_get; the thread counts its own */
    return frames__worker_put(&k->thread, NULL);
}

/* Back to writing here (finish): the thread's offset and row groups become w's. */
static int frames__pq_worker_end(frames_parquet *w) {
    frames__pq_worker *k = w->worker;
    frames__parquet_tc groups;
    int rc;
    frames__worker_wait(&k->thread);
    rc = frames__pq_worker_sync(w, w->cols);
    if (rc == FRAMES_OK) {
        groups = w->groups;   /* empty: w wrote no row group since the thread started */
        w->groups = k->out->groups;
        k->out->groups = groups;
        w->offset = k->out->offset;
        w->ngroups = k->out->ngroups;
    }
    w->worker = NULL;
    frames__pq_worker_stop(k, w->o.alloc_ctx);
    return rc;
}
#endif

/* A full row group: to the thread, or written here. */
static int frames__pq_end_group(frames_parquet *w) {
#ifndef FRAMES_PARQUET_NO_THREADS
    if (w->o.writer_thread && (w->worker || frames__pq_worker_start(w) == FRAMES_OK))
        return frames__pq_hand_over(w);
#endif
    return frames__pq_flush_group(w);
}

FRAMES_PARQUET_DEF int frames_parquet_row_end(frames_parquet *w) {
    uint32_t i;
    if (w->state != FRAMES__PQ_OPEN) return w->state == FRAMES__PQ_FINISHED ? FRAMES_E_STATE : w->err.code;
    if (w->oom) {
        return frames__pq_wfail(w, FRAMES_E_NOMEM, "parquet: out of memory at row %llu",
                               (unsigned long long)w->rows);
    }
    if (w->row_puts != w->ncols) {
        return frames__pq_wfail(w, FRAMES_E_INVALID,
                               "parquet: row %llu has %u values for %u columns",
                               (unsigned long long)w->rows, w->row_puts, w->ncols);
    }
    w->row_puts = 0;
    w->rows++;
    w->group_rows++;
    if (w->group_rows >= w->o.row_group_rows) {
        w->page_end = w->o.page_rows;
        return frames__pq_end_group(w);
    }
    if (w->group_rows == w->page_end) {
        w->page_end += w->o.page_rows;
        for (i = 0; i < w->ncols; i++) {
            frames__pq_col *c = &w->cols[i];
            if (c->nmarks >= c->markcap &&
                frames__grow((void **)&c->marks, &c->markcap, c->nmarks + 1, sizeof *c->marks,
                                w->o.alloc_ctx) < 0) {
                return frames__pq_wfail(w, FRAMES_E_NOMEM, "parquet: out of memory");
            }
            c->marks[c->nmarks].lev = c->nlev;
            c->marks[c->nmarks].val = c->nval;
            c->marks[c->nmarks].plain = c->plain.n;
            c->nmarks++;
        }
    }
    return FRAMES_OK;
}

/* --------------------------------------------------------------------------------------
   footer
   -------------------------------------------------------------------------------------- */

static void frames__pq_schema_leaf(frames__parquet_tc *t, const frames__pq_col *c) {
    frames__parquet_tc_begin(t, 0);
    frames__parquet_tc_i32(t, 1, c->ptype);
    frames__parquet_tc_i32(t, 3, c->c.list ? 0 : c->c.optional ? 1 : 0);
    frames__parquet_tc_string(t, 4, c->c.list ? "element" : c->name);
    if (c->c.kind == FRAMES_PARQUET_U64) {
        frames__parquet_tc_i32(t, 6, 14);         /* UINT_64 */
        frames__parquet_tc_begin(t, 10);          /* LogicalType */
        frames__parquet_tc_begin(t, 10);          /* INTEGER: IntType */
        frames__parquet_tc_byte(t, 1, 64);
        frames__parquet_tc_bool(t, 2, 0);
        frames__parquet_tc_end(t);
        frames__parquet_tc_end(t);
    } else if (c->c.kind == FRAMES_PARQUET_STRING) {
        frames__parquet_tc_i32(t, 6, 0);          /* UTF8 */
        frames__parquet_tc_begin(t, 10);
        frames__parquet_tc_begin(t, 1);           /* STRING: StringType */
        frames__parquet_tc_end(t);
        frames__parquet_tc_end(t);
    }
    frames__parquet_tc_end(t);
}

static uint32_t frames__pq_schema_size(const frames_parquet *w) {
    uint32_t i, n = 1;
    for (i = 0; i < w->ncols; i++) n += w->cols[i].c.list ? 3 : 1;
    return n;
}

static void frames__pq_schema(frames_parquet *w, frames__parquet_tc *t) {
    uint32_t i;
    frames__parquet_tc_list(t, 2, FRAMES__PARQUET_TC_STRUCT, frames__pq_schema_size(w));
    frames__parquet_tc_begin(t, 0);
    frames__parquet_tc_string(t, 4, "schema");
    frames__parquet_tc_i32(t, 5, (int32_t)w->ncols);
    frames__parquet_tc_end(t);
    for (i = 0; i < w->ncols; i++) {
        const frames__pq_col *c = &w->cols[i];
        if (c->c.list) {   /* the three-level LIST: <name> (LIST) / list (repeated) / element */
            frames__parquet_tc_begin(t, 0);
            frames__parquet_tc_i32(t, 3, 0);
            frames__parquet_tc_string(t, 4, c->name);
            frames__parquet_tc_i32(t, 5, 1);
            frames__parquet_tc_i32(t, 6, 3);      /* LIST */
            frames__parquet_tc_begin(t, 10);
            frames__parquet_tc_begin(t, 3);       /* LIST: ListType */
            frames__parquet_tc_end(t);
            frames__parquet_tc_end(t);
            frames__parquet_tc_end(t);
            frames__parquet_tc_begin(t, 0);
            frames__parquet_tc_i32(t, 3, 2);      /* REPEATED */
            frames__parquet_tc_string(t, 4, "list");
            frames__parquet_tc_i32(t, 5, 1);
            frames__parquet_tc_end(t);
        }
        frames__pq_schema_leaf(t, c);
    }
}

static int frames__pq_footer(frames_parquet *w) {
    frames__parquet_tc t;
    uint8_t tail[8];
    const char *kv = (const char *)w->kv.p;
    char created[64];
    uint32_t i;
    int rc;
    frames__parquet_tc_init(&t, NULL, 0, w->o.alloc_ctx);
    frames__parquet_tc_i32(&t, 1, 1);
    frames__pq_schema(w, &t);
    frames__parquet_tc_i64(&t, 3, (int64_t)w->rows);
    frames__parquet_tc_list(&t, 4, FRAMES__PARQUET_TC_STRUCT, (uint32_t)w->ngroups);
    frames__parquet_tc_raw(&t, w->groups.buf, w->groups.len);
    if (w->nkv) {
        frames__parquet_tc_list(&t, 5, FRAMES__PARQUET_TC_STRUCT, w->nkv);
        for (i = 0; i < w->nkv; i++) {
            frames__parquet_tc_begin(&t, 0);
            frames__parquet_tc_string(&t, 1, kv);
            kv += strlen(kv) + 1;
            frames__parquet_tc_string(&t, 2, kv);
            kv += strlen(kv) + 1;
            frames__parquet_tc_end(&t);
        }
    }
    frames__fmt(created, sizeof created, "frames version %s", FRAMES_LIB_VERSION);
    frames__parquet_tc_string(&t, 6, w->o.created_by ? w->o.created_by : created);
    frames__parquet_tc_list(&t, 7, FRAMES__PARQUET_TC_STRUCT, w->ncols);
    for (i = 0; i < w->ncols; i++) {   /* ColumnOrder: TYPE_ORDER for every leaf */
        frames__parquet_tc_begin(&t, 0);
        frames__parquet_tc_begin(&t, 1);
        frames__parquet_tc_end(&t);
        frames__parquet_tc_end(&t);
    }
    frames__parquet_tc_raw(&t, "", 1);   /* FileMetaData's stop */
    if (t.status || t.len > 0xffffffffu) {
        frames__parquet_tc_free(&t);
        return frames__pq_wfail(w, FRAMES_E_NOMEM, "parquet: out of memory (footer)");
    }
    frames__put_le32(tail, (uint32_t)t.len);
    memcpy(tail + 4, "PAR1", 4);
    rc = frames__pq_write(w, t.buf, t.len);
    if (rc == FRAMES_OK) rc = frames__pq_write(w, tail, 8);
    frames__parquet_tc_free(&t);
    return rc;
}

FRAMES_PARQUET_DEF int frames_parquet_finish(frames_parquet *w) {
    int rc;
    if (w->state == FRAMES__PQ_FINISHED) return FRAMES_OK;
    if (w->state == FRAMES__PQ_FAILED) return w->err.code ? w->err.code : FRAMES_E_STATE;
    if (w->row_puts) {
        return frames__pq_wfail(w, FRAMES_E_STATE, "parquet: finish inside a row");
    }
#ifndef FRAMES_PARQUET_NO_THREADS
    if (w->worker && (rc = frames__pq_worker_end(w)) < 0) return rc;
#endif
    if ((rc = frames__pq_flush_group(w)) < 0 || (rc = frames__pq_footer(w)) < 0)
        return rc;   /* the writer failed (frames__pq_wfail) */
    if (w->sink.flush && w->sink.flush(w->sink.ctx) < 0) {
        return frames__pq_wfail(w, FRAMES_E_IO, "parquet: flush failed");
    }
    w->state = FRAMES__PQ_FINISHED;
    return FRAMES_OK;
}

FRAMES_PARQUET_DEF void frames_parquet_abandon(frames_parquet *w) {
    void *a;
    uint32_t i;
    if (!w) return;
    a = w->o.alloc_ctx;
#ifndef FRAMES_PARQUET_NO_THREADS
    if (w->worker) frames__pq_worker_stop(w->worker, a);
#endif
    for (i = 0; i < w->ncols; i++) {
        frames__pq_col *c = &w->cols[i];
        FRAMES_FREE(c->def.p, a);
        FRAMES_FREE(c->rep.p, a);
        FRAMES_FREE(c->plain.p, a);
        FRAMES_FREE(c->idx, a);
        FRAMES_FREE(c->dvals.p, a);
        FRAMES_FREE(c->doff, a);
        frames__htab_free(&c->didx, a);
        FRAMES_FREE(c->front, a);
        FRAMES_FREE(c->marks, a);
    }
    FRAMES_FREE(w->cols, a);
    frames__parquet_tc_free(&w->groups);
    FRAMES_FREE(w->kv.p, a);
    FRAMES_FREE(w->body.p, a);
    FRAMES_FREE(w->packed.p, a);
    FRAMES_FREE(w->vals, a);
#ifdef FRAMES_PARQUET_LIBZSTD
    if (w->zctx) ZSTD_freeCCtx(w->zctx);
#endif
    FRAMES_FREE(w, a);
}

FRAMES_PARQUET_DEF int frames_parquet_close(frames_parquet *w) {
    int rc;
    if (!w) return FRAMES_OK;
    rc = frames_parquet_finish(w);
    frames_parquet_abandon(w);
    return rc;
}

FRAMES_PARQUET_DEF const frames_error *frames_parquet_error(const frames_parquet *w) { return &w->err; }

FRAMES_PARQUET_DEF void frames_parquet_info_get(const frames_parquet *w, frames_parquet_info *info) {
    info->rows = w->rows;
    info->row_groups = w->ngroups;
    info->bytes = w->offset;
}

/* --------------------------------------------------------------------------------------
   trace tables
   -------------------------------------------------------------------------------------- */

/* Each table's columns, once: X(id, name, kind, optional, list, dictionary) makes both
   the column ids (FRAMES__PQ_<id>) and the column table (frames_parquet_column).
   Operand values and addresses are never dictionary encoded: even where a row group has
   few distinct ones (under 1 in 8), zstd shrinks their plain pages more than a dictionary
   and its indices (a 2.56M-frame gzip trace: 20.9 MB instead of 21.9 MB), and a hash
   lookup per value was a sixth of an export's time. */

#define FRAMES__PQ_INSTRUCTIONS_COLUMNS(X)                                 \
    X(I_FRAME, "frame", I64, 0, 0, 0) X(I_PC, "pc", U64, 0, 0, 1)          \
    X(I_TID, "tid", U64, 0, 0, 1) X(I_BYTES, "bytes", BYTES, 0, 0, 1)      \
    X(I_LENGTH, "length", I32, 0, 0, 1) X(I_MODE, "mode", STRING, 1, 0, 1)

#define FRAMES__PQ_OPERANDS_COLUMNS(X)                                       \
    X(O_FRAME, "frame", I64, 0, 0, 0) X(O_PC, "pc", U64, 1, 0, 1)            \
    X(O_TID, "tid", U64, 1, 0, 1) X(O_LIST, "list", STRING, 0, 0, 1)         \
    X(O_KIND, "kind", STRING, 0, 0, 1) X(O_NAME, "name", STRING, 1, 0, 1)    \
    X(O_ADDRESS, "address", U64, 1, 0, 0) X(O_BITS, "bits", I32, 0, 0, 1)    \
    X(O_READ, "read", BOOL, 0, 0, 0) X(O_WRITTEN, "written", BOOL, 0, 0, 0)  \
    X(O_INDEX, "index", BOOL, 0, 0, 0) X(O_BASE, "base", BOOL, 0, 0, 0)      \
    X(O_TAINT, "taint_id", U64, 1, 0, 1) X(O_VALUE, "value", BYTES, 1, 0, 0) \
    X(O_VALUE_UINT, "value_uint", U64, 1, 0, 0)                               \
    X(O_VALUE_SIZE, "value_size", I32, 0, 0, 1)

#define FRAMES__PQ_SYSCALLS_COLUMNS(X)                                \
    X(S_FRAME, "frame", I64, 0, 0, 0) X(S_PC, "pc", U64, 0, 0, 1)     \
    X(S_TID, "tid", U64, 0, 0, 1) X(S_NUMBER, "number", U64, 0, 0, 1) \
    X(S_ARGS, "args", I64, 0, 1, 1)

#define FRAMES__PQ_MODULES_COLUMNS(X)                                             \
    X(M_FRAME, "frame", I64, 0, 0, 0) X(M_NAME, "module_name", STRING, 0, 0, 1)   \
    X(M_LOW, "low_address", U64, 0, 0, 0) X(M_HIGH, "high_address", U64, 0, 0, 0)

#define FRAMES__PQ_EXCEPTIONS_COLUMNS(X)                                  \
    X(E_FRAME, "frame", I64, 0, 0, 0) X(E_NUMBER, "number", U64, 0, 0, 1) \
    X(E_TID, "tid", U64, 1, 0, 1) X(E_FROM, "from_addr", U64, 1, 0, 0)    \
    X(E_TO, "to_addr", U64, 1, 0, 0)

#define FRAMES__PQ_COLUMN_ID(id, name, kind, optional, list, dictionary) FRAMES__PQ_##id,
#define FRAMES__PQ_COLUMN_SHAPE(id, name, kind, optional, list, dictionary)                 \
    FRAMES__PQ_SHAPE_##id = (list) ? FRAMES__PQ_ANY : (optional) ? FRAMES__PQ_OPT : FRAMES__PQ_REQ,
#define FRAMES__PQ_COLUMN(id, name, kind, optional, list, dictionary)                       \
    {name, FRAMES_PARQUET_##kind, optional, list, dictionary},
/* a column's value width, a constant for the puts */
enum { FRAMES__PQ_WIDTH_OF_I32 = 4, FRAMES__PQ_WIDTH_OF_I64 = 8, FRAMES__PQ_WIDTH_OF_U64 = 8,
       FRAMES__PQ_WIDTH_OF_BOOL = 1, FRAMES__PQ_WIDTH_OF_BYTES = 0, FRAMES__PQ_WIDTH_OF_STRING = 0 };
#define FRAMES__PQ_COLUMN_CONST(id, name, kind, optional, list, dictionary)                 \
    FRAMES__PQ_WIDTH_##id = FRAMES__PQ_WIDTH_OF_##kind,

enum { FRAMES__PQ_INSTRUCTIONS_COLUMNS(FRAMES__PQ_COLUMN_ID) };
enum { FRAMES__PQ_INSTRUCTIONS_COLUMNS(FRAMES__PQ_COLUMN_SHAPE) };
enum { FRAMES__PQ_INSTRUCTIONS_COLUMNS(FRAMES__PQ_COLUMN_CONST) };
static const frames_parquet_column frames__pq_instructions[] = {FRAMES__PQ_INSTRUCTIONS_COLUMNS(FRAMES__PQ_COLUMN)};

enum { FRAMES__PQ_OPERANDS_COLUMNS(FRAMES__PQ_COLUMN_ID) };
enum { FRAMES__PQ_OPERANDS_COLUMNS(FRAMES__PQ_COLUMN_SHAPE) };
enum { FRAMES__PQ_OPERANDS_COLUMNS(FRAMES__PQ_COLUMN_CONST) };
static const frames_parquet_column frames__pq_operands[] = {FRAMES__PQ_OPERANDS_COLUMNS(FRAMES__PQ_COLUMN)};

enum { FRAMES__PQ_SYSCALLS_COLUMNS(FRAMES__PQ_COLUMN_ID) };
enum { FRAMES__PQ_SYSCALLS_COLUMNS(FRAMES__PQ_COLUMN_SHAPE) };
enum { FRAMES__PQ_SYSCALLS_COLUMNS(FRAMES__PQ_COLUMN_CONST) };
static const frames_parquet_column frames__pq_syscalls[] = {FRAMES__PQ_SYSCALLS_COLUMNS(FRAMES__PQ_COLUMN)};

enum { FRAMES__PQ_MODULES_COLUMNS(FRAMES__PQ_COLUMN_ID) };
enum { FRAMES__PQ_MODULES_COLUMNS(FRAMES__PQ_COLUMN_SHAPE) };
enum { FRAMES__PQ_MODULES_COLUMNS(FRAMES__PQ_COLUMN_CONST) };
static const frames_parquet_column frames__pq_modules[] = {FRAMES__PQ_MODULES_COLUMNS(FRAMES__PQ_COLUMN)};

enum { FRAMES__PQ_EXCEPTIONS_COLUMNS(FRAMES__PQ_COLUMN_ID) };
enum { FRAMES__PQ_EXCEPTIONS_COLUMNS(FRAMES__PQ_COLUMN_SHAPE) };
enum { FRAMES__PQ_EXCEPTIONS_COLUMNS(FRAMES__PQ_COLUMN_CONST) };
static const frames_parquet_column frames__pq_exceptions[] = {FRAMES__PQ_EXCEPTIONS_COLUMNS(FRAMES__PQ_COLUMN)};

#undef FRAMES__PQ_COLUMN_ID
#undef FRAMES__PQ_COLUMN_SHAPE
#undef FRAMES__PQ_COLUMN_CONST
#undef FRAMES__PQ_COLUMN

/* Puts on the export's column id of writer w, with the column's levels known. */
#define FRAMES__PQ_INT(w, id, v)                                                             \
    frames__pq_int_k(w, &(w)->cols[FRAMES__PQ_##id], FRAMES__PQ_SHAPE_##id,                  \
                     FRAMES__PQ_WIDTH_##id, v)
#define FRAMES__PQ_BYTES(w, id, p, n)                                                        \
    frames__pq_bytes_as(w, &(w)->cols[FRAMES__PQ_##id], FRAMES__PQ_SHAPE_##id, p, n)
#define FRAMES__PQ_TEXT(x, w, id, s) frames__pq_put_text(x, w, FRAMES__PQ_##id, FRAMES__PQ_SHAPE_##id, s)
/* id is optional: v when has, else null */
#define FRAMES__PQ_OPT_U64(w, id, has, v)                                                    \
    ((has) ? FRAMES__PQ_INT(w, id, v) : frames__pq_null_at(w, &(w)->cols[FRAMES__PQ_##id]))

FRAMES_PARQUET_DEF const char *frames_parquet_table_name(int table) {
    static const char *const names[] = {"instructions", "operands", "syscalls", "modules",
                                        "exceptions"};
    return table >= 0 && table < FRAMES_PARQUET_NTABLES ? names[table] : "unknown";
}

FRAMES_PARQUET_DEF const frames_parquet_column *frames_parquet_table_columns(int table, uint32_t *n) {
#define FRAMES__PQ_TABLE(t) (*n = (uint32_t)(sizeof t / sizeof t[0]), t)
    switch (table) {
    case FRAMES_PARQUET_INSTRUCTIONS: return FRAMES__PQ_TABLE(frames__pq_instructions);
    case FRAMES_PARQUET_OPERANDS: return FRAMES__PQ_TABLE(frames__pq_operands);
    case FRAMES_PARQUET_SYSCALLS: return FRAMES__PQ_TABLE(frames__pq_syscalls);
    case FRAMES_PARQUET_MODULES: return FRAMES__PQ_TABLE(frames__pq_modules);
    case FRAMES_PARQUET_EXCEPTIONS: return FRAMES__PQ_TABLE(frames__pq_exceptions);
    default: *n = 0; return NULL;
    }
#undef FRAMES__PQ_TABLE
}

/* The export's constant strings (operand kinds and lists) with their
   frames__pq_short_key (a batch stores a key as the value), computed once. */
typedef struct frames__pq_word {
    const uint8_t *p;
    size_t n;
    uint64_t key;
} frames__pq_word;
enum { FRAMES__PQ_W_NONE, FRAMES__PQ_W_MEM, FRAMES__PQ_W_REG, FRAMES__PQ_W_PRE, FRAMES__PQ_W_POST,
       FRAMES__PQ_W_KEY, FRAMES__PQ_NWORDS };

/* An operand row waiting in the export's batch: what its columns take, copied out of
   the frame (a register name of up to 7 printable ASCII bytes, a value of 1 to 8 bytes
   as its integer); rows that do not fit go the row-by-row way (frames__pq_operand_row). */
typedef struct frames__pq_oprow {
    uint64_t frame, pc, tid, address, taint, value;
    uint64_t name;         /* frames__pq_short_key of the register name */
    uint32_t bits, value_size;
    uint8_t list, spec, has_pc, has_tid, has_taint, read, written, index, base;
} frames__pq_oprow;
/* Rows per batch: the operands' columns are filled a column at a time for up to this
   many rows (a column's buffers grown and counts added once), 72 bytes each. */
#define FRAMES__PQ_BATCH 128

struct frames_parquet_export {
    frames_parquet *t[FRAMES_PARQUET_NTABLES];
    frames__pq_word words[FRAMES__PQ_NWORDS];
    frames__pq_oprow ops[FRAMES__PQ_BATCH];
    uint32_t nops, oplimit;  /* rows in ops; a batch ends at oplimit rows (a page's end) */
    frames__pq_buf text;     /* a string made valid UTF-8 */
    frames_error err;
    void *alloc_ctx;
};

/* Rows a batch of the operands may take: up to the end of the current page or row
   group (where frames__pq_row_done marks or flushes), so that a batch's rows end as the
   rows one by one would. */
static uint32_t frames__pq_batch_limit(const frames_parquet *w) {
    uint64_t end = w->page_end < w->o.row_group_rows ? w->page_end : w->o.row_group_rows;
    uint64_t room = end > w->group_rows ? end - w->group_rows : 1;
    return room < FRAMES__PQ_BATCH ? (uint32_t)room : FRAMES__PQ_BATCH;
}

FRAMES_PARQUET_DEF void frames_parquet_export_abandon(frames_parquet_export *x) {
    int i;
    if (!x) return;
    for (i = 0; i < FRAMES_PARQUET_NTABLES; i++) frames_parquet_abandon(x->t[i]);
    FRAMES_FREE(x->text.p, x->alloc_ctx);
    FRAMES_FREE(x, x->alloc_ctx);
}

FRAMES_PARQUET_DEF int frames_parquet_export_open(frames_parquet_export **xp, const frames_sink *sinks,
                                          const frames_parquet_options *o, frames_error *err) {
    frames_parquet_export *x;
    void *a = o ? o->alloc_ctx : NULL;
    int i, rc;
    *xp = NULL;
    x = (frames_parquet_export *)FRAMES_MALLOC(sizeof *x, a);
    if (!x) return frames__pq_fail(err, FRAMES_E_NOMEM, "parquet: out of memory");
    memset(x, 0, sizeof *x);
    x->alloc_ctx = a;
    for (i = 0; i < FRAMES__PQ_NWORDS; i++) {
        static const char *const words[] = {"none", "mem", "reg", "pre", "post", "key"};
        x->words[i].p = (const uint8_t *)words[i];
        x->words[i].n = strlen(words[i]);
        x->words[i].key = frames__pq_short_key(x->words[i].p, x->words[i].n);
    }
    for (i = 0; i < FRAMES_PARQUET_NTABLES; i++) {
        uint32_t n;
        const frames_parquet_column *cols = frames_parquet_table_columns(i, &n);
        if (!sinks[i].write) continue;
        if ((rc = frames_parquet_open(&x->t[i], &sinks[i], cols, n, o, err)) < 0 ||
            (rc = frames_parquet_metadata(x->t[i], "frames.table", frames_parquet_table_name(i))) < 0) {
            frames_parquet_export_abandon(x);
            return rc;
        }
    }
    if (x->t[FRAMES_PARQUET_OPERANDS]) x->oplimit = frames__pq_batch_limit(x->t[FRAMES_PARQUET_OPERANDS]);
    *xp = x;
    return FRAMES_OK;
}

/* Names as valid UTF-8: a byte that is not part of a valid sequence becomes U+00XX, the
   code point that the \u00XX escape of docs/jsonl.md stands for. */
static int frames__pq_utf8(frames_parquet_export *x, frames_bytes s, const uint8_t **p, size_t *n) {
    size_t i = 0, k;
    uint8_t *o;
    while (i < s.len && s.ptr[i] < 0x80 && s.ptr[i] >= 0x20) i++;
    if (i == s.len) {   /* plain printable ASCII: no copy */
        *p = s.ptr;
        *n = s.len;
        return FRAMES_OK;
    }
    x->text.n = 0;
    if (frames__pq_reserve(&x->text, s.len * 2, x->alloc_ctx) < 0) return FRAMES_E_NOMEM;
    o = x->text.p;
    for (i = 0; i < s.len;) {
        uint8_t c = s.ptr[i];
        size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
        int ok = len && i + len <= s.len && !(c >= 0x80 && c < 0xc2) && c <= 0xf4;
        for (k = 1; ok && k < len; k++) ok = (s.ptr[i + k] & 0xc0) == 0x80;
        if (ok && len == 3) {   /* no overlongs, no surrogates */
            uint32_t cp = (uint32_t)(c & 15) << 12 | (uint32_t)(s.ptr[i + 1] & 63) << 6;
            ok = cp >= 0x800 && (cp < 0xd800 || cp > 0xdfff);
        }
        if (ok && len == 4) {
            uint32_t cp = (uint32_t)(c & 7) << 18 | (uint32_t)(s.ptr[i + 1] & 63) << 12;
            ok = cp >= 0x10000 && cp <= 0x10ffff;
        }
        if (ok) {
            memcpy(o + x->text.n, s.ptr + i, len);
            x->text.n += len;
            i += len;
        } else {
            o[x->text.n++] = (uint8_t)(0xc0 | c >> 6);
            o[x->text.n++] = (uint8_t)(0x80 | (c & 63));
            i++;
        }
    }
    *p = x->text.p;
    *n = x->text.n;
    return FRAMES_OK;
}

static int frames__pq_put_text(frames_parquet_export *x, frames_parquet *w, uint32_t col,
                               int shape, frames_bytes s) {
    const uint8_t *p;
    size_t n;
    if (frames__pq_utf8(x, s, &p, &n) < 0) return FRAMES_E_NOMEM;
    frames__pq_bytes_as(w, &w->cols[col], shape, p, n);
    return FRAMES_OK;
}

/* A constant string into column id of writer w. */
#define FRAMES__PQ_WORD(w, id, word) FRAMES__PQ_BYTES(w, id, (word)->p, (word)->n)

/* The end of a row of the export: every column was put (by the FRAMES__PQ_X puts). A
   row that ends neither a page nor a row group without a call. */
FRAMES__INLINE int frames__pq_row_done(frames_parquet *w) {
    uint64_t g = w->group_rows + 1;
    if (!w->oom && w->state == FRAMES__PQ_OPEN && g < w->o.row_group_rows && g != w->page_end) {
        w->row_puts = 0;   /* the public puts (syscalls, modules) count theirs */
        w->rows++;
        w->group_rows = g;
        return FRAMES_OK;
    }
    w->row_puts = w->ncols;
    return frames_parquet_row_end(w);
}

/* The put stmt for every row r of the batch's n rows. */
#define FRAMES__PQ_EACH_ROW(x, r, stmt)                                                      \
    do {                                                                                     \
        const frames__pq_oprow *r = (x)->ops, *r##_end = (x)->ops + n;                       \
        for (; r < r##_end; r++) stmt;                                                       \
    } while (0)

/* Room in column c for the levels and values of n rows of up to size bytes each. */
static int frames__pq_run_room(frames__pq_col *c, size_t n, size_t size, void *a) {
    if (c->maxdef && frames__pq_reserve(&c->def, n, a) < 0) return FRAMES_E_NOMEM;
    return frames__pq_reserve(&c->plain, n * size + 8, a);
}

/* The end of a run of n rows into column c, k of them values (the others nulls) taking
   bytes: the counts as n puts one by one leave them. */
FRAMES__INLINE void frames__pq_run_end(frames__pq_col *c, size_t n, size_t k, size_t bytes) {
    c->nlev += n;
    c->nval += k;
    c->nulls += n - k;
    c->plain.n += bytes;
    if (c->maxdef) c->def.n += n;
}

/* Column id for the batch's n rows r: where has, the value stored at p_ by the statement
   put (which moves p_ past it; up to size bytes, and 8 more may be written), else a null;
   the buffers grown once, the counts added once. */
#define FRAMES__PQ_RUN(x, w, id, r, has, size, put)                                         \
    do {                                                                                    \
        frames__pq_col *c_ = &(w)->cols[FRAMES__PQ_##id];                                   \
        uint8_t *p_, *p0_, *d_;                                                             \
        size_t k_ = 0;                                                                      \
        if (frames__pq_run_room(c_, n, size, (w)->o.alloc_ctx) < 0) {                       \
            (w)->oom = 1;                                                                   \
            break;                                                                          \
        }                                                                                   \
        p_ = p0_ = c_->plain.p + c_->plain.n;                                               \
        d_ = (int)FRAMES__PQ_SHAPE_##id == (int)FRAMES__PQ_OPT ? c_->def.p + c_->def.n : NULL; \
        FRAMES__PQ_EACH_ROW(x, r, {                                                         \
            int h_ = (has) != 0;                                                            \
            if ((int)FRAMES__PQ_SHAPE_##id == (int)FRAMES__PQ_OPT) *d_++ = (uint8_t)h_;     \
            if (h_) {                                                                       \
                put;                                                                        \
                k_++;                                                                       \
            }                                                                               \
        });                                                                                 \
        frames__pq_run_end(c_, n, k_, (size_t)(p_ - p0_));                                  \
    } while (0)

/* Fixed-width column id: the value expr. */
#define FRAMES__PQ_PLAIN_RUN(x, w, id, r, has, expr)                                        \
    FRAMES__PQ_RUN(x, w, id, r, has, FRAMES__PQ_WIDTH_##id, {                               \
        frames__put_le64(p_, (expr));                                                       \
        p_ += FRAMES__PQ_WIDTH_##id;                                                        \
    })

/* Byte-array column id: the value of up to 7 bytes whose frames__pq_short_key is expr
   (its bytes in place: one store after the length). */
#define FRAMES__PQ_KEY_RUN(x, w, id, r, has, expr)                                          \
    FRAMES__PQ_RUN(x, w, id, r, has, 4 + 7, {                                               \
        uint64_t key_ = (expr);                                                             \
        frames__put_le32(p_, (uint32_t)(key_ >> 56));                                       \
        frames__put_le64(p_ + 4, key_);                                                     \
        p_ += 4 + (key_ >> 56);                                                             \
    })

/* n nulls into optional column c. */
static void frames__pq_nulls(frames_parquet *w, frames__pq_col *c, size_t n) {
    if (frames__pq_reserve(&c->def, n, w->o.alloc_ctx) < 0) {
        w->oom = 1;
        return;
    }
    memset(c->def.p + c->def.n, 0, n);
    frames__pq_run_end(c, n, 0, 0);
}

/* The batch's rows into the operands table, a column at a time: the same values in
   the same order per column as row by row (columns do not depend on each other), so
   the same bytes. An error (the writer thread's, out of memory) is the batch's. */
static int frames__pq_ops_flush(frames_parquet_export *x) {
    static const uint8_t kinds[] = {FRAMES__PQ_W_NONE, FRAMES__PQ_W_MEM, FRAMES__PQ_W_REG, FRAMES__PQ_W_MEM};
    frames_parquet *w = x->t[FRAMES_PARQUET_OPERANDS];
    uint32_t n = x->nops;
    int rc;
    if (n == 0) return FRAMES_OK;
    x->nops = 0;
    if (w->state != FRAMES__PQ_OPEN) return frames_parquet_row_end(w);   /* its error */
    FRAMES__PQ_PLAIN_RUN(x, w, O_FRAME, r, 1, r->frame);
    FRAMES__PQ_PLAIN_RUN(x, w, O_PC, r, r->has_pc, r->pc);
    FRAMES__PQ_PLAIN_RUN(x, w, O_TID, r, r->has_tid, r->tid);
    FRAMES__PQ_KEY_RUN(x, w, O_LIST, r, 1, x->words[r->list].key);
    FRAMES__PQ_KEY_RUN(x, w, O_KIND, r, 1, x->words[kinds[r->spec & 3]].key);
    FRAMES__PQ_KEY_RUN(x, w, O_NAME, r, r->spec & FRAMES_REG, r->name);
    FRAMES__PQ_PLAIN_RUN(x, w, O_ADDRESS, r, r->spec & FRAMES_MEM, r->address);
    FRAMES__PQ_PLAIN_RUN(x, w, O_BITS, r, 1, r->bits);
    FRAMES__PQ_PLAIN_RUN(x, w, O_READ, r, 1, r->read);
    FRAMES__PQ_PLAIN_RUN(x, w, O_WRITTEN, r, 1, r->written);
    FRAMES__PQ_PLAIN_RUN(x, w, O_INDEX, r, 1, r->index);
    FRAMES__PQ_PLAIN_RUN(x, w, O_BASE, r, 1, r->base);
    FRAMES__PQ_PLAIN_RUN(x, w, O_TAINT, r, r->has_taint, r->taint);
    frames__pq_nulls(w, &w->cols[FRAMES__PQ_O_VALUE], n);
    FRAMES__PQ_PLAIN_RUN(x, w, O_VALUE_UINT, r, 1, r->value);
    FRAMES__PQ_PLAIN_RUN(x, w, O_VALUE_SIZE, r, 1, r->value_size);
    /* rows before the last end neither a page nor a row group (frames__pq_batch_limit) */
    w->rows += n - 1;
    w->group_rows += n - 1;
    rc = frames__pq_row_done(w);
    x->oplimit = frames__pq_batch_limit(w);
    return rc;
}

/* The row of one operand that does not fit a batch row, with the writer's inline puts. */
static FRAMES__NOINLINE int frames__pq_operand_row(frames_parquet_export *x, uint64_t index,
                                                   const uint64_t *pc, const uint64_t *tid,
                                                   int list, const frames_operand *op,
                                                   int value_info) {
    frames_parquet *w = x->t[FRAMES_PARQUET_OPERANDS];
    static const uint8_t kinds[] = {FRAMES__PQ_W_NONE, FRAMES__PQ_W_MEM, FRAMES__PQ_W_REG, FRAMES__PQ_W_MEM};
    const uint8_t *vp = op->value.ptr;
    size_t vn = op->value.len;
    int rc;
    if ((rc = frames__pq_ops_flush(x)) < 0) return rc;   /* the rows before it first */
    if (w->state != FRAMES__PQ_OPEN) return frames_parquet_row_end(w);   /* its error, no more values */
    FRAMES__PQ_INT(w, O_FRAME, index);
    FRAMES__PQ_OPT_U64(w, O_PC, pc != NULL, pc ? *pc : 0);
    FRAMES__PQ_OPT_U64(w, O_TID, tid != NULL, tid ? *tid : 0);
    FRAMES__PQ_WORD(w, O_LIST, &x->words[list]);
    FRAMES__PQ_WORD(w, O_KIND, &x->words[kinds[op->spec & 3]]);
    if (op->spec & FRAMES_REG) {
        if (FRAMES__PQ_TEXT(x, w, O_NAME, op->name) < 0) return FRAMES_E_NOMEM;
    } else {
        frames__pq_null_at(w, &w->cols[FRAMES__PQ_O_NAME]);
    }
    FRAMES__PQ_OPT_U64(w, O_ADDRESS, (op->spec & FRAMES_MEM) != 0, op->address);
    FRAMES__PQ_INT(w, O_BITS, (uint32_t)op->bit_length);
    FRAMES__PQ_INT(w, O_READ, !value_info && op->read);
    FRAMES__PQ_INT(w, O_WRITTEN, !value_info && op->written);
    FRAMES__PQ_INT(w, O_INDEX, !value_info && op->index);
    FRAMES__PQ_INT(w, O_BASE, !value_info && op->base);
    FRAMES__PQ_OPT_U64(w, O_TAINT, (op->taint.set & FRAMES_TAINT_ID) != 0, op->taint.id);
    /* one copy of each value (docs/parquet.md): an integer when it has 1 to 8 bytes */
    if (vn >= 1 && vn <= 8) {
        frames__pq_null_at(w, &w->cols[FRAMES__PQ_O_VALUE]);
        FRAMES__PQ_INT(w, O_VALUE_UINT, frames__value_u64(vp, vn));
    } else {
        FRAMES__PQ_BYTES(w, O_VALUE, vp, vn);
        frames__pq_null_at(w, &w->cols[FRAMES__PQ_O_VALUE_UINT]);
    }
    FRAMES__PQ_INT(w, O_VALUE_SIZE, (uint32_t)vn);
    rc = frames__pq_row_done(w);
    x->oplimit = frames__pq_batch_limit(w);
    return rc;
}

/* A register name the batch can hold, as its frames__pq_short_key (its bytes in place):
   up to 7 printable ASCII bytes (valid UTF-8 as it is); else 0. */
FRAMES__INLINE int frames__pq_batch_name(frames_bytes s, uint64_t *key) {
    uint64_t k, m;
    if (s.len > 7) return 0;
    k = frames__pq_short_key(s.ptr, s.len);
    m = ((uint64_t)1 << (8 * s.len)) - 1;   /* the name's bytes */
    *key = k;
    /* each byte below 0x80 and at least 0x20: plus 0x60, at least 0x80 (no carries
       between bytes below 0x80) */
    k &= m;
    m &= 0x8080808080808080ull;
    return (k & m) == 0 && ((k + (0x6060606060606060ull & (m >> 2 | m >> 1))) & m) == m;
}

/* The row of one operand: into the batch when it fits (the export's hot path). */
FRAMES__INLINE int frames__pq_operand(frames_parquet_export *x, uint64_t index, const uint64_t *pc,
                                      const uint64_t *tid, int list, const frames_operand *op,
                                      int value_info) {
    frames__pq_oprow *r;
    size_t vn = op->value.len;
    uint64_t name = 0;
    if (vn < 1 || vn > 8 || ((op->spec & FRAMES_REG) && !frames__pq_batch_name(op->name, &name)))
        return frames__pq_operand_row(x, index, pc, tid, list, op, value_info);
    r = &x->ops[x->nops++];
    r->frame = index;
    r->has_pc = pc != NULL;
    r->pc = pc ? *pc : 0;
    r->has_tid = tid != NULL;
    r->tid = tid ? *tid : 0;
    r->address = op->address;
    r->has_taint = (op->taint.set & FRAMES_TAINT_ID) != 0;
    r->taint = op->taint.id;
    r->value = frames__value_u64(op->value.ptr, vn);
    r->value_size = (uint32_t)vn;
    r->bits = (uint32_t)op->bit_length;
    r->list = (uint8_t)list;
    r->spec = op->spec;
    r->name = name;
    r->read = !value_info && op->read;
    r->written = !value_info && op->written;
    r->index = !value_info && op->index;
    r->base = !value_info && op->base;
    return x->nops >= x->oplimit ? frames__pq_ops_flush(x) : FRAMES_OK;
}

static int frames__pq_std(frames_parquet_export *x, const frames_std_frame *s, uint64_t index) {
    frames_parquet *w = x->t[FRAMES_PARQUET_INSTRUCTIONS];
    uint32_t i;
    int rc;
    if (w && w->state != FRAMES__PQ_OPEN) return frames_parquet_row_end(w);
    if (w) {
        FRAMES__PQ_INT(w, I_FRAME, index);
        FRAMES__PQ_INT(w, I_PC, s->address);
        FRAMES__PQ_INT(w, I_TID, s->thread_id);
        FRAMES__PQ_BYTES(w, I_BYTES, s->rawbytes.ptr, s->rawbytes.len);
        FRAMES__PQ_INT(w, I_LENGTH, (uint32_t)s->rawbytes.len);
        if (!s->has_mode) frames__pq_null_at(w, &w->cols[FRAMES__PQ_I_MODE]);
        else if (FRAMES__PQ_TEXT(x, w, I_MODE, s->mode) < 0) return FRAMES_E_NOMEM;
        if ((rc = frames__pq_row_done(w)) < 0) return rc;
    }
    if (!x->t[FRAMES_PARQUET_OPERANDS]) return FRAMES_OK;
    for (i = 0; i < s->npre; i++)
        if ((rc = frames__pq_operand(x, index, &s->address, &s->thread_id, FRAMES__PQ_W_PRE, &s->pre[i], 0)) < 0)
            return rc;
    for (i = 0; i < s->npost; i++)
        if ((rc = frames__pq_operand(x, index, &s->address, &s->thread_id, FRAMES__PQ_W_POST, &s->post[i], 0)) < 0)
            return rc;
    return FRAMES_OK;
}

static int frames__pq_key(frames_parquet_export *x, const frames_key_frame *k, uint64_t index) {
    uint32_t i, j;
    int rc;
    if (!x->t[FRAMES_PARQUET_OPERANDS]) return FRAMES_OK;
    for (i = 0; i < k->count; i++) {
        const frames_tagged_values *t = &k->lists[i];
        const uint64_t *tid = (t->tag_set & FRAMES_TAG_THREAD_ID) ? &t->thread_id : NULL;
        for (j = 0; j < t->count; j++)
            if ((rc = frames__pq_operand(x, index, NULL, tid, FRAMES__PQ_W_KEY,
                                         &t->values[j], 1)) < 0)
                return rc;
    }
    return FRAMES_OK;
}

static int frames__pq_other(frames_parquet_export *x, const frames_frame *f, int kind,
                            uint64_t index) {
    frames_parquet *w;
    if (kind == FRAMES_KIND_SYSCALL && (w = x->t[FRAMES_PARQUET_SYSCALLS]) != NULL) {
        frames_parquet_put_i64(w, FRAMES__PQ_S_FRAME, (int64_t)index);
        frames_parquet_put_u64(w, FRAMES__PQ_S_PC, f->syscall.address);
        frames_parquet_put_u64(w, FRAMES__PQ_S_TID, f->syscall.thread_id);
        frames_parquet_put_u64(w, FRAMES__PQ_S_NUMBER, f->syscall.number);
        frames_parquet_put_list_i64(w, FRAMES__PQ_S_ARGS, f->syscall.args, f->syscall.nargs);
        return frames__pq_row_done(w);
    }
    if (kind == FRAMES_KIND_MODLOAD && (w = x->t[FRAMES_PARQUET_MODULES]) != NULL) {
        frames_parquet_put_i64(w, FRAMES__PQ_M_FRAME, (int64_t)index);
        if (FRAMES__PQ_TEXT(x, w, M_NAME, f->modload.module_name) < 0)
            return FRAMES_E_NOMEM;
        frames_parquet_put_u64(w, FRAMES__PQ_M_LOW, f->modload.low_address);
        frames_parquet_put_u64(w, FRAMES__PQ_M_HIGH, f->modload.high_address);
        return frames__pq_row_done(w);
    }
    if (kind == FRAMES_KIND_EXCEPTION && (w = x->t[FRAMES_PARQUET_EXCEPTIONS]) != NULL) {
        const frames_exception_frame *e = &f->exception;
        frames_parquet_put_i64(w, FRAMES__PQ_E_FRAME, (int64_t)index);
        frames_parquet_put_u64(w, FRAMES__PQ_E_NUMBER, e->number);
        FRAMES__PQ_OPT_U64(w, E_TID, e->has_thread_id, e->thread_id);
        FRAMES__PQ_OPT_U64(w, E_FROM, e->has_from_addr, e->from_addr);
        FRAMES__PQ_OPT_U64(w, E_TO, e->has_to_addr, e->to_addr);
        return frames__pq_row_done(w);
    }
    return FRAMES_OK;
}

static int frames__pq_export_error(frames_parquet_export *x, int rc) {
    int i;
    x->err.code = 0;
    for (i = 0; i < FRAMES_PARQUET_NTABLES; i++)
        if (x->t[i] && x->t[i]->err.code) {
            x->err = x->t[i]->err;
            return rc;
        }
    return frames__pq_fail(&x->err, rc, "parquet: %s", frames_strerror(rc));
}

FRAMES_PARQUET_DEF int frames_parquet_export_add(frames_parquet_export *x, const frames_frame *f,
                                         uint64_t index) {
    uint32_t opts = f->present;
    int rc = FRAMES_OK;
    if (!opts && f->kind >= FRAMES_KIND_STD && f->kind <= FRAMES_KIND_KEY) opts = 1u << f->kind;
    /* every option of a (malformed) frame with several, as frames dump --jsonl */
    if (opts & (1u << FRAMES_KIND_STD)) rc = frames__pq_std(x, &f->std, index);
    if (rc == FRAMES_OK && (opts & (1u << FRAMES_KIND_SYSCALL)))
        rc = frames__pq_other(x, f, FRAMES_KIND_SYSCALL, index);
    if (rc == FRAMES_OK && (opts & (1u << FRAMES_KIND_EXCEPTION)))
        rc = frames__pq_other(x, f, FRAMES_KIND_EXCEPTION, index);
    if (rc == FRAMES_OK && (opts & (1u << FRAMES_KIND_MODLOAD)))
        rc = frames__pq_other(x, f, FRAMES_KIND_MODLOAD, index);
    if (rc == FRAMES_OK && (opts & (1u << FRAMES_KIND_KEY))) rc = frames__pq_key(x, &f->key, index);
    if (rc < 0) {
        frames__pq_export_error(x, rc);
        x->err.frame = index;
    }
    return rc;
}

FRAMES_PARQUET_DEF void frames_parquet_export_rows(const frames_parquet_export *x, uint64_t *rows) {
    int i;
    for (i = 0; i < FRAMES_PARQUET_NTABLES; i++) rows[i] = x->t[i] ? x->t[i]->rows : 0;
    rows[FRAMES_PARQUET_OPERANDS] += x->nops;   /* the batch's rows are written at the close */
}

FRAMES_PARQUET_DEF const frames_error *frames_parquet_export_error(const frames_parquet_export *x) {
    return &x->err;
}

FRAMES_PARQUET_DEF int frames_parquet_export_close(frames_parquet_export *x, frames_error *err) {
    int i, rc = frames__pq_ops_flush(x);   /* the batch's rows first */
    if (rc < 0) {
        frames__pq_export_error(x, rc);
        if (err) *err = x->err;
    }
    for (i = 0; i < FRAMES_PARQUET_NTABLES; i++) {
        int r;
        if (!x->t[i]) continue;
        r = frames_parquet_finish(x->t[i]);
        if (r < 0 && rc == FRAMES_OK) {
            rc = r;
            if (err) *err = x->t[i]->err;
        }
    }
    frames_parquet_export_abandon(x);
    return rc;
}

#ifdef __cplusplus
}
#endif

#endif /* FRAMES_PARQUET_IMPLEMENTATION_INCLUDED */
#endif /* FRAMES_PARQUET_IMPLEMENTATION || FRAMES_ALL_IMPLEMENTATION */

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
