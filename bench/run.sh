#!/usr/bin/env bash
# Runs every benchmark script bench/bench_*.sh with the build directory as argument.
# Benchmarks print figures and ratios against a peer measured in the same run.
. "$(dirname "$0")/common.sh"
for b in bench/bench_*.sh; do
    [ -x "$b" ] || continue
    echo "######## $(basename "$b" .sh)"
    "$b" "$BUILD"
done
