// fuzz-seeds: frames vectors/frames/*.frames
// fuzz-flags: -max_len=65536

/* fuzz_replay_view - the state index's build pass reads std_frames from their bytes
   (frames__replay_view_raw, frames_replay.h) and leaves every other record to the
   decoder. On arbitrary frame payloads: whatever it takes, the decoder takes too, as a
   std_frame that gives the same view (frames__replay_view_decoded): address, thread,
   instruction bytes, and each operand's list, kind, register alias (or "not a register
   of the table"), address, bytes covered and value. Anything it refuses the build hands
   to the decoder, so no other outcome is checked. */
#include "fuzz_util.h"
#define FRAMES_REPLAY_IMPLEMENTATION
#include "frames_replay.h"

static frames_replay_regs *fz_regs;   /* x86-64: its name cache fills across inputs */

static void fz_same_bytes(const uint8_t *a, size_t na, const uint8_t *b, size_t nb) {
    FZ_CHECK(na == nb);
    FZ_CHECK(na == 0 || !memcmp(a, b, na));
}

static void fz_same_op(const frames__replay_op *x, const frames__replay_op *y) {
    FZ_CHECK(x->kind == y->kind);
    fz_same_bytes(x->value, x->value ? x->len : 0, y->value, y->value ? y->len : 0);
    if (x->kind == FRAMES__REPLAY_OP_REG)
        FZ_CHECK(x->a.reg == y->a.reg && x->a.offset == y->a.offset && x->a.size == y->a.size &&
                 x->a.zext == y->a.zext);
    if (x->kind == FRAMES__REPLAY_OP_MEM) FZ_CHECK(x->address == y->address && x->size == y->size);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    frames__replay_builder braw, bdec;
    frames__replay_view vraw, vdec;
    frames_decoder d;
    frames_frame f;
    frames_error err;
    size_t i;
    int rc;
    if (!fz_regs) FZ_CHECK(frames_replay_regs_open(&fz_regs, FRAMES_ARCH_I386, 64, 0, NULL, &err) == FRAMES_OK);
    memset(&braw, 0, sizeof braw);
    memset(&bdec, 0, sizeof bdec);
    rc = frames__replay_view_raw(fz_regs, &braw, data, size, &vraw);
    FZ_CHECK(rc == 0 || rc == 1);
    if (rc == 1) {
        frames_decoder_init(&d, NULL, 0, NULL);
        FZ_CHECK(frames_decode_frame(&d, data, size, &f, &err) >= 0);
        FZ_CHECK(f.kind == FRAMES_KIND_STD);
        FZ_CHECK(frames__replay_view_decoded(fz_regs, &bdec, &f.std, &vdec) == 0);
        FZ_CHECK(vraw.address == vdec.address && vraw.thread == vdec.thread);
        fz_same_bytes(vraw.raw, vraw.nraw, vdec.raw, vdec.nraw);
        FZ_CHECK(vraw.npre == vdec.npre && vraw.n == vdec.n);
        for (i = 0; i < vraw.n; i++) fz_same_op(&braw.ops[i], &bdec.ops[i]);
        frames_decoder_free(&d);
    }
    frames__replay_builder_free(&braw);
    frames__replay_builder_free(&bdec);
    return 0;
}
