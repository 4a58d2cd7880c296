#!/usr/bin/env bash
# Do pending/'s patches still apply, in order, to this tree? A kernel change on main that
# conflicts with a change waiting for its A/B fails here, so the series is refreshed (or the
# patch dropped) with the change, not found broken when a device call is finally at hand.
#   tests/test_pending_patches.sh REPO_ROOT
set -euo pipefail
root=$(cd "${1:?usage: test_pending_patches.sh REPO_ROOT}" && pwd)
shopt -s nullglob
patches=("$root"/pending/*.patch)
if (( ${#patches[@]} == 0 )); then
  echo "no pending patches"
  exit 0
fi
copy=$(mktemp -d "${TMPDIR:-/tmp}/tb-pending.XXXXXX")
trap 'rm -rf "$copy"' EXIT
cp -r "$root/src" "$root/tests" "$copy/"
cd "$copy"  # not a git repository: git apply acts as patch(1) on the copy
for patch in "${patches[@]}"; do
  if ! git apply --whitespace=nowarn "$patch"; then
    echo "FAIL: $(basename "$patch") no longer applies after the ones before it" >&2
    exit 1
  fi
  echo "ok: $(basename "$patch")"
done
