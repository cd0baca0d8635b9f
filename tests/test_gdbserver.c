/* test_gdbserver.c - `frames gdbserver` against the real gdb: a small program without
   libc (every register is defined by its own code) is recorded with the default engine,
   then gdb steps the live program instruction by instruction and gdb on the trace
   (target remote | frames gdbserver) goes forwards, backwards, to `monitor goto`
   positions, to a breakpoint backwards and to watchpoints both ways: at every stop the
   registers and the program's memory equal the live run's at the same instruction index
   (stack addresses moved by the one offset Valgrind's stack has). Also hostile packets on
   a pipe and the --listen path on 127.0.0.1. Skips without gdb or the recorder. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "frames.h"
#include "testutil.h"

#ifdef TU_RECORD_BUILT

#define dir tu_workdir
#define at tu_workdir_path

/* The program: _start clears every register, work() writes buf[] (buf[3] twice) through
   calls of mix(), then exit. */
static const char prog_src[] =
    "typedef unsigned long u64;\n"
    "u64 buf[8];\n"
    "volatile u64 counter;\n"
    "__attribute__((noinline)) static u64 mix(u64 x) { return x * 0x9e3779b97f4a7c15ull ^ (x >> 7); }\n"
    "__attribute__((noinline)) u64 work(void) {\n"
    "    u64 acc = 1;\n"
    "    for (int i = 0; i < 12; i++) {\n"
    "        acc = mix(acc + (u64)i);\n"
    "        buf[i & 7] = acc;\n"
    "        counter += acc & 0xff;\n"
    "    }\n"
    "    return counter;\n"
    "}\n"
    "__attribute__((noreturn)) void start_c(void) {\n"
    "    u64 r = work();\n"
    "    __asm__ volatile(\"mov $60, %%eax\\n\\tsyscall\" :: \"D\"(r & 1) : \"rax\");\n"
    "    __builtin_unreachable();\n"
    "}\n"
    "__asm__(\".globl _start\\n_start:\\n\"\n"
    "        \"xor %eax,%eax\\n xor %ebx,%ebx\\n xor %ecx,%ecx\\n xor %edx,%edx\\n xor %esi,%esi\\n\"\n"
    "        \"xor %edi,%edi\\n xor %ebp,%ebp\\n xor %r8d,%r8d\\n xor %r9d,%r9d\\n xor %r10d,%r10d\\n\"\n"
    "        \"xor %r11d,%r11d\\n xor %r12d,%r12d\\n xor %r13d,%r13d\\n xor %r14d,%r14d\\n\"\n"
    "        \"xor %r15d,%r15d\\n and $-16,%rsp\\n call start_c\\n\");\n";

/* gdb's Python: one line per stop, "TAG POS" then the registers of REGS and the nine
   quadwords buf[0..7] and counter, in hex, "?" where gdb cannot read them. */
static const char py_common[] =
    "import gdb\n"
    "REGS = ['rip','rax','rbx','rcx','rdx','rsi','rdi','rbp','rsp','r8','r9','r10','r11',\n"
    "        'r12','r13','r14','r15','eflags']\n"
    "def val(e):\n"
    "    try: return '%x' % (int(gdb.parse_and_eval(e)) & 0xffffffffffffffff)\n"
    "    except gdb.error: return '?'\n"
    "def mem():\n"
    "    inf = gdb.selected_inferior(); out = []\n"
    "    base = int(gdb.parse_and_eval('(long)&buf'))\n"
    "    for a in [base + 8 * i for i in range(8)] + [int(gdb.parse_and_eval('(long)&counter'))]:\n"
    "        try: out.append('%x' % int.from_bytes(bytes(inf.read_memory(a, 8)), 'little'))\n"
    "        except gdb.error: out.append('?')\n"
    "    return out\n"
    "def line(tag, pos):\n"
    "    print('%s %d %s' % (tag, pos, ' '.join([val('$' + r) for r in REGS] + mem())), flush=True)\n"
    "def when():\n"
    "    return int(gdb.execute('monitor when', to_string=True).split()[2])\n"
    "def goto(i):\n"
    "    gdb.execute('monitor goto %s' % i, to_string=True)\n"
    "    gdb.execute('maint flush register-cache')\n";

/* The live run: stop before the exit system call. */
static const char py_live[] =
    "gdb.execute('starti', to_string=True)\n"
    "inf = gdb.selected_inferior(); k = 0\n"
    "while True:\n"
    "    line('L', k)\n"
    "    pc = int(gdb.parse_and_eval('$pc'))\n"
    "    if bytes(inf.read_memory(pc, 2)) == b'\\x0f\\x05': break\n"
    "    gdb.execute('stepi', to_string=True); k += 1\n"
    "print('MIX %x' % int(gdb.parse_and_eval('(long)&mix')))\n"
    "gdb.execute('kill')\n";

/* The trace: forwards to the end, backwards to the start, goto, a breakpoint reached
   backwards (twice), the watchpoint on buf[3] forwards and backwards (twice each). */
static const char py_trace[] =
    "gdb.execute('set trust-readonly-sections on')\n"
    "gdb.execute('target remote | ' + SERVER, to_string=True)\n"
    "while True:\n"
    "    p = when(); line('F', p)\n"
    "    gdb.execute('stepi', to_string=True)\n"
    "    if when() == p: break\n"
    "while True:\n"
    "    gdb.execute('reverse-stepi', to_string=True)\n"
    "    p = when(); line('R', p)\n"
    "    if p == 0: break\n"
    "for i in GOTO:\n"
    "    goto(i); line('G', when())\n"
    "goto('end')\n"
    "gdb.execute('break *mix', to_string=True)\n"
    "for k in range(2):\n"
    "    gdb.execute('reverse-continue', to_string=True); line('B', when())\n"
    "gdb.execute('delete')\n"
    "goto(0)\n"
    "gdb.execute('watch buf[3]', to_string=True)\n"
    "for k in range(2):\n"
    "    gdb.execute('continue', to_string=True); line('W+', when())\n"
    "goto('end')\n"
    "for k in range(2):\n"
    "    gdb.execute('reverse-continue', to_string=True); line('W-', when())\n"
    "gdb.execute('delete')\n"
    "gdb.execute('detach', to_string=True)\n";

#define NREGS 18
#define NMEM 9
#define NVALS (NREGS + NMEM)
#define RSP 8            /* place of rsp in REGS */
#define EFLAGS 17        /* place of eflags in REGS */
/* Flags an instruction leaves undefined (SF, ZF, AF, PF after imul, as the program's mix()
   does) Valgrind computes its own way, not as the processor does: the trace says what
   the recorder saw, so those four bits are left out of the comparison. */
#define EFLAGS_DEFINED (~(uint64_t)(0x80 | 0x40 | 0x10 | 0x04))
#define MAX_LINES 4096

typedef struct line {
    char tag[4];
    long pos;
    int known[NVALS];
    uint64_t v[NVALS];
} line;

typedef struct run {
    line lines[MAX_LINES];
    size_t n;
    uint64_t mix;
} run;

static run live, trace;

static int gdb_installed(void) {
    int st;
    free(tu_run(&st, "gdb --version >/dev/null 2>&1"));
    return st == 0;
}

/* The output of gdb -nx -batch running the Python script, parsed into r. */
static void run_gdb(run *r, const char *pyfile, const char *args) {
    char *out = tu_run_ok("gdb", "cd %s && LC_ALL=C timeout 120 gdb -nx -batch %s -x %s ./prog </dev/null 2>&1",
                          dir, args, pyfile);
    char *s = out, *nl;
    r->n = 0;
    for (; *s; s = nl + 1) {
        line *l = &r->lines[r->n];
        char tag[8], *tok, *save = NULL;
        int i;
        nl = strchr(s, '\n');
        if (!nl) nl = s + strlen(s);
        if (!strncmp(s, "MIX ", 4)) r->mix = strtoull(s + 4, NULL, 16);
        if (sscanf(s, "%7s %ld", tag, &l->pos) == 2 && strchr("LFRGBW", tag[0]) && strlen(tag) <= 2 &&
            (tag[1] == 0 || tag[1] == '+' || tag[1] == '-')) {
            char *copy = strndup(s, (size_t)(nl - s));
            strcpy(l->tag, tag);
            tok = strtok_r(copy, " ", &save);
            tok = strtok_r(NULL, " ", &save);
            for (i = 0; i < NVALS && (tok = strtok_r(NULL, " ", &save)); i++) {
                l->known[i] = strcmp(tok, "?") != 0;
                l->v[i] = l->known[i] ? strtoull(tok, NULL, 16) : 0;
            }
            free(copy);
            if (i == NVALS && r->n + 1 < MAX_LINES) r->n++;
        }
        if (!*nl) break;
    }
    if (!r->n) fprintf(stderr, "gdb printed:\n%s\n", out);
    free(out);
    assert_true(r->n > 0);
}

static const line *live_at(long pos) {
    size_t i;
    for (i = 0; i < live.n; i++)
        if (live.lines[i].pos == pos) return &live.lines[i];
    return NULL;
}

/* Valgrind runs the program on a stack of its own: live = trace + offset for stack
   addresses, one offset for the whole run (taken from the first known rsp). */
static int64_t stack_offset;

static int same_value(uint64_t lv, uint64_t tv, uint64_t live_rsp) {
    if (lv == tv) return 1;
    return (int64_t)(lv - tv) == stack_offset && lv - (live_rsp - 0x100000) < 0x200000;
}

static size_t compared, values;

/* Every value the trace knows at l equals the live run's at the same index. */
static void check_line(const line *l) {
    const line *ref = live_at(l->pos);
    int i;
    if (!ref) return;   /* past the live run (after the exit system call) */
    assert_true(l->known[0]);   /* rip is always known */
    for (i = 0; i < NVALS; i++) {
        values++;
        if (!l->known[i]) continue;
        compared++;
        if (!ref->known[i] ||
            (i == EFLAGS ? (ref->v[i] ^ l->v[i]) & EFLAGS_DEFINED
                         : !same_value(ref->v[i], l->v[i], ref->v[RSP]))) {
            print_error("%s at instruction %ld: value %d is %llx in the trace, %llx live\n",
                        l->tag, l->pos, i, (unsigned long long)l->v[i],
                        (unsigned long long)ref->v[i]);
            fail();
        }
    }
}

static const line *next_tag(size_t *i, const char *tag) {
    for (; *i < trace.n; (*i)++)
        if (!strcmp(trace.lines[*i].tag, tag)) return &trace.lines[(*i)++];
    return NULL;
}

static void record_and_run(void) {
    char py[1 << 14], *out;
    int st;
    size_t i;
    long last;
    assert_int_equal(tu_write_file(at("prog.c"), prog_src, strlen(prog_src)), 0);
    out = tu_run_ok("cc", "cc -g -O1 -static -nostdlib -fno-pie -no-pie -fno-stack-protector "
                          "-fcf-protection=none -o %s %s 2>&1", at("prog"), at("prog.c"));
    free(out);
    out = tu_run(&st, "cd %s && ulimit -c 0; %s record -f -o t.frames -- ./prog >rec.txt 2>&1", dir,
                 tu_frames_bin());
    free(out);
    assert_int_equal(st, 0);
    snprintf(py, sizeof py, "%s%s", py_common, py_live);
    assert_int_equal(tu_write_file(at("live.py"), py, strlen(py)), 0);
    run_gdb(&live, "live.py", "");
    last = live.lines[live.n - 1].pos;
    snprintf(py, sizeof py, "SERVER = '%s gdbserver t.frames'\nGOTO = [%ld, 3, %ld]\n%s%s",
             tu_frames_bin(), last / 2, last, py_common, py_trace);
    assert_int_equal(tu_write_file(at("trace.py"), py, strlen(py)), 0);
    run_gdb(&trace, "trace.py", "");
    for (i = 0; i < trace.n; i++) {
        const line *l = &trace.lines[i], *ref = live_at(l->pos);
        if (l->known[RSP] && ref) {
            stack_offset = (int64_t)(ref->v[RSP] - l->v[RSP]);
            break;
        }
    }
}

static void test_forwards_and_backwards(void **state) {
    size_t i, f = 0, r = 0;
    long expect_f = 0, expect_r = -1;
    (void)state;
    for (i = 0; i < trace.n; i++) {
        const line *l = &trace.lines[i];
        if (!strcmp(l->tag, "F")) {
            assert_int_equal(l->pos, expect_f++);   /* stepi moves one instruction */
            f++;
        } else if (!strcmp(l->tag, "R")) {
            if (expect_r < 0) expect_r = expect_f - 2;   /* from the end, back one by one */
            assert_int_equal(l->pos, expect_r--);
            r++;
        } else continue;
        check_line(l);
    }
    assert_true(f >= (size_t)live.n && r >= (size_t)live.n - 1);
    assert_int_equal(expect_r, -1);   /* down to instruction 0 */
    /* most values are known (registers from the first write or read, memory once
       touched): a server that answers "unknown" everywhere would compare nothing */
    printf("compared %zu of %zu values\n", compared, values);
    assert_true(compared * 4 > values * 3);
}

static void test_goto(void **state) {
    size_t i = 0;
    long last = live.lines[live.n - 1].pos, want[3];
    int k;
    (void)state;
    want[0] = last / 2;
    want[1] = 3;
    want[2] = last;
    for (k = 0; k < 3; k++) {
        const line *l = next_tag(&i, "G");
        assert_non_null(l);
        assert_int_equal(l->pos, want[k]);
        check_line(l);
    }
}

/* reverse-continue to `break *mix` from the end: the last two executions of mix. */
static void test_breakpoint_backwards(void **state) {
    size_t i = 0, k;
    long hits[2] = {-1, -1};
    (void)state;
    assert_true(live.mix != 0);
    for (k = live.n; k-- > 0;)
        if (live.lines[k].v[0] == live.mix) {
            if (hits[0] < 0) hits[0] = live.lines[k].pos;
            else if (hits[1] < 0) hits[1] = live.lines[k].pos;
        }
    assert_true(hits[1] >= 0);
    for (k = 0; k < 2; k++) {
        const line *l = next_tag(&i, "B");
        assert_non_null(l);
        assert_int_equal(l->pos, hits[k]);
        assert_int_equal(l->v[0], live.mix);
        check_line(l);
    }
}

/* `watch buf[3]`: forwards the stops are just after each write of the live run (where
   its value changes), backwards just before them, the last one first. */
static void test_watchpoints(void **state) {
    size_t i = 0, k, nw = 0;
    long writes[4];
    (void)state;
    for (k = 1; k < live.n && nw < 4; k++)
        if (live.lines[k].v[NREGS + 3] != live.lines[k - 1].v[NREGS + 3]) writes[nw++] = live.lines[k].pos;
    assert_int_equal(nw, 2);   /* i = 3 and i = 11 */
    for (k = 0; k < 2; k++) {
        const line *l = next_tag(&i, "W+");
        assert_non_null(l);
        assert_int_equal(l->pos, writes[k]);
        assert_true(l->known[NREGS + 3]);
        check_line(l);
    }
    i = 0;
    for (k = 0; k < 2; k++) {
        const line *l = next_tag(&i, "W-");
        assert_non_null(l);
        assert_int_equal(l->pos, writes[1 - k] - 1);
        check_line(l);
    }
}

/* ---- the protocol on a pipe, without gdb */

typedef struct server {
    pid_t pid;
    int fd;   /* socketpair end: the server's stdin and stdout */
} server;

static void server_start(server *s, const char *trace) {
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    s->pid = fork();
    assert_true(s->pid >= 0);
    if (s->pid == 0) {
        char cmd[2048];
        dup2(sv[1], 0);
        dup2(sv[1], 1);
        close(sv[0]);
        close(sv[1]);
        snprintf(cmd, sizeof cmd, "exec %s gdbserver '%s' 2>/dev/null", tu_frames_bin(), trace);
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    close(sv[1]);
    s->fd = sv[0];
}

static void send_raw(server *s, const void *p, size_t n) {
    const char *c = (const char *)p;
    while (n) {
        ssize_t w = write(s->fd, c, n);
        assert_true(w > 0);
        c += w;
        n -= (size_t)w;
    }
}

static void send_packet(server *s, const char *data) {
    char tail[4];
    unsigned sum = 0;
    size_t i, n = strlen(data);
    for (i = 0; i < n; i++) sum += (unsigned char)data[i];
    snprintf(tail, sizeof tail, "#%02x", sum & 0xff);
    send_raw(s, "$", 1);
    send_raw(s, data, n);
    send_raw(s, tail, 3);
}

/* Bytes until a complete "$...#cs" arrived (ack_only: one '+' or '-'), within 10 s. */
static void receive(server *s, char *out, size_t cap, int ack_only) {
    size_t n = 0;
    out[0] = 0;
    for (;;) {
        struct pollfd pfd;
        char *hash;
        ssize_t got;
        pfd.fd = s->fd;
        pfd.events = POLLIN;
        if (poll(&pfd, 1, 10000) <= 0) break;
        got = read(s->fd, out + n, 1);
        if (got <= 0) break;
        n += (size_t)got;
        out[n] = 0;
        if (ack_only || n + 2 >= cap) break;
        hash = strchr(out, '#');
        if (hash && strlen(hash) >= 3) break;
    }
}

/* Send a packet and return the reply's data (acks dropped), in a static buffer. */
static const char *ask(server *s, const char *data) {
    static char buf[40000];
    char *start, *hash;
    send_packet(s, data);
    receive(s, buf, sizeof buf, 0);
    start = strchr(buf, '$');
    assert_non_null(start);
    hash = strrchr(start, '#');
    assert_non_null(hash);
    *hash = 0;
    return start + 1;
}

static int server_wait(server *s) {
    int st, i;
    close(s->fd);
    for (i = 0; i < 1000; i++) {
        if (waitpid(s->pid, &st, WNOHANG) == s->pid) return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        usleep(10000);
    }
    kill(s->pid, SIGKILL);
    waitpid(s->pid, &st, 0);
    return -1;
}

static void test_hostile_packets(void **state) {
    server s;
    char buf[64], *big;
    uint32_t x = 12345;
    size_t i;
    const char *rep;
    (void)state;
    server_start(&s, at("t.frames"));
    send_raw(&s, "+", 1);
    rep = ask(&s, "qSupported:swbreak+");
    assert_non_null(strstr(rep, "ReverseContinue+"));
    assert_non_null(strstr(rep, "ReverseStep+"));
    send_raw(&s, "$?#00", 5);   /* bad checksum: a '-' */
    receive(&s, buf, sizeof buf, 1);
    assert_string_equal(buf, "-");
    big = (char *)malloc(100001);
    memset(big, 'q', 100000);
    big[100000] = 0;
    assert_string_equal(ask(&s, big), "E01");   /* longer than PacketSize */
    free(big);
    assert_string_equal(ask(&s, "m0,ffffffffffffffff"), "E0E");
    assert_string_equal(ask(&s, "mzz"), "E01");
    assert_string_equal(ask(&s, "m10000000000000000,1"), "E01");   /* 17 digits */
    assert_string_equal(ask(&s, "Z2,1000,0"), "E01");
    assert_string_equal(ask(&s, "G00"), "E02");
    assert_string_equal(ask(&s, "M0,1:00"), "E02");
    assert_string_equal(ask(&s, "qRcmd,7"), "E01");
    assert_string_equal(ask(&s, "Hg99999"), "E01");
    assert_string_equal(ask(&s, "p9999"), "E00");
    assert_string_equal(ask(&s, "vCont;x"), "E01");
    assert_string_equal(ask(&s, "qXfer:features:read:other.xml:0,10"), "E00");
    assert_string_equal(ask(&s, "vMustReplyEmpty"), "");
    /* run-length input: "p*!" is "p" and 4 more... here "qfThreadInfo" with no RLE, and
       "m0,*" with a count that is not printable: malformed */
    assert_string_equal(ask(&s, "m0,1*\x01"), "E01");
    /* noise: random bytes (without '$' so that no packet starts), then a valid packet */
    for (i = 0; i < 200000; i++) {
        char c;
        x = x * 1103515245u + 12345u;
        c = (char)(x >> 16);
        if (c == '$' || c == '-') c = '#';
        send_raw(&s, &c, 1);
    }
    rep = ask(&s, "?");
    assert_true(!strncmp(rep, "T05", 3));
    assert_string_equal(ask(&s, "QStartNoAckMode"), "OK");
    assert_string_equal(ask(&s, "qC"), "QC1");
    assert_string_equal(ask(&s, "D"), "OK");
    assert_int_equal(server_wait(&s), 0);
}

/* ARM and AArch64 (gdb here has no such targets: the protocol is checked directly): a
   one-instruction trace writing r0 / x0 gets the architecture's description and a `g`
   packet of its registers in the description's order, r0 / x0 first, the rest unknown. */
static void check_arch(uint64_t arch, const char *reg, const char *architecture, const char *feature,
                       size_t g_bytes) {
    frames_writer *w;
    frames_writer_options o;
    frames_error err;
    frames_frame f;
    frames_operand op;
    uint64_t value = 0x1122334455667788ull;
    static const uint8_t code[4] = {0x00, 0x00, 0x80, 0xd2};
    size_t width = g_bytes > 100 ? 8 : 4, i;
    const char *rep;
    char expect[40];
    server s;
    frames_writer_options_default(&o);
    o.arch = arch;
    o.machine = 0;
    assert_int_equal(frames_writer_open_path(&w, at("arch.frames"), &o, NULL, &err), 0);
    memset(&f, 0, sizeof f);
    op = tu_reg_op(reg, &value, width, 0, 1);
    f.kind = FRAMES_KIND_STD;
    f.std.address = 0x10000;
    f.std.thread_id = 1;
    f.std.rawbytes = frames_bytes_of(code, 4);
    f.std.post = &op;
    f.std.npost = 1;
    f.std.has_post = 1;
    assert_int_equal(frames_writer_add(w, &f), 0);
    assert_int_equal(frames_writer_close(w), 0);
    server_start(&s, at("arch.frames"));
    assert_string_equal(ask(&s, "QStartNoAckMode"), "OK");
    rep = ask(&s, "qXfer:features:read:target.xml:0,3000");
    assert_true(rep[0] == 'l');
    assert_non_null(strstr(rep, architecture));
    assert_non_null(strstr(rep, feature));
    assert_true(!strncmp(ask(&s, "s"), "T05", 3));   /* after the instruction */
    rep = ask(&s, "g");
    assert_int_equal(strlen(rep), 2 * g_bytes);
    for (i = 0; i < width; i++) snprintf(expect + 2 * i, 3, "%02x", (unsigned)(value >> (8 * i)) & 0xff);
    assert_true(!strncmp(rep, expect, 2 * width));
    assert_true(rep[2 * width] == 'x');
    assert_string_equal(ask(&s, "D"), "OK");
    assert_int_equal(server_wait(&s), 0);
    unlink(at("arch.frames"));
    unlink(at("arch.frames.fridx"));
}

static void test_arm_and_aarch64(void **state) {
    (void)state;
    check_arch(FRAMES_ARCH_ARM, "R0", "<architecture>arm</architecture>", "org.gnu.gdb.arm.core",
               17 * 4);
    check_arch(FRAMES_ARCH_AARCH64, "X0", "<architecture>aarch64</architecture>",
               "org.gnu.gdb.aarch64.core", 33 * 8 + 4);
}

/* --listen on 127.0.0.1 with an ephemeral port: gdb connects, steps, detaches. */
static void test_listen(void **state) {
    char *out, *log = NULL;
    int st, i, port = 0;
    (void)state;
    out = tu_run(&st, "%s gdbserver --listen 10.1.2.3:1234 %s 2>&1", tu_frames_bin(), at("t.frames"));
    assert_int_equal(st, 2);   /* not a loopback address */
    assert_non_null(strstr(out, "loopback"));
    free(out);
    free(tu_run(&st, "%s gdbserver --listen 127.0.0.1:0 %s </dev/null >/dev/null 2>%s & echo $! >%s", tu_frames_bin(),
                at("t.frames"), at("listen.txt"), at("listen.pid")));
    for (i = 0; i < 500 && !port; i++) {
        char *p;
        free(log);
        log = (char *)tu_read_file(at("listen.txt"), NULL);
        if (log && (p = strstr(log, "listening on 127.0.0.1:"))) port = atoi(p + 23);
        else usleep(20000);
    }
    free(log);
    assert_true(port > 0);
    out = tu_run_ok("gdb over TCP",
                    "cd %s && LC_ALL=C timeout 60 gdb -nx -batch -ex 'set trust-readonly-sections on' "
                    "-ex 'target remote 127.0.0.1:%d' -ex 'monitor when' -ex stepi -ex stepi "
                    "-ex 'monitor when' -ex detach ./prog </dev/null 2>&1", dir, port);
    assert_non_null(strstr(out, "Current instruction: 0 of"));
    assert_non_null(strstr(out, "Current instruction: 2 of"));
    free(out);
    /* the server ends when the client detaches */
    out = tu_run(&st, "pid=$(cat %s); for i in $(seq 100); do kill -0 $pid 2>/dev/null || exit 0; "
                      "sleep 0.05; done; kill $pid; exit 1", at("listen.pid"));
    free(out);
    assert_int_equal(st, 0);
}

static void test_help(void **state) {
    int st;
    char *out = tu_run(&st, "%s gdbserver --help", tu_frames_bin());
    (void)state;
    assert_int_equal(st, 0);
    assert_non_null(strstr(out, "target remote | frames gdbserver TRACE"));
    free(out);
    free(tu_run(&st, "%s gdbserver 2>/dev/null", tu_frames_bin()));
    assert_int_equal(st, 2);
    free(tu_run(&st, "%s gdbserver %s 2>/dev/null </dev/null", tu_frames_bin(), at("missing.frames")));
    assert_int_equal(st, 1);
}

/* An i386 trace written here (two threads): gdb takes the i386 description and reads
   what the trace says, thread by thread. */
static void test_i386_trace(void **state) {
    static const uint8_t mov_eax[5] = {0xb8, 0x44, 0x33, 0x22, 0x11}, store[5] = {0xa3, 0, 0x90, 0x04, 0x08};
    static const uint8_t load[5] = {0xa1, 0, 0x90, 0x04, 0x08};
    uint32_t eax = 0x11223344, esp = 0xbffff000;
    frames_writer *w;
    frames_error err;
    frames_operand ops[4][2];
    const uint8_t *code[4];
    uint64_t pcs[4] = {0x8048000, 0x8048005, 0x804800a, 0x804800a}, tids[4] = {100, 100, 200, 100};
    int i, st;
    char *out;
    (void)state;
    code[0] = mov_eax;
    code[1] = store;
    code[2] = code[3] = load;
    ops[0][0] = tu_reg_op("EAX", &eax, 4, 0, 1);
    ops[1][0] = tu_reg_op("EAX", &eax, 4, 1, 0);
    ops[1][1] = tu_mem_op(0x8049000, &eax, 4, 0, 1);
    ops[2][0] = tu_reg_op("ESP", &esp, 4, 1, 0);
    ops[3][0] = tu_mem_op(0x8049000, &eax, 4, 1, 0);
    ops[3][1] = tu_reg_op("EAX", &eax, 4, 0, 1);
    assert_int_equal(frames_writer_open_path(&w, at("t32.frames"), NULL, NULL, &err), 0);
    for (i = 0; i < 4; i++) {
        frames_frame f;
        memset(&f, 0, sizeof f);
        f.kind = FRAMES_KIND_STD;
        f.std.address = pcs[i];
        f.std.thread_id = tids[i];
        f.std.rawbytes = frames_bytes_of(code[i], 5);
        f.std.pre = i == 0 ? NULL : ops[i];
        f.std.npre = i == 0 ? 0 : 1;
        f.std.post = i == 0 ? ops[0] : i == 1 ? ops[1] + 1 : ops[3] + 1;
        f.std.npost = i == 2 ? 0 : 1;
        f.std.has_post = i != 2;
        assert_int_equal(frames_writer_add(w, &f), 0);
    }
    assert_int_equal(frames_writer_close(w), 0);
    out = tu_run(&st, "cd %s && LC_ALL=C timeout 60 gdb -nx -batch -ex 'target remote | %s gdbserver t32.frames' "
                      "-ex 'show architecture' -ex 'info registers eip eax' -ex stepi -ex 'p/x $eax' "
                      "-ex stepi -ex 'x/wx 0x8049000' -ex 'info threads' -ex 'monitor when' "
                      "-ex 'thread 2' -ex 'p/x $esp' -ex 'thread 1' "
                      "-ex 'break *0x804800a' -ex 'monitor goto end' -ex 'maint flush register-cache' "
                      "-ex reverse-continue -ex 'p/x $eip' -ex detach </dev/null 2>&1",
                 dir, tu_frames_bin());
    if (st || !strstr(out, "(currently \"i386\")")) fprintf(stderr, "%s\n", out);
    assert_int_equal(st, 0);
    assert_non_null(strstr(out, "(currently \"i386\")"));
    assert_non_null(strstr(out, "eip            0x8048000"));
    assert_non_null(strstr(out, "eax            <unavailable>"));
    assert_non_null(strstr(out, "$1 = 0x11223344"));
    assert_non_null(strstr(out, "0x8049000:\t0x11223344"));
    assert_non_null(strstr(out, "Thread 2"));   /* two threads */
    /* thread 100's second step passes thread 200's instruction */
    assert_non_null(strstr(out, "Current instruction: 3 of 4"));
    assert_non_null(strstr(out, "$2 = 0xbffff000"));   /* thread 200's esp */
    assert_non_null(strstr(out, "hit Breakpoint 1, 0x0804800a"));
    assert_non_null(strstr(out, "$3 = 0x804800a"));
    free(out);
    unlink(at("t32.frames"));
    unlink(at("t32.frames.fridx"));
}

static int setup(void **state) {
    (void)state;
    if (tu_workdir_make("frames-gdb")) return -1;
    record_and_run();
    return 0;
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_forwards_and_backwards),
        cmocka_unit_test(test_goto),
        cmocka_unit_test(test_breakpoint_backwards),
        cmocka_unit_test(test_watchpoints),
        cmocka_unit_test(test_i386_trace),
        cmocka_unit_test(test_hostile_packets),
        cmocka_unit_test(test_arm_and_aarch64),
        cmocka_unit_test(test_listen),
        cmocka_unit_test(test_help),
    };
    if (!gdb_installed() || !tu_vg_tool_built()) {
        printf("test_gdbserver: needs gdb and the valgrind tool of frames record: skipped\n");
        return 0;
    }
    return cmocka_run_group_tests(tests, setup, tu_workdir_teardown);
}

#else
int main(void) {
    printf("test_gdbserver: frames record is not built here: skipped\n");
    return 0;
}
#endif
