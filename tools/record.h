/* record.h - internals of `frames record`, the ptrace single-stepping tracer for x86-64
   Linux (tools/cmd_record.c, record_trace.c, record_x86.c, record_proc.c). Operand decoding needs
   capstone (FRAMES_HAVE_CAPSTONE, defined by build.sh when libcapstone-dev is present). */
#ifndef FRAMES_RECORD_H
#define FRAMES_RECORD_H

#if defined(__linux__) && defined(__x86_64__) && defined(FRAMES_HAVE_CAPSTONE)
#define RECORD_SUPPORTED 1
#endif

#ifdef RECORD_SUPPORTED
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

#include "frames.h"

/* ---------------------------------------------------------------- record_x86.c */

/* Register state of a stopped thread. The vector/x87 part (XSAVE layout: legacy FXSAVE
   area, header, AVX and AVX-512 components) is fetched only when an instruction needs it. */
#define RX_XSTATE_MAX 8192
typedef struct rx_state {
    pid_t tid;
    struct user_regs_struct gpr;
    int xs_state;              /* 0 not fetched, 1 fetched, -1 unavailable */
    uint8_t xs[RX_XSTATE_MAX];
} rx_state;

/* A memory operand (explicit or an implicit stack access). */
typedef struct rx_memop {
    uint16_t seg, base, index; /* capstone register ids (0 = none) */
    int32_t scale;
    int64_t disp;
    uint32_t size;             /* bytes */
    uint8_t read, write;
} rx_memop;

enum { RX_PLAIN = 0, RX_SYSCALL, RX_INT80, RX_INT3 };

#define RX_MAX_REGS 24
#define RX_MAX_MEM 4

/* What the tracer records for one instruction, decoded once and cached by address. */
typedef struct rx_insn {
    uint64_t pc;
    uint8_t len, kind, rep, addr32;
    uint8_t bytes[16];
    uint8_t nreads, nwrites, nmem;
    uint16_t reads[RX_MAX_REGS], writes[RX_MAX_REGS];
    uint32_t read_roles[RX_MAX_REGS];  /* FRAMES_VAL_BASE / _INDEX for address registers */
    rx_memop mem[RX_MAX_MEM];
} rx_insn;

typedef struct rx_decoder rx_decoder;

/* The capstone library rx_open loads (e.g. "libcapstone.so.4"). */
const char *rx_library(void);
rx_decoder *rx_open(void);
void rx_close(rx_decoder *d);
/* Decode the instruction at pc from up to n bytes (cached; the cache entry is reused only
   if the bytes are unchanged, so self-modifying code is decoded again). NULL if capstone
   cannot decode it. */
const rx_insn *rx_decode(rx_decoder *d, uint64_t pc, const uint8_t *bytes, size_t n);

/* Value of a register (capstone id) in st: copies up to 64 bytes to out, returns the size
   (0 when the register cannot be read from a tracer: control/debug registers, ...). *attr
   gets the FRAMES_VAL_ kind and class, *name the name written into the trace. */
size_t rx_reg_value(rx_state *st, unsigned reg, uint64_t next_pc, uint8_t *out, uint32_t *attr,
                    const char **name);
/* Effective address of a memory operand of `in` in state st. */
uint64_t rx_mem_address(const rx_state *st, const rx_insn *in, const rx_memop *m);
/* For registers a decoder missed: the 16 GPRs and RFLAGS as capstone ids, and the full
   register (capstone id of the 64-bit GPR) a register belongs to, or 0. */
extern const uint16_t rx_gprs[17];
unsigned rx_full_reg(unsigned reg);
/* 64-bit value of a GPR (capstone 64-bit id) or RFLAGS from a user_regs_struct. */
uint64_t rx_gpr64(const struct user_regs_struct *g, unsigned reg);
/* XSAVE offset of the upper ymm halves (AVX component), 0 without AVX (after rx_open). */
uint32_t rx_ymm_hi_offset(void);
/* rcx (or ecx with 32-bit addressing): whether a rep string instruction accesses memory. */
int rx_rep_active(const rx_state *st, const rx_insn *in);

/* ---------------------------------------------------------------- record_proc.c */

/* Executable ranges already reported as modload frames (low, high), one list per process
   for both engines: a range is reported once, and a forked child starts with its parent's. */
typedef struct rp_ranges {
    uint64_t (*r)[2];
    size_t n, cap;
} rp_ranges;

/* rp_ranges_add: 1 when [lo, hi] was known, else remembers it and returns 0 (or -1 when
   out of memory, leaving it unknown). rp_ranges_copy: dst (empty) gets src's ranges. */
int rp_ranges_add(rp_ranges *m, uint64_t lo, uint64_t hi);
int rp_ranges_copy(rp_ranges *dst, const rp_ranges *src);
void rp_ranges_free(rp_ranges *m);

/* Memory of a traced process through /proc/PID/mem (works for any mapped page). */
typedef struct rp_proc {
    pid_t tgid;
    int memfd;
    rp_ranges mods;            /* executable ranges already reported */
    int refs;                  /* threads using it */
} rp_proc;

int rp_open(rp_proc *p, pid_t tgid);
void rp_close(rp_proc *p);
/* Open /proc/PID/mem again (after execve the old one reads nothing). */
int rp_reopen(rp_proc *p);
/* Read n bytes at addr; returns bytes read (short at the end of a mapping), -1 if none. */
long rp_read(rp_proc *p, uint64_t addr, void *buf, size_t n);
/* Report executable mappings not reported yet, through the recorder. Returns how many. */
int rp_scan_modules(rp_proc *p, frames_recorder *rec);
/* Forget the reported mappings (after execve). */
void rp_reset_modules(rp_proc *p);

/* Meta frame of the trace: tracer, target path/args/md5/stat, user, host, time. The
   strings live in `store` until rp_meta_free. */
typedef struct rp_meta {
    frames_meta meta;
    frames_bytes *args;
    char *path;
    uint8_t md5[16];
} rp_meta;
void rp_meta_build(rp_meta *m, const char *path, int argc, char **argv);
void rp_meta_free(rp_meta *m);
/* MD5 of a file (RFC 1321). Returns 0, or -1 if it cannot be read. */
int rp_md5_file(const char *path, uint8_t out[16]);

/* Does the kernel honour PTRACE_SINGLEBLOCK (stop only at taken branches)? Runs a probe
   child. Returns 1 yes, 0 no (it stops after every instruction), -1 probe failed. */
int rp_probe_singleblock(void);

/* ---------------------------------------------------------------- record_trace.c */

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
    rx_insn insn;           /* the open instruction (the decoder cache may be reused) */
    uint8_t raw[16];
    size_t nraw;
    long syscall_no;        /* -1 unless the open instruction is a syscall */
    uint64_t mem_addr[RX_MAX_MEM];
    uint8_t mem_live[RX_MAX_MEM];
    rx_state *pre, *cur;    /* registers before the open instruction / now */
    struct rt_thread *next;
} rt_thread;

enum { RT_ENGINE_DEFAULT = 0, RT_ENGINE_PTRACE, RT_ENGINE_VALGRIND };

/* The tracer: options, the shared writer, threads and processes, counters. */
typedef struct rt_tracer {
    const char *out;
    int no_mem, follow, pin, quiet;
    int engine;                /* RT_ENGINE_* */
    uint64_t sample_on, sample_off;
    frames_writer *w;
    frames_rec_shared shared;
    rx_decoder *dec;
    rt_thread *threads, *last;
    rp_proc *procs[256];
    size_t nprocs;
    pid_t main_pid;
    int main_status, main_done;
    int failed;
    uint64_t instructions, syscalls, undecoded, signals, nthreads, nmodules, frames;
    uint64_t recorded, values;
} rt_tracer;

/* Process and thread bookkeeping (the first process and thread come from cmd_record.c). */
rp_proc *rt_new_proc(rt_tracer *t, pid_t tgid, const rp_proc *parent);
rt_thread *rt_new_thread(rt_tracer *t, pid_t tid, rp_proc *proc);
/* An exec stop of th (also the first one, after spawning). */
void rt_on_exec(rt_tracer *t, rt_thread *th);
/* Handle every ptrace stop until no traced thread is left. */
void rt_loop(rt_tracer *t);
/* SIGINT, SIGTERM, SIGHUP to the tracer: kill the program, finish the trace. */
void rt_catch_interrupts(void);

/* ---------------------------------------------------------------- record_vg.c */

/* The folder holding the valgrind tool (frames-amd64-linux); 0, or -1 if not built. */
int rv_tool_dir(char *out, size_t cap);
/* Run the program (argv[0..argc)) under Valgrind with the frames tool and convert its
   records into t's writer. Returns CLI_OK or CLI_DATA (t->failed set). */
int rv_record_program(rt_tracer *t, const char *path, int argc, char **argv);

#endif /* RECORD_SUPPORTED */
#endif
