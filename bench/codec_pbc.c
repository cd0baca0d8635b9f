/* codec_pbc.c - the benchmark's protobuf-c peer, used as QEMU tracewrap uses it: a Frame
   built from *__INIT structs on the stack, protobuf_c_message_get_packed_size and
   protobuf_c_message_pack into a buffer, fwrite of the size and the bytes; reading:
   frame__unpack and frame__free_unpacked per frame. Code generated from
   tests/frames.proto by `protoc-c --c_out` into the build directory (with operand_usage's
   `base` renamed, which collides with protobuf-c's own `base` member, as qemu's build
   does with sed). */
#include "codec.h"
#include "frames.pb-c.h"

typedef struct pbc_operand {
    OperandInfo info;
    OperandInfoSpecific spec;
    RegOperand reg;
    MemOperand mem;
    OperandUsage usage;
    TaintInfo taint;
    uint64_t value;
} pbc_operand;

static void init_operand(pbc_operand *o) {
    OperandInfo info = OPERAND_INFO__INIT;
    OperandInfoSpecific spec = OPERAND_INFO_SPECIFIC__INIT;
    RegOperand reg = REG_OPERAND__INIT;
    MemOperand mem = MEM_OPERAND__INIT;
    OperandUsage usage = OPERAND_USAGE__INIT;
    TaintInfo taint = TAINT_INFO__INIT;
    o->info = info;
    o->spec = spec;
    o->reg = reg;
    o->mem = mem;
    o->usage = usage;
    o->taint = taint;
    o->info.operand_info_specific = &o->spec;
    o->info.operand_usage = &o->usage;
    o->info.taint_info = &o->taint;
}

/* Register names are char* in protobuf-c (NUL-terminated), hence the cast of the table. */
static void fill_operand(pbc_operand *o, const bench_insn *in, int which) {
    init_operand(o);
    if (which == 2) {
        o->mem.address = in->mem_address;
        o->spec.mem_operand = &o->mem;
        o->value = in->mem_value;
    } else {
        int reg = which == 3 ? in->reg_written : in->reg_read[which];
        o->reg.name = (char *)bench_reg_names[reg];
        o->spec.reg_operand = &o->reg;
        o->value = which == 3 ? in->written_value : in->read_value[which];
    }
    o->info.bit_length = 64;
    o->usage.read = which != 3;
    o->usage.written = which == 3;
    o->taint.has_no_taint = 1;
    o->taint.no_taint = 1;
    o->info.value.len = 8;
    o->info.value.data = (uint8_t *)&o->value;
}

static size_t meta_bytes(uint8_t **out) {
    MetaFrame m = META_FRAME__INIT;
    Tracer t = TRACER__INIT;
    Target g = TARGET__INIT;
    Fstats s = FSTATS__INIT;
    size_t len;
    t.name = (char *)BENCH_META_TRACER_NAME;
    t.n_args = sizeof bench_meta_tracer_args / sizeof bench_meta_tracer_args[0];
    t.args = (char **)bench_meta_tracer_args;
    t.version = (char *)BENCH_META_TRACER_VERSION;
    g.path = (char *)BENCH_META_TARGET_PATH;
    g.n_args = sizeof bench_meta_target_args / sizeof bench_meta_target_args[0];
    g.args = (char **)bench_meta_target_args;
    g.n_envp = sizeof bench_meta_target_envp / sizeof bench_meta_target_envp[0];
    g.envp = (char **)bench_meta_target_envp;
    g.md5sum.len = sizeof bench_meta_md5;
    g.md5sum.data = (uint8_t *)bench_meta_md5;
    s.size = BENCH_META_SIZE;
    s.atime = BENCH_META_ATIME;
    s.mtime = BENCH_META_MTIME;
    s.ctime = BENCH_META_CTIME;
    m.tracer = &t;
    m.target = &g;
    m.fstats = &s;
    m.user = (char *)BENCH_META_USER;
    m.host = (char *)BENCH_META_HOST;
    m.time = BENCH_META_TIME;
    len = meta_frame__get_packed_size(&m);
    *out = (uint8_t *)malloc(len ? len : 1);
    if (*out) meta_frame__pack(&m, *out);
    return len;
}

/* A Frame and everything it points to, on the stack as tracewrap builds it. */
typedef struct pbc_frame {
    Frame f;
    StdFrame s;
    OperandValueList pre, post;
    pbc_operand ops[4];
    OperandInfo *pre_elems[3], *post_elems[1];
    bench_insn in;
} pbc_frame;

static void fill_frame(pbc_frame *x, uint64_t i) {
    Frame f = FRAME__INIT;
    StdFrame s = STD_FRAME__INIT;
    OperandValueList list = OPERAND_VALUE_LIST__INIT;
    int k;
    bench_gen(i, &x->in);
    for (k = 0; k < 4; k++) fill_operand(&x->ops[k], &x->in, k);
    for (k = 0; k < 3; k++) x->pre_elems[k] = &x->ops[k].info;
    x->post_elems[0] = &x->ops[3].info;
    x->pre = list;
    x->pre.n_elem = 3;
    x->pre.elem = x->pre_elems;
    x->post = list;
    x->post.n_elem = 1;
    x->post.elem = x->post_elems;
    x->s = s;
    x->s.address = x->in.address;
    x->s.thread_id = x->in.thread_id;
    x->s.rawbytes.len = 3;
    x->s.rawbytes.data = x->in.raw;
    x->s.operand_pre_list = &x->pre;
    x->s.operand_post_list = &x->post;
    x->f = f;
    x->f.std_frame = &x->s;
}

int pbc_write(const char *path, uint64_t n) {
    bench_container c;
    uint8_t *meta = NULL, *buf = NULL;
    size_t meta_len = meta_bytes(&meta), cap = 0;
    uint64_t i;
    int rc;
    if (!meta) return -1;
    rc = bench_container_open(&c, path, meta, meta_len);
    free(meta);
    if (rc < 0) return -1;
    for (i = 0; i < n && rc == 0; i++) {
        pbc_frame x;
        size_t len;
        fill_frame(&x, i);
        len = protobuf_c_message_get_packed_size(&x.f.base);
        if (len > cap) {
            cap = len * 2;
            free(buf);
            if (!(buf = (uint8_t *)malloc(cap))) return -1;
        }
        protobuf_c_message_pack(&x.f.base, buf);
        rc = bench_container_add(&c, buf, len);
    }
    free(buf);
    return bench_container_finish(&c) < 0 ? -1 : rc;
}

static uint64_t sum_operands(const OperandValueList *l) {
    uint64_t sum = 0;
    size_t i;
    if (!l) return 0;
    for (i = 0; i < l->n_elem; i++) {
        const OperandInfo *op = l->elem[i];
        const OperandInfoSpecific *sp = op->operand_info_specific;
        const char *name = sp->reg_operand ? sp->reg_operand->name : "";
        const OperandUsage *u = op->operand_usage;
        const TaintInfo *t = op->taint_info;
        sum += bench_sum_operand(sp->mem_operand != NULL,
                                 sp->mem_operand ? sp->mem_operand->address : 0, name,
                                 strlen(name), op->bit_length, u->read, u->written, u->index,
                                 u->base_, t->no_taint + t->taint_id + t->taint_multiple,
                                 op->value.data, op->value.len);
    }
    return sum;
}

int pbc_read(const char *path, uint64_t *count, uint64_t *sum) {
    bench_reader r;
    uint64_t len, s = 0, k = 0;
    int rc;
    if (bench_reader_open(&r, path) < 0) {
        bench_reader_close(&r);
        return -1;
    }
    while ((rc = bench_reader_next(&r, &len)) > 0) {
        Frame *f = frame__unpack(NULL, (size_t)len, r.buf);
        const StdFrame *sf;
        if (!f || !f->std_frame) {
            rc = -1;
            break;
        }
        sf = f->std_frame;
        s += bench_sum_frame(sf->address, sf->thread_id, sf->rawbytes.data, sf->rawbytes.len,
                             sf->operand_pre_list->n_elem,
                             sf->operand_post_list ? sf->operand_post_list->n_elem : 0);
        s += sum_operands(sf->operand_pre_list) + sum_operands(sf->operand_post_list);
        frame__free_unpacked(f, NULL);
        k++;
    }
    bench_reader_close(&r);
    *count = k;
    *sum = s;
    return rc;
}

int pbc_encode_mem(uint8_t *buf, size_t cap, uint64_t n, size_t *used) {
    size_t total = 0;
    uint64_t i;
    for (i = 0; i < n; i++) {
        pbc_frame x;
        size_t len;
        fill_frame(&x, i);
        len = protobuf_c_message_get_packed_size(&x.f.base);
        if (len > cap - total) return -1;
        total += protobuf_c_message_pack(&x.f.base, buf + total);
    }
    *used = total;
    return 0;
}

int pbc_decode_mem(const uint8_t *const *msg, const size_t *len, uint64_t n, uint64_t *sum) {
    uint64_t s = 0, i;
    for (i = 0; i < n; i++) {
        Frame *f = frame__unpack(NULL, len[i], msg[i]);
        if (!f || !f->std_frame) return -1;
        s += f->std_frame->address;
        frame__free_unpacked(f, NULL);
    }
    *sum = s;
    return 0;
}
