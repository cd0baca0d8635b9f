/* vg_stream.c - the Valgrind engine's converter (tools/record/vg_convert.c) alone, on a
   saved tool stream: `vg_stream STREAM OUT` converts the pipe bytes the frames tool wrote
   (capture them with `valgrind --tool=frames --frames-fd=3 PROGRAM 3>STREAM`, VALGRIND_LIB
   = BUILD/vg) into the trace OUT (/dev/null: encoded, thrown away) and prints the
   converter's CPU time per instruction. The same stream gives the same trace byte for
   byte, unlike two recordings of one program (pids, random bytes, times differ): the
   check that a faster converter writes exactly what the old one wrote
   (bench/bench_record_cpu.sh builds this file against both sources). Build:
     cc -O2 -D_GNU_SOURCE -DFRAMES_HAVE_CAPSTONE -I. -Itools bench/vg_stream.c -ldl -lpthread */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#define FRAMES_IMPLEMENTATION
#include "frames.h"
#include "record/common.c"
#include "record/proc.c"
#include "record/x86.c"
#include "record/vg_convert.c"

#include <time.h>

static double cpu_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
    static uint8_t buf[8 << 20];
    frames_writer_options o;
    frames_writer *w;
    frames_error err;
    rec_run run;
    rv_conv *c;
    FILE *in;
    size_t have = 0, n, used;
    double t0;
    if (argc != 3) {
        fprintf(stderr, "usage: vg_stream STREAM OUT\n");
        return 2;
    }
    if (!(in = fopen(argv[1], "rb"))) {
        perror(argv[1]);
        return 1;
    }
    frames_writer_options_default(&o);
    o.arch = FRAMES_ARCH_I386;
    o.machine = FRAMES_MACH_X86_64;
    if (frames_writer_open_path(&w, argv[2], &o, NULL, &err) < 0) {
        fprintf(stderr, "%s: %s\n", argv[2], err.message);
        return 1;
    }
    memset(&run, 0, sizeof run);
    run.out = argv[2];
    run.w = w;
    run.shared.writer = w;
    run.dec = rx_open();
    if (!run.dec || !(c = rv_conv_new(&run))) {
        fprintf(stderr, "vg_stream: no capstone or no memory\n");
        return 1;
    }
    t0 = cpu_seconds();
    while ((n = fread(buf + have, 1, sizeof buf - have, in)) > 0 && !run.failed) {
        have += n;
        used = rv_conv_chunks(c, buf, have);
        memmove(buf, buf + used, have - used);
        have -= used;
    }
    rv_conv_end(c, 0);
    rv_conv_free(c);
    if (frames_writer_close(w) < 0 || run.failed) return 1;
    printf("%llu instructions, %.1f ns CPU per instruction (converter and writer)\n",
           (unsigned long long)run.instructions, (cpu_seconds() - t0) * 1e9 / (double)(run.instructions ? run.instructions : 1));
    rx_close(run.dec);
    fclose(in);
    return 0;
}
