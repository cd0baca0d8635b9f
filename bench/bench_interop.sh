#!/usr/bin/env bash
# Cost of drcov / tenet / stat / slice relative to decoding the same trace (the peer),
# measured in the same run on a synthetic 2,000,000-instruction x86-64 trace.
. "$(dirname "$0")/common.sh"
mkdir -p "$BUILD/bench"
bin=$BUILD/bench/bench_interop
if [ ! -x "$bin" ] || [ bench/bench_interop.c -nt "$bin" ] || [ frames.h -nt "$bin" ] || [ frames_interop.h -nt "$bin" ]; then
    gcc -std=c99 -O2 -I. bench/bench_interop.c -o "$bin"
fi
trace=$(mktemp /tmp/bench_interop.XXXXXX.frames)
trap 'rm -f "$trace"' EXIT
"$bin" "$trace" "${BENCH_INTEROP_FRAMES:-2000000}"
