/* ptsynth.h - synthesise Intel PT traces with libipt's own encoder (tests and benchmark).

   A walker follows real x86-64 code bytes: it decodes each instruction (frames_pt.h's
   length decoder), decides conditional branches with a seeded PRNG, picks indirect
   targets from given lists, and encodes the packets a CPU would emit: TNT bits (taken /
   not taken, compressed returns), TIP for indirect branches, PSB+ with FUP and MODE.exec,
   and a final FUP + TIP.PGD. It records the executed addresses; libipt then has to decode
   exactly that sequence (a wrong instruction length or TNT count decodes differently).
   Optionally it pauses tracing at times (disable, re-enable at the same ip, with what
   errata-affected cpus put in between) and stops where a branch leaves an address
   filter (the TIP.PGD without IP of erratum SKL014 for direct branches).
   Header-only, static functions; needs intel-pt.h and frames_pt.h. */
#ifndef FRAMES_PTSYNTH_H
#define FRAMES_PTSYNTH_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "frames_pt.h"

/* The code image: gas output of a small program (listing in docs/pt.md's test section):
   main 0x00 (loop: jnz, call fa, jz, call [fptr], ja, jmp rax), fa 0x7d (loop la),
   fb 0x94 (jrcxz, call fc, rep movsb, leave), fc 0xae (jle, ret 8). The encodings mix
   REX, VEX, EVEX, 66/F2/F3, 0F38/0F3A maps, SIB, RIP-relative, imm64, x87, fs:. */
static const uint8_t ptsynth_code[] = {
    0x48, 0x8b, 0x44, 0xcb, 0x10, 0x48, 0x05, 0x78, 0x56, 0x34, 0x12, 0x48, 0x8d, 0x15, 0x00, 0x01,
    0x00, 0x00, 0xc5, 0xfe, 0x6f, 0x02, 0x66, 0x0f, 0xef, 0xca, 0x49, 0xb8, 0x88, 0x77, 0x66, 0x55,
    0x44, 0x33, 0x22, 0x11, 0x66, 0xc7, 0x44, 0x24, 0x08, 0x34, 0x12, 0x66, 0x0f, 0x38, 0x00, 0xdc,
    0x66, 0x0f, 0x3a, 0x0e, 0xee, 0xaa, 0x62, 0xf1, 0x75, 0x48, 0xfe, 0xc2, 0xff, 0xc9, 0x75, 0x05,
    0xe8, 0x38, 0x00, 0x00, 0x00, 0x6b, 0xc1, 0x07, 0x41, 0xc1, 0xe1, 0x03, 0x42, 0x0f, 0xb6, 0x34,
    0x17, 0xdd, 0x04, 0x24, 0x0f, 0x1f, 0x04, 0x00, 0x85, 0xc0, 0x74, 0x06, 0xff, 0x15, 0x76, 0x00,
    0x00, 0x00, 0x83, 0xf8, 0x03, 0x0f, 0x92, 0xc2, 0x4d, 0x0f, 0x45, 0xdc, 0xf6, 0x43, 0x40, 0x80,
    0x77, 0x8e, 0x31, 0xd2, 0x48, 0x8d, 0x05, 0x85, 0xff, 0xff, 0xff, 0xff, 0xe0, 0x53, 0xbb, 0x10,
    0x00, 0x00, 0x00, 0x48, 0x03, 0xb4, 0xdf, 0x00, 0xfe, 0xff, 0xff, 0xf2, 0x0f, 0x38, 0xf0, 0x06,
    0xe2, 0xf1, 0x5b, 0xc3, 0x55, 0x48, 0x89, 0xe5, 0x48, 0x81, 0xec, 0x80, 0x00, 0x00, 0x00, 0x0f,
    0x29, 0x45, 0xe0, 0xe3, 0x05, 0xe8, 0x04, 0x00, 0x00, 0x00, 0xf3, 0xa4, 0xc9, 0xc3, 0x64, 0x8b,
    0x04, 0x25, 0x28, 0x00, 0x00, 0x00, 0x0f, 0xc8, 0xc4, 0x42, 0x30, 0xf2, 0xc2, 0x81, 0x3d, 0x00,
    0x10, 0x00, 0x00, 0xff, 0xff, 0xff, 0x7f, 0x7e, 0x05, 0xf3, 0x48, 0x0f, 0xb8, 0xc1, 0xc2, 0x08,
    0x00, 0x0f, 0x1f, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
};
#define PTSYNTH_MAIN 0x00u
#define PTSYNTH_SECOND 0x45u
#define PTSYNTH_THIRD 0x62u
#define PTSYNTH_FA 0x7du
#define PTSYNTH_FB 0x94u
#define PTSYNTH_FC 0xaeu

/* How a pause looks: what comes between the disable and TIP.PGE at the same ip. */
#define PTSYNTH_PAUSE_PLAIN 0   /* FUP + TIP.PGD (asynchronous disable) ... TIP.PGE */
#define PTSYNTH_PAUSE_PSB 1     /* a PSB+ with FUP and MODE.Exec while disabled (BDM70) */
#define PTSYNTH_PAUSE_OVF_FUP 2 /* an OVF followed by a FUP while disabled (APL12) */
#define PTSYNTH_PAUSE_OVF_PGD 3 /* OVF then TIP.PGD instead of FUP + TIP.PGD (APL11) */

typedef struct ptsynth {
    /* input */
    const uint8_t *code;
    size_t code_len;
    uint64_t base;                 /* code is loaded here */
    const uint64_t *call_targets;  /* for indirect calls (absolute) */
    size_t ncall_targets;
    const uint64_t *jump_targets;  /* for indirect jumps (absolute) */
    size_t njump_targets;
    uint64_t psb_every;            /* trace bytes between PSBs (0: only the first) */
    uint64_t tsc_every;            /* instructions between TSC packets (0: none) */
    uint32_t seed;
    uint64_t pause_every;          /* instructions between pauses of tracing (0: none) */
    int pause_kind;                /* PTSYNTH_PAUSE_* */
    uint64_t filter_lo, filter_hi; /* address filter (inclusive; hi 0: none): leaving it
                                      disables tracing, and the walk ends there */
    int filter_skl014;             /* a direct branch leaving it: TIP.PGD without IP */
    /* output */
    uint8_t *trace;                /* malloc'd */
    size_t len;
    uint64_t *ips;                 /* executed addresses (when want_ips) */
    uint64_t nips, ipcap;
    int want_ips;
    uint64_t hash;                 /* FNV-1a over the executed addresses */
    uint64_t *psb_off, *psb_idx;   /* every PSB: trace offset, instructions before it */
    size_t npsb, psbcap;
    /* state */
    struct pt_encoder *enc;
    struct pt_config cfg;
    size_t cap;
    uint64_t last_ip;              /* for IP compression, as the decoder tracks it */
    uint64_t tnt;                  /* pending TNT bits, first = most significant */
    int ntnt;
    uint64_t stack[64];            /* return addresses of calls in flight */
    int depth;
    uint64_t rng;
    uint64_t last_psb;
    uint64_t tsc;
    int failed;
} ptsynth;

static uint32_t ptsynth_rand(ptsynth *s) {
    s->rng = s->rng * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(s->rng >> 33);
}

/* Make room and (re)create the encoder over the grown buffer at the same offset. */
static int ptsynth_room(ptsynth *s, size_t need) {
    uint64_t off = 0;
    if (s->enc) pt_enc_get_offset(s->enc, &off);
    if (s->enc && off + need <= s->cap) return 0;
    if (off + need > s->cap) {
        size_t ncap = s->cap ? s->cap * 2 : 1 << 16;
        uint8_t *nb;
        while (ncap < off + need) ncap *= 2;
        nb = (uint8_t *)realloc(s->trace, ncap);
        if (!nb) return -1;
        s->trace = nb;
        s->cap = ncap;
    }
    if (s->enc) pt_free_encoder(s->enc);
    pt_config_init(&s->cfg);
    s->cfg.begin = s->trace;
    s->cfg.end = s->trace + s->cap;
    s->enc = pt_alloc_encoder(&s->cfg);
    if (!s->enc || pt_enc_sync_set(s->enc, off) < 0) return -1;
    return 0;
}

static void ptsynth_put(ptsynth *s, struct pt_packet *p) {
    if (s->failed || ptsynth_room(s, 64) < 0 || pt_enc_next(s->enc, p) < 0) s->failed = 1;
}

static void ptsynth_flush_tnt(ptsynth *s) {
    struct pt_packet p;
    if (!s->ntnt) return;
    memset(&p, 0, sizeof p);
    p.type = s->ntnt <= 6 ? ppt_tnt_8 : ppt_tnt_64;
    p.payload.tnt.bit_size = (uint8_t)s->ntnt;
    p.payload.tnt.payload = s->tnt;
    ptsynth_put(s, &p);
    s->tnt = 0;
    s->ntnt = 0;
}

static void ptsynth_tnt(ptsynth *s, int taken) {
    s->tnt = (s->tnt << 1) | (taken ? 1u : 0u);
    if (++s->ntnt == 47) ptsynth_flush_tnt(s);
}

/* An IP packet, compressed against the last IP the way the decoder reconstructs it. */
static void ptsynth_ip(ptsynth *s, enum pt_packet_type type, uint64_t ip) {
    struct pt_packet p;
    ptsynth_flush_tnt(s);
    memset(&p, 0, sizeof p);
    p.type = type;
    p.payload.ip.ip = ip;
    if ((ip >> 16) == (s->last_ip >> 16)) p.payload.ip.ipc = pt_ipc_update_16, p.payload.ip.ip &= 0xffff;
    else if ((ip >> 32) == (s->last_ip >> 32)) p.payload.ip.ipc = pt_ipc_update_32, p.payload.ip.ip &= 0xffffffffull;
    else p.payload.ip.ipc = pt_ipc_sext_48, p.payload.ip.ip &= 0xffffffffffffull;
    ptsynth_put(s, &p);
    s->last_ip = ip;
}

static void ptsynth_simple(ptsynth *s, enum pt_packet_type type) {
    struct pt_packet p;
    memset(&p, 0, sizeof p);
    p.type = type;
    ptsynth_put(s, &p);
}

/* PSB+ that (re)starts decoding at ip, 64-bit mode. */
static void ptsynth_psb(ptsynth *s, uint64_t ip) {
    struct pt_packet p;
    uint64_t off = 0;
    ptsynth_flush_tnt(s);
    if (s->enc) pt_enc_get_offset(s->enc, &off);
    if (s->npsb == s->psbcap) {
        size_t ncap = s->psbcap ? s->psbcap * 2 : 64;
        uint64_t *a = (uint64_t *)realloc(s->psb_off, ncap * sizeof *a);
        uint64_t *b = a ? (uint64_t *)realloc(s->psb_idx, ncap * sizeof *b) : NULL;
        if (a) s->psb_off = a;
        if (!a || !b) {
            s->failed = 1;
            return;
        }
        s->psb_idx = b;
        s->psbcap = ncap;
    }
    s->psb_off[s->npsb] = off;
    s->psb_idx[s->npsb++] = s->nips;
    ptsynth_simple(s, ppt_psb);
    if (s->tsc_every) {
        memset(&p, 0, sizeof p);
        p.type = ppt_tsc;
        p.payload.tsc.tsc = s->tsc;
        ptsynth_put(s, &p);
    }
    s->last_ip = 0;   /* PSB resets the decoder's last IP */
    ptsynth_ip(s, ppt_fup, ip);
    memset(&p, 0, sizeof p);
    p.type = ppt_mode;
    p.payload.mode.leaf = pt_mol_exec;
    p.payload.mode.bits.exec = pt_set_exec_mode(ptem_64bit);
    ptsynth_put(s, &p);
    ptsynth_simple(s, ppt_psbend);
    if (s->enc) pt_enc_get_offset(s->enc, &s->last_psb);
}

static void ptsynth_record(ptsynth *s, uint64_t ip) {
    if (s->want_ips) {
        if (s->nips == s->ipcap) {
            uint64_t ncap = s->ipcap ? s->ipcap * 2 : 1024;
            uint64_t *n = (uint64_t *)realloc(s->ips, ncap * sizeof *n);
            if (!n) {
                s->failed = 1;
                return;
            }
            s->ips = n;
            s->ipcap = ncap;
        }
        s->ips[s->nips] = ip;
    }
    s->nips++;
    s->hash = (s->hash ^ ip) * 0x100000001b3ull;
}

/* Tracing stops right before ip and starts again there, in the way pause_kind says. */
static void ptsynth_pause(ptsynth *s, uint64_t ip) {
    if (s->pause_kind == PTSYNTH_PAUSE_OVF_PGD) {
        ptsynth_flush_tnt(s);
        ptsynth_simple(s, ppt_ovf);
        ptsynth_simple(s, ppt_tip_pgd);
        s->last_ip = 0;   /* the overflow lost the last ip: resume with a full one */
    } else {
        ptsynth_ip(s, ppt_fup, ip);
        ptsynth_simple(s, ppt_tip_pgd);
    }
    if (s->pause_kind == PTSYNTH_PAUSE_PSB) {
        ptsynth_psb(s, ip);
    } else if (s->pause_kind == PTSYNTH_PAUSE_OVF_FUP) {
        ptsynth_simple(s, ppt_ovf);
        s->last_ip = 0;
        ptsynth_ip(s, ppt_fup, ip);
    }
    ptsynth_ip(s, ppt_tip_pge, ip);
}

/* Branch x to target leaves the address filter: tracing stops (returns 1). */
static int ptsynth_leaves_filter(ptsynth *s, const frames_pt_x86 *x, uint64_t target) {
    if (!s->filter_hi || (target >= s->filter_lo && target <= s->filter_hi)) return 0;
    if (x->has_target && s->filter_skl014) {
        ptsynth_flush_tnt(s);
        ptsynth_simple(s, ppt_tip_pgd);
    } else {
        ptsynth_ip(s, ppt_tip_pgd, target);
    }
    return 1;
}

/* Walk ninsn instructions from entry. Returns 0, or -1 (encoder failure or code the
   walker cannot follow: a far transfer or bytes outside the image). */
static int ptsynth_walk(ptsynth *s, uint64_t entry, uint64_t ninsn) {
    uint64_t ip = entry, n;
    s->rng = s->seed * 2654435761ull + 1;
    s->hash = 0xcbf29ce484222325ull;
    s->nips = 0;
    s->depth = 0;
    ptsynth_psb(s, ip);
    for (n = 0; n < ninsn && !s->failed; n++) {
        frames_pt_x86 x;
        uint64_t off = ip - s->base, next;
        if (ip < s->base || off >= s->code_len ||
            frames_pt_x86_decode(s->code + off, s->code_len - off, ptem_64bit, ip, &x) < 0)
            return -1;
        ptsynth_record(s, ip);
        next = ip + x.size;
        switch (x.iclass) {
        case ptic_other:
            break;
        case ptic_cond_jump: {
            int taken = (int)(ptsynth_rand(s) % 3 != 0);   /* loops mostly loop */
            if (s->filter_hi && (x.target < s->filter_lo || x.target > s->filter_hi))
                return -1;   /* not modelled: a conditional branch out of the filter */
            ptsynth_tnt(s, taken);
            if (taken) next = x.target;
            break;
        }
        case ptic_call:
            if (s->depth == 64) return -1;
            s->stack[s->depth++] = next;
            if (x.has_target) {
                next = x.target;
                if (ptsynth_leaves_filter(s, &x, next)) goto disabled;
            } else {
                next = s->call_targets[ptsynth_rand(s) % s->ncall_targets];
                if (ptsynth_leaves_filter(s, &x, next)) goto disabled;
                ptsynth_ip(s, ppt_tip, next);
            }
            break;
        case ptic_return:
            if (!s->depth) return -1;
            next = s->stack[--s->depth];
            ptsynth_tnt(s, 1);   /* compressed return */
            break;
        case ptic_jump:
            if (x.has_target) {
                next = x.target;
                if (ptsynth_leaves_filter(s, &x, next)) goto disabled;
            } else {
                next = s->jump_targets[ptsynth_rand(s) % s->njump_targets];
                if (ptsynth_leaves_filter(s, &x, next)) goto disabled;
                ptsynth_ip(s, ppt_tip, next);
            }
            break;
        default:
            return -1;
        }
        ip = next;
        if (s->tsc_every && (n + 1) % s->tsc_every == 0) {
            struct pt_packet p;
            ptsynth_flush_tnt(s);
            s->tsc += 1000;
            memset(&p, 0, sizeof p);
            p.type = ppt_tsc;
            p.payload.tsc.tsc = s->tsc;
            ptsynth_put(s, &p);
        }
        if (s->psb_every && s->depth == 0) {   /* PSBs only between calls: returns stay compressed */
            uint64_t off2 = 0;
            pt_enc_get_offset(s->enc, &off2);
            if (off2 - s->last_psb >= s->psb_every) ptsynth_psb(s, ip);
        }
        /* pauses too only between calls: the decoder's return stack stays as it is */
        if (s->pause_every && s->depth == 0 && (n + 1) % s->pause_every == 0 && n + 1 < ninsn)
            ptsynth_pause(s, ip);
    }
    /* stop right before ip: FUP + TIP.PGD without an IP (an asynchronous disable) */
    ptsynth_ip(s, ppt_fup, ip);
    ptsynth_simple(s, ppt_tip_pgd);
disabled:
    if (s->failed) return -1;
    {
        uint64_t off = 0;
        pt_enc_get_offset(s->enc, &off);
        s->len = (size_t)off;
    }
    pt_free_encoder(s->enc);
    s->enc = NULL;
    return 0;
}

static void ptsynth_free(ptsynth *s) {
    if (s->enc) pt_free_encoder(s->enc);
    free(s->trace);
    free(s->ips);
    free(s->psb_off);
    free(s->psb_idx);
    memset(s, 0, sizeof *s);
}

/* The standard setup over ptsynth_code at base. */
static void ptsynth_init_default(ptsynth *s, uint64_t base, uint32_t seed, uint64_t *calls,
                                 uint64_t *jumps) {
    memset(s, 0, sizeof *s);
    s->code = ptsynth_code;
    s->code_len = sizeof ptsynth_code;
    s->base = base;
    calls[0] = base + PTSYNTH_FA;
    calls[1] = base + PTSYNTH_FB;
    calls[2] = base + PTSYNTH_FC;
    jumps[0] = base + PTSYNTH_MAIN;
    jumps[1] = base + PTSYNTH_SECOND;
    jumps[2] = base + PTSYNTH_THIRD;
    s->call_targets = calls;
    s->ncall_targets = 3;
    s->jump_targets = jumps;
    s->njump_targets = 3;
    s->seed = seed;
}

#endif
