/* frames state - the registers and memory before one instruction of a trace, answered
   from the state index (frames_replay.h; built beside the trace on first use). */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#define STATE_MAX_RANGES 64
#define STATE_MAX_LEN (1u << 20)

static void usage(FILE *out) {
    fprintf(out,
            "usage: frames state TRACE --at I [--mem ADDR:LEN]... [--json] [--index PATH]\n\n"
            "The registers and memory before instruction I (the I-th std_frame, from 0, in\n"
            "trace order) of the thread that executes it. Values come from the operands the\n"
            "trace recorded; what no operand showed is unknown and printed as such (absent\n"
            "from --json, \"??\" bytes). See docs/timetravel.md.\n\n"
            "  --at I            the instruction (I = the count of instructions: after the last)\n"
            "  --mem ADDR:LEN    memory to show (up to %d ranges of at most %u bytes)\n"
            "  --json            one JSON object: index, thread, pc, registers, memory\n"
            "  --index PATH      the state index (default TRACE.fridx; built when missing or\n"
            "                    stale: one pass over the trace)\n\n"
            "Exit status: 0 done, 1 the trace or index could not be read, 2 usage error.\n",
            STATE_MAX_RANGES, STATE_MAX_LEN);
}

typedef struct state_range {
    uint64_t addr, len;
} state_range;

static void print_memory(frames_replay *r, const state_range *m, size_t nm, int json) {
    size_t i, j;
    uint8_t *bytes = (uint8_t *)malloc(STATE_MAX_LEN), *known = (uint8_t *)malloc(STATE_MAX_LEN);
    if (!bytes || !known) {
        free(bytes);
        free(known);
        cli_fail(CLI_DATA, "out of memory");
        return;
    }
    if (json) printf(",\"memory\":[");
    for (i = 0; i < nm; i++) {
        frames_replay_mem_get(r, m[i].addr, bytes, known, (size_t)m[i].len);
        if (json) printf("%s{\"address\":\"0x%llx\",\"bytes\":\"", i ? "," : "", (unsigned long long)m[i].addr);
        else printf("memory 0x%llx:", (unsigned long long)m[i].addr);
        for (j = 0; j < m[i].len; j++) {
            if (!json && j && j % 16 == 0) printf("\n      0x%llx:", (unsigned long long)(m[i].addr + j));
            if (known[j]) printf(json ? "%02x" : " %02x", bytes[j]);
            else printf(json ? "??" : " ??");
        }
        printf(json ? "\"}" : "\n");
    }
    if (json) printf("]");
    free(bytes);
    free(known);
}

static void print_registers(frames_replay *r, uint64_t thread, int json) {
    size_t i, n;
    const frames_replay_reg *reg;
    uint8_t v[64];
    int first = 1;
    if (json) printf(",\"registers\":{");
    for (i = 0; (reg = frames_replay_reg_at(r, i)) != NULL; i++) {
        int known = frames_replay_reg_get(r, thread, reg->name, v, sizeof v, &n);
        if (json) {
            if (known != 1) continue;
            printf("%s\"%s\":\"", first ? "" : ",", reg->name);
            cli_hex_le(stdout, v, n);
            printf("\"");
            first = 0;
        } else {
            printf("%-8s ", reg->name);
            if (known == 1) cli_hex_le(stdout, v, n);
            else printf("unknown");
            printf("\n");
        }
    }
    if (json) printf("}");
}

int cmd_state(int argc, char **argv) {
    const char *in = NULL, *index = NULL;
    uint64_t at = 0;
    int have_at = 0, json = 0, i, status = CLI_OK;
    state_range mem[STATE_MAX_RANGES];
    size_t nm = 0;
    frames_replay *r;
    frames_replay_info info;
    frames_replay_insn insn;
    frames_error err;
    uint64_t thread = 0;
    if (cli_wants_help(argc, argv)) {
        usage(stdout);
        return CLI_OK;
    }
    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json")) {
            json = 1;
        } else if (!strcmp(argv[i], "--at") && i + 1 < argc) {
            if (cli_parse_u64(argv[++i], &at)) return cli_usage_error("--at wants an instruction number, got '%s'", argv[i]);
            have_at = 1;
        } else if (!strcmp(argv[i], "--index") && i + 1 < argc) {
            index = argv[++i];
        } else if (!strcmp(argv[i], "--mem") && i + 1 < argc) {
            if (nm == STATE_MAX_RANGES) return cli_usage_error("at most %d --mem ranges", STATE_MAX_RANGES);
            if (cli_parse_addr_len(argv[++i], 0, &mem[nm].addr, &mem[nm].len) || mem[nm].len > STATE_MAX_LEN)
                return cli_usage_error("--mem wants ADDR:LEN with LEN 1..%u, got '%s'", STATE_MAX_LEN, argv[i]);
            nm++;
        } else if (cli_trace_arg(argv[i], &in) != CLI_OK) {
            return CLI_USAGE;
        }
    }
    if (!in) return cli_usage_error("missing TRACE");
    if (!have_at) return cli_usage_error("missing --at I");
    if (!(r = cli_open_replay(in, index))) return CLI_DATA;
    frames_replay_info_get(r, &info);
    if (at > info.instructions) {
        frames_replay_close(r);
        return cli_fail(CLI_DATA, "%s has %llu instructions: --at %llu is past the end", in,
                        (unsigned long long)info.instructions, (unsigned long long)at);
    }
    /* after the last instruction: the registers of the thread that ran it */
    if (at == info.instructions && at > 0 && frames_replay_goto(r, at - 1, &err) == FRAMES_OK &&
        frames_replay_insn_get(r, &insn) == FRAMES_OK)
        thread = insn.thread;
    if (frames_replay_goto(r, at, &err) < 0) {
        frames_replay_close(r);
        return cli_lib_error(&err);
    }
    if (frames_replay_insn_get(r, &insn) == FRAMES_OK) thread = insn.thread;
    else memset(&insn, 0, sizeof insn);
    if (json) {
        printf("{\"index\":%llu,\"thread\":%llu", (unsigned long long)at, (unsigned long long)thread);
        if (at < info.instructions) printf(",\"pc\":\"0x%llx\"", (unsigned long long)insn.pc);
    } else {
        printf("instruction %llu of %llu, thread %llu", (unsigned long long)at,
               (unsigned long long)info.instructions, (unsigned long long)thread);
        if (at < info.instructions) printf(", pc 0x%llx", (unsigned long long)insn.pc);
        printf(" (%s)\n", info.arch_name);
    }
    print_registers(r, thread, json);
    if (nm) print_memory(r, mem, nm, json);
    if (json) printf("}\n");
    if (fflush(stdout) != 0) status = cli_fail(CLI_DATA, "cannot write the output");
    frames_replay_close(r);
    return status;
}
