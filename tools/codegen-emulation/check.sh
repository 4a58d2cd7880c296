#!/usr/bin/env bash
# Do the generated matrix-vector kernels compute y = x.B and y = A.x, and do
# the persistent-row and register-rows kernels compute their row operations?
#
#   tools/codegen-emulation/check.sh [BUILD_DIR [gemv|persistent|register|elementwise|streaming]]
#
# Dumps the golden matrix's sources (BUILD_DIR's test_codegen_golden,
# TB_GOLDEN_DUMP; default build/), then compiles each as C++ with the CUDA
# built-ins emulated (emulated_cuda.h, emulated_blocks.h; inline PTX by
# ptx_emulation.py) and runs it against an fp64 reference:
# - each matrix-vector source of the rule (simt, cc90: tensor-3xtf32's differ
#   in the header comment only), both views;
# - each persistent-row source of 2x1000000 on the H200, shrunk to 8 blocks
#   with one row a group and several (persistent_source.py), twice, both views;
# - each register-rows source of the matrix, automatic on the H200, cut to a
#   few blocks of rows (register_rows_source.py), the matrix 16-byte aligned
#   and 1 float past;
# - each add and gelu_add source of the matrix up to 2^20 elements, both
#   views, the operands 16-byte aligned and 1 float past;
# - each block-streaming and split-row source of the matrix (automatic,
#   planned for the H200 and with no limits), cut to at most 3 rows
#   (streaming_source.py), the matrix 16-byte aligned and 1 float past.
# A float4 access that is not 16-byte aligned ends a run (-fsanitize=alignment).
# ctest's codegen_emulation runs the persistent part (about half a minute),
# codegen_emulation_register the register part and codegen_emulation_elementwise
# the elementwise one, codegen_emulation_streaming the streaming one. No GPU; a few minutes on 2
# cores. Needs g++ with C++20 (std::barrier, std::atomic_ref).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${1:-$root/build} part=${2:-all}
[[ $part =~ ^(all|gemv|persistent|register|elementwise|streaming)$ ]] ||
  { echo "check.sh: part '$part' unknown (gemv, persistent, register, elementwise or streaming)" >&2
    exit 2; }
[[ -x $build/tests/test_codegen_golden ]] ||
  { echo "check.sh: no $build/tests/test_codegen_golden (give a build folder of this tree)" >&2; exit 2; }
wants() { [[ $part == all || $part == "$1" ]]; }
work=$(mktemp -d "${TMPDIR:-/tmp}/tb-codegen-emulation.XXXXXX")
trap 'rm -rf "$work"' EXIT
TB_GOLDEN_DUMP=$work "$build/tests/test_codegen_golden" "$root/tests/golden/codegen_sources.sha256" \
  >/dev/null 2>&1 || { echo "check.sh: the golden dump failed (is $build built from this tree?)" >&2; exit 1; }
failed=0
# a misaligned float4 access (emulated_cuda.h's float4 is 16-byte aligned, as CUDA's) ends the run
CXX=(g++ -std=c++20 -O1 -w -pthread -fsanitize=alignment -fno-sanitize-recover=alignment -I"$here")
for source in "$work"/gemm+*+simt+rule+cc90.cu; do
  wants gemv || break
  grep -q '^#define GEMV_ROWS' "$source" || continue
  offset=0
  [[ $source == *+strided+* ]] && offset=1
  "${CXX[@]}" -DSRC="\"$source\"" "$here/run_gemv.cpp" -o "$work/run"
  printf '%s: ' "$(basename "$source" .cu)"
  "$work/run" "$offset" || failed=1
done
# (the golden matrix's other persistent shape, 10x500000, is the same text once shrunk)
for source in "$work"/{softmax,rmsnorm,layernorm}+2x1000000+{packed,strided}+automatic+calibrated-2+h200.cu; do
  wants persistent || break
  view=packed offset=0
  [[ $source == *+strided+* ]] && view=strided offset=1
  for turns in one several; do
    printf '%s, %s row(s) a group:\n' "$(basename "$source" .cu)" "$turns"
    flags=$(python3 "$here/persistent_source.py" "$source" "$work/emulated.cu" \
      $([[ $view == strided ]] && echo --strided) \
      $([[ $turns == several ]] && echo --several-turns)) || { failed=1; continue; }
    "${CXX[@]}" -DSRC="\"$work/emulated.cu\"" $flags "$here/run_persistent.cpp" -o "$work/run"
    # the first failure ends it: a kernel that hangs would take every block's alarm again
    "$work/run" "$offset" || { failed=1; break 2; }
  done
done
# run_rows PART MAPPINGS SCRIPT RUNNER SOURCES...: each source of the MAPPINGS (an extended
# regex) made host C++ by SCRIPT, compiled with RUNNER and run with its matrix 16-byte aligned and
# 1 float past; a text met before (262144x257 is 16384x257's once its rows are cut) is not run
# again (the header names the shape)
run_rows() {
  local wanted=$1 mappings=$2 script=$3 runner=$4 source flags digest offset
  shift 4
  wants "$wanted" || return 0
  declare -A seen=()
  for source in "$@"; do
    grep -qE "mapping ($mappings)\$" "$source" || continue
    flags=$(python3 "$here/$script" "$source" "$work/emulated.cu") || { failed=1; continue; }
    digest=$(tail -n +2 "$work/emulated.cu" | sha256sum)
    [[ -n ${seen[$digest]:-} ]] && continue
    seen[$digest]=1
    "${CXX[@]}" -DSRC="\"$work/emulated.cu\"" $flags "$here/$runner" -o "$work/run"
    echo "$(basename "$source" .cu):"
    for offset in 0 1; do "$work/run" "$offset" || failed=1; done
  done
}
# every register-rows kernel of the matrix's shapes (automatic, as planned for the H200), cut to a
# few blocks of rows (a stride such as 257 starts rows at every offset in between)
run_rows register register_rows register_rows_source.py run_register_rows.cpp \
  "$work"/{sum,softmax,rmsnorm,layernorm}+*+automatic+calibrated-2+h200.cu
# every block-streaming and split-row kernel of the matrix (automatic, as planned for the H200 and
# with no limits; packed: a row of 8195 starts at every offset), cut to 3 rows (a misaligned row
# reads in guarded batches only)
run_rows streaming 'block_streaming|split_row' streaming_source.py run_streaming.cpp \
  "$work"/{sum,softmax,rmsnorm,layernorm}+*+packed+automatic+calibrated-2+{h200,nolimits}.cu
# every add and gelu_add kernel of the matrix up to 2^20 elements (larger ones are the same text
# with other numbers, and one host thread runs every CUDA thread), its operands 16-byte aligned
# and 1 float past (a packed walk's float4 groups then take the one-at-a-time path)
for source in "$work"/{add,gelu_add}+*+{packed,strided}.cu; do
  wants elementwise || break
  m=$(sed -n 's/^#define M \([0-9]*\).*/\1/p' "$source")
  n=$(sed -n 's/^#define N \([0-9]*\).*/\1/p' "$source")
  threads=$(sed -n 's/.*__launch_bounds__(\([0-9]*\)).*/\1/p' "$source")
  [[ -n $m && -n $n && -n $threads ]] ||
    { echo "$(basename "$source"): no M, N or block size" >&2; failed=1; continue; }
  (( m * n <= 1 << 20 )) || continue
  gelu=()
  [[ $(basename "$source") == gelu_add+* ]] && gelu=(-DTB_EMULATED_GELU)
  "${CXX[@]}" -DSRC="\"$source\"" -DTHREADS="$threads" "${gelu[@]}" "$here/run_elementwise.cpp" \
    -o "$work/run"
  echo "$(basename "$source" .cu):"
  for offset in 0 1; do "$work/run" "$offset" || failed=1; done
done
exit $failed
