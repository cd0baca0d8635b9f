/* bench_replay: random-access latency of frames_replay.h after the index is open:
   `state` (goto a random instruction and read every register) and last-write-before
   (the last write to the 8 bytes at rsp before a random instruction), 1,000 queries
   each, median and 90th percentile in milliseconds. Usage: bench_replay TRACE [N [THREADS]]:
   N 0 only opens the trace (building its index when it has none, on THREADS threads:
   frames_replay_options' build_threads: 1 one thread, 2 two segments, default 0
   automatic). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "frames_replay.h"

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static uint64_t rnd(uint64_t *s) {   /* xorshift64: the same queries every run */
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static void report(const char *what, double *t, int n) {
    qsort(t, (size_t)n, sizeof *t, cmp);
    printf("%-28s median %.3f ms, p90 %.3f ms (%d queries)\n", what, t[n / 2], t[n * 9 / 10], n);
}

int main(int argc, char **argv) {
    frames_replay *r;
    frames_replay_info info;
    frames_replay_insn in;
    frames_replay_query q;
    frames_error err;
    frames_replay_options o;
    uint64_t seed = 0x9E3779B97F4A7C15ull, idx;
    int n = argc > 2 ? atoi(argv[2]) : 1000, i, found = 0;
    double *ts, *tw, t0;
    if (argc < 2) return fprintf(stderr, "usage: bench_replay TRACE [N [THREADS]]\n"), 2;
    frames_replay_options_default(&o);
    if (argc > 3) o.build_threads = (uint32_t)atoi(argv[3]);
    t0 = now();
    if (frames_replay_open(&r, argv[1], &o, &err) < 0) return fprintf(stderr, "%s\n", err.message), 1;
    if (n <= 0) {
        frames_replay_close(r);
        return 0;
    }
    frames_replay_info_get(r, &info);
    printf("open (index %s): %.1f ms, %llu instructions, index %llu bytes = %.3f bytes/instruction\n",
           info.index_built ? "built" : "read", now() - t0, (unsigned long long)info.instructions,
           (unsigned long long)info.index_bytes, (double)info.index_bytes / (double)(info.instructions ? info.instructions : 1));
    ts = (double *)malloc(sizeof *ts * (size_t)n);
    tw = (double *)malloc(sizeof *tw * (size_t)n);
    for (i = 0; i < n; i++) {
        uint64_t at = rnd(&seed) % info.instructions;
        uint8_t v[64];
        size_t k, sz;
        const frames_replay_reg *reg;
        t0 = now();
        if (frames_replay_goto(r, at, &err) < 0) return fprintf(stderr, "%s\n", err.message), 1;
        memset(&in, 0, sizeof in);   /* a position past the end has no instruction */
        frames_replay_insn_get(r, &in);
        for (k = 0; (reg = frames_replay_reg_at(r, k)) != NULL; k++)
            frames_replay_reg_get(r, in.thread, reg->name, v, sizeof v, &sz);
        ts[i] = now() - t0;
        memset(&q, 0, sizeof q);
        q.what = FRAMES_REPLAY_MEM_WRITE;
        q.len = 8;
        if (frames_replay_reg_get(r, in.thread, "rsp", v, sizeof v, &sz) == 1) {
            memcpy(&q.addr, v, 8);
        } else {
            q.addr = in.pc;   /* no rsp known: a search that finds nothing */
        }
        t0 = now();
        if (frames_replay_find(r, &q, at, -1, &idx, &err) == FRAMES_OK) found++;
        tw[i] = now() - t0;
    }
    report("state (goto + registers)", ts, n);
    report("last write before", tw, n);
    printf("last-write queries that found a write: %d of %d\n", found, n);
    frames_replay_close(r);
    free(ts);
    free(tw);
    return 0;
}
