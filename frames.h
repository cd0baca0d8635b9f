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

   Everywhere else just #include "frames.h".

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

       frames_writer *w; frames_frame f = {0}; frames_operand op = {0};
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
   FRAMES_NO_STDIO        leave out everything that uses FILE* (file/stream helpers)
   FRAMES_NO_POSIX        leave out mmap/fd based helpers (automatic on _WIN32)
   FRAMES_NO_TEXT         leave out the protobuf-text and JSON printers

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
   stream readers (pipes, FILE*) until the next call on that reader. Arrays (operand
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
     frames_encode_frame / _meta          model -> bytes in a caller buffer (no allocation)
     frames_frame_size / frames_meta_size exact encoded size
     frames_validate_frame                would the strictest reader (BAP's piqirun) accept it?
   Reading a container
     frames_reader_open_memory / _path / _fd / _file / _io
     frames_reader_next / _next_raw       sequential iteration (decoded / undecoded)
     frames_reader_seek / _count / _index random access, frame count, index building
     frames_reader_stat / _warning        TOC convention found, truncation, warnings
     frames_cursor_open / _next / _close  independent cursors (one per thread)
   Writing a container
     frames_writer_open / _open_path / _open_fd / _open_file, frames_writer_init
     frames_writer_add / _add_encoded / _flush / _finish / _close
   Naming and printing
     frames_strerror, frames_arch_name, frames_kind_name, frames_toc_name
     frames_print_frame_pbtext / _meta_pbtext / _frame_json
*/

#ifndef FRAMES_H_INCLUDED
#define FRAMES_H_INCLUDED

#include <stddef.h>
#include <stdint.h>
#if !defined(FRAMES_NO_STDIO)
#include <stdio.h>
#endif

#if defined(_WIN32) && !defined(FRAMES_NO_POSIX)
#define FRAMES_NO_POSIX
#endif

#ifndef FRAMES_DEF
#ifdef FRAMES_STATIC
#define FRAMES_DEF static
#else
#define FRAMES_DEF extern
#endif
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define FRAMES_LIB_VERSION "0.1.0"

/* ======================================================================================
   Status and error codes
   ====================================================================================== */

enum {
    FRAMES_OK = 0,
    FRAMES_UNFINISHED = 1,     /* finish: sink cannot seek; trace left unfinished (readable) */
    FRAMES_E_IO = -1,          /* read/write/seek failed (errno in the message) */
    FRAMES_E_NOMEM = -2,       /* allocation failed or scratch/limit exhausted */
    FRAMES_E_FORMAT = -3,      /* container is malformed (header, meta size, TOC) */
    FRAMES_E_DECODE = -4,      /* a protobuf message is malformed */
    FRAMES_E_TRUNCATED = -5,   /* input ends inside a record */
    FRAMES_E_LIMIT = -6,       /* a configured limit (frame size, depth, memory) exceeded */
    FRAMES_E_INVALID = -7,     /* invalid argument, or a frame that must not be written */
    FRAMES_E_VERSION = -8,     /* unsupported container version */
    FRAMES_E_RANGE = -9,       /* frame index out of range */
    FRAMES_E_SPACE = -10,      /* caller buffer too small (the needed size is reported) */
    FRAMES_E_UNSUPPORTED = -11,/* operation not possible on this object (e.g. seek a pipe) */
    FRAMES_E_STATE = -12       /* call out of order (add after finish, ...) */
};

#define FRAMES_NO_POS UINT64_MAX

typedef struct frames_error {
    int code;           /* FRAMES_E_* (0 when no error) */
    uint64_t offset;    /* file offset the problem was found at, or FRAMES_NO_POS */
    uint64_t frame;     /* frame index (0-based, meta excluded), or FRAMES_NO_POS */
    char message[200];  /* readable, NUL-terminated, includes offset and frame */
} frames_error;

/* Static description of an error code ("malformed protobuf message", ...). */
FRAMES_DEF const char *frames_strerror(int code);

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

typedef struct frames_limits {
    uint64_t max_frame_size;  /* largest accepted frame or meta, bytes (default 256 MiB) */
    uint32_t max_depth;       /* nesting of messages/groups while skipping (default 64) */
    size_t max_scratch;       /* decoder arena bound, bytes (default 1 GiB) */
} frames_limits;

FRAMES_DEF frames_limits frames_limits_default(void);

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

/* ======================================================================================
   Encoding one message (byte-identical to libprotobuf for the same content)
   ====================================================================================== */

#define FRAMES_ENC_LENIENT 1u  /* write frames that piqirun would reject (several options,
                                  an empty frame) instead of refusing them */

/* Exact encoded size of the frame/meta (0 when the frame cannot be encoded). */
FRAMES_DEF size_t frames_frame_size(const frames_frame *f);
FRAMES_DEF size_t frames_meta_size(const frames_meta *m);

/* Encode into buf[0..cap). On success *len is the size written. If cap is too small,
   returns FRAMES_E_SPACE with *len = the size needed. Frames are checked with
   frames_validate_frame unless FRAMES_ENC_LENIENT. No allocation. */
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
#define FRAMES_MACH_I386 1
#define FRAMES_MACH_X86_64 64

/* "i386", "arm", ... or NULL when the number is unknown. */
FRAMES_DEF const char *frames_arch_name(uint64_t arch);
FRAMES_DEF const char *frames_kind_name(int kind);         /* "std_frame", ... */
FRAMES_DEF const char *frames_toc_name(int toc);           /* "libtrace", "ceil", ... */

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

/* Input for stream readers: read up to n bytes; return bytes read, 0 at end, <0 error. */
typedef struct frames_io {
    void *ctx;
    long long (*read)(void *ctx, void *buf, size_t n);
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
   FRAMES_E_UNSUPPORTED (frames_reader_stat gives the count once the end is reached). */
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
FRAMES_DEF void frames_reader_close(frames_reader *r);

FRAMES_DEF const frames_header *frames_reader_header(const frames_reader *r);
/* The decoded meta frame, or NULL for version 1. Valid until close. */
FRAMES_DEF const frames_meta *frames_reader_meta(const frames_reader *r);
/* Raw bytes of the meta frame (empty for version 1). */
FRAMES_DEF frames_bytes frames_reader_meta_bytes(const frames_reader *r);

/* Next frame: returns 1 (frame decoded into *f), 0 (end of trace) or a negative code.
   A frame whose payload does not decode returns FRAMES_E_DECODE with its index and
   offset; the next call continues with the following frame. A truncated tail is not an
   error: the trace ends (0) and frames_reader_stat reports the cut. */
FRAMES_DEF int frames_reader_next(frames_reader *r, frames_frame *f);
FRAMES_DEF int frames_reader_next_raw(frames_reader *r, frames_raw *raw);
/* Index of the frame the next call returns. */
FRAMES_DEF uint64_t frames_reader_tell(const frames_reader *r);
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

FRAMES_DEF int frames_reader_stat(frames_reader *r, frames_reader_info *st);
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
    void *buffer;              /* caller buffer for whole frames (NULL: allocate) */
    size_t buffer_size;        /* its size (0: 64 KiB) */
    uint64_t *toc_storage;     /* caller array for TOC offsets (NULL: allocate and grow) */
    size_t toc_capacity;       /* entries it holds; adding past it fails with E_NOMEM */
    unsigned encode_flags;     /* FRAMES_ENC_* */
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
#ifndef FRAMES_NO_POSIX
/* Sink over an fd with write()/pwrite() only, so finishing is async-signal-safe when
   the writer uses caller buffers. The fd is not closed. */
FRAMES_DEF frames_sink frames_sink_fd(int *fd);
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
FRAMES_DEF int frames_print_frame_json(const frames_frame *f, frames_out_fn out, void *ctx);
FRAMES_DEF int frames_print_meta_json(const frames_meta *m, frames_out_fn out, void *ctx);
#ifndef FRAMES_NO_STDIO
FRAMES_DEF int frames_out_file(void *file, const char *s, size_t n); /* ctx = FILE* */
#endif
#endif

#ifdef __cplusplus
}
#endif
#endif /* FRAMES_H_INCLUDED */
