/* frames record: trace a program by ptrace single-stepping (x86-64 Linux), one std_frame
   per executed user instruction with register and memory operand values, syscall frames,
   modload frames, threads and (on request) forked processes, through the recording API. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "record.h"

static const char record_usage[] =
    "usage: frames record [-o OUT] [--no-mem] [--follow-forks] [--sample N:M] [--no-pin]\n"
    "                     [--quiet] -- PROGRAM [ARGS...]\n"
    "       frames record --probe\n"
    "\n"
    "Runs PROGRAM under ptrace, single-stepping every user instruction of every thread, and\n"
    "writes a frames trace (x86-64: arch i386, machine 64):\n"
    "  std_frame     per instruction: address, bytes, thread id; registers read (values\n"
    "                before) and written (values after); memory read (before), memory\n"
    "                written (old value before with read = written = false, new value after)\n"
    "  syscall_frame per syscall instruction: number and the six arguments\n"
    "  modload_frame per executable mapping (at exec and after mmap/mprotect/mremap)\n"
    "  exception_frame per signal delivered (number = signal, from_addr = pc)\n"
    "\n"
    "  -o OUT            output trace (default trace.frames; - = standard output, and the\n"
    "                    program's standard output then goes to standard error)\n"
    "  --no-mem          no memory operands (registers only; faster)\n"
    "  --follow-forks    also trace child processes (fork, vfork, clone without threads)\n"
    "  --sample N:M      record N instructions, skip M, repeating (per thread); skipped\n"
    "                    instructions are still stepped, syscalls always recorded\n"
    "  --no-pin          do not pin tracer and program to one CPU (pinning makes each\n"
    "                    step about 2x faster on VMs; the program sees a one-CPU mask)\n"
    "  --quiet           no summary on standard error\n"
    "  --probe           report whether this kernel honours PTRACE_SINGLEBLOCK, and exit\n"
    "\n"
    "Exit status: 0 trace written (the program's own status is reported on standard\n"
    "error), 1 the program could not be traced or the trace not written, 2 usage.\n";

#ifndef RECORD_SUPPORTED

int cmd_record(int argc, char **argv) {
    if (cli_wants_help(argc, argv)) {
        fputs(record_usage, stdout);
        return CLI_OK;
    }
#if !defined(__linux__) || !defined(__x86_64__)
    return cli_fail(CLI_DATA, "not built: the tracer needs x86-64 Linux");
#else
    return cli_fail(CLI_DATA, "not built: capstone (libcapstone-dev) was not found at build time");
#endif
}

#else

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define REC_BUFFER (64 * 1024)

enum { OPEN_NONE = 0, OPEN_REC, OPEN_SKIPPED, OPEN_DEFERRED };

typedef struct thread {
    pid_t tid;
    rp_proc *proc;
    frames_recorder *rec;
    uint8_t *buf;
    int started;            /* its first stop was seen */
    int open;               /* OPEN_*: state of the instruction being stepped */
    rx_insn insn;           /* the open instruction (the decoder cache may be reused) */
    uint8_t raw[16];
    size_t nraw;
    long syscall_no;        /* -1 unless the open instruction is a syscall */
    uint64_t mem_addr[RX_MAX_MEM];
    uint8_t mem_live[RX_MAX_MEM];
    rx_state *pre, *cur;    /* registers before the open instruction / now */
    struct thread *next;
} thread;

typedef struct tracer {
    const char *out;
    int no_mem, follow, pin, quiet;
    uint64_t sample_on, sample_off;
    frames_writer *w;
    frames_rec_shared shared;
    rx_decoder *dec;
    thread *threads, *last;
    rp_proc *procs[256];
    size_t nprocs;
    pid_t main_pid;
    int main_status, main_done;
    int failed;
    uint64_t instructions, syscalls, undecoded, signals, nthreads, nmodules, frames;
    uint64_t recorded, values;
} tracer;

/* ---------------------------------------------------------------- bookkeeping */

static rp_proc *find_proc(tracer *t, pid_t tgid) {
    size_t i;
    for (i = 0; i < t->nprocs; i++)
        if (t->procs[i]->tgid == tgid) return t->procs[i];
    return NULL;
}

static rp_proc *new_proc(tracer *t, pid_t tgid, const rp_proc *parent) {
    rp_proc *p;
    if (t->nprocs == sizeof t->procs / sizeof t->procs[0]) return NULL;
    p = (rp_proc *)calloc(1, sizeof *p);
    if (!p || rp_open(p, tgid) < 0) {
        free(p);
        return NULL;
    }
    if (parent && parent->nmods) { /* a forked child has its parent's mappings */
        p->mods = (uint64_t(*)[2])malloc(parent->nmods * sizeof *p->mods);
        if (p->mods) {
            memcpy(p->mods, parent->mods, parent->nmods * sizeof *p->mods);
            p->nmods = p->capmods = parent->nmods;
        }
    }
    t->procs[t->nprocs++] = p;
    return p;
}

static void drop_proc(tracer *t, rp_proc *p) {
    size_t i;
    if (--p->refs > 0) return;
    for (i = 0; i < t->nprocs; i++)
        if (t->procs[i] == p) t->procs[i] = t->procs[--t->nprocs];
    rp_close(p);
    free(p);
}

static pid_t tgid_of(pid_t tid) {
    char path[64], line[256];
    FILE *f;
    int tgid = -1;
    snprintf(path, sizeof path, "/proc/%d/status", (int)tid);
    if (!(f = fopen(path, "re"))) return -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "Tgid: %d", &tgid) == 1) break;
    fclose(f);
    return (pid_t)tgid;
}

static thread *find_thread(tracer *t, pid_t tid) {
    thread *th;
    for (th = t->threads; th; th = th->next)
        if (th->tid == tid) return th;
    return NULL;
}

static thread *new_thread(tracer *t, pid_t tid, rp_proc *proc) {
    thread *th = (thread *)calloc(1, sizeof *th);
    if (!th) return NULL;
    th->tid = tid;
    th->proc = proc;
    th->rec = (frames_recorder *)malloc(sizeof *th->rec);
    th->buf = (uint8_t *)malloc(REC_BUFFER);
    th->pre = (rx_state *)calloc(1, sizeof *th->pre);
    th->cur = (rx_state *)calloc(1, sizeof *th->cur);
    th->syscall_no = -1;
    if (!th->rec || !th->buf || !th->pre || !th->cur ||
        frames_rec_init(th->rec, th->buf, REC_BUFFER, frames_rec_flush_to_writer, &t->shared,
                        (uint64_t)tid) < 0) {
        free(th->rec);
        free(th->buf);
        free(th->pre);
        free(th->cur);
        free(th);
        return NULL;
    }
    if (t->no_mem) {
        uint32_t regs_only = FRAMES_VAL_REGS;
        frames_rec_filter(th->rec, &regs_only, 1);
    }
    if (t->sample_off) frames_rec_sampling(th->rec, t->sample_on, t->sample_off);
    th->pre->tid = th->cur->tid = tid;
    proc->refs++;
    th->next = t->threads;
    t->threads = th;
    t->nthreads++;
    return th;
}

static void fail_recorder(tracer *t, thread *th) {
    if (!t->failed) cli_fail(CLI_DATA, "%s: %s", t->out, frames_rec_error(th->rec)->message);
    t->failed = 1;
}

/* The open instruction will not complete (exit, execve, fault): written without a post
   list, then everything buffered is flushed. */
static void close_unfinished(tracer *t, thread *th) {
    if (th->open != OPEN_NONE) {
        t->instructions++;
        if (th->open == OPEN_DEFERRED)
            frames_rec_begin(th->rec, th->insn.pc, th->raw, th->nraw < 15 ? th->nraw : 15);
    }
    th->open = OPEN_NONE;
    if (frames_rec_finish(th->rec) < 0) fail_recorder(t, th);
}

static void remove_thread(tracer *t, thread *th) {
    thread **pp;
    close_unfinished(t, th);
    t->recorded += th->rec->stats.recorded;
    t->values += th->rec->stats.values;
    t->frames += th->rec->stats.frames;
    for (pp = &t->threads; *pp; pp = &(*pp)->next)
        if (*pp == th) {
            *pp = th->next;
            break;
        }
    if (t->last == th) t->last = NULL;
    drop_proc(t, th->proc);
    free(th->rec);
    free(th->buf);
    free(th->pre);
    free(th->cur);
    free(th);
}

/* File order = order of completion across threads: the previous thread's frames go out
   before this thread records anything. */
static void switch_to(tracer *t, thread *th) {
    if (t->last && t->last != th && frames_rec_flush(t->last->rec) < 0) fail_recorder(t, t->last);
    t->last = th;
}

/* ---------------------------------------------------------------- values */

static void record_reg(thread *th, rx_state *st, unsigned reg, uint32_t how, uint64_t next_pc) {
    uint8_t v[64];
    uint32_t attr;
    const char *name;
    size_t n = rx_reg_value(st, reg, next_pc, v, &attr, &name);
    if (n) frames_rec_reg(th->rec, attr | how, name, v, n);
}

static void record_mem(thread *th, uint32_t attr, uint64_t addr, uint32_t size) {
    uint8_t v[64];
    while (size > 0) {
        uint32_t n = size < 64 ? size : 64;
        if (rp_read(th->proc, addr, v, n) != (long)n) return; /* unmapped: nothing to record */
        frames_rec_mem(th->rec, attr, addr, v, n);
        addr += n;
        size -= n;
    }
}

static void record_syscall(tracer *t, thread *th) {
    const struct user_regs_struct *g = &th->cur->gpr;
    int64_t args[6];
    uint64_t number;
    if (th->insn.kind == RX_SYSCALL) {
        number = g->rax;
        args[0] = (int64_t)g->rdi; args[1] = (int64_t)g->rsi; args[2] = (int64_t)g->rdx;
        args[3] = (int64_t)g->r10; args[4] = (int64_t)g->r8; args[5] = (int64_t)g->r9;
    } else { /* int 0x80: the i386 system call ABI */
        number = (uint32_t)g->rax;
        args[0] = (int64_t)(uint32_t)g->rbx; args[1] = (int64_t)(uint32_t)g->rcx;
        args[2] = (int64_t)(uint32_t)g->rdx; args[3] = (int64_t)(uint32_t)g->rsi;
        args[4] = (int64_t)(uint32_t)g->rdi; args[5] = (int64_t)(uint32_t)g->rbp;
    }
    th->syscall_no = (long)number;
    t->syscalls++;
    if (frames_rec_syscall(th->rec, th->insn.pc, number, args, 6) < 0) fail_recorder(t, th);
}

/* Values before the instruction: registers read, memory read, memory about to be
   overwritten (its addresses are kept for reading the new values afterwards). */
static void record_before(tracer *t, thread *th) {
    const rx_insn *in = &th->insn;
    uint64_t next = in->pc + in->len;
    uint8_t i;
    int mem = !t->no_mem && (!in->rep || rx_rep_active(th->cur, in));
    for (i = 0; i < in->nreads; i++)
        record_reg(th, th->cur, in->reads[i], FRAMES_VAL_READ | FRAMES_VAL_BEFORE | in->read_roles[i], next);
    for (i = 0; i < in->nmem; i++) {
        const rx_memop *m = &in->mem[i];
        th->mem_live[i] = (uint8_t)mem;
        if (!mem) continue;
        th->mem_addr[i] = rx_mem_address(th->cur, in, m);
        record_mem(th, (m->read ? FRAMES_VAL_READ : 0) | (m->write ? FRAMES_VAL_WRITE : 0) |
                           FRAMES_VAL_BEFORE, th->mem_addr[i], m->size);
    }
}

static int write_listed(const rx_insn *in, unsigned full) {
    uint8_t i;
    for (i = 0; i < in->nwrites; i++)
        if (rx_full_reg(in->writes[i]) == full) return 1;
    return 0;
}

/* Values after: registers written (capstone's list, plus every GPR and RFLAGS that
   changed although capstone did not list it), memory written. */
static void record_after(tracer *t, thread *th) {
    const rx_insn *in = &th->insn;
    uint64_t next = th->cur->gpr.rip;
    uint8_t i;
    (void)t;
    for (i = 0; i < in->nwrites; i++) record_reg(th, th->cur, in->writes[i], FRAMES_VAL_WRITE | FRAMES_VAL_AFTER, next);
    for (i = 0; i < 17; i++) {
        unsigned r = rx_gprs[i];
        if (rx_gpr64(&th->pre->gpr, r) != rx_gpr64(&th->cur->gpr, r) && !write_listed(in, r))
            record_reg(th, th->cur, r, FRAMES_VAL_WRITE | FRAMES_VAL_AFTER, next);
    }
    for (i = 0; i < in->nmem; i++)
        if (th->mem_live[i] && in->mem[i].write)
            record_mem(th, FRAMES_VAL_WRITE | FRAMES_VAL_AFTER, th->mem_addr[i], in->mem[i].size);
}

/* ---------------------------------------------------------------- stepping */

static int get_regs(thread *th) {
    th->cur->xs_state = 0;
    return ptrace(PTRACE_GETREGS, th->tid, 0, &th->cur->gpr) == 0 ? 0 : -1;
}

static void swap_states(thread *th) {
    rx_state *s = th->pre;
    th->pre = th->cur;
    th->cur = s;
}

/* Open the instruction at the current pc (registers in th->cur). */
static void prepare(tracer *t, thread *th) {
    uint64_t pc = th->cur->gpr.rip;
    long n = rp_read(th->proc, pc, th->raw, sizeof th->raw);
    const rx_insn *in = n > 0 ? rx_decode(t->dec, pc, th->raw, (size_t)n) : NULL;
    int rc;
    th->nraw = n > 0 ? (size_t)n : 0;
    th->syscall_no = -1;
    if (!in) { /* capstone cannot decode it: opened once its length is known (after the step) */
        memset(&th->insn, 0, sizeof th->insn);
        th->insn.pc = pc;
        th->open = OPEN_DEFERRED;
        swap_states(th);
        return;
    }
    th->insn = *in;
    if (in->kind == RX_SYSCALL || in->kind == RX_INT80) record_syscall(t, th);
    rc = frames_rec_begin(th->rec, pc, in->bytes, in->len);
    th->open = rc > 0 ? OPEN_REC : OPEN_SKIPPED;
    if (rc > 0) {
        if (in->needs_xs) th->cur->xs_state = 0;
        record_before(t, th);
    }
    swap_states(th);
}

/* The open instruction executed: record its results (registers now in th->cur). */
static void complete(tracer *t, thread *th) {
    if (th->open == OPEN_NONE) return;
    t->instructions++;
    if (th->open == OPEN_DEFERRED) {
        uint64_t len = th->cur->gpr.rip - th->insn.pc;
        t->undecoded++;
        if (len == 0 || len > 15) len = th->nraw < 15 ? th->nraw : 15; /* a branch: unknown length */
        if (frames_rec_begin(th->rec, th->insn.pc, th->raw, (size_t)len) > 0) {
            th->open = OPEN_REC;
            record_after(t, th); /* no operand lists: the registers that changed */
        }
    } else if (th->open == OPEN_REC) {
        record_after(t, th);
    }
    th->open = OPEN_NONE;
    if (frames_rec_end(th->rec) < 0) fail_recorder(t, th);
    if (th->syscall_no == 9 || th->syscall_no == 10 || th->syscall_no == 25) /* mmap, mprotect, mremap */
        t->nmodules += (uint64_t)rp_scan_modules(th->proc, th->rec);
}

static void step(tracer *t, thread *th, int sig) {
    if (ptrace(PTRACE_SINGLESTEP, th->tid, 0, (void *)(uintptr_t)sig) < 0 && errno != ESRCH && !t->failed) {
        cli_fail(CLI_DATA, "PTRACE_SINGLESTEP %d: %s", (int)th->tid, strerror(errno));
        t->failed = 1;
    }
}

/* ---------------------------------------------------------------- signals */

enum { DISP_HANDLER, DISP_TERMINATE, DISP_KEEPS_RUNNING };

static unsigned long long status_mask(pid_t tgid, pid_t tid, const char *key) {
    char path[96], line[256];
    unsigned long long m = 0;
    size_t klen = strlen(key);
    FILE *f;
    snprintf(path, sizeof path, "/proc/%d/task/%d/status", (int)tgid, (int)tid);
    if (!(f = fopen(path, "re"))) return 0;
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, key, klen) && sscanf(line + klen, "%llx", &m) == 1) break;
    fclose(f);
    return m;
}

/* What the thread does with `sig` when we deliver it: run a handler (no instruction
   executes before the handler's first), die, or go on (ignored, blocked, or stopping). */
static int disposition(thread *th, int sig) {
    unsigned long long bit = 1ull << (sig - 1);
    if (status_mask(th->proc->tgid, th->tid, "SigBlk:") & bit) return DISP_KEEPS_RUNNING;
    if (status_mask(th->proc->tgid, th->tid, "SigCgt:") & bit) return DISP_HANDLER;
    if (status_mask(th->proc->tgid, th->tid, "SigIgn:") & bit) return DISP_KEEPS_RUNNING;
    switch (sig) {
    case SIGCHLD: case SIGURG: case SIGWINCH: case SIGCONT:
    case SIGSTOP: case SIGTSTP: case SIGTTIN: case SIGTTOU:
        return DISP_KEEPS_RUNNING;
    default: return DISP_TERMINATE;
    }
}

static int is_fault(int sig, const siginfo_t *si) {
    return (sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE || sig == SIGTRAP) &&
           si->si_code > 0 && si->si_code != SI_KERNEL;
}

/* A signal stops the thread before delivery. A fault means the open instruction did not
   complete: it is written without a post list. An asynchronous signal arrived before the
   open instruction ran: the instruction stays open if the thread goes on (signal ignored,
   blocked or stopping), else it is dropped: a handler runs first (the kernel reports its
   entry as a SIGTRAP stop before any handler instruction), or the process dies. */
static void on_signal(tracer *t, thread *th, int sig) {
    siginfo_t si;
    int disp;
    memset(&si, 0, sizeof si);
    ptrace(PTRACE_GETSIGINFO, th->tid, 0, &si);
    if (get_regs(th) < 0) return;
    t->signals++;
    if (sig == SIGTRAP && si.si_code == SI_KERNEL && th->open != OPEN_NONE && th->insn.kind == RX_INT3)
        complete(t, th); /* int3 executed and raised SIGTRAP */
    else if (th->open != OPEN_NONE && is_fault(sig, &si) && th->cur->gpr.rip == th->insn.pc)
        close_unfinished(t, th);
    disp = disposition(th, sig);
    if (disp != DISP_KEEPS_RUNNING && th->open != OPEN_NONE) {
        if (th->open != OPEN_DEFERRED) frames_rec_cancel(th->rec);
        th->open = OPEN_NONE;
    }
    frames_rec_exception(th->rec, (uint64_t)sig, th->cur->gpr.rip, FRAMES_NO_POS);
    if (disp == DISP_KEEPS_RUNNING && th->open == OPEN_NONE) prepare(t, th);
    step(t, th, sig);
}

/* Single-step reports (TF trap, the step over a syscall, a handler's entry) against a
   SIGTRAP the program receives (int3, kill, tgkill). */
static int is_step_report(const siginfo_t *si) {
    return si->si_code > 0 ? si->si_code != SI_KERNEL : si->si_code == SI_USER && si->si_pid == 0;
}

/* A SIGTRAP stop after a step can only be the program's own SIGTRAP (int3, or one sent
   to it, delivered before the open instruction ran) if the open instruction is int3 or
   the pc did not move; otherwise PTRACE_GETSIGINFO, a syscall per step, is not needed. */
static int maybe_program_sigtrap(const thread *th) {
    if (th->open == OPEN_NONE) return 0;
    return th->insn.kind == RX_INT3 || th->cur->gpr.rip == th->insn.pc;
}

/* ---------------------------------------------------------------- events */

static void on_new_task(tracer *t, thread *parent, pid_t tid) {
    pid_t tgid;
    rp_proc *p;
    if (find_thread(t, tid)) return;
    tgid = tgid_of(tid);
    p = find_proc(t, tgid);
    if (!p) {
        if (!t->follow) { /* a clone() that made a process, not asked for */
            ptrace(PTRACE_DETACH, tid, 0, 0);
            return;
        }
        p = new_proc(t, tgid, parent ? parent->proc : NULL);
        if (!p) {
            ptrace(PTRACE_DETACH, tid, 0, 0);
            return;
        }
    }
    new_thread(t, tid, p);
}

static void on_exec(tracer *t, thread *th) {
    unsigned long former = 0;
    ptrace(PTRACE_GETEVENTMSG, th->tid, 0, &former);
    if ((pid_t)former != th->tid) { /* a non-leader thread exec'd: it continues as the leader */
        thread *old = find_thread(t, (pid_t)former);
        if (old) remove_thread(t, old);
    }
    close_unfinished(t, th); /* execve: its results are not in this image */
    rp_reset_modules(th->proc);
    if (rp_reopen(th->proc) < 0 && !t->failed) { /* /proc/PID/mem of the old image is dead */
        cli_fail(CLI_DATA, "cannot open /proc/%d/mem: %s", (int)th->proc->tgid, strerror(errno));
        t->failed = 1;
    }
    t->nmodules += (uint64_t)rp_scan_modules(th->proc, th->rec);
    /* the stop is inside execve: this step only returns from it and reports a step
       without executing an instruction; the first one is opened at that report */
    step(t, th, 0);
}

static void on_exited(tracer *t, thread *th, int status) {
    if (th->tid == t->main_pid) {
        t->main_status = status;
        t->main_done = 1;
    }
    remove_thread(t, th);
}

static void on_stop(tracer *t, thread *th, int status) {
    int sig = WSTOPSIG(status), event = status >> 16;
    if (event == PTRACE_EVENT_CLONE || event == PTRACE_EVENT_FORK || event == PTRACE_EVENT_VFORK) {
        unsigned long child = 0;
        if (ptrace(PTRACE_GETEVENTMSG, th->tid, 0, &child) == 0) on_new_task(t, th, (pid_t)child);
        step(t, th, 0); /* the syscall instruction completes later */
    } else if (event == PTRACE_EVENT_EXEC) {
        on_exec(t, th);
    } else if (event) {
        step(t, th, 0);
    } else if (!th->started) {
        th->started = 1;
        if (get_regs(th) == 0) {
            prepare(t, th);
            step(t, th, sig == SIGSTOP ? 0 : sig);
        }
    } else if (sig == SIGTRAP) {
        siginfo_t si;
        if (get_regs(th) < 0) return;
        if (maybe_program_sigtrap(th)) {
            memset(&si, 0, sizeof si);
            ptrace(PTRACE_GETSIGINFO, th->tid, 0, &si);
            if (!is_step_report(&si)) {
                on_signal(t, th, sig);
                return;
            }
        }
        complete(t, th);
        prepare(t, th);
        step(t, th, 0);
    } else {
        on_signal(t, th, sig);
    }
}

static volatile sig_atomic_t interrupted;

static void on_interrupt(int sig) { interrupted = sig; }

/* SIGINT, SIGTERM, SIGHUP to the tracer: kill the program, finish the trace. */
static void catch_interrupts(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_interrupt; /* no SA_RESTART: waitpid returns EINTR */
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
}

static void kill_all(tracer *t) {
    size_t i;
    for (i = 0; i < t->nprocs; i++) kill(t->procs[i]->tgid, SIGKILL);
}

static void trace_loop(tracer *t) {
    int status, killed = 0;
    pid_t pid;
    while (t->threads && !t->failed) {
        thread *th;
        if (interrupted && !killed) {
            cli_warn("interrupted by signal %d: killing the program, finishing the trace", (int)interrupted);
            kill_all(t);
            killed = 1;
        }
        pid = waitpid(-1, &status, __WALL);
        if (pid < 0) {
            if (errno == EINTR) continue;
            break;
        }
        th = find_thread(t, pid);
        if (!th) {
            if (WIFSTOPPED(status)) { /* a new task reported before its creator's event */
                on_new_task(t, NULL, pid);
                th = find_thread(t, pid);
            }
            if (!th) continue;
        }
        switch_to(t, th);
        if (WIFEXITED(status) || WIFSIGNALED(status)) on_exited(t, th, status);
        else if (WIFSTOPPED(status)) on_stop(t, th, status);
    }
    if (t->failed) kill_all(t);
    while (t->threads) remove_thread(t, t->threads);
}

/* ---------------------------------------------------------------- setup */

static int find_program(const char *name, char *out, size_t cap) {
    const char *path = getenv("PATH"), *p;
    if (strchr(name, '/')) {
        snprintf(out, cap, "%s", name);
        return access(out, X_OK);
    }
    if (!path) path = "/usr/local/bin:/usr/bin:/bin";
    for (p = path;; p = strchr(p, ':') + 1) {
        size_t len = strchr(p, ':') ? (size_t)(strchr(p, ':') - p) : strlen(p);
        snprintf(out, cap, "%.*s/%s", (int)len, len ? p : ".", name);
        if (access(out, X_OK) == 0) return 0;
        if (!strchr(p, ':')) break;
    }
    return -1;
}

/* Start the program stopped at its first instruction (after execve). */
static pid_t spawn(tracer *t, const char *path, char **argv) {
    int fds[2], err = 0, status;
    long opts = PTRACE_O_TRACECLONE | PTRACE_O_TRACEEXEC | PTRACE_O_EXITKILL;
    pid_t pid;
    if (pipe2(fds, O_CLOEXEC) < 0) return -1;
    pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        close(fds[0]);
        if (!strcmp(t->out, "-")) dup2(2, 1);
        ptrace(PTRACE_TRACEME, 0, 0, 0);
        raise(SIGSTOP);
        execv(path, argv);
        err = errno;
        if (write(fds[1], &err, sizeof err) < 0) _exit(127);
        _exit(127);
    }
    close(fds[1]);
    if (t->follow) opts |= PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK;
    if (waitpid(pid, &status, 0) != pid || !WIFSTOPPED(status) ||
        ptrace(PTRACE_SETOPTIONS, pid, 0, (void *)opts) < 0 || ptrace(PTRACE_CONT, pid, 0, 0) < 0 ||
        waitpid(pid, &status, 0) != pid || !WIFSTOPPED(status) ||
        status >> 8 != (SIGTRAP | PTRACE_EVENT_EXEC << 8)) {
        if (read(fds[0], &err, sizeof err) == (ssize_t)sizeof err)
            cli_fail(CLI_DATA, "cannot execute %s: %s", path, strerror(err));
        else
            cli_fail(CLI_DATA, "cannot trace %s: %s", path, errno ? strerror(errno) : "unexpected stop");
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        close(fds[0]);
        return -1;
    }
    close(fds[0]);
    return pid;
}

static void pin_to_this_cpu(void) {
    cpu_set_t set;
    int cpu = sched_getcpu();
    if (cpu < 0) return;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    sched_setaffinity(0, sizeof set, &set); /* inherited by the program */
}

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void report(const tracer *t, const char *path, double secs) {
    int s = t->main_status;
    fprintf(stderr, "frames record: %llu instructions in %.2f s (%.0f instructions/s), %llu syscalls, "
                    "%llu thread(s), %llu module(s), %llu frames -> %s\n",
            (unsigned long long)t->instructions, secs, secs > 0 ? (double)t->instructions / secs : 0.0,
            (unsigned long long)t->syscalls, (unsigned long long)t->nthreads,
            (unsigned long long)t->nmodules, (unsigned long long)t->frames, t->out);
    if (t->undecoded)
        fprintf(stderr, "frames record: %llu instructions capstone could not decode (recorded without "
                        "operands)\n", (unsigned long long)t->undecoded);
    if (!t->main_done) return;
    if (WIFEXITED(s)) fprintf(stderr, "frames record: %s exited with status %d\n", path, WEXITSTATUS(s));
    else if (WIFSIGNALED(s)) fprintf(stderr, "frames record: %s killed by signal %d (%s)\n", path,
                                     WTERMSIG(s), strsignal(WTERMSIG(s)));
}

static int parse_args(tracer *t, int argc, char **argv, int *first) {
    int i;
    t->out = "trace.frames";
    t->pin = 1;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--")) { i++; break; }
        if (a[0] != '-') break;
        if (!strcmp(a, "-o") && i + 1 < argc) t->out = argv[++i];
        else if (!strcmp(a, "--no-mem")) t->no_mem = 1;
        else if (!strcmp(a, "--follow-forks")) t->follow = 1;
        else if (!strcmp(a, "--no-pin")) t->pin = 0;
        else if (!strcmp(a, "--quiet")) t->quiet = 1;
        else if (!strcmp(a, "--sample") && i + 1 < argc) {
            char *colon = strchr(argv[++i], ':');
            if (!colon) return cli_usage_error("--sample wants N:M");
            *colon = 0;
            if (cli_parse_u64(argv[i], &t->sample_on) || cli_parse_u64(colon + 1, &t->sample_off) ||
                t->sample_on == 0)
                return cli_usage_error("--sample wants N:M with N > 0");
        } else return cli_usage_error("unknown option '%s'", a);
    }
    if (i >= argc) return cli_usage_error("no program given");
    *first = i;
    return CLI_OK;
}

static int probe(void) {
    int r = rp_probe_singleblock();
    if (r < 0) return cli_fail(CLI_DATA, "probe failed: %s", strerror(errno));
    printf("PTRACE_SINGLEBLOCK: %s\n", r ? "honoured (stops at taken branches only)"
                                         : "not honoured (stops after every instruction, like "
                                           "PTRACE_SINGLESTEP)");
    return CLI_OK;
}

int cmd_record(int argc, char **argv) {
    tracer t;
    rp_meta meta;
    frames_writer_options o;
    frames_error err;
    char path[4096];
    int first = 0, rc;
    pid_t pid;
    thread *th;
    double t0;
    if (cli_wants_help(argc, argv)) {
        fputs(record_usage, stdout);
        return CLI_OK;
    }
    if (argc == 2 && !strcmp(argv[1], "--probe")) return probe();
    memset(&t, 0, sizeof t);
    if ((rc = parse_args(&t, argc, argv, &first)) != CLI_OK) return rc;
    if (find_program(argv[first], path, sizeof path) < 0)
        return cli_fail(CLI_DATA, "%s: program not found", argv[first]);
    if (!(t.dec = rx_open())) return cli_fail(CLI_DATA, "cannot initialise capstone");
    rp_meta_build(&meta, path, argc - first, argv + first);
    frames_writer_options_default(&o);
    o.arch = FRAMES_ARCH_I386;
    o.machine = FRAMES_MACH_X86_64;
    if (frames_writer_open_path(&t.w, t.out, &o, &meta.meta, &err) < 0) {
        rp_meta_free(&meta);
        rx_close(t.dec);
        return cli_lib_error(&err);
    }
    t.shared.writer = t.w;
    if (t.pin) pin_to_this_cpu();
    pid = spawn(&t, path, argv + first);
    if (pid > 0) {
        rp_proc *p = new_proc(&t, pid, NULL);
        t.main_pid = pid;
        th = p ? new_thread(&t, pid, p) : NULL;
        if (!th) {
            kill(pid, SIGKILL);
            t.failed = cli_fail(CLI_DATA, "out of memory");
        } else {
            catch_interrupts();
            t0 = now();
            th->started = 1;
            t.last = th;
            on_exec(&t, th);
            trace_loop(&t);
            if (!t.quiet && !t.failed) report(&t, path, now() - t0);
        }
    } else {
        t.failed = 1;
    }
    rc = frames_writer_close(t.w);
    if (rc < 0 && !t.failed) t.failed = cli_lib_error(frames_writer_error(t.w));
    rp_meta_free(&meta);
    rx_close(t.dec);
    return t.failed ? CLI_DATA : CLI_OK;
}

#endif /* RECORD_SUPPORTED */
