/* engine_valgrind.c - the Valgrind engine of `frames record`: runs the program under
   Valgrind with the frames tool (tools/record/vg/frames_vg.c) writing its raw records to
   a pipe, and pumps the pipe into the converter (vg_convert.c). Needs no capstone: without
   it the registers an instruction reads are not recorded. */
#include "record.h"

#ifdef RECORD_SUPPORTED
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "vg/vgrec.h"

/* ---------------------------------------------------------------- locating the tool */

/* The folder Valgrind loads the tool from (VALGRIND_LIB): $FRAMES_VG_LIB, else vg/ next
   to the frames binary (the build tree), else ../lib/frames/vg (an installed tree). */
int rv_tool_dir(char *out, size_t cap) {
    const char *env = getenv("FRAMES_VG_LIB");
    char exe[PATH_MAX], try_[PATH_MAX + 64], *slash;
    ssize_t n;
    if (env && *env) {
        snprintf(out, cap, "%s", env);
        snprintf(try_, sizeof try_, "%s/frames-amd64-linux", out);
        return access(try_, X_OK) == 0 ? 0 : -1;
    }
    n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return -1;
    exe[n] = 0;
    if (!(slash = strrchr(exe, '/'))) return -1;
    *slash = 0;
    snprintf(try_, sizeof try_, "%s/vg/frames-amd64-linux", exe);
    if (access(try_, X_OK) == 0) return snprintf(out, cap, "%s/vg", exe) < (int)cap ? 0 : -1;
    snprintf(try_, sizeof try_, "%s/../lib/frames/vg/frames-amd64-linux", exe);
    if (access(try_, X_OK) == 0) return snprintf(out, cap, "%s/../lib/frames/vg", exe) < (int)cap ? 0 : -1;
    return -1;
}

/* ---------------------------------------------------------------- the engine */

typedef struct rv_engine {
    rec_run *r;
    rv_conv *conv;
    int fd;                    /* the read end of the pipe */
    pid_t pid;                 /* valgrind */
    char log[PATH_MAX];        /* Valgrind's own messages (a crash report), "" if none */
} rv_engine;

static size_t rv_take(void *ctx, const uint8_t *data, size_t n) {
    return rv_conv_chunks((rv_conv *)ctx, data, n); /* all but a chunk header cut short */
}

/* Read chunks until every writer closed the pipe; 256 KiB at a time, converted as they
   arrive, while they are in the cache. */
static void rv_pump(void *state) {
    rv_engine *e = (rv_engine *)state;
    rec_stream_pump(e->r, e->fd, e->pid, 256u << 10, rv_take, e->conv);
}

static pid_t rv_spawn(rec_run *t, const char *tooldir, int wfd, int logfd, const char *path, char **argv,
                      int argc) {
    char **av = (char **)calloc((size_t)argc + 16, sizeof *av);
    char fdopt[64], logopt[64];
    int n = 0, i;
    pid_t pid;
    if (!av) return -1;
    snprintf(fdopt, sizeof fdopt, "--frames-fd=%d", wfd);
    av[n++] = (char *)"valgrind";
    av[n++] = (char *)"--tool=frames";
    av[n++] = (char *)"-q";
    av[n++] = (char *)"--trace-children=yes";
    av[n++] = (char *)"--vex-iropt-level=0"; /* see frames_vg.c: each instruction its own GETs */
    av[n++] = fdopt;
    if (logfd >= 0) { /* its reports (a crashing program's) to a file, not amid the program's */
        snprintf(logopt, sizeof logopt, "--log-fd=%d", logfd);
        av[n++] = logopt;
    }
    if (t->no_mem) av[n++] = (char *)"--frames-mem=no";
    if (t->follow) av[n++] = (char *)"--frames-forks=yes";
    av[n++] = (char *)path;
    for (i = 1; i < argc; i++) av[n++] = argv[i];
    av[n] = NULL;
    pid = fork();
    if (pid == 0) {
        setenv("VALGRIND_LIB", tooldir, 1);
        if (!strcmp(t->out, "-")) dup2(2, 1);
        execvp("valgrind", av);
        fprintf(stderr, "frames record: cannot run valgrind: %s\n", strerror(errno));
        _exit(127);
    }
    free(av);
    return pid;
}

/* Valgrind's messages go to OUT.valgrind.log (or a file in $TMPDIR for -o -), opened for
   appending by every process of the run; -1 when it cannot be made (they then go to
   standard error). */
static int open_log(rv_engine *e) {
    const char *tmp = getenv("TMPDIR");
    int fd;
    if (strcmp(e->r->out, "-"))
        snprintf(e->log, sizeof e->log, "%s.valgrind.log", e->r->out);
    else
        snprintf(e->log, sizeof e->log, "%s/frames-record-%d.valgrind.log", tmp && *tmp ? tmp : "/tmp",
                 (int)getpid());
    fd = open(e->log, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
    if (fd < 0) e->log[0] = 0;
    return fd;
}

/* An empty log is removed; a report is kept and named. */
static void close_log(rv_engine *e) {
    struct stat st;
    if (!e->log[0]) return;
    if (stat(e->log, &st) == 0 && st.st_size > 0) {
        if (!e->r->silent) fprintf(stderr, "frames record: Valgrind's report is in %s\n", e->log);
    } else {
        unlink(e->log);
    }
}

static int rv_available(char *why, size_t cap) {
    char dir[PATH_MAX];
    if (rv_tool_dir(dir, sizeof dir) == 0) return 0;
    snprintf(why, cap, "the valgrind tool was not built (tools/record/vg; needs the valgrind package)");
    return -1;
}

static void *rv_start(rec_run *r, const char *path, int argc, char **argv) {
    char tooldir[PATH_MAX];
    int fds[2], logfd;
    rv_engine *e;
    if (rv_tool_dir(tooldir, sizeof tooldir) < 0) {
        rec_fail(r, "the valgrind tool was not built (tools/record/vg; needs the valgrind package)");
        return NULL;
    }
    if (!(e = (rv_engine *)calloc(1, sizeof *e)) || !(e->conv = rv_conv_new(r))) {
        free(e);
        rec_fail(r, "out of memory");
        return NULL;
    }
    e->r = r;
    e->fd = -1;
    if (rec_stream_pipe(r, fds) < 0) return e;
    logfd = open_log(e);
    e->pid = rv_spawn(r, tooldir, fds[1], logfd, path, argv, argc);
    if (logfd >= 0) close(logfd);
    e->fd = rec_stream_started(r, e->pid, fds);
    return e;
}

static void rv_finish(rec_run *r, void *state) {
    rv_engine *e = (rv_engine *)state;
    int status;
    if (!e) return;
    if (e->fd >= 0) {
        status = rec_stream_reap(r, e->fd, e->pid);
        /* the tool never started (valgrind missing, or it could not load the program): no
           trace, whatever valgrind's status */
        if (!rv_conv_started(e->conv) && !r->failed)
            rec_fail(r, "Valgrind did not run the program with the frames tool (exit status %d)",
                     WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
        rv_conv_end(e->conv, status);
    }
    close_log(e);
    rv_conv_free(e->conv);
    free(e);
}

const rec_engine rec_engine_valgrind = {"valgrind", 0, rv_available, rec_x86_64_program, rv_start, rv_pump, rv_finish};

#else
typedef int record_engine_valgrind_unused; /* ISO C forbids an empty translation unit */
#endif
