/* frames info: what a trace is, what is in it, and who can read it. */
#include <string.h>

#include "cli.h"

static const char info_usage[] =
    "usage: frames info FILE|- [--json]\n"
    "\n"
    "Header, meta summary, frame counts by kind, the TOC convention found, which known\n"
    "readers accept the file (libtrace C++ before and since 2025-07, BAP's OCaml reader),\n"
    "and the problems found. Every frame is decoded; after a region that cannot be read\n"
    "(a corrupt chunk of a .frames.zst) reading goes on at the next TOC entry that reads.\n"
    "Exit status: 0 ok (problems are reported, not failures), 1 unreadable input or\n"
    "frames that could not be read (reported among the problems), 2 usage.\n";

typedef struct census {
    uint64_t by_kind[FRAMES_KIND_UNKNOWN + 1];
    uint64_t frames, decode_errors;
    uint64_t first_error_frame, first_error_offset;
    char first_error[200];
    uint64_t lost_frames, lost_ranges;   /* could not be read (a damaged region) */
    char first_loss[200];
    char loss[300];                      /* the problem line about them */
} census;

static void count_frames(frames_reader *r, census *c) {
    frames_reader_info st;
    frames_frame f;
    cli_progress bar;
    int rc, k;
    memset(c, 0, sizeof *c);
    frames_reader_info_get(r, &st);
    cli_progress_start(&bar, "reading", st.file_size);
    while ((rc = frames_reader_next(r, &f)) != 0) {
        if (rc < 0) {
            const frames_error *e = frames_reader_error(r);
            if (rc != FRAMES_E_DECODE && rc != FRAMES_E_LIMIT) {
                uint64_t lost;
                int resumed;
                if (!c->lost_ranges++) snprintf(c->first_loss, sizeof c->first_loss, "%s", e->message);
                resumed = frames_reader_skip_damage(r, &lost);
                c->lost_frames += lost;
                if (resumed) continue;
                break;
            }
            if (!c->decode_errors++) {
                c->first_error_frame = e->frame;
                c->first_error_offset = e->offset;
                snprintf(c->first_error, sizeof c->first_error, "%s", e->message);
            }
            continue;
        }
        c->frames++;
        k = (int)f.kind;
        if (k >= FRAMES_KIND_NONE && k <= FRAMES_KIND_UNKNOWN) c->by_kind[k]++;
        cli_progress_update(&bar, c->frames);
    }
    cli_progress_end(&bar);
    if (c->lost_ranges && c->lost_frames)
        snprintf(c->loss, sizeof c->loss, "%llu frames could not be read (%llu damaged regions); the first: %s",
                 (unsigned long long)c->lost_frames, (unsigned long long)c->lost_ranges, c->first_loss);
    else if (c->lost_ranges)
        snprintf(c->loss, sizeof c->loss, "reading stopped after %llu frames: %s",
                 (unsigned long long)c->frames, c->first_loss);
}

static const char *yes_no(int b) { return b ? "yes" : "no"; }

/* Names of FRAMES_FF_* bits, for the problem list. */
static const struct {
    uint32_t bit;
    const char *text;
} flag_text[] = {
    {FRAMES_FF_MULTI_OPTION, "a variant has several options set"},
    {FRAMES_FF_EMPTY_VARIANT, "an empty variant or an empty frame"},
    {FRAMES_FF_INCOMPLETE, "required fields missing"},
    {FRAMES_FF_UNKNOWN_FIELD, "unknown fields (skipped)"},
    {FRAMES_FF_UNKNOWN_OPTION, "unknown frame options (e.g. moflow's 7-9)"},
    {FRAMES_FF_PACKED, "packed repeated scalars"},
    {FRAMES_FF_BAD_BOOL, "bools other than 0/1"},
    {FRAMES_FF_GROUP, "protobuf groups (skipped)"},
    {FRAMES_FF_DUPLICATE, "singular fields repeated"},
    {FRAMES_FF_NONCANONICAL, "non-canonical encoding (re-encoding changes bytes)"},
    {FRAMES_FF_WIDE_VALUE, "32-bit fields carrying more than 32 bits"},
};

static void print_toc_matches(FILE *out, uint32_t matches, int json) {
    int t, first = 1;
    for (t = FRAMES_TOC_LIBTRACE; t < FRAMES_TOC_INVALID; t++) {
        if (!(matches & (1u << t))) continue;
        fprintf(out, json ? "%s\"%s\"" : "%s%s", first ? "" : (json ? "," : ", "), frames_toc_name(t));
        first = 0;
    }
}

static void print_meta_text(FILE *out, const frames_meta *m) {
    fputs("meta: tracer ", out);
    fwrite(m->tracer_name.ptr, 1, m->tracer_name.len, out);
    fputc(' ', out);
    fwrite(m->tracer_version.ptr, 1, m->tracer_version.len, out);
    if (m->ntracer_args) { /* e.g. the guest of frames record's qemu engine */
        uint32_t i;
        for (i = 0; i < m->ntracer_args; i++) {
            fputs(i ? " " : " (", out);
            fwrite(m->tracer_args[i].ptr, 1, m->tracer_args[i].len, out);
        }
        fputc(')', out);
    }
    fputs(", target ", out);
    fwrite(m->target_path.ptr, 1, m->target_path.len, out);
    fputs(", user ", out);
    fwrite(m->user.ptr, 1, m->user.len, out);
    fputs(", host ", out);
    fwrite(m->host.ptr, 1, m->host.len, out);
    fprintf(out, ", time %.17g\n", m->time);
}

static void print_text(FILE *out, const char *path, frames_reader *r, const frames_reader_info *st,
                       const census *c) {
    const frames_header *h = &st->header;
    const char *arch = h->arch <= FRAMES_ARCH_LAST ? frames_arch_name(h->arch) : NULL;
    const frames_meta *m = frames_reader_meta(r);
    uint32_t i, problems = 0;
    int k;
    if (cli_compressed_size(r))   /* the file's own size first: the trace's is the other */
        fprintf(out, "file: %s (%llu bytes, %llu uncompressed)\n", path,
                (unsigned long long)cli_compressed_size(r), (unsigned long long)st->file_size);
    else
        fprintf(out, "file: %s (%llu bytes)\n", path, (unsigned long long)st->file_size);
    cli_print_compression(out, r, 0);
    fprintf(out, "version: %llu\narch: %llu (%s)\nmachine: %llu\n", (unsigned long long)h->version,
            (unsigned long long)h->arch, arch ? arch : "unknown number", (unsigned long long)h->machine);
    if (m) print_meta_text(out, m);
    fprintf(out, "frames: %llu (header says %llu)\n", (unsigned long long)st->nframes,
            (unsigned long long)h->nframes);
    fputs("by kind:", out);
    for (k = FRAMES_KIND_NONE; k <= FRAMES_KIND_UNKNOWN; k++)
        if (c->by_kind[k]) fprintf(out, " %s %llu", frames_kind_name(k), (unsigned long long)c->by_kind[k]);
    fputc('\n', out);
    if (!st->finished) {
        fputs("finished: no (n = 0, T = 0: the writer never finished; 'frames fix' adds the TOC)\n", out);
    } else {
        fprintf(out, "finished: yes (TOC at 0x%llx, m = %llu, %llu entries)\n",
                (unsigned long long)h->toc_offset, (unsigned long long)st->frames_per_toc,
                (unsigned long long)st->toc_entries);
        fprintf(out, "toc convention: %s", frames_toc_name(st->toc));
        if (st->toc_matches & (st->toc_matches - 1)) {
            fputs(" (fits: ", out);
            print_toc_matches(out, st->toc_matches, 0);
            fputc(')', out);
        }
        fputc('\n', out);
    }
    fprintf(out, "readers: libtrace C++ before 2025-07 %s; libtrace C++ since 2025-07 %s; "
                 "BAP OCaml %s\n", yes_no(st->cxx_legacy_accepts), yes_no(st->cxx_head_accepts),
            yes_no(st->ocaml_accepts));
    fputs("problems:", out);
    for (i = 0; i < st->nwarnings; i++, problems++)
        fprintf(out, "\n  %s", frames_reader_warning(r, i));
    if (c->decode_errors) {
        fprintf(out, "\n  %llu frames do not decode; the first: %s", (unsigned long long)c->decode_errors,
                c->first_error);
        problems++;
    }
    if (c->lost_ranges) {
        fprintf(out, "\n  %s", c->loss);
        problems++;
    }
    for (i = 0; i < sizeof flag_text / sizeof flag_text[0]; i++)
        if (st->flags_seen & flag_text[i].bit) {
            fprintf(out, "\n  %s", flag_text[i].text);
            problems++;
        }
    fputs(problems ? "\n" : " none\n", out);
}

static void print_json(FILE *out, const char *path, frames_reader *r, const frames_reader_info *st,
                       const census *c) {
    const frames_header *h = &st->header;
    const char *arch = h->arch <= FRAMES_ARCH_LAST ? frames_arch_name(h->arch) : NULL;
    const frames_meta *m = frames_reader_meta(r);
    uint32_t i;
    int k, first;
    fputs("{\"file\":", out);
    cli_json_string(out, path, strlen(path));
    if (cli_compressed_size(r))
        fprintf(out, ",\"size\":%llu,\"uncompressed_size\":%llu",
                (unsigned long long)cli_compressed_size(r), (unsigned long long)st->file_size);
    else
        fprintf(out, ",\"size\":%llu", (unsigned long long)st->file_size);
    fprintf(out, ",\"version\":%llu,\"arch\":%llu,\"arch_name\":", (unsigned long long)h->version,
            (unsigned long long)h->arch);
    if (arch) cli_json_string(out, arch, strlen(arch));
    else fputs("null", out);
    fprintf(out, ",\"machine\":%llu", (unsigned long long)h->machine);
    cli_print_compression(out, r, 1);
    if (m) {
        fputs(",\"meta\":", out);
        frames_print_meta_json(m, frames_out_file, out);
    }
    fprintf(out, ",\"frames\":%llu,\"header_frames\":%llu,\"by_kind\":{",
            (unsigned long long)st->nframes, (unsigned long long)h->nframes);
    for (k = FRAMES_KIND_NONE, first = 1; k <= FRAMES_KIND_UNKNOWN; k++)
        if (c->by_kind[k]) {
            fprintf(out, "%s\"%s\":%llu", first ? "" : ",", frames_kind_name(k),
                    (unsigned long long)c->by_kind[k]);
            first = 0;
        }
    fprintf(out, "},\"finished\":%s,\"toc_offset\":%llu,\"frames_per_toc\":%llu,"
                 "\"toc_entries\":%llu,\"toc\":\"%s\",\"toc_fits\":[",
            st->finished ? "true" : "false", (unsigned long long)h->toc_offset,
            (unsigned long long)st->frames_per_toc, (unsigned long long)st->toc_entries,
            frames_toc_name(st->toc));
    print_toc_matches(out, st->toc_matches, 1);
    fprintf(out, "],\"truncated\":%s", st->truncated ? "true" : "false");
    if (st->truncated)
        fprintf(out, ",\"truncated_offset\":%llu,\"truncated_bytes\":%llu",
                (unsigned long long)st->truncated_offset, (unsigned long long)st->truncated_bytes);
    fprintf(out, ",\"readers\":{\"libtrace_cxx_legacy\":%s,\"libtrace_cxx_head\":%s,\"bap_ocaml\":%s}",
            st->cxx_legacy_accepts ? "true" : "false", st->cxx_head_accepts ? "true" : "false",
            st->ocaml_accepts ? "true" : "false");
    fprintf(out, ",\"decode_errors\":%llu,\"frames_read\":%llu,\"unreadable_frames\":%llu,\"problems\":[",
            (unsigned long long)c->decode_errors, (unsigned long long)c->frames,
            (unsigned long long)c->lost_frames);
    for (i = 0, first = 1; i < st->nwarnings; i++, first = 0) {
        const char *w = frames_reader_warning(r, i);
        if (!first) fputc(',', out);
        cli_json_string(out, w, strlen(w));
    }
    if (c->decode_errors) {
        if (!first) fputc(',', out);
        cli_json_string(out, c->first_error, strlen(c->first_error));
        first = 0;
    }
    if (c->lost_ranges) {
        if (!first) fputc(',', out);
        cli_json_string(out, c->loss, strlen(c->loss));
        first = 0;
    }
    for (i = 0; i < sizeof flag_text / sizeof flag_text[0]; i++)
        if (st->flags_seen & flag_text[i].bit) {
            if (!first) fputc(',', out);
            cli_json_string(out, flag_text[i].text, strlen(flag_text[i].text));
            first = 0;
        }
    fputs("]}\n", out);
}

int cmd_info(int argc, char **argv) {
    const char *path = NULL;
    int i, json = 0;
    frames_reader *r;
    frames_reader_info st;
    census c;
    if (cli_wants_help(argc, argv)) {
        fputs(info_usage, stdout);
        return CLI_OK;
    }
    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json")) json = 1;
        else if (argv[i][0] == '-' && argv[i][1]) return cli_usage_error("unknown option '%s'", argv[i]);
        else if (path) return cli_usage_error("more than one input");
        else path = argv[i];
    }
    if (!path) return cli_usage_error("no input (a trace file, or - for standard input)");
    if (!(r = cli_open_reader(path, NULL))) return CLI_DATA;
    count_frames(r, &c);
    if (frames_reader_info_get(r, &st) < 0) {
        cli_lib_error(frames_reader_error(r));
        frames_reader_close(r);
        return CLI_DATA;
    }
    if (json) print_json(stdout, path, r, &st, &c);
    else print_text(stdout, path, r, &st, &c);
    frames_reader_close(r);
    if (c.lost_ranges)   /* like stat, dump and query: frames were lost */
        return cli_fail(CLI_DATA, "%s is damaged: %s", path, c.loss);
    return CLI_OK;
}
