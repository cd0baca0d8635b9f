/* cli.h - helpers shared by the frames subcommands (messages, numbers, progress, output).
   Library logic lives in the headers; this is only what every command line needs. */
#ifndef FRAMES_CLI_H
#define FRAMES_CLI_H

#include <stdint.h>
#include <stdio.h>

#include "frames.h"
#include "frames_sym.h"

enum { CLI_OK = 0, CLI_DATA = 1, CLI_USAGE = 2 };

void cli_set_command(const char *name);
const char *cli_command(void);

/* "frames CMD: message" on stderr; return the code given, for `return cli_fail(...)`. */
int cli_fail(int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
void cli_warn(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
/* Report a library error (message already has offset and frame). Returns CLI_DATA. */
int cli_lib_error(const frames_error *err);
/* Print every warning of the reader on stderr. */
void cli_reader_warnings(frames_reader *r);

/* Usage error: prints the message and "try 'frames CMD --help'"; returns CLI_USAGE. */
int cli_usage_error(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
/* A command's one TRACE argument into *in: CLI_OK, or a usage error (CLI_USAGE) for an
   unknown option or a second TRACE ("-" is a TRACE: standard input). */
int cli_trace_arg(const char *arg, const char **in);
/* True if any argument is -h or --help (before a "--"). */
int cli_wants_help(int argc, char **argv);

/* Numbers: decimal or 0x hex; whole string must parse. Return 0 on success. */
int cli_parse_u64(const char *s, uint64_t *out);
/* CPUs this process may run on (taskset, cpusets), not the machine's count; at least 1. */
long cli_usable_cpus(void);
int cli_parse_i64(const char *s, int64_t *out);
/* "LO-HI" (inclusive-exclusive is up to the caller); numbers as above. */
int cli_parse_range(const char *s, uint64_t *lo, uint64_t *hi);

/* TOC convention a writer can write, by name (libtrace, ceil, tracewrap, ceil-zero);
   -1 if the name is not one of them. */
int cli_parse_toc(const char *name);

/* Parse the writer options shared by cat and fix at argv[*i] (--version N, --toc NAME,
   --frames-per-toc M), advancing *i past a value. Returns 1 if consumed, 0 if the argument
   is not one of them, or CLI_USAGE after printing a usage error. */
int cli_writer_option(int argc, char **argv, int *i, frames_writer_options *o, unsigned *given);
#define CLI_GIVEN_VERSION 1u
#define CLI_GIVEN_TOC 2u
#define CLI_GIVEN_M 4u
/* Compressed output (frames_zstd.h): --zstd or --zstd=LEVEL seen by cli_writer_option
   (or cli_zstd_option), or an output name ending in .zst. */
int cli_zstd_option(const char *arg);   /* 1 consumed, 0 not this option, CLI_USAGE */
int cli_output_compressed(const char *path);
int cli_zstd_level(void);                /* level asked for, 0: default */
/* The level used when none is asked for (0: the library's default). */
void cli_zstd_prefer_level(int level);
/* Open a writer on path ("-" = standard output), compressed when cli_output_compressed.
   Prints the error and returns NULL on failure. */
frames_writer *cli_open_writer(const char *path, const frames_writer_options *o,
                               const frames_meta *meta);
/* A sink over fd, compressing when asked (see above); *zs is the compressing sink to
   close after use (cli_close_sink), NULL when plain. Returns 0, or an exit code. */
int cli_output_sink(int fd, const char *path, uint64_t frames_per_toc, frames_sink *sink,
                    void **zs);
int cli_close_sink(void *zs, const char *path);
/* The reader's input was compressed (zstd). */
int cli_reader_compressed(frames_reader *r);
/* frames info: a "compression: ..." line, or a ,"compression":{...} JSON member (nothing
   for a plain trace). */
void cli_print_compression(FILE *out, frames_reader *r, int json);

/* frames query / index: open a trace with the query engine (frames_query.h), which reads
   the plain bytes of a frames trace directly: a compressed trace is first decompressed
   into an unlinked temporary file that is mapped (page cache, not process memory).
   Close with cli_close_query_trace. Returns 0 or a negative code (err filled). */
struct fq_trace;
int cli_open_query_trace(const char *path, struct fq_trace **t, frames_error *err);
void cli_close_query_trace(struct fq_trace *t);

/* Apply the options given on the command line over `o` (taken from the input). */
void cli_apply_writer_options(frames_writer_options *o, const frames_writer_options *cmdline,
                              unsigned given);

/* Open a reader on a path, "-" meaning standard input. On failure prints the error and
   returns NULL. */
frames_reader *cli_open_reader(const char *path, const frames_reader_options *o);

/* True when both paths name the same existing file (same device and inode). */
int cli_same_file(const char *a, const char *b);

/* Output to stdout when path is "-" (or NULL). */
FILE *cli_open_output(const char *path);

/* Progress bar on stderr, only when stderr is a terminal. total may be 0 (unknown). */
typedef struct cli_progress {
    int active;
    uint64_t total, last_shown;
    double started, last_time;
    const char *label;
} cli_progress;
void cli_progress_start(cli_progress *p, const char *label, uint64_t total);
void cli_progress_update(cli_progress *p, uint64_t done);
void cli_progress_end(cli_progress *p);

/* Read every frame of r in order and call fn(ctx, frame, index) for each, with a progress
   bar labelled `label`. A frame that does not decode is reported and skipped; a callback
   returning nonzero or any other reader error stops the loop (after reporting it). Reader
   warnings (e.g. a truncated tail) are printed at the end. Returns CLI_OK, or CLI_DATA when
   something was reported. */
typedef int (*cli_frame_fn)(void *ctx, const frames_frame *f, uint64_t index);
int cli_for_each_frame(frames_reader *r, const char *label, cli_frame_fn fn, void *ctx);
/* The same, but a std_frame laid out as writers lay it out goes to std with only its
   address, thread and instruction length (frames_std_head: not decoded, its operand
   lists not looked at); every other frame is decoded and goes to fn. */
typedef int (*cli_std_fn)(void *ctx, uint64_t address, uint64_t thread_id, size_t nrawbytes,
                          uint64_t index);
int cli_for_each_frame_std(frames_reader *r, const char *label, cli_std_fn std, cli_frame_fn fn,
                           void *ctx);
/* Frames in the trace when known without a scan (for progress totals), else 0. */
uint64_t cli_known_frames(frames_reader *r);

/* Parse NAME:LO-HI (split at the last ':' so that names may hold ':'), LO < HI. Returns
   0, or -1 when the argument is not of that form. */
int cli_parse_module(const char *arg, size_t *name_len, uint64_t *lo, uint64_t *hi);

/* Names of pcs (frames_sym.h) for the commands that print pcs. The options
     --module NAME:LO-HI  a module at [LO, HI) (repeatable; the trace's modload frames are
                          then ignored)
     --sysroot DIR        module files are looked for under DIR
     --no-symbols         no names at all (no file is read)
   are parsed by cli_names_option; cli_names_open opens the symboliser (meta: the trace's,
   may be NULL); cli_names_frame feeds it the trace's modload frames; cli_names_close
   prints its warnings and frees it. */
typedef struct cli_names {
    frames_sym_options opt;
    int off;              /* --no-symbols */
    int fixed;            /* --module given */
    const char *modules[256];   /* --module arguments */
    int nmodules;
    frames_sym *sym;
} cli_names;
#define CLI_NAMES_USAGE                                                                      \
    "  --module NAME:LO-HI   a module at [LO, HI) (repeatable); without it the modules\n"     \
    "                        come from the trace's modload frames\n"                           \
    "  --sysroot DIR         look for module files under DIR (traces from another machine)\n" \
    "  --no-symbols          bare addresses: no module, symbol or file:line names\n"
void cli_names_init(cli_names *n);
/* 1 consumed (with its value), 0 not one of them, CLI_USAGE after a usage error. */
int cli_names_option(int argc, char **argv, int *i, cli_names *n);
int cli_names_open(cli_names *n, const frames_meta *meta);
void cli_names_frame(cli_names *n, const frames_frame *f);
/* Look pc up (loc->found 0 when there is no name or names are off). */
void cli_names_lookup(cli_names *n, uint64_t pc, frames_sym_loc *loc);
/* The name of pc ("prog!main+0x4 at /src/p.c:12", "" when none) into buf. */
const char *cli_names_text(cli_names *n, uint64_t pc, char *buf, size_t cap);
/* The JSON members of pc's name (frames_sym_print_json) on out. */
void cli_names_json(cli_names *n, FILE *out, uint64_t pc);
void cli_names_close(cli_names *n);

/* JSON string literal of arbitrary bytes (\u00XX for control and non-UTF-8 bytes). */
void cli_json_string(FILE *out, const void *data, size_t len);
/* Lowercase hex of bytes. */
void cli_hex(FILE *out, const void *data, size_t len);

#endif
