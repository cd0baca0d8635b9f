/* engine_ptrace.c - the ptrace engine of `frames record`: single-steps every thread of
   the program (and, with --follow-forks, of its children), one recorder per thread, values
   before and after each instruction (capstone decodes its operands), syscalls, modules,
   signals, exec, clones and forks. */
#include "record.h"

#ifdef RECORD_HAVE_CAPSTONE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"

#define REC_BUFFER (64 * 1024)

/* State of the instruction a thread is being stepped over. */
enum { OPEN_NONE = 0, OPEN_REC, OPEN_SKIPPED, OPEN_DEFERRED };

/* A traced thread with its own recorder. */
typedef struct rt_thread {
    pid_t tid;
    rp_proc *proc;
    frames_recorder *rec;
    uint8_t *buf;
    int started;            /* its first stop was seen */
    int open;               /* OPEN_*: state of the instruction being stepped */
    int whole;              /* its next recorded instruction carries the whole state */
    rx_insn insn;           /* the open instruction (the decoder cache may be reused) */
    uint8_t raw[16];
    size_t nraw;
    long syscall_no;        /* -1 unless the open instruction is a syscall */
    uint64_t mem_addr[RX_MAX_MEM];
    uint8_t mem_live[RX_MAX_MEM];
    rx_state *pre, *cur;    /* registers before the open instruction / now */
    struct rt_thread *next;
} rt_thread;

/* The engine's state: threads and processes of the run r. */
typedef struct rt_tracer {
    rec_run *r;
    rt_thread *threads, *last;
    rp_proc *procs[256];
    size_t nprocs;
} rt_tracer;

/* ---------------------------------------------------------------- bookkeeping */

static rp_proc *find_proc(rt_tracer *t, pid_t tgid) {
    size_t i;
    for (i = 0; i < t->nprocs; i++)
        if (t->procs[i]->tgid == tgid) return t->procs[i];
    return NULL;
}

static rp_proc *rt_new_proc(rt_tracer *t, pid_t tgid, const rp_proc *parent) {
    rp_proc *p;
    if (t->nprocs == sizeof t->procs / sizeof t->procs[0]) return NULL;
    p = (rp_proc *)calloc(1, sizeof *p);
    if (!p || rp_open(p, tgid) < 0) {
        free(p);
        return NULL;
    }
    if (parent) rp_ranges_copy(&p->mods, &parent->mods);   /* a forked child has its parent's mappings */
    t->procs[t->nprocs++] = p;
    return p;
}

static void drop_proc(rt_tracer *t, rp_proc *p) {
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

static rt_thread *find_thread(rt_tracer *t, pid_t tid) {
    rt_thread *th;
    for (th = t->threads; th; th = th->next)
        if (th->tid == tid) return th;
    return NULL;
}

static rt_thread *rt_new_thread(rt_tracer *t, pid_t tid, rp_proc *proc) {
    rt_thread *th = (rt_thread *)calloc(1, sizeof *th);
    if (!th) return NULL;
    th->tid = tid;
    th->proc = proc;
    th->rec = (frames_recorder *)malloc(sizeof *th->rec);
    th->buf = (uint8_t *)malloc(REC_BUFFER);
    th->pre = (rx_state *)calloc(1, sizeof *th->pre);
    th->cur = (rx_state *)calloc(1, sizeof *th->cur);
    th->syscall_no = -1;
    th->whole = 1;
    if (!th->rec || !th->buf || !th->pre || !th->cur ||
        frames_rec_init(th->rec, th->buf, REC_BUFFER, frames_rec_flush_to_writer, &t->r->shared,
                        (uint64_t)tid) < 0) {
        free(th->rec);
        free(th->buf);
        free(th->pre);
        free(th->cur);
        free(th);
        return NULL;
    }
    if (t->r->no_mem) {
        uint32_t regs_only = FRAMES_VAL_REGS;
        frames_rec_filter(th->rec, &regs_only, 1);
    }
    if (t->r->sample_off) frames_rec_sampling(th->rec, t->r->sample_on, t->r->sample_off);
    th->pre->tid = th->cur->tid = tid;
    proc->refs++;
    th->next = t->threads;
    t->threads = th;
    t->r->nthreads++;
    return th;
}

static void fail_recorder(rt_tracer *t, rt_thread *th) { rec_check(t->r, th->rec, -1); }

/* The open instruction will not complete (exit, execve, fault): written without a post
   list, then everything buffered is flushed. */
static void close_unfinished(rt_tracer *t, rt_thread *th) {
    if (th->open != OPEN_NONE) {
        t->r->instructions++;
        if (th->open == OPEN_DEFERRED)
            frames_rec_begin(th->rec, th->insn.pc, th->raw, th->nraw < 15 ? th->nraw : 15);
    }
    th->open = OPEN_NONE;
    if (frames_rec_finish(th->rec) < 0) fail_recorder(t, th);
}

static void remove_thread(rt_tracer *t, rt_thread *th) {
    rt_thread **pp;
    close_unfinished(t, th);
    t->r->recorded += th->rec->stats.recorded;
    t->r->values += th->rec->stats.values;
    t->r->frames += th->rec->stats.frames;
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
static void switch_to(rt_tracer *t, rt_thread *th) {
    if (t->last && t->last != th && frames_rec_flush(t->last->rec) < 0) fail_recorder(t, t->last);
    t->last = th;
}

/* ---------------------------------------------------------------- values */

static void record_mem(rt_thread *th, uint32_t attr, uint64_t addr, uint32_t size) {
    uint8_t v[64];
    while (size > 0) {
        uint32_t n = size < 64 ? size : 64;
        if (rp_read(th->proc, addr, v, n) != (long)n) return; /* unmapped: nothing to record */
        frames_rec_mem(th->rec, attr, addr, v, n);
        addr += n;
        size -= n;
    }
}

static void record_syscall(rt_tracer *t, rt_thread *th) {
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
    t->r->syscalls++;
    if (frames_rec_syscall(th->rec, th->insn.pc, number, args, 6) < 0) fail_recorder(t, th);
}

/* Values before the instruction: registers read, memory read, memory about to be
   overwritten (its addresses are kept for reading the new values afterwards). */
static void record_before(rt_tracer *t, rt_thread *th) {
    const rx_insn *in = &th->insn;
    uint64_t next = in->pc + in->len;
    uint8_t i;
    int mem = !t->r->no_mem && (!in->rep || rx_rep_active(th->cur, in));
    rec_regs_read(th->rec, th->cur, in, next);
    for (i = 0; i < in->nmem; i++) {
        const rx_memop *m = &in->mem[i];
        th->mem_live[i] = (uint8_t)mem;
        if (!mem) continue;
        th->mem_addr[i] = rx_mem_address(th->cur, in, m);
        record_mem(th, (m->read ? FRAMES_VAL_READ : 0) | (m->write ? FRAMES_VAL_WRITE : 0) |
                           FRAMES_VAL_BEFORE, th->mem_addr[i], m->size);
    }
}

/* Values after: registers written (capstone's list, plus every GPR and RFLAGS that
   changed although capstone did not list it), memory written. */
static void record_after(rt_tracer *t, rt_thread *th) {
    const rx_insn *in = &th->insn;
    uint32_t changed = 0;
    uint8_t i;
    (void)t;
    for (i = 0; i < REC_NGPR; i++)
        if (rec_gpr(&th->pre->gpr, i) != rec_gpr(&th->cur->gpr, i)) changed |= 1u << i;
    rec_regs_after(th->rec, th->cur, in, changed, th->cur->gpr.rip);
    for (i = 0; i < in->nmem; i++)
        if (th->mem_live[i] && in->mem[i].write)
            record_mem(th, FRAMES_VAL_WRITE | FRAMES_VAL_AFTER, th->mem_addr[i], in->mem[i].size);
}

/* ---------------------------------------------------------------- stepping */

static int get_regs(rt_thread *th) {
    th->cur->xs_state = 0;
    return ptrace(PTRACE_GETREGS, th->tid, 0, &th->cur->gpr) == 0 ? 0 : -1;
}

static void swap_states(rt_thread *th) {
    rx_state *s = th->pre;
    th->pre = th->cur;
    th->cur = s;
}

/* Open the instruction at the current pc (registers in th->cur). */
static void prepare(rt_tracer *t, rt_thread *th) {
    uint64_t pc = th->cur->gpr.rip;
    long n = rp_read(th->proc, pc, th->raw, sizeof th->raw);
    const rx_insn *in = n > 0 ? rx_decode(t->r->dec, pc, th->raw, (size_t)n) : NULL;
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
    if (rc > 0) record_before(t, th); /* vector registers are fetched on first use */
    if (rc > 0 && th->whole) rec_regs_state(th->rec, th->cur, in);
    th->whole = rc <= 0; /* after a stretch not recorded: again */
    swap_states(th);
}

/* The open instruction executed: record its results (registers now in th->cur). */
static void complete(rt_tracer *t, rt_thread *th) {
    if (th->open == OPEN_NONE) return;
    t->r->instructions++;
    if (th->open == OPEN_DEFERRED) {
        uint64_t len = th->cur->gpr.rip - th->insn.pc;
        t->r->undecoded++;
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
        t->r->nmodules += (uint64_t)rp_scan_modules(th->proc, th->rec);
    if (th->syscall_no == 158) th->whole = 1; /* arch_prctl: FS_BASE or GS_BASE may be new */
}

static void step(rt_tracer *t, rt_thread *th, int sig) {
    if (ptrace(PTRACE_SINGLESTEP, th->tid, 0, (void *)(uintptr_t)sig) < 0 && errno != ESRCH)
        rec_fail(t->r, "PTRACE_SINGLESTEP %d: %s", (int)th->tid, strerror(errno));
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
static int disposition(rt_thread *th, int sig) {
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
static void on_signal(rt_tracer *t, rt_thread *th, int sig) {
    siginfo_t si;
    int disp;
    memset(&si, 0, sizeof si);
    ptrace(PTRACE_GETSIGINFO, th->tid, 0, &si);
    if (get_regs(th) < 0) return;
    t->r->signals++;
    if (sig == SIGTRAP && si.si_code == SI_KERNEL && th->open != OPEN_NONE && th->insn.kind == RX_INT3)
        complete(t, th); /* int3 executed and raised SIGTRAP */
    else if (th->open != OPEN_NONE && is_fault(sig, &si) && th->cur->gpr.rip == th->insn.pc)
        close_unfinished(t, th);
    disp = disposition(th, sig);
    if (disp != DISP_KEEPS_RUNNING && th->open != OPEN_NONE) {
        if (th->open != OPEN_DEFERRED) frames_rec_cancel(th->rec);
        th->open = OPEN_NONE;
    }
    /* a signal the thread goes on past (ignored, blocked, SIGCHLD by default) changes
       nothing the trace shows: not an exception, as in the Valgrind engine, which sees
       only signals delivered to a handler or ending the process */
    if (disp != DISP_KEEPS_RUNNING) frames_rec_exception(th->rec, (uint64_t)sig, th->cur->gpr.rip, FRAMES_NO_POS);
    if (disp == DISP_HANDLER) th->whole = 1; /* the kernel set the handler's registers */
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
static int maybe_program_sigtrap(const rt_thread *th) {
    if (th->open == OPEN_NONE) return 0;
    return th->insn.kind == RX_INT3 || th->cur->gpr.rip == th->insn.pc;
}

/* ---------------------------------------------------------------- events */

static void on_new_task(rt_tracer *t, rt_thread *parent, pid_t tid) {
    pid_t tgid;
    rp_proc *p;
    if (find_thread(t, tid)) return;
    tgid = tgid_of(tid);
    p = find_proc(t, tgid);
    if (!p) {
        if (!t->r->follow) { /* a clone() that made a process, not asked for */
            ptrace(PTRACE_DETACH, tid, 0, 0);
            return;
        }
        p = rt_new_proc(t, tgid, parent ? parent->proc : NULL);
        if (!p) {
            ptrace(PTRACE_DETACH, tid, 0, 0);
            return;
        }
    }
    rt_new_thread(t, tid, p);
}

static void rt_on_exec(rt_tracer *t, rt_thread *th) {
    unsigned long former = 0;
    ptrace(PTRACE_GETEVENTMSG, th->tid, 0, &former);
    if ((pid_t)former != th->tid) { /* a non-leader thread exec'd: it continues as the leader */
        rt_thread *old = find_thread(t, (pid_t)former);
        if (old) remove_thread(t, old);
    }
    close_unfinished(t, th); /* execve: its results are not in this image */
    th->whole = 1;
    rp_reset_modules(th->proc);
    if (rp_reopen(th->proc) < 0) /* /proc/PID/mem of the old image is dead */
        rec_fail(t->r, "cannot open /proc/%d/mem: %s", (int)th->proc->tgid, strerror(errno));
    t->r->nmodules += (uint64_t)rp_scan_modules(th->proc, th->rec);
    /* the stop is inside execve: this step only returns from it and reports a step
       without executing an instruction; the first one is opened at that report */
    step(t, th, 0);
}

static void on_exited(rt_tracer *t, rt_thread *th, int status) {
    if (th->tid == t->r->main_pid) {
        t->r->main_status = status;
        t->r->main_done = 1;
    }
    remove_thread(t, th);
}

static void on_stop(rt_tracer *t, rt_thread *th, int status) {
    int sig = WSTOPSIG(status), event = status >> 16;
    if (event == PTRACE_EVENT_CLONE || event == PTRACE_EVENT_FORK || event == PTRACE_EVENT_VFORK) {
        unsigned long child = 0;
        if (ptrace(PTRACE_GETEVENTMSG, th->tid, 0, &child) == 0) on_new_task(t, th, (pid_t)child);
        step(t, th, 0); /* the syscall instruction completes later */
    } else if (event == PTRACE_EVENT_EXEC) {
        rt_on_exec(t, th);
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

static void kill_all(rt_tracer *t) {
    size_t i;
    for (i = 0; i < t->nprocs; i++) kill(t->procs[i]->tgid, SIGKILL);
}

static void rt_loop(rt_tracer *t) {
    int status, killed = 0;
    pid_t pid;
    while (t->threads && !t->r->failed) {
        rt_thread *th;
        if (rec_interrupted() && !killed) {
            cli_warn("interrupted by signal %d: killing the program, finishing the trace", rec_interrupted());
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
}

/* ---------------------------------------------------------------- the engine */

/* Start the program stopped at its first instruction (after execve). */
static pid_t spawn(rt_tracer *t, const char *path, char **argv) {
    int fds[2], err = 0, status;
    long opts = PTRACE_O_TRACECLONE | PTRACE_O_TRACEEXEC | PTRACE_O_EXITKILL;
    pid_t pid;
    if (pipe2(fds, O_CLOEXEC) < 0) return -1;
    pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        close(fds[0]);
        if (!strcmp(t->r->out, "-")) dup2(2, 1);
        ptrace(PTRACE_TRACEME, 0, 0, 0);
        raise(SIGSTOP);
        execv(path, argv);
        err = errno;
        if (write(fds[1], &err, sizeof err) < 0) _exit(127);
        _exit(127);
    }
    close(fds[1]);
    if (t->r->follow) opts |= PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK;
    if (waitpid(pid, &status, 0) != pid || !WIFSTOPPED(status) ||
        ptrace(PTRACE_SETOPTIONS, pid, 0, (void *)opts) < 0 || ptrace(PTRACE_CONT, pid, 0, 0) < 0 ||
        waitpid(pid, &status, 0) != pid || !WIFSTOPPED(status) ||
        status >> 8 != (SIGTRAP | PTRACE_EVENT_EXEC << 8)) {
        if (read(fds[0], &err, sizeof err) == (ssize_t)sizeof err)
            rec_fail(t->r, "cannot execute %s: %s", path, strerror(err));
        else
            rec_fail(t->r, "cannot trace %s: %s", path, errno ? strerror(errno) : "unexpected stop");
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

static int pt_available(char *why, size_t cap) {
    (void)why, (void)cap;
    return 0;
}

static void *pt_start(rec_run *r, const char *path, int argc, char **argv) {
    rt_tracer *t = (rt_tracer *)calloc(1, sizeof *t);
    rt_thread *th;
    rp_proc *p;
    pid_t pid;
    (void)argc;
    if (!t) {
        rec_fail(r, "out of memory");
        return NULL;
    }
    t->r = r;
    if (r->pin) pin_to_this_cpu();
    if ((pid = spawn(t, path, argv)) < 0) {
        rec_fail(r, "cannot start %s: %s", path, strerror(errno));
        return t;
    }
    p = rt_new_proc(t, pid, NULL);
    r->main_pid = pid;
    th = p ? rt_new_thread(t, pid, p) : NULL;
    if (!th) {
        kill(pid, SIGKILL);
        rec_fail(r, "out of memory");
        return t;
    }
    rec_catch_interrupts();
    th->started = 1;
    t->last = th;
    rt_on_exec(t, th);
    return t;
}

static void pt_pump(void *state) {
    rt_tracer *t = (rt_tracer *)state;
    if (t->threads && !t->r->failed) rt_loop(t);
}

static void pt_finish(rec_run *r, void *state) {
    rt_tracer *t = (rt_tracer *)state;
    (void)r;
    if (!t) return;
    if (t->r->failed) kill_all(t);
    while (t->threads) remove_thread(t, t->threads);
    free(t);
}

const rec_engine rec_engine_ptrace = {"ptrace", 1, pt_available, rec_x86_64_program, pt_start, pt_pump, pt_finish};

#elif defined(RECORD_SUPPORTED)
#include <stdio.h>
/* Built without capstone: the engine exists, says why it cannot run, and is refused by
   cmd_record.c (needs_capstone) before start. */
static int pt_unavailable(char *why, size_t cap) {
    snprintf(why, cap, "built without capstone (libcapstone-dev)");
    return -1;
}
static void *pt_no_start(rec_run *r, const char *path, int argc, char **argv) {
    (void)path, (void)argc, (void)argv;
    rec_fail(r, "the ptrace engine was built without capstone (libcapstone-dev)");
    return NULL;
}
static void pt_no_pump(void *state) { (void)state; }
static void pt_no_finish(rec_run *r, void *state) { (void)r, (void)state; }
const rec_engine rec_engine_ptrace = {"ptrace", 1, pt_unavailable, rec_x86_64_program, pt_no_start, pt_no_pump, pt_no_finish};
#else
typedef int record_engine_ptrace_unused; /* ISO C forbids an empty translation unit */
#endif
