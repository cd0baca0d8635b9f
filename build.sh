#!/usr/bin/env bash
# build.sh - build, test, demo, benchmark, fuzz and install frames.
#
#   ./build.sh [build]      build build/frames and the test programs
#   ./build.sh test         install missing Debian packages, build, run every test suite
#                           normally and under ASan+UBSan, the header checks and a short
#                           fuzzing round
#   ./build.sh demo         the main job on built-in sample data
#   ./build.sh bench        benchmarks (figures and ratios against peers, same run)
#   ./build.sh fuzz [SECS]  run every libFuzzer target for SECS seconds (default 60)
#   ./build.sh valgrind     every test suite, and the frames command they run, under
#                           valgrind memcheck (minutes; not part of ./build.sh test)
#   ./build.sh headers      every header with every documented option, alone and
#                           combined, as C99 and C++ with gcc and clang
#   ./build.sh asan         build the ASan+UBSan variant only (build/asan)
#   ./build.sh python       the Python package (python/, cffi) into build/python for
#                           Debian's /usr/bin/python3: PYTHONPATH=build/python
#   ./build.sh install [PREFIX]   headers, frames, man page, pkg-config files
#   ./build.sh deps         install the Debian packages the build and tests need
#   ./build.sh clean        remove build/
#   ./build.sh help         this text (also -h, --help)
#
# Layout conventions (so that new parts need no edit here):
#   tools/cmd_*.c, tools/cli.c, tools/frames.c  -> build/frames (one command)
#   tools/record/*.c                            -> also build/frames: the engines of `frames
#                                                  record` (tools/record/record.h)
#   tools/impl.c                                -> the one translation unit that defines
#                                                  FRAMES_ALL_IMPLEMENTATION (a new header
#                                                  adds its #include there)
#   tests/test_*.c                              -> one cmocka suite each, build/tests/
#   tests/fuzz/fuzz_*.c                         -> libFuzzer targets, build/fuzz/
#   bench/bench_*.c / bench_*.cc                -> benchmark programs, build/bench/
# Optional libraries are detected: libipt (frames_pt.h), capstone (frames record),
# libzstd (frames_zstd.h: compressed .frames.zst traces), libdw (file:line in
# frames_sym.h) and valgrind (tools/record/vg: the Valgrind tool of `frames record
# --engine valgrind`, built into build/vg/ next to build/frames).
set -euo pipefail
cd "$(dirname "$0")"
ROOT=$PWD
SHARED=${FRAMES_SHARED:-$ROOT/../shared}
export FRAMES_SHARED=$SHARED
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}

WARN="-Wall -Wextra -Wpedantic -Werror"
CSTD="-std=c99 -D_GNU_SOURCE"

PACKAGES="gcc g++ clang make pkg-config libc6-dev libcmocka-dev libipt-dev libcapstone-dev \
protobuf-compiler libprotobuf-dev libprotobuf-c-dev protobuf-c-compiler \
libclang-rt-14-dev valgrind strace qemu-user gcc-aarch64-linux-gnu libc6-dev-arm64-cross gcc-arm-linux-gnueabihf libc6-dev-armhf-cross gcc-mips-linux-gnu libc6-dev-mips-cross gcc-mipsel-linux-gnu libc6-dev-mipsel-cross gcc-riscv64-linux-gnu libc6-dev-riscv64-cross parallel groff-base libzstd-dev zstd lz4 libdw-dev binutils \
python3-dev python3-cffi python3-numpy python3-setuptools python3-pytest python3-pandas"

log() { printf '== %s\n' "$*" >&2; }
die() { printf 'build.sh: %s\n' "$*" >&2; exit 1; }

deps() {
    local missing=() p
    for p in $PACKAGES; do
        dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    log "installing missing packages: ${missing[*]}"
    local SUDO=""
    if [ "$(id -u)" != 0 ]; then
        command -v sudo >/dev/null || die "need root (or sudo) to install: ${missing[*]}"
        SUDO=sudo
    fi
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -q
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
}

have_ipt() { [ -f /usr/include/intel-pt.h ]; }
have_capstone() { [ -f /usr/include/capstone/capstone.h ]; }
have_zstd() { [ -f /usr/include/zstd.h ]; }
have_dw() { [ -f /usr/include/elfutils/libdw.h ] && [ -f /usr/include/libelf.h ]; }

# FRAMES_HAVE_<LIB> tell tools/ and tests/ that a library is installed (tools/impl.c then
# compiles the header that needs it); a header never reads them: its own options say what
# it uses (FRAMES_PARQUET_LIBZSTD, FRAMES_SYM_LIBDW).
opt_flags() {   # defines and libraries of the optional parts that are installed
    local d="" l=""
    if have_ipt; then d+=" -DFRAMES_HAVE_IPT"; l+=" -lipt"; fi
    if have_capstone; then d+=" -DFRAMES_HAVE_CAPSTONE"; l+=" -ldl"; fi   # frames record dlopens it
    if have_zstd; then                                                    # frames_zstd.h, Parquet pages
        d+=" -DFRAMES_HAVE_ZSTD -DFRAMES_PARQUET_LIBZSTD -DFRAMES_REPLAY_LIBZSTD"; l+=" -lzstd"
    fi
    if have_dw; then d+=" -DFRAMES_SYM_LIBDW"; l+=" -ldw -lelf"; fi      # file:line (frames_sym.h)
    echo "$d|$l"
}

# newer TARGET DEP...: true when TARGET is missing or older than any DEP
newer() {
    local t=$1; shift
    [ -e "$t" ] || return 0
    local d
    for d in "$@"; do [ "$d" -nt "$t" ] && return 0; done
    return 1
}

HEADERS() { ls "$ROOT"/frames*.h 2>/dev/null; }

# The Valgrind tool, linked as Valgrind's own tools are (static, no C library, text at
# valt_load_address) against the packaged core libraries. It runs from OUT/vg, which
# VALGRIND_LIB names, so that folder also links the packaged preload and suppressions.
VG_LIBDIR=/usr/lib/x86_64-linux-gnu/valgrind
VG_EXECDIR=/usr/libexec/valgrind
have_vg_tool_deps() {
    [ "$(uname -m)" = x86_64 ] && [ -f /usr/include/valgrind/pub_tool_basics.h ] &&
        [ -f $VG_LIBDIR/libcoregrind-amd64-linux.a ] && [ -f $VG_EXECDIR/vgpreload_core-amd64-linux.so ] &&
        pkg-config --exists valgrind 2>/dev/null
}
build_vg_tool() {   # build_vg_tool OUTDIR
    local out=$1/vg
    have_vg_tool_deps || { rm -rf "$out"; return 0; }
    mkdir -p "$out"
    if newer "$out/frames-amd64-linux" tools/record/vg/*.c tools/record/vg/*.h; then
        gcc -std=gnu99 -O2 -g -m64 -fno-stack-protector -fno-builtin -fno-strict-aliasing -fno-pie \
            -Wall -Wextra -Wno-unused-parameter -Werror -I/usr/include/valgrind -Itools/record/vg \
            -DVGA_amd64=1 -DVGO_linux=1 -DVGP_amd64_linux=1 -DVGPV_amd64_linux_vanilla=1 \
            -c tools/record/vg/frames_vg.c -o "$out/frames_vg.o" || die "valgrind tool: compile failed"
        gcc -m64 -static -nodefaultlibs -nostartfiles -u _start -no-pie -Wl,--build-id=none \
            -Wl,-Ttext-segment="$(pkg-config --variable=valt_load_address valgrind)" \
            -o "$out/frames-amd64-linux" "$out/frames_vg.o" $VG_LIBDIR/libcoregrind-amd64-linux.a \
            $VG_LIBDIR/libvex-amd64-linux.a $VG_LIBDIR/libgcc-sup-amd64-linux.a -lgcc ||
            die "valgrind tool: link failed"
    fi
    ln -sf $VG_EXECDIR/vgpreload_core-amd64-linux.so "$out/vgpreload_core-amd64-linux.so"
    ln -sf $VG_EXECDIR/default.supp "$out/default.supp"
}

# The QEMU TCG plugin of `frames record --engine qemu`: an ordinary shared object that a
# dynamic qemu-ARCH (Debian's qemu-user) loads; it includes frames.h, so it is built
# wherever the tools are (x86-64 Linux), into OUT/qemu next to OUT/frames.
build_qemu_plugin() {   # build_qemu_plugin OUTDIR CC "CFLAGS"
    local out=$1/qemu
    [ "$(uname -m)" = x86_64 ] || { rm -rf "$out"; return 0; }
    mkdir -p "$out"
    if newer "$out/frames_qemu.so" tools/record/qemu/*.c tools/record/qemu/*.h frames.h; then
        $2 $CSTD $3 $WARN -O2 -fPIC -shared -fvisibility=hidden -I"$ROOT" -Itools/record/qemu \
            tools/record/qemu/frames_qemu.c -o "$out/frames_qemu.so" -ldl -lpthread ||
            die "qemu plugin: build failed"
    fi
}

# build_variant OUTDIR CC "CFLAGS" "LDFLAGS"
build_variant() {
    local out=$1 cc=$2 cflags=$3 ldflags=$4
    local of; of=$(opt_flags)
    local odefs=${of%%|*} olibs=${of##*|}
    # objects made with other flags (an optional library installed since, another
    # compiler) are stale although newer than their sources
    local stamp="$cc|$cflags|$ldflags|$odefs|$olibs"
    if [ -d "$out/obj" ] && [ "$(cat "$out/flags" 2>/dev/null)" != "$stamp" ]; then
        log "build flags changed: rebuilding $out"
        rm -rf "$out/obj" "$out/tests" "$out/frames"
    fi
    mkdir -p "$out/obj" "$out/tests"
    printf '%s\n' "$stamp" > "$out/flags"
    local hdrs; hdrs=$(HEADERS)
    local objs=() src obj pids=()
    # tool objects (compiled in parallel, JOBS at a time)
    for src in tools/*.c tools/record/*.c; do
        [ -e "$src" ] || continue
        obj=${src#tools/}
        obj="$out/obj/${obj//\//_}"
        obj=${obj%.c}.o
        objs+=("$obj")
        if newer "$obj" "$src" $hdrs tools/*.h tools/*.def tools/record/*.h tools/record/vg/*.h; then
            $cc $CSTD $cflags $WARN $odefs -I"$ROOT" -Itools -c "$src" -o "$obj" &
            pids+=($!)
            if [ ${#pids[@]} -ge "$JOBS" ]; then wait "${pids[0]}" || die "compile failed"; pids=("${pids[@]:1}"); fi
        fi
    done
    for p in "${pids[@]}"; do wait "$p" || die "compile failed"; done
    build_vg_tool "$out"
    build_qemu_plugin "$out" gcc "-g"
    if newer "$out/frames" "${objs[@]}"; then
        # --as-needed: libraries frames does not use (libm, libpthread on glibc >= 2.34) are
        # not loaded by every process (each costs a query process tens of microseconds)
        $cc $cflags "${objs[@]}" -o "$out/frames" $ldflags -Wl,--as-needed $olibs -lpthread -lm
    fi
    # test suites: each links the implementation object and cmocka
    local impl="$out/obj/impl.o" t bin
    pids=()
    for t in tests/test_*.c; do
        [ -e "$t" ] || continue
        bin="$out/tests/$(basename "${t%.c}")"
        if newer "$bin" "$t" $hdrs "$impl" tests/*.h; then
            $cc $CSTD $cflags $WARN $odefs -I"$ROOT" -Itests -Itools "$t" "$impl" -o "$bin" \
                $ldflags $olibs -lcmocka -lpthread -lm &
            pids+=($!)
            if [ ${#pids[@]} -ge "$JOBS" ]; then wait "${pids[0]}" || die "test build failed"; pids=("${pids[@]:1}"); fi
        fi
    done
    for p in "${pids[@]}"; do wait "$p" || die "test build failed"; done
}

build() {
    build_variant build gcc "-O2 -g" ""
}

build_asan() {
    build_variant build/asan clang "-O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all" \
        "-fsanitize=address,undefined"
}

# The documented options of a header (one per line; ALLOC = the three allocator macros).
# frames.h's options hold for every header, except FRAMES_NO_STDIO for a header that
# says it needs stdio (an #error under it).
header_options() {
    local h=$1
    printf '%s\n' FRAMES_STATIC FRAMES_NO_POSIX FRAMES_NO_TEXT ALLOC
    grep -q '^#error.*stdio' "$h" || echo FRAMES_NO_STDIO
    grep -oE '^   (FRAMES_[A-Z]+_NO_[A-Z_]+|FRAMES_[A-Z]+_STATIC)\b' "$h" | sed 's/^ *//' | sort -u
    # an option that uses a library (FRAMES_X_LIBY): when the library is installed
    local lib
    for lib in $(grep -oE '^   FRAMES_[A-Z]+_LIB[A-Z]+\b' "$h" | sed 's/^ *//' | sort -u); do
        case $lib in
            *_LIBDW) have_dw && echo "$lib" ;;
            *_LIBZSTD) have_zstd && echo "$lib" ;;
            *) die "$h: option $lib uses a library build.sh does not know" ;;
        esac
    done
    return 0
}

option_flag() {   # option_flag NAME -> compiler flags
    case $1 in
        ALLOC) printf '%s\n' '-DFRAMES_MALLOC(s,c)=((void)(c),malloc(s))' \
               '-DFRAMES_REALLOC(p,s,c)=((void)(c),realloc(p,s))' '-DFRAMES_FREE(p,c)=((void)(c),free(p))' ;;
        *) printf -- '-D%s\n' "$1" ;;
    esac
}

# Every header, its implementation alone and after frames.h's (compiled by gcc, gcc and
# clang as C99 and C++ check the rest), with every documented option alone (gcc, clang,
# g++, clang++) and every combination of them (clang: its syntax pass reports unused
# static functions, gcc's does not); all headers in one file; the no-stdio build needs
# no more of the C library than frames.h says; FRAMES_<PART>_STATIC exports nothing.
header_checks() {
    local h cc tmp name macro src opt combo i n flags=() opts=()
    tmp=$(mktemp -d)
    compile() {   # compile SRC CC LANGFLAGS EXTRA...: an object in $tmp/x.o
        local src=$1 cc=$2 lang=$3; shift 3
        $cc $lang $WARN -I"$ROOT" "$@" -c "$src" -o "$tmp/x.o" || die "$cc $lang $*: $src"
    }
    check() {     # check SRC FLAGS...: gcc, clang, g++, clang++ (syntax and warnings)
        local src=$1 cc; shift
        for cc in gcc clang; do $cc $CSTD $WARN -I"$ROOT" "$@" -fsyntax-only "$src" || die "$cc $*: $src"; done
        for cc in g++ clang++; do
            $cc -x c++ -std=c++11 $WARN -I"$ROOT" "$@" -fsyntax-only "$src" || die "$cc (C++) $*: $src"
        done
    }
    for h in $(HEADERS); do
        name=$(basename "$h" .h)
        macro=$(echo "$name" | tr a-z A-Z)_IMPLEMENTATION
        if [ "$name" = frames_pt ] && ! have_ipt; then continue; fi
        if [ "$name" = frames_zstd ] && ! have_zstd; then continue; fi
        printf '#define %s\n#include "%s"\n' "$macro" "$name.h" > "$tmp/$name.c"
        printf '#define FRAMES_IMPLEMENTATION\n#include "frames.h"\n#define %s\n#include "%s"\n' \
            "$macro" "$name.h" > "$tmp/$name.with.c"
        for src in "$tmp/$name.c" "$tmp/$name.with.c"; do
            compile "$src" gcc "$CSTD"
            check "$src"
        done
        mapfile -t opts < <(header_options "$h")
        # progress on stderr: the checks of one header take up to a minute
        log "headers: $name.h with ${#opts[@]} options and their $(( (1 << ${#opts[@]}) - ${#opts[@]} - 1 )) combinations"
        for opt in "${opts[@]}"; do   # FRAMES_STATIC needs frames.h's implementation here
            mapfile -t flags < <(option_flag "$opt")
            check "$tmp/$name.with.c" "${flags[@]}"
        done
        n=${#opts[@]}
        for ((combo = 3; combo < (1 << n); combo++)); do
            [ $((combo & (combo - 1))) -eq 0 ] && continue   # one option: done above
            flags=()
            for ((i = 0; i < n; i++)); do
                [ $((combo >> i & 1)) -eq 1 ] && mapfile -t -O ${#flags[@]} flags < <(option_flag "${opts[i]}")
            done
            clang $CSTD $WARN -I"$ROOT" "${flags[@]}" -fsyntax-only "$tmp/$name.with.c" \
                || die "clang ${flags[*]}: $h"
        done
    done
    log "headers: all implementations in one file; FRAMES_NO_STDIO; FRAMES_VPROF_STATIC"
    # every implementation in one file, in two orders
    local all="" rev="" hn
    for h in $(HEADERS); do
        hn=$(basename "$h" .h)
        [ "$hn" = frames_pt ] && ! have_ipt && continue
        [ "$hn" = frames_zstd ] && ! have_zstd && continue
        all+="#define $(echo "$hn" | tr a-z A-Z)_IMPLEMENTATION"$'\n'"#include \"$hn.h\""$'\n'
        rev="#define $(echo "$hn" | tr a-z A-Z)_IMPLEMENTATION"$'\n'"#include \"$hn.h\""$'\n'"$rev"
    done
    printf '%s' "$all" > "$tmp/all.c"; printf '%s' "$rev" > "$tmp/rev.c"
    for src in "$tmp/all.c" "$tmp/rev.c"; do check "$src"; done
    # FRAMES_NO_STDIO: the C library functions frames.h says remain, and no others
    compile "$tmp/frames.c" gcc "$CSTD" -DFRAMES_NO_STDIO -O1
    local extra; extra=$(nm -u "$tmp/x.o" | awk '{print $2}' |
        grep -vxE 'memcpy|memmove|memset|strlen|strcmp|malloc|realloc|free' || true)
    [ -z "$extra" ] || die "frames.h under FRAMES_NO_STDIO needs: $extra"
    # FRAMES_<PART>_STATIC after a shared frames.h: the file exports frames.h's symbols only
    printf '#include "frames.h"\n' > "$tmp/fo.c"
    compile "$tmp/fo.c" gcc "$CSTD"
    nm -g --defined-only "$tmp/x.o" | awk '{print $3}' | sort > "$tmp/frames.syms"
    for h in $(HEADERS); do
        name=$(basename "$h" .h); macro=$(echo "$name" | tr a-z A-Z)
        [ "$name" = frames ] && continue
        [ "$name" = frames_pt ] && ! have_ipt && continue
        [ "$name" = frames_zstd ] && ! have_zstd && continue
        printf '#include "frames.h"\n#define %s_STATIC\n#define %s_IMPLEMENTATION\n#include "%s.h"\n' \
            "$macro" "$macro" "$name" > "$tmp/st.c"
        compile "$tmp/st.c" gcc "$CSTD"
        extra=$(nm -g --defined-only "$tmp/x.o" | awk '{print $3}' | sort | comm -23 - "$tmp/frames.syms")
        [ -z "$extra" ] || die "${macro}_STATIC exports: $extra"
    done
    rm -rf "$tmp"
    log "headers compile with every documented option, alone and combined, as C99 and C++"
    tools_without_optional
}

# The command and the test suites compile (clang's syntax pass: it reports unused static
# functions) without each optional library that is installed here, and without all of
# them: frames.h needs only the C library, the others light up their parts.
tools_without_optional() {
    local of defs d drop sets=("") f pids=() tmp k=0
    of=$(opt_flags); defs=${of%%|*}
    for drop in $defs; do
        d=""
        for f in $defs; do [ "$f" != "$drop" ] && d+=" $f"; done
        sets+=("$d")
    done
    tmp=$(mktemp -d)
    for d in "${sets[@]}"; do
        for f in tools/*.c tests/test_*.c; do
            k=$((k + 1))
            # shellcheck disable=SC2086
            { clang $CSTD $WARN $d -I"$ROOT" -Itools -Itests -fsyntax-only "$f" 2>"$tmp/$k.err" ||
                  printf 'with only [%s]: %s\n' "$d" "$f" >>"$tmp/$k.err"; } &
            pids+=($!)
            if [ ${#pids[@]} -ge "$JOBS" ]; then wait "${pids[0]}"; pids=("${pids[@]:1}"); fi
        done
    done
    wait
    # grep reads the files itself: `cat | grep -q` under pipefail fails when grep stops
    # at the first error before cat has written everything (SIGPIPE), hiding the errors
    if grep -qs . "$tmp"/*.err; then
        cat "$tmp"/*.err >&2
        rm -rf "$tmp"
        die "the command or a test suite does not compile without an optional library (above)"
    fi
    rm -rf "$tmp"
    log "the command and the test suites compile without each optional library"
}

run_tests() {   # run_tests DIR LABEL
    local dir=$1 label=$2 t failed=0 cwd
    # from an empty directory of their own: no suite may depend on the current directory
    # or leave files in it
    cwd=$(mktemp -d)
    for t in "$dir"/tests/test_*; do
        [ -x "$t" ] || continue
        log "$label $(basename "$t")"
        if ! (cd "$cwd" && FRAMES_ROOT="$ROOT" FRAMES_BIN="$ROOT/$dir/frames" "$ROOT/$t"); then
            failed=1
            printf 'FAILED: %s (%s)\n' "$(basename "$t")" "$label" >&2
        fi
        if [ -n "$(ls -A "$cwd")" ]; then
            failed=1
            printf 'FAILED: %s (%s) left files in the current directory: %s\n' "$(basename "$t")" \
                "$label" "$(ls -A "$cwd" | head -5 | tr '\n' ' ')" >&2
            rm -rf "${cwd:?}"/* "${cwd:?}"/.[!.]* 2>/dev/null || true
        fi
    done
    rmdir "$cwd"
    return $failed
}

# The Python package (python/: cffi in API mode over the headers, docs/python.md) for
# Debian's interpreter, into build/python; the optional parts as opt_flags finds them.
PYTHON=/usr/bin/python3
build_python() {
    local out=build/python d l
    if newer "$out/.built" python/frames/*.py python/frames/*.c python/frames_build.py $(HEADERS); then
        log "python package -> $out"
        IFS='|' read -r d l <<<"$(opt_flags)"
        rm -rf "$out"
        FRAMES_ROOT="$ROOT" FRAMES_OPT_DEFINES="$d" FRAMES_OPT_LIBS="$l" \
            "$PYTHON" python/frames_build.py "$out" >/dev/null || die "python: build failed"
        rm -rf "$out/tmp"
        touch "$out/.built"
    fi
}

# pytest over python/tests from an empty directory (nothing may be left in it), no cache,
# no bytecode files; bounded in time like every suite
run_python_tests() {
    local cwd rc=0
    cwd=$(mktemp -d)
    log "python tests (pytest)"
    (cd "$cwd" && PYTHONPATH="$ROOT/build/python" PYTHONDONTWRITEBYTECODE=1 FRAMES_ROOT="$ROOT" \
        FRAMES_BIN="$ROOT/build/frames" timeout 300 "$PYTHON" -m pytest -p no:cacheprovider -q \
        "$ROOT/python/tests") || { rc=1; printf 'FAILED: python tests\n' >&2; }
    if [ -n "$(ls -A "$cwd")" ]; then
        rc=1
        printf 'FAILED: python tests left files in the current directory: %s\n' \
            "$(ls -A "$cwd" | head -5 | tr '\n' ' ')" >&2
    fi
    rm -rf "$cwd"
    return $rc
}

# DuckDB for the Parquet tests (tests/test_parquet.c), from the npm registry into build/
DUCKDB_NODE_API="@duckdb/node-api@1.5.6-r.1"
duckdb_deps() {
    [ -f build/duckdb/node_modules/@duckdb/node-api/package.json ] && return 0
    if ! command -v npm >/dev/null; then
        local SUDO=""; [ "$(id -u)" != 0 ] && SUDO=sudo
        $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -q
        $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends nodejs npm
    fi
    log "installing DuckDB ($DUCKDB_NODE_API) into build/duckdb"
    mkdir -p build/duckdb
    npm install --prefix build/duckdb --no-audit --no-fund --loglevel=error "$DUCKDB_NODE_API" \
        || die "npm install $DUCKDB_NODE_API failed"
}

cmd_test() {
    deps
    duckdb_deps
    [ -d "$SHARED/vectors" ] || die "reference material not found at $SHARED (set FRAMES_SHARED)"
    header_checks
    build
    build_asan
    local rc=0
    run_tests build "test" || rc=1
    build_python
    run_python_tests || rc=1
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
        run_tests build/asan "asan+ubsan" || rc=1
    tests/fuzz/run.sh short || rc=1
    [ $rc -eq 0 ] && log "all tests passed" || die "some tests failed"
}

cmd_demo() {
    build
    exec tools/demo.sh "$ROOT/build/frames" "$SHARED"
}

cmd_bench() {
    deps
    build
    mkdir -p build/bench
    bench/run.sh "$ROOT/build"
}

cmd_fuzz() {
    deps
    tests/fuzz/run.sh long "${1:-60}"
}

# memcheck: any error or definite/indirect leak fails the run
VALGRIND="valgrind -q --error-exitcode=99 --leak-check=full --show-leak-kinds=definite,indirect \
--errors-for-leak-kinds=definite,indirect"

cmd_valgrind() {
    deps
    [ -d "$SHARED/vectors" ] || die "reference material not found at $SHARED (set FRAMES_SHARED)"
    build
    local dir=build/valgrind t rc=0
    mkdir -p "$dir"
    # the suites run $FRAMES_BIN: a wrapper named frames puts it under memcheck as well,
    # except `frames record`, a ptrace tracer (single-stepping a child that valgrind runs
    # does not finish, and valgrind mishandles the xstate register set)
    printf '#!/bin/sh\n[ "$1" = record ] && exec "%s" "$@"\nexec %s "%s" "$@"\n' \
        "$ROOT/build/frames" "$VALGRIND" "$ROOT/build/frames" >"$dir/frames"
    chmod +x "$dir/frames"
    for t in build/tests/test_*; do
        [ -x "$t" ] || continue
        log "valgrind $(basename "$t")"
        if ! FRAMES_BIN="$ROOT/$dir/frames" FRAMES_VALGRIND=1 $VALGRIND "$t"; then
            rc=1
            printf 'FAILED: %s (valgrind)\n' "$(basename "$t")" >&2
        fi
    done
    [ $rc -eq 0 ] && log "valgrind: every suite clean" || die "valgrind: errors (see above)"
}

cmd_install() {
    local prefix=${1:-/usr/local}
    build
    tools/install.sh "$prefix"
}

case "${1:-build}" in
    build) build ;;
    test) cmd_test ;;
    demo) cmd_demo ;;
    bench) cmd_bench ;;
    fuzz) shift; cmd_fuzz "$@" ;;
    valgrind) cmd_valgrind ;;
    install) shift; cmd_install "$@" ;;
    deps) deps ;;
    asan) build_asan ;;
    python) deps; build_python ;;
    headers) header_checks ;;
    clean) rm -rf build ;;
    -h|--help|help) sed -n '2,/^set -euo/p' "$0" | sed -n 's/^# \{0,1\}//p' ;;
    *) die "unknown command '$1' (try --help)" ;;
esac
