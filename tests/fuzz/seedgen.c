/* seedgen - seed corpora for the fuzz targets, made at run time from the reference
   vectors (so the repository does not carry copies of them).

     seedgen files  OUTDIR FILE...   each file as one seed
     seedgen frames OUTDIR FILE...   the payload of every frame of each frames trace
     seedgen meta   OUTDIR FILE...   the meta frame payload of each frames trace
     seedgen unfinished OUTDIR FILE...  each finished trace as a writer killed inside
                                      finish leaves it: n = T = 0, TOC whole or cut

   Seeds are named by a hash of their content, so duplicates (the many identical frames
   of the 10,001-frame vectors) are stored once. Files that do not open as traces are
   skipped in the frames/meta modes. */
#define FRAMES_IMPLEMENTATION
#include "frames.h"

#include <stdio.h>
#include <string.h>

static int put_seed(const char *dir, const void *data, size_t len) {
    const unsigned char *p = (const unsigned char *)data;
    unsigned long long h = 1469598103934665603ull; /* FNV-1a 64 */
    char path[4096];
    FILE *f;
    size_t i;
    for (i = 0; i < len; i++) h = (h ^ p[i]) * 1099511628211ull;
    snprintf(path, sizeof path, "%s/seed-%016llx", dir, h);
    f = fopen(path, "wb");
    if (!f) {
        fprintf(stderr, "seedgen: cannot create %s\n", path);
        return -1;
    }
    if (len) fwrite(data, 1, len, f);
    return fclose(f) == 0 ? 0 : -1;
}

static int whole_file(const char *dir, const char *path) {
    FILE *f = fopen(path, "rb");
    static unsigned char buf[1 << 22];
    size_t n;
    if (!f) return -1;
    n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    return put_seed(dir, buf, n);
}

static uint64_t le64(const unsigned char *p) {
    uint64_t v = 0;
    int i;
    for (i = 7; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

static int unfinished(const char *dir, const char *path) {
    static unsigned char buf[1 << 22];
    FILE *f = fopen(path, "rb");
    size_t n, i;
    uint64_t T;
    static const size_t extra[] = {0, 8, 12, 16, 24};
    if (!f) return -1;
    n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    if (n < 48 || (T = le64(buf + 40)) < 48 || T >= n) return 0; /* not finished */
    memset(buf + 32, 0, 16);
    for (i = 0; i < sizeof extra / sizeof extra[0]; i++)
        if (T + extra[i] <= n && put_seed(dir, buf, (size_t)T + extra[i]) < 0) return -1;
    return put_seed(dir, buf, n);
}

static int from_trace(const char *dir, const char *path, int frames) {
    frames_reader *r;
    frames_error err;
    frames_raw raw;
    frames_bytes meta;
    int rc;
    if (frames_reader_open_path(&r, path, NULL, &err) < 0) return 0;
    if (!frames) {
        meta = frames_reader_meta_bytes(r);
        rc = meta.ptr ? put_seed(dir, meta.ptr, meta.len) : 0;
    } else {
        while ((rc = frames_reader_next_raw(r, &raw)) != 0) {
            if (rc > 0 && put_seed(dir, raw.payload.ptr, raw.payload.len) < 0) break;
        }
    }
    frames_reader_close(r);
    return rc < 0 ? -1 : 0;
}

int main(int argc, char **argv) {
    int i, failed = 0;
    if (argc < 3) {
        fprintf(stderr, "usage: seedgen files|frames|meta|unfinished OUTDIR FILE...\n");
        return 2;
    }
    for (i = 3; i < argc; i++) {
        int rc;
        if (!strcmp(argv[1], "files")) rc = whole_file(argv[2], argv[i]);
        else if (!strcmp(argv[1], "frames")) rc = from_trace(argv[2], argv[i], 1);
        else if (!strcmp(argv[1], "meta")) rc = from_trace(argv[2], argv[i], 0);
        else if (!strcmp(argv[1], "unfinished")) rc = unfinished(argv[2], argv[i]);
        else {
            fprintf(stderr, "seedgen: unknown mode %s\n", argv[1]);
            return 2;
        }
        if (rc < 0) {
            fprintf(stderr, "seedgen: %s: failed\n", argv[i]);
            failed = 1;
        }
    }
    return failed;
}
