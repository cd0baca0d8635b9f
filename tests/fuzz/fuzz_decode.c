// fuzz-seeds: frames vectors/frames/*.frames
// fuzz-seeds: meta vectors/frames/*.frames
// fuzz-flags: -max_len=65536

/* fuzz_decode - the frame and meta decoders and the encoder on arbitrary message bytes.

   Invariants for every input that decodes (as a frame, and separately as a meta frame):
   - the encoded size equals frames_frame_size / frames_meta_size, and a buffer one byte
     short fails with FRAMES_E_SPACE reporting that size;
   - decode -> encode -> decode gives the same model, and encoding that again gives the
     same bytes (the encoder's output is a fixed point);
   - re-decoding the encoder's output reports no non-canonical or incomplete encoding;
   - an input the decoder calls canonical (no NONCANONICAL, no INCOMPLETE flag)
     re-encodes to exactly the input bytes;
   - strict decoding accepts exactly the lenient results without FRAMES_FF_PIQIRUN_REJECTS,
     and a strictly accepted frame validates and encodes without FRAMES_ENC_LENIENT;
   - a caller-buffer decoder and tight limits give the same model or a clean
     FRAMES_E_NOMEM / FRAMES_E_LIMIT;
   - memory held stays within fz_memory_bound of the input size. */
#include "fuzz_util.h"
#include "fuzz_model.h"

#define FZ_CANONICAL_BREAKERS (FRAMES_FF_NONCANONICAL | FRAMES_FF_INCOMPLETE)
/* what an encoder's output may never show when decoded again */
#define FZ_ENCODER_NEVER (FRAMES_FF_NONCANONICAL | FRAMES_FF_INCOMPLETE | FRAMES_FF_DUPLICATE | \
    FRAMES_FF_UNKNOWN_FIELD | FRAMES_FF_PACKED | FRAMES_FF_BAD_BOOL | FRAMES_FF_WIDE_VALUE)

static uint8_t *fz_encode_frame(const frames_frame *f, size_t *len) {
    size_t size = frames_frame_size(f), got = 0;
    uint8_t *buf = (uint8_t *)malloc(size + 1);
    frames_error err;
    FZ_CHECK(buf);
    if (size > 0) {
        FZ_CHECK(frames_encode_frame(f, FRAMES_ENC_LENIENT, buf, size - 1, &got, &err) ==
                 FRAMES_E_SPACE);
        FZ_CHECK(got == size);
    }
    FZ_CHECK(frames_encode_frame(f, FRAMES_ENC_LENIENT, buf, size, &got, &err) == FRAMES_OK);
    FZ_CHECK(got == size);
    *len = size;
    return buf;
}

static void fz_check_frame(const uint8_t *data, size_t size) {
    frames_decoder d, d2, d3, dstrict;
    frames_frame f, f2, f3, fs;
    frames_error err;
    uint8_t *enc, *enc2;
    size_t elen, elen2;
    uint64_t small[32];
    int rc, rcs;

    frames_decoder_init(&d, NULL, 0, NULL);
    rc = frames_decode_frame(&d, data, size, &f, &err);
    FZ_CHECK(rc == FRAMES_OK || rc == FRAMES_E_DECODE || rc == FRAMES_E_LIMIT);
    FZ_CHECK(rc == FRAMES_OK ? err.code == 0 : err.code == rc && err.message[0]);

    frames_decoder_init(&dstrict, NULL, 0, NULL);
    dstrict.strict = 1;
    rcs = frames_decode_frame(&dstrict, data, size, &fs, &err);
    if (rc < 0) {
        FZ_CHECK(rcs < 0);
    } else if (rcs == FRAMES_OK) {
        FZ_CHECK(!(f.flags & FRAMES_FF_PIQIRUN_REJECTS));
        FZ_CHECK(fs.flags == f.flags && fz_frame_eq(&f, &fs));
        FZ_CHECK(frames_validate_frame(&f, &err) == FRAMES_OK);
    } else {
        FZ_CHECK(f.flags & FRAMES_FF_PIQIRUN_REJECTS);
    }
    frames_decoder_free(&dstrict);

    /* a small caller buffer: same model or out of scratch, never an allocation */
    frames_decoder_init(&d3, small, sizeof small, NULL);
    {
        size_t before = hc_state.live;
        int rc3 = frames_decode_frame(&d3, data, size, &f3, &err);
        FZ_CHECK(hc_state.live == before);
        if (rc == FRAMES_OK) FZ_CHECK(rc3 == FRAMES_E_NOMEM || (rc3 == FRAMES_OK && fz_frame_eq(&f, &f3)));
        else FZ_CHECK(rc3 < 0);
    }
    frames_decoder_free(&d3);

    if (rc == FRAMES_OK) {
        /* tight limits: the same model, or a limit error */
        frames_decoder_init(&d3, NULL, 0, NULL);
        d3.limits.max_scratch = 512;
        d3.limits.max_depth = 2;
        rcs = frames_decode_frame(&d3, data, size, &f3, &err);
        FZ_CHECK(rcs == FRAMES_E_LIMIT || (rcs == FRAMES_OK && fz_frame_eq(&f, &f3)));
        frames_decoder_free(&d3);

        enc = fz_encode_frame(&f, &elen);
        if (!(f.flags & FZ_CANONICAL_BREAKERS)) {
            FZ_CHECK(elen == size);
            FZ_CHECK(size == 0 || memcmp(enc, data, size) == 0);
        }
        frames_decoder_init(&d2, NULL, 0, NULL);
        FZ_CHECK(frames_decode_frame(&d2, enc, elen, &f2, &err) == FRAMES_OK);
        FZ_CHECK(!(f2.flags & FZ_ENCODER_NEVER));
        FZ_CHECK(fz_frame_eq(&f, &f2));
        enc2 = fz_encode_frame(&f2, &elen2);
        FZ_CHECK(elen2 == elen && (elen == 0 || memcmp(enc, enc2, elen) == 0));
        if (frames_validate_frame(&f, &err) == FRAMES_OK) {
            size_t got = 0;
            FZ_CHECK(frames_encode_frame(&f, 0, enc2, elen, &got, &err) == FRAMES_OK);
            FZ_CHECK(got == elen && (elen == 0 || memcmp(enc, enc2, elen) == 0));
        } else {
            size_t got = 1;
            FZ_CHECK(frames_encode_frame(&f, 0, enc2, elen, &got, &err) == FRAMES_E_INVALID);
            FZ_CHECK(got == 0);
        }
        free(enc);
        free(enc2);
        frames_decoder_free(&d2);
    }
    frames_decoder_free(&d);
}

static uint8_t *fz_encode_meta(const frames_meta *m, size_t *len) {
    size_t size = frames_meta_size(m), got = 0;
    uint8_t *buf = (uint8_t *)malloc(size + 1);
    frames_error err;
    FZ_CHECK(buf);
    FZ_CHECK(size > 0); /* every field of meta_frame is required, so always written */
    FZ_CHECK(frames_encode_meta(m, buf, size - 1, &got, &err) == FRAMES_E_SPACE && got == size);
    FZ_CHECK(frames_encode_meta(m, buf, size, &got, &err) == FRAMES_OK && got == size);
    *len = size;
    return buf;
}

static void fz_check_meta(const uint8_t *data, size_t size) {
    frames_decoder d, d2;
    frames_meta m, m2;
    frames_error err;
    uint8_t *enc, *enc2;
    size_t elen, elen2;
    int rc;
    frames_decoder_init(&d, NULL, 0, NULL);
    rc = frames_decode_meta(&d, data, size, &m, &err);
    FZ_CHECK(rc == FRAMES_OK || rc == FRAMES_E_DECODE || rc == FRAMES_E_LIMIT);
    if (rc == FRAMES_OK) {
        enc = fz_encode_meta(&m, &elen);
        if (!(m.flags & FZ_CANONICAL_BREAKERS)) {
            FZ_CHECK(elen == size && memcmp(enc, data, size) == 0);
        }
        frames_decoder_init(&d2, NULL, 0, NULL);
        FZ_CHECK(frames_decode_meta(&d2, enc, elen, &m2, &err) == FRAMES_OK);
        FZ_CHECK(!(m2.flags & FZ_ENCODER_NEVER));
        FZ_CHECK(fz_meta_eq(&m, &m2));
        enc2 = fz_encode_meta(&m2, &elen2);
        FZ_CHECK(elen2 == elen && memcmp(enc, enc2, elen) == 0);
        free(enc);
        free(enc2);
        frames_decoder_free(&d2);
    }
    frames_decoder_free(&d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    size_t base = hc_state.live;
    hc_mark();
    fz_check_frame(data, size);
    fz_check_meta(data, size);
    FZ_CHECK(hc_state.live == base);
    FZ_CHECK_MEMORY(base, size);
    return 0;
}
