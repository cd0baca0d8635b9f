/* cli.c - see cli.h */
#include "cli.h"
#include "frames_interop.h"
#include "frames_query.h"
#ifdef FRAMES_HAVE_ZSTD
#include "frames_zstd.h"
#endif

#include <fcntl.h>
#include <sys/mman.h>

#include <errno.h>
#include <sched.h>
#include <signal.h>
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

/* The warnings reading gave so far (frames_reader_info_get would first scan every size
   prefix again and check the TOC against the scan: a second pass over the trace). */
void cli_reader_warnings(frames_reader *r) {
    const char *w;
    uint32_t i;
    for (i = 0; (w = frames_reader_warning(r, i)) != NULL; i++) cli_warn("%s", w);
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

const char *cli_option_value(int argc, char **argv, int *i) {
    if (*i + 1 >= argc) {
        cli_usage_error("option '%s' needs a value", argv[*i]);
        return NULL;
    }
    return argv[++*i];
}

int cli_exclusive(const char **seen, const char *flag) {
    if (*seen && strcmp(*seen, flag))
        return cli_usage_error("'%s' and '%s' exclude each other", *seen, flag);
    *seen = flag;
    return CLI_OK;
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

int cli_split_ranges(frames_reader *r, uint64_t n, uint64_t chunks, uint64_t **bounds, uint64_t *k) {
    uint64_t align = frames_split_alignment(r), blocks = n / align + (n % align != 0);
    uint64_t cap = (chunks < blocks ? chunks : blocks) + 1;
    *k = 0;
    if (!(*bounds = (uint64_t *)malloc((size_t)cap * sizeof **bounds)))
        return cli_fail(CLI_DATA, "out of memory for %llu ranges", (unsigned long long)cap - 1);
#ifdef FRAMES_HAVE_ZSTD
    /* ranges start on compressed chunks too, so that each worker decompresses its own */
    if (cli_reader_compressed(r)) *k = frames_zstd_split_ranges(r, chunks, *bounds);
#endif
    if (*k == 0) *k = frames_split_ranges(n, align, chunks, *bounds);
    return CLI_OK;
}

int cli_parse_toc(const char *name) {
    static const int writable[] = {FRAMES_TOC_LIBTRACE, FRAMES_TOC_CEIL, FRAMES_TOC_TRACEWRAP,
                                   FRAMES_TOC_CEIL_ZERO};
    size_t i;
    for (i = 0; i < sizeof writable / sizeof writable[0]; i++)
        if (!strcmp(name, frames_toc_name(writable[i]))) return writable[i];
    return -1;
}

int cli_writer_option(int argc, char **argv, int *i, frames_writer_options *o, unsigned *given) {
    const char *arg = argv[*i], *v;
    uint64_t n;
    if (!strcmp(arg, "--version")) {
        if (!(v = cli_option_value(argc, argv, i))) return CLI_USAGE;
        if (cli_parse_u64(v, &n) || (n != 2 && n != 3)) return cli_usage_error("--version takes 2 or 3");
        o->version = (uint32_t)n;
        *given |= CLI_GIVEN_VERSION;
        return 1;
    }
    if (!strcmp(arg, "--toc")) {
        int t;
        if (!(v = cli_option_value(argc, argv, i))) return CLI_USAGE;
        if ((t = cli_parse_toc(v)) < 0)
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
        if (!(v = cli_option_value(argc, argv, i))) return CLI_USAGE;
        if (cli_parse_u64(v, &n) || n == 0)
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

#ifdef SYNC_FILE_RANGE_WRITE
/* A file written through cli_output is flushed to disk before it is renamed into place
   (docs/outputs.md): have the kernel start writing each 8 MB as soon as it is complete,
   so that the final fsync waits for the last few MB instead of the whole file (1.15 GB
   took 0.35-0.7 s of fsync at the end of `frames cat`). Asynchronous: it does not wait
   for the disk; on a pipe or a device it fails and changes nothing. */
#define CLI_WRITEBACK_STEP ((off_t)8 << 20)
static int write_and_start_writeback(void *ctx, const void *data, size_t len) {
    int fd = (int)(intptr_t)ctx, rc;
    frames_sink fds = frames_sink_fd(fd);
    off_t end;
    if ((rc = fds.write(fds.ctx, data, len)) < 0) return rc;
    end = lseek(fd, 0, SEEK_CUR);
    if (end >= CLI_WRITEBACK_STEP && (end - (off_t)len) / CLI_WRITEBACK_STEP != end / CLI_WRITEBACK_STEP)
        sync_file_range(fd, (end / CLI_WRITEBACK_STEP - 1) * CLI_WRITEBACK_STEP, CLI_WRITEBACK_STEP,
                        SYNC_FILE_RANGE_WRITE);
    return rc;
}
#endif

int cli_output_sink(int fd, const char *path, uint64_t frames_per_toc, frames_sink *sink,
                    void **zs) {
    *sink = frames_sink_fd(fd);
#ifdef SYNC_FILE_RANGE_WRITE
    sink->write = write_and_start_writeback;
#endif
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

uint64_t cli_compressed_size(frames_reader *r) {
#ifdef FRAMES_HAVE_ZSTD
    const frames_zstd_map *m = frames_zstd_reader_map(r);
    return m ? frames_zstd_map_info_get(m)->compressed_size : 0;
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
    frames_zstd_options zo;
    const char *no_ahead = getenv("FRAMES_NO_READAHEAD"); /* for measuring what it gains */
    uint32_t i;
    frames_zstd_options_default(&zo);
    if (no_ahead && *no_ahead && strcmp(no_ahead, "0")) zo.flags |= FRAMES_ZSTD_NO_READAHEAD;
    if (frames_zstd_reader_open_path(&r, path, o, &zo, &zi, &err) < 0) {
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

/* The header's count (0 in an unfinished trace): frames_reader_info_get would scan every
   size prefix and check the TOC against the scan, a whole pass over the trace before the
   reading pass, for a bar that is only drawn on a terminal. */
uint64_t cli_known_frames(frames_reader *r) {
    return frames_reader_header(r)->nframes;
}

int cli_for_each_frame_std(frames_reader *r, const char *label, cli_std_fn std, cli_frame_fn fn,
                           void *ctx) {
    cli_progress pg;
    frames_frame f;
    frames_raw raw;
    uint64_t pc, tid;
    size_t len;
    int rc, status = CLI_OK;
    cli_progress_start(&pg, label, cli_known_frames(r));
    for (;;) {
        uint64_t index = frames_reader_tell(r);
        rc = frames_reader_next_raw(r, &raw);
        if (rc == 0) break;
        if (rc > 0 && std && frames_peek_std(raw.payload.ptr, raw.payload.len, &pc, &tid, &len)) {
            if (std(ctx, pc, tid, len, index)) {
                status = CLI_DATA;
                break;
            }
            cli_progress_update(&pg, index + 1);
            continue;
        }
        if (rc > 0) rc = frames_reader_decode(r, &raw, &f);
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

int cli_for_each_frame(frames_reader *r, const char *label, cli_frame_fn fn, void *ctx) {
    return cli_for_each_frame_std(r, label, NULL, fn, ctx);
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
        if (!(n->opt.sysroot = cli_option_value(argc, argv, i))) return CLI_USAGE;
        return 1;
    }
    if (!strcmp(arg, "--module")) {
        size_t len;
        uint64_t lo, hi;
        const char *v = cli_option_value(argc, argv, i);
        if (!v) return CLI_USAGE;
        if (cli_parse_module(v, &len, &lo, &hi))
            return cli_usage_error("--module wants NAME:LO-HI with LO < HI, got '%s'", v);
        if (n->nmodules == (int)(sizeof n->modules / sizeof n->modules[0]))
            return cli_usage_error("at most %d --module options",
                                   (int)(sizeof n->modules / sizeof n->modules[0]));
        n->modules[n->nmodules++] = v;
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

/* ---- Outputs (cli.h: the rule for every command that writes a file) ---- */

static int force_given = 0;

int cli_force_option(const char *arg) {
    if (strcmp(arg, "-f") && strcmp(arg, "--force")) return 0;
    force_given = 1;
    return 1;
}

int cli_force_given(void) { return force_given; }

static int is_stdout_path(const char *path) { return !path || !strcmp(path, "-"); }

int cli_output_check(const char *path, const char *const *inputs, size_t ninputs) {
    struct stat st;
    size_t i;
    if (is_stdout_path(path)) return CLI_OK;
    for (i = 0; i < ninputs; i++)
        if (inputs[i] && !is_stdout_path(inputs[i]) && cli_same_file(inputs[i], path))
            return cli_fail(CLI_USAGE, "the output %s is the input %s: refused (it would destroy it)",
                            path, inputs[i]);
    if (stat(path, &st) != 0) return CLI_OK;
    if (S_ISDIR(st.st_mode)) return cli_fail(CLI_DATA, "cannot write %s: it is a directory", path);
    if (S_ISREG(st.st_mode) && !force_given)
        return cli_fail(CLI_USAGE, "%s exists: give -f (--force) to replace it", path);
    return CLI_OK;
}

char *cli_output_target(const char *path) {
    struct stat st;
    char *t = NULL;
    if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) t = realpath(path, NULL);
    if (!t && (t = (char *)malloc(strlen(path) + 1)) != NULL) strcpy(t, path);
    return t;
}

/* Permissions of a new output: those of the file replaced, else 0666 less the umask. */
static int output_mode(const char *target) {
    struct stat st;
    mode_t mask;
    if (stat(target, &st) == 0) return (int)(st.st_mode & 07777);
    mask = umask(022);
    umask(mask);
    return (int)(0666 & ~mask);
}

/* Temporary files being written, removed when the command is interrupted (Ctrl-C, kill)
   so that an interruption leaves nothing behind either. */
static char *volatile pending[8];

static void remove_pending(int sig) {
    size_t i;
    for (i = 0; i < sizeof pending / sizeof pending[0]; i++)
        if (pending[i]) unlink(pending[i]);
    signal(sig, SIG_DFL);
    raise(sig);
}

static void track_pending(char *tmp, int add) {
    static int handlers;
    size_t i;
    for (i = 0; i < sizeof pending / sizeof pending[0]; i++)
        if (add ? !pending[i] : pending[i] == tmp) {
            pending[i] = add ? tmp : NULL;
            break;
        }
    if (add && !handlers) {
        static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};
        for (i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
            if (signal(sigs[i], remove_pending) == SIG_IGN) signal(sigs[i], SIG_IGN);
        handlers = 1;
    }
}

static void output_clear(cli_output *o) {
    if (o->tmp) track_pending(o->tmp, 0);
    free(o->target);
    free(o->tmp);
    o->target = o->tmp = NULL;
    o->fd = -1;
    o->f = NULL;
}

static void output_init(cli_output *o, const char *path) {
    memset(o, 0, sizeof *o);
    o->fd = -1;
    o->path = path ? path : "-";
}

/* The temporary file next to o->target (or the target itself when it cannot be replaced). */
static int output_create(cli_output *o) {
    struct stat st;
    int rc;
    const char *path = o->path;
    if (!(o->target = cli_output_target(path))) return cli_fail(CLI_DATA, "out of memory");
    if (stat(o->target, &st) == 0 && !S_ISREG(st.st_mode)) {   /* a device, a FIFO */
        if ((o->fd = open(o->target, O_WRONLY)) < 0) {
            rc = cli_fail(CLI_DATA, "cannot open %s: %s", path, strerror(errno));
            output_clear(o);
            return rc;
        }
        return CLI_OK;
    }
    o->mode = output_mode(o->target);
    if (!(o->tmp = (char *)malloc(strlen(o->target) + 8))) {
        output_clear(o);
        return cli_fail(CLI_DATA, "out of memory");
    }
    sprintf(o->tmp, "%s.XXXXXX", o->target);
    if ((o->fd = mkstemp(o->tmp)) < 0) {
        rc = cli_fail(CLI_DATA, "cannot create a temporary file next to %s: %s", path, strerror(errno));
        free(o->tmp);
        o->tmp = NULL;
        output_clear(o);
        return rc;
    }
    track_pending(o->tmp, 1);
    return CLI_OK;
}

int cli_output_open(cli_output *o, const char *path, const char *const *inputs, size_t ninputs) {
    int rc;
    output_init(o, path);
    if ((rc = cli_output_check(path, inputs, ninputs)) != CLI_OK) return rc;
    if (!is_stdout_path(path)) return output_create(o);
    o->fd = 1;
    return CLI_OK;
}

int cli_output_open_in_place(cli_output *o, const char *path) {
    struct stat st;
    output_init(o, path);
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
        return cli_fail(CLI_DATA, "%s: rewriting in place needs a regular file", path);
    return output_create(o);
}

FILE *cli_output_stream(cli_output *o) {
    if (o->f) return o->f;
    if (o->fd == 1 && !o->target) return o->f = stdout;
    if (!(o->f = fdopen(o->fd, "wb"))) cli_fail(CLI_DATA, "cannot write %s: %s", o->path, strerror(errno));
    return o->f;
}

frames_writer *cli_output_writer(cli_output *o, const frames_writer_options *wo,
                                 const frames_meta *meta) {
    frames_sink sink;
    frames_writer *w;
    frames_error err;
    void *zs;
    if (cli_output_sink(o->fd, o->path, wo ? wo->frames_per_toc : 0, &sink, &zs) != CLI_OK) return NULL;
    if (frames_writer_open(&w, &sink, wo, meta, &err) < 0) {
        cli_lib_error(&err);
        if (zs) cli_close_sink(zs, o->path);
        return NULL;
    }
    return w;
}

/* Close o's descriptor (through its stream when it has one). 0, or -1 with errno. */
static int output_close(cli_output *o) {
    int rc = 0, e = 0;
    if (o->f == stdout) {
        o->f = NULL;
        o->fd = -1;
        return fflush(stdout) != 0 || ferror(stdout) ? -1 : 0;
    }
    if (o->f) {
        if (fflush(o->f) != 0 || ferror(o->f)) rc = -1, e = errno;
        if (o->tmp && rc == 0 && fsync(fileno(o->f)) != 0) rc = -1, e = errno;
        if (fclose(o->f) != 0 && rc == 0) rc = -1, e = errno;
    } else if (o->fd > 1) {
        if (o->tmp && fsync(o->fd) != 0) rc = -1, e = errno;
        if (close(o->fd) != 0 && rc == 0) rc = -1, e = errno;
    }
    o->f = NULL;
    o->fd = -1;
    errno = e;
    return rc;
}

int cli_output_commit(cli_output *o) {
    int rc = CLI_OK;
    if (o->tmp && fchmod(o->fd >= 0 ? o->fd : fileno(o->f), (mode_t)o->mode) != 0)
        cli_warn("cannot set the permissions of %s: %s", o->path, strerror(errno));
    if (output_close(o) != 0) {
        if (errno != EPIPE) rc = cli_fail(CLI_DATA, "cannot write %s: %s", is_stdout_path(o->path) ?
                                          "standard output" : o->path, strerror(errno));
        else rc = CLI_DATA;
    } else if (o->tmp && rename(o->tmp, o->target) != 0) {
        rc = cli_fail(CLI_DATA, "cannot replace %s: %s", o->path, strerror(errno));
    }
    if (rc != CLI_OK && o->tmp) unlink(o->tmp);
    output_clear(o);
    return rc;
}

void cli_output_abort(cli_output *o) {
    if (o->f != stdout && (o->f || o->fd > 1)) {
        if (o->f) fclose(o->f);
        else close(o->fd);
    }
    if (o->tmp) unlink(o->tmp);
    output_clear(o);
}

int cli_stdout_done(int status) {
    int e = 0, failed = 0;
    errno = 0;
    if (fflush(stdout) != 0) failed = 1, e = errno;
    if (ferror(stdout)) failed = 1;
    if (fclose(stdout) != 0 && !failed) failed = 1, e = errno;
    if (!failed || status != CLI_OK) return status;
    if (e != EPIPE) cli_fail(CLI_DATA, "cannot write standard output: %s", e ? strerror(e) : "write error");
    return CLI_DATA;
}

/* ---- Replay commands (state, history) ---- */

static void replay_progress(void *ctx, uint64_t done, uint64_t total) {
    (void)total;
    cli_progress_update((cli_progress *)ctx, done);
}

frames_replay *cli_open_replay(const char *trace, const char *index_path) {
    frames_replay_options o;
    frames_replay *r = NULL;
    frames_replay_info info;
    frames_error err;
    cli_progress pg;
    struct stat sb;
    frames_replay_options_default(&o);
    o.index_path = index_path;
    cli_progress_start(&pg, "indexing", stat(trace, &sb) == 0 ? (uint64_t)sb.st_size : 0);
    o.progress = replay_progress;
    o.progress_ctx = &pg;
    if (frames_replay_open(&r, trace, &o, &err) < 0) {
        cli_progress_end(&pg);
        cli_lib_error(&err);
        return NULL;
    }
    cli_progress_end(&pg);
    frames_replay_info_get(r, &info);
    if (info.index_built && !info.index_stored)
        cli_warn("%s: could not store the index; it was built in memory only", frames_replay_index_path(r));
    if (info.truncated) cli_warn("%s: the trace is cut; its complete frames are used", trace);
    if (info.instructions && !info.values)
        cli_warn("%s: the trace carries no operand values: every register and byte is unknown", trace);
    return r;
}

void cli_hex_le(FILE *out, const uint8_t *v, size_t n) {
    size_t top = n;
    while (top > 1 && v[top - 1] == 0) top--;   /* no leading zeroes */
    if (!n) { fputs("0x0", out); return; }
    fprintf(out, "0x%x", v[top - 1]);
    while (top-- > 1) fprintf(out, "%02x", v[top - 1]);
}

int cli_parse_addr_len(const char *s, int len_optional, uint64_t *addr, uint64_t *len) {
    char buf[128];
    const char *colon = strchr(s, ':');
    size_t n = colon ? (size_t)(colon - s) : strlen(s);
    if (!n || n >= sizeof buf) return -1;
    memcpy(buf, s, n);
    buf[n] = 0;
    if (cli_parse_u64(buf, addr)) return -1;
    if (!colon) {
        *len = 1;
        return len_optional ? 0 : -1;
    }
    return cli_parse_u64(colon + 1, len) || *len == 0 ? -1 : 0;
}
