/* frames drcov - basic-block coverage of a trace as a DynamoRIO drcov file
   (Lighthouse, bncov). The grouping and the file format live in frames_interop.h. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "frames_interop.h"

static void usage(FILE *out) {
    fprintf(out,
            "usage: frames drcov TRACE -o OUT.drcov [-f] [--module NAME:LO-HI]...\n\n"
            "Write the basic blocks the trace executed as a drcov file (DynamoRIO drcov\n"
            "version 2) for Lighthouse, bncov and other coverage tools.\n\n"
            "  -o, --output FILE     the drcov file ('-' for standard output); not TRACE, written\n"
            "                        under a temporary name renamed when complete\n"
            "  -f, --force           replace an existing output file\n"
            "  --module NAME:LO-HI   a module at [LO, HI) (repeatable); without it the modules\n"
            "                        come from the trace's modload frames\n\n"
            "A block is a run of instructions of one thread, each starting where the previous\n"
            "one ends, inside one module; instructions outside every module are counted and\n"
            "left out. TRACE may be '-' (standard input). See docs/interop.md.\n\n"
            "Exit status: 0 ok, 1 unreadable input or write error (then no output file), 2\n"
            "usage error (an existing output without -f; docs/outputs.md).\n");
}

static int add_module_arg(frames_cov *cov, const char *arg) {
    uint64_t lo, hi;
    size_t len;
    if (cli_parse_module(arg, &len, &lo, &hi))
        return cli_usage_error("--module wants NAME:LO-HI with LO < HI, got '%s'", arg);
    if (frames_cov_add_module(cov, arg, len, lo, hi) < 0)
        return cli_lib_error(frames_cov_error(cov));
    return CLI_OK;
}

static int feed(void *ctx, const frames_frame *f, uint64_t index) {
    frames_cov *cov = (frames_cov *)ctx;
    (void)index;
    if (frames_cov_add_frame(cov, f) < 0) return cli_lib_error(frames_cov_error(cov));
    return 0;
}

int cmd_drcov(int argc, char **argv) {
    const char *in = NULL, *outpath = NULL;
    frames_cov *cov = NULL;
    frames_reader *r = NULL;
    frames_cov_info info;
    frames_error err;
    cli_output o;
    FILE *out = NULL;
    int i, rc, status;
    if (cli_wants_help(argc, argv)) {
        usage(stdout);
        return CLI_OK;
    }
    if (frames_cov_open(&cov, NULL, &err) < 0) return cli_lib_error(&err);
    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-o") || !strcmp(argv[i], "--output")) {
            if (!(outpath = cli_option_value(argc, argv, &i))) {
                rc = CLI_USAGE;
                goto done_rc;
            }
        } else if (!strcmp(argv[i], "--module")) {
            if (!cli_option_value(argc, argv, &i)) {
                rc = CLI_USAGE;
                goto done_rc;
            }
            if ((rc = add_module_arg(cov, argv[i])) != CLI_OK) goto done_rc;
        } else if (cli_force_option(argv[i])) {
        } else if ((rc = cli_trace_arg(argv[i], &in)) != CLI_OK) {
            goto done_rc;
        }
    }
    if (!in || !outpath) {
        rc = cli_usage_error(!in ? "missing TRACE" : "missing -o OUT.drcov");
        goto done_rc;
    }
    if ((rc = cli_output_open(&o, outpath, &in, 1)) != CLI_OK) goto done_rc;
    if (!(r = cli_open_reader(in, NULL))) {
        cli_output_abort(&o);
        rc = CLI_DATA;
        goto done_rc;
    }
    status = cli_for_each_frame(r, "drcov", feed, cov);
    /* coverage of part of the trace would pass for the whole: nothing is written */
    rc = status != CLI_OK                 ? status
         : frames_cov_finish(cov) < 0     ? cli_lib_error(frames_cov_error(cov))
         : !(out = cli_output_stream(&o)) ? CLI_DATA
                                          : CLI_OK;
    if (rc != CLI_OK) {
        cli_output_abort(&o);
        goto done_rc;
    }
    if (frames_cov_write_drcov(cov, frames_out_file, out) < 0) {
        cli_output_abort(&o);
        rc = cli_fail(CLI_DATA, "cannot write %s", outpath);
        goto done_rc;
    }
    if ((rc = cli_output_commit(&o)) != CLI_OK) goto done_rc;
    frames_cov_info_get(cov, &info);
    /* no module at all may mean no modload frame, or only unusable ones: say which */
    if (info.nmodules == 0 && info.instructions && info.modules_ignored)
        cli_warn("no usable module: the trace's %llu modload frames have empty ranges (low "
                 "address above high): give the modules with --module NAME:LO-HI",
                 (unsigned long long)info.modules_ignored);
    else if (info.nmodules == 0 && info.instructions)
        cli_warn("the trace has no modload frames: give the modules with --module NAME:LO-HI");
    else if (info.outside)
        cli_warn("%llu of %llu instructions are outside every module (not in the file)",
                 (unsigned long long)info.outside, (unsigned long long)info.instructions);
    if (info.modules_ignored && info.nmodules)
        cli_warn("%llu modload frames ignored (empty range, or more than 65535 modules)",
                 (unsigned long long)info.modules_ignored);
    if (info.far_blocks)
        cli_warn("%llu blocks start 4 GiB or more past their module base (drcov offsets are "
                 "32-bit): left out", (unsigned long long)info.far_blocks);
    rc = status;
done_rc:
    frames_reader_close(r);
    frames_cov_close(cov);
    return rc;
}
