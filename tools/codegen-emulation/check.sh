#!/usr/bin/env bash
# Do the generated matrix-vector kernels compute y = x.B and y = A.x, and do
# the persistent-row kernels compute softmax, rmsnorm and layernorm?
#
#   tools/codegen-emulation/check.sh [BUILD_DIR [gemv|persistent]]
#
# Dumps the golden matrix's sources (BUILD_DIR's test_codegen_golden,
# TB_GOLDEN_DUMP; default build/), then compiles each matrix-vector source of
# the rule (simt, cc90: tensor-3xtf32's differ in the header comment only) as
# C++ with the CUDA built-ins emulated (emulated_cuda.h) and runs it against
# an fp64 product, both views; and each persistent-row source of 2x1000000
# on the H200, shrunk to 8 blocks with one row a group and several, its
# inline PTX emulated
# (persistent_source.py, emulated_blocks.h), twice, against an fp64
# reference, both views (the persistent part alone is ctest's
# codegen_emulation, about half a minute). No GPU; a few minutes on 2 cores.
# Needs g++ with C++20 (std::barrier, std::atomic_ref).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${1:-$root/build} part=${2:-all}
[[ $part == all || $part == gemv || $part == persistent ]] ||
  { echo "check.sh: part '$part' unknown (gemv or persistent)" >&2; exit 2; }
work=$(mktemp -d "${TMPDIR:-/tmp}/tb-codegen-emulation.XXXXXX")
trap 'rm -rf "$work"' EXIT
TB_GOLDEN_DUMP=$work "$build/tests/test_codegen_golden" "$root/tests/golden/codegen_sources.sha256" \
  >/dev/null 2>&1 || { echo "check.sh: the golden dump failed (is $build built from this tree?)" >&2; exit 1; }
failed=0
for source in "$work"/gemm+*+simt+rule+cc90.cu; do
  [[ $part == persistent ]] && break
  grep -q '^#define GEMV_ROWS' "$source" || continue
  offset=0
  [[ $source == *+strided+* ]] && offset=1
  g++ -std=c++20 -O1 -w -pthread -I"$here" -DSRC="\"$source\"" "$here/run_gemv.cpp" -o "$work/run"
  printf '%s: ' "$(basename "$source" .cu)"
  "$work/run" "$offset" || failed=1
done
# (the golden matrix's other persistent shape, 10x500000, is the same text once shrunk)
for source in "$work"/{softmax,rmsnorm,layernorm}+2x1000000+{packed,strided}+automatic+calibrated-2+h200.cu; do
  [[ $part == gemv ]] && break
  view=packed offset=0
  [[ $source == *+strided+* ]] && view=strided offset=1
  for turns in one several; do
    printf '%s, %s row(s) a group:\n' "$(basename "$source" .cu)" "$turns"
    flags=$(python3 "$here/persistent_source.py" "$source" "$work/emulated.cu" \
      $([[ $view == strided ]] && echo --strided) \
      $([[ $turns == several ]] && echo --several-turns)) || { failed=1; continue; }
    g++ -std=c++20 -O1 -w -pthread -I"$here" -DSRC="\"$work/emulated.cu\"" $flags \
      "$here/run_persistent.cpp" -o "$work/run"
    # the first failure ends it: a kernel that hangs would take every block's alarm again
    "$work/run" "$offset" || { failed=1; break 2; }
  done
done
exit $failed
