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

#include <unistd.h>

static frames_replay *fz_replay;
static char fz_path[256], fz_index[300];

static void fz_cleanup(void) {
    frames_replay_close(fz_replay);
    unlink(fz_path);
    unlink(fz_index);
}

/* The trace: 64 instructions of a loop at 0x401000.. in threads 1 and 2, each reading RAX
   and writing RAX, odd ones storing 8 bytes at 0x403000 + 8 * (i % 4). */
static void fz_write_trace(const char *path) {
    frames_writer *w;
    frames_writer_options o;
    frames_error err;
    int i;
    frames_writer_options_default(&o);
    o.machine = FRAMES_MACH_X86_64;
    FZ_CHECK(frames_writer_open_path(&w, path, &o, NULL, &err) == 0);
    for (i = 0; i < 64; i++) {
        frames_frame f;
        frames_operand pre[1], post[2];
        uint64_t before = (uint64_t)i * 3, after = before + 1;
        static const uint8_t code[3] = {0x48, 0x89, 0xc0};
        memset(&f, 0, sizeof f);
        memset(pre, 0, sizeof pre);
        memset(post, 0, sizeof post);
        pre[0].spec = post[0].spec = FRAMES_REG;
        pre[0].name = post[0].name = frames_str("RAX");
        pre[0].bit_length = post[0].bit_length = 64;
        pre[0].read = 1;
        pre[0].value = frames_bytes_of(&before, 8);
        post[0].written = 1;
        post[0].value = frames_bytes_of(&after, 8);
        post[1].spec = FRAMES_MEM;
        post[1].address = 0x403000 + 8 * (uint64_t)(i % 4);
        post[1].bit_length = 64;
        post[1].written = 1;
        post[1].value = frames_bytes_of(&after, 8);
        f.kind = FRAMES_KIND_STD;
        f.std.address = 0x401000 + 3 * (uint64_t)(i % 8);
        f.std.thread_id = i % 16 < 12 ? 1 : 2;
        f.std.rawbytes = frames_bytes_of(code, 3);
        f.std.pre = pre;
        f.std.npre = 1;
        f.std.post = post;
        f.std.npost = i % 2 ? 2 : 1;
        f.std.has_post = 1;
        FZ_CHECK(frames_writer_add(w, &f) == 0);
    }
    FZ_CHECK(frames_writer_close(w) == 0);
}

static void fz_init(void) {
    frames_error err;
    frames_replay_options ro;
    snprintf(fz_path, sizeof fz_path, "%s/fuzz-gdb-%ld.frames",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (long)getpid());
    snprintf(fz_index, sizeof fz_index, "%s.fridx", fz_path);
    fz_write_trace(fz_path);
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
