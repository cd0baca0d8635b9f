# bench/common.sh - the opening every benchmark script shares; each sources it first:
#     . "$(dirname "$0")/common.sh"
# Strict mode; BUILD, the build directory the first argument names (made absolute, so that
# it still names it after the cd); FRAMES, the frames command built there; the root of the
# tree as the current directory. A script that takes more arguments names them in
# BENCH_USAGE before sourcing (for its usage message).
set -euo pipefail
BUILD=$(cd "${1:?usage: bench/$(basename "$0") BUILD_DIR${BENCH_USAGE:+ $BENCH_USAGE}}" && pwd)
FRAMES=$BUILD/frames
cd "$(dirname "$0")/.."
