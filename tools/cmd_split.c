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
            "Fewer than N ranges are printed when the trace has fewer TOC blocks. Every\n"
            "frame is read once (a .frames.zst: its chunks decompressed and checked): a range\n"
            "with frames that cannot be read (a corrupt chunk) is left out and the command\n"
            "exits 1 after printing the others ('frames fix' recovers what is readable).\n"
            "See docs/scale.md.\n"
            CLI_EXIT_STATUS);
}

/* Damaged frames of the trace: [first, end) per region that cannot be read. */
typedef struct damage {
    uint64_t first[64], end[64];
    size_t regions;          /* all of them, also past the 64 kept */
    char first_message[256];
} damage;

/* Reads every frame once (undecoded: only the container is checked), noting the regions
   that cannot be read. */
static void find_damage(frames_reader *r, uint64_t n, damage *d) {
    frames_raw raw;
    cli_progress bar;
    uint64_t done = 0;
    int rc;
    memset(d, 0, sizeof *d);
    if (frames_reader_seek(r, 0) < 0) {
        d->first[0] = 0, d->end[0] = n, d->regions = 1;
        snprintf(d->first_message, sizeof d->first_message, "%s", frames_reader_error(r)->message);
        return;
    }
    cli_progress_start(&bar, "checking", n);
    while ((rc = frames_reader_next_raw(r, &raw)) != 0) {
        uint64_t at, lost;
        int resumed;
        if (rc > 0) {
            if (!(++done & 0xffff)) cli_progress_update(&bar, done);
            continue;
        }
        at = frames_reader_tell(r);
        if (!d->regions)
            snprintf(d->first_message, sizeof d->first_message, "%s", frames_reader_error(r)->message);
        resumed = frames_reader_skip_damage(r, &lost);
        if (d->regions < 64) {
            d->first[d->regions] = at;
            d->end[d->regions] = resumed && lost ? at + lost : n;
        }
        d->regions++;
        if (!resumed) break;
    }
    cli_progress_end(&bar);
}

/* Does [a, b) meet a damaged region (or lie past the 64 regions kept)? */
static int range_damaged(const damage *d, uint64_t a, uint64_t b) {
    size_t i, kept = d->regions < 64 ? d->regions : 64;
    for (i = 0; i < kept; i++)
        if (a < d->end[i] && d->first[i] < b) return 1;
    return d->regions > 64 && b > d->first[63];
}

int cmd_split(int argc, char **argv) {
    const char *in = NULL;
    uint64_t chunks = 0, n, align, k, i, *bounds, printed = 0;
    int json = 0, have_chunks = 0, a, status = CLI_OK;
    damage d;
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
    find_damage(r, n, &d);
    if (json)
        printf("{\"frames\":%llu,\"alignment\":%llu,\"chunks\":[", (unsigned long long)n,
               (unsigned long long)align);
    for (i = 0; i < k; i++) {
        if (range_damaged(&d, bounds[i], bounds[i + 1])) continue;
        if (json) {
            frames_raw raw;
            uint64_t off = 0;
            if (frames_reader_seek(r, bounds[i]) < 0 || frames_reader_next_raw(r, &raw) <= 0) {
                status = cli_lib_error(frames_reader_error(r));
                break;
            }
            off = raw.offset;
            printf("%s{\"first\":%llu,\"end\":%llu,\"offset\":%llu}", printed++ ? "," : "",
                   (unsigned long long)bounds[i], (unsigned long long)bounds[i + 1],
                   (unsigned long long)off);
        } else {
            printf("%llu-%llu\n", (unsigned long long)bounds[i], (unsigned long long)bounds[i + 1]);
        }
    }
    if (json) printf("]}\n");
    if (d.regions && status == CLI_OK)
        status = cli_fail(CLI_DATA, "%s is damaged: %llu region(s) cannot be read, the first at frame %llu "
                          "(%s); the ranges with unreadable frames were left out ('frames fix' keeps "
                          "every frame that reads)", in, (unsigned long long)d.regions,
                          (unsigned long long)d.first[0], d.first_message);
    free(bounds);
    cli_reader_warnings(r);
    frames_reader_close(r);
    return status;
}
