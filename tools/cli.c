/* cli.c - see cli.h */
#include "cli.h"
#include "frames_query.h"
#ifdef FRAMES_HAVE_ZSTD
#include "frames_zstd.h"
#endif

#include <fcntl.h>
#include <sys/mman.h>

#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *current_command = "";

void cli_set_command(const char *name) { current_command = name; }
const char *cli_command(void) { return current_command; }

static void vmsg(const char *kind, const char *fmt, va_list ap) {
    fprintf(stderr, "frames%s%s: %s", *current_command ? " " : "", current_command, kind);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

int cli_fail(int code, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vmsg("", fmt, ap);
    va_end(ap);
    return code;
}

void cli_warn(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vmsg("warning: ", fmt, ap);
    va_end(ap);
}

int cli_lib_error(const frames_error *err) {
    return cli_fail(CLI_DATA, "%s", err && err->message[0] ? err->message : "error");
}

void cli_reader_warnings(frames_reader *r) {
    frames_reader_info st;
    uint32_t i;
    if (frames_reader_info_get(r, &st) < 0) return;
    for (i = 0; i < st.nwarnings; i++) cli_warn("%s", frames_reader_warning(r, i));
}

int cli_usage_error(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vmsg("", fmt, ap);
    va_end(ap);
    fprintf(stderr, "try 'frames %s --help'\n", current_command);
    return CLI_USAGE;
}

int cli_trace_arg(const char *arg, const char **in) {
    if (arg[0] == '-' && arg[1]) return cli_usage_error("unknown option '%s'", arg);
    if (*in) return cli_usage_error("one TRACE only ('%s' is extra)", arg);
    *in = arg;
    return CLI_OK;
}

int cli_wants_help(int argc, char **argv) {
    int i;
    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--")) break;
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) return 1;
    }
    return 0;
}

int cli_parse_u64(const char *s, uint64_t *out) {
    char *end;
    unsigned long long v;
    if (!s || !*s || *s == '-') return -1;
    errno = 0;
    v = strtoull(s, &end, 0);
    if (errno || *end) return -1;
    *out = v;
    return 0;
}

int cli_parse_i64(const char *s, int64_t *out) {
    char *end;
    long long v;
    if (!s || !*s) return -1;
    errno = 0;
    v = strtoll(s, &end, 0);
    if (errno || *end) return -1;
    *out = v;
    return 0;
}

int cli_parse_range(const char *s, uint64_t *lo, uint64_t *hi) {
    char buf[128];
    const char *dash = strchr(s, '-');
    size_t n;
    if (!dash || (n = (size_t)(dash - s)) == 0 || n >= sizeof buf) return -1;
    memcpy(buf, s, n);
    buf[n] = 0;
    if (cli_parse_u64(buf, lo) || cli_parse_u64(dash + 1, hi)) return -1;
    return 0;
}

int cli_parse_toc(const char *name) {
    static const int writable[] = {FRAMES_TOC_LIBTRACE, FRAMES_TOC_CEIL, FRAMES_TOC_TRACEWRAP,
                                   FRAMES_TOC_CEIL_ZERO};
    size_t i;
    for (i = 0; i < sizeof writable / sizeof writable[0]; i++)
        if (!strcmp(name, frames_toc_name(writable[i]))) return writable[i];
    return -1;
}

static const char *option_value(int argc, char **argv, int *i) {
    if (*i + 1 >= argc) return NULL;
    return argv[++*i];
}

int cli_writer_option(int argc, char **argv, int *i, frames_writer_options *o, unsigned *given) {
    const char *arg = argv[*i], *v;
    uint64_t n;
    if (!strcmp(arg, "--version")) {
        if (!(v = option_value(argc, argv, i)) || cli_parse_u64(v, &n) || (n != 2 && n != 3))
            return cli_usage_error("--version takes 2 or 3");
        o->version = (uint32_t)n;
        *given |= CLI_GIVEN_VERSION;
        return 1;
    }
    if (!strcmp(arg, "--toc")) {
        int t;
        if (!(v = option_value(argc, argv, i)) || (t = cli_parse_toc(v)) < 0)
            return cli_usage_error("--toc takes libtrace, ceil, tracewrap or ceil-zero");
        o->toc = t;
        *given |= CLI_GIVEN_TOC;
        return 1;
    }
    {
        int z = cli_zstd_option(arg);
        if (z) return z;
    }
    if (!strcmp(arg, "--frames-per-toc")) {
        if (!(v = option_value(argc, argv, i)) || cli_parse_u64(v, &n) || n == 0)
            return cli_usage_error("--frames-per-toc takes a number of frames >= 1");
        o->frames_per_toc = n;
        *given |= CLI_GIVEN_M;
        return 1;
    }
    return 0;
}

void cli_apply_writer_options(frames_writer_options *o, const frames_writer_options *cmdline,
                              unsigned given) {
    if (given & CLI_GIVEN_VERSION) o->version = cmdline->version;
    if (given & CLI_GIVEN_TOC) o->toc = cmdline->toc;
    if (given & CLI_GIVEN_M) o->frames_per_toc = cmdline->frames_per_toc;
}

static int zstd_asked = 0, zstd_level = 0, zstd_preferred = 0;

void cli_zstd_prefer_level(int level) { zstd_preferred = level; }

int cli_zstd_option(const char *arg) {
    uint64_t n;
    if (strcmp(arg, "--zstd") && strncmp(arg, "--zstd=", 7)) return 0;
    if (arg[6] == '=') {
        if (cli_parse_u64(arg + 7, &n) || n < 1 || n > 22)
            return cli_usage_error("--zstd=LEVEL takes a level from 1 to 22");
        zstd_level = (int)n;
    }
    zstd_asked = 1;
    return 1;
}

int cli_zstd_level(void) { return zstd_level; }

int cli_output_compressed(const char *path) {
    size_t n = path ? strlen(path) : 0;
    return zstd_asked || (n > 4 && !strcmp(path + n - 4, ".zst"));
}

#ifdef FRAMES_HAVE_ZSTD
static frames_zstd_options zstd_options(uint64_t m) {
    frames_zstd_options z;
    frames_zstd_options_default(&z);
    if (zstd_level) z.level = zstd_level;
    else if (zstd_preferred) z.level = zstd_preferred;
    if (m) z.frames_per_toc = m;
    return z;
}
#endif

#ifndef FRAMES_HAVE_ZSTD
static int no_zstd(void) {
    return cli_fail(CLI_DATA, "zstd support was not built into this frames (install libzstd-dev "
                              "and rebuild) - decompress with `zstd -d` first");
}
#endif

frames_writer *cli_open_writer(const char *path, const frames_writer_options *o,
                               const frames_meta *meta) {
    frames_writer *w = NULL;
    frames_error err;
    int rc;
    if (cli_output_compressed(path)) {
#ifdef FRAMES_HAVE_ZSTD
        frames_zstd_options z = zstd_options(o ? o->frames_per_toc : 0);
        rc = frames_zstd_writer_open_path(&w, path, o, &z, meta, &err);
#else
        no_zstd();
        return NULL;
#endif
    } else {
        rc = frames_writer_open_path(&w, path, o, meta, &err);
    }
    if (rc < 0) {
        cli_lib_error(&err);
        return NULL;
    }
    return w;
}

int cli_output_sink(int fd, const char *path, uint64_t frames_per_toc, frames_sink *sink,
                    void **zs) {
    *sink = frames_sink_fd(fd);
    *zs = NULL;
    if (!cli_output_compressed(path)) return CLI_OK;
#ifdef FRAMES_HAVE_ZSTD
    {
        frames_zstd_options z = zstd_options(frames_per_toc);
        frames_zstd_sink *s;
        frames_error err;
        if (frames_zstd_sink_open(&s, sink, &z, &err) < 0) return cli_lib_error(&err);
        *sink = frames_zstd_sink_get(s);
        *zs = s;
        return CLI_OK;
    }
#else
    (void)frames_per_toc;
    return no_zstd();
#endif
}

int cli_close_sink(void *zs, const char *path) {
#ifdef FRAMES_HAVE_ZSTD
    frames_error err;
    if (zs && frames_zstd_sink_close((frames_zstd_sink *)zs, &err) < 0) {
        cli_lib_error(&err);
        return cli_fail(CLI_DATA, "%s: cannot finish the compressed output", path);
    }
#else
    (void)zs;
    (void)path;
#endif
    return CLI_OK;
}

int cli_reader_compressed(frames_reader *r) {
#ifdef FRAMES_HAVE_ZSTD
    return frames_zstd_reader_map(r) != NULL;
#else
    (void)r;
    return 0;
#endif
}

void cli_print_compression(FILE *out, frames_reader *r, int json) {
#ifdef FRAMES_HAVE_ZSTD
    const frames_zstd_map *m = frames_zstd_reader_map(r);
    const frames_zstd_info *in;
    double ratio;
    if (!m) return;
    in = frames_zstd_map_info_get(m);
    ratio = in->compressed_size ? (double)in->size / (double)in->compressed_size : 0;
    if (json) {
        fprintf(out, ",\"compression\":{\"format\":\"zstd\",\"chunks\":%llu,\"compressed_size\":%llu,"
                "\"size\":%llu,\"ratio\":%.2f,\"largest_chunk\":%llu,\"seek_table\":%s,"
                "\"seek_table_used\":%s,\"cut\":%s}",
                (unsigned long long)in->chunks, (unsigned long long)in->compressed_size,
                (unsigned long long)in->size, ratio, (unsigned long long)in->largest_chunk,
                in->seek_table ? "true" : "false", in->seek_table_used ? "true" : "false",
                in->cut ? "true" : "false");
        return;
    }
    fprintf(out, "compression: zstd, %llu chunks (largest %llu bytes), %llu bytes for %llu (%.1fx), "
            "seek table %s\n", (unsigned long long)in->chunks, (unsigned long long)in->largest_chunk,
            (unsigned long long)in->compressed_size, (unsigned long long)in->size, ratio,
            !in->seek_table ? "absent (frames walked)"
                            : in->seek_table_used ? "present" : "present but ignored (frames walked)");
    if (in->cut) fprintf(out, "compression: the file ends inside the zstd frame at 0x%llx\n",
                         (unsigned long long)in->cut_offset);
#else
    (void)out;
    (void)r;
    (void)json;
#endif
}

/* The mapping of a trace held in a temporary file (decompressed, or copied from a pipe),
   kept until its query trace is closed. */
static struct inflated {
    fq_trace *t;
    void *map;
    size_t len;
} inflated[4];

#ifdef FRAMES_HAVE_ZSTD
static int query_io_error(frames_error *err, const char *what) {
    err->code = FRAMES_E_IO;
    snprintf(err->message, sizeof err->message, "%s: %s", what, strerror(errno));
    return FRAMES_E_IO;
}

/* An unlinked temporary file, open for reading and writing. */
static int query_tmpfile(frames_error *err) {
    FILE *f = tmpfile();
    int fd = f ? dup(fileno(f)) : -1;
    if (f) fclose(f); /* the dup keeps the unlinked file */
    if (fd < 0) query_io_error(err, "no temporary file for the trace");
    return fd;
}

/* Standard input as a file that can be read twice: itself when it is one, else a copy of
   everything on it (a pipe) in a temporary file. */
static int query_stdin(frames_error *err) {
    struct stat st;
    char buf[65536];
    ssize_t n;
    int fd;
    if (fstat(0, &st) == 0 && S_ISREG(st.st_mode)) return dup(0);
    if ((fd = query_tmpfile(err)) < 0) return -1;
    while ((n = read(0, buf, sizeof buf)) != 0) {
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 || write(fd, buf, (size_t)n) != n) {
            query_io_error(err, n < 0 ? "standard input" : "temporary file");
            close(fd);
            return -1;
        }
    }
    if (lseek(fd, 0, SEEK_SET) != 0) {
        query_io_error(err, "temporary file");
        close(fd);
        return -1;
    }
    return fd;
}

/* Map fd (closed here) and open the query trace on it; the mapping lives until
   cli_close_query_trace. */
static int query_open_mapped(int fd, fq_trace **t, frames_error *err) {
    struct stat st;
    void *map;
    size_t i;
    int rc;
    for (i = 0; i < sizeof inflated / sizeof inflated[0] && inflated[i].t; i++) {}
    if (i == sizeof inflated / sizeof inflated[0] || fstat(fd, &st) != 0) {
        rc = query_io_error(err, i < sizeof inflated / sizeof inflated[0] ? "cannot read the trace's size"
                                                                          : "too many traces open at once");
        close(fd);
        return rc;
    }
    map = st.st_size ? mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0) : NULL;
    close(fd);
    if (map == MAP_FAILED) return query_io_error(err, "cannot map the trace");
    if ((rc = fq_trace_open_memory(t, map, (size_t)st.st_size, NULL, err)) < 0) {
        if (map) munmap(map, (size_t)st.st_size);
        return rc;
    }
    inflated[i].t = *t;
    inflated[i].map = map;
    inflated[i].len = (size_t)st.st_size;
    return FRAMES_OK;
}
#endif

int cli_open_query_trace(const char *path, fq_trace **t, frames_error *err) {
#ifdef FRAMES_HAVE_ZSTD
    unsigned char magic[4];
    int is_stdin = !strcmp(path, "-"), fd, tmp, cut = 0, rc, compressed;
    fd = is_stdin ? query_stdin(err) : open(path, O_RDONLY);
    if (fd < 0) return is_stdin ? FRAMES_E_IO : fq_trace_open_path(t, path, NULL, err);
    compressed = read(fd, magic, 4) == 4 && frames_zstd_is_compressed(magic, 4);
    if (lseek(fd, 0, SEEK_SET) != 0 || !compressed) {
        if (is_stdin) return query_open_mapped(fd, t, err);
        close(fd);
        return fq_trace_open_path(t, path, NULL, err);
    }
    if ((tmp = query_tmpfile(err)) < 0) {
        close(fd);
        return FRAMES_E_IO;
    }
    rc = frames_zstd_decompress_fd(fd, tmp, &cut, err);
    close(fd);
    if (rc == FRAMES_OK && cut) cli_warn("%s ends inside a zstd frame: querying what it holds", path);
    if (rc < 0) {
        close(tmp);
        return rc;
    }
    return query_open_mapped(tmp, t, err);
#else
    return fq_trace_open_path(t, path, NULL, err);
#endif
}

void cli_close_query_trace(fq_trace *t) {
    size_t i;
    fq_trace_close(t);
    for (i = 0; t && i < sizeof inflated / sizeof inflated[0]; i++)
        if (inflated[i].t == t) {
            if (inflated[i].map) munmap(inflated[i].map, inflated[i].len);
            inflated[i].t = NULL;
        }
}

frames_reader *cli_open_reader(const char *path, const frames_reader_options *o) {
    frames_reader *r = NULL;
    frames_error err;
#ifdef FRAMES_HAVE_ZSTD
    frames_zstd_info zi;
    uint32_t i;
    if (frames_zstd_reader_open_path(&r, path, o, NULL, &zi, &err) < 0) {
        cli_lib_error(&err);
        return NULL;
    }
    for (i = 0; i < zi.nwarnings; i++) cli_warn("%s: %s", path, zi.warnings[i]);
#else
    if (frames_reader_open_path(&r, path, o, &err) < 0) {
        FILE *f = strcmp(path, "-") ? fopen(path, "rb") : NULL;
        unsigned char m[4] = {0, 0, 0, 0};
        if (f && fread(m, 1, 4, f) == 4 && ((m[0] == 0x28 && m[1] == 0xB5 && m[2] == 0x2F && m[3] == 0xFD) ||
                                            ((m[0] & 0xF0) == 0x50 && m[1] == 0x2A && m[2] == 0x4D && m[3] == 0x18))) {
            fclose(f);
            no_zstd();
            return NULL;
        }
        if (f) fclose(f);
        cli_lib_error(&err);
        return NULL;
    }
#endif
    return r;
}

int cli_same_file(const char *a, const char *b) {
    struct stat sa, sb;
    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

FILE *cli_open_output(const char *path) {
    FILE *f;
    if (!path || !strcmp(path, "-")) return stdout;
    f = fopen(path, "wb");
    if (!f) cli_fail(CLI_DATA, "cannot create %s: %s", path, strerror(errno));
    return f;
}

static double now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void cli_progress_start(cli_progress *p, const char *label, uint64_t total) {
    memset(p, 0, sizeof *p);
    p->active = isatty(2) && !getenv("FRAMES_NO_PROGRESS");
    p->total = total;
    p->label = label;
    p->started = p->last_time = now_seconds();
}

void cli_progress_update(cli_progress *p, uint64_t done) {
    double t;
    if (!p->active || done - p->last_shown < 4096) return;
    p->last_shown = done;
    t = now_seconds();
    if (t - p->last_time < 0.1) return;
    p->last_time = t;
    if (p->total) {
        int width = 30, filled = (int)((double)done / (double)p->total * width);
        if (filled > width) filled = width;
        fprintf(stderr, "\r%s [%.*s%*s] %5.1f%%", p->label, filled,
                "##############################", width - filled, "",
                100.0 * (double)done / (double)p->total);
    } else {
        fprintf(stderr, "\r%s %llu", p->label, (unsigned long long)done);
    }
    fprintf(stderr, " %.1fs", t - p->started);
    fflush(stderr);
}

void cli_progress_end(cli_progress *p) {
    if (p->active && p->last_time > p->started) fprintf(stderr, "\r\033[K");
    p->active = 0;
}

uint64_t cli_known_frames(frames_reader *r) {
    frames_reader_info st;
    if (frames_reader_info_get(r, &st) < 0 || !st.count_known) return 0;
    return st.nframes;
}

int cli_for_each_frame(frames_reader *r, const char *label, cli_frame_fn fn, void *ctx) {
    cli_progress pg;
    frames_frame f;
    int rc, status = CLI_OK;
    cli_progress_start(&pg, label, cli_known_frames(r));
    for (;;) {
        uint64_t index = frames_reader_tell(r);
        rc = frames_reader_next(r, &f);
        if (rc == 0) break;
        if (rc < 0) {
            status = cli_lib_error(frames_reader_error(r));
            if (rc == FRAMES_E_DECODE || rc == FRAMES_E_LIMIT) continue;   /* frame skipped */
            break;
        }
        if (fn(ctx, &f, index)) {
            status = CLI_DATA;
            break;
        }
        cli_progress_update(&pg, index + 1);
    }
    cli_progress_end(&pg);
    cli_reader_warnings(r);
    return status;
}

void cli_json_string(FILE *out, const void *data, size_t len) {
    frames_print_json_string(data, len, frames_out_file, out);
}

void cli_hex(FILE *out, const void *data, size_t len) {
    static const char digits[] = "0123456789abcdef";
    const unsigned char *s = (const unsigned char *)data;
    size_t i;
    for (i = 0; i < len; i++) {
        fputc(digits[s[i] >> 4], out);
        fputc(digits[s[i] & 15], out);
    }
}

int cli_parse_module(const char *arg, size_t *name_len, uint64_t *lo, uint64_t *hi) {
    const char *colon = strrchr(arg, ':');
    if (!colon || colon == arg || cli_parse_range(colon + 1, lo, hi) || *lo >= *hi) return -1;
    *name_len = (size_t)(colon - arg);
    return 0;
}

void cli_names_init(cli_names *n) {
    memset(n, 0, sizeof *n);
    frames_sym_options_default(&n->opt);
}

int cli_names_option(int argc, char **argv, int *i, cli_names *n) {
    const char *arg = argv[*i];
    if (!strcmp(arg, "--no-symbols")) {
        n->off = 1;
        return 1;
    }
    if (!strcmp(arg, "--sysroot")) {
        if (*i + 1 >= argc) return cli_usage_error("--sysroot needs a directory");
        n->opt.sysroot = argv[++*i];
        return 1;
    }
    if (!strcmp(arg, "--module")) {
        size_t len;
        uint64_t lo, hi;
        if (*i + 1 >= argc || cli_parse_module(argv[*i + 1], &len, &lo, &hi))
            return cli_usage_error("--module wants NAME:LO-HI with LO < HI, got '%s'",
                                   *i + 1 < argc ? argv[*i + 1] : "");
        if (n->nmodules == (int)(sizeof n->modules / sizeof n->modules[0]))
            return cli_usage_error("at most %d --module options",
                                   (int)(sizeof n->modules / sizeof n->modules[0]));
        n->modules[n->nmodules++] = argv[++*i];
        n->fixed = 1;
        return 1;
    }
    return 0;
}

int cli_names_open(cli_names *n, const frames_meta *meta) {
    frames_error err;
    int k;
    if (n->off) return CLI_OK;
    if (frames_sym_open(&n->sym, &n->opt, &err) < 0) return cli_lib_error(&err);
    frames_sym_set_meta(n->sym, meta);
    for (k = 0; k < n->nmodules; k++) {
        size_t len;
        uint64_t lo, hi;
        cli_parse_module(n->modules[k], &len, &lo, &hi);
        if (frames_sym_add_module(n->sym, n->modules[k], len, lo, hi - 1, NULL, 0) < 0)
            return cli_fail(CLI_DATA, "out of memory");
    }
    return CLI_OK;
}

void cli_names_frame(cli_names *n, const frames_frame *f) {
    if (n->sym && !n->fixed && frames_sym_add_frame(n->sym, f) < 0)
        cli_warn("out of memory: module %.*s left out", (int)f->modload.module_name.len,
                 (const char *)f->modload.module_name.ptr);
}

void cli_names_lookup(cli_names *n, uint64_t pc, frames_sym_loc *loc) {
    memset(loc, 0, sizeof *loc);
    if (n->sym && frames_sym_lookup(n->sym, pc, loc) < 0) memset(loc, 0, sizeof *loc);
}

const char *cli_names_text(cli_names *n, uint64_t pc, char *buf, size_t cap) {
    frames_sym_loc loc;
    cli_names_lookup(n, pc, &loc);
    frames_sym_format(&loc, FRAMES_SYM_FMT_LINE, buf, cap);
    return buf;
}

void cli_names_json(cli_names *n, FILE *out, uint64_t pc) {
    frames_sym_loc loc;
    cli_names_lookup(n, pc, &loc);
    frames_sym_print_json(&loc, frames_out_file, out);
}

void cli_names_close(cli_names *n) {
    frames_sym_info info;
    uint32_t i;
    if (n->sym) {
        frames_sym_info_get(n->sym, &info);
        for (i = 0; i < info.nwarnings; i++) {
            const char *w = frames_sym_warning(n->sym, i);
            if (!*w) {
                cli_warn("%u more warnings about module files", (unsigned)(info.nwarnings - i));
                break;
            }
            cli_warn("%s", w);
        }
        frames_sym_close(n->sym);
    }
    memset(n, 0, sizeof *n);
}

long cli_usable_cpus(void) {
    long n;
#ifdef __linux__
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) return CPU_COUNT(&set) > 0 ? CPU_COUNT(&set) : 1;
#endif
    n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? n : 1;
}
