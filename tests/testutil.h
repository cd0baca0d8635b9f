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

/* Run a shell command, capture stdout (malloc'd, NUL-terminated) and the exit status. */
TU_FN char *tu_run(int *status, const char *fmt, ...) {
    char cmd[8192];
    va_list ap;
    FILE *p;
    char *out = NULL;
    size_t cap = 0, n = 0, got;
    int st;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
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

/* A private work directory for a suite: tu_workdir_make("frames-sym") in the group setup
   (returns 0), tu_workdir_path("x.c") for a file in it (one of 8 rotating buffers: copy
   what must last), tu_workdir_remove() in the teardown. */
#if defined(__GNUC__)
static __attribute__((unused)) char tu_workdir[256];
#else
static char tu_workdir[256];
#endif

TU_FN int tu_workdir_make(const char *prefix) {
    const char *tmp = getenv("TMPDIR");
    snprintf(tu_workdir, sizeof tu_workdir, "%s/%s-XXXXXX", tmp && *tmp ? tmp : "/tmp", prefix);
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

#endif
