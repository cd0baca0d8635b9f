/* frames history - every read and write of a memory range or a register, in trace order,
   found through the state index (frames_replay.h) without decoding the whole trace. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static void usage(FILE *out) {
    fprintf(out,
            "usage: frames history TRACE (--mem ADDR[:LEN] | --reg NAME) [--from I] [--to J]\n"
            "                      [--json] [--index PATH]\n\n"
            "Every access to memory [ADDR, ADDR+LEN) (LEN default 1) or to register NAME (any\n"
            "alias: eax, ax, al and ah all touch rax) by instructions I to J-1, in order: reads\n"
            "(values before the instruction) and writes (values after it). See\n"
            "docs/timetravel.md.\n\n"
            "  --from I       first instruction (default 0)\n"
            "  --to J         stop before instruction J (default: the end)\n"
            "  --json         one JSON object per access: index, pc, thread, access (\"read\" or\n"
            "                 \"write\"), address and size or register, value (null: none)\n"
            "  --index PATH   the state index (default TRACE.fridx; built when missing or stale)\n\n"
            "Exit status: 0 done, 1 the trace or index could not be read, 2 usage error.\n");
}

static void print_access(const frames_replay_access *a, int json) {
    if (json) {
        printf("{\"index\":%llu,\"pc\":\"0x%llx\",\"thread\":%llu,\"access\":\"%s\",",
               (unsigned long long)a->index, (unsigned long long)a->pc, (unsigned long long)a->thread,
               a->write ? "write" : "read");
        if (a->reg[0]) printf("\"register\":\"%s\",", a->reg);
        else printf("\"address\":\"0x%llx\",\"size\":%u,", (unsigned long long)a->addr, a->size);
        printf("\"value\":");
        if (a->len) {
            printf("\"");
            cli_hex_le(stdout, a->value, a->len);
            printf("\"}\n");
        } else {
            printf("null}\n");
        }
        return;
    }
    printf("%-10llu 0x%-12llx tid %-8llu %-5s ", (unsigned long long)a->index, (unsigned long long)a->pc,
           (unsigned long long)a->thread, a->write ? "write" : "read");
    if (a->reg[0]) printf("%-6s ", a->reg);
    else printf("0x%llx:%u ", (unsigned long long)a->addr, a->size);
    if (a->len) cli_hex_le(stdout, a->value, a->len);
    else printf("(no value)");
    printf("\n");
}

int cmd_history(int argc, char **argv) {
    const char *in = NULL, *index = NULL;
    uint64_t from = 0, to = UINT64_MAX, at;
    int json = 0, i, have_mem = 0, status = CLI_OK, rc;
    frames_replay_query q;
    frames_replay *r;
    frames_replay_info info;
    frames_replay_access acc[16];
    frames_error err;
    memset(&q, 0, sizeof q);
    if (cli_wants_help(argc, argv)) {
        usage(stdout);
        return CLI_OK;
    }
    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json")) {
            json = 1;
        } else if (!strcmp(argv[i], "--mem") && i + 1 < argc) {
            if (cli_parse_addr_len(argv[++i], 1, &q.addr, &q.len) || q.len > (256u << 10))
                return cli_usage_error("--mem wants ADDR[:LEN] with LEN 1..262144, got '%s'", argv[i]);
            have_mem = 1;
        } else if (!strcmp(argv[i], "--reg") && i + 1 < argc) {
            q.reg = argv[++i];
        } else if (!strcmp(argv[i], "--from") && i + 1 < argc) {
            if (cli_parse_u64(argv[++i], &from)) return cli_usage_error("--from wants a number, got '%s'", argv[i]);
        } else if (!strcmp(argv[i], "--to") && i + 1 < argc) {
            if (cli_parse_u64(argv[++i], &to)) return cli_usage_error("--to wants a number, got '%s'", argv[i]);
        } else if (!strcmp(argv[i], "--index") && i + 1 < argc) {
            index = argv[++i];
        } else if (cli_trace_arg(argv[i], &in) != CLI_OK) {
            return CLI_USAGE;
        }
    }
    if (!in) return cli_usage_error("missing TRACE");
    if (have_mem == !!q.reg) return cli_usage_error("give one of --mem ADDR[:LEN] and --reg NAME");
    q.what = have_mem ? FRAMES_REPLAY_MEM_ACCESS : FRAMES_REPLAY_REG_ACCESS;
    if (!(r = cli_open_replay(in, index))) return CLI_DATA;
    frames_replay_info_get(r, &info);
    if (to > info.instructions) to = info.instructions;
    /* instruction `from` itself, then each next match after it */
    for (at = from, rc = at < to ? FRAMES_OK : FRAMES_REPLAY_NONE; rc == FRAMES_OK && at < to;
         rc = frames_replay_find(r, &q, at, 1, &at, &err)) {
        long n = frames_replay_accesses(r, &q, at, acc, sizeof acc / sizeof acc[0], &err), k;
        if (n < 0) { rc = (int)n; break; }
        for (k = 0; k < n && k < (long)(sizeof acc / sizeof acc[0]); k++) print_access(&acc[k], json);
    }
    if (rc < 0) status = cli_lib_error(&err);
    if (fflush(stdout) != 0) status = cli_fail(CLI_DATA, "cannot write the output");
    frames_replay_close(r);
    return status;
}
