// fuzz-flags: -max_len=65536

/* fuzz_sym - frames_sym.h's ELF reader: headers, program and section headers, notes
   (build id), symbol and string tables, the lookup of a file address and the match of a
   mapping against the segments. ELF files found on disk are untrusted input.

   Input: an ELF image; its last 16 bytes also give a mapping [low, high] to match.
   Seeds: tests/fuzz/seeds/fuzz_sym/ (a static and a PIE x86-64 program, an i386 object).

   Invariants:
   - frames_sym_elf_open accepts the image or fails with FRAMES_E_FORMAT and a message;
   - the symbols are sorted by strictly increasing value, each name lies inside the
     image, has no NUL inside its length and is not empty;
   - frames_sym_elf_find(addr) is NULL or the symbol with the greatest value <= addr, and
     it is the answer for its own value unless NULL there too;
   - the build id lies inside the image and has 1 to 64 bytes;
   - a matched mapping's bias puts the mapping's start on a segment start (page-rounded
     or exact) or the image start;
   - memory held stays within the usual bound of the input size. */
#include "fuzz_util.h"

#define FRAMES_SYM_IMPLEMENTATION
#include "frames_sym.h"

static uint64_t load_u64(const uint8_t *p) {
    uint64_t v = 0;
    int i;
    for (i = 7; i >= 0; i--) v = (v << 8) | p[i];
    return v;
}

static void check_symbols(const frames_sym_elf *e, const uint8_t *data, size_t size) {
    const frames_sym_elf_symbol *syms, *s;
    size_t n, i;
    const char *table;
    syms = frames_sym_elf_symbols(e, &n, &table);
    FZ_CHECK(table != NULL);
    FZ_CHECK(n == 0 || syms != NULL);
    for (i = 0; i < n; i++) {
        const uint8_t *name = (const uint8_t *)syms[i].name;
        FZ_CHECK(name >= data && syms[i].name_len > 0 && syms[i].name_len <= size &&
                 (size_t)(name - data) <= size - syms[i].name_len);
        FZ_CHECK(memchr(name, 0, syms[i].name_len) == NULL);
        if (i) FZ_CHECK(syms[i - 1].value < syms[i].value);
        s = frames_sym_elf_find(e, syms[i].value);
        FZ_CHECK(s == NULL || s == &syms[i]);
        if (syms[i].value) {
            s = frames_sym_elf_find(e, syms[i].value - 1);
            FZ_CHECK(s == NULL || s < &syms[i]);
        }
        if (syms[i].value != UINT64_MAX) {
            s = frames_sym_elf_find(e, syms[i].value + 1);
            FZ_CHECK(s == NULL || (s->value <= syms[i].value + 1 && s >= &syms[i]));
        }
    }
}

static void check_match(const frames_sym_elf *e, const uint8_t *data, size_t size) {
    uint64_t low, high, bias, start;
    uint32_t i;
    int ok = 0;
    if (size < 16) return;
    low = load_u64(data + size - 16);
    high = load_u64(data + size - 8);
    if (low > high || frames__sym_match(e, low, high, &bias) != 0) return;
    start = low - bias;
    for (i = 0; i < e->nsegs && !ok; i++) {
        uint64_t v = e->segs[i].vaddr;
        ok = start == v || start == (v & ~(uint64_t)4095) || start == (v & ~(uint64_t)16383) ||
             start == (v & ~(uint64_t)65535);
    }
    FZ_CHECK(ok);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    frames_sym_elf *e;
    frames_error err;
    size_t base = hc_state.live, idlen;
    const uint8_t *id;
    int rc;
    hc_mark();
    rc = frames_sym_elf_open(&e, data, size, NULL, &err);
    if (rc < 0) {
        FZ_CHECK(rc == FRAMES_E_FORMAT && err.message[0]);
        FZ_CHECK(e == NULL);
        return 0;
    }
    check_symbols(e, data, size);
    id = frames_sym_elf_build_id(e, &idlen);
    if (id) FZ_CHECK(id >= data && idlen >= 1 && idlen <= 64 && (size_t)(id - data) <= size - idlen);
    else FZ_CHECK(idlen == 0);
    check_match(e, data, size);
    FZ_CHECK_MEMORY(base, size);
    frames_sym_elf_close(e);
    return 0;
}
