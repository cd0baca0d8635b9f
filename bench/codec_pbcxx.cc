// codec_pbcxx.cc - the benchmark's libprotobuf C++ peer, used as libtrace uses it: a
// `frame` message built per instruction, SerializeToString, fwrite of the size and the
// bytes; reading: fread of the size and the bytes, ParseFromArray. Code generated from
// tests/frames.proto by `protoc --cpp_out` (into the build directory, never committed).
//
// To measure libprotobuf at its best (and so keep our ratios conservative), one `frame`
// object and one std::string are reused for all frames: after Clear(), libprotobuf keeps
// the sub-messages and string capacity, so the steady state allocates nothing. Upstream
// libtrace allocates a new frame per read, which is slower.
#include "codec.h"
#include "frames.pb.h"

#include <string>

static void fill_operand(operand_info *op, const bench_insn &in, int which) {
    uint64_t value;
    if (which == 2) {   // the memory read
        op->mutable_operand_info_specific()->mutable_mem_operand()->set_address(in.mem_address);
        value = in.mem_value;
    } else {
        int reg = which == 3 ? in.reg_written : in.reg_read[which];
        op->mutable_operand_info_specific()->mutable_reg_operand()->set_name(
            bench_reg_names[reg], bench_reg_len[reg]);
        value = which == 3 ? in.written_value : in.read_value[which];
    }
    op->set_bit_length(64);
    operand_usage *u = op->mutable_operand_usage();
    u->set_read(which != 3);
    u->set_written(which == 3);
    u->set_index(false);
    u->set_base(false);
    op->mutable_taint_info()->set_no_taint(true);
    op->set_value(&value, 8);
}

static std::string meta_bytes() {
    meta_frame m;
    tracer *t = m.mutable_tracer();
    t->set_name(BENCH_META_TRACER_NAME);
    for (const char *a : bench_meta_tracer_args) t->add_args(a);
    t->set_version(BENCH_META_TRACER_VERSION);
    target *g = m.mutable_target();
    g->set_path(BENCH_META_TARGET_PATH);
    for (const char *a : bench_meta_target_args) g->add_args(a);
    for (const char *e : bench_meta_target_envp) g->add_envp(e);
    g->set_md5sum(bench_meta_md5, sizeof bench_meta_md5);
    fstats *s = m.mutable_fstats();
    s->set_size(BENCH_META_SIZE);
    s->set_atime(BENCH_META_ATIME);
    s->set_mtime(BENCH_META_MTIME);
    s->set_ctime(BENCH_META_CTIME);
    m.set_user(BENCH_META_USER);
    m.set_host(BENCH_META_HOST);
    m.set_time(BENCH_META_TIME);
    return m.SerializeAsString();
}

// Frame i into f (cleared first, reusing its sub-objects).
static void fill_frame(frame *f, uint64_t i) {
    bench_insn in;
    bench_gen(i, &in);
    f->Clear();
    std_frame *s = f->mutable_std_frame();
    s->set_address(in.address);
    s->set_thread_id(in.thread_id);
    s->set_rawbytes(in.raw, 3);
    operand_value_list *pre = s->mutable_operand_pre_list();
    for (int k = 0; k < 3; k++) fill_operand(pre->add_elem(), in, k);
    fill_operand(s->mutable_operand_post_list()->add_elem(), in, 3);
}

extern "C" int pbcxx_write(const char *path, uint64_t n) {
    bench_container c;
    std::string meta = meta_bytes(), bytes;
    frame f;
    if (bench_container_open(&c, path, meta.data(), meta.size()) < 0) return -1;
    for (uint64_t i = 0; i < n; i++) {
        fill_frame(&f, i);
        if (!f.SerializeToString(&bytes)) return -1;
        if (bench_container_add(&c, bytes.data(), bytes.size()) < 0) return -1;
    }
    return bench_container_finish(&c);
}

static uint64_t sum_operands(const operand_value_list &l) {
    uint64_t sum = 0;
    for (const operand_info &op : l.elem()) {
        const operand_info_specific &sp = op.operand_info_specific();
        const std::string &name = sp.reg_operand().name();
        const operand_usage &u = op.operand_usage();
        const taint_info &t = op.taint_info();
        sum += bench_sum_operand(sp.has_mem_operand(), sp.mem_operand().address(), name.data(),
                                 name.size(), op.bit_length(), u.read(), u.written(), u.index(),
                                 u.base(), t.no_taint() + t.taint_id() + t.taint_multiple(),
                                 op.value().data(), op.value().size());
    }
    return sum;
}

extern "C" int pbcxx_read(const char *path, uint64_t *count, uint64_t *sum) {
    bench_reader r;
    uint64_t len, s = 0, k = 0;
    frame f;
    int rc;
    if (bench_reader_open(&r, path) < 0) {
        bench_reader_close(&r);
        return -1;
    }
    while ((rc = bench_reader_next(&r, &len)) > 0) {
        if (!f.ParseFromArray(r.buf, (int)len)) {
            rc = -1;
            break;
        }
        const std_frame &sf = f.std_frame();
        s += bench_sum_frame(sf.address(), sf.thread_id(), sf.rawbytes().data(),
                             sf.rawbytes().size(), sf.operand_pre_list().elem_size(),
                             sf.operand_post_list().elem_size());
        s += sum_operands(sf.operand_pre_list()) + sum_operands(sf.operand_post_list());
        k++;
    }
    bench_reader_close(&r);
    *count = k;
    *sum = s;
    return rc;
}

// SerializeToString minus the string: ByteSizeLong, then the cached sizes into the buffer.
extern "C" int pbcxx_encode_mem(uint8_t *buf, size_t cap, uint64_t n, size_t *used) {
    frame f;
    size_t total = 0;
    for (uint64_t i = 0; i < n; i++) {
        fill_frame(&f, i);
        size_t len = f.ByteSizeLong();
        if (len > cap - total) return -1;
        f.SerializeWithCachedSizesToArray(buf + total);
        total += len;
    }
    *used = total;
    return 0;
}

extern "C" int pbcxx_decode_mem(const uint8_t *const *msg, const size_t *len, uint64_t n,
                                uint64_t *sum) {
    frame f;
    uint64_t s = 0;
    for (uint64_t i = 0; i < n; i++) {
        if (!f.ParseFromArray(msg[i], (int)len[i])) return -1;
        s += f.std_frame().address();
    }
    *sum = s;
    return 0;
}
