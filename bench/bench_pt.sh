#!/usr/bin/env bash
# bench_pt.sh BUILD_DIR - Intel PT into frames versus a bare libipt decoder loop, same run.
# Synthesises a long trace over real x86-64 code, then times (best of RUNS, CPU time):
# libipt's insn and block decoder loops doing nothing per instruction, and frames_pt.h
# writing a frames file on the block path and on the insn path. Target: frames <= 1.25x
# the bare insn loop. Env: PT_BENCH_INSNS (10000000), PT_BENCH_RUNS (3), TMPDIR.
set -euo pipefail
BUILD=${1:-build}
cd "$(dirname "$0")/.."
if [ ! -f /usr/include/intel-pt.h ]; then
    echo "bench_pt: libipt (intel-pt.h) not installed: skipped"
    exit 0
fi
# impl.o holds every header's implementation: link what build.sh linked it with (the last
# field of $BUILD/flags: -lipt -lzstd -ldw ... as installed)
impl_libs() { awk -F'|' '{print $NF}' "$BUILD/flags"; }
[ -f "$BUILD/obj/impl.o" ] || { echo "bench_pt: $BUILD/obj/impl.o missing: run ./build.sh first" >&2; exit 1; }
mkdir -p "$BUILD/bench"
gcc -std=c99 -D_GNU_SOURCE -O2 -g -Wall -Wextra -Wpedantic -Werror -DFRAMES_HAVE_IPT -I. -Itests \
    bench/bench_pt.c "$BUILD/obj/impl.o" -o "$BUILD/bench/bench_pt" $(impl_libs) -lpthread -lm
nice "$BUILD/bench/bench_pt" "${PT_BENCH_INSNS:-10000000}" "${PT_BENCH_RUNS:-3}" "${TMPDIR:-/tmp}"
