/* frames_query.h - a trace-db compatible query engine over frames and trace-db traces.
   Single-header C99 library (also compiles as C++), built on frames.h. MIT licence.

   ---------------------------------------------------------------------------------------
   WHAT IT IS

   GrammaTech trace-db's query model (free variables typed by trace types, a hard
   predicate, soft predicates, pick mode, statement filter, dedup) with its exact
   semantics, over two inputs:
   - trace-db binary traces (name/type dictionaries, every tag and type format, blobs,
     BUFFER_SIZE records and the memory map behind `v/size`), read by this header;
   - BAP frames traces through frames.h: a point is a std_frame, its statement the
     instruction address, its variables the operands of the pre and post lists.
   The format is detected from the file. Queries are compiled once and run many times;
   results stream to a callback in trace order, also when several threads evaluate
   chunks of the trace. Nothing is allocated per point, Cartesian products are never
   materialised, pick mode does not scan the trace.
   See docs/query.md for the language, the semantics and the differences from trace-db.

   ---------------------------------------------------------------------------------------
   USAGE

   In exactly one C or C++ file (frames.h's implementation may live in the same file):

       #define FRAMES_QUERY_IMPLEMENTATION
       #include "frames_query.h"

   A callback that prints each result:

       static int print_result(void *ctx, const fq_result *r) {
           char line[4096];
           (void)ctx;
           fq_format_result(r, FQ_LIST_TRACEDB, line, sizeof line);
           puts(line); return 0;                                  // nonzero stops
       }

   A query over a trace-db trace:

       fq_trace *t; fq_query *q; fq_plan *p; frames_error err; uint64_t n;
       if (fq_trace_open_path(&t, "small.trace", NULL, &err) < 0) die(err.message);
       fq_query_open(&q, NULL, NULL);
       fq_query_var(q, "a", "int");                                 // a : int
       if (fq_query_where_text(q, "(> (v/value a) 500)", &err) < 0) die(err.message);
       if (fq_compile(&p, q, t, &err) < 0) die(err.message);
       fq_run(p, NULL, print_result, NULL, &n, &err);               // in trace order
       fq_plan_close(p); fq_query_close(q); fq_trace_close(t);

   The same predicate without text:
       fq_node a = fq_access(q, FQ_OP_VALUE, 0);
       fq_query_where(q, fq_binary(q, FQ_OP_GT, a, fq_const_uint(q, 500)));

   ---------------------------------------------------------------------------------------
   OPTIONS (#define before including the implementation)

   FRAMES_QUERY_NO_THREADS   no pthreads: fq_run uses the calling thread only (automatic
                             on _WIN32)
   FRAMES_QUERY_STATIC       this header's functions static (frames.h's too if not yet included)
   FRAMES_QUERY_DEF          their linkage (default FRAMES_DEF)
   Allocation goes through FRAMES_MALLOC/REALLOC/FREE when they are defined (see frames.h),
   with the alloc_ctx given to fq_query_open / fq_open_options.

   ---------------------------------------------------------------------------------------
   API OVERVIEW

   Traces     fq_trace_open_path / _memory, fq_trace_load, fq_trace_info_get,
              fq_trace_name / _type_name, fq_trace_close
   Queries    fq_query_open / _close, fq_query_var, fq_query_where / _soft (+ _text),
              fq_parse, node builders (fq_const_*, fq_access, fq_point, fq_distinct,
              fq_not, fq_binary, fq_nary), filters (fq_query_statement, _pc_range,
              _thread), fq_query_flags, fq_query_error
   Running    fq_compile, fq_run (+ fq_run_options_default), fq_pick_point, fq_plan_close
   Output     fq_format_result (trace-db listing, C API listing, JSON line)
   Index      fq_index_build / _save (a persistent index of a trace; fq_index_progress
              reports their progress), fq_index_open / _attach (use one: no indexing
              pass, filters and picks visit only their points), fq_index_info_get

   Threads: a trace and a plan may be shared by several fq_run calls at once; a query
   object is not thread-safe. Callbacks run on the thread that called fq_run.

   Language (text form of the builders; trace-db's s-expressions plus extensions):
     predicates  (and P...) (or P...) (not P) (distinct-vars a b)
                 (> X Y) (>= X Y) (< X Y) (<= X Y) (= X Y) (equal X Y) (!= X Y)
     values      (v/value a) (v/size a)                       trace-db
                 (v/addr a) (v/name a) (v/bits a)             extensions
                 (v/read a) (v/written a) (v/post a)          flags: 0/1, or predicates
                 (pc) (tid) (index)                           the point
                 (+ X Y) (- X Y) (* X Y) (/ X Y)              trace-db arithmetic
                 (% X Y) (& X Y) (| X Y) (^ X Y) (<< X Y) (>> X Y)   extensions
                 42 -7 0x1f 2.5 1e3 "RAX"                     literals
   Values are exact integers, doubles, strings or invalid; see docs/query.md.
   ---------------------------------------------------------------------------------------
   SECTIONS (in file order; each starts with a banner of '=' or '-' lines,
   the title on the line below it: grep -n '^   TITLE' finds it)

   Traces
   Persistent index (a file next to the trace; docs/query.md, "The index")
   Queries: free variables, predicates, filters
   Compiling and running
   Output
   IMPLEMENTATION
     errors, memory
     queries and nodes
     the text language
     traces
     building
     saving and attaching
     compiling
     points and evaluation
     running: workers
     running
     running: column runs (postings of an index, read as columns)
     running: the column kernel
     running: results (bindings, dedup, delivery in trace order)
     running: work items and threads
     running: pick mode
     running: fq_run
     output
*/

#ifndef FRAMES_QUERY_H_INCLUDED
#define FRAMES_QUERY_H_INCLUDED

#if defined(FRAMES_QUERY_STATIC) && !defined(FRAMES_STATIC) && !defined(FRAMES_H_INCLUDED)
#define FRAMES_STATIC   /* frames.h comes with it: one private copy of both */
#endif
#include "frames.h"
#if defined(FRAMES_QUERY_STATIC) && !defined(FRAMES_QUERY_DEF)   /* even after a shared frames.h */
#define FRAMES_QUERY_DEF FRAMES__STATIC_DEF
#elif !defined(FRAMES_QUERY_DEF)
#define FRAMES_QUERY_DEF FRAMES_DEF
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Errors: frames_error with the codes of frames.h's registry; this header's own are
   FQ_E_SYNTAX (query text; offset = byte position in the text), FQ_E_QUERY (well-formed
   but wrong: unknown variable or type, type error, ...) and FQ_E_STALE (an index of
   another trace). frames_strerror names them all. */

/* ======================================================================================
   Traces
   ====================================================================================== */

enum { FQ_TRACE_AUTO = 0, FQ_TRACE_FRAMES = 1, FQ_TRACE_TRACEDB = 2 };

/* fq_open_options.flags */
#define FQ_OPEN_STRICT 1u        /* trace-db: any damage fails the open (as trace-db does);
                                    default: keep every complete point, report the cut */
#define FQ_OPEN_INHERIT_STMT 2u  /* trace-db: a point without STATEMENT_ID inherits the
                                    previous point's statement (trace-db); default: 0 */

typedef struct fq_open_options {
    int format;                 /* FQ_TRACE_AUTO (default), _FRAMES or _TRACEDB */
    uint32_t flags;             /* FQ_OPEN_* */
    uint32_t index_stride;      /* trace-db: points per index entry (default 256) */
    const frames_reader_options *frames;   /* options for frames traces (NULL: defaults) */
    void *alloc_ctx;
} fq_open_options;

FRAMES_QUERY_DEF void fq_open_options_default(fq_open_options *o);

typedef struct fq_trace fq_trace;

/* Open a trace: a file (mapped; "-" reads standard input, FIFOs are read to the end) or
   a caller buffer that must outlive the trace. trace-db traces: the header is read here;
   the points are indexed (positions, the memory map, buffer sizes of pointer variables)
   in one pass that queries drive as they need it, or fq_trace_load. */
FRAMES_QUERY_DEF int fq_trace_open_path(fq_trace **t, const char *path, const fq_open_options *o,
                                  frames_error *err);
FRAMES_QUERY_DEF int fq_trace_open_memory(fq_trace **t, const void *data, size_t size,
                                    const fq_open_options *o, frames_error *err);
FRAMES_QUERY_DEF void fq_trace_close(fq_trace *t);

typedef struct fq_trace_info {
    int format;                 /* FQ_TRACE_FRAMES or FQ_TRACE_TRACEDB */
    int complete;               /* the whole trace is indexed: the fields below are final
                                   (trace-db traces are indexed on demand: fq_trace_load) */
    uint64_t points;            /* trace-db: complete points; frames: frames (any kind) */
    uint64_t file_size;
    /* trace-db: the file ends inside a point, or a point is damaged: every complete
       point before it is kept. frames: the reader's truncation report. */
    int truncated;              /* ends inside a point (or the last point has no END) */
    int damaged;                /* bad tag, name/type index, size... (message says) */
    uint64_t cut_offset;        /* offset of the first point not kept */
    char message[200];          /* readable description of the cut, or "" */
    uint32_t nnames, ntypes;    /* trace-db dictionaries */
    frames_reader *reader;      /* frames: the reader (random access; do not close) */
} fq_trace_info;

FRAMES_QUERY_DEF void fq_trace_info_get(fq_trace *t, fq_trace_info *info);
/* Index a trace-db trace completely now (queries index what they need as they go;
   pick mode, and fq_trace_info's totals, need all of it). Thread-safe. */
FRAMES_QUERY_DEF int fq_trace_load(fq_trace *t, frames_error *err);
/* trace-db dictionaries (NULL when out of range or for frames traces). */
FRAMES_QUERY_DEF const char *fq_trace_name(const fq_trace *t, uint32_t name_index);
FRAMES_QUERY_DEF const char *fq_trace_type_name(const fq_trace *t, uint32_t type_index);

/* ======================================================================================
   Persistent index (a file next to the trace; docs/query.md, "The index")

   Where every point starts, the buffer size of every trace-db pointer variable, for
   every statement (frames: instruction address) the points that have it, and for
   trace-db traces every variable's value in columns by type, in (statement, point)
   order. With an index, a trace-db query binds its free variables from the columns
   without reading the trace (a listing then decodes the points it delivers, unless
   fq_run_options.bindings_only says the caller reads only the bindings), statement
   and address filters read only the points they select, and a pick decodes one point.
   It is bound to one trace: its size, modification time, a hash of its header and of 64
   sampled 4 KiB blocks; an index that does not match is refused (FQ_E_STALE), a damaged
   one too (FRAMES_E_FORMAT), and nothing read from it is used without a bounds check.
   Results are the same with and without an index. Building holds the whole index in
   memory plus about 36 bytes per point besides the trace's own in-memory index (of a
   mapped trace, only a window of pages: they leave the process behind each pass).
   ====================================================================================== */

typedef struct fq_index_info {
    uint64_t points;       /* points (frames: frames of any kind) */
    uint64_t candidates;   /* points in the posting lists (frames: std_frames) */
    uint64_t statements;   /* distinct statements / instruction addresses */
    uint64_t pointers;     /* trace-db pointer variables (buffer sizes stored) */
    uint64_t bytes;        /* size of the index */
    uint64_t records;      /* trace-db: variables stored in the value columns */
} fq_index_info;

/* Write the index of t to sink->write (it indexes the whole trace first). A trace whose
   point cannot be decoded (frames) cannot be indexed. info may be NULL. */
FRAMES_QUERY_DEF int fq_index_build(fq_trace *t, const frames_sink *sink, fq_index_info *info,
                              frames_error *err);
/* Progress of fq_index_build / fq_index_save on t (they walk a large trace for seconds):
   fn is called now and then on the calling thread with the work done out of total
   (arbitrary units, never decreasing; done == total at the end). fn NULL: none. */
FRAMES_QUERY_DEF void fq_index_progress(fq_trace *t, void (*fn)(void *ctx, uint64_t done, uint64_t total), void *ctx);
/* The same into a file, atomically: a temporary file in the same directory, renamed to
   index_path once complete (an existing index is replaced only by a complete one); an
   index_path that exists but is not a regular file (a device, a FIFO) is FRAMES_E_IO. */
FRAMES_QUERY_DEF int fq_index_save(fq_trace *t, const char *index_path, fq_index_info *info,
                             frames_error *err);
/* Use an index for every later query on t: a file (mapped) or a caller buffer that must
   outlive t. Fails with FRAMES_E_IO (cannot read it), FQ_E_STALE or FRAMES_E_FORMAT, and
   t stays usable without an index. Call it before running queries on t. */
FRAMES_QUERY_DEF int fq_index_open(fq_trace *t, const char *index_path, frames_error *err);
FRAMES_QUERY_DEF int fq_index_attach(fq_trace *t, const void *data, size_t size, frames_error *err);
/* The attached index: 1 and *info, or 0 when t has none. */
FRAMES_QUERY_DEF int fq_index_info_get(const fq_trace *t, fq_index_info *info);

/* ======================================================================================
   Queries: free variables, predicates, filters
   ====================================================================================== */

/* Node kinds. 0-19 are trace-db's predicate codes (kind 1, a variable reference, is not
   a node here: accessors take the variable index). */
enum {
    FQ_OP_TRUE = 0,
    FQ_OP_SIZE = 2, FQ_OP_VALUE = 3, FQ_OP_DISTINCT = 4,
    FQ_OP_INT = 5, FQ_OP_UINT = 6, FQ_OP_FLOAT = 7,
    FQ_OP_AND = 8, FQ_OP_OR = 9, FQ_OP_NOT = 10,
    FQ_OP_GT = 11, FQ_OP_GE = 12, FQ_OP_LT = 13, FQ_OP_LE = 14, FQ_OP_EQ = 15,
    FQ_OP_ADD = 16, FQ_OP_SUB = 17, FQ_OP_MUL = 18, FQ_OP_DIV = 19,
    /* extensions */
    FQ_OP_NE = 20, FQ_OP_MOD = 21, FQ_OP_BAND = 22, FQ_OP_BOR = 23, FQ_OP_BXOR = 24,
    FQ_OP_SHL = 25, FQ_OP_SHR = 26,
    FQ_OP_ADDR = 27, FQ_OP_NAME = 28, FQ_OP_READ = 29, FQ_OP_WRITTEN = 30,
    FQ_OP_POST = 31, FQ_OP_BITS = 32,
    FQ_OP_PC = 33, FQ_OP_TID = 34, FQ_OP_INDEX = 35,
    FQ_OP_STR = 36,
    FQ_OP_COUNT_ = 37
};

/* fq_query_flags */
#define FQ_DEDUP 1u                  /* first result per (statement, bound names and types),
                                        as trace-db's C API with keep_duplicate_bindings = 0 */
#define FQ_COMPAT_FLOAT32 2u         /* v/value of an 8-byte FLOAT reads its first 4 bytes as
                                        a float, as trace-db does (its defect; see q12) */
#define FQ_COMPAT_DISTINCT_VALUE 4u  /* distinct-vars compares variable records (name, type,
                                        value, size) as trace-db does; default: positions */

#define FQ_MAX_VARS 64

typedef int fq_node;   /* handle of a node in its query; negative after an error */
typedef struct fq_query fq_query;

/* An empty query (*q NULL and FRAMES_E_NOMEM when out of memory). */
FRAMES_QUERY_DEF int fq_query_open(fq_query **q, void *alloc_ctx, frames_error *err);
FRAMES_QUERY_DEF void fq_query_close(fq_query *q);

/* Declare free variable `name` (returns its index, 0-based, or a negative code).
   `types` is a comma-separated list of allowed types: trace-db type names ("int",
   "unsigned int", "char*"; every type index with that spelling) or, for frames traces,
   operand types reg8 reg16 reg32 reg64 ... mem8 ... memN, wildcards reg* mem*; "*" allows
   every type in both formats. Names are resolved by fq_compile. */
FRAMES_QUERY_DEF int fq_query_var(fq_query *q, const char *name, const char *types);

/* Node builders. Type errors are reported here (negative handle; fq_query_error). */
FRAMES_QUERY_DEF fq_node fq_const_int(fq_query *q, int64_t v);
FRAMES_QUERY_DEF fq_node fq_const_uint(fq_query *q, uint64_t v);
FRAMES_QUERY_DEF fq_node fq_const_float(fq_query *q, double v);
FRAMES_QUERY_DEF fq_node fq_const_str(fq_query *q, const char *s, size_t len);
/* FQ_OP_VALUE, _SIZE, _ADDR, _NAME, _READ, _WRITTEN, _POST, _BITS of free variable `var` */
FRAMES_QUERY_DEF fq_node fq_access(fq_query *q, int op, int var);
/* FQ_OP_PC, _TID, _INDEX */
FRAMES_QUERY_DEF fq_node fq_point(fq_query *q, int op);
FRAMES_QUERY_DEF fq_node fq_distinct(fq_query *q, int var_a, int var_b);
FRAMES_QUERY_DEF fq_node fq_not(fq_query *q, fq_node a);
/* comparisons and arithmetic */
FRAMES_QUERY_DEF fq_node fq_binary(fq_query *q, int op, fq_node a, fq_node b);
/* FQ_OP_AND, FQ_OP_OR (n may be 0) */
FRAMES_QUERY_DEF fq_node fq_nary(fq_query *q, int op, const fq_node *args, size_t n);

/* Parse one expression (predicate or value) in the query's variables. Errors:
   FQ_E_SYNTAX / FQ_E_QUERY with err->offset = byte position, message with the column. */
FRAMES_QUERY_DEF int fq_parse(fq_query *q, const char *text, fq_node *out, frames_error *err);

/* The hard predicate (default: true) and the soft predicates. */
FRAMES_QUERY_DEF int fq_query_where(fq_query *q, fq_node pred);
FRAMES_QUERY_DEF int fq_query_soft(fq_query *q, fq_node pred);
FRAMES_QUERY_DEF int fq_query_where_text(fq_query *q, const char *text, frames_error *err);
FRAMES_QUERY_DEF int fq_query_soft_text(fq_query *q, const char *text, frames_error *err);

/* Point filters (all that are given must hold):
   statement: (statement & mask) == stmt, trace-db's filter (mask = stmt = 0: all);
   pc ranges: the statement / address lies in one of the ranges [lo, hi] (inclusive);
   threads:   frames: the thread id is one of those given. */
FRAMES_QUERY_DEF void fq_query_statement(fq_query *q, uint64_t mask, uint64_t stmt);
FRAMES_QUERY_DEF int fq_query_pc_range(fq_query *q, uint64_t lo, uint64_t hi);
FRAMES_QUERY_DEF int fq_query_thread(fq_query *q, uint64_t tid);
FRAMES_QUERY_DEF void fq_query_flags(fq_query *q, uint32_t flags);   /* FQ_DEDUP | FQ_COMPAT_* */

/* First builder error (code 0 if none). */
FRAMES_QUERY_DEF const frames_error *fq_query_error(const fq_query *q);

/* ======================================================================================
   Compiling and running
   ====================================================================================== */

typedef struct fq_plan fq_plan;

/* Resolve types against the trace, check and lay out the predicates. The plan is
   independent of the query afterwards and immutable: several fq_run calls may use it
   at the same time. The trace must outlive the plan. */
FRAMES_QUERY_DEF int fq_compile(fq_plan **p, const fq_query *q, fq_trace *t, frames_error *err);
FRAMES_QUERY_DEF void fq_plan_close(fq_plan *p);

/* value formats (trace-db's enum type_format; frames operands: UNSIGNED up to 64 bits,
   BLOB when wider or empty) */
enum { FQ_TYPE_UNSIGNED = 0, FQ_TYPE_SIGNED = 1, FQ_TYPE_FLOAT = 2, FQ_TYPE_POINTER = 3,
       FQ_TYPE_BLOB = 4 };

/* fq_binding.flags */
#define FQ_B_HAS_SIZE 1u   /* trace-db: size is the pointer's buffer size (v/size) */
#define FQ_B_READ 2u       /* frames: operand_usage.read */
#define FQ_B_WRITTEN 4u    /* frames: operand_usage.written */
#define FQ_B_POST 8u       /* frames: from operand_post_list */
#define FQ_B_MEM 16u       /* frames: memory operand (addr set) */
#define FQ_B_REG 32u       /* frames: register operand */

typedef struct fq_binding {
    uint32_t var;          /* free variable index */
    uint32_t slot;         /* position of the variable/operand in its point (frames: pre
                              list first, then post list) */
    int format;            /* FQ_TYPE_* */
    uint32_t flags;        /* FQ_B_* */
    frames_bytes name;     /* variable or register name (empty for memory operands) */
    frames_bytes type;     /* type name ("int", "reg32", ...) */
    uint32_t name_index;   /* trace-db dictionary indices (UINT32_MAX for frames) */
    uint32_t type_index;
    uint32_t bits;         /* width: type size x 8, operand bit_length */
    uint32_t mem_index;    /* frames: k of the k-th memory operand of its list */
    uint64_t u;            /* UNSIGNED / POINTER value; SIGNED as two's complement */
    int64_t i;             /* SIGNED value */
    double f;              /* FLOAT value (4-byte floats widened) */
    uint64_t size;         /* buffer size when FQ_B_HAS_SIZE */
    uint64_t addr;         /* memory operand address when FQ_B_MEM */
    frames_bytes bytes;    /* the raw value bytes (blob contents, operand value) */
    char type_buf[24];     /* storage behind `type` for frames operands */
} fq_binding;

typedef struct fq_buffer_size {
    uint64_t address, size;
} fq_buffer_size;

/* A result. Everything it points to is valid during the callback only. */
typedef struct fq_result {
    uint64_t index;        /* 0-based number of the result (after dedup) */
    uint64_t counter;      /* point: trace-db point counter / frames frame index */
    uint64_t stmt;         /* statement id / instruction address */
    uint64_t tid;          /* frames: thread id */
    int has_tid;
    int format;            /* FQ_TRACE_TRACEDB / FQ_TRACE_FRAMES */
    uint32_t nbind;        /* = number of free variables */
    const fq_binding *bind;
    const char *const *var_names;   /* free variable names, var_names[bind[i].var] */
    uint32_t naux;         /* trace-db AUXILIARY values of the point */
    const uint64_t *aux;
    uint32_t nbuf;         /* trace-db BUFFER_SIZE entries of the point */
    const fq_buffer_size *buf;
    const frames_frame *frame;   /* frames: the decoded frame */
} fq_result;

/* Return nonzero to stop the run: fq_run then returns FRAMES_E_STOPPED (the results
   delivered before stay valid; *nresults counts them). */
typedef int (*fq_result_fn)(void *ctx, const fq_result *r);

typedef struct fq_run_options {
    unsigned threads;      /* worker threads; 0 or 1: the calling thread only */
    uint64_t limit;        /* stop after this many results (0: no limit) */
    int pick;              /* evaluate one random candidate point chosen from `seed` */
    uint64_t seed;
    uint64_t chunk;        /* points per work item (0: automatic) */
    /* called on the calling thread after each work item (may be NULL) */
    void (*progress)(void *ctx, uint64_t points_done, uint64_t points_total);
    void *progress_ctx;
    /* the callback reads only index, counter, stmt, tid and the bindings: the run may
       leave aux, buf and frame empty. With an index, a trace-db run then takes results
       from the index's columns without reading the trace (bindings of blob types
       excepted: their contents are in the trace only) */
    int bindings_only;
} fq_run_options;

FRAMES_QUERY_DEF void fq_run_options_default(fq_run_options *o);

/* Run the plan; fn is called in trace order on the calling thread (fn may be NULL to
   count only). *nresults (may be NULL) receives the number of results delivered.
   Returns FRAMES_OK, FRAMES_E_STOPPED when fn asked to stop, or another negative code
   (results before the problem were delivered). */
FRAMES_QUERY_DEF int fq_run(const fq_plan *p, const fq_run_options *o, fq_result_fn fn, void *ctx,
                      uint64_t *nresults, frames_error *err);

/* The point pick mode chooses for `seed`, or -1 when no point is a candidate (for tests
   and for showing the choice). */
FRAMES_QUERY_DEF int fq_pick_point(const fq_plan *p, uint64_t seed, uint64_t *counter,
                             frames_error *err);

/* ======================================================================================
   Output
   ====================================================================================== */

enum {
    FQ_LIST_TRACEDB = 0,   /* "result K: counter=C stmt=S x:int=37 ..." (trace-db listing;
                              frames: "result K: counter=C pc=0x... tid=T R_EAX:reg32=0x1") */
    FQ_LIST_CAPI = 1,      /* "result K: stmt=S x=37 ..." (trace-db C API listing) */
    FQ_LIST_JSON = 2       /* one JSON object */
};

/* Format a result without a newline into buf (NUL-terminated when cap > 0). Returns the
   length the whole text needs (as snprintf: larger than cap - 1 means it was cut). */
FRAMES_QUERY_DEF size_t fq_format_result(const fq_result *r, int style, char *buf, size_t cap);

#ifdef __cplusplus
}
#endif
#endif /* FRAMES_QUERY_H_INCLUDED */

/* ======================================================================================
   IMPLEMENTATION
   ====================================================================================== */
#if defined(FRAMES_QUERY_IMPLEMENTATION) || defined(FRAMES_ALL_IMPLEMENTATION)
#ifndef FRAMES_QUERY_IMPLEMENTATION_INCLUDED
#define FRAMES_QUERY_IMPLEMENTATION_INCLUDED

#ifdef FRAMES_NO_STDIO
#error "frames_query.h reads files and formats results with the C library's stdio"
#endif
#define FRAMES__WANT_HELPERS
#include "frames.h"
#include <errno.h>

#if defined(_WIN32) && !defined(FRAMES_QUERY_NO_THREADS)
#define FRAMES_QUERY_NO_THREADS
#endif
#ifndef FRAMES_QUERY_NO_THREADS
#include <pthread.h>
#endif
#ifndef FRAMES_NO_POSIX
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* --------------------------------------------------------------------------------------
   errors, memory
   -------------------------------------------------------------------------------------- */

/* The query's messages say where themselves (line and column of the query text), so
   the position goes to the fields only. */
static int fq__fail(frames_error *e, int code, uint64_t offset, uint64_t point, const char *fmt,
                    ...) FRAMES__PRINTF(5, 6);
static int fq__fail(frames_error *e, int code, uint64_t offset, uint64_t point, const char *fmt,
                    ...) {
    va_list ap;
    va_start(ap, fmt);
    frames__vfail(e, code, offset, point, FRAMES__FAIL_PLAIN, fmt, ap);
    va_end(ap);
    return code;
}

static int fq__oom(frames_error *e) {
    return fq__fail(e, FRAMES_E_NOMEM, FRAMES_NO_POS, FRAMES_NO_POS, "out of memory");
}

FRAMES__INLINE uint64_t fq__leN(const uint8_t *p, unsigned n) {  /* n <= 8 */
    uint64_t v = 0;
    switch (n) {   /* the usual sizes as single loads */
    case 8: return frames__le64(p);
    case 4: return frames__le32(p);
    case 2: return (uint64_t)p[0] | (uint64_t)p[1] << 8;
    case 1: return p[0];
    default:
        while (n--) v = v << 8 | p[n];
        return v;
    }
}

/* ---------------------------------------------------------------- values

   A value is an exact integer (sign and magnitude in 64-bit limbs), a double, a string
   or invalid. Leaves are at most one limb; every arithmetic node gets a fixed number
   of limbs at compile time (enough for any result of its operands), so evaluation
   never allocates and never overflows. */

enum { FQ__INV = 0, FQ__INT = 1, FQ__FLT = 2, FQ__STR = 3 };
#define FQ__MAX_LIMBS 64   /* 4096-bit integers at most (checked at compile time) */

typedef struct fq__num {
    uint8_t kind;
    uint8_t neg;           /* INT: negative (never for zero) */
    uint16_t n;            /* INT: limbs in use, 0 for zero */
    uint32_t len;          /* STR: length */
    uint64_t small;        /* INT with n <= 1 */
    uint64_t *limb;        /* INT with n > 1: the node's storage */
    double f;              /* FLT */
    const uint8_t *str;    /* STR */
} fq__num;

static const uint64_t *fq__limbs(const fq__num *v) { return v->n > 1 ? v->limb : &v->small; }

static void fq__set_uint(fq__num *v, uint64_t u) {
    v->kind = FQ__INT;
    v->neg = 0;
    v->n = u != 0;
    v->small = u;
}
static void fq__set_flt(fq__num *v, double f) {
    v->kind = FQ__FLT;
    v->f = f;
}

/* Store magnitude buf[0..n) with a sign into v (buf is the node's storage). */
static void fq__set_mag(fq__num *v, uint64_t *buf, unsigned n, int neg) {
    while (n && !buf[n - 1]) n--;
    v->kind = FQ__INT;
    v->n = (uint16_t)n;
    v->neg = (uint8_t)(n ? neg : 0);
    if (n <= 1) v->small = n ? buf[0] : 0;
    else v->limb = buf;
}

static int fq__mag_cmp(const uint64_t *a, unsigned na, const uint64_t *b, unsigned nb) {
    if (na != nb) return na < nb ? -1 : 1;
    while (na--)
        if (a[na] != b[na]) return a[na] < b[na] ? -1 : 1;
    return 0;
}

static unsigned fq__mag_add(uint64_t *r, const uint64_t *a, unsigned na, const uint64_t *b,
                            unsigned nb) {
    unsigned i, n = na > nb ? na : nb;
    uint64_t carry = 0;
    for (i = 0; i < n; i++) {
        uint64_t x = i < na ? a[i] : 0, y = i < nb ? b[i] : 0, s = x + y;
        uint64_t c1 = s < x;
        r[i] = s + carry;
        carry = c1 | (r[i] < s);
    }
    r[n] = carry;
    return n + 1;
}

/* a >= b */
static unsigned fq__mag_sub(uint64_t *r, const uint64_t *a, unsigned na, const uint64_t *b,
                            unsigned nb) {
    unsigned i;
    uint64_t borrow = 0;
    for (i = 0; i < na; i++) {
        uint64_t x = a[i], y = i < nb ? b[i] : 0, d = x - y;
        uint64_t b1 = x < y;
        r[i] = d - borrow;
        borrow = b1 | (d < borrow);
    }
    return na;
}

static void fq__mul64(uint64_t x, uint64_t y, uint64_t *lo, uint64_t *hi) {
    uint64_t xl = x & 0xffffffffu, xh = x >> 32, yl = y & 0xffffffffu, yh = y >> 32;
    uint64_t ll = xl * yl, lh = xl * yh, hl = xh * yl, hh = xh * yh;
    uint64_t mid = (ll >> 32) + (lh & 0xffffffffu) + (hl & 0xffffffffu);
    *lo = (ll & 0xffffffffu) | mid << 32;
    *hi = hh + (lh >> 32) + (hl >> 32) + (mid >> 32);
}

static unsigned fq__mag_mul(uint64_t *r, const uint64_t *a, unsigned na, const uint64_t *b,
                            unsigned nb) {
    unsigned i, j;
    for (i = 0; i < na + nb; i++) r[i] = 0;
    for (i = 0; i < na; i++) {
        uint64_t carry = 0;
        for (j = 0; j < nb; j++) {
            uint64_t lo, hi;
            fq__mul64(a[i], b[j], &lo, &hi);
            lo += carry;
            hi += lo < carry;
            r[i + j] += lo;
            hi += r[i + j] < lo;
            carry = hi;
        }
        r[i + nb] = carry;
    }
    return na + nb;
}

static unsigned fq__bitlen(const uint64_t *a, unsigned n) {
    unsigned b = 0;
    uint64_t top;
    if (!n) return 0;
    top = a[n - 1];
    while (top) {
        b++;
        top >>= 1;
    }
    return (n - 1) * 64 + b;
}

static int fq__bit(const uint64_t *a, unsigned n, unsigned i) {
    return i / 64 < n ? (int)(a[i / 64] >> (i % 64) & 1) : 0;
}

/* r = a mod b, b != 0 (magnitudes), by shift and subtract; r has nb + 1 limbs. */
static unsigned fq__mag_mod(uint64_t *r, const uint64_t *a, unsigned na, const uint64_t *b,
                            unsigned nb) {
    unsigned nr = 0, i, k, bits = fq__bitlen(a, na);
    for (i = 0; i <= nb; i++) r[i] = 0;
    for (i = bits; i-- > 0;) {
        uint64_t carry = (uint64_t)fq__bit(a, na, i);
        for (k = 0; k < nb + 1; k++) {   /* r = r * 2 + bit */
            uint64_t nc = r[k] >> 63;
            r[k] = r[k] << 1 | carry;
            carry = nc;
        }
        nr = nb + 1;
        while (nr && !r[nr - 1]) nr--;
        if (fq__mag_cmp(r, nr, b, nb) >= 0) nr = fq__mag_sub(r, r, nr, b, nb);
    }
    while (nr && !r[nr - 1]) nr--;
    return nr;
}

/* Doubles without libm (IEEE-754 binary64, as everywhere this runs), so that embedders
   need no -lm. */
static double fq__pow2(int e) {   /* 2^e, -1074 <= e <= 1023 */
    uint64_t bits = e >= -1022 ? (uint64_t)(e + 1023) << 52 : 1ull << (e + 1074);
    double d;
    memcpy(&d, &bits, 8);
    return d;
}

static double fq__ldexp(double x, int e) {
    while (e > 1023) {
        x *= fq__pow2(1023);
        e -= 1023;
    }
    while (e < -1022) {
        x *= fq__pow2(-1022);
        e += 1022;
    }
    return x * fq__pow2(e);
}

/* x = m * 2^e with 0.5 <= |m| < 1, for finite nonzero x */
static double fq__frexp(double x, int *e) {
    uint64_t bits;
    int ex, shift = 0;
    memcpy(&bits, &x, 8);
    if (!(bits >> 52 & 0x7ff)) {   /* subnormal: scale into the normal range first */
        x *= fq__pow2(64);
        memcpy(&bits, &x, 8);
        shift = 64;
    }
    ex = (int)(bits >> 52 & 0x7ff);
    *e = ex - 1022 - shift;
    bits = (bits & ~(0x7ffull << 52)) | (1022ull << 52);
    memcpy(&x, &bits, 8);
    return x;
}

static int fq__isinf(double x) { return x == x && x - x != x - x; }
static double fq__fabs(double x) { return x < 0 ? -x : x; }

static double fq__nan(void) {
    uint64_t bits = 0x7ff8000000000000ull;
    double d;
    memcpy(&d, &bits, 8);
    return d;
}

/* C's fmod, exactly: subtract the divisor scaled by powers of two (each step is exact). */
static double fq__fmod(double x, double y) {
    double ax = fq__fabs(x), ay = fq__fabs(y), r;
    if (x != x || y != y || fq__isinf(x) || y == 0) return fq__nan();
    if (fq__isinf(y) || ax < ay) return x;
    r = ax;
    while (r >= ay) {
        int er, ey;
        double t;
        fq__frexp(r, &er);
        fq__frexp(ay, &ey);
        t = fq__ldexp(ay, er - ey);
        if (t > r) t = fq__ldexp(ay, er - ey - 1);
        r -= t;
    }
    return x < 0 ? -r : r;
}

static double fq__to_double(const fq__num *v) {
    double d;
    const uint64_t *l;
    int i;
    if (v->kind == FQ__FLT) return v->f;
    l = fq__limbs(v);
    if (v->n <= 1) d = (double)l[0];
    else {
        d = 0;
        for (i = v->n - 1; i >= 0 && i >= (int)v->n - 3; i--) d += fq__ldexp((double)l[i], 64 * i);
    }
    return v->neg ? -d : d;
}

/* Exact comparison of an integer with a finite double: -1, 0, 1. */
static int fq__cmp_int_double(const fq__num *a, double f) {
    int fneg = f < 0, e, sa, mag;
    uint64_t ip[FQ__MAX_LIMBS + 18];
    unsigned ni, la, i;
    double fa = fq__fabs(f), m, frac;
    sa = a->n == 0 ? 0 : (a->neg ? -1 : 1);
    if (f == 0) return sa;
    if (sa == 0) return fneg ? 1 : -1;
    if ((sa < 0) != fneg) return sa;
    /* same sign: compare magnitudes |a| and fa */
    la = fq__bitlen(fq__limbs(a), a->n);
    m = fq__frexp(fa, &e);      /* fa = m * 2^e, 0.5 <= m < 1: integer part has e bits */
    if (e <= 0) mag = 1;        /* fa < 1 <= |a| */
    else if ((unsigned)e != la) mag = la > (unsigned)e ? 1 : -1;
    else {
        /* integer part of fa as limbs: the 53-bit mantissa shifted into place */
        double ipart = fa < 4503599627370496.0 ? (double)(uint64_t)fa : fa;   /* floor; 2^52 */
        uint64_t mant;
        int sh;
        frac = fa - ipart;
        ni = (unsigned)(e + 63) / 64;
        for (i = 0; i < ni; i++) ip[i] = 0;
        m = fq__frexp(ipart, &e);
        mant = (uint64_t)fq__ldexp(m, 53);   /* exact: 53 bits */
        sh = e - 53;
        if (sh <= 0) ip[0] = mant >> -sh;
        else {
            ip[sh / 64] |= mant << (sh % 64);
            if (sh % 64 && (unsigned)(sh / 64 + 1) < ni) ip[sh / 64 + 1] |= mant >> (64 - sh % 64);
        }
        while (ni && !ip[ni - 1]) ni--;
        mag = fq__mag_cmp(fq__limbs(a), a->n, ip, ni);
        if (mag == 0 && frac > 0) mag = -1;
    }
    return fneg ? -mag : mag;
}

/* Compare two numbers: -1, 0, 1, or 2 when unordered (NaN). Both valid and numeric. */
static int fq__cmp(const fq__num *a, const fq__num *b) {
    if (a->kind == FQ__INT && b->kind == FQ__INT) {
        int c;
        if (a->neg != b->neg) return a->neg ? -1 : 1;
        if (a->n <= 1 && b->n <= 1) c = a->small < b->small ? -1 : a->small > b->small;
        else c = fq__mag_cmp(fq__limbs(a), a->n, fq__limbs(b), b->n);
        return a->neg ? -c : c;
    }
    if (a->kind == FQ__FLT && b->kind == FQ__FLT) {
        if (a->f != a->f || b->f != b->f) return 2;
        return a->f < b->f ? -1 : a->f > b->f;
    }
    if (a->kind == FQ__INT) {
        if (b->f != b->f) return 2;
        if (fq__isinf(b->f)) return b->f > 0 ? -1 : 1;
        return fq__cmp_int_double(a, b->f);
    }
    if (a->f != a->f) return 2;
    if (fq__isinf(a->f)) return a->f > 0 ? 1 : -1;
    return -fq__cmp_int_double(b, a->f);
}

/* Two's complement of v in n limbs (n larger than v's magnitude). */
static void fq__to_twos(const fq__num *v, uint64_t *t, unsigned n) {
    const uint64_t *l = fq__limbs(v);
    unsigned i;
    uint64_t carry = 1;
    for (i = 0; i < n; i++) t[i] = i < v->n ? l[i] : 0;
    if (!v->neg) return;
    for (i = 0; i < n; i++) {
        t[i] = ~t[i] + carry;
        carry = carry && t[i] == 0;
    }
}

/* Integer result of an arithmetic operator into r (storage buf, cap limbs). Returns 0, or
   -1 when the result is invalid (division by zero, shift count out of range). */
static int fq__int_op(int op, const fq__num *a, const fq__num *b, fq__num *r, uint64_t *buf) {
    const uint64_t *x = fq__limbs(a), *y = fq__limbs(b);
    unsigned na = a->n, nb = b->n, n, i;
    switch (op) {
    case FQ_OP_ADD:
    case FQ_OP_SUB: {
        int bneg = op == FQ_OP_SUB ? (nb ? !b->neg : 0) : b->neg;
        if (FRAMES__LIKELY(na <= 1 && nb <= 1)) {   /* fast path: one limb each */
            uint64_t s;
            if (a->neg == bneg) {
                s = a->small + b->small;
                buf[0] = s;
                buf[1] = s < a->small;
                fq__set_mag(r, buf, 2, a->neg);
            } else if (a->small >= b->small) {
                buf[0] = a->small - b->small;
                fq__set_mag(r, buf, 1, a->neg);
            } else {
                buf[0] = b->small - a->small;
                fq__set_mag(r, buf, 1, bneg);
            }
            return 0;
        }
        if (a->neg == bneg) fq__set_mag(r, buf, fq__mag_add(buf, x, na, y, nb), a->neg);
        else if (fq__mag_cmp(x, na, y, nb) >= 0)
            fq__set_mag(r, buf, fq__mag_sub(buf, x, na, y, nb), a->neg);
        else fq__set_mag(r, buf, fq__mag_sub(buf, y, nb, x, na), bneg);
        return 0;
    }
    case FQ_OP_MUL:
        if (!na || !nb) fq__set_uint(r, 0);
        else fq__set_mag(r, buf, fq__mag_mul(buf, x, na, y, nb), a->neg != b->neg);
        return 0;
    case FQ_OP_MOD:   /* truncated, as C: the sign of the dividend */
        if (!nb) return -1;
        if (na <= 1 && nb <= 1) {
            buf[0] = a->small % b->small;
            fq__set_mag(r, buf, 1, a->neg);
        } else fq__set_mag(r, buf, fq__mag_mod(buf, x, na, y, nb), a->neg);
        return 0;
    case FQ_OP_SHL:
    case FQ_OP_SHR: {
        unsigned c, w, q;
        if (b->neg || nb > 1 || b->small > 64) return -1;
        c = (unsigned)b->small;
        q = c / 64;
        c %= 64;
        if (op == FQ_OP_SHL) {
            for (i = 0; i < na + 2; i++) buf[i] = 0;
            for (i = 0; i < na; i++) {
                buf[i + q] |= x[i] << c;
                if (c) buf[i + q + 1] |= x[i] >> (64 - c);
            }
            fq__set_mag(r, buf, na + 2, a->neg);
            return 0;
        }
        /* floor division by 2^count (arithmetic shift) */
        {
            int dropped = 0;
            for (i = 0; i < na; i++) {
                uint64_t lo = i + q < na ? x[i + q] : 0, hi = i + q + 1 < na ? x[i + q + 1] : 0;
                buf[i] = c ? (lo >> c | hi << (64 - c)) : lo;
            }
            for (i = 0; i < q && i < na; i++) dropped |= x[i] != 0;
            if (c && q < na) dropped |= (x[q] & ((1ull << c) - 1)) != 0;
            w = na;
            if (a->neg && dropped) {   /* round toward minus infinity */
                uint64_t one = 1;
                w = fq__mag_add(buf, buf, na, &one, 1);
            }
            fq__set_mag(r, buf, w, a->neg);
            return 0;
        }
    }
    case FQ_OP_BAND:
    case FQ_OP_BOR:
    case FQ_OP_BXOR: {
        uint64_t ta[FQ__MAX_LIMBS + 2], tb[FQ__MAX_LIMBS + 2];
        int neg;
        n = (na > nb ? na : nb) + 1;
        if (!a->neg && !b->neg) {   /* common case: no two's complement needed */
            for (i = 0; i < n - 1; i++) {
                uint64_t p = i < na ? x[i] : 0, s = i < nb ? y[i] : 0;
                buf[i] = op == FQ_OP_BAND ? (p & s) : op == FQ_OP_BOR ? (p | s) : (p ^ s);
            }
            fq__set_mag(r, buf, n - 1, 0);
            return 0;
        }
        fq__to_twos(a, ta, n);
        fq__to_twos(b, tb, n);
        for (i = 0; i < n; i++)
            buf[i] = op == FQ_OP_BAND ? (ta[i] & tb[i]) : op == FQ_OP_BOR ? (ta[i] | tb[i]) : (ta[i] ^ tb[i]);
        neg = (int)(buf[n - 1] >> 63);
        if (neg) {   /* back to sign and magnitude */
            uint64_t carry = 1;
            for (i = 0; i < n; i++) {
                buf[i] = ~buf[i] + carry;
                carry = carry && buf[i] == 0;
            }
        }
        fq__set_mag(r, buf, n, neg);
        return 0;
    }
    default:
        return -1;
    }
}

/* Arithmetic on any two values into r. */
static void fq__arith(int op, const fq__num *a, const fq__num *b, fq__num *r, uint64_t *buf) {
    if (a->kind == FQ__INV || b->kind == FQ__INV || a->kind == FQ__STR || b->kind == FQ__STR) {
        r->kind = FQ__INV;
        return;
    }
    if (op == FQ_OP_DIV) {   /* always a float division; by zero: invalid */
        double y = fq__to_double(b);
        if ((b->kind == FQ__INT && b->n == 0) || y == 0) r->kind = FQ__INV;
        else fq__set_flt(r, fq__to_double(a) / y);
        return;
    }
    if (a->kind == FQ__INT && b->kind == FQ__INT) {
        if (fq__int_op(op, a, b, r, buf) < 0) r->kind = FQ__INV;
        return;
    }
    switch (op) {   /* a float is involved */
    case FQ_OP_ADD: fq__set_flt(r, fq__to_double(a) + fq__to_double(b)); break;
    case FQ_OP_SUB: fq__set_flt(r, fq__to_double(a) - fq__to_double(b)); break;
    case FQ_OP_MUL: fq__set_flt(r, fq__to_double(a) * fq__to_double(b)); break;
    case FQ_OP_MOD: {
        double y = fq__to_double(b);
        if (y == 0) r->kind = FQ__INV;
        else fq__set_flt(r, fq__fmod(fq__to_double(a), y));
        break;
    }
    default: r->kind = FQ__INV; break;   /* bitwise operators and shifts need integers */
    }
}

/* --------------------------------------------------------------------------------------
   queries and nodes
   -------------------------------------------------------------------------------------- */

enum { FQ__T_BOOL = 1, FQ__T_NUM = 2, FQ__T_STR = 4, FQ__T_FLAG = 3 /* both BOOL and NUM */ };
#define FQ__NOPOS 0xffffffffu

typedef struct fq__node {
    uint8_t op, type;
    uint16_t nkids;
    uint32_t kid0;         /* first child in kids[] */
    int32_t var, var2;     /* accessor / distinct-vars */
    uint32_t pos;          /* byte position in the text it came from, or FQ__NOPOS */
    uint64_t deps;         /* free variables the node depends on (bit i = variable i) */
    uint32_t cap;          /* limbs of integer storage (compile) */
    uint32_t store;        /* offset of that storage in the worker's limb pool */
    uint8_t fast;          /* comparison of leaves: bit c+1 set when the outcome c (-1, 0, 1)
                              of comparing single-limb integers makes it true (compile) */
    size_t stroff;         /* STR: offset in strs */
    fq__num k;             /* constants */
} fq__node;

typedef struct fq__qvar {
    char *name;
    char *types;
} fq__qvar;

struct fq_query {
    void *ctx;
    fq__node *nodes;
    size_t nnodes, capnodes;
    uint32_t *kids;
    size_t nkids, capkids;
    char *strs;
    size_t nstrs, capstrs;
    fq__qvar vars[FQ_MAX_VARS];
    unsigned nvars;
    fq_node where;
    int has_where;
    fq_node *soft;
    size_t nsoft, capsoft;
    uint64_t mask, stmt;
    uint64_t *pcs;         /* lo, hi pairs */
    size_t npcs, cappcs;
    uint64_t *tids;
    size_t ntids, captids;
    uint32_t flags;
    frames_error err;      /* first builder error */
    uint32_t cur_pos;      /* parser: position of the construct being built */
    const char *cur_text;  /* parser: the text, for line and column */
};

static const char *fq__op_name(int op) {
    static const char *const names[FQ_OP_COUNT_] = {
        "true", "var", "v/size", "v/value", "distinct-vars", "integer", "integer", "float",
        "and", "or", "not", ">", ">=", "<", "<=", "=", "+", "-", "*", "/",
        "!=", "%", "&", "|", "^", "<<", ">>", "v/addr", "v/name", "v/read", "v/written",
        "v/post", "v/bits", "pc", "tid", "index", "string"};
    return op >= 0 && op < FQ_OP_COUNT_ ? names[op] : "?";
}

/* "line L, column C: " or "column C: " for a byte position in text. */
static void fq__where(char *out, size_t cap, const char *text, uint32_t pos) {
    uint32_t line = 1, col = 1, i;
    if (!text || pos == FQ__NOPOS) {
        out[0] = 0;
        return;
    }
    for (i = 0; i < pos && text[i]; i++) {
        if (text[i] == '\n') {
            line++;
            col = 1;
        } else col++;
    }
    if (line > 1 || strchr(text, '\n')) snprintf(out, cap, "line %u, column %u: ", line, col);
    else snprintf(out, cap, "column %u: ", col);
}

static fq_node fq__qfail(fq_query *q, int code, const char *fmt, ...) FRAMES__PRINTF(3, 4);
static fq_node fq__qfail(fq_query *q, int code, const char *fmt, ...) {
    char where[48], msg[200];
    va_list ap;
    if (q->err.code) return q->err.code;   /* keep the first error */
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fq__where(where, sizeof where, q->cur_text, q->cur_pos);
    fq__fail(&q->err, code, q->cur_pos == FQ__NOPOS ? FRAMES_NO_POS : q->cur_pos, FRAMES_NO_POS,
             "%s%s", where, msg);
    return code;
}

FRAMES_QUERY_DEF int fq_query_open(fq_query **out, void *alloc_ctx, frames_error *err) {
    fq_query *q = (fq_query *)FRAMES_MALLOC(sizeof *q, alloc_ctx);
    *out = q;
    if (!q) return fq__oom(err);
    memset(q, 0, sizeof *q);
    q->ctx = alloc_ctx;
    q->cur_pos = FQ__NOPOS;
    frames__clear_error(&q->err);
    frames__clear_error(err);
    return FRAMES_OK;
}

FRAMES_QUERY_DEF void fq_query_close(fq_query *q) {
    unsigned i;
    if (!q) return;
    for (i = 0; i < q->nvars; i++) {
        FRAMES_FREE(q->vars[i].name, q->ctx);
        FRAMES_FREE(q->vars[i].types, q->ctx);
    }
    FRAMES_FREE(q->nodes, q->ctx);
    FRAMES_FREE(q->kids, q->ctx);
    FRAMES_FREE(q->strs, q->ctx);
    FRAMES_FREE(q->soft, q->ctx);
    FRAMES_FREE(q->pcs, q->ctx);
    FRAMES_FREE(q->tids, q->ctx);
    FRAMES_FREE(q, q->ctx);
}

FRAMES_QUERY_DEF const frames_error *fq_query_error(const fq_query *q) { return &q->err; }

FRAMES_QUERY_DEF int fq_query_var(fq_query *q, const char *name, const char *types) {
    unsigned i;
    size_t n;
    if (!name || !*name) return fq__qfail(q, FRAMES_E_INVALID, "a variable needs a name");
    if (!types || !*types) return fq__qfail(q, FRAMES_E_INVALID, "variable '%s' needs a type", name);
    for (n = 0; name[n]; n++)
        if (name[n] == '(' || name[n] == ')' || name[n] == '"' || name[n] == ' ' ||
            name[n] == '\t' || name[n] == '\n')
            return fq__qfail(q, FRAMES_E_INVALID, "variable name '%s' contains '%c'", name, name[n]);
    for (i = 0; i < q->nvars; i++)
        if (!strcmp(q->vars[i].name, name))
            return fq__qfail(q, FQ_E_QUERY, "variable '%s' is declared twice", name);
    if (q->nvars >= FQ_MAX_VARS)
        return fq__qfail(q, FRAMES_E_LIMIT, "more than %d free variables", FQ_MAX_VARS);
    q->vars[q->nvars].name = frames__strndup(name, strlen(name), q->ctx);
    q->vars[q->nvars].types = frames__strndup(types, strlen(types), q->ctx);
    if (!q->vars[q->nvars].name || !q->vars[q->nvars].types) {
        FRAMES_FREE(q->vars[q->nvars].name, q->ctx);
        FRAMES_FREE(q->vars[q->nvars].types, q->ctx);
        return fq__qfail(q, FRAMES_E_NOMEM, "out of memory");
    }
    return (int)q->nvars++;
}

static fq_node fq__new_node(fq_query *q, int op, int type) {
    fq__node *n;
    if (q->nnodes >= 0x7fffffff) return fq__qfail(q, FRAMES_E_LIMIT, "too many nodes");
    if (FRAMES__GROW(q->nodes, q->capnodes, q->nnodes + 1, q->ctx) < 0)
        return fq__qfail(q, FRAMES_E_NOMEM, "out of memory");
    n = &q->nodes[q->nnodes];
    memset(n, 0, sizeof *n);
    n->op = (uint8_t)op;
    n->type = (uint8_t)type;
    n->var = n->var2 = -1;
    n->pos = q->cur_pos;
    return (fq_node)q->nnodes++;
}

static int fq__check_var(fq_query *q, int var, int op) {
    if (var < 0 || (unsigned)var >= q->nvars)
        return fq__qfail(q, FQ_E_QUERY, "%s: no free variable %d (the query has %u)",
                         fq__op_name(op), var, q->nvars);
    return 0;
}

static fq_node fq__const_mag(fq_query *q, uint64_t mag, int neg) {
    fq_node h = fq__new_node(q, neg ? FQ_OP_INT : FQ_OP_UINT, FQ__T_NUM);
    if (h < 0) return h;
    fq__set_uint(&q->nodes[h].k, mag);
    q->nodes[h].k.neg = (uint8_t)(neg && mag);
    return h;
}

FRAMES_QUERY_DEF fq_node fq_const_int(fq_query *q, int64_t v) {
    return fq__const_mag(q, v < 0 ? 0 - (uint64_t)v : (uint64_t)v, v < 0);
}
FRAMES_QUERY_DEF fq_node fq_const_uint(fq_query *q, uint64_t v) { return fq__const_mag(q, v, 0); }

FRAMES_QUERY_DEF fq_node fq_const_float(fq_query *q, double v) {
    fq_node h = fq__new_node(q, FQ_OP_FLOAT, FQ__T_NUM);
    if (h >= 0) fq__set_flt(&q->nodes[h].k, v);
    return h;
}

FRAMES_QUERY_DEF fq_node fq_const_str(fq_query *q, const char *s, size_t len) {
    fq_node h;
    if (len > 0xffffffffu) return fq__qfail(q, FRAMES_E_LIMIT, "string constant too long");
    if (FRAMES__GROW(q->strs, q->capstrs, q->nstrs + len + 1, q->ctx) < 0)
        return fq__qfail(q, FRAMES_E_NOMEM, "out of memory");
    h = fq__new_node(q, FQ_OP_STR, FQ__T_STR);
    if (h < 0) return h;
    if (len) memcpy(q->strs + q->nstrs, s, len);
    q->strs[q->nstrs + len] = 0;
    q->nodes[h].stroff = q->nstrs;
    q->nodes[h].k.kind = FQ__STR;
    q->nodes[h].k.len = (uint32_t)len;
    q->nstrs += len + 1;
    return h;
}

FRAMES_QUERY_DEF fq_node fq_access(fq_query *q, int op, int var) {
    int type;
    fq_node h;
    switch (op) {
    case FQ_OP_VALUE: case FQ_OP_SIZE: case FQ_OP_ADDR: case FQ_OP_BITS: type = FQ__T_NUM; break;
    case FQ_OP_NAME: type = FQ__T_STR; break;
    case FQ_OP_READ: case FQ_OP_WRITTEN: case FQ_OP_POST: type = FQ__T_FLAG; break;
    default: return fq__qfail(q, FRAMES_E_INVALID, "operator %d is not a variable accessor", op);
    }
    if (fq__check_var(q, var, op) < 0) return q->err.code;
    if ((h = fq__new_node(q, op, type)) < 0) return h;
    q->nodes[h].var = var;
    q->nodes[h].deps = 1ull << var;
    return h;
}

FRAMES_QUERY_DEF fq_node fq_point(fq_query *q, int op) {
    if (op != FQ_OP_PC && op != FQ_OP_TID && op != FQ_OP_INDEX)
        return fq__qfail(q, FRAMES_E_INVALID, "operator %d is not a point accessor", op);
    return fq__new_node(q, op, FQ__T_NUM);
}

FRAMES_QUERY_DEF fq_node fq_distinct(fq_query *q, int var_a, int var_b) {
    fq_node h;
    if (fq__check_var(q, var_a, FQ_OP_DISTINCT) < 0 || fq__check_var(q, var_b, FQ_OP_DISTINCT) < 0)
        return q->err.code;
    if ((h = fq__new_node(q, FQ_OP_DISTINCT, FQ__T_BOOL)) < 0) return h;
    q->nodes[h].var = var_a;
    q->nodes[h].var2 = var_b;
    q->nodes[h].deps = (1ull << var_a) | (1ull << var_b);
    return h;
}

static const char *fq__type_word(int type) {
    return type == FQ__T_BOOL ? "a predicate" : type == FQ__T_STR ? "a string" : "a number";
}

/* Make node h with children args[0..n) (already validated). */
static fq_node fq__with_kids(fq_query *q, int op, int type, const fq_node *args, size_t n) {
    fq_node h;
    size_t i;
    uint64_t deps = 0;
    if (n > 0xffff) return fq__qfail(q, FRAMES_E_LIMIT, "too many operands for '%s'", fq__op_name(op));
    if (FRAMES__GROW(q->kids, q->capkids, q->nkids + n, q->ctx) < 0)
        return fq__qfail(q, FRAMES_E_NOMEM, "out of memory");
    if ((h = fq__new_node(q, op, type)) < 0) return h;
    for (i = 0; i < n; i++) {
        q->kids[q->nkids + i] = (uint32_t)args[i];
        deps |= q->nodes[args[i]].deps;
    }
    q->nodes[h].kid0 = (uint32_t)q->nkids;
    q->nodes[h].nkids = (uint16_t)n;
    q->nodes[h].deps = deps;
    q->nkids += n;
    return h;
}

static int fq__check_node(fq_query *q, fq_node a) {
    if (a < 0) return q->err.code ? q->err.code : fq__qfail(q, FRAMES_E_INVALID, "invalid node %d", a);
    if ((size_t)a >= q->nnodes) return fq__qfail(q, FRAMES_E_INVALID, "no node %d in this query", a);
    return 0;
}

FRAMES_QUERY_DEF fq_node fq_not(fq_query *q, fq_node a) {
    if (fq__check_node(q, a) < 0) return q->err.code;
    if (!(q->nodes[a].type & FQ__T_BOOL))
        return fq__qfail(q, FQ_E_QUERY, "'not' needs a predicate, got %s",
                         fq__type_word(q->nodes[a].type));
    return fq__with_kids(q, FQ_OP_NOT, FQ__T_BOOL, &a, 1);
}

FRAMES_QUERY_DEF fq_node fq_nary(fq_query *q, int op, const fq_node *args, size_t n) {
    size_t i;
    if (op != FQ_OP_AND && op != FQ_OP_OR)
        return fq__qfail(q, FRAMES_E_INVALID, "operator %d is not 'and' or 'or'", op);
    for (i = 0; i < n; i++) {
        if (fq__check_node(q, args[i]) < 0) return q->err.code;
        if (!(q->nodes[args[i]].type & FQ__T_BOOL))
            return fq__qfail(q, FQ_E_QUERY, "'%s' needs predicates, operand %u is %s",
                             fq__op_name(op), (unsigned)i + 1, fq__type_word(q->nodes[args[i]].type));
    }
    return fq__with_kids(q, op, FQ__T_BOOL, args, n);
}

FRAMES_QUERY_DEF fq_node fq_binary(fq_query *q, int op, fq_node a, fq_node b) {
    fq_node args[2];
    int ta, tb, cmp;
    cmp = (op >= FQ_OP_GT && op <= FQ_OP_EQ) || op == FQ_OP_NE;
    if (!cmp && !(op >= FQ_OP_ADD && op <= FQ_OP_DIV) && !(op >= FQ_OP_MOD && op <= FQ_OP_SHR))
        return fq__qfail(q, FRAMES_E_INVALID, "operator %d is not a comparison or arithmetic", op);
    if (fq__check_node(q, a) < 0 || fq__check_node(q, b) < 0) return q->err.code;
    ta = q->nodes[a].type;
    tb = q->nodes[b].type;
    if ((op == FQ_OP_EQ || op == FQ_OP_NE) && (ta == FQ__T_STR || tb == FQ__T_STR)) {
        if (ta != tb)
            return fq__qfail(q, FQ_E_QUERY, "'%s' compares a string with %s", fq__op_name(op),
                             fq__type_word(ta == FQ__T_STR ? tb : ta));
    } else if (!(ta & FQ__T_NUM) || !(tb & FQ__T_NUM)) {
        return fq__qfail(q, FQ_E_QUERY, "'%s' needs numbers, operand %d is %s", fq__op_name(op),
                         (ta & FQ__T_NUM) ? 2 : 1, fq__type_word((ta & FQ__T_NUM) ? tb : ta));
    }
    args[0] = a;
    args[1] = b;
    return fq__with_kids(q, op, cmp ? FQ__T_BOOL : FQ__T_NUM, args, 2);
}

static int fq__set_pred(fq_query *q, fq_node pred, int soft) {
    if (fq__check_node(q, pred) < 0) return q->err.code;
    if (!(q->nodes[pred].type & FQ__T_BOOL))
        return fq__qfail(q, FQ_E_QUERY, "a %s predicate must be a predicate, not %s",
                         soft ? "soft" : "hard", fq__type_word(q->nodes[pred].type));
    if (!soft) {
        q->where = pred;
        q->has_where = 1;
        return FRAMES_OK;
    }
    if (FRAMES__GROW(q->soft, q->capsoft, q->nsoft + 1, q->ctx) < 0)
        return fq__qfail(q, FRAMES_E_NOMEM, "out of memory");
    q->soft[q->nsoft++] = pred;
    return FRAMES_OK;
}

FRAMES_QUERY_DEF int fq_query_where(fq_query *q, fq_node pred) { return fq__set_pred(q, pred, 0); }
FRAMES_QUERY_DEF int fq_query_soft(fq_query *q, fq_node pred) { return fq__set_pred(q, pred, 1); }

FRAMES_QUERY_DEF void fq_query_statement(fq_query *q, uint64_t mask, uint64_t stmt) {
    q->mask = mask;
    q->stmt = stmt;
}

FRAMES_QUERY_DEF int fq_query_pc_range(fq_query *q, uint64_t lo, uint64_t hi) {
    if (lo > hi) return fq__qfail(q, FRAMES_E_INVALID, "empty address range 0x%llx-0x%llx",
                                  (unsigned long long)lo, (unsigned long long)hi);
    if (FRAMES__GROW(q->pcs, q->cappcs, q->npcs * 2 + 2, q->ctx) < 0)
        return fq__qfail(q, FRAMES_E_NOMEM, "out of memory");
    q->pcs[q->npcs * 2] = lo;
    q->pcs[q->npcs * 2 + 1] = hi;
    q->npcs++;
    return FRAMES_OK;
}

FRAMES_QUERY_DEF int fq_query_thread(fq_query *q, uint64_t tid) {
    if (FRAMES__GROW(q->tids, q->captids, q->ntids + 1, q->ctx) < 0)
        return fq__qfail(q, FRAMES_E_NOMEM, "out of memory");
    q->tids[q->ntids++] = tid;
    return FRAMES_OK;
}

FRAMES_QUERY_DEF void fq_query_flags(fq_query *q, uint32_t flags) { q->flags = flags; }

/* --------------------------------------------------------------------------------------
   the text language
   -------------------------------------------------------------------------------------- */

typedef struct fq__parser {
    fq_query *q;
    const char *s;
    size_t len, i;
} fq__parser;

#define FQ__MAX_DEPTH 500

static const struct fq__opword {
    const char *word;
    int op;
} fq__ops[] = {
    {"and", FQ_OP_AND}, {"or", FQ_OP_OR}, {"not", FQ_OP_NOT}, {"distinct-vars", FQ_OP_DISTINCT},
    {">", FQ_OP_GT}, {">=", FQ_OP_GE}, {"<", FQ_OP_LT}, {"<=", FQ_OP_LE}, {"=", FQ_OP_EQ},
    {"equal", FQ_OP_EQ}, {"!=", FQ_OP_NE}, {"+", FQ_OP_ADD}, {"-", FQ_OP_SUB}, {"*", FQ_OP_MUL},
    {"/", FQ_OP_DIV}, {"%", FQ_OP_MOD}, {"&", FQ_OP_BAND}, {"|", FQ_OP_BOR}, {"^", FQ_OP_BXOR},
    {"<<", FQ_OP_SHL}, {">>", FQ_OP_SHR}, {"v/value", FQ_OP_VALUE}, {"v/size", FQ_OP_SIZE},
    {"v/addr", FQ_OP_ADDR}, {"v/name", FQ_OP_NAME}, {"v/read", FQ_OP_READ},
    {"v/written", FQ_OP_WRITTEN}, {"v/post", FQ_OP_POST}, {"v/bits", FQ_OP_BITS},
    {"pc", FQ_OP_PC}, {"tid", FQ_OP_TID}, {"index", FQ_OP_INDEX}};

static int fq__is_delim(char c) {
    return c == 0 || c == '(' || c == ')' || c == '"' || c == ' ' || c == '\t' || c == '\n' ||
           c == '\r' || c == '\f' || c == '\v' || c == ';';
}

static void fq__skip_space(fq__parser *p) {
    for (;;) {
        while (p->i < p->len && (p->s[p->i] == ' ' || p->s[p->i] == '\t' || p->s[p->i] == '\n' ||
                                 p->s[p->i] == '\r' || p->s[p->i] == '\f' || p->s[p->i] == '\v'))
            p->i++;
        if (p->i < p->len && p->s[p->i] == ';') {   /* Lisp comment to the end of the line */
            while (p->i < p->len && p->s[p->i] != '\n') p->i++;
            continue;
        }
        return;
    }
}

static size_t fq__token_end(const fq__parser *p, size_t i) {
    while (i < p->len && !fq__is_delim(p->s[i])) i++;
    return i;
}

/* Describe what is at position i for "found ..." in messages. */
static void fq__found(const fq__parser *p, size_t i, char *out, size_t cap) {
    size_t e;
    if (i >= p->len) {
        snprintf(out, cap, "end of input");
        return;
    }
    if (fq__is_delim(p->s[i])) {
        snprintf(out, cap, "'%c'", p->s[i]);
        return;
    }
    e = fq__token_end(p, i);
    snprintf(out, cap, "'%.*s'", (int)(e - i > 40 ? 40 : e - i), p->s + i);
}

static fq_node fq__perr(fq__parser *p, size_t pos, int code, const char *fmt, ...) FRAMES__PRINTF(4, 5);
static fq_node fq__perr(fq__parser *p, size_t pos, int code, const char *fmt, ...) {
    char msg[180];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    p->q->cur_pos = (uint32_t)pos;
    return fq__qfail(p->q, code, "%s", msg);
}

static int fq__find_var(const fq_query *q, const char *s, size_t n) {
    unsigned i;
    for (i = 0; i < q->nvars; i++)
        if (strlen(q->vars[i].name) == n && !memcmp(q->vars[i].name, s, n)) return (int)i;
    return -1;
}

static void fq__var_list(const fq_query *q, char *out, size_t cap) {
    unsigned i;
    size_t n = 0;
    out[0] = 0;
    if (!q->nvars) {
        snprintf(out, cap, "the query has no free variables");
        return;
    }
    n += (size_t)snprintf(out, cap, "declared:");
    for (i = 0; i < q->nvars && n < cap; i++)
        n += (size_t)snprintf(out + n, cap - n, "%s %s", i ? "," : "", q->vars[i].name);
}

/* A variable name operand of an accessor or distinct-vars. */
static int fq__p_varname(fq__parser *p, int op) {
    size_t start, end;
    int v;
    char found[64], list[120];
    fq__skip_space(p);
    start = p->i;
    if (start >= p->len || fq__is_delim(p->s[start])) {
        fq__found(p, start, found, sizeof found);
        return fq__perr(p, start, FQ_E_SYNTAX, "'%s' takes a variable name, found %s",
                        fq__op_name(op), found);
    }
    end = fq__token_end(p, start);
    v = fq__find_var(p->q, p->s + start, end - start);
    if (v < 0) {
        fq__var_list(p->q, list, sizeof list);
        return fq__perr(p, start, FQ_E_QUERY, "unknown variable '%.*s' (%s)",
                        (int)(end - start > 40 ? 40 : end - start), p->s + start, list);
    }
    p->i = end;
    return v;
}

static fq_node fq__p_number(fq__parser *p) {
    size_t start = p->i, end = fq__token_end(p, p->i), j = start;
    int neg = 0, isfloat = 0;
    char buf[96];
    uint64_t mag = 0;
    if (p->s[j] == '-' || p->s[j] == '+') neg = p->s[j++] == '-';
    if (end - j > 2 && p->s[j] == '0' && (p->s[j + 1] == 'x' || p->s[j + 1] == 'X')) {
        size_t k;
        for (k = j + 2; k < end; k++) {
            int c = p->s[k], d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
                                : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
            if (d < 0) break;
            if (mag >> 60) return fq__perr(p, start, FQ_E_SYNTAX, "hex literal '%.*s' has more than 64 bits",
                                           (int)(end - start > 60 ? 60 : end - start), p->s + start);
            mag = mag << 4 | (uint64_t)d;
        }
        if (k != end) goto malformed;
        p->i = end;
        return fq__const_mag(p->q, mag, neg);
    }
    {
        size_t k;
        int digits = 0;
        for (k = j; k < end; k++) {
            char c = p->s[k];
            if (c >= '0' && c <= '9') digits++;
            else if (c == '.' || c == 'e' || c == 'E' || ((c == '-' || c == '+') && k > j &&
                                                          (p->s[k - 1] == 'e' || p->s[k - 1] == 'E')))
                isfloat = 1;
            else goto malformed;
        }
        if (!digits) goto malformed;
    }
    if (isfloat) {
        char *ep;
        double d;
        if (end - start >= sizeof buf) goto malformed;
        memcpy(buf, p->s + start, end - start);
        buf[end - start] = 0;
        errno = 0;
        d = strtod(buf, &ep);
        if (*ep || ep == buf) goto malformed;
        p->i = end;
        return fq_const_float(p->q, d);
    }
    for (; j < end; j++) {
        uint64_t d = (uint64_t)(p->s[j] - '0');
        if (mag > (UINT64_MAX - d) / 10)
            return fq__perr(p, start, FQ_E_SYNTAX, "integer '%.*s' does not fit in 64 bits",
                            (int)(end - start > 60 ? 60 : end - start), p->s + start);
        mag = mag * 10 + d;
    }
    p->i = end;
    return fq__const_mag(p->q, mag, neg);
malformed:
    return fq__perr(p, start, FQ_E_SYNTAX, "malformed number '%.*s'",
                    (int)(end - start > 60 ? 60 : end - start), p->s + start);
}

static fq_node fq__p_string(fq__parser *p) {
    size_t start = p->i, k, n = 0;
    char *tmp;
    fq_node h;
    for (k = start + 1; k < p->len && p->s[k] != '"'; k++)
        if (p->s[k] == '\\' && k + 1 < p->len) k++;
    if (k >= p->len) return fq__perr(p, start, FQ_E_SYNTAX, "unterminated string");
    tmp = (char *)FRAMES_MALLOC(k - start + 1, p->q->ctx);
    if (!tmp) return fq__qfail(p->q, FRAMES_E_NOMEM, "out of memory");
    for (k = start + 1; p->s[k] != '"'; k++) {
        if (p->s[k] == '\\') k++;   /* \" and \\ (any escaped character stands for itself) */
        tmp[n++] = p->s[k];
    }
    p->i = k + 1;
    p->q->cur_pos = (uint32_t)start;
    h = fq_const_str(p->q, tmp, n);
    FRAMES_FREE(tmp, p->q->ctx);
    return h;
}

static fq_node fq__p_expr(fq__parser *p, int depth);

/* After '(' and the operator word: operands up to ')'. */
static fq_node fq__p_form(fq__parser *p, int op, size_t open, size_t oppos, int depth) {
    fq_node args[2], *many = NULL, h;
    size_t n = 0, cap = 0;
    char found[64];
    int want = -1, v1, v2;
    switch (op) {
    case FQ_OP_VALUE: case FQ_OP_SIZE: case FQ_OP_ADDR: case FQ_OP_NAME: case FQ_OP_READ:
    case FQ_OP_WRITTEN: case FQ_OP_POST: case FQ_OP_BITS:
        if ((v1 = fq__p_varname(p, op)) < 0) return v1;
        p->q->cur_pos = (uint32_t)open;
        h = fq_access(p->q, op, v1);
        break;
    case FQ_OP_DISTINCT:
        if ((v1 = fq__p_varname(p, op)) < 0) return v1;
        if ((v2 = fq__p_varname(p, op)) < 0) return v2;
        p->q->cur_pos = (uint32_t)open;
        h = fq_distinct(p->q, v1, v2);
        break;
    case FQ_OP_PC: case FQ_OP_TID: case FQ_OP_INDEX:
        p->q->cur_pos = (uint32_t)open;
        h = fq_point(p->q, op);
        break;
    default:
        want = op == FQ_OP_AND || op == FQ_OP_OR ? -1 : op == FQ_OP_NOT ? 1 : 2;
        for (;;) {
            fq__skip_space(p);
            if (p->i >= p->len || p->s[p->i] == ')') break;
            if (want >= 0 && (int)n == want) {
                FRAMES_FREE(many, p->q->ctx);
                return fq__perr(p, p->i, FQ_E_SYNTAX, "'%s' takes %d operand%s, found more",
                                fq__op_name(op), want, want == 1 ? "" : "s");
            }
            h = fq__p_expr(p, depth + 1);
            if (h < 0) {
                FRAMES_FREE(many, p->q->ctx);
                return h;
            }
            if (want >= 0) args[n++] = h;
            else {
                if (FRAMES__GROW(many, cap, n + 1, p->q->ctx) < 0) {
                    FRAMES_FREE(many, p->q->ctx);
                    return fq__qfail(p->q, FRAMES_E_NOMEM, "out of memory");
                }
                many[n++] = h;
            }
        }
        if (want >= 0 && (int)n < want) {
            fq__found(p, p->i, found, sizeof found);
            return fq__perr(p, p->i, FQ_E_SYNTAX, "'%s' takes %d operand%s, found %s after %u",
                            fq__op_name(op), want, want == 1 ? "" : "s", found, (unsigned)n);
        }
        p->q->cur_pos = (uint32_t)open;
        if (want < 0) h = fq_nary(p->q, op, many, n);
        else if (op == FQ_OP_NOT) h = fq_not(p->q, args[0]);
        else h = fq_binary(p->q, op, args[0], args[1]);
        FRAMES_FREE(many, p->q->ctx);
        break;
    }
    (void)oppos;
    if (h < 0) return h;
    fq__skip_space(p);
    if (p->i >= p->len || p->s[p->i] != ')') {
        char at[48];
        fq__found(p, p->i, found, sizeof found);
        fq__where(at, sizeof at, p->s, (uint32_t)open);
        if (at[0]) at[strlen(at) - 2] = 0;   /* drop ": " */
        return fq__perr(p, p->i, FQ_E_SYNTAX, "expected ')' to close the '(' at %s, found %s", at, found);
    }
    p->i++;
    return h;
}

static fq_node fq__p_expr(fq__parser *p, int depth) {
    size_t start, end, k;
    char found[64];
    fq__skip_space(p);
    start = p->i;
    if (depth > FQ__MAX_DEPTH)
        return fq__perr(p, start, FRAMES_E_LIMIT, "expression nested deeper than %d", FQ__MAX_DEPTH);
    if (start >= p->len) return fq__perr(p, start, FQ_E_SYNTAX, "expected an expression, found end of input");
    if (p->s[start] == '(') {
        p->i++;
        fq__skip_space(p);
        k = p->i;
        end = fq__token_end(p, k);
        if (end == k) {
            fq__found(p, k, found, sizeof found);
            return fq__perr(p, k, FQ_E_SYNTAX, "expected an operator after '(', found %s", found);
        }
        {
            size_t o;
            for (o = 0; o < sizeof fq__ops / sizeof fq__ops[0]; o++)
                if (strlen(fq__ops[o].word) == end - k && !memcmp(fq__ops[o].word, p->s + k, end - k)) {
                    p->i = end;
                    return fq__p_form(p, fq__ops[o].op, start, k, depth);
                }
        }
        return fq__perr(p, k, FQ_E_SYNTAX, "unknown operator '%.*s'",
                        (int)(end - k > 40 ? 40 : end - k), p->s + k);
    }
    if (p->s[start] == ')') return fq__perr(p, start, FQ_E_SYNTAX, "expected an expression, found ')'");
    if (p->s[start] == '"') return fq__p_string(p);
    if ((p->s[start] >= '0' && p->s[start] <= '9') ||
        ((p->s[start] == '-' || p->s[start] == '+' || p->s[start] == '.') && start + 1 < p->len &&
         ((p->s[start + 1] >= '0' && p->s[start + 1] <= '9') || p->s[start + 1] == '.')))
        return fq__p_number(p);
    end = fq__token_end(p, start);
    if (fq__find_var(p->q, p->s + start, end - start) >= 0)
        return fq__perr(p, start, FQ_E_QUERY,
                        "variable '%.*s' is not a value here: use (v/value %.*s), (v/size %.*s), ...",
                        (int)(end - start), p->s + start, (int)(end - start), p->s + start,
                        (int)(end - start), p->s + start);
    return fq__perr(p, start, FQ_E_SYNTAX,
                    "expected '(', a number or a string, found '%.*s'",
                    (int)(end - start > 40 ? 40 : end - start), p->s + start);
}

FRAMES_QUERY_DEF int fq_parse(fq_query *q, const char *text, fq_node *out, frames_error *err) {
    fq__parser p;
    fq_node h;
    frames_error saved = q->err;
    frames__clear_error(err);
    if (q->err.code) {   /* an earlier builder error: report it */
        if (err) *err = q->err;
        return q->err.code;
    }
    p.q = q;
    p.s = text ? text : "";
    p.len = strlen(p.s);
    p.i = 0;
    q->cur_text = p.s;
    h = fq__p_expr(&p, 0);
    if (h >= 0) {
        fq__skip_space(&p);
        if (p.i < p.len) {
            char found[64];
            fq__found(&p, p.i, found, sizeof found);
            h = fq__perr(&p, p.i, FQ_E_SYNTAX, "unexpected %s after the expression", found);
        }
    }
    q->cur_text = NULL;
    q->cur_pos = FQ__NOPOS;
    if (h < 0) {
        if (err) *err = q->err;
        h = q->err.code ? q->err.code : h;
        q->err = saved;   /* a failed parse does not poison the query */
        return h;
    }
    if (out) *out = h;
    return FRAMES_OK;
}

static int fq__pred_text(fq_query *q, const char *text, frames_error *err, int soft) {
    fq_node h;
    int rc = fq_parse(q, text, &h, err);
    if (rc < 0) return rc;
    if ((rc = fq__set_pred(q, h, soft)) < 0) {
        if (err) *err = q->err;
        q->err.code = 0;
    }
    return rc;
}

FRAMES_QUERY_DEF int fq_query_where_text(fq_query *q, const char *text, frames_error *err) {
    return fq__pred_text(q, text, err, 0);
}
FRAMES_QUERY_DEF int fq_query_soft_text(fq_query *q, const char *text, frames_error *err) {
    return fq__pred_text(q, text, err, 1);
}

/* --------------------------------------------------------------------------------------
   traces
   -------------------------------------------------------------------------------------- */

/* trace-db tags and formats (spec/trace-db.md §1) */
enum { FQ__TAG_END = 0, FQ__TAG_STMT = 1, FQ__TAG_VAR = 2, FQ__TAG_BUFSIZE = 3, FQ__TAG_AUX = 4 };

typedef struct fq__ttype {
    uint32_t name, fmt, size;
    uint32_t varlen;       /* BLOB of size 0: a u32 length precedes the bytes */
    uint32_t elen;         /* whole VARIABLE entry (tag, indices, value) when that length is
                              fixed and the type valid; 0: the careful path decides */
} fq__ttype;

/* Index entry: where point `counter` starts and the state the reader had there. */
typedef struct fq__chunk {
    uint64_t off;          /* file offset of the point */
    uint64_t counter;      /* its counter */
    uint64_t ptr_base;     /* pointer variables before it (index into psize) */
    uint64_t stmt;         /* statement of the previous point (FQ_OPEN_INHERIT_STMT) */
} fq__chunk;

/* The memory map of BUFFER_SIZE records: sorted blocks of (start, size), so that every
   operation is O(log n + block) whatever the allocation pattern. */
#define FQ__MM_BLK 128
typedef struct fq__mmblk {
    uint32_t n;
    fq_buffer_size e[FQ__MM_BLK];
} fq__mmblk;

typedef struct fq__memmap {
    fq__mmblk **b;
    size_t nb, capb;
    void *ctx;
} fq__memmap;

/* Index storage in fixed blocks that never move, so that workers can read entries while
   the index grows (pipelined load). */
#define FQ__BSHIFT 14
#define FQ__BSIZE (1u << FQ__BSHIFT)

/* A block of pointer sizes: FQ__PB_VALID words of bits (set: the size is defined), then
   the buffer size of each POINTER variable. Blocks (of both kinds) hold at most
   FQ__BSIZE entries, fewer when the file cannot hold that many (fq__block_len): a small
   trace costs a few hundred bytes, not the 512 + 130 KiB of full blocks. */
#define FQ__PB_VALID (FQ__BSIZE / 64)

struct fq_trace {
    int format;
    void *ctx;
    uint32_t oflags;
    const uint8_t *data;
    uint64_t size;
    void *map;             /* mmap of the file */
    size_t maplen;
    int fd;                /* the mapped file, kept open for the index's samples (or -1) */
    uint8_t *owned;        /* or a malloc'd copy (streams, no POSIX) */
    frames_reader *fr;
    uint64_t npoints;      /* points indexed so far (all, once idx_done) */
    /* trace-db */
    uint32_t nnames;
    uint64_t *name_off;    /* offset in data of each NUL-terminated name */
    uint32_t *name_len;
    uint32_t ntypes;
    fq__ttype *types;
    uint64_t points_off;
    uint32_t stride;
    fq__chunk **cblk;      /* index entries, one every `stride` points */
    uint64_t **pblk;       /* buffer sizes of pointer variables, in trace order */
    size_t ncblk, npblk;   /* sizes of the block tables (bounded by the file size) */
    uint64_t cmax, pmax;   /* the most index entries and pointers the file can hold */
    uint64_t nchunks, nptr;
    /* the incremental index: only the thread that set idx_busy touches these */
    int idx_done, idx_busy;
    uint64_t idx_off, idx_stmt;
    fq__memmap idx_mm;
    fq_trace_info idx_cut;   /* where the indexer found the end of the complete points */
#ifndef FRAMES_QUERY_NO_THREADS
    int sync;              /* mu and cv are initialised */
    pthread_mutex_t mu;    /* guards npoints, nchunks, nptr, idx_done, idx_busy, info */
    pthread_cond_t cv;
#endif
    fq_trace_info info;
    struct fq__ix *ix;     /* attached persistent index, or NULL */
    int have_mtime;        /* opened from a regular file: its modification time */
    int64_t mtime_s, mtime_ns;
    void (*progress)(void *ctx, uint64_t done, uint64_t total);   /* fq_index_progress */
    void *progress_ctx;
};

static const fq__chunk *fq__chunk_at(const fq_trace *t, uint64_t i) {
    return &t->cblk[i >> FQ__BSHIFT][i & (FQ__BSIZE - 1)];
}

struct fq__ix;
static int fq__ix_psize(const struct fq__ix *x, uint64_t i, uint64_t *size);
static void fq__ix_free(struct fq__ix *x, void *ctx);

static int fq__ptr_size(const fq_trace *t, uint64_t i, uint64_t *size) {
    const uint64_t *b;
    uint64_t j = i & (FQ__BSIZE - 1);
    if (t->ix) return fq__ix_psize(t->ix, i, size);
    b = t->pblk[i >> FQ__BSHIFT];
    *size = b[FQ__PB_VALID + j];
    return (int)(b[j / 64] >> (j % 64) & 1);
}

static size_t fq__mm_block(const fq__memmap *m, uint64_t key) {   /* last block starting <= key */
    size_t lo = 0, hi = m->nb;
    while (hi - lo > 1) {
        size_t mid = (lo + hi) / 2;
        if (m->b[mid]->e[0].address <= key) lo = mid;
        else hi = mid;
    }
    return lo;
}

static uint32_t fq__mm_lower(const fq__mmblk *b, uint64_t key) {   /* first entry >= key */
    uint32_t lo = 0, hi = b->n;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (b->e[mid].address < key) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

static void fq__mm_free(fq__memmap *m) {
    size_t i;
    for (i = 0; i < m->nb; i++) FRAMES_FREE(m->b[i], m->ctx);
    FRAMES_FREE(m->b, m->ctx);
    m->b = NULL;
    m->nb = m->capb = 0;
}

/* BUFFER_SIZE: size 0 frees, anything else inserts or overwrites; UINT64_MAX is
   trace-db's sentinel and never stored. Returns -1 when out of memory. */
static int fq__mm_set(fq__memmap *m, uint64_t key, uint64_t size) {
    size_t j;
    uint32_t pos;
    fq__mmblk *blk;
    if (key == UINT64_MAX) return 0;
    if (m->nb == 0) {
        if (!size) return 0;
        if (FRAMES__GROW(m->b, m->capb, 1, m->ctx) < 0) return -1;
        if (!(m->b[0] = (fq__mmblk *)FRAMES_MALLOC(sizeof(fq__mmblk), m->ctx))) return -1;
        m->b[0]->n = 0;
        m->nb = 1;
    }
    j = fq__mm_block(m, key);
    blk = m->b[j];
    pos = fq__mm_lower(blk, key);
    if (pos < blk->n && blk->e[pos].address == key) {
        if (size) {
            blk->e[pos].size = size;
            return 0;
        }
        memmove(blk->e + pos, blk->e + pos + 1, (blk->n - pos - 1) * sizeof blk->e[0]);
        if (--blk->n == 0) {
            FRAMES_FREE(blk, m->ctx);
            memmove(m->b + j, m->b + j + 1, (m->nb - j - 1) * sizeof m->b[0]);
            m->nb--;
        }
        return 0;
    }
    if (!size) return 0;
    if (blk->n == FQ__MM_BLK) {   /* split the full block in two */
        fq__mmblk *nb2;
        if (FRAMES__GROW(m->b, m->capb, m->nb + 1, m->ctx) < 0) return -1;
        if (!(nb2 = (fq__mmblk *)FRAMES_MALLOC(sizeof(fq__mmblk), m->ctx))) return -1;
        nb2->n = FQ__MM_BLK / 2;
        memcpy(nb2->e, blk->e + FQ__MM_BLK / 2, (FQ__MM_BLK / 2) * sizeof blk->e[0]);
        blk->n = FQ__MM_BLK / 2;
        memmove(m->b + j + 2, m->b + j + 1, (m->nb - j - 1) * sizeof m->b[0]);
        m->b[j + 1] = nb2;
        m->nb++;
        if (pos > FQ__MM_BLK / 2) {
            blk = nb2;
            pos -= FQ__MM_BLK / 2;
        }
    }
    memmove(blk->e + pos + 1, blk->e + pos, (blk->n - pos) * sizeof blk->e[0]);
    blk->e[pos].address = key;
    blk->e[pos].size = size;
    blk->n++;
    return 0;
}

/* Buffer size of a pointer (inclusive end, as trace-db): 1 and *out, or 0. */
static int fq__mm_size(const fq__memmap *m, uint64_t ptr, uint64_t *out) {
    const fq__mmblk *blk;
    uint32_t pos;
    if (m->nb == 0 || m->b[0]->e[0].address > ptr) return 0;
    blk = m->b[fq__mm_block(m, ptr)];
    pos = fq__mm_lower(blk, ptr);
    if (pos == blk->n || blk->e[pos].address != ptr) pos--;   /* greatest start <= ptr */
    if (ptr - blk->e[pos].address > blk->e[pos].size) return 0;
    *out = blk->e[pos].size - (ptr - blk->e[pos].address);
    return 1;
}

FRAMES_QUERY_DEF void fq_open_options_default(fq_open_options *o) {
    memset(o, 0, sizeof *o);
    o->index_stride = 256;
}

FRAMES_QUERY_DEF void fq_trace_close(fq_trace *t) {
    void *ctx;
    size_t i;
    if (!t) return;
    ctx = t->ctx;
    if (t->fr) frames_reader_close(t->fr);
#ifndef FRAMES_NO_POSIX
    if (t->map) munmap(t->map, t->maplen);
    if (t->fd >= 0) close(t->fd);
#endif
    FRAMES_FREE(t->owned, ctx);
    FRAMES_FREE(t->name_off, ctx);
    FRAMES_FREE(t->name_len, ctx);
    FRAMES_FREE(t->types, ctx);
    if (t->cblk)
        for (i = 0; i < t->ncblk; i++) FRAMES_FREE(t->cblk[i], ctx);
    if (t->pblk)
        for (i = 0; i < t->npblk; i++) FRAMES_FREE(t->pblk[i], ctx);
    FRAMES_FREE(t->cblk, ctx);
    FRAMES_FREE(t->pblk, ctx);
    fq__mm_free(&t->idx_mm);
    fq__ix_free(t->ix, ctx);
#ifndef FRAMES_QUERY_NO_THREADS
    if (t->sync) {
        pthread_mutex_destroy(&t->mu);
        pthread_cond_destroy(&t->cv);
    }
#endif
    FRAMES_FREE(t, ctx);
}

/* trace-db header (§1.1). Fills the dictionaries; returns 0 or a negative code. */
static int fq__tdb_header(fq_trace *t, frames_error *err) {
    const uint8_t *d = t->data;
    uint64_t n = t->size, nchars, off, i, k;
    if (n < 12)
        return fq__fail(err, n ? FRAMES_E_TRUNCATED : FRAMES_E_FORMAT, 0, FRAMES_NO_POS,
                        "trace-db header: file has %llu bytes, fewer than the 12 of an empty header",
                        (unsigned long long)n);
    nchars = frames__le64(d);
    if (nchars > n - 12)
        return fq__fail(err, FRAMES_E_TRUNCATED, 0, FRAMES_NO_POS,
                        "trace-db header: name dictionary of %llu bytes, but the file has %llu",
                        (unsigned long long)nchars, (unsigned long long)n);
    if (nchars && d[8 + nchars - 1] != 0)
        return fq__fail(err, FRAMES_E_FORMAT, 8 + nchars - 1, FRAMES_NO_POS,
                        "trace-db header: the name dictionary does not end with a NUL");
    for (i = 0, k = 0; i < nchars; i++) k += d[8 + i] == 0;
    if (k > 0xffffffffu)
        return fq__fail(err, FRAMES_E_LIMIT, 8, FRAMES_NO_POS, "trace-db header: too many names");
    t->nnames = (uint32_t)k;
    t->name_off = (uint64_t *)FRAMES_MALLOC((k ? k : 1) * sizeof(uint64_t), t->ctx);
    t->name_len = (uint32_t *)FRAMES_MALLOC((k ? k : 1) * sizeof(uint32_t), t->ctx);
    if (!t->name_off || !t->name_len) return fq__fail(err, FRAMES_E_NOMEM, 0, FRAMES_NO_POS, "out of memory");
    for (i = 0, k = 0, off = 8; i < nchars; i++)
        if (d[8 + i] == 0) {
            t->name_off[k] = off;
            t->name_len[k] = (uint32_t)(8 + i - off);
            k++;
            off = 8 + i + 1;
        }
    off = 8 + nchars;
    t->ntypes = frames__le32(d + off);
    off += 4;
    if ((uint64_t)t->ntypes * 12 > n - off)
        return fq__fail(err, FRAMES_E_TRUNCATED, off - 4, FRAMES_NO_POS,
                        "trace-db header: %u types need %llu bytes, %llu left", t->ntypes,
                        (unsigned long long)t->ntypes * 12, (unsigned long long)(n - off));
    t->types = (fq__ttype *)FRAMES_MALLOC((t->ntypes ? t->ntypes : 1) * sizeof(fq__ttype), t->ctx);
    if (!t->types) return fq__fail(err, FRAMES_E_NOMEM, 0, FRAMES_NO_POS, "out of memory");
    for (i = 0; i < t->ntypes; i++, off += 12) {
        fq__ttype *ty = &t->types[i];
        ty->name = frames__le32(d + off);
        ty->fmt = frames__le32(d + off + 4);
        ty->size = frames__le32(d + off + 8);
        ty->varlen = ty->fmt == FQ_TYPE_BLOB && ty->size == 0;
        /* elen is 0 when no fixed length fits 32 bits (a BLOB of 4 GiB - 9 or more) */
        ty->elen = ty->varlen || ty->size > 0xffffffffu - 9 ||
                           (ty->fmt == FQ_TYPE_SIGNED && ty->size != 1 && ty->size != 2 &&
                            ty->size != 4 && ty->size != 8) ? 0 : 9 + ty->size;
        if (ty->fmt > FQ_TYPE_BLOB)
            return fq__fail(err, FRAMES_E_FORMAT, off + 4, FRAMES_NO_POS,
                            "trace-db header: type %llu has format %u (valid: 0-4)",
                            (unsigned long long)i, ty->fmt);
        if (ty->name >= t->nnames)
            return fq__fail(err, FRAMES_E_FORMAT, off, FRAMES_NO_POS,
                            "trace-db header: type %llu names string %u of %u",
                            (unsigned long long)i, ty->name, t->nnames);
        if (ty->fmt != FQ_TYPE_BLOB && ty->fmt != FQ_TYPE_SIGNED && ty->size > 8)
            return fq__fail(err, FRAMES_E_FORMAT, off + 8, FRAMES_NO_POS,
                            "trace-db header: type %llu (%s) is %u bytes, more than the 8 of a value",
                            (unsigned long long)i, (const char *)d + t->name_off[ty->name], ty->size);
    }
    t->points_off = off;
    return FRAMES_OK;
}

/* Report where the complete points end. */
static void fq__tdb_cut(fq_trace *t, int damaged, uint64_t start, uint64_t kept, const char *fmt, ...)
    FRAMES__PRINTF(5, 6);
static void fq__tdb_cut(fq_trace *t, int damaged, uint64_t start, uint64_t kept, const char *fmt, ...) {
    va_list ap;
    char what[160];
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    t->idx_cut.truncated = !damaged;
    t->idx_cut.damaged = damaged;
    t->idx_cut.cut_offset = start;
    snprintf(t->idx_cut.message, sizeof t->idx_cut.message, "%s: %llu complete point%s kept", what,
             (unsigned long long)kept, kept == 1 ? "" : "s");
}

/* Block tables sized for the most points and pointers the file can hold. */
static int fq__tdb_tables(fq_trace *t, frames_error *err) {
    uint64_t body = t->size - t->points_off;
    t->cmax = body / t->stride + 2;
    t->pmax = body / 9 + 2;
    t->ncblk = (size_t)(t->cmax >> FQ__BSHIFT) + 1;
    t->npblk = (size_t)(t->pmax >> FQ__BSHIFT) + 1;
    t->cblk = (fq__chunk **)FRAMES_MALLOC(t->ncblk * sizeof(fq__chunk *), t->ctx);
    t->pblk = (uint64_t **)FRAMES_MALLOC(t->npblk * sizeof(uint64_t *), t->ctx);
    if (!t->cblk || !t->pblk) return fq__oom(err);
    memset(t->cblk, 0, t->ncblk * sizeof(fq__chunk *));
    memset(t->pblk, 0, t->npblk * sizeof(uint64_t *));
    t->idx_off = t->points_off;
    t->idx_mm.ctx = t->ctx;
    return FRAMES_OK;
}

/* Entries of block k when the file holds at most max of them. */
static size_t fq__block_len(uint64_t max, uint64_t k) {
    uint64_t first = k << FQ__BSHIFT;
    return max > first && max - first < FQ__BSIZE ? (size_t)(max - first) : FQ__BSIZE;
}

/* Record the buffer size of the pointer variable number nptr (-1: out of memory). */
static int fq__ptr_record(fq_trace *t, uint64_t nptr, int has, uint64_t size) {
    uint64_t j = nptr & (FQ__BSIZE - 1), k = nptr >> FQ__BSHIFT;
    uint64_t *b = t->pblk[k];
    if (!b && !(b = t->pblk[k] = (uint64_t *)FRAMES_MALLOC(
                    (FQ__PB_VALID + fq__block_len(t->pmax, k)) * sizeof(uint64_t), t->ctx)))
        return -1;
    if (j % 64 == 0) b[j / 64] = 0;
    b[FQ__PB_VALID + j] = size;
    b[j / 64] |= (uint64_t)has << (j % 64);
    return 0;
}

struct fq__worker;
static int fq__tdb_index_more(fq_trace *t, uint64_t upto, uint64_t *points, uint64_t *chunks,
                              uint64_t *ptrs, struct fq__worker *w, frames_error *err);

#ifndef FRAMES_QUERY_NO_THREADS
#define FQ__TLOCK(t) pthread_mutex_lock(&(t)->mu)
#define FQ__TUNLOCK(t) pthread_mutex_unlock(&(t)->mu)
#else
#define FQ__TLOCK(t) ((void)0)
#define FQ__TUNLOCK(t) ((void)0)
#endif

/* After a batch (trace lock held): make the new points visible, wake the waiters. */
static void fq__publish(fq_trace *t, uint64_t np, uint64_t nc, uint64_t nptr, int rc) {
    t->idx_busy = 0;
    t->npoints = np;
    t->nchunks = nc;
    t->nptr = nptr;
    if (t->idx_off >= t->size || rc < 0) {
        t->idx_done = 1;
        t->info.points = np;
        t->info.truncated = t->idx_cut.truncated;
        t->info.damaged = t->idx_cut.damaged;
        t->info.cut_offset = t->idx_cut.cut_offset;
        memcpy(t->info.message, t->idx_cut.message, sizeof t->info.message);
    }
#ifndef FRAMES_QUERY_NO_THREADS
    pthread_cond_broadcast(&t->cv);
#endif
}

/* Make sure points [0, upto) are indexed (or the whole trace, if shorter). Any thread may
   call it; one of them indexes the next batch while the others wait. *avail receives the
   number of indexed points, *done whether that is all of them. */
static int fq__ensure(fq_trace *t, uint64_t upto, uint64_t *avail, int *done, frames_error *err) {
    int rc = FRAMES_OK;
    if (t->format != FQ_TRACE_TRACEDB) {
        *avail = t->npoints;
        *done = 1;
        return FRAMES_OK;
    }
    FQ__TLOCK(t);
    while (!t->idx_done && t->npoints < upto && rc == FRAMES_OK) {
        if (!t->idx_busy) {
            uint64_t np = t->npoints, nc = t->nchunks, nptr = t->nptr;
            /* batches of at least 16k points keep the lock traffic low */
            uint64_t target = upto - np < 16384 ? np + 16384 : upto;
            t->idx_busy = 1;
            FQ__TUNLOCK(t);
            rc = fq__tdb_index_more(t, target, &np, &nc, &nptr, NULL, err);
            FQ__TLOCK(t);
            fq__publish(t, np, nc, nptr, rc);
        } else {
#ifndef FRAMES_QUERY_NO_THREADS
            pthread_cond_wait(&t->cv, &t->mu);
#endif
        }
    }
    *avail = t->npoints;
    *done = t->idx_done;
    FQ__TUNLOCK(t);
    return rc;
}

FRAMES_QUERY_DEF int fq_trace_load(fq_trace *t, frames_error *err) {
    uint64_t avail;
    int done;
    frames__clear_error(err);
    return fq__ensure(t, UINT64_MAX, &avail, &done, err);
}

static int fq__read_all(fq_trace *t, int fd, void *f, frames_error *err, const char *path) {
    size_t cap = 0, n = 0;
    uint8_t *buf = NULL;
    for (;;) {
        long long got;
        if (n + 65536 > cap && FRAMES__GROW(buf, cap, n + 65536, t->ctx) < 0) {
            FRAMES_FREE(buf, t->ctx);
            return fq__fail(err, FRAMES_E_NOMEM, n, FRAMES_NO_POS, "out of memory reading %s", path);
        }
#ifndef FRAMES_NO_POSIX
        (void)f;
        got = (long long)read(fd, buf + n, cap - n);
        if (got < 0 && errno == EINTR) continue;
#else
        (void)fd;
        got = (long long)fread(buf + n, 1, cap - n, (FILE *)f);
        if (got == 0 && ferror((FILE *)f)) got = -1;
#endif
        if (got < 0) {
            FRAMES_FREE(buf, t->ctx);
            return fq__fail(err, FRAMES_E_IO, n, FRAMES_NO_POS, "cannot read %s: %s", path, frames__syserr());
        }
        if (got == 0) break;
        n += (size_t)got;
    }
    t->owned = buf;
    t->data = buf ? buf : (const uint8_t *)"";
    t->size = n;
    return FRAMES_OK;
}

#ifndef FRAMES_NO_POSIX
/* The modification time binds a persistent index to the file's version. */
static void fq__note_mtime(fq_trace *t, const struct stat *st) {
    t->have_mtime = 1;
    t->mtime_s = (int64_t)st->st_mtime;
#if defined(__APPLE__)
    t->mtime_ns = (int64_t)st->st_mtimespec.tv_nsec;
#elif defined(st_mtime)   /* glibc, musl: st_mtime is st_mtim.tv_sec when st_mtim exists */
    t->mtime_ns = (int64_t)st->st_mtim.tv_nsec;
#else
    t->mtime_ns = 0;
#endif
}
#endif

static int fq__map_path(fq_trace *t, const char *path, frames_error *err) {
#ifndef FRAMES_NO_POSIX
    struct stat st;
    int fd, rc;
    if (!strcmp(path, "-")) return fq__read_all(t, 0, NULL, err, "standard input");
    fd = open(path, O_RDONLY);
    if (fd < 0)
        return fq__fail(err, FRAMES_E_IO, FRAMES_NO_POS, FRAMES_NO_POS, "cannot open %s: %s", path,
                        frames__syserr());
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) fq__note_mtime(t, &st);
    else st.st_size = 0;
    if (t->have_mtime && st.st_size > 0) {
        void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (m != MAP_FAILED) {
            t->map = m;
            t->maplen = (size_t)st.st_size;
            t->data = (const uint8_t *)m;
            t->size = (uint64_t)st.st_size;
            t->fd = fd;
            return FRAMES_OK;
        }
    }
    rc = fq__read_all(t, fd, NULL, err, path);   /* pipes, FIFOs, devices, empty files */
    close(fd);
    return rc;
#else
    FILE *f;
    int rc;
    if (!strcmp(path, "-")) return fq__read_all(t, 0, stdin, err, "standard input");
    if (!(f = fopen(path, "rb")))
        return fq__fail(err, FRAMES_E_IO, FRAMES_NO_POS, FRAMES_NO_POS, "cannot open %s: %s", path,
                        frames__syserr());
    rc = fq__read_all(t, 0, f, err, path);
    fclose(f);
    return rc;
#endif
}

/* A walk of the trace in offset order is at off: the mapped pages before it (but the
   last 4 MiB) leave the process, not the page cache. *released: where the last release
   ended (0 at the start of a walk); off UINT64_MAX: release every page. A walk over a
   trace larger than memory then holds a window of it, not all of it. */
static void fq__release_behind(const fq_trace *t, uint64_t *released, uint64_t off) {
#if !defined(FRAMES_NO_POSIX) && defined(MADV_DONTNEED)
    long pg = sysconf(_SC_PAGESIZE);
    uint64_t to = off == UINT64_MAX ? t->maplen : off & ~(uint64_t)(pg > 0 ? pg - 1 : 4095);
    if (t->map && to > *released + (off == UINT64_MAX ? 0 : (uint64_t)4 << 20)) {
        madvise((uint8_t *)t->map + *released, (size_t)(to - *released), MADV_DONTNEED);
        *released = to;
    }
#else
    (void)t;
    (void)released;
    (void)off;
#endif
}

static void fq__tdb_reset(fq_trace *t) {
    FRAMES_FREE(t->name_off, t->ctx);
    FRAMES_FREE(t->name_len, t->ctx);
    FRAMES_FREE(t->types, t->ctx);
    t->name_off = NULL;
    t->name_len = NULL;
    t->types = NULL;
    t->nnames = t->ntypes = 0;
}

static int fq__open_frames(fq_trace *t, const fq_open_options *o, frames_error *err) {
    frames_reader_info st;
    int rc, have_st = 0;
    if ((rc = frames_reader_open_memory(&t->fr, t->data, (size_t)t->size, o->frames, err)) < 0) return rc;
    /* stat before counting: it checks the TOC against the frames, and a count taken from a
       TOC the reader then drops sends work items to frames that are not there */
    if ((rc = frames_reader_index(t->fr)) < 0 ||
        ((have_st = frames_reader_info_get(t->fr, &st) == FRAMES_OK), 0) ||
        (rc = frames_reader_count(t->fr, &t->npoints)) < 0) {
        if (err) *err = *frames_reader_error(t->fr);
        return rc;
    }
    t->format = FQ_TRACE_FRAMES;
    t->info.points = t->npoints;
    if (have_st && st.truncated) {
        t->info.truncated = 1;
        t->info.cut_offset = st.truncated_offset;
        snprintf(t->info.message, sizeof t->info.message,
                 "the file ends inside frame %llu (offset 0x%llx, %llu bytes present): "
                 "%llu complete frames kept",
                 (unsigned long long)t->npoints, (unsigned long long)st.truncated_offset,
                 (unsigned long long)st.truncated_bytes, (unsigned long long)t->npoints);
    }
    return FRAMES_OK;
}

/* After the header: the points are indexed on demand (fq__ensure), so that a query can
   start while the index grows; strict opening indexes everything now, as trace-db would. */
static int fq__open_tdb(fq_trace *t, frames_error *err) {
    int rc;
    t->format = FQ_TRACE_TRACEDB;
    if ((rc = fq__tdb_tables(t, err)) < 0) return rc;
#ifndef FRAMES_QUERY_NO_THREADS
    if (pthread_mutex_init(&t->mu, NULL) != 0)
        return fq__fail(err, FRAMES_E_NOMEM, FRAMES_NO_POS, FRAMES_NO_POS, "cannot create a mutex");
    if (pthread_cond_init(&t->cv, NULL) != 0) {
        pthread_mutex_destroy(&t->mu);
        return fq__fail(err, FRAMES_E_NOMEM, FRAMES_NO_POS, FRAMES_NO_POS, "cannot create a condition");
    }
    t->sync = 1;
#endif
    if (t->oflags & FQ_OPEN_STRICT) return fq_trace_load(t, err);
    return FRAMES_OK;
}

static int fq__open(fq_trace *t, const fq_open_options *o, frames_error *err) {
    int format = o->format, rc;
    frames_error tdb_err;
    frames__clear_error(&tdb_err);
    t->oflags = o->flags;
    t->stride = o->index_stride ? o->index_stride : 256;
    t->info.file_size = t->size;
    if (format == FQ_TRACE_AUTO) {
        int all_zero = t->size >= 48, i;
        for (i = 0; all_zero && i < 48; i++) all_zero = t->data[i] == 0;
        if (t->size >= 8 && frames__le64(t->data) == FRAMES_MAGIC) format = FQ_TRACE_FRAMES;
        else if (!all_zero && fq__tdb_header(t, &tdb_err) == FRAMES_OK) format = FQ_TRACE_TRACEDB;
        else {
            frames_error ferr;
            fq__tdb_reset(t);
            if (fq__open_frames(t, o, &ferr) == FRAMES_OK) return FRAMES_OK;
            if (t->fr) frames_reader_close(t->fr);
            t->fr = NULL;
            return fq__fail(err, FRAMES_E_FORMAT, 0, FRAMES_NO_POS,
                            "neither a frames trace (%.80s) nor a trace-db trace (%.80s)",
                            ferr.message, tdb_err.code ? tdb_err.message : "all-zero header");
        }
        if (format == FQ_TRACE_TRACEDB) return fq__open_tdb(t, err);
    }
    if (format == FQ_TRACE_FRAMES) return fq__open_frames(t, o, err);
    if (format != FQ_TRACE_TRACEDB)
        return fq__fail(err, FRAMES_E_INVALID, FRAMES_NO_POS, FRAMES_NO_POS, "unknown format %d", format);
    if ((rc = fq__tdb_header(t, err)) < 0) return rc;
    return fq__open_tdb(t, err);
}

static int fq__new_trace(fq_trace **out, const fq_open_options *o, fq_open_options *def) {
    fq_trace *t;
    if (!o) {
        fq_open_options_default(def);
        o = def;
    }
    *out = NULL;
    t = (fq_trace *)FRAMES_MALLOC(sizeof *t, o->alloc_ctx);
    if (!t) return -1;
    memset(t, 0, sizeof *t);
    t->ctx = o->alloc_ctx;
    t->fd = -1;
    *out = t;
    return 0;
}

FRAMES_QUERY_DEF int fq_trace_open_memory(fq_trace **out, const void *data, size_t size,
                                    const fq_open_options *o, frames_error *err) {
    fq_open_options def;
    fq_trace *t;
    int rc;
    frames__clear_error(err);
    *out = NULL;
    if (fq__new_trace(&t, o, &def) < 0) return fq__oom(err);
    t->data = size ? (const uint8_t *)data : (const uint8_t *)"";
    t->size = size;
    if ((rc = fq__open(t, o ? o : &def, err)) < 0) {
        fq_trace_close(t);
        return rc;
    }
    *out = t;
    return FRAMES_OK;
}

FRAMES_QUERY_DEF int fq_trace_open_path(fq_trace **out, const char *path, const fq_open_options *o,
                                  frames_error *err) {
    fq_open_options def;
    fq_trace *t;
    int rc;
    frames__clear_error(err);
    if (fq__new_trace(&t, o, &def) < 0) return fq__oom(err);
    if ((rc = fq__map_path(t, path, err)) < 0 || (rc = fq__open(t, o ? o : &def, err)) < 0) {
        fq_trace_close(t);
        *out = NULL;
        return rc;
    }
    *out = t;
    return FRAMES_OK;
}

FRAMES_QUERY_DEF void fq_trace_info_get(fq_trace *t, fq_trace_info *info) {
#ifndef FRAMES_QUERY_NO_THREADS
    if (t->sync) pthread_mutex_lock(&t->mu);
#endif
    *info = t->info;
    info->complete = t->format != FQ_TRACE_TRACEDB || t->idx_done;
    info->points = t->npoints;
#ifndef FRAMES_QUERY_NO_THREADS
    if (t->sync) pthread_mutex_unlock(&t->mu);
#endif
    info->format = t->format;
    info->nnames = t->nnames;
    info->ntypes = t->ntypes;
    info->reader = t->fr;
}

FRAMES_QUERY_DEF const char *fq_trace_name(const fq_trace *t, uint32_t i) {
    return t->format == FQ_TRACE_TRACEDB && i < t->nnames ? (const char *)t->data + t->name_off[i] : NULL;
}

FRAMES_QUERY_DEF const char *fq_trace_type_name(const fq_trace *t, uint32_t i) {
    return t->format == FQ_TRACE_TRACEDB && i < t->ntypes ? fq_trace_name(t, t->types[i].name) : NULL;
}

/* ---------------------------------------------------------------- persistent index

   File layout, version 2 (little-endian; sections start at multiples of 8):
     0    "FQINDEX\0", u32 version, u32 header size (512), u32 trace format,
          u32 flags (1: trace mtime known, 2: built with FQ_OPEN_INHERIT_STMT)
     24   u64 trace size, mtime seconds, mtime nanoseconds, head length, head hash,
          sample hash (64 blocks of 4 KiB spread over the file, the last at its end)
     72   u64 points, candidates, pointer variables, statements, points without
          STATEMENT_ID
     112  u32 points per block, u32 posting width (4 or 8), u32 truncated, u32 damaged
     128  u64 cut offset, offset of the first point (trace-db)
     144  9 x (u64 offset, u64 length): the sections below
     288  the cut message (200 bytes, NUL-terminated)
     504  u64 hash of bytes 0..503
   blocks   one per `block` points: u64 offset of its first point, pointer variables
            before it, statement of the point before it, flags (1: a point of the block
            has no STATEMENT_ID)
   odelta   per point: u32 offset from its block's first point (UINT32_MAX: too far,
            walk from the block)
   pdelta   trace-db, per point: u32 pointer variables since its block's first point
   psize    per pointer variable: u64 buffer size (v/size); pvalid: one bit each, set
            when the size is defined
   stmts    sorted by value: u64 statement, u64 index of its first posting; then a last
            entry (0, candidates)
   post     per statement, the points that have it, ascending (u32 or u64 each)
   trace-db only (every point is a candidate, so posting j is the j-th point in
   (statement, point) order):
   coldir   per trace type: u64 records, u64 offset of its columns in coldata, u32 count
            width (0, 1, 2, 4), u32 the count when the width is 0, u8 slot width, u8 name
            width, u8 value width, u8 flags (1: pointer, 2: blob), u32 0
   coldata  per type with records, its columns; a record is a variable of that type,
            records in posting order (within a point in entry order). Each column is
            padded to 8 bytes:
              counts  per posting, the point's records (absent when all points have the
                      same count: width 0, the count in coldir)
              marks   with counts: per 64 postings, u64 index of the first record
              slot    per record, its position among the point's variables
              name    per record, its name index
              value   per record, the value as the trace stores it (blob: u32 length)
              size    pointers: per record, u64 buffer size; then a validity bit each
   Counts are checked against the trace's size and section lengths when the index is
   attached, and the statement table whole (fq__ix_stmts_ok); offsets, deltas, postings
   and column entries are checked where they are used. */

#define FQ__IX_MAGIC "FQINDEX"
#define FQ__IX_VERSION 2u
#define FQ__IX_HDR 512u
#define FQ__IX_BLOCK 64u
#define FQ__IX_SAMPLES 64u
#define FQ__IX_SAMPLE 4096u
#define FQ__IX_FAR 0xffffffffu   /* delta too large for 32 bits */
#define FQ__IX_MTIME 1u
#define FQ__IX_INHERIT 2u
#define FQ__IX_NOSTMT 1u         /* block flag */

#define FQ__IX_MSG 288u           /* the cut message */
#define FQ__IX_CDIR 32u          /* bytes per type in coldir */
#define FQ__COL_PTR 1u           /* coldir flags */
#define FQ__COL_BLOB 2u

enum { FQ__XS_BLOCKS, FQ__XS_ODELTA, FQ__XS_PDELTA, FQ__XS_PSIZE, FQ__XS_PVALID, FQ__XS_STMTS,
       FQ__XS_POST, FQ__XS_COLDIR, FQ__XS_COLDATA, FQ__XS_N };

/* The columns of one trace-db type (see the layout above), checked at attach. */
typedef struct fq__col {
    uint64_t n;            /* records */
    uint32_t cw, c;        /* count width; the count of every point when cw == 0 */
    uint8_t sw, nw, vw, flags;
    const uint8_t *cnt, *mark, *slot, *name, *val, *psize, *pvalid;
} fq__col;

typedef struct fq__ix {
    const uint8_t *data;
    uint64_t size;
    void *map;             /* mmap of the index file */
    size_t maplen;
    uint8_t *owned;        /* or a malloc'd copy */
    uint64_t npoints, ncand, nptr, nstmt, nostmt, nblocks, nrec;
    uint32_t block, pwidth, flags;
    const uint8_t *sec[FQ__XS_N];
    fq__col *cols;         /* trace-db: one per type (NULL for frames traces) */
    uint32_t ncols;
} fq__ix;

/* Column lengths of a type with n records over ncand postings, in layout order
   (counts, marks, slot, name, value, size, validity); returns the padded total. */
static uint64_t fq__col_lens(uint64_t ncand, uint64_t n, uint32_t cw, uint32_t sw, uint32_t nw, uint32_t vw,
                             uint32_t flags, uint64_t len[7]) {
    uint64_t total = 0;
    int i;
    len[0] = cw ? ncand * cw : 0;
    len[1] = cw ? (ncand / 64 + 1) * 8 : 0;
    len[2] = n * sw;
    len[3] = n * nw;
    len[4] = n * vw;
    len[5] = (flags & FQ__COL_PTR) ? n * 8 : 0;
    len[6] = (flags & FQ__COL_PTR) ? (n + 63) / 64 * 8 : 0;
    for (i = 0; i < 7; i++) total += (len[i] + 7) / 8 * 8;
    return total;
}

/* Reads of 1, 2, 4 or 8 byte little-endian numbers. */
FRAMES__INLINE uint64_t fq__rdw(const uint8_t *p, uint64_t i, uint32_t w) {
    return w == 1 ? p[i] : w == 2 ? (uint64_t)p[2 * i] | (uint64_t)p[2 * i + 1] << 8
                  : w == 4 ? frames__le32(p + 4 * i) : frames__le64(p + 8 * i);
}

/* A fast non-cryptographic hash (the binding detects a changed or foreign trace; it is
   not meant to resist forgery: nothing read from an index is trusted anyway). */
static uint64_t fq__hash_step(uint64_t h, uint64_t w) {
    h = (h ^ w) * 0x9e3779b97f4a7c15ull;
    return h ^ (h >> 32);
}

/* Four lanes over 32-byte blocks: the multiplications (and the loads of a cold sample
   block) overlap instead of waiting on one another; every query hashes 256 KiB of the
   trace to bind its index. */
static uint64_t fq__hash64(uint64_t h, const uint8_t *p, uint64_t n) {
    uint64_t i = 0;
    if (n >= 32) {
        uint64_t a = h, b = h ^ 0x243f6a8885a308d3ull, c = h ^ 0x13198a2e03707344ull,
                 d = h ^ 0xa4093822299f31d0ull;
        for (; i + 32 <= n; i += 32) {
            a = fq__hash_step(a, frames__le64(p + i));
            b = fq__hash_step(b, frames__le64(p + i + 8));
            c = fq__hash_step(c, frames__le64(p + i + 16));
            d = fq__hash_step(d, frames__le64(p + i + 24));
        }
        h = fq__hash_step(fq__hash_step(fq__hash_step(a, b), c), d);
    }
    for (; i + 8 <= n; i += 8) h = fq__hash_step(h, frames__le64(p + i));
    h = frames__hash_bytes(h, p + i, (size_t)(n - i));
    h = (h ^ n) * 0xbf58476d1ce4e5b9ull;
    return h ^ (h >> 31);
}

static uint64_t fq__ix_head_len(const fq_trace *t) {
    return t->format == FQ_TRACE_TRACEDB ? t->points_off : t->size < 4096 ? t->size : 4096;
}

/* Where sample i of the 64 starts (the last one ends the file). */
static uint64_t fq__ix_sample_at(const fq_trace *t, uint64_t i, uint64_t len) {
    return i == FQ__IX_SAMPLES - 1 ? t->size - len : (t->size - len) / (FQ__IX_SAMPLES - 1) * i;
}

/* The samples of a mapped file hashed from pread copies: faulting 64 scattered blocks
   into the mapping costs a query process about 0.4 ms, reading them about 0.08 ms (the
   readahead hints keep a cold file's reads in parallel). 0 when a read falls short. */
static int fq__ix_sample_hash_fd(const fq_trace *t, uint64_t len, uint64_t *hash) {
#if !defined(FRAMES_NO_POSIX) && defined(POSIX_FADV_WILLNEED)
    uint8_t buf[FQ__IX_SAMPLE];
    uint64_t h = t->size, i;
    if (t->fd < 0) return 0;
    for (i = 0; i < FQ__IX_SAMPLES; i++)
        (void)posix_fadvise(t->fd, (off_t)fq__ix_sample_at(t, i, len), (off_t)len, POSIX_FADV_WILLNEED);
    for (i = 0; i < FQ__IX_SAMPLES; i++) {
        if (pread(t->fd, buf, (size_t)len, (off_t)fq__ix_sample_at(t, i, len)) != (ssize_t)len) return 0;
        h = fq__hash64(h, buf, len);
    }
    *hash = h;
    return 1;
#else
    (void)t;
    (void)len;
    (void)hash;
    return 0;
#endif
}

static uint64_t fq__ix_sample_hash(const fq_trace *t) {
    uint64_t h = t->size, len = t->size < FQ__IX_SAMPLE ? t->size : FQ__IX_SAMPLE, i;
    if (fq__ix_sample_hash_fd(t, len, &h)) return h;
    for (i = 0; i < FQ__IX_SAMPLES; i++) h = fq__hash64(h, t->data + fq__ix_sample_at(t, i, len), len);
    return h;
}

static uint64_t fq__ix_u64(const fq__ix *x, int sec, uint64_t i) { return frames__le64(x->sec[sec] + 8 * i); }
static uint32_t fq__ix_u32(const fq__ix *x, int sec, uint64_t i) { return frames__le32(x->sec[sec] + 4 * i); }

static uint64_t fq__ix_post(const fq__ix *x, uint64_t i) {
    return x->pwidth == 4 ? frames__le32(x->sec[FQ__XS_POST] + 4 * i) : frames__le64(x->sec[FQ__XS_POST] + 8 * i);
}

static int fq__ix_psize(const fq__ix *x, uint64_t i, uint64_t *size) {
    if (i >= x->nptr) {   /* only a damaged index gets here: no size */
        *size = 0;
        return 0;
    }
    *size = fq__ix_u64(x, FQ__XS_PSIZE, i);
    return (int)(fq__ix_u64(x, FQ__XS_PVALID, i / 64) >> (i % 64) & 1);
}

static void fq__ix_free(fq__ix *x, void *ctx) {
    if (!x) return;
    FRAMES_FREE(x->cols, ctx);
#ifndef FRAMES_NO_POSIX
    if (x->map) munmap(x->map, x->maplen);
#endif
    FRAMES_FREE(x->owned, ctx);
    FRAMES_FREE(x, ctx);
}

/* --------------------------------------------------------------------------------------
   building
   -------------------------------------------------------------------------------------- */

/* Statement ids: 32 bits, UINT32_MAX meaning none. */
#define FQ__IX_MAX_STMTS 0xfffffffeu

typedef struct fq__ixb_id {
    uint64_t hash;   /* frames__htab's */
    uint32_t id;     /* index in sval */
} fq__ixb_id;

typedef struct fq__ixb {   /* an index under construction */
    void *ctx;
    int format;
    uint64_t npoints, ncand, nptr, nostmt, nstmt;
    size_t capval, capcount;
    uint64_t base_off, base_ptr;
    uint64_t *blocks;      /* 4 words per block */
    uint32_t *odelta, *pdelta, *sid;   /* per point; sid: statement id, UINT32_MAX: none */
    uint64_t *sval, *scount;           /* per statement id */
    frames__htab stmts;    /* statement -> id (fq__ixb_id slots) */
    /* trace-db columns: where each point starts and its first pointer variable; per
       type, its records, the most in one point, and the point that counted last */
    uint64_t *poff, *pbase;
    uint64_t *tn, *tmax, *tcur, *tlast;
    uint32_t ntypes, maxslot;
} fq__ixb;

static void fq__ixb_free(fq__ixb *b) {
    FRAMES_FREE(b->blocks, b->ctx);
    FRAMES_FREE(b->odelta, b->ctx);
    FRAMES_FREE(b->pdelta, b->ctx);
    FRAMES_FREE(b->sid, b->ctx);
    FRAMES_FREE(b->sval, b->ctx);
    FRAMES_FREE(b->scount, b->ctx);
    frames__htab_free(&b->stmts, b->ctx);
    FRAMES_FREE(b->poff, b->ctx);
    FRAMES_FREE(b->pbase, b->ctx);
    FRAMES_FREE(b->tn, b->ctx);
}

static int fq__ixb_init(fq__ixb *b, const fq_trace *t, uint64_t npoints) {
    size_t n = (size_t)(npoints ? npoints : 1), nb = (size_t)(npoints / FQ__IX_BLOCK + 1);
    memset(b, 0, sizeof *b);
    b->ctx = t->ctx;
    b->format = t->format;
    if (npoints > ((size_t)-1) / 16) return -1;
    b->blocks = (uint64_t *)FRAMES_MALLOC(nb * 4 * sizeof(uint64_t), b->ctx);
    b->odelta = (uint32_t *)FRAMES_MALLOC(n * sizeof(uint32_t), b->ctx);
    b->pdelta = (uint32_t *)FRAMES_MALLOC(n * sizeof(uint32_t), b->ctx);
    b->sid = (uint32_t *)FRAMES_MALLOC(n * sizeof(uint32_t), b->ctx);
    FRAMES__HTAB_INIT(&b->stmts, fq__ixb_id, FQ__IX_MAX_STMTS);
    if (!b->blocks || !b->odelta || !b->pdelta || !b->sid) return -1;
    if (t->format == FQ_TRACE_TRACEDB) {
        size_t nt = t->ntypes ? t->ntypes : 1;
        b->ntypes = t->ntypes;
        b->poff = (uint64_t *)FRAMES_MALLOC(n * sizeof(uint64_t), b->ctx);
        b->pbase = (uint64_t *)FRAMES_MALLOC(n * sizeof(uint64_t), b->ctx);
        b->tn = (uint64_t *)FRAMES_MALLOC(4 * nt * sizeof(uint64_t), b->ctx);
        if (!b->poff || !b->pbase || !b->tn) return -1;
        memset(b->tn, 0, 4 * nt * sizeof(uint64_t));
        b->tmax = b->tn + nt;
        b->tcur = b->tn + 2 * nt;
        b->tlast = b->tn + 3 * nt;
    }
    return 0;
}

/* The id of statement s (new ids are numbered in order of appearance); -1: no memory. */
static int fq__ixb_stmt(fq__ixb *b, uint64_t s, uint32_t *id) {
    uint64_t h = frames__mix64(s);
    size_t at = 0;
    fq__ixb_id *e;
    while ((e = FRAMES__HTAB_NEXT(&b->stmts, fq__ixb_id, h, &at)) && b->sval[e->id] != s) {}
    if (e) {
        *id = e->id;
        return 0;
    }
    if (FRAMES__GROW(b->sval, b->capval, b->nstmt + 1, b->ctx) < 0 ||
        FRAMES__GROW(b->scount, b->capcount, b->nstmt + 1, b->ctx) < 0 ||
        !(e = (fq__ixb_id *)frames__htab_add(&b->stmts, h, b->ctx)))
        return -1;
    e->id = (uint32_t)b->nstmt;
    b->sval[b->nstmt] = s;
    b->scount[b->nstmt] = 0;
    *id = (uint32_t)b->nstmt++;
    return 0;
}

/* Point k starts at off with ptr pointer variables before it; prev is the statement of
   the point before, stmt its own (has: it has a STATEMENT_ID); cand: it is in the posting
   lists (frames: a std_frame). Returns -1 when out of memory. */
static int fq__ixb_point(fq__ixb *b, uint64_t k, uint64_t off, uint64_t ptr, uint64_t prev,
                         uint64_t stmt, int has, int cand) {
    uint64_t *blk = b->blocks + 4 * (k / FQ__IX_BLOCK);
    if (k % FQ__IX_BLOCK == 0) {
        blk[0] = b->base_off = off;
        blk[1] = b->base_ptr = ptr;
        blk[2] = prev;
        blk[3] = 0;
    }
    b->odelta[k] = off - b->base_off < FQ__IX_FAR ? (uint32_t)(off - b->base_off) : FQ__IX_FAR;
    b->pdelta[k] = ptr - b->base_ptr < FQ__IX_FAR ? (uint32_t)(ptr - b->base_ptr) : FQ__IX_FAR;
    if (!has) {
        blk[3] |= FQ__IX_NOSTMT;
        b->nostmt++;
    }
    b->sid[k] = 0xffffffffu;
    if (cand) {
        uint32_t id;
        if (fq__ixb_stmt(b, stmt, &id) < 0) return -1;
        b->sid[k] = id;
        b->scount[id]++;
        b->ncand++;
    }
    b->npoints = k + 1;
    return 0;
}

/* A validated trace-db point: where it ends, its pointer variables and statement. */
static uint64_t fq__tdb_skip(const fq_trace *t, uint64_t off, uint64_t *ptr, uint64_t *stmt, int *has) {
    const uint8_t *d = t->data;
    *has = 0;
    for (;;) {
        unsigned tag = d[off++];
        if (tag == FQ__TAG_VAR) {
            const fq__ttype *ty = &t->types[frames__le32(d + off + 4)];
            uint32_t size = ty->size;
            off += 8;
            if (ty->varlen) {
                size = frames__le32(d + off);
                off += 4;
            }
            *ptr += ty->fmt == FQ_TYPE_POINTER;
            off += size;
        } else if (tag == FQ__TAG_END) {
            return off;
        } else if (tag == FQ__TAG_STMT) {
            *stmt = frames__le64(d + off);
            *has = 1;
            off += 8;
        } else off += tag == FQ__TAG_BUFSIZE ? 16 : 8;
    }
}

/* Count the variables of point k (at off) per type for the columns' widths. */
static void fq__ixb_count(fq__ixb *b, const fq_trace *t, uint64_t k, uint64_t off) {
    const uint8_t *d = t->data;
    uint32_t ord = 0;
    for (;;) {
        unsigned tag = d[off++];
        if (tag == FQ__TAG_VAR) {
            uint32_t type = frames__le32(d + off + 4), size = t->types[type].size;
            off += 8;
            if (t->types[type].varlen) {
                size = frames__le32(d + off);
                off += 4;
            }
            if (b->tlast[type] != k + 1) {
                b->tlast[type] = k + 1;
                b->tcur[type] = 0;
            }
            if (++b->tcur[type] > b->tmax[type]) b->tmax[type] = b->tcur[type];
            b->tn[type]++;
            if (ord > b->maxslot) b->maxslot = ord;
            ord++;
            off += size;
        } else if (tag == FQ__TAG_END) {
            return;
        } else off += tag == FQ__TAG_BUFSIZE ? 16 : 8;
    }
}

/* An index build's progress: phase 0 loading the trace, 1 its points, 2 the columns;
   num of den of the phase done. */
static void fq__build_progress(const fq_trace *t, unsigned phase, uint64_t num, uint64_t den) {
    const uint64_t unit = (uint64_t)1 << 20;
    if (t->progress)
        t->progress(t->progress_ctx, phase * unit + (den && num < den ? (uint64_t)((double)num / (double)den * unit) : unit),
                    3 * unit);
}

#define FQ__PROGRESS_EVERY 65536u   /* points between two progress reports */

static int fq__ixb_tdb(fq__ixb *b, fq_trace *t, frames_error *err) {
    uint64_t k, off = t->points_off, ptr = 0, stmt = 0, released = 0;
    int inherit = (t->oflags & FQ_OPEN_INHERIT_STMT) != 0, has;
    for (k = 0; k < t->npoints; k++) {
        uint64_t prev = stmt, start = off, ptr0 = ptr;
        if (k % FQ__PROGRESS_EVERY == 0) {
            fq__build_progress(t, 1, k, t->npoints);
            fq__release_behind(t, &released, off);
        }
        if (!inherit) stmt = 0;
        off = fq__tdb_skip(t, off, &ptr, &stmt, &has);
        if (fq__ixb_point(b, k, start, ptr0, prev, stmt, has, 1) < 0) return fq__oom(err);
        b->poff[k] = start;
        b->pbase[k] = ptr0;
        fq__ixb_count(b, t, k, start);
    }
    b->nptr = ptr;
    fq__release_behind(t, &released, UINT64_MAX);
    if (ptr != t->nptr)   /* the two walks disagree: cannot happen on a loaded trace */
        return fq__fail(err, FRAMES_E_STATE, FRAMES_NO_POS, FRAMES_NO_POS,
                        "internal: %llu pointer variables counted, %llu indexed",
                        (unsigned long long)ptr, (unsigned long long)t->nptr);
    return FRAMES_OK;
}

static int fq__ixb_frames(fq__ixb *b, fq_trace *t, frames_error *err) {
    frames_cursor *c;
    frames_decoder dec;
    frames_frame f;
    frames_raw raw;
    frames_error derr;   /* its message goes into *err's */
    uint64_t k;
    int rc = FRAMES_OK;
    if ((rc = frames_cursor_open(&c, t->fr, 0, err)) < 0) return rc;
    frames_decoder_init(&dec, NULL, 0, t->ctx);
    for (k = 0; k < t->npoints; k++) {
        if (k % FQ__PROGRESS_EVERY == 0) fq__build_progress(t, 1, k, t->npoints);
        if ((rc = frames_cursor_next_raw(c, &raw)) <= 0) {
            if (rc < 0 && err) *err = *frames_cursor_error(c);
            if (rc == 0) rc = fq__fail(err, FRAMES_E_STATE, FRAMES_NO_POS, k, "frame %llu is missing",
                                       (unsigned long long)k);
            break;
        }
        if ((rc = frames_decode_frame(&dec, raw.payload.ptr, raw.payload.len, &f, &derr)) < 0) {
            fq__fail(err, rc, raw.offset, k, "frame %llu at offset 0x%llx does not decode: %s",
                     (unsigned long long)k, (unsigned long long)raw.offset, derr.message);
            break;
        }
        rc = FRAMES_OK;
        if (fq__ixb_point(b, k, raw.offset, 0, 0, f.kind == FRAMES_KIND_STD ? f.std.address : 0, 1,
                          f.kind == FRAMES_KIND_STD) < 0) {
            rc = fq__oom(err);
            break;
        }
    }
    frames_decoder_free(&dec);
    frames_cursor_close(c);
    return rc;
}

/* Little-endian output through a staging buffer. */
typedef struct fq__ixw {
    const frames_sink *sink;
    uint8_t buf[1 << 16];
    size_t n;
    uint64_t total;
    int rc;
} fq__ixw;

static void fq__ixw_flush(fq__ixw *w) {
    if (w->n && !w->rc && w->sink->write(w->sink->ctx, w->buf, w->n) < 0) w->rc = FRAMES_E_IO;
    w->total += w->n;
    w->n = 0;
}

static void fq__ixw_bytes(fq__ixw *w, const void *p, size_t n) {
    const uint8_t *s = (const uint8_t *)p;
    while (n) {
        size_t k = sizeof w->buf - w->n < n ? sizeof w->buf - w->n : n;
        memcpy(w->buf + w->n, s, k);
        w->n += k;
        s += k;
        n -= k;
        if (w->n == sizeof w->buf) fq__ixw_flush(w);
    }
}

static void fq__ixw_le(fq__ixw *w, uint64_t v, unsigned n) {
    uint8_t b[8];
    unsigned i;
    for (i = 0; i < n; i++) b[i] = (uint8_t)(v >> (8 * i));
    fq__ixw_bytes(w, b, n);
}

static void fq__ixw_pad(fq__ixw *w) {
    static const uint8_t zero[8] = {0};
    uint64_t at = w->total + w->n;
    if (at % 8) fq__ixw_bytes(w, zero, (size_t)(8 - at % 8));
}

typedef struct fq__ixs {   /* a statement and its id, for sorting */
    uint64_t val;
    uint32_t id;
} fq__ixs;

static int fq__ixs_cmp(const void *a, const void *b) {
    uint64_t x = ((const fq__ixs *)a)->val, y = ((const fq__ixs *)b)->val;
    return x < y ? -1 : x > y;
}

/* Header of the index of t built in b, with the section lengths in len[]. */
static void fq__ixb_header(const fq__ixb *b, const fq_trace *t, const uint64_t *len, uint8_t *h) {
    uint64_t off = FQ__IX_HDR;
    uint32_t pw = b->npoints > 0xffffffffu ? 8 : 4, flags;
    int i;
    memset(h, 0, FQ__IX_HDR);
    memcpy(h, FQ__IX_MAGIC, 8);
#define FQ__PUT(at, v, n)                                                                    \
    do {                                                                                    \
        uint64_t v_ = (v);                                                                  \
        unsigned k_;                                                                        \
        for (k_ = 0; k_ < (n); k_++) h[(at) + k_] = (uint8_t)(v_ >> (8 * k_));               \
    } while (0)
    flags = (t->have_mtime ? FQ__IX_MTIME : 0) | ((t->oflags & FQ_OPEN_INHERIT_STMT) ? FQ__IX_INHERIT : 0);
    FQ__PUT(8, FQ__IX_VERSION, 4);
    FQ__PUT(12, FQ__IX_HDR, 4);
    FQ__PUT(16, (uint32_t)t->format, 4);
    FQ__PUT(20, flags, 4);
    FQ__PUT(24, t->size, 8);
    FQ__PUT(32, (uint64_t)t->mtime_s, 8);
    FQ__PUT(40, (uint64_t)t->mtime_ns, 8);
    FQ__PUT(48, fq__ix_head_len(t), 8);
    FQ__PUT(56, fq__hash64(0, t->data, fq__ix_head_len(t)), 8);
    FQ__PUT(64, fq__ix_sample_hash(t), 8);
    FQ__PUT(72, b->npoints, 8);
    FQ__PUT(80, b->ncand, 8);
    FQ__PUT(88, b->nptr, 8);
    FQ__PUT(96, b->nstmt, 8);
    FQ__PUT(104, b->nostmt, 8);
    FQ__PUT(112, FQ__IX_BLOCK, 4);
    FQ__PUT(116, pw, 4);
    FQ__PUT(120, (uint32_t)t->info.truncated, 4);
    FQ__PUT(124, (uint32_t)t->info.damaged, 4);
    FQ__PUT(128, t->info.cut_offset, 8);
    FQ__PUT(136, t->format == FQ_TRACE_TRACEDB ? t->points_off : 0, 8);
    for (i = 0; i < FQ__XS_N; i++) {
        FQ__PUT(144 + 16 * i, len[i] ? off : 0, 8);
        FQ__PUT(152 + 16 * i, len[i], 8);
        off += (len[i] + 7) / 8 * 8;
    }
    memcpy(h + FQ__IX_MSG, t->info.message, strlen(t->info.message) < 199 ? strlen(t->info.message) : 199);
    FQ__PUT(504, fq__hash64(0, h, 504), 8);
#undef FQ__PUT
}

/* Smallest of 1, 2, 4 bytes that holds v. */
static uint32_t fq__width_of(uint64_t v) { return v < 256 ? 1 : v < 65536 ? 2 : 4; }

static void fq__put_w(uint8_t *p, uint64_t i, uint32_t w, uint64_t v) {
    uint32_t k;
    for (k = 0; k < w; k++) p[w * i + k] = (uint8_t)(v >> (8 * k));
}

/* Record r of column c: the variable at d (VAR entry's value, size bytes) with name,
   position ord and, for pointers, pointer variable number *ptr. */
static void fq__ixb_put(const fq_trace *t, fq__col *c, uint64_t r, uint32_t ord, uint32_t name, const uint8_t *v,
                        uint32_t size, uint32_t sw, uint32_t nw, uint64_t *ptr) {
    fq__put_w((uint8_t *)c->slot, r, sw, ord);
    fq__put_w((uint8_t *)c->name, r, nw, name);
    if (c->flags & FQ__COL_BLOB) fq__put_w((uint8_t *)c->val, r, 4, size);
    else memcpy((uint8_t *)c->val + r * c->vw, v, c->vw);
    if (c->flags & FQ__COL_PTR) {
        uint64_t sz;
        int has = fq__ptr_size(t, (*ptr)++, &sz);
        fq__put_w((uint8_t *)c->psize, r, 8, sz);
        ((uint8_t *)c->pvalid)[r / 8] |= (uint8_t)(has << (r % 8));
    }
}

/* The variables of the point at off, one at a time: 1 and the entry, or 0 at its end. */
static int fq__ixb_next_var(const fq_trace *t, uint64_t *off, uint32_t *name, uint32_t *type, uint32_t *size,
                            const uint8_t **v) {
    const uint8_t *d = t->data;
    for (;;) {
        unsigned tag = d[(*off)++];
        if (tag == FQ__TAG_VAR) {
            *name = frames__le32(d + *off);
            *type = frames__le32(d + *off + 4);
            *size = t->types[*type].size;
            *off += 8;
            if (t->types[*type].varlen) {
                *size = frames__le32(d + *off);
                *off += 4;
            }
            *v = d + *off;
            *off += *size;
            return 1;
        }
        if (tag == FQ__TAG_END) return 0;
        *off += tag == FQ__TAG_BUFSIZE ? 16 : 8;
    }
}

/* Fill the columns walking the points in posting order (random reads of the trace; for
   traces with too many statements for fq__ixb_fill_points). */
static void fq__ixb_fill_postings(fq__ixb *b, const fq_trace *t, const uint64_t *post, fq__col *cols, uint64_t *rcur,
                                  uint32_t sw, uint32_t nw) {
    uint64_t j;
    uint32_t ti, nt = b->ntypes;
    for (j = 0; j < b->ncand; j++) {
        uint64_t k = post[j], off = b->poff[k], ptr = b->pbase[k];
        uint32_t ord = 0, name, type, size;
        const uint8_t *v;
        if (j % FQ__PROGRESS_EVERY == 0) fq__build_progress(t, 2, j, b->ncand);
        if (j % 64 == 0)
            for (ti = 0; ti < nt; ti++)
                if (cols[ti].n && cols[ti].cw) fq__put_w((uint8_t *)cols[ti].mark, j / 64, 8, rcur[ti]);
        while (fq__ixb_next_var(t, &off, &name, &type, &size, &v)) {
            fq__col *c = &cols[type];
            if (c->cw) fq__put_w((uint8_t *)c->cnt, j, c->cw, fq__rdw(c->cnt, j, c->cw) + 1);
            fq__ixb_put(t, c, rcur[type]++, ord++, name, v, size, sw, nw, &ptr);
        }
    }
}

/* Fill the columns walking the trace in point order: the counts first (at each point's
   posting), then marks and each statement's first record per type, then the records
   through a cursor per statement and type. -1: out of memory. */
static int fq__ixb_fill_points(fq__ixb *b, const fq_trace *t, const uint64_t *post, const uint32_t *rank,
                               fq__col *cols, uint32_t sw, uint32_t nw) {
    uint64_t *pos = (uint64_t *)FRAMES_MALLOC((size_t)(b->ncand ? b->ncand : 1) * sizeof(uint64_t), b->ctx);
    uint64_t *cur = (uint64_t *)FRAMES_MALLOC((size_t)(b->nstmt * b->ntypes + 1) * sizeof(uint64_t), b->ctx);
    uint64_t j, k, s, released = 0;
    uint32_t ti, nt = b->ntypes, name, type, size;
    const uint8_t *v;
    if (!pos || !cur) {
        FRAMES_FREE(pos, b->ctx);
        FRAMES_FREE(cur, b->ctx);
        return -1;
    }
    for (j = 0; j < b->ncand; j++) pos[post[j]] = j;
    for (k = 0; k < b->npoints; k++) {   /* counts */
        uint64_t off = b->poff[k];
        if (k % FQ__PROGRESS_EVERY == 0) {
            fq__build_progress(t, 2, k, 2 * b->npoints);
            fq__release_behind(t, &released, off);
        }
        while (fq__ixb_next_var(t, &off, &name, &type, &size, &v)) {
            fq__col *c = &cols[type];
            if (c->cw) fq__put_w((uint8_t *)c->cnt, pos[k], c->cw, fq__rdw(c->cnt, pos[k], c->cw) + 1);
        }
    }
    for (ti = 0; ti < nt; ti++) {   /* marks */
        fq__col *c = &cols[ti];
        uint64_t r = 0;
        if (!c->n || !c->cw) continue;
        for (j = 0; j < b->ncand; j++) {
            if (j % 64 == 0) fq__put_w((uint8_t *)c->mark, j / 64, 8, r);
            r += fq__rdw(c->cnt, j, c->cw);
        }
    }
    /* the first record of each statement and type, from the statements' posting counts
       in sorted order (pos is free again) */
    fq__release_behind(t, &released, UINT64_MAX);
    released = 0;
    for (s = 0; s < b->nstmt; s++) pos[rank[s]] = b->scount[s];
    for (ti = 0; ti < nt; ti++) {
        fq__col *c = &cols[ti];
        uint64_t r = 0;
        if (!c->n) continue;
        for (j = 0, s = 0; s < b->nstmt; s++) {
            uint64_t n = pos[s], i;
            cur[s * nt + ti] = r;
            if (!c->cw) r += n * c->c;
            else
                for (i = 0; i < n; i++, j++) r += fq__rdw(c->cnt, j, c->cw);
        }
    }
    for (k = 0; k < b->npoints; k++) {   /* records, in point order */
        uint64_t off = b->poff[k], ptr = b->pbase[k], *sc = cur + (uint64_t)rank[b->sid[k]] * nt;
        uint32_t ord = 0;
        if (k % FQ__PROGRESS_EVERY == 0) {
            fq__build_progress(t, 2, b->npoints + k, 2 * b->npoints);
            fq__release_behind(t, &released, off);
        }
        while (fq__ixb_next_var(t, &off, &name, &type, &size, &v))
            fq__ixb_put(t, &cols[type], sc[type]++, ord++, name, v, size, sw, nw, &ptr);
    }
    fq__release_behind(t, &released, UINT64_MAX);
    FRAMES_FREE(pos, b->ctx);
    FRAMES_FREE(cur, b->ctx);
    return 0;
}

/* The column directory and data of a trace-db trace: every variable as a record of its
   type, in posting order (statements sorted, points ascending). post[j]: the point of
   posting j. Returns 0, or -1 when out of memory. */
static int fq__ixb_columns(fq__ixb *b, const fq_trace *t, const uint64_t *post, const uint32_t *rank,
                           uint8_t **dirp, uint8_t **datap, uint64_t *datalen, uint64_t *nrec) {
    uint32_t nt = b->ntypes, ti, nw = fq__width_of(t->nnames ? t->nnames - 1 : 0), sw = fq__width_of(b->maxslot);
    uint64_t *base, *rcur, total = 0, lens[7];
    uint8_t *dir, *data;
    fq__col *cols;   /* the columns being written (const pointers cast back) */
    *dirp = *datap = NULL;
    *datalen = *nrec = 0;
    dir = (uint8_t *)FRAMES_MALLOC((size_t)nt * FQ__IX_CDIR + 1, b->ctx);
    base = (uint64_t *)FRAMES_MALLOC(((size_t)nt + 1) * 2 * sizeof(uint64_t), b->ctx);
    if (!dir || !base) {
        FRAMES_FREE(dir, b->ctx);
        FRAMES_FREE(base, b->ctx);
        return -1;
    }
    rcur = base + nt + 1;
    memset(dir, 0, (size_t)nt * FQ__IX_CDIR + 1);
    for (ti = 0; ti < nt; ti++) {   /* layout: widths, then where each type's columns go */
        const fq__ttype *ty = &t->types[ti];
        uint8_t *e = dir + (size_t)ti * FQ__IX_CDIR;
        uint64_t n = b->tn[ti];
        uint32_t cw = n == b->tmax[ti] * b->ncand ? 0 : fq__width_of(b->tmax[ti]);
        uint32_t vw = ty->fmt == FQ_TYPE_BLOB ? 4 : ty->size;
        uint32_t fl = (ty->fmt == FQ_TYPE_POINTER ? FQ__COL_PTR : 0) | (ty->fmt == FQ_TYPE_BLOB ? FQ__COL_BLOB : 0);
        base[ti] = total;
        rcur[ti] = 0;
        if (!n) continue;
        fq__put_w(e, 0, 8, n);
        fq__put_w(e + 8, 0, 8, total);
        fq__put_w(e + 16, 0, 4, cw);
        fq__put_w(e + 20, 0, 4, cw ? 0 : b->tmax[ti]);
        e[24] = (uint8_t)sw;
        e[25] = (uint8_t)nw;
        e[26] = (uint8_t)vw;
        e[27] = (uint8_t)fl;
        total += fq__col_lens(b->ncand, n, cw, sw, nw, vw, fl, lens);
        *nrec += n;
    }
    if (total > ((size_t)-1) / 2 || !(data = (uint8_t *)FRAMES_MALLOC((size_t)(total ? total : 1), b->ctx))) {
        FRAMES_FREE(dir, b->ctx);
        FRAMES_FREE(base, b->ctx);
        return -1;
    }
    memset(data, 0, (size_t)total);
    if (!(cols = (fq__col *)FRAMES_MALLOC((size_t)(nt ? nt : 1) * sizeof *cols, b->ctx))) {
        FRAMES_FREE(dir, b->ctx);
        FRAMES_FREE(base, b->ctx);
        FRAMES_FREE(data, b->ctx);
        return -1;
    }
    for (ti = 0; ti < nt; ti++) {   /* where each column of each type starts */
        const uint8_t *e = dir + (size_t)ti * FQ__IX_CDIR;
        fq__col *c = &cols[ti];
        uint8_t *at = data + base[ti], **dst[7];
        int k;
        memset(c, 0, sizeof *c);
        c->n = b->tn[ti];
        if (!c->n) continue;
        c->cw = frames__le32(e + 16);
        c->c = frames__le32(e + 20);
        c->vw = e[26];
        c->flags = e[27];
        fq__col_lens(b->ncand, c->n, c->cw, sw, nw, c->vw, c->flags, lens);
        dst[0] = (uint8_t **)&c->cnt, dst[1] = (uint8_t **)&c->mark, dst[2] = (uint8_t **)&c->slot;
        dst[3] = (uint8_t **)&c->name, dst[4] = (uint8_t **)&c->val, dst[5] = (uint8_t **)&c->psize;
        dst[6] = (uint8_t **)&c->pvalid;
        for (k = 0; k < 7; k++) {
            *dst[k] = at;
            at += (lens[k] + 7) / 8 * 8;
        }
    }
    if ((size_t)b->nstmt * nt <= ((size_t)1 << 22) && b->ncand == b->npoints && b->nstmt < 0xffffffffu) {
        if (fq__ixb_fill_points(b, t, post, rank, cols, sw, nw) < 0) {
            FRAMES_FREE(cols, b->ctx);
            FRAMES_FREE(dir, b->ctx);
            FRAMES_FREE(base, b->ctx);
            FRAMES_FREE(data, b->ctx);
            return -1;
        }
    } else
        fq__ixb_fill_postings(b, t, post, cols, rcur, sw, nw);
    FRAMES_FREE(cols, b->ctx);
    FRAMES_FREE(base, b->ctx);
    *dirp = dir;
    *datap = data;
    *datalen = total;
    return 0;
}

/* The built index to the sink: header, then the sections in order. */
static int fq__ixb_write(fq__ixb *b, const fq_trace *t, fq__ixw *w, fq_index_info *info, frames_error *err) {
    uint64_t len[FQ__XS_N], k, nb = (b->npoints + FQ__IX_BLOCK - 1) / FQ__IX_BLOCK, *start = NULL;
    uint64_t *post = NULL, datalen = 0, nrec = 0;
    uint32_t pw = b->npoints > 0xffffffffu ? 8 : 4, *rank = NULL;
    uint8_t h[FQ__IX_HDR], *dir = NULL, *data = NULL;
    fq__ixs *order = NULL;
    size_t i;
    int tdb = t->format == FQ_TRACE_TRACEDB, rc = FRAMES_OK;
    order = (fq__ixs *)FRAMES_MALLOC((size_t)(b->nstmt ? b->nstmt : 1) * sizeof *order, b->ctx);
    start = (uint64_t *)FRAMES_MALLOC((size_t)(b->nstmt ? b->nstmt : 1) * sizeof *start, b->ctx);
    post = (uint64_t *)FRAMES_MALLOC((size_t)(b->ncand ? b->ncand : 1) * sizeof *post, b->ctx);
    rank = (uint32_t *)FRAMES_MALLOC((size_t)(b->nstmt ? b->nstmt : 1) * sizeof *rank, b->ctx);
    if (!order || !start || !post || !rank) {
        rc = fq__oom(err);
        goto done;
    }
    for (i = 0; i < b->nstmt; i++) {
        order[i].val = b->sval[i];
        order[i].id = (uint32_t)i;
    }
    qsort(order, (size_t)b->nstmt, sizeof *order, fq__ixs_cmp);
    for (i = 0, k = 0; i < b->nstmt; i++) {   /* start: first posting of each id */
        start[order[i].id] = k;
        rank[order[i].id] = (uint32_t)i;
        k += b->scount[order[i].id];
    }
    /* postings: every point appended to its statement's list, in point order */
    for (k = 0; k < b->npoints; k++)
        if (b->sid[k] != 0xffffffffu) post[start[b->sid[k]]++] = k;
    for (i = 0; i < b->nstmt; i++) start[order[i].id] -= b->scount[order[i].id];
    if (tdb && fq__ixb_columns(b, t, post, rank, &dir, &data, &datalen, &nrec) < 0) {
        rc = fq__oom(err);
        goto done;
    }
    len[FQ__XS_BLOCKS] = nb * 32;
    len[FQ__XS_ODELTA] = b->npoints * 4;
    len[FQ__XS_PDELTA] = tdb ? b->npoints * 4 : 0;
    len[FQ__XS_PSIZE] = b->nptr * 8;
    len[FQ__XS_PVALID] = (b->nptr + 63) / 64 * 8;
    len[FQ__XS_STMTS] = (b->nstmt + 1) * 16;
    len[FQ__XS_POST] = b->ncand * pw;
    len[FQ__XS_COLDIR] = tdb ? (uint64_t)b->ntypes * FQ__IX_CDIR : 0;
    len[FQ__XS_COLDATA] = tdb ? datalen : 0;
    fq__ixb_header(b, t, len, h);
    fq__ixw_bytes(w, h, FQ__IX_HDR);
    for (k = 0; k < b->npoints; k += FQ__IX_BLOCK) {
        const uint64_t *blk = b->blocks + 4 * (k / FQ__IX_BLOCK);
        for (i = 0; i < 4; i++) fq__ixw_le(w, blk[i], 8);
    }
    for (k = 0; k < b->npoints; k++) fq__ixw_le(w, b->odelta[k], 4);
    fq__ixw_pad(w);
    if (tdb) {
        for (k = 0; k < b->npoints; k++) fq__ixw_le(w, b->pdelta[k], 4);
        fq__ixw_pad(w);
    }
    if (b->nptr) {   /* the buffer sizes the trace's in-memory index computed */
        uint64_t sz;
        for (k = 0; k < b->nptr; k++) {
            fq__ptr_size(t, k, &sz);
            fq__ixw_le(w, sz, 8);
        }
        for (k = 0; k < b->nptr; k += 64) {
            uint64_t bits = 0, j;
            for (j = 0; j < 64 && k + j < b->nptr; j++) bits |= (uint64_t)fq__ptr_size(t, k + j, &sz) << j;
            fq__ixw_le(w, bits, 8);
        }
    }
    for (i = 0; i < b->nstmt; i++) {
        fq__ixw_le(w, order[i].val, 8);
        fq__ixw_le(w, start[order[i].id], 8);
    }
    fq__ixw_le(w, 0, 8);
    fq__ixw_le(w, b->ncand, 8);
    for (k = 0; k < b->ncand; k++) fq__ixw_le(w, post[k], pw);
    fq__ixw_pad(w);
    if (tdb) {
        fq__ixw_bytes(w, dir, (size_t)len[FQ__XS_COLDIR]);
        fq__ixw_pad(w);
        fq__ixw_bytes(w, data, (size_t)datalen);
    }
    fq__ixw_flush(w);
    if (w->rc < 0) rc = fq__fail(err, FRAMES_E_IO, w->total, FRAMES_NO_POS, "cannot write the index");
    else if (info) {
        info->points = b->npoints;
        info->candidates = b->ncand;
        info->statements = b->nstmt;
        info->pointers = b->nptr;
        info->records = nrec;
        info->bytes = w->total;
    }
done:
    FRAMES_FREE(order, b->ctx);
    FRAMES_FREE(start, b->ctx);
    FRAMES_FREE(post, b->ctx);
    FRAMES_FREE(rank, b->ctx);
    FRAMES_FREE(dir, b->ctx);
    FRAMES_FREE(data, b->ctx);
    return rc;
}

FRAMES_QUERY_DEF void fq_index_progress(fq_trace *t, void (*fn)(void *ctx, uint64_t done, uint64_t total), void *ctx) {
    t->progress = fn;
    t->progress_ctx = ctx;
}

FRAMES_QUERY_DEF int fq_index_build(fq_trace *t, const frames_sink *sink, fq_index_info *info, frames_error *err) {
    fq__ixb b;
    fq__ixw *w;
    int rc;
    frames__clear_error(err);
    if (t->ix)
        return fq__fail(err, FRAMES_E_STATE, FRAMES_NO_POS, FRAMES_NO_POS,
                        "the trace uses an index already: build from a trace opened without one");
    if (t->format == FQ_TRACE_TRACEDB) {   /* load in steps: report them, release the pages */
        uint64_t upto, avail, released = 0;
        int done = 0;
        for (upto = FQ__PROGRESS_EVERY * 4; !done; upto += FQ__PROGRESS_EVERY * 4) {
            if ((rc = fq__ensure(t, upto, &avail, &done, err)) < 0) return rc;
            fq__build_progress(t, 0, t->idx_off, t->size);
            fq__release_behind(t, &released, done ? UINT64_MAX : t->idx_off);
        }
    }
    if ((rc = fq_trace_load(t, err)) < 0) return rc;
    fq__build_progress(t, 0, 1, 1);
    if (fq__ixb_init(&b, t, t->npoints) < 0) {
        fq__ixb_free(&b);
        return fq__oom(err);
    }
    rc = t->format == FQ_TRACE_TRACEDB ? fq__ixb_tdb(&b, t, err) : fq__ixb_frames(&b, t, err);
    if (rc >= 0) {
        if (!(w = (fq__ixw *)FRAMES_MALLOC(sizeof *w, t->ctx))) rc = fq__oom(err);
        else {
            w->sink = sink;
            w->n = 0;
            w->total = 0;
            w->rc = 0;
            rc = fq__ixb_write(&b, t, w, info, err);
            if (rc >= 0 && sink->flush && sink->flush(sink->ctx) < 0)
                rc = fq__fail(err, FRAMES_E_IO, FRAMES_NO_POS, FRAMES_NO_POS, "cannot write the index");
            if (rc >= 0) fq__build_progress(t, 2, 1, 1);
            FRAMES_FREE(w, t->ctx);
        }
    }
    fq__ixb_free(&b);
    return rc;
}

/* --------------------------------------------------------------------------------------
   saving and attaching
   -------------------------------------------------------------------------------------- */

#ifndef FRAMES_NO_POSIX
static int fq__fd_write(void *ctx, const void *data, size_t len) {
    int fd = *(const int *)ctx;
    const uint8_t *p = (const uint8_t *)data;
    while (len) {
        long long k = (long long)write(fd, p, len);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return -1;
        p += k;
        len -= (size_t)k;
    }
    return 0;
}
#else
static int fq__file_write(void *ctx, const void *data, size_t len) {
    return fwrite(data, 1, len, (FILE *)ctx) == len ? 0 : -1;
}
#endif

FRAMES_QUERY_DEF int fq_index_save(fq_trace *t, const char *path, fq_index_info *info, frames_error *err) {
    size_t n = strlen(path) + 48;
    char *tmp = (char *)FRAMES_MALLOC(n, t->ctx);
    frames_sink sink;
    int rc, i;
    frames__clear_error(err);
    if (!tmp) return fq__oom(err);
    memset(&sink, 0, sizeof sink);
#ifndef FRAMES_NO_POSIX
    {
        int fd = -1;
        struct stat st;
        /* the new index is renamed over path: never over a device (/dev/null) or a FIFO */
        if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
            FRAMES_FREE(tmp, t->ctx);
            return fq__fail(err, FRAMES_E_IO, FRAMES_NO_POS, FRAMES_NO_POS,
                            "%s is not a regular file: an index cannot replace it", path);
        }
        for (i = 0; i < 100 && fd < 0; i++) {   /* a new file in the same directory */
            snprintf(tmp, n, "%s.tmp%ld-%d", path, (long)getpid(), i);
            fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL, 0666);
            if (fd < 0 && errno != EEXIST) break;
        }
        if (fd < 0) {
            rc = fq__fail(err, FRAMES_E_IO, FRAMES_NO_POS, FRAMES_NO_POS, "cannot create %s: %s", tmp,
                          frames__syserr());
            FRAMES_FREE(tmp, t->ctx);
            return rc;
        }
        sink.ctx = &fd;
        sink.write = fq__fd_write;
        rc = fq_index_build(t, &sink, info, err);
        if (rc >= 0 && fsync(fd) != 0)
            rc = fq__fail(err, FRAMES_E_IO, FRAMES_NO_POS, FRAMES_NO_POS, "cannot write %s: %s", tmp,
                          frames__syserr());
        if (close(fd) != 0 && rc >= 0)
            rc = fq__fail(err, FRAMES_E_IO, FRAMES_NO_POS, FRAMES_NO_POS, "cannot write %s: %s", tmp,
                          frames__syserr());
    }
#else
    {
        FILE *f;
        (void)i;
        snprintf(tmp, n, "%s.tmp", path);
        if (!(f = fopen(tmp, "wb"))) {
            rc = fq__fail(err, FRAMES_E_IO, FRAMES_NO_POS, FRAMES_NO_POS, "cannot create %s: %s", tmp,
                          frames__syserr());
            FRAMES_FREE(tmp, t->ctx);
            return rc;
        }
        sink.ctx = f;
        sink.write = fq__file_write;
        rc = fq_index_build(t, &sink, info, err);
        if (fclose(f) != 0 && rc >= 0)
            rc = fq__fail(err, FRAMES_E_IO, FRAMES_NO_POS, FRAMES_NO_POS, "cannot write %s", tmp);
        if (rc >= 0) remove(path);   /* rename does not replace files everywhere */
    }
#endif
    if (rc >= 0 && rename(tmp, path) != 0)
        rc = fq__fail(err, FRAMES_E_IO, FRAMES_NO_POS, FRAMES_NO_POS, "cannot rename %s to %s: %s", tmp,
                      path, frames__syserr());
    if (rc < 0) remove(tmp);
    FRAMES_FREE(tmp, t->ctx);
    return rc;
}

static int fq__ix_bad(frames_error *err, int code, const char *fmt, ...) FRAMES__PRINTF(3, 4);
static int fq__ix_bad(frames_error *err, int code, const char *fmt, ...) {
    char what[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return fq__fail(err, code, FRAMES_NO_POS, FRAMES_NO_POS, "%s%s", what,
                    code == FQ_E_STALE ? " (rebuild it)" : "");
}

/* The column directory of x against t's types and the data section's length: widths
   that fit the type, counts that fit the trace, every column inside the data. */
static int fq__ix_columns(const fq_trace *t, fq__ix *x, uint64_t datalen, frames_error *err) {
    const uint8_t *dir = x->sec[FQ__XS_COLDIR], *data = x->sec[FQ__XS_COLDATA];
    uint64_t total = 0, lens[7];
    uint32_t ti, k;
    x->cols = (fq__col *)FRAMES_MALLOC((t->ntypes ? t->ntypes : 1) * sizeof(fq__col), t->ctx);
    if (!x->cols) return fq__oom(err);
    memset(x->cols, 0, (t->ntypes ? t->ntypes : 1) * sizeof(fq__col));
    x->ncols = t->ntypes;
    for (ti = 0; ti < t->ntypes; ti++) {
        const uint8_t *e = dir + (uint64_t)ti * FQ__IX_CDIR;
        const fq__ttype *ty = &t->types[ti];
        fq__col *c = &x->cols[ti];
        uint64_t off = frames__le64(e + 8), need;
        uint32_t fl = e[27], vw = ty->fmt == FQ_TYPE_BLOB ? 4 : ty->size;
        const uint8_t *at;
        c->n = frames__le64(e);
        if (!c->n) continue;
        c->cw = frames__le32(e + 16);
        c->c = frames__le32(e + 20);
        c->sw = e[24];
        c->nw = e[25];
        c->vw = e[26];
        c->flags = (uint8_t)fl;
        if (c->n > t->size / 9 || total + c->n > t->size / 9 || (!ty->elen && !ty->varlen) || c->vw != vw ||
            fl != ((ty->fmt == FQ_TYPE_POINTER ? FQ__COL_PTR : 0) | (ty->fmt == FQ_TYPE_BLOB ? FQ__COL_BLOB : 0)) ||
            (c->cw != 0 && c->cw != 1 && c->cw != 2 && c->cw != 4) || (c->cw && c->c) ||
            (!c->cw && (c->c > c->n || (uint64_t)c->c * x->ncand != c->n)) ||
            (c->sw != 1 && c->sw != 2 && c->sw != 4) || (c->nw != 1 && c->nw != 2 && c->nw != 4) ||
            frames__le32(e + 28) != 0)
            return fq__ix_bad(err, FRAMES_E_FORMAT, "the index's column directory is damaged (type %u)", ti);
        need = fq__col_lens(x->ncand, c->n, c->cw, c->sw, c->nw, c->vw, fl, lens);
        if (off % 8 || off > datalen || need > datalen - off)
            return fq__ix_bad(err, FRAMES_E_FORMAT, "the index's columns are cut short (type %u)", ti);
        total += c->n;
        at = data + off;
        for (k = 0; k < 7; k++) {
            const uint8_t **dst[7];
            dst[0] = &c->cnt, dst[1] = &c->mark, dst[2] = &c->slot, dst[3] = &c->name;
            dst[4] = &c->val, dst[5] = &c->psize, dst[6] = &c->pvalid;
            *dst[k] = lens[k] ? at : NULL;
            at += (lens[k] + 7) / 8 * 8;
        }
    }
    x->nrec = total;
    return FRAMES_OK;
}

/* The statement table as the lookups rely on it: statements ascending, each one's
   postings starting where the one before's do or later, from 0 to the last entry's
   (0, candidates). One pass over nstmt entries (a damaged start moved a statement's
   range: its listing lost points while the column kernel counted them all). */
static int fq__ix_stmts_ok(const fq__ix *x) {
    uint64_t i, first = 0;
    if (fq__ix_u64(x, FQ__XS_STMTS, 2 * x->nstmt) != 0 || fq__ix_u64(x, FQ__XS_STMTS, 2 * x->nstmt + 1) != x->ncand)
        return 0;
    for (i = 0; i < x->nstmt; i++) {
        uint64_t f = fq__ix_u64(x, FQ__XS_STMTS, 2 * i + 1);
        if ((i == 0 ? f != 0 : f < first) || f > x->ncand ||
            (i > 0 && fq__ix_u64(x, FQ__XS_STMTS, 2 * i) <= fq__ix_u64(x, FQ__XS_STMTS, 2 * i - 2)))
            return 0;
        first = f;
    }
    return 1;
}

/* Check the index in x against t (header, binding, counts, section bounds) and attach it. */
static int fq__ix_attach(fq_trace *t, fq__ix *x, frames_error *err) {
    const uint8_t *h = x->data;
    static const char *const fmt_names[3] = {"?", "frames", "trace-db"};
    uint64_t want[FQ__XS_N], headlen, tsz;
    uint32_t fmt;
    int i, tdb = t->format == FQ_TRACE_TRACEDB;
    if (x->size < FQ__IX_HDR || memcmp(h, FQ__IX_MAGIC, 8) != 0)
        return fq__ix_bad(err, FRAMES_E_FORMAT, "not a frames query index");
    if (frames__le32(h + 8) != FQ__IX_VERSION)
        return fq__ix_bad(err, FQ_E_STALE, "index format version %u (this library reads version %u)",
                          frames__le32(h + 8), FQ__IX_VERSION);
    if (frames__le32(h + 12) != FQ__IX_HDR || frames__le64(h + 504) != fq__hash64(0, h, 504))
        return fq__ix_bad(err, FRAMES_E_FORMAT,
                          "the index header is damaged or from another version (rebuild it)");
    fmt = frames__le32(h + 16);
    x->flags = frames__le32(h + 20);
    if (fmt != (uint32_t)t->format)
        return fq__ix_bad(err, FQ_E_STALE, "the index is of a %s trace, this is a %s trace",
                          fmt_names[fmt < 3 ? fmt : 0], fmt_names[t->format]);
    tsz = frames__le64(h + 24);
    if (tsz != t->size)
        return fq__ix_bad(err, FQ_E_STALE, "the index is of a trace of %llu bytes, this one has %llu",
                          (unsigned long long)tsz, (unsigned long long)t->size);
    if ((x->flags & FQ__IX_MTIME) && t->have_mtime &&
        (frames__le64(h + 32) != (uint64_t)t->mtime_s || frames__le64(h + 40) != (uint64_t)t->mtime_ns))
        return fq__ix_bad(err, FQ_E_STALE, "the trace was modified after the index was built");
    headlen = fq__ix_head_len(t);
    if (frames__le64(h + 48) != headlen || frames__le64(h + 56) != fq__hash64(0, t->data, headlen))
        return fq__ix_bad(err, FQ_E_STALE, "the index is of a trace with another header");
    if (frames__le64(h + 64) != fq__ix_sample_hash(t))
        return fq__ix_bad(err, FQ_E_STALE, "the index is of a trace with other contents");
    if (tdb && frames__le64(h + 136) != t->points_off)
        return fq__ix_bad(err, FQ_E_STALE, "the index is of a trace with another header");
    x->npoints = frames__le64(h + 72);
    x->ncand = frames__le64(h + 80);
    x->nptr = frames__le64(h + 88);
    x->nstmt = frames__le64(h + 96);
    x->nostmt = frames__le64(h + 104);
    x->block = frames__le32(h + 112);
    x->pwidth = frames__le32(h + 116);
    /* every count is bounded by the trace: a point takes a byte at least, a pointer 9 */
    if (x->npoints > t->size || x->ncand > x->npoints || x->nptr > t->size / 9 ||
        x->nstmt > x->ncand || x->nostmt > x->npoints || x->block == 0 || x->block > 65536 ||
        (x->pwidth != 4 && x->pwidth != 8) || (x->pwidth == 4 && x->npoints > 0x100000000ull) ||
        (!tdb && x->nptr) || memchr(h + FQ__IX_MSG, 0, 200) == NULL || frames__le64(h + 128) > t->size ||
        (tdb && x->ncand != x->npoints))
        return fq__ix_bad(err, FRAMES_E_FORMAT, "the index header is inconsistent");
    if (!tdb && x->npoints != t->npoints)
        return fq__ix_bad(err, FQ_E_STALE, "the index has %llu frames, the trace %llu",
                          (unsigned long long)x->npoints, (unsigned long long)t->npoints);
    if (x->nostmt && !(x->flags & FQ__IX_INHERIT) != !(t->oflags & FQ_OPEN_INHERIT_STMT))
        return fq__ix_bad(err, FQ_E_STALE, "the index was built %s FQ_OPEN_INHERIT_STMT and %llu points "
                          "have no STATEMENT_ID", (x->flags & FQ__IX_INHERIT) ? "with" : "without",
                          (unsigned long long)x->nostmt);
    x->nblocks = (x->npoints + x->block - 1) / x->block;
    want[FQ__XS_BLOCKS] = x->nblocks * 32;
    want[FQ__XS_ODELTA] = x->npoints * 4;
    want[FQ__XS_PDELTA] = tdb ? x->npoints * 4 : 0;
    want[FQ__XS_PSIZE] = x->nptr * 8;
    want[FQ__XS_PVALID] = (x->nptr + 63) / 64 * 8;
    want[FQ__XS_STMTS] = (x->nstmt + 1) * 16;
    want[FQ__XS_POST] = x->ncand * x->pwidth;
    want[FQ__XS_COLDIR] = tdb ? (uint64_t)t->ntypes * FQ__IX_CDIR : 0;
    want[FQ__XS_COLDATA] = frames__le64(h + 152 + 16 * FQ__XS_COLDATA);   /* checked with the directory */
    if (!tdb && want[FQ__XS_COLDATA]) want[FQ__XS_COLDATA] = 0;
    for (i = 0; i < FQ__XS_N; i++) {   /* the counts are below 2^61: no overflow */
        uint64_t off = frames__le64(h + 144 + 16 * i), len = frames__le64(h + 152 + 16 * i);
        if (len != want[i] || (len && (off % 8 || off < FQ__IX_HDR || off > x->size || len > x->size - off)))
            return fq__ix_bad(err, FRAMES_E_FORMAT, "the index is damaged or cut short (section %d)", i);
        x->sec[i] = h + (len ? off : 0);
    }
    if (!fq__ix_stmts_ok(x))
        return fq__ix_bad(err, FRAMES_E_FORMAT, "the index's statement table is damaged");
    if (tdb && (i = fq__ix_columns(t, x, want[FQ__XS_COLDATA], err)) < 0) return i;
    if (tdb) {
        FQ__TLOCK(t);
        if (t->idx_busy) {
            FQ__TUNLOCK(t);
            return fq__ix_bad(err, FRAMES_E_STATE, "a query is indexing the trace: attach the index first");
        }
        t->ix = x;
        t->npoints = x->npoints;
        t->nptr = x->nptr;
        t->idx_done = 1;
        t->info.points = x->npoints;
        t->info.truncated = frames__le32(h + 120) != 0;
        t->info.damaged = frames__le32(h + 124) != 0;
        t->info.cut_offset = frames__le64(h + 128);
        memcpy(t->info.message, h + FQ__IX_MSG, sizeof t->info.message < 200 ? sizeof t->info.message : 200);
        t->info.message[sizeof t->info.message - 1] = 0;
        fq__mm_free(&t->idx_mm);
        FQ__TUNLOCK(t);
    } else t->ix = x;
    return FRAMES_OK;
}

static int fq__ix_new(fq_trace *t, fq__ix **out, frames_error *err) {
    if (t->ix) return fq__fail(err, FRAMES_E_STATE, FRAMES_NO_POS, FRAMES_NO_POS, "the trace has an index already");
    if (!(*out = (fq__ix *)FRAMES_MALLOC(sizeof **out, t->ctx))) return fq__oom(err);
    memset(*out, 0, sizeof **out);
    return FRAMES_OK;
}

FRAMES_QUERY_DEF int fq_index_attach(fq_trace *t, const void *data, size_t size, frames_error *err) {
    fq__ix *x;
    int rc;
    frames__clear_error(err);
    if ((rc = fq__ix_new(t, &x, err)) < 0) return rc;
    x->data = size ? (const uint8_t *)data : (const uint8_t *)"";
    x->size = size;
    if ((rc = fq__ix_attach(t, x, err)) < 0) fq__ix_free(x, t->ctx);
    return rc;
}

FRAMES_QUERY_DEF int fq_index_open(fq_trace *t, const char *path, frames_error *err) {
    fq__ix *x;
    int rc;
    frames__clear_error(err);
    if ((rc = fq__ix_new(t, &x, err)) < 0) return rc;
#ifndef FRAMES_NO_POSIX
    {
        struct stat st;
        int fd = open(path, O_RDONLY);
        if (fd < 0) rc = fq__fail(err, FRAMES_E_IO, FRAMES_NO_POS, FRAMES_NO_POS, "cannot open %s: %s", path,
                                  frames__syserr());
        else if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
            rc = fq__fail(err, FRAMES_E_IO, FRAMES_NO_POS, FRAMES_NO_POS, "%s is not a regular file", path);
        else if (st.st_size > 0) {
            void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
            if (m == MAP_FAILED)
                rc = fq__fail(err, FRAMES_E_IO, FRAMES_NO_POS, FRAMES_NO_POS, "cannot map %s: %s", path,
                              frames__syserr());
            else {
                x->map = m;
                x->maplen = (size_t)st.st_size;
                x->data = (const uint8_t *)m;
                x->size = (uint64_t)st.st_size;
            }
        } else x->data = (const uint8_t *)"";
        if (fd >= 0) close(fd);
    }
#else
    {
        fq_trace tmp;   /* fq__read_all fills a trace's buffer fields */
        FILE *f = fopen(path, "rb");
        memset(&tmp, 0, sizeof tmp);
        tmp.ctx = t->ctx;
        if (!f) rc = fq__fail(err, FRAMES_E_IO, FRAMES_NO_POS, FRAMES_NO_POS, "cannot open %s: %s", path,
                              frames__syserr());
        else {
            rc = fq__read_all(&tmp, 0, f, err, path);
            fclose(f);
            x->owned = tmp.owned;
            x->data = tmp.data;
            x->size = tmp.size;
        }
    }
#endif
    if (rc >= 0) rc = fq__ix_attach(t, x, err);
    if (rc < 0) fq__ix_free(x, t->ctx);
    return rc;
}

FRAMES_QUERY_DEF int fq_index_info_get(const fq_trace *t, fq_index_info *info) {
    const fq__ix *x = t->ix;
    memset(info, 0, sizeof *info);
    if (!x) return 0;
    info->points = x->npoints;
    info->candidates = x->ncand;
    info->statements = x->nstmt;
    info->pointers = x->nptr;
    info->bytes = x->size;
    info->records = x->nrec;
    return 1;
}

/* --------------------------------------------------------------------------------------
   compiling
   -------------------------------------------------------------------------------------- */

typedef struct fq__ptype {   /* trace-db type as the hot loop sees it */
    uint64_t mask;         /* free variables that admit it */
    uint32_t size;         /* fixed size (varlen: read the length) */
    uint8_t varlen, pointer, pad[2];
    uint32_t elen;         /* whole VARIABLE entry when its length is fixed, else 0 */
    uint32_t pad2;
} fq__ptype;

/* A conjunct of the hard predicate. Comparisons of values and integer constants carry
   what the hot loop needs to decide them without walking nodes. */
typedef struct fq__conj {
    uint32_t node;
    uint8_t mask;          /* fast: bit c+1 set when the comparison outcome c makes it true; 0: slow */
    uint8_t av, bv;        /* operand variable, or FQ__KONST for the constant */
    uint8_t kna, knb;      /* constants: sign */
    uint64_t ka, kb;       /* constants: magnitude */
} fq__conj;
#define FQ__KONST 0xff

typedef struct fq__pat {   /* frames operand type pattern */
    uint8_t kinds;         /* FQ_B_REG | FQ_B_MEM */
    int32_t bits;          /* -1: any width */
} fq__pat;

struct fq_plan {
    void *ctx;
    fq_trace *t;
    int format;
    uint32_t flags;
    unsigned nvars;
    char **var_names;
    fq__node *nodes;
    size_t nnodes;
    uint32_t *kids;
    char *strs;
    uint64_t *tmask;       /* trace-db: per type index, the variables that admit it */
    struct fq__ptype *ptypes;   /* trace-db: the same with what the walk needs */
    fq__pat *pats;         /* frames: patterns of variable i at pat_off[i] .. pat_off[i+1] */
    uint32_t pat_off[FQ_MAX_VARS + 1];
    uint64_t any_reg_bits, any_mem_bits;   /* variables with a wildcard (fast path) */
    uint32_t *soft;
    size_t nsoft;
    struct fq__conj *conj; /* conjuncts of the hard predicate, by the level they need */
    uint32_t conj_off[FQ_MAX_VARS + 2];   /* level L at [conj_off[L], conj_off[L+1]);
                                             level nvars: no variable (once per point) */
    uint64_t mask, stmt;
    uint64_t *pcs;
    size_t npcs;
    uint64_t *tids;
    size_t ntids;
    size_t nlimbs;         /* integer storage per worker */
};

FRAMES_QUERY_DEF void fq_plan_close(fq_plan *p) {
    void *ctx;
    unsigned i;
    if (!p) return;
    ctx = p->ctx;
    if (p->var_names)
        for (i = 0; i < p->nvars; i++) FRAMES_FREE(p->var_names[i], ctx);
    FRAMES_FREE(p->var_names, ctx);
    FRAMES_FREE(p->nodes, ctx);
    FRAMES_FREE(p->kids, ctx);
    FRAMES_FREE(p->strs, ctx);
    FRAMES_FREE(p->tmask, ctx);
    FRAMES_FREE(p->ptypes, ctx);
    FRAMES_FREE(p->pats, ctx);
    FRAMES_FREE(p->soft, ctx);
    FRAMES_FREE(p->conj, ctx);
    FRAMES_FREE(p->pcs, ctx);
    FRAMES_FREE(p->tids, ctx);
    FRAMES_FREE(p, ctx);
}

/* Next comma-separated item of a type list, trimmed. */
static int fq__next_type(const char **s, const char **b, size_t *n) {
    const char *p = *s, *e;
    if (!*p) return 0;
    e = strchr(p, ',');
    if (!e) e = p + strlen(p);
    *s = *e ? e + 1 : e;
    while (p < e && (*p == ' ' || *p == '\t')) p++;
    while (e > p && (e[-1] == ' ' || e[-1] == '\t')) e--;
    *b = p;
    *n = (size_t)(e - p);
    return 1;
}

static int fq__frames_pattern(const char *b, size_t n, fq__pat *pat) {
    size_t k = 3;
    long bits = 0;
    if (n == 1 && b[0] == '*') {
        pat->kinds = FQ_B_REG | FQ_B_MEM;
        pat->bits = -1;
        return 0;
    }
    if (n < 3 || (memcmp(b, "reg", 3) && memcmp(b, "mem", 3))) return -1;
    pat->kinds = b[0] == 'r' ? FQ_B_REG : FQ_B_MEM;
    if (n == 3 || (n == 4 && b[3] == '*')) {
        pat->bits = -1;
        return 0;
    }
    for (; k < n; k++) {
        if (b[k] < '0' || b[k] > '9' || bits > 214748364) return -1;
        bits = bits * 10 + (b[k] - '0');
    }
    if (bits <= 0 || bits > 2147483647) return -1;
    pat->bits = (int32_t)bits;
    return 0;
}

static int fq__resolve_types(fq_plan *p, const fq_query *q, frames_error *err) {
    fq_trace *t = p->t;
    unsigned v;
    size_t npat = 0, cappat = 0;
    if (t->format == FQ_TRACE_TRACEDB) {
        p->tmask = (uint64_t *)FRAMES_MALLOC((t->ntypes ? t->ntypes : 1) * sizeof(uint64_t), p->ctx);
        if (!p->tmask) return fq__oom(err);
        memset(p->tmask, 0, (t->ntypes ? t->ntypes : 1) * sizeof(uint64_t));
    }
    for (v = 0; v < q->nvars; v++) {
        const char *s = q->vars[v].types, *b;
        size_t n;
        p->pat_off[v] = (uint32_t)npat;
        while (fq__next_type(&s, &b, &n)) {
            if (!n) return fq__fail(err, FQ_E_QUERY, FRAMES_NO_POS, FRAMES_NO_POS,
                                    "variable '%s': empty type name in '%s'", q->vars[v].name,
                                    q->vars[v].types);
            if (t->format == FQ_TRACE_TRACEDB) {
                uint32_t ti;
                int found = 0;
                for (ti = 0; ti < t->ntypes; ti++) {
                    uint32_t nm = t->types[ti].name;
                    if ((n == 1 && b[0] == '*') ||
                        (t->name_len[nm] == n && !memcmp(t->data + t->name_off[nm], b, n))) {
                        p->tmask[ti] |= 1ull << v;
                        found = 1;
                    }
                }
                if (!found) {
                    char list[100];
                    size_t ln = 0;
                    list[0] = 0;
                    for (ti = 0; ti < t->ntypes && ln < sizeof list; ti++)
                        ln += (size_t)snprintf(list + ln, sizeof list - ln, "%s%s", ti ? ", " : "",
                                               fq_trace_type_name(t, ti));
                    return fq__fail(err, FQ_E_QUERY, FRAMES_NO_POS, FRAMES_NO_POS,
                                    "variable '%s': the trace has no type '%.*s' (types: %s)",
                                    q->vars[v].name, (int)(n > 40 ? 40 : n), b, t->ntypes ? list : "none");
                }
            } else {
                fq__pat pat;
                if (fq__frames_pattern(b, n, &pat) < 0)
                    return fq__fail(err, FQ_E_QUERY, FRAMES_NO_POS, FRAMES_NO_POS,
                                    "variable '%s': '%.*s' is not an operand type "
                                    "(regN, memN, reg*, mem*, *)",
                                    q->vars[v].name, (int)(n > 40 ? 40 : n), b);
                if (FRAMES__GROW(p->pats, cappat, npat + 1, p->ctx) < 0)
                    return fq__oom(err);
                p->pats[npat++] = pat;
                if (pat.bits < 0 && (pat.kinds & FQ_B_REG)) p->any_reg_bits |= 1ull << v;
                if (pat.bits < 0 && (pat.kinds & FQ_B_MEM)) p->any_mem_bits |= 1ull << v;
            }
        }
        if (s == q->vars[v].types)
            return fq__fail(err, FQ_E_QUERY, FRAMES_NO_POS, FRAMES_NO_POS, "variable '%s' has no type",
                            q->vars[v].name);
    }
    p->pat_off[q->nvars] = (uint32_t)npat;
    if (t->format == FQ_TRACE_TRACEDB) {
        uint32_t ti;
        p->ptypes = (fq__ptype *)FRAMES_MALLOC((t->ntypes ? t->ntypes : 1) * sizeof(fq__ptype), p->ctx);
        if (!p->ptypes) return fq__oom(err);
        for (ti = 0; ti < t->ntypes; ti++) {
            memset(&p->ptypes[ti], 0, sizeof p->ptypes[ti]);
            p->ptypes[ti].mask = p->tmask[ti];
            p->ptypes[ti].size = t->types[ti].size;
            p->ptypes[ti].varlen = (uint8_t)t->types[ti].varlen;
            p->ptypes[ti].pointer = t->types[ti].fmt == FQ_TYPE_POINTER;
            p->ptypes[ti].elen = t->types[ti].elen;
        }
    }
    return FRAMES_OK;
}

/* Conjuncts of an AND tree (nested ANDs flattened) into list[*n]. */
static int fq__conjuncts(const fq_plan *p, uint32_t ni, uint32_t *list, size_t *n, size_t cap) {
    const fq__node *nd = &p->nodes[ni];
    uint32_t i;
    if (nd->op == FQ_OP_AND) {
        for (i = 0; i < nd->nkids; i++)
            if (fq__conjuncts(p, p->kids[nd->kid0 + i], list, n, cap) < 0) return -1;
        return 0;
    }
    if (*n >= cap) return -1;
    list[(*n)++] = ni;
    return 0;
}

static void fq__make_conj(const fq_plan *p, uint32_t ni, fq__conj *c) {
    const fq__node *nd = &p->nodes[ni];
    int k;
    memset(c, 0, sizeof *c);
    c->node = ni;
    if (!nd->fast) return;
    for (k = 0; k < 2; k++) {
        const fq__node *kid = &p->nodes[p->kids[nd->kid0 + k]];
        if (kid->op == FQ_OP_VALUE) {
            if (k) c->bv = (uint8_t)kid->var;
            else c->av = (uint8_t)kid->var;
        } else if (kid->op == FQ_OP_INT || kid->op == FQ_OP_UINT) {
            if (k) {
                c->bv = FQ__KONST;
                c->kb = kid->k.small;
                c->knb = kid->k.neg;
            } else {
                c->av = FQ__KONST;
                c->ka = kid->k.small;
                c->kna = kid->k.neg;
            }
        } else return;   /* a float constant: the general comparison */
    }
    c->mask = nd->fast;
}

static unsigned fq__lowest_bit(uint64_t m) {
    unsigned i = 0;
    while (!(m & 1)) {
        m >>= 1;
        i++;
    }
    return i;
}

/* Step 1: the plan and its arrays, sized from the query. On failure *out may still hold
   a plan for fq_plan_close. */
static int fq__plan_alloc(fq_plan **out, const fq_query *q, fq_trace *t, frames_error *err) {
    fq_plan *p = (fq_plan *)FRAMES_MALLOC(sizeof *p, q->ctx);
    *out = p;
    if (!p) return fq__oom(err);
    memset(p, 0, sizeof *p);
    p->ctx = q->ctx;
    p->t = t;
    p->format = t->format;
    p->flags = q->flags;
    p->nvars = q->nvars;
    p->mask = q->mask;
    p->stmt = q->stmt;
    p->nnodes = q->nnodes;
    p->var_names = (char **)FRAMES_MALLOC((q->nvars ? q->nvars : 1) * sizeof(char *), q->ctx);
    p->nodes = (fq__node *)FRAMES_MALLOC((q->nnodes ? q->nnodes : 1) * sizeof(fq__node), q->ctx);
    p->kids = (uint32_t *)FRAMES_MALLOC((q->nkids ? q->nkids : 1) * sizeof(uint32_t), q->ctx);
    p->strs = (char *)FRAMES_MALLOC(q->nstrs ? q->nstrs : 1, q->ctx);
    p->soft = (uint32_t *)FRAMES_MALLOC((q->nsoft ? q->nsoft : 1) * sizeof(uint32_t), q->ctx);
    p->pcs = (uint64_t *)FRAMES_MALLOC((q->npcs ? q->npcs * 2 : 1) * sizeof(uint64_t), q->ctx);
    p->tids = (uint64_t *)FRAMES_MALLOC((q->ntids ? q->ntids : 1) * sizeof(uint64_t), q->ctx);
    p->conj = (fq__conj *)FRAMES_MALLOC((q->nnodes ? q->nnodes : 1) * sizeof(fq__conj), q->ctx);
    if (!p->var_names || !p->nodes || !p->kids || !p->strs || !p->soft || !p->pcs || !p->tids ||
        !p->conj) {
        FRAMES_FREE(p->var_names, q->ctx);   /* its entries are not set yet */
        p->var_names = NULL;
        return fq__oom(err);
    }
    memset(p->var_names, 0, (q->nvars ? q->nvars : 1) * sizeof(char *));
    return FRAMES_OK;
}

/* Step 2: the query's names, nodes, strings and filters, copied into the plan (which
   outlives the query). */
static int fq__plan_copy(fq_plan *p, const fq_query *q, frames_error *err) {
    size_t i;
    for (i = 0; i < q->nvars; i++)
        if (!(p->var_names[i] = frames__strndup(q->vars[i].name, strlen(q->vars[i].name), q->ctx)))
            return fq__oom(err);
    if (q->nnodes) memcpy(p->nodes, q->nodes, q->nnodes * sizeof(fq__node));
    if (q->nkids) memcpy(p->kids, q->kids, q->nkids * sizeof(uint32_t));
    if (q->nstrs) memcpy(p->strs, q->strs, q->nstrs);
    if (q->npcs) memcpy(p->pcs, q->pcs, q->npcs * 2 * sizeof(uint64_t));
    if (q->ntids) memcpy(p->tids, q->tids, q->ntids * sizeof(uint64_t));
    p->npcs = q->npcs;
    p->ntids = q->ntids;
    for (i = 0; i < q->nsoft; i++) p->soft[i] = (uint32_t)q->soft[i];
    p->nsoft = q->nsoft;
    return FRAMES_OK;
}

/* Step 4: live[i] for the nodes reachable from the predicates (children have smaller
   indices than their parents). */
static void fq__mark_live(const fq_plan *p, const fq_query *q, unsigned char *live) {
    size_t i;
    memset(live, 0, q->nnodes ? q->nnodes : 1);
    if (q->has_where) live[q->where] = 1;
    for (i = 0; i < q->nsoft; i++) live[q->soft[i]] = 1;
    for (i = q->nnodes; i-- > 0;)
        if (live[i]) {
            uint32_t k;
            for (k = 0; k < p->nodes[i].nkids; k++) live[p->kids[p->nodes[i].kid0 + k]] = 1;
        }
}

/* Step 5: for every live node its depth (evaluation recurses: bounded), the limbs of its
   exact integer result and their place in the plan's storage, and its string pointer. */
static int fq__size_nodes(fq_plan *p, const fq_query *q, const unsigned char *live, uint32_t *depth,
                          frames_error *err) {
    size_t i, total = 0;
    for (i = 0; i < q->nnodes; i++) {
        fq__node *nd = &p->nodes[i];
        uint32_t k, d = 0, ca = 1, cb = 1;
        if (!live[i]) continue;
        for (k = 0; k < nd->nkids; k++) {
            uint32_t c = p->kids[nd->kid0 + k];
            if (depth[c] > d) d = depth[c];
        }
        depth[i] = d + 1;
        if (depth[i] > FQ__MAX_DEPTH)
            return fq__fail(err, FRAMES_E_LIMIT, FRAMES_NO_POS, FRAMES_NO_POS,
                            "expression nested deeper than %d", FQ__MAX_DEPTH);
        if (nd->op == FQ_OP_STR) nd->k.str = (const uint8_t *)p->strs + nd->stroff;
        if (nd->nkids == 2) {
            ca = p->nodes[p->kids[nd->kid0]].cap;
            cb = p->nodes[p->kids[nd->kid0 + 1]].cap;
        }
        switch (nd->op) {
        case FQ_OP_ADD: case FQ_OP_SUB: case FQ_OP_BAND: case FQ_OP_BOR: case FQ_OP_BXOR:
            nd->cap = (ca > cb ? ca : cb) + 1;
            break;
        case FQ_OP_MUL: nd->cap = ca + cb; break;
        case FQ_OP_MOD: nd->cap = cb + 1; break;
        case FQ_OP_SHL: nd->cap = ca + 2; break;
        case FQ_OP_SHR: nd->cap = ca + 1; break;
        default: nd->cap = 1; break;
        }
        if (nd->cap > FQ__MAX_LIMBS + 2)
            return fq__fail(err, FQ_E_QUERY, nd->pos == FQ__NOPOS ? FRAMES_NO_POS : nd->pos, FRAMES_NO_POS,
                            "'%s' may need %u-bit integers; exact arithmetic is limited to %d bits",
                            fq__op_name(nd->op), nd->cap * 64, FQ__MAX_LIMBS * 64);
        if ((nd->op >= FQ_OP_ADD && nd->op <= FQ_OP_DIV) || (nd->op >= FQ_OP_MOD && nd->op <= FQ_OP_SHR)) {
            nd->store = (uint32_t)total;
            total += nd->cap;
        }
    }
    p->nlimbs = total;
    return FRAMES_OK;
}

/* Step 6: comparisons of two leaves (values, constants) take the fast path: nd->fast is
   the mask of the orderings (<, =, >) that satisfy them. */
static void fq__mark_fast(fq_plan *p, const fq_query *q, const unsigned char *live) {
    static const uint8_t outcome[6] = {4, 6, 1, 3, 2, 5};   /* > >= < <= = != */
    size_t i;
    for (i = 0; i < q->nnodes; i++) {
        fq__node *nd = &p->nodes[i];
        int op = nd->op, k;
        nd->fast = 0;
        if (!live[i] || !((op >= FQ_OP_GT && op <= FQ_OP_EQ) || op == FQ_OP_NE)) continue;
        for (k = 0; k < 2; k++) {
            int kop = p->nodes[p->kids[nd->kid0 + k]].op;
            if (kop != FQ_OP_VALUE && kop != FQ_OP_INT && kop != FQ_OP_UINT && kop != FQ_OP_FLOAT) break;
        }
        if (k == 2) nd->fast = (uint8_t)(outcome[op == FQ_OP_NE ? 5 : op - FQ_OP_GT] << 0);
    }
}

/* Step 7: the hard predicate's conjuncts, grouped by the outermost loop level at which
   they can be decided (the lowest variable they depend on; constants at the innermost). */
static int fq__place_conjuncts(fq_plan *p, const fq_query *q, uint32_t *tmp, frames_error *err) {
    size_t L, k, at = 0, nconj = 0;
    if (q->has_where && fq__conjuncts(p, (uint32_t)q->where, tmp, &nconj, q->nnodes) < 0)
        return fq__fail(err, FRAMES_E_LIMIT, FRAMES_NO_POS, FRAMES_NO_POS, "too many conjuncts");
    for (L = 0; L <= q->nvars; L++) {
        p->conj_off[L] = (uint32_t)at;
        for (k = 0; k < nconj; k++) {
            uint64_t dps = p->nodes[tmp[k]].deps;
            size_t lvl = dps ? fq__lowest_bit(dps) : q->nvars;
            if (lvl == L) fq__make_conj(p, tmp[k], &p->conj[at++]);
        }
    }
    p->conj_off[q->nvars + 1] = (uint32_t)at;
    return FRAMES_OK;
}

/* The steps in order: allocate, copy, resolve types against the trace (step 3), mark the
   live nodes, size them, pick fast comparisons, place the conjuncts. */
FRAMES_QUERY_DEF int fq_compile(fq_plan **out, const fq_query *q, fq_trace *t, frames_error *err) {
    fq_plan *p = NULL;
    uint32_t *tmp = NULL, *depth = NULL;
    unsigned char *live = NULL;
    int rc;
    frames__clear_error(err);
    *out = NULL;
    if (q->err.code) {
        if (err) *err = q->err;
        return q->err.code;
    }
    if (q->ntids && t->format != FQ_TRACE_FRAMES)
        return fq__fail(err, FQ_E_QUERY, FRAMES_NO_POS, FRAMES_NO_POS,
                        "a thread filter needs a frames trace (trace-db points have no thread)");
    if ((rc = fq__plan_alloc(&p, q, t, err)) < 0) goto done;
    tmp = (uint32_t *)FRAMES_MALLOC((q->nnodes ? q->nnodes : 1) * sizeof(uint32_t), q->ctx);
    depth = (uint32_t *)FRAMES_MALLOC((q->nnodes ? q->nnodes : 1) * sizeof(uint32_t), q->ctx);
    live = (unsigned char *)FRAMES_MALLOC(q->nnodes ? q->nnodes : 1, q->ctx);
    if (!tmp || !depth || !live) {
        rc = fq__oom(err);
        goto done;
    }
    if ((rc = fq__plan_copy(p, q, err)) < 0 || (rc = fq__resolve_types(p, q, err)) < 0) goto done;
    fq__mark_live(p, q, live);
    if ((rc = fq__size_nodes(p, q, live, depth, err)) < 0) goto done;
    fq__mark_fast(p, q, live);
    rc = fq__place_conjuncts(p, q, tmp, err);
done:
    FRAMES_FREE(tmp, q->ctx);
    FRAMES_FREE(depth, q->ctx);
    FRAMES_FREE(live, q->ctx);
    if (rc < 0) {
        if (p) fq_plan_close(p);
        return rc;
    }
    *out = p;
    return FRAMES_OK;
}

/* --------------------------------------------------------------------------------------
   points and evaluation
   -------------------------------------------------------------------------------------- */

/* One variable (trace-db) or operand (frames) of the current point. */
typedef struct fq__dvar {
    fq__num num;           /* what v/value gives */
    uint32_t slot;         /* position in the point */
    uint32_t name, type;   /* trace-db indices */
    uint8_t fmt;
    uint8_t flags;         /* FQ_B_* */
    uint16_t memk;         /* frames: k-th memory operand of its list */
    uint32_t bits;
    uint32_t len;          /* value bytes */
    uint32_t nmlen;
    uint64_t raw;          /* integer as stored (trace-db: sign-extended; frames: LE value) */
    uint64_t size;         /* trace-db buffer size (FQ_B_HAS_SIZE) */
    uint64_t addr;         /* frames memory address */
    const uint8_t *bytes;
    const uint8_t *nm;     /* name, NULL for memory operands */
    uint64_t match;        /* free variables whose types admit it */
    uint64_t rec;          /* from an index's column: the record */
} fq__dvar;

typedef struct fq__pt {
    uint64_t counter, stmt, tid;
    uint64_t loc, aux;     /* how to find the point again: trace-db offset and first pointer;
                              frames payload offset and length */
    int has_tid;
} fq__pt;

#define FQ__NONE ((size_t)-1)
#define FQ__HDR 6          /* words of a result group header: counter stmt tid loc aux nres */
/* then per result and free variable the slot of its variable in the point, or in a
   detached column run its column record: type << FQ__REF_SHIFT | record */
#define FQ__REF_SHIFT 40

enum { FQ__S_FREE = 0, FQ__S_BUSY = 1, FQ__S_DONE = 2 };

/* Results of one work item: groups of (header, nres x nvars slot numbers). */
typedef struct fq__slot {
    uint64_t *w;
    size_t n, cap, pub, consumed;
    uint64_t item, count;
    uint64_t expect;       /* the only item that may take the slot next (item % nslots) */
    uint64_t reached;      /* progress: file offset (trace-db) or frame index after the item */
    int state, rc, end;    /* end: the item lies past the last point */
    frames_error err;
} fq__slot;

struct fq__run;

typedef struct fq__head {   /* merged posting lists: a list's next posting (key) */
    uint64_t at, end, key, ent;
    uint64_t *cur;             /* column runs: the list's column cursors */
} fq__head;

/* A binary min-heap of list heads on key: hp[c] just added, moved up to its place. */
static void fq__heap_up(fq__head *hp, size_t c) {
    for (; c > 0 && hp[(c - 1) / 2].key > hp[c].key; c = (c - 1) / 2) {
        fq__head tmp = hp[c];
        hp[c] = hp[(c - 1) / 2];
        hp[(c - 1) / 2] = tmp;
    }
}

/* ... hp[0] changed (or replaced by the last head), moved down to its place. */
static void fq__heap_down(fq__head *hp, size_t nh) {
    size_t c = 0;
    for (;;) {
        size_t l = 2 * c + 1, m = c;
        fq__head tmp;
        if (l < nh && hp[l].key < hp[m].key) m = l;
        if (l + 1 < nh && hp[l + 1].key < hp[m].key) m = l + 1;
        if (m == c) return;
        tmp = hp[c];
        hp[c] = hp[m];
        hp[m] = tmp;
        c = m;
    }
}

typedef struct fq__worker {
    const fq_plan *p;
    struct fq__run *run;
    fq__slot *slot;
    void *ctx;
    fq__num *vals;         /* one per node */
    uint64_t *limbs;
    const fq__dvar *bound[FQ_MAX_VARS];
    fq__dvar *dv;
    size_t ndv, capdv;
    uint32_t *cand;
    size_t capcand;
    uint32_t coff[FQ_MAX_VARS], ncand[FQ_MAX_VARS];
    fq__pt pt;
    uint64_t *aux;         /* point's AUXILIARY values and BUFFER_SIZE entries (delivery) */
    size_t naux, capaux;
    fq_buffer_size *bufs;
    size_t nbufs, capbufs;
    frames_decoder dec;
    frames_frame fr;
    size_t group;          /* header of the open group in slot->w, or FQ__NONE */
    uint64_t want;         /* delivery: the slots (< 64) to decode; want_high: those above */
    int want_high;
    int soft_max, soft_pass, oom;
    int fused;             /* evaluating inside the index pass: results may not be delivered
                              yet, so the result buffer grows instead */
    int spilled;           /* fused: a point's results did not fit; it is left to the
                              normal path, which delivers as it goes */
    const struct fq__sel *sel;   /* points chosen by a persistent index's posting lists */
    uint64_t *ccur;        /* column runs: the next record of each column read (merged:
                              per statement) */
    size_t capccur, capheads;
    struct fq__head *heads;   /* merged column runs: the statements' list heads */
    int colbad;            /* a column entry is out of range */
    int detached;          /* the run's col.detached: results name column records */
} fq__worker;

static int fq__stopped(const fq__worker *w);
static void fq__flush(fq__worker *w);

static fq__dvar *fq__new_dvar(fq__worker *w) {
    if (w->ndv == w->capdv && FRAMES__GROW(w->dv, w->capdv, w->ndv + 1, w->ctx) < 0) {
        w->oom = 1;
        return NULL;
    }
    return &w->dv[w->ndv++];
}

static int fq__keep_point(const fq_plan *p, const fq__pt *pt) {
    size_t i;
    if ((pt->stmt & p->mask) != p->stmt) return 0;
    if (p->npcs) {
        for (i = 0; i < p->npcs; i++)
            if (pt->stmt >= p->pcs[2 * i] && pt->stmt <= p->pcs[2 * i + 1]) break;
        if (i == p->npcs) return 0;
    }
    if (p->ntids) {
        if (!pt->has_tid) return 0;
        for (i = 0; i < p->ntids; i++)
            if (pt->tid == p->tids[i]) break;
        if (i == p->ntids) return 0;
    }
    return 1;
}

/* v/value of a trace-db variable from its stored bytes (raw: little-endian, zero-extended). */
FRAMES__INLINE void fq__tdb_num(const fq__worker *w, fq__dvar *v, unsigned fmt, uint32_t size, uint64_t raw) {
    v->raw = raw;
    switch (fmt) {
    case FQ_TYPE_SIGNED:
        if (size < 8 && (raw >> (8 * size - 1) & 1)) v->raw = raw |= ~0ull << (8 * size);
        v->num.kind = FQ__INT;
        v->num.neg = (int64_t)raw < 0;
        v->num.small = (int64_t)raw < 0 ? 0 - raw : raw;
        v->num.n = raw != 0;
        break;
    case FQ_TYPE_POINTER:
    case FQ_TYPE_UNSIGNED:
        fq__set_uint(&v->num, raw);
        break;
    case FQ_TYPE_FLOAT:
        if (size == 4 || (size == 8 && (w->p->flags & FQ_COMPAT_FLOAT32))) {
            uint32_t bits = (uint32_t)raw;
            float f;
            memcpy(&f, &bits, 4);
            fq__set_flt(&v->num, (double)f);
        } else if (size == 8) {
            double f;
            memcpy(&f, &raw, 8);
            fq__set_flt(&v->num, f);
        } else v->num.kind = FQ__INV;
        break;
    default:   /* BLOB */
        v->num.kind = FQ__INV;
        break;
    }
}

FRAMES__INLINE void fq__tdb_var(fq__worker *w, const fq_trace *t, const uint8_t *b, uint32_t name, uint32_t type,
                        uint32_t size, uint32_t ord, uint64_t m, uint64_t ptr) {
    const fq__ttype *ty = &t->types[type];
    fq__dvar *v;
    if (FRAMES__UNLIKELY(w->ndv == w->capdv) && FRAMES__GROW(w->dv, w->capdv, w->ndv + 1, w->ctx) < 0) {
        w->oom = 1;
        return;
    }
    v = &w->dv[w->ndv++];
    v->slot = ord;
    v->name = name;
    v->type = type;
    v->fmt = (uint8_t)ty->fmt;
    v->flags = 0;
    v->bits = size * 8;
    v->len = size;
    v->bytes = b;
    v->match = m;
    v->addr = 0;
    v->size = 0;
    v->nm = NULL;   /* trace-db names come from the dictionary by index */
    v->nmlen = 0;
    v->memk = 0;
    if (ty->fmt == FQ_TYPE_POINTER && fq__ptr_size(t, ptr, &v->size)) v->flags = FQ_B_HAS_SIZE;
    else v->size = 0;
    fq__tdb_num(w, v, ty->fmt, size,
                size == 4 ? frames__le32(b) : size == 8 ? frames__le64(b) : ty->fmt == FQ_TYPE_BLOB ? 0 : fq__leN(b, size));
}

/* trace-db, the hot loop: walk the complete point at off and decode the variables the
   query can bind. Same contract as fq__tdb_walk with mode 1. */
static uint64_t fq__tdb_point(fq__worker *w, const fq_trace *t, uint64_t off, uint64_t *ptr,
                              uint64_t *stmt) {
    const uint8_t *d = t->data;
    const fq__ptype *types = w->p->ptypes;
    uint64_t st = (t->oflags & FQ_OPEN_INHERIT_STMT) ? *stmt : 0, pc = *ptr;
    uint32_t ord = 0;
    for (;;) {
        unsigned tag = d[off++];
        if (FRAMES__LIKELY(tag == FQ__TAG_VAR)) {
            uint32_t type = frames__le32(d + off + 4);
            const fq__ptype *ty = &types[type];
            uint32_t size = ty->size;
            off += 8;
            if (FRAMES__UNLIKELY(ty->varlen)) {
                size = frames__le32(d + off);
                off += 4;
            }
            if (ty->mask) {
                uint32_t name = frames__le32(d + off - (ty->varlen ? 12 : 8));
                fq__tdb_var(w, t, d + off, name, type, size, ord, ty->mask, pc);
            }
            pc += ty->pointer;
            off += size;
            ord++;
        } else if (tag == FQ__TAG_END) {
            break;
        } else if (tag == FQ__TAG_STMT) {
            st = frames__le64(d + off);
            off += 8;
        } else off += tag == FQ__TAG_BUFSIZE ? 16 : 8;
    }
    *stmt = st;
    *ptr = pc;
    return off;
}

/* trace-db: walk the complete point at off. mode 0: skip, 1: decode the variables the
   query can bind, 2: decode every variable and collect aux and buffer sizes. *ptr counts
   pointer variables, *stmt is the statement (in: the previous point's for inheritance).
   Points were validated by the index pass. */
static uint64_t fq__tdb_walk(fq__worker *w, const fq_trace *t, uint64_t off, uint64_t *ptr,
                             uint64_t *stmt, int mode) {
    const uint8_t *d = t->data;
    const uint64_t *tmask = w->p->tmask;
    const fq__ttype *types = t->types;
    uint64_t st = (t->oflags & FQ_OPEN_INHERIT_STMT) ? *stmt : 0, all = mode == 2 ? ~0ull : 0;
    uint32_t ord = 0;
    if (mode == 2) w->naux = w->nbufs = 0;
    for (;;) {
        switch (d[off++]) {
        case FQ__TAG_END:
            *stmt = st;
            return off;
        case FQ__TAG_STMT:
            st = frames__le64(d + off);
            off += 8;
            break;
        case FQ__TAG_VAR: {
            uint32_t type = frames__le32(d + off + 4), size;
            const fq__ttype *ty = &types[type];
            uint64_t m = mode == 1 ? tmask[type] : all;
            if (mode == 2 && !(ord < 64 ? (w->want >> ord & 1) : (uint64_t)w->want_high)) m = 0;
            size = ty->size;
            off += 8;
            if (FRAMES__UNLIKELY(ty->varlen)) {
                size = frames__le32(d + off);
                off += 4;
            }
            if (m) {
                uint32_t name = frames__le32(d + off - (ty->varlen ? 12 : 8));
                fq__tdb_var(w, t, d + off, name, type, size, ord, m, *ptr);
            }
            if (ty->fmt == FQ_TYPE_POINTER) (*ptr)++;
            off += size;
            ord++;
            break;
        }
        case FQ__TAG_BUFSIZE:
            if (mode == 2) {
                if (w->nbufs == w->capbufs && FRAMES__GROW(w->bufs, w->capbufs, w->nbufs + 1, w->ctx) < 0)
                    w->oom = 1;
                else {
                    w->bufs[w->nbufs].address = frames__le64(d + off);
                    w->bufs[w->nbufs++].size = frames__le64(d + off + 8);
                }
            }
            off += 16;
            break;
        default:   /* AUXILIARY */
            if (mode == 2) {
                if (w->naux == w->capaux && FRAMES__GROW(w->aux, w->capaux, w->naux + 1, w->ctx) < 0) w->oom = 1;
                else w->aux[w->naux++] = frames__le64(d + off);
            }
            off += 8;
            break;
        }
    }
}

static uint64_t fq__frames_match(const fq_plan *p, unsigned kind, uint32_t bits) {
    uint64_t m = (kind & FQ_B_REG) ? p->any_reg_bits : p->any_mem_bits;
    unsigned v;
    uint32_t i;
    for (v = 0; v < p->nvars; v++) {
        if (m >> v & 1) continue;
        for (i = p->pat_off[v]; i < p->pat_off[v + 1]; i++)
            if ((p->pats[i].kinds & kind) && (p->pats[i].bits < 0 || (uint32_t)p->pats[i].bits == bits)) {
                m |= 1ull << v;
                break;
            }
    }
    return m;
}

/* frames: operands of a std_frame (pre list, then post list) as variables. */
static void fq__frames_vars(fq__worker *w, const frames_std_frame *sf, int all) {
    uint32_t slot = 0, list, i;
    for (list = 0; list < 2; list++) {
        const frames_operand *ops = list ? sf->post : sf->pre;
        uint32_t n = list ? sf->npost : sf->npre, memk = 0;
        for (i = 0; i < n; i++, slot++) {
            const frames_operand *op = &ops[i];
            unsigned kind = (op->spec & FRAMES_REG) ? FQ_B_REG : FQ_B_MEM;
            uint32_t bits = op->bit_length > 0 ? (uint32_t)op->bit_length : (uint32_t)(op->value.len * 8);
            uint64_t m = all ? ~0ull : fq__frames_match(w->p, kind, bits);
            fq__dvar *v;
            if (kind == FQ_B_MEM) memk++;
            if (!m || !(v = fq__new_dvar(w))) continue;
            v->slot = slot;
            v->name = v->type = 0xffffffffu;
            v->fmt = (uint8_t)(op->value.len >= 1 && op->value.len <= 8 ? FQ_TYPE_UNSIGNED : FQ_TYPE_BLOB);
            v->flags = (uint8_t)(kind | (op->read ? FQ_B_READ : 0) | (op->written ? FQ_B_WRITTEN : 0) |
                                 (list ? FQ_B_POST : 0));
            v->memk = (uint16_t)(kind == FQ_B_MEM ? memk - 1 : 0);
            v->bits = bits;
            v->len = (uint32_t)op->value.len;
            v->bytes = op->value.ptr;
            v->nm = kind == FQ_B_REG ? (op->name.ptr ? op->name.ptr : (const uint8_t *)"") : NULL;
            v->nmlen = kind == FQ_B_REG ? (uint32_t)op->name.len : 0;
            v->addr = op->address;
            v->size = 0;
            v->match = m;
            if (v->fmt == FQ_TYPE_UNSIGNED) {
                v->raw = fq__leN(op->value.ptr, (unsigned)op->value.len);
                fq__set_uint(&v->num, v->raw);
            } else {
                v->raw = 0;
                v->num.kind = FQ__INV;   /* empty, or wider than 64 bits */
            }
        }
    }
}

static const fq__num *fq__operand(const fq_plan *p, fq__worker *w, uint32_t ni);

static const fq__num *fq__eval(const fq_plan *p, fq__worker *w, uint32_t ni) {
    const fq__node *nd = &p->nodes[ni];
    fq__num *r = &w->vals[ni];
    const fq__dvar *v = nd->var >= 0 ? w->bound[nd->var] : NULL;
    switch (nd->op) {
    case FQ_OP_INT: case FQ_OP_UINT: case FQ_OP_FLOAT: case FQ_OP_STR:
        return &nd->k;
    case FQ_OP_VALUE:
        return &v->num;
    case FQ_OP_SIZE:
        if (v->flags & FQ_B_HAS_SIZE) fq__set_uint(r, v->size);
        else r->kind = FQ__INV;
        return r;
    case FQ_OP_ADDR:
        if (v->flags & FQ_B_MEM) fq__set_uint(r, v->addr);
        else r->kind = FQ__INV;
        return r;
    case FQ_OP_NAME:
        if (p->format == FQ_TRACE_TRACEDB) {
            r->kind = FQ__STR;
            r->str = p->t->data + p->t->name_off[v->name];
            r->len = p->t->name_len[v->name];
        } else if (!v->nm) r->kind = FQ__INV;
        else {
            r->kind = FQ__STR;
            r->str = v->nm;
            r->len = v->nmlen;
        }
        return r;
    case FQ_OP_READ: case FQ_OP_WRITTEN: case FQ_OP_POST: {
        unsigned bit = nd->op == FQ_OP_READ ? FQ_B_READ : nd->op == FQ_OP_WRITTEN ? FQ_B_WRITTEN : FQ_B_POST;
        if (p->format != FQ_TRACE_FRAMES) r->kind = FQ__INV;
        else fq__set_uint(r, (v->flags & bit) != 0);
        return r;
    }
    case FQ_OP_BITS:
        fq__set_uint(r, v->bits);
        return r;
    case FQ_OP_PC:
        fq__set_uint(r, w->pt.stmt);
        return r;
    case FQ_OP_TID:
        if (w->pt.has_tid) fq__set_uint(r, w->pt.tid);
        else r->kind = FQ__INV;
        return r;
    case FQ_OP_INDEX:
        fq__set_uint(r, w->pt.counter);
        return r;
    default: {
        const fq__num *a = fq__operand(p, w, p->kids[nd->kid0]);
        const fq__num *b = fq__operand(p, w, p->kids[nd->kid0 + 1]);
        fq__arith(nd->op, a, b, r, w->limbs + nd->store);
        return r;
    }
    }
}

/* Operands that need no computation: values of bound variables and constants. */
static const fq__num *fq__operand(const fq_plan *p, fq__worker *w, uint32_t ni) {
    const fq__node *nd = &p->nodes[ni];
    if (nd->op == FQ_OP_VALUE) return &w->bound[nd->var]->num;
    if (nd->op == FQ_OP_INT || nd->op == FQ_OP_UINT || nd->op == FQ_OP_FLOAT) return &nd->k;
    return fq__eval(p, w, ni);
}

static int fq__same_record(const fq__dvar *a, const fq__dvar *b) {
    return a->name == b->name && a->type == b->type && a->len == b->len && a->flags == b->flags &&
           a->size == b->size && a->addr == b->addr && a->nmlen == b->nmlen &&
           (!a->len || !memcmp(a->bytes, b->bytes, a->len)) &&
           (!a->nmlen || !memcmp(a->nm, b->nm, a->nmlen));
}

static int fq__test(const fq_plan *p, fq__worker *w, uint32_t ni) {
    const fq__node *nd = &p->nodes[ni];
    uint32_t i;
    switch (nd->op) {
    case FQ_OP_AND:
        for (i = 0; i < nd->nkids; i++)
            if (!fq__test(p, w, p->kids[nd->kid0 + i])) return 0;
        return 1;
    case FQ_OP_OR:
        for (i = 0; i < nd->nkids; i++)
            if (fq__test(p, w, p->kids[nd->kid0 + i])) return 1;
        return 0;
    case FQ_OP_NOT:
        return !fq__test(p, w, p->kids[nd->kid0]);
    case FQ_OP_DISTINCT: {
        const fq__dvar *a = w->bound[nd->var], *b = w->bound[nd->var2];
        if (p->flags & FQ_COMPAT_DISTINCT_VALUE) return !fq__same_record(a, b);
        return a->slot != b->slot;
    }
    case FQ_OP_READ: case FQ_OP_WRITTEN: case FQ_OP_POST: {
        const fq__num *v = fq__eval(p, w, ni);
        return v->kind == FQ__INT && v->n != 0;
    }
    case FQ_OP_GT: case FQ_OP_GE: case FQ_OP_LT: case FQ_OP_LE: case FQ_OP_EQ: case FQ_OP_NE: {
        const fq__num *a = fq__operand(p, w, p->kids[nd->kid0]);
        const fq__num *b = fq__operand(p, w, p->kids[nd->kid0 + 1]);
        int c;
        if (FRAMES__LIKELY(a->kind == FQ__INT && b->kind == FQ__INT && (a->n | b->n) <= 1)) {
            if (a->neg != b->neg) c = a->neg ? -1 : 1;
            else {
                c = (a->small > b->small) - (a->small < b->small);
                if (a->neg) c = -c;
            }
        } else {
            if (a->kind == FQ__INV || b->kind == FQ__INV) return 0;
            if (a->kind == FQ__STR || b->kind == FQ__STR) {
                int eq = a->kind == b->kind && a->len == b->len &&
                         (!a->len || !memcmp(a->str, b->str, a->len));
                return nd->op == FQ_OP_EQ ? eq : nd->op == FQ_OP_NE ? !eq : 0;
            }
            c = fq__cmp(a, b);
            if (c == 2) return nd->op == FQ_OP_NE;   /* NaN: unordered */
        }
        switch (nd->op) {
        case FQ_OP_GT: return c > 0;
        case FQ_OP_GE: return c >= 0;
        case FQ_OP_LT: return c < 0;
        case FQ_OP_LE: return c <= 0;
        case FQ_OP_EQ: return c == 0;
        default: return c != 0;
        }
    }
    case FQ_OP_TRUE:
        return 1;
    default:
        return 0;
    }
}

/* Most conjuncts compare a variable's value with a constant or another value: decide
   those on single-limb integers here, everything else in fq__test. */
FRAMES__INLINE int fq__conj_ok(const fq_plan *p, fq__worker *w, const fq__conj *c) {
    if (FRAMES__LIKELY(c->mask)) {
        uint64_t xa, xb;
        unsigned na, nb;
        int r;
        if (c->av != FQ__KONST) {
            const fq__num *a = &w->bound[c->av]->num;
            if (a->kind != FQ__INT || a->n > 1) goto slow;
            xa = a->small;
            na = a->neg;
        } else {
            xa = c->ka;
            na = c->kna;
        }
        if (c->bv != FQ__KONST) {
            const fq__num *b = &w->bound[c->bv]->num;
            if (b->kind != FQ__INT || b->n > 1) goto slow;
            xb = b->small;
            nb = b->neg;
        } else {
            xb = c->kb;
            nb = c->knb;
        }
        if (na != nb) r = na ? -1 : 1;
        else {
            r = (int)(xa > xb) - (int)(xa < xb);
            if (na) r = -r;
        }
        return c->mask >> (r + 1) & 1;
    }
slow:
    return fq__test(p, w, c->node);
}

static int fq__level_ok(const fq_plan *p, fq__worker *w, unsigned level) {
    const fq__conj *c = p->conj + p->conj_off[level], *end = p->conj + p->conj_off[level + 1];
    for (; c < end; c++)
        if (!fq__conj_ok(p, w, c)) return 0;
    return 1;
}

/* Append the current binding to the results. */
static void fq__emit(fq__worker *w) {
    fq__slot *s = w->slot;
    unsigned k = w->p->nvars, i;
    if (!s->cap) {   /* counting only */
        s->count++;
        return;
    }
    if (s->n + (w->group == FQ__NONE ? FQ__HDR : 0) + k > s->cap) {
        if (!w->fused) fq__flush(w);
        else {   /* growing would hold every result of the point (V^k of them) */
            w->spilled = 1;
            return;
        }
    }
    if (w->group == FQ__NONE) {
        uint64_t *h = s->w + s->n;
        h[0] = w->pt.counter;
        h[1] = w->pt.stmt;
        h[2] = w->pt.tid | (uint64_t)0;
        h[3] = w->pt.loc;
        h[4] = w->pt.aux;
        h[5] = 0;
        w->group = s->n;
        s->n += FQ__HDR;
    }
    if (w->detached)
        for (i = 0; i < k; i++) s->w[s->n++] = (uint64_t)w->bound[i]->type << FQ__REF_SHIFT | w->bound[i]->rec;
    else
        for (i = 0; i < k; i++) s->w[s->n++] = w->bound[i]->slot;
    s->w[w->group + 5]++;
}

static void fq__tuple(fq__worker *w) {
    const fq_plan *p = w->p;
    int c = 0;
    size_t i;
    if (!p->nsoft) {
        fq__emit(w);
        return;
    }
    for (i = 0; i < p->nsoft; i++) c += fq__test(p, w, p->soft[i]);
    if (w->soft_pass == 0) {
        if (c > w->soft_max) w->soft_max = c;
    } else if (c == w->soft_max) fq__emit(w);
}

/* Every tuple of candidates, free variable 0 varying fastest, without materialising
   the product: variable L is bound in loop level L (outermost: the last variable) and
   conjuncts are tested as soon as the variables they use are bound. */
static void fq__enumerate(fq__worker *w) {
    const fq_plan *p = w->p;
    unsigned k = p->nvars;
    uint32_t idx[FQ_MAX_VARS];
    unsigned L = k - 1;
    idx[L] = 0xffffffffu;
    for (;;) {
        if (++idx[L] >= w->ncand[L]) {
            if (L == k - 1) return;
            L++;
            continue;
        }
        w->bound[L] = &w->dv[w->cand[w->coff[L] + idx[L]]];
        if (!fq__level_ok(p, w, L)) continue;
        if (L > 0) {
            L--;
            idx[L] = 0xffffffffu;
            continue;
        }
        fq__tuple(w);
        if (FRAMES__UNLIKELY(w->spilled)) return;
    }
}

/* The point in w->pt with its variables in w->dv: every result. */
static void fq__eval_point(fq__worker *w) {
    const fq_plan *p = w->p;
    unsigned k = p->nvars, v;
    size_t i;
    if (!fq__level_ok(p, w, k)) return;   /* conjuncts that use no variable */
    if (k == 0) {
        fq__emit(w);
        w->group = FQ__NONE;
        return;
    }
    if (k == 1 && !p->nsoft) {   /* one variable: its candidates are the decoded variables */
        const fq__conj *c0 = p->conj + p->conj_off[0], *c1 = p->conj + p->conj_off[1], *c;
        for (i = 0; i < w->ndv; i++) {
            w->bound[0] = &w->dv[i];
            for (c = c0; c < c1 && fq__conj_ok(p, w, c); c++) {
            }
            if (c == c1) fq__emit(w);
        }
        w->group = FQ__NONE;
        return;
    }
    if (k * w->ndv > w->capcand && FRAMES__GROW(w->cand, w->capcand, k * w->ndv, w->ctx) < 0) {
        w->oom = 1;
        return;
    }
    for (v = 0; v < k; v++) {
        uint32_t n = 0;
        w->coff[v] = (uint32_t)(v * w->ndv);
        for (i = 0; i < w->ndv; i++)
            if (w->dv[i].match >> v & 1) w->cand[w->coff[v] + n++] = (uint32_t)i;
        if (!(w->ncand[v] = n)) return;
    }
    if (p->nsoft) {
        w->soft_pass = 0;
        w->soft_max = -1;
        fq__enumerate(w);
        if (w->soft_max < 0) return;
    }
    w->soft_pass = 1;
    fq__enumerate(w);
    w->group = FQ__NONE;
}

/* Index the points after those indexed so far until there are `upto` or the trace ends:
   positions every `stride` points, buffer sizes of pointers (the memory map as trace-db
   computes it, at load time), validation (later passes trust indexed points). Only the
   thread that set idx_busy calls it; it publishes through *points, *chunks, *ptrs.
   With a worker, every complete point is also evaluated as it is indexed (one walk instead
   of two); the batch then ends early once half of the worker's result buffer is used.
   Returns 0, or a negative code when out of memory (or damage with FQ_OPEN_STRICT). */
static int fq__tdb_index_more(fq_trace *t, uint64_t upto, uint64_t *points, uint64_t *chunks,
                              uint64_t *ptrs, struct fq__worker *w, frames_error *err) {
    /* with a point filter, decode only the points it keeps (at their end) */
    int lazy = w && (w->p->mask || w->p->npcs);
    const uint64_t *tmask = w && !lazy ? w->p->tmask : NULL;
    const uint8_t *d = t->data;
    const uint64_t n = t->size;
    const fq__ttype *types = t->types;
    uint64_t off = t->idx_off, stmt = t->idx_stmt, np = *points, nc = *chunks, nptr = *ptrs;
    int inherit = (t->oflags & FQ_OPEN_INHERIT_STMT) != 0, rc = FRAMES_OK;
    while (np < upto && off < n) {
        uint64_t start = off, pstmt = inherit ? stmt : 0, nptr0 = nptr;
        uint32_t ord = 0;
        int ok = 0, partial = 0;
        const char *bad = NULL;
        if (np % t->stride == 0) {   /* index entry; blocks are allocated as reached */
            fq__chunk *c;
            if (!t->cblk[nc >> FQ__BSHIFT] &&
                !(t->cblk[nc >> FQ__BSHIFT] = (fq__chunk *)FRAMES_MALLOC(
                      fq__block_len(t->cmax, nc >> FQ__BSHIFT) * sizeof(fq__chunk), t->ctx)))
                goto nomem;
            c = &t->cblk[nc >> FQ__BSHIFT][nc & (FQ__BSIZE - 1)];
            c->off = start;
            c->counter = np;
            c->ptr_base = nptr;
            c->stmt = stmt;
        }
        if (w) w->ndv = 0;
        while (off < n) {
            unsigned tag = d[off];
            uint64_t at;
            if (FRAMES__LIKELY(tag == FQ__TAG_VAR && n - off >= 9)) {   /* the common entry, checked at once */
                uint32_t type = frames__le32(d + off + 5);
                const fq__ttype *ty = &types[type < t->ntypes ? type : 0];
                if (FRAMES__LIKELY(type < t->ntypes && ty->elen && n - off >= ty->elen &&
                               frames__le32(d + off + 1) < t->nnames)) {
                    if (ty->fmt == FQ_TYPE_POINTER) {
                        uint64_t bs = 0;
                        int has = fq__mm_size(&t->idx_mm, fq__leN(d + off + 9, ty->size), &bs);
                        if (fq__ptr_record(t, nptr++, has, bs) < 0) goto nomem;
                    }
                    if (tmask && tmask[type])
                        fq__tdb_var(w, t, d + off + 9, frames__le32(d + off + 1), type, ty->size, ord,
                                    tmask[type], nptr - (ty->fmt == FQ_TYPE_POINTER));
                    ord++;
                    off += ty->elen;
                    continue;
                }
            }
            at = off++;
            if (tag == FQ__TAG_VAR) {
                uint32_t name, type, size;
                const fq__ttype *ty;
                if (n - off < 8) {
                    partial = 1;
                    break;
                }
                name = frames__le32(d + off);
                type = frames__le32(d + off + 4);
                if (FRAMES__UNLIKELY(name >= t->nnames || type >= t->ntypes)) {
                    fq__tdb_cut(t, 1, start, np,
                                "point %llu: variable at offset 0x%llx has %s index %u of %u",
                                (unsigned long long)np, (unsigned long long)at,
                                name >= t->nnames ? "name" : "type", name >= t->nnames ? name : type,
                                name >= t->nnames ? t->nnames : t->ntypes);
                    bad = "index";
                    break;
                }
                off += 8;
                ty = &types[type];
                size = ty->size;
                if (FRAMES__UNLIKELY(ty->varlen)) {
                    if (n - off < 4) {
                        partial = 1;
                        break;
                    }
                    size = frames__le32(d + off);
                    off += 4;
                }
                if (FRAMES__UNLIKELY(ty->fmt == FQ_TYPE_SIGNED && size != 1 && size != 2 && size != 4 &&
                                 size != 8)) {
                    fq__tdb_cut(t, 1, start, np,
                                "point %llu: SIGNED type %u has size %u (1, 2, 4 or 8) at offset 0x%llx",
                                (unsigned long long)np, type, size, (unsigned long long)at);
                    bad = "size";
                    break;
                }
                if (n - off < size) {
                    partial = 1;
                    break;
                }
                if (ty->fmt == FQ_TYPE_POINTER) {
                    uint64_t bs = 0;
                    int has = fq__mm_size(&t->idx_mm, fq__leN(d + off, size), &bs);
                    if (fq__ptr_record(t, nptr++, has, bs) < 0) goto nomem;
                }
                if (tmask && tmask[type])
                    fq__tdb_var(w, t, d + off, name, type, size, ord, tmask[type],
                                nptr - (ty->fmt == FQ_TYPE_POINTER));
                ord++;
                off += size;
            } else if (tag == FQ__TAG_END) {
                ok = 1;
                break;
            } else if (tag == FQ__TAG_STMT || tag == FQ__TAG_AUX) {
                if (n - off < 8) {
                    partial = 1;
                    break;
                }
                if (tag == FQ__TAG_STMT) pstmt = frames__le64(d + off);
                off += 8;
            } else if (tag == FQ__TAG_BUFSIZE) {
                if (n - off < 16) {
                    partial = 1;
                    break;
                }
                if (fq__mm_set(&t->idx_mm, frames__le64(d + off), frames__le64(d + off + 8)) < 0) goto nomem;
                off += 16;
            } else {
                fq__tdb_cut(t, 1, start, np, "point %llu: bad tag %u at offset 0x%llx",
                            (unsigned long long)np, tag, (unsigned long long)at);
                bad = "tag";
                break;
            }
        }
        if (!ok) {   /* incomplete or damaged: the trace ends before this point */
            int clean_eof = !bad && off >= n && !partial;
            nptr = nptr0;
            if (clean_eof)
                fq__tdb_cut(t, 0, start, np,
                            "point %llu at offset 0x%llx has no END_ENTRY before the end of the file",
                            (unsigned long long)np, (unsigned long long)start);
            else if (!bad)
                fq__tdb_cut(t, 0, start, np,
                            "the file ends inside point %llu (offset 0x%llx, %llu bytes present)",
                            (unsigned long long)np, (unsigned long long)start,
                            (unsigned long long)(n - start));
            /* strict, as trace-db: EOF inside an entry or a damaged entry loses the trace;
               a final point that only lacks END_ENTRY is dropped silently */
            if ((t->oflags & FQ_OPEN_STRICT) && !clean_eof)
                rc = fq__fail(err, bad ? FRAMES_E_FORMAT : FRAMES_E_TRUNCATED, start, np, "%s",
                              t->idx_cut.message);
            off = n;
            break;
        }
        if (np % t->stride == 0) nc++;
        if (w) {
            w->pt.counter = np;
            w->pt.stmt = pstmt;
            w->pt.loc = start;
            w->pt.aux = nptr0;
            w->pt.has_tid = 0;
            w->pt.tid = 0;
            if (fq__keep_point(w->p, &w->pt)) {
                size_t n0 = w->slot->n;
                if (lazy) {   /* the point is in the cache: decode it now */
                    uint64_t p2 = nptr0, s2 = stmt;
                    w->ndv = 0;
                    fq__tdb_point(w, t, start, &p2, &s2);
                }
                fq__eval_point(w);
                if (w->spilled) {   /* too many results: dropped, evaluated again (fq__fused) */
                    w->slot->n = n0;
                    w->group = FQ__NONE;
                }
            }
            if (w->oom || w->spilled) {   /* the point is indexed; the caller deals with it */
                stmt = pstmt;
                np++;
                break;
            }
        }
        stmt = pstmt;   /* off is past END_ENTRY */
        np++;
        if (w && w->slot->cap && w->slot->n > w->slot->cap / 2) break;
    }
    t->idx_off = off;
    t->idx_stmt = stmt;
    *points = np;
    *chunks = nc;
    *ptrs = nptr;
    if (off >= n) fq__mm_free(&t->idx_mm);
    return rc;
nomem:
    *points = np;
    *chunks = nc;
    *ptrs = nptr;
    return fq__fail(err, FRAMES_E_NOMEM, off, np, "out of memory indexing the trace");
}

/* Evaluate the points [lo, hi) of the trace into w->slot. */
static void fq__tdb_process(fq__worker *w, uint64_t lo, uint64_t hi) {
    const fq_trace *t = w->p->t;
    const fq__chunk *c = fq__chunk_at(t, lo / t->stride);
    uint64_t off = c->off, counter = c->counter, ptr = c->ptr_base, stmt = c->stmt;
    w->pt.has_tid = 0;
    w->pt.tid = 0;
    for (; counter < hi; counter++) {
        uint64_t start = off, ptr0 = ptr;
        if (counter < lo) {
            off = fq__tdb_walk(w, t, off, &ptr, &stmt, 0);
            continue;
        }
        if (w->p->mask || w->p->npcs) {   /* filtered: find the statement before decoding */
            uint64_t p2 = ptr, s2 = stmt, next = fq__tdb_walk(w, t, off, &p2, &s2, 0);
            w->pt.stmt = s2;
            if (!fq__keep_point(w->p, &w->pt)) {
                off = next;
                ptr = p2;
                stmt = s2;
                continue;
            }
        }
        w->ndv = 0;
        off = fq__tdb_point(w, t, off, &ptr, &stmt);
        w->pt.counter = counter;
        w->pt.stmt = stmt;
        w->pt.loc = start;
        w->pt.aux = ptr0;
        if (fq__keep_point(w->p, &w->pt)) fq__eval_point(w);
        if (FRAMES__UNLIKELY(w->oom) || fq__stopped(w)) break;
    }
    w->slot->reached = off;
}

static int fq__frames_decode(fq__worker *w, const frames_raw *raw, frames_error *err) {
    return frames_decode_frame(&w->dec, raw->payload.ptr, raw->payload.len, &w->fr, err);
}

static void fq__frames_process(fq__worker *w, uint64_t lo, uint64_t hi) {
    const fq_trace *t = w->p->t;
    frames_cursor *c;
    frames_raw raw;
    frames_error derr;
    uint64_t i;
    int rc;
    if ((rc = frames_cursor_open(&c, t->fr, lo, &w->slot->err)) < 0) {
        w->slot->rc = rc;
        return;
    }
    for (i = lo; i < hi; i++) {
        if ((rc = frames_cursor_next_raw(c, &raw)) <= 0) {
            if (rc < 0) {
                w->slot->rc = rc;
                w->slot->err = *frames_cursor_error(c);
            }
            break;
        }
        if ((rc = fq__frames_decode(w, &raw, &derr)) < 0) {   /* derr: its message is an */
            w->slot->rc = rc;                                   /* argument of the one below */
            fq__fail(&w->slot->err, rc, raw.offset, raw.index, "frame %llu at offset 0x%llx: %s",
                     (unsigned long long)raw.index, (unsigned long long)raw.offset, derr.message);
            break;
        }
        if (w->fr.kind != FRAMES_KIND_STD) continue;
        w->pt.counter = raw.index;
        w->pt.stmt = w->fr.std.address;
        w->pt.tid = w->fr.std.thread_id;
        w->pt.has_tid = 1;
        w->pt.loc = (uint64_t)(raw.payload.ptr - t->data);
        w->pt.aux = raw.payload.len;
        if (!fq__keep_point(w->p, &w->pt)) continue;
        w->ndv = 0;
        fq__frames_vars(w, &w->fr.std, 0);
        fq__eval_point(w);
        if (FRAMES__UNLIKELY(w->oom) || fq__stopped(w)) break;
    }
    w->slot->reached = i;
    frames_cursor_close(c);
}

/* ---------------------------------------------------------------- evaluation with an index

   With a persistent index every point is reached directly, so a range of points needs no
   indexing pass, and statement filters visit only the points of their posting lists.
   Offsets and postings come from a file that is not trusted: points are walked with
   every bound checked, and a point that does not decode where the index says it starts
   stops the run with FQ_E_STALE. */

/* Where point k starts: its offset, pointer base and previous statement, or those of the
   first point of its block when the walk has to start there. */
static void fq__ix_locate(const fq_trace *t, uint64_t k, fq__chunk *c) {
    const fq__ix *x = t->ix;
    uint64_t b = k / x->block;
    uint32_t od = fq__ix_u32(x, FQ__XS_ODELTA, k);
    uint32_t pd = t->format == FQ_TRACE_TRACEDB ? fq__ix_u32(x, FQ__XS_PDELTA, k) : 0;
    c->off = fq__ix_u64(x, FQ__XS_BLOCKS, 4 * b);
    c->ptr_base = fq__ix_u64(x, FQ__XS_BLOCKS, 4 * b + 1);
    c->stmt = fq__ix_u64(x, FQ__XS_BLOCKS, 4 * b + 2);
    c->counter = b * x->block;
    /* inherited statements: only a walk from the block knows the previous statement */
    if (od == FQ__IX_FAR || pd == FQ__IX_FAR ||
        ((t->oflags & FQ_OPEN_INHERIT_STMT) && (fq__ix_u64(x, FQ__XS_BLOCKS, 4 * b + 3) & FQ__IX_NOSTMT)))
        return;
    c->off += od;
    c->ptr_base += pd;
    c->counter = k;
}

/* trace-db: the point at off with every bound checked; decodes the variables the query
   can bind when `decode`. Returns the offset after its END_ENTRY, or 0 when no complete
   valid point starts at off. */
static uint64_t fq__tdb_point_checked(fq__worker *w, const fq_trace *t, uint64_t off, uint64_t *ptr,
                                      uint64_t *stmt, int decode) {
    const uint8_t *d = t->data;
    const uint64_t n = t->size;
    const fq__ptype *pty = w->p->ptypes;
    uint64_t st = (t->oflags & FQ_OPEN_INHERIT_STMT) ? *stmt : 0, pc = *ptr;
    uint32_t ord = 0;
    if (off < t->points_off) return 0;
    while (off < n) {
        unsigned tag = d[off];
        if (FRAMES__LIKELY(tag == FQ__TAG_VAR && n - off >= 9)) {   /* fixed-size types at once */
            uint32_t type = frames__le32(d + off + 5), name = frames__le32(d + off + 1);
            const fq__ptype *ty = &pty[type < t->ntypes ? type : 0];
            if (FRAMES__LIKELY(type < t->ntypes && ty->elen && n - off >= ty->elen && name < t->nnames)) {
                if (decode && ty->mask) fq__tdb_var(w, t, d + off + 9, name, type, ty->size, ord, ty->mask, pc);
                pc += ty->pointer;
                off += ty->elen;
                ord++;
                continue;
            }
        }
        off++;
        if (tag == FQ__TAG_VAR) {
            uint32_t name, type, size;
            const fq__ttype *ty;
            if (FRAMES__UNLIKELY(n - off < 8)) return 0;
            name = frames__le32(d + off);
            type = frames__le32(d + off + 4);
            if (FRAMES__UNLIKELY(name >= t->nnames || type >= t->ntypes)) return 0;
            ty = &t->types[type];
            off += 8;
            size = ty->size;
            if (FRAMES__UNLIKELY(ty->varlen)) {
                if (n - off < 4) return 0;
                size = frames__le32(d + off);
                off += 4;
            } else if (FRAMES__UNLIKELY(!ty->elen)) return 0;   /* a SIGNED size trace-db rejects */
            if (FRAMES__UNLIKELY(n - off < size)) return 0;
            if (decode && pty[type].mask) fq__tdb_var(w, t, d + off, name, type, size, ord, pty[type].mask, pc);
            pc += pty[type].pointer;
            off += size;
            ord++;
        } else if (tag == FQ__TAG_END) {
            *stmt = st;
            *ptr = pc;
            return off;
        } else if (tag == FQ__TAG_STMT || tag == FQ__TAG_AUX) {
            if (n - off < 8) return 0;
            if (tag == FQ__TAG_STMT) st = frames__le64(d + off);
            off += 8;
        } else if (tag == FQ__TAG_BUFSIZE) {
            if (n - off < 16) return 0;
            off += 16;
        } else return 0;
    }
    return 0;
}

/* The statement filters of p (fq__keep_point without threads). */
static int fq__stmt_ok(const fq_plan *p, uint64_t s) {
    size_t i;
    if ((s & p->mask) != p->stmt) return 0;
    if (!p->npcs) return 1;
    for (i = 0; i < p->npcs; i++)
        if (s >= p->pcs[2 * i] && s <= p->pcs[2 * i + 1]) return 1;
    return 0;
}

static void fq__ix_mismatch(fq__worker *w, uint64_t k, uint64_t off) {
    if (!w->slot->rc)
        w->slot->rc = fq__fail(&w->slot->err, FQ_E_STALE, off, k,
                               "the index does not match the trace at point %llu (offset 0x%llx): "
                               "rebuild it or query without it",
                               (unsigned long long)k, (unsigned long long)off);
}

/* trace-db: evaluate the points [lo, hi). `prefilter`: find the statement before decoding
   (statement filters over ranges); `listed`: a point of a posting list, decoded at once,
   whose statement must pass the filters (else the index lied). */
static void fq__ix_tdb_range(fq__worker *w, uint64_t lo, uint64_t hi, int prefilter, int listed) {
    const fq_trace *t = w->p->t;
    fq__chunk c;
    uint64_t off, counter, ptr, stmt;
    fq__ix_locate(t, lo, &c);
    off = c.off;
    ptr = c.ptr_base;
    stmt = c.stmt;
    w->pt.has_tid = 0;
    w->pt.tid = 0;
    for (counter = c.counter; counter < hi; counter++) {
        uint64_t start = off, ptr0 = ptr, next;
        if (counter < lo || prefilter) {
            uint64_t p2 = ptr, s2 = stmt;
            if (!(next = fq__tdb_point_checked(w, t, off, &p2, &s2, 0))) {
                fq__ix_mismatch(w, counter, off);
                break;
            }
            w->pt.stmt = s2;
            if (counter < lo || !fq__keep_point(w->p, &w->pt)) {
                off = next;
                ptr = p2;
                stmt = s2;
                continue;
            }
        }
        w->ndv = 0;
        if (!(next = fq__tdb_point_checked(w, t, off, &ptr, &stmt, 1))) {
            fq__ix_mismatch(w, counter, off);
            break;
        }
        if (listed && !fq__stmt_ok(w->p, stmt)) {
            fq__ix_mismatch(w, counter, start);
            break;
        }
        off = next;
        w->pt.counter = counter;
        w->pt.stmt = stmt;
        w->pt.loc = start;
        w->pt.aux = ptr0;
        if (fq__keep_point(w->p, &w->pt)) fq__eval_point(w);
        if (FRAMES__UNLIKELY(w->oom) || fq__stopped(w)) break;
    }
    w->slot->reached = off;
}

/* frames: the record of frame k (bounds checked): its offset and payload length. */
static int fq__ix_frame_at(const fq_trace *t, uint64_t k, uint64_t *off, uint64_t *len) {
    fq__chunk c;
    uint64_t i, o;
    fq__ix_locate(t, k, &c);
    for (i = c.counter, o = c.off;; i++) {
        uint64_t l;
        if (o > t->size || t->size - o < 8) return 0;
        l = frames__le64(t->data + o);
        if (l > t->size - o - 8) return 0;
        if (i == k) {
            *off = o;
            *len = l;
            return 1;
        }
        o += 8 + l;
    }
}

/* frames: evaluate std_frame k of a posting list. */
static void fq__ix_frame(fq__worker *w, uint64_t k) {
    const fq_trace *t = w->p->t;
    uint64_t off = FRAMES_NO_POS, len = 0;
    frames_error e;
    if (!fq__ix_frame_at(t, k, &off, &len) ||
        frames_decode_frame(&w->dec, t->data + off + 8, (size_t)len, &w->fr, &e) < 0 ||
        w->fr.kind != FRAMES_KIND_STD || !fq__stmt_ok(w->p, w->fr.std.address)) {
        fq__ix_mismatch(w, k, off);
        return;
    }
    w->pt.counter = k;
    w->pt.stmt = w->fr.std.address;
    w->pt.tid = w->fr.std.thread_id;
    w->pt.has_tid = 1;
    w->pt.loc = off + 8;
    w->pt.aux = len;
    w->slot->reached = k;
    if (!fq__keep_point(w->p, &w->pt)) return;
    w->ndv = 0;
    fq__frames_vars(w, &w->fr.std, 0);
    fq__eval_point(w);
}

/* The points a run visits when the index's posting lists select them. */
typedef struct fq__sel {
    int on;
    const uint8_t *list;   /* one posting list, in place (entries of `width` bytes) */
    uint32_t width;
    uint64_t *merged;      /* or the union of several, in point order (allocated) */
    uint64_t n;
} fq__sel;

static uint64_t fq__sel_at(const fq__sel *s, uint64_t j) {
    if (s->merged) return s->merged[j];
    return s->width == 4 ? frames__le32(s->list + 4 * j) : frames__le64(s->list + 8 * j);
}

static void fq__sel_free(fq__sel *s, void *ctx) {
    FRAMES_FREE(s->merged, ctx);
    memset(s, 0, sizeof *s);
}

static uint64_t fq__ix_stmt(const fq__ix *x, uint64_t i) { return fq__ix_u64(x, FQ__XS_STMTS, 2 * i); }
static uint64_t fq__ix_first(const fq__ix *x, uint64_t i) { return fq__ix_u64(x, FQ__XS_STMTS, 2 * i + 1); }

/* First statement-table entry >= s. */
static uint64_t fq__ix_lower(const fq__ix *x, uint64_t s) {
    uint64_t lo = 0, hi = x->nstmt;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (fq__ix_stmt(x, mid) < s) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

static int fq__u64_cmp(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static int fq__ix_corrupt(frames_error *err, const char *what) {
    return fq__fail(err, FQ_E_STALE, FRAMES_NO_POS, FRAMES_NO_POS,
                    "the index is damaged (%s): rebuild it or query without it", what);
}

/* Merge the posting lists of statement entries ent[0..n) into s->merged, checking that
   each is ascending and below the number of points. A binary heap of list heads. */
static int fq__ix_merge(const fq__ix *x, const uint64_t *ent, size_t n, fq__sel *s, void *ctx,
                        frames_error *err) {
    fq__head *hp = (fq__head *)FRAMES_MALLOC(n * sizeof *hp, ctx);
    size_t nh = 0, i;
    uint64_t out = 0, last = 0;
    if (!hp) return fq__oom(err);
    if (!(s->merged = (uint64_t *)FRAMES_MALLOC((size_t)(s->n ? s->n : 1) * sizeof(uint64_t), ctx))) {
        FRAMES_FREE(hp, ctx);
        return fq__oom(err);
    }
    for (i = 0; i < n; i++) {
        uint64_t a = fq__ix_first(x, ent[i]), e = fq__ix_first(x, ent[i] + 1);
        if (a == e) continue;
        hp[nh].key = fq__ix_post(x, a);
        hp[nh].at = a;
        hp[nh].end = e;
        fq__heap_up(hp, nh++);
    }
    while (nh) {
        uint64_t v = hp[0].key;
        if (v >= x->npoints || (out && v <= last) || out >= s->n) {
            FRAMES_FREE(hp, ctx);
            return fq__ix_corrupt(err, "posting lists out of order");
        }
        s->merged[out++] = last = v;
        if (++hp[0].at < hp[0].end) {
            uint64_t nv = fq__ix_post(x, hp[0].at);
            if (nv <= v) {
                FRAMES_FREE(hp, ctx);
                return fq__ix_corrupt(err, "a posting list out of order");
            }
            hp[0].key = nv;
        } else hp[0] = hp[--nh];
        fq__heap_down(hp, nh);
    }
    FRAMES_FREE(hp, ctx);
    return out == s->n ? FRAMES_OK : fq__ix_corrupt(err, "posting list lengths");
}

/* The statement-table entries the statement filters keep, ascending, into *out (n of
   them, allocated) with their postings' total in *total (checked against the table).
   0, or a negative code. */
static int fq__ix_entries(const fq_plan *p, uint64_t **out, size_t *n, uint64_t *total, frames_error *err) {
    const fq__ix *x = p->t->ix;
    uint64_t *ent = NULL, i;
    size_t nent = 0, cap = 0, k;
    int rc = 0;
    *out = NULL;
    *n = 0;
    *total = 0;
#define FQ__ADD(e)                                                                           \
    do {                                                                                    \
        if (FRAMES__GROW(ent, cap, nent + 1, p->ctx) < 0) {                                     \
            rc = fq__oom(err);                                                              \
            goto done;                                                                      \
        }                                                                                   \
        ent[nent++] = (e);                                                                  \
    } while (0)
    if (p->mask == UINT64_MAX) {   /* one statement */
        i = fq__ix_lower(x, p->stmt);
        if (i < x->nstmt && fq__ix_stmt(x, i) == p->stmt && fq__stmt_ok(p, p->stmt)) FQ__ADD(i);
    } else if (p->npcs) {          /* the statements in the ranges */
        for (k = 0; k < p->npcs; k++)
            for (i = fq__ix_lower(x, p->pcs[2 * k]); i < x->nstmt && fq__ix_stmt(x, i) <= p->pcs[2 * k + 1]; i++)
                if (fq__stmt_ok(p, fq__ix_stmt(x, i))) FQ__ADD(i);
        if (p->npcs > 1 && nent > 1) {   /* overlapping ranges */
            size_t u = 1;
            qsort(ent, nent, sizeof *ent, fq__u64_cmp);
            for (k = 1; k < nent; k++)
                if (ent[k] != ent[u - 1]) ent[u++] = ent[k];
            nent = u;
        }
    } else {                       /* a mask: every statement is tested */
        for (i = 0; i < x->nstmt; i++)
            if (fq__stmt_ok(p, fq__ix_stmt(x, i))) FQ__ADD(i);
    }
#undef FQ__ADD
    for (k = 0; k < nent; k++) {
        uint64_t a = fq__ix_first(x, ent[k]), e = fq__ix_first(x, ent[k] + 1);
        if (a > e || e > x->ncand) {
            rc = fq__ix_corrupt(err, "statement table");
            goto done;
        }
        *total += e - a;
    }
done:
    if (rc < 0) FRAMES_FREE(ent, p->ctx);
    else {
        *out = ent;
        *n = nent;
    }
    return rc;
}

/* Select the points the statement filters keep from the posting lists: 1 when s holds
   them, 0 when the index cannot help (no index, no statement filter, or so many points
   that a scan is cheaper), or a negative code. */
static int fq__ix_select(const fq_plan *p, fq__sel *s, frames_error *err) {
    const fq__ix *x = p->t->ix;
    uint64_t *ent = NULL, i, total = 0;
    size_t nent = 0;
    int rc = 1;
    memset(s, 0, sizeof *s);
    if (!x || (!p->mask && !p->npcs)) return 0;
    if ((rc = fq__ix_entries(p, &ent, &nent, &total, err)) < 0) return rc;
    rc = 1;
    if (total > x->npoints / 4) {   /* most points: scanning them in order is cheaper */
        rc = 0;
        goto done;
    }
    s->n = total;
    s->on = 1;
    s->width = x->pwidth;
    if (nent == 1) {   /* the list in place, checked once */
        uint64_t a = fq__ix_first(x, ent[0]), last = 0;
        s->list = x->sec[FQ__XS_POST] + a * x->pwidth;
        for (i = 0; i < total; i++) {
            uint64_t v = fq__sel_at(s, i);
            if (v >= x->npoints || (i && v <= last)) {
                rc = fq__ix_corrupt(err, "a posting list out of order");
                goto done;
            }
            last = v;
        }
    } else if (nent > 1 && (rc = fq__ix_merge(x, ent, nent, s, p->ctx, err)) >= 0)
        rc = 1;
done:
    FRAMES_FREE(ent, p->ctx);
    if (rc <= 0) fq__sel_free(s, p->ctx);
    return rc;
}

/* Ask for the bytes of points [first, last] at once: on a cold file, one large read
   instead of a fault per page (a no-op when they are cached). */
static void fq__ix_willneed(const fq_trace *t, uint64_t first, uint64_t last) {
#if !defined(FRAMES_NO_POSIX) && defined(MADV_WILLNEED)
    fq__chunk a, b;
    uint64_t end;
    if (!t->map || first > last || last >= t->ix->npoints) return;
    fq__ix_locate(t, first, &a);
    if (last + 1 < t->ix->npoints) {
        fq__ix_locate(t, last + 1, &b);
        end = b.off;
    } else end = t->size;
    a.off &= ~(uint64_t)4095;
    if (a.off < end && end <= t->maplen) madvise((uint8_t *)t->map + a.off, (size_t)(end - a.off), MADV_WILLNEED);
#else
    (void)t, (void)first, (void)last;
#endif
}

/* A work item with an index: a range of points, or of the posting-list selection. */
static void fq__ix_process(fq__worker *w, uint64_t lo, uint64_t hi) {
    const fq__sel *s = w->sel;
    int tdb = w->p->format == FQ_TRACE_TRACEDB;
    uint64_t j;
    if (hi > lo) {   /* this item and the next one (usually another worker's, or ours next) */
        uint64_t end = !s || !s->on ? w->p->t->ix->npoints : s->n, hi2 = end - hi > hi - lo ? hi + (hi - lo) : end;
        if (!s || !s->on) fq__ix_willneed(w->p->t, lo, hi2 - 1);
        else fq__ix_willneed(w->p->t, fq__sel_at(s, lo), fq__sel_at(s, hi2 - 1));
    }
    if (!s || !s->on) {
        if (tdb) fq__ix_tdb_range(w, lo, hi, w->p->mask || w->p->npcs, 0);
        else fq__frames_process(w, lo, hi);
        return;
    }
    for (j = lo; j < hi; j++) {
        uint64_t k = fq__sel_at(s, j);
        if (tdb) fq__ix_tdb_range(w, k, k + 1, 0, 1);
        else fq__ix_frame(w, k);
        if (w->slot->rc || FRAMES__UNLIKELY(w->oom) || fq__stopped(w)) break;
    }
}

/* --------------------------------------------------------------------------------------
   running: workers
   -------------------------------------------------------------------------------------- */

static int fq__col_on(const fq__worker *w);
static void fq__col_item(fq__worker *w, uint64_t lo, uint64_t hi);

static void fq__process(fq__worker *w, uint64_t lo, uint64_t hi) {
    w->group = FQ__NONE;
    w->oom = 0;
    if (fq__col_on(w)) fq__col_item(w, lo, hi);
    else if (w->p->t->ix) fq__ix_process(w, lo, hi);
    else if (w->p->format == FQ_TRACE_TRACEDB) fq__tdb_process(w, lo, hi);
    else fq__frames_process(w, lo, hi);
    if (w->oom && !w->slot->rc)
        w->slot->rc = fq__fail(&w->slot->err, FRAMES_E_NOMEM, FRAMES_NO_POS, w->pt.counter,
                               "out of memory evaluating point %llu", (unsigned long long)w->pt.counter);
}

/* --------------------------------------------------------------------------------------
   running
   -------------------------------------------------------------------------------------- */

/* Set of byte strings (dedup keys): the keys one after another in keys[], a hash table
   of where each starts. */
typedef struct fq__set_e {
    uint64_t hash;   /* frames__htab's */
    uint64_t off;
    uint32_t len;
} fq__set_e;

typedef struct fq__set {
    frames__htab index;
    uint8_t *keys;
    size_t nkeys, capkeys;
    void *ctx;
} fq__set;

static void fq__set_init(fq__set *s, void *ctx) {
    memset(s, 0, sizeof *s);
    FRAMES__HTAB_INIT(&s->index, fq__set_e, (size_t)-1);   /* one a result delivered */
    s->ctx = ctx;
}

static void fq__set_free(fq__set *s) {
    frames__htab_free(&s->index, s->ctx);
    FRAMES_FREE(s->keys, s->ctx);
}

static uint64_t fq__hash(const uint8_t *k, size_t n) {
    uint64_t h = frames__hash_bytes(FRAMES__HASH_SEED, k, n);
    return h ^ (h >> 29);
}

/* 1 if inserted, 0 if present, -1 out of memory. */
static int fq__set_add(fq__set *s, const uint8_t *k, size_t n) {
    uint64_t h = fq__hash(k, n);
    size_t at = 0;
    fq__set_e *e;
    while ((e = FRAMES__HTAB_NEXT(&s->index, fq__set_e, h, &at)) != NULL)
        if (e->len == n && !memcmp(s->keys + e->off, k, n)) return 0;
    if (FRAMES__GROW(s->keys, s->capkeys, s->nkeys + n + 1, s->ctx) < 0 ||
        !(e = (fq__set_e *)frames__htab_add(&s->index, h, s->ctx)))
        return -1;
    memcpy(s->keys + s->nkeys, k, n);
    e->off = s->nkeys;
    e->len = (uint32_t)n;
    s->nkeys += n;
    return 1;
}

typedef struct fq__krange { int any, empty; uint64_t lo, hi; } fq__krange;

typedef struct fq__kconj {   /* the column kernel's conjuncts: operands a, b compared */
    uint8_t mask;          /* bit c+1: outcome c makes it true */
    uint8_t ka, kb;        /* FQ__K_CONST, _VALUE, _SIZE */
    uint8_t na, nb;        /* constants: sign */
    uint64_t ma, mb;       /* constants: magnitude */
} fq__kconj;

typedef struct fq__colrun {    /* with an index's columns: the postings the run reads */
    int on, all;       /* all: every posting; else the statement entries ent[] */
    int merge;         /* point order: work items are points, the entries' lists merged */
    int slots, names;  /* the records' slots and names are needed */
    uint64_t *ent, *cum;   /* entries and the postings before each (cum[nent] = n) */
    size_t nent;
    uint64_t n;        /* postings in the run */
    uint32_t *ty;      /* the types the query binds that have records */
    uint32_t ncol;
    int kernel;        /* count-only scan of whole value columns (fq__col_kernel) */
    int detached;      /* results name their column records, not slots of the trace's point */
    int ranges;        /* the conjuncts are intervals: of the value (signed and unsigned
                          readings: vr[0], vr[1]) and of the buffer size (sr) */
    fq__krange vr[2], sr;
    size_t nk;
    fq__kconj *kc;
} fq__colrun;

typedef struct fq__run {
    const fq_plan *p;
    const fq_trace *t;
    fq_result_fn fn;
    void *ctx;
    uint64_t limit, delivered, counted, lo, hi, per;
    int stop, rc, mt, ended;   /* ended: an item found the end of the trace */
    frames_error err;
    fq__worker cons;       /* the consumer's decoding scratch */
    fq_binding *binds;
    fq__set seen;
    uint8_t *key;
    size_t capkey;
    fq__slot *slots;
    unsigned nslots;
    void (*progress)(void *ctx, uint64_t done, uint64_t total);
    void *progress_ctx;
    fq__sel sel;           /* with an index: the points the statement filters select */
    fq__colrun col;
    fq__chunk near;        /* column runs: the point after the last one delivered (off 0: none) */
    uint64_t released;     /* column runs: the trace's pages before this left the process */
    volatile int abort;
#ifndef FRAMES_QUERY_NO_THREADS
    pthread_mutex_t mu;
    pthread_cond_t cw, cc;   /* workers wait on cw, the consumer on cc */
    uint64_t next;
#endif
} fq__run;

#if defined(__GNUC__) || defined(__clang__)
#define FQ__LOAD(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)
#define FQ__STORE(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELAXED)
#else
#define FQ__LOAD(x) (x)
#define FQ__STORE(x, v) ((x) = (v))
#endif

static int fq__stopped(const fq__worker *w) {
    return w->run->mt ? FQ__LOAD(w->run->abort) : w->run->stop;
}

static int fq__worker_init(fq__worker *w, const fq_plan *p, fq__run *r) {
    memset(w, 0, sizeof *w);
    w->p = p;
    w->run = r;
    w->detached = r->col.detached;
    w->ctx = p->ctx;
    w->group = FQ__NONE;
    w->sel = &r->sel;
    w->vals = (fq__num *)FRAMES_MALLOC((p->nnodes ? p->nnodes : 1) * sizeof(fq__num), p->ctx);
    w->limbs = (uint64_t *)FRAMES_MALLOC((p->nlimbs ? p->nlimbs : 1) * sizeof(uint64_t), p->ctx);
    frames_decoder_init(&w->dec, NULL, 0, p->ctx);
    if (!w->vals || !w->limbs) return -1;
    memset(w->vals, 0, (p->nnodes ? p->nnodes : 1) * sizeof(fq__num));
    return 0;
}

static void fq__worker_free(fq__worker *w) {
    FRAMES_FREE(w->vals, w->ctx);
    FRAMES_FREE(w->ccur, w->ctx);
    FRAMES_FREE(w->heads, w->ctx);
    FRAMES_FREE(w->limbs, w->ctx);
    FRAMES_FREE(w->dv, w->ctx);
    FRAMES_FREE(w->cand, w->ctx);
    FRAMES_FREE(w->aux, w->ctx);
    FRAMES_FREE(w->bufs, w->ctx);
    frames_decoder_free(&w->dec);
}

/* ---------------------------------------------------------------- evaluation from columns

   With an index's columns (trace-db), the free variables are bound from the records of
   the types they admit, read in posting order (statement, then point): the trace's pages
   are not touched until a result is delivered (fq__materialize finds and checks its
   point then). Count-only runs visit the statements in table order; runs that deliver
   results use the columns when the postings they read are in point order (one statement)
   and the trace otherwise. */

#define FQ__NOLOC UINT64_MAX   /* result header: the point's offset is not known yet */

/* --------------------------------------------------------------------------------------
   running: column runs (postings of an index, read as columns)
   -------------------------------------------------------------------------------------- */

static int fq__col_on(const fq__worker *w) { return w->run->col.on; }

static void fq__col_bad(fq__worker *w, uint64_t k, const char *what) {
    if (!w->slot->rc)
        w->slot->rc = fq__fail(&w->slot->err, FQ_E_STALE, FRAMES_NO_POS, k,
                               "the index is damaged (%s, point %llu): rebuild it or "
                               "query without it", what, (unsigned long long)k);
}

/* Record r of column c (type `type`) into *v: 1 when its name is out of range. */
FRAMES__INLINE int fq__col_fill(const fq__worker *w, const fq_trace *t, const fq__col *c, uint32_t type, uint64_t r,
                            uint64_t m, int slots, int names, fq__dvar *v) {
    uint32_t size = c->vw;
    int bad = 0;
    v->slot = slots ? (uint32_t)fq__rdw(c->slot, r, c->sw) : 0;
    v->name = 0;
    if (names) {
        uint64_t nm = fq__rdw(c->name, r, c->nw);
        if (FRAMES__UNLIKELY(nm >= t->nnames)) bad = 1;
        else v->name = (uint32_t)nm;
    }
    v->type = type;
    v->rec = r;
    v->fmt = (uint8_t)t->types[type].fmt;
    v->flags = 0;
    v->match = m;
    v->addr = 0;
    v->size = 0;
    v->nm = NULL;
    v->nmlen = 0;
    v->memk = 0;
    if (FRAMES__UNLIKELY(c->flags & FQ__COL_BLOB)) {   /* the length only: v/value is invalid */
        v->len = frames__le32(c->val + 4 * r);
        v->bits = v->len * 8;
        v->bytes = NULL;
        v->raw = 0;
        v->num.kind = FQ__INV;
        return bad;
    }
    v->len = size;
    v->bits = size * 8;
    v->bytes = c->val + r * size;
    if (c->flags & FQ__COL_PTR) {
        if (c->pvalid[r / 8] >> (r % 8) & 1) {
            v->flags = FQ_B_HAS_SIZE;
            v->size = frames__le64(c->psize + 8 * r);
        }
    }
    fq__tdb_num(w, v, v->fmt, size,
                size == 4 ? frames__le32(v->bytes) : size == 8 ? frames__le64(v->bytes) : fq__leN(v->bytes, size));
    return bad;
}

/* Record r of column c as a variable of the current point. */
FRAMES__INLINE void fq__col_var(fq__worker *w, const fq_trace *t, const fq__col *c, uint32_t type, uint64_t r,
                            uint64_t m, int slots, int names) {
    if (FRAMES__UNLIKELY(w->ndv == w->capdv) && FRAMES__GROW(w->dv, w->capdv, w->ndv + 1, w->ctx) < 0) {
        w->oom = 1;
        return;
    }
    w->colbad |= fq__col_fill(w, t, c, type, r, m, slots, names, &w->dv[w->ndv++]);
}

/* The first record of each column at posting j into cur[], with the mark of j's block
   checked against the block before it; 0, or -1 (reported) when they disagree. */
static int fq__col_locate(fq__worker *w, uint64_t j, uint64_t *cur) {
    const fq__colrun *cr = &w->run->col;
    const fq__ix *x = w->p->t->ix;
    uint32_t q;
    for (q = 0; q < cr->ncol; q++) {
        const fq__col *c = &x->cols[cr->ty[q]];
        uint64_t at, i, b = j / 64;
        if (!c->cw) at = j * c->c;
        else {
            at = frames__le64(c->mark + 8 * b);
            if (b > 0) {
                uint64_t prev = frames__le64(c->mark + 8 * (b - 1));
                for (i = 64 * (b - 1); i < 64 * b; i++) prev += fq__rdw(c->cnt, i, c->cw);
                if (prev != at) {
                    fq__col_bad(w, j, "record marks");
                    return -1;
                }
            }
            for (i = 64 * b; i < j; i++) at += fq__rdw(c->cnt, i, c->cw);
        }
        cur[q] = at;
    }
    return 0;
}

/* Posting j (point k) with the columns' next records at cur[]: bind and evaluate.
   Nonzero: stop (damage reported, out of memory, or the run stops). */
static int fq__col_posting(fq__worker *w, uint64_t j, uint64_t k, uint64_t *cur) {
    const fq__colrun *cr = &w->run->col;
    const fq_trace *t = w->p->t;
    const fq__ix *x = t->ix;
    const fq__ptype *pty = w->p->ptypes;
    uint32_t q, contrib = 0;
    w->pt.counter = k;
    w->ndv = 0;
    for (q = 0; q < cr->ncol; q++) {
        uint32_t ti = cr->ty[q];
        const fq__col *c = &x->cols[ti];
        uint64_t n, at = cur[q];
        if (c->cw && j % 64 == 0 && frames__le64(c->mark + 8 * (j / 64)) != at) {
            fq__col_bad(w, k, "record marks");
            return 1;
        }
        n = c->cw ? fq__rdw(c->cnt, j, c->cw) : c->c;
        if (FRAMES__UNLIKELY(at > c->n || n > c->n - at)) {
            fq__col_bad(w, k, "record counts");
            return 1;
        }
        cur[q] = at + n;
        contrib += n != 0;
        for (; n; n--, at++) fq__col_var(w, t, c, ti, at, pty[ti].mask, cr->slots, cr->names);
    }
    if (FRAMES__UNLIKELY(w->colbad)) {
        fq__col_bad(w, k, "a name");
        return 1;
    }
    if (contrib > 1 && w->slot->cap) {   /* delivered: candidates in entry order, as in the trace */
        size_t a, b;
        for (a = 1; a < w->ndv; a++) {
            fq__dvar tmp = w->dv[a];
            for (b = a; b > 0 && w->dv[b - 1].slot > tmp.slot; b--) w->dv[b] = w->dv[b - 1];
            w->dv[b] = tmp;
        }
    }
    fq__eval_point(w);
    return FRAMES__UNLIKELY(w->oom) || fq__stopped(w);
}

/* Postings [ja, jb) of the statement whose postings start at jfirst. */
static int fq__col_range(fq__worker *w, uint64_t jfirst, uint64_t ja, uint64_t jb, uint64_t stmt) {
    const fq__ix *x = w->p->t->ix;
    uint64_t j, last = ja > jfirst ? fq__ix_post(x, ja - 1) : 0;
    w->pt.stmt = stmt;
    for (j = ja; j < jb; j++) {
        uint64_t k = fq__ix_post(x, j);
        if (FRAMES__UNLIKELY(k >= x->npoints || (j > jfirst && k <= last))) {
            fq__col_bad(w, k, "a posting list out of order");
            return 1;
        }
        last = k;
        if (fq__col_posting(w, j, k, w->ccur)) return 1;
    }
    return 0;
}

/* A work item of a column run in statement order: positions [lo, hi) of the run's
   postings (every posting, or the selected statements' one after the other). */
static void fq__col_process(fq__worker *w, uint64_t lo, uint64_t hi) {
    const fq__colrun *cr = &w->run->col;
    const fq__ix *x = w->p->t->ix;
    uint64_t v = lo, e = 0, next = UINT64_MAX;
    size_t i = 0;
    if (cr->all) {   /* the last entry whose postings start at or before lo */
        uint64_t a = 0, b = x->nstmt;
        while (b - a > 1) {
            uint64_t mid = a + (b - a) / 2;
            if (fq__ix_first(x, mid) <= lo) a = mid;
            else b = mid;
        }
        e = a;
    } else {
        size_t a = 0, b = cr->nent;
        while (b - a > 1) {
            size_t mid = a + (b - a) / 2;
            if (cr->cum[mid] <= lo) a = mid;
            else b = mid;
        }
        i = a;
    }
    while (v < hi) {
        uint64_t ja, jb, jf, stmt;
        if (cr->all) {
            while (e + 1 < x->nstmt && fq__ix_first(x, e + 1) <= v) e++;
            ja = v;
            jf = fq__ix_first(x, e);
            jb = fq__ix_first(x, e + 1);
            if (jb <= ja || jb > x->ncand || jf > ja) {
                fq__col_bad(w, v, "statement table");
                break;
            }
            if (jb > hi) jb = hi;
            stmt = fq__ix_stmt(x, e);
        } else {
            while (cr->cum[i + 1] <= v) i++;
            jf = fq__ix_first(x, cr->ent[i]);
            ja = jf + (v - cr->cum[i]);
            jb = ja + ((cr->cum[i + 1] < hi ? cr->cum[i + 1] : hi) - v);
            stmt = fq__ix_stmt(x, cr->ent[i]);
        }
        if (ja != next && fq__col_locate(w, ja, w->ccur) < 0) break;
        if (fq__col_range(w, jf, ja, jb, stmt)) break;
        next = jb;
        v += jb - ja;
    }
    w->slot->reached = cr->n ? (uint64_t)((double)w->p->t->size * (double)v / (double)cr->n) : 0;
}

/* First posting in [a, b) (ascending, checked) whose point is >= k. */
static uint64_t fq__col_lower(const fq__ix *x, uint64_t a, uint64_t b, uint64_t k) {
    while (a < b) {
        uint64_t mid = a + (b - a) / 2;
        if (fq__ix_post(x, mid) < k) a = mid + 1;
        else b = mid;
    }
    return a;
}

/* A work item of a column run in point order: the points [lo, hi) of the selected
   statements, their posting lists merged (a heap of list heads, smallest point first). */
static void fq__col_merge(fq__worker *w, uint64_t lo, uint64_t hi) {
    const fq__colrun *cr = &w->run->col;
    const fq__ix *x = w->p->t->ix;
    fq__head *hp = w->heads;
    size_t nh = 0, i;
    for (i = 0; i < cr->nent; i++) {
        uint64_t f = fq__ix_first(x, cr->ent[i]), l = fq__ix_first(x, cr->ent[i] + 1);
        uint64_t a = fq__col_lower(x, f, l, lo), b = fq__col_lower(x, a, l, hi);
        if (a == b) continue;
        hp[nh].at = a;
        hp[nh].end = b;
        hp[nh].key = fq__ix_post(x, a);
        hp[nh].ent = cr->ent[i];
        hp[nh].cur = w->ccur + i * cr->ncol;
        if (fq__col_locate(w, a, hp[nh].cur) < 0) return;
        fq__heap_up(hp, nh++);
    }
    while (nh) {
        fq__head *h = &hp[0];
        w->pt.stmt = fq__ix_stmt(x, h->ent);
        if (fq__col_posting(w, h->at, h->key, h->cur)) return;
        if (++h->at < h->end) h->key = fq__ix_post(x, h->at);
        else hp[0] = hp[--nh];
        fq__heap_down(hp, nh);
    }
    w->slot->reached = x->npoints ? (uint64_t)((double)w->p->t->size * (double)hi / (double)x->npoints) : 0;
}

/* --------------------------------------------------------------------------------------
   running: the column kernel
   -------------------------------------------------------------------------------------- */

/* Count-only runs of one free variable whose hard predicate is a conjunction of
   comparisons between its v/value or v/size and integer constants (and no soft
   predicate) count the records of each bound type's columns over whole posting ranges:
   no per-point work, no variable records. */

enum { FQ__K_CONST = 0, FQ__K_VALUE = 1, FQ__K_SIZE = 2 };

/* The records [*rs, *re) of column c at postings [ja, jb), with every mark on the way
   checked against the counts (as the per-posting walk checks them); 0 or -1 (reported). */
static int fq__col_span(fq__worker *w, const fq__col *c, uint64_t ja, uint64_t jb, uint64_t *rs, uint64_t *re) {
    uint64_t j, at, b0 = ja / 64;
    if (!c->cw) {
        *rs = ja * c->c;
        *re = jb * c->c;
        return 0;
    }
    at = *rs = frames__le64(c->mark + 8 * b0);
    if (b0 > 0) {
        uint64_t prev = frames__le64(c->mark + 8 * (b0 - 1));
        for (j = 64 * (b0 - 1); j < 64 * b0; j++) prev += fq__rdw(c->cnt, j, c->cw);
        if (prev != at) goto bad;
    }
    for (j = 64 * b0; j < jb; j++) {
        if (j == ja) *rs = at;
        if (j % 64 == 0 && j > 64 * b0 && frames__le64(c->mark + 8 * (j / 64)) != at) goto bad;
        at += fq__rdw(c->cnt, j, c->cw);
    }
    if (ja == jb) *rs = at;
    *re = at;
    if (*rs <= *re && *re <= c->n) return 0;
    fq__col_bad(w, ja, "record counts");
    return -1;
bad:
    fq__col_bad(w, ja, "record marks");
    return -1;
}

/* Records [rs, re) of column c that satisfy every kernel conjunct. */
static uint64_t fq__col_count(const fq__colrun *cr, const fq__col *c, unsigned fmt, uint64_t rs, uint64_t re) {
    const fq__kconj *k0 = cr->kc, *kend = cr->kc + cr->nk, *k;
    uint32_t vw = c->vw;
    int sgn = fmt == FQ_TYPE_SIGNED, ptr = (c->flags & FQ__COL_PTR) != 0;
    uint64_t r, n = 0;
    for (r = rs; r < re; r++) {
        uint64_t raw = vw == 4 ? frames__le32(c->val + 4 * r) : vw == 8 ? frames__le64(c->val + 8 * r) : fq__leN(c->val + vw * r, vw);
        uint64_t vm, sm = 0;
        unsigned vn = 0;
        int sv = 0;
        if (sgn && vw < 8 && (raw >> (8 * vw - 1) & 1)) raw |= ~0ull << (8 * vw);
        vn = sgn && (int64_t)raw < 0;
        vm = vn ? 0 - raw : raw;
        for (k = k0; k < kend; k++) {
            uint64_t xa, xb;
            unsigned na, nb;
            int cmp;
            if (k->ka == FQ__K_SIZE || k->kb == FQ__K_SIZE) {
                if (!sv) {
                    sv = ptr && (c->pvalid[r / 8] >> (r % 8) & 1) ? 1 : -1;
                    if (sv > 0) sm = frames__le64(c->psize + 8 * r);
                }
                if (sv < 0) break;   /* no buffer size: the comparison is false */
            }
            xa = k->ka == FQ__K_CONST ? k->ma : k->ka == FQ__K_VALUE ? vm : sm;
            na = k->ka == FQ__K_CONST ? k->na : k->ka == FQ__K_VALUE ? vn : 0;
            xb = k->kb == FQ__K_CONST ? k->mb : k->kb == FQ__K_VALUE ? vm : sm;
            nb = k->kb == FQ__K_CONST ? k->nb : k->kb == FQ__K_VALUE ? vn : 0;
            if (na != nb) cmp = na ? -1 : 1;
            else {
                cmp = (int)(xa > xb) - (int)(xa < xb);
                if (na) cmp = -cmp;
            }
            if (!(k->mask >> (cmp + 1) & 1)) break;
        }
        n += k == kend;
    }
    return n;
}

/* Records [rs, re) in the intervals cr->vr / cr->sr: v is in [lo, hi] when v - lo <= hi - lo
   (two's complement, so the same test serves signed readings). */
static uint64_t fq__col_count_ranges(const fq__colrun *cr, const fq__col *c, unsigned fmt, uint64_t rs, uint64_t re) {
    const fq__krange *vr = &cr->vr[fmt == FQ_TYPE_SIGNED ? 0 : 1], *sr = &cr->sr;
    uint64_t r, n = 0, lo = vr->lo, span = vr->hi - vr->lo, slo = sr->lo, sspan = sr->hi - sr->lo;
    const uint8_t *val = c->val;
    if (vr->empty || sr->empty || (sr->any && !(c->flags & FQ__COL_PTR))) return 0;
    if (!vr->any && !sr->any) return re - rs;
    if (!sr->any) {   /* the value only */
        if (c->vw == 4 && fmt == FQ_TYPE_SIGNED)
            for (r = rs; r < re; r++) n += (uint64_t)(int64_t)(int32_t)frames__le32(val + 4 * r) - lo <= span;
        else if (c->vw == 4)
            for (r = rs; r < re; r++) n += (uint64_t)frames__le32(val + 4 * r) - lo <= span;
        else if (c->vw == 8)
            for (r = rs; r < re; r++) n += frames__le64(val + 8 * r) - lo <= span;
        else
            for (r = rs; r < re; r++) {
                uint64_t raw = fq__leN(val + c->vw * r, c->vw);
                if (fmt == FQ_TYPE_SIGNED && (raw >> (8 * c->vw - 1) & 1)) raw |= ~0ull << (8 * c->vw);
                n += raw - lo <= span;
            }
        return n;
    }
    for (r = rs; r < re; r++) {   /* the buffer size, and the value when asked */
        uint64_t raw;
        if (!(c->pvalid[r / 8] >> (r % 8) & 1) || frames__le64(c->psize + 8 * r) - slo > sspan) continue;
        if (vr->any) {
            raw = fq__leN(val + c->vw * r, c->vw);
            if (fmt == FQ_TYPE_SIGNED && c->vw < 8 && (raw >> (8 * c->vw - 1) & 1)) raw |= ~0ull << (8 * c->vw);
            if (raw - lo > span) continue;
        }
        n++;
    }
    return n;
}

/* Exact integers for the intervals: sign and magnitude, with `big` = beyond 2^64 - 1. */
typedef struct fq__kint { unsigned neg, big; uint64_t mag; } fq__kint;

static int fq__kint_cmp(fq__kint a, fq__kint b) {
    int s;
    if (a.neg != b.neg) return a.neg ? -1 : 1;
    s = a.big != b.big ? (a.big ? 1 : -1) : (a.mag > b.mag) - (a.mag < b.mag);
    return a.neg ? -s : s;
}

static fq__kint fq__kint_add(fq__kint a, int d) {   /* a + d, d = -1 or 1 */
    if (a.mag == 0) {
        a.neg = d < 0;
        a.mag = 1;
    } else if ((d > 0) != (a.neg != 0)) {   /* away from zero */
        if (a.mag == UINT64_MAX) a.big = 1;
        else a.mag++;
    } else if (--a.mag == 0) a.neg = 0;
    return a;
}

/* Narrow r (in the signed reading when sgn) to the values v with v OP k. */
static void fq__krange_cut(fq__krange *r, int sgn, int op, fq__kint k) {
    fq__kint lo, hi, mn, mx;
    mn.big = mx.big = 0;
    mn.neg = sgn != 0;
    mn.mag = sgn ? 0x8000000000000000ull : 0;
    mx.neg = 0;
    mx.mag = sgn ? 0x7fffffffffffffffull : UINT64_MAX;
    if (r->any) {   /* the current bounds back to exact integers */
        lo.big = hi.big = 0;
        lo.neg = sgn && (int64_t)r->lo < 0;
        lo.mag = lo.neg ? 0 - r->lo : r->lo;
        hi.neg = sgn && (int64_t)r->hi < 0;
        hi.mag = hi.neg ? 0 - r->hi : r->hi;
    } else {
        lo = mn;
        hi = mx;
    }
    r->any = 1;
    if (op == FQ_OP_GT || op == FQ_OP_GE || op == FQ_OP_EQ) {
        fq__kint b = op == FQ_OP_GT ? fq__kint_add(k, 1) : k;
        if (fq__kint_cmp(b, lo) > 0) lo = b;
    }
    if (op == FQ_OP_LT || op == FQ_OP_LE || op == FQ_OP_EQ) {
        fq__kint b = op == FQ_OP_LT ? fq__kint_add(k, -1) : k;
        if (fq__kint_cmp(b, hi) < 0) hi = b;
    }
    if (fq__kint_cmp(lo, hi) > 0 || fq__kint_cmp(lo, mx) > 0 || fq__kint_cmp(hi, mn) < 0) {
        r->empty = 1;
        return;
    }
    r->lo = lo.neg ? 0 - lo.mag : lo.mag;
    r->hi = hi.neg ? 0 - hi.mag : hi.mag;
}

/* The kernel's conjuncts as intervals, when none is a != : 1, else 0. */
static int fq__col_ranges(fq__colrun *cr) {
    static const int mirror[5] = {FQ_OP_LT, FQ_OP_LE, FQ_OP_GT, FQ_OP_GE, FQ_OP_EQ};   /* k OP v */
    static const int ops[8] = {0, FQ_OP_LT, FQ_OP_EQ, FQ_OP_LE, FQ_OP_GT, FQ_OP_NE, FQ_OP_GE, 0};   /* by mask */
    size_t i;
    memset(cr->vr, 0, sizeof cr->vr);
    memset(&cr->sr, 0, sizeof cr->sr);
    for (i = 0; i < cr->nk; i++) {
        const fq__kconj *k = &cr->kc[i];
        int op = ops[k->mask & 7], flip = k->ka == FQ__K_CONST, kind = flip ? k->kb : k->ka;
        fq__kint c;
        if (op == 0 || op == FQ_OP_NE || (k->ka == FQ__K_CONST) == (k->kb == FQ__K_CONST)) return 0;
        c.big = 0;
        c.neg = flip ? k->na : k->nb;
        c.mag = flip ? k->ma : k->mb;
        if (flip) op = mirror[op - FQ_OP_GT];
        if (kind == FQ__K_SIZE) fq__krange_cut(&cr->sr, 0, op, c);
        else {
            fq__krange_cut(&cr->vr[0], 1, op, c);
            fq__krange_cut(&cr->vr[1], 0, op, c);
        }
    }
    return 1;
}

/* A work item of a kernel run: positions [lo, hi) of the run's postings. */
static void fq__col_kernel(fq__worker *w, uint64_t lo, uint64_t hi) {
    const fq__colrun *cr = &w->run->col;
    const fq_trace *t = w->p->t;
    const fq__ix *x = t->ix;
    uint64_t v = lo;
    size_t i = 0;
    uint32_t q;
    if (!cr->all) {
        size_t a = 0, b = cr->nent;
        while (b - a > 1) {
            size_t mid = a + (b - a) / 2;
            if (cr->cum[mid] <= lo) a = mid;
            else b = mid;
        }
        i = a;
    }
    while (v < hi && !fq__stopped(w)) {
        uint64_t ja = v, jb = hi;
        if (!cr->all) {
            while (cr->cum[i + 1] <= v) i++;
            ja = fq__ix_first(x, cr->ent[i]) + (v - cr->cum[i]);
            jb = ja + ((cr->cum[i + 1] < hi ? cr->cum[i + 1] : hi) - v);
        }
        for (q = 0; q < cr->ncol; q++) {
            const fq__col *c = &x->cols[cr->ty[q]];
            uint64_t rs, re;
            if (fq__col_span(w, c, ja, jb, &rs, &re) < 0) return;
            w->slot->count += cr->ranges ? fq__col_count_ranges(cr, c, t->types[cr->ty[q]].fmt, rs, re)
                                         : fq__col_count(cr, c, t->types[cr->ty[q]].fmt, rs, re);
        }
        v += jb - ja;
    }
    w->slot->reached = cr->n ? (uint64_t)((double)t->size * (double)v / (double)cr->n) : 0;
}

/* Can the kernel run p's hard predicate? Fills cr->kc. 0 no, 1 yes, -1 out of memory. */
static int fq__col_kernel_plan(const fq_plan *p, fq__colrun *cr) {
    static const uint8_t outcome[6] = {4, 6, 1, 3, 2, 5};   /* > >= < <= = != */
    const fq__ix *x = p->t->ix;
    uint32_t a, q;
    size_t i;
    if (p->nvars != 1 || p->nsoft || p->conj_off[1] != p->conj_off[2]) return 0;
    for (q = 0; q < cr->ncol; q++) {
        unsigned fmt = p->t->types[cr->ty[q]].fmt;
        if (fmt != FQ_TYPE_SIGNED && fmt != FQ_TYPE_UNSIGNED && fmt != FQ_TYPE_POINTER) return 0;
    }
    cr->nk = p->conj_off[1] - p->conj_off[0];
    if (!(cr->kc = (fq__kconj *)FRAMES_MALLOC((cr->nk ? cr->nk : 1) * sizeof *cr->kc, p->ctx))) return -1;
    for (i = 0; i < cr->nk; i++) {
        const fq__node *nd = &p->nodes[p->conj[p->conj_off[0] + i].node];
        fq__kconj *k = &cr->kc[i];
        int op = nd->op;
        if (!((op >= FQ_OP_GT && op <= FQ_OP_EQ) || op == FQ_OP_NE)) return 0;
        k->mask = outcome[op == FQ_OP_NE ? 5 : op - FQ_OP_GT];
        for (a = 0; a < 2; a++) {
            const fq__node *kid = &p->nodes[p->kids[nd->kid0 + a]];
            uint8_t kind;
            if (kid->op == FQ_OP_VALUE) kind = FQ__K_VALUE;
            else if (kid->op == FQ_OP_SIZE) kind = FQ__K_SIZE;
            else if ((kid->op == FQ_OP_INT || kid->op == FQ_OP_UINT) && kid->k.kind == FQ__INT && kid->k.n <= 1)
                kind = FQ__K_CONST;
            else return 0;
            if (a) {
                k->kb = kind;
                k->nb = kid->k.neg;
                k->mb = kid->k.small;
            } else {
                k->ka = kind;
                k->na = kid->k.neg;
                k->ma = kid->k.small;
            }
        }
    }
    (void)x;
    cr->ranges = fq__col_ranges(cr);
    return 1;
}

static void fq__col_item(fq__worker *w, uint64_t lo, uint64_t hi) {
    const fq__colrun *cr = &w->run->col;
    size_t need = (cr->merge ? cr->nent * cr->ncol : cr->ncol) + 1;   /* never a null base */
    w->pt.has_tid = 0;
    w->pt.tid = 0;
    w->pt.loc = FQ__NOLOC;
    w->pt.aux = 0;
    w->colbad = 0;
    if ((need > w->capccur && FRAMES__GROW(w->ccur, w->capccur, need, w->ctx) < 0) ||
        (cr->merge && cr->nent > w->capheads && FRAMES__GROW(w->heads, w->capheads, cr->nent, w->ctx) < 0)) {
        w->oom = 1;
        return;
    }
    if (cr->merge) fq__col_merge(w, lo, hi);
    else if (cr->kernel) fq__col_kernel(w, lo, hi);
    else fq__col_process(w, lo, hi);
}

static void fq__col_free(fq__colrun *cr, void *ctx) {
    FRAMES_FREE(cr->kc, ctx);
    FRAMES_FREE(cr->ent, ctx);
    FRAMES_FREE(cr->cum, ctx);
    FRAMES_FREE(cr->ty, ctx);
    memset(cr, 0, sizeof *cr);
}

/* Most statements a point-order column run merges (a head and cursors each per worker);
   more go through the trace. */
#define FQ__COL_MERGE_MAX 4096

/* Does the run read the columns? 1 and r->col set, 0 (the trace or the posting lists
   serve it), or a negative code. `ordered`: results are delivered in point order. */
static int fq__col_select(const fq_plan *p, fq__run *r, int ordered, frames_error *err) {
    const fq__ix *x = p->t->ix;
    fq__colrun *cr = &r->col;
    uint32_t ti;
    size_t i;
    int distinct = 0, name = 0, rc;
    memset(cr, 0, sizeof *cr);
    if (!x || !x->cols || p->format != FQ_TRACE_TRACEDB) return 0;
    for (i = 0; i < p->nnodes; i++) {
        distinct |= p->nodes[i].op == FQ_OP_DISTINCT;
        name |= p->nodes[i].op == FQ_OP_NAME;
    }
    for (ti = 0; ti < x->ncols; ti++)   /* blob contents are not in the columns */
        if (p->ptypes[ti].mask && x->cols[ti].n && (x->cols[ti].flags & FQ__COL_BLOB) && distinct &&
            (p->flags & FQ_COMPAT_DISTINCT_VALUE))
            return 0;
    if (!p->mask && !p->npcs && (!ordered || x->nstmt <= 1)) {
        cr->all = 1;
        cr->n = x->ncand;
    } else {
        if (!p->mask && !p->npcs) {   /* every statement, merged */
            if (x->nstmt > FQ__COL_MERGE_MAX) return 0;
            if (!(cr->ent = (uint64_t *)FRAMES_MALLOC((size_t)x->nstmt * sizeof(uint64_t), p->ctx))) return fq__oom(err);
            for (i = 0; i < x->nstmt; i++) {
                cr->ent[i] = i;
                if (fq__ix_first(x, i) > fq__ix_first(x, i + 1)) {
                    FRAMES_FREE(cr->ent, p->ctx);
                    cr->ent = NULL;
                    return fq__ix_corrupt(err, "statement table");
                }
            }
            cr->nent = (size_t)x->nstmt;
            cr->n = x->ncand;
        } else if ((rc = fq__ix_entries(p, &cr->ent, &cr->nent, &cr->n, err)) < 0)
            return rc;
        cr->merge = ordered && cr->nent > 1;
        if ((cr->merge && cr->nent > FQ__COL_MERGE_MAX) ||
            !(cr->cum = (uint64_t *)FRAMES_MALLOC((cr->nent + 1) * sizeof(uint64_t), p->ctx))) {
            rc = cr->merge && cr->nent > FQ__COL_MERGE_MAX ? 0 : fq__oom(err);
            fq__col_free(cr, p->ctx);
            return rc;
        }
        cr->cum[0] = 0;
        for (i = 0; i < cr->nent; i++) {
            uint64_t f = fq__ix_first(x, cr->ent[i]), l = fq__ix_first(x, cr->ent[i] + 1), j;
            cr->cum[i + 1] = cr->cum[i] + l - f;
            /* merged lists are searched: each must be ascending (the statement-order
               walk checks the same as it goes) */
            for (j = f; cr->merge && j < l; j++)
                if (fq__ix_post(x, j) >= x->npoints || (j > f && fq__ix_post(x, j) <= fq__ix_post(x, j - 1))) {
                    fq__col_free(cr, p->ctx);
                    return fq__ix_corrupt(err, "a posting list out of order");
                }
        }
        if (cr->merge) cr->n = x->npoints;   /* work items are ranges of points */
    }
    if (!(cr->ty = (uint32_t *)FRAMES_MALLOC((x->ncols ? x->ncols : 1) * sizeof(uint32_t), p->ctx))) {
        fq__col_free(cr, p->ctx);
        return fq__oom(err);
    }
    for (ti = 0; ti < x->ncols; ti++)
        if (p->ptypes[ti].mask && x->cols[ti].n) cr->ty[cr->ncol++] = ti;
    cr->slots = ordered || distinct;
    cr->names = name || (distinct && (p->flags & FQ_COMPAT_DISTINCT_VALUE));
    if (!ordered && !cr->merge && (cr->kernel = fq__col_kernel_plan(p, cr)) < 0) {
        fq__col_free(cr, p->ctx);
        return fq__oom(err);
    }
    cr->on = 1;
    return 1;
}

/* Can a run's results name their column records (fq__emit): no blob among the types
   it binds, records and types that fit a reference. */
static int fq__col_detachable(const fq__ix *x, const fq__colrun *cr) {
    uint32_t q;
    for (q = 0; q < cr->ncol; q++) {
        const fq__col *c = &x->cols[cr->ty[q]];
        if ((c->flags & FQ__COL_BLOB) || c->n >> FQ__REF_SHIFT || cr->ty[q] >> (63 - FQ__REF_SHIFT)) return 0;
    }
    return 1;
}

/* --------------------------------------------------------------------------------------
   running: results (bindings, dedup, delivery in trace order)
   -------------------------------------------------------------------------------------- */

/* A decoded variable as the caller sees it. */
static void fq__binding(const fq__run *r, const fq__dvar *v, uint32_t var, fq_binding *b) {
    const fq_trace *t = r->t;
    b->var = var;
    b->slot = v->slot;
    b->format = v->fmt;
    b->flags = v->flags;
    b->bits = v->bits;
    b->mem_index = v->memk;
    b->u = v->raw;
    b->i = (int64_t)v->raw;
    b->f = 0;
    b->size = v->size;
    b->addr = v->addr;
    b->bytes = frames_bytes_of(v->bytes, v->len);
    b->name = frames_bytes_of(v->nm ? v->nm : (const uint8_t *)"", v->nmlen);
    if (t->format == FQ_TRACE_TRACEDB) {
        uint32_t tn = t->types[v->type].name;
        b->name = frames_bytes_of(t->data + t->name_off[v->name], t->name_len[v->name]);
        b->name_index = v->name;
        b->type_index = v->type;
        b->type = frames_bytes_of(t->data + t->name_off[tn], t->name_len[tn]);
        b->type_buf[0] = 0;
        if (v->fmt == FQ_TYPE_FLOAT && v->len == 4) {
            uint32_t bits = (uint32_t)v->raw;
            float f;
            memcpy(&f, &bits, 4);
            b->f = f;
        } else if (v->fmt == FQ_TYPE_FLOAT && v->len == 8) memcpy(&b->f, &v->raw, 8);
    } else {
        int n;
        b->name_index = b->type_index = 0xffffffffu;
        n = snprintf(b->type_buf, sizeof b->type_buf, "%s%u", (v->flags & FQ_B_MEM) ? "mem" : "reg", v->bits);
        b->type = frames_bytes_of(b->type_buf, (size_t)(n < 0 ? 0 : n));
        b->f = (double)v->raw;
    }
}

/* Dedup key: statement and, per bound variable, its identity and type. */
static size_t fq__key(fq__run *r, uint64_t stmt, const fq_binding *b, unsigned k) {
    size_t need = 8, n = 0, i;
    for (i = 0; i < k; i++) need += 16 + b[i].name.len;
    if (need > r->capkey && FRAMES__GROW(r->key, r->capkey, need, r->p->ctx) < 0) return 0;
    memcpy(r->key, &stmt, 8);
    n = 8;
    for (i = 0; i < k; i++) {
        uint32_t w[4];
        w[0] = b[i].name_index;
        w[1] = b[i].type_index;
        w[2] = (b[i].flags & (FQ_B_POST | FQ_B_MEM | FQ_B_REG)) | (b[i].mem_index << 8);
        w[3] = r->t->format == FQ_TRACE_FRAMES ? b[i].bits : (uint32_t)b[i].name.len;
        memcpy(r->key + n, w, 16);
        n += 16;
        if (r->t->format == FQ_TRACE_FRAMES && b[i].name.len) {
            memcpy(r->key + n, b[i].name.ptr, b[i].name.len);
            n += b[i].name.len;
        }
    }
    return n;
}

/* A result found in the columns: where its point starts in the trace (walked with
   every bound checked, from the index's nearest entry) and its first pointer variable
   and previous statement, or FQ__NOLOC (r->err set) when the trace does not have that
   point of that statement there. */
static uint64_t fq__col_point(fq__run *r, const uint64_t *h, uint64_t *ptr, uint64_t *stmt) {
    const fq_trace *t = r->t;
    fq__worker *c = &r->cons;
    fq__chunk ch;
    uint64_t off = 0, i, p2, s2, next;
    if (h[0] < t->ix->npoints) {
        if (r->near.off && h[0] >= r->near.counter && h[0] - r->near.counter < 16)
            ch = r->near;   /* just after the last point delivered: walk on from there */
        else fq__ix_locate(t, h[0], &ch);
        off = ch.off;
        *ptr = ch.ptr_base;
        *stmt = ch.stmt;
        for (i = ch.counter; i < h[0] && off; i++) off = fq__tdb_point_checked(c, t, off, ptr, stmt, 0);
        p2 = *ptr;
        s2 = *stmt;
        if (off && (next = fq__tdb_point_checked(c, t, off, &p2, &s2, 0)) != 0 && s2 == h[1]) {
            r->near.counter = h[0] + 1;
            r->near.off = next;
            r->near.ptr_base = p2;
            r->near.stmt = s2;
            /* only this thread reads the trace in a column run, in point order: the pages
               behind it leave the process, so that a listing holds the index's pages and
               a window of the trace rather than both whole */
            fq__release_behind(t, &r->released, off);
            return off;
        }
    }
    fq__fail(&r->err, FQ_E_STALE, off ? off : FRAMES_NO_POS, h[0],
             "the index does not match the trace at point %llu: rebuild it or query "
             "without it", (unsigned long long)h[0]);
    return FQ__NOLOC;
}

/* What every result of the group at h has, bindings aside. */
static void fq__result_head(const fq__run *r, const uint64_t *h, fq_result *res) {
    memset(res, 0, sizeof *res);
    res->counter = h[0];
    res->stmt = h[1];
    res->format = r->t->format;
    res->nbind = r->p->nvars;
    res->bind = r->binds;
    res->var_names = (const char *const *)r->p->var_names;
}

/* Decode a point again (every variable) for delivery. */
static int fq__materialize(fq__run *r, const uint64_t *h, fq_result *res) {
    fq__worker *c = &r->cons;
    const fq_trace *t = r->t;
    c->ndv = 0;
    fq__result_head(r, h, res);
    if (t->format == FQ_TRACE_TRACEDB) {
        uint64_t ptr = h[4], stmt = 0, off = h[3];
        if (off == FQ__NOLOC && (off = fq__col_point(r, h, &ptr, &stmt)) == FQ__NOLOC) return r->err.code;
        fq__tdb_walk(c, t, off, &ptr, &stmt, 2);
        res->naux = (uint32_t)c->naux;
        res->aux = c->aux;
        res->nbuf = (uint32_t)c->nbufs;
        res->buf = c->bufs;
    } else {
        frames_error e;
        int rc = frames_decode_frame(&c->dec, t->data + h[3], (size_t)h[4], &c->fr, &e);
        if (rc < 0) return fq__fail(&r->err, rc, h[3], h[0], "%s", e.message);
        fq__frames_vars(c, &c->fr.std, 1);
        res->tid = h[2];
        res->has_tid = 1;
        res->frame = &c->fr;
    }
    if (c->oom) return fq__fail(&r->err, FRAMES_E_NOMEM, FRAMES_NO_POS, h[0], "out of memory");
    return FRAMES_OK;
}

static const fq__dvar *fq__find_slot(const fq__worker *c, uint64_t slot) {
    size_t i;
    if (slot < c->ndv && c->dv[slot].slot == slot) return &c->dv[slot];   /* all decoded */
    for (i = 0; i < c->ndv; i++)
        if (c->dv[i].slot == slot) return &c->dv[i];
    return NULL;
}

/* A result with its bindings set: dedup, limit, callback. */
static void fq__hand_over(fq__run *r, fq_result *res) {
    if (r->p->flags & FQ_DEDUP) {
        size_t kl = fq__key(r, res->stmt, r->binds, r->p->nvars);
        int added = kl ? fq__set_add(&r->seen, r->key, kl) : -1;
        if (added < 0) {
            r->rc = fq__fail(&r->err, FRAMES_E_NOMEM, FRAMES_NO_POS, res->counter, "out of memory (dedup)");
            r->stop = 1;
            return;
        }
        if (!added) return;
    }
    res->index = r->delivered;
    r->delivered++;
    if (r->fn) {
        int v = r->fn(r->ctx, res);
        if (v) {
            r->stop = 1;
            if (r->rc >= 0)
                r->rc = fq__fail(&r->err, FRAMES_E_STOPPED, FRAMES_NO_POS, res->counter,
                                 "stopped by the result callback (it returned %d)", v);
        }
    }
    if (r->limit && r->delivered >= r->limit) r->stop = 1;
}

static int fq__stale_at(fq__run *r, uint64_t k) {
    return fq__fail(&r->err, FQ_E_STALE, FRAMES_NO_POS, k,
                    "the index does not match the trace at point %llu: rebuild it or "
                    "query without it", (unsigned long long)k);
}

/* Binding j of a detached column run's result at point k from its record reference. */
static int fq__record_binding(fq__run *r, uint64_t k, uint64_t ref, uint32_t j) {
    const fq__ix *x = r->t->ix;
    uint64_t ti = ref >> FQ__REF_SHIFT, rec = ref & (((uint64_t)1 << FQ__REF_SHIFT) - 1);
    fq__dvar v;
    if (ti >= x->ncols || rec >= x->cols[ti].n ||
        fq__col_fill(&r->cons, r->t, &x->cols[ti], (uint32_t)ti, rec, 0, 1, 1, &v))
        return fq__stale_at(r, k);
    fq__binding(r, &v, j, &r->binds[j]);
    return FRAMES_OK;
}

/* Hand results to the caller, in order: dedup, limit, callback. */
static void fq__deliver(fq__run *r, const uint64_t *wd, size_t n) {
    unsigned k = r->p->nvars, j;
    size_t i = 0;
    while (i < n && !r->stop) {
        const uint64_t *h = wd + i;
        uint64_t nres = h[5], q;
        fq_result res;
        int rc;
        i += FQ__HDR;
        if (r->col.detached) {   /* the columns hold everything the caller reads */
            fq__result_head(r, h, &res);
            for (q = 0; q < nres && !r->stop; q++, i += k) {
                for (j = 0; j < k; j++)
                    if ((rc = fq__record_binding(r, h[0], wd[i + j], j)) < 0) {
                        r->rc = rc;
                        r->stop = 1;
                        return;
                    }
                fq__hand_over(r, &res);
            }
            continue;
        }
        r->cons.want = 0;
        r->cons.want_high = 0;
        for (q = 0; q < nres * k; q++) {   /* decode only the bound variables */
            uint64_t slot = wd[i + q];
            if (slot < 64) r->cons.want |= 1ull << slot;
            else r->cons.want_high = 1;
        }
        if ((rc = fq__materialize(r, h, &res)) < 0) {
            r->rc = rc;
            r->stop = 1;
            return;
        }
        for (q = 0; q < nres && !r->stop; q++, i += k) {
            for (j = 0; j < k; j++) {
                const fq__dvar *v = fq__find_slot(&r->cons, wd[i + j]);
                if (!v) {   /* only an index's column can name a slot the point lacks */
                    r->rc = r->t->ix ? fq__stale_at(r, h[0])
                                     : fq__fail(&r->err, FRAMES_E_STATE, FRAMES_NO_POS, h[0],
                                                "internal: slot out of range");
                    r->stop = 1;
                    return;
                }
                fq__binding(r, v, j, &r->binds[j]);
            }
            fq__hand_over(r, &res);
        }
    }
}

/* --------------------------------------------------------------------------------------
   running: work items and threads
   -------------------------------------------------------------------------------------- */

/* Count-only runs and the end of an item. */
static void fq__finish_item(fq__run *r, fq__slot *s) {
    r->counted += s->count;
    if (r->limit && r->counted >= r->limit) {
        r->counted = r->limit;
        r->stop = 1;
    }
    if (s->rc < 0 && !r->rc) {
        r->rc = s->rc;
        r->err = s->err;
        r->stop = 1;
    }
}

static void fq__flush(fq__worker *w) {
    fq__run *r = w->run;
    fq__slot *s = w->slot;
    if (!r->mt) {
        fq__deliver(r, s->w, s->n);
    }
#ifndef FRAMES_QUERY_NO_THREADS
    else {
        pthread_mutex_lock(&r->mu);
        s->pub = s->n;
        pthread_cond_broadcast(&r->cc);
        while (s->consumed < s->pub && !r->abort) pthread_cond_wait(&r->cw, &r->mu);
        s->pub = s->consumed = 0;
        pthread_mutex_unlock(&r->mu);
    }
#endif
    s->n = 0;
    w->group = FQ__NONE;
}

#ifndef FRAMES_QUERY_NO_THREADS
/* The points of work item `item`, once indexed; 0 when the item lies past the end. */
static int fq__item(fq__run *r, uint64_t item, uint64_t *lo, uint64_t *hi, fq__slot *s) {
    uint64_t avail;
    int done, rc;
    *lo = r->lo + item * r->per;
    if (*lo >= r->hi || item > UINT64_MAX / r->per) return 0;
    *hi = r->hi - *lo > r->per ? *lo + r->per : r->hi;
    if ((rc = fq__ensure(r->p->t, *hi, &avail, &done, &s->err)) < 0) {
        s->rc = rc;
        return 0;
    }
    if (*lo >= avail) return 0;
    if (*hi > avail) *hi = avail;
    return 1;
}
#endif

/* One thread, trace-db, points from `at` not indexed yet: index and evaluate them in one
   walk (up to hi, or less when the results fill half the buffer). 0 when another thread
   indexes or the points are indexed already; else 1 with *reached = the next point. */
static int fq__fused(fq__run *r, fq__worker *w, uint64_t at, uint64_t hi, uint64_t *reached) {
    fq_trace *t = r->p->t;
    uint64_t np, nc, nptr;
    int rc;
    if (t->format != FQ_TRACE_TRACEDB) return 0;
    FQ__TLOCK(t);
    if (t->idx_done || t->idx_busy || t->npoints != at) {
        FQ__TUNLOCK(t);
        return 0;
    }
    t->idx_busy = 1;
    np = t->npoints;
    nc = t->nchunks;
    nptr = t->nptr;
    FQ__TUNLOCK(t);
    w->fused = 1;
    rc = fq__tdb_index_more(t, hi, &np, &nc, &nptr, w, &w->slot->err);
    w->fused = 0;
    FQ__TLOCK(t);
    fq__publish(t, np, nc, nptr, rc);
    FQ__TUNLOCK(t);
    if (rc < 0) w->slot->rc = rc;
    if (w->oom && !w->slot->rc)
        w->slot->rc = fq__fail(&w->slot->err, FRAMES_E_NOMEM, FRAMES_NO_POS, np,
                               "out of memory evaluating point %llu", (unsigned long long)np);
    w->slot->reached = t->idx_off;
    *reached = np;
    if (w->spilled) {   /* the last point indexed goes to the normal path */
        w->spilled = 0;
        *reached = np - 1;
        if (*reached == at) return 0;   /* nothing was evaluated here */
    }
    return 1;
}

static void fq__report(fq__run *r, const fq__slot *s) {
    if (r->progress)
        r->progress(r->progress_ctx, s->reached,
                    r->p->format == FQ_TRACE_TRACEDB ? r->p->t->size : r->p->t->npoints);
}

#ifndef FRAMES_QUERY_NO_THREADS
static void *fq__thread_main(void *arg) {
    fq__worker *w = (fq__worker *)arg;
    fq__run *r = w->run;
    pthread_mutex_lock(&r->mu);
    while (!r->abort && !r->ended) {
        uint64_t item = r->next++, lo, hi;
        fq__slot *s = &r->slots[item % r->nslots];
        while ((s->state != FQ__S_FREE || s->expect != item) && !r->abort) pthread_cond_wait(&r->cw, &r->mu);
        if (r->abort) break;
        s->state = FQ__S_BUSY;
        s->item = item;
        s->n = s->pub = s->consumed = 0;
        s->count = 0;
        s->rc = 0;
        s->end = 0;
        pthread_mutex_unlock(&r->mu);
        w->slot = s;
        if (fq__item(r, item, &lo, &hi, s)) fq__process(w, lo, hi);
        else s->end = 1;
        pthread_mutex_lock(&r->mu);
        if (s->end) r->ended = 1;
        s->pub = s->n;
        s->state = FQ__S_DONE;
        pthread_cond_broadcast(&r->cc);
    }
    pthread_mutex_unlock(&r->mu);
    return NULL;
}

/* The calling thread consumes the items in order while the workers fill them. */
static void fq__consume(fq__run *r) {
    uint64_t head;
    int end = 0;
    for (head = 0; !r->stop && !end; head++) {
        fq__slot *s = &r->slots[head % r->nslots];
        int done = 0;
        pthread_mutex_lock(&r->mu);
        while (!done) {
            size_t from, to;
            while (!(s->state != FQ__S_FREE && s->item == head &&
                     (s->pub > s->consumed || s->state == FQ__S_DONE)))
                pthread_cond_wait(&r->cc, &r->mu);
            from = s->consumed;
            to = s->pub;
            done = s->state == FQ__S_DONE;
            end = done && s->end;
            pthread_mutex_unlock(&r->mu);
            if (to > from) fq__deliver(r, s->w + from, to - from);
            if (done) fq__finish_item(r, s);
            pthread_mutex_lock(&r->mu);
            s->consumed = to;
            pthread_cond_broadcast(&r->cw);
            if (r->stop) break;
        }
        if (done) {
            s->state = FQ__S_FREE;
            s->expect = head + r->nslots;
            pthread_cond_broadcast(&r->cw);
        }
        pthread_mutex_unlock(&r->mu);
        if (done && !end) fq__report(r, s);
    }
}
#endif

FRAMES_QUERY_DEF void fq_run_options_default(fq_run_options *o) { memset(o, 0, sizeof *o); }

/* Pick mode: splitmix64 from the seed; an index below n without modulo bias. */
static uint64_t fq__splitmix(uint64_t *s) {
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint64_t fq__below(uint64_t *s, uint64_t n) {
    uint64_t threshold = (0 - n) % n, x;
    do x = fq__splitmix(s);
    while (x < threshold);
    return x % n;
}

/* --------------------------------------------------------------------------------------
   running: pick mode
   -------------------------------------------------------------------------------------- */

/* Is point k a candidate (std frame, filters)? 1, 0, or a negative code. */
static int fq__candidate(const fq_plan *p, fq__worker *w, uint64_t k, frames_error *err) {
    const fq_trace *t = p->t;
    fq__pt pt;
    memset(&pt, 0, sizeof pt);
    if (t->format == FQ_TRACE_TRACEDB && t->ix) {   /* O(1): from the point's offset */
        fq__chunk c;
        uint64_t off, ptr, stmt, i;
        fq__ix_locate(t, k, &c);
        off = c.off;
        ptr = c.ptr_base;
        stmt = c.stmt;
        for (i = c.counter; i <= k; i++)
            if (!(off = fq__tdb_point_checked(w, t, off, &ptr, &stmt, 0)))
                return fq__ix_corrupt(err, "a point is not where it says");
        pt.stmt = stmt;
    } else if (t->format == FQ_TRACE_TRACEDB) {
        const fq__chunk *c = fq__chunk_at(t, k / t->stride);
        uint64_t off = c->off, counter = c->counter, ptr = c->ptr_base, stmt = c->stmt;
        for (; counter <= k; counter++) off = fq__tdb_walk(w, t, off, &ptr, &stmt, 0);
        pt.stmt = stmt;
    } else {
        frames_cursor *c;
        frames_raw raw;
        int rc;
        if ((rc = frames_cursor_open(&c, t->fr, k, err)) < 0) return rc;
        rc = frames_cursor_next_raw(c, &raw);
        if (rc <= 0) {
            if (rc < 0 && err) *err = *frames_cursor_error(c);
            frames_cursor_close(c);
            return rc < 0 ? rc : 0;
        }
        rc = fq__frames_decode(w, &raw, err);
        frames_cursor_close(c);
        if (rc < 0) return rc;
        if (w->fr.kind != FRAMES_KIND_STD) return 0;
        pt.stmt = w->fr.std.address;
        pt.tid = w->fr.std.thread_id;
        pt.has_tid = 1;
    }
    return fq__keep_point(p, &pt);
}

static int fq__pick(const fq_plan *p, fq__worker *w, uint64_t seed, uint64_t *out, frames_error *err) {
    uint64_t n = p->t->npoints, s = seed, k, count = 0, target;
    int tries, rc, pass;
    if (!n) return 0;
    /* rejection sampling: uniform over the candidates without scanning the trace */
    for (tries = 0; tries < 64; tries++) {
        k = fq__below(&s, n);
        if ((rc = fq__candidate(p, w, k, err)) < 0) return rc;
        if (rc) {
            *out = k;
            return 1;
        }
    }
    /* few candidates: count them, then take one of them uniformly; an index's posting
       lists count them without decoding (threads are not in the index) */
    if (!p->ntids) {
        fq__sel sel;
        if ((rc = fq__ix_select(p, &sel, err)) < 0) return rc;
        if (rc) {
            rc = sel.n > 0;
            if (rc) *out = fq__sel_at(&sel, fq__below(&s, sel.n));
            fq__sel_free(&sel, p->ctx);
            return rc;
        }
    }
    target = UINT64_MAX;
    for (pass = 0; pass < 2; pass++) {
        count = 0;
        for (k = 0; k < n; k++) {
            if ((rc = fq__candidate(p, w, k, err)) < 0) return rc;
            if (rc && count++ == target) {
                *out = k;
                return 1;
            }
        }
        if (!count) return 0;
        target = fq__below(&s, count);
    }
    return 0;
}

FRAMES_QUERY_DEF int fq_pick_point(const fq_plan *p, uint64_t seed, uint64_t *counter, frames_error *err) {
    fq__run r;
    int rc;
    frames__clear_error(err);
    memset(&r, 0, sizeof r);
    r.p = p;
    r.t = p->t;
    if (fq__worker_init(&r.cons, p, &r) < 0) {
        fq__worker_free(&r.cons);
        return fq__oom(err);
    }
    rc = fq_trace_load(p->t, err);
    if (rc == FRAMES_OK) rc = fq__pick(p, &r.cons, seed, counter, err);
    fq__worker_free(&r.cons);
    return rc < 0 ? rc : rc ? FRAMES_OK : -1;
}

/* --------------------------------------------------------------------------------------
   running: fq_run
   -------------------------------------------------------------------------------------- */

static void fq__run_free(fq__run *r, fq__worker *ws, unsigned nw) {
    unsigned i;
    for (i = 0; i < nw; i++) fq__worker_free(&ws[i]);
    FRAMES_FREE(ws, r->p->ctx);
    if (r->slots)
        for (i = 0; i < r->nslots; i++) FRAMES_FREE(r->slots[i].w, r->p->ctx);
    FRAMES_FREE(r->slots, r->p->ctx);
    fq__worker_free(&r->cons);
    FRAMES_FREE(r->binds, r->p->ctx);
    fq__set_free(&r->seen);
    FRAMES_FREE(r->key, r->p->ctx);
    fq__sel_free(&r->sel, r->p->ctx);
    fq__col_free(&r->col, r->p->ctx);
}

/* Step 1: the run's state and the consumer's scratch. */
static int fq__run_start(fq__run *r, const fq_plan *p, const fq_run_options *opt, fq_result_fn fn,
                         void *ctx) {
    memset(r, 0, sizeof *r);
    r->p = p;
    r->t = p->t;
    r->fn = fn;
    r->ctx = ctx;
    r->limit = opt->limit;
    r->progress = opt->progress;
    r->progress_ctx = opt->progress_ctx;
    fq__set_init(&r->seen, p->ctx);
    r->hi = UINT64_MAX;   /* the index tells where the trace ends */
    if (fq__worker_init(&r->cons, p, r) < 0) return -1;
    r->binds = (fq_binding *)FRAMES_MALLOC((p->nvars ? p->nvars : 1) * sizeof(fq_binding), p->ctx);
    return r->binds ? 0 : -1;
}

/* Step 2: which points the run visits: the one pick mode chooses, the postings of the
   index's columns, or the points the statement filters select. 1: run, 0: nothing to
   run (pick mode found no candidate), or a negative code. */
static int fq__run_select(fq__run *r, const fq_plan *p, const fq_run_options *opt, int count_only,
                          frames_error *err) {
    int rc;
    if (opt->pick) {
        uint64_t k;
        rc = fq_trace_load(p->t, err);
        if (rc == FRAMES_OK) rc = fq__pick(p, &r->cons, opt->seed, &k, err);
        if (rc <= 0) return rc;
        r->lo = k;
        r->hi = k + 1;
        return 1;
    }
    rc = fq__col_select(p, r, !count_only, err);
    if (rc > 0) {
        r->hi = r->col.n;   /* work items are ranges of the postings read */
        r->col.detached = r->fn && opt->bindings_only && fq__col_detachable(p->t->ix, &r->col);
    } else if (rc == 0 && (rc = fq__ix_select(p, &r->sel, err)) > 0) {
        r->hi = r->sel.n;   /* work items are ranges of the selection */
    }
    return rc < 0 ? rc : 1;
}

/* Step 3: the size of a work item, and the threads worth starting for them: a few items
   per thread when the number of points is known, else 16k points (trace-db traces that
   are still being indexed). 0 or a negative code. */
static int fq__run_items(fq__run *r, const fq_plan *p, const fq_run_options *opt, unsigned *threads,
                         frames_error *err) {
    uint64_t known, n, nitems;
    int done;
    if (fq__ensure(p->t, 0, &known, &done, err) < 0) return err ? err->code : FRAMES_E_NOMEM;
    n = done ? (r->hi < known ? r->hi : known) - r->lo : UINT64_MAX;
    r->per = opt->chunk;
    if (!r->per) {
        r->per = !done ? 16384 : *threads > 1 ? n / ((uint64_t)*threads * 8) : 65536;
        /* a column run's posting costs about 100 ns: fewer than 64k of them are done
           sooner than a second thread starts (Q3: 1.7 ms with one, 2.2 with two) */
        if (r->per < (r->col.on ? 65536u : 4096u)) r->per = r->col.on ? 65536 : 4096;
        if (r->per > 65536) r->per = 65536;
    }
    if (p->format == FQ_TRACE_TRACEDB && !opt->pick)
        r->per = (r->per + p->t->stride - 1) / p->t->stride * p->t->stride;
    nitems = done ? (n + r->per - 1) / r->per : UINT64_MAX;
    if (*threads > nitems) *threads = nitems ? (unsigned)nitems : 1;
    return 0;
}

/* Step 4: the result slots (two per thread: one filled while the other is delivered)
   and the workers. 0, or -1 when out of memory (*ws and *nw say what to free). */
static int fq__run_alloc(fq__run *r, const fq_plan *p, unsigned threads, int count_only,
                         fq__worker **ws, unsigned *nw) {
    size_t cap = count_only ? 0 : (size_t)1 << 16;
    unsigned i;
    /* a slot full only flushes early (or sends a fused point to the normal path): for
       a trace smaller than 512 KiB, a slot of its size (at least 32 KiB) does as well
       without mapping 512 KiB per slot and run */
    if (cap && p->t->size && p->t->size / 8 < cap) cap = p->t->size / 8 > 4096 ? (size_t)(p->t->size / 8) : 4096;
    if (cap && cap < FQ__HDR + p->nvars) cap = FQ__HDR + p->nvars;
    r->mt = threads > 1;
    r->nslots = r->mt ? 2 * threads : 1;
    r->slots = (fq__slot *)FRAMES_MALLOC(r->nslots * sizeof(fq__slot), p->ctx);
    *ws = (fq__worker *)FRAMES_MALLOC(threads * sizeof(fq__worker), p->ctx);
    if (r->slots) memset(r->slots, 0, r->nslots * sizeof(fq__slot));
    if (*ws) memset(*ws, 0, threads * sizeof(fq__worker));
    *nw = *ws ? threads : 0;
    if (!r->slots || !*ws) return -1;
    for (i = 0; i < r->nslots; i++) {
        r->slots[i].cap = cap;
        r->slots[i].expect = i;
        if (cap && !(r->slots[i].w = (uint64_t *)FRAMES_MALLOC(cap * sizeof(uint64_t), p->ctx))) return -1;
    }
    for (i = 0; i < threads; i++)
        if (fq__worker_init(&(*ws)[i], p, r) < 0) return -1;
    return 0;
}

/* Step 5a: the calling thread indexes, evaluates and delivers in turn. */
static void fq__run_serial(fq__run *r, const fq_plan *p, fq__worker *w) {
    uint64_t at = r->lo;
    fq__slot *s = &r->slots[0];
    w->slot = s;
    while (!r->stop && at < r->hi) {
        uint64_t hi = r->hi - at > r->per ? at + r->per : r->hi, reached, avail;
        int done;
        s->n = 0;
        s->count = 0;
        s->rc = 0;
        w->group = FQ__NONE;
        w->oom = 0;
        if (!fq__fused(r, w, at, hi, &reached)) {
            if ((s->rc = fq__ensure(p->t, hi, &avail, &done, &s->err)) >= 0) s->rc = 0;
            if (s->rc < 0 || at >= avail) {
                fq__finish_item(r, s);
                break;
            }
            reached = hi < avail ? hi : avail;
            fq__process(w, at, reached);
        }
        fq__deliver(r, s->w, s->n);
        fq__finish_item(r, s);
        fq__report(r, s);
        if (reached <= at) break;   /* the end of the trace */
        at = reached;
    }
}

#ifndef FRAMES_QUERY_NO_THREADS
/* Step 5b: workers evaluate items, the calling thread delivers their results in order.
   0, or -1 when no thread could be started or memory ran out. */
static int fq__run_threads(fq__run *r, const fq_plan *p, fq__worker *ws, unsigned threads) {
    pthread_t *tids = (pthread_t *)FRAMES_MALLOC(threads * sizeof(pthread_t), p->ctx);
    unsigned started = 0, i;
    if (!tids) return -1;
    pthread_mutex_init(&r->mu, NULL);
    pthread_cond_init(&r->cw, NULL);
    pthread_cond_init(&r->cc, NULL);
    for (i = 0; i < threads; i++) {
        if (pthread_create(&tids[i], NULL, fq__thread_main, &ws[i]) != 0) break;
        started++;
    }
    if (!started) {
        r->rc = fq__fail(&r->err, FRAMES_E_NOMEM, FRAMES_NO_POS, FRAMES_NO_POS, "cannot start threads");
    } else {
        fq__consume(r);
    }
    pthread_mutex_lock(&r->mu);
    r->abort = 1;
    pthread_cond_broadcast(&r->cw);
    pthread_mutex_unlock(&r->mu);
    for (i = 0; i < started; i++) pthread_join(tids[i], NULL);
    pthread_mutex_destroy(&r->mu);
    pthread_cond_destroy(&r->cw);
    pthread_cond_destroy(&r->cc);
    FRAMES_FREE(tids, p->ctx);
    return 0;
}
#endif

FRAMES_QUERY_DEF int fq_run(const fq_plan *p, const fq_run_options *opt, fq_result_fn fn, void *ctx,
                      uint64_t *nresults, frames_error *err) {
    fq_run_options def;
    fq__run r;
    fq__worker *ws = NULL;
    unsigned nw = 0, threads;
    int count_only, rc;
    frames__clear_error(err);
    if (!opt) {
        fq_run_options_default(&def);
        opt = &def;
    }
    if (nresults) *nresults = 0;
    count_only = !fn && !(p->flags & FQ_DEDUP);
    threads = opt->threads ? opt->threads : 1;
#ifdef FRAMES_QUERY_NO_THREADS
    threads = 1;
#endif
    if (fq__run_start(&r, p, opt, fn, ctx) < 0) {
        fq__run_free(&r, ws, nw);
        return fq__oom(err);
    }
    rc = fq__run_select(&r, p, opt, count_only, err);
    if (rc <= 0) {
        fq__run_free(&r, ws, nw);
        return rc;
    }
    if (opt->pick) threads = 1;
    if ((rc = fq__run_items(&r, p, opt, &threads, err)) < 0) {
        fq__run_free(&r, ws, nw);
        return rc;
    }
    if (fq__run_alloc(&r, p, threads, count_only, &ws, &nw) < 0) {
        fq__run_free(&r, ws, nw);
        return fq__oom(err);
    }
    if (!r.mt) fq__run_serial(&r, p, &ws[0]);
#ifndef FRAMES_QUERY_NO_THREADS
    else if (fq__run_threads(&r, p, ws, threads) < 0) {
        fq__run_free(&r, ws, nw);
        return fq__oom(err);
    }
#endif
    if (nresults) *nresults = count_only ? r.counted : r.delivered;
    if (r.rc < 0 && err) *err = r.err;
    fq__run_free(&r, ws, nw);
    return r.rc < 0 ? r.rc : FRAMES_OK;
}

/* --------------------------------------------------------------------------------------
   output
   -------------------------------------------------------------------------------------- */

/* How many decimal digits v has. */
static unsigned fq__u64_ndigits(uint64_t v) {
    unsigned n = 1;
    uint64_t p = 10;
    while (n < 20 && v >= p) {
        n++;
        p *= 10;
    }
    return n;
}

static void fq__put_i64(frames__text *s, int64_t v) {
    if (v < 0) {
        frames__text_put(s, "-", 1);
        frames__text_u64(s, 0 - (uint64_t)v);
    } else frames__text_u64(s, (uint64_t)v);
}

/* 0x + the bytes of a little-endian value, most significant first */
static void fq__put_hex_bytes(frames__text *s, const uint8_t *b, size_t n) {
    static const char digits[] = "0123456789abcdef";
    size_t i;
    frames__text_put(s, "0x", 2);
    for (i = n; i-- > 0;) {
        char two[2];
        two[0] = digits[b[i] >> 4];
        two[1] = digits[b[i] & 15];
        frames__text_put(s, two, 2);
    }
}

static void fq__put_fmt(frames__text *s, const char *fmt, double d) {
    char tmp[40];
    int n = snprintf(tmp, sizeof tmp, fmt, d);
    if (n > 0) frames__text_put(s, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

/* C-style escaped text in quotes (names and blobs in listings) */
static void fq__put_quoted(frames__text *s, const uint8_t *b, size_t n) {
    size_t i;
    frames__text_put(s, "\"", 1);
    for (i = 0; i < n; i++) {
        char tmp[8];
        if (b[i] == '"' || b[i] == '\\') {
            tmp[0] = '\\';
            tmp[1] = (char)b[i];
            frames__text_put(s, tmp, 2);
        } else if (b[i] < 0x20 || b[i] >= 0x7f) {
            snprintf(tmp, sizeof tmp, "\\x%02x", b[i]);
            frames__text_put(s, tmp, 4);
        } else frames__text_put(s, (const char *)b + i, 1);
    }
    frames__text_put(s, "\"", 1);
}

/* Listing value of a trace-db variable (trace-db's harness prints C++ iostream style). */
static void fq__put_tdb_value(frames__text *s, const fq_binding *b) {
    switch (b->format) {
    case FQ_TYPE_SIGNED: fq__put_i64(s, b->i); break;
    case FQ_TYPE_UNSIGNED: frames__text_u64(s, b->u); break;
    case FQ_TYPE_POINTER:
        frames__text_hex(s, b->u);
        if (b->flags & FQ_B_HAS_SIZE) {
            frames__text_put(s, "[size ", 6);
            frames__text_u64(s, b->size);
            frames__text_put(s, "]", 1);
        }
        break;
    case FQ_TYPE_FLOAT:
        if (b->bytes.len == 4 || b->bytes.len == 8) fq__put_fmt(s, "%g", b->f);
        else fq__put_hex_bytes(s, b->bytes.ptr, b->bytes.len);
        break;
    default: fq__put_quoted(s, b->bytes.ptr, b->bytes.len); break;
    }
}

static void fq__put_frames_value(frames__text *s, const fq_binding *b) {
    if (!b->bytes.len) frames__text_puts(s, "(empty)");
    else if (b->bytes.len <= 8) frames__text_hex(s, b->u);
    else fq__put_hex_bytes(s, b->bytes.ptr, b->bytes.len);
}

static void fq__put_frames_name(frames__text *s, const fq_binding *b) {
    size_t i;
    if (b->flags & FQ_B_MEM) {
        frames__text_put(s, "[", 1);
        frames__text_hex(s, b->addr);
        frames__text_put(s, "]", 1);
        return;
    }
    for (i = 0; i < b->name.len; i++)   /* register names are plain words in practice */
        if (b->name.ptr[i] <= 0x20 || b->name.ptr[i] >= 0x7f || b->name.ptr[i] == ':' ||
            b->name.ptr[i] == '=' || b->name.ptr[i] == '"') {
            fq__put_quoted(s, b->name.ptr, b->name.len);
            return;
        }
    frames__text_put(s, (const char *)b->name.ptr, b->name.len);
}

#ifndef FRAMES_NO_TEXT
static int fq__text_out(void *ctx, const char *p, size_t n) {
    frames__text_put((frames__text *)ctx, p, n);
    return 0;
}
#endif

static void fq__put_json_str(frames__text *s, const uint8_t *b, size_t n) {
#ifndef FRAMES_NO_TEXT
    frames_print_json_string(b, n, fq__text_out, s);
#else
    frames__text_put(s, "\"", 1);
    fq__put_hex_bytes(s, b, n);
    frames__text_put(s, "\"", 1);
#endif
}

static void fq__put_json_double(frames__text *s, double d) {
    char tmp[40];
    int prec;
    if (d != d || fq__isinf(d)) {
        frames__text_puts(s, "null");
        return;
    }
    for (prec = 15; prec <= 17; prec++) {   /* shortest text that reads back the same */
        snprintf(tmp, sizeof tmp, "%.*g", prec, d);
        if (strtod(tmp, NULL) == d) break;
    }
    frames__text_puts(s, tmp);
}

static void fq__json(frames__text *s, const fq_result *r) {
    uint32_t i;
    frames__text_puts(s, "{\"result\":");
    frames__text_u64(s, r->index);
    frames__text_puts(s, ",\"counter\":");
    frames__text_u64(s, r->counter);
    frames__text_puts(s, r->format == FQ_TRACE_FRAMES ? ",\"pc\":" : ",\"stmt\":");
    frames__text_u64(s, r->stmt);
    if (r->has_tid) {
        frames__text_puts(s, ",\"tid\":");
        frames__text_u64(s, r->tid);
    }
    frames__text_puts(s, ",\"bindings\":[");
    for (i = 0; i < r->nbind; i++) {
        const fq_binding *b = &r->bind[i];
        if (i) frames__text_put(s, ",", 1);
        frames__text_puts(s, "{\"var\":");
        fq__put_json_str(s, (const uint8_t *)r->var_names[b->var], strlen(r->var_names[b->var]));
        if (!(b->flags & FQ_B_MEM)) {
            frames__text_puts(s, ",\"name\":");
            fq__put_json_str(s, b->name.ptr, b->name.len);
        }
        frames__text_puts(s, ",\"type\":");
        fq__put_json_str(s, b->type.ptr, b->type.len);
        if (r->format == FQ_TRACE_FRAMES) {
            frames__text_puts(s, (b->flags & FQ_B_POST) ? ",\"post\":true" : ",\"post\":false");
            frames__text_puts(s, (b->flags & FQ_B_READ) ? ",\"read\":true" : ",\"read\":false");
            frames__text_puts(s, (b->flags & FQ_B_WRITTEN) ? ",\"written\":true" : ",\"written\":false");
            if (b->flags & FQ_B_MEM) {
                frames__text_puts(s, ",\"addr\":");
                frames__text_u64(s, b->addr);
            }
            frames__text_puts(s, ",\"bits\":");
            frames__text_u64(s, b->bits);
            if (b->format == FQ_TYPE_UNSIGNED) {
                frames__text_puts(s, ",\"value\":");
                frames__text_u64(s, b->u);
            }
            frames__text_puts(s, ",\"bytes\":\"");   /* in memory order, as frames.h prints bytes */
            {
                static const char digits[] = "0123456789abcdef";
                size_t k;
                for (k = 0; k < b->bytes.len; k++) {
                    char two[2];
                    two[0] = digits[b->bytes.ptr[k] >> 4];
                    two[1] = digits[b->bytes.ptr[k] & 15];
                    frames__text_put(s, two, 2);
                }
            }
            frames__text_puts(s, "\"");
        } else {
            frames__text_puts(s, ",\"value\":");
            switch (b->format) {
            case FQ_TYPE_SIGNED: fq__put_i64(s, b->i); break;
            case FQ_TYPE_UNSIGNED: case FQ_TYPE_POINTER: frames__text_u64(s, b->u); break;
            case FQ_TYPE_FLOAT:
                if (b->bytes.len == 4 || b->bytes.len == 8) fq__put_json_double(s, b->f);
                else frames__text_puts(s, "null");
                break;
            default: fq__put_json_str(s, b->bytes.ptr, b->bytes.len); break;
            }
            if (b->flags & FQ_B_HAS_SIZE) {
                frames__text_puts(s, ",\"size\":");
                frames__text_u64(s, b->size);
            }
        }
        frames__text_put(s, "}", 1);
    }
    frames__text_put(s, "]", 1);
    if (r->naux) {
        frames__text_puts(s, ",\"aux\":[");
        for (i = 0; i < r->naux; i++) {
            if (i) frames__text_put(s, ",", 1);
            frames__text_u64(s, r->aux[i]);
        }
        frames__text_put(s, "]", 1);
    }
    if (r->nbuf) {
        frames__text_puts(s, ",\"buffers\":[");
        for (i = 0; i < r->nbuf; i++) {
            frames__text_puts(s, i ? ",{\"address\":" : "{\"address\":");
            frames__text_u64(s, r->buf[i].address);
            frames__text_puts(s, ",\"size\":");
            frames__text_u64(s, r->buf[i].size);
            frames__text_put(s, "}", 1);
        }
        frames__text_put(s, "]", 1);
    }
    frames__text_put(s, "}", 1);
}

/* The listing of a trace-db result whose integers and names fit: written without checks
   into a buffer known to be large enough (the common case of fq_format_result). */
static char *fq__raw_u64(char *o, uint64_t v) {
    char *end = o + fq__u64_ndigits(v);
    frames__u64_digits(v, end);
    return end;
}

static size_t fq__raw_listing(const fq_result *r, int style, char *o0) {
    char *o = o0;
    uint32_t i;
    memcpy(o, "result ", 7);
    o = fq__raw_u64(o + 7, r->index);
    *o++ = ':';
    if (style != FQ_LIST_CAPI) {
        memcpy(o, " counter=", 9);
        o = fq__raw_u64(o + 9, r->counter);
    }
    memcpy(o, " stmt=", 6);
    o = fq__raw_u64(o + 6, r->stmt);
    for (i = 0; i < r->nbind; i++) {
        const fq_binding *b = &r->bind[i];
        *o++ = ' ';
        memcpy(o, b->name.ptr, b->name.len);
        o += b->name.len;
        if (style != FQ_LIST_CAPI) {
            *o++ = ':';
            memcpy(o, b->type.ptr, b->type.len);
            o += b->type.len;
        }
        *o++ = '=';
        if (b->format == FQ_TYPE_SIGNED) {
            if (b->i < 0) *o++ = '-';
            o = fq__raw_u64(o, b->i < 0 ? 0 - (uint64_t)b->i : (uint64_t)b->i);
        } else o = fq__raw_u64(o, b->u);   /* UNSIGNED (the caller checked) */
    }
    *o = 0;
    return (size_t)(o - o0);
}

FRAMES_QUERY_DEF size_t fq_format_result(const fq_result *r, int style, char *buf, size_t cap) {
    frames__text s;
    uint32_t i;
    if (style != FQ_LIST_JSON && r->format == FQ_TRACE_TRACEDB) {   /* fast path: integers only */
        size_t bound = 96;   /* "result " index ": counter=" counter " stmt=" stmt, NUL: 84 at most */
        for (i = 0; i < r->nbind; i++) {
            if (r->bind[i].format != FQ_TYPE_SIGNED && r->bind[i].format != FQ_TYPE_UNSIGNED) break;
            bound += r->bind[i].name.len + r->bind[i].type.len + 24;
        }
        if (i == r->nbind && bound <= cap) return fq__raw_listing(r, style, buf);
    }
    s.buf = buf;
    s.cap = cap;
    s.len = 0;
    if (style == FQ_LIST_JSON) fq__json(&s, r);
    else {
        frames__text_put(&s, "result ", 7);
        frames__text_u64(&s, r->index);
        frames__text_put(&s, ":", 1);
        if (style != FQ_LIST_CAPI) {
            frames__text_put(&s, " counter=", 9);
            frames__text_u64(&s, r->counter);
        }
        if (r->format == FQ_TRACE_FRAMES && style != FQ_LIST_CAPI) {
            frames__text_put(&s, " pc=", 4);
            frames__text_hex(&s, r->stmt);
            frames__text_put(&s, " tid=", 5);
            frames__text_u64(&s, r->tid);
        } else {
            frames__text_put(&s, " stmt=", 6);
            if (r->format == FQ_TRACE_FRAMES) frames__text_hex(&s, r->stmt);
            else frames__text_u64(&s, r->stmt);
        }
        for (i = 0; i < r->nbind; i++) {
            const fq_binding *b = &r->bind[i];
            frames__text_put(&s, " ", 1);
            if (r->format == FQ_TRACE_FRAMES) fq__put_frames_name(&s, b);
            else frames__text_put(&s, (const char *)b->name.ptr, b->name.len);
            if (style != FQ_LIST_CAPI) {
                frames__text_put(&s, ":", 1);
                frames__text_put(&s, (const char *)b->type.ptr, b->type.len);
                if (b->flags & FQ_B_POST) frames__text_put(&s, "@post", 5);
            }
            frames__text_put(&s, "=", 1);
            if (r->format == FQ_TRACE_FRAMES) fq__put_frames_value(&s, b);
            else fq__put_tdb_value(&s, b);
        }
    }
    return frames__text_end(&s);
}

#ifdef __cplusplus
}
#endif

#endif /* FRAMES_QUERY_IMPLEMENTATION_INCLUDED */
#endif /* FRAMES_QUERY_IMPLEMENTATION || FRAMES_ALL_IMPLEMENTATION */

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
