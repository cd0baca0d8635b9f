/* frames tenet - a Tenet text trace (register deltas, mr=/mw=) for the Tenet plugin of
   IDA Pro and Binary Ninja. The conversion rules live in frames_interop.h. */
#include <errno.h>
#include <string.h>

#include "cli.h"
#include "frames_interop.h"

static void usage(FILE *out) {
    fprintf(out,
            "usage: frames tenet TRACE [-o OUT.log [-f]] [--tid T] [--arch x86|amd64|arm32]\n\n"
            "Write one thread of the trace as a Tenet trace: one line per instruction with the\n"
            "registers that changed, the pc, and the memory the previous instruction read\n"
            "(mr=ADDR:HEX) and wrote (mw=ADDR:HEX), as Tenet's own tracers write it. The first\n"
            "line gives every register the thread reads before writing it (its initial value);\n"
            "the ones it cannot give are named on stderr.\n\n"
            "  -o, --output FILE   output (default: standard output); not TRACE, written under a\n"
            "                      temporary name renamed when complete (docs/outputs.md)\n"
            "  -f, --force         replace an existing output file\n"
            "  --tid T             the thread to convert (default: the first one; a thread\n"
            "                      without instructions is an error)\n"
            "  --arch A            register set, when the trace header does not give one\n\n"
            "Only the Tenet register set of the architecture is written (x86: eax..edi, eip;\n"
            "amd64: rax..r15, rip; arm32: r0..r12, sp, lr, pc); BAP names like R_EAX are\n"
            "accepted. See docs/interop.md.\n\n"
            "Exit status: 0 ok, 1 unreadable input, no instruction to write or a write error\n"
            "(then no output file), 2 usage error (an existing output without -f).\n");
}

/* Tenet warns about every register the first line does not give: say why. */
static void note_missing_initial(frames_tenet_arch arch, const frames_tenet_info *info) {
    char written[160] = "", unused[160] = "";
    const char *name;
    unsigned i;
    for (i = 0; (name = frames_tenet_arch_reg(arch, i)) != NULL; i++) {
        char *list = (info->written_first >> i) & 1 ? written : (info->initial >> i) & 1 ? NULL : unused;
        if (list) snprintf(list + strlen(list), 160 - strlen(list), " %s", name);
    }
    if (written[0] || unused[0])
        cli_warn("Tenet will report these registers missing from the first line: %s%s%s%s%s",
                 written[0] ? "written before read:" : "", written, written[0] && unused[0] ? "; " : "",
                 unused[0] ? info->first_line_cut ? "not read in the lines held back:" : "never read:" : "",
                 unused);
}

struct tenet_run {
    frames_tenet *t;
    FILE *out;
    cli_output o;
};

/* The tenet writer stopped: say why (a full disk: the output's errno). */
static int write_error(struct tenet_run *run) {
    if (ferror(run->out))
        return cli_fail(CLI_DATA, "cannot write %s: %s", strcmp(run->o.path, "-") ? run->o.path : "standard output",
                        strerror(errno));
    return cli_lib_error(frames_tenet_error(run->t));
}

static int feed(void *ctx, const frames_frame *f, uint64_t index) {
    struct tenet_run *run = (struct tenet_run *)ctx;
    (void)index;
    if (frames_tenet_add_frame(run->t, f, frames_out_file, run->out) < 0)
        return write_error(run);
    return 0;
}

int cmd_tenet(int argc, char **argv) {
    const char *in = NULL, *outpath = "-", *archname = NULL;
    uint64_t tid = 0;
    int have_tid = 0, i, rc;
    frames_reader *r;
    frames_tenet_arch arch;
    frames_tenet_info info;
    frames_error err;
    struct tenet_run run;
    if (cli_wants_help(argc, argv)) {
        usage(stdout);
        return CLI_OK;
    }
    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-o") || !strcmp(argv[i], "--output")) {
            if (!(outpath = cli_option_value(argc, argv, &i))) return CLI_USAGE;
        } else if (!strcmp(argv[i], "--tid")) {
            if (!cli_option_value(argc, argv, &i)) return CLI_USAGE;
            if (cli_parse_u64(argv[i], &tid)) return cli_usage_error("bad --tid '%s'", argv[i]);
            have_tid = 1;
        } else if (!strcmp(argv[i], "--arch")) {
            if (!(archname = cli_option_value(argc, argv, &i))) return CLI_USAGE;
        } else if (cli_force_option(argv[i])) {
        } else if (cli_trace_arg(argv[i], &in) != CLI_OK) {
            return CLI_USAGE;
        }
    }
    if (!in) return cli_usage_error("missing TRACE");
    if (archname && frames_tenet_arch_parse(archname) == FRAMES_TENET_NONE)
        return cli_usage_error("unknown --arch '%s' (x86, amd64 or arm32)", archname);
    if (!(r = cli_open_reader(in, NULL))) return CLI_DATA;
    if (archname) {
        arch = frames_tenet_arch_parse(archname);
    } else {
        const frames_header *h = frames_reader_header(r);
        arch = frames_tenet_arch_of(h->arch, h->machine);
        if (arch == FRAMES_TENET_NONE) {
            const char *name = frames_arch_name(h->arch);
            rc = cli_fail(CLI_DATA, "Tenet has no register set for arch %llu (%s); Tenet "
                          "knows x86, amd64 and arm32 (--arch)",
                          (unsigned long long)h->arch, name);
            frames_reader_close(r);
            return rc;
        }
    }
    if (frames_tenet_open(&run.t, arch, have_tid ? &tid : NULL, NULL, &err) < 0) {
        frames_reader_close(r);
        return cli_lib_error(&err);
    }
    if ((rc = cli_output_open(&run.o, outpath, &in, 1)) != CLI_OK || !(run.out = cli_output_stream(&run.o))) {
        if (rc == CLI_OK) cli_output_abort(&run.o);
        frames_tenet_close(run.t);
        frames_reader_close(r);
        return rc == CLI_OK ? CLI_DATA : rc;
    }
    rc = cli_for_each_frame(r, "tenet", feed, &run);
    if (rc == CLI_OK && frames_tenet_finish(run.t, frames_out_file, run.out) < 0) rc = write_error(&run);
    frames_tenet_info_get(run.t, &info);
    if (!info.lines && rc == CLI_OK)
        rc = have_tid ? cli_fail(CLI_DATA, "thread %llu has no instruction (std_frame) in the trace",
                                 (unsigned long long)tid)
                      : cli_fail(CLI_DATA, "no instruction (std_frame) to write");
    if (rc == CLI_OK) rc = cli_output_commit(&run.o);
    else cli_output_abort(&run.o);
    if (info.other_threads && rc == CLI_OK)
        cli_warn("thread %llu converted; %llu instructions of other threads skipped (--tid)",
                 (unsigned long long)info.thread_id, (unsigned long long)info.other_threads);
    if (info.lines && rc == CLI_OK) note_missing_initial(arch, &info);
    frames_tenet_close(run.t);
    frames_reader_close(r);
    return rc;
}
