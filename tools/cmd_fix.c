/* frames fix: turn an unfinished or truncated trace into a finished one. Frames are copied
   byte for byte; in place means a temporary file renamed over the original, so a failure
   never destroys it. */
#include <string.h>

#include "cli.h"

enum { CLI_DAMAGED = 3 };   /* fix_into: written, but frames of the input could not be read */

static const char fix_usage[] =
    "usage: frames fix FILE [-o OUT [-f]] [--toc libtrace|ceil|tracewrap|ceil-zero]\n"
    "                       [--frames-per-toc M] [--version N]\n"
    "\n"
    "Repair an unfinished (n = 0, T = 0) or truncated trace: keep every complete frame (copied\n"
    "byte for byte), drop an incomplete last record, write the TOC and patch the header.\n"
    "Without -o FILE is rewritten in place through a temporary file and a rename. By default\n"
    "the version (1 becomes 3), arch, machine, meta and, when FILE has a usable TOC, m and the\n"
    "TOC convention are kept; otherwise m = 10000 and the libtrace convention.\n"
    "Frames that cannot be read (a corrupt chunk of a .frames.zst) are left out, and the\n"
    "copy goes on at the next TOC entry that reads: OUT holds every readable frame and is\n"
    "finished, and the exit status is 1. In place, a damaged FILE is left as it was.\n"
    "OUT must not be FILE; an existing OUT is replaced only with -f (docs/outputs.md).\n"
    "Exit status: 0 repaired (or nothing to repair), 1 unreadable or damaged input (frames\n"
    "lost, see above) or write error, 2 usage.\n";

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
    if (rep.damage.code) {
        cli_lib_error(&rep.damage);
        return cli_fail(CLI_DAMAGED, "%s is damaged: %llu frames (%llu damaged regions) could not be "
                        "read and are not in %s", in, (unsigned long long)rep.lost_frames,
                        (unsigned long long)rep.lost_ranges, out);
    }
    return CLI_OK;
}

/* FILE rewritten in place (out NULL) or OUT written, both through a temporary file renamed
   into place when complete. */
static int fix_to(frames_reader *r, const char *in, const char *out, const frames_writer_options *o) {
    cli_output w;
    int status;
    status = out ? cli_output_open(&w, out, &in, 1) : cli_output_open_in_place(&w, in);
    if (status != CLI_OK) return status;
    status = fix_into(r, w.fd, o, in, !out ? in : strcmp(out, "-") ? out : "standard output");
    if (status == CLI_DAMAGED && !out) {   /* the damaged original may hold more: keep it */
        cli_output_abort(&w);
        return cli_fail(CLI_DATA, "%s is left as it was: write the readable frames elsewhere "
                        "with -o OUT", in);
    }
    if (status != CLI_OK && status != CLI_DAMAGED) {
        cli_output_abort(&w);
        return status;
    }
    /* a damaged input still gives a finished trace of every frame that reads */
    return cli_output_commit(&w) == CLI_OK ? (status == CLI_DAMAGED ? CLI_DATA : CLI_OK) : CLI_DATA;
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
        if (used || cli_force_option(argv[i])) continue;
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
    if (out && strcmp(out, "-") && strcmp(in, "-") && cli_same_file(in, out))
        return cli_fail(CLI_USAGE, "the output %s is the input %s: refused (leave out -o to repair "
                        "in place)", out, in);
    if (!(r = cli_open_reader(in, NULL))) return CLI_DATA;
    frames_writer_options_like(r, &o);
    cli_apply_writer_options(&o, &cmdline, given);
    status = fix_to(r, in, out, &o);
    cli_reader_warnings(r);
    frames_reader_close(r);
    return status;
}
