/* seedgen - seed corpora for the fuzz targets, made at run time from the reference
   vectors (so the repository does not carry copies of them).

     seedgen files  OUTDIR FILE...   each file as one seed
     seedgen frames OUTDIR FILE...   the payload of every frame of each frames trace
     seedgen meta   OUTDIR FILE...   the meta frame payload of each frames trace
     seedgen unfinished OUTDIR FILE...  each finished trace as a writer killed inside
                                      finish leaves it: n = T = 0, TOC whole or cut
     seedgen tracedb OUTDIR FILE...  each trace-db trace cut after 0, 1, 2, 5, 20 and 100
                                      points (small seeds that still cover every type)
     seedgen pevent OUTDIR DIR/FILE.pevent...  a sideband file of ../shared/vectors/pt
                                      as fuzz_sideband's input: its case's pevent.*
                                      settings as the 40-byte header, then the file
     seedgen perfdata OUTDIR DIR/trace.pt...  a PT case as perf.data: its trace in two
                                      AUXTRACE records, its sideband (if any) as the
                                      kernel records, its cpu as HEADER_CPUID; once as a
                                      file (per-thread), once as a pipe (cpu 0)
     seedgen ptcase OUTDIR DIR/trace.pt...  a PT case of ../shared/vectors/pt as
                                      fuzz_ptdecode's input: header, the case's first
                                      image, trace.pt; once per decoder

   Seeds are named by a hash of their content, so duplicates (the many identical frames
   of the 10,001-frame vectors) are stored once. Files that do not open as traces are
   skipped in the frames/meta modes. */
#define FRAMES_IMPLEMENTATION
#include "frames.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int put_seed(const char *dir, const void *data, size_t len) {
    const unsigned char *p = (const unsigned char *)data;
    unsigned long long h = 1469598103934665603ull; /* FNV-1a 64 */
    char path[4096];
    FILE *f;
    size_t i;
    for (i = 0; i < len; i++) h = (h ^ p[i]) * 1099511628211ull;
    snprintf(path, sizeof path, "%s/seed-%016llx", dir, h);
    f = fopen(path, "wb");
    if (!f) {
        fprintf(stderr, "seedgen: cannot create %s\n", path);
        return -1;
    }
    if (len) fwrite(data, 1, len, f);
    return fclose(f) == 0 ? 0 : -1;
}

static int whole_file(const char *dir, const char *path) {
    FILE *f = fopen(path, "rb");
    static unsigned char buf[1 << 22];
    size_t n;
    if (!f) return -1;
    n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    return put_seed(dir, buf, n);
}

static uint64_t le64(const unsigned char *p) {
    uint64_t v = 0;
    int i;
    for (i = 7; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

static int unfinished(const char *dir, const char *path) {
    static unsigned char buf[1 << 22];
    FILE *f = fopen(path, "rb");
    size_t n, i;
    uint64_t T;
    static const size_t extra[] = {0, 8, 12, 16, 24};
    if (!f) return -1;
    n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    if (n < 48 || (T = le64(buf + 40)) < 48 || T >= n) return 0; /* not finished */
    memset(buf + 32, 0, 16);
    for (i = 0; i < sizeof extra / sizeof extra[0]; i++)
        if (T + extra[i] <= n && put_seed(dir, buf, (size_t)T + extra[i]) < 0) return -1;
    return put_seed(dir, buf, n);
}

static uint64_t le_n(const unsigned char *p, unsigned n) {
    uint64_t v = 0;
    while (n--) v = v << 8 | p[n];
    return v;
}

/* End offset of the trace-db point at off (0 when it is not complete). */
static size_t tdb_point_end(const unsigned char *d, size_t n, size_t off, const unsigned char *types,
                            uint32_t ntypes) {
    while (off < n) {
        unsigned tag = d[off++];
        if (tag == 0) return off;
        if (tag == 1 || tag == 4) off += 8;
        else if (tag == 3) off += 16;
        else if (tag == 2) {
            uint32_t type, fmt, size;
            if (n - off < 8) return 0;
            type = (uint32_t)le_n(d + off + 4, 4);
            if (type >= ntypes) return 0;
            fmt = (uint32_t)le_n(types + 12 * type + 4, 4);
            size = (uint32_t)le_n(types + 12 * type + 8, 4);
            off += 8;
            if (fmt == 4 && size == 0) {
                if (n - off < 4) return 0;
                size = (uint32_t)le_n(d + off, 4);
                off += 4;
            }
            if (n - off < size) return 0;
            off += size;
        } else return 0;
        if (off > n) return 0;
    }
    return 0;
}

static int tracedb(const char *dir, const char *path) {
    static unsigned char buf[1 << 22];
    static const size_t keep[] = {0, 1, 2, 5, 20, 100};
    FILE *f = fopen(path, "rb");
    size_t n, off, k = 0, i;
    uint64_t nchars;
    uint32_t ntypes;
    if (!f) return -1;
    n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    if (n < 12 || (nchars = le_n(buf, 8)) > n - 12) return 0;
    ntypes = (uint32_t)le_n(buf + 8 + nchars, 4);
    off = 12 + nchars;
    if ((uint64_t)ntypes * 12 > n - off) return 0;
    off += 12 * (size_t)ntypes;
    for (i = 0; i < sizeof keep / sizeof keep[0]; i++) {
        while (k < keep[i] && off < n) {
            size_t end = tdb_point_end(buf, n, off, buf + 12 + nchars, ntypes);
            if (!end) break;
            off = end;
            k++;
        }
        if (put_seed(dir, buf, off) < 0) return -1;
    }
    return 0;
}

/* The directory part of path (static storage). */
static const char *dir_of(const char *path) {
    static char dir[4096];
    char *slash;
    snprintf(dir, sizeof dir, "%s", path);
    slash = strrchr(dir, '/');
    if (slash) *slash = 0;
    else snprintf(dir, sizeof dir, ".");
    return dir;
}

/* Bytes of a whole file into buf (at most cap); -1 when it cannot be read. */
static long read_file(const char *path, unsigned char *buf, size_t cap) {
    FILE *f = fopen(path, "rb");
    size_t n;
    if (!f) return -1;
    n = fread(buf, 1, cap, f);
    fclose(f);
    return (long)n;
}

/* Value of "key=" in the case's case.txt into out ("" if absent). */
static void case_value(const char *dir, const char *key, char *out, size_t cap) {
    char path[4200], line[512];
    size_t k = strlen(key);
    FILE *f;
    out[0] = 0;
    snprintf(path, sizeof path, "%s/case.txt", dir);
    if (!(f = fopen(path, "r"))) return;
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, key, k) && line[k] == '=') {
            size_t n;
            line[strcspn(line, "\r\n")] = 0;
            n = strlen(line + k + 1);
            if (n >= cap) n = cap - 1;
            memcpy(out, line + k + 1, n);
            out[n] = 0;
            break;
        }
    fclose(f);
}

static void put64(unsigned char *p, uint64_t v) {
    int i;
    for (i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (8 * i));
}

static int pevent(const char *out, const char *path) {
    static unsigned char buf[40 + (1 << 20)];
    const char *dir = dir_of(path);
    char v[64];
    long n;
    uint64_t shift, mult;
    memset(buf, 0, 40);
    case_value(dir, "pevent.sample_type", v, sizeof v);
    put64(buf, strtoull(v, NULL, 0));
    case_value(dir, "pevent.time_zero", v, sizeof v);
    put64(buf + 8, strtoull(v, NULL, 0));
    case_value(dir, "pevent.time_mult", v, sizeof v);
    mult = v[0] ? strtoull(v, NULL, 0) : 1;
    buf[16] = (unsigned char)mult, buf[17] = (unsigned char)(mult >> 8);
    buf[18] = (unsigned char)(mult >> 16), buf[19] = (unsigned char)(mult >> 24);
    case_value(dir, "pevent.time_shift", v, sizeof v);
    shift = strtoull(v, NULL, 0);
    buf[20] = (unsigned char)shift, buf[21] = (unsigned char)(shift >> 8);
    case_value(dir, "pevent.kernel_start", v, sizeof v);
    put64(buf + 32, v[0] ? strtoull(v, NULL, 0) : UINT64_MAX);
    if ((n = read_file(path, buf + 40, sizeof buf - 40)) < 0) return -1;
    return put_seed(out, buf, 40 + (size_t)n);
}

/* perf.data in memory */
static unsigned char pd_buf[1 << 21];
static size_t pd_len;

static size_t pd_put(const void *p, size_t n) {
    size_t at = pd_len;
    if (pd_len + n > sizeof pd_buf) n = 0;   /* (the vectors are far smaller) */
    if (p) memcpy(pd_buf + pd_len, p, n);
    else memset(pd_buf + pd_len, 0, n);
    pd_len += n;
    return at;
}

static void pd_u64(uint64_t v) {
    unsigned char b[8];
    put64(b, v);
    pd_put(b, 8);
}

/* a record header: type, misc 0, size */
static void pd_hdr(uint32_t type, size_t size) {
    unsigned char h[8];
    put64(h, type);
    h[6] = (unsigned char)size, h[7] = (unsigned char)(size >> 8);
    pd_put(h, 8);
}

/* perf_event_attr (120 bytes): type, size, config, sample_type, flags (sample_id_all,
   context_switch) */
static void pd_attr(unsigned char *a, uint32_t type, uint64_t config, uint64_t sample_type) {
    memset(a, 0, 120);
    put64(a, type);
    a[4] = 120;
    put64(a + 8, config);
    put64(a + 24, sample_type);
    put64(a + 40, (1ull << 18) | (1ull << 26));
}

/* The data section: AUXTRACE_INFO, TIME_CONV, the sideband, FINISHED_ROUND, the trace in
   two AUXTRACE records of mmap 0 on cpu (-1: per-thread). */
static void pd_records(const char *dir, const unsigned char *pt, size_t ptlen, const unsigned char *sb,
                       size_t sblen, int32_t cpu) {
    char v[64];
    uint64_t shift, mult, zero, priv[16] = {8, 0, 1, 0, 1, 0, 0, 1, 0, 0, 0, 14, 2, 1, 0, 24};
    size_t i, half = ptlen / 2;
    case_value(dir, "pevent.time_shift", v, sizeof v);
    shift = strtoull(v, NULL, 0);
    case_value(dir, "pevent.time_mult", v, sizeof v);
    mult = v[0] ? strtoull(v, NULL, 0) : 1;
    case_value(dir, "pevent.time_zero", v, sizeof v);
    zero = strtoull(v, NULL, 0);
    priv[1] = shift, priv[2] = mult, priv[3] = zero;
    priv[9] = cpu >= 0;
    pd_hdr(70, 16 + 16 * 8);
    pd_u64(1);   /* PERF_AUXTRACE_INTEL_PT, reserved */
    for (i = 0; i < 16; i++) pd_u64(priv[i]);
    pd_hdr(79, 32);
    pd_u64(shift), pd_u64(mult), pd_u64(zero);
    pd_put(sb, sblen);
    pd_hdr(68, 8);
    for (i = 0; i < 2; i++) {
        size_t n = i ? ptlen - half : half;
        pd_hdr(71, 48);
        pd_u64(n);
        pd_u64(i ? half : 0);   /* offset */
        pd_u64(0);              /* reference */
        pd_u64((uint64_t)0xffffffffu << 32);   /* idx 0, tid -1 */
        pd_u64((uint32_t)cpu);  /* cpu, reserved */
        pd_put(pt + (i ? half : 0), n);
    }
}

static int perfdata(const char *out, const char *trace_path) {
    static unsigned char pt[1 << 19], sb[1 << 19];
    const char *dir = dir_of(trace_path);
    char path[4400], v[64], cpuid[96];
    unsigned char a[120];
    long ptlen, sblen;
    uint64_t st, attrs, ids, data, feat;
    unsigned fam = 0, model = 0, step = 0;
    snprintf(path, sizeof path, "%s/sb-primary.pevent", dir);
    if ((ptlen = read_file(trace_path, pt, sizeof pt)) < 0) return -1;
    if ((sblen = read_file(path, sb, sizeof sb)) < 0) sblen = 0;
    case_value(dir, "pevent.sample_type", v, sizeof v);
    st = strtoull(v, NULL, 0);
    case_value(dir, "cpu", v, sizeof v);
    sscanf(v, "%u/%u/%u", &fam, &model, &step);
    snprintf(cpuid, sizeof cpuid, "GenuineIntel,%u,%u,%u", fam, model, step);
    /* a file: header, ids, attrs, data, HEADER_CPUID */
    pd_len = 0;
    pd_put("PERFILE2", 8);
    pd_put(NULL, 96);
    ids = pd_len;
    pd_u64(100), pd_u64(200);
    attrs = pd_len;
    pd_attr(a, 8, 3ull << 14, st);
    pd_put(a, 120);
    pd_u64(ids), pd_u64(8);
    pd_attr(a, 1, 9, st);
    pd_put(a, 120);
    pd_u64(ids + 8), pd_u64(8);
    data = pd_len;
    pd_records(dir, pt, (size_t)ptlen, sb, (size_t)sblen, -1);
    feat = pd_len;
    pd_u64(feat + 16), pd_u64(4 + 64);
    {
        unsigned char c[68];
        memset(c, 0, sizeof c);
        c[0] = 64;
        memcpy(c + 4, cpuid, strlen(cpuid));
        pd_put(c, sizeof c);
    }
    put64(pd_buf + 8, 104);
    put64(pd_buf + 16, 136);
    put64(pd_buf + 24, attrs);
    put64(pd_buf + 32, 2 * 136);
    put64(pd_buf + 40, data);
    put64(pd_buf + 48, feat - data);
    put64(pd_buf + 72, 1ull << 9);
    if (put_seed(out, pd_buf, pd_len) < 0) return -1;
    /* a pipe: attrs as HEADER_ATTR records, cpu 0 */
    pd_len = 0;
    pd_put("PERFILE2", 8);
    pd_u64(16);
    pd_hdr(64, 8 + 120 + 8);
    pd_attr(a, 8, 3ull << 14, st);
    pd_put(a, 120);
    pd_u64(100);
    pd_records(dir, pt, (size_t)ptlen, sb, (size_t)sblen, 0);
    return put_seed(out, pd_buf, pd_len);
}

static int ptcase(const char *out, const char *trace_path) {
    static unsigned char buf[16 + 65535 + (1 << 20)];
    const char *dir = dir_of(trace_path);
    char image[4400] = "", cpu[64];
    struct dirent *e;
    DIR *d = opendir(dir);
    unsigned long long addr = 0;
    long ilen = 0, tlen;
    unsigned fam = 0, model = 0, step = 0, dec;
    int ncpu;
    if (!d) return -1;
    while ((e = readdir(d)) != NULL)   /* the first image by name */
        if (!strncmp(e->d_name, "image-0x", 8) && (!image[0] || strcmp(e->d_name, strrchr(image, '/') + 1) < 0))
            snprintf(image, sizeof image, "%s/%s", dir, e->d_name);
    closedir(d);
    if (image[0]) {
        addr = strtoull(strrchr(image, '/') + 7, NULL, 16);
        if ((ilen = read_file(image, buf + 16, 65535)) < 0) return -1;
    }
    if ((tlen = read_file(trace_path, buf + 16 + ilen, sizeof buf - 16 - (size_t)ilen)) < 0) return -1;
    case_value(dir, "cpu", cpu, sizeof cpu);
    ncpu = sscanf(cpu, "%u/%u/%u", &fam, &model, &step);
    memcpy(buf, &addr, 8);
    buf[8] = (unsigned char)ilen;
    buf[9] = (unsigned char)(ilen >> 8);
    buf[11] = (unsigned char)fam;
    buf[12] = (unsigned char)model;
    buf[13] = (unsigned char)step;
    buf[14] = buf[15] = 0;
    for (dec = 0; dec < 2; dec++) {
        buf[10] = (unsigned char)(dec | (ncpu >= 2 ? 32 : 0));
        if (put_seed(out, buf, 16 + (size_t)ilen + (size_t)tlen) < 0) return -1;
    }
    return 0;
}

static int from_trace(const char *dir, const char *path, int frames) {
    frames_reader *r;
    frames_error err;
    frames_raw raw;
    frames_bytes meta;
    int rc;
    if (frames_reader_open_path(&r, path, NULL, &err) < 0) return 0;
    if (!frames) {
        meta = frames_reader_meta_bytes(r);
        rc = meta.ptr ? put_seed(dir, meta.ptr, meta.len) : 0;
    } else {
        while ((rc = frames_reader_next_raw(r, &raw)) != 0) {
            if (rc > 0 && put_seed(dir, raw.payload.ptr, raw.payload.len) < 0) break;
        }
    }
    frames_reader_close(r);
    return rc < 0 ? -1 : 0;
}

int main(int argc, char **argv) {
    int i, failed = 0;
    if (argc < 3) {
        fprintf(stderr, "usage: seedgen files|frames|meta|unfinished|tracedb|ptcase|pevent|perfdata OUTDIR FILE...\n");
        return 2;
    }
    for (i = 3; i < argc; i++) {
        int rc;
        if (!strcmp(argv[1], "files")) rc = whole_file(argv[2], argv[i]);
        else if (!strcmp(argv[1], "frames")) rc = from_trace(argv[2], argv[i], 1);
        else if (!strcmp(argv[1], "meta")) rc = from_trace(argv[2], argv[i], 0);
        else if (!strcmp(argv[1], "unfinished")) rc = unfinished(argv[2], argv[i]);
        else if (!strcmp(argv[1], "tracedb")) rc = tracedb(argv[2], argv[i]);
        else if (!strcmp(argv[1], "ptcase")) rc = ptcase(argv[2], argv[i]);
        else if (!strcmp(argv[1], "pevent")) rc = pevent(argv[2], argv[i]);
        else if (!strcmp(argv[1], "perfdata")) rc = perfdata(argv[2], argv[i]);
        else {
            fprintf(stderr, "seedgen: unknown mode %s\n", argv[1]);
            return 2;
        }
        if (rc < 0) {
            fprintf(stderr, "seedgen: %s: failed\n", argv[i]);
            failed = 1;
        }
    }
    return failed;
}
