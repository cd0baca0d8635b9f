/* frames pt - decode Intel Processor Trace into a frames trace (libipt; frames_pt.h).
   Speaks ptxed's option language: a ptxed command line works with -o OUT.frames added. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static void usage(FILE *out) {
    fprintf(out,
        "usage: frames pt -o OUT.frames [options]        (ptxed's options, plus ours)\n"
        "\n"
        "Decode an Intel PT trace with libipt into a frames trace: one std_frame per\n"
        "instruction, exception frames for interrupts and gaps, modload frames for code.\n"
        "\n"
        "input (as ptxed):\n"
        "  --pt FILE[:FROM[-TO]]           the PT packet stream\n"
        "  --raw FILE[:FROM[-TO]]:ADDR     raw code bytes loaded at ADDR\n"
        "  --elf FILE[:BASE]               PT_LOAD segments of an ELF file (lowest at BASE)\n"
        "  --cpu none|F/M[/S]              cpu family/model/stepping: apply its errata\n"
        "  --mtc-freq N  --nom-freq N  --cpuid-0x15.eax N  --cpuid-0x15.ebx N\n"
        "  --filter:addrN_cfg C  --filter:addrN_a A  --filter:addrN_b B   (N = 0..3)\n"
        "  --insn-decoder | --block-decoder (default)  --block:end-on-call  --block:end-on-jump\n"
        "  --event:tick                    tick events (finer sideband placement)\n"
        "  --iscache-limit BYTES\n"
        "perf sideband (as ptxed; settings apply to the files named after them):\n"
        "  --pevent:primary FILE[:FROM[-TO]]   sideband of the traced cpu\n"
        "  --pevent:secondary FILE[:FROM[-TO]] sideband of other cpus\n"
        "  --pevent:sample-type N  --pevent:sample-config ID:TYPE\n"
        "  --pevent:time-zero N  --pevent:time-shift N  --pevent:time-mult N\n"
        "  --pevent:tsc-offset N  --pevent:kernel-start ADDR  --pevent:sysroot DIR\n"
        "  --pevent:kcore FILE[:BASE]  --pevent:vdso-x64 FILE  --pevent:vdso-x32 FILE\n"
        "  --pevent:vdso-ia32 FILE\n"
        "ours:\n"
        "  -o, --output FILE               the frames trace to write ('-' = stdout); not an\n"
        "                                  input, written under a temporary name renamed\n"
        "                                  when complete (docs/outputs.md)\n"
        "  -f, --force                     replace an existing output file\n"
        "  --perf FILE                     read trace, sideband and settings from perf.data\n"
        "  --perf-stream N                 only the N-th PT stream of the perf.data file\n"
        "  --print                         ptxed --no-inst output on stdout (honours the\n"
        "                                  display options below)\n"
        "  --tid N                         thread id when the sideband gives none (0)\n"
        "  --speculative skip|commit|all   TSX-speculative instructions (default skip)\n"
        "  --no-exceptions  --no-modload   leave those frames out\n"
        "  --json                          summary as JSON on stdout\n"
        "  --version                       versions of frames and libipt\n"
        "display (ptxed; used by --print, accepted otherwise):\n"
        "  --quiet|-q --event:ip --event:time --offset --time --raw-insn --stat --stat:insn\n"
        "  --stat:blocks --sb:compact|--sb --sb:verbose --sb:filename --sb:offset --sb:time\n"
        "  --sb:switch --sb:warn --no-inst --att --check --verbose|-v --block:show-blocks\n"
        "\n"
        "A summary (instructions, frames, events not written, gaps) goes to stderr.\n"
        "Exit status: 0 decoded (decode errors are reported gaps), 1 input/output error or\n"
        "no instruction decoded (then no output file), 2 usage error (an existing OUT\n"
        "without -f).\n");
}

#ifndef FRAMES_HAVE_IPT

int cmd_pt(int argc, char **argv) {
    if (cli_wants_help(argc, argv)) {
        usage(stdout);
        printf("\nThis build has no Intel PT support (libipt was not found).\n");
        return CLI_OK;
    }
    return cli_fail(CLI_DATA, "Intel PT support was not built: install libipt-dev "
                              "(intel-pt.h, -lipt) and rebuild");
}

#else

#include "frames_pt.h"

enum { IMG_RAW, IMG_ELF, IMG_KCORE };

typedef struct image_arg {
    int kind;
    char *path;
    uint64_t offset, size, addr;
    int has_addr;
} image_arg;

typedef struct pevent_arg {
    char *path;
    uint64_t offset, size;
    int primary;
    frames_pt_sb_config cfg;
} pevent_arg;

typedef struct pt_args {
    const char *output;
    char *pt_path;
    uint64_t pt_offset, pt_size;
    const char *perf;
    int perf_stream;       /* -1: all */
    frames_pt_options opt;
    int have_cpu;          /* --cpu given (overrides perf.data's cpu) */
    image_arg *images;
    size_t nimages;
    pevent_arg *pevents;
    size_t npevents;
    frames_pt_sb_config sb;   /* current --pevent:* settings */
    frames_pt_sample_id *ids;
    size_t nids;
    unsigned print_flags;
    int print, json, stat, stat_insn, stat_blocks;
} pt_args;

/* ptxed's FILE[:FROM[-TO]]: a suffix that does not parse belongs to the file name. */
static int split_range(char *arg, uint64_t *offset, uint64_t *size) {
    char *colon = strrchr(arg, ':'), *dash;
    uint64_t from, to;
    *offset = *size = 0;
    if (!colon || !colon[1]) return 0;
    dash = strchr(colon + 1, '-');
    if (dash) {
        *dash = 0;
        if (cli_parse_u64(colon + 1, &from) || cli_parse_u64(dash + 1, &to)) {
            *dash = '-';
            return 0;
        }
        if (to <= from) return -1;
        *offset = from;
        *size = to - from;
    } else {
        if (cli_parse_u64(colon + 1, &from)) return 0;
        *offset = from;
    }
    *colon = 0;
    return 0;
}

/* ptxed's FILE:BASE (required for --raw, optional for --elf). */
static int split_base(char *arg, uint64_t *base) {
    char *colon = strrchr(arg, ':');
    if (!colon || !colon[1] || cli_parse_u64(colon + 1, base)) return 0;
    *colon = 0;
    return 1;
}

static int add_image(pt_args *a, int kind, char *arg) {
    image_arg *im;
    a->images = (image_arg *)realloc(a->images, (a->nimages + 1) * sizeof *a->images);
    if (!a->images) return cli_fail(CLI_DATA, "out of memory");
    im = &a->images[a->nimages++];
    memset(im, 0, sizeof *im);
    im->kind = kind;
    im->has_addr = split_base(arg, &im->addr);
    if (kind == IMG_RAW) {
        if (!im->has_addr) return cli_usage_error("--raw %s: missing load address (FILE:ADDR)", arg);
        if (split_range(arg, &im->offset, &im->size) < 0)
            return cli_usage_error("--raw %s: bad range", arg);
    }
    im->path = arg;
    return CLI_OK;
}

static int add_pevent(pt_args *a, char *arg, int primary) {
    pevent_arg *p;
    a->pevents = (pevent_arg *)realloc(a->pevents, (a->npevents + 1) * sizeof *a->pevents);
    if (!a->pevents) return cli_fail(CLI_DATA, "out of memory");
    p = &a->pevents[a->npevents++];
    memset(p, 0, sizeof *p);
    if (split_range(arg, &p->offset, &p->size) < 0)
        return cli_usage_error("--pevent:%s %s: bad range", primary ? "primary" : "secondary", arg);
    p->path = arg;
    p->primary = primary;
    p->cfg = a->sb;   /* the settings given so far, as ptxed */
    return CLI_OK;
}

static int add_sample_config(pt_args *a, const char *arg) {
    char buf[64];
    const char *colon = strchr(arg, ':');
    frames_pt_sample_id id;
    if (!colon || (size_t)(colon - arg) >= sizeof buf) return -1;
    memcpy(buf, arg, (size_t)(colon - arg));
    buf[colon - arg] = 0;
    if (cli_parse_u64(buf, &id.id) || cli_parse_u64(colon + 1, &id.sample_type)) return -1;
    a->ids = (frames_pt_sample_id *)realloc(a->ids, (a->nids + 1) * sizeof *a->ids);
    if (!a->ids) return -1;
    a->ids[a->nids++] = id;
    a->sb.nsample_ids = a->nids;   /* the array may move: run() points at it */
    return 0;
}

/* Number options: name, where, width in bytes. */
static int num_arg(const char *opt, const char *val, uint64_t max, uint64_t *out) {
    if (!val) return cli_usage_error("%s: missing argument", opt);
    if (cli_parse_u64(val, out)) return cli_usage_error("%s: bad argument: %s", opt, val);
    if (*out > max) return cli_usage_error("%s: value too big: %s", opt, val);
    return CLI_OK;
}

static int filter_arg(pt_args *a, const char *opt, const char *val) {
    struct pt_conf_addr_filter *f = &a->opt.addr_filter;
    unsigned n = (unsigned)(opt[13] - '0');
    const char *what = opt + 14;
    uint64_t v;
    int rc;
    if (n > 3) return cli_usage_error("unknown option: %s", opt);
    if (!strcmp(what, "_cfg")) {
        if ((rc = num_arg(opt, val, 15, &v)) != CLI_OK) return rc;
        f->config.addr_cfg |= v << (4 * n);
        return CLI_OK;
    }
    if (strcmp(what, "_a") && strcmp(what, "_b")) return cli_usage_error("unknown option: %s", opt);
    if ((rc = num_arg(opt, val, UINT64_MAX, &v)) != CLI_OK) return rc;
    if (what[1] == 'a') {
        if (n == 0) f->addr0_a = v;
        if (n == 1) f->addr1_a = v;
        if (n == 2) f->addr2_a = v;
        if (n == 3) f->addr3_a = v;
    } else {
        if (n == 0) f->addr0_b = v;
        if (n == 1) f->addr1_b = v;
        if (n == 2) f->addr2_b = v;
        if (n == 3) f->addr3_b = v;
    }
    return CLI_OK;
}

struct flag_opt {
    const char *name;
    unsigned flag;
};

static const struct flag_opt print_opts[] = {
    {"--quiet", FRAMES_PT_PRINT_QUIET}, {"-q", FRAMES_PT_PRINT_QUIET},
    {"--event:ip", FRAMES_PT_PRINT_EVENT_IP}, {"--event:time", FRAMES_PT_PRINT_EVENT_TIME},
    {"--offset", FRAMES_PT_PRINT_OFFSET}, {"--time", FRAMES_PT_PRINT_TIME},
    {"--raw-insn", FRAMES_PT_PRINT_RAW}, {"--sb:filename", FRAMES_PT_PRINT_SB_FILENAME},
    {"--sb:offset", FRAMES_PT_PRINT_SB_OFFSET}, {"--sb:time", FRAMES_PT_PRINT_SB_TIME},
    {"--sb:switch", FRAMES_PT_PRINT_SB_SWITCH}, {"--sb:warn", FRAMES_PT_PRINT_SB_WARN},
};

/* Accepted for compatibility; they only change ptxed's disassembly or checks. */
static const char *const ignored_opts[] = {"--no-inst", "--att", "--check", "--verbose", "-v",
                                           "--block:show-blocks", "--event:iflags"};

static int parse_args(pt_args *a, int argc, char **argv) {
    const char *decoder_flag = NULL;   /* one decoder */
    int i, rc;
    size_t k;
    for (i = 1; i < argc; i++) {
        char *o = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        uint64_t v;
        int matched = 0;
        for (k = 0; k < sizeof print_opts / sizeof print_opts[0]; k++)
            if (!strcmp(o, print_opts[k].name)) {
                a->print_flags |= print_opts[k].flag;
                matched = 1;
            }
        for (k = 0; k < sizeof ignored_opts / sizeof ignored_opts[0]; k++)
            if (!strcmp(o, ignored_opts[k])) matched = 1;
        if (matched) continue;
        if (!strcmp(o, "--sb:compact") || !strcmp(o, "--sb")) {
            a->print_flags = (a->print_flags & ~FRAMES_PT_PRINT_SB_VERBOSE) | FRAMES_PT_PRINT_SB_COMPACT;
        } else if (!strcmp(o, "--sb:verbose")) {
            a->print_flags = (a->print_flags & ~FRAMES_PT_PRINT_SB_COMPACT) | FRAMES_PT_PRINT_SB_VERBOSE;
        } else if (!strcmp(o, "--stat")) {
            a->stat = 1;
        } else if (!strcmp(o, "--stat:insn")) {
            a->stat = a->stat_insn = 1;
        } else if (!strcmp(o, "--stat:blocks")) {
            a->stat = a->stat_blocks = 1;
        } else if (!strcmp(o, "--print")) {
            a->print = 1;
        } else if (!strcmp(o, "--json")) {
            a->json = 1;
        } else if (cli_zstd_option(o)) {
            if (cli_zstd_option(o) == CLI_USAGE) return CLI_USAGE;
        } else if (!strcmp(o, "--insn-decoder") || !strcmp(o, "--block-decoder")) {
            if (cli_exclusive(&decoder_flag, o) != CLI_OK) return CLI_USAGE;
            a->opt.decoder = o[2] == 'i' ? FRAMES_PT_DECODER_INSN : FRAMES_PT_DECODER_BLOCK;
        } else if (!strcmp(o, "--block:end-on-call")) {
            a->opt.end_on_call = 1;
        } else if (!strcmp(o, "--block:end-on-jump")) {
            a->opt.end_on_jump = 1;
        } else if (!strcmp(o, "--event:tick")) {
            a->opt.tick_events = 1;
        } else if (!strcmp(o, "--no-exceptions")) {
            a->opt.flags |= FRAMES_PT_NO_EXCEPTION_FRAMES;
        } else if (!strcmp(o, "--no-modload")) {
            a->opt.flags |= FRAMES_PT_NO_MODLOAD_FRAMES;
        } else if (cli_force_option(o)) {
        } else if (!val) {
            if (!strncmp(o, "-", 1) && strcmp(o, "-")) {
                int known = !strcmp(o, "-o") || !strcmp(o, "--output") || !strncmp(o, "--pt", 4) ||
                            !strncmp(o, "--raw", 5) || !strncmp(o, "--elf", 5) ||
                            !strncmp(o, "--pevent:", 9) || !strncmp(o, "--filter:", 9) ||
                            !strncmp(o, "--cpu", 5) || !strcmp(o, "--perf") ||
                            !strcmp(o, "--perf-stream") || !strcmp(o, "--tid") ||
                            !strcmp(o, "--speculative") || !strcmp(o, "--mtc-freq") ||
                            !strcmp(o, "--nom-freq") || !strcmp(o, "--iscache-limit");
                if (known && !cli_option_value(argc, argv, &i)) return CLI_USAGE;
                return cli_usage_error("unknown option: %s", o);
            }
            return cli_usage_error("unexpected argument: %s", o);
        } else {
            i++;   /* every option below takes a value */
            if (!strcmp(o, "-o") || !strcmp(o, "--output")) {
                a->output = val;
            } else if (!strcmp(o, "--pt")) {
                if (a->pt_path) return cli_usage_error("duplicate pt sources: %s", val);
                if (split_range(val, &a->pt_offset, &a->pt_size) < 0)
                    return cli_usage_error("--pt %s: bad range", val);
                a->pt_path = val;
            } else if (!strcmp(o, "--raw")) {
                if ((rc = add_image(a, IMG_RAW, val)) != CLI_OK) return rc;
            } else if (!strcmp(o, "--elf")) {
                if ((rc = add_image(a, IMG_ELF, val)) != CLI_OK) return rc;
            } else if (!strcmp(o, "--pevent:kcore")) {
                if ((rc = add_image(a, IMG_KCORE, val)) != CLI_OK) return rc;
            } else if (!strcmp(o, "--cpu")) {
                if (frames_pt_parse_cpu(val, &a->opt.cpu) < 0)
                    return cli_usage_error("cpu must be specified as f/m[/s]");
                a->have_cpu = 1;
            } else if (!strcmp(o, "--mtc-freq")) {
                if ((rc = num_arg(o, val, 0xff, &v)) != CLI_OK) return rc;
                a->opt.mtc_freq = (uint8_t)v;
            } else if (!strcmp(o, "--nom-freq")) {
                if ((rc = num_arg(o, val, 0xff, &v)) != CLI_OK) return rc;
                a->opt.nom_freq = (uint8_t)v;
            } else if (!strcmp(o, "--cpuid-0x15.eax") || !strcmp(o, "--cpuid-0x15.ebx")) {
                if ((rc = num_arg(o, val, 0xffffffffu, &v)) != CLI_OK) return rc;
                if (o[15] == 'a') a->opt.cpuid_0x15_eax = (uint32_t)v;
                else a->opt.cpuid_0x15_ebx = (uint32_t)v;
            } else if (!strncmp(o, "--filter:addr", 13)) {
                if ((rc = filter_arg(a, o, val)) != CLI_OK) return rc;
            } else if (!strcmp(o, "--iscache-limit")) {
                if ((rc = num_arg(o, val, UINT64_MAX, &a->opt.iscache_limit)) != CLI_OK) return rc;
            } else if (!strcmp(o, "--pevent:primary") || !strcmp(o, "--pevent:secondary")) {
                if ((rc = add_pevent(a, val, o[9] == 'p')) != CLI_OK) return rc;
            } else if (!strcmp(o, "--pevent:sample-type")) {
                if ((rc = num_arg(o, val, UINT64_MAX, &a->sb.sample_type)) != CLI_OK) return rc;
            } else if (!strcmp(o, "--pevent:sample-config")) {
                if (add_sample_config(a, val) < 0)
                    return cli_usage_error("bad sample config %s (want ID:SAMPLE_TYPE)", val);
            } else if (!strcmp(o, "--pevent:time-zero")) {
                if ((rc = num_arg(o, val, UINT64_MAX, &a->sb.time_zero)) != CLI_OK) return rc;
            } else if (!strcmp(o, "--pevent:time-shift")) {
                if ((rc = num_arg(o, val, 0xffff, &v)) != CLI_OK) return rc;
                a->sb.time_shift = (uint16_t)v;
            } else if (!strcmp(o, "--pevent:time-mult")) {
                if ((rc = num_arg(o, val, 0xffffffffu, &v)) != CLI_OK) return rc;
                a->sb.time_mult = (uint32_t)v;
            } else if (!strcmp(o, "--pevent:tsc-offset")) {
                if ((rc = num_arg(o, val, UINT64_MAX, &a->sb.tsc_offset)) != CLI_OK) return rc;
            } else if (!strcmp(o, "--pevent:kernel-start")) {
                if ((rc = num_arg(o, val, UINT64_MAX, &a->sb.kernel_start)) != CLI_OK) return rc;
            } else if (!strcmp(o, "--pevent:sysroot")) {
                a->sb.sysroot = val;
            } else if (!strcmp(o, "--pevent:vdso-x64")) {
                a->sb.vdso_x64 = val;
            } else if (!strcmp(o, "--pevent:vdso-x32")) {
                a->sb.vdso_x32 = val;
            } else if (!strcmp(o, "--pevent:vdso-ia32")) {
                a->sb.vdso_ia32 = val;
            } else if (!strcmp(o, "--perf")) {
                a->perf = val;
            } else if (!strcmp(o, "--perf-stream")) {
                if ((rc = num_arg(o, val, 0x7fffffff, &v)) != CLI_OK) return rc;
                a->perf_stream = (int)v;
            } else if (!strcmp(o, "--tid")) {
                if ((rc = num_arg(o, val, UINT64_MAX, &a->opt.default_tid)) != CLI_OK) return rc;
            } else if (!strcmp(o, "--speculative")) {
                if (!strcmp(val, "skip")) a->opt.speculative = FRAMES_PT_SPEC_SKIP;
                else if (!strcmp(val, "commit")) a->opt.speculative = FRAMES_PT_SPEC_COMMIT;
                else if (!strcmp(val, "all")) a->opt.speculative = FRAMES_PT_SPEC_ALL;
                else return cli_usage_error("--speculative: skip, commit or all, not %s", val);
            } else {
                return cli_usage_error("unknown option: %s", o);
            }
        }
    }
    if (!a->output && !a->print) return cli_usage_error("no output: give -o OUT.frames (or --print)");
    if (!a->pt_path && !a->perf) return cli_usage_error("no pt file: give --pt FILE or --perf FILE");
    if (a->pt_path && a->perf) return cli_usage_error("--pt and --perf exclude each other");
    if (a->perf && a->npevents) return cli_usage_error("--perf brings its own sideband: no --pevent:primary/secondary");
    if (a->json && a->print) return cli_usage_error("--json and --print both write to stdout");
    if ((a->print || a->json || a->stat) && a->output && !strcmp(a->output, "-"))
        return cli_usage_error("-o - writes the trace to stdout: no --print, --json or --stat");
    return CLI_OK;
}

/* Totals over every decoded stream. */
static void add_stats(frames_pt_stats *t, const frames_pt_stats *s) {
    size_t i;
    t->insns += s->insns;
    t->blocks += s->blocks;
    t->std_frames += s->std_frames;
    t->exception_frames += s->exception_frames;
    t->modload_frames += s->modload_frames;
    t->speculative += s->speculative;
    t->speculative_unwritten += s->speculative_unwritten;
    for (i = 0; i < 32; i++) t->events[i] += s->events[i];
    t->events_other += s->events_other;
    t->status_updates += s->status_updates;
    t->events_unwritten += s->events_unwritten;
    t->gaps += s->gaps;
    t->sync_errors += s->sync_errors;
    for (i = 0; i < s->ngaps_recorded && t->ngaps_recorded < FRAMES_PT_MAX_GAPS; i++)
        t->gap[t->ngaps_recorded++] = s->gap[i];
    t->end_of_trace += s->end_of_trace;
    t->sb_records += s->sb_records;
    t->sb_warnings += s->sb_warnings;
    t->sb_errors += s->sb_errors;
    t->context_switches += s->context_switches;
    t->reconstruct_errors += s->reconstruct_errors;
    t->trace_bytes += s->trace_bytes;
    if (s->config_error) t->config_error = s->config_error;
}

typedef struct progress_ctx {
    cli_progress bar;
    uint64_t base;   /* bytes of earlier streams */
} progress_ctx;

static void on_progress(void *ctx, uint64_t done, uint64_t total) {
    progress_ctx *p = (progress_ctx *)ctx;
    (void)total;
    cli_progress_update(&p->bar, p->base + done);
}

static void summary(const pt_args *a, const frames_pt_stats *s, uint64_t streams) {
    size_t i;
    if (a->json) {
        printf("{\"streams\":%llu,\"trace_bytes\":%llu,\"insns\":%llu,\"blocks\":%llu,"
               "\"std_frames\":%llu,\"exception_frames\":%llu,\"modload_frames\":%llu,"
               "\"speculative\":%llu,\"speculative_unwritten\":%llu,\"events\":{",
               (unsigned long long)streams, (unsigned long long)s->trace_bytes,
               (unsigned long long)s->insns, (unsigned long long)s->blocks,
               (unsigned long long)s->std_frames, (unsigned long long)s->exception_frames,
               (unsigned long long)s->modload_frames, (unsigned long long)s->speculative,
               (unsigned long long)s->speculative_unwritten);
        for (i = 0; i < 20; i++)
            printf("%s\"%s\":%llu", i ? "," : "", frames_pt_event_name((int)i),
                   (unsigned long long)s->events[i]);
        printf(",\"other\":%llu},\"events_unwritten\":%llu,\"status_updates\":%llu,"
               "\"gaps\":%llu,\"sync_errors\":%llu,\"end_of_trace\":%llu,\"sb_records\":%llu,"
               "\"sb_warnings\":%llu,\"sb_errors\":%llu,\"context_switches\":%llu,"
               "\"reconstruct_errors\":%llu,\"config_error\":",
               (unsigned long long)s->events_other, (unsigned long long)s->events_unwritten,
               (unsigned long long)s->status_updates, (unsigned long long)s->gaps,
               (unsigned long long)s->sync_errors, (unsigned long long)s->end_of_trace,
               (unsigned long long)s->sb_records, (unsigned long long)s->sb_warnings,
               (unsigned long long)s->sb_errors, (unsigned long long)s->context_switches,
               (unsigned long long)s->reconstruct_errors);
        if (s->config_error) cli_json_string(stdout, pt_errstr(pt_errcode(s->config_error)),
                                             strlen(pt_errstr(pt_errcode(s->config_error))));
        else printf("null");
        printf(",\"gap_list\":[");
        for (i = 0; i < s->ngaps_recorded; i++) {
            const char *m = pt_errstr(pt_errcode(s->gap[i].code));
            printf("%s{\"offset\":%llu,\"ip\":%llu,\"error\":", i ? "," : "",
                   (unsigned long long)s->gap[i].offset, (unsigned long long)s->gap[i].ip);
            cli_json_string(stdout, m, strlen(m));
            printf("}");
        }
        printf("]}\n");
        return;
    }
    if (a->print_flags & FRAMES_PT_PRINT_QUIET) return;
    fprintf(stderr, "frames pt: %llu instructions -> %llu std, %llu exception, %llu modload frames",
            (unsigned long long)s->insns, (unsigned long long)s->std_frames,
            (unsigned long long)s->exception_frames, (unsigned long long)s->modload_frames);
    if (s->speculative)
        fprintf(stderr, "; %llu speculative (%llu not written)", (unsigned long long)s->speculative,
                (unsigned long long)s->speculative_unwritten);
    fprintf(stderr, "\n");
    if (s->events_unwritten) {
        int first = 1;
        fprintf(stderr, "frames pt: events without a frame:");
        for (i = 0; i < 32; i++) {
            uint64_t n = s->events[i];
            if ((i == ptev_async_branch || i == ptev_overflow) &&
                !(a->opt.flags & FRAMES_PT_NO_EXCEPTION_FRAMES))
                continue;
            if (!n) continue;
            fprintf(stderr, "%s %s %llu", first ? "" : ",", frames_pt_event_name((int)i),
                    (unsigned long long)n);
            first = 0;
        }
        if (s->events_other) fprintf(stderr, ", other %llu", (unsigned long long)s->events_other);
        fprintf(stderr, "\n");
    }
    if (s->gaps || s->sync_errors)
        fprintf(stderr, "frames pt: %llu decode gaps, %llu sync errors (first at trace offset 0x%llx: %s)\n",
                (unsigned long long)s->gaps, (unsigned long long)s->sync_errors,
                (unsigned long long)(s->ngaps_recorded ? s->gap[0].offset : 0),
                s->ngaps_recorded ? pt_errstr(pt_errcode(s->gap[0].code)) : "");
    if (s->sb_warnings || s->sb_errors)
        fprintf(stderr, "frames pt: sideband: %llu warnings, %llu errors (--print --sb:warn shows them)\n",
                (unsigned long long)s->sb_warnings, (unsigned long long)s->sb_errors);
    if (s->reconstruct_errors)
        fprintf(stderr, "frames pt: %llu blocks could not be rebuilt (try --insn-decoder)\n",
                (unsigned long long)s->reconstruct_errors);
}

/* Images and sideband files of the command line into a session. */
static int setup(const pt_args *a, frames_pt *pt, frames_error *err) {
    size_t i;
    int rc = FRAMES_OK;
    for (i = 0; i < a->nimages && rc == FRAMES_OK; i++) {
        const image_arg *im = &a->images[i];
        if (im->kind == IMG_RAW)
            rc = frames_pt_add_raw(pt, im->path, im->offset, im->size, im->addr, err);
        else if (im->kind == IMG_ELF)
            rc = frames_pt_add_elf(pt, im->path, im->addr, im->has_addr, err);
        else
            rc = frames_pt_add_kcore(pt, im->path, im->addr, im->has_addr, err);
    }
    for (i = 0; i < a->npevents && rc == FRAMES_OK; i++) {
        const pevent_arg *p = &a->pevents[i];
        rc = frames_pt_load_pevent(pt, &p->cfg, p->path, p->offset, p->size, p->primary, err);
    }
    return rc;
}

static int decode_one(const pt_args *a, frames_pt_options *o, frames_perf *pd, size_t stream,
                      frames_writer *w, frames_pt_printer *pr, progress_ctx *prog,
                      frames_pt_stats *total) {
    frames_pt *pt = NULL;
    frames_pt_stats st;
    frames_pt_callbacks cb;
    frames_error err;
    int rc;
    if ((rc = frames_pt_open(&pt, o, &err)) < 0) return cli_lib_error(&err);
    rc = setup(a, pt, &err);
    if (rc == FRAMES_OK)
        rc = pd ? frames_perf_attach(pd, stream, pt, &a->sb, &err)
                : frames_pt_load_trace(pt, a->pt_path, a->pt_offset, a->pt_size, &err);
    if (rc == FRAMES_OK) {
        if (a->print) cb = frames_pt_printer_callbacks(pr);
        else memset(&cb, 0, sizeof cb);
        cb.progress = on_progress;
        cb.ctx = a->print ? (void *)pr : (void *)prog;
        if (a->print) cb.progress = NULL;   /* stdout is busy; the bar would interleave */
        frames_pt_set_callbacks(pt, &cb);
        rc = frames_pt_decode(pt, w, &st, &err);
        add_stats(total, &st);
        prog->base += st.trace_bytes;
    }
    frames_pt_close(pt);
    if (rc < 0) return cli_lib_error(&err);
    return CLI_OK;
}

static void print_stats(const pt_args *a, const frames_pt_stats *s) {
    int insn = a->stat_insn, blocks = a->stat_blocks;
    if (!insn && !blocks) {   /* ptxed: --stat alone selects everything of the decoder */
        insn = 1;
        blocks = a->opt.decoder == FRAMES_PT_DECODER_BLOCK;
    }
    if (insn) printf("insn: %llu.\n", (unsigned long long)s->insns);
    if (blocks) printf("blocks:\t%llu.\n", (unsigned long long)s->blocks);
}

/* Every file the command reads, for the output rule (an output is none of them). */
static const char **input_paths(const pt_args *a, size_t *n) {
    const char **in = (const char **)malloc((a->nimages + a->npevents + 2) * sizeof *in);
    size_t i;
    *n = 0;
    if (!in) return NULL;
    in[(*n)++] = a->pt_path;
    in[(*n)++] = a->perf;
    for (i = 0; i < a->nimages; i++) in[(*n)++] = a->images[i].path;
    for (i = 0; i < a->npevents; i++) in[(*n)++] = a->pevents[i].path;
    return in;
}

/* The output trace of run(): opened (the output rule), the writer on it. */
static int open_output(const pt_args *a, cli_output *out, frames_writer **w,
                       const frames_writer_options *wo, const frames_meta *meta) {
    size_t n;
    const char **in = input_paths(a, &n);
    int rc;
    if (!in) return cli_fail(CLI_DATA, "out of memory");
    rc = cli_output_open(out, a->output, in, n);
    free(in);
    if (rc != CLI_OK) return rc;
    if (!(*w = cli_output_writer(out, wo, meta))) {
        cli_output_abort(out);
        return CLI_DATA;
    }
    return CLI_OK;
}

static int run(pt_args *a, int argc, char **argv) {
    frames_writer *w = NULL;
    cli_output out;
    frames_writer_options wo;
    frames_meta meta;
    frames_bytes args[64];
    frames_perf *pd = NULL;
    frames_pt_printer pr;
    frames_pt_stats total;
    progress_ctx prog;
    frames_error err;
    uint64_t streams = 0;
    size_t i, nargs = 0;
    int rc = CLI_OK, wrc;
    memset(&total, 0, sizeof total);
    memset(&prog, 0, sizeof prog);
    frames_pt_printer_init(&pr, stdout, a->print_flags);
    for (i = 0; i < a->npevents; i++) a->pevents[i].cfg.sample_ids = a->ids;
    a->sb.sample_ids = a->ids;
    if (a->perf && frames_perf_open_path(&pd, a->perf, NULL, &err) < 0) return cli_lib_error(&err);
    if (a->output) {
        frames_writer_options_default(&wo);
        wo.arch = FRAMES_ARCH_I386;
        wo.machine = FRAMES_MACH_X86_64;
        memset(&meta, 0, sizeof meta);
        meta.tracer_name = frames_str("frames-pt");
        meta.tracer_version = frames_str(FRAMES_LIB_VERSION);
        for (i = 0; i < (size_t)argc && nargs < 64; i++) args[nargs++] = frames_str(argv[i]);
        meta.tracer_args = args;
        meta.ntracer_args = (uint32_t)nargs;
        meta.target_path = frames_str(a->perf ? a->perf : a->pt_path);
        if ((rc = open_output(a, &out, &w, &wo, &meta)) != CLI_OK) {
            frames_perf_close(pd);
            return rc;
        }
    }
    if (pd) {
        const frames_perf_info *in = frames_perf_info_get(pd);
        uint64_t bytes = 0;
        size_t n = frames_perf_nstreams(pd);
        if (!n) rc = cli_fail(CLI_DATA, "%s: no Intel PT data (AUXTRACE records)", a->perf);
        if (a->perf_stream >= 0 && (size_t)a->perf_stream >= n && rc == CLI_OK)
            rc = cli_fail(CLI_DATA, "%s: no PT stream %d (%zu streams)", a->perf, a->perf_stream, n);
        for (i = 0; i < n; i++) bytes += frames_perf_stream_at(pd, i)->size;
        cli_progress_start(&prog.bar, "decoding", bytes);
        if (in->compressed) cli_warn("%s: compressed records were skipped (perf record -z)", a->perf);
        if (in->unterminated)
            cli_warn("%s: perf record did not finish (data size 0): read to the end of the file; "
                     "no feature sections (give --cpu F/M/S)", a->perf);
        if (in->cut_offset)
            cli_warn("%s: the file ends inside the record at offset 0x%llx (%llu bytes missing): "
                     "everything before it is decoded", a->perf, (unsigned long long)in->cut_offset,
                     (unsigned long long)in->cut_missing);
        if (!a->json && !(a->print_flags & FRAMES_PT_PRINT_QUIET))
            fprintf(stderr, "frames pt: %s: %zu PT streams, %llu sideband records, %llu other "
                            "records not used\n", a->perf, n,
                    (unsigned long long)in->sideband_records, (unsigned long long)in->skipped_records);
        for (i = 0; i < n && rc == CLI_OK; i++) {
            frames_pt_options o = a->opt;
            if ((int)i != a->perf_stream && a->perf_stream >= 0) continue;
            frames_perf_pt_options(pd, &o);
            if (a->have_cpu) o.cpu = a->opt.cpu;
            if (a->opt.mtc_freq) o.mtc_freq = a->opt.mtc_freq;
            if (a->opt.nom_freq) o.nom_freq = a->opt.nom_freq;
            if (a->opt.cpuid_0x15_eax) o.cpuid_0x15_eax = a->opt.cpuid_0x15_eax;
            if (a->opt.cpuid_0x15_ebx) o.cpuid_0x15_ebx = a->opt.cpuid_0x15_ebx;
            rc = decode_one(a, &o, pd, i, w, &pr, &prog, &total);
            streams++;
        }
    } else {
        frames_pt_options o = a->opt;
        FILE *f = fopen(a->pt_path, "rb");
        uint64_t bytes = 0;
        if (f && fseek(f, 0, SEEK_END) == 0) bytes = (uint64_t)ftell(f);
        if (f) fclose(f);
        cli_progress_start(&prog.bar, "decoding", bytes);
        rc = decode_one(a, &o, NULL, 0, w, &pr, &prog, &total);
        streams = 1;
    }
    cli_progress_end(&prog.bar);
    if (w) {
        wrc = frames_writer_finish(w);
        if (wrc < 0 && rc == CLI_OK)
            rc = cli_fail(CLI_DATA, "%s: %s", a->output, frames_writer_error(w)->message);
        if (frames_writer_close(w) < 0 && rc == CLI_OK)
            rc = cli_fail(CLI_DATA, "%s: cannot close", a->output);
    }
    if (rc == CLI_OK && total.insns == 0 && (total.gaps || total.sync_errors))
        /* only errors: wrong images or addresses, not a trace without instructions */
        rc = cli_fail(CLI_DATA, "no instruction decoded from %s (%llu decode gaps): check --raw/--elf "
                      "images and their addresses", a->perf ? a->perf : a->pt_path,
                      (unsigned long long)total.gaps);
    if (w && rc == CLI_OK) rc = cli_output_commit(&out);
    else if (w) cli_output_abort(&out);
    frames_perf_close(pd);
    if (a->stat) print_stats(a, &total);
    /* a write error on stdout (the printer's, the summary's) is reported as the command ends */
    if (rc == CLI_OK) summary(a, &total, streams);
    return rc;
}

int cmd_pt(int argc, char **argv) {
    pt_args a;
    int rc;
    if (cli_wants_help(argc, argv)) {
        usage(stdout);
        return CLI_OK;
    }
    if (argc == 2 && !strcmp(argv[1], "--version")) {
        struct pt_version v = pt_library_version();
        printf("frames pt %s, libipt %u.%u.%u\n", FRAMES_LIB_VERSION, (unsigned)v.major,
               (unsigned)v.minor, (unsigned)v.patch);
        return CLI_OK;
    }
    memset(&a, 0, sizeof a);
    frames_pt_options_default(&a.opt);
    frames_pt_sb_config_default(&a.sb);
    a.perf_stream = -1;
    rc = parse_args(&a, argc, argv);
    if (rc == CLI_OK) rc = run(&a, argc, argv);
    free(a.images);
    free(a.pevents);
    free(a.ids);
    return rc;
}

#endif /* FRAMES_HAVE_IPT */
