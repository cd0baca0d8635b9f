/* frames vprof - value profile of a trace: redundant loads, silent stores, zero-value
   loads, per instruction. The analysis is frames_vprof.h; this file only reads the trace
   and prints. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "frames_vprof.h"
#include "record/record.h"

static void usage(FILE *out) {
    fprintf(out,
            "usage: frames vprof [--json] [--top N] [--max-addresses N] [--max-instructions N]\n"
            "                    [--module NAME:LO-HI]... [--sysroot DIR] [--no-symbols] TRACE\n"
            "       frames vprof TRACE --profiler NAME [--approx D] [--registers] [--top N]\n"
            "                    [--sample N/M] [--context-depth N] [--data] [--threads]\n"
            "                    [--json]\n"
            "       frames vprof --profiler NAME [OPTIONS] -- PROGRAM [ARGS...]   (online: no trace\n"
            "                    is written; the program runs under frames record's engine)\n"
            "\n"
            "With --profiler, one of VClinic's clients over calling contexts (docs/vprof.md):\n"
            "  zero-loads, redundant-loads, silent-stores, dead-stores, values; the top entries\n"
            "by bytes, each with its call path (or pair of call paths), count, bytes, share.\n"
            "  --approx D            silent-stores: floats equal within relative delta D\n"
            "  --registers           silent-stores: register writes too\n"
            "  --data                entries per data object too: heap blocks by the call\n"
            "                        path of their malloc/calloc/realloc/new (x86-64),\n"
            "                        globals and statics by symbol, the stack\n"
            "  --threads             entries per thread too (\"thread\" in each JSON entry)\n"
            "  --sample N/M          profile N of every M instructions\n"
            "  --context-depth N     call sites kept per context (default 64)\n"
            "\n"
            "Without it:\n"
            "Value profile of the memory operands of a trace (\"-\" reads standard input):\n"
            "  redundant loads  the previous load of the same address and size loaded the same\n"
            "                   value and no store wrote to those bytes in between\n"
            "  silent stores    the store writes the value the memory already held (counted\n"
            "                   only where the trace carries the old value of every byte)\n"
            "  zero-value loads every loaded byte is zero\n"
            "with a table of the top instructions for each (see docs/vprof.md), named as\n"
            "module!symbol+offset at file:line (docs/symbols.md).\n"
            "\n"
            "  --json                one JSON object on standard output\n"
            "  --top N               rows per table (default 10, 0 for totals only)\n"
            "  --max-addresses N     memory tracked: entries per table (default %llu);\n"
            "                        past it counts are lower bounds, and that is reported\n"
            "  --max-instructions N  per-instruction rows (default %llu)\n"
            CLI_NAMES_USAGE CLI_EXIT_STATUS,
            1ull << 21, 1ull << 20);
}

static double percent(uint64_t part, uint64_t whole) {
    return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

struct table_spec {
    frames_vprof_metric metric;
    const char *title, *json_key, *count_name;
    frames_vprof_metric base;        /* the row's denominator for the percentage */
};

static const struct table_spec tables[] = {
    {FRAMES_VPROF_REDUNDANT_LOADS, "redundant loads", "top_redundant_loads", "redundant",
     FRAMES_VPROF_LOADS},
    {FRAMES_VPROF_SILENT_STORES, "silent stores", "top_silent_stores", "silent",
     FRAMES_VPROF_STORES},
    {FRAMES_VPROF_ZERO_LOADS, "zero-value loads", "top_zero_loads", "zero", FRAMES_VPROF_LOADS},
};

static uint64_t total_of(const frames_vprof_stats *s, frames_vprof_metric m) {
    switch (m) {
    case FRAMES_VPROF_REDUNDANT_LOADS: return s->redundant_loads;
    case FRAMES_VPROF_SILENT_STORES: return s->silent_stores;
    case FRAMES_VPROF_ZERO_LOADS: return s->zero_loads;
    case FRAMES_VPROF_LOADS: return s->loads;
    case FRAMES_VPROF_STORES: return s->stores;
    case FRAMES_VPROF_ACCESSES: return s->loads + s->stores;
    }
    return 0;
}

/* Silent stores are a share of the stores whose old value was known. */
static uint64_t row_base(const frames_vprof_insn *r, const struct table_spec *t) {
    return t->metric == FRAMES_VPROF_SILENT_STORES ? r->checked_stores
                                                   : frames_vprof_metric_of(r, t->base);
}

static void print_text(const char *path, const frames_vprof_stats *s, frames_vprof *vp,
                       frames_vprof_insn *rows, size_t top, cli_names *names) {
    size_t t, i, n;
    char name[1024];
    printf("trace                %s\n", path);
    printf("frames               %llu (%llu std_frames)\n", (unsigned long long)s->frames,
           (unsigned long long)s->std_frames);
    printf("loads                %llu\n", (unsigned long long)s->loads);
    printf("  redundant          %llu (%.2f%% of loads)\n", (unsigned long long)s->redundant_loads,
           percent(s->redundant_loads, s->loads));
    printf("  zero-value         %llu (%.2f%% of loads)\n", (unsigned long long)s->zero_loads,
           percent(s->zero_loads, s->loads));
    printf("stores               %llu\n", (unsigned long long)s->stores);
    printf("  old value known    %llu (%.2f%% of stores)\n", (unsigned long long)s->checked_stores,
           percent(s->checked_stores, s->stores));
    printf("  silent             %llu (%.2f%% of stores with a known old value)\n",
           (unsigned long long)s->silent_stores, percent(s->silent_stores, s->checked_stores));
    printf("  value unknown      %llu\n", (unsigned long long)s->unknown_value_stores);
    printf("instructions         %llu with memory accesses\n", (unsigned long long)s->instructions);
    if (s->skipped_operands)
        printf("skipped operands     %llu (no value, or larger than %u bytes)\n",
               (unsigned long long)s->skipped_operands, FRAMES_VPROF_MAX_ACCESS);
    if (s->address_cap_hit || s->untracked_accesses)
        printf("address cap          %llu entries reached: %llu accesses untracked, counts are "
               "lower bounds (raise --max-addresses)\n",
               (unsigned long long)s->max_addresses, (unsigned long long)s->untracked_accesses);
    if (s->instruction_cap_hit)
        printf("instruction cap      %llu rows reached: %llu accesses only in the totals\n",
               (unsigned long long)s->max_instructions,
               (unsigned long long)s->untracked_instructions);
    for (t = 0; top && t < sizeof tables / sizeof tables[0]; t++) {
        const struct table_spec *ts = &tables[t];
        uint64_t total = total_of(s, ts->metric);
        n = frames_vprof_top(vp, ts->metric, rows, top);
        printf("\ntop instructions by %s\n", ts->title);
        if (n == 0) {
            printf("  (none)\n");
            continue;
        }
        printf("  %-18s %12s %12s %8s %8s\n", "address",
               ts->metric == FRAMES_VPROF_SILENT_STORES ? "known-old" : "loads", ts->count_name,
               "%row", "%all");
        for (i = 0; i < n; i++) {
            uint64_t v = frames_vprof_metric_of(&rows[i], ts->metric), b = row_base(&rows[i], ts);
            printf("  0x%016llx %12llu %12llu %7.2f%% %7.2f%%%s%s\n",
                   (unsigned long long)rows[i].address, (unsigned long long)b,
                   (unsigned long long)v, percent(v, b), percent(v, total),
                   cli_names_text(names, rows[i].address, name, sizeof name)[0] ? "  " : "", name);
        }
    }
}

static void json_u64(const char *key, uint64_t v, int comma) {
    printf("\"%s\":%llu%s", key, (unsigned long long)v, comma ? "," : "");
}

static void print_json(const char *path, const frames_vprof_stats *s, frames_vprof *vp,
                       frames_vprof_insn *rows, size_t top, cli_names *names) {
    size_t t, i, n;
    printf("{\"trace\":");
    cli_json_string(stdout, path, strlen(path));
    printf(",");
    json_u64("frames", s->frames, 1);
    json_u64("std_frames", s->std_frames, 1);
    json_u64("loads", s->loads, 1);
    json_u64("redundant_loads", s->redundant_loads, 1);
    json_u64("zero_loads", s->zero_loads, 1);
    json_u64("stores", s->stores, 1);
    json_u64("checked_stores", s->checked_stores, 1);
    json_u64("silent_stores", s->silent_stores, 1);
    json_u64("unknown_value_stores", s->unknown_value_stores, 1);
    json_u64("skipped_operands", s->skipped_operands, 1);
    json_u64("instructions", s->instructions, 1);
    json_u64("max_addresses", s->max_addresses, 1);
    json_u64("untracked_accesses", s->untracked_accesses, 1);
    printf("\"address_cap_hit\":%s,", s->address_cap_hit ? "true" : "false");
    json_u64("max_instructions", s->max_instructions, 1);
    json_u64("untracked_instructions", s->untracked_instructions, 1);
    printf("\"instruction_cap_hit\":%s", s->instruction_cap_hit ? "true" : "false");
    for (t = 0; t < sizeof tables / sizeof tables[0]; t++) {
        const struct table_spec *ts = &tables[t];
        uint64_t total = total_of(s, ts->metric);
        n = top ? frames_vprof_top(vp, ts->metric, rows, top) : 0;
        printf(",\"%s\":[", ts->json_key);
        for (i = 0; i < n; i++) {
            const frames_vprof_insn *r = &rows[i];
            uint64_t v = frames_vprof_metric_of(r, ts->metric);
            printf("%s{\"address\":\"0x%llx\",", i ? "," : "", (unsigned long long)r->address);
            json_u64("loads", r->loads, 1);
            json_u64("redundant_loads", r->redundant_loads, 1);
            json_u64("zero_loads", r->zero_loads, 1);
            json_u64("stores", r->stores, 1);
            json_u64("checked_stores", r->checked_stores, 1);
            json_u64("silent_stores", r->silent_stores, 1);
            printf("\"percent_of_row\":%.4f,\"percent_of_total\":%.4f",
                   percent(v, row_base(r, ts)), percent(v, total));
            cli_names_json(names, stdout, r->address);
            printf("}");
        }
        printf("]");
    }
    printf("}\n");
}

/* ---- --profiler: reports over calling contexts */

struct prof_run {
    const char *name;
    frames_vprof_builtin_options bo;
    uint64_t sample_on, sample_every;
    uint32_t context_depth;
    int json;
};

#define PATH_MAX_FRAMES 256

static void print_path_text(frames_vprof *vp, uint32_t ctx, cli_names *names) {
    uint64_t pcs[PATH_MAX_FRAMES];
    size_t n = frames_vprof_context_path(vp, ctx, pcs, PATH_MAX_FRAMES), i;
    char name[1024];
    if (n > PATH_MAX_FRAMES) n = PATH_MAX_FRAMES;
    for (i = 0; i < n; i++)
        printf("      %*s0x%llx %s\n", (int)(2 * i), "", (unsigned long long)pcs[i],
               cli_names_text(names, pcs[i], name, sizeof name));
}

/* --data: the allocators by the symbol their first instruction starts. */
static int classify_allocator(void *ctx, uint64_t pc) {
    static const struct { const char *name; int kind; } names[] = {
        {"malloc", FRAMES_VPROF_MALLOC}, {"calloc", FRAMES_VPROF_CALLOC},
        {"realloc", FRAMES_VPROF_REALLOC}, {"free", FRAMES_VPROF_FREE},
        {"__libc_malloc", FRAMES_VPROF_MALLOC}, {"__libc_calloc", FRAMES_VPROF_CALLOC},
        {"__libc_realloc", FRAMES_VPROF_REALLOC}, {"__libc_free", FRAMES_VPROF_FREE},
        {"_Znwm", FRAMES_VPROF_MALLOC}, {"_Znam", FRAMES_VPROF_MALLOC},
        {"_ZdlPv", FRAMES_VPROF_FREE}, {"_ZdaPv", FRAMES_VPROF_FREE},
        {"_ZdlPvm", FRAMES_VPROF_FREE}, {"_ZdaPvm", FRAMES_VPROF_FREE},
    };
    frames_sym_loc loc;
    size_t i, n;
    cli_names_lookup((cli_names *)ctx, pc, &loc);
    if (!loc.symbol || loc.symbol_offset != 0) return 0;
    n = strcspn(loc.symbol, "@");   /* malloc@@GLIBC_2.2.5 */
    if (n > loc.symbol_len) n = loc.symbol_len;
    for (i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strlen(names[i].name) == n && !memcmp(loc.symbol, names[i].name, n)) return names[i].kind;
    return 0;
}

/* --data: the global or static (a data symbol of a module) that holds addr. */
static int find_global(void *ctx, uint64_t addr, uint64_t *start, uint64_t *size,
                       const char **name, size_t *name_len) {
    cli_names *names = (cli_names *)ctx;
    frames_sym_loc loc;
    if (!names->sym || frames_sym_lookup_data(names->sym, addr, &loc) <= 0 ||
        !(loc.found & FRAMES_SYM_FOUND_SYMBOL))
        return 0;
    *start = addr - loc.symbol_offset;
    *size = loc.symbol_size;
    *name = loc.symbol;
    *name_len = loc.symbol_len;
    return 1;
}

/* --data: heap blocks by the allocator calls, globals by the modules' data symbols. */
static int data_objects(frames_vprof *vp, cli_names *names) {
    frames_vprof_data(vp, classify_allocator, names);
    frames_vprof_globals(vp, find_global, names);
    return 0;
}

/* A call path: frames outermost first, each naming its function. */
static void print_path_json(frames_vprof *vp, uint32_t ctx, cli_names *names) {
    uint64_t pcs[PATH_MAX_FRAMES];
    size_t n = frames_vprof_context_path(vp, ctx, pcs, PATH_MAX_FRAMES), i;
    frames_sym_loc loc;
    if (n > PATH_MAX_FRAMES) n = PATH_MAX_FRAMES;
    printf("[");
    for (i = 0; i < n; i++) {
        cli_names_lookup(names, pcs[i], &loc);
        printf("%s{\"function\":", i ? "," : "");
        if (loc.symbol) cli_json_string(stdout, loc.symbol, loc.symbol_len);
        else printf("null");
        printf(",\"address\":\"0x%llx\"", (unsigned long long)pcs[i]);
        cli_names_json(names, stdout, pcs[i]);
        printf("}");
    }
    printf("]");
}

/* An element type as the JSON names it. */
static const char *type_name(frames_vprof_type t) {
    static const char *const names[] = {"unknown", "int8", "int16", "int32", "int64", "float32", "float64"};
    return (unsigned)t < sizeof names / sizeof names[0] ? names[t] : "unknown";
}

static void print_entry_extra_json(const frames_vprof_entry *e, const char *name) {
    uint32_t i;
    if (!strcmp(name, "values")) {
        printf(",\"value\":\"0x%llx\",\"size\":%u,\"type\":\"%s\"", (unsigned long long)e->value,
               e->size, type_name(e->type));
    } else if (!strcmp(name, "zero-loads")) {
        printf(",\"loads\":%llu,\"type\":\"%s\",\"always_zero_bytes\":\"", (unsigned long long)e->total,
               type_name(e->type));
        for (i = 0; i < e->size && i < sizeof e->nonzero; i++) putchar(e->nonzero[i] ? '.' : '0');
        printf("\"");
        if (e->is_float)
            printf(",\"float_always_zero\":{\"sign\":%s,\"exponent\":%s,\"mantissa\":%s}",
                   e->float_seen & 1 ? "false" : "true", e->float_seen & 2 ? "false" : "true",
                   e->float_seen & 4 ? "false" : "true");
    } else if (!strcmp(name, "silent-stores")) {
        printf(",\"stores\":%llu", (unsigned long long)e->total);
    }
}

static void print_profile(const char *path, const struct prof_run *pr, frames_vprof *vp,
                          frames_vprof_builtin *b, size_t top, cli_names *names) {
    const frames_vprof_builtin_stats *bs = frames_vprof_builtin_stats_get(b);
    const frames_replay_stack_stats *ss = frames_vprof_stack_stats(vp);
    const frames_vprof_stats *s = frames_vprof_stats_get(vp);
    frames_vprof_entry *e = (frames_vprof_entry *)calloc(top ? top : 1, sizeof *e);
    size_t n = e ? frames_vprof_builtin_top(b, e, top) : 0, i, k;
    int pair = !strcmp(pr->name, "redundant-loads") || !strcmp(pr->name, "dead-stores");
    if (pr->json) {
        printf("{\"trace\":");
        if (path) cli_json_string(stdout, path, strlen(path));
        else printf("null");   /* online */
        printf(",\"profiler\":\"%s\",\"instructions\":%llu,\"records\":%llu,"
               "\"total_bytes\":%llu,\"dropped\":%llu",
               pr->name, (unsigned long long)s->std_frames, (unsigned long long)bs->records,
               (unsigned long long)bs->total_bytes, (unsigned long long)bs->dropped);
        if (ss)
            printf(",\"calls\":%llu,\"unmatched_returns\":%llu,\"unwound_frames\":%llu",
                   (unsigned long long)ss->calls, (unsigned long long)ss->unmatched_returns,
                   (unsigned long long)ss->unwound);
        printf(",\"entries\":[");
        for (i = 0; i < n; i++) {
            printf("%s{\"contexts\":[", i ? "," : "");
            for (k = 0; k < e[i].ncontexts; k++) {
                if (k) printf(",");
                print_path_json(vp, e[i].context[k], names);
            }
            printf("],\"count\":%llu,\"bytes\":%llu,\"share\":%.6f",
                   (unsigned long long)e[i].count, (unsigned long long)e[i].bytes,
                   bs->total_bytes ? (double)e[i].bytes / (double)bs->total_bytes : 0.0);
            print_entry_extra_json(&e[i], pr->name);
            if (pr->bo.threads) printf(",\"thread\":%llu", (unsigned long long)e[i].thread);
            if (pr->bo.data) {
                printf(",\"object\":");
                if (e[i].object_kind == FRAMES_VPROF_GLOBAL) {
                    const frames_vprof_object *ob = frames_vprof_object_get(vp, e[i].object);
                    printf("{\"kind\":\"global\",\"symbol\":");
                    cli_json_string(stdout, ob->name, ob->name_len);
                    printf(",\"size\":%llu}", (unsigned long long)ob->size);
                } else if (e[i].object_kind == FRAMES_VPROF_STACK) {
                    printf("{\"kind\":\"stack\"}");
                } else if (e[i].object) {
                    printf("{\"kind\":\"heap\",\"allocation\":");
                    print_path_json(vp, e[i].object, names);
                    printf("}");
                } else {
                    printf("null");
                }
            }
            printf("}");
        }
        printf("]}\n");
    } else {
        printf("trace          %s\nprofiler       %s\ninstructions   %llu\n"
               "waste          %llu bytes\n", path ? path : "(online)", pr->name, (unsigned long long)s->std_frames,
               (unsigned long long)bs->total_bytes);
        if (ss && ss->calls == 0) printf("note           no calls seen: every context is the outermost level\n");
        if (ss && (ss->unmatched_returns || ss->unwound))
            printf("note           %llu returns matched no call, %llu frames unwound "
                   "(longjmp, exceptions, a trace starting inside calls)\n",
                   (unsigned long long)ss->unmatched_returns, (unsigned long long)ss->unwound);
        if (bs->records == 0) printf("note           no values to profile in this trace\n");
        if (bs->dropped) printf("note           %llu accesses over the caps: counts are lower bounds\n",
                                (unsigned long long)bs->dropped);
        for (i = 0; i < n; i++) {
            printf("\n#%zu  %.2f%%  count %llu  bytes %llu\n", i + 1,
                   bs->total_bytes ? 100.0 * (double)e[i].bytes / (double)bs->total_bytes : 0.0,
                   (unsigned long long)e[i].count, (unsigned long long)e[i].bytes);
            if (pr->bo.threads) printf("   thread %llu\n", (unsigned long long)e[i].thread);
            for (k = 0; k < e[i].ncontexts; k++) {
                printf("   %s\n", !pair ? "context" : k ? "killed/repeated by" : "first access");
                print_path_text(vp, e[i].context[k], names);
            }
            if (pr->bo.data && e[i].object_kind == FRAMES_VPROF_GLOBAL) {
                const frames_vprof_object *ob = frames_vprof_object_get(vp, e[i].object);
                printf("   data object: global %.*s (%llu bytes)\n", (int)ob->name_len, ob->name,
                       (unsigned long long)ob->size);
            } else if (pr->bo.data && e[i].object_kind == FRAMES_VPROF_STACK) {
                printf("   data object: the stack\n");
            } else if (pr->bo.data && e[i].object) {
                printf("   data object: heap block allocated at\n");
                print_path_text(vp, e[i].object, names);
            }
        }
    }
    free(e);
}

/* ---- online: the recorder's encoded trace, decoded as it arrives (no file) */

struct online {
    struct prof_run *pr;
    frames_vprof_options o;
    cli_names *names;
    frames_vprof *vp;
    frames_vprof_builtin *b;
    uint8_t *buf, *head;       /* bytes not yet decoded; the header and meta */
    size_t len, cap;
    frames_reader *hr;         /* reader over head: the header and the meta */
    frames_decoder dec;
    int failed;
};

/* The header and meta are complete once a reader opens on the bytes so far. */
static int online_start(struct online *on) {
    const frames_header *h;
    frames_reader *r;
    frames_error err;
    uint64_t first;
    if (frames_reader_open_memory(&r, on->buf, on->len, NULL, &err) < 0) return 0;
    first = frames_reader_header(r)->first_frame;   /* the header goes with the reader */
    frames_reader_close(r);
    if (first > on->len) return 0;
    if (!(on->head = (uint8_t *)malloc((size_t)first + 1))) return -1;
    memcpy(on->head, on->buf, (size_t)first);
    if (frames_reader_open_memory(&on->hr, on->head, (size_t)first, NULL, &err) < 0)
        return cli_lib_error(&err), -1;
    h = frames_reader_header(on->hr);
    on->o.arch = (uint32_t)h->arch;
    on->o.machine = h->machine;
    if (cli_names_open(on->names, frames_reader_meta(on->hr)) != CLI_OK) return -1;
    if (frames_vprof_open(&on->vp, &on->o, &err) < 0 ||
        (on->pr->bo.data && data_objects(on->vp, on->names)) ||
        frames_vprof_builtin_open(&on->b, on->vp, on->pr->name, &on->pr->bo, &err) < 0)
        return cli_lib_error(&err), -1;
    memmove(on->buf, on->buf + h->first_frame, on->len - (size_t)h->first_frame);
    on->len -= (size_t)h->first_frame;
    return 1;
}

static uint64_t le64(const uint8_t *p) {
    uint64_t v = 0;
    int i;
    for (i = 7; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

/* Decode and profile the complete frames of p[0..len); *used: the bytes they took. */
static int online_frames(struct online *on, const uint8_t *p, size_t len, size_t *used) {
    size_t pos = 0;
    frames_frame f;
    frames_error err;
    while (len - pos >= 8) {
        uint64_t n = le64(p + pos);
        if (n > len - pos - 8) break;
        if (frames_decode_frame(&on->dec, p + pos + 8, (size_t)n, &f, &err) < 0)
            return cli_lib_error(&err), -1;
        if (f.kind == FRAMES_KIND_MODLOAD) cli_names_frame(on->names, &f);
        if (frames_vprof_add_frame(on->vp, &f) < 0) return cli_lib_error(frames_vprof_error(on->vp)), -1;
        pos += 8 + (size_t)n;
    }
    *used = pos;
    return 0;
}

/* Keep p[0..len) for the next write (a frame cut between writes, or the header). */
static int online_keep(struct online *on, const void *p, size_t len) {
    if (on->len + len > on->cap) {
        size_t nc = (on->len + len) * 2;
        uint8_t *nb = (uint8_t *)realloc(on->buf, nc);
        if (!nb) return -1;
        on->buf = nb;
        on->cap = nc;
    }
    memcpy(on->buf + on->len, p, len);
    on->len += len;
    return 0;
}

/* The recorder's bytes: whole frames are decoded where they are (no copy); only a frame
   cut by the end of a write waits in buf for the rest. */
static int online_write(void *ctx, const void *data, size_t len) {
    struct online *on = (struct online *)ctx;
    const uint8_t *d = (const uint8_t *)data;
    size_t used;
    int st;
    if (on->failed) return -1;
    if (on->vp && !on->len) {
        if (online_frames(on, d, len, &used) < 0) return on->failed = 1, -1;
        if (online_keep(on, d + used, len - used) < 0) return on->failed = 1, -1;
        return 0;
    }
    if (online_keep(on, d, len) < 0) return on->failed = 1, -1;
    if (!on->vp && (st = online_start(on)) <= 0) return st < 0 ? (on->failed = 1, -1) : 0;
    if (online_frames(on, on->buf, on->len, &used) < 0) return on->failed = 1, -1;
    memmove(on->buf, on->buf + used, on->len - used);
    on->len -= used;
    return 0;
}

static int online_run(struct prof_run *pr, const frames_vprof_options *o, cli_names *names,
                      size_t top, int argc, char **argv) {
    struct online on;
    frames_sink sink;
    int rc;
    memset(&on, 0, sizeof on);
    on.pr = pr;
    on.o = *o;
    on.names = names;
    frames_decoder_init(&on.dec, NULL, 0, NULL);
    memset(&sink, 0, sizeof sink);
    sink.ctx = &on;
    sink.write = online_write;
    rc = record_into_sink(&sink, argc, argv);
    if (on.vp && !on.failed) {
        if (on.len) cli_warn("the recording ended inside a frame (%zu bytes not profiled)", on.len);
        print_profile(NULL, pr, on.vp, on.b, top, names);
    } else if (!on.failed && rc == 0) {
        rc = cli_fail(CLI_DATA, "the recorder wrote no trace");
    }
    frames_vprof_builtin_close(on.b);
    frames_vprof_close(on.vp);
    frames_reader_close(on.hr);
    frames_decoder_free(&on.dec);
    free(on.head);
    free(on.buf);
    return rc;
}

/* Feed every frame; decode errors are reported and skipped (the reader continues). */
static int profile(frames_reader *r, frames_vprof *vp, int *decode_errors, cli_names *names) {
    frames_frame f;
    frames_reader_info st;
    cli_progress p;
    uint64_t done = 0;
    int rc;
    cli_progress_start(&p, "vprof", frames_reader_info_get(r, &st) == 0 && st.count_known ? st.nframes : 0);
    for (;;) {
        rc = frames_reader_next(r, &f);
        if (rc == 0) break;
        if (rc == FRAMES_E_DECODE) {
            if ((*decode_errors)++ < 10) cli_warn("%s (skipped)", frames_reader_error(r)->message);
            continue;
        }
        if (rc < 0) {
            cli_progress_end(&p);
            return cli_lib_error(frames_reader_error(r));
        }
        if (f.kind == FRAMES_KIND_MODLOAD) cli_names_frame(names, &f);
        if (frames_vprof_add_frame(vp, &f) < 0) {
            cli_progress_end(&p);
            return cli_lib_error(frames_vprof_error(vp));
        }
        if ((++done & 0xffff) == 0) cli_progress_update(&p, done);
    }
    cli_progress_end(&p);
    return CLI_OK;
}

int cmd_vprof(int argc, char **argv) {
    frames_vprof_options o;
    const char *path = NULL;
    uint64_t top = 10;
    int json = 0, i, rc, decode_errors = 0;
    struct prof_run pr;
    frames_vprof_builtin *b = NULL;
    frames_reader *r;
    frames_vprof *vp;
    frames_vprof_insn *rows;
    frames_error err;
    cli_names names;
    if (cli_wants_help(argc, argv)) {
        usage(stdout);
        return CLI_OK;
    }
    frames_vprof_options_default(&o);
    cli_names_init(&names);
    memset(&pr, 0, sizeof pr);
    frames_vprof_builtin_options_default(&pr.bo);
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        int no = cli_names_option(argc, argv, &i, &names);
        if (no == CLI_USAGE) return no;
        if (no == 1) continue;
        if (!strcmp(a, "--")) {
            if (!pr.name) return cli_usage_error("online profiling needs --profiler NAME");
            if (path) return cli_usage_error("a trace or a program (after --), not both");
            if (i + 1 >= argc) return cli_usage_error("no program given after --");
            pr.json = json;
            o.counts_off = 1;   /* the profiler's report has no per-instruction counts */
            rc = online_run(&pr, &o, &names, (size_t)top, argc - i - 1, argv + i + 1);
            cli_names_close(&names);
            return rc;
        } else if (!strcmp(a, "--json")) {
            json = 1;
        } else if (!strcmp(a, "--data")) {
            pr.bo.data = 1;
        } else if (!strcmp(a, "--threads")) {
            pr.bo.threads = 1;
        } else if (!strcmp(a, "--registers")) {
            pr.bo.registers = 1;
        } else if (!strcmp(a, "--profiler")) {
            if (!cli_option_value(argc, argv, &i)) return CLI_USAGE;
            pr.name = argv[i];
        } else if (!strcmp(a, "--approx")) {
            char *end;
            if (!cli_option_value(argc, argv, &i)) return CLI_USAGE;
            pr.bo.approx = strtod(argv[i], &end);
            if (*end || end == argv[i] || !(pr.bo.approx >= 0 && pr.bo.approx < 1))
                return cli_usage_error("--approx needs a relative delta in [0, 1), got '%s'", argv[i]);
        } else if (!strcmp(a, "--sample")) {
            unsigned long long on, every;
            char extra;
            if (!cli_option_value(argc, argv, &i)) return CLI_USAGE;
            if (sscanf(argv[i], "%llu/%llu%c", &on, &every, &extra) != 2 || on == 0 || every == 0 ||
                on > every)
                return cli_usage_error("--sample needs N/M with 0 < N <= M, got '%s'", argv[i]);
            o.sample_on = on;
            o.sample_every = every;
        } else if (!strcmp(a, "--context-depth")) {
            uint64_t v;
            if (!cli_option_value(argc, argv, &i)) return CLI_USAGE;
            if (cli_parse_u64(argv[i], &v) || v > 4096)
                return cli_usage_error("--context-depth needs a number up to 4096, got '%s'", argv[i]);
            o.context_depth = (uint32_t)v;
        } else if (!strcmp(a, "--top") || !strcmp(a, "--max-addresses") ||
                   !strcmp(a, "--max-instructions")) {
            uint64_t v;
            if (!cli_option_value(argc, argv, &i)) return CLI_USAGE;
            if (cli_parse_u64(argv[i], &v)) return cli_usage_error("%s needs a number, got '%s'", a, argv[i]);
            if (!strcmp(a, "--top")) {
                if (v > 100000) return cli_usage_error("--top %llu is too large (at most 100000)",
                                                       (unsigned long long)v);
                top = v;
            } else if (v == 0) {
                return cli_usage_error("%s must be at least 1", a);
            } else if (!strcmp(a, "--max-addresses")) {
                o.max_addresses = v;
                pr.bo.max_addresses = v;   /* the profilers' shadow memory too */
            } else {
                o.max_instructions = v;
            }
        } else if (a[0] == '-' && a[1]) {
            return cli_usage_error("unknown option '%s'", a);
        } else if (path) {
            return cli_usage_error("one trace only");
        } else {
            path = a;
        }
    }
    if (!path) return cli_usage_error("no trace given");
    if (!(r = cli_open_reader(path, NULL))) return CLI_DATA;
    if ((rc = cli_names_open(&names, frames_reader_meta(r))) != CLI_OK) {
        cli_names_close(&names);
        frames_reader_close(r);
        return rc;
    }
    if (pr.name) {
        const frames_header *h = frames_reader_header(r);
        o.arch = (uint32_t)h->arch;
        o.machine = h->machine;
        o.counts_off = 1;   /* the profiler's report has no per-instruction counts */
        pr.json = json;
    }
    if (frames_vprof_open(&vp, &o, &err) < 0 ||
        (pr.name && pr.bo.data && data_objects(vp, &names)) ||
        (pr.name && frames_vprof_builtin_open(&b, vp, pr.name, &pr.bo, &err) < 0)) {
        frames_vprof_close(vp);
        cli_names_close(&names);
        frames_reader_close(r);
        return cli_lib_error(&err);
    }
    rows = (frames_vprof_insn *)calloc(top ? (size_t)top : 1, sizeof *rows);
    if (!rows) {
        rc = cli_fail(CLI_DATA, "out of memory");
    } else if ((rc = profile(r, vp, &decode_errors, &names)) == CLI_OK) {
        cli_reader_warnings(r);
        if (b)
            print_profile(path, &pr, vp, b, (size_t)top, &names);
        else if (json)
            print_json(path, frames_vprof_stats_get(vp), vp, rows, (size_t)top, &names);
        else
            print_text(path, frames_vprof_stats_get(vp), vp, rows, (size_t)top, &names);
        if (decode_errors) rc = cli_fail(CLI_DATA, "%d frames could not be decoded", decode_errors);
    }
    free(rows);
    frames_vprof_builtin_close(b);
    cli_names_close(&names);
    frames_vprof_close(vp);
    frames_reader_close(r);
    return rc;
}
