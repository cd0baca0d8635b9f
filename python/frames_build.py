"""Builds frames._native, the C side of the frames package, with cffi in API mode.

API mode: the declarations below are checked by the C compiler against the library's
own headers (every struct ends in `...;`, so cffi takes the real layout from the
compiler, never from this file), and the module is an ordinary CPython extension.

Used three ways:
  - setup.py (``pip install ./python``) through ``cffi_modules``;
  - ``./build.sh python``: ``python3 python/frames_build.py OUTDIR`` builds the module
    into OUTDIR/frames next to a copy of the package's Python files;
  - by hand, the same command.

The headers come from FRAMES_ROOT (default: the folder above this file). Optional
libraries are found as build.sh's opt_flags finds them (only libzstd and libdw matter
here): FRAMES_OPT_DEFINES / FRAMES_OPT_LIBS, when set (build.sh sets them from
opt_flags), override the detection. FRAMES_PY_CFLAGS adds compiler and linker flags
(a sanitizer build: docs/python.md).
"""
import os
import shutil
import sys

import cffi

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.environ.get("FRAMES_ROOT") or os.path.dirname(HERE)

CDEF = r"""
typedef struct { int code; uint64_t offset; uint64_t frame; char message[200]; ...; } frames_error;
const char *frames_strerror(int code);
#define FRAMES_NO_POS ...

typedef struct { const uint8_t *ptr; size_t len; } frames_bytes;

#define FRAMES_MEM ...
#define FRAMES_REG ...
#define FRAMES_TAINT_NONE ...
#define FRAMES_TAINT_ID ...
#define FRAMES_TAINT_MULTIPLE ...
#define FRAMES_TAG_NO_THREAD_ID ...
#define FRAMES_TAG_THREAD_ID ...
#define FRAMES_E_RANGE ...
#define FRAMES_E_UNSUPPORTED ...
#define FRAMES_UNFINISHED ...
#define FRAMES_ENC_LENIENT ...

typedef struct { uint8_t set; uint8_t no_taint; uint8_t multiple; uint64_t id; ...; } frames_taint;
typedef struct {
    uint8_t spec; uint8_t read, written, index, base; int32_t bit_length; uint64_t address;
    frames_bytes name; frames_taint taint; frames_bytes value; ...;
} frames_operand;
typedef struct {
    uint64_t address; uint64_t thread_id; frames_bytes rawbytes;
    const frames_operand *pre; uint32_t npre; uint32_t npost; const frames_operand *post;
    uint8_t has_post; uint8_t has_mode; frames_bytes mode; ...;
} frames_std_frame;
typedef struct {
    uint64_t address; uint64_t thread_id; uint64_t number; const int64_t *args; uint32_t nargs; ...;
} frames_syscall_frame;
typedef struct {
    uint64_t number; uint64_t thread_id; uint64_t from_addr; uint64_t to_addr;
    uint8_t has_thread_id, has_from_addr, has_to_addr; ...;
} frames_exception_frame;
typedef struct {
    uint64_t addr; uint64_t taint_id; uint64_t offset; frames_bytes value; frames_bytes source_name;
    uint8_t has_value, has_source_name, has_offset; ...;
} frames_taint_intro;
typedef struct { const frames_taint_intro *intros; uint32_t count; ...; } frames_taint_intro_frame;
typedef struct { frames_bytes module_name; uint64_t low_address; uint64_t high_address; ...; } frames_modload_frame;
typedef struct {
    uint8_t tag_set; uint8_t no_thread_id; uint64_t thread_id; const frames_operand *values;
    uint32_t count; ...;
} frames_tagged_values;
typedef struct { const frames_tagged_values *lists; uint32_t count; ...; } frames_key_frame;
typedef struct {
    uint32_t field; uint32_t wire_type; uint64_t scalar; frames_bytes payload; ...;
} frames_unknown_option;
typedef struct {
    int kind; uint32_t present; uint32_t flags;
    frames_std_frame std; frames_syscall_frame syscall; frames_exception_frame exception;
    frames_taint_intro_frame taint_intro; frames_modload_frame modload; frames_key_frame key;
    frames_unknown_option unknown; ...;
} frames_frame;
typedef struct {
    frames_bytes tracer_name; const frames_bytes *tracer_args; const frames_bytes *tracer_envp;
    uint32_t ntracer_args, ntracer_envp; frames_bytes tracer_version; frames_bytes target_path;
    const frames_bytes *target_args; const frames_bytes *target_envp;
    uint32_t ntarget_args, ntarget_envp; frames_bytes target_md5sum; int32_t fstats_size;
    double fstats_atime, fstats_mtime, fstats_ctime; frames_bytes user; frames_bytes host;
    double time; uint32_t flags; ...;
} frames_meta;
typedef struct {
    uint64_t magic; uint64_t version; uint64_t arch; uint64_t machine; uint64_t nframes;
    uint64_t toc_offset; uint64_t meta_size; uint64_t first_frame; ...;
} frames_header;
const char *frames_arch_name(uint64_t arch);
const char *frames_toc_name(int toc);

typedef struct frames_reader frames_reader;
void frames_reader_close(frames_reader *r);
const frames_header *frames_reader_header(const frames_reader *r);
const frames_meta *frames_reader_meta(const frames_reader *r);
int frames_reader_next(frames_reader *r, frames_frame *f);
int frames_reader_seek(frames_reader *r, uint64_t index);
int frames_reader_count(frames_reader *r, uint64_t *n);
const frames_error *frames_reader_error(const frames_reader *r);
typedef struct {
    frames_header header; int finished; int random_access; int toc; uint32_t toc_matches;
    uint64_t frames_per_toc; uint64_t toc_entries; int toc_used; int count_known;
    uint64_t nframes; uint64_t data_end; uint64_t file_size; int truncated;
    uint64_t truncated_offset; uint64_t truncated_bytes; uint32_t nwarnings; ...;
} frames_reader_info;
int frames_reader_info_get(frames_reader *r, frames_reader_info *st);
const char *frames_reader_warning(const frames_reader *r, uint32_t i);

typedef struct frames_cursor frames_cursor;
int frames_cursor_open(frames_cursor **c, frames_reader *r, uint64_t first, frames_error *err);
int frames_cursor_next(frames_cursor *c, frames_frame *f);
const frames_error *frames_cursor_error(const frames_cursor *c);
void frames_cursor_close(frames_cursor *c);

typedef struct {
    uint32_t version; uint64_t arch; uint64_t machine; uint64_t frames_per_toc; int toc;
    unsigned encode_flags; frames_bytes meta_raw; ...;
} frames_writer_options;
void frames_writer_options_default(frames_writer_options *o);
void frames_writer_options_like(frames_reader *r, frames_writer_options *o);
typedef struct frames_writer frames_writer;
int frames_writer_add(frames_writer *w, const frames_frame *f);
int frames_writer_finish(frames_writer *w);
int frames_writer_close(frames_writer *w);
void frames_writer_abandon(frames_writer *w);
uint64_t frames_writer_count(const frames_writer *w);
const frames_error *frames_writer_error(const frames_writer *w);

static const int pyf_have_zstd;
int pyf_reader_open(frames_reader **r, const char *path, frames_error *err);
int pyf_writer_open(frames_writer **w, const char *path, const frames_writer_options *o,
                    const frames_meta *meta, int compress, frames_error *err);

typedef struct { void *data; size_t n, cap, elem; } pyf_col;

typedef struct {
    uint64_t *index, *pc, *tid; uint32_t *size; uint64_t cap, n;
} pyf_insn_cols;
typedef struct { uint64_t index; uint64_t offset; frames_bytes payload; ...; } frames_raw;
int frames_reader_next_full(frames_reader *r, frames_frame *f, frames_raw *raw);
typedef struct frames_decoder frames_decoder;
frames_decoder *pyf_decoder_open(void);
void pyf_decoder_close(frames_decoder *d);
int pyf_cursor_next(frames_reader *r, frames_cursor *c, frames_decoder *d, frames_frame *f,
                    frames_raw *raw, frames_error *err);

int pyf_instructions(frames_reader *r, uint64_t first, uint64_t stop, int check,
                     pyf_insn_cols *c, frames_error *err);

typedef struct {
    pyf_col frame, pc, tid, address, taint_id, value_uint, value_off, value_data, name_id, bits,
            list, kind, flags, name_off, name_data;
    ...;
} pyf_op_cols;
int pyf_operands(frames_reader *r, uint64_t first, uint64_t stop, pyf_op_cols *c,
                 frames_error *err);
void pyf_op_cols_free(pyf_op_cols *c);

typedef struct { pyf_col frame, pc, tid, number, args_off, args; } pyf_sys_cols;
int pyf_syscalls(frames_reader *r, uint64_t first, uint64_t stop, pyf_sys_cols *c,
                 frames_error *err);
void pyf_sys_cols_free(pyf_sys_cols *c);

typedef struct fq_trace fq_trace;
int fq_trace_open_path(fq_trace **t, const char *path, const void *o, frames_error *err);
void fq_trace_close(fq_trace *t);
typedef struct {
    uint32_t var; uint32_t slot; int format; uint32_t flags; frames_bytes name; frames_bytes type;
    uint32_t bits; uint32_t mem_index; uint64_t u; int64_t i; double f; uint64_t size;
    uint64_t addr; frames_bytes bytes; ...;
} fq_binding;
typedef struct {
    uint64_t index; uint64_t counter; uint64_t stmt; uint64_t tid; int has_tid; int format;
    uint32_t nbind; const fq_binding *bind; const char *const *var_names; ...;
} fq_result;
static const int FQ_TYPE_BLOB;
#define FQ_B_READ ...
#define FQ_B_WRITTEN ...
#define FQ_B_POST ...
#define FQ_B_MEM ...
#define FQ_B_REG ...
extern "Python" int pyf_on_result(void *ctx, const fq_result *r);
int pyf_query(fq_trace *t, const char *const *names, const char *const *types, uint32_t nvars,
              const char *where, const char *const *soft, uint32_t nsoft, int dedup,
              uint64_t limit, unsigned threads, int (*fn)(void *, const fq_result *), void *ctx,
              uint64_t *nresults, frames_error *err);

typedef struct frames_sym frames_sym;
void frames_sym_close(frames_sym *s);
int pyf_sym_open(frames_sym **s, const char *path, const char *sysroot, int no_files,
                 frames_error *err);
size_t pyf_symbolize(frames_sym *s, uint64_t pc, int line, char *buf, size_t cap);
typedef struct frames_replay frames_replay;
void frames_replay_close(frames_replay *r);
typedef struct { uint64_t instructions; size_t threads; const char *arch_name; ...; } frames_replay_info;
int frames_replay_info_get(const frames_replay *r, frames_replay_info *info);
const char *frames_replay_index_path(const frames_replay *r);
typedef struct { const char *name; uint32_t bits; ...; } frames_replay_reg;
const frames_replay_reg *frames_replay_reg_at(const frames_replay *r, size_t i);
typedef enum { FRAMES_REPLAY_PC, FRAMES_REPLAY_MEM_WRITE, FRAMES_REPLAY_MEM_READ,
               FRAMES_REPLAY_MEM_ACCESS, FRAMES_REPLAY_REG_WRITE, FRAMES_REPLAY_REG_READ,
               FRAMES_REPLAY_REG_ACCESS } frames_replay_what;
typedef struct {
    frames_replay_what what; uint64_t pc, addr, len; const char *reg; int has_thread;
    uint64_t thread; ...;
} frames_replay_query;
typedef struct {
    uint64_t index, pc, thread; int write; uint64_t addr; char reg[16]; uint8_t value[64];
    uint32_t len; uint32_t size; ...;
} frames_replay_access;
int pyf_replay_open(frames_replay **r, const char *path, const char *index_path,
                    frames_error *err);
long pyf_replay_state(frames_replay *r, uint64_t at, uint64_t *thread, uint64_t *pc,
                      int *has_pc, uint8_t *known, uint32_t *sizes, uint8_t *values,
                      size_t cap, frames_error *err);
long pyf_replay_mem(frames_replay *r, uint64_t at, uint64_t addr, uint8_t *bytes,
                    uint8_t *known, size_t n, frames_error *err);
int pyf_replay_history(frames_replay *r, const frames_replay_query *q, uint64_t from,
                       uint64_t stop, pyf_col *out, frames_error *err);
void pyf_col_free(pyf_col *c);
"""


def optional_flags():
    """Defines and libraries of the optional parts that are installed (build.sh's
    opt_flags, restricted to what the package uses)."""
    if "FRAMES_OPT_DEFINES" in os.environ:
        defines = [d[2:] for d in os.environ["FRAMES_OPT_DEFINES"].split() if d.startswith("-D")]
        libs = [l[2:] for l in os.environ.get("FRAMES_OPT_LIBS", "").split() if l.startswith("-l")]
        keep = {"FRAMES_HAVE_ZSTD": ["zstd"], "FRAMES_SYM_LIBDW": ["dw", "elf"]}
        defines = [d for d in defines if d in keep]
        libs = [l for l in libs if any(l in keep[d] for d in defines)]
        return defines, libs
    defines, libs = [], []
    if os.path.exists("/usr/include/zstd.h"):
        defines.append("FRAMES_HAVE_ZSTD")
        libs.append("zstd")
    if os.path.exists("/usr/include/elfutils/libdw.h") and os.path.exists("/usr/include/libelf.h"):
        defines.append("FRAMES_SYM_LIBDW")
        libs += ["dw", "elf"]
    return defines, libs


def make_ffi():
    defines, libs = optional_flags()
    ffi = cffi.FFI()
    ffi.cdef(CDEF)
    ffi.set_source(
        "frames._native",
        '#include "pyframes.c"\n',
        include_dirs=[ROOT, os.path.join(HERE, "frames")],
        define_macros=[("_GNU_SOURCE", None)] + [(d, None) for d in defines],
        libraries=libs + ["pthread"],
        # FRAMES_PY_CFLAGS: more flags, e.g. -fsanitize=address for a checked build
        extra_compile_args=["-std=c99", "-O2", "-Wno-unused-function"] +
        os.environ.get("FRAMES_PY_CFLAGS", "").split(),
        extra_link_args=os.environ.get("FRAMES_PY_CFLAGS", "").split(),
    )
    return ffi


ffibuilder = make_ffi()


def build_into(outdir):
    """The package with its compiled module in OUTDIR/frames (import with
    PYTHONPATH=OUTDIR)."""
    pkg = os.path.join(outdir, "frames")
    tmp = os.path.join(outdir, "tmp")
    os.makedirs(pkg, exist_ok=True)
    for name in os.listdir(os.path.join(HERE, "frames")):
        if name.endswith(".py"):
            shutil.copy2(os.path.join(HERE, "frames", name), os.path.join(pkg, name))
    so = ffibuilder.compile(tmpdir=tmp, verbose=False)
    target = os.path.join(pkg, os.path.basename(so))
    os.replace(so, target)
    return target


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: frames_build.py OUTDIR")
    print(build_into(sys.argv[1]))
