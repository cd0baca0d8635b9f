/* bench_record_step.c - the peer of bench_record.sh: the cheapest possible ptrace
   single-stepper (PTRACE_SINGLESTEP + waitpid, nothing read, nothing written). Its rate is
   the ceiling of any ptrace single-stepping tracer on this machine.
   usage: bench_record_step [--pin] [--block] PROGRAM [ARGS...]  -> "steps SECONDS" */
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef PTRACE_SINGLEBLOCK
#define PTRACE_SINGLEBLOCK 33
#endif

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
    int i = 1, st, request = PTRACE_SINGLESTEP;
    long steps = 0;
    double t0;
    pid_t pid;
    for (; i < argc && argv[i][0] == '-'; i++) {
        if (!strcmp(argv[i], "--pin")) {
            cpu_set_t set;
            CPU_ZERO(&set);
            CPU_SET(sched_getcpu(), &set);
            sched_setaffinity(0, sizeof set, &set);
        } else if (!strcmp(argv[i], "--block")) {
            request = PTRACE_SINGLEBLOCK;
        }
    }
    if (i >= argc) return 2;
    pid = fork();
    if (pid == 0) {
        ptrace(PTRACE_TRACEME, 0, 0, 0);
        raise(SIGSTOP);
        execv(argv[i], argv + i);
        _exit(127);
    }
    waitpid(pid, &st, 0);
    ptrace(PTRACE_SETOPTIONS, pid, 0, (void *)(long)(PTRACE_O_TRACEEXEC | PTRACE_O_EXITKILL));
    ptrace(PTRACE_CONT, pid, 0, 0);
    waitpid(pid, &st, 0); /* the exec stop */
    t0 = now();
    for (;;) {
        if (ptrace((enum __ptrace_request)request, pid, 0, 0) < 0) return 1;
        if (waitpid(pid, &st, 0) != pid || WIFEXITED(st) || WIFSIGNALED(st)) break;
        steps++;
    }
    printf("%ld %.4f\n", steps, now() - t0);
    return 0;
}
