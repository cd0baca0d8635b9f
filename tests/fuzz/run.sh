#!/usr/bin/env bash
# tests/fuzz/run.sh - build and run every libFuzzer target tests/fuzz/fuzz_*.c
#
#   tests/fuzz/run.sh short             each target for FUZZ_SHORT_SECONDS (default 4) s;
#                                       ./build.sh test runs this
#   tests/fuzz/run.sh long [SECONDS]    each target for SECONDS (default 60); ./build.sh fuzz
#   tests/fuzz/run.sh one TARGET [SECS] one target (name without fuzz_ prefix or with it)
#   tests/fuzz/run.sh build             only build the targets
#   tests/fuzz/run.sh repro TARGET FILE...   run a target on saved inputs (e.g. a crash)
#   tests/fuzz/run.sh coverage          line/region coverage of the headers reached by
#                                       the corpora so far (llvm-cov), per target and total
#
# A target is any tests/fuzz/fuzz_*.c; it includes fuzz_util.h and defines
# LLVMFuzzerTestOneInput. Directives as "// " line comments (see fuzz_util.h):
#   fuzz-seeds: files|frames|meta GLOB...  seeds made from $FRAMES_SHARED/GLOB at run time
#   fuzz-needs: HEADER LIBS...             skip the target unless <HEADER> is installed
#   fuzz-flags: FLAGS...                   extra libFuzzer flags
#   fuzz-tools: yes                        link the frames command's sources (tools/*.c
#                                          but frames.c's main, tools/record/*.c, the
#                                          optional libraries ./build.sh build found)
# Seeds kept in the repository (hand-made inputs, fixed crashes): tests/fuzz/seeds/TARGET/.
# Outputs under build/fuzz/: binaries, corpus/TARGET (grows across runs),
# artifacts/ (crashing inputs), logs/TARGET.log.
set -uo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
SHARED=${FRAMES_SHARED:-$ROOT/../shared}
OUT=$ROOT/build/fuzz
CC=${FUZZ_CC:-clang}
CFLAGS="-std=c99 -D_GNU_SOURCE -g -O1 -fno-omit-frame-pointer -Wall -Wextra -Wpedantic -Werror \
-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all"
NICE="nice -n 10"

die() { printf 'fuzz: %s\n' "$*" >&2; exit 1; }
log() { printf '== fuzz: %s\n' "$*" >&2; }

# directive NAME FILE: the values of every "NAME: ..." line of FILE, one per line
directive() { sed -n "s|^//[[:space:]]*$1:[[:space:]]*||p" "$2" | sed 's/[[:space:]]*$//'; }

have_header() { echo "#include <$1>" | $CC -E -x c - >/dev/null 2>&1; }

check_toolchain() {
    command -v "$CC" >/dev/null || die "$CC not found (install clang and libclang-rt-14-dev)"
    echo 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n){(void)d;(void)n;return 0;}' \
        > "$OUT/probe.c"
    $CC -fsanitize=fuzzer,address,undefined "$OUT/probe.c" -o "$OUT/probe" 2>/dev/null \
        || die "$CC cannot build libFuzzer targets (install libclang-rt-14-dev)"
    rm -f "$OUT/probe.c" "$OUT/probe"
}

targets() {
    local f
    for f in tests/fuzz/fuzz_*.c; do [ -e "$f" ] && basename "$f" .c; done
}

# build_target NAME: 0 built (or up to date), 1 failed, 2 skipped (missing library)
build_target() {
    local name=$1 src=tests/fuzz/$1.c bin=$OUT/$1 libs="" need h
    while read -r need; do
        [ -n "$need" ] || continue
        h=${need%% *}
        if ! have_header "$h"; then
            log "$name skipped: <$h> is not installed"
            return 2
        fi
        [ "$need" != "$h" ] && libs+=" ${need#* }"
    done < <(directive fuzz-needs "$src")
    local deps=("$src" tests/fuzz/*.h "$ROOT"/frames*.h) tools=() tflags="" t
    if [ -n "$(directive fuzz-tools "$src")" ]; then
        # the command's own build settings (build.sh stamps them: CC|CFLAGS|...|defines|libs)
        [ -f "$ROOT/build/flags" ] || { log "$name skipped: run ./build.sh build first"; return 2; }
        tflags=$(awk -F'|' '{print $(NF-1)}' "$ROOT/build/flags")
        libs+=" $(awk -F'|' '{print $NF}' "$ROOT/build/flags")"
        for t in tools/*.c tools/record/*.c; do [ "$t" = tools/frames.c ] || tools+=("$t"); done
        deps+=("${tools[@]}" tools/*.h tools/*.def tools/record/*.h)
    fi
    local newest=0 d
    if [ -e "$bin" ]; then
        for d in "${deps[@]}"; do [ "$d" -nt "$bin" ] && newest=1; done
        [ $newest -eq 0 ] && return 0
    fi
    log "building $name"
    # shellcheck disable=SC2086
    $NICE $CC $CFLAGS $tflags -I"$ROOT" -Itools -Itests/fuzz "$src" ${tools[@]+"${tools[@]}"} -o "$bin" \
        $libs -lpthread -lm || return 1
}

build_seedgen() {
    if [ ! -e "$OUT/seedgen" ] || [ tests/fuzz/seedgen.c -nt "$OUT/seedgen" ] || [ frames.h -nt "$OUT/seedgen" ]; then
        $NICE gcc -std=c99 -D_GNU_SOURCE -O1 -Wall -Wextra -Werror -I"$ROOT" tests/fuzz/seedgen.c \
            -o "$OUT/seedgen" || die "cannot build seedgen"
    fi
}

# make_seeds NAME: fills $OUT/seeds/NAME from the target's fuzz-seeds directives
make_seeds() {
    local name=$1 dir=$OUT/seeds/$1 line mode pat files
    rm -rf "$dir"
    mkdir -p "$dir"
    while read -r line; do
        [ -n "$line" ] || continue
        mode=${line%% *}
        files=()
        for pat in ${line#* }; do
            for f in "$SHARED"/$pat; do [ -e "$f" ] && files+=("$f"); done
        done
        [ ${#files[@]} -gt 0 ] || { log "$name: no files match seeds '$line' under $SHARED"; continue; }
        "$OUT/seedgen" "$mode" "$dir" "${files[@]}" || log "$name: some seeds could not be made"
    done < <(directive fuzz-seeds "tests/fuzz/$name.c")
}

# run_target NAME SECONDS: runs libFuzzer, prints one summary line, returns its status
run_target() {
    local name=$1 secs=$2 flags
    local corpus=$OUT/corpus/$name logf=$OUT/logs/$name.log dirs
    mkdir -p "$corpus" "$OUT/artifacts" "$OUT/logs"
    make_seeds "$name"
    dirs=("$corpus" "$OUT/seeds/$name")
    # absolute: a target may change its directory (fuzz_cli works in a private one)
    [ -d "tests/fuzz/seeds/$name" ] && dirs+=("$ROOT/tests/fuzz/seeds/$name")
    flags=$(directive fuzz-flags "tests/fuzz/$name.c" | tr '\n' ' ')
    log "running $name for ${secs}s"
    # shellcheck disable=SC2086
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:allocator_may_return_null=1 \
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
        $NICE "$OUT/$name" -max_total_time="$secs" -timeout=20 -rss_limit_mb=2048 \
        -print_final_stats=1 -artifact_prefix="$OUT/artifacts/$name-" $flags "${dirs[@]}" \
        >"$logf" 2>&1
    local rc=$?
    local last execs
    last=$(grep -E '^#[0-9]+.*(DONE|pulse|NEW|REDUCE|INITED).*cov:' "$logf" | tail -1)
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$logf" | tail -1)
    local cov ft corp
    cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
    ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
    corp=$(sed -n 's/.* corp: \([0-9]*\/[0-9]*[a-zA-Z]*\).*/\1/p' <<<"$last")
    printf '%-16s %6ss  execs %-10s cov %-6s ft %-7s corpus %s\n' "$name" "$secs" \
        "${execs:-?}" "${cov:-?}" "${ft:-?}" "${corp:-?}" >>"$OUT/summary.txt"
    if [ $rc -ne 0 ]; then
        printf 'fuzz: %s FAILED (exit %d); log: %s\n' "$name" "$rc" "$logf" >&2
        grep -E 'ERROR|invariant failed|runtime error|SUMMARY|Test unit written' "$logf" | head -20 >&2
        printf 'reproduce: %s/%s %s/artifacts/%s-*\n' "$OUT" "$name" "$OUT" "$name" >&2
    fi
    return $rc
}

# build_all NAME...: builds in parallel (JOBS at a time); leaves NAME's status in
# $OUT/status/NAME (0 built, 1 failed, 2 skipped)
build_all() {
    local n pids=() jobs=${JOBS:-$(nproc 2>/dev/null || echo 2)}
    mkdir -p "$OUT/status"
    for n in "$@"; do
        ( build_target "$n"; echo $? >"$OUT/status/$n" ) &
        pids+=($!)
        if [ ${#pids[@]} -ge "$jobs" ]; then wait "${pids[0]}"; pids=("${pids[@]:1}"); fi
    done
    wait
}

run_all() {   # run_all SECONDS [NAME...]
    local secs=$1; shift
    local names=("$@") n rc=0 st
    [ ${#names[@]} -gt 0 ] || mapfile -t names < <(targets)
    [ ${#names[@]} -gt 0 ] || { log "no targets"; return 0; }
    [ -d "$SHARED/vectors" ] || die "reference material not found at $SHARED (set FRAMES_SHARED)"
    build_seedgen
    build_all "${names[@]}"
    : >"$OUT/summary.txt"
    for n in "${names[@]}"; do
        st=$(cat "$OUT/status/$n" 2>/dev/null || echo 1)
        if [ "$st" -eq 2 ]; then printf '%-16s skipped (library missing)\n' "$n" >>"$OUT/summary.txt"; continue; fi
        if [ "$st" -ne 0 ]; then rc=1; printf 'fuzz: %s does not build\n' "$n" >&2; continue; fi
        run_target "$n" "$secs" || rc=1
    done
    cat "$OUT/summary.txt" >&2
    return $rc
}

# coverage: each target built with source-based coverage, run over its corpora once
coverage() {
    local n dir=$OUT/coverage libs need h profiles=() objs=() report
    local cov=llvm-cov prof=llvm-profdata
    command -v $cov >/dev/null || cov=llvm-cov-14
    command -v $prof >/dev/null || prof=llvm-profdata-14
    command -v $cov >/dev/null || die "llvm-cov not found"
    mkdir -p "$dir"
    build_seedgen
    for n in $(targets); do
        libs=""
        while read -r need; do
            [ -n "$need" ] || continue
            h=${need%% *}
            have_header "$h" || continue 2
            [ "$need" != "$h" ] && libs+=" ${need#* }"
        done < <(directive fuzz-needs "tests/fuzz/$n.c")
        if [ -n "$(directive fuzz-tools "tests/fuzz/$n.c")" ]; then
            printf '%-16s skipped (the command line is not header coverage)\n' "$n"
            continue
        fi
        $NICE $CC -std=c99 -D_GNU_SOURCE -O1 -g -fsanitize=fuzzer -fprofile-instr-generate \
            -fcoverage-mapping -I"$ROOT" -Itests/fuzz "tests/fuzz/$n.c" -o "$dir/$n" $libs -lm || return 1
        make_seeds "$n"
        local dirs=("$OUT/seeds/$n")
        [ -d "$OUT/corpus/$n" ] && dirs+=("$OUT/corpus/$n")
        [ -d "tests/fuzz/seeds/$n" ] && dirs+=("tests/fuzz/seeds/$n")
        LLVM_PROFILE_FILE="$dir/$n.profraw" "$dir/$n" -runs=0 "${dirs[@]}" >"$dir/$n.log" 2>&1 || return 1
        $prof merge -sparse "$dir/$n.profraw" -o "$dir/$n.profdata" || return 1
        profiles+=("$dir/$n.profraw")
        objs+=("-object=$dir/$n")
        report=$($cov report "$dir/$n" -instr-profile="$dir/$n.profdata" "$ROOT"/frames*.h | tail -1)
        printf '%-16s %s\n' "$n" "$report"
    done
    $prof merge -sparse "${profiles[@]}" -o "$dir/all.profdata" || return 1
    # all targets together (the first object plus the others)
    local first=${objs[0]#-object=}
    $cov report "$first" "${objs[@]:1}" -instr-profile="$dir/all.profdata" "$ROOT"/frames*.h
    log "per-line view: $cov show $first ${objs[*]:1} -instr-profile=$dir/all.profdata $ROOT/frames.h"
}

mkdir -p "$OUT"
mode=${1:-short}
case "$mode" in
    short) check_toolchain; run_all "${FUZZ_SHORT_SECONDS:-4}" ;;
    long) check_toolchain; run_all "${2:-60}" ;;
    one)
        check_toolchain
        t=${2:?usage: run.sh one TARGET [SECONDS]}; t=fuzz_${t#fuzz_}
        [ -e "tests/fuzz/$t.c" ] || die "no target tests/fuzz/$t.c"
        run_all "${3:-60}" "$t" ;;
    build)
        check_toolchain
        rc=0
        mapfile -t all < <(targets)
        build_all "${all[@]}"
        for n in "${all[@]}"; do [ "$(cat "$OUT/status/$n")" = 1 ] && rc=1; done
        exit $rc ;;
    coverage) check_toolchain; coverage ;;
    repro)
        t=${2:?usage: run.sh repro TARGET FILE...}; t=fuzz_${t#fuzz_}; shift 2
        check_toolchain
        build_target "$t" || exit 1
        ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
            "$OUT/$t" "$@" ;;
    *) die "usage: run.sh short | long [SECONDS] | one TARGET [SECONDS] | build | coverage | repro TARGET FILE..." ;;
esac
