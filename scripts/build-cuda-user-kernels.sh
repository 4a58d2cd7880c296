#!/usr/bin/env bash
# Builds the CUDA user kernel libraries into DIR (default .device/user-kernels):
# the example of examples/user-kernel-cuda through its own Makefile, and the
# broken kernels of tests/user_kernels/cuda (one per GPU-only defence class).
# Needs nvcc (NVCC=, else PATH, else /usr/local/cuda/bin); exits 2 without it.
# Used by scripts/gpu-pack.sh (the GPU machine has no nvcc) and by
# tests/test_user_kernels.py (that they build and export the contract's symbols).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DIR=${1:-$ROOT/.device/user-kernels}
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
if [[ ! -x "$NVCC" ]]; then
  echo "build-cuda-user-kernels: no nvcc (set NVCC=, or put it on PATH)" >&2
  exit 2
fi
mkdir -p "$DIR"
DIR=$(cd "$DIR" && pwd)
# the example as a user builds it, in a copy (its Makefile writes beside itself)
example=$(mktemp -d)
trap 'rm -rf "$example"' EXIT
cp "$ROOT"/examples/user-kernel-cuda/{Makefile,softmax.cu,softmax_rows.cuh} "$example/"
make -s -C "$example" NVCC="$NVCC" TILEBENCH_INCLUDE="$ROOT/include"
cp "$example/libsoftmax_cuda.so" "$DIR/"
for kernel in side_stream no_kernel; do
  "$NVCC" -O3 -arch=sm_90 -Xcompiler -fPIC -shared -cudart static -I "$ROOT/include" \
    -I "$ROOT/examples/user-kernel-cuda" -I "$ROOT/tests/user_kernels" \
    -o "$DIR/lib$kernel.so" "$ROOT/tests/user_kernels/cuda/$kernel.cu"
done
ls "$DIR"
