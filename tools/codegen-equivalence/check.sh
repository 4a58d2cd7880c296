#!/usr/bin/env bash
# Are the kernels of this tree's generator the kernels of another commit's?
#
#   tools/codegen-equivalence/check.sh [BASE [BUILD_DIR]] [-- compare.py options]
#
# BASE (default b11127f: the generator before its rewrite as templates) is
# compiled straight from `git archive` (its templates embedded as the build does) with this tree's
# tests/test_codegen_golden.c, which dumps every source of the golden matrix
# (TB_GOLDEN_DUMP); this tree's sources come from BUILD_DIR's
# test_codegen_golden (default build/, built first). compare.py then compiles
# each changed pair with NVRTC and compares PTX, machine code and ptxas
# figures. About 5 minutes on 2 cores for the whole matrix; not part of CI.
# Needs gcc, cmocka, jansson and OpenSSL (as the build), NVRTC, python3.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
base=b11127f
build=$root/build
if [[ $# -gt 0 && $1 != -- ]]; then base=$1; shift; fi
if [[ $# -gt 0 && $1 != -- ]]; then build=$1; shift; fi
if [[ $# -gt 0 && $1 == -- ]]; then shift; fi
work=$(mktemp -d "${TMPDIR:-/tmp}/tb-codegen-equivalence.XXXXXX")
trap 'rm -rf "$work"' EXIT

echo "== $base: the golden matrix's sources"
mkdir -p "$work/base" "$work/old" "$work/new"
git -C "$root" archive "$base" src include | tar -x -C "$work/base"
# A base with operator templates embeds them as the build does (kernels.cmake).
embedded=()
kernels=$work/base/src/codegen/kernels
if [[ -f $kernels/embed.cmake ]]; then
  names=$(sed -n '/set(TB_KERNEL_TEMPLATES$/,/)/p' "$kernels/kernels.cmake" | tr -d '()' |
    sed 's/set//; s/TB_KERNEL_TEMPLATES//')
  list=$(for n in $names; do printf '%s;' "$kernels/$n.cuh"; done)
  cmake -DTB_OUTPUT="$work/base-templates.c" "-DTB_TEMPLATES=${list%;}" -P "$kernels/embed.cmake"
  embedded=("$work/base-templates.c")
fi
gcc -O1 -std=gnu11 -w -I"$work/base/src" -I"$work/base/include" -I"$root/tests" \
  -DTB_VERSION='"base"' -DTB_SOURCE_DIR='"/nonexistent"' -DTB_BUILD_DIR='"/nonexistent"' \
  -DTB_INSTALL_LIBDIR_REL='"lib"' -DTB_INSTALL_DATADIR_REL='"share"' \
  "$root/tests/test_codegen_golden.c" "$root/tests/test_support.c" \
  "$work"/base/src/{core,cases,planner,codegen,provenance,inputs}/*.c "${embedded[@]}" \
  -o "$work/base-golden" $(pkg-config --cflags --libs cmocka jansson) -lcrypto -lm -ldl
TB_GOLDEN_DUMP="$work/old" TB_GOLDEN_UPDATE=1 "$work/base-golden" "$work/old.sha256" >/dev/null

echo "== this tree ($build): the same matrix"
cmake --build "$build" -j2 --target test_codegen_golden >/dev/null
TB_GOLDEN_DUMP="$work/new" TB_GOLDEN_UPDATE=1 "$build/tests/test_codegen_golden" "$work/new.sha256" >/dev/null

echo "== compiled and compared"
python3 "$root/tools/codegen-equivalence/compare.py" "$work/old" "$work/new" "$@"
