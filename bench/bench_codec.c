/* bench_codec.c - frames.h against libprotobuf C++ (as libtrace uses it) and protobuf-c (as
   QEMU tracewrap uses it) on N PIN-like std_frames, in one process, interleaved (the order
   rotates every repetition), timed in CPU time. For each implementation:

     write    build each frame and write the whole container (header, meta, frames, TOC)
              to a file: frames_writer_add / SerializeToString + fwrite / pack + fwrite
     read     read that file and decode every frame, then read every field of it (a
              checksum over all fields, which must agree between the three)
     encode   build and serialize each frame into memory (no container, no system call)
     decode   parse each frame from memory (no container, no system call, no checksum)

   and, for frames.h, counting frames without decoding (frames_reader_next_raw) next to
   the memory bandwidth of the same run (a sum over a fresh mapping of the file, memcpy)
   and to a stdio walk (read each size word, seek over the payload).
   It checks that the three files are byte-identical (the encoding is canonical), that
   the three in-memory encodings are byte-identical, and that the checksums agree.

   usage: bench_codec DIR [FRAMES [REPS]]   (files DIR/bench-*.frames, removed at the end)
   Run by bench/bench_codec.sh, which builds the peers from tests/frames.proto. */
#define FRAMES_IMPLEMENTATION
#include "../frames.h"
#include "codec.h"
#include "codec_ours.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------------------ frames.h */

static int ours_write(const char *path, uint64_t n) {
    return ours_write_with(path, n, frames_writer_open_path);
}

static int ours_read(const char *path, uint64_t *count, uint64_t *sum) {
    frames_reader *r;
    frames_error err;
    frames_frame f;
    uint64_t s = 0, k = 0;
    int rc;
    if (frames_reader_open_path(&r, path, NULL, &err) < 0) {
        fprintf(stderr, "bench_codec: %s\n", err.message);
        return -1;
    }
    while ((rc = frames_reader_next(r, &f)) > 0) {
        const frames_std_frame *sf = &f.std;
        s += bench_sum_frame(sf->address, sf->thread_id, sf->rawbytes.ptr, sf->rawbytes.len,
                             sf->npre, sf->npost);
        s += sum_operands(sf->pre, sf->npre) + sum_operands(sf->post, sf->npost);
        k++;
    }
    if (rc < 0) fprintf(stderr, "bench_codec: %s\n", frames_reader_error(r)->message);
    frames_reader_close(r);
    *count = k;
    *sum = s;
    return rc;
}

static int ours_encode_mem(uint8_t *buf, size_t cap, uint64_t n, size_t *used) {
    ours_frame x;
    size_t total = 0, len;
    uint64_t i;
    ours_init(&x);
    for (i = 0; i < n; i++) {
        fill_frame(&x, i);
        if (frames_encode_frame(&x.f, 0, buf + total, cap - total, &len, NULL) < 0) return -1;
        total += len;
    }
    *used = total;
    return 0;
}

static int ours_decode_mem(const uint8_t *const *msg, const size_t *len, uint64_t n,
                           uint64_t *sum) {
    frames_decoder d;
    frames_frame f;
    uint64_t s = 0, i;
    frames_decoder_init(&d, NULL, 0, NULL);
    for (i = 0; i < n; i++) {
        if (frames_decode_frame(&d, msg[i], len[i], &f, NULL) < 0) return -1;
        s += f.std.address;
    }
    frames_decoder_free(&d);
    *sum = s;
    return 0;
}

static int ours_count(const char *path, uint64_t *count, uint64_t *unused) {
    frames_reader *r;
    frames_error err;
    frames_raw raw;
    uint64_t k = 0;
    int rc;
    (void)unused;
    if (frames_reader_open_path(&r, path, NULL, &err) < 0) return -1;
    while ((rc = frames_reader_next_raw(r, &raw)) > 0) k++;
    frames_reader_close(r);
    *count = k;
    return rc;
}

/* --------------------------------------------------- baselines: no codec at all */

/* Count as a libtrace-style stdio reader would without decoding: size, seek, repeat. */
static int stdio_count(const char *path, uint64_t *count, uint64_t *unused) {
    bench_reader r;
    int rc;
    (void)unused;
    if (bench_reader_open(&r, path) < 0) {
        bench_reader_close(&r);
        return -1;
    }
    while ((rc = bench_reader_skip(&r)) > 0) {}
    *count = r.i;
    bench_reader_close(&r);
    return rc;
}

/* Memory bandwidth through the page cache: map the file (as our reader does) and add up
   every 8-byte word. */
static int mmap_sum(const char *path, uint64_t *count, uint64_t *sum) {
    int fd = open(path, O_RDONLY);
    struct stat st;
    const uint64_t *w;
    uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    size_t n, i;
    void *m;
    if (fd < 0 || fstat(fd, &st) < 0) return -1;
    m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (m == MAP_FAILED) return -1;
    madvise(m, (size_t)st.st_size, MADV_SEQUENTIAL);
    w = (const uint64_t *)m;
    n = (size_t)st.st_size / 8;
    for (i = 0; i + 4 <= n; i += 4) {
        s0 += w[i];
        s1 += w[i + 1];
        s2 += w[i + 2];
        s3 += w[i + 3];
    }
    munmap(m, (size_t)st.st_size);
    *count = n;
    *sum = s0 + s1 + s2 + s3;
    return 0;
}

/* ------------------------------------------------------------------ harness */

#define MAXREPS 64

typedef struct series {
    const char *name;
    double t[MAXREPS];     /* CPU seconds */
    double sys[MAXREPS];   /* of which in the kernel */
    int n;
} series;

/* CPU time of the process (user + system), not wall time: on a machine shared with other
   jobs, time spent waiting for a CPU would otherwise be charged to whoever ran then. */
static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double sys_time(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec * 1e-6;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}
/* q = 0 best, 0.5 median, 1 worst */
static double quantile(const series *s, double q) {
    double v[MAXREPS];
    memcpy(v, s->t, (size_t)s->n * sizeof *v);
    qsort(v, (size_t)s->n, sizeof *v, cmp_double);
    if (q == 0.5 && s->n % 2 == 0) return (v[s->n / 2 - 1] + v[s->n / 2]) / 2;
    return v[(int)(q * (s->n - 1) + 0.5)];
}
/* Timing of one run: start() before, add() after. */
static double g_t0, g_s0;
static void start(void) {
    g_s0 = sys_time();
    g_t0 = now();
}
static void add(series *s) {
    double t = now() - g_t0;
    s->sys[s->n] = sys_time() - g_s0;
    s->t[s->n++] = t;
}
static double median_sys(const series *s) {
    series tmp = *s;
    memcpy(tmp.t, s->sys, sizeof tmp.t);
    return quantile(&tmp, 0.5);
}

static void die(const char *what, const char *path) {
    fprintf(stderr, "bench_codec: %s failed (%s)\n", what, path);
    exit(1);
}

static uint8_t *slurp(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    uint8_t *b;
    long n = 0; /* die() exits, but clang cannot tell it does not return */
    if (!f || fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0) die("reading", path);
    rewind(f);
    b = (uint8_t *)malloc((size_t)n + 1);
    if (!b || fread(b, 1, (size_t)n, f) != (size_t)n) die("reading", path);
    fclose(f);
    *len = (size_t)n;
    return b;
}

static void row(const char *op, const series *s, uint64_t frames, double bytes) {
    double b = quantile(s, 0);
    printf("%-7s %-24s %11.0f %8.0f   %7.3f %7.3f %7.3f %7.3f\n", op, s->name, frames / b,
           bytes / b / 1e6, b, quantile(s, 0.5), quantile(s, 1), median_sys(s));
}

static void ratio_line(const char *what, const series *ours, const series *peer) {
    printf("  %-22s %6.1fx best  %6.1fx median  (range %.1f-%.1fx)  vs %s\n", what,
           quantile(peer, 0) / quantile(ours, 0), quantile(peer, 0.5) / quantile(ours, 0.5),
           quantile(peer, 0) / quantile(ours, 1), quantile(peer, 1) / quantile(ours, 0),
           peer->name);
}

typedef int (*write_fn)(const char *path, uint64_t n);
typedef int (*read_fn)(const char *path, uint64_t *count, uint64_t *sum);
typedef int (*encode_fn)(uint8_t *buf, size_t cap, uint64_t n, size_t *used);
typedef int (*decode_fn)(const uint8_t *const *msg, const size_t *len, uint64_t n, uint64_t *sum);

int main(int argc, char **argv) {
    const char *dir = argc > 1 ? argv[1] : ".";
    uint64_t n = argc > 2 ? strtoull(argv[2], NULL, 10) : 1000000, i;
    int reps = argc > 3 ? atoi(argv[3]) : 3, r, k;
    char path[3][4096];
    static const char *const names[3] = {"frames.h", "libprotobuf 3.21 (C++)", "protobuf-c 1.4"};
    write_fn writers[3] = {ours_write, pbcxx_write, pbc_write};
    read_fn readers[3] = {ours_read, pbcxx_read, pbc_read};
    encode_fn encoders[3] = {ours_encode_mem, pbcxx_encode_mem, pbc_encode_mem};
    decode_fn decoders[3] = {ours_decode_mem, pbcxx_decode_mem, pbc_decode_mem};
    series w[3], rd[3], en[3], de[3], cnt[2], bw[2];
    uint64_t counts[3], sums[3], asum[3];
    size_t size[3], used[3], payload_total = 0, cap, off;
    uint8_t *bytes[3], *enc[3], *src, *dst;
    const uint8_t **msg;
    size_t *len;
    int files_same, enc_same;
    if (reps < 1 || reps > MAXREPS || n == 0) {
        fprintf(stderr, "usage: bench_codec DIR [FRAMES [REPS<=%d]]\n", MAXREPS);
        return 2;
    }
    memset(w, 0, sizeof w);
    memset(rd, 0, sizeof rd);
    memset(en, 0, sizeof en);
    memset(de, 0, sizeof de);
    memset(cnt, 0, sizeof cnt);
    memset(bw, 0, sizeof bw);
    for (k = 0; k < 3; k++) {
        snprintf(path[k], sizeof path[k], "%s/bench-%d.frames", dir, k);
        w[k].name = rd[k].name = en[k].name = de[k].name = names[k];
    }
    cnt[0].name = "frames.h (next_raw)";
    cnt[1].name = "stdio fread+fseek";
    bw[0].name = "mmap + sum of all words";
    bw[1].name = "memcpy in RAM";

    /* files: write, then read with a checksum of every field */
    for (r = 0; r < reps; r++) {
        for (k = 0; k < 3; k++) {   /* the order rotates so that nobody always goes first */
            int j = (k + r) % 3;
            unlink(path[j]);
            start();
            if (writers[j](path[j], n) < 0) die("write", path[j]);
            add(&w[j]);
        }
        for (k = 0; k < 3; k++) {
            int j = (k + r) % 3;
            start();
            if (readers[j](path[j], &counts[j], &sums[j]) < 0) die("read", path[j]);
            add(&rd[j]);
            if (counts[j] != n) die("frame count", path[j]);
        }
        if (sums[0] != sums[1] || sums[0] != sums[2]) {
            fprintf(stderr, "bench_codec: checksums of the decoded fields differ: %016llx %016llx "
                    "%016llx\n", (unsigned long long)sums[0], (unsigned long long)sums[1],
                    (unsigned long long)sums[2]);
            return 1;
        }
        {
            read_fn fns[3] = {ours_count, stdio_count, mmap_sum};
            series *ss[3] = {&cnt[0], &cnt[1], &bw[0]};
            uint64_t c, s;
            for (k = 0; k < 3; k++) {
                start();
                if (fns[k](path[0], &c, &s) < 0) die("count", path[0]);
                add(ss[k]);
                if (k < 2 && c != n) die("count", path[0]);
            }
        }
    }
    for (k = 0; k < 3; k++) bytes[k] = slurp(path[k], &size[k]);
    files_same = size[0] == size[1] && size[0] == size[2] &&
                 memcmp(bytes[0], bytes[1], size[0]) == 0 && memcmp(bytes[0], bytes[2], size[0]) == 0;

    /* memory: the frames' payloads as the decoders' input, then encode and decode */
    msg = (const uint8_t **)malloc(n * sizeof *msg);
    len = (size_t *)malloc(n * sizeof *len);
    if (!msg || !len) die("malloc", "");
    off = 56 + (size_t)bench_le64(bytes[0] + 48);
    for (i = 0; i < n; i++) {
        len[i] = (size_t)bench_le64(bytes[0] + off);
        msg[i] = bytes[0] + off + 8;
        off += 8 + len[i];
        payload_total += len[i];
    }
    cap = payload_total + 4096;
    for (k = 0; k < 3; k++) {
        enc[k] = (uint8_t *)malloc(cap);
        if (!enc[k]) die("malloc", "");
        memset(enc[k], 0, cap);   /* touch the pages before timing */
    }
    for (r = 0; r < reps; r++) {
        for (k = 0; k < 3; k++) {
            int j = (k + r) % 3;
            start();
            if (encoders[j](enc[j], cap, n, &used[j]) < 0) die("encode", names[j]);
            add(&en[j]);
        }
        for (k = 0; k < 3; k++) {
            int j = (k + r) % 3;
            start();
            if (decoders[j](msg, len, n, &asum[j]) < 0) die("decode", names[j]);
            add(&de[j]);
        }
        if (asum[0] != asum[1] || asum[0] != asum[2]) die("decode", "the decoders disagree");
    }
    enc_same = used[0] == payload_total && used[1] == used[0] && used[2] == used[0] &&
               memcmp(enc[0], enc[1], used[0]) == 0 && memcmp(enc[0], enc[2], used[0]) == 0;
    src = bytes[0];
    dst = enc[1];
    for (r = 0; r < reps; r++) {   /* RAM bandwidth: one copy reads and writes the file size */
        start();
        memcpy(dst, src, payload_total);
        add(&bw[1]);
    }

    printf("%llu std_frames (PIN-like: 3 raw bytes, 2 reg + 1 mem read, 1 reg write), "
           "%.1f bytes per frame with its size word, file %.1f MB; %d repetitions; "
           "CPU time (user + system) of this process\n",
           (unsigned long long)n, (double)(size[0] - 56) / (double)n, size[0] / 1e6, reps);
    printf("%-7s %-24s %11s %8s   %7s %7s %7s %7s\n", "", "", "frames/s", "MB/s", "best s",
           "median", "worst", "sys med");
    for (k = 0; k < 3; k++) row("write", &w[k], n, (double)size[0]);
    for (k = 0; k < 3; k++) row("read", &rd[k], n, (double)size[0]);
    for (k = 0; k < 3; k++) row("encode", &en[k], n, (double)payload_total);
    for (k = 0; k < 3; k++) row("decode", &de[k], n, (double)payload_total);
    row("count", &cnt[0], n, (double)size[0]);
    row("count", &cnt[1], n, (double)size[0]);
    row("membw", &bw[0], n, (double)size[0]);
    row("membw", &bw[1], n, (double)payload_total);
    printf("write: file container (fwrite/write); read: file, decode, checksum of every field;\n"
           "encode/decode: each frame to/from memory, no container, no system call;\n"
           "membw rows: frames/s = the file read at that speed; sys med: median system time.\n");
    printf("ratios (peer CPU time / frames.h CPU time, same run):\n");
    for (k = 1; k < 3; k++) ratio_line("write file", &w[0], &w[k]);
    for (k = 1; k < 3; k++) ratio_line("read + every field", &rd[0], &rd[k]);
    for (k = 1; k < 3; k++) ratio_line("encode (memory)", &en[0], &en[k]);
    for (k = 1; k < 3; k++) ratio_line("decode (memory)", &de[0], &de[k]);
    ratio_line("count without decoding", &cnt[0], &cnt[1]);
    printf("  %-22s %6.2f  best  %6.2f  median  (fraction of mmap+sum bandwidth)\n",
           "count vs memory bw", quantile(&bw[0], 0) / quantile(&cnt[0], 0),
           quantile(&bw[0], 0.5) / quantile(&cnt[0], 0.5));
    printf("files: %s (%zu bytes)\n",
           files_same ? "byte-identical from all three" : "DIFFER", size[0]);
    printf("in-memory encodings: %s\n", enc_same ? "byte-identical from all three" : "DIFFER");
    printf("checksums of every decoded field: %s (%016llx)\n",
           sums[0] == sums[1] && sums[0] == sums[2] ? "agree" : "DIFFER",
           (unsigned long long)sums[0]);
    for (k = 0; k < 3; k++) {
        free(bytes[k]);
        free(enc[k]);
        /* BENCH_KEEP: leave frames.h's file (DIR/bench-0.frames) for bench_parquet.sh */
        if (k != 0 || !getenv("BENCH_KEEP")) unlink(path[k]);
    }
    free(msg);
    free(len);
    return files_same && enc_same ? 0 : 1;
}
