/* The one translation unit that holds the implementations of the headers. */
#define FRAMES_IMPLEMENTATION
#include "frames.h"
#if __has_include("frames_query.h")
#define FRAMES_QUERY_IMPLEMENTATION
#include "frames_query.h"
#endif
#if __has_include("frames_interop.h")
#define FRAMES_INTEROP_IMPLEMENTATION
#include "frames_interop.h"
#endif
#if __has_include("frames_vprof.h")
#define FRAMES_VPROF_IMPLEMENTATION
#include "frames_vprof.h"
#endif
#if defined(FRAMES_HAVE_IPT) && __has_include("frames_pt.h")
#define FRAMES_PT_IMPLEMENTATION
#include "frames_pt.h"
#endif
#if __has_include("frames_parquet.h")
#define FRAMES_PARQUET_IMPLEMENTATION
#include "frames_parquet.h"
#endif
#if defined(FRAMES_HAVE_ZSTD) && __has_include("frames_zstd.h")
#define FRAMES_ZSTD_IMPLEMENTATION
#include "frames_zstd.h"
#endif
#if __has_include("frames_sym.h")
#define FRAMES_SYM_IMPLEMENTATION
#include "frames_sym.h"
#endif
#if __has_include("frames_replay.h")
#if defined(FRAMES_HAVE_ZSTD)
#define FRAMES_REPLAY_ZSTD
#endif
#define FRAMES_REPLAY_IMPLEMENTATION
#include "frames_replay.h"
#endif
