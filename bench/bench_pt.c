/* bench_pt.c - Intel PT to frames against a bare libipt decoder loop, same input, same run.

   A long trace is synthesised with libipt's encoder over real x86-64 code (tests/ptsynth.h).
   Timed, each the best of R runs (CPU time of this process: the machine may be shared):
     insn-bare   pt_insn_sync_forward/_next/_event loop, nothing done per instruction
     block-bare  the same with the block decoder (instructions counted per block)
     frames      frames_pt_decode, block path, writing the frames file
     frames-insn frames_pt_decode on the instruction-flow decoder, writing the frames file
   Printed: ns per instruction, frames / insn-bare (target <= 1.25) and the block path's
   gain over the insn path. Both frames files are checked to hold the walker's addresses.

   usage: bench_pt [INSNS [RUNS [DIR]]]   (defaults 10000000, 3, $TMPDIR or /tmp) */
#define _GNU_SOURCE 1
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "frames.h"
#include "frames_pt.h"
#include "ptsynth.h"

#define BASE 0x400000ull

static const char *code_path;
static const uint8_t *trace;
static size_t trace_len;

static double cpu_now(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
           ru.ru_stime.tv_usec / 1e6;
}

static double wall_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static struct pt_image *image_of(struct pt_image_section_cache *isc) {
    struct pt_image *img = pt_image_alloc(NULL);
    int isid = pt_iscache_add_file(isc, code_path, 0, sizeof ptsynth_code, BASE);
    if (!img || isid < 0 || pt_image_add_cached(img, isc, isid, NULL) < 0) {
        fprintf(stderr, "bench_pt: cannot set up the image\n");
        exit(1);
    }
    return img;
}

static void config_of(struct pt_config *c) {
    pt_config_init(c);
    c->begin = (uint8_t *)(uintptr_t)trace;
    c->end = (uint8_t *)(uintptr_t)(trace + trace_len);
}

/* The loop every libipt user writes: sync, drain events, next, until the end. */
static uint64_t insn_bare(uint64_t *hash) {
    struct pt_image_section_cache *isc = pt_iscache_alloc(NULL);
    struct pt_image *img = image_of(isc);
    struct pt_config c;
    struct pt_insn_decoder *d;
    uint64_t n = 0, h = 0xcbf29ce484222325ull;
    config_of(&c);
    d = pt_insn_alloc_decoder(&c);
    pt_insn_set_image(d, img);
    for (;;) {
        int st = pt_insn_sync_forward(d);
        if (st < 0) break;
        for (;;) {
            struct pt_insn in;
            while (st & pts_event_pending) {
                struct pt_event ev;
                if ((st = pt_insn_event(d, &ev, sizeof ev)) < 0) break;
            }
            if (st < 0 || (st & pts_eos)) break;
            st = pt_insn_next(d, &in, sizeof in);
            if (in.iclass != ptic_error) {
                n++;
                h = (h ^ in.ip) * 0x100000001b3ull;
            }
            if (st < 0) break;
        }
        if (st == -pte_eos) break;
    }
    pt_insn_free_decoder(d);
    pt_image_free(img);
    pt_iscache_free(isc);
    *hash = h;
    return n;
}

static uint64_t block_bare(uint64_t *hash) {
    struct pt_image_section_cache *isc = pt_iscache_alloc(NULL);
    struct pt_image *img = image_of(isc);
    struct pt_config c;
    struct pt_block_decoder *d;
    uint64_t n = 0, h = 0;
    config_of(&c);
    d = pt_blk_alloc_decoder(&c);
    pt_blk_set_image(d, img);
    for (;;) {
        int st = pt_blk_sync_forward(d);
        if (st < 0) break;
        for (;;) {
            struct pt_block b;
            while (st & pts_event_pending) {
                struct pt_event ev;
                if ((st = pt_blk_event(d, &ev, sizeof ev)) < 0) break;
            }
            if (st < 0 || (st & pts_eos)) break;
            memset(&b, 0, sizeof b);
            st = pt_blk_next(d, &b, sizeof b);
            n += b.ninsn;
            h += b.ip;
            if (st < 0) break;
        }
        if (st == -pte_eos) break;
    }
    pt_blk_free_decoder(d);
    pt_image_free(img);
    pt_iscache_free(isc);
    *hash = h;
    return n;
}

static uint64_t to_frames(int decoder, const char *out) {
    frames_pt_options o;
    frames_pt *pt;
    frames_pt_stats st;
    frames_writer *w;
    frames_error err;
    frames_pt_options_default(&o);
    o.decoder = decoder;
    o.default_tid = 1;
    if (frames_pt_open(&pt, &o, &err) < 0 || frames_pt_add_raw(pt, code_path, 0, 0, BASE, &err) < 0 ||
        frames_pt_set_trace(pt, trace, trace_len, &err) < 0 ||
        frames_writer_open_path(&w, out, NULL, NULL, &err) < 0) {
        fprintf(stderr, "bench_pt: %s\n", err.message);
        exit(1);
    }
    if (frames_pt_decode(pt, w, &st, &err) < 0 || frames_writer_close(w) < 0) {
        fprintf(stderr, "bench_pt: %s\n", err.message);
        exit(1);
    }
    frames_pt_close(pt);
    return st.std_frames;
}

/* The std_frame addresses of a frames file, hashed like the walker does. */
static uint64_t frames_hash(const char *path, uint64_t *n) {
    frames_reader *r;
    frames_frame f;
    frames_error err;
    uint64_t h = 0xcbf29ce484222325ull;
    int rc;
    *n = 0;
    if (frames_reader_open_path(&r, path, NULL, &err) < 0) {
        fprintf(stderr, "bench_pt: %s\n", err.message);
        exit(1);
    }
    while ((rc = frames_reader_next(r, &f)) > 0)
        if (f.kind == FRAMES_KIND_STD) {
            h = (h ^ f.std.address) * 0x100000001b3ull;
            (*n)++;
        }
    frames_reader_close(r);
    return h;
}

typedef struct result {
    double cpu, wall;
} result;

#define MEASURE(res, runs, expr)                                   \
    do {                                                           \
        int r_;                                                    \
        (res).cpu = (res).wall = 1e30;                             \
        for (r_ = 0; r_ < (runs); r_++) {                          \
            double c0 = cpu_now(), w0 = wall_now(), c1, w1;        \
            expr;                                                  \
            c1 = cpu_now() - c0;                                   \
            w1 = wall_now() - w0;                                  \
            if (c1 < (res).cpu) (res).cpu = c1;                    \
            if (w1 < (res).wall) (res).wall = w1;                  \
        }                                                          \
    } while (0)

int main(int argc, char **argv) {
    uint64_t ninsn = argc > 1 ? strtoull(argv[1], NULL, 0) : 10000000ull;
    int runs = argc > 2 ? atoi(argv[2]) : 3;
    const char *dir = argc > 3 ? argv[3] : getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    char cpath[4096], fpath[4096], ipath[4096];
    ptsynth s;
    uint64_t calls[3], jumps[3], h1 = 0, h2 = 0, n1 = 0, n2 = 0, nf = 0, hf, hi, nfi;
    result ri, rb, rf, rfi;
    FILE *f;
    if (runs < 1) runs = 1;
    snprintf(cpath, sizeof cpath, "%s/bench-pt-%ld.code", dir, (long)getpid());
    snprintf(fpath, sizeof fpath, "%s/bench-pt-%ld.frames", dir, (long)getpid());
    snprintf(ipath, sizeof ipath, "%s/bench-pt-%ld-insn.frames", dir, (long)getpid());
    code_path = cpath;
    if (!(f = fopen(cpath, "wb")) || fwrite(ptsynth_code, 1, sizeof ptsynth_code, f) != sizeof ptsynth_code ||
        fclose(f) != 0) {
        fprintf(stderr, "bench_pt: cannot write %s\n", cpath);
        return 1;
    }
    ptsynth_init_default(&s, BASE, 42, calls, jumps);
    s.psb_every = 4096;
    if (ptsynth_walk(&s, BASE, ninsn) < 0) {
        fprintf(stderr, "bench_pt: synthesis failed\n");
        return 1;
    }
    trace = s.trace;
    trace_len = s.len;
    printf("trace: %llu instructions, %zu bytes of PT (synthesised over real x86-64 code)\n",
           (unsigned long long)s.nips, s.len);

    MEASURE(ri, runs, n1 = insn_bare(&h1));
    MEASURE(rb, runs, n2 = block_bare(&h2));
    MEASURE(rf, runs, nf = to_frames(FRAMES_PT_DECODER_BLOCK, fpath));
    MEASURE(rfi, runs, to_frames(FRAMES_PT_DECODER_INSN, ipath));

    hf = frames_hash(fpath, &nf);
    hi = frames_hash(ipath, &nfi);
    if (n1 != s.nips || h1 != s.hash || n2 != s.nips || nf != s.nips || hf != s.hash ||
        nfi != s.nips || hi != s.hash) {
        fprintf(stderr, "bench_pt: decoded instructions differ from the synthesised ones "
                        "(insn %llu, block %llu, frames %llu/%llu of %llu)\n",
                (unsigned long long)n1, (unsigned long long)n2, (unsigned long long)nf,
                (unsigned long long)nfi, (unsigned long long)s.nips);
        return 1;
    }
    {
        double per = 1e9 / (double)s.nips;
        FILE *ff = fopen(fpath, "rb");
        long fsize = 0;
        if (ff && fseek(ff, 0, SEEK_END) == 0) fsize = ftell(ff);
        if (ff) fclose(ff);
        printf("%-12s %8.3f s cpu %8.3f s wall %7.1f ns/insn\n", "insn-bare", ri.cpu, ri.wall, ri.cpu * per);
        printf("%-12s %8.3f s cpu %8.3f s wall %7.1f ns/insn\n", "block-bare", rb.cpu, rb.wall, rb.cpu * per);
        printf("%-12s %8.3f s cpu %8.3f s wall %7.1f ns/insn  (%ld bytes of frames)\n", "frames", rf.cpu,
               rf.wall, rf.cpu * per, fsize);
        printf("%-12s %8.3f s cpu %8.3f s wall %7.1f ns/insn\n", "frames-insn", rfi.cpu, rfi.wall, rfi.cpu * per);
        printf("ratio frames / insn-bare: %.2f (cpu), %.2f (wall); target <= 1.25\n", rf.cpu / ri.cpu,
               rf.wall / ri.wall);
        printf("block-decoder gain: frames-insn / frames = %.2fx (cpu)\n", rfi.cpu / rf.cpu);
    }
    remove(cpath);
    remove(fpath);
    remove(ipath);
    ptsynth_free(&s);
    return 0;
}
