/* A libFuzzer harness for test_sancov: each helper makes one kind of comparison that
   SanitizerCoverage reports (trace-cmp), so that the trace of a known input can be
   checked value by value. noinline keeps every helper a function of its own, so that
   the pcs of its blocks resolve to its symbol. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

volatile int harness_sink;

/* const_cmp4: the constant "FRMS" (little-endian) against the first word of the input */
__attribute__((noinline)) int check_magic(uint32_t word) { return word == 0x534d5246u; }

/* cmp8: two values that both come from the input */
__attribute__((noinline)) int equal64(uint64_t a, uint64_t b) { return a == b; }

/* switch on one input byte */
__attribute__((noinline)) int classify(uint8_t c) {
    switch (c) {
    case 'a': return 1;
    case 'k': return 11;
    case 'z': return 26;
    default: return 0;
    }
}

__attribute__((noinline)) void crash_now(void) {
    volatile int *p = (volatile int *)(uintptr_t)harness_sink;
    *p = 1;   /* harness_sink is small: a write to the zero page */
}

/* reads one byte past a heap block: AddressSanitizer reports it (no signal) */
__attribute__((noinline)) int overflow_read(size_t n) {
    volatile char *p = (volatile char *)malloc(n);
    int v = p[n];
    free((void *)p);
    return v;
}

/* Input layout: word[0..4) magic, a[4..12), b[12..20), c[20] ("!" crashes, "@" overflows). */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    uint32_t word;
    uint64_t a, b;
    if (size < 21) return 0;
    memcpy(&word, data, 4);
    memcpy(&a, data + 4, 8);
    memcpy(&b, data + 12, 8);
    harness_sink += check_magic(word);
    harness_sink += equal64(a, b);
    harness_sink += classify(data[20]);
    if (data[20] == '!') crash_now();
    if (data[20] == '@') harness_sink += overflow_read(4);
    return 0;
}
