/* cli.h - helpers shared by the frames subcommands (messages, numbers, progress, output).
   Library logic lives in the headers; this is only what every command line needs. */
#ifndef FRAMES_CLI_H
#define FRAMES_CLI_H

#include <stdint.h>
#include <stdio.h>

#include "frames.h"
#include "frames_sym.h"
#include "frames_replay.h"

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

/* The last line of most --help pages. */
#define CLI_EXIT_STATUS "Exit status: 0 ok, 1 unreadable input, bad data or write error, 2 usage error.\n"

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

/* Option values, one rule for every command. The value of the option at argv[*i],
   advancing *i past it; NULL after the usage error "option '--top' needs a value" when
   the option is the last argument (so that a forgotten value is not called an unknown
   option). Use: if (!(v = cli_option_value(argc, argv, &i))) return CLI_USAGE; */
const char *cli_option_value(int argc, char **argv, int *i);
/* Flags that exclude each other (e.g. dump's formats): remember the one given in *seen
   (NULL before the first); a second, different one is the usage error "'--json' and '--pc'
   exclude each other" (CLI_USAGE), else CLI_OK. */
int cli_exclusive(const char **seen, const char *flag);

/* Numbers: decimal or 0x hex; whole string must parse. Return 0 on success. */
int cli_parse_u64(const char *s, uint64_t *out);
/* CPUs this process may run on (taskset, cpusets), not the machine's count; at least 1. */
long cli_usable_cpus(void);
int cli_parse_i64(const char *s, int64_t *out);
/* "LO-HI": the half-open range [LO, HI) of every --pc and --frames option (docs/frames.1);
   numbers as above. */
int cli_parse_range(const char *s, uint64_t *lo, uint64_t *hi);

/* The ranges of `frames split --chunks N`, which `frames export --chunks N` shares: at most
   `chunks` half-open ranges bounds[i] .. bounds[i + 1] covering the n frames of r, each
   starting on a TOC entry (for a compressed trace, on a zstd chunk as well, so that each
   range decompresses alone when it can). *bounds is malloc'd (free it), *k the number of
   ranges (0 for an empty trace). Returns CLI_OK, or CLI_DATA after "out of memory". */
int cli_split_ranges(frames_reader *r, uint64_t n, uint64_t chunks, uint64_t **bounds, uint64_t *k);

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
/* The size of the compressed file the reader reads (0 when plain or streamed). */
uint64_t cli_compressed_size(frames_reader *r);
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
   address, thread and instruction length (frames_peek_std: not decoded, its operand
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


/* ---- Outputs: one rule for every command that writes a file (docs/outputs.md) ----
   - an output that is one of the command's inputs (the same file: same device and
     inode, so also through a hard or symbolic link or another spelling) is refused;
   - an existing regular file is not replaced unless -f/--force was given;
   - the data goes to a temporary file next to the output (next to the file a symbolic
     link names), renamed over it once complete (cli_output_commit); on failure the
     temporary file is removed (cli_output_abort): a failure never leaves a half-written
     output, and the file that was there stays as it was;
   - "-" is standard output, written directly; so is an existing file that is not a
     regular file (a device such as /dev/null, a FIFO), which cannot be replaced. */
typedef struct cli_output {
    const char *path;   /* as named ("-": standard output) */
    char *target;       /* the file replaced: path, or what the symbolic link path names */
    char *tmp;          /* the temporary file; NULL when written directly */
    int fd;             /* -1 once closed */
    FILE *f;            /* cli_output_stream's stream, NULL until asked for */
    int mode;           /* permissions the output gets */
} cli_output;
/* -f / --force: an existing output may be replaced. 1 when arg is that option, else 0. */
int cli_force_option(const char *arg);
int cli_force_given(void);
/* The rule's checks alone (no file created): CLI_OK, or CLI_USAGE after a one-line error.
   inputs: the command's input paths (NULL and "-" entries are skipped). */
int cli_output_check(const char *path, const char *const *inputs, size_t ninputs);
/* Check, then create the temporary file (or take standard output). CLI_OK, or an exit
   code after the error was printed (nothing is left behind). */
int cli_output_open(cli_output *o, const char *path, const char *const *inputs, size_t ninputs);
/* The same for rewriting the input path itself (frames fix): a regular file, replaced
   through a temporary file once the new one is complete. */
int cli_output_open_in_place(cli_output *o, const char *path);
/* The file an output path replaces: path itself, or the file its symbolic link names (so
   that the link stays a link). malloc'd; NULL when out of memory. */
char *cli_output_target(const char *path);
/* A stdio stream on the output (made once; stdout for "-"), NULL after an error message. */
FILE *cli_output_stream(cli_output *o);
/* A writer on the output, compressed when cli_output_compressed(path); close it with
   frames_writer_close before cli_output_commit. NULL after an error message. */
frames_writer *cli_output_writer(cli_output *o, const frames_writer_options *wo,
                                 const frames_meta *meta);
/* Flush and close; a complete file is renamed into place. CLI_OK, or CLI_DATA after a
   one-line error (then the temporary file is gone and the old output untouched). */
int cli_output_commit(cli_output *o);
/* Close and remove the temporary file (nothing written stays). */
void cli_output_abort(cli_output *o);
/* The end of every command (frames.c): standard output flushed and closed; a write error
   (a full disk, /dev/full) turns status CLI_OK into CLI_DATA with a one-line message
   (a closed pipe, EPIPE, gives CLI_DATA without one). */
int cli_stdout_done(int status);
/* Replay commands (state, history): open TRACE and its state index (index_path NULL:
   TRACE.fridx), building it when missing or stale, with a progress line on a terminal;
   warns when the trace carries no values. NULL after reporting the error. */
frames_replay *cli_open_replay(const char *trace, const char *index_path);
/* n little-endian bytes as one "0x..." hexadecimal number (most significant first). */
void cli_hex_le(FILE *out, const uint8_t *v, size_t n);
/* "ADDR:LEN" (LEN optional when len_optional: then 1). 0 or -1. */
int cli_parse_addr_len(const char *s, int len_optional, uint64_t *addr, uint64_t *len);

#endif
