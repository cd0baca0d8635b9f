#!/usr/bin/env bash
# bench_zstd.sh BUILD_DIR - compressed seekable traces (frames_zstd.h): sizes against
# whole-file zstd and lz4, read/write/random access against our plain reader and writer
# and libprotobuf, on a trace recorded by `frames record /bin/echo hi` and on the
# 1,000,000-frame PIN-like trace of bench_codec. Same run, ratios printed.
#   BENCH_FRAMES (default 1000000), BENCH_REPS (default 3), BENCH_DIR (files; default
#   BUILD_DIR/bench), BENCH_RECORDED (a trace to use instead of recording /bin/echo hi)
. "$(dirname "$0")/common.sh"
OUT=$BUILD/bench
DIR=${BENCH_DIR:-$OUT}
mkdir -p "$OUT" "$DIR"
[ -f /usr/include/zstd.h ] || { echo "bench_zstd: libzstd-dev missing (./build.sh deps)" >&2; exit 1; }
for tool in zstd lz4; do command -v $tool >/dev/null || { echo "bench_zstd: $tool missing" >&2; exit 1; }; done
# the libprotobuf peer is built by bench_codec.sh (a tiny run builds it)
if [ ! -e "$OUT/codec_pbcxx.o" ] || [ ! -e "$OUT/frames.pb.o" ]; then
    BENCH_FRAMES=1000 BENCH_REPS=1 bench/bench_codec.sh "$BUILD" >/dev/null
fi
OPT="-O2 -DNDEBUG"
BIN=$OUT/bench_zstd
stale=0
for s in bench/bench_zstd.c bench/codec.h bench/codec_ours.h frames.h frames_zstd.h; do
    [ "$s" -nt "$BIN" ] && stale=1
done
if [ ! -x "$BIN" ] || [ $stale = 1 ]; then
    nice gcc -std=c99 -D_GNU_SOURCE $OPT -Wall -Wextra -Werror -I. -c bench/bench_zstd.c -o "$OUT/bench_zstd.o"
    g++ "$OUT/bench_zstd.o" "$OUT/codec_pbcxx.o" "$OUT/frames.pb.o" -o "$BIN" -lprotobuf -lzstd -lpthread
fi
REC=${BENCH_RECORDED:-}
if [ -z "$REC" ]; then
    REC=$DIR/bench-zstd-echo.frames
    "$BUILD/frames" record --quiet -f -o "$REC" /bin/echo hi >/dev/null
fi
echo "# frames_zstd.h vs whole-file zstd $(zstd -V | grep -o 'v[0-9.]*' | head -1) / lz4, our plain reader and writer, libprotobuf $(protoc --version | cut -d' ' -f2); $(nproc) CPUs, wall-clock"
"$BIN" "$DIR" "$REC" "${BENCH_FRAMES:-1000000}" "${BENCH_REPS:-3}"
[ -n "${BENCH_RECORDED:-}" ] || rm -f "$REC"
