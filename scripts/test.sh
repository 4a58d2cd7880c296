#!/usr/bin/env bash
# The whole test suite: install what is missing, build twice (plain, and with
# AddressSanitizer + UndefinedBehaviorSanitizer), run every test in both.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
tb_install_packages

echo "== layout (clang-format, .clang-format)"
if command -v clang-format >/dev/null; then
  (cd "$TB_ROOT" && git ls-files 'src/*.[ch]' 'tests/*.[ch]' 'tests/gpu/*.c' 'include/*.h' |
    xargs clang-format --dry-run --Werror) || {
    echo "layout differs: run clang-format -i on the files above" >&2
    exit 1
  }
else
  echo "clang-format not installed: layout not checked"
fi

echo "== tracked tree size (a GPU call carries at most 64 MiB of it)"
bash "$TB_ROOT/scripts/check-tree-size.sh" 26

echo "== build and test (RelWithDebInfo, warnings are errors)"
tb_build "$TB_ROOT/build" -DTB_WERROR=ON
(cd "$TB_ROOT/build" && ctest --output-on-failure -j"$(nproc)")

echo "== build and test under AddressSanitizer + UndefinedBehaviorSanitizer"
tb_build "$TB_ROOT/build-asan" -DTB_WERROR=ON -DTB_SANITIZE=ON
(cd "$TB_ROOT/build-asan" &&
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --output-on-failure -j"$(nproc)")

echo "== fuzz (libFuzzer + ASan + UBSan, 30 s per target)"
bash "$TB_ROOT/scripts/fuzz.sh" 30

echo "== install: Release (gcc) and Debug (clang) builds, the installed tools and libraries"
bash "$TB_ROOT/scripts/check-install.sh" "$TB_ROOT/build-install"
