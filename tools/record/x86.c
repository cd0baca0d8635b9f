/* x86.c - x86-64 operand decoding for `frames record`: which registers and memory
   an instruction reads and writes (capstone, plus the implicit accesses capstone 4 does
   not report), and register values from a stopped thread's state. */
#include "record.h"

#if defined(RECORD_SUPPORTED) && !defined(RECORD_HAVE_CAPSTONE)
/* Built without capstone: no decoder (the Valgrind engine records without it). */
const char *rx_library(void) { return "libcapstone"; }
rx_decoder *rx_open(void) { return NULL; }
void rx_close(rx_decoder *d) { (void)d; }
const rx_insn *rx_decode(rx_decoder *d, uint64_t pc, const uint8_t *bytes, size_t n) {
    (void)d, (void)pc, (void)bytes, (void)n;
    return NULL;
}
size_t rx_reg_value(rx_state *st, unsigned reg, uint64_t next_pc, uint8_t *out, uint32_t *attr,
                    const char **name) {
    (void)st, (void)reg, (void)next_pc, (void)out, (void)attr, (void)name;
    return 0;
}
uint64_t rx_mem_address(const rx_state *st, const rx_insn *in, const rx_memop *m) {
    (void)st, (void)in, (void)m;
    return 0;
}
int rx_rep_active(const rx_state *st, const rx_insn *in) { return rx_count_active(st, in->addr32); }
const frames_rec_prep *rx_reg_prep(unsigned reg, uint32_t how, uint16_t *off) {
    (void)reg, (void)how, (void)off;
    return NULL;
}
#elif defined(RECORD_SUPPORTED)
#include <capstone/capstone.h>
#include <dlfcn.h>
#include <elf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>

/* ---------------------------------------------------------------- capstone, loaded */

/* capstone is loaded when a recording starts rather than linked: the dynamic loader
   spends about 1.6 ms on its 78,000 relocations at the start of every process, which
   would be most of the time of a `frames query` over an index. The library loaded is
   the one whose headers we were built with (same major version, same structures). */
#define RX_STR2(x) #x
#define RX_STR(x) RX_STR2(x)

static struct {
    cs_err (*open)(cs_arch, cs_mode, csh *);
    cs_err (*close)(csh *);
    cs_err (*option)(csh, cs_opt_type, size_t);
    cs_insn *(*malloc)(csh);
    void (*free)(cs_insn *, size_t);
    bool (*disasm_iter)(csh, const uint8_t **, size_t *, uint64_t *, cs_insn *);
    const char *(*reg_name)(csh, unsigned int);
    cs_err (*regs_access)(csh, const cs_insn *, cs_regs, uint8_t *, cs_regs, uint8_t *);
} cs;

/* A function of the library by name (through memcpy: ISO C has no cast from void *). */
static int cs_sym(void *lib, const char *name, void *fn, size_t size) {
    void *p = dlsym(lib, name);
    if (p) memcpy(fn, &p, size);
    return p != NULL;
}

const char *rx_library(void) { return "libcapstone.so." RX_STR(CS_API_MAJOR); }

static int cs_load(void) {
    static void *lib;
    if (lib) return 1;
    if (!(lib = dlopen(rx_library(), RTLD_NOW | RTLD_LOCAL))) return 0;
    if (cs_sym(lib, "cs_open", &cs.open, sizeof cs.open) && cs_sym(lib, "cs_close", &cs.close, sizeof cs.close) &&
        cs_sym(lib, "cs_option", &cs.option, sizeof cs.option) &&
        cs_sym(lib, "cs_malloc", &cs.malloc, sizeof cs.malloc) && cs_sym(lib, "cs_free", &cs.free, sizeof cs.free) &&
        cs_sym(lib, "cs_disasm_iter", &cs.disasm_iter, sizeof cs.disasm_iter) &&
        cs_sym(lib, "cs_reg_name", &cs.reg_name, sizeof cs.reg_name) &&
        cs_sym(lib, "cs_regs_access", &cs.regs_access, sizeof cs.regs_access))
        return 1;
    dlclose(lib);
    lib = NULL;
    return 0;
}

/* ---------------------------------------------------------------- register table */

/* Where a register's value lives. */
enum { SRC_NONE = 0, SRC_GPR, SRC_SEG, SRC_FLAGS, SRC_PC, SRC_X87, SRC_MM, SRC_FPSW, SRC_VEC, SRC_K };

/* Prepared elements of a register (rx_reg_prep): read with no address role, as a base,
   as an index, as both; written. */
enum { PREP_READ = 0, PREP_WRITE = 4, NPREP = 5 };

typedef struct regdesc {
    uint8_t src, idx, off, size;  /* GPR: index in gpr_off, byte offset, size; VEC: number */
    uint32_t attr;                /* FRAMES_VAL_ kind | class */
    char name[12];
    uint16_t value_off;           /* rec_op.off of its value */
    frames_rec_prep prep[NPREP];
} regdesc;

static regdesc regs[X86_REG_ENDING];

/* The 16 GPRs in capstone's names, a row a register (in the order of their
   user_regs_struct slots), a column a width: 8, 4, 2 and 1 bytes (GPR_BYTES). */
#define GPR_BYTES(width) (8u >> (width))
static const uint16_t gprs[16][4] = {
    {X86_REG_RAX, X86_REG_EAX, X86_REG_AX, X86_REG_AL},     {X86_REG_RBX, X86_REG_EBX, X86_REG_BX, X86_REG_BL},
    {X86_REG_RCX, X86_REG_ECX, X86_REG_CX, X86_REG_CL},     {X86_REG_RDX, X86_REG_EDX, X86_REG_DX, X86_REG_DL},
    {X86_REG_RSI, X86_REG_ESI, X86_REG_SI, X86_REG_SIL},    {X86_REG_RDI, X86_REG_EDI, X86_REG_DI, X86_REG_DIL},
    {X86_REG_RBP, X86_REG_EBP, X86_REG_BP, X86_REG_BPL},    {X86_REG_RSP, X86_REG_ESP, X86_REG_SP, X86_REG_SPL},
    {X86_REG_R8, X86_REG_R8D, X86_REG_R8W, X86_REG_R8B},    {X86_REG_R9, X86_REG_R9D, X86_REG_R9W, X86_REG_R9B},
    {X86_REG_R10, X86_REG_R10D, X86_REG_R10W, X86_REG_R10B}, {X86_REG_R11, X86_REG_R11D, X86_REG_R11W, X86_REG_R11B},
    {X86_REG_R12, X86_REG_R12D, X86_REG_R12W, X86_REG_R12B}, {X86_REG_R13, X86_REG_R13D, X86_REG_R13W, X86_REG_R13B},
    {X86_REG_R14, X86_REG_R14D, X86_REG_R14W, X86_REG_R14B}, {X86_REG_R15, X86_REG_R15D, X86_REG_R15W, X86_REG_R15B},
};
/* user_regs_struct slots: rec_gpr_off (common.c), in the same order as gprs */
#define gpr_off rec_gpr_off

/* XSAVE standard-format offsets of the AVX (2), opmask (5), ZMM_Hi256 (6) and Hi16_ZMM (7)
   components, from CPUID leaf 0xD; 0 when the CPU lacks the component. */
static uint32_t xs_off[8];

static void set_reg(unsigned id, uint8_t src, uint8_t idx, uint8_t off, uint8_t size,
                    uint32_t attr, const char *name) {
    regdesc *d = &regs[id];
    size_t i;
    d->src = src;
    d->idx = idx;
    d->off = off;
    d->size = size;
    d->attr = attr;
    for (i = 0; name[i] && i + 1 < sizeof d->name; i++)
        d->name[i] = (char)(name[i] >= 'a' && name[i] <= 'z' ? name[i] - 32 : name[i]);
    d->name[i] = 0;
}

/* Where rx_reg_value finds the value of d, as a rec_op.off: a fixed place in rx_state
   (a GPR or part of one, RFLAGS, a segment selector, an XMM register once the vector
   state is fetched), the next pc, or REC_OP_SLOW. */
static uint16_t value_offset(const regdesc *d) {
    static const size_t seg[6] = {offsetof(struct user_regs_struct, cs), offsetof(struct user_regs_struct, ds),
                                  offsetof(struct user_regs_struct, es), offsetof(struct user_regs_struct, fs),
                                  offsetof(struct user_regs_struct, gs), offsetof(struct user_regs_struct, ss)};
    const size_t g = offsetof(rx_state, gpr);
    switch (d->src) {
    case SRC_GPR: return (uint16_t)(g + gpr_off[d->idx] + d->off);
    case SRC_FLAGS: return (uint16_t)(g + offsetof(struct user_regs_struct, eflags));
    case SRC_SEG: return (uint16_t)(g + seg[d->idx]);
    case SRC_PC: return REC_OP_PC;
    case SRC_VEC:
        if (d->idx < 16 && d->size == 16) return (uint16_t)(offsetof(rx_state, xs) + RX_XS_XMM + 16u * d->idx);
        return REC_OP_SLOW;
    default: return REC_OP_SLOW;
    }
}

static void init_prep(regdesc *d) {
    static const uint32_t how[NPREP] = {
        FRAMES_VAL_READ | FRAMES_VAL_BEFORE, FRAMES_VAL_READ | FRAMES_VAL_BEFORE | FRAMES_VAL_BASE,
        FRAMES_VAL_READ | FRAMES_VAL_BEFORE | FRAMES_VAL_INDEX,
        FRAMES_VAL_READ | FRAMES_VAL_BEFORE | FRAMES_VAL_BASE | FRAMES_VAL_INDEX, FRAMES_VAL_WRITE | FRAMES_VAL_AFTER};
    unsigned i;
    if (d->src == SRC_NONE) return;
    d->value_off = value_offset(d);
    for (i = 0; i < NPREP; i++)
        if (frames_rec_prepare(&d->prep[i], d->attr | how[i], d->name, d->size, NULL) < 0) d->src = SRC_NONE;
}

const frames_rec_prep *rx_reg_prep(unsigned reg, uint32_t how, uint16_t *off) {
    const regdesc *d;
    if (reg >= X86_REG_ENDING || regs[reg].src == SRC_NONE) return NULL;
    d = &regs[reg];
    *off = d->value_off;
    if (how & FRAMES_VAL_WRITE) return &d->prep[PREP_WRITE];
    return &d->prep[PREP_READ + ((how & FRAMES_VAL_BASE) ? 1 : 0) + ((how & FRAMES_VAL_INDEX) ? 2 : 0)];
}

static void init_tables(csh h) {
    static const uint16_t seg[6] = {X86_REG_CS, X86_REG_DS, X86_REG_ES, X86_REG_FS, X86_REG_GS, X86_REG_SS};
    static const uint16_t high8[4] = {X86_REG_AH, X86_REG_BH, X86_REG_CH, X86_REG_DH};
    unsigned i, w;
    for (i = 0; i < 16; i++)
        for (w = 0; w < 4; w++)
            set_reg(gprs[i][w], SRC_GPR, (uint8_t)i, 0, (uint8_t)GPR_BYTES(w), FRAMES_VAL_GPR,
                    cs.reg_name(h, gprs[i][w]));
    for (i = 0; i < 4; i++) set_reg(high8[i], SRC_GPR, (uint8_t)i, 1, 1, FRAMES_VAL_GPR, cs.reg_name(h, high8[i]));
    for (i = 0; i < 6; i++) set_reg(seg[i], SRC_SEG, (uint8_t)i, 0, 2, FRAMES_VAL_CTRL, cs.reg_name(h, seg[i]));
    set_reg(X86_REG_EFLAGS, SRC_FLAGS, 0, 0, 8, FRAMES_VAL_CTRL, "RFLAGS");
    set_reg(X86_REG_RIP, SRC_PC, 0, 0, 8, FRAMES_VAL_PC, "RIP");
    set_reg(X86_REG_EIP, SRC_PC, 0, 0, 4, FRAMES_VAL_PC, "EIP");
    set_reg(X86_REG_IP, SRC_PC, 0, 0, 2, FRAMES_VAL_PC, "IP");
    set_reg(X86_REG_FPSW, SRC_FPSW, 0, 0, 2, FRAMES_VAL_CTRL, "FPSW");
    for (i = 0; i < 8; i++) {
        set_reg(X86_REG_ST0 + i, SRC_X87, (uint8_t)i, 0, 10, FRAMES_VAL_SIMD | FRAMES_VAL_FLOAT,
                cs.reg_name(h, X86_REG_ST0 + i));
        set_reg(X86_REG_FP0 + i, SRC_X87, (uint8_t)i, 0, 10, FRAMES_VAL_SIMD | FRAMES_VAL_FLOAT,
                cs.reg_name(h, X86_REG_FP0 + i));
        set_reg(X86_REG_MM0 + i, SRC_MM, (uint8_t)i, 0, 8, FRAMES_VAL_SIMD, cs.reg_name(h, X86_REG_MM0 + i));
        set_reg(X86_REG_K0 + i, SRC_K, (uint8_t)i, 0, 8, FRAMES_VAL_OREG, cs.reg_name(h, X86_REG_K0 + i));
    }
    for (i = 0; i < 32; i++) {
        set_reg(X86_REG_XMM0 + i, SRC_VEC, (uint8_t)i, 0, 16, FRAMES_VAL_SIMD, cs.reg_name(h, X86_REG_XMM0 + i));
        set_reg(X86_REG_YMM0 + i, SRC_VEC, (uint8_t)i, 0, 32, FRAMES_VAL_SIMD, cs.reg_name(h, X86_REG_YMM0 + i));
        set_reg(X86_REG_ZMM0 + i, SRC_VEC, (uint8_t)i, 0, 64, FRAMES_VAL_SIMD, cs.reg_name(h, X86_REG_ZMM0 + i));
    }
    for (i = 0; i < 8; i++) xs_off[i] = rec_xs_offset(i);
    for (i = 0; i < X86_REG_ENDING; i++) init_prep(&regs[i]);
}

/* The full register (capstone id of the 64-bit GPR, or EFLAGS) reg belongs to, or 0. */
static unsigned full_reg(unsigned reg) {
    if (reg >= X86_REG_ENDING) return 0;
    if (regs[reg].src == SRC_GPR) return gprs[regs[reg].idx][0];
    if (regs[reg].src == SRC_FLAGS) return X86_REG_EFLAGS;
    return 0;
}

/* 64-bit value of a GPR (capstone 64-bit id) or RFLAGS. */
static uint64_t gpr64_value(const struct user_regs_struct *g, unsigned reg) {
    uint64_t v;
    if (reg == X86_REG_EFLAGS) return g->eflags;
    if (reg >= X86_REG_ENDING || regs[reg].src != SRC_GPR) return 0;
    memcpy(&v, (const uint8_t *)g + gpr_off[regs[reg].idx], 8);
    return v;
}

/* ---------------------------------------------------------------- register values */


static int fetch_xstate(rx_state *st);

/* Is XSAVE component `comp` in use (else it holds its initial value, zero)? */
static int xs_in_use(const rx_state *st, unsigned comp) {
    uint64_t bv;
    memcpy(&bv, st->xs + RX_XS_HEADER, 8);
    return (bv >> comp) & 1;
}

/* Vector register n (0-31), `size` bytes: xmm from the legacy area (0-15) or Hi16_ZMM
   (16-31), upper ymm halves from the AVX component, upper zmm halves from ZMM_Hi256. */
static size_t vec_value(rx_state *st, unsigned n, unsigned size, uint8_t *out) {
    memset(out, 0, size);
    if (n >= 16) {
        if (!xs_off[7]) return 0;
        if (xs_in_use(st, 7)) memcpy(out, st->xs + xs_off[7] + 64 * (n - 16), size);
        return size;
    }
    memcpy(out, st->xs + RX_XS_XMM + 16 * n, 16);
    if (size >= 32) {
        if (!xs_off[2]) return 0;
        if (xs_in_use(st, 2)) memcpy(out + 16, st->xs + xs_off[2] + 16 * n, 16);
    }
    if (size == 64) {
        if (!xs_off[6]) return 0;
        if (xs_in_use(st, 6)) memcpy(out + 32, st->xs + xs_off[6] + 32 * n, 32);
    }
    return size;
}

size_t rx_reg_value(rx_state *st, unsigned reg, uint64_t next_pc, uint8_t *out, uint32_t *attr,
                    const char **name) {
    const regdesc *d;
    uint16_t segs[6];
    uint16_t fsw;
    if (reg >= X86_REG_ENDING || regs[reg].src == SRC_NONE) return 0;
    d = &regs[reg];
    *attr = d->attr;
    *name = d->name;
    switch (d->src) {
    case SRC_GPR: { /* the hot case: a copy of a known size (no call to memcpy) */
        const uint8_t *p = (const uint8_t *)&st->gpr + gpr_off[d->idx] + d->off;
        switch (d->size) {
        case 8: memcpy(out, p, 8); return 8;
        case 4: memcpy(out, p, 4); return 4;
        case 2: memcpy(out, p, 2); return 2;
        default: out[0] = p[0]; return 1;
        }
    }
    case SRC_FLAGS: memcpy(out, &st->gpr.eflags, 8); return 8;
    case SRC_PC: memcpy(out, &next_pc, d->size); return d->size; /* rip reads see the next insn */
    case SRC_SEG:
        segs[0] = (uint16_t)st->gpr.cs;
        segs[1] = (uint16_t)st->gpr.ds;
        segs[2] = (uint16_t)st->gpr.es;
        segs[3] = (uint16_t)st->gpr.fs;
        segs[4] = (uint16_t)st->gpr.gs;
        segs[5] = (uint16_t)st->gpr.ss;
        memcpy(out, &segs[d->idx], 2);
        return 2;
    default: break;
    }
    if (fetch_xstate(st) < 0) return 0;
    switch (d->src) {
    case SRC_FPSW: memcpy(out, st->xs + RX_XS_FSW, 2); return 2;
    case SRC_X87: memcpy(out, st->xs + RX_XS_ST + 16 * d->idx, 10); return 10;
    case SRC_MM: /* mmN is physical register N; the legacy area is in stack (ST) order */
        memcpy(&fsw, st->xs + RX_XS_FSW, 2);
        memcpy(out, st->xs + RX_XS_ST + 16 * ((d->idx - ((fsw >> 11) & 7)) & 7), 8);
        return 8;
    case SRC_VEC: return vec_value(st, d->idx, d->size, out);
    case SRC_K:
        memset(out, 0, 8);
        if (!xs_off[5]) return 0;
        if (xs_in_use(st, 5)) memcpy(out, st->xs + xs_off[5] + 8 * d->idx, 8);
        return 8;
    default: return 0;
    }
}

static int fetch_xstate(rx_state *st) {
    struct iovec iov;
    if (st->xs_state) return st->xs_state;
    iov.iov_base = st->xs;
    iov.iov_len = sizeof st->xs;
    memset(st->xs, 0, RX_XS_HEADER + 64);
    if (ptrace(PTRACE_GETREGSET, st->tid, (void *)(uintptr_t)NT_X86_XSTATE, &iov) == 0) {
        st->xs_state = 1;
    } else if (ptrace(PTRACE_GETFPREGS, st->tid, 0, st->xs) == 0) { /* FXSAVE layout only */
        memset(st->xs + RX_XS_HEADER, 0, 64);
        st->xs_state = 1;
    } else {
        st->xs_state = -1;
    }
    return st->xs_state;
}

/* ---------------------------------------------------------------- memory operands */

uint64_t rx_mem_address(const rx_state *st, const rx_insn *in, const rx_memop *m) {
    uint64_t a = (uint64_t)m->disp;
    if (m->base == X86_REG_RIP) a += in->pc + in->len;
    else if (m->base) a += gpr64_value(&st->gpr, full_reg(m->base)) & (regs[m->base].size == 4 ? 0xffffffffu : ~0ull);
    if (m->index) a += (gpr64_value(&st->gpr, full_reg(m->index)) &
                        (regs[m->index].size == 4 ? 0xffffffffu : ~0ull)) * (uint64_t)m->scale;
    if (in->addr32) a &= 0xffffffffu;
    if (m->seg == X86_REG_FS) a += st->gpr.fs_base;
    if (m->seg == X86_REG_GS) a += st->gpr.gs_base;
    return a;
}

int rx_rep_active(const rx_state *st, const rx_insn *in) { return rx_count_active(st, in->addr32); }

/* ---------------------------------------------------------------- decoding */

#define CACHE_BITS 13

struct rx_decoder {
    csh h;
    cs_insn *insn;
    rx_insn *cache;
    uint8_t *valid;
};

rx_decoder *rx_open(void) {
    rx_decoder *d;
    if (!cs_load()) return NULL;
    if (!(d = (rx_decoder *)calloc(1, sizeof *d))) return NULL;
    if (cs.open(CS_ARCH_X86, CS_MODE_64, &d->h) != CS_ERR_OK) {
        free(d);
        return NULL;
    }
    cs.option(d->h, CS_OPT_DETAIL, CS_OPT_ON);
    d->insn = cs.malloc(d->h);
    d->cache = (rx_insn *)calloc((size_t)1 << CACHE_BITS, sizeof *d->cache);
    d->valid = (uint8_t *)calloc((size_t)1 << CACHE_BITS, 1);
    if (!d->insn || !d->cache || !d->valid) {
        rx_close(d);
        return NULL;
    }
    init_tables(d->h);
    return d;
}

void rx_close(rx_decoder *d) {
    if (!d) return;
    if (d->insn) cs.free(d->insn, 1);
    cs.close(&d->h);
    free(d->cache);
    free(d->valid);
    free(d);
}

static int is_vector_reg(unsigned r) {
    return (r >= X86_REG_XMM0 && r <= X86_REG_XMM31) || (r >= X86_REG_YMM0 && r <= X86_REG_YMM31) ||
           (r >= X86_REG_ZMM0 && r <= X86_REG_ZMM31);
}

/* Instructions whose memory operand is no data access, or whose size capstone 4 reports
   wrongly (the XSAVE family's area is hundreds of bytes and CPU-dependent). */
static int memory_not_recorded(unsigned id) {
    switch (id) {
    case X86_INS_LEA: case X86_INS_NOP: case X86_INS_PREFETCH: case X86_INS_PREFETCHNTA:
    case X86_INS_PREFETCHT0: case X86_INS_PREFETCHT1: case X86_INS_PREFETCHT2:
    case X86_INS_PREFETCHW: case X86_INS_CLFLUSH: case X86_INS_CLFLUSHOPT: case X86_INS_CLWB:
    case X86_INS_FXSAVE: case X86_INS_FXSAVE64: case X86_INS_FXRSTOR: case X86_INS_FXRSTOR64:
    case X86_INS_XSAVE: case X86_INS_XSAVE64: case X86_INS_XSAVEC: case X86_INS_XSAVEC64:
    case X86_INS_XSAVEOPT: case X86_INS_XSAVEOPT64: case X86_INS_XSAVES: case X86_INS_XSAVES64:
    case X86_INS_XRSTOR: case X86_INS_XRSTOR64: case X86_INS_XRSTORS: case X86_INS_XRSTORS64:
        return 1;
    default: return 0;
    }
}

/* Atomic read-modify-write instructions capstone 4 marks as read-only on memory. */
static int is_exchange(unsigned id) {
    return id == X86_INS_XCHG || id == X86_INS_CMPXCHG || id == X86_INS_XADD ||
           id == X86_INS_CMPXCHG8B || id == X86_INS_CMPXCHG16B;
}

static int is_string_op(unsigned id) {
    switch (id) {
    case X86_INS_MOVSB: case X86_INS_MOVSW: case X86_INS_MOVSD: case X86_INS_MOVSQ:
    case X86_INS_STOSB: case X86_INS_STOSW: case X86_INS_STOSD: case X86_INS_STOSQ:
    case X86_INS_LODSB: case X86_INS_LODSW: case X86_INS_LODSD: case X86_INS_LODSQ:
    case X86_INS_SCASB: case X86_INS_SCASW: case X86_INS_SCASD: case X86_INS_SCASQ:
    case X86_INS_CMPSB: case X86_INS_CMPSW: case X86_INS_CMPSD: case X86_INS_CMPSQ:
        return 1;
    default: return 0;
    }
}

static void add_reg(uint16_t *list, uint8_t *n, unsigned reg) {
    uint8_t i;
    for (i = 0; i < *n; i++)
        if (list[i] == reg) return;
    if (*n < RX_MAX_REGS) list[(*n)++] = (uint16_t)reg;
}

static void add_mem(rx_insn *in, unsigned base, int64_t disp, uint32_t size, int read, int write) {
    rx_memop *m;
    if (in->nmem >= RX_MAX_MEM) return;
    m = &in->mem[in->nmem++];
    memset(m, 0, sizeof *m);
    m->base = (uint16_t)base;
    m->disp = disp;
    m->size = size;
    m->read = (uint8_t)read;
    m->write = (uint8_t)write;
}

/* Stack accesses capstone 4 leaves implicit. */
static void add_stack_accesses(rx_insn *in, const cs_insn *ci) {
    const cs_x86 *x = &ci->detail->x86;
    uint32_t opsize = x->op_count ? x->operands[0].size : 8;
    if (opsize != 2) opsize = 8; /* 64-bit mode: pushes and pops are 8 bytes unless 66h */
    switch (ci->id) {
    case X86_INS_PUSH: add_mem(in, X86_REG_RSP, -(int64_t)opsize, opsize, 0, 1); break;
    case X86_INS_PUSHFQ: case X86_INS_PUSHF: case X86_INS_PUSHFD:
        opsize = ci->id == X86_INS_PUSHF ? 2 : 8;
        add_mem(in, X86_REG_RSP, -(int64_t)opsize, opsize, 0, 1);
        break;
    case X86_INS_CALL: add_mem(in, X86_REG_RSP, -8, 8, 0, 1); break;
    case X86_INS_POP: add_mem(in, X86_REG_RSP, 0, opsize, 1, 0); break;
    case X86_INS_POPFQ: case X86_INS_POPF: case X86_INS_POPFD:
        add_mem(in, X86_REG_RSP, 0, ci->id == X86_INS_POPF ? 2 : 8, 1, 0);
        break;
    case X86_INS_RET: add_mem(in, X86_REG_RSP, 0, 8, 1, 0); break;
    case X86_INS_LEAVE: add_mem(in, X86_REG_RBP, 0, 8, 1, 0); break;
    default: break;
    }
}

static void decode_memory(rx_insn *in, const cs_insn *ci) {
    const cs_x86 *x = &ci->detail->x86;
    uint8_t i, j;
    if (memory_not_recorded(ci->id)) return;
    for (i = 0; i < x->op_count; i++) {
        const cs_x86_op *op = &x->operands[i];
        rx_memop *m;
        if (op->type != X86_OP_MEM || in->nmem >= RX_MAX_MEM) continue;
        if (is_vector_reg(op->mem.index)) continue; /* gathers/scatters: one address per lane */
        m = &in->mem[in->nmem++];
        m->seg = (uint16_t)op->mem.segment;
        m->base = (uint16_t)op->mem.base;
        m->index = (uint16_t)op->mem.index;
        m->scale = op->mem.scale;
        m->disp = op->mem.disp;
        m->size = op->size;
        m->read = (op->access & CS_AC_READ) != 0;
        m->write = (op->access & CS_AC_WRITE) != 0 || (is_exchange(ci->id) && i == 0);
        if (!m->read && !m->write) m->read = 1;
        for (j = 0; j < in->nreads; j++) { /* address registers get operand_usage base/index */
            if (in->reads[j] == m->base) in->read_roles[j] |= FRAMES_VAL_BASE;
            if (in->reads[j] == m->index) in->read_roles[j] |= FRAMES_VAL_INDEX;
        }
    }
}

static void decode_syscall_regs(rx_insn *in) {
    static const uint16_t args[7] = {X86_REG_RAX, X86_REG_RDI, X86_REG_RSI, X86_REG_RDX,
                                     X86_REG_R10, X86_REG_R8, X86_REG_R9};
    unsigned i;
    for (i = 0; i < 7; i++) add_reg(in->reads, &in->nreads, args[i]);
    add_reg(in->writes, &in->nwrites, X86_REG_RAX);
    add_reg(in->writes, &in->nwrites, X86_REG_RCX);
    add_reg(in->writes, &in->nwrites, X86_REG_R11);
}

/* The bit (rec_gpr order) of the full GPR or RFLAGS reg belongs to, 0 for others. */
static uint32_t gpr_bit(unsigned reg) {
    unsigned full = full_reg(reg);
    if (!full) return 0;
    if (full == X86_REG_EFLAGS) return 1u << (REC_NGPR - 1);
    return 1u << regs[full].idx;
}

static void fill(rx_insn *in, const cs_insn *ci, csh h) {
    cs_regs rr, ww;
    uint8_t nr = 0, nw = 0, i;
    const cs_x86 *x = &ci->detail->x86;
    memset(in, 0, sizeof *in);
    in->pc = ci->address;
    in->len = (uint8_t)ci->size;
    memcpy(in->bytes, ci->bytes, ci->size);
    in->addr32 = x->addr_size == 4;
    if (cs.regs_access(h, ci, rr, &nr, ww, &nw) == CS_ERR_OK) {
        for (i = 0; i < nr; i++) add_reg(in->reads, &in->nreads, rr[i]);
        for (i = 0; i < nw; i++) add_reg(in->writes, &in->nwrites, ww[i]);
    }
    if (ci->id == X86_INS_SYSCALL) {
        in->kind = RX_SYSCALL;
        decode_syscall_regs(in);
    } else if (ci->id == X86_INS_INT && x->op_count == 1 && x->operands[0].imm == 0x80) {
        in->kind = RX_INT80;
    } else if (ci->id == X86_INS_INT3) {
        in->kind = RX_INT3;
    }
    in->rep = (x->prefix[0] == X86_PREFIX_REP || x->prefix[0] == X86_PREFIX_REPNE) && is_string_op(ci->id);
    decode_memory(in, ci);
    add_stack_accesses(in, ci);
    for (i = 0; i < in->nwrites; i++) in->gpr_writes |= gpr_bit(in->writes[i]);
    for (i = 0; i < in->nreads; i++) /* written whole (rx_reg_value): 8 bytes of RAX, RFLAGS */
        if (full_reg(in->reads[i]) == in->reads[i]) in->gpr_reads |= gpr_bit(in->reads[i]);
}

const rx_insn *rx_decode(rx_decoder *d, uint64_t pc, const uint8_t *bytes, size_t n) {
    size_t slot = (size_t)((pc ^ (pc >> CACHE_BITS)) & (((size_t)1 << CACHE_BITS) - 1));
    rx_insn *in = &d->cache[slot];
    const uint8_t *code = bytes;
    uint64_t addr = pc;
    size_t left = n;
    if (d->valid[slot] && in->pc == pc && in->len <= n && !memcmp(in->bytes, bytes, in->len)) return in;
    if (!cs.disasm_iter(d->h, &code, &left, &addr, d->insn)) {
        d->valid[slot] = 0;
        return NULL;
    }
    fill(in, d->insn, d->h);
    d->valid[slot] = 1;
    return in;
}

#else
typedef int record_x86_unused; /* ISO C forbids an empty translation unit */
#endif
