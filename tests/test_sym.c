/* test_sym.c - frames_sym.h and the names the tools print, against independent tools:
   symbol+offset of every distinct pc of a recorded program (PIE and non-PIE, built here
   with -g) equals `addr2line -f` and `nm`, file:line equals addr2line's; the syscall
   tables equal the machine's kernel headers; the syscall names `frames stat` prints for
   a recorded run equal strace's for the same program; a file that does not match its
   mapping, or is damaged, gives a warning and module+offset names. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <ctype.h>
#include <sys/stat.h>
#include <stdint.h>

#include "frames_sym.h"
#include "testutil.h"

#define workdir tu_workdir
#define wpath tu_workdir_path

/* ------------------------------------------------------------------ syscall tables */

/* Every "#define __NR_name N" of a header names N in our table for abi (the header may
   be older than the table, never the other way round). Returns how many were compared. */
static int compare_header(const char *header, int abi) {
    char line[256];
    int n = 0;
    FILE *f = fopen(header, "r");
    if (!f) return -1;
    while (fgets(line, sizeof line, f)) {
        char sym[128];
        long nr;
        if (sscanf(line, "#define __NR_%127s %ld", sym, &nr) != 2) continue;
        if (strcmp(frames_sym_syscall_name(abi, (uint64_t)nr), sym) != 0)
            fail_msg("%s: %ld is %s, our table says %s", header, nr, sym,
                     frames_sym_syscall_name(abi, (uint64_t)nr));
        n++;
    }
    fclose(f);
    return n;
}

static void test_syscall_tables_vs_headers(void **state) {
    int n64, n32;
    (void)state;
    n64 = compare_header("/usr/include/x86_64-linux-gnu/asm/unistd_64.h", FRAMES_SYM_ABI_X86_64);
    n32 = compare_header("/usr/include/x86_64-linux-gnu/asm/unistd_32.h", FRAMES_SYM_ABI_I386);
    if (n64 < 0 || n32 < 0) {
        printf("test_sym: no x86 kernel headers here; tables not compared\n");
        return;
    }
    assert_true(n64 > 300);
    assert_true(n32 > 380);
    printf("test_sym: %d x86-64 and %d i386 syscall names equal the kernel headers\n", n64, n32);
}

/* aarch64 uses asm-generic/unistd.h with arm64's options: the compiler resolves the
   numbers (many are defined through __NR3264_* aliases). */
static void test_syscall_table_aarch64_vs_generic_header(void **state) {
    static const char opts[] =
        "#define __BITS_PER_LONG 64\n#define __ARCH_WANT_RENAMEAT\n#define __ARCH_WANT_NEW_STAT\n"
        "#define __ARCH_WANT_SET_GET_RLIMIT\n#define __ARCH_WANT_TIME32_SYSCALLS\n"
        "#define __ARCH_WANT_SYS_CLONE3\n#define __ARCH_WANT_MEMFD_SECRET\n"
        "#include <asm-generic/unistd.h>\n";
    char *names, *line, *save = NULL, *prog, *out;
    size_t len = 0, cap = 1 << 16;
    int st, n = 0;
    (void)state;
    if (access("/usr/include/asm-generic/unistd.h", R_OK) != 0) {
        printf("test_sym: no asm-generic/unistd.h here; aarch64 table not compared\n");
        return;
    }
    assert_int_equal(tu_write_file(wpath("generic.c"), opts, strlen(opts)), 0);
    names = tu_run(&st, "cc -E -dM %s | sed -n 's/^#define \\(__NR_[a-z0-9_]*\\) .*/\\1/p'",
                   wpath("generic.c"));
    assert_int_equal(st, 0);
    prog = (char *)malloc(cap);
    len += (size_t)snprintf(prog, cap, "#include <stdio.h>\n%sint main(void) {\n", opts);
    for (line = strtok_r(names, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (!strcmp(line, "__NR_syscalls") || !strcmp(line, "__NR_arch_specific_syscall")) continue;
        assert_true(len + 200 < cap);
        len += (size_t)snprintf(prog + len, cap - len, "printf(\"%%ld %%s\\n\", (long)(%s), \"%s\");\n",
                                line, line + 5);
    }
    len += (size_t)snprintf(prog + len, cap - len, "return 0;\n}\n");
    assert_int_equal(tu_write_file(wpath("generic_print.c"), prog, len), 0);
    free(tu_run(&st, "cc -w -o %s %s", wpath("generic_print"), wpath("generic_print.c")));
    assert_int_equal(st, 0);
    out = tu_run(&st, "%s", wpath("generic_print"));
    assert_int_equal(st, 0);
    save = NULL;
    for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        long nr;
        char sym[128];
        if (sscanf(line, "%ld %127s", &nr, sym) != 2) continue;
        if (strcmp(frames_sym_syscall_name(FRAMES_SYM_ABI_AARCH64, (uint64_t)nr), sym) != 0)
            fail_msg("asm-generic: %ld is %s, our aarch64 table says %s", nr, sym,
                     frames_sym_syscall_name(FRAMES_SYM_ABI_AARCH64, (uint64_t)nr));
        n++;
    }
    assert_true(n > 280);
    printf("test_sym: %d aarch64 syscall names equal asm-generic/unistd.h\n", n);
    free(out);
    free(prog);
    free(names);
}

/* Facts from arch/arm/tools/syscall.tbl and the ABI mapping of trace headers. */
static void test_syscall_names_arm_and_abis(void **state) {
    (void)state;
    assert_int_equal(frames_sym_abi(FRAMES_ARCH_I386, FRAMES_MACH_X86_64), FRAMES_SYM_ABI_X86_64);
    assert_int_equal(frames_sym_abi(FRAMES_ARCH_I386, FRAMES_MACH_I386), FRAMES_SYM_ABI_I386);
    /* spec §11: x86_64_intel_syntax (65) is x86-64 too; 8 is no x86-64 machine there */
    assert_int_equal(frames_sym_abi(FRAMES_ARCH_I386, 65), FRAMES_SYM_ABI_X86_64);
    assert_int_equal(frames_sym_abi(FRAMES_ARCH_I386, 8), FRAMES_SYM_ABI_I386);
    assert_false(frames_arch_is_x86_64(FRAMES_ARCH_ARM, FRAMES_MACH_X86_64));
    assert_int_equal(frames_sym_abi(FRAMES_ARCH_ARM, 0), FRAMES_SYM_ABI_ARM);
    assert_int_equal(frames_sym_abi(FRAMES_ARCH_AARCH64, 0), FRAMES_SYM_ABI_AARCH64);
    assert_int_equal(frames_sym_abi(FRAMES_ARCH_MIPS, 0), FRAMES_SYM_ABI_UNKNOWN);
    assert_string_equal(frames_sym_syscall_name(FRAMES_SYM_ABI_ARM, 322), "openat");
    assert_string_equal(frames_sym_syscall_name(FRAMES_SYM_ABI_ARM, 248), "exit_group");
    assert_string_equal(frames_sym_syscall_name(FRAMES_SYM_ABI_ARM, 0x0f0005), "set_tls");
    assert_string_equal(frames_sym_syscall_name(FRAMES_SYM_ABI_AARCH64, 56), "openat");
    assert_string_equal(frames_sym_syscall_name(FRAMES_SYM_ABI_X86_64, 257), "openat");
    assert_string_equal(frames_sym_syscall_name(FRAMES_SYM_ABI_I386, 295), "openat");
    assert_string_equal(frames_sym_syscall_name(FRAMES_SYM_ABI_X86_64, 100000), "unknown");
    assert_false(frames_sym_syscall_known(FRAMES_SYM_ABI_ARM, 7));   /* "7 was sys_waitpid" */
    assert_false(frames_sym_syscall_known(FRAMES_SYM_ABI_UNKNOWN, 1));
}

/* ------------------------------------------------------------------ module table */

/* Modules without files: later modules win where they overlap, offsets are from the
   module's low address, a gap has no name; the cache gives the same answers. */
static void test_modules_without_files(void **state) {
    frames_sym *s;
    frames_sym_loc loc;
    frames_error err;
    frames_sym_info info;
    char buf[128];
    int round;
    (void)state;
    assert_int_equal(frames_sym_open(&s, NULL, &err), 0);
    assert_int_equal(frames_sym_add_module(s, "/nonexistent/a.so", 17, 0x1000, 0x1fff, NULL, 0), 0);
    assert_int_equal(frames_sym_add_module(s, "[vdso]", 6, 0x1800, 0x27ff, NULL, 0), 0);
    assert_int_equal(frames_sym_add_module(s, "bad", 3, 0x10, 0x0f, NULL, 0), FRAMES_E_INVALID);
    for (round = 0; round < 2; round++) {
        assert_int_equal(frames_sym_lookup(s, 0x1004, &loc), FRAMES_SYM_FOUND_MODULE);
        frames_sym_format(&loc, 0, buf, sizeof buf);
        assert_string_equal(buf, "a.so+0x4");
        frames_sym_format(&loc, FRAMES_SYM_FMT_FULL_PATH, buf, sizeof buf);
        assert_string_equal(buf, "/nonexistent/a.so+0x4");
        assert_int_equal(frames_sym_lookup(s, 0x1900, &loc), FRAMES_SYM_FOUND_MODULE);
        frames_sym_format(&loc, 0, buf, sizeof buf);
        assert_string_equal(buf, "[vdso]+0x100");
        assert_int_equal(frames_sym_lookup(s, 0x2800, &loc), 0);
        assert_int_equal(frames_sym_format(&loc, 0, buf, sizeof buf), 0);
        assert_int_equal(frames_sym_lookup(s, 0xfff, &loc), 0);
    }
    /* a short buffer: cut, NUL-terminated, the needed length returned */
    assert_int_equal(frames_sym_lookup(s, 0x1004, &loc), FRAMES_SYM_FOUND_MODULE);
    assert_int_equal(frames_sym_format(&loc, 0, buf, 5), 8);
    assert_string_equal(buf, "a.so");
    frames_sym_info_get(s, &info);
    assert_int_equal(info.modules, 2);
    assert_int_equal(info.files, 1);          /* [vdso] is not a file */
    assert_int_equal(info.files_loaded, 0);
    assert_true(info.cache_hits >= 4);
    assert_int_equal(info.nwarnings, 1);      /* cannot open /nonexistent/a.so */
    assert_non_null(strstr(frames_sym_warning(s, 0), "/nonexistent/a.so"));
    assert_string_equal(frames_sym_warning(s, 1), "");
    frames_sym_close(s);
}

/* ------------------------------------------------------------------ programs built here */

static const char prog_src[] =
    "#include <stdio.h>\n"
    "#include <string.h>\n"
    "#include <unistd.h>\n"
    "static int helper(int x) {\n"
    "    int s = 0;\n"
    "    for (int i = 0; i < x; i++)\n"
    "        s += i * 3;\n"
    "    return s;\n"
    "}\n"
    "int compute(int n) {\n"
    "    return helper(n) + 1;\n"
    "}\n"
    "int main(void) {\n"
    "    char buf[64];\n"
    "    int n = snprintf(buf, sizeof buf, \"%d\\n\", compute(5));\n"
    "    if (write(1, buf, strlen(buf)) != n) return 1;\n"
    "    return 0;\n"
    "}\n";

static void build(const char *name, const char *flags) {
    char src[600];
    int st;
    char *out;
    snprintf(src, sizeof src, "%s", wpath("prog.c"));
    if (access(src, R_OK) != 0) assert_int_equal(tu_write_file(src, prog_src, strlen(prog_src)), 0);
    out = tu_run(&st, "cd %s && cc -g -O0 %s -o %s prog.c 2>&1", workdir, flags, name);
    if (st != 0) fprintf(stderr, "%s", out);
    assert_int_equal(st, 0);
    free(out);
}

#ifdef TU_RECORD_BUILT

/* Record `prog` (same environment as the strace run below: C locale, stdout a file). */
static void record(const char *prog, const char *trace) {
    char p[600];
    int st;
    char *out;
    snprintf(p, sizeof p, "%s", wpath(prog));
    out = tu_run(&st, "cd %s && env LC_ALL=C %s record -f --engine ptrace --quiet -o %s -- %s 2>&1 >%s",
                 workdir, tu_frames_bin(), trace, p, wpath("record.out"));
    if (st != 0) fprintf(stderr, "%s", out);
    assert_int_equal(st, 0);
    free(out);
}

/* Distinct std_frame pcs of a trace, and the symboliser fed with its modload frames. */
typedef struct pcs {
    uint64_t *v;
    size_t n, cap;
} pcs;

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void trace_pcs(const char *trace, frames_sym *s, pcs *out) {
    frames_reader *r;
    frames_error err;
    frames_frame f;
    size_t i, k = 0;
    int rc;
    memset(out, 0, sizeof *out);
    assert_int_equal(frames_reader_open_path(&r, trace, NULL, &err), 0);
    frames_sym_set_meta(s, frames_reader_meta(r));
    while ((rc = frames_reader_next(r, &f)) > 0) {
        assert_int_equal(frames_sym_add_frame(s, &f), 0);
        if (f.kind != FRAMES_KIND_STD) continue;
        if (out->n == out->cap) {
            out->cap = out->cap ? out->cap * 2 : 4096;
            out->v = (uint64_t *)realloc(out->v, out->cap * sizeof *out->v);
        }
        out->v[out->n++] = f.std.address;
    }
    assert_int_equal(rc, 0);
    frames_reader_close(r);
    qsort(out->v, out->n, sizeof *out->v, cmp_u64);
    for (i = 0; i < out->n; i++)
        if (k == 0 || out->v[k - 1] != out->v[i]) out->v[k++] = out->v[i];
    out->n = k;
}

/* nm's text symbols of a file, sorted by address. */
typedef struct nm_sym {
    uint64_t addr;
    char name[128];
} nm_sym;

static nm_sym *nm_text(const char *file, size_t *n) {
    int st;
    char *out = tu_run(&st, "nm -n --defined-only %s", file), *line, *save = NULL;
    nm_sym *v = NULL;
    size_t cap = 0;
    assert_int_equal(st, 0);
    *n = 0;
    for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        unsigned long long a;
        char type;
        char name[128];
        if (sscanf(line, "%llx %c %127s", &a, &type, name) != 3 || !strchr("tTwWi", type)) continue;
        if (*n == cap) v = (nm_sym *)realloc(v, (cap = cap ? cap * 2 : 256) * sizeof *v);
        v[*n].addr = a;
        snprintf(v[*n].name, sizeof v[*n].name, "%s", name);
        (*n)++;
    }
    free(out);
    return v;
}

/* Every distinct pc of `prog` in a recording: frames_sym's symbol+offset equals the one
   addr2line -f and nm give for the same file address, file:line equals addr2line's. */
static void check_program_names(const char *prog, const char *trace) {
    frames_sym *s;
    frames_error err;
    frames_sym_loc loc;
    pcs p;
    char path[600], *text, *line, *save = NULL;
    uint64_t *addrs;
    frames_sym_loc *locs;
    size_t i, n = 0, nnm, named = 0, lined = 0;
    nm_sym *syms;
    FILE *f;
    int st;
    snprintf(path, sizeof path, "%s", wpath(prog));
    record(prog, trace);
    assert_int_equal(frames_sym_open(&s, NULL, &err), 0);
    trace_pcs(wpath(trace), s, &p);
    addrs = (uint64_t *)calloc(p.n, sizeof *addrs);
    locs = (frames_sym_loc *)calloc(p.n, sizeof *locs);
    f = fopen(wpath("addrs.txt"), "w");
    assert_non_null(f);
    for (i = 0; i < p.n; i++) {
        assert_true(frames_sym_lookup(s, p.v[i], &loc) >= 0);
        if (!(loc.found & FRAMES_SYM_FOUND_MODULE) || loc.module_len != strlen(path) ||
            memcmp(loc.module, path, loc.module_len) != 0)
            continue;
        assert_true(loc.found & FRAMES_SYM_FOUND_ADDRESS);   /* the file matched */
        locs[n] = loc;
        addrs[n++] = loc.file_address;
        fprintf(f, "0x%llx\n", (unsigned long long)loc.file_address);
    }
    fclose(f);
    assert_true(n > 50);
    /* addr2line: two lines per address, function then file:line */
    text = tu_run(&st, "addr2line -f -e %s < %s", path, wpath("addrs.txt"));
    assert_int_equal(st, 0);
    syms = nm_text(path, &nnm);
    line = strtok_r(text, "\n", &save);
    for (i = 0; i < n; i++) {
        char *where = line ? strtok_r(NULL, "\n", &save) : NULL, *disc;
        assert_non_null(line);
        assert_non_null(where);
        if (!strcmp(line, "??")) {
            if (locs[i].found & FRAMES_SYM_FOUND_SYMBOL)
                fail_msg("0x%llx: addr2line has no function, we say %.*s",
                         (unsigned long long)addrs[i], (int)locs[i].symbol_len, locs[i].symbol);
        } else {
            size_t lo = 0, hi = nnm;
            if (!(locs[i].found & FRAMES_SYM_FOUND_SYMBOL))
                fail_msg("0x%llx: addr2line says %s, we have no symbol", (unsigned long long)addrs[i], line);
            if (strlen(line) != locs[i].symbol_len || memcmp(line, locs[i].symbol, locs[i].symbol_len))
                fail_msg("0x%llx: addr2line says %s, we say %.*s", (unsigned long long)addrs[i], line,
                         (int)locs[i].symbol_len, locs[i].symbol);
            while (lo < hi) {   /* nm: the last text symbol at or before the address */
                size_t mid = (lo + hi) / 2;
                if (syms[mid].addr <= addrs[i]) lo = mid + 1;
                else hi = mid;
            }
            assert_true(lo > 0);
            assert_string_equal(syms[lo - 1].name, line);
            assert_int_equal(addrs[i] - syms[lo - 1].addr, locs[i].symbol_offset);
            named++;
        }
        if ((disc = strstr(where, " (discriminator")) != NULL) *disc = 0;
        /* "??:0", "??:?", or a file without a line ("crtstuff.c:?"): no line */
        if (!strncmp(where, "??:", 3) || (strlen(where) > 2 && !strcmp(where + strlen(where) - 2, ":?"))) {
            assert_false(locs[i].found & FRAMES_SYM_FOUND_LINE);
        } else {
            frames_sym_info info;
            frames_sym_info_get(s, &info);
            if (info.have_dw) {
                char ours[700];
                if (!(locs[i].found & FRAMES_SYM_FOUND_LINE))
                    fail_msg("0x%llx: addr2line says %s, we have no line", (unsigned long long)addrs[i], where);
                snprintf(ours, sizeof ours, "%.*s:%u", (int)locs[i].file_len, locs[i].file, locs[i].line);
                if (strcmp(ours, where) != 0)
                    fail_msg("0x%llx: addr2line says %s, we say %s", (unsigned long long)addrs[i], where, ours);
                lined++;
            }
        }
        line = strtok_r(NULL, "\n", &save);
    }
    assert_true(named > 50);
    printf("test_sym: %s: %lu distinct pcs, %lu named as addr2line and nm name them, %lu with "
           "addr2line's file:line\n", prog, (unsigned long)n, (unsigned long)named, (unsigned long)lined);
    free(syms);
    free(text);
    free(addrs);
    free(locs);
    free(p.v);
    frames_sym_close(s);
}

static void test_pie_vs_addr2line_and_nm(void **state) {
    (void)state;
    build("prog_pie", "-fPIE -pie");
    check_program_names("prog_pie", "pie.frames");
}

static void test_non_pie_vs_addr2line_and_nm(void **state) {
    (void)state;
    build("prog_nopie", "-fno-pie -no-pie");
    check_program_names("prog_nopie", "nopie.frames");
}

/* The tools print the same names: stat's hottest pcs (text and JSON), dump --pc --symbols,
   query listings, vprof's rows; --no-symbols prints none. */
static void test_tools_print_names(void **state) {
    char *out;
    int st;
    (void)state;
    if (access(wpath("pie.frames"), R_OK) != 0) {
        build("prog_pie", "-fPIE -pie");
        record("prog_pie", "pie.frames");
    }
    out = tu_run(&st, "%s dump --pc --symbols %s", tu_frames_bin(), wpath("pie.frames"));
    assert_int_equal(st, 0);
    assert_non_null(strstr(out, " prog_pie!helper+0x"));
    assert_non_null(strstr(out, " prog_pie!main+0x0"));
    assert_non_null(strstr(out, "/prog.c:"));
    free(out);
    out = tu_run(&st, "%s stat --json --top 100000 %s", tu_frames_bin(), wpath("pie.frames"));
    assert_int_equal(st, 0);
    assert_non_null(strstr(out, "\"symbol\":\"compute\",\"symbol_offset\":"));
    assert_non_null(strstr(out, "{\"number\":257,\"count\":"));   /* the old members stay */
    assert_non_null(strstr(out, "\"name\":\"openat\""));
    free(out);
    out = tu_run(&st, "%s stat --json --top 100000 --no-symbols %s", tu_frames_bin(), wpath("pie.frames"));
    assert_int_equal(st, 0);
    assert_null(strstr(out, "\"symbol\""));
    assert_null(strstr(out, "\"module_offset\""));
    free(out);
    out = tu_run(&st, "%s query --where '(= (pc) (pc))' %s | grep -m1 'sym=prog_pie!helper+'",
                 tu_frames_bin(), wpath("pie.frames"));
    assert_int_equal(st, 0);
    free(out);
    out = tu_run(&st, "%s query --json %s | grep -m1 '\"symbol\":\"helper\"'",
                 tu_frames_bin(), wpath("pie.frames"));
    assert_int_equal(st, 0);
    free(out);
    /* vprof: helper's loop reloads i and s from the stack (-O0) */
    out = tu_run(&st, "%s vprof --json --top 100000 %s", tu_frames_bin(), wpath("pie.frames"));
    assert_int_equal(st, 0);
    assert_non_null(strstr(out, "\"symbol\":\"helper\",\"symbol_offset\":"));
    free(out);
    out = tu_run(&st, "%s vprof --top 100000 %s", tu_frames_bin(), wpath("pie.frames"));
    assert_int_equal(st, 0);
    assert_non_null(strstr(out, "  prog_pie!helper+0x"));
    assert_non_null(strstr(out, "/prog.c:"));
    free(out);
}

/* A file that is not the traced one (a different build at the same path, damaged copies
   under --sysroot) gives a warning and module+offset names, never another name. */
static void test_mismatch_and_damage_warn(void **state) {
    char *out, root[600];
    int st;
    (void)state;
    if (access(wpath("pie.frames"), R_OK) != 0) {
        build("prog_pie", "-fPIE -pie");
        record("prog_pie", "pie.frames");
    }
    /* the same program under a sysroot names the same */
    snprintf(root, sizeof root, "%s", wpath("root"));
    free(tu_run(&st, "mkdir -p %s%s && cp %s %s%s/", root, workdir, wpath("prog_pie"), root, workdir));
    assert_int_equal(st, 0);
    out = tu_run(&st, "%s dump --pc --symbols --sysroot %s %s 2>&1 | grep -c 'prog_pie!main+'",
                 tu_frames_bin(), root, wpath("pie.frames"));
    assert_int_equal(st, 0);
    assert_true(atoi(out) > 5);
    free(out);
    /* a bigger text segment at the same path: no symbol, a warning (here the meta
       frame's file size already tells; test_mapping_mismatch checks the segments) */
    out = tu_run(&st, "cd %s && cc -g -O0 -fPIE -pie -DPAD -o %s%s/prog_pie -x c - 2>&1 <<'EOF'\n"
                 "static volatile int pad[1];\n"
                 "#define R(x) x x x x x x x x\n"
                 "int main(void) { R(R(R(pad[0]++;))) return 0; }\nEOF",
                 workdir, root, workdir);
    assert_int_equal(st, 0);
    free(out);
    out = tu_run(&st, "%s dump --pc --symbols --sysroot %s %s 2>&1", tu_frames_bin(), root, wpath("pie.frames"));
    assert_int_equal(st, 0);
    assert_null(strstr(out, "prog_pie!"));
    assert_non_null(strstr(out, "prog_pie+0x"));
    assert_non_null(strstr(out, "not the traced file"));
    free(out);
    /* damaged copies: the section header table and the symbol table overwritten */
    free(tu_run(&st, "cp %s %s%s/prog_pie && "
                     "printf '\\377\\377\\377\\377\\377\\377\\377\\377' | "
                     "dd of=%s%s/prog_pie bs=1 seek=40 conv=notrunc 2>/dev/null",
                wpath("prog_pie"), root, workdir, root, workdir));
    assert_int_equal(st, 0);
    out = tu_run(&st, "%s dump --pc --symbols --sysroot %s %s 2>&1", tu_frames_bin(), root, wpath("pie.frames"));
    assert_int_equal(st, 0);
    assert_null(strstr(out, "prog_pie!"));
    assert_non_null(strstr(out, "prog_pie+0x"));
    assert_non_null(strstr(out, "section headers"));
    free(out);
    free(tu_run(&st, "head -c 1000 %s > %s%s/prog_pie", wpath("prog_pie"), root, workdir));
    out = tu_run(&st, "%s stat --sysroot %s %s 2>&1", tu_frames_bin(), root, wpath("pie.frames"));
    assert_int_equal(st, 0);
    assert_non_null(strstr(out, "warning: "));
    assert_null(strstr(out, "prog_pie!"));
    free(out);
}

/* frames stat names the syscalls of a recorded run as strace names them for the same
   program in the same environment (C locale, stdout a regular file). */
static void test_stat_syscall_names_vs_strace(void **state) {
    char *log, *out, *line, *save = NULL;
    char names[64][32];
    long counts[64];
    int n = 0, i, st;
    (void)state;
    if (access(wpath("pie.frames"), R_OK) != 0) {
        build("prog_pie", "-fPIE -pie");
        record("prog_pie", "pie.frames");
    }
    free(tu_run(&st, "cd %s && env LC_ALL=C strace -f -qq -o %s %s >%s 2>/dev/null", workdir,
                wpath("strace.txt"), wpath("prog_pie"), wpath("strace.out")));
    assert_int_equal(st, 0);
    log = (char *)tu_read_file(wpath("strace.txt"), NULL);
    assert_non_null(log);
    for (line = strtok_r(log, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char name[32];
        const char *p = line;
        while (isdigit((unsigned char)*p)) p++;
        while (*p == ' ') p++;
        if (sscanf(p, "%31[a-z0-9_](", name) != 1 || !strcmp(name, "execve")) continue;
        for (i = 0; i < n && strcmp(names[i], name); i++) {}
        if (i == n) {
            assert_true(n < 64);
            snprintf(names[n], sizeof names[n], "%s", name);
            counts[n++] = 0;
        }
        counts[i]++;
    }
    free(log);
    assert_true(n > 8);
    out = tu_run(&st, "%s stat %s", tu_frames_bin(), wpath("pie.frames"));
    assert_int_equal(st, 0);
    line = strstr(out, "\nsyscalls");
    assert_non_null(line);
    for (i = 0; i < n; i++) {
        char want[40];
        size_t l = strlen(names[i]);
        want[0] = ' ';
        memcpy(want + 1, names[i], l);
        want[l + 1] = ' ';
        want[l + 2] = 0;
        {
            char *at = strstr(line, want);
            long got;
            if (!at) fail_msg("strace's %s is not in frames stat's syscalls", names[i]);
            got = strtol(at + strlen(want), NULL, 10);
            if (got != counts[i]) fail_msg("%s: strace %ld calls, frames stat %ld", names[i], counts[i], got);
        }
    }
    {   /* and nothing else: as many named lines as strace has names */
        int lines = 0;
        char *p = line + 1;
        while ((p = strchr(p, '\n')) != NULL && p[1] == ' ') {
            lines++;
            p++;
        }
        assert_int_equal(lines, n);
    }
    printf("test_sym: frames stat names %d syscalls as strace does\n", n);
    free(out);
}

#endif /* TU_RECORD_BUILT */

/* A mapping of a size no segment has (or at a nonzero bias for an ET_EXEC file) gives no
   symbol and a warning; the right mapping of the same file names main. */
static void test_mapping_mismatch(void **state) {
    frames_sym *s;
    frames_error err;
    frames_sym_loc loc;
    char path[600], *out, *line, *save = NULL;
    uint64_t text_vaddr = 0, text_memsz = 0, main_addr = 0;
    int st, k;
    (void)state;
    build("prog_map", "-fno-pie -no-pie");
    snprintf(path, sizeof path, "%s", wpath("prog_map"));
    out = tu_run(&st, "readelf -lW %s; nm %s", path, path);
    assert_int_equal(st, 0);
    for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        unsigned long long off, va, pa, fs, ms, a;
        char flags[8], type;
        if (sscanf(line, " LOAD 0x%llx 0x%llx 0x%llx 0x%llx 0x%llx %7[RWE ]", &off, &va, &pa, &fs, &ms, flags) == 6 &&
            strchr(flags, 'E')) {
            text_vaddr = va;
            text_memsz = ms;
        }
        if (sscanf(line, "%llx %c main", &a, &type) == 2 && strstr(line, " main")) main_addr = a;
    }
    free(out);
    assert_true(text_vaddr && text_memsz && main_addr);
    for (k = 0; k < 3; k++) {
        uint64_t lo = text_vaddr & ~(uint64_t)4095;
        uint64_t hi = ((text_vaddr + text_memsz + 4095) & ~(uint64_t)4095) - 1;
        assert_int_equal(frames_sym_open(&s, NULL, &err), 0);
        if (k == 1) hi += 4096;                     /* one page too many */
        if (k == 2) lo += 0x10000, hi += 0x10000;   /* ET_EXEC cannot move */
        assert_int_equal(frames_sym_add_module(s, path, strlen(path), lo, hi, NULL, 0), 0);
        assert_true(frames_sym_lookup(s, main_addr + (lo - (text_vaddr & ~(uint64_t)4095)), &loc) > 0);
        if (k == 0) {
            assert_true(loc.found & FRAMES_SYM_FOUND_SYMBOL);
            assert_int_equal(loc.symbol_len, 4);
            assert_memory_equal(loc.symbol, "main", 4);
            assert_int_equal(loc.symbol_offset, 0);
        } else {
            frames_sym_info info;
            assert_false(loc.found & FRAMES_SYM_FOUND_SYMBOL);
            frames_sym_info_get(s, &info);
            assert_int_equal(info.nwarnings, 1);
            assert_non_null(strstr(frames_sym_warning(s, 0), "does not match the mapping"));
        }
        /* a build id the file does not have */
        frames_sym_close(s);
    }
    assert_int_equal(frames_sym_open(&s, NULL, &err), 0);
    assert_int_equal(frames_sym_add_module(s, path, strlen(path), text_vaddr & ~(uint64_t)4095,
                                           ((text_vaddr + text_memsz + 4095) & ~(uint64_t)4095) - 1,
                                           "\x01\x02\x03\x04", 4), 0);
    assert_true(frames_sym_lookup(s, main_addr, &loc) > 0);
    assert_false(loc.found & FRAMES_SYM_FOUND_SYMBOL);
    assert_non_null(strstr(frames_sym_warning(s, 0), "build id"));
    frames_sym_close(s);
}

/* A symbol table the tests wrote themselves: one function in .text, looked up by file
   address; the ELF reader's answers equal nm's. */
static void test_elf_reader_vs_nm(void **state) {
    frames_sym_elf *e;
    frames_error err;
    unsigned char *data;
    size_t len, n, nnm = 0, i, matched = 0;
    const frames_sym_elf_symbol *syms;
    const char *table;
    int st;
    char *out, *line, *save = NULL;
    (void)state;
    build("prog_obj", "-fPIE -pie");
    data = tu_read_file(wpath("prog_obj"), &len);
    assert_non_null(data);
    assert_int_equal(frames_sym_elf_open(&e, data, len, NULL, &err), 0);
    syms = frames_sym_elf_symbols(e, &n, &table);
    assert_string_equal(table, ".symtab");
    assert_true(n >= 4);
    out = tu_run(&st, "nm --defined-only %s", wpath("prog_obj"));
    assert_int_equal(st, 0);
    for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        unsigned long long a;
        char type, name[128];
        if (sscanf(line, "%llx %c %127s", &a, &type, name) != 3 || (type != 'T' && type != 't')) continue;
        nnm++;
        for (i = 0; i < n; i++)
            if (syms[i].value == a && strlen(name) == syms[i].name_len &&
                !memcmp(name, syms[i].name, syms[i].name_len))
                matched++;
    }
    /* every function nm lists is ours (nm also lists labels without a type) */
    assert_true(matched >= 4);
    assert_true(matched <= nnm);
    for (i = 0, matched = 0; i < n; i++) {   /* a symbol names its own value, unless it is a
                                                label at the end of its section (_end) */
        const frames_sym_elf_symbol *s = frames_sym_elf_find(e, syms[i].value);
        if (s) assert_ptr_equal(s, &syms[i]);
        matched += s != NULL;
    }
    assert_true(matched >= 4);
    assert_null(frames_sym_elf_find(e, 0));
    assert_non_null(frames_sym_elf_build_id(e, &len));
    assert_int_equal(len, 20);
    frames_sym_elf_close(e);
    free(out);
    free(data);
}

/* Data objects (globals and statics with a size) equal `nm -S`'s B b D d R r symbols of
   the same file, one per address, with their sizes. */
static const char data_src[] =
    "int table[100] = {1};\n"
    "static long counter[7];\n"
    "const double scale[3] = {1.5, 2.5, 3.5};\n"
    "int *peek(int i) { counter[i % 7]++; return &table[i] + (int)scale[i % 3]; }\n"
    "int main(void) { return *peek(3) - 1; }\n";

static void test_elf_data_vs_nm(void **state) {
    frames_sym_elf *e;
    frames_error err;
    unsigned char *data;
    size_t len, n, nnm = 0, i, mine = 0;
    const frames_sym_elf_symbol *syms;
    int st;
    char *out, *line, *save = NULL;
    (void)state;
    assert_int_equal(tu_write_file(wpath("data.c"), data_src, strlen(data_src)), 0);
    out = tu_run(&st, "cd %s && cc -O0 -fPIE -pie -o prog_data data.c 2>&1", workdir);
    assert_int_equal(st, 0);
    free(out);
    data = tu_read_file(wpath("prog_data"), &len);
    assert_non_null(data);
    assert_int_equal(frames_sym_elf_open(&e, data, len, NULL, &err), 0);
    syms = frames_sym_elf_data(e, &n);
    out = tu_run(&st, "nm -S --defined-only %s", wpath("prog_data"));
    assert_int_equal(st, 0);
    for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        unsigned long long a, size;
        char type, name[128];
        const frames_sym_elf_symbol *s;
        if (sscanf(line, "%llx %llx %c %127s", &a, &size, &type, name) != 4 || size == 0 ||
            !strchr("BbDdRr", type))
            continue;
        nnm++;
        s = frames_sym_elf_find_data(e, a);
        assert_non_null(s);
        assert_int_equal(s->value, a);
        assert_int_equal(s->size, size);
        assert_ptr_equal(frames_sym_elf_find_data(e, a + size - 1), s);
        if (!strcmp(name, "table") || !strcmp(name, "counter") || !strcmp(name, "scale")) {
            assert_int_equal(s->name_len, strlen(name));
            assert_memory_equal(s->name, name, strlen(name));
            mine++;
        }
    }
    assert_int_equal(mine, 3);
    assert_int_equal(n, nnm);   /* nothing nm does not list as a data object */
    for (i = 0; i < n; i++) assert_ptr_equal(frames_sym_elf_find_data(e, syms[i].value), &syms[i]);
    assert_null(frames_sym_elf_find_data(e, 0));
    frames_sym_elf_close(e);
    free(out);
    free(data);
}

/* Damaged images: every prefix of a real file and a few corrupted headers parse or fail
   with FRAMES_E_FORMAT, never read outside the image (ASan runs this too). */
static void test_elf_reader_damaged(void **state) {
    frames_sym_elf *e;
    frames_error err;
    unsigned char *data, *copy;
    size_t len, cut, i;
    (void)state;
    build("prog_dmg", "-fPIE -pie");
    data = tu_read_file(wpath("prog_dmg"), &len);
    assert_non_null(data);
    for (cut = 0; cut < len; cut += cut < 256 ? 1 : 997) {
        copy = (unsigned char *)malloc(cut ? cut : 1);
        memcpy(copy, data, cut);
        if (frames_sym_elf_open(&e, copy, cut, NULL, &err) == 0) {
            size_t n;
            frames_sym_elf_symbols(e, &n, NULL);
            frames_sym_elf_find(e, 0x1139);
            frames_sym_elf_close(e);
        } else {
            assert_int_equal(err.code, FRAMES_E_FORMAT);
        }
        free(copy);
    }
    copy = (unsigned char *)malloc(len);
    for (i = 16; i < 64; i++) {   /* every byte of the ELF header set to 0xff in turn */
        memcpy(copy, data, len);
        copy[i] = 0xff;
        if (frames_sym_elf_open(&e, copy, len, NULL, &err) == 0) frames_sym_elf_close(e);
        else assert_int_equal(err.code, FRAMES_E_FORMAT);
    }
    free(copy);
    free(data);
}

/* ------------------------------------------------------------------ paths a trace names */

/* A trace with a modload frame for each path (module i at 0x10000 * (i + 1), 4 KiB) and
   one std_frame at offset 0x10 of each. */
static void write_module_trace(const char *trace, const char *const *paths, size_t n) {
    frames_writer *w;
    frames_error err;
    frames_frame f;
    size_t i;
    assert_int_equal(frames_writer_open_path(&w, trace, NULL, NULL, &err), FRAMES_OK);
    for (i = 0; i < n; i++) {
        memset(&f, 0, sizeof f);
        f.kind = FRAMES_KIND_MODLOAD;
        f.modload.module_name = frames_bytes_of(paths[i], strlen(paths[i]));
        f.modload.low_address = 0x10000 * (uint64_t)(i + 1);
        f.modload.high_address = f.modload.low_address + 0xfff;
        assert_int_equal(frames_writer_add(w, &f), FRAMES_OK);
    }
    for (i = 0; i < n; i++) {
        memset(&f, 0, sizeof f);
        f.kind = FRAMES_KIND_STD;
        f.std.address = 0x10000 * (uint64_t)(i + 1) + 0x10;
        f.std.rawbytes = frames_bytes_of("\x90", 1);
        assert_int_equal(frames_writer_add(w, &f), FRAMES_OK);
    }
    assert_int_equal(frames_writer_close(w), FRAMES_OK);
}

/* issue 27: a module path naming a FIFO hung `frames dump --pc --symbols` forever (the
   file was opened before it was known to be one). A FIFO, a directory and a device named
   by a trace, and a FIFO where the separate debug file of a stripped program would be,
   give module+offset names and a warning, at once. */
static void test_untrusted_paths_do_not_hang(void **state) {
    char fifo[600], dir[600], trace[600], root[600], prog[600], id[128];
    const char *paths[4];
    frames_sym *s;
    frames_sym_loc loc;
    frames_error err;
    char *out;
    int st;
    size_t len;
    (void)state;
    snprintf(fifo, sizeof fifo, "%s", wpath("fifo"));
    snprintf(dir, sizeof dir, "%s", wpath("dir"));
    snprintf(trace, sizeof trace, "%s", wpath("untrusted.frames"));
    assert_int_equal(mkfifo(fifo, 0600), 0);
    assert_int_equal(mkdir(dir, 0700), 0);
    /* the library: no blocking open, a warning that says why */
    assert_int_equal(frames_sym_open(&s, NULL, &err), 0);
    assert_int_equal(frames_sym_add_module(s, fifo, strlen(fifo), 0x1000, 0x1fff, NULL, 0), 0);
    assert_int_equal(frames_sym_lookup(s, 0x1010, &loc), FRAMES_SYM_FOUND_MODULE);
    assert_non_null(strstr(frames_sym_warning(s, 0), "not a regular file"));
    frames_sym_close(s);
    /* the command, on a trace naming them (timeout: a hang fails, exit 124) */
    paths[0] = fifo;
    paths[1] = dir;
    paths[2] = "/dev/zero";
    write_module_trace(trace, paths, 3);
    out = tu_run(&st, "timeout 60 %s dump --pc --symbols %s 2>&1", tu_frames_bin(), trace);
    assert_int_equal(st, 0);
    assert_non_null(strstr(out, "fifo+0x10"));
    assert_non_null(strstr(out, "dir+0x10"));
    assert_non_null(strstr(out, "zero+0x10"));
    assert_non_null(strstr(out, "not a regular file"));
    free(out);
    /* a stripped program whose debug file (by build id, under --sysroot) is a FIFO */
    snprintf(root, sizeof root, "%s", wpath("fifo-root"));
    snprintf(prog, sizeof prog, "%s", wpath("prog_stripped"));
    build("prog_stripped", "-Wl,--build-id");
    out = tu_run_ok("strip and read the build id",
                    "strip %s && mkdir -p %s%s && cp %s %s%s/ && "
                    "readelf -n %s | sed -n 's/.*Build ID: *//p'",
                    prog, root, workdir, prog, root, workdir, prog);
    len = strcspn(out, "\n");
    assert_true(len > 2 && len < sizeof id);
    memcpy(id, out, len);
    id[len] = 0;
    free(out);
    free(tu_run_ok("make the debug file a FIFO",
                   "mkdir -p %s/usr/lib/debug/.build-id/%.2s && mkfifo %s/usr/lib/debug/.build-id/%.2s/%s.debug",
                   root, id, root, id, id + 2));
    paths[0] = prog;
    write_module_trace(trace, paths, 1);
    out = tu_run(&st, "timeout 60 %s dump --pc --symbols --sysroot %s %s 2>&1", tu_frames_bin(), root, trace);
    assert_int_equal(st, 0);
    assert_non_null(strstr(out, "prog_stripped"));
    free(out);
}

static int setup(void **state) {
    (void)state;
    return tu_workdir_make("frames-sym");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_syscall_tables_vs_headers),
        cmocka_unit_test(test_syscall_table_aarch64_vs_generic_header),
        cmocka_unit_test(test_syscall_names_arm_and_abis),
        cmocka_unit_test(test_modules_without_files),
        cmocka_unit_test(test_elf_reader_vs_nm),
        cmocka_unit_test(test_elf_data_vs_nm),
        cmocka_unit_test(test_elf_reader_damaged),
        cmocka_unit_test(test_mapping_mismatch),
        cmocka_unit_test(test_untrusted_paths_do_not_hang),
#ifdef TU_RECORD_BUILT
        cmocka_unit_test(test_pie_vs_addr2line_and_nm),
        cmocka_unit_test(test_non_pie_vs_addr2line_and_nm),
        cmocka_unit_test(test_tools_print_names),
        cmocka_unit_test(test_mismatch_and_damage_warn),
        cmocka_unit_test(test_stat_syscall_names_vs_strace),
#endif
    };
    return cmocka_run_group_tests(tests, setup, tu_workdir_teardown);
}
