/* pyframes.c - the C side of the Python package (compiled by cffi into frames._native).

   The library's implementations (frames.h, and frames_zstd.h, frames_query.h,
   frames_sym.h, frames_replay.h as they are built in), plus the loops that must not
   run in Python: column extraction (one pass of the reader over the trace filling plain
   arrays that become numpy arrays without a Python object per row), the query runner
   that collects results, and the time-travel state and history (frames_replay.h). Everything here is private to the package (pyf_ names); the
   Python side (frames/__init__.py) is the API. */
#define FRAMES_IMPLEMENTATION
#include "frames.h"
#ifdef FRAMES_HAVE_ZSTD
#define FRAMES_ZSTD_IMPLEMENTATION
#include "frames_zstd.h"
#endif
#define FRAMES_QUERY_IMPLEMENTATION
#include "frames_query.h"
#define FRAMES_SYM_IMPLEMENTATION
#include "frames_sym.h"
#ifdef FRAMES_HAVE_ZSTD
#define FRAMES_REPLAY_LIBZSTD
#endif
#define FRAMES_REPLAY_IMPLEMENTATION
#include "frames_replay.h"

#include <stdlib.h>
#include <string.h>

#ifdef FRAMES_HAVE_ZSTD
static const int pyf_have_zstd = 1;
#else
static const int pyf_have_zstd = 0;
#endif

/* ---- opening --------------------------------------------------------------------- */

/* Any trace by path; compressed ones when libzstd is built in. */
static int pyf_reader_open(frames_reader **r, const char *path, frames_error *err) {
#ifdef FRAMES_HAVE_ZSTD
    return frames_zstd_reader_open_path(r, path, NULL, NULL, NULL, err);
#else
    return frames_reader_open_path(r, path, NULL, err);
#endif
}

static void pyf_fail(frames_error *err, int code, const char *message) {
    err->code = code;
    err->offset = FRAMES_NO_POS;
    err->frame = FRAMES_NO_POS;
    snprintf(err->message, sizeof err->message, "%s", message);
}

/* A writer at path, compressed when `compress` (the Python side decides from the name). */
static int pyf_writer_open(frames_writer **w, const char *path, const frames_writer_options *o,
                           const frames_meta *meta, int compress, frames_error *err) {
    if (compress) {
#ifdef FRAMES_HAVE_ZSTD
        return frames_zstd_writer_open_path(w, path, o, NULL, meta, err);
#else
        *w = NULL;
        pyf_fail(err, FRAMES_E_UNSUPPORTED,
                 "this build of the frames module has no libzstd: cannot write .zst");
        return FRAMES_E_UNSUPPORTED;
#endif
    }
    return frames_writer_open_path(w, path, o, meta, err);
}

/* ---- growable columns -------------------------------------------------------------- */

typedef struct pyf_col {
    void *data;
    size_t n, cap, elem;   /* elements used, allocated; bytes per element */
} pyf_col;

static int pyf_col_reserve(pyf_col *c, size_t more) {
    size_t cap;
    void *p;
    if (c->n + more <= c->cap) return 0;
    cap = c->cap ? c->cap : 1024;
    while (cap < c->n + more) cap *= 2;
    if (!(p = realloc(c->data, cap * c->elem))) return FRAMES_E_NOMEM;
    c->data = p;
    c->cap = cap;
    return 0;
}

#define PYF_PUSH(col, type, v)                                                             \
    do {                                                                                   \
        if (pyf_col_reserve(&(col), 1) < 0) return FRAMES_E_NOMEM;                       \
        ((type *)(col).data)[(col).n++] = (type)(v);                                       \
    } while (0)

static int pyf_col_append(pyf_col *c, const void *p, size_t n) {
    if (pyf_col_reserve(c, n) < 0) return FRAMES_E_NOMEM;
    if (n) memcpy((uint8_t *)c->data + c->n * c->elem, p, n * c->elem);
    c->n += n;
    return 0;
}

static void pyf_col_free(pyf_col *c) {
    free(c->data);
    memset(c, 0, sizeof *c);
}

/* ---- walking a range of frames ------------------------------------------------------ */

typedef int (*pyf_visit_fn)(void *ctx, uint64_t index, const frames_frame *f);

/* Frames [first, stop) through a cursor of their own (the reader's position, used by
   t[i], stays where it is); stop UINT64_MAX: to the end. A frame that does not decode
   stops the walk with the reader's message. */
static int pyf_walk(frames_reader *r, uint64_t first, uint64_t stop, pyf_visit_fn visit,
                    void *ctx, frames_error *err) {
    frames_cursor *c;
    frames_frame f;
    uint64_t i = first;
    int rc;
    if ((rc = frames_cursor_open(&c, r, first, err)) < 0) return rc;
    while (i < stop && (rc = frames_cursor_next(c, &f)) > 0) {
        if ((rc = visit(ctx, i++, &f)) < 0) {
            pyf_fail(err, rc, "out of memory while filling columns");
            break;
        }
    }
    if (rc < 0 && frames_cursor_error(c)->code) *err = *frames_cursor_error(c);
    frames_cursor_close(c);
    return rc < 0 ? rc : 0;
}

/* ---- instructions: index, pc, tid, instruction size -------------------------------- */

typedef struct pyf_insn_cols {
    uint64_t *index, *pc, *tid;   /* caller arrays of cap elements */
    uint32_t *size;               /* rawbytes length */
    uint64_t cap, n;
} pyf_insn_cols;

static int pyf_visit_insn(void *ctx, uint64_t index, const frames_frame *f) {
    pyf_insn_cols *c = (pyf_insn_cols *)ctx;
    if (!(f->present & (1u << FRAMES_KIND_STD))) return 0;
    if (c->n == c->cap) return 0;   /* cap is the frame count: cannot happen */
    c->index[c->n] = index;
    c->pc[c->n] = f->std.address;
    c->tid[c->n] = f->std.thread_id;
    c->size[c->n] = (uint32_t)f->std.rawbytes.len;   /* bounded by the frame size limit */
    c->n++;
    return 0;
}

/* The error frames_cursor_next reports for frame `index` (its message names the frame
   and the offset), after frames_decode_frame refused it. */
static int pyf_frame_error(frames_reader *r, uint64_t index, int rc, frames_error *err) {
    frames_cursor *c;
    frames_frame f;
    int rc2;
    if (frames_cursor_open(&c, r, index, err) < 0) return rc;
    if ((rc2 = frames_cursor_next(c, &f)) < 0) {
        *err = *frames_cursor_error(c);
        rc = rc2;
    }
    frames_cursor_close(c);
    return rc;
}

/* With check 0, std frames laid out as writers write them are read by frames_peek_std
   (their operand lists are not decoded); every other frame is decoded in full. */
static int pyf_instructions(frames_reader *r, uint64_t first, uint64_t stop, int check,
                            pyf_insn_cols *c, frames_error *err) {
    frames_cursor *cur;
    frames_decoder dec;
    frames_raw raw;
    frames_frame f;
    uint64_t i = first;
    int rc = 0;
    c->n = 0;
    if (check) return pyf_walk(r, first, stop, pyf_visit_insn, c, err);
    if ((rc = frames_cursor_open(&cur, r, first, err)) < 0) return rc;
    frames_decoder_init(&dec, NULL, 0, NULL);
    for (; i < stop && (rc = frames_cursor_next_raw(cur, &raw)) > 0; i++) {
        uint64_t pc, tid;
        size_t size;
        if (c->n == c->cap) break;   /* cap is the frame count: cannot happen */
        if (frames_peek_std(raw.payload.ptr, raw.payload.len, &pc, &tid, &size)) {
            c->index[c->n] = i;
            c->pc[c->n] = pc;
            c->tid[c->n] = tid;
            c->size[c->n] = (uint32_t)size;
            c->n++;
            continue;
        }
        if ((rc = frames_decode_frame(&dec, raw.payload.ptr, raw.payload.len, &f, err)) < 0) {
            rc = pyf_frame_error(r, i, rc, err);
            break;
        }
        pyf_visit_insn(c, i, &f);
    }
    if (rc < 0 && frames_cursor_error(cur)->code) *err = *frames_cursor_error(cur);
    frames_decoder_free(&dec);
    frames_cursor_close(cur);
    return rc < 0 ? rc : 0;
}

/* ---- frame objects: the decoded frame and its payload ----------------------------- */

/* A decoder for pyf_cursor_next (on the heap: its layout is private). */
static frames_decoder *pyf_decoder_open(void) {
    frames_decoder *d = (frames_decoder *)malloc(sizeof *d);
    if (d) frames_decoder_init(d, NULL, 0, NULL);
    return d;
}

static void pyf_decoder_close(frames_decoder *d) {
    if (!d) return;
    frames_decoder_free(d);
    free(d);
}

/* frames_cursor_next, with the payload the frame was decoded from (the Python side
   copies it once and slices names and values out of it). */
static int pyf_cursor_next(frames_reader *r, frames_cursor *c, frames_decoder *d, frames_frame *f,
                           frames_raw *raw, frames_error *err) {
    int rc = frames_cursor_next_raw(c, raw);
    if (rc <= 0) {
        if (rc < 0) *err = *frames_cursor_error(c);
        return rc;
    }
    if ((rc = frames_decode_frame(d, raw->payload.ptr, raw->payload.len, f, err)) < 0)
        return pyf_frame_error(r, raw->index, rc, err);
    return 1;
}

/* ---- operands: one row per operand event, the members of `frames dump --jsonl` ---- */

enum { PYF_LIST_PRE = 0, PYF_LIST_POST = 1, PYF_LIST_KEY = 2 };
enum { PYF_OP_NONE = 0, PYF_OP_REG = 1, PYF_OP_MEM = 2 };
#define PYF_OP_READ 1u
#define PYF_OP_WRITTEN 2u
#define PYF_OP_INDEX 4u
#define PYF_OP_BASE 8u
#define PYF_OP_HAS_TID 16u      /* tid is set (key frames: thread_id tag) */
#define PYF_OP_HAS_TAINT_ID 32u
#define PYF_OP_HAS_PC 64u       /* std frames */

/* Register names as a dictionary: name_id indexes names (offsets into name_data), so that
   a column of names is an integer column (a pandas Categorical). Open addressing on a
   table that stays at most half full. */
typedef struct pyf_op_cols {
    pyf_col frame, pc, tid, address, taint_id, value_uint;   /* uint64 */
    pyf_col value_off;           /* uint64: value bytes [value_off[i], value_off[i+1]) */
    pyf_col value_data;          /* uint8 */
    pyf_col name_id;             /* int32, -1 when not a register */
    pyf_col bits;                /* int32 */
    pyf_col list, kind, flags;   /* uint8 */
    pyf_col name_off, name_data; /* dictionary: uint64 offsets (n+1), uint8 bytes */
    uint32_t *slots;             /* hash table of name ids + 1 (0 empty) */
    size_t nslots;
} pyf_op_cols;

static int pyf_names_grow(pyf_op_cols *c);

static size_t pyf_hash(const uint8_t *p, size_t n) {   /* FNV-1a, then mixed */
    uint64_t h = 0xcbf29ce484222325ull;
    size_t i;
    for (i = 0; i < n; i++) h = (h ^ p[i]) * 0x100000001b3ull;
    return (size_t)frames__mix64(h);
}

static int pyf_name_id(pyf_op_cols *c, frames_bytes name, int32_t *id) {
    size_t h, nnames = c->name_off.n ? c->name_off.n - 1 : 0;
    if ((nnames + 1) * 2 > c->nslots && pyf_names_grow(c) < 0) return FRAMES_E_NOMEM;
    h = (size_t)pyf_hash(name.ptr, name.len) & (c->nslots - 1);
    for (;; h = (h + 1) & (c->nslots - 1)) {
        uint32_t s = c->slots[h];
        const uint64_t *off = (const uint64_t *)c->name_off.data;
        if (!s) break;
        if (off[s] - off[s - 1] == name.len &&
            !memcmp((const uint8_t *)c->name_data.data + off[s - 1], name.ptr, name.len)) {
            *id = (int32_t)(s - 1);
            return 0;
        }
    }
    if (pyf_col_append(&c->name_data, name.ptr, name.len) < 0) return FRAMES_E_NOMEM;
    {
        uint64_t end = c->name_data.n;
        if (pyf_col_append(&c->name_off, &end, 1) < 0) return FRAMES_E_NOMEM;
    }
    c->slots[h] = (uint32_t)(nnames + 1);
    *id = (int32_t)nnames;
    return 0;
}

static int pyf_names_grow(pyf_op_cols *c) {
    size_t n = c->nslots ? c->nslots * 2 : 64, i, nnames;
    const uint64_t *off;
    uint32_t *slots = (uint32_t *)calloc(n, sizeof *slots);
    if (!slots) return FRAMES_E_NOMEM;
    if (!c->name_off.n) {   /* the dictionary's first offset */
        uint64_t zero = 0;
        if (pyf_col_append(&c->name_off, &zero, 1) < 0) { free(slots); return FRAMES_E_NOMEM; }
    }
    off = (const uint64_t *)c->name_off.data;
    nnames = c->name_off.n - 1;
    for (i = 0; i < nnames; i++) {
        size_t h = (size_t)pyf_hash((const uint8_t *)c->name_data.data + off[i],
                                               (size_t)(off[i + 1] - off[i])) & (n - 1);
        while (slots[h]) h = (h + 1) & (n - 1);
        slots[h] = (uint32_t)(i + 1);
    }
    free(c->slots);
    c->slots = slots;
    c->nslots = n;
    return 0;
}

static uint64_t pyf_le_uint(frames_bytes v) {
    uint64_t u = 0;
    size_t i;
    for (i = v.len; i-- > 0;) u = u << 8 | v.ptr[i];
    return u;
}

static int pyf_push_operand(pyf_op_cols *c, uint64_t index, int list, int has_pc, uint64_t pc,
                            int has_tid, uint64_t tid, const frames_operand *op) {
    int32_t id = -1;
    unsigned flags = 0;
    uint64_t end;
    int kind = op->spec & FRAMES_MEM ? PYF_OP_MEM : op->spec & FRAMES_REG ? PYF_OP_REG : PYF_OP_NONE;
    if ((op->spec & FRAMES_REG) && pyf_name_id(c, op->name, &id) < 0) return FRAMES_E_NOMEM;
    if (op->read) flags |= PYF_OP_READ;
    if (op->written) flags |= PYF_OP_WRITTEN;
    if (op->index) flags |= PYF_OP_INDEX;
    if (op->base) flags |= PYF_OP_BASE;
    if (has_tid) flags |= PYF_OP_HAS_TID;
    if (has_pc) flags |= PYF_OP_HAS_PC;
    if (op->taint.set & FRAMES_TAINT_ID) flags |= PYF_OP_HAS_TAINT_ID;
    PYF_PUSH(c->frame, uint64_t, index);
    PYF_PUSH(c->pc, uint64_t, pc);
    PYF_PUSH(c->tid, uint64_t, tid);
    PYF_PUSH(c->address, uint64_t, (op->spec & FRAMES_MEM) ? op->address : 0);
    PYF_PUSH(c->taint_id, uint64_t, (op->taint.set & FRAMES_TAINT_ID) ? op->taint.id : 0);
    PYF_PUSH(c->value_uint, uint64_t, op->value.len <= 8 ? pyf_le_uint(op->value) : 0);
    if (pyf_col_append(&c->value_data, op->value.ptr, op->value.len) < 0) return FRAMES_E_NOMEM;
    end = c->value_data.n;
    if (pyf_col_append(&c->value_off, &end, 1) < 0) return FRAMES_E_NOMEM;
    PYF_PUSH(c->name_id, int32_t, id);
    PYF_PUSH(c->bits, int32_t, op->bit_length);
    PYF_PUSH(c->list, uint8_t, list);
    PYF_PUSH(c->kind, uint8_t, kind);
    PYF_PUSH(c->flags, uint8_t, flags);
    return 0;
}

static int pyf_visit_operands(void *ctx, uint64_t index, const frames_frame *f) {
    pyf_op_cols *c = (pyf_op_cols *)ctx;
    uint32_t i, j;
    int rc;
    if (f->present & (1u << FRAMES_KIND_STD)) {
        const frames_std_frame *s = &f->std;
        for (i = 0; i < s->npre; i++)
            if ((rc = pyf_push_operand(c, index, PYF_LIST_PRE, 1, s->address, 1, s->thread_id,
                                       &s->pre[i])) < 0)
                return rc;
        for (i = 0; i < s->npost; i++)
            if ((rc = pyf_push_operand(c, index, PYF_LIST_POST, 1, s->address, 1, s->thread_id,
                                       &s->post[i])) < 0)
                return rc;
    }
    if (f->present & (1u << FRAMES_KIND_KEY)) {
        for (i = 0; i < f->key.count; i++) {
            const frames_tagged_values *l = &f->key.lists[i];
            int has_tid = (l->tag_set & FRAMES_TAG_THREAD_ID) != 0;
            for (j = 0; j < l->count; j++)
                if ((rc = pyf_push_operand(c, index, PYF_LIST_KEY, 0, 0, has_tid,
                                           has_tid ? l->thread_id : 0, &l->values[j])) < 0)
                    return rc;
        }
    }
    return 0;
}

static void pyf_op_cols_init(pyf_op_cols *c) {
    memset(c, 0, sizeof *c);
    c->frame.elem = c->pc.elem = c->tid.elem = c->address.elem = c->taint_id.elem = 8;
    c->value_uint.elem = c->value_off.elem = c->name_off.elem = 8;
    c->name_id.elem = c->bits.elem = 4;
    c->value_data.elem = c->list.elem = c->kind.elem = c->flags.elem = c->name_data.elem = 1;
}

static void pyf_op_cols_free(pyf_op_cols *c) {
    pyf_col *cols[] = {&c->frame, &c->pc, &c->tid, &c->address, &c->taint_id, &c->value_uint,
                       &c->value_off, &c->value_data, &c->name_id, &c->bits, &c->list,
                       &c->kind, &c->flags, &c->name_off, &c->name_data};
    size_t i;
    for (i = 0; i < sizeof cols / sizeof cols[0]; i++) pyf_col_free(cols[i]);
    free(c->slots);
    c->slots = NULL;
    c->nslots = 0;
}

static int pyf_operands(frames_reader *r, uint64_t first, uint64_t stop, pyf_op_cols *c,
                        frames_error *err) {
    uint64_t zero = 0;
    int rc;
    pyf_op_cols_init(c);
    if (pyf_col_append(&c->value_off, &zero, 1) < 0 || pyf_names_grow(c) < 0) {
        pyf_fail(err, FRAMES_E_NOMEM, "out of memory while filling columns");
        return FRAMES_E_NOMEM;
    }
    rc = pyf_walk(r, first, stop, pyf_visit_operands, c, err);
    if (rc < 0) pyf_op_cols_free(c);
    return rc;
}

/* ---- syscalls: index, pc, tid, number, arguments (flattened) ------------------------ */

typedef struct pyf_sys_cols {
    pyf_col frame, pc, tid, number;   /* uint64 */
    pyf_col args_off;                 /* uint64: args [args_off[i], args_off[i+1]) */
    pyf_col args;                     /* int64 */
} pyf_sys_cols;

static int pyf_visit_syscall(void *ctx, uint64_t index, const frames_frame *f) {
    pyf_sys_cols *c = (pyf_sys_cols *)ctx;
    uint64_t end;
    if (!(f->present & (1u << FRAMES_KIND_SYSCALL))) return 0;
    PYF_PUSH(c->frame, uint64_t, index);
    PYF_PUSH(c->pc, uint64_t, f->syscall.address);
    PYF_PUSH(c->tid, uint64_t, f->syscall.thread_id);
    PYF_PUSH(c->number, uint64_t, f->syscall.number);
    if (pyf_col_append(&c->args, f->syscall.args, f->syscall.nargs) < 0) return FRAMES_E_NOMEM;
    end = c->args.n;
    return pyf_col_append(&c->args_off, &end, 1);
}

static void pyf_sys_cols_free(pyf_sys_cols *c) {
    pyf_col_free(&c->frame);
    pyf_col_free(&c->pc);
    pyf_col_free(&c->tid);
    pyf_col_free(&c->number);
    pyf_col_free(&c->args_off);
    pyf_col_free(&c->args);
}

static int pyf_syscalls(frames_reader *r, uint64_t first, uint64_t stop, pyf_sys_cols *c,
                        frames_error *err) {
    uint64_t zero = 0;
    int rc;
    memset(c, 0, sizeof *c);
    c->frame.elem = c->pc.elem = c->tid.elem = c->number.elem = c->args_off.elem = 8;
    c->args.elem = 8;
    if (pyf_col_append(&c->args_off, &zero, 1) < 0) {
        pyf_fail(err, FRAMES_E_NOMEM, "out of memory while filling columns");
        return FRAMES_E_NOMEM;
    }
    rc = pyf_walk(r, first, stop, pyf_visit_syscall, c, err);
    if (rc < 0) pyf_sys_cols_free(c);
    return rc;
}

/* ---- query: results handed to Python one by one -------------------------------------- */

typedef int (*pyf_result_fn)(void *ctx, const fq_result *r);

/* Compile `where` (and the soft predicates, NUL-separated in `soft`, nsoft of them) over
   the declared variables (names[i] : types[i]) and run it, results in trace order. */
static int pyf_query(fq_trace *t, const char *const *names, const char *const *types,
                     uint32_t nvars, const char *where, const char *const *soft, uint32_t nsoft,
                     int dedup, uint64_t limit, unsigned threads, pyf_result_fn fn, void *ctx,
                     uint64_t *nresults, frames_error *err) {
    fq_query *q;
    fq_plan *p;
    fq_run_options ro;
    uint32_t i;
    int rc;
    if ((rc = fq_query_open(&q, NULL, err)) < 0) return rc;
    for (i = 0; i < nvars && rc >= 0; i++)
        if ((rc = fq_query_var(q, names[i], types[i])) < 0) *err = *fq_query_error(q);
    if (rc >= 0 && where && where[0]) rc = fq_query_where_text(q, where, err);
    for (i = 0; i < nsoft && rc >= 0; i++) rc = fq_query_soft_text(q, soft[i], err);
    if (rc >= 0 && dedup) fq_query_flags(q, FQ_DEDUP);
    if (rc >= 0 && (rc = fq_compile(&p, q, t, err)) >= 0) {
        fq_run_options_default(&ro);
        ro.limit = limit;
        ro.threads = threads;
        rc = fq_run(p, &ro, fn, ctx, nresults, err);
        fq_plan_close(p);
    }
    fq_query_close(q);
    return rc;
}

/* ---- names ------------------------------------------------------------------------------ */

/* A symboliser over the modload frames of the trace at path (a reader of its own, so
   that the caller's position stays) and its meta frame. */
static int pyf_sym_open(frames_sym **s, const char *path, const char *sysroot, int no_files,
                        frames_error *err) {
    frames_sym_options o;
    frames_reader *r;
    int rc;
    frames_sym_options_default(&o);
    o.sysroot = sysroot;
    if (no_files) o.flags |= FRAMES_SYM_NO_FILES;
    if ((rc = frames_sym_open(s, &o, err)) < 0) return rc;
    if ((rc = pyf_reader_open(&r, path, err)) < 0) {
        frames_sym_close(*s);
        *s = NULL;
        return rc;
    }
    frames_sym_set_meta(*s, frames_reader_meta(r));
    if ((rc = frames_sym_add_reader(*s, r)) < 0) {
        *err = *frames_reader_error(r);
        if (!err->code) pyf_fail(err, rc, "cannot read the trace's modules");
        frames_sym_close(*s);
        *s = NULL;
    }
    frames_reader_close(r);
    return rc < 0 ? rc : 0;
}

/* The name of pc ("" when it is in no module), as frames dump --pc --symbols prints it. */
static size_t pyf_symbolize(frames_sym *s, uint64_t pc, int line, char *buf, size_t cap) {
    frames_sym_loc loc;
    if (frames_sym_lookup(s, pc, &loc) <= 0) {
        if (cap) buf[0] = 0;
        return 0;
    }
    return frames_sym_format(&loc, line ? FRAMES_SYM_FMT_LINE : 0, buf, cap);
}

/* ---- time travel (frames_replay.h) ------------------------------------------------ */

/* The replay object of the trace at path with its index at index_path (NULL: the
   library's default, TRACE.fridx beside the trace, built when missing or stale). */
static int pyf_replay_open(frames_replay **r, const char *path, const char *index_path,
                           frames_error *err) {
    frames_replay_options o;
    frames_replay_options_default(&o);
    o.index_path = index_path;
    return frames_replay_open(r, path, &o, err);
}

/* The state before instruction `at`, as frames state prints it: the thread and pc of
   instruction `at` (after the last one: the thread that ran it, no pc), and for each
   full register of the table (at most cap) whether it is known, its size and its bytes
   (values[i*64 ..]). Returns how many registers the table has, or a negative error. */
static long pyf_replay_state(frames_replay *r, uint64_t at, uint64_t *thread, uint64_t *pc,
                             int *has_pc, uint8_t *known, uint32_t *sizes, uint8_t *values,
                             size_t cap, frames_error *err) {
    frames_replay_info info;
    frames_replay_insn insn;
    const frames_replay_reg *reg;
    size_t i, n;
    int rc;
    frames_replay_info_get(r, &info);
    *thread = 0;
    *has_pc = 0;
    if (at > info.instructions) {
        pyf_fail(err, FRAMES_E_RANGE, "instruction past the end of the trace");
        return FRAMES_E_RANGE;
    }
    if (at == info.instructions && at > 0 && frames_replay_goto(r, at - 1, err) == FRAMES_OK &&
        frames_replay_insn_get(r, &insn) == FRAMES_OK)
        *thread = insn.thread;
    if ((rc = frames_replay_goto(r, at, err)) < 0) return rc;
    if (frames_replay_insn_get(r, &insn) == FRAMES_OK) {
        *thread = insn.thread;
        *pc = insn.pc;
        *has_pc = 1;
    }
    for (i = 0; (reg = frames_replay_reg_at(r, i)) != NULL; i++) {
        if (i >= cap) continue;
        known[i] = frames_replay_reg_get(r, *thread, reg->name, values + i * 64, 64, &n) == 1;
        sizes[i] = (uint32_t)n;
    }
    return (long)i;
}

/* Memory before instruction `at`: bytes[k] valid where known[k]. Returns the number of
   known bytes, or a negative error. */
static long pyf_replay_mem(frames_replay *r, uint64_t at, uint64_t addr, uint8_t *bytes,
                           uint8_t *known, size_t n, frames_error *err) {
    int rc;
    if (frames_replay_position(r) != at && (rc = frames_replay_goto(r, at, err)) < 0) return rc;
    return (long)frames_replay_mem_get(r, addr, bytes, known, n);
}

/* Every access matching q by instructions from..stop-1, in order, appended to out
   (frames_replay_access elements), as frames history lists them: instruction `from`
   itself, then each next match the index finds. */
static int pyf_replay_history(frames_replay *r, const frames_replay_query *q, uint64_t from,
                              uint64_t stop, pyf_col *out, frames_error *err) {
    frames_replay_info info;
    uint64_t at = from;
    int rc;
    frames_replay_info_get(r, &info);
    if (stop > info.instructions) stop = info.instructions;
    for (rc = at < stop ? FRAMES_OK : FRAMES_REPLAY_NONE; rc == FRAMES_OK && at < stop;
         rc = frames_replay_find(r, q, at, 1, &at, err)) {
        long n;
        if (pyf_col_reserve(out, 16) < 0) return FRAMES_E_NOMEM;
        n = frames_replay_accesses(r, q, at, (frames_replay_access *)out->data + out->n,
                                   out->cap - out->n, err);
        if (n < 0) return (int)n;
        if ((size_t)n > out->cap - out->n) {   /* more than room: again with enough */
            if (pyf_col_reserve(out, (size_t)n) < 0) return FRAMES_E_NOMEM;
            n = frames_replay_accesses(r, q, at, (frames_replay_access *)out->data + out->n,
                                       out->cap - out->n, err);
            if (n < 0) return (int)n;
        }
        out->n += (size_t)n;
    }
    return rc < 0 ? rc : 0;
}
