#!/usr/bin/env bash
# scripts/evidence-add.sh [--bundle] RUN_DIR evidence/<name>[/<sub>]
# Copies a device run's output (RUN_DIR, left unchanged: it may be read-only) into the evidence
# tree the way evidence/STORAGE.md describes. With --bundle, RUN_DIR becomes one solid archive,
# evidence/<name>[/<sub>].tar.xz, holding it as it came back (its sources/ folders included):
# for campaigns of many similar runs (every plan of a shape), which compress together tens of
# times better than file by file; the archive is checked to extract to RUN_DIR's very bytes.
# Without --bundle:
#   - every generated source RUN_DIR/**/sources/<sha256>.cu goes to the shared store once,
#     gzip-compressed as evidence/sources/<sha256>.cu.gz (its SHA-256 checked against its name,
#     the compressed file checked to decompress to it; a source already in the store is left as
#     it is after checking it decompresses to the same bytes); no per-run sources/ folder;
#   - every results.json above 100 kB (100,000 bytes) is stored as results.json.gz
#     (gzip -n -9, checked to decompress to the same SHA-256), and its digest line is printed
#     for evidence/STORAGE.md;
#   - everything else is copied as it is (mode 0644).
# Nothing is written unless every check passes first; the destination must not exist.
# Exit codes: 0 added, 1 an unexpected failure while writing, 2 bad arguments or bad input.
set -euo pipefail

die() {
  echo "evidence-add: $*" >&2
  exit 2
}
usage() {
  echo "usage: scripts/evidence-add.sh [--bundle] RUN_DIR evidence/<name>[/<sub>]" >&2
  echo "  RUN_DIR: a device run's output folder; the destination: a new folder under evidence/" >&2
  exit 2
}

bundle=0
if [ "${1:-}" = --bundle ]; then
  bundle=1
  shift
fi
[ $# -eq 2 ] || usage
src=$1
dest_arg=$2
GZIP_ABOVE=100000

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
evidence="$root/evidence"
store="$evidence/sources"
[ -d "$evidence" ] || die "no evidence/ folder in $root"

[ -e "$src" ] || die "RUN_DIR '$src' does not exist"
[ -d "$src" ] || die "RUN_DIR '$src' is not a folder"
src=$(cd "$src" && pwd -P)
[ -n "$(find "$src" -mindepth 1 -print -quit)" ] || die "RUN_DIR '$src' is empty"
case "$src/" in
  "$evidence"/*) die "RUN_DIR '$src' is already inside evidence/: give the device run's own output" ;;
esac

# The destination: evidence/<name>[/<sub>], relative to the current folder or absolute.
case "$dest_arg" in
  /*) dest_abs=$dest_arg ;;
  *) dest_abs="$PWD/$dest_arg" ;;
esac
dest_abs=${dest_abs%/}
dest_parent=$(dirname "$dest_abs")
# resolve the existing part of the parent chain (evidence/ itself must exist)
probe=$dest_parent
tail=""
while [ ! -d "$probe" ]; do
  tail="/$(basename "$probe")$tail"
  probe=$(dirname "$probe")
done
dest_abs="$(cd "$probe" && pwd -P)$tail/$(basename "$dest_abs")"
case "$dest_abs" in
  "$evidence"/*) rel=${dest_abs#"$evidence"/} ;;
  *) die "destination '$dest_arg' is not under $evidence (give evidence/<name>[/<sub>])" ;;
esac
IFS=/ read -r -a parts <<<"$rel"
[ ${#parts[@]} -ge 1 ] || die "destination '$dest_arg' names no run folder"
for p in "${parts[@]}"; do
  [[ $p =~ ^[A-Za-z0-9][A-Za-z0-9._,+=-]*$ ]] ||
    die "destination '$dest_arg': '$p' is not a plain folder name (letters, digits, . _ , + = -; no leading dot)"
done
for p in "${parts[@]}"; do
  [ "$p" != sources ] ||
    die "destination '$dest_arg': a folder named sources is where the audit looks for the source store"
done
[ "$bundle" = 0 ] || dest_abs=$dest_abs.tar.xz
if [ -e "$dest_abs" ] || [ -L "$dest_abs" ]; then
  die "destination $dest_abs exists: evidence is never overwritten; pick a new name (or a new <sub>)"
fi

# ---- check everything before writing anything -------------------------------------------------
bad=$(find "$src" ! -type f ! -type d -print -quit)
[ -z "$bad" ] || die "$bad is not a plain file or folder (links are not committed as evidence)"

declare -a src_files=() new_sources=()
n_sources=0
while IFS= read -r -d '' dir; do
  while IFS= read -r -d '' f; do
    name=$(basename "$f")
    [[ $name =~ ^[0-9a-f]{64}\.cu$ ]] ||
      die "$f: a sources/ folder holds only <sha256>.cu files; remove or rename it first"
    sum=$(sha256sum "$f" | cut -d' ' -f1)
    [ "$sum.cu" = "$name" ] || die "$f: its SHA-256 is $sum, not its name: the source is damaged"
    n_sources=$((n_sources + 1))
    if [ "$bundle" = 1 ]; then
      continue # a bundle keeps its own sources
    elif [ -e "$store/$name.gz" ]; then
      gzip -dc "$store/$name.gz" | cmp -s "$f" - ||
        die "$store/$name.gz differs from $f although both carry the same name: check the store"
    else
      new_sources+=("$f")
    fi
  done < <(find "$dir" -mindepth 1 -print0)
done < <(find "$src" -type d -name sources -print0)

while IFS= read -r -d '' f; do
  src_files+=("$f")
done < <(find "$src" -type d -name sources -prune -o -type f -print0)
[ ${#src_files[@]} -gt 0 ] || [ "$n_sources" -gt 0 ] || die "RUN_DIR '$src' has no files"
for f in "${src_files[@]}"; do
  if [ "$(basename "$f")" = results.json ] && [ -e "$(dirname "$f")/results.json.gz" ]; then
    die "$(dirname "$f") has both results.json and results.json.gz: keep the one the run wrote"
  fi
  [ "$(basename "$f")" != results.json.gz ] || gzip -t "$f" 2>/dev/null ||
    die "$f is not a complete gzip file"
done

# The highest parent folder this script creates, removed again on failure.
made=$(dirname "$dest_abs")
while [ ! -d "$(dirname "$made")" ]; do made=$(dirname "$made"); done
[ -d "$made" ] && made=""
remove_made() {
  [ -n "$made" ] || return 0
  local d
  d=$(dirname "$dest_abs")
  while rmdir "$d" 2>/dev/null && [ "$d" != "$made" ]; do d=$(dirname "$d"); done
  return 0
}

# ---- a bundle: one solid archive, written beside its destination, checked, renamed into place --
if [ "$bundle" = 1 ]; then
  mkdir -p "$(dirname "$dest_abs")"
  tmp=$(mktemp "$(dirname "$dest_abs")/.evidence-add.XXXXXX")
  check=$(mktemp -d)
  cleanup() {
    rm -rf "$tmp" "$check"
    remove_made
  }
  trap cleanup EXIT
  top=$(basename "$dest_abs" .tar.xz)
  # deterministic: names sorted, times, owners and modes fixed; the archive's top folder is <sub>
  tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner --mode=u=rwX,go=rX \
    --transform "s|^\.|$top|" -C "$src" -cf - . | xz -9e -T1 >"$tmp"
  tar -C "$check" -xJf "$tmp"
  diff -r "$src" "$check/$top" >/dev/null ||
    { echo "evidence-add: $tmp does not extract to $src" >&2; exit 1; }
  chmod 0644 "$tmp"
  # -n: a destination made meanwhile is never replaced (the archive then stays, and is removed)
  mv -n "$tmp" "$dest_abs"
  [ ! -e "$tmp" ] || { echo "evidence-add: $dest_abs appeared meanwhile; nothing written" >&2; exit 1; }
  trap - EXIT
  rm -rf "$check"
  echo "evidence-add: evidence/$rel.tar.xz: ${#src_files[@]} files and $n_sources sources," \
    "$(stat -c %s "$dest_abs") bytes (checked to extract to $src)"
  echo "  next: write the run's notes.md, list the bundle in EvidenceTest, and audit each results"
  echo "        folder of the extracted archive (tar -xJf) with tools/audit/tilebench_audit.py"
  exit 0
fi

# ---- write: stage the run next to its destination, then rename it into place -----------------
mkdir -p "$(dirname "$dest_abs")"
stage=$(mktemp -d "$(dirname "$dest_abs")/.evidence-add.XXXXXX")
cleanup() {
  rm -rf "$stage"
  remove_made
}
trap cleanup EXIT

declare -a digest_lines=()
n_gz=0
for f in "${src_files[@]}"; do
  r=${f#"$src"/}
  if [ "$(basename "$f")" = results.json ] && [ "$(stat -c %s "$f")" -gt "$GZIP_ABOVE" ]; then
    mkdir -p "$(dirname "$stage/$r")"
    gzip -n -9 -c "$f" >"$stage/$r.gz"
    chmod 0644 "$stage/$r.gz"
    want=$(sha256sum "$f" | cut -d' ' -f1)
    got=$(gzip -dc "$stage/$r.gz" | sha256sum | cut -d' ' -f1)
    [ "$want" = "$got" ] || { echo "evidence-add: $r.gz does not decompress to $r" >&2; exit 1; }
    digest_lines+=("| \`$rel/$r.gz\` | \`$want\` |")
    n_gz=$((n_gz + 1))
  else
    install -D -m 0644 "$f" "$stage/$r"
  fi
done

mkdir -p "$store"
for f in "${new_sources[@]+"${new_sources[@]}"}"; do
  name=$(basename "$f")
  [ -e "$store/$name.gz" ] && continue # the same source in two sub-runs of RUN_DIR
  gzip -n -9 -c "$f" >"$store/.$name.gz.tmp"
  chmod 0644 "$store/.$name.gz.tmp"
  gzip -dc "$store/.$name.gz.tmp" | cmp -s "$f" - ||
    { echo "evidence-add: $store/$name.gz does not decompress to $f" >&2; exit 1; }
  mv "$store/.$name.gz.tmp" "$store/$name.gz"
done

mv -T "$stage" "$dest_abs"
chmod 0755 "$dest_abs"
trap - EXIT

n_new=0
[ ${#new_sources[@]} -eq 0 ] || n_new=$(printf '%s\n' "${new_sources[@]}" | xargs -n1 basename | sort -u | wc -l)
echo "evidence-add: evidence/$rel: ${#src_files[@]} files ($n_gz results.json gzip-compressed);"
echo "  sources: $n_sources archived, $n_new new in evidence/sources/, $((n_sources - n_new)) already there"
if [ "$n_gz" -gt 0 ]; then
  echo "  digests of the compressed results (SHA-256 of results.json, for evidence/STORAGE.md):"
  printf '    %s\n' "${digest_lines[@]}"
fi
echo "  next: write evidence/$rel/notes.md (or the run's), then"
echo "        python3 tools/audit/tilebench_audit.py <each folder with a results file>"
