/* test_canonical: frames_reader_raw_is_canonical, the check by which `frames cat` copies
   a frame as read without decoding it, against the decoder and the encoder: every record
   it takes must decode without an error and without any FRAMES_FF_* flag, and encode
   again to exactly its bytes (so that copying it is what decoding and encoding it would
   write). Checked on every record of the shared vectors (odd encodings, extremes, and the
   output of real tracers among them), on a trace `frames record` writes (when the
   recorder is built), and on near misses of their records: every byte changed in several
   ways, and every shorter length. It must also take the records tracers write (which is
   what makes cat fast). And `frames cat` itself: its TOC settings, checked against the
   offsets its own reading meets, give exactly the output of the settings a scan gives
   (standard input takes that path), also when an entry points at the wrong frame. */
#include "frames.h"

#include <dirent.h>

#include "testutil.h"

typedef struct tally {
    uint64_t records, taken, mutants, mutants_taken;
} tally;

/* Whatever the check takes decodes without a flag and encodes again to its bytes. */
static int taken_and_exact(frames_reader *r, frames_decoder *d, const uint8_t *payload,
                           size_t len, uint64_t index) {
    static uint8_t again[1 << 16];
    frames_raw raw;
    frames_frame f;
    frames_error err;
    size_t n = 0;
    raw.index = index;
    raw.offset = 0;
    raw.payload = frames_bytes_of(payload, len);
    if (!frames_reader_raw_is_canonical(r, &raw)) return 0;
    if (frames_decode_frame(d, payload, len, &f, &err) != FRAMES_OK)
        fail_msg("record %llu taken, but it does not decode: %s", (unsigned long long)index,
                 err.message);
    if (f.flags) fail_msg("record %llu taken, but it decodes with flags 0x%x", (unsigned long long)index,
                          (unsigned)f.flags);
    assert_int_equal(frames_encode_frame(&f, FRAMES_ENC_LENIENT, again, sizeof again, &n, NULL), FRAMES_OK);
    if (n != len || memcmp(again, payload, len) != 0)
        fail_msg("record %llu taken, but it encodes to other bytes (%zu, was %zu)",
                 (unsigned long long)index, n, len);
    return 1;
}

/* Every byte of the record changed in several ways, and every shorter length. Each
   right after the record itself, so that it meets the shape the record leaves in the
   reader (a near miss taken by the full check may replace it). */
static void near_misses(frames_reader *r, frames_decoder *d, const frames_raw *raw, tally *t) {
    static const int deltas[] = {1, -1, 0x80, 0x40, 0x08, 0x02};
    uint8_t m[4096];
    size_t len = raw->payload.len, i, k;
    if (len > sizeof m) return;
    for (i = 0; i < len; i++) {
        for (k = 0; k < sizeof deltas / sizeof deltas[0]; k++) {
            frames_reader_raw_is_canonical(r, raw);
            memcpy(m, raw->payload.ptr, len);
            m[i] = (uint8_t)(k < 2 ? m[i] + deltas[k] : m[i] ^ deltas[k]);
            t->mutants++;
            t->mutants_taken += (uint64_t)taken_and_exact(r, d, m, len, raw->index);
        }
        memcpy(m, raw->payload.ptr, len);
        t->mutants++;
        t->mutants_taken += (uint64_t)taken_and_exact(r, d, m, i, raw->index);
    }
}

/* Every record of the trace at path; near misses of the first `mutate` records. */
static void check_trace(const char *path, uint64_t mutate, tally *t) {
    frames_reader *r = NULL;
    frames_decoder d;
    frames_raw raw;
    frames_error err;
    int rc;
    if (frames_reader_open_path(&r, path, NULL, &err) != FRAMES_OK) return; /* no frames to read */
    frames_decoder_init(&d, NULL, 0, NULL);
    while ((rc = frames_reader_next_raw(r, &raw)) > 0) {
        t->records++;
        t->taken += (uint64_t)taken_and_exact(r, &d, raw.payload.ptr, raw.payload.len, raw.index);
        if (raw.index < mutate) near_misses(r, &d, &raw, t);
    }
    frames_decoder_free(&d);
    frames_reader_close(r);
}

static void test_vectors_and_their_near_misses(void **state) {
    char dir[8400];
    DIR *dp;
    struct dirent *e;
    tally all = {0, 0, 0, 0}, tracers = {0, 0, 0, 0};
    int files = 0;
    (void)state;
    snprintf(dir, sizeof dir, "%s", tu_shared("vectors/frames"));
    assert_non_null(dp = opendir(dir));
    while ((e = readdir(dp)) != NULL) {
        size_t n = strlen(e->d_name);
        char path[8700];
        if (n < 8 || strcmp(e->d_name + n - 7, ".frames") != 0) continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        /* the output of real tracers: the TCG plugin's (tcg_) and qemu tracewrap's (tw_) */
        check_trace(path, 24, strncmp(e->d_name, "tcg_", 4) && strncmp(e->d_name, "tw_", 3) ? &all
                                                                                            : &tracers);
        files++;
    }
    closedir(dp);
    assert_true(files >= 20);
    /* the check takes most of what tracers write, and never everything it is shown */
    assert_true(tracers.records > 1000);
    assert_true(tracers.taken * 10 > tracers.records * 9);
    assert_true(all.taken > 0 && all.taken < all.records);
    assert_true(all.mutants_taken + tracers.mutants_taken > 0);
    assert_true(all.mutants_taken < all.mutants / 2);
}

static void test_recorded_trace(void **state) {
#ifdef TU_RECORD_BUILT
    const char *trace = tu_tmp_path(".frames");
    tally t = {0, 0, 0, 0};
    (void)state;
    if (!tu_vg_tool_built()) skip();
    free(tu_run_ok("frames record", "'%s' record --quiet -f -o '%s' -- /bin/true 2>&1", tu_frames_bin(),
                   trace));
    check_trace(trace, 300, &t);
    unlink(trace);
    assert_true(t.records > 10000);
    assert_true(t.taken * 100 > t.records * 99);
#else
    (void)state;
    skip();
#endif
}

/* `frames cat IN OUT` (TOC checked by its reading) against `frames cat - OUT < IN` (the
   TOC checked by a scan first): the same bytes and the same messages. */
static void same_as_from_standard_input(const char *in) {
    const char *a = tu_tmp_path(".frames"), *b = tu_tmp_path(".frames");
    char *out_a, *out_b;
    unsigned char *da, *db;
    size_t na = 0, nb = 0;
    int sa, sb;
    out_a = tu_run(&sa, "'%s' cat '%s' '%s' 2>&1", tu_frames_bin(), in, a);
    out_b = tu_run(&sb, "'%s' cat - '%s' < '%s' 2>&1", tu_frames_bin(), b, in);
    assert_int_equal(sa, sb);
    assert_string_equal(out_a, out_b);
    da = tu_read_file(a, &na);
    db = tu_read_file(b, &nb);
    assert_int_equal(da != NULL, db != NULL);
    if (da) {
        assert_int_equal(na, nb);
        assert_memory_equal(da, db, na);
    }
    free(da);
    free(db);
    free(out_a);
    free(out_b);
    unlink(a);
    unlink(b);
}

static void test_cat_toc_check_by_reading(void **state) {
    static const char *const names[] = {"r05_toc_m4_n10_mips", "r06_toc_m4_n8_ppc64", "r07_toc_m1_n5",
                                        "tcg_r05_m4_n10", "tw_r05_m5_n10_exact", "rz_r05_zero_pad",
                                        "tcg_r06_m4_n8_exact"};
    size_t i;
    (void)state;
    for (i = 0; i < sizeof names / sizeof names[0]; i++) {
        char rel[200], bad[512];
        unsigned char *t;
        uint64_t version, T, F, off, offs[64], entries, e;
        size_t n = 0, k = 0;
        snprintf(rel, sizeof rel, "vectors/frames/%s.frames", names[i]);
        snprintf(bad, sizeof bad, "%s", tu_tmp_path(".frames"));
        same_as_from_standard_input(tu_shared(rel));
        /* each TOC entry in turn pointing at the frame after its own (a record start, so
           that opening still trusts the TOC): the copy is made again from a scan */
        assert_non_null(t = tu_read_file(tu_shared(rel), &n));
        version = tu_le64(t + 8);
        T = tu_le64(t + (version == 1 ? 32 : 40));
        F = version == 1 ? 40 : 56 + tu_le64(t + 48);
        for (off = F; off + 8 <= T && k < 64; off += 8 + tu_le64(t + off)) offs[k++] = off;
        entries = (n - T - 8) / 8;
        for (e = 0; e < entries; e++) {
            uint64_t entry = tu_le64(t + T + 8 + 8 * e), j;
            for (j = 0; j + 1 < k && offs[j] != entry; j++)
                ;
            if (j + 1 >= k) continue;
            tu_put_le64(t + T + 8 + 8 * e, offs[j + 1]);
            assert_int_equal(tu_write_file(bad, t, n), 0);
            same_as_from_standard_input(bad);
            tu_put_le64(t + T + 8 + 8 * e, entry);
        }
        free(t);
        unlink(bad);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vectors_and_their_near_misses),
        cmocka_unit_test(test_recorded_trace),
        cmocka_unit_test(test_cat_toc_check_by_reading),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
