/* frames - one command for execution traces; dispatches to tools/cmd_<name>.c */
#include <stdio.h>
#include <string.h>

#include "cli.h"

#define FRAMES_COMMAND(name, summary) int cmd_##name(int argc, char **argv);
#include "commands.def"
#undef FRAMES_COMMAND

struct command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
};

static const struct command commands[] = {
#define FRAMES_COMMAND(name, summary) {#name, cmd_##name, summary},
#include "commands.def"
#undef FRAMES_COMMAND
};

static void usage(FILE *out) {
    size_t i;
    fprintf(out, "usage: frames COMMAND [ARGS...]\n\n"
                 "Record, store, read, query and decode execution traces (BAP frames).\n\n"
                 "commands:\n");
    for (i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(out, "  %-8s %s\n", commands[i].name, commands[i].summary);
    fprintf(out, "\n'frames help COMMAND' (or 'frames COMMAND --help') describes a command.\n"
                 "Exit status: 0 ok, 1 data error, 2 usage error.\n");
}

int main(int argc, char **argv) {
    size_t i;
    if (argc < 2) {
        usage(stderr);
        return CLI_USAGE;
    }
    if (!strcmp(argv[1], "help") && argc == 3) {   /* frames help CMD: its --help page */
        char help[] = "--help";
        char *args[3];
        args[0] = argv[2];
        args[1] = help;
        args[2] = NULL;
        for (i = 0; i < sizeof commands / sizeof commands[0]; i++)
            if (!strcmp(argv[2], commands[i].name)) {
                cli_set_command(commands[i].name);
                return commands[i].run(2, args);
            }
        fprintf(stderr, "frames help: unknown command '%s' (try 'frames help')\n", argv[2]);
        return CLI_USAGE;
    }
    if (!strcmp(argv[1], "help") && argc > 3) {
        fprintf(stderr, "frames help: one COMMAND at most\n");
        return CLI_USAGE;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return cli_stdout_done(CLI_OK);
    }
    if (!strcmp(argv[1], "--version")) {
        printf("frames %s\n", FRAMES_LIB_VERSION);
        return cli_stdout_done(CLI_OK);
    }
    for (i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(argv[1], commands[i].name)) {
            cli_set_command(commands[i].name);
            return cli_stdout_done(commands[i].run(argc - 1, argv + 1));
        }
    fprintf(stderr, "frames: unknown command '%s' (try 'frames --help')\n", argv[1]);
    return CLI_USAGE;
}
