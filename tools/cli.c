/* cli.c - see cli.h */
#include "cli.h"

#include <errno.h>
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

frames_reader *cli_open_reader(const char *path, const frames_reader_options *o) {
    frames_reader *r = NULL;
    frames_error err;
    if (frames_reader_open_path(&r, path, o, &err) < 0) {
        cli_lib_error(&err);
        return NULL;
    }
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
