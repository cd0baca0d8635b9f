/* test_robustness - regression tests for defects found by fuzzing frames.h (each test
   names the invariant of tests/fuzz/ that caught it) and hand-made hostile inputs. */
#include "frames.h"
#pragma GCC diagnostic ignored "-Wunused-function" /* testutil.h helpers this suite skips */
#include "testutil.h"

/* Encode f leniently into a malloc'd buffer. */
static uint8_t *encode(const frames_frame *f, size_t *len) {
    size_t size = frames_frame_size(f);
    uint8_t *buf = malloc(size + 1);
    assert_non_null(buf);
    assert_int_equal(frames_encode_frame(f, FRAMES_ENC_LENIENT, buf, size, len, NULL), FRAMES_OK);
    assert_int_equal(*len, size);
    return buf;
}

/* A frame the decoder calls canonical must re-encode to the same bytes (fuzz_decode).
   Two unknown options: only the first is kept, so the second must mark the frame
   non-canonical. */
static void test_second_unknown_option_is_noncanonical(void **state) {
    static const uint8_t in[] = {0x08, 0x0a, 0x08, 0x00}; /* field 1 as varint, twice */
    frames_decoder d;
    frames_frame f;
    uint8_t *out;
    size_t len;
    (void)state;
    frames_decoder_init(&d, NULL, 0, NULL);
    assert_int_equal(frames_decode_frame(&d, in, sizeof in, &f, NULL), FRAMES_OK);
    assert_int_equal(f.kind, FRAMES_KIND_UNKNOWN);
    assert_int_equal(f.unknown.field, 1);
    assert_int_equal(f.unknown.scalar, 10);
    out = encode(&f, &len);
    assert_int_equal(len, 2); /* the second option is gone ... */
    assert_true(f.flags & FRAMES_FF_NONCANONICAL); /* ... and the decoder says so */
    free(out);
    frames_decoder_free(&d);
}

/* An unknown option with a known option's field number (wrong wire type) before that
   option: the encoder writes the known option first, so this is not canonical. */
static void test_unknown_option_before_known_same_number(void **state) {
    static const uint8_t in[] = {0x08, 0x08,                    /* 1: varint 8 */
                                 0x0a, 0x08, 0x08, 0x00, 0x10, 0x00, /* std_frame */
                                 0x1a, 0x00, 0x22, 0x00};
    static const uint8_t after[] = {0x0a, 0x08, 0x08, 0x00, 0x10, 0x00, 0x1a, 0x00, 0x22, 0x00,
                                    0x08, 0x08};
    frames_decoder d;
    frames_frame f;
    uint8_t *out;
    size_t len;
    (void)state;
    frames_decoder_init(&d, NULL, 0, NULL);
    assert_int_equal(frames_decode_frame(&d, in, sizeof in, &f, NULL), FRAMES_OK);
    assert_int_equal(f.kind, FRAMES_KIND_STD);
    assert_int_equal(f.unknown.field, 1);
    out = encode(&f, &len);
    assert_int_equal(len, sizeof after);
    assert_memory_equal(out, after, len);
    assert_true(f.flags & FRAMES_FF_NONCANONICAL);
    free(out);
    /* the other order is what the encoder writes: canonical */
    assert_int_equal(frames_decode_frame(&d, after, sizeof after, &f, NULL), FRAMES_OK);
    assert_false(f.flags & FRAMES_FF_NONCANONICAL);
    frames_decoder_free(&d);
}

/* An unknown group option is re-emitted verbatim, so a non-minimal varint inside it does
   not make the frame non-canonical (the encoder's output must decode as canonical). */
static void test_unknown_group_option_is_copied_verbatim(void **state) {
    /* option 6 as a group holding field 12 = varint 0x30 written in two bytes */
    static const uint8_t in[] = {0x33, 0x60, 0xb0, 0x00, 0x34};
    frames_decoder d;
    frames_frame f;
    uint8_t *out;
    size_t len;
    (void)state;
    frames_decoder_init(&d, NULL, 0, NULL);
    assert_int_equal(frames_decode_frame(&d, in, sizeof in, &f, NULL), FRAMES_OK);
    assert_int_equal(f.kind, FRAMES_KIND_UNKNOWN);
    assert_int_equal(f.unknown.wire_type, 3);
    assert_true(f.flags & FRAMES_FF_GROUP);
    assert_false(f.flags & FRAMES_FF_NONCANONICAL);
    out = encode(&f, &len);
    assert_int_equal(len, sizeof in);
    assert_memory_equal(out, in, len);
    free(out);
    frames_decoder_free(&d);
}

/* ---------------------------------------------------------------- printers */

/* The JSON printers wrote a comma before the top-level object (fuzz_print: output must
   be one valid JSON value). */
static void test_json_has_no_leading_comma(void **state) {
    frames_frame f;
    frames_meta m;
    tu_text t = {NULL, 0, 0};
    (void)state;
    f = tu_modload_frame("a", 1, 2);
    assert_int_equal(frames_print_frame_json(&f, tu_text_out, &t), FRAMES_OK);
    assert_string_equal(t.s, "{\"modload_frame\":{\"module_name\":\"a\",\"low_address\":1,"
                             "\"high_address\":2}}");
    memset(&f, 0, sizeof f);
    t.n = 0;
    assert_int_equal(frames_print_frame_json(&f, tu_text_out, &t), FRAMES_OK);
    assert_string_equal(t.s, "{}");
    memset(&m, 0, sizeof m);
    t.n = 0;
    assert_int_equal(frames_print_meta_json(&m, tu_text_out, &t), FRAMES_OK);
    assert_true(t.n > 2 && t.s[0] == '{' && t.s[t.n - 1] == '}');
    free(t.s);
}

/* ---------------------------------------------------------------- readers */

/* Read every record of data with a memory reader and a stream reader (3-byte reads),
   with max_frame_size `limit` (0: default); both must deliver `want` records and report
   the truncation at (off, bytes), or no truncation when bytes is 0. */
static void expect_records_and_cut_limited(const uint8_t *data, size_t len, uint64_t want,
                                           uint64_t off, uint64_t bytes, uint64_t limit) {
    frames_reader_options o;
    frames_reader *r;
    frames_reader_info st;
    frames_raw raw;
    tu_trickle src = {data, len, 0, 3, 0};
    frames_io io = {&src, tu_trickle_read, NULL};
    uint64_t n;
    int pass;
    frames_reader_options_default(&o);
    o.limits.max_frame_size = limit;
    for (pass = 0; pass < 2; pass++) {
        if (pass == 0) assert_int_equal(frames_reader_open_memory(&r, data, len, &o, NULL), FRAMES_OK);
        else assert_int_equal(frames_reader_open_io(&r, &io, &o, NULL), FRAMES_OK);
        for (n = 0; frames_reader_next_raw(r, &raw) > 0; n++) continue;
        assert_int_equal(n, want);
        assert_int_equal(frames_reader_info_get(r, &st), FRAMES_OK);
        assert_int_equal(st.nframes, want);
        assert_int_equal(st.truncated, bytes != 0);
        if (bytes) {
            assert_int_equal(st.truncated_offset, off);
            assert_int_equal(st.truncated_bytes, bytes);
        }
        frames_reader_close(r);
    }
}

static void expect_records_and_cut(const uint8_t *data, size_t len, uint64_t want,
                                   uint64_t off, uint64_t bytes) {
    expect_records_and_cut_limited(data, len, want, off, bytes, 0);
}

/* Stream and memory readers must agree on a record that runs past the TOC offset
   (fuzz_reader): the stream reader reported the distance to T as the bytes present,
   though T lay past the end of the cut file, and read a size word across T. */
static void test_stream_cut_at_toc_offset(void **state) {
    size_t len = 0;
    uint8_t *v = tu_read_file(tu_shared("vectors/frames/r05_toc_m4_n10_mips.frames"), &len);
    uint8_t *cut;
    (void)state;
    assert_non_null(v);
    assert_int_equal(len, 1014); /* frame 0 at 0xf5 (50 bytes), frame 1 at 0x12f (83) */
    /* the file cut at 0x150, inside frame 1, whose size word now claims 10000 bytes: T
       (0x3de) lies past the end, the record crosses it, 0x150 - 0x12f bytes are present */
    cut = malloc(0x150);
    memcpy(cut, v, 0x150);
    tu_put_le64(cut + 0x12f, 10000);
    expect_records_and_cut(cut, 0x150, 1, 0x12f, 0x150 - 0x12f);
    /* T moved to 4 bytes after frame 0: only half a size word lies before it */
    tu_put_le64(v + 40, 0x12f + 4);
    expect_records_and_cut(v, len, 1, 0x12f, 4);
    free(cut);
    free(v);
}

/* Append m and `entries` words of 0xff..ff to data[0..len) (t has room); returns the
   new length. */
static size_t append_pipe_toc(uint8_t *t, size_t len, uint64_t m, size_t entries) {
    tu_put_le64(t + len, m);
    len += 8;
    while (entries-- > 0) {
        tu_put_le64(t + len, UINT64_MAX);
        len += 8;
    }
    return len;
}

/* Words after the last frame of an unfinished trace are libtrace's pipe TOC only if they
   are m and the floor((n-1)/m) entries it pushes (a lone word only if it is libtrace's
   default m); otherwise they are a truncated record and must be reported as such
   (fuzz_writer: a trace cut just after a size word). */
static void test_pipe_toc_needs_the_right_entry_count(void **state) {
    size_t len = 0, big = 0, n;
    uint8_t *v = tu_read_file(tu_shared("vectors/frames/r09_unfinished_no_finish_call.frames"), &len);
    uint8_t *w = tu_read_file(tu_shared("vectors/frames/r10_default_m_n10001.frames"), &big);
    uint8_t *t;
    uint64_t T;
    (void)state;
    assert_non_null(v);
    assert_non_null(w);
    assert_int_equal(len, 452); /* 3 frames, ending at the end of the file */
    t = malloc(big + 32);
    memcpy(t, v, len);
    n = append_pipe_toc(t, len, 10000, 0); /* 3 frames, libtrace's m = 10000: just m */
    expect_records_and_cut(t, n, 3, 0, 0);
    n = append_pipe_toc(t, len, 300, 0); /* a lone word other than 10000: the size word */
    expect_records_and_cut(t, n, 3, len, 8); /* of a cut frame */
    n = append_pipe_toc(t, len, (uint64_t)1 << 40, 0);
    expect_records_and_cut(t, n, 3, len, 8);
    n = append_pipe_toc(t, len, 2, 0); /* m = 2 would need one entry */
    expect_records_and_cut(t, n, 3, len, 8);
    n = append_pipe_toc(t, len, 10000, 1); /* one entry too many */
    expect_records_and_cut(t, n, 3, len, 16);
    /* m above the frame size limit: the stream reader skips the record unread, and must
       still see libtrace's m */
    n = append_pipe_toc(t, len, 10000, 0);
    expect_records_and_cut_limited(t, n, 3, 0, 0, 5000);
    /* libtrace's pipe output for 10001 frames, m = 10000: header n = T = 0, m, one entry */
    T = (uint64_t)w[40] | (uint64_t)w[41] << 8 | (uint64_t)w[42] << 16 | (uint64_t)w[43] << 24;
    assert_int_equal(big, T + 16);
    memcpy(t, w, (size_t)T);
    tu_put_le64(t + 32, 0);
    tu_put_le64(t + 40, 0);
    n = append_pipe_toc(t, (size_t)T, 10000, 1);
    expect_records_and_cut(t, n, 10001, 0, 0);
    n = append_pipe_toc(t, (size_t)T, 10000, 0); /* an entry missing */
    expect_records_and_cut(t, n, 10001, T, 8);
    free(t);
    free(v);
    free(w);
}

/* A finished trace cut inside the TOC's first word: the frames end at T for the memory
   reader as for a stream reader (which cannot know the file size); the memory reader
   used to read past T and report the TOC bytes as a truncated record (fuzz_reader). */
static void test_cut_inside_toc_word(void **state) {
    size_t len = 0, k;
    uint8_t *v = tu_read_file(tu_shared("vectors/frames/r05_toc_m4_n10_mips.frames"), &len);
    (void)state;
    assert_non_null(v);
    assert_int_equal(len, 1014); /* T = 0x3de */
    for (k = 0; k <= 8; k++) expect_records_and_cut(v, 0x3de + k, 10, 0, 0);
    free(v);
}

/* A size word near 2^64 after the last frame: the stream reader computed 8 + size, which
   wrapped around, "skipped" 7 bytes as an oversized frame and read on from there
   (fuzz_reader). It is a truncated record, as the memory reader says. */
static void test_stream_huge_size_word(void **state) {
    size_t len = 0;
    uint8_t *v = tu_read_file(tu_shared("vectors/frames/r09_unfinished_no_finish_call.frames"), &len);
    uint8_t *t;
    uint64_t sizes[] = {UINT64_MAX, UINT64_MAX - 7, UINT64_MAX - 8, (uint64_t)1 << 63};
    size_t i;
    (void)state;
    assert_non_null(v);
    t = malloc(len + 40);
    memcpy(t, v, len);
    memset(t + len, 0x11, 40);
    for (i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        tu_put_le64(t + len, sizes[i]);
        expect_records_and_cut(t, len + 40, 3, len, 40);
    }
    free(t);
    free(v);
}

/* A TOC can pass validation (increasing entries on record boundaries, last block ending
   at T after the right number of frames) while its earlier blocks are not m frames long,
   so the header's count is wrong. Sequential reading stopped at that count and hid the
   last frame, and a later scan left seek using the TOC (fuzz_reader: seek(count) failed).
   Reading now follows the records and drops the TOC when they disagree. */
static void test_toc_that_fools_validation(void **state) {
    size_t len = 0;
    uint8_t *v = tu_read_file(tu_shared("vectors/frames/r05_toc_m4_n10_mips.frames"), &len);
    /* r05: m = 4, 10 frames; frame 4 at 0x21f, 7 at 0x2ee, 9 at 0x383; T = 0x3de */
    static const struct { uint64_t n, toc0, toc1; } lies[] = {
        {9, 0x21f, 0x383},  /* last block = frame 9 alone: says 9 frames */
        {11, 0x21f, 0x2ee}, /* last block = frames 7..9: says 11 frames */
    };
    size_t i;
    (void)state;
    assert_non_null(v);
    for (i = 0; i < sizeof lies / sizeof lies[0]; i++) {
        frames_reader *r;
        frames_reader_info st;
        frames_raw raw;
        uint64_t n = 0, count;
        tu_put_le64(v + 32, lies[i].n);
        tu_put_le64(v + 0x3de + 8, lies[i].toc0);
        tu_put_le64(v + 0x3de + 16, lies[i].toc1);
        /* the premise: validation accepts the TOC, so count trusts it before reading */
        assert_int_equal(frames_reader_open_memory(&r, v, len, NULL, NULL), FRAMES_OK);
        assert_int_equal(frames_reader_count(r, &count), FRAMES_OK);
        assert_int_equal(count, lies[i].n);
        frames_reader_close(r);
        assert_int_equal(frames_reader_open_memory(&r, v, len, NULL, NULL), FRAMES_OK);
        while (frames_reader_next_raw(r, &raw) > 0) n++;
        assert_int_equal(n, 10);
        assert_int_equal(frames_reader_info_get(r, &st), FRAMES_OK);
        assert_int_equal(st.nframes, 10);
        assert_false(st.toc_used);
        assert_int_equal(frames_reader_count(r, &count), FRAMES_OK);
        assert_int_equal(count, 10);
        assert_int_equal(frames_reader_seek(r, 9), FRAMES_OK);
        assert_int_equal(frames_reader_next_raw(r, &raw), 1);
        assert_int_equal(raw.offset, 0x383);
        assert_int_equal(frames_reader_seek(r, 10), FRAMES_OK);
        assert_int_equal(frames_reader_next_raw(r, &raw), 0);
        frames_reader_close(r);
    }
    free(v);
}

/* The last record of an unfinished trace that is larger than max_frame_size is refused
   unread (FRAMES_E_LIMIT, a frame index of its own) by reading, by the stream reader and
   now also by the scan behind count/stat, which decoded it and dropped it as garbage, so
   that count said 3 after 4 records (fuzz_reader). */
static void test_oversized_last_record_counts_once(void **state) {
    size_t len = 0;
    uint8_t *v = tu_read_file(tu_shared("vectors/frames/r09_unfinished_no_finish_call.frames"), &len);
    uint8_t *t;
    frames_reader_options o;
    tu_trickle src;
    frames_io io = {&src, tu_trickle_read, NULL};
    int pass;
    (void)state;
    assert_non_null(v);
    t = malloc(len + 308);
    memcpy(t, v, len);
    tu_put_le64(t + len, 300); /* a 300-byte record that is not a frame */
    memset(t + len + 8, 0xff, 300);
    frames_reader_options_default(&o);
    o.limits.max_frame_size = 200; /* above the meta frame (189) and the frames */
    for (pass = 0; pass < 2; pass++) {
        frames_reader *r;
        frames_reader_info st;
        frames_raw raw;
        uint64_t count;
        int rc, i;
        src.p = t;
        src.n = len + 308;
        src.pos = 0;
        src.chunk = 5;
        src.vary = 0;
        if (pass == 0) assert_int_equal(frames_reader_open_memory(&r, t, len + 308, &o, NULL), FRAMES_OK);
        else assert_int_equal(frames_reader_open_io(&r, &io, &o, NULL), FRAMES_OK);
        for (i = 0; i < 3; i++) assert_int_equal(frames_reader_next_raw(r, &raw), 1);
        rc = frames_reader_next_raw(r, &raw);
        assert_int_equal(rc, FRAMES_E_LIMIT);
        assert_int_equal(frames_reader_error(r)->frame, 3);
        assert_int_equal(frames_reader_error(r)->offset, len);
        assert_int_equal(frames_reader_next_raw(r, &raw), 0);
        assert_int_equal(frames_reader_info_get(r, &st), FRAMES_OK);
        assert_int_equal(st.nframes, 4);
        assert_int_equal(frames_reader_count(r, &count), FRAMES_OK);
        assert_int_equal(count, 4);
        frames_reader_close(r);
    }
    free(t);
    free(v);
}

/* A writer killed inside finish leaves an unfinished trace ending in its TOC (m and the
   entries, whole or cut). Read as records, m was a size word and the entries a bogus
   frame, which `frames fix` then kept (test_crash found it); readers now recognise the
   TOC, the stream reader as the memory reader. */
static void test_toc_of_a_writer_killed_while_finishing(void **state) {
    static const int tocs[] = {FRAMES_TOC_LIBTRACE, FRAMES_TOC_CEIL, FRAMES_TOC_TRACEWRAP,
                               FRAMES_TOC_CEIL_ZERO};
    size_t c, cut;
    (void)state;
    for (c = 0; c < 2 * sizeof tocs / sizeof tocs[0]; c++) {
        frames_membuf b;
        frames_sink sink = frames_sink_memory(&b);
        frames_writer_options o;
        frames_writer *w;
        frames_frame f;
        uint64_t i, T;
        frames_membuf_init(&b, NULL);
        frames_writer_options_default(&o);
        /* m = 4: the stream reader sees the record (4 bytes) before any whole entry, and
           must read on instead of taking it for a frame (fuzz_reader) */
        o.frames_per_toc = c & 1 ? 4 : 16;
        o.toc = tocs[c / 2];
        assert_int_equal(frames_writer_open(&w, &sink, &o, NULL, NULL), FRAMES_OK);
        memset(&f, 0, sizeof f);
        f.kind = FRAMES_KIND_EXCEPTION;
        for (i = 0; i < 64; i++) { /* 64 = 4 m: tracewrap and ceil add their extra entry */
            f.exception.number = i;
            assert_int_equal(frames_writer_add(w, &f), FRAMES_OK);
        }
        assert_int_equal(frames_writer_close(w), FRAMES_OK);
        memcpy(&T, b.data + 40, 8);
        memset(b.data + 32, 0, 16); /* the header was never patched */
        /* every cut from "m and one whole entry" to the whole TOC */
        for (cut = (size_t)T + 16; cut <= b.size; cut++) expect_records_and_cut(b.data, cut, 64, 0, 0);
        frames_membuf_free(&b);
    }
}

/* A meta frame larger than the writer's 64 KiB buffer (a big environment in envp) made
   frames_writer_open fail with FRAMES_E_SPACE, and with it frames fix, cat and slice on
   such traces (fuzz_reader: frames_fix must repair whatever opens). An allocated buffer
   now grows to hold header and meta. */
static void test_meta_larger_than_writer_buffer(void **state) {
    static frames_bytes env[3000];
    static char text[3000][40];
    frames_membuf b, fixed;
    frames_sink sink = frames_sink_memory(&b), sink2 = frames_sink_memory(&fixed);
    frames_meta m;
    frames_writer *w;
    frames_reader *r;
    frames_fix_report rep;
    frames_frame f;
    size_t i;
    (void)state;
    frames_membuf_init(&b, NULL);
    frames_membuf_init(&fixed, NULL);
    memset(&m, 0, sizeof m);
    for (i = 0; i < 3000; i++) {
        snprintf(text[i], sizeof text[i], "VARIABLE_%04zu=some value here", i);
        env[i] = frames_str(text[i]);
    }
    m.target_envp = env;
    m.ntarget_envp = 3000; /* about 100 KB */
    assert_true(frames_meta_size(&m) > 65536);
    assert_int_equal(frames_writer_open(&w, &sink, NULL, &m, NULL), FRAMES_OK);
    memset(&f, 0, sizeof f);
    f.kind = FRAMES_KIND_EXCEPTION;
    assert_int_equal(frames_writer_add(w, &f), FRAMES_OK);
    assert_int_equal(frames_writer_close(w), FRAMES_OK);
    assert_int_equal(frames_reader_open_memory(&r, b.data, b.size, NULL, NULL), FRAMES_OK);
    assert_non_null(frames_reader_meta(r));
    assert_int_equal(frames_reader_meta(r)->ntarget_envp, 3000);
    assert_int_equal(frames_fix(r, &sink2, NULL, &rep, NULL), FRAMES_OK);
    assert_int_equal(rep.frames, 1);
    frames_reader_close(r);
    assert_int_equal(fixed.size, b.size);
    assert_memory_equal(fixed.data, b.data, b.size);
    frames_membuf_free(&b);
    frames_membuf_free(&fixed);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_second_unknown_option_is_noncanonical),
        cmocka_unit_test(test_unknown_option_before_known_same_number),
        cmocka_unit_test(test_unknown_group_option_is_copied_verbatim),
        cmocka_unit_test(test_json_has_no_leading_comma),
        cmocka_unit_test(test_stream_cut_at_toc_offset),
        cmocka_unit_test(test_pipe_toc_needs_the_right_entry_count),
        cmocka_unit_test(test_cut_inside_toc_word),
        cmocka_unit_test(test_stream_huge_size_word),
        cmocka_unit_test(test_toc_that_fools_validation),
        cmocka_unit_test(test_oversized_last_record_counts_once),
        cmocka_unit_test(test_toc_of_a_writer_killed_while_finishing),
        cmocka_unit_test(test_meta_larger_than_writer_buffer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
