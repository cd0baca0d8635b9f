/* compare_codec.c - two versions of frames.h and libprotobuf in one process, interleaved:
   encode and decode in memory, write and read a file, best CPU time of R repetitions.
   On a shared machine, runs minutes apart differ by more than most single changes to the
   codec; measured side by side in one process they can be told apart.

   Built by bench/compare_codec.sh three times: with -DVARIANT=A and -DVARIANT=B (each
   including bench_codec.c next to one frames.h, all of it static, behind A_* / B_*
   entry points), and without VARIANT for the driver. */
#ifdef VARIANT

#define CC_CAT2(a, b) a##_##b
#define CC_CAT(a, b) CC_CAT2(a, b)

#define FRAMES_STATIC
#define main CC_CAT(VARIANT, bench_codec_main)   /* not called */
#include BENCH_CODEC_C
#undef main

int CC_CAT(VARIANT, encode)(uint8_t *buf, size_t cap, uint64_t n, size_t *used) {
    return ours_encode_mem(buf, cap, n, used);
}
int CC_CAT(VARIANT, decode)(const uint8_t *const *msg, const size_t *len, uint64_t n, uint64_t *sum) {
    return ours_decode_mem(msg, len, n, sum);
}
int CC_CAT(VARIANT, write)(const char *path, uint64_t n) { return ours_write(path, n); }
int CC_CAT(VARIANT, read)(const char *path, uint64_t *count, uint64_t *sum) {
    return ours_read(path, count, sum);
}

#else

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "codec.h"

int A_encode(uint8_t *buf, size_t cap, uint64_t n, size_t *used);
int B_encode(uint8_t *buf, size_t cap, uint64_t n, size_t *used);
int A_decode(const uint8_t *const *msg, const size_t *len, uint64_t n, uint64_t *sum);
int B_decode(const uint8_t *const *msg, const size_t *len, uint64_t n, uint64_t *sum);
int A_write(const char *path, uint64_t n);
int B_write(const char *path, uint64_t n);
int A_read(const char *path, uint64_t *count, uint64_t *sum);
int B_read(const char *path, uint64_t *count, uint64_t *sum);

typedef int (*encode_fn)(uint8_t *, size_t, uint64_t, size_t *);
typedef int (*decode_fn)(const uint8_t *const *, const size_t *, uint64_t, uint64_t *);
typedef int (*write_fn)(const char *, uint64_t);
typedef int (*read_fn)(const char *, uint64_t *, uint64_t *);

static double cpu_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double sys_now(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec * 1e-6;
}

static void die(const char *what) {
    fprintf(stderr, "compare_codec: %s failed\n", what);
    exit(1);
}

static void keep_best(double *best, double t) {
    if (t < *best) *best = t;
}

int main(int argc, char **argv) {
    const char *dir = argc > 1 ? argv[1] : ".";
    uint64_t n = argc > 2 ? strtoull(argv[2], NULL, 10) : 200000, i, sum, count;
    int reps = argc > 3 ? atoi(argv[3]) : 10, files = argc > 4 ? atoi(argv[4]) : 1, r, k, j;
    static const char *const rows[4] = {"encode", "decode", "write", "read"};
    encode_fn enc[3] = {A_encode, B_encode, pbcxx_encode_mem};
    decode_fn dec[3] = {A_decode, B_decode, pbcxx_decode_mem};
    write_fn wr[3] = {A_write, B_write, pbcxx_write};
    read_fn rd[3] = {A_read, B_read, pbcxx_read};
    double best[4][3], sys[3];
    char path[4096];
    FILE *f;
    long size;
    uint8_t *bytes, *out;
    const uint8_t **msg;
    size_t *len, off, used, cap, payload = 0;
    if (n == 0 || reps < 1) {
        fprintf(stderr, "usage: compare_codec DIR [FRAMES [REPS [FILES 0/1]]]\n");
        return 2;
    }
    /* the frames' payloads (written by A) as the decoders' input */
    snprintf(path, sizeof path, "%s/compare-input.frames", dir);
    if (A_write(path, n) < 0 || !(f = fopen(path, "rb")) || fseek(f, 0, SEEK_END) != 0 ||
        (size = ftell(f)) < 0)
        die("writing the input");
    rewind(f);
    bytes = (uint8_t *)malloc((size_t)size);
    if (!bytes || fread(bytes, 1, (size_t)size, f) != (size_t)size) die("reading the input");
    fclose(f);
    unlink(path);
    msg = (const uint8_t **)malloc(n * sizeof *msg);
    len = (size_t *)malloc(n * sizeof *len);
    if (!msg || !len) die("malloc");
    off = 56 + (size_t)bench_le64(bytes + 48);
    for (i = 0; i < n; i++) {
        len[i] = (size_t)bench_le64(bytes + off);
        msg[i] = bytes + off + 8;
        off += 8 + len[i];
        payload += len[i];
    }
    cap = payload + 4096;
    out = (uint8_t *)malloc(cap);
    if (!out) die("malloc");
    memset(out, 0, cap);
    for (k = 0; k < 4; k++) best[k][0] = best[k][1] = best[k][2] = 1e30;
    sys[0] = sys[1] = sys[2] = 1e30;
    for (r = 0; r < reps; r++) {
        for (k = 0; k < 3; k++) {   /* the order rotates every repetition */
            double t, s;
            j = (k + r) % 3;
            t = cpu_now();
            if (enc[j](out, cap, n, &used) < 0) die("encode");
            keep_best(&best[0][j], cpu_now() - t);
            t = cpu_now();
            if (dec[j](msg, len, n, &sum) < 0) die("decode");
            keep_best(&best[1][j], cpu_now() - t);
            if (!files) continue;
            snprintf(path, sizeof path, "%s/compare-%d.frames", dir, j);
            unlink(path);
            s = sys_now();
            t = cpu_now();
            if (wr[j](path, n) < 0) die("write");
            keep_best(&best[2][j], cpu_now() - t);
            keep_best(&sys[j], sys_now() - s);
            t = cpu_now();
            if (rd[j](path, &count, &sum) < 0 || count != n) die("read");
            keep_best(&best[3][j], cpu_now() - t);
            unlink(path);
        }
    }
    printf("%llu frames, best of %d, CPU ns per frame:\n", (unsigned long long)n, reps);
    printf("%-8s %9s %9s %12s %9s %9s %8s\n", "", "A", "B", "libprotobuf", "B/A", "pb/A", "pb/B");
    for (k = 0; k < (files ? 4 : 2); k++)
        printf("%-8s %9.1f %9.1f %12.1f %8.3f %8.2fx %7.2fx\n", rows[k], best[k][0] * 1e9 / n,
               best[k][1] * 1e9 / n, best[k][2] * 1e9 / n, best[k][1] / best[k][0],
               best[k][2] / best[k][0], best[k][2] / best[k][1]);
    if (files)
        printf("%-8s %9.1f %9.1f %12.1f   (system time of the write row, best)\n", "sys",
               sys[0] * 1e9 / n, sys[1] * 1e9 / n, sys[2] * 1e9 / n);
    free(out);
    free(msg);
    free(len);
    free(bytes);
    return 0;
}

#endif
