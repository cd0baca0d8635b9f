/* proc.c - process side of `frames record`: tracee memory, executable mappings
   (modload frames), the meta frame (with an RFC 1321 MD5 of the target) and the
   PTRACE_SINGLEBLOCK probe. */
#include "record.h"

#ifdef RECORD_SUPPORTED
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef PTRACE_SINGLEBLOCK
#define PTRACE_SINGLEBLOCK 33
#endif

/* ---------------------------------------------------------------- memory */

int rp_open(rp_proc *p, pid_t tgid) {
    char path[64];
    memset(p, 0, sizeof *p);
    p->tgid = tgid;
    snprintf(path, sizeof path, "/proc/%d/mem", (int)tgid);
    p->memfd = open(path, O_RDONLY | O_CLOEXEC);
    return p->memfd < 0 ? -1 : 0;
}

int rp_reopen(rp_proc *p) {
    char path[64];
    if (p->memfd >= 0) close(p->memfd);
    snprintf(path, sizeof path, "/proc/%d/mem", (int)p->tgid);
    p->memfd = open(path, O_RDONLY | O_CLOEXEC);
    return p->memfd < 0 ? -1 : 0;
}

void rp_close(rp_proc *p) {
    if (p->memfd >= 0) close(p->memfd);
    p->memfd = -1;
    rp_ranges_free(&p->mods);
}

long rp_read(rp_proc *p, uint64_t addr, void *buf, size_t n) {
    ssize_t got = pread(p->memfd, buf, n, (off_t)addr);
    uint64_t page_end;
    if (got > 0) return (long)got;
    /* the range may run into an unmapped page: read up to the page boundary */
    page_end = (addr | 4095) + 1;
    if (page_end - addr >= n) return -1;
    got = pread(p->memfd, buf, (size_t)(page_end - addr), (off_t)addr);
    return got > 0 ? (long)got : -1;
}

/* ---------------------------------------------------------------- modules */

int rp_ranges_add(rp_ranges *m, uint64_t lo, uint64_t hi) {
    size_t i;
    for (i = 0; i < m->n; i++)
        if (m->r[i][0] == lo && m->r[i][1] == hi) return 1;
    if (m->n == m->cap) {
        size_t ncap = m->cap ? m->cap * 2 : 32;
        uint64_t(*nr)[2] = (uint64_t(*)[2])realloc(m->r, ncap * sizeof *nr);
        if (!nr) return -1;
        m->r = nr;
        m->cap = ncap;
    }
    m->r[m->n][0] = lo;
    m->r[m->n][1] = hi;
    m->n++;
    return 0;
}

int rp_ranges_copy(rp_ranges *dst, const rp_ranges *src) {
    if (!src->n) return 0;
    if (!(dst->r = (uint64_t(*)[2])malloc(src->n * sizeof *dst->r))) return -1;
    memcpy(dst->r, src->r, src->n * sizeof *dst->r);
    dst->n = dst->cap = src->n;
    return 0;
}

void rp_ranges_free(rp_ranges *m) {
    free(m->r);
    m->r = NULL;
    m->n = m->cap = 0;
}


/* Lines of /proc/PID/maps: "lo-hi perms offset dev inode   path". */
int rp_scan_modules(rp_proc *p, frames_recorder *rec) {
    char path[64], line[4096 + 256], perms[8], name[4096];
    unsigned long long lo, hi;
    FILE *f;
    int n = 0;
    snprintf(path, sizeof path, "/proc/%d/maps", (int)p->tgid);
    if (!(f = fopen(path, "re"))) return 0;
    while (fgets(line, sizeof line, f)) {
        int off = 0, known;
        name[0] = 0;
        if (sscanf(line, "%llx-%llx %7s %*s %*s %*s %n", &lo, &hi, perms, &off) < 3) continue;
        if (perms[2] != 'x') continue;
        if ((known = rp_ranges_add(&p->mods, lo, hi)) != 0) {
            if (known < 0) break;
            continue;
        }
        if (off > 0 && sscanf(line + off, "%4095[^\n]", name) != 1) name[0] = 0;
        if (!name[0]) snprintf(name, sizeof name, "[anonymous]");
        /* modload ranges are inclusive, as bap-pintraces writes them */
        if (frames_rec_modload(rec, name, lo, hi - 1) < 0) break;
        n++;
    }
    fclose(f);
    return n;
}

void rp_reset_modules(rp_proc *p) { p->mods.n = 0; }

/* ---------------------------------------------------------------- MD5 (RFC 1321) */

typedef struct md5 {
    uint32_t h[4];
    uint64_t bytes;
    uint8_t block[64];
} md5;

/* MD5's constants, floor(|sin(i + 1)| * 2^32) (RFC 1321), as a table so that frames needs
   no libm */
static const uint32_t md5_k[64] = {
    0xd76aa478u, 0xe8c7b756u, 0x242070dbu, 0xc1bdceeeu,
    0xf57c0fafu, 0x4787c62au, 0xa8304613u, 0xfd469501u,
    0x698098d8u, 0x8b44f7afu, 0xffff5bb1u, 0x895cd7beu,
    0x6b901122u, 0xfd987193u, 0xa679438eu, 0x49b40821u,
    0xf61e2562u, 0xc040b340u, 0x265e5a51u, 0xe9b6c7aau,
    0xd62f105du, 0x02441453u, 0xd8a1e681u, 0xe7d3fbc8u,
    0x21e1cde6u, 0xc33707d6u, 0xf4d50d87u, 0x455a14edu,
    0xa9e3e905u, 0xfcefa3f8u, 0x676f02d9u, 0x8d2a4c8au,
    0xfffa3942u, 0x8771f681u, 0x6d9d6122u, 0xfde5380cu,
    0xa4beea44u, 0x4bdecfa9u, 0xf6bb4b60u, 0xbebfbc70u,
    0x289b7ec6u, 0xeaa127fau, 0xd4ef3085u, 0x04881d05u,
    0xd9d4d039u, 0xe6db99e5u, 0x1fa27cf8u, 0xc4ac5665u,
    0xf4292244u, 0x432aff97u, 0xab9423a7u, 0xfc93a039u,
    0x655b59c3u, 0x8f0ccc92u, 0xffeff47du, 0x85845dd1u,
    0x6fa87e4fu, 0xfe2ce6e0u, 0xa3014314u, 0x4e0811a1u,
    0xf7537e82u, 0xbd3af235u, 0x2ad7d2bbu, 0xeb86d391u,
};

static uint32_t rotl(uint32_t x, unsigned c) { return (x << c) | (x >> (32 - c)); }

static void md5_block(md5 *m, const uint8_t *p) {
    static const uint8_t s[4][4] = {{7, 12, 17, 22}, {5, 9, 14, 20}, {4, 11, 16, 23}, {6, 10, 15, 21}};
    uint32_t w[16], a = m->h[0], b = m->h[1], c = m->h[2], d = m->h[3], f, t;
    unsigned i, g;
    for (i = 0; i < 16; i++)
        w[i] = (uint32_t)p[4 * i] | (uint32_t)p[4 * i + 1] << 8 | (uint32_t)p[4 * i + 2] << 16 |
               (uint32_t)p[4 * i + 3] << 24;
    for (i = 0; i < 64; i++) {
        if (i < 16) { f = (b & c) | (~b & d); g = i; }
        else if (i < 32) { f = (d & b) | (~d & c); g = (5 * i + 1) & 15; }
        else if (i < 48) { f = b ^ c ^ d; g = (3 * i + 5) & 15; }
        else { f = c ^ (b | ~d); g = (7 * i) & 15; }
        t = d;
        d = c;
        c = b;
        b = b + rotl(a + f + md5_k[i] + w[g], s[i / 16][i % 4]);
        a = t;
    }
    m->h[0] += a;
    m->h[1] += b;
    m->h[2] += c;
    m->h[3] += d;
}

static void md5_init(md5 *m) {
    m->h[0] = 0x67452301u;
    m->h[1] = 0xefcdab89u;
    m->h[2] = 0x98badcfeu;
    m->h[3] = 0x10325476u;
    m->bytes = 0;
}

static void md5_update(md5 *m, const uint8_t *p, size_t n) {
    size_t have = (size_t)(m->bytes & 63), take;
    m->bytes += n;
    while (n > 0) {
        take = 64 - have < n ? 64 - have : n;
        memcpy(m->block + have, p, take);
        have += take;
        p += take;
        n -= take;
        if (have == 64) {
            md5_block(m, m->block);
            have = 0;
        }
    }
}

static void md5_final(md5 *m, uint8_t out[16]) {
    uint8_t pad[72] = {0x80};
    uint64_t bits = m->bytes * 8;
    size_t padlen = 64 - (size_t)((m->bytes + 8) & 63), i;
    for (i = 0; i < 8; i++) pad[padlen + i] = (uint8_t)(bits >> (8 * i));
    md5_update(m, pad, padlen + 8);
    for (i = 0; i < 16; i++) out[i] = (uint8_t)(m->h[i / 4] >> (8 * (i % 4)));
}

int rp_md5_file(const char *path, uint8_t out[16]) {
    uint8_t buf[65536];
    md5 m;
    ssize_t n;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    md5_init(&m);
    while ((n = read(fd, buf, sizeof buf)) > 0) md5_update(&m, buf, (size_t)n);
    close(fd);
    if (n < 0) return -1;
    md5_final(&m, out);
    return 0;
}

/* ---------------------------------------------------------------- meta */

static frames_bytes dup_bytes(const char *s) {
    char *c = strdup(s ? s : "");
    return frames_bytes_of(c, c ? strlen(c) : 0);
}

void rp_meta_build(rp_meta *m, const char *path, int argc, char **argv) {
    struct stat st;
    struct timeval tv;
    struct passwd *pw = getpwuid(getuid());
    char host[256] = "";
    int i;
    memset(m, 0, sizeof *m);
    m->meta.tracer_name = frames_str("frames-record");
    m->meta.tracer_version = frames_str(FRAMES_LIB_VERSION);
    m->path = strdup(path);
    m->meta.target_path = frames_str(m->path);
    m->args = (frames_bytes *)calloc((size_t)argc + 1, sizeof *m->args);
    for (i = 0; m->args && i < argc; i++) m->args[i] = dup_bytes(argv[i]);
    m->meta.target_args = m->args;
    m->meta.ntarget_args = m->args ? (uint32_t)argc : 0;
    if (rp_md5_file(path, m->md5) < 0) memset(m->md5, 0, 16);
    m->meta.target_md5sum = frames_bytes_of(m->md5, 16);
    if (stat(path, &st) == 0) {
        m->meta.fstats_size = (int32_t)(uint32_t)st.st_size; /* wraps as every writer does */
        m->meta.fstats_atime = (double)st.st_atim.tv_sec + st.st_atim.tv_nsec * 1e-9;
        m->meta.fstats_mtime = (double)st.st_mtim.tv_sec + st.st_mtim.tv_nsec * 1e-9;
        m->meta.fstats_ctime = (double)st.st_ctim.tv_sec + st.st_ctim.tv_nsec * 1e-9;
    }
    m->meta.user = dup_bytes(pw ? pw->pw_name : "");
    gethostname(host, sizeof host - 1);
    m->meta.host = dup_bytes(host);
    gettimeofday(&tv, NULL);
    m->meta.time = (double)tv.tv_sec + tv.tv_usec * 1e-6;
}

void rp_meta_free(rp_meta *m) {
    uint32_t i;
    for (i = 0; i < m->meta.ntarget_args; i++) free((void *)m->args[i].ptr);
    free(m->args);
    free(m->path);
    free((void *)m->meta.user.ptr);
    free((void *)m->meta.host.ptr);
}

/* ---------------------------------------------------------------- SINGLEBLOCK probe */

/* 200 iterations of 7 instructions with one taken branch each, then exit(0). */
static void probe_body(void) {
    __asm__ volatile("mov $200, %%ecx\n"
                     "1: nop\n nop\n nop\n nop\n nop\n"
                     "dec %%ecx\n jnz 1b\n"
                     "mov $60, %%eax\n xor %%edi, %%edi\n syscall\n"
                     ::: "rcx", "rax", "rdi", "r11", "memory");
}

/* Stops until the probe child exits, stepping with `request`; -1 on failure. */
static long probe_stops(int request) {
    pid_t pid = fork();
    long stops = 0;
    int st;
    if (pid < 0) return -1;
    if (pid == 0) {
        ptrace(PTRACE_TRACEME, 0, 0, 0);
        raise(SIGSTOP);
        probe_body();
        _exit(1);
    }
    if (waitpid(pid, &st, 0) != pid || !WIFSTOPPED(st)) return -1;
    for (;;) {
        if (ptrace((enum __ptrace_request)request, pid, 0, 0) < 0) {
            kill(pid, SIGKILL);
            waitpid(pid, &st, 0);
            return -1;
        }
        if (waitpid(pid, &st, 0) != pid) return -1;
        if (WIFEXITED(st) || WIFSIGNALED(st)) break;
        stops++;
    }
    return stops;
}

int rp_probe_singleblock(void) {
    long step = probe_stops(PTRACE_SINGLESTEP), block = probe_stops(PTRACE_SINGLEBLOCK);
    if (step < 1400 || block < 0) return -1;
    return block * 2 < step;
}

#else
typedef int record_proc_unused; /* ISO C forbids an empty translation unit */
#endif
