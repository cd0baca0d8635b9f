/* test_parquet.c - frames_parquet.h and `frames export --parquet` against independent
   expectations: the Thrift compact protocol's bytes worked out by hand from its
   specification, and DuckDB (the real engine, @duckdb/node-api from npm, installed into
   build/duckdb by ./build.sh test) reading what we write: every table of every reference
   vector and of a trace recorded by `frames record`, compared with `frames dump --jsonl`,
   `frames stat` and `frames query`; the encodings chosen (delta, dictionary, their
   fallbacks to plain) named by DuckDB and every value read back; statistics per row
   group, row groups skipped; bad input to the command. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <libgen.h>
#include <stdint.h>
#include <sys/stat.h>

#include "frames.h"
/* The Thrift compact writer is private to frames_parquet.h: this file holds a private copy
   of the implementation to check its bytes (frames.h's stays shared). */
#define FRAMES_PARQUET_STATIC
#define FRAMES_PARQUET_IMPLEMENTATION
#include "frames_parquet.h"
#include "testutil.h"
#ifdef FRAMES_HAVE_ZSTD
#include <zstd.h>
#endif

static char duckdir[4096];

/* ------------------------------------------------------------------ Thrift compact */

/* Each expectation is worked out from the compact protocol's specification (field header
   = delta << 4 | type when the delta is 1..15, else the type byte and a zigzag varint id;
   i16/i32/i64 zigzag varints; binary = varint length + bytes; list header = size << 4 |
   element type when size < 15, else 0xf0 | type and a varint size; bool fields carry
   the value in the type nibble, 1 true, 2 false; a struct ends with a 0 byte). */
static void test_thrift_compact_bytes(void **state) {
    uint8_t buf[256];
    frames__parquet_tc t;
    static const uint8_t want[] = {
        0x15, 0x00,             /* field 1 i32 0: delta 1, type 5; zigzag(0) = 0 */
        0x15, 0xc8, 0x01,       /* field 2 i32 100: zigzag 200 = 0xc8 0x01 */
        0x15, 0x01,             /* field 3 i32 -1: zigzag 1 */
        0x2c,                   /* field 5 struct: delta 2, type 12 */
        0x15, 0xf3, 0x01,       /*   field 1 i32 -122: zigzag 243 = 0xf3 0x01 */
        0x11,                   /*   field 2 bool true: type nibble 1 */
        0x12,                   /*   field 3 bool false: type nibble 2 */
        0x00,                   /*   stop */
        0xf6,                   /* field 20 i64 after field 5: delta 15 still fits */
        0x80, 0x80, 0x80, 0x80, 0x80, 0x40,   /* i64 2^40: zigzag 2^41 as a varint */
        0x16, 0x03,             /* field 21 i64 -2: delta 1, zigzag 3 */
        0x18, 0x02, 'a', 'b',   /* field 22 binary "ab" */
        0x19, 0x35, 0x02, 0x04, 0x06,   /* field 23 list<i32> of 3: 1, 2, 3 */
        0x19, 0xf8, 0x14,       /* field 24 list<binary> of 20 */
        0x04, 0xc8, 0x01, 0x0e, /* field 100 i16 7: delta 76, long form: type 4, zigzag
                                   id 200, then zigzag(7) = 14 */
        0x13, 0x7f,             /* field 101 byte 127 */
        0x00                    /* stop of the outer struct */
    };
    int i;
    (void)state;
    frames__parquet_tc_init(&t, buf, sizeof buf, NULL);
    frames__parquet_tc_i32(&t, 1, 0);
    frames__parquet_tc_i32(&t, 2, 100);
    frames__parquet_tc_i32(&t, 3, -1);
    frames__parquet_tc_begin(&t, 5);
    frames__parquet_tc_i32(&t, 1, -122);
    frames__parquet_tc_bool(&t, 2, 1);
    frames__parquet_tc_bool(&t, 3, 0);
    frames__parquet_tc_end(&t);
    frames__parquet_tc_i64(&t, 20, (int64_t)1 << 40);
    frames__parquet_tc_i64(&t, 21, -2);
    frames__parquet_tc_binary(&t, 22, "ab", 2);
    frames__parquet_tc_list(&t, 23, FRAMES__PARQUET_TC_I32, 3);
    for (i = 1; i <= 3; i++) frames__parquet_tc_i32(&t, 0, i);
    frames__parquet_tc_list(&t, 24, FRAMES__PARQUET_TC_BINARY, 20);   /* header only */
    frames__parquet_tc_i16(&t, 100, 7);
    frames__parquet_tc_byte(&t, 101, 127);
    frames__parquet_tc_raw(&t, "", 1);
    assert_int_equal(frames__parquet_tc_status(&t), FRAMES_OK);
    assert_int_equal(t.len, sizeof want);
    assert_memory_equal(t.buf, want, sizeof want);
    /* a fixed buffer that is too small fails with E_SPACE and stays failed */
    frames__parquet_tc_init(&t, buf, 3, NULL);
    frames__parquet_tc_binary(&t, 1, "abcdef", 6);
    frames__parquet_tc_i32(&t, 2, 1);
    assert_int_equal(frames__parquet_tc_status(&t), FRAMES_E_SPACE);
    /* a struct end without a begin is a caller error */
    frames__parquet_tc_init(&t, buf, sizeof buf, NULL);
    frames__parquet_tc_end(&t);
    assert_int_equal(frames__parquet_tc_status(&t), FRAMES_E_INVALID);
    /* a field id going down takes the long form: type byte + zigzag id */
    frames__parquet_tc_init(&t, buf, sizeof buf, NULL);
    frames__parquet_tc_i32(&t, 5, 1);
    frames__parquet_tc_i32(&t, 4, 1);
    {
        static const uint8_t w2[] = {0x55, 0x02, 0x05, 0x08, 0x02};
        assert_int_equal(t.len, sizeof w2);
        assert_memory_equal(t.buf, w2, sizeof w2);
    }
}

/* ------------------------------------------------------------------ DuckDB */

/* Statements separated by "\n;;\n"; each result's rows as "a|b|c" lines, then "@@". An
   error is a row "ERROR: first line of the message". */
static const char duck_js[] =
    "const path = require('path');\n"
    "const fs = require('fs');\n"
    "const { DuckDBInstance } = require(path.join(process.argv[2], 'node_modules/@duckdb/node-api'));\n"
    "(async () => {\n"
    "  const db = await DuckDBInstance.create(':memory:');\n"
    "  const c = await db.connect();\n"
    "  let out = '';\n"
    "  for (const sql of fs.readFileSync(process.argv[3], 'utf8').split('\\n;;\\n')) {\n"
    "    if (!sql.trim()) continue;\n"
    "    try {\n"
    "      const r = await c.runAndReadAll(sql);\n"
    "      for (const row of r.getRowsJson())\n"
    "        out += row.map(v => v === null ? 'NULL' : typeof v === 'object' ? JSON.stringify(v)\n"
    "                                                : String(v)).join('|') + '\\n';\n"
    "    } catch (e) { out += 'ERROR: ' + String(e.message).split('\\n')[0] + '\\n'; }\n"
    "    out += '@@\\n';\n"
    "  }\n"
    "  process.stdout.write(out);\n"
    "})().catch(e => { console.error(e.message); process.exit(1); });\n";

static int have_duckdb(const char *dir) {
    char p[4200];
    struct stat st;
    snprintf(p, sizeof p, "%s/node_modules/@duckdb/node-api/package.json", dir);
    return stat(p, &st) == 0;
}

/* build/duckdb next to build/frames (or build/asan/frames), or $FRAMES_DUCKDB. */
static int find_duckdb(void) {
    char bin[4096], *d;
    const char *env = getenv("FRAMES_DUCKDB");
    if (env && *env) {
        snprintf(duckdir, sizeof duckdir, "%s", env);
        return have_duckdb(duckdir);
    }
    if (!realpath(tu_frames_bin(), bin)) return 0;
    d = dirname(bin);
    snprintf(duckdir, sizeof duckdir, "%s/duckdb", d);
    if (have_duckdb(duckdir)) return 1;
    snprintf(duckdir, sizeof duckdir, "%s/../duckdb", d);
    return have_duckdb(duckdir);
}

/* Batches: statements run by one DuckDB process (a node start costs about a second on a
   busy machine), each with the text its result must be. */
#define BATCH_MAX 512
static struct {
    char *sql;
    size_t len, cap;
    int n;
    char *what[BATCH_MAX], *want[BATCH_MAX];
} batch;

static void batch_vadd(const char *what, const char *want, const char *fmt, va_list ap) {
    char sql[16384];
    size_t n;
    vsnprintf(sql, sizeof sql, fmt, ap);
    n = strlen(sql);
    assert_true(batch.n < BATCH_MAX);
    if (batch.len + n + 8 > batch.cap) {
        batch.cap = (batch.len + n + 8) * 2;
        batch.sql = (char *)realloc(batch.sql, batch.cap);
        assert_non_null(batch.sql);
    }
    memcpy(batch.sql + batch.len, sql, n);
    memcpy(batch.sql + batch.len + n, "\n;;\n", 5);
    batch.len += n + 4;
    batch.what[batch.n] = strdup(what);
    batch.want[batch.n] = strdup(want);
    batch.n++;
}

static void batch_add(const char *what, const char *want, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    batch_vadd(what, want, fmt, ap);
    va_end(ap);
}

/* Run the batch; results[i] (malloc'd) when results is given, else each is compared with
   its expected text. */
static void batch_run_into(char **results) {
    char *out, *p;
    int st, i, bad = 0;
    assert_int_equal(tu_write_file(tu_workdir_path("q.sql"), batch.sql ? batch.sql : "", batch.len), 0);
    out = tu_run(&st, "node %s %s %s 2>&1", tu_workdir_path("q.js"), duckdir, tu_workdir_path("q.sql"));
    if (st != 0) fprintf(stderr, "DuckDB (node) failed:\n%s", out);
    assert_int_equal(st, 0);
    p = out;
    for (i = 0; i < batch.n; i++) {
        char *end = strstr(p, "@@\n");
        assert_non_null(end);
        *end = 0;
        if (results) {
            results[i] = strdup(p);
        } else if (strcmp(p, batch.want[i]) != 0) {
            fprintf(stderr, "%s:\n--- DuckDB\n%s--- expected\n%s", batch.what[i], p, batch.want[i]);
            bad++;
        }
        p = end + 3;
        free(batch.what[i]);
        free(batch.want[i]);
    }
    free(out);
    free(batch.sql);
    memset(&batch, 0, sizeof batch);
    assert_int_equal(bad, 0);
}
#define batch_run() batch_run_into(NULL)

/* One statement, its result (malloc'd); an error fails the test unless status is given
   (then 1 and the "ERROR: ..." row). */
static char *duck_st(int *status, const char *fmt, ...) {
    char *res;
    va_list ap;
    assert_int_equal(batch.n, 0);   /* a statement of its own */
    va_start(ap, fmt);
    batch_vadd("", "", fmt, ap);
    va_end(ap);
    batch_run_into(&res);
    if (status) {
        *status = strncmp(res, "ERROR: ", 7) == 0;
    } else if (strncmp(res, "ERROR: ", 7) == 0) {
        fprintf(stderr, "DuckDB: %s", res);
        fail();
    }
    return res;
}
#define duck(...) duck_st(NULL, __VA_ARGS__)

static void expect_text(const char *what, const char *got, const char *want) {
    if (strcmp(got, want) != 0) {
        fprintf(stderr, "%s:\n--- DuckDB\n%s--- expected\n%s", what, got, want);
        fail();
    }
}

static char *frames_out(const char *fmt, ...) {
    char cmd[8192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    return tu_run_ok(cmd, "%s %s", tu_frames_bin(), cmd);
}

/* ------------------------------------------------------------------ the writer, own table */

static uint64_t rng_state;
static uint64_t rnd(void) {   /* xorshift64* */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545f4914f6cdd1dull;
}

typedef struct file_sink {
    FILE *f;
} file_sink;

/* A table with every kind of column and value distributions that exercise RLE runs,
   bit-packed runs, dictionaries that overflow in the middle of a chunk, nulls, long byte
   strings, lists (empty ones too) and random values (pages zstd cannot shrink, which the
   writer stores); several row groups and pages. DuckDB must give back
   exactly the rows we wrote in a CSV file (read by DuckDB's CSV reader). */
static void write_own_table(const char *pq, const char *csv, int compression, uint64_t *gmin,
                            uint64_t *gmax, uint32_t group_rows, uint32_t rows, int thread) {
    static const frames_parquet_column cols[] = {
        {"u", FRAMES_PARQUET_U64, 0, 0, 1},
        {"i", FRAMES_PARQUET_I32, 0, 0, 1},
        {"s", FRAMES_PARQUET_STRING, 1, 0, 1},
        {"b", FRAMES_PARQUET_BOOL, 0, 0, 0},
        {"x", FRAMES_PARQUET_BYTES, 1, 0, 1},
        {"l", FRAMES_PARQUET_I64, 0, 1, 1},
        {"v", FRAMES_PARQUET_I64, 0, 0, 0},
        {"r", FRAMES_PARQUET_U64, 0, 0, 0},
    };
    static const char *const words[] = {"RAX", "R_EAX", "xmm0", "caf\xc3\xa9", "", "ZF"};
    frames_parquet_options o;
    frames_parquet *w;
    frames_error err;
    frames_sink sink;
    FILE *f = fopen(pq, "wb"), *c = fopen(csv, "w");
    uint32_t r, k;
    assert_non_null(f);
    assert_non_null(c);
    frames_parquet_options_default(&o);
    o.row_group_rows = group_rows;
    o.page_rows = 700;
    o.compression = compression;
    o.dictionary_max_entries = 300;   /* u overflows its dictionary in every group */
    o.writer_thread = thread;
    sink = frames_sink_file(f);
    assert_int_equal(frames_parquet_open(&w, &sink, cols, 8, &o, &err), FRAMES_OK);
    assert_int_equal(frames_parquet_metadata(w, "test", "own table"), FRAMES_OK);
    rng_state = 0x9e3779b97f4a7c15ull;
    for (r = 0; r < rows; r++) {
        uint64_t u, x = rnd();
        int32_t i = (int32_t)(r / 37 % 5) - 2;             /* long runs: RLE */
        int64_t l[5];
        uint32_t nl = (uint32_t)(x % 4), g = r / group_rows;
        uint8_t bytes[100];
        size_t nb = (size_t)(x >> 8) % 90;
        /* mostly 400 distinct values (some above 2^63), sometimes anything */
        u = (x % 7 == 0) ? rnd() : (uint64_t)(x >> 20) % 400 * 0x0123456789abcdefull;
        if (r % group_rows == 0) gmin[g] = gmax[g] = u;
        if (u < gmin[g]) gmin[g] = u;
        if (u > gmax[g]) gmax[g] = u;
        frames_parquet_put_u64(w, 0, u);
        frames_parquet_put_i32(w, 1, i);
        fprintf(c, "%llu|%d|", (unsigned long long)u, (int)i);
        if (x % 5 == 0) {
            frames_parquet_put_null(w, 2);
            fputs("NULL|", c);
        } else {
            const char *s = words[(x >> 3) % 6];
            frames_parquet_put_bytes(w, 2, s, strlen(s));
            fprintf(c, "<%s>|", s);
        }
        frames_parquet_put_bool(w, 3, (x >> 5) % 3 == 0);
        fprintf(c, "%s|", (x >> 5) % 3 == 0 ? "true" : "false");
        for (k = 0; k < nb; k++) bytes[k] = (uint8_t)((x >> 13) % 3 + k);
        if (x % 11 == 0) {
            frames_parquet_put_null(w, 4);
            fputs("NULL|", c);
        } else {
            frames_parquet_put_bytes(w, 4, bytes, nb);
            fputs("x", c);
            for (k = 0; k < nb; k++) fprintf(c, "%02x", bytes[k]);
            fputs("|", c);
        }
        fputs("[", c);
        for (k = 0; k < nl; k++) {
            l[k] = (int64_t)(rnd() % 1000) - 500;
            fprintf(c, "%s%lld", k ? ";" : "", (long long)l[k]);
        }
        fputs("]|", c);
        frames_parquet_put_list_i64(w, 5, l, nl);
        frames_parquet_put_i64(w, 6, -(int64_t)r);
        fprintf(c, "%lld|", -(long long)r);
        x = rnd();
        frames_parquet_put_u64(w, 7, x);
        fprintf(c, "%llu\n", (unsigned long long)x);
        assert_int_equal(frames_parquet_row_end(w), FRAMES_OK);
    }
    assert_int_equal(frames_parquet_close(w), FRAMES_OK);
    assert_int_equal(fclose(f), 0);
    assert_int_equal(fclose(c), 0);
}

/* The pages of random values are zstd frames of raw blocks, written by hand (zstd itself
   writes a 2-byte content size for pages this small, so a frame header 0xa0 with a 4-byte
   size is ours): libzstd must decode each to its declared size. DuckDB read them above. */
static void check_stored_frames(const char *pq) {
#ifdef FRAMES_HAVE_ZSTD
    static const unsigned char magic[5] = {0x28, 0xb5, 0x2f, 0xfd, 0xa0};
    size_t len, i, frames = 0;
    unsigned char *b = tu_read_file(pq, &len), *out;
    assert_non_null(b);
    for (i = 0; i + 9 <= len; i++) {
        unsigned long long size;
        size_t csize, got;
        if (memcmp(b + i, magic, 5) != 0) continue;
        size = ZSTD_getFrameContentSize(b + i, len - i);
        csize = ZSTD_findFrameCompressedSize(b + i, len - i);
        assert_false(ZSTD_isError(csize));
        assert_true(size > 0 && size < (1u << 20));
        out = (unsigned char *)malloc((size_t)size);
        assert_non_null(out);
        got = ZSTD_decompress(out, (size_t)size, b + i, csize);
        assert_int_equal(got, size);
        assert_int_equal(csize, size + 12);   /* header, one raw block: nothing saved */
        assert_memory_equal(out, b + i + 12, (size_t)size);
        free(out);
        frames++;
        i += csize - 1;
    }
    assert_true(frames >= 20);   /* column r: most of its 30 pages */
    free(b);
#else
    (void)pq;
#endif
}

static void check_own_table(int compression) {
    uint64_t gmin[8], gmax[8];
    char want[4096];
    uint32_t g;
    size_t n = 0;
    char pq[600], csv[600];
    snprintf(pq, sizeof pq, "%s", tu_workdir_path(compression ? "own_zstd.parquet" : "own_plain.parquet"));
    snprintf(csv, sizeof csv, "%s", tu_workdir_path("own.csv"));
    write_own_table(pq, csv, compression, gmin, gmax, 3000, 20000, 1);
    {   /* the writer thread changes nothing: the same bytes when the caller writes */
        char alone[600];
        snprintf(alone, sizeof alone, "%s", tu_workdir_path("own_alone.parquet"));
        write_own_table(alone, csv, compression, gmin, gmax, 3000, 20000, 0);
        assert_true(tu_same_bytes(pq, alone));
        assert_int_equal(remove(alone), 0);
    }
    batch_add("own table: rows, rows only in Parquet, rows only in the CSV", "20000|0|0\n",
              "WITH p AS (SELECT u, i, CASE WHEN s IS NULL THEN NULL ELSE '<' || s || '>' END, "
              "b, CASE WHEN x IS NULL THEN NULL ELSE 'x' || lower(hex(x)) END, "
              "'[' || array_to_string(l, ';') || ']', v, r FROM '%s'), "
              "c AS (SELECT * FROM read_csv('%s', delim = '|', header = false, quote = '', "
              "nullstr = 'NULL', columns = {'u': 'UBIGINT', 'i': 'INTEGER', 's': 'VARCHAR', "
              "'b': 'BOOLEAN', 'x': 'VARCHAR', 'l': 'VARCHAR', 'v': 'BIGINT', 'r': 'UBIGINT'})) "
              "SELECT (SELECT count(*) FROM p), (SELECT count(*) FROM (FROM p EXCEPT ALL FROM c)), "
              "(SELECT count(*) FROM (FROM c EXCEPT ALL FROM p))", pq, csv);
    /* min/max statistics of every row group, unsigned order (values above 2^63) */
    for (g = 0; g < 7; g++)
        n += (size_t)snprintf(want + n, sizeof want - n, "%u|%llu|%llu|%s\n", g,
                              (unsigned long long)gmin[g], (unsigned long long)gmax[g],
                              compression ? "ZSTD" : "UNCOMPRESSED");
    batch_add("own table: statistics of u per row group", want,
              "SELECT row_group_id, stats_min_value, stats_max_value, compression FROM "
              "parquet_metadata('%s') WHERE path_in_schema = 'u' ORDER BY row_group_id", pq);
    batch_add("own table: types", "UBIGINT,INTEGER,VARCHAR,BOOLEAN,BLOB,BIGINT[],BIGINT,UBIGINT\n",
              "SELECT string_agg(column_type, ',') FROM (DESCRIBE SELECT * FROM '%s')", pq);
    batch_add("own table: key/value metadata", "test|own table\n",
              "SELECT key, value FROM parquet_kv_metadata('%s')", pq);
    batch_run();
    if (compression) check_stored_frames(pq);
}

static void test_writer_own_table(void **state) {
    (void)state;
    if (frames_parquet_have_zstd()) check_own_table(FRAMES_PARQUET_ZSTD);
    check_own_table(FRAMES_PARQUET_UNCOMPRESSED);
}

static void test_writer_misuse(void **state) {
    static const frames_parquet_column cols[] = {{"a", FRAMES_PARQUET_U64, 0, 0, 1},
                                                 {"b", FRAMES_PARQUET_STRING, 1, 0, 1}};
    frames_parquet *w;
    frames_error err;
    frames_sink sink;
    FILE *f = fopen(tu_workdir_path("misuse.parquet"), "wb");
    (void)state;
    sink = frames_sink_file(f);
    assert_int_equal(frames_parquet_open(&w, &sink, cols, 0, NULL, &err), FRAMES_E_INVALID);
    assert_int_equal(frames_parquet_open(&w, &sink, cols, 2, NULL, &err), FRAMES_OK);
    frames_parquet_put_u64(w, 0, 1);   /* a row with one value for two columns */
    assert_int_equal(frames_parquet_row_end(w), FRAMES_E_INVALID);
    assert_non_null(strstr(frames_parquet_error(w)->message, "1 values for 2 columns"));
    assert_true(frames_parquet_close(w) < 0);
    assert_int_equal(frames_parquet_open(&w, &sink, cols, 2, NULL, &err), FRAMES_OK);
    frames_parquet_put_null(w, 0);     /* a null in a required column */
    frames_parquet_put_null(w, 1);
    assert_int_equal(frames_parquet_row_end(w), FRAMES_E_INVALID);
    assert_non_null(strstr(frames_parquet_error(w)->message, "not optional"));
    frames_parquet_abandon(w);
    fclose(f);
}

/* A sink that takes 20000 bytes, then fails. */
static int failing_write(void *ctx, const void *p, size_t n) {
    size_t *room = (size_t *)ctx;
    (void)p;
    if (n > *room) return -1;
    *room -= n;
    return 0;
}

/* A sink that fails while the writer thread writes a row group: the caller gets its
   error at a later row or at the finish, and the writer refuses more rows; abandoning a
   writer whose thread is busy frees everything (ASan, valgrind). */
static void test_writer_thread_errors(void **state) {
    static const frames_parquet_column cols[] = {{"a", FRAMES_PARQUET_U64, 0, 0, 0}};
    frames_parquet_options o;
    frames_parquet *w;
    frames_error err;
    frames_sink sink;
    size_t room = 20000;
    uint64_t r;
    int rc = FRAMES_OK;
    (void)state;
    memset(&sink, 0, sizeof sink);
    sink.write = failing_write;
    sink.ctx = &room;
    frames_parquet_options_default(&o);
    o.row_group_rows = 1000;   /* 8000 bytes of values a row group */
    o.compression = FRAMES_PARQUET_UNCOMPRESSED;
    assert_true(o.writer_thread);
    assert_int_equal(frames_parquet_open(&w, &sink, cols, 1, &o, &err), FRAMES_OK);
    for (r = 0; r < 100000 && rc == FRAMES_OK; r++) {
        frames_parquet_put_u64(w, 0, r * 0x9e3779b97f4a7c15ull);
        rc = frames_parquet_row_end(w);
    }
    if (rc == FRAMES_OK) rc = frames_parquet_finish(w);
    assert_int_equal(rc, FRAMES_E_IO);
    assert_non_null(strstr(frames_parquet_error(w)->message, "write failed"));
    frames_parquet_put_u64(w, 0, 1);
    assert_int_equal(frames_parquet_row_end(w), FRAMES_E_IO);
    assert_int_equal(frames_parquet_close(w), FRAMES_E_IO);
    room = (size_t)-1;   /* a busy thread at abandon */
    assert_int_equal(frames_parquet_open(&w, &sink, cols, 1, &o, &err), FRAMES_OK);
    for (r = 0; r < 5000; r++) {
        frames_parquet_put_u64(w, 0, r);
        assert_int_equal(frames_parquet_row_end(w), FRAMES_OK);
    }
    frames_parquet_abandon(w);
}

/* Encodings: a table whose columns each call for one of Parquet's encodings, pages of
   700 rows (so blocks of 128 deltas end inside pages and a page ends with one value).
   DuckDB must give back the rows of the CSV written next to it, and parquet_metadata
   must name the encoding we meant for every chunk of each column:
   seq     INT64 r, with a jump of 2^62 every 997 rows (a miniblock 63 bits wide)
   wrap    INT32 alternating INT32_MIN and INT32_MAX (+-1 in 32-bit wrapping arithmetic)
   txt     STRING, 20000 distinct texts, empty ones and nulls, no dictionary
   few     STRING, 3 texts: a dictionary
   many    UINT64 with a dictionary of at most 300 entries and 1000 distinct values per
           row group: the dictionary overflows, the chunk is plain
   none    INT64 and BYTES, every value null (pages without values) */
static void test_encodings(void **state) {
    static const frames_parquet_column cols[] = {
        {"seq", FRAMES_PARQUET_I64, 0, 0, 0},  {"wrap", FRAMES_PARQUET_I32, 0, 0, 0},
        {"txt", FRAMES_PARQUET_STRING, 1, 0, 0}, {"few", FRAMES_PARQUET_STRING, 0, 0, 1},
        {"many", FRAMES_PARQUET_U64, 0, 0, 1}, {"none", FRAMES_PARQUET_I64, 1, 0, 0},
        {"noneb", FRAMES_PARQUET_BYTES, 1, 0, 1},
    };
    static const char *const few[] = {"pre", "post", "key"};
    const uint32_t rows = 12601;   /* 18 pages of 700 and one of a single row */
    frames_parquet_options o;
    frames_parquet *w;
    frames_error err;
    frames_sink sink;
    char pq[600], csv[600];
    FILE *f, *c;
    uint32_t r;
    (void)state;
    snprintf(pq, sizeof pq, "%s", tu_workdir_path("enc.parquet"));
    snprintf(csv, sizeof csv, "%s", tu_workdir_path("enc.csv"));
    f = fopen(pq, "wb");
    c = fopen(csv, "w");
    assert_non_null(f);
    assert_non_null(c);
    frames_parquet_options_default(&o);
    o.row_group_rows = 4200;
    o.page_rows = 700;
    o.dictionary_max_entries = 300;
    sink = frames_sink_file(f);
    assert_int_equal(frames_parquet_open(&w, &sink, cols, 7, &o, &err), FRAMES_OK);
    rng_state = 0x2545f4914f6cdd1dull;
    for (r = 0; r < rows; r++) {
        int64_t seq = (int64_t)r + (r % 997 == 5 ? ((int64_t)1 << 62) : 0);
        int32_t wrap = r % 2 ? INT32_MAX : INT32_MIN;
        uint64_t many = (rnd() % 1000) * 0x9e3779b97f4a7c15ull;
        char txt[32];
        frames_parquet_put_i64(w, 0, seq);
        frames_parquet_put_i32(w, 1, wrap);
        fprintf(c, "%lld|%d|", (long long)seq, (int)wrap);
        if (r % 13 == 0) {
            frames_parquet_put_null(w, 2);
            fputs("NULL|", c);
        } else {
            if (r % 17 == 0) txt[0] = 0;   /* an empty string */
            else snprintf(txt, sizeof txt, "t%u", r * 7919u % 20011u);
            frames_parquet_put_bytes(w, 2, txt, strlen(txt));
            fprintf(c, "<%s>|", txt);
        }
        frames_parquet_put_bytes(w, 3, few[r / 50 % 3], strlen(few[r / 50 % 3]));
        frames_parquet_put_u64(w, 4, many);
        frames_parquet_put_null(w, 5);
        frames_parquet_put_null(w, 6);
        fprintf(c, "%s|%llu|NULL|NULL\n", few[r / 50 % 3], (unsigned long long)many);
        assert_int_equal(frames_parquet_row_end(w), FRAMES_OK);
    }
    assert_int_equal(frames_parquet_close(w), FRAMES_OK);
    assert_int_equal(fclose(f), 0);
    assert_int_equal(fclose(c), 0);
    batch_add("encodings: rows, rows only in Parquet, rows only in the CSV", "12601|0|0\n",
              "WITH p AS (SELECT seq, wrap, CASE WHEN txt IS NULL THEN NULL ELSE '<' || txt || '>' END, "
              "few, many, none, noneb FROM '%s'), "
              "c AS (SELECT * FROM read_csv('%s', delim = '|', header = false, quote = '', "
              "nullstr = 'NULL', columns = {'seq': 'BIGINT', 'wrap': 'INTEGER', 'txt': 'VARCHAR', "
              "'few': 'VARCHAR', 'many': 'UBIGINT', 'none': 'BIGINT', 'noneb': 'BLOB'})) "
              "SELECT (SELECT count(*) FROM p), (SELECT count(*) FROM (FROM p EXCEPT ALL FROM c)), "
              "(SELECT count(*) FROM (FROM c EXCEPT ALL FROM p))", pq, csv);
    /* the last row group has one row: a dictionary or deltas would not pay, it is plain */
    batch_add("encodings: per column, the first three row groups and the last",
              "few|PLAIN, RLE_DICTIONARY|DELTA_LENGTH_BYTE_ARRAY\n"
              "many|PLAIN|PLAIN\n"
              "none|PLAIN, RLE|PLAIN, RLE\n"
              "noneb|PLAIN, RLE|PLAIN, RLE\n"
              "seq|DELTA_BINARY_PACKED|PLAIN\n"
              "txt|RLE, DELTA_LENGTH_BYTE_ARRAY|RLE, DELTA_LENGTH_BYTE_ARRAY\n"
              "wrap|DELTA_BINARY_PACKED|PLAIN\n",
              "SELECT path_in_schema, string_agg(DISTINCT encodings, ';') FILTER (row_group_id < 3), "
              "string_agg(encodings, ';') FILTER (row_group_id = 3) FROM parquet_metadata('%s') "
              "GROUP BY ALL ORDER BY 1", pq);
    batch_add("encodings: statistics of the delta-encoded columns",
              "seq|0|4611686018427399873\nwrap|-2147483648|2147483647\n",
              "SELECT path_in_schema, min(stats_min_value::BIGINT), max(stats_max_value::BIGINT) "
              "FROM parquet_metadata('%s') WHERE path_in_schema IN ('seq', 'wrap') GROUP BY 1 "
              "ORDER BY 1", pq);
    batch_run();
}

/* ------------------------------------------------------------------ trace tables */

static const char jsonl_columns[] =
    "columns = {'frame': 'UBIGINT', 'pc': 'UBIGINT', 'tid': 'UBIGINT', 'list': 'VARCHAR', "
    "'kind': 'VARCHAR', 'name': 'VARCHAR', 'address': 'UBIGINT', 'bits': 'INTEGER', "
    "'read': 'BOOLEAN', 'written': 'BOOLEAN', 'index': 'BOOLEAN', 'base': 'BOOLEAN', "
    "'taint_id': 'UBIGINT', 'value': 'VARCHAR', 'value_uint': 'UBIGINT'}";

/* The SELECT of docs/parquet.md's operand_values view (every value as bytes, from
   value_uint or value), reading DIR/operands.parquet instead of out/operands.parquet: the
   tests run the documented SQL itself. malloc'd. */
static char *doc_values_view(const char *dir) {
    static const char head[] = "CREATE VIEW operand_values AS\n", from[] = "'out/operands.parquet'";
    char *doc = (char *)tu_read_file(tu_src("docs/parquet.md"), NULL), *sel, *at, *end, *sql;
    size_t cap;
    assert_non_null(doc);
    sel = strstr(doc, head);
    assert_non_null(sel);
    sel += strlen(head);
    end = strchr(sel, ';');
    assert_non_null(end);
    *end = 0;
    at = strstr(sel, from);
    assert_non_null(at);
    *at = 0;
    cap = strlen(sel) + strlen(dir) + strlen(at + strlen(from)) + 32;
    sql = (char *)malloc(cap);
    assert_non_null(sql);
    snprintf(sql, cap, "%s'%s/operands.parquet'%s", sel, dir, at + strlen(from));
    free(doc);
    return sql;
}

/* operands.parquet holds exactly the rows of frames dump --jsonl (value as hex there,
   here through docs/parquet.md's operand_values view), one copy of each value (value_uint
   for 1 to 8 bytes, value otherwise), and every value of it decodes (queued in the batch).
   Returns the number of rows. */
static size_t check_operands_vs_jsonl(const char *trace, const char *dir) {
    char *dump, jl[700], want[64], *view;
    int st;
    size_t nlines = 0;
    const char *p;
    snprintf(jl, sizeof jl, "%s.jsonl", dir);
    dump = tu_run(&st, "%s dump --jsonl '%s' 2>/dev/null", tu_frames_bin(), trace);
    assert_int_equal(tu_write_file(jl, dump, strlen(dump)), 0);
    for (p = dump; *p; p++) nlines += *p == '\n';
    free(dump);
    snprintf(want, sizeof want, "%zu\n", nlines);
    batch_add(trace, want, "SELECT count(*) FROM '%s/operands.parquet' WHERE hash(COLUMNS(*)) IS NOT NULL",
              dir);
    if (nlines == 0) return 0;
    batch_add(trace, "0\n",
              "SELECT count(*) FROM '%s/operands.parquet' WHERE (value_uint IS NULL) = (value IS "
              "NULL) OR (value_uint IS NULL) = (value_size BETWEEN 1 AND 8)", dir);
    snprintf(want, sizeof want, "%zu|0|0\n", nlines);
    view = doc_values_view(dir);
    batch_add(trace, want,
              "WITH p AS (SELECT frame::UBIGINT, pc, tid, list, kind, name, address, bits, read, "
              "written, \"index\", base, taint_id, lower(hex(value)), value_uint FROM (%s)), "
              "j AS (SELECT * FROM read_json('%s', format = "
              "'newline_delimited', %s)) SELECT (SELECT count(*) FROM p), (SELECT count(*) FROM "
              "(FROM p EXCEPT ALL FROM j)), (SELECT count(*) FROM (FROM j EXCEPT ALL FROM p))",
              view, jl, jsonl_columns);
    free(view);
    return nlines;
}

/* A number after "key": in a JSON text (first occurrence after from). */
static uint64_t json_u64(const char *from, const char *key) {
    char pat[64];
    const char *p;
    snprintf(pat, sizeof pat, "\"%s\":", key);
    p = strstr(from, pat);
    assert_non_null(p);
    return strtoull(p + strlen(pat), NULL, 10);
}

/* Rows of the other tables against frames stat --json, every value of every column decoded
   (queued in the batch). */
static void check_counts_vs_stat(const char *trace, const char *dir) {
    char *stat = frames_out("stat --json '%s' 2>/dev/null", trace), want[64];
    const char *kinds = strstr(stat, "\"by_kind\"");
    static const char *const keys[] = {"instructions", NULL, "syscall_frame", "modload_frame",
                                       "exception_frame"};
    int t;
    assert_non_null(kinds);
    for (t = 0; t < FRAMES_PARQUET_NTABLES; t++) {
        if (!keys[t]) continue;
        snprintf(want, sizeof want, "%llu\n",
                 (unsigned long long)json_u64(t ? kinds : stat, keys[t]));
        batch_add(trace, want, "SELECT count(*) FROM '%s/%s.parquet' WHERE hash(COLUMNS(*)) IS NOT NULL",
                  dir, frames_parquet_table_name(t));
    }
    free(stat);
}

/* Every reference vector: every table read by DuckDB, operands = dump --jsonl, row counts
   = frames stat; tiny row groups and pages so that every file has many of them. */
static void test_reference_vectors(void **state) {
    DIR *d = opendir(tu_shared("vectors/frames"));
    struct dirent *e;
    int traces = 0;
    (void)state;
    assert_non_null(d);
    while ((e = readdir(d)) != NULL) {
        char trace[4096], dir[600], *out;
        size_t len = strlen(e->d_name);
        int st;
        if (len < 8 || strcmp(e->d_name + len - 7, ".frames")) continue;
        snprintf(trace, sizeof trace, "%s/%s", tu_shared("vectors/frames"), e->d_name);
        snprintf(dir, sizeof dir, "%s", tu_workdir_path(e->d_name));
        out = tu_run(&st, "%s export '%s' --parquet '%s' --row-group 3 --page-rows 2 2>&1",
                     tu_frames_bin(), trace, dir);
        free(out);
        if (st != 0) {   /* only inputs that frames dump rejects as well */
            out = tu_run(&st, "%s dump '%s' >/dev/null 2>&1", tu_frames_bin(), trace);
            free(out);
            assert_int_not_equal(st, 0);
            continue;
        }
        check_operands_vs_jsonl(trace, dir);
        check_counts_vs_stat(trace, dir);
        traces++;
    }
    closedir(d);
    batch_run();
    assert_true(traces >= 20);
}

/* --chunks: one folder per table; the parts together are the single-file export. */
static void test_chunks(void **state) {
    const char *trace = tu_shared("vectors/frames/r10_default_m_n10001.frames");
    char one[512], many[512], *split;
    int t, parts = 0;
    DIR *d;
    struct dirent *e;
    (void)state;
    snprintf(one, sizeof one, "%s", tu_workdir_path("r10_one"));
    snprintf(many, sizeof many, "%s", tu_workdir_path("r10_chunks"));
    free(frames_out("export '%s' --parquet '%s'", trace, one));
    free(frames_out("export '%s' --parquet '%s' --chunks 4", trace, many));
    split = frames_out("split '%s' --chunks 4", trace);
    for (t = 0; t < FRAMES_PARQUET_NTABLES; t++) {
        const char *name = frames_parquet_table_name(t);
        batch_add(name, "0|0\n",
                  "SELECT (SELECT count(*) FROM (FROM '%s/%s.parquet' EXCEPT ALL FROM "
                  "'%s/%s/*.parquet')), (SELECT count(*) FROM (FROM '%s/%s/*.parquet' EXCEPT ALL "
                  "FROM '%s/%s.parquet'))", one, name, many, name, many, name, one, name);
    }
    batch_add("chunk ranges = frames split", split,
              "SELECT lo || '-' || (hi + 1) FROM (SELECT min(frame) lo, max(frame) hi FROM "
              "read_parquet('%s/instructions/*.parquet', filename = true) GROUP BY filename) "
              "ORDER BY lo", many);
    batch_run();
    /* one file per range of frames split, holding that range's frames */
    {
        char dir[600];
        snprintf(dir, sizeof dir, "%s/instructions", many);
        d = opendir(dir);
        assert_non_null(d);
        while ((e = readdir(d)) != NULL) parts += strncmp(e->d_name, "part-", 5) == 0;
        closedir(d);
    }
    {
        int lines = 0;
        const char *p;
        for (p = split; *p; p++) lines += *p == '\n';
        assert_int_equal(parts, lines);
        assert_true(lines >= 2);
    }
    free(split);
}

/* ------------------------------------------------------------------ a recorded trace */

#ifdef TU_RECORD_BUILT
/* The example queries of docs/parquet.md, with the directory as the only placeholder. */
#define Q_PER_THREAD \
    "SELECT tid, count(*) AS instructions FROM '%s/instructions.parquet' GROUP BY tid ORDER BY tid"
#define Q_HOTTEST \
    "SELECT pc, count(*) AS n FROM '%s/instructions.parquet' GROUP BY pc ORDER BY n DESC, pc LIMIT 10"
#define Q_SYSCALLS \
    "SELECT number, count(*) AS n FROM '%s/syscalls.parquet' GROUP BY number ORDER BY number"
#define Q_WRITES                                                                              \
    "SELECT count(*) FROM '%s/operands.parquet' WHERE kind = 'mem' AND list = 'post' AND "   \
    "written AND address BETWEEN %llu AND %llu"

/* "key":N pairs of the objects of a JSON array member, as "a|b" lines. */
static void json_pairs(const char *json, const char *array, const char *k1, const char *k2,
                       char *out, size_t cap) {
    char pat[64];
    const char *p, *end;
    size_t n = 0;
    snprintf(pat, sizeof pat, "\"%s\":[", array);
    p = strstr(json, pat);
    assert_non_null(p);
    end = strchr(p, ']');
    out[0] = 0;
    for (p = strchr(p, '{'); p && p < end; p = strchr(p + 1, '{'))
        n += (size_t)snprintf(out + n, cap - n, "%llu|%llu\n", (unsigned long long)json_u64(p, k1),
                              (unsigned long long)json_u64(p, k2));
}

static void test_recorded_trace(void **state) {
    char trace[512], dir[512], *stat, *out, want[8192];
    uint64_t lo, hi;
    int st;
    (void)state;
    snprintf(trace, sizeof trace, "%s", tu_workdir_path("true.frames"));
    snprintf(dir, sizeof dir, "%s", tu_workdir_path("true_pq"));
    out = tu_run(&st, "%s record -f -o %s -- /bin/true 2>&1", tu_frames_bin(), trace);
    if (st) fprintf(stderr, "%s", out);
    assert_int_equal(st, 0);
    free(out);
    free(frames_out("export %s --parquet %s --row-group 8192", trace, dir));
    /* an address range: the top 4 KiB of where the program wrote memory (its stack) */
    out = duck("SELECT max(address) FROM '%s/operands.parquet' WHERE kind = 'mem' AND written", dir);
    hi = strtoull(out, NULL, 10);
    lo = hi - 4096;
    free(out);
    assert_true(check_operands_vs_jsonl(trace, dir) > 100000);
    check_counts_vs_stat(trace, dir);
    stat = frames_out("stat --json --top 10 %s", trace);
    json_pairs(stat, "threads", "tid", "instructions", want, sizeof want);
    batch_add("instructions per thread", want, Q_PER_THREAD, dir);
    /* frames stat breaks ties by the lower pc, as the ORDER BY */
    json_pairs(stat, "hottest", "pc", "count", want, sizeof want);
    batch_add("hottest pcs", want, Q_HOTTEST, dir);
    json_pairs(stat, "syscalls", "number", "count", want, sizeof want);
    batch_add("syscalls by number", want, Q_SYSCALLS, dir);
    free(stat);
    out = frames_out("query %s --var m:mem* --where '(and (v/post m) (v/written m) (>= (v/addr m) %llu) "
                     "(<= (v/addr m) %llu))' --count --no-index", trace, (unsigned long long)lo,
                     (unsigned long long)hi);
    assert_true(strtoull(out, NULL, 10) > 0);
    batch_add("memory writes to an address range", out, Q_WRITES, dir, (unsigned long long)lo,
              (unsigned long long)hi);
    free(out);
    /* the encodings meant for a trace's columns, in every row group but the last (which
       may be too small for them to pay) */
    batch_add("encodings of the trace's columns",
              "instructions.parquet|frame|DELTA_BINARY_PACKED|true\n"
              "operands.parquet|frame|DELTA_BINARY_PACKED|true\n"
              "operands.parquet|kind|RLE_DICTIONARY|true\n"
              "operands.parquet|name|RLE_DICTIONARY|true\n"
              "operands.parquet|value_size|RLE_DICTIONARY|true\n",
              "WITH m AS (SELECT parse_filename(file_name) f, path_in_schema p, encodings e, "
              "row_group_id < max(row_group_id) OVER (PARTITION BY file_name) AS not_last "
              "FROM parquet_metadata(['%s/instructions.parquet', '%s/operands.parquet'])), "
              "w(f, p, want) AS (VALUES ('instructions.parquet', 'frame', 'DELTA_BINARY_PACKED'), "
              "('operands.parquet', 'frame', 'DELTA_BINARY_PACKED'), ('operands.parquet', 'kind', "
              "'RLE_DICTIONARY'), ('operands.parquet', 'name', 'RLE_DICTIONARY'), "
              "('operands.parquet', 'value_size', 'RLE_DICTIONARY')) "
              "SELECT w.f, w.p, want, bool_and(contains(e, want)) FROM m JOIN w ON m.f = w.f AND "
              "m.p = w.p WHERE not_last GROUP BY ALL ORDER BY 1, 2", dir, dir);
    batch_run();
}

/* Row groups whose statistics exclude the predicate are not read: with the pages of row
   group 0 overwritten with garbage, a query on frames of a later group still answers
   (and exactly), while a query that must read group 0 fails. The statistics themselves
   are the min/max DuckDB computes from the values. */
static void test_row_group_skipping(void **state) {
    char trace[512], dir[512], file[600], *out, *expect;
    uint64_t start, end;
    unsigned char *bytes;
    size_t len, i;
    int st;
    (void)state;
    snprintf(trace, sizeof trace, "%s", tu_workdir_path("true.frames"));   /* test_recorded_trace's */
    snprintf(dir, sizeof dir, "%s", tu_workdir_path("skip_pq"));
    free(frames_out("export %s --parquet %s --row-group 8192 --tables instructions", trace, dir));
    snprintf(file, sizeof file, "%s/instructions.parquet", dir);
    out = duck("SELECT count(*) FROM (SELECT g, min(pc) lo, max(pc) hi FROM (SELECT pc, "
               "(row_number() OVER () - 1) // 8192 g FROM '%s') GROUP BY g) v JOIN "
               "(SELECT row_group_id g, stats_min_value::UBIGINT lo, stats_max_value::UBIGINT hi "
               "FROM parquet_metadata('%s') WHERE path_in_schema = 'pc') m USING (g, lo, hi)",
               file, file);
    {
        char *groups = duck("SELECT count(DISTINCT row_group_id) FROM parquet_metadata('%s')", file);
        expect_text("pc statistics of every row group = min/max of its values", out, groups);
        assert_true(strtoull(groups, NULL, 10) >= 5);
        free(groups);
    }
    free(out);
    expect = duck("SELECT count(*), sum(pc) FROM '%s' WHERE frame BETWEEN 40000 AND 40999", file);
    out = duck("SELECT data_page_offset, total_compressed_size FROM parquet_metadata('%s') "
               "WHERE row_group_id = 0 ORDER BY column_id LIMIT 1", file);
    assert_int_equal(sscanf(out, "%llu|%llu", (unsigned long long *)&start, (unsigned long long *)&end), 2);
    free(out);
    out = duck("SELECT min(file_offset), max(data_page_offset) FROM parquet_metadata('%s') "
               "WHERE row_group_id = 1", file);
    assert_int_equal(sscanf(out, "%llu", (unsigned long long *)&end), 1);
    free(out);
    bytes = tu_read_file(file, &len);
    assert_non_null(bytes);
    assert_true(start >= 4 && end > start && end <= len);
    for (i = start; i < end; i++) bytes[i] = (unsigned char)(0x5a ^ i);   /* all of group 0 */
    assert_int_equal(tu_write_file(file, bytes, len), 0);
    free(bytes);
    out = duck("SELECT count(*), sum(pc) FROM '%s' WHERE frame BETWEEN 40000 AND 40999", file);
    expect_text("a query that skips row group 0", out, expect);
    assert_true(strtoull(expect, NULL, 10) >= 950);   /* 1000 frames, a few not instructions */
    free(out);
    free(expect);
    out = duck_st(&st, "SELECT count(*), sum(pc) FROM '%s' WHERE frame BETWEEN 100 AND 200", file);
    assert_int_not_equal(st, 0);   /* group 0 is read, and it is garbage */
    free(out);
}
#endif /* TU_RECORD_BUILT */

/* ------------------------------------------------------------------ bad input */

static int no_tmp_files(const char *dir) {
    char *out;
    int st;
    out = tu_run(&st, "find '%s' -name '*.tmp' 2>/dev/null | wc -l", dir);
    st = atoi(out);
    free(out);
    return st == 0;
}

static void test_bad_input(void **state) {
    const char *good = tu_shared("vectors/frames/r11_pintraces_like_x86.frames");
    char *out, junk[600], trunc[600], out_dir[600];
    unsigned char *bytes;
    size_t len;
    int st;
    (void)state;
    snprintf(out_dir, sizeof out_dir, "%s", tu_workdir_path("bad_out"));
    /* usage errors: exit 2 and a hint */
    out = tu_run(&st, "%s export 2>&1", tu_frames_bin());
    assert_int_equal(st, 2);
    assert_non_null(strstr(out, "missing TRACE"));
    free(out);
    out = tu_run(&st, "%s export %s 2>&1", tu_frames_bin(), good);
    assert_int_equal(st, 2);
    assert_non_null(strstr(out, "--parquet"));
    free(out);
    out = tu_run(&st, "%s export %s --parquet %s --row-group 0 2>&1", tu_frames_bin(), good, out_dir);
    assert_int_equal(st, 2);
    free(out);
    out = tu_run(&st, "%s export %s --parquet %s --tables instructions,bogus 2>&1", tu_frames_bin(),
                 good, out_dir);
    assert_int_equal(st, 2);
    free(out);
    out = tu_run(&st, "%s export - --parquet %s --chunks 2 < %s 2>&1", tu_frames_bin(), out_dir, good);
    assert_int_equal(st, 2);
    free(out);
    out = tu_run(&st, "%s export --help", tu_frames_bin());
    assert_int_equal(st, 0);
    assert_non_null(strstr(out, "usage: frames export"));
    free(out);
    /* a missing trace */
    out = tu_run(&st, "%s export %s --parquet %s 2>&1", tu_frames_bin(), tu_workdir_path("missing.frames"), out_dir);
    assert_int_equal(st, 1);
    assert_non_null(strstr(out, "No such file"));
    free(out);
    /* an output that cannot be a directory, or cannot be created */
    assert_int_equal(tu_write_file(tu_workdir_path("a_file"), "x", 1), 0);
    out = tu_run(&st, "%s export %s --parquet %s/sub 2>&1", tu_frames_bin(), good, tu_workdir_path("a_file"));
    assert_int_equal(st, 1);
    assert_non_null(strstr(out, "Not a directory"));
    free(out);
    out = tu_run(&st, "%s export %s --parquet %s 2>&1", tu_frames_bin(), good, tu_workdir_path("a_file"));
    assert_int_equal(st, 1);
    assert_non_null(strstr(out, "not a directory"));
    free(out);
    assert_int_equal(mkdir(out_dir, 0777), 0);
    {   /* a file of the output is in the way (a directory where a table goes) */
        char blocker[700];
        snprintf(blocker, sizeof blocker, "%s/operands.parquet", out_dir);
        assert_int_equal(mkdir(blocker, 0777), 0);
        out = tu_run(&st, "%s export %s --parquet %s 2>&1", tu_frames_bin(), good, out_dir);
        assert_int_equal(st, 1);
        assert_non_null(strstr(out, "operands.parquet: it is a directory"));
        free(out);
        out = tu_run(&st, "ls -A %s", out_dir);   /* nothing half-written is left behind */
        expect_text("output after a failed export", out, "operands.parquet\n");
        free(out);
        rmdir(blocker);
    }
    out = tu_run(&st, "%s export %s --parquet /dev/full/x 2>&1", tu_frames_bin(), good);
    assert_int_equal(st, 1);
    free(out);
    /* junk input: a clear error, exit 1 */
    snprintf(junk, sizeof junk, "%s", tu_workdir_path("junk.frames"));
    assert_int_equal(tu_write_file(junk, "this is not a trace at all, not even close....."
                                         "................", 64), 0);
    out = tu_run(&st, "%s export %s --parquet %s 2>&1", tu_frames_bin(), junk, out_dir);
    assert_int_equal(st, 1);
    assert_true(strlen(out) > 10);
    free(out);
    /* a truncated trace: every complete frame is exported, the cut is a warning */
    bytes = tu_read_file(tu_shared("vectors/frames/r10_default_m_n10001.frames"), &len);
    assert_non_null(bytes);
    snprintf(trunc, sizeof trunc, "%s", tu_workdir_path("trunc.frames"));
    assert_int_equal(tu_write_file(trunc, bytes, len / 2), 0);
    free(bytes);
    out = tu_run(&st, "%s export %s --parquet %s 2>&1", tu_frames_bin(), trunc, out_dir);
    assert_int_equal(st, 0);
    assert_non_null(strstr(out, "warning"));
    free(out);
    {
        char *stat = frames_out("stat --json %s 2>/dev/null", trunc), want[64];
        snprintf(want, sizeof want, "%llu\n", (unsigned long long)json_u64(stat, "instructions"));
        out = duck("SELECT count(*) FROM '%s/instructions.parquet'", out_dir);
        expect_text("truncated trace", out, want);
        assert_true(strtoull(want, NULL, 10) > 1000);
        free(out);
        free(stat);
    }
    assert_true(no_tmp_files(tu_workdir));
    /* standard input works without --chunks */
    out = tu_run(&st, "%s export - --parquet %s/stdin < %s 2>&1", tu_frames_bin(), out_dir, good);
    assert_int_equal(st, 0);
    free(out);
    out = duck("SELECT count(*) FROM '%s/stdin/operands.parquet'", out_dir);
    expect_text("from standard input", out, "8\n");
    free(out);
}

static int setup(void **state) {
    (void)state;
    if (tu_workdir_make("frames-parquet") < 0) return -1;
    return tu_write_file(tu_workdir_path("q.js"), duck_js, strlen(duck_js));
}

int main(void) {
    const struct CMUnitTest unit[] = {
        cmocka_unit_test(test_thrift_compact_bytes),
        cmocka_unit_test(test_writer_misuse),
        cmocka_unit_test(test_writer_thread_errors),
    };
    const struct CMUnitTest engine[] = {
        cmocka_unit_test(test_writer_own_table),
        cmocka_unit_test(test_encodings),
        cmocka_unit_test(test_reference_vectors),
        cmocka_unit_test(test_chunks),
#ifdef TU_RECORD_BUILT
        cmocka_unit_test(test_recorded_trace),
        cmocka_unit_test(test_row_group_skipping),
#endif
        cmocka_unit_test(test_bad_input),
    };
    int rc = cmocka_run_group_tests_name("parquet writer", unit, setup, tu_workdir_teardown);
    if (!find_duckdb()) {
        fprintf(stderr, "test_parquet: DuckDB not found (build/duckdb/node_modules/@duckdb/"
                        "node-api; ./build.sh test installs it, or set FRAMES_DUCKDB)\n");
        return 1;
    }
    return rc | cmocka_run_group_tests_name("parquet with DuckDB", engine, setup, tu_workdir_teardown);
}
