/* frames fix: turn an unfinished or truncated trace into a finished one. Frames are copied
   byte for byte; in place means a temporary file renamed over the original, so a failure
   never destroys it. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

static const char fix_usage[] =
    "usage: frames fix FILE [-o OUT] [--toc libtrace|ceil|tracewrap|ceil-zero]\n"
    "                       [--frames-per-toc M] [--version N]\n"
    "\n"
    "Repair an unfinished (n = 0, T = 0) or truncated trace: keep every complete frame (copied\n"
    "byte for byte), drop an incomplete last record, write the TOC and patch the header.\n"
    "Without -o FILE is rewritten in place through a temporary file and a rename. By default\n"
    "the version (1 becomes 3), arch, machine, meta and, when FILE has a usable TOC, m and the\n"
    "TOC convention are kept; otherwise m = 10000 and the libtrace convention.\n"
    "Exit status: 0 repaired (or nothing to repair), 1 unreadable input or write error, 2 usage.\n";

static void report(const char *in, const char *out, const frames_fix_report *rep,
                   const frames_writer_options *o) {
    fprintf(stderr, "frames fix: %s: %llu frames", in, (unsigned long long)rep->frames);
    if (rep->dropped_bytes)
        fprintf(stderr, "; dropped an incomplete record of %llu bytes at offset 0x%llx",
                (unsigned long long)rep->dropped_bytes, (unsigned long long)rep->dropped_offset);
    if (rep->undecodable)
        fprintf(stderr, "; %llu frames do not decode (kept as they are)",
                (unsigned long long)rep->undecodable);
    fprintf(stderr, "; %s -> %s, TOC %s with m = %llu\n", rep->was_finished ? "was finished" : "was unfinished",
            out, frames_toc_name(o->toc), (unsigned long long)o->frames_per_toc);
}

/* Write the repaired trace to an open fd. */
static int fix_into(frames_reader *r, int fd, const frames_writer_options *o, const char *in,
                    const char *out) {
    frames_sink sink;
    frames_fix_report rep;
    frames_error err;
    void *zs;
    int rc, status;
    if (cli_reader_compressed(r) && !strcmp(in, out) && !cli_output_compressed(out))
        cli_zstd_option("--zstd"); /* in place: a compressed trace stays compressed */
    if ((status = cli_output_sink(fd, out, o->frames_per_toc, &sink, &zs)) != CLI_OK) return status;
    rc = frames_fix(r, &sink, o, &rep, &err);
    status = cli_close_sink(zs, out);
    if (rc < 0) return cli_lib_error(&err);
    if (status != CLI_OK) return status;
    if (rc == FRAMES_UNFINISHED)
        cli_warn("%s cannot seek: the output is an unfinished trace (all frames, no TOC)", out);
    report(in, out, &rep, o);
    return CLI_OK;
}

static int fix_in_place(frames_reader *r, const char *path, const frames_writer_options *o) {
    struct stat sb;
    size_t n = strlen(path);
    char *tmp = (char *)malloc(n + 16);
    int fd, status;
    if (!tmp) return cli_fail(CLI_DATA, "out of memory");
    if (stat(path, &sb) < 0 || !S_ISREG(sb.st_mode)) {
        free(tmp);
        return cli_fail(CLI_DATA, "%s: in-place repair needs a regular file (use -o OUT)", path);
    }
    memcpy(tmp, path, n);
    memcpy(tmp + n, ".fix.XXXXXX", 12);
    if ((fd = mkstemp(tmp)) < 0) {
        status = cli_fail(CLI_DATA, "cannot create a temporary file next to %s: %s", path, strerror(errno));
        free(tmp);
        return status;
    }
    status = fix_into(r, fd, o, path, path);
    if (status == CLI_OK && fchmod(fd, sb.st_mode & 07777) < 0)
        cli_warn("cannot copy the permissions of %s: %s", path, strerror(errno));
    if (status == CLI_OK && fsync(fd) < 0)
        status = cli_fail(CLI_DATA, "%s: %s", tmp, strerror(errno));
    if (close(fd) < 0 && status == CLI_OK) status = cli_fail(CLI_DATA, "%s: %s", tmp, strerror(errno));
    if (status == CLI_OK && rename(tmp, path) < 0)
        status = cli_fail(CLI_DATA, "cannot replace %s: %s", path, strerror(errno));
    if (status != CLI_OK) unlink(tmp);
    free(tmp);
    return status;
}

static int fix_to(frames_reader *r, const char *in, const char *out, const frames_writer_options *o) {
    int fd, status;
    if (!strcmp(out, "-")) return fix_into(r, 1, o, in, "standard output");
    if ((fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644)) < 0)
        return cli_fail(CLI_DATA, "cannot create %s: %s", out, strerror(errno));
    status = fix_into(r, fd, o, in, out);
    if (close(fd) < 0 && status == CLI_OK) status = cli_fail(CLI_DATA, "%s: %s", out, strerror(errno));
    return status;
}

int cmd_fix(int argc, char **argv) {
    frames_writer_options cmdline, o;
    const char *in = NULL, *out = NULL;
    unsigned given = 0;
    frames_reader *r;
    int i, status;
    if (cli_wants_help(argc, argv)) {
        fputs(fix_usage, stdout);
        return CLI_OK;
    }
    frames_writer_options_default(&cmdline);
    for (i = 1; i < argc; i++) {
        int used = cli_writer_option(argc, argv, &i, &cmdline, &given);
        if (used == CLI_USAGE) return CLI_USAGE;
        if (used) continue;
        if (!strcmp(argv[i], "-o")) {
            if (!(out = cli_option_value(argc, argv, &i))) return CLI_USAGE;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            return cli_usage_error("unknown option '%s'", argv[i]);
        } else if (in) {
            return cli_usage_error("more than one input");
        } else {
            in = argv[i];
        }
    }
    if (!in) return cli_usage_error("no input");
    if (!out && !strcmp(in, "-")) return cli_usage_error("standard input needs -o OUT");
    if (out && strcmp(out, "-") && cli_same_file(in, out))
        return cli_usage_error("OUT is FILE: leave out -o to repair in place");
    if (!(r = cli_open_reader(in, NULL))) return CLI_DATA;
    frames_writer_options_like(r, &o);
    cli_apply_writer_options(&o, &cmdline, given);
    status = out ? fix_to(r, in, out, &o) : fix_in_place(r, in, &o);
    cli_reader_warnings(r);
    frames_reader_close(r);
    return status;
}
