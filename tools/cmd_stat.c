/* frames stat - what a trace contains: frames by kind, instructions, unique pcs, threads,
   per-module coverage, hottest pcs, syscalls. The counting lives in frames_interop.h. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "frames_interop.h"

static void usage(FILE *out) {
    fprintf(out,
            "usage: frames stat TRACE [--json] [--top N] [--module NAME:LO-HI]... [--sysroot DIR]\n"
            "                   [--no-symbols]\n\n"
            "Frame counts by kind, instructions (std_frames), unique pcs, threads, per-module\n"
            "coverage (modules from modload frames), the N hottest pcs (default 10) with their\n"
            "names (module!symbol+offset at file:line, docs/symbols.md) and the syscall\n"
            "histogram with syscall names. TRACE may be '-' (standard input).\n\n"
            "  --json                one JSON object (schema in docs/interop.md)\n"
            "  --top N               how many hottest pcs to list\n"
            CLI_NAMES_USAGE CLI_EXIT_STATUS);
}

typedef struct stat_run {
    frames_stats *stats;
    cli_names names;
    int abi;              /* syscall names (frames_sym_abi) */
} stat_run;

static int feed(void *ctx, const frames_frame *f, uint64_t index) {
    stat_run *run = (stat_run *)ctx;
    (void)index;
    if (frames_stats_add_frame(run->stats, f) < 0) return cli_lib_error(frames_stats_error(run->stats));
    if (f->kind == FRAMES_KIND_MODLOAD) cli_names_frame(&run->names, f);
    return 0;
}

/* The --module options make the modules table (the trace's modload frames are then
   ignored), as they make the names. */
static int add_modules(stat_run *run) {
    int k;
    for (k = 0; k < run->names.nmodules; k++) {
        size_t len;
        uint64_t lo, hi;
        cli_parse_module(run->names.modules[k], &len, &lo, &hi);
        if (frames_stats_add_module(run->stats, run->names.modules[k], len, lo, hi) < 0)
            return cli_lib_error(frames_stats_error(run->stats));
    }
    return CLI_OK;
}

static int feed_std(void *ctx, uint64_t address, uint64_t thread_id, size_t nrawbytes, uint64_t index) {
    stat_run *run = (stat_run *)ctx;
    (void)index;
    if (frames_stats_add_std(run->stats, address, thread_id, nrawbytes) < 0)
        return cli_lib_error(frames_stats_error(run->stats));
    return 0;
}

static double percent(uint64_t part, uint64_t whole) {
    return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

static void print_text(stat_run *run, const frames_stats_count *hot, size_t nhot) {
    const frames_stats *s = run->stats;
    char name[1024];
    frames_stats_summary sum;
    const frames_stats_thread *th;
    const frames_stats_module *mods;
    const frames_stats_count *sys;
    size_t i, n;
    frames_stats_summary_get(s, &sum);
    printf("frames            %llu\n", (unsigned long long)sum.frames);
    for (i = 0; i < 8; i++)
        if (sum.by_kind[i])
            printf("  %s%*s%llu\n", frames_kind_name((int)i), /* a space even after a long name */
                   (int)strlen(frames_kind_name((int)i)) < 16 ? 16 - (int)strlen(frames_kind_name((int)i)) : 1,
                   "", (unsigned long long)sum.by_kind[i]);
    printf("instructions      %llu\n", (unsigned long long)sum.instructions);
    printf("unique pcs        %llu\n", (unsigned long long)sum.unique_pcs);
    th = frames_stats_threads(s, &n);
    printf("threads           %llu\n", (unsigned long long)n);
    for (i = 0; i < n; i++)
        printf("  tid %-12llu%llu instructions, %llu syscalls, %llu frames\n",
               (unsigned long long)th[i].thread_id, (unsigned long long)th[i].instructions,
               (unsigned long long)th[i].syscalls, (unsigned long long)th[i].frames);
    mods = frames_stats_modules(s, &n);
    printf("modules           %llu\n", (unsigned long long)n);
    for (i = 0; i < n; i++) {
        printf("  ");
        fwrite(mods[i].name, 1, mods[i].name_len, stdout);
        printf("  0x%llx-0x%llx: %llu instructions, %llu unique pcs, %llu bytes covered "
               "(%.2f%%)\n",
               (unsigned long long)mods[i].base, (unsigned long long)mods[i].end,
               (unsigned long long)mods[i].instructions, (unsigned long long)mods[i].unique_pcs,
               (unsigned long long)mods[i].covered_bytes,
               percent(mods[i].covered_bytes, mods[i].end - mods[i].base));
    }
    printf("outside modules   %llu instructions\n", (unsigned long long)sum.outside);
    printf("hottest pcs\n");
    for (i = 0; i < nhot; i++)
        printf("  0x%-14llx%llu (%.2f%%)%s%s\n", (unsigned long long)hot[i].key,
               (unsigned long long)hot[i].count, percent(hot[i].count, sum.instructions),
               cli_names_text(&run->names, hot[i].key, name, sizeof name)[0] ? "  " : "", name);
    sys = frames_stats_syscalls(s, &n);
    printf("syscalls          %llu\n", (unsigned long long)sum.by_kind[FRAMES_KIND_SYSCALL]);
    for (i = 0; i < n; i++)
        printf("  %-5llu %-22s %llu\n", (unsigned long long)sys[i].key,
               frames_sym_syscall_known(run->abi, sys[i].key)
                   ? frames_sym_syscall_name(run->abi, sys[i].key) : "-",
               (unsigned long long)sys[i].count);
}

static void print_json(stat_run *run, const frames_stats_count *hot, size_t nhot) {
    const frames_stats *s = run->stats;
    frames_stats_summary sum;
    const frames_stats_thread *th;
    const frames_stats_module *mods;
    const frames_stats_count *sys;
    size_t i, n;
    frames_stats_summary_get(s, &sum);
    printf("{\"frames\":%llu,\"by_kind\":{", (unsigned long long)sum.frames);
    for (i = 0; i < 8; i++)
        printf("%s\"%s\":%llu", i ? "," : "", frames_kind_name((int)i),
               (unsigned long long)sum.by_kind[i]);
    printf("},\"instructions\":%llu,\"unique_pcs\":%llu,\"outside_modules\":%llu",
           (unsigned long long)sum.instructions, (unsigned long long)sum.unique_pcs,
           (unsigned long long)sum.outside);
    th = frames_stats_threads(s, &n);
    printf(",\"threads\":[");
    for (i = 0; i < n; i++)
        printf("%s{\"tid\":%llu,\"frames\":%llu,\"instructions\":%llu,\"syscalls\":%llu}",
               i ? "," : "", (unsigned long long)th[i].thread_id,
               (unsigned long long)th[i].frames, (unsigned long long)th[i].instructions,
               (unsigned long long)th[i].syscalls);
    mods = frames_stats_modules(s, &n);
    printf("],\"modules\":[");
    for (i = 0; i < n; i++) {
        printf("%s{\"name\":", i ? "," : "");
        cli_json_string(stdout, mods[i].name, mods[i].name_len);
        printf(",\"base\":%llu,\"end\":%llu,\"instructions\":%llu,\"unique_pcs\":%llu,"
               "\"covered_bytes\":%llu}",
               (unsigned long long)mods[i].base, (unsigned long long)mods[i].end,
               (unsigned long long)mods[i].instructions, (unsigned long long)mods[i].unique_pcs,
               (unsigned long long)mods[i].covered_bytes);
    }
    printf("],\"hottest\":[");
    for (i = 0; i < nhot; i++) {
        printf("%s{\"pc\":%llu,\"count\":%llu", i ? "," : "", (unsigned long long)hot[i].key,
               (unsigned long long)hot[i].count);
        cli_names_json(&run->names, stdout, hot[i].key);
        printf("}");
    }
    sys = frames_stats_syscalls(s, &n);
    printf("],\"syscalls\":[");
    for (i = 0; i < n; i++) {
        printf("%s{\"number\":%llu,\"count\":%llu", i ? "," : "", (unsigned long long)sys[i].key,
               (unsigned long long)sys[i].count);
        if (frames_sym_syscall_known(run->abi, sys[i].key))
            printf(",\"name\":\"%s\"", frames_sym_syscall_name(run->abi, sys[i].key));
        printf("}");
    }
    printf("]}\n");
}

int cmd_stat(int argc, char **argv) {
    const char *in = NULL;
    int json = 0, i, rc;
    uint64_t top = 10;
    frames_reader *r;
    stat_run run;
    frames_stats_count *hot;
    frames_error err;
    const frames_header *h;
    size_t nhot;
    if (cli_wants_help(argc, argv)) {
        usage(stdout);
        return CLI_OK;
    }
    memset(&run, 0, sizeof run);
    cli_names_init(&run.names);
    for (i = 1; i < argc; i++) {
        int o = cli_names_option(argc, argv, &i, &run.names);
        if (o == CLI_USAGE) return o;
        if (o == 1) continue;
        if (!strcmp(argv[i], "--json")) {
            json = 1;
        } else if (!strcmp(argv[i], "--top")) {
            if (!cli_option_value(argc, argv, &i)) return CLI_USAGE;
            if (cli_parse_u64(argv[i], &top) || top > 1000000)
                return cli_usage_error("--top wants a number up to 1000000, got '%s'", argv[i]);
        } else if (cli_trace_arg(argv[i], &in) != CLI_OK) {
            return CLI_USAGE;
        }
    }
    if (!in) return cli_usage_error("missing TRACE");
    if (!(r = cli_open_reader(in, NULL))) return CLI_DATA;
    h = frames_reader_header(r);
    run.abi = frames_sym_abi(h->arch, h->machine);
    if ((rc = cli_names_open(&run.names, frames_reader_meta(r))) != CLI_OK) {
        cli_names_close(&run.names);
        frames_reader_close(r);
        return rc;
    }
    if (frames_stats_open(&run.stats, NULL, &err) < 0) {
        cli_names_close(&run.names);
        frames_reader_close(r);
        return cli_lib_error(&err);
    }
    if ((rc = add_modules(&run)) == CLI_OK) rc = cli_for_each_frame_std(r, "stat", feed_std, feed, &run);
    hot = (frames_stats_count *)malloc((top ? top : 1) * sizeof *hot);
    if (!hot || frames_stats_finish(run.stats) < 0) {
        rc = hot ? cli_lib_error(frames_stats_error(run.stats)) : cli_fail(CLI_DATA, "out of memory");
    } else {
        nhot = frames_stats_hottest(run.stats, hot, (size_t)top);
        if (json) print_json(&run, hot, nhot);
        else print_text(&run, hot, nhot);
    }
    free(hot);
    cli_names_close(&run.names);
    frames_stats_close(run.stats);
    frames_reader_close(r);
    return rc;
}
