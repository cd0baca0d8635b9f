/* record.h - internals of `frames record` (tools/cmd_record.c): x86-64 Linux programs
   recorded by one of several ENGINES behind one interface (rec_engine below), with what
   the engines share:

     tools/record/record.h          this file: the engine interface, the run state, shared parts
     tools/record/common.c          the run state's errors, the x86-64 register file layout
                                    (XSAVE offsets, GPR table) and the operand-list writing
                                    both engines use ("registers read", "registers after")
     tools/record/x86.c             capstone operand decoding and register values (rx_*)
     tools/record/proc.c            /proc memory, executable mappings, the meta frame (rp_*)
     tools/record/engine_ptrace.c   the ptrace engine: single-steps the program (needs capstone)
     tools/record/engine_valgrind.c the Valgrind engine: runs the program under Valgrind
                                    with the frames tool and pumps its pipe into the converter
     tools/record/vg_convert.c      the converter of the tool's record stream (rv_conv_*),
                                    untrusted input, also driven by tests/fuzz/fuzz_vgrec.c
     tools/record/vg/               the Valgrind tool (frames_vg.c) and the stream (vgrec.h)
     tools/record/engine_qemu.c     the QEMU engine: programs of other architectures under
                                    qemu-ARCH with the frames plugin, whose stream of frames
                                    it checks and appends (docs/qemu.md)
     tools/record/qemu/             the QEMU TCG plugin (frames_qemu.c, a shared object that
                                    build.sh builds into build/qemu) and the plugin API
                                    declarations it uses (qemu_api.h)

   A new engine (QEMU, ...) is one more engine_*.c defining a `const rec_engine`, its
   declaration below and one entry in `engines` (cmd_record.c, in the order the default
   is chosen); it uses rec_run for its options, writer, counters and errors, may use the
   shared parts, and touches no other engine.

   capstone (RECORD_HAVE_CAPSTONE, from FRAMES_HAVE_CAPSTONE, defined by build.sh when
   libcapstone-dev is present) is needed by the ptrace engine only: the Valgrind engine
   without it records every instruction, its memory operands and the registers it
   changed, but not the registers it read. */
#ifndef FRAMES_RECORD_H
#define FRAMES_RECORD_H

#if defined(__linux__) && defined(__x86_64__)
#define RECORD_SUPPORTED 1
#if defined(FRAMES_HAVE_CAPSTONE)
#define RECORD_HAVE_CAPSTONE 1
#endif
#endif

#ifdef RECORD_SUPPORTED
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

#include "frames.h"

/* ---------------------------------------------------------------- the run (common.c) */

/* What every engine shares: the options of the command line, the one writer, the
   program's fate and the counters of the summary. */
typedef struct rec_run {
    const char *out;           /* output path ("-" = standard output) */
    int no_mem, follow, pin, quiet;
    uint64_t sample_on, sample_off;
    frames_writer *w;
    frames_rec_shared shared;  /* the writer, shared by every thread's recorder */
    struct rx_decoder *dec;    /* operand decoder, NULL without capstone */
    pid_t main_pid;
    int main_status, main_done; /* the program's wait status, once it ended */
    int failed;                /* the trace is not good (the message was printed) */
    int silent;                /* no messages (the fuzz target) */
    uint64_t instructions, syscalls, undecoded, signals, nthreads, nmodules, frames;
    uint64_t recorded, values;
    const struct frames_sink *sink;  /* record_into_sink: frames go there, not to out */
} rec_run;

/* The first failure: prints `frames record: MSG` (unless silent) and marks the run failed.
   Later failures are consequences and are not printed. Returns 1 (CLI_DATA). */
int rec_fail(rec_run *r, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* A recorder call returned rc: a negative rc fails the run with the recorder's message. */
void rec_check(rec_run *r, frames_recorder *rec, int rc);

/* ---------------------------------------------------------------- the engine interface */

/* An engine runs the program and feeds the run's writer through one frames_recorder per
   thread. cmd_record.c picks the engine (--engine, else the first that is available and
   can_run the program), opens the writer, then calls start, pump and finish once each
   (finish also after a failed start, with the state start returned, which may be NULL),
   closes the writer, reports and exits with the program's status (main_status). */
typedef struct rec_engine {
    const char *name;          /* as --engine names it */
    int needs_capstone;        /* refuses to run without the operand decoder */
    /* Can it run here (e.g. its tool was built)? 0 yes, else -1 with a reason in why. */
    int (*available)(char *why, size_t cap);
    /* Can it run PROGRAM (path; e.g. its machine)? 0 yes, else -1 with a reason in why
       (then no trace is written and frames record exits 126). */
    int (*can_run)(const char *path, char *why, size_t cap);
    /* Start PROGRAM (path, argv[0..argc)) with the options of r. Returns the engine's
       state, NULL when the program could not be started (r->failed set, message printed). */
    void *(*start)(rec_run *r, const char *path, int argc, char **argv);
    /* Record until the program and every traced child ended (or r->failed). */
    void (*pump)(void *state);
    /* Write what is still open, fill r's counters and main_status, free the state. */
    void (*finish)(rec_run *r, void *state);
} rec_engine;

extern const rec_engine rec_engine_ptrace, rec_engine_valgrind, rec_engine_qemu;

/* engine_qemu.c: programs of other architectures under QEMU user mode with the frames
   plugin (tools/record/qemu). rec_qemu_options: --qemu PATH and -L SYSROOT (NULL: none).
   rec_qemu_header: the header's arch and machine for the program; 0, or -1 when the
   engine does not record its architecture. rec_qemu_meta: the meta frame's tracer args
   name the engine and the guest ("engine=qemu", "guest=riscv64": the header cannot
   name every guest; static storage). */
void rec_qemu_options(const char *qemu, const char *sysroot);
int rec_qemu_header(const char *path, uint64_t *arch, uint64_t *machine);
void rec_qemu_meta(const char *path, frames_meta *meta);

/* For can_run: is path an x86-64 Linux ELF executable, or a script whose interpreter
   (#!) is one? 0 yes, else -1 with why ("an ELF for AArch64, not x86-64", ...). */
int rec_x86_64_program(const char *path, char *why, size_t cap);

/* SIGINT, SIGTERM, SIGHUP to frames: rec_interrupted() becomes the signal number (the
   engines kill the program and finish the trace). */
void rec_catch_interrupts(void);
int rec_interrupted(void);

/* The stream engines (valgrind, qemu): the child writes its stream into a pipe the engine
   reads. rec_stream_pipe makes it (read end close-on-exec, a 1 MiB buffer for fewer
   wake-ups of the reader) and catches interrupts: 0, or -1 with the run failed.
   rec_stream_started takes the child spawned with fds[1] (or -1): the read end, or -1
   with the run failed. rec_stream_reap closes the read end, waits for the child and
   records its status as the main program's; it returns that status. */
int rec_stream_pipe(rec_run *r, int fds[2]);
int rec_stream_started(rec_run *r, pid_t pid, int fds[2]);
int rec_stream_reap(rec_run *r, int fd, pid_t pid);
/* Read the pipe until every writer closed it, handing what arrived to take (which returns
   the bytes it consumed; the rest waits for more) from a buffer of cap bytes that doubles
   when take consumes nothing of a full one. An interrupt kills the child and the trace is
   finished; a failed run kills it too. Returns the bytes left unconsumed at the end. */
size_t rec_stream_pump(rec_run *r, int fd, pid_t pid, size_t cap,
                       size_t (*take)(void *ctx, const uint8_t *data, size_t n), void *ctx);

/* ---------------------------------------------------------------- x86.c: operands (capstone) */

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
    uint32_t gpr_writes;       /* bits (rec_gpr order) of the full GPRs and RFLAGS in writes */
    uint32_t gpr_reads;        /* ... and of those in reads as the whole register (RAX, not EAX) */
    uint32_t read_roles[RX_MAX_REGS];  /* FRAMES_VAL_BASE / _INDEX for address registers */
    rx_memop mem[RX_MAX_MEM];
} rx_insn;

typedef struct rx_decoder rx_decoder;

/* The capstone library rx_open loads (e.g. "libcapstone.so.4"). Built without capstone
   (RECORD_HAVE_CAPSTONE undefined), rx_open returns NULL and nothing is ever decoded. */
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
/* rcx (or ecx with 32-bit addressing): whether a rep string instruction accesses memory. */
int rx_rep_active(const rx_state *st, const rx_insn *in);
static inline int rx_count_active(const rx_state *st, int addr32) {
    return (addr32 ? (st->gpr.rcx & 0xffffffffu) : st->gpr.rcx) != 0;
}

/* ---------------------------------------------------------------- common.c: x86-64 state */

/* XSAVE standard format: the legacy (FXSAVE) area and the header are at fixed offsets,
   the extended components where CPUID leaf 0xD says. */
#define RX_XS_FSW 2
#define RX_XS_ST 32
#define RX_XS_XMM 160
#define RX_XS_HEADER 512
/* Offset of XSAVE component comp (2 AVX, 5 opmask, 6 ZMM_Hi256, 7 Hi16_ZMM), 0 when the
   CPU lacks it. */
uint32_t rec_xs_offset(unsigned comp);

/* The 16 GPRs and RFLAGS in the order the engines record registers nobody listed:
   RAX RBX RCX RDX RSI RDI RBP RSP R8..R15 RFLAGS. */
#define REC_NGPR 17
extern const size_t rec_gpr_off[REC_NGPR];  /* field offsets in struct user_regs_struct */
extern const char rec_gpr_name[REC_NGPR][8];
static inline uint64_t rec_gpr(const struct user_regs_struct *g, unsigned i) {
    uint64_t v;
    __builtin_memcpy(&v, (const uint8_t *)g + rec_gpr_off[i], 8);
    return v;
}

/* The operand lists of one instruction, written the same way by every engine that has
   a register file (rx_state) and, optionally, a decoded instruction (in == NULL: not
   decoded). rec_regs_read: the registers `in` reads, values before. rec_regs_after: the
   registers `in` writes, then every GPR and RFLAGS in `changed` (bits in rec_gpr order:
   the ones whose value changed) that `in` did not list, values after. */
void rec_regs_read(frames_recorder *rec, rx_state *st, const rx_insn *in, uint64_t next_pc);
void rec_regs_after(frames_recorder *rec, rx_state *st, const rx_insn *in, uint32_t changed,
                    uint64_t next_pc);
/* The whole initial state, where the trace would otherwise not know it (a thread's first
   instruction, after execve, a signal delivered, arch_prctl, an unrecorded stretch of
   --sample): after rec_regs_read, every GPR, RFLAGS, FS_BASE and GS_BASE that `in` (NULL:
   not decoded) does not read as a whole register, values before, marked read (BAP's
   consumers turn an operand marked neither read nor written into no event at all, and
   Tenet's converters take a register's first value from a read). */
void rec_regs_state(frames_recorder *rec, const rx_state *st, const rx_insn *in);

/* PREPARED OPERAND LISTS: what rec_regs_read and rec_regs_after write for one decoded
   instruction, made once per instruction (an engine that runs the same code again and
   again keeps it: the Valgrind converter per translated instruction), so that each
   execution only copies values: per register its prepared element (name, bit length,
   usage, frames_rec_prepare) and where its value is. The same bytes as rec_regs_read and
   rec_regs_after (which make a plan on the stack and run it). */
enum {
    REC_OP_PC = 0xfffe,   /* rec_op.off: the value is the next instruction's address */
    REC_OP_SLOW = 0xffff  /* ... read by rx_reg_value (x87, MMX, YMM, opmask, ...) */
};
typedef struct rec_op {
    const frames_rec_prep *prep;
    uint16_t off;              /* prep->size value bytes at this offset of rx_state, or REC_OP_* */
    uint16_t reg;              /* capstone id */
} rec_op;
typedef struct rec_plan {
    uint8_t nreads, nwrites;   /* ops: the reads, then the writes */
    uint8_t rep, addr32;       /* as in rx_insn */
    uint32_t gpr_writes, gpr_reads;
    rec_op ops[];
} rec_plan;
#define REC_PLAN_MAX (sizeof(rec_plan) + 2 * RX_MAX_REGS * sizeof(rec_op))
/* Fill pl (REC_PLAN_MAX bytes of storage) for in; returns its size in bytes. */
size_t rec_plan_fill(rec_plan *pl, const rx_insn *in);
/* rec_regs_read and rec_regs_after from a plan (NULL: not decoded). */
void rec_plan_read(frames_recorder *rec, rx_state *st, const rec_plan *pl, uint64_t next_pc);
void rec_plan_after(frames_recorder *rec, rx_state *st, const rec_plan *pl, uint32_t changed,
                    uint64_t next_pc);
/* rec_regs_state with the plan's gpr_reads (NULL: not decoded). */
void rec_plan_state(frames_recorder *rec, const rx_state *st, const rec_plan *pl);

/* x86.c: the prepared element of register reg (capstone id) read (how: FRAMES_VAL_READ |
   FRAMES_VAL_BEFORE, with FRAMES_VAL_BASE / _INDEX) or written (FRAMES_VAL_WRITE |
   FRAMES_VAL_AFTER), and *off, where its value is (rec_op.off); NULL for a register
   without a value. */
const frames_rec_prep *rx_reg_prep(unsigned reg, uint32_t how, uint16_t *off);

/* ---------------------------------------------------------------- proc.c: processes, modules, meta */

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

/* ---------------------------------------------------------------- vg_convert.c */

/* The converter of the Valgrind tool's stream (tools/record/vg/vgrec.h) into r's writer.
   The stream is untrusted input: a malformed record fails the run with a message. */
typedef struct rv_conv rv_conv;
rv_conv *rv_conv_new(rec_run *r);
/* Pipe bytes (chunks: u32 pid, u32 length, payload); may end inside a chunk, whose
   bytes so far are converted. Returns how many bytes were consumed (all but a chunk
   header cut short: the rest is to be given again with more after it). */
size_t rv_conv_chunks(rv_conv *c, const uint8_t *data, size_t n);
/* The largest chunk payload accepted (bigger is a malformed stream). */
#define RV_MAX_CHUNK (64u << 20)
/* The program ended with wait status `status` (signalled = -1 if unknown): write what is
   open. Then counters are final in r. rv_conv_free frees everything (also without end). */
void rv_conv_end(rv_conv *c, int status);
/* Did any process of the stream say HELLO (the tool started)? */
int rv_conv_started(const rv_conv *c);
void rv_conv_free(rv_conv *c);

/* The folder holding the valgrind tool (frames-amd64-linux); 0, or -1 if not built. */
int rv_tool_dir(char *out, size_t cap);

#endif /* RECORD_SUPPORTED */

/* For another command (frames vprof's online mode, cmd_record.c): run PROGRAM
   (argv[0..argc)) under the default engine, the trace going into sink (not seekable:
   header unfinished, no table of contents) instead of a file, without a summary.
   Returns what frames record would exit with (the program's status, REC_EXIT_*,
   CLI_USAGE); errors are printed as frames record prints them. */
struct frames_sink;
int record_into_sink(const struct frames_sink *sink, int argc, char **argv);
#endif
