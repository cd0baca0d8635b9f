#!/usr/bin/env bash
# vprof throughput against a decode-only pass of the same traces (bench/bench_vprof.c),
# then the `frames vprof` command end to end on the synthetic trace.
set -euo pipefail
BUILD=${1:?usage: bench_vprof.sh BUILD_DIR}
cd "$(dirname "$0")/.."
SHARED=${FRAMES_SHARED:-../shared}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
# its own copy of the implementation: build/obj/impl.o also holds frames_pt.h (libipt)
gcc -std=c99 -D_GNU_SOURCE -O2 -DFRAMES_IMPLEMENTATION -DFRAMES_REPLAY_IMPLEMENTATION -DFRAMES_VPROF_IMPLEMENTATION -I. bench/bench_vprof.c \
    -o "$TMP/bench_vprof" -lm
out=$("$TMP/bench_vprof" "$SHARED/vectors/frames/r10_default_m_n10001.frames" "$TMP" "${BENCH_VPROF_FRAMES:-2000000}")
echo "$out" | head -n -1
synth=$(echo "$out" | tail -n 1)
start=$(date +%s.%N)
"$BUILD/frames" vprof "$synth" >/dev/null
end=$(date +%s.%N)
awk -v s="$start" -v e="$end" -v f="$(du -m "$synth" | cut -f1)" \
    'BEGIN { printf "frames vprof (command, synthetic): %.2f s for %d MiB\n", e - s, f }'
