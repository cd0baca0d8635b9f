#!/usr/bin/env bash
# install.sh PREFIX - install frames: the headers, the `frames` command (with the Valgrind
# tool and the QEMU plugin of `frames record` when they were built), its man page and the
# pkg-config files frames.pc (and frames_pt.pc, whose flags name libipt, when frames_pt.h is
# part of the tree; frames_zstd.pc naming libzstd; frames_parquet.pc naming libzstd when it is
# installed: compile with -DFRAMES_PARQUET_LIBZSTD for zstd pages). Called by `./build.sh install
# [PREFIX]` after the build.
#   FRAMES_BIN   the built command (default: build/frames)
#   DESTDIR      staging root for packagers (the .pc files still name PREFIX)
set -euo pipefail
cd "$(dirname "$0")/.."
prefix=${1:?usage: tools/install.sh PREFIX}
case $prefix in /*) ;; *) prefix=$PWD/$prefix ;; esac
bin=${FRAMES_BIN:-build/frames}
root=${DESTDIR:-}$prefix
[ -x "$bin" ] || { echo "install.sh: $bin not built (run ./build.sh first)" >&2; exit 1; }
version=$(sed -n 's/^#define FRAMES_LIB_VERSION "\(.*\)"/\1/p' frames.h)

install -d "$root/bin" "$root/include" "$root/share/man/man1" "$root/lib/pkgconfig"
install -m 755 "$bin" "$root/bin/frames"
install -m 644 frames*.h "$root/include/"
install -m 644 docs/frames.1 "$root/share/man/man1/frames.1"
# the Valgrind tool of `frames record`, where the command looks for it (../lib/frames/vg)
vgdir=$(dirname "$bin")/vg
if [ -x "$vgdir/frames-amd64-linux" ]; then
    install -d "$root/lib/frames/vg"
    install -m 755 "$vgdir/frames-amd64-linux" "$root/lib/frames/vg/"
    for f in vgpreload_core-amd64-linux.so default.supp; do
        ln -sf "$(readlink "$vgdir/$f")" "$root/lib/frames/vg/$f"
    done
fi
# the QEMU plugin of `frames record --engine qemu`, where the command looks for it
# (../lib/frames/qemu)
plugin=$(dirname "$bin")/qemu/frames_qemu.so
if [ -f "$plugin" ]; then
    install -d "$root/lib/frames/qemu"
    install -m 755 "$plugin" "$root/lib/frames/qemu/"
fi

pc() {   # pc NAME DESCRIPTION REQUIRES LIBS
    cat > "$root/lib/pkgconfig/$1.pc" <<PC
prefix=$prefix
includedir=\${prefix}/include

Name: $1
Description: $2
Version: $version
Requires: $3
Cflags: -I\${includedir}
Libs: $4
PC
    chmod 644 "$root/lib/pkgconfig/$1.pc"
}
pc frames "BAP frames execution traces: single-header reader/writer (frames.h) and analysis headers" "" ""
if [ -f frames_pt.h ]; then
    pc frames_pt "Intel Processor Trace to frames (frames_pt.h), on libipt" "frames" "-lipt"
fi
if [ -f frames_parquet.h ] && [ -f /usr/include/zstd.h ]; then   # zstd pages when built with it
    pc frames_parquet "Parquet tables of frames traces (frames_parquet.h), zstd pages" "frames" \
        "-lzstd"
fi
if [ -f frames_zstd.h ]; then
    pc frames_zstd "Compressed seekable frames traces (frames_zstd.h), on libzstd" "frames" "-lzstd -lpthread"
fi
echo "installed frames $version into ${DESTDIR:-}$prefix" >&2
