#!/usr/bin/env bash
# frames_replay.h on a recording of `gzip -c` of BENCH_REPLAY_BYTES bytes of text
# (default 65536; the issue's figure is for 1 MB): index build CPU time (user + system, all
# threads) and wall time against `frames stat` on the same trace in the same run (each the
# best of BENCH_REPLAY_RUNS, default 3; the build is bench_replay TRACE 0 THREADS, which
# opens the trace without an index: BENCH_REPLAY_THREADS, default 0 (automatic: two
# segments for a plain trace of 32 MiB or more on more than one CPU); 1: one thread; 2: two),
# bytes per instruction of the index, and the median latency of `state` and
# last-write-before over 1,000 random queries (bench/bench_replay.c) on the plain trace
# and on the .frames.zst.
set -euo pipefail
BUILD=${1:?usage: bench_replay.sh BUILD_DIR}
cd "$(dirname "$0")/.."
BYTES=${BENCH_REPLAY_BYTES:-65536}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
zdefs=""; zlibs=""
if pkg-config --exists libzstd 2>/dev/null || [ -e /usr/include/zstd.h ]; then
    zdefs="-DFRAMES_ZSTD_IMPLEMENTATION -DFRAMES_REPLAY_LIBZSTD"; zlibs="-lzstd"
fi
gcc -std=c99 -D_GNU_SOURCE -O2 -DFRAMES_IMPLEMENTATION -DFRAMES_REPLAY_IMPLEMENTATION $zdefs \
    -I. bench/bench_replay.c \
    -o "$TMP/bench_replay" $zlibs -lpthread -lm
# text: numbered lines of words, compressible as prose is
awk -v n="$BYTES" 'BEGIN { srand(1); split("the of and to in is that for it as was with be by on not he this are or", w, " ");
    for (i = 0; t < n; i++) { line = i ":"; for (j = 0; j < 12; j++) line = line " " w[int(rand() * 20) + 1];
    print line; t += length(line) + 1 } }' > "$TMP/text"
"$BUILD/frames" record -o "$TMP/t.frames" -- gzip -c "$TMP/text" > /dev/null 2> "$TMP/rec.txt" || { cat "$TMP/rec.txt"; exit 1; }
grep instructions "$TMP/rec.txt" | head -1
"$BUILD/frames" compress "$TMP/t.frames" -o "$TMP/t.frames.zst"
ls -l "$TMP/t.frames" "$TMP/t.frames.zst" | awk '{ print $5, $9 }'
# the new traces written back first: the kernel's writeback of half a GB would take CPU
# time during the first runs (two-thread builds suffer most)
sync
# CPU time (user + system) and wall time of a command in seconds to the millisecond
# (bash's time, the last line of what goes to stderr), each the best of RUNS runs: the
# machine may be shared, and the best run is the one others disturbed least. $PRE runs
# before each run.
RUNS=${BENCH_REPLAY_RUNS:-3}
times() {
    local bc="" bw="" c w i
    for i in $(seq "$RUNS"); do
        eval "${PRE:-:}"
        { TIMEFORMAT="%3U %3S %3R"; time "$@" > /dev/null; } 2> "$TMP/time"
        c=$(tail -n 1 "$TMP/time" | awk '{ printf "%.3f", $1 + $2 }')
        w=$(tail -n 1 "$TMP/time" | awk '{ printf "%.3f", $3 }')
        bc=$(awk -v a="$c" -v b="${bc:-$c}" 'BEGIN { print (a < b ? a : b) }')
        bw=$(awk -v a="$w" -v b="${bw:-$w}" 'BEGIN { print (a < b ? a : b) }')
    done
    echo "$bc $bw"
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
echo "load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
for t in t.frames t.frames.zst; do
    read -r stat_c stat_w < <(times "$BUILD/frames" stat "$TMP/$t")
    read -r index_c index_w < <(PRE="rm -f '$TMP/$t.fridx'" times "$TMP/bench_replay" "$TMP/$t" 0 "${BENCH_REPLAY_THREADS:-0}")
    echo "$t: best of $RUNS, seconds: frames stat CPU $stat_c wall $stat_w; index build" \
         "(${BENCH_REPLAY_THREADS:-0} threads) CPU $index_c wall $index_w; ratio CPU $(ratio "$index_c" "$stat_c")" \
         "wall $(ratio "$index_w" "$stat_w")"
    "$TMP/bench_replay" "$TMP/$t" 1000
done
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
