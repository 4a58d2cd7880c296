#!/usr/bin/env bash
# Installs what tilebench needs from Debian's packages (when missing) and
# builds it. Sourced by scripts/main.sh and scripts/test.sh; usable alone:
#   scripts/setup.sh [BUILD_DIR] [extra cmake arguments...]
set -euo pipefail

TB_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TB_PACKAGES=(build-essential cmake pkg-config git libjansson-dev libssl-dev zlib1g-dev libcmocka-dev python3 python3-torch
  python3-venv python3-pip python3-setuptools python3-wheel clang clang-format
  libclang-rt-14-dev llvm python3-matplotlib slurm-wlm munge xz-utils)

tb_missing_packages() {
  local missing=()
  for pkg in "${TB_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" ||
      missing+=("$pkg")
  done
  echo "${missing[@]:-}"
}

tb_install_packages() {
  local missing
  missing=$(tb_missing_packages)
  [ -z "$missing" ] && return 0
  if ! command -v apt-get >/dev/null; then
    echo "tilebench setup: missing packages ($missing) and no apt-get to install them" >&2
    exit 1
  fi
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null; then sudo="sudo"; else
      echo "tilebench setup: please install as root: apt-get install $missing" >&2
      exit 1
    fi
  fi
  echo "tilebench setup: installing $missing" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq $missing >/dev/null
}

# tb_build BUILD_DIR [cmake args...]: configure (once) and build.
tb_build() {
  local dir=$1
  shift
  cmake -S "$TB_ROOT" -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >"$dir.configure.log" 2>&1 ||
    { cat "$dir.configure.log" >&2; exit 1; }
  cmake --build "$dir" -j"$(nproc)" >"$dir.build.log" 2>&1 ||
    { tail -50 "$dir.build.log" >&2; exit 1; }
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  tb_install_packages
  dir=${1:-$TB_ROOT/build}
  shift || true
  tb_build "$dir" "$@"
  echo "built $dir/src/tilebench"
fi
