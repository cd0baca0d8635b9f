#!/usr/bin/env bash
# bench_query.sh BUILD_DIR - `frames query` on a 1,000,000-point trace-db trace.
#
# The trace has small.trace's layout and value distribution (bench/gen_tracedb.c). Every
# figure is a whole process, load included: the median of RUNS runs of wall time and of
# CPU time (user + system), and the largest peak RSS. Peers:
#   - trace-db: the figures quoted in issue 3 (trace-db is not available here): load
#     3.3 s, then Q1 0.82 s, Q2 12.0 s, Q3 45 ms, Q5 0.57 s, one pick 126 ms, 300 MB to
#     1.8 GB RSS. Ratios are against its query alone and against load + query.
#   - naive: bench/naive_query.c, trace-db's design (load every point into heap objects,
#     materialise each point's product) in plain C, measured here in the same run.
# Targets (issue 3): each process at least 20x faster than trace-db's query alone; peak
# RSS at most the trace's size + 32 MB.
# Environment: FQ_BENCH_RUNS (default 5), FQ_BENCH_POINTS (default 1000000),
# FQ_BENCH_TRACE (where to write the trace; default BUILD_DIR/bench/large.trace).
set -euo pipefail
BUILD=$(cd "${1:?usage: bench/bench_query.sh BUILD_DIR}" && pwd)
cd "$(dirname "$0")/.."
CC=${CC:-gcc}
RUNS=${FQ_BENCH_RUNS:-5}
POINTS=${FQ_BENCH_POINTS:-1000000}
TRACE=${FQ_BENCH_TRACE:-$BUILD/bench/large.trace}
FRAMES=$BUILD/frames
mkdir -p "$BUILD/bench"

for prog in gen_tracedb measure naive_query; do
    if [ ! -x "$BUILD/bench/$prog" ] || [ "bench/$prog.c" -nt "$BUILD/bench/$prog" ]; then
        $CC -O2 -std=c99 -D_GNU_SOURCE -Wall -Wextra -Werror "bench/$prog.c" -o "$BUILD/bench/$prog"
    fi
done
[ -x "$FRAMES" ] || { echo "bench_query: $FRAMES not built" >&2; exit 1; }
if [ ! -f "$TRACE" ] || [ "$BUILD/bench/gen_tracedb" -nt "$TRACE" ] || [ -n "${FQ_BENCH_POINTS:-}" ]; then
    "$BUILD/bench/gen_tracedb" -n "$POINTS" "$TRACE"
fi
SIZE=$(stat -c %s "$TRACE")
LIMIT_KB=$(( SIZE / 1024 + 32 * 1024 ))
OUT=$(mktemp)
trap 'rm -f "$OUT"' EXIT

echo "trace: $TRACE ($POINTS points, $SIZE bytes); $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "each figure: median of $RUNS whole processes (load included); RSS: largest; RSS limit $((LIMIT_KB / 1024)) MB"
echo "trace-db figures are those quoted in issue 3 (not measured here); naive = bench/naive_query.c"
echo

# measure OUTFILE CMD... -> sets W (wall ms), C (cpu ms), R (rss kB)
measure() {
    local out=$1 line
    shift
    line=$("$BUILD/bench/measure" -n "$RUNS" -o "$out" -- "$@")
    W=$(echo "$line" | sed 's/.*wall_ms=\([0-9.]*\).*/\1/')
    C=$(echo "$line" | sed 's/.*cpu_ms=\([0-9.]*\).*/\1/')
    R=$(echo "$line" | sed 's/.*rss_kb=\([0-9]*\).*/\1/')
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.1f", a / b; else printf "-" }'; }

printf '%-4s %-44s %9s %8s %8s %7s %9s %8s %8s %8s %8s\n' "" "query (count1: --count --threads 1, count:" "results" "wall ms" "cpu ms" "RSS MB" \
    "trace-db" "x query" "x l+q" "naive ms" "x naive"
printf '%-4s %-44s\n' "" " --count, list: the listing; default threads)"
worst=1000000
rss_ok=1
run_query() {   # id label tracedb_ms naive_id frames-args...
    local id=$1 label=$2 tdb=$3 naive=$4 n nw
    shift 4
    for mode in count1 count list; do
        case $mode in
        count1)
            measure /dev/null "$BUILD/bench/naive_query" "$TRACE" "$naive"
            nw=$W
            measure "$OUT" "$FRAMES" query "$TRACE" "$@" --count --threads 1
            n=$(cat "$OUT") ;;
        count)
            measure "$OUT" "$FRAMES" query "$TRACE" "$@" --count
            n=$(cat "$OUT") ;;
        list)
            measure "$OUT" "$FRAMES" query "$TRACE" "$@"
            n=$(wc -l < "$OUT") ;;
        esac
        local x
        x=$(ratio "$tdb" "$W")
        printf '%-4s %-44s %9s %8s %8s %7s %9s %8s %8s %8s %8s\n' "$id" "$label ($mode)" "$n" "$W" "$C" \
            "$((R / 1024))" "$tdb" "$x" "$(ratio "$(awk -v t="$tdb" 'BEGIN{print t+3300}')" "$W")" \
            "$([ "$mode" = count1 ] && echo "$nw" || echo -)" "$([ "$mode" = count1 ] && ratio "$nw" "$W" || echo -)"
        worst=$(awk -v a="$worst" -v b="$x" 'BEGIN { print (b < a) ? b : a }')
        [ "$R" -le "$LIMIT_KB" ] || rss_ok=0
    done
}

run_query Q1 "a:int (> (v/value a) 500)" 820 Q1 --var a:int --where '(> (v/value a) 500)'
run_query Q2 "a,b:int (< (v/value a) (v/value b))" 12000 Q2 --var a:int --var b:int --where '(< (v/value a) (v/value b))'
run_query Q3 "Q1, statement 7" 45 Q3 --var a:int --where '(> (v/value a) 500)' --mask 0xffffffffffffffff --stmt 7
run_query Q5 "q:char* (> (v/size q) 40)" 570 Q5 --var 'q:char*' --where '(> (v/size q) 40)'
run_query Q6 "Q1, one pick (seed 42)" 126 Q6 --var a:int --where '(> (v/value a) 500)' --pick 42

echo
measure "$OUT" "$BUILD/bench/naive_query" "$TRACE" SCAN
echo "floor of any one-shot process on this format (map the file, walk its tags once, decode nothing):"
echo "  ${W} ms wall, ${C} ms cpu; 20x trace-db's Q1 would need 41 ms, Q3 2.3 ms, Q5 29 ms, a pick 6.3 ms"
echo "smallest ratio against trace-db's query alone: ${worst}x (target 20x: $(awk -v w="$worst" 'BEGIN { print (w >= 20) ? "met" : "not met" }'))"
echo "peak RSS within trace size + 32 MB: $([ $rss_ok = 1 ] && echo yes || echo no)"
