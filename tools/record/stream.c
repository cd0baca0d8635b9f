/* stream.c - what the stream engines (valgrind, qemu) share: their child writes its
   stream into a pipe that frames reads, and is reaped when the pipe ends (record.h). Not
   in common.c, which the converter's fuzz target and benchmark build alone. */
#include "record.h"
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

int rec_stream_pipe(rec_run *r, int fds[2]) {
    if (pipe(fds) < 0) {
        rec_fail(r, "pipe: %s", strerror(errno));
        return -1;
    }
    fcntl(fds[0], F_SETFD, FD_CLOEXEC);
#ifdef F_SETPIPE_SZ
    fcntl(fds[0], F_SETPIPE_SZ, 1 << 20);
#endif
    rec_catch_interrupts();
    return 0;
}

int rec_stream_started(rec_run *r, pid_t pid, int fds[2]) {
    close(fds[1]);
    if (pid < 0) {
        close(fds[0]);
        rec_fail(r, "fork: %s", strerror(errno));
        return -1;
    }
    r->main_pid = pid;
    return fds[0];
}

size_t rec_stream_pump(rec_run *r, int fd, pid_t pid, size_t cap,
                       size_t (*take)(void *ctx, const uint8_t *data, size_t n), void *ctx) {
    uint8_t *buf = (uint8_t *)malloc(cap);
    size_t have = 0, pos;
    int killed = 0;
    if (!buf) {
        rec_fail(r, "out of memory");
        kill(pid, SIGKILL);
        return 0;
    }
    for (;;) {
        ssize_t got;
        if (rec_interrupted() && !killed) {
            cli_warn("interrupted by signal %d: killing the program, finishing the trace", rec_interrupted());
            kill(pid, SIGKILL);
            killed = 1;
        }
        if (have == cap) { /* one record larger than the buffer */
            uint8_t *nb = (uint8_t *)realloc(buf, cap * 2);
            if (!nb) {
                rec_fail(r, "out of memory");
                break;
            }
            buf = nb;
            cap *= 2;
        }
        got = read(fd, buf + have, cap - have);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) break;
        have += (size_t)got;
        pos = take(ctx, buf, have);
        if (pos) memmove(buf, buf + pos, have - pos);
        have -= pos;
        if (r->failed) break;
    }
    if (r->failed) kill(pid, SIGKILL);
    free(buf);
    return have;
}

int rec_stream_reap(rec_run *r, int fd, pid_t pid) {
    int status = 0;
    close(fd);
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    r->main_status = status;
    r->main_done = 1;
    return status;
}
