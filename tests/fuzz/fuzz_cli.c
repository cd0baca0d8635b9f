// fuzz-tools: yes
// fuzz-flags: -max_len=512 -detect_leaks=0

/* fuzz_cli - the command line: every command of `frames` (but record and gdbserver,
   which run programs and serve sockets) called in-process on fuzzed arguments, in a
   private directory holding a small trace, its .frames.zst, a text file and an empty
   file.

   An input is a command (its first byte picks one) and up to 15 arguments, one per line.
   Arguments naming another directory ('/' in them) are dropped, so that nothing outside
   the private directory is read or written; so is `vprof ... -- PROGRAM` (online
   profiling runs a program).

   Invariants:
   - the command returns an exit status of the documented ones: 0, 1 (data) or 2 (usage);
   - no temporary output file is left behind (NAME.XXXXXX next to a file the command
     named): the output rule's "a failure leaves nothing";
   - nothing crashes, reads out of bounds or overflows (ASan, UBSan).
   Leaks are not checked (-detect_leaks=0): a command's memory goes with its process.
   Between inputs every file the command made is removed and the inputs are written
   again, so each input starts from the same directory. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "frames.h"
#ifdef FRAMES_HAVE_ZSTD
#include "frames_zstd.h"
#endif

#define FRAMES_COMMAND(name, summary) int cmd_##name(int argc, char **argv);
#include "commands.def"
#undef FRAMES_COMMAND

typedef struct fz_command {
    const char *name;
    int (*run)(int argc, char **argv);
} fz_command;

static const fz_command fz_commands[] = {
#define FRAMES_COMMAND(name, summary) {#name, cmd_##name},
#include "commands.def"
#undef FRAMES_COMMAND
};
#define FZ_NCOMMANDS (sizeof fz_commands / sizeof fz_commands[0])
#define FZ_MAX_ARGS 16

static char fz_dir[256];
static const char *const fz_inputs[] = {"t.frames", "t.frames.zst", "x.txt", "e"};

static void fz_le(uint8_t *p, uint64_t v, int n) {
    int i;
    for (i = 0; i < n; i++) p[i] = (uint8_t)(v >> (8 * i));
}

static void fz_die(const char *what) {
    perror(what);
    abort();
}

/* A small x86-64 trace: a module, instructions with register and memory operands in two
   threads, a syscall; finished with a TOC every 4 frames. */
static void fz_write_trace(const frames_sink *sink) {
    frames_writer_options o;
    frames_writer *w;
    frames_error err;
    uint64_t i;
    frames_writer_options_default(&o);
    o.machine = FRAMES_MACH_X86_64;
    o.frames_per_toc = 4;
    if (frames_writer_open(&w, sink, &o, NULL, &err) < 0) fz_die(err.message);
    {
        frames_frame f;
        memset(&f, 0, sizeof f);
        f.kind = FRAMES_KIND_MODLOAD;
        f.modload.module_name = frames_str("prog");
        f.modload.low_address = 0x400000;
        f.modload.high_address = 0x400fff;
        if (frames_writer_add(w, &f) < 0) fz_die("modload");
    }
    for (i = 0; i < 24; i++) {
        static const uint8_t mov[3] = {0x48, 0x89, 0xd8};   /* mov rax, rbx */
        uint8_t rbx[8], rax[8], mem[4];
        frames_operand pre[2], post[1];
        frames_frame f;
        memset(&f, 0, sizeof f);
        memset(pre, 0, sizeof pre);
        memset(post, 0, sizeof post);
        fz_le(rbx, i * 0x1111, 8);
        fz_le(rax, i * 0x1111, 8);
        fz_le(mem, i, 4);
        pre[0].spec = FRAMES_REG;
        pre[0].name = frames_str("RBX");
        pre[0].bit_length = 64;
        pre[0].value = frames_bytes_of(rbx, 8);
        pre[0].read = 1;
        pre[1].spec = FRAMES_MEM;
        pre[1].address = 0x601000 + 4 * (i % 3);
        pre[1].bit_length = 32;
        pre[1].value = frames_bytes_of(mem, 4);
        pre[1].read = 1;
        post[0].spec = FRAMES_REG;
        post[0].name = frames_str("RAX");
        post[0].bit_length = 64;
        post[0].value = frames_bytes_of(rax, 8);
        post[0].written = 1;
        f.kind = FRAMES_KIND_STD;
        f.std.address = 0x400100 + 3 * (i % 8);
        f.std.thread_id = 1 + i % 2;
        f.std.rawbytes = frames_bytes_of(mov, 3);
        f.std.pre = pre;
        f.std.npre = 2;
        f.std.post = post;
        f.std.npost = 1;
        f.std.has_post = 1;
        if (frames_writer_add(w, &f) < 0) fz_die("std frame");
    }
    {
        frames_frame f;
        int64_t args[3] = {1, 0x601000, 4};
        memset(&f, 0, sizeof f);
        f.kind = FRAMES_KIND_SYSCALL;
        f.syscall.address = 0x400130;
        f.syscall.thread_id = 1;
        f.syscall.number = 1;
        f.syscall.args = args;
        f.syscall.nargs = 3;
        if (frames_writer_add(w, &f) < 0) fz_die("syscall frame");
    }
    if (frames_writer_close(w) < 0) fz_die("close");
}

static void fz_write_inputs(void) {
    FILE *f;
    frames_sink sink;
    if (!(f = fopen("t.frames", "wb"))) fz_die("t.frames");
    sink = frames_sink_file(f);
    fz_write_trace(&sink);
    if (fclose(f) != 0) fz_die("t.frames");
#ifdef FRAMES_HAVE_ZSTD
    {
        frames_writer_options o;
        frames_writer *w;
        frames_error err;
        frames_reader *r;
        frames_raw raw;
        if (frames_reader_open_path(&r, "t.frames", NULL, &err) < 0) fz_die(err.message);
        frames_writer_options_default(&o);
        frames_writer_options_like(r, &o);
        if (frames_zstd_writer_open_path(&w, "t.frames.zst", &o, NULL, NULL, &err) < 0) fz_die(err.message);
        while (frames_reader_next_raw(r, &raw) > 0)
            if (frames_writer_add_encoded(w, raw.payload.ptr, raw.payload.len) < 0) fz_die("zst");
        if (frames_writer_close(w) < 0) fz_die("zst close");
        frames_reader_close(r);
    }
#else
    if (!(f = fopen("t.frames.zst", "wb")) || fclose(f) != 0) fz_die("t.frames.zst");
#endif
    if (!(f = fopen("x.txt", "w")) || fputs("0x400100\nnot a trace\n", f) < 0 || fclose(f) != 0)
        fz_die("x.txt");
    if (!(f = fopen("e", "w")) || fclose(f) != 0) fz_die("e");
}

static int fz_is_input(const char *name) {
    size_t i;
    for (i = 0; i < sizeof fz_inputs / sizeof fz_inputs[0]; i++)
        if (!strcmp(name, fz_inputs[i])) return 1;
    return 0;
}

static void fz_remove_tree(const char *path) {
    struct stat st;
    if (lstat(path, &st) != 0) return;
    if (S_ISDIR(st.st_mode)) {
        DIR *d = opendir(path);
        struct dirent *e;
        char sub[1024];
        while (d && (e = readdir(d)) != NULL) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
            snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
            fz_remove_tree(sub);
        }
        if (d) closedir(d);
        rmdir(path);
    } else {
        unlink(path);
    }
}

/* NAME.XXXXXX (mkstemp's six characters) where NAME is a file the command was given or
   one of the inputs: a temporary output left behind. */
static int fz_is_leftover(const char *name, char **args, int nargs) {
    size_t len = strlen(name);
    int i;
    if (len < 8 || name[len - 7] != '.') return 0;
    for (i = 0; i < nargs; i++)
        if (strlen(args[i]) == len - 7 && !strncmp(name, args[i], len - 7)) return 1;
    for (i = 0; i < (int)(sizeof fz_inputs / sizeof fz_inputs[0]); i++)
        if (strlen(fz_inputs[i]) == len - 7 && !strncmp(name, fz_inputs[i], len - 7)) return 1;
    return 0;
}

/* Removes what the command made; aborts on a temporary file left behind. */
static void fz_clean(char **args, int nargs) {
    DIR *d = opendir(".");
    struct dirent *e;
    int leftover = 0;
    if (!d) fz_die("opendir");
    while ((e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") || fz_is_input(e->d_name)) continue;
        if (fz_is_leftover(e->d_name, args, nargs)) {
            fprintf(stderr, "fuzz_cli: temporary file %s left behind\n", e->d_name);
            leftover = 1;
        }
        fz_remove_tree(e->d_name);
    }
    closedir(d);
    if (leftover) abort();
    fz_write_inputs();   /* as they were, whatever the command did to them (fix rewrites) */
}

/* Made at the first input, not in LLVMFuzzerInitialize: libFuzzer reads the corpus
   directories, which may be relative, after that. */
static void fz_setup(void) {
    const char *tmp = getenv("TMPDIR");
    FILE *in;
    snprintf(fz_dir, sizeof fz_dir, "%s/fuzz-cli-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(fz_dir) || chdir(fz_dir) != 0) fz_die("fuzz_cli: private directory");
    if (!(in = freopen("/dev/null", "rb", stdin))) fz_die("stdin");
    /* what commands print goes nowhere; their error lines stay on stderr, with libFuzzer's
       (a crash report must not be lost) */
    if (!freopen("/dev/null", "wb", stdout)) fz_die("stdout");
    fz_write_inputs();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char buf[600], *args[FZ_MAX_ARGS + 1], *p, *line;
    const fz_command *c;
    int nargs = 1, i, rc;
    if (!fz_dir[0]) fz_setup();
    if (size < 1 || size >= sizeof buf) return 0;
    c = &fz_commands[data[0] % FZ_NCOMMANDS];
    if (!strcmp(c->name, "record") || !strcmp(c->name, "gdbserver")) return 0;
    memcpy(buf, data + 1, size - 1);
    buf[size - 1] = 0;
    args[0] = (char *)c->name;
    for (p = buf; p && nargs < FZ_MAX_ARGS; p = line) {
        if ((line = strchr(p, '\n')) != NULL) *line++ = 0;
        if (strchr(p, '/') || (!*p && !line)) continue;
        if (!strcmp(c->name, "vprof") && !strcmp(p, "--")) return 0;   /* online: runs a program */
        args[nargs++] = p;
    }
    args[nargs] = NULL;
    cli_set_command(c->name);
    rc = c->run(nargs, args);
    fflush(stdout);
    if (rc < 0 || rc > 2) {
        fprintf(stderr, "fuzz_cli: frames %s returned %d\n", c->name, rc);
        for (i = 1; i < nargs; i++) fprintf(stderr, "  arg %d: '%s'\n", i, args[i]);
        abort();
    }
    fz_clean(args, nargs);
    return 0;
}
