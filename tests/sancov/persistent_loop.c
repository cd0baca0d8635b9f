/* A persistent-mode style harness (like AFL++'s __AFL_LOOP) that delimits inputs with
   frames_sancov.h, for test_sancov: input i compares i * 0x10101 against a constant. */
#include <stdint.h>
#include <stdio.h>

#include "frames_sancov.h"

volatile int sink;

__attribute__((noinline)) int check(uint32_t v) { return v == 0xdeadbeefu; }

int main(void) {
    uint32_t i;
    sink += check(1);   /* start-up work, before any input */
    for (i = 1; i <= 3; i++) {
        uint32_t input = i * 0x10101u;
        FRAMES_SANCOV_BEGIN(&input, sizeof input);
        sink += check(input);
        FRAMES_SANCOV_END();
    }
    return 0;
}
