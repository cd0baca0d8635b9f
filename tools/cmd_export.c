/* frames export - a trace as Apache Parquet tables (instructions, operands, syscalls,
   modules, exceptions) for DuckDB, Spark, pandas, Polars. The writer and the tables live in
   frames_parquet.h; this is files, chunks and messages. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "frames_interop.h"
#include "frames_parquet.h"

static void usage(FILE *out) {
    fprintf(out,
            "usage: frames export TRACE --parquet OUT [--chunks N] [--tables LIST]\n"
            "                     [--row-group ROWS] [--page-rows ROWS] [--compression zstd|none]\n"
            "                     [--zstd-level L]\n\n"
            "Write the trace as Apache Parquet tables into the directory OUT (created if\n"
            "missing): OUT/instructions.parquet, operands, syscalls, modules, exceptions.\n"
            "Columns follow docs/jsonl.md; see docs/parquet.md for the schema and queries.\n\n"
            "  --chunks N        one folder per table, one file per 'frames split' range:\n"
            "                    OUT/<table>/part-00000.parquet ... (frame numbers stay those\n"
            "                    of the whole trace); N as in 'frames split --chunks N'\n"
            "  --tables LIST     comma-separated subset (default: all five)\n"
            "  --row-group ROWS  rows per row group (default 131072)\n"
            "  --page-rows ROWS  rows per data page (default 131072)\n"
            "  --compression C   zstd (default when built with libzstd) or none\n"
            "  --zstd-level L    zstd level, -7 (fastest) to 19 (smallest); default 1\n"
            "  -f, --force       replace existing table files\n\n"
            "Files are written under a temporary name and renamed when complete; a table file\n"
            "that exists is replaced only with -f (docs/outputs.md). Exit status: 0 ok,\n"
            "1 unreadable input, undecodable frames or unwritable output (that range's files\n"
            "are not written), 2 usage error.\n");
}

typedef struct export_args {
    const char *in, *out;
    uint64_t chunks;
    unsigned tables;                  /* bit per table */
    frames_parquet_options o;
} export_args;

typedef struct export_files {
    cli_output out[FRAMES_PARQUET_NTABLES];
    int open[FRAMES_PARQUET_NTABLES];
    char path[FRAMES_PARQUET_NTABLES][4096];
    frames_sink sinks[FRAMES_PARQUET_NTABLES];
} export_files;

static int parse_tables(const char *s, unsigned *mask) {
    char buf[256], *tok, *save = NULL;
    int t;
    if (strlen(s) >= sizeof buf) return -1;
    strcpy(buf, s);
    *mask = 0;
    for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        for (t = 0; t < FRAMES_PARQUET_NTABLES; t++)
            if (!strcmp(tok, frames_parquet_table_name(t))) break;
        if (t == FRAMES_PARQUET_NTABLES) return -1;
        *mask |= 1u << t;
    }
    return *mask ? 0 : -1;
}

static int parse_rows(const char *s, uint32_t *out) {
    uint64_t v;
    if (cli_parse_u64(s, &v) || v == 0 || v > 0x7fffffffu) return -1;
    *out = (uint32_t)v;
    return 0;
}

static int parse_args(int argc, char **argv, export_args *a) {
    int i, level_given = 0;
    memset(a, 0, sizeof *a);
    a->tables = (1u << FRAMES_PARQUET_NTABLES) - 1;
    frames_parquet_options_default(&a->o);
    for (i = 1; i < argc; i++) {
        static const char *const valued[] = {"--parquet", "--chunks", "--tables", "--row-group",
                                             "--page-rows", "--zstd-level", "--compression"};
        const char *opt = argv[i], *v = NULL;
        size_t k;
        for (k = 0; k < sizeof valued / sizeof valued[0]; k++)
            if (!strcmp(opt, valued[k]) && !(v = cli_option_value(argc, argv, &i))) return CLI_USAGE;
        if (!strcmp(opt, "--parquet")) {
            a->out = v;
        } else if (cli_force_option(opt)) {
        } else if (!strcmp(opt, "--chunks")) {
            if (cli_parse_u64(v, &a->chunks) || a->chunks == 0 || a->chunks > 100000)
                return cli_usage_error("--chunks wants a number from 1 to 100000, got '%s'", v);
        } else if (!strcmp(opt, "--tables")) {
            if (parse_tables(v, &a->tables))
                return cli_usage_error("--tables wants names from instructions,operands,syscalls,"
                                       "modules,exceptions, got '%s'", v);
        } else if (!strcmp(opt, "--row-group")) {
            if (parse_rows(v, &a->o.row_group_rows))
                return cli_usage_error("--row-group wants a number of rows > 0, got '%s'", v);
        } else if (!strcmp(opt, "--page-rows")) {
            if (parse_rows(v, &a->o.page_rows))
                return cli_usage_error("--page-rows wants a number of rows > 0, got '%s'", v);
        } else if (!strcmp(opt, "--zstd-level")) {
            int64_t level;
            if (cli_parse_i64(v, &level) || level < -7 || level > 19)
                return cli_usage_error("--zstd-level wants a level from -7 to 19, got '%s'", v);
            a->o.zstd_level = (int)level;
            level_given = 1;
        } else if (!strcmp(opt, "--compression")) {
            if (!strcmp(v, "none")) a->o.compression = FRAMES_PARQUET_UNCOMPRESSED;
            else if (!strcmp(v, "zstd") && frames_parquet_have_zstd()) a->o.compression = FRAMES_PARQUET_ZSTD;
            else if (!strcmp(v, "zstd"))
                return cli_usage_error("this frames was built without libzstd: --compression none");
            else return cli_usage_error("--compression wants zstd or none, got '%s'", v);
        } else if (argv[i][0] == '-' && argv[i][1]) {
            return cli_usage_error("unknown option '%s'", argv[i]);
        } else if (!a->in) {
            a->in = argv[i];
        } else {
            return cli_usage_error("one TRACE only ('%s' is extra)", argv[i]);
        }
    }
    if (!a->in) return cli_usage_error("missing TRACE");
    if (!a->out) return cli_usage_error("missing --parquet OUT (a directory)");
    if (a->chunks && !strcmp(a->in, "-"))
        return cli_usage_error("--chunks needs a file (ranges are for random access)");
    if (level_given && a->o.compression == FRAMES_PARQUET_UNCOMPRESSED)
        return cli_usage_error("'--zstd-level' and '--compression none' exclude each other");
    return CLI_OK;
}

static int make_dir(const char *path) {
    struct stat st;
    if (mkdir(path, 0777) == 0) return CLI_OK;
    if (errno == EEXIST && stat(path, &st) == 0 && S_ISDIR(st.st_mode)) return CLI_OK;
    if (errno == EEXIST) return cli_fail(CLI_DATA, "%s exists and is not a directory", path);
    return cli_fail(CLI_DATA, "cannot create directory %s: %s", path, strerror(errno));
}

static void discard_files(export_files *fs) {
    int t;
    for (t = 0; t < FRAMES_PARQUET_NTABLES; t++) {
        if (fs->open[t]) cli_output_abort(&fs->out[t]);
        fs->open[t] = 0;
    }
}

/* Open OUT/<table>.parquet (chunk < 0) or OUT/<table>/part-NNNNN.parquet (the output rule:
   temporary files renamed when complete). */
static int open_files(const export_args *a, long chunk, export_files *fs) {
    int t;
    memset(fs, 0, sizeof *fs);
    for (t = 0; t < FRAMES_PARQUET_NTABLES; t++) {
        const char *name = frames_parquet_table_name(t);
        int n;
        if (!(a->tables & (1u << t))) continue;
        if (chunk < 0) {
            n = snprintf(fs->path[t], sizeof fs->path[t], "%s/%s.parquet", a->out, name);
        } else {
            char dir[4096];
            snprintf(dir, sizeof dir, "%s/%s", a->out, name);
            if (make_dir(dir) != CLI_OK) {
                discard_files(fs);
                return CLI_DATA;
            }
            n = snprintf(fs->path[t], sizeof fs->path[t], "%s/part-%05ld.parquet", dir, chunk);
        }
        if (n < 0 || (size_t)n + 8 >= sizeof fs->path[t]) {
            discard_files(fs);
            return cli_fail(CLI_DATA, "output path too long: %s", a->out);
        }
        if ((n = cli_output_open(&fs->out[t], fs->path[t], &a->in, 1)) != CLI_OK) {
            discard_files(fs);
            return n;
        }
        fs->open[t] = 1;
        fs->sinks[t] = frames_sink_fd(fs->out[t].fd);
    }
    return CLI_OK;
}

static int commit_files(export_files *fs) {
    int t, status = CLI_OK;
    for (t = 0; t < FRAMES_PARQUET_NTABLES; t++) {
        if (!fs->open[t]) continue;
        if (status == CLI_OK) status = cli_output_commit(&fs->out[t]);
        else cli_output_abort(&fs->out[t]);
        fs->open[t] = 0;
    }
    return status;
}

/* Frames [first, end) of r (end UINT64_MAX: to the end) into one set of files. */
static int export_range(frames_reader *r, const export_args *a, long chunk, uint64_t first,
                        uint64_t end, cli_progress *pg) {
    export_files fs;
    frames_parquet_export *x;
    frames_error err;
    frames_frame f;
    int rc, status;
    if ((status = open_files(a, chunk, &fs)) != CLI_OK) return status;
    if (frames_parquet_export_open(&x, fs.sinks, &a->o, &err) < 0) {
        discard_files(&fs);
        return cli_lib_error(&err);
    }
    if (first && frames_reader_seek(r, first) < 0) {
        frames_parquet_export_abandon(x);
        discard_files(&fs);
        return cli_lib_error(frames_reader_error(r));
    }
    for (;;) {
        uint64_t index = frames_reader_tell(r);
        if (index >= end) break;
        rc = frames_reader_next(r, &f);
        if (rc == 0) break;
        if (rc < 0) {   /* an undecodable frame is reported and skipped, as frames dump */
            status = cli_lib_error(frames_reader_error(r));
            if (rc == FRAMES_E_DECODE || rc == FRAMES_E_LIMIT) continue;
            break;
        }
        if (frames_parquet_export_add(x, &f, index) < 0) {
            status = cli_lib_error(frames_parquet_export_error(x));
            frames_parquet_export_abandon(x);
            discard_files(&fs);
            return status;
        }
        cli_progress_update(pg, index + 1);
    }
    if (frames_parquet_export_close(x, &err) < 0) {
        discard_files(&fs);
        return cli_lib_error(&err);
    }
    if (status != CLI_OK) {   /* a table missing frames would pass for the whole trace */
        discard_files(&fs);
        return status;
    }
    return commit_files(&fs);
}

static int export_chunks(frames_reader *r, const export_args *a, cli_progress *pg) {
    uint64_t n, *bounds, k, i;
    int status = CLI_OK;
    if (frames_reader_count(r, &n) < 0) return cli_lib_error(frames_reader_error(r));
    if (n == 0)   /* an empty trace: one empty file per table, so readers find a schema */
        return export_range(r, a, 0, 0, 0, pg);
    if (cli_split_ranges(r, n, a->chunks, &bounds, &k) != CLI_OK) return CLI_DATA;
    for (i = 0; i < k && status == CLI_OK; i++)
        status = export_range(r, a, (long)i, bounds[i], bounds[i + 1], pg);
    free(bounds);
    return status;
}

int cmd_export(int argc, char **argv) {
    export_args a;
    frames_reader *r;
    cli_progress pg;
    int status;
    if (cli_wants_help(argc, argv)) {
        usage(stdout);
        return CLI_OK;
    }
    if ((status = parse_args(argc, argv, &a)) != CLI_OK) return status;
    if (!(r = cli_open_reader(a.in, NULL))) return CLI_DATA;
    if ((status = make_dir(a.out)) == CLI_OK) {
        cli_progress_start(&pg, "export", cli_known_frames(r));
        status = a.chunks ? export_chunks(r, &a, &pg) : export_range(r, &a, -1, 0, UINT64_MAX, &pg);
        cli_progress_end(&pg);
        cli_reader_warnings(r);
    }
    frames_reader_close(r);
    return status;
}
