// fuzz-needs: intel-pt.h -lipt
// fuzz-flags: -max_len=65536

/* fuzz_ptelf - frames_pt.h's --elf loading (an ELF file's PT_LOAD segments read from a
   file and handed to libipt) and its cpu strings (frames_pt_parse_cpu), then a decode over
   what was loaded, on arbitrary bytes.

   Input: u8 flags (bit 0: a load base is given, bit 1: the kernel image (--kcore), bit 2:
   the instruction-flow decoder), u8 L, L bytes of cpu string (cut at a NUL), u16 E, E
   bytes of ELF file (written to a private temporary directory), the PT stream.
   Seeds (tests/fuzz/seeds/fuzz_ptelf/): cases of ../shared/vectors/pt with their image
   wrapped in a one-segment ELF64 file at the case's address, and with 32- and 64-bit
   files of a real build.

   Invariants:
   - frames_pt_parse_cpu succeeds exactly on "none", "F/M[/S]" and "GenuineIntel,F,M[,S...]"
     with decimal F <= 65535, M and S <= 255; what it returns prints back as
     "F/M/S" and parses to the same; on failure the cpu is all zero;
   - loading an ELF file ends with FRAMES_OK or an error with its code and a message, never
     a crash or a read outside the file, with memory bounded by the input;
   - a decode over a loaded image terminates and writes a trace that reads back, whose
     std_frames are counted by the statistics. */
#include "fuzz_util.h"
#include "fuzz_pt.h"

#include <ctype.h>

/* An independent reading of a decimal field of a cpu string: 0, or -1. */
static int fz_number(const char **p, unsigned long max, unsigned long *v) {
    const char *s = *p;
    unsigned long n = 0;
    if (!isdigit((unsigned char)*s)) return -1;
    for (; isdigit((unsigned char)*s); s++)
        if ((n = n * 10 + (unsigned long)(*s - '0')) > max) return -1;
    *p = s;
    *v = n;
    return 0;
}

static void fz_check_cpu(const char *s) {
    struct pt_cpu cpu, again;
    char text[64];
    int rc = frames_pt_parse_cpu(s, &cpu);
    FZ_CHECK(rc == 0 || rc == FRAMES_E_INVALID);
    if (rc < 0) {
        FZ_CHECK(cpu.vendor == pcv_unknown && cpu.family == 0 && cpu.model == 0 && cpu.stepping == 0);
        return;
    }
    if (!strcmp(s, "none")) {
        FZ_CHECK(cpu.vendor == pcv_unknown && cpu.family == 0);
        return;
    }
    FZ_CHECK(cpu.vendor == pcv_intel);
    snprintf(text, sizeof text, "%u/%u/%u", (unsigned)cpu.family, (unsigned)cpu.model, (unsigned)cpu.stepping);
    FZ_CHECK(frames_pt_parse_cpu(text, &again) == 0);
    FZ_CHECK(again.vendor == cpu.vendor && again.family == cpu.family && again.model == cpu.model &&
             again.stepping == cpu.stepping);
}

/* The model's verdict on the forms it knows; -1 when it would refuse. */
static int fz_model_cpu(const char *s) {
    const char *p = s;
    char sep = '/';
    unsigned long f, m, st;
    if (!strcmp(s, "none")) return 0;
    if (!strncmp(s, "GenuineIntel,", 13)) p += 13, sep = ',';
    if (fz_number(&p, 0xffff, &f) < 0 || *p++ != sep || fz_number(&p, 0xff, &m) < 0) return -1;
    if (*p == sep && (p++, fz_number(&p, 0xff, &st) < 0)) return -1;
    return *p == 0 || (sep == ',' && *p == ',') ? 0 : -1;
}

static int fz_on_insn(void *ctx, const frames_pt_insn *in) {
    uint64_t *n = (uint64_t *)ctx;
    FZ_CHECK(in->size >= 1 && in->size <= 15);
    return ++*n > (1u << 16);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    size_t base_live = hc_state.live, clen, elen;
    char cpu[256];
    unsigned flags;
    const char *elf;
    frames_pt_options o;
    frames_pt *pt;
    frames_error err;
    frames_writer *w;
    frames_pt_callbacks cb;
    frames_pt_stats st;
    fz_mem out;
    fz_counts c;
    uint64_t insns = 0, base = 0x400000;
    int rc;
    if (size < 4) return 0;
    hc_mark();
    flags = data[0];
    clen = data[1];
    if (clen > size - 2) clen = size - 2;
    memcpy(cpu, data + 2, clen);
    cpu[clen] = 0;
    fz_check_cpu(cpu);
    FZ_CHECK((frames_pt_parse_cpu(cpu, &o.cpu) == 0) == (fz_model_cpu(cpu) == 0));
    data += 2 + clen, size -= 2 + clen;
    if (size < 2) return 0;
    elen = (size_t)data[0] | (size_t)data[1] << 8;
    if (elen > size - 2) elen = size - 2;
    elf = fz_put_file("image.elf", data + 2, elen);
    data += 2 + elen, size -= 2 + elen;

    frames_pt_options_default(&o);
    o.decoder = flags & 4 ? FRAMES_PT_DECODER_INSN : FRAMES_PT_DECODER_BLOCK;
    if (frames_pt_parse_cpu(cpu, &o.cpu) < 0) memset(&o.cpu, 0, sizeof o.cpu);
    FZ_CHECK(frames_pt_open(&pt, &o, &err) == FRAMES_OK);
    rc = (flags & 2) ? frames_pt_add_kcore(pt, elf, base, flags & 1, &err)
                     : frames_pt_add_elf(pt, elf, base, flags & 1, &err);
    FZ_CHECK(rc == FRAMES_OK || (rc < 0 && err.code == rc && err.message[0] &&
                                 strlen(err.message) < sizeof err.message));
    if (rc == FRAMES_OK && size) {
        FZ_CHECK(frames_pt_set_trace(pt, data, size, &err) == FRAMES_OK);
        memset(&cb, 0, sizeof cb);
        cb.ctx = &insns;
        cb.insn = fz_on_insn;
        frames_pt_set_callbacks(pt, &cb);
        w = fz_out_writer(&out);
        rc = frames_pt_decode(pt, w, &st, &err);
        FZ_CHECK(rc == FRAMES_OK || rc == FRAMES_E_STOPPED);
        FZ_CHECK(frames_writer_close(w) == FRAMES_OK);
        c = fz_check_written(&out, NULL, 0, 0);
        FZ_CHECK(c.std == st.std_frames && c.exception == st.exception_frames);
        free(out.p);
    }
    frames_pt_close(pt);
    FZ_CHECK_MEMORY(base_live, elen + size + clen);
    FZ_CHECK(hc_state.live == base_live);
    return 0;
}
