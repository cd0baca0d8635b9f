#!/usr/bin/env bash
# bench_readers.sh BUILD_DIR - the readers against the engines underneath them, in one run:
# frames stat / dump --pc / vprof / cat on a recorded .frames.zst and on its plain
# .frames (in the page cache), each next to its peer measured in the same run: `zstd -d`
# of the same file to /dev/null, `cp` and `cat` of the plain file, and `cp` followed by
# `sync` of the copy (frames cat flushes its output to disk before it renames it into
# place, docs/outputs.md; cp does not flush). Prints wall-clock and
# CPU (user+sys, all threads) seconds, frames per second of wall-clock and of CPU, and
# the load average before and after (the machine may be shared: compare with the peers,
# not with absolute figures). .zst readers run with and without the read-ahead thread
# (FRAMES_NO_READAHEAD=1).
#   BENCH_TEXT_BYTES (default 60000): bytes of text gzip compresses while recorded
#     (60000 gives about 9 M instructions, a 1.1 GB plain trace);
#   BENCH_REPS (default 3, the best is kept); BENCH_DIR (files; default BUILD_DIR/bench);
#   BENCH_TRACE (a .frames.zst to use instead of recording);
#   BENCH_BASELINE (another build's frames command: its cat is measured too, for a
#     before/after in the same run).
set -euo pipefail
BUILD=${1:?usage: bench/bench_readers.sh BUILD_DIR}
cd "$(dirname "$0")/.."
ROOT=$PWD
F=$BUILD/frames
DIR=${BENCH_DIR:-$BUILD/bench}
REPS=${BENCH_REPS:-3}
mkdir -p "$DIR"
for tool in zstd gzip; do command -v $tool >/dev/null || { echo "bench_readers: $tool missing" >&2; exit 1; }; done
Z=${BENCH_TRACE:-}
if [ -z "$Z" ]; then
    Z=$DIR/bench-readers.frames.zst
    head -c "${BENCH_TEXT_BYTES:-60000}" "$ROOT/frames.h" > "$DIR/bench-readers.txt"
    "$F" record --quiet -f -o "$Z" -- gzip -c "$DIR/bench-readers.txt" >/dev/null
    rm -f "$DIR/bench-readers.txt"
fi
P=$DIR/bench-readers.frames
COPY=$DIR/bench-readers.copy
zstd -q -d -f "$Z" -o "$P"
N=$("$F" stat --json --no-symbols "$Z" | grep -o '"frames":[0-9]*' | head -1 | cut -d: -f2)

# best of REPS: "wall cpu" in seconds; $2, when given, runs untimed before each rep
measure() {
    local best="" i t
    for ((i = 0; i < REPS; i++)); do
        [ -z "${2:-}" ] || bash -c "$2"
        /usr/bin/time -o "$DIR/bench-readers.time" -f "%e %U %S" bash -c "$1" >/dev/null 2>&1 || true
        t=$(tail -1 "$DIR/bench-readers.time" | awk '{printf "%.2f %.2f", $1, $2 + $3}')
        if [ -z "$best" ] || awk -v a="$t" -v b="$best" 'BEGIN{split(a,x," ");split(b,y," ");exit !(x[1]<y[1])}'; then
            best=$t
        fi
    done
    echo "$best"
}

row() { # label command peer_wall [untimed preparation of each rep]
    local r w c
    r=$(measure "$2" "${4:-}")
    w=${r% *}
    c=${r#* }
    awk -v l="$1" -v w="$w" -v c="$c" -v n="$N" -v pw="${3:-}" 'BEGIN{
        fw = w > 0 ? n / w / 1e6 : 0; fc = c > 0 ? n / c / 1e6 : 0;
        printf "%-38s %7.2f s wall %7.2f s cpu %7.1f M frames/s wall %7.1f M/s cpu", l, w, c, fw, fc;
        if (pw != "" && pw > 0) printf "   %.2fx peer", w / pw;
        printf "\n" }'
    LAST_WALL=$w
    LAST_CPU=$c
}

cat "$P" > /dev/null # into the page cache
echo "# frames readers vs zstd -d / cp / cat; $N frames, $(stat -c %s "$Z") bytes .zst, $(stat -c %s "$P") bytes plain; $(nproc) CPUs"
echo "# load average before: $(cut -d' ' -f1-3 /proc/loadavg); best of $REPS; zstd $(zstd -V | grep -o 'v[0-9.]*' | head -1)"
row "peer: zstd -d .zst > /dev/null" "zstd -q -d -c '$Z'"
ZW=$LAST_WALL
row "frames stat .zst" "'$F' stat --no-symbols '$Z'" "$ZW"
row "frames stat .zst (no read-ahead)" "FRAMES_NO_READAHEAD=1 '$F' stat --no-symbols '$Z'" "$ZW"
row "frames dump --pc .zst" "'$F' dump --pc '$Z'" "$ZW"
row "frames dump --pc .zst (no read-ahead)" "FRAMES_NO_READAHEAD=1 '$F' dump --pc '$Z'" "$ZW"
row "frames vprof .zst" "'$F' vprof --no-symbols '$Z'" "$ZW"
row "peer: cat plain > /dev/null" "cat '$P'"
CW=$LAST_WALL
row "frames stat plain" "'$F' stat --no-symbols '$P'" "$CW"
row "frames dump --pc plain" "'$F' dump --pc '$P'" "$CW"
# each copy starts from the same state: no copy of the run before (deleting it costs
# whoever replaces it, cp's truncation less than cat's rename when only cat's was written
# to disk) and no dirty data of it left for the kernel to write meanwhile
FRESH="rm -f '$COPY' && sync"
row "peer: cp plain" "cp '$P' '$COPY'" "" "$FRESH"
PW=$LAST_WALL PC=$LAST_CPU
row "peer: cp plain; sync the copy" "cp '$P' '$COPY' && sync '$COPY'" "" "$FRESH"
SW=$LAST_WALL SC=$LAST_CPU
row "frames cat plain" "'$F' cat -f '$P' '$COPY'" "$PW" "$FRESH"
awk -v w="$LAST_WALL" -v c="$LAST_CPU" -v pw="$PW" -v pc="$PC" -v sw="$SW" -v sc="$SC" 'BEGIN{
    printf "# frames cat: %.2fx cp wall, %.2fx cp cpu; %.2fx (cp; sync) wall, %.2fx its cpu\n",
        (pw > 0 ? w / pw : 0), (pc > 0 ? c / pc : 0), (sw > 0 ? w / sw : 0), (sc > 0 ? c / sc : 0) }'
cmp -s "$P" "$COPY" || echo "# note: frames cat's output differs from its input (not a trace upstream finished)"
if [ -n "${BENCH_BASELINE:-}" ]; then
    row "baseline: frames cat plain" "'$BENCH_BASELINE' cat -f '$P' '$COPY'" "$PW" "$FRESH"
    awk -v w="$LAST_WALL" -v c="$LAST_CPU" -v pw="$PW" -v pc="$PC" 'BEGIN{
        printf "# baseline frames cat: %.2fx cp wall, %.2fx cp cpu\n", (pw > 0 ? w / pw : 0), (pc > 0 ? c / pc : 0) }'
fi
echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
rm -f "$P" "$COPY" "$DIR/bench-readers.time"
[ -n "${BENCH_TRACE:-}" ] || rm -f "$Z"
