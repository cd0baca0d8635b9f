#!/usr/bin/env bash
# bench_record_vg.sh BUILD - speed of `frames record --engine valgrind` in instructions per
# second, against peers measured in the same run: the ptrace engine (on a prefix: it runs
# at tens of thousands per second), `valgrind --tool=none` (the floor: Valgrind without a
# tool) and `valgrind --tool=lackey --trace-mem=yes` (a tracer that records less: addresses
# of memory accesses, no values, no registers). Workloads: gzip -c of a 1 MB text file and
# `ls -la /usr/bin`. Also bytes per instruction of the trace, and the recording API's
# cost per instruction (bench_rec.c).
#   BENCH_VG_FILE=DIR  also write the gzip trace to DIR (about 130 bytes per instruction:
#                      18 GB for 1 MB of input) instead of only a 100 kB prefix
# Rates are wall-clock: on a shared machine they follow its load; CPU seconds are
# printed too (the engine uses two processes, Valgrind and the converter).
set -euo pipefail
BUILD=${1:?usage: bench_record_vg.sh BUILD_DIR}
FRAMES=$BUILD/frames
cd "$(dirname "$0")/.."
mkdir -p "$BUILD/bench"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cc -std=c99 -D_GNU_SOURCE -O2 -I. bench/bench_rec.c -o "$BUILD/bench/bench_rec"
echo "== recording API (frames.h), CPU time per recorded instruction, best of 60 interleaved runs"
"$BUILD/bench/bench_rec"

[ -x "$BUILD/vg/frames-amd64-linux" ] || { echo "valgrind tool not built: engine benchmark skipped"; exit 0; }

# deterministic 1 MB text: the library's own header, repeated
{ for i in 1 2 3 4 5; do cat frames.h; done | head -c 1000000 >"$tmp/text1m.txt"; } || true
head -c 100000 "$tmp/text1m.txt" >"$tmp/text100k.txt"

now() { date +%s.%N; }
rate() { awk -v n="$1" -v s="$2" 'BEGIN { printf "%.0f", (s > 0 ? n / s : 0) }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }

# ours OUT PROGRAM...: sets n (instructions), secs (wall), cpu (user+sys of both processes)
ours() {
    local out=$1; shift
    local t0 t1 line
    t0=$(now)
    line=$( { TIMEFORMAT='CPU %U %S'; time "$FRAMES" record --engine valgrind -o "$out" -- "$@" >/dev/null; } 2>&1 |
            grep -E "instructions in|^CPU" | tr '\n' ' ')
    t1=$(now)
    n=$(echo "$line" | sed -n 's/.*record: \([0-9]*\) instructions in.*/\1/p')
    cpu=$(echo "$line" | awk '{ for (i = 1; i <= NF; i++) if ($i == "CPU") print $(i+1) + $(i+2) }')
    secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')
}

timed() {   # timed CMD...: prints wall seconds
    local t0 t1
    t0=$(now)
    "$@" >/dev/null 2>&1 || true
    t1=$(now)
    awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }'
}

workload() {   # workload NAME CMD...
    local name=$1; shift
    local n_all secs_all cpu_all none lackey pt_line pt_rate bytes n_small
    ours /dev/null "$@"; n_all=$n; secs_all=$secs; cpu_all=$cpu
    none=$(timed valgrind --tool=none "$@")
    lackey=$(timed valgrind --tool=lackey --trace-mem=yes --log-file=/dev/null "$@")
    pt_line=$(timeout -s INT 20 "$FRAMES" record --engine ptrace -o "$tmp/pt.frames" -- "$@" 2>&1 >/dev/null |
              grep "instructions in" || true)
    pt_rate=$(echo "$pt_line" | sed -n 's/.*(\([0-9]*\) instructions\/s).*/\1/p')
    local r_ours r_none r_lackey
    r_ours=$(rate "$n_all" "$secs_all"); r_none=$(rate "$n_all" "$none"); r_lackey=$(rate "$n_all" "$lackey")
    printf '%-10s %11s instructions\n' "$name" "$n_all"
    printf '%-10s valgrind engine, trace encoded (-o /dev/null): %9s instr/s wall, %6.0f ns CPU/instr (both processes)\n' \
        "$name" "$r_ours" "$(awk -v c="$cpu_all" -v n="$n_all" 'BEGIN { print c * 1e9 / n }')"
    printf '%-10s valgrind --tool=none                         : %9s instr/s (our engine = %s of it)\n' \
        "$name" "$r_none" "$(ratio "$r_ours" "$r_none")"
    printf '%-10s valgrind --tool=lackey --trace-mem=yes       : %9s instr/s (our engine = %sx lackey)\n' \
        "$name" "$r_lackey" "$(ratio "$r_ours" "$r_lackey")"
    printf '%-10s ptrace engine (20 s prefix)                  : %9s instr/s (our engine = %sx ptrace)\n' \
        "$name" "${pt_rate:-0}" "$(ratio "$r_ours" "${pt_rate:-0}")"
}

workload gzip gzip -c "$tmp/text1m.txt"
workload ls ls -la /usr/bin

# bytes per instruction of a real trace file
ours "$tmp/small.frames" gzip -c "$tmp/text100k.txt"
n_small=$n
bytes=$(stat -c %s "$tmp/small.frames")
printf 'gzip 100k  valgrind engine writing %s: %9s instr/s wall, %s bytes/instruction\n' \
    "$tmp/small.frames" "$(rate "$n_small" "$secs")" "$(awk -v b="$bytes" -v n="$n_small" 'BEGIN { printf "%.1f", b / n }')"
rm -f "$tmp/small.frames"
if [ -n "${BENCH_VG_FILE:-}" ]; then
    ours "$BENCH_VG_FILE/gzip.frames" gzip -c "$tmp/text1m.txt"
    printf 'gzip 1M    valgrind engine writing %s: %9s instr/s wall, %s bytes/instruction\n' \
        "$BENCH_VG_FILE/gzip.frames" "$(rate "$n" "$secs")" \
        "$(awk -v b="$(stat -c %s "$BENCH_VG_FILE/gzip.frames")" -v n="$n" 'BEGIN { printf "%.1f", b / n }')"
    rm -f "$BENCH_VG_FILE/gzip.frames"
fi
