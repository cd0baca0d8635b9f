/* codec_ours.h - frames.h's side of the codec benchmark, shared by bench_codec.c and
   bench_zstd.c: PIN-like frames (codec.h's bench_gen) built in the frames.h model, and the
   checksum over every decoded field. Include after frames.h and codec.h. */
#ifndef FRAMES_BENCH_CODEC_OURS_H
#define FRAMES_BENCH_CODEC_OURS_H

/* What a tracer keeps between instructions: the operand array and the name table. */
typedef struct ours_frame {
    frames_frame f;
    frames_operand ops[4];
    uint64_t values[4];
    frames_bytes names[16];
    bench_insn in;
} ours_frame;

static void ours_init(ours_frame *x) {
    int k;
    memset(x, 0, sizeof *x);
    for (k = 0; k < 16; k++) x->names[k] = frames_bytes_of(bench_reg_names[k], bench_reg_len[k]);
}

static void fill_operand(ours_frame *x, int which) {
    frames_operand *op = &x->ops[which];
    memset(op, 0, sizeof *op);
    if (which == 2) {
        op->spec = FRAMES_MEM;
        op->address = x->in.mem_address;
    } else {
        op->spec = FRAMES_REG;
        op->name = x->names[which == 3 ? x->in.reg_written : x->in.reg_read[which]];
    }
    op->bit_length = 64;
    op->read = which != 3;
    op->written = which == 3;
    op->taint.set = FRAMES_TAINT_NONE;
    op->taint.no_taint = 1;
    op->value = frames_bytes_of(&x->values[which], 8);
}

/* Frame i, every field set again as for a new instruction. */
static void fill_frame(ours_frame *x, uint64_t i) {
    int k;
    bench_gen(i, &x->in);
    x->values[0] = x->in.read_value[0];
    x->values[1] = x->in.read_value[1];
    x->values[2] = x->in.mem_value;
    x->values[3] = x->in.written_value;
    for (k = 0; k < 4; k++) fill_operand(x, k);
    x->f.kind = FRAMES_KIND_STD;
    x->f.std.address = x->in.address;
    x->f.std.thread_id = x->in.thread_id;
    x->f.std.rawbytes = frames_bytes_of(x->in.raw, 3);
    x->f.std.pre = x->ops;
    x->f.std.npre = 3;
    x->f.std.post = x->ops + 3;
    x->f.std.npost = 1;
    x->f.std.has_post = 1;
}

static void ours_meta(frames_meta *m, frames_bytes *tracer_args, frames_bytes *target_args,
                      frames_bytes *target_envp) {
    size_t i;
    memset(m, 0, sizeof *m);
    for (i = 0; i < 5; i++) tracer_args[i] = frames_str(bench_meta_tracer_args[i]);
    for (i = 0; i < 2; i++) target_args[i] = frames_str(bench_meta_target_args[i]);
    for (i = 0; i < 2; i++) target_envp[i] = frames_str(bench_meta_target_envp[i]);
    m->tracer_name = frames_str(BENCH_META_TRACER_NAME);
    m->tracer_args = tracer_args;
    m->ntracer_args = 5;
    m->tracer_version = frames_str(BENCH_META_TRACER_VERSION);
    m->target_path = frames_str(BENCH_META_TARGET_PATH);
    m->target_args = target_args;
    m->ntarget_args = 2;
    m->target_envp = target_envp;
    m->ntarget_envp = 2;
    m->target_md5sum = frames_bytes_of(bench_meta_md5, 16);
    m->fstats_size = BENCH_META_SIZE;
    m->fstats_atime = BENCH_META_ATIME;
    m->fstats_mtime = BENCH_META_MTIME;
    m->fstats_ctime = BENCH_META_CTIME;
    m->user = frames_str(BENCH_META_USER);
    m->host = frames_str(BENCH_META_HOST);
    m->time = BENCH_META_TIME;
}

static uint64_t sum_operands(const frames_operand *ops, uint32_t n) {
    uint64_t sum = 0;
    uint32_t i;
    for (i = 0; i < n; i++) {
        const frames_operand *op = &ops[i];
        sum += bench_sum_operand((op->spec & FRAMES_MEM) != 0, op->address, op->name.ptr,
                                 op->name.len, op->bit_length, op->read, op->written, op->index,
                                 op->base, op->taint.no_taint + op->taint.id + op->taint.multiple,
                                 op->value.ptr, op->value.len);
    }
    return sum;
}

/* Write n PIN-like frames (bench_codec's trace: its meta, arch, m) through a writer that
   `open` makes (frames_writer_open_path, or a compressing one). */
typedef int (*ours_open_fn)(frames_writer **w, const char *path, const frames_writer_options *o,
                            const frames_meta *meta, frames_error *err);
static int ours_write_with(const char *path, uint64_t n, ours_open_fn open_writer) {
    frames_writer *w;
    frames_writer_options o;
    frames_error err;
    frames_meta meta;
    frames_bytes tracer_args[5], target_args[2], target_envp[2];
    ours_frame x;
    uint64_t i;
    ours_init(&x);
    ours_meta(&meta, tracer_args, target_args, target_envp);
    frames_writer_options_default(&o);
    o.arch = BENCH_ARCH;
    o.machine = BENCH_MACHINE;
    o.frames_per_toc = BENCH_FRAMES_PER_TOC;
    if (open_writer(&w, path, &o, &meta, &err) < 0) {
        fprintf(stderr, "bench: %s\n", err.message);
        return -1;
    }
    for (i = 0; i < n; i++) {
        fill_frame(&x, i);
        if (frames_writer_add(w, &x.f) < 0) {
            fprintf(stderr, "bench: %s\n", frames_writer_error(w)->message);
            frames_writer_abandon(w);
            return -1;
        }
    }
    return frames_writer_close(w) < 0 ? -1 : 0;
}

#endif
