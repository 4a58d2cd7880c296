#!/usr/bin/env bash
# Do pending/'s patches still apply, in order, to this tree? A kernel change on main that
# conflicts with a change waiting for its A/B fails here, so the series is refreshed (or the
# patch dropped) with the change, not found broken when a device call is finally at hand.
#   tests/test_pending_patches.sh REPO_ROOT
# Exit 0 when every patch applies, 1 when one does not, 2 on bad usage.
set -euo pipefail
if [[ $# -ne 1 || ! -d "$1/pending" ]]; then
  echo "usage: test_pending_patches.sh REPO_ROOT (a folder holding pending/)" >&2
  exit 2
fi
root=$(cd "$1" && pwd)
shopt -s nullglob
patches=("$root"/pending/*.patch)
if (( ${#patches[@]} == 0 )); then
  echo "no pending patches"
  exit 0
fi
copy=$(mktemp -d "${TMPDIR:-/tmp}/tb-pending.XXXXXX")
trap 'rm -rf "$copy"' EXIT
# the files the series changes, as this tree has them (one it lacks fails its patch below)
sed -n 's|^--- a/||p' "${patches[@]}" | sort -u | while read -r path; do
  [[ -f "$root/$path" ]] || continue
  mkdir -p "$copy/$(dirname "$path")"
  cp "$root/$path" "$copy/$path"
done
cd "$copy"  # not a git repository: git apply acts as patch(1) on the copy
for patch in "${patches[@]}"; do
  if ! git apply --whitespace=nowarn "$patch"; then
    echo "FAIL: $(basename "$patch") no longer applies after the ones before it" >&2
    exit 1
  fi
  echo "ok: $(basename "$patch")"
done
