/* frames.h - BAP "frames" execution traces: read, write, encode, decode.
   Single-header C99 library (also compiles as C++). MIT licence, see end of file.

   ---------------------------------------------------------------------------------------
   WHAT IT IS

   A reader and writer for the BAP frames trace container (header, meta frame,
   length-prefixed protobuf frames, table-of-contents index) with a hand-written protobuf
   wire codec for every frame message. No dependency beyond the C library, no global state,
   caller-supplied allocators and buffers.

   - Reads every trace real tracers write: libtrace C++ (all versions), QEMU tracewrap,
     the QEMU TCG plugin, PIN tools; versions 1-3; every TOC convention; unfinished and
     truncated traces (every complete frame is returned, the cut is reported).
   - Writes traces byte-identical to the upstream C++ writer (libtrace + libprotobuf).
   - Decoding is zero-copy (strings and bytes are views into the input) and does not
     allocate per frame once its scratch arena has grown to the largest frame.

   ---------------------------------------------------------------------------------------
   USAGE

   In exactly one C or C++ file:

       #define FRAMES_IMPLEMENTATION
       #include "frames.h"

   Everywhere else just #include "frames.h". Each header of the library has its own
   FRAMES_<PART>_IMPLEMENTATION; FRAMES_ALL_IMPLEMENTATION turns on the implementation of
   every header the file includes (tools/impl.c):

       #define FRAMES_ALL_IMPLEMENTATION
       #include "frames.h"
       #include "frames_query.h"   // ... and the others this program uses

   Reading:

       frames_reader *r; frames_error err; frames_frame f; int rc;
       if (frames_reader_open_path(&r, "trace.frames", NULL, &err) < 0) {
           fprintf(stderr, "%s\n", err.message); return 1;
       }
       while ((rc = frames_reader_next(r, &f)) > 0)
           if (f.kind == FRAMES_KIND_STD) printf("%llx\n", (unsigned long long)f.std.address);
       if (rc < 0) fprintf(stderr, "%s\n", frames_reader_error(r)->message);
       frames_reader_close(r);

   Writing:

       frames_writer *w; frames_error err; frames_frame f; frames_operand op;
       memset(&f, 0, sizeof f); memset(&op, 0, sizeof op);
       frames_writer_open_path(&w, "out.frames", NULL, NULL, &err);  // v3, i386, m = 10000
       op.spec = FRAMES_REG; op.name = frames_str("RAX"); op.bit_length = 64; op.read = 1;
       op.value = frames_bytes_of(&rax, 8);
       f.kind = FRAMES_KIND_STD; f.std.address = pc; f.std.thread_id = 1;
       f.std.rawbytes = frames_bytes_of(code, 3); f.std.pre = &op; f.std.npre = 1;
       frames_writer_add(w, &f);
       frames_writer_close(w);   // finishes the trace (TOC, header) and frees the writer

   ---------------------------------------------------------------------------------------
   OPTIONS (#define before including the implementation)

   FRAMES_STATIC          make every function static (private copy per translation unit)
   FRAMES_DEF             linkage of the public functions (default: extern)
   FRAMES_MALLOC(sz,ctx)  allocator; ctx is the alloc_ctx of the options that made the
   FRAMES_REALLOC(p,sz,ctx)  object (reader, writer, decoder). Define all three or none.
   FRAMES_FREE(p,ctx)     Defaults: malloc, realloc, free.
   FRAMES_NO_STDIO        no C library beyond memory and strings (freestanding tracers:
                          Valgrind tools, kernel modules, firmware): leaves out FILE*
                          helpers and implies FRAMES_NO_POSIX and FRAMES_NO_TEXT. Messages
                          are formatted by the library's own formatter; what remains of
                          the C library is memcpy, memmove, memset, strlen, strcmp and
                          (unless FRAMES_MALLOC & co are defined) malloc, realloc, free.
   FRAMES_NO_POSIX        leave out mmap/fd based helpers (automatic on _WIN32)
   FRAMES_NO_TEXT         leave out the protobuf-text and JSON printers
   Every option compiles alone and with any other, as C99 and C++ (build.sh headers).

   ---------------------------------------------------------------------------------------
   CONVENTIONS (every header of the library follows them; keep this true)

   Names. Public: frames_<part>_... and FRAMES_<PART>_...; private: frames__<part>_...
   and FRAMES__... (stb's lib_ / lib__). The one documented short prefix is the query
   header's fq_ / FQ_ (private fq__). Nothing else is exported.
   Lifecycles. A heap object that reads or writes a source or owns resources:
   frames_X_open(&obj, ..., const frames_X_options *o, frames_error *err) (o NULL: the
   defaults) and frames_X_close(obj). An object in caller storage: frames_X_init(&obj, ...)
   and frames_X_free(&obj). What _open made, _close ends (fq_compile, named after its
   work, makes a plan that fq_plan_close ends). Defaults are filled by pointer:
   frames_X_options_default(&o), frames_limits_default(&l). Three refinements, because
   the plain rule would say something false:
   - _finish is its own verb: it completes an output or a result (the writer's TOC and
     header, a recorder's last frame at thread exit, the Parquet footer, the last block
     of coverage) and returns the code, the object staying valid for its getters; _close
     or _free still ends it (a writer's _close finishes first if need be). A writer in
     caller storage (frames_writer_init) also ends with frames_writer_close: what ends it
     is closing its sink, not freeing; a recorder (frames_rec_init) allocates nothing and
     so has no _free.
   - _close returns void, or the code when it finishes first. An object without
     frames_X_error then takes `frames_error *err` (frames_zstd_sink_close,
     frames_parquet_export_close): it is gone when the details are known.
   - An object whose only setting is its allocator takes `void *alloc_ctx` in the place
     of the options (frames_cov_open, frames_tenet_open, frames_stats_open,
     frames_perf_open_*, fq_query_open); it gets frames_X_options and
     frames_X_options_default with its first real setting.
   Getters: frames_X_<what>_get. What changes while the object works is copied:
   frames_X_info_get(obj, &info) fills a snapshot; what the object holds unchanged once
   open, or keeps up to date itself, is a const pointer valid until _close
   (frames_perf_info_get, frames_zstd_map_info_get, frames_vprof_stats_get). The view of
   an object as a frames_sink is frames_X_get (frames_zstd_sink_get). Indexed access is
   frames_X_<what>_at(obj, i) (frames_cov_module_at, frames_zstd_map_chunk_at,
   frames_perf_stream_at; NULL past the end). The struct types take the plain names
   (frames_X_info); frames_X_error(obj) is the object's last error. Name lookups
   (frames_X_name(value)) never return NULL: a value they do not know gives "unknown".
   Configuration macros are named after the header file: FRAMES_QUERY_IMPLEMENTATION,
   FRAMES_QUERY_NO_THREADS, FRAMES_SYM_LIBDW (the fq_ prefix is for the API). Every
   header has FRAMES_<PART>_STATIC / FRAMES_<PART>_DEF (its functions' linkage, as
   FRAMES_STATIC / FRAMES_DEF are frames.h's), and FRAMES_ALL_IMPLEMENTATION turns on
   the implementation of every header a file includes. An option that uses a library is
   FRAMES_<PART>_LIB<NAME>; FRAMES_HAVE_<LIB> are the build's (build.sh: the library is
   installed), read by tools/ and tests/, never by a header.
   Results. FRAMES_OK (0), a positive status, or a negative code of the one registry
   below (FRAMES_ERRORS: every header's codes, each header in its own range); the
   details go to a frames_error (message, file offset, frame index): see "Status and
   error codes" for where. Callbacks return 0 to go on, nonzero to stop: the run then
   returns FRAMES_E_STOPPED. Progress callbacks are frames_progress_fn.
   Memory. FRAMES_MALLOC / FRAMES_REALLOC / FRAMES_FREE (all three or none) with the
   alloc_ctx of the options that made the object; nothing is sized from the input
   without a bound; no global state.
   Code. Each header's implementation shares one block of private helpers (allocator
   defaults, attributes, the position-carrying fail, growth, bounded text and hex digits,
   the one warning list (frames__warn_add), hashing and the one hash table
   (frames__htab), little-endian loads and stores and a value's integer, varints, sink
   construction, ELF program headers; the one worker thread, frames__worker, compiled
   only when asked for: FRAMES__WANT_WORKER) found in frames.h under "SHARED PRIVATE
   HELPERS": what two headers need is written there once. Facts about traces are
   decided once, in frames.h (frames_arch_is_x86_64, frames_frame_peek_kind), never
   again in another header. A library message says what is wrong, never which command of the CLI to run.
   Sections start with a banner of '=' (major) or '-' (minor) lines that grep finds.

   ---------------------------------------------------------------------------------------
   THE MODEL

   A frame is a `frames_frame`: `kind` names the option that is set (std, syscall,
   exception, taint_intro, modload, key) and the matching member holds its fields.
   Lists are (pointer, count) pairs; strings and bytes are `frames_bytes` views with an
   explicit length (they may contain NUL and need not be UTF-8). Optional protobuf fields
   have `has_*` flags so that "absent" and "present but empty" stay different, which the
   byte-exact writer needs.

   Lifetimes of decoded data: byte views point into the input. For readers over memory,
   a mapped file or a whole-file buffer, views stay valid until the reader is closed; for
   stream readers (pipes, FILE*) and paged ones (frames_reader_open_source, e.g. compressed
   traces) until the next call on that reader or cursor. Arrays (operand
   lists, syscall arguments, ...) live in the decoder's scratch arena and stay valid until
   the next frame is decoded with the same reader, cursor or decoder.

   Robustness: every length read from a file is checked against the bytes that remain and
   against configurable limits (`frames_limits`) before it is used. Nothing is allocated
   from a size read from the file without such a bound. Library code never prints, aborts
   or exits: functions return FRAMES_OK (0), a positive status, or a negative FRAMES_E_*
   code, and fill a `frames_error` with a message, the file offset and the frame index.

   ---------------------------------------------------------------------------------------
   API OVERVIEW (details at each declaration below)

   Decoding and encoding one message
     frames_decoder_init / _free          scratch arena + limits for decoding
     frames_decode_frame / _meta          bytes -> model (zero-copy)
     frames_peek_std                      a std_frame's address, thread, length (no lists)
     frames_frame_peek_kind               the kind an encoded frame names, undecoded
     frames_encode_frame / _meta          model -> bytes in a caller buffer (no allocation)
     frames_frame_size / frames_meta_size exact encoded size
     frames_validate_frame                would the strictest reader (BAP's piqirun) accept it?
   Reading a container
     frames_reader_open_memory / _path / _fd / _file / _io / _source
     frames_reader_next / _next_raw / _next_full   sequential iteration (decoded,
                                          undecoded, both with the position)
     frames_reader_decode                 decode a record taken undecoded (frames_peek_std)
     frames_reader_seek / _count / _index random access, frame count, index building
     frames_reader_info_get / _warning        TOC convention found, truncation, warnings
     frames_reader_truncated              is the trace cut (after a reading pass, no scan)
     frames_reader_skip_damage            go on after an unreadable region (next TOC entry)
     frames_cursor_open / _next / _close  independent cursors (one per thread)
   Writing a container
     frames_writer_open / _open_path / _open_fd / _open_file, frames_writer_init
     frames_writer_add / _add_encoded / _flush / _finish / _close / _abandon
     frames_writer_options_like / _copy / _confirm   settings that reproduce an input trace
     frames_sink_memory / _fd / _file     where a writer writes (frames_membuf: memory)
     frames_fix                           unfinished/truncated trace -> finished trace
   Recording (embedded tracers; see "Recording API" below)
     frames_rec_init / _filter / _sampling    per-thread recorder over a caller buffer
     frames_rec_begin / _reg / _mem / _end    value records grouped into std_frames
     frames_rec_prepare, frames_rec_reg_prepared   a register's element bytes made once
     frames_rec_syscall / _modload / _exception / _frame / _flush / _finish
     frames_writer_add_frames, frames_rec_flush_to_writer, frames_rec_crash_finish
   Naming and printing
     frames_strerror, frames_arch_name, frames_kind_name, frames_toc_name
     frames_arch_is_x86_64                the one test for an x86-64 trace
     frames_print_frame_pbtext / _meta_pbtext / _frame_json
     frames_print_operand_rows_jsonl      one JSON line per operand (for column stores)
   ---------------------------------------------------------------------------------------
   SECTIONS (in file order; each starts with a banner of '=' or '-' lines,
   the title on the line below it: grep -n '^   TITLE' finds it)

   Status and error codes (the one registry of the library)
   The model
   Limits (decoding)
   Decoding one message (no container)
   Encoding one message (byte-identical to libprotobuf for the same content)
   Container constants and header
   Reader
   Writer
   Printing (protobuf text format as protoc --decode prints it; JSON)
   Recording API (DBI clients, emulators, in-process hooks, debuggers)
   SHARED PRIVATE HELPERS
     message formatting
     errors
     memory
     bounded text
     warning lists
     hashing
     hash tables
     little-endian words
     varints
     record shapes
     sinks
     ELF program headers
     files named by input
   SHARED PRIVATE HELPERS: the worker thread
   IMPLEMENTATION
     errors and names
     wire primitives
     decoder arena
     message decoders
     fast path
     meta frame
     message encoders
     a std_frame of plain operands, written in place front to back
     container: reader
     container: writer
     names
     printing
     recording API
*/

/* FRAMES_ALL_IMPLEMENTATION: the implementation of every header the file includes (one
   switch for the one file that holds them all, as sokol's SOKOL_IMPL). */
#if defined(FRAMES_ALL_IMPLEMENTATION) && !defined(FRAMES_IMPLEMENTATION)
#define FRAMES_IMPLEMENTATION
#endif

/* Strict ISO modes (cc -std=c99) hide the POSIX declarations the implementation uses
   (pread, pwrite, madvise). Ask for them when the implementation is compiled and no
   feature-test macro was chosen; this works when frames.h comes before any system header
   of the file (else define _DEFAULT_SOURCE or _GNU_SOURCE yourself). */
#if defined(FRAMES_IMPLEMENTATION) && defined(__STRICT_ANSI__) && !defined(_WIN32) &&     \
    !defined(FRAMES_NO_POSIX) && !defined(_DEFAULT_SOURCE) && !defined(_GNU_SOURCE) &&   \
    !defined(_POSIX_C_SOURCE) && !defined(_XOPEN_SOURCE) && !defined(_BSD_SOURCE)
#define _DEFAULT_SOURCE 1
#endif

#ifndef FRAMES_H_INCLUDED
#define FRAMES_H_INCLUDED

/* No stdio means no C library beyond memory and strings (a freestanding tracer): the
   fd/path helpers (errno) and the text printers (floating point) go with it. */
#ifdef FRAMES_NO_STDIO
#ifndef FRAMES_NO_POSIX
#define FRAMES_NO_POSIX
#endif
#ifndef FRAMES_NO_TEXT
#define FRAMES_NO_TEXT
#endif
#endif

#include <stddef.h>
#include <stdint.h>
#if !defined(FRAMES_NO_STDIO)
#include <stdio.h>
#endif

#if defined(_WIN32) && !defined(FRAMES_NO_POSIX)
#define FRAMES_NO_POSIX
#endif

/* The linkage of a private copy (FRAMES_STATIC, FRAMES_<PART>_STATIC): unused parts of
   it are fine. */
#if defined(__GNUC__) || defined(__clang__)
#define FRAMES__STATIC_DEF static __attribute__((unused))
#else
#define FRAMES__STATIC_DEF static
#endif
#if defined(FRAMES_STATIC) && !defined(FRAMES_DEF)
#define FRAMES_DEF FRAMES__STATIC_DEF
#elif !defined(FRAMES_DEF)
#define FRAMES_DEF extern
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define FRAMES_LIB_VERSION "0.1.0"

/* ======================================================================================
   Status and error codes (the one registry of the library)

   Every code of every header is in this one list, so that frames_strerror names them
   all and no two parts give one value two meanings. Ranges: 0 and positive values are
   statuses; frames.h -1..-99, frames_query.h -100..-199 (short prefix FQ_E_),
   frames_pt.h -200..-299, frames_replay.h -600..-699, frames_gdb.h -700..-799. The other
   headers (interop, vprof, zstd, sym, parquet) register no code of their own: they report
   with frames.h's. A header that needs a code frames.h's do not cover takes the next free
   hundred (-300..-399 now) and adds
   its codes here, in its range, never in a list of its own.

   Where an error is reported: a call that creates an object, and every call that is not
   a per-item step of an object, takes `frames_error *err` as its last argument (NULL
   allowed) and returns the code. The per-item calls of a streaming object (reader next,
   writer add, cursor next, recorder, coverage, vprof...) return the code and keep the
   details in the object: frames_X_error(obj). A callback that asks to stop (returns
   nonzero) ends the run with FRAMES_E_STOPPED; what was delivered before stays valid.
   ====================================================================================== */

/* X(name, value, message): message is what frames_strerror returns */
#define FRAMES_ERRORS(X)                                                                    \
    X(FRAMES_OK, 0, "ok")                                                                   \
    /* finish: the sink cannot seek; the trace is left unfinished (readable) */             \
    X(FRAMES_UNFINISHED, 1, "trace left unfinished (output cannot seek)")                   \
    /* read/write/seek failed (the system's reason in the message) */                       \
    X(FRAMES_E_IO, -1, "input/output error")                                                \
    /* allocation failed or scratch/limit exhausted */                                      \
    X(FRAMES_E_NOMEM, -2, "out of memory")                                                  \
    /* container is malformed (header, meta size, TOC) */                                   \
    X(FRAMES_E_FORMAT, -3, "malformed trace container")                                     \
    /* a protobuf message is malformed */                                                   \
    X(FRAMES_E_DECODE, -4, "malformed protobuf message")                                    \
    /* input ends inside a record */                                                        \
    X(FRAMES_E_TRUNCATED, -5, "input ends inside a record")                                 \
    /* a configured limit (frame size, depth, memory) exceeded */                           \
    X(FRAMES_E_LIMIT, -6, "limit exceeded")                                                 \
    /* invalid argument, or a frame that must not be written */                             \
    X(FRAMES_E_INVALID, -7, "invalid argument or frame")                                    \
    /* unsupported container version */                                                     \
    X(FRAMES_E_VERSION, -8, "unsupported trace version")                                    \
    /* frame index out of range */                                                          \
    X(FRAMES_E_RANGE, -9, "frame index out of range")                                       \
    /* caller buffer too small (the needed size is reported) */                             \
    X(FRAMES_E_SPACE, -10, "buffer too small")                                              \
    /* operation not possible on this object (e.g. seek a pipe) */                          \
    X(FRAMES_E_UNSUPPORTED, -11, "operation not supported by this reader or writer")        \
    /* call out of order (add after finish, ...) */                                         \
    X(FRAMES_E_STATE, -12, "call out of order")                                             \
    /* a callback returned nonzero: the run ended early at its request */                   \
    X(FRAMES_E_STOPPED, -13, "stopped by a callback")                                       \
    /* frames_query.h: query text (offset = byte position in the text) */                   \
    X(FQ_E_SYNTAX, -101, "query syntax error")                                              \
    /* frames_query.h: well-formed but wrong (unknown variable/type, type error, ...) */   \
    X(FQ_E_QUERY, -102, "invalid query")                                                    \
    /* frames_query.h: the index belongs to another trace or an older version of it */      \
    X(FQ_E_STALE, -103, "index does not match the trace")                                   \
    /* frames_pt.h: instruction bytes incomplete or not decodable (libipt's pte_bad_insn) */ \
    X(FRAMES_PT_E_BAD_INSN, -201, "undecodable or incomplete instruction")                  \
    /* frames_pt.h: libipt refused the trace, the image or the configuration */            \
    X(FRAMES_PT_E_LIBIPT, -202, "Intel PT decoder (libipt) error")                         \
    /* frames_replay.h: the state index is missing, stale (when not rebuilt) or malformed */ \
    X(FRAMES_E_REPLAY_INDEX, -601, "replay index missing, stale or malformed")             \
    /* frames_replay.h: a register name the architecture's table does not know */          \
    X(FRAMES_E_REPLAY_REG, -602, "unknown register name")                                  \
    /* frames_gdb.h: the trace's architecture has no GDB register table */                  \
    X(FRAMES_E_GDB_ARCH, -701, "no GDB register table for this architecture")

#define FRAMES__ERROR_ENUM(name, value, message) name = value,
enum { FRAMES_ERRORS(FRAMES__ERROR_ENUM) FRAMES__ERROR_END = -1000 };
#undef FRAMES__ERROR_ENUM

#define FRAMES_NO_POS UINT64_MAX

typedef struct frames_error {
    int code;           /* FRAMES_E_* (0 when no error) */
    uint64_t offset;    /* file offset the problem was found at, or FRAMES_NO_POS */
    uint64_t frame;     /* frame index (0-based, meta excluded), or FRAMES_NO_POS */
    char message[200];  /* readable, NUL-terminated, includes offset and frame */
} frames_error;

/* Static description of any code of the registry ("malformed protobuf message", ...);
   "unknown error" for a value that is not in it. Never NULL. */
FRAMES_DEF const char *frames_strerror(int code);

/* Progress of long work, called now and then on the calling thread: `done` out of
   `total` (units of the call; total 0 when unknown; done never decreases). */
typedef void (*frames_progress_fn)(void *ctx, uint64_t done, uint64_t total);

/* ======================================================================================
   The model
   ====================================================================================== */

/* A view of bytes owned by someone else (input buffer, caller memory). */
typedef struct frames_bytes {
    const uint8_t *ptr;
    size_t len;
} frames_bytes;

/* Frame kinds: values are the `frame` message's field numbers; UNKNOWN is any other
   option (e.g. moflow's 7 block, 8 call, 9 ret), NONE an empty frame. */
typedef enum frames_kind {
    FRAMES_KIND_NONE = 0,
    FRAMES_KIND_STD = 1,
    FRAMES_KIND_SYSCALL = 2,
    FRAMES_KIND_EXCEPTION = 3,
    FRAMES_KIND_TAINT_INTRO = 4,
    FRAMES_KIND_MODLOAD = 5,
    FRAMES_KIND_KEY = 6,
    FRAMES_KIND_UNKNOWN = 7
} frames_kind;

/* operand_info_specific options (bits: both may be set in malformed input) */
#define FRAMES_MEM 1u  /* mem_operand { address } */
#define FRAMES_REG 2u  /* reg_operand { name } */

/* taint_info options (bits) */
#define FRAMES_TAINT_NONE 1u      /* no_taint: bool */
#define FRAMES_TAINT_ID 2u        /* taint_id: uint64 */
#define FRAMES_TAINT_MULTIPLE 4u  /* taint_multiple: bool */

typedef struct frames_taint {
    uint8_t set;        /* FRAMES_TAINT_* bits present; 0 = not set (see frames_operand) */
    uint8_t no_taint;   /* value of no_taint when set */
    uint8_t multiple;   /* value of taint_multiple when set */
    uint64_t id;        /* value of taint_id when set */
} frames_taint;

/* One operand: `operand_info` in std_frame lists, `value_info` in key frames (which have
   no usage flags and an optional taint_info).
   Writing: an operand_info whose taint.set is 0 is written as `no_taint: true` (what
   every known tracer writes); a value_info whose taint.set is 0 gets no taint_info. */
typedef struct frames_operand {
    uint8_t spec;          /* FRAMES_MEM or FRAMES_REG */
    uint8_t read, written, index, base;   /* operand_usage (operand_info only) */
    int32_t bit_length;    /* sint32; 0 = "use the value's length" by convention */
    uint64_t address;      /* mem_operand.address */
    frames_bytes name;     /* reg_operand.name */
    frames_taint taint;
    frames_bytes value;    /* little-endian in every known writer */
} frames_operand;

typedef struct frames_std_frame {
    uint64_t address;
    uint64_t thread_id;
    frames_bytes rawbytes;
    const frames_operand *pre;   /* operand_pre_list (required: always written) */
    uint32_t npre;
    uint32_t npost;
    const frames_operand *post;  /* operand_post_list, written iff has_post */
    uint8_t has_post;
    uint8_t has_mode;
    frames_bytes mode;           /* "arm:a32", "arm:t32", "ppc:ppc", "ppc:ppc64" (v3) */
} frames_std_frame;

typedef struct frames_syscall_frame {
    uint64_t address;
    uint64_t thread_id;
    uint64_t number;
    const int64_t *args;   /* argument_list (sint64, written unpacked) */
    uint32_t nargs;
} frames_syscall_frame;

typedef struct frames_exception_frame {
    uint64_t number;
    uint64_t thread_id;    /* optional fields: written iff has_* */
    uint64_t from_addr;
    uint64_t to_addr;
    uint8_t has_thread_id, has_from_addr, has_to_addr;
} frames_exception_frame;

typedef struct frames_taint_intro {
    uint64_t addr;
    uint64_t taint_id;
    uint64_t offset;
    frames_bytes value;
    frames_bytes source_name;
    uint8_t has_value, has_source_name, has_offset;
} frames_taint_intro;

typedef struct frames_taint_intro_frame {
    const frames_taint_intro *intros;
    uint32_t count;
} frames_taint_intro_frame;

typedef struct frames_modload_frame {
    frames_bytes module_name;
    uint64_t low_address;
    uint64_t high_address;
} frames_modload_frame;

/* value_source_tag options (bits) */
#define FRAMES_TAG_NO_THREAD_ID 1u
#define FRAMES_TAG_THREAD_ID 2u

typedef struct frames_tagged_values {
    uint8_t tag_set;         /* FRAMES_TAG_* bits present */
    uint8_t no_thread_id;    /* value when set */
    uint64_t thread_id;      /* value when set */
    const frames_operand *values;   /* value_list (value_info elements) */
    uint32_t count;
} frames_tagged_values;

typedef struct frames_key_frame {
    const frames_tagged_values *lists;   /* tagged_value_lists */
    uint32_t count;
} frames_key_frame;

/* An option of `frame` this library does not know (field number >= 7, or a known number
   with the wrong wire type). Decoded frames keep the first one; the writer re-emits it. */
typedef struct frames_unknown_option {
    uint32_t field;
    uint32_t wire_type;    /* 0 varint, 1 i64, 2 len, 5 i32 */
    uint64_t scalar;       /* value for wire types 0, 1, 5 */
    frames_bytes payload;  /* bytes for wire type 2 */
} frames_unknown_option;

/* Observations made while decoding (frames_frame.flags, frames_meta.flags). */
#define FRAMES_FF_MULTI_OPTION   0x0001u /* a variant had several options set */
#define FRAMES_FF_EMPTY_VARIANT  0x0002u /* a variant (or the frame) had no option */
#define FRAMES_FF_INCOMPLETE     0x0004u /* a required field was missing (zero default used) */
#define FRAMES_FF_UNKNOWN_FIELD  0x0008u /* unknown field in a record (skipped) */
#define FRAMES_FF_UNKNOWN_OPTION 0x0010u /* unknown option in a variant */
#define FRAMES_FF_PACKED         0x0020u /* packed repeated scalars (piqirun rejects) */
#define FRAMES_FF_BAD_BOOL       0x0040u /* bool varint other than 0/1 */
#define FRAMES_FF_GROUP          0x0080u /* a group (wire type 3/4) was skipped */
#define FRAMES_FF_DUPLICATE      0x0100u /* a singular field occurred more than once */
#define FRAMES_FF_NONCANONICAL   0x0200u /* re-encoding will not reproduce the bytes:
                                            field order, non-minimal varints, ... */
#define FRAMES_FF_WIDE_VALUE     0x0400u /* a 32-bit field carried more than 32 bits */
/* Flags that BAP's OCaml reader (piqirun) rejects. */
#define FRAMES_FF_PIQIRUN_REJECTS (FRAMES_FF_MULTI_OPTION | FRAMES_FF_EMPTY_VARIANT | \
    FRAMES_FF_INCOMPLETE | FRAMES_FF_UNKNOWN_OPTION | FRAMES_FF_PACKED | \
    FRAMES_FF_BAD_BOOL | FRAMES_FF_GROUP)
/* Flags that libprotobuf's parser (the C++ readers) rejects. */
#define FRAMES_FF_LIBPROTOBUF_REJECTS (FRAMES_FF_INCOMPLETE)

typedef struct frames_frame {
    frames_kind kind;   /* primary kind: lowest-numbered option present, or NONE/UNKNOWN */
    uint32_t present;   /* bit (1u << kind) for every option present (decoder); writer:
                           0 means "just kind" */
    uint32_t flags;     /* FRAMES_FF_* (decoder output; ignored by the writer) */
    frames_std_frame std;
    frames_syscall_frame syscall;
    frames_exception_frame exception;
    frames_taint_intro_frame taint_intro;
    frames_modload_frame modload;
    frames_key_frame key;
    frames_unknown_option unknown;
} frames_frame;

/* The meta frame of version 2/3 traces (all fields required by the schema). */
typedef struct frames_meta {
    frames_bytes tracer_name;
    const frames_bytes *tracer_args;
    const frames_bytes *tracer_envp;
    uint32_t ntracer_args, ntracer_envp;
    frames_bytes tracer_version;
    frames_bytes target_path;
    const frames_bytes *target_args;
    const frames_bytes *target_envp;
    uint32_t ntarget_args, ntarget_envp;
    frames_bytes target_md5sum;   /* 16 raw bytes in practice */
    int32_t fstats_size;          /* sint32: file sizes >= 2 GiB wrap, as upstream */
    double fstats_atime, fstats_mtime, fstats_ctime;
    frames_bytes user;
    frames_bytes host;
    double time;                  /* seconds since the epoch */
    uint32_t flags;               /* FRAMES_FF_* (decoder output) */
} frames_meta;

/* Helpers to build views. */
static inline frames_bytes frames_bytes_of(const void *ptr, size_t len) {
    frames_bytes b;
    b.ptr = (const uint8_t *)ptr;
    b.len = len;
    return b;
}
FRAMES_DEF frames_bytes frames_str(const char *s);   /* view of a NUL-terminated string */

/* ======================================================================================
   Limits (decoding)
   ====================================================================================== */

/* Readers use a zero field as its default. Every buffer a reader sizes from the file
   (stream window, meta and TOC copies) is bounded by max_frame_size and grows only as
   data arrives; decoded arrays by max_scratch per decoder. See docs/security.md. */
typedef struct frames_limits {
    uint64_t max_frame_size;  /* largest accepted frame or meta, bytes (default 256 MiB) */
    uint32_t max_depth;       /* nesting of groups while skipping (default 64) */
    size_t max_scratch;       /* decoder arena bound, bytes (default 1 GiB) */
} frames_limits;

FRAMES_DEF void frames_limits_default(frames_limits *l);

/* ======================================================================================
   Decoding one message (no container)
   ====================================================================================== */

/* A decoder owns a scratch arena for arrays (operand lists, arguments, ...). Give it a
   caller buffer to decode without any allocation (frames needing more arena than `cap`
   fail with FRAMES_E_NOMEM), or NULL/0 to let it allocate and grow as needed.
   Fields are private. */
typedef struct frames_decoder {
    uint8_t *frames__base;
    size_t frames__cap, frames__used, frames__peak;
    int frames__owned;
    void *frames__spill;      /* chain of overflow blocks (freed/merged on reset) */
    frames_limits limits;     /* may be changed between calls */
    uint32_t strict;          /* nonzero: reject what BAP's piqirun rejects */
    void *alloc_ctx;
} frames_decoder;

FRAMES_DEF void frames_decoder_init(frames_decoder *d, void *buf, size_t cap, void *alloc_ctx);
FRAMES_DEF void frames_decoder_free(frames_decoder *d);

/* Decode a serialized `frame` message. Returns FRAMES_OK or a negative code; `out` then
   holds views into data[0..len) and arrays in the decoder's arena (valid until the next
   decode with `d`). An empty message decodes as kind NONE (flag EMPTY_VARIANT) unless
   d->strict. */
FRAMES_DEF int frames_decode_frame(frames_decoder *d, const void *data, size_t len,
                                   frames_frame *out, frames_error *err);
FRAMES_DEF int frames_decode_meta(frames_decoder *d, const void *data, size_t len,
                                  frames_meta *out, frames_error *err);
/* The kind a serialized `frame` message names by its first field, without decoding it
   (to skip the frames a pass does not want): FRAMES_KIND_STD ... FRAMES_KIND_KEY, or
   FRAMES_KIND_NONE when only decoding can tell (empty, an unusual first field). */
FRAMES_DEF int frames_frame_peek_kind(const void *data, size_t len);

/* The head of a std_frame, its operand lists skipped by their lengths: address,
   thread_id and the length of rawbytes, for readers that want only those at the pace of
   the container walk (frames stat, dump --pc). 1 when the payload is one std_frame laid
   out as every writer lays it out (address, thread_id, rawbytes, the pre list, then
   maybe the post list and mode; minimal varints), and then the three values are what
   frames_decode_frame gives; 0 for anything else (other kinds and layouts, malformed
   input): decode those (frames_reader_decode), which also reports errors. What is
   inside the operand lists is not looked at, so damage there goes unnoticed. */
FRAMES_DEF int frames_peek_std(const void *data, size_t len, uint64_t *address,
                               uint64_t *thread_id, size_t *nrawbytes);

/* ======================================================================================
   Encoding one message (byte-identical to libprotobuf for the same content)
   ====================================================================================== */

#define FRAMES_ENC_LENIENT 1u  /* write frames that piqirun would reject (several options,
                                  an empty frame) instead of refusing them */

/* Exact encoded size of the frame/meta as frames_encode_frame would write it (every
   option that is set, even when validation would refuse the frame). */
FRAMES_DEF size_t frames_frame_size(const frames_frame *f);
FRAMES_DEF size_t frames_meta_size(const frames_meta *m);

/* Encode into buf[0..cap). On success *len is the size written. If cap is too small,
   returns FRAMES_E_SPACE with *len = the size needed. Frames are checked with
   frames_validate_frame unless FRAMES_ENC_LENIENT; a refused frame returns an error with
   *len = 0, and buf[0..cap) may hold scratch bytes (a std_frame is checked after its fast
   encoding). No allocation. */
FRAMES_DEF int frames_encode_frame(const frames_frame *f, unsigned flags, void *buf,
                                   size_t cap, size_t *len, frames_error *err);
FRAMES_DEF int frames_encode_meta(const frames_meta *m, void *buf, size_t cap, size_t *len,
                                  frames_error *err);

/* FRAMES_OK if BAP's strict reader would accept the frame as the writer encodes it:
   exactly one option in every variant, a known option, no empty frame. */
FRAMES_DEF int frames_validate_frame(const frames_frame *f, frames_error *err);

/* ======================================================================================
   Container constants and header
   ====================================================================================== */

#define FRAMES_MAGIC 0x677C28828AAF6025ull
#define FRAMES_HEADER_SIZE 48u
#define FRAMES_DEFAULT_FRAMES_PER_TOC 10000u

/* TOC conventions (reader: what was found; writer: what to write). */
typedef enum frames_toc {
    FRAMES_TOC_NONE = 0,      /* no TOC: unfinished trace (n = 0, T = 0) */
    FRAMES_TOC_LIBTRACE = 1,  /* floor((n-1)/m) entries (libtrace writer, pre-2025 reader) */
    FRAMES_TOC_CEIL = 2,      /* ceil(n/m) entries, padded with T (TCG plugin; HEAD reader) */
    FRAMES_TOC_TRACEWRAP = 3, /* floor(n/m) entries, last may equal T (qemu tracewrap) */
    FRAMES_TOC_CEIL_ZERO = 4, /* ceil(n/m) entries, padded with 0 (rz-tracetest) */
    FRAMES_TOC_SHIFTED = 5,   /* 2015 v1 qemu tracer: n-1 entries, first = frame 0 */
    FRAMES_TOC_BLOCK_STARTS = 6, /* early 2025 TCG plugin: toc[0] = 0x30, start of each block */
    FRAMES_TOC_README = 7,    /* ceil(n/m)+1 entries as the upstream README table shows */
    FRAMES_TOC_INVALID = 8    /* present but matches no convention (index built by scan) */
} frames_toc;

typedef struct frames_header {
    uint64_t magic;
    uint64_t version;
    uint64_t arch;           /* enum frame_architecture (frames_arch_name) */
    uint64_t machine;
    uint64_t nframes;        /* as written in the header (0 when unfinished) */
    uint64_t toc_offset;     /* T as written (0 when unfinished) */
    uint64_t meta_size;      /* v2/v3 */
    uint64_t first_frame;    /* F: offset of frame 0's size prefix */
} frames_header;

/* Architecture numbers most tracers use (full table: frames_arch_name). */
#define FRAMES_ARCH_M68K 2
#define FRAMES_ARCH_SPARC 6
#define FRAMES_ARCH_MIPS 8
#define FRAMES_ARCH_I386 9
#define FRAMES_ARCH_POWERPC 23
#define FRAMES_ARCH_ARM 35
#define FRAMES_ARCH_6502 77
#define FRAMES_ARCH_AARCH64 78
#define FRAMES_ARCH_SM83 80
#define FRAMES_ARCH_HEXAGON 81
#define FRAMES_ARCH_LAST 82      /* bfd_arch_last: larger numbers have no name */
#define FRAMES_MACH_I386 1
#define FRAMES_MACH_X86_64 64
#define FRAMES_MACH_X86_64_INTEL 65   /* x86_64_intel_syntax */

/* "i386", "arm", ... or "unknown" when the number is above FRAMES_ARCH_LAST. */
FRAMES_DEF const char *frames_arch_name(uint64_t arch);
/* Is a trace with this header's arch and machine x86-64? The one answer every part of the
   library uses: i386 with machine x86_64 (64) or x86_64_intel_syntax (65), as BAP's reader
   decides (spec §11; other i386 machines, 0 included, are 32-bit x86). */
FRAMES_DEF int frames_arch_is_x86_64(uint64_t arch, uint64_t machine);
FRAMES_DEF const char *frames_kind_name(int kind);         /* "std_frame", ... */
FRAMES_DEF const char *frames_toc_name(int toc);           /* "libtrace", "ceil", ... */
/* (name lookups never return NULL: "unknown" for a value they do not know) */

/* ======================================================================================
   Reader
   ====================================================================================== */

#define FRAMES_READ_STRICT 1u        /* reject frames BAP's piqirun rejects */
#define FRAMES_READ_ANY_VERSION 2u   /* accept versions other than 1-3 (v2 layout) */
#define FRAMES_READ_IGNORE_MAGIC 4u  /* do not check the magic number */
#define FRAMES_READ_IGNORE_TOC 8u    /* never use the TOC; index by scanning */
#define FRAMES_READ_NO_MMAP 16u      /* path/fd: read the file into memory instead */
#define FRAMES_READ_NO_ZERO_HEADER 32u /* reject the all-zero header of unfinished 2014 v1
                                          traces (accepted by default, with a warning) */

typedef struct frames_reader_options {
    frames_limits limits;
    uint32_t flags;          /* FRAMES_READ_* */
    uint32_t index_stride;   /* frames per entry of an index built by scanning (default 256) */
    void *alloc_ctx;
} frames_reader_options;

FRAMES_DEF void frames_reader_options_default(frames_reader_options *o);

/* Undecoded frame: where it is and its payload. */
typedef struct frames_raw {
    uint64_t index;     /* frame index */
    uint64_t offset;    /* file offset of the 8-byte size prefix */
    frames_bytes payload;
} frames_raw;

/* Input for stream readers: read up to n bytes; return bytes read, 0 at end, <0 error.
   close (may be NULL) is called by frames_reader_close, also when opening fails. */
typedef struct frames_io {
    void *ctx;
    long long (*read)(void *ctx, void *buf, size_t n);
    void (*close)(void *ctx);
} frames_io;

typedef struct frames_reader frames_reader;
typedef struct frames_cursor frames_cursor;

/* Open functions return FRAMES_OK or a negative code (err filled; *r = NULL).
   Options may be NULL (defaults). They read and check the header and the meta frame;
   they do not scan the frames.
   - memory: the caller's buffer must outlive the reader; random access supported.
   - path:   mmap (or read into memory with FRAMES_READ_NO_MMAP / without POSIX);
             "-" reads standard input as a stream; FIFOs and character devices too.
   - fd:     a regular file is mapped, anything else (pipe, socket, tty) is streamed.
             The fd is not closed by frames_reader_close.
   - file:   stream from a FILE* (not closed by frames_reader_close).
   - io:     stream from a caller read callback.
   Stream readers only go forward: seek, count, index and cursors return
   FRAMES_E_UNSUPPORTED (frames_reader_info_get gives the count once the end is reached). */
FRAMES_DEF int frames_reader_open_memory(frames_reader **r, const void *data, size_t size,
                                         const frames_reader_options *o, frames_error *err);
FRAMES_DEF int frames_reader_open_path(frames_reader **r, const char *path,
                                       const frames_reader_options *o, frames_error *err);
#ifndef FRAMES_NO_POSIX
FRAMES_DEF int frames_reader_open_fd(frames_reader **r, int fd, const frames_reader_options *o,
                                     frames_error *err);
#endif
#ifndef FRAMES_NO_STDIO
FRAMES_DEF int frames_reader_open_file(frames_reader **r, FILE *f,
                                       const frames_reader_options *o, frames_error *err);
#endif
FRAMES_DEF int frames_reader_open_io(frames_reader **r, const frames_io *io,
                                     const frames_reader_options *o, frames_error *err);

/* Random-access input that is not in memory as a whole, e.g. a compressed trace
   (frames_zstd.h): the reader asks for byte ranges of the trace. Every cursor, and the
   reader's own position, gets a state of its own (state_open), so that cursors in
   several threads read in parallel without sharing buffers. view returns len bytes at
   off (off + len <= size), valid until the next view on that state, or NULL with err
   filled; `frame` is the index of the frame whose record starts at off when the reader
   knows it (FRAMES_NO_POS otherwise), for error messages. Frame payloads from such a
   reader are valid until the next call on the same reader or cursor (as for streams).
   close (may be NULL) is called by frames_reader_close, also when opening fails.
   view_end (optional, NULL: unknown) tells where the bytes the last view on state
   returned go on to (a trace offset >= its off + len, e.g. the end of a decompressed
   chunk): the reader then takes the records up to there straight from them, without a
   view per record. Zero the struct before filling it, so that members added later are
   NULL. */
typedef struct frames_source {
    void *ctx;
    uint64_t size;
    void *(*state_open)(void *ctx);
    void (*state_close)(void *ctx, void *state);
    const uint8_t *(*view)(void *state, uint64_t off, size_t len, uint64_t frame,
                           frames_error *err);
    void (*close)(void *ctx);
    uint64_t (*view_end)(void *state);
} frames_source;
FRAMES_DEF int frames_reader_open_source(frames_reader **r, const frames_source *src,
                                         const frames_reader_options *o, frames_error *err);
/* The source of a reader opened by frames_reader_open_source, else NULL. */
FRAMES_DEF const frames_source *frames_reader_source(const frames_reader *r);
FRAMES_DEF void frames_reader_close(frames_reader *r);

FRAMES_DEF const frames_header *frames_reader_header(const frames_reader *r);
/* The decoded meta frame, or NULL for version 1. Valid until close. */
FRAMES_DEF const frames_meta *frames_reader_meta(const frames_reader *r);
/* Raw bytes of the meta frame (empty for version 1). */
FRAMES_DEF frames_bytes frames_reader_meta_bytes(const frames_reader *r);

/* Next frame: returns 1 (frame decoded into *f), 0 (end of trace) or a negative code.
   A frame whose payload does not decode returns FRAMES_E_DECODE with its index and
   offset; the next call continues with the following frame. A truncated tail is not an
   error: the trace ends (0) and frames_reader_info_get reports the cut. */
FRAMES_DEF int frames_reader_next(frames_reader *r, frames_frame *f);
FRAMES_DEF int frames_reader_next_raw(frames_reader *r, frames_raw *raw);
/* Both at once: the decoded frame and where it came from (offset, size, payload). On
   FRAMES_E_DECODE *raw still describes the record that failed. */
FRAMES_DEF int frames_reader_next_full(frames_reader *r, frames_frame *f, frames_raw *raw);
/* Decode the record frames_reader_next_raw returned last, as frames_reader_next_full
   would have (the reader's decoder, limits, error record and counts): for loops that
   take records raw, look at most of them with frames_peek_std and decode the others. */
FRAMES_DEF int frames_reader_decode(frames_reader *r, const frames_raw *raw, frames_frame *f);
/* 1 when the record frames_reader_next_raw returned last is a std_frame laid out exactly
   as the codec's fast path takes it (what every writer emits): decoding it with
   frames_reader_decode would succeed with no FRAMES_FF_* flag, and encoding the result
   gives its bytes again, so it can be copied without decoding (counted as decoded). 0
   when only decoding it can tell: a check of the bytes, much cheaper than decoding. The
   reader keeps the layouts of records it took (544 KiB, allocated at the first call), so
   that most records, an instruction run again, are taken by one masked compare. */
FRAMES_DEF int frames_reader_raw_is_canonical(frames_reader *r, const frames_raw *raw);
/* Nonzero when r holds the whole trace in memory (a mapped file, or
   frames_reader_open_memory): the payloads it returns stay valid until it is closed, and
   consecutive records lie next to each other (each after its 8-byte size prefix). */
FRAMES_DEF int frames_reader_in_memory(const frames_reader *r);
/* The whole trace's bytes when r holds them in memory (frames_reader_in_memory; valid
   until r is closed), *size their count; else NULL and 0. Another reader can be opened
   over them (frames_reader_open_memory) to read the trace from a thread of its own
   without mapping it again. */
FRAMES_DEF const uint8_t *frames_reader_memory(const frames_reader *r, size_t *size);
/* Index of the frame the next call returns. */
FRAMES_DEF uint64_t frames_reader_tell(const frames_reader *r);
/* 1 when the trace ends inside a record (it is cut: frames_reader_info_get's
   `truncated`), else 0, without the scan _info_get may make: exact once a reading pass
   has returned 0 (the end) or anything scanned the trace (_count, _index, _info_get);
   0 before that. */
FRAMES_DEF int frames_reader_truncated(const frames_reader *r);
/* Position so that the next call returns frame `index` (FRAMES_E_RANGE past the end).
   Uses a validated TOC entry when there is one, else an index built by one scan. */
FRAMES_DEF int frames_reader_seek(frames_reader *r, uint64_t index);
/* Number of complete frames (scans unfinished or inconsistent traces once). */
FRAMES_DEF int frames_reader_count(frames_reader *r, uint64_t *n);
/* Build the index now (needed before using cursors from several threads). */
FRAMES_DEF int frames_reader_index(frames_reader *r);
/* Error of the last failing call on r (code 0 if none). */
FRAMES_DEF const frames_error *frames_reader_error(const frames_reader *r);

typedef struct frames_reader_info {
    frames_header header;
    int finished;             /* header has T != 0 */
    int random_access;        /* memory-backed reader */
    int toc;                  /* frames_toc found (valid conventions: see toc_matches) */
    uint32_t toc_matches;     /* bit (1u << frames_toc) for every convention that fits */
    uint64_t frames_per_toc;  /* m read at T (0 when none) */
    uint64_t toc_entries;     /* uint64 words present after m */
    int toc_used;             /* the TOC is used for random access */
    int count_known;          /* nframes below is exact */
    uint64_t nframes;         /* complete frames (exact when count_known) */
    uint64_t data_end;        /* offset just after the last complete frame (when known) */
    uint64_t file_size;       /* total bytes (memory-backed, or stream after the end) */
    int truncated;            /* the file ends inside a frame / a size word */
    uint64_t truncated_offset;/* where the incomplete record starts */
    uint64_t truncated_bytes; /* how many bytes of it are present */
    uint32_t nwarnings;       /* frames_reader_warning(r, i) for i < nwarnings */
    uint64_t frames_decoded;  /* frames decoded so far by frames_reader_next */
    uint32_t flags_seen;      /* OR of FRAMES_FF_* of those frames and of the meta */
    /* Acceptance by upstream readers: judged from the container and from flags_seen, so
       exact about frame contents only after every frame was read with _next. */
    int cxx_head_accepts;     /* libtrace C++ reader since 2025-07 (ceil TOC) */
    int cxx_legacy_accepts;   /* libtrace C++ reader before 2025-07 */
    int ocaml_accepts;        /* BAP's OCaml Frame_reader */
} frames_reader_info;

FRAMES_DEF int frames_reader_info_get(frames_reader *r, frames_reader_info *st);
FRAMES_DEF const char *frames_reader_warning(const frames_reader *r, uint32_t i);

/* Cursors: independent positions over a random-access reader, each with its own decoder,
   so that several threads can read one trace (call frames_reader_index first). */
FRAMES_DEF int frames_cursor_open(frames_cursor **c, frames_reader *r, uint64_t first,
                                  frames_error *err);
FRAMES_DEF int frames_cursor_next(frames_cursor *c, frames_frame *f);
FRAMES_DEF int frames_cursor_next_raw(frames_cursor *c, frames_raw *raw);
FRAMES_DEF uint64_t frames_cursor_tell(const frames_cursor *c);
FRAMES_DEF const frames_error *frames_cursor_error(const frames_cursor *c);
FRAMES_DEF void frames_cursor_close(frames_cursor *c);

/* ======================================================================================
   Writer
   ====================================================================================== */

/* Output. write appends (return 0 or negative); patch overwrites earlier bytes at an
   absolute offset (NULL when the sink cannot seek: the trace is then left unfinished, with
   n = 0 and T = 0, which this library, `frames fix` and BAP read); flush and close are
   optional. */
typedef struct frames_sink {
    void *ctx;
    int (*write)(void *ctx, const void *data, size_t len);
    int (*patch)(void *ctx, uint64_t offset, const void *data, size_t len);
    int (*flush)(void *ctx);
    int (*close)(void *ctx);
} frames_sink;

typedef struct frames_writer_options {
    uint32_t version;          /* 3 (default) or 2 */
    uint64_t arch;             /* default FRAMES_ARCH_I386 (libtrace's default) */
    uint64_t machine;          /* default FRAMES_MACH_I386 */
    uint64_t frames_per_toc;   /* m, default 10000 */
    int toc;                   /* FRAMES_TOC_LIBTRACE (default), _CEIL, _TRACEWRAP, _CEIL_ZERO */
    void *buffer;              /* caller buffer for whole frames (NULL: allocate); it must
                                  hold the 56-byte header and the meta frame. Frames larger
                                  than it are encoded in an allocated block */
    size_t buffer_size;        /* its size (0: 512 KiB) */
    uint64_t *toc_storage;     /* caller array for TOC offsets (NULL: allocate and grow) */
    size_t toc_capacity;       /* entries it holds; adding past it fails with E_NOMEM */
    unsigned encode_flags;     /* FRAMES_ENC_* */
    frames_bytes meta_raw;     /* when ptr is set: these bytes are the meta frame, written
                                  verbatim (copying a trace); the meta argument is ignored */
    void *alloc_ctx;
} frames_writer_options;

FRAMES_DEF void frames_writer_options_default(frames_writer_options *o);

/* Private fields; public so that embedders can place a writer in static storage. */
typedef struct frames_writer {
    frames_sink frames__sink;
    frames_writer_options frames__opt;
    uint8_t *frames__buf;
    size_t frames__bufcap, frames__buflen;
    int frames__bufowned;
    uint64_t *frames__toc;
    size_t frames__toccap, frames__toclen;
    int frames__tocowned;
    uint64_t frames__offset;    /* bytes handed to the sink + buffered */
    uint64_t frames__count;
    uint64_t frames__first;
    int frames__state;          /* 0 open, 1 finished, 2 failed */
    int frames__allocated;      /* the writer struct itself was allocated */
    frames_error frames__err;
    uint8_t frames__guess[3];   /* bytes of the previous plain frame's lengths (0: none) */
} frames_writer;

/* Initialise a writer in caller storage and write the header and meta (NULL meta: all
   required fields empty/zero). Nothing is allocated if buffer and toc_storage are given. */
FRAMES_DEF int frames_writer_init(frames_writer *w, const frames_sink *sink,
                                  const frames_writer_options *o, const frames_meta *meta,
                                  frames_error *err);
FRAMES_DEF int frames_writer_open(frames_writer **w, const frames_sink *sink,
                                  const frames_writer_options *o, const frames_meta *meta,
                                  frames_error *err);
/* Create/truncate path ("-" = standard output, not seekable). */
FRAMES_DEF int frames_writer_open_path(frames_writer **w, const char *path,
                                       const frames_writer_options *o,
                                       const frames_meta *meta, frames_error *err);
/* Growing memory a memory sink writes into (caller storage: init / free). */
typedef struct frames_membuf {
    uint8_t *data;       /* the bytes written (FRAMES_MALLOC'd; NULL before the first) */
    size_t size;         /* bytes written */
    size_t cap;          /* bytes allocated */
    size_t max;          /* writes that would grow it past max fail (0: no bound) */
    void *alloc_ctx;
} frames_membuf;

FRAMES_DEF void frames_membuf_init(frames_membuf *m, void *alloc_ctx);
FRAMES_DEF void frames_membuf_free(frames_membuf *m);   /* frees data; m can be reused */
/* A seekable sink that appends to m (patch rewrites bytes already written), so that a
   writer finishes its trace in memory: the counterpart of frames_reader_open_memory.
   Closing the writer leaves the bytes in m. */
FRAMES_DEF frames_sink frames_sink_memory(frames_membuf *m);

#ifndef FRAMES_NO_POSIX
/* Sink over an fd with write()/pwrite() only, so finishing is async-signal-safe when
   the writer uses caller buffers. The fd is not closed. patch is NULL for pipes. */
FRAMES_DEF frames_sink frames_sink_fd(int fd);
FRAMES_DEF int frames_writer_open_fd(frames_writer **w, int fd, const frames_writer_options *o,
                                     const frames_meta *meta, frames_error *err);
#endif
#ifndef FRAMES_NO_STDIO
FRAMES_DEF frames_sink frames_sink_file(FILE *f);
FRAMES_DEF int frames_writer_open_file(frames_writer **w, FILE *f,
                                       const frames_writer_options *o,
                                       const frames_meta *meta, frames_error *err);
#endif

/* Append a frame (encoded by the rules above). Whole frames are buffered and handed to
   the sink at frame boundaries. */
FRAMES_DEF int frames_writer_add(frames_writer *w, const frames_frame *f);
/* Append an already serialized `frame` message (not validated beyond its length). */
FRAMES_DEF int frames_writer_add_encoded(frames_writer *w, const void *payload, size_t len);
FRAMES_DEF int frames_writer_flush(frames_writer *w);
/* Write the TOC, patch n and T into the header, flush. Returns FRAMES_OK, or
   FRAMES_UNFINISHED when the sink cannot seek (all frames are written, no TOC). With
   zero frames the trace is valid and empty (T = F), unlike upstream, which aborts. */
FRAMES_DEF int frames_writer_finish(frames_writer *w);
/* Finish (if not yet finished), close the sink, free what the writer allocated. */
FRAMES_DEF int frames_writer_close(frames_writer *w);
/* Free without finishing (e.g. in a forked child): the output stays an unfinished trace. */
FRAMES_DEF void frames_writer_abandon(frames_writer *w);
FRAMES_DEF uint64_t frames_writer_count(const frames_writer *w);
FRAMES_DEF const frames_error *frames_writer_error(const frames_writer *w);

/* Writer options that reproduce the container of an input trace: its version (1 becomes
   3, the version every current reader takes), arch, machine, m (10000 when the input has
   no usable TOC), its raw meta bytes, and its TOC convention when that is one the writer
   can write (libtrace otherwise). The meta view points into r: keep r open meanwhile. */
FRAMES_DEF void frames_writer_options_like(frames_reader *r, frames_writer_options *o);
/* The same for a copy that reads r whole from its first frame with frames_reader_next_raw
   (frames cat), without the pass over the trace that frames_writer_options_like makes
   to check each TOC entry against the frames (a tenth of a copy's time): the entries are
   checked against the offsets the copy's own reading meets. After that reading, and
   before finishing the output, frames_writer_options_like_confirm returns 1 when *o was
   what frames_writer_options_like gives, 0 when not (an entry that does not point where
   its convention says, or the reading was not one pass over every frame in order):
   write the copy again with frames_writer_options_like(r) then. */
FRAMES_DEF void frames_writer_options_like_copy(frames_reader *r, frames_writer_options *o);
FRAMES_DEF int frames_writer_options_like_confirm(frames_reader *r, const frames_writer_options *o);

/* After a read error (not a frame that does not decode: a region that cannot be read,
   e.g. a corrupt chunk of a compressed trace), move r to the first TOC entry past the
   frame that failed whose frame reads, so that the frames after the damage can still be
   read. *lost: the frames skipped (to the end of the trace when it cannot resume, 0 when
   the count is unknown). Returns 1 when r can go on, 0 when it cannot (no usable TOC, or
   nothing after the damage reads). */
FRAMES_DEF int frames_reader_skip_damage(frames_reader *r, uint64_t *lost);

/* Repair: write every complete frame of r (from its current position, copied byte for
   byte, never re-encoded) into a finished trace on `sink`; o NULL means
   frames_writer_options_like(r). The incomplete tail of a truncated input is dropped and
   reported; frames that do not decode are kept as they are (counted in undecodable).
   Frames that cannot be read (a damaged region, e.g. a corrupt chunk of a compressed
   trace) are left out and reported in `damage`: the copy resumes at the next TOC entry
   that reads, so every readable frame is kept, and the output is still finished.
   Returns FRAMES_OK, FRAMES_UNFINISHED (sink cannot seek) or a negative code (writing
   failed). */
typedef struct frames_fix_report {
    uint64_t frames;             /* frames written */
    uint64_t undecodable;        /* of which do not decode (kept, byte for byte) */
    int was_finished;            /* the input header had n and T */
    int input_toc;               /* frames_toc of the input */
    uint64_t dropped_offset;     /* start of the dropped incomplete record (when dropped_bytes) */
    uint64_t dropped_bytes;      /* bytes of it that were present */
    uint64_t lost_frames;        /* frames that could not be read (left out); see damage */
    uint64_t lost_ranges;        /* runs of them */
    frames_error damage;         /* the first read error (code 0: the input read whole) */
} frames_fix_report;
FRAMES_DEF int frames_fix(frames_reader *r, const frames_sink *sink, const frames_writer_options *o,
                          frames_fix_report *rep, frames_error *err);

/* ======================================================================================
   Printing (protobuf text format as protoc --decode prints it; JSON)
   ====================================================================================== */
#ifndef FRAMES_NO_TEXT
/* Output callback: return 0, or nonzero to stop (the printer returns FRAMES_E_IO). */
typedef int (*frames_out_fn)(void *ctx, const char *s, size_t n);
FRAMES_DEF int frames_print_frame_pbtext(const frames_frame *f, int indent, frames_out_fn out,
                                         void *ctx);
FRAMES_DEF int frames_print_meta_pbtext(const frames_meta *m, int indent, frames_out_fn out,
                                        void *ctx);
/* One JSON object without a trailing newline; bytes as lowercase hex strings. */
FRAMES_DEF int frames_print_json_string(const void *data, size_t len, frames_out_fn out,
                                        void *ctx);
FRAMES_DEF int frames_print_frame_json(const frames_frame *f, frames_out_fn out, void *ctx);
FRAMES_DEF int frames_print_meta_json(const frames_meta *m, frames_out_fn out, void *ctx);
/* One JSON object per line ("\n"-terminated) for every operand of the frame: the pre and
   post lists of a std_frame and the values of a key_frame; nothing for other frames.
   Every row has the same members, for loading into column stores (docs/jsonl.md):
   {"frame":N,"pc":N|null,"tid":N|null,"list":"pre"|"post"|"key","kind":"reg"|"mem"|"none",
    "name":S|null,"address":N|null,"bits":N,"read":B,"written":B,"index":B,"base":B,
    "taint_id":N|null,"value":"hex","value_uint":N|null}
   value is the bytes as stored (lowercase hex); value_uint their little-endian integer
   when there are 1 to 8 of them. */
FRAMES_DEF int frames_print_operand_rows_jsonl(const frames_frame *f, uint64_t frame_index,
                                               frames_out_fn out, void *ctx);
#ifndef FRAMES_NO_STDIO
FRAMES_DEF int frames_out_file(void *file, const char *s, size_t n); /* ctx = FILE* */
#endif
#endif

/* ======================================================================================
   Recording API (DBI clients, emulators, in-process hooks, debuggers)
   ======================================================================================

   A recorder turns value records, in the style of VClinic's trace buffers, into frames:
   one recorder per thread, encoding whole frames into a buffer the caller supplies and
   handing the buffer to a flush callback when it is full. Nothing is allocated while
   recording.

       static uint8_t buf[1 << 16];
       frames_recorder rec;   // large (about 10 KiB): thread-local or heap, not a small stack
       frames_rec_init(&rec, buf, sizeof buf, my_flush, my_ctx, gettid());
       ...
       if (frames_rec_begin(&rec, pc, insn_bytes, insn_len) > 0) {      // 0: not sampled
           frames_rec_reg(&rec, FRAMES_VAL_GPR | FRAMES_VAL_READ | FRAMES_VAL_BEFORE,
                          "RAX", &rax, 8);
           frames_rec_mem(&rec, FRAMES_VAL_MEM | FRAMES_VAL_WRITE | FRAMES_VAL_BEFORE,
                          addr, old_bytes, 4);         // value about to be overwritten
           ... execute the instruction ...
           frames_rec_mem(&rec, FRAMES_VAL_MEM | FRAMES_VAL_WRITE | FRAMES_VAL_AFTER,
                          addr, new_bytes, 4);
       }
       frames_rec_end(&rec);          // encodes one std_frame (no-op if not sampled)
       ...
       frames_rec_finish(&rec);       // thread exit: flush what is buffered

   VALUE RECORDS. Each value has attributes (one bit of each group below, FRAMES_VAL_*),
   a register name or a memory address, and 1 to 64 value bytes (little-endian, as every
   frames writer stores them). They map onto the open instruction's std_frame so:

     position BEFORE  -> operand_pre_list   read = (READ set), written = false
     position AFTER   -> operand_post_list  read = false,      written = (WRITE set)
     kind MEM         -> mem_operand { address };  other kinds -> reg_operand { name }
     bit_length       =  8 * value size
     BASE / INDEX     -> operand_usage.base / .index (registers that formed an address)
     taint_info       =  no_taint: true

   So a value captured before it is overwritten (WRITE|BEFORE without READ) goes into
   the pre list with read = written = false, and BAP's reader emits no false read or write
   event for it; a read-modify-write operand is two records: READ|WRITE|BEFORE (pre, read)
   and WRITE|AFTER (post, written). Records keep their order within each list. The
   std_frame always has a post list (possibly empty, as tracewrap and bap-pintraces
   write), except for an instruction that never completed (frames_rec_finish while it
   was open, e.g. it crashed or called exit): that one is written without a post list.
   Element size (vector lanes) and float-ness have no field in the schema and are not
   written: they select values (filters) but are lost in the trace. Immediates are part of
   rawbytes; there is no immediate operand in the schema, hence no immediate kind here.

   FILTERS. frames_rec_filter takes up to FRAMES_REC_MAX_SELECTORS selector masks; a
   value is kept if it matches any selector. A selector matches when, for each group
   (kind, action, position, class), it has no bit of that group ("any") or shares a bit
   with the value. Values without a class bit count as INT. No selectors: keep all.
   frames_rec_wants tells a tracer whether a value would be kept before it pays for
   reading it. The FRAMES_SEL_* masks are the selections VClinic's clients use.

   SAMPLING. frames_rec_sampling(r, N, M): of every N + M instructions (counted by
   frames_rec_begin and frames_rec_skip on this recorder), record the first N and skip
   M; M = 0 records everything. frames_rec_begin returns 0 for a skipped instruction,
   and value records for it are ignored. Syscall, modload, exception and caller frames
   are never sampled out.

   THREADS. Use one recorder per thread (thread_id goes into every frame; change it with
   frames_rec_thread when one recorder serves several threads, as a debugger does). For
   one trace from several threads, point every recorder's flush at
   frames_rec_flush_to_writer with a shared frames_rec_shared: each flush appends the
   recorder's whole batch of frames to the writer under the caller's lock (a mutex or a
   spinlock; the library has no thread dependency). Within a thread frames keep their
   order; across threads they interleave by batch, like the QEMU TCG plugin's per-vCPU
   buffers, and every frame carries its thread id. When global order matters, flush a
   recorder whenever another thread's frames are about to be recorded (frames record does
   this at each thread switch), or use buffers that hold one frame.

   CRASH SAFETY. frames_writer_add_frames writes each batch straight to the sink (no
   writer-side buffering), and the header was written when the writer was opened. With
   an fd sink (frames_sink_fd / frames_writer_open_path) everything flushed is in the
   kernel: if the process is killed, the file is an unfinished trace (n = 0, T = 0) that
   ends on a frame boundary and that this library, `frames fix` and BAP read. A fatal
   signal handler can call frames_rec_crash_finish(rec_of_this_thread, shared): it writes
   the open instruction without a post list, flushes this thread's recorder and finishes
   the trace (TOC, header). It only uses write/pwrite, memcpy and the caller's lock, so it
   is async-signal-safe when the writer has an fd sink, was given toc_storage large
   enough (otherwise a TOC entry due in the last batch may call FRAMES_REALLOC) and the
   lock callbacks are async-signal-safe (a spinlock; pthread_mutex_lock is not listed by
   POSIX). Error paths format messages with vsnprintf (not listed either; glibc's does not
   allocate for these formats; under FRAMES_NO_STDIO the library's own formatter). If the crash happened inside this recorder's flush the
   writer is in an unknown state: the function returns FRAMES_E_STATE and the file stays
   an unfinished, readable trace. Frames other threads buffered since their last flush are
   lost: the handler cannot touch buffers that are still being written.
*/

/* Value attributes. Kind (exactly one): */
#define FRAMES_VAL_GPR 0x0001u     /* general-purpose register */
#define FRAMES_VAL_SIMD 0x0002u    /* vector / floating-point register (xmm, ymm, zmm, st) */
#define FRAMES_VAL_CTRL 0x0004u    /* flags, segment and control registers */
#define FRAMES_VAL_OREG 0x0008u    /* any other register */
#define FRAMES_VAL_PC 0x0010u      /* program counter */
#define FRAMES_VAL_MEM 0x0020u     /* memory */
#define FRAMES_VAL_KINDS 0x003fu
#define FRAMES_VAL_REGS (FRAMES_VAL_KINDS & ~FRAMES_VAL_MEM)
/* Action (any; neither = an informational value): */
#define FRAMES_VAL_READ 0x0100u
#define FRAMES_VAL_WRITE 0x0200u
#define FRAMES_VAL_ACTIONS 0x0300u
/* Position (exactly one): */
#define FRAMES_VAL_BEFORE 0x1000u  /* value before the instruction executes */
#define FRAMES_VAL_AFTER 0x2000u   /* value after it executed */
#define FRAMES_VAL_POSITIONS 0x3000u
/* Value class (at most one; none = INT): */
#define FRAMES_VAL_INT 0x10000u
#define FRAMES_VAL_FLOAT 0x20000u
#define FRAMES_VAL_CLASSES 0x30000u
/* Address roles (not a filter group; set operand_usage.base / .index): */
#define FRAMES_VAL_BASE 0x100000u
#define FRAMES_VAL_INDEX 0x200000u

/* Selections used in practice (selectors for frames_rec_filter). */
#define FRAMES_SEL_REG_READ (FRAMES_VAL_REGS | FRAMES_VAL_READ | FRAMES_VAL_BEFORE)
#define FRAMES_SEL_REG_WRITE (FRAMES_VAL_REGS | FRAMES_VAL_WRITE | FRAMES_VAL_AFTER)
#define FRAMES_SEL_REG_OLD (FRAMES_VAL_REGS | FRAMES_VAL_WRITE | FRAMES_VAL_BEFORE)
#define FRAMES_SEL_MEM_READ (FRAMES_VAL_MEM | FRAMES_VAL_READ | FRAMES_VAL_BEFORE)
#define FRAMES_SEL_MEM_WRITE (FRAMES_VAL_MEM | FRAMES_VAL_WRITE | FRAMES_VAL_AFTER)
#define FRAMES_SEL_MEM_OLD (FRAMES_VAL_MEM | FRAMES_VAL_WRITE | FRAMES_VAL_BEFORE)

/* Capacities of a recorder. FRAMES_REC_MAX_VALUES may be #defined (identically in every
   file that includes frames.h) to record larger instructions. */
#ifndef FRAMES_REC_MAX_VALUES
#define FRAMES_REC_MAX_VALUES 128    /* values per instruction (pre + post; xsave needs ~60) */
#endif
#define FRAMES_REC_MAX_VALUE_SIZE 64 /* bytes per value (a zmm register) */
#define FRAMES_REC_MAX_NAME 23       /* bytes per register name */
#define FRAMES_REC_MAX_RAWBYTES 32   /* instruction bytes */
#define FRAMES_REC_MAX_SELECTORS 8
#define FRAMES_REC_MIN_BUFFER 16384  /* a full std_frame and a long modload always fit */

/* Flush callback: `frames` holds `nframes` whole frames in container form (8-byte
   length, payload), `len` bytes. Return 0, or negative to report failure (the frames
   stay buffered and the error is returned by the recording call that flushed). */
typedef int (*frames_flush_fn)(void *ctx, const void *frames, size_t len, uint32_t nframes);

typedef struct frames_rec_stats {
    uint64_t instructions;  /* counted by frames_rec_begin / frames_rec_skip */
    uint64_t recorded;      /* std_frames written */
    uint64_t frames;        /* all frames written into the buffer */
    uint64_t values;        /* values kept */
    uint64_t filtered;      /* values dropped by the filter */
    uint64_t overflow;      /* values dropped: instruction already had FRAMES_REC_MAX_VALUES */
    uint64_t flushes;
    uint64_t bytes;         /* bytes handed to the flush callback */
} frames_rec_stats;

/* Bytes of one value as a list element (0a, length, operand_info): at most
   2 + 6 + FRAMES_REC_MAX_NAME + 6 + 16 + FRAMES_REC_MAX_VALUE_SIZE, fewer than 128. */
#define FRAMES__REC_ELEM 128
#define FRAMES__REC_LIST (FRAMES_REC_MAX_VALUES * FRAMES__REC_ELEM + 32)

/* A recorder. Fields are private except `stats` (read-only); the struct is public so that
   it can live in thread-local or static storage. */
typedef struct frames_recorder {
    frames_rec_stats stats;
    uint8_t *frames__buf;
    size_t frames__cap, frames__len;
    uint32_t frames__nframes;
    frames_flush_fn frames__flush;
    void *frames__flush_ctx;
    volatile int frames__in_flush;
    int frames__state;
    uint64_t frames__tid, frames__insn_tid;
    uint32_t frames__sel[FRAMES_REC_MAX_SELECTORS];
    uint32_t frames__nsel;
    uint64_t frames__on, frames__period, frames__phase;
    uint64_t frames__pc;
    uint8_t frames__raw[FRAMES_REC_MAX_RAWBYTES];
    uint32_t frames__rawlen;
    uint32_t frames__nval;     /* values of the open instruction */
    uint32_t frames__end[2];   /* where the pre [0] and post [1] lists end in frames__vals */
    /* values are encoded as list elements when recorded, the pre list at 0 and the post
       list at FRAMES__REC_LIST: the std_frame is then its header and two copies
       (byte-identical to frames_writer_add); the 32 spare bytes take a register name
       copied before the value is known to fit */
    uint8_t frames__vals[2 * FRAMES__REC_LIST];
    frames_error frames__err;
} frames_recorder;

/* Initialise in caller storage. buffer/size: where frames are encoded (size at least
   FRAMES_REC_MIN_BUFFER); flush: called with whole frames when the buffer is full and by
   frames_rec_flush / _finish. No allocation, ever. */
FRAMES_DEF int frames_rec_init(frames_recorder *r, void *buffer, size_t size,
                               frames_flush_fn flush, void *flush_ctx, uint64_t thread_id);
/* Thread id for the frames recorded from now on (an open instruction keeps its own). */
FRAMES_DEF void frames_rec_thread(frames_recorder *r, uint64_t thread_id);
/* Keep only values matching one of the selectors (n = 0: keep all). FRAMES_E_INVALID for
   more than FRAMES_REC_MAX_SELECTORS or unknown bits. */
FRAMES_DEF int frames_rec_filter(frames_recorder *r, const uint32_t *selectors, uint32_t n);
/* Record `record` instructions, skip `skip`, repeat (skip = 0: record all). Restarts the
   window at its first recorded instruction. */
FRAMES_DEF int frames_rec_sampling(frames_recorder *r, uint64_t record, uint64_t skip);
/* Would the next frames_rec_begin record its instruction? */
FRAMES_DEF int frames_rec_sampling_active(const frames_recorder *r);
/* Would a value with these attributes be kept in the open instruction? */
FRAMES_DEF int frames_rec_wants(const frames_recorder *r, uint32_t attr);

/* Open an instruction (address, raw bytes, up to FRAMES_REC_MAX_RAWBYTES). Returns 1 if
   it is recorded, 0 if the sampling window skips it, or a negative code. */
FRAMES_DEF int frames_rec_begin(frames_recorder *r, uint64_t pc, const void *bytes, size_t n);
/* Value records for the open instruction: 1 kept, 0 dropped (filter, or instruction not
   sampled), negative on error (FRAMES_E_LIMIT: too many values; FRAMES_E_INVALID: bad
   attributes, size 0 or above 64, name too long; FRAMES_E_STATE: no open instruction).
   The bytes are copied. */
FRAMES_DEF int frames_rec_reg(frames_recorder *r, uint32_t attr, const char *name,
                              const void *value, size_t size);
FRAMES_DEF int frames_rec_mem(frames_recorder *r, uint32_t attr, uint64_t address,
                              const void *value, size_t size);
/* PREPARED REGISTER VALUES. The element bytes of a register value other than the value
   itself (name, bit length, usage) are the same at every execution of an instruction:
   frames_rec_prepare encodes them once (0, or FRAMES_E_INVALID in *err, which may be
   NULL, for what frames_rec_reg would refuse), frames_rec_reg_prepared then records a
   value with them, as frames_rec_reg with the same attributes, name and size would (the
   same bytes, return values and filter), without encoding anything but the value. */
#define FRAMES__REC_HEAD 56 /* bytes of an element before its value: at most 50 */
typedef struct frames_rec_prep {
    uint32_t attr;
    uint8_t size, head;             /* value bytes; bytes of the element before it */
    uint8_t frames__pad[2];
    uint8_t bytes[FRAMES__REC_HEAD]; /* the element up to its value */
} frames_rec_prep;
FRAMES_DEF int frames_rec_prepare(frames_rec_prep *p, uint32_t attr, const char *name, size_t size,
                                  frames_error *err);
FRAMES_DEF int frames_rec_reg_prepared(frames_recorder *r, const frames_rec_prep *p, const void *value);
/* Close the open instruction and encode its std_frame (flushing when the buffer is full).
   Returns 1 if a frame was written, 0 for a skipped instruction, or a negative code. */
FRAMES_DEF int frames_rec_end(frames_recorder *r);
/* Drop the open instruction: it did not execute (e.g. a signal arrived first). It is not
   counted by the sampling clock. */
FRAMES_DEF void frames_rec_cancel(frames_recorder *r);
/* Count n instructions executed without being opened (advances the sampling window). */
FRAMES_DEF void frames_rec_skip(frames_recorder *r, uint64_t n);

/* Whole frames of other kinds, in order with the std_frames (an instruction may be
   open: they are written before it, e.g. the syscall frame of a syscall instruction). */
FRAMES_DEF int frames_rec_syscall(frames_recorder *r, uint64_t pc, uint64_t number,
                                  const int64_t *args, uint32_t nargs);
FRAMES_DEF int frames_rec_modload(frames_recorder *r, const char *name, uint64_t low,
                                  uint64_t high);
/* from / to: FRAMES_NO_POS leaves the field out. */
FRAMES_DEF int frames_rec_exception(frames_recorder *r, uint64_t number, uint64_t from_addr,
                                    uint64_t to_addr);
/* Any frame (validated as frames_writer_add does). */
FRAMES_DEF int frames_rec_frame(frames_recorder *r, const frames_frame *f);

/* Hand the buffered frames to the flush callback now (an open instruction stays open). */
FRAMES_DEF int frames_rec_flush(frames_recorder *r);
/* Thread exit: write an open instruction without a post list, then flush. */
FRAMES_DEF int frames_rec_finish(frames_recorder *r);
FRAMES_DEF const frames_error *frames_rec_error(const frames_recorder *r);

/* Append whole frames in container form (as a flush callback receives them) to a writer,
   straight to its sink. The batch is checked first; nothing is written if it is
   malformed. */
FRAMES_DEF int frames_writer_add_frames(frames_writer *w, const void *frames, size_t len);

/* Several recorders, one writer. lock/unlock may be NULL (single-threaded use). */
typedef struct frames_rec_shared {
    frames_writer *writer;
    void (*lock)(void *lock_ctx);
    void (*unlock)(void *lock_ctx);
    void *lock_ctx;
} frames_rec_shared;

/* A frames_flush_fn: ctx is a frames_rec_shared*. */
FRAMES_DEF int frames_rec_flush_to_writer(void *shared, const void *frames, size_t len,
                                          uint32_t nframes);
/* For a fatal signal handler (see CRASH SAFETY): finish `r` (may be NULL), then the
   shared writer. Returns the writer's finish result, or FRAMES_E_STATE if the crash
   happened inside r's flush. */
FRAMES_DEF int frames_rec_crash_finish(frames_recorder *r, frames_rec_shared *shared);

#ifdef __cplusplus
}
#endif
#endif /* FRAMES_H_INCLUDED */

/* ======================================================================================
   SHARED PRIVATE HELPERS

   The private code every header's implementation uses: allocator defaults, attributes,
   message formatting, the position-carrying fail, array growth, bounded text, the
   warning list, hashing and the hash table, little-endian loads and stores (and a
   value's integer, hex digits), varints, record shapes, sinks, ELF program headers.
   Compiled once per translation unit whatever *_IMPLEMENTATION macros it defines: the
   implementation of another header asks for them with
       #define FRAMES__WANT_HELPERS
       #include "frames.h"
   Everything here is static and private (frames__ / FRAMES__).
   ====================================================================================== */
#if (defined(FRAMES_IMPLEMENTATION) || defined(FRAMES__WANT_HELPERS)) &&                      \
    !defined(FRAMES__HELPERS_INCLUDED)
#define FRAMES__HELPERS_INCLUDED

#include <stdarg.h>
#include <stdlib.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#include <string.h>
#ifndef FRAMES_NO_STDIO
#include <errno.h>
#include <stdio.h>
#endif
#ifndef FRAMES_NO_POSIX
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#endif

#if defined(FRAMES_MALLOC) != defined(FRAMES_FREE) || defined(FRAMES_MALLOC) != defined(FRAMES_REALLOC)
#error "define FRAMES_MALLOC, FRAMES_REALLOC and FRAMES_FREE together, or none of them"
#endif
#ifndef FRAMES_MALLOC
#define FRAMES_MALLOC(sz, ctx) ((void)(ctx), malloc(sz))
#define FRAMES_REALLOC(p, sz, ctx) ((void)(ctx), realloc(p, sz))
#define FRAMES_FREE(p, ctx) ((void)(ctx), free(p))
#endif

#if defined(__GNUC__) || defined(__clang__)
#define FRAMES__LIKELY(x) __builtin_expect(!!(x), 1)
#define FRAMES__UNLIKELY(x) __builtin_expect(!!(x), 0)
#define FRAMES__PRINTF(a, b) __attribute__((format(printf, a, b)))
#define FRAMES__UNUSED __attribute__((unused))
#define FRAMES__INLINE static inline __attribute__((always_inline))
#if defined(__clang__) || __GNUC__ < 8
#define FRAMES__NOINLINE __attribute__((noinline))
#else /* gcc would still clone it per call site (constprop) and warn there */
#define FRAMES__NOINLINE __attribute__((noipa))
#endif
#else
#define FRAMES__NOINLINE
#define FRAMES__LIKELY(x) (x)
#define FRAMES__UNLIKELY(x) (x)
#define FRAMES__PRINTF(a, b)
#define FRAMES__UNUSED
#define FRAMES__INLINE static inline
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* --------------------------------------------------------------------------------------
   message formatting
   -------------------------------------------------------------------------------------- */

#ifdef FRAMES_NO_STDIO
static void frames__fmt_put(char *buf, size_t cap, size_t *n, char c) {
    if (*n + 1 < cap) buf[*n] = c;
    (*n)++;
}

static void frames__fmt_pad(char *buf, size_t cap, size_t *n, char c, size_t count) {
    while (count--) frames__fmt_put(buf, cap, n, c);
}

/* One conversion's argument as an unsigned magnitude (sign in *neg for d/i). */
static uint64_t frames__fmt_arg(va_list *ap, char conv, int lng, int *neg) {
    if (conv == 'd' || conv == 'i') {
        long long v = lng == 2 ? va_arg(*ap, long long) : lng == 1 ? va_arg(*ap, long)
                    : lng == 3 ? (long long)va_arg(*ap, ptrdiff_t) : va_arg(*ap, int);
        *neg = v < 0;
        return v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    }
    *neg = 0;
    if (conv == 'p') return (uint64_t)(uintptr_t)va_arg(*ap, void *);
    return lng == 2 ? va_arg(*ap, unsigned long long) : lng == 1 ? va_arg(*ap, unsigned long)
         : lng == 3 ? va_arg(*ap, size_t) : va_arg(*ap, unsigned);
}

/* The printf subset the library's messages use, without the C library: flags - and 0,
   width and precision (numbers or *), lengths hh h l ll z t j, conversions d i u x X o
   c s p %. Anything else is copied as it stands. */
static size_t frames__vfmt_own(char *buf, size_t cap, const char *fmt, va_list ap0) {
    va_list ap;
    size_t n = 0;
    va_copy(ap, ap0);
    for (; *fmt; fmt++) {
        char tmp[24];
        const char *s = tmp, *spec = fmt, *pre = "";
        size_t len = 0, width = 0, i;
        int prec = -1, left = 0, zero = 0, lng = 0, neg = 0, base = 10;
        uint64_t u;
        if (*fmt != '%') {
            frames__fmt_put(buf, cap, &n, *fmt);
            continue;
        }
        for (fmt++; *fmt == '-' || *fmt == '0' || *fmt == '+' || *fmt == ' ' || *fmt == '#'; fmt++)
            if (*fmt == '-') left = 1; else if (*fmt == '0') zero = 1;
        if (*fmt == '*') {
            int w = va_arg(ap, int);
            if (w < 0) left = 1;
            width = (size_t)(w < 0 ? -(long)w : w);
            fmt++;
        }
        while (*fmt >= '0' && *fmt <= '9') width = width * 10 + (size_t)(*fmt++ - '0');
        if (*fmt == '.') {
            prec = 0;
            if (*++fmt == '*') {
                prec = va_arg(ap, int);
                fmt++;
            }
            while (*fmt >= '0' && *fmt <= '9') prec = prec * 10 + (*fmt++ - '0');
        }
        for (; *fmt == 'h' || *fmt == 'l' || *fmt == 'z' || *fmt == 't' || *fmt == 'j'; fmt++)
            lng = *fmt == 'l' ? lng + 1 : *fmt == 'j' ? 2 : *fmt == 'h' ? 0 : 3;
        switch (*fmt) {
        case 's':
            s = va_arg(ap, const char *);
            if (!s) s = "(null)";
            while ((prec < 0 || len < (size_t)prec) && s[len]) len++;
            zero = 0;
            break;
        case 'c':
            tmp[0] = (char)va_arg(ap, int);
            len = 1;
            zero = 0;
            break;
        case 'd': case 'i': case 'u': case 'x': case 'X': case 'o': case 'p':
            if (*fmt == 'p') lng = 3;
            u = frames__fmt_arg(&ap, *fmt, lng, &neg);
            base = *fmt == 'o' ? 8 : (*fmt == 'x' || *fmt == 'X' || *fmt == 'p') ? 16 : 10;
            i = sizeof tmp;
            do {
                unsigned dgt = (unsigned)(u % (unsigned)base);
                tmp[--i] = (char)(dgt < 10 ? '0' + dgt : (*fmt == 'X' ? 'A' : 'a') + dgt - 10);
                u /= (unsigned)base;
            } while (u);
            while (prec >= 0 && sizeof tmp - i < (size_t)prec && i > 0) tmp[--i] = '0';
            s = tmp + i;
            len = sizeof tmp - i;
            pre = neg ? "-" : *fmt == 'p' ? "0x" : "";
            if (prec >= 0) zero = 0;
            break;
        case '%':
            frames__fmt_put(buf, cap, &n, '%');
            continue;
        default:   /* not in the subset: copy the directive */
            for (; spec <= fmt && *spec; spec++) frames__fmt_put(buf, cap, &n, *spec);
            if (!*fmt) fmt--;
            continue;
        }
        {
            size_t shown = len + strlen(pre);   /* sign or 0x, then digits or text */
            size_t pad = width > shown ? width - shown : 0;
            if (!left && !zero) frames__fmt_pad(buf, cap, &n, ' ', pad);
            for (; *pre; pre++) frames__fmt_put(buf, cap, &n, *pre);
            if (!left && zero) frames__fmt_pad(buf, cap, &n, '0', pad);
            for (i = 0; i < len; i++) frames__fmt_put(buf, cap, &n, s[i]);
            if (left) frames__fmt_pad(buf, cap, &n, ' ', pad);
        }
    }
    va_end(ap);
    if (cap) buf[n < cap ? n : cap - 1] = 0;
    return n;
}
#endif

/* vsnprintf's contract (the length the whole text needs; buf NUL-terminated when cap >
   0); without the C library's stdio, the subset above. */
static FRAMES__UNUSED size_t frames__vfmt(char *buf, size_t cap, const char *fmt, va_list ap) {
#ifndef FRAMES_NO_STDIO
    int n = vsnprintf(buf, cap, fmt, ap);
    if (n < 0) {
        if (cap) buf[0] = 0;
        return 0;
    }
    return (size_t)n;
#else
    return frames__vfmt_own(buf, cap, fmt, ap);
#endif
}

static FRAMES__UNUSED size_t frames__fmt(char *buf, size_t cap, const char *fmt, ...) FRAMES__PRINTF(3, 4);
static FRAMES__UNUSED size_t frames__fmt(char *buf, size_t cap, const char *fmt, ...) {
    va_list ap;
    size_t n;
    va_start(ap, fmt);
    n = frames__vfmt(buf, cap, fmt, ap);
    va_end(ap);
    return n;
}

/* --------------------------------------------------------------------------------------
   errors
   -------------------------------------------------------------------------------------- */

/* The system's reason for the last failed call (errno), for messages. */
static FRAMES__UNUSED const char *frames__syserr(void) {
#ifndef FRAMES_NO_STDIO
    return strerror(errno);
#else
    return "the output reported an error";
#endif
}

/* Fill *err (when given) and return code. FRAMES__FAIL_POS appends the position that is
   known (frame, offset) to the message; without it the message says where itself (query
   text columns) and the position is only in the fields. */
enum { FRAMES__FAIL_PLAIN = 0, FRAMES__FAIL_POS = 1 };
static FRAMES__UNUSED int frames__vfail(frames_error *err, int code, uint64_t offset, uint64_t frame,
                                        int how, const char *fmt, va_list ap) {
    size_t n;
    if (!err) return code;
    err->code = code;
    err->offset = offset;
    err->frame = frame;
    n = frames__vfmt(err->message, sizeof err->message, fmt, ap);
    if (how != FRAMES__FAIL_POS || n >= sizeof err->message) return code;
    if (frame != FRAMES_NO_POS && n < sizeof err->message)
        n += frames__fmt(err->message + n, sizeof err->message - n, " (frame %llu",
                         (unsigned long long)frame);
    if (offset != FRAMES_NO_POS && n < sizeof err->message)
        n += frames__fmt(err->message + n, sizeof err->message - n, "%s offset 0x%llx",
                         frame != FRAMES_NO_POS ? "," : " (at", (unsigned long long)offset);
    if ((frame != FRAMES_NO_POS || offset != FRAMES_NO_POS) && n + 1 < sizeof err->message) {
        err->message[n] = ')';
        err->message[n + 1] = 0;
    }
    return code;
}

/* The library's one way to fail: fill *err (when given; the message ends with the
   position) and return code. */
static FRAMES__UNUSED int frames__fail(frames_error *err, int code, uint64_t offset, uint64_t frame,
                                       const char *fmt, ...) FRAMES__PRINTF(5, 6);
static FRAMES__UNUSED int frames__fail(frames_error *err, int code, uint64_t offset, uint64_t frame,
                                       const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    frames__vfail(err, code, offset, frame, FRAMES__FAIL_POS, fmt, ap);
    va_end(ap);
    return code;
}

static FRAMES__UNUSED void frames__clear_error(frames_error *err) {
    if (!err) return;
    err->code = 0;
    err->offset = FRAMES_NO_POS;
    err->frame = FRAMES_NO_POS;
    err->message[0] = 0;
}

/* --------------------------------------------------------------------------------------
   memory
   -------------------------------------------------------------------------------------- */

/* Does a frame of n payload bytes, behind its 8-byte size prefix, fit in `room` free
   bytes? Both parts must: with 8 or fewer bytes left the payload room is 0, and an empty
   frame (0 bytes) would pass a payload-only check while its prefix overflows. */
static FRAMES__UNUSED int frames__frame_fits(size_t room, size_t n) {
    return room >= 8 && n <= room - 8;
}

/* Make room for `need` elements of `size` bytes in *arr (capacity *cap, doubled from 16):
   0, or -1 when out of memory or the size overflows (*arr and *cap unchanged). */
static FRAMES__UNUSED int frames__grow(void **arr, size_t *cap, size_t need, size_t size,
                                       void *actx) {
    size_t ncap;
    void *p;
    if (need <= *cap) return 0;
    ncap = *cap ? *cap : 16;
    while (ncap < need) {
        if (ncap > ((size_t)-1) / 2 / size) return -1;
        ncap *= 2;
    }
    p = FRAMES_REALLOC(*arr, ncap * size, actx);
    if (!p) return -1;
    *arr = p;
    *cap = ncap;
    return 0;
}
/* A NUL-terminated copy of the n bytes at p, or NULL (out of memory). */
static FRAMES__UNUSED char *frames__strndup(const char *p, size_t n, void *actx) {
    char *c = (char *)FRAMES_MALLOC(n + 1, actx);
    if (!c) return NULL;
    memcpy(c, p, n);
    c[n] = 0;
    return c;
}

/* A copy of the string s (NULL for NULL, or out of memory). */
static FRAMES__UNUSED char *frames__strdup(const char *s, void *actx) {
    return s ? frames__strndup(s, strlen(s), actx) : NULL;
}

/* size bytes of zeroes from FRAMES_MALLOC (calloc's work for one object), or NULL. */
static FRAMES__UNUSED void *frames__zalloc(size_t size, void *actx) {
    void *p = FRAMES_MALLOC(size, actx);
    if (p) memset(p, 0, size);
    return p;
}

/* FRAMES__GROW(arr, cap, need, actx): frames__grow for a typed array; 0 or -1. */
#define FRAMES__GROW(arr, cap, need, actx)                                                   \
    frames__grow((void **)&(arr), &(cap), (need), sizeof *(arr), (actx))

/* --------------------------------------------------------------------------------------
   bounded text
   -------------------------------------------------------------------------------------- */

/* Text appended to a caller's buffer of cap bytes: what does not fit is dropped but
   counted, so that len is what the whole text needs (snprintf's contract, which
   frames__text_end completes). */
typedef struct frames__text {
    char *buf;
    size_t cap, len;
} frames__text;

static FRAMES__UNUSED void frames__text_put(frames__text *t, const char *p, size_t n) {
    if (t->len < t->cap) {
        size_t room = t->cap - t->len;
        memcpy(t->buf + t->len, p, n < room ? n : room);
    }
    t->len += n;
}

static FRAMES__UNUSED void frames__text_puts(frames__text *t, const char *p) {
    frames__text_put(t, p, strlen(p));
}

/* The decimal digits of v, ending at end (at most 20 before it); where they start. */
static FRAMES__UNUSED char *frames__u64_digits(uint64_t v, char *end) {
    static const char pairs[] = "0001020304050607080910111213141516171819202122232425262728293031323334353637"
                                "3839404142434445464748495051525354555657585960616263646566676869707172737475"
                                "767778798081828384858687888990919293949596979899";
    while (v >= 100) {   /* two digits per division */
        unsigned d = (unsigned)(v % 100) * 2;
        v /= 100;
        *--end = pairs[d + 1];
        *--end = pairs[d];
    }
    if (v >= 10) {
        *--end = pairs[v * 2 + 1];
        *--end = pairs[v * 2];
    } else *--end = (char)('0' + v);
    return end;
}

static FRAMES__UNUSED void frames__text_u64(frames__text *t, uint64_t v) {
    char tmp[24], *b = frames__u64_digits(v, tmp + 24);
    frames__text_put(t, b, (size_t)(tmp + 24 - b));
}

/* "0x" and v in lowercase hex without leading zeros (as printf's "0x%llx") into dst (at
   least 19 bytes, not terminated); returns the length. */
static FRAMES__UNUSED size_t frames__hex_u64(char *dst, uint64_t v) {
    static const char digits[] = "0123456789abcdef";
    char tmp[16];
    size_t n = 0, i;
    do {
        tmp[n++] = digits[v & 15];
        v >>= 4;
    } while (v);
    dst[0] = '0';
    dst[1] = 'x';
    for (i = 0; i < n; i++) dst[2 + i] = tmp[n - 1 - i];
    return n + 2;
}

/* 0x and the lowercase hex digits of v (as printf's "0x%llx"). */
static FRAMES__UNUSED void frames__text_hex(frames__text *t, uint64_t v) {
    char tmp[18];
    frames__text_put(t, tmp, frames__hex_u64(tmp, v));
}

/* NUL-terminate what fits of the text; the length the whole text needs. */
static FRAMES__UNUSED size_t frames__text_end(frames__text *t) {
    if (t->cap) t->buf[t->len < t->cap ? t->len : t->cap - 1] = 0;
    return t->len;
}

/* --------------------------------------------------------------------------------------
   warning lists
   -------------------------------------------------------------------------------------- */

/* The library's one warning list: at most max messages of size bytes each, in the
   caller's char[max][size] (list is its first row), *n of them used. The message goes
   into row *n when there is one: 1. When the list is full nothing is written: 0, and
   the caller does what its API promises of a full list (drop the message, count it, or
   say in the last row that more were omitted). FRAMES__WARN_ADD takes the array. */
static FRAMES__UNUSED int frames__warn_add(char *list, uint32_t max, size_t size, uint32_t *n,
                                           const char *fmt, va_list ap) {
    if (*n >= max) return 0;
    frames__vfmt(list + (size_t)*n * size, size, fmt, ap);
    (*n)++;
    return 1;
}

#define FRAMES__WARN_ADD(rows, n, fmt, ap)                                                    \
    frames__warn_add((rows)[0], (uint32_t)(sizeof(rows) / sizeof((rows)[0])), sizeof((rows)[0]), \
                     &(n), (fmt), (ap))

/* --------------------------------------------------------------------------------------
   hashing
   -------------------------------------------------------------------------------------- */

/* A 64-bit key mixed so that every input bit reaches every output bit (the finaliser
   of MurmurHash3): hash tables over addresses take its low bits. */
static FRAMES__UNUSED uint64_t frames__mix64(uint64_t k) {
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    k *= 0xc4ceb9fe1a85ec53ull;
    k ^= k >> 33;
    return k;
}

/* FNV-1a's offset basis: the h of frames__hash_bytes for a hash that starts here. */
#define FRAMES__HASH_SEED 0xcbf29ce484222325ull

/* FNV-1a over n bytes, going on from h (FRAMES__HASH_SEED, or the hash of the bytes
   before them): byte strings as keys, and content fingerprints. Its low bits are not
   mixed well for short keys: a hash table takes frames__mix64 of it. */
static FRAMES__UNUSED uint64_t frames__hash_bytes(uint64_t h, const void *data, size_t n) {
    const unsigned char *p = (const unsigned char *)data;
    size_t i;
    for (i = 0; i < n; i++) h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

/* --------------------------------------------------------------------------------------
   hash tables
   -------------------------------------------------------------------------------------- */

/* The library's one hash table: the caller's slots by open addressing (linear probing,
   no tombstones: an erase moves the later members of its run back). A slot is a struct
   of the caller's that starts with `uint64_t hash`, the table's: 0 in an empty slot,
   else the hash the slot was added with, its top bit set. Growth and erase thus need
   nothing of the caller, and a lookup compares keys only where the whole hash matched.
   The hash must be mixed (frames__mix64 for an integer key): a slot's home is its low
   bits. The table holds at most max slots, the caller's bound whatever the input says,
   and is at most half full (an absent key's probe ends within a few slots): it grows by
   doubling to at most 4 * max slots.
       size_t at = 0;
       while ((s = FRAMES__HTAB_NEXT(&t, my_slot, h, &at)) && s->key != key) {}
       if (!s && !(s = (my_slot *)frames__htab_add(&t, h, actx))) ...full or no memory
 */
typedef struct frames__htab {
    unsigned char *slots;
    size_t size;             /* bytes of one slot */
    size_t cap, len, max;    /* cap: 0 or a power of two, at least 2 * len */
} frames__htab;

#define FRAMES__HTAB_USED ((uint64_t)1 << 63)
#define FRAMES__HTAB_MIN 64u

/* An empty table of slots of size bytes (a struct that starts with uint64_t hash) that
   will hold at most max of them; it allocates on its first add. */
static FRAMES__UNUSED void frames__htab_init(frames__htab *t, size_t size, size_t max) {
    t->slots = NULL;
    t->size = size;
    t->cap = t->len = 0;
    t->max = max;
}

/* FRAMES__HTAB_INIT(t, slot_type, max): frames__htab_init for slots of that type. */
#define FRAMES__HTAB_INIT(t, slot_type, max) frames__htab_init((t), sizeof(slot_type), (max))

FRAMES__INLINE uint64_t frames__htab_tag(const unsigned char *slot) {
    uint64_t h;
    memcpy(&h, slot, sizeof h);
    return h;
}

/* The slots added with hash, one a call in probe order (*at = 0 before the first
   call); NULL when there are no more. size is t->size (a constant when the caller
   knows it: FRAMES__HTAB_NEXT). */
FRAMES__INLINE void *frames__htab_probe(const frames__htab *t, size_t size, uint64_t hash, size_t *at) {
    uint64_t tag = hash | FRAMES__HTAB_USED, h;
    size_t i;
    if (!t->cap) return NULL;
    for (i = (size_t)hash + *at;; i++) {
        unsigned char *s = t->slots + (i & (t->cap - 1)) * size;
        if (!(h = frames__htab_tag(s))) return NULL;
        if (h == tag) {
            *at = i + 1 - (size_t)hash;
            return s;
        }
    }
}

FRAMES__INLINE void *frames__htab_next(const frames__htab *t, uint64_t hash, size_t *at) {
    return frames__htab_probe(t, t->size, hash, at);
}

/* FRAMES__HTAB_NEXT(t, slot_type, hash, at): frames__htab_next for slots of that type. */
#define FRAMES__HTAB_NEXT(t, slot_type, hash, at)                                           \
    ((slot_type *)frames__htab_probe((t), sizeof(slot_type), (hash), (at)))

/* The first empty slot of hash's run in slots[cap] (never full: at most half is used). */
FRAMES__INLINE unsigned char *frames__htab_free_slot(unsigned char *slots, size_t cap, size_t size,
                                                     uint64_t hash) {
    size_t i = (size_t)hash & (cap - 1);
    while (frames__htab_tag(slots + i * size)) i = (i + 1) & (cap - 1);
    return slots + i * size;
}

/* Twice the slots (FRAMES__HTAB_MIN at first); -1 when out of memory. */
static FRAMES__UNUSED int frames__htab_grow(frames__htab *t, void *actx) {
    size_t ncap = t->cap ? t->cap * 2 : FRAMES__HTAB_MIN, i;
    unsigned char *ns;
    if (ncap < t->cap || ncap > ((size_t)-1) / t->size) return -1;
    ns = (unsigned char *)FRAMES_MALLOC(ncap * t->size, actx);
    if (!ns) return -1;
    memset(ns, 0, ncap * t->size);
    for (i = 0; i < t->cap; i++) {
        const unsigned char *s = t->slots + i * t->size;
        uint64_t h = frames__htab_tag(s);
        if (h) memcpy(frames__htab_free_slot(ns, ncap, t->size, h), s, t->size);
    }
    if (t->slots) FRAMES_FREE(t->slots, actx);
    t->slots = ns;
    t->cap = ncap;
    return 0;
}

/* A new slot for hash (the caller found none with its key), zeroed but for the hash.
   NULL when the table holds max slots already (t->len == t->max) or memory is out. Not
   inlined: a lookup that finds its key then needs no registers saved for this. */
static FRAMES__NOINLINE FRAMES__UNUSED void *frames__htab_add(frames__htab *t, uint64_t hash, void *actx) {
    unsigned char *s;
    if (t->len >= t->max) return NULL;
    if ((t->len + 1) * 2 > t->cap && frames__htab_grow(t, actx) < 0) return NULL;
    s = frames__htab_free_slot(t->slots, t->cap, t->size, hash);
    memset(s, 0, t->size);
    hash |= FRAMES__HTAB_USED;
    memcpy(s, &hash, sizeof hash);
    t->len++;
    return s;
}

/* Slot i of the table (i < t->cap) if it is used, else NULL: a walk over every slot. */
static FRAMES__UNUSED void *frames__htab_at(const frames__htab *t, size_t i) {
    unsigned char *s = t->slots + i * t->size;
    return frames__htab_tag(s) ? s : NULL;
}

/* Remove a slot that frames__htab_next or _add returned, moving the later members of
   its run back so that every probe still finds them. */
static FRAMES__UNUSED void frames__htab_erase(frames__htab *t, void *slot) {
    size_t mask = t->cap - 1, i = (size_t)((unsigned char *)slot - t->slots) / t->size, j = i;
    for (;;) {
        unsigned char *sj;
        size_t home;
        uint64_t h;
        j = (j + 1) & mask;
        sj = t->slots + j * t->size;
        if (!(h = frames__htab_tag(sj))) break;
        home = (size_t)h & mask;
        /* j moves into the hole at i unless its home lies cyclically in (i, j] */
        if (i <= j ? (home <= i || home > j) : (home <= i && home > j)) {
            memcpy(t->slots + i * t->size, sj, t->size);
            i = j;
        }
    }
    memset(t->slots + i * t->size, 0, t->size);
    t->len--;
}

/* Every slot emptied, the memory kept. */
static FRAMES__UNUSED void frames__htab_clear(frames__htab *t) {
    if (t->slots) memset(t->slots, 0, t->cap * t->size);
    t->len = 0;
}

static FRAMES__UNUSED void frames__htab_free(frames__htab *t, void *actx) {
    if (t->slots) FRAMES_FREE(t->slots, actx);
    t->slots = NULL;
    t->cap = t->len = 0;
}

/* --------------------------------------------------------------------------------------
   little-endian words
   -------------------------------------------------------------------------------------- */

/* One load or store where the host is little-endian (the codec's hot paths read and
   write operands a word at a time; the trace-db walks do little else), bytes elsewhere. */
#if (defined(__BYTE_ORDER__) && defined(__ORDER_LITTLE_ENDIAN__) &&                        \
     __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__) ||                                          \
    defined(_M_X64) || defined(_M_IX86) || defined(_M_ARM64)
#define FRAMES__LITTLE_ENDIAN 1
#endif

FRAMES__INLINE uint16_t frames__le16(const uint8_t *p) { return (uint16_t)(p[0] | (p[1] << 8)); }

FRAMES__INLINE uint32_t frames__le32(const uint8_t *p) {
#ifdef FRAMES__LITTLE_ENDIAN
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
#else
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
#endif
}

FRAMES__INLINE uint64_t frames__le64(const uint8_t *p) {
#ifdef FRAMES__LITTLE_ENDIAN
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
#else
    return (uint64_t)frames__le32(p) | (uint64_t)frames__le32(p + 4) << 32;
#endif
}

FRAMES__INLINE void frames__put_le32(uint8_t *p, uint32_t v) {
#ifdef FRAMES__LITTLE_ENDIAN
    memcpy(p, &v, 4);
#else
    int i;
    for (i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
#endif
}

FRAMES__INLINE void frames__put_le64(uint8_t *p, uint64_t v) {
#ifdef FRAMES__LITTLE_ENDIAN
    memcpy(p, &v, 8);
#else
    int i;
    for (i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
#endif
}

/* The little-endian integer of a value's first bytes (at most 8): an operand's value as a
   number (JSON and Parquet value_uint, Tenet registers). */
static FRAMES__UNUSED uint64_t frames__value_u64(const uint8_t *p, size_t n) {
    uint64_t v = 0;
    size_t i;
    if (n >= 8) return frames__le64(p);
    for (i = 0; i < n; i++) v |= (uint64_t)p[i] << (8 * i);
    return v;
}

/* --------------------------------------------------------------------------------------
   varints
   -------------------------------------------------------------------------------------- */

/* The protobuf encoding's varints: for the decoder, and for readers of records' bytes. */
#if defined(__GNUC__) || defined(__clang__)
#define frames__ctz64(v) ((unsigned)__builtin_ctzll(v))
#else
static unsigned frames__ctz64(uint64_t v) {   /* v != 0 */
    unsigned n = 0;
    for (; !(v & 1); v >>= 1) n++;
    return n;
}
#endif

/* Minimal varint of at most 8 bytes at p, where the 8 bytes p[0..7] may be read (the
   caller has checked that): the position after it, or NULL for anything else (longer, or
   not minimal). One load; the 7-bit groups are gathered by masks and shifts rather than
   a loop over the bytes. */
FRAMES__INLINE const uint8_t *frames__varint8(const uint8_t *p, uint64_t *v) {
    uint64_t w = frames__le64(p), stops = ~w & 0x8080808080808080ull;
    unsigned bits;
    if (FRAMES__LIKELY(!(w & 0x80))) {
        *v = w & 0x7f;
        return p + 1;
    }
    if (!(w & 0x8000)) {   /* two bytes (a bit length of 64 is one of these) */
        if (!(w & 0x7f00)) return NULL;
        *v = (w & 0x7f) | (w >> 1 & 0x3f80);
        return p + 2;
    }
    if (!stops) return NULL;
    bits = frames__ctz64(stops) + 1;             /* 8 * the length */
    if (!((w >> (bits - 8)) & 0x7f)) return NULL; /* a last byte of 0: not minimal */
    w &= (~0ull >> (64 - bits)) & 0x7f7f7f7f7f7f7f7full;
    w = (w & 0x007f007f007f007full) | (w & 0x7f007f007f007f00ull) >> 1;
    w = (w & 0x00003fff00003fffull) | (w & 0x3fff00003fff0000ull) >> 2;
    *v = (w & 0x000000000fffffffull) | (w & 0x0fffffff00000000ull) >> 4;
    return p + bits / 8;
}

/* Minimal varint of at most 10 bytes (10th byte 0 or 1) in [p, end): position after it,
   or NULL. */
FRAMES__INLINE const uint8_t *frames__fast_varint(const uint8_t *p, const uint8_t *end,
                                                  uint64_t *v) {
    uint64_t r = 0;
    int shift;
    const uint8_t *q;
    if (FRAMES__LIKELY(p < end && *p < 0x80)) {
        *v = *p;
        return p + 1;
    }
    if (end - p >= 8 && (q = frames__varint8(p, v)) != NULL) return q;
    for (shift = 0; p < end && shift <= 63; shift += 7) {
        uint8_t b = *p++;
        r |= (uint64_t)(b & 0x7f) << shift;
        if (b < 0x80) {
            if (b == 0 || (shift == 63 && b > 1)) return NULL;
            *v = r;
            return p;
        }
    }
    return NULL;
}

/* A minimal varint of exactly n bytes (1 to 10) at q, as frames__fast_varint takes one:
   1 and its value, or 0. */
FRAMES__INLINE int frames__varint_of_len(const uint8_t *q, unsigned n, uint64_t *v) {
    uint64_t a = 0;
    unsigned j;
    for (j = 0; j + 1 < n; j++) {
        if (!(q[j] & 0x80)) return 0;
        a |= (uint64_t)(q[j] & 0x7F) << (7 * j);
    }
    if (q[j] & 0x80 || (j > 0 && q[j] == 0) || (j == 9 && q[j] > 1)) return 0;
    *v = a | (uint64_t)q[j] << (7 * j);
    return 1;
}

/* --------------------------------------------------------------------------------------
   record shapes
   An instruction that runs again is recorded in the same bytes but for its values and
   memory addresses. Readers that take records apart keep what they learned of one with
   its bytes and a mask (0 over the bytes that may vary), in a direct-mapped table by a
   hash of its length and first 16 bytes, and take a later record that equals it under
   the mask as they took the first: frames_reader_raw_is_canonical and the index build's
   templates (frames_replay.h).
   -------------------------------------------------------------------------------------- */

#define FRAMES__SHAPE_MIN 16u   /* shorter records are not kept */

/* The slot of the record [p, p + len) (len >= FRAMES__SHAPE_MIN) in a table of 2^log2. */
FRAMES__INLINE size_t frames__shape_slot(const uint8_t *p, size_t len, unsigned log2) {
    uint64_t h = (frames__le64(p) ^ frames__le64(p + 8) ^ (uint64_t)len) * 0x9E3779B97F4A7C15ull;
    return (size_t)(h >> (64 - log2));
}

/* Do the len bytes at p (len >= 8) equal bytes wherever mask is not 0? 16 bytes at a time
   with SSE2 (x86-64 has it always: 8.3 against 13 ns per record of frames cat's check),
   else a word at a time; the last block overlaps the one before it rather than being
   compared byte by byte. */
FRAMES__INLINE int frames__masked_equal(const uint8_t *p, const uint8_t *bytes, const uint8_t *mask,
                                        size_t len) {
    uint64_t diff = 0;
    size_t i;
#if defined(__SSE2__)
    if (len >= 16) {
        __m128i d = _mm_setzero_si128();
        for (i = 0; i + 16 <= len; i += 16)
            d = _mm_or_si128(d, _mm_and_si128(_mm_xor_si128(_mm_loadu_si128((const __m128i *)(const void *)(p + i)),
                                                             _mm_loadu_si128((const __m128i *)(const void *)(bytes + i))),
                                              _mm_loadu_si128((const __m128i *)(const void *)(mask + i))));
        i = len - 16;
        d = _mm_or_si128(d, _mm_and_si128(_mm_xor_si128(_mm_loadu_si128((const __m128i *)(const void *)(p + i)),
                                                         _mm_loadu_si128((const __m128i *)(const void *)(bytes + i))),
                                          _mm_loadu_si128((const __m128i *)(const void *)(mask + i))));
        return _mm_movemask_epi8(_mm_cmpeq_epi8(d, _mm_setzero_si128())) == 0xFFFF;
    }
#endif
    for (i = 0; i + 8 <= len; i += 8)
        diff |= (frames__le64(p + i) ^ frames__le64(bytes + i)) & frames__le64(mask + i);
    i = len - 8;
    diff |= (frames__le64(p + i) ^ frames__le64(bytes + i)) & frames__le64(mask + i);
    return diff == 0;
}

/* --------------------------------------------------------------------------------------
   sinks
   -------------------------------------------------------------------------------------- */

/* A frames_sink of these functions (NULL: the sink cannot do that). */
static FRAMES__UNUSED frames_sink frames__sink_of(void *ctx, int (*write)(void *, const void *, size_t),
                                                  int (*patch)(void *, uint64_t, const void *, size_t),
                                                  int (*flush)(void *), int (*close_fn)(void *)) {
    frames_sink s = {ctx, write, patch, flush, close_fn};
    return s;
}

/* --------------------------------------------------------------------------------------
   ELF program headers
   -------------------------------------------------------------------------------------- */

/* One program header (frames_sym.h matches mappings and finds notes by them, frames_pt.h
   loads the PT_LOAD segments of an --elf file). */
typedef struct frames__elf_seg {
    uint64_t vaddr, memsz, filesz, offset;
    uint32_t type, flags;
} frames__elf_seg;

#define FRAMES__ELF_PT_LOAD 1u

/* An unsigned field of `width` (1, 2, 4 or 8) bytes at p, big-endian when be. */
static FRAMES__UNUSED uint64_t frames__elf_rd(const uint8_t *p, unsigned width, int be) {
    uint64_t v = 0;
    unsigned i;
    if (!be)
        return width == 8 ? frames__le64(p) : width == 4 ? frames__le32(p) : width == 2 ? frames__le16(p) : p[0];
    for (i = 0; i < width; i++) v = (v << 8) | p[i];
    return v;
}

/* Field of a 32- or 64-bit ELF structure at p: (offset, width) for each class; eh is the
   ELF header (its class and byte order). */
#define FRAMES__ELF_F(eh, p, o32, w32, o64, w64)                                               \
    ((eh)[4] == 2 ? frames__elf_rd((p) + (o64), w64, (eh)[5] == 2) : frames__elf_rd((p) + (o32), w32, (eh)[5] == 2))

/* Where the program headers are, from the ELF header eh (identification checked by the
   caller: class 1 or 2, byte order 1 or 2, 52 or 64 bytes by class): num entries of
   entsize bytes at file offset off. FRAMES_E_FORMAT if entries are too small. */
static FRAMES__UNUSED int frames__elf_phdr_table(const uint8_t *eh, uint64_t *off, uint32_t *num,
                                                 uint32_t *entsize, frames_error *err) {
    *off = FRAMES__ELF_F(eh, eh, 28, 4, 32, 8);
    *entsize = (uint32_t)FRAMES__ELF_F(eh, eh, 42, 2, 54, 2);
    *num = (uint32_t)FRAMES__ELF_F(eh, eh, 44, 2, 56, 2);
    if (*num && *entsize < (eh[4] == 2 ? 56u : 32u))
        return frames__fail(err, FRAMES_E_FORMAT, FRAMES_NO_POS, FRAMES_NO_POS,
                            "program headers of %u bytes are too small", *entsize);
    return FRAMES_OK;
}

/* The program headers in table (num entries of entsize bytes, as frames__elf_phdr_table
   said, all in memory: the caller checked the bounds) into a new array *segs (FRAMES_FREE
   with actx; NULL when none) of *nsegs; headers whose range wraps map nothing and are
   left out. */
static FRAMES__UNUSED int frames__elf_segments(const uint8_t *eh, const uint8_t *table, uint32_t num,
                                               uint32_t entsize, void *actx, frames__elf_seg **segs,
                                               uint32_t *nsegs, frames_error *err) {
    uint32_t i;
    *segs = NULL;
    *nsegs = 0;
    if (num == 0) return FRAMES_OK;
    *segs = (frames__elf_seg *)FRAMES_MALLOC(num * sizeof **segs, actx);
    if (!*segs) return frames__fail(err, FRAMES_E_NOMEM, FRAMES_NO_POS, FRAMES_NO_POS, "out of memory");
    for (i = 0; i < num; i++) {
        const uint8_t *b = table + (size_t)i * entsize;
        frames__elf_seg *s = &(*segs)[*nsegs];
        s->type = (uint32_t)frames__elf_rd(b, 4, eh[5] == 2);
        s->flags = (uint32_t)FRAMES__ELF_F(eh, b, 24, 4, 4, 4);
        s->offset = FRAMES__ELF_F(eh, b, 4, 4, 8, 8);
        s->vaddr = FRAMES__ELF_F(eh, b, 8, 4, 16, 8);
        s->filesz = FRAMES__ELF_F(eh, b, 16, 4, 32, 8);
        s->memsz = FRAMES__ELF_F(eh, b, 20, 4, 40, 8);
        if (s->vaddr + s->memsz < s->vaddr) continue;
        (*nsegs)++;
    }
    return FRAMES_OK;
}

#ifndef FRAMES_NO_POSIX
/* --------------------------------------------------------------------------------------
   files named by input
   -------------------------------------------------------------------------------------- */

#define FRAMES__NOT_REGULAR (-2) /* frames__open_untrusted: a FIFO, device, directory... */
#define FRAMES__TOO_LARGE (-3)   /* frames__open_untrusted: more than max_size bytes */
#define FRAMES__IS_DIR (-4)      /* frames__open_untrusted: a directory (said apart: common) */

/* Open for reading a file whose name came from input (a trace's module path, a perf
   sideband's mapping, a debug file found through a build id): whoever made the input
   chose it, so it may be a FIFO or a device, whose open or read would block forever or
   never end. Only a regular file of at most max_size bytes is opened: checked by name
   first (nothing else is opened at all), opened without blocking, and checked again on
   the descriptor (the name may have been replaced in between). Returns the descriptor
   (with its size in *size), -1 when a call failed (errno), FRAMES__NOT_REGULAR or
   FRAMES__TOO_LARGE. */
static FRAMES__UNUSED int frames__open_untrusted(const char *path, uint64_t max_size,
                                                 uint64_t *size) {
    struct stat st;
    int fd, rc, flags = O_RDONLY | O_NONBLOCK | O_NOCTTY;
#ifdef O_CLOEXEC
    flags |= O_CLOEXEC;
#endif
    if (stat(path, &st) != 0) return -1;
    if (S_ISDIR(st.st_mode)) return FRAMES__IS_DIR;
    if (!S_ISREG(st.st_mode)) return FRAMES__NOT_REGULAR;
    if ((fd = open(path, flags)) < 0) return -1;
    rc = fstat(fd, &st) != 0                  ? -1
         : !S_ISREG(st.st_mode)               ? FRAMES__NOT_REGULAR
         : (uint64_t)st.st_size > max_size    ? FRAMES__TOO_LARGE
                                              : fd;
    if (rc != fd) {
        int e = errno;
        close(fd);
        errno = e;
    } else if (size) {
        *size = (uint64_t)st.st_size;
    }
    return rc;
}

#ifndef FRAMES_NO_STDIO
/* Why frames__open_untrusted failed, for a message. */
static FRAMES__UNUSED const char *frames__untrusted_why(int rc) {
    return rc == FRAMES__NOT_REGULAR ? "not a regular file"
         : rc == FRAMES__IS_DIR      ? "a directory, not a file"
         : rc == FRAMES__TOO_LARGE   ? "too large"
                                     : strerror(errno);
}

/* frames__open_untrusted as a stdio stream (NULL with *rc set on failure). */
static FRAMES__UNUSED FILE *frames__fopen_untrusted(const char *path, uint64_t max_size,
                                                    uint64_t *size, int *rc) {
    FILE *f;
    int fd = frames__open_untrusted(path, max_size, size);
    *rc = fd;
    if (fd < 0) return NULL;
    if (!(f = fdopen(fd, "rb"))) {
        *rc = -1;
        close(fd);
    }
    return f;
}
#endif
#endif

#ifdef __cplusplus
}
#endif
#endif /* shared private helpers */

/* ======================================================================================
   SHARED PRIVATE HELPERS: the worker thread

   One thread that runs the jobs handed to it, in order, while the caller goes on (the
   Parquet writer thread, a .frames.zst cursor's read-ahead, the index build's second
   segment). A job is `size` bytes copied into one of
   `nslots` slots of the caller's memory (nothing is allocated) and run as fn(ctx, job);
   handing one over waits for a free slot. The first job that fails (returns < 0) is
   kept: the jobs after it are dropped and every call returns its code. When the thread
   cannot start, frames__worker_put runs each job itself. It needs POSIX threads, which
   frames.h alone does not, so it is compiled only when asked for, by the implementation
   of a header whose threads are on (private: the tools keep to the public API):
       #define FRAMES__WANT_WORKER
       #include "frames.h"
   ====================================================================================== */
#if defined(FRAMES__WANT_WORKER) && !defined(FRAMES_NO_POSIX) && !defined(FRAMES__WORKER_INCLUDED)
#define FRAMES__WORKER_INCLUDED
#include <pthread.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef int (*frames__worker_fn)(void *ctx, const void *job);

typedef struct frames__worker {
    frames__worker_fn fn;
    void *ctx;
    unsigned char *slots;        /* nslots jobs of size bytes each */
    size_t size;
    unsigned nslots, head, tail; /* jobs handed over and not done yet: tail - head */
    int rc;                      /* FRAMES_OK, or the first job's error */
    int threaded, quit;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;           /* a job was handed over or done, or quit */
} frames__worker;

FRAMES__STATIC_DEF void *frames__worker_main(void *arg) {
    frames__worker *k = (frames__worker *)arg;
    pthread_mutex_lock(&k->mu);
    for (;;) {
        const void *job;
        int rc;
        while (k->head == k->tail && !k->quit) pthread_cond_wait(&k->cv, &k->mu);
        if (k->head == k->tail) break;   /* quit, and every job done */
        job = k->size ? k->slots + (size_t)(k->head % k->nslots) * k->size : NULL;
        pthread_mutex_unlock(&k->mu);
        rc = k->rc < 0 ? k->rc : k->fn(k->ctx, job);   /* only this thread writes k->rc */
        pthread_mutex_lock(&k->mu);
        if (rc < 0) k->rc = rc;
        k->head++;
        pthread_cond_broadcast(&k->cv);
    }
    pthread_mutex_unlock(&k->mu);
    return NULL;
}

/* Start the thread for jobs of `size` bytes (0: none) in nslots slots at `slots`: 1, or 0
   when it could not start (then every job runs inline). */
FRAMES__STATIC_DEF int frames__worker_start(frames__worker *k, frames__worker_fn fn, void *ctx,
                                            void *slots, size_t size, unsigned nslots) {
    memset(k, 0, sizeof *k);
    k->fn = fn;
    k->ctx = ctx;
    k->slots = (unsigned char *)slots;
    k->size = size;
    k->nslots = nslots ? nslots : 1;
    if (pthread_mutex_init(&k->mu, NULL) != 0) return 0;
    if (pthread_cond_init(&k->cv, NULL) != 0) {
        pthread_mutex_destroy(&k->mu);
        return 0;
    }
    if (pthread_create(&k->thread, NULL, frames__worker_main, k) != 0) {
        pthread_cond_destroy(&k->cv);
        pthread_mutex_destroy(&k->mu);
        return 0;
    }
    return k->threaded = 1;
}

/* Hand a job over (copied: the caller may reuse *job at once), once a slot is free; or run
   it here without a thread. FRAMES_OK, or the first error (then the job is dropped). */
FRAMES__STATIC_DEF int frames__worker_put(frames__worker *k, const void *job) {
    int rc;
    if (!k->threaded) {
        if (k->rc >= 0 && (rc = k->fn(k->ctx, job)) < 0) k->rc = rc;
        return k->rc;
    }
    pthread_mutex_lock(&k->mu);
    while (k->tail - k->head == k->nslots) pthread_cond_wait(&k->cv, &k->mu);
    if ((rc = k->rc) >= 0) {
        if (job && k->size) memcpy(k->slots + (size_t)(k->tail % k->nslots) * k->size, job, k->size);
        k->tail++;
        pthread_cond_broadcast(&k->cv);
    }
    pthread_mutex_unlock(&k->mu);
    return rc;
}

/* Until every job handed over is done (what they wrote is then the caller's to read):
   FRAMES_OK or the first error. */
FRAMES__STATIC_DEF int frames__worker_wait(frames__worker *k) {
    int rc;
    if (!k->threaded) return k->rc;
    pthread_mutex_lock(&k->mu);
    while (k->head != k->tail) pthread_cond_wait(&k->cv, &k->mu);
    rc = k->rc;
    pthread_mutex_unlock(&k->mu);
    return rc;
}

/* The jobs handed over are done, then the thread ends. */
FRAMES__STATIC_DEF void frames__worker_stop(frames__worker *k) {
    if (!k->threaded) return;
    pthread_mutex_lock(&k->mu);
    k->quit = 1;
    pthread_cond_broadcast(&k->cv);
    pthread_mutex_unlock(&k->mu);
    pthread_join(k->thread, NULL);
    pthread_cond_destroy(&k->cv);
    pthread_mutex_destroy(&k->mu);
    k->threaded = 0;
}

#ifdef __cplusplus
}
#endif
#endif /* the worker thread */

/* ======================================================================================
   IMPLEMENTATION
   ====================================================================================== */
#ifdef FRAMES_IMPLEMENTATION
#ifndef FRAMES_IMPLEMENTATION_INCLUDED
#define FRAMES_IMPLEMENTATION_INCLUDED

#ifndef FRAMES_NO_POSIX
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* --------------------------------------------------------------------------------------
   errors and names
   -------------------------------------------------------------------------------------- */

#define FRAMES__ERROR_CASE(name, value, message) case name: return message;
FRAMES_DEF const char *frames_strerror(int code) {
    switch (code) {
    FRAMES_ERRORS(FRAMES__ERROR_CASE)
    default: return "unknown error";
    }
}
#undef FRAMES__ERROR_CASE

FRAMES_DEF frames_bytes frames_str(const char *s) {
    return frames_bytes_of(s, s ? strlen(s) : 0);
}

FRAMES_DEF void frames_limits_default(frames_limits *l) {
    memset(l, 0, sizeof *l);
    l->max_frame_size = 256u << 20;
    l->max_depth = 64;
    l->max_scratch = (size_t)1 << 30;
}

/* --------------------------------------------------------------------------------------
   wire primitives
   -------------------------------------------------------------------------------------- */

enum { FRAMES__VARINT = 0, FRAMES__I64 = 1, FRAMES__LEN = 2, FRAMES__SGROUP = 3,
       FRAMES__EGROUP = 4, FRAMES__I32 = 5 };

static int64_t frames__unzigzag64(uint64_t u) { return (int64_t)(u >> 1) ^ -(int64_t)(u & 1); }
static int32_t frames__unzigzag32(uint32_t u) { return (int32_t)(u >> 1) ^ -(int32_t)(u & 1); }
static uint64_t frames__zigzag64(int64_t v) {
    return ((uint64_t)v << 1) ^ (uint64_t)(v < 0 ? -1 : 0);
}
static uint32_t frames__zigzag32(int32_t v) {
    return ((uint32_t)v << 1) ^ (uint32_t)(v < 0 ? -1 : 0);
}

static double frames__double_of(uint64_t bits) {
    double d;
    memcpy(&d, &bits, sizeof d);
    return d;
}
static uint64_t frames__bits_of(double d) {
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    return u;
}

/* Decoding state of one message tree (a frame or the meta frame). */
typedef struct frames__dec {
    frames_decoder *d;
    const uint8_t *base;   /* start of the top-level message, for positions */
    uint32_t flags;        /* FRAMES_FF_* */
    int code;              /* first error */
    size_t at;             /* its byte position in the message */
    const char *what;      /* its description */
} frames__dec;

static int frames__bad(frames__dec *x, const uint8_t *p, int code, const char *what) {
    if (!x->code) {
        x->code = code;
        x->at = (size_t)(p - x->base);
        x->what = what;
    }
    return code;
}

/* Varint of up to 10 bytes. Non-minimal encodings and bits past 64 are accepted
   (libprotobuf does) but flagged as non-canonical. */
static int frames__varint_slow(frames__dec *x, const uint8_t **pp, const uint8_t *end,
                               uint64_t *out) {
    const uint8_t *p = *pp;
    uint64_t v = 0;
    int i;
    for (i = 0; i < 10; i++) {
        uint8_t b;
        if (p >= end) return frames__bad(x, p, FRAMES_E_DECODE, "varint runs past the end");
        b = *p++;
        v |= (uint64_t)(b & 0x7f) << (7 * i);
        if (b < 0x80) {
            if ((i > 0 && b == 0) || (i == 9 && b > 1)) x->flags |= FRAMES_FF_NONCANONICAL;
            *out = v;
            *pp = p;
            return 0;
        }
    }
    return frames__bad(x, p, FRAMES_E_DECODE, "varint longer than 10 bytes");
}

static inline int frames__varint(frames__dec *x, const uint8_t **pp, const uint8_t *end,
                                 uint64_t *out) {
    const uint8_t *p = *pp;
    if (FRAMES__LIKELY(p < end && *p < 0x80)) {
        *out = *p;
        *pp = p + 1;
        return 0;
    }
    if (p + 1 < end && p[1] < 0x80) {
        *out = (uint64_t)(p[0] & 0x7f) | (uint64_t)p[1] << 7;
        if (p[1] == 0) x->flags |= FRAMES_FF_NONCANONICAL;
        *pp = p + 2;
        return 0;
    }
    return frames__varint_slow(x, pp, end, out);
}

/* Length-delimited payload: bounds-checked against the enclosing message. */
static int frames__len(frames__dec *x, const uint8_t **pp, const uint8_t *end,
                       const uint8_t **start, const uint8_t **stop) {
    uint64_t n;
    if (frames__varint(x, pp, end, &n)) return x->code;
    if (n > (uint64_t)(end - *pp))
        return frames__bad(x, *pp, FRAMES_E_DECODE, "length runs past the enclosing message");
    *start = *pp;
    *stop = *pp + n;
    *pp = *stop;
    return 0;
}

/* Skip a field's value by wire type. Groups are skipped with a depth limit. */
static int frames__skip(frames__dec *x, const uint8_t **pp, const uint8_t *end, uint32_t wt,
                        uint32_t field) {
    uint64_t v;
    const uint8_t *a, *b;
    uint32_t depth;
    switch (wt) {
    case FRAMES__VARINT: return frames__varint(x, pp, end, &v);
    case FRAMES__I64:
        if (end - *pp < 8) return frames__bad(x, *pp, FRAMES_E_DECODE, "fixed64 runs past the end");
        *pp += 8;
        return 0;
    case FRAMES__I32:
        if (end - *pp < 4) return frames__bad(x, *pp, FRAMES_E_DECODE, "fixed32 runs past the end");
        *pp += 4;
        return 0;
    case FRAMES__LEN: return frames__len(x, pp, end, &a, &b);
    case FRAMES__SGROUP:
        x->flags |= FRAMES_FF_GROUP;
        if (x->d->strict) return frames__bad(x, *pp, FRAMES_E_DECODE, "group (strict mode)");
        depth = 1;
        while (depth > 0) {
            uint64_t tag;
            uint32_t w;
            if (frames__varint(x, pp, end, &tag)) return x->code;
            w = (uint32_t)(tag & 7);
            if (w == FRAMES__SGROUP) {
                if (++depth > x->d->limits.max_depth)
                    return frames__bad(x, *pp, FRAMES_E_LIMIT, "groups nested too deeply");
            } else if (w == FRAMES__EGROUP) {
                depth--;
                if (depth == 0 && (tag >> 3) != field)
                    return frames__bad(x, *pp, FRAMES_E_DECODE, "mismatched end of group");
            } else if (w > 5) {
                return frames__bad(x, *pp, FRAMES_E_DECODE, "invalid wire type");
            } else if (frames__skip(x, pp, end, w, (uint32_t)(tag >> 3))) {
                return x->code;
            }
        }
        return 0;
    case FRAMES__EGROUP: return frames__bad(x, *pp, FRAMES_E_DECODE, "unexpected end of group");
    default: return frames__bad(x, *pp, FRAMES_E_DECODE, "invalid wire type 6 or 7");
    }
}

/* Reads the next tag. Checks field order so that re-encoding can tell whether it will
   reproduce the input bytes. */
static inline int frames__tag(frames__dec *x, const uint8_t **pp, const uint8_t *end,
                              uint32_t *field, uint32_t *wt, uint32_t *last) {
    uint64_t tag;
    *field = *wt = 0; /* defined even on the error path (gcc -O2 cannot see x->code != 0) */
    if (FRAMES__LIKELY(**pp < 0x80)) {
        tag = **pp;
        (*pp)++;
    } else if (frames__varint(x, pp, end, &tag)) {
        *field = *wt = 0; /* callers stop on the error; set anyway for gcc -O2's flow analysis */
        return x->code;
    }
    *field = (uint32_t)(tag >> 3);
    *wt = (uint32_t)(tag & 7);
    if (FRAMES__UNLIKELY(*field == 0 || tag >> 32))
        return frames__bad(x, *pp, FRAMES_E_DECODE, "invalid field number");
    if (*field < *last) x->flags |= FRAMES_FF_NONCANONICAL;
    *last = *field;
    return 0;
}

/* A field the schema does not have (or with the wrong wire type): skip it. */
static int frames__unknown(frames__dec *x, const uint8_t **pp, const uint8_t *end, uint32_t wt,
                           uint32_t field) {
    x->flags |= FRAMES_FF_UNKNOWN_FIELD | FRAMES_FF_NONCANONICAL;
    return frames__skip(x, pp, end, wt, field);
}

static int frames__u64_field(frames__dec *x, const uint8_t **pp, const uint8_t *end,
                             uint64_t *out) {
    return frames__varint(x, pp, end, out);
}

static int frames__bool_field(frames__dec *x, const uint8_t **pp, const uint8_t *end,
                              uint8_t *out) {
    uint64_t v;
    if (frames__varint(x, pp, end, &v)) return x->code;
    if (v > 1) {
        x->flags |= FRAMES_FF_BAD_BOOL | FRAMES_FF_NONCANONICAL;
        if (x->d->strict) return frames__bad(x, *pp, FRAMES_E_DECODE, "bool other than 0/1");
    }
    *out = v != 0;
    return 0;
}

static int frames__sint32_field(frames__dec *x, const uint8_t **pp, const uint8_t *end,
                                int32_t *out) {
    uint64_t v;
    if (frames__varint(x, pp, end, &v)) return x->code;
    if (v >> 32) x->flags |= FRAMES_FF_WIDE_VALUE | FRAMES_FF_NONCANONICAL;
    *out = frames__unzigzag32((uint32_t)v);
    return 0;
}

static int frames__bytes_field(frames__dec *x, const uint8_t **pp, const uint8_t *end,
                               frames_bytes *out) {
    const uint8_t *a, *b;
    if (frames__len(x, pp, end, &a, &b)) return x->code;
    out->ptr = a;
    out->len = (size_t)(b - a);
    return 0;
}

static int frames__double_field(frames__dec *x, const uint8_t **pp, const uint8_t *end,
                                double *out) {
    if (end - *pp < 8) return frames__bad(x, *pp, FRAMES_E_DECODE, "double runs past the end");
    *out = frames__double_of(frames__le64(*pp));
    *pp += 8;
    return 0;
}

/* Was each required field (bit per field number) seen? */
static void frames__require(frames__dec *x, uint32_t seen, uint32_t required) {
    if ((seen & required) != required) x->flags |= FRAMES_FF_INCOMPLETE;
}

/* A singular field seen twice: libprotobuf keeps the last scalar / merges messages. */
static void frames__once(frames__dec *x, uint32_t *seen, uint32_t field) {
    if (*seen & (1u << field)) x->flags |= FRAMES_FF_DUPLICATE | FRAMES_FF_NONCANONICAL;
    *seen |= 1u << field;
}

/* Variant with `set` option bits: exactly one is expected. */
static void frames__variant(frames__dec *x, uint32_t set) {
    if (set == 0) x->flags |= FRAMES_FF_EMPTY_VARIANT;
    else if (set & (set - 1)) x->flags |= FRAMES_FF_MULTI_OPTION;
}

/* --------------------------------------------------------------------------------------
   decoder arena
   -------------------------------------------------------------------------------------- */

/* Overflow blocks used while a decoder's main block is too small; merged into one
   larger main block at the next reset, so steady state is a single block. */
typedef struct frames__spill {
    struct frames__spill *next;
    size_t cap, used;
} frames__spill;

FRAMES_DEF void frames_decoder_init(frames_decoder *d, void *buf, size_t cap, void *alloc_ctx) {
    memset(d, 0, sizeof *d);
    d->frames__base = (uint8_t *)buf;
    d->frames__cap = buf ? cap : 0;
    d->frames__owned = buf == NULL;
    frames_limits_default(&d->limits);
    d->alloc_ctx = alloc_ctx;
}

static void frames__free_spills(frames_decoder *d) {
    frames__spill *s = (frames__spill *)d->frames__spill, *n;
    for (; s; s = n) {
        n = s->next;
        FRAMES_FREE(s, d->alloc_ctx);
    }
    d->frames__spill = NULL;
}

FRAMES_DEF void frames_decoder_free(frames_decoder *d) {
    frames__free_spills(d);
    if (d->frames__owned && d->frames__base) FRAMES_FREE(d->frames__base, d->alloc_ctx);
    d->frames__base = NULL;
    d->frames__cap = d->frames__used = 0;
}

/* Start a new message: forget the previous arrays; grow the main block to the peak. */
static void frames__arena_reset(frames_decoder *d) {
    if (d->frames__spill) {
        size_t want = d->frames__peak + d->frames__peak / 2 + 256;
        frames__free_spills(d);
        if (d->frames__owned && want <= d->limits.max_scratch) {
            void *nb = FRAMES_REALLOC(d->frames__base, want, d->alloc_ctx);
            if (nb) {
                d->frames__base = (uint8_t *)nb;
                d->frames__cap = want;
            }
        }
    }
    d->frames__used = 0;
    d->frames__peak = 0;
}

static void *frames__arena_alloc(frames__dec *x, size_t count, size_t size, const uint8_t *at) {
    frames_decoder *d = x->d;
    size_t need, cap;
    frames__spill *s;
    if (count == 0) return NULL;
    if (count > (SIZE_MAX - 64) / size) {
        frames__bad(x, at, FRAMES_E_LIMIT, "list too long");
        return NULL;
    }
    need = (count * size + 7) & ~(size_t)7;
    if (d->frames__peak + need > d->limits.max_scratch) {
        frames__bad(x, at, FRAMES_E_LIMIT, "decoded frame needs more scratch memory than allowed");
        return NULL;
    }
    d->frames__peak += need;
    if (d->frames__cap - d->frames__used >= need) {
        void *p = d->frames__base + d->frames__used;
        d->frames__used += need;
        return p;
    }
    s = (frames__spill *)d->frames__spill;
    if (s && s->cap - s->used >= need) {
        void *p = (uint8_t *)(s + 1) + s->used;
        s->used += need;
        return p;
    }
    if (!d->frames__owned) {
        frames__bad(x, at, FRAMES_E_NOMEM, "caller scratch buffer too small for this frame");
        return NULL;
    }
    if (!d->frames__base && !s) {   /* first use: a main block */
        cap = need < 4096 ? 4096 : need;
        d->frames__base = (uint8_t *)FRAMES_MALLOC(cap, d->alloc_ctx);
        if (!d->frames__base) {
            frames__bad(x, at, FRAMES_E_NOMEM, "out of memory");
            return NULL;
        }
        d->frames__cap = cap;
        d->frames__used = need;
        return d->frames__base;
    }
    cap = need < 16384 ? 16384 : need;
    s = (frames__spill *)FRAMES_MALLOC(sizeof *s + cap, d->alloc_ctx);
    if (!s) {
        frames__bad(x, at, FRAMES_E_NOMEM, "out of memory");
        return NULL;
    }
    s->next = (frames__spill *)d->frames__spill;
    s->cap = cap;
    s->used = need;
    d->frames__spill = s;
    return s + 1;
}

/* Room for `extra` more elements after `old_n` existing ones (a repeated list, or a
   second occurrence of a singular list message, which libprotobuf appends). A list keeps
   its capacity in the 8 bytes before it, and grows geometrically when it occurs again:
   copying it whole for each occurrence made arena use quadratic in the input (a 23 KB
   meta frame of repeated `tracer` fields took 3.8 MB). */
static void *frames__grow_list(frames__dec *x, const void *old, size_t old_n, size_t extra,
                               size_t size, const uint8_t *at) {
    uint64_t cap = 0;
    size_t want;
    uint8_t *p;
    if (extra == 0) return (void *)(uintptr_t)old;
    if (old_n) {
        memcpy(&cap, (const uint8_t *)old - 8, 8);
        if (cap - old_n >= extra) return (void *)(uintptr_t)old;
    }
    want = old_n + extra;
    if (want < old_n || want > (SIZE_MAX - 64) / 2 / size) {
        frames__bad(x, at, FRAMES_E_LIMIT, "list too long");
        return NULL;
    }
    if (old_n) want *= 2;
    p = (uint8_t *)frames__arena_alloc(x, want * size + 8, 1, at);
    if (!p) return NULL;
    cap = want;
    memcpy(p, &cap, 8);
    if (old_n) memcpy(p + 8, old, old_n * size);
    return p + 8;
}

/* Number of field-1 LEN elements in a list message (one cheap pass). */
static int frames__count_elems(frames__dec *x, const uint8_t *p, const uint8_t *end,
                               size_t *count) {
    size_t n = 0;
    uint32_t last = 0;
    while (p < end) {
        uint32_t f, wt;
        if (frames__tag(x, &p, end, &f, &wt, &last)) return x->code;
        if (f == 1 && wt == FRAMES__LEN) n++;
        last = 0; /* order was checked by the real pass */
        if (frames__skip(x, &p, end, wt, f)) return x->code;
    }
    *count = n;
    return 0;
}

/* --------------------------------------------------------------------------------------
   message decoders
   -------------------------------------------------------------------------------------- */
/* One function per message, in schema order. Each reads fields in any order, keeps the
   last value of scalars, merges repeated occurrences of singular messages, skips
   unknown fields, and records what it saw in x->flags. */

static int frames__dec_mem_operand(frames__dec *x, const uint8_t *p, const uint8_t *end,
                                   frames_operand *op) {
    uint32_t f, wt, last = 0, seen = 0;
    while (p < end) {
        if (frames__tag(x, &p, end, &f, &wt, &last)) return x->code;
        if (f == 1 && wt == FRAMES__VARINT) {
            frames__once(x, &seen, 1);
            if (frames__u64_field(x, &p, end, &op->address)) return x->code;
        } else if (frames__unknown(x, &p, end, wt, f)) {
            return x->code;
        }
    }
    frames__require(x, seen, 1u << 1);
    return 0;
}

static int frames__dec_reg_operand(frames__dec *x, const uint8_t *p, const uint8_t *end,
                                   frames_operand *op) {
    uint32_t f, wt, last = 0, seen = 0;
    while (p < end) {
        if (frames__tag(x, &p, end, &f, &wt, &last)) return x->code;
        if (f == 1 && wt == FRAMES__LEN) {
            frames__once(x, &seen, 1);
            if (frames__bytes_field(x, &p, end, &op->name)) return x->code;
        } else if (frames__unknown(x, &p, end, wt, f)) {
            return x->code;
        }
    }
    frames__require(x, seen, 1u << 1);
    return 0;
}

/* operand_info_specific (variant): mem_operand = 1, reg_operand = 2 */
static int frames__dec_specific(frames__dec *x, const uint8_t *p, const uint8_t *end,
                                frames_operand *op) {
    uint32_t f, wt, last = 0, seen = 0;
    const uint8_t *a, *b;
    while (p < end) {
        if (frames__tag(x, &p, end, &f, &wt, &last)) return x->code;
        if ((f == 1 || f == 2) && wt == FRAMES__LEN) {
            frames__once(x, &seen, f);
            if (frames__len(x, &p, end, &a, &b)) return x->code;
            op->spec |= (uint8_t)f;
            if ((f == 1 ? frames__dec_mem_operand : frames__dec_reg_operand)(x, a, b, op))
                return x->code;
        } else {
            x->flags |= FRAMES_FF_UNKNOWN_OPTION;
            if (frames__unknown(x, &p, end, wt, f)) return x->code;
            seen |= 1u << 31;
        }
    }
    frames__variant(x, seen);
    return 0;
}

static int frames__dec_usage(frames__dec *x, const uint8_t *p, const uint8_t *end,
                             frames_operand *op) {
    uint32_t f, wt, last = 0, seen = 0;
    while (p < end) {
        if (frames__tag(x, &p, end, &f, &wt, &last)) return x->code;
        if (f >= 1 && f <= 4 && wt == FRAMES__VARINT) {
            uint8_t *dst = f == 1 ? &op->read : f == 2 ? &op->written : f == 3 ? &op->index
                                                                               : &op->base;
            frames__once(x, &seen, f);
            if (frames__bool_field(x, &p, end, dst)) return x->code;
        } else if (frames__unknown(x, &p, end, wt, f)) {
            return x->code;
        }
    }
    frames__require(x, seen, 0x1e);
    return 0;
}

/* taint_info (variant): no_taint = 1, taint_id = 2, taint_multiple = 3 */
static int frames__dec_taint(frames__dec *x, const uint8_t *p, const uint8_t *end,
                             frames_taint *t) {
    uint32_t f, wt, last = 0, seen = 0;
    while (p < end) {
        if (frames__tag(x, &p, end, &f, &wt, &last)) return x->code;
        if (f == 1 && wt == FRAMES__VARINT) {
            if (frames__bool_field(x, &p, end, &t->no_taint)) return x->code;
            t->set |= FRAMES_TAINT_NONE;
        } else if (f == 2 && wt == FRAMES__VARINT) {
            if (frames__u64_field(x, &p, end, &t->id)) return x->code;
            t->set |= FRAMES_TAINT_ID;
        } else if (f == 3 && wt == FRAMES__VARINT) {
            if (frames__bool_field(x, &p, end, &t->multiple)) return x->code;
            t->set |= FRAMES_TAINT_MULTIPLE;
        } else {
            x->flags |= FRAMES_FF_UNKNOWN_OPTION;
            if (frames__unknown(x, &p, end, wt, f)) return x->code;
            seen |= 1u << 31;
            continue;
        }
        frames__once(x, &seen, f);
    }
    frames__variant(x, seen);
    return 0;
}

/* operand_info: specific = 1, bit_length = 2, usage = 3, taint = 4, value = 5 */
static int frames__dec_operand_info(frames__dec *x, const uint8_t *p, const uint8_t *end,
                                    frames_operand *op) {
    uint32_t f, wt, last = 0, seen = 0;
    const uint8_t *a, *b;
    while (p < end) {
        if (frames__tag(x, &p, end, &f, &wt, &last)) return x->code;
        switch (f * 8 + wt) {
        case 1 * 8 + FRAMES__LEN:
            frames__once(x, &seen, 1);
            if (frames__len(x, &p, end, &a, &b) || frames__dec_specific(x, a, b, op))
                return x->code;
            break;
        case 2 * 8 + FRAMES__VARINT:
            frames__once(x, &seen, 2);
            if (frames__sint32_field(x, &p, end, &op->bit_length)) return x->code;
            break;
        case 3 * 8 + FRAMES__LEN:
            frames__once(x, &seen, 3);
            if (frames__len(x, &p, end, &a, &b) || frames__dec_usage(x, a, b, op))
                return x->code;
            break;
        case 4 * 8 + FRAMES__LEN:
            frames__once(x, &seen, 4);
            if (frames__len(x, &p, end, &a, &b) || frames__dec_taint(x, a, b, &op->taint))
                return x->code;
            break;
        case 5 * 8 + FRAMES__LEN:
            frames__once(x, &seen, 5);
            if (frames__bytes_field(x, &p, end, &op->value)) return x->code;
            break;
        default:
            if (frames__unknown(x, &p, end, wt, f)) return x->code;
        }
    }
    frames__require(x, seen, 0x3e);
    return 0;
}

/* value_info (key frames): specific = 1, bit_length = 2, taint (optional) = 3, value = 4 */
static int frames__dec_value_info(frames__dec *x, const uint8_t *p, const uint8_t *end,
                                  frames_operand *op) {
    uint32_t f, wt, last = 0, seen = 0;
    const uint8_t *a, *b;
    while (p < end) {
        if (frames__tag(x, &p, end, &f, &wt, &last)) return x->code;
        switch (f * 8 + wt) {
        case 1 * 8 + FRAMES__LEN:
            frames__once(x, &seen, 1);
            if (frames__len(x, &p, end, &a, &b) || frames__dec_specific(x, a, b, op))
                return x->code;
            break;
        case 2 * 8 + FRAMES__VARINT:
            frames__once(x, &seen, 2);
            if (frames__sint32_field(x, &p, end, &op->bit_length)) return x->code;
            break;
        case 3 * 8 + FRAMES__LEN:
            frames__once(x, &seen, 3);
            if (frames__len(x, &p, end, &a, &b) || frames__dec_taint(x, a, b, &op->taint))
                return x->code;
            break;
        case 4 * 8 + FRAMES__LEN:
            frames__once(x, &seen, 4);
            if (frames__bytes_field(x, &p, end, &op->value)) return x->code;
            break;
        default:
            if (frames__unknown(x, &p, end, wt, f)) return x->code;
        }
    }
    frames__require(x, seen, 0x16);
    return 0;
}

/* --------------------------------------------------------------------------------------
   fast path
   -------------------------------------------------------------------------------------- */
/* Every writer emits operand_info the same way (libprotobuf's canonical encoding: fields
   in ascending order, minimal varints, bools 0 or 1, one option in each variant), and it
   is most of every std_frame. Decoding exactly that shape needs no field dispatch, order
   tracking or flag bookkeeping. The functions below accept nothing else: on any other
   input (including every malformed one) they return 0/NULL and the general decoder, the
   only one that reports errors and sets flags, decodes the message instead. For the
   input they accept they must produce exactly what the general decoder produces. */

/* Length-delimited payload starting at its length varint: its start, *stop its end. */
FRAMES__INLINE const uint8_t *frames__fast_len(const uint8_t *p, const uint8_t *end,
                                               const uint8_t **stop) {
    uint64_t n;
    p = frames__fast_varint(p, end, &n);
    if (!p || n > (uint64_t)(end - p)) return NULL;
    *stop = p + n;
    return p;
}

/* Number of elements of a list message made only of canonical `0a len ...` elements;
   0 with *ok = 0 for anything else. */
static size_t frames__fast_count(const uint8_t *p, const uint8_t *end, int *ok) {
    size_t n = 0;
    const uint8_t *stop;
    *ok = 0;
    while (p < end) {
        if (*p != 0x0a || !frames__fast_len(p + 1, end, &stop)) return 0;
        p = stop;
        n++;
    }
    *ok = 1;
    return n;
}

/* operand_info in any canonical shape the hot template below does not take (taint ids,
   values of 128 bytes or more, addresses of 9 or 10 bytes, ...): 0a specific,
   10 bit_length, 1a 08 usage, 22 taint, 2a value; p..end is one element. Submessage
   lengths below 128 (register names up to 123 bytes) are read in place, and the fixed
   bytes are compared a word at a time: the head of the specific part as one word, the
   bit length's tag and varint of one or two bytes (bit lengths below 8192) as part of
   another, the usage as one. */
FRAMES__INLINE int frames__dec_operand_info_fast(const uint8_t *p, const uint8_t *end,
                                                 frames_operand *op) {
    const uint8_t *q, *stop;
    size_t l, size = (size_t)(end - p);
    uint64_t w, v;
    /* the smallest: 0a 04 12 02 0a 00 (empty name), 10 zz zz, usage (10), taint (4), 2a 00 */
    if (size < 25) return 0;
    w = frames__le64(p);
    l = (size_t)(w >> 8) & 0xff;   /* length of operand_info_specific: 4..127, and room for
                                      the 19 bytes at least that follow it */
    if (l - 4 > 123 || l > size - 21) return 0;
    stop = p + 2 + l;
    /* reg_operand { name }: 0a l 12 l-2 0a l-4 (the lengths cannot borrow: l >= 4) */
    if ((w & 0xffffffffffffull) == 0x000a0012000aull + l * 0x010001000100ull - 0x040002000000ull) {
        op->spec = FRAMES_REG;
        op->name.ptr = p + 6;
        op->name.len = l - 4;
    /* mem_operand { address }: 0a l 0a l-2 08 varint */
    } else if ((w & 0xffffffffffull) == 0x08000a000aull + l * 0x01000100ull - 0x02000000ull) {
        op->spec = FRAMES_MEM;
        if (!(q = frames__varint8(p + 5, &op->address)) &&   /* 13 <= size bytes read */
            !(q = frames__fast_varint(p + 5, stop, &op->address)))
            return 0;
        if (q != stop) return 0;
    } else {
        return 0;
    }
    /* bit_length (sint32): 10 and a varint of one or two bytes; stop + 19 <= end, so 8
       bytes may be read here and 16 after it */
    w = frames__le64(stop);
    if ((w & 0x80ff) == 0x0010) {
        v = w >> 8 & 0x7f;
        q = stop + 2;
    } else if ((w & 0x8080ff) == 0x008010 && (w & 0x7f0000)) {
        v = (w >> 8 & 0x7f) | (w >> 9 & 0x3f80);
        q = stop + 3;
    } else {
        return 0;
    }
    op->bit_length = frames__unzigzag32((uint32_t)v);
    /* operand_usage: 1a 08 08 r 10 w 18 i | 20 b, each of r w i b 0 or 1 (the flag bytes
       are masked out and checked for 0/1 at once) */
    w = frames__le64(q);
    if ((w & 0xfefffefffeffffffull) != 0x001800100008081aull) return 0;
    op->read = q[3];
    op->written = q[5];
    op->index = q[7];
    if (q[8] != 0x20 || q[9] > 1) return 0;
    op->base = q[9];
    p = q + 10;
    /* taint_info: exactly one of no_taint (bool), taint_id, taint_multiple (bool) */
    if (p[0] != 0x22 || (l = p[1]) >= 0x80 || l < 2 || l > (size_t)(end - p) - 2) return 0;
    stop = p + 2 + l;
    if (frames__fast_varint(p + 3, stop, &v) != stop) {
        return 0;
    } else if (p[2] == 0x10) {
        op->taint.set = FRAMES_TAINT_ID;
        op->taint.id = v;
    } else if (p[2] == 0x18 && v <= 1) {
        op->taint.set = FRAMES_TAINT_MULTIPLE;
        op->taint.multiple = (uint8_t)v;
    } else if (p[2] == 0x08 && v <= 1) {
        op->taint.set = FRAMES_TAINT_NONE;
        op->taint.no_taint = (uint8_t)v;
    } else {
        return 0;
    }
    p = stop;
    /* value, and nothing after it */
    if (p >= end || p[0] != 0x2a || !(q = frames__fast_len(p + 1, end, &stop)) || stop != end)
        return 0;
    op->value.ptr = q;
    op->value.len = (size_t)(end - q);
    return 1;
}

/* One element `0a L` (L < 128) of an operand list holding an operand_info exactly as
   tracers write a register or memory value (p..end: the rest of the list):
     0a L 0a l 12 l-2 0a l-4 name     specific = reg_operand { name }        (4 <= l < 128)
     0a L 0a l 0a l-2 08 address      specific = mem_operand { address of 1-8 bytes }
     10 b | 10 b b                    bit_length, a varint of one or two bytes
     1a 08 08 r 10 w 18 i 20 x        usage, each of r w i x 0 or 1
     22 02 08 t 2a n value            taint_info { no_taint t (0 or 1) }, n < 128 bytes
   The whole element is checked to lie in the list once, and then its fixed bytes a word at
   a time (the flag bytes masked, their 0/1 checked by the same compare); the value's length
   must end the element exactly. Returns the position after the element, or NULL for any
   other bytes (the element may still be one frames__dec_operand_info_fast takes). */
FRAMES__INLINE const uint8_t *frames__dec_operand_hot(const uint8_t *p, const uint8_t *end,
                                                      frames_operand *op) {
    const uint8_t *b, *tail, *q;
    uint64_t w, u, v, bits;
    size_t L, l;
    if (end - p < 27) return NULL;   /* the smallest such element */
    w = frames__le64(p);
    L = (size_t)(w >> 8 & 0xff);
    l = (size_t)(w >> 24 & 0xff);
    /* the element inside the list, and 19 bytes at least after the specific part: every
       word read below then lies inside the element. (An l below 4 matches neither
       template: the bit length's tag 10 at p + 4 + l would fall on one of its bytes.) */
    if (L > (size_t)(end - p) - 2 || l + 21 > L) return NULL;
    b = p + 2 + L;
    tail = p + 4 + l;
    memset(op, 0, sizeof *op);
    /* bytes 0-7 with l in three places; L below 128 */
    if ((w & 0xffffffffffff80ffull) ==
        0x000a0012000a000aull + l * 0x0100010001000000ull - 0x0400020000000000ull) {
        op->spec = FRAMES_REG;
        op->name = frames_bytes_of(p + 8, l - 4);
    } else if ((w & 0x00ffffffffff80ffull) ==
               0x0008000a000a000aull + l * 0x0000010001000000ull - 0x0000020000000000ull) {
        op->spec = FRAMES_MEM;
        if (frames__varint8(p + 7, &op->address) != tail) return NULL;
    } else {
        return NULL;
    }
    /* bit lengths of 64 and more (two bytes) first: 64-bit registers and words are the
       most common operands of 64-bit programs */
    w = frames__le64(tail);
    if ((w & 0x8080ff) == 0x008010 && (w & 0x7f0000)) {
        bits = (w >> 8 & 0x7f) | (w >> 9 & 0x3f80);
        q = tail + 3;
    } else if ((w & 0x80ff) == 0x0010) {
        bits = w >> 8 & 0x7f;
        q = tail + 2;
    } else {
        return NULL;
    }
    u = frames__le64(q);
    v = frames__le64(q + 8);
    if ((u & 0xfefffefffeffffffull) != 0x001800100008081aull ||
        (v & 0x80fffefffffffeffull) != 0x002a000802220020ull ||
        (size_t)(v >> 56) != (size_t)(b - q) - 16)
        return NULL;
    op->bit_length = frames__unzigzag32((uint32_t)bits);
    op->read = q[3];
    op->written = q[5];
    op->index = q[7];
    op->base = q[9];
    op->taint.set = FRAMES_TAINT_NONE;
    op->taint.no_taint = q[13];
    op->value = frames_bytes_of(q + 16, (size_t)(v >> 56));
    return b;
}

/* An operand list (the first occurrence in a std_frame) made of `0a len` elements that
   frames__dec_operand_hot or frames__dec_operand_info_fast accepts, decoded in one pass
   straight into the free end of the arena's main block, which then becomes the list (as
   frames__grow_list would lay it out: its capacity in the 8 bytes before it). 1 when
   done, 0 when the general path must decode the list instead (another shape, too little
   room, the scratch limit). */
FRAMES__INLINE int frames__dec_operands_fast(frames__dec *x, const uint8_t *p, const uint8_t *end,
                                             const frames_operand **list, uint32_t *n) {
    frames_decoder *d = x->d;
    frames_operand *ops, *op;
    const uint8_t *last;   /* the last place an operand fits in the main block */
    size_t need;
    uint64_t cap;
    if (p == end) return 1;   /* an empty list: nothing to allocate */
    if (d->frames__spill || d->frames__cap - d->frames__used < 8 + sizeof *op) return 0;
    ops = op = (frames_operand *)(void *)(d->frames__base + d->frames__used + 8);
    last = d->frames__base + d->frames__cap - sizeof *op;
    do {
        const uint8_t *next, *a;
        if ((const uint8_t *)op > last) return 0;
        if (FRAMES__UNLIKELY(!(next = frames__dec_operand_hot(p, end, op)))) {
            if (end - p < 2 || p[0] != 0x0a || !(a = frames__fast_len(p + 1, end, &next)))
                return 0;
            memset(op, 0, sizeof *op);
            if (!frames__dec_operand_info_fast(a, next, op)) return 0;
        }
        op++;
        p = next;
    } while (p < end);
    /* the capacity word and the operands, whose size is a multiple of 8 already */
    need = 8 + (size_t)((uint8_t *)op - (uint8_t *)ops);
    if (d->frames__peak + need > d->limits.max_scratch) return 0;
    cap = (uint64_t)(op - ops);
    memcpy((uint8_t *)ops - 8, &cap, 8);
    d->frames__used += need;
    d->frames__peak += need;
    *list = ops;
    *n = (uint32_t)cap;
    return 1;
}

typedef int (*frames__elem_fn)(frames__dec *x, const uint8_t *p, const uint8_t *end,
                               frames_operand *op);

/* operand_value_list / value_list: repeated elem = 1. Appends to (*list, *n). Elements
   go through `elem`, the general decoder, only: the fast paths belong to the one-pass
   frames__dec_operands_fast, and a decoder whose arena is still empty (its first frame)
   decodes lists here, which is how tests compare the fast paths with the general one. */
static int frames__dec_operands(frames__dec *x, const uint8_t *p, const uint8_t *end,
                                const frames_operand **list, uint32_t *n, frames__elem_fn elem) {
    size_t count, i = *n;
    frames_operand *ops;
    uint32_t f, wt, last = 0;
    const uint8_t *a, *b;
    int canonical;
    count = frames__fast_count(p, end, &canonical);
    if (!canonical && frames__count_elems(x, p, end, &count)) return x->code;
    if (count == 0) {
        while (p < end) { /* only unknown fields */
            if (frames__tag(x, &p, end, &f, &wt, &last) || frames__unknown(x, &p, end, wt, f))
                return x->code;
        }
        return 0;
    }
    if (count > UINT32_MAX - *n) return frames__bad(x, p, FRAMES_E_LIMIT, "list too long");
    ops = (frames_operand *)frames__grow_list(x, *list, *n, count, sizeof *ops, p);
    if (!ops) return x->code;
    if (canonical) { /* `0a len` elements only, as frames__fast_count checked */
        while (p < end) {
            frames_operand *op = &ops[i++];
            a = frames__fast_len(p + 1, end, &b);
            p = b;
            memset(op, 0, sizeof *op);
            if (elem(x, a, b, op)) return x->code;
        }
    } else {
        memset(ops + *n, 0, count * sizeof *ops);
    }
    while (p < end) {
        if (frames__tag(x, &p, end, &f, &wt, &last)) return x->code;
        if (f == 1 && wt == FRAMES__LEN) {
            if (frames__len(x, &p, end, &a, &b) || elem(x, a, b, &ops[i++])) return x->code;
        } else if (frames__unknown(x, &p, end, wt, f)) {
            return x->code;
        }
    }
    *list = ops;
    *n = (uint32_t)i;
    return 0;
}

/* std_frame: address 1, thread_id 2, rawbytes 3, pre 4, post 5, mode 6 */
static int frames__dec_std(frames__dec *x, const uint8_t *p, const uint8_t *end,
                           frames_std_frame *s, int again) {
    uint32_t f, wt, last = 0, seen = 0;
    const uint8_t *a, *b;
    while (p < end) {
        if (frames__tag(x, &p, end, &f, &wt, &last)) return x->code;
        switch (f * 8 + wt) {
        case 1 * 8 + FRAMES__VARINT:
            frames__once(x, &seen, 1);
            if (frames__u64_field(x, &p, end, &s->address)) return x->code;
            break;
        case 2 * 8 + FRAMES__VARINT:
            frames__once(x, &seen, 2);
            if (frames__u64_field(x, &p, end, &s->thread_id)) return x->code;
            break;
        case 3 * 8 + FRAMES__LEN:
            frames__once(x, &seen, 3);
            if (frames__bytes_field(x, &p, end, &s->rawbytes)) return x->code;
            break;
        case 4 * 8 + FRAMES__LEN:
            frames__once(x, &seen, 4);
            if (frames__len(x, &p, end, &a, &b) ||
                frames__dec_operands(x, a, b, &s->pre, &s->npre, frames__dec_operand_info))
                return x->code;
            break;
        case 5 * 8 + FRAMES__LEN:
            frames__once(x, &seen, 5);
            s->has_post = 1;
            if (frames__len(x, &p, end, &a, &b) ||
                frames__dec_operands(x, a, b, &s->post, &s->npost, frames__dec_operand_info))
                return x->code;
            break;
        case 6 * 8 + FRAMES__LEN:
            frames__once(x, &seen, 6);
            s->has_mode = 1;
            if (frames__bytes_field(x, &p, end, &s->mode)) return x->code;
            break;
        default:
            if (frames__unknown(x, &p, end, wt, f)) return x->code;
        }
    }
    if (!again) frames__require(x, seen, 0x1e);
    return 0;
}

/* A std_frame's operand lists as writers emit them, from p: `22 len pre`, then maybe
   `2a len post`. Each list is decoded in one pass, or else by the general list decoder.
   One function for both lists, so that the one-pass loop is there once and called once
   per frame. The position after the lists, or NULL: with x->code set when the general
   decoder found an error, else when the bytes are not such lists. */
static const uint8_t *frames__dec_std_lists(frames__dec *x, const uint8_t *p, const uint8_t *end,
                                            frames_std_frame *s) {
    const frames_operand **list = &s->pre;
    uint32_t *n = &s->npre;
    const uint8_t *q, *stop;
    if (p >= end || *p != 0x22) return NULL;
    for (;;) {
        if (!(q = frames__fast_len(p + 1, end, &stop))) return NULL;
        if (!frames__dec_operands_fast(x, q, stop, list, n) &&
            frames__dec_operands(x, q, stop, list, n, frames__dec_operand_info))
            return NULL;
        p = stop;
        if (list == &s->post || p >= end || *p != 0x2a) return p;
        s->has_post = 1;
        list = &s->post;
        n = &s->npost;
    }
}

/* std_frame as every writer emits it (see the fast path above): 1 when decoded, 0 when
   the general decoder must decode it (from a zeroed *s), or the error code of a list. */
FRAMES__INLINE int frames__dec_std_fast(frames__dec *x, const uint8_t *p, const uint8_t *end,
                                        frames_std_frame *s) {
    const uint8_t *q, *stop;
    uint64_t w;
    if (p >= end || *p != 0x08 || !(p = frames__fast_varint(p + 1, end, &s->address)))
        return 0;
    /* 10 tid 1a len with a thread id and an instruction length below 128, as one word */
    if (end - p >= 8 && ((w = frames__le64(p)) & 0x80ff80ffull) == 0x001a0010ull) {
        s->thread_id = w >> 8 & 0x7f;
        q = p + 4;
        if ((size_t)(w >> 24 & 0x7f) > (size_t)(end - q)) return 0;
        stop = q + (w >> 24 & 0x7f);
    } else if (p >= end || *p != 0x10 ||
               !(p = frames__fast_varint(p + 1, end, &s->thread_id)) ||
               p >= end || *p != 0x1a || !(q = frames__fast_len(p + 1, end, &stop))) {
        return 0;
    }
    s->rawbytes = frames_bytes_of(q, (size_t)(stop - q));
    if (!(p = frames__dec_std_lists(x, stop, end, s))) return x->code;
    if (p < end && *p == 0x32) {
        if (!(q = frames__fast_len(p + 1, end, &stop))) return 0;
        s->has_mode = 1;
        s->mode = frames_bytes_of(q, (size_t)(stop - q));
        p = stop;
    }
    return p == end;
}

FRAMES_DEF int frames_peek_std(const void *data, size_t len, uint64_t *address,
                               uint64_t *thread_id, size_t *nrawbytes) {
    const uint8_t *p = (const uint8_t *)data, *end = p + len, *q, *stop;
    /* `0a len` std_frame spanning the payload, then 08 address 10 thread 1a rawbytes */
    if (p >= end || *p != 0x0a || !(q = frames__fast_len(p + 1, end, &stop)) || stop != end) return 0;
    p = q;
    if (p >= end || *p != 0x08 || !(p = frames__fast_varint(p + 1, end, address))) return 0;
    if (p >= end || *p != 0x10 || !(p = frames__fast_varint(p + 1, end, thread_id))) return 0;
    if (p >= end || *p != 0x1a || !(q = frames__fast_len(p + 1, end, &stop))) return 0;
    *nrawbytes = (size_t)(stop - q);
    p = stop;
    /* 22 pre (required), then maybe 2a post, 32 mode: ascending, each once */
    if (p >= end || *p != 0x22 || !frames__fast_len(p + 1, end, &p)) return 0;
    if (p < end && *p == 0x2a && !frames__fast_len(p + 1, end, &p)) return 0;
    if (p < end && *p == 0x32 && !frames__fast_len(p + 1, end, &p)) return 0;
    return p == end;
}

/* Number of varints in a packed run. */
static size_t frames__count_varints(const uint8_t *p, const uint8_t *end) {
    size_t n = 0;
    for (; p < end; p++) n += *p < 0x80;
    return n;
}

/* argument_list: repeated sint64 elem = 1, unpacked (as written) or packed. */
static int frames__dec_args(frames__dec *x, const uint8_t *p, const uint8_t *end,
                            frames_syscall_frame *s) {
    const uint8_t *q = p, *a, *b;
    size_t count = 0, i = s->nargs;
    int64_t *args;
    uint32_t f, wt, last = 0;
    uint64_t v;
    while (q < end) { /* count */
        if (frames__tag(x, &q, end, &f, &wt, &last)) return x->code;
        last = 0;
        if (f == 1 && wt == FRAMES__LEN) {
            if (frames__len(x, &q, end, &a, &b)) return x->code;
            count += frames__count_varints(a, b);
        } else {
            count += f == 1 && wt == FRAMES__VARINT;
            if (frames__skip(x, &q, end, wt, f)) return x->code;
        }
    }
    if (count > UINT32_MAX - s->nargs) return frames__bad(x, p, FRAMES_E_LIMIT, "list too long");
    args = (int64_t *)frames__grow_list(x, s->args, s->nargs, count, sizeof *args, p);
    if (count && !args) return x->code;
    last = 0;
    while (p < end) {
        if (frames__tag(x, &p, end, &f, &wt, &last)) return x->code;
        if (f == 1 && wt == FRAMES__VARINT) {
            if (frames__varint(x, &p, end, &v)) return x->code;
            args[i++] = frames__unzigzag64(v);
        } else if (f == 1 && wt == FRAMES__LEN) {
            x->flags |= FRAMES_FF_PACKED | FRAMES_FF_NONCANONICAL;
            if (x->d->strict) return frames__bad(x, p, FRAMES_E_DECODE, "packed list (strict mode)");
            if (frames__len(x, &p, end, &a, &b)) return x->code;
            while (a < b) {
                if (frames__varint(x, &a, b, &v)) return x->code;
                args[i++] = frames__unzigzag64(v);
            }
        } else if (frames__unknown(x, &p, end, wt, f)) {
            return x->code;
        }
    }
    s->args = args;
    s->nargs = (uint32_t)i;
    return 0;
}

static int frames__dec_syscall(frames__dec *x, const uint8_t *p, const uint8_t *end,
                               frames_syscall_frame *s, int again) {
    uint32_t f, wt, last = 0, seen = 0;
    const uint8_t *a, *b;
    while (p < end) {
        if (frames__tag(x, &p, end, &f, &wt, &last)) return x->code;
        if (f >= 1 && f <= 3 && wt == FRAMES__VARINT) {
            frames__once(x, &seen, f);
            if (frames__u64_field(x, &p, end, f == 1 ? &s->address : f == 2 ? &s->thread_id
                                                                              : &s->number))
                return x->code;
        } else if (f == 4 && wt == FRAMES__LEN) {
            frames__once(x, &seen, 4);
            if (frames__len(x, &p, end, &a, &b) || frames__dec_args(x, a, b, s)) return x->code;
        } else if (frames__unknown(x, &p, end, wt, f)) {
            return x->code;
        }
    }
    if (!again) frames__require(x, seen, 0x1e);
    return 0;
}

static int frames__dec_exception(frames__dec *x, const uint8_t *p, const uint8_t *end,
                                 frames_exception_frame *e, int again) {
    uint32_t f, wt, last = 0, seen = 0;
    while (p < end) {
        if (frames__tag(x, &p, end, &f, &wt, &last)) return x->code;
        if (f >= 1 && f <= 4 && wt == FRAMES__VARINT) {
            uint64_t *dst = f == 1 ? &e->number : f == 2 ? &e->thread_id : f == 3 ? &e->from_addr
                                                                                 : &e->to_addr;
            frames__once(x, &seen, f);
            if (frames__u64_field(x, &p, end, dst)) return x->code;
            if (f == 2) e->has_thread_id = 1;
            if (f == 3) e->has_from_addr = 1;
            if (f == 4) e->has_to_addr = 1;
        } else if (frames__unknown(x, &p, end, wt, f)) {
            return x->code;
        }
    }
    if (!again) frames__require(x, seen, 0x2);
    return 0;
}

/* taint_intro: addr 1, taint_id 2, value 3, source_name 4, offset 5 */
static int frames__dec_taint_intro(frames__dec *x, const uint8_t *p, const uint8_t *end, void *item) {
    frames_taint_intro *t = (frames_taint_intro *)item;
    uint32_t f, wt, last = 0, seen = 0;
    while (p < end) {
        if (frames__tag(x, &p, end, &f, &wt, &last)) return x->code;
        switch (f * 8 + wt) {
        case 1 * 8 + FRAMES__VARINT:
        case 2 * 8 + FRAMES__VARINT:
        case 5 * 8 + FRAMES__VARINT:
            frames__once(x, &seen, f);
            if (frames__u64_field(x, &p, end, f == 1 ? &t->addr : f == 2 ? &t->taint_id
                                                                         : &t->offset))
                return x->code;
            if (f == 5) t->has_offset = 1;
            break;
        case 3 * 8 + FRAMES__LEN:
            frames__once(x, &seen, 3);
            t->has_value = 1;
            if (frames__bytes_field(x, &p, end, &t->value)) return x->code;
            break;
        case 4 * 8 + FRAMES__LEN:
            frames__once(x, &seen, 4);
            t->has_source_name = 1;
            if (frames__bytes_field(x, &p, end, &t->source_name)) return x->code;
            break;
        default:
            if (frames__unknown(x, &p, end, wt, f)) return x->code;
        }
    }
    frames__require(x, seen, 0x6);
    return 0;
}

typedef int (*frames__item_fn)(frames__dec *x, const uint8_t *p, const uint8_t *end, void *item);

/* A list message (taint_intro_list, tagged_value_lists: repeated elem = 1) of `size`-byte
   items decoded by `item`, appended to the n items at *list; the list, or NULL with
   x->code set. */
static void *frames__dec_item_list(frames__dec *x, const uint8_t *p, const uint8_t *end,
                                   const void *list, uint32_t *n, size_t size, frames__item_fn item) {
    size_t count, i = *n;
    uint8_t *items;
    uint32_t f, wt, last = 0;
    const uint8_t *a, *b;
    if (frames__count_elems(x, p, end, &count)) return NULL;
    if (count > UINT32_MAX - *n) {
        frames__bad(x, p, FRAMES_E_LIMIT, "list too long");
        return NULL;
    }
    items = (uint8_t *)frames__grow_list(x, list, *n, count, size, p);
    if (count && !items) return NULL;
    if (count) memset(items + *n * size, 0, count * size);
    while (p < end) {
        if (frames__tag(x, &p, end, &f, &wt, &last)) return NULL;
        if (f == 1 && wt == FRAMES__LEN) {
            if (frames__len(x, &p, end, &a, &b) || item(x, a, b, items + i++ * size)) return NULL;
        } else if (frames__unknown(x, &p, end, wt, f)) {
            return NULL;
        }
    }
    *n = (uint32_t)i;
    return items;
}

/* taint_intro_frame / key_frame: one list message as field 1 (required), appended to the
   n items at *list. */
static int frames__dec_list_frame(frames__dec *x, const uint8_t *p, const uint8_t *end, int again,
                                  const void **list, uint32_t *n, size_t size, frames__item_fn item) {
    uint32_t f, wt, last = 0, seen = 0;
    const uint8_t *a, *b;
    while (p < end) {
        if (frames__tag(x, &p, end, &f, &wt, &last)) return x->code;
        if (f == 1 && wt == FRAMES__LEN) {
            void *items;
            frames__once(x, &seen, 1);
            if (frames__len(x, &p, end, &a, &b) ||
                (!(items = frames__dec_item_list(x, a, b, *list, n, size, item)) && x->code))
                return x->code;
            *list = items;
        } else if (frames__unknown(x, &p, end, wt, f)) {
            return x->code;
        }
    }
    if (!again) frames__require(x, seen, 0x2);
    return 0;
}

static int frames__dec_modload(frames__dec *x, const uint8_t *p, const uint8_t *end,
                               frames_modload_frame *m, int again) {
    uint32_t f, wt, last = 0, seen = 0;
    while (p < end) {
        if (frames__tag(x, &p, end, &f, &wt, &last)) return x->code;
        if (f == 1 && wt == FRAMES__LEN) {
            frames__once(x, &seen, 1);
            if (frames__bytes_field(x, &p, end, &m->module_name)) return x->code;
        } else if ((f == 2 || f == 3) && wt == FRAMES__VARINT) {
            frames__once(x, &seen, f);
            if (frames__u64_field(x, &p, end, f == 2 ? &m->low_address : &m->high_address))
                return x->code;
        } else if (frames__unknown(x, &p, end, wt, f)) {
            return x->code;
        }
    }
    if (!again) frames__require(x, seen, 0xe);
    return 0;
}

/* value_source_tag (variant): no_thread_id = 1, thread_id = 2 */
static int frames__dec_source_tag(frames__dec *x, const uint8_t *p, const uint8_t *end,
                                  frames_tagged_values *t) {
    uint32_t f, wt, last = 0, seen = 0;
    while (p < end) {
        if (frames__tag(x, &p, end, &f, &wt, &last)) return x->code;
        if (f == 1 && wt == FRAMES__VARINT) {
            if (frames__bool_field(x, &p, end, &t->no_thread_id)) return x->code;
            t->tag_set |= FRAMES_TAG_NO_THREAD_ID;
        } else if (f == 2 && wt == FRAMES__VARINT) {
            if (frames__u64_field(x, &p, end, &t->thread_id)) return x->code;
            t->tag_set |= FRAMES_TAG_THREAD_ID;
        } else {
            x->flags |= FRAMES_FF_UNKNOWN_OPTION;
            if (frames__unknown(x, &p, end, wt, f)) return x->code;
            seen |= 1u << 31;
            continue;
        }
        frames__once(x, &seen, f);
    }
    frames__variant(x, seen);
    return 0;
}

/* tagged_value_list: value_source_tag = 1, value_list = 2 */
static int frames__dec_tagged(frames__dec *x, const uint8_t *p, const uint8_t *end, void *item) {
    frames_tagged_values *t = (frames_tagged_values *)item;
    uint32_t f, wt, last = 0, seen = 0;
    const uint8_t *a, *b;
    while (p < end) {
        if (frames__tag(x, &p, end, &f, &wt, &last)) return x->code;
        if (f == 1 && wt == FRAMES__LEN) {
            frames__once(x, &seen, 1);
            if (frames__len(x, &p, end, &a, &b) || frames__dec_source_tag(x, a, b, t))
                return x->code;
        } else if (f == 2 && wt == FRAMES__LEN) {
            frames__once(x, &seen, 2);
            if (frames__len(x, &p, end, &a, &b) ||
                frames__dec_operands(x, a, b, &t->values, &t->count, frames__dec_value_info))
                return x->code;
        } else if (frames__unknown(x, &p, end, wt, f)) {
            return x->code;
        }
    }
    frames__require(x, seen, 0x6);
    return 0;
}

/* Remember the first option of `frame` this library does not know. */
static int frames__dec_unknown_option(frames__dec *x, const uint8_t **pp, const uint8_t *end,
                                      uint32_t f, uint32_t wt, frames_frame *fr) {
    const uint8_t *start = *pp;
    int first = !(fr->present & (1u << FRAMES_KIND_UNKNOWN));
    uint32_t noncanonical = x->flags & FRAMES_FF_NONCANONICAL;
    x->flags |= FRAMES_FF_UNKNOWN_OPTION;
    if (frames__skip(x, pp, end, wt, f)) return x->code;
    /* a group is re-emitted verbatim: what skipping saw inside it changes nothing */
    if (wt == FRAMES__SGROUP) x->flags = (x->flags & ~FRAMES_FF_NONCANONICAL) | noncanonical;
    if (!first) { /* only the first one is kept, so re-encoding drops this one */
        x->flags |= FRAMES_FF_NONCANONICAL;
        return 0;
    }
    fr->present |= 1u << FRAMES_KIND_UNKNOWN;
    fr->unknown.field = f;
    fr->unknown.wire_type = wt;
    if (wt == FRAMES__VARINT) {
        frames__varint(x, &start, end, &fr->unknown.scalar);
    } else if (wt == FRAMES__I64) {
        fr->unknown.scalar = frames__le64(start);
    } else if (wt == FRAMES__I32) {
        fr->unknown.scalar = (uint64_t)start[0] | (uint64_t)start[1] << 8 |
                             (uint64_t)start[2] << 16 | (uint64_t)start[3] << 24;
    } else if (wt == FRAMES__LEN) {
        const uint8_t *a, *b;
        frames__len(x, &start, end, &a, &b);
        fr->unknown.payload = frames_bytes_of(a, (size_t)(b - a));
    } else {
        fr->unknown.payload = frames_bytes_of(start, (size_t)(*pp - start));
    }
    return 0;
}

/* frame (variant): std 1, syscall 2, exception 3, taint_intro 4, modload 5, key 6 */
static int frames__dec_frame(frames__dec *x, const uint8_t *p, const uint8_t *end,
                             frames_frame *fr) {
    uint32_t f, wt, last = 0, k;
    const uint8_t *a, *b;
    if (p < end && *p == 0x0a && (a = frames__fast_len(p + 1, end, &b)) && b == end) {
        int rc = frames__dec_std_fast(x, a, b, &fr->std);   /* the frame is one std_frame */
        if (rc < 0) return rc;
        if (rc > 0) {
            fr->present = 1u << FRAMES_KIND_STD;
            fr->kind = FRAMES_KIND_STD;
            return 0;
        }
        memset(&fr->std, 0, sizeof fr->std);
    }
    while (p < end) {
        if (frames__tag(x, &p, end, &f, &wt, &last)) return x->code;
        if (f >= 1 && f <= 6 && wt == FRAMES__LEN) {
            int again = (fr->present >> f) & 1;
            if (again) x->flags |= FRAMES_FF_DUPLICATE | FRAMES_FF_NONCANONICAL;
            /* an unknown option of the same number came first: the encoder puts it after */
            if (((fr->present >> FRAMES_KIND_UNKNOWN) & 1) && fr->unknown.field == f)
                x->flags |= FRAMES_FF_NONCANONICAL;
            fr->present |= 1u << f;
            if (frames__len(x, &p, end, &a, &b)) return x->code;
            switch (f) {
            case 1:
                if (!again) {
                    int rc = frames__dec_std_fast(x, a, b, &fr->std);
                    if (rc != 0) break;   /* decoded, or an error in x->code */
                    memset(&fr->std, 0, sizeof fr->std);
                }
                frames__dec_std(x, a, b, &fr->std, again);
                break;
            case 2: frames__dec_syscall(x, a, b, &fr->syscall, again); break;
            case 3: frames__dec_exception(x, a, b, &fr->exception, again); break;
            case 4: {
                const void *l = fr->taint_intro.intros;
                frames__dec_list_frame(x, a, b, again, &l, &fr->taint_intro.count,
                                       sizeof *fr->taint_intro.intros, frames__dec_taint_intro);
                fr->taint_intro.intros = (const frames_taint_intro *)l;
                break;
            }
            case 5: frames__dec_modload(x, a, b, &fr->modload, again); break;
            default: {
                const void *l = fr->key.lists;
                frames__dec_list_frame(x, a, b, again, &l, &fr->key.count, sizeof *fr->key.lists,
                                       frames__dec_tagged);
                fr->key.lists = (const frames_tagged_values *)l;
                break;
            }
            }
            if (x->code) return x->code;
        } else if (frames__dec_unknown_option(x, &p, end, f, wt, fr)) {
            return x->code;
        }
    }
    frames__variant(x, fr->present);
    fr->kind = FRAMES_KIND_NONE;
    for (k = 1; k <= 7; k++)
        if (fr->present & (1u << k)) {
            fr->kind = (frames_kind)k;
            break;
        }
    return 0;
}

static int frames__dec_finish(frames__dec *x, frames_error *err, const char *msg) {
    if (x->code)
        return frames__fail(err, x->code, FRAMES_NO_POS, FRAMES_NO_POS, "%s: %s at byte %lu",
                            msg, x->what, (unsigned long)x->at);
    if (x->d->strict && (x->flags & FRAMES_FF_PIQIRUN_REJECTS))
        return frames__fail(err, FRAMES_E_DECODE, FRAMES_NO_POS, FRAMES_NO_POS,
                            "%s: rejected in strict mode (flags 0x%x)", msg,
                            (unsigned)(x->flags & FRAMES_FF_PIQIRUN_REJECTS));
    return FRAMES_OK;
}

/* memset of a whole frames_frame (272 bytes) became `rep stosq` with gcc -O2 on x86-64,
   whose start-up made it cost 16 ns there, a quarter of decoding a frame; in 16- or
   64-byte pieces (vector stores) it takes 6-9 ns. */
FRAMES__INLINE void frames__zero_frame(frames_frame *f) {
    unsigned char *b = (unsigned char *)f;
    /* unrolled by hand: gcc -O2 keeps a loop over the 64-byte pieces otherwise */
    memset(b, 0, 64);
    memset(b + 64, 0, 64);
    memset(b + 128, 0, 64);
    memset(b + 192, 0, 64);
    memset(b + 256, 0, sizeof *f - 256);
}

FRAMES_DEF int frames_frame_peek_kind(const void *data, size_t len) {
    /* a frame is one option: its tag is field number << 3 | wire type 2, one byte */
    const uint8_t *p = (const uint8_t *)data;
    unsigned field = len ? p[0] >> 3 : 0;
    if (!len || (p[0] & 0x87u) != FRAMES__LEN || field < FRAMES_KIND_STD || field > FRAMES_KIND_KEY)
        return FRAMES_KIND_NONE;
    return (int)field;
}

FRAMES_DEF int frames_decode_frame(frames_decoder *d, const void *data, size_t len,
                                   frames_frame *out, frames_error *err) {
    frames__dec x;
    int rc;
    x.d = d;
    x.base = (const uint8_t *)data;
    x.flags = 0;
    x.code = 0;
    x.at = 0;
    x.what = "";
    if (FRAMES__UNLIKELY(d->frames__spill != NULL)) {
        frames__arena_reset(d);
    } else {   /* what frames__arena_reset does then, without the call */
        d->frames__used = 0;
        d->frames__peak = 0;
    }
    frames__zero_frame(out);
    frames__dec_frame(&x, x.base, x.base + len, out);
    out->flags = x.flags;
    if (FRAMES__LIKELY(x.code == 0 && !d->strict)) {
        if (err) frames__clear_error(err);
        return FRAMES_OK;
    }
    rc = frames__dec_finish(&x, err, "bad frame");
    if (rc == FRAMES_OK && err) frames__clear_error(err);
    return rc;
}

/* --------------------------------------------------------------------------------------
   meta frame
   -------------------------------------------------------------------------------------- */

/* Appends the field-`field` strings of a message to (*list, *n); counted first so that a
   long list costs one allocation. */
static int frames__dec_strings(frames__dec *x, const uint8_t *p, const uint8_t *end,
                               uint32_t field, const frames_bytes **list, uint32_t *n) {
    const uint8_t *q = p;
    size_t count = 0, i = *n;
    uint32_t f, wt, last = 0;
    frames_bytes *arr;
    while (q < end) {
        if (frames__tag(x, &q, end, &f, &wt, &last)) return x->code;
        last = 0;
        count += f == field && wt == FRAMES__LEN;
        if (frames__skip(x, &q, end, wt, f)) return x->code;
    }
    if (count == 0) return 0;
    if (count > UINT32_MAX - *n) return frames__bad(x, p, FRAMES_E_LIMIT, "list too long");
    arr = (frames_bytes *)frames__grow_list(x, *list, *n, count, sizeof *arr, p);
    if (!arr) return x->code;
    while (p < end) {
        if (frames__tag(x, &p, end, &f, &wt, &last)) return x->code;
        last = 0;
        if (f == field && wt == FRAMES__LEN) {
            if (frames__bytes_field(x, &p, end, &arr[i++])) return x->code;
        } else if (frames__skip(x, &p, end, wt, f)) {
            return x->code;
        }
    }
    *list = arr;
    *n = (uint32_t)i;
    return 0;
}

/* tracer / target: name|path 1, args 2, envp 3, version|md5sum 4 */
static int frames__dec_program(frames__dec *x, const uint8_t *p, const uint8_t *end,
                               frames_bytes *first, const frames_bytes **args, uint32_t *nargs,
                               const frames_bytes **envp, uint32_t *nenvp, frames_bytes *fourth) {
    uint32_t f, wt, last = 0, seen = 0;
    const uint8_t *start = p;
    while (p < end) {
        if (frames__tag(x, &p, end, &f, &wt, &last)) return x->code;
        if ((f == 1 || f == 4) && wt == FRAMES__LEN) {
            frames__once(x, &seen, f);
            if (frames__bytes_field(x, &p, end, f == 1 ? first : fourth)) return x->code;
        } else if ((f == 2 || f == 3) && wt == FRAMES__LEN) {
            if (frames__skip(x, &p, end, wt, f)) return x->code;
        } else if (frames__unknown(x, &p, end, wt, f)) {
            return x->code;
        }
    }
    if (frames__dec_strings(x, start, end, 2, args, nargs) ||
        frames__dec_strings(x, start, end, 3, envp, nenvp))
        return x->code;
    frames__require(x, seen, 0x12);
    return 0;
}

static int frames__dec_fstats(frames__dec *x, const uint8_t *p, const uint8_t *end,
                              frames_meta *m) {
    uint32_t f, wt, last = 0, seen = 0;
    while (p < end) {
        if (frames__tag(x, &p, end, &f, &wt, &last)) return x->code;
        if (f == 1 && wt == FRAMES__VARINT) {
            frames__once(x, &seen, 1);
            if (frames__sint32_field(x, &p, end, &m->fstats_size)) return x->code;
        } else if (f >= 2 && f <= 4 && wt == FRAMES__I64) {
            frames__once(x, &seen, f);
            if (frames__double_field(x, &p, end, f == 2 ? &m->fstats_atime
                                                 : f == 3 ? &m->fstats_mtime : &m->fstats_ctime))
                return x->code;
        } else if (frames__unknown(x, &p, end, wt, f)) {
            return x->code;
        }
    }
    frames__require(x, seen, 0x1e);
    return 0;
}

/* meta_frame: tracer 1, target 2, fstats 3, user 4, host 5, time 6 */
static int frames__dec_meta(frames__dec *x, const uint8_t *p, const uint8_t *end,
                            frames_meta *m) {
    uint32_t f, wt, last = 0, seen = 0;
    const uint8_t *a, *b;
    while (p < end) {
        if (frames__tag(x, &p, end, &f, &wt, &last)) return x->code;
        switch (f * 8 + wt) {
        case 1 * 8 + FRAMES__LEN:
            frames__once(x, &seen, 1);
            if (frames__len(x, &p, end, &a, &b) ||
                frames__dec_program(x, a, b, &m->tracer_name, &m->tracer_args, &m->ntracer_args,
                                    &m->tracer_envp, &m->ntracer_envp, &m->tracer_version))
                return x->code;
            break;
        case 2 * 8 + FRAMES__LEN:
            frames__once(x, &seen, 2);
            if (frames__len(x, &p, end, &a, &b) ||
                frames__dec_program(x, a, b, &m->target_path, &m->target_args, &m->ntarget_args,
                                    &m->target_envp, &m->ntarget_envp, &m->target_md5sum))
                return x->code;
            break;
        case 3 * 8 + FRAMES__LEN:
            frames__once(x, &seen, 3);
            if (frames__len(x, &p, end, &a, &b) || frames__dec_fstats(x, a, b, m)) return x->code;
            break;
        case 4 * 8 + FRAMES__LEN:
        case 5 * 8 + FRAMES__LEN:
            frames__once(x, &seen, f);
            if (frames__bytes_field(x, &p, end, f == 4 ? &m->user : &m->host)) return x->code;
            break;
        case 6 * 8 + FRAMES__I64:
            frames__once(x, &seen, 6);
            if (frames__double_field(x, &p, end, &m->time)) return x->code;
            break;
        default:
            if (frames__unknown(x, &p, end, wt, f)) return x->code;
        }
    }
    frames__require(x, seen, 0x7e);
    return 0;
}

FRAMES_DEF int frames_decode_meta(frames_decoder *d, const void *data, size_t len,
                                  frames_meta *out, frames_error *err) {
    frames__dec x;
    int rc;
    x.d = d;
    x.base = (const uint8_t *)data;
    x.flags = 0;
    x.code = 0;
    x.at = 0;
    x.what = "";
    frames__arena_reset(d);
    memset(out, 0, sizeof *out);
    frames__dec_meta(&x, x.base, x.base + len, out);
    out->flags = x.flags;
    rc = frames__dec_finish(&x, err, "bad meta frame");
    if (rc == FRAMES_OK && err) frames__clear_error(err);
    return rc;
}

/* --------------------------------------------------------------------------------------
   message encoders
   -------------------------------------------------------------------------------------- */
/* Messages are written back to front: a submessage's content is written first, and its
   length prefix and tag are then put in front of it, so sizes are known without a
   separate sizing pass. Fields therefore go in descending order here, which yields the
   ascending order libprotobuf writes. The running length `len` counts every byte produced,
   also past the buffer, so that the exact size needed can be reported.
   `len` is passed and returned by value rather than kept in a struct: every byte stored
   through a uint8_t pointer may alias memory, so a length kept in memory would be
   reloaded and stored again around each byte (this doubled the cost of encoding). */

typedef struct frames__enc {
    uint8_t *end;   /* one past the buffer; bytes go to end[-len] */
    size_t cap;     /* buffer size (0 when only measuring) */
} frames__enc;

#if defined(__GNUC__) || defined(__clang__)
static inline size_t frames__varint_size(uint64_t v) {
    return (size_t)((64 - __builtin_clzll(v | 1)) * 9 + 64) / 64;   /* ceil(bits / 7) */
}
#else
static inline size_t frames__varint_size(uint64_t v) {
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}
#endif

/* Copy without a call for the short strings and values that make up most frames. */
FRAMES__INLINE void frames__copy(uint8_t *dst, const uint8_t *src, size_t n) {
    if (n > 16) {
        memcpy(dst, src, n);
    } else if (n >= 8) {
        uint64_t a, b;
        memcpy(&a, src, 8);
        memcpy(&b, src + n - 8, 8);
        memcpy(dst, &a, 8);
        memcpy(dst + n - 8, &b, 8);
    } else if (n >= 4) {
        uint32_t a, b;
        memcpy(&a, src, 4);
        memcpy(&b, src + n - 4, 4);
        memcpy(dst, &a, 4);
        memcpy(dst + n - 4, &b, 4);
    } else if (n) {
        dst[0] = src[0];
        dst[n / 2] = src[n / 2];
        dst[n - 1] = src[n - 1];
    }
}

FRAMES__INLINE size_t frames__put(frames__enc e, size_t len, const void *src, size_t n) {
    len += n;
    if (FRAMES__LIKELY(len <= e.cap && n)) frames__copy(e.end - len, (const uint8_t *)src, n);
    return len;
}

FRAMES__INLINE size_t frames__put_byte(frames__enc e, size_t len, uint8_t b) {
    len++;
    if (FRAMES__LIKELY(len <= e.cap)) e.end[-(ptrdiff_t)len] = b;
    return len;
}

FRAMES__INLINE size_t frames__put_varint(frames__enc e, size_t len, uint64_t v) {
    uint8_t *p;
    if (v < 0x80) return frames__put_byte(e, len, (uint8_t)v);
    len += frames__varint_size(v);
    if (FRAMES__LIKELY(len <= e.cap)) {
        p = e.end - len;
        while (v >= 0x80) {
            *p++ = (uint8_t)(v | 0x80);
            v >>= 7;
        }
        *p = (uint8_t)v;
    }
    return len;
}

FRAMES__INLINE size_t frames__put_tag(frames__enc e, size_t len, uint32_t field, uint32_t wt) {
    return frames__put_varint(e, len, (uint64_t)field << 3 | wt);
}

/* Two bytes at once: the tag of a field <= 15 and a one-byte value or length. */
FRAMES__INLINE size_t frames__put_pair(frames__enc e, size_t len, uint8_t tag, uint8_t v) {
    len += 2;
    if (FRAMES__LIKELY(len <= e.cap)) {
        e.end[-(ptrdiff_t)len] = tag;
        e.end[1 - (ptrdiff_t)len] = v;
    }
    return len;
}

/* A tag and a varint (a scalar, or the length of what follows). */
FRAMES__INLINE size_t frames__put_field(frames__enc e, size_t len, uint32_t field, uint32_t wt,
                                       uint64_t v) {
    if (FRAMES__LIKELY(v < 0x80 && field < 16))
        return frames__put_pair(e, len, (uint8_t)(field << 3 | wt), (uint8_t)v);
    return frames__put_tag(e, frames__put_varint(e, len, v), field, wt);
}

FRAMES__INLINE size_t frames__put_u64(frames__enc e, size_t len, uint32_t field, uint64_t v) {
    return frames__put_field(e, len, field, FRAMES__VARINT, v);
}

FRAMES__INLINE size_t frames__put_bool(frames__enc e, size_t len, uint32_t field, uint8_t v) {
    return frames__put_pair(e, len, (uint8_t)(field << 3 | FRAMES__VARINT), v ? 1 : 0);
}

FRAMES__INLINE size_t frames__put_sint32(frames__enc e, size_t len, uint32_t field, int32_t v) {
    return frames__put_u64(e, len, field, frames__zigzag32(v));
}

FRAMES__INLINE size_t frames__put_bytes(frames__enc e, size_t len, uint32_t field, frames_bytes b) {
    return frames__put_field(e, frames__put(e, len, b.ptr, b.len), field, FRAMES__LEN, b.len);
}

static size_t frames__put_double(frames__enc e, size_t len, uint32_t field, double d) {
    uint8_t tmp[8];
    frames__put_le64(tmp, frames__bits_of(d));
    return frames__put_tag(e, frames__put(e, len, tmp, 8), field, FRAMES__I64);
}

/* Close a submessage whose content started when the length was `mark`. */
FRAMES__INLINE size_t frames__put_message(frames__enc e, size_t len, uint32_t field, size_t mark) {
    return frames__put_field(e, len, field, FRAMES__LEN, len - mark);
}

static inline size_t frames__enc_specific(frames__enc e, size_t len, const frames_operand *op) {
    size_t mark;
    if (op->spec & FRAMES_REG) {
        mark = len;
        len = frames__put_bytes(e, len, 1, op->name);
        len = frames__put_message(e, len, 2, mark);
    }
    if (op->spec & FRAMES_MEM) {
        mark = len;
        len = frames__put_u64(e, len, 1, op->address);
        len = frames__put_message(e, len, 1, mark);
    }
    return len;
}

/* taint_info; `required`: an unset taint is written as no_taint: true */
static inline size_t frames__enc_taint(frames__enc e, size_t len, const frames_taint *t,
                                       int required) {
    if (t->set == 0 && required) return frames__put_pair(e, len, 0x08, 1);
    if (t->set & FRAMES_TAINT_MULTIPLE) len = frames__put_bool(e, len, 3, t->multiple);
    if (t->set & FRAMES_TAINT_ID) len = frames__put_u64(e, len, 2, t->id);
    if (t->set & FRAMES_TAINT_NONE) len = frames__put_bool(e, len, 1, t->no_taint);
    return len;
}

/* A varint of at most 8 bytes (v < 2^56) as the little-endian word of its n bytes: the
   7-bit groups spread out by masks and shifts, and the continuation bits of all bytes
   but the last. Stored as a whole word, its bytes past n are overwritten afterwards. */
FRAMES__INLINE uint64_t frames__varint_word(uint64_t v, size_t n) {
    if (n == 1) return v;
    if (n == 2) return (v & 0x7f) | 0x80 | (v << 1 & 0x7f00);   /* bit length 64 */
    v = (v & 0x000000000fffffffull) | (v & 0x00fffffff0000000ull) << 4;
    v = (v & 0x00003fff00003fffull) | (v & 0x0fffc0000fffc000ull) << 2;
    v = (v & 0x007f007f007f007full) | (v & 0x3f803f803f803f80ull) << 1;
    return v | (0x8080808080808080ull & ((1ull << (8 * (n - 1))) - 1));
}

/* operand_info as tracers write it (a register name below 124 bytes or a memory address,
   a value below 128 bytes, no taint): its size is known up front, so it is written front
   to back in one piece with a single bounds check, the fixed bytes a word at a time
   (each word store may run past its field into bytes written right after it). Same
   bytes as the general path. */
static inline int frames__operand_is_plain(const frames_operand *op) {
    return (op->spec == FRAMES_REG ? op->name.len < 124 : op->spec == FRAMES_MEM) &&
           op->value.len < 128 && (op->taint.set == 0 || op->taint.set == FRAMES_TAINT_NONE);
}

/* Writes a plain operand's operand_info at p: `spec` bytes of operand_info_specific,
   then bit_length (zz, zn bytes), usage, taint_info and the value. */
FRAMES__INLINE void frames__write_plain(uint8_t *p, const frames_operand *op, size_t spec,
                                        uint64_t zz, size_t zn) {
    size_t vn = op->value.len;
    /* plain operands are at least 24 bytes: every word store stays inside the operand */
    if (op->spec == FRAMES_REG) {   /* 0a l 12 l-2 0a l-4 name */
        frames__put_le64(p, 0x000a0012000aull + (spec - 2) * 0x010001000100ull -
                                0x040002000000ull);
        frames__copy(p + 6, op->name.ptr, op->name.len);
    } else {                        /* 0a l 0a l-2 08 address */
        uint64_t a = op->address;
        frames__put_le64(p, 0x08000a000aull + (spec - 2) * 0x01000100ull - 0x02000000ull);
        if (FRAMES__LIKELY(spec - 5 <= 8)) {
            frames__put_le64(p + 5, frames__varint_word(a, spec - 5));
        } else {
            uint8_t *q = p + 5;
            for (; a >= 0x80; a >>= 7) *q++ = (uint8_t)(a | 0x80);
            *q = (uint8_t)a;
        }
    }
    p += spec;
    p[0] = 0x10;                    /* bit_length: at most 5 bytes */
    frames__put_le64(p + 1, frames__varint_word(zz, zn));
    p += 1 + zn;
    /* 1a 08 08 r 10 w 18 i | 20 b 22 02 08 t 2a len: usage, taint_info { no_taint }
       (unset means true), the value's tag and length */
    frames__put_le64(p, 0x001800100008081aull | (uint64_t)(op->read != 0) << 24 |
                            (uint64_t)(op->written != 0) << 40 | (uint64_t)(op->index != 0) << 56);
    frames__put_le64(p + 8, 0x002a000802220020ull | (uint64_t)(op->base != 0) << 8 |
                                (uint64_t)(op->taint.set == 0 || op->taint.no_taint) << 40 |
                                (uint64_t)vn << 56);
    frames__copy(p + 16, op->value.ptr, vn);
}

FRAMES__INLINE size_t frames__plain_spec(const frames_operand *op) {
    return op->spec == FRAMES_REG ? 6 + op->name.len : 5 + frames__varint_size(op->address);
}

FRAMES__INLINE size_t frames__enc_plain_operand(frames__enc e, size_t len,
                                                const frames_operand *op) {
    uint64_t zz = frames__zigzag32(op->bit_length);
    size_t zn = frames__varint_size(zz), spec = frames__plain_spec(op);
    len += spec + 1 + zn + 16 + op->value.len;
    if (FRAMES__LIKELY(len <= e.cap)) frames__write_plain(e.end - len, op, spec, zz, zn);
    return len;
}

/* A plain operand as a list element: `0a len` and its operand_info, with one bounds
   check when len < 128 (short names and values). */
FRAMES__INLINE size_t frames__enc_plain_element(frames__enc e, size_t len,
                                                const frames_operand *op) {
    uint64_t zz = frames__zigzag32(op->bit_length);
    size_t zn = frames__varint_size(zz), spec = frames__plain_spec(op);
    size_t total = spec + 1 + zn + 16 + op->value.len;
    uint8_t *p;
    if (FRAMES__UNLIKELY(total >= 128)) {
        size_t mark = len;
        return frames__put_message(e, frames__enc_plain_operand(e, len, op), 1, mark);
    }
    len += 2 + total;
    if (FRAMES__UNLIKELY(len > e.cap)) return len;
    p = e.end - len;
    p[0] = 0x0a;
    p[1] = (uint8_t)total;
    frames__write_plain(p + 2, op, spec, zz, zn);
    return len;
}

static inline size_t frames__enc_operand_info(frames__enc e, size_t len, const frames_operand *op) {
    size_t mark;
    if (FRAMES__LIKELY(frames__operand_is_plain(op))) return frames__enc_plain_operand(e, len, op);
    len = frames__put_bytes(e, len, 5, op->value);
    mark = len;
    len = frames__enc_taint(e, len, &op->taint, 1);
    len = frames__put_message(e, len, 4, mark);
    /* operand_usage is always 8 bytes: 08 r 10 w 18 i 20 b, and its tag and length */
    len = frames__put_pair(e, len, 0x20, op->base ? 1 : 0);
    len = frames__put_pair(e, len, 0x18, op->index ? 1 : 0);
    len = frames__put_pair(e, len, 0x10, op->written ? 1 : 0);
    len = frames__put_pair(e, len, 0x08, op->read ? 1 : 0);
    len = frames__put_pair(e, len, 0x1a, 8);
    len = frames__put_sint32(e, len, 2, op->bit_length);
    mark = len;
    len = frames__enc_specific(e, len, op);
    return frames__put_message(e, len, 1, mark);
}

static inline size_t frames__enc_value_info(frames__enc e, size_t len, const frames_operand *op) {
    size_t mark;
    len = frames__put_bytes(e, len, 4, op->value);
    if (op->taint.set) {
        mark = len;
        len = frames__enc_taint(e, len, &op->taint, 0);
        len = frames__put_message(e, len, 3, mark);
    }
    len = frames__put_sint32(e, len, 2, op->bit_length);
    mark = len;
    len = frames__enc_specific(e, len, op);
    return frames__put_message(e, len, 1, mark);
}

/* A list message (repeated elem = 1) of operand_info or value_info as field `field`.
   *irregular counts the operand_info elements that are not plain. */
static size_t frames__enc_operand_list(frames__enc e, size_t len, uint32_t field,
                                       const frames_operand *ops, uint32_t n, int value_info,
                                       uint32_t *irregular) {
    size_t list_mark = len, mark;
    uint32_t i = n;
    while (i-- > 0) {
        if (!value_info && FRAMES__LIKELY(frames__operand_is_plain(&ops[i]))) {
            len = frames__enc_plain_element(e, len, &ops[i]);
            continue;
        }
        if (!value_info) ++*irregular;
        mark = len;
        len = value_info ? frames__enc_value_info(e, len, &ops[i])
                         : frames__enc_operand_info(e, len, &ops[i]);
        len = frames__put_message(e, len, 1, mark);
    }
    return frames__put_message(e, len, field, list_mark);
}

/* *irregular: as for frames__enc_operand_list; post operands that are not written count
   too (frames_validate_frame checks them all the same) */
static size_t frames__enc_std(frames__enc e, size_t len, const frames_std_frame *s,
                              uint32_t *irregular) {
    if (!s->has_post && s->npost) ++*irregular;
    if (s->has_mode) len = frames__put_bytes(e, len, 6, s->mode);
    if (s->has_post) len = frames__enc_operand_list(e, len, 5, s->post, s->npost, 0, irregular);
    len = frames__enc_operand_list(e, len, 4, s->pre, s->npre, 0, irregular);
    len = frames__put_bytes(e, len, 3, s->rawbytes);
    len = frames__put_u64(e, len, 2, s->thread_id);
    return frames__put_u64(e, len, 1, s->address);
}

static size_t frames__enc_syscall(frames__enc e, size_t len, const frames_syscall_frame *s) {
    size_t mark = len;
    uint32_t i = s->nargs;
    while (i-- > 0) len = frames__put_u64(e, len, 1, frames__zigzag64(s->args[i]));
    len = frames__put_message(e, len, 4, mark);
    len = frames__put_u64(e, len, 3, s->number);
    len = frames__put_u64(e, len, 2, s->thread_id);
    return frames__put_u64(e, len, 1, s->address);
}

static size_t frames__enc_exception(frames__enc e, size_t len, const frames_exception_frame *x) {
    if (x->has_to_addr) len = frames__put_u64(e, len, 4, x->to_addr);
    if (x->has_from_addr) len = frames__put_u64(e, len, 3, x->from_addr);
    if (x->has_thread_id) len = frames__put_u64(e, len, 2, x->thread_id);
    return frames__put_u64(e, len, 1, x->number);
}

static size_t frames__enc_taint_intro_frame(frames__enc e, size_t len,
                                            const frames_taint_intro_frame *t) {
    size_t list_mark = len, mark;
    uint32_t i = t->count;
    while (i-- > 0) {
        const frames_taint_intro *ti = &t->intros[i];
        mark = len;
        if (ti->has_offset) len = frames__put_u64(e, len, 5, ti->offset);
        if (ti->has_source_name) len = frames__put_bytes(e, len, 4, ti->source_name);
        if (ti->has_value) len = frames__put_bytes(e, len, 3, ti->value);
        len = frames__put_u64(e, len, 2, ti->taint_id);
        len = frames__put_u64(e, len, 1, ti->addr);
        len = frames__put_message(e, len, 1, mark);
    }
    return frames__put_message(e, len, 1, list_mark);
}

static size_t frames__enc_modload(frames__enc e, size_t len, const frames_modload_frame *m) {
    len = frames__put_u64(e, len, 3, m->high_address);
    len = frames__put_u64(e, len, 2, m->low_address);
    return frames__put_bytes(e, len, 1, m->module_name);
}

static size_t frames__enc_key(frames__enc e, size_t len, const frames_key_frame *k) {
    size_t lists_mark = len, mark, tag_mark;
    uint32_t i = k->count;
    while (i-- > 0) {
        const frames_tagged_values *t = &k->lists[i];
        mark = len;
        len = frames__enc_operand_list(e, len, 2, t->values, t->count, 1, NULL);
        tag_mark = len;
        if (t->tag_set & FRAMES_TAG_THREAD_ID) len = frames__put_u64(e, len, 2, t->thread_id);
        if (t->tag_set & FRAMES_TAG_NO_THREAD_ID) len = frames__put_bool(e, len, 1, t->no_thread_id);
        len = frames__put_message(e, len, 1, tag_mark);
        len = frames__put_message(e, len, 1, mark);
    }
    return frames__put_message(e, len, 1, lists_mark);
}

static size_t frames__enc_unknown(frames__enc e, size_t len, const frames_unknown_option *u) {
    uint8_t tmp[8];
    switch (u->wire_type) {
    case FRAMES__VARINT: len = frames__put_varint(e, len, u->scalar); break;
    case FRAMES__I64:
        frames__put_le64(tmp, u->scalar);
        len = frames__put(e, len, tmp, 8);
        break;
    case FRAMES__I32:
        frames__put_le64(tmp, u->scalar);
        len = frames__put(e, len, tmp, 4);
        break;
    case FRAMES__LEN:
        len = frames__put(e, len, u->payload.ptr, u->payload.len);
        len = frames__put_varint(e, len, u->payload.len);
        break;
    default: /* a group: its raw bytes including the end tag */
        len = frames__put(e, len, u->payload.ptr, u->payload.len);
        break;
    }
    return frames__put_tag(e, len, u->field, u->wire_type);
}

static uint32_t frames__options_of(const frames_frame *f) {
    if (f->present) return f->present;
    return f->kind >= FRAMES_KIND_STD && f->kind <= FRAMES_KIND_UNKNOWN ? 1u << f->kind : 0;
}

/* A frame that is one std_frame (the common case, without frames__enc_frame's loop).
   *irregular counts its operands that are not plain: when there is none, the frame is
   valid (frames_validate_frame need not look at it). */
static size_t frames__enc_std_frame(frames__enc e, const frames_std_frame *s, uint32_t *irregular) {
    return frames__put_message(e, frames__enc_std(e, 0, s, irregular), 1, 0);
}

static size_t frames__enc_frame(frames__enc e, const frames_frame *f) {
    uint32_t opts = frames__options_of(f), irregular = 0;
    uint32_t k, unknown_at = (opts >> FRAMES_KIND_UNKNOWN) & 1 ? f->unknown.field : 0;
    size_t mark, len = 0;
    if (opts == (1u << FRAMES_KIND_STD)) return frames__enc_std_frame(e, &f->std, &irregular);
    if (unknown_at > 6) len = frames__enc_unknown(e, len, &f->unknown);
    for (k = 6; k >= 1; k--) {
        if (unknown_at == k) len = frames__enc_unknown(e, len, &f->unknown);
        if (!((opts >> k) & 1)) continue;
        mark = len;
        switch (k) {
        case 1: len = frames__enc_std(e, len, &f->std, &irregular); break;
        case 2: len = frames__enc_syscall(e, len, &f->syscall); break;
        case 3: len = frames__enc_exception(e, len, &f->exception); break;
        case 4: len = frames__enc_taint_intro_frame(e, len, &f->taint_intro); break;
        case 5: len = frames__enc_modload(e, len, &f->modload); break;
        default: len = frames__enc_key(e, len, &f->key); break;
        }
        len = frames__put_message(e, len, k, mark);
    }
    return len;
}
static int frames__one_bit(uint32_t v) { return v && !(v & (v - 1)); }

FRAMES__INLINE int frames__check_operand(const frames_operand *op, int value_info,
                                         const char *where, uint32_t i, frames_error *err) {
    /* the usual case in a few instructions: spec 1 or 2, taint 0, 1, 2 or 4 */
    if (FRAMES__LIKELY((op->spec == FRAMES_MEM || op->spec == FRAMES_REG) &&
                       (op->taint.set & (op->taint.set - 1) & 0xff) == 0 && op->taint.set <= 4))
        return FRAMES_OK;
    if (!frames__one_bit(op->spec & (FRAMES_MEM | FRAMES_REG)) || (op->spec & ~3u))
        return frames__fail(err, FRAMES_E_INVALID, FRAMES_NO_POS, FRAMES_NO_POS,
                            "%s operand %u: spec must be exactly one of FRAMES_MEM, FRAMES_REG",
                            where, (unsigned)i);
    if ((op->taint.set & ~7u) || (op->taint.set && !frames__one_bit(op->taint.set)))
        return frames__fail(err, FRAMES_E_INVALID, FRAMES_NO_POS, FRAMES_NO_POS,
                            "%s operand %u: taint must have at most one option", where,
                            (unsigned)i);
    (void)value_info;
    return FRAMES_OK;
}

FRAMES_DEF int frames_validate_frame(const frames_frame *f, frames_error *err) {
    uint32_t opts = frames__options_of(f), i, j;
    int rc;
    if (!frames__one_bit(opts))
        return frames__fail(err, FRAMES_E_INVALID, FRAMES_NO_POS, FRAMES_NO_POS,
                            opts ? "frame has several options set" : "empty frame");
    if (opts & (1u << FRAMES_KIND_UNKNOWN))
        return frames__fail(err, FRAMES_E_INVALID, FRAMES_NO_POS, FRAMES_NO_POS,
                            "frame option %u is not part of the schema", (unsigned)f->unknown.field);
    if (opts & (1u << FRAMES_KIND_STD)) {
        for (i = 0; i < f->std.npre; i++)
            if ((rc = frames__check_operand(&f->std.pre[i], 0, "pre", i, err))) return rc;
        for (i = 0; i < f->std.npost; i++)
            if ((rc = frames__check_operand(&f->std.post[i], 0, "post", i, err))) return rc;
    }
    if (opts & (1u << FRAMES_KIND_KEY)) {
        for (i = 0; i < f->key.count; i++) {
            const frames_tagged_values *t = &f->key.lists[i];
            if (!frames__one_bit(t->tag_set) || (t->tag_set & ~3u))
                return frames__fail(err, FRAMES_E_INVALID, FRAMES_NO_POS, FRAMES_NO_POS,
                                    "key frame list %u: value_source_tag needs exactly one option",
                                    (unsigned)i);
            for (j = 0; j < t->count; j++)
                if ((rc = frames__check_operand(&t->values[j], 1, "key frame", j, err))) return rc;
        }
    }
    return FRAMES_OK;
}

/* --------------------------------------------------------------------------------------
   a std_frame of plain operands, written in place front to back
   -------------------------------------------------------------------------------------- */
/* What tracers write nearly every time. The back-to-front encoder above leaves the
   frame at the end of the buffer, and moving it to the start cost 8-10 ns of 70 per
   frame (the copy reads bytes still in flight from the encoder's stores). Plain
   operands' sizes are a few additions, so for these frames the sizes are computed
   first (kept per operand) and the frame is written where it belongs. Same bytes. */

#define FRAMES__PLAIN_MAX 32   /* operands of a frame sized on the stack */

typedef struct frames__plain_std {
    size_t pre, post, std, total;   /* payload sizes: the lists, the std_frame, the frame */
    struct {
        uint16_t body;   /* operand_info */
        uint8_t spec;    /* operand_info_specific with its tag and length */
        uint8_t zn;      /* bit_length's varint */
    } op[FRAMES__PLAIN_MAX];
} frames__plain_std;

/* Size of a varint, the one- and two-byte cases first (lengths, bit lengths). */
FRAMES__INLINE size_t frames__small_varint_size(uint64_t v) {
    return v < 0x80 ? 1 : v < 0x4000 ? 2 : frames__varint_size(v);
}

FRAMES__INLINE size_t frames__field_size(size_t payload) {   /* tag < 16, length, payload */
    return 1 + frames__small_varint_size(payload) + payload;
}

/* Sizes of the operands ops[0..n) (entries z->op[k..]) if they are all plain; their list
   payload in *size. */
FRAMES__INLINE int frames__plain_list_size(const frames_operand *ops, uint32_t n,
                                           frames__plain_std *z, uint32_t k, size_t *size) {
    size_t sum = 0, spec, zn, body;
    uint32_t i;
    for (i = 0; i < n; i++) {
        const frames_operand *op = &ops[i];
        if (!frames__operand_is_plain(op)) return 0;
        spec = frames__plain_spec(op);
        zn = frames__small_varint_size(frames__zigzag32(op->bit_length));
        body = spec + 1 + zn + 16 + op->value.len;
        z->op[k + i].spec = (uint8_t)spec;
        z->op[k + i].zn = (uint8_t)zn;
        z->op[k + i].body = (uint16_t)body;
        /* 0a, the length and the body: a plain body is below 300 bytes (name < 124,
           value < 128), so its length takes one or two bytes */
        sum += body + 2 + (body >= 0x80);
    }
    *size = sum;
    return 1;
}

/* Sizes of a std_frame (the frame's only option) if all its operands are plain and
   fit in z; 0 if not. Plain operands are valid: such a frame needs no other check. */
static int frames__plain_std_size(const frames_std_frame *s, frames__plain_std *z) {
    if (s->npre > FRAMES__PLAIN_MAX || s->npost > FRAMES__PLAIN_MAX - s->npre ||
        !frames__plain_list_size(s->pre, s->npre, z, 0, &z->pre) ||
        !frames__plain_list_size(s->post, s->npost, z, s->npre, &z->post))
        return 0;
    z->std = 1 + frames__varint_size(s->address) + 1 + frames__varint_size(s->thread_id) +
             frames__field_size(s->rawbytes.len) + frames__field_size(z->pre) +
             (s->has_post ? frames__field_size(z->post) : 0) +
             (s->has_mode ? frames__field_size(s->mode.len) : 0);
    z->total = frames__field_size(z->std);
    return 1;
}

FRAMES__INLINE uint8_t *frames__write_varint(uint8_t *p, uint64_t v) {
    for (; v >= 0x80; v >>= 7) *p++ = (uint8_t)(v | 0x80);
    *p++ = (uint8_t)v;
    return p;
}

FRAMES__INLINE uint8_t *frames__write_bytes(uint8_t *p, uint8_t tag, frames_bytes b) {
    *p++ = tag;
    p = frames__write_varint(p, b.len);
    frames__copy(p, b.ptr, b.len);
    return p + b.len;
}

static uint8_t *frames__write_plain_list(uint8_t *p, uint8_t tag, size_t size,
                                         const frames_operand *ops, uint32_t n,
                                         const frames__plain_std *z, uint32_t k) {
    uint32_t i;
    *p++ = tag;
    p = frames__write_varint(p, size);
    for (i = 0; i < n; i++) {
        size_t body = z->op[k + i].body;
        *p++ = 0x0a;
        p = frames__write_varint(p, body);
        frames__write_plain(p, &ops[i], z->op[k + i].spec,
                            frames__zigzag32(ops[i].bit_length), z->op[k + i].zn);
        p += body;
    }
    return p;
}

/* Writes the frame sized by frames__plain_std_size at p (z->total bytes). */
static void frames__write_plain_std(uint8_t *p, const frames_std_frame *s,
                                    const frames__plain_std *z) {
    *p++ = 0x0a;
    p = frames__write_varint(p, z->std);
    *p++ = 0x08;
    p = frames__write_varint(p, s->address);
    *p++ = 0x10;
    p = frames__write_varint(p, s->thread_id);
    p = frames__write_bytes(p, 0x1a, s->rawbytes);
    p = frames__write_plain_list(p, 0x22, z->pre, s->pre, s->npre, z, 0);
    if (s->has_post) p = frames__write_plain_list(p, 0x2a, z->post, s->post, s->npost, z, s->npre);
    if (s->has_mode) frames__write_bytes(p, 0x32, s->mode);
}

/* The writer's one-pass form of the two above, for a trace's frames after its first: the
   lengths of the std_frame and of its operand lists are guessed to take as many bytes as
   in the previous plain frame (guess: std_frame, pre list, post list), the bytes after
   each length are written past the room guessed for it, and the lengths are filled in
   at the end. Consecutive frames of a trace mostly keep their lengths' sizes, and this
   saves the sizing pass over the operands. A wrong guess, an operand that is not plain
   or less room than the frame may take (`room`, checked before anything is written)
   returns 0: nothing written counts, and the caller encodes the frame the exact way
   (which sets the guess for the next frame). Same bytes. */
static uint8_t *frames__write_plain_ops(uint8_t *p, const frames_operand *ops, uint32_t n) {
    uint32_t i;
    for (i = 0; i < n; i++) {
        const frames_operand *op = &ops[i];
        uint64_t zz = frames__zigzag32(op->bit_length);
        size_t spec, zn, body;
        if (!frames__operand_is_plain(op)) return NULL;
        spec = frames__plain_spec(op);
        zn = frames__small_varint_size(zz);
        body = spec + 1 + zn + 16 + op->value.len;
        *p++ = 0x0a;
        p = frames__write_varint(p, body);
        frames__write_plain(p, op, spec, zz, zn);
        p += body;
    }
    return p;
}

/* An operand list (field tag) whose length is guessed to take `guess` bytes; NULL when an
   operand is not plain or the guess was wrong. */
static uint8_t *frames__write_plain_list_guessed(uint8_t *p, uint8_t tag, const frames_operand *ops,
                                                 uint32_t n, uint8_t guess) {
    uint8_t *list_len, *list;
    size_t len;
    *p++ = tag;
    list_len = p;
    list = p += guess;
    if (!(p = frames__write_plain_ops(p, ops, n))) return NULL;
    len = (size_t)(p - list);
    if (frames__small_varint_size(len) != guess) return NULL;
    frames__write_varint(list_len, len);
    return p;
}

static size_t frames__write_plain_std_guessed(uint8_t *p, size_t room, const frames_std_frame *s,
                                              const uint8_t *guess) {
    uint8_t *start = p, *std_len;
    size_t mode = s->has_mode ? s->mode.len : 0, len;
    /* a plain operand takes at most 3 + 278 bytes; the rest of the frame, apart from the
       instruction bytes and the mode, at most 42 */
    /* (post operands not written are checked all the same: the exact way does that) */
    if (guess[0] == 0 || (s->npost && !s->has_post) || s->npre > FRAMES__PLAIN_MAX ||
        s->npost > FRAMES__PLAIN_MAX ||
        s->rawbytes.len > 65536 || mode > 65536 ||
        room < 64 + s->rawbytes.len + mode + (size_t)(s->npre + s->npost) * 300)
        return 0;
    *p++ = 0x0a;
    std_len = p;
    p += guess[0];
    *p++ = 0x08;
    p = frames__write_varint(p, s->address);
    *p++ = 0x10;
    p = frames__write_varint(p, s->thread_id);
    p = frames__write_bytes(p, 0x1a, s->rawbytes);
    if (!(p = frames__write_plain_list_guessed(p, 0x22, s->pre, s->npre, guess[1]))) return 0;
    if (s->has_post && !(p = frames__write_plain_list_guessed(p, 0x2a, s->post, s->npost, guess[2])))
        return 0;
    if (s->has_mode) p = frames__write_bytes(p, 0x32, s->mode);
    len = (size_t)(p - std_len) - guess[0];
    if (frames__small_varint_size(len) != guess[0]) return 0;
    frames__write_varint(std_len, len);
    return (size_t)(p - start);
}

FRAMES_DEF size_t frames_frame_size(const frames_frame *f) {
    frames__enc e;
    frames__plain_std z;
    if (frames__options_of(f) == 1u << FRAMES_KIND_STD && frames__plain_std_size(&f->std, &z))
        return z.total;
    e.end = NULL;
    e.cap = 0;
    return frames__enc_frame(e, f);
}

/* The bytes were written back to front into buf[cap - len, cap): move them to the start. */
static int frames__finish_encoding(size_t n, void *buf, size_t cap, size_t *len,
                                   frames_error *err, const char *what) {
    if (len) *len = n;
    if (n > cap)
        return frames__fail(err, FRAMES_E_SPACE, FRAMES_NO_POS, FRAMES_NO_POS,
                            "%s needs %lu bytes, buffer has %lu", what, (unsigned long)n,
                            (unsigned long)cap);
    if (n < cap) memmove(buf, (uint8_t *)buf + (cap - n), n);
    return FRAMES_OK;
}

FRAMES_DEF int frames_encode_frame(const frames_frame *f, unsigned flags, void *buf, size_t cap,
                                   size_t *len, frames_error *err) {
    frames__enc e;
    frames__plain_std z;
    size_t n;
    uint32_t irregular = 0;
    int rc, check = !(flags & FRAMES_ENC_LENIENT);
    int std_only = frames__options_of(f) == 1u << FRAMES_KIND_STD;
    e.cap = buf ? cap : 0;
    e.end = buf ? (uint8_t *)buf + cap : NULL;
    /* a std_frame is checked after encoding, and only when not all operands are plain */
    if (check && !std_only && (rc = frames_validate_frame(f, err)) < 0) {
        if (len) *len = 0;
        return rc;
    }
    if (std_only && buf && frames__plain_std_size(&f->std, &z) && z.total <= cap) {
        frames__write_plain_std((uint8_t *)buf, &f->std, &z);
        if (len) *len = z.total;
        return FRAMES_OK;
    }
    n = std_only ? frames__enc_std_frame(e, &f->std, &irregular) : frames__enc_frame(e, f);
    if (check && irregular && (rc = frames_validate_frame(f, err)) < 0) {
        if (len) *len = 0;
        return rc;
    }
    return frames__finish_encoding(n, buf, e.cap, len, err, "frame");
}

static size_t frames__enc_strings(frames__enc e, size_t len, uint32_t field,
                                  const frames_bytes *list, uint32_t n) {
    while (n-- > 0) len = frames__put_bytes(e, len, field, list[n]);
    return len;
}

static size_t frames__enc_meta(frames__enc e, const frames_meta *m) {
    size_t mark, len = 0;
    len = frames__put_double(e, len, 6, m->time);
    len = frames__put_bytes(e, len, 5, m->host);
    len = frames__put_bytes(e, len, 4, m->user);
    mark = len;
    len = frames__put_double(e, len, 4, m->fstats_ctime);
    len = frames__put_double(e, len, 3, m->fstats_mtime);
    len = frames__put_double(e, len, 2, m->fstats_atime);
    len = frames__put_sint32(e, len, 1, m->fstats_size);
    len = frames__put_message(e, len, 3, mark);
    mark = len;
    len = frames__put_bytes(e, len, 4, m->target_md5sum);
    len = frames__enc_strings(e, len, 3, m->target_envp, m->ntarget_envp);
    len = frames__enc_strings(e, len, 2, m->target_args, m->ntarget_args);
    len = frames__put_bytes(e, len, 1, m->target_path);
    len = frames__put_message(e, len, 2, mark);
    mark = len;
    len = frames__put_bytes(e, len, 4, m->tracer_version);
    len = frames__enc_strings(e, len, 3, m->tracer_envp, m->ntracer_envp);
    len = frames__enc_strings(e, len, 2, m->tracer_args, m->ntracer_args);
    len = frames__put_bytes(e, len, 1, m->tracer_name);
    return frames__put_message(e, len, 1, mark);
}

FRAMES_DEF size_t frames_meta_size(const frames_meta *m) {
    frames__enc e;
    e.end = NULL;
    e.cap = 0;
    return frames__enc_meta(e, m);
}

FRAMES_DEF int frames_encode_meta(const frames_meta *m, void *buf, size_t cap, size_t *len,
                                  frames_error *err) {
    frames__enc e;
    e.cap = buf ? cap : 0;
    e.end = buf ? (uint8_t *)buf + cap : NULL;
    return frames__finish_encoding(frames__enc_meta(e, m), buf, e.cap, len, err, "meta frame");
}
/* --------------------------------------------------------------------------------------
   container: reader
   -------------------------------------------------------------------------------------- */

#define FRAMES__MAX_WARNINGS 16

struct frames_cursor {
    frames_reader *r;
    uint64_t index;        /* index of the next frame */
    uint64_t off;          /* offset of its size prefix (memory-backed readers) */
    uint64_t prefetched;   /* bytes up to here have been prefetched (sequential walks) */
    frames_decoder dec;
    frames_error err;
    int allocated;
    void *src_state;       /* paged readers: the source's state of this cursor */
    const uint8_t *win;    /* paged readers: trace bytes [win_lo, win_hi) at win, from the */
    uint64_t win_lo, win_hi; /* last view (source's view_end), valid until the next one */
};

struct frames_reader {
    frames_reader_options opt;
    int stream;
    /* memory-backed input */
    const uint8_t *data;
    uint64_t size;
    void *owned;           /* malloc'd copy or mapping of the whole file */
    size_t owned_len;
    int owned_is_map;
    /* paged input (frames_reader_open_source): data is NULL, bytes come from src.view */
    int paged;
    frames_source src;
    /* stream input: a window [win + head, win + tail) starting at file offset win_pos */
    frames_io io;
    int io_fd;             /* for the fd/path stream helpers */
    void *io_file;         /* FILE* opened by frames_reader_open_path without POSIX */
    uint8_t *win;
    size_t win_cap, head, tail;
    uint64_t win_pos;
    int eof;
    /* header and meta */
    frames_header hdr;
    int has_meta;
    frames_meta meta;
    frames_decoder meta_dec;
    uint8_t *meta_copy;    /* stream readers keep their own copy of the meta bytes */
    frames_bytes meta_bytes;
    int finished;          /* T != 0 in the header */
    int t_valid;           /* T lies between F and the end of the file */
    uint64_t data_end;     /* frames are read from F up to here */
    /* table of contents */
    uint64_t m, toc_words;
    const uint8_t *toc;    /* first entry (after m); stream readers: a copy */
    uint8_t *toc_copy;
    int toc_conv;
    uint32_t toc_matches;
    int toc_usable, toc_checked_entries;
    /* frame count and the index built by scanning */
    int count_known;
    int count_warned;      /* "header says n frames, m were found" given once */
    uint64_t nframes;
    uint64_t *index;
    size_t nindex;
    int indexed;
    /* what the end of the data looks like */
    int tail_known, truncated, bad_tail, pipe_toc, crashed_toc;
    uint64_t trunc_off, trunc_bytes;
    /* statistics of frames decoded with frames_reader_next */
    uint64_t decoded, decode_errors;
    uint32_t flags_seen;
    int stream_done;
    int verified;          /* TOC matches checked against the frames (stat) */
    /* frames_writer_options_like_copy: the offsets of frames 0, m, 2m, ... as the reading
       pass from frame 0 meets them, for checking the TOC's entries without a scan */
    uint64_t *walk_off;    /* NULL: not being collected */
    uint64_t walk_cap, walk_len, walk_next, walk_left;
    int walk_broken;       /* the pass was not one read of every frame in order */
    int walk_done;         /* walk_off stands for the scan (frames__block_offset) */
    /* frames_reader_raw_is_canonical: canonical records kept as shapes */
    struct frames__canon_shape *shapes;
    int shapes_failed;
    /* warnings */
    char warn[FRAMES__MAX_WARNINGS][160];
    uint32_t nwarn;
    struct frames_cursor cur;
    frames_error err;
};

static void frames__warn(frames_reader *r, const char *fmt, ...) FRAMES__PRINTF(2, 3);
static void frames__warn(frames_reader *r, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    if (!FRAMES__WARN_ADD(r->warn, r->nwarn, fmt, ap)) /* the last row says more were dropped */
        frames__fmt(r->warn[FRAMES__MAX_WARNINGS - 1], sizeof r->warn[0], "more warnings omitted");
    va_end(ap);
}

FRAMES_DEF void frames_reader_options_default(frames_reader_options *o) {
    memset(o, 0, sizeof *o);
    frames_limits_default(&o->limits);
    o->index_stride = 256;
}

/* -- stream window */

/* Make at least `need` bytes available from the window head (fewer at end of input).
   The buffer grows only as data actually arrives, so a hostile length cannot cause a
   large allocation. Returns the bytes available, or a negative code. */
static long long frames__fill(frames_reader *r, size_t need) {
    while (r->tail - r->head < need && !r->eof) {
        long long got;
        size_t want;
        if (r->head > 0 && (r->head >= r->win_cap / 2 || r->tail == r->win_cap)) {
            memmove(r->win, r->win + r->head, r->tail - r->head);
            r->tail -= r->head;
            r->win_pos += r->head;
            r->head = 0;
        }
        if (r->tail == r->win_cap) {
            size_t ncap = r->win_cap ? r->win_cap * 2 : 65536;
            uint8_t *nw = (uint8_t *)FRAMES_REALLOC(r->win, ncap, r->opt.alloc_ctx);
            if (!nw) return frames__fail(&r->err, FRAMES_E_NOMEM, r->win_pos + r->tail,
                                         FRAMES_NO_POS, "out of memory for the input window");
            r->win = nw;
            r->win_cap = ncap;
        }
        want = r->win_cap - r->tail;
        got = r->io.read(r->io.ctx, r->win + r->tail, want);
        if (got < 0)
            return frames__fail(&r->err, FRAMES_E_IO, r->win_pos + r->tail, FRAMES_NO_POS,
                                "read failed: %s", frames__syserr());
        if (got == 0) r->eof = 1;
        r->tail += (size_t)got;
    }
    return (long long)(r->tail - r->head);
}

static uint64_t frames__stream_pos(const frames_reader *r) { return r->win_pos + r->head; }

/* Read and drop n bytes; returns how many were present. */
static long long frames__discard(frames_reader *r, uint64_t n) {
    uint64_t done = 0;
    while (done < n) {
        long long avail = frames__fill(r, 1);
        size_t take;
        if (avail < 0) return avail;
        if (avail == 0) break;
        take = (uint64_t)avail < n - done ? (size_t)avail : (size_t)(n - done);
        r->head += take;
        done += take;
    }
    return (long long)done;
}

/* -- header and meta */

static int frames__parse_header(frames_reader *r, const uint8_t *h) {
    frames_header *hd = &r->hdr;
    int zero = 1, i;
    hd->magic = frames__le64(h);
    hd->version = frames__le64(h + 8);
    hd->arch = frames__le64(h + 16);
    hd->machine = frames__le64(h + 24);
    hd->nframes = frames__le64(h + 32);
    hd->toc_offset = frames__le64(h + 40);
    for (i = 0; i < 48; i++) zero &= h[i] == 0;
    if (hd->magic != FRAMES_MAGIC) {
        if (zero && !(r->opt.flags & FRAMES_READ_NO_ZERO_HEADER)) {
            hd->version = 1;
            frames__warn(r, "all-zero header: read as an unfinished version 1 trace (2014 libtrace)");
        } else if (!(r->opt.flags & FRAMES_READ_IGNORE_MAGIC)) {
            return frames__fail(&r->err, FRAMES_E_FORMAT, 0, FRAMES_NO_POS,
                                "not a frames trace: magic number is 0x%016llx",
                                (unsigned long long)hd->magic);
        } else {
            frames__warn(r, "bad magic number 0x%016llx ignored", (unsigned long long)hd->magic);
        }
    }
    if (hd->version < 1 || hd->version > 3) {
        if (!(r->opt.flags & FRAMES_READ_ANY_VERSION))
            return frames__fail(&r->err, FRAMES_E_VERSION, 8, FRAMES_NO_POS,
                                "unsupported trace version %llu (1, 2 and 3 are known)",
                                (unsigned long long)hd->version);
        frames__warn(r, "unknown version %llu read with the version 2 layout",
                     (unsigned long long)hd->version);
    }
    r->has_meta = hd->version != 1;
    r->finished = hd->toc_offset != 0;
    hd->first_frame = FRAMES_HEADER_SIZE;
    return FRAMES_OK;
}

/* meta_size word and meta bytes have been located: decode them (a damaged meta is a
   warning, the frames can still be read). */
static void frames__load_meta(frames_reader *r, const uint8_t *bytes, size_t len) {
    frames_error e;
    r->meta_bytes = frames_bytes_of(bytes, len);
    frames_decoder_init(&r->meta_dec, NULL, 0, r->opt.alloc_ctx);
    r->meta_dec.limits = r->opt.limits;
    r->meta_dec.strict = (r->opt.flags & FRAMES_READ_STRICT) != 0;
    if (frames_decode_meta(&r->meta_dec, bytes, len, &r->meta, &e) < 0) {
        frames__warn(r, "meta frame at offset 0x38 does not decode: %s", e.message);
        r->has_meta = 0;
        r->flags_seen |= FRAMES_FF_INCOMPLETE;
        return;
    }
    r->flags_seen |= r->meta.flags;
}

static int frames__check_meta_size(frames_reader *r, uint64_t meta_size, uint64_t avail) {
    if (meta_size > r->opt.limits.max_frame_size)
        return frames__fail(&r->err, FRAMES_E_LIMIT, 0x30, FRAMES_NO_POS,
                            "meta frame size %llu exceeds the limit of %llu bytes",
                            (unsigned long long)meta_size,
                            (unsigned long long)r->opt.limits.max_frame_size);
    if (meta_size > avail)
        return frames__fail(&r->err, FRAMES_E_TRUNCATED, 0x30, FRAMES_NO_POS,
                            "meta frame of %llu bytes runs past the end of the file (%llu present)",
                            (unsigned long long)meta_size, (unsigned long long)avail);
    return FRAMES_OK;
}

/* -- the table of contents */

/* Entry i of the TOC. */
static uint64_t frames__toc_entry(const frames_reader *r, uint64_t i) {
    return frames__le64(r->toc + 8 * i);
}

static uint64_t frames__ceil_div(uint64_t n, uint64_t m) { return n / m + (n % m != 0); }

/* Which conventions fit n frames and the words present (contents of the entries that
   point at frames are checked separately). */
static uint32_t frames__toc_candidates(const frames_reader *r, uint64_t n) {
    uint64_t m = r->m, k = r->toc_words, T = r->hdr.toc_offset, F = r->hdr.first_frame, i;
    uint64_t floor_nm1 = n ? (n - 1) / m : 0, nb = frames__ceil_div(n, m);
    uint32_t c = 0;
    if (m == 0) return 0;
    if (k == floor_nm1) c |= 1u << FRAMES_TOC_LIBTRACE;
    if (k == n / m && (n % m != 0 || n == 0 || frames__toc_entry(r, k - 1) == T))
        c |= 1u << FRAMES_TOC_TRACEWRAP;
    if (k == nb) {
        int pad_t = 1, pad_0 = 1;
        for (i = floor_nm1; i < k; i++) {
            pad_t &= frames__toc_entry(r, i) == T;
            pad_0 &= frames__toc_entry(r, i) == 0;
        }
        if (pad_t) c |= 1u << FRAMES_TOC_CEIL;
        if (pad_0 && n) c |= 1u << FRAMES_TOC_CEIL_ZERO;
        if (n && frames__toc_entry(r, 0) == 0x30) c |= 1u << FRAMES_TOC_BLOCK_STARTS;
    }
    if (n && k == nb - 1 && k > 0 && frames__toc_entry(r, 0) == F) c |= 1u << FRAMES_TOC_SHIFTED;
    if (n && k == nb + 1 && frames__toc_entry(r, 0) == F) c |= 1u << FRAMES_TOC_README;
    return c;
}

/* For conventions whose entry i is the start of block i+1 this returns 1, for those
   whose entry i is the start of block i, 0. */
static int frames__toc_shift(int conv) {
    return conv == FRAMES_TOC_SHIFTED || conv == FRAMES_TOC_BLOCK_STARTS ||
                   conv == FRAMES_TOC_README ? 0 : 1;
}

static int frames__first_conv(uint32_t c) {
    int k;
    for (k = 1; k < FRAMES_TOC_INVALID; k++)
        if (c & (1u << k)) return k;
    return FRAMES_TOC_INVALID;
}

/* Bytes [off, off + len) of the trace as cursor c sees them: memory-backed readers
   point into the data, paged readers ask their source (NULL on error, c->err filled). */
FRAMES__INLINE const uint8_t *frames__at(frames_cursor *c, uint64_t off, uint64_t len) {
    frames_reader *r = c->r;
    const uint8_t *p;
    if (FRAMES__LIKELY(!r->paged)) return r->data + off;
    c->win_hi = 0;   /* the view below may move what the window points at */
    p = r->src.view(c->src_state, off, (size_t)len, off == c->off ? c->index : FRAMES_NO_POS, &c->err);
    if (p && r->src.view_end) {
        uint64_t end = r->src.view_end(c->src_state);
        c->win = p;
        c->win_lo = off;
        c->win_hi = end < off + len || end > r->size ? off + len : end;
    }
    return p;
}

/* The rem bytes from off to the end of the data, for the checks that tell what a tail is
   (a pipe or crashed TOC: they read at most 8 (n + 3) bytes). A paged reader does not
   fetch a longer tail, which cannot be such a TOC: NULL then. */
static const uint8_t *frames__tail_at(frames_cursor *c, uint64_t off, uint64_t rem, uint64_t n) {
    if (!c->r->paged) return c->r->data + off;
    if (rem > 8 * (n + 3) || rem > c->r->opt.limits.max_frame_size) return NULL;
    return frames__at(c, off, rem);
}

/* The error a paged reader's source reported for the reader's own position. */
static int frames__source_failed(frames_reader *r) {
    r->err = r->cur.err;
    if (!r->err.code) r->err.code = FRAMES_E_IO;
    return r->err.code;
}

/* Does a complete frame record start at off (before data_end)? */
static int frames__record_at(frames_cursor *c, uint64_t off, uint64_t *next) {
    const frames_reader *r = c->r;
    const uint8_t *p;
    uint64_t len;
    if (off < r->hdr.first_frame || off > r->data_end || r->data_end - off < 8) return 0;
    if (!(p = frames__at(c, off, 8))) return 0;
    len = frames__le64(p);
    if (len > r->data_end - off - 8) return 0;
    *next = off + 8 + len;
    return 1;
}

/* Offset of the start of block b according to the TOC. A block the convention has no
   entry for (the shifted v1 TOC stops one block early) is reached by hopping m frames
   from the last block that has one. 0 when no record is found there. */
static uint64_t frames__block_start(frames_cursor *c, uint64_t b) {
    const frames_reader *r = c->r;
    uint64_t shift = (uint64_t)frames__toc_shift(r->toc_conv), known = b, off, next, hops;
    if (r->toc_words + shift == 0) known = 0;
    else if (known > r->toc_words + shift - 1) known = r->toc_words + shift - 1;
    /* block 0 is always at F (the early TCG plugin's first entry is 0x30, not F) */
    off = known == 0 ? r->hdr.first_frame : frames__toc_entry(r, known - shift);
    for (hops = (b - known) * r->m; hops > 0; hops--) {
        if (!frames__record_at(c, off, &next)) return 0;
        off = next;
    }
    return off;
}

/* Can the TOC, read by the convention in r->toc_conv, be used for random access? Only if
   the entries that point at frames are increasing, lie inside [F, T) and each starts a
   record, and if hopping from the last block start reaches T after exactly the frames
   the header says. This costs one pass over the entries and at most m hops. Returns 0
   or the block whose entry is wrong (nb for a bad last block). */
static uint64_t frames__toc_fault(frames_reader *r, uint64_t n, uint64_t nb) {
    uint64_t b, prev = r->hdr.first_frame, off, next, hops;
    frames_cursor *c = &r->cur;
    for (b = 1; b < nb; b++) {
        off = frames__block_start(c, b);
        /* a paged (compressed) reader checks only the order of the entries here: looking
           at the record of each would decompress the whole trace on opening it; an entry
           that is not a record start fails when it is used */
        if (off <= prev || off >= r->data_end || (!r->paged && !frames__record_at(c, off, &next)))
            return b;
        prev = off;
    }
    off = frames__block_start(c, nb - 1);
    for (hops = 0; off < r->data_end && hops <= r->m; hops++) {
        if (!frames__record_at(c, off, &next)) break;
        off = next;
    }
    return off == r->data_end && hops == n - (nb - 1) * r->m ? 0 : nb;
}

/* Pick the first convention whose entries check out (several may fit the entry count,
   e.g. libtrace and the shifted v1 TOC when m = 1). */
static void frames__check_toc(frames_reader *r) {
    uint64_t n = r->hdr.nframes, m = r->m, nb, fault = 0;
    int conv;
    r->toc_conv = FRAMES_TOC_INVALID;
    if (!r->finished || !r->t_valid || !r->toc) {
        r->toc_conv = r->finished ? FRAMES_TOC_INVALID : FRAMES_TOC_NONE;
        return;
    }
    if (m == 0) {
        frames__warn(r, "TOC has m = 0 frames per entry: not usable");
        return;
    }
    r->toc_matches = frames__toc_candidates(r, n);
    if (!r->toc_matches) {
        frames__warn(r, "TOC has %llu entries, which fits no known convention for n = %llu, m = %llu",
                     (unsigned long long)r->toc_words, (unsigned long long)n,
                     (unsigned long long)m);
        return;
    }
    r->toc_conv = frames__first_conv(r->toc_matches);
    if (n == 0) {
        if (r->hdr.toc_offset == r->hdr.first_frame) {
            r->toc_usable = 1;
            r->count_known = 1;
            r->nframes = 0;
        }
        return;
    }
    nb = frames__ceil_div(n, m);
    for (conv = 1; conv < FRAMES_TOC_INVALID; conv++) {
        if (!(r->toc_matches & (1u << conv))) continue;
        r->toc_conv = conv;
        if ((fault = frames__toc_fault(r, n, nb)) == 0) {
            r->toc_usable = 1;
            r->count_known = 1;
            r->nframes = n;
            return;
        }
    }
    r->toc_conv = frames__first_conv(r->toc_matches);
    if (fault < nb)
        frames__warn(r, "TOC entry for block %llu is not a frame boundary; indexing by scanning",
                     (unsigned long long)fault);
    else
        frames__warn(r, "header says %llu frames but the last TOC block does not end at the TOC; "
                     "counting by scanning", (unsigned long long)n);
}

/* -- the end of the data */

/* Words after the last of n frames of an unfinished trace that libtrace wrote to a pipe:
   m followed by the floor((n-1)/m) entries it pushed, each 0xffffffffffffffff (just m
   for n = 0, from builds without assertions). Anything else is a truncated record. A lone
   word is ambiguous with the size prefix of a frame cut right after it; it counts as a
   pipe TOC only when it is libtrace's default m (10000). */
static int frames__looks_like_pipe_toc(const uint8_t *p, uint64_t len, uint64_t n) {
    uint64_t i, m;
    if (len < 8 || len % 8 != 0 || (m = frames__le64(p)) == 0) return 0;
    if ((len - 8) / 8 != (n ? (n - 1) / m : 0)) return 0;
    if (len == 8 && m != FRAMES_DEFAULT_FRAMES_PER_TOC) return 0;
    for (i = 8; i < len; i += 8)
        if (frames__le64(p + i) != UINT64_MAX) return 0;
    return 1;
}

/* A writer killed inside finish (libtrace's finish() or frames_writer_finish, which
   write m and the TOC entries after the last frame and patch the header last) leaves an
   unfinished trace that ends in a TOC, whole or cut. Read as records, m is a size word
   and the entries its payload: a bogus frame that `frames fix` would keep. At offset
   pos after n frames, p[0..avail) are the bytes from pos on; at_eof says they reach the
   end of the input. Returns 1 if they are such a TOC: m, then at most floor((n-1)/m)
   entries of frame offsets (increasing, in [F, pos), m frames of at least 8 bytes apart,
   leaving room for the frames after the last one) and at most one padding entry (T or
   0, as the ceil and tracewrap conventions write); 0 if not; -1 if more input is needed
   (*want: bytes to have from pos; only when !at_eof). Real frame bytes fail on the first
   entry: their words are no such offsets. */
static int frames__crashed_toc_at(const frames_reader *r, const uint8_t *p, uint64_t avail,
                                  int at_eof, uint64_t pos, uint64_t n, uint64_t *want) {
    uint64_t m, k, bound, words, j, prev = r->hdr.first_frame, real = 0;
    if (r->finished || n < 2 || avail < 8 || avail - 8 > 8 * n) return 0;
    if ((m = frames__le64(p)) == 0) return 0;
    k = (n - 1) / m;                      /* entries add() pushed; one padding may follow */
    if (k == 0) return 0;
    bound = 8 + 8 * (k + 1);
    if (avail > bound || m > bound - 8 || bound > r->opt.limits.max_frame_size) return 0;
    words = (avail - 8) / 8;
    if (words == 0 && at_eof) return 0; /* nothing to tell it from a small last frame */
    for (j = 1; j <= words; j++) {
        uint64_t e = frames__le64(p + 8 * j);
        if (j > k) { /* the padding entry of the ceil and tracewrap conventions */
            if (e != pos && e != 0) return 0;
            continue;
        }
        if (e >= pos || e < prev || e - prev < 8 * m) return 0;
        prev = e;
        real = j;
    }
    if (!at_eof) {
        *want = bound + 1;
        return -1;
    }
    return pos - prev >= 8 * (n - real * m);
}

static void frames__note_crashed_toc(frames_reader *r, uint64_t off, uint64_t bytes, uint64_t m) {
    r->tail_known = 1;
    r->crashed_toc = 1;
    frames__warn(r, "%llu bytes at offset 0x%llx are the TOC of a writer killed while finishing "
                 "(m = %llu); ignored", (unsigned long long)bytes, (unsigned long long)off,
                 (unsigned long long)m);
}

/* Record what lies between off (after n frames) and the end of the data when it is not a
   complete frame. */
static void frames__note_tail(frames_reader *r, uint64_t off, uint64_t bytes, const uint8_t *p,
                              uint64_t n) {
    if (r->tail_known || bytes == 0) {
        r->tail_known = 1;
        return;
    }
    r->tail_known = 1;
    if (!r->finished && p && frames__looks_like_pipe_toc(p, bytes, n)) {
        r->pipe_toc = 1;
        frames__warn(r, "%llu bytes at offset 0x%llx are the TOC libtrace writes to a pipe "
                     "(m = %llu); ignored", (unsigned long long)bytes, (unsigned long long)off,
                     (unsigned long long)frames__le64(p));
        return;
    }
    if (!r->finished && p && frames__crashed_toc_at(r, p, bytes, 1, off, n, NULL) == 1) {
        frames__note_crashed_toc(r, off, bytes, frames__le64(p));
        return;
    }
    r->truncated = 1;
    r->trunc_off = off;
    r->trunc_bytes = bytes;
    frames__warn(r, "trace is truncated: %llu bytes of an incomplete record at offset 0x%llx",
                 (unsigned long long)bytes, (unsigned long long)off);
}

/* An unfinished trace whose last record is complete but does not parse (e.g. the tail
   of a crashed writer): end of trace with a warning, as BAP's reader would stop. */
static int frames__final_record_is_garbage(frames_reader *r, const uint8_t *payload,
                                           uint64_t len, uint64_t off) {
    frames_decoder d;
    frames_frame f;
    frames_error e;
    uint64_t buf[64];
    int bad;
    if (r->finished) return 0;
    frames_decoder_init(&d, buf, sizeof buf, r->opt.alloc_ctx);
    d.frames__owned = 1; /* may grow past the stack buffer for a big final frame */
    d.limits = r->opt.limits;
    /* only a malformed message is garbage: one that exceeds a limit is a frame that
       reading refuses with FRAMES_E_LIMIT, like any other */
    bad = frames_decode_frame(&d, payload, (size_t)len, &f, &e) == FRAMES_E_DECODE || len == 0;
    if (d.frames__base != (uint8_t *)buf) {
        frames__free_spills(&d);
        if (d.frames__base && d.frames__base != (uint8_t *)buf) FRAMES_FREE(d.frames__base, d.alloc_ctx);
    } else {
        frames__free_spills(&d);
    }
    if (bad && !r->bad_tail) {
        r->bad_tail = 1;
        frames__warn(r, "last record (%llu bytes at offset 0x%llx) of the unfinished trace is not a "
                     "frame: treated as the end of the trace", (unsigned long long)len,
                     (unsigned long long)off);
    }
    return bad;
}

/* -- scanning (memory-backed) */

/* A finished trace's header count against the frames found, said once. */
static void frames__warn_count(frames_reader *r, uint64_t found) {
    if (r->hdr.nframes == found || r->count_warned) return;
    r->count_warned = 1;
    frames__warn(r, "header says %llu frames, %llu were found", (unsigned long long)r->hdr.nframes,
                 (unsigned long long)found);
}

/* One pass over the size prefixes: count, index every `stride` frames, find the tail. */
static int frames__scan(frames_reader *r) {
    uint64_t off = r->hdr.first_frame, n = 0, len;
    size_t cap = 0;
    frames_cursor *c = &r->cur;
    const uint8_t *p;
    uint32_t stride = r->opt.index_stride ? r->opt.index_stride : 256;
    if (r->indexed) return FRAMES_OK;
    if (r->stream)
        return frames__fail(&r->err, FRAMES_E_UNSUPPORTED, FRAMES_NO_POS, FRAMES_NO_POS,
                            "a stream cannot be scanned twice");
    FRAMES_FREE(r->index, r->opt.alloc_ctx);
    r->index = NULL;
    r->nindex = 0;
    while (off < r->data_end) {
        uint64_t rem = r->data_end - off;
        if (n % stride == 0) {
            if (r->nindex == cap) {
                size_t ncap = cap ? cap * 2 : 64;
                uint64_t *ni = (uint64_t *)FRAMES_REALLOC(r->index, ncap * sizeof *ni, r->opt.alloc_ctx);
                if (!ni) return frames__fail(&r->err, FRAMES_E_NOMEM, off, n, "out of memory for the index");
                r->index = ni;
                cap = ncap;
            }
            r->index[r->nindex++] = off;
        }
        if (rem < 8) {
            frames__note_tail(r, off, rem, frames__tail_at(c, off, rem, n), n);
            break;
        }
        if (!(p = frames__at(c, off, 8))) return frames__source_failed(r);
        len = frames__le64(p);
        if (len > rem - 8) {
            frames__note_tail(r, off, rem, frames__tail_at(c, off, rem, n), n);
            break;
        }
        if (!r->finished && (p = frames__tail_at(c, off, rem, n)) != NULL &&
            frames__crashed_toc_at(r, p, rem, 1, off, n, NULL) == 1) {
            if (!r->tail_known) frames__note_crashed_toc(r, off, rem, len);
            break;
        }
        /* an oversized record is refused unread (FRAMES_E_LIMIT), even the last one, as
           reading and the stream reader do */
        if (off + 8 + len == r->data_end && len <= r->opt.limits.max_frame_size && !r->finished) {
            if (!(p = frames__at(c, off + 8, len))) return frames__source_failed(r);
            if (frames__final_record_is_garbage(r, p, len, off)) break;
        }
        off += 8 + len;
        n++;
    }
    if (r->index && r->nindex && r->index[r->nindex - 1] >= off && n % stride == 0 && n)
        r->nindex--; /* an entry for a frame that does not exist */
    r->tail_known = 1;
    if (r->count_known && r->nframes != n) {
        frames__warn(r, "scan found %llu frames, the header says %llu", (unsigned long long)n,
                     (unsigned long long)r->nframes);
        r->toc_usable = 0; /* its blocks cannot be right: use the scan's index */
    }
    if (r->finished && !r->count_known) frames__warn_count(r, n);
    r->nframes = n;
    r->count_known = 1;
    r->indexed = 1;
    return FRAMES_OK;
}

/* Offset of frame `index` (random access), or an error. index == nframes gives the end. */
static int frames__locate(frames_reader *r, frames_cursor *c, uint64_t index, uint64_t *off,
                          frames_error *err) {
    uint64_t start, first, next;
    int rc;
    if (!r->toc_usable && !r->indexed && (rc = frames__scan(r)) < 0) {
        if (err != &r->err) *err = r->err;
        return rc;
    }
    if (index > r->nframes)
        return frames__fail(err, FRAMES_E_RANGE, FRAMES_NO_POS, index,
                            "frame %llu requested, the trace has %llu",
                            (unsigned long long)index, (unsigned long long)r->nframes);
    if (r->toc_usable) {
        uint64_t b = index / r->m, nb = frames__ceil_div(r->nframes, r->m);
        if (b >= nb) b = nb ? nb - 1 : 0; /* the end of an exact multiple of m frames */
        start = frames__block_start(c, b);
        first = b * r->m;
    } else {
        uint32_t stride = r->opt.index_stride ? r->opt.index_stride : 256;
        uint64_t s = index / stride;
        if (s >= r->nindex) s = r->nindex ? r->nindex - 1 : 0;
        start = r->nindex ? r->index[s] : r->hdr.first_frame;
        first = s * stride;
    }
    while (first < index) {
        if (!frames__record_at(c, start, &next)) {
            if (r->paged && c->err.code) {
                if (err != &c->err) *err = c->err;
                return c->err.code;
            }
            return frames__fail(err, FRAMES_E_FORMAT, start, first, "frame record expected");
        }
        start = next;
        first++;
    }
    *off = start;
    return FRAMES_OK;
}

/* -- opening */

static frames_reader *frames__new_reader(const frames_reader_options *o) {
    frames_reader_options def;
    frames_reader *r;
    if (!o) {
        frames_reader_options_default(&def);
        o = &def;
    }
    r = (frames_reader *)FRAMES_MALLOC(sizeof *r, o->alloc_ctx);
    if (!r) return NULL;
    memset(r, 0, sizeof *r);
    r->opt = *o;
    { /* a zero limit means its default, field by field (a zeroed options struct works) */
        frames_limits def;
        frames_limits_default(&def);
        if (r->opt.limits.max_frame_size == 0) r->opt.limits.max_frame_size = def.max_frame_size;
        if (r->opt.limits.max_depth == 0) r->opt.limits.max_depth = def.max_depth;
        if (r->opt.limits.max_scratch == 0) r->opt.limits.max_scratch = def.max_scratch;
    }
    r->io_fd = -1;
    r->cur.r = r;
    frames_decoder_init(&r->cur.dec, NULL, 0, r->opt.alloc_ctx);
    r->cur.dec.limits = r->opt.limits;
    r->cur.dec.strict = (r->opt.flags & FRAMES_READ_STRICT) != 0;
    frames__clear_error(&r->err);
    frames__clear_error(&r->cur.err);
    return r;
}

/* Header, meta and TOC of a memory-backed trace. */
/* A copy of bytes a paged reader's source handed out (its views do not last). */
static const uint8_t *frames__paged_copy(frames_reader *r, const uint8_t *p, uint64_t len,
                                         uint8_t **copy) {
    *copy = (uint8_t *)FRAMES_MALLOC(len ? (size_t)len : 1, r->opt.alloc_ctx);
    if (*copy) memcpy(*copy, p, (size_t)len);
    return *copy;
}

/* Header, meta and TOC of a memory-backed (or paged) trace. */
static int frames__open_memory_layout(frames_reader *r) {
    const uint8_t *d;
    uint64_t size = r->size, F, T;
    int rc;
    if (size < FRAMES_HEADER_SIZE)
        return frames__fail(&r->err, size ? FRAMES_E_TRUNCATED : FRAMES_E_FORMAT, 0, FRAMES_NO_POS,
                            "file has %llu bytes, shorter than the 48-byte header",
                            (unsigned long long)size);
    if (!(d = frames__at(&r->cur, 0, FRAMES_HEADER_SIZE))) return frames__source_failed(r);
    if ((rc = frames__parse_header(r, d)) < 0) return rc;
    F = FRAMES_HEADER_SIZE;
    if (r->has_meta) {
        if (size < F + 8)
            return frames__fail(&r->err, FRAMES_E_TRUNCATED, F, FRAMES_NO_POS,
                                "file ends before the meta frame size");
        if (!(d = frames__at(&r->cur, F, 8))) return frames__source_failed(r);
        r->hdr.meta_size = frames__le64(d);
        if ((rc = frames__check_meta_size(r, r->hdr.meta_size, size - F - 8)) < 0) return rc;
        if (!(d = frames__at(&r->cur, F + 8, r->hdr.meta_size))) return frames__source_failed(r);
        if (r->paged && !frames__paged_copy(r, d, r->hdr.meta_size, &r->meta_copy))
            return frames__fail(&r->err, FRAMES_E_NOMEM, F, FRAMES_NO_POS, "out of memory");
        frames__load_meta(r, r->paged ? r->meta_copy : d, (size_t)r->hdr.meta_size);
        F += 8 + r->hdr.meta_size;
    }
    r->hdr.first_frame = F;
    T = r->hdr.toc_offset;
    r->data_end = size;
    if (r->finished) {
        if (T < F || T > size) {
            frames__warn(r, "TOC offset 0x%llx lies outside the frames (F = 0x%llx, file size 0x%llx): "
                         "the file was cut after it was finished; reading frames to the end",
                         (unsigned long long)T, (unsigned long long)F, (unsigned long long)size);
        } else if (size - T < 8) { /* the frames end at T, as a stream reader sees them */
            r->t_valid = 1;
            r->data_end = T;
            frames__warn(r, "the file ends %llu bytes after the TOC offset 0x%llx, inside the TOC: "
                         "it was cut after it was finished", (unsigned long long)(size - T),
                         (unsigned long long)T);
        } else if (r->paged && size - T - 8 > r->opt.limits.max_frame_size) {
            frames__warn(r, "TOC at 0x%llx is longer than %llu bytes: not used",
                         (unsigned long long)T, (unsigned long long)r->opt.limits.max_frame_size);
            r->t_valid = 1;
            r->data_end = T;
        } else {
            r->t_valid = 1;
            r->data_end = T;
            if (!(d = frames__at(&r->cur, T, size - T))) return frames__source_failed(r);
            if (r->paged && !(d = frames__paged_copy(r, d, size - T, &r->toc_copy)))
                return frames__fail(&r->err, FRAMES_E_NOMEM, T, FRAMES_NO_POS, "out of memory");
            r->m = frames__le64(d);
            r->toc_words = (size - T - 8) / 8;
            r->toc = d + 8;
            if ((size - T - 8) % 8)
                frames__warn(r, "%llu stray bytes after the TOC", (unsigned long long)((size - T - 8) % 8));
        }
    } else if (r->hdr.nframes) {
        frames__warn(r, "header says %llu frames but has no TOC offset: read as unfinished",
                     (unsigned long long)r->hdr.nframes);
    }
    if (!(r->opt.flags & FRAMES_READ_IGNORE_TOC)) frames__check_toc(r);
    else r->toc_conv = r->finished ? FRAMES_TOC_INVALID : FRAMES_TOC_NONE;
    if (r->toc_conv != FRAMES_TOC_INVALID && r->toc_conv != FRAMES_TOC_NONE) r->toc_checked_entries = 0;
    r->cur.off = F;
    return FRAMES_OK;
}

static int frames__open_done(frames_reader *r, frames_reader **out, frames_error *err, int rc) {
    if (rc < 0) {
        if (err) *err = r->err;
        frames_reader_close(r);
        *out = NULL;
        return rc;
    }
    if (err) frames__clear_error(err);
    *out = r;
    return FRAMES_OK;
}

FRAMES_DEF int frames_reader_open_memory(frames_reader **out, const void *data, size_t size,
                                         const frames_reader_options *o, frames_error *err) {
    frames_reader *r = frames__new_reader(o);
    *out = NULL;
    if (!r) return frames__fail(err, FRAMES_E_NOMEM, FRAMES_NO_POS, FRAMES_NO_POS, "out of memory");
    r->data = (const uint8_t *)data;
    r->size = size;
    return frames__open_done(r, out, err, frames__open_memory_layout(r));
}

FRAMES_DEF int frames_reader_open_source(frames_reader **out, const frames_source *src,
                                         const frames_reader_options *o, frames_error *err) {
    frames_reader *r = frames__new_reader(o);
    *out = NULL;
    if (!r) {
        if (src->close) src->close(src->ctx);
        return frames__fail(err, FRAMES_E_NOMEM, FRAMES_NO_POS, FRAMES_NO_POS, "out of memory");
    }
    r->paged = 1;
    r->src = *src;
    r->size = src->size;
    if (!(r->cur.src_state = src->state_open(src->ctx)))
        return frames__open_done(r, out, err, frames__fail(&r->err, FRAMES_E_NOMEM, FRAMES_NO_POS,
                                                           FRAMES_NO_POS, "out of memory"));
    return frames__open_done(r, out, err, frames__open_memory_layout(r));
}

FRAMES_DEF const frames_source *frames_reader_source(const frames_reader *r) {
    return r->paged ? &r->src : NULL;
}

/* Header and meta of a stream; the frames follow. */
static int frames__open_stream_layout(frames_reader *r) {
    long long avail;
    uint64_t ms;
    int rc;
    r->stream = 1;
    if ((avail = frames__fill(r, FRAMES_HEADER_SIZE)) < 0) return (int)avail;
    if (avail < FRAMES_HEADER_SIZE)
        return frames__fail(&r->err, avail ? FRAMES_E_TRUNCATED : FRAMES_E_FORMAT, 0, FRAMES_NO_POS,
                            "input has %lld bytes, shorter than the 48-byte header", avail);
    if ((rc = frames__parse_header(r, r->win + r->head)) < 0) return rc;
    r->head += FRAMES_HEADER_SIZE;
    if (r->has_meta) {
        if ((avail = frames__fill(r, 8)) < 0) return (int)avail;
        if (avail < 8)
            return frames__fail(&r->err, FRAMES_E_TRUNCATED, 0x30, FRAMES_NO_POS,
                                "input ends before the meta frame size");
        ms = frames__le64(r->win + r->head);
        r->hdr.meta_size = ms;
        if (ms > r->opt.limits.max_frame_size) return frames__check_meta_size(r, ms, ms);
        if ((avail = frames__fill(r, 8 + (size_t)ms)) < 0) return (int)avail;
        if ((rc = frames__check_meta_size(r, ms, (uint64_t)avail - 8)) < 0) return rc;
        r->meta_copy = (uint8_t *)FRAMES_MALLOC(ms ? (size_t)ms : 1, r->opt.alloc_ctx);
        if (!r->meta_copy) return frames__fail(&r->err, FRAMES_E_NOMEM, 0x38, FRAMES_NO_POS, "out of memory");
        memcpy(r->meta_copy, r->win + r->head + 8, (size_t)ms);
        r->head += 8 + (size_t)ms;
        frames__load_meta(r, r->meta_copy, (size_t)ms);
    }
    r->hdr.first_frame = frames__stream_pos(r);
    if (r->finished && r->hdr.toc_offset < r->hdr.first_frame)
        frames__warn(r, "TOC offset 0x%llx lies before the first frame: ignored",
                     (unsigned long long)r->hdr.toc_offset);
    else if (r->finished)
        r->t_valid = 1;
    r->data_end = r->t_valid ? r->hdr.toc_offset : UINT64_MAX;
    r->toc_conv = r->finished ? FRAMES_TOC_INVALID : FRAMES_TOC_NONE;
    return FRAMES_OK;
}

FRAMES_DEF int frames_reader_open_io(frames_reader **out, const frames_io *io,
                                     const frames_reader_options *o, frames_error *err) {
    frames_reader *r = frames__new_reader(o);
    *out = NULL;
    if (!r) {
        if (io->close) io->close(io->ctx);
        return frames__fail(err, FRAMES_E_NOMEM, FRAMES_NO_POS, FRAMES_NO_POS, "out of memory");
    }
    r->io = *io;
    return frames__open_done(r, out, err, frames__open_stream_layout(r));
}

#ifndef FRAMES_NO_STDIO
static long long frames__file_read(void *ctx, void *buf, size_t n) {
    FILE *f = (FILE *)ctx;
    size_t got = fread(buf, 1, n, f);
    if (got == 0 && ferror(f)) return -1;
    return (long long)got;
}

FRAMES_DEF int frames_reader_open_file(frames_reader **out, FILE *f,
                                       const frames_reader_options *o, frames_error *err) {
    frames_io io;
    io.ctx = f;
    io.read = frames__file_read;
    io.close = NULL;
    return frames_reader_open_io(out, &io, o, err);
}
#endif

#ifndef FRAMES_NO_POSIX
static long long frames__fd_read(void *ctx, void *buf, size_t n) {
    int fd = (int)(intptr_t)ctx;
    for (;;) {
        ssize_t got = read(fd, buf, n);
        if (got >= 0) return (long long)got;
        if (errno != EINTR) return -1;
    }
}

/* Map (or read) a regular file; stream anything else. */
static int frames__open_fd(frames_reader **out, int fd, int own_fd, const char *name,
                           const frames_reader_options *o, frames_error *err) {
    struct stat st;
    frames_reader *r;
    frames_io io;
    int rc;
    if (fstat(fd, &st) != 0) {
        rc = frames__fail(err, FRAMES_E_IO, FRAMES_NO_POS, FRAMES_NO_POS, "%s: %s", name, frames__syserr());
        if (own_fd) close(fd);
        return rc;
    }
    if (!S_ISREG(st.st_mode)) {
        io.ctx = (void *)(intptr_t)fd;
        io.read = frames__fd_read;
        io.close = NULL;
        rc = frames_reader_open_io(out, &io, o, err);
        if (rc == FRAMES_OK && own_fd) (*out)->io_fd = fd;
        else if (own_fd) close(fd);
        return rc;
    }
    *out = NULL;
    r = frames__new_reader(o);
    if (!r) {
        if (own_fd) close(fd);
        return frames__fail(err, FRAMES_E_NOMEM, FRAMES_NO_POS, FRAMES_NO_POS, "out of memory");
    }
    if ((uint64_t)st.st_size > (uint64_t)SIZE_MAX) {
        if (own_fd) close(fd);
        return frames__open_done(r, out, err, frames__fail(&r->err, FRAMES_E_LIMIT, FRAMES_NO_POS,
                                                           FRAMES_NO_POS, "%s: file too large", name));
    }
    r->size = (uint64_t)st.st_size;
    if (st.st_size > 0 && !(r->opt.flags & FRAMES_READ_NO_MMAP)) {
        void *map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (map != MAP_FAILED) {
            r->owned = map;
            r->owned_len = (size_t)st.st_size;
            r->owned_is_map = 1;
#ifdef MADV_SEQUENTIAL
            madvise(map, (size_t)st.st_size, MADV_SEQUENTIAL);
#endif
        }
    }
    if (!r->owned && st.st_size > 0) { /* read() fallback */
        size_t done = 0;
        r->owned = FRAMES_MALLOC((size_t)st.st_size, r->opt.alloc_ctx);
        if (!r->owned) rc = frames__fail(&r->err, FRAMES_E_NOMEM, FRAMES_NO_POS, FRAMES_NO_POS,
                                         "%s: out of memory reading %llu bytes", name,
                                         (unsigned long long)st.st_size);
        while (r->owned && done < (size_t)st.st_size) {
            ssize_t got = pread(fd, (uint8_t *)r->owned + done, (size_t)st.st_size - done, (off_t)done);
            if (got < 0 && errno == EINTR) continue;
            if (got <= 0) break;
            done += (size_t)got;
        }
        r->owned_len = done;
        r->size = done;
    }
    if (own_fd) close(fd);
    r->data = (const uint8_t *)r->owned;
    if (r->size && !r->data) return frames__open_done(r, out, err, r->err.code ? r->err.code : FRAMES_E_IO);
    return frames__open_done(r, out, err, frames__open_memory_layout(r));
}

FRAMES_DEF int frames_reader_open_fd(frames_reader **out, int fd, const frames_reader_options *o,
                                     frames_error *err) {
    return frames__open_fd(out, fd, 0, "fd", o, err);
}
#endif

FRAMES_DEF int frames_reader_open_path(frames_reader **out, const char *path,
                                       const frames_reader_options *o, frames_error *err) {
    *out = NULL;
#ifndef FRAMES_NO_POSIX
    {
        int fd;
        if (!strcmp(path, "-")) return frames__open_fd(out, 0, 0, "standard input", o, err);
        do fd = open(path, O_RDONLY); while (fd < 0 && errno == EINTR);
        if (fd < 0)
            return frames__fail(err, FRAMES_E_IO, FRAMES_NO_POS, FRAMES_NO_POS, "cannot open %s: %s",
                                path, frames__syserr());
        return frames__open_fd(out, fd, 1, path, o, err);
    }
#elif !defined(FRAMES_NO_STDIO)
    {
        FILE *f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
        int rc;
        if (!f)
            return frames__fail(err, FRAMES_E_IO, FRAMES_NO_POS, FRAMES_NO_POS, "cannot open %s: %s",
                                path, frames__syserr());
        rc = frames_reader_open_file(out, f, o, err);
        if (f != stdin) {
            if (rc == FRAMES_OK) (*out)->io_file = f; else fclose(f);
        }
        return rc;
    }
#else
    (void)o;
    return frames__fail(err, FRAMES_E_UNSUPPORTED, FRAMES_NO_POS, FRAMES_NO_POS,
                        "%s: built without file support", path);
#endif
}

FRAMES_DEF void frames_reader_close(frames_reader *r) {
    void *ctx;
    if (!r) return;
    ctx = r->opt.alloc_ctx;
    FRAMES_FREE(r->walk_off, ctx);
    FRAMES_FREE(r->shapes, ctx);
    frames_decoder_free(&r->cur.dec);
    if (r->cur.src_state) r->src.state_close(r->src.ctx, r->cur.src_state);
    if (r->paged && r->src.close) r->src.close(r->src.ctx);
    if (r->io.close) r->io.close(r->io.ctx);
    frames_decoder_free(&r->meta_dec);
#ifndef FRAMES_NO_POSIX
    if (r->owned && r->owned_is_map) munmap(r->owned, r->owned_len);
    else
#endif
    if (r->owned) FRAMES_FREE(r->owned, ctx);
#ifndef FRAMES_NO_POSIX
    if (r->io_fd >= 0) close(r->io_fd);
#elif !defined(FRAMES_NO_STDIO)
    if (r->io_file) fclose((FILE *)r->io_file);
#endif
    FRAMES_FREE(r->win, ctx);
    FRAMES_FREE(r->meta_copy, ctx);
    FRAMES_FREE(r->toc_copy, ctx);
    FRAMES_FREE(r->index, ctx);
    FRAMES_FREE(r, ctx);
}

/* -- iteration */

/* The TOC passed validation (which checks its entries and the last block only) but the
   frames do not match its count: stop using it. Only the reader's own position calls
   this, so that cursors in other threads never write to the reader. */
static void frames__distrust_toc(frames_reader *r, uint64_t found, int more) {
    r->toc_usable = 0;
    r->count_known = 0;
    r->count_warned = 1; /* the header's count is the TOC's: said here */
    frames__warn(r, "the TOC says %llu frames, reading found %s%llu: TOC not used",
                 (unsigned long long)r->nframes, more ? "more than " : "",
                 (unsigned long long)found);
}

/* Sequential reading ends where the records end; a count taken from the TOC is checked
   against that, so that a TOC that fooled validation cannot hide or invent frames, and a
   finished trace read without a usable TOC against its header (as a scan would: the tools
   report the warnings of the reading pass without scanning again). */
static int frames__mem_end(frames_cursor *c) {
    frames_reader *r = c->r;
    if (c == &r->cur && r->toc_usable && c->index != r->nframes) frames__distrust_toc(r, c->index, 0);
    if (c == &r->cur && r->finished && !r->count_known) frames__warn_count(r, c->index);
    return 0;
}

/* A walk from frame to frame is a chain of dependent loads (each size word gives the
   next offset), which the hardware prefetcher does not run far enough ahead of, and
   frames are small: walking without decoding ran at half the memory bandwidth. Touch
   every cache line once, FRAMES__PREFETCH_DISTANCE bytes ahead of the walk. */
#define FRAMES__PREFETCH_DISTANCE 4096u
static void frames__prefetch_ahead(frames_cursor *c, uint64_t off) {
#if defined(__GNUC__) || defined(__clang__)
    uint64_t stop = off + FRAMES__PREFETCH_DISTANCE, end = c->r->data_end, at = c->prefetched;
    const uint8_t *data = c->r->data;   /* in registers: the loop runs for every frame */
    if (c->r->paged) return;
    if (stop > end) stop = end;
    if (at < off || at > stop) at = off; /* after a seek */
    for (; at < stop; at += 64) __builtin_prefetch(data + at);
    c->prefetched = at;
#else
    (void)c;
    (void)off;
#endif
}

static int frames__mem_next_raw_slow(frames_cursor *c, frames_raw *raw) {
    frames_reader *r = c->r;
    uint64_t off = c->off, rem, len;
    const uint8_t *p;
    if (r->count_known && c->index >= r->nframes) {
        if (!r->toc_usable || off >= r->data_end) return 0;
        if (c == &r->cur) frames__distrust_toc(r, c->index, 1);
    }
    if (off >= r->data_end) return frames__mem_end(c);
    rem = r->data_end - off;
    if (rem < 8) {
        if (!r->tail_known) frames__note_tail(r, off, rem, frames__tail_at(c, off, rem, c->index), c->index);
        return frames__mem_end(c);
    }
    if (!(p = frames__at(c, off, 8))) return c->err.code;
    len = frames__le64(p);
    frames__prefetch_ahead(c, off);
    if (len > rem - 8) {
        if (!r->tail_known) frames__note_tail(r, off, rem, frames__tail_at(c, off, rem, c->index), c->index);
        return frames__mem_end(c);
    }
    if (!r->count_known && !r->finished && (p = frames__tail_at(c, off, rem, c->index)) != NULL &&
        frames__crashed_toc_at(r, p, rem, 1, off, c->index, NULL) == 1) {
        if (!r->tail_known) frames__note_crashed_toc(r, off, rem, len);
        return frames__mem_end(c);
    }
    if (len > r->opt.limits.max_frame_size) {
        c->off = off + 8 + len;
        c->index++;
        return frames__fail(&c->err, FRAMES_E_LIMIT, off, c->index - 1,
                            "frame of %llu bytes exceeds the limit of %llu",
                            (unsigned long long)len,
                            (unsigned long long)r->opt.limits.max_frame_size);
    }
    if (!(p = frames__at(c, off, 8 + len))) return c->err.code;
    if (!r->count_known && off + 8 + len == r->data_end &&
        frames__final_record_is_garbage(r, p + 8, len, off))
        return 0;
    raw->index = c->index++;
    raw->offset = off;
    raw->payload = frames_bytes_of(p + 8, (size_t)len);
    c->off = off + 8 + len;
    return 1;
}

/* The common case without a call: a frame the TOC counts, whole inside the data (for a
   paged reader: inside the bytes of its last view) and within the size limit (what
   frames__mem_next_raw_slow does then, step for step). */
FRAMES__INLINE int frames__mem_next_raw(frames_cursor *c, frames_raw *raw) {
    frames_reader *r = c->r;
    uint64_t off = c->off, len, room;
    const uint8_t *p;
    if (FRAMES__LIKELY(r->count_known && c->index < r->nframes && off < r->data_end &&
                       r->data_end - off >= 8)) {
        if (!r->paged) {
            p = r->data + off;
            room = r->data_end - off - 8;
        } else if (off >= c->win_lo && c->win_hi >= 8 && off <= c->win_hi - 8) {
            p = c->win + (off - c->win_lo);
            room = (c->win_hi < r->data_end ? c->win_hi : r->data_end) - off - 8;
        } else {
            return frames__mem_next_raw_slow(c, raw);
        }
        len = frames__le64(p);
        if (FRAMES__LIKELY(len <= room && len <= r->opt.limits.max_frame_size)) {
            frames__prefetch_ahead(c, off);
            raw->index = c->index++;
            raw->offset = off;
            raw->payload = frames_bytes_of(p + 8, (size_t)len);
            c->off = off + 8 + len;
            return 1;
        }
    }
    return frames__mem_next_raw_slow(c, raw);
}

/* After the last frame of a finished stream: read m and the TOC words for stat. */
static int frames__stream_read_toc(frames_reader *r) {
    uint64_t bound = 8 + 8 * (r->hdr.nframes + 2), rest;
    long long avail, dropped;
    if (bound > r->opt.limits.max_frame_size) bound = r->opt.limits.max_frame_size;
    if ((avail = frames__fill(r, (size_t)bound)) < 0) return (int)avail;
    if ((uint64_t)avail > bound) avail = (long long)bound;
    if (avail >= 8) {
        r->toc_copy = (uint8_t *)FRAMES_MALLOC((size_t)avail, r->opt.alloc_ctx);
        if (!r->toc_copy) return frames__fail(&r->err, FRAMES_E_NOMEM, FRAMES_NO_POS, FRAMES_NO_POS, "out of memory");
        memcpy(r->toc_copy, r->win + r->head, (size_t)avail);
        r->m = frames__le64(r->toc_copy);
        r->toc = r->toc_copy + 8;
        r->toc_words = ((uint64_t)avail - 8) / 8;
    }
    r->head += (size_t)avail;
    if ((dropped = frames__discard(r, UINT64_MAX)) < 0) return (int)dropped;
    rest = (uint64_t)dropped + ((uint64_t)avail >= 8 ? ((uint64_t)avail - 8) % 8 : (uint64_t)avail);
    if (avail < 8) frames__warn(r, "input ends inside the TOC");
    else if (rest) frames__warn(r, "%llu stray bytes after the TOC", (unsigned long long)rest);
    r->toc_matches = r->m ? frames__toc_candidates(r, r->nframes) : 0;
    r->toc_conv = r->toc_matches ? frames__first_conv(r->toc_matches) : FRAMES_TOC_INVALID;
    return FRAMES_OK;
}

static int frames__stream_end(frames_reader *r) {
    frames_cursor *c = &r->cur;
    int rc = FRAMES_OK;
    if (r->stream_done) return 0;
    r->stream_done = 1;
    r->count_known = 1;
    r->nframes = c->index;
    r->tail_known = 1;
    if (r->finished && r->t_valid && frames__stream_pos(r) == r->hdr.toc_offset) {
        rc = frames__stream_read_toc(r);
    } else if (r->finished) {
        frames__warn(r, "input ended before the TOC offset 0x%llx: the file was cut after it was "
                     "finished", (unsigned long long)r->hdr.toc_offset);
    }
    r->size = frames__stream_pos(r);
    if (r->finished && r->hdr.nframes != r->nframes)
        frames__warn(r, "header says %llu frames, %llu were found",
                     (unsigned long long)r->hdr.nframes, (unsigned long long)r->nframes);
    return rc < 0 ? rc : 0;
}

/* The bytes from pos to the TOC offset hold no complete record: consume those present,
   so that the TOC can still be read, and report them (not the distance to T, which may
   lie past the end of a cut file) as the truncated tail, as the memory reader does. */
static int frames__stream_cut_at_toc(frames_reader *r, uint64_t pos) {
    long long got = frames__discard(r, r->data_end - pos);
    if (got < 0) return (int)got;
    frames__note_tail(r, pos, (uint64_t)got, NULL, r->cur.index);
    return frames__stream_end(r);
}

static int frames__stream_next_raw(frames_reader *r, frames_raw *raw) {
    frames_cursor *c = &r->cur;
    uint64_t pos, len, need;
    long long avail;
    if (r->stream_done) return 0;
    pos = frames__stream_pos(r);
    if (r->t_valid && pos >= r->data_end) return frames__stream_end(r);
    if (r->t_valid && r->data_end - pos < 8) return frames__stream_cut_at_toc(r, pos);
    if ((avail = frames__fill(r, 8)) < 0) return (int)avail;
    if (avail < 8) {
        frames__note_tail(r, pos, (uint64_t)avail, r->win + r->head, c->index);
        return frames__stream_end(r);
    }
    len = frames__le64(r->win + r->head);
    if (r->t_valid && len > r->data_end - pos - 8) {
        frames__warn(r, "record at offset 0x%llx crosses the TOC offset", (unsigned long long)pos);
        return frames__stream_cut_at_toc(r, pos);
    }
    if (len > r->opt.limits.max_frame_size) { /* skip it (8 + len may overflow) */
        uint64_t total = len > UINT64_MAX - 8 ? UINT64_MAX : 8 + len;
        uint8_t word[8]; /* a lone last word may be a pipe TOC's m: keep it for note_tail */
        long long got;
        memcpy(word, r->win + r->head, 8);
        if ((got = frames__discard(r, total)) < 0) return (int)got;
        if ((uint64_t)got < total) {
            frames__note_tail(r, pos, (uint64_t)got, got == 8 ? word : NULL, c->index);
            return frames__stream_end(r);
        }
        c->index++;
        return frames__fail(&c->err, FRAMES_E_LIMIT, pos, c->index - 1,
                            "frame of %llu bytes exceeds the limit of %llu",
                            (unsigned long long)len,
                            (unsigned long long)r->opt.limits.max_frame_size);
    }
    need = 8 + len + (r->finished ? 0 : 1); /* one byte more tells whether it is the last */
    if ((avail = frames__fill(r, (size_t)need)) < 0) return (int)avail;
    if ((uint64_t)avail < 8 + len) {
        frames__note_tail(r, pos, (uint64_t)avail, r->win + r->head, c->index);
        r->head += (size_t)avail;
        return frames__stream_end(r);
    }
    for (;;) { /* a TOC left by a writer killed while finishing: read on while it may be */
        uint64_t want = 0;
        int toc = frames__crashed_toc_at(r, r->win + r->head, (uint64_t)avail,
                                         r->eof && (size_t)avail == r->tail - r->head, pos,
                                         c->index, &want);
        if (toc == 0) break;
        if (toc == 1) {
            frames__note_crashed_toc(r, pos, (uint64_t)avail, len);
            r->head += (size_t)avail;
            return frames__stream_end(r);
        }
        if ((avail = frames__fill(r, (size_t)want)) < 0) return (int)avail;
    }
    raw->index = c->index;
    raw->offset = pos;
    raw->payload = frames_bytes_of(r->win + r->head + 8, (size_t)len);
    if (!r->finished && (uint64_t)avail == 8 + len &&
        frames__final_record_is_garbage(r, raw->payload.ptr, len, pos)) {
        r->head += (size_t)avail;
        return frames__stream_end(r);
    }
    r->head += 8 + (size_t)len;
    c->index++;
    return 1;
}

/* Decode a raw record; errors carry its index and offset. */
static FRAMES__NOINLINE int frames__decode_raw_again(frames_cursor *c, const frames_raw *raw,
                                                     frames_frame *f) {
    frames_error e;
    int rc = frames_decode_frame(&c->dec, raw->payload.ptr, raw->payload.len, f, &e);
    if (rc < 0) return frames__fail(&c->err, rc, raw->offset, raw->index, "%s", e.message);
    return 1;
}

/* Decoded without an error record (clearing one costs every frame); a frame that fails
   is decoded again for the message (decoding is deterministic), out of line so that the
   error record's stack space is not set up for every frame. */
FRAMES__INLINE int frames__decode_raw(frames_cursor *c, const frames_raw *raw, frames_frame *f) {
    if (FRAMES__LIKELY(frames_decode_frame(&c->dec, raw->payload.ptr, raw->payload.len, f,
                                           NULL) == FRAMES_OK))
        return 1;
    return frames__decode_raw_again(c, raw, f);
}

/* The next record of the reader's own position. Inlined into the public functions: the
   calls from function to function cost a tenth of reading a mapped trace (each saved and
   restored six registers). */
FRAMES__INLINE int frames__reader_next_raw(frames_reader *r, frames_raw *raw) {
    int rc = r->stream ? frames__stream_next_raw(r, raw) : frames__mem_next_raw(&r->cur, raw);
    if (rc < 0) r->err = r->err.code && r->stream && !r->cur.err.code ? r->err : r->cur.err;
    return rc;
}

/* A record of the reader's own position decoded, with the reader's error and counts. */
FRAMES__INLINE int frames__reader_decode(frames_reader *r, const frames_raw *raw, frames_frame *f) {
    int rc = frames__decode_raw(&r->cur, raw, f);
    if (rc < 0) {
        r->decode_errors++;
        r->err = r->cur.err;
        return rc;
    }
    r->decoded++;
    r->flags_seen |= f->flags;
    return 1;
}

FRAMES__INLINE int frames__reader_next_full(frames_reader *r, frames_frame *f, frames_raw *raw) {
    int rc;
    if (r->cur.err.code) frames__clear_error(&r->cur.err);   /* code 0: already clear */
    rc = frames__reader_next_raw(r, raw);
    if (rc <= 0) return rc;
    return frames__reader_decode(r, raw, f);
}

/* The reading pass of a copy (frames_writer_options_like_copy): keep the offset of
   every m-th frame. */
static FRAMES__NOINLINE void frames__walk_note(frames_reader *r, const frames_raw *raw) {
    if (raw->index != r->walk_next) r->walk_broken = 1;
    if (r->walk_broken) return;
    r->walk_next++;
    if (--r->walk_left) return;
    r->walk_left = r->m;
    if (r->walk_len == r->walk_cap) r->walk_broken = 1;
    else r->walk_off[r->walk_len++] = raw->offset;
}

FRAMES_DEF int frames_reader_next_raw(frames_reader *r, frames_raw *raw) {
    int rc = frames__reader_next_raw(r, raw);
    if (FRAMES__UNLIKELY(r->walk_off != NULL) && rc > 0) frames__walk_note(r, raw);
    return rc;
}

FRAMES_DEF int frames_reader_next(frames_reader *r, frames_frame *f) {
    frames_raw raw = {0, 0, {NULL, 0}}; /* set for gcc's flow analysis when inlined */
    return frames__reader_next_full(r, f, &raw);
}

FRAMES_DEF int frames_reader_next_full(frames_reader *r, frames_frame *f, frames_raw *raw) {
    return frames__reader_next_full(r, f, raw);
}

FRAMES_DEF int frames_reader_decode(frames_reader *r, const frames_raw *raw, frames_frame *f) {
    int rc;
    if (r->cur.err.code) frames__clear_error(&r->cur.err);
    rc = frames__reader_decode(r, raw, f);
    if (rc < 0) frames__clear_error(&r->cur.err); /* kept in r->err; the next raw read starts clean */
    return rc;
}

/* What a canonical record's bytes may vary in and stay canonical: its values (bytes the
   check does not look into) and its memory addresses (any minimal varint of the same
   length); the record is kept as a shape only when these fit. */
#define FRAMES__CANON_MARKS 24u
typedef struct frames__canon_marks {
    uint32_t n;                          /* > FRAMES__CANON_MARKS: too many to keep */
    uint16_t off[FRAMES__CANON_MARKS];   /* from the start of the record */
    uint8_t len[FRAMES__CANON_MARKS];
    uint8_t addr[FRAMES__CANON_MARKS];   /* 1: a memory address's varint */
} frames__canon_marks;

FRAMES__INLINE void frames__canon_mark(frames__canon_marks *m, const uint8_t *rec, const uint8_t *at,
                                       size_t len, int addr) {
    if (m->n >= FRAMES__CANON_MARKS || len > 0xFF || at - rec > 0xFFFF) {
        m->n = FRAMES__CANON_MARKS + 1;
        return;
    }
    m->off[m->n] = (uint16_t)(at - rec);
    m->len[m->n] = (uint8_t)len;
    m->addr[m->n++] = (uint8_t)addr;
}

/* Does the operand list p..end consist only of elements the one-pass list decoder
   (frames__dec_operands_fast) takes? Adds their number to *count, and marks their values
   and addresses (in the record starting at rec). */
static int frames__canonical_operands(const uint8_t *rec, const uint8_t *p, const uint8_t *end, uint64_t *count,
                                      frames__canon_marks *m) {
    frames_operand op; /* the templates' checks fill it */
    const uint8_t *next, *a, *at;
    for (; p < end; p = next, ++*count) {
        if (FRAMES__LIKELY((next = frames__dec_operand_hot(p, end, &op)) != NULL)) {
            at = p + 7;   /* where each template has a memory operand's address */
        } else {
            if (end - p < 2 || p[0] != 0x0a || !(a = frames__fast_len(p + 1, end, &next)) ||
                !frames__dec_operand_info_fast(a, next, &op))
                return 0;
            at = a + 5;
        }
        frames__canon_mark(m, rec, op.value.ptr, op.value.len, 0);
        if (op.spec == FRAMES_MEM) {
            const uint8_t *q = at;
            while (*q & 0x80) q++;
            frames__canon_mark(m, rec, at, (size_t)(q + 1 - at), 1);
        }
    }
    return 1;
}

/* The frame's payload as frames__dec_frame's fast path decodes it whole (frames__dec_std_fast
   with both lists taken by frames__dec_operands_fast): `0a len` std_frame spanning the
   payload, 08 address, 10 thread, 1a rawbytes, 22 pre, maybe 2a post, maybe 32 mode.
   *nops: the operands, whose array the decoder would take from its scratch arena. */
static int frames__std_canonical(const uint8_t *p, const uint8_t *end, uint64_t *nops,
                                 frames__canon_marks *m) {
    const uint8_t *q, *stop, *rec = p;
    uint64_t v;
    *nops = 0;
    if (p >= end || *p != 0x0a || !(q = frames__fast_len(p + 1, end, &stop)) || stop != end) return 0;
    p = q;
    if (p >= end || *p != 0x08 || !(p = frames__fast_varint(p + 1, end, &v))) return 0;
    if (p >= end || *p != 0x10 || !(p = frames__fast_varint(p + 1, end, &v))) return 0;
    if (p >= end || *p != 0x1a || !frames__fast_len(p + 1, end, &p)) return 0;
    if (p >= end || *p != 0x22 || !(q = frames__fast_len(p + 1, end, &stop)) ||
        !frames__canonical_operands(rec, q, stop, nops, m))
        return 0;
    p = stop;
    if (p < end && *p == 0x2a) {
        if (!(q = frames__fast_len(p + 1, end, &stop)) || !frames__canonical_operands(rec, q, stop, nops, m))
            return 0;
        p = stop;
    }
    if (p < end && *p == 0x32 && !frames__fast_len(p + 1, end, &p)) return 0;
    return p == end;
}

/* Canonical records kept as shapes (frames_reader_raw_is_canonical): one that equals a
   kept one but in its values and the varints of its addresses (each still a minimal
   varint of the same length) is canonical too, as every byte the check reads is the same
   or a value it does not read. Most records are so recognised by a masked compare. */
#define FRAMES__CANON_SHAPES_LOG2 10   /* 1,024 shapes of 544 bytes (2,048: 7 % faster, twice the memory) */
#define FRAMES__CANON_SHAPE_BYTES 256u
#define FRAMES__CANON_SHAPE_ADDRS 8u
struct frames__canon_shape {
    uint32_t len, naddr;   /* len 0: empty */
    uint16_t aoff[FRAMES__CANON_SHAPE_ADDRS];
    uint8_t alen[FRAMES__CANON_SHAPE_ADDRS];
    uint8_t bytes[FRAMES__CANON_SHAPE_BYTES], mask[FRAMES__CANON_SHAPE_BYTES];
};

/* The slot of the record [p, p + len) in the reader's shapes (allocated at the first use),
   or NULL when it has none (a record too short or too long to keep, no memory). */
static struct frames__canon_shape *frames__canon_slot(frames_reader *r, const uint8_t *p, size_t len) {
    if (len < FRAMES__SHAPE_MIN || len > FRAMES__CANON_SHAPE_BYTES) return NULL;
    if (FRAMES__UNLIKELY(!r->shapes)) {
        if (r->shapes_failed) return NULL;
        r->shapes = (struct frames__canon_shape *)frames__zalloc(
            ((size_t)1 << FRAMES__CANON_SHAPES_LOG2) * sizeof *r->shapes, r->opt.alloc_ctx);
        if ((r->shapes_failed = r->shapes == NULL) != 0) return NULL;
    }
    return &r->shapes[frames__shape_slot(p, len, FRAMES__CANON_SHAPES_LOG2)];
}

static int frames__canon_shape_takes(const struct frames__canon_shape *s, const uint8_t *p, size_t len) {
    uint64_t v;
    uint32_t k;
    if (s->len != len || !frames__masked_equal(p, s->bytes, s->mask, len)) return 0;
    for (k = 0; k < s->naddr; k++)
        if (!frames__varint_of_len(p + s->aoff[k], s->alen[k], &v)) return 0;
    return 1;
}

static void frames__canon_shape_keep(struct frames__canon_shape *s, const uint8_t *p, size_t len,
                                     const frames__canon_marks *m) {
    uint32_t k;
    if (m->n > FRAMES__CANON_MARKS) return;
    s->len = 0;   /* unusable while it is filled */
    s->naddr = 0;
    memcpy(s->bytes, p, len);
    memset(s->mask, 0xFF, len);
    for (k = 0; k < m->n; k++) {
        memset(s->mask + m->off[k], 0, m->len[k]);
        if (!m->addr[k]) continue;
        if (s->naddr == FRAMES__CANON_SHAPE_ADDRS) return;
        s->aoff[s->naddr] = m->off[k];
        s->alen[s->naddr++] = m->len[k];
    }
    s->len = (uint32_t)len;
}

FRAMES_DEF int frames_reader_raw_is_canonical(frames_reader *r, const frames_raw *raw) {
    const uint8_t *p = (const uint8_t *)raw->payload.ptr;
    size_t len = raw->payload.len;
    struct frames__canon_shape *s = frames__canon_slot(r, p, len);
    frames__canon_marks m;
    uint64_t nops;
    if (s && frames__canon_shape_takes(s, p, len)) {
        r->decoded++;
        return 1;
    }
    m.n = 0;
    if (!frames__std_canonical(p, p + len, &nops, &m)) return 0;
    /* the decoder's arena would hold both lists (a capacity word each): past its bound
       decoding fails, which only decoding reports (a shape has the same number) */
    if (r->cur.dec.limits.max_scratch < 16 ||
        nops > (r->cur.dec.limits.max_scratch - 16) / sizeof(frames_operand))
        return 0;
    if (s) frames__canon_shape_keep(s, p, len, &m);
    r->decoded++;
    return 1;
}

FRAMES_DEF int frames_reader_in_memory(const frames_reader *r) { return !r->stream && !r->paged; }
FRAMES_DEF const uint8_t *frames_reader_memory(const frames_reader *r, size_t *size) {
    *size = frames_reader_in_memory(r) ? (size_t)r->size : 0;
    return *size ? r->data : NULL;
}

FRAMES_DEF uint64_t frames_reader_tell(const frames_reader *r) { return r->cur.index; }
FRAMES_DEF int frames_reader_truncated(const frames_reader *r) { return r->truncated; }

static int frames__need_random_access(frames_reader *r) {
    if (r->stream)
        return frames__fail(&r->err, FRAMES_E_UNSUPPORTED, FRAMES_NO_POS, FRAMES_NO_POS,
                            "random access needs a file or memory, not a stream");
    return FRAMES_OK;
}

FRAMES_DEF int frames_reader_seek(frames_reader *r, uint64_t index) {
    uint64_t off;
    int rc;
    if ((rc = frames__need_random_access(r)) < 0) return rc;
    if ((rc = frames__locate(r, &r->cur, index, &off, &r->err)) < 0) return rc;
    r->cur.index = index;
    r->cur.off = off;
    return FRAMES_OK;
}

FRAMES_DEF int frames_reader_count(frames_reader *r, uint64_t *n) {
    int rc;
    if (r->stream) {
        if (!r->stream_done) return frames__need_random_access(r);
        *n = r->nframes;
        return FRAMES_OK;
    }
    if (!r->count_known && (rc = frames__scan(r)) < 0) return rc;
    *n = r->nframes;
    return FRAMES_OK;
}

FRAMES_DEF int frames_reader_index(frames_reader *r) {
    int rc;
    if ((rc = frames__need_random_access(r)) < 0) return rc;
    if (!r->toc_usable && (rc = frames__scan(r)) < 0) return rc;
    return FRAMES_OK;
}

FRAMES_DEF const frames_error *frames_reader_error(const frames_reader *r) { return &r->err; }
FRAMES_DEF const frames_header *frames_reader_header(const frames_reader *r) { return &r->hdr; }
FRAMES_DEF const frames_meta *frames_reader_meta(const frames_reader *r) {
    return r->has_meta ? &r->meta : NULL;
}
FRAMES_DEF frames_bytes frames_reader_meta_bytes(const frames_reader *r) { return r->meta_bytes; }

FRAMES_DEF const char *frames_reader_warning(const frames_reader *r, uint32_t i) {
    return i < r->nwarn ? r->warn[i] : NULL;
}

/* Offset of frame j*m from the scan index (not from the TOC). */
static int frames__scanned_offset(frames_reader *r, uint64_t index, uint64_t *off) {
    int usable = r->toc_usable, rc;
    r->toc_usable = 0;
    rc = frames__locate(r, &r->cur, index, off, &r->err);
    r->toc_usable = usable;
    return rc;
}

/* Offset of the first frame of block b: from the offsets a copy's reading pass met
   (frames_writer_options_like_confirm), else from the scan. */
static int frames__block_offset(frames_reader *r, uint64_t block, uint64_t *off) {
    if (!r->walk_done) return frames__scanned_offset(r, block * r->m, off);
    if (block >= r->walk_len) return FRAMES_E_RANGE;
    *off = r->walk_off[block];
    return FRAMES_OK;
}

/* Keep only the conventions whose entries point where they should. */
static void frames__verify_toc_matches(frames_reader *r) {
    uint64_t n = r->nframes, m = r->m, k = r->toc_words, nb, i, off = 0;
    uint32_t kept = 0;
    int conv;
    if (r->verified || r->stream || !r->m || !r->toc_matches) return;
    r->verified = 1;
    if (!r->walk_done && frames__scan(r) < 0) return;
    nb = frames__ceil_div(n, m);
    for (conv = 1; conv < FRAMES_TOC_INVALID; conv++) {
        int ok = 1, shift = frames__toc_shift(conv);
        uint64_t pointing = k;
        if (!(r->toc_matches & (1u << conv))) continue;
        if (conv == FRAMES_TOC_CEIL || conv == FRAMES_TOC_CEIL_ZERO) pointing = n ? (n - 1) / m : 0;
        if (conv == FRAMES_TOC_TRACEWRAP && n % m == 0 && k) pointing = k - 1;
        if (conv == FRAMES_TOC_README) pointing = nb;
        for (i = conv == FRAMES_TOC_BLOCK_STARTS ? 1 : 0; ok && i < pointing; i++) {
            uint64_t block = i + (uint64_t)shift;
            ok = block < nb && frames__block_offset(r, block, &off) == FRAMES_OK &&
                 off == frames__toc_entry(r, i);
        }
        if (ok && conv == FRAMES_TOC_README) ok = frames__toc_entry(r, k - 1) == r->hdr.toc_offset;
        if (ok) kept |= 1u << conv;
    }
    r->toc_matches = kept;
    r->toc_conv = kept ? frames__first_conv(kept) : FRAMES_TOC_INVALID;
}

/* Would the upstream readers accept this file? See the spec's reader tables. */
static void frames__judge_readers(frames_reader *r, frames_reader_info *st) {
    uint64_t n = r->hdr.nframes, m = r->m;
    int frames_ok_cxx, container_cxx;
    frames_ok_cxx = !r->truncated && !r->bad_tail && !r->decode_errors &&
                    !(r->flags_seen & (FRAMES_FF_LIBPROTOBUF_REJECTS | FRAMES_FF_EMPTY_VARIANT)) &&
                    r->count_known && r->nframes == n;
    container_cxx = r->hdr.magic == FRAMES_MAGIC && (r->hdr.version == 2 || r->hdr.version == 3) &&
                    r->finished && r->t_valid && m != 0 && n >= 1 && r->has_meta;
    st->cxx_head_accepts = container_cxx && frames_ok_cxx && r->toc_words * 8 + 8 + r->hdr.toc_offset == r->size &&
                           r->toc_words == frames__ceil_div(n, m);
    st->cxx_legacy_accepts = container_cxx && frames_ok_cxx &&
                             r->toc_words * 8 + 8 + r->hdr.toc_offset == r->size &&
                             r->toc_words == (n - 1) / m;
    st->ocaml_accepts = r->hdr.arch <= 82 && !r->bad_tail && !r->decode_errors &&
                        (r->hdr.version == 1 || r->has_meta) &&
                        !(r->flags_seen & FRAMES_FF_PIQIRUN_REJECTS);
}

FRAMES_DEF int frames_reader_info_get(frames_reader *r, frames_reader_info *st) {
    memset(st, 0, sizeof *st);
    if (!r->stream && !r->toc_usable && frames__scan(r) < 0) return r->err.code;
    if (!r->stream && r->finished && r->t_valid && r->m) {
        if (r->toc_usable || r->toc_conv == FRAMES_TOC_INVALID) {
            r->toc_matches = frames__toc_candidates(r, r->nframes);
            r->verified = 0;
        }
        /* verifying every entry against a scan would decompress a paged trace whole */
        if (!r->paged) frames__verify_toc_matches(r);
        r->toc_conv = r->toc_matches ? frames__first_conv(r->toc_matches) : FRAMES_TOC_INVALID;
    }
    st->header = r->hdr;
    st->finished = r->finished;
    st->random_access = !r->stream;
    st->toc = r->toc_conv;
    st->toc_matches = r->toc_matches;
    st->frames_per_toc = r->m;
    st->toc_entries = r->toc_words;
    st->toc_used = r->toc_usable;
    st->count_known = r->count_known;
    st->nframes = r->count_known ? r->nframes : r->cur.index;
    st->file_size = r->stream && !r->stream_done ? 0 : r->size;
    st->data_end = r->truncated ? r->trunc_off : r->data_end;
    st->truncated = r->truncated;
    st->truncated_offset = r->trunc_off;
    st->truncated_bytes = r->trunc_bytes;
    st->nwarnings = r->nwarn;
    st->frames_decoded = r->decoded;
    st->flags_seen = r->flags_seen;
    frames__judge_readers(r, st);
    return FRAMES_OK;
}

/* -- cursors */

FRAMES_DEF int frames_cursor_open(frames_cursor **out, frames_reader *r, uint64_t first,
                                  frames_error *err) {
    frames_cursor *c;
    uint64_t off;
    int rc;
    *out = NULL;
    if (r->stream)
        return frames__fail(err, FRAMES_E_UNSUPPORTED, FRAMES_NO_POS, FRAMES_NO_POS,
                            "cursors need a file or memory, not a stream");
    c = (frames_cursor *)FRAMES_MALLOC(sizeof *c, r->opt.alloc_ctx);
    if (!c) return frames__fail(err, FRAMES_E_NOMEM, FRAMES_NO_POS, FRAMES_NO_POS, "out of memory");
    memset(c, 0, sizeof *c);
    c->r = r;
    c->allocated = 1;
    frames_decoder_init(&c->dec, NULL, 0, r->opt.alloc_ctx);
    c->dec.limits = r->opt.limits;
    c->dec.strict = (r->opt.flags & FRAMES_READ_STRICT) != 0;
    frames__clear_error(&c->err);
    if (r->paged && !(c->src_state = r->src.state_open(r->src.ctx)))
        rc = frames__fail(err, FRAMES_E_NOMEM, FRAMES_NO_POS, FRAMES_NO_POS, "out of memory");
    else
        rc = frames__locate(r, c, first, &off, err);
    if (rc < 0) {
        frames_cursor_close(c);
        return rc;
    }
    c->index = first;
    c->off = off;
    *out = c;
    return FRAMES_OK;
}

FRAMES_DEF int frames_cursor_next_raw(frames_cursor *c, frames_raw *raw) {
    return frames__mem_next_raw(c, raw);
}

FRAMES_DEF int frames_cursor_next(frames_cursor *c, frames_frame *f) {
    frames_raw raw = {0, 0, {NULL, 0}}; /* set for gcc's flow analysis when inlined */
    int rc = frames__mem_next_raw(c, &raw);
    if (rc <= 0) return rc;
    return frames__decode_raw(c, &raw, f);
}

FRAMES_DEF uint64_t frames_cursor_tell(const frames_cursor *c) { return c->index; }
FRAMES_DEF const frames_error *frames_cursor_error(const frames_cursor *c) { return &c->err; }

FRAMES_DEF void frames_cursor_close(frames_cursor *c) {
    if (!c) return;
    frames_decoder_free(&c->dec);
    if (c->src_state) c->r->src.state_close(c->r->src.ctx, c->src_state);
    if (c->allocated) FRAMES_FREE(c, c->r->opt.alloc_ctx);
}

/* --------------------------------------------------------------------------------------
   container: writer
   -------------------------------------------------------------------------------------- */

enum { FRAMES__W_OPEN = 0, FRAMES__W_FINISHED = 1, FRAMES__W_FAILED = 2 };

FRAMES_DEF void frames_writer_options_default(frames_writer_options *o) {
    memset(o, 0, sizeof *o);
    o->version = 3;
    o->arch = FRAMES_ARCH_I386;
    o->machine = FRAMES_MACH_I386;
    o->frames_per_toc = FRAMES_DEFAULT_FRAMES_PER_TOC;
    o->toc = FRAMES_TOC_LIBTRACE;
}

static int frames__wfail(frames_writer *w, int code, const char *fmt, const char *detail) {
    frames__fail(&w->frames__err, code, w->frames__offset, w->frames__count, fmt, detail);
    if (code == FRAMES_E_IO) w->frames__state = FRAMES__W_FAILED;
    return code;
}

/* Hand the buffered bytes to the sink. */
static int frames__wflush_buffer(frames_writer *w) {
    if (w->frames__buflen == 0) return FRAMES_OK;
    if (w->frames__sink.write(w->frames__sink.ctx, w->frames__buf, w->frames__buflen) < 0)
        return frames__wfail(w, FRAMES_E_IO, "write failed: %s", frames__syserr());
    w->frames__buflen = 0;
    return FRAMES_OK;
}

/* The writer's own buffer. The output is handed to the sink only at frame boundaries, so
   writes end inside a page; fewer, larger ones cost the kernel less: the benchmark's
   188 MB file took 0.05-0.075 s of system time in 64 KiB writes, 0.03-0.065 s in 512 KiB
   and 1 MiB ones (docs/benchmark.md). */
#define FRAMES__WRITER_BUFFER (1u << 19)

/* Append bytes through the buffer (directly when larger than the buffer). */
static int frames__wappend(frames_writer *w, const void *data, size_t len) {
    int rc;
    if (len > w->frames__bufcap - w->frames__buflen) {
        if ((rc = frames__wflush_buffer(w)) < 0) return rc;
        if (len > w->frames__bufcap) {
            if (w->frames__sink.write(w->frames__sink.ctx, data, len) < 0)
                return frames__wfail(w, FRAMES_E_IO, "write failed: %s", frames__syserr());
            w->frames__offset += len;
            return FRAMES_OK;
        }
    }
    memcpy(w->frames__buf + w->frames__buflen, data, len);
    w->frames__buflen += len;
    w->frames__offset += len;
    return FRAMES_OK;
}

static int frames__wappend_u64(frames_writer *w, uint64_t v) {
    uint8_t b[8];
    frames__put_le64(b, v);
    return frames__wappend(w, b, 8);
}

static int frames__push_toc(frames_writer *w, uint64_t off) {
    if (w->frames__toclen == w->frames__toccap) {
        size_t ncap;
        uint64_t *nt;
        if (!w->frames__tocowned)
            return frames__wfail(w, FRAMES_E_NOMEM, "%s", "caller TOC storage is full");
        ncap = w->frames__toccap ? w->frames__toccap * 2 : 64;
        nt = (uint64_t *)FRAMES_REALLOC(w->frames__toc, ncap * sizeof *nt, w->frames__opt.alloc_ctx);
        if (!nt) return frames__wfail(w, FRAMES_E_NOMEM, "%s", "out of memory for the TOC");
        w->frames__toc = nt;
        w->frames__toccap = ncap;
    }
    w->frames__toc[w->frames__toclen++] = off;
    return FRAMES_OK;
}

static void frames__writer_release(frames_writer *w);

FRAMES_DEF int frames_writer_init(frames_writer *w, const frames_sink *sink,
                                  const frames_writer_options *o, const frames_meta *meta,
                                  frames_error *err) {
    frames_writer_options def;
    frames_meta empty;
    size_t msize;
    uint8_t hdr[FRAMES_HEADER_SIZE + 8];
    int rc;
    memset(w, 0, sizeof *w);
    if (!o) {
        frames_writer_options_default(&def);
        o = &def;
    }
    if (!sink || !sink->write)
        return frames__fail(err, FRAMES_E_INVALID, FRAMES_NO_POS, FRAMES_NO_POS, "no sink");
    if (o->version != 2 && o->version != 3)
        return frames__fail(err, FRAMES_E_INVALID, FRAMES_NO_POS, FRAMES_NO_POS,
                            "version %u cannot be written (2 or 3)", (unsigned)o->version);
    if (o->frames_per_toc == 0)
        return frames__fail(err, FRAMES_E_INVALID, FRAMES_NO_POS, FRAMES_NO_POS,
                            "frames per TOC entry must not be 0");
    if (o->toc != FRAMES_TOC_LIBTRACE && o->toc != FRAMES_TOC_CEIL &&
        o->toc != FRAMES_TOC_TRACEWRAP && o->toc != FRAMES_TOC_CEIL_ZERO)
        return frames__fail(err, FRAMES_E_INVALID, FRAMES_NO_POS, FRAMES_NO_POS,
                            "TOC convention %d cannot be written", o->toc);
    w->frames__sink = *sink;
    w->frames__opt = *o;
    w->frames__state = FRAMES__W_OPEN;
    frames__clear_error(&w->frames__err);
    if (!meta) {
        memset(&empty, 0, sizeof empty);
        meta = &empty;
    }
    msize = o->meta_raw.ptr ? o->meta_raw.len : frames_meta_size(meta);
    if (o->buffer) {
        w->frames__buf = (uint8_t *)o->buffer;
        w->frames__bufcap = o->buffer_size;
    } else { /* large enough for header and meta frame, which go out first and whole */
        w->frames__bufcap = o->buffer_size ? o->buffer_size : FRAMES__WRITER_BUFFER;
        if (w->frames__bufcap < sizeof hdr + msize) w->frames__bufcap = sizeof hdr + msize;
        w->frames__buf = (uint8_t *)FRAMES_MALLOC(w->frames__bufcap, o->alloc_ctx);
        w->frames__bufowned = 1;
        if (!w->frames__buf)
            return frames__fail(err, FRAMES_E_NOMEM, FRAMES_NO_POS, FRAMES_NO_POS, "out of memory");
    }
    w->frames__toc = o->toc_storage;
    w->frames__toccap = o->toc_storage ? o->toc_capacity : 0;
    w->frames__tocowned = o->toc_storage == NULL;
    frames__put_le64(hdr, FRAMES_MAGIC);
    frames__put_le64(hdr + 8, o->version);
    frames__put_le64(hdr + 16, o->arch);
    frames__put_le64(hdr + 24, o->machine);
    frames__put_le64(hdr + 32, 0);
    frames__put_le64(hdr + 40, 0);
    frames__put_le64(hdr + 48, msize);
    rc = frames__wappend(w, hdr, sizeof hdr);
    if (rc == FRAMES_OK && msize <= w->frames__bufcap - w->frames__buflen) {
        if (o->meta_raw.ptr)
            memcpy(w->frames__buf + w->frames__buflen, o->meta_raw.ptr, msize);
        else
            frames_encode_meta(meta, w->frames__buf + w->frames__buflen, msize, NULL, NULL);
        w->frames__buflen += msize;
        w->frames__offset += msize;
    } else if (rc == FRAMES_OK) {
        rc = frames__wfail(w, FRAMES_E_SPACE, "%s", "writer buffer too small for the meta frame");
    }
    /* the header goes out at once: a crash before the first flush still leaves a trace */
    if (rc == FRAMES_OK) rc = frames__wflush_buffer(w);
    if (rc < 0) { /* the sink stays the caller's to close */
        if (err) *err = w->frames__err;
        frames__writer_release(w);
        return rc;
    }
    w->frames__first = w->frames__offset;
    if (err) frames__clear_error(err);
    return FRAMES_OK;
}

FRAMES_DEF int frames_writer_open(frames_writer **out, const frames_sink *sink,
                                  const frames_writer_options *o, const frames_meta *meta,
                                  frames_error *err) {
    void *ctx = o ? o->alloc_ctx : NULL;
    frames_writer *w = (frames_writer *)FRAMES_MALLOC(sizeof *w, ctx);
    int rc;
    *out = NULL;
    if (!w) return frames__fail(err, FRAMES_E_NOMEM, FRAMES_NO_POS, FRAMES_NO_POS, "out of memory");
    if ((rc = frames_writer_init(w, sink, o, meta, err)) < 0) {
        FRAMES_FREE(w, ctx);
        return rc;
    }
    w->frames__allocated = 1;
    *out = w;
    return FRAMES_OK;
}

/* The TOC entry for frame j is pushed just before frame j is written, as libtrace does. */
static int frames__before_frame(frames_writer *w) {
    uint64_t m = w->frames__opt.frames_per_toc;
    if (w->frames__state != FRAMES__W_OPEN)
        return frames__fail(&w->frames__err, FRAMES_E_STATE, FRAMES_NO_POS, FRAMES_NO_POS,
                            w->frames__state == FRAMES__W_FINISHED ? "trace already finished"
                                                                   : "writer failed earlier");
    if (w->frames__count > 0 && w->frames__count % m == 0)
        return frames__push_toc(w, w->frames__offset);
    return FRAMES_OK;
}

FRAMES_DEF int frames_writer_add(frames_writer *w, const frames_frame *f) {
    frames__enc e;
    frames__plain_std z;
    size_t room, n;
    uint8_t *start;
    uint32_t irregular = 0;
    int rc, first = 1, check = !(w->frames__opt.encode_flags & FRAMES_ENC_LENIENT);
    int std_only = frames__options_of(f) == 1u << FRAMES_KIND_STD;
    /* a std_frame is checked after its first encoding into the free space (which commits
       nothing), and only when not all its operands are plain */
    if (check && !std_only && (rc = frames_validate_frame(f, &w->frames__err)) < 0) {
        w->frames__err.frame = w->frames__count;
        return rc;
    }
    if (std_only && w->frames__state == FRAMES__W_OPEN && w->frames__buf) {
        uint8_t *p = w->frames__buf + w->frames__buflen;
        room = w->frames__bufcap - w->frames__buflen;
        n = frames__write_plain_std_guessed(p + 8, room > 8 ? room - 8 : 0, &f->std,
                                            w->frames__guess);
        if (n) {
            if ((rc = frames__before_frame(w)) < 0) return rc;
            frames__put_le64(p, n);
            w->frames__buflen += 8 + n;
            w->frames__offset += 8 + n;
            w->frames__count++;
            return FRAMES_OK;
        }
    }
    if (std_only && frames__plain_std_size(&f->std, &z) && frames__frame_fits(w->frames__bufcap, z.total)) {
        uint8_t *p;
        w->frames__guess[0] = (uint8_t)frames__small_varint_size(z.std);
        w->frames__guess[1] = (uint8_t)frames__small_varint_size(z.pre);
        w->frames__guess[2] = (uint8_t)frames__small_varint_size(z.post);
        if ((rc = frames__before_frame(w)) < 0) return rc;
        if (!frames__frame_fits(w->frames__bufcap - w->frames__buflen, z.total) &&
            (rc = frames__wflush_buffer(w)) < 0)
            return rc;
        p = w->frames__buf + w->frames__buflen;
        frames__put_le64(p, z.total);
        frames__write_plain_std(p + 8, &f->std, &z);
        w->frames__buflen += 8 + z.total;
        w->frames__offset += 8 + z.total;
        w->frames__count++;
        return FRAMES_OK;
    }
    for (;;) {
        room = w->frames__bufcap - w->frames__buflen;
        start = w->frames__buf + w->frames__buflen + 8;
        e.cap = room > 8 ? room - 8 : 0;
        e.end = start + e.cap;
        n = std_only ? frames__enc_std_frame(e, &f->std, &irregular) : frames__enc_frame(e, f);
        if (first) {
            if (check && irregular && (rc = frames_validate_frame(f, &w->frames__err)) < 0) {
                w->frames__err.frame = w->frames__count;
                return rc;
            }
            if ((rc = frames__before_frame(w)) < 0) return rc;
            first = 0;
        }
        if (frames__frame_fits(room, n)) break;
        if (w->frames__buflen == 0) { /* larger than the whole buffer: encode on the side */
            void *tmp = FRAMES_MALLOC(n ? n : 1, w->frames__opt.alloc_ctx);
            size_t len = n;
            if (!tmp) return frames__wfail(w, FRAMES_E_NOMEM, "%s", "out of memory for a large frame");
            frames_encode_frame(f, FRAMES_ENC_LENIENT, tmp, len, &len, NULL);
            rc = frames__wappend_u64(w, len);
            if (rc == FRAMES_OK) rc = frames__wappend(w, tmp, len);
            FRAMES_FREE(tmp, w->frames__opt.alloc_ctx);
            if (rc < 0) return rc;
            w->frames__count++;
            return FRAMES_OK;
        }
        if ((rc = frames__wflush_buffer(w)) < 0) return rc;
    }
    if (n < e.cap) memmove(start, start + (e.cap - n), n);
    frames__put_le64(w->frames__buf + w->frames__buflen, n);
    w->frames__buflen += 8 + n;
    w->frames__offset += 8 + n;
    w->frames__count++;
    return FRAMES_OK;
}

FRAMES_DEF int frames_writer_add_encoded(frames_writer *w, const void *payload, size_t len) {
    int rc;
    if ((rc = frames__before_frame(w)) < 0) return rc;
    if (8 + len > w->frames__bufcap - w->frames__buflen && (rc = frames__wflush_buffer(w)) < 0)
        return rc;
    if ((rc = frames__wappend_u64(w, len)) < 0 || (rc = frames__wappend(w, payload, len)) < 0)
        return rc;
    w->frames__count++;
    return FRAMES_OK;
}

FRAMES_DEF int frames_writer_flush(frames_writer *w) {
    int rc;
    if (w->frames__state == FRAMES__W_FAILED) return FRAMES_E_STATE;
    if ((rc = frames__wflush_buffer(w)) < 0) return rc;
    if (w->frames__sink.flush && w->frames__sink.flush(w->frames__sink.ctx) < 0)
        return frames__wfail(w, FRAMES_E_IO, "flush failed: %s", frames__syserr());
    return FRAMES_OK;
}

/* m, the entries pushed while writing (libtrace: floor((n-1)/m)), then what the chosen
   convention adds: tracewrap one entry = T when m divides n, ceil padding up to ceil(n/m)
   with T (TCG plugin) or 0 (rz-tracetest). */
static int frames__write_toc(frames_writer *w, uint64_t T) {
    uint64_t n = w->frames__count, m = w->frames__opt.frames_per_toc, want, have, i;
    int conv = w->frames__opt.toc, rc;
    if ((rc = frames__wappend_u64(w, m)) < 0) return rc;
    for (i = 0; i < w->frames__toclen; i++)
        if ((rc = frames__wappend_u64(w, w->frames__toc[i])) < 0) return rc;
    have = w->frames__toclen;
    want = have;
    if (conv == FRAMES_TOC_TRACEWRAP) want = n / m;
    if (conv == FRAMES_TOC_CEIL || conv == FRAMES_TOC_CEIL_ZERO) want = n / m + (n % m != 0);
    for (; have < want; have++)
        if ((rc = frames__wappend_u64(w, conv == FRAMES_TOC_CEIL_ZERO ? 0 : T)) < 0) return rc;
    return FRAMES_OK;
}

FRAMES_DEF int frames_writer_finish(frames_writer *w) {
    uint64_t T = w->frames__offset;
    uint8_t word[8];
    int rc;
    if (w->frames__state == FRAMES__W_FINISHED) return w->frames__sink.patch ? FRAMES_OK : FRAMES_UNFINISHED;
    if (w->frames__state == FRAMES__W_FAILED) return FRAMES_E_STATE;
    if (!w->frames__sink.patch) { /* the header cannot be patched: leave it unfinished */
        if ((rc = frames_writer_flush(w)) < 0) return rc;
        w->frames__state = FRAMES__W_FINISHED;
        return FRAMES_UNFINISHED;
    }
    if ((rc = frames__write_toc(w, T)) < 0 || (rc = frames_writer_flush(w)) < 0) return rc;
    /* n first, then T: a crash in between leaves T = 0, which reads as unfinished */
    frames__put_le64(word, w->frames__count);
    if (w->frames__sink.patch(w->frames__sink.ctx, 0x20, word, 8) < 0)
        return frames__wfail(w, FRAMES_E_IO, "cannot patch the header: %s", frames__syserr());
    frames__put_le64(word, T);
    if (w->frames__sink.patch(w->frames__sink.ctx, 0x28, word, 8) < 0)
        return frames__wfail(w, FRAMES_E_IO, "cannot patch the header: %s", frames__syserr());
    if (w->frames__sink.flush && w->frames__sink.flush(w->frames__sink.ctx) < 0)
        return frames__wfail(w, FRAMES_E_IO, "flush failed: %s", frames__syserr());
    w->frames__state = FRAMES__W_FINISHED;
    return FRAMES_OK;
}

/* Out of line: inlined into a caller whose writer lives on the stack, gcc would warn
   (-Wfree-nonheap-object) about the free that only runs for allocated writers. */
static FRAMES__NOINLINE void frames__free_writer_struct(frames_writer *w, void *ctx) {
    FRAMES_FREE(w, ctx);
}

static void frames__writer_release(frames_writer *w) {
    void *ctx = w->frames__opt.alloc_ctx;
    if (w->frames__bufowned) FRAMES_FREE(w->frames__buf, ctx);
    if (w->frames__tocowned) FRAMES_FREE(w->frames__toc, ctx);
    w->frames__buf = NULL;
    w->frames__toc = NULL;
    if (w->frames__allocated) frames__free_writer_struct(w, ctx);
}

FRAMES_DEF int frames_writer_close(frames_writer *w) {
    int rc = FRAMES_OK;
    if (!w) return FRAMES_OK;
    if (w->frames__state == FRAMES__W_OPEN) rc = frames_writer_finish(w);
    else if (w->frames__state == FRAMES__W_FINISHED && !w->frames__sink.patch) rc = FRAMES_UNFINISHED;
    if (w->frames__sink.close && w->frames__sink.close(w->frames__sink.ctx) < 0 && rc >= 0)
        rc = frames__wfail(w, FRAMES_E_IO, "close failed: %s", frames__syserr());
    frames__writer_release(w);
    return rc;
}

FRAMES_DEF void frames_writer_abandon(frames_writer *w) {
    if (!w) return;
    if (w->frames__sink.close) w->frames__sink.close(w->frames__sink.ctx);
    frames__writer_release(w);
}

FRAMES_DEF uint64_t frames_writer_count(const frames_writer *w) { return w->frames__count; }
FRAMES_DEF const frames_error *frames_writer_error(const frames_writer *w) { return &w->frames__err; }

/* -- copying and repairing traces */

static int frames__writable_toc(int toc) {
    return toc == FRAMES_TOC_LIBTRACE || toc == FRAMES_TOC_CEIL || toc == FRAMES_TOC_TRACEWRAP ||
           toc == FRAMES_TOC_CEIL_ZERO;
}

/* The input's container settings, without its TOC's. */
static void frames__options_like_container(frames_reader *r, frames_writer_options *o) {
    frames_writer_options_default(o);
    o->alloc_ctx = r->opt.alloc_ctx;
    o->version = r->hdr.version == 2 ? 2 : 3;
    o->arch = r->hdr.arch;
    o->machine = r->hdr.machine;
    if (r->has_meta) o->meta_raw = r->meta_bytes;
}

/* The TOC settings of an input whose TOC follows convention toc with m frames an entry. */
static void frames__options_like_toc(frames_writer_options *o, int toc, uint64_t m) {
    if (m && toc != FRAMES_TOC_NONE && toc != FRAMES_TOC_INVALID) o->frames_per_toc = m;
    if (frames__writable_toc(toc)) o->toc = toc;
}

FRAMES_DEF void frames_writer_options_like(frames_reader *r, frames_writer_options *o) {
    frames_reader_info st;
    frames__options_like_container(r, o);
    if (frames_reader_info_get(r, &st) < 0) return;
    frames__options_like_toc(o, st.toc, st.frames_per_toc);
}

FRAMES_DEF void frames_writer_options_like_copy(frames_reader *r, frames_writer_options *o) {
    uint32_t candidates;
    /* only a trace in memory has its entries checked by a scan (frames_reader_info_get);
       one whose TOC did not check out on opening is scanned anyway */
    if (r->stream || r->paged || !r->finished || !r->t_valid || !r->m || !r->toc_usable ||
        r->walk_off || r->cur.index != 0 || !(candidates = frames__toc_candidates(r, r->nframes))) {
        frames_writer_options_like(r, o);
        return;
    }
    r->walk_cap = r->toc_words + 2;   /* every convention has at least ceil(n/m) - 1 entries */
    r->walk_off = (uint64_t *)FRAMES_MALLOC(r->walk_cap * sizeof *r->walk_off, r->opt.alloc_ctx);
    if (!r->walk_off) {
        frames_writer_options_like(r, o);
        return;
    }
    r->walk_len = r->walk_next = 0;
    r->walk_left = 1;   /* frame 0 starts block 0 */
    r->walk_broken = r->walk_done = 0;
    frames__options_like_container(r, o);
    frames__options_like_toc(o, frames__first_conv(candidates), r->m);
}

FRAMES_DEF int frames_writer_options_like_confirm(frames_reader *r, const frames_writer_options *o) {
    frames_writer_options exact;
    int same;
    if (!r->walk_off) return 1;   /* frames_writer_options_like_copy gave the exact options */
    same = !r->walk_broken && r->walk_next == r->nframes;
    if (same) {   /* the check frames_writer_options_like makes, on the offsets met */
        r->walk_done = 1;
        r->verified = 0;
        frames_writer_options_like(r, &exact);
        same = exact.toc == o->toc && exact.frames_per_toc == o->frames_per_toc;
    }
    FRAMES_FREE(r->walk_off, r->opt.alloc_ctx);
    r->walk_off = NULL;
    r->walk_done = 0;
    r->verified = 0;   /* a later frames_reader_info_get checks again, by a scan */
    return same;
}

FRAMES_DEF int frames_reader_skip_damage(frames_reader *r, uint64_t *lost) {
    uint64_t failed = frames_reader_tell(r), k, m;   /* the frame that did not read */
    frames_reader_info st;
    frames_raw raw;
    *lost = 0;
    if (frames_reader_info_get(r, &st) < 0 || !st.count_known || failed >= st.nframes) return 0;
    *lost = st.nframes - failed;
    if (!st.toc_used || !st.frames_per_toc) return 0;
    m = st.frames_per_toc;
    for (k = (failed / m + 1) * m; k < st.nframes; k += m) {
        /* the entry must read: try its first frame, then come back to it */
        if (frames_reader_seek(r, k) == FRAMES_OK && frames_reader_next_raw(r, &raw) > 0 &&
            frames_reader_seek(r, k) == FRAMES_OK) {
            *lost = k - failed;
            return 1;
        }
    }
    return 0;
}

/* frames_fix after a read error: note the damage and go on where the input reads again. */
static int frames__fix_resume(frames_reader *r, frames_fix_report *rep) {
    uint64_t lost;
    int resumed;
    if (!rep->damage.code) rep->damage = *frames_reader_error(r);
    resumed = frames_reader_skip_damage(r, &lost);
    rep->lost_ranges++;
    rep->lost_frames += lost;
    return resumed;
}

FRAMES_DEF int frames_fix(frames_reader *r, const frames_sink *sink, const frames_writer_options *o,
                          frames_fix_report *rep, frames_error *err) {
    frames_writer_options like;
    frames_writer w;
    frames_reader_info st;
    frames_raw raw;
    frames_decoder dec;
    frames_frame f;
    frames_sink borrowed = *sink;
    int rc, fin;
    memset(rep, 0, sizeof *rep);
    if (!o) {
        frames_writer_options_like(r, &like);
        o = &like;
    }
    borrowed.close = NULL; /* the sink stays the caller's to close */
    if ((rc = frames_writer_init(&w, &borrowed, o, NULL, err)) < 0) return rc;
    frames_decoder_init(&dec, NULL, 0, r->opt.alloc_ctx);
    for (;;) {
        while ((rc = frames_reader_next_raw(r, &raw)) > 0) {
            if (frames_decode_frame(&dec, raw.payload.ptr, raw.payload.len, &f, NULL) < 0)
                rep->undecodable++;
            if ((rc = frames_writer_add_encoded(&w, raw.payload.ptr, raw.payload.len)) < 0) break;
        }
        if (rc >= 0 || w.frames__err.code || !frames__fix_resume(r, rep)) break;
    }
    frames_decoder_free(&dec);
    if (rc < 0 && w.frames__err.code) { /* a writer error: keep what the sink has */
        if (err) *err = w.frames__err;
        frames_writer_abandon(&w);
        return rc;
    }
    fin = frames_writer_finish(&w);
    rep->frames = frames_writer_count(&w);
    if (fin < 0 && err) *err = w.frames__err;
    frames_writer_abandon(&w);
    if (frames_reader_info_get(r, &st) == FRAMES_OK) {
        rep->was_finished = st.finished;
        rep->input_toc = st.toc;
        if (st.truncated) {
            rep->dropped_offset = st.truncated_offset;
            rep->dropped_bytes = st.truncated_bytes;
        }
    }
    return fin;
}

/* -- sinks */

FRAMES_DEF void frames_membuf_init(frames_membuf *m, void *alloc_ctx) {
    memset(m, 0, sizeof *m);
    m->alloc_ctx = alloc_ctx;
}

FRAMES_DEF void frames_membuf_free(frames_membuf *m) {
    void *ctx = m->alloc_ctx;
    size_t max = m->max;
    if (m->data) FRAMES_FREE(m->data, ctx);
    frames_membuf_init(m, ctx);
    m->max = max;
}

static int frames__mem_write(void *ctx, const void *data, size_t len) {
    frames_membuf *m = (frames_membuf *)ctx;
    if (len == 0) return FRAMES_OK;
    if (len > (size_t)-1 - m->size || (m->max && m->size + len > m->max)) return FRAMES_E_LIMIT;
    if (frames__grow((void **)&m->data, &m->cap, m->size + len, 1, m->alloc_ctx) < 0)
        return FRAMES_E_NOMEM;
    memcpy(m->data + m->size, data, len);
    m->size += len;
    return FRAMES_OK;
}

static int frames__mem_patch(void *ctx, uint64_t offset, const void *data, size_t len) {
    frames_membuf *m = (frames_membuf *)ctx;
    if (offset > m->size || len > m->size - offset) return FRAMES_E_RANGE;
    memcpy(m->data + offset, data, len);
    return FRAMES_OK;
}

FRAMES_DEF frames_sink frames_sink_memory(frames_membuf *m) {
    return frames__sink_of(m, frames__mem_write, frames__mem_patch, NULL, NULL);
}

#ifndef FRAMES_NO_POSIX
static int frames__fd_write(void *ctx, const void *data, size_t len) {
    int fd = (int)(intptr_t)ctx;
    const uint8_t *p = (const uint8_t *)data;
    while (len > 0) {
        ssize_t n = write(fd, p, len);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return FRAMES_E_IO;
        p += n;
        len -= (size_t)n;
    }
    return FRAMES_OK;
}

static int frames__fd_patch(void *ctx, uint64_t offset, const void *data, size_t len) {
    int fd = (int)(intptr_t)ctx;
    const uint8_t *p = (const uint8_t *)data;
    while (len > 0) {
        ssize_t n = pwrite(fd, p, len, (off_t)offset);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return FRAMES_E_IO;
        p += n;
        len -= (size_t)n;
        offset += (uint64_t)n;
    }
    return FRAMES_OK;
}

static int frames__fd_close(void *ctx) {
    return close((int)(intptr_t)ctx) == 0 ? FRAMES_OK : FRAMES_E_IO;
}

FRAMES_DEF frames_sink frames_sink_fd(int fd) {
    /* pwrite on a pipe fails; without patch the trace is left unfinished, readable */
    return frames__sink_of((void *)(intptr_t)fd, frames__fd_write,
                           lseek(fd, 0, SEEK_CUR) >= 0 ? frames__fd_patch : NULL, NULL, NULL);
}

FRAMES_DEF int frames_writer_open_fd(frames_writer **w, int fd, const frames_writer_options *o,
                                     const frames_meta *meta, frames_error *err) {
    frames_sink s = frames_sink_fd(fd);
    return frames_writer_open(w, &s, o, meta, err);
}
#endif

#ifndef FRAMES_NO_STDIO
static int frames__file_write(void *ctx, const void *data, size_t len) {
    return fwrite(data, 1, len, (FILE *)ctx) == len ? FRAMES_OK : FRAMES_E_IO;
}

static int frames__file_patch(void *ctx, uint64_t offset, const void *data, size_t len) {
    FILE *f = (FILE *)ctx;
    long end;
    if (fflush(f) != 0 || (end = ftell(f)) < 0) return FRAMES_E_IO;
    if (fseek(f, (long)offset, SEEK_SET) != 0 || fwrite(data, 1, len, f) != len) return FRAMES_E_IO;
    return fseek(f, end, SEEK_SET) == 0 ? FRAMES_OK : FRAMES_E_IO;
}

static int frames__file_flush(void *ctx) { return fflush((FILE *)ctx) == 0 ? FRAMES_OK : FRAMES_E_IO; }
#ifdef FRAMES_NO_POSIX
static int frames__file_close(void *ctx) { return fclose((FILE *)ctx) == 0 ? FRAMES_OK : FRAMES_E_IO; }
#endif

FRAMES_DEF frames_sink frames_sink_file(FILE *f) {
    return frames__sink_of(f, frames__file_write, ftell(f) >= 0 ? frames__file_patch : NULL,
                           frames__file_flush, NULL);
}

FRAMES_DEF int frames_writer_open_file(frames_writer **w, FILE *f, const frames_writer_options *o,
                                       const frames_meta *meta, frames_error *err) {
    frames_sink s = frames_sink_file(f);
    return frames_writer_open(w, &s, o, meta, err);
}
#endif

FRAMES_DEF int frames_writer_open_path(frames_writer **w, const char *path,
                                       const frames_writer_options *o, const frames_meta *meta,
                                       frames_error *err) {
#ifndef FRAMES_NO_POSIX
    frames_sink s;
    int fd, rc;
    *w = NULL;
    if (!strcmp(path, "-")) return frames_writer_open_fd(w, 1, o, meta, err);
    do fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644); while (fd < 0 && errno == EINTR);
    if (fd < 0)
        return frames__fail(err, FRAMES_E_IO, FRAMES_NO_POS, FRAMES_NO_POS, "cannot create %s: %s",
                            path, frames__syserr());
    s = frames_sink_fd(fd);
    s.close = frames__fd_close;
    rc = frames_writer_open(w, &s, o, meta, err);
    if (rc < 0) close(fd);
    return rc;
#elif !defined(FRAMES_NO_STDIO)
    FILE *f;
    frames_sink s;
    int rc;
    *w = NULL;
    if (!strcmp(path, "-")) return frames_writer_open_file(w, stdout, o, meta, err);
    f = fopen(path, "wb");
    if (!f)
        return frames__fail(err, FRAMES_E_IO, FRAMES_NO_POS, FRAMES_NO_POS, "cannot create %s: %s",
                            path, frames__syserr());
    s = frames_sink_file(f);
    s.close = frames__file_close;
    rc = frames_writer_open(w, &s, o, meta, err);
    if (rc < 0) fclose(f);
    return rc;
#else
    (void)o;
    (void)meta;
    *w = NULL;
    return frames__fail(err, FRAMES_E_UNSUPPORTED, FRAMES_NO_POS, FRAMES_NO_POS,
                        "%s: built without file support", path);
#endif
}

/* --------------------------------------------------------------------------------------
   names
   -------------------------------------------------------------------------------------- */

FRAMES_DEF int frames_arch_is_x86_64(uint64_t arch, uint64_t machine) {
    return arch == FRAMES_ARCH_I386 && (machine == FRAMES_MACH_X86_64 || machine == FRAMES_MACH_X86_64_INTEL);
}

FRAMES_DEF const char *frames_arch_name(uint64_t arch) {
    /* enum frame_architecture of libtrace's frame_arch.h (a frozen copy of old BFD) */
    static const char *const names[] = {
        "unknown", "obscure", "m68k", "vax", "i960", "or32", "sparc", "spu", "mips", "i386",
        "l1om", "we32k", "tahoe", "i860", "i370", "romp", "convex", "m88k", "m98k", "pyramid",
        "h8300", "pdp11", "plugin", "powerpc", "rs6000", "hppa", "d10v", "d30v", "dlx",
        "m68hc11", "m68hc12", "z8k", "h8500", "sh", "alpha", "arm", "ns32k", "w65", "tic30",
        "tic4x", "tic54x", "tic6x", "tic80", "v850", "arc", "m32c", "m32r", "mn10200",
        "mn10300", "fr30", "frv", "moxie", "mcore", "mep", "ia64", "ip2k", "iq2000", "mt", "pj",
        "avr", "bfin", "cr16", "cr16c", "crx", "cris", "rx", "s390", "score", "openrisc", "mmix",
        "xstormy16", "msp430", "xc16x", "xtensa", "z80", "lm32", "microblaze", "6502",
        "aarch64", "8051", "sm83", "hexagon", "last"};
    return arch < sizeof names / sizeof names[0] ? names[arch] : "unknown";
}

FRAMES_DEF const char *frames_kind_name(int kind) {
    static const char *const names[] = {"none", "std_frame", "syscall_frame", "exception_frame",
                                        "taint_intro_frame", "modload_frame", "key_frame",
                                        "unknown"};
    return kind >= 0 && kind <= 7 ? names[kind] : "unknown";
}

FRAMES_DEF const char *frames_toc_name(int toc) {
    static const char *const names[] = {"none", "libtrace", "ceil", "tracewrap", "ceil-zero",
                                        "shifted", "block-starts", "readme", "invalid"};
    return toc >= 0 && toc <= 8 ? names[toc] : "unknown";
}

/* --------------------------------------------------------------------------------------
   printing
   -------------------------------------------------------------------------------------- */
#ifndef FRAMES_NO_TEXT

typedef struct frames__pr {
    frames_out_fn out;
    void *ctx;
    int indent;
    int failed;
    int json_first;   /* JSON: no comma before the next member */
} frames__pr;

static void frames__pr_raw(frames__pr *p, const char *s, size_t n) {
    if (!p->failed && n && p->out(p->ctx, s, n) != 0) p->failed = 1;
}
static void frames__pr_str(frames__pr *p, const char *s) { frames__pr_raw(p, s, strlen(s)); }

static void frames__pr_fmt(frames__pr *p, const char *fmt, ...) FRAMES__PRINTF(2, 3);
static void frames__pr_fmt(frames__pr *p, const char *fmt, ...) {
    char buf[128];
    int n;
    va_list ap;
    va_start(ap, fmt);
    n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n > 0) frames__pr_raw(p, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
}

static void frames__pr_indent(frames__pr *p) {
    static const char spaces[] = "                                ";
    int n = p->indent;
    while (n > 0) {
        int k = n < 32 ? n : 32;
        frames__pr_raw(p, spaces, (size_t)k);
        n -= k;
    }
}

/* Shortest of %.15g and %.17g that reads back exactly, as protobuf's SimpleDtoa. */
static void frames__format_double(char *buf, size_t cap, double d) {
    if (d != d) {
        snprintf(buf, cap, "nan");
    } else if (d > 1.7976931348623157e308) {
        snprintf(buf, cap, "inf");
    } else if (d < -1.7976931348623157e308) {
        snprintf(buf, cap, "-inf");
    } else {
        snprintf(buf, cap, "%.15g", d);
        if (strtod(buf, NULL) != d) snprintf(buf, cap, "%.17g", d);
    }
}

/* protobuf text format: C escapes, octal for everything not printable ASCII */
static void frames__pr_cescape(frames__pr *p, frames_bytes b) {
    char buf[256];
    size_t n = 0, i;
    for (i = 0; i < b.len; i++) {
        uint8_t c = b.ptr[i];
        if (n > sizeof buf - 8) {
            frames__pr_raw(p, buf, n);
            n = 0;
        }
        switch (c) {
        case '\n': buf[n++] = '\\'; buf[n++] = 'n'; break;
        case '\r': buf[n++] = '\\'; buf[n++] = 'r'; break;
        case '\t': buf[n++] = '\\'; buf[n++] = 't'; break;
        case '"': buf[n++] = '\\'; buf[n++] = '"'; break;
        case '\'': buf[n++] = '\\'; buf[n++] = '\''; break;
        case '\\': buf[n++] = '\\'; buf[n++] = '\\'; break;
        default:
            if (c >= 0x20 && c < 0x7f) {
                buf[n++] = (char)c;
            } else {
                buf[n++] = '\\';
                buf[n++] = (char)('0' + (c >> 6));
                buf[n++] = (char)('0' + ((c >> 3) & 7));
                buf[n++] = (char)('0' + (c & 7));
            }
        }
    }
    frames__pr_raw(p, buf, n);
}

static void frames__tx_open(frames__pr *p, const char *name) {
    frames__pr_indent(p);
    frames__pr_str(p, name);
    frames__pr_str(p, " {\n");
    p->indent += 2;
}
static void frames__tx_close(frames__pr *p) {
    p->indent -= 2;
    frames__pr_indent(p);
    frames__pr_str(p, "}\n");
}
static void frames__tx_u64(frames__pr *p, const char *name, uint64_t v) {
    frames__pr_indent(p);
    frames__pr_fmt(p, "%s: %llu\n", name, (unsigned long long)v);
}
static void frames__tx_i64(frames__pr *p, const char *name, int64_t v) {
    frames__pr_indent(p);
    frames__pr_fmt(p, "%s: %lld\n", name, (long long)v);
}
static void frames__tx_bool(frames__pr *p, const char *name, int v) {
    frames__pr_indent(p);
    frames__pr_fmt(p, "%s: %s\n", name, v ? "true" : "false");
}
static void frames__tx_bytes(frames__pr *p, const char *name, frames_bytes b) {
    frames__pr_indent(p);
    frames__pr_str(p, name);
    frames__pr_str(p, ": \"");
    frames__pr_cescape(p, b);
    frames__pr_str(p, "\"\n");
}
static void frames__tx_double(frames__pr *p, const char *name, double d) {
    char buf[40];
    frames__format_double(buf, sizeof buf, d);
    frames__pr_indent(p);
    frames__pr_fmt(p, "%s: %s\n", name, buf);
}

static void frames__tx_specific(frames__pr *p, const frames_operand *op) {
    frames__tx_open(p, "operand_info_specific");
    if (op->spec & FRAMES_MEM) {
        frames__tx_open(p, "mem_operand");
        frames__tx_u64(p, "address", op->address);
        frames__tx_close(p);
    }
    if (op->spec & FRAMES_REG) {
        frames__tx_open(p, "reg_operand");
        frames__tx_bytes(p, "name", op->name);
        frames__tx_close(p);
    }
    frames__tx_close(p);
}

static void frames__tx_taint(frames__pr *p, const frames_taint *t) {
    frames__tx_open(p, "taint_info");
    if (t->set & FRAMES_TAINT_NONE) frames__tx_bool(p, "no_taint", t->no_taint);
    if (t->set & FRAMES_TAINT_ID) frames__tx_u64(p, "taint_id", t->id);
    if (t->set & FRAMES_TAINT_MULTIPLE) frames__tx_bool(p, "taint_multiple", t->multiple);
    frames__tx_close(p);
}

static void frames__tx_operands(frames__pr *p, const char *name, const frames_operand *ops,
                                uint32_t n, int value_info) {
    uint32_t i;
    frames__tx_open(p, name);
    for (i = 0; i < n; i++) {
        const frames_operand *op = &ops[i];
        frames__tx_open(p, "elem");
        frames__tx_specific(p, op);
        frames__tx_i64(p, "bit_length", op->bit_length);
        if (!value_info) {
            frames__tx_open(p, "operand_usage");
            frames__tx_bool(p, "read", op->read);
            frames__tx_bool(p, "written", op->written);
            frames__tx_bool(p, "index", op->index);
            frames__tx_bool(p, "base", op->base);
            frames__tx_close(p);
        }
        if (!value_info || op->taint.set) frames__tx_taint(p, &op->taint);
        frames__tx_bytes(p, "value", op->value);
        frames__tx_close(p);
    }
    frames__tx_close(p);
}

static void frames__tx_unknown(frames__pr *p, const frames_unknown_option *u) {
    char name[16];
    snprintf(name, sizeof name, "%u", (unsigned)u->field);
    frames__pr_indent(p);
    if (u->wire_type == FRAMES__VARINT) frames__pr_fmt(p, "%s: %llu\n", name, (unsigned long long)u->scalar);
    else if (u->wire_type == FRAMES__I64) frames__pr_fmt(p, "%s: 0x%016llx\n", name, (unsigned long long)u->scalar);
    else if (u->wire_type == FRAMES__I32) frames__pr_fmt(p, "%s: 0x%08x\n", name, (unsigned)u->scalar);
    else {
        frames__pr_fmt(p, "%s: \"", name);
        frames__pr_cescape(p, u->payload);
        frames__pr_str(p, "\"\n");
    }
}

static void frames__tx_frame(frames__pr *p, const frames_frame *f) {
    uint32_t opts = frames__options_of(f), i, j;
    if (opts & (1u << 1)) {
        const frames_std_frame *s = &f->std;
        frames__tx_open(p, "std_frame");
        frames__tx_u64(p, "address", s->address);
        frames__tx_u64(p, "thread_id", s->thread_id);
        frames__tx_bytes(p, "rawbytes", s->rawbytes);
        frames__tx_operands(p, "operand_pre_list", s->pre, s->npre, 0);
        if (s->has_post) frames__tx_operands(p, "operand_post_list", s->post, s->npost, 0);
        if (s->has_mode) frames__tx_bytes(p, "mode", s->mode);
        frames__tx_close(p);
    }
    if (opts & (1u << 2)) {
        const frames_syscall_frame *s = &f->syscall;
        frames__tx_open(p, "syscall_frame");
        frames__tx_u64(p, "address", s->address);
        frames__tx_u64(p, "thread_id", s->thread_id);
        frames__tx_u64(p, "number", s->number);
        frames__tx_open(p, "argument_list");
        for (i = 0; i < s->nargs; i++) frames__tx_i64(p, "elem", s->args[i]);
        frames__tx_close(p);
        frames__tx_close(p);
    }
    if (opts & (1u << 3)) {
        const frames_exception_frame *e = &f->exception;
        frames__tx_open(p, "exception_frame");
        frames__tx_u64(p, "exception_number", e->number);
        if (e->has_thread_id) frames__tx_u64(p, "thread_id", e->thread_id);
        if (e->has_from_addr) frames__tx_u64(p, "from_addr", e->from_addr);
        if (e->has_to_addr) frames__tx_u64(p, "to_addr", e->to_addr);
        frames__tx_close(p);
    }
    if (opts & (1u << 4)) {
        frames__tx_open(p, "taint_intro_frame");
        frames__tx_open(p, "taint_intro_list");
        for (i = 0; i < f->taint_intro.count; i++) {
            const frames_taint_intro *t = &f->taint_intro.intros[i];
            frames__tx_open(p, "elem");
            frames__tx_u64(p, "addr", t->addr);
            frames__tx_u64(p, "taint_id", t->taint_id);
            if (t->has_value) frames__tx_bytes(p, "value", t->value);
            if (t->has_source_name) frames__tx_bytes(p, "source_name", t->source_name);
            if (t->has_offset) frames__tx_u64(p, "offset", t->offset);
            frames__tx_close(p);
        }
        frames__tx_close(p);
        frames__tx_close(p);
    }
    if (opts & (1u << 5)) {
        frames__tx_open(p, "modload_frame");
        frames__tx_bytes(p, "module_name", f->modload.module_name);
        frames__tx_u64(p, "low_address", f->modload.low_address);
        frames__tx_u64(p, "high_address", f->modload.high_address);
        frames__tx_close(p);
    }
    if (opts & (1u << 6)) {
        frames__tx_open(p, "key_frame");
        frames__tx_open(p, "tagged_value_lists");
        for (i = 0; i < f->key.count; i++) {
            const frames_tagged_values *t = &f->key.lists[i];
            frames__tx_open(p, "elem");
            frames__tx_open(p, "value_source_tag");
            if (t->tag_set & FRAMES_TAG_NO_THREAD_ID) frames__tx_bool(p, "no_thread_id", t->no_thread_id);
            if (t->tag_set & FRAMES_TAG_THREAD_ID) frames__tx_u64(p, "thread_id", t->thread_id);
            frames__tx_close(p);
            frames__tx_operands(p, "value_list", t->values, t->count, 1);
            frames__tx_close(p);
        }
        (void)j;
        frames__tx_close(p);
        frames__tx_close(p);
    }
    if (opts & (1u << FRAMES_KIND_UNKNOWN)) frames__tx_unknown(p, &f->unknown);
}

FRAMES_DEF int frames_print_frame_pbtext(const frames_frame *f, int indent, frames_out_fn out,
                                         void *ctx) {
    frames__pr p;
    memset(&p, 0, sizeof p);
    p.out = out;
    p.ctx = ctx;
    p.indent = indent;
    frames__tx_frame(&p, f);
    return p.failed ? FRAMES_E_IO : FRAMES_OK;
}

static void frames__tx_program(frames__pr *p, const char *name, const char *first_name,
                               frames_bytes first, const frames_bytes *args, uint32_t nargs,
                               const frames_bytes *envp, uint32_t nenvp, const char *fourth_name,
                               frames_bytes fourth) {
    uint32_t i;
    frames__tx_open(p, name);
    frames__tx_bytes(p, first_name, first);
    for (i = 0; i < nargs; i++) frames__tx_bytes(p, "args", args[i]);
    for (i = 0; i < nenvp; i++) frames__tx_bytes(p, "envp", envp[i]);
    frames__tx_bytes(p, fourth_name, fourth);
    frames__tx_close(p);
}

FRAMES_DEF int frames_print_meta_pbtext(const frames_meta *m, int indent, frames_out_fn out,
                                        void *ctx) {
    frames__pr p;
    memset(&p, 0, sizeof p);
    p.out = out;
    p.ctx = ctx;
    p.indent = indent;
    frames__tx_program(&p, "tracer", "name", m->tracer_name, m->tracer_args, m->ntracer_args,
                       m->tracer_envp, m->ntracer_envp, "version", m->tracer_version);
    frames__tx_program(&p, "target", "path", m->target_path, m->target_args, m->ntarget_args,
                       m->target_envp, m->ntarget_envp, "md5sum", m->target_md5sum);
    frames__tx_open(&p, "fstats");
    frames__tx_i64(&p, "size", m->fstats_size);
    frames__tx_double(&p, "atime", m->fstats_atime);
    frames__tx_double(&p, "mtime", m->fstats_mtime);
    frames__tx_double(&p, "ctime", m->fstats_ctime);
    frames__tx_close(&p);
    frames__tx_bytes(&p, "user", m->user);
    frames__tx_bytes(&p, "host", m->host);
    frames__tx_double(&p, "time", m->time);
    return p.failed ? FRAMES_E_IO : FRAMES_OK;
}

/* -- JSON: the protobuf JSON mapping, except bytes as hex and 64-bit integers as numbers */

static size_t frames__utf8_len(const uint8_t *s, size_t n) {
    size_t len, i;
    if (s[0] < 0x80) return 1;
    if (s[0] >= 0xc2 && s[0] <= 0xdf) len = 2;
    else if ((s[0] & 0xf0) == 0xe0) len = 3;
    else if (s[0] >= 0xf0 && s[0] <= 0xf4) len = 4;
    else return 0;
    if (len > n) return 0;
    for (i = 1; i < len; i++)
        if ((s[i] & 0xc0) != 0x80) return 0;
    if (len == 3 && ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xed && s[1] >= 0xa0))) return 0;
    if (len == 4 && ((s[0] == 0xf0 && s[1] < 0x90) || (s[0] == 0xf4 && s[1] >= 0x90))) return 0;
    return len;
}

/* Valid UTF-8 is copied; control characters and bytes that are not UTF-8 become \u00XX. */
static void frames__js_string(frames__pr *p, frames_bytes b) {
    size_t i = 0, k;
    frames__pr_raw(p, "\"", 1);
    while (i < b.len) {
        uint8_t c = b.ptr[i];
        if (c == '"' || c == '\\') {
            frames__pr_raw(p, "\\", 1);
            frames__pr_raw(p, (const char *)&b.ptr[i], 1);
            i++;
        } else if (c < 0x20 || c == 0x7f || (k = frames__utf8_len(b.ptr + i, b.len - i)) == 0) {
            frames__pr_fmt(p, "\\u%04x", c);
            i++;
        } else {
            frames__pr_raw(p, (const char *)b.ptr + i, k);
            i += k;
        }
    }
    frames__pr_raw(p, "\"", 1);
}

FRAMES_DEF int frames_print_json_string(const void *data, size_t len, frames_out_fn out, void *ctx) {
    frames__pr p;
    memset(&p, 0, sizeof p);
    p.out = out;
    p.ctx = ctx;
    frames__js_string(&p, frames_bytes_of(data, len));
    return p.failed ? FRAMES_E_IO : FRAMES_OK;
}

static void frames__js_key(frames__pr *p, const char *name) {
    if (!p->json_first) frames__pr_raw(p, ",", 1);
    p->json_first = 0;
    frames__pr_fmt(p, "\"%s\":", name);
}
static void frames__js_open(frames__pr *p, const char *name, char brace) {
    if (name) frames__js_key(p, name);
    else if (!p->json_first) frames__pr_raw(p, ",", 1);
    frames__pr_raw(p, &brace, 1);
    p->json_first = 1;
}
static void frames__js_close(frames__pr *p, char brace) {
    frames__pr_raw(p, &brace, 1);
    p->json_first = 0;
}
static void frames__js_u64(frames__pr *p, const char *name, uint64_t v) {
    frames__js_key(p, name);
    frames__pr_fmt(p, "%llu", (unsigned long long)v);
}
static void frames__js_i64(frames__pr *p, const char *name, int64_t v) {
    frames__js_key(p, name);
    frames__pr_fmt(p, "%lld", (long long)v);
}
static void frames__js_bool(frames__pr *p, const char *name, int v) {
    frames__js_key(p, name);
    frames__pr_str(p, v ? "true" : "false");
}
static void frames__js_text(frames__pr *p, const char *name, frames_bytes b) {
    frames__js_key(p, name);
    frames__js_string(p, b);
}
static void frames__js_hex(frames__pr *p, const char *name, frames_bytes b) {
    static const char digits[] = "0123456789abcdef";
    char buf[128];
    size_t i, n = 0;
    frames__js_key(p, name);
    frames__pr_raw(p, "\"", 1);
    for (i = 0; i < b.len; i++) {
        if (n == sizeof buf) {
            frames__pr_raw(p, buf, n);
            n = 0;
        }
        buf[n++] = digits[b.ptr[i] >> 4];
        buf[n++] = digits[b.ptr[i] & 15];
    }
    frames__pr_raw(p, buf, n);
    frames__pr_raw(p, "\"", 1);
}
static void frames__js_double(frames__pr *p, const char *name, double d) {
    char buf[40];
    frames__format_double(buf, sizeof buf, d);
    frames__js_key(p, name);
    if (d != d || d > 1.7976931348623157e308 || d < -1.7976931348623157e308) frames__pr_fmt(p, "\"%s\"", buf);
    else frames__pr_str(p, buf);
}

static void frames__js_taint(frames__pr *p, const frames_taint *t) {
    frames__js_open(p, "taint_info", '{');
    if (t->set & FRAMES_TAINT_NONE) frames__js_bool(p, "no_taint", t->no_taint);
    if (t->set & FRAMES_TAINT_ID) frames__js_u64(p, "taint_id", t->id);
    if (t->set & FRAMES_TAINT_MULTIPLE) frames__js_bool(p, "taint_multiple", t->multiple);
    frames__js_close(p, '}');
}

static void frames__js_operands(frames__pr *p, const char *name, const frames_operand *ops,
                                uint32_t n, int value_info) {
    uint32_t i;
    frames__js_open(p, name, '[');
    for (i = 0; i < n; i++) {
        const frames_operand *op = &ops[i];
        frames__js_open(p, NULL, '{');
        frames__js_open(p, "operand_info_specific", '{');
        if (op->spec & FRAMES_MEM) {
            frames__js_open(p, "mem_operand", '{');
            frames__js_u64(p, "address", op->address);
            frames__js_close(p, '}');
        }
        if (op->spec & FRAMES_REG) {
            frames__js_open(p, "reg_operand", '{');
            frames__js_text(p, "name", op->name);
            frames__js_close(p, '}');
        }
        frames__js_close(p, '}');
        frames__js_i64(p, "bit_length", op->bit_length);
        if (!value_info) {
            frames__js_open(p, "operand_usage", '{');
            frames__js_bool(p, "read", op->read);
            frames__js_bool(p, "written", op->written);
            frames__js_bool(p, "index", op->index);
            frames__js_bool(p, "base", op->base);
            frames__js_close(p, '}');
        }
        if (!value_info || op->taint.set) frames__js_taint(p, &op->taint);
        frames__js_hex(p, "value", op->value);
        frames__js_close(p, '}');
    }
    frames__js_close(p, ']');
}

FRAMES_DEF int frames_print_frame_json(const frames_frame *f, frames_out_fn out, void *ctx) {
    frames__pr p;
    uint32_t opts = frames__options_of(f), i;
    memset(&p, 0, sizeof p);
    p.json_first = 1; /* the top-level object has no comma before it */
    p.out = out;
    p.ctx = ctx;
    p.json_first = 1; /* no comma before the top-level object */
    frames__js_open(&p, NULL, '{');
    if (opts & (1u << 1)) {
        const frames_std_frame *s = &f->std;
        frames__js_open(&p, "std_frame", '{');
        frames__js_u64(&p, "address", s->address);
        frames__js_u64(&p, "thread_id", s->thread_id);
        frames__js_hex(&p, "rawbytes", s->rawbytes);
        frames__js_operands(&p, "operand_pre_list", s->pre, s->npre, 0);
        if (s->has_post) frames__js_operands(&p, "operand_post_list", s->post, s->npost, 0);
        if (s->has_mode) frames__js_text(&p, "mode", s->mode);
        frames__js_close(&p, '}');
    }
    if (opts & (1u << 2)) {
        const frames_syscall_frame *s = &f->syscall;
        frames__js_open(&p, "syscall_frame", '{');
        frames__js_u64(&p, "address", s->address);
        frames__js_u64(&p, "thread_id", s->thread_id);
        frames__js_u64(&p, "number", s->number);
        frames__js_open(&p, "argument_list", '[');
        for (i = 0; i < s->nargs; i++) {
            if (i) frames__pr_raw(&p, ",", 1);
            frames__pr_fmt(&p, "%lld", (long long)s->args[i]);
        }
        frames__js_close(&p, ']');
        frames__js_close(&p, '}');
    }
    if (opts & (1u << 3)) {
        const frames_exception_frame *e = &f->exception;
        frames__js_open(&p, "exception_frame", '{');
        frames__js_u64(&p, "exception_number", e->number);
        if (e->has_thread_id) frames__js_u64(&p, "thread_id", e->thread_id);
        if (e->has_from_addr) frames__js_u64(&p, "from_addr", e->from_addr);
        if (e->has_to_addr) frames__js_u64(&p, "to_addr", e->to_addr);
        frames__js_close(&p, '}');
    }
    if (opts & (1u << 4)) {
        frames__js_open(&p, "taint_intro_frame", '{');
        frames__js_open(&p, "taint_intro_list", '[');
        for (i = 0; i < f->taint_intro.count; i++) {
            const frames_taint_intro *t = &f->taint_intro.intros[i];
            frames__js_open(&p, NULL, '{');
            frames__js_u64(&p, "addr", t->addr);
            frames__js_u64(&p, "taint_id", t->taint_id);
            if (t->has_value) frames__js_hex(&p, "value", t->value);
            if (t->has_source_name) frames__js_text(&p, "source_name", t->source_name);
            if (t->has_offset) frames__js_u64(&p, "offset", t->offset);
            frames__js_close(&p, '}');
        }
        frames__js_close(&p, ']');
        frames__js_close(&p, '}');
    }
    if (opts & (1u << 5)) {
        frames__js_open(&p, "modload_frame", '{');
        frames__js_text(&p, "module_name", f->modload.module_name);
        frames__js_u64(&p, "low_address", f->modload.low_address);
        frames__js_u64(&p, "high_address", f->modload.high_address);
        frames__js_close(&p, '}');
    }
    if (opts & (1u << 6)) {
        frames__js_open(&p, "key_frame", '{');
        frames__js_open(&p, "tagged_value_lists", '[');
        for (i = 0; i < f->key.count; i++) {
            const frames_tagged_values *t = &f->key.lists[i];
            frames__js_open(&p, NULL, '{');
            frames__js_open(&p, "value_source_tag", '{');
            if (t->tag_set & FRAMES_TAG_NO_THREAD_ID) frames__js_bool(&p, "no_thread_id", t->no_thread_id);
            if (t->tag_set & FRAMES_TAG_THREAD_ID) frames__js_u64(&p, "thread_id", t->thread_id);
            frames__js_close(&p, '}');
            frames__js_operands(&p, "value_list", t->values, t->count, 1);
            frames__js_close(&p, '}');
        }
        frames__js_close(&p, ']');
        frames__js_close(&p, '}');
    }
    if (opts & (1u << FRAMES_KIND_UNKNOWN)) {
        frames__js_open(&p, "unknown_option", '{');
        frames__js_u64(&p, "field", f->unknown.field);
        frames__js_u64(&p, "wire_type", f->unknown.wire_type);
        if (f->unknown.wire_type == FRAMES__LEN || f->unknown.wire_type == FRAMES__SGROUP)
            frames__js_hex(&p, "payload", f->unknown.payload);
        else
            frames__js_u64(&p, "value", f->unknown.scalar);
        frames__js_close(&p, '}');
    }
    frames__js_close(&p, '}');
    return p.failed ? FRAMES_E_IO : FRAMES_OK;
}

static void frames__js_null(frames__pr *p, const char *name) {
    frames__js_key(p, name);
    frames__pr_str(p, "null");
}

static void frames__js_row(frames__pr *p, uint64_t index, const uint64_t *pc, const uint64_t *tid,
                           const char *list, const frames_operand *op, int value_info) {
    p->json_first = 1;
    frames__pr_raw(p, "{", 1);
    frames__js_u64(p, "frame", index);
    if (pc) frames__js_u64(p, "pc", *pc);
    else frames__js_null(p, "pc");
    if (tid) frames__js_u64(p, "tid", *tid);
    else frames__js_null(p, "tid");
    frames__js_key(p, "list");
    frames__pr_fmt(p, "\"%s\"", list);
    frames__js_key(p, "kind");
    frames__pr_str(p, (op->spec & FRAMES_MEM) ? "\"mem\"" : (op->spec & FRAMES_REG) ? "\"reg\"" : "\"none\"");
    if (op->spec & FRAMES_REG) frames__js_text(p, "name", op->name);
    else frames__js_null(p, "name");
    if (op->spec & FRAMES_MEM) frames__js_u64(p, "address", op->address);
    else frames__js_null(p, "address");
    frames__js_i64(p, "bits", op->bit_length);
    frames__js_bool(p, "read", !value_info && op->read);
    frames__js_bool(p, "written", !value_info && op->written);
    frames__js_bool(p, "index", !value_info && op->index);
    frames__js_bool(p, "base", !value_info && op->base);
    if (op->taint.set & FRAMES_TAINT_ID) frames__js_u64(p, "taint_id", op->taint.id);
    else frames__js_null(p, "taint_id");
    frames__js_hex(p, "value", op->value);
    if (op->value.len >= 1 && op->value.len <= 8) {
        frames__js_u64(p, "value_uint", frames__value_u64(op->value.ptr, op->value.len));
    } else {
        frames__js_null(p, "value_uint");
    }
    frames__pr_raw(p, "}\n", 2);
}

FRAMES_DEF int frames_print_operand_rows_jsonl(const frames_frame *f, uint64_t frame_index,
                                               frames_out_fn out, void *ctx) {
    frames__pr p;
    uint32_t opts = frames__options_of(f), i, j;
    memset(&p, 0, sizeof p);
    p.out = out;
    p.ctx = ctx;
    if (opts & (1u << FRAMES_KIND_STD)) {
        const frames_std_frame *s = &f->std;
        for (i = 0; i < s->npre; i++)
            frames__js_row(&p, frame_index, &s->address, &s->thread_id, "pre", &s->pre[i], 0);
        for (i = 0; i < s->npost; i++)
            frames__js_row(&p, frame_index, &s->address, &s->thread_id, "post", &s->post[i], 0);
    }
    if (opts & (1u << FRAMES_KIND_KEY)) {
        for (i = 0; i < f->key.count; i++) {
            const frames_tagged_values *t = &f->key.lists[i];
            const uint64_t *tid = (t->tag_set & FRAMES_TAG_THREAD_ID) ? &t->thread_id : NULL;
            for (j = 0; j < t->count; j++)
                frames__js_row(&p, frame_index, NULL, tid, "key", &t->values[j], 1);
        }
    }
    return p.failed ? FRAMES_E_IO : FRAMES_OK;
}

static void frames__js_strings(frames__pr *p, const char *name, const frames_bytes *list, uint32_t n) {
    uint32_t i;
    frames__js_open(p, name, '[');
    for (i = 0; i < n; i++) {
        if (i) frames__pr_raw(p, ",", 1);
        frames__js_string(p, list[i]);
    }
    frames__js_close(p, ']');
}

FRAMES_DEF int frames_print_meta_json(const frames_meta *m, frames_out_fn out, void *ctx) {
    frames__pr p;
    memset(&p, 0, sizeof p);
    p.json_first = 1; /* the top-level object has no comma before it */
    p.out = out;
    p.ctx = ctx;
    p.json_first = 1; /* no comma before the top-level object */
    frames__js_open(&p, NULL, '{');
    frames__js_open(&p, "tracer", '{');
    frames__js_text(&p, "name", m->tracer_name);
    frames__js_strings(&p, "args", m->tracer_args, m->ntracer_args);
    frames__js_strings(&p, "envp", m->tracer_envp, m->ntracer_envp);
    frames__js_text(&p, "version", m->tracer_version);
    frames__js_close(&p, '}');
    frames__js_open(&p, "target", '{');
    frames__js_text(&p, "path", m->target_path);
    frames__js_strings(&p, "args", m->target_args, m->ntarget_args);
    frames__js_strings(&p, "envp", m->target_envp, m->ntarget_envp);
    frames__js_hex(&p, "md5sum", m->target_md5sum);
    frames__js_close(&p, '}');
    frames__js_open(&p, "fstats", '{');
    frames__js_i64(&p, "size", m->fstats_size);
    frames__js_double(&p, "atime", m->fstats_atime);
    frames__js_double(&p, "mtime", m->fstats_mtime);
    frames__js_double(&p, "ctime", m->fstats_ctime);
    frames__js_close(&p, '}');
    frames__js_text(&p, "user", m->user);
    frames__js_text(&p, "host", m->host);
    frames__js_double(&p, "time", m->time);
    frames__js_close(&p, '}');
    return p.failed ? FRAMES_E_IO : FRAMES_OK;
}

#ifndef FRAMES_NO_STDIO
FRAMES_DEF int frames_out_file(void *file, const char *s, size_t n) {
    return fwrite(s, 1, n, (FILE *)file) == n ? 0 : -1;
}
#endif
#endif /* FRAMES_NO_TEXT */

/* --------------------------------------------------------------------------------------
   recording API
   -------------------------------------------------------------------------------------- */

enum { FRAMES__REC_IDLE = 0, FRAMES__REC_OPEN = 1, FRAMES__REC_SKIPPED = 2 };

static int frames__rfail(frames_recorder *r, int code, const char *fmt, ...) FRAMES__PRINTF(3, 4);
static int frames__rfail(frames_recorder *r, int code, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    frames__vfail(&r->frames__err, code, FRAMES_NO_POS, FRAMES_NO_POS, FRAMES__FAIL_POS, fmt, ap);
    va_end(ap);
    return code;
}

FRAMES_DEF int frames_rec_init(frames_recorder *r, void *buffer, size_t size,
                               frames_flush_fn flush, void *flush_ctx, uint64_t thread_id) {
    memset(r, 0, sizeof *r);
    frames__clear_error(&r->frames__err);
    r->frames__tid = thread_id;
    if (!buffer || size < FRAMES_REC_MIN_BUFFER || !flush)
        return frames__rfail(r, FRAMES_E_INVALID,
                             "recorder needs a buffer of at least %u bytes and a flush callback",
                             (unsigned)FRAMES_REC_MIN_BUFFER);
    r->frames__buf = (uint8_t *)buffer;
    r->frames__cap = size;
    r->frames__flush = flush;
    r->frames__flush_ctx = flush_ctx;
    return FRAMES_OK;
}

FRAMES_DEF void frames_rec_thread(frames_recorder *r, uint64_t thread_id) { r->frames__tid = thread_id; }

FRAMES_DEF int frames_rec_filter(frames_recorder *r, const uint32_t *selectors, uint32_t n) {
    const uint32_t known = FRAMES_VAL_KINDS | FRAMES_VAL_ACTIONS | FRAMES_VAL_POSITIONS |
                           FRAMES_VAL_CLASSES;
    uint32_t i;
    if (n > FRAMES_REC_MAX_SELECTORS)
        return frames__rfail(r, FRAMES_E_INVALID, "at most %u selectors",
                             (unsigned)FRAMES_REC_MAX_SELECTORS);
    for (i = 0; i < n; i++)
        if (selectors[i] & ~known)
            return frames__rfail(r, FRAMES_E_INVALID, "selector %u has unknown bits 0x%x",
                                 (unsigned)i, (unsigned)(selectors[i] & ~known));
    for (i = 0; i < n; i++) r->frames__sel[i] = selectors[i];
    r->frames__nsel = n;
    return FRAMES_OK;
}

FRAMES_DEF int frames_rec_sampling(frames_recorder *r, uint64_t record, uint64_t skip) {
    if (skip > UINT64_MAX - record)
        return frames__rfail(r, FRAMES_E_INVALID, "%s", "sampling window too large");
    r->frames__on = record;
    r->frames__period = skip ? record + skip : 0;
    r->frames__phase = 0;
    return FRAMES_OK;
}

FRAMES_DEF int frames_rec_sampling_active(const frames_recorder *r) {
    return r->frames__period == 0 || r->frames__phase < r->frames__on;
}

/* One group of a selector: no bit means "any". */
static int frames__rec_group(uint32_t sel, uint32_t attr, uint32_t group) {
    return !(sel & group) || (sel & attr & group);
}

static int frames__rec_selected(const frames_recorder *r, uint32_t attr) {
    uint32_t i, s;
    if (r->frames__nsel == 0) return 1;
    if (!(attr & FRAMES_VAL_CLASSES)) attr |= FRAMES_VAL_INT;
    for (i = 0; i < r->frames__nsel; i++) {
        s = r->frames__sel[i];
        if (frames__rec_group(s, attr, FRAMES_VAL_KINDS) &&
            frames__rec_group(s, attr, FRAMES_VAL_ACTIONS) &&
            frames__rec_group(s, attr, FRAMES_VAL_POSITIONS) &&
            frames__rec_group(s, attr, FRAMES_VAL_CLASSES))
            return 1;
    }
    return 0;
}

FRAMES_DEF int frames_rec_wants(const frames_recorder *r, uint32_t attr) {
    return r->frames__state == FRAMES__REC_OPEN && frames__rec_selected(r, attr);
}

static void frames__rec_tick(frames_recorder *r) {
    if (r->frames__period && ++r->frames__phase == r->frames__period) r->frames__phase = 0;
}

FRAMES_DEF int frames_rec_begin(frames_recorder *r, uint64_t pc, const void *bytes, size_t n) {
    int sampled;
    if (r->frames__state != FRAMES__REC_IDLE)
        return frames__rfail(r, FRAMES_E_STATE, "instruction at 0x%llx is still open",
                             (unsigned long long)r->frames__pc);
    if (n > FRAMES_REC_MAX_RAWBYTES || (n && !bytes))
        return frames__rfail(r, FRAMES_E_INVALID, "instruction bytes: %lu (at most %u)",
                             (unsigned long)n, (unsigned)FRAMES_REC_MAX_RAWBYTES);
    sampled = frames_rec_sampling_active(r);
    frames__rec_tick(r);
    r->stats.instructions++;
    r->frames__pc = pc;
    if (!sampled) {
        r->frames__state = FRAMES__REC_SKIPPED;
        return 0;
    }
    frames__copy(r->frames__raw, (const uint8_t *)bytes, n);
    r->frames__rawlen = (uint32_t)n;
    r->frames__insn_tid = r->frames__tid;
    r->frames__nval = 0;
    r->frames__end[0] = 0;
    r->frames__end[1] = FRAMES__REC_LIST;
    r->frames__state = FRAMES__REC_OPEN;
    return 1;
}

static uint8_t *frames__rec_varint(uint8_t *p, uint64_t v) {
    for (; v >= 0x80; v >>= 7) *p++ = (uint8_t)(v | 0x80);
    *p++ = (uint8_t)v;
    return p;
}

static int frames__rec_bad(frames_recorder *r, uint32_t attr, size_t size) {
    return frames__rfail(r, FRAMES_E_INVALID,
                         "bad value record: attributes 0x%x (one kind and one position), "
                         "size %lu (1 to %u)", (unsigned)attr, (unsigned long)size,
                         (unsigned)FRAMES_REC_MAX_VALUE_SIZE);
}

/* Attributes of a value: one kind (bit k set for k = 1, 2, 4, ..., 32), one position and at
   most one class (bit 16 * class + position), as bit sets; and a size of 1 to 64. */
FRAMES__INLINE int frames__rec_attr_ok(uint32_t attr, size_t size) {
    const uint64_t one_kind = 0x0000000100010116ull, pos_class = 0x0000000600060006ull;
    return (int)((one_kind >> (attr & FRAMES_VAL_KINDS)) & (pos_class >> ((attr >> 12) & 0x33)) & 1) &
           (size - 1 < FRAMES_REC_MAX_VALUE_SIZE);
}

/* The bytes of an operand list element before its value, at e (its name, name_len bytes,
   already at e + 8; an = 0 for a register, else the varint size of a memory address), as
   frames__write_plain writes a plain operand (no taint: taint_info { no_taint: true }).
   The element's size is known before it is written, so its fixed bytes go out a word at
   a time (a word store may run past its field into bytes written right after it; an
   element slot has room for that). Returns where the value goes. */
FRAMES__INLINE uint8_t *frames__rec_head(uint8_t *e, uint32_t attr, size_t name_len, uint64_t address,
                                         size_t an, size_t size) {
    /* operand_usage { read (before only), written (after only), index, base } and
       taint_info { no_taint }: the word after the bit length, by (read, written, index) */
    static const uint64_t usage[8] = {0x001800100008081aull, 0x001800100108081aull, 0x001801100008081aull, 0,
                                      0x011800100008081aull, 0x011800100108081aull, 0x011801100008081aull, 0};
    uint32_t after = (attr >> 13) & 1, act = attr & (FRAMES_VAL_READ << after);
    uint64_t zz = (uint64_t)(16 * size); /* zigzag of the bit length, 8 * size */
    size_t zn = size < 8 ? 1 : 2, spec = an ? 5 + an : 6 + name_len;
    size_t elem = spec + 1 + zn + 16 + size; /* below 128: one length byte */
    uint8_t *p;
    if (an) { /* 0a elem 0a spec-2 0a spec-4 08 address */
        frames__put_le64(e, 0x0008000a000a000aull | (uint64_t)elem << 8 | (uint64_t)(spec - 2) << 24 |
                                (uint64_t)(spec - 4) << 40);
        if (FRAMES__LIKELY(an <= 8))
            frames__put_le64(e + 7, frames__varint_word(address, an));
        else
            frames__rec_varint(e + 7, address);
    } else { /* 0a elem 0a spec-2 12 spec-4 0a name_len name: every length grows with
                name_len (no field carries into the next) */
        frames__put_le64(e, 0x000a0212040a000aull + ((uint64_t)(elem - name_len) << 8) +
                                (uint64_t)name_len * 0x0100010001000100ull);
    }
    p = e + 2 + spec; /* 10 bit_length */
    frames__put_le32(p, zn == 1 ? 0x10u | (uint32_t)zz << 8
                                : 0x8010u | (uint32_t)(zz & 0x7f) << 8 | (uint32_t)(zz >> 7) << 16);
    p += 1 + zn;
    /* usage, taint_info, value */
    frames__put_le64(p, usage[act >> 8 | ((attr & FRAMES_VAL_INDEX) >> 19)]);
    frames__put_le64(p + 8, 0x002a010802220020ull | (uint64_t)(attr & FRAMES_VAL_BASE) >> 12 |
                                (uint64_t)size << 56);
    return p + 16;
}

/* Room for one more value in the open instruction (the filter passed): 1, or the
   recorder's failure. */
FRAMES__INLINE int frames__rec_room(frames_recorder *r) {
    if (FRAMES__UNLIKELY(r->frames__nval >= FRAMES_REC_MAX_VALUES)) {
        r->stats.overflow++;
        return frames__rfail(r, FRAMES_E_LIMIT, "more than %u values in the instruction at 0x%llx",
                             (unsigned)FRAMES_REC_MAX_VALUES, (unsigned long long)r->frames__pc);
    }
    return 1;
}

/* Encode the value as an operand list element, straight into its list. This is the hot
   path of every embedded tracer: no call, one branch per rare case. */
FRAMES__INLINE int frames__rec_value(frames_recorder *r, uint32_t attr, const char *name,
                                    uint64_t address, const void *value, size_t size) {
    uint8_t *e, *p;
    size_t name_len = 0, an = 0;
    uint32_t after = (attr >> 13) & 1;
    int rc;
    if (FRAMES__UNLIKELY(r->frames__state != FRAMES__REC_OPEN)) {
        if (r->frames__state == FRAMES__REC_SKIPPED) return 0;
        return frames__rfail(r, FRAMES_E_STATE, "%s", "value recorded outside an instruction");
    }
    if (FRAMES__UNLIKELY(!frames__rec_attr_ok(attr, size) | !value)) return frames__rec_bad(r, attr, size);
    e = r->frames__vals + r->frames__end[after];
    if (name) { /* measured while copied into place: libc's strlen cost more than this */
        for (; name_len <= FRAMES_REC_MAX_NAME && name[name_len]; name_len++)
            e[8 + name_len] = (uint8_t)name[name_len];
        if (FRAMES__UNLIKELY(name_len > FRAMES_REC_MAX_NAME))
            return frames__rfail(r, FRAMES_E_INVALID, "register name longer than %u bytes",
                                 (unsigned)FRAMES_REC_MAX_NAME);
    }
    if (r->frames__nsel && !frames__rec_selected(r, attr)) {
        r->stats.filtered++;
        return 0;
    }
    if ((rc = frames__rec_room(r)) < 0) return rc;
    if (attr & FRAMES_VAL_MEM) an = frames__varint_size(address);
    p = frames__rec_head(e, attr, name_len, address, an, size);
    frames__copy(p, (const uint8_t *)value, size);
    r->frames__end[after] += (uint32_t)(p + size - e);
    r->frames__nval++;
    r->stats.values++;
    return 1;
}

FRAMES_DEF int frames_rec_prepare(frames_rec_prep *p, uint32_t attr, const char *name, size_t size,
                                  frames_error *err) {
    size_t n = name ? strlen(name) : 0;
    frames_error scratch;
    if (!err) err = &scratch;
    memset(p, 0, sizeof *p);
    if ((attr & FRAMES_VAL_MEM) || !frames__rec_attr_ok(attr, size) || n > FRAMES_REC_MAX_NAME)
        return frames__fail(err, FRAMES_E_INVALID, FRAMES_NO_POS, FRAMES_NO_POS,
                            "bad prepared register value: attributes 0x%x (one register kind, one "
                            "position), size %lu (1 to %u), name of %lu bytes (at most %u)",
                            (unsigned)attr, (unsigned long)size, (unsigned)FRAMES_REC_MAX_VALUE_SIZE,
                            (unsigned long)n, (unsigned)FRAMES_REC_MAX_NAME);
    {
        uint8_t e[FRAMES__REC_HEAD + 16]; /* room for the last word store */
        memcpy(e + 8, name ? name : "", n);
        p->head = (uint8_t)(frames__rec_head(e, attr, n, 0, 0, size) - e);
        memcpy(p->bytes, e, p->head);
    }
    p->attr = attr;
    p->size = (uint8_t)size;
    return FRAMES_OK;
}

FRAMES_DEF int frames_rec_reg_prepared(frames_recorder *r, const frames_rec_prep *p, const void *value) {
    uint32_t after = (p->attr >> 13) & 1;
    uint8_t *e;
    int rc;
    if (FRAMES__UNLIKELY(r->frames__state != FRAMES__REC_OPEN)) {
        if (r->frames__state == FRAMES__REC_SKIPPED) return 0;
        return frames__rfail(r, FRAMES_E_STATE, "%s", "value recorded outside an instruction");
    }
    if (FRAMES__UNLIKELY(!p->size || !value)) return frames__rec_bad(r, p->attr, p->size);
    if (r->frames__nsel && !frames__rec_selected(r, p->attr)) {
        r->stats.filtered++;
        return 0;
    }
    if ((rc = frames__rec_room(r)) < 0) return rc;
    /* the whole head at once: the slot has room past it (FRAMES__REC_ELEM) */
    e = r->frames__vals + r->frames__end[after];
    memcpy(e, p->bytes, FRAMES__REC_HEAD);
    frames__copy(e + p->head, (const uint8_t *)value, p->size);
    r->frames__end[after] += (uint32_t)p->head + p->size;
    r->frames__nval++;
    r->stats.values++;
    return 1;
}

FRAMES_DEF int frames_rec_reg(frames_recorder *r, uint32_t attr, const char *name,
                              const void *value, size_t size) {
    if (attr & FRAMES_VAL_MEM)
        return frames__rfail(r, FRAMES_E_INVALID, "%s", "frames_rec_reg with a memory kind");
    return frames__rec_value(r, attr, name ? name : "", 0, value, size);
}

FRAMES_DEF int frames_rec_mem(frames_recorder *r, uint32_t attr, uint64_t address,
                              const void *value, size_t size) {
    if ((attr & FRAMES_VAL_KINDS) && !(attr & FRAMES_VAL_MEM))
        return frames__rfail(r, FRAMES_E_INVALID, "%s", "frames_rec_mem with a register kind");
    return frames__rec_value(r, attr | FRAMES_VAL_MEM, NULL, address, value, size);
}

FRAMES_DEF int frames_rec_flush(frames_recorder *r) {
    int rc;
    if (r->frames__len == 0) return FRAMES_OK;
    r->frames__in_flush = 1;
    rc = r->frames__flush(r->frames__flush_ctx, r->frames__buf, r->frames__len,
                          r->frames__nframes);
    r->frames__in_flush = 0;
    if (rc < 0)
        return frames__rfail(r, rc, "flush of %u frames failed (%s)", (unsigned)r->frames__nframes,
                             frames_strerror(rc));
    r->stats.flushes++;
    r->stats.bytes += r->frames__len;
    r->frames__len = 0;
    r->frames__nframes = 0;
    return FRAMES_OK;
}

/* Encode one frame behind the buffered ones (back to front in the free space, then moved
   down), flushing once if it does not fit. */
static int frames__rec_emit(frames_recorder *r, const frames_frame *f) {
    frames__enc e;
    size_t room, n = 0;
    uint8_t *start;
    int rc, attempt;
    for (attempt = 0; attempt < 2; attempt++) {
        room = r->frames__cap - r->frames__len;
        start = r->frames__buf + r->frames__len + 8;
        e.cap = room > 8 ? room - 8 : 0;
        e.end = start + e.cap;
        n = frames__enc_frame(e, f);
        if (frames__frame_fits(room, n)) {
            if (n < e.cap) memmove(start, start + (e.cap - n), n);
            frames__put_le64(r->frames__buf + r->frames__len, n);
            r->frames__len += 8 + n;
            r->frames__nframes++;
            r->stats.frames++;
            return FRAMES_OK;
        }
        if (r->frames__len == 0) break;
        if ((rc = frames_rec_flush(r)) < 0) return rc;
    }
    return frames__rfail(r, FRAMES_E_SPACE, "a frame of %lu bytes does not fit the recorder buffer",
                         (unsigned long)n);
}

/* A varint as one word store when `words` (room past p) and v < 2^56. */
FRAMES__INLINE uint8_t *frames__rec_put_varint(uint8_t *p, uint64_t v, int words) {
    size_t n = frames__varint_size(v);
    if (FRAMES__LIKELY(words && n <= 8)) {
        frames__put_le64(p, frames__varint_word(v, n));
        return p + n;
    }
    return frames__rec_varint(p, v);
}

/* A list of a few hundred bytes, 32 at a time when `words` (room past its end): cheaper
   than a call to memcpy at these sizes. The source may be read up to 31 bytes past n. */
FRAMES__INLINE void frames__rec_copy_list(uint8_t *dst, const uint8_t *src, size_t n, int words) {
    size_t i;
    if (!words) {
        memcpy(dst, src, n);
        return;
    }
    for (i = 0; i < n; i += 32) memcpy(dst + i, src + i, 32);
}

/* The std_frame of the open instruction, straight into the buffer: frame { 1: std_frame
   { 1 address, 2 thread_id, 3 rawbytes, 4 pre list, 5 post list } } (post only if the
   instruction completed), the same bytes frames_writer_add writes. */
static int frames__rec_close(frames_recorder *r, int completed) {
    size_t lpre = r->frames__end[0], lpost = completed ? r->frames__end[1] - FRAMES__REC_LIST : 0;
    size_t body, frame, need;
    uint8_t *p;
    int rc, words;
    r->frames__state = FRAMES__REC_IDLE;
    body = 1 + frames__varint_size(r->frames__pc) + 1 + frames__varint_size(r->frames__insn_tid) + 1 +
           1 + r->frames__rawlen + 1 + frames__varint_size(lpre) + lpre +
           (completed ? 1 + frames__varint_size(lpost) + lpost : 0); /* rawlen <= 32: 1 byte */
    frame = 1 + frames__varint_size(body) + body;
    need = 8 + frame;
    if (FRAMES__UNLIKELY(need > r->frames__cap - r->frames__len)) {
        if (r->frames__len && (rc = frames_rec_flush(r)) < 0) return rc;
        if (need > r->frames__cap)
            return frames__rfail(r, FRAMES_E_SPACE, "a frame of %lu bytes does not fit the recorder buffer",
                                 (unsigned long)frame);
    }
    words = need + 32 <= r->frames__cap - r->frames__len;
    p = r->frames__buf + r->frames__len;
    frames__put_le64(p, frame);
    p[8] = 0x0a;
    p = frames__rec_put_varint(p + 9, body, words);
    *p++ = 0x08;
    p = frames__rec_put_varint(p, r->frames__pc, words);
    *p++ = 0x10;
    p = frames__rec_put_varint(p, r->frames__insn_tid, words);
    p[0] = 0x1a;
    p[1] = (uint8_t)r->frames__rawlen;
    frames__copy(p + 2, r->frames__raw, r->frames__rawlen);
    p += 2 + r->frames__rawlen;
    *p++ = 0x22;
    p = frames__rec_varint(p, lpre);
    frames__rec_copy_list(p, r->frames__vals, lpre, words);
    p += lpre;
    if (completed) {
        *p++ = 0x2a;
        p = frames__rec_varint(p, lpost);
        frames__rec_copy_list(p, r->frames__vals + FRAMES__REC_LIST, lpost, words);
    }
    r->frames__len += need;
    r->frames__nframes++;
    r->stats.frames++;
    r->stats.recorded++;
    return 1;
}

FRAMES_DEF int frames_rec_end(frames_recorder *r) {
    if (r->frames__state == FRAMES__REC_SKIPPED) {
        r->frames__state = FRAMES__REC_IDLE;
        return 0;
    }
    if (r->frames__state != FRAMES__REC_OPEN)
        return frames__rfail(r, FRAMES_E_STATE, "%s", "no open instruction");
    return frames__rec_close(r, 1);
}

FRAMES_DEF void frames_rec_cancel(frames_recorder *r) {
    if (r->frames__state == FRAMES__REC_IDLE) return;
    r->frames__state = FRAMES__REC_IDLE;
    r->stats.instructions--;
    if (r->frames__period) /* step the sampling clock back */
        r->frames__phase = (r->frames__phase ? r->frames__phase : r->frames__period) - 1;
}

FRAMES_DEF void frames_rec_skip(frames_recorder *r, uint64_t n) {
    r->stats.instructions += n;
    if (r->frames__period)
        r->frames__phase = (uint64_t)((r->frames__phase + n % r->frames__period) % r->frames__period);
}

FRAMES_DEF int frames_rec_syscall(frames_recorder *r, uint64_t pc, uint64_t number,
                                  const int64_t *args, uint32_t nargs) {
    frames_frame f;
    memset(&f, 0, sizeof f);
    f.kind = FRAMES_KIND_SYSCALL;
    f.syscall.address = pc;
    f.syscall.thread_id = r->frames__tid;
    f.syscall.number = number;
    f.syscall.args = args;
    f.syscall.nargs = nargs;
    return frames__rec_emit(r, &f);
}

FRAMES_DEF int frames_rec_modload(frames_recorder *r, const char *name, uint64_t low,
                                  uint64_t high) {
    frames_frame f;
    memset(&f, 0, sizeof f);
    f.kind = FRAMES_KIND_MODLOAD;
    f.modload.module_name = frames_str(name);
    f.modload.low_address = low;
    f.modload.high_address = high;
    return frames__rec_emit(r, &f);
}

FRAMES_DEF int frames_rec_exception(frames_recorder *r, uint64_t number, uint64_t from_addr,
                                    uint64_t to_addr) {
    frames_frame f;
    memset(&f, 0, sizeof f);
    f.kind = FRAMES_KIND_EXCEPTION;
    f.exception.number = number;
    f.exception.thread_id = r->frames__tid;
    f.exception.has_thread_id = 1;
    f.exception.from_addr = from_addr;
    f.exception.has_from_addr = from_addr != FRAMES_NO_POS;
    f.exception.to_addr = to_addr;
    f.exception.has_to_addr = to_addr != FRAMES_NO_POS;
    return frames__rec_emit(r, &f);
}

FRAMES_DEF int frames_rec_frame(frames_recorder *r, const frames_frame *f) {
    int rc = frames_validate_frame(f, &r->frames__err);
    return rc < 0 ? rc : frames__rec_emit(r, f);
}

FRAMES_DEF int frames_rec_finish(frames_recorder *r) {
    int rc;
    if (r->frames__state == FRAMES__REC_OPEN && (rc = frames__rec_close(r, 0)) < 0) return rc;
    r->frames__state = FRAMES__REC_IDLE;
    return frames_rec_flush(r);
}

FRAMES_DEF const frames_error *frames_rec_error(const frames_recorder *r) { return &r->frames__err; }

/* Room for `extra` more TOC entries, so that a batch either goes out whole or not at all. */
static int frames__reserve_toc(frames_writer *w, size_t extra) {
    size_t need = w->frames__toclen + extra, ncap;
    uint64_t *nt;
    if (need <= w->frames__toccap) return FRAMES_OK;
    if (!w->frames__tocowned)
        return frames__wfail(w, FRAMES_E_NOMEM, "%s", "caller TOC storage is full");
    ncap = w->frames__toccap ? w->frames__toccap : 64;
    while (ncap < need) ncap *= 2;
    nt = (uint64_t *)FRAMES_REALLOC(w->frames__toc, ncap * sizeof *nt, w->frames__opt.alloc_ctx);
    if (!nt) return frames__wfail(w, FRAMES_E_NOMEM, "%s", "out of memory for the TOC");
    w->frames__toc = nt;
    w->frames__toccap = ncap;
    return FRAMES_OK;
}

FRAMES_DEF int frames_writer_add_frames(frames_writer *w, const void *frames, size_t len) {
    const uint8_t *p = (const uint8_t *)frames;
    uint64_t m = w->frames__opt.frames_per_toc, index = w->frames__count, flen, next;
    size_t pos, toclen = w->frames__toclen;
    int rc;
    if (w->frames__state != FRAMES__W_OPEN)
        return frames__fail(&w->frames__err, FRAMES_E_STATE, FRAMES_NO_POS, FRAMES_NO_POS,
                            w->frames__state == FRAMES__W_FINISHED ? "trace already finished"
                                                                   : "writer failed earlier");
    /* one walk checks the batch and notes its TOC entries (next: the index of the next
       frame that gets one, so no division per frame); a batch refused leaves the TOC as
       it was */
    next = index % m == 0 ? index : index - index % m + m;
    if (next == 0) next = m;
    for (pos = 0; pos < len; pos += 8 + (size_t)flen, index++) {
        flen = len - pos >= 8 ? frames__le64(p + pos) : 0;
        if (len - pos < 8 || flen == 0 || flen > len - pos - 8) {
            w->frames__toclen = toclen;
            return frames__fail(&w->frames__err, FRAMES_E_INVALID, FRAMES_NO_POS, index,
                                "malformed frame batch at byte %lu", (unsigned long)pos);
        }
        if (index == next) {
            if ((rc = frames__reserve_toc(w, 1)) < 0) {
                w->frames__toclen = toclen;
                return rc;
            }
            w->frames__toc[w->frames__toclen++] = w->frames__offset + pos;
            next = next > UINT64_MAX - m ? 0 : next + m;   /* 0: no frame index reaches it */
        }
    }
    if ((rc = frames__wflush_buffer(w)) < 0) {
        w->frames__toclen = toclen;
        return rc;
    }
    w->frames__count = index;
    if (len && w->frames__sink.write(w->frames__sink.ctx, p, len) < 0)
        return frames__wfail(w, FRAMES_E_IO, "write failed: %s", frames__syserr());
    w->frames__offset += len;
    return FRAMES_OK;
}

FRAMES_DEF int frames_rec_flush_to_writer(void *shared, const void *frames, size_t len,
                                          uint32_t nframes) {
    frames_rec_shared *s = (frames_rec_shared *)shared;
    int rc;
    (void)nframes;
    if (s->lock) s->lock(s->lock_ctx);
    rc = frames_writer_add_frames(s->writer, frames, len);
    if (s->unlock) s->unlock(s->lock_ctx);
    return rc;
}

FRAMES_DEF int frames_rec_crash_finish(frames_recorder *r, frames_rec_shared *shared) {
    int rc;
    if (r && r->frames__in_flush) return FRAMES_E_STATE;
    if (r) frames_rec_finish(r); /* on failure the rest still gets its TOC */
    if (shared->lock) shared->lock(shared->lock_ctx);
    rc = frames_writer_finish(shared->writer);
    if (shared->unlock) shared->unlock(shared->lock_ctx);
    return rc;
}

#ifdef __cplusplus
}
#endif

#endif /* FRAMES_IMPLEMENTATION_INCLUDED */
#endif /* FRAMES_IMPLEMENTATION */

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
