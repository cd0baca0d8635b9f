/* bench_sym: symbolising a million distinct pcs with frames_sym.h (sorted symbol table,
   one binary search per pc), against its peer addr2line on the same file in the same run
   (bench/bench_sym.sh times addr2line on the first M of the same addresses).
   The module is FILE's executable segment mapped at a made-up base; the pcs are N
   distinct addresses spread over it, in random order (no cache hits).
   usage: bench_sym FILE VADDR MEMSZ N ADDR_OUT M
   prints: load time, lookups per second with symbols, with symbols and file:line (when
   libdw is built in), and writes the first M file addresses to ADDR_OUT. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "frames.h"
#include "frames_sym.h"

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *what) {
    fprintf(stderr, "bench_sym: %s\n", what);
    exit(1);
}

/* One pass over every pc; returns seconds and counts what was found. */
static double run(const char *file, uint64_t lo, uint64_t hi, const uint64_t *pcs, size_t n,
                  unsigned flags, double *load, size_t *named, size_t *lined) {
    frames_sym_options o;
    frames_sym *s;
    frames_error err;
    frames_sym_loc loc;
    double t0, t1;
    size_t i;
    frames_sym_options_default(&o);
    o.flags = flags;
    *named = *lined = 0;
    t0 = now();
    if (frames_sym_open(&s, &o, &err) < 0) die(err.message);
    if (frames_sym_add_module(s, file, strlen(file), lo, hi, NULL, 0) < 0) die("add_module");
    if (frames_sym_lookup(s, lo, &loc) < 0) die("lookup");   /* reads the file */
    if (!(loc.found & FRAMES_SYM_FOUND_ADDRESS)) die(frames_sym_warning(s, 0));
    t1 = now();
    *load = t1 - t0;
    for (i = 0; i < n; i++) {
        if (frames_sym_lookup(s, pcs[i], &loc) < 0) die("lookup");
        *named += (loc.found & FRAMES_SYM_FOUND_SYMBOL) != 0;
        *lined += (loc.found & FRAMES_SYM_FOUND_LINE) != 0;
    }
    t0 = now() - t1;
    frames_sym_close(s);
    return t0;
}

int main(int argc, char **argv) {
    const char *file;
    uint64_t vaddr, memsz, lo, hi, span, base = 0x7f0000000000ull, x = 88172645463325252ull;
    size_t n, m, i, named, lined;
    uint64_t *pcs;
    double t, load;
    FILE *out;
    frames_sym_info info;
    frames_sym *probe;
    frames_error err;
    if (argc != 7) die("usage: bench_sym FILE VADDR MEMSZ N ADDR_OUT M");
    file = argv[1];
    vaddr = strtoull(argv[2], NULL, 0);
    memsz = strtoull(argv[3], NULL, 0);
    n = (size_t)strtoull(argv[4], NULL, 0);
    m = (size_t)strtoull(argv[6], NULL, 0);
    lo = base + (vaddr & ~(uint64_t)4095);
    hi = base + ((vaddr + memsz + 4095) & ~(uint64_t)4095) - 1;
    span = memsz;
    if (n > span) n = (size_t)span;
    if (!(pcs = (uint64_t *)malloc(n * sizeof *pcs))) die("out of memory");
    for (i = 0; i < n; i++) pcs[i] = base + vaddr + (uint64_t)((double)i * (double)span / (double)n);
    for (i = n; i > 1; i--) {   /* shuffle (xorshift64) */
        uint64_t j, tmp;
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        j = x % i;
        tmp = pcs[i - 1], pcs[i - 1] = pcs[j], pcs[j] = tmp;
    }
    if (!(out = fopen(argv[5], "w"))) die("cannot write the address file");
    for (i = 0; i < m && i < n; i++) fprintf(out, "0x%llx\n", (unsigned long long)(pcs[i] - base));
    fclose(out);

    printf("file %s: executable segment of %llu bytes, %zu distinct pcs in random order\n", file,
           (unsigned long long)memsz, n);
    t = run(file, lo, hi, pcs, n, FRAMES_SYM_NO_LINES, &load, &named, &lined);
    frames_sym_open(&probe, NULL, &err);
    frames_sym_add_module(probe, file, strlen(file), lo, hi, NULL, 0);
    {
        frames_sym_loc loc;
        frames_sym_lookup(probe, lo, &loc);
    }
    frames_sym_info_get(probe, &info);
    frames_sym_close(probe);
    printf("load (map + parse %llu symbols): %.3f s\n", (unsigned long long)info.symbols, load);
    printf("symbols:           %.3f s for %zu pcs = %.0f ns/pc (%zu named)\n", t, n, t * 1e9 / (double)n, named);
    printf("BENCH symbols_ns_per_pc %.1f\n", t * 1e9 / (double)n);
    if (info.have_dw) {
        t = run(file, lo, hi, pcs, n, 0, &load, &named, &lined);
        printf("symbols+file:line: %.3f s for %zu pcs = %.0f ns/pc (%zu with a line; DWARF setup %.3f s)\n",
               t, n, t * 1e9 / (double)n, lined, load);
        printf("BENCH lines_ns_per_pc %.1f\n", t * 1e9 / (double)n);
    }
    free(pcs);
    return 0;
}
