/* frames split - TOC-aligned frame ranges, so that GNU parallel, Spark, Dask or a batch
   scheduler can process one trace in parallel (docs/scale.md). */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "frames_interop.h"

static void usage(FILE *out) {
    fprintf(out,
            "usage: frames split TRACE --chunks N [--json]\n\n"
            "Print at most N frame ranges A-B (half-open, one per line) that cover the trace\n"
            "exactly, with every boundary on a TOC entry so that each range is reached in\n"
            "O(1). Feed them to 'frames slice TRACE --frames A-B', e.g. with GNU parallel:\n\n"
            "  frames split t.frames --chunks 8 |\n"
            "      parallel 'frames slice t.frames --frames {} -o - | frames stat - --json'\n\n"
            "  --json   {\"frames\":n,\"alignment\":m,\"chunks\":[{\"first\":A,\"end\":B,"
            "\"offset\":O}]}\n"
            "           (offset: file offset of frame A's size prefix)\n\n"
            "Fewer than N ranges are printed when the trace has fewer TOC blocks. See\n"
            "docs/scale.md.\n"
            CLI_EXIT_STATUS);
}

int cmd_split(int argc, char **argv) {
    const char *in = NULL;
    uint64_t chunks = 0, n, align, k, i, *bounds;
    int json = 0, have_chunks = 0, a, status = CLI_OK;
    frames_reader *r;
    frames_reader_info st;
    if (cli_wants_help(argc, argv)) {
        usage(stdout);
        return CLI_OK;
    }
    for (a = 1; a < argc; a++) {
        if (!strcmp(argv[a], "--chunks")) {
            if (!cli_option_value(argc, argv, &a)) return CLI_USAGE;
            if (cli_parse_u64(argv[a], &chunks) || chunks == 0 || chunks > 0xffffffffull)
                return cli_usage_error("--chunks wants a number from 1 to 4294967295, got '%s'",
                                       argv[a]);
            have_chunks = 1;
        } else if (!strcmp(argv[a], "--json")) {
            json = 1;
        } else if (cli_trace_arg(argv[a], &in) != CLI_OK) {
            return CLI_USAGE;
        }
    }
    if (!in) return cli_usage_error("missing TRACE");
    if (!have_chunks) return cli_usage_error("missing --chunks N");
    if (!strcmp(in, "-")) return cli_usage_error("split needs a file (ranges are for random access)");
    if (!(r = cli_open_reader(in, NULL))) return CLI_DATA;
    if (frames_reader_count(r, &n) < 0) {
        status = cli_lib_error(frames_reader_error(r));
        frames_reader_close(r);
        return status;
    }
    align = frames_split_alignment(r);
    if (frames_reader_info_get(r, &st) == FRAMES_OK && !st.toc_used)
        cli_warn("no usable TOC: ranges are not aligned (slices find their start through an "
                 "index built by one scan)");
    if (cli_split_ranges(r, n, chunks, &bounds, &k) != CLI_OK) {
        frames_reader_close(r);
        return CLI_DATA;
    }
    if (json)
        printf("{\"frames\":%llu,\"alignment\":%llu,\"chunks\":[", (unsigned long long)n,
               (unsigned long long)align);
    for (i = 0; i < k; i++) {
        if (json) {
            frames_raw raw;
            uint64_t off = 0;
            if (frames_reader_seek(r, bounds[i]) < 0 || frames_reader_next_raw(r, &raw) <= 0) {
                status = cli_lib_error(frames_reader_error(r));
                break;
            }
            off = raw.offset;
            printf("%s{\"first\":%llu,\"end\":%llu,\"offset\":%llu}", i ? "," : "",
                   (unsigned long long)bounds[i], (unsigned long long)bounds[i + 1],
                   (unsigned long long)off);
        } else {
            printf("%llu-%llu\n", (unsigned long long)bounds[i], (unsigned long long)bounds[i + 1]);
        }
    }
    if (json) printf("]}\n");
    free(bounds);
    cli_reader_warnings(r);
    frames_reader_close(r);
    return status;
}
