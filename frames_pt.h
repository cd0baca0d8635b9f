/* frames_pt.h - Intel Processor Trace to BAP frames, on libipt 2.0 (Debian's libipt-dev).
   Single-header C99 library (also compiles as C++). MIT licence, see frames.h.

   ---------------------------------------------------------------------------------------
   WHAT IT IS

   Decodes an Intel PT packet stream with libipt into a frames trace: one std_frame per
   executed instruction (address, raw bytes from the code image, thread id from perf
   sideband), exception frames for interrupts and trace gaps, modload frames for the code
   that was loaded. Everything libipt-sb, pevent and ptxed do for perf sideband is
   implemented here (Debian ships none of them): perf_event record parsing, perf time to
   TSC, one image per process (copied on fork, fresh on exec), context switches placed at
   the right TSC, primary/secondary channels, vdso, sysroot, kernel start, warnings for
   sections that cannot be loaded. perf.data files are read directly (no perf script).

   Needs <intel-pt.h> and -lipt. frames.h itself never includes this header.

   ---------------------------------------------------------------------------------------
   USAGE

   In exactly one C or C++ file (after frames.h's implementation, or in another file):

       #define FRAMES_PT_IMPLEMENTATION
       #include "frames_pt.h"

   Decoding a trace with code images (what `ptxed --raw/--elf --pt` does):

       frames_pt *pt; frames_pt_options o; frames_pt_stats st; frames_error err;
       frames_pt_options_default(&o);
       frames_pt_parse_cpu("6/142", &o.cpu);                   // optional: errata
       if (frames_pt_open(&pt, &o, &err) < 0) { puts(err.message); return 1; }
       frames_pt_load_trace(pt, "trace.pt", 0, 0, &err);
       frames_pt_add_raw(pt, "code.bin", 0, 0, 0x400000, &err);
       frames_pt_add_elf(pt, "a.out", 0, 0, &err);              // PT_LOAD segments
       frames_pt_decode(pt, writer, &st, &err);                 // writer: frames_writer
       frames_pt_close(pt);

   With perf sideband files (ptxed --pevent:*), before decoding:

       frames_pt_sb_config sb; frames_pt_sb_config_default(&sb);
       sb.sample_type = 0x10086; sb.sysroot = "/sysroot";
       sb.time_mult = 1; sb.time_shift = 0;     // perf's time conversion (perf.data header)
       frames_pt_load_pevent(pt, &sb, "cpu0.pevent", 0, 0, 1, &err);   // primary
       frames_pt_load_pevent(pt, &sb, "cpu1.pevent", 0, 0, 0, &err);   // secondary

   From a perf.data file recorded with `perf record -e intel_pt//u --switch-events`:

       frames_perf *pd;
       frames_perf_open_path(&pd, "perf.data", NULL, &err);   // NULL: alloc_ctx
       for (size_t i = 0; i < frames_perf_nstreams(pd); i++) {
           frames_pt_options_default(&o);
           frames_perf_pt_options(pd, &o);                // cpu, timing, MTC from the file
           frames_pt_open(&pt, &o, &err);
           frames_perf_attach(pd, i, pt, NULL, &err);     // trace + per-cpu sideband
           frames_pt_decode(pt, writer, &st, &err);
           frames_pt_close(pt);
       }
       frames_perf_close(pd);

   ---------------------------------------------------------------------------------------
   OUTPUT (details and rationale: docs/pt.md)

   - std_frame per instruction: address, thread_id (sideband tid, else options.default_tid),
     rawbytes (the instruction's bytes from the image), empty operand_pre_list (PT records
     no operand values). Speculative (TSX) instructions follow options.speculative.
   - exception_frame: FRAMES_PT_EXC_INTERRUPT (async branch: from_addr -> to_addr),
     FRAMES_PT_EXC_OVERFLOW (internal buffer overflow; to_addr = where tracing resumes),
     FRAMES_PT_EXC_GAP (decode error; trace skipped to the next PSB; from_addr = last
     instruction). Exception numbers are above 255 so they never collide with a vector.
   - modload_frame: every code image added before decoding and every MMAP of the primary
     sideband channel that was loaded (low/high address inclusive, as PIN writes them).
   - everything else (enable/disable, paging, mode, power, ptwrite, timing, ...) is
     counted per event type in frames_pt_stats and passed to the event callback.

   Decoders: FRAMES_PT_DECODER_BLOCK (default) uses libipt's block decoder and rebuilds the
   instructions of each block with the included x86 length decoder (cached per block);
   FRAMES_PT_DECODER_INSN uses the instruction-flow decoder. Both give identical frames.
   With an address filter on a cpu with erratum SKL014 the block path decodes with the
   instruction-flow decoder (libipt 2.0.5's block decoder loses instructions there or
   overflows the stack; stats.blocks stays 0).

   ---------------------------------------------------------------------------------------
   OPTIONS (#define before including the implementation)

   Allocation uses frames.h's FRAMES_MALLOC/REALLOC/FREE with options.alloc_ctx; public
   names follow FRAMES_PT_DEF (FRAMES_DEF unless FRAMES_PT_STATIC makes them static).

   FRAMES_PT_STATIC      this header's functions static (frames.h's too if not yet included)
   FRAMES_PT_DEF         their linkage (default FRAMES_DEF)
   FRAMES_PT_MAX_STALL   instructions the decoder may follow without taking anything from
                         the trace before the segment is given up as a gap (default 2^24;
                         see "Decoding that takes no trace" in the implementation)

   ---------------------------------------------------------------------------------------
   API OVERVIEW

     frames_pt_x86_decode               instruction length / class / direct target
     frames_pt_parse_cpu                "f/m[/s]", "none" or perf's "GenuineIntel,6,142,10"
     frames_pt_options_default, frames_pt_open, frames_pt_close
     frames_pt_set_trace / _load_trace  the PT byte stream (borrowed / loaded)
     frames_pt_add_raw / _add_elf       code images (+ _add_kcore: kernel image)
     frames_pt_sb_config_default, frames_pt_add_pevent / _load_pevent   perf sideband
     frames_pt_set_callbacks            events, instructions, sideband records, errors
     frames_pt_decode                   run the decoder, write frames, fill stats
     frames_pt_printer_*                ptxed --no-inst compatible text output
     frames_perf_*                      perf.data: header, attrs, AUX streams, sideband
   ---------------------------------------------------------------------------------------
   SECTIONS (in file order; each starts with a banner of '=' or '-' lines,
   the title on the line below it: grep -n '^   TITLE' finds it)

   x86 instruction decoding (length, class, direct branch target)
   Perf sideband configuration (one per sideband source; ptxed's --pevent:* options)
   Decoder options, callbacks and statistics
   The decoder session
   ptxed-compatible printing (the output of `ptxed --no-inst`)
   perf.data
   IMPLEMENTATION
     Small helpers
     x86 instruction decoding
     Names, defaults, cpu strings
     Session state
     ELF PT_LOAD segments (ptxed --elf): own parser, little-endian 32/64-bit files
     Perf sideband: records
     Perf sideband: process contexts
     Perf sideband: applying records
     Session setup
     Writing frames
     Block path: the instructions of a block, decoded and encoded once per start
     Decoding
     Decoding: cycles that take no trace
     ptxed-compatible printing
     perf.data
*/
#ifndef FRAMES_PT_H_INCLUDED
#define FRAMES_PT_H_INCLUDED

#if defined(FRAMES_PT_STATIC) && !defined(FRAMES_STATIC) && !defined(FRAMES_H_INCLUDED)
#define FRAMES_STATIC   /* frames.h comes with it: one private copy of both */
#endif
#include "frames.h"
#if defined(FRAMES_PT_STATIC) && !defined(FRAMES_PT_DEF)   /* even after a shared frames.h */
#define FRAMES_PT_DEF FRAMES__STATIC_DEF
#elif !defined(FRAMES_PT_DEF)
#define FRAMES_PT_DEF FRAMES_DEF
#endif

#include <stdio.h>

#include <intel-pt.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ======================================================================================
   x86 instruction decoding (length, class, direct branch target)
   ====================================================================================== */

typedef struct frames_pt_x86 {
    uint8_t size;         /* length in bytes (1..15) */
    uint8_t iclass;       /* enum pt_insn_class, as libipt classifies it */
    uint8_t has_target;   /* direct branch: target is valid */
    uint8_t modrm_reg;    /* ModRM.reg (opcode extension), 0 without ModRM */
    uint64_t target;      /* ip + size + displacement */
} frames_pt_x86;

/* Decode the instruction at code[0..avail) in `mode` (ptem_16bit/32bit/64bit) at address
   ip, with the rules of libipt's own length decoder. Returns 0 or FRAMES_PT_E_BAD_INSN
   (incomplete or undecodable). Needs no allocation and no libipt call. */
FRAMES_PT_DEF int frames_pt_x86_decode(const void *code, size_t avail, enum pt_exec_mode mode,
                                    uint64_t ip, frames_pt_x86 *out);

/* "f/m[/s]" (decimal, ptxed --cpu), "none" (vendor unknown: no errata) or perf's
   HEADER_CPUID "GenuineIntel,6,142,10". Returns 0 or FRAMES_E_INVALID. */
FRAMES_PT_DEF int frames_pt_parse_cpu(const char *s, struct pt_cpu *cpu);

/* ======================================================================================
   Perf sideband configuration (one per sideband source; ptxed's --pevent:* options)
   ====================================================================================== */

/* perf_event_attr.sample_type bits that matter for the sample_id trailer */
#define FRAMES_PERF_SAMPLE_TID 0x2ull
#define FRAMES_PERF_SAMPLE_TIME 0x4ull
#define FRAMES_PERF_SAMPLE_ID 0x40ull
#define FRAMES_PERF_SAMPLE_CPU 0x80ull
#define FRAMES_PERF_SAMPLE_STREAM_ID 0x200ull
#define FRAMES_PERF_SAMPLE_IDENTIFIER 0x10000ull

/* A record's sample_type chosen by its PERF_SAMPLE_IDENTIFIER (several attrs). */
typedef struct frames_pt_sample_id {
    uint64_t id;
    uint64_t sample_type;
} frames_pt_sample_id;

typedef struct frames_pt_sb_config {
    uint64_t sample_type;       /* of the records' sample_id trailers (default 0) */
    uint64_t time_zero;         /* perf_event_mmap_page time conversion (default 0, 0, 1) */
    uint16_t time_shift;
    uint32_t time_mult;
    uint64_t tsc_offset;        /* apply records this many TSC ticks earlier */
    uint64_t kernel_start;      /* ip >= kernel_start is kernel (default UINT64_MAX) */
    const char *sysroot;        /* prepended verbatim to MMAP file names (copied) */
    const char *vdso_x64, *vdso_x32, *vdso_ia32;   /* files for [vdso] mappings (copied) */
    const frames_pt_sample_id *sample_ids;         /* optional, copied */
    size_t nsample_ids;
} frames_pt_sb_config;

FRAMES_PT_DEF void frames_pt_sb_config_default(frames_pt_sb_config *c);

/* perf time -> TSC: floor((time - time_zero) * 2^time_shift / time_mult), the formula of
   perf_event_mmap_page and libipt HEAD, computed without overflow: the same TSC whenever
   theirs is right, and UINT64_MAX when the TSC does not fit in 64 bits (theirs wraps for
   a time_shift over 32), so that it grows with time. Time 0 (records perf synthesised)
   and a missing conversion (time_mult 0, time_shift over 63) give TSC 0. */
FRAMES_PT_DEF uint64_t frames_pt_time_to_tsc(const frames_pt_sb_config *c, uint64_t time);

/* ======================================================================================
   Decoder options, callbacks and statistics
   ====================================================================================== */

#define FRAMES_PT_DECODER_BLOCK 0   /* libipt block decoder + cached length decoding */
#define FRAMES_PT_DECODER_INSN 1    /* libipt instruction-flow decoder */

/* What to write for speculatively executed (TSX) instructions. */
#define FRAMES_PT_SPEC_SKIP 0     /* none (ptxed marks them "?"; the default) */
#define FRAMES_PT_SPEC_COMMIT 1   /* those of committed transactions, at the commit */
#define FRAMES_PT_SPEC_ALL 2      /* all, as they are decoded */

/* options.flags */
#define FRAMES_PT_NO_EXCEPTION_FRAMES 1u  /* count interrupts/overflows/gaps only */
#define FRAMES_PT_NO_MODLOAD_FRAMES 2u    /* no modload frames */

/* exception_frame.exception_number values (vectors are unknown to PT) */
#define FRAMES_PT_EXC_INTERRUPT 0x100u  /* asynchronous branch (interrupt, fault, ...) */
#define FRAMES_PT_EXC_OVERFLOW 0x101u   /* trace lost inside the CPU (OVF packet) */
#define FRAMES_PT_EXC_GAP 0x102u        /* decode error: trace skipped to the next PSB */

typedef struct frames_pt_options {
    struct pt_cpu cpu;        /* vendor pcv_unknown (zero): decode by the spec, no errata */
    uint8_t mtc_freq;         /* IA32_RTIT_CTL.MTCFreq */
    uint8_t nom_freq;         /* MSR_PLATFORM_INFO[15:8] */
    uint32_t cpuid_0x15_eax, cpuid_0x15_ebx;   /* TSC:CTC ratio */
    struct pt_conf_addr_filter addr_filter;    /* needed for erratum SKL014 */
    int decoder;              /* FRAMES_PT_DECODER_* */
    int tick_events;          /* request ptev_tick (finer sideband placement) */
    int end_on_call, end_on_jump;   /* ignored: both are always set (see the decoder) */
    uint64_t iscache_limit;   /* bytes of mapped sections kept (0: libipt default) */
    uint64_t default_tid;     /* thread_id when the sideband does not tell (default 0) */
    int speculative;          /* FRAMES_PT_SPEC_* */
    unsigned flags;           /* FRAMES_PT_NO_* */
    uint64_t progress_every;  /* call the progress callback every N instructions (1M) */
    void *alloc_ctx;
} frames_pt_options;

FRAMES_PT_DEF void frames_pt_options_default(frames_pt_options *o);

/* An instruction as the callbacks see it. */
typedef struct frames_pt_insn {
    uint64_t ip;
    uint64_t offset;        /* trace offset of the packet that led to it (ptxed --offset) */
    uint64_t tsc;           /* last event time (ptxed --time) */
    const uint8_t *raw;
    uint8_t size;
    uint8_t mode;           /* enum pt_exec_mode */
    uint8_t speculative;
    uint8_t written;        /* it was written as a std_frame */
} frames_pt_insn;

/* Sample fields of a perf record (present iff the bit is in `samples`). */
typedef struct frames_pt_sb_record {
    const char *source;     /* sideband source name (file name) */
    uint64_t offset;        /* offset of the record in the source */
    int primary;
    uint32_t type;          /* PERF_RECORD_* */
    uint16_t misc, size;
    uint64_t tsc;           /* converted sample time (0 without one) */
    uint64_t samples;       /* FRAMES_PERF_SAMPLE_* present in the trailer */
    uint32_t s_pid, s_tid, s_cpu;
    uint64_t s_time, s_id, s_stream_id, s_identifier;
    /* body, by type: MMAP/MMAP2 pid tid addr len pgoff (+maj min ino ino_gen prot flags)
       name; COMM pid tid name; FORK/EXIT pid ppid tid ptid time; ITRACE_START pid tid;
       LOST id lost; AUX aux_offset aux_size flags; SWITCH_CPU_WIDE pid tid (next/prev);
       THROTTLE time id stream_id; LOST_SAMPLES lost */
    uint32_t pid, tid, ppid, ptid, maj, min, prot, mflags;
    uint64_t addr, len, pgoff, ino, ino_generation, time, id, lost, aux_offset, aux_size,
        aux_flags, stream_id;
    const char *name;       /* MMAP file name / COMM comm (NUL-terminated in the source) */
} frames_pt_sb_record;

/* Sideband diagnostics (frames_pt_callbacks.sb_diag code > 0; < 0 is -pt_error_code) */
#define FRAMES_PT_SB_LOST 1           /* "sideband lost" (PERF_RECORD_LOST) */
#define FRAMES_PT_SB_TRACE_LOST 2     /* "trace lost" (AUX record flagged truncated) */
#define FRAMES_PT_SB_SECTION_LOST 3   /* "image section lost" (anon, deleted, [...]) */
#define FRAMES_PT_SB_TRUNCATED 4      /* "truncated record" (source ends inside one) */
FRAMES_PT_DEF const char *frames_pt_sb_strerror(int code);

/* Callbacks: all optional; return 0 to continue, nonzero to stop decoding (the decode
   call then returns FRAMES_E_STOPPED with the callback's code in the message). */
typedef struct frames_pt_callbacks {
    void *ctx;
    /* every decoder event, status updates included (ev->status_update) */
    int (*event)(void *ctx, const struct pt_event *ev, uint64_t offset);
    /* every decoded instruction (slower: the block path calls it per instruction) */
    int (*insn)(void *ctx, const frames_pt_insn *in);
    /* "error" / "sync error" / "config error": trace offset, ip, -pt_error_code */
    int (*error)(void *ctx, const char *kind, uint64_t offset, uint64_t ip, int code);
    /* the trace ended in the middle of the flow (ptxed "[end of trace]") */
    int (*end_of_trace)(void *ctx);
    /* a sideband record about to be applied */
    int (*sb_record)(void *ctx, const frames_pt_sb_record *rec);
    /* a sideband warning (code > 0) or error (code < 0) at source:offset */
    int (*sb_diag)(void *ctx, int code, const char *source, uint64_t offset);
    /* the decoder switched to the image of another process */
    int (*context)(void *ctx, const char *image_name, uint32_t pid, uint32_t tid);
    /* progress: trace bytes consumed of total */
    void (*progress)(void *ctx, uint64_t done, uint64_t total);
} frames_pt_callbacks;

#define FRAMES_PT_MAX_GAPS 32

typedef struct frames_pt_gap {
    uint64_t offset;     /* trace offset where decoding failed */
    uint64_t ip;         /* ip at the failure (0 if unknown) */
    int code;            /* -pt_error_code */
} frames_pt_gap;

typedef struct frames_pt_stats {
    uint64_t insns;             /* instructions decoded (ptxed --stat insn count, but for a
                                   block's last one libipt counted undecoded: docs/pt.md) */
    uint64_t blocks;            /* blocks (block decoder) */
    uint64_t std_frames, exception_frames, modload_frames;
    uint64_t speculative;       /* speculative instructions decoded */
    uint64_t speculative_unwritten;   /* ... not written (skip / aborted / unresolved) */
    uint64_t events[32];        /* per pt_event_type (status updates excluded) */
    uint64_t events_other;      /* event types >= 32 (newer libipt) */
    uint64_t status_updates;
    uint64_t events_unwritten;  /* events that became no frame (counted above) */
    uint64_t gaps;              /* decode errors followed by a resync */
    uint64_t sync_errors;       /* failed synchronisations */
    frames_pt_gap gap[FRAMES_PT_MAX_GAPS];   /* the first gaps (ngaps_recorded of them) */
    uint32_t ngaps_recorded;
    uint64_t end_of_trace;      /* trace ended mid-flow */
    uint64_t sb_records, sb_warnings, sb_errors, context_switches;
    uint64_t reconstruct_errors;   /* block path: length decoding disagreed with libipt */
    uint64_t trace_bytes;
    int config_error;           /* pt_cpu_errata failed with this code (0: none) */
} frames_pt_stats;

/* ======================================================================================
   The decoder session
   ====================================================================================== */

typedef struct frames_pt frames_pt;

FRAMES_PT_DEF int frames_pt_open(frames_pt **pt, const frames_pt_options *o, frames_error *err);
FRAMES_PT_DEF void frames_pt_close(frames_pt *pt);

/* The PT stream: borrowed (must outlive decoding) or loaded from a file (offset, size;
   size 0 = to the end). */
FRAMES_PT_DEF int frames_pt_set_trace(frames_pt *pt, const void *data, size_t size,
                                   frames_error *err);
FRAMES_PT_DEF int frames_pt_load_trace(frames_pt *pt, const char *path, uint64_t offset,
                                    uint64_t size, frames_error *err);

/* Code images, in the decoder's default image (ptxed --raw FILE[:FROM[-TO]]:ADDR and
   --elf FILE[:BASE]). size 0 = to the end of the file. ELF: every PT_LOAD segment with
   file bytes; with has_base, shifted so that the lowest segment starts at base. A later
   image takes precedence where it overlaps an earlier one. */
FRAMES_PT_DEF int frames_pt_add_raw(frames_pt *pt, const char *path, uint64_t offset,
                                 uint64_t size, uint64_t vaddr, frames_error *err);
FRAMES_PT_DEF int frames_pt_add_elf(frames_pt *pt, const char *path, uint64_t base,
                                 int has_base, frames_error *err);
/* ELF segments into the kernel image that every sideband process starts with
   (ptxed --pevent:kcore; a copy of /proc/kcore for ring-0 traces). */
FRAMES_PT_DEF int frames_pt_add_kcore(frames_pt *pt, const char *path, uint64_t base,
                                   int has_base, frames_error *err);

/* A perf_event sideband stream (raw records, no perf.data header). primary: sideband of
   the traced cpu (may switch the decoder's image); secondary: other cpus (only update
   process images). add: borrowed unless copy; load: offset, size (0 = to the end). */
FRAMES_PT_DEF int frames_pt_add_pevent(frames_pt *pt, const frames_pt_sb_config *c,
                                    const char *name, const void *data, size_t size,
                                    int primary, int copy, frames_error *err);
FRAMES_PT_DEF int frames_pt_load_pevent(frames_pt *pt, const frames_pt_sb_config *c,
                                     const char *path, uint64_t offset, uint64_t size,
                                     int primary, frames_error *err);

FRAMES_PT_DEF void frames_pt_set_callbacks(frames_pt *pt, const frames_pt_callbacks *cb);

/* Decode the whole trace, writing frames to w (NULL: decode and count only). Returns
   FRAMES_OK when the trace was decoded to its end (decode errors are gaps, reported in
   the stats, not failures), or a negative code when writing failed, a callback stopped
   it, or the setup is unusable (no trace). May be called once per session. */
FRAMES_PT_DEF int frames_pt_decode(frames_pt *pt, frames_writer *w, frames_pt_stats *st,
                                frames_error *err);

/* Readable name of a pt_event_type ("enabled", "async_branch", ...). */
FRAMES_PT_DEF const char *frames_pt_event_name(int type);

/* ======================================================================================
   ptxed-compatible printing (the output of `ptxed --no-inst`)
   ====================================================================================== */
#define FRAMES_PT_PRINT_QUIET 0x0001u      /* --quiet: no instructions, events, end */
#define FRAMES_PT_PRINT_EVENT_IP 0x0002u   /* --event:ip */
#define FRAMES_PT_PRINT_EVENT_TIME 0x0004u /* --event:time */
#define FRAMES_PT_PRINT_OFFSET 0x0008u     /* --offset */
#define FRAMES_PT_PRINT_TIME 0x0010u       /* --time */
#define FRAMES_PT_PRINT_RAW 0x0020u        /* --raw-insn: bytes after the address */
#define FRAMES_PT_PRINT_SB_COMPACT 0x0100u /* --sb:compact */
#define FRAMES_PT_PRINT_SB_VERBOSE 0x0200u /* --sb:verbose */
#define FRAMES_PT_PRINT_SB_FILENAME 0x0400u/* --sb:filename */
#define FRAMES_PT_PRINT_SB_OFFSET 0x0800u  /* --sb:offset */
#define FRAMES_PT_PRINT_SB_TIME 0x1000u    /* --sb:time */
#define FRAMES_PT_PRINT_SB_SWITCH 0x2000u  /* --sb:switch */
#define FRAMES_PT_PRINT_SB_WARN 0x4000u    /* --sb:warn */

typedef struct frames_pt_printer {
    FILE *out;
    unsigned flags;
    int failed;   /* an output error occurred */
} frames_pt_printer;

FRAMES_PT_DEF void frames_pt_printer_init(frames_pt_printer *p, FILE *out, unsigned flags);
FRAMES_PT_DEF frames_pt_callbacks frames_pt_printer_callbacks(frames_pt_printer *p);
/* One event as ptxed prints it, without brackets and newline (e.g. "disabled"). */
FRAMES_PT_DEF int frames_pt_format_event(char *buf, size_t n, const struct pt_event *ev,
                                      unsigned flags);
/* A sideband record as ptxed --sb:compact (or --sb:verbose) prints it. */
FRAMES_PT_DEF int frames_pt_format_sb_record(char *buf, size_t n, const frames_pt_sb_record *r,
                                          unsigned flags);

/* ======================================================================================
   perf.data
   ====================================================================================== */

typedef struct frames_perf frames_perf;

/* One PT stream: the AUXTRACE payloads of one mmap (per-cpu: one cpu) concatenated, or
   one snapshot piece. */
typedef struct frames_perf_stream {
    uint32_t idx;         /* AUXTRACE idx */
    int32_t cpu;          /* -1: per-thread recording */
    uint32_t tid;         /* AUXTRACE tid (per-thread) */
    uint64_t size;        /* PT bytes */
    uint32_t pieces;      /* AUXTRACE records joined */
} frames_perf_stream;

typedef struct frames_perf_info {
    int pipe_mode;
    uint64_t nattrs;
    uint32_t pt_pmu_type;       /* attr.type of intel_pt (AUXTRACE_INFO priv[0]) */
    uint64_t pt_config;         /* attr.config of the intel_pt event */
    uint64_t sample_type;       /* of the intel_pt event */
    int sample_id_all, context_switch, exclude_kernel, exclude_user;
    int have_time_conv;
    uint16_t time_shift;
    uint32_t time_mult;
    uint64_t time_zero;
    int snapshot_mode, per_cpu_mmaps, have_sched_switch;
    uint8_t mtc_freq, nom_freq;
    uint32_t tsc_ctc_n, tsc_ctc_d;    /* cpuid 0x15 ebx / eax */
    char cpuid[96];             /* HEADER_CPUID ("GenuineIntel,6,142,10"), or "" */
    uint64_t sideband_records;  /* kernel records in the data section */
    uint64_t skipped_records;   /* records of other kinds skipped */
    int compressed;             /* PERF_RECORD_COMPRESSED seen (unsupported) */
    /* A file perf record did not finish (killed, disk full) or a copy cut short: what is
       complete is kept, and these say what was missing. */
    int unterminated;           /* the header's data size is 0: read to the end of the file */
    uint64_t cut_offset;        /* the record the end of the file cuts (0: none) */
    uint64_t cut_missing;       /* bytes that record lacks; its PT bytes before the cut are kept */
} frames_perf_info;

FRAMES_PT_DEF int frames_perf_open_memory(frames_perf **pd, const void *data, size_t size,
                                       void *alloc_ctx, frames_error *err);
FRAMES_PT_DEF int frames_perf_open_path(frames_perf **pd, const char *path, void *alloc_ctx,
                                     frames_error *err);
FRAMES_PT_DEF void frames_perf_close(frames_perf *pd);
FRAMES_PT_DEF const frames_perf_info *frames_perf_info_get(const frames_perf *pd);
FRAMES_PT_DEF size_t frames_perf_nstreams(const frames_perf *pd);
FRAMES_PT_DEF const frames_perf_stream *frames_perf_stream_at(const frames_perf *pd, size_t i);
/* cpu, MTC/nominal frequencies and TSC:CTC ratio from the file into o. */
FRAMES_PT_DEF void frames_perf_pt_options(const frames_perf *pd, frames_pt_options *o);
/* The sideband configuration of the file's records (sample types, time conversion,
   kernel start guess); sysroot/vdso taken from base when given. */
FRAMES_PT_DEF void frames_perf_sb_config(const frames_perf *pd, frames_pt_sb_config *c,
                                      const frames_pt_sb_config *base);
/* Give stream i's PT bytes to pt and its sideband: the stream's cpu as primary, every
   other cpu as secondary (per-thread files: the one sideband stream as primary). The
   data stays owned by pd, which must outlive the decoding. */
FRAMES_PT_DEF int frames_perf_attach(const frames_perf *pd, size_t i, frames_pt *pt,
                                  const frames_pt_sb_config *base, frames_error *err);
/* Sideband records of one cpu (-1: records without a cpu sample) as a raw record stream,
   sorted by time; empty when there are none. */
FRAMES_PT_DEF frames_bytes frames_perf_sideband(const frames_perf *pd, int32_t cpu);

#ifdef __cplusplus
}
#endif
#endif /* FRAMES_PT_H_INCLUDED */

/* ======================================================================================
   IMPLEMENTATION
   ====================================================================================== */
#if defined(FRAMES_PT_IMPLEMENTATION) || defined(FRAMES_ALL_IMPLEMENTATION)
#ifndef FRAMES_PT_IMPLEMENTATION_INCLUDED
#define FRAMES_PT_IMPLEMENTATION_INCLUDED

#ifdef FRAMES_NO_STDIO
#error "frames_pt.h reads trace, image and sideband files with the C library's stdio"
#endif
#define FRAMES__WANT_HELPERS
#include "frames.h"
#include <errno.h>
#include <limits.h>
#ifndef FRAMES_NO_POSIX
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* --------------------------------------------------------------------------------------
   Small helpers
   -------------------------------------------------------------------------------------- */

/* PT's messages say where themselves (trace offsets are in the text), and most have no
   frame index: the position is left to the caller's message. */
static int frames__pt_fail(frames_error *err, int code, const char *fmt, ...) FRAMES__PRINTF(3, 4);
static int frames__pt_fail(frames_error *err, int code, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    frames__vfail(err, code, FRAMES_NO_POS, FRAMES_NO_POS, FRAMES__FAIL_POS, fmt, ap);
    va_end(ap);
    return code;
}

static const char *frames__pt_errstr(int code) {
    return pt_errstr(pt_errcode(code));
}

/* A file for reading and its size: only a regular file, opened without blocking (image
   names come from perf sideband, made by whoever recorded it: a FIFO or a device there
   must not hang the decoder; libipt and fseek need a regular file anyway). NULL with the
   error set otherwise. */
static FILE *frames__pt_fopen(const char *path, uint64_t *fsize, frames_error *err) {
#ifndef FRAMES_NO_POSIX
    int rc;
    FILE *f = frames__fopen_untrusted(path, UINT64_MAX, fsize, &rc);
    if (!f) frames__pt_fail(err, FRAMES_E_IO, "cannot open %s: %s", path, frames__untrusted_why(rc));
    return f;
#else
    FILE *f = fopen(path, "rb");
    long n;
    if (!f) {
        frames__pt_fail(err, FRAMES_E_IO, "cannot open %s: %s", path, frames__syserr());
        return NULL;
    }
    if (fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
        fclose(f);
        frames__pt_fail(err, FRAMES_E_IO, "cannot determine the size of %s", path);
        return NULL;
    }
    *fsize = (uint64_t)n;
    return f;
#endif
}

/* Read [offset, offset+size) of a file (size 0: to the end) into a new buffer. The size
   is bounded by the file's own size, never by a number read from input. */
static int frames__pt_read_file(const char *path, uint64_t offset, uint64_t size,
                                void *actx, uint8_t **out, size_t *outlen, frames_error *err) {
    uint64_t fsize = 0;
    FILE *f = frames__pt_fopen(path, &fsize, err);
    uint8_t *buf;
    size_t n;
    *out = NULL;
    *outlen = 0;
    if (!f) return FRAMES_E_IO;
    if (offset > fsize || (offset == fsize && fsize > 0) || fsize > (uint64_t)LONG_MAX) {
        fclose(f);
        return frames__pt_fail(err, FRAMES_E_INVALID, "bad offset 0x%llx into %s (size 0x%llx)",
                               (unsigned long long)offset, path, (unsigned long long)fsize);
    }
    if (size == 0) size = fsize - offset;
    if (size > fsize - offset) {
        fclose(f);
        return frames__pt_fail(err, FRAMES_E_INVALID, "bad range 0x%llx-0x%llx in %s (size 0x%llx)",
                               (unsigned long long)offset, (unsigned long long)(offset + size),
                               path, (unsigned long long)fsize);
    }
    if ((uint64_t)(size_t)size != size) {
        fclose(f);
        return frames__pt_fail(err, FRAMES_E_NOMEM, "%s is too large", path);
    }
    buf = (uint8_t *)FRAMES_MALLOC(size ? (size_t)size : 1, actx);
    if (!buf) {
        fclose(f);
        return frames__pt_fail(err, FRAMES_E_NOMEM, "out of memory loading %s", path);
    }
    if (fseek(f, (long)offset, SEEK_SET) != 0 ||
        (n = fread(buf, 1, (size_t)size, f)) != (size_t)size) {
        fclose(f);
        FRAMES_FREE(buf, actx);
        return frames__pt_fail(err, FRAMES_E_IO, "cannot read %s", path);
    }
    fclose(f);
    *out = buf;
    *outlen = (size_t)size;
    return FRAMES_OK;
}

/* --------------------------------------------------------------------------------------
   x86 instruction decoding

   The same rules as libipt's instruction length decoder (prefixes, REX, VEX/EVEX, the
   four legacy opcode maps, ModRM/SIB/displacement, immediates by effective operand and
   address size), so that the block path finds the same instruction boundaries libipt
   found. The tables are written from the Intel SDM opcode maps; where libipt 2.0 reads an
   encoding differently (UD0/UD1 without ModRM, 0F 39 and 0F 3B-3F like 0F 38, VEX/EVEX
   opcodes under the legacy maps' rules), its reading wins: every opcode of every map was
   compared with libipt's decoder (tests/test_fuzz_regress.c).
   -------------------------------------------------------------------------------------- */

/* ModRM presence, one row per high opcode nibble, bit n = low nibble n. */
static const uint16_t frames__pt_modrm_map0[16] = {
    0x0F0F, 0x0F0F, 0x0F0F, 0x0F0F, 0x0000, 0x0000, 0x0A0C, 0x0000,
    0xFFFF, 0x0000, 0x0000, 0x0000, 0x00F3, 0xFF0F, 0x0000, 0xC0C0};
static const uint16_t frames__pt_modrm_map1[16] = {
    0xA00F, 0xFFFF, 0xFF0F, 0x0000, 0xFFFF, 0xFFFF, 0xFFFF, 0xFF7F,
    0x0000, 0xFFFF, 0xF838, 0xFDFF, 0x00FF, 0xFFFF, 0xFFFF, 0x7FFF};   /* 0F B9, 0F FF: none */

static int frames__pt_bit(const uint16_t *rows, unsigned op) {
    return (rows[op >> 4] >> (op & 15)) & 1;
}

/* Iz: 16 bits with a 16-bit operand size, else 32 */
static unsigned frames__pt_z(unsigned osz) { return osz == 16 ? 2u : 4u; }

typedef struct frames__pt_ild {
    unsigned osz_pfx, asz_pfx, last_f2f3, rex_w, vex, map, op, has_modrm, ignore_mod;
    unsigned modrm, reg, osz, asz, imm, disp, brdisp;
} frames__pt_ild;

/* Immediate and branch displacement of the legacy one-byte map. */
static void frames__pt_imm_map0(frames__pt_ild *d, int mode64) {
    unsigned op = d->op;
    switch (op) {
    case 0x04: case 0x0C: case 0x14: case 0x1C: case 0x24: case 0x2C: case 0x34: case 0x3C:
    case 0x6A: case 0x6B: case 0x80: case 0x82: case 0x83: case 0xA8: case 0xC0: case 0xC1:
    case 0xC6: case 0xCD: case 0xD4: case 0xD5: case 0xE4: case 0xE5: case 0xE6: case 0xE7:
        d->imm = 1;
        break;
    case 0x05: case 0x0D: case 0x15: case 0x1D: case 0x25: case 0x2D: case 0x35: case 0x3D:
    case 0x68: case 0x69: case 0x81: case 0xA9:
        d->imm = frames__pt_z(d->osz);
        break;
    case 0xC2: case 0xCA: d->imm = 2; break;                 /* ret/retf imm16 */
    case 0xC8: d->imm = 3; break;                            /* enter imm16, imm8 */
    case 0xA0: case 0xA1: case 0xA2: case 0xA3: d->disp = d->asz / 8; break;  /* moffs */
    case 0x9A: case 0xEA: d->imm = 2 + frames__pt_z(d->osz); break;          /* ptr16:z */
    case 0xC7:
        if (d->reg == 0) d->imm = frames__pt_z(d->osz);      /* mov Ev, Iz */
        else if (d->reg == 7 && !d->disp) d->brdisp = frames__pt_z(d->osz); /* xbegin (libipt:
                                           not with a ModRM displacement, the same slot) */
        break;
    case 0xF6: if (d->reg < 2) d->imm = 1; break;            /* test Eb, Ib */
    case 0xF7: if (d->reg < 2) d->imm = frames__pt_z(d->osz); break;
    case 0xE8: case 0xE9: d->brdisp = mode64 ? 4 : frames__pt_z(d->osz); break;
    case 0xE0: case 0xE1: case 0xE2: case 0xE3: case 0xEB: d->brdisp = 1; break;
    default:
        if (op >= 0x70 && op <= 0x7F) d->brdisp = 1;
        else if (op >= 0xB0 && op <= 0xB7) d->imm = 1;
        else if (op >= 0xB8 && op <= 0xBF) d->imm = d->osz / 8;   /* mov r, Iv */
        break;
    }
}

/* Immediate and branch displacement of the 0F map. */
static void frames__pt_imm_map1(frames__pt_ild *d, int mode64) {
    unsigned op = d->op;
    if (op == 0x0F || (op >= 0x70 && op <= 0x73) || op == 0xA4 || op == 0xAC || op == 0xBA ||
        op == 0xC2 || (op >= 0xC4 && op <= 0xC6))
        d->imm = 1;
    else if (op == 0x78 && !d->vex && (d->osz_pfx || d->last_f2f3 == 2))
        d->imm = 2;                                          /* extrq/insertq ib, ib */
    else if (op >= 0x80 && op <= 0x8F)
        d->brdisp = mode64 ? 4 : frames__pt_z(d->osz);
}

static void frames__pt_classify(const frames__pt_ild *d, int mode64, unsigned f3,
                                frames_pt_x86 *out) {
    unsigned op = d->op;
    out->iclass = ptic_other;
    if (d->vex || d->map > 1) return;
    if (d->map == 0) {
        if ((op >= 0x70 && op <= 0x7F) || (op >= 0xE0 && op <= 0xE3)) out->iclass = ptic_cond_jump;
        else if (op == 0xE8) out->iclass = ptic_call;
        else if (op == 0xE9 || op == 0xEB) out->iclass = ptic_jump;
        else if (op == 0x9A && !mode64) out->iclass = ptic_far_call;
        else if (op == 0xEA && !mode64) out->iclass = ptic_far_jump;
        else if (op == 0xCC || op == 0xCD || op == 0xF1 || (op == 0xCE && !mode64))
            out->iclass = ptic_far_call;
        else if (op == 0xCF || op == 0xCB || op == 0xCA) out->iclass = ptic_far_return;
        else if (op == 0xC3 || op == 0xC2) out->iclass = ptic_return;
        else if (op == 0xFF) {
            if (d->reg == 2) out->iclass = ptic_call;
            else if (d->reg == 3) out->iclass = ptic_far_call;
            else if (d->reg == 4) out->iclass = ptic_jump;
            else if (d->reg == 5) out->iclass = ptic_far_jump;
        }
    } else {
        if (op >= 0x80 && op <= 0x8F) out->iclass = ptic_cond_jump;
        else if (op == 0x05 || op == 0x34) out->iclass = ptic_far_call;  /* syscall, sysenter */
        else if (op == 0x07 || op == 0x35) out->iclass = ptic_far_return; /* sysret, sysexit */
        else if (op == 0x01 && d->modrm == 0xC1) out->iclass = ptic_far_call;  /* vmcall */
        else if (op == 0x01 && (d->modrm == 0xC2 || d->modrm == 0xC3))
            out->iclass = ptic_far_return;                                   /* vmlaunch/resume */
        else if (op == 0xAE && f3 && !d->osz_pfx && d->reg == 4) out->iclass = ptic_ptwrite;
    }
}

FRAMES_PT_DEF int frames_pt_x86_decode(const void *codev, size_t avail, enum pt_exec_mode mode,
                                    uint64_t ip, frames_pt_x86 *out) {
    const uint8_t *code = (const uint8_t *)codev;
    size_t max = avail < 15 ? avail : 15, n = 0;
    unsigned rex = 0, f3 = 0;
    int mode64 = mode == ptem_64bit;
    frames__pt_ild d;
    memset(out, 0, sizeof *out);
    memset(&d, 0, sizeof d);
    if (mode != ptem_16bit && mode != ptem_32bit && mode != ptem_64bit) return FRAMES_PT_E_BAD_INSN;
    /* legacy prefixes; a REX prefix counts only when no other prefix follows it */
    for (;; n++) {
        uint8_t b;
        if (n >= max) return FRAMES_PT_E_BAD_INSN;
        b = code[n];
        if (b == 0x66) d.osz_pfx = 1, rex = 0;
        else if (b == 0x67) d.asz_pfx = 1, rex = 0;
        else if (b == 0xF2) d.last_f2f3 = 2, rex = 0;
        else if (b == 0xF3) d.last_f2f3 = 3, f3 = 1, rex = 0;
        else if (b == 0xF0 || b == 0x26 || b == 0x2E || b == 0x36 || b == 0x3E || b == 0x64 ||
                 b == 0x65)
            rex = 0;
        else if (mode64 && (b & 0xF0) == 0x40) rex = b;
        else break;
    }
    d.op = code[n];
    /* VEX (C4, C5) and EVEX (62); outside 64-bit mode only when the next byte has
       ModRM.mod = 3 (otherwise they are LES, LDS, BOUND) */
    if ((d.op == 0xC4 || d.op == 0xC5 || d.op == 0x62) && n + 1 < max &&
        (mode64 || (code[n + 1] & 0xC0) == 0xC0)) {
        unsigned len = d.op == 0xC5 ? 2 : d.op == 0xC4 ? 3 : 4;
        if (n + len >= max) return FRAMES_PT_E_BAD_INSN;
        if (d.op == 0xC5) {
            d.map = 1;
        } else {   /* libipt reads EVEX.mm as 2 bits (maps 5 and 6 are 1 and 2) */
            d.map = code[n + 1] & (d.op == 0xC4 ? 0x1F : 0x03);
            d.rex_w = code[n + 2] >> 7;
        }
        d.vex = d.op == 0x62 ? 2 : 1;   /* pp (an implied 66/F2/F3) sizes nothing in libipt */
        n += len;
        d.op = code[n++];
        if (d.map > 4) return FRAMES_PT_E_BAD_INSN;
        /* libipt applies the legacy maps' ModRM, displacement and immediate rules to the
           VEX/EVEX opcodes of maps 0 and 1 (vzeroupper: none); 0F 0F is no escape here;
           maps 2-4 (4: AMD's 0F 0F) always have ModRM, 3 and 4 an imm8 */
        d.has_modrm = d.map == 0 ? (unsigned)frames__pt_bit(frames__pt_modrm_map0, d.op)
                    : d.map == 1 ? (unsigned)(d.op != 0x0F && frames__pt_bit(frames__pt_modrm_map1, d.op))
                    : 1;
        d.ignore_mod = d.map == 1 && d.op >= 0x20 && d.op <= 0x23;
        d.imm = d.map >= 3;
    } else {
        d.rex_w = (rex >> 3) & 1;
        n++;
        if (d.op != 0x0F) {
            d.map = 0;
            d.has_modrm = (unsigned)frames__pt_bit(frames__pt_modrm_map0, d.op);
        } else {
            if (n >= max) return FRAMES_PT_E_BAD_INSN;
            d.op = code[n++];
            if ((d.op & 0xF8) == 0x38) {   /* 0F 38 and 0F 3A; libipt reads 0F 39, 0F 3B-3F
                                               like 0F 38 */
                d.map = d.op == 0x3A ? 3 : 2;
                if (n >= max) return FRAMES_PT_E_BAD_INSN;
                d.op = code[n++];
                d.has_modrm = 1;
                d.imm = d.map == 3;
            } else {
                d.map = 1;
                d.has_modrm = (unsigned)frames__pt_bit(frames__pt_modrm_map1, d.op);
                d.ignore_mod = d.op >= 0x20 && d.op <= 0x23;   /* mov cr/dr: register form */
            }
        }
    }
    if (mode64) {
        d.osz = d.rex_w ? 64 : d.osz_pfx ? 16 : 32;
        d.asz = d.asz_pfx ? 32 : 64;
    } else if (mode == ptem_32bit) {
        d.osz = d.osz_pfx ? 16 : 32;
        d.asz = d.asz_pfx ? 16 : 32;
    } else {
        d.osz = d.osz_pfx ? 32 : 16;
        d.asz = d.asz_pfx ? 32 : 16;
    }
    if (d.has_modrm) {
        unsigned mod, rm;
        if (n >= max) return FRAMES_PT_E_BAD_INSN;
        d.modrm = code[n++];
        mod = d.modrm >> 6, rm = d.modrm & 7, d.reg = (d.modrm >> 3) & 7;
        if (!d.ignore_mod && mod != 3) {
            if (d.asz == 16) {
                d.disp = mod == 1 ? 1 : mod == 2 ? 2 : rm == 6 ? 2 : 0;
            } else {
                if (rm == 4) {   /* SIB; base 5 with mod 0 means disp32 */
                    if (n >= max) return FRAMES_PT_E_BAD_INSN;
                    if ((code[n++] & 7) == 5 && mod == 0) d.disp = 4;
                }
                if (mod == 1) d.disp = 1;
                else if (mod == 2) d.disp = 4;
                else if (rm == 5) d.disp = 4;
            }
        }
    }
    if (d.map == 0) frames__pt_imm_map0(&d, mode64);
    else if (d.map == 1 && !(d.vex && d.op == 0x0F)) frames__pt_imm_map1(&d, mode64);
    {
        size_t at = n + d.disp;   /* a branch displacement follows any memory displacement */
        n += d.disp + d.brdisp + d.imm;
        if (n > max) return FRAMES_PT_E_BAD_INSN;
        out->size = (uint8_t)n;
        out->modrm_reg = (uint8_t)d.reg;
        frames__pt_classify(&d, mode64, f3, out);
        if (d.brdisp && (out->iclass == ptic_cond_jump || out->iclass == ptic_call ||
                         out->iclass == ptic_jump)) {   /* not xbegin's abort target */
            int64_t disp = d.brdisp == 1 ? (int8_t)code[at]
                         : d.brdisp == 2 ? (int16_t)frames__le16(code + at)
                                         : (int32_t)frames__le32(code + at);
            out->has_target = 1;
            out->target = ip + n + (uint64_t)disp;
        }
    }
    return 0;
}

/* --------------------------------------------------------------------------------------
   Names, defaults, cpu strings
   -------------------------------------------------------------------------------------- */

FRAMES_PT_DEF const char *frames_pt_event_name(int type) {
    static const char *const names[] = {
        "enabled", "disabled", "async_disabled", "async_branch", "paging", "async_paging",
        "overflow", "exec_mode", "tsx", "stop", "vmcs", "async_vmcs", "exstop", "mwait",
        "pwre", "pwrx", "ptwrite", "tick", "cbr", "mnt"};
    if (type >= 0 && (size_t)type < sizeof names / sizeof names[0]) return names[type];
    return "other";
}

FRAMES_PT_DEF const char *frames_pt_sb_strerror(int code) {
    switch (code) {
    case FRAMES_PT_SB_LOST: return "sideband lost";
    case FRAMES_PT_SB_TRACE_LOST: return "trace lost";
    case FRAMES_PT_SB_SECTION_LOST: return "image section lost";
    case FRAMES_PT_SB_TRUNCATED: return "truncated record";
    default: return code < 0 ? frames__pt_errstr(code) : "unknown sideband problem";
    }
}

static int frames__pt_parse_uint(const char **s, unsigned long *out, unsigned long max) {
    const char *p = *s;
    unsigned long v = 0;
    if (*p < '0' || *p > '9') return -1;
    while (*p >= '0' && *p <= '9') {
        v = v * 10 + (unsigned long)(*p - '0');
        if (v > max) return -1;
        p++;
    }
    *s = p;
    *out = v;
    return 0;
}

FRAMES_PT_DEF int frames_pt_parse_cpu(const char *s, struct pt_cpu *cpu) {
    unsigned long f, m, st = 0;
    const char *p = s;
    char sep = '/';
    memset(cpu, 0, sizeof *cpu);
    if (!s) return FRAMES_E_INVALID;
    if (!strcmp(s, "none")) return 0;
    if (!strncmp(s, "GenuineIntel,", 13)) {   /* perf HEADER_CPUID */
        p = s + 13;
        sep = ',';
    } else if (strchr(s, ',')) {
        return FRAMES_E_INVALID;                   /* another vendor: libipt knows no errata */
    }
    if (frames__pt_parse_uint(&p, &f, 0xffff) < 0 || *p++ != sep ||
        frames__pt_parse_uint(&p, &m, 0xff) < 0)
        return FRAMES_E_INVALID;
    if (*p == sep) {
        p++;
        if (frames__pt_parse_uint(&p, &st, 0xff) < 0) return FRAMES_E_INVALID;
    }
    if (*p && !(sep == ',' && *p == ','))   /* perf may append more fields */
        return FRAMES_E_INVALID;
    cpu->vendor = pcv_intel;
    cpu->family = (uint16_t)f;
    cpu->model = (uint8_t)m;
    cpu->stepping = (uint8_t)st;
    return 0;
}

FRAMES_PT_DEF void frames_pt_options_default(frames_pt_options *o) {
    memset(o, 0, sizeof *o);
    o->decoder = FRAMES_PT_DECODER_BLOCK;
    o->speculative = FRAMES_PT_SPEC_SKIP;
    o->progress_every = 1u << 20;
}

FRAMES_PT_DEF void frames_pt_sb_config_default(frames_pt_sb_config *c) {
    memset(c, 0, sizeof *c);
    c->time_mult = 1;
    c->kernel_start = UINT64_MAX;
}

FRAMES_PT_DEF uint64_t frames_pt_time_to_tsc(const frames_pt_sb_config *c, uint64_t time) {
    uint64_t t, quot, rem, frac = 0;
    unsigned s, k;
    if (!time || !c->time_mult || c->time_shift > 63) return 0;   /* no valid conversion */
    t = time - c->time_zero;
    quot = t / c->time_mult;
    rem = t % c->time_mult;
    if (quot > UINT64_MAX >> c->time_shift) return UINT64_MAX;
    /* (rem << shift) / mult, 32 bits of shift at a time: rem < mult < 2^32 */
    for (s = c->time_shift; s; s -= k) {
        k = s > 32 ? 32 : s;
        rem <<= k;
        frac = (frac << k) + rem / c->time_mult;
        rem %= c->time_mult;
    }
    return (quot << c->time_shift) + frac;   /* frac < 2^shift: no carry out */
}

/* --------------------------------------------------------------------------------------
   Session state
   -------------------------------------------------------------------------------------- */

/* A process: its own image, copied from the kernel image when created. */
typedef struct frames__pt_ctx {
    struct frames__pt_ctx *next;   /* in the session's list (while listed) */
    struct pt_image *image;
    uint32_t pid;
    int abi;                       /* FRAMES__PT_ABI_* of the first ELF mapped */
    unsigned refs;
    char name[24];                 /* "pid-<hex>", the image name */
} frames__pt_ctx;

enum { FRAMES__PT_ABI_UNKNOWN, FRAMES__PT_ABI_X64, FRAMES__PT_ABI_X32, FRAMES__PT_ABI_IA32 };

/* Where the traced cpu probably is, estimated from events (libipt-sb's model). */
enum {
    FRAMES__PT_LOC_UNKNOWN, FRAMES__PT_LOC_USER, FRAMES__PT_LOC_KERNEL,
    FRAMES__PT_LOC_LIKELY_USER, FRAMES__PT_LOC_LIKELY_KERNEL
};

enum { FRAMES__PT_SRC_ACTIVE, FRAMES__PT_SRC_RETIRED, FRAMES__PT_SRC_REMOVED };

/* One perf sideband source (a file or a per-cpu record stream of a perf.data file). */
typedef struct frames__pt_src {
    char *name;
    const uint8_t *data;
    size_t size;
    uint8_t *owned;
    frames_pt_sb_config cfg;       /* strings and sample ids owned by the source */
    int primary;
    size_t cur, next;              /* the fetched record, the one after it */
    int have;                      /* rec holds a fetched, not yet applied record */
    frames_pt_sb_record rec;
    uint64_t tsc;                  /* when rec is due */
    int state;
    int loc;
    frames__pt_ctx *ctx, *next_ctx;   /* current context, prepared switch */
    uint32_t tid, next_tid;
    int pending;                   /* a prepared switch waits for a suitable location */
} frames__pt_src;

/* Instructions of a straight-line run starting at ip in section isid (block path). */
#define FRAMES__PT_ARENA_MAX ((size_t)256 << 20)   /* then the run cache starts over */
/* Runs at most: each takes more than 16 bytes of that arena. */
#define FRAMES__PT_RUNS_MAX (FRAMES__PT_ARENA_MAX / 16)

typedef struct frames__pt_run {   /* a slot of the run cache, frames.h's hash table */
    uint64_t hash;     /* the table's */
    uint64_t ip;
    int32_t isid;
    uint32_t mode;
    uint32_t ninsn;    /* instructions cached */
    uint32_t off;      /* arena offset of its entries */
    uint32_t foff, flen;   /* arena offset and bytes of its encoded frames */
    uint64_t tid;      /* the thread id its frames were encoded with */
    uint64_t last;     /* where the last one starts */
    uint64_t after;    /* where the instruction after the last one starts */
} frames__pt_run;

typedef struct frames__pt_module {
    char *name;
    uint64_t low, high;
} frames__pt_module;

struct frames_pt {
    frames_pt_options opt;
    void *actx;
    struct pt_image_section_cache *iscache;
    struct pt_image *image;        /* --raw/--elf images: the decoder's initial image */
    struct pt_image *kernel;       /* copied into every new process context */
    const uint8_t *trace;
    size_t trace_size;
    uint8_t *trace_owned;
    frames__pt_src **srcs;         /* every source (owned) */
    size_t nsrcs;
    frames__pt_src **active;       /* sources with a pending record, by tsc */
    size_t nactive;
    frames__pt_src **retired;      /* exhausted sources that may still switch */
    size_t nretired;
    frames__pt_ctx *contexts;
    frames__pt_module *modules;    /* images added before decoding (modload frames) */
    size_t nmodules;
    frames_pt_callbacks cb;
    int decoded;
    /* decoding state */
    struct pt_insn_decoder *insn;
    struct pt_block_decoder *blk;
    struct pt_image *cur_image;    /* the image the decoder uses */
    frames_writer *w;
    frames_pt_stats *st;
    uint64_t tid;
    uint8_t tidenc[10];            /* varint of tid, for the std_frame encoder */
    size_t tidlen;
    uint64_t last_ip;              /* last instruction decoded (gap frames) */
    uint64_t last_tsc;
    uint64_t offset;               /* trace offset before the current next() */
    /* stall detection (frames__pt_stalled) */
    uint64_t stall_off, stall_n, stall_ip, stall_power, stall_lam;
    int stall_have;
    uint64_t next_progress;
    int stop;                      /* a callback asked to stop (its code) */
    int werr;                      /* writing failed (frames code) */
    frames_error *err;
    /* speculative instructions waiting for their transaction's outcome (SPEC_COMMIT) */
    uint8_t *spec;
    size_t speclen, speccap;
    uint64_t specn;
    /* std_frames in container form, handed to frames_writer_add_frames in batches */
    uint8_t *batch;
    size_t batchlen;
    /* block path: run cache */
    frames__htab runs;             /* block start -> frames__pt_run */
    uint8_t *arena;
    size_t arenalen, arenacap;
};

/* --------------------------------------------------------------------------------------
   ELF PT_LOAD segments (ptxed --elf): own parser, little-endian 32/64-bit files
   -------------------------------------------------------------------------------------- */

/* The most bytes of program headers read from an --elf file (65535 entries of 64 bytes
   fit in 4 MiB; anything larger is not an ELF file a linker made). */
#define FRAMES__PT_MAX_PHDRS ((uint64_t)4 << 20)

/* Read the PT_LOAD segments of an ELF file (frames.h's shared, fuzzed parser of program
   headers); *n of them into a new array. */
static int frames__pt_elf_segments(const char *path, void *actx, frames__elf_seg **out,
                                   uint32_t *n, frames_error *err) {
    uint64_t fsize;
    FILE *f = frames__pt_fopen(path, &fsize, err);
    uint8_t eh[64], *table = NULL;
    uint64_t phoff, len;
    uint32_t entsize, num, i, kept = 0;
    int rc;
    *out = NULL;
    *n = 0;
    if (!f) return FRAMES_E_IO;   /* frames__pt_fopen said why */
    if (fread(eh, 1, 64, f) < 52 || memcmp(eh, "\177ELF", 4) != 0 || (eh[4] != 1 && eh[4] != 2) ||
        (eh[5] != 1 && eh[5] != 2)) {
        fclose(f);
        return frames__pt_fail(err, FRAMES_E_FORMAT, "%s: not an ELF file (or an unknown class or byte order)", path);
    }
    if ((rc = frames__elf_phdr_table(eh, &phoff, &num, &entsize, err)) < 0) {
        fclose(f);
        return rc;
    }
    len = (uint64_t)num * entsize;
    /* the table is allocated only once known to lie inside the file (a 64-byte header
       could ask for 4 MiB: found by fuzz_ptelf) */
    if (len && (phoff > fsize || len > fsize - phoff)) {
        fclose(f);
        return frames__pt_fail(err, FRAMES_E_FORMAT, "%s: its program headers (%llu bytes at 0x%llx) lie "
                               "past its end", path, (unsigned long long)len, (unsigned long long)phoff);
    }
    if (len > FRAMES__PT_MAX_PHDRS || (len && !(table = (uint8_t *)FRAMES_MALLOC((size_t)len, actx)))) {
        fclose(f);
        return frames__pt_fail(err, len > FRAMES__PT_MAX_PHDRS ? FRAMES_E_FORMAT : FRAMES_E_NOMEM,
                               "%s: %llu bytes of program headers", path, (unsigned long long)len);
    }
    if (len && (phoff > (uint64_t)LONG_MAX || fseek(f, (long)phoff, SEEK_SET) != 0 ||
                fread(table, 1, (size_t)len, f) != (size_t)len)) {
        fclose(f);
        FRAMES_FREE(table, actx);
        return frames__pt_fail(err, FRAMES_E_FORMAT, "%s: cannot read the program headers", path);
    }
    fclose(f);
    rc = frames__elf_segments(eh, table, num, entsize, actx, out, n, err);
    FRAMES_FREE(table, actx);
    if (rc < 0) return rc;
    for (i = 0; i < *n; i++)   /* keep the PT_LOAD segments */
        if ((*out)[i].type == FRAMES__ELF_PT_LOAD) (*out)[kept++] = (*out)[i];
    *n = kept;
    return FRAMES_OK;
}

static int frames__pt_add_module(frames_pt *pt, const char *name, uint64_t low, uint64_t size) {
    frames__pt_module *m;
    size_t cap = pt->nmodules;
    if (!size) return FRAMES_OK;
    m = (frames__pt_module *)FRAMES_REALLOC(pt->modules, (cap + 1) * sizeof *m, pt->actx);
    if (!m) return FRAMES_E_NOMEM;
    pt->modules = m;
    m[pt->nmodules].name = frames__strdup(name, pt->actx);
    if (!m[pt->nmodules].name) return FRAMES_E_NOMEM;
    m[pt->nmodules].low = low;
    m[pt->nmodules].high = low + size - 1;
    pt->nmodules++;
    return FRAMES_OK;
}

static int frames__pt_load_elf(frames_pt *pt, struct pt_image *image, const char *path,
                               uint64_t base, int has_base, frames_error *err) {
    frames__elf_seg *segs;
    uint32_t n, i;
    size_t loaded = 0;
    uint64_t bias = 0, minaddr = UINT64_MAX;
    int rc = frames__pt_elf_segments(path, pt->actx, &segs, &n, err);
    if (rc < 0) return rc;
    if (has_base) {   /* ptxed: the lowest PT_LOAD address moves to base */
        for (i = 0; i < n; i++)
            if (segs[i].vaddr < minaddr) minaddr = segs[i].vaddr;
        if (n) bias = base - minaddr;
    }
    for (i = 0; i < n; i++) {
        int isid;
        if (!segs[i].filesz) continue;
        if (segs[i].filesz - 1 > UINT64_MAX - (segs[i].vaddr + bias)) {   /* found by fuzz_ptelf */
            uint64_t at = segs[i].vaddr + bias, len = segs[i].filesz;
            FRAMES_FREE(segs, pt->actx);
            return frames__pt_fail(err, FRAMES_E_FORMAT, "%s: its segment at 0x%llx (%llu bytes) passes "
                                   "the end of the address space", path, (unsigned long long)at,
                                   (unsigned long long)len);
        }
        isid = pt_iscache_add_file(pt->iscache, path, segs[i].offset, segs[i].filesz,
                                   segs[i].vaddr + bias);
        if (isid < 0 || (rc = pt_image_add_cached(image, pt->iscache, isid, NULL)) < 0) {
            uint64_t at = segs[i].vaddr + bias;   /* read before segs is freed (fuzz_ptelf) */
            rc = isid < 0 ? isid : rc;
            FRAMES_FREE(segs, pt->actx);
            return frames__pt_fail(err, FRAMES_PT_E_LIBIPT, "%s: cannot add segment at 0x%llx: %s",
                                   path, (unsigned long long)at, frames__pt_errstr(rc));
        }
        if (image == pt->image &&
            frames__pt_add_module(pt, path, segs[i].vaddr + bias, segs[i].filesz) < 0) {
            FRAMES_FREE(segs, pt->actx);
            return frames__pt_fail(err, FRAMES_E_NOMEM, "%s", "out of memory");
        }
        loaded++;
    }
    FRAMES_FREE(segs, pt->actx);
    if (!loaded)
        return frames__pt_fail(err, FRAMES_E_FORMAT, "%s: no loadable segment with file bytes",
                               path);
    return FRAMES_OK;
}

/* The ABI of an ELF file, for the [vdso] flavour of a process (unknown if not ELF). The
   name comes from the sideband: it may be a FIFO or a device, which must not block us. */
static int frames__pt_file_abi(const char *path) {
    uint8_t eh[20];
    int abi = FRAMES__PT_ABI_UNKNOWN;
#ifndef FRAMES_NO_POSIX
    int fd = frames__open_untrusted(path, UINT64_MAX, NULL), got;
    if (fd < 0) return abi;
    got = read(fd, eh, 20) == 20;
    close(fd);
    if (!got) return abi;
#else
    FILE *f = fopen(path, "rb");
    size_t got;
    if (!f) return abi;
    got = fread(eh, 1, 20, f);
    fclose(f);
    if (got != 20) return abi;
#endif
    if (!memcmp(eh, "\177ELF", 4) && eh[6] == 1) {
        unsigned machine = frames__le16(eh + 18);
        if (eh[4] == 2) abi = FRAMES__PT_ABI_X64;
        else if (eh[4] == 1 && machine == 3) abi = FRAMES__PT_ABI_IA32;
        else if (eh[4] == 1 && machine == 62) abi = FRAMES__PT_ABI_X32;
    }
    return abi;
}

/* --------------------------------------------------------------------------------------
   Perf sideband: records
   -------------------------------------------------------------------------------------- */

#define FRAMES__PERF_MMAP 1
#define FRAMES__PERF_LOST 2
#define FRAMES__PERF_COMM 3
#define FRAMES__PERF_EXIT 4
#define FRAMES__PERF_THROTTLE 5
#define FRAMES__PERF_UNTHROTTLE 6
#define FRAMES__PERF_FORK 7
#define FRAMES__PERF_MMAP2 10
#define FRAMES__PERF_AUX 11
#define FRAMES__PERF_ITRACE_START 12
#define FRAMES__PERF_LOST_SAMPLES 13
#define FRAMES__PERF_SWITCH 14
#define FRAMES__PERF_SWITCH_CPU_WIDE 15
#define FRAMES__PERF_MISC_CPUMODE_MASK 7u
#define FRAMES__PERF_MISC_KERNEL 1u
#define FRAMES__PERF_MISC_COMM_EXEC 0x2000u
#define FRAMES__PERF_MISC_SWITCH_OUT 0x2000u

/* Length of the NUL-terminated string at p (within n bytes) rounded up to 8, or -1. */
static long frames__pt_padded_strlen(const uint8_t *p, size_t n) {
    const uint8_t *z = (const uint8_t *)memchr(p, 0, n);
    size_t len;
    if (!z) return -1;
    len = (size_t)(z - p) + 1;
    return (long)((len + 7) & ~(size_t)7);
}

/* Where the record's PERF_SAMPLE_IDENTIFIER (its last u64) stands in items[0..n): each
   item is stride bytes and begins with its uint64_t id, sorted by id, one item per id.
   n when the record has no such id or it is not listed. */
static size_t frames__pt_find_record_id(const void *items, size_t n, size_t stride,
                                        const uint8_t *rec, size_t size) {
    const unsigned char *base = (const unsigned char *)items;
    uint64_t id, at;
    size_t lo = 0, hi = n;
    if (!n || size < 16) return n;
    id = frames__le64(rec + size - 8);
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        memcpy(&at, base + mid * stride, sizeof at);
        if (at < id) lo = mid + 1;
        else hi = mid;
    }
    if (lo == n) return n;
    memcpy(&at, base + lo * stride, sizeof at);
    return at == id ? lo : n;
}

/* c->sample_ids sorted by id, one entry per id (frames_pt_add_pevent makes them so). */
static uint64_t frames__pt_sample_type(const frames_pt_sb_config *c, const uint8_t *rec,
                                       size_t size) {
    size_t i = frames__pt_find_record_id(c->sample_ids, c->nsample_ids, sizeof c->sample_ids[0],
                                         rec, size);
    return i < c->nsample_ids ? c->sample_ids[i].sample_type : c->sample_type;
}

/* An id with the position it was given in (the first of equal ids wins). */
typedef struct frames__pt_idpos {
    uint64_t id, value;
    size_t pos;
} frames__pt_idpos;

static int frames__pt_idpos_cmp(const void *a, const void *b) {
    const frames__pt_idpos *x = (const frames__pt_idpos *)a, *y = (const frames__pt_idpos *)b;
    if (x->id != y->id) return x->id < y->id ? -1 : 1;
    return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* Sort ids[0..n) by id and keep the first of equal ids; returns how many are left.
   Lookups are then binary searches (a linear one per record made the work grow with
   ids x records, both chosen by the file). */
static size_t frames__pt_sort_ids(frames__pt_idpos *ids, size_t n) {
    size_t i, k = 0;
    if (n > 1) qsort(ids, n, sizeof *ids, frames__pt_idpos_cmp);
    for (i = 0; i < n; i++)
        if (!k || ids[k - 1].id != ids[i].id) ids[k++] = ids[i];
    return k;
}

/* Where a perf record keeps one number: its offset in the record's body (or in a sample
   slot), its width (4 or 8 bytes, little-endian) and the frames_pt_sb_record member it
   goes to. A width of 0 ends a list. */
typedef struct frames__pt_field {
    uint8_t at, width;
    uint16_t member;
} frames__pt_field;
#define FRAMES__PT_FIELD(at, m) \
    {at, (uint8_t)sizeof(((frames_pt_sb_record *)0)->m), (uint16_t)offsetof(frames_pt_sb_record, m)}

/* The fixed body of a record type (perf_event.h): its size, its numbers, and whether a
   NUL-padded name follows it (MMAP, MMAP2, COMM). */
typedef struct frames__pt_body {
    uint32_t type;
    uint8_t size, named;
    frames__pt_field fields[11];
} frames__pt_body;

#define FRAMES__PT_MMAP_FIELDS                                                     \
    FRAMES__PT_FIELD(0, pid), FRAMES__PT_FIELD(4, tid), FRAMES__PT_FIELD(8, addr), \
        FRAMES__PT_FIELD(16, len), FRAMES__PT_FIELD(24, pgoff)
#define FRAMES__PT_FORK_FIELDS                                                     \
    FRAMES__PT_FIELD(0, pid), FRAMES__PT_FIELD(4, ppid), FRAMES__PT_FIELD(8, tid), \
        FRAMES__PT_FIELD(12, ptid), FRAMES__PT_FIELD(16, time)
#define FRAMES__PT_THROTTLE_FIELDS \
    FRAMES__PT_FIELD(0, time), FRAMES__PT_FIELD(8, id), FRAMES__PT_FIELD(16, stream_id)
#define FRAMES__PT_PID_TID_FIELDS FRAMES__PT_FIELD(0, pid), FRAMES__PT_FIELD(4, tid)

static const frames__pt_body frames__pt_bodies[] = {
    {FRAMES__PERF_MMAP, 32, 1, {FRAMES__PT_MMAP_FIELDS}},
    {FRAMES__PERF_MMAP2, 64, 1,
     {FRAMES__PT_MMAP_FIELDS, FRAMES__PT_FIELD(32, maj), FRAMES__PT_FIELD(36, min),
      FRAMES__PT_FIELD(40, ino), FRAMES__PT_FIELD(48, ino_generation), FRAMES__PT_FIELD(56, prot),
      FRAMES__PT_FIELD(60, mflags)}},
    {FRAMES__PERF_COMM, 8, 1, {FRAMES__PT_PID_TID_FIELDS}},
    {FRAMES__PERF_EXIT, 24, 0, {FRAMES__PT_FORK_FIELDS}},
    {FRAMES__PERF_FORK, 24, 0, {FRAMES__PT_FORK_FIELDS}},
    {FRAMES__PERF_LOST, 16, 0, {FRAMES__PT_FIELD(0, id), FRAMES__PT_FIELD(8, lost)}},
    {FRAMES__PERF_THROTTLE, 24, 0, {FRAMES__PT_THROTTLE_FIELDS}},
    {FRAMES__PERF_UNTHROTTLE, 24, 0, {FRAMES__PT_THROTTLE_FIELDS}},
    {FRAMES__PERF_AUX, 24, 0,
     {FRAMES__PT_FIELD(0, aux_offset), FRAMES__PT_FIELD(8, aux_size), FRAMES__PT_FIELD(16, aux_flags)}},
    {FRAMES__PERF_ITRACE_START, 8, 0, {FRAMES__PT_PID_TID_FIELDS}},
    {FRAMES__PERF_SWITCH_CPU_WIDE, 8, 0, {FRAMES__PT_PID_TID_FIELDS}},
    {FRAMES__PERF_LOST_SAMPLES, 8, 0, {FRAMES__PT_FIELD(0, lost)}},
    {FRAMES__PERF_SWITCH, 0, 0, {{0, 0, 0}}},   /* no body */
};

/* The sample_id trailer, in the order perf writes it: one 8-byte slot per bit set. */
typedef struct frames__pt_sample_slot {
    uint64_t bit;
    frames__pt_field fields[2];
} frames__pt_sample_slot;

static const frames__pt_sample_slot frames__pt_sample_slots[] = {
    {FRAMES_PERF_SAMPLE_TID, {FRAMES__PT_FIELD(0, s_pid), FRAMES__PT_FIELD(4, s_tid)}},
    {FRAMES_PERF_SAMPLE_TIME, {FRAMES__PT_FIELD(0, s_time)}},
    {FRAMES_PERF_SAMPLE_ID, {FRAMES__PT_FIELD(0, s_id)}},
    {FRAMES_PERF_SAMPLE_STREAM_ID, {FRAMES__PT_FIELD(0, s_stream_id)}},
    {FRAMES_PERF_SAMPLE_CPU, {FRAMES__PT_FIELD(0, s_cpu)}},
    {FRAMES_PERF_SAMPLE_IDENTIFIER, {FRAMES__PT_FIELD(0, s_identifier)}},
};

static const frames__pt_body *frames__pt_body_of(uint32_t type) {
    size_t i;
    for (i = 0; i < sizeof frames__pt_bodies / sizeof frames__pt_bodies[0]; i++)
        if (frames__pt_bodies[i].type == type) return &frames__pt_bodies[i];
    return NULL;
}

/* Read the listed numbers of p (the caller checked that they lie inside) into r. */
static void frames__pt_read_fields(frames_pt_sb_record *r, const frames__pt_field *f, size_t n,
                                   const uint8_t *p) {
    unsigned char *base = (unsigned char *)r;
    for (; n && f->width; n--, f++) {
        if (f->width == 4) {
            uint32_t v = frames__le32(p + f->at);
            memcpy(base + f->member, &v, sizeof v);
        } else {
            uint64_t v = frames__le64(p + f->at);
            memcpy(base + f->member, &v, sizeof v);
        }
    }
}

/* Parse the record at data[0..avail): header, body, sample_id trailer. Returns the record
   size, 0 at the end of the stream (no bytes left or a zero type, as pevent), or
   -pte_eos for a record cut by the end, -pte_bad_packet / -pte_nosync when malformed. */
static long frames__pt_parse_record(const frames_pt_sb_config *c, const uint8_t *data,
                                    size_t avail, frames_pt_sb_record *r) {
    uint32_t type;
    uint16_t size;
    const uint8_t *b, *end, *p;
    const frames__pt_body *body;
    uint64_t st;
    size_t fixed, i;
    long slen;
    if (avail < 8) return avail ? -pte_eos : 0;
    type = frames__le32(data);
    size = frames__le16(data + 6);
    if (size < 8) return -pte_nosync;
    if (!type) return 0;
    if (size > avail) return -pte_eos;
    memset(r, 0, sizeof *r);
    r->type = type;
    r->misc = frames__le16(data + 4);
    r->size = size;
    b = data + 8;
    end = data + size;
    body = frames__pt_body_of(type);
    if (!body) return (long)size;   /* unknown: skipped whole, no samples (as pevent) */
    fixed = body->size;
    if ((size_t)(end - b) < fixed) return -pte_bad_packet;
    frames__pt_read_fields(r, body->fields, sizeof body->fields / sizeof body->fields[0], b);
    if (body->named) {
        if ((slen = frames__pt_padded_strlen(b + fixed, (size_t)(end - b) - fixed)) < 0)
            return -pte_bad_packet;
        r->name = (const char *)(b + fixed);
        fixed += (size_t)slen;
    }
    st = frames__pt_sample_type(c, data, size);
    p = b + fixed;
    for (i = 0; i < sizeof frames__pt_sample_slots / sizeof frames__pt_sample_slots[0]; i++) {
        const frames__pt_sample_slot *slot = &frames__pt_sample_slots[i];
        if (!(st & slot->bit)) continue;
        if (end - p < 8) return -pte_nosync;
        frames__pt_read_fields(r, slot->fields, 2, p);
        if (slot->bit == FRAMES_PERF_SAMPLE_TIME) {
            if (!c->time_mult) return -pte_bad_config;
            r->tsc = frames_pt_time_to_tsc(c, r->s_time);
        }
        r->samples |= slot->bit;
        p += 8;
    }
    if (p != end) return -pte_nosync;   /* fixed part + trailer must fill the record */
    return (long)size;
}

/* --------------------------------------------------------------------------------------
   Perf sideband: process contexts
   -------------------------------------------------------------------------------------- */

static void frames__pt_ctx_put(frames_pt *pt, frames__pt_ctx *c) {
    if (!c || --c->refs) return;
    pt_image_free(c->image);
    FRAMES_FREE(c, pt->actx);
}

static frames__pt_ctx *frames__pt_ctx_find(frames_pt *pt, uint32_t pid) {
    frames__pt_ctx *c;
    for (c = pt->contexts; c; c = c->next)
        if (c->pid == pid) return c;
    return NULL;
}

static void frames__pt_ctx_remove(frames_pt *pt, uint32_t pid) {
    frames__pt_ctx **pp, *c;
    for (pp = &pt->contexts; (c = *pp) != NULL; pp = &c->next)
        if (c->pid == pid) {
            *pp = c->next;
            c->next = NULL;
            frames__pt_ctx_put(pt, c);
            return;
        }
}

/* A new context for pid: a copy of the kernel image, listed in the session. */
static int frames__pt_ctx_new(frames_pt *pt, uint32_t pid, frames__pt_ctx **out) {
    frames__pt_ctx *c = (frames__pt_ctx *)FRAMES_MALLOC(sizeof *c, pt->actx);
    int rc;
    *out = NULL;
    if (!c) return -pte_nomem;
    memset(c, 0, sizeof *c);
    snprintf(c->name, sizeof c->name, "pid-%x", pid);
    c->image = pt_image_alloc(c->name);
    if (!c->image) {
        FRAMES_FREE(c, pt->actx);
        return -pte_nomem;
    }
    if ((rc = pt_image_copy(c->image, pt->kernel)) < 0) {
        pt_image_free(c->image);
        FRAMES_FREE(c, pt->actx);
        return rc;
    }
    c->pid = pid;
    c->refs = 1;
    c->next = pt->contexts;
    pt->contexts = c;
    *out = c;
    return 0;
}

static int frames__pt_ctx_get(frames_pt *pt, uint32_t pid, frames__pt_ctx **out) {
    *out = frames__pt_ctx_find(pt, pid);
    return *out ? 0 : frames__pt_ctx_new(pt, pid, out);
}

/* --------------------------------------------------------------------------------------
   Perf sideband: applying records
   -------------------------------------------------------------------------------------- */

/* Report a sideband problem at the source's current record. Returns nonzero when a
   callback asked to stop. */
static int frames__pt_sb_diag(frames_pt *pt, frames__pt_src *s, int code) {
    if (code < 0) pt->st->sb_errors++;
    else pt->st->sb_warnings++;
    if (pt->cb.sb_diag) {
        int rc = pt->cb.sb_diag(pt->cb.ctx, code, s->name, s->cur);
        if (rc) pt->stop = rc;
    }
    return pt->stop;
}

static int frames__pt_write_modload(frames_pt *pt, const char *name, uint64_t low,
                                    uint64_t high);

/* MMAP/MMAP2: add the mapped file section to the process's image. */
static int frames__pt_sb_mmap(frames_pt *pt, frames__pt_src *s, const frames_pt_sb_record *r) {
    frames__pt_ctx *c;
    const char *file = r->name;
    char path[4096];
    int rc, isid;
    if ((r->misc & FRAMES__PERF_MISC_CPUMODE_MASK) == FRAMES__PERF_MISC_KERNEL)
        return 0;   /* kernel code comes from kcore: the files on disk are not what ran */
    if ((rc = frames__pt_ctx_get(pt, r->pid, &c)) < 0) return rc;
    if (file[0] == '[') {
        if (strcmp(file, "[vdso]") != 0) return frames__pt_sb_diag(pt, s, FRAMES_PT_SB_SECTION_LOST);
        file = c->abi == FRAMES__PT_ABI_X64 ? s->cfg.vdso_x64
             : c->abi == FRAMES__PT_ABI_X32 ? s->cfg.vdso_x32
             : c->abi == FRAMES__PT_ABI_IA32 ? s->cfg.vdso_ia32 : NULL;
        if (!file) return frames__pt_sb_diag(pt, s, -pte_bad_config);
    } else if (!strcmp(file, "//anon") || strstr(file, " (deleted)")) {
        return frames__pt_sb_diag(pt, s, FRAMES_PT_SB_SECTION_LOST);
    } else if (s->cfg.sysroot) {
        if ((size_t)snprintf(path, sizeof path, "%s%s", s->cfg.sysroot, file) >= sizeof path)
            return frames__pt_sb_diag(pt, s, -pte_overflow);
        file = path;
    }
    if (c->abi == FRAMES__PT_ABI_UNKNOWN) c->abi = frames__pt_file_abi(file);
#ifndef FRAMES_NO_POSIX
    {   /* libipt opens the file itself, blocking: only a regular file gets that far */
        int fd = frames__open_untrusted(file, UINT64_MAX, NULL);
        if (fd < 0) return frames__pt_sb_diag(pt, s, -pte_bad_file);
        close(fd);
    }
#endif
    isid = pt_iscache_add_file(pt->iscache, file, r->pgoff, r->len, r->addr);
    if (isid < 0) return frames__pt_sb_diag(pt, s, isid);
    if ((rc = pt_image_add_cached(c->image, pt->iscache, isid, NULL)) < 0)
        return frames__pt_sb_diag(pt, s, rc);
    if (s->primary && r->len)   /* a failed write sets pt->werr, which stops decoding */
        frames__pt_write_modload(pt, file, r->addr,
                                 r->len - 1 > UINT64_MAX - r->addr ? UINT64_MAX : r->addr + r->len - 1);
    return 0;
}

static int frames__pt_set_image(frames_pt *pt, struct pt_image *image) {
    pt->cur_image = image;
    if (pt->blk) return pt_blk_set_image(pt->blk, image);
    if (pt->insn) return pt_insn_set_image(pt->insn, image);
    return 0;
}

static void frames__pt_set_tid(frames_pt *pt, uint64_t tid) {
    uint8_t *p = pt->tidenc;
    pt->tid = tid;
    while (tid >= 0x80) {
        *p++ = (uint8_t)(tid | 0x80);
        tid >>= 7;
    }
    *p++ = (uint8_t)tid;
    pt->tidlen = (size_t)(p - pt->tidenc);
}

/* Apply the prepared switch of a primary source: new image (and thread). */
static int frames__pt_sb_switch(frames_pt *pt, frames__pt_src *s) {
    frames__pt_ctx *old = s->ctx, *c = s->next_ctx;
    int rc;
    s->pending = 0;
    s->next_ctx = NULL;
    s->ctx = c;
    s->tid = s->next_tid;
    frames__pt_set_tid(pt, s->tid);
    if (c != old) {
        pt->st->context_switches++;
        if (pt->cb.context && (rc = pt->cb.context(pt->cb.ctx, c->name, c->pid, s->tid)) != 0)
            pt->stop = rc;
        if ((rc = frames__pt_set_image(pt, c->image)) < 0) {
            frames__pt_ctx_put(pt, old);
            return rc;
        }
    }
    frames__pt_ctx_put(pt, old);
    return 0;
}

static void frames__pt_sb_cancel(frames_pt *pt, frames__pt_src *s) {
    if (!s->pending) return;
    frames__pt_ctx_put(pt, s->next_ctx);
    s->next_ctx = NULL;
    s->pending = 0;
}

/* Prepare a switch to pid/tid; it happens at the next suitable location. A later switch
   replaces an earlier one that could not be placed. */
static int frames__pt_sb_prepare(frames_pt *pt, frames__pt_src *s, uint32_t pid, uint32_t tid) {
    frames__pt_ctx *c;
    int rc;
    if ((rc = frames__pt_ctx_get(pt, pid, &c)) < 0) return rc;
    if (s->pending && s->next_ctx == c) {
        s->next_tid = tid;
        return 0;
    }
    frames__pt_sb_cancel(pt, s);
    if (s->ctx == c && s->tid == tid) return 0;
    c->refs++;
    s->next_ctx = c;
    s->next_tid = tid;
    s->pending = 1;
    return 0;
}

static int frames__pt_sb_apply_record(frames_pt *pt, frames__pt_src *s) {
    const frames_pt_sb_record *r = &s->rec;
    frames__pt_ctx *c, *parent;
    int rc;
    switch (r->type) {
    case FRAMES__PERF_MMAP:
    case FRAMES__PERF_MMAP2:
        return frames__pt_sb_mmap(pt, s, r);
    case FRAMES__PERF_COMM:
        if (!(r->misc & FRAMES__PERF_MISC_COMM_EXEC)) return 0;
        /* exec: a new process image; keep the old one until the switch is placed */
        frames__pt_ctx_remove(pt, r->pid);
        if ((rc = frames__pt_ctx_new(pt, r->pid, &c)) < 0) return rc;
        return s->primary ? frames__pt_sb_prepare(pt, s, r->pid, r->tid) : 0;
    case FRAMES__PERF_FORK:
        if (r->ppid == r->pid) return 0;   /* a new thread */
        if (r->pid != r->tid) return -pte_internal;
        frames__pt_ctx_remove(pt, r->pid);
        if ((rc = frames__pt_ctx_new(pt, r->pid, &c)) < 0) return rc;
        parent = frames__pt_ctx_find(pt, r->ppid);
        return parent ? pt_image_copy(c->image, parent->image) : 0;
    case FRAMES__PERF_ITRACE_START:
        if (!s->primary) return 0;
        if ((rc = frames__pt_sb_prepare(pt, s, r->pid, r->tid)) < 0) return rc;
        return s->pending ? frames__pt_sb_switch(pt, s) : 0;   /* tracing just started */
    case FRAMES__PERF_SWITCH:
        if (!s->primary || (r->misc & FRAMES__PERF_MISC_SWITCH_OUT)) return 0;
        if (!(r->samples & FRAMES_PERF_SAMPLE_TID)) return -pte_bad_config;
        return frames__pt_sb_prepare(pt, s, r->s_pid, r->s_tid);
    case FRAMES__PERF_SWITCH_CPU_WIDE:
        if (!s->primary) return 0;
        if (r->misc & FRAMES__PERF_MISC_SWITCH_OUT)
            return frames__pt_sb_prepare(pt, s, r->pid, r->tid);
        if (!(r->samples & FRAMES_PERF_SAMPLE_TID)) return 0;
        return frames__pt_sb_prepare(pt, s, r->s_pid, r->s_tid);
    case FRAMES__PERF_LOST:
        return frames__pt_sb_diag(pt, s, FRAMES_PT_SB_LOST);
    case FRAMES__PERF_AUX:
        if (s->primary && (r->aux_flags & 1)) return frames__pt_sb_diag(pt, s, FRAMES_PT_SB_TRACE_LOST);
        return 0;
    default:
        return 0;
    }
}

/* Fetch the source's next record into s->rec. Returns 0, or -pte_eos at its end (the
   source retires), or a negative code for a malformed record (reported; the source is
   dropped). */
static int frames__pt_sb_fetch(frames_pt *pt, frames__pt_src *s) {
    long n;
    uint64_t off = s->cfg.tsc_offset;
    s->cur = s->next;
    s->have = 0;
    /* (an empty source may have no data pointer at all) */
    n = s->next < s->size
            ? frames__pt_parse_record(&s->cfg, s->data + s->next, s->size - s->next, &s->rec)
            : 0;
    if (n == 0) return -pte_eos;
    if (n < 0) {   /* diagnostics point at the bad record (s->cur) */
        frames__pt_sb_diag(pt, s, n == -pte_eos ? FRAMES_PT_SB_TRUNCATED : (int)n);
        return n == -pte_eos ? -pte_eos : (int)n;
    }
    s->rec.source = s->name;
    s->rec.offset = s->cur;
    s->rec.primary = s->primary;
    s->next += (size_t)n;
    s->have = 1;
    /* apply records tsc_offset earlier, without wrapping (as libipt-sb) */
    s->tsc = s->rec.tsc;
    if (s->rec.samples & FRAMES_PERF_SAMPLE_TIME) {
        if (off <= s->tsc) s->tsc -= off;
        else if ((int64_t)off >= 0) s->tsc = 0;
        else s->tsc = UINT64_MAX;
        s->rec.tsc = s->tsc;
    } else {
        s->tsc = 0;
    }
    return 0;
}

/* Keep pt->active sorted by tsc; a source goes before others with the same tsc. */
static void frames__pt_sb_insert(frames_pt *pt, frames__pt_src *s) {
    size_t i = 0, j;
    while (i < pt->nactive && s->tsc > pt->active[i]->tsc) i++;
    for (j = pt->nactive; j > i; j--) pt->active[j] = pt->active[j - 1];
    pt->active[i] = s;
    pt->nactive++;
}

static void frames__pt_sb_retire(frames_pt *pt, frames__pt_src *s) {
    size_t j;
    s->state = FRAMES__PT_SRC_RETIRED;
    for (j = pt->nretired; j > 0; j--) pt->retired[j] = pt->retired[j - 1];
    pt->retired[0] = s;
    pt->nretired++;
}

static void frames__pt_sb_start(frames_pt *pt) {
    size_t i;
    for (i = 0; i < pt->nsrcs; i++) {
        frames__pt_src *s = pt->srcs[i];
        int rc = frames__pt_sb_fetch(pt, s);
        if (rc < 0) s->state = FRAMES__PT_SRC_REMOVED;   /* never added, like libipt-sb */
        else frames__pt_sb_insert(pt, s);
    }
}

static int frames__pt_loc_of_ip(const frames__pt_src *s, uint64_t ip) {
    return ip < s->cfg.kernel_start ? FRAMES__PT_LOC_USER : FRAMES__PT_LOC_KERNEL;
}

/* The other side of a ring transition with a suppressed ip. */
static int frames__pt_loc_flip(int from) {
    switch (from) {
    case FRAMES__PT_LOC_KERNEL: case FRAMES__PT_LOC_LIKELY_KERNEL: return FRAMES__PT_LOC_LIKELY_USER;
    case FRAMES__PT_LOC_USER: case FRAMES__PT_LOC_LIKELY_USER: return FRAMES__PT_LOC_LIKELY_KERNEL;
    default: return FRAMES__PT_LOC_UNKNOWN;
    }
}

static int frames__pt_loc_of_event(const frames__pt_src *s, const struct pt_event *ev) {
    int sup = ev->ip_suppressed;
    switch (ev->type) {
    case ptev_enabled: return frames__pt_loc_of_ip(s, ev->variant.enabled.ip);
    case ptev_disabled:
        return sup ? frames__pt_loc_flip(s->loc) : frames__pt_loc_of_ip(s, ev->variant.disabled.ip);
    case ptev_async_disabled:
        return sup ? frames__pt_loc_flip(frames__pt_loc_of_ip(s, ev->variant.async_disabled.at))
                   : frames__pt_loc_of_ip(s, ev->variant.async_disabled.ip);
    case ptev_async_branch: return frames__pt_loc_of_ip(s, ev->variant.async_branch.to);
    case ptev_async_paging:
        if (!sup) return frames__pt_loc_of_ip(s, ev->variant.async_paging.ip);
        return FRAMES__PT_LOC_LIKELY_KERNEL;
    case ptev_paging: return FRAMES__PT_LOC_LIKELY_KERNEL;
    case ptev_overflow: return sup ? FRAMES__PT_LOC_UNKNOWN : frames__pt_loc_of_ip(s, ev->variant.overflow.ip);
    case ptev_exec_mode: return sup ? FRAMES__PT_LOC_UNKNOWN : frames__pt_loc_of_ip(s, ev->variant.exec_mode.ip);
    case ptev_tsx: return sup ? FRAMES__PT_LOC_UNKNOWN : frames__pt_loc_of_ip(s, ev->variant.tsx.ip);
    case ptev_exstop: return sup ? FRAMES__PT_LOC_UNKNOWN : frames__pt_loc_of_ip(s, ev->variant.exstop.ip);
    case ptev_mwait: return sup ? FRAMES__PT_LOC_UNKNOWN : frames__pt_loc_of_ip(s, ev->variant.mwait.ip);
    case ptev_ptwrite: return sup ? FRAMES__PT_LOC_UNKNOWN : frames__pt_loc_of_ip(s, ev->variant.ptwrite.ip);
    case ptev_tick: return sup ? FRAMES__PT_LOC_UNKNOWN : frames__pt_loc_of_ip(s, ev->variant.tick.ip);
    default: return FRAMES__PT_LOC_UNKNOWN;
    }
}

static int frames__pt_loc_kernelish(int loc) {
    return loc == FRAMES__PT_LOC_KERNEL || loc == FRAMES__PT_LOC_LIKELY_KERNEL ||
           loc == FRAMES__PT_LOC_UNKNOWN;
}

/* Second round: track the location and place a prepared switch when the cpu is (or
   just was) in the kernel or somewhere unknown. Returns 1 when the source has nothing
   left to do (an exhausted source is then dropped). */
static int frames__pt_sb_present(frames_pt *pt, frames__pt_src *s, const struct pt_event *ev) {
    int old = s->loc, rc;
    s->loc = frames__pt_loc_of_event(s, ev);
    if (!s->pending) return !s->have;
    if (frames__pt_loc_kernelish(old) || frames__pt_loc_kernelish(s->loc)) {
        if ((rc = frames__pt_sb_switch(pt, s)) < 0) frames__pt_sb_diag(pt, s, rc);
    }
    return 0;
}

/* Sideband work for one decoder event (status updates included): apply every record due
   at the event's time (ev->tsc even without has_tsc: relative time works too), then let
   every source see the event. */
static int frames__pt_sb_event(frames_pt *pt, const struct pt_event *ev) {
    size_t i;
    int rc;
    while (pt->nactive && !pt->stop) {
        frames__pt_src *s = pt->active[0];
        if (ev->tsc < s->tsc) break;
        memmove(pt->active, pt->active + 1, (pt->nactive - 1) * sizeof *pt->active);
        pt->nactive--;
        pt->st->sb_records++;
        if (pt->cb.sb_record && (rc = pt->cb.sb_record(pt->cb.ctx, &s->rec)) != 0) {
            pt->stop = rc;
            break;
        }
        if ((rc = frames__pt_sb_apply_record(pt, s)) < 0) frames__pt_sb_diag(pt, s, rc);
        if (pt->werr) return pt->werr;
        rc = frames__pt_sb_fetch(pt, s);
        if (rc == -pte_eos) frames__pt_sb_retire(pt, s);
        else if (rc < 0) s->state = FRAMES__PT_SRC_REMOVED;
        else frames__pt_sb_insert(pt, s);
    }
    for (i = 0; i < pt->nactive && !pt->stop; i++) frames__pt_sb_present(pt, pt->active[i], ev);
    for (i = 0; i < pt->nretired && !pt->stop;) {
        if (frames__pt_sb_present(pt, pt->retired[i], ev)) {
            pt->retired[i]->state = FRAMES__PT_SRC_REMOVED;
            memmove(pt->retired + i, pt->retired + i + 1,
                    (pt->nretired - i - 1) * sizeof *pt->retired);
            pt->nretired--;
        } else {
            i++;
        }
    }
    return pt->werr;
}

/* --------------------------------------------------------------------------------------
   Session setup
   -------------------------------------------------------------------------------------- */

FRAMES_PT_DEF int frames_pt_open(frames_pt **out, const frames_pt_options *o, frames_error *err) {
    frames_pt_options def;
    frames_pt *pt;
    void *actx;
    *out = NULL;
    if (!o) {
        frames_pt_options_default(&def);
        o = &def;
    }
    actx = o->alloc_ctx;
    if (o->decoder != FRAMES_PT_DECODER_BLOCK && o->decoder != FRAMES_PT_DECODER_INSN)
        return frames__pt_fail(err, FRAMES_E_INVALID, "unknown decoder %d", o->decoder);
    if (o->speculative < FRAMES_PT_SPEC_SKIP || o->speculative > FRAMES_PT_SPEC_ALL)
        return frames__pt_fail(err, FRAMES_E_INVALID, "unknown speculative policy %d",
                               o->speculative);
    pt = (frames_pt *)FRAMES_MALLOC(sizeof *pt, actx);
    if (!pt) return frames__pt_fail(err, FRAMES_E_NOMEM, "%s", "out of memory");
    memset(pt, 0, sizeof *pt);
    pt->opt = *o;
    pt->actx = actx;
    FRAMES__HTAB_INIT(&pt->runs, frames__pt_run, FRAMES__PT_RUNS_MAX);
    if (!pt->opt.progress_every) pt->opt.progress_every = 1u << 20;
    pt->iscache = pt_iscache_alloc(NULL);
    pt->image = pt_image_alloc(NULL);
    pt->kernel = pt_image_alloc("kernel");
    if (!pt->iscache || !pt->image || !pt->kernel) {
        frames_pt_close(pt);
        return frames__pt_fail(err, FRAMES_E_NOMEM, "%s", "out of memory");
    }
    if (o->iscache_limit) {
        int rc = pt_iscache_set_limit(pt->iscache, o->iscache_limit);
        if (rc < 0) {
            frames_pt_close(pt);
            return frames__pt_fail(err, FRAMES_PT_E_LIBIPT, "iscache limit: %s",
                                   frames__pt_errstr(rc));
        }
    }
    frames__pt_set_tid(pt, o->default_tid);
    *out = pt;
    frames__clear_error(err);
    return FRAMES_OK;
}

FRAMES_PT_DEF void frames_pt_close(frames_pt *pt) {
    size_t i;
    frames__pt_ctx *c;
    if (!pt) return;
    if (pt->insn) pt_insn_free_decoder(pt->insn);
    if (pt->blk) pt_blk_free_decoder(pt->blk);
    for (i = 0; i < pt->nsrcs; i++) {
        frames__pt_src *s = pt->srcs[i];
        frames__pt_ctx_put(pt, s->ctx);
        frames__pt_ctx_put(pt, s->next_ctx);
        FRAMES_FREE(s->name, pt->actx);
        FRAMES_FREE(s->owned, pt->actx);
        FRAMES_FREE((void *)s->cfg.sysroot, pt->actx);
        FRAMES_FREE((void *)s->cfg.vdso_x64, pt->actx);
        FRAMES_FREE((void *)s->cfg.vdso_x32, pt->actx);
        FRAMES_FREE((void *)s->cfg.vdso_ia32, pt->actx);
        FRAMES_FREE((void *)s->cfg.sample_ids, pt->actx);
        FRAMES_FREE(s, pt->actx);
    }
    while ((c = pt->contexts) != NULL) {
        pt->contexts = c->next;
        frames__pt_ctx_put(pt, c);
    }
    for (i = 0; i < pt->nmodules; i++) FRAMES_FREE(pt->modules[i].name, pt->actx);
    FRAMES_FREE(pt->modules, pt->actx);
    FRAMES_FREE(pt->srcs, pt->actx);
    FRAMES_FREE(pt->active, pt->actx);
    FRAMES_FREE(pt->retired, pt->actx);
    FRAMES_FREE(pt->trace_owned, pt->actx);
    FRAMES_FREE(pt->spec, pt->actx);
    FRAMES_FREE(pt->batch, pt->actx);
    frames__htab_free(&pt->runs, pt->actx);
    FRAMES_FREE(pt->arena, pt->actx);
    if (pt->image) pt_image_free(pt->image);
    if (pt->kernel) pt_image_free(pt->kernel);
    if (pt->iscache) pt_iscache_free(pt->iscache);
    FRAMES_FREE(pt, pt->actx);
}

FRAMES_PT_DEF int frames_pt_set_trace(frames_pt *pt, const void *data, size_t size,
                                   frames_error *err) {
    if (pt->decoded) return frames__pt_fail(err, FRAMES_E_STATE, "%s", "already decoded");
    FRAMES_FREE(pt->trace_owned, pt->actx);
    pt->trace_owned = NULL;
    pt->trace = (const uint8_t *)data;
    pt->trace_size = size;
    frames__clear_error(err);
    return FRAMES_OK;
}

FRAMES_PT_DEF int frames_pt_load_trace(frames_pt *pt, const char *path, uint64_t offset,
                                    uint64_t size, frames_error *err) {
    uint8_t *buf;
    size_t n;
    int rc;
    if (pt->decoded) return frames__pt_fail(err, FRAMES_E_STATE, "%s", "already decoded");
    if ((rc = frames__pt_read_file(path, offset, size, pt->actx, &buf, &n, err)) < 0) return rc;
    FRAMES_FREE(pt->trace_owned, pt->actx);
    pt->trace_owned = buf;
    pt->trace = buf;
    pt->trace_size = n;
    return FRAMES_OK;
}

/* Bytes of path from offset (size 0: to the end), checked against the file. */
static int frames__pt_file_range(const char *path, uint64_t offset, uint64_t *size,
                                 frames_error *err) {
    uint64_t fsize;
    FILE *f = frames__pt_fopen(path, &fsize, err);
    if (!f) return FRAMES_E_IO;
    fclose(f);
    if (offset >= fsize)
        return frames__pt_fail(err, FRAMES_E_INVALID, "bad offset 0x%llx into %s (size 0x%llx)",
                               (unsigned long long)offset, path, (unsigned long long)fsize);
    if (!*size) *size = fsize - offset;
    if (*size > fsize - offset)
        return frames__pt_fail(err, FRAMES_E_INVALID, "bad range 0x%llx-0x%llx in %s",
                               (unsigned long long)offset, (unsigned long long)(offset + *size),
                               path);
    return FRAMES_OK;
}

FRAMES_PT_DEF int frames_pt_add_raw(frames_pt *pt, const char *path, uint64_t offset,
                                 uint64_t size, uint64_t vaddr, frames_error *err) {
    int rc, isid;
    if ((rc = frames__pt_file_range(path, offset, &size, err)) < 0) return rc;
    isid = pt_iscache_add_file(pt->iscache, path, offset, size, vaddr);
    if (isid < 0 || (rc = pt_image_add_cached(pt->image, pt->iscache, isid, NULL)) < 0)
        return frames__pt_fail(err, FRAMES_PT_E_LIBIPT, "cannot add %s at 0x%llx: %s", path,
                               (unsigned long long)vaddr, frames__pt_errstr(isid < 0 ? isid : rc));
    if (frames__pt_add_module(pt, path, vaddr, size) < 0)
        return frames__pt_fail(err, FRAMES_E_NOMEM, "%s", "out of memory");
    frames__clear_error(err);
    return FRAMES_OK;
}

FRAMES_PT_DEF int frames_pt_add_elf(frames_pt *pt, const char *path, uint64_t base, int has_base,
                                 frames_error *err) {
    int rc = frames__pt_load_elf(pt, pt->image, path, base, has_base, err);
    if (rc == FRAMES_OK) frames__clear_error(err);
    return rc;
}

FRAMES_PT_DEF int frames_pt_add_kcore(frames_pt *pt, const char *path, uint64_t base,
                                   int has_base, frames_error *err) {
    int rc = frames__pt_load_elf(pt, pt->kernel, path, base, has_base, err);
    if (rc == FRAMES_OK) frames__clear_error(err);
    return rc;
}

FRAMES_PT_DEF int frames_pt_add_pevent(frames_pt *pt, const frames_pt_sb_config *c,
                                    const char *name, const void *data, size_t size,
                                    int primary, int copy, frames_error *err) {
    frames__pt_src *s, **srcs, **act, **ret;
    frames_pt_sb_config def;
    void *actx = pt->actx;
    if (pt->decoded) return frames__pt_fail(err, FRAMES_E_STATE, "%s", "already decoded");
    if (!c) {
        frames_pt_sb_config_default(&def);
        c = &def;
    }
    if (!c->time_mult || c->time_shift > 63)
        return frames__pt_fail(err, FRAMES_E_INVALID, "%s: bad time conversion (mult %u, shift %u)",
                               name ? name : "sideband", (unsigned)c->time_mult,
                               (unsigned)c->time_shift);
    s = (frames__pt_src *)FRAMES_MALLOC(sizeof *s, actx);
    srcs = (frames__pt_src **)FRAMES_REALLOC(pt->srcs, (pt->nsrcs + 1) * sizeof *srcs, actx);
    if (srcs) pt->srcs = srcs;
    act = (frames__pt_src **)FRAMES_REALLOC(pt->active, (pt->nsrcs + 1) * sizeof *act, actx);
    if (act) pt->active = act;
    ret = (frames__pt_src **)FRAMES_REALLOC(pt->retired, (pt->nsrcs + 1) * sizeof *ret, actx);
    if (ret) pt->retired = ret;
    if (!s || !srcs || !act || !ret) {
        FRAMES_FREE(s, actx);
        return frames__pt_fail(err, FRAMES_E_NOMEM, "%s", "out of memory");
    }
    memset(s, 0, sizeof *s);
    s->cfg = *c;
    s->cfg.sysroot = s->cfg.vdso_x64 = s->cfg.vdso_x32 = s->cfg.vdso_ia32 = NULL;
    s->cfg.sample_ids = NULL;
    s->primary = primary != 0;
    s->name = frames__strdup(name ? name : "sideband", actx);
    if (copy && size) {
        s->owned = (uint8_t *)FRAMES_MALLOC(size, actx);
        if (s->owned) memcpy(s->owned, data, size);
    }
    s->data = copy ? s->owned : (const uint8_t *)data;
    s->size = size;
    pt->srcs[pt->nsrcs++] = s;   /* owned by the session from here: close frees it */
    if (c->sysroot) s->cfg.sysroot = frames__strdup(c->sysroot, actx);
    if (c->vdso_x64) s->cfg.vdso_x64 = frames__strdup(c->vdso_x64, actx);
    if (c->vdso_x32) s->cfg.vdso_x32 = frames__strdup(c->vdso_x32, actx);
    if (c->vdso_ia32) s->cfg.vdso_ia32 = frames__strdup(c->vdso_ia32, actx);
    if (c->nsample_ids) {   /* copied sorted by id (the first of equal ids kept) */
        frames_pt_sample_id *ids =
            (frames_pt_sample_id *)FRAMES_MALLOC(c->nsample_ids * sizeof *ids, actx);
        frames__pt_idpos *tmp =
            (frames__pt_idpos *)FRAMES_MALLOC(c->nsample_ids * sizeof *tmp, actx);
        size_t i, k = 0;
        if (ids && tmp) {
            for (i = 0; i < c->nsample_ids; i++) {
                tmp[i].id = c->sample_ids[i].id;
                tmp[i].value = c->sample_ids[i].sample_type;
                tmp[i].pos = i;
            }
            k = frames__pt_sort_ids(tmp, c->nsample_ids);
            for (i = 0; i < k; i++) {
                ids[i].id = tmp[i].id;
                ids[i].sample_type = tmp[i].value;
            }
        } else {
            FRAMES_FREE(ids, actx);
            ids = NULL;
        }
        FRAMES_FREE(tmp, actx);
        s->cfg.sample_ids = ids;
        s->cfg.nsample_ids = ids ? k : 0;
    }
    if (!s->name || (copy && size && !s->owned) || (c->sysroot && !s->cfg.sysroot) ||
        (c->vdso_x64 && !s->cfg.vdso_x64) || (c->vdso_x32 && !s->cfg.vdso_x32) ||
        (c->vdso_ia32 && !s->cfg.vdso_ia32) || (c->nsample_ids && !s->cfg.sample_ids)) {
        pt->nsrcs--;
        FRAMES_FREE(s->name, actx);
        FRAMES_FREE(s->owned, actx);
        FRAMES_FREE((void *)s->cfg.sysroot, actx);
        FRAMES_FREE((void *)s->cfg.vdso_x64, actx);
        FRAMES_FREE((void *)s->cfg.vdso_x32, actx);
        FRAMES_FREE((void *)s->cfg.vdso_ia32, actx);
        FRAMES_FREE((void *)s->cfg.sample_ids, actx);
        FRAMES_FREE(s, actx);
        return frames__pt_fail(err, FRAMES_E_NOMEM, "%s", "out of memory");
    }
    frames__clear_error(err);
    return FRAMES_OK;
}

FRAMES_PT_DEF int frames_pt_load_pevent(frames_pt *pt, const frames_pt_sb_config *c,
                                     const char *path, uint64_t offset, uint64_t size,
                                     int primary, frames_error *err) {
    uint8_t *buf;
    size_t n;
    int rc;
    if ((rc = frames__pt_read_file(path, offset, size, pt->actx, &buf, &n, err)) < 0) return rc;
    rc = frames_pt_add_pevent(pt, c, path, buf, n, primary, 0, err);
    if (rc < 0) {
        FRAMES_FREE(buf, pt->actx);
        return rc;
    }
    pt->srcs[pt->nsrcs - 1]->owned = buf;
    return FRAMES_OK;
}

FRAMES_PT_DEF void frames_pt_set_callbacks(frames_pt *pt, const frames_pt_callbacks *cb) {
    if (cb) pt->cb = *cb;
    else memset(&pt->cb, 0, sizeof pt->cb);
}

/* --------------------------------------------------------------------------------------
   Writing frames
   -------------------------------------------------------------------------------------- */

#define FRAMES__PT_ABORT (-1000)   /* internal: a callback stopped us or writing failed */
#define FRAMES__PT_STD_MAX 48      /* largest std_frame payload this encoder makes */

static int frames__pt_write_failed(frames_pt *pt, int rc) {
    pt->werr = rc;
    if (pt->err && pt->w) *pt->err = *frames_writer_error(pt->w);
    return rc;
}

#define FRAMES__PT_BATCH ((size_t)256 << 10)   /* bytes of std_frames per writer call */

/* Hand the batched std_frames to the writer (before any other frame, and at the end). */
static int frames__pt_flush_batch(frames_pt *pt) {
    int rc;
    if (!pt->batchlen) return 0;
    rc = frames_writer_add_frames(pt->w, pt->batch, pt->batchlen);
    pt->batchlen = 0;
    return rc < 0 ? frames__pt_write_failed(pt, rc) : 0;
}

/* Append encoded frames ([8-byte size][frame]...) to the batch. */
static int frames__pt_put_frames(frames_pt *pt, const uint8_t *frames, size_t len) {
    if (pt->batchlen + len > FRAMES__PT_BATCH && frames__pt_flush_batch(pt) < 0) return pt->werr;
    if (len > FRAMES__PT_BATCH) {   /* a very long block: straight through */
        int rc = frames_writer_add_frames(pt->w, frames, len);
        return rc < 0 ? frames__pt_write_failed(pt, rc) : 0;
    }
    memcpy(pt->batch + pt->batchlen, frames, len);
    pt->batchlen += len;
    return 0;
}

static int frames__pt_write_frame(frames_pt *pt, const frames_frame *f) {
    int rc;
    if (!pt->w) return 0;
    if (frames__pt_flush_batch(pt) < 0) return pt->werr;
    if ((rc = frames_writer_add(pt->w, f)) < 0) return frames__pt_write_failed(pt, rc);
    return 0;
}

static int frames__pt_write_modload(frames_pt *pt, const char *name, uint64_t low,
                                    uint64_t high) {
    frames_frame f;
    if (pt->opt.flags & FRAMES_PT_NO_MODLOAD_FRAMES) return 0;
    memset(&f, 0, sizeof f);
    f.kind = FRAMES_KIND_MODLOAD;
    f.modload.module_name = frames_str(name);
    f.modload.low_address = low;
    f.modload.high_address = high;
    if (frames__pt_write_frame(pt, &f) < 0) return pt->werr;
    pt->st->modload_frames += pt->w != NULL;
    return 0;
}

static int frames__pt_write_exception(frames_pt *pt, uint64_t number, int has_from,
                                      uint64_t from, int has_to, uint64_t to) {
    frames_frame f;
    if (pt->opt.flags & FRAMES_PT_NO_EXCEPTION_FRAMES) return 0;
    memset(&f, 0, sizeof f);
    f.kind = FRAMES_KIND_EXCEPTION;
    f.exception.number = number;
    f.exception.has_thread_id = 1;
    f.exception.thread_id = pt->tid;
    f.exception.has_from_addr = (uint8_t)(has_from != 0);
    f.exception.from_addr = from;
    f.exception.has_to_addr = (uint8_t)(has_to != 0);
    f.exception.to_addr = to;
    if (frames__pt_write_frame(pt, &f) < 0) return pt->werr;
    pt->st->exception_frames += pt->w != NULL;
    return 0;
}

/* frame { std_frame { address, thread_id, rawbytes, operand_pre_list {} } }, the bytes
   frames_encode_frame makes for it (checked by the tests), without the size prefix. */
static size_t frames__pt_encode_std(const frames_pt *pt, uint8_t *buf, uint64_t ip,
                                    const uint8_t *raw, unsigned size) {
    uint8_t *p = buf + 2;
    *p++ = 0x08;
    while (ip >= 0x80) {
        *p++ = (uint8_t)(ip | 0x80);
        ip >>= 7;
    }
    *p++ = (uint8_t)ip;
    *p++ = 0x10;
    memcpy(p, pt->tidenc, pt->tidlen);
    p += pt->tidlen;
    *p++ = 0x1a;
    *p++ = (uint8_t)size;
    memcpy(p, raw, size);
    p += size;
    *p++ = 0x22;
    *p++ = 0x00;
    buf[0] = 0x0a;
    buf[1] = (uint8_t)(p - buf - 2);
    return (size_t)(p - buf);
}

#define FRAMES__PT_SPEC_MAX ((size_t)16 << 20)   /* bytes held for one transaction */

/* Speculative instructions of SPEC_COMMIT wait here, encoded, for the transaction's end.
   Beyond FRAMES__PT_SPEC_MAX (a transaction of some 400 000 instructions, far more than
   TSX ever commits) they are counted as unwritten instead of held. */
static int frames__pt_spec_hold(frames_pt *pt, const uint8_t *frame, size_t len) {
    if (pt->speclen + len > FRAMES__PT_SPEC_MAX) {
        pt->st->speculative_unwritten++;
        return 0;
    }
    if (pt->speclen + len > pt->speccap) {
        if (FRAMES__GROW(pt->spec, pt->speccap, pt->speclen + len, pt->actx) < 0)
            return frames__pt_fail(pt->err, FRAMES_E_NOMEM, "%s", "out of memory");
    }
    memcpy(pt->spec + pt->speclen, frame, len);
    pt->speclen += len;
    pt->specn++;
    return 0;
}

static int frames__pt_spec_resolve(frames_pt *pt, int commit) {
    size_t i = 0;
    int rc;
    if (!commit) pt->st->speculative_unwritten += pt->specn;
    while (commit && i < pt->speclen) {   /* held in container form: [size][frame] */
        size_t len = 8 + pt->spec[i];
        if (pt->w && (rc = frames__pt_put_frames(pt, pt->spec + i, len)) < 0) return rc;
        pt->st->std_frames += pt->w != NULL;
        i += len;
    }
    pt->speclen = 0;
    pt->specn = 0;
    return 0;
}

/* The decoder's position in the trace. */
static uint64_t frames__pt_offset(const frames_pt *pt) {
    uint64_t off = 0;
    if (pt->blk) pt_blk_get_offset(pt->blk, &off);
    else pt_insn_get_offset(pt->insn, &off);
    return off;
}

static void frames__pt_progress(frames_pt *pt) {
    pt->next_progress = pt->st->insns + pt->opt.progress_every;
    if (pt->cb.progress) pt->cb.progress(pt->cb.ctx, frames__pt_offset(pt), pt->trace_size);
}

/* One executed instruction: a std_frame (or held/skipped when speculative). */
static int frames__pt_emit(frames_pt *pt, uint64_t ip, const uint8_t *raw, unsigned size,
                           unsigned mode, int spec) {
    uint8_t buf[8 + FRAMES__PT_STD_MAX];
    size_t len;
    int write = !spec || pt->opt.speculative == FRAMES_PT_SPEC_ALL, rc;
    pt->last_ip = ip;
    if (spec) {
        pt->st->speculative++;
        if (pt->opt.speculative == FRAMES_PT_SPEC_SKIP) pt->st->speculative_unwritten++;
    }
    if (pt->cb.insn) {
        frames_pt_insn in;
        in.ip = ip;
        in.offset = pt->offset;
        in.tsc = pt->last_tsc;
        in.raw = raw;
        in.size = (uint8_t)size;
        in.mode = (uint8_t)mode;
        in.speculative = (uint8_t)(spec != 0);
        in.written = (uint8_t)(write && pt->w);
        if ((rc = pt->cb.insn(pt->cb.ctx, &in)) != 0) {
            pt->stop = rc;
            return FRAMES__PT_ABORT;
        }
    }
    if ((write && pt->w) || (spec && pt->opt.speculative == FRAMES_PT_SPEC_COMMIT)) {
        len = frames__pt_encode_std(pt, buf + 8, ip, raw, size);   /* with its size word */
        memset(buf, 0, 8);
        buf[0] = (uint8_t)len;
    }
    if (write && pt->w) {
        if (frames__pt_put_frames(pt, buf, 8 + len) < 0) return FRAMES__PT_ABORT;
        pt->st->std_frames++;
    } else if (spec && pt->opt.speculative == FRAMES_PT_SPEC_COMMIT) {
        if (frames__pt_spec_hold(pt, buf, 8 + len) < 0) {
            pt->werr = FRAMES_E_NOMEM;
            return FRAMES__PT_ABORT;
        }
    }
    return 0;
}

/* --------------------------------------------------------------------------------------
   Block path: the instructions of a block, decoded and encoded once per start

   A run holds the instructions of a block start (section, ip, mode) as libipt's block
   decoder walked them, and their std_frames already encoded for one thread id, in the
   container's layout: a block repeating is then one copy into the batch of frames that
   goes to frames_writer_add_frames.
   Arena: entries [size][ip, 8 bytes][bytes, size] for every instruction, followed by
   the frames ([8-byte size][frame]) of every instruction.
   -------------------------------------------------------------------------------------- */

#define FRAMES__PT_RUN_ENTRY(size) (9u + (size))

static uint64_t frames__pt_run_hash(uint64_t ip, int32_t isid, uint32_t mode, uint64_t tid) {
    return frames__mix64(ip ^ ((uint64_t)(uint32_t)isid << 40) ^ ((uint64_t)mode << 60) ^
                         (tid * 0xC2B2AE3D27D4EB4Full));
}

static frames__pt_run *frames__pt_run_find(frames_pt *pt, uint64_t ip, int32_t isid,
                                           uint32_t mode) {
    size_t at = 0;
    frames__pt_run *r;
    uint64_t h = frames__pt_run_hash(ip, isid, mode, pt->tid);
    while ((r = FRAMES__HTAB_NEXT(&pt->runs, frames__pt_run, h, &at)) != NULL)
        if (r->ip == ip && r->isid == isid && r->mode == mode && r->tid == pt->tid) return r;
    return NULL;
}

static void frames__pt_run_clear(frames_pt *pt) {
    frames__htab_clear(&pt->runs);
    pt->arenalen = 0;
}

/* A slot for a new run (the table grows at half load). */
static frames__pt_run *frames__pt_run_slot_new(frames_pt *pt, uint64_t ip, int32_t isid,
                                               uint32_t mode) {
    return (frames__pt_run *)frames__htab_add(&pt->runs, frames__pt_run_hash(ip, isid, mode, pt->tid),
                                              pt->actx);
}

/* Decode the first n instructions of block b into the arena and encode their frames.
   Inside a block, direct jumps and calls are followed (blocks need not end at them).
   Returns the run, or NULL: bytes unreadable or undecodable (a reconstruct error), or
   out of memory (pt->werr). */
static frames__pt_run *frames__pt_run_build(frames_pt *pt, const struct pt_block *b, uint32_t n) {
    frames__pt_run *r;
    uint64_t ip = b->ip, last = ip;
    size_t out, foff, e, need = (size_t)n * (FRAMES__PT_RUN_ENTRY(15) + 8 + FRAMES__PT_STD_MAX);
    uint32_t k;
    if (pt->arenalen + need > FRAMES__PT_ARENA_MAX) frames__pt_run_clear(pt);
    if (pt->arenalen + need > pt->arenacap) {
        if (FRAMES__GROW(pt->arena, pt->arenacap, pt->arenalen + need, pt->actx) < 0) goto nomem;
    }
    out = pt->arenalen;
    for (k = 0; k < n; k++) {
        frames_pt_x86 x;
        uint8_t *p = pt->arena + out;
        int rd = pt_iscache_read(pt->iscache, p + 9, 15, b->isid, ip);
        if (rd <= 0 || frames_pt_x86_decode(p + 9, (size_t)rd, (enum pt_exec_mode)b->mode, ip, &x) < 0)
            return NULL;
        p[0] = x.size;
        memcpy(p + 1, &ip, 8);
        out += FRAMES__PT_RUN_ENTRY(x.size);
        last = ip;
        ip = x.has_target && (x.iclass == ptic_jump || x.iclass == ptic_call) ? x.target : ip + x.size;
    }
    foff = out;
    for (k = 0, e = pt->arenalen; k < n; k++) {   /* the frames, after the entries */
        const uint8_t *p = pt->arena + e;
        uint64_t eip;
        size_t len;
        memcpy(&eip, p + 1, 8);
        len = frames__pt_encode_std(pt, pt->arena + out + 8, eip, p + 9, p[0]);
        memset(pt->arena + out, 0, 8);
        pt->arena[out] = (uint8_t)len;
        out += 8 + len;
        e += FRAMES__PT_RUN_ENTRY(p[0]);
    }
    r = frames__pt_run_find(pt, b->ip, b->isid, b->mode);
    if (!r && !(r = frames__pt_run_slot_new(pt, b->ip, b->isid, b->mode))) goto nomem;
    r->ip = b->ip;
    r->isid = b->isid;
    r->mode = b->mode;
    r->tid = pt->tid;
    r->ninsn = n;
    r->off = (uint32_t)pt->arenalen;
    r->foff = (uint32_t)foff;
    r->flen = (uint32_t)(out - foff);
    r->last = last;
    r->after = ip;
    pt->arenalen = out;
    return r;
nomem:
    frames__pt_fail(pt->err, FRAMES_E_NOMEM, "%s", "out of memory (block cache)");
    pt->werr = FRAMES_E_NOMEM;
    return NULL;
}

/* Decode b's last instruction (at end_ip) as ptxed does: from the bytes libipt gave when
   it is truncated, else from its section. Returns 0, or -1 when it does not decode. */
static int frames__pt_block_last_insn(frames_pt *pt, const struct pt_block *b, frames_pt_x86 *x) {
    uint8_t buf[16];
    int n;
    if (b->truncated) {
        memcpy(buf, b->raw, b->size);
        n = b->size;
    } else {
        n = pt_iscache_read(pt->iscache, buf, sizeof buf, b->isid, b->end_ip);
    }
    if (n <= 0 || frames_pt_x86_decode(buf, (size_t)n, (enum pt_exec_mode)b->mode, b->end_ip, x) < 0)
        return -1;
    return 0;
}

/* Whether libipt counted b's last instruction without decoding it. Reusing its block
   cache, libipt 2.0.5 moves a block on to the cached decision point and counts the
   instruction there before decoding it; when that decode fails (the cached entry says
   64-bit but the decoder's mode is unknown after a PSB+ without MODE.Exec, and an
   instruction that goes on into the next section is read again with that mode; or that
   section is gone), the block comes back with the fetch/decode error and with that
   instruction as its last, not truncated. Its blocks from a fresh decode only hold
   instructions it decoded. ptxed prints the ones before it and a decode error for it. */
static int frames__pt_block_last_undecoded(frames_pt *pt, const struct pt_block *b, int status) {
    frames_pt_x86 x;
    return (status == -pte_bad_insn || status == -pte_nomap) && b->ninsn && !b->truncated &&
           frames__pt_block_last_insn(pt, b, &x) < 0;
}

/* The run for the n full instructions of b: the n-th must start at end_ip, or, when b's
   last instruction is not among the n (lead: it is truncated or undecoded), lead to it.
   *flen: the bytes of the first n frames; *last: where the n-th starts. */
static const frames__pt_run *frames__pt_block_run(frames_pt *pt, const struct pt_block *b,
                                                  uint32_t n, int lead, size_t *flen,
                                                  uint64_t *last) {
    const frames__pt_run *r = frames__pt_run_find(pt, b->ip, b->isid, b->mode);
    if (r && r->ninsn > n) {   /* a longer run from the same start: check its n-th */
        const uint8_t *p = pt->arena + r->off, *f = pt->arena + r->foff;
        uint64_t ip;
        uint32_t k;
        for (k = 0; k + 1 < n; k++) p += FRAMES__PT_RUN_ENTRY(p[0]);
        memcpy(&ip, p + 1, 8);
        *last = ip;   /* not r->last: the run goes on after the block */
        if (lead) {   /* the block's last one follows the n-th */
            p += FRAMES__PT_RUN_ENTRY(p[0]);
            memcpy(&ip, p + 1, 8);
        }
        if (ip != b->end_ip) return NULL;
        for (k = 0; k < n; k++) f += 8 + f[0];
        *flen = (size_t)(f - (pt->arena + r->foff));
        return r;
    }
    if (!r || r->ninsn < n) r = frames__pt_run_build(pt, b, n);
    if (r && (lead ? r->after : r->last) != b->end_ip) r = NULL;
    if (r) {
        *flen = r->flen;
        *last = r->last;
    }
    return r;
}

/* Write the instructions of a block that pt_blk_next returned with status: all but an
   undecoded last one (ptxed's instructions; the error that follows reports it). */
static int frames__pt_emit_block(frames_pt *pt, const struct pt_block *b, int status) {
    int undecoded = frames__pt_block_last_undecoded(pt, b, status), rc;
    uint32_t n = b->ninsn - (b->truncated || undecoded ? 1u : 0u), k;
    const frames__pt_run *r = NULL;
    const uint8_t *p;
    size_t flen = 0;
    uint64_t last = 0;
    pt->st->insns += b->ninsn - (undecoded ? 1u : 0u);
    pt->st->blocks++;
    if (n) {
        if (!(r = frames__pt_block_run(pt, b, n, b->truncated || undecoded, &flen, &last))) {
            if (pt->werr) return FRAMES__PT_ABORT;
            pt->st->reconstruct_errors++;
            if (pt->cb.error &&
                (rc = pt->cb.error(pt->cb.ctx, "reconstruct error", pt->offset, b->ip,
                                   -pte_nosync)) != 0) {
                pt->stop = rc;
                return FRAMES__PT_ABORT;
            }
            return 0;
        }
        if (pt->w && !pt->cb.insn && (!b->speculative || pt->opt.speculative == FRAMES_PT_SPEC_ALL)) {
            /* the common case: the block's frames, encoded before, in one copy */
            if (frames__pt_put_frames(pt, pt->arena + r->foff, flen) < 0) return FRAMES__PT_ABORT;
            pt->st->std_frames += n;
            pt->last_ip = last;
            if (b->speculative) pt->st->speculative += n;
        } else {
            for (k = 0, p = pt->arena + r->off; k < n; k++) {
                uint64_t ip;
                memcpy(&ip, p + 1, 8);
                if ((rc = frames__pt_emit(pt, ip, p + 9, p[0], b->mode, b->speculative)) < 0)
                    return rc;
                p += FRAMES__PT_RUN_ENTRY(p[0]);
            }
        }
    }
    if (b->truncated &&
        (rc = frames__pt_emit(pt, b->end_ip, b->raw, b->size, b->mode, b->speculative)) < 0)
        return rc;
    if (pt->st->insns >= pt->next_progress) frames__pt_progress(pt);
    return 0;
}

/* --------------------------------------------------------------------------------------
   Decoding
   -------------------------------------------------------------------------------------- */

/* Count an event, write the frames it maps to, pass it to the callback. */
static int frames__pt_on_event(frames_pt *pt, const struct pt_event *ev, uint64_t off) {
    frames_pt_stats *st = pt->st;
    int rc = 0, written = 0;
    if (pt->cb.event && (rc = pt->cb.event(pt->cb.ctx, ev, off)) != 0) {
        pt->stop = rc;
        return FRAMES__PT_ABORT;
    }
    if (ev->status_update) {
        st->status_updates++;
        return 0;
    }
    if ((unsigned)ev->type < 32) st->events[ev->type]++;
    else st->events_other++;
    switch (ev->type) {
    case ptev_async_branch:
        rc = frames__pt_write_exception(pt, FRAMES_PT_EXC_INTERRUPT, 1, ev->variant.async_branch.from,
                                        !ev->ip_suppressed, ev->variant.async_branch.to);
        written = !(pt->opt.flags & FRAMES_PT_NO_EXCEPTION_FRAMES);
        break;
    case ptev_overflow:
        rc = frames__pt_write_exception(pt, FRAMES_PT_EXC_OVERFLOW, 0, 0, !ev->ip_suppressed,
                                        ev->variant.overflow.ip);
        written = !(pt->opt.flags & FRAMES_PT_NO_EXCEPTION_FRAMES);
        break;
    case ptev_tsx:
        /* end of a transaction: keep (commit) or drop (abort) what was held for it */
        if (!ev->variant.tsx.speculative) rc = frames__pt_spec_resolve(pt, !ev->variant.tsx.aborted);
        break;
    default:
        break;
    }
    if (!written) st->events_unwritten++;
    return rc < 0 ? FRAMES__PT_ABORT : 0;
}

/* --------------------------------------------------------------------------------------
   Decoding: cycles that take no trace
   -------------------------------------------------------------------------------------- */

/* libipt follows direct jumps and calls without packets, so a trace that leads the
   decoder into a cycle of them (crafted, or an ip in the middle of an instruction) is
   decoded for ever. Progress is a move in the trace (a packet taken: TIP, PTW, ...), an
   event, or a conditional branch or return (they may take a bit of a TNT packet read
   before); without progress the decoder is deterministic, so an instruction (block)
   start seen again is such a cycle. Brent's cycle detection finds it within about twice
   the length of the path; FRAMES_PT_MAX_STALL bounds the path in any case. */
#ifndef FRAMES_PT_MAX_STALL
#define FRAMES_PT_MAX_STALL ((uint64_t)1 << 24)
#endif

static void frames__pt_progress_made(frames_pt *pt) {
    pt->stall_n = 0;
    pt->stall_power = 1;
    pt->stall_lam = 0;
    pt->stall_have = 0;
}

/* After n instructions from ip whose last one has class iclass: 1 when the decoder goes
   round a cycle that takes no trace (or has followed FRAMES_PT_MAX_STALL instructions). */
static int frames__pt_stalled(frames_pt *pt, uint64_t ip, uint64_t n, int iclass) {
    uint64_t off = frames__pt_offset(pt);
    if (off != pt->stall_off || iclass == ptic_cond_jump || iclass == ptic_return) {
        pt->stall_off = off;
        frames__pt_progress_made(pt);
        return 0;
    }
    if (pt->stall_have && ip == pt->stall_ip) return 1;
    if (!pt->stall_have || pt->stall_power == pt->stall_lam) {
        pt->stall_ip = ip;
        pt->stall_have = 1;
        pt->stall_power *= 2;
        pt->stall_lam = 0;
    }
    pt->stall_lam++;
    return (pt->stall_n += n) > FRAMES_PT_MAX_STALL;
}

/* Process pending events (before every next()), sideband included. */
static int frames__pt_drain(frames_pt *pt, int status) {
    if (status & pts_event_pending) frames__pt_progress_made(pt);
    while (status & pts_event_pending) {
        struct pt_event ev;
        uint64_t off = pt->cb.event ? frames__pt_offset(pt) : 0;
        status = pt->blk ? pt_blk_event(pt->blk, &ev, sizeof ev)
                         : pt_insn_event(pt->insn, &ev, sizeof ev);
        if (status < 0) return status;
        pt->last_tsc = ev.tsc;
        if (frames__pt_on_event(pt, &ev, off) < 0) return FRAMES__PT_ABORT;
        if (pt->nsrcs && (frames__pt_sb_event(pt, &ev) < 0 || pt->stop)) return FRAMES__PT_ABORT;
        if (pt->stop || pt->werr) return FRAMES__PT_ABORT;
    }
    return status;
}

/* A decode error: report it, record the gap; decoding resumes at the next PSB. */
static int frames__pt_gap(frames_pt *pt, const char *kind, uint64_t ip, int code) {
    frames_pt_stats *st = pt->st;
    uint64_t off = frames__pt_offset(pt);
    int rc, sync = kind[0] == 's';
    if (sync) st->sync_errors++;
    else st->gaps++;
    if (st->ngaps_recorded < FRAMES_PT_MAX_GAPS) {
        frames_pt_gap *g = &st->gap[st->ngaps_recorded++];
        g->offset = off;
        g->ip = ip;
        g->code = code;
    }
    if (pt->cb.error && (rc = pt->cb.error(pt->cb.ctx, kind, off, ip, code)) != 0) {
        pt->stop = rc;
        return FRAMES__PT_ABORT;
    }
    if (!sync && frames__pt_write_exception(pt, FRAMES_PT_EXC_GAP, pt->last_ip != 0, pt->last_ip,
                                            0, 0) < 0)
        return FRAMES__PT_ABORT;
    return 0;
}

/* The ip ptxed reports for a block decoder error: the instruction after the block's last
   one (direct branches followed) for fetch/decode errors, else the last one. */
static uint64_t frames__pt_block_error_ip(frames_pt *pt, const struct pt_block *b, int code) {
    frames_pt_x86 x;
    if (!b->ninsn) return b->ip;
    if (code != -pte_nomap && code != -pte_bad_insn) return b->end_ip;
    if (frames__pt_block_last_insn(pt, b, &x) < 0) return b->end_ip;
    return x.has_target ? x.target : b->end_ip + x.size;
}

static int frames__pt_end_of_trace(frames_pt *pt, int status) {
    int rc;
    if (status & pts_ip_suppressed) return 0;
    pt->st->end_of_trace++;
    if (pt->cb.end_of_trace && (rc = pt->cb.end_of_trace(pt->cb.ctx)) != 0) {
        pt->stop = rc;
        return FRAMES__PT_ABORT;
    }
    return 0;
}

/* A sync that failed (st < 0): the end of the trace, or a gap and another try further on.
   1: sync again; 0: done (the end, or no progress past *sync); FRAMES__PT_ABORT: a
   callback stopped us. */
static int frames__pt_sync_failed(frames_pt *pt, int st, uint64_t *sync) {
    uint64_t off = 0;
    int got;
    if (st == -pte_eos) return 0;
    if (frames__pt_gap(pt, "sync error", 0, st) < 0) return FRAMES__PT_ABORT;
    got = pt->blk ? pt_blk_get_offset(pt->blk, &off) : pt_insn_get_offset(pt->insn, &off);
    if (got < 0 || off <= *sync) return 0;   /* no progress */
    *sync = off;
    return 1;
}

/* The events before the next instruction (st: the status of the decoder's last call).
   >= 0: decode on; -pte_eos: the trace ended (its end reported); other < 0: an error of
   the decoder, or FRAMES__PT_ABORT. */
static int frames__pt_next_events(frames_pt *pt, int st) {
    if ((st = frames__pt_drain(pt, st)) < 0) return st;
    if (st & pts_eos) return frames__pt_end_of_trace(pt, st) < 0 ? FRAMES__PT_ABORT : -pte_eos;
    return st;
}

/* ptxed's decode loop on the block decoder. */
static int frames__pt_run_block(frames_pt *pt) {
    uint64_t sync = 0;
    int rc;
    for (;;) {
        struct pt_block b;
        int st = pt_blk_sync_forward(pt->blk);
        memset(&b, 0, sizeof b);
        if (st < 0) {
            if ((rc = frames__pt_sync_failed(pt, st, &sync)) <= 0) return rc;
            continue;
        }
        while ((st = frames__pt_next_events(pt, st)) >= 0) {
            if (pt->cb.insn || pt->cb.error) pt->offset = frames__pt_offset(pt);
            memset(&b, 0, sizeof b);
            st = pt_blk_next(pt->blk, &b, sizeof b);
            if (b.ninsn && frames__pt_emit_block(pt, &b, st) < 0) return FRAMES__PT_ABORT;
            if (st < 0) break;
            if (b.ninsn && frames__pt_stalled(pt, b.ip, b.ninsn, b.iclass)) {
                st = -pte_bad_query;   /* the trace does not match the code: a gap */
                break;
            }
        }
        if (st == FRAMES__PT_ABORT) return st;
        if (st == -pte_eos) return 0;
        if (frames__pt_gap(pt, "error", frames__pt_block_error_ip(pt, &b, st), st) < 0)
            return FRAMES__PT_ABORT;
    }
}

/* ptxed's decode loop on the instruction-flow decoder. */
static int frames__pt_run_insn(frames_pt *pt) {
    uint64_t sync = 0;
    int rc;
    for (;;) {
        struct pt_insn in;
        int st = pt_insn_sync_forward(pt->insn);
        memset(&in, 0, sizeof in);
        if (st < 0) {
            if ((rc = frames__pt_sync_failed(pt, st, &sync)) <= 0) return rc;
            continue;
        }
        while ((st = frames__pt_next_events(pt, st)) >= 0) {
            if (pt->cb.insn) pt->offset = frames__pt_offset(pt);
            memset(&in, 0, sizeof in);
            st = pt_insn_next(pt->insn, &in, sizeof in);
            /* an instruction may be returned together with an error for what follows */
            if (in.iclass != ptic_error) {
                pt->st->insns++;
                if (frames__pt_emit(pt, in.ip, in.raw, in.size, in.mode, in.speculative) < 0)
                    return FRAMES__PT_ABORT;
                if (pt->st->insns >= pt->next_progress) frames__pt_progress(pt);
            }
            if (st < 0) break;
            if (frames__pt_stalled(pt, in.ip, 1, in.iclass)) {
                st = -pte_bad_query;   /* the trace does not match the code: a gap */
                break;
            }
        }
        if (st == FRAMES__PT_ABORT) return st;
        if (st == -pte_eos) return 0;
        if (frames__pt_gap(pt, "error", in.ip, st) < 0) return FRAMES__PT_ABORT;
    }
}

static int frames__pt_alloc_decoder(frames_pt *pt, frames_error *err) {
    struct pt_config cfg;
    int rc;
    pt_config_init(&cfg);
    cfg.begin = (uint8_t *)(uintptr_t)pt->trace;
    cfg.end = (uint8_t *)(uintptr_t)(pt->trace + pt->trace_size);
    cfg.cpu = pt->opt.cpu;
    cfg.mtc_freq = pt->opt.mtc_freq;
    cfg.nom_freq = pt->opt.nom_freq;
    cfg.cpuid_0x15_eax = pt->opt.cpuid_0x15_eax;
    cfg.cpuid_0x15_ebx = pt->opt.cpuid_0x15_ebx;
    cfg.addr_filter = pt->opt.addr_filter;
    if (cfg.cpu.vendor != pcv_unknown && (rc = pt_cpu_errata(&cfg.errata, &cfg.cpu)) < 0) {
        /* like ptxed: report and decode by the spec */
        memset(&cfg.errata, 0, sizeof cfg.errata);
        pt->st->config_error = rc;
        if (pt->cb.error && (rc = pt->cb.error(pt->cb.ctx, "config error", 0, 0, rc)) != 0) {
            pt->stop = rc;
            return FRAMES__PT_ABORT;
        }
    }
    /* With erratum SKL014 and an address filter the block path decodes with libipt's
       instruction-flow decoder, which finds the branch a TIP.PGD without IP binds to as
       ptxed does. libipt 2.0.5's block decoder cannot: asked to end blocks at direct
       branches (below), it binds the event to the first direct branch that ends a block
       even when its target is inside the filter (pt_blk_proceed_skl014 passes the
       filter check's "inside" on as "event reached"), and loses the instructions from
       that target to the branch that left the filter; with ptxed's flags (blocks go on
       over direct branches) it recurses once per instruction round a cycle of them and
       overflows the stack (test_fuzz_regress). */
    if (pt->opt.decoder == FRAMES_PT_DECODER_BLOCK &&
        !(cfg.addr_filter.config.addr_cfg && cfg.errata.skl014)) {
        cfg.flags.variant.block.enable_tick_events = (uint32_t)(pt->opt.tick_events != 0);
        /* always: when blocks continue over direct calls or jumps, libipt 2.0 fills its
           block cache by recursing along them, without bound round a cycle (a stack
           overflow for a trace that leads into one); frames are the same either way */
        cfg.flags.variant.block.end_on_call = 1;
        cfg.flags.variant.block.end_on_jump = 1;
        pt->blk = pt_blk_alloc_decoder(&cfg);
        rc = pt->blk ? pt_blk_set_image(pt->blk, pt->image) : -pte_nomem;
    } else {
        cfg.flags.variant.insn.enable_tick_events = (uint32_t)(pt->opt.tick_events != 0);
        pt->insn = pt_insn_alloc_decoder(&cfg);
        rc = pt->insn ? pt_insn_set_image(pt->insn, pt->image) : -pte_nomem;
    }
    if (rc < 0)
        return frames__pt_fail(err, FRAMES_PT_E_LIBIPT, "cannot create the decoder: %s",
                               frames__pt_errstr(rc));
    pt->cur_image = pt->image;
    return 0;
}

FRAMES_PT_DEF int frames_pt_decode(frames_pt *pt, frames_writer *w, frames_pt_stats *stp,
                                frames_error *err) {
    frames_pt_stats local;
    size_t i;
    int rc;
    frames_pt_stats *st = stp ? stp : &local;
    memset(st, 0, sizeof *st);
    if (pt->decoded) return frames__pt_fail(err, FRAMES_E_STATE, "%s", "already decoded");
    if (!pt->trace || !pt->trace_size)
        return frames__pt_fail(err, FRAMES_E_INVALID, "%s", "no trace to decode");
    pt->decoded = 1;
    pt->w = w;
    pt->st = st;
    pt->err = err;
    frames__clear_error(err);
    st->trace_bytes = pt->trace_size;
    pt->next_progress = pt->opt.progress_every;
    if (w && !(pt->batch = (uint8_t *)FRAMES_MALLOC(FRAMES__PT_BATCH, pt->actx)))
        return frames__pt_fail(err, FRAMES_E_NOMEM, "%s", "out of memory");
    rc = frames__pt_alloc_decoder(pt, err);
    if (rc == FRAMES_OK) {
        for (i = 0; i < pt->nmodules && rc == FRAMES_OK; i++)
            rc = frames__pt_write_modload(pt, pt->modules[i].name, pt->modules[i].low,
                                          pt->modules[i].high);
        if (rc == FRAMES_OK) {
            frames__pt_sb_start(pt);
            rc = pt->stop || pt->werr ? FRAMES__PT_ABORT
               : pt->blk ? frames__pt_run_block(pt) : frames__pt_run_insn(pt);
        }
        if (rc == FRAMES_OK && pt->specn) frames__pt_spec_resolve(pt, 0);   /* unresolved */
        if (pt->w && !pt->werr) frames__pt_flush_batch(pt);   /* also when a callback stopped us */
        if (rc == FRAMES_OK && pt->cb.progress)
            pt->cb.progress(pt->cb.ctx, pt->trace_size, pt->trace_size);
    }
    pt->err = NULL;
    if (rc == FRAMES__PT_ABORT || pt->werr || pt->stop) {
        if (pt->werr) return pt->werr;
        if (pt->stop)
            return frames__pt_fail(err, FRAMES_E_STOPPED, "stopped by a callback (%d)", pt->stop);
        return frames__pt_fail(err, FRAMES_E_STATE, "%s", "decoding stopped");
    }
    return rc;
}

/* --------------------------------------------------------------------------------------
   ptxed-compatible printing
   -------------------------------------------------------------------------------------- */

static const char *frames__pt_mode_name(int mode) {
    switch (mode) {
    case ptem_unknown: return "<unknown>";
    case ptem_16bit: return "16-bit";
    case ptem_32bit: return "32-bit";
    case ptem_64bit: return "64-bit";
    default: return "<invalid>";
    }
}

/* snprintf that appends at *pos and never overruns */
static void frames__pt_cat(char *buf, size_t n, size_t *pos, const char *fmt, ...)
    FRAMES__PRINTF(4, 5);
static void frames__pt_cat(char *buf, size_t n, size_t *pos, const char *fmt, ...) {
    va_list ap;
    int k;
    if (*pos >= n) return;
    va_start(ap, fmt);
    k = vsnprintf(buf + *pos, n - *pos, fmt, ap);
    va_end(ap);
    if (k > 0) *pos += (size_t)k;
    if (*pos >= n) *pos = n - 1;
}

#define FRAMES__PT_X(v) ((unsigned long long)(v))

FRAMES_PT_DEF int frames_pt_format_event(char *buf, size_t n, const struct pt_event *ev,
                                      unsigned flags) {
    size_t pos = 0;
    int ip = (flags & FRAMES_PT_PRINT_EVENT_IP) != 0, sup = ev->ip_suppressed;
    if (!n) return 0;
    buf[0] = 0;
    switch (ev->type) {
    case ptev_enabled:
        frames__pt_cat(buf, n, &pos, "%s", ev->variant.enabled.resumed ? "resumed" : "enabled");
        if (ip) frames__pt_cat(buf, n, &pos, ", ip: %016llx", FRAMES__PT_X(ev->variant.enabled.ip));
        break;
    case ptev_disabled:
        frames__pt_cat(buf, n, &pos, "disabled");
        if (ip && !sup) frames__pt_cat(buf, n, &pos, ", ip: %016llx", FRAMES__PT_X(ev->variant.disabled.ip));
        break;
    case ptev_async_disabled:
        frames__pt_cat(buf, n, &pos, "disabled");
        if (ip) {
            frames__pt_cat(buf, n, &pos, ", at: %016llx", FRAMES__PT_X(ev->variant.async_disabled.at));
            if (!sup) frames__pt_cat(buf, n, &pos, ", ip: %016llx", FRAMES__PT_X(ev->variant.async_disabled.ip));
        }
        break;
    case ptev_async_branch:
        frames__pt_cat(buf, n, &pos, "interrupt");
        if (ip) {
            frames__pt_cat(buf, n, &pos, ", from: %016llx", FRAMES__PT_X(ev->variant.async_branch.from));
            if (!sup) frames__pt_cat(buf, n, &pos, ", to: %016llx", FRAMES__PT_X(ev->variant.async_branch.to));
        }
        break;
    case ptev_paging:
        frames__pt_cat(buf, n, &pos, "paging, cr3: %016llx%s", FRAMES__PT_X(ev->variant.paging.cr3),
                       ev->variant.paging.non_root ? ", nr" : "");
        break;
    case ptev_async_paging:
        frames__pt_cat(buf, n, &pos, "paging, cr3: %016llx%s",
                       FRAMES__PT_X(ev->variant.async_paging.cr3),
                       ev->variant.async_paging.non_root ? ", nr" : "");
        if (ip) frames__pt_cat(buf, n, &pos, ", ip: %016llx", FRAMES__PT_X(ev->variant.async_paging.ip));
        break;
    case ptev_overflow:
        frames__pt_cat(buf, n, &pos, "overflow");
        if (ip && !sup) frames__pt_cat(buf, n, &pos, ", ip: %016llx", FRAMES__PT_X(ev->variant.overflow.ip));
        break;
    case ptev_exec_mode:
        frames__pt_cat(buf, n, &pos, "exec mode: %s", frames__pt_mode_name(ev->variant.exec_mode.mode));
        if (ip && !sup) frames__pt_cat(buf, n, &pos, ", ip: %016llx", FRAMES__PT_X(ev->variant.exec_mode.ip));
        break;
    case ptev_tsx:
        frames__pt_cat(buf, n, &pos, "%s", ev->variant.tsx.aborted ? "aborted"
                                           : ev->variant.tsx.speculative ? "begin transaction"
                                                                        : "committed");
        if (ip && !sup) frames__pt_cat(buf, n, &pos, ", ip: %016llx", FRAMES__PT_X(ev->variant.tsx.ip));
        break;
    case ptev_stop:
        frames__pt_cat(buf, n, &pos, "stopped");
        break;
    case ptev_vmcs:
        frames__pt_cat(buf, n, &pos, "vmcs, base: %016llx", FRAMES__PT_X(ev->variant.vmcs.base));
        break;
    case ptev_async_vmcs:
        frames__pt_cat(buf, n, &pos, "vmcs, base: %016llx", FRAMES__PT_X(ev->variant.async_vmcs.base));
        if (ip) frames__pt_cat(buf, n, &pos, ", ip: %016llx", FRAMES__PT_X(ev->variant.async_vmcs.ip));
        break;
    case ptev_exstop:
        frames__pt_cat(buf, n, &pos, "exstop");
        if (ip && !sup) frames__pt_cat(buf, n, &pos, ", ip: %016llx", FRAMES__PT_X(ev->variant.exstop.ip));
        break;
    case ptev_mwait:
        frames__pt_cat(buf, n, &pos, "mwait %x %x", (unsigned)ev->variant.mwait.hints,
                       (unsigned)ev->variant.mwait.ext);
        if (ip && !sup) frames__pt_cat(buf, n, &pos, ", ip: %016llx", FRAMES__PT_X(ev->variant.mwait.ip));
        break;
    case ptev_pwre:
        frames__pt_cat(buf, n, &pos, "pwre c%u.%u", (ev->variant.pwre.state + 1u) & 0xfu,
                       (ev->variant.pwre.sub_state + 1u) & 0xfu);
        if (ev->variant.pwre.hw) frames__pt_cat(buf, n, &pos, " hw");
        break;
    case ptev_pwrx:
        frames__pt_cat(buf, n, &pos, "pwrx %s%s%sc%u (c%u)", ev->variant.pwrx.interrupt ? "int: " : "",
                       ev->variant.pwrx.store ? "st: " : "",
                       ev->variant.pwrx.autonomous ? "hw: " : "",
                       (ev->variant.pwrx.last + 1u) & 0xfu, (ev->variant.pwrx.deepest + 1u) & 0xfu);
        break;
    case ptev_ptwrite:
        frames__pt_cat(buf, n, &pos, "ptwrite: %llx", FRAMES__PT_X(ev->variant.ptwrite.payload));
        if (ip && !sup) frames__pt_cat(buf, n, &pos, ", ip: %016llx", FRAMES__PT_X(ev->variant.ptwrite.ip));
        break;
    case ptev_tick:
        frames__pt_cat(buf, n, &pos, "tick");
        if (ip && !sup) frames__pt_cat(buf, n, &pos, ", ip: %016llx", FRAMES__PT_X(ev->variant.tick.ip));
        break;
    case ptev_cbr:
        frames__pt_cat(buf, n, &pos, "cbr: %x", (unsigned)ev->variant.cbr.ratio);
        break;
    case ptev_mnt:
        frames__pt_cat(buf, n, &pos, "mnt: %llx", FRAMES__PT_X(ev->variant.mnt.payload));
        break;
    default:
        frames__pt_cat(buf, n, &pos, "event %d", (int)ev->type);
        break;
    }
    return (int)pos;
}

FRAMES_PT_DEF int frames_pt_format_sb_record(char *buf, size_t n, const frames_pt_sb_record *r,
                                          unsigned flags) {
    size_t pos = 0;
    int verbose = (flags & FRAMES_PT_PRINT_SB_VERBOSE) != 0;
    const char *sfx;
    if (!n) return 0;
    buf[0] = 0;
    switch (r->type) {
    case FRAMES__PERF_MMAP:
        if (verbose)
            frames__pt_cat(buf, n, &pos, "PERF_RECORD_MMAP\n  pid: %x\n  tid: %x\n  addr: %llx\n"
                           "  len: %llx\n  pgoff: %llx\n  filename: %s", r->pid, r->tid,
                           FRAMES__PT_X(r->addr), FRAMES__PT_X(r->len), FRAMES__PT_X(r->pgoff), r->name);
        else
            frames__pt_cat(buf, n, &pos, "PERF_RECORD_MMAP  %x/%x, %llx, %llx, %llx, %s", r->pid,
                           r->tid, FRAMES__PT_X(r->addr), FRAMES__PT_X(r->len),
                           FRAMES__PT_X(r->pgoff), r->name);
        break;
    case FRAMES__PERF_MMAP2:
        if (verbose)
            frames__pt_cat(buf, n, &pos, "PERF_RECORD_MMAP2\n  pid: %x\n  tid: %x\n  addr: %llx\n"
                           "  len: %llx\n  pgoff: %llx\n  maj: %x\n  min: %x\n  ino: %llx\n"
                           "  ino_generation: %llx\n  prot: %x\n  flags: %x\n  filename: %s",
                           r->pid, r->tid, FRAMES__PT_X(r->addr), FRAMES__PT_X(r->len),
                           FRAMES__PT_X(r->pgoff), r->maj, r->min, FRAMES__PT_X(r->ino),
                           FRAMES__PT_X(r->ino_generation), r->prot, r->mflags, r->name);
        else
            frames__pt_cat(buf, n, &pos, "PERF_RECORD_MMAP2  %x/%x, %llx, %llx, %llx, %x, %x, %llx,"
                           " %llx, %x, %x, %s", r->pid, r->tid, FRAMES__PT_X(r->addr),
                           FRAMES__PT_X(r->len), FRAMES__PT_X(r->pgoff), r->maj, r->min,
                           FRAMES__PT_X(r->ino), FRAMES__PT_X(r->ino_generation), r->prot,
                           r->mflags, r->name);
        break;
    case FRAMES__PERF_LOST:
        if (verbose)
            frames__pt_cat(buf, n, &pos, "PERF_RECORD_LOST\n  id: %llx\n  lost: %llx",
                           FRAMES__PT_X(r->id), FRAMES__PT_X(r->lost));
        else
            frames__pt_cat(buf, n, &pos, "PERF_RECORD_LOST  %llx, %llx", FRAMES__PT_X(r->id),
                           FRAMES__PT_X(r->lost));
        break;
    case FRAMES__PERF_COMM:
        sfx = (r->misc & FRAMES__PERF_MISC_COMM_EXEC) ? ".EXEC" : "";
        if (verbose)
            frames__pt_cat(buf, n, &pos, "PERF_RECORD_COMM%s\n  pid: %x\n  tid: %x\n  comm: %s", sfx,
                           r->pid, r->tid, r->name);
        else
            frames__pt_cat(buf, n, &pos, "PERF_RECORD_COMM%s  %x/%x, %s", sfx, r->pid, r->tid, r->name);
        break;
    case FRAMES__PERF_EXIT:
    case FRAMES__PERF_FORK:
        sfx = r->type == FRAMES__PERF_EXIT ? "EXIT" : "FORK";
        if (verbose)
            frames__pt_cat(buf, n, &pos, "PERF_RECORD_%s\n  pid: %x\n  ppid: %x\n  tid: %x\n"
                           "  ptid: %x\n  time: %llx", sfx, r->pid, r->ppid, r->tid, r->ptid,
                           FRAMES__PT_X(r->time));
        else
            frames__pt_cat(buf, n, &pos, "PERF_RECORD_%s  %x/%x, %x/%x, %llx", sfx, r->pid, r->tid,
                           r->ppid, r->ptid, FRAMES__PT_X(r->time));
        break;
    case FRAMES__PERF_THROTTLE:
    case FRAMES__PERF_UNTHROTTLE:
        sfx = r->type == FRAMES__PERF_THROTTLE ? "THROTTLE" : "UNTHROTTLE";
        if (verbose)
            frames__pt_cat(buf, n, &pos, "PERF_RECORD_%s\n  time: %llx\n  id: %llx\n  stream_id: %llx",
                           sfx, FRAMES__PT_X(r->time), FRAMES__PT_X(r->id),
                           FRAMES__PT_X(r->stream_id));
        else
            frames__pt_cat(buf, n, &pos, "PERF_RECORD_%s  %llx, %llx, %llx", sfx,
                           FRAMES__PT_X(r->time), FRAMES__PT_X(r->id), FRAMES__PT_X(r->stream_id));
        break;
    case FRAMES__PERF_AUX:
        sfx = (r->aux_flags & 1) ? ".TRUNCATED" : "";
        if (verbose)
            frames__pt_cat(buf, n, &pos, "PERF_RECORD_AUX%s\n  aux offset: %llx\n  aux size: %llx\n"
                           "  flags: %llx", sfx, FRAMES__PT_X(r->aux_offset),
                           FRAMES__PT_X(r->aux_size), FRAMES__PT_X(r->aux_flags));
        else
            frames__pt_cat(buf, n, &pos, "PERF_RECORD_AUX%s  %llx, %llx, %llx", sfx,
                           FRAMES__PT_X(r->aux_offset), FRAMES__PT_X(r->aux_size),
                           FRAMES__PT_X(r->aux_flags));
        break;
    case FRAMES__PERF_ITRACE_START:
        if (verbose)
            frames__pt_cat(buf, n, &pos, "PERF_RECORD_ITRACE_START\n  pid: %x\n  tid: %x", r->pid, r->tid);
        else
            frames__pt_cat(buf, n, &pos, "PERF_RECORD_ITRACE_START  %x/%x", r->pid, r->tid);
        break;
    case FRAMES__PERF_LOST_SAMPLES:
        if (verbose)
            frames__pt_cat(buf, n, &pos, "PERF_RECORD_LOST_SAMPLES\n  lost: %llx", FRAMES__PT_X(r->lost));
        else
            frames__pt_cat(buf, n, &pos, "PERF_RECORD_LOST_SAMPLES  %llx", FRAMES__PT_X(r->lost));
        break;
    case FRAMES__PERF_SWITCH:
        frames__pt_cat(buf, n, &pos, "PERF_RECORD_SWITCH.%s",
                       (r->misc & FRAMES__PERF_MISC_SWITCH_OUT) ? "OUT" : "IN");
        break;
    case FRAMES__PERF_SWITCH_CPU_WIDE: {
        int out = (r->misc & FRAMES__PERF_MISC_SWITCH_OUT) != 0;
        if (verbose)
            frames__pt_cat(buf, n, &pos, "PERF_RECORD_SWITCH_CPU_WIDE.%s\n  %s pid: %x\n  %s tid: %x",
                           out ? "OUT" : "IN", out ? "next" : "prev", r->pid, out ? "next" : "prev",
                           r->tid);
        else
            frames__pt_cat(buf, n, &pos, "PERF_RECORD_SWITCH_CPU_WIDE.%s  %x/%x", out ? "OUT" : "IN",
                           r->pid, r->tid);
        break;
    }
    default:
        if (verbose)
            frames__pt_cat(buf, n, &pos, "UNKNOWN\n  type: %x\n  misc: %x", (unsigned)r->type,
                           (unsigned)r->misc);
        else
            frames__pt_cat(buf, n, &pos, "UNKNOWN (%x, %x)", (unsigned)r->type, (unsigned)r->misc);
        break;
    }
    /* the sample fields, in pevent's order */
    if (verbose) {
        if (r->samples & FRAMES_PERF_SAMPLE_TID)
            frames__pt_cat(buf, n, &pos, "\n  pid: %x\n  tid: %x", r->s_pid, r->s_tid);
        if (r->samples & FRAMES_PERF_SAMPLE_TIME)
            frames__pt_cat(buf, n, &pos, "\n  time: %llx", FRAMES__PT_X(r->s_time));
        if (r->samples & FRAMES_PERF_SAMPLE_ID)
            frames__pt_cat(buf, n, &pos, "\n  id: %llx", FRAMES__PT_X(r->s_id));
        if (r->samples & FRAMES_PERF_SAMPLE_CPU) frames__pt_cat(buf, n, &pos, "\n  cpu: %x", r->s_cpu);
        if (r->samples & FRAMES_PERF_SAMPLE_STREAM_ID)
            frames__pt_cat(buf, n, &pos, "\n  stream id: %llx", FRAMES__PT_X(r->s_stream_id));
        if (r->samples & FRAMES_PERF_SAMPLE_IDENTIFIER)
            frames__pt_cat(buf, n, &pos, "\n  identifier: %llx", FRAMES__PT_X(r->s_identifier));
    } else {
        frames__pt_cat(buf, n, &pos, "  {");
        if (r->samples & FRAMES_PERF_SAMPLE_TID) frames__pt_cat(buf, n, &pos, " %x/%x", r->s_pid, r->s_tid);
        if (r->samples & FRAMES_PERF_SAMPLE_TIME) frames__pt_cat(buf, n, &pos, " %llx", FRAMES__PT_X(r->s_time));
        if (r->samples & FRAMES_PERF_SAMPLE_ID) frames__pt_cat(buf, n, &pos, " %llx", FRAMES__PT_X(r->s_id));
        if (r->samples & FRAMES_PERF_SAMPLE_CPU) frames__pt_cat(buf, n, &pos, " cpu-%x", r->s_cpu);
        if (r->samples & FRAMES_PERF_SAMPLE_STREAM_ID)
            frames__pt_cat(buf, n, &pos, " %llx", FRAMES__PT_X(r->s_stream_id));
        if (r->samples & FRAMES_PERF_SAMPLE_IDENTIFIER)
            frames__pt_cat(buf, n, &pos, " %llx", FRAMES__PT_X(r->s_identifier));
        frames__pt_cat(buf, n, &pos, " }");
    }
    return (int)pos;
}

static int frames__pt_pr(frames_pt_printer *p, const char *fmt, ...) FRAMES__PRINTF(2, 3);
static int frames__pt_pr(frames_pt_printer *p, const char *fmt, ...) {
    va_list ap;
    int k;
    va_start(ap, fmt);
    k = vfprintf(p->out, fmt, ap);
    va_end(ap);
    if (k < 0) p->failed = 1;
    return 0;
}

static int frames__pt_pr_event(void *ctx, const struct pt_event *ev, uint64_t off) {
    frames_pt_printer *p = (frames_pt_printer *)ctx;
    char buf[256];
    if (ev->status_update || (p->flags & FRAMES_PT_PRINT_QUIET)) return 0;
    frames_pt_format_event(buf, sizeof buf, ev, p->flags);
    frames__pt_pr(p, "[");
    if (p->flags & FRAMES_PT_PRINT_OFFSET) frames__pt_pr(p, "%016llx  ", FRAMES__PT_X(off));
    if ((p->flags & FRAMES_PT_PRINT_EVENT_TIME) && ev->has_tsc)
        frames__pt_pr(p, "%016llx  ", FRAMES__PT_X(ev->tsc));
    frames__pt_pr(p, "%s]\n", buf);
    return 0;
}

static int frames__pt_pr_insn(void *ctx, const frames_pt_insn *in) {
    frames_pt_printer *p = (frames_pt_printer *)ctx;
    unsigned i;
    if (p->flags & FRAMES_PT_PRINT_QUIET) return 0;
    if (p->flags & FRAMES_PT_PRINT_OFFSET) frames__pt_pr(p, "%016llx  ", FRAMES__PT_X(in->offset));
    if (p->flags & FRAMES_PT_PRINT_TIME) frames__pt_pr(p, "%016llx  ", FRAMES__PT_X(in->tsc));
    frames__pt_pr(p, "%s%016llx", in->speculative ? "? " : "", FRAMES__PT_X(in->ip));
    if (p->flags & FRAMES_PT_PRINT_RAW)
        for (i = 0; i < in->size; i++) frames__pt_pr(p, " %02x", in->raw[i]);
    frames__pt_pr(p, "\n");
    return 0;
}

static int frames__pt_pr_error(void *ctx, const char *kind, uint64_t off, uint64_t ip, int code) {
    frames_pt_printer *p = (frames_pt_printer *)ctx;
    frames__pt_pr(p, "[%llx, %llx: %s: %s]\n", FRAMES__PT_X(off), FRAMES__PT_X(ip), kind,
                  frames__pt_errstr(code));
    return 0;
}

static int frames__pt_pr_end(void *ctx) {
    frames_pt_printer *p = (frames_pt_printer *)ctx;
    if (!(p->flags & FRAMES_PT_PRINT_QUIET)) frames__pt_pr(p, "[end of trace]\n");
    return 0;
}

static int frames__pt_pr_sb_record(void *ctx, const frames_pt_sb_record *r) {
    frames_pt_printer *p = (frames_pt_printer *)ctx;
    unsigned f = p->flags;
    char buf[1024];
    if (!(f & (FRAMES_PT_PRINT_SB_COMPACT | FRAMES_PT_PRINT_SB_VERBOSE | FRAMES_PT_PRINT_SB_FILENAME |
               FRAMES_PT_PRINT_SB_OFFSET | FRAMES_PT_PRINT_SB_TIME)))
        return 0;
    if ((f & FRAMES_PT_PRINT_SB_FILENAME) && (f & FRAMES_PT_PRINT_SB_OFFSET))
        frames__pt_pr(p, "%s:%016llx  ", r->source, FRAMES__PT_X(r->offset));
    else if (f & FRAMES_PT_PRINT_SB_FILENAME)
        frames__pt_pr(p, "%s  ", r->source);
    else if (f & FRAMES_PT_PRINT_SB_OFFSET)
        frames__pt_pr(p, "%016llx  ", FRAMES__PT_X(r->offset));
    if ((f & FRAMES_PT_PRINT_SB_TIME) && (r->samples & FRAMES_PERF_SAMPLE_TIME))
        frames__pt_pr(p, "%016llx  ", FRAMES__PT_X(r->tsc));
    if (f & (FRAMES_PT_PRINT_SB_COMPACT | FRAMES_PT_PRINT_SB_VERBOSE)) {
        frames_pt_format_sb_record(buf, sizeof buf, r, f);
        frames__pt_pr(p, "%s", buf);
    }
    frames__pt_pr(p, "\n");
    return 0;
}

static int frames__pt_pr_sb_diag(void *ctx, int code, const char *source, uint64_t off) {
    frames_pt_printer *p = (frames_pt_printer *)ctx;
    if (code >= 0 && !(p->flags & FRAMES_PT_PRINT_SB_WARN)) return 0;
    frames__pt_pr(p, "[%s:%016llx sideband %s: %s]\n", source ? source : "<unknown>",
                  FRAMES__PT_X(off), code < 0 ? "error" : "warning", frames_pt_sb_strerror(code));
    return 0;
}

static int frames__pt_pr_context(void *ctx, const char *name, uint32_t pid, uint32_t tid) {
    frames_pt_printer *p = (frames_pt_printer *)ctx;
    (void)pid;
    (void)tid;
    if (p->flags & FRAMES_PT_PRINT_SB_SWITCH) frames__pt_pr(p, "[context: %s]\n", name);
    return 0;
}

FRAMES_PT_DEF void frames_pt_printer_init(frames_pt_printer *p, FILE *out, unsigned flags) {
    p->out = out;
    p->flags = flags;
    p->failed = 0;
}

FRAMES_PT_DEF frames_pt_callbacks frames_pt_printer_callbacks(frames_pt_printer *p) {
    frames_pt_callbacks cb;
    memset(&cb, 0, sizeof cb);
    cb.ctx = p;
    cb.event = frames__pt_pr_event;
    cb.insn = frames__pt_pr_insn;
    cb.error = frames__pt_pr_error;
    cb.end_of_trace = frames__pt_pr_end;
    cb.sb_record = frames__pt_pr_sb_record;
    cb.sb_diag = frames__pt_pr_sb_diag;
    cb.context = frames__pt_pr_context;
    return cb;
}

/* --------------------------------------------------------------------------------------
   perf.data
   -------------------------------------------------------------------------------------- */

#define FRAMES__PERF_HEADER_ATTR 64
#define FRAMES__PERF_TRACING_DATA 66
#define FRAMES__PERF_AUXTRACE_INFO 70
#define FRAMES__PERF_AUXTRACE 71
#define FRAMES__PERF_TIME_CONV 79
#define FRAMES__PERF_COMPRESSED 81
#define FRAMES__PERF_FEAT_CPUID 9

typedef struct frames__perf_attr {
    uint32_t type;
    uint64_t config, sample_type, flags;
    uint64_t *ids;
    size_t nids;
} frames__perf_attr;

typedef struct frames__perf_piece {
    uint32_t idx, tid;
    int32_t cpu;
    uint64_t off, size;    /* payload in the file */
} frames__perf_piece;

typedef struct frames__perf_sb {
    int32_t cpu;           /* -1: no cpu sample; -2: every record (per-thread traces) */
    uint8_t *data;
    size_t size;
    char name[32];
} frames__perf_sb;

typedef struct frames__perf_rec {
    uint64_t time, seq;
    size_t off;
    uint16_t size;
    int32_t cpu;
} frames__perf_rec;

struct frames_perf {
    void *actx;
    uint8_t *owned;
    const uint8_t *data;
    size_t size;
    frames_perf_info info;
    frames__perf_attr *attrs;
    size_t nattrs;
    int pt_attr;                   /* index of the intel_pt attr, -1 unknown */
    frames__perf_piece *pieces;
    size_t npieces, piececap;
    frames_perf_stream *streams;
    uint8_t **stream_data;         /* joined payloads (NULL: a single piece, in place) */
    const uint8_t **stream_ptr;
    size_t nstreams;
    frames__perf_rec *recs;
    size_t nrecs, reccap;
    frames__perf_sb *sb;
    size_t nsb;
    frames_pt_sample_id *sample_ids;
    size_t nsample_ids;
    frames__pt_idpos *idx;         /* every attr id (value: the attr), sorted, first kept */
    size_t nidx;
    uint64_t priv[32];
    size_t npriv;
};

FRAMES_PT_DEF void frames_perf_close(frames_perf *pd) {
    size_t i;
    if (!pd) return;
    for (i = 0; i < pd->nattrs; i++) FRAMES_FREE(pd->attrs[i].ids, pd->actx);
    for (i = 0; i < pd->nstreams; i++) FRAMES_FREE(pd->stream_data[i], pd->actx);
    for (i = 0; i < pd->nsb; i++) FRAMES_FREE(pd->sb[i].data, pd->actx);
    FRAMES_FREE(pd->attrs, pd->actx);
    FRAMES_FREE(pd->pieces, pd->actx);
    FRAMES_FREE(pd->streams, pd->actx);
    FRAMES_FREE(pd->stream_data, pd->actx);
    FRAMES_FREE((void *)pd->stream_ptr, pd->actx);
    FRAMES_FREE(pd->recs, pd->actx);
    FRAMES_FREE(pd->sb, pd->actx);
    FRAMES_FREE(pd->sample_ids, pd->actx);
    FRAMES_FREE(pd->idx, pd->actx);
    FRAMES_FREE(pd->owned, pd->actx);
    FRAMES_FREE(pd, pd->actx);
}

static int frames__perf_fail(frames_error *err, uint64_t off, const char *what) {
    frames__pt_fail(err, FRAMES_E_FORMAT, "perf.data: %s at offset 0x%llx", what,
                    (unsigned long long)off);
    if (err) err->offset = off;
    return FRAMES_E_FORMAT;
}

/* One attribute: perf_event_attr (attr_size bytes) and the ids section that follows. */
static int frames__perf_add_attr(frames_perf *pd, const uint8_t *a, size_t asize,
                                 const uint8_t *idbytes, size_t nids, frames_error *err) {
    frames__perf_attr *na, *at;
    size_t i;

    if (asize < 48) return frames__perf_fail(err, (uint64_t)(a - pd->data), "perf_event_attr too small");
    na = (frames__perf_attr *)FRAMES_REALLOC(pd->attrs, (pd->nattrs + 1) * sizeof *na, pd->actx);
    if (!na) return frames__pt_fail(err, FRAMES_E_NOMEM, "%s", "out of memory");
    pd->attrs = na;
    at = &na[pd->nattrs];
    memset(at, 0, sizeof *at);
    at->type = frames__le32(a);
    at->config = frames__le64(a + 8);
    at->sample_type = frames__le64(a + 24);
    at->flags = frames__le64(a + 40);
    if (nids) {
        at->ids = (uint64_t *)FRAMES_MALLOC(nids * sizeof *at->ids, pd->actx);
        if (!at->ids) return frames__pt_fail(err, FRAMES_E_NOMEM, "%s", "out of memory");
        for (i = 0; i < nids; i++) at->ids[i] = frames__le64(idbytes + 8 * i);
        at->nids = nids;
    }
    pd->nattrs++;
    return FRAMES_OK;
}

/* The attr a record belongs to: by its PERF_SAMPLE_IDENTIFIER when attrs differ (the
   first attr with that id; pd->idx). */
static const frames__perf_attr *frames__perf_attr_of(const frames_perf *pd, const uint8_t *rec,
                                                     size_t size) {
    size_t i;
    if (!pd->nattrs) return NULL;
    i = frames__pt_find_record_id(pd->idx, pd->nidx, sizeof pd->idx[0], rec, size);
    return &pd->attrs[i < pd->nidx ? pd->idx[i].value : 0];
}

/* Trailer fields of a kernel record: time and cpu (-1 when not sampled). */
static void frames__perf_trailer(const frames__perf_attr *at, const uint8_t *rec, size_t size,
                                 uint64_t *time, int32_t *cpu) {
    uint64_t st = at && (at->flags & (1ull << 18)) ? at->sample_type : 0;   /* sample_id_all */
    size_t len = 0, pos;
    *time = 0;
    *cpu = -1;
    if (st & FRAMES_PERF_SAMPLE_TID) len += 8;
    if (st & FRAMES_PERF_SAMPLE_TIME) len += 8;
    if (st & FRAMES_PERF_SAMPLE_ID) len += 8;
    if (st & FRAMES_PERF_SAMPLE_STREAM_ID) len += 8;
    if (st & FRAMES_PERF_SAMPLE_CPU) len += 8;
    if (st & FRAMES_PERF_SAMPLE_IDENTIFIER) len += 8;
    if (len + 8 > size) return;
    pos = size - len;
    if (st & FRAMES_PERF_SAMPLE_TID) pos += 8;
    if (st & FRAMES_PERF_SAMPLE_TIME) *time = frames__le64(rec + pos), pos += 8;
    if (st & FRAMES_PERF_SAMPLE_ID) pos += 8;
    if (st & FRAMES_PERF_SAMPLE_STREAM_ID) pos += 8;
    if (st & FRAMES_PERF_SAMPLE_CPU) *cpu = (int32_t)frames__le32(rec + pos);
}

static int frames__perf_add_piece(frames_perf *pd, const uint8_t *r, uint64_t payload, uint64_t size,
                              frames_error *err) {
    frames__perf_piece *p;
    if (pd->npieces == pd->piececap) {
        if (FRAMES__GROW(pd->pieces, pd->piececap, pd->npieces + 1, pd->actx) < 0)
            return frames__pt_fail(err, FRAMES_E_NOMEM, "%s", "out of memory");
    }
    p = &pd->pieces[pd->npieces++];
    p->idx = frames__le32(r + 32);
    p->tid = frames__le32(r + 36);
    p->cpu = (int32_t)frames__le32(r + 40);
    p->off = payload;
    p->size = size;
    return FRAMES_OK;
}

static int frames__perf_sb_rec(frames_perf *pd, size_t off, uint16_t size, frames_error *err) {
    frames__perf_rec *r;
    if (pd->nrecs == pd->reccap) {
        if (FRAMES__GROW(pd->recs, pd->reccap, pd->nrecs + 1, pd->actx) < 0)
            return frames__pt_fail(err, FRAMES_E_NOMEM, "%s", "out of memory");
    }
    r = &pd->recs[pd->nrecs];
    r->off = off;
    r->size = size;
    r->seq = pd->nrecs;   /* time and cpu: frames__perf_trailers, once every attr is known */
    pd->nrecs++;
    pd->info.sideband_records++;
    return FRAMES_OK;
}

/* Walk the records of the data section. */
/* The end of the file cuts the record at off, which needs `missing` more bytes. */
static void frames__perf_cut(frames_perf *pd, uint64_t off, uint64_t missing) {
    pd->info.cut_offset = off;
    pd->info.cut_missing = missing;
}

/* The records of [start, end). at_eof: end is the end of the file (pipe mode, a file perf
   record did not finish, a copy cut short), so a record cut by it is the end of the
   recording, not damage: the records before it and the PT bytes it holds are kept. */
static int frames__perf_records(frames_perf *pd, uint64_t start, uint64_t end, int at_eof,
                                frames_error *err) {
    uint64_t off = start;
    int rc;
    while (off + 8 <= end) {
        const uint8_t *r = pd->data + off;
        uint32_t type = frames__le32(r);
        uint16_t size = frames__le16(r + 6);
        uint64_t next = off + size;
        if (size < 8) return frames__perf_fail(err, off, "record smaller than its header");
        if (next > end) {
            if (!at_eof) return frames__perf_fail(err, off, "record runs past the data section");
            frames__perf_cut(pd, off, next - end);
            return FRAMES_OK;
        }
        if (type == FRAMES__PERF_AUXTRACE) {
            uint64_t psize;
            if (size < 48) return frames__perf_fail(err, off, "short AUXTRACE record");
            psize = frames__le64(r + 8);
            if (psize > end - next) {
                if (!at_eof) return frames__perf_fail(err, off, "AUXTRACE data runs past the end");
                frames__perf_cut(pd, off, psize - (end - next));
                return end > next ? frames__perf_add_piece(pd, r, next, end - next, err) : FRAMES_OK;
            }
            if ((rc = frames__perf_add_piece(pd, r, next, psize, err)) < 0) return rc;
            next += psize;
        } else if (type == FRAMES__PERF_AUXTRACE_INFO) {
            size_t i;
            if (size >= 16 && frames__le32(r + 8) == 1) {   /* PERF_AUXTRACE_INTEL_PT */
                pd->npriv = ((size_t)size - 16) / 8;
                if (pd->npriv > 32) pd->npriv = 32;
                for (i = 0; i < pd->npriv; i++) pd->priv[i] = frames__le64(r + 16 + 8 * i);
            }
        } else if (type == FRAMES__PERF_TIME_CONV) {
            if (size >= 32 && !pd->info.have_time_conv) {
                pd->info.time_shift = (uint16_t)frames__le64(r + 8);
                pd->info.time_mult = (uint32_t)frames__le64(r + 16);
                pd->info.time_zero = frames__le64(r + 24);
                pd->info.have_time_conv = 1;
            }
        } else if (type == FRAMES__PERF_HEADER_ATTR) {
            uint32_t asize = size >= 16 ? frames__le32(r + 12) : 0;
            if (asize < 48 || (size_t)asize + 8 > size)
                return frames__perf_fail(err, off, "bad HEADER_ATTR record");
            if ((rc = frames__perf_add_attr(pd, r + 8, asize, r + 8 + asize,
                                            ((size_t)size - 8 - asize) / 8, err)) < 0)
                return rc;
        } else if (type == FRAMES__PERF_TRACING_DATA) {
            uint64_t tsize = size >= 12 ? frames__le32(r + 8) : 0;
            tsize = (tsize + 7) & ~(uint64_t)7;
            if (tsize > end - next) return frames__perf_fail(err, off, "tracing data runs past the end");
            next += tsize;
            pd->info.skipped_records++;
        } else if (type == FRAMES__PERF_COMPRESSED) {
            pd->info.compressed = 1;
            pd->info.skipped_records++;
        } else if (type != 0 && type < 64 && type != 8 && type != 9) {
            if ((rc = frames__perf_sb_rec(pd, (size_t)off, size, err)) < 0) return rc;
        } else {
            pd->info.skipped_records++;
        }
        off = next;
    }
    if (at_eof && off < end) frames__perf_cut(pd, off, 8 - (end - off));
    return FRAMES_OK;
}

/* Time and cpu of every kernel record, from the trailer its attr describes. */
static int frames__perf_trailers(frames_perf *pd, frames_error *err) {
    size_t i, j, n = 0;
    for (i = 0; i < pd->nattrs; i++) n += pd->attrs[i].nids;
    if (pd->nattrs > 1 && n && (pd->attrs[0].sample_type & FRAMES_PERF_SAMPLE_IDENTIFIER)) {
        pd->idx = (frames__pt_idpos *)FRAMES_MALLOC(n * sizeof *pd->idx, pd->actx);
        if (!pd->idx) return frames__pt_fail(err, FRAMES_E_NOMEM, "%s", "out of memory");
        for (i = 0, n = 0; i < pd->nattrs; i++)
            for (j = 0; j < pd->attrs[i].nids; j++, n++) {
                pd->idx[n].id = pd->attrs[i].ids[j];
                pd->idx[n].value = i;
                pd->idx[n].pos = n;
            }
        pd->nidx = frames__pt_sort_ids(pd->idx, n);
    }
    for (i = 0; i < pd->nrecs; i++) {
        frames__perf_rec *r = &pd->recs[i];
        frames__perf_trailer(frames__perf_attr_of(pd, pd->data + r->off, r->size), pd->data + r->off,
                             r->size, &r->time, &r->cpu);
    }
    return FRAMES_OK;
}

static int frames__perf_rec_cmp(const void *a, const void *b) {
    const frames__perf_rec *x = (const frames__perf_rec *)a, *y = (const frames__perf_rec *)b;
    if (x->time != y->time) return x->time < y->time ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Split the sideband records by cpu, each stream sorted by time (records are only
   ordered within rounds), plus one stream of every record for per-thread traces. */
static int frames__perf_split(frames_perf *pd, frames_error *err) {
    size_t i, j;
    if (pd->nrecs > 1) qsort(pd->recs, pd->nrecs, sizeof *pd->recs, frames__perf_rec_cmp);
    for (i = 0; i <= pd->nrecs; i++) {
        int32_t cpu = i < pd->nrecs ? pd->recs[i].cpu : -2;
        frames__perf_sb *sb = NULL, *nsb;
        for (j = 0; j < pd->nsb; j++)
            if (pd->sb[j].cpu == cpu) sb = &pd->sb[j];
        if (sb) continue;
        nsb = (frames__perf_sb *)FRAMES_REALLOC(pd->sb, (pd->nsb + 1) * sizeof *nsb, pd->actx);
        if (!nsb) return frames__pt_fail(err, FRAMES_E_NOMEM, "%s", "out of memory");
        pd->sb = nsb;
        sb = &nsb[pd->nsb++];
        memset(sb, 0, sizeof *sb);
        sb->cpu = cpu;
        if (cpu >= 0) snprintf(sb->name, sizeof sb->name, "sideband-cpu%d", (int)cpu);
        else snprintf(sb->name, sizeof sb->name, "sideband%s", cpu == -1 ? "" : "-all");
    }
    for (j = 0; j < pd->nsb; j++) {
        frames__perf_sb *sb = &pd->sb[j];
        size_t total = 0, pos = 0;
        for (i = 0; i < pd->nrecs; i++)
            if (sb->cpu == -2 || pd->recs[i].cpu == sb->cpu) total += pd->recs[i].size;
        if (!total) continue;
        sb->data = (uint8_t *)FRAMES_MALLOC(total, pd->actx);
        if (!sb->data) return frames__pt_fail(err, FRAMES_E_NOMEM, "%s", "out of memory");
        for (i = 0; i < pd->nrecs; i++)
            if (sb->cpu == -2 || pd->recs[i].cpu == sb->cpu) {
                memcpy(sb->data + pos, pd->data + pd->recs[i].off, pd->recs[i].size);
                pos += pd->recs[i].size;
            }
        sb->size = total;
    }
    return FRAMES_OK;
}

/* PT streams: per mmap idx the pieces joined in file order; snapshots piece by piece. */
static int frames__perf_streams(frames_perf *pd, frames_error *err) {
    size_t i, j, n = 0;
    int snapshot = pd->info.snapshot_mode;
    size_t cap = pd->npieces;
    if (!cap) return FRAMES_OK;
    pd->streams = (frames_perf_stream *)FRAMES_MALLOC(cap * sizeof *pd->streams, pd->actx);
    pd->stream_data = (uint8_t **)FRAMES_MALLOC(cap * sizeof *pd->stream_data, pd->actx);
    pd->stream_ptr = (const uint8_t **)FRAMES_MALLOC(cap * sizeof *pd->stream_ptr, pd->actx);
    if (!pd->streams || !pd->stream_data || !pd->stream_ptr)
        return frames__pt_fail(err, FRAMES_E_NOMEM, "%s", "out of memory");
    for (i = 0; i < pd->npieces; i++) {
        const frames__perf_piece *p = &pd->pieces[i];
        frames_perf_stream *s = NULL;
        if (!snapshot)
            for (j = 0; j < n; j++)
                if (pd->streams[j].idx == p->idx) s = &pd->streams[j];
        if (!s) {
            s = &pd->streams[n];
            memset(s, 0, sizeof *s);
            s->idx = p->idx;
            s->cpu = p->cpu;
            s->tid = p->tid;
            pd->stream_data[n] = NULL;
            pd->stream_ptr[n] = pd->data + p->off;
            n++;
        }
        s->size += p->size;
        s->pieces++;
    }
    pd->nstreams = n;
    for (j = 0; j < n; j++) {
        uint64_t pos = 0;
        if (pd->streams[j].pieces < 2) continue;
        pd->stream_data[j] = (uint8_t *)FRAMES_MALLOC((size_t)pd->streams[j].size, pd->actx);
        if (!pd->stream_data[j]) return frames__pt_fail(err, FRAMES_E_NOMEM, "%s", "out of memory");
        for (i = 0; i < pd->npieces; i++)
            if (pd->pieces[i].idx == pd->streams[j].idx) {
                memcpy(pd->stream_data[j] + pos, pd->data + pd->pieces[i].off,
                       (size_t)pd->pieces[i].size);
                pos += pd->pieces[i].size;
            }
        pd->stream_ptr[j] = pd->stream_data[j];
    }
    return FRAMES_OK;
}

/* HEADER_CPUID from the feature sections after the data section. */
static void frames__perf_cpuid(frames_perf *pd, const uint8_t *h, uint64_t data_end) {
    unsigned bit, idx = 0;
    uint64_t sec, off, len;
    for (bit = 0; bit < FRAMES__PERF_FEAT_CPUID; bit++)
        if ((frames__le64(h + 72 + 8 * (bit / 64)) >> (bit % 64)) & 1) idx++;
    if (!((frames__le64(h + 72) >> FRAMES__PERF_FEAT_CPUID) & 1)) return;
    sec = data_end + 16ull * idx;
    if (sec > pd->size || pd->size - sec < 16) return;
    off = frames__le64(pd->data + sec);
    len = frames__le64(pd->data + sec + 8);
    if (off > pd->size || len > pd->size - off || len < 4) return;
    len = frames__le32(pd->data + off) < len - 4 ? frames__le32(pd->data + off) : len - 4;
    if (len >= sizeof pd->info.cpuid) len = sizeof pd->info.cpuid - 1;
    memcpy(pd->info.cpuid, pd->data + off + 4, (size_t)len);
    pd->info.cpuid[len] = 0;
}

static void frames__perf_finish_info(frames_perf *pd) {
    frames_perf_info *in = &pd->info;
    const frames__perf_attr *at = NULL;
    size_t i, k = 0;
    in->nattrs = pd->nattrs;
    if (pd->npriv > 0) in->pt_pmu_type = (uint32_t)pd->priv[0];
    for (i = 0; i < pd->nattrs; i++)
        if (pd->npriv > 0 && pd->attrs[i].type == in->pt_pmu_type) at = &pd->attrs[i];
    if (!at && pd->nattrs) at = &pd->attrs[0];
    if (at) {
        in->pt_config = at->config;
        in->sample_type = at->sample_type;
        in->sample_id_all = (int)((at->flags >> 18) & 1);
        in->context_switch = (int)((at->flags >> 26) & 1);
        in->exclude_user = (int)((at->flags >> 4) & 1);
        in->exclude_kernel = (int)((at->flags >> 5) & 1);
    }
    for (i = 0; i < pd->nattrs; i++) in->context_switch |= (int)((pd->attrs[i].flags >> 26) & 1);
    if (pd->npriv > 4 && pd->priv[4]) {   /* cap_user_time_zero: conversion possible */
        in->time_shift = (uint16_t)pd->priv[1];
        in->time_mult = (uint32_t)pd->priv[2];
        in->time_zero = pd->priv[3];
        in->have_time_conv = 1;
    }
    if (pd->npriv > 7) in->have_sched_switch = (int)pd->priv[7];
    if (pd->npriv > 8) in->snapshot_mode = pd->priv[8] != 0;
    if (pd->npriv > 9) in->per_cpu_mmaps = pd->priv[9] != 0;
    in->mtc_freq = (uint8_t)((in->pt_config >> (pd->npriv > 11 ? pd->priv[11] & 63 : 14)) & 0xf);
    if (pd->npriv > 13) {
        in->tsc_ctc_n = (uint32_t)pd->priv[12];
        in->tsc_ctc_d = (uint32_t)pd->priv[13];
    }
    if (pd->npriv > 15) in->nom_freq = (uint8_t)pd->priv[15];
    /* sample types by id, for records of other attrs (e.g. the sideband dummy event) */
    for (i = 0; i < pd->nattrs; i++) k += pd->attrs[i].nids;
    if (pd->nattrs > 1 && k) {
        pd->sample_ids = (frames_pt_sample_id *)FRAMES_MALLOC(k * sizeof *pd->sample_ids, pd->actx);
        if (pd->sample_ids) {
            size_t j;
            for (i = 0; i < pd->nattrs; i++)
                for (j = 0; j < pd->attrs[i].nids; j++) {
                    pd->sample_ids[pd->nsample_ids].id = pd->attrs[i].ids[j];
                    pd->sample_ids[pd->nsample_ids].sample_type =
                        (pd->attrs[i].flags >> 18) & 1 ? pd->attrs[i].sample_type : 0;
                    pd->nsample_ids++;
                }
        }
    }
}

FRAMES_PT_DEF int frames_perf_open_memory(frames_perf **out, const void *data, size_t size,
                                       void *actx, frames_error *err) {
    frames_perf *pd;
    const uint8_t *h = (const uint8_t *)data;
    uint64_t hsize, data_off, data_size;
    int rc;
    *out = NULL;
    if (size < 16 || memcmp(h, "PERFILE2", 8) != 0)
        return frames__pt_fail(err, FRAMES_E_FORMAT, "%s", "not a perf.data file (no PERFILE2 magic)");
    pd = (frames_perf *)FRAMES_MALLOC(sizeof *pd, actx);
    if (!pd) return frames__pt_fail(err, FRAMES_E_NOMEM, "%s", "out of memory");
    memset(pd, 0, sizeof *pd);
    pd->actx = actx;
    pd->data = h;
    pd->size = size;
    pd->pt_attr = -1;
    hsize = frames__le64(h + 8);
    if (hsize == 16) {   /* pipe mode: attrs arrive as records */
        pd->info.pipe_mode = 1;
        data_off = 16;
        data_size = size - 16;
        rc = frames__perf_records(pd, data_off, size, 1, err);
    } else {
        uint64_t attr_size, attrs_off, attrs_size, i, ids_total = 0;
        int at_eof;
        if (hsize < 104 || size < 104) {
            frames_perf_close(pd);
            return frames__perf_fail(err, 8, "bad header size");
        }
        attr_size = frames__le64(h + 16);
        attrs_off = frames__le64(h + 24);
        attrs_size = frames__le64(h + 32);
        data_off = frames__le64(h + 40);
        data_size = frames__le64(h + 48);
        if (attr_size < 16 + 48 || attrs_off > size || attrs_size > size - attrs_off ||
            data_off > size) {
            frames_perf_close(pd);
            return frames__perf_fail(err, 16, "header sections outside the file");
        }
        if (data_off < hsize) {
            frames_perf_close(pd);
            return frames__perf_fail(err, 40, "data section inside the file header");
        }
        /* perf record writes the data size when it finishes (0 until then, as perf report
           knows); a copy cut short ends inside the data: both are read to the end of the
           file, and the feature sections that would follow the data are not there */
        pd->info.unterminated = data_size == 0;
        at_eof = data_size == 0 || data_size >= size - data_off;
        if (at_eof) data_size = size - data_off;
        rc = FRAMES_OK;
        for (i = 0; rc == FRAMES_OK && i + attr_size <= attrs_size; i += attr_size) {
            const uint8_t *a = h + attrs_off + i;
            uint64_t ids_off = frames__le64(a + attr_size - 16);
            uint64_t ids_size = frames__le64(a + attr_size - 8);
            if (ids_off > size || ids_size > size - ids_off) {
                rc = frames__perf_fail(err, attrs_off + i, "attribute ids outside the file");
                break;
            }
            /* each attr has its own ids: together they fit in the file (shared ones would
               make the copies, and the id lookups, grow with the square of its size) */
            if (ids_size > size - ids_total) {
                rc = frames__perf_fail(err, attrs_off + i, "attribute ids overlap");
                break;
            }
            ids_total += ids_size;
            rc = frames__perf_add_attr(pd, a, (size_t)(attr_size - 16), h + ids_off,
                                       (size_t)(ids_size / 8), err);
        }
        if (rc == FRAMES_OK) rc = frames__perf_records(pd, data_off, data_off + data_size, at_eof, err);
        if (rc == FRAMES_OK && !at_eof) frames__perf_cpuid(pd, h, data_off + data_size);
    }
    if (rc == FRAMES_OK) {
        frames__perf_finish_info(pd);
        if ((rc = frames__perf_trailers(pd, err)) == FRAMES_OK) rc = frames__perf_split(pd, err);
    }
    if (rc == FRAMES_OK) rc = frames__perf_streams(pd, err);
    if (rc == FRAMES_OK && pd->info.compressed && !pd->npieces)
        rc = frames__pt_fail(err, FRAMES_E_UNSUPPORTED, "%s",
                             "perf.data: compressed records (perf record -z) are not supported; "
                             "decompress with 'perf inject -i IN -o OUT'");
    if (rc < 0) {
        frames_perf_close(pd);
        return rc;
    }
    *out = pd;
    frames__clear_error(err);
    return FRAMES_OK;
}

FRAMES_PT_DEF int frames_perf_open_path(frames_perf **out, const char *path, void *actx,
                                     frames_error *err) {
    uint8_t *buf;
    size_t n;
    int rc;
    *out = NULL;
    if ((rc = frames__pt_read_file(path, 0, 0, actx, &buf, &n, err)) < 0) return rc;
    if ((rc = frames_perf_open_memory(out, buf, n, actx, err)) < 0) {
        FRAMES_FREE(buf, actx);
        return rc;
    }
    (*out)->owned = buf;
    return FRAMES_OK;
}

FRAMES_PT_DEF const frames_perf_info *frames_perf_info_get(const frames_perf *pd) { return &pd->info; }
FRAMES_PT_DEF size_t frames_perf_nstreams(const frames_perf *pd) { return pd->nstreams; }
FRAMES_PT_DEF const frames_perf_stream *frames_perf_stream_at(const frames_perf *pd, size_t i) {
    return i < pd->nstreams ? &pd->streams[i] : NULL;
}

FRAMES_PT_DEF void frames_perf_pt_options(const frames_perf *pd, frames_pt_options *o) {
    const frames_perf_info *in = &pd->info;
    if (in->cpuid[0]) frames_pt_parse_cpu(in->cpuid, &o->cpu);
    o->mtc_freq = in->mtc_freq;
    o->nom_freq = in->nom_freq;
    o->cpuid_0x15_eax = in->tsc_ctc_d;
    o->cpuid_0x15_ebx = in->tsc_ctc_n;
}

FRAMES_PT_DEF void frames_perf_sb_config(const frames_perf *pd, frames_pt_sb_config *c,
                                      const frames_pt_sb_config *base) {
    const frames_perf_info *in = &pd->info;
    frames_pt_sb_config_default(c);
    if (base) *c = *base;
    c->sample_type = in->sample_id_all ? in->sample_type : 0;
    c->sample_ids = pd->sample_ids;
    c->nsample_ids = pd->nsample_ids;
    if (in->have_time_conv && in->time_mult && in->time_shift < 64) {
        c->time_shift = in->time_shift;
        c->time_mult = in->time_mult ? in->time_mult : 1;
        c->time_zero = in->time_zero;
    }
    /* without kallsyms: all of the upper canonical half is kernel on x86-64 Linux */
    if ((!base || base->kernel_start == UINT64_MAX) && !in->exclude_kernel)
        c->kernel_start = 0xffff800000000000ull;
}

FRAMES_PT_DEF frames_bytes frames_perf_sideband(const frames_perf *pd, int32_t cpu) {
    size_t j;
    for (j = 0; j < pd->nsb; j++)
        if (pd->sb[j].cpu == cpu) return frames_bytes_of(pd->sb[j].data, pd->sb[j].size);
    return frames_bytes_of(NULL, 0);
}

FRAMES_PT_DEF int frames_perf_attach(const frames_perf *pd, size_t i, frames_pt *pt,
                                  const frames_pt_sb_config *base, frames_error *err) {
    frames_pt_sb_config c;
    const frames_perf_stream *s = frames_perf_stream_at(pd, i);
    size_t j;
    int rc;
    if (!s) return frames__pt_fail(err, FRAMES_E_RANGE, "no PT stream %u", (unsigned)i);
    if ((rc = frames_pt_set_trace(pt, pd->stream_ptr[i], (size_t)s->size, err)) < 0) return rc;
    frames_perf_sb_config(pd, &c, base);
    for (j = 0; j < pd->nsb; j++) {
        const frames__perf_sb *sb = &pd->sb[j];
        int primary = s->cpu >= 0 ? sb->cpu == s->cpu : sb->cpu == -2;
        if (!sb->size || (sb->cpu == -2 && s->cpu >= 0) || (s->cpu < 0 && sb->cpu != -2)) continue;
        if ((rc = frames_pt_add_pevent(pt, &c, sb->name, sb->data, sb->size, primary, 0, err)) < 0)
            return rc;
    }
    return FRAMES_OK;
}

#ifdef __cplusplus
}
#endif
#endif /* FRAMES_PT_IMPLEMENTATION_INCLUDED */
#endif /* FRAMES_PT_IMPLEMENTATION || FRAMES_ALL_IMPLEMENTATION */

/*
 * MIT License
 *
 * Copyright (c) 2026 the frames authors
 *
 * Permission is hereby granted, free of charge, to any person obtaining a copy
 * of this software and associated documentation files (the "Software"), to deal
 * in the Software without restriction, including without limitation the rights
 * to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
 * copies of the Software, and to permit persons to whom the Software is
 * furnished to do so, subject to the following conditions:
 *
 * The above copyright notice and this permission notice shall be included in all
 * copies or substantial portions of the Software.
 *
 * THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
 * IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
 * FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
 * AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
 * LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
 * OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
 * SOFTWARE.
 */
