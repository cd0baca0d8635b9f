/* bench_codec.c - write and fully decode N PIN-like std_frames with frames.h, libprotobuf
   C++ (as libtrace) and protobuf-c (as QEMU tracewrap), in one process, interleaved, and
   print frames/s, MB/s and our ratio to each peer; count frames without decoding against
   the memory bandwidth measured in the same run. Checks that the three files are
   byte-identical and that the three decodings give the same checksum.

   usage: bench_codec DIR [FRAMES [REPS]]   (files DIR/bench-*.frames, removed at the end)
   Run by bench/bench_codec.sh, which builds the peers from tests/frames.proto. */
#define FRAMES_IMPLEMENTATION
#include "../frames.h"
#include "codec.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------------------ frames.h */

static void fill_operand(frames_operand *op, const frames_bytes *names, const bench_insn *in,
                         const uint64_t *values, int which) {
    memset(op, 0, sizeof *op);
    if (which == 2) {
        op->spec = FRAMES_MEM;
        op->address = in->mem_address;
    } else {
        op->spec = FRAMES_REG;
        op->name = names[which == 3 ? in->reg_written : in->reg_read[which]];
    }
    op->bit_length = 64;
    op->read = which != 3;
    op->written = which == 3;
    op->taint.set = FRAMES_TAINT_NONE;
    op->taint.no_taint = 1;
    op->value = frames_bytes_of(&values[which], 8);
}

static void ours_meta(frames_meta *m, frames_bytes *tracer_args, frames_bytes *target_args,
                      frames_bytes *target_envp) {
    size_t i;
    memset(m, 0, sizeof *m);
    for (i = 0; i < 5; i++) tracer_args[i] = frames_str(bench_meta_tracer_args[i]);
    for (i = 0; i < 2; i++) target_args[i] = frames_str(bench_meta_target_args[i]);
    for (i = 0; i < 2; i++) target_envp[i] = frames_str(bench_meta_target_envp[i]);
    m->tracer_name = frames_str(BENCH_META_TRACER_NAME);
    m->tracer_args = tracer_args;
    m->ntracer_args = 5;
    m->tracer_version = frames_str(BENCH_META_TRACER_VERSION);
    m->target_path = frames_str(BENCH_META_TARGET_PATH);
    m->target_args = target_args;
    m->ntarget_args = 2;
    m->target_envp = target_envp;
    m->ntarget_envp = 2;
    m->target_md5sum = frames_bytes_of(bench_meta_md5, 16);
    m->fstats_size = BENCH_META_SIZE;
    m->fstats_atime = BENCH_META_ATIME;
    m->fstats_mtime = BENCH_META_MTIME;
    m->fstats_ctime = BENCH_META_CTIME;
    m->user = frames_str(BENCH_META_USER);
    m->host = frames_str(BENCH_META_HOST);
    m->time = BENCH_META_TIME;
}

static int ours_write(const char *path, uint64_t n) {
    frames_writer *w;
    frames_writer_options o;
    frames_error err;
    frames_meta meta;
    frames_bytes tracer_args[5], target_args[2], target_envp[2], names[16];
    frames_operand ops[4];
    uint64_t values[4], i;
    frames_frame f;
    bench_insn in;
    int k;
    for (k = 0; k < 16; k++) names[k] = frames_bytes_of(bench_reg_names[k], bench_reg_len[k]);
    ours_meta(&meta, tracer_args, target_args, target_envp);
    frames_writer_options_default(&o);
    o.arch = BENCH_ARCH;
    o.machine = BENCH_MACHINE;
    o.frames_per_toc = BENCH_FRAMES_PER_TOC;
    if (frames_writer_open_path(&w, path, &o, &meta, &err) < 0) {
        fprintf(stderr, "bench_codec: %s\n", err.message);
        return -1;
    }
    memset(&f, 0, sizeof f);
    for (i = 0; i < n; i++) {
        bench_gen(i, &in);
        values[0] = in.read_value[0];
        values[1] = in.read_value[1];
        values[2] = in.mem_value;
        values[3] = in.written_value;
        for (k = 0; k < 4; k++) fill_operand(&ops[k], names, &in, values, k);
        f.kind = FRAMES_KIND_STD;
        f.std.address = in.address;
        f.std.thread_id = in.thread_id;
        f.std.rawbytes = frames_bytes_of(in.raw, 3);
        f.std.pre = ops;
        f.std.npre = 3;
        f.std.post = ops + 3;
        f.std.npost = 1;
        f.std.has_post = 1;
        if (frames_writer_add(w, &f) < 0) {
            fprintf(stderr, "bench_codec: %s\n", frames_writer_error(w)->message);
            frames_writer_abandon(w);
            return -1;
        }
    }
    return frames_writer_close(w) < 0 ? -1 : 0;
}

static uint64_t sum_operands(const frames_operand *ops, uint32_t n) {
    uint64_t sum = 0;
    uint32_t i;
    for (i = 0; i < n; i++) {
        const frames_operand *op = &ops[i];
        sum += bench_sum_operand((op->spec & FRAMES_MEM) != 0, op->address, op->name.ptr,
                                 op->name.len, op->bit_length, op->read, op->written, op->index,
                                 op->base, op->taint.no_taint + op->taint.id + op->taint.multiple,
                                 op->value.ptr, op->value.len);
    }
    return sum;
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

/* RAM bandwidth: memcpy of a buffer the size of the file (read + write traffic). */
static uint8_t *g_src, *g_dst;
static size_t g_size;
static int ram_copy(const char *path, uint64_t *count, uint64_t *sum) {
    (void)path;
    memcpy(g_dst, g_src, g_size);
    *count = g_size;
    *sum = g_dst[g_size / 2];
    return 0;
}

/* ------------------------------------------------------------------ harness */

typedef int (*write_fn)(const char *path, uint64_t n);
typedef int (*read_fn)(const char *path, uint64_t *count, uint64_t *sum);

#define MAXREPS 64

typedef struct series {
    const char *name;
    double t[MAXREPS];
    int n;
} series;

/* CPU time of the process (user + system), not wall time: on a machine shared with other
   jobs, time spent waiting for a CPU would otherwise be charged to whoever ran then. */
static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}
static double best(const series *s) {
    double v[MAXREPS];
    memcpy(v, s->t, s->n * sizeof *v);
    qsort(v, (size_t)s->n, sizeof *v, cmp_double);
    return v[0];
}
static double median(const series *s) {
    double v[MAXREPS];
    memcpy(v, s->t, s->n * sizeof *v);
    qsort(v, (size_t)s->n, sizeof *v, cmp_double);
    return s->n % 2 ? v[s->n / 2] : (v[s->n / 2 - 1] + v[s->n / 2]) / 2;
}
static double worst(const series *s) {
    double v[MAXREPS];
    memcpy(v, s->t, s->n * sizeof *v);
    qsort(v, (size_t)s->n, sizeof *v, cmp_double);
    return v[s->n - 1];
}

static void die(const char *what, const char *path) {
    fprintf(stderr, "bench_codec: %s failed (%s)\n", what, path);
    exit(1);
}

static uint8_t *slurp(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    uint8_t *b;
    long n;
    if (!f || fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0) die("reading", path);
    rewind(f);
    b = (uint8_t *)malloc((size_t)n + 1);
    if (!b || fread(b, 1, (size_t)n, f) != (size_t)n) die("reading", path);
    fclose(f);
    *len = (size_t)n;
    return b;
}

/* Row: name, frames/s, MB/s and (for frames.h rows) ratio columns filled by the caller. */
static void row(const char *op, const series *s, uint64_t frames, double bytes, const char *note) {
    double b = best(s), m = median(s);
    printf("%-7s %-26s %12.0f %9.0f   %7.3f %7.3f %7.3f  %s\n", op, s->name, frames / b,
           bytes / b / 1e6, b, m, worst(s), note);
}

static void ratio_line(const char *what, const series *ours, const series *peer) {
    printf("  %-34s %6.1fx best   %6.1fx median   (%s)\n", what,
           best(peer) / best(ours), median(peer) / median(ours), peer->name);
}

int main(int argc, char **argv) {
    const char *dir = argc > 1 ? argv[1] : ".";
    uint64_t n = argc > 2 ? strtoull(argv[2], NULL, 10) : 1000000;
    int reps = argc > 3 ? atoi(argv[3]) : 3, r, k;
    char path[3][4096];
    static const char *const names[3] = {"frames.h", "libprotobuf 3.21 (C++)", "protobuf-c 1.4"};
    write_fn writers[3] = {ours_write, pbcxx_write, pbc_write};
    read_fn readers[3] = {ours_read, pbcxx_read, pbc_read};
    series w[3], d[3], cnt[2], bw[2];
    uint64_t counts[3], sums[3];
    size_t size[3];
    uint8_t *bytes[3];
    int identical;
    if (reps < 1 || reps > MAXREPS || n == 0) {
        fprintf(stderr, "usage: bench_codec DIR [FRAMES [REPS<=%d]]\n", MAXREPS);
        return 2;
    }
    for (k = 0; k < 3; k++) {
        snprintf(path[k], sizeof path[k], "%s/bench-%d.frames", dir, k);
        w[k].name = d[k].name = names[k];
        w[k].n = d[k].n = 0;
    }
    cnt[0].name = "frames.h (next_raw)";
    cnt[1].name = "stdio fread+fseek";
    bw[0].name = "mmap + sum of all words";
    bw[1].name = "memcpy in RAM";
    cnt[0].n = cnt[1].n = bw[0].n = bw[1].n = 0;

    for (r = 0; r < reps; r++) {
        /* rotate the order each repetition so that no one always runs first or last */
        for (k = 0; k < 3; k++) {
            int j = (k + r) % 3;
            double t0;
            unlink(path[j]);
            t0 = now();
            if (writers[j](path[j], n) < 0) die("write", path[j]);
            w[j].t[w[j].n++] = now() - t0;
        }
        for (k = 0; k < 3; k++) {
            int j = (k + r) % 3;
            double t0 = now();
            if (readers[j](path[j], &counts[j], &sums[j]) < 0) die("read", path[j]);
            d[j].t[d[j].n++] = now() - t0;
            if (counts[j] != n) die("frame count", path[j]);
        }
        if (sums[0] != sums[1] || sums[0] != sums[2]) {
            fprintf(stderr, "bench_codec: decoded checksums differ: %016llx %016llx %016llx\n",
                    (unsigned long long)sums[0], (unsigned long long)sums[1],
                    (unsigned long long)sums[2]);
            return 1;
        }
        {
            read_fn fns[4] = {ours_count, stdio_count, mmap_sum, NULL};
            series *ss[3] = {&cnt[0], &cnt[1], &bw[0]};
            uint64_t c, s;
            for (k = 0; k < 3; k++) {
                double t0 = now();
                if (fns[k](path[0], &c, &s) < 0) die("count", path[0]);
                ss[k]->t[ss[k]->n++] = now() - t0;
                if (k < 2 && c != n) die("count", path[0]);
            }
        }
    }

    /* same file bytes? (the encoding is canonical, so they must be) */
    for (k = 0; k < 3; k++) bytes[k] = slurp(path[k], &size[k]);
    identical = size[0] == size[1] && size[0] == size[2] &&
                memcmp(bytes[0], bytes[1], size[0]) == 0 && memcmp(bytes[0], bytes[2], size[0]) == 0;
    g_size = size[0];
    g_src = bytes[0];
    g_dst = (uint8_t *)malloc(g_size);
    if (!g_dst) die("malloc", "");
    memset(g_dst, 1, g_size);
    for (r = 0; r < reps; r++) {
        uint64_t c, s;
        double t0 = now();
        ram_copy(NULL, &c, &s);
        bw[1].t[bw[1].n++] = now() - t0;
    }

    printf("%llu std_frames (PIN-like: 3 raw bytes, 2 reg + 1 mem read, 1 reg write), "
           "%.1f bytes per frame with its size word, file %.1f MB; %d repetitions\n",
           (unsigned long long)n, (double)(size[0] - 56) / (double)n, size[0] / 1e6, reps);
    printf("%-7s %-26s %12s %9s   %7s %7s %7s\n", "", "", "frames/s", "MB/s", "best s",
           "median", "worst");
    printf("(times are CPU seconds, user + system, of this process)\n");
    for (k = 0; k < 3; k++) row("write", &w[k], n, (double)size[0], "");
    for (k = 0; k < 3; k++) row("decode", &d[k], n, (double)size[0], "");
    row("count", &cnt[0], n, (double)size[0], "");
    row("count", &cnt[1], n, (double)size[0], "");
    row("membw", &bw[0], n, (double)size[0], "(frames/s = file size at this speed)");
    row("membw", &bw[1], n, (double)size[0], "(copy: reads and writes the size)");
    printf("ratios (peer time / frames.h time, same run):\n");
    ratio_line("write", &w[0], &w[1]);
    ratio_line("write", &w[0], &w[2]);
    ratio_line("decode every field", &d[0], &d[1]);
    ratio_line("decode every field", &d[0], &d[2]);
    ratio_line("count without decoding", &cnt[0], &cnt[1]);
    printf("  %-34s %6.2f best   %6.2f median   (fraction of mmap+sum bandwidth)\n",
           "count speed vs memory bandwidth", best(&bw[0]) / best(&cnt[0]),
           median(&bw[0]) / median(&cnt[0]));
    printf("files: %s (%zu, %zu, %zu bytes)\n",
           identical ? "frames.h, libprotobuf and protobuf-c wrote byte-identical files"
                     : "FILES DIFFER",
           size[0], size[1], size[2]);
    printf("decoded checksums agree: %016llx\n", (unsigned long long)sums[0]);
    for (k = 0; k < 3; k++) {
        free(bytes[k]);
        unlink(path[k]);
    }
    free(g_dst);
    return identical ? 0 : 1;
}
