#!/usr/bin/env bash
# What a new user does with a release: build it (Release with gcc, Debug with
# clang, both warning-free), install it into a fresh prefix, move the build
# tree away, and use what was installed: a C program through pkg-config, a
# CMake project through find_package(tilebench), the Python package, and the
# installed tilebench running native and torch cases and auditing them, and a
# user kernel built against the installed include/tilebench/kernel.h.
#   scripts/check-install.sh [WORK_DIR]
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
work=${1:-$(mktemp -d /tmp/tilebench-install-XXXXXX)}
mkdir -p "$work"
prefix=$work/prefix
rm -rf "$prefix" "$work/build-moved-away" "$work/consumer" "$work/run" "$work/user-kernel" \
  "$work/user-run" # a rerun starts clean

echo "== Debug build with clang (warnings are errors)"
if command -v clang >/dev/null; then
  CC=clang tb_build "$work/build-clang-debug" -DCMAKE_BUILD_TYPE=Debug -DTB_WERROR=ON -DBUILD_TESTING=OFF
else
  echo "clang not installed: the clang build is not checked" >&2
  exit 1
fi

echo "== Release build with gcc (warnings are errors), installed into $prefix"
CC=gcc tb_build "$work/build-release" -DCMAKE_BUILD_TYPE=Release -DTB_WERROR=ON -DBUILD_TESTING=OFF \
  -DCMAKE_INSTALL_PREFIX="$prefix"
cmake --install "$work/build-release" >"$work/install.log"
mv "$work/build-release" "$work/build-moved-away" # nothing may depend on the build tree
tilebench=$prefix/bin/tilebench
"$tilebench" --version

if [ -f "$prefix/include/tilebench/timing.h" ]; then
  echo "== a C program through pkg-config"
  cat >"$work/abi.c" <<'C'
#include <stdio.h>
#include <tilebench/timing.h>
int main(void) {
  printf("ABI %d, result %u bytes\n", tb_timing_abi_version(), tb_timing_result_struct_size());
  return tb_timing_abi_version() == TB_TIMING_ABI_VERSION ? 0 : 1;
}
C
  export PKG_CONFIG_PATH=$(dirname "$(find "$prefix" -name tilebench-timing.pc)")
  # shellcheck disable=SC2046 # pkg-config prints several words on purpose
  cc "$work/abi.c" -o "$work/abi" $(pkg-config --cflags --libs tilebench-timing) \
    -Wl,-rpath,"$(pkg-config --variable=libdir tilebench-timing)"
  "$work/abi"

  echo "== a CMake project through find_package(tilebench)"
  mkdir -p "$work/consumer"
  cp "$work/abi.c" "$work/consumer/"
  cat >"$work/consumer/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.20)
project(consumer C)
find_package(tilebench 0.1 REQUIRED)
add_executable(abi abi.c)
target_link_libraries(abi PRIVATE tilebench::timing)
CMAKE
  cmake -S "$work/consumer" -B "$work/consumer/build" -DCMAKE_PREFIX_PATH="$prefix" \
    -DCMAKE_BUILD_RPATH="$(pkg-config --variable=libdir tilebench-timing)" >"$work/consumer.log"
  cmake --build "$work/consumer/build" >>"$work/consumer.log"
  "$work/consumer/build/abi"

  echo "== the installed Python package"
  PYTHONPATH=$prefix/share/tilebench/python python3 -c \
    'import tilebench; print("python: ABI", tilebench.abi_version(), "from", tilebench.library().path)'
else
  echo "no timing library in this build (no CUDA headers): C and Python consumers not checked"
fi

echo "== the installed tilebench: native and torch cases, then its audit"
TILEBENCH_PYTHON=${TILEBENCH_PYTHON:-/usr/bin/python3} "$tilebench" run --ops softmax,gemm \
  --shapes 37x769,16x16x16 --providers native,torch --samples 3 --warmup-ms 1 --sample-ms 1 \
  --quiet --out "$work/run"
python3 - "$work/run/results.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
torch = [c for c in doc["cases"] if c["provider"] == "torch"]
assert torch and all(c["valid"] for c in torch), "torch cases missing or invalid"
assert doc["provenance"]["git"]["commit"] is None, "an installed binary read a source tree's git"
print(f"{len(torch)} torch case(s) valid from the installed binary")
PY
"$tilebench" audit "$work/run"

echo "== a user kernel built against the installed header, measured by the installed tilebench"
cp -r "$TB_ROOT/examples/user-kernel" "$work/user-kernel"
make -s -C "$work/user-kernel" TILEBENCH_INCLUDE="$prefix/include"
"$tilebench" run --backend cpu --ops softmax,rmsnorm --shapes 37x769 --providers native,user \
  --kernel "$work/user-kernel/libmykernel.so" --samples 3 --warmup-ms 1 --sample-ms 1 --quiet \
  --out "$work/user-run"
"$tilebench" audit "$work/user-run"
echo "install check passed ($work)"
