#!/usr/bin/env bash
# bench_parquet.sh BUILD_DIR - `frames export --parquet` against `frames dump --jsonl` on
# bench_codec's 1,000,000-frame trace (PIN-like std_frames, 4 operands each): time (best
# wall and best CPU of RUNS whole processes) and output size; then DuckDB's GROUP BY pc over
# the export against `frames stat` on the trace (the same top 10, checked), whole processes
# and DuckDB's query alone. Targets (issue 17): export at least 5x faster and 5x smaller
# than the JSONL rows.
# Then (issue 26) a trace recorded by `frames record` (`gzip -c` of 60 KB of text, ~9M
# frames, kept as DIR/gzip.frames.zst): export speed in frames per CPU second and the
# Parquet's size against the .frames.zst it came from, next to `frames stat` and
# `zstd -d` of the same file (targets: >= 5 M frames/s, no larger than the .zst); frames
# per second of wall time too (the export writes row groups on a second thread).
#   PQ_BENCH_RUNS (default 3), PQ_BENCH_DIR (trace and outputs; default BUILD_DIR/bench/parquet,
#   the ~190 MB trace is kept there for the next run; ~1.2 GB of JSONL is removed after),
#   PQ_BENCH_ZST (the .frames.zst to export instead of recording one)
set -euo pipefail
BUILD=$(cd "${1:?usage: bench/bench_parquet.sh BUILD_DIR}" && pwd)
cd "$(dirname "$0")/.."
RUNS=${PQ_BENCH_RUNS:-3}
DIR=${PQ_BENCH_DIR:-$BUILD/bench/parquet}
FRAMES=$BUILD/frames
DUCK=$BUILD/duckdb
mkdir -p "$DIR"
TRACE=$DIR/bench-0.frames
[ -x "$FRAMES" ] || { echo "bench_parquet: $FRAMES not built" >&2; exit 1; }
if [ ! -f "$TRACE" ]; then   # bench_codec's own writer keeps its file with BENCH_KEEP
    BENCH_KEEP=1 BENCH_DIR=$DIR BENCH_REPS=1 bench/bench_codec.sh "$BUILD" >/dev/null
fi
trap 'rm -rf "$DIR/rows.jsonl" "$DIR/pq" "$DIR/pqz" "$DIR/q.js" "$DIR/time.txt"' EXIT

# best CMD... -> W (best wall s), C (best user+sys s) of RUNS runs
best() {
    local i t w c
    W=""; C=""
    for ((i = 0; i < RUNS; i++)); do
        /usr/bin/time -o "$DIR/time.txt" -f "%e %U %S" "$@" >/dev/null 2>&1
        t=$(tail -1 "$DIR/time.txt")
        w=$(echo "$t" | awk '{print $1}'); c=$(echo "$t" | awk '{printf "%.2f", $2 + $3}')
        if [ -z "$W" ] || awk -v a="$w" -v b="$W" 'BEGIN{exit !(a < b)}'; then W=$w; fi
        if [ -z "$C" ] || awk -v a="$c" -v b="$C" 'BEGIN{exit !(a < b)}'; then C=$c; fi
    done
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN{ printf "%.1fx", (b > 0 ? a / b : 0) }'; }

echo "trace: $TRACE ($(stat -Lc %s "$TRACE") bytes), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "best of $RUNS whole processes; CPU = user + system"
best sh -c "'$FRAMES' dump --jsonl '$TRACE' > '$DIR/rows.jsonl'"
JW=$W; JC=$C; JS=$(stat -c %s "$DIR/rows.jsonl")
rm -f "$DIR/rows.jsonl"
best sh -c "rm -rf '$DIR/pq' && '$FRAMES' export '$TRACE' --parquet '$DIR/pq'"
PW=$W; PC=$C; PS=$(du -sb "$DIR/pq" | cut -f1)
printf '%-34s %8s %8s %14s\n' "" "wall s" "CPU s" "bytes"
printf '%-34s %8s %8s %14s\n' "frames dump --jsonl (operand rows)" "$JW" "$JC" "$JS"
printf '%-34s %8s %8s %14s\n' "frames export --parquet (5 tables)" "$PW" "$PC" "$PS"
echo "export vs JSONL: $(ratio "$JW" "$PW") faster (wall), $(ratio "$JC" "$PC") (CPU), $(ratio "$JS" "$PS") smaller"

# A recorded trace and its .zst (issue 26's targets)
ZST=${PQ_BENCH_ZST:-$DIR/gzip.frames.zst}
if [ ! -f "$ZST" ] && "$FRAMES" record --probe >/dev/null 2>&1; then
    head -c 61440 frames.h > "$DIR/text60k"
    "$FRAMES" record -f -o "$ZST" -- gzip -c "$DIR/text60k" >/dev/null 2>&1 || rm -f "$ZST"
    rm -f "$DIR/text60k"
fi
if [ -f "$ZST" ]; then
    NF=$("$FRAMES" stat --json "$ZST" | sed 's/^{"frames":\([0-9]*\).*/\1/')
    ZS=$(stat -Lc %s "$ZST")
    per_s() { awk -v n="$NF" -v c="$1" 'BEGIN{ printf "%.2f", (c > 0 ? n / c / 1e6 : 0) }'; }
    best sh -c "zstd -dc '$ZST' > /dev/null"
    ZW=$W; ZC=$C
    best "$FRAMES" stat "$ZST"
    TW=$W; TC=$C
    best sh -c "rm -rf '$DIR/pqz' && '$FRAMES' export '$ZST' --parquet '$DIR/pqz'"
    XW=$W; XC=$C; XS=$(du -sb "$DIR/pqz" | cut -f1)
    echo "recorded trace: $ZST ($NF frames, $ZS bytes), load $(cut -d' ' -f1-3 /proc/loadavg)"
    printf '%-34s %8s %8s %14s %10s %10s\n' "" "wall s" "CPU s" "bytes" "M fr/CPU s" "M fr/wall s"
    printf '%-34s %8s %8s %14s %10s %10s\n' "zstd -d (the .zst)" "$ZW" "$ZC" "" "$(per_s "$ZC")" "$(per_s "$ZW")"
    printf '%-34s %8s %8s %14s %10s %10s\n' "frames stat" "$TW" "$TC" "" "$(per_s "$TC")" "$(per_s "$TW")"
    printf '%-34s %8s %8s %14s %10s %10s\n' "frames export --parquet" "$XW" "$XC" "$XS" "$(per_s "$XC")" "$(per_s "$XW")"
    for t in "$DIR"/pqz/*.parquet; do
        printf '  %-32s %14s\n' "$(basename "$t")" "$(stat -c %s "$t")"
    done
    echo "export: $(per_s "$XC") M frames per CPU second, $(per_s "$XW") per wall second (target 5), Parquet/.zst size $(awk -v a="$XS" -v b="$ZS" 'BEGIN{ printf "%.2f", a / b }') (target <= 1)"
else
    echo "frames record unavailable and no PQ_BENCH_ZST: the recorded trace's figures skipped"
fi

if [ ! -f "$DUCK/node_modules/@duckdb/node-api/package.json" ]; then
    echo "DuckDB not installed ($DUCK; ./build.sh test installs it): GROUP BY pc skipped"
    exit 0
fi
cat > "$DIR/q.js" <<'EOF'
const { DuckDBInstance } = require(require('path').join(process.argv[2], 'node_modules/@duckdb/node-api'));
(async () => {
  const db = await DuckDBInstance.create(':memory:');
  const c = await db.connect();
  const t0 = process.hrtime.bigint();
  const r = await c.runAndReadAll(`SELECT pc, count(*) AS n FROM '${process.argv[3]}' GROUP BY pc ORDER BY n DESC, pc LIMIT 10`);
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  for (const row of r.getRowsJson()) console.log(row.join(' '));
  console.error(`query ${ms.toFixed(1)} ms`);
})();
EOF
Q=("node" "$DIR/q.js" "$DUCK" "$DIR/pq/instructions.parquet")
best "${Q[@]}"
DW=$W; DC=$C
QMS=$( { "${Q[@]}" >/dev/null; } 2>&1 | sed -n 's/query \(.*\) ms/\1/p')
best "$FRAMES" stat --top 10 "$TRACE"
SW=$W; SC=$C
ours=$("$FRAMES" stat --top 10 --json "$TRACE" | sed 's/.*"hottest":\[//; s/\].*//; s/},{/\n/g; s/[{}]//g' |
       sed 's/"pc":\([0-9]*\),"count":\([0-9]*\)/\1 \2/')
theirs=$("${Q[@]}" 2>/dev/null)
printf '%-34s %8s %8s\n' "frames stat --top 10 (trace)" "$SW" "$SC"
printf '%-34s %8s %8s   (query alone %s ms, node start included above)\n' \
    "DuckDB GROUP BY pc (instructions)" "$DW" "$DC" "$QMS"
echo "DuckDB over the export vs frames stat: $(ratio "$SW" "$DW") (wall), $(ratio "$SC" "$DC") (CPU); top 10: $([ "$ours" = "$theirs" ] && echo agree || echo DIFFER)"
