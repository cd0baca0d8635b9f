/* frames slice - a new valid trace of selected frames, copied as stored (no re-encoding).
   The selection rule and the copy live in frames_interop.h. */
#include <string.h>

#include "cli.h"
#include "frames_interop.h"

static void usage(FILE *out) {
    fprintf(out,
            "usage: frames slice TRACE -o OUT [-f] [--frames A-B] [--pc LO-HI] [--tid T]\n\n"
            "Write the selected frames of TRACE to OUT, a new trace with the same container\n"
            "(version, arch, machine, frames per TOC entry, TOC convention) and the same meta\n"
            "frame bytes. Frames are copied byte for byte. Ranges are half-open: A-B is\n"
            "frames A .. B-1 ('A-' runs to the end), as 'frames split' prints them.\n\n"
            "  -o, --output FILE  the new trace ('-' for standard output: left unfinished,\n"
            "                     which every reader accepts)\n"
            "  -f, --force        replace an existing OUT\n"
            "  --frames A-B       frame indexes [A, B)\n"
            "  --pc LO-HI         std/syscall frames with address in [LO, HI), exception\n"
            "                     frames with from_addr in it\n"
            "  --tid T            std/syscall/exception frames of thread T\n\n"
            "With --pc or --tid, frames lacking that field are left out, except modload\n"
            "frames, which are kept so that module maps still work on the slice.\n"
            "OUT must not be TRACE; it is written under a temporary name and renamed when\n"
            "complete (docs/outputs.md). Exit status: 0 ok, 1 unreadable input or write error,\n"
            "2 usage error (an existing OUT without -f).\n");
}

static int parse_frames_arg(const char *s, frames_slice_filter *flt) {
    size_t n = strlen(s);
    if (n > 1 && s[n - 1] == '-') {
        char buf[64];
        if (n > sizeof buf) return -1;
        memcpy(buf, s, n - 1);
        buf[n - 1] = 0;
        flt->end = UINT64_MAX;
        return cli_parse_u64(buf, &flt->first);
    }
    if (cli_parse_range(s, &flt->first, &flt->end) || flt->first > flt->end) return -1;
    return 0;
}

static void progress(void *ctx, uint64_t index, uint64_t total) {
    (void)total;   /* the bar's total was set from the reader */
    cli_progress_update((cli_progress *)ctx, index);
}

int cmd_slice(int argc, char **argv) {
    const char *in = NULL, *outpath = NULL;
    frames_slice_filter flt;
    frames_writer_options wo;
    frames_reader *r;
    frames_writer *w;
    frames_error err;
    cli_output out;
    cli_progress pg;
    uint64_t copied = 0;
    int i, rc, status = CLI_OK;
    if (cli_wants_help(argc, argv)) {
        usage(stdout);
        return CLI_OK;
    }
    frames_slice_filter_default(&flt);
    for (i = 1; i < argc; i++) {
        if ((!strcmp(argv[i], "-o") || !strcmp(argv[i], "--output"))) {
            if (!(outpath = cli_option_value(argc, argv, &i))) return CLI_USAGE;
        } else if (!strcmp(argv[i], "--frames")) {
            if (!cli_option_value(argc, argv, &i)) return CLI_USAGE;
            if (parse_frames_arg(argv[i], &flt))
                return cli_usage_error("--frames wants A-B (A <= B) or A-, got '%s'", argv[i]);
        } else if (!strcmp(argv[i], "--pc")) {
            if (!cli_option_value(argc, argv, &i)) return CLI_USAGE;
            if (cli_parse_range(argv[i], &flt.pc_lo, &flt.pc_hi) || flt.pc_lo > flt.pc_hi)
                return cli_usage_error("--pc wants LO-HI (LO <= HI), got '%s'", argv[i]);
            flt.has_pc = 1;
        } else if (!strcmp(argv[i], "--tid")) {
            if (!cli_option_value(argc, argv, &i)) return CLI_USAGE;
            if (cli_parse_u64(argv[i], &flt.thread_id))
                return cli_usage_error("bad --tid '%s'", argv[i]);
            flt.has_tid = 1;
        } else if (cli_force_option(argv[i])) {
        } else if (cli_zstd_option(argv[i])) {
            if (cli_zstd_option(argv[i]) == CLI_USAGE) return CLI_USAGE;
        } else if (cli_trace_arg(argv[i], &in) != CLI_OK) {
            return CLI_USAGE;
        }
    }
    if (!in) return cli_usage_error("missing TRACE");
    if (!outpath) return cli_usage_error("missing -o OUT");
    if ((status = cli_output_open(&out, outpath, &in, 1)) != CLI_OK) return status;
    if (!(r = cli_open_reader(in, NULL))) {
        cli_output_abort(&out);
        return CLI_DATA;
    }
    if (frames_reader_header(r)->version == 1)
        cli_warn("version 1 trace: the slice is version 3 with an empty meta frame");
    frames_writer_options_like(r, &wo);
    if (!(w = cli_output_writer(&out, &wo, frames_reader_meta(r)))) {
        cli_output_abort(&out);
        frames_reader_close(r);
        return CLI_DATA;
    }
    cli_progress_start(&pg, "slice", flt.end != UINT64_MAX ? flt.end : cli_known_frames(r));
    rc = frames_slice(r, w, &flt, progress, &pg, &copied, &err);
    cli_progress_end(&pg);
    if (rc < 0) status = cli_lib_error(&err);
    cli_reader_warnings(r);
    rc = frames_writer_close(w);
    if (rc < 0 && status == CLI_OK)
        status = cli_fail(CLI_DATA, "cannot finish %s: %s", outpath, frames_strerror(rc));
    /* a slice that stopped at a bad frame is not the slice asked for: nothing is kept */
    if (status == CLI_OK) status = cli_output_commit(&out);
    else cli_output_abort(&out);
    frames_reader_close(r);
    if (status == CLI_OK && copied == 0) cli_warn("no frame selected: %s is an empty trace", outpath);
    return status;
}
