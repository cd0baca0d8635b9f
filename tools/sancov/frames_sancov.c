/* frames_sancov.c - drop-in tracer for SanitizerCoverage builds (libFuzzer, AFL++, plain
   programs): writes one frames trace per input. Full guide: docs/sancov.md.

   BUILD (compile this file WITHOUT coverage instrumentation; -I points at frames.h):

       clang -O2 -c tools/sancov/frames_sancov.c -o frames_sancov.o
       clang -g -O1 -fsanitize=fuzzer -fsanitize-coverage=trace-pc-guard,trace-cmp \
             harness.c frames_sancov.o -Wl,@tools/sancov/frames_sancov.wrap -o harness
       FRAMES_SANCOV_OUT='traces/in-%n.frames' ./harness in1 in2 in3

   frames_sancov.wrap holds linker --wrap options: the sanitizer hooks are routed to this
   file first, which then tail-calls the fuzzer runtime's own hook (libFuzzer and AFL++
   define the same symbols), so the fuzzer keeps working unchanged; LLVMFuzzerTestOneInput
   is wrapped to delimit inputs. Without a runtime that defines the hooks (a plain
   program), the wrap options are optional: this file then defines them itself (weakly).

   WHAT A TRACE HOLDS (std_frames are in execution order, across threads):
     - modload frames: every loaded object with executable code (name, lowest and highest
       address of its PT_LOAD segments); the main program under its /proc/self/exe path.
     - a taint_intro frame with the input bytes (addr = the input buffer, taint_id 1,
       source_name "input", offset 0), when the input is known (first
       FRAMES_SANCOV_INPUT_BYTES bytes).
     - an edge: std_frame { address = pc, empty operand lists } per executed edge
       (trace-pc-guard) or block (trace-pc).
     - a comparison: std_frame { address = pc, operand_pre_list = its operands } per
       executed comparison (trace-cmp), operands as registers, read = true, bit_length =
       the width compared, value little-endian:
         __sanitizer_cov_trace_cmp{1,2,4,8}(a, b)       -> "cmp.arg1" = a, "cmp.arg2" = b
         __sanitizer_cov_trace_const_cmp{1,2,4,8}(k, v) -> "const_cmp.arg1" = k (the
                                                            compile-time constant),
                                                           "const_cmp.arg2" = v
         __sanitizer_cov_trace_switch(v, cases)         -> "switch.val" = v, then one
                                                           "switch.case" per case value
                                                           (the first 64)
       pc is the return address of the hook call: an address inside the instrumented block
       (resolve it with `addr2line -f -e BINARY` after subtracting the module's base, see
       docs/sancov.md). rawbytes is empty: the tracer does not decode instructions.

   INPUT BOUNDARIES (environment FRAMES_SANCOV_MODE, default chosen automatically):
     input    one trace per call of LLVMFuzzerTestOneInput (needs the wrap options) or
              per frames_sancov_begin_input()/frames_sancov_end_input() pair (see
              frames_sancov.h; e.g. AFL++ __AFL_LOOP). Events outside an input are dropped.
              Default when LLVMFuzzerTestOneInput is wrapped.
     process  one trace per process, from the first event to exit; a forked child starts
              its own trace (AFL++ fork server: one trace per execution). Default
              otherwise. A call of frames_sancov_begin_input switches to input mode.

   ENVIRONMENT
     FRAMES_SANCOV_OUT          output path pattern; tracing is off when unset or empty.
                                %n = trace number in this process (the input's index in
                                input mode, from 0), %p = process id, %% = %. An existing
                                directory (or a pattern ending in /) means DIR/sancov-%p-%n.frames.
                                A name ending in .zst gives a compressed, seekable trace
                                (frames_zstd.h; build this file with -DFRAMES_SANCOV_ZSTD and
                                link -lzstd): the trace is written plain under the name
                                without .zst, then compressed when it is finished and the
                                plain file removed. A crash leaves the finished plain trace
                                (compress it later with `frames compress`).
     FRAMES_SANCOV_ZSTD_LEVEL   zstd level for .zst names (default 3)
     FRAMES_SANCOV_MODE         input | process
     FRAMES_SANCOV_MAX_FRAMES   std_frames per trace (default 10000000); later events of
                                that trace are dropped and counted on stderr
     FRAMES_SANCOV_INPUT_BYTES  input bytes kept in the taint_intro frame (default 65536,
                                0 for no such frame)

   CRASHES: on SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP and AddressSanitizer
   reports (__asan_on_error; define FRAMES_SANCOV_NO_ASAN_HOOK to leave that hook alone)
   the open trace is finished first, then the previous handler runs (libFuzzer's crash
   report and artifact still happen). A process killed outright (SIGKILL on a timeout)
   leaves an unfinished trace holding every frame written before the last 1 MiB buffer
   flush; `frames fix` finishes it.

   IMPLEMENTATION NOTES: no allocation after start-up (frames.h's writer over static
   buffers and a write()/pwrite() sink), except libzstd's when a finished trace is
   compressed (outside signal handlers); a spin lock serialises threads; a thread-local
   flag drops events raised from inside the tracer itself (signal handlers, or this file
   compiled with instrumentation by mistake: clang gets no_sanitize("coverage") on every
   function here anyway). Linux and glibc (constructor arguments, dl_iterate_phdr). */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#if defined(__clang__)
#pragma clang attribute push(__attribute__((no_sanitize("coverage"))), apply_to = function)
#endif

#define FRAMES_STATIC
#define FRAMES_NO_TEXT
#define FRAMES_IMPLEMENTATION
#ifdef FRAMES_SANCOV_ZSTD
#define FRAMES_ZSTD_IMPLEMENTATION
#define FRAMES_ZSTD_NO_THREADS   /* compressed at trace close, on the thread that closes */
#endif
#if defined(__has_include)
#if !__has_include("frames.h")
#define FS_IN_SOURCE_TREE        /* compiled in place without -I: the headers are at ../.. */
#endif
#endif
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#endif
#ifdef FS_IN_SOURCE_TREE
#include "../../frames.h"
#else
#include "frames.h"
#endif
#ifdef FRAMES_SANCOV_ZSTD
#ifdef FS_IN_SOURCE_TREE
#include "../../frames_zstd.h"
#else
#include "frames_zstd.h"
#endif
#endif
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

#include "frames_sancov.h"

#define FS_BUFFER_SIZE (1u << 20)
#define FS_TOC_CAPACITY (1u << 16)     /* TOC entries: 655 million frames at m = 10000 */
#define FS_MAX_CASES 64u
#define FS_MAX_ARGS 64u
#define FS_NSIGNALS 6

enum { FS_MODE_INPUT = 1, FS_MODE_PROCESS = 2 };

static const int fs_signals[FS_NSIGNALS] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP};

static struct fs_state {
    int enabled;            /* FRAMES_SANCOV_OUT set */
    int mode;
    int recording;          /* events are written now (read without the lock) */
    int in_window;          /* input mode: between begin and end */
    int open;               /* a trace is being written */
    int attempted;          /* process mode: the trace was tried (do not retry a failure) */
    int dead;               /* after exit or a crash: record nothing more */
    int fd;
    uint64_t seq;           /* number of the next trace */
    uint64_t frames, max_frames, dropped_frames, events;
    uint64_t guards;        /* trace-pc-guard guards registered through this file */
    uint32_t next_guard;
    size_t input_bytes;
    unsigned warnings;
    unsigned char lock;
    frames_writer w;
    char pattern[PATH_MAX];
    char path[PATH_MAX];    /* the trace being written (plain) */
    char zpath[PATH_MAX];   /* compressed name it gets when finished; "" = stays plain */
    char part[PATH_MAX + 32]; /* the file written, renamed to path when finished; "" when
                               path is written directly (a device, a FIFO) */
    int zstd_level;
    char exe[PATH_MAX];
    char host[256], user[256];
    frames_bytes args[FS_MAX_ARGS];
    uint32_t nargs;
    struct stat exe_stat;
    int have_exe_stat;
    struct sigaction old[FS_NSIGNALS];
    int installed[FS_NSIGNALS];
    frames_operand ops[2 + FS_MAX_CASES];
    uint8_t vals[2 + FS_MAX_CASES][8];
    uint8_t buffer[FS_BUFFER_SIZE];
    uint64_t toc[FS_TOC_CAPACITY];
} fs;

static __thread int fs_busy;        /* this thread is inside the tracer */
static __thread uint64_t fs_tid;

/* ------------------------------------------------------------------ small helpers */

static void fs_write_stderr(const char *s) {
    size_t n = strlen(s);
    while (n > 0) {
        ssize_t w = write(2, s, n);
        if (w <= 0) return;
        s += w;
        n -= (size_t)w;
    }
}

/* Warnings go to stderr, a few per process (a fuzzer may run millions of inputs). */
static void fs_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fs_warn(const char *fmt, ...) {
    char msg[PATH_MAX + 256];
    va_list ap;
    int n;
    if (fs.warnings++ >= 8) return;
    n = snprintf(msg, sizeof msg, "frames_sancov: ");
    va_start(ap, fmt);
    vsnprintf(msg + n, sizeof msg - (size_t)n, fmt, ap);
    va_end(ap);
    fs_write_stderr(msg);
    fs_write_stderr("\n");
}

static uint64_t fs_thread_id(void) {
    if (!fs_tid) fs_tid = (uint64_t)syscall(SYS_gettid);
    return fs_tid;
}

static void fs_update_recording(void) {
    int r = fs.enabled && !fs.dead &&
            (fs.mode == FS_MODE_PROCESS ? (fs.open || !fs.attempted) : (fs.in_window && fs.open));
    __atomic_store_n(&fs.recording, r, __ATOMIC_RELAXED);
}

static int fs_lock_bounded(long spins) {
    while (__atomic_test_and_set(&fs.lock, __ATOMIC_ACQUIRE)) {
        if (spins >= 0 && spins-- == 0) return 0;
        sched_yield();
    }
    return 1;
}

static void fs_unlock(void) { __atomic_clear(&fs.lock, __ATOMIC_RELEASE); }

/* Enter the tracer from a callback: no reentry from this thread, one thread at a time. */
static int fs_enter(void) {
    if (fs_busy) return 0;
    fs_busy = 1;
    fs_lock_bounded(-1);
    return 1;
}

static void fs_leave(void) {
    fs_unlock();
    fs_busy = 0;
}

/* ------------------------------------------------------------------ opening a trace */

static int fs_is_directory(const char *p) {
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Expand the pattern for trace number n into fs.path. */
static int fs_format_path(uint64_t n) {
    char tmp[PATH_MAX];
    const char *src = fs.pattern;
    size_t len = strlen(src), o = 0;
    if (len && (src[len - 1] == '/' || fs_is_directory(src))) {
        snprintf(tmp, sizeof tmp, "%s%ssancov-%%p-%%n.frames", src, src[len - 1] == '/' ? "" : "/");
        src = tmp;
    }
    for (; *src && o + 1 < sizeof fs.path; src++) {
        int w = 0;
        if (src[0] == '%' && src[1] == 'n') {
            w = snprintf(fs.path + o, sizeof fs.path - o, "%llu", (unsigned long long)n);
            src++;
        } else if (src[0] == '%' && src[1] == 'p') {
            w = snprintf(fs.path + o, sizeof fs.path - o, "%ld", (long)getpid());
            src++;
        } else if (src[0] == '%' && src[1] == '%') {
            fs.path[o] = '%';
            w = 1;
            src++;
        } else {
            fs.path[o] = *src;
            w = 1;
        }
        if (w < 0 || o + (size_t)w >= sizeof fs.path) return -1;
        o += (size_t)w;
    }
    if (*src) return -1;
    fs.path[o] = 0;
    return 0;
}

static int fs_add(const frames_frame *f) {
    if (frames_writer_add(&fs.w, f) == FRAMES_OK) return 0;
    fs_warn("%s: %s", fs.path, frames_writer_error(&fs.w)->message);
    return -1;
}

/* One modload frame per loaded object that has executable code. */
static int fs_module(struct dl_phdr_info *info, size_t size, void *ctx) {
    uint64_t lo = UINT64_MAX, hi = 0;
    int exec = 0, i, first = (*(int *)ctx)++ == 0;
    frames_frame f;
    const char *name = info->dlpi_name;
    (void)size;
    for (i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || ph->p_memsz == 0) continue;
        if (ph->p_vaddr < lo) lo = ph->p_vaddr;
        if (ph->p_vaddr + ph->p_memsz > hi) hi = ph->p_vaddr + ph->p_memsz;
        exec |= (ph->p_flags & PF_X) != 0;
    }
    if (!name || !name[0]) name = first ? fs.exe : "";   /* the first one is the program */
    if (!exec || !name[0]) return 0;
    memset(&f, 0, sizeof f);
    f.kind = FRAMES_KIND_MODLOAD;
    f.modload.module_name = frames_str(name);
    f.modload.low_address = info->dlpi_addr + lo;
    f.modload.high_address = info->dlpi_addr + hi - 1;   /* inclusive, as pintraces */
    return fs_add(&f) < 0 ? 1 : 0;
}

static void fs_meta(frames_meta *m) {
    static const uint8_t no_md5[1] = {0};
    struct timespec now;
    memset(m, 0, sizeof *m);
    m->tracer_name = frames_str("frames-sancov");
    m->tracer_version = frames_str(FRAMES_LIB_VERSION);
    m->target_path = frames_str(fs.exe);
    m->target_args = fs.args;
    m->ntarget_args = fs.nargs;
    m->target_md5sum = frames_bytes_of(no_md5, 0);   /* not computed */
    m->user = frames_str(fs.user);
    m->host = frames_str(fs.host);
    if (fs.have_exe_stat) {
        m->fstats_size = (int32_t)(uint32_t)fs.exe_stat.st_size;   /* wraps like upstream */
        m->fstats_atime = (double)fs.exe_stat.st_atime;
        m->fstats_mtime = (double)fs.exe_stat.st_mtime;
        m->fstats_ctime = (double)fs.exe_stat.st_ctime;
    }
    clock_gettime(CLOCK_REALTIME, &now);
    m->time = (double)now.tv_sec + (double)now.tv_nsec / 1e9;
}

static void fs_install_signals(void);
static void fs_split_zst(void);

/* The output rule of the frames tools (docs/outputs.md), as far as a tracer inside a
   harness can follow it: a trace is written to PATH.PID.part and renamed to PATH once
   finished (rename is async-signal-safe: also from the crash handler), so that PATH is
   never half written and the trace it held (an earlier input's, without %n) stays until
   the new one is complete; a PATH that exists and is not a regular file (/dev/null, a
   FIFO) is written directly. Returns the descriptor (part[0] = 0 when direct). */
static int fs_create(const char *path, char *part, size_t cap) {
    struct stat st;
    part[0] = 0;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
        return open(path, O_WRONLY | O_CLOEXEC);
    if (snprintf(part, cap, "%s.%ld.part", path, (long)getpid()) >= (int)cap) {
        errno = ENAMETOOLONG;
        return -1;
    }
    return open(part, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
}

/* Put a finished part file in place (async-signal-safe). 0, or -1 with errno. */
static int fs_commit(const char *part, const char *path) {
    return part[0] ? rename(part, path) : 0;
}

static void fs_open_trace(const void *data, size_t size) {
    frames_writer_options o;
    frames_meta meta;
    frames_error err;
    frames_sink sink;
    int first = 0;
    uint64_t n = fs.seq++;
    fs.attempted = 1;
    if (fs_format_path(n) < 0) {
        fs_warn("output path too long for pattern %s", fs.pattern);
        return;
    }
    fs_split_zst();
    if ((fs.fd = fs_create(fs.path, fs.part, sizeof fs.part)) < 0) {
        fs_warn("cannot create %s: %s", fs.part[0] ? fs.part : fs.path, strerror(errno));
        return;
    }
    frames_writer_options_default(&o);
#if defined(__aarch64__)
    o.arch = FRAMES_ARCH_AARCH64;
    o.machine = 0;
#elif defined(__x86_64__)
    o.machine = FRAMES_MACH_X86_64;
#endif
    o.buffer = fs.buffer;
    o.buffer_size = sizeof fs.buffer;
    o.toc_storage = fs.toc;
    o.toc_capacity = FS_TOC_CAPACITY;
    o.encode_flags = FRAMES_ENC_LENIENT;   /* frames built here are valid: skip the check */
    sink = frames_sink_fd(fs.fd);
    fs_meta(&meta);
    if (frames_writer_init(&fs.w, &sink, &o, &meta, &err) < 0) {
        fs_warn("%s: %s", fs.path, err.message);
        close(fs.fd);
        if (fs.part[0]) unlink(fs.part);
        return;
    }
    fs.open = 1;
    fs.frames = fs.dropped_frames = fs.events = 0;
    dl_iterate_phdr(fs_module, &first);
    if (data && fs.input_bytes) {
        frames_taint_intro ti;
        frames_frame f;
        memset(&ti, 0, sizeof ti);
        ti.addr = (uint64_t)(uintptr_t)data;
        ti.taint_id = 1;
        ti.value = frames_bytes_of(data, size < fs.input_bytes ? size : fs.input_bytes);
        ti.has_value = 1;
        ti.source_name = frames_str("input");
        ti.has_source_name = 1;
        ti.has_offset = 1;
        memset(&f, 0, sizeof f);
        f.kind = FRAMES_KIND_TAINT_INTRO;
        f.taint_intro.intros = &ti;
        f.taint_intro.count = 1;
        fs_add(&f);
    }
    fs_install_signals();
}

/* A .zst name: write plain under the name without .zst, compress when finished. */
static void fs_split_zst(void) {
    size_t len = strlen(fs.path);
    fs.zpath[0] = 0;
    if (len <= 4 || strcmp(fs.path + len - 4, ".zst")) return;
#ifdef FRAMES_SANCOV_ZSTD
    memcpy(fs.zpath, fs.path, len + 1);
#else
    if (fs.seq == 1)
        fs_warn("%s: this tracer was built without -DFRAMES_SANCOV_ZSTD: writing plain traces "
                "without the .zst suffix", fs.path);
#endif
    fs.path[len - 4] = 0;
}

/* Compress the finished plain trace at fs.path into fs.zpath, then remove the plain one
   (kept when anything fails). Allocates: never called from a signal handler. */
static void fs_compress_finished(void) {
#ifdef FRAMES_SANCOV_ZSTD
    frames_zstd_options zo;
    frames_zstd_sink *zs;
    frames_sink down;
    frames_error err;
    char zpart[sizeof fs.part];
    int in = open(fs.path, O_RDONLY | O_CLOEXEC), out, rc;
    if (in < 0) return;
    if ((out = fs_create(fs.zpath, zpart, sizeof zpart)) < 0) {
        fs_warn("cannot create %s: %s; the trace stays plain in %s", zpart[0] ? zpart : fs.zpath,
                strerror(errno), fs.path);
        close(in);
        return;
    }
    frames_zstd_options_default(&zo);
    zo.threads = 1;
    if (fs.zstd_level) zo.level = fs.zstd_level;
    down = frames_sink_fd(out);
    rc = frames_zstd_sink_open(&zs, &down, &zo, &err);
    if (rc == FRAMES_OK) {
        rc = frames_zstd_compress_fd(in, zs, &err);
        if (frames_zstd_sink_close(zs, rc < 0 ? NULL : &err) < 0 && rc == FRAMES_OK) rc = err.code;
    }
    close(in);
    if (close(out) != 0 && rc == FRAMES_OK) {
        rc = FRAMES_E_IO;
        snprintf(err.message, sizeof err.message, "%s", strerror(errno));
    }
    if (rc == FRAMES_OK && fs_commit(zpart, fs.zpath) != 0) {
        rc = FRAMES_E_IO;
        snprintf(err.message, sizeof err.message, "cannot rename its part file: %s", strerror(errno));
    }
    if (rc < 0) {
        fs_warn("%s: %s; the trace stays plain in %s", fs.zpath, err.message, fs.path);
        if (zpart[0]) unlink(zpart);
    } else {
        unlink(fs.path);
    }
#endif
}

/* Finish the open trace. In a signal handler only async-signal-safe calls happen here
   (frames.h's writer over caller buffers and an fd sink). */
static void fs_close_trace(int from_signal) {
    int rc;
    if (!fs.open) return;
    fs.open = 0;
    rc = frames_writer_finish(&fs.w);
    if (rc < 0 && !from_signal) fs_warn("%s: %s", fs.path, frames_writer_error(&fs.w)->message);
    if (close(fs.fd) != 0 && rc >= 0) rc = FRAMES_E_IO;
    fs.fd = -1;
    /* from the crash handler, what could be finished is the only trace of the crash: it
       goes in place; otherwise a failed trace (a full disk) leaves the earlier file */
    if (rc >= 0 || from_signal) {
        if (fs_commit(fs.part, fs.path) != 0 && !from_signal) {
            fs_warn("cannot rename %s to %s: %s", fs.part, fs.path, strerror(errno));
            return;
        }
    } else if (fs.part[0]) {
        fs_warn("%s: not replaced (the new trace failed)", fs.path);
        unlink(fs.part);
        return;
    }
    if (from_signal) return;
    if (fs.zpath[0] && rc >= 0) fs_compress_finished();
    if (fs.dropped_frames)
        fs_warn("%s: %llu events dropped beyond FRAMES_SANCOV_MAX_FRAMES=%llu", fs.path,
                (unsigned long long)fs.dropped_frames, (unsigned long long)fs.max_frames);
    if (fs.events == 0)
        fs_warn("%s: no coverage event reached the tracer (guards registered: %llu); compile "
                "with -fsanitize-coverage=trace-pc-guard,trace-cmp and link with "
                "-Wl,@frames_sancov.wrap (docs/sancov.md)",
                fs.path, (unsigned long long)fs.guards);
}

/* Ready to write an event (lock held)? Opens the trace of process mode lazily. */
static int fs_ready(void) {
    if (fs.dead) return 0;
    if (!fs.open && fs.mode == FS_MODE_PROCESS && !fs.attempted) {
        fs_open_trace(NULL, 0);
        fs_update_recording();
    }
    if (!fs.open) return 0;
    fs.events++;
    if (fs.frames >= fs.max_frames) {
        fs.dropped_frames++;
        return 0;
    }
    return 1;
}

/* ------------------------------------------------------------------ events */

static void fs_write_std(uint64_t pc, uint32_t nops) {
    frames_frame f;
    memset(&f, 0, sizeof f);
    f.kind = FRAMES_KIND_STD;
    f.std.address = pc;
    f.std.thread_id = fs_thread_id();
    f.std.rawbytes = frames_bytes_of(fs.vals, 0);
    f.std.pre = fs.ops;
    f.std.npre = nops;
    if (fs_add(&f) < 0) {   /* the sink failed: keep what was written, stop this trace */
        frames_writer_abandon(&fs.w);
        close(fs.fd);
        fs.open = 0;
        fs_update_recording();
        return;
    }
    fs.frames++;
}

static void fs_set_operand(uint32_t i, const char *name, size_t namelen, uint64_t v,
                           unsigned bytes) {
    frames_operand *op = &fs.ops[i];
    unsigned k;
    memset(op, 0, sizeof *op);
    op->spec = FRAMES_REG;
    op->name = frames_bytes_of(name, namelen);
    op->read = 1;
    op->bit_length = (int32_t)(8 * bytes);
    for (k = 0; k < bytes; k++) fs.vals[i][k] = (uint8_t)(v >> (8 * k));
    op->value = frames_bytes_of(fs.vals[i], bytes);
}

#define FS_NAME(s) s, sizeof(s) - 1

static void fs_edge(uint64_t pc) {
    if (!fs_enter()) return;
    if (fs_ready()) fs_write_std(pc, 0);
    fs_leave();
}

static void fs_cmp(uint64_t pc, int is_const, uint64_t a, uint64_t b, unsigned bytes) {
    if (!fs_enter()) return;
    if (fs_ready()) {
        if (is_const) {
            fs_set_operand(0, FS_NAME("const_cmp.arg1"), a, bytes);
            fs_set_operand(1, FS_NAME("const_cmp.arg2"), b, bytes);
        } else {
            fs_set_operand(0, FS_NAME("cmp.arg1"), a, bytes);
            fs_set_operand(1, FS_NAME("cmp.arg2"), b, bytes);
        }
        fs_write_std(pc, 2);
    }
    fs_leave();
}

/* cases[0] = number of cases, cases[1] = width of val in bits, cases[2..] = case values */
static void fs_switch(uint64_t pc, uint64_t val, const uint64_t *cases) {
    uint64_t n, i;
    unsigned bytes;
    if (!fs_enter()) return;
    if (fs_ready()) {
        n = cases[0] < FS_MAX_CASES ? cases[0] : FS_MAX_CASES;
        bytes = (unsigned)((cases[1] + 7) / 8);
        if (bytes == 0 || bytes > 8) bytes = 8;
        fs_set_operand(0, FS_NAME("switch.val"), val, bytes);
        for (i = 0; i < n; i++) fs_set_operand((uint32_t)(1 + i), FS_NAME("switch.case"), cases[2 + i], bytes);
        fs_write_std(pc, (uint32_t)(1 + n));
    }
    fs_leave();
}

#define FS_RECORDING() __atomic_load_n(&fs.recording, __ATOMIC_RELAXED)
#define FS_PC() ((uint64_t)(uintptr_t)__builtin_return_address(0))

/* ------------------------------------------------------------------ the hooks */

/* Tail-call the runtime's hook so that it sees the instrumented code as its caller (libFuzzer
   keys its value profile on the caller's pc). */
#if defined(__clang__) && defined(__has_attribute)
#if __has_attribute(musttail)
#define FS_MUSTTAIL __attribute__((musttail))
#endif
#endif
#ifndef FS_MUSTTAIL
#define FS_MUSTTAIL
#endif
#if defined(__clang__)
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wpedantic"   /* return of a void call, for musttail */
#endif

#if defined(__clang__)
#define FS_TAIL_CALL(call) FS_MUSTTAIL return call
#else
#define FS_TAIL_CALL(call) do { call; return; } while (0)
#endif
#define FS_CHAIN(self, args, when)                                                          \
    do {                                                                                    \
        if ((when) && __real_##self && __real_##self != __wrap_##self)                      \
            FS_TAIL_CALL(__real_##self args);                                               \
    } while (0)

/* libFuzzer (which defines fuzzer::TPC next to its hooks) does not support trace-pc and
   trace-pc-guard any more: its hooks print an error and exit. Its coverage comes from the
   inline 8-bit counters that -fsanitize=fuzzer adds, so the pc hooks stay here. Other
   runtimes (AFL++) need their pc hooks: their coverage map is updated there. */
extern char fs_libfuzzer_tpc __asm__("_ZN6fuzzer3TPCE") __attribute__((weak));
#define FS_CHAIN_PC (&fs_libfuzzer_tpc == NULL)

/* hook(self, params, args, record): declares __wrap_self, its weak alias self (used when
   nothing else defines the hook) and the weak __real_self the linker's --wrap resolves to
   the runtime's definition. */
#define FS_HOOK(self, params, args, record, chain_when)                                     \
    void __wrap_##self params;                                                              \
    void self params __attribute__((weak, alias("__wrap_" #self)));                         \
    extern void __real_##self params __attribute__((weak));                                 \
    void __wrap_##self params {                                                             \
        if (FS_RECORDING()) { record; }                                                     \
        FS_CHAIN(self, args, chain_when);                                                   \
    }

#define FS_CMP_HOOK(name, is_const, type, bytes)                                            \
    FS_HOOK(name, (type a, type b), (a, b), fs_cmp(FS_PC(), is_const, a, b, bytes), 1)

FS_HOOK(__sanitizer_cov_trace_pc_guard, (uint32_t *guard), (guard), fs_edge(FS_PC()), FS_CHAIN_PC)
FS_HOOK(__sanitizer_cov_trace_pc, (void), (), fs_edge(FS_PC()), FS_CHAIN_PC)
FS_CMP_HOOK(__sanitizer_cov_trace_cmp1, 0, uint8_t, 1)
FS_CMP_HOOK(__sanitizer_cov_trace_cmp2, 0, uint16_t, 2)
FS_CMP_HOOK(__sanitizer_cov_trace_cmp4, 0, uint32_t, 4)
FS_CMP_HOOK(__sanitizer_cov_trace_cmp8, 0, uint64_t, 8)
FS_CMP_HOOK(__sanitizer_cov_trace_const_cmp1, 1, uint8_t, 1)
FS_CMP_HOOK(__sanitizer_cov_trace_const_cmp2, 1, uint16_t, 2)
FS_CMP_HOOK(__sanitizer_cov_trace_const_cmp4, 1, uint32_t, 4)
FS_CMP_HOOK(__sanitizer_cov_trace_const_cmp8, 1, uint64_t, 8)
FS_HOOK(__sanitizer_cov_trace_switch, (uint64_t val, uint64_t *cases), (val, cases),
        fs_switch(FS_PC(), val, cases), 1)

/* Guards: the runtime numbers them when there is one; otherwise number them here (the
   SanitizerCoverage convention: nonzero, set once). */
void __wrap___sanitizer_cov_trace_pc_guard_init(uint32_t *start, uint32_t *stop);
void __sanitizer_cov_trace_pc_guard_init(uint32_t *start, uint32_t *stop)
    __attribute__((weak, alias("__wrap___sanitizer_cov_trace_pc_guard_init")));
extern void __real___sanitizer_cov_trace_pc_guard_init(uint32_t *start, uint32_t *stop)
    __attribute__((weak));
void __wrap___sanitizer_cov_trace_pc_guard_init(uint32_t *start, uint32_t *stop) {
    uint32_t *g;
    if (start < stop) fs.guards += (uint64_t)(stop - start);
    FS_CHAIN(__sanitizer_cov_trace_pc_guard_init, (start, stop), FS_CHAIN_PC);
    if (start == stop || *start) return;
    for (g = start; g < stop; g++) *g = ++fs.next_guard;
}

#if defined(__clang__)
#pragma clang diagnostic pop
#endif

/* ------------------------------------------------------------------ input boundaries */

void frames_sancov_begin_input(const void *data, size_t size) {
    if (!fs.enabled || !fs_enter()) return;
    if (!fs.dead) {
        if (fs.open) fs_close_trace(0);
        fs.mode = FS_MODE_INPUT;
        fs.in_window = 1;
        fs_open_trace(data, size);
    }
    fs_update_recording();
    fs_leave();
}

void frames_sancov_end_input(void) {
    if (!fs.enabled || !fs_enter()) return;
    if (fs.mode == FS_MODE_INPUT) {
        fs_close_trace(0);
        fs.in_window = 0;
    }
    fs_update_recording();
    fs_leave();
}

extern int __real_LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) __attribute__((weak));
int __wrap_LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int __wrap_LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    int rc;
    if (!__real_LLVMFuzzerTestOneInput) return 0;
    frames_sancov_begin_input(data, size);
    rc = __real_LLVMFuzzerTestOneInput(data, size);
    frames_sancov_end_input();
    return rc;
}

/* ------------------------------------------------------------------ crashes, fork, exit */

/* Finish the open trace from a crash path; never blocks for long, never reenters. */
static void fs_emergency_finish(void) {
    if (!fs.enabled || fs_busy) return;
    fs_busy = 1;
    if (fs_lock_bounded(100000)) {
        fs_close_trace(1);
        fs.dead = 1;
        fs_update_recording();
        fs_unlock();
    }
    fs_busy = 0;
}

static int fs_signal_index(int sig) {
    int i;
    for (i = 0; i < FS_NSIGNALS; i++)
        if (fs_signals[i] == sig) return i;
    return -1;
}

static void fs_on_signal(int sig, siginfo_t *info, void *uc) {
    int i = fs_signal_index(sig);
    struct sigaction *old;
    fs_emergency_finish();
    if (i < 0) return;
    old = &fs.old[i];
    if (old->sa_flags & SA_SIGINFO) {
        if (old->sa_sigaction) {
            old->sa_sigaction(sig, info, uc);
            return;
        }
    } else if (old->sa_handler != SIG_DFL && old->sa_handler != SIG_IGN) {
        old->sa_handler(sig);
        return;
    }
    /* default action (or ignore): put it back; the signal, blocked here, is delivered
       again when the handler returns (or the faulting instruction runs again) */
    sigaction(sig, old, NULL);
    if (old->sa_handler == SIG_DFL) raise(sig);
}

/* Install the crash handlers in front of whatever is there now (libFuzzer installs its
   own after start-up, so this runs again whenever a trace is opened). */
static void fs_install_signals(void) {
    int i;
    for (i = 0; i < FS_NSIGNALS; i++) {
        struct sigaction cur, sa;
        if (sigaction(fs_signals[i], NULL, &cur) < 0) continue;
        if ((cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == fs_on_signal) continue;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = fs_on_signal;
        sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
        sigemptyset(&sa.sa_mask);
        if (sigaction(fs_signals[i], &sa, NULL) == 0) {
            fs.old[i] = cur;
            fs.installed[i] = 1;
        }
    }
}

#if !defined(FRAMES_SANCOV_NO_ASAN_HOOK)
/* AddressSanitizer calls this when it starts a report (a strong definition overrides
   its empty default). */
void __asan_on_error(void);
void __asan_on_error(void) { fs_emergency_finish(); }
#endif

/* fork: the parent hands its buffered frames to the file first so that the child's copy
   of the buffer is never written; the child starts its own traces. */
static void fs_before_fork(void) {
    fs_busy = 1;
    fs_lock_bounded(-1);
    if (fs.open) frames_writer_flush(&fs.w);
}

static void fs_after_fork_parent(void) {
    fs_unlock();
    fs_busy = 0;
}

static void fs_after_fork_child(void) {
    if (fs.open) {
        close(fs.fd);   /* the parent keeps writing its trace */
        fs.open = 0;
    }
    fs.seq = 0;
    fs.attempted = 0;
    fs.in_window = 0;
    fs_tid = 0;
    fs_update_recording();
    fs_unlock();
    fs_busy = 0;
}

static uint64_t fs_env_u64(const char *name, uint64_t def, uint64_t max) {
    const char *s = getenv(name);
    char *end;
    unsigned long long v;
    if (!s || !*s) return def;
    errno = 0;
    v = strtoull(s, &end, 0);
    if (errno || *end || s[0] == '-') {
        fs_warn("%s=%s is not a number; using %llu", name, s, (unsigned long long)def);
        return def;
    }
    return v > max ? max : v;
}

/* glibc passes argc/argv to constructors; priority 101 runs before the program's own. */
__attribute__((constructor(101))) static void fs_init(int argc, char **argv, char **envp) {
    const char *out = getenv("FRAMES_SANCOV_OUT"), *mode = getenv("FRAMES_SANCOV_MODE");
    ssize_t n;
    int i;
    (void)envp;
    if (!out || !*out) return;
    if (strlen(out) >= sizeof fs.pattern) {
        fs_warn("FRAMES_SANCOV_OUT is too long; tracing is off");
        return;
    }
    strcpy(fs.pattern, out);
    n = readlink("/proc/self/exe", fs.exe, sizeof fs.exe - 1);
    if (n < 0) n = 0;
    fs.exe[n] = 0;
    fs.have_exe_stat = n > 0 && stat(fs.exe, &fs.exe_stat) == 0;
    if (gethostname(fs.host, sizeof fs.host - 1) < 0) fs.host[0] = 0;
    if (getenv("USER")) snprintf(fs.user, sizeof fs.user, "%s", getenv("USER"));
    for (i = 0; argv && i < argc && fs.nargs < FS_MAX_ARGS; i++) fs.args[fs.nargs++] = frames_str(argv[i]);
    fs.max_frames = fs_env_u64("FRAMES_SANCOV_MAX_FRAMES", 10000000u,
                               (uint64_t)(FS_TOC_CAPACITY - 1) * FRAMES_DEFAULT_FRAMES_PER_TOC - 10000);
    fs.input_bytes = (size_t)fs_env_u64("FRAMES_SANCOV_INPUT_BYTES", 65536, FS_BUFFER_SIZE / 2);
    fs.zstd_level = (int)fs_env_u64("FRAMES_SANCOV_ZSTD_LEVEL", 0, 22);
    if (mode && !strcmp(mode, "input")) {
        fs.mode = FS_MODE_INPUT;
    } else if (mode && !strcmp(mode, "process")) {
        fs.mode = FS_MODE_PROCESS;
    } else {
        if (mode && *mode) fs_warn("FRAMES_SANCOV_MODE=%s is neither input nor process", mode);
        fs.mode = __real_LLVMFuzzerTestOneInput ? FS_MODE_INPUT : FS_MODE_PROCESS;
    }
    fs.fd = -1;
    pthread_atfork(fs_before_fork, fs_after_fork_parent, fs_after_fork_child);
    fs.enabled = 1;
    fs_update_recording();
}

__attribute__((destructor)) static void fs_fini(void) {
    if (!fs.enabled || !fs_enter()) return;
    fs_close_trace(0);
    fs.dead = 1;
    fs_update_recording();
    fs_leave();
}

#if defined(__clang__)
#pragma clang attribute pop
#endif
