#!/usr/bin/env bash
# bench_record_vg.sh BUILD - speed of `frames record --engine valgrind` in instructions per
# second, against peers measured in the same run: the ptrace engine (on a prefix: it runs
# at tens of thousands per second), `valgrind --tool=none` (the floor: Valgrind without a
# tool) and `valgrind --tool=lackey --trace-mem=yes` (a tracer that records less: addresses
# of memory accesses, no values, no registers). Workloads: gzip -c of a 1 MB text file and
# `ls -la /usr/bin`. Each workload is recorded three ways: trace encoded and thrown away
# (-o /dev/null: the engine's own cost), written to a real .frames file, and written
# compressed (.frames.zst: zstd on a second thread of the frames process); with bytes
# per instruction of each file, which is checked readable and complete (frames info).
# Also the recording API's cost per instruction (bench_rec.c).
#   BENCH_VG_DIR=DIR  where the trace files go (default: a temporary folder). The
#                     uncompressed gzip trace is about 130 bytes per instruction:
#                     21 GB for 1 MB of input; it is deleted as soon as it is measured.
# Rates are wall-clock: on a shared machine they follow its load; CPU time (user + sys
# of both processes: Valgrind, and the converter with its compression thread) per
# instruction is printed too, and the load average.
. "$(dirname "$0")/common.sh"
mkdir -p "$BUILD/bench"
tmp=$(mktemp -d)
out=$(mktemp -d "${BENCH_VG_DIR:-${TMPDIR:-/tmp}}/bench_vg.XXXXXX")
trap 'rm -rf "$tmp" "$out"' EXIT

cc -std=c99 -D_GNU_SOURCE -O2 -I. bench/bench_rec.c -o "$BUILD/bench/bench_rec"
echo "== recording API (frames.h), CPU time per recorded instruction, best of 60 interleaved runs"
"$BUILD/bench/bench_rec"

[ -x "$BUILD/vg/frames-amd64-linux" ] || { echo "valgrind tool not built: engine benchmark skipped"; exit 0; }

# deterministic 1 MB text: the library's own header, repeated
{ for i in 1 2 3 4 5; do cat frames.h; done | head -c 1000000 >"$tmp/text1m.txt"; } || true

now() { date +%s.%N; }
rate() { awk -v n="$1" -v s="$2" 'BEGIN { printf "%.0f", (s > 0 ? n / s : 0) }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }

# ours OUT PROGRAM...: sets n (instructions), secs (wall), cpu (user+sys of both processes)
ours() {
    local out=$1; shift
    local t0 t1 line
    t0=$(now)
    line=$( { TIMEFORMAT='CPU %U %S'; time "$FRAMES" record --engine valgrind -f -o "$out" -- "$@" >/dev/null; } 2>&1 |
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

nspi() { awk -v c="$1" -v n="$2" 'BEGIN { printf "%.0f", (n > 0 ? c * 1e9 / n : 0) }'; }
load() { cut -d' ' -f1-3 /proc/loadavg; }

# written NAME FILE PROGRAM...: the engine writing FILE, its rate, CPU and bytes/instruction;
# the file must be a finished trace with one std_frame per instruction counted
written() {
    local name=$1 file=$2; shift 2
    local bytes frames
    ours "$file" "$@"
    bytes=$(stat -c %s "$file")
    frames=$("$FRAMES" info "$file" | sed -n 's/.*std_frame \([0-9]*\).*/\1/p' | head -1)
    grep -q '^finished: yes' <<<"$("$FRAMES" info "$file")" || { echo "$file: not a finished trace" >&2; exit 1; }
    [ "$frames" = "$n" ] || { echo "$file: $frames std_frames for $n instructions" >&2; exit 1; }
    printf '%-10s valgrind engine writing .%-11s        : %9s instr/s wall, %6s ns CPU/instr, %6.1f bytes/instr  (load %s)\n' \
        "$name" "$(basename "$file" | cut -d. -f2-)" "$(rate "$n" "$secs")" "$(nspi "$cpu" "$n")" \
        "$(awk -v b="$bytes" -v n="$n" 'BEGIN { print b / n }')" "$(load)"
    rm -f "$file"
}

workload() {   # workload NAME CMD...
    local name=$1; shift
    local n_all secs_all cpu_all none lackey pt_line pt_rate
    ours /dev/null "$@"; n_all=$n; secs_all=$secs; cpu_all=$cpu
    none=$(timed valgrind --tool=none "$@")
    lackey=$(timed valgrind --tool=lackey --trace-mem=yes --log-file=/dev/null "$@")
    pt_line=$(timeout -s INT 20 "$FRAMES" record --engine ptrace -f -o "$tmp/pt.frames" -- "$@" 2>&1 >/dev/null |
              grep "instructions in" || true)
    pt_rate=$(echo "$pt_line" | sed -n 's/.*(\([0-9]*\) instructions\/s).*/\1/p')
    rm -f "$tmp/pt.frames"
    local r_ours r_none r_lackey
    r_ours=$(rate "$n_all" "$secs_all"); r_none=$(rate "$n_all" "$none"); r_lackey=$(rate "$n_all" "$lackey")
    printf '%-10s %11s instructions\n' "$name" "$n_all"
    printf '%-10s valgrind engine, trace encoded (-o /dev/null): %9s instr/s wall, %6s ns CPU/instr  (load %s)\n' \
        "$name" "$r_ours" "$(nspi "$cpu_all" "$n_all")" "$(load)"
    printf '%-10s valgrind --tool=none                         : %9s instr/s (our engine = %s of it)\n' \
        "$name" "$r_none" "$(ratio "$r_ours" "$r_none")"
    printf '%-10s valgrind --tool=lackey --trace-mem=yes       : %9s instr/s (our engine = %sx lackey)\n' \
        "$name" "$r_lackey" "$(ratio "$r_ours" "$r_lackey")"
    printf '%-10s ptrace engine (20 s prefix)                  : %9s instr/s (our engine = %sx ptrace)\n' \
        "$name" "${pt_rate:-0}" "$(ratio "$r_ours" "${pt_rate:-0}")"
    # the uncompressed trace needs ~130 bytes per instruction: skip it when the disk lacks that
    if [ "$(df -Pk "$out" | awk 'NR == 2 { print $4 }')" -gt "$(awk -v n="$n_all" 'BEGIN { printf "%.0f", n * 150 / 1024 }')" ]; then
        written "$name" "$out/$name.frames" "$@"
    else
        printf '%-10s valgrind engine writing .frames: skipped, %s has less than 150 bytes x %s instructions free\n' \
            "$name" "$out" "$n_all"
    fi
    written "$name" "$out/$name.frames.zst" "$@"
}

workload gzip gzip -c "$tmp/text1m.txt"
workload ls ls -la /usr/bin
