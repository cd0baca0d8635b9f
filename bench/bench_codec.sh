#!/usr/bin/env bash
# bench_codec.sh BUILD_DIR - frames.h against libprotobuf C++ (libtrace) and protobuf-c
# (QEMU tracewrap): write and fully decode 1,000,000 PIN-like std_frames in one process.
# Peers' code is generated from tests/frames.proto into BUILD_DIR/bench/gen (not committed).
#   BENCH_FRAMES (default 1000000), BENCH_REPS (default 3), BENCH_DIR (where the three
#   ~190 MB trace files go; default BUILD_DIR/bench; removed afterwards)
#   BENCH_CALLGRIND=1: instead, instructions per frame of each row under valgrind's
#   callgrind (deterministic; BENCH_FRAMES defaults to 20000 there, one repetition)
. "$(dirname "$0")/common.sh"
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
srcs=(bench/bench_codec.c bench/codec_pbc.c bench/codec_pbcxx.cc bench/codec.h bench/codec_ours.h frames.h "$GEN/frames.pb.cc")
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

if [ -n "${BENCH_CALLGRIND:-}" ]; then
    command -v valgrind >/dev/null || { echo "bench_codec: valgrind missing" >&2; exit 1; }
    n=${BENCH_FRAMES:-20000}
    out=$OUT/callgrind.out
    valgrind -q --tool=callgrind --callgrind-out-file="$out" "$BIN" "${BENCH_DIR:-$OUT}" "$n" 1 >/dev/null
    echo "# instructions per frame (callgrind, $n frames; each row's function, inclusive)"
    printf '%-10s %10s %12s %12s   %s\n' "" frames.h libprotobuf protobuf-c "ratios"
    callgrind_annotate --inclusive=yes --threshold=100 "$out" 2>/dev/null |
        sed -nE 's/^ *([0-9,]+) .*[?:](ours|pbcxx|pbc)_(write|read|encode_mem|decode_mem) .*/\1 \2 \3/p' |
        awk -v n="$n" '{ gsub(",", "", $1); v[$3 " " $2] = $1 / n }
            END { split("write read encode_mem decode_mem", rows, " ")
                  for (i = 1; i <= 4; i++) {
                      o = v[rows[i] " ours"]; a = v[rows[i] " pbcxx"]; b = v[rows[i] " pbc"]
                      printf "%-10s %10.0f %12.0f %12.0f   %4.1fx %5.1fx\n", rows[i], o, a, b,
                             o ? a / o : 0, o ? b / o : 0 } }'
    rm -f "$out"
    exit 0
fi

echo "# frames.h vs libprotobuf $(protoc --version | cut -d' ' -f2) and protobuf-c $(protoc-c --version 2>&1 | head -1 | awk '{print $2}'), $(nproc) CPUs, gcc $OPT"
"$BIN" "${BENCH_DIR:-$OUT}" "${BENCH_FRAMES:-1000000}" "${BENCH_REPS:-3}"
