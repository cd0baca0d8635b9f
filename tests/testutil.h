/* testutil.h - helpers shared by the cmocka suites (header-only, static functions).
   Paths: FRAMES_SHARED (set by build.sh) is the reference material directory
   (../shared from the repository root); FRAMES_BIN is the built `frames` command.
   Without them, both are found from where the test program is (build/tests/test_X or
   build/asan/tests/test_X), never from the current directory: a suite gives the same
   result whatever directory it is started from. */
#ifndef FRAMES_TESTUTIL_H
#define FRAMES_TESTUTIL_H

#ifndef TU_FN /* helpers a suite does not use must not warn */
#if defined(__GNUC__)
#define TU_FN static __attribute__((unused))
#else
#define TU_FN static
#endif
#endif

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <setjmp.h>
#include <cmocka.h>

#include "frames.h"

/* p made absolute (from the current directory) into buf: tests cd elsewhere in commands. */
TU_FN const char *tu_abs(const char *p, char *buf, size_t cap) {
    char cwd[2048];
    if (p[0] == '/' || !getcwd(cwd, sizeof cwd)) snprintf(buf, cap, "%s", p);
    else snprintf(buf, cap, "%s/%s", cwd, p);
    return buf;
}

/* The directory of this test program (from /proc/self/exe; the current directory where
   that is missing). */
TU_FN const char *tu_exe_dir(void) {
    static char dir[4096];
    if (!dir[0]) {
        ssize_t n = readlink("/proc/self/exe", dir, sizeof dir - 1);
        char *slash;
        dir[n > 0 ? n : 0] = 0;
        slash = strrchr(dir, '/');
        if (n <= 0 || !slash) tu_abs(".", dir, sizeof dir);
        else *slash = 0;
    }
    return dir;
}

/* The repository root: the nearest directory above the test program holding frames.h and
   build.sh (FRAMES_ROOT overrides); the current directory when none is found. */
TU_FN const char *tu_root(void) {
    static char root[4096];
    const char *e = getenv("FRAMES_ROOT");
    if (e && *e) return tu_abs(e, root, sizeof root);
    if (!root[0]) {
        char probe[4200];
        int up;
        snprintf(root, sizeof root, "%s", tu_exe_dir());
        for (up = 0; up < 4; up++) {
            char *slash;
            snprintf(probe, sizeof probe, "%s/frames.h", root);
            if (access(probe, R_OK) == 0) {
                snprintf(probe, sizeof probe, "%s/build.sh", root);
                if (access(probe, R_OK) == 0) return root;
            }
            slash = strrchr(root, '/');
            if (!slash || slash == root) break;
            *slash = 0;
        }
        tu_abs(".", root, sizeof root);
    }
    return root;
}

/* Path of a file of the repository, e.g. tu_src("tests/frames.proto"). Returns a static
   buffer (one of 8 rotating). */
TU_FN const char *tu_src(const char *rel) {
    static char bufs[8][4200];
    static int next;
    char *b = bufs[next++ & 7];
    snprintf(b, sizeof bufs[0], "%s/%s", tu_root(), rel);
    return b;
}

/* Path of a file under the shared directory, e.g. tu_shared("vectors/frames/r01.frames").
   Returns a static buffer (one of 8 rotating). */
TU_FN const char *tu_shared(const char *rel) {
    static char bufs[8][8400];
    static int next;
    const char *base = getenv("FRAMES_SHARED");
    char *b = bufs[next++ & 7], abs[4096];
    if (base && *base) snprintf(b, sizeof bufs[0], "%s/%s", tu_abs(base, abs, sizeof abs), rel);
    else snprintf(b, sizeof bufs[0], "%s/../shared/%s", tu_root(), rel);
    return b;
}

/* The frames command: FRAMES_BIN, else the one built beside this test program
   (build/tests/../frames, build/asan/tests/../frames). */
TU_FN const char *tu_frames_bin(void) {
    static char bin[4200];
    const char *b = getenv("FRAMES_BIN");
    if (b && *b) return tu_abs(b, bin, sizeof bin);
    if (!bin[0]) {
        snprintf(bin, sizeof bin, "%s/../frames", tu_exe_dir());
        if (access(bin, X_OK) != 0) snprintf(bin, sizeof bin, "%s/build/frames", tu_root());
    }
    return bin;
}

/* A file built beside the frames command (rel "vg/frames-amd64-linux",
   "qemu/frames_qemu.so"), or with rel "" the command's directory: one of 4 rotating
   buffers (copy what must last). */
TU_FN const char *tu_beside_frames(const char *rel) {
    static char bufs[4][4400];
    static int next;
    char *b = bufs[next++ & 3];
    const char *bin = tu_frames_bin(), *slash = strrchr(bin, '/');
    snprintf(b, sizeof bufs[0], "%.*s%s%s", slash ? (int)(slash - bin) : 1, slash ? bin : ".",
             *rel ? "/" : "", rel);
    return b;
}

/* The directory for temporary files: $TMPDIR when it names a writable directory, else
   /tmp (an empty or stale TMPDIR must not send files to "/" or fail the suite). */
TU_FN const char *tu_tmpdir(void) {
    const char *dir = getenv("TMPDIR");
    if (dir && *dir && access(dir, W_OK | X_OK) == 0) return dir;
    return "/tmp";
}

/* Whole file into a malloc'd buffer (NUL-terminated for convenience); NULL if missing. */
TU_FN unsigned char *tu_read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    unsigned char *buf = NULL;
    size_t cap = 0, n = 0, got;
    if (!f) return NULL;
    for (;;) {
        if (n + 65536 + 1 > cap) {
            cap = (n + 65536 + 1) * 2;
            buf = (unsigned char *)realloc(buf, cap);
            if (!buf) { fclose(f); return NULL; }
        }
        got = fread(buf + n, 1, 65536, f);
        n += got;
        if (got == 0) break;
    }
    fclose(f);
    buf[n] = 0;
    if (len) *len = n;
    return buf;
}

TU_FN int tu_write_file(const char *path, const void *data, size_t len) {
    FILE *f = fopen(path, "wb");
    size_t w;
    if (!f) return -1;
    w = fwrite(data, 1, len, f);
    return (fclose(f) == 0 && w == len) ? 0 : -1;
}

/* Both files exist and hold the same bytes. */
TU_FN int tu_same_bytes(const char *a, const char *b) {
    size_t la, lb;
    unsigned char *x = tu_read_file(a, &la), *y = tu_read_file(b, &lb);
    int same = x && y && la == lb && !memcmp(x, y, la);
    free(x);
    free(y);
    return same;
}

/* Run a shell command, capture stdout (malloc'd, NUL-terminated) and the exit status. */
TU_FN char *tu_vrun(int *status, const char *fmt, va_list ap) {
    char cmd[8192];
    FILE *p;
    char *out = NULL;
    size_t cap = 0, n = 0, got;
    int st;
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    p = popen(cmd, "r");
    if (!p) return NULL;
    for (;;) {
        if (n + 65536 + 1 > cap) {
            cap = (n + 65536 + 1) * 2;
            out = (char *)realloc(out, cap);
        }
        got = fread(out + n, 1, 65536, p);
        n += got;
        if (got == 0) break;
    }
    out[n] = 0;
    st = pclose(p);
    if (status) *status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    return out;
}

TU_FN char *tu_run(int *status, const char *fmt, ...) {
    va_list ap;
    char *out;
    va_start(ap, fmt);
    out = tu_vrun(status, fmt, ap);
    va_end(ap);
    return out;
}

/* tu_run for a command that must succeed: a nonzero exit prints what (the command's
   purpose), the command's output and fails the test. The output, malloc'd. */
TU_FN char *tu_run_ok(const char *what, const char *fmt, ...) {
    va_list ap;
    char *out;
    int st;
    va_start(ap, fmt);
    out = tu_vrun(&st, fmt, ap);
    va_end(ap);
    if (st != 0) print_error("%s failed (exit %d):\n%s\n", what, st, out ? out : "");
    assert_int_equal(st, 0);
    return out;
}

/* A fresh temporary path (file not created) under $TMPDIR or /tmp. */
TU_FN const char *tu_tmp_path(const char *suffix) {
    static char bufs[8][512];
    static int next;
    static unsigned counter;
    char *b = bufs[next++ & 7];
    snprintf(b, sizeof bufs[0], "%s/frames-test-%ld-%u%s", tu_tmpdir(),
             (long)getpid(), counter++, suffix ? suffix : "");
    return b;
}

/* `frames record` is built (capstone found, Linux x86-64): the recording suites run. */
#if defined(FRAMES_HAVE_CAPSTONE) && defined(__linux__) && defined(__x86_64__)
#define TU_RECORD_BUILT 1
#endif
#define TU_RECORD_NOT_BUILT "frames record is not built (needs capstone on x86-64 Linux)"

/* The main of a suite that has nothing to check on this machine: it says why and passes. */
#define TU_SKIPPED_MAIN(suite, why)              \
    int main(void) {                             \
        printf("%s: %s: skipped\n", suite, why); \
        return 0;                                \
    }

/* The Valgrind tool of `frames record --engine valgrind` (the default engine) is built
   beside the frames command (build/vg/), or FRAMES_VG_LIB names it. */
TU_FN int tu_vg_tool_built(void) {
    return access(tu_beside_frames("vg/frames-amd64-linux"), X_OK) == 0 ||
           (getenv("FRAMES_VG_LIB") && *getenv("FRAMES_VG_LIB"));
}

/* A reader of the finished trace at path (the test fails otherwise); its info into *info
   when info is not NULL. */
TU_FN frames_reader *tu_open_finished(const char *path, frames_reader_info *info) {
    frames_reader *r;
    frames_error err;
    frames_reader_info own;
    if (!info) info = &own;
    assert_int_equal(frames_reader_open_path(&r, path, NULL, &err), 0);
    assert_int_equal(frames_reader_info_get(r, info), 0);
    assert_true(info->finished);
    return r;
}

/* A private work directory for a suite: tu_workdir_make("frames-sym") in the group setup
   (returns 0), tu_workdir_path("x.c") for a file in it (one of 8 rotating buffers: copy
   what must last), tu_workdir_remove() in the teardown (tu_workdir_teardown is one). */
#if defined(__GNUC__)
static __attribute__((unused)) char tu_workdir[256];
#else
static char tu_workdir[256];
#endif

TU_FN int tu_workdir_make(const char *prefix) {
    snprintf(tu_workdir, sizeof tu_workdir, "%s/%s-XXXXXX", tu_tmpdir(), prefix);
    return mkdtemp(tu_workdir) ? 0 : -1;
}

TU_FN const char *tu_workdir_path(const char *name) {
    static char bufs[8][512];
    static int next;
    char *b = bufs[next++ & 7];
    snprintf(b, sizeof bufs[0], "%s/%s", tu_workdir, name);
    return b;
}

TU_FN void tu_workdir_remove(void) {
    int st;
    if (tu_workdir[0]) free(tu_run(&st, "rm -rf '%s'", tu_workdir));
}

/* The group teardown of a suite whose setup made only the work directory. */
TU_FN int tu_workdir_teardown(void **state) {
    (void)state;
    tu_workdir_remove();
    return 0;
}

/* ---- growing buffers */

/* Append n bytes to buf, which holds *len bytes in *cap (grown by doubling), and keep a
   NUL after them, so that text can be read as a string (data NULL: n zero bytes);
   returns buf, perhaps moved. Fails the test when out of memory. */
TU_FN void *tu_append(void *buf, size_t *len, size_t *cap, const void *data, size_t n) {
    char *b = (char *)buf;
    if (*len + n + 1 > *cap) {
        *cap = (*len + n + 1) * 2;
        b = (char *)realloc(b, *cap);
        assert_non_null(b);
    }
    if (n && data) memcpy(b + *len, data, n);
    else if (n) memset(b + *len, 0, n);
    *len += n;
    b[*len] = 0;
    return b;
}

/* Growing text: printer output, listings (free(t.s) when done). */

typedef struct tu_text {
    char *s;               /* NUL-terminated after its n bytes (NULL while empty) */
    size_t n, cap;
} tu_text;

TU_FN void tu_text_add(tu_text *t, const void *p, size_t n) {
    t->s = (char *)tu_append(t->s, &t->n, &t->cap, p, n);
}

/* A frames_out_fn (the library's printers) appending to the tu_text at ctx. */
TU_FN int tu_text_out(void *ctx, const char *s, size_t n) {
    tu_text_add((tu_text *)ctx, s, n);
    return 0;
}

/* ---- stream input from memory */

/* A frames_io read callback over the n bytes at p: at most `chunk` bytes a read, so
   records arrive cut at every offset; with vary > 0 the chunk then cycles 1..vary
   (chunk % vary + 1) from one read to the next. */
typedef struct tu_trickle {
    const uint8_t *p;
    size_t n, pos, chunk, vary;
} tu_trickle;

TU_FN long long tu_trickle_read(void *ctx, void *dst, size_t want) {
    tu_trickle *t = (tu_trickle *)ctx;
    size_t k = t->n - t->pos;
    if (k > want) k = want;
    if (k > t->chunk) k = t->chunk;
    memcpy(dst, t->p + t->pos, k);
    t->pos += k;
    if (t->vary) t->chunk = t->chunk % t->vary + 1;
    return (long long)k;
}

/* ---- little-endian words: byte by byte, independent of the library's loads */

TU_FN void tu_put_le(uint8_t *p, uint64_t v, int n) {
    int i;
    for (i = 0; i < n; i++) p[i] = (uint8_t)(v >> (8 * i));
}
TU_FN void tu_put_le16(uint8_t *p, uint16_t v) { tu_put_le(p, v, 2); }
TU_FN void tu_put_le32(uint8_t *p, uint32_t v) { tu_put_le(p, v, 4); }
TU_FN void tu_put_le64(uint8_t *p, uint64_t v) { tu_put_le(p, v, 8); }

TU_FN uint64_t tu_le(const uint8_t *p, int n) {
    uint64_t v = 0;
    while (n--) v = v << 8 | p[n];
    return v;
}
TU_FN uint64_t tu_le64(const uint8_t *p) { return tu_le(p, 8); }

/* ---- operands: a register or memory value of len bytes (bit_length 8 * len) */

TU_FN frames_operand tu_reg_op(const char *name, const void *value, size_t len, int read,
                               int written) {
    frames_operand op;
    memset(&op, 0, sizeof op);
    op.spec = FRAMES_REG;
    op.name = frames_str(name);
    op.bit_length = (int32_t)(8 * len);
    op.read = (uint8_t)read;
    op.written = (uint8_t)written;
    op.value = frames_bytes_of(value, len);
    return op;
}

TU_FN frames_operand tu_mem_op(uint64_t addr, const void *value, size_t len, int read,
                               int written) {
    frames_operand op = tu_reg_op("", value, len, read, written);
    op.spec = FRAMES_MEM;
    op.name = frames_bytes_of(NULL, 0);
    op.address = addr;
    return op;
}

/* ---- frames: the fields a test gives, every other one zero */

/* A std_frame of the n code bytes at pc in thread tid, without operands. */
TU_FN frames_frame tu_std_frame(uint64_t pc, uint64_t tid, const void *code, size_t n) {
    frames_frame f = {.kind = FRAMES_KIND_STD};
    f.std = (frames_std_frame){.address = pc, .thread_id = tid, .rawbytes = frames_bytes_of(code, n)};
    return f;
}

/* A syscall frame: number with args[0..nargs) at pc in thread tid. */
TU_FN frames_frame tu_syscall_frame(uint64_t pc, uint64_t tid, uint64_t number, const int64_t *args,
                                    uint32_t nargs) {
    frames_frame f = {.kind = FRAMES_KIND_SYSCALL};
    f.syscall = (frames_syscall_frame){.address = pc, .thread_id = tid, .number = number, .args = args,
                                       .nargs = nargs};
    return f;
}

/* A modload frame: name loaded at low..high. */
TU_FN frames_frame tu_modload_frame(const char *name, uint64_t low, uint64_t high) {
    frames_frame f = {.kind = FRAMES_KIND_MODLOAD};
    f.modload = (frames_modload_frame){.module_name = frames_str(name), .low_address = low,
                                       .high_address = high};
    return f;
}

#endif
