/* frames dump: every frame as protobuf text (the blocks of the reference dumps), JSON
   Lines, or the instruction addresses alone. */
#include <string.h>

#include "cli.h"

enum dump_format { DUMP_PBTEXT, DUMP_JSON, DUMP_PC, DUMP_JSONL };

static const char dump_usage[] =
    "usage: frames dump [--pbtext | --json | --jsonl | --pc [--symbols]] FILE|-\n"
    "\n"
    "Print every frame of a trace on standard output.\n"
    "  --pbtext  (default) a 'meta {' block, then 'frame N @ 0xOFF size S {' blocks holding\n"
    "            the message in protobuf text format, as 'protoc --decode=frame' prints it\n"
    "  --json    JSON Lines: a meta object, then one object per frame (bytes in hex)\n"
    "  --jsonl   one JSON object per operand (frame, pc, tid, kind, name/address, read/\n"
    "            written, value hex), the same members in every row (docs/jsonl.md)\n"
    "  --pc      the address of every std_frame, 16 lowercase hex digits per line\n"
    "  --symbols with --pc: the address, a space and its name (module!symbol+offset at\n"
    "            file:line, docs/symbols.md; nothing after the address when it has none)\n"
    "  --module NAME:LO-HI, --sysroot DIR: where names come from (as frames stat)\n"
    "Exit status: 0 ok (also when a truncated tail was dropped: warning on stderr),\n"
    "1 unreadable input or undecodable frames, 2 usage error.\n";

static void print_header_comment(FILE *out, frames_reader *r) {
    const frames_header *h = frames_reader_header(r);
    const char *arch = h->arch <= FRAMES_ARCH_LAST ? frames_arch_name(h->arch) : NULL;
    fprintf(out, "# version %llu, arch %llu (%s), machine %llu, header frames %llu, toc 0x%llx\n",
            (unsigned long long)h->version, (unsigned long long)h->arch, arch ? arch : "?",
            (unsigned long long)h->machine, (unsigned long long)h->nframes,
            (unsigned long long)h->toc_offset);
}

static int print_meta(FILE *out, frames_reader *r, enum dump_format fmt) {
    const frames_meta *m = frames_reader_meta(r);
    if (!m) return 0;
    if (fmt == DUMP_PBTEXT) {
        fputs("meta {\n", out);
        frames_print_meta_pbtext(m, 2, frames_out_file, out);
        fputs("}\n", out);
    } else if (fmt == DUMP_JSON) {
        fputs("{\"meta\":", out);
        frames_print_meta_json(m, frames_out_file, out);
        fputs("}\n", out);
    }
    return 0;
}

/* One --pc line; the address by hand, as printf's %016llx would write it (printf was
   most of the time of dump --pc). */
static void print_pc(FILE *out, uint64_t pc, cli_names *names) {
    static const char digits[] = "0123456789abcdef";
    char name[1024], line[17];
    int i;
    if (names->sym && cli_names_text(names, pc, name, sizeof name)[0]) {
        fprintf(out, "%016llx %s\n", (unsigned long long)pc, name);
        return;
    }
    for (i = 15; i >= 0; i--, pc >>= 4) line[i] = digits[pc & 15];
    line[16] = '\n';
    fwrite(line, 1, sizeof line, out);
}

static void print_frame(FILE *out, const frames_frame *f, const frames_raw *raw,
                        enum dump_format fmt, cli_names *names) {
    if (fmt == DUMP_JSONL) {
        frames_print_operand_rows_jsonl(f, raw->index, frames_out_file, out);
    } else if (fmt == DUMP_PC) {
        if (f->kind == FRAMES_KIND_MODLOAD) cli_names_frame(names, f);
        if (f->present & (1u << FRAMES_KIND_STD)) print_pc(out, f->std.address, names);
    } else if (fmt == DUMP_PBTEXT) {
        fprintf(out, "frame %llu @ 0x%llx size %zu {\n", (unsigned long long)raw->index,
                (unsigned long long)raw->offset, raw->payload.len);
        frames_print_frame_pbtext(f, 2, frames_out_file, out);
        fputs("}\n", out);
    } else {
        fprintf(out, "{\"index\":%llu,\"offset\":%llu,\"size\":%zu,\"frame\":",
                (unsigned long long)raw->index, (unsigned long long)raw->offset, raw->payload.len);
        frames_print_frame_json(f, frames_out_file, out);
        fputs("}\n", out);
    }
}

static int dump(frames_reader *r, FILE *out, enum dump_format fmt, cli_names *names) {
    frames_frame f;
    frames_raw raw;
    cli_progress pg;   /* on a terminal's stderr only: the output is on stdout */
    uint64_t pc, tid;
    size_t len;
    int rc, status = CLI_OK;
    cli_progress_start(&pg, "dump", cli_known_frames(r));
    if (fmt == DUMP_PBTEXT) print_header_comment(out, r);
    print_meta(out, r, fmt);
    while ((rc = frames_reader_next_raw(r, &raw)) != 0) {
        if (rc > 0 && fmt == DUMP_PC && frames_peek_std(raw.payload.ptr, raw.payload.len, &pc, &tid, &len)) {
            print_pc(out, pc, names); /* the address is all --pc needs: no decoding */
            continue;
        }
        if (rc > 0) rc = frames_reader_decode(r, &raw, &f);
        if (rc < 0) {
            const frames_error *e = frames_reader_error(r);
            cli_lib_error(e);
            status = CLI_DATA;
            if (rc != FRAMES_E_DECODE && rc != FRAMES_E_LIMIT) break;
            continue;
        }
        print_frame(out, &f, &raw, fmt, names);
        cli_progress_update(&pg, raw.index + 1);
    }
    cli_progress_end(&pg);
    return status;
}

/* The format a flag asks for, or -1. */
static int format_of(const char *arg) {
    if (!strcmp(arg, "--pbtext")) return DUMP_PBTEXT;
    if (!strcmp(arg, "--json")) return DUMP_JSON;
    if (!strcmp(arg, "--pc")) return DUMP_PC;
    if (!strcmp(arg, "--jsonl")) return DUMP_JSONL;
    return -1;
}

int cmd_dump(int argc, char **argv) {
    enum dump_format fmt = DUMP_PBTEXT;
    const char *path = NULL;
    frames_reader *r;
    int i, f, status, symbols = 0;
    const char *format_flag = NULL;   /* the formats exclude each other */
    cli_names names;
    if (cli_wants_help(argc, argv)) {
        fputs(dump_usage, stdout);
        return CLI_OK;
    }
    cli_names_init(&names);
    for (i = 1; i < argc; i++) {
        int o = cli_names_option(argc, argv, &i, &names);
        if (o == CLI_USAGE) return o;
        if (o == 1) continue;
        if (!strcmp(argv[i], "--symbols")) symbols = 1;
        else if ((f = format_of(argv[i])) >= 0) {
            if (cli_exclusive(&format_flag, argv[i]) != CLI_OK) return CLI_USAGE;
            fmt = (enum dump_format)f;
        } else if (argv[i][0] == '-' && argv[i][1]) return cli_usage_error("unknown option '%s'", argv[i]);
        else if (path) return cli_usage_error("more than one input");
        else path = argv[i];
    }
    if (!path) return cli_usage_error("no input (a trace file, or - for standard input)");
    if (symbols && fmt != DUMP_PC) return cli_usage_error("--symbols goes with --pc");
    if (!symbols) names.off = 1;   /* the plain address list stays as it was */
    if (!(r = cli_open_reader(path, NULL))) return CLI_DATA;
    if ((status = cli_names_open(&names, frames_reader_meta(r))) != CLI_OK) {
        frames_reader_close(r);
        return status;
    }
    status = dump(r, stdout, fmt, &names);
    cli_reader_warnings(r);
    cli_names_close(&names);
    frames_reader_close(r);
    return status;
}
