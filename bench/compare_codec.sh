#!/usr/bin/env bash
# compare_codec.sh BUILD_DIR REV [FRAMES [REPS [FILES]]] - frames.h at git revision REV (A)
# against the working tree's frames.h (B) and libprotobuf, in one process, interleaved,
# best CPU time of REPS repetitions (bench/compare_codec.c). For telling apart changes
# smaller than the noise between separate runs on a shared machine.
#   FRAMES default 200000, REPS default 10, FILES 1 (also write and read a file) or 0.
# Not run by ./build.sh bench. Needs the peers' objects of bench/bench_codec.sh.
BENCH_USAGE="REV [FRAMES [REPS [FILES]]]"
. "$(dirname "$0")/common.sh"
REV=${2:?usage: bench/compare_codec.sh BUILD_DIR REV [FRAMES [REPS [FILES]]]}
OUT=$BUILD/bench
CMP=$OUT/compare
if [ ! -e "$OUT/frames.pb.o" ]; then   # the peers' objects: a tiny run of bench_codec builds them
    BENCH_FRAMES=100 BENCH_REPS=1 bench/bench_codec.sh "$BUILD" >/dev/null
fi
rm -rf "$CMP"
mkdir -p "$CMP/a/bench" "$CMP/b/bench"
git show "$REV:frames.h" > "$CMP/a/frames.h"
cp frames.h "$CMP/b/frames.h"
for v in a b; do cp bench/bench_codec.c bench/codec.h "$CMP/$v/bench/"; done
CFLAGS="-std=c99 -D_GNU_SOURCE -O2 -DNDEBUG -Wall -Wextra -Werror -Wno-unused-function -Ibench"
nice gcc $CFLAGS -DVARIANT=A -DBENCH_CODEC_C="\"$CMP/a/bench/bench_codec.c\"" -c bench/compare_codec.c -o "$CMP/a.o"
nice gcc $CFLAGS -DVARIANT=B -DBENCH_CODEC_C="\"$CMP/b/bench/bench_codec.c\"" -c bench/compare_codec.c -o "$CMP/b.o"
nice gcc $CFLAGS -c bench/compare_codec.c -o "$CMP/driver.o"
g++ "$CMP/driver.o" "$CMP/a.o" "$CMP/b.o" "$OUT/codec_pbc.o" "$OUT/frames.pb-c.o" \
    "$OUT/codec_pbcxx.o" "$OUT/frames.pb.o" -o "$CMP/compare_codec" -lprotobuf -lprotobuf-c -lpthread
echo "# A = frames.h at $REV ($(git rev-parse --short "$REV")), B = working tree"
"$CMP/compare_codec" "$CMP" "${3:-200000}" "${4:-10}" "${5:-1}"
