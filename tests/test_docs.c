/* test_docs: every complete C program in README.md and the docs directory (a ```c block with a
   main function) compiles warning-free as C99 against the headers and runs with exit
   status 0, given a reference trace as its argument; the USAGE fragments at the top of
   every header compile (C99 and C++); every header's SECTIONS index lists its banners,
   in order; every name an API OVERVIEW lists is declared in its header; every header
   ends with the licence text of LICENSE. Every frames*.h at the
   top of the tree is checked (a new header must be added to usage_context). Documentation
   that does not build is a defect like any other. */
#include "frames.h"

#include <dirent.h>

#include "testutil.h"

static int run_examples_of(const char *md_path) {
    size_t n;
    char *text = (char *)tu_read_file(md_path, &n), *p;
    int examples = 0;
    if (!text) return 0;
    for (p = text; (p = strstr(p, "```c\n")) != NULL;) {
        char *body = p + 5, *end = strstr(body, "```");
        const char *src = tu_tmp_path(".c"), *bin = tu_tmp_path("");
        char *out;
        int st;
        if (!end) break;
        p = end + 3;
        if (!strstr(body, "int main(") || strstr(body, "int main(") > end) continue;
        assert_int_equal(tu_write_file(src, body, (size_t)(end - body)), 0);
        out = tu_run(&st, "cc -std=c99 -D_GNU_SOURCE -Wall -Wextra -Wpedantic -Werror -I'%s' '%s' -o '%s' 2>&1",
                     tu_root(), src, bin);
        if (st) fprintf(stderr, "example %d of %s does not compile:\n%s\n", examples + 1, md_path, out);
        assert_int_equal(st, 0);
        free(out);
        out = tu_run(&st, "'%s' '%s'", bin, tu_shared("vectors/frames/r11_pintraces_like_x86.frames"));
        if (st) fprintf(stderr, "example %d of %s exits with %d\n", examples + 1, md_path, st);
        assert_int_equal(st, 0);
        free(out);
        unlink(src);
        unlink(bin);
        examples++;
    }
    free(text);
    return examples;
}

static void test_examples_build_and_run(void **state) {
    DIR *d = opendir(tu_src("docs"));
    struct dirent *e;
    int total = run_examples_of(tu_src("README.md"));
    (void)state;
    assert_true(total >= 1);
    assert_non_null(d);
    while ((e = readdir(d)) != NULL) {
        char path[300];
        size_t len = strlen(e->d_name);
        if (len < 4 || strcmp(e->d_name + len - 3, ".md")) continue;
        snprintf(path, sizeof path, "%s/%.200s", tu_src("docs"), e->d_name);
        total += run_examples_of(path);
    }
    closedir(d);
    assert_true(total >= 3);
}

/* ---- every ```c block of README.md and the docs pages, as C99 and as C++ (the API is said to
   work from C++: its examples must too) */

/* How a block that is not a whole program (no main) becomes a translation unit: found by
   the start of its first line, code before and after it. A fragment not listed here fails
   the test, so that every example is checked. */
static const struct {
    const char *first, *before, *after;
} doc_fragment[] = {
    {"#define FRAMES_IMPLEMENTATION   /* in exactly one file */", "", ""},
    {"#define FRAMES_PT_IMPLEMENTATION", "",   /* decode() is static: use it */
     "int frames_doc_decode(const char *a, const char *b, frames_writer *w);\n"
     "int frames_doc_decode(const char *a, const char *b, frames_writer *w) { return decode(a, b, w); }\n"},
    {"frames_recorder rec;",
     "#include \"frames.h\"\n"
     "void doc(frames_flush_fn flush_fn, void *flush_ctx, uint64_t thread_id, uint64_t pc,\n"
     "         const uint8_t *insn_bytes, size_t insn_len, const uint64_t *rax, uint64_t addr,\n"
     "         const void *before, const void *after, uint64_t number, const int64_t *args);\n"
     "void doc(frames_flush_fn flush_fn, void *flush_ctx, uint64_t thread_id, uint64_t pc,\n"
     "         const uint8_t *insn_bytes, size_t insn_len, const uint64_t *rax, uint64_t addr,\n"
     "         const void *before, const void *after, uint64_t number, const int64_t *args) {\n",
     "}\n"},
    {"  static void on_fatal",
     "#include <signal.h>\n#include \"frames.h\"\n"
     "static frames_recorder this_threads_recorder;\nstatic frames_rec_shared shared;\n",
     "void (*doc_handler)(int) = on_fatal;\n"},
    {"frames_sym *s;",
     "#include <stdio.h>\n#include \"frames_sym.h\"\nvoid doc(frames_reader *r);\nvoid doc(frames_reader *r) {\n",
     "}\n"},
};

#define NFRAGMENTS (sizeof doc_fragment / sizeof doc_fragment[0])

/* Compile src as C99 and as C++ (warnings are errors); fails the test with the output. */
static void compile_c_and_cxx(const char *src, const char *what) {
    int cxx;
    for (cxx = 0; cxx < 2; cxx++) {
        int st;
        char *out = tu_run(&st, "%s -D_GNU_SOURCE -Wall -Wextra -Wpedantic -Werror -I'%s' "
                                "-fsyntax-only '%s' 2>&1",
                           cxx ? "c++ -x c++ -std=c++11" : "cc -std=c99", tu_root(), src);
        if (st) fprintf(stderr, "%s does not compile as %s:\n%s\n", what, cxx ? "C++" : "C99", out);
        assert_int_equal(st, 0);
        free(out);
    }
}

/* Every ```c block of md_path compiled as C99 and C++; *fragments counts the wrapped ones. */
static int compile_blocks_of(const char *md_path, int *fragments) {
    size_t n;
    char *text = (char *)tu_read_file(md_path, &n), *p;
    int blocks = 0;
    if (!text) return 0;
    for (p = text; (p = strstr(p, "```c\n")) != NULL;) {
        char *body = p + 5, *end = strstr(body, "```"), what[400];
        const char *src = tu_tmp_path(".c");
        FILE *f;
        size_t k = NFRAGMENTS;
        if (!end) break;
        p = end + 3;
        blocks++;
        snprintf(what, sizeof what, "example %d of %s", blocks, md_path);
        if (!strstr(body, "int main(") || strstr(body, "int main(") > end) {
            for (k = 0; k < NFRAGMENTS; k++)
                if (!strncmp(body, doc_fragment[k].first, strlen(doc_fragment[k].first))) break;
            if (k == NFRAGMENTS) fail_msg("%s is a fragment no entry of doc_fragment wraps", what);
            (*fragments)++;
        }
        f = fopen(src, "w");
        assert_non_null(f);
        if (k < NFRAGMENTS) fputs(doc_fragment[k].before, f);
        fwrite(body, 1, (size_t)(end - body), f);
        if (k < NFRAGMENTS) fputs(doc_fragment[k].after, f);
        fclose(f);
#ifndef FRAMES_HAVE_IPT
        if (strstr(body, "frames_pt.h")) {
            unlink(src);
            continue;
        }
#endif
        compile_c_and_cxx(src, what);
        unlink(src);
    }
    free(text);
    return blocks;
}

static const char *doc_path(const char *name) {
    static char path[600];
    snprintf(path, sizeof path, "%s/%.200s", tu_src("docs"), name);
    return path;
}

/* README.md and every docs/ page, by path (malloc'd, NULL-terminated list). */
static char **doc_pages(void) {
    DIR *d = opendir(tu_src("docs"));
    struct dirent *e;
    char **pages = (char **)calloc(256, sizeof *pages);
    int n = 0;
    assert_non_null(d);
    assert_non_null(pages);
    pages[n++] = strdup(tu_src("README.md"));
    while ((e = readdir(d)) != NULL && n < 255) {
        size_t len = strlen(e->d_name);
        if (len >= 4 && !strcmp(e->d_name + len - 3, ".md"))
            pages[n++] = strdup(doc_path(e->d_name));
    }
    closedir(d);
    return pages;
}

static void test_every_example_compiles_as_c_and_cxx(void **state) {
    char **pages = doc_pages();
    int fragments = 0, total = 0, i;
    (void)state;
    for (i = 0; pages[i]; i++) {
        total += compile_blocks_of(pages[i], &fragments);
        free(pages[i]);
    }
    free(pages);
    assert_true(total >= 14);
    assert_int_equal(fragments, (int)NFRAGMENTS);   /* every wrapper still has its block */
}

/* docs/pt.md: frames_pt.h's implementation links in a file without FRAMES_IMPLEMENTATION
   when another file of the program has it, as its comment says. */
static void test_pt_implementation_links_beside_frames(void **state) {
#ifdef FRAMES_HAVE_IPT
    const char *a = tu_tmp_path(".c"), *b = tu_tmp_path(".c"), *bin = tu_tmp_path("");
    char *out;
    int st;
    static const char pt_file[] =   /* no FRAMES_IMPLEMENTATION here */
        "#define FRAMES_PT_IMPLEMENTATION\n#include \"frames_pt.h\"\n"
        "int pt_used(void);\n"
        "int pt_used(void) {\n"
        "    frames_pt *pt; frames_pt_options o; frames_error e;\n"
        "    frames_pt_options_default(&o);\n"
        "    if (frames_pt_open(&pt, &o, &e) < 0) return 0;\n"
        "    frames_pt_close(pt);\n"
        "    return 1;\n"
        "}\n";
    static const char main_file[] = "#define FRAMES_IMPLEMENTATION\n#include \"frames.h\"\n"
                                    "int pt_used(void);\nint main(void) { return !pt_used(); }\n";
    (void)state;
    assert_int_equal(tu_write_file(a, pt_file, strlen(pt_file)), 0);
    assert_int_equal(tu_write_file(b, main_file, strlen(main_file)), 0);
    out = tu_run(&st, "cc -std=c99 -D_GNU_SOURCE -Wall -Werror -I'%s' '%s' '%s' -o '%s' -lipt 2>&1 && '%s'",
                 tu_root(), a, b, bin, bin);
    if (st) fprintf(stderr, "frames_pt.h beside frames.h's implementation:\n%s\n", out);
    assert_int_equal(st, 0);
    free(out);
    unlink(a);
    unlink(b);
    unlink(bin);
#else
    (void)state;
    skip();
#endif
}

/* ---- the headers' top comments */

/* The free names a header's USAGE fragments assume (declared around each fragment). */
static const struct {
    const char *header, *context;
} usage_context[] = {
    {"frames.h", "uint64_t pc = 0x1000, rax = 7; uint8_t code[3] = {0x90, 0x90, 0x90};"},
    {"frames_query.h", "fq_query *q = NULL;"},
    {"frames_pt.h", "frames_writer *writer = NULL; frames_pt *pt = NULL; frames_pt_options o; "
                    "frames_pt_stats st; frames_error err;"},
    {"frames_interop.h", "frames_reader *r = NULL; frames_error err; FILE *out = stdout;"},
    {"frames_vprof.h", "frames_reader *r = NULL;"},
    {"frames_zstd.h", "frames_frame f; memset(&f, 0, sizeof f);"},
    {"frames_sym.h", "frames_reader *r = NULL;"},
    {"frames_parquet.h", "frames_reader *r = NULL; frames_error err;"},
    {"frames_replay.h", ""},
    {"frames_gdb.h", ""},
};

#define NCONTEXTS (sizeof usage_context / sizeof usage_context[0])

/* Every frames*.h of the tree's top directory has an entry in usage_context. */
static void test_every_header_is_checked(void **state) {
    DIR *d = opendir(tu_root());
    struct dirent *e;
    int headers = 0;
    (void)state;
    assert_non_null(d);
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name), i;
        if (strncmp(e->d_name, "frames", 6) || len < 3 || strcmp(e->d_name + len - 2, ".h")) continue;
        for (i = 0; i < NCONTEXTS && strcmp(usage_context[i].header, e->d_name); i++) {}
        if (i == NCONTEXTS) fail_msg("%s is not in test_docs' usage_context: its top comment is not checked", e->d_name);
        headers++;
    }
    closedir(d);
    assert_int_equal(headers, (int)NCONTEXTS);
}

static char *header_text(const char *name) {
    char *t = (char *)tu_read_file(tu_src(name), NULL);
    if (!t) fail_msg("cannot read %s", name);
    return t;
}

/* The lines of the top comment's section `title` (up to the next separator line). */
static char *top_section(const char *text, const char *title) {
    const char *end = strstr(text, "\n*/"), *at;
    char head[64];
    snprintf(head, sizeof head, "\n   %s", title);
    at = strstr(text, head);
    if (!at || !end || at > end) return NULL;
    at += strlen(head);
    {
        const char *stop = strstr(at, "\n   -----");
        size_t n = (size_t)((stop && stop < end ? stop : end) - at);
        char *out = (char *)malloc(n + 1);
        memcpy(out, at, n);
        out[n] = 0;
        return out;
    }
}

/* Fragments: runs of lines indented by 7 or more spaces. A run that starts with a function
   definition goes to file scope, the others into a function each, inside the context. */
static void usage_program(const char *header, const char *usage, const char *context, FILE *f) {
    const char *p = usage;
    int n = 0, in = 0, file_scope = 0;
    fprintf(f, "#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n#include \"frames.h\"\n#include \"%s\"\n"
               "static void die(const char *m) { fputs(m, stderr); exit(1); }\n", header);
    while (*p) {
        const char *eol = strchr(p, '\n');
        size_t len = eol ? (size_t)(eol - p) : strlen(p);
        int code = len > 7 && !strncmp(p, "       ", 7);
        if (code && (strstr(p, "#define") == p + 7 || strstr(p, "#include") == p + 7)) code = 0;
        if (code && !in) {
            file_scope = !strncmp(p + 7, "static int ", 11) && memchr(p, '{', len);
            if (!file_scope) fprintf(f, "int usage_%d(void) {\n%s\n{\n", ++n, context);
            in = 1;
        } else if (!code && in && len > 0) {
            if (!file_scope) fputs("}\nreturn 0;\n}\n", f);
            in = 0;
        }
        if (in && len > 0) fprintf(f, "%.*s\n", (int)len, p);
        p += len + (eol != NULL);
    }
    if (in && !file_scope) fputs("}\nreturn 0;\n}\n", f);
}

static void test_usage_fragments_compile(void **state) {
    size_t i;
    int checked = 0;
    (void)state;
    for (i = 0; i < NCONTEXTS; i++) {
        const char *h = usage_context[i].header, *src = tu_tmp_path(".c");
        char *text, *usage, *out;
        FILE *f;
        int st, cxx;
#ifndef FRAMES_HAVE_IPT
        if (!strcmp(h, "frames_pt.h")) continue;
#endif
        text = header_text(h);
        usage = top_section(text, "USAGE");
        if (!usage) fail_msg("%s has no USAGE section", h);
        f = fopen(src, "w");
        assert_non_null(f);
        usage_program(h, usage, usage_context[i].context, f);
        fclose(f);
        for (cxx = 0; cxx < 2; cxx++) {
            out = tu_run(&st, "%s -D_GNU_SOURCE -Wall -Wextra -Wpedantic -Werror -Wno-unused "
                              "-Wno-unused-parameter -I'%s' -fsyntax-only '%s' 2>&1",
                         cxx ? "c++ -x c++ -std=c++11" : "cc -std=c99", tu_root(), src);
            if (st) fprintf(stderr, "the USAGE of %s does not compile (%s):\n%s\n", h, cxx ? "C++" : "C99", out);
            assert_int_equal(st, 0);
            free(out);
        }
        unlink(src);
        free(usage);
        free(text);
        checked++;
    }
    assert_true(checked >= 7);
}

/* SECTIONS lists the banner titles ('=' or '-' lines, title below) in file order. */
static void test_section_index_matches_banners(void **state) {
    size_t i;
    (void)state;
    for (i = 0; i < NCONTEXTS; i++) {
        const char *h = usage_context[i].header;
        char *text = header_text(h), *index = top_section(text, "SECTIONS"), *p, *q;
        int banners = 0;
        if (!index) fail_msg("%s has no SECTIONS index", h);
        p = strstr(index, "\n\n");   /* the entries follow the explanation */
        assert_non_null(p);
        p += 2;
        for (q = text; (q = strstr(q, "\n/* ")) != NULL; q++) {
            const char *title, *tend, *entry, *eend;
            if (strncmp(q + 4, "=================", 17) && strncmp(q + 4, "-----------------", 17))
                continue;
            title = strchr(q + 1, '\n');
            if (!title || strncmp(title, "\n   ", 4)) continue;
            title += 4;
            tend = strchr(title, '\n');
            while (*p == ' ') p++;
            entry = p;
            eend = strchr(entry, '\n');
            if (!eend) eend = entry + strlen(entry);
            if ((size_t)(eend - entry) != (size_t)(tend - title) || strncmp(entry, title, (size_t)(tend - title)))
                fail_msg("%s: SECTIONS says '%.*s' where the banner is '%.*s'", h, (int)(eend - entry), entry,
                         (int)(tend - title), title);
            p = (char *)eend + (*eend != 0);
            banners++;
        }
        while (*p == ' ' || *p == '\n') p++;
        if (*p) fail_msg("%s: SECTIONS lists '%.40s' that no banner has", h, p);
        assert_true(banners >= 2);
        free(index);
        free(text);
    }
}

/* ---- the API OVERVIEW of every header against its declarations */

/* The header's code before its implementation, comments blanked: its declarations. */
static char *declarations_of(const char *text) {
    const char *impl = strstr(text, "\n#ifdef FRAMES_IMPLEMENTATION\n");
    size_t n;
    char *d, *c, *e;
    if (!impl) impl = strstr(text, "|| defined(FRAMES_ALL_IMPLEMENTATION)\n");
    if (!impl) fail_msg("no implementation section found");
    n = (size_t)(impl - text);
    d = (char *)malloc(n + 1);
    memcpy(d, text, n);
    d[n] = 0;
    for (c = d; (c = strstr(c, "/*")) != NULL; c = e) {
        e = strstr(c + 2, "*/");
        e = e ? e + 2 : d + n;
        memset(c, ' ', (size_t)(e - c));
    }
    return d;
}

static int ident_char(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'; }

/* Is `name` (a prefix of names when prefix is set) declared in decls: a function, or
   (types allowed) a typedef or macro? */
static int declares(const char *decls, const char *name, int prefix, int types) {
    size_t len = strlen(name);
    const char *p;
    for (p = decls; (p = strstr(p, name)) != NULL; p += len) {
        const char *q = p + len;
        if (p > decls && ident_char(p[-1])) continue;
        if (prefix) while (ident_char(*q)) q++;
        else if (ident_char(*q)) continue;
        while (*q == ' ' || *q == '\n') q++;
        if (*q == '(') return 1;
        if (types && *q == ';' && p > decls + 2 && (strchr("} *", p[-1]))) return 1;
    }
    return 0;
}

/* Every name an API OVERVIEW lists is declared in its header (a full name may also be
   frames.h's, which every header includes): full names (frames_x_y,
   fq_x; frames_x_* for a family) and the "/ _z" shorthand, which stands for the full
   name with its last words replaced by _z (frames_reader_open_memory / _path ->
   frames_reader_open_path), "(+ _z)" for the full name followed by _z. */
static void test_api_overview_names_are_declared(void **state) {
    char *core_text = header_text("frames.h"), *core = declarations_of(core_text);
    size_t i;
    (void)state;
    for (i = 0; i < NCONTEXTS; i++) {
        const char *h = usage_context[i].header;
        char *text = header_text(h), *ov = top_section(text, "API OVERVIEW"), *decls, *p;
        char base[128] = "", name[128];
        int names = 0;
        if (!ov) fail_msg("%s has no API OVERVIEW", h);
        decls = declarations_of(text);
        for (p = ov; *p; p++) {
            const char *start = p, *before = p;
            size_t len;
            if (!ident_char(*p) || (p > ov && ident_char(p[-1]))) continue;
            while (ident_char(*p)) p++;
            len = (size_t)(p - start);
            if (len >= sizeof name) continue;
            memcpy(name, start, len);
            name[len] = 0;
            while (before > ov && before[-1] == ' ') before--;
            if (!strncmp(name, "frames_", 7) || !strncmp(name, "fq_", 3)) {
                int family = *p == '*' && name[len - 1] == '_';
                if (!declares(decls, name, family, !family) && !declares(core, name, family, !family))
                    fail_msg("%s: the API OVERVIEW lists %s%s, which the header does not declare", h, name,
                             family ? "*" : "");
                memcpy(base, name, len + 1);
                names++;
            } else if (name[0] == '_' && base[0] && before > ov && (before[-1] == '/' || before[-1] == '+')) {
                char cand[256];
                size_t cut = strlen(base);
                int found;
                snprintf(cand, sizeof cand, "%s%s", base, name);   /* "(+ _text)": appended */
                found = declares(decls, cand, 0, 0);
                while (!found && cut > 0) {   /* drop the base's last words one at a time */
                    while (cut > 0 && base[cut - 1] != '_') cut--;
                    if (cut == 0) break;
                    cut--;
                    snprintf(cand, sizeof cand, "%.*s%s", (int)cut, base, name);
                    found = declares(decls, cand, 0, 0);
                }
                if (!found) fail_msg("%s: the API OVERVIEW lists %s / %s, which the header does not declare", h, base, name);
                names++;
            }
            p--;
        }
        if (names < 3) fail_msg("%s: the API OVERVIEW names only %d functions", h, names);
        free(decls);
        free(ov);
        free(text);
    }
    free(core);
    free(core_text);
}

/* The last comment of every header is LICENSE, line for line, each line behind " * " (a
   blank line: " *"). */
static void test_every_header_ends_with_the_licence(void **state) {
    char *licence = header_text("LICENSE");
    size_t i;
    (void)state;
    for (i = 0; i < NCONTEXTS; i++) {
        const char *h = usage_context[i].header;
        char *text = header_text(h), *at = text, *next, *l = licence, *p;
        while ((next = strstr(at + 1, "\n/*\n")) != NULL) at = next;
        if (strncmp(at, "\n/*\n", 4)) fail_msg("%s has no comment at its end", h);
        p = at + 4;
        while (*l) {
            const char *eol = strchr(l, '\n');
            size_t len = eol ? (size_t)(eol - l) : strlen(l);
            if (len ? strncmp(p, " * ", 3) || strncmp(p + 3, l, len) || p[3 + len] != '\n'
                    : strncmp(p, " *\n", 3))
                fail_msg("%s: the licence differs from LICENSE at '%.*s'", h, (int)len, l);
            p += len ? 3 + len + 1 : 3;
            l += len + (eol != NULL);
        }
        if (strcmp(p, " */\n")) fail_msg("%s: text after the licence: '%.40s'", h, p);
        free(text);
    }
    free(licence);
}

/* ./build.sh --help names every command that build.sh's final case accepts. */
static void test_build_help_lists_every_command(void **state) {
    int st;
    char *help = tu_run(&st, "'%s' --help", tu_src("build.sh")), *cmds, *p;
    int n = 0;
    (void)state;
    assert_int_equal(st, 0);
    cmds = tu_run(&st, "sed -n '/^case \"${1:-build}\" in/,/^esac/p' '%s' | "
                       "sed -n 's/^ *\\([a-z|-]*\\)).*/\\1/p' | tr '|' '\\n' | grep -v '^-'", tu_src("build.sh"));
    assert_int_equal(st, 0);
    for (p = strtok(cmds, "\n"); p; p = strtok(NULL, "\n")) {
        char word[64];
        snprintf(word, sizeof word, "./build.sh %s", p);
        if (!strstr(help, word) && !(strcmp(p, "build") == 0 && strstr(help, "./build.sh [build]")))
            fail_msg("./build.sh --help does not mention '%s'", p);
        n++;
    }
    assert_true(n >= 10);
    free(cmds);
    free(help);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_examples_build_and_run),
        cmocka_unit_test(test_every_header_is_checked),
        cmocka_unit_test(test_usage_fragments_compile),
        cmocka_unit_test(test_section_index_matches_banners),
        cmocka_unit_test(test_api_overview_names_are_declared),
        cmocka_unit_test(test_every_header_ends_with_the_licence),
        cmocka_unit_test(test_build_help_lists_every_command),
        cmocka_unit_test(test_every_example_compiles_as_c_and_cxx),
        cmocka_unit_test(test_pt_implementation_links_beside_frames),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
