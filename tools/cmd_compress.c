/* frames compress / frames decompress: convert between .frames and .frames.zst. The
   compressed trace holds the same bytes (zstd -d gives them back); the logic lives in
   frames_zstd.h. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#ifdef FRAMES_HAVE_ZSTD
#include "frames_zstd.h"
#endif

static const char compress_usage[] =
    "usage: frames compress IN [-o OUT] [-f] [--level N] [--chunk SIZE] [--threads N]\n"
    "\n"
    "Compress a trace into a seekable .frames.zst (zstd frames of whole records, chunked on\n"
    "TOC blocks, plus a seek table): `zstd -d` and `frames decompress` give back IN byte for\n"
    "byte, and every frames command reads it with random access. IN may be - (standard\n"
    "input) or compressed already (it is re-chunked); anything else (an empty file, other\n"
    "data) is refused. OUT defaults to IN.zst ('-' = stdout).\n"
    "  -f, --force   replace an existing OUT\n"
    "  --level N     zstd level 1-22 (default 3)\n"
    "  --chunk SIZE  uncompressed bytes per chunk, K/M suffixes (default 1M)\n"
    "  --threads N   compression threads, 1-16 (default: the CPUs it may run on); the\n"
    "                output is the same bytes whatever N\n"
    "OUT must not be IN; it is written under a temporary name and renamed when complete,\n"
    "so a failure leaves no OUT and an existing one as it was (docs/outputs.md).\n"
    "Exit status: 0 ok, 1 unreadable input or write error, 2 usage (an existing OUT\n"
    "without -f).\n";

static const char decompress_usage[] =
    "usage: frames decompress IN [-o OUT] [-f]\n"
    "\n"
    "Decompress a .frames.zst trace, byte for byte as `zstd -d` does. OUT defaults to IN\n"
    "without .zst ('-' = stdout). A file cut inside a zstd frame is decompressed as far as it\n"
    "goes (then use `frames fix`); an empty file is an error, as for `zstd -d`.\n"
    "  -f, --force   replace an existing OUT\n"
    "OUT must not be IN; it is written under a temporary name and renamed when complete,\n"
    "so a failure leaves no OUT and an existing one as it was (docs/outputs.md).\n"
    "Exit status: 0 ok, 1 unreadable input or write error, 2 usage (an existing OUT\n"
    "without -f).\n";

static int parse_size(const char *s, uint64_t *out) {
    char buf[32];
    size_t n = strlen(s);
    uint64_t mul = 1;
    if (n == 0 || n >= sizeof buf) return -1;
    memcpy(buf, s, n + 1);
    if (buf[n - 1] == 'K' || buf[n - 1] == 'k') mul = 1024;
    else if (buf[n - 1] == 'M' || buf[n - 1] == 'm') mul = 1024 * 1024;
    else if (buf[n - 1] == 'G' || buf[n - 1] == 'g') mul = 1024ull * 1024 * 1024;
    if (mul != 1) buf[n - 1] = 0;
    if (cli_parse_u64(buf, out) || *out == 0 || *out > ((uint64_t)1 << 30) / mul) return -1;
    *out *= mul;
    return 0;
}

#ifdef FRAMES_HAVE_ZSTD /* only the zstd paths open files here */
static int open_in(const char *in) {
    int fd;
    if (!strcmp(in, "-")) return 0;
    if ((fd = open(in, O_RDONLY)) < 0) cli_fail(CLI_DATA, "cannot open %s: %s", in, strerror(errno));
    return fd;
}

#endif

/* IN, -o OUT and the options of one command; OUT derived from IN when missing. */
static int parse(int argc, char **argv, int compress, const char **in, char *out, size_t cap,
                 int *level, uint64_t *chunk, int *threads) {
    const char *o = NULL;
    int i;
    uint64_t n;
    for (i = 1; i < argc; i++) {
        const char *opt = argv[i], *v = NULL;
        int valued = !strcmp(opt, "-o") || !strcmp(opt, "--output") ||
                     (compress && (!strcmp(opt, "--level") || !strcmp(opt, "--threads") ||
                                   !strcmp(opt, "--chunk")));
        if (valued && !(v = cli_option_value(argc, argv, &i))) return CLI_USAGE;
        if (cli_force_option(opt)) continue;
        if (!valued) {
            if (opt[0] == '-' && opt[1]) return cli_usage_error("unknown option '%s'", opt);
            if (*in) return cli_usage_error("one input only");
            *in = opt;
        } else if (!strcmp(opt, "-o") || !strcmp(opt, "--output")) {
            o = v;
        } else if (!strcmp(opt, "--level")) {
            if (cli_parse_u64(v, &n) || n < 1 || n > 22)
                return cli_usage_error("--level takes 1 to 22");
            *level = (int)n;
        } else if (!strcmp(opt, "--threads")) {
            if (cli_parse_u64(v, &n) || n < 1 || n > 16)
                return cli_usage_error("--threads takes 1 to 16");
            *threads = (int)n;
        } else if (parse_size(v, chunk)) {
            return cli_usage_error("--chunk takes a size up to 1G");
        }
    }
    if (!*in) return cli_usage_error("no input");
    if (!o) {
        size_t len = strlen(*in);
        if (!strcmp(*in, "-")) o = "-";
        else if (compress) {
            if (len + 5 > cap) return cli_usage_error("name too long");
            memcpy(out, *in, len);
            memcpy(out + len, ".zst", 5);
            o = out;
        } else {
            if (len <= 4 || strcmp(*in + len - 4, ".zst") || len >= cap)
                return cli_usage_error("%s does not end in .zst: give -o OUT", *in);
            memcpy(out, *in, len - 4);
            out[len - 4] = 0;
            o = out;
        }
    }
    if (o != out) {
        if (strlen(o) >= cap) return cli_usage_error("name too long");
        memcpy(out, o, strlen(o) + 1);
    }
    return CLI_OK;
}

#ifdef FRAMES_HAVE_ZSTD
/* The trace in ifd into a compressed file at ofd, chunked on its TOC blocks. */
static int compress_into(const char *in, int ifd, int ofd, int level, uint64_t chunk, int threads) {
    frames_zstd_options z;
    frames_zstd_sink *zs;
    frames_sink down = frames_sink_fd(ofd);
    frames_error err;
    frames_reader *r;
    frames_reader_info st;
    int status = CLI_OK;
    frames_zstd_options_default(&z);
    if (level) z.level = level;
    if (chunk) z.chunk_size = chunk;
    /* this thread reads and cuts; the others compress */
    z.threads = 1 + (threads ? threads : (int)(cli_usable_cpus() > 16 ? 16 : cli_usable_cpus()));
    /* the chunks follow the trace's TOC blocks: take m from it when it has one */
    if (strcmp(in, "-") && frames_zstd_reader_open_path(&r, in, NULL, NULL, NULL, &err) == FRAMES_OK) {
        if (frames_reader_info_get(r, &st) == FRAMES_OK && st.frames_per_toc) z.frames_per_toc = st.frames_per_toc;
        frames_reader_close(r);
    }
    if (frames_zstd_sink_open(&zs, &down, &z, &err) < 0) return cli_lib_error(&err);
    if (frames_zstd_compress_fd(ifd, zs, &err) < 0) status = cli_lib_error(&err);
    if (frames_zstd_sink_close(zs, &err) < 0 && status == CLI_OK) status = cli_lib_error(&err);
    return status;
}

static int decompress_into(const char *in, int ifd, int ofd) {
    frames_error err;
    int cut = 0;
    if (frames_zstd_decompress_fd(ifd, ofd, &cut, &err) < 0) return cli_lib_error(&err);
    if (cut) cli_warn("%s ends inside a zstd frame: decompressed as far as it goes "
                      "(`frames fix` finishes the trace)", in);
    return CLI_OK;
}
#endif

/* Both commands: arguments, IN and OUT opened, the conversion, OUT closed. */
static int convert(int argc, char **argv, int compress, const char *usage) {
    const char *in = NULL;
    char out[4096];
    int level = 0, threads = 0, rc;
    uint64_t chunk = 0;
    if (cli_wants_help(argc, argv)) {
        fputs(usage, stdout);
        return CLI_OK;
    }
    if ((rc = parse(argc, argv, compress, &in, out, sizeof out, &level, &chunk, &threads)) != CLI_OK) return rc;
#ifdef FRAMES_HAVE_ZSTD
    {
        cli_output o;
        int ifd, status;
        if ((status = cli_output_open(&o, out, &in, 1)) != CLI_OK) return status;
        if ((ifd = open_in(in)) < 0) {
            cli_output_abort(&o);
            return CLI_DATA;
        }
        status = compress ? compress_into(in, ifd, o.fd, level, chunk, threads) : decompress_into(in, ifd, o.fd);
        if (ifd) close(ifd);
        if (status == CLI_OK) return cli_output_commit(&o);
        cli_output_abort(&o);
        return status;
    }
#else
    return cli_fail(CLI_DATA, "zstd support was not built into this frames (install libzstd-dev and rebuild)");
#endif
}

int cmd_compress(int argc, char **argv) { return convert(argc, argv, 1, compress_usage); }
int cmd_decompress(int argc, char **argv) { return convert(argc, argv, 0, decompress_usage); }
