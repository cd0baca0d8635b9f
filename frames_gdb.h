/* frames_gdb.h - a GDB remote serial protocol server over a recorded trace (frames_replay.h):
   gdb, and anything else that speaks the protocol, steps, continues, breaks and watches
   forwards and backwards through a frames trace. Single-header C99 library (also compiles
   as C++) on top of frames_replay.h. MIT licence, see end of file.

   ---------------------------------------------------------------------------------------
   WHAT IT IS

   All the protocol logic of `frames gdbserver`, independent of the transport: the caller
   feeds the bytes the client sends (a pipe, a socket, a test buffer) and gets the replies
   through a write callback. The server answers from a frames_replay: registers and memory
   at the current position, and breakpoints, watchpoints and the two ends of the trace found
   with frames_replay_find (from the index: continuing never steps every instruction).
   Input is hostile by assumption: any length and any bytes give an error reply or are
   dropped, never a crash, and nothing is allocated from the input.

   ---------------------------------------------------------------------------------------
   USAGE

   In exactly one C or C++ file (frames_replay.h's implementation may live elsewhere):

       #define FRAMES_GDB_IMPLEMENTATION
       #include "frames_gdb.h"

   The transport is a callback that sends bytes (here a FILE*):

       static int send_to(void *ctx, const void *p, size_t n) {
           return fwrite(p, 1, n, (FILE *)ctx) == n && fflush((FILE *)ctx) == 0 ? 0 : -1;
       }

   Serving a trace on standard input and output (`target remote | PROGRAM` in gdb):

       frames_replay *r; frames_gdb *g; frames_gdb_options o; frames_error err;
       char buf[4096]; size_t n; int rc = FRAMES_OK;
       if (frames_replay_open(&r, "trace.frames", NULL, &err) < 0) die(err.message);
       frames_gdb_options_default(&o);
       o.write = send_to; o.write_ctx = stdout;
       if (frames_gdb_open(&g, r, &o, &err) < 0) die(err.message);
       while (rc == FRAMES_OK && (n = fread(buf, 1, 1, stdin)) > 0)   // what has arrived
           rc = frames_gdb_feed(g, buf, n);        // FRAMES_GDB_CLOSED: client detached
       frames_gdb_close(g); frames_replay_close(r);

   ---------------------------------------------------------------------------------------
   API OVERVIEW (details at each declaration below)

     frames_gdb_options_default, frames_gdb_open / _close   a server over a replay
     frames_gdb_feed                    bytes from the client in, replies through the callback
     frames_gdb_error, frames_gdb_target_xml   the last error, the target description sent

   ---------------------------------------------------------------------------------------
   THE PROTOCOL SUBSET (https://sourceware.org/gdb/current/onlinedocs/gdb.html/Remote-Protocol.html)

   Framing   $DATA#CS with acknowledgements (+ / -: the last reply is sent again),
             QStartNoAckMode, escapes (}) and run-length encoding (*) in input, 0x03
             (interrupt) ignored: the server never runs between packets.
   General   qSupported (PacketSize, QStartNoAckMode+, qXfer:features:read+, ReverseStep+,
             ReverseContinue+, swbreak+, hwbreak+, vContSupported+), ?, qAttached, qC,
             qfThreadInfo / qsThreadInfo, T (thread alive), Hg / Hc, qXfer:features:read:
             target.xml, vMustReplyEmpty; anything unknown gets the empty reply.
   State     g / p (unknown registers as xx...), m (unknown memory: E0E; a prefix that is
             known is returned alone; the current instruction's bytes come from the
             trace); G / P / M / X refused (E02).
   Running   s / c / S / C / vCont? / vCont;s|c (forwards), bs / bc (backwards), Z0..Z4 /
             z0..z4. Stop replies T05 with thread:, swbreak: or hwbreak: at breakpoints,
             watch: / rwatch: / awatch: at watchpoints, replaylog:begin / replaylog:end at
             the two ends of the trace.
   Monitor   qRcmd (`monitor` in gdb; output in O packets): when, goto INDEX|begin|end, help.
   Ending    D (detach), vKill, k: frames_gdb_feed returns FRAMES_GDB_CLOSED.

   Positions are frames_replay's: "before instruction i" (i = N: after the last one).
   A breakpoint stops before the instruction at its pc, in both directions. A watchpoint
   stops just past the instruction that accessed the range in the direction of
   execution: after it when going forwards (as the hardware and rr do), before it when
   going backwards (as gdb's own reverse execution, record-full, does). gdb needs the
   latter: it reports a `watch` only when the value it reads differs from the one it saw
   last, and after the last write going backwards the value is still the one it saw.
   A step runs one instruction of the current thread (the one of the next instruction),
   and the other threads' instructions up to its next one. gdb's thread ids are 1.. in
   order of first appearance in the trace. At the end of the trace the program counter,
   when the trace does not give it, is the address after the last instruction (where a
   cut trace, or an exit system call, leaves it): gdb cannot go back without one.

   ---------------------------------------------------------------------------------------
   OPTIONS (#define before including the implementation)

   FRAMES_GDB_STATIC      this header's functions static, and frames_replay.h's (and
                          frames.h's) too when first included through this header: the
                          implementation then brings frames_replay.h's with it
   frames.h's options hold too (FRAMES_MALLOC & co with the options' alloc_ctx).

   ---------------------------------------------------------------------------------------
   SECTIONS (in file order; each starts with a banner of '=' or '-' lines,
   the title on the line below it: grep -n '^   TITLE' finds it)

   The server
   IMPLEMENTATION
     errors, state
     register tables and the target description
     framing: output
     replies: registers, memory, threads
     running: steps, breakpoints, watchpoints
     monitor commands
     packets
     framing: input
     lifecycle
*/
/* FRAMES_ALL_IMPLEMENTATION (frames.h) turns this header's implementation on too. */
#if defined(FRAMES_ALL_IMPLEMENTATION) && !defined(FRAMES_GDB_IMPLEMENTATION)
#define FRAMES_GDB_IMPLEMENTATION
#endif

#ifndef FRAMES_GDB_H_INCLUDED
#define FRAMES_GDB_H_INCLUDED

#if defined(FRAMES_GDB_STATIC) && !defined(FRAMES_REPLAY_H_INCLUDED)
#define FRAMES_REPLAY_STATIC   /* frames_replay.h comes with it: one private copy */
#endif
#include "frames_replay.h"

#ifndef FRAMES_GDB_DEF
#if defined(FRAMES_GDB_STATIC) && (defined(__GNUC__) || defined(__clang__))
#define FRAMES_GDB_DEF static __attribute__((unused))
#elif defined(FRAMES_GDB_STATIC)
#define FRAMES_GDB_DEF static
#else
#define FRAMES_GDB_DEF FRAMES_DEF
#endif
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ======================================================================================
   The server
   ====================================================================================== */

#define FRAMES_GDB_PACKET_SIZE 16384   /* largest packet taken and sent (qSupported's
                                          PacketSize); longer input gets E01 */
#define FRAMES_GDB_MAX_BREAKPOINTS 256 /* Z0/Z1 at once; more get E.. */
#define FRAMES_GDB_MAX_WATCHPOINTS 64  /* Z2/Z3/Z4 at once */
#define FRAMES_GDB_MAX_THREADS 65536   /* threads gdb is told about */
#define FRAMES_GDB_MAX_STEP_SCAN 65536 /* instructions of other threads a step passes */
#define FRAMES_GDB_CLOSED 1            /* frames_gdb_feed: the client detached or killed */

/* Receives the bytes of replies; returns 0, or nonzero when the transport failed (the
   feed then returns FRAMES_E_IO). */
typedef int (*frames_gdb_write_fn)(void *ctx, const void *data, size_t n);

typedef struct frames_gdb_options {
    frames_gdb_write_fn write;   /* required */
    void *write_ctx;
    void *alloc_ctx;             /* passed to FRAMES_MALLOC & co */
} frames_gdb_options;

typedef struct frames_gdb frames_gdb;

FRAMES_GDB_DEF void frames_gdb_options_default(frames_gdb_options *o);

/* A server over r (which stays the caller's and must outlive it); r is moved to the
   start of the trace. FRAMES_E_INVALID without a write callback, FRAMES_E_GDB_ARCH for an
   architecture without a register table (x86-64, i386, ARM and AArch64 have one). */
FRAMES_GDB_DEF int frames_gdb_open(frames_gdb **out, frames_replay *r, const frames_gdb_options *o,
                                   frames_error *err);
FRAMES_GDB_DEF void frames_gdb_close(frames_gdb *g);

/* Bytes from the client, any amount, split anywhere. Replies go to the write callback.
   FRAMES_OK, FRAMES_GDB_CLOSED once the client detached or killed (later input is
   ignored), or FRAMES_E_IO when the write callback failed. Malformed packets are answered
   with an error reply, never an error here. */
FRAMES_GDB_DEF int frames_gdb_feed(frames_gdb *g, const void *data, size_t n);

/* The last error of the server: a failed write, or the replay failure behind an E03
   reply (for a log line). */
FRAMES_GDB_DEF const frames_error *frames_gdb_error(const frames_gdb *g);

/* The target description served as target.xml (NUL-terminated, owned by g). */
FRAMES_GDB_DEF const char *frames_gdb_target_xml(const frames_gdb *g);

#ifdef __cplusplus
}
#endif
#endif /* FRAMES_GDB_H_INCLUDED */

/* ======================================================================================
   IMPLEMENTATION
   ====================================================================================== */
#if defined(FRAMES_GDB_IMPLEMENTATION) || defined(FRAMES_ALL_IMPLEMENTATION)
#ifndef FRAMES_GDB_IMPLEMENTATION_INCLUDED
#define FRAMES_GDB_IMPLEMENTATION_INCLUDED

#define FRAMES__WANT_HELPERS
#include "frames.h"
#if defined(FRAMES_STATIC) || defined(FRAMES_REPLAY_STATIC)
/* the replay's functions are private to this file: its implementation goes here too */
#define FRAMES_REPLAY_IMPLEMENTATION
#include "frames_replay.h"
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* --------------------------------------------------------------------------------------
   errors, state
   -------------------------------------------------------------------------------------- */

/* One register of a target description: the protocol's register number is its place. */
typedef struct frames__gdb_reg {
    const char *name;
    uint16_t bits;
    uint8_t feature;   /* index into the architecture's feature names */
    const char *type;
} frames__gdb_reg;

typedef struct frames__gdb_arch {
    const char *architecture;             /* <architecture> */
    const char *const *features;          /* feature names, by frames__gdb_reg.feature */
    const frames__gdb_reg *regs;
    size_t nregs;
    size_t pc;                            /* the program counter's place in regs */
} frames__gdb_arch;

typedef struct frames__gdb_point {
    int kind;                             /* 0..4 as in Z0..Z4 */
    uint64_t addr, len;
} frames__gdb_point;

/* input states: between packets, in the data, after '*' (the count follows), at the two
   checksum digits (CK2_BAD: the first one was not a hex digit) */
enum { FRAMES__GDB_IDLE, FRAMES__GDB_DATA, FRAMES__GDB_RLE, FRAMES__GDB_CK1, FRAMES__GDB_CK2,
       FRAMES__GDB_CK2_BAD };

struct frames_gdb {
    frames_gdb_options opt;
    frames_replay *r;
    frames_replay_info info;
    const frames__gdb_arch *arch;
    char *xml;
    size_t xml_len;
    uint64_t *tids;                       /* gdb thread id i+1 = tids[i] */
    size_t ntids;
    size_t thread_cursor;                 /* qsThreadInfo continues here */
    uint64_t end_tid;                     /* the thread of the last instruction */
    uint64_t end_pc;                      /* the address after it (0: unknown) */
    uint64_t g_thread;                    /* Hg: gdb id, 0 = the current one */
    frames__gdb_point bps[FRAMES_GDB_MAX_BREAKPOINTS];
    size_t nbps;
    frames__gdb_point wps[FRAMES_GDB_MAX_WATCHPOINTS];
    size_t nwps;
    int no_ack, closed;
    /* input */
    int state, escape, overflow;
    uint8_t sum, ck;
    char in[FRAMES_GDB_PACKET_SIZE + 1];
    size_t in_len;
    /* output: the reply being built, then the framed last packet (sent again on '-') */
    char rep[FRAMES_GDB_PACKET_SIZE + 1];
    frames__text text;
    char out[2 * FRAMES_GDB_PACKET_SIZE + 8];
    size_t out_len;
    int io_failed;
    frames_error err;
};

/* --------------------------------------------------------------------------------------
   register tables and the target description
   -------------------------------------------------------------------------------------- */

/* gdb's i386 and amd64 architectures accept a description only when the core feature
   holds the x87 registers too, and the Linux OS ABI looks for orig_rax; registers the
   trace never knows are served as unknown (xx...). With the avx feature gdb shows the
   ymm registers (xmm and the upper halves the replay model keeps). */
static const char *const frames__gdb_x86_features[] = {
    "org.gnu.gdb.i386.core", "org.gnu.gdb.i386.sse", "org.gnu.gdb.i386.segments",
    "org.gnu.gdb.i386.linux", "org.gnu.gdb.i386.avx"};

#define FRAMES__GDB_X87                                                                     \
    {"st0", 80, 0, "i387_ext"}, {"st1", 80, 0, "i387_ext"}, {"st2", 80, 0, "i387_ext"},     \
    {"st3", 80, 0, "i387_ext"}, {"st4", 80, 0, "i387_ext"}, {"st5", 80, 0, "i387_ext"},     \
    {"st6", 80, 0, "i387_ext"}, {"st7", 80, 0, "i387_ext"}, {"fctrl", 32, 0, "int"},         \
    {"fstat", 32, 0, "int"}, {"ftag", 32, 0, "int"}, {"fiseg", 32, 0, "int"},               \
    {"fioff", 32, 0, "int"}, {"foseg", 32, 0, "int"}, {"fooff", 32, 0, "int"},              \
    {"fop", 32, 0, "int"}
#define FRAMES__GDB_SEGS                                                                    \
    {"cs", 32, 0, "int32"}, {"ss", 32, 0, "int32"}, {"ds", 32, 0, "int32"},                 \
    {"es", 32, 0, "int32"}, {"fs", 32, 0, "int32"}, {"gs", 32, 0, "int32"}
#define FRAMES__GDB_XMM(n) {"xmm" #n, 128, 1, "uint128"}
#define FRAMES__GDB_YMMH(n) {"ymm" #n "h", 128, 4, "uint128"}   /* upper halves of ymm */

static const frames__gdb_reg frames__gdb_x86_64_regs[] = {
    {"rax", 64, 0, "int64"}, {"rbx", 64, 0, "int64"}, {"rcx", 64, 0, "int64"},
    {"rdx", 64, 0, "int64"}, {"rsi", 64, 0, "int64"}, {"rdi", 64, 0, "int64"},
    {"rbp", 64, 0, "data_ptr"}, {"rsp", 64, 0, "data_ptr"}, {"r8", 64, 0, "int64"},
    {"r9", 64, 0, "int64"}, {"r10", 64, 0, "int64"}, {"r11", 64, 0, "int64"},
    {"r12", 64, 0, "int64"}, {"r13", 64, 0, "int64"}, {"r14", 64, 0, "int64"},
    {"r15", 64, 0, "int64"}, {"rip", 64, 0, "code_ptr"}, {"eflags", 32, 0, "int32"},
    FRAMES__GDB_SEGS, FRAMES__GDB_X87,
    FRAMES__GDB_XMM(0), FRAMES__GDB_XMM(1), FRAMES__GDB_XMM(2), FRAMES__GDB_XMM(3),
    FRAMES__GDB_XMM(4), FRAMES__GDB_XMM(5), FRAMES__GDB_XMM(6), FRAMES__GDB_XMM(7),
    FRAMES__GDB_XMM(8), FRAMES__GDB_XMM(9), FRAMES__GDB_XMM(10), FRAMES__GDB_XMM(11),
    FRAMES__GDB_XMM(12), FRAMES__GDB_XMM(13), FRAMES__GDB_XMM(14), FRAMES__GDB_XMM(15),
    {"mxcsr", 32, 1, "int"},
    {"fs_base", 64, 2, "int64"}, {"gs_base", 64, 2, "int64"},
    {"orig_rax", 64, 3, "int64"},
    FRAMES__GDB_YMMH(0), FRAMES__GDB_YMMH(1), FRAMES__GDB_YMMH(2), FRAMES__GDB_YMMH(3),
    FRAMES__GDB_YMMH(4), FRAMES__GDB_YMMH(5), FRAMES__GDB_YMMH(6), FRAMES__GDB_YMMH(7),
    FRAMES__GDB_YMMH(8), FRAMES__GDB_YMMH(9), FRAMES__GDB_YMMH(10), FRAMES__GDB_YMMH(11),
    FRAMES__GDB_YMMH(12), FRAMES__GDB_YMMH(13), FRAMES__GDB_YMMH(14), FRAMES__GDB_YMMH(15)};

static const frames__gdb_reg frames__gdb_i386_regs[] = {
    {"eax", 32, 0, "int32"}, {"ecx", 32, 0, "int32"}, {"edx", 32, 0, "int32"},
    {"ebx", 32, 0, "int32"}, {"esp", 32, 0, "data_ptr"}, {"ebp", 32, 0, "data_ptr"},
    {"esi", 32, 0, "int32"}, {"edi", 32, 0, "int32"}, {"eip", 32, 0, "code_ptr"},
    {"eflags", 32, 0, "int32"}, FRAMES__GDB_SEGS, FRAMES__GDB_X87,
    FRAMES__GDB_XMM(0), FRAMES__GDB_XMM(1), FRAMES__GDB_XMM(2), FRAMES__GDB_XMM(3),
    FRAMES__GDB_XMM(4), FRAMES__GDB_XMM(5), FRAMES__GDB_XMM(6), FRAMES__GDB_XMM(7),
    {"mxcsr", 32, 1, "int"}, {"orig_eax", 32, 3, "int"},
    FRAMES__GDB_YMMH(0), FRAMES__GDB_YMMH(1), FRAMES__GDB_YMMH(2), FRAMES__GDB_YMMH(3),
    FRAMES__GDB_YMMH(4), FRAMES__GDB_YMMH(5), FRAMES__GDB_YMMH(6), FRAMES__GDB_YMMH(7)};

static const char *const frames__gdb_arm_features[] = {"org.gnu.gdb.arm.core"};
static const frames__gdb_reg frames__gdb_arm_regs[] = {
    {"r0", 32, 0, "uint32"}, {"r1", 32, 0, "uint32"}, {"r2", 32, 0, "uint32"},
    {"r3", 32, 0, "uint32"}, {"r4", 32, 0, "uint32"}, {"r5", 32, 0, "uint32"},
    {"r6", 32, 0, "uint32"}, {"r7", 32, 0, "uint32"}, {"r8", 32, 0, "uint32"},
    {"r9", 32, 0, "uint32"}, {"r10", 32, 0, "uint32"}, {"r11", 32, 0, "uint32"},
    {"r12", 32, 0, "uint32"}, {"sp", 32, 0, "data_ptr"}, {"lr", 32, 0, "uint32"},
    {"pc", 32, 0, "code_ptr"}, {"cpsr", 32, 0, "uint32"}};

static const char *const frames__gdb_aarch64_features[] = {"org.gnu.gdb.aarch64.core"};
#define FRAMES__GDB_X(n) {"x" #n, 64, 0, "uint64"}
static const frames__gdb_reg frames__gdb_aarch64_regs[] = {
    FRAMES__GDB_X(0), FRAMES__GDB_X(1), FRAMES__GDB_X(2), FRAMES__GDB_X(3), FRAMES__GDB_X(4),
    FRAMES__GDB_X(5), FRAMES__GDB_X(6), FRAMES__GDB_X(7), FRAMES__GDB_X(8), FRAMES__GDB_X(9),
    FRAMES__GDB_X(10), FRAMES__GDB_X(11), FRAMES__GDB_X(12), FRAMES__GDB_X(13),
    FRAMES__GDB_X(14), FRAMES__GDB_X(15), FRAMES__GDB_X(16), FRAMES__GDB_X(17),
    FRAMES__GDB_X(18), FRAMES__GDB_X(19), FRAMES__GDB_X(20), FRAMES__GDB_X(21),
    FRAMES__GDB_X(22), FRAMES__GDB_X(23), FRAMES__GDB_X(24), FRAMES__GDB_X(25),
    FRAMES__GDB_X(26), FRAMES__GDB_X(27), FRAMES__GDB_X(28), FRAMES__GDB_X(29),
    FRAMES__GDB_X(30), {"sp", 64, 0, "data_ptr"}, {"pc", 64, 0, "code_ptr"},
    {"cpsr", 32, 0, "uint32"}};

#define FRAMES__GDB_COUNT(a) (sizeof(a) / sizeof((a)[0]))
static const frames__gdb_arch frames__gdb_archs[] = {
    {"i386:x86-64", frames__gdb_x86_features, frames__gdb_x86_64_regs,
     FRAMES__GDB_COUNT(frames__gdb_x86_64_regs), 16},
    {"i386", frames__gdb_x86_features, frames__gdb_i386_regs,
     FRAMES__GDB_COUNT(frames__gdb_i386_regs), 8},
    {"arm", frames__gdb_arm_features, frames__gdb_arm_regs,
     FRAMES__GDB_COUNT(frames__gdb_arm_regs), 15},
    {"aarch64", frames__gdb_aarch64_features, frames__gdb_aarch64_regs,
     FRAMES__GDB_COUNT(frames__gdb_aarch64_regs), 32}};

static const frames__gdb_arch *frames__gdb_arch_of(uint32_t arch, uint64_t machine) {
    if (arch == FRAMES_ARCH_I386)
        return &frames__gdb_archs[machine == FRAMES_MACH_X86_64 ? 0 : 1];
    if (arch == FRAMES_ARCH_ARM) return &frames__gdb_archs[2];
    if (arch == FRAMES_ARCH_AARCH64) return &frames__gdb_archs[3];
    return NULL;
}

/* The target description, features in the order of the table (each feature's registers
   are contiguous in it). Returns the length the text needs. */
static size_t frames__gdb_xml(const frames__gdb_arch *a, char *buf, size_t cap) {
    frames__text t;
    size_t i;
    int feature = -1;
    t.buf = buf;
    t.cap = cap;
    t.len = 0;
    frames__text_puts(&t, "<?xml version=\"1.0\"?>\n<!DOCTYPE target SYSTEM \"gdb-target.dtd\">\n"
                          "<target version=\"1.0\">\n<architecture>");
    frames__text_puts(&t, a->architecture);
    frames__text_puts(&t, "</architecture>\n");
    for (i = 0; i < a->nregs; i++) {
        char line[160];
        const frames__gdb_reg *reg = &a->regs[i];
        if (reg->feature != feature) {
            if (feature >= 0) frames__text_puts(&t, "</feature>\n");
            feature = reg->feature;
            frames__text_puts(&t, "<feature name=\"");
            frames__text_puts(&t, a->features[feature]);
            frames__text_puts(&t, "\">\n");
        }
        frames__fmt(line, sizeof line, "<reg name=\"%s\" bitsize=\"%u\" type=\"%s\"/>\n", reg->name,
                    (unsigned)reg->bits, reg->type);
        frames__text_puts(&t, line);
    }
    if (feature >= 0) frames__text_puts(&t, "</feature>\n");
    frames__text_puts(&t, "</target>\n");
    if (t.len < cap) buf[t.len] = 0;
    return t.len;
}

/* --------------------------------------------------------------------------------------
   framing: output
   -------------------------------------------------------------------------------------- */

static int frames__gdb_send_raw(frames_gdb *g, const char *p, size_t n) {
    if (g->io_failed) return FRAMES_E_IO;
    if (g->opt.write(g->opt.write_ctx, p, n) != 0) {
        g->io_failed = 1;
        return frames__fail(&g->err, FRAMES_E_IO, FRAMES_NO_POS, FRAMES_NO_POS,
                            "cannot send to the gdb client");
    }
    return FRAMES_OK;
}

static void frames__gdb_reply_begin(frames_gdb *g) {
    g->text.buf = g->rep;
    g->text.cap = FRAMES_GDB_PACKET_SIZE;
    g->text.len = 0;
}

static void frames__gdb_puts(frames_gdb *g, const char *s) { frames__text_puts(&g->text, s); }

static void frames__gdb_hex_bytes(frames_gdb *g, const uint8_t *p, size_t n) {
    static const char digits[] = "0123456789abcdef";
    size_t i;
    for (i = 0; i < n; i++) {
        char two[2];
        two[0] = digits[p[i] >> 4];
        two[1] = digits[p[i] & 15];
        frames__text_put(&g->text, two, 2);
    }
}

/* A formatted line of at most FRAMES__GDB_LINE - 1 characters (cut there), made by
   frames__gdb_fmt: the one formatter behind reply text and console output. */
#define FRAMES__GDB_LINE 256
typedef struct frames__gdb_line {
    char s[FRAMES__GDB_LINE];
    size_t n;
} frames__gdb_line;

static frames__gdb_line frames__gdb_fmt(const char *fmt, ...) FRAMES__PRINTF(1, 2);
static frames__gdb_line frames__gdb_fmt(const char *fmt, ...) {
    frames__gdb_line line;
    va_list ap;
    va_start(ap, fmt);
    line.n = frames__vfmt(line.s, sizeof line.s, fmt, ap);
    va_end(ap);
    if (line.n >= sizeof line.s) line.n = sizeof line.s - 1;
    return line;
}

/* The line into the reply being built. */
static void frames__gdb_put_line(frames_gdb *g, frames__gdb_line line) {
    frames__text_put(&g->text, line.s, line.n);
}

/* Frame data as $DATA#CS, escaping the four characters the protocol reserves, and send
   it; the framed packet is kept for a resend on '-'. */
static int frames__gdb_send_packet(frames_gdb *g, const char *data, size_t n) {
    static const char digits[] = "0123456789abcdef";
    size_t i, o = 0;
    uint8_t sum = 0;
    g->out[o++] = '$';
    for (i = 0; i < n; i++) {
        char c = data[i];
        if (c == '$' || c == '#' || c == '}' || c == '*') {
            g->out[o++] = '}';
            sum = (uint8_t)(sum + '}');
            c = (char)(c ^ 0x20);
        }
        g->out[o++] = c;
        sum = (uint8_t)(sum + (uint8_t)c);
    }
    g->out[o++] = '#';
    g->out[o++] = digits[sum >> 4];
    g->out[o++] = digits[sum & 15];
    g->out_len = o;
    return frames__gdb_send_raw(g, g->out, o);
}

/* Send the reply built since frames__gdb_reply_begin (E01 if it did not fit: cannot
   happen with the bounds the requests are clamped to, but a wrong reply must not go). */
static int frames__gdb_reply_end(frames_gdb *g) {
    if (g->text.len > g->text.cap) return frames__gdb_send_packet(g, "E01", 3);
    return frames__gdb_send_packet(g, g->rep, g->text.len);
}

static int frames__gdb_reply(frames_gdb *g, const char *s) {
    return frames__gdb_send_packet(g, s, strlen(s));
}

/* --------------------------------------------------------------------------------------
   replies: registers, memory, threads
   -------------------------------------------------------------------------------------- */

static int frames__gdb_hex_digit(uint8_t c) {
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
         : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* Hexadecimal number at *p (at most 16 digits); 0 and *p moved past it, -1 if none. */
static int frames__gdb_hex_u64(const char **p, const char *end, uint64_t *v) {
    const char *s = *p;
    uint64_t x = 0;
    int digits = 0;
    for (; s < end; s++) {
        int d = frames__gdb_hex_digit((uint8_t)*s);
        if (d < 0) break;
        if (++digits > 16) return -1;
        x = x << 4 | (uint64_t)d;
    }
    if (!digits) return -1;
    *p = s;
    *v = x;
    return 0;
}

/* The instruction at the current position, or 0 at the end (or when the replay fails). */
static int frames__gdb_insn(frames_gdb *g, frames_replay_insn *insn) {
    if (frames_replay_position(g->r) >= g->info.instructions) return 0;
    return frames_replay_insn_get(g->r, insn) == FRAMES_OK;
}

/* The thread whose state gdb sees now: the one of the next instruction, or at the end
   the one of the last. 0 for a trace without instructions. */
static uint64_t frames__gdb_current_tid(frames_gdb *g) {
    frames_replay_insn insn;
    if (frames__gdb_insn(g, &insn)) return insn.thread;
    return g->end_tid;
}

/* gdb's id of a trace thread (1-based), 1 when unknown. */
static uint64_t frames__gdb_id_of(const frames_gdb *g, uint64_t tid) {
    size_t i;
    for (i = 0; i < g->ntids; i++)
        if (g->tids[i] == tid) return i + 1;
    return 1;
}

/* The trace thread gdb reads registers of (Hg, else the current one). */
static uint64_t frames__gdb_reg_tid(frames_gdb *g) {
    if (g->g_thread >= 1 && g->g_thread <= g->ntids) return g->tids[g->g_thread - 1];
    return frames__gdb_current_tid(g);
}

/* Register i's value in the target's byte order (little-endian for every table): 1
   known, 0 unknown. The program counter comes from the instruction when it is the
   thread's. */
static int frames__gdb_reg_value(frames_gdb *g, size_t i, uint64_t tid, uint8_t *v, size_t size) {
    size_t got = 0;
    int rc;
    frames_replay_insn insn;
    memset(v, 0, size);
    if (i == g->arch->pc && frames__gdb_insn(g, &insn) && insn.thread == tid) {
        size_t k;
        for (k = 0; k < size && k < 8; k++) v[k] = (uint8_t)(insn.pc >> (8 * k));
        return 1;
    }
    rc = frames_replay_reg_get(g->r, tid, g->arch->regs[i].name, v, size, &got);
    if (rc == 1 && got <= size) return 1;
    if (i == g->arch->pc && tid == g->end_tid && g->end_pc &&
        frames_replay_position(g->r) >= g->info.instructions) {
        size_t k;
        memset(v, 0, size);
        for (k = 0; k < size && k < 8; k++) v[k] = (uint8_t)(g->end_pc >> (8 * k));
        return 1;
    }
    return 0;
}

static void frames__gdb_put_reg(frames_gdb *g, size_t i, uint64_t tid) {
    uint8_t v[16];
    size_t size = g->arch->regs[i].bits / 8u;
    if (frames__gdb_reg_value(g, i, tid, v, size)) frames__gdb_hex_bytes(g, v, size);
    else {
        size_t k;
        for (k = 0; k < size; k++) frames__gdb_puts(g, "xx");
    }
}

static int frames__gdb_read_registers(frames_gdb *g) {
    size_t i;
    uint64_t tid = frames__gdb_reg_tid(g);
    frames__gdb_reply_begin(g);
    for (i = 0; i < g->arch->nregs; i++) frames__gdb_put_reg(g, i, tid);
    return frames__gdb_reply_end(g);
}

static int frames__gdb_read_register(frames_gdb *g, const char *p, const char *end) {
    uint64_t n;
    if (frames__gdb_hex_u64(&p, end, &n) < 0 || p != end) return frames__gdb_reply(g, "E01");
    if (n >= g->arch->nregs) return frames__gdb_reply(g, "E00");
    frames__gdb_reply_begin(g);
    frames__gdb_put_reg(g, (size_t)n, frames__gdb_reg_tid(g));
    return frames__gdb_reply_end(g);
}

/* m ADDR,LEN: the known prefix of the range (the protocol allows a short read); E0E when
   its first byte is unknown. Bytes of the current instruction come from the trace when
   the memory model does not know them (code is rarely read as data). */
static int frames__gdb_read_memory(frames_gdb *g, const char *p, const char *end) {
    uint64_t addr, len;
    uint8_t bytes[FRAMES_GDB_PACKET_SIZE / 2], known[FRAMES_GDB_PACKET_SIZE / 2];
    frames_replay_insn insn;
    size_t i, n;
    if (frames__gdb_hex_u64(&p, end, &addr) < 0 || p >= end || *p++ != ',' ||
        frames__gdb_hex_u64(&p, end, &len) < 0 || p != end)
        return frames__gdb_reply(g, "E01");
    n = len < sizeof bytes ? (size_t)len : sizeof bytes;
    if (n > UINT64_MAX - addr) n = (size_t)(UINT64_MAX - addr);
    if (n == 0) return frames__gdb_reply(g, "");
    frames_replay_mem_get(g->r, addr, bytes, known, n);
    if (frames__gdb_insn(g, &insn) && insn.len)
        for (i = 0; i < n; i++)
            if (!known[i] && addr + i >= insn.pc && addr + i - insn.pc < insn.len) {
                bytes[i] = insn.bytes[addr + i - insn.pc];
                known[i] = 1;
            }
    for (i = 0; i < n && known[i]; i++) {}
    if (i == 0) return frames__gdb_reply(g, "E0E");
    frames__gdb_reply_begin(g);
    frames__gdb_hex_bytes(g, bytes, i);
    return frames__gdb_reply_end(g);
}

/* qfThreadInfo / qsThreadInfo: ids in chunks that fit a packet. */
static int frames__gdb_thread_list(frames_gdb *g, int first) {
    size_t k = 0;
    if (first) g->thread_cursor = 0;
    if (g->thread_cursor >= g->ntids) return frames__gdb_reply(g, "l");
    frames__gdb_reply_begin(g);
    frames__gdb_puts(g, "m");
    for (; g->thread_cursor < g->ntids && k < 512; g->thread_cursor++, k++)
        frames__gdb_put_line(g, frames__gdb_fmt("%s%llx", k ? "," : "",
                                                (unsigned long long)(g->thread_cursor + 1)));
    return frames__gdb_reply_end(g);
}

/* A thread id of H / T / vCont: hex, or -1 (all); *id = 0 for "any" and "all". */
static int frames__gdb_thread_id(const char *p, const char *end, uint64_t *id) {
    if (end - p == 2 && p[0] == '-' && p[1] == '1') {
        *id = 0;
        return 0;
    }
    return frames__gdb_hex_u64(&p, end, id) < 0 || p != end ? -1 : 0;
}

/* --------------------------------------------------------------------------------------
   running: steps, breakpoints, watchpoints
   -------------------------------------------------------------------------------------- */

enum { FRAMES__GDB_STOP_STEP, FRAMES__GDB_STOP_BREAK, FRAMES__GDB_STOP_WATCH,
       FRAMES__GDB_STOP_BEGIN, FRAMES__GDB_STOP_END };

/* Move to pos and send the stop reply (why: a FRAMES__GDB_STOP_*, point the breakpoint or
   watchpoint behind it). */
static int frames__gdb_stop(frames_gdb *g, uint64_t pos, int why, const frames__gdb_point *point) {
    static const char *const watch_names[] = {"watch", "rwatch", "awatch"};
    if (frames_replay_position(g->r) != pos && frames_replay_goto(g->r, pos, &g->err) < 0)
        return frames__gdb_reply(g, "E03");
    g->g_thread = 0;   /* gdb reads the stopped thread next */
    frames__gdb_reply_begin(g);
    frames__gdb_put_line(g, frames__gdb_fmt("T05thread:%llx;", (unsigned long long)frames__gdb_id_of(
                                                                       g, frames__gdb_current_tid(g))));
    if (why == FRAMES__GDB_STOP_BREAK)
        frames__gdb_puts(g, point->kind == 0 ? "swbreak:;" : "hwbreak:;");
    else if (why == FRAMES__GDB_STOP_WATCH)
        frames__gdb_put_line(g, frames__gdb_fmt("%s:%llx;", watch_names[point->kind - 2],
                                                (unsigned long long)point->addr));
    else if (why == FRAMES__GDB_STOP_BEGIN) frames__gdb_puts(g, "replaylog:begin;");
    else if (why == FRAMES__GDB_STOP_END) frames__gdb_puts(g, "replaylog:end;");
    return frames__gdb_reply_end(g);
}

/* One instruction of the current thread in direction dir: the instructions of other
   threads in between run (or are undone) too, as they would in all-stop mode. The scan
   over them is bounded (FRAMES_GDB_MAX_STEP_SCAN); past it the stop is where the scan
   ended, in whichever thread runs there. */
static int frames__gdb_step(frames_gdb *g, int dir) {
    uint64_t pos = frames_replay_position(g->r), tid = frames__gdb_current_tid(g), n;
    frames_replay_insn insn;
    if (dir > 0 && pos >= g->info.instructions)
        return frames__gdb_stop(g, pos, FRAMES__GDB_STOP_END, NULL);
    if (dir < 0 && pos == 0) return frames__gdb_stop(g, 0, FRAMES__GDB_STOP_BEGIN, NULL);
    for (n = 0; n < FRAMES_GDB_MAX_STEP_SCAN; n++) {
        pos = dir > 0 ? pos + 1 : pos - 1;
        if (frames_replay_goto(g->r, pos, &g->err) < 0) return frames__gdb_reply(g, "E03");
        if (pos >= g->info.instructions)
            return frames__gdb_stop(g, pos, FRAMES__GDB_STOP_END, NULL);
        if (!frames__gdb_insn(g, &insn) || insn.thread == tid) break;
        if (pos == 0) return frames__gdb_stop(g, 0, FRAMES__GDB_STOP_BEGIN, NULL);
    }
    return frames__gdb_stop(g, pos, FRAMES__GDB_STOP_STEP, NULL);
}

static void frames__gdb_query_of(const frames__gdb_point *pt, frames_replay_query *q) {
    static const frames_replay_what whats[] = {FRAMES_REPLAY_PC, FRAMES_REPLAY_PC,
                                               FRAMES_REPLAY_MEM_WRITE, FRAMES_REPLAY_MEM_READ,
                                               FRAMES_REPLAY_MEM_ACCESS};
    memset(q, 0, sizeof *q);
    q->what = whats[pt->kind];
    q->pc = pt->addr;
    q->addr = pt->addr;
    q->len = pt->len ? pt->len : 1;
}

/* The first match of pt at an index >= from (forwards) or < from (backwards): 1 and *at,
   0 none, negative replay error. */
static int frames__gdb_find(frames_gdb *g, const frames__gdb_point *pt, uint64_t from, int dir,
                            uint64_t *at) {
    frames_replay_query q;
    int rc;
    frames__gdb_query_of(pt, &q);
    if (dir > 0 && from == 0) {   /* ">= 0": instruction 0 is the one match below 1 */
        rc = frames_replay_find(g->r, &q, 1, -1, at, &g->err);
        if (rc == FRAMES_OK) return 1;
        if (rc < 0) return rc;
        rc = frames_replay_find(g->r, &q, 0, 1, at, &g->err);
    } else rc = frames_replay_find(g->r, &q, dir > 0 ? from - 1 : from, dir, at, &g->err);
    return rc == FRAMES_OK ? 1 : rc < 0 ? rc : 0;
}

/* Continue in direction dir to the nearest stop: a breakpoint (stops before the
   instruction at its pc), a watchpoint (just past the instruction that accessed the
   range: after it forwards, before it backwards), or the end of the trace in that
   direction. Stop positions are compared; at a tie the watchpoint is reported. */
static int frames__gdb_continue(frames_gdb *g, int dir) {
    uint64_t pos = frames_replay_position(g->r), best = 0, at;
    const frames__gdb_point *hit = NULL;
    int why = 0, rc;
    size_t i;
    if (dir > 0 && pos >= g->info.instructions)
        return frames__gdb_stop(g, pos, FRAMES__GDB_STOP_END, NULL);
    if (dir < 0 && pos == 0) return frames__gdb_stop(g, 0, FRAMES__GDB_STOP_BEGIN, NULL);
    for (i = 0; i < g->nbps; i++) {   /* breakpoints: not the instruction about to run */
        rc = frames__gdb_find(g, &g->bps[i], dir > 0 ? pos + 1 : pos, dir, &at);
        if (rc < 0) return frames__gdb_reply(g, "E03");
        if (rc && (!hit || (dir > 0 ? at < best : at > best))) {
            best = at;
            hit = &g->bps[i];
            why = FRAMES__GDB_STOP_BREAK;
        }
    }
    for (i = 0; i < g->nwps; i++) {   /* watchpoints: past the access in either direction */
        uint64_t stop;
        rc = frames__gdb_find(g, &g->wps[i], pos, dir, &at);
        if (rc < 0) return frames__gdb_reply(g, "E03");
        stop = dir > 0 ? at + 1 : at;
        if (rc && (!hit || (dir > 0 ? stop <= best : stop >= best))) {
            best = stop;
            hit = &g->wps[i];
            why = FRAMES__GDB_STOP_WATCH;
        }
    }
    if (hit) return frames__gdb_stop(g, best, why, hit);
    return dir > 0 ? frames__gdb_stop(g, g->info.instructions, FRAMES__GDB_STOP_END, NULL)
                   : frames__gdb_stop(g, 0, FRAMES__GDB_STOP_BEGIN, NULL);
}

/* Z / z TYPE,ADDR,KIND[;conditions]: conditions are ignored (gdb evaluates them). */
static int frames__gdb_point_packet(frames_gdb *g, int insert, const char *p, const char *end) {
    frames__gdb_point pt, *list;
    size_t *count, cap, i;
    uint64_t type;
    if (frames__gdb_hex_u64(&p, end, &type) < 0 || type > 4 || p >= end || *p++ != ',' ||
        frames__gdb_hex_u64(&p, end, &pt.addr) < 0 || p >= end || *p++ != ',' ||
        frames__gdb_hex_u64(&p, end, &pt.len) < 0 || (p != end && *p != ';'))
        return frames__gdb_reply(g, "E01");
    pt.kind = (int)type;
    if (type >= 2 && (pt.len == 0 || pt.len > 4096 || pt.len > UINT64_MAX - pt.addr))
        return frames__gdb_reply(g, "E01");
    list = type < 2 ? g->bps : g->wps;
    count = type < 2 ? &g->nbps : &g->nwps;
    cap = type < 2 ? FRAMES_GDB_MAX_BREAKPOINTS : FRAMES_GDB_MAX_WATCHPOINTS;
    for (i = 0; i < *count; i++)
        if (list[i].kind == pt.kind && list[i].addr == pt.addr &&
            (type < 2 || list[i].len == pt.len))
            break;
    if (insert) {
        if (i < *count) return frames__gdb_reply(g, "OK");   /* inserted twice: once */
        if (*count >= cap) return frames__gdb_reply(g, "E1C");   /* ENOSPC */
        list[(*count)++] = pt;
    } else if (i < *count) {
        list[i] = list[--*count];
    }
    return frames__gdb_reply(g, "OK");
}

/* vCont;ACTION[:TID]...: the server runs one thread of the trace at a time, so a step
   anywhere in the list steps, otherwise it continues. */
static int frames__gdb_vcont(frames_gdb *g, const char *p, const char *end) {
    int step = 0, any = 0;
    while (p < end) {
        if (*p++ != ';' || p >= end) return frames__gdb_reply(g, "E01");
        if (*p == 's' || *p == 'S') step = 1;
        else if (*p != 'c' && *p != 'C') return frames__gdb_reply(g, "E01");
        any = 1;
        while (p < end && *p != ';') p++;
    }
    if (!any) return frames__gdb_reply(g, "E01");
    return step ? frames__gdb_step(g, 1) : frames__gdb_continue(g, 1);
}

/* --------------------------------------------------------------------------------------
   monitor commands
   -------------------------------------------------------------------------------------- */

/* Console output of a monitor command: an O packet of the text in hex. */
static int frames__gdb_console(frames_gdb *g, frames__gdb_line line) {
    frames__gdb_reply_begin(g);
    frames__gdb_puts(g, "O");
    frames__gdb_hex_bytes(g, (const uint8_t *)line.s, line.n);
    return frames__gdb_reply_end(g);
}

static int frames__gdb_say_when(frames_gdb *g) {
    return frames__gdb_console(g, frames__gdb_fmt("Current instruction: %llu of %llu\n",
                                                  (unsigned long long)frames_replay_position(g->r),
                                                  (unsigned long long)g->info.instructions));
}

static int frames__gdb_monitor_goto(frames_gdb *g, const char *arg) {
    uint64_t to = 0;
    const char *p = arg;
    if (!strcmp(arg, "begin")) to = 0;
    else if (!strcmp(arg, "end")) to = g->info.instructions;
    else {
        for (; *p >= '0' && *p <= '9' && to <= UINT64_MAX / 10; p++) to = to * 10 + (uint64_t)(*p - '0');
        if (p == arg || *p)
            return frames__gdb_console(g, frames__gdb_fmt("goto: not an instruction index: %.40s\n", arg));
    }
    if (to > g->info.instructions)
        return frames__gdb_console(g, frames__gdb_fmt("goto: %llu is past the end (%llu instructions)\n",
                                                      (unsigned long long)to,
                                                      (unsigned long long)g->info.instructions));
    if (frames_replay_goto(g->r, to, &g->err) < 0)
        return frames__gdb_console(g, frames__gdb_fmt("goto: %s\n", g->err.message));
    g->g_thread = 0;
    return frames__gdb_say_when(g);
}

/* qRcmd,HEX: the command is decoded from hex; its output goes in O packets, then OK. */
static int frames__gdb_monitor(frames_gdb *g, const char *p, const char *end) {
    char cmd[256];
    size_t n = 0;
    int rc;
    const char *arg;
    if ((end - p) % 2) return frames__gdb_reply(g, "E01");
    for (; p < end; p += 2) {
        int hi = frames__gdb_hex_digit((uint8_t)p[0]), lo = frames__gdb_hex_digit((uint8_t)p[1]);
        if (hi < 0 || lo < 0 || n + 1 >= sizeof cmd) return frames__gdb_reply(g, "E01");
        cmd[n++] = (char)(hi << 4 | lo);
    }
    cmd[n] = 0;
    while (n && cmd[n - 1] == ' ') cmd[--n] = 0;
    arg = cmd;
    while (*arg == ' ') arg++;
    if (!strcmp(arg, "when")) rc = frames__gdb_say_when(g);
    else if (!strncmp(arg, "goto ", 5)) {
        arg += 5;
        while (*arg == ' ') arg++;
        rc = frames__gdb_monitor_goto(g, arg);
    } else if (!strcmp(arg, "help") || !*arg)
        rc = frames__gdb_console(
            g, frames__gdb_fmt("monitor when          the index of the next instruction to execute\n"
                               "monitor goto I|begin|end   move to before instruction I\n"));
    else rc = frames__gdb_console(g, frames__gdb_fmt("unknown monitor command '%.60s' (try 'monitor help')\n",
                                                     arg));
    return rc < 0 ? rc : frames__gdb_reply(g, "OK");
}

/* --------------------------------------------------------------------------------------
   packets
   -------------------------------------------------------------------------------------- */

static int frames__gdb_starts(const char *p, const char *end, const char *prefix) {
    size_t n = strlen(prefix);
    return (size_t)(end - p) >= n && !memcmp(p, prefix, n);
}

static int frames__gdb_is(const char *p, const char *end, const char *word) {
    return (size_t)(end - p) == strlen(word) && frames__gdb_starts(p, end, word);
}

/* qXfer:features:read:ANNEX:OFFSET,LENGTH */
static int frames__gdb_xfer_features(frames_gdb *g, const char *p, const char *end) {
    uint64_t off, len;
    static const char annex[] = "target.xml:";
    size_t n;
    if (!frames__gdb_starts(p, end, annex)) return frames__gdb_reply(g, "E00");
    p += sizeof annex - 1;
    if (frames__gdb_hex_u64(&p, end, &off) < 0 || p >= end || *p++ != ',' ||
        frames__gdb_hex_u64(&p, end, &len) < 0 || p != end)
        return frames__gdb_reply(g, "E01");
    if (off >= g->xml_len) return frames__gdb_reply(g, "l");
    /* escaping may double every character: half a packet of data at most */
    n = len < FRAMES_GDB_PACKET_SIZE / 2 - 2 ? (size_t)len : FRAMES_GDB_PACKET_SIZE / 2 - 2;
    if (n > g->xml_len - off) n = (size_t)(g->xml_len - off);
    frames__gdb_reply_begin(g);
    frames__gdb_puts(g, off + n >= g->xml_len ? "l" : "m");
    frames__text_put(&g->text, g->xml + off, n);
    return frames__gdb_reply_end(g);
}

static int frames__gdb_query(frames_gdb *g, const char *p, const char *end) {
    if (frames__gdb_starts(p, end, "qSupported")) {
        frames__gdb_reply_begin(g);
        frames__gdb_put_line(g, frames__gdb_fmt("PacketSize=%x;QStartNoAckMode+;qXfer:features:read+;"
                                                "ReverseStep+;ReverseContinue+;swbreak+;hwbreak+;"
                                                "vContSupported+",
                                                (unsigned)FRAMES_GDB_PACKET_SIZE));
        return frames__gdb_reply_end(g);
    }
    if (frames__gdb_starts(p, end, "qXfer:features:read:"))
        return frames__gdb_xfer_features(g, p + 20, end);
    if (frames__gdb_is(p, end, "qC")) {
        frames__gdb_reply_begin(g);
        frames__gdb_put_line(g, frames__gdb_fmt("QC%llx", (unsigned long long)frames__gdb_id_of(
                                                              g, frames__gdb_current_tid(g))));
        return frames__gdb_reply_end(g);
    }
    if (frames__gdb_is(p, end, "qfThreadInfo")) return frames__gdb_thread_list(g, 1);
    if (frames__gdb_is(p, end, "qsThreadInfo")) return frames__gdb_thread_list(g, 0);
    if (frames__gdb_starts(p, end, "qAttached")) return frames__gdb_reply(g, "1");
    if (frames__gdb_starts(p, end, "qRcmd,")) return frames__gdb_monitor(g, p + 6, end);
    if (frames__gdb_starts(p, end, "qSymbol")) return frames__gdb_reply(g, "OK");
    return frames__gdb_reply(g, "");
}

static int frames__gdb_packet(frames_gdb *g, const char *p, const char *end) {
    uint64_t id;
    if (p == end) return frames__gdb_reply(g, "");
    switch (*p) {
    case '?': return frames__gdb_stop(g, frames_replay_position(g->r), FRAMES__GDB_STOP_STEP, NULL);
    case 'g': return p + 1 == end ? frames__gdb_read_registers(g) : frames__gdb_reply(g, "E01");
    case 'p': return frames__gdb_read_register(g, p + 1, end);
    case 'm': return frames__gdb_read_memory(g, p + 1, end);
    case 'G': case 'P': case 'M': case 'X': return frames__gdb_reply(g, "E02");
    case 's': case 'S': return frames__gdb_step(g, 1);
    case 'c': case 'C': return frames__gdb_continue(g, 1);
    case 'b':
        if (frames__gdb_is(p, end, "bs")) return frames__gdb_step(g, -1);
        if (frames__gdb_is(p, end, "bc")) return frames__gdb_continue(g, -1);
        return frames__gdb_reply(g, "");
    case 'Z': case 'z': return frames__gdb_point_packet(g, *p == 'Z', p + 1, end);
    case 'H':
        if (end - p < 3 || (p[1] != 'g' && p[1] != 'c') ||
            frames__gdb_thread_id(p + 2, end, &id) < 0 || id > g->ntids)
            return frames__gdb_reply(g, "E01");
        if (p[1] == 'g') g->g_thread = id;
        return frames__gdb_reply(g, "OK");
    case 'T':
        return frames__gdb_thread_id(p + 1, end, &id) == 0 && id >= 1 && id <= g->ntids
                   ? frames__gdb_reply(g, "OK") : frames__gdb_reply(g, "E01");
    case 'q': return frames__gdb_query(g, p, end);
    case 'Q':
        if (frames__gdb_is(p, end, "QStartNoAckMode")) {
            int rc = frames__gdb_reply(g, "OK");   /* still acknowledged */
            g->no_ack = 1;
            return rc;
        }
        return frames__gdb_reply(g, "");
    case 'v':
        if (frames__gdb_is(p, end, "vCont?")) return frames__gdb_reply(g, "vCont;c;C;s;S");
        if (frames__gdb_starts(p, end, "vCont;")) return frames__gdb_vcont(g, p + 5, end);
        if (frames__gdb_starts(p, end, "vKill")) {
            g->closed = 1;
            return frames__gdb_reply(g, "OK");
        }
        return frames__gdb_reply(g, "");
    case 'D':
        g->closed = 1;
        return frames__gdb_reply(g, "OK");
    case 'k':
        g->closed = 1;
        return FRAMES_OK;
    default: return frames__gdb_reply(g, "");
    }
}

/* --------------------------------------------------------------------------------------
   framing: input
   -------------------------------------------------------------------------------------- */

/* One byte of packet data after escapes: stored, or the packet marked too long. */
static void frames__gdb_data_byte(frames_gdb *g, char c) {
    if (g->in_len < FRAMES_GDB_PACKET_SIZE) g->in[g->in_len++] = c;
    else g->overflow = 1;
}

/* Run-length encoding: "X*n" is X followed by n - 29 more copies (n printable). */
static void frames__gdb_repeat(frames_gdb *g, uint8_t count) {
    int k;
    if (count < 29 + 3 || count > 126 || g->in_len == 0) {
        g->overflow = 1;   /* not a valid count: the packet is malformed */
        return;
    }
    for (k = 0; k < count - 29; k++) frames__gdb_data_byte(g, g->in[g->in_len - 1]);
}

static int frames__gdb_packet_done(frames_gdb *g) {
    int rc;
    if (g->sum != g->ck) return g->no_ack ? FRAMES_OK : frames__gdb_send_raw(g, "-", 1);
    if (!g->no_ack && (rc = frames__gdb_send_raw(g, "+", 1)) < 0) return rc;
    if (g->overflow) return frames__gdb_reply(g, "E01");
    g->in[g->in_len] = 0;
    return frames__gdb_packet(g, g->in, g->in + g->in_len);
}

static int frames__gdb_byte(frames_gdb *g, uint8_t c) {
    int d;
    switch (g->state) {
    case FRAMES__GDB_IDLE:
        if (c == '$') {
            g->state = FRAMES__GDB_DATA;
            g->in_len = 0;
            g->sum = 0;
            g->escape = g->overflow = 0;
        } else if (c == '-' && !g->no_ack && g->out_len)
            return frames__gdb_send_raw(g, g->out, g->out_len);
        /* '+', 0x03 (nothing runs between packets) and noise are dropped */
        return FRAMES_OK;
    case FRAMES__GDB_DATA:
        if (c == '#' && !g->escape) {
            g->state = FRAMES__GDB_CK1;
            return FRAMES_OK;
        }
        if (c == '$' && !g->escape) {   /* a new packet: the client gave up on this one */
            g->in_len = 0;
            g->sum = 0;
            g->overflow = 0;
            return FRAMES_OK;
        }
        g->sum = (uint8_t)(g->sum + c);
        if (g->escape) {
            g->escape = 0;
            frames__gdb_data_byte(g, (char)(c ^ 0x20));
        } else if (c == '}') g->escape = 1;
        else if (c == '*') g->state = FRAMES__GDB_RLE;
        else frames__gdb_data_byte(g, (char)c);
        return FRAMES_OK;
    case FRAMES__GDB_RLE:
        g->sum = (uint8_t)(g->sum + c);
        g->state = FRAMES__GDB_DATA;
        frames__gdb_repeat(g, c);
        return FRAMES_OK;
    case FRAMES__GDB_CK1:
        d = frames__gdb_hex_digit(c);
        g->ck = (uint8_t)(d < 0 ? 0 : d << 4);
        g->state = d < 0 ? FRAMES__GDB_CK2_BAD : FRAMES__GDB_CK2;
        return FRAMES_OK;
    case FRAMES__GDB_CK2:
    case FRAMES__GDB_CK2_BAD:
        d = frames__gdb_hex_digit(c);
        if (g->state == FRAMES__GDB_CK2 && d >= 0) g->ck = (uint8_t)(g->ck | d);
        else g->ck = (uint8_t)~g->sum;
        g->state = FRAMES__GDB_IDLE;
        return frames__gdb_packet_done(g);
    }
    g->state = FRAMES__GDB_IDLE;
    return FRAMES_OK;
}

/* --------------------------------------------------------------------------------------
   lifecycle
   -------------------------------------------------------------------------------------- */

FRAMES_GDB_DEF void frames_gdb_options_default(frames_gdb_options *o) { memset(o, 0, sizeof *o); }

FRAMES_GDB_DEF int frames_gdb_open(frames_gdb **out, frames_replay *r, const frames_gdb_options *o,
                                   frames_error *err) {
    frames_gdb *g;
    size_t n;
    int rc;
    *out = NULL;
    frames__clear_error(err);
    if (!r || !o || !o->write)
        return frames__fail(err, FRAMES_E_INVALID, FRAMES_NO_POS, FRAMES_NO_POS,
                            "gdb server: a replay and a write callback are required");
    g = (frames_gdb *)frames__zalloc(sizeof *g, o->alloc_ctx);
    if (!g) return frames__fail(err, FRAMES_E_NOMEM, FRAMES_NO_POS, FRAMES_NO_POS, "out of memory");
    g->opt = *o;
    g->r = r;
    frames__clear_error(&g->err);
    if ((rc = frames_replay_info_get(r, &g->info)) < 0) {
        frames__fail(err, rc, FRAMES_NO_POS, FRAMES_NO_POS, "gdb server: no trace information");
        goto fail;
    }
    g->arch = frames__gdb_arch_of(g->info.arch, g->info.machine);
    if (!g->arch) {
        rc = frames__fail(err, FRAMES_E_GDB_ARCH, FRAMES_NO_POS, FRAMES_NO_POS,
                          "gdb server: no register table for architecture %s",
                          frames_arch_name((uint64_t)g->info.arch));
        goto fail;
    }
    g->xml_len = frames__gdb_xml(g->arch, NULL, 0);
    g->xml = (char *)FRAMES_MALLOC(g->xml_len + 1, o->alloc_ctx);
    n = frames_replay_threads(r, NULL, 0);
    if (n > FRAMES_GDB_MAX_THREADS) n = FRAMES_GDB_MAX_THREADS;
    g->tids = (uint64_t *)FRAMES_MALLOC((n ? n : 1) * sizeof *g->tids, o->alloc_ctx);
    if (!g->xml || !g->tids) {
        rc = frames__fail(err, FRAMES_E_NOMEM, FRAMES_NO_POS, FRAMES_NO_POS, "out of memory");
        goto fail;
    }
    frames__gdb_xml(g->arch, g->xml, g->xml_len + 1);
    g->ntids = frames_replay_threads(r, g->tids, n);
    if (g->ntids > n) g->ntids = n;
    if (g->ntids) g->end_tid = g->tids[0];
    if (g->info.instructions) {
        frames_replay_insn last;
        if ((rc = frames_replay_goto(r, g->info.instructions - 1, err)) < 0) goto fail;
        if (frames_replay_insn_get(r, &last) == FRAMES_OK) {
            g->end_tid = last.thread;
            g->end_pc = last.len ? last.pc + last.len : 0;
        }
    }
    if ((rc = frames_replay_goto(r, 0, err)) < 0) goto fail;
    *out = g;
    return FRAMES_OK;
fail:
    frames_gdb_close(g);
    return rc;
}

FRAMES_GDB_DEF void frames_gdb_close(frames_gdb *g) {
    void *actx;
    if (!g) return;
    actx = g->opt.alloc_ctx;
    FRAMES_FREE(g->xml, actx);
    FRAMES_FREE(g->tids, actx);
    FRAMES_FREE(g, actx);
}

FRAMES_GDB_DEF int frames_gdb_feed(frames_gdb *g, const void *data, size_t n) {
    const uint8_t *p = (const uint8_t *)data;
    size_t i;
    for (i = 0; i < n && !g->closed; i++) {
        int rc = frames__gdb_byte(g, p[i]);
        if (rc < 0) return rc;
    }
    return g->closed ? FRAMES_GDB_CLOSED : FRAMES_OK;
}

FRAMES_GDB_DEF const frames_error *frames_gdb_error(const frames_gdb *g) { return &g->err; }

FRAMES_GDB_DEF const char *frames_gdb_target_xml(const frames_gdb *g) { return g->xml; }

#ifdef __cplusplus
}
#endif
#endif /* FRAMES_GDB_IMPLEMENTATION_INCLUDED */
#endif /* FRAMES_GDB_IMPLEMENTATION */

/*
 * MIT License
 *
 * Copyright (c) 2026 the frames authors
 *
 * Permission is hereby granted, free of charge, to any person obtaining a copy
 * of this software and associated documentation files (the "Software"), to deal
 * in the Software without restriction, including without limitation the rights
 * to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
 * copies of the Software, and to permit persons to whom the Software is
 * furnished to do so, subject to the following conditions:
 *
 * The above copyright notice and this permission notice shall be included in all
 * copies or substantial portions of the Software.
 *
 * THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
 * IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
 * FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
 * AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
 * LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
 * OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
 * SOFTWARE.
 */
