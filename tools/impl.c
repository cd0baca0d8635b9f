/* The one translation unit that holds the implementations of the headers. The parts
   that need an optional library are compiled when build.sh found it (FRAMES_HAVE_IPT,
   FRAMES_HAVE_ZSTD: see opt_flags there). */
#define FRAMES_ALL_IMPLEMENTATION
#include "frames.h"
#include "frames_query.h"
#include "frames_interop.h"
#include "frames_vprof.h"
#include "frames_parquet.h"
#include "frames_sym.h"
#ifdef FRAMES_HAVE_IPT
#include "frames_pt.h"
#endif
#ifdef FRAMES_HAVE_ZSTD
#include "frames_zstd.h"
#endif
#include "frames_replay.h"
#include "frames_gdb.h"
