#!/usr/bin/env bash
# read_parts.sh BUILD_DIR [FRAMES [REPS]] - where the read row of bench_codec goes: the same
# file walked, decoded and summed by frames.h in steps, mapped and from a copy in memory
# (bench/read_parts.c). A development tool, not run by ./build.sh bench. Needs the peers'
# objects of bench/bench_codec.sh (a tiny run builds them).
#   FRAMES default 1000000, REPS default 5; the ~190 MB file goes to BUILD_DIR/bench.
BENCH_USAGE="[FRAMES [REPS]]"
. "$(dirname "$0")/common.sh"
OUT=$BUILD/bench
if [ ! -e "$OUT/frames.pb.o" ]; then
    BENCH_FRAMES=100 BENCH_REPS=1 bench/bench_codec.sh "$BUILD" >/dev/null
fi
nice gcc -std=c99 -D_GNU_SOURCE -O2 -DNDEBUG -Wall -Wextra -Werror -I. -Ibench \
    -c bench/read_parts.c -o "$OUT/read_parts.o"
g++ "$OUT/read_parts.o" "$OUT/codec_pbc.o" "$OUT/frames.pb-c.o" "$OUT/codec_pbcxx.o" \
    "$OUT/frames.pb.o" -o "$OUT/read_parts" -lprotobuf -lprotobuf-c -lpthread
"$OUT/read_parts" "$OUT" "${2:-1000000}" "${3:-5}"
