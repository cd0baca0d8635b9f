#!/usr/bin/env bash
# bench_record_cpu.sh BUILD [OLD_SRC] - the recorder's CPU per instruction (issue 26 item 1):
# `frames record --engine valgrind` of `gzip -c` of 64 KB and of 1 MB of text, to a
# .frames.zst and to /dev/null: ns of CPU per instruction in all processes (Valgrind with
# the frames tool, the converter, the zstd thread: user + sys of frames and the children
# it waits for) and M instructions/s (wall), next to `valgrind --tool=none` and lackey
# (`--tool=lackey --trace-mem=yes`) in the same run, with the load average before each
# line (the machine may be shared: compare the ratios).
# Then the converter alone (bench/vg_stream.c) on a saved tool stream of the 64 KB input
# (BENCH_STREAM_SIZE; the stream is about 20 bytes per instruction, the trace 130):
# its ns per instruction, and, given OLD_SRC (a tree of an older version: frames.h and
# tools/), whether the older converter writes the same trace byte for byte (cmp), on that
# stream and on the stream of a shell pipeline whose processes' chunks interleave
# (`sh -c 'ls -la /usr | sort | head -3; ...'` with --frames-forks=yes).
#   BENCH_SIZES="65536 1000000"  input sizes in bytes
set -euo pipefail
BUILD=$(cd "${1:?usage: bench_record_cpu.sh BUILD_DIR [OLD_SRC]}" && pwd)
OLD=${2:-}
FRAMES=$BUILD/frames
cd "$(dirname "$0")/.."
[ -x "$BUILD/vg/frames-amd64-linux" ] || { echo "valgrind tool not built: skipped"; exit 0; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench_rec_cpu.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

load() { cut -d' ' -f1-3 /proc/loadavg; }
# run CMD...: sets wall and cpu (seconds, cpu = user + sys with waited-for children)
run() {
    local t
    /usr/bin/time -o "$tmp/time" -f '%e %U %S' "$@" >/dev/null 2>/dev/null
    t=$(tail -1 "$tmp/time")
    wall=$(echo "$t" | awk '{ print $1 }')
    cpu=$(echo "$t" | awk '{ print $2 + $3 }')
}
line() {   # line NAME N: one result line from wall and cpu
    awk -v name="$1" -v n="$2" -v w="$wall" -v c="$cpu" -v l="$3" \
        'BEGIN { printf "  %-34s %7.2f s wall %7.2f s CPU %6.0f ns CPU/insn %6.2f M insn/s  (load %s)\n",
                 name, w, c, c * 1e9 / n, n / w / 1e6, l }'
}

for size in ${BENCH_SIZES:-65536 1000000}; do
    { { for i in $(seq 1 40); do cat frames.h; done; } | head -c "$size" >"$tmp/in.txt"; } || true
    n=$("$FRAMES" record --engine valgrind -o /dev/null -- gzip -c "$tmp/in.txt" 2>&1 >/dev/null |
        sed -n 's/.*record: \([0-9]*\) instructions in.*/\1/p')
    echo "gzip -c of $size bytes: $n instructions"
    l=$(load); run "$FRAMES" record --engine valgrind --quiet -o "$tmp/t.frames.zst" -- gzip -c "$tmp/in.txt"
    line "frames record -> .frames.zst" "$n" "$l"
    echo "    $(awk -v b="$(stat -c %s "$tmp/t.frames.zst")" -v n="$n" 'BEGIN { printf "%.1f bytes/insn compressed", b / n }')"
    rm -f "$tmp/t.frames.zst"
    l=$(load); run "$FRAMES" record --engine valgrind --quiet -o /dev/null -- gzip -c "$tmp/in.txt"
    line "frames record -> /dev/null" "$n" "$l"
    l=$(load); run valgrind --tool=none gzip -c "$tmp/in.txt"
    line "valgrind --tool=none" "$n" "$l"
    l=$(load); run valgrind --tool=lackey --trace-mem=yes --log-file=/dev/null gzip -c "$tmp/in.txt"
    line "valgrind --tool=lackey --trace-mem=yes" "$n" "$l"
done

# the converter alone, on the tool's stream of the first size
size=${BENCH_STREAM_SIZE:-65536}
{ { for i in $(seq 1 40); do cat frames.h; done; } | head -c "$size" >"$tmp/in.txt"; } || true
VALGRIND_LIB=$BUILD/vg valgrind --tool=frames -q --vex-iropt-level=0 --frames-fd=3 gzip -c "$tmp/in.txt" \
    3>"$tmp/stream" >/dev/null
cc -std=c99 -O2 -D_GNU_SOURCE -DFRAMES_HAVE_CAPSTONE -I. -Itools bench/vg_stream.c -o "$tmp/vg_stream" -ldl -lpthread
echo "converter alone (bench/vg_stream.c) on the tool's stream of gzip -c of $size bytes ($(stat -c %s "$tmp/stream") bytes):"
echo "  to /dev/null: $("$tmp/vg_stream" "$tmp/stream" /dev/null)  (load $(load))"
if [ -n "$OLD" ]; then
    (cd "$OLD" && cc -std=c99 -O2 -D_GNU_SOURCE -DFRAMES_HAVE_CAPSTONE -I. -Itools "$OLDPWD/bench/vg_stream.c" \
        -o "$tmp/vg_stream_old" -ldl -lpthread)
    echo "  older converter ($OLD): $("$tmp/vg_stream_old" "$tmp/stream" /dev/null)"
    # and a stream of several processes (chunks of each interleaved: forks, execs)
    VALGRIND_LIB=$BUILD/vg valgrind --tool=frames -q --vex-iropt-level=0 --trace-children=yes --frames-forks=yes \
        --frames-fd=3 sh -c 'ls -la /usr | sort | head -3; cat /etc/hostname' 3>"$tmp/stream2" >/dev/null
    for s in stream stream2; do
        "$tmp/vg_stream" "$tmp/$s" "$tmp/new.frames" >/dev/null
        "$tmp/vg_stream_old" "$tmp/$s" "$tmp/old.frames" >/dev/null
        if cmp -s "$tmp/new.frames" "$tmp/old.frames"; then
            echo "  the same $s gives byte-identical traces ($(stat -c %s "$tmp/new.frames") bytes)"
        else
            echo "  TRACES DIFFER ($s)" && exit 1
        fi
        rm -f "$tmp/new.frames" "$tmp/old.frames"
    done
fi
