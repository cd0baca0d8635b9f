/* frames index - build (or check) the persistent index `frames query` uses (frames_query.h) */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>

#include "cli.h"
#include "frames_query.h"

static const char usage_text[] =
    "usage: frames index TRACE [-o INDEX] [-f] [--check] [--json]\n"
    "\n"
    "Build the index of a trace-db or frames trace for `frames query`: where every point\n"
    "starts, trace-db buffer sizes, and the points of every statement (frames: instruction\n"
    "address). With it, a query needs no indexing pass over a trace-db trace, statement and\n"
    "--pc filters decode only the points they select, and --pick decodes one point.\n"
    "\n"
    "  -o, --output INDEX  where to write it (default TRACE.fqidx, where `frames query`\n"
    "                      looks); an existing index is replaced once the new one is\n"
    "                      complete; any other existing file only with -f (docs/outputs.md)\n"
    "  -f, --force         replace INDEX even when it is not an index\n"
    "  --check             build nothing: tell whether INDEX is valid for TRACE (exit 1 if\n"
    "                      it is missing, damaged or of another version of the trace)\n"
    "  --json              the figures as one JSON object\n"
    "\n"
    "The index is bound to the trace's size, modification time and sampled contents: after\n"
    "the trace changes, queries ignore it (with a warning) until it is built again.\n"
    CLI_EXIT_STATUS;

static double seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void show_progress(void *ctx, uint64_t done, uint64_t total) {
    cli_progress *p = (cli_progress *)ctx;
    if (!p->total) p->total = total;
    cli_progress_update(p, done);
}

static void report(const char *path, const fq_index_info *ix, double secs, int json, int checked) {
    if (json) {
        fputs("{\"index\":", stdout);
        cli_json_string(stdout, path, strlen(path));
        printf(",\"valid\":true,\"points\":%llu,\"candidates\":%llu,\"statements\":%llu,"
               "\"pointers\":%llu,\"values\":%llu,\"bytes\":%llu",
               (unsigned long long)ix->points, (unsigned long long)ix->candidates,
               (unsigned long long)ix->statements, (unsigned long long)ix->pointers,
               (unsigned long long)ix->records, (unsigned long long)ix->bytes);
        if (!checked) printf(",\"seconds\":%.3f", secs);
        puts("}");
        return;
    }
    printf("%s: %s%llu points (%llu in posting lists), %llu statements, %llu buffer sizes, ", path,
           checked ? "valid, " : "", (unsigned long long)ix->points, (unsigned long long)ix->candidates,
           (unsigned long long)ix->statements, (unsigned long long)ix->pointers);
    if (ix->records) printf("%llu values, ", (unsigned long long)ix->records);
    printf("%llu bytes", (unsigned long long)ix->bytes);
    if (!checked) printf(", built in %.3f s", secs);
    putchar('\n');
}

/* The output rule (cli.h), with one exception: an index is a cache of the trace, so an
   existing index is replaced without -f. */
static int check_index_output(const char *trace, const char *out) {
    char magic[8] = {0};
    struct stat st;
    FILE *f;
    int is_index;
    if (cli_force_given() || cli_same_file(trace, out) || stat(out, &st) != 0 || !S_ISREG(st.st_mode) || !(f = fopen(out, "rb")))
        return cli_output_check(out, &trace, 1);
    is_index = fread(magic, 1, 8, f) == 8 && !memcmp(magic, "FQINDEX", 8);
    fclose(f);
    if (is_index) return CLI_OK;
    return cli_output_check(out, &trace, 1);
}

/* fq_index_save, where an output that is a symbolic link stays one (the file it names is
   replaced, as for every output: cli.h). */
static int save_index(fq_trace *t, const char *out, fq_index_info *ix, frames_error *err) {
    char *target = cli_output_target(out);
    int rc = fq_index_save(t, target ? target : out, ix, err);
    free(target);
    return rc;
}

int cmd_index(int argc, char **argv) {
    const char *trace = NULL, *out = NULL;
    char *def = NULL;
    int check = 0, json = 0, i, rc = CLI_OK;
    fq_trace *t = NULL;
    fq_index_info ix;
    frames_error err;
    cli_progress progress;
    double t0;

    if (cli_wants_help(argc, argv)) {
        fputs(usage_text, stdout);
        return CLI_OK;
    }
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
            if (!(out = cli_option_value(argc, argv, &i))) return CLI_USAGE;
        } else if (!strncmp(a, "--output=", 9)) {
            out = a + 9;
        } else if (cli_force_option(a)) {
        } else if (!strcmp(a, "--check")) {
            check = 1;
        } else if (!strcmp(a, "--json")) {
            json = 1;
        } else if (a[0] == '-' && a[1]) {
            return cli_usage_error("unknown option '%s'", a);
        } else if (trace) {
            return cli_usage_error("more than one trace given ('%s' and '%s')", trace, a);
        } else trace = a;
    }
    if (!trace) return cli_usage_error("no trace given");
    if (!out) {
        if (!strcmp(trace, "-")) return cli_usage_error("a trace read from standard input needs -o INDEX");
        if (!(def = (char *)malloc(strlen(trace) + 7))) return cli_fail(CLI_DATA, "out of memory");
        strcpy(def, trace);
        strcat(def, ".fqidx");
        out = def;
    }
    if (!check && (rc = check_index_output(trace, out)) != CLI_OK) goto done;
    t0 = seconds();
    if (cli_open_query_trace(trace, &t, &err) < 0) {
        rc = cli_fail(CLI_DATA, "%s: %s", trace, err.message);
        goto done;
    }
    if (check) {
        if (fq_index_open(t, out, &err) < 0) {
            if (json) {
                fputs("{\"index\":", stdout);
                cli_json_string(stdout, out, strlen(out));
                fputs(",\"valid\":false,\"reason\":", stdout);
                cli_json_string(stdout, err.message, strlen(err.message));
                puts("}");
            }
            rc = cli_fail(CLI_DATA, "%s: %s", out, err.message);
            goto done;
        }
        fq_index_info_get(t, &ix);
        report(out, &ix, 0, json, 1);
        goto done;
    }
    cli_progress_start(&progress, "index", 0);
    if (progress.active) fq_index_progress(t, show_progress, &progress);
    if (save_index(t, out, &ix, &err) < 0) {
        cli_progress_end(&progress);
        rc = cli_fail(CLI_DATA, "%s: %s", err.code == FRAMES_E_IO ? out : trace, err.message);
        goto done;
    }
    cli_progress_end(&progress);
    report(out, &ix, seconds() - t0, json, 0);
    {   /* the points kept are those before a cut: say so, as `frames query` does */
        fq_trace_info info;
        fq_trace_info_get(t, &info);
        if (info.message[0]) cli_warn("%s: %s", trace, info.message);
    }
done:
    cli_close_query_trace(t);
    free(def);
    return rc;
}
