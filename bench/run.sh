#!/usr/bin/env bash
# Runs every benchmark script bench/bench_*.sh with the build directory as argument.
# Benchmarks print figures and ratios against a peer measured in the same run.
set -euo pipefail
BUILD=${1:?usage: bench/run.sh BUILD_DIR}
cd "$(dirname "$0")/.."
for b in bench/bench_*.sh; do
    [ -x "$b" ] || continue
    echo "######## $(basename "$b" .sh)"
    "$b" "$BUILD"
done
