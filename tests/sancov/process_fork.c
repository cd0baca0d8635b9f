/* A plain program (no fuzzer runtime) for test_sancov's process mode: built with gcc
   -fsanitize-coverage=trace-pc,trace-cmp and frames_sancov.c without the wrap options.
   The parent compares argv-derived values, forks, and the child compares other values:
   each process must get its own trace with its own comparisons. */
#include <stdint.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

volatile int sink;

__attribute__((noinline)) int parent_compare(uint64_t a, uint64_t b) { return a == b; }
__attribute__((noinline)) int child_compare(uint32_t a, uint32_t b) { return a < b; }

int main(int argc, char **argv) {
    uint64_t x = argc > 1 ? strtoull(argv[1], NULL, 0) : 0;
    pid_t pid;
    int st = 0;
    sink += parent_compare(x, x + 0x1111);
    pid = fork();
    if (pid == 0) {
        sink += child_compare((uint32_t)x + 7, (uint32_t)x + 9);
        exit(0);
    }
    if (pid > 0) waitpid(pid, &st, 0);
    return 0;
}
