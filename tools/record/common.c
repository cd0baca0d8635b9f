/* common.c - what the engines of `frames record` share: the run's error reporting, the
   x86-64 register file layout and the writing of register operand lists. */
#include "record.h"

#ifdef RECORD_SUPPORTED
#include <cpuid.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* ---------------------------------------------------------------- errors */

int rec_fail(rec_run *r, const char *fmt, ...) {
    va_list ap;
    if (!r->failed && !r->silent) {
        fputs("frames record: ", stderr);
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fputc('\n', stderr);
    }
    r->failed = 1;
    return 1;
}

void rec_check(rec_run *r, frames_recorder *rec, int rc) {
    if (rc < 0 && !r->failed) rec_fail(r, "%s: %s", r->out, frames_rec_error(rec)->message);
}

static volatile sig_atomic_t interrupted;
static void on_interrupt(int sig) { interrupted = sig; }

void rec_catch_interrupts(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_interrupt; /* no SA_RESTART: waitpid and read return EINTR */
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
}

int rec_interrupted(void) { return (int)interrupted; }

/* ---------------------------------------------------------------- programs */

static const char *machine_name(unsigned m) {
    switch (m) {
    case 3: return "i386";
    case 8: return "MIPS";
    case 20: return "PowerPC";
    case 21: return "PowerPC 64";
    case 40: return "ARM";
    case 62: return "x86-64";
    case 183: return "AArch64";
    case 243: return "RISC-V";
    default: return NULL;
    }
}

/* depth: scripts whose interpreter is a script (Linux follows a few levels) */
static int x86_64_program(const char *path, char *why, size_t cap, int depth) {
    uint8_t h[256];
    ssize_t n;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(why, cap, "%s: %s", path, strerror(errno));
        return -1;
    }
    n = read(fd, h, sizeof h - 1);
    close(fd);
    if (n >= 2 && h[0] == '#' && h[1] == '!') { /* a script: its interpreter must run */
        char *p = (char *)h + 2, *end;
        h[n] = 0;
        while (*p == ' ' || *p == '\t') p++;
        for (end = p; *end && *end != ' ' && *end != '\t' && *end != '\n'; end++) {}
        *end = 0;
        if (!*p || depth > 4) {
            snprintf(why, cap, "%s: a script without a usable interpreter line", path);
            return -1;
        }
        if (access(p, X_OK) < 0) {
            snprintf(why, cap, "%s: its interpreter %s cannot be run (%s)", path, p, strerror(errno));
            return -1;
        }
        return x86_64_program(p, why, cap, depth + 1);
    }
    if (n < 20 || memcmp(h, "\177ELF", 4)) {
        snprintf(why, cap, "%s: neither an ELF executable nor a script (#!)", path);
        return -1;
    }
    {
        unsigned machine = (unsigned)h[18] | (unsigned)h[19] << 8;
        const char *name = machine_name(machine);
        if (h[4] != 2 || h[5] != 1 || machine != 62) {
            if (name && machine != 62)
                snprintf(why, cap, "%s: an ELF for %s, not x86-64: no engine here can run it", path, name);
            else if (name)
                snprintf(why, cap, "%s: a 32-bit x86-64 (x32) or big-endian ELF: no engine here can run it", path);
            else
                snprintf(why, cap, "%s: an ELF for machine %u, not x86-64: no engine here can run it", path, machine);
            return -1;
        }
    }
    return 0;
}

int rec_x86_64_program(const char *path, char *why, size_t cap) { return x86_64_program(path, why, cap, 0); }

/* ---------------------------------------------------------------- register file */

uint32_t rec_xs_offset(unsigned comp) {
    static uint32_t off[8];
    static int known;
    if (!known) {
        unsigned i, a, b, c, d;
        for (i = 2; i < 8; i++) {
            if (i == 3 || i == 4) continue; /* MPX: not read */
            __cpuid_count(0xd, i, a, b, c, d);
            off[i] = a ? b : 0;
        }
        (void)c;
        (void)d;
        known = 1;
    }
    return comp < 8 ? off[comp] : 0;
}

#define U(f) offsetof(struct user_regs_struct, f)
const size_t rec_gpr_off[REC_NGPR] = {U(rax), U(rbx), U(rcx), U(rdx), U(rsi), U(rdi), U(rbp), U(rsp), U(r8),
                                      U(r9),  U(r10), U(r11), U(r12), U(r13), U(r14), U(r15), U(eflags)};
#undef U
/* the names capstone gives them, upper-cased, as the decoded operands carry them */
const char rec_gpr_name[REC_NGPR][8] = {"RAX", "RBX", "RCX", "RDX", "RSI", "RDI", "RBP", "RSP", "R8",
                                        "R9",  "R10", "R11", "R12", "R13", "R14", "R15", "RFLAGS"};

/* ---------------------------------------------------------------- operand lists */

/* The elements of the registers nobody listed, prepared once: every GPR and RFLAGS read
   before (the whole state) and written after (changed, not listed); FS_BASE, GS_BASE. */
static struct {
    int made;
    frames_rec_prep before[REC_NGPR], after[REC_NGPR], fs_base, gs_base;
} gprep;

static void gpr_preps(void) {
    unsigned g;
    if (gprep.made) return;
    for (g = 0; g < REC_NGPR; g++) {
        uint32_t kind = g == REC_NGPR - 1 ? FRAMES_VAL_CTRL : FRAMES_VAL_GPR;
        frames_rec_prepare(&gprep.before[g], kind | FRAMES_VAL_READ | FRAMES_VAL_BEFORE, rec_gpr_name[g], 8, NULL);
        frames_rec_prepare(&gprep.after[g], kind | FRAMES_VAL_WRITE | FRAMES_VAL_AFTER, rec_gpr_name[g], 8, NULL);
    }
    frames_rec_prepare(&gprep.fs_base, FRAMES_VAL_CTRL | FRAMES_VAL_READ | FRAMES_VAL_BEFORE, "FS_BASE", 8, NULL);
    frames_rec_prepare(&gprep.gs_base, FRAMES_VAL_CTRL | FRAMES_VAL_READ | FRAMES_VAL_BEFORE, "GS_BASE", 8, NULL);
    gprep.made = 1;
}

static void plan_op(rec_plan *pl, unsigned reg, uint32_t how) {
    rec_op *op = &pl->ops[pl->nreads + pl->nwrites];
    if (!(op->prep = rx_reg_prep(reg, how, &op->off))) return;
    op->reg = (uint16_t)reg;
    if (how & FRAMES_VAL_WRITE) pl->nwrites++;
    else pl->nreads++;
}

size_t rec_plan_fill(rec_plan *pl, const rx_insn *in) {
    uint8_t i;
    gpr_preps();
    memset(pl, 0, sizeof *pl);
    pl->rep = in->rep;
    pl->addr32 = in->addr32;
    pl->gpr_writes = in->gpr_writes;
    pl->gpr_reads = in->gpr_reads;
    for (i = 0; i < in->nreads; i++)
        plan_op(pl, in->reads[i], FRAMES_VAL_READ | FRAMES_VAL_BEFORE | in->read_roles[i]);
    for (i = 0; i < in->nwrites; i++) plan_op(pl, in->writes[i], FRAMES_VAL_WRITE | FRAMES_VAL_AFTER);
    return sizeof *pl + (size_t)(pl->nreads + pl->nwrites) * sizeof *pl->ops;
}

/* One prepared operand: its value from its place in st (the vector state only once
   fetched), the next pc, or rx_reg_value (which may find no value: nothing recorded). */
static void plan_value(frames_recorder *rec, rx_state *st, const rec_op *op, uint64_t next_pc) {
    uint8_t v[64];
    uint32_t attr;
    const char *name;
    if (op->off < offsetof(rx_state, xs) || (op->off < REC_OP_PC && st->xs_state == 1)) {
        frames_rec_reg_prepared(rec, op->prep, (const uint8_t *)st + op->off);
    } else if (op->off == REC_OP_PC) {
        frames_rec_reg_prepared(rec, op->prep, &next_pc);
    } else if (rx_reg_value(st, op->reg, next_pc, v, &attr, &name)) {
        frames_rec_reg_prepared(rec, op->prep, v);
    }
}

void rec_plan_read(frames_recorder *rec, rx_state *st, const rec_plan *pl, uint64_t next_pc) {
    uint8_t i;
    if (!pl) return;
    for (i = 0; i < pl->nreads; i++) plan_value(rec, st, &pl->ops[i], next_pc);
}

void rec_plan_after(frames_recorder *rec, rx_state *st, const rec_plan *pl, uint32_t changed,
                    uint64_t next_pc) {
    uint8_t i;
    if (pl) {
        for (i = 0; i < pl->nwrites; i++) plan_value(rec, st, &pl->ops[pl->nreads + i], next_pc);
        changed &= ~pl->gpr_writes;
    }
    if (changed) gpr_preps();
    for (; changed; changed &= changed - 1) { /* in rec_gpr order */
        unsigned g = (unsigned)__builtin_ctz(changed);
        frames_rec_reg_prepared(rec, &gprep.after[g], (const uint8_t *)&st->gpr + rec_gpr_off[g]);
    }
}

void rec_plan_state(frames_recorder *rec, const rx_state *st, const rec_plan *pl) {
    uint32_t left = ((1u << REC_NGPR) - 1) & ~(pl ? pl->gpr_reads : 0);
    gpr_preps();
    for (; left; left &= left - 1) { /* in rec_gpr order */
        unsigned g = (unsigned)__builtin_ctz(left);
        frames_rec_reg_prepared(rec, &gprep.before[g], (const uint8_t *)&st->gpr + rec_gpr_off[g]);
    }
    frames_rec_reg_prepared(rec, &gprep.fs_base, &st->gpr.fs_base);
    frames_rec_reg_prepared(rec, &gprep.gs_base, &st->gpr.gs_base);
}

/* The same lists for an engine that does not keep plans (ptrace: a plan per step costs
   nothing next to the step). */
typedef union {
    rec_plan plan;
    uint8_t bytes[REC_PLAN_MAX];
    uint64_t align;
} plan_space;

void rec_regs_read(frames_recorder *rec, rx_state *st, const rx_insn *in, uint64_t next_pc) {
    plan_space s;
    if (!in) return;
    rec_plan_fill(&s.plan, in);
    rec_plan_read(rec, st, &s.plan, next_pc);
}

void rec_regs_after(frames_recorder *rec, rx_state *st, const rx_insn *in, uint32_t changed,
                    uint64_t next_pc) {
    plan_space s;
    if (in) rec_plan_fill(&s.plan, in);
    rec_plan_after(rec, st, in ? &s.plan : NULL, changed, next_pc);
}

void rec_regs_state(frames_recorder *rec, const rx_state *st, const rx_insn *in) {
    plan_space s;
    if (in) rec_plan_fill(&s.plan, in);
    rec_plan_state(rec, st, in ? &s.plan : NULL);
}

#else
typedef int record_common_unused; /* ISO C forbids an empty translation unit */
#endif
