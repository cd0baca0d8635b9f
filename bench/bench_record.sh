#!/usr/bin/env bash
# bench_record.sh BUILD - speed of `frames record` in instructions per second, against the
# peer measured in the same run: a bare PTRACE_SINGLESTEP loop (the ceiling of any
# ptrace single-stepper here), pinned to one CPU and not. Also callgrind's rate on the
# same program for scale (a different class of tool: a JIT, not single-stepping).
. "$(dirname "$0")/common.sh"
mkdir -p "$BUILD/bench"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$FRAMES" record --help >/dev/null 2>&1 && "$FRAMES" record --probe >/dev/null 2>&1 ||
    { echo "frames record not built (capstone missing): skipped"; exit 0; }
cc -O2 -o "$BUILD/bench/bench_record_step" bench/bench_record_step.c

# 40,000 iterations of a load, an add, a store, a decrement and a branch: 200,004 instructions
cat >"$tmp/loop.S" <<'ASM'
        .globl _start
        .bss
cell:   .quad 0
        .text
_start: mov $40000, %ecx
1:      mov cell(%rip), %rax
        add $3, %rax
        mov %rax, cell(%rip)
        dec %ecx
        jnz 1b
        mov $60, %eax
        xor %edi, %edi
        syscall
ASM
cc -nostdlib -static -o "$tmp/loop" "$tmp/loop.S"

rate() { awk -v n="$1" -v s="$2" 'BEGIN { printf "%.0f", (s > 0 ? n / s : 0) }'; }
peer() {   # peer [--pin] PROGRAM...: prints steps/s
    local r; r=$("$BUILD/bench/bench_record_step" "$@"); rate ${r% *} ${r#* }
}
ours() {   # ours OPTIONS... -- PROGRAM...: prints instructions/s from the summary line
    "$FRAMES" record -f -o "$tmp/t.frames" "$@" 2>&1 >/dev/null |
        sed -n 's/.*(\([0-9]*\) instructions\/s).*/\1/p'
}

for prog in "$tmp/loop" /bin/true; do
    name=${prog##*/}
    p_pin=$(peer --pin "$prog"); p_free=$(peer "$prog")
    r_def=$(ours -- "$prog"); r_nomem=$(ours --no-mem -- "$prog"); r_nopin=$(ours --no-pin -- "$prog")
    printf '%-6s bare single-step loop: %7s steps/s pinned, %7s unpinned\n' "$name" "$p_pin" "$p_free"
    printf '%-6s frames record       : %7s instr/s (pinned, values + memory)  = %s of the bare pinned loop\n' \
        "$name" "$r_def" "$(awk -v a="$r_def" -v b="$p_pin" 'BEGIN{printf "%.2f", a/b}')"
    printf '%-6s frames record       : %7s instr/s --no-mem                   = %s\n' \
        "$name" "$r_nomem" "$(awk -v a="$r_nomem" -v b="$p_pin" 'BEGIN{printf "%.2f", a/b}')"
    printf '%-6s frames record       : %7s instr/s --no-pin                   = %s of the bare unpinned loop\n' \
        "$name" "$r_nopin" "$(awk -v a="$r_nopin" -v b="$p_free" 'BEGIN{printf "%.2f", a/b}')"
done
t0=$(date +%s.%N)
valgrind --tool=callgrind --callgrind-out-file=/dev/null "$tmp/loop" >/dev/null 2>&1 || true
t1=$(date +%s.%N)
printf 'loop   callgrind (for scale)  : %7s instr/s, startup included\n' \
    "$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.0f", 200004/(b-a)}')"
