// fuzz-needs: intel-pt.h -lipt
// fuzz-seeds: perfdata vectors/pt/*/trace.pt
// fuzz-flags: -max_len=16384 -dict=tests/fuzz/sideband.dict

/* fuzz_perf - frames_pt.h's perf.data reader on arbitrary files (file and pipe layout),
   then decoding each PT stream it finds with its sideband attached.
   Seeds: every case of ../shared/vectors/pt made into perf.data (seedgen perfdata: the
   trace in two AUXTRACE records, the case's sideband, HEADER_CPUID; as a file and as a
   pipe) and tests/fuzz/seeds/fuzz_perf/ (two cpus, snapshot mode; a tests/ptsynth.h trace
   whose sideband maps code.bin, which this target puts in its directory).

   Invariants:
   - opening fails only with a code and a message, and leaves no reader;
   - every AUXTRACE piece lies inside the file; a stream's size is the sum of its pieces
     and its bytes are theirs, in file order (a single piece is read in place);
   - each sideband stream is a sequence of whole records, each a copy of a kernel record
     of the file; the records are ordered by time, and the per-cpu streams hold exactly
     the records of the stream of all records;
   - the options and sideband configuration derived from the file are usable (a time
     conversion is valid when the file has one);
   - memory held stays within fz_memory_bound of the file size (no allocation sized from
     a count in the file);
   - decoding each stream with its sideband terminates and its counts are consistent. */
#include "fuzz_util.h"
#include "fuzz_pt.h"
#include "../ptsynth.h"

static int fz_stop_unsafe(void *ctx, const frames_pt_sb_record *r) {
    (void)ctx;
    return fz_unsafe_name(r);
}

static int fz_inside(const uint8_t *p, size_t n, const uint8_t *data, size_t size) {
    return n == 0 || (p >= data && n <= size && (size_t)(p - data) <= size - n);
}

static void fz_check_streams(const frames_perf *pd, const uint8_t *data, size_t size) {
    size_t i, j;
    FZ_CHECK(frames_perf_nstreams(pd) <= pd->npieces);
    FZ_CHECK(frames_perf_stream_at(pd, frames_perf_nstreams(pd)) == NULL);
    for (i = 0; i < pd->npieces; i++)
        FZ_CHECK(pd->pieces[i].off <= size && pd->pieces[i].size <= size - pd->pieces[i].off);
    for (i = 0; i < frames_perf_nstreams(pd); i++) {
        const frames_perf_stream *s = frames_perf_stream_at(pd, i);
        uint64_t total = 0, pos = 0;
        uint32_t pieces = 0;
        FZ_CHECK(s && s->pieces >= 1);
        for (j = 0; j < pd->npieces; j++) {
            const frames__perf_piece *p = &pd->pieces[j];
            if (pd->info.snapshot_mode ? j != i : p->idx != s->idx) continue;
            if (pd->info.snapshot_mode && pieces) break;
            FZ_CHECK(pos + p->size <= s->size);
            FZ_CHECK(p->size == 0 || !memcmp(pd->stream_ptr[i] + pos, data + p->off, (size_t)p->size));
            pos += p->size;
            total += p->size;
            pieces++;
        }
        if (!pd->info.snapshot_mode) FZ_CHECK(pieces == s->pieces && total == s->size);
        if (s->pieces == 1) FZ_CHECK(fz_inside(pd->stream_ptr[i], (size_t)s->size, data, size));
    }
}

/* Walk a record stream: whole records, each equal to the file's record at recs[k] for the
   records of that cpu in order. Returns the bytes. */
static size_t fz_check_sideband(const frames_perf *pd, int32_t cpu, const uint8_t *data) {
    frames_bytes b = frames_perf_sideband(pd, cpu);
    size_t off = 0, k = 0;
    while (off < b.len) {
        size_t size;
        FZ_CHECK(b.len - off >= 8);
        size = (size_t)b.ptr[off + 6] | (size_t)b.ptr[off + 7] << 8;
        FZ_CHECK(size >= 8 && size <= b.len - off);
        while (k < pd->nrecs && cpu != -2 && pd->recs[k].cpu != cpu) k++;
        FZ_CHECK(k < pd->nrecs);
        FZ_CHECK(pd->recs[k].size == size && !memcmp(b.ptr + off, data + pd->recs[k].off, size));
        k++;
        off += size;
    }
    return b.len;
}

static void fz_decode(const frames_perf *pd, size_t i) {
    frames_pt_options o;
    frames_pt_sb_config base;
    frames_pt *pt;
    frames_pt_stats st;
    frames_pt_callbacks cb;
    frames_error err;
    int rc;
    frames_pt_options_default(&o);
    frames_perf_pt_options(pd, &o);
    FZ_CHECK(frames_pt_open(&pt, &o, &err) == FRAMES_OK);
    frames_pt_sb_config_default(&base);
    base.sysroot = fz_sysroot();   /* MMAP names are looked up in the private directory only */
    rc = frames_perf_attach(pd, i, pt, &base, &err);
    if (rc == FRAMES_OK) {
        memset(&cb, 0, sizeof cb);
        cb.sb_record = fz_stop_unsafe;
        frames_pt_set_callbacks(pt, &cb);
        rc = frames_pt_decode(pt, NULL, &st, &err);
        if (frames_perf_stream_at(pd, i)->size == 0) FZ_CHECK(rc == FRAMES_E_INVALID);
        else FZ_CHECK(rc == FRAMES_OK || rc == FRAMES_E_STOPPED);
        if (rc == FRAMES_OK) FZ_CHECK(st.trace_bytes == frames_perf_stream_at(pd, i)->size);
        FZ_CHECK(st.reconstruct_errors == 0);
    } else {
        FZ_CHECK(err.code == rc && err.message[0]);
    }
    frames_pt_close(pt);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    size_t base = hc_state.live, i, all;
    uint8_t *copy = (uint8_t *)malloc(size ? size : 1);   /* exactly the input: ASan sees overreads */
    frames_perf *pd = (frames_perf *)&base;
    const frames_perf_info *in;
    frames_pt_sb_config c;
    frames_error err;
    int rc;
    FZ_CHECK(copy);
    memcpy(copy, data, size);
    if (!fz_dir[0]) fz_put_file("code.bin", ptsynth_code, sizeof ptsynth_code);
    hc_mark();
    rc = frames_perf_open_memory(&pd, copy, size, NULL, &err);
    if (rc < 0) {
        FZ_CHECK(pd == NULL && err.code == rc && err.message[0]);
        free(copy);
        FZ_CHECK(hc_state.live == base);
        return 0;
    }
    in = frames_perf_info_get(pd);
    FZ_CHECK(in->nattrs == pd->nattrs && in->pipe_mode == (frames__le64(copy + 8) == 16));
    FZ_CHECK(in->sideband_records == pd->nrecs && memchr(in->cpuid, 0, sizeof in->cpuid));
    fz_check_streams(pd, copy, size);
    for (i = 1; i < pd->nrecs; i++)
        FZ_CHECK(pd->recs[i - 1].time < pd->recs[i].time ||
                 (pd->recs[i - 1].time == pd->recs[i].time && pd->recs[i - 1].seq < pd->recs[i].seq));
    for (i = 0, all = 0; i < pd->nsb; i++)
        if (pd->sb[i].cpu != -2) all += fz_check_sideband(pd, pd->sb[i].cpu, copy);
    for (i = 0; i < pd->nrecs; i++)   /* a record of "cpu" 0xfffffffe only in the stream of all */
        if (pd->recs[i].cpu == -2) all += pd->recs[i].size;
    FZ_CHECK(fz_check_sideband(pd, -2, copy) == all);
    {   /* a cpu without records: nothing */
        int32_t cpu = -3;
        for (i = 0; i < pd->nsb; i++)
            if (pd->sb[i].cpu == cpu) cpu--, i = (size_t)-1;
        FZ_CHECK(frames_perf_sideband(pd, cpu).len == 0 && frames_perf_sideband(pd, cpu).ptr == NULL);
    }
    frames_perf_sb_config(pd, &c, NULL);
    FZ_CHECK(c.time_mult != 0 && c.time_shift < 64);
    FZ_CHECK_MEMORY(base, size);
    for (i = 0; i < frames_perf_nstreams(pd) && i < 3; i++) fz_decode(pd, i);
    frames_perf_close(pd);
    free(copy);
    FZ_CHECK(hc_state.live == base);
    return 0;
}
