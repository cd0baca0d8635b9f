// fuzz-needs: elfutils/libdw.h -ldw -lelf
// fuzz-flags: -max_len=65536

/* fuzz_symdw - frames_sym.h with libdw (FRAMES_SYM_LIBDW): a module file on disk with
   arbitrary ELF and DWARF bytes, looked up at pcs inside a mapping the file matches, so
   that the symboliser opens it, reads its compile units' address ranges and asks libdw for
   the line of each pc. A file a trace names is input from whoever made the trace.

   Input: an ELF image (written to a private temporary directory as the module's file);
   its last 16 bytes choose the segment mapped and the pcs looked up.
   Seeds: tests/fuzz/seeds/fuzz_symdw/ (small programs built with -g: DWARF 5 and 4,
   static and PIE).

   Invariants:
   - every lookup returns the FRAMES_SYM_FOUND_* bits of what it found (module always,
     inside the mapping), never an error but out of memory; strings lie in memory that
     stays valid (ASan) and a found line has a file name;
   - a second lookup of the same pc (from the cache) and a second symboliser give the same
     answer, formatted the same;
   - formatted names are NUL-terminated within the buffer; the JSON members are valid
     JSON inside an object;
   - the library's own memory stays within the usual bound of the input size (libdw's is
     its own). */
#include "fuzz_util.h"

#define FRAMES_SYM_LIBDW
#define FRAMES_SYM_IMPLEMENTATION
#include "frames_sym.h"

#include <unistd.h>

static char fz_dir[64], fz_path[128];

static void fz_cleanup(void) {
    unlink(fz_path);
    rmdir(fz_dir);
}

static const char *fz_module_file(const uint8_t *data, size_t size) {
    FILE *f;
    if (!fz_dir[0]) {
        snprintf(fz_dir, sizeof fz_dir, "%s", "/tmp/frames-fuzz-XXXXXX");
        FZ_CHECK(mkdtemp(fz_dir) != NULL);
        snprintf(fz_path, sizeof fz_path, "%s/module.so", fz_dir);
        atexit(fz_cleanup);
    }
    f = fopen(fz_path, "wb");
    FZ_CHECK(f);
    if (size) FZ_CHECK(fwrite(data, 1, size, f) == size);
    FZ_CHECK(fclose(f) == 0);
    return fz_path;
}

/* Look pc up in a new symboliser of the module [low, high]: the formatted name and JSON
   into text (cap bytes). Returns the found bits. */
static int fz_lookup_text(uint64_t low, uint64_t high, uint64_t pc, char *text, size_t cap) {
    frames_sym *s;
    frames_error err;
    frames_sym_loc loc;
    fz_buf json;
    int found;
    size_t n;
    FZ_CHECK(frames_sym_open(&s, NULL, &err) == FRAMES_OK);
    FZ_CHECK(frames_sym_add_module(s, fz_path, strlen(fz_path), low, high, NULL, 0) == FRAMES_OK);
    found = frames_sym_lookup(s, pc, &loc);
    FZ_CHECK(found >= 0 && (found & FRAMES_SYM_FOUND_MODULE));
    if (found & FRAMES_SYM_FOUND_LINE) FZ_CHECK(loc.file && loc.file_len > 0 && loc.line > 0);
    n = frames_sym_format(&loc, FRAMES_SYM_FMT_LINE, text, cap);
    FZ_CHECK(strlen(text) == (n < cap ? n : cap - 1));
    memset(&json, 0, sizeof json);
    fz_out(&json, "{\"pc\":0", 7);
    FZ_CHECK(frames_sym_print_json(&loc, fz_out, &json) == 0);
    fz_out(&json, "}", 1);
    FZ_CHECK(fz_json_valid(json.p, json.len));
    fz_buf_free(&json);
    frames_sym_close(s);
    return found;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    size_t base = hc_state.live;
    frames_sym_elf *e;
    frames_error err;
    const frames__sym_seg *seg = NULL;
    uint64_t low, high, bias, pick;
    uint32_t i;
    int k;
    if (size < 80) return 0;
    hc_mark();
    if (frames_sym_elf_open(&e, data, size, NULL, &err) < 0) return 0;
    pick = 0;
    for (k = 0; k < 8; k++) pick = pick << 8 | data[size - 16 + k];
    /* an executable segment the mapping matches (the module's file then gives names) */
    for (i = 0; i < e->nsegs && !seg; i++) {
        const frames__sym_seg *c = &e->segs[(i + pick) % e->nsegs];
        low = c->vaddr & ~(uint64_t)4095;
        if (c->type != FRAMES__ELF_PT_LOAD || !(c->flags & 1) || !c->memsz || c->vaddr + c->memsz - 1 < low)
            continue;   /* the code: a loaded, executable segment */
        high = c->vaddr + c->memsz - 1;
        if (frames__sym_match(e, low, high, &bias) == 0) seg = c;
    }
    frames_sym_elf_close(e);
    if (seg) {
        frames_sym *s;
        frames_sym_loc loc, again;
        char a[512], b[512];
        fz_module_file(data, size);
        FZ_CHECK(frames_sym_open(&s, NULL, &err) == FRAMES_OK);
        FZ_CHECK(frames_sym_add_module(s, fz_path, strlen(fz_path), low, high, NULL, 0) == FRAMES_OK);
        for (k = 0; k < 8; k++) {
            uint64_t off = k < 4 ? (uint64_t)data[size - 8 + k] * 4 : (pick >> (8 * k)) * 2654435761u, pc;
            if (high - low != UINT64_MAX) off %= high - low + 1;   /* inside the mapping */
            pc = low + off;
            int f1 = frames_sym_lookup(s, pc, &loc), f2;
            FZ_CHECK(f1 >= 0 && (f1 & FRAMES_SYM_FOUND_MODULE));
            frames_sym_format(&loc, FRAMES_SYM_FMT_LINE, a, sizeof a);
            if (getenv("FZ_DEBUG")) fprintf(stderr, "pc 0x%llx: %s\n", (unsigned long long)pc, a);
            f2 = frames_sym_lookup(s, pc, &again);   /* the cache */
            FZ_CHECK(f2 == f1);
            frames_sym_format(&again, FRAMES_SYM_FMT_LINE, b, sizeof b);
            FZ_CHECK(!strcmp(a, b));
            if (k < 2) {   /* a fresh symboliser says the same */
                FZ_CHECK(fz_lookup_text(low, high, pc, b, sizeof b) == f1);
                FZ_CHECK(!strcmp(a, b));
            }
        }
        frames_sym_close(s);
    }
    FZ_CHECK_MEMORY(base, size);
    FZ_CHECK(hc_state.live == base);
    return 0;
}
