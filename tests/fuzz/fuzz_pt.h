/* fuzz_pt.h - helpers of the frames_pt.h fuzz targets (include after fuzz_util.h).

   - frames_pt.h's implementation with a small stall limit, so that a trace that sends
     the decoder round a cycle of direct branches costs little per input;
   - a private temporary directory (removed at exit) for the files libipt reads: code
     images, and the files perf MMAP records name (sysroot = that directory, and a
     sideband record naming a path with ".." stops decoding, so a fuzzed record can
     never make libipt read other files of the machine);
   - a frames sink in memory, and a check of a written trace: every record decodes, and
     every std_frame's address and raw bytes are those of the code image. */
#ifndef FRAMES_FUZZ_PT_H
#define FRAMES_FUZZ_PT_H

#define FRAMES_PT_MAX_STALL 4096
#define FRAMES_PT_IMPLEMENTATION
#include "frames_pt.h"

#include <dirent.h>
#include <unistd.h>

static char fz_dir[64];

static void fz_dir_remove(void) {
    DIR *d = opendir(fz_dir);
    struct dirent *e;
    char path[128];
    if (!d) return;
    while ((e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        snprintf(path, sizeof path, "%s/%s", fz_dir, e->d_name);
        unlink(path);
    }
    closedir(d);
    rmdir(fz_dir);
}

/* The directory (created on first use). */
static const char *fz_tmpdir(void) {
    if (!fz_dir[0]) {
        snprintf(fz_dir, sizeof fz_dir, "%s", "/tmp/frames-fuzz-XXXXXX");
        FZ_CHECK(mkdtemp(fz_dir) != NULL);
        atexit(fz_dir_remove);
    }
    return fz_dir;
}

/* The directory as a sysroot (prepended verbatim to MMAP file names). */
static const char *fz_sysroot(void) {
    static char root[80];
    if (!root[0]) snprintf(root, sizeof root, "%s/", fz_tmpdir());
    return root;
}

/* Write a file of the directory; returns its path (static storage, one per name slot). */
static const char *fz_put_file(const char *name, const void *data, size_t len) {
    static char paths[4][128];
    static unsigned slot;
    char *path = paths[slot++ % 4];
    FILE *f;
    snprintf(path, 128, "%s/%s", fz_tmpdir(), name);
    f = fopen(path, "wb");
    FZ_CHECK(f);
    if (len) FZ_CHECK(fwrite(data, 1, len, f) == len);
    FZ_CHECK(fclose(f) == 0);
    return path;
}

/* sb_record callback part: a record naming a path outside the directory stops decoding. */
static int fz_unsafe_name(const frames_pt_sb_record *r) {
    return (r->type == 1 || r->type == 10) && r->name && strstr(r->name, "..");
}

/* ---------------------------------------------------------------- frames in memory */

static frames_writer *fz_out_writer(fz_mem *o) {
    frames_sink s;
    frames_writer *w;
    frames_error err;
    memset(o, 0, sizeof *o);
    memset(&s, 0, sizeof s);
    s.ctx = o;
    s.write = fz_mem_write;
    s.patch = fz_mem_patch;
    FZ_CHECK(frames_writer_open(&w, &s, NULL, NULL, &err) == FRAMES_OK);
    return w;
}

typedef struct fz_counts {
    uint64_t std, exception, modload, other;
} fz_counts;

/* Every frame of the written trace decodes; std_frames lie in the image [base, base+len)
   (when image is given) and carry its bytes. */
static fz_counts fz_check_written(const fz_mem *o, const uint8_t *image, size_t len, uint64_t base) {
    frames_reader *r;
    frames_error err;
    frames_frame f;
    fz_counts c;
    int rc;
    memset(&c, 0, sizeof c);
    FZ_CHECK(frames_reader_open_memory(&r, o->p, o->len, NULL, &err) == FRAMES_OK);
    while ((rc = frames_reader_next(r, &f)) != 0) {
        FZ_CHECK(rc == 1);
        if (f.kind == FRAMES_KIND_STD) {
            uint64_t a = f.std.address;
            c.std++;
            FZ_CHECK(f.std.rawbytes.len >= 1 && f.std.rawbytes.len <= 15 && f.std.npre == 0);
            if (image) {
                FZ_CHECK(a >= base && a - base < len && f.std.rawbytes.len <= len - (a - base));
                FZ_CHECK(!memcmp(f.std.rawbytes.ptr, image + (a - base), f.std.rawbytes.len));
            }
        } else if (f.kind == FRAMES_KIND_EXCEPTION) c.exception++;
        else if (f.kind == FRAMES_KIND_MODLOAD) {
            c.modload++;
            FZ_CHECK(f.modload.low_address <= f.modload.high_address);
        } else c.other++;
    }
    frames_reader_close(r);
    return c;
}

static int fz_out_equal(const fz_mem *a, const fz_mem *b) {
    return a->len == b->len && (a->len == 0 || !memcmp(a->p, b->p, a->len));
}

#endif
