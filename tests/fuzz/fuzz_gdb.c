// fuzz-flags: -max_len=65536 -dict=tests/fuzz/gdb.dict

/* fuzz_gdb - the GDB remote protocol server (frames_gdb.h) on arbitrary client bytes,
   over a small x86-64 trace written once to a temporary file (two threads, register and
   memory operands, a loop for breakpoints and watchpoints).

   The first input byte chooses how the rest is cut into feeds (the parser must not care
   where reads end). Invariants:
   - the server never fails on input (only a failing transport ends it with an error);
   - everything it sends is '+', '-', or a packet $DATA#CS with the right checksum and no
     unescaped '$', '#', '*' or '}' in DATA, each at most PacketSize bytes of data;
   - memory held while serving is bounded by a constant (nothing is sized from the input),
     and the server's own memory is all freed on close. */
#include "fuzz_util.h"
#define FRAMES_REPLAY_IMPLEMENTATION
#include "frames_replay.h"
#define FRAMES_GDB_IMPLEMENTATION
#include "frames_gdb.h"
#include "fuzz_replay_trace.h"

#include <unistd.h>

static frames_replay *fz_replay;
static char fz_path[256], fz_index[300];

static void fz_cleanup(void) {
    frames_replay_close(fz_replay);
    unlink(fz_path);
    unlink(fz_index);
}

static void fz_init(void) {
    frames_error err;
    frames_replay_options ro;
    snprintf(fz_path, sizeof fz_path, "%s/fuzz-gdb-%ld.frames",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (long)getpid());
    snprintf(fz_index, sizeof fz_index, "%s.fridx", fz_path);
    fz_write_trace(fz_path, 64);
    frames_replay_options_default(&ro);
    ro.index_path = fz_index;
    FZ_CHECK(frames_replay_open(&fz_replay, fz_path, &ro, &err) == 0);
    atexit(fz_cleanup);
}

/* The checking transport: whole acks or packets per call (the server sends them so). */
static int fz_check_output(void *ctx, const void *data, size_t n) {
    const char *p = (const char *)data;
    size_t i;
    unsigned sum = 0, cs;
    (void)ctx;
    if (n == 1 && (p[0] == '+' || p[0] == '-')) return 0;
    FZ_CHECK(n >= 4 && p[0] == '$' && p[n - 3] == '#');
    FZ_CHECK(n - 4 <= 2 * FRAMES_GDB_PACKET_SIZE);
    for (i = 1; i < n - 3; i++) {
        FZ_CHECK(p[i] != '$' && p[i] != '#' && p[i] != '*');
        if (p[i] == '}') FZ_CHECK(i + 1 < n - 3);
        sum += (unsigned char)p[i];
    }
    FZ_CHECK(sscanf(p + n - 2, "%2x", &cs) == 1 && cs == (sum & 0xff));
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    frames_gdb *g;
    frames_gdb_options o;
    frames_error err;
    size_t base, off = 0, cut;
    int rc = FRAMES_OK;
    if (!fz_replay) fz_init();
    if (size < 1) return 0;
    cut = (size_t)data[0] + 1;   /* feed size */
    data++;
    size--;
    base = hc_state.live;
    hc_mark();
    frames_gdb_options_default(&o);
    o.write = fz_check_output;
    FZ_CHECK(frames_gdb_open(&g, fz_replay, &o, &err) == 0);
    while (off < size && rc == FRAMES_OK) {
        size_t n = size - off < cut ? size - off : cut;
        rc = frames_gdb_feed(g, data + off, n);
        FZ_CHECK(rc == FRAMES_OK || rc == FRAMES_GDB_CLOSED);
        off += n;
    }
    frames_gdb_close(g);
    FZ_CHECK_MEMORY_BOUND(base, size, (size_t)16 << 20);   /* the server and replay caches */
    return 0;
}
