#!/usr/bin/env bash
# demo.sh FRAMES [SHARED] - the main job end to end, run by `./build.sh demo`:
# record a real program, look at the trace, dump a few frames, run a query and a value
# profile. Steps whose subcommand is not in this build of `frames` are skipped with a note.
set -euo pipefail
FRAMES=${1:-build/frames}
SHARED=${2:-../shared}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

step() { printf '\n\033[1m== %s\033[0m\n' "$*" >&2; }
has() { "$FRAMES" --help | awk '{print $1}' | grep -qx "$1"; }
skip() { printf '(skipped: this build has no "frames %s" yet)\n' "$1" >&2; }

# A small program with something for a value profile: it reads a table of zeros several
# times (zero-value and redundant loads) and writes back what is already there (silent
# stores), then prints a sum.
cat >"$tmp/demo.c" <<'EOF'
#include <stdio.h>
static volatile long table[64];
int main(void) {
    long sum = 0;
    for (int round = 0; round < 4; round++)
        for (int i = 0; i < 64; i++) {
            sum += table[i];
            table[i] = table[i];
        }
    for (int i = 0; i < 64; i += 2) table[i] = i;
    for (int i = 0; i < 64; i++) sum += table[i];
    printf("sum %ld\n", sum);
    return 0;
}
EOF
prog=(/bin/echo "hello from a traced program")
if command -v cc >/dev/null && cc -O1 -static -o "$tmp/demo" "$tmp/demo.c" 2>/dev/null; then
    prog=("$tmp/demo")
fi
trace=$tmp/demo.frames

if ! has record; then skip record; exit 0; fi
step "frames record --probe   (can the kernel step by blocks?)"
"$FRAMES" record --probe || true

step "frames record -o demo.frames -- ${prog[*]##*/}"
"$FRAMES" record -o "$trace" -- "${prog[@]}"

step "frames info demo.frames"
if has info; then "$FRAMES" info "$trace"; else skip info; fi

step "frames dump --json demo.frames | head   (modules, then one std_frame per instruction)"
if has dump; then
    "$FRAMES" dump --json "$trace" | sed -n '2,7p' | cut -c1-230
    step "frames dump --pbtext: the program's first instruction, with its operand values"
    # awk stops reading after the first instruction: dump then dies of SIGPIPE, as it should
    { "$FRAMES" dump --pbtext "$trace" || true; } |
        awk '/^frame /{blk=""} {blk=blk $0 "\n"} /std_frame/{s=1} s && /^}/{printf "%s", blk; exit}' |
        grep -v -e 'taint' -e '^ *}$'
else skip dump; fi

step "the syscalls the program made (frames dump --json, syscall_frame numbers)"
if has dump; then
    "$FRAMES" dump --json "$trace" | grep -o '"syscall_frame":{[^}]*"number":[0-9]*' |
        sed 's/.*"number"://' | tr '\n' ' '
    echo
else skip dump; fi

step "frames query: instructions whose 64-bit register read equals the address of a memory operand they write"
if has query; then
    "$FRAMES" query "$trace" --var a:reg64 --var b:mem64 \
        --where '(and (v/read a) (v/written b) (= (v/value a) (v/addr b)))' --limit 5
    printf 'how many: '
    "$FRAMES" query "$trace" --var a:reg64 --var b:mem64 \
        --where '(and (v/read a) (v/written b) (= (v/value a) (v/addr b)))' --count
else skip query; fi

step "frames vprof: redundant loads, silent stores, zero-value loads"
if has vprof; then
    "$FRAMES" vprof "$trace" --top 5 || echo "(vprof failed)" >&2
else skip vprof; fi
