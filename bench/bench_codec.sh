#!/usr/bin/env bash
# bench_codec.sh BUILD_DIR - frames.h against libprotobuf C++ (libtrace) and protobuf-c
# (QEMU tracewrap): write and fully decode 1,000,000 PIN-like std_frames in one process.
# Peers' code is generated from tests/frames.proto into BUILD_DIR/bench/gen (not committed).
#   BENCH_FRAMES (default 1000000), BENCH_REPS (default 3), BENCH_DIR (where the three
#   ~190 MB trace files go; default BUILD_DIR/bench; removed afterwards)
set -euo pipefail
BUILD=${1:?usage: bench/bench_codec.sh BUILD_DIR}
cd "$(dirname "$0")/.."
OUT=$BUILD/bench
GEN=$OUT/gen
mkdir -p "$GEN"
for tool in protoc protoc-c g++; do
    command -v $tool >/dev/null || { echo "bench_codec: $tool missing (./build.sh deps)" >&2; exit 1; }
done

if [ ! -e "$GEN/frames.pb.cc" ] || [ tests/frames.proto -nt "$GEN/frames.pb.cc" ]; then
    protoc -Itests --cpp_out="$GEN" tests/frames.proto
    protoc-c -Itests --c_out="$GEN" tests/frames.proto
    # operand_usage.base collides with protobuf-c's `ProtobufCMessage base` member
    # (qemu's build renames it with sed too); the wire format is unaffected
    sed -i 's/protobuf_c_boolean base;/protobuf_c_boolean base_;/' "$GEN/frames.pb-c.h"
    sed -i 's/offsetof(OperandUsage, base)/offsetof(OperandUsage, base_)/' "$GEN/frames.pb-c.c"
fi

OPT="-O2 -DNDEBUG"
BIN=$OUT/bench_codec
srcs=(bench/bench_codec.c bench/codec_pbc.c bench/codec_pbcxx.cc bench/codec.h frames.h "$GEN/frames.pb.cc")
stale=0
for s in "${srcs[@]}"; do [ "$s" -nt "$BIN" ] && stale=1; done
if [ ! -x "$BIN" ] || [ $stale = 1 ]; then
    nice gcc -std=c99 -D_GNU_SOURCE $OPT -Wall -Wextra -Werror -I. -c bench/bench_codec.c -o "$OUT/bench_codec.o"
    nice gcc -std=c99 $OPT -Wall -Wextra -Werror -Ibench -I"$GEN" -c bench/codec_pbc.c -o "$OUT/codec_pbc.o"
    nice gcc -std=c99 $OPT -I"$GEN" -c "$GEN/frames.pb-c.c" -o "$OUT/frames.pb-c.o"
    nice g++ -std=c++17 $OPT -Wall -Wextra -Werror -Ibench -I"$GEN" -c bench/codec_pbcxx.cc -o "$OUT/codec_pbcxx.o"
    nice g++ -std=c++17 $OPT -I"$GEN" -c "$GEN/frames.pb.cc" -o "$OUT/frames.pb.o"
    g++ "$OUT/bench_codec.o" "$OUT/codec_pbc.o" "$OUT/frames.pb-c.o" "$OUT/codec_pbcxx.o" \
        "$OUT/frames.pb.o" -o "$BIN" -lprotobuf -lprotobuf-c -lpthread
fi

echo "# frames.h vs libprotobuf $(protoc --version | cut -d' ' -f2) and protobuf-c $(protoc-c --version 2>&1 | head -1 | awk '{print $2}'), $(nproc) CPUs, gcc $OPT"
"$BIN" "${BENCH_DIR:-$OUT}" "${BENCH_FRAMES:-1000000}" "${BENCH_REPS:-3}"
