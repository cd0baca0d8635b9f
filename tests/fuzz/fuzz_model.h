/* fuzz_model.h - compare frames models and build them from fuzz input (include after
   fuzz_util.h). Comparison is semantic: it ignores what the encoder does not write (the
   address of a register operand, a post list without has_post, ...) and treats an
   operand_info without taint as `no_taint: true`, which is what the encoder writes. */
#ifndef FRAMES_FUZZ_MODEL_H
#define FRAMES_FUZZ_MODEL_H

static int fz_bytes_eq(frames_bytes a, frames_bytes b) {
    return a.len == b.len && (a.len == 0 || memcmp(a.ptr, b.ptr, a.len) == 0);
}

static frames_taint fz_norm_taint(frames_taint t, int operand_info) {
    if (operand_info && t.set == 0) {
        t.set = FRAMES_TAINT_NONE;
        t.no_taint = 1;
    }
    return t;
}

static int fz_taint_eq(frames_taint a, frames_taint b, int operand_info) {
    a = fz_norm_taint(a, operand_info);
    b = fz_norm_taint(b, operand_info);
    if (a.set != b.set) return 0;
    if ((a.set & FRAMES_TAINT_NONE) && !a.no_taint != !b.no_taint) return 0;
    if ((a.set & FRAMES_TAINT_ID) && a.id != b.id) return 0;
    if ((a.set & FRAMES_TAINT_MULTIPLE) && !a.multiple != !b.multiple) return 0;
    return 1;
}

static int fz_operand_eq(const frames_operand *a, const frames_operand *b, int operand_info) {
    if ((a->spec & 3) != (b->spec & 3) || a->bit_length != b->bit_length) return 0;
    if ((a->spec & FRAMES_MEM) && a->address != b->address) return 0;
    if ((a->spec & FRAMES_REG) && !fz_bytes_eq(a->name, b->name)) return 0;
    if (operand_info && (!a->read != !b->read || !a->written != !b->written ||
                         !a->index != !b->index || !a->base != !b->base))
        return 0;
    return fz_taint_eq(a->taint, b->taint, operand_info) && fz_bytes_eq(a->value, b->value);
}

static int fz_operands_eq(const frames_operand *a, uint32_t na, const frames_operand *b,
                          uint32_t nb, int operand_info) {
    uint32_t i;
    if (na != nb) return 0;
    for (i = 0; i < na; i++)
        if (!fz_operand_eq(&a[i], &b[i], operand_info)) return 0;
    return 1;
}

static uint32_t fz_options(const frames_frame *f) {
    if (f->present) return f->present;
    return f->kind >= FRAMES_KIND_STD && f->kind <= FRAMES_KIND_UNKNOWN ? 1u << f->kind : 0;
}

static int fz_frame_eq(const frames_frame *a, const frames_frame *b) {
    uint32_t o = fz_options(a), i;
    if (o != fz_options(b)) return 0;
    if (o & (1u << FRAMES_KIND_STD)) {
        const frames_std_frame *x = &a->std, *y = &b->std;
        if (x->address != y->address || x->thread_id != y->thread_id ||
            !fz_bytes_eq(x->rawbytes, y->rawbytes) || !x->has_post != !y->has_post ||
            !x->has_mode != !y->has_mode)
            return 0;
        if (!fz_operands_eq(x->pre, x->npre, y->pre, y->npre, 1)) return 0;
        if (x->has_post && !fz_operands_eq(x->post, x->npost, y->post, y->npost, 1)) return 0;
        if (x->has_mode && !fz_bytes_eq(x->mode, y->mode)) return 0;
    }
    if (o & (1u << FRAMES_KIND_SYSCALL)) {
        const frames_syscall_frame *x = &a->syscall, *y = &b->syscall;
        if (x->address != y->address || x->thread_id != y->thread_id || x->number != y->number ||
            x->nargs != y->nargs)
            return 0;
        for (i = 0; i < x->nargs; i++)
            if (x->args[i] != y->args[i]) return 0;
    }
    if (o & (1u << FRAMES_KIND_EXCEPTION)) {
        const frames_exception_frame *x = &a->exception, *y = &b->exception;
        if (x->number != y->number || !x->has_thread_id != !y->has_thread_id ||
            !x->has_from_addr != !y->has_from_addr || !x->has_to_addr != !y->has_to_addr)
            return 0;
        if ((x->has_thread_id && x->thread_id != y->thread_id) ||
            (x->has_from_addr && x->from_addr != y->from_addr) ||
            (x->has_to_addr && x->to_addr != y->to_addr))
            return 0;
    }
    if (o & (1u << FRAMES_KIND_TAINT_INTRO)) {
        if (a->taint_intro.count != b->taint_intro.count) return 0;
        for (i = 0; i < a->taint_intro.count; i++) {
            const frames_taint_intro *x = &a->taint_intro.intros[i], *y = &b->taint_intro.intros[i];
            if (x->addr != y->addr || x->taint_id != y->taint_id ||
                !x->has_value != !y->has_value || !x->has_source_name != !y->has_source_name ||
                !x->has_offset != !y->has_offset)
                return 0;
            if ((x->has_value && !fz_bytes_eq(x->value, y->value)) ||
                (x->has_source_name && !fz_bytes_eq(x->source_name, y->source_name)) ||
                (x->has_offset && x->offset != y->offset))
                return 0;
        }
    }
    if (o & (1u << FRAMES_KIND_MODLOAD)) {
        const frames_modload_frame *x = &a->modload, *y = &b->modload;
        if (!fz_bytes_eq(x->module_name, y->module_name) || x->low_address != y->low_address ||
            x->high_address != y->high_address)
            return 0;
    }
    if (o & (1u << FRAMES_KIND_KEY)) {
        if (a->key.count != b->key.count) return 0;
        for (i = 0; i < a->key.count; i++) {
            const frames_tagged_values *x = &a->key.lists[i], *y = &b->key.lists[i];
            if ((x->tag_set & 3) != (y->tag_set & 3)) return 0;
            if ((x->tag_set & FRAMES_TAG_NO_THREAD_ID) && !x->no_thread_id != !y->no_thread_id)
                return 0;
            if ((x->tag_set & FRAMES_TAG_THREAD_ID) && x->thread_id != y->thread_id) return 0;
            if (!fz_operands_eq(x->values, x->count, y->values, y->count, 0)) return 0;
        }
    }
    if (o & (1u << FRAMES_KIND_UNKNOWN)) {
        const frames_unknown_option *x = &a->unknown, *y = &b->unknown;
        if (x->field != y->field || x->wire_type != y->wire_type) return 0;
        if (x->wire_type == 2 || x->wire_type == 3) {
            if (!fz_bytes_eq(x->payload, y->payload)) return 0;
        } else if (x->scalar != y->scalar) {
            return 0;
        }
    }
    return 1;
}

static int fz_strings_eq(const frames_bytes *a, uint32_t na, const frames_bytes *b, uint32_t nb) {
    uint32_t i;
    if (na != nb) return 0;
    for (i = 0; i < na; i++)
        if (!fz_bytes_eq(a[i], b[i])) return 0;
    return 1;
}

static int fz_double_eq(double a, double b) { return memcmp(&a, &b, sizeof a) == 0; }

static int fz_meta_eq(const frames_meta *a, const frames_meta *b) {
    return fz_bytes_eq(a->tracer_name, b->tracer_name) &&
           fz_strings_eq(a->tracer_args, a->ntracer_args, b->tracer_args, b->ntracer_args) &&
           fz_strings_eq(a->tracer_envp, a->ntracer_envp, b->tracer_envp, b->ntracer_envp) &&
           fz_bytes_eq(a->tracer_version, b->tracer_version) &&
           fz_bytes_eq(a->target_path, b->target_path) &&
           fz_strings_eq(a->target_args, a->ntarget_args, b->target_args, b->ntarget_args) &&
           fz_strings_eq(a->target_envp, a->ntarget_envp, b->target_envp, b->ntarget_envp) &&
           fz_bytes_eq(a->target_md5sum, b->target_md5sum) && a->fstats_size == b->fstats_size &&
           fz_double_eq(a->fstats_atime, b->fstats_atime) &&
           fz_double_eq(a->fstats_mtime, b->fstats_mtime) &&
           fz_double_eq(a->fstats_ctime, b->fstats_ctime) && fz_bytes_eq(a->user, b->user) &&
           fz_bytes_eq(a->host, b->host) && fz_double_eq(a->time, b->time);
}

/* ---------------------------------------------------------------- building models */

#define FZ_MAX_LIST 6

/* Storage for one frame's arrays. */
typedef struct fz_store {
    frames_operand ops[4][FZ_MAX_LIST];   /* pre, post, key values (2 lists) */
    int64_t args[FZ_MAX_LIST];
    frames_taint_intro intros[FZ_MAX_LIST];
    frames_tagged_values tagged[2];
} fz_store;

static void fz_build_operand(fz_in *in, frames_operand *op, int operand_info) {
    uint64_t bits = fz_take(in, 2);
    memset(op, 0, sizeof *op);
    op->spec = (uint8_t)(bits & 3);
    if (operand_info) {
        op->read = (bits >> 2) & 1;
        op->written = (bits >> 3) & 1;
        op->index = (bits >> 4) & 1;
        op->base = (bits >> 5) & 1;
    }
    op->taint.set = (uint8_t)((bits >> 6) & 7);
    op->taint.no_taint = (bits >> 9) & 1;
    op->taint.multiple = (bits >> 10) & 1;
    if (op->taint.set & FRAMES_TAINT_ID) op->taint.id = fz_take(in, 1 + (bits >> 11) % 8);
    op->bit_length = (int32_t)(uint32_t)fz_take(in, (bits >> 14) & 3 ? 4 : 1);
    if (op->spec & FRAMES_MEM) op->address = fz_take(in, 8);
    if (op->spec & FRAMES_REG) op->name = fz_take_bytes(in, 8);
    op->value = fz_take_bytes(in, 24);
}

static uint32_t fz_build_operands(fz_in *in, frames_operand *ops, int operand_info) {
    uint32_t n = (uint32_t)(fz_take(in, 1) % (FZ_MAX_LIST + 1)), i;
    for (i = 0; i < n; i++) fz_build_operand(in, &ops[i], operand_info);
    return n;
}

/* A frame with any combination of options (lenient encoding writes them all). */
static void fz_build_frame(fz_in *in, frames_frame *f, fz_store *s) {
    uint32_t opts = (uint32_t)fz_take(in, 1), i;
    memset(f, 0, sizeof *f);
    if ((opts & 0x80) == 0) { /* usually a single option, as real writers produce */
        f->kind = (frames_kind)(1 + opts % 7);
        opts = 1u << f->kind;
    } else {
        opts = (opts << 1) & 0xfe;
        f->present = opts;
        for (i = 1; i <= 7; i++)
            if (opts & (1u << i)) {
                f->kind = (frames_kind)i;
                break;
            }
    }
    if (opts & (1u << FRAMES_KIND_STD)) {
        uint64_t b = fz_take(in, 1);
        f->std.address = fz_take(in, 8);
        f->std.thread_id = fz_take(in, 1 + b % 4);
        f->std.rawbytes = fz_take_bytes(in, 16);
        f->std.npre = fz_build_operands(in, s->ops[0], 1);
        f->std.pre = s->ops[0];
        f->std.has_post = (b >> 4) & 1;
        if (f->std.has_post) {
            f->std.npost = fz_build_operands(in, s->ops[1], 1);
            f->std.post = s->ops[1];
        }
        f->std.has_mode = (b >> 5) & 1;
        if (f->std.has_mode) f->std.mode = fz_take_bytes(in, 10);
    }
    if (opts & (1u << FRAMES_KIND_SYSCALL)) {
        f->syscall.address = fz_take(in, 8);
        f->syscall.thread_id = fz_take(in, 2);
        f->syscall.number = fz_take(in, 2);
        f->syscall.nargs = (uint32_t)(fz_take(in, 1) % (FZ_MAX_LIST + 1));
        for (i = 0; i < f->syscall.nargs; i++) s->args[i] = (int64_t)fz_take(in, 8);
        f->syscall.args = s->args;
    }
    if (opts & (1u << FRAMES_KIND_EXCEPTION)) {
        uint64_t b = fz_take(in, 1);
        f->exception.number = fz_take(in, 4);
        f->exception.has_thread_id = b & 1;
        f->exception.has_from_addr = (b >> 1) & 1;
        f->exception.has_to_addr = (b >> 2) & 1;
        f->exception.thread_id = fz_take(in, 8);
        f->exception.from_addr = fz_take(in, 8);
        f->exception.to_addr = fz_take(in, 8);
    }
    if (opts & (1u << FRAMES_KIND_TAINT_INTRO)) {
        f->taint_intro.count = (uint32_t)(fz_take(in, 1) % (FZ_MAX_LIST + 1));
        for (i = 0; i < f->taint_intro.count; i++) {
            frames_taint_intro *t = &s->intros[i];
            uint64_t b = fz_take(in, 1);
            memset(t, 0, sizeof *t);
            t->addr = fz_take(in, 8);
            t->taint_id = fz_take(in, 2);
            t->has_value = b & 1;
            t->has_source_name = (b >> 1) & 1;
            t->has_offset = (b >> 2) & 1;
            if (t->has_value) t->value = fz_take_bytes(in, 8);
            if (t->has_source_name) t->source_name = fz_take_bytes(in, 8);
            if (t->has_offset) t->offset = fz_take(in, 4);
        }
        f->taint_intro.intros = s->intros;
    }
    if (opts & (1u << FRAMES_KIND_MODLOAD)) {
        f->modload.module_name = fz_take_bytes(in, 16);
        f->modload.low_address = fz_take(in, 8);
        f->modload.high_address = fz_take(in, 8);
    }
    if (opts & (1u << FRAMES_KIND_KEY)) {
        f->key.count = (uint32_t)(fz_take(in, 1) % 3);
        for (i = 0; i < f->key.count; i++) {
            frames_tagged_values *t = &s->tagged[i];
            uint64_t b = fz_take(in, 1);
            memset(t, 0, sizeof *t);
            t->tag_set = (uint8_t)(b & 3);
            t->no_thread_id = (b >> 2) & 1;
            t->thread_id = fz_take(in, 4);
            t->count = fz_build_operands(in, s->ops[2 + i], 0);
            t->values = s->ops[2 + i];
        }
        f->key.lists = s->tagged;
    }
    if (opts & (1u << FRAMES_KIND_UNKNOWN)) {
        /* an option the schema does not have, with a well-formed value */
        static const uint32_t wts[] = {0, 1, 2, 5};
        uint64_t b = fz_take(in, 1);
        f->unknown.field = 7 + (uint32_t)(fz_take(in, 2) % 1000);
        f->unknown.wire_type = wts[b & 3];
        f->unknown.scalar = fz_take(in, 8);
        if (f->unknown.wire_type == 5) f->unknown.scalar &= 0xffffffffu;
        if (f->unknown.wire_type == 2) f->unknown.payload = fz_take_bytes(in, 16);
    }
}

#endif
