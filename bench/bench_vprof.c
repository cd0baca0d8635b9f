/* bench_vprof: throughput of frames_vprof.h against its peer, a decode-only pass over the
   same trace (what any consumer pays), in the same run. Traces:
   - synthetic: N std_frames with one memory operand each (70% 8-byte loads, 30% stores
     into a 64 Ki-slot working set with few distinct values, so every table is busy);
   - r10 x100: the frames of reference vector r10 (nops, no operands) written 100 times.
   usage: bench_vprof R10_PATH TMPDIR [N] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "frames.h"
#include "frames_vprof.h"

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *what, const char *msg) {
    fprintf(stderr, "bench_vprof: %s: %s\n", what, msg);
    exit(1);
}

static void write_synthetic(const char *path, uint64_t n) {
    frames_writer *w;
    frames_error err;
    frames_frame f;
    frames_operand op;
    uint64_t i, x = 88172645463325252ull, v;
    if (frames_writer_open_path(&w, path, NULL, NULL, &err) < 0) die(path, err.message);
    memset(&f, 0, sizeof f);
    f.kind = FRAMES_KIND_STD;
    f.std.thread_id = 1;
    f.std.rawbytes = frames_bytes_of("\x8b\x03", 2);
    f.std.has_post = 1;
    for (i = 0; i < n; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;   /* xorshift64 */
        memset(&op, 0, sizeof op);
        op.spec = FRAMES_MEM;
        op.address = 0x10000000u + 8 * (x & 0xffff);
        op.bit_length = 64;
        v = (x >> 20) & 3;                          /* four values: many repeats */
        op.value = frames_bytes_of(&v, 8);
        f.std.address = 0x400000 + 4 * ((x >> 32) & 1023);
        if ((x >> 40) % 10 < 7) {
            op.read = 1;
            f.std.pre = &op, f.std.npre = 1, f.std.post = NULL, f.std.npost = 0;
        } else {
            op.written = 1;
            f.std.pre = NULL, f.std.npre = 0, f.std.post = &op, f.std.npost = 1;
        }
        if (frames_writer_add(w, &f) < 0) die(path, frames_writer_error(w)->message);
    }
    if (frames_writer_close(w) < 0) die(path, "close failed");
}

static void write_repeated(const char *path, const char *src, int times) {
    frames_writer *w;
    frames_reader *r;
    frames_error err;
    frames_raw raw;
    int t, rc;
    if (frames_writer_open_path(&w, path, NULL, NULL, &err) < 0) die(path, err.message);
    for (t = 0; t < times; t++) {
        if (frames_reader_open_path(&r, src, NULL, &err) < 0) die(src, err.message);
        while ((rc = frames_reader_next_raw(r, &raw)) > 0)
            if (frames_writer_add_encoded(w, raw.payload.ptr, raw.payload.len) < 0) die(path, "add");
        frames_reader_close(r);
    }
    if (frames_writer_close(w) < 0) die(path, "close failed");
}

/* One pass; with_vprof = 0 is the decode-only peer. Returns seconds. */
static double pass(const char *path, int with_vprof, uint64_t *frames, frames_vprof_stats *out) {
    frames_reader *r;
    frames_vprof *vp = NULL;
    frames_error err;
    frames_frame f;
    double t0;
    uint64_t n = 0;
    if (frames_reader_open_path(&r, path, NULL, &err) < 0) die(path, err.message);
    if (with_vprof && frames_vprof_open(&vp, NULL, &err) < 0) die("vprof", err.message);
    t0 = now();
    while (frames_reader_next(r, &f) > 0) {
        n++;
        if (vp) frames_vprof_add_frame(vp, &f);
    }
    t0 = now() - t0;
    *frames = n;
    if (vp) {
        *out = *frames_vprof_stats_get(vp);
        frames_vprof_close(vp);
    }
    frames_reader_close(r);
    return t0;
}

/* The peer and vprof alternate (best of 5 each) so that both see the same machine load. */
static void measure(const char *label, const char *path) {
    uint64_t n = 0;
    frames_vprof_stats s;
    double dec = 1e30, vp = 1e30, t;
    int k;
    for (k = 0; k < 5; k++) {
        if ((t = pass(path, 0, &n, &s)) < dec) dec = t;
        if ((t = pass(path, 1, &n, &s)) < vp) vp = t;
    }
    printf("%-10s %9llu frames  decode only %7.2f Mframes/s  decode+vprof %7.2f Mframes/s  "
           "ratio %.2fx  (loads %llu, redundant %llu, stores %llu, silent %llu)\n",
           label, (unsigned long long)n, n / dec / 1e6, n / vp / 1e6, vp / dec,
           (unsigned long long)s.loads, (unsigned long long)s.redundant_loads,
           (unsigned long long)s.stores, (unsigned long long)s.silent_stores);
}

int main(int argc, char **argv) {
    char synth[4096], rep[4096];
    uint64_t n = argc > 3 ? strtoull(argv[3], NULL, 0) : 2000000;
    if (argc < 3) die("usage", "bench_vprof R10_PATH TMPDIR [N]");
    snprintf(synth, sizeof synth, "%s/bench_vprof_synthetic.frames", argv[2]);
    snprintf(rep, sizeof rep, "%s/bench_vprof_r10x100.frames", argv[2]);
    write_synthetic(synth, n);
    write_repeated(rep, argv[1], 100);
    measure("synthetic", synth);
    measure("r10 x100", rep);
    printf("%s\n", synth);
    return 0;
}
