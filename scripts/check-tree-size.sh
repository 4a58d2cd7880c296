#!/usr/bin/env bash
# scripts/check-tree-size.sh [LIMIT_MB]
# Sums the apparent sizes of the files git tracks in this repository and fails above
# LIMIT_MB (default 26; 1 MB = 1,000,000 bytes). A device call carries at most 64 MiB of
# working tree, and committed evidence is what grows: evidence/STORAGE.md says how it is kept
# small (one shared source store, gzip-compressed results, superseded runs in git history only).
# Exit codes: 0 within the limit, 1 above it, 2 bad usage or not a git checkout.
set -euo pipefail

usage() {
  echo "usage: scripts/check-tree-size.sh [LIMIT_MB]   (LIMIT_MB: a positive number, default 26)" >&2
  exit 2
}

[ $# -le 1 ] || usage
limit_mb=${1:-26}
[[ $limit_mb =~ ^[0-9]+([.][0-9]+)?$ ]] || {
  echo "check-tree-size: LIMIT_MB must be a positive number of megabytes, not '$limit_mb'" >&2
  usage
}

root=$(git -C "$(dirname "${BASH_SOURCE[0]}")/.." rev-parse --show-toplevel 2>/dev/null) || {
  echo "check-tree-size: $(dirname "${BASH_SOURCE[0]}")/.. is not a git checkout: cannot list tracked files" >&2
  exit 2
}
cd "$root"

# Tracked files present in the work tree (one deleted but not yet staged has no size to count).
read -r bytes files < <(git ls-files -z | while IFS= read -r -d '' f; do
  [ -f "$f" ] && [ ! -L "$f" ] && printf '%s\0' "$f"
done | xargs -0 -r stat -c %s | awk '{s += $1; n++} END {printf "%d %d\n", s, n}')

limit_bytes=$(awk -v l="$limit_mb" 'BEGIN {printf "%d", l * 1000000}')
figure=$(awk -v b="$bytes" 'BEGIN {printf "%.2f", b / 1000000}')
echo "tracked tree: $bytes bytes in $files files ($figure MB; limit $limit_mb MB)"

if [ "$bytes" -gt "$limit_bytes" ]; then
  cat >&2 <<EOF
check-tree-size: the tracked tree is $figure MB, above the limit of $limit_mb MB.
The largest tracked folders:
$(git ls-files -z | while IFS= read -r -d '' f; do [ -f "$f" ] && printf '%s\0' "$f"; done |
    xargs -0 -r stat -c '%s %n' |
    awk '{split($2, p, "/"); k = (p[1] == "evidence" && p[2] != "") ? p[1] "/" p[2] : p[1];
          s[k] += $1} END {for (k in s) printf "  %10d  %s\n", s[k], k}' | sort -rn | head -8)
Do what evidence/STORAGE.md says: add runs with scripts/evidence-add.sh (sources into the
shared evidence/sources/ store, results.json over 100 kB gzip-compressed), and move runs that
today's claims no longer cite out of the tree (listed with their commit in evidence/INDEX.md).
EOF
  exit 1
fi
