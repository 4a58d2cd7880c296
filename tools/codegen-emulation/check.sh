#!/usr/bin/env bash
# Do the generated matrix-vector kernels compute y = x.B and y = A.x?
#
#   tools/codegen-emulation/check.sh [BUILD_DIR]
#
# Dumps the golden matrix's sources (BUILD_DIR's test_codegen_golden,
# TB_GOLDEN_DUMP; default build/), then compiles each matrix-vector source of
# the rule (simt, cc90: tensor-3xtf32's differ in the header comment only) as
# C++ with the CUDA built-ins emulated (emulated_cuda.h) and runs it against
# an fp64 product, both views. No GPU; a minute or two on 2 cores; not CI.
# Needs g++ with C++20 (std::barrier).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${1:-$root/build}
work=$(mktemp -d "${TMPDIR:-/tmp}/tb-codegen-emulation.XXXXXX")
trap 'rm -rf "$work"' EXIT
TB_GOLDEN_DUMP=$work "$build/tests/test_codegen_golden" "$root/tests/golden/codegen_sources.sha256" \
  >/dev/null 2>&1
failed=0
for source in "$work"/gemm+*+simt+rule+cc90.cu; do
  grep -q '^#define GEMV_ROWS' "$source" || continue
  offset=0
  [[ $source == *+strided+* ]] && offset=1
  g++ -std=c++20 -O1 -w -pthread -I"$here" -DSRC="\"$source\"" "$here/run_gemv.cpp" -o "$work/run"
  printf '%s: ' "$(basename "$source" .cu)"
  "$work/run" "$offset" || failed=1
done
exit $failed
