/* test_protoc.c - protoc (libprotobuf 3.21) as an independent oracle for the codec.

   tests/frames.proto is the schema written from the specification (§7). Against it:
   (a) every `frame` and `meta` block of the reference dumps (../shared/vectors/frames/NAME.txt)
       is encoded by `protoc --encode`; the bytes must equal the payload in the .frames file
       and frames_encode_frame / frames_encode_meta of our decoding of that payload;
   (b) frames and meta frames from a fixed-seed generator (every message, every optional
       field present and absent, extreme values, NUL and invalid UTF-8, frames > 16 KiB)
       are printed with our text printer and encoded by protoc, which must give exactly
       our encoding; and protoc's decoding of our bytes must be exactly our printer's text.

   protoc costs ~7 ms per process (measured: 20 runs of --encode=frame in 0.14 s) and the
   vectors hold ~30,000 frames, so messages are batched: a wrapper message
   `frames_test_batch { repeated frame frame = 1; repeated meta_frame meta = 2; }`, written
   to a temporary directory at startup (it only imports frames.proto), carries a whole
   file's frames through one protoc process. An element of a repeated message field is
   serialized as tag, length and exactly the bytes of the message on its own, so batching
   does not change what is compared; test_unbatched checks that on a few cases with plain
   --encode=frame / --decode=frame. The whole suite takes about a second.

   On a byte mismatch the two encodings are shown through `protoc --decode_raw`, which
   names the first differing field without trusting either schema. */
#include "frames.h"
#include "testutil.h"

#include <float.h>

/* ------------------------------------------------------------------ small utilities */

typedef struct sbuf {
    char *p;
    size_t n, cap;
} sbuf;

static void sb_add(sbuf *b, const void *s, size_t n) {
    b->p = (char *)tu_append(b->p, &b->n, &b->cap, s, n);
}
static void sb_str(sbuf *b, const char *s) { sb_add(b, s, strlen(s)); }
static void sb_byte(sbuf *b, uint8_t c) { sb_add(b, &c, 1); }
static void sb_varint(sbuf *b, uint64_t v) {
    while (v >= 0x80) {
        sb_byte(b, (uint8_t)(v | 0x80));
        v >>= 7;
    }
    sb_byte(b, (uint8_t)v);
}
static void sb_free(sbuf *b) {
    free(b->p);
    memset(b, 0, sizeof *b);
}
static int sb_out(void *ctx, const char *s, size_t n) {
    sb_add((sbuf *)ctx, s, n);
    return 0;
}

/* A view of one element of a batch (bytes or text). */
typedef struct elem {
    uint32_t field;
    const uint8_t *p;
    size_t n;
} elem;

/* --------------------------------------------------------------------- protoc driver */

static char g_tmp[512];          /* temp dir holding frames_batch.proto and I/O files */
static char g_proto_dir[4096];   /* directory of tests/frames.proto */

static void find_proto_dir(void) {
    const char *e = getenv("FRAMES_PROTO_DIR");
    char file_dir[4096];
    char *slash;
    if (e && *e) {
        snprintf(g_proto_dir, sizeof g_proto_dir, "%s", e);
        return;
    }
    if (access(tu_src("tests/frames.proto"), R_OK) == 0) {
        snprintf(g_proto_dir, sizeof g_proto_dir, "%s", tu_src("tests"));
        return;
    }
    snprintf(file_dir, sizeof file_dir, "%s", __FILE__);   /* tests/test_protoc.c */
    slash = strrchr(file_dir, '/');
    if (slash) *slash = 0;
    else snprintf(file_dir, sizeof file_dir, ".");
    snprintf(g_proto_dir, sizeof g_proto_dir, "%s", file_dir);
}

static int setup(void **state) {
    char path[600];
    static const char batch_proto[] =
        "// written by tests/test_protoc.c: many messages through one protoc process\n"
        "syntax = \"proto2\";\n"
        "import \"frames.proto\";\n"
        "message frames_test_batch {\n"
        "  repeated frame frame = 1;\n"
        "  repeated meta_frame meta = 2;\n"
        "}\n";
    (void)state;
    find_proto_dir();
    snprintf(g_tmp, sizeof g_tmp, "%s/frames-protoc-XXXXXX", tu_tmpdir());
    if (!mkdtemp(g_tmp)) return -1;
    snprintf(path, sizeof path, "%s/frames_batch.proto", g_tmp);
    return tu_write_file(path, batch_proto, sizeof batch_proto - 1);
}

static int teardown(void **state) {
    static const char *names[] = {"frames_batch.proto", "in", "out", "err", "a.bin", "b.bin"};
    char path[600];
    size_t i;
    (void)state;
    for (i = 0; i < sizeof names / sizeof names[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", g_tmp, names[i]);
        unlink(path);
    }
    rmdir(g_tmp);
    return 0;
}

static void require_protoc(void) {
    int st = -1;
    char *out = tu_run(&st, "protoc --version 2>&1");
    if (st != 0 || !out || strncmp(out, "libprotoc ", 10) != 0)
        fail_msg("protoc not found or not working (`protoc --version`: %s): this test needs "
                 "the Debian package protobuf-compiler (`./build.sh deps` installs it)",
                 out ? out : "?");
    free(out);
    {
        char path[4200];
        snprintf(path, sizeof path, "%s/frames.proto", g_proto_dir);
        if (access(path, R_OK) != 0)
            fail_msg("%s not found (run from the repository root or set FRAMES_PROTO_DIR)", path);
    }
}

/* `protoc --encode=MESSAGE`, `--decode=MESSAGE` (with frames_batch.proto, which imports
   frames.proto) or `--decode_raw` (message NULL) on `in`; returns the output (malloc'd)
   and fails the test with protoc's stderr. */
static uint8_t *protoc(const char *args, const char *message, const void *in, size_t inlen,
                       size_t *outlen) {
    char in_path[600], out_path[600], err_path[600];
    int st = -1;
    char *junk;
    uint8_t *out;
    snprintf(in_path, sizeof in_path, "%s/in", g_tmp);
    snprintf(out_path, sizeof out_path, "%s/out", g_tmp);
    snprintf(err_path, sizeof err_path, "%s/err", g_tmp);
    assert_int_equal(tu_write_file(in_path, in, inlen), 0);
    if (message)
        junk = tu_run(&st, "protoc -I'%s' -I'%s' %s%s frames_batch.proto < '%s' > '%s' 2> '%s'",
                      g_proto_dir, g_tmp, args, message, in_path, out_path, err_path);
    else
        junk = tu_run(&st, "protoc %s < '%s' > '%s' 2> '%s'", args, in_path, out_path, err_path);
    free(junk);
    if (st != 0) {
        char *err = (char *)tu_read_file(err_path, NULL);
        if (err && strlen(err) > 3000) err[3000] = 0;
        fail_msg("protoc %s%s failed (status %d): %s", args, message ? message : "", st,
                 err ? err : "(no stderr)");
    }
    out = tu_read_file(out_path, outlen);
    assert_non_null(out);
    return out;
}

/* Show two differing encodings as protoc --decode_raw sees them (first differing line). */
static void explain_bytes(const char *what, const uint8_t *want, size_t wn, const uint8_t *got,
                          size_t gn) {
    size_t i = 0, an = 0, bn = 0, line = 1, bol = 0;
    uint8_t *a, *b;
    while (i < wn && i < gn && want[i] == got[i]) i++;
    print_error("%s: %zu bytes expected, %zu produced, first difference at byte %zu\n", what,
                wn, gn, i);
    a = protoc("--decode_raw", NULL, want, wn, &an);
    b = protoc("--decode_raw", NULL, got, gn, &bn);
    for (i = 0; i < an && i < bn && a[i] == b[i]; i++)
        if (a[i] == '\n') {
            line++;
            bol = i + 1;
        }
    print_error("protoc --decode_raw differs at line %zu:\n  expected: %.*s\n  produced: %.*s\n",
                line, (int)strcspn((const char *)a + bol, "\n"), (const char *)a + bol,
                (int)strcspn((const char *)b + bol, "\n"), (const char *)b + bol);
    free(a);
    free(b);
}

static void expect_bytes(const char *what, const uint8_t *want, size_t wn, const uint8_t *got,
                         size_t gn) {
    if (wn == gn && memcmp(want, got, wn) == 0) return;
    explain_bytes(what, want, wn, got, gn);
    fail_msg("%s: bytes differ", what);
}

static void expect_text(const char *what, const char *want, size_t wn, const char *got,
                        size_t gn) {
    size_t i = 0, line = 1, bol = 0;
    if (wn == gn && memcmp(want, got, wn) == 0) return;
    for (; i < wn && i < gn && want[i] == got[i]; i++)
        if (want[i] == '\n') {
            line++;
            bol = i + 1;
        }
    fail_msg("%s: text differs at line %zu:\n  protoc: %.*s\n  ours:   %.*s", what, line,
             (int)strcspn(want + bol, "\n"), want + bol, (int)strcspn(got + bol, "\n"), got + bol);
}

/* Split a serialized frames_test_batch into its elements (LEN fields 1 and 2). */
static size_t split_batch(const uint8_t *p, size_t n, elem **out) {
    size_t count = 0, cap = 0, i = 0;
    elem *v = NULL;
    while (i < n) {
        uint64_t tag = 0, len = 0;
        int shift = 0;
        do {
            assert_true(i < n);
            tag |= (uint64_t)(p[i] & 0x7f) << shift;
            shift += 7;
        } while (p[i++] & 0x80);
        assert_int_equal(tag & 7, 2);
        shift = 0;
        do {
            assert_true(i < n && shift < 64);
            len |= (uint64_t)(p[i] & 0x7f) << shift;
            shift += 7;
        } while (p[i++] & 0x80);
        assert_true(len <= n - i);
        if (count == cap) {
            cap = cap ? cap * 2 : 64;
            v = (elem *)realloc(v, cap * sizeof *v);
            assert_non_null(v);
        }
        v[count].field = (uint32_t)(tag >> 3);
        v[count].p = p + i;
        v[count].n = (size_t)len;
        count++;
        i += (size_t)len;
    }
    *out = v;
    return count;
}

/* Split protoc's text of a batch into top-level blocks ("frame {" ... "}\n"). */
static size_t split_text(const char *s, size_t n, elem **out) {
    size_t count = 0, cap = 0, i = 0;
    elem *v = NULL;
    while (i < n) {
        size_t start = i;
        uint32_t field = strncmp(s + i, "frame {\n", 8) == 0 ? 1 : strncmp(s + i, "meta {\n", 7) == 0 ? 2 : 0;
        if (!field) fail_msg("unexpected top-level line in protoc output: %.80s", s + i);
        for (;;) {   /* to the closing "}" in column 0 */
            const char *nl = (const char *)memchr(s + i, '\n', n - i);
            assert_non_null(nl);
            i = (size_t)(nl - s) + 1;
            if (i >= 2 && s[i - 2] == '}' && (i == 2 || s[i - 3] == '\n')) break;
        }
        if (count == cap) {
            cap = cap ? cap * 2 : 64;
            v = (elem *)realloc(v, cap * sizeof *v);
            assert_non_null(v);
        }
        v[count].field = field;
        v[count].p = (const uint8_t *)s + start;
        v[count].n = i - start;
        count++;
    }
    *out = v;
    return count;
}

/* ---------------------------------------------------------- (a) the reference dumps */

typedef struct block {
    int meta;
    uint64_t index, offset, size;
    size_t body_start, body_len;   /* in the batch text */
} block;

/* Parses the dump's `meta {` and `frame N @ 0xOFF size S {` blocks into batch text (the
   blocks' bodies are already indented by two, as elements of the batch message). */
static size_t parse_dump(const char *txt, sbuf *batch, block **out) {
    size_t count = 0, cap = 0;
    block *v = NULL, cur;
    int in = 0, skip = 0;
    const char *line = txt;
    memset(&cur, 0, sizeof cur);
    while (*line) {
        const char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        unsigned long long idx, off, size;
        char tail;
        if (in || skip) {
            if (len == 1 && line[0] == '}') {
                if (in) {
                    sb_str(batch, "}\n");
                    cur.body_len = batch->n - cur.body_start;
                    if (count == cap) {
                        cap = cap ? cap * 2 : 64;
                        v = (block *)realloc(v, cap * sizeof *v);
                        assert_non_null(v);
                    }
                    v[count++] = cur;
                }
                in = skip = 0;
            } else if (in) {
                sb_add(batch, line, len);
                sb_str(batch, "\n");
            }
        } else if (len == 6 && strncmp(line, "meta {", 6) == 0) {
            memset(&cur, 0, sizeof cur);
            cur.meta = 1;
            cur.body_start = batch->n;
            sb_str(batch, "meta {\n");
            in = 1;
        } else if (sscanf(line, "frame %llu @ 0x%llx size %llu %c", &idx, &off, &size, &tail) == 4 &&
                   tail == '{') {
            memset(&cur, 0, sizeof cur);
            cur.index = idx;
            cur.offset = off;
            cur.size = size;
            cur.body_start = batch->n;
            sb_str(batch, "frame {\n");
            in = 1;
        } else if (len > 2 && line[0] != ' ' && line[len - 1] == '{') {
            skip = 1;   /* header { ... }, toc { ... }, ... */
        }
        if (!nl) break;
        line = nl + 1;
    }
    *out = v;
    return count;
}

/* Our encoding of our decoding of `payload` (a frame or the meta frame). */
static uint8_t *reencode(int meta, const uint8_t *payload, size_t n, size_t *outlen,
                         const char *what) {
    frames_decoder d;
    frames_error err;
    frames_frame f;
    frames_meta m;
    size_t cap = n + 64, len = 0;
    uint8_t *buf = (uint8_t *)malloc(cap);
    int rc;
    assert_non_null(buf);
    frames_decoder_init(&d, NULL, 0, NULL);
    rc = meta ? frames_decode_meta(&d, payload, n, &m, &err)
              : frames_decode_frame(&d, payload, n, &f, &err);
    if (rc != FRAMES_OK) fail_msg("%s: our decoder failed: %s", what, err.message);
    rc = meta ? frames_encode_meta(&m, buf, cap, &len, &err)
              : frames_encode_frame(&f, FRAMES_ENC_LENIENT, buf, cap, &len, &err);
    if (rc != FRAMES_OK) fail_msg("%s: our encoder failed: %s", what, err.message);
    frames_decoder_free(&d);
    *outlen = len;
    return buf;
}

static void check_vector(const char *name, size_t *nframes, size_t *nmeta) {
    char rel[300], what[400];
    size_t flen = 0, tlen = 0, nblocks, nelems, i, next_frame = 0, next_meta = 0;
    uint8_t *file, *pb;
    char *txt;
    sbuf batch = {0};
    block *blocks = NULL;
    elem *elems = NULL;
    snprintf(rel, sizeof rel, "vectors/frames/%s.frames", name);
    file = tu_read_file(tu_shared(rel), &flen);
    snprintf(rel, sizeof rel, "vectors/frames/%s.txt", name);
    txt = (char *)tu_read_file(tu_shared(rel), &tlen);
    assert_non_null(file);
    assert_non_null(txt);
    nblocks = parse_dump(txt, &batch, &blocks);
    if (flen > 0x38) assert_true(nblocks > 0);   /* a dump with frames or a meta frame */
    if (nblocks == 0) goto done;
    pb = protoc("--encode=", "frames_test_batch", batch.p, batch.n, &tlen);
    nelems = split_batch(pb, tlen, &elems);
    assert_int_equal(nelems, nblocks);
    /* protoc writes every `frame` element, then every `meta` one (field order); the k-th
       frame block is the k-th field-1 element, the meta block the only field-2 one */
    for (i = 0; i < nblocks; i++) {
        const block *b = &blocks[i];
        const elem *e = NULL;
        const uint8_t *payload;
        uint8_t *ours;
        size_t ourlen, *cur = b->meta ? &next_meta : &next_frame;
        while (*cur < nelems && elems[*cur].field != (b->meta ? 2u : 1u)) (*cur)++;
        assert_true(*cur < nelems);
        e = &elems[(*cur)++];
        if (b->meta) {
            uint64_t msize;
            assert_true(flen >= 0x38);
            msize = tu_le64(file + 0x30);
            assert_true(msize <= flen - 0x38);
            payload = file + 0x38;
            snprintf(what, sizeof what, "%s meta frame", name);
            expect_bytes(what, payload, (size_t)msize, e->p, e->n);
            ours = reencode(1, payload, (size_t)msize, &ourlen, what);
            expect_bytes(what, payload, (size_t)msize, ours, ourlen);
            (*nmeta)++;
        } else {
            snprintf(what, sizeof what, "%s frame %llu @ 0x%llx", name,
                     (unsigned long long)b->index, (unsigned long long)b->offset);
            assert_true(b->offset + 8 + b->size <= flen);
            assert_int_equal(tu_le64(file + b->offset), b->size);
            payload = file + b->offset + 8;
            expect_bytes(what, payload, (size_t)b->size, e->p, e->n);
            ours = reencode(0, payload, (size_t)b->size, &ourlen, what);
            expect_bytes(what, payload, (size_t)b->size, ours, ourlen);
            (*nframes)++;
        }
        free(ours);
    }
    free(pb);
done:
    free(elems);
    free(blocks);
    sb_free(&batch);
    free(file);
    free(txt);
}

static void test_vectors_encode(void **state) {
    char cmd[4200];
    char *list, *name;
    int st = -1;
    size_t nfiles = 0, nframes = 0, nmeta = 0;
    (void)state;
    require_protoc();
    snprintf(cmd, sizeof cmd, "ls '%s' | sed -n 's/\\.txt$//p'", tu_shared("vectors/frames"));
    list = tu_run(&st, "%s", cmd);
    assert_int_equal(st, 0);
    for (name = strtok(list, "\n"); name; name = strtok(NULL, "\n")) {
        check_vector(name, &nframes, &nmeta);
        nfiles++;
    }
    free(list);
    print_message("protoc agrees on %zu frames and %zu meta frames of %zu reference dumps\n",
                  nframes, nmeta, nfiles);
    assert_true(nfiles >= 25);
    assert_true(nframes >= 30000);
    assert_true(nmeta >= 20);
}

/* --------------------------------------------------------- (b) generated frames */

typedef struct rng {
    uint64_t s;
} rng;

static uint64_t next(rng *g) {   /* splitmix64 */
    uint64_t z = (g->s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
static uint32_t below(rng *g, uint32_t n) { return (uint32_t)(next(g) % n); }
static int chance(rng *g, uint32_t percent) { return below(g, 100) < percent; }

/* Everything a generated frame points to, freed together. */
typedef struct pool {
    void **v;
    size_t n, cap;
} pool;

static void *pool_alloc(pool *p, size_t size) {
    void *m = calloc(1, size ? size : 1);
    assert_non_null(m);
    if (p->n == p->cap) {
        p->cap = p->cap ? p->cap * 2 : 256;
        p->v = (void **)realloc(p->v, p->cap * sizeof *p->v);
        assert_non_null(p->v);
    }
    p->v[p->n++] = m;
    return m;
}
static void pool_free(pool *p) {
    size_t i;
    for (i = 0; i < p->n; i++) free(p->v[i]);
    free(p->v);
    memset(p, 0, sizeof *p);
}

static uint64_t gen_u64(rng *g) {
    static const uint64_t edge[] = {0, 1, 127, 128, 255, 16383, 16384, 0x7fffffffull,
                                    0xffffffffull, 0x100000000ull, 0x7fffffffffffffffull,
                                    0x8000000000000000ull, UINT64_MAX, UINT64_MAX - 1};
    switch (below(g, 4)) {
    case 0: return edge[below(g, sizeof edge / sizeof edge[0])];
    case 1: return next(g);
    case 2: return next(g) >> below(g, 64);
    default: return below(g, 1000);
    }
}

static int64_t gen_i64(rng *g) {
    static const int64_t edge[] = {0, 1, -1, 63, -64, 64, -65, INT32_MAX, INT32_MIN,
                                   INT64_MAX, INT64_MIN, INT64_MIN + 1, 0x7ffe1234};
    switch (below(g, 3)) {
    case 0: return edge[below(g, sizeof edge / sizeof edge[0])];
    case 1: return (int64_t)next(g);
    default: {
        uint64_t u = next(g) >> below(g, 64);
        return (int64_t)(chance(g, 50) ? 0 - u : u);   /* no signed overflow */
    }
    }
}

static int32_t gen_i32(rng *g) {
    static const int32_t edge[] = {0, 1, -1, 8, 16, 32, 64, 128, -64, 80, INT32_MAX, INT32_MIN,
                                   INT32_MIN + 1};
    switch (below(g, 3)) {
    case 0: return edge[below(g, sizeof edge / sizeof edge[0])];
    case 1: return (int32_t)(uint32_t)next(g);
    default: return (int32_t)below(g, 2000) - 1000;
    }
}

static double double_of(uint64_t bits) {
    double d;
    memcpy(&d, &bits, sizeof d);
    return d;
}

/* Doubles whose text form protoc reads back bit for bit: every value except NaNs other
   than the canonical quiet NaN (text has only "nan"). */
static double gen_double(rng *g) {
    uint64_t bits;
    switch (below(g, 16)) {
    case 0: return 0.0;
    case 1: return -0.0;
    case 2: return double_of(0x7ff0000000000000ull);    /* inf */
    case 3: return double_of(0xfff0000000000000ull);    /* -inf */
    case 4: return double_of(0x7ff8000000000000ull);    /* nan as protoc parses "nan" */
    case 5: return DBL_MAX;
    case 6: return -DBL_MAX;
    case 7: return DBL_MIN;
    case 8: return double_of(1);                        /* smallest subnormal */
    case 9: return 1700000000.0 + below(g, 1000) / 8.0;
    case 10: return 0.1 * below(g, 100);
    case 11: return (double)(int64_t)next(g);
    case 12: return -1.25e300;
    default:
        bits = next(g);
        if ((bits & 0x7ff0000000000000ull) == 0x7ff0000000000000ull && (bits & 0xfffffffffffffull))
            bits = 0x7ff8000000000000ull;
        return double_of(bits);
    }
}

/* Byte strings: empty, short, long, > 16 KiB (when big), with NUL, quotes, backslashes,
   control characters, valid UTF-8 and invalid UTF-8. */
static frames_bytes gen_bytes(rng *g, pool *p, int big) {
#define W(s) {s, sizeof s - 1}
    static const struct { const char *s; size_t n; } words[] = {
        W("RAX"), W("EFLAGS"), W("R0"), W("xmm0"), W("\"quoted\""), W("back\\slash"),
        W("line\nfeed"), W("tab\tcr\r"), W("it's"), W("\xc3\xa9t\xc3\xa9"),
        W("\xe6\x97\xa5\xe6\x9c\xac"), W("nul\0in"), W("\xff\xfe"), W("\xc3("),
        W("\xed\xa0\x80"), W("arm:t32")};
#undef W
    size_t len, i;
    uint8_t *b;
    uint32_t mode = below(g, 6);
    if (big) len = 16385 + below(g, 4000);
    else switch (below(g, 6)) {
        case 0: len = 0; break;
        case 1: len = 1; break;
        case 2: len = 8; break;
        case 3: len = 2 + below(g, 15); break;
        case 4: len = 17 + below(g, 120); break;
        default: len = 130 + below(g, 500); break;
        }
    b = (uint8_t *)pool_alloc(p, len);
    for (i = 0; i < len; i++) {
        switch (mode) {
        case 0: b[i] = (uint8_t)next(g); break;                       /* anything */
        case 1: b[i] = (uint8_t)(0x20 + below(g, 0x5f)); break;        /* printable */
        case 2: {                                                     /* words */
            size_t w = below(g, sizeof words / sizeof words[0]), k;
            for (k = 0; k < words[w].n && i < len; k++) b[i++] = (uint8_t)words[w].s[k];
            i--;
            break;
        }
        case 3: b[i] = (uint8_t)(0x80 + below(g, 0x80)); break;        /* high bytes only */
        case 4: b[i] = (uint8_t)below(g, 0x20); break;                 /* controls, NUL */
        default: b[i] = "\0\"\\\n'?a\x7f\x80"[below(g, 9)]; break;    /* escape-heavy */
        }
    }
    return frames_bytes_of(b, len);
}

static frames_taint gen_taint(rng *g, int lenient) {
    frames_taint t;
    memset(&t, 0, sizeof t);
    t.set = (uint8_t)(lenient ? below(g, 8) : 1u << below(g, 3));
    t.no_taint = (uint8_t)below(g, 2);
    t.multiple = (uint8_t)below(g, 2);
    t.id = gen_u64(g);
    return t;
}

/* An operand_info (std frames) or value_info (key frames). Writing an operand_info with
   no taint option means `no_taint: true` while the printer prints the model (`taint_info
   {}`), so operand_infos always get an option here. */
static void gen_operand(rng *g, pool *p, frames_operand *op, int value_info, int lenient,
                        int big) {
    memset(op, 0, sizeof *op);
    op->spec = (uint8_t)(lenient && chance(g, 30) ? below(g, 4) : 1u << below(g, 2));
    op->address = gen_u64(g);
    op->name = gen_bytes(g, p, 0);
    op->bit_length = gen_i32(g);
    if (!value_info) {
        op->read = (uint8_t)below(g, 2);
        op->written = (uint8_t)below(g, 2);
        op->index = (uint8_t)below(g, 2);
        op->base = (uint8_t)below(g, 2);
    }
    op->taint = gen_taint(g, lenient);
    if (value_info && chance(g, 40)) op->taint.set = 0;
    if (!value_info && op->taint.set == 0) op->taint.set = FRAMES_TAINT_NONE;
    op->value = gen_bytes(g, p, big);
}

static const frames_operand *gen_operands(rng *g, pool *p, uint32_t *n, int value_info,
                                          int lenient, int big) {
    uint32_t i, count = below(g, 5);
    frames_operand *ops;
    if (big && count == 0) count = 1;
    ops = (frames_operand *)pool_alloc(p, count * sizeof *ops);
    for (i = 0; i < count; i++) gen_operand(g, p, &ops[i], value_info, lenient, big && i == 0);
    *n = count;
    return ops;
}

static void gen_option(rng *g, pool *p, frames_frame *f, int kind, int lenient, int big) {
    uint32_t i;
    switch (kind) {
    case FRAMES_KIND_STD: {
        frames_std_frame *s = &f->std;
        s->address = gen_u64(g);
        s->thread_id = gen_u64(g);
        s->rawbytes = gen_bytes(g, p, big && chance(g, 50));
        s->pre = gen_operands(g, p, &s->npre, 0, lenient, big && s->rawbytes.len < 16384);
        s->has_post = (uint8_t)chance(g, 60);
        if (s->has_post) s->post = gen_operands(g, p, &s->npost, 0, lenient, 0);
        s->has_mode = (uint8_t)chance(g, 30);
        if (s->has_mode) s->mode = gen_bytes(g, p, 0);
        break;
    }
    case FRAMES_KIND_SYSCALL: {
        frames_syscall_frame *s = &f->syscall;
        int64_t *args;
        s->address = gen_u64(g);
        s->thread_id = gen_u64(g);
        s->number = gen_u64(g);
        s->nargs = big ? 3000 : below(g, 8);
        args = (int64_t *)pool_alloc(p, s->nargs * sizeof *args);
        for (i = 0; i < s->nargs; i++) args[i] = gen_i64(g);
        s->args = args;
        break;
    }
    case FRAMES_KIND_EXCEPTION: {
        frames_exception_frame *x = &f->exception;
        x->number = gen_u64(g);
        x->has_thread_id = (uint8_t)below(g, 2);
        x->has_from_addr = (uint8_t)below(g, 2);
        x->has_to_addr = (uint8_t)below(g, 2);
        x->thread_id = gen_u64(g);
        x->from_addr = gen_u64(g);
        x->to_addr = gen_u64(g);
        break;
    }
    case FRAMES_KIND_TAINT_INTRO: {
        frames_taint_intro *t;
        f->taint_intro.count = big ? 1 : below(g, 4);
        t = (frames_taint_intro *)pool_alloc(p, f->taint_intro.count * sizeof *t);
        for (i = 0; i < f->taint_intro.count; i++) {
            t[i].addr = gen_u64(g);
            t[i].taint_id = gen_u64(g);
            t[i].offset = gen_u64(g);
            t[i].value = gen_bytes(g, p, big);
            t[i].source_name = gen_bytes(g, p, 0);
            t[i].has_value = (uint8_t)(big || below(g, 2));
            t[i].has_source_name = (uint8_t)below(g, 2);
            t[i].has_offset = (uint8_t)below(g, 2);
        }
        f->taint_intro.intros = t;
        break;
    }
    case FRAMES_KIND_MODLOAD:
        f->modload.module_name = gen_bytes(g, p, big);
        f->modload.low_address = gen_u64(g);
        f->modload.high_address = gen_u64(g);
        break;
    default: {
        frames_tagged_values *t;
        f->key.count = big ? 1 : below(g, 4);
        t = (frames_tagged_values *)pool_alloc(p, f->key.count * sizeof *t);
        for (i = 0; i < f->key.count; i++) {
            t[i].tag_set = (uint8_t)(lenient ? below(g, 4) : 1u << below(g, 2));
            t[i].no_thread_id = (uint8_t)below(g, 2);
            t[i].thread_id = gen_u64(g);
            t[i].values = gen_operands(g, p, &t[i].count, 1, lenient, big);
        }
        f->key.lists = t;
        break;
    }
    }
}

/* Case i: mostly one valid option of kind 1 + i % 6; every 10th is "lenient" (several or
   no options, several options in inner variants: what libprotobuf also writes); every
   25th holds a value or list that makes it larger than 16 KiB. */
static void gen_frame(rng *g, pool *p, frames_frame *f, unsigned i, unsigned *flags) {
    int lenient = i % 10 == 9, big = i % 25 == 7;
    int k;
    memset(f, 0, sizeof *f);
    if (!lenient) {
        f->kind = (frames_kind)(1 + i % 6);
        gen_option(g, p, f, f->kind, 0, big);
        *flags = 0;
        return;
    }
    f->present = i % 200 == 199 ? 0 : (uint32_t)below(g, 64) << 1;   /* 0: empty frame */
    for (k = 1; k <= 6; k++)
        if (f->present & (1u << k)) gen_option(g, p, f, k, 1, 0);
    for (k = 1; k <= 6 && !(f->present & (1u << k)); k++) {}
    f->kind = k <= 6 ? (frames_kind)k : FRAMES_KIND_NONE;
    *flags = FRAMES_ENC_LENIENT;
}

static uint8_t *encode_ours(const frames_frame *f, unsigned flags, size_t *len) {
    frames_error err;
    size_t need = frames_frame_size(f);
    uint8_t *buf = (uint8_t *)malloc(need + 1);
    assert_non_null(buf);
    if (frames_encode_frame(f, flags, buf, need + 1, len, &err) != FRAMES_OK)
        fail_msg("frames_encode_frame: %s", err.message);
    assert_int_equal(*len, need);
    return buf;
}

#define NRANDOM 600u

static void test_random_frames(void **state) {
    rng g = {0x6672616d65730001ull};   /* fixed seed: "frames", 1 */
    pool p = {0};
    frames_frame *frames = (frames_frame *)calloc(NRANDOM, sizeof *frames);
    uint8_t **ours = (uint8_t **)calloc(NRANDOM, sizeof *ours);
    size_t *ourlen = (size_t *)calloc(NRANDOM, sizeof *ourlen);
    sbuf text = {0}, bin = {0};
    size_t *tstart = (size_t *)calloc(NRANDOM + 1, sizeof *tstart);
    size_t n, i, big = 0, kinds[8] = {0};
    uint8_t *enc;
    char *dec;
    elem *e;
    char what[80];
    (void)state;
    require_protoc();
    assert_non_null(frames);
    for (i = 0; i < NRANDOM; i++) {
        unsigned flags;
        gen_frame(&g, &p, &frames[i], (unsigned)i, &flags);
        ours[i] = encode_ours(&frames[i], flags, &ourlen[i]);
        tstart[i] = text.n;
        sb_str(&text, "frame {\n");
        assert_int_equal(frames_print_frame_pbtext(&frames[i], 2, sb_out, &text), FRAMES_OK);
        sb_str(&text, "}\n");
        sb_byte(&bin, 0x0a);
        sb_varint(&bin, ourlen[i]);
        sb_add(&bin, ours[i], ourlen[i]);
        big += ourlen[i] > 16384;
        kinds[frames[i].kind]++;
    }
    tstart[NRANDOM] = text.n;
    /* protoc encodes our text: must be our bytes */
    enc = protoc("--encode=", "frames_test_batch", text.p, text.n, &n);
    assert_int_equal(split_batch(enc, n, &e), NRANDOM);
    for (i = 0; i < NRANDOM; i++) {
        snprintf(what, sizeof what, "generated frame %zu (kind %d)", i, (int)frames[i].kind);
        if (ourlen[i] != e[i].n || memcmp(ours[i], e[i].p, e[i].n) != 0)
            print_error("text given to protoc:\n%.*s", (int)(tstart[i + 1] - tstart[i]) > 4000 ? 4000 : (int)(tstart[i + 1] - tstart[i]),
                        text.p + tstart[i]);
        expect_bytes(what, e[i].p, e[i].n, ours[i], ourlen[i]);
    }
    free(e);
    free(enc);
    /* protoc decodes our bytes: must be our text */
    dec = (char *)protoc("--decode=", "frames_test_batch", bin.p, bin.n, &n);
    assert_int_equal(split_text(dec, n, &e), NRANDOM);
    for (i = 0; i < NRANDOM; i++) {
        snprintf(what, sizeof what, "generated frame %zu (kind %d)", i, (int)frames[i].kind);
        expect_text(what, (const char *)e[i].p, e[i].n, text.p + tstart[i],
                    tstart[i + 1] - tstart[i]);
    }
    /* our decoder reads our bytes back to the same model (same text, same bytes) */
    for (i = 0; i < NRANDOM; i++) {
        frames_decoder d;
        frames_frame back;
        frames_error err;
        sbuf again = {0};
        uint8_t *re;
        size_t relen;
        snprintf(what, sizeof what, "generated frame %zu (kind %d) decoded", i, (int)frames[i].kind);
        frames_decoder_init(&d, NULL, 0, NULL);
        if (frames_decode_frame(&d, ours[i], ourlen[i], &back, &err) != FRAMES_OK)
            fail_msg("%s: %s", what, err.message);
        assert_int_equal(frames_print_frame_pbtext(&back, 2, sb_out, &again), FRAMES_OK);
        expect_text(what, text.p + tstart[i] + 8, tstart[i + 1] - tstart[i] - 10,
                    again.p ? again.p : "", again.n);
        re = encode_ours(&back, FRAMES_ENC_LENIENT, &relen);
        expect_bytes(what, ours[i], ourlen[i], re, relen);
        free(re);
        sb_free(&again);
        frames_decoder_free(&d);
    }
    print_message("protoc agrees on %d generated frames (%zu larger than 16 KiB)\n", (int)NRANDOM, big);
    assert_true(big >= 10);
    for (i = FRAMES_KIND_STD; i <= FRAMES_KIND_KEY; i++) assert_true(kinds[i] >= 50);
    assert_true(kinds[FRAMES_KIND_NONE] >= 1);
    free(e);
    free(dec);
    for (i = 0; i < NRANDOM; i++) free(ours[i]);
    free(ours);
    free(ourlen);
    free(tstart);
    free(frames);
    sb_free(&text);
    sb_free(&bin);
    pool_free(&p);
}

/* ------------------------------------------------------------------- meta frames */

static const frames_bytes *gen_strings(rng *g, pool *p, uint32_t *n) {
    uint32_t i, count = below(g, 4);
    frames_bytes *v = (frames_bytes *)pool_alloc(p, count * sizeof *v);
    for (i = 0; i < count; i++) v[i] = gen_bytes(g, p, 0);
    *n = count;
    return v;
}

static void gen_meta(rng *g, pool *p, frames_meta *m, unsigned i) {
    memset(m, 0, sizeof *m);
    m->tracer_name = gen_bytes(g, p, 0);
    m->tracer_args = gen_strings(g, p, &m->ntracer_args);
    m->tracer_envp = gen_strings(g, p, &m->ntracer_envp);
    m->tracer_version = gen_bytes(g, p, 0);
    m->target_path = gen_bytes(g, p, i % 20 == 3);
    m->target_args = gen_strings(g, p, &m->ntarget_args);
    m->target_envp = gen_strings(g, p, &m->ntarget_envp);
    m->target_md5sum = gen_bytes(g, p, 0);
    m->fstats_size = gen_i32(g);
    m->fstats_atime = gen_double(g);
    m->fstats_mtime = gen_double(g);
    m->fstats_ctime = gen_double(g);
    m->user = gen_bytes(g, p, 0);
    m->host = gen_bytes(g, p, 0);
    m->time = gen_double(g);
}

#define NMETA 120u

static void test_random_meta(void **state) {
    rng g = {0x6672616d65730002ull};
    pool p = {0};
    frames_meta *metas = (frames_meta *)calloc(NMETA, sizeof *metas);
    uint8_t **ours = (uint8_t **)calloc(NMETA, sizeof *ours);
    size_t *ourlen = (size_t *)calloc(NMETA, sizeof *ourlen);
    size_t *tstart = (size_t *)calloc(NMETA + 1, sizeof *tstart);
    sbuf text = {0}, bin = {0};
    size_t n, i;
    uint8_t *enc;
    char *dec;
    elem *e;
    char what[80];
    frames_error err;
    (void)state;
    require_protoc();
    for (i = 0; i < NMETA; i++) {
        size_t need;
        gen_meta(&g, &p, &metas[i], (unsigned)i);
        need = frames_meta_size(&metas[i]);
        ours[i] = (uint8_t *)malloc(need + 1);
        assert_non_null(ours[i]);
        if (frames_encode_meta(&metas[i], ours[i], need + 1, &ourlen[i], &err) != FRAMES_OK)
            fail_msg("frames_encode_meta: %s", err.message);
        assert_int_equal(ourlen[i], need);
        tstart[i] = text.n;
        sb_str(&text, "meta {\n");
        assert_int_equal(frames_print_meta_pbtext(&metas[i], 2, sb_out, &text), FRAMES_OK);
        sb_str(&text, "}\n");
        sb_byte(&bin, 0x12);
        sb_varint(&bin, ourlen[i]);
        sb_add(&bin, ours[i], ourlen[i]);
    }
    tstart[NMETA] = text.n;
    enc = protoc("--encode=", "frames_test_batch", text.p, text.n, &n);
    assert_int_equal(split_batch(enc, n, &e), NMETA);
    for (i = 0; i < NMETA; i++) {
        snprintf(what, sizeof what, "generated meta frame %zu", i);
        expect_bytes(what, e[i].p, e[i].n, ours[i], ourlen[i]);
    }
    free(e);
    free(enc);
    dec = (char *)protoc("--decode=", "frames_test_batch", bin.p, bin.n, &n);
    assert_int_equal(split_text(dec, n, &e), NMETA);
    for (i = 0; i < NMETA; i++) {
        snprintf(what, sizeof what, "generated meta frame %zu", i);
        expect_text(what, (const char *)e[i].p, e[i].n, text.p + tstart[i],
                    tstart[i + 1] - tstart[i]);
    }
    print_message("protoc agrees on %d generated meta frames\n", (int)NMETA);
    free(e);
    free(dec);
    for (i = 0; i < NMETA; i++) free(ours[i]);
    free(ours);
    free(ourlen);
    free(tstart);
    free(metas);
    sb_free(&text);
    sb_free(&bin);
    pool_free(&p);
}

/* ------------------------------------------------ batching changes nothing (sanity) */

/* A few generated frames through plain `protoc --encode=frame` / `--decode=frame`, one
   process each, compared with our bytes and text directly. */
static void test_unbatched(void **state) {
    rng g = {0x6672616d65730001ull};
    pool p = {0};
    unsigned i;
    (void)state;
    require_protoc();
    for (i = 0; i < 12; i++) {
        frames_frame f;
        unsigned flags;
        size_t len, n;
        uint8_t *ours, *enc;
        char *dec;
        sbuf text = {0};
        char what[80];
        gen_frame(&g, &p, &f, i, &flags);
        ours = encode_ours(&f, flags, &len);
        assert_int_equal(frames_print_frame_pbtext(&f, 0, sb_out, &text), FRAMES_OK);
        snprintf(what, sizeof what, "generated frame %u, unbatched", i);
        enc = protoc("--encode=", "frame", text.p ? text.p : "", text.n, &n);
        expect_bytes(what, enc, n, ours, len);
        dec = (char *)protoc("--decode=", "frame", ours, len, &n);
        expect_text(what, dec, n, text.p ? text.p : "", text.n);
        free(enc);
        free(dec);
        free(ours);
        sb_free(&text);
    }
    pool_free(&p);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vectors_encode),
        cmocka_unit_test(test_random_frames),
        cmocka_unit_test(test_random_meta),
        cmocka_unit_test(test_unbatched),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
