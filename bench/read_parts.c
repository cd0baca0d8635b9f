/* read_parts.c - where the time of bench_codec's read row goes: the same file read with
   frames.h in steps, best CPU time (user + system) of R repetitions, in one process:

     next_raw, mapped file      walk the records only (frames_reader_next_raw, mmap)
     next_raw, copy in memory   the same over a malloc'd copy of the file (open_memory)
     next, mapped file          decode every frame (frames_reader_next), no checksum
     next, copy in memory       the same over the copy
     next + checksum (= read)   bench_codec's read row: decode and sum every field
     decode_frame in memory     bench_codec's decode row: frames_decode_frame over the
                                records' payloads, no reader

   The differences say what the reader adds to decoding (next in memory - decode_frame),
   what reading through the page-cache mapping adds (mapped - copy), and what the
   benchmark's checksum costs (read - next). A development tool, not part of
   ./build.sh bench; built by bench/read_parts.sh.

   usage: read_parts DIR [FRAMES [REPS]]   (file DIR/read-parts.frames, removed at the end) */
#define main bench_codec_main   /* not called */
#include "bench_codec.c"
#undef main

static uint8_t *rp_copy;
static size_t rp_size;

static int rp_walk(frames_reader *r, int decode, uint64_t *count, uint64_t *sum) {
    frames_frame f;
    frames_raw raw;
    uint64_t k = 0, s = 0;
    int rc;
    while ((rc = decode ? frames_reader_next(r, &f) : frames_reader_next_raw(r, &raw)) > 0) {
        s += decode ? f.std.address : raw.payload.len;
        k++;
    }
    frames_reader_close(r);
    *count = k;
    *sum = s;
    return rc;
}

static int rp_open(frames_reader **r, const char *path, int mapped) {
    frames_error err;
    int rc = mapped ? frames_reader_open_path(r, path, NULL, &err)
                    : frames_reader_open_memory(r, rp_copy, rp_size, NULL, &err);
    if (rc < 0) fprintf(stderr, "read_parts: %s\n", err.message);
    return rc;
}

/* one reader over the file (mapped, or over a copy in memory), walked raw or decoded */
static int rp_read(const char *path, int mapped, int decode, uint64_t *count, uint64_t *sum) {
    frames_reader *r;
    return rp_open(&r, path, mapped) < 0 ? -1 : rp_walk(r, decode, count, sum);
}
static int raw_mapped(const char *p, uint64_t *n, uint64_t *s) { return rp_read(p, 1, 0, n, s); }
static int raw_copy(const char *p, uint64_t *n, uint64_t *s) { return rp_read(p, 0, 0, n, s); }
static int next_mapped(const char *p, uint64_t *n, uint64_t *s) { return rp_read(p, 1, 1, n, s); }
static int next_copy(const char *p, uint64_t *n, uint64_t *s) { return rp_read(p, 0, 1, n, s); }

/* the decode row's input: each record's payload, found once in the copy */
static const uint8_t **rp_msg;
static size_t *rp_len;

static int decode_payloads(const char *path, uint64_t *count, uint64_t *sum) {
    (void)path;
    return ours_decode_mem(rp_msg, rp_len, *count, sum);
}

static int rp_load(const char *path, uint64_t n) {
    FILE *f = fopen(path, "rb");
    frames_reader *r;
    frames_raw raw;
    uint64_t i = 0;
    long size;
    if (!f || fseek(f, 0, SEEK_END) != 0 || (size = ftell(f)) < 0) return -1;
    rewind(f);
    rp_size = (size_t)size;
    rp_copy = (uint8_t *)malloc(rp_size);
    rp_msg = (const uint8_t **)malloc(n * sizeof *rp_msg);
    rp_len = (size_t *)malloc(n * sizeof *rp_len);
    if (!rp_copy || !rp_msg || !rp_len || fread(rp_copy, 1, rp_size, f) != rp_size) return -1;
    fclose(f);
    if (rp_open(&r, path, 0) < 0) return -1;
    while (i < n && frames_reader_next_raw(r, &raw) > 0) {
        rp_msg[i] = raw.payload.ptr;
        rp_len[i++] = raw.payload.len;
    }
    frames_reader_close(r);
    return i == n ? 0 : -1;
}

int main(int argc, char **argv) {
    const char *dir = argc > 1 ? argv[1] : ".";
    uint64_t n = argc > 2 ? strtoull(argv[2], NULL, 10) : 1000000, count, sum;
    int reps = argc > 3 ? atoi(argv[3]) : 5, r, k;
    char path[4096];
    static const char *const names[6] = {
        "next_raw, mapped file", "next_raw, copy in memory", "next, mapped file",
        "next, copy in memory", "next + checksum (= read)", "decode_frame in memory"};
    read_fn fns[6] = {raw_mapped, raw_copy, next_mapped, next_copy, ours_read, decode_payloads};
    double best[6], best_sys[6];
    if (n == 0 || reps < 1) {
        fprintf(stderr, "usage: read_parts DIR [FRAMES [REPS]]\n");
        return 2;
    }
    snprintf(path, sizeof path, "%s/read-parts.frames", dir);
    if (ours_write(path, n) < 0 || rp_load(path, n) < 0) die("write", path);
    for (k = 0; k < 6; k++) best[k] = best_sys[k] = 1e30;
    for (r = 0; r < reps; r++) {
        for (k = 0; k < 6; k++) {
            struct rusage a, b;
            double t, sys;
            count = n;
            getrusage(RUSAGE_SELF, &a);
            if (fns[k](path, &count, &sum) < 0 || count != n) die("read", path);
            getrusage(RUSAGE_SELF, &b);
            sys = (double)(b.ru_stime.tv_sec - a.ru_stime.tv_sec) +
                  (double)(b.ru_stime.tv_usec - a.ru_stime.tv_usec) * 1e-6;
            t = (double)(b.ru_utime.tv_sec - a.ru_utime.tv_sec) +
                (double)(b.ru_utime.tv_usec - a.ru_utime.tv_usec) * 1e-6 + sys;
            if (t < best[k]) best[k] = t;
            if (sys < best_sys[k]) best_sys[k] = sys;
        }
    }
    printf("# %llu frames, best of %d, CPU ns per frame (user + system; system alone)\n",
           (unsigned long long)n, reps);
    for (k = 0; k < 6; k++)
        printf("%-26s %7.1f  %6.1f\n", names[k], best[k] * 1e9 / (double)n,
               best_sys[k] * 1e9 / (double)n);
    unlink(path);
    free(rp_copy);
    free(rp_msg);
    free(rp_len);
    return 0;
}
