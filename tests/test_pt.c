/* test_pt.c - frames_pt.h and `frames pt`: Intel PT to frames.

   - every case of ../shared/vectors/pt for every cpu it lists, both decoders: std_frame
     addresses equal expected-insn.txt (or the instruction count where upstream printed
     only that); `frames pt --print` output equals ptxed's expected.txt; frames dump --pc
   - the reference stream of spec §7.1, and long streams synthesised with libipt's encoder
     over real x86-64 code (ptsynth.h): the whole address sequence and the raw bytes
   - the length decoder against libipt's own, instruction by instruction, over the .text
     of this test program
   - perf sideband built by hand (process images, fork, exec, secondary channel, warnings,
     time conversion) and perf.data files built by hand (per-cpu, pipe mode)
   - exception frames (interrupt, overflow, gap and resync), speculative policies

   Skipped (not failed) when frames was built without libipt. */
#include "testutil.h"

#ifndef FRAMES_HAVE_IPT

static void pt_support_absent(void **state) {
    (void)state;
    (void)tu_shared;
    (void)tu_frames_bin;
    (void)tu_read_file;
    (void)tu_write_file;
    (void)tu_run;
    (void)tu_tmp_path;
    skip();
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(pt_support_absent)};
    printf("test_pt: built without libipt (FRAMES_HAVE_IPT undefined): skipped\n");
    return cmocka_run_group_tests(tests, NULL, NULL);
}

#else

#include <dirent.h>
#include <sys/stat.h>

#include "frames.h"
#include "frames_pt.h"
#include "ptsynth.h"
#include "ptpackets.h"

/* --------------------------------------------------------------------------------------
   Helpers: in-memory frames traces
   -------------------------------------------------------------------------------------- */

/* A writer that finishes its trace in m (frames_sink_memory). */
static frames_writer *mem_writer(frames_membuf *m) {
    frames_sink sink;
    frames_writer *w = NULL;
    frames_error err;
    frames_membuf_init(m, NULL);
    sink = frames_sink_memory(m);
    assert_int_equal(frames_writer_open(&w, &sink, NULL, NULL, &err), FRAMES_OK);
    return w;
}

/* What a decoded trace holds. */
typedef struct decoded {
    uint64_t *ip, *tid;
    uint8_t (*raw)[16];
    uint8_t *rawlen;
    size_t n, cap;
    frames_exception_frame exc[64];
    size_t exc_pos[64];   /* std frames before it */
    size_t nexc;
    char modules[8][256];
    uint64_t mod_low[8], mod_high[8];
    size_t nmod;
    frames_pt_stats st;
    int rc;
    char errmsg[200];
} decoded;

static void decoded_free(decoded *d) {
    free(d->ip);
    free(d->tid);
    free(d->raw);
    free(d->rawlen);
    memset(d, 0, sizeof *d);
}

static void read_frames(const frames_membuf *m, decoded *d) {
    frames_reader *r;
    frames_frame f;
    frames_error err;
    int rc;
    assert_int_equal(frames_reader_open_memory(&r, m->data, m->size, NULL, &err), FRAMES_OK);
    while ((rc = frames_reader_next(r, &f)) > 0) {
        if (f.kind == FRAMES_KIND_STD) {
            if (d->n == d->cap) {
                d->cap = d->cap ? d->cap * 2 : 256;
                d->ip = (uint64_t *)realloc(d->ip, d->cap * sizeof *d->ip);
                d->tid = (uint64_t *)realloc(d->tid, d->cap * sizeof *d->tid);
                d->raw = (uint8_t(*)[16])realloc(d->raw, d->cap * sizeof *d->raw);
                d->rawlen = (uint8_t *)realloc(d->rawlen, d->cap);
                assert_non_null(d->ip);
                assert_non_null(d->raw);
            }
            assert_true(f.std.rawbytes.len >= 1 && f.std.rawbytes.len <= 15);
            assert_int_equal(f.std.npre, 0);
            assert_false(f.std.has_post);
            d->ip[d->n] = f.std.address;
            d->tid[d->n] = f.std.thread_id;
            memcpy(d->raw[d->n], f.std.rawbytes.ptr, f.std.rawbytes.len);
            d->rawlen[d->n] = (uint8_t)f.std.rawbytes.len;
            d->n++;
        } else if (f.kind == FRAMES_KIND_EXCEPTION) {
            if (d->nexc < 64) {
                d->exc_pos[d->nexc] = d->n;
                d->exc[d->nexc++] = f.exception;
            }
        } else if (f.kind == FRAMES_KIND_MODLOAD) {
            if (d->nmod < 8) {
                snprintf(d->modules[d->nmod], sizeof d->modules[0], "%.*s",
                         (int)f.modload.module_name.len, (const char *)f.modload.module_name.ptr);
                d->mod_low[d->nmod] = f.modload.low_address;
                d->mod_high[d->nmod] = f.modload.high_address;
                d->nmod++;
            }
        } else {
            fail_msg("unexpected frame kind %d", (int)f.kind);
        }
    }
    assert_int_equal(rc, 0);
    frames_reader_close(r);
}

/* Decode a prepared session into memory and read the frames back. */
static void decode_into(frames_pt *pt, decoded *d) {
    frames_membuf m;
    frames_writer *w = mem_writer(&m);
    frames_error err;
    memset(d, 0, sizeof *d);
    d->rc = frames_pt_decode(pt, w, &d->st, &err);
    if (d->rc < 0) snprintf(d->errmsg, sizeof d->errmsg, "%s", err.message);
    assert_int_equal(frames_writer_close(w), FRAMES_OK);
    read_frames(&m, d);
    frames_membuf_free(&m);
}

/* The block path and the instruction-flow decoder agree on this stream (defined with
   the other differential tests below). */
static void decoders_agree_on(const char *what, const uint8_t *trace, size_t len,
                              const char *cpath, uint64_t base);

static char *file_text(const char *path) {
    return (char *)tu_read_file(path, NULL);
}

/* --------------------------------------------------------------------------------------
   The reference vectors
   -------------------------------------------------------------------------------------- */

typedef struct pt_case {
    char dir[1024];
    char name[256];
    char images[8][128];
    uint64_t image_addr[8];
    int nimages;
    char cpus[32][16];
    int ncpus;
    char pevent[4][64];
    int pevent_primary[4];
    int npevent;
    frames_pt_sb_config sb;
    char extra[512];
} pt_case;

static int read_case(const char *dir, const char *name, pt_case *c) {
    char path[1200], *txt, *line, *save = NULL;
    memset(c, 0, sizeof *c);
    snprintf(c->dir, sizeof c->dir, "%s", dir);
    snprintf(c->name, sizeof c->name, "%s", name);
    frames_pt_sb_config_default(&c->sb);
    snprintf(path, sizeof path, "%s/case.txt", dir);
    if (!(txt = file_text(path))) return -1;
    for (line = strtok_r(txt, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *eq = strchr(line, '='), *val;
        if (!eq) continue;
        *eq = 0;
        val = eq + 1;
        if (!strcmp(line, "image") && c->nimages < 8) {
            char *at = strchr(val, '@');
            assert_non_null(at);
            *at = 0;
            snprintf(c->images[c->nimages], sizeof c->images[0], "%s", val);
            c->image_addr[c->nimages++] = strtoull(at + 1, NULL, 0);
        } else if (!strcmp(line, "cpu.variants")) {
            char *tok, *s2 = NULL;
            c->ncpus = 0;
            for (tok = strtok_r(val, ",", &s2); tok && c->ncpus < 32; tok = strtok_r(NULL, ",", &s2))
                snprintf(c->cpus[c->ncpus++], sizeof c->cpus[0], "%s", tok);
        } else if (!strcmp(line, "cpu") && c->ncpus == 0) {
            snprintf(c->cpus[c->ncpus++], sizeof c->cpus[0], "%s", val);
        } else if ((!strcmp(line, "pevent.primary") || !strcmp(line, "pevent.secondary")) &&
                   c->npevent < 4) {
            c->pevent_primary[c->npevent] = line[7] == 'p';
            snprintf(c->pevent[c->npevent++], sizeof c->pevent[0], "%s", val);
        } else if (!strcmp(line, "pevent.sample_type")) {
            c->sb.sample_type = strtoull(val, NULL, 0);
        } else if (!strcmp(line, "pevent.time_zero")) {
            c->sb.time_zero = strtoull(val, NULL, 0);
        } else if (!strcmp(line, "pevent.time_shift")) {
            c->sb.time_shift = (uint16_t)strtoul(val, NULL, 0);
        } else if (!strcmp(line, "pevent.time_mult")) {
            c->sb.time_mult = (uint32_t)strtoul(val, NULL, 0);
        } else if (!strcmp(line, "pevent.kernel_start")) {
            c->sb.kernel_start = strtoull(val, NULL, 0);
        } else if (!strcmp(line, "ptxed.extra")) {
            snprintf(c->extra, sizeof c->extra, "%s", val);
        }
    }
    free(txt);
    return 0;
}

static int has_extra(const pt_case *c, const char *opt) {
    const char *p = c->extra;
    size_t n = strlen(opt);
    while ((p = strstr(p, opt)) != NULL) {
        if ((p == c->extra || p[-1] == ' ') && (p[n] == ' ' || p[n] == 0)) return 1;
        p += n;
    }
    return 0;
}

static uint64_t extra_value(const pt_case *c, const char *opt) {
    const char *p = strstr(c->extra, opt);
    return p ? strtoull(p + strlen(opt) + 1, NULL, 0) : 0;
}

/* A session for a case with the given cpu ("" = none) and decoder, ready to decode. */
static frames_pt *open_case(const pt_case *c, const char *cpu, int decoder, int spec) {
    frames_pt_options o;
    frames_pt *pt;
    frames_error err;
    char path[1200], sysroot[1100];
    int i;
    frames_pt_options_default(&o);
    o.decoder = decoder;
    o.speculative = spec;
    if (*cpu) assert_int_equal(frames_pt_parse_cpu(cpu, &o.cpu), 0);
    o.tick_events = has_extra(c, "--event:tick");
    o.nom_freq = (uint8_t)extra_value(c, "--nom-freq");
    o.addr_filter.config.addr_cfg = extra_value(c, "--filter:addr0_cfg");
    o.addr_filter.addr0_a = extra_value(c, "--filter:addr0_a");
    o.addr_filter.addr0_b = extra_value(c, "--filter:addr0_b");
    assert_int_equal(frames_pt_open(&pt, &o, &err), FRAMES_OK);
    for (i = 0; i < c->nimages; i++) {
        snprintf(path, sizeof path, "%s/%s", c->dir, c->images[i]);
        assert_int_equal(frames_pt_add_raw(pt, path, 0, 0, c->image_addr[i], &err), FRAMES_OK);
    }
    snprintf(sysroot, sizeof sysroot, "%s/", c->dir);
    for (i = 0; i < c->npevent; i++) {
        frames_pt_sb_config sb = c->sb;
        sb.sysroot = sysroot;
        snprintf(path, sizeof path, "%s/%s", c->dir, c->pevent[i]);
        assert_int_equal(frames_pt_load_pevent(pt, &sb, path, 0, 0, c->pevent_primary[i], &err),
                         FRAMES_OK);
    }
    snprintf(path, sizeof path, "%s/trace.pt", c->dir);
    assert_int_equal(frames_pt_load_trace(pt, path, 0, 0, &err), FRAMES_OK);
    return pt;
}

/* Decode a case through the library with the given cpu ("" = none) and decoder. */
static void decode_case(const pt_case *c, const char *cpu, int decoder, int spec, decoded *d) {
    frames_pt *pt = open_case(c, cpu, decoder, spec);
    decode_into(pt, d);
    frames_pt_close(pt);
}

/* Instruction lines of expected.txt: all (with "? " speculative ones) and plain ones. */
static void expected_insns(const pt_case *c, uint64_t **ips, size_t *n, size_t *all,
                           long *stat_count) {
    char path[1200], *txt, *line, *save = NULL;
    size_t cap = 0;
    *ips = NULL;
    *n = *all = 0;
    *stat_count = -1;
    snprintf(path, sizeof path, "%s/expected-insn.txt", c->dir);
    assert_non_null(txt = file_text(path));
    for (line = strtok_r(txt, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        assert_int_equal(strlen(line), 16);
        if (*n == cap) {
            cap = cap ? cap * 2 : 64;
            *ips = (uint64_t *)realloc(*ips, cap * sizeof **ips);
        }
        (*ips)[(*n)++] = strtoull(line, NULL, 16);
    }
    free(txt);
    snprintf(path, sizeof path, "%s/expected.txt", c->dir);
    assert_non_null(txt = file_text(path));
    for (line = strtok_r(txt, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        size_t k = strspn(line, "0123456789abcdef");
        if ((k == 16 && !line[16]) || (!strncmp(line, "? ", 2) && strlen(line) == 18)) (*all)++;
        if (!strncmp(line, "insn: ", 6)) *stat_count = strtol(line + 6, NULL, 10);
    }
    free(txt);
}

typedef struct case_list {
    char names[200][256];
    int n;
} case_list;

static int name_cmp(const void *a, const void *b) { return strcmp((const char *)a, (const char *)b); }

static void list_cases(case_list *l) {
    DIR *dir = opendir(tu_shared("vectors/pt"));
    struct dirent *e;
    l->n = 0;
    assert_non_null(dir);
    while ((e = readdir(dir)) != NULL && l->n < 200) {
        char path[1200];
        struct stat sb;
        snprintf(path, sizeof path, "%s/%s/case.txt", tu_shared("vectors/pt"), e->d_name);
        if (e->d_name[0] != '.' && stat(path, &sb) == 0)
            snprintf(l->names[l->n++], sizeof l->names[0], "%s", e->d_name);
    }
    closedir(dir);
    qsort(l->names, (size_t)l->n, sizeof l->names[0], name_cmp);
}

/* Every case, every cpu variant, both decoders: the std_frame addresses. */
static void vectors_library(void **state) {
    case_list l;
    int i, j, dec, variants = 0;
    (void)state;
    list_cases(&l);
    assert_int_equal(l.n, 83);   /* the README's count */
    for (i = 0; i < l.n; i++) {
        pt_case c;
        uint64_t *exp;
        size_t nexp, nall, k;
        long stat;
        char dir[1200];
        snprintf(dir, sizeof dir, "%s/%s", tu_shared("vectors/pt"), l.names[i]);
        assert_int_equal(read_case(dir, l.names[i], &c), 0);
        expected_insns(&c, &exp, &nexp, &nall, &stat);
        for (j = 0; j < (c.ncpus ? c.ncpus : 1); j++) {
            for (dec = 0; dec < 2; dec++) {
                decoded d;
                decode_case(&c, c.ncpus ? c.cpus[j] : "", dec, FRAMES_PT_SPEC_SKIP, &d);
                if (d.rc != FRAMES_OK) fail_msg("%s: %s", c.name, d.errmsg);
                if (stat >= 0 && nexp == 0) {   /* --quiet: upstream printed only a count */
                    if ((long)d.n != stat) fail_msg("%s cpu %s: %zu frames, expected insn: %ld", c.name,
                                                    c.ncpus ? c.cpus[j] : "-", d.n, stat);
                    assert_int_equal((long)d.st.insns, stat);
                } else {
                    if (d.n != nexp)
                        fail_msg("%s cpu %s decoder %d: %zu std frames, expected %zu", c.name,
                                 c.ncpus ? c.cpus[j] : "-", dec, d.n, nexp);
                    for (k = 0; k < nexp; k++)
                        if (d.ip[k] != exp[k])
                            fail_msg("%s: frame %zu at %llx, expected %llx", c.name, k,
                                     (unsigned long long)d.ip[k], (unsigned long long)exp[k]);
                    assert_int_equal(d.st.insns, nall);   /* speculative ones decoded too */
                    if (stat >= 0) assert_int_equal((long)d.st.insns, stat);
                }
                assert_int_equal(d.st.reconstruct_errors, 0);
                variants++;
                decoded_free(&d);
            }
        }
        free(exp);
    }
    printf("vector decodes: %d (83 cases x cpu variants x 2 decoders)\n", variants);
}

/* Lines of text with runs of blanks squeezed (diff -b), trailing blanks dropped. */
static char *squeeze(const char *s) {
    char *out = (char *)malloc(strlen(s) + 2), *o = out;
    int blank = 0;
    for (; *s; s++) {
        if (*s == ' ' || *s == '\t') {
            blank = 1;
            continue;
        }
        if (blank && *s != '\n' && o > out && o[-1] != '\n') *o++ = ' ';
        blank = 0;
        *o++ = *s;
    }
    while (o > out && o[-1] == '\n') o--;
    *o = 0;
    return out;
}

/* The ptxed command line of the README, with -o and --print added. */
static void case_command(const pt_case *c, const char *out, char *cmd, size_t n, const char *more) {
    size_t pos = 0;
    int i;
    pos += (size_t)snprintf(cmd + pos, n - pos, "cd '%s' && '%s' pt -o '%s' --print", c->dir,
                            tu_frames_bin(), out);
    for (i = 0; i < c->nimages; i++)
        pos += (size_t)snprintf(cmd + pos, n - pos, " --raw %s:0x%llx", c->images[i],
                                (unsigned long long)c->image_addr[i]);
    if (c->ncpus) pos += (size_t)snprintf(cmd + pos, n - pos, " --cpu %s", c->cpus[0]);
    if (c->extra[0]) pos += (size_t)snprintf(cmd + pos, n - pos, " %s", c->extra);
    if (c->sb.kernel_start != UINT64_MAX)
        pos += (size_t)snprintf(cmd + pos, n - pos, " --pevent:kernel-start 0x%llx",
                                (unsigned long long)c->sb.kernel_start);
    pos += (size_t)snprintf(cmd + pos, n - pos, " --no-inst --check --pt trace.pt");
    for (i = 0; i < c->npevent; i++)
        pos += (size_t)snprintf(cmd + pos, n - pos,
                                " --pevent:sample-type 0x%llx --pevent:time-zero 0x%llx"
                                " --pevent:time-shift %u --pevent:time-mult %u --pevent:%s %s",
                                (unsigned long long)c->sb.sample_type,
                                (unsigned long long)c->sb.time_zero, (unsigned)c->sb.time_shift,
                                (unsigned)c->sb.time_mult, c->pevent_primary[i] ? "primary" : "secondary",
                                c->pevent[i]);
    snprintf(cmd + pos, n - pos, "%s 2>/dev/null", more);
}

/* `frames dump --pc` of a trace, if this build has the dump command: addresses. */
static int dump_pcs(const char *path, uint64_t **ips, size_t *n) {
    int status;
    char *out = tu_run(&status, "'%s' dump --pc '%s' 2>/dev/null", tu_frames_bin(), path), *line, *save = NULL;
    size_t cap = 0;
    *ips = NULL;
    *n = 0;
    if (!out || status != 0) {
        free(out);
        return -1;
    }
    for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (*n == cap) {
            cap = cap ? cap * 2 : 64;
            *ips = (uint64_t *)realloc(*ips, cap * sizeof **ips);
        }
        (*ips)[(*n)++] = strtoull(line, NULL, 16);
    }
    free(out);
    return 0;
}

/* `frames pt --print` prints what ptxed printed, for every case; dump --pc agrees. */
static void vectors_tool(void **state) {
    case_list l;
    int i, dumped = 0;
    (void)state;
    list_cases(&l);
    for (i = 0; i < l.n; i++) {
        pt_case c;
        char dir[1200], cmd[8192], path[1300];
        const char *out = tu_tmp_path(".frames");
        char *got, *exp, *g, *e;
        int status;
        uint64_t *pcs, *ips;
        size_t npcs, nips, nall, k;
        long stat;
        snprintf(dir, sizeof dir, "%s/%s", tu_shared("vectors/pt"), l.names[i]);
        assert_int_equal(read_case(dir, l.names[i], &c), 0);
        case_command(&c, out, cmd, sizeof cmd, "");
        got = tu_run(&status, "%s", cmd);
        assert_non_null(got);
        if (status != 0) fail_msg("%s: exit %d: %s", c.name, status, cmd);
        snprintf(path, sizeof path, "%s/expected.txt", dir);
        exp = file_text(path);
        g = squeeze(got);
        e = squeeze(exp);
        if (strcmp(g, e) != 0) fail_msg("%s: --print differs from ptxed\n--- expected\n%s\n--- got\n%s", c.name, e, g);
        expected_insns(&c, &ips, &nips, &nall, &stat);
        if (dump_pcs(out, &pcs, &npcs) == 0) {
            dumped++;
            if (stat < 0 || nips) {
                assert_int_equal(npcs, nips);
                for (k = 0; k < nips; k++) assert_int_equal(pcs[k], ips[k]);
            } else {
                assert_int_equal((long)npcs, stat);
            }
            free(pcs);
        }
        free(ips);
        free(got);
        free(exp);
        free(g);
        free(e);
        remove(out);
    }
    printf("frames pt --print matched ptxed on %d cases; frames dump --pc checked on %d\n", l.n,
           dumped);
}

/* One case through the tool with both decoders and another speculative policy. */
static void vectors_tool_options(void **state) {
    pt_case c;
    char dir[1200], cmd[8192];
    char *a, *b;
    int status;
    (void)state;
    snprintf(dir, sizeof dir, "%s/%s", tu_shared("vectors/pt"), "pevent-tip_pgd-switch-tsc-tip_pge");
    assert_int_equal(read_case(dir, "pevent-tip_pgd-switch-tsc-tip_pge", &c), 0);
    case_command(&c, "/dev/null", cmd, sizeof cmd, " --insn-decoder");
    a = tu_run(&status, "%s", cmd);
    assert_int_equal(status, 0);
    case_command(&c, "/dev/null", cmd, sizeof cmd, " --block-decoder");
    b = tu_run(&status, "%s", cmd);
    assert_int_equal(status, 0);
    assert_string_equal(a, b);
    assert_non_null(strstr(a, "[context: pid-2]"));
    free(a);
    free(b);
}

/* --------------------------------------------------------------------------------------
   Streams with known contents
   -------------------------------------------------------------------------------------- */

/* Write bytes to a fresh temporary file; returns its path (static rotation of testutil). */
static const char *temp_file(const void *data, size_t len, const char *suffix) {
    const char *path = tu_tmp_path(suffix);
    assert_int_equal(tu_write_file(path, data, len), 0);
    return path;
}

static frames_pt *open_session(int decoder, const char *code_path, uint64_t base, uint64_t tid) {
    frames_pt_options o;
    frames_pt *pt;
    frames_error err;
    frames_pt_options_default(&o);
    o.decoder = decoder;
    o.default_tid = tid;
    assert_int_equal(frames_pt_open(&pt, &o, &err), FRAMES_OK);
    if (code_path) assert_int_equal(frames_pt_add_raw(pt, code_path, 0, 0, base, &err), FRAMES_OK);
    return pt;
}

/* The 35-byte reference stream of the spec (§7.1), bytes written out by hand. */
static void spec_reference_stream(void **state) {
    static const uint8_t code[] = {
        0x48, 0x31, 0xc0, 0x48, 0xff, 0xc0, 0x48, 0x83, 0xf8, 0x03, 0x75, 0xf7, 0xe8, 0x07, 0x00, 0x00,
        0x00, 0xff, 0xe0, 0xf4, 0xf4, 0xf4, 0xf4, 0xf4, 0xc3, 0xf4, 0xf4, 0xf4, 0xf4, 0xf4, 0xf4, 0xf4,
        0x90, 0x90, 0x90, 0xf4};
    static const uint8_t trace[] = {
        0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
        0x7d, 0x00, 0x00, 0x40, 0x00, 0x00, 0x00, 0x99, 0x01, 0x02, 0x23, 0x3a, 0x2d, 0x20, 0x00, 0x3d,
        0x22, 0x00, 0x01};
    static const uint64_t want[] = {0x400000, 0x400003, 0x400006, 0x40000a, 0x400003, 0x400006,
                                    0x40000a, 0x400003, 0x400006, 0x40000a, 0x40000c, 0x400018,
                                    0x400011, 0x400020, 0x400021};
    const char *cpath = temp_file(code, sizeof code, ".bin");
    int dec;
    (void)state;
    for (dec = 0; dec < 2; dec++) {
        frames_pt *pt = open_session(dec, cpath, 0x400000, 9);
        frames_error err;
        decoded d;
        size_t k;
        assert_int_equal(frames_pt_set_trace(pt, trace, sizeof trace, &err), FRAMES_OK);
        decode_into(pt, &d);
        assert_int_equal(d.rc, FRAMES_OK);
        assert_int_equal(d.n, 15);
        for (k = 0; k < 15; k++) {
            assert_int_equal(d.ip[k], want[k]);
            assert_int_equal(d.tid[k], 9);
            assert_memory_equal(d.raw[k], code + (want[k] - 0x400000), d.rawlen[k]);
        }
        assert_int_equal(d.rawlen[0], 3);    /* xor rax, rax */
        assert_int_equal(d.rawlen[10], 5);   /* call */
        assert_int_equal(d.st.events[ptev_async_disabled], 1);
        assert_int_equal(d.st.status_updates, 1);   /* exec mode, from PSB+ (spec §7.1) */
        assert_int_equal(d.nmod, 1);   /* the image, as a modload frame */
        assert_string_equal(d.modules[0], cpath);
        assert_int_equal(d.mod_low[0], 0x400000);
        assert_int_equal(d.mod_high[0], 0x400000 + sizeof code - 1);
        decoded_free(&d);
        frames_pt_close(pt);
    }
    decoders_agree_on("spec reference stream", trace, sizeof trace, cpath, 0x400000);
    remove(cpath);
}

/* Long walks over real code: both decoders give exactly the walked sequence. */
static void synthesised_streams(void **state) {
    static const struct {
        uint32_t seed;
        uint64_t n, psb_every, tsc_every;
    } runs[] = {{1, 20000, 0, 0}, {2, 20000, 64, 0}, {3, 50000, 512, 97}, {4, 3, 0, 0},
                {5, 100000, 4096, 1000}};
    size_t r;
    const char *cpath = temp_file(ptsynth_code, sizeof ptsynth_code, ".bin");
    (void)state;
    for (r = 0; r < sizeof runs / sizeof runs[0]; r++) {
        ptsynth s;
        uint64_t calls[3], jumps[3];
        int dec;
        ptsynth_init_default(&s, 0x7f0000001000ull, runs[r].seed, calls, jumps);
        s.psb_every = runs[r].psb_every;
        s.tsc_every = runs[r].tsc_every;
        s.want_ips = 1;
        assert_int_equal(ptsynth_walk(&s, s.base, runs[r].n), 0);
        assert_int_equal(s.nips, runs[r].n);
        for (dec = 0; dec < 2; dec++) {
            frames_pt *pt = open_session(dec, cpath, s.base, 77);
            frames_error err;
            decoded d;
            uint64_t k;
            assert_int_equal(frames_pt_set_trace(pt, s.trace, s.len, &err), FRAMES_OK);
            decode_into(pt, &d);
            assert_int_equal(d.rc, FRAMES_OK);
            if (d.n != s.nips) fail_msg("seed %u decoder %d: %zu frames, walked %llu", runs[r].seed, dec,
                                        d.n, (unsigned long long)s.nips);
            for (k = 0; k < s.nips; k++) {
                if (d.ip[k] != s.ips[k])
                    fail_msg("seed %u decoder %d: frame %llu at %llx, walked %llx", runs[r].seed, dec,
                             (unsigned long long)k, (unsigned long long)d.ip[k],
                             (unsigned long long)s.ips[k]);
                assert_memory_equal(d.raw[k], ptsynth_code + (s.ips[k] - s.base), d.rawlen[k]);
                assert_int_equal(d.tid[k], 77);
            }
            assert_int_equal(d.st.insns, s.nips);
            assert_int_equal(d.st.gaps + d.st.sync_errors + d.st.reconstruct_errors, 0);
            assert_int_equal(d.nexc, 0);
            decoded_free(&d);
            frames_pt_close(pt);
        }
        decoders_agree_on("synthesised stream", s.trace, s.len, cpath, s.base);
        ptsynth_free(&s);
    }
    remove(cpath);
}

/* Offset of the first packet of type `type` at or after `from` (libipt's packet
   decoder walks the stream), or (size_t)-1. */
static size_t find_packet(uint8_t *trace, size_t len, size_t from, enum pt_packet_type type) {
    struct pt_config cfg;
    struct pt_packet_decoder *pd;
    size_t found = (size_t)-1;
    pt_config_init(&cfg);
    cfg.begin = trace;
    cfg.end = trace + len;
    pd = pt_pkt_alloc_decoder(&cfg);
    assert_non_null(pd);
    assert_true(pt_pkt_sync_forward(pd) >= 0);
    for (;;) {
        struct pt_packet p;
        uint64_t off;
        if (pt_pkt_get_offset(pd, &off) < 0 || pt_pkt_next(pd, &p, sizeof p) < 0) break;
        if (off >= from && p.type == type) {
            found = (size_t)off;
            break;
        }
    }
    pt_pkt_free_decoder(pd);
    return found;
}

/* A wrong TNT bit decodes differently, and comparing whole sequences notices it (a
   check of the method the tests rely on, spec §7.1). */
static void wrong_tnt_is_noticed(void **state) {
    ptsynth s;
    uint64_t calls[3], jumps[3];
    const char *cpath = temp_file(ptsynth_code, sizeof ptsynth_code, ".bin");
    frames_pt *pt;
    frames_error err;
    decoded d;
    size_t at, k, same = 0;
    unsigned hb;
    (void)state;
    ptsynth_init_default(&s, 0x400000, 11, calls, jumps);
    s.want_ips = 1;
    assert_int_equal(ptsynth_walk(&s, s.base, 2000), 0);
    at = find_packet(s.trace, s.len, 0, ppt_tnt_8);
    assert_true(at != (size_t)-1);
    for (hb = 7; !(s.trace[at] >> hb & 1); hb--) {
    }
    s.trace[at] ^= (uint8_t)(1u << (hb - 1));   /* the first branch: just below the stop bit */
    pt = open_session(FRAMES_PT_DECODER_BLOCK, cpath, s.base, 0);
    assert_int_equal(frames_pt_set_trace(pt, s.trace, s.len, &err), FRAMES_OK);
    decode_into(pt, &d);
    for (k = 0; k < d.n && k < s.nips && d.ip[k] == s.ips[k]; k++) same++;
    assert_true(same < s.nips);   /* the sequence diverges */
    decoded_free(&d);
    frames_pt_close(pt);
    decoders_agree_on("stream with a wrong TNT bit", s.trace, s.len, cpath, s.base);
    ptsynth_free(&s);
    remove(cpath);
}

/* The length decoder against libipt's, one instruction at a time, over this program's
   .text: a segment per instruction (PSB+ at its address), libipt's pt_insn_next gives
   the size it decoded. */
static void length_decoder_matches_libipt(void **state) {
    uint8_t *exe;
    size_t exelen, i;
    uint64_t text_off = 0, text_addr = 0, text_size = 0, n = 0, mismatch = 0;
    const uint8_t *eh;
    struct pt_encoder *enc;
    struct pt_config cfg;
    uint8_t *buf;
    size_t cap;
    uint64_t *ips, *lens, *segs, off;
    struct pt_image_section_cache *isc;
    struct pt_image *img;
    struct pt_insn_decoder *dec;
    int isid;
    (void)state;
    /* under valgrind /proc/self/exe is valgrind's tool, not this program (build.sh
       valgrind sets FRAMES_VALGRIND) */
    if (getenv("FRAMES_VALGRIND")) skip();
    exe = tu_read_file("/proc/self/exe", &exelen);
    assert_non_null(exe);
    eh = exe;
    assert_memory_equal(eh, "\177ELF\2", 5);
    {   /* find .text through the section headers */
        uint64_t shoff = *(const uint64_t *)(eh + 40);
        unsigned shentsize = *(const uint16_t *)(eh + 58), shnum = *(const uint16_t *)(eh + 60);
        unsigned shstrndx = *(const uint16_t *)(eh + 62);
        const uint8_t *strsh = eh + shoff + (uint64_t)shstrndx * shentsize;
        uint64_t stroff = *(const uint64_t *)(strsh + 24);
        for (i = 0; i < shnum; i++) {
            const uint8_t *sh = eh + shoff + i * shentsize;
            if (!strcmp((const char *)eh + stroff + *(const uint32_t *)sh, ".text")) {
                text_addr = *(const uint64_t *)(sh + 16);
                text_off = *(const uint64_t *)(sh + 24);
                text_size = *(const uint64_t *)(sh + 32);
            }
        }
    }
    assert_true(text_size > 0);
    if (text_size > 400000) text_size = 400000;
    cap = (size_t)text_size * 40 + 4096;
    buf = (uint8_t *)malloc(cap);
    ips = (uint64_t *)malloc((size_t)text_size * sizeof *ips);
    lens = (uint64_t *)malloc((size_t)text_size * sizeof *lens);
    segs = (uint64_t *)malloc((size_t)text_size * sizeof *segs);
    pt_config_init(&cfg);
    cfg.begin = buf;
    cfg.end = buf + cap;
    enc = pt_alloc_encoder(&cfg);
    for (i = 0; i < text_size;) {
        frames_pt_x86 x;
        struct pt_packet p;
        uint64_t ip = text_addr + i;
        if (frames_pt_x86_decode(exe + text_off + i, (size_t)(text_size - i), ptem_64bit, ip, &x) < 0) {
            i++;
            continue;
        }
        ips[n] = ip;
        lens[n] = x.size;
        assert_int_equal(pt_enc_get_offset(enc, &segs[n++]), 0);
        ptp_psb_plus(enc, ip);
        memset(&p, 0, sizeof p);
        p.type = ppt_fup;
        p.payload.ip.ipc = pt_ipc_sext_48;
        p.payload.ip.ip = ip + x.size;
        assert_true(pt_enc_next(enc, &p) > 0);
        memset(&p, 0, sizeof p);
        p.type = ppt_tip_pgd;
        assert_true(pt_enc_next(enc, &p) > 0);
        i += x.size;
    }
    assert_int_equal(pt_enc_get_offset(enc, &off), 0);
    pt_free_encoder(enc);
    cfg.end = buf + off;
    isc = pt_iscache_alloc(NULL);
    img = pt_image_alloc(NULL);
    isid = pt_iscache_add_file(isc, "/proc/self/exe", text_off, text_size, text_addr);
    assert_true(isid > 0);
    assert_int_equal(pt_image_add_cached(img, isc, isid, NULL), 0);
    dec = pt_insn_alloc_decoder(&cfg);
    assert_non_null(dec);
    assert_int_equal(pt_insn_set_image(dec, img), 0);
    for (i = 0; i < n; i++) {
        struct pt_insn in;
        int st = pt_insn_sync_set(dec, segs[i]);   /* this instruction's PSB */
        assert_true(st >= 0);
        while (st & pts_event_pending) {
            struct pt_event ev;
            st = pt_insn_event(dec, &ev, sizeof ev);
            assert_true(st >= 0);
        }
        memset(&in, 0, sizeof in);
        pt_insn_next(dec, &in, sizeof in);
        if (in.iclass == ptic_error || in.ip != ips[i] || in.size != lens[i]) {
            if (mismatch++ < 10)
                print_message("length mismatch at %llx: ours %llu, libipt %u (ip %llx)\n",
                              (unsigned long long)ips[i], (unsigned long long)lens[i], in.size,
                              (unsigned long long)in.ip);
        }
    }
    printf("length decoder: %llu instructions of .text, %llu differ from libipt\n",
           (unsigned long long)n, (unsigned long long)mismatch);
    assert_true(n > 1000);
    assert_int_equal(mismatch, 0);
    pt_insn_free_decoder(dec);
    pt_image_free(img);
    pt_iscache_free(isc);
    free(buf);
    free(ips);
    free(lens);
    free(segs);
    free(exe);
}

/* Classes and direct targets as libipt classifies them, on hand-picked encodings. */
static void length_decoder_classes(void **state) {
    static const struct {
        uint8_t bytes[15];
        uint8_t len, size, iclass, has_target;
        int mode;
        uint64_t target;
    } t[] = {
        {{0xe8, 0x10, 0x00, 0x00, 0x00}, 5, 5, ptic_call, 1, ptem_64bit, 0x1015},
        {{0x66, 0xe8, 0x10, 0x00, 0x00, 0x00}, 6, 6, ptic_call, 1, ptem_64bit, 0x1016}, /* 66 ignored */
        {{0x66, 0xe8, 0x10, 0x00}, 4, 4, ptic_call, 1, ptem_32bit, 0x1014},   /* rel16 */
        {{0x75, 0xfe}, 2, 2, ptic_cond_jump, 1, ptem_64bit, 0x1000},
        {{0x0f, 0x84, 0x00, 0x01, 0x00, 0x00}, 6, 6, ptic_cond_jump, 1, ptem_64bit, 0x1106},
        {{0xff, 0xd0}, 2, 2, ptic_call, 0, ptem_64bit, 0},                     /* call rax */
        {{0xff, 0x25, 0, 0, 0, 0}, 6, 6, ptic_jump, 0, ptem_64bit, 0},         /* jmp [rip] */
        {{0xff, 0x1c, 0x24}, 3, 3, ptic_far_call, 0, ptem_64bit, 0},           /* call far [rsp] */
        {{0xc3}, 1, 1, ptic_return, 0, ptem_64bit, 0},
        {{0xc2, 0x08, 0x00}, 3, 3, ptic_return, 0, ptem_64bit, 0},
        {{0x0f, 0x05}, 2, 2, ptic_far_call, 0, ptem_64bit, 0},                 /* syscall */
        {{0x48, 0x0f, 0x07}, 3, 3, ptic_far_return, 0, ptem_64bit, 0},         /* sysretq */
        {{0xcd, 0x80}, 2, 2, ptic_far_call, 0, ptem_32bit, 0},                 /* int 0x80 */
        {{0xcf}, 1, 1, ptic_far_return, 0, ptem_64bit, 0},                     /* iret */
        {{0xf3, 0x0f, 0xae, 0xe0}, 4, 4, ptic_ptwrite, 0, ptem_64bit, 0},      /* ptwrite eax */
        {{0x0f, 0x01, 0xc2}, 3, 3, ptic_far_return, 0, ptem_64bit, 0},         /* vmlaunch */
        {{0xea, 0x00, 0x10, 0x00, 0x00, 0x08, 0x00}, 7, 7, ptic_far_jump, 0, ptem_32bit, 0},
        {{0x48, 0xb8, 1, 2, 3, 4, 5, 6, 7, 8}, 10, 10, ptic_other, 0, ptem_64bit, 0}, /* imm64 */
        {{0xa1, 1, 2, 3, 4, 5, 6, 7, 8}, 9, 9, ptic_other, 0, ptem_64bit, 0},  /* moffs64 */
        {{0x67, 0xa1, 1, 2, 3, 4}, 6, 6, ptic_other, 0, ptem_64bit, 0},        /* moffs32 */
        {{0x8b, 0x46, 0x10}, 3, 3, ptic_other, 0, ptem_16bit, 0},              /* [bp+disp8] */
        {{0x8b, 0x06, 0x34, 0x12}, 4, 4, ptic_other, 0, ptem_16bit, 0},        /* [disp16] */
        {{0xc4, 0xe3, 0x7d, 0x18, 0xc1, 0x01}, 6, 6, ptic_other, 0, ptem_64bit, 0}, /* vinsertf128 */
        {{0xc5, 0xfc, 0x77}, 3, 3, ptic_other, 0, ptem_64bit, 0},              /* vzeroall */
        {{0xc4, 0x00}, 2, 2, ptic_other, 0, ptem_32bit, 0},                    /* les: mod != 3 */
        {{0x0f, 0x20, 0xd8}, 3, 3, ptic_other, 0, ptem_64bit, 0},              /* mov rax, cr3 */
        {{0x0f, 0x20, 0x18}, 3, 3, ptic_other, 0, ptem_64bit, 0},              /* mod ignored */
        {{0x66, 0x0f, 0x78, 0xc0, 0x01, 0x02}, 6, 6, ptic_other, 0, ptem_64bit, 0}, /* extrq */
        {{0x0f, 0x78, 0xc0}, 3, 3, ptic_other, 0, ptem_64bit, 0},              /* vmread */
        {{0xc8, 0x10, 0x00, 0x01}, 4, 4, ptic_other, 0, ptem_64bit, 0},        /* enter */
        {{0xf6, 0xc0, 0x01}, 3, 3, ptic_other, 0, ptem_64bit, 0},              /* test al, 1 */
        {{0xf6, 0xd0}, 2, 2, ptic_other, 0, ptem_64bit, 0},                    /* not al */
        {{0xc7, 0xf8, 0x10, 0x00, 0x00, 0x00}, 6, 6, ptic_other, 0, ptem_64bit, 0}, /* xbegin */
        {{0x0f, 0x39}, 2, 0, 0, 0, ptem_64bit, 0},                             /* 0F 39 xx: cut */
        {{0x48, 0x8b}, 2, 0, 0, 0, ptem_64bit, 0},                             /* cut short */
        {{0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x90},
         15, 15, ptic_other, 0, ptem_64bit, 0},
    };
    size_t i;
    (void)state;
    for (i = 0; i < sizeof t / sizeof t[0]; i++) {
        frames_pt_x86 x;
        int rc = frames_pt_x86_decode(t[i].bytes, t[i].len, (enum pt_exec_mode)t[i].mode, 0x1000, &x);
        if (!t[i].size) {
            if (rc != FRAMES_PT_E_BAD_INSN) fail_msg("case %zu: decoded, expected an error", i);
            continue;
        }
        if (rc != 0) fail_msg("case %zu: error %d", i, rc);
        if (x.size != t[i].size || x.iclass != t[i].iclass || x.has_target != t[i].has_target ||
            (t[i].has_target && x.target != t[i].target))
            fail_msg("case %zu: size %u class %u target %d/%llx", i, x.size, x.iclass, x.has_target,
                     (unsigned long long)x.target);
    }
}

/* --------------------------------------------------------------------------------------
   Events as frames, gaps, speculative execution
   -------------------------------------------------------------------------------------- */

typedef struct enc {
    struct pt_encoder *e;
    struct pt_config cfg;
    uint8_t buf[4096];
} enc;

static void enc_init(enc *x) {
    pt_config_init(&x->cfg);
    x->cfg.begin = x->buf;
    x->cfg.end = x->buf + sizeof x->buf;
    x->e = pt_alloc_encoder(&x->cfg);
    assert_non_null(x->e);
}

static void enc_pkt(enc *x, enum pt_packet_type type, int ipc, uint64_t v) {
    struct pt_packet p;
    memset(&p, 0, sizeof p);
    p.type = type;
    switch (type) {
    case ppt_fup: case ppt_tip: case ppt_tip_pge: case ppt_tip_pgd:
        p.payload.ip.ipc = (enum pt_ip_compression)ipc;
        p.payload.ip.ip = v;
        break;
    case ppt_mode:   /* v: 32 for 32-bit code, else 64-bit */
        p.payload.mode.leaf = pt_mol_exec;
        p.payload.mode.bits.exec = pt_set_exec_mode(v == 32 ? ptem_32bit : ptem_64bit);
        break;
    case ppt_tsc:
        p.payload.tsc.tsc = v;
        break;
    case ppt_tnt_8:
        p.payload.tnt.bit_size = (uint8_t)ipc;
        p.payload.tnt.payload = v;
        break;
    default:
        break;
    }
    assert_true(pt_enc_next(x->e, &p) > 0);
}

static size_t enc_done(enc *x) {
    uint64_t off;
    pt_enc_get_offset(x->e, &off);
    pt_free_encoder(x->e);
    return (size_t)off;
}

/* Start a trace in x: a PSB+ that begins decoding at ip (FUP) in 64-bit mode, or 32-bit
   with mode 32. */
static void enc_psb_at(enc *x, uint64_t ip, uint64_t mode) {
    enc_init(x);
    enc_pkt(x, ppt_psb, 0, 0);
    enc_pkt(x, ppt_fup, pt_ipc_sext_48, ip);
    enc_pkt(x, ppt_mode, 0, mode);
    enc_pkt(x, ppt_psbend, 0, 0);
}

static const uint8_t nops[32] = {0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90,
                                 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90,
                                 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90};

static void decode_bytes(const uint8_t *trace, size_t len, const char *cpath, uint64_t base,
                         int decoder, int spec, decoded *d) {
    frames_pt_options o;
    frames_pt *pt;
    frames_error err;
    frames_pt_options_default(&o);
    o.decoder = decoder;
    o.speculative = spec;
    o.default_tid = 5;
    assert_int_equal(frames_pt_open(&pt, &o, &err), FRAMES_OK);
    assert_int_equal(frames_pt_add_raw(pt, cpath, 0, 0, base, &err), FRAMES_OK);
    assert_int_equal(frames_pt_set_trace(pt, trace, len, &err), FRAMES_OK);
    decode_into(pt, d);
    frames_pt_close(pt);
}

/* An interrupt (FUP + TIP mid-flow) and an overflow become exception frames in place. */
static void interrupt_and_overflow_frames(void **state) {
    const char *cpath = temp_file(nops, sizeof nops, ".bin");
    enc x;
    size_t len;
    int dec;
    (void)state;
    enc_psb_at(&x, 0x1000, 0);
    enc_pkt(&x, ppt_fup, pt_ipc_update_16, 0x1003);   /* interrupted before 0x1003 */
    enc_pkt(&x, ppt_tip, pt_ipc_update_16, 0x1010);   /* ... to the handler */
    enc_pkt(&x, ppt_ovf, 0, 0);
    enc_pkt(&x, ppt_fup, pt_ipc_update_16, 0x1018);   /* tracing resumes here */
    enc_pkt(&x, ppt_fup, pt_ipc_update_16, 0x101a);
    enc_pkt(&x, ppt_tip_pgd, pt_ipc_suppressed, 0);
    len = enc_done(&x);
    for (dec = 0; dec < 2; dec++) {
        decoded d;
        static const uint64_t want[] = {0x1000, 0x1001, 0x1002, 0x1010, 0x1011, 0x1012, 0x1013,
                                        0x1014, 0x1015, 0x1016, 0x1017, 0x1018, 0x1019};
        size_t k;
        decode_bytes(x.buf, len, cpath, 0x1000, dec, FRAMES_PT_SPEC_SKIP, &d);
        assert_int_equal(d.rc, FRAMES_OK);
        /* the overflow loses what ran between the interrupt and the resume point */
        assert_int_equal(d.st.events[ptev_async_branch], 1);
        assert_int_equal(d.st.events[ptev_overflow], 1);
        assert_int_equal(d.nexc, 2);
        assert_int_equal(d.exc[0].number, FRAMES_PT_EXC_INTERRUPT);
        assert_true(d.exc[0].has_from_addr && d.exc[0].has_to_addr && d.exc[0].has_thread_id);
        assert_int_equal(d.exc[0].from_addr, 0x1003);
        assert_int_equal(d.exc[0].to_addr, 0x1010);
        assert_int_equal(d.exc[0].thread_id, 5);
        assert_int_equal(d.exc_pos[0], 3);
        assert_int_equal(d.exc[1].number, FRAMES_PT_EXC_OVERFLOW);
        assert_false(d.exc[1].has_from_addr);
        assert_int_equal(d.exc[1].to_addr, 0x1018);
        /* 0x1010.. ran until the overflow; where exactly is lost: libipt stops there */
        assert_int_equal(d.n, d.exc_pos[1] + 2);
        assert_int_equal(d.ip[d.exc_pos[1]], 0x1018);
        assert_int_equal(d.ip[d.exc_pos[1] + 1], 0x1019);
        for (k = 0; k < d.exc_pos[1]; k++) assert_int_equal(d.ip[k], want[k]);
        assert_int_equal(d.st.events_unwritten, 1);   /* the disable */
        decoded_free(&d);
    }
    decoders_agree_on("interrupt and overflow", x.buf, len, cpath, 0x1000);
    remove(cpath);
}

/* A corrupt packet: a gap frame, decoding resumes at the next PSB with the right ip. */
static void gap_and_resync(void **state) {
    ptsynth s;
    uint64_t calls[3], jumps[3];
    const char *cpath = temp_file(ptsynth_code, sizeof ptsynth_code, ".bin");
    size_t p, bad, k;
    int dec;
    (void)state;
    ptsynth_init_default(&s, 0x400000, 21, calls, jumps);
    s.psb_every = 200;
    s.want_ips = 1;
    assert_int_equal(ptsynth_walk(&s, s.base, 20000), 0);
    assert_true(s.npsb > 10);
    /* an unknown extended opcode (02 ff) in place of the first TIP after the 5th PSB */
    bad = find_packet(s.trace, s.len, (size_t)s.psb_off[5] + 16, ppt_tip);
    assert_true(bad != (size_t)-1);
    s.trace[bad] = 0x02;
    s.trace[bad + 1] = 0xff;
    for (p = 0; p < s.npsb && s.psb_off[p] <= bad; p++) {
    }
    assert_true(p < s.npsb);
    for (dec = 0; dec < 2; dec++) {
        decoded d;
        size_t g, tail;
        decode_bytes(s.trace, s.len, cpath, s.base, dec, FRAMES_PT_SPEC_SKIP, &d);
        assert_int_equal(d.rc, FRAMES_OK);
        assert_int_equal(d.st.gaps, 1);
        assert_int_equal(d.st.ngaps_recorded, 1);
        assert_int_equal(d.st.gap[0].code, -pte_bad_opc);
        assert_true(d.st.gap[0].offset >= bad - 8 && d.st.gap[0].offset <= bad + 2);
        assert_int_equal(d.nexc, 1);
        assert_int_equal(d.exc[0].number, FRAMES_PT_EXC_GAP);
        g = d.exc_pos[0];
        assert_true(g >= s.psb_idx[5] && g <= s.psb_idx[p]);
        assert_true(d.exc[0].has_from_addr);
        assert_int_equal(d.exc[0].from_addr, s.ips[g - 1]);
        for (k = 0; k < g; k++) assert_int_equal(d.ip[k], s.ips[k]);
        /* after the gap: exactly the walk from the next PSB on */
        tail = (size_t)(s.nips - s.psb_idx[p]);
        assert_int_equal(d.n - g, tail);
        for (k = 0; k < tail; k++) assert_int_equal(d.ip[g + k], s.ips[s.psb_idx[p] + k]);
        decoded_free(&d);
    }
    decoders_agree_on("corrupt packet", s.trace, s.len, cpath, s.base);
    ptsynth_free(&s);
    remove(cpath);
}

/* TSX: speculative instructions are skipped, written at commit, or all written. */
static void speculative_policies(void **state) {
    static const struct {
        const char *name;
        int spec;
        size_t n;
        uint64_t ip[4];
    } t[] = {
        {"tsx-commit", FRAMES_PT_SPEC_SKIP, 2, {0x100000, 0x100002}},
        {"tsx-commit", FRAMES_PT_SPEC_COMMIT, 3, {0x100000, 0x100001, 0x100002}},
        {"tsx-commit", FRAMES_PT_SPEC_ALL, 3, {0x100000, 0x100001, 0x100002}},
        {"tsx-abort", FRAMES_PT_SPEC_SKIP, 2, {0x100000, 0x100004}},
        {"tsx-abort", FRAMES_PT_SPEC_COMMIT, 2, {0x100000, 0x100004}},
        {"tsx-abort", FRAMES_PT_SPEC_ALL, 3, {0x100000, 0x100001, 0x100004}},
    };
    size_t i, k;
    int dec;
    (void)state;
    for (i = 0; i < sizeof t / sizeof t[0]; i++)
        for (dec = 0; dec < 2; dec++) {
            pt_case c;
            decoded d;
            char dir[1200];
            snprintf(dir, sizeof dir, "%s/%s", tu_shared("vectors/pt"), t[i].name);
            assert_int_equal(read_case(dir, t[i].name, &c), 0);
            decode_case(&c, "", dec, t[i].spec, &d);
            assert_int_equal(d.rc, FRAMES_OK);
            assert_int_equal(d.n, t[i].n);
            for (k = 0; k < t[i].n; k++) assert_int_equal(d.ip[k], t[i].ip[k]);
            assert_int_equal(d.st.speculative, 1);
            assert_int_equal(d.st.speculative_unwritten, 3 - t[i].n);
            decoded_free(&d);
        }
}

/* --------------------------------------------------------------------------------------
   Perf sideband built by hand
   -------------------------------------------------------------------------------------- */

typedef struct sbbuf {
    uint8_t d[16384];
    size_t len;
} sbbuf;

typedef struct sample {
    uint32_t pid, tid, cpu;
    uint64_t time, id;
} sample;

/* Append a record: header, body, then the sample_id fields of sample_type st. Returns
   the record's offset. */
static size_t sb_rec(sbbuf *b, uint32_t type, uint16_t misc, const uint8_t *body, size_t blen,
                     uint64_t st, sample s) {
    size_t at = b->len, n = 8 + blen;
    uint8_t *p = b->d + at;
    memcpy(p + 8, body, blen);
    if (st & FRAMES_PERF_SAMPLE_TID) tu_put_le32(p + n, s.pid), tu_put_le32(p + n + 4, s.tid), n += 8;
    if (st & FRAMES_PERF_SAMPLE_TIME) tu_put_le64(p + n, s.time), n += 8;
    if (st & FRAMES_PERF_SAMPLE_ID) tu_put_le64(p + n, s.id), n += 8;
    if (st & FRAMES_PERF_SAMPLE_STREAM_ID) tu_put_le64(p + n, s.id), n += 8;
    if (st & FRAMES_PERF_SAMPLE_CPU) tu_put_le32(p + n, s.cpu), tu_put_le32(p + n + 4, 0), n += 8;
    if (st & FRAMES_PERF_SAMPLE_IDENTIFIER) tu_put_le64(p + n, s.id), n += 8;
    tu_put_le32(p, type);
    p[4] = (uint8_t)misc, p[5] = (uint8_t)(misc >> 8);
    p[6] = (uint8_t)n, p[7] = (uint8_t)(n >> 8);
    b->len += n;
    return at;
}

/* MMAP (or MMAP2 when mmap2): pid, tid, addr, len, pgoff [, 32 bytes of 0], name */
static size_t body_mmap(uint8_t *p, int mmap2, uint32_t pid, uint32_t tid, uint64_t addr,
                        uint64_t len, uint64_t pgoff, const char *name) {
    size_t n = mmap2 ? 64 : 32, sl = strlen(name) + 1;
    memset(p, 0, 64 + sl + 8);
    tu_put_le32(p, pid), tu_put_le32(p + 4, tid), tu_put_le64(p + 8, addr), tu_put_le64(p + 16, len), tu_put_le64(p + 24, pgoff);
    memcpy(p + n, name, sl);
    return n + ((sl + 7) & ~(size_t)7);
}

static size_t body_pidtid(uint8_t *p, uint32_t pid, uint32_t tid) {
    tu_put_le32(p, pid), tu_put_le32(p + 4, tid);
    return 8;
}

static size_t body_comm(uint8_t *p, uint32_t pid, uint32_t tid, const char *comm) {
    size_t sl = strlen(comm) + 1;
    memset(p, 0, 8 + sl + 8);
    tu_put_le32(p, pid), tu_put_le32(p + 4, tid);
    memcpy(p + 8, comm, sl);
    return 8 + ((sl + 7) & ~(size_t)7);
}

static size_t body_fork(uint8_t *p, uint32_t pid, uint32_t ppid, uint32_t tid, uint32_t ptid,
                        uint64_t time) {
    tu_put_le32(p, pid), tu_put_le32(p + 4, ppid), tu_put_le32(p + 8, tid), tu_put_le32(p + 12, ptid), tu_put_le64(p + 16, time);
    return 24;
}

static size_t body_u64s(uint8_t *p, uint64_t a, uint64_t b, uint64_t c, int n) {
    tu_put_le64(p, a), tu_put_le64(p + 8, b), tu_put_le64(p + 16, c);
    return (size_t)n * 8;
}

static sample smp(uint32_t pid, uint32_t tid, uint64_t time) {
    sample s;
    s.pid = pid, s.tid = tid, s.time = time, s.cpu = 0, s.id = 0;
    return s;
}

/* A PT segment: at TSC t, tracing enabled at 0x1000, n bytes of code run, disabled. */
static void segment(enc *x, uint64_t t, uint64_t end) {
    enc_pkt(x, ppt_tsc, 0, t);
    enc_pkt(x, ppt_mode, 0, 0);
    enc_pkt(x, ppt_tip_pge, pt_ipc_sext_48, 0x1000);
    enc_pkt(x, ppt_fup, pt_ipc_update_16, end);
    enc_pkt(x, ppt_tip_pgd, pt_ipc_suppressed, 0);
}

static const uint8_t code_a[3] = {0x90, 0x90, 0x90};               /* nop; nop; nop */
static const uint8_t code_b[4] = {0x31, 0xc0, 0xff, 0xc0};         /* xor eax,eax; inc eax */

typedef struct sb_log {
    char ctx[16][24];
    uint32_t ctx_tid[16];
    int nctx;
    int diag[16];
    uint64_t diag_off[16];
    int ndiag;
    int records;
} sb_log;

static int log_context(void *c, const char *name, uint32_t pid, uint32_t tid) {
    sb_log *l = (sb_log *)c;
    (void)pid;
    if (l->nctx < 16) {
        snprintf(l->ctx[l->nctx], sizeof l->ctx[0], "%s", name);
        l->ctx_tid[l->nctx++] = tid;
    }
    return 0;
}

static int log_diag(void *c, int code, const char *src, uint64_t off) {
    sb_log *l = (sb_log *)c;
    (void)src;
    if (l->ndiag < 16) {
        l->diag[l->ndiag] = code;
        l->diag_off[l->ndiag++] = off;
    }
    return 0;
}

static int log_record(void *c, const frames_pt_sb_record *r) {
    (void)r;
    ((sb_log *)c)->records++;
    return 0;
}

/* A scratch directory with the two code files a.bin and b.bin. */
static const char *code_dir(void) {
    static char dir[512];
    char path[600];
    snprintf(dir, sizeof dir, "%s", tu_tmp_path(".d"));
    assert_int_equal(mkdir(dir, 0700), 0);
    snprintf(path, sizeof path, "%s/a.bin", dir);
    assert_int_equal(tu_write_file(path, code_a, sizeof code_a), 0);
    snprintf(path, sizeof path, "%s/b.bin", dir);
    assert_int_equal(tu_write_file(path, code_b, sizeof code_b), 0);
    return dir;
}

static void remove_code_dir(const char *dir) {
    char path[600];
    snprintf(path, sizeof path, "%s/a.bin", dir);
    remove(path);
    snprintf(path, sizeof path, "%s/b.bin", dir);
    remove(path);
    remove(dir);
}

/* Expect segment after segment: A = 1000 1001 1002, B = 1000 1002, Y = 1000 of b; each
   with its tid. */
static void expect_segments(const decoded *d, const char *segs, const uint32_t *tids) {
    size_t k = 0, i;
    for (i = 0; segs[i]; i++) {
        int a = segs[i] == 'A';
        const uint8_t *code = a ? code_a : code_b;
        uint64_t offs[3] = {0, a ? 1u : 2u, 2};
        size_t n = a ? 3 : segs[i] == 'Y' ? 1 : 2, j;
        for (j = 0; j < n; j++, k++) {
            if (k >= d->n) fail_msg("segment %zu: only %zu frames", i, d->n);
            if (d->ip[k] != 0x1000 + offs[j] || d->tid[k] != tids[i] ||
                memcmp(d->raw[k], code + offs[j], d->rawlen[k]) != 0)
                fail_msg("segment %zu (%c) frame %zu: ip %llx tid %llu, want %llx tid %u", i, segs[i],
                         k, (unsigned long long)d->ip[k], (unsigned long long)d->tid[k],
                         (unsigned long long)(0x1000 + offs[j]), tids[i]);
        }
    }
    assert_int_equal(d->n, k);
}

/* Processes, fork, exec, a secondary channel, ignored kernel maps, warnings. */
static void sideband_process_model(void **state) {
    const char *dir = code_dir();
    char sysroot[600];
    sbbuf p, q;
    uint8_t body[256];
    size_t off_lost, off_anon, off_vdso, off_del, off_aux;
    const uint64_t st = FRAMES_PERF_SAMPLE_TID | FRAMES_PERF_SAMPLE_TIME;
    const uint64_t st2 = st | FRAMES_PERF_SAMPLE_CPU | FRAMES_PERF_SAMPLE_IDENTIFIER;
    enc x;
    size_t len;
    int dec;
    sample s2;
    (void)state;
    snprintf(sysroot, sizeof sysroot, "%s/", dir);
    p.len = q.len = 0;
    sb_rec(&p, 1, 2, body, body_mmap(body, 0, 1, 1, 0x1000, 3, 0, "a.bin"), st, smp(1, 1, 0));
    sb_rec(&p, 12, 0, body, body_pidtid(body, 1, 1), st, smp(1, 1, 0));
    sb_rec(&p, 1, 2, body, body_mmap(body, 0, 2, 2, 0x1000, 4, 0, "b.bin"), st, smp(2, 2, 2));
    sb_rec(&p, 15, 0x2000, body, body_pidtid(body, 2, 2), st, smp(1, 1, 5));   /* cpu-wide out */
    sb_rec(&p, 7, 0, body, body_fork(body, 1, 1, 9, 1, 8), st, smp(1, 1, 8));   /* a thread */
    sb_rec(&p, 7, 0, body, body_fork(body, 3, 1, 3, 1, 12), st, smp(1, 1, 12));
    sb_rec(&p, 14, 0, body, 0, st, smp(3, 3, 15));                              /* switch in */
    sb_rec(&p, 3, 0x2000, body, body_comm(body, 3, 3, "newprog"), st, smp(3, 3, 22));
    sb_rec(&p, 1, 2, body, body_mmap(body, 0, 3, 3, 0x1000, 4, 0, "b.bin"), st, smp(3, 3, 23));
    sb_rec(&p, 15, 0x2000, body, body_pidtid(body, 4, 5), st, smp(3, 3, 35));
    off_lost = sb_rec(&p, 2, 0, body, body_u64s(body, 7, 3, 0, 2), st, smp(4, 5, 41));
    off_anon = sb_rec(&p, 1, 2, body, body_mmap(body, 0, 4, 5, 0x2000, 16, 0, "//anon"), st, smp(4, 5, 42));
    off_vdso = sb_rec(&p, 1, 2, body, body_mmap(body, 0, 4, 5, 0x3000, 16, 0, "[vdso]"), st, smp(4, 5, 43));
    off_del = sb_rec(&p, 1, 2, body, body_mmap(body, 0, 4, 5, 0x4000, 16, 0, "/gone (deleted)"), st,
                     smp(4, 5, 44));
    off_aux = sb_rec(&p, 11, 0, body, body_u64s(body, 0, 100, 1, 3), st, smp(4, 5, 45));
    sb_rec(&p, 1, 1, body, body_mmap(body, 0, 4, 5, 0x1000, 4, 0, "b.bin"), st, smp(4, 5, 46)); /* kernel */
    sb_rec(&p, 1, 2, body, body_mmap(body, 0, 4, 5, 0x1000, 4, 0, "b.bin"), st, smp(4, 5, 55));
    /* pid 7 maps a, execs, and the secondary channel maps b into the new image: records
       of both channels must be applied in time order (61, 62, 63, 64) */
    sb_rec(&p, 1, 2, body, body_mmap(body, 0, 7, 7, 0x1000, 3, 0, "a.bin"), st, smp(7, 7, 61));
    sb_rec(&p, 3, 0x2000, body, body_comm(body, 7, 7, "x"), st, smp(7, 7, 62));
    sb_rec(&p, 15, 0x2000, body, body_pidtid(body, 7, 7), st, smp(4, 5, 64));
    /* a switch due while the cpu runs user code waits for the kernel (the disable) */
    sb_rec(&p, 15, 0x2000, body, body_pidtid(body, 1, 1), st, smp(7, 7, 84));
    s2 = smp(4, 4, 31);
    s2.cpu = 1;
    s2.id = 99;
    sb_rec(&q, 1, 2, body, body_mmap(body, 0, 4, 4, 0x1000, 3, 0, "a.bin"), st2, s2);
    s2.pid = s2.tid = 6;
    s2.time = 36;
    sb_rec(&q, 10, 2, body, body_mmap(body, 1, 6, 6, 0x1000, 4, 0, "b.bin"), st2, s2);
    s2.pid = s2.tid = 7;
    s2.time = 63;
    sb_rec(&q, 1, 2, body, body_mmap(body, 0, 7, 7, 0x1000, 4, 0, "b.bin"), st2, s2);

    enc_init(&x);
    enc_pkt(&x, ppt_psb, 0, 0);
    enc_pkt(&x, ppt_psbend, 0, 0);
    segment(&x, 1, 0x1003);    /* pid 1: a */
    segment(&x, 10, 0x1004);   /* pid 2: b */
    segment(&x, 20, 0x1003);   /* pid 3, forked from 1: a */
    segment(&x, 30, 0x1004);   /* pid 3 after exec: b */
    segment(&x, 40, 0x1003);   /* pid 4, mapped by the secondary channel: a */
    segment(&x, 50, 0x1003);   /* kernel-mode maps are ignored: still a */
    segment(&x, 60, 0x1004);   /* a later user map wins: b */
    segment(&x, 70, 0x1004);   /* pid 7 after exec: b (from the secondary channel) */
    enc_pkt(&x, ppt_tsc, 0, 80);   /* pid 7 interrupted in user space at TSC 85 ... */
    enc_pkt(&x, ppt_mode, 0, 0);
    enc_pkt(&x, ppt_tip_pge, pt_ipc_sext_48, 0x1000);
    enc_pkt(&x, ppt_tsc, 0, 85);
    enc_pkt(&x, ppt_fup, pt_ipc_update_16, 0x1002);
    enc_pkt(&x, ppt_tip, pt_ipc_update_16, 0x1000);
    enc_pkt(&x, ppt_fup, pt_ipc_update_16, 0x1004);
    enc_pkt(&x, ppt_tip_pgd, pt_ipc_suppressed, 0);
    segment(&x, 100, 0x1003);  /* ... so the switch to pid 1 lands at the disable: a */
    len = enc_done(&x);

    for (dec = 0; dec < 2; dec++) {
        static const uint32_t tids[] = {1, 2, 3, 3, 5, 5, 5, 7, 7, 7, 1};
        frames_pt_options o;
        frames_pt *pt;
        frames_pt_sb_config c1, c2;
        frames_pt_callbacks cb;
        frames_error err;
        sb_log lg;
        decoded d;
        memset(&lg, 0, sizeof lg);
        memset(&cb, 0, sizeof cb);
        cb.ctx = &lg;
        cb.context = log_context;
        cb.sb_diag = log_diag;
        cb.sb_record = log_record;
        frames_pt_options_default(&o);
        o.decoder = dec;
        assert_int_equal(frames_pt_open(&pt, &o, &err), FRAMES_OK);
        frames_pt_sb_config_default(&c1);
        c1.sample_type = st;
        c1.sysroot = sysroot;
        c2 = c1;
        c2.sample_type = st2;
        assert_int_equal(frames_pt_add_pevent(pt, &c1, "primary", p.d, p.len, 1, 1, &err), FRAMES_OK);
        assert_int_equal(frames_pt_add_pevent(pt, &c2, "secondary", q.d, q.len, 0, 0, &err), FRAMES_OK);
        frames_pt_set_callbacks(pt, &cb);
        assert_int_equal(frames_pt_set_trace(pt, x.buf, len, &err), FRAMES_OK);
        decode_into(pt, &d);
        assert_int_equal(d.rc, FRAMES_OK);
        expect_segments(&d, "ABABAABBYBA", tids);
        assert_int_equal(d.nexc, 1);   /* the interrupt, between the two runs of pid 7 */
        assert_int_equal(d.exc[0].from_addr, 0x1002);
        assert_int_equal(d.exc[0].to_addr, 0x1000);
        assert_int_equal(d.exc[0].thread_id, 7);
        assert_int_equal(d.exc_pos[0], 21);   /* 3+2+3+2+3+3+2+2 frames, then 1000 */
        assert_int_equal(lg.nctx, 7);
        assert_string_equal(lg.ctx[5], "pid-7");
        assert_string_equal(lg.ctx[6], "pid-1");
        assert_string_equal(lg.ctx[0], "pid-1");
        assert_string_equal(lg.ctx[1], "pid-2");
        assert_string_equal(lg.ctx[2], "pid-3");
        assert_string_equal(lg.ctx[3], "pid-3");   /* the exec'd process: a new image */
        assert_string_equal(lg.ctx[4], "pid-4");
        assert_int_equal(lg.ctx_tid[4], 5);
        assert_int_equal(lg.ndiag, 5);
        assert_int_equal(lg.diag[0], FRAMES_PT_SB_LOST);
        assert_int_equal(lg.diag_off[0], off_lost);
        assert_int_equal(lg.diag[1], FRAMES_PT_SB_SECTION_LOST);
        assert_int_equal(lg.diag_off[1], off_anon);
        assert_int_equal(lg.diag[2], -pte_bad_config);   /* [vdso] without a vdso file */
        assert_int_equal(lg.diag_off[2], off_vdso);
        assert_int_equal(lg.diag[3], FRAMES_PT_SB_SECTION_LOST);
        assert_int_equal(lg.diag_off[3], off_del);
        assert_int_equal(lg.diag[4], FRAMES_PT_SB_TRACE_LOST);
        assert_int_equal(lg.diag_off[4], off_aux);
        assert_int_equal(lg.records, 24);
        assert_int_equal(d.st.sb_records, 24);
        assert_int_equal(d.st.sb_warnings, 4);
        assert_int_equal(d.st.sb_errors, 1);
        assert_int_equal(d.st.context_switches, 7);
        /* modload frames for the primary channel's user maps that loaded */
        assert_int_equal(d.nmod, 5);
        assert_int_equal(d.mod_low[0], 0x1000);
        assert_int_equal(d.mod_high[0], 0x1002);
        assert_non_null(strstr(d.modules[0], "/a.bin"));
        assert_non_null(strstr(d.modules[1], "/b.bin"));
        decoded_free(&d);
        frames_pt_close(pt);
    }
    remove_code_dir(dir);
}

/* A pt decoder whose one primary sideband source "sb" is b, written with sample_type st. */
static frames_pt *open_with_sideband(const sbbuf *b, uint64_t st) {
    frames_pt *pt;
    frames_pt_sb_config c;
    frames_error err;
    assert_int_equal(frames_pt_open(&pt, NULL, &err), FRAMES_OK);
    frames_pt_sb_config_default(&c);
    c.sample_type = st;
    assert_int_equal(frames_pt_add_pevent(pt, &c, "sb", b->d, b->len, 1, 0, &err), FRAMES_OK);
    return pt;
}

/* Decode through pt, with cb's callbacks, a trace of one segment at TSC 100 (0x1000 to
   0x1003) after a PSB, so the sideband before it is applied; then close pt. */
static void decode_one_segment(frames_pt *pt, const frames_pt_callbacks *cb) {
    frames_error err;
    enc x;
    size_t len;
    enc_init(&x);
    enc_pkt(&x, ppt_psb, 0, 0);
    enc_pkt(&x, ppt_psbend, 0, 0);
    segment(&x, 100, 0x1003);
    len = enc_done(&x);
    assert_int_equal(frames_pt_set_trace(pt, x.buf, len, &err), FRAMES_OK);
    frames_pt_set_callbacks(pt, cb);
    assert_int_equal(frames_pt_decode(pt, NULL, NULL, &err), FRAMES_OK);
    frames_pt_close(pt);
}

/* Sample fields and record bodies print like ptxed --sb:compact / --sb:verbose. */
typedef struct grab {
    char lines[8][512];
    char verbose[8][512];
    int n;
} grab;

static int grab_record(void *c, const frames_pt_sb_record *r) {
    grab *g = (grab *)c;
    if (g->n < 8) {
        frames_pt_format_sb_record(g->lines[g->n], sizeof g->lines[0], r, FRAMES_PT_PRINT_SB_COMPACT);
        frames_pt_format_sb_record(g->verbose[g->n++], sizeof g->verbose[0], r,
                                   FRAMES_PT_PRINT_SB_VERBOSE);
    }
    return 0;
}

static void sideband_record_format(void **state) {
    sbbuf b;
    uint8_t body[256];
    frames_pt_callbacks cb;
    grab g;
    sample s;
    int i;
    static const char *want[] = {
        "PERF_RECORD_MMAP2  5/6, 7f0000, 1000, 2000, 0, 0, 0, 0, 0, 0, /nonexistent/x.so  { 5/6 2a 9 cpu-3 9 9 }",
        "PERF_RECORD_COMM.EXEC  5/5, sh  { 5/5 2b 9 cpu-3 9 9 }",
        "PERF_RECORD_SWITCH_CPU_WIDE.OUT  7/8  { 5/6 2c 9 cpu-3 9 9 }",
        "PERF_RECORD_SWITCH.IN  { 5/6 2d 9 cpu-3 9 9 }",
        "PERF_RECORD_FORK  9/9, 5/6, 2e  { 5/6 2e 9 cpu-3 9 9 }",
        "PERF_RECORD_AUX.TRUNCATED  10, 20, 1  { 5/6 2f 9 cpu-3 9 9 }",
        "UNKNOWN (63, 0)  { }",
    };
    const uint64_t st = 0x102c6;   /* TID TIME ID CPU STREAM_ID IDENTIFIER */
    (void)state;
    b.len = 0;
    s = smp(5, 6, 0x2a);
    s.cpu = 3;
    s.id = 9;
    sb_rec(&b, 10, 2, body, body_mmap(body, 1, 5, 6, 0x7f0000, 0x1000, 0x2000, "/nonexistent/x.so"), st, s);
    s.pid = s.tid = 5, s.time = 0x2b;
    sb_rec(&b, 3, 0x2000, body, body_comm(body, 5, 5, "sh"), st, s);
    s.tid = 6, s.time = 0x2c;
    sb_rec(&b, 15, 0x2000, body, body_pidtid(body, 7, 8), st, s);
    s.time = 0x2d;
    sb_rec(&b, 14, 0, body, 0, st, s);
    s.time = 0x2e;
    sb_rec(&b, 7, 0, body, body_fork(body, 9, 5, 9, 6, 0x2e), st, s);
    s.time = 0x2f;
    sb_rec(&b, 11, 0, body, body_u64s(body, 0x10, 0x20, 1, 3), st, s);
    sb_rec(&b, 99, 0, body, body_pidtid(body, 1, 2), 0, s);
    memset(&g, 0, sizeof g);
    memset(&cb, 0, sizeof cb);
    cb.ctx = &g;
    cb.sb_record = grab_record;
    decode_one_segment(open_with_sideband(&b, st), &cb);
    assert_int_equal(g.n, 7);
    for (i = 0; i < 7; i++) assert_string_equal(g.lines[i], want[i]);
    assert_string_equal(g.verbose[3], "PERF_RECORD_SWITCH.IN\n  pid: 5\n  tid: 6\n  time: 2d\n  id: 9"
                                      "\n  cpu: 3\n  stream id: 9\n  identifier: 9");
    assert_string_equal(g.verbose[1], "PERF_RECORD_COMM.EXEC\n  pid: 5\n  tid: 5\n  comm: sh\n  pid: 5"
                                      "\n  tid: 5\n  time: 2b\n  id: 9\n  cpu: 3\n  stream id: 9\n  identifier: 9");
}

/* perf time -> TSC, computed by hand: t = time - zero; (t / mult) << shift plus the
   remainder's share. Time 0 (synthesized records) is TSC 0. */
static void sideband_time_conversion(void **state) {
    frames_pt_sb_config c;
    (void)state;
    frames_pt_sb_config_default(&c);
    c.time_zero = 1000;
    c.time_mult = 3;
    c.time_shift = 2;
    assert_int_equal(frames_pt_time_to_tsc(&c, 1010), 13);   /* 10 = 3*3 + 1: 12 + 4/3 */
    assert_int_equal(frames_pt_time_to_tsc(&c, 1012), 16);   /* 12 = 4*3: 16 + 0 */
    assert_int_equal(frames_pt_time_to_tsc(&c, 0), 0);
    c.time_zero = 0;
    c.time_mult = 1;
    c.time_shift = 0;
    assert_int_equal(frames_pt_time_to_tsc(&c, 123456789), 123456789);
    /* typical perf numbers: mult 0x2aaaaaab... shift 31 for a 3 GHz TSC: 1 ns = 3 ticks */
    c.time_zero = 0;
    c.time_mult = 715827883u;   /* 2^31 / 3, rounded up */
    c.time_shift = 31;
    assert_int_equal(frames_pt_time_to_tsc(&c, 1000000000ull), 2999999998ull);
}

/* Malformed sideband: truncated records are reported, bad sizes drop the source. */
static void sideband_malformed(void **state) {
    sbbuf b;
    uint8_t body[256];
    frames_pt_sb_config c;
    frames_pt *pt;
    frames_pt_callbacks cb;
    frames_error err;
    sb_log lg;
    size_t second;
    const uint64_t st = FRAMES_PERF_SAMPLE_TIME;
    (void)state;
    b.len = 0;
    sb_rec(&b, 12, 0, body, body_pidtid(body, 1, 1), st, smp(0, 0, 0));
    second = sb_rec(&b, 2, 0, body, body_u64s(body, 1, 1, 0, 2), st, smp(0, 0, 1));
    b.d[second + 6] = 16;   /* size too small for LOST + trailer: out of sync */
    memset(&lg, 0, sizeof lg);
    memset(&cb, 0, sizeof cb);
    cb.ctx = &lg;
    cb.sb_diag = log_diag;
    cb.sb_record = log_record;
    pt = open_with_sideband(&b, st);
    frames_pt_sb_config_default(&c);
    c.sample_type = st;
    assert_int_equal(frames_pt_add_pevent(pt, &c, "cut", b.d, 12, 0, 0, &err), FRAMES_OK);
    decode_one_segment(pt, &cb);
    assert_int_equal(lg.records, 1);   /* the ITRACE_START; the bad LOST is never applied */
    assert_int_equal(lg.ndiag, 2);
    assert_int_equal(lg.diag[0], FRAMES_PT_SB_TRUNCATED);   /* "cut": 12 of 24 bytes */
    assert_int_equal(lg.diag_off[0], 0);
    assert_int_equal(lg.diag[1], -pte_bad_packet);
    assert_int_equal(lg.diag_off[1], second);
}

/* --------------------------------------------------------------------------------------
   perf.data files built by hand (the layout of spec §5)
   -------------------------------------------------------------------------------------- */

typedef struct perfbuf {
    uint8_t *d;
    size_t len, cap;
} perfbuf;

static size_t pf_put(perfbuf *f, const void *p, size_t n) {
    size_t at = f->len;
    f->d = (uint8_t *)tu_append(f->d, &f->len, &f->cap, p, n);
    return at;
}

static void pf_u64(perfbuf *f, uint64_t v) {
    uint8_t b[8];
    tu_put_le64(b, v);
    pf_put(f, b, 8);
}

/* perf_event_attr (120 bytes): type, size, config, sample_type, flags */
static void pf_attr(uint8_t *a, uint32_t type, uint64_t config, uint64_t sample_type, uint64_t flags) {
    memset(a, 0, 120);
    tu_put_le32(a, type);
    tu_put_le32(a + 4, 120);
    tu_put_le64(a + 8, config);
    tu_put_le64(a + 24, sample_type);
    tu_put_le64(a + 40, flags);
}

#define ST_PERF 0x10087ull   /* IP TID TIME CPU IDENTIFIER */
#define ST_SB 0x10086ull
#define FLAG_SAMPLE_ID_ALL (1ull << 18)
#define FLAG_CONTEXT_SWITCH (1ull << 26)
#define FLAG_EXCLUDE_KERNEL (1ull << 5)

/* The data section: AUXTRACE_INFO, sideband out of time order, AUXTRACE pieces. */
static void pf_records(perfbuf *f, const char *dir, const uint8_t *pt0, size_t len0,
                       const uint8_t *pt1, size_t len1) {
    sbbuf b;
    uint8_t body[512], hdr[48];
    char a[600], bb[600];
    sample s;
    size_t i, cut = len0 / 2;
    uint64_t priv[16] = {8, 0, 1, 1000, 1, 0, 0, 1, 0, 1, 9, 14, 2, 1, 0, 33};
    snprintf(a, sizeof a, "%s/a.bin", dir);
    snprintf(bb, sizeof bb, "%s/b.bin", dir);
    /* AUXTRACE_INFO: type 1 (Intel PT), reserved, priv[16] */
    memset(hdr, 0, 16);
    tu_put_le32(hdr, 70);
    hdr[6] = 16 + 16 * 8;
    tu_put_le32(hdr + 8, 1);
    pf_put(f, hdr, 16);
    for (i = 0; i < 16; i++) pf_u64(f, priv[i]);
    b.len = 0;
    s = smp(1, 1, 1010);   /* cpu 0: switch to pid 2 at TSC 10 - first in the file */
    s.cpu = 0, s.id = 200;
    sb_rec(&b, 15, 0x2000, body, body_pidtid(body, 2, 2), ST_SB, s);
    s = smp(1, 1, 1000);
    s.cpu = 0, s.id = 200;
    sb_rec(&b, 1, 2, body, body_mmap(body, 0, 1, 1, 0x1000, 3, 0, a), ST_SB, s);
    s.id = 100;
    sb_rec(&b, 12, 0, body, body_pidtid(body, 1, 1), ST_SB, s);   /* from the intel_pt event */
    s = smp(2, 2, 1000);
    s.cpu = 1, s.id = 201;
    sb_rec(&b, 10, 2, body, body_mmap(body, 1, 2, 2, 0x1000, 4, 0, bb), ST_SB, s);
    s.id = 101;
    sb_rec(&b, 12, 0, body, body_pidtid(body, 2, 2), ST_SB, s);
    pf_put(f, b.d, b.len);
    memset(hdr, 0, 8);   /* FINISHED_ROUND */
    tu_put_le32(hdr, 68);
    hdr[6] = 8;
    pf_put(f, hdr, 8);
    /* AUXTRACE: size, offset, reference, idx, tid, cpu, reserved; the data follows */
    for (i = 0; i < 3; i++) {
        const uint8_t *data = i == 0 ? pt0 : i == 1 ? pt0 + cut : pt1;
        size_t n = i == 0 ? cut : i == 1 ? len0 - cut : len1;
        uint32_t cpu = i == 2 ? 1 : 0;
        memset(hdr, 0, sizeof hdr);
        tu_put_le32(hdr, 71);
        hdr[6] = 48;
        tu_put_le64(hdr + 8, n);
        tu_put_le64(hdr + 16, i == 1 ? cut : 0);
        tu_put_le32(hdr + 32, cpu);    /* idx */
        tu_put_le32(hdr + 36, 0xffffffffu);
        tu_put_le32(hdr + 40, cpu);
        pf_put(f, hdr, 48);
        pf_put(f, data, n);
    }
}

/* A perf.data file: per-cpu traces, two attrs, HEADER_CPUID; pipe mode puts the attrs in
   HEADER_ATTR records instead. */
static perfbuf perf_file(const char *dir, int pipe, const uint8_t *pt0, size_t len0,
                         const uint8_t *pt1, size_t len1) {
    perfbuf f;
    uint8_t a[120], rec[8 + 120 + 16];
    const char *cpuid = "GenuineIntel,6,142,10";
    size_t hdr, attrs, ids, data, feat;
    memset(&f, 0, sizeof f);
    pf_put(&f, "PERFILE2", 8);
    if (pipe) {
        pf_u64(&f, 16);
        pf_attr(a, 8, 3ull << 14, ST_PERF, FLAG_SAMPLE_ID_ALL | FLAG_EXCLUDE_KERNEL);
        memset(rec, 0, sizeof rec);
        tu_put_le32(rec, 64);
        rec[6] = (uint8_t)sizeof rec;
        memcpy(rec + 8, a, 120);
        tu_put_le64(rec + 128, 100);
        tu_put_le64(rec + 136, 101);
        pf_put(&f, rec, sizeof rec);
        pf_attr(a, 1, 9, ST_SB, FLAG_SAMPLE_ID_ALL | FLAG_CONTEXT_SWITCH);
        memcpy(rec + 8, a, 120);
        tu_put_le64(rec + 128, 200);
        tu_put_le64(rec + 136, 201);
        pf_put(&f, rec, sizeof rec);
        pf_records(&f, dir, pt0, len0, pt1, len1);
        return f;
    }
    hdr = pf_put(&f, NULL, 96);
    ids = f.len;
    pf_u64(&f, 100), pf_u64(&f, 101), pf_u64(&f, 200), pf_u64(&f, 201);
    attrs = f.len;
    pf_attr(a, 8, 3ull << 14, ST_PERF, FLAG_SAMPLE_ID_ALL | FLAG_EXCLUDE_KERNEL);
    pf_put(&f, a, 120);
    pf_u64(&f, ids), pf_u64(&f, 16);
    pf_attr(a, 1, 9, ST_SB, FLAG_SAMPLE_ID_ALL | FLAG_CONTEXT_SWITCH);
    pf_put(&f, a, 120);
    pf_u64(&f, ids + 16), pf_u64(&f, 16);
    data = f.len;
    pf_records(&f, dir, pt0, len0, pt1, len1);
    feat = f.len;   /* one feature section: HEADER_CPUID (bit 9) */
    pf_u64(&f, feat + 16);
    pf_u64(&f, 4 + 24);
    {
        uint8_t s[28];
        memset(s, 0, sizeof s);
        tu_put_le32(s, 24);
        memcpy(s + 4, cpuid, strlen(cpuid));
        pf_put(&f, s, sizeof s);
    }
    tu_put_le64(f.d + hdr, 104);             /* header size */
    tu_put_le64(f.d + 16, 120 + 16);        /* attr_size */
    tu_put_le64(f.d + 24, attrs);
    tu_put_le64(f.d + 32, 2 * (120 + 16));
    tu_put_le64(f.d + 40, data);
    tu_put_le64(f.d + 48, feat - data);
    tu_put_le64(f.d + 72, 1ull << 9);       /* adds_features */
    return f;
}

static void perf_traces(enc *x0, size_t *len0, enc *x1, size_t *len1) {
    enc_init(x0);
    enc_pkt(x0, ppt_psb, 0, 0);
    enc_pkt(x0, ppt_psbend, 0, 0);
    segment(x0, 1, 0x1003);    /* pid 1: a */
    segment(x0, 20, 0x1004);   /* after the switch at TSC 10: pid 2, mapped on cpu 1 */
    *len0 = enc_done(x0);
    enc_init(x1);
    enc_pkt(x1, ppt_psb, 0, 0);
    enc_pkt(x1, ppt_psbend, 0, 0);
    segment(x1, 5, 0x1004);    /* pid 2: b */
    *len1 = enc_done(x1);
}

static void perf_data_file(void **state) {
    const char *dir = code_dir();
    enc x0, x1;
    size_t len0, len1;
    int pipe;
    (void)state;
    perf_traces(&x0, &len0, &x1, &len1);
    for (pipe = 0; pipe < 2; pipe++) {
        perfbuf f = perf_file(dir, pipe, x0.buf, len0, x1.buf, len1);
        frames_perf *pd;
        frames_error err;
        const frames_perf_info *in;
        frames_pt_options o;
        size_t i;
        frames_bytes sb0;
        assert_int_equal(frames_perf_open_memory(&pd, f.d, f.len, NULL, &err), FRAMES_OK);
        in = frames_perf_info_get(pd);
        assert_int_equal(in->pipe_mode, pipe);
        assert_int_equal(in->nattrs, 2);
        assert_int_equal(in->pt_pmu_type, 8);
        assert_int_equal(in->sample_type, ST_PERF);
        assert_true(in->sample_id_all);
        assert_true(in->context_switch);
        assert_true(in->exclude_kernel);
        assert_true(in->have_time_conv);
        assert_int_equal(in->time_zero, 1000);
        assert_int_equal(in->time_mult, 1);
        assert_int_equal(in->mtc_freq, 3);
        assert_int_equal(in->nom_freq, 33);
        assert_int_equal(in->tsc_ctc_n, 2);
        assert_int_equal(in->tsc_ctc_d, 1);
        assert_true(in->per_cpu_mmaps);
        assert_int_equal(in->sideband_records, 5);
        assert_string_equal(in->cpuid, pipe ? "" : "GenuineIntel,6,142,10");
        assert_int_equal(frames_perf_nstreams(pd), 2);
        assert_int_equal(frames_perf_stream_at(pd, 0)->cpu, 0);
        assert_int_equal(frames_perf_stream_at(pd, 0)->pieces, 2);
        assert_int_equal(frames_perf_stream_at(pd, 0)->size, len0);
        assert_int_equal(frames_perf_stream_at(pd, 1)->cpu, 1);
        assert_int_equal(frames_perf_stream_at(pd, 1)->size, len1);
        sb0 = frames_perf_sideband(pd, 0);
        {   /* cpu 0: the switch, the mmap and the itrace start (48 + 32 + name + 48) */
            char a[600];
            snprintf(a, sizeof a, "%s/a.bin", dir);
            assert_int_equal(sb0.len, 48 + 8 + 32 + ((strlen(a) + 1 + 7) & ~(size_t)7) + 32 + 48);
        }
        assert_int_equal(sb0.ptr[0], 1);           /* sorted: the MMAP (time 1000) first */
        frames_pt_options_default(&o);
        frames_perf_pt_options(pd, &o);
        if (!pipe) {
            assert_int_equal(o.cpu.vendor, pcv_intel);
            assert_int_equal(o.cpu.family, 6);
            assert_int_equal(o.cpu.model, 142);
            assert_int_equal(o.cpu.stepping, 10);
        }
        assert_int_equal(o.mtc_freq, 3);
        assert_int_equal(o.cpuid_0x15_ebx, 2);
        for (i = 0; i < 2; i++) {
            static const uint32_t tids0[] = {1, 2}, tids1[] = {2};
            frames_pt *pt;
            decoded d;
            assert_int_equal(frames_pt_open(&pt, &o, &err), FRAMES_OK);
            assert_int_equal(frames_perf_attach(pd, i, pt, NULL, &err), FRAMES_OK);
            decode_into(pt, &d);
            assert_int_equal(d.rc, FRAMES_OK);
            if (i == 0) expect_segments(&d, "AB", tids0);
            else expect_segments(&d, "B", tids1);
            assert_int_equal(d.st.config_error, 0);
            decoded_free(&d);
            frames_pt_close(pt);
        }
        frames_perf_close(pd);
        free(f.d);
    }
    remove_code_dir(dir);
}

static void perf_data_rejects_garbage(void **state) {
    static const uint8_t notperf[32] = "PERFILE1";
    uint8_t hdr[104];
    frames_perf *pd;
    frames_error err;
    (void)state;
    assert_int_equal(frames_perf_open_memory(&pd, notperf, sizeof notperf, NULL, &err), FRAMES_E_FORMAT);
    assert_null(pd);
    memset(hdr, 0, sizeof hdr);
    memcpy(hdr, "PERFILE2", 8);
    tu_put_le64(hdr + 8, 104);
    tu_put_le64(hdr + 16, 136);
    tu_put_le64(hdr + 40, 2000);    /* data section starting past the end */
    tu_put_le64(hdr + 48, 1000);
    assert_int_equal(frames_perf_open_memory(&pd, hdr, sizeof hdr, NULL, &err), FRAMES_E_FORMAT);
    assert_non_null(strstr(err.message, "outside the file"));
    tu_put_le64(hdr + 40, 100);     /* ... or inside the header */
    assert_int_equal(frames_perf_open_memory(&pd, hdr, sizeof hdr, NULL, &err), FRAMES_E_FORMAT);
    assert_non_null(strstr(err.message, "inside the file header"));
    {   /* a record whose size is smaller than its header */
        perfbuf f;
        memset(&f, 0, sizeof f);
        pf_put(&f, "PERFILE2", 8);
        pf_u64(&f, 16);
        pf_u64(&f, 0x0000000000000001ull);   /* type 1, misc 0, size 0 */
        assert_int_equal(frames_perf_open_memory(&pd, f.d, f.len, NULL, &err), FRAMES_E_FORMAT);
        assert_non_null(strstr(err.message, "smaller than its header"));
        assert_int_equal(err.offset, 16);
        free(f.d);
    }
}

/* --------------------------------------------------------------------------------------
   ELF images, kcore, vdso
   -------------------------------------------------------------------------------------- */

/* An ELF64 executable: PT_LOAD of the headers at 0x400000, the code at 0x401000 (file
   offset 0x1000), a bss PT_LOAD without file bytes at 0x600000. */
static const char *elf64_file(const uint8_t *code, size_t n, uint64_t code_vaddr) {
    static uint8_t f[0x1000 + 4096];
    uint8_t *ph;
    memset(f, 0, sizeof f);
    memcpy(f, "\177ELF\2\1\1", 7);
    f[16] = 2, f[18] = 62, f[20] = 1;             /* ET_EXEC, EM_X86_64, EV_CURRENT */
    tu_put_le64(f + 32, 64);                             /* e_phoff */
    f[52] = 64, f[54] = 56, f[56] = 3;             /* e_ehsize, e_phentsize, e_phnum */
    ph = f + 64;
    tu_put_le32(ph, 1), tu_put_le64(ph + 8, 0), tu_put_le64(ph + 16, code_vaddr - 0x1000), tu_put_le64(ph + 32, 0x100);
    ph += 56;
    tu_put_le32(ph, 1), tu_put_le64(ph + 8, 0x1000), tu_put_le64(ph + 16, code_vaddr), tu_put_le64(ph + 32, n);
    tu_put_le64(ph + 40, n);
    ph += 56;
    tu_put_le32(ph, 1), tu_put_le64(ph + 8, 0), tu_put_le64(ph + 16, code_vaddr + 0x1ff000), tu_put_le64(ph + 40, 0x1000);
    memcpy(f + 0x1000, code, n);
    return temp_file(f, 0x1000 + n, ".elf");
}

/* An ELF32 (i386) file with code at 0x8049000 from file offset 0x80. */
static const char *elf32_file(const uint8_t *code, size_t n) {
    static uint8_t f[0x80 + 64];
    uint8_t *ph;
    memset(f, 0, sizeof f);
    memcpy(f, "\177ELF\1\1\1", 7);
    f[16] = 2, f[18] = 3, f[20] = 1;               /* ET_EXEC, EM_386 */
    tu_put_le32(f + 28, 52);                             /* e_phoff */
    f[40] = 52, f[42] = 32, f[44] = 1;             /* e_ehsize, e_phentsize, e_phnum */
    ph = f + 52;
    tu_put_le32(ph, 1), tu_put_le32(ph + 4, 0x80), tu_put_le32(ph + 8, 0x8049000), tu_put_le32(ph + 16, (uint32_t)n);
    memcpy(f + 0x80, code, n);
    return temp_file(f, 0x80 + n, ".elf");
}

static void elf_images(void **state) {
    const char *path = elf64_file(ptsynth_code, sizeof ptsynth_code, 0x401000);
    static const uint64_t bases[2] = {0x401000, 0x7f0000001000ull};
    int i;
    (void)state;
    for (i = 0; i < 2; i++) {
        ptsynth s;
        uint64_t calls[3], jumps[3], k;
        frames_pt *pt;
        frames_error err;
        decoded d;
        ptsynth_init_default(&s, bases[i], 3, calls, jumps);
        s.want_ips = 1;
        assert_int_equal(ptsynth_walk(&s, s.base, 5000), 0);
        pt = open_session(FRAMES_PT_DECODER_BLOCK, NULL, 0, 1);
        /* without a base the segments stay where they are linked; with one, the lowest
           (0x400000, the headers) moves to the base */
        assert_int_equal(frames_pt_add_elf(pt, path, i ? 0x7f0000000000ull : 0, i, &err), FRAMES_OK);
        assert_int_equal(frames_pt_set_trace(pt, s.trace, s.len, &err), FRAMES_OK);
        decode_into(pt, &d);
        assert_int_equal(d.rc, FRAMES_OK);
        assert_int_equal(d.n, s.nips);
        for (k = 0; k < s.nips; k++) assert_int_equal(d.ip[k], s.ips[k]);
        assert_int_equal(d.nmod, 2);   /* the bss segment has no file bytes */
        assert_int_equal(d.mod_low[0], bases[i] - 0x1000);
        assert_int_equal(d.mod_high[0], bases[i] - 0x1000 + 0xff);
        assert_int_equal(d.mod_low[1], bases[i]);
        assert_int_equal(d.mod_high[1], bases[i] + sizeof ptsynth_code - 1);
        decoded_free(&d);
        frames_pt_close(pt);
        ptsynth_free(&s);
    }
    remove(path);
}

/* 32-bit code from an ELF32 file, decoded in 32-bit mode. */
static void elf32_image(void **state) {
    static const uint8_t code[] = {0x66, 0xb8, 0x34, 0x12, 0xb8, 0x78, 0x56, 0x34, 0x12, 0x90};
    const char *path = elf32_file(code, sizeof code);
    frames_pt *pt;
    frames_error err;
    decoded d;
    enc x;
    size_t len;
    int dec;
    (void)state;
    enc_psb_at(&x, 0x8049000, 32);
    enc_pkt(&x, ppt_fup, pt_ipc_update_16, 0x900a);
    enc_pkt(&x, ppt_tip_pgd, pt_ipc_suppressed, 0);
    len = enc_done(&x);
    for (dec = 0; dec < 2; dec++) {
        pt = open_session(dec, NULL, 0, 1);
        assert_int_equal(frames_pt_add_elf(pt, path, 0, 0, &err), FRAMES_OK);
        assert_int_equal(frames_pt_set_trace(pt, x.buf, len, &err), FRAMES_OK);
        decode_into(pt, &d);
        assert_int_equal(d.rc, FRAMES_OK);
        assert_int_equal(d.n, 3);   /* mov ax, imm16 (4); mov eax, imm32 (5); nop */
        assert_int_equal(d.ip[0], 0x8049000);
        assert_int_equal(d.rawlen[0], 4);
        assert_int_equal(d.ip[1], 0x8049004);
        assert_int_equal(d.rawlen[1], 5);
        assert_int_equal(d.ip[2], 0x8049009);
        decoded_free(&d);
        frames_pt_close(pt);
    }
    remove(path);
}

/* Kernel code from kcore in every process; [vdso] from the file of the process's ABI. */
static void kcore_and_vdso(void **state) {
    const char *kcore = elf64_file(nops, 16, 0xffffffff81000000ull);
    const char *exe = elf64_file(code_b, sizeof code_b, 0x401000);
    const char *vdso = temp_file(nops, 16, ".vdso");
    frames_pt *pt;
    frames_pt_sb_config c;
    frames_pt_callbacks cb;
    frames_error err;
    sb_log lg;
    sbbuf b;
    uint8_t body[512];
    enc x;
    size_t len, k;
    decoded d;
    (void)state;
    b.len = 0;
    sb_rec(&b, 1, 2, body, body_mmap(body, 0, 1, 1, 0x401000, 4, 0x1000, exe), FRAMES_PERF_SAMPLE_TIME,
           smp(0, 0, 0));
    sb_rec(&b, 1, 2, body, body_mmap(body, 0, 1, 1, 0x7fff0000, 3, 0, "[vdso]"), FRAMES_PERF_SAMPLE_TIME,
           smp(0, 0, 0));
    sb_rec(&b, 12, 0, body, body_pidtid(body, 1, 1), FRAMES_PERF_SAMPLE_TIME, smp(0, 0, 0));
    enc_init(&x);
    enc_pkt(&x, ppt_psb, 0, 0);
    enc_pkt(&x, ppt_psbend, 0, 0);
    enc_pkt(&x, ppt_tsc, 0, 1);
    enc_pkt(&x, ppt_mode, 0, 0);
    enc_pkt(&x, ppt_tip_pge, pt_ipc_sext_48, 0xffffffff81000000ull);
    enc_pkt(&x, ppt_fup, pt_ipc_update_16, 0xffffffff81000003ull);
    enc_pkt(&x, ppt_tip_pgd, pt_ipc_suppressed, 0);
    enc_pkt(&x, ppt_mode, 0, 0);
    enc_pkt(&x, ppt_tip_pge, pt_ipc_sext_48, 0x7fff0000);
    enc_pkt(&x, ppt_fup, pt_ipc_update_16, 0x7fff0003);
    enc_pkt(&x, ppt_tip_pgd, pt_ipc_suppressed, 0);
    len = enc_done(&x);
    memset(&lg, 0, sizeof lg);
    memset(&cb, 0, sizeof cb);
    cb.ctx = &lg;
    cb.sb_diag = log_diag;
    cb.context = log_context;
    pt = open_session(FRAMES_PT_DECODER_BLOCK, NULL, 0, 0);
    assert_int_equal(frames_pt_add_kcore(pt, kcore, 0, 0, &err), FRAMES_OK);
    frames_pt_sb_config_default(&c);
    c.sample_type = FRAMES_PERF_SAMPLE_TIME;
    c.kernel_start = 0xffffffff80000000ull;
    c.vdso_x64 = vdso;
    assert_int_equal(frames_pt_add_pevent(pt, &c, "sb", b.d, b.len, 1, 0, &err), FRAMES_OK);
    assert_int_equal(frames_pt_set_trace(pt, x.buf, len, &err), FRAMES_OK);
    frames_pt_set_callbacks(pt, &cb);
    decode_into(pt, &d);
    assert_int_equal(d.rc, FRAMES_OK);
    assert_int_equal(lg.ndiag, 0);
    assert_int_equal(lg.nctx, 1);
    assert_int_equal(d.n, 6);
    for (k = 0; k < 3; k++) {
        assert_int_equal(d.ip[k], 0xffffffff81000000ull + k);
        assert_int_equal(d.ip[3 + k], 0x7fff0000 + k);
        assert_int_equal(d.raw[k][0], 0x90);
        assert_int_equal(d.tid[k], 1);
    }
    decoded_free(&d);
    frames_pt_close(pt);
    remove(kcore);
    remove(exe);
    remove(vdso);
}

/* Decode stream i of pd (cpu from the file, if any) and check its segments. */
static void expect_perf_stream(const frames_perf *pd, size_t i, const char *segs, const uint32_t *tids) {
    frames_pt_options o;
    frames_pt *pt;
    frames_error err;
    decoded d;
    frames_pt_options_default(&o);
    frames_perf_pt_options(pd, &o);
    assert_int_equal(frames_pt_open(&pt, &o, &err), FRAMES_OK);
    assert_int_equal(frames_perf_attach(pd, i, pt, NULL, &err), FRAMES_OK);
    decode_into(pt, &d);
    assert_int_equal(d.rc, FRAMES_OK);
    expect_segments(&d, segs, tids);
    decoded_free(&d);
    frames_pt_close(pt);
}

/* The data section of a non-pipe perf_file ends where the feature table starts. */
static size_t perf_data_end(const perfbuf *f) {
    uint64_t off = 0, size = 0;
    int i;
    for (i = 7; i >= 0; i--) {
        off = off << 8 | f->d[40 + i];
        size = size << 8 | f->d[48 + i];
    }
    return (size_t)(off + size);
}

/* perf record killed (the header's data size still 0, no feature sections) and copies cut
   short (inside a record, inside PT bytes): every complete record is used, the PT bytes
   before the cut too, and the info says what is missing. */
static void perf_data_unfinished(void **state) {
    static const uint32_t tids0[] = {1, 2}, tids1[] = {2};
    const char *dir = code_dir();
    enc x0, x1;
    size_t len0, len1, end, half;
    perfbuf f, p;
    frames_perf *pd;
    frames_error err;
    const frames_perf_info *in;
    int zero;
    (void)state;
    perf_traces(&x0, &len0, &x1, &len1);
    f = perf_file(dir, 0, x0.buf, len0, x1.buf, len1);
    end = perf_data_end(&f);   /* the last AUXTRACE's PT bytes end here */
    half = len1 / 2;
    for (zero = 0; zero < 2; zero++) {
        if (zero) tu_put_le64(f.d + 48, 0);   /* as perf record leaves it until it finishes */
        /* the whole data section, no features */
        assert_int_equal(frames_perf_open_memory(&pd, f.d, end, NULL, &err), FRAMES_OK);
        in = frames_perf_info_get(pd);
        assert_int_equal(in->unterminated, zero);
        assert_int_equal(in->cut_offset, 0);
        assert_string_equal(in->cpuid, "");
        assert_int_equal(frames_perf_nstreams(pd), 2);
        assert_int_equal(frames_perf_stream_at(pd, 1)->size, len1);
        expect_perf_stream(pd, 0, "AB", tids0);
        expect_perf_stream(pd, 1, "B", tids1);
        frames_perf_close(pd);
        /* cut inside the last PT payload: cpu 1 keeps the bytes before the cut */
        assert_int_equal(frames_perf_open_memory(&pd, f.d, end - half, NULL, &err), FRAMES_OK);
        in = frames_perf_info_get(pd);
        assert_int_equal(in->unterminated, zero);
        assert_int_equal(in->cut_offset, end - len1 - 48);
        assert_int_equal(in->cut_missing, half);
        assert_int_equal(frames_perf_nstreams(pd), 2);
        assert_int_equal(frames_perf_stream_at(pd, 1)->size, len1 - half);
        expect_perf_stream(pd, 0, "AB", tids0);
        frames_perf_close(pd);
        /* cut inside the last AUXTRACE record's header: cpu 1 has nothing */
        assert_int_equal(frames_perf_open_memory(&pd, f.d, end - len1 - 20, NULL, &err), FRAMES_OK);
        in = frames_perf_info_get(pd);
        assert_int_equal(in->cut_offset, end - len1 - 48);
        assert_int_equal(in->cut_missing, 20);
        assert_int_equal(frames_perf_nstreams(pd), 1);
        expect_perf_stream(pd, 0, "AB", tids0);
        frames_perf_close(pd);
    }
    /* pipe mode: a stream that stops 5 bytes into a record header */
    p = perf_file(dir, 1, x0.buf, len0, x1.buf, len1);
    assert_int_equal(frames_perf_open_memory(&pd, p.d, p.len - len1 - 43, NULL, &err), FRAMES_OK);
    in = frames_perf_info_get(pd);
    assert_int_equal(in->cut_offset, p.len - len1 - 48);
    assert_int_equal(in->cut_missing, 3);   /* what its 8-byte header lacks */
    assert_int_equal(frames_perf_nstreams(pd), 1);
    expect_perf_stream(pd, 0, "AB", tids0);
    frames_perf_close(pd);
    free(p.d);
    free(f.d);
    remove_code_dir(dir);
}

/* Damaged perf.data files and sideband: errors or partial results, never a crash, an
   out-of-bounds read or an allocation beyond the file (run under ASan+UBSan too). */
static void perf_data_damaged(void **state) {
    const char *dir = code_dir();
    enc x0, x1;
    size_t len0, len1;
    perfbuf f;
    uint8_t *copy;
    uint64_t rng = 12345;
    int i, opened = 0, decoded_ok = 0;
    (void)state;
    perf_traces(&x0, &len0, &x1, &len1);
    f = perf_file(dir, 0, x0.buf, len0, x1.buf, len1);
    copy = (uint8_t *)malloc(f.len);
    for (i = 0; i < 3000; i++) {
        frames_perf *pd;
        frames_error err;
        size_t cut = f.len, j, n = 1 + (size_t)(i % 4);
        memcpy(copy, f.d, f.len);
        for (j = 0; j < n; j++) {
            rng = rng * 6364136223846793005ull + 1442695040888963407ull;
            copy[(rng >> 33) % f.len] ^= (uint8_t)(1u << ((rng >> 20) & 7));
        }
        if (i % 7 == 0) cut = (size_t)((rng >> 40) % f.len);   /* truncated too */
        if (frames_perf_open_memory(&pd, copy, cut, NULL, &err) == FRAMES_OK) {
            size_t k;
            opened++;
            for (k = 0; k < frames_perf_nstreams(pd); k++) {
                frames_pt *pt;
                frames_pt_options o;
                frames_pt_options_default(&o);
                frames_perf_pt_options(pd, &o);
                assert_int_equal(frames_pt_open(&pt, &o, &err), FRAMES_OK);
                if (frames_perf_attach(pd, k, pt, NULL, &err) == FRAMES_OK &&
                    frames_pt_decode(pt, NULL, NULL, &err) == FRAMES_OK)
                    decoded_ok++;
                frames_pt_close(pt);
            }
            frames_perf_close(pd);
        } else {
            assert_true(err.message[0] != 0);
        }
    }
    printf("damaged perf.data: %d of 3000 opened, %d streams decoded\n", opened, decoded_ok);
    assert_true(opened > 0);
    free(copy);
    free(f.d);
    remove_code_dir(dir);
}

/* --------------------------------------------------------------------------------------
   The command
   -------------------------------------------------------------------------------------- */

static void tool_perf_data(void **state) {
    const char *dir = code_dir();
    enc x0, x1;
    size_t len0, len1, end;
    perfbuf f;
    const char *path, *out = tu_tmp_path(".frames");
    char *txt;
    int status;
    frames_membuf m;
    decoded d;
    static const uint32_t tids[] = {1, 2, 2};
    (void)state;
    perf_traces(&x0, &len0, &x1, &len1);
    f = perf_file(dir, 0, x0.buf, len0, x1.buf, len1);
    path = temp_file(f.d, f.len, ".data");
    txt = tu_run(&status, "'%s' pt --perf '%s' -o '%s' --print --sb:compact --sb:switch 2>/dev/null",
                 tu_frames_bin(), path, out);
    assert_int_equal(status, 0);
    assert_non_null(strstr(txt, "[context: pid-1]"));
    assert_non_null(strstr(txt, "[context: pid-2]"));
    assert_non_null(strstr(txt, "PERF_RECORD_SWITCH_CPU_WIDE.OUT  2/2  { 1/1 3f2 cpu-0 c8 }"));
    free(txt);
    memset(&d, 0, sizeof d);
    m.data = tu_read_file(out, &m.size);
    assert_non_null(m.data);
    read_frames(&m, &d);
    expect_segments(&d, "ABB", tids);   /* both streams, one after the other */
    decoded_free(&d);
    free(m.data);
    txt = tu_run(&status, "'%s' pt --perf '%s' --perf-stream 1 -o '%s' -f --json 2>/dev/null",
                 tu_frames_bin(), path, out);
    assert_int_equal(status, 0);
    assert_non_null(strstr(txt, "\"streams\":1,"));
    assert_non_null(strstr(txt, "\"std_frames\":2,"));
    free(txt);
    remove(path);
    /* perf record killed: data size 0, the file ends inside cpu 1's PT bytes */
    end = perf_data_end(&f);
    tu_put_le64(f.d + 48, 0);
    path = temp_file(f.d, end - 2, ".data");
    txt = tu_run(&status, "'%s' pt --perf '%s' --perf-stream 0 -o '%s' -f 2>&1", tu_frames_bin(), path, out);
    assert_int_equal(status, 0);
    assert_non_null(strstr(txt, "perf record did not finish"));
    assert_non_null(strstr(txt, "(2 bytes missing)"));
    free(txt);
    m.data = tu_read_file(out, &m.size);
    assert_non_null(m.data);
    memset(&d, 0, sizeof d);
    read_frames(&m, &d);
    expect_segments(&d, "AB", tids);
    decoded_free(&d);
    free(m.data);
    remove(out);
    remove(path);
    free(f.d);
    remove_code_dir(dir);
}

static void tool_usage(void **state) {
    int status;
    char *out;
    (void)state;
    out = tu_run(&status, "'%s' pt --help", tu_frames_bin());
    assert_int_equal(status, 0);
    assert_non_null(strstr(out, "--pevent:primary"));
    free(out);
    free(tu_run(&status, "'%s' pt -o /dev/null 2>/dev/null", tu_frames_bin()));
    assert_int_equal(status, 2);   /* no pt file */
    free(tu_run(&status, "'%s' pt --pt x.pt 2>/dev/null", tu_frames_bin()));
    assert_int_equal(status, 2);   /* no output */
    free(tu_run(&status, "'%s' pt -o /dev/null --pt x --bogus 2>/dev/null", tu_frames_bin()));
    assert_int_equal(status, 2);
    free(tu_run(&status, "'%s' pt -o /dev/null --pt x --cpu 6/x 2>/dev/null", tu_frames_bin()));
    assert_int_equal(status, 2);
    free(tu_run(&status, "'%s' pt -o /dev/null --pt x --raw file.bin 2>/dev/null", tu_frames_bin()));
    assert_int_equal(status, 2);   /* --raw needs :ADDR */
    free(tu_run(&status, "'%s' pt -o /dev/null --pt /nonexistent.pt 2>/dev/null", tu_frames_bin()));
    assert_int_equal(status, 1);
    free(tu_run(&status, "'%s' pt -o /dev/null --perf /nonexistent.data 2>/dev/null", tu_frames_bin()));
    assert_int_equal(status, 1);
}

/* A ptxed range argument (FILE:FROM-TO) and the summary on stderr. */
static void tool_ranges_and_summary(void **state) {
    static const uint8_t code[] = {0xcc, 0xcc, 0x90, 0x90, 0x90, 0xcc};   /* 90s at file offset 2 */
    enc x;
    size_t len;
    const char *cpath, *tpath;
    char *txt;
    int status;
    uint8_t padded[4096 + 64];
    (void)state;
    enc_psb_at(&x, 0x1000, 0);
    enc_pkt(&x, ppt_fup, pt_ipc_update_16, 0x1003);
    enc_pkt(&x, ppt_tip_pgd, pt_ipc_suppressed, 0);
    len = enc_done(&x);
    memset(padded, 0xff, sizeof padded);   /* the trace sits at offset 7 of the file */
    memcpy(padded + 7, x.buf, len);
    cpath = temp_file(code, sizeof code, ".bin");
    tpath = temp_file(padded, 7 + len + 5, ".pt");
    txt = tu_run(&status, "'%s' pt --print -o /dev/null --raw '%s:2-5:0x1000' --pt '%s:7-%zu' 2>&1",
                 tu_frames_bin(), cpath, tpath, 7 + len);
    assert_int_equal(status, 0);
    assert_non_null(strstr(txt, "0000000000001000\n0000000000001001\n0000000000001002\n[disabled]\n"));
    assert_non_null(strstr(txt, "frames pt: 3 instructions -> 3 std, 0 exception, 1 modload frames"));
    assert_non_null(strstr(txt, "events without a frame: async_disabled 1"));
    free(txt);
    remove(cpath);
    remove(tpath);
}

/* --------------------------------------------------------------------------------------
   The two decoders agree. The block path (libipt's block decoder, our own rebuilding of
   each block's instructions, its run cache, how it ends blocks, the errata flags it
   sets) must write what the instruction-flow decoder writes: the same std_frames
   (address, bytes, thread), exception and modload frames, and the same events, errors and
   ends of trace at the same places, on every input the tests have.
   -------------------------------------------------------------------------------------- */

/* What one decode reported, besides its frames: one line per event, error, end. */
typedef struct flow {
    decoded d;
    char *log;
    size_t len, cap;
} flow;

static void flow_printf(flow *f, const char *fmt, ...) {
    va_list ap;
    int n;
    if (f->cap - f->len < 256) {
        f->cap = f->cap * 2 + 4096;
        f->log = (char *)realloc(f->log, f->cap);
        assert_non_null(f->log);
    }
    va_start(ap, fmt);
    n = vsnprintf(f->log + f->len, f->cap - f->len, fmt, ap);
    va_end(ap);
    assert_true(n >= 0 && (size_t)n < f->cap - f->len);
    f->len += (size_t)n;
}

#define FLOW_X(v) ((unsigned long long)(v))

/* Where in the flow: instructions decoded so far (the statistics are live). */
static void flow_at(flow *f) { flow_printf(f, "@%llu ", FLOW_X(f->d.st.insns)); }

static void flow_event_variant(flow *f, const struct pt_event *ev) {
    int ip = !ev->ip_suppressed;
    switch (ev->type) {
    case ptev_enabled:
        flow_printf(f, " ip %llx resumed %d", FLOW_X(ev->variant.enabled.ip), ev->variant.enabled.resumed);
        break;
    case ptev_disabled:
        if (ip) flow_printf(f, " ip %llx", FLOW_X(ev->variant.disabled.ip));
        break;
    case ptev_async_disabled:
        flow_printf(f, " at %llx", FLOW_X(ev->variant.async_disabled.at));
        if (ip) flow_printf(f, " ip %llx", FLOW_X(ev->variant.async_disabled.ip));
        break;
    case ptev_async_branch:
        flow_printf(f, " from %llx", FLOW_X(ev->variant.async_branch.from));
        if (ip) flow_printf(f, " to %llx", FLOW_X(ev->variant.async_branch.to));
        break;
    case ptev_paging:
        flow_printf(f, " cr3 %llx nr %d", FLOW_X(ev->variant.paging.cr3), ev->variant.paging.non_root);
        break;
    case ptev_async_paging:
        flow_printf(f, " cr3 %llx nr %d", FLOW_X(ev->variant.async_paging.cr3),
                    ev->variant.async_paging.non_root);
        if (ip) flow_printf(f, " ip %llx", FLOW_X(ev->variant.async_paging.ip));
        break;
    case ptev_overflow:
        if (ip) flow_printf(f, " ip %llx", FLOW_X(ev->variant.overflow.ip));
        break;
    case ptev_exec_mode:
        flow_printf(f, " mode %d", (int)ev->variant.exec_mode.mode);
        if (ip) flow_printf(f, " ip %llx", FLOW_X(ev->variant.exec_mode.ip));
        break;
    case ptev_tsx:
        flow_printf(f, " spec %d aborted %d", ev->variant.tsx.speculative, ev->variant.tsx.aborted);
        if (ip) flow_printf(f, " ip %llx", FLOW_X(ev->variant.tsx.ip));
        break;
    case ptev_vmcs:
        flow_printf(f, " base %llx", FLOW_X(ev->variant.vmcs.base));
        break;
    case ptev_async_vmcs:
        flow_printf(f, " base %llx", FLOW_X(ev->variant.async_vmcs.base));
        if (ip) flow_printf(f, " ip %llx", FLOW_X(ev->variant.async_vmcs.ip));
        break;
    case ptev_exstop:
        if (ip) flow_printf(f, " ip %llx", FLOW_X(ev->variant.exstop.ip));
        break;
    case ptev_mwait:
        flow_printf(f, " hints %x ext %x", ev->variant.mwait.hints, ev->variant.mwait.ext);
        if (ip) flow_printf(f, " ip %llx", FLOW_X(ev->variant.mwait.ip));
        break;
    case ptev_pwre:
        flow_printf(f, " %u/%u hw %d", ev->variant.pwre.state, ev->variant.pwre.sub_state,
                    ev->variant.pwre.hw);
        break;
    case ptev_pwrx:
        flow_printf(f, " %u/%u %d%d%d", ev->variant.pwrx.last, ev->variant.pwrx.deepest,
                    ev->variant.pwrx.interrupt, ev->variant.pwrx.store, ev->variant.pwrx.autonomous);
        break;
    case ptev_ptwrite:
        flow_printf(f, " size %u payload %llx", ev->variant.ptwrite.size,
                    FLOW_X(ev->variant.ptwrite.payload));
        if (ip) flow_printf(f, " ip %llx", FLOW_X(ev->variant.ptwrite.ip));
        break;
    case ptev_tick:   /* its ip is "near which" the tick was: libipt's two decoders differ */
        break;
    case ptev_cbr:
        flow_printf(f, " ratio %u", ev->variant.cbr.ratio);
        break;
    case ptev_mnt:
        flow_printf(f, " payload %llx", FLOW_X(ev->variant.mnt.payload));
        break;
    default:
        break;
    }
}

static int flow_event(void *ctx, const struct pt_event *ev, uint64_t offset) {
    flow *f = (flow *)ctx;
    flow_at(f);
    flow_printf(f, "event %d%s%s", (int)ev->type, ev->ip_suppressed ? " noip" : "",
                ev->status_update ? " status" : "");
    if (ev->has_tsc) flow_printf(f, " tsc %llx", FLOW_X(ev->tsc));
    flow_event_variant(f, ev);
    flow_printf(f, " (trace %llx)\n", FLOW_X(offset));
    return 0;
}

static int flow_error(void *ctx, const char *kind, uint64_t offset, uint64_t ip, int code) {
    flow *f = (flow *)ctx;
    flow_at(f);
    flow_printf(f, "%s at trace %llx ip %llx: %s\n", kind, FLOW_X(offset), FLOW_X(ip),
                pt_errstr(pt_errcode(code)));
    return 0;
}

static int flow_end(void *ctx) {
    flow *f = (flow *)ctx;
    flow_at(f);
    flow_printf(f, "end of trace\n");
    return 0;
}

/* Decode a prepared session (closed here) and log what it reports. */
static void flow_decode(frames_pt *pt, flow *f) {
    frames_pt_callbacks cb;
    memset(f, 0, sizeof *f);
    memset(&cb, 0, sizeof cb);
    cb.ctx = f;
    cb.event = flow_event;
    cb.error = flow_error;
    cb.end_of_trace = flow_end;
    frames_pt_set_callbacks(pt, &cb);
    flow_printf(f, "%s", "");
    decode_into(pt, &f->d);
    frames_pt_close(pt);
}

static void flow_free(flow *f) {
    decoded_free(&f->d);
    free(f->log);
}

static void exceptions_agree(const char *what, const decoded *b, const decoded *i) {
    size_t k;
    if (b->nexc != i->nexc) fail_msg("%s: %zu exception frames (block), %zu (insn)", what, b->nexc, i->nexc);
    for (k = 0; k < b->nexc; k++) {
        const frames_exception_frame *x = &b->exc[k], *y = &i->exc[k];
        if (b->exc_pos[k] != i->exc_pos[k] || x->number != y->number ||
            x->has_from_addr != y->has_from_addr || x->from_addr != y->from_addr ||
            x->has_to_addr != y->has_to_addr || x->to_addr != y->to_addr ||
            x->has_thread_id != y->has_thread_id || x->thread_id != y->thread_id)
            fail_msg("%s: exception frame %zu differs (block %x after %zu frames, insn %x after %zu)",
                     what, k, (unsigned)x->number, b->exc_pos[k], (unsigned)y->number, i->exc_pos[k]);
    }
}

/* The block path's decode b and the instruction-flow decoder's i agree. */
static void flows_agree(const char *what, const flow *b, const flow *i) {
    size_t k;
    if (b->d.rc != i->d.rc) fail_msg("%s: decode returned %d (block), %d (insn)", what, b->d.rc, i->d.rc);
    for (k = 0; k < b->d.n && k < i->d.n; k++)
        if (b->d.ip[k] != i->d.ip[k] || b->d.tid[k] != i->d.tid[k] || b->d.rawlen[k] != i->d.rawlen[k] ||
            memcmp(b->d.raw[k], i->d.raw[k], b->d.rawlen[k]) != 0)
            fail_msg("%s: std frame %zu: block %llx (%u bytes, tid %llu), insn %llx (%u bytes, tid %llu)",
                     what, k, FLOW_X(b->d.ip[k]), b->d.rawlen[k], FLOW_X(b->d.tid[k]),
                     FLOW_X(i->d.ip[k]), i->d.rawlen[k], FLOW_X(i->d.tid[k]));
    if (b->d.n != i->d.n)
        fail_msg("%s: %zu std frames (block), %zu (insn); first %zu agree", what, b->d.n, i->d.n, k);
    exceptions_agree(what, &b->d, &i->d);
    if (b->d.nmod != i->d.nmod) fail_msg("%s: modload frames differ", what);
    for (k = 0; k < b->d.nmod; k++)
        if (strcmp(b->d.modules[k], i->d.modules[k]) || b->d.mod_low[k] != i->d.mod_low[k] ||
            b->d.mod_high[k] != i->d.mod_high[k])
            fail_msg("%s: modload frame %zu differs", what, k);
    if (strcmp(b->log, i->log) != 0)
        fail_msg("%s: events differ\n--- block path\n%.3000s\n--- insn path\n%.3000s", what, b->log, i->log);
    assert_int_equal(b->d.st.insns, i->d.st.insns);
    assert_int_equal(b->d.st.speculative, i->d.st.speculative);
    assert_int_equal(b->d.st.speculative_unwritten, i->d.st.speculative_unwritten);
    assert_int_equal(b->d.st.reconstruct_errors, 0);
}

/* Every case of the reference vectors, every cpu it lists, every speculative policy. */
static void decoders_agree_vectors(void **state) {
    static const int specs[] = {FRAMES_PT_SPEC_SKIP, FRAMES_PT_SPEC_COMMIT, FRAMES_PT_SPEC_ALL};
    case_list l;
    int i, j, p, compared = 0;
    (void)state;
    list_cases(&l);
    assert_int_equal(l.n, 83);
    for (i = 0; i < l.n; i++) {
        pt_case c;
        char dir[1200], what[400];
        snprintf(dir, sizeof dir, "%s/%s", tu_shared("vectors/pt"), l.names[i]);
        assert_int_equal(read_case(dir, l.names[i], &c), 0);
        for (j = 0; j < (c.ncpus ? c.ncpus : 1); j++) {
            const char *cpu = c.ncpus ? c.cpus[j] : "";
            for (p = 0; p < 3; p++) {
                flow b, n;
                flow_decode(open_case(&c, cpu, FRAMES_PT_DECODER_BLOCK, specs[p]), &b);
                flow_decode(open_case(&c, cpu, FRAMES_PT_DECODER_INSN, specs[p]), &n);
                snprintf(what, sizeof what, "%s cpu %s speculative %d", c.name, *cpu ? cpu : "-", specs[p]);
                flows_agree(what, &b, &n);
                compared++;
                flow_free(&b);
                flow_free(&n);
            }
        }
    }
    printf("decoders agree on %d vector decodes (cases x cpus x speculative policies)\n", compared);
}

/* A session over a synthesised stream: code at base, optional cpu and address filter. */
static frames_pt *open_stream(int decoder, const uint8_t *trace, size_t len, const char *cpath,
                              uint64_t base, const char *cpu, uint64_t lo, uint64_t hi) {
    frames_pt_options o;
    frames_pt *pt;
    frames_error err;
    frames_pt_options_default(&o);
    o.decoder = decoder;
    o.default_tid = 3;
    if (cpu && *cpu) assert_int_equal(frames_pt_parse_cpu(cpu, &o.cpu), 0);
    if (hi) {
        o.addr_filter.config.ctl.addr0_cfg = 1;   /* FilterEn: trace only inside [lo, hi] */
        o.addr_filter.addr0_a = lo;
        o.addr_filter.addr0_b = hi;
    }
    assert_int_equal(frames_pt_open(&pt, &o, &err), FRAMES_OK);
    assert_int_equal(frames_pt_add_raw(pt, cpath, 0, 0, base, &err), FRAMES_OK);
    assert_int_equal(frames_pt_set_trace(pt, trace, len, &err), FRAMES_OK);
    return pt;
}

/* Both decoders on one stream; returns the block path's flow (the caller frees it). */
static void stream_agree(const char *what, const uint8_t *trace, size_t len, const char *cpath,
                         uint64_t base, const char *cpu, uint64_t lo, uint64_t hi, flow *b) {
    flow n;
    flow_decode(open_stream(FRAMES_PT_DECODER_BLOCK, trace, len, cpath, base, cpu, lo, hi), b);
    flow_decode(open_stream(FRAMES_PT_DECODER_INSN, trace, len, cpath, base, cpu, lo, hi), &n);
    flows_agree(what, b, &n);
    flow_free(&n);
}

static void decoders_agree_on(const char *what, const uint8_t *trace, size_t len,
                              const char *cpath, uint64_t base) {
    flow b;
    stream_agree(what, trace, len, cpath, base, "", 0, 0, &b);
    flow_free(&b);
}

/* cpus of the errata libipt 2.0.5 knows, and none: BDM70/BDM64 (6/61), SKD007/SKD010/
   SKD022/SKL014 (6/78), APL11/APL12 (6/92), SKZ84 (6/85), SKL168 (6/142). */
static const char *const errata_cpus[] = {"", "6/61", "6/78", "6/92", "6/85", "6/142"};
/* Only cpus with SKL014 write a TIP.PGD without IP after a direct branch (elsewhere even
   libipt's two decoders disagree on such a stream: only the block decoder reports the
   disable). */
static const char *const skl014_cpus[] = {"6/78", "6/85", "6/142", "6/158", "6/165"};
#define NCPUS(a) (sizeof(a) / sizeof((a)[0]))

/* Walks over ptsynth's code: the streams of the other tests (PSBs, TSCs), pauses of
   tracing in the forms errata cpus produce, and address filters left by a direct call
   (TIP.PGD without IP: SKL014) or an indirect one; every cpu of errata_cpus. Where
   the stream is what the cpu would write, the frames are also the walked addresses. */
static void decoders_agree_synthesised(void **state) {
    static const struct {
        uint32_t seed;
        uint64_t n, psb_every, tsc_every, pause_every;
        int pause_kind;
        uint64_t filter_hi;   /* offset in the code; 0: no filter */
        int skl014;
    } runs[] = {
        {1, 20000, 0, 0, 0, 0, 0, 0},
        {2, 20000, 64, 0, 0, 0, 0, 0},
        {3, 30000, 512, 97, 0, 0, 0, 0},
        {4, 3, 0, 0, 0, 0, 0, 0},
        {6, 20000, 0, 0, 37, PTSYNTH_PAUSE_PLAIN, 0, 0},
        {7, 20000, 1024, 50, 41, PTSYNTH_PAUSE_PSB, 0, 0},
        {8, 20000, 256, 0, 29, PTSYNTH_PAUSE_OVF_FUP, 0, 0},
        {9, 20000, 256, 0, 31, PTSYNTH_PAUSE_OVF_PGD, 0, 0},
        {10, 20000, 0, 0, 0, 0, PTSYNTH_FA - 1, 1},   /* call fa (direct) leaves */
        {11, 20000, 0, 0, 0, 0, PTSYNTH_FC - 1, 1},   /* call fc: direct or indirect */
        {12, 20000, 0, 0, 0, 0, PTSYNTH_FC - 1, 0},   /* the same with the target ip */
        {13, 20000, 64, 0, 23, PTSYNTH_PAUSE_PLAIN, PTSYNTH_FC - 1, 1},
    };
    const uint64_t base = 0x7f0000001000ull;
    const char *cpath = temp_file(ptsynth_code, sizeof ptsynth_code, ".bin");
    size_t r, c;
    int compared = 0, left_filter = 0, paused = 0;
    (void)state;
    for (r = 0; r < sizeof runs / sizeof runs[0]; r++) {
        ptsynth s;
        uint64_t calls[3], jumps[3], lo = 0, hi = 0;
        ptsynth_init_default(&s, base, runs[r].seed, calls, jumps);
        s.psb_every = runs[r].psb_every;
        s.tsc_every = runs[r].tsc_every;
        s.pause_every = runs[r].pause_every;
        s.pause_kind = runs[r].pause_kind;
        if (runs[r].filter_hi) {
            s.filter_lo = lo = base;
            s.filter_hi = hi = base + runs[r].filter_hi;
            s.filter_skl014 = runs[r].skl014;
        }
        s.want_ips = 1;
        assert_int_equal(ptsynth_walk(&s, s.base, runs[r].n), 0);
        left_filter += hi && s.nips < runs[r].n;
        for (c = 0; c < (runs[r].skl014 ? NCPUS(skl014_cpus) : NCPUS(errata_cpus)); c++) {
            const char *cpu = runs[r].skl014 ? skl014_cpus[c] : errata_cpus[c];
            char what[200];
            flow b;
            uint64_t k;
            snprintf(what, sizeof what, "seed %u cpu %s", runs[r].seed, *cpu ? cpu : "-");
            stream_agree(what, s.trace, s.len, cpath, base, cpu, lo, hi, &b);
            compared++;
            paused += b.d.st.events[ptev_enabled] > 0;
            /* the walked addresses, where the stream is what any cpu writes (the pauses
               of errata cpus lose or add instructions) */
            if (!s.pause_every || s.pause_kind == PTSYNTH_PAUSE_PLAIN) {
                if (b.d.n != s.nips)
                    fail_msg("%s: %zu frames, walked %llu", what, b.d.n, FLOW_X(s.nips));
                for (k = 0; k < s.nips; k++) {
                    if (b.d.ip[k] != s.ips[k])
                        fail_msg("%s: frame %llu at %llx, walked %llx", what, FLOW_X(k),
                                 FLOW_X(b.d.ip[k]), FLOW_X(s.ips[k]));
                    assert_memory_equal(b.d.raw[k], ptsynth_code + (s.ips[k] - base), b.d.rawlen[k]);
                }
            }
            flow_free(&b);
        }
        ptsynth_free(&s);
    }
    assert_true(left_filter >= 3);   /* the filter runs did leave the filter */
    assert_true(paused >= 20);       /* and most pause runs enabled tracing again */
    printf("decoders agree on %d synthesised streams\n", compared);
    remove(cpath);
}

/* SKL014 after direct branches that stay inside the filter: the TIP.PGD without IP binds
   to the first direct jump or call that leaves it (upstream skl014-jmp-jmp prints l0, l2;
   the others follow the same rule). Filter 0x1000..0x10ff; 0x1100 is outside. */
static void decoders_agree_skl014(void **state) {
    static const struct {
        const char *name;
        uint8_t code[16];
        size_t len;
        uint64_t want[4];
        size_t nwant;
    } cases[] = {
        /* 1000: jmp 1003; 1002: hlt; 1003: jmp 1100 */
        {"jmp-jmp", {0xeb, 0x01, 0xf4, 0xe9, 0xf8, 0x00, 0x00, 0x00, 0xf4}, 9, {0x1000, 0x1003}, 2},
        /* 1000: call 1006; 1005: hlt; 1006: jmp 1100 */
        {"call-jmp", {0xe8, 0x01, 0x00, 0x00, 0x00, 0xf4, 0xe9, 0xf5, 0x00, 0x00, 0x00, 0xf4}, 12,
         {0x1000, 0x1006}, 2},
        /* 1000: jmp 1003; 1002: hlt; 1003: call 1100 */
        {"jmp-call", {0xeb, 0x01, 0xf4, 0xe8, 0xf8, 0x00, 0x00, 0x00, 0xf4}, 9, {0x1000, 0x1003}, 2},
        /* 1000: jmp 1006; 1002: jmp 1100; 1007: hlt; 1006: jmp 1002 (backwards) */
        {"jmp-jmp_back-jmp", {0xeb, 0x04, 0xe9, 0xf9, 0x00, 0x00, 0xeb, 0xfa, 0xf4}, 9,
         {0x1000, 0x1006, 0x1002}, 3},
        /* 1000: nop; 1001: call 1100 (the erratum right away, as the shared skl014-call) */
        {"nop-call", {0x90, 0xe8, 0xfa, 0x00, 0x00, 0x00, 0xf4}, 7, {0x1000, 0x1001}, 2},
    };
    uint8_t image[0x101];
    size_t i, j, k;
    int pass;
    (void)state;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        enc x;
        size_t len;
        const char *cpath;
        memset(image, 0xf4, sizeof image);   /* hlt everywhere else, 0x1100 included */
        memcpy(image, cases[i].code, cases[i].len);
        cpath = temp_file(image, sizeof image, ".bin");
        enc_init(&x);
        enc_pkt(&x, ppt_psb, 0, 0);
        enc_pkt(&x, ppt_mode, 0, 0);
        enc_pkt(&x, ppt_fup, pt_ipc_sext_48, 0x1000);
        enc_pkt(&x, ppt_psbend, 0, 0);
        enc_pkt(&x, ppt_tip_pgd, pt_ipc_suppressed, 0);
        len = enc_done(&x);
        /* SKL014 cpus: the walked addresses; the others (the disable binds elsewhere
           without the erratum): the decoders agree here too */
        for (pass = 0; pass < 2; pass++) {
            size_t ncpu = pass ? NCPUS(errata_cpus) : NCPUS(skl014_cpus);
            for (j = 0; j < ncpu; j++) {
                const char *cpu = pass ? errata_cpus[j] : skl014_cpus[j];
                char what[200];
                flow b;
                snprintf(what, sizeof what, "skl014 %s cpu %s", cases[i].name, *cpu ? cpu : "-");
                stream_agree(what, x.buf, len, cpath, 0x1000, cpu, 0x1000, 0x10ff, &b);
                if (!pass) {
                    if (b.d.n != cases[i].nwant)
                        fail_msg("%s: %zu frames, want %zu", what, b.d.n, cases[i].nwant);
                    for (k = 0; k < cases[i].nwant; k++) assert_int_equal(b.d.ip[k], cases[i].want[k]);
                    assert_int_equal(b.d.st.events[ptev_disabled], 1);
                    assert_int_equal(b.d.st.gaps, 0);
                }
                flow_free(&b);
            }
        }
        remove(cpath);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(length_decoder_classes),
        cmocka_unit_test(length_decoder_matches_libipt),
        cmocka_unit_test(spec_reference_stream),
        cmocka_unit_test(synthesised_streams),
        cmocka_unit_test(wrong_tnt_is_noticed),
        cmocka_unit_test(interrupt_and_overflow_frames),
        cmocka_unit_test(gap_and_resync),
        cmocka_unit_test(speculative_policies),
        cmocka_unit_test(vectors_library),
        cmocka_unit_test(vectors_tool),
        cmocka_unit_test(vectors_tool_options),
        cmocka_unit_test(decoders_agree_vectors),
        cmocka_unit_test(decoders_agree_synthesised),
        cmocka_unit_test(decoders_agree_skl014),
        cmocka_unit_test(sideband_time_conversion),
        cmocka_unit_test(sideband_record_format),
        cmocka_unit_test(sideband_malformed),
        cmocka_unit_test(sideband_process_model),
        cmocka_unit_test(elf_images),
        cmocka_unit_test(elf32_image),
        cmocka_unit_test(kcore_and_vdso),
        cmocka_unit_test(perf_data_file),
        cmocka_unit_test(perf_data_rejects_garbage),
        cmocka_unit_test(perf_data_unfinished),
        cmocka_unit_test(perf_data_damaged),
        cmocka_unit_test(tool_perf_data),
        cmocka_unit_test(tool_usage),
        cmocka_unit_test(tool_ranges_and_summary),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

#endif /* FRAMES_HAVE_IPT */
