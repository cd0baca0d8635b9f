/* bench_interop - cost of the frames_interop.h analyses relative to decoding alone.
   Writes a synthetic x86-64 trace (loops of short blocks in 4 threads, register and
   memory operands, a module map), then times, over the same file in the same run:
   decode only (the peer: every analysis has to decode), stat, drcov grouping + writing,
   Tenet conversion, and a TOC-aligned slice of 10% of the frames. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define FRAMES_IMPLEMENTATION
#include "frames.h"
#define FRAMES_INTEROP_IMPLEMENTATION
#include "frames_interop.h"

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int sink(void *ctx, const char *s, size_t n) {
    (void)s;
    *(size_t *)ctx += n;
    return 0;
}

static void die(const char *what, const frames_error *e) {
    fprintf(stderr, "bench_interop: %s: %s\n", what, e ? e->message : "");
    exit(1);
}

static void make_trace(const char *path, uint64_t n) {
    static const uint8_t code[4] = {0x48, 0x01, 0xd8, 0x90};
    frames_writer *w;
    frames_writer_options o;
    frames_error err;
    frames_frame f;
    frames_operand pre[3], post[2];
    uint64_t i, rax = 0, rbx = 1, mem = 0;
    frames_writer_options_default(&o);
    o.arch = FRAMES_ARCH_I386;
    o.machine = FRAMES_MACH_X86_64;
    if (frames_writer_open_path(&w, path, &o, NULL, &err) < 0) die("open output", &err);
    memset(&f, 0, sizeof f);
    f.kind = FRAMES_KIND_MODLOAD;
    f.modload.module_name = frames_str("/usr/bin/bench");
    f.modload.low_address = 0x400000;
    f.modload.high_address = 0x4fffff;
    if (frames_writer_add(w, &f) < 0) die("add", frames_writer_error(w));
    memset(pre, 0, sizeof pre);
    memset(post, 0, sizeof post);
    pre[0].spec = pre[1].spec = post[0].spec = FRAMES_REG;
    pre[0].name = post[0].name = frames_str("RAX");
    pre[1].name = frames_str("RBX");
    pre[0].bit_length = pre[1].bit_length = post[0].bit_length = 64;
    pre[0].read = pre[1].read = post[0].written = 1;
    pre[2].spec = post[1].spec = FRAMES_MEM;
    pre[2].bit_length = post[1].bit_length = 64;
    pre[2].read = post[1].written = 1;
    for (i = 0; i < n; i++) {
        uint64_t tid = 1 + (i / 64) % 4, k = i % 64;
        /* blocks of 8 three-byte instructions at 0x401000 + 0x100 * (k / 8) per thread */
        uint64_t pc = 0x401000 + 0x10000 * (tid - 1) + 0x100 * ((i / 512) % 97) + 3 * (k % 8) +
                      0x20 * (k / 8);
        memset(&f, 0, sizeof f);
        f.kind = FRAMES_KIND_STD;
        f.std.address = pc;
        f.std.thread_id = tid;
        f.std.rawbytes = frames_bytes_of(code, 3);
        pre[0].value = frames_bytes_of(&rax, 8);
        pre[1].value = frames_bytes_of(&rbx, 8);
        pre[2].address = post[1].address = 0x7ff000 + 8 * (i % 512);
        pre[2].value = post[1].value = frames_bytes_of(&mem, 8);
        f.std.pre = pre;
        f.std.npre = (i % 4 == 0) ? 3 : 2;
        f.std.post = post;
        f.std.npost = (i % 4 == 1) ? 2 : 1;
        f.std.has_post = 1;
        if (frames_writer_add(w, &f) < 0) die("add", frames_writer_error(w));
        rax += rbx;
        mem ^= i;
    }
    if (frames_writer_close(w) < 0) die("finish", NULL);
}

typedef int (*visit_fn)(void *obj, const frames_frame *f);

static double pass(const char *path, visit_fn fn, void *obj) {
    frames_reader *r;
    frames_error err;
    frames_frame f;
    double t0 = now();
    int rc;
    if (frames_reader_open_path(&r, path, NULL, &err) < 0) die("open", &err);
    while ((rc = frames_reader_next(r, &f)) > 0)
        if (fn && fn(obj, &f) < 0) die("analysis", NULL);
    if (rc < 0) die("read", frames_reader_error(r));
    frames_reader_close(r);
    return now() - t0;
}

static int v_stat(void *o, const frames_frame *f) { return frames_stats_add_frame((frames_stats *)o, f); }
static int v_cov(void *o, const frames_frame *f) { return frames_cov_add_frame((frames_cov *)o, f); }
static size_t tenet_bytes;
static int v_tenet(void *o, const frames_frame *f) {
    return frames_tenet_add_frame((frames_tenet *)o, f, sink, &tenet_bytes);
}

static double best(double a, double b) { return a < b ? a : b; }

int main(int argc, char **argv) {
    const char *path = argc > 1 ? argv[1] : "/tmp/bench_interop.frames";
    uint64_t n = argc > 2 ? strtoull(argv[2], NULL, 0) : 2000000, count = 0;
    frames_error err;
    double t_dec = 1e9, t_stat = 1e9, t_cov = 1e9, t_tenet = 1e9, t_slice = 1e9, t;
    int rep;
    size_t drcov_bytes = 0;
    frames_cov_info ci;
    make_trace(path, n);
    for (rep = 0; rep < 3; rep++) {
        frames_stats *s;
        frames_cov *c;
        frames_tenet *tn;
        frames_reader *r;
        frames_writer *w;
        frames_slice_filter flt;
        frames_writer_options o;
        t_dec = best(t_dec, pass(path, NULL, NULL));
        if (frames_stats_open(&s, NULL, &err) < 0) die("stats", &err);
        t = now();
        pass(path, v_stat, s);
        frames_stats_finish(s);
        t_stat = best(t_stat, now() - t);
        frames_stats_close(s);
        if (frames_cov_open(&c, NULL, &err) < 0) die("cov", &err);
        t = now();
        pass(path, v_cov, c);
        frames_cov_finish(c);
        drcov_bytes = 0;
        frames_cov_write_drcov(c, sink, &drcov_bytes);
        t_cov = best(t_cov, now() - t);
        frames_cov_info_get(c, &ci);
        frames_cov_close(c);
        if (frames_tenet_open(&tn, FRAMES_TENET_AMD64, NULL, NULL, &err) < 0) die("tenet", &err);
        tenet_bytes = 0;
        t_tenet = best(t_tenet, pass(path, v_tenet, tn));
        frames_tenet_close(tn);
        /* slice 10% from the middle of the trace */
        if (frames_reader_open_path(&r, path, NULL, &err) < 0) die("open", &err);
        frames_writer_options_like(r, &o);
        if (frames_writer_open_path(&w, "/tmp/bench_interop_slice.frames", &o,
                                    frames_reader_meta(r), &err) < 0)
            die("slice out", &err);
        frames_slice_filter_default(&flt);
        flt.first = n / 2;
        flt.end = n / 2 + n / 10;
        t = now();
        if (frames_slice(r, w, &flt, NULL, NULL, &count, &err) < 0) die("slice", &err);
        frames_writer_close(w);
        t_slice = best(t_slice, now() - t);
        frames_reader_close(r);
    }
    remove("/tmp/bench_interop_slice.frames");
    printf("trace: %llu std frames, %d threads, %llu unique blocks, drcov %zu bytes, tenet %zu bytes\n",
           (unsigned long long)n, 4, (unsigned long long)ci.nblocks, drcov_bytes, tenet_bytes);
    printf("%-28s %8.3f s  %6.1f ns/frame  (peer)\n", "decode only", t_dec, 1e9 * t_dec / (double)n);
    printf("%-28s %8.3f s  %6.1f ns/frame  %5.2fx decode\n", "stat", t_stat, 1e9 * t_stat / (double)n, t_stat / t_dec);
    printf("%-28s %8.3f s  %6.1f ns/frame  %5.2fx decode\n", "drcov (group + write)", t_cov, 1e9 * t_cov / (double)n, t_cov / t_dec);
    printf("%-28s %8.3f s  %6.1f ns/frame  %5.2fx decode\n", "tenet (format, no I/O)", t_tenet, 1e9 * t_tenet / (double)n, t_tenet / t_dec);
    printf("%-28s %8.3f s  %6.1f ns/frame  %5.2fx decode of all\n", "slice 10% (seek + copy)", t_slice,
           1e9 * t_slice / (double)count, t_slice / t_dec);
    return 0;
}
