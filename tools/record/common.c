/* common.c - what the engines of `frames record` share: the run's error reporting, the
   x86-64 register file layout and the writing of register operand lists. */
#include "record.h"

#ifdef RECORD_SUPPORTED
#include <cpuid.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

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

static void reg_operand(frames_recorder *rec, rx_state *st, unsigned reg, uint32_t how, uint64_t next_pc) {
    uint8_t v[64];
    uint32_t attr;
    const char *name;
    size_t n = rx_reg_value(st, reg, next_pc, v, &attr, &name);
    if (n) frames_rec_reg(rec, attr | how, name, v, n);
}

void rec_regs_read(frames_recorder *rec, rx_state *st, const rx_insn *in, uint64_t next_pc) {
    uint8_t i;
    if (!in) return;
    for (i = 0; i < in->nreads; i++)
        reg_operand(rec, st, in->reads[i], FRAMES_VAL_READ | FRAMES_VAL_BEFORE | in->read_roles[i], next_pc);
}

void rec_regs_after(frames_recorder *rec, rx_state *st, const rx_insn *in, uint32_t changed,
                    uint64_t next_pc) {
    const uint32_t how = FRAMES_VAL_WRITE | FRAMES_VAL_AFTER;
    uint8_t i;
    if (in) {
        for (i = 0; i < in->nwrites; i++) reg_operand(rec, st, in->writes[i], how, next_pc);
        changed &= ~in->gpr_writes;
    }
    for (; changed; changed &= changed - 1) { /* in rec_gpr order */
        unsigned g = (unsigned)__builtin_ctz(changed);
        uint64_t v = rec_gpr(&st->gpr, g);
        frames_rec_reg(rec, (g == REC_NGPR - 1 ? FRAMES_VAL_CTRL : FRAMES_VAL_GPR) | how, rec_gpr_name[g], &v, 8);
    }
}

#else
typedef int record_common_unused; /* ISO C forbids an empty translation unit */
#endif
