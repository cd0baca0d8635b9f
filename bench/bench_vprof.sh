#!/usr/bin/env bash
# vprof throughput against a decode-only pass of the same traces (bench/bench_vprof.c),
# then the `frames vprof` command end to end on the synthetic trace.
. "$(dirname "$0")/common.sh"
SHARED=${FRAMES_SHARED:-../shared}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
# its own copy of the implementation: build/obj/impl.o also holds frames_pt.h (libipt)
gcc -std=c99 -D_GNU_SOURCE -O2 -DFRAMES_IMPLEMENTATION -DFRAMES_REPLAY_IMPLEMENTATION -DFRAMES_VPROF_IMPLEMENTATION -I. bench/bench_vprof.c \
    -o "$TMP/bench_vprof" -lm
out=$("$TMP/bench_vprof" "$SHARED/vectors/frames/r10_default_m_n10001.frames" "$TMP" "${BENCH_VPROF_FRAMES:-2000000}")
echo "$out" | head -n -1
synth=$(echo "$out" | tail -n 1)
start=$(date +%s.%N)
"$BUILD/frames" vprof "$synth" >/dev/null
end=$(date +%s.%N)
awk -v s="$start" -v e="$end" -v f="$(du -m "$synth" | cut -f1)" \
    'BEGIN { printf "frames vprof (command, synthetic): %.2f s for %d MiB\n", e - s, f }'

# --profiler over calling contexts, offline and online, next to Valgrind's own tools on
# the same program in the same run: gzip -c of BENCH_VPROF_GZIP_KB KiB of text (issue 23:
# 1024; smaller for a quick run).
KB=${BENCH_VPROF_GZIP_KB:-1024}
PROF=${BENCH_VPROF_PROFILER:-dead-stores}
GZIP=$(command -v gzip)
if [ -x "$BUILD/vg/frames-amd64-linux" ] && command -v valgrind >/dev/null; then
    head -c $((KB * 1024 * 4)) /usr/share/dict/words 2>/dev/null > "$TMP/in.txt" || true
    [ -s "$TMP/in.txt" ] || seq 1 $((KB * 200)) > "$TMP/in.txt"
    head -c $((KB * 1024)) "$TMP/in.txt" > "$TMP/in1.txt"
    # CPU seconds (user + system, children included): the machine is shared, wall time
    # says more about the neighbours than about us
    t() { local TIMEFORMAT='%U %S'; { time "$@" >/dev/null 2>&1; } 2>&1 | awk '{ printf "%.2f", $1 + $2 }'; }
    native=$(t "$GZIP" -c "$TMP/in1.txt")
    none=$(t valgrind --tool=none "$GZIP" -c "$TMP/in1.txt")
    lackey=$(t valgrind --tool=lackey "$GZIP" -c "$TMP/in1.txt")
    rec=$(t "$BUILD/frames" record -o "$TMP/g.frames.zst" -- "$GZIP" -c "$TMP/in1.txt")
    off=$(t "$BUILD/frames" vprof "$TMP/g.frames.zst" --profiler "$PROF" --json)
    on=$(t "$BUILD/frames" vprof --profiler "$PROF" --json -- "$GZIP" -c "$TMP/in1.txt")
    insns=$("$BUILD/frames" vprof "$TMP/g.frames.zst" --profiler "$PROF" --json --top 0 |
            sed 's/.*"instructions":\([0-9]*\).*/\1/')
    echo "gzip -c of $KB KiB ($insns instructions), profiler $PROF (CPU seconds, user + system):"
    echo "  native                        $native s"
    echo "  valgrind --tool=none          $none s"
    echo "  valgrind --tool=lackey        $lackey s"
    echo "  frames record (.frames.zst)   $rec s"
    echo "  frames vprof offline on it    $off s  ($(awk -v n="$insns" -v t="$off" 'BEGIN { printf "%.2f", n / t / 1e6 }') M instructions/s with contexts)"
    echo "  record + offline profile      $(awk -v a="$rec" -v b="$off" 'BEGIN { printf "%.2f", a + b }') s"
    echo "  frames vprof online           $on s  ($(awk -v a="$rec" -v b="$off" -v c="$on" 'BEGIN { printf "%.2fx", (a + b) / c }') faster than record + profile)"
else
    echo "(no Valgrind tool built: the --profiler benchmark is skipped)"
fi
