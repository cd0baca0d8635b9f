/* tdbbuild.h - a trace-db trace builder for tests (spec/trace-db.md), written
   independently of frames_query.h's reader so that tests can make exact (also damaged)
   traces record by record; the counterpart of pbbuild.h for frames. Header-only, static
   functions; the trace grows in memory (tdb.p, tdb.n; free(tdb.p) when done). */
#ifndef FRAMES_TDBBUILD_H
#define FRAMES_TDBBUILD_H

#include "testutil.h"   /* TU_FN */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct tdb {
    unsigned char *p;
    size_t n, cap;
} tdb;

TU_FN void tdb_raw(tdb *t, const void *data, size_t len) {
    t->p = (unsigned char *)tu_append(t->p, &t->n, &t->cap, data, len);
}

/* A frames_sink / fq index writer over t (bytes appended as they come). */
TU_FN int tdb_write(void *ctx, const void *data, size_t len) {
    tdb_raw((tdb *)ctx, data, len);
    return 0;
}

TU_FN void tdb_u8(tdb *t, unsigned v) {
    unsigned char c = (unsigned char)v;
    tdb_raw(t, &c, 1);
}

TU_FN void tdb_le(tdb *t, uint64_t v, int n) {
    unsigned char c[8];
    int i;
    for (i = 0; i < n; i++) c[i] = (unsigned char)(v >> (8 * i));
    tdb_raw(t, c, (size_t)n);
}

/* Starts a trace: names is a NUL-separated list ending with an empty name (nchars bytes
   in all); types[i] = {name index, format (FQ_TYPE_*), size}. */
TU_FN void tdb_header(tdb *t, const char *names, size_t nchars, const uint32_t types[][3],
                      uint32_t ntypes) {
    uint32_t i;
    memset(t, 0, sizeof *t);
    tdb_le(t, nchars, 8);
    tdb_raw(t, names, nchars);
    tdb_le(t, ntypes, 4);
    for (i = 0; i < ntypes; i++) {
        tdb_le(t, types[i][0], 4);
        tdb_le(t, types[i][1], 4);
        tdb_le(t, types[i][2], 4);
    }
}

/* Records of a point: STATEMENT_ID, VARIABLE (value of `size` bytes), BUFFER_SIZE; a
   point ends with tdb_u8(t, 0) (END_ENTRY). */
TU_FN void tdb_stmt(tdb *t, uint64_t s) {
    tdb_u8(t, 1);
    tdb_le(t, s, 8);
}

TU_FN void tdb_var(tdb *t, uint32_t name, uint32_t type, uint64_t v, int size) {
    tdb_u8(t, 2);
    tdb_le(t, name, 4);
    tdb_le(t, type, 4);
    tdb_le(t, v, size);
}

TU_FN void tdb_bufsize(tdb *t, uint64_t addr, uint64_t size) {
    tdb_u8(t, 3);
    tdb_le(t, addr, 8);
    tdb_le(t, size, 8);
}

#endif
