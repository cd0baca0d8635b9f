// fuzz-needs: intel-pt.h -lipt
// fuzz-seeds: ptcase vectors/pt/*/trace.pt
// fuzz-flags: -max_len=8192

/* fuzz_ptdecode - frames_pt.h's decode loop (libipt parses the packets; this covers our
   loops, event handling, block run cache, speculative holding and frame writing) on an
   arbitrary PT stream over an arbitrary small code image.

   Input: a 16-byte header, the image, the PT bytes:
       0  u64 image address        8  u16 image length     10  u8 flags:
          bit 0 instruction-flow decoder, bits 1-2 speculative policy, bit 3 tick events,
          bit 4 no exception frames, bit 5 cpu given (errata)
       11 u8 cpu family  12 u8 model  13 u8 stepping  14 u8 MTC frequency  15 nominal freq
   Seeds: each case of ../shared/vectors/pt (seedgen ptcase: its first image, its cpu).

   Invariants:
   - decoding terminates with bounded work (frames_pt.h's stall limit: a cycle of direct
     branches is a gap, not an endless loop or libipt's endless recursion);
   - it returns FRAMES_OK, or FRAMES_E_STOPPED when the instruction callback stops it;
   - the written trace reads back: every frame decodes, the counts are the statistics',
     every std_frame's address and raw bytes are those of the image;
   - the block path never fails to rebuild a block (frames_pt_x86_decode finds libipt's
     instruction lengths);
   - the other decoder (block / instruction-flow) holds to the same (the two need not write
     the same frames: libipt's decoders disagree on some traces even without an error, e.g.
     whether a conditional branch at a TIP.PGD target still runs);
   - decoding is deterministic (a second session writes the same bytes);
   - formatted events are NUL-terminated within the buffer, also when it is short. */
#include "fuzz_util.h"
#include "fuzz_pt.h"

typedef struct fz_seen {
    uint64_t insns, events, limit;
} fz_seen;

static int fz_on_event(void *ctx, const struct pt_event *ev, uint64_t off) {
    fz_seen *s = (fz_seen *)ctx;
    char buf[256], small[9];
    int n;
    (void)off;
    s->events++;
    n = frames_pt_format_event(buf, sizeof buf, ev, FRAMES_PT_PRINT_EVENT_IP | FRAMES_PT_PRINT_EVENT_TIME);
    FZ_CHECK(n >= 0 && strlen(buf) < sizeof buf);
    memset(small, 'x', sizeof small);
    frames_pt_format_event(small, sizeof small, ev, 0);
    FZ_CHECK(memchr(small, 0, sizeof small) != NULL);
    return 0;
}

static int fz_on_insn(void *ctx, const frames_pt_insn *in) {
    fz_seen *s = (fz_seen *)ctx;
    FZ_CHECK(in->size >= 1 && in->size <= 15);
    return ++s->insns > s->limit;
}

typedef struct fz_result {
    int rc;
    frames_pt_stats st;
    fz_mem out;
    fz_seen seen;
} fz_result;

static void fz_decode(const uint8_t *trace, size_t tlen, const char *image, uint64_t base,
                      const frames_pt_options *o, int with_insn_cb, fz_result *res) {
    frames_pt *pt;
    frames_error err;
    frames_writer *w;
    frames_pt_callbacks cb;
    memset(res, 0, sizeof *res);
    res->seen.limit = 1u << 20;
    FZ_CHECK(frames_pt_open(&pt, o, &err) == FRAMES_OK);
    FZ_CHECK(frames_pt_set_trace(pt, trace, tlen, &err) == FRAMES_OK);
    if (image) FZ_CHECK(frames_pt_add_raw(pt, image, 0, 0, base, &err) == FRAMES_OK);
    memset(&cb, 0, sizeof cb);
    cb.ctx = &res->seen;
    cb.event = fz_on_event;
    if (with_insn_cb) cb.insn = fz_on_insn;
    frames_pt_set_callbacks(pt, &cb);
    w = fz_out_writer(&res->out);
    res->rc = frames_pt_decode(pt, w, &res->st, &err);
    FZ_CHECK(res->rc == FRAMES_OK || (res->rc == FRAMES_E_STOPPED && with_insn_cb));
    if (res->rc < 0) FZ_CHECK(err.code == res->rc && err.message[0]);
    FZ_CHECK(frames_writer_close(w) == FRAMES_OK);
    frames_pt_close(pt);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    frames_pt_options o;
    uint64_t base;
    size_t ilen;
    const char *image = NULL;
    const uint8_t *trace;
    size_t tlen;
    unsigned flags;
    fz_result a, b;
    fz_counts c;
    if (size < 16) return 0;
    memcpy(&base, data, 8);
    ilen = (size_t)data[8] | (size_t)data[9] << 8;
    flags = data[10];
    if (ilen > size - 16) ilen = size - 16;
    trace = data + 16 + ilen;
    tlen = size - 16 - ilen;
    if (!tlen) return 0;
    if (ilen && base <= UINT64_MAX - ilen) image = fz_put_file("image.bin", data + 16, ilen);

    frames_pt_options_default(&o);
    o.decoder = flags & 1 ? FRAMES_PT_DECODER_INSN : FRAMES_PT_DECODER_BLOCK;
    o.speculative = (int)((flags >> 1) & 3) % 3;
    o.tick_events = (flags >> 3) & 1;
    o.flags = (flags & 16) ? FRAMES_PT_NO_EXCEPTION_FRAMES : 0;
    if (flags & 32) {
        o.cpu.vendor = pcv_intel;
        o.cpu.family = data[11];
        o.cpu.model = data[12];
        o.cpu.stepping = data[13];
    }
    o.mtc_freq = data[14];
    o.nom_freq = data[15];

    fz_decode(trace, tlen, image, base, &o, 0, &a);
    c = fz_check_written(&a.out, image ? data + 16 : NULL, ilen, base);
    FZ_CHECK(c.std == a.st.std_frames && c.exception == a.st.exception_frames);
    FZ_CHECK(c.modload == a.st.modload_frames && c.other == 0);
    FZ_CHECK(a.st.std_frames + a.st.speculative_unwritten <= a.st.insns);
    FZ_CHECK(a.st.ngaps_recorded <= FRAMES_PT_MAX_GAPS);
    /* the block path rebuilds libipt's instructions with frames_pt_x86_decode */
    FZ_CHECK(a.st.reconstruct_errors == 0);

    /* deterministic: a second session (with the instruction callback) writes the same */
    fz_decode(trace, tlen, image, base, &o, 1, &b);
    if (b.rc == FRAMES_OK) {
        FZ_CHECK(fz_out_equal(&a.out, &b.out));
        FZ_CHECK(b.seen.insns == a.st.insns && b.st.insns == a.st.insns);
        FZ_CHECK(b.seen.events == a.seen.events);
    }
    free(b.out.p);

    /* the other decoder: the same frames */
    o.decoder = o.decoder == FRAMES_PT_DECODER_BLOCK ? FRAMES_PT_DECODER_INSN : FRAMES_PT_DECODER_BLOCK;
    fz_decode(trace, tlen, image, base, &o, 0, &b);
    c = fz_check_written(&b.out, image ? data + 16 : NULL, ilen, base);
    FZ_CHECK(c.std == b.st.std_frames && c.exception == b.st.exception_frames);
    FZ_CHECK(b.st.reconstruct_errors == 0);
    free(a.out.p);
    free(b.out.p);
    return 0;
}
