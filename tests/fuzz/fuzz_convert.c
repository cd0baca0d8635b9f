// fuzz-seeds: files vectors/frames/*.frames
// fuzz-flags: -max_len=16384

/* fuzz_convert - the converters and analyses over decoded frames, fed every frame the
   reader decodes from an arbitrary trace: coverage and its drcov file, Tenet (each
   register set, the first thread or the input's), statistics (frames_interop.h), the
   value profiler (frames_vprof.h), and the Parquet export of every table into memory
   (frames_parquet.h, uncompressed: zstd pages are frames_zstd's target's business).

   Invariants:
   - every call returns FRAMES_OK or a negative code with a message, and nothing leaks;
   - the statistics count every frame they were given; the profiler's top rows are at
     most the rows asked for, largest first;
   - a drcov file starts "DRCOV VERSION: 2"; every Tenet line ends in a newline;
   - a Parquet table that closes is a file that starts and ends with "PAR1", and its
     rows are those frames_parquet_export_rows counted. */
#include "fuzz_util.h"
#define FRAMES_INTEROP_IMPLEMENTATION
#include "frames_interop.h"
#define FRAMES_REPLAY_IMPLEMENTATION   /* the call stack and registers vprof walks with */
#define FRAMES_VPROF_IMPLEMENTATION
#include "frames_vprof.h"
#define FRAMES_PARQUET_IMPLEMENTATION
#include "frames_parquet.h"

#define FZ_MAX_FRAMES 2000

typedef struct fz_text {
    fz_mem m;
} fz_text;

static int fz_text_out(void *ctx, const char *s, size_t n) {
    fz_text *t = (fz_text *)ctx;
    FZ_CHECK(n == 0 || s != NULL);
    fz_mem_put(&t->m, s, n);
    return 0;
}

static int fz_sink_write(void *ctx, const void *data, size_t n) {
    fz_mem_put((fz_mem *)ctx, data, n);
    return 0;
}

static void fz_check_rc(int rc, const frames_error *err) {
    FZ_CHECK(rc == FRAMES_OK || (rc < 0 && err->message[0]));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    frames_reader *r;
    frames_error err;
    frames_frame f;
    frames_cov *cov;
    frames_tenet *ten;
    frames_stats *st;
    frames_vprof *vp;
    frames_vprof_builtin *vb = NULL;
    frames_vprof_options vo;
    frames_vprof_insn top[8];
    frames_parquet_export *px;
    frames_parquet_options po;
    frames_sink sinks[FRAMES_PARQUET_NTABLES];
    fz_mem tables[FRAMES_PARQUET_NTABLES];
    uint64_t rows[FRAMES_PARQUET_NTABLES], tid = 0, n = 0;
    fz_text drcov, tenet;
    frames_tenet_arch arch;
    frames_stats_summary sum;
    size_t i, ntop;
    int rc, tenet_ok = 1, px_ok = 1;
    size_t base = hc_state.live;
    hc_mark();

    if (frames_reader_open_memory(&r, data, size, NULL, &err) < 0) return 0;
    memset(&drcov, 0, sizeof drcov);
    memset(&tenet, 0, sizeof tenet);
    memset(tables, 0, sizeof tables);
    /* the register set from the header, or one chosen by the input's last byte */
    arch = frames_tenet_arch_of(frames_reader_header(r)->arch, frames_reader_header(r)->machine);
    if (arch == FRAMES_TENET_NONE && size) arch = (frames_tenet_arch)(1 + data[size - 1] % 3);
    FZ_CHECK(frames_cov_open(&cov, NULL, &err) == FRAMES_OK);
    FZ_CHECK(frames_stats_open(&st, NULL, &err) == FRAMES_OK);
    frames_vprof_options_default(&vo);
    vo.max_addresses = 256;   /* the caps are reached, and the untracked paths run */
    vo.max_instructions = 64;
    vo.arch = (uint32_t)frames_reader_header(r)->arch;   /* contexts: the call stack runs */
    vo.machine = frames_reader_header(r)->machine;
    vo.max_contexts = 128;
    vo.max_stack_depth = 8;
    FZ_CHECK(frames_vprof_open(&vp, &vo, &err) == FRAMES_OK);
    {   /* one built-in profiler over the framework, its caps small */
        static const char *const profs[] = {"zero-loads", "redundant-loads", "silent-stores",
                                            "dead-stores", "values"};
        frames_vprof_builtin_options bo;
        frames_vprof_builtin_options_default(&bo);
        bo.max_entries = 64;
        bo.max_addresses = 64;
        bo.registers = 1;
        bo.approx = 1e-6;
        FZ_CHECK(frames_vprof_builtin_open(&vb, vp, profs[size ? data[0] % 5 : 0], &bo, &err) ==
                 FRAMES_OK);
    }
    rc = frames_tenet_open(&ten, arch, size && (data[0] & 1) ? &tid : NULL, NULL, &err);
    fz_check_rc(rc, &err);
    if (rc < 0) ten = NULL;
    frames_parquet_options_default(&po);
    po.compression = FRAMES_PARQUET_UNCOMPRESSED;
    po.row_group_rows = 7;    /* several row groups and pages from a few frames */
    po.page_rows = 3;
    for (i = 0; i < FRAMES_PARQUET_NTABLES; i++) {
        memset(&sinks[i], 0, sizeof sinks[i]);
        sinks[i].ctx = &tables[i];
        sinks[i].write = fz_sink_write;
    }
    FZ_CHECK(frames_parquet_export_open(&px, sinks, &po, &err) == FRAMES_OK);

    while (n < FZ_MAX_FRAMES && (rc = frames_reader_next(r, &f)) != 0) {
        if (rc < 0) {
            if (rc == FRAMES_E_DECODE || rc == FRAMES_E_LIMIT) continue;   /* the next record */
            break;
        }
        if (!n && f.kind == FRAMES_KIND_STD) tid = f.std.thread_id;
        fz_check_rc(frames_cov_add_frame(cov, &f), frames_cov_error(cov));
        fz_check_rc(frames_stats_add_frame(st, &f), frames_stats_error(st));
        rc = frames_vprof_add_frame(vp, &f);
        FZ_CHECK(rc == FRAMES_OK || rc == FRAMES_E_NOMEM);
        if (ten && tenet_ok) {
            rc = frames_tenet_add_frame(ten, &f, fz_text_out, &tenet);
            fz_check_rc(rc, frames_tenet_error(ten));
            tenet_ok = rc == FRAMES_OK;
        }
        if (px_ok) {
            rc = frames_parquet_export_add(px, &f, n);
            fz_check_rc(rc, frames_parquet_export_error(px));
            px_ok = rc == FRAMES_OK;
        }
        n++;
    }
    frames_reader_close(r);

    rc = frames_cov_finish(cov);
    fz_check_rc(rc, frames_cov_error(cov));
    if (rc == FRAMES_OK) {
        rc = frames_cov_write_drcov(cov, fz_text_out, &drcov);
        fz_check_rc(rc, frames_cov_error(cov));
        if (rc == FRAMES_OK)
            FZ_CHECK(drcov.m.len >= 16 && !memcmp(drcov.m.p, "DRCOV VERSION: 2", 16));
    }
    frames_cov_close(cov);

    fz_check_rc(frames_stats_finish(st), frames_stats_error(st));
    frames_stats_summary_get(st, &sum);
    FZ_CHECK(sum.frames == n);
    frames_stats_close(st);

    ntop = frames_vprof_top(vp, FRAMES_VPROF_ACCESSES, top, 8);
    FZ_CHECK(ntop <= 8);
    for (i = 1; i < ntop; i++)
        FZ_CHECK(frames_vprof_metric_of(&top[i - 1], FRAMES_VPROF_ACCESSES) >=
                 frames_vprof_metric_of(&top[i], FRAMES_VPROF_ACCESSES));
    {
        frames_vprof_entry ent[4];
        size_t k, ne = frames_vprof_builtin_top(vb, ent, 4);
        FZ_CHECK(ne <= 4);
        for (k = 1; k < ne; k++) FZ_CHECK(ent[k - 1].bytes >= ent[k].bytes);
    }
    frames_vprof_builtin_close(vb);
    frames_vprof_close(vp);

    if (ten) {
        if (tenet_ok) fz_check_rc(frames_tenet_finish(ten, fz_text_out, &tenet), frames_tenet_error(ten));
        FZ_CHECK(tenet.m.len == 0 || tenet.m.p[tenet.m.len - 1] == '\n');
        frames_tenet_close(ten);
    }

    frames_parquet_export_rows(px, rows);
    if (px_ok) {
        rc = frames_parquet_export_close(px, &err);
        fz_check_rc(rc, &err);
        for (i = 0; i < FRAMES_PARQUET_NTABLES && rc == FRAMES_OK; i++)
            FZ_CHECK(tables[i].len >= 12 && !memcmp(tables[i].p, "PAR1", 4) &&
                     !memcmp(tables[i].p + tables[i].len - 4, "PAR1", 4));
    } else {
        frames_parquet_export_abandon(px);
    }

    for (i = 0; i < FRAMES_PARQUET_NTABLES; i++) free(tables[i].p);
    free(drcov.m.p);
    free(tenet.m.p);
    FZ_CHECK(hc_state.live == base);
    FZ_CHECK_MEMORY(base, size);
    return 0;
}
