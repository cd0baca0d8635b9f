#!/usr/bin/env bash
# bench_gdb.sh BUILD_DIR - gdb on `frames gdbserver`: reverse-continue to a watchpoint far
# back in a recorded trace.
#
# A program writes a variable once, then runs a loop of about INSNS instructions; it is
# recorded with `frames record` (default engine). Figures, each a wall time:
#   record     frames record of the program
#   index      `frames gdbserver TRACE </dev/null`: builds the state index and ends
#   connect    gdb started, `target remote | frames gdbserver`, `monitor when`, detach
#   rc-watch   from the end, `watch` on the variable and reverse-continue to its write
#              (the distance in instructions is printed)
#   c-watch    from the start, continue to the write of the variable (a short way)
#   rc-break   from the end, reverse-continue to a breakpoint on main's first instruction
# rc-watch and rc-break are timed inside gdb (Python's time around the one command), so
# they exclude gdb's start and the connection.
# Target (issue 22): reverse-continue to a watchpoint 10^8 instructions back in <= 1 s.
# Environment: FRAMES_BENCH_GDB_INSNS (default 10000000; the trace takes about 125 bytes
# per instruction), FRAMES_BENCH_GDB_DIR (where to put the program and the trace; default
# BUILD_DIR/bench/gdb), FRAMES_BENCH_GDB_REUSE=1 (keep the trace of an earlier run).
. "$(dirname "$0")/common.sh"
INSNS=${FRAMES_BENCH_GDB_INSNS:-10000000}
DIR=${FRAMES_BENCH_GDB_DIR:-$BUILD/bench/gdb}
command -v gdb >/dev/null || { echo "bench_gdb: gdb is not installed: skipped"; exit 0; }
mkdir -p "$DIR"
cd "$DIR"

cat > prog.c <<'EOF'
#include <stdlib.h>
volatile unsigned long target, sink;
int main(int argc, char **argv) {
    unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 0, i;
    target = 42;   /* the write reverse-continue goes back to */
    for (i = 0; i < n; i++) sink += i;   /* 6 instructions per iteration at -O1 */
    return 0;
}
EOF
cc -O1 -g -no-pie -fno-pie -o prog prog.c

now() { date +%s.%N; }
since() { printf "%.3f" "$(echo "$(now) - $1" | bc)"; }

if [ "${FRAMES_BENCH_GDB_REUSE:-0}" = 1 ] && [ -s t.frames ]; then
    echo "record     (the trace of an earlier run)"
else
    t=$(now)
    "$FRAMES" record -f -o t.frames -- ./prog $((INSNS / 6)) 2>record.log
    echo "record     $(since "$t") s   ($(tail -2 record.log | head -1 | sed 's/^frames record: //'))"
fi
rm -f t.frames.fridx
ls -l t.frames | awk '{printf "trace      %.1f MB\n", $5 / 1e6}'

# The index is built before gdb connects: gdb gives up on a reply after 2 s
# (remotetimeout), and building takes about 1 s per GB of trace.
t=$(now)
"$FRAMES" gdbserver t.frames </dev/null
echo "index      $(since "$t") s   ($(ls -l t.frames.fridx | awk '{printf "%.1f MB", $5 / 1e6}'))"
GDB="gdb -nx -batch -ex 'set pagination off' -ex 'set trust-readonly-sections on'"
t=$(now)
eval "$GDB -ex 'target remote | $FRAMES gdbserver t.frames' -ex 'monitor when' ./prog" >connect.log 2>&1
echo "connect    $(since "$t") s   ($(grep -o 'Current instruction.*' connect.log))"

cat > timed.py <<EOF
import gdb, time
gdb.execute('target remote | $FRAMES gdbserver t.frames', to_string=True)
def when():
    return int(gdb.execute('monitor when', to_string=True).split()[2])
def goto(i):
    gdb.execute('monitor goto %s' % i, to_string=True)
    gdb.execute('maint flush register-cache')
def timed(name, cmd, start):
    t = time.time(); gdb.execute(cmd, to_string=True); dt = time.time() - t
    print('%-10s %.3f s   (instruction %d -> %d: %d instructions)' % (name, dt, start, when(), abs(start - when())))
goto('end'); end = when()
gdb.execute('watch *(unsigned long *)&target', to_string=True)
timed('rc-watch', 'reverse-continue', end)
goto(0)
timed('c-watch', 'continue', 0)
gdb.execute('delete')
goto('end')
gdb.execute('break *main', to_string=True)
timed('rc-break', 'reverse-continue', end)
gdb.execute('detach', to_string=True)
EOF
eval "$GDB -x timed.py ./prog" 2>&1 | grep -E '^(rc-|c-)'
echo "target     rc-watch <= 1 s at 10^8 instructions back"
