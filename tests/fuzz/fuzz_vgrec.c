// fuzz-flags: -max_len=65536

/* fuzz_vgrec - the converter of the Valgrind tool's record stream (tools/record/
   vg_convert.c; the stream: tools/record/vg/vgrec.h), which is input from another program.
   The input is the pipe's bytes (chunks of records), given in two pieces cut where its
   first byte says, then the end of the program with a wait status from its second.

   Invariants: no crash, overflow or leak whatever the bytes; a stream the converter
   accepts (the run not failed) gives a finished trace whose every frame validates; a
   rejected one says why. */
#include "fuzz_util.h"

#define RV_MAX_THREADS 16 /* each thread's recorder holds 256 KiB */
#define RV_MAX_PROCS 64
#include "../../tools/record/common.c"
#include "../../tools/record/proc.c"
#include "../../tools/record/x86.c"
#include "../../tools/record/vg_convert.c"

static void check_trace(const uint8_t *data, size_t size) {
    frames_reader *r;
    frames_frame f;
    frames_error err;
    int rc;
    FZ_CHECK(frames_reader_open_memory(&r, data, size, NULL, &err) == 0);
    while ((rc = frames_reader_next(r, &f)) > 0) FZ_CHECK(frames_validate_frame(&f, &err) == 0);
    FZ_CHECK(rc == 0);
    frames_reader_close(r);
}

/* Feed the converter everything, keeping what it did not consume, as the engine does. */
static void feed(rv_conv *c, rec_run *run, uint8_t *pending, size_t *have, const uint8_t *d, size_t n) {
    size_t used;
    memcpy(pending + *have, d, n);
    *have += n;
    used = rv_conv_chunks(c, pending, *have);
    FZ_CHECK(used <= *have);
    memmove(pending, pending + used, *have - used);
    *have -= used;
    (void)run;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static const int statuses[4] = {0, 3 << 8, 9 /* SIGKILL */, 11 /* SIGSEGV */};
    frames_membuf m;
    frames_sink sink;
    frames_writer_options o;
    frames_writer *w;
    frames_error err;
    rec_run run;
    rv_conv *c;
    uint8_t *pending;
    size_t cut, have = 0;
    int status;
    if (size < 2) return 0;
    cut = size > 2 ? data[0] % (size - 1) : 0;
    status = statuses[data[1] & 3];
    memset(&run, 0, sizeof run);
    if (data[1] & 4) {
        run.sample_on = 3;
        run.sample_off = 2;
    }
    data += 2;
    size -= 2;
    frames_membuf_init(&m, NULL);
    sink = frames_sink_memory(&m);
    frames_writer_options_default(&o);
    o.arch = FRAMES_ARCH_I386;
    o.machine = FRAMES_MACH_X86_64;
    if (frames_writer_open(&w, &sink, &o, NULL, &err) < 0) return 0;
    run.out = "fuzz.frames";
    run.silent = 1;
    run.w = w;
    run.shared.writer = w;
    if (!(pending = (uint8_t *)malloc(size + 1)) || !(c = rv_conv_new(&run))) {
        free(pending);
        frames_writer_close(w);
        frames_membuf_free(&m);
        return 0;
    }
    feed(c, &run, pending, &have, data, cut);
    if (!run.failed) feed(c, &run, pending, &have, data + cut, size - cut);
    if (!run.failed) rv_conv_end(c, status);
    rv_conv_free(c);
    free(pending);
    if (frames_writer_close(w) == 0 && !run.failed) check_trace(m.data, m.size);
    frames_membuf_free(&m);
    return 0;
}
