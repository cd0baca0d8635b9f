// fuzz-flags: -max_len=4096

/* fuzz_encode - the encoder on frames and meta frames built from the input bytes (any
   combination of options, has_* flags, lists, extreme values), decoded back.

   Invariants:
   - frames_frame_size / frames_meta_size equal the bytes written; a buffer one byte short
     fails with FRAMES_E_SPACE and the needed size; NULL/0 buffers report the size;
   - the encoding decodes, to the same model (fuzz_model.h equality), without
     non-canonical, incomplete, duplicate or unknown-field flags, and re-encodes to the
     same bytes;
   - frames_validate_frame accepts exactly the frames whose encoding BAP's strict reader
     would accept (the strict decoder agrees), and strict encoding succeeds exactly then,
     with the same bytes. */
#include "fuzz_util.h"
#include "fuzz_model.h"

#define FZ_ENCODER_NEVER (FRAMES_FF_NONCANONICAL | FRAMES_FF_INCOMPLETE | FRAMES_FF_DUPLICATE | \
    FRAMES_FF_UNKNOWN_FIELD | FRAMES_FF_PACKED | FRAMES_FF_BAD_BOOL | FRAMES_FF_WIDE_VALUE)

static void fz_check_frame(fz_in *in) {
    static fz_store store;
    frames_frame f, g;
    frames_decoder d;
    frames_error err;
    size_t size, got = 0;
    uint8_t *buf, *buf2;
    int valid, rc;

    fz_build_frame(in, &f, &store);
    size = frames_frame_size(&f);
    FZ_CHECK(frames_encode_frame(&f, FRAMES_ENC_LENIENT, NULL, 0, &got, &err) ==
             (size ? FRAMES_E_SPACE : FRAMES_OK));
    FZ_CHECK(got == size);
    buf = (uint8_t *)malloc(size + 1);
    buf2 = (uint8_t *)malloc(size + 1);
    FZ_CHECK(buf && buf2);
    if (size) {
        FZ_CHECK(frames_encode_frame(&f, FRAMES_ENC_LENIENT, buf, size - 1, &got, &err) ==
                 FRAMES_E_SPACE);
        FZ_CHECK(got == size && err.code == FRAMES_E_SPACE);
    }
    FZ_CHECK(frames_encode_frame(&f, FRAMES_ENC_LENIENT, buf, size, &got, &err) == FRAMES_OK);
    FZ_CHECK(got == size);

    frames_decoder_init(&d, NULL, 0, NULL);
    FZ_CHECK(frames_decode_frame(&d, buf, size, &g, &err) == FRAMES_OK);
    FZ_CHECK(!(g.flags & FZ_ENCODER_NEVER));
    FZ_CHECK(fz_frame_eq(&f, &g));
    FZ_CHECK(frames_encode_frame(&g, FRAMES_ENC_LENIENT, buf2, size, &got, &err) == FRAMES_OK);
    FZ_CHECK(got == size && (size == 0 || memcmp(buf, buf2, size) == 0));

    /* validation = what the strict reader accepts */
    valid = frames_validate_frame(&f, &err) == FRAMES_OK;
    d.strict = 1;
    rc = frames_decode_frame(&d, buf, size, &g, &err);
    FZ_CHECK((rc == FRAMES_OK) == valid);
    rc = frames_encode_frame(&f, 0, buf2, size, &got, &err);
    if (valid) {
        FZ_CHECK(rc == FRAMES_OK && got == size && (size == 0 || memcmp(buf, buf2, size) == 0));
    } else {
        FZ_CHECK(rc == FRAMES_E_INVALID && got == 0 && err.code == FRAMES_E_INVALID);
    }
    frames_decoder_free(&d);
    free(buf);
    free(buf2);
}

static void fz_check_meta(fz_in *in) {
    frames_bytes strs[4][4];
    frames_meta m, g;
    frames_decoder d;
    frames_error err;
    size_t size, got = 0, i, j;
    uint8_t *buf, *buf2;
    uint64_t bits;

    memset(&m, 0, sizeof m);
    for (i = 0; i < 4; i++)
        for (j = 0; j < 4; j++) strs[i][j] = fz_take_bytes(in, 6);
    bits = fz_take(in, 2);
    m.ntracer_args = (uint32_t)(bits & 3);
    m.ntracer_envp = (uint32_t)((bits >> 2) & 3);
    m.ntarget_args = (uint32_t)((bits >> 4) & 3);
    m.ntarget_envp = (uint32_t)((bits >> 6) & 3);
    m.tracer_args = strs[0];
    m.tracer_envp = strs[1];
    m.target_args = strs[2];
    m.target_envp = strs[3];
    m.tracer_name = fz_take_bytes(in, 8);
    m.tracer_version = fz_take_bytes(in, 8);
    m.target_path = fz_take_bytes(in, 8);
    m.target_md5sum = fz_take_bytes(in, 16);
    m.user = fz_take_bytes(in, 8);
    m.host = fz_take_bytes(in, 8);
    m.fstats_size = (int32_t)(uint32_t)fz_take(in, 4);
    {
        uint64_t u;
        u = fz_take(in, 8); memcpy(&m.fstats_atime, &u, 8);
        u = fz_take(in, 8); memcpy(&m.fstats_mtime, &u, 8);
        u = fz_take(in, 8); memcpy(&m.fstats_ctime, &u, 8);
        u = fz_take(in, 8); memcpy(&m.time, &u, 8);
    }
    size = frames_meta_size(&m);
    buf = (uint8_t *)malloc(size + 1);
    buf2 = (uint8_t *)malloc(size + 1);
    FZ_CHECK(buf && buf2 && size > 0);
    FZ_CHECK(frames_encode_meta(&m, buf, size - 1, &got, &err) == FRAMES_E_SPACE && got == size);
    FZ_CHECK(frames_encode_meta(&m, buf, size, &got, &err) == FRAMES_OK && got == size);
    frames_decoder_init(&d, NULL, 0, NULL);
    d.strict = 1;
    FZ_CHECK(frames_decode_meta(&d, buf, size, &g, &err) == FRAMES_OK);
    FZ_CHECK(!(g.flags & FZ_ENCODER_NEVER));
    FZ_CHECK(fz_meta_eq(&m, &g));
    FZ_CHECK(frames_encode_meta(&g, buf2, size, &got, &err) == FRAMES_OK);
    FZ_CHECK(got == size && memcmp(buf, buf2, size) == 0);
    frames_decoder_free(&d);
    free(buf);
    free(buf2);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fz_in in;
    size_t base = hc_state.live;
    hc_mark();
    in.p = data;
    in.n = size;
    if (size && (data[0] & 1)) {
        in.p++;
        in.n--;
        fz_check_meta(&in);
    } else {
        fz_check_frame(&in);
    }
    FZ_CHECK(hc_state.live == base);
    FZ_CHECK_MEMORY(base, size);
    return 0;
}
