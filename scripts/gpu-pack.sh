#!/usr/bin/env bash
# Builds here and stages what the GPU machine needs under .device/ (ignored
# by git, carried by the device tool): the binaries and libtilebench_timing
# (bin/, found through $ORIGIN), and shared libraries its Ubuntu image may
# lack (lib/). Then: scripts/gpu.sh there.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
if [[ -n "${MIDDLE:-}" ]]; then
  echo "gpu-pack: MIDDLE is gone: give the chain as BASELINE=\"<commit> <commit> ...\"" >&2
  exit 2
fi
if (( $(wc -w <<< "${BASELINE:-}") > 9 )); then
  echo "gpu-pack: BASELINE: at most 9 commits (the ab stage labels the builds A to J)" >&2
  exit 2
fi
for commit in ${BASELINE:-}; do
  if ! git -C "$TB_ROOT" rev-parse --verify -q "$commit^{commit}" >/dev/null; then
    echo "gpu-pack: BASELINE: $commit is not a commit of this repository" >&2
    exit 2
  fi
done
tb_install_packages
tb_build "$TB_ROOT/build"
rm -rf "$TB_ROOT/.device"
mkdir -p "$TB_ROOT/.device/bin" "$TB_ROOT/.device/lib"
cp "$TB_ROOT"/build/src/tilebench "$TB_ROOT"/build/src/libtilebench_timing.so* \
   "$TB_ROOT"/build/tests/timing_gpu "$TB_ROOT"/build/tests/cupti_lifecycle_memory \
   "$TB_ROOT"/build/tests/eager_scope_order \
   "$TB_ROOT/.device/bin/"
# what travels with the binary (core/resources.h): the Python package and the audit
cp -r "$TB_ROOT"/build/src/python "$TB_ROOT"/build/src/audit "$TB_ROOT/.device/bin/"
cp -L /usr/lib/x86_64-linux-gnu/libjansson.so.4 "$TB_ROOT/.device/lib/"
# BASELINE="<commit> [<commit> ...]": those commits' tilebench too, in that
# order under .device/builds/1, 2, ..., for the ab stage of scripts/gpu.sh: a
# chain of changes, each build measured against the one before it and the
# last against this tree's, in one call.
build_commit() {  # COMMIT FOLDER
  local tree
  tree=$(mktemp -d)
  if ! git -C "$TB_ROOT" worktree add --detach "$tree" "$1" >/dev/null 2>&1; then
    echo "gpu-pack: no worktree of $1 in $tree" >&2
    exit 1
  fi
  if ! { cmake -S "$tree" -B "$tree/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null &&
         cmake --build "$tree/build" -j"$(nproc)" --target tilebench >/dev/null; }; then
    git -C "$TB_ROOT" worktree remove --force "$tree"
    echo "gpu-pack: the build of $1 failed" >&2
    exit 1
  fi
  mkdir -p "$2"
  cp "$tree"/build/src/tilebench "$tree"/build/src/libtilebench_timing.so* "$2/"
  # what travels with the binary, as for this tree's (the torch worker, the audit; older
  # commits staged none)
  cp -r "$tree"/build/src/python "$tree"/build/src/audit "$2/" 2>/dev/null || true
  git -C "$TB_ROOT" rev-parse "$1^{commit}" > "$2/commit"  # a tag's commit, not the tag
  git -C "$TB_ROOT" worktree remove --force "$tree"
}
position=0
for commit in ${BASELINE:-}; do
  position=$((position + 1))
  build_commit "$commit" "$TB_ROOT/.device/builds/$position"
done
# The CUDA user kernels of the user-kernels stage (the GPU machine has no
# nvcc): the example and the GPU-only broken kernels, where nvcc is here; and
# the cluster-placement diagnostic.
if command -v nvcc >/dev/null || [[ -x /usr/local/cuda/bin/nvcc ]]; then
  "$TB_ROOT/scripts/build-cuda-user-kernels.sh" "$TB_ROOT/.device/user-kernels" >/dev/null
  # the cluster-placement stage's diagnostic (CUDA runtime linked statically)
  "${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}" -O2 -arch=sm_90 \
    -o "$TB_ROOT/.device/bin/cluster_placement" "$TB_ROOT/tests/gpu/cluster_placement.cu"
else
  echo "gpu-pack: no nvcc: .device/user-kernels not built (scripts/gpu.sh skips user-kernels)" >&2
fi
# The source commit these binaries were built from, for the evidence notes.
git -C "$TB_ROOT" rev-parse HEAD > "$TB_ROOT/.device/commit"
git -C "$TB_ROOT" status --porcelain > "$TB_ROOT/.device/dirty"
du -sh "$TB_ROOT/.device"
