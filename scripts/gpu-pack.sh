#!/usr/bin/env bash
# Builds here and stages what the GPU machine needs under .device/ (ignored
# by git, carried by the device tool): the binaries and libtilebench_timing
# (bin/, found through $ORIGIN), and shared libraries its Ubuntu image may
# lack (lib/). Then: scripts/gpu.sh there.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
tb_install_packages
tb_build "$TB_ROOT/build"
rm -rf "$TB_ROOT/.device"
mkdir -p "$TB_ROOT/.device/bin" "$TB_ROOT/.device/lib"
cp "$TB_ROOT"/build/src/tilebench "$TB_ROOT"/build/src/libtilebench_timing.so* \
   "$TB_ROOT"/build/tests/timing_gpu "$TB_ROOT"/build/tests/cupti_lifecycle_memory \
   "$TB_ROOT/.device/bin/"
cp -L /usr/lib/x86_64-linux-gnu/libjansson.so.4 "$TB_ROOT/.device/lib/"
# The source commit these binaries were built from, for the evidence notes.
git -C "$TB_ROOT" rev-parse HEAD > "$TB_ROOT/.device/commit"
git -C "$TB_ROOT" status --porcelain > "$TB_ROOT/.device/dirty"
du -sh "$TB_ROOT/.device"
