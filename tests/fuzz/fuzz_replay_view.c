// fuzz-seeds: frames vectors/frames/*.frames
// fuzz-flags: -max_len=65536

/* fuzz_replay_view - the state index's build pass reads std_frames from their bytes
   (frames__replay_view_raw, frames_replay.h) and leaves every other record to the
   decoder. On arbitrary frame payloads: whatever it takes, the decoder takes too, as a
   std_frame that gives the same view (frames__replay_view_decoded): address, thread,
   instruction bytes, and each operand's list, kind, register alias (or "not a register
   of the table"), address, bytes covered and value. Anything it refuses the build hands
   to the decoder, so no other outcome is checked. The same for what it reads through a
   template of a record read before (frames__replay_tpl_view). */
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

/* The decoder takes data as a std_frame that gives view v (its operands in b). */
static void fz_same_as_decoded(const frames__replay_builder *b, const uint8_t *data, size_t size,
                               const frames__replay_view *v) {
    frames__replay_builder bdec;
    frames__replay_view vdec;
    frames_decoder d;
    frames_frame f;
    frames_error err;
    size_t i;
    memset(&bdec, 0, sizeof bdec);
    frames_decoder_init(&d, NULL, 0, NULL);
    FZ_CHECK(frames_decode_frame(&d, data, size, &f, &err) >= 0);
    FZ_CHECK(f.kind == FRAMES_KIND_STD);
    FZ_CHECK(frames__replay_view_decoded(fz_regs, &bdec, &f.std, &vdec) == 0);
    FZ_CHECK(v->address == vdec.address && v->thread == vdec.thread);
    fz_same_bytes(v->raw, v->nraw, vdec.raw, vdec.nraw);
    FZ_CHECK(v->npre == vdec.npre && v->n == vdec.n);
    for (i = 0; i < v->n; i++) fz_same_op(&b->ops[v->first + i], &bdec.ops[i]);
    frames_decoder_free(&d);
    frames__replay_builder_free(&bdec);
}

/* The builder keeps its templates across inputs (a mutated input often differs from a
   kept one only in its values and addresses, which a template takes): what it reads
   through a template must be what the decoder reads too. */
static frames__replay_builder fz_b;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    frames__replay_view v;
    frames_error err;
    int rc;
    if (!fz_regs) FZ_CHECK(frames_replay_regs_open(&fz_regs, FRAMES_ARCH_I386, 64, 0, NULL, &err) == FRAMES_OK);
    rc = frames__replay_tpl_view(&fz_b, data, size, &v);
    FZ_CHECK(rc == 0 || rc == 1);
    if (rc == 1) fz_same_as_decoded(&fz_b, data, size, &v);
    rc = frames__replay_view_raw(fz_regs, &fz_b, data, size, &v);
    FZ_CHECK(rc == 0 || rc == 1);
    if (rc == 1) {
        fz_same_as_decoded(&fz_b, data, size, &v);
        frames__replay_tpl_keep(&fz_b, data, size, &v);
    }
    return 0;
}
