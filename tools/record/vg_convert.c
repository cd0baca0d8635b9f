/* vg_convert.c - the converter of the Valgrind engine of `frames record`: the raw
   records of the frames tool (tools/record/vg/frames_vg.c; the stream: vg/vgrec.h) into
   frames through the recording API, on the other core while the program runs. The stream
   is input from another program: every field is checked before it is used. */
#include "record.h"

#ifdef RECORD_SUPPORTED
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "vg/vgrec.h"

#define RV_REC_BUFFER (256 * 1024)
/* Bounds of what a stream may create (each thread holds RV_REC_BUFFER bytes; the fuzz
   target sets smaller ones). */
#ifndef RV_MAX_THREADS
#define RV_MAX_THREADS 32768
#endif
#ifndef RV_MAX_PROCS
#define RV_MAX_PROCS 32768
#endif

/* ---------------------------------------------------------------- state */

typedef struct rv_def {
    uint64_t pc;
    uint8_t kind, len, nregs, memsize;
    uint8_t decoded;               /* BEGIN: 0 not yet, 1 planned (plan), 2 undecodable */
    uint8_t bytes[16];
    uint8_t regs[VGR_MAX_REGS][3]; /* register, byte offset, size */
    uint32_t size;                 /* bytes of a use after the gid */
    const rec_plan *plan;          /* BEGIN: its operand lists, prepared (in its process's plans) */
} rv_def;

/* Storage of a plan made without room in the process's blocks (out of memory). */
typedef union {
    rec_plan plan;
    uint8_t bytes[REC_PLAN_MAX];
    uint64_t align;
} rv_plan_space;

typedef struct rv_thread {
    uint32_t tid, pid;
    frames_recorder *rec;
    uint8_t *buf;
    int open;                    /* an instruction is open (its BEGIN was seen) */
    int recorded;                /* ... and sampled */
    int decoded;                 /* capstone decoded it (plan is valid) */
    int whole;                   /* its next recorded instruction carries the whole state */
    uint64_t pc;
    uint8_t len;
    int in_syscall, has_ret;     /* the open instruction is a syscall; it returned */
    /* A POST that came while no instruction was open (its instruction was closed when
       another process's chunk came between its records): kept, as the converter always
       did, for the close of the next instruction unless that one has a POST of its own. */
    const struct rv_proc *late_proc;
    uint32_t late_idx;           /* late_proc->defs[late_idx] (the table may move) */
    uint8_t late_vals[VGR_MAX_REGS * 32];
    uint32_t sysno;
    const rec_plan *plan;        /* its operand lists */
    rec_plan *own;               /* where its plan is when the process's blocks had no room
                                    (REC_PLAN_MAX bytes) */
    rx_state *st;                /* the register file, kept from the tool's records */
    uint64_t pre_gpr[17];        /* GPRs and RFLAGS before the open instruction ... */
    uint32_t changed;            /* ... saved when first written after its BEGIN (bits in rec_gpr order) */
    uint64_t fpreg[8];
    uint32_t ftop;
    uint64_t rd_addr;            /* a load not written yet: it may be the read half of */
    uint32_t rd_size;            /* a read-modify-write (then one READ|WRITE operand) */
    uint8_t rd_val[64];
    struct rv_thread *next;
} rv_thread;

/* The operand lists of a process's instructions (rec_plan), made when a translated
   instruction first runs and kept by its definition in blocks that never move (a
   thread's open instruction points into them while new definitions arrive): each guest
   instruction of a translation is decoded once, not at every execution, and each
   execution only copies values into prepared elements. */
#define RV_PLAN_BLOCK (64 * 1024)

typedef struct rv_block {
    struct rv_block *next;
    size_t used;
    uint64_t data[(RV_PLAN_BLOCK - 16) / 8];
} rv_block;

typedef struct rv_proc {
    uint32_t pid;
    rv_def *defs;                /* indexed by gid - VGR_GROUP_BASE */
    size_t ndefs, capdefs;
    rv_block *plans;             /* the plans of defs (the newest block first) */
    uint8_t *in;                 /* stream bytes not parsed yet */
    size_t nin, capin;
    rv_thread *cur;
    rp_ranges mods;              /* executable ranges already reported */
    int hello;                   /* its HELLO was seen (the first record of every process) */
    struct rv_proc *next;
} rv_proc;

struct rv_conv {
    rec_run *t;
    rv_proc *procs;
    rv_thread *threads, *last;
    size_t nthreads, nprocs;
    const char *bad;             /* why the stream is malformed */
    uint32_t chunk_pid;          /* the chunk being read: its process, */
    size_t chunk_left;           /* and its bytes not seen yet */
};

/* A malformed stream: why, for the message. */
#define RV_BAD(c, why) return ((c)->bad = (why), -1L)

static void rv_fail(rv_conv *c, const char *msg) { rec_fail(c->t, "%s", msg); }

static void rv_check(rv_conv *c, rv_thread *th, int rc) { rec_check(c->t, th->rec, rc); }

static void rv_state_init(rv_thread *th);
static void rv_whole_state_next(rv_conv *c, const struct rv_proc *p);

static rv_thread *rv_thread_get(rv_conv *c, uint32_t tid, uint32_t pid) {
    rv_thread *th;
    for (th = c->threads; th; th = th->next)
        if (th->tid == tid) return th;
    if (c->nthreads >= RV_MAX_THREADS) {
        c->bad = "too many threads";
        return NULL;
    }
    th = (rv_thread *)calloc(1, sizeof *th);
    if (!th) return NULL;
    th->tid = tid;
    th->pid = pid;
    th->rec = (frames_recorder *)malloc(sizeof *th->rec);
    th->buf = (uint8_t *)malloc(RV_REC_BUFFER);
    th->st = (rx_state *)calloc(1, sizeof *th->st);
    th->own = (rec_plan *)malloc(REC_PLAN_MAX);
    if (!th->rec || !th->buf || !th->st || !th->own ||
        frames_rec_init(th->rec, th->buf, RV_REC_BUFFER, frames_rec_flush_to_writer, &c->t->shared, tid) < 0) {
        free(th->rec);
        free(th->buf);
        free(th->st);
        free(th->own);
        free(th);
        return NULL;
    }
    rv_state_init(th);
    th->whole = 1;
    c->nthreads++;
    if (c->t->sample_off) frames_rec_sampling(th->rec, c->t->sample_on, c->t->sample_off);
    th->next = c->threads;
    c->threads = th;
    c->t->nthreads++;
    return th;
}

/* ---------------------------------------------------------------- instructions */

static uint32_t le32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static uint64_t le64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return v; }

/* The register file as ptrace shows it (segment selectors of a 64-bit Linux process),
   with an XSAVE image for the vector and x87 registers, so that the ptrace engine's
   operand code (x86.c) reads values the same way for both engines. */
static void rv_state_init(rv_thread *th) {
    uint64_t bv = 7; /* x87, SSE, AVX state present */
    th->st->tid = (pid_t)th->tid;
    th->st->gpr.cs = 0x33;
    th->st->gpr.ss = 0x2b;
    th->st->gpr.eflags = 0x202;
    th->st->xs_state = 1;
    memcpy(th->st->xs + RX_XS_HEADER, &bv, 8);
}

/* VEX keeps x87 registers as doubles: widen to the 80-bit format of the FXSAVE image. */
static void f64_to_f80(uint64_t d, uint8_t out[10]) {
    uint64_t frac = d & ((1ull << 52) - 1), mant = 0;
    unsigned exp = (unsigned)(d >> 52) & 0x7ff, e80 = 0;
    uint16_t top;
    if (exp == 0x7ff) {
        e80 = 0x7fff;
        mant = (1ull << 63) | (frac << 11);
    } else if (exp) {
        e80 = exp - 1023 + 16383;
        mant = (1ull << 63) | (frac << 11);
    } else if (frac) { /* denormal double: a normal extended */
        int msb = 51;
        while (!(frac >> msb)) msb--;
        e80 = (unsigned)(msb - 1074 + 16383);
        mant = frac << (63 - msb);
    }
    top = (uint16_t)(((d >> 63) << 15) | e80);
    memcpy(out, &mant, 8);
    memcpy(out + 8, &top, 2);
}

static void rv_x87_sync(rv_thread *th) {
    uint16_t fsw;
    unsigned i;
    memcpy(&fsw, th->st->xs + RX_XS_FSW, 2);
    fsw = (uint16_t)((fsw & ~0x3800u) | ((th->ftop & 7u) << 11));
    memcpy(th->st->xs + RX_XS_FSW, &fsw, 2);
    for (i = 0; i < 8; i++) f64_to_f80(th->fpreg[(th->ftop + i) & 7], th->st->xs + RX_XS_ST + 16 * i);
}

/* rec_gpr index of each VEX GPR (RAX RCX RDX RBX RSP RBP RSI RDI R8..R15), then RFLAGS */
static const uint8_t rv_vex_to_gpr[17] = {0, 2, 3, 1, 7, 6, 4, 5, 8, 9, 10, 11, 12, 13, 14, 15, 16};

/* A GPR or RFLAGS is about to be written: keep its value from before the open
   instruction (measured: saving all 17 at every BEGIN and comparing all 17 at every
   close was a tenth of the converter's time). */
static void rv_touch(rv_thread *th, unsigned vex) {
    unsigned i = rv_vex_to_gpr[vex];
    if (!(th->changed >> i & 1)) {
        th->pre_gpr[i] = rec_gpr(&th->st->gpr, i);
        th->changed |= 1u << i;
    }
}

/* Where the register file keeps the 8-byte registers of the stream: the GPRs in VEX order
   (RAX RCX RDX RBX RSP RBP RSI RDI R8..R15), RFLAGS, FS_BASE, GS_BASE. */
#define RV_GPR(f) (offsetof(rx_state, gpr) + offsetof(struct user_regs_struct, f))
static const uint16_t rv_reg8_off[VGR_GS_BASE + 1] = {
    RV_GPR(rax), RV_GPR(rcx), RV_GPR(rdx), RV_GPR(rbx), RV_GPR(rsp), RV_GPR(rbp), RV_GPR(rsi), RV_GPR(rdi),
    RV_GPR(r8), RV_GPR(r9), RV_GPR(r10), RV_GPR(r11), RV_GPR(r12), RV_GPR(r13), RV_GPR(r14), RV_GPR(r15),
    RV_GPR(eflags), RV_GPR(fs_base), RV_GPR(gs_base)};
#undef RV_GPR

/* Store one register value of a POST or REGS record into the register file. */
static void rv_set_reg(rv_thread *th, unsigned reg, const uint8_t *v, unsigned size) {
    rx_state *st = th->st;
    uint32_t hi;
    if (reg <= VGR_GS_BASE) { /* the common case: 8 bytes at a fixed place */
        if (reg <= VGR_RFLAGS) rv_touch(th, reg);
        memcpy((uint8_t *)st + rv_reg8_off[reg], v, 8);
        return;
    }
    hi = rec_xs_offset(2);
    if (reg == VGR_FTOP) {
        memcpy(&th->ftop, v, 4);
        rv_x87_sync(th);
    } else if (reg >= VGR_XMM0 && reg < VGR_XMM0 + 16) {
        memcpy(st->xs + RX_XS_XMM + 16 * (reg - VGR_XMM0), v, 16);
        if (size == 32 && hi) memcpy(st->xs + hi + 16 * (reg - VGR_XMM0), v + 16, 16);
    } else if (reg >= VGR_MM0 && reg < VGR_MM0 + 8) {
        memcpy(&th->fpreg[reg - VGR_MM0], v, 8);
        rv_x87_sync(th);
    }
}

static void rv_set_regs(rv_thread *th, const rv_def *d, const uint8_t *vals) {
    uint8_t i;
    for (i = 0; i < d->nregs; i++) {
        rv_set_reg(th, d->regs[i][0], vals, d->regs[i][2]);
        vals += d->regs[i][2];
    }
}

static void rv_late_post(rv_thread *th) {
    if (!th->late_proc) return;
    rv_set_regs(th, &th->late_proc->defs[th->late_idx], th->late_vals);
    th->late_proc = NULL;
}

/* Registers after: capstone's write list, plus every GPR and RFLAGS that changed
   although capstone did not list it (as the ptrace engine does). */
static void rv_after(rv_thread *th, uint64_t next_pc) {
    uint32_t m, changed = 0;
    for (m = th->changed; m; m &= m - 1) { /* the written ones: did they change? */
        unsigned i = (unsigned)__builtin_ctz(m);
        if (th->pre_gpr[i] != rec_gpr(&th->st->gpr, i)) changed |= 1u << i;
    }
    rec_plan_after(th->rec, th->st, th->decoded ? th->plan : NULL, changed, next_pc);
}

/* The open instruction completed (or, completed = 0, never will: exit, execve, a fault):
   apply its register writes, write its std_frame. next_pc: where the thread went on. */
static void rv_pending_read(rv_thread *th);

static void rv_close_at(rv_conv *c, rv_thread *th, int completed, uint64_t next_pc) {
    if (!th->open) return;
    rv_pending_read(th);
    th->open = 0;
    c->t->instructions++;
    rv_late_post(th);
    th->in_syscall = th->has_ret = 0;
    if (!completed) {
        rv_check(c, th, frames_rec_finish(th->rec));
        return;
    }
    if (th->recorded) rv_after(th, next_pc);
    rv_check(c, th, frames_rec_end(th->rec));
}

static void rv_close(rv_conv *c, rv_thread *th, int completed) {
    rv_close_at(c, th, completed, th->pc + th->len);
}

/* An instruction starts: registers it reads, from the register file (before it runs).
   VEX runs a rep string instruction once more than the CPU, to find the count zero
   after the last iteration; that run executes nothing and is not an instruction. */
static const rec_plan *rv_decoded(rv_conv *c, rv_proc *p, rv_def *d, rv_thread *th) {
    const rx_insn *in;
    rv_plan_space made;
    size_t n;
    rv_block *b = p->plans;
    if (d->decoded == 1) return d->plan;
    if (d->decoded == 2 || !c->t->dec) return NULL;
    if (!(in = rx_decode(c->t->dec, d->pc, d->bytes, d->len))) {
        d->decoded = 2;
        return NULL;
    }
    n = (rec_plan_fill(&made.plan, in) + 7) & ~(size_t)7;
    if (!b || b->used + n > sizeof b->data) {
        if (!(b = (rv_block *)malloc(sizeof *b))) { /* not kept: made again next time */
            memcpy(th->own, made.bytes, n);
            return th->own;
        }
        b->next = p->plans;
        b->used = 0;
        p->plans = b;
    }
    d->plan = (const rec_plan *)memcpy((uint8_t *)b->data + b->used, made.bytes, n);
    b->used += n;
    d->decoded = 1;
    return d->plan;
}

/* Forget every plan (a new image or a new process: gids start again). */
static void rv_insns_free(rv_proc *p) {
    while (p->plans) {
        rv_block *b = p->plans;
        p->plans = b->next;
        free(b);
    }
}

static void rv_begin(rv_conv *c, rv_proc *p, rv_thread *th, rv_def *d) {
    const rec_plan *in;
    uint64_t prev = th->pc;
    rv_close_at(c, th, 1, d->pc);
    in = rv_decoded(c, p, d, th);
    th->pc = d->pc;
    th->len = d->len;
    if (in && in->rep && prev == d->pc && !rx_count_active(th->st, in->addr32)) return;
    th->open = 1;
    th->recorded = frames_rec_begin(th->rec, d->pc, d->bytes, d->len) > 0;
    if (!th->recorded) {
        th->whole = 1; /* after a stretch not recorded */
        return;
    }
    th->decoded = in != NULL;
    if (!in) {
        c->t->undecoded++;
    } else {
        th->plan = in;
        rec_plan_read(th->rec, th->st, in, d->pc + d->len);
    }
    if (th->whole) rec_plan_state(th->rec, th->st, in);
    th->whole = 0;
    th->changed = 0;
}

/* An instruction that is not waiting in a syscall has completed when its thread stops
   running; a syscall completes when it returns. */
static void rv_settle(rv_conv *c, rv_thread *th) {
    if (th->open && (!th->in_syscall || th->has_ret)) rv_close(c, th, 1);
}

/* File order = order of completion across threads: the previous thread's frames go out
   before this thread records anything (as the ptrace engine does). */
static void rv_switch(rv_conv *c, rv_thread *th) {
    if (c->last && c->last != th) {
        rv_settle(c, c->last);
        rv_check(c, c->last, frames_rec_flush(c->last->rec));
    }
    c->last = th;
}

static void rv_mem(rv_thread *th, uint32_t attr, uint64_t addr, const uint8_t *v, uint32_t size);

static void rv_pending_read(rv_thread *th) {
    if (!th->rd_size) return;
    rv_mem(th, FRAMES_VAL_READ | FRAMES_VAL_BEFORE, th->rd_addr, th->rd_val, th->rd_size);
    th->rd_size = 0;
}

/* A load and then a store of the same location in one instruction (add to memory,
   xchg, lock xadd, cmpxchg) is one read-modify-write operand, as the ptrace engine
   records it: READ|WRITE before with the old value, WRITE after with the new one. */
static void rv_load(rv_thread *th, uint64_t addr, const uint8_t *v, uint32_t size) {
    rv_pending_read(th);
    if (size > sizeof th->rd_val) {
        rv_mem(th, FRAMES_VAL_READ | FRAMES_VAL_BEFORE, addr, v, size);
        return;
    }
    th->rd_addr = addr;
    th->rd_size = size;
    memcpy(th->rd_val, v, size);
}

static void rv_store(rv_thread *th, uint64_t addr, const uint8_t *old, const uint8_t *now, uint32_t size,
                     int cas) {
    uint32_t attr = FRAMES_VAL_WRITE | FRAMES_VAL_BEFORE | (cas ? FRAMES_VAL_READ : 0);
    if (th->rd_size == size && th->rd_addr == addr) {
        attr |= FRAMES_VAL_READ;
        th->rd_size = 0;
    }
    rv_pending_read(th);
    rv_mem(th, attr, addr, old, size);
    rv_mem(th, FRAMES_VAL_WRITE | FRAMES_VAL_AFTER, addr, now, size);
}

/* Values larger than 64 bytes are split into 64-byte operands at consecutive addresses. */
static void rv_mem(rv_thread *th, uint32_t attr, uint64_t addr, const uint8_t *v, uint32_t size) {
    if (!th->recorded) return;
    while (size > 0) {
        uint32_t n = size < 64 ? size : 64;
        frames_rec_mem(th->rec, attr, addr, v, n);
        addr += n;
        v += n;
        size -= n;
    }
}

/* ---------------------------------------------------------------- records */


/* The size a register's value has in the stream (0: no such register). */
static unsigned rv_reg_size(unsigned reg, unsigned size) {
    if (reg <= VGR_GS_BASE || (reg >= VGR_MM0 && reg < VGR_MM0 + 8)) return 8;
    if (reg == VGR_FTOP) return 4;
    if (reg >= VGR_XMM0 && reg < VGR_XMM0 + 16) return size == 16 || size == 32 ? size : 32;
    return 0;
}

static long rv_def_add(rv_conv *c, rv_proc *p, uint32_t gid, const uint8_t *r, size_t avail, size_t *used) {
    rv_def *d;
    size_t need;
    uint32_t i;
    if (avail < 20) return 0;
    need = 20 + (size_t)r[17] + 3u * r[18];
    if (avail < need) return 0;
    *used = need;
    if (gid < VGR_GROUP_BASE) RV_BAD(c, "a group id below the first");
    if (gid - VGR_GROUP_BASE > p->ndefs) RV_BAD(c, "a group id out of sequence");
    if (r[16] < VGR_BEGIN || r[16] > VGR_MEMRW) RV_BAD(c, "a group of unknown kind");
    if (r[17] > 15) RV_BAD(c, "an instruction longer than 15 bytes");
    if (r[18] > VGR_MAX_REGS) RV_BAD(c, "more than 48 registers in a group");
    for (i = 0; i < r[18]; i++) { /* known registers of their size */
        const uint8_t *reg = r + 20 + r[17] + 3 * i;
        if (reg[1] != 0 || rv_reg_size(reg[0], reg[2]) != reg[2]) RV_BAD(c, "a register of a wrong number or size");
    }
    gid -= VGR_GROUP_BASE;
    if (gid >= p->capdefs) {
        size_t ncap = p->capdefs ? 2 * p->capdefs : 4096;
        rv_def *nd;
        while (ncap <= gid) ncap *= 2;
        if (!(nd = (rv_def *)realloc(p->defs, ncap * sizeof *nd))) RV_BAD(c, "out of memory");
        memset(nd + p->capdefs, 0, (ncap - p->capdefs) * sizeof *nd);
        p->defs = nd;
        p->capdefs = ncap;
    }
    if (gid >= p->ndefs) p->ndefs = gid + 1;
    d = &p->defs[gid];
    d->pc = le64(r + 8);
    d->kind = r[16];
    d->len = r[17];
    d->nregs = r[18];
    d->memsize = r[19];
    d->decoded = 0;
    memcpy(d->bytes, r + 20, d->len);
    memcpy(d->regs, r + 20 + d->len, 3u * d->nregs);
    d->size = 0;
    for (i = 0; i < d->nregs; i++) d->size += d->regs[i][2];
    if (d->kind == VGR_MEMR) d->size = 8 + d->memsize;
    if (d->kind == VGR_MEMW || d->kind == VGR_MEMRW) d->size = 8 + 2u * d->memsize;
    return 1;
}

static rv_thread *rv_current(rv_conv *c, rv_proc *p) {
    if (!p->cur) p->cur = rv_thread_get(c, p->pid, p->pid);
    if (p->cur) rv_switch(c, p->cur);
    return p->cur;
}

static void rv_finish_proc_threads(rv_conv *c, rv_proc *p, int completed);

/* One use of a group. */
static void rv_group(rv_conv *c, rv_proc *p, rv_thread *th, rv_def *d, const uint8_t *v) {
    switch (d->kind) {
    case VGR_BEGIN: rv_begin(c, p, th, d); break;
    case VGR_POST:
        /* into the register file at once: the last POST of an instruction writes the
           same registers as the earlier ones (one group per instruction), so its values
           are the ones left; nothing reads the file before the instruction closes */
        if (th->open) {
            rv_set_regs(th, d, v);
            th->late_proc = NULL;
        } else {
            th->late_proc = p;
            th->late_idx = (uint32_t)(d - p->defs);
            memcpy(th->late_vals, v, d->size);
        }
        break;
    case VGR_MEMR:
        if (th->recorded) rv_load(th, le64(v), v + 8, d->memsize);
        break;
    case VGR_MEMW:
    case VGR_MEMRW:
        if (th->recorded) rv_store(th, le64(v), v + 8, v + 8 + d->memsize, d->memsize, d->kind == VGR_MEMRW);
        break;
    default: break;
    }
}

static int rv_is_fault(uint32_t sig) {
    return sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE || sig == SIGTRAP;
}

/* Parse one record at r (avail bytes). Returns its length, 0 if incomplete, -1 if bad. */
static long rv_record(rv_conv *c, rv_proc *p, const uint8_t *r, size_t avail) {
    uint32_t code;
    rv_thread *th;
    size_t used = 0;
    if (avail < 8) return 0;
    code = le32(r);
    if (!p->hello && code != VGR_HELLO) RV_BAD(c, "a process whose first record is not HELLO");
    if (code >= VGR_GROUP_BASE) {
        rv_def *d;
        if (code - VGR_GROUP_BASE >= p->ndefs) RV_BAD(c, "a group used before its definition");
        d = &p->defs[code - VGR_GROUP_BASE];
        if (!d->kind) RV_BAD(c, "a group used before its definition");
        if (avail < 4 + (size_t)d->size) return 0;
        th = p->cur; /* usually the thread of the record before */
        if ((!th || th != c->last) && !(th = rv_current(c, p))) RV_BAD(c, c->bad ? c->bad : "out of memory");
        rv_group(c, p, th, d, r + 4);
        return 4 + (long)d->size;
    }
    switch (code) {
    case VGR_DEF: {
        long rc = rv_def_add(c, p, le32(r + 4), r, avail, &used);
        return rc < 0 ? -1 : rc == 0 ? 0 : (long)used;
    }
    case VGR_THREAD:
        p->cur = rv_thread_get(c, le32(r + 4), p->pid);
        if (!p->cur) RV_BAD(c, c->bad ? c->bad : "out of memory");
        rv_switch(c, p->cur);
        return 8;
    case VGR_HELLO: {
        uint32_t parent;
        size_t i;
        rv_proc *pp;
        if (avail < 16) return 0;
        parent = le32(r + 8);
        if (le32(r + 4) != VGR_VERSION) RV_BAD(c, "a tool of another version");
        if (parent == p->pid) RV_BAD(c, "a process naming itself as its parent");
        p->hello = 1;
        if (!parent) { /* a new image (execve): the old image's translations are gone */
            rv_finish_proc_threads(c, p, 0);
            rv_whole_state_next(c, p);
            rv_insns_free(p);
            p->ndefs = 0;
            p->mods.n = 0;
            return 16;
        }
        for (pp = c->procs; pp && pp->pid != parent; pp = pp->next) {}
        /* a new process (or a pid used again): nothing of an earlier one is kept */
        rv_finish_proc_threads(c, p, 0);
        rv_whole_state_next(c, p);
        rv_insns_free(p);
        free(p->defs);
        p->defs = NULL;
        p->ndefs = p->capdefs = 0;
        rp_ranges_free(&p->mods);
        if (pp && pp->ndefs) { /* a forked child runs its parent's translations */
            p->defs = (rv_def *)malloc(pp->capdefs * sizeof *p->defs);
            if (!p->defs) RV_BAD(c, "out of memory");
            memcpy(p->defs, pp->defs, pp->capdefs * sizeof *p->defs);
            for (i = 0; i < pp->ndefs; i++) { /* decoded again here */
                p->defs[i].decoded = 0;
                p->defs[i].plan = NULL;
            }
            p->ndefs = pp->ndefs;
            p->capdefs = pp->capdefs;
        }
        if (pp && rp_ranges_copy(&p->mods, &pp->mods) < 0) RV_BAD(c, "out of memory");
        return 16;
    }
    case VGR_SYSCALL: {
        int64_t args[6];
        int i;
        if (avail < 64) return 0;
        if (!(th = rv_current(c, p))) RV_BAD(c, c->bad ? c->bad : "out of memory");
        for (i = 0; i < 6; i++) args[i] = (int64_t)le64(r + 16 + 8 * i);
        th->in_syscall = 1;
        th->has_ret = 0;
        th->sysno = le32(r + 4);
        c->t->syscalls++;
        rv_check(c, th, frames_rec_syscall(th->rec, th->open ? th->pc : le64(r + 8), le32(r + 4), args, 6));
        return 64;
    }
    case VGR_SYSRET: /* the result is in the REGS record that follows */
        if (avail < 16) return 0;
        if (!(th = rv_current(c, p))) RV_BAD(c, c->bad ? c->bad : "out of memory");
        /* Valgrind completes exit and exit_group in its wrapper; they never return */
        if (th->sysno != 60 && th->sysno != 231) th->has_ret = 1;
        if (th->sysno == 158) th->whole = 1; /* arch_prctl: FS_BASE or GS_BASE may be new */
        return 16;
    case VGR_REGS: {
        const uint8_t *q = r + 8;
        unsigned i;
        if (avail < VGR_REGS_SIZE) return 0;
        if (!(th = rv_current(c, p))) RV_BAD(c, c->bad ? c->bad : "out of memory");
        rv_late_post(th);
        for (i = 0; i < 16; i++, q += 8) rv_set_reg(th, i, q, 8);
        rv_set_reg(th, VGR_RFLAGS, q, 8);
        rv_set_reg(th, VGR_FS_BASE, q + 8, 8);
        rv_set_reg(th, VGR_GS_BASE, q + 16, 8);
        memcpy(&th->ftop, q + 24, 4);
        memcpy(th->fpreg, q + 32, 64);
        rv_x87_sync(th);
        q += 96;
        for (i = 0; i < 16; i++, q += 32) rv_set_reg(th, VGR_XMM0 + i, q, 32);
        return VGR_REGS_SIZE;
    }
    case VGR_MODLOAD: {
        uint32_t nl = le32(r + 4);
        char name[4097];
        if (nl > 4096) RV_BAD(c, "a module name longer than 4096 bytes");
        if (avail < 24 + (size_t)nl) return 0;
        if (!(th = rv_current(c, p))) RV_BAD(c, c->bad ? c->bad : "out of memory");
        memcpy(name, r + 24, nl);
        name[nl] = 0;
        if (rp_ranges_add(&p->mods, le64(r + 8), le64(r + 16)) == 0) {
            c->t->nmodules++;
            rv_check(c, th, frames_rec_modload(th->rec, name, le64(r + 8), le64(r + 16)));
        }
        return 24 + (long)nl;
    }
    case VGR_SIGNAL: {
        uint32_t sig;
        uint64_t pc;
        if (avail < 16) return 0;
        if (!(th = rv_current(c, p))) RV_BAD(c, c->bad ? c->bad : "out of memory");
        sig = le32(r + 4);
        pc = le64(r + 8);
        c->t->signals++;
        /* a fault is delivered at the faulting instruction, which did not complete */
        rv_close(c, th, !(th->open && th->pc == pc && rv_is_fault(sig) && !th->in_syscall));
        rv_check(c, th, frames_rec_exception(th->rec, sig, pc, FRAMES_NO_POS));
        th->whole = 1; /* the core set the handler's registers (a REGS record follows) */
        return 16;
    }
    case VGR_BIGMEM: {
        uint32_t how, size;
        if (avail < 24) return 0;
        how = le32(r + 4);
        size = le32(r + 16);
        if (how < VGR_MEM_READ || how > VGR_MEM_NEW) RV_BAD(c, "a memory value of unknown kind");
        if (size > VGR_MAX_BIGMEM) RV_BAD(c, "a memory value larger than 4 MiB");
        if (avail < 24 + (size_t)size) return 0;
        if (!(th = rv_current(c, p))) RV_BAD(c, c->bad ? c->bad : "out of memory");
        if (th->open) rv_pending_read(th);
        if (th->open)
            rv_mem(th, how == VGR_MEM_READ ? FRAMES_VAL_READ | FRAMES_VAL_BEFORE
                       : how == VGR_MEM_OLD ? FRAMES_VAL_WRITE | FRAMES_VAL_BEFORE
                                            : FRAMES_VAL_WRITE | FRAMES_VAL_AFTER,
                   le64(r + 8), r + 24, size);
        return 24 + (long)size;
    }
    case VGR_EXIT: /* an exit syscall never completes; another open instruction did,
                      unless a fatal signal ends the process (decided at the end) */
        if (!(th = rv_current(c, p))) RV_BAD(c, c->bad ? c->bad : "out of memory");
        if (th->in_syscall && !th->has_ret) rv_close(c, th, 0);
        rv_check(c, th, frames_rec_flush(th->rec));
        return 8;
    default: RV_BAD(c, "a record of unknown kind");
    }
}

/* Every thread of the process writes the whole state at its next instruction. */
static void rv_whole_state_next(rv_conv *c, const rv_proc *p) {
    rv_thread *th;
    for (th = c->threads; th; th = th->next)
        if (th->pid == p->pid) th->whole = 1;
}

/* Every thread of the process: its open instruction is written (completed or not), its
   frames flushed. */
static void rv_finish_proc_threads(rv_conv *c, rv_proc *p, int completed) {
    rv_thread *th;
    for (th = c->threads; th; th = th->next) {
        if (th->pid != p->pid) continue;
        if (th->open) rv_close(c, th, completed && !(th->in_syscall && !th->has_ret));
        rv_check(c, th, frames_rec_flush(th->rec));
    }
}

static rv_proc *rv_proc_get(rv_conv *c, uint32_t pid) {
    rv_proc *p;
    for (p = c->procs; p; p = p->next)
        if (p->pid == pid) return p;
    if (c->nprocs >= RV_MAX_PROCS) {
        rv_fail(c, "malformed record from the valgrind tool: too many processes");
        return NULL;
    }
    if (!(p = (rv_proc *)calloc(1, sizeof *p))) return NULL;
    c->nprocs++;
    p->pid = pid;
    p->next = c->procs;
    c->procs = p;
    return p;
}

/* Append a chunk to its process's stream and convert every complete record. */
static size_t rv_parse(rv_conv *c, rv_proc *p, const uint8_t *data, size_t n) {
    size_t pos = 0;
    while (pos < n && !c->t->failed) {
        long used = rv_record(c, p, data + pos, n - pos);
        if (used < 0) {
            rec_fail(c->t, "malformed record from the valgrind tool: %s", c->bad ? c->bad : "?");
            return pos;
        }
        if (used == 0) break;
        pos += (size_t)used;
    }
    return pos;
}

/* Records are parsed straight from the bytes given; a record cut at their end waits in
   the process's p->in, joined with the next bytes a piece at a time (never the whole of
   them copied: once the waiting record is parsed, the rest is parsed in place). */
#define RV_JOIN 4096

static int rv_keep(rv_proc *p, const uint8_t *data, size_t n) {
    if (p->nin + n > p->capin) {
        size_t ncap = p->capin ? p->capin : 1 << 16;
        uint8_t *nb;
        while (ncap < p->nin + n) ncap *= 2;
        if (!(nb = (uint8_t *)realloc(p->in, ncap))) return -1;
        p->in = nb;
        p->capin = ncap;
    }
    memcpy(p->in + p->nin, data, n);
    p->nin += n;
    return 0;
}

static int rv_feed(rv_conv *c, uint32_t pid, const uint8_t *data, size_t n) {
    rv_proc *p = rv_proc_get(c, pid);
    size_t pos;
    if (!p) return -1;
    while (n > 0 && !c->t->failed) {
        size_t take, old;
        if (p->nin == 0) { /* the usual case: records straight from the bytes, the tail kept */
            pos = rv_parse(c, p, data, n);
            if (pos == n || c->t->failed) return 0;
            return rv_keep(p, data + pos, n - pos);
        }
        old = p->nin;
        take = n < RV_JOIN ? n : RV_JOIN;
        if (rv_keep(p, data, take) < 0) return -1;
        pos = rv_parse(c, p, p->in, p->nin);
        if (pos >= old) { /* the waiting record is done; go on from the bytes given */
            p->nin = 0;
            data += pos - old;
            n -= pos - old;
        } else {
            if (pos) memmove(p->in, p->in + pos, p->nin - pos);
            p->nin -= pos;
            data += take;
            n -= take;
        }
    }
    return 0;
}

/* ---------------------------------------------------------------- the converter's interface */

rv_conv *rv_conv_new(rec_run *r) {
    rv_conv *c = (rv_conv *)calloc(1, sizeof *c);
    if (c) c->t = r;
    return c;
}

int rv_conv_started(const rv_conv *c) { return c->procs != NULL; }

/* A chunk is converted as its bytes arrive, not once it is whole: the converter works on
   bytes just read (in cache), while the tool is still writing the rest of the chunk. */
size_t rv_conv_chunks(rv_conv *c, const uint8_t *data, size_t n) {
    size_t pos = 0;
    while (pos < n && !c->t->failed) {
        size_t take;
        if (c->chunk_left == 0) {
            uint32_t len;
            if (n - pos < VGR_CHUNK_HEADER) break;
            len = le32(data + pos + 4);
            if (len > RV_MAX_CHUNK) {
                rv_fail(c, "malformed record from the valgrind tool (a chunk of more than 64 MiB)");
                break;
            }
            c->chunk_pid = le32(data + pos);
            c->chunk_left = len;
            pos += VGR_CHUNK_HEADER;
            continue;
        }
        take = n - pos < c->chunk_left ? n - pos : c->chunk_left;
        if (rv_feed(c, c->chunk_pid, data + pos, take) < 0) rv_fail(c, "out of memory");
        pos += take;
        c->chunk_left -= take;
    }
    return pos;
}

void rv_conv_end(rv_conv *c, int status) {
    rv_proc *p;
    /* killed by a signal Valgrind did not deliver to a handler (a fatal fault, SIGKILL):
       the instruction the thread was in did not complete */
    if (status != -1 && WIFSIGNALED(status) && c->last && c->last->open) {
        uint64_t pc = c->last->pc;
        rv_close(c, c->last, 0);
        rv_check(c, c->last, frames_rec_exception(c->last->rec, (uint64_t)WTERMSIG(status), pc, FRAMES_NO_POS));
    }
    for (p = c->procs; p; p = p->next) rv_finish_proc_threads(c, p, 1);
}

void rv_conv_free(rv_conv *c) {
    rv_proc *p;
    rv_thread *th;
    if (!c) return;
    while (c->threads) {
        th = c->threads;
        c->threads = th->next;
        rv_close(c, th, 0);
        rv_check(c, th, frames_rec_finish(th->rec));
        c->t->frames += th->rec->stats.frames;
        c->t->values += th->rec->stats.values;
        free(th->rec);
        free(th->buf);
        free(th->st);
        free(th->own);
        free(th);
    }
    while (c->procs) {
        p = c->procs;
        c->procs = p->next;
        free(p->defs);
        rv_insns_free(p);
        free(p->in);
        rp_ranges_free(&p->mods);
        free(p);
    }
    free(c);
}

#else
typedef int record_vg_unused; /* ISO C forbids an empty translation unit */
#endif
