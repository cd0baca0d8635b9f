/* frames_vg.c - the Valgrind tool behind `frames record --engine valgrind` (x86-64 Linux).

   It does not encode frames: it writes compact raw records (vgrec.h) into a
   buffer that is sent over a pipe to the frames process, which converts them on the
   other core (tools/record/vg_convert.c). Per guest instruction the instrumented code stores:
   - BEGIN: the values of the registers the instruction reads, taken at its IMark;
   - MEMR / MEMW: every load (address, value) and store (address, old value, new value);
   - POST: the values of the registers it writes, taken after its last statement and
     before each side exit (the converter keeps the last one).
   Which registers an instruction reads and writes comes from its IR: the tool asks VEX
   for unoptimised IR (iropt level 0), where every guest register access is a GET or
   PUT of that instruction. RFLAGS is computed from VEX's flag thunk with VEX's own
   amd64g_calculate_rflags_all. Values are written by inline IR stores (no helper call
   per event); one guarded helper call per superblock flushes the buffer when the
   superblock's worst case would not fit.

   Options (passed by frames record): --frames-fd=N (the pipe), --frames-mem=no (no
   memory values), --frames-forks=yes (forked children write their own stream). */
#include "pub_tool_basics.h"
#include "pub_tool_tooliface.h"
#include "pub_tool_libcassert.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcfile.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_libcproc.h"
#include "pub_tool_machine.h"
#include "pub_tool_mallocfree.h"
#include "pub_tool_options.h"
#include "pub_tool_aspacemgr.h"
#include "pub_tool_vki.h"
#include "pub_tool_xarray.h"
#include "libvex_guest_amd64.h"

#include "vgrec.h"

/* VEX's flag computation and two core functions; declared from their definitions in
   the packaged static libraries (libvex, libcoregrind), not in the tool headers. */
extern ULong amd64g_calculate_rflags_all(ULong cc_op, ULong cc_dep1, ULong cc_dep2, ULong cc_ndep);
extern Int VG_(safe_fd)(Int oldfd);
extern Int VG_(fcntl)(Int fd, Int cmd, Addr arg);
extern XArray *VG_(args_for_valgrind); /* Valgrind's options, passed on to exec'd images */
extern void VG_(trampoline_stuff_start)(void); /* Valgrind's code the client may run */
extern void VG_(trampoline_stuff_end)(void);

#define OFF(f) ((Int)offsetof(VexGuestAMD64State, f))
#define BUF_SIZE (4u << 20)
#define SB_ROOM (128u << 10) /* worst case of one superblock (checked when instrumenting) */

/* ---------------------------------------------------------------- options, output */

static Long clo_fd = -2; /* -2: not given, -1: record nothing, quietly */
static Bool clo_mem = True;
static Bool clo_forks = False;

static Int out_fd = -1;
static Int owner_pid;
static UChar *buf;
/* The write position; instrumented code loads and stores it directly. */
static UChar *vg_cur;
static UInt next_gid = VGR_GROUP_BASE;
static Int last_tid = -1;

static Bool fv_process_cmd_line_option(const HChar *arg) {
    if VG_INT_CLO(arg, "--frames-fd", clo_fd) {}
    else if VG_BOOL_CLO(arg, "--frames-mem", clo_mem) {}
    else if VG_BOOL_CLO(arg, "--frames-forks", clo_forks) {}
    else return False;
    return True;
}

static void fv_print_usage(void) {
    VG_(printf)("    --frames-fd=N             pipe to the frames process\n"
                "    --frames-mem=no|yes       record memory values [yes]\n"
                "    --frames-forks=no|yes     forked children record too [no]\n");
}

static void fv_print_debug_usage(void) {}

static void write_all(const UChar *p, SizeT n) {
    while (n > 0 && out_fd >= 0) {
        Int w = VG_(write)(out_fd, p, (Int)n);
        if (w == -VKI_EINTR) continue;
        if (w <= 0) { /* the frames process is gone: stop recording, keep running */
            out_fd = -1;
            return;
        }
        p += w;
        n -= (SizeT)w;
    }
}

/* Send the buffer as chunks (pid, length, bytes); atomic-sized ones when several
   processes share the pipe. */
static void flush_out(void) {
    UChar *p = buf;
    SizeT n = (SizeT)(vg_cur - buf);
    vg_cur = buf;
    if (out_fd < 0) return;
    while (n > 0) {
        UChar chunk[VGR_ATOMIC];
        SizeT c = n;
        UInt hdr[2];
        if (clo_forks && c > VGR_ATOMIC - VGR_CHUNK_HEADER) c = VGR_ATOMIC - VGR_CHUNK_HEADER;
        hdr[0] = (UInt)owner_pid;
        hdr[1] = (UInt)c;
        if (clo_forks) {
            VG_(memcpy)(chunk, hdr, sizeof hdr);
            VG_(memcpy)(chunk + VGR_CHUNK_HEADER, p, c);
            write_all(chunk, c + VGR_CHUNK_HEADER);
        } else {
            write_all((const UChar *)hdr, sizeof hdr);
            write_all(p, c);
        }
        p += c;
        n -= c;
    }
}

/* Room for n bytes written from C. */
static UChar *room(SizeT n) {
    if ((SizeT)(vg_cur - buf) + n + SB_ROOM > BUF_SIZE) flush_out();
    return vg_cur;
}

static void put32(UChar **p, UInt v) { VG_(memcpy)(*p, &v, 4); *p += 4; }
static void put64(UChar **p, ULong v) { VG_(memcpy)(*p, &v, 8); *p += 8; }

static void emit_thread(void) {
    Int tid = VG_(gettid)();
    UChar *p;
    if (!buf || tid == last_tid) return;
    last_tid = tid;
    p = room(8);
    put32(&p, VGR_THREAD);
    put32(&p, (UInt)tid);
    vg_cur = p;
}

static void emit_hello(Int parent) {
    UChar *p = room(16);
    put32(&p, VGR_HELLO);
    put32(&p, VGR_VERSION);
    put32(&p, (UInt)parent);
    put32(&p, 0);
    vg_cur = p;
    last_tid = -1;
}

/* Called from instrumented code (guarded: only when the superblock might not fit). */
static VG_REGPARM(0) void fv_flush(void) { flush_out(); }

/* Large memory effects of dirty helpers (fxsave, xsave, ...): copied from C. */
static VG_REGPARM(3) void fv_bigmem(ULong how, ULong addr, ULong size) {
    UChar *p = room(24 + size);
    put32(&p, VGR_BIGMEM);
    put32(&p, (UInt)how);
    put64(&p, addr);
    put32(&p, (UInt)size);
    put32(&p, 0);
    VG_(memcpy)(p, (const void *)(Addr)addr, size);
    vg_cur = p + size;
}

/* ---------------------------------------------------------------- registers */

typedef struct {
    UChar hi[VGR_NREGS]; /* bytes written, per register (0: not written) */
} RegSet;

/* Register number of a guest state offset; -1 for state that is not a register value
   (RIP: the converter knows each instruction's address; emulation notes, x87 tags). */
static Int map_offset(Int off, Int *byte) {
    *byte = 0;
    if (off >= OFF(guest_RAX) && off < OFF(guest_R15) + 8) {
        *byte = (off - OFF(guest_RAX)) % 8;
        return (off - OFF(guest_RAX)) / 8;
    }
    if ((off >= OFF(guest_CC_OP) && off < OFF(guest_CC_NDEP) + 8) || off == OFF(guest_DFLAG) ||
        off == OFF(guest_IDFLAG) || off == OFF(guest_ACFLAG))
        return VGR_RFLAGS;
    if (off == OFF(guest_FS_CONST)) return VGR_FS_BASE;
    if (off == OFF(guest_GS_CONST)) return VGR_GS_BASE;
    if (off == OFF(guest_FTOP)) return VGR_FTOP;
    if (off >= OFF(guest_YMM0) && off < OFF(guest_YMM16)) {
        *byte = (off - OFF(guest_YMM0)) % 32;
        return VGR_XMM0 + (off - OFF(guest_YMM0)) / 32;
    }
    if (off >= OFF(guest_FPREG) && off < OFF(guest_FPREG) + 64) return VGR_MM0 + (off - OFF(guest_FPREG)) / 8;
    return -1;
}

static void regset_add(RegSet *s, Int off, Int size) {
    while (size > 0) { /* an access may span registers (fxState ranges) */
        Int b, r = map_offset(off, &b), n = 1;
        if (r >= VGR_XMM0 && r < VGR_XMM0 + 16) {
            n = 32 - b < size ? 32 - b : size;
            if (!s->hi[r]) s->hi[r] = 16;
            if (b + n > 16) s->hi[r] = 32;
        } else if (r >= 0) {
            s->hi[r] = r == VGR_FTOP ? 4 : 8;
        }
        off += n;
        size -= n;
    }
}

/* A written register is recorded whole: the 64-bit GPR, XMMn (YMMn when its upper half
   was written), RFLAGS; the converter keeps the register file. */
static Int reg_offset(Int r) {
    if (r < 16) return OFF(guest_RAX) + 8 * r;
    if (r == VGR_FS_BASE) return OFF(guest_FS_CONST);
    if (r == VGR_GS_BASE) return OFF(guest_GS_CONST);
    if (r == VGR_FTOP) return OFF(guest_FTOP);
    if (r >= VGR_XMM0 && r < VGR_MM0) return OFF(guest_YMM0) + 32 * (r - VGR_XMM0);
    return OFF(guest_FPREG) + 8 * (r - VGR_MM0);
}

static IRType int_type(Int size) {
    switch (size) {
    case 4: return Ity_I32;
    case 16: return Ity_V128;
    case 32: return Ity_V256;
    default: return Ity_I64;
    }
}

/* ---------------------------------------------------------------- IR helpers */

typedef struct {
    IRExpr *e;
    Int size;
} Val;

static IRExpr *assign(IRSB *sb, IRType ty, IRExpr *e) {
    IRTemp t = newIRTemp(sb->tyenv, ty);
    addStmtToIRSB(sb, IRStmt_WrTmp(t, e));
    return IRExpr_RdTmp(t);
}

static IRExpr *get_reg(IRSB *sb, Int r, Int size) {
    return assign(sb, int_type(size), IRExpr_Get(reg_offset(r), int_type(size)));
}

/* RFLAGS as the hardware shows it: the thunk's O S Z A C P, bit 1 and IF (always set in
   user mode), DF, AC and ID. */
static IRExpr *get_rflags(IRSB *sb) {
    IRExpr *op, *e;
    IRExpr **args;
    op = assign(sb, Ity_I64, IRExpr_Get(OFF(guest_CC_OP), Ity_I64));
    args = mkIRExprVec_4(op, assign(sb, Ity_I64, IRExpr_Get(OFF(guest_CC_DEP1), Ity_I64)),
                         assign(sb, Ity_I64, IRExpr_Get(OFF(guest_CC_DEP2), Ity_I64)),
                         assign(sb, Ity_I64, IRExpr_Get(OFF(guest_CC_NDEP), Ity_I64)));
    e = assign(sb, Ity_I64, IRExpr_CCall(mkIRCallee(0, "amd64g_calculate_rflags_all",
                                                    VG_(fnptr_to_fnentry)(&amd64g_calculate_rflags_all)),
                                         Ity_I64, args));
    e = assign(sb, Ity_I64, IRExpr_Binop(Iop_Or64, e, IRExpr_Const(IRConst_U64(0x202))));
    e = assign(sb, Ity_I64, IRExpr_Binop(Iop_Or64, e, assign(sb, Ity_I64, IRExpr_Binop(Iop_And64,
        assign(sb, Ity_I64, IRExpr_Get(OFF(guest_DFLAG), Ity_I64)), IRExpr_Const(IRConst_U64(0x400))))));
    e = assign(sb, Ity_I64, IRExpr_Binop(Iop_Or64, e, assign(sb, Ity_I64, IRExpr_Binop(Iop_Shl64,
        assign(sb, Ity_I64, IRExpr_Get(OFF(guest_ACFLAG), Ity_I64)), IRExpr_Const(IRConst_U8(18))))));
    e = assign(sb, Ity_I64, IRExpr_Binop(Iop_Or64, e, assign(sb, Ity_I64, IRExpr_Binop(Iop_Shl64,
        assign(sb, Ity_I64, IRExpr_Get(OFF(guest_IDFLAG), Ity_I64)), IRExpr_Const(IRConst_U8(21))))));
    return e;
}

/* Store a group record at vg_cur: gid, then the values; advance vg_cur. */
static void emit_group(IRSB *sb, UInt gid, const Val *v, Int n) {
    IRExpr *cur = assign(sb, Ity_I64, IRExpr_Load(Iend_LE, Ity_I64, IRExpr_Const(IRConst_U64((ULong)(Addr)&vg_cur))));
    Int i, off = 4;
    addStmtToIRSB(sb, IRStmt_Store(Iend_LE, cur, IRExpr_Const(IRConst_U32(gid))));
    for (i = 0; i < n; i++) {
        IRExpr *a = assign(sb, Ity_I64, IRExpr_Binop(Iop_Add64, cur, IRExpr_Const(IRConst_U64((ULong)off))));
        addStmtToIRSB(sb, IRStmt_Store(Iend_LE, a, v[i].e));
        off += v[i].size;
    }
    addStmtToIRSB(sb, IRStmt_Store(Iend_LE, IRExpr_Const(IRConst_U64((ULong)(Addr)&vg_cur)),
                                   assign(sb, Ity_I64, IRExpr_Binop(Iop_Add64, cur,
                                                                    IRExpr_Const(IRConst_U64((ULong)off))))));
}

/* A call that moves vg_cur: declared as modifying it, so that no load of vg_cur is moved
   across it. */
static void add_helper(IRSB *sb, IRDirty *d, IRExpr *guard) {
    d->mFx = Ifx_Modify;
    d->mAddr = IRExpr_Const(IRConst_U64((ULong)(Addr)&vg_cur));
    d->mSize = 8;
    if (guard) d->guard = guard;
    addStmtToIRSB(sb, IRStmt_Dirty(d));
}

/* ---------------------------------------------------------------- definitions */

/* DEF record of a group: instruction address and bytes, kind, registers or memory size. */
static UInt define(UInt kind, Addr pc, UInt len, const RegSet *s, Int memsize, Int *bytes_out) {
    UInt gid = next_gid++;
    Int r, nregs = 0, total = 4;
    UChar *p, *q;
    if (s)
        for (r = 0; r < VGR_NREGS; r++)
            if (s->hi[r]) nregs++;
    if (len > 15) len = 15;
    p = room(20 + len + 3 * (SizeT)nregs);
    put32(&p, VGR_DEF);
    put32(&p, gid);
    put64(&p, (ULong)pc);
    q = p;
    *q++ = (UChar)kind;
    *q++ = (UChar)len;
    *q++ = (UChar)nregs;
    *q++ = (UChar)memsize;
    VG_(memcpy)(q, (const void *)pc, len);
    q += len;
    if (s)
        for (r = 0; r < VGR_NREGS; r++)
            if (s->hi[r]) {
                *q++ = (UChar)r;
                *q++ = 0;
                *q++ = s->hi[r];
                total += s->hi[r];
            }
    vg_cur = q;
    if (kind == VGR_MEMR) total = 4 + 8 + memsize;
    if (kind == VGR_MEMW || kind == VGR_MEMRW) total = 4 + 8 + 2 * memsize;
    *bytes_out = total;
    return gid;
}

static void regs_values(IRSB *sb, const RegSet *s, Val *v, Int *n) {
    Int r;
    *n = 0;
    for (r = 0; r < VGR_NREGS; r++)
        if (s->hi[r]) {
            v[*n].e = r == VGR_RFLAGS ? get_rflags(sb) : get_reg(sb, r, s->hi[r]);
            v[*n].size = s->hi[r];
            (*n)++;
        }
}

/* ---------------------------------------------------------------- instrumentation */

typedef struct {
    Int first, end; /* statements of the instruction: [first, end), first is the IMark */
    Addr pc;
    UInt len;
    RegSet wr;
    Int nwrites, nexits;
    UInt begin_gid, post_gid;
    Int begin_size, post_size;
} Insn;

/* The registers an instruction writes: its PUTs and the guest state its helpers write.
   (Reads are not taken from the IR: Valgrind forwards a register's value from one
   instruction to the next inside a superblock even at iropt level 0, so a read may
   have no GET. The converter decodes reads with capstone and takes their values from
   its copy of the register file.) */
static void scan_insn(IRSB *in, Insn *x) {
    Int i, k, j;
    VG_(memset)(&x->wr, 0, sizeof x->wr);
    x->nexits = 0;
    for (i = x->first + 1; i < x->end; i++) {
        IRStmt *st = in->stmts[i];
        switch (st->tag) {
        case Ist_Put:
            regset_add(&x->wr, st->Ist.Put.offset, sizeofIRType(typeOfIRExpr(in->tyenv, st->Ist.Put.data)));
            break;
        case Ist_PutI: /* x87 stack: any of the eight registers */
            regset_add(&x->wr, OFF(guest_FPREG), 64);
            break;
        case Ist_Dirty: {
            IRDirty *d = st->Ist.Dirty.details;
            for (k = 0; k < d->nFxState; k++)
                for (j = 0; j <= d->fxState[k].nRepeats; j++)
                    if (d->fxState[k].fx != Ifx_Read)
                        regset_add(&x->wr, d->fxState[k].offset + j * d->fxState[k].repeatLen, d->fxState[k].size);
            break;
        }
        case Ist_Exit: x->nexits++; break;
        default: break;
        }
    }
    x->nwrites = 0;
    for (i = 0; i < VGR_NREGS; i++)
        if (x->wr.hi[i]) x->nwrites++;
    tl_assert(x->nwrites <= VGR_MAX_REGS);
}

static Int mem_groups_size(IRSB *in, const Insn *x) {
    Int i, total = 0;
    if (!clo_mem) return 0;
    for (i = x->first + 1; i < x->end; i++) {
        IRStmt *st = in->stmts[i];
        if (st->tag == Ist_WrTmp && st->Ist.WrTmp.data->tag == Iex_Load)
            total += 12 + sizeofIRType(st->Ist.WrTmp.data->Iex.Load.ty);
        else if (st->tag == Ist_Store)
            total += 12 + 2 * sizeofIRType(typeOfIRExpr(in->tyenv, st->Ist.Store.data));
        else if (st->tag == Ist_CAS)
            total += 12 + 2 * sizeofIRType(typeOfIRExpr(in->tyenv, st->Ist.CAS.details->dataLo));
    }
    return total;
}

static void post_group(IRSB *out, const Insn *x) {
    Val v[VGR_MAX_REGS];
    Int n;
    if (!x->nwrites) return;
    regs_values(out, &x->wr, v, &n);
    emit_group(out, x->post_gid, v, n);
}

static void mem_group(IRSB *out, Addr pc, UInt len, UInt kind, IRExpr *addr, IRExpr *a, IRExpr *b, Int size) {
    Val v[3];
    Int bytes;
    UInt gid = define(kind, pc, len, NULL, size, &bytes);
    v[0].e = addr;
    v[0].size = 8;
    v[1].e = a;
    v[1].size = size;
    v[2].e = b;
    v[2].size = size;
    emit_group(out, gid, v, kind == VGR_MEMR ? 2 : 3);
}

static IROp cas_cmp(IRType ty) {
    switch (ty) {
    case Ity_I8: return Iop_CasCmpEQ8;
    case Ity_I16: return Iop_CasCmpEQ16;
    case Ity_I32: return Iop_CasCmpEQ32;
    default: return Iop_CasCmpEQ64;
    }
}

static void dirty_mem(IRSB *out, IRDirty *d, Bool after) {
    IRDirty *h;
    if (d->mFx == Ifx_None || !clo_mem) return;
    if (!after && d->mFx != Ifx_Write) {
        h = unsafeIRDirty_0_N(3, "fv_bigmem", VG_(fnptr_to_fnentry)(&fv_bigmem),
                              mkIRExprVec_3(IRExpr_Const(IRConst_U64(VGR_MEM_READ)), d->mAddr,
                                            IRExpr_Const(IRConst_U64((ULong)d->mSize))));
        add_helper(out, h, d->guard);
    }
    if (d->mFx == Ifx_Read) return;
    h = unsafeIRDirty_0_N(3, "fv_bigmem", VG_(fnptr_to_fnentry)(&fv_bigmem),
                          mkIRExprVec_3(IRExpr_Const(IRConst_U64(after ? VGR_MEM_NEW : VGR_MEM_OLD)),
                                        d->mAddr, IRExpr_Const(IRConst_U64((ULong)d->mSize))));
    add_helper(out, h, d->guard);
}

static void instrument_insn(IRSB *in, IRSB *out, const Insn *x) {
    Int i;
    addStmtToIRSB(out, in->stmts[x->first]); /* the IMark */
    emit_group(out, x->begin_gid, NULL, 0);
    for (i = x->first + 1; i < x->end; i++) {
        IRStmt *st = in->stmts[i];
        if (st->tag == Ist_Store && clo_mem) {
            IRExpr *addr = st->Ist.Store.addr, *data = st->Ist.Store.data;
            IRType ty = typeOfIRExpr(in->tyenv, data);
            IRExpr *old = assign(out, ty, IRExpr_Load(Iend_LE, ty, addr));
            addStmtToIRSB(out, st);
            mem_group(out, x->pc, x->len, VGR_MEMW, addr, old, data, sizeofIRType(ty));
        } else if (st->tag == Ist_WrTmp && st->Ist.WrTmp.data->tag == Iex_Load && clo_mem) {
            IRExpr *ld = st->Ist.WrTmp.data;
            addStmtToIRSB(out, st);
            mem_group(out, x->pc, x->len, VGR_MEMR, ld->Iex.Load.addr, IRExpr_RdTmp(st->Ist.WrTmp.tmp),
                      NULL, sizeofIRType(ld->Iex.Load.ty));
        } else if (st->tag == Ist_CAS && clo_mem && !st->Ist.CAS.details->dataHi) {
            IRCAS *c = st->Ist.CAS.details;
            IRType ty = typeOfIRExpr(in->tyenv, c->dataLo);
            IRExpr *old = IRExpr_RdTmp(c->oldLo), *eq, *now;
            addStmtToIRSB(out, st);
            eq = assign(out, Ity_I1, IRExpr_Binop(cas_cmp(ty), old, c->expdLo));
            now = assign(out, ty, IRExpr_ITE(eq, c->dataLo, old));
            mem_group(out, x->pc, x->len, VGR_MEMRW, c->addr, old, now, sizeofIRType(ty));
        } else if (st->tag == Ist_Dirty) {
            dirty_mem(out, st->Ist.Dirty.details, False);
            addStmtToIRSB(out, st);
            dirty_mem(out, st->Ist.Dirty.details, True);
        } else if (st->tag == Ist_Exit) {
            post_group(out, x);
            addStmtToIRSB(out, st);
        } else {
            addStmtToIRSB(out, st);
        }
    }
    post_group(out, x);
}

static IRSB *fv_instrument(VgCallbackClosure *closure, IRSB *in, const VexGuestLayout *layout,
                           const VexGuestExtents *vge, const VexArchInfo *archinfo_host,
                           IRType gWordTy, IRType hWordTy) {
    IRSB *out;
    Insn *xs;
    Int i, n = 0, nx = 0, sbmax = 0;
    (void)closure; (void)layout; (void)vge; (void)archinfo_host; (void)gWordTy; (void)hWordTy;
    if (out_fd < 0 || !buf) return in;
    for (i = 0; i < in->stmts_used; i++)
        if (in->stmts[i]->tag == Ist_IMark) n++;
    if (n == 0) return in;
    xs = VG_(malloc)("frames.insns", (SizeT)n * sizeof *xs);
    for (i = 0; i < in->stmts_used; i++)
        if (in->stmts[i]->tag == Ist_IMark) {
            if (nx) xs[nx - 1].end = i;
            xs[nx].first = i;
            xs[nx].pc = (Addr)in->stmts[i]->Ist.IMark.addr;
            xs[nx].len = in->stmts[i]->Ist.IMark.len;
            nx++;
        }
    xs[nx - 1].end = in->stmts_used;
    for (i = 0; i < nx; i++) {
        Insn *x = &xs[i];
        scan_insn(in, x);
        x->begin_gid = define(VGR_BEGIN, x->pc, x->len, NULL, 0, &x->begin_size);
        x->post_gid = define(VGR_POST, x->pc, x->len, &x->wr, 0, &x->post_size);
        sbmax += x->begin_size + (x->nwrites ? (x->nexits + 1) * x->post_size : 0) + mem_groups_size(in, x);
    }
    tl_assert(sbmax < (Int)SB_ROOM);

    out = deepCopyIRSBExceptStmts(in);
    for (i = 0; i < xs[0].first; i++) addStmtToIRSB(out, in->stmts[i]);
    { /* flush first if this superblock's records might not fit */
        IRExpr *cur = assign(out, Ity_I64, IRExpr_Load(Iend_LE, Ity_I64, IRExpr_Const(IRConst_U64((ULong)(Addr)&vg_cur))));
        IRExpr *lim = IRExpr_Const(IRConst_U64((ULong)(Addr)(buf + BUF_SIZE - (SizeT)sbmax)));
        IRExpr *full = assign(out, Ity_I1, IRExpr_Binop(Iop_CmpLT64U, lim, cur));
        add_helper(out, unsafeIRDirty_0_N(0, "fv_flush", VG_(fnptr_to_fnentry)(&fv_flush), mkIRExprVec_0()), full);
    }
    for (i = 0; i < nx; i++) instrument_insn(in, out, &xs[i]);
    VG_(free)(xs);
    return out;
}

/* ---------------------------------------------------------------- events */

/* The whole register file of a thread, each time it (re)starts running client code:
   the core changes registers only while no client code runs (syscall results, signal
   frames, thread creation), so this and the instructions' writes give every value. */
static void emit_regs(ThreadId tid) {
    static VexGuestAMD64State g;
    UChar *p;
    Int i;
    ULong v;
    VG_(get_shadow_regs_area)(tid, (UChar *)&g, 0, 0, sizeof g);
    p = room(VGR_REGS_SIZE);
    put32(&p, VGR_REGS);
    put32(&p, 0);
    for (i = 0; i < 16; i++) put64(&p, (&g.guest_RAX)[i]);
    v = amd64g_calculate_rflags_all(g.guest_CC_OP, g.guest_CC_DEP1, g.guest_CC_DEP2, g.guest_CC_NDEP);
    v |= 0x202 | (g.guest_DFLAG & 0x400) | (g.guest_ACFLAG << 18) | (g.guest_IDFLAG << 21);
    put64(&p, v);
    put64(&p, g.guest_FS_CONST);
    put64(&p, g.guest_GS_CONST);
    put64(&p, g.guest_FTOP);
    for (i = 0; i < 8; i++) put64(&p, g.guest_FPREG[i]);
    VG_(memcpy)(p, &g.guest_YMM0, 16 * 32);
    vg_cur = p + 16 * 32;
}

static void fv_start_client_code(ThreadId tid, ULong blocks) {
    (void)blocks;
    if (!buf) return;
    emit_thread();
    emit_regs(tid);
}

static void fv_pre_syscall(ThreadId tid, UInt no, UWord *args, UInt nargs) {
    UChar *p;
    UInt i;
    if (!buf) return;
    emit_thread();
    p = room(64);
    put32(&p, VGR_SYSCALL);
    put32(&p, no);
    put64(&p, (ULong)VG_(get_IP)(tid));
    for (i = 0; i < 6; i++) put64(&p, i < nargs ? (ULong)args[i] : 0);
    vg_cur = p;
    flush_out(); /* the program's effects never run ahead of the trace by more than this */
}

static void fv_post_syscall(ThreadId tid, UInt no, UWord *args, UInt nargs, SysRes res) {
    UChar *p;
    (void)tid; (void)args; (void)nargs;
    if (!buf) return;
    emit_thread();
    p = room(16);
    put32(&p, VGR_SYSRET);
    put32(&p, no);
    put64(&p, sr_isError(res) ? (ULong)-(Long)sr_Err(res) : (ULong)sr_Res(res));
    vg_cur = p;
}

static void emit_module(Addr a, SizeT len) {
    NSegment const *seg = VG_(am_find_nsegment)(a);
    const HChar *name = seg ? VG_(am_get_filename)(seg) : NULL;
    SizeT nl;
    UChar *p;
    if (!buf || len == 0 || !seg || (seg->kind != SkFileC && seg->kind != SkAnonC)) return;
    /* the page of Valgrind's trampolines (signal return, vsyscall) is not the program's */
    if (a < (Addr)&VG_(trampoline_stuff_end) && a + len > (Addr)&VG_(trampoline_stuff_start)) return;
    if (seg->start <= (Addr)&VG_(trampoline_stuff_start) && seg->end >= (Addr)&VG_(trampoline_stuff_start)) return;
    if (!name) name = "[anonymous]";
    nl = VG_(strlen)(name);
    if (nl > 4000) nl = 4000;
    p = room(24 + nl);
    put32(&p, VGR_MODLOAD);
    put32(&p, (UInt)nl);
    put64(&p, (ULong)a);
    put64(&p, (ULong)(a + len - 1));
    VG_(memcpy)(p, name, nl);
    vg_cur = p + nl;
}

static void fv_new_mem(Addr a, SizeT len, Bool rr, Bool ww, Bool xx, ULong di) {
    (void)rr; (void)ww; (void)di;
    if (xx) emit_module(a, len);
}

static void fv_mprotect(Addr a, SizeT len, Bool rr, Bool ww, Bool xx) {
    (void)rr; (void)ww;
    if (xx) emit_module(a, len);
}

static void fv_signal(ThreadId tid, Int sig, Bool alt) {
    UChar *p;
    (void)alt;
    if (!buf) return;
    emit_thread();
    p = room(16);
    put32(&p, VGR_SIGNAL);
    put32(&p, (UInt)sig);
    put64(&p, (ULong)VG_(get_IP)(tid));
    vg_cur = p;
}

static void fv_thread_exit(ThreadId tid) {
    UChar *p;
    (void)tid;
    if (!buf) return;
    emit_thread();
    p = room(8);
    put32(&p, VGR_EXIT);
    put32(&p, (UInt)VG_(gettid)());
    vg_cur = p;
    flush_out();
}

/* An untraced child closed the pipe: the images it execs (which Valgrind runs with the
   same options, --trace-children=yes) must not take the number for the pipe, which is
   closed or, worse, reused by the program for a file of its own. They get --frames-fd=-1:
   run under Valgrind, record nothing, say nothing. */
static void untrace_execs(void) {
    static const HChar none[] = "--frames-fd=-1";
    Word i, n = VG_(sizeXA)(VG_(args_for_valgrind));
    for (i = 0; i < n; i++) {
        HChar **arg = (HChar **)VG_(indexXA)(VG_(args_for_valgrind), i);
        if (VG_(strncmp)(*arg, "--frames-fd=", 12) == 0) *arg = (HChar *)none;
    }
}

static void fv_fork_pre(ThreadId tid) {
    (void)tid;
    if (buf) flush_out();
}

static void fv_fork_child(ThreadId tid) {
    Int parent = owner_pid;
    (void)tid;
    owner_pid = VG_(getpid)();
    vg_cur = buf;
    if (!clo_forks) { /* children run untraced (but still under Valgrind) */
        if (out_fd >= 0) VG_(close)(out_fd);
        if (clo_fd >= 0) VG_(close)((Int)clo_fd);
        out_fd = -1; /* old translations still write records; flushing drops them */
        untrace_execs();
        return;
    }
    emit_hello(parent);
    emit_thread();
}

/* ---------------------------------------------------------------- setup */

static void fv_post_clo_init(void) {
    Int fd;
    if (clo_fd == -1) return; /* an image exec'd by an untraced child (untrace_execs) */
    if (clo_fd < 0) {
        VG_(umsg)("frames: no --frames-fd: nothing is recorded (run through `frames record`)\n");
        return;
    }
    /* Write through a copy in Valgrind's reserved range (the program cannot close it);
       the original stays open and inheritable for the images the program execs. */
    fd = VG_(fcntl)((Int)clo_fd, VKI_F_DUPFD, 3); /* fails when the descriptor is closed */
    if (fd >= 0) fd = VG_(safe_fd)(fd);
    if (fd < 0) {
        VG_(umsg)("frames: --frames-fd=%lld is not open: nothing is recorded\n", clo_fd);
        return;
    }
    out_fd = fd;
    owner_pid = VG_(getpid)();
    buf = VG_(malloc)("frames.buf", BUF_SIZE);
    vg_cur = buf;
    emit_hello(0);
}

static void fv_fini(Int exitcode) {
    (void)exitcode;
    if (buf) flush_out();
}

static void fv_pre_clo_init(void) {
    VG_(details_name)("frames");
    VG_(details_version)(NULL);
    VG_(details_description)("records frames traces (register and memory values)");
    VG_(details_copyright_author)("frames authors; MIT licence");
    VG_(details_bug_reports_to)("the frames project");
    VG_(details_avg_translation_sizeB)(640);
    VG_(basic_tool_funcs)(fv_post_clo_init, fv_instrument, fv_fini);
    VG_(needs_command_line_options)(fv_process_cmd_line_option, fv_print_usage, fv_print_debug_usage);
    VG_(needs_syscall_wrapper)(fv_pre_syscall, fv_post_syscall);
    VG_(track_start_client_code)(fv_start_client_code);
    VG_(track_new_mem_startup)(fv_new_mem);
    VG_(track_new_mem_mmap)(fv_new_mem);
    VG_(track_change_mem_mprotect)(fv_mprotect);
    VG_(track_pre_deliver_signal)(fv_signal);
    VG_(track_pre_thread_ll_exit)(fv_thread_exit);
    VG_(atfork)(fv_fork_pre, NULL, fv_fork_child);
    /* every guest register access of an instruction must be a GET or PUT of that
       instruction: no forwarding or removal across instructions */
    VG_(clo_vex_control).iropt_level = 0;
    VG_(clo_vex_control).guest_chase = False;
}

VG_DETERMINE_INTERFACE_VERSION(fv_pre_clo_init)
