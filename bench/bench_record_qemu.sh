#!/usr/bin/env bash
# bench_record_qemu.sh BUILD - speed of `frames record --engine qemu` (issue 24: >= 3 M
# instructions/s with values to .frames.zst for an AArch64 `gzip -c` of 1 MB), next to
# plain qemu-aarch64 running the same program in the same run. The program is
# bench/mini_gzip.c (gzip's format and LZ77 hash chains, fixed Huffman codes) built static
# with aarch64-linux-gnu-gcc; its output is checked with the host's gzip -d, and every
# trace is checked finished with one std_frame per instruction counted (frames info).
# Each figure is the best of BENCH_QEMU_RUNS runs (default 2):
#   qemu-aarch64 alone            the floor (no plugin; QEMU chains translated blocks)
#   qemu-aarch64 -singlestep      one instruction per block, as the engine runs it
#   frames record -o /dev/null    the plugin and the engine, trace encoded and dropped
#   frames record -o X.frames.zst with values to a compressed trace (the issue's figure)
#   ... --no-mem                  registers only
# instr/s is wall-clock (it follows the machine's load, printed); ns CPU/instr is user + sys
# of every process (QEMU with the plugin, frames record and its compression thread).
#   BENCH_QEMU_BYTES=N   input size (default 1000000)
. "$(dirname "$0")/common.sh"
RUNS=${BENCH_QEMU_RUNS:-2}
BYTES=${BENCH_QEMU_BYTES:-1000000}
for t in qemu-aarch64 aarch64-linux-gnu-gcc gzip; do
    command -v $t >/dev/null || { echo "$t not installed: qemu engine benchmark skipped"; exit 0; }
done
[ -r "$BUILD/qemu/frames_qemu.so" ] || { echo "qemu plugin not built: benchmark skipped"; exit 0; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

mkdir -p "$BUILD/bench"
aarch64-linux-gnu-gcc -std=c99 -O2 -static bench/mini_gzip.c -o "$BUILD/bench/mini_gzip.aarch64"
prog=$BUILD/bench/mini_gzip.aarch64
# deterministic text: the library's own header, repeated
{ for i in 1 2 3 4 5 6 7 8 9 10; do cat frames.h; done | head -c "$BYTES" >"$tmp/in.txt"; } || true

load() { cut -d' ' -f1-3 /proc/loadavg; }
now() { date +%s.%N; }

# run CMD...: sets secs (wall) and cpu (user + sys of it and its children), stdin in.txt,
# stdout out.gz, stderr err.txt
run() {
    local t0 t1 line
    t0=$(now)
    line=$( { TIMEFORMAT='CPU %U %S'; time "$@" <"$tmp/in.txt" >"$tmp/out.gz" 2>"$tmp/err.txt"; } 2>&1 )
    t1=$(now)
    cpu=$(echo "$line" | awk '$1 == "CPU" { print $2 + $3 }')
    secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')
    gzip -dc "$tmp/out.gz" | cmp -s - "$tmp/in.txt" || { echo "$*: output is not the input compressed" >&2; exit 1; }
}

# best NAME CMD...: the best of RUNS runs (least CPU, in bcpu), printed against n instructions
best() {
    local name=$1 bsecs="" i; shift
    bcpu=""
    for ((i = 0; i < RUNS; i++)); do
        run "$@"
        if [ -z "$bcpu" ] || awk -v a="$cpu" -v b="$bcpu" 'BEGIN { exit !(a < b) }'; then
            bcpu=$cpu; bsecs=$secs
            [ ! -f "$tmp/qemu.cpu" ] || mv "$tmp/qemu.cpu" "$tmp/qemu.best"
        fi
        rm -f "$tmp/qemu.cpu"
    done
    printf '%-40s %9.2f s wall %9.2f s CPU %12.0f instr/s %8.1f ns CPU/instr  (load %s)\n' "$name" "$bsecs" "$bcpu" \
        "$(awk -v n="$n" -v s="$bsecs" 'BEGIN { print n / s }')" "$(awk -v n="$n" -v c="$bcpu" 'BEGIN { print c * 1e9 / n }')" "$(load)"
}

# QEMU through /usr/bin/time (--qemu): its own CPU, apart from frames record's (the
# stream's checks and zstd), in qemu.cpu after each run
cat >"$tmp/qemu-timed" <<EOF
#!/bin/sh
exec /usr/bin/time -f '%U %S' -o "$tmp/qemu.cpu" "$(command -v qemu-aarch64)" "\$@"
EOF
chmod +x "$tmp/qemu-timed"
timed_qemu=()
[ -x /usr/bin/time ] && timed_qemu=(--qemu "$tmp/qemu-timed")

# recorded NAME OUT OPTIONS...: frames record of the program, checked; with the split of
# its CPU between QEMU (with the plugin) and frames record: on an idle 2-core machine each
# has a core, and the larger one bounds the rate
recorded() {
    local name=$1 out=$2; shift 2
    best "$name" "$FRAMES" record -f "${timed_qemu[@]}" "$@" -o "$out" -- "$prog"
    local got
    got=$(sed -n 's/.*record: \([0-9]*\) instructions in.*/\1/p' "$tmp/err.txt")
    [ "$got" = "$n" ] || { echo "$name: $got instructions, $n before" >&2; exit 1; }
    if [ -s "$tmp/qemu.best" ]; then
        awk -v n="$n" -v all="$bcpu" '{ q = $1 + $2; f = all - q; m = q > f ? q : f;
            printf "%-40s   QEMU+plugin %.1f ns CPU/instr, frames record %.1f: one core each -> %.0f instr/s\n",
                   "", q * 1e9 / n, f * 1e9 / n, n / m }' "$tmp/qemu.best"
        rm -f "$tmp/qemu.best"
    fi
    if [ "$out" != /dev/null ]; then
        "$FRAMES" info "$out" >"$tmp/info.txt"
        grep -q '^finished: yes' "$tmp/info.txt" || { echo "$out: not a finished trace" >&2; exit 1; }
        grep -q "std_frame $n\b" "$tmp/info.txt" || { echo "$out: not $n std_frames" >&2; cat "$tmp/info.txt" >&2; exit 1; }
        printf '%-40s %9.1f bytes/instr\n' "" "$(awk -v b="$(stat -c %s "$out")" -v n="$n" 'BEGIN { print b / n }')"
        rm -f "$out"
    fi
}

# the instruction count, from a first recording without memory operands (same redirections
# as every run: glibc's stdio allocates differently for a file and for /dev/null)
run "$FRAMES" record -f --no-mem -o /dev/null -- "$prog"
n=$(sed -n 's/.*record: \([0-9]*\) instructions in.*/\1/p' "$tmp/err.txt")
echo "== AArch64 mini_gzip -c of $BYTES bytes: $n instructions ($(qemu-aarch64 --version | head -1))"
best "qemu-aarch64 alone" qemu-aarch64 "$prog"
best "qemu-aarch64 -singlestep" qemu-aarch64 -singlestep "$prog"
recorded "frames record -o /dev/null" /dev/null
recorded "frames record -o X.frames.zst" "$tmp/t.frames.zst"
recorded "frames record --no-mem -o X.frames.zst" "$tmp/t.frames.zst" --no-mem
