// fuzz-seeds: frames vectors/frames/*.frames
// fuzz-seeds: meta vectors/frames/*.frames
// fuzz-flags: -max_len=65536

/* fuzz_print - the protobuf-text, JSON and JSON Lines printers on every frame and meta
   frame that decodes from the input.

   Invariants:
   - JSON output is exactly one valid JSON value with valid UTF-8 strings; the JSON string
     printer turns any bytes into one valid JSON string; operand rows are one valid JSON
     object per line, one line per operand;
   - protobuf text output is balanced: every "NAME {" line has its "}" line at the same
     indentation, nothing is indented less than the requested indent, each line ends in
     a newline, and every string is a well-formed C-escaped literal;
   - printing is deterministic, and an output callback that fails part-way makes the
     printer return FRAMES_E_IO after writing a prefix of the full output, never more. */
#include "fuzz_util.h"

/* Balanced blocks, indentation, escapes (protobuf TextFormat as protoc prints it). */
static void fz_check_pbtext(const char *s, size_t n, int indent) {
    int depth = 0;
    size_t i = 0;
    FZ_CHECK(n == 0 || s[n - 1] == '\n');
    while (i < n) {
        size_t end = i, k;
        int spaces = 0;
        while (end < n && s[end] != '\n') end++;
        while (i + (size_t)spaces < end && s[i + spaces] == ' ') spaces++;
        FZ_CHECK(end > i + (size_t)spaces); /* no empty lines */
        if (s[i + spaces] == '}') {
            FZ_CHECK(end == i + (size_t)spaces + 1);
            depth--;
            FZ_CHECK(depth >= 0 && spaces == indent + 2 * depth);
        } else {
            FZ_CHECK(spaces == indent + 2 * depth);
            if (end - i >= 2 && s[end - 1] == '{' && s[end - 2] == ' ') {
                depth++;
            } else {
                /* "name: value"; a quoted value has only escaped quotes and backslashes */
                const char *colon = memchr(s + i, ':', end - i);
                FZ_CHECK(colon && colon + 2 <= s + end && colon[1] == ' ');
                if (colon[2] == '"') {
                    FZ_CHECK(s[end - 1] == '"' && s + end - 1 > colon + 2);
                    for (k = (size_t)(colon + 3 - s); k < end - 1; k++) {
                        unsigned char c = (unsigned char)s[k];
                        FZ_CHECK(c >= 0x20 && c < 0x7f && c != '"');
                        if (c == '\\') {
                            c = (unsigned char)s[++k];
                            FZ_CHECK(k < end - 1);
                            if (c >= '0' && c <= '3') {
                                FZ_CHECK(k + 2 < end - 1 && s[k + 1] >= '0' && s[k + 1] <= '7' &&
                                         s[k + 2] >= '0' && s[k + 2] <= '7');
                                k += 2;
                            } else {
                                FZ_CHECK(strchr("nrt\\\"'", c) != NULL);
                            }
                        }
                    }
                }
            }
        }
        i = end + 1;
    }
    FZ_CHECK(depth == 0);
}

typedef int (*fz_print_fn)(const void *obj, int indent, frames_out_fn out, void *ctx);

static int fz_frame_pbtext(const void *o, int indent, frames_out_fn out, void *ctx) {
    return frames_print_frame_pbtext((const frames_frame *)o, indent, out, ctx);
}
static int fz_frame_json(const void *o, int indent, frames_out_fn out, void *ctx) {
    (void)indent;
    return frames_print_frame_json((const frames_frame *)o, out, ctx);
}
static int fz_meta_pbtext(const void *o, int indent, frames_out_fn out, void *ctx) {
    return frames_print_meta_pbtext((const frames_meta *)o, indent, out, ctx);
}
static int fz_meta_json(const void *o, int indent, frames_out_fn out, void *ctx) {
    (void)indent;
    return frames_print_meta_json((const frames_meta *)o, out, ctx);
}

/* Print; check determinism and a failing callback; return the output (caller frees). */
static fz_buf fz_print(fz_print_fn fn, const void *obj, int indent, size_t cut) {
    fz_buf a, b;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    FZ_CHECK(fn(obj, indent, fz_out, &a) == FRAMES_OK);
    FZ_CHECK(fn(obj, indent, fz_out, &b) == FRAMES_OK);
    FZ_CHECK(a.len == b.len && (a.len == 0 || memcmp(a.p, b.p, a.len) == 0));
    fz_buf_free(&b);
    if (a.len > 1) {
        b.fail_after = 1 + cut % (a.len - 1);
        FZ_CHECK(fn(obj, indent, fz_out, &b) == FRAMES_E_IO);
        FZ_CHECK(b.len <= b.fail_after && (b.len == 0 || memcmp(a.p, b.p, b.len) == 0));
        fz_buf_free(&b);
    }
    return a;
}

/* JSON Lines rows: one valid object per operand, each ending in a newline. */
static void fz_check_rows(const frames_frame *f, uint64_t index) {
    fz_buf out;
    uint32_t opts = f->present ? f->present : 1u << f->kind, i;
    size_t want = 0, lines = 0, at = 0;
    memset(&out, 0, sizeof out);
    FZ_CHECK(frames_print_operand_rows_jsonl(f, index, fz_out, &out) == FRAMES_OK);
    if (opts & (1u << FRAMES_KIND_STD))
        want += f->std.npre + (f->std.has_post ? f->std.npost : 0);
    if (opts & (1u << FRAMES_KIND_KEY))
        for (i = 0; i < f->key.count; i++) want += f->key.lists[i].count;
    while (at < out.len) {
        const char *nl = memchr(out.p + at, '\n', out.len - at);
        FZ_CHECK(nl != NULL);
        FZ_CHECK(fz_json_valid(out.p + at, (size_t)(nl - (out.p + at))) && out.p[at] == '{');
        at = (size_t)(nl - out.p) + 1;
        lines++;
    }
    FZ_CHECK(lines == want);
    fz_buf_free(&out);
}

/* Both printers of one decoded object: protobuf text (well nested at indent) and JSON
   (one valid object). */
static void fz_check_printers(fz_print_fn pbtext, fz_print_fn json, const void *obj, int indent,
                              size_t cut) {
    fz_buf out = fz_print(pbtext, obj, indent, cut);
    fz_check_pbtext(out.p, out.len, indent);
    fz_buf_free(&out);
    out = fz_print(json, obj, 0, cut);
    FZ_CHECK(fz_json_valid(out.p, out.len) && out.p[0] == '{');
    fz_buf_free(&out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    frames_decoder d;
    frames_frame f;
    frames_meta m;
    fz_buf out;
    int indent = (int)(size % 5) * 2;
    size_t base = hc_state.live;
    hc_mark();

    memset(&out, 0, sizeof out);
    FZ_CHECK(frames_print_json_string(data, size, fz_out, &out) == FRAMES_OK);
    FZ_CHECK(out.len >= 2 && out.p[0] == '"' && fz_json_valid(out.p, out.len));
    fz_buf_free(&out);

    frames_decoder_init(&d, NULL, 0, NULL);
    if (frames_decode_frame(&d, data, size, &f, NULL) == FRAMES_OK) {
        fz_check_printers(fz_frame_pbtext, fz_frame_json, &f, indent, size);
        fz_check_rows(&f, size);
    }
    if (frames_decode_meta(&d, data, size, &m, NULL) == FRAMES_OK)
        fz_check_printers(fz_meta_pbtext, fz_meta_json, &m, indent, size);
    frames_decoder_free(&d);
    FZ_CHECK(hc_state.live == base);
    FZ_CHECK_MEMORY(base, size);
    return 0;
}
