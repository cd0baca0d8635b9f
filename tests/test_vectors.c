/* test_vectors: every reference trace of ../shared/vectors/frames against its libprotobuf
   dump: the meta and frame blocks in protobuf text format, frame offsets and sizes, the
   frame count, which upstream readers accept the file, byte-exact re-encoding of every
   frame and of the whole file, random access, and the same through the `frames` command. */
#include "frames.h"

#include <dirent.h>

#include "testutil.h"

/* ---- printing into a tu_text (testutil.h) */

static void text_printf(tu_text *t, const char *fmt, ...) {
    char buf[256];
    va_list ap;
    int n;
    va_start(ap, fmt);
    n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    tu_text_out(t, buf, (size_t)n);
}

/* The `meta {` and `frame N @ ...` blocks of a dump, nothing else. */
static char *blocks_of(const char *dump) {
    tu_text t = {NULL, 0, 0};
    const char *line = dump;
    int inside = 0;
    tu_text_out(&t, "", 0);
    while (*line) {
        const char *eol = strchr(line, '\n');
        size_t len = eol ? (size_t)(eol - line + 1) : strlen(line);
        if (!inside && (!strncmp(line, "meta {", 6) || !strncmp(line, "frame ", 6))) inside = 1;
        if (inside) tu_text_out(&t, line, len);
        if (inside && line[0] == '}') inside = 0;
        line += len;
    }
    return t.s;
}

/* Value of "key: " at the start of a line of the dump (first occurrence), or NULL. */
static const char *dump_value(const char *dump, const char *key) {
    size_t k = strlen(key);
    const char *p = dump;
    while ((p = strstr(p, key)) != NULL) {
        if ((p == dump || p[-1] == '\n' || p[-1] == ' ') && p[k] == ':') return p + k + 2;
        p += k;
    }
    return NULL;
}

static int dump_says_yes(const char *dump, const char *key) {
    const char *v = dump_value(dump, key);
    assert_non_null(v);
    return !strncmp(v, "yes", 3);
}

/* ---- the vectors */

typedef struct vector {
    char name[128];
    unsigned char *bytes;
    size_t size;
    char *dump;
} vector;

static vector vectors[64];
static int nvectors;

static int cmp_names(const void *a, const void *b) {
    return strcmp(((const vector *)a)->name, ((const vector *)b)->name);
}

static int load_vectors(void **state) {
    DIR *d = opendir(tu_shared("vectors/frames"));
    struct dirent *e;
    (void)state;
    if (!d) {
        fprintf(stderr, "cannot open %s\n", tu_shared("vectors/frames"));
        return -1;
    }
    while ((e = readdir(d)) != NULL && nvectors < 64) {
        size_t n = strlen(e->d_name);
        char rel[300];
        vector *v;
        if (n < 8 || strcmp(e->d_name + n - 7, ".frames")) continue;
        v = &vectors[nvectors++];
        snprintf(v->name, sizeof v->name, "%.*s", (int)(n - 7), e->d_name);
        snprintf(rel, sizeof rel, "vectors/frames/%.120s.frames", v->name);
        v->bytes = tu_read_file(tu_shared(rel), &v->size);
        snprintf(rel, sizeof rel, "vectors/frames/%.120s.txt", v->name);
        v->dump = (char *)tu_read_file(tu_shared(rel), NULL);
        if (!v->bytes || !v->dump) return -1;
    }
    closedir(d);
    qsort(vectors, (size_t)nvectors, sizeof vectors[0], cmp_names);
    return nvectors >= 25 ? 0 : -1;
}

static int free_vectors(void **state) {
    int i;
    (void)state;
    for (i = 0; i < nvectors; i++) {
        free(vectors[i].bytes);
        free(vectors[i].dump);
    }
    return 0;
}

static int readable(const vector *v) { return strstr(v->dump, "verdict: OK") != NULL; }

static frames_reader *open_vector(const vector *v) {
    frames_reader *r = NULL;
    frames_error err;
    if (frames_reader_open_memory(&r, v->bytes, v->size, NULL, &err) < 0) {
        fprintf(stderr, "%s: %s\n", v->name, err.message);
        fail();
    }
    return r;
}

/* Our dump of the blocks, made with the library printers. */
static char *our_blocks(frames_reader *r) {
    tu_text t = {NULL, 0, 0};
    frames_frame f;
    frames_raw raw;
    int rc;
    tu_text_out(&t, "", 0);
    if (frames_reader_meta(r)) {
        text_printf(&t, "meta {\n");
        assert_int_equal(frames_print_meta_pbtext(frames_reader_meta(r), 2, tu_text_out, &t), FRAMES_OK);
        text_printf(&t, "}\n");
    }
    while ((rc = frames_reader_next_full(r, &f, &raw)) > 0) {
        text_printf(&t, "frame %llu @ 0x%llx size %zu {\n", (unsigned long long)raw.index,
                    (unsigned long long)raw.offset, raw.payload.len);
        assert_int_equal(frames_print_frame_pbtext(&f, 2, tu_text_out, &t), FRAMES_OK);
        text_printf(&t, "}\n");
    }
    assert_int_equal(rc, 0);
    return t.s;
}

static void test_dump_blocks_match(void **state) {
    int i;
    (void)state;
    for (i = 0; i < nvectors; i++) {
        const vector *v = &vectors[i];
        frames_reader *r;
        char *want, *got;
        if (!readable(v)) continue;
        r = open_vector(v);
        want = blocks_of(v->dump);
        got = our_blocks(r);
        if (strcmp(want, got)) fprintf(stderr, "dump of %s differs\n", v->name);
        assert_string_equal(got, want);
        free(want);
        free(got);
        frames_reader_close(r);
    }
}

static void test_frame_counts_and_readers(void **state) {
    int i;
    (void)state;
    for (i = 0; i < nvectors; i++) {
        const vector *v = &vectors[i];
        frames_reader *r;
        frames_reader_info st;
        frames_frame f;
        uint64_t n;
        if (!readable(v)) continue;
        r = open_vector(v);
        while (frames_reader_next(r, &f) > 0) continue;
        assert_int_equal(frames_reader_count(r, &n), FRAMES_OK);
        assert_int_equal(n, strtoull(dump_value(v->dump, "frames_read"), NULL, 10));
        assert_int_equal(frames_reader_info_get(r, &st), FRAMES_OK);
        if (st.cxx_head_accepts != dump_says_yes(v->dump, "cxx_reader_HEAD_7587868_accepts") ||
            st.cxx_legacy_accepts != dump_says_yes(v->dump, "cxx_reader_legacy_4aee1b3_accepts") ||
            st.ocaml_accepts != dump_says_yes(v->dump, "ocaml_frame_reader_accepts"))
            fprintf(stderr, "reader verdicts of %s differ\n", v->name);
        assert_int_equal(st.cxx_head_accepts, dump_says_yes(v->dump, "cxx_reader_HEAD_7587868_accepts"));
        assert_int_equal(st.cxx_legacy_accepts, dump_says_yes(v->dump, "cxx_reader_legacy_4aee1b3_accepts"));
        assert_int_equal(st.ocaml_accepts, dump_says_yes(v->dump, "ocaml_frame_reader_accepts"));
        assert_false(st.truncated);
        assert_int_equal(st.nwarnings, 0);
        frames_reader_close(r);
    }
}

/* The dump names the convention that matches ("<== matches"); ours must be among them. */
static void test_toc_convention(void **state) {
    static const struct {
        const char *dump_key;
        int toc;
    } names[] = {{"libtrace_writer_floor_n_minus_1_div_m", FRAMES_TOC_LIBTRACE},
                 {"qemu_tracewrap_floor_n_div_m", FRAMES_TOC_TRACEWRAP},
                 {"tcg_plugin_2025_and_head_reader_ceil_n_div_m", FRAMES_TOC_CEIL}};
    int i, k;
    (void)state;
    for (i = 0; i < nvectors; i++) {
        const vector *v = &vectors[i];
        frames_reader *r;
        frames_reader_info st;
        if (!readable(v)) continue;
        r = open_vector(v);
        assert_int_equal(frames_reader_info_get(r, &st), FRAMES_OK);
        if (!strstr(v->dump, "toc_offset: 0 ")) {
            uint32_t dump_matches = 0;
            for (k = 0; k < 3; k++) {
                const char *val = dump_value(v->dump, names[k].dump_key);
                assert_non_null(val);
                if (strstr(val, "<== matches") && strstr(val, "<== matches") < strchr(val, '\n'))
                    dump_matches |= 1u << names[k].toc;
            }
            /* zero padding is our own convention name for what the dump calls ceil */
            if (st.toc == FRAMES_TOC_CEIL_ZERO) assert_true(dump_matches & (1u << FRAMES_TOC_CEIL));
            else assert_true(dump_matches & (1u << st.toc));
            assert_true(st.toc_used || st.header.nframes <= st.frames_per_toc);
        } else {
            assert_int_equal(st.toc, FRAMES_TOC_NONE);
            assert_false(st.finished);
        }
        frames_reader_close(r);
    }
}

static void test_every_frame_reencodes_identically(void **state) {
    int i;
    uint8_t *buf = (uint8_t *)malloc(1 << 20);
    (void)state;
    for (i = 0; i < nvectors; i++) {
        const vector *v = &vectors[i];
        frames_reader *r;
        frames_frame f;
        frames_raw raw;
        frames_error err;
        size_t len;
        if (!readable(v)) continue;
        r = open_vector(v);
        while (frames_reader_next_full(r, &f, &raw) > 0) {
            assert_int_equal(f.flags & FRAMES_FF_NONCANONICAL, 0);
            assert_int_equal(frames_frame_size(&f), raw.payload.len);
            assert_int_equal(frames_encode_frame(&f, 0, buf, 1 << 20, &len, &err), FRAMES_OK);
            assert_int_equal(len, raw.payload.len);
            assert_memory_equal(buf, raw.payload.ptr, len);
        }
        if (frames_reader_meta(r)) {
            frames_bytes mb = frames_reader_meta_bytes(r);
            assert_int_equal(frames_encode_meta(frames_reader_meta(r), buf, 1 << 20, &len, &err), FRAMES_OK);
            assert_int_equal(len, mb.len);
            assert_memory_equal(buf, mb.ptr, len);
        }
        frames_reader_close(r);
    }
    free(buf);
}

/* ---- whole-file re-encoding through the writer into memory */

static frames_membuf rewrite(const vector *v) {
    frames_membuf out;
    frames_sink sink = frames_sink_memory(&out);
    frames_writer_options o;
    frames_writer *w;
    frames_reader *r = open_vector(v);
    frames_frame f;
    frames_error err;
    frames_membuf_init(&out, NULL);
    frames_writer_options_like(r, &o);
    o.meta_raw = frames_bytes_of(NULL, 0);
    assert_int_equal(frames_writer_open(&w, &sink, &o, frames_reader_meta(r), &err), FRAMES_OK);
    while (frames_reader_next(r, &f) > 0) assert_int_equal(frames_writer_add(w, &f), FRAMES_OK);
    assert_int_equal(frames_writer_close(w), FRAMES_OK);
    frames_reader_close(r);
    return out;
}

static void test_whole_files_rewrite_byte_identical(void **state) {
    int i, finished_checked = 0;
    (void)state;
    for (i = 0; i < nvectors; i++) {
        const vector *v = &vectors[i];
        frames_membuf out;
        if (!readable(v)) continue;
        out = rewrite(v);
        if (strstr(v->dump, "toc_offset: 0 ")) {
            /* unfinished: what libtrace's finish() would have written: n and T patched,
               m = 10000 and no entries (every vector has fewer than 10001 frames here) */
            uint8_t *want = (uint8_t *)malloc(v->size + 8);
            uint64_t n = strtoull(dump_value(v->dump, "frames_read"), NULL, 10);
            memcpy(want, v->bytes, v->size);
            tu_put_le64(want + 0x20, n);
            tu_put_le64(want + 0x28, v->size);
            tu_put_le64(want + v->size, 10000);
            assert_int_equal(out.size, v->size + 8);
            assert_memory_equal(out.data, want, out.size);
            free(want);
        } else {
            if (out.size != v->size || memcmp(out.data, v->bytes, v->size))
                fprintf(stderr, "rewrite of %s differs\n", v->name);
            assert_int_equal(out.size, v->size);
            assert_memory_equal(out.data, v->bytes, v->size);
            finished_checked++;
        }
        frames_membuf_free(&out);
    }
    assert_true(finished_checked >= 23);
}

static void test_random_access_equals_sequential(void **state) {
    int i;
    (void)state;
    for (i = 0; i < nvectors; i++) {
        const vector *v = &vectors[i];
        frames_reader *r;
        frames_raw raw;
        uint64_t n, k, *offsets;
        if (!readable(v)) continue;
        r = open_vector(v);
        assert_int_equal(frames_reader_count(r, &n), FRAMES_OK);
        offsets = (uint64_t *)malloc((size_t)(n + 1) * sizeof *offsets);
        for (k = 0; frames_reader_next_raw(r, &raw) > 0; k++) offsets[k] = raw.offset;
        assert_int_equal(k, n);
        /* backwards, so that every seek really moves */
        for (k = n; k-- > 0;) {
            assert_int_equal(frames_reader_seek(r, k), FRAMES_OK);
            assert_int_equal(frames_reader_next_raw(r, &raw), 1);
            assert_int_equal(raw.index, k);
            assert_int_equal(raw.offset, offsets[k]);
        }
        assert_int_equal(frames_reader_seek(r, n + 1), FRAMES_E_RANGE);
        free(offsets);
        frames_reader_close(r);
    }
}

static void test_zero_byte_file_is_an_error(void **state) {
    frames_reader *r;
    frames_error err;
    (void)state;
    assert_int_equal(frames_reader_open_memory(&r, "", 0, NULL, &err), FRAMES_E_FORMAT);
    assert_null(r);
    assert_non_null(strstr(err.message, "header"));
}

/* ---- the same through the command */

static void test_command_dump_cat_pc(void **state) {
    int i;
    (void)state;
    for (i = 0; i < nvectors; i++) {
        const vector *v = &vectors[i];
        char rel[300], path[4096];
        const char *tmp = tu_tmp_path(".frames");
        char *out, *want, *got;
        unsigned char *copy;
        size_t n;
        int st;
        if (!readable(v)) continue;
        snprintf(rel, sizeof rel, "vectors/frames/%.120s.frames", v->name);
        snprintf(path, sizeof path, "%s", tu_shared(rel));
        out = tu_run(&st, "%s dump --pbtext '%s'", tu_frames_bin(), path);
        assert_int_equal(st, 0);
        want = blocks_of(v->dump);
        got = blocks_of(out);
        assert_string_equal(got, want);
        free(out);
        free(want);
        free(got);
        out = tu_run(&st, "%s cat '%s' '%s'", tu_frames_bin(), path, tmp);
        assert_int_equal(st, 0);
        free(out);
        copy = tu_read_file(tmp, &n);
        assert_non_null(copy);
        if (!strstr(v->dump, "toc_offset: 0 ")) {
            assert_int_equal(n, v->size);
            assert_memory_equal(copy, v->bytes, n);
        }
        free(copy);
        unlink(tmp);
    }
}

static void test_command_pc_lists_std_addresses(void **state) {
    /* r11: the std_frame addresses, in order, as the dump gives them in decimal */
    const char *path = tu_shared("vectors/frames/r11_pintraces_like_x86.frames");
    const vector *v = NULL;
    const char *p;
    char *out, *line;
    int i, st;
    (void)state;
    for (i = 0; i < nvectors; i++)
        if (!strcmp(vectors[i].name, "r11_pintraces_like_x86")) v = &vectors[i];
    assert_non_null(v);
    out = tu_run(&st, "%s dump --pc '%s'", tu_frames_bin(), path);
    assert_int_equal(st, 0);
    line = out;
    for (p = v->dump; (p = strstr(p, "  std_frame {\n    address: ")) != NULL; p++) {
        char want[32];
        snprintf(want, sizeof want, "%016llx\n", strtoull(p + 27, NULL, 10));
        assert_memory_equal(line, want, 17);
        line += 17;
    }
    assert_int_equal(*line, 0);
    assert_true(line > out);
    free(out);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dump_blocks_match),
        cmocka_unit_test(test_frame_counts_and_readers),
        cmocka_unit_test(test_toc_convention),
        cmocka_unit_test(test_every_frame_reencodes_identically),
        cmocka_unit_test(test_whole_files_rewrite_byte_identical),
        cmocka_unit_test(test_random_access_equals_sequential),
        cmocka_unit_test(test_zero_byte_file_is_an_error),
        cmocka_unit_test(test_command_dump_cat_pc),
        cmocka_unit_test(test_command_pc_lists_std_addresses),
    };
    return cmocka_run_group_tests(tests, load_vectors, free_vectors);
}
