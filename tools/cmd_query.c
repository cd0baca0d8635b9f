/* frames query - trace-db style queries over frames and trace-db traces (frames_query.h) */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "frames_query.h"

static const char usage_text[] =
    "usage: frames query TRACE [--var NAME:TYPE[,TYPE...]]... [--where SEXPR] [--soft SEXPR]...\n"
    "                    [--pick SEED] [--mask M --stmt S] [--pc LO-HI]... [--dedup]\n"
    "                    [--count] [--limit N] [--json] [--threads N]\n"
    "                    [--index PATH | --no-index] [--build-index] [-v]\n"
    "                    [--module NAME:LO-HI]... [--sysroot DIR] [--no-symbols]\n"
    "\n"
    "Find the points of a trace where a predicate holds, as GrammaTech trace-db does.\n"
    "TRACE is a frames trace or a trace-db binary trace (detected; '-' reads stdin).\n"
    "\n"
    "  --var NAME:TYPES  free variable NAME ranging over the variables (trace-db) or\n"
    "                    operands (frames) of one point whose type is in TYPES: trace-db\n"
    "                    type names (int,unsigned int,char*), operand types regN memN reg*\n"
    "                    mem*, or * (any). Variable 0 varies fastest.\n"
    "  --where SEXPR     hard predicate, e.g. '(> (v/value a) 500)' (default: true)\n"
    "  --soft SEXPR      soft predicate: per point keep the bindings satisfying the most\n"
    "  --pick SEED       evaluate one random candidate point chosen from SEED\n"
    "  --mask M --stmt S points whose (statement & M) == S (--stmt alone: M = all ones)\n"
    "  --pc LO-HI        statement / instruction address in [LO, HI) (or one address);\n"
    "                    repeatable\n"
    "  --dedup           first result per statement and bound variable names and types\n"
    "  --count           print only the number of results\n"
    "  --limit N         stop after N results\n"
    "  --json            one JSON object per result\n"
    "  --threads N       worker threads (default: the processors it may run on, at most 16)\n"
    "  --index PATH      the trace's index (`frames index`; default TRACE.fqidx when it\n"
    "                    exists); one that does not match the trace is ignored (warning)\n"
    "  --no-index        do not use an index\n"
    "  --build-index     build the index first when it is missing or out of date\n"
    "  -v, --verbose     say on stderr whether an index was used (JSON with --json)\n"
    "  --module NAME:LO-HI, --sysroot DIR, --no-symbols\n"
    "                    names of the pcs of a frames trace (modules from its modload\n"
    "                    frames, read in a first pass; not for standard input): listings\n"
    "                    end with sym=MODULE!SYMBOL+OFF (src=FILE:LINE), JSON gets the\n"
    "                    members of docs/symbols.md\n"
    "\n"
    "Language: (and P...) (or P...) (not P) (distinct-vars a b) (> >= < <= = != X Y)\n"
    "(+ - * / % & | ^ << >> X Y) (v/value a) (v/size a) (v/addr a) (v/name a) (v/bits a)\n"
    "(v/read a) (v/written a) (v/post a) (pc) (tid) (index); numbers 42 -7 0x1f 2.5, strings\n"
    "\"RAX\". Listing: result K: counter=C stmt=S NAME:TYPE=VALUE ... (docs/query.md).\n"
    "Exit status: 0 ok (also when nothing matches), 1 unreadable trace or bad data,\n"
    "2 usage error (a predicate that does not parse too).\n";

#define OUT_BATCH (1u << 20)   /* results are formatted straight into a batch this size */

typedef struct out_state {
    FILE *out;
    int json;
    char *batch;     /* OUT_BATCH bytes, `used` of them formatted */
    size_t used;
    char *line;      /* a line longer than the batch's free room */
    size_t cap;
    int failed;
    cli_progress progress;
    cli_names *names;  /* names of frames pcs, NULL when off */
    char suffix[2048];
} out_state;

static int flush_batch(out_state *o) {
    if (o->used && fwrite(o->batch, 1, o->used, o->out) != o->used) o->failed = 1;
    o->used = 0;
    return o->failed;
}

typedef struct mem_sink {
    char *buf;
    size_t cap, len;
} mem_sink;

static int mem_out(void *ctx, const char *s, size_t n) {
    mem_sink *m = (mem_sink *)ctx;
    if (n > m->cap - m->len) n = m->cap - m->len;   /* cut, never overrun */
    memcpy(m->buf + m->len, s, n);
    m->len += n;
    return 0;
}

/* The name of a frames result's pc: " sym=NAME src=FILE:LINE" for listings, JSON
   members for --json; its length in o->suffix. */
static size_t name_suffix(out_state *o, const fq_result *r) {
    frames_sym_loc loc;
    mem_sink m;
    if (!o->names || r->format != FQ_TRACE_FRAMES) return 0;
    cli_names_lookup(o->names, r->stmt, &loc);
    if (!loc.found) return 0;
    m.buf = o->suffix;
    m.cap = sizeof o->suffix;
    m.len = 0;
    if (o->json) {
        frames_sym_print_json(&loc, mem_out, &m);
    } else {
        char t[32];
        size_t n;
        mem_out(&m, " sym=", 5);
        n = frames_sym_format(&loc, 0, m.buf + m.len, m.cap - m.len);
        m.len += n < m.cap - m.len ? n : m.cap - m.len - 1;
        if (loc.found & FRAMES_SYM_FOUND_LINE) {
            mem_out(&m, " src=", 5);
            mem_out(&m, loc.file, loc.file_len);
            mem_out(&m, t, (size_t)snprintf(t, sizeof t, ":%u", (unsigned)loc.line));
        }
    }
    return m.len;
}

/* Put the name after a formatted result of n bytes (inside the closing brace of JSON). */
static size_t attach_name(const out_state *o, char *line, size_t n, size_t sl) {
    if (!sl) return n;
    if (o->json && n && line[n - 1] == '}') {
        memcpy(line + n - 1, o->suffix, sl);
        line[n - 1 + sl] = '}';
    } else {
        memcpy(line + n, o->suffix, sl);
    }
    return n + sl;
}

/* One line per result, formatted in place at the end of the batch (a million-result
   listing spends its time here: no copy and no stdio call per line). */
static int print_result(void *ctx, const fq_result *r) {
    out_state *o = (out_state *)ctx;
    int style = o->json ? FQ_LIST_JSON : FQ_LIST_TRACEDB;
    size_t room, n, sl = name_suffix(o, r);
    if (OUT_BATCH - o->used < 4096 + sl && flush_batch(o)) return 1;
    room = OUT_BATCH - o->used;
    n = fq_format_result(r, style, o->batch + o->used, room);
    if (n + sl + 1 < room) {
        n = attach_name(o, o->batch + o->used, n, sl);
        o->batch[o->used + n] = '\n';
        o->used += n + 1;
        return 0;
    }
    if (flush_batch(o)) return 1;   /* a long line (many variables, blobs) on its own */
    if (n + sl + 2 > o->cap) {
        char *bigger = (char *)realloc(o->line, n + sl + 2);
        if (!bigger) {
            o->failed = 1;
            return 1;
        }
        o->line = bigger;
        o->cap = n + sl + 2;
    }
    n = fq_format_result(r, style, o->line, o->cap);
    n = attach_name(o, o->line, n, sl);
    o->line[n] = '\n';
    if (fwrite(o->line, 1, n + 1, o->out) != n + 1) o->failed = 1;
    return o->failed;
}

static void show_progress(void *ctx, uint64_t done, uint64_t total) {
    out_state *o = (out_state *)ctx;
    if (!o->progress.total) o->progress.total = total;
    cli_progress_update(&o->progress, done);
}

static const char *option_value(int argc, char **argv, int *i, const char *name) {
    size_t n = strlen(name);
    if (!strncmp(argv[*i], name, n) && argv[*i][n] == '=') return argv[*i] + n + 1;
    return cli_option_value(argc, argv, i);
}

static int is_option(const char *arg, const char *name) {
    size_t n = strlen(name);
    return !strncmp(arg, name, n) && (arg[n] == 0 || arg[n] == '=');
}

typedef struct args {
    const char *trace;
    const char **vars, **soft;
    int nvars, nsoft;
    const char *where;
    int pick, has_mask, has_stmt, dedup, count, json;
    uint64_t seed, mask, stmt, limit;
    uint64_t *pcs;
    int npcs;
    unsigned threads;
    const char *index;
    int no_index, build_index, verbose;
    cli_names names;
} args;

static int parse_args(int argc, char **argv, args *a) {
    int i, rest = 0;
    a->vars = (const char **)calloc((size_t)argc, sizeof(char *));
    a->soft = (const char **)calloc((size_t)argc, sizeof(char *));
    a->pcs = (uint64_t *)calloc((size_t)argc * 2, sizeof(uint64_t));
    if (!a->vars || !a->soft || !a->pcs) return cli_fail(CLI_DATA, "out of memory");
    for (i = 1; i < argc; i++) {
        const char *arg = argv[i], *v;
        uint64_t n;
        int no;
        if (!rest && (no = cli_names_option(argc, argv, &i, &a->names)) != 0) {
            if (no == CLI_USAGE) return no;
            continue;
        }
        if (rest || arg[0] != '-' || !strcmp(arg, "-")) {
            if (a->trace) return cli_usage_error("more than one trace given ('%s' and '%s')", a->trace, arg);
            a->trace = arg;
            continue;
        }
        if (!strcmp(arg, "--")) {
            rest = 1;
            continue;
        }
#define VALUE(name)                                                                    \
    if (!(v = option_value(argc, argv, &i, name))) return CLI_USAGE
        if (is_option(arg, "--var")) {
            VALUE("--var");
            a->vars[a->nvars++] = v;
        } else if (is_option(arg, "--where")) {
            VALUE("--where");
            if (a->where) return cli_usage_error("--where given twice (combine with (and ...))");
            a->where = v;
        } else if (is_option(arg, "--soft")) {
            VALUE("--soft");
            a->soft[a->nsoft++] = v;
        } else if (is_option(arg, "--pick")) {
            VALUE("--pick");
            if (cli_parse_u64(v, &a->seed)) return cli_usage_error("--pick: '%s' is not a number", v);
            a->pick = 1;
        } else if (is_option(arg, "--mask")) {
            VALUE("--mask");
            if (cli_parse_u64(v, &a->mask)) return cli_usage_error("--mask: '%s' is not a number", v);
            a->has_mask = 1;
        } else if (is_option(arg, "--stmt")) {
            VALUE("--stmt");
            if (cli_parse_u64(v, &a->stmt)) return cli_usage_error("--stmt: '%s' is not a number", v);
            a->has_stmt = 1;
        } else if (is_option(arg, "--pc")) {
            uint64_t lo, hi;
            VALUE("--pc");
            /* LO-HI is [LO, HI) as in every command (cli_parse_range); the engine's range
               is inclusive */
            if (!cli_parse_range(v, &lo, &hi)) {
                if (lo >= hi) return cli_usage_error("--pc: empty range '%s' (LO-HI is [LO, HI))", v);
                hi--;
            } else if (cli_parse_u64(v, &lo)) {
                return cli_usage_error("--pc: '%s' is not LO-HI or an address", v);
            } else {
                hi = lo;
            }
            a->pcs[2 * a->npcs] = lo;
            a->pcs[2 * a->npcs + 1] = hi;
            a->npcs++;
        } else if (!strcmp(arg, "--dedup")) {
            a->dedup = 1;
        } else if (!strcmp(arg, "--count")) {
            a->count = 1;
        } else if (!strcmp(arg, "--json")) {
            a->json = 1;
        } else if (is_option(arg, "--index")) {
            VALUE("--index");
            a->index = v;
        } else if (!strcmp(arg, "--no-index")) {
            a->no_index = 1;
        } else if (!strcmp(arg, "--build-index")) {
            a->build_index = 1;
        } else if (!strcmp(arg, "-v") || !strcmp(arg, "--verbose")) {
            a->verbose = 1;
        } else if (is_option(arg, "--limit")) {
            VALUE("--limit");
            if (cli_parse_u64(v, &a->limit)) return cli_usage_error("--limit: '%s' is not a number", v);
        } else if (is_option(arg, "--threads")) {
            VALUE("--threads");
            if (cli_parse_u64(v, &n) || n == 0 || n > 1024)
                return cli_usage_error("--threads: '%s' is not a number from 1 to 1024", v);
            a->threads = (unsigned)n;
        } else {
            return cli_usage_error("unknown option '%s'", arg);
        }
#undef VALUE
    }
    if (!a->trace) return cli_usage_error("no trace given");
    if (a->count && a->json) return cli_usage_error("--count and --json exclude each other");
    if (a->no_index && (a->index || a->build_index))
        return cli_usage_error("--no-index excludes --index and --build-index");
    if (a->build_index && !a->index && !strcmp(a->trace, "-"))
        return cli_usage_error("--build-index on standard input needs --index PATH");
    if (a->has_stmt && !a->has_mask) a->mask = UINT64_MAX;
    if ((a->stmt & ~a->mask) != 0)
        cli_warn("--stmt 0x%llx has bits outside --mask 0x%llx: no point can match",
                 (unsigned long long)a->stmt, (unsigned long long)a->mask);
    if (!a->threads) {
        long n = cli_usable_cpus();
        a->threads = n < 1 ? 1 : n > 16 ? 16 : (unsigned)n;
    }
    return CLI_OK;
}

/* The line of `text` holding byte `offset`, and a caret under it (stderr). */
static void show_position(const char *text, uint64_t offset) {
    const char *line = text, *end;
    size_t len = strlen(text), col;
    if (offset == FRAMES_NO_POS || offset > len) {
        fprintf(stderr, "  %s\n", text);
        return;
    }
    while (strchr(line, '\n') && (size_t)(strchr(line, '\n') - text) < offset) line = strchr(line, '\n') + 1;
    end = strchr(line, '\n');
    if (!end) end = text + len;
    col = (size_t)(text + offset - line);
    fprintf(stderr, "  %.*s\n  %*s^\n", (int)(end - line), line, (int)col, "");
}

/* The query from the arguments; returns NULL after printing the error. */
static fq_query *build_query(const args *a) {
    fq_query *q;
    fq_query_open(&q, NULL, NULL);
    frames_error err;
    int i;
    if (!q) {
        cli_fail(CLI_DATA, "out of memory");
        return NULL;
    }
    for (i = 0; i < a->nvars; i++) {
        const char *colon = strchr(a->vars[i], ':');
        char name[256];
        size_t n = colon ? (size_t)(colon - a->vars[i]) : 0;
        if (!colon || n == 0 || n >= sizeof name || !colon[1]) {
            cli_usage_error("--var '%s': expected NAME:TYPE[,TYPE...]", a->vars[i]);
            goto fail;
        }
        memcpy(name, a->vars[i], n);
        name[n] = 0;
        if (fq_query_var(q, name, colon + 1) < 0) {
            cli_usage_error("--var '%s': %s", a->vars[i], fq_query_error(q)->message);
            goto fail;
        }
    }
    if (a->where && fq_query_where_text(q, a->where, &err) < 0) {
        cli_fail(CLI_USAGE, "--where: %s", err.message);
        show_position(a->where, err.offset);
        goto fail;
    }
    for (i = 0; i < a->nsoft; i++)
        if (fq_query_soft_text(q, a->soft[i], &err) < 0) {
            cli_fail(CLI_USAGE, "--soft: %s", err.message);
            show_position(a->soft[i], err.offset);
            goto fail;
        }
    fq_query_statement(q, a->mask, a->stmt);
    for (i = 0; i < a->npcs; i++) fq_query_pc_range(q, a->pcs[2 * i], a->pcs[2 * i + 1]);
    fq_query_flags(q, a->dedup ? FQ_DEDUP : 0);
    return q;
fail:
    fq_query_close(q);
    return NULL;
}

/* Attach the trace's index when there is a usable one (building it first if asked);
   an index that does not fit is ignored with a warning. *used receives the outcome. */
/* Someone at a terminal querying a large trace without an index is told once how to
   make every later query on it fast (scripts, whose stderr is not a terminal, are not). */
static void hint_index(fq_trace *t, const args *a) {
    fq_trace_info info;
    fq_trace_info_get(t, &info);
    if (info.file_size >= ((uint64_t)64 << 20) && isatty(2) && !getenv("FRAMES_NO_HINTS"))
        fprintf(stderr, "frames query: hint: `frames index %s` (a few seconds per GB, once) makes "
                        "queries on this trace 10-100x faster, or add --build-index\n", a->trace);
}

static void use_index(fq_trace *t, const args *a, const char **used, char **path) {
    frames_error err;
    int explicit_path = a->index != NULL;
    *used = "none";
    *path = NULL;
    if (a->no_index || (!explicit_path && !strcmp(a->trace, "-"))) return;
    if (explicit_path) *path = strdup(a->index);
    else if ((*path = (char *)malloc(strlen(a->trace) + 7)) != NULL) {
        strcpy(*path, a->trace);
        strcat(*path, ".fqidx");
    }
    if (!*path) return;
    if (fq_index_open(t, *path, &err) == FRAMES_OK) {
        *used = "used";
        return;
    }
    if (a->build_index) {
        frames_error berr;
        if (fq_index_save(t, *path, NULL, &berr) < 0) {
            cli_warn("cannot build the index %s: %s", *path, berr.message);
            *used = "ignored";
        } else if (fq_index_open(t, *path, &err) == FRAMES_OK) *used = "built";
        else cli_warn("ignoring the index %s: %s", *path, err.message);
        return;
    }
    /* no index next to the trace is the normal case; anything else deserves a warning */
    if (explicit_path || err.code != FRAMES_E_IO || access(*path, F_OK) == 0) {
        /* the library says what is wrong; how to rebuild it is the command's to say */
        cli_warn("ignoring the index %s: %s%s", *path, err.message,
                 err.code == FQ_E_STALE ? "; frames index rebuilds it" : "");
        *used = "ignored";
    }
    hint_index(t, a);
}

/* Names for the pcs of a frames trace: the modules of its modload frames, read in a pass
   of their own before the query runs (a stream cannot be read twice: no names). */
static int open_names(args *a, fq_trace *t, out_state *o) {
    fq_trace_info info;
    frames_reader *r;
    int rc;
    fq_trace_info_get(t, &info);
    if (a->count || a->names.off || info.format != FQ_TRACE_FRAMES) return CLI_OK;
    if (!a->names.fixed && !strcmp(a->trace, "-")) return CLI_OK;
    if ((rc = cli_names_open(&a->names, info.reader ? frames_reader_meta(info.reader) : NULL)) != CLI_OK)
        return rc;
    if (!a->names.fixed) {
        if (!(r = cli_open_reader(a->trace, NULL))) return CLI_DATA;   /* plain or .zst */
        rc = frames_sym_add_reader(a->names.sym, r);
        frames_reader_close(r);
        if (rc < 0) return cli_fail(CLI_DATA, "%s: reading its modload frames: %s", a->trace,
                                    frames_strerror(rc));
    }
    o->names = &a->names;
    return CLI_OK;
}

static void say_index(const args *a, fq_trace *t, const char *used, const char *path) {
    fq_index_info ix;
    fq_index_info_get(t, &ix);
    if (a->json) {
        fprintf(stderr, "{\"index\":\"%s\",\"path\":", used);
        if (path) cli_json_string(stderr, path, strlen(path));
        else fputs("null", stderr);
        fprintf(stderr, ",\"points\":%llu,\"statements\":%llu}\n", (unsigned long long)ix.points,
                (unsigned long long)ix.statements);
    } else if (path && (!strcmp(used, "used") || !strcmp(used, "built")))
        fprintf(stderr, "frames query: index %s (%s): %llu points, %llu statements\n", path, used,
                (unsigned long long)ix.points, (unsigned long long)ix.statements);
    else fprintf(stderr, "frames query: no index%s%s%s\n", path ? " (" : "", path ? path : "",
                 path ? (strcmp(used, "ignored") ? " not found)" : " ignored)") : "");
}

int cmd_query(int argc, char **argv) {
    args a;
    fq_trace *t = NULL;
    fq_query *q = NULL;
    fq_plan *p = NULL;
    fq_trace_info info;
    fq_run_options ro;
    frames_error err;
    out_state o;
    uint64_t n = 0;
    int rc = CLI_OK, qrc;
    const char *index_used = "none";
    char *index_path = NULL;

    if (cli_wants_help(argc, argv)) {
        fputs(usage_text, stdout);
        return CLI_OK;
    }
    memset(&a, 0, sizeof a);
    memset(&o, 0, sizeof o);
    cli_names_init(&a.names);
    if ((rc = parse_args(argc, argv, &a)) != CLI_OK) goto done;
    if (!(q = build_query(&a))) {
        rc = CLI_USAGE;
        goto done;
    }
    if (cli_open_query_trace(a.trace, &t, &err) < 0) {
        rc = cli_fail(CLI_DATA, "%s: %s", a.trace, err.message);
        goto done;
    }
    use_index(t, &a, &index_used, &index_path);
    if (a.verbose) say_index(&a, t, index_used, index_path);
    if (fq_compile(&p, q, t, &err) < 0) {
        rc = err.code == FQ_E_QUERY || err.code == FQ_E_SYNTAX ? cli_usage_error("%s", err.message)
                                                              : cli_fail(CLI_DATA, "%s", err.message);
        goto done;
    }
    o.out = stdout;
    o.json = a.json;
    if ((rc = open_names(&a, t, &o)) != CLI_OK) goto done;
    if (!a.count && !(o.batch = (char *)malloc(OUT_BATCH))) {
        rc = cli_fail(CLI_DATA, "out of memory");
        goto done;
    }
    fq_run_options_default(&ro);
    ro.threads = a.threads;
    ro.limit = a.limit;
    ro.pick = a.pick;
    ro.seed = a.seed;
    ro.bindings_only = !o.json;   /* the listing prints the bindings only; JSON adds aux */
    cli_progress_start(&o.progress, "query", 0);
    if (o.progress.active) {
        ro.progress = show_progress;
        ro.progress_ctx = &o;
    }
    qrc = fq_run(p, &ro, a.count ? NULL : print_result, &o, &n, &err);
    if (qrc < 0 && qrc != FRAMES_E_STOPPED)   /* stopped: a write failed (reported below) */
        rc = cli_fail(CLI_DATA, "%s: %s", a.trace, err.message);
    flush_batch(&o);
    cli_progress_end(&o.progress);
    if (a.count) printf("%llu\n", (unsigned long long)n);
    /* the run indexed the trace: now it is known whether it was cut short */
    fq_trace_info_get(t, &info);
    if (info.message[0]) cli_warn("%s: %s", a.trace, info.message);
    /* a write error on stdout is reported as the command ends (cli_stdout_done) */
    if (o.failed && !ferror(stdout) && fflush(stdout) == 0) rc = cli_fail(CLI_DATA, "out of memory for a result line");
    if (rc == CLI_OK && info.damaged) rc = CLI_DATA;   /* results of the intact part only */
done:
    cli_names_close(&a.names);
    fq_plan_close(p);
    fq_query_close(q);
    cli_close_query_trace(t);
    free(o.line);
    free(o.batch);
    free(a.vars);
    free(a.soft);
    free(a.pcs);
    free(index_path);
    return rc;
}
