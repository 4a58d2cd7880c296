#!/usr/bin/env bash
# Submits a sharded tilebench campaign to Slurm (docs/campaigns.md, "Slurm"): a job array of N
# shards (tilebench-shard.sbatch, one shard a task) and the merge and audit after it
# (tilebench-merge.sbatch, --dependency=afterany, so it also runs, and says what to rerun,
# when a shard failed). Prints the two job ids.
#
#   scripts/slurm/submit.sh [--shards N] [--gpus] [--sbatch ARG]... CAMPAIGN_DIR run|replay [options...]
#
#   --shards N     the number of shards, one array task each (default 4)
#   --gpus         one GPU a task (--gpus-per-task=1; Slurm sets CUDA_VISIBLE_DEVICES)
#   --sbatch ARG   passed to both sbatch calls (--partition=..., --time=..., --hold)
# CAMPAIGN_DIR must not hold the campaign's shards yet; each task writes CAMPAIGN_DIR/shard-I,
# the merge CAMPAIGN_DIR/merged, the jobs' output CAMPAIGN_DIR/slurm-*.out. TILEBENCH (the
# executable, default tilebench on PATH) travels with the jobs' environment.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
usage="usage: $0 [--shards N] [--gpus] [--sbatch ARG]... CAMPAIGN_DIR run|replay [options...]"
shards=4
extra=()
while [ $# -gt 0 ]; do
  case $1 in
  --shards) shards=${2:?$usage}; shift 2 ;;
  --gpus) extra+=(--gpus-per-task=1); shift ;;
  --sbatch) extra+=("${2:?$usage}"); shift 2 ;;
  --help | -h) echo "$usage"; exit 0 ;;
  *) break ;;
  esac
done
if [ $# -lt 2 ] || ! [[ $shards =~ ^[1-9][0-9]*$ ]]; then
  echo "$usage" >&2
  exit 2
fi
campaign_dir=$1
shift
mkdir -p "$campaign_dir"
campaign_dir=$(cd "$campaign_dir" && pwd)
merge_extra=()
for arg in "${extra[@]}"; do # the merge needs no GPU
  [ "$arg" = --gpus-per-task=1 ] || merge_extra+=("$arg")
done
array=$(sbatch --parsable --array="0-$((shards - 1))" "${extra[@]}" \
  --output="$campaign_dir/slurm-%A_%a.out" "$here/tilebench-shard.sbatch" "$campaign_dir" "$@")
array=${array%%;*}
merge=$(sbatch --parsable --dependency="afterany:$array" "${merge_extra[@]}" \
  --output="$campaign_dir/slurm-merge-%j.out" "$here/tilebench-merge.sbatch" "$campaign_dir" "$shards")
merge=${merge%%;*}
echo "$array $merge"
