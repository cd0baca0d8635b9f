/* naive_query - the benchmark's in-process peer: trace-db's design written plainly in C.

   It loads a trace-db trace the way trace-db does (every point into heap objects, buffer
   sizes resolved at load), then answers one of the benchmark queries the way trace-db's
   Trace::query does (copy the filtered points, materialise each point's Cartesian product
   of candidates, test every tuple, collect the results), with the predicates compiled in
   C rather than interpreted and no big-number or decimal arithmetic. It prints the number
   of results. It reads only the layout bench/gen_tracedb.c writes (types by name).

   usage: naive_query TRACE Q1|Q2|Q3|Q4|Q5|Q6
          naive_query TRACE SCAN   the floor of any one-shot query of this format: map the
                                   file and walk its tags once (no decoding); prints the
                                   number of points
          naive_query TRACE TOUCH  the floor of any process that reads one byte of every
                                   4 KiB page (map the file, touch each page once): what a
                                   filter whose points lie on every page costs at least */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct var {
    uint32_t name, type;
    int64_t i;
    uint64_t u;
    double d;
    int has_size;
    uint64_t size;
} var;

typedef struct point {
    uint64_t stmt;
    uint32_t nvars;
    var *vars;
} point;

typedef struct alloc {
    uint64_t start, size;
} alloc;

static alloc *allocs;
static size_t nallocs, capallocs;

static size_t find_alloc(uint64_t key) {   /* first >= key */
    size_t lo = 0, hi = nallocs;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (allocs[mid].start < key) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

static void set_alloc(uint64_t start, uint64_t size) {
    size_t i = find_alloc(start);
    if (i < nallocs && allocs[i].start == start) {
        if (size) allocs[i].size = size;
        else memmove(allocs + i, allocs + i + 1, (--nallocs - i) * sizeof *allocs);
        return;
    }
    if (!size) return;
    if (nallocs == capallocs) {
        capallocs = capallocs ? capallocs * 2 : 64;
        allocs = realloc(allocs, capallocs * sizeof *allocs);
    }
    memmove(allocs + i + 1, allocs + i, (nallocs - i) * sizeof *allocs);
    allocs[i].start = start;
    allocs[i].size = size;
    nallocs++;
}

static int buffer_size(uint64_t p, uint64_t *out) {
    size_t i = find_alloc(p);
    if (i < nallocs && allocs[i].start == p) {
        *out = allocs[i].size;
        return 1;
    }
    if (i == 0) return 0;
    i--;
    if (p - allocs[i].start > allocs[i].size) return 0;
    *out = allocs[i].size - (p - allocs[i].start);
    return 1;
}

static uint64_t le(const unsigned char *p, int n) {
    uint64_t v = 0;
    while (n--) v = v << 8 | p[n];
    return v;
}

static int touch(const char *path) {
    struct stat st;
    int fd = open(path, O_RDONLY);
    const volatile unsigned char *d;
    uint64_t i, sum = 0;
    if (fd < 0 || fstat(fd, &st) < 0) return 1;
    d = (const volatile unsigned char *)mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (d == MAP_FAILED) return 1;
    for (i = 0; i < (uint64_t)st.st_size; i += 4096) sum += d[i];
    printf("%llu\n", (unsigned long long)sum);
    return 0;
}

static int scan(const char *path) {
    struct stat st;
    int fd = open(path, O_RDONLY);
    const unsigned char *d;
    uint64_t off, n, points = 0, i;
    uint32_t ntypes, sizes[256];
    if (fd < 0 || fstat(fd, &st) < 0) return 1;
    n = (uint64_t)st.st_size;
    d = mmap(NULL, (size_t)n, PROT_READ, MAP_PRIVATE, fd, 0);
    if (d == MAP_FAILED) return 1;
    off = 8 + le(d, 8);
    ntypes = (uint32_t)le(d + off, 4);
    off += 4;
    for (i = 0; i < ntypes && i < 256; i++, off += 12) sizes[i] = (uint32_t)le(d + off + 8, 4);
    while (off < n) {
        unsigned tag = d[off++];
        if (tag == 0) points++;
        else if (tag == 2) off += 8 + sizes[le(d + off + 4, 4) & 255];
        else off += tag == 3 ? 16 : 8;
    }
    printf("%llu\n", (unsigned long long)points);
    return 0;
}

typedef struct tuple {
    const var *v[2];
} tuple;

int main(int argc, char **argv) {
    FILE *f;
    unsigned char *d;
    long len;
    uint64_t off, nchars, i, npoints = 0, cap = 0, results = 0;
    uint32_t ntypes, t_int = 99, t_ptr = 99, *tsize, *tfmt;
    char **names;
    uint32_t nnames = 0;
    point *pts = NULL;
    int q;
    if (argc == 3 && !strcmp(argv[2], "SCAN")) return scan(argv[1]);
    if (argc == 3 && !strcmp(argv[2], "TOUCH")) return touch(argv[1]);
    if (argc != 3 || argv[2][0] != 'Q') {
        fprintf(stderr, "usage: naive_query TRACE Q1..Q6|SCAN|TOUCH\n");
        return 2;
    }
    q = atoi(argv[2] + 1);
    if (!(f = fopen(argv[1], "rb"))) {
        perror(argv[1]);
        return 1;
    }
    fseek(f, 0, SEEK_END);
    len = ftell(f);
    fseek(f, 0, SEEK_SET);
    d = malloc((size_t)len);
    if (fread(d, 1, (size_t)len, f) != (size_t)len) return 1;
    fclose(f);
    /* header */
    nchars = le(d, 8);
    names = malloc(nchars * sizeof *names);
    for (off = 8; off < 8 + nchars; off += strlen((char *)d + off) + 1) names[nnames++] = (char *)d + off;
    ntypes = (uint32_t)le(d + off, 4);
    off += 4;
    tsize = malloc(ntypes * sizeof *tsize);
    tfmt = malloc(ntypes * sizeof *tfmt);
    for (i = 0; i < ntypes; i++, off += 12) {
        const char *nm = names[le(d + off, 4)];
        tfmt[i] = (uint32_t)le(d + off + 4, 4);
        tsize[i] = (uint32_t)le(d + off + 8, 4);
        if (!strcmp(nm, "int")) t_int = (uint32_t)i;
        if (!strcmp(nm, "char*")) t_ptr = (uint32_t)i;
    }
    /* load every point into heap objects */
    while (off < (uint64_t)len) {
        point p;
        size_t capv = 8;
        p.stmt = 0;
        p.nvars = 0;
        p.vars = malloc(capv * sizeof *p.vars);
        for (;;) {
            unsigned tag = d[off++];
            if (tag == 0) break;
            if (tag == 1) {
                p.stmt = le(d + off, 8);
                off += 8;
            } else if (tag == 3) {
                set_alloc(le(d + off, 8), le(d + off + 8, 8));
                off += 16;
            } else if (tag == 4) {
                off += 8;
            } else {
                var v;
                uint32_t ty = (uint32_t)le(d + off + 4, 4), sz = tsize[ty];
                memset(&v, 0, sizeof v);
                v.name = (uint32_t)le(d + off, 4);
                v.type = ty;
                off += 8;
                v.u = le(d + off, (int)sz);
                if (tfmt[ty] == 1 && sz < 8 && (v.u >> (8 * sz - 1) & 1)) v.u |= ~0ull << (8 * sz);
                v.i = (int64_t)v.u;
                if (tfmt[ty] == 2 && sz == 8) memcpy(&v.d, &v.u, 8);
                if (tfmt[ty] == 3) v.has_size = buffer_size(v.u, &v.size);
                off += sz;
                if (p.nvars == capv) p.vars = realloc(p.vars, (capv *= 2) * sizeof *p.vars);
                p.vars[p.nvars++] = v;
            }
        }
        if (npoints == cap) pts = realloc(pts, (cap = cap ? cap * 2 : 1024) * sizeof *pts);
        pts[npoints++] = p;
    }
    {
        /* the query: filter (copied), candidates, materialised product, tests */
        int nfree = q == 2 ? 2 : 1;
        uint32_t want = q == 5 ? t_ptr : t_int;
        point **filtered = malloc(npoints * sizeof *filtered);
        uint64_t nf = 0;
        tuple *prod = NULL;
        size_t capprod = 0;
        const var **cand = malloc(64 * sizeof *cand);
        struct result {
            uint64_t point;
            tuple t;
        } *res = NULL;
        size_t capres = 0;
        for (i = 0; i < npoints; i++)
            if (q != 3 || pts[i].stmt == 7) filtered[nf++] = &pts[i];
        if (q == 6) {   /* pick: one point from a seeded generator */
            uint64_t s = 42 * 6364136223846793005ull + 1442695040888963407ull;
            filtered[0] = filtered[(s >> 33) % nf];
            nf = 1;
        }
        for (i = 0; i < nf; i++) {
            const point *p = filtered[i];
            size_t nc = 0, np = 0, a, b;
            uint32_t k;
            for (k = 0; k < p->nvars; k++)
                if (p->vars[k].type == want) cand[nc++] = &p->vars[k];
            np = nfree == 2 ? nc * nc : nc;
            if (np > capprod) prod = realloc(prod, (capprod = np * 2) * sizeof *prod);
            for (b = 0; b < (nfree == 2 ? nc : 1); b++)
                for (a = 0; a < nc; a++) {
                    prod[b * nc + a].v[0] = cand[a];
                    prod[b * nc + a].v[1] = nfree == 2 ? cand[b] : NULL;
                }
            for (a = 0; a < np; a++) {
                const tuple *t = &prod[a];
                int ok;
                switch (q) {
                case 2: ok = t->v[0]->i < t->v[1]->i; break;
                case 4: ok = 1; break;
                case 5: ok = t->v[0]->has_size && t->v[0]->size > 40; break;
                default: ok = t->v[0]->i > 500; break;
                }
                if (!ok) continue;
                if (results == capres) res = realloc(res, (capres = capres ? capres * 2 : 1024) * sizeof *res);
                res[results].point = (uint64_t)(p - pts);
                res[results].t = *t;
                results++;
            }
        }
        printf("%llu\n", (unsigned long long)results);
    }
    return 0;
}
