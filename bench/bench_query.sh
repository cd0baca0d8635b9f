#!/usr/bin/env bash
# bench_query.sh BUILD_DIR - `frames query` on a 1,000,000-point trace-db trace.
#
# The trace has small.trace's layout and value distribution (bench/gen_tracedb.c). Every
# figure is a whole process, load included: the median of RUNS runs of wall time and of
# CPU time (user + system), the best wall time (on a machine other jobs share, the
# least disturbed run), and the largest peak RSS. Each query runs
#   - without an index (--no-index): count1 = --count --threads 1, count = --count with the
#     default threads, list = the full listing to a file;
#   - with the index `frames index` wrote next to the trace (ix-count1, ix-count, ix-list);
#   - cold (page cache dropped for the trace and the index before every run, with
#     posix_fadvise: other files are untouched): cold = --count without an index,
#     ix-cold = --count with it.
# The index's build time and size are reported on their own.
# Peers:
#   - trace-db: the figures quoted in issue 3 (trace-db is not available here): load
#     3.3 s, then Q1 0.82 s, Q2 12.0 s, Q3 45 ms, Q5 0.57 s, one pick 126 ms, 300 MB to
#     1.8 GB RSS. Ratios are against its query alone and against load + query.
#   - naive: bench/naive_query.c, trace-db's design (load every point into heap objects,
#     materialise each point's product) in plain C, measured here in the same run.
# Targets (issue 3): each process at least 20x faster than trace-db's query alone; peak
# RSS at most the trace's size + 32 MB.
# Environment: FQ_BENCH_RUNS (default 5), FQ_BENCH_POINTS (default 1000000),
# FQ_BENCH_TRACE (where to write the trace; default BUILD_DIR/bench/large.trace),
# FQ_BENCH_COLD=0 to skip the cold runs.
. "$(dirname "$0")/common.sh"
CC=${CC:-gcc}
RUNS=${FQ_BENCH_RUNS:-5}
POINTS=${FQ_BENCH_POINTS:-1000000}
TRACE=${FQ_BENCH_TRACE:-$BUILD/bench/large.trace}
COLD=${FQ_BENCH_COLD:-1}
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
INDEX=$TRACE.fqidx
SIZE=$(stat -c %s "$TRACE")
LIMIT_KB=$(( SIZE / 1024 + 32 * 1024 ))
OUT=$(mktemp)
trap 'rm -f "$OUT"' EXIT

echo "trace: $TRACE ($POINTS points, $SIZE bytes); $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "each figure: median of $RUNS whole processes (load included); RSS: largest; RSS limit $((LIMIT_KB / 1024)) MB"
echo "trace-db figures are those quoted in issue 3 (not measured here); naive = bench/naive_query.c"
echo

# measure OUTFILE [-e FILE]... -- CMD... -> sets W (wall ms), C (cpu ms), R (rss kB)
measure() {
    local out=$1 line
    shift
    line=$("$BUILD/bench/measure" -n "$RUNS" -o "$out" "$@")
    W=$(echo "$line" | sed 's/.*wall_ms=\([0-9.]*\).*/\1/')
    C=$(echo "$line" | sed 's/.*cpu_ms=\([0-9.]*\).*/\1/')
    R=$(echo "$line" | sed 's/.*rss_kb=\([0-9]*\).*/\1/')
    B=$(echo "$line" | sed 's/.*wall_min_ms=\([0-9.]*\).*/\1/')
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.1f", a / b; else printf "-" }'; }
min_of() { awk -v a="$1" -v b="$2" 'BEGIN { print (b < a) ? b : a }'; }
max_of() { awk -v a="$1" -v b="$2" 'BEGIN { print (b > a) ? b : a }'; }
met() { awk -v x="$1" 'BEGIN { print (x >= 20) ? "met" : "not met" }'; }

# the index: built (and rebuilt) RUNS times, then kept for the runs below
rm -f "$INDEX"
measure /dev/null -- "$FRAMES" index "$TRACE"
echo "index: $INDEX, $(stat -c %s "$INDEX") bytes ($(ratio "$(stat -c %s "$INDEX")00" "$SIZE") % of the trace);" \
     "frames index: ${W} ms wall, ${C} ms cpu, $((R / 1024)) MB RSS"
echo

printf '%-4s %-40s %9s %8s %8s %8s %7s %9s %8s %8s %8s %8s\n' "" "query (mode)" "results" "wall ms" "best ms" \
    "cpu ms" "RSS MB" "trace-db" "x query" "x l+q" "naive ms" "x naive"
worst=1000000
worst_ix=1000000
rss_ok=1
summary=""
run_query() {   # id label tracedb_ms naive_id frames-args...
    local id=$1 label=$2 tdb=$3 naive=$4 n nw x xb best=0 best_ix=0 bb=0 bb_ix=0 modes="count1 count list ix-count1 ix-count ix-list"
    shift 4
    [ "$COLD" = 1 ] && modes="$modes cold ix-cold"
    for mode in $modes; do
        case $mode in
        count1)
            measure /dev/null -- "$BUILD/bench/naive_query" "$TRACE" "$naive"
            nw=$W
            measure "$OUT" -- "$FRAMES" query "$TRACE" "$@" --no-index --count --threads 1 ;;
        count) measure "$OUT" -- "$FRAMES" query "$TRACE" "$@" --no-index --count ;;
        list) measure "$OUT" -- "$FRAMES" query "$TRACE" "$@" --no-index ;;
        ix-count1) measure "$OUT" -- "$FRAMES" query "$TRACE" "$@" --index "$INDEX" --count --threads 1 ;;
        ix-count) measure "$OUT" -- "$FRAMES" query "$TRACE" "$@" --index "$INDEX" --count ;;
        ix-list) measure "$OUT" -- "$FRAMES" query "$TRACE" "$@" --index "$INDEX" ;;
        cold) measure "$OUT" -e "$TRACE" -- "$FRAMES" query "$TRACE" "$@" --no-index --count ;;
        ix-cold) measure "$OUT" -e "$TRACE" -e "$INDEX" -- "$FRAMES" query "$TRACE" "$@" --index "$INDEX" --count ;;
        esac
        case $mode in *list) n=$(wc -l < "$OUT") ;; *) n=$(cat "$OUT") ;; esac
        x=$(ratio "$tdb" "$W")
        xb=$(ratio "$tdb" "$B")
        printf '%-4s %-40s %9s %8s %8s %8s %7s %9s %8s %8s %8s %8s\n' "$id" "$label ($mode)" "$n" "$W" "$B" "$C" \
            "$((R / 1024))" "$tdb" "$x" "$(ratio "$(awk -v t="$tdb" 'BEGIN{print t+3300}')" "$W")" \
            "$([ "$mode" = count1 ] && echo "$nw" || echo -)" "$([ "$mode" = count1 ] && ratio "$nw" "$W" || echo -)"
        case $mode in
        count1|count) best=$(max_of "$best" "$x"); bb=$(max_of "$bb" "$xb") ;;
        ix-count1|ix-count) best_ix=$(max_of "$best_ix" "$x"); bb_ix=$(max_of "$bb_ix" "$xb") ;;
        esac
        [ "$R" -le "$LIMIT_KB" ] || rss_ok=0
    done
    worst=$(min_of "$worst" "$best")
    worst_ix=$(min_of "$worst_ix" "$best_ix")
    summary+=$(printf '  %-4s best --count mode: %6sx without an index (%s; best run %sx), %6sx with it (%s; best run %sx)' \
        "$id" "$best" "$(met "$best")" "$bb" "$best_ix" "$(met "$best_ix")" "$bb_ix")$'\n'
}

run_query Q1 "a:int (> (v/value a) 500)" 820 Q1 --var a:int --where '(> (v/value a) 500)'
run_query Q2 "a,b:int (< (v/value a) (v/value b))" 12000 Q2 --var a:int --var b:int --where '(< (v/value a) (v/value b))'
run_query Q3 "Q1, statement 7" 45 Q3 --var a:int --where '(> (v/value a) 500)' --mask 0xffffffffffffffff --stmt 7
run_query Q5 "q:char* (> (v/size q) 40)" 570 Q5 --var 'q:char*' --where '(> (v/size q) 40)'
run_query Q6 "Q1, one pick (seed 42)" 126 Q6 --var a:int --where '(> (v/value a) 500)' --pick 42

echo
measure "$OUT" -- "$BUILD/bench/naive_query" "$TRACE" SCAN
echo "floor of any one-shot process on this format (map the file, walk its tags once, decode nothing):"
echo "  ${W} ms wall, ${C} ms cpu; 20x trace-db's Q1 would need 41 ms, Q3 2.3 ms, Q5 29 ms, a pick 6.3 ms"
measure "$OUT" -- "$BUILD/bench/naive_query" "$TRACE" TOUCH
echo "floor of touching one byte of every page (Q3's statement-7 points lie on every page):"
echo "  ${W} ms wall, ${C} ms cpu"
measure "$OUT" -- "$FRAMES" --help
echo "start and exit of the frames executable (frames --help): ${W} ms wall, ${C} ms cpu"
echo "20x trace-db's query alone, per query (ratios of medians; best run: of the fastest run):"
printf '%s' "$summary"
echo "smallest of those ratios: without an index ${worst}x, with it ${worst_ix}x (target 20x)"
echo "peak RSS within trace size + 32 MB in every mode: $([ $rss_ok = 1 ] && echo yes || echo no)"
