// fuzz-flags: -max_len=65536

/* fuzz_fridx - a hostile or damaged state index (TRACE.fridx, frames_replay.h) beside a
   good trace: frames_replay_open must refuse it with a clear error or take it, and every
   query on an index it took must stay in bounds.

   The trace (fuzz_replay_trace.h, 2100 instructions: 9 blocks, 2 keyframes) is written
   and indexed once. The first input byte chooses how the rest becomes the index file:
     even: the rest is the whole file;
     odd:  the good index, changed by the rest taken as 3-byte patches {u16 offset (modulo
           the size), u8 value}; bit 1 also cuts the file at the first patch's offset.
   In both, the trace's stamp (bytes 16-55: size, mtime, hashes) is made right where the
   file is that long, so that the parser, not the staleness check, meets the input.
   Invariants: open fails with FRAMES_E_REPLAY_INDEX (or works); a working replay
   answers goto/state/find/accesses with FRAMES_OK or an error, never a crash (ASan);
   the memory held is bounded by the input, not by counts read from it. */
#include "fuzz_util.h"
#define FRAMES_REPLAY_IMPLEMENTATION
#include "frames_replay.h"
#include "fuzz_replay_trace.h"

#include <unistd.h>

#define FZ_INSNS 2100

static char fz_path[256], fz_index[300];
static uint8_t *fz_good;
static size_t fz_good_len;

static void fz_cleanup(void) {
    unlink(fz_path);
    unlink(fz_index);
    free(fz_good);
}

static uint8_t *fz_read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    uint8_t *p;
    long n;
    FZ_CHECK(f && fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0);
    p = (uint8_t *)malloc((size_t)n);
    FZ_CHECK(p && fread(p, 1, (size_t)n, f) == (size_t)n);
    fclose(f);
    *len = (size_t)n;
    return p;
}

static void fz_write_file(const char *path, const uint8_t *d, size_t n) {
    FILE *f = fopen(path, "wb");
    FZ_CHECK(f && (n == 0 || fwrite(d, 1, n, f) == n) && fclose(f) == 0);
}

static void fz_init(void) {
    frames_error err;
    frames_replay_options ro;
    frames_replay *r;
    snprintf(fz_path, sizeof fz_path, "%s/fuzz-fridx-%ld.frames",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (long)getpid());
    snprintf(fz_index, sizeof fz_index, "%s.fridx", fz_path);
    fz_write_trace(fz_path, FZ_INSNS);
    frames_replay_options_default(&ro);
    ro.index_path = fz_index;
    FZ_CHECK(frames_replay_open(&r, fz_path, &ro, &err) == 0);
    frames_replay_close(r);
    fz_good = fz_read_file(fz_index, &fz_good_len);
    FZ_CHECK(fz_good_len > 56);
    atexit(fz_cleanup);
}

/* The index file an input stands for (malloc'd, *n bytes). */
static uint8_t *fz_index_of(const uint8_t *data, size_t size, size_t *n) {
    uint8_t *ix;
    size_t i;
    if (!(data[0] & 1)) {
        *n = size - 1;
        ix = (uint8_t *)malloc(*n ? *n : 1);
        FZ_CHECK(ix);
        memcpy(ix, data + 1, *n);
    } else {
        *n = fz_good_len;
        ix = (uint8_t *)malloc(fz_good_len);
        FZ_CHECK(ix);
        memcpy(ix, fz_good, fz_good_len);
        for (i = 1; i + 3 <= size; i += 3) {
            size_t off = ((size_t)data[i] | (size_t)data[i + 1] << 8) % fz_good_len;
            if (i == 1 && (data[0] & 2)) *n = off;
            else if (off < *n) ix[off] = data[i + 2];
        }
    }
    for (i = 16; i < 56 && i < *n; i++) ix[i] = fz_good[i];   /* the trace's stamp */
    return ix;
}

/* Everything a client may ask of a replay that opened. */
static void fz_query(frames_replay *r) {
    frames_replay_info info;
    frames_error err;
    frames_replay_insn in;
    frames_replay_query q;
    frames_replay_access acc[4];
    uint8_t v[64], known[64];
    size_t n;
    uint64_t at[4], idx;
    int i, dir, what;
    static const char *const regs[] = {"rax", "eax", "rip", "xmm0"};
    FZ_CHECK(frames_replay_info_get(r, &info) == FRAMES_OK);
    at[0] = 0;
    at[1] = info.instructions / 2;
    at[2] = info.instructions ? info.instructions - 1 : 0;
    at[3] = info.instructions;
    for (i = 0; i < 4; i++) {
        int rc = frames_replay_goto(r, at[i], &err);
        if (rc < 0) continue;
        if (frames_replay_insn_get(r, &in) == FRAMES_OK) {
            FZ_CHECK(in.len <= sizeof in.bytes);
            (void)frames_replay_reg_get(r, in.thread, regs[i], v, sizeof v, &n);
        }
        FZ_CHECK(frames_replay_mem_get(r, 0x403000 - 8, v, known, sizeof v) <= sizeof v);
        (void)frames_replay_threads(r, NULL, 0);
    }
    memset(&q, 0, sizeof q);
    q.pc = 0x401003;
    q.addr = 0x403008;
    q.len = 8;
    q.reg = "rax";
    for (what = FRAMES_REPLAY_PC; what <= FRAMES_REPLAY_REG_ACCESS; what++) {
        q.what = (frames_replay_what)what;
        for (dir = -1; dir <= 1; dir += 2) {
            uint64_t from = dir > 0 ? 0 : info.instructions;
            if (frames_replay_find(r, &q, from, dir, &idx, &err) == FRAMES_OK) {
                FZ_CHECK(idx < info.instructions);
                if (what != FRAMES_REPLAY_PC)
                    FZ_CHECK(frames_replay_accesses(r, &q, idx, acc, 4, &err) != 0);
            }
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    frames_replay *r;
    frames_replay_options ro;
    frames_error err;
    uint8_t *ix;
    size_t n, base;
    int rc;
    if (!fz_good) fz_init();
    if (size < 1) return 0;
    ix = fz_index_of(data, size, &n);
    fz_write_file(fz_index, ix, n);
    free(ix);
    base = hc_state.live;
    hc_mark();
    frames_replay_options_default(&ro);
    ro.index_path = fz_index;
    ro.build_index = 0;
    ro.write_index = 0;
    rc = frames_replay_open(&r, fz_path, &ro, &err);
    if (rc == FRAMES_OK) {
        fz_query(r);
        frames_replay_close(r);
    } else {
        FZ_CHECK(rc == FRAMES_E_REPLAY_INDEX && err.message[0]);
    }
    /* the index image, the trace reader's window, one register file per thread */
    FZ_CHECK_MEMORY_BOUND(base, n, fz_memory_bound(n) + ((size_t)16 << 20));
    return 0;
}
