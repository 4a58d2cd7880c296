#!/usr/bin/env bash
# The main job: install what is missing, build, and run the default campaign
# (all six operations over the default shapes; on the CPU backend when there
# is no GPU). Extra arguments go to `tilebench run`.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
tb_install_packages
tb_build "$TB_ROOT/build"
cd "$TB_ROOT"
"$TB_ROOT/build/src/tilebench" env
echo
exec "$TB_ROOT/build/src/tilebench" run "$@"
