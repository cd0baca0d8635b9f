/* measure - run a command N times and print its median wall time, median CPU time
   (user + system) and largest peak RSS, so that benchmark scripts need no GNU time.

   usage: measure [-n RUNS] [-o OUTFILE] [-e FILE]... -- COMMAND [ARGS...]
   prints one line: "wall_ms=W cpu_ms=C rss_kb=R runs=N wall_min_ms=B" (medians, the best
   wall time for machines that other jobs share; the command's stdout goes to
   OUTFILE, default /dev/null; its stderr is kept). Exit status: 0, or 1 if a run failed.
   -e FILE: before every run, drop FILE's pages from the page cache (posix_fadvise
   DONTNEED; no root needed, other files untouched), so that the run starts cold. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    int runs = 5, i, first = 0, failed = 0;
    const char *outfile = "/dev/null", *evict[16];
    int nevict = 0, k;
    double wall[64], cpu[64];
    long rss = 0;
    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-n") && i + 1 < argc) runs = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-o") && i + 1 < argc) outfile = argv[++i];
        else if (!strcmp(argv[i], "-e") && i + 1 < argc && nevict < 16) evict[nevict++] = argv[++i];
        else if (!strcmp(argv[i], "--")) {
            first = i + 1;
            break;
        }
    }
    if (!first || first >= argc || runs < 1 || runs > 64) {
        fprintf(stderr, "usage: measure [-n RUNS] [-o OUTFILE] [-e FILE]... -- COMMAND [ARGS...]\n");
        return 2;
    }
    for (i = 0; i < runs; i++) {
        struct rusage ru;
        int status;
        double t0;
        pid_t pid;
        for (k = 0; k < nevict; k++) {
            int fd = open(evict[k], O_RDONLY);
            if (fd < 0 || fdatasync(fd) != 0 || posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) != 0) {
                perror(evict[k]);
                return 1;
            }
            close(fd);
        }
        t0 = now();
        pid = fork();
        if (pid < 0) {
            perror("fork");
            return 1;
        }
        if (pid == 0) {
            int fd = open(outfile, O_WRONLY | O_CREAT | O_TRUNC, 0644);
            if (fd < 0 || dup2(fd, 1) < 0) _exit(127);
            execvp(argv[first], argv + first);
            _exit(127);
        }
        if (wait4(pid, &status, 0, &ru) < 0) {
            perror("wait4");
            return 1;
        }
        wall[i] = now() - t0;
        cpu[i] = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
                 (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
        if (ru.ru_maxrss > rss) rss = ru.ru_maxrss;
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) failed = 1;
    }
    qsort(wall, (size_t)runs, sizeof wall[0], cmp_double);
    qsort(cpu, (size_t)runs, sizeof cpu[0], cmp_double);
    printf("wall_ms=%.1f cpu_ms=%.1f rss_kb=%ld runs=%d wall_min_ms=%.1f\n", wall[runs / 2] * 1e3,
           cpu[runs / 2] * 1e3, rss, runs, wall[0] * 1e3);
    return failed;
}
