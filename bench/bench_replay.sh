#!/usr/bin/env bash
# frames_replay.h on a recording of `gzip -c` of BENCH_REPLAY_BYTES bytes of text
# (default 65536; the issue's figure is for 1 MB): index build CPU time against
# `frames stat` on the same trace in the same run (best of BENCH_REPLAY_RUNS, default 3),
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
    -o "$TMP/bench_replay" $zlibs -lm
# text: numbered lines of words, compressible as prose is
awk -v n="$BYTES" 'BEGIN { srand(1); split("the of and to in is that for it as was with be by on not he this are or", w, " ");
    for (i = 0; t < n; i++) { line = i ":"; for (j = 0; j < 12; j++) line = line " " w[int(rand() * 20) + 1];
    print line; t += length(line) + 1 } }' > "$TMP/text"
"$BUILD/frames" record -o "$TMP/t.frames" -- gzip -c "$TMP/text" > /dev/null 2> "$TMP/rec.txt" || { cat "$TMP/rec.txt"; exit 1; }
grep instructions "$TMP/rec.txt" | head -1
"$BUILD/frames" compress "$TMP/t.frames" -o "$TMP/t.frames.zst"
ls -l "$TMP/t.frames" "$TMP/t.frames.zst" | awk '{ print $5, $9 }'
# CPU time (user + system) of a command, the best of RUNS runs: the machine may be shared,
# and the best run is the one others disturbed least. $PRE runs before each run.
RUNS=${BENCH_REPLAY_RUNS:-3}
cpu() {
    local best="" t i
    for i in $(seq "$RUNS"); do
        eval "${PRE:-:}"
        /usr/bin/time -f "%U %S" -o "$TMP/time" "$@" > /dev/null
        t=$(awk '{ printf "%.2f", $1 + $2 }' "$TMP/time")
        best=$(awk -v a="$t" -v b="${best:-$t}" 'BEGIN { print (a < b ? a : b) }')
    done
    echo "$best"
}
echo "load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
for t in t.frames t.frames.zst; do
    stat_s=$(cpu "$BUILD/frames" stat "$TMP/$t")
    index_s=$(PRE="rm -f '$TMP/$t.fridx'" cpu "$BUILD/frames" state "$TMP/$t" --at 0)
    echo "$t: CPU seconds, best of $RUNS: frames stat $stat_s, index build (frames state --at 0," \
         "no index) $index_s, ratio $(awk -v a="$index_s" -v b="$stat_s" 'BEGIN { printf "%.2f", a / b }')"
    "$TMP/bench_replay" "$TMP/$t" 1000
done
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
