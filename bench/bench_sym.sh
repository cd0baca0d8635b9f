#!/usr/bin/env bash
# Symbolising a million distinct pcs (bench/bench_sym.c) against addr2line -f on the
# same file and the first M of the same addresses, in the same run.
#   BENCH_SYM_FILE (default: libc.so.6), BENCH_SYM_N (1000000), BENCH_SYM_M (100000)
. "$(dirname "$0")/common.sh"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
file=${BENCH_SYM_FILE:-$(ldd /bin/true | awk '/libc\.so/ { print $3 }')}
n=${BENCH_SYM_N:-1000000}
m=${BENCH_SYM_M:-100000}
read -r vaddr memsz < <(readelf -lW "$file" | awk '$1 == "LOAD" && / R E / { print $3, $6; exit }')
defs=""; libs=""
if [ -f /usr/include/elfutils/libdw.h ]; then defs="-DFRAMES_SYM_LIBDW"; libs="-ldw -lelf"; fi
gcc -std=c99 -D_GNU_SOURCE -O2 $defs -DFRAMES_IMPLEMENTATION -DFRAMES_SYM_IMPLEMENTATION -I. \
    bench/bench_sym.c -o "$TMP/bench_sym" $libs
out=$("$TMP/bench_sym" "$file" "$vaddr" "$memsz" "$n" "$TMP/addrs" "$m")
echo "$out" | grep -v '^BENCH'
ours=$(echo "$out" | sed -n 's/^BENCH symbols_ns_per_pc //p')
lines=$(echo "$out" | sed -n 's/^BENCH lines_ns_per_pc //p')
start=$(date +%s.%N)
addr2line -f -e "$file" <"$TMP/addrs" >/dev/null
end=$(date +%s.%N)
awk -v s="$start" -v e="$end" -v m="$(wc -l <"$TMP/addrs")" -v o="$ours" -v l="${lines:-0}" 'BEGIN {
    p = (e - s) * 1e9 / m
    printf "addr2line -f (peer): %.3f s for %d pcs = %.0f ns/pc\n", e - s, m, p
    printf "ratio: frames_sym symbols %.0fx faster per pc than addr2line", p / o
    if (l > 0) printf ", with file:line %.0fx", p / l
    printf "\n" }'
