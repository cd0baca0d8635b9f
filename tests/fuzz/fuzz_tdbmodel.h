/* fuzz_tdbmodel.h - an independent reading of a trace-db trace, written from
   spec/trace-db.md §1-2 and the library's documented differences (docs/query.md: complete
   points are kept, a point without STATEMENT_ID has statement 0 unless inherited), for the
   trace-db fuzz targets to compare frames_query.h's reader with. Deliberately simple: one
   pass, entry by entry, a sorted array for the memory map. Include after fuzz_util.h. */
#ifndef FRAMES_FUZZ_TDBMODEL_H
#define FRAMES_FUZZ_TDBMODEL_H

typedef struct tm_var {
    uint32_t name, type, ord, size;
    uint64_t voff;       /* offset of the value bytes in the file */
    int has_size;        /* POINTER inside a live allocation (inclusive end) */
    uint64_t bsize;
} tm_var;

typedef struct tm_point {
    uint64_t start, end;        /* [start, end): the point, END_ENTRY included */
    uint64_t stmt, stmt_inherit;
    int has_stmt;
    size_t var0, nvar, aux0, naux, buf0, nbuf;
} tm_point;

typedef struct tm_trace {
    int header_ok;
    uint64_t points_off;
    uint32_t nnames, ntypes;
    uint64_t *name_off;   /* offset of each name */
    uint32_t *name_len;
    uint32_t *tname, *tfmt, *tsize;
    tm_point *pts;
    size_t npts;
    tm_var *vars;
    size_t nvars;
    uint64_t *aux;
    size_t naux;
    fq_buffer_size *bufs;
    size_t nbufs;
    /* how the complete points end */
    int truncated, damaged, partial;   /* partial: the file ends inside an entry */
    uint64_t cut_offset;
    /* memory map: sorted by address */
    fq_buffer_size *mm;
    size_t nmm;
} tm_trace;

static uint64_t tm_le(const uint8_t *p, unsigned n) {
    uint64_t v = 0;
    while (n--) v = v << 8 | p[n];
    return v;
}

/* Room for element `cnt` of an array whose capacity is the next power of two >= 16. */
static void *tm_grow(void *p, size_t cnt, size_t elem) {
    if (!p) p = malloc(16 * elem);
    else if (cnt >= 16 && (cnt & (cnt - 1)) == 0) p = realloc(p, 2 * cnt * elem);
    FZ_CHECK(p);
    return p;
}
#define TM_PUSH(arr, cnt) ((arr) = tm_grow((arr), (cnt), sizeof *(arr)), &(arr)[(cnt)++])

static size_t tm_lower(const tm_trace *m, uint64_t key) {   /* first entry >= key */
    size_t lo = 0, hi = m->nmm;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (m->mm[mid].address < key) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

static void tm_mm_set(tm_trace *m, uint64_t addr, uint64_t size) {
    size_t i;
    if (addr == UINT64_MAX) return;   /* trace-db's sentinel */
    i = tm_lower(m, addr);
    if (i < m->nmm && m->mm[i].address == addr) {
        if (size) m->mm[i].size = size;
        else {
            memmove(m->mm + i, m->mm + i + 1, (m->nmm - i - 1) * sizeof *m->mm);
            m->nmm--;
        }
        return;
    }
    if (!size) return;
    (void)TM_PUSH(m->mm, m->nmm);
    memmove(m->mm + i + 1, m->mm + i, (m->nmm - 1 - i) * sizeof *m->mm);
    m->mm[i].address = addr;
    m->mm[i].size = size;
}

static int tm_mm_size(const tm_trace *m, uint64_t ptr, uint64_t *out) {
    size_t i = tm_lower(m, ptr);
    if (i < m->nmm && m->mm[i].address == ptr) {
        *out = m->mm[i].size;
        return 1;
    }
    if (i == 0) return 0;
    i--;
    if (ptr - m->mm[i].address > m->mm[i].size) return 0;
    *out = m->mm[i].size - (ptr - m->mm[i].address);
    return 1;
}

static int tm_header(tm_trace *m, const uint8_t *d, uint64_t n) {
    uint64_t nchars, off, i, k;
    if (n < 12) return 0;
    nchars = tm_le(d, 8);
    if (nchars > n - 12) return 0;
    if (nchars && d[8 + nchars - 1] != 0) return 0;
    for (i = 0, k = 0; i < nchars; i++) k += d[8 + i] == 0;
    m->nnames = (uint32_t)k;
    m->name_off = (uint64_t *)calloc(k + 1, sizeof *m->name_off);
    m->name_len = (uint32_t *)calloc(k + 1, sizeof *m->name_len);
    FZ_CHECK(m->name_off && m->name_len);
    for (i = 0, k = 0, off = 8; i < nchars; i++)
        if (d[8 + i] == 0) {
            m->name_off[k] = off;
            m->name_len[k++] = (uint32_t)(8 + i - off);
            off = 8 + i + 1;
        }
    off = 8 + nchars;
    m->ntypes = (uint32_t)tm_le(d + off, 4);
    off += 4;
    if ((uint64_t)m->ntypes * 12 > n - off) return 0;
    m->tname = (uint32_t *)calloc((size_t)m->ntypes + 1, 4);
    m->tfmt = (uint32_t *)calloc((size_t)m->ntypes + 1, 4);
    m->tsize = (uint32_t *)calloc((size_t)m->ntypes + 1, 4);
    FZ_CHECK(m->tname && m->tfmt && m->tsize);
    for (i = 0; i < m->ntypes; i++, off += 12) {
        m->tname[i] = (uint32_t)tm_le(d + off, 4);
        m->tfmt[i] = (uint32_t)tm_le(d + off + 4, 4);
        m->tsize[i] = (uint32_t)tm_le(d + off + 8, 4);
        if (m->tfmt[i] > FQ_TYPE_BLOB || m->tname[i] >= m->nnames) return 0;
        if (m->tfmt[i] != FQ_TYPE_BLOB && m->tfmt[i] != FQ_TYPE_SIGNED && m->tsize[i] > 8) return 0;
    }
    m->points_off = off;
    return 1;
}

/* Read one point at off. Returns 1 complete, 0 the file ends in it (m->partial when
   inside an entry), -1 damaged. */
static int tm_point_read(tm_trace *m, const uint8_t *d, uint64_t n, uint64_t off, tm_point *p) {
    uint32_t ord = 0;
    p->start = off;
    p->stmt = 0;
    p->has_stmt = 0;
    p->var0 = m->nvars;
    p->aux0 = m->naux;
    p->buf0 = m->nbufs;
    p->nvar = p->naux = p->nbuf = 0;
    for (;;) {
        unsigned tag;
        if (off >= n) return 0;
        tag = d[off++];
        if (tag == 0) {
            p->end = off;
            return 1;
        }
        if (tag == 1 || tag == 4) {
            if (n - off < 8) return m->partial = 1, 0;
            if (tag == 1) p->stmt = tm_le(d + off, 8), p->has_stmt = 1;
            else {
                *TM_PUSH(m->aux, m->naux) = tm_le(d + off, 8);
                p->naux++;
            }
            off += 8;
        } else if (tag == 3) {
            fq_buffer_size *b;
            if (n - off < 16) return m->partial = 1, 0;
            b = TM_PUSH(m->bufs, m->nbufs);
            b->address = tm_le(d + off, 8);
            b->size = tm_le(d + off + 8, 8);
            p->nbuf++;
            tm_mm_set(m, b->address, b->size);
            off += 16;
        } else if (tag == 2) {
            tm_var *v;
            uint32_t name, type, size;
            if (n - off < 8) return m->partial = 1, 0;
            name = (uint32_t)tm_le(d + off, 4);
            type = (uint32_t)tm_le(d + off + 4, 4);
            if (name >= m->nnames || type >= m->ntypes) return -1;
            off += 8;
            size = m->tsize[type];
            if (m->tfmt[type] == FQ_TYPE_BLOB && size == 0) {
                if (n - off < 4) return m->partial = 1, 0;
                size = (uint32_t)tm_le(d + off, 4);
                off += 4;
            }
            if (m->tfmt[type] == FQ_TYPE_SIGNED && size != 1 && size != 2 && size != 4 && size != 8)
                return -1;
            if (n - off < size) return m->partial = 1, 0;
            v = TM_PUSH(m->vars, m->nvars);
            v->name = name;
            v->type = type;
            v->ord = ord++;
            v->size = size;
            v->voff = off;
            v->has_size = 0;
            v->bsize = 0;
            if (m->tfmt[type] == FQ_TYPE_POINTER)
                v->has_size = tm_mm_size(m, tm_le(d + off, size), &v->bsize);
            p->nvar++;
            off += size;
        } else {
            return -1;
        }
    }
}

static void tm_read(tm_trace *m, const uint8_t *d, uint64_t n) {
    uint64_t off, last = 0;
    memset(m, 0, sizeof *m);
    if (!(m->header_ok = tm_header(m, d, n))) return;
    off = m->points_off;
    while (off < n) {
        tm_point p;
        int rc = tm_point_read(m, d, n, off, &p);
        if (rc <= 0) {
            m->truncated = rc == 0;
            m->damaged = rc < 0;
            m->cut_offset = off;
            /* what the incomplete point added is not part of the trace */
            m->nvars = p.var0;
            m->naux = p.aux0;
            m->nbufs = p.buf0;
            break;
        }
        /* FQ_OPEN_INHERIT_STMT: a point without STATEMENT_ID keeps the previous one */
        p.stmt_inherit = last = p.has_stmt ? p.stmt : last;
        *TM_PUSH(m->pts, m->npts) = p;
        off = p.end;
    }
}

/* Complete points of the prefix [0, cut): those that end inside it. */
static size_t tm_points_within(const tm_trace *m, uint64_t cut) {
    size_t lo = 0, hi = m->npts;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (m->pts[mid].end <= cut) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

static void tm_free(tm_trace *m) {
    free(m->name_off);
    free(m->name_len);
    free(m->tname);
    free(m->tfmt);
    free(m->tsize);
    free(m->pts);
    free(m->vars);
    free(m->aux);
    free(m->bufs);
    free(m->mm);
    memset(m, 0, sizeof *m);
}

#endif
