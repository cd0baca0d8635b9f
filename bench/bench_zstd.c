/* bench_zstd.c - compressed, seekable traces (frames_zstd.h) against the uncompressed
   trace, whole-file zstd and lz4, our plain reader/writer and libprotobuf (libtrace's
   codec), all measured in the same run, on two inputs: a trace recorded by `frames record`
   (registers and memory values of a real program) and bench_codec's PIN-like trace.

     size     ratio of the uncompressed size to: ours at level 1 and 3 (1 MiB chunks,
              the default), whole-file `zstd -1`, `zstd -3`, `lz4 -1` (the real binaries)
     read     decode every frame and read every field (checksum): ours plain, ours
              compressed with 1 and 2 threads (cursors), libprotobuf on the plain file
     write    (PIN-like) build and write every frame: ours plain, ours compressed with
              the compression thread, libprotobuf plain
     random   read 1,000 random frames (seek + decode) of the compressed trace: time and
              bytes decompressed

   Times are wall-clock (threads are the point; best and median of REPS runs) and CPU time
   of the process (all threads; best), since a shared machine stretches wall-clock.
   usage: bench_zstd DIR RECORDED.frames|- [FRAMES [REPS]]   (run by bench/bench_zstd.sh) */
#define FRAMES_IMPLEMENTATION
#include "../frames.h"
#define FRAMES_ZSTD_IMPLEMENTATION
#include "../frames_zstd.h"
#include "codec.h"
#include "codec_ours.h"

#include <fcntl.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#define MAXREPS 16
typedef struct series {
    const char *name;
    double t[MAXREPS];   /* wall-clock */
    int n;
    double cpu[MAXREPS]; /* CPU time of the process (all threads) */
} series;

static double cpu_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}


static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double least(const double *v, int n) {
    double b = v[0];
    int i;
    for (i = 1; i < n; i++)
        if (v[i] < b) b = v[i];
    return b;
}
static double best(const series *s) { return least(s->t, s->n); }

static double median(const series *s) {
    double v[MAXREPS], x;
    int i, j;
    for (i = 0; i < s->n; i++) v[i] = s->t[i];
    for (i = 1; i < s->n; i++) /* insertion sort: a handful of values */
        for (j = i; j > 0 && v[j - 1] > v[j]; j--) {
            x = v[j];
            v[j] = v[j - 1];
            v[j - 1] = x;
        }
    return s->n % 2 ? v[s->n / 2] : (v[s->n / 2 - 1] + v[s->n / 2]) / 2;
}

static void die(const char *what, const char *detail) {
    fprintf(stderr, "bench_zstd: %s: %s\n", what, detail);
    exit(1);
}

static uint64_t file_size(const char *path) {
    FILE *f = fopen(path, "rb");
    long n;
    if (!f || fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0) die("size", path);
    fclose(f);
    return (uint64_t)n;
}

/* Bytes a command prints on stdout (the real zstd and lz4 binaries). */
static uint64_t piped_size(const char *fmt, const char *path) {
    char cmd[4400], buf[65536];
    uint64_t n = 0;
    size_t got;
    FILE *p;
    snprintf(cmd, sizeof cmd, fmt, path);
    if (!(p = popen(cmd, "r"))) die("popen", cmd);
    while ((got = fread(buf, 1, sizeof buf, p)) > 0) n += got;
    if (pclose(p) != 0) die("command failed", cmd);
    return n;
}

static void compress_file(const char *in, const char *out, int level, uint64_t m) {
    frames_zstd_options z;
    frames_zstd_sink *zs;
    frames_sink down;
    frames_error err;
    int ifd = open(in, O_RDONLY), ofd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (ifd < 0 || ofd < 0) die("open", in);
    frames_zstd_options_default(&z);
    z.level = level;
    z.frames_per_toc = m;
    down = frames_sink_fd(ofd);
    if (frames_zstd_sink_open(&zs, &down, &z, &err) < 0 || frames_zstd_compress_fd(ifd, zs, &err) < 0 ||
        frames_zstd_sink_close(zs, &err) < 0)
        die("compress", err.message);
    close(ifd);
    close(ofd);
}

/* -- reading */

static uint64_t sum_frame(const frames_frame *f) {
    const frames_std_frame *sf = &f->std;
    if (f->kind != FRAMES_KIND_STD) return 0;
    return bench_sum_frame(sf->address, sf->thread_id, sf->rawbytes.ptr, sf->rawbytes.len, sf->npre,
                           sf->npost) +
           sum_operands(sf->pre, sf->npre) + sum_operands(sf->post, sf->npost);
}

typedef struct part {
    frames_reader *r;
    uint64_t first, end, sum;
} part;

static void *read_part(void *arg) {
    part *p = (part *)arg;
    frames_cursor *c;
    frames_frame f;
    frames_error err;
    uint64_t i;
    if (frames_cursor_open(&c, p->r, p->first, &err) < 0) die("cursor", err.message);
    for (i = p->first; i < p->end; i++) {
        if (frames_cursor_next(c, &f) != 1) die("cursor", frames_cursor_error(c)->message);
        p->sum += sum_frame(&f);
    }
    frames_cursor_close(c);
    return NULL;
}

/* Read every frame with `threads` cursors (1: the reader itself); returns the checksum. */
static uint64_t ours_read(const char *path, int threads, uint64_t *count) {
    frames_reader *r;
    frames_error err;
    frames_frame f;
    uint64_t sum = 0, n = 0;
    if (frames_zstd_reader_open_path(&r, path, NULL, NULL, NULL, &err) < 0) die("open", err.message);
    if (threads == 1) {
        int rc;
        while ((rc = frames_reader_next(r, &f)) > 0) {
            sum += sum_frame(&f);
            n++;
        }
        if (rc < 0) die("read", frames_reader_error(r)->message);
    } else {
        pthread_t th[8];
        part parts[8];
        int t;
        if (frames_reader_index(r) < 0 || frames_reader_count(r, &n) < 0)
            die("index", frames_reader_error(r)->message);
        for (t = 0; t < threads; t++) {
            parts[t].r = r;
            parts[t].first = n * (uint64_t)t / (uint64_t)threads;
            parts[t].end = n * (uint64_t)(t + 1) / (uint64_t)threads;
            parts[t].sum = 0;
            if (pthread_create(&th[t], NULL, read_part, &parts[t]) != 0) die("thread", "create");
        }
        for (t = 0; t < threads; t++) {
            pthread_join(th[t], NULL);
            sum += parts[t].sum;
        }
    }
    frames_reader_close(r);
    *count = n;
    return sum;
}

/* -- writing (PIN-like frames, as bench_codec) */

static frames_zstd_options write_zo; /* the compressed writer's level and threads */

static int zstd_writer_open(frames_writer **w, const char *path, const frames_writer_options *o,
                            const frames_meta *meta, frames_error *err) {
    return frames_zstd_writer_open_path(w, path, o, &write_zo, meta, err);
}

/* Write n PIN-like frames: plain (level 0) or compressed at `level` with `threads`
   (the writer's own and threads-1 compression threads). */
static int ours_write(const char *path, uint64_t n, int level, int threads) {
    frames_zstd_options_default(&write_zo);
    write_zo.level = level;
    write_zo.threads = threads;
    return ours_write_with(path, n, level ? zstd_writer_open : frames_writer_open_path);
}

/* The writers compared: ours plain, ours compressed (level, threads), libprotobuf. */
static const struct { const char *name; int level, threads; } writers[] = {
    {"ours plain", 0, 0},
    {".zst level 3, 1 compression thread (default)", 3, 2},
    {".zst level 3, 2 compression threads", 3, 3},
    {".zst level 1, 1 compression thread", 1, 2},
    {".zst level 1, 2 compression threads", 1, 3},
    {"libprotobuf plain", -1, 0},
};
#define NWRITERS (sizeof writers / sizeof writers[0])

/* -- random access */

static void random_access(const char *zpath, double *secs, double *cpu, uint64_t *bytes, uint64_t *chunk) {
    frames_reader *r;
    frames_error err;
    frames_frame f;
    frames_zstd_info zi;
    uint64_t n, i, seed = 42, before;
    double t0, c0;
    if (frames_zstd_reader_open_path(&r, zpath, NULL, NULL, &zi, &err) < 0) die("open", err.message);
    if (frames_reader_count(r, &n) < 0) die("count", frames_reader_error(r)->message);
    before = frames_zstd_map_decompressed(frames_zstd_reader_map(r));
    t0 = now();
    c0 = cpu_now();
    for (i = 0; i < 1000; i++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        if (frames_reader_seek(r, (seed >> 33) % n) < 0 || frames_reader_next(r, &f) != 1)
            die("random access", frames_reader_error(r)->message);
    }
    *secs = now() - t0;
    *cpu = cpu_now() - c0;
    *bytes = frames_zstd_map_decompressed(frames_zstd_reader_map(r)) - before;
    *chunk = zi.size / (zi.chunks ? zi.chunks : 1);
    frames_reader_close(r);
}

static double best_cpu(const series *s) { return least(s->cpu, s->n); }

static void ratio(const char *what, const series *ours, const series *peer) {
    printf("  %-62s wall %5.2fx best %5.2fx median, CPU %5.2fx  (%s %.3f s wall %.3f s CPU; "
           "%s %.3f s wall %.3f s CPU)\n",
           what, best(peer) / best(ours), median(peer) / median(ours), best_cpu(peer) / best_cpu(ours),
           ours->name, best(ours), best_cpu(ours), peer->name, best(peer), best_cpu(peer));
}

static void run_input(const char *label, const char *plain, const char *dir, int reps, int pin_like,
                      uint64_t nwrite) {
    char z1[4200], z3[4200], tmp[4200];
    uint64_t size = file_size(plain), s1, s3, zw1, zw3, lz, count = 0, sums[4], bytes, chunk;
    frames_reader *r;
    frames_reader_info st;
    frames_error err;
    series rd[4] = {{"ours plain", {0}, 0, {0}}, {"ours .zst 1 thread", {0}, 0, {0}},
                    {"ours .zst 2 threads", {0}, 0, {0}}, {"libprotobuf plain", {0}, 0, {0}}};
    series wr[NWRITERS];
    double secs, cpu;
    int k, i;
    uint64_t m = BENCH_FRAMES_PER_TOC;
    if (frames_reader_open_path(&r, plain, NULL, &err) < 0) die("open", err.message);
    if (frames_reader_info_get(r, &st) == 0 && st.frames_per_toc) m = st.frames_per_toc;
    frames_reader_close(r);
    snprintf(z1, sizeof z1, "%s/bench-zstd-l1.frames.zst", dir);
    snprintf(z3, sizeof z3, "%s/bench-zstd-l3.frames.zst", dir);
    compress_file(plain, z1, 1, m);
    compress_file(plain, z3, FRAMES_ZSTD_DEFAULT_LEVEL, m);
    s1 = file_size(z1);
    s3 = file_size(z3);
    zw1 = piped_size("zstd -q -1 -c '%s'", plain);
    zw3 = piped_size("zstd -q -3 -c '%s'", plain);
    lz = piped_size("lz4 -q -1 -c '%s'", plain);
    printf("\n## %s: %s, %llu bytes\n", label, plain, (unsigned long long)size);
    printf("size (x smaller than the uncompressed trace)\n");
    printf("  ours level 1, 1 MiB chunks   %6.1fx  (whole-file zstd -1 %6.1fx: ours is %.0f %% of it)\n",
           (double)size / s1, (double)size / zw1, 100.0 * zw1 / s1);
    printf("  ours level 3, 1 MiB chunks   %6.1fx  (whole-file zstd -3 %6.1fx: ours is %.0f %% of it)\n",
           (double)size / s3, (double)size / zw3, 100.0 * zw3 / s3);
    printf("  whole-file lz4 -1            %6.1fx\n", (double)size / lz);
    for (k = 0; k < reps; k++) {
        for (i = 0; i < 4; i++) {
            int j = (i + k) % 4; /* rotate the order every repetition */
            uint64_t n = 0, sum = 0;
            double t0 = now(), c0 = cpu_now();
            if (j == 0) sum = ours_read(plain, 1, &n);
            else if (j == 1) sum = ours_read(z3, 1, &n);
            else if (j == 2) sum = ours_read(z3, 2, &n);
            else if (pbcxx_read(plain, &n, &sum) < 0) die("libprotobuf read", plain);
            rd[j].cpu[rd[j].n] = cpu_now() - c0;
            rd[j].t[rd[j].n++] = now() - t0;
            sums[j] = sum;
            if (j == 0) count = n;
            else if (n != count && count) die("read", "frame counts differ");
        }
    }
    if (sums[0] != sums[1] || sums[0] != sums[2] || (pin_like && sums[0] != sums[3]))
        die("read", "checksums differ");
    printf("read and decode every field (%llu frames, level 3 file)\n", (unsigned long long)count);
    ratio(".zst 1 thread vs libprotobuf on the plain file", &rd[1], &rd[3]);
    ratio(".zst 2 threads vs ours on the plain file", &rd[2], &rd[0]);
    ratio(".zst 1 thread vs ours on the plain file", &rd[1], &rd[0]);
    if (!pin_like) printf("  (libprotobuf reads std_frames only: its checksum is not compared here)\n");
    if (pin_like) {
        size_t w;
        memset(wr, 0, sizeof wr);
        for (w = 0; w < NWRITERS; w++) wr[w].name = writers[w].name;
        snprintf(tmp, sizeof tmp, "%s/bench-zstd-w.frames", dir);
        for (k = 0; k < reps; k++) {
            for (w = 0; w < NWRITERS; w++) {
                size_t j = (w + (size_t)k) % NWRITERS;
                double t0 = now(), c0 = cpu_now();
                if (writers[j].level < 0) {
                    if (pbcxx_write(tmp, nwrite) < 0) die("libprotobuf write", tmp);
                } else if (ours_write(tmp, nwrite, writers[j].level, writers[j].threads) < 0) {
                    die("write", tmp);
                }
                wr[j].cpu[wr[j].n] = cpu_now() - c0;
                wr[j].t[wr[j].n++] = now() - t0;
            }
        }
        unlink(tmp);
        printf("write (%llu frames; wall-clock is what the tracer waits for)\n", (unsigned long long)nwrite);
        for (w = 1; w + 1 < NWRITERS; w++) {
            char label[128];
            snprintf(label, sizeof label, "%s vs libprotobuf", writers[w].name);
            ratio(label, &wr[w], &wr[NWRITERS - 1]);
        }
        ratio("default .zst vs ours plain", &wr[1], &wr[0]);
    }
    random_access(z3, &secs, &cpu, &bytes, &chunk);
    printf("random access: 1000 random frames (seek + decode) of the .zst in %.3f s wall, %.3f s CPU "
           "(%.0f us CPU each), %.1f MB decompressed (%.2f chunk of %llu bytes per frame)\n",
           secs, cpu, cpu * 1e3, bytes / 1e6, (double)bytes / 1000.0 / (double)chunk,
           (unsigned long long)chunk);
    unlink(z1);
    unlink(z3);
}

int main(int argc, char **argv) {
    const char *dir = argc > 1 ? argv[1] : ".", *recorded = argc > 2 ? argv[2] : "-";
    uint64_t n = argc > 3 ? strtoull(argv[3], NULL, 10) : 1000000;
    int reps = argc > 4 ? atoi(argv[4]) : 3;
    char pin[4200];
    if (reps < 1 || reps > MAXREPS) reps = 3;
    if (strcmp(recorded, "-")) run_input("recorded by frames record", recorded, dir, reps, 0, n);
    snprintf(pin, sizeof pin, "%s/bench-zstd-pin.frames", dir);
    if (pbcxx_write(pin, n) < 0) die("libprotobuf write", pin);
    run_input("PIN-like (bench_codec)", pin, dir, reps, 1, n);
    unlink(pin);
    return 0;
}
