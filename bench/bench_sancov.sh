#!/usr/bin/env bash
# Overhead of the fuzzing-harness tracer (tools/sancov/frames_sancov.c) on a hot loop,
# against the peer measured in the same run: the same harness built the usual libFuzzer
# way (-fsanitize=fuzzer, no tracer). Variants: tracer linked but off (FRAMES_SANCOV_OUT
# unset), and tracing (one trace per input). Replays 20 inputs of 64 KiB; best of 3.
. "$(dirname "$0")/common.sh"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
clang -O2 -I. -c tools/sancov/frames_sancov.c -o "$TMP/fs.o"
clang -O1 -fsanitize=fuzzer bench/sancov_hot.c -o "$TMP/plain"
clang -O1 -fsanitize=fuzzer -fsanitize-coverage=trace-pc-guard,trace-cmp bench/sancov_hot.c \
    "$TMP/fs.o" -Wl,@tools/sancov/frames_sancov.wrap -o "$TMP/traced"
head -c 65536 /dev/urandom > "$TMP/in0"
inputs=()
for i in $(seq 1 20); do cp "$TMP/in0" "$TMP/in$i"; inputs+=("$TMP/in$i"); done
mkdir -p "$TMP/out"

best() {   # best wall time in ms of 3 runs of "$@"
    local b="" t s e
    for _ in 1 2 3; do
        s=$(date +%s%N); "$@" >/dev/null 2>&1; e=$(date +%s%N)
        t=$(( (e - s) / 1000000 ))
        if [ -z "$b" ] || [ "$t" -lt "$b" ]; then b=$t; fi
    done
    echo "$b"
}
plain=$(best "$TMP/plain" "${inputs[@]}")
off=$(best env -u FRAMES_SANCOV_OUT "$TMP/traced" "${inputs[@]}")
on=$(best env FRAMES_SANCOV_OUT="$TMP/out/t-%n.frames" "$TMP/traced" "${inputs[@]}")
frames=$("$BUILD/frames" info "$TMP/out/t-0.frames" | sed -n 's/^frames: \([0-9]*\).*/\1/p')
bytes=$(stat -c %s "$TMP/out/t-0.frames")
awk -v p="$plain" -v off="$off" -v on="$on" -v f="$frames" -v b="$bytes" 'BEGIN {
    printf "20 inputs of 64 KiB: libFuzzer build %d ms; tracer linked, off %d ms (%.2fx); tracing %d ms (%.2fx)\n",
        p, off, off / (p ? p : 1), on, on / (p ? p : 1)
    printf "per input: %d frames, %.1f MiB; tracing costs %.0f ns per frame over the tracer-off build\n",
        f, b / 1048576, (on - off) * 1e6 / (20 * f)
}'
