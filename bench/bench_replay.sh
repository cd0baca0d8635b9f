#!/usr/bin/env bash
# frames_replay.h on a recording of `gzip -c` of BENCH_REPLAY_BYTES bytes of text
# (default 65536; the issue's figure is for 1 MB): index build time against `frames stat`
# on the same trace in the same run, bytes per instruction of the index, and the median
# latency of `state` and last-write-before over 1,000 random queries (bench/bench_replay.c)
# on the plain trace and on the .frames.zst.
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
secs() { local s e; s=$(date +%s.%N); "$@" > /dev/null; e=$(date +%s.%N); awk -v s="$s" -v e="$e" 'BEGIN { printf "%.2f", e - s }'; }
for t in t.frames t.frames.zst; do
    stat_s=$(secs "$BUILD/frames" stat "$TMP/$t")
    rm -f "$TMP/$t.fridx"
    index_s=$(secs "$BUILD/frames" state "$TMP/$t" --at 0)
    echo "$t: frames stat $stat_s s, index build (frames state --at 0, no index) $index_s s," \
         "ratio $(awk -v a="$index_s" -v b="$stat_s" 'BEGIN { printf "%.2f", a / b }')"
    "$TMP/bench_replay" "$TMP/$t" 1000
done
