#!/usr/bin/env bash
# The Python package (bench/bench_python.py): t.instructions() against the C reader
# (frames dump --pc, frames stat) on the same 1,000,000-frame trace in the same run, the
# operand table, iteration over frame objects against parsing the Tenet text of the trace.
. "$(dirname "$0")/common.sh"
[ -f build/python/.built ] || ./build.sh python >&2
PYTHONPATH="$PWD/build/python" PYTHONDONTWRITEBYTECODE=1 /usr/bin/python3 bench/bench_python.py \
    "$BUILD/frames" "${BENCH_PYTHON_FRAMES:-1000000}"
