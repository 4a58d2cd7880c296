#!/usr/bin/env bash
# Everything GPU-side in one call (run on the GPU machine, from the repo root,
# after scripts/gpu-pack.sh here; the device tool carries .device/):
#   scripts/gpu.sh [tests] [validate] [sanitize] [perf] [floor] [replay] [torch] [torch-all]
#                  [probe-gaps] [batch] [gemm] [gemm-blocks] [gemm-tiles] [ab] [cupti-variants] [ncu]
#                  [user-kernels] [stopping] [devices] [regret] [replay-dumps] [scope-order]
#                  [cluster-placement] [targets]
#   (default: tests validate sanitize perf)
# Writes full results under $OUT (bundled: the tool returns few files) and
# prints a short table last.
set -uo pipefail
# Settings checked before anything is written (bad input: a message and exit 2).
for setting in CALL_LIMIT_S VALIDATE_TIMEOUT_S TARGETS_RUN_TIMEOUT_S; do
  if [[ -n "${!setting:-}" && ! "${!setting}" =~ ^[0-9]+$ ]]; then
    echo "gpu.sh: $setting=${!setting}: give whole seconds" >&2
    exit 2
  fi
done
# each shape names a run's folder, so nothing but MxN
shapes_pattern='^[0-9]+x[0-9]+(,[0-9]+x[0-9]+)*$'
if [[ -n "${TARGETS_COMPILE_SHAPES:-}" && ! "$TARGETS_COMPILE_SHAPES" =~ $shapes_pattern ]]; then
  echo "gpu.sh: TARGETS_COMPILE_SHAPES=$TARGETS_COMPILE_SHAPES: give MxN,MxN,..." >&2
  exit 2
fi
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT=${OUT:-$ROOT/runs/gpu-$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$OUT"
BIN=$ROOT/.device/bin
export LD_LIBRARY_PATH=$BIN:$ROOT/.device/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export PYTHONUNBUFFERED=1
STAGES=${*:-tests validate sanitize perf}
WORK=$(mktemp -d)
SUMMARY=$OUT/summary.txt
: > "$SUMMARY"

note() { echo "$*" | tee -a "$SUMMARY"; }
# STAGE: $WORK/STAGE as $OUT/STAGE.tgz, written whole and then renamed: a stage kept after each
# of its runs loses only the run in flight when the call's time runs out.
keep() { tar -C "$WORK" -czf "$OUT/$1.tgz.partial" "$1" && mv "$OUT/$1.tgz.partial" "$OUT/$1.tgz"; }
has() { [[ " $STAGES " == *" $1 "* ]]; }
# Seconds a command may take: at most WANTED, and no more than what is left of the call's limit
# (CALL_LIMIT_S, the device tool's 600 s less a margin) once RESERVE seconds are kept back for
# what must follow it (a summary, the bundle); at least 1 (`timeout 0` would mean no limit).
budget() {  # WANTED RESERVE
  local left=$(( ${CALL_LIMIT_S:-590} - SECONDS - $2 ))
  left=$(( left < $1 ? left : $1 ))
  echo $(( left < 1 ? 1 : left ))
}
# The seconds NAME may take (budget WANTED RESERVE); where fewer than LEAST are left, a note
# that NAME was not started, and status 1.
allowance() {  # NAME WANTED RESERVE LEAST
  local limit
  limit=$(budget "$2" "$3")
  if (( limit < $4 )); then note "$1: not started (the call's time is spent)" >&2; return 1; fi
  echo "$limit"
}

# Shapes of issue 5; the validation matrix also has odd and long rows.
ALL_SHAPES=17x257,37x769,64x4096,1024x1024,16384x257,4096x1024,32768x8192,8192x32768,262144x257,8x65536
EXTRA_SHAPES=1x1,3x5,200x40000,2x1000000,64x258,100x8195,10x500000

if has tests; then
  mkdir -p "$WORK/gpu-tests"
  nvidia-smi > "$WORK/gpu-tests/nvidia-smi.txt" 2>&1
  cp "$ROOT/.device/commit" "$ROOT/.device/dirty" "$WORK/gpu-tests/" 2>/dev/null
  "$BIN/tilebench" env --json > "$WORK/gpu-tests/env.json" 2>&1
  "$BIN/tilebench" env | tee -a "$SUMMARY"
  timeout 240 "$BIN/timing_gpu" "$WORK/gpu-tests/timing_gpu.json" 2>&1 | tee "$WORK/gpu-tests/timing_gpu.log"
  note "timing library GPU tests: $(tail -1 "$WORK/gpu-tests/timing_gpu.log")"
  # Where the probe's per-session device memory goes (issue 4).
  timeout 120 "$BIN/cupti_lifecycle_memory" "$WORK/gpu-tests/cupti_lifecycle.json" 2>&1 |
    tee "$WORK/gpu-tests/cupti_lifecycle.log" | grep INFO | tee -a "$SUMMARY"
  timeout 240 python3 "$ROOT/tests/gpu/torch_profiler_after_probe.py" \
    "$BIN/libtilebench_timing.so.2" "$WORK/gpu-tests/torch_check.json" 2>&1 |
    tee "$WORK/gpu-tests/torch_check.log"
  note "ctypes + torch.profiler checks: $(tail -1 "$WORK/gpu-tests/torch_check.log")"
  # torch graphs captured on the stream they replay on, as the worker's, stay back to back
  # through many graphs and a second stream's kernels (docs/method.md §2.3)
  GRAPH_REGIME_STREAM=dedicated GRAPH_REGIME_CAPTURE=current GRAPH_REGIME_EXPECT=back-to-back \
    timeout 120 python3 "$ROOT/tests/gpu/graph_regime.py" "$WORK/gpu-tests/graph_regime.json" \
    again,capture2_nowarm,capture16_nowarm,side,again > "$WORK/gpu-tests/graph_regime.log" 2>&1
  note "torch graphs on the worker's arrangement: $(tail -1 "$WORK/gpu-tests/graph_regime.log")"
  keep gpu-tests
fi

if has probe-gaps; then
  # Where the probe's extra time lies on short kernels (heads, gaps, sums).
  mkdir -p "$WORK/probe-gaps"
  timeout 200 python3 "$ROOT/tests/gpu/probe_gaps.py" "$BIN/libtilebench_timing.so.2" \
    "$WORK/probe-gaps/probe_gaps.json" 2>&1 | tee "$WORK/probe-gaps/probe_gaps.log" | tee -a "$SUMMARY"
  keep probe-gaps
fi

if has cluster-placement; then
  # Issue 21: where the hardware puts a cluster row's blocks (how many
  # multiprocessors, how many blocks share one) under each scheduling policy.
  mkdir -p "$WORK/cluster-placement"
  if [[ -x "$BIN/cluster_placement" ]]; then
    timeout 120 "$BIN/cluster_placement" "$WORK/cluster-placement/placement.jsonl" 2>&1 |
      tee "$WORK/cluster-placement/placement.log" | tee -a "$SUMMARY"
  else
    note "cluster-placement: no binary (scripts/gpu-pack.sh builds it where nvcc is)"
  fi
  keep cluster-placement
fi

if has scope-order; then
  # Issue 18: why an eager batch's GPU control can exceed the host's end-to-end
  # time of the same calls. A launch-bound kernel and torch calls with a host
  # timestamp at every launch, under each condition the device phase differs
  # in; then native cases through tilebench with the probe and graph batches
  # on and off, in the order A B C D D C B A.
  mkdir -p "$WORK/scope-order"
  timeout 120 "$BIN/eager_scope_order" "$WORK/scope-order/native.json" 2>&1 |
    tee "$WORK/scope-order/native.log" | tee -a "$SUMMARY"
  timeout 300 python3 "$ROOT/tests/gpu/eager_scope_order_torch.py" "$BIN/libtilebench_timing.so.2" \
    "$WORK/scope-order/torch.json" 2>&1 | tee "$WORK/scope-order/torch.log" | tee -a "$SUMMARY"
  keep scope-order
  for k in A B C D D C B A; do
    case $k in
      A) flags=(--probe on --batch eager,graph) ;;
      B) flags=(--probe off --batch eager,graph) ;;
      C) flags=(--probe on --batch eager) ;;
      D) flags=(--probe off --batch eager --clock-checks off) ;;
    esac
    n=$(ls -d "$WORK/scope-order/run-$k"* 2>/dev/null | wc -l)
    run=$WORK/scope-order/run-$k$((n + 1))
    timeout 90 "$BIN/tilebench" run --backend cuda --ops add,layernorm --shapes 17x257,64x128 \
      --input-views packed --samples 9 --warmup-ms 20 "${flags[@]}" --quiet --out "$run" > "$run.log" 2>&1
    note "scope-order run $k (${flags[*]}, exit $?): $(grep -E 'cases valid' "$run.log" || tail -1 "$run.log")"
  done
  python3 "$ROOT/tests/gpu/eager_against_host.py" "$WORK"/scope-order/run-*/ | tee -a "$SUMMARY"
  keep scope-order
fi

if has validate && limit=$(allowance validation "${VALIDATE_TIMEOUT_S:-420}" 30 30); then
  # Every op x variant x shape x view, valid against the fp64 oracle.
  # (VALIDATE_OPS and VALIDATE_VARIANTS narrow it to what a change touched)
  timeout "$limit" "$BIN/tilebench" run --backend cuda --shapes "${VALIDATE_SHAPES:-$ALL_SHAPES,$EXTRA_SHAPES}" \
    ${VALIDATE_OPS:+--ops "$VALIDATE_OPS"} \
    --input-views packed,strided --variants "${VALIDATE_VARIANTS:-reference,candidate,automatic}" \
    --samples 3 --warmup-ms 2 --sample-ms 1 --probe off --quiet --out "$WORK/validation" \
    > "$WORK/validation.log" 2>&1
  note "validation: $(grep -E 'cases valid' "$WORK/validation.log" || tail -2 "$WORK/validation.log")"
  grep -E ' NO ' "$WORK/validation.log" | head -20 | tee -a "$SUMMARY"
  cp "$WORK/validation.log" "$WORK/validation/" 2>/dev/null
  keep validation
fi

if has sanitize; then
  # One case of every kernel kind under memcheck and racecheck (probe off:
  # compute-sanitizer is a CUPTI client itself).
  mkdir -p "$WORK/sanitizer"
  SAN=(--backend cuda --probe off --samples 1 --warmup-ms 1 --sample-ms 1 --quiet
       --input-views "${SANITIZE_VIEWS:-strided}")
  for tool in memcheck racecheck; do
    # op shape variant [gemm realization]; SANITIZE_SPECS (';'-separated) replaces the list
    specs=("softmax 37x769 automatic" "rmsnorm 64x258 reference" "layernorm 256x1024 candidate"
           "layernorm 200x40000 automatic" "softmax 8x65536 automatic" "sum 8x65536 automatic"
           "gelu_add 37x769 automatic" "gemm 127x193x61 automatic simt"
           "gemm 127x193x61 automatic tensor" "gemm 127x193x61 automatic tensor-3xtf32"
           "gemm 1999x2999x37 automatic tensor" "gemm 2048x1536x40 automatic tensor"
           "gemm 1999x2999x37 automatic simt" "gemm 1x300x257 automatic simt"
           "gemm 257x1x300 automatic simt" "gemm 1x4096x4096 automatic tensor-3xtf32")
    [[ -n "${SANITIZE_SPECS:-}" ]] && IFS=';' read -r -a specs <<< "$SANITIZE_SPECS"
    for spec in "${specs[@]}"; do
      set -- $spec
      log="$WORK/sanitizer/$tool-$1-$2-$3${4:+-$4}.log"
      timeout 120 compute-sanitizer --tool "$tool" --error-exitcode 9 "$BIN/tilebench" run \
        "${SAN[@]}" --ops "$1" --shapes "$2" --variants "$3" --matrix-realization "${4:-simt}" \
        --out "$WORK/sanitizer/run-$tool-$1-$2-$3${4:+-$4}" > "$log" 2>&1
      status=$?
      note "compute-sanitizer $tool $1 $2 $3 ${4:-}: exit $status ($(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | head -1))"
      # a timed-out sanitizer leaves its tilebench running, holding the GPU's lock: the next
      # spec would be refused (exit 2) as a second campaign on the GPU
      if [[ $status == 124 ]]; then pkill -f "^$BIN/tilebench run" && sleep 2; fi
    done
  done
  keep sanitizer
fi

if has replay; then
  # Issue 7's seed cases: reference vs candidate and reference vs automatic,
  # 4 position-balanced rounds each, audited on the spot.
  mkdir -p "$WORK/replay"
  for pair in candidate automatic; do
    timeout 200 "$BIN/tilebench" replay --backend cuda --variants "reference,$pair" --rounds 4 \
      --ops softmax,rmsnorm,layernorm --shapes 37x769,1024x1024,16384x257,4096x1024 --samples 5 \
      --quiet --out "$WORK/replay/reference-vs-$pair" > "$WORK/replay/reference-vs-$pair.log" 2>&1
    note "replay reference vs $pair: $(grep -E 'cases valid' "$WORK/replay/reference-vs-$pair.log")"
    python3 "$ROOT/tools/audit/tilebench_audit.py" "$WORK/replay/reference-vs-$pair" \
      --receipt "$WORK/replay/reference-vs-$pair/receipt.json" 2>&1 | tee -a "$SUMMARY"
  done
  keep replay
fi

if has torch; then
  # Native vs PyTorch eager on identical inputs, timed by the same library.
  timeout 170 "$BIN/tilebench" run --backend cuda --providers native,torch \
    --shapes 37x769,1024x1024,16384x257,4096x1024 --input-views packed --samples 5 \
    --quiet --out "$WORK/torch" > "$WORK/torch.log" 2>&1
  note "native vs torch: $(grep -E 'cases valid' "$WORK/torch.log" || tail -2 "$WORK/torch.log")"
  python3 "$ROOT/tools/audit/tilebench_audit.py" "$WORK/torch" --receipt "$WORK/torch/receipt.json" 2>&1 | tee -a "$SUMMARY"
  cp "$WORK/torch.log" "$WORK/torch/" 2>/dev/null
  keep torch
fi

if has torch-all; then
  # Issue 6: all six ops over every shape of issue 5, native vs torch eager vs
  # torch.compile, cold on both sides. One run per shape (a run writes its
  # results only when complete), smallest first, none started past the deadline.
  mkdir -p "$WORK/torch-all"
  for shape in ${TORCH_SHAPES:-17x257 37x769 64x4096 1024x1024 4096x1024 16384x257 8x65536 262144x257 8192x32768 32768x8192}; do
    if (( SECONDS > ${TORCH_DEADLINE_S:-470} )); then note "torch-all $shape: not started (deadline)"; continue; fi
    timeout "${TORCH_SHAPE_TIMEOUT_S:-150}" "$BIN/tilebench" run --backend cuda \
      --providers native,torch,torch-compile --shapes "$shape" --input-views packed \
      --samples 5 --warmup-ms 20 --quiet --out "$WORK/torch-all/$shape" > "$WORK/torch-all/$shape.log" 2>&1
    note "torch-all $shape (exit $?, ${SECONDS}s): $(grep -E 'cases valid' "$WORK/torch-all/$shape.log" || tail -1 "$WORK/torch-all/$shape.log")"
    [[ -f "$WORK/torch-all/$shape/results.json" ]] &&
      python3 "$ROOT/tools/audit/tilebench_audit.py" "$WORK/torch-all/$shape" \
        --receipt "$WORK/torch-all/$shape/receipt.json" 2>&1 | tail -1 | tee -a "$SUMMARY"
    keep torch-all
  done
fi

if has batch; then
  # Issue 18: every scope of every case (eager, graph, held; probe on eager and
  # graph), native vs torch vs torch.compile, one run per shape, audited; then
  # torch.compile's graph figures against an independent CUDA-graph replay.
  mkdir -p "$WORK/batch"
  for shape in ${BATCH_SHAPES:-37x769 17x257 64x4096 1024x1024 4096x1024 16384x257 8x65536 32768x8192}; do
    if (( SECONDS > ${BATCH_DEADLINE_S:-380} )); then note "batch $shape: not started (deadline)"; continue; fi
    timeout "${BATCH_SHAPE_TIMEOUT_S:-240}" "$BIN/tilebench" run --backend cuda \
      --providers native,torch,torch-compile --ops softmax,rmsnorm,layernorm,gelu_add --shapes "$shape" \
      --input-views packed --samples 5 --warmup-ms 20 --quiet --out "$WORK/batch/$shape" > "$WORK/batch/$shape.log" 2>&1
    note "batch $shape (exit $?, ${SECONDS}s): $(grep -E 'cases valid' "$WORK/batch/$shape.log" || tail -1 "$WORK/batch/$shape.log")"
    [[ -f "$WORK/batch/$shape/results.json" ]] &&
      python3 "$ROOT/tools/audit/tilebench_audit.py" "$WORK/batch/$shape" \
        --receipt "$WORK/batch/$shape/receipt.json" 2>&1 | tail -1 | tee -a "$SUMMARY"
    keep batch
  done
  # the graph scope's time between kernels per case, and the flags
  python3 "$ROOT/tests/gpu/graph_gaps_summary.py" "$WORK"/batch/*/ > "$WORK/batch/graph_gaps.txt" 2>&1
  grep -E '^graph gaps flagged' "$WORK/batch/graph_gaps.txt" | tee -a "$SUMMARY"
  timeout "${GRAPH_CHECK_TIMEOUT_S:-200}" python3 "$ROOT/tests/gpu/graph_replay_check.py" \
    "$WORK/batch/graph_replay_check.json" "$WORK"/batch/*/ > "$WORK/batch/graph_replay_check.log" 2>&1
  note "independent graph replay of torch.compile: $(tail -1 "$WORK/batch/graph_replay_check.log")"
  grep -E '^(PASS|FAIL)' "$WORK/batch/graph_replay_check.log" | tee -a "$SUMMARY"
  keep batch
fi

if has user-kernels && [[ ! -f "$ROOT/.device/user-kernels/libsoftmax_cuda.so" ]]; then
  note "user-kernels: no .device/user-kernels (scripts/gpu-pack.sh builds them where nvcc is); skipped"
elif has user-kernels; then
  # Issue 19 on the GPU: the CUDA example (examples/user-kernel-cuda, built
  # here by scripts/gpu-pack.sh) beside native, torch and torch.compile on both
  # views, audited; the same softmax as CUDA source through NVRTC
  # (examples/user-kernel-nvrtc); the Python callable (user-python, and its
  # Triton twin where Triton imports); then one broken kernel per GPU-only class
  # (tests/user_kernels/cuda), each invalid by the defence launches_on_stream.
  mkdir -p "$WORK/user-kernels"
  UK=$ROOT/.device/user-kernels
  VERDICTS=$ROOT/tests/gpu/user_kernel_verdicts.py
  # USER_KERNELS_PARTS picks the parts (default all); the bundle is rewritten
  # after each run, so a call that runs out of time keeps what finished
  uk_part() { [[ " ${USER_KERNELS_PARTS:-example nvrtc python broken} " == *" $1 "* ]]; }
  uk_bundle() { cp "$UK"/*.so "$WORK/user-kernels/"; keep user-kernels; }
  # after a run expected valid: its lines, the audit, the verdicts, the bundle
  uk_valid() { # RUN LABEL EXIT
    note "user-kernels $2 (exit $3, ${SECONDS}s): $(grep -E 'cases valid' "$1.log" || tail -1 "$1.log")"
    grep -E '^softmax' "$1.log" | tee -a "$SUMMARY"
    [[ -f "$1/results.json" ]] &&
      python3 "$ROOT/tools/audit/tilebench_audit.py" "$1" --receipt "$1/receipt.json" 2>&1 | tail -1 | tee -a "$SUMMARY"
    python3 "$VERDICTS" valid "$1" | tee -a "$SUMMARY"
    uk_bundle
  }
  # one run per shape (a run writes its results only when complete), smallest first
  start=$SECONDS
  uk_part example && for shape in ${USER_KERNEL_SHAPES:-17x257 4096x1024 32768x8192}; do
    if (( SECONDS - start > ${USER_KERNELS_DEADLINE_S:-100} )); then note "user-kernels example $shape: not started (deadline)"; continue; fi
    run=$WORK/user-kernels/example-$shape
    timeout "${USER_KERNELS_SHAPE_TIMEOUT_S:-120}" "$BIN/tilebench" run --backend cuda --ops softmax \
      --shapes "$shape" --input-views packed,strided --providers native,torch,torch-compile,user \
      --kernel "$UK/libsoftmax_cuda.so" --samples 5 --warmup-ms 20 --quiet --out "$run" > "$run.log" 2>&1
    uk_valid "$run" "example $shape" $?
  done
  # The CUDA source path: examples/user-kernel-nvrtc/softmax.cu compiled by
  # NVRTC on this GPU and launched as --launch says, the same checks.
  run=$WORK/user-kernels/nvrtc-4096x1024
  if uk_part nvrtc; then
    timeout "${USER_KERNELS_SHAPE_TIMEOUT_S:-120}" "$BIN/tilebench" run --backend cuda --ops softmax \
      --shapes 17x257,4096x1024 --input-views packed,strided --providers native,torch,torch-compile,user \
      --kernel "$ROOT/examples/user-kernel-nvrtc/softmax.cu" --launch 'grid=m,block=256,smem=0' \
      --samples 5 --warmup-ms 20 --quiet --out "$run" > "$run.log" 2>&1
    uk_valid "$run" "nvrtc example" $?
  fi
  # The Python callable (user-python): examples/user-kernel-python/softmax.py in
  # the torch worker beside native, torch and torch.compile on both views, the
  # same checks; then its Triton twin where this machine's PyTorch has Triton.
  pythons=""
  uk_part python && pythons="softmax.py:softmax"
  uk_part python && python3 -c "import triton" > /dev/null 2>&1 && pythons="$pythons softmax_triton.py:softmax"
  for callable in $pythons; do
    run=$WORK/user-kernels/python-${callable%%.py:*}
    timeout "${USER_KERNELS_SHAPE_TIMEOUT_S:-120}" "$BIN/tilebench" run --backend cuda --ops softmax \
      --shapes 17x257,4096x1024 --input-views packed,strided \
      --providers native,torch,torch-compile,user-python \
      --kernel "$ROOT/examples/user-kernel-python/$callable" \
      --samples 5 --warmup-ms 20 --quiet --out "$run" > "$run.log" 2>&1
    uk_valid "$run" "python $callable" $?
  done
  # kernel and the words its launches_on_stream detail must contain
  uk_part broken && for broken in "side_stream:on a stream other than the provider's" "no_kernel:saw no kernel"; do
    kernel=${broken%%:*}
    timeout 60 "$BIN/tilebench" run --backend cuda --ops softmax --shapes 37x769,1024x1024 \
      --input-views packed --providers native,user --kernel "$UK/lib$kernel.so" --samples 3 \
      --warmup-ms 5 --quiet --out "$WORK/user-kernels/$kernel" > "$WORK/user-kernels/$kernel.log" 2>&1
    note "user-kernels $kernel (exit $?, expected 1, ${SECONDS}s): $(grep -E 'cases valid' "$WORK/user-kernels/$kernel.log" || tail -1 "$WORK/user-kernels/$kernel.log")"
    [[ -f "$WORK/user-kernels/$kernel/results.json" ]] &&
      python3 "$ROOT/tools/audit/tilebench_audit.py" "$WORK/user-kernels/$kernel" 2>&1 | tail -1 | tee -a "$SUMMARY"
    python3 "$VERDICTS" caught "$WORK/user-kernels/$kernel" "${broken#*:}" | tee -a "$SUMMARY"
  done
  uk_bundle # with the libraries the digests in the results name
fi

if has devices; then
  # Issue 22 on this machine's one GPU: `--devices 0` (a shard process under
  # CUDA_VISIBLE_DEVICES, merged in place), audited; while it holds the GPU a
  # second campaign asking for the same GPU must be refused (exit 2) naming it.
  mkdir -p "$WORK/devices"
  timeout 240 "$BIN/tilebench" run --backend cuda --devices 0 --ops softmax,rmsnorm,layernorm \
    --shapes 17x257,4096x1024,32768x8192 --providers native --samples 5 --warmup-ms 20 \
    --out "$WORK/devices/run" > "$WORK/devices/run.log" 2>&1 &
  first=$!
  # the shard holds the lock from before it claims its folder
  held=no
  for _ in $(seq 100); do [[ -d "$WORK/devices/run/shards/0" ]] && held=yes && break; sleep 0.1; done
  timeout 60 "$BIN/tilebench" run --backend cuda --ops sum --shapes 17x257 --providers native \
    --samples 1 --out "$WORK/devices/second" > "$WORK/devices/second.log" 2>&1
  rc=$?
  verdict=FAIL
  [[ $held == yes && $rc == 2 ]] && grep -q 'being timed by another tilebench campaign' \
    "$WORK/devices/second.log" && verdict=PASS
  note "$verdict devices: a second campaign while --devices 0 held the GPU (shard folder seen: $held): exit $rc, expected 2 and the holder named: $(tail -1 "$WORK/devices/second.log")"
  wait "$first"
  note "devices: --devices 0 (exit $?): $(grep -E 'cases valid' "$WORK/devices/run.log" || tail -1 "$WORK/devices/run.log")"
  if [[ -f "$WORK/devices/run/results.json" ]]; then
    python3 "$ROOT/tools/audit/tilebench_audit.py" "$WORK/devices/run" \
      --receipt "$WORK/devices/run/receipt.json" > "$WORK/devices/audit.log" 2>&1
    note "devices: audit of the merged run (exit $?): $(tail -1 "$WORK/devices/audit.log")"
  else
    note "FAIL devices: --devices 0 left no merged results.json"
  fi
  keep devices
fi

if has regret; then
  # Issue 21's planner regret: per shape and op, the automatic plan beside every
  # register-rows candidate the planner lists for it (`tilebench plan --json`,
  # the rejected left out) and REGRET_EXTRA (off-list pairs), native alone, one
  # run per shape and op, timed by graph replays (host-gap-free, as the issue
  # asks); then tests/gpu/planner_regret.py over them all.
  mkdir -p "$WORK/regret"
  for shape in ${REGRET_SHAPES:-4096x1024 16384x257}; do
    for op in ${REGRET_OPS:-softmax rmsnorm layernorm}; do
      if (( SECONDS > ${REGRET_DEADLINE_S:-480} )); then note "regret $op $shape: not started (deadline)"; continue; fi
      fixed=$("$BIN/tilebench" plan --op "$op" --shape "$shape" --json | python3 -c '
import json, sys
names = {(1, 8): "reference", (2, 4): "candidate"}
plan = json.load(sys.stdin)
print(",".join(names.get((c["subgroups"], c["packing"]), "s%dp%d" % (c["subgroups"], c["packing"]))
               for c in plan["candidates"] if not c["rejected"]))')
      run=$WORK/regret/$op-$shape
      timeout "${REGRET_RUN_TIMEOUT_S:-200}" "$BIN/tilebench" run --backend cuda --providers native \
        --ops "$op" --shapes "$shape" --input-views packed --samples 5 --warmup-ms 10 --batch graph \
        --variants "automatic,$fixed${REGRET_EXTRA:+,$REGRET_EXTRA}" --probe off --quiet --out "$run" > "$run.log" 2>&1
      note "regret $op $shape (exit $?, ${SECONDS}s): $(grep -E 'cases valid' "$run.log" || tail -1 "$run.log")"
    done
  done
  python3 "$ROOT/tests/gpu/planner_regret.py" --json "$WORK/regret/regret.json" "$WORK"/regret/*/ \
    2>&1 | tee "$WORK/regret/regret.log" | tail -n 40 | tee -a "$SUMMARY"
  keep regret
fi

if has gemm; then
  # Issue 8: native SIMT and tensor-core gemm against cuBLAS and torch.matmul,
  # every realization (TF32 matched on all three providers), oracle-validated.
  # GEMM_PARTS picks among: matrix (GEMM_SHAPES, packed), strided (odd shapes),
  # gemv (matrix-vector plans, always against cuBLAS, and the tiled plan before
  # them); GEMM_PROVIDERS the providers of matrix and strided.
  mkdir -p "$WORK/gemm"
  parts=${GEMM_PARTS:-matrix strided gemv} providers=${GEMM_PROVIDERS:-native,cublas,torch}
  parts=" ${parts//,/ } "
  for part in $parts; do
    [[ " matrix strided gemv " == *" $part "* ]] || note "gemm: part '$part' unknown (matrix, strided, gemv)"
  done
  if [[ $parts == *" matrix "* ]]; then
    timeout "${GEMM_TIMEOUT_S:-300}" "$BIN/tilebench" run --backend cuda --ops gemm \
      --shapes "${GEMM_SHAPES:-32x32x32,128x128x128,127x193x61,1024x1024x1024,1999x2999x37,2048x1536x512,4096x4096x4096}" \
      --matrix-realization simt,tensor,tensor-3xtf32 --providers "$providers" \
      --input-views "${GEMM_VIEWS:-packed}" --samples 5 --warmup-ms 20 --quiet --out "$WORK/gemm/run" \
      > "$WORK/gemm/run.log" 2>&1
    note "gemm (exit $?): $(grep -E 'cases valid' "$WORK/gemm/run.log" || tail -2 "$WORK/gemm/run.log")"
    grep -E '^gemm' "$WORK/gemm/run.log" | tee -a "$SUMMARY"
  fi
  if [[ $parts == *" strided "* ]]; then
    # Strided views (leading dimensions k+3 and n+3, offset 1: unaligned) on odd shapes.
    timeout 150 "$BIN/tilebench" run --backend cuda --ops gemm \
      --shapes "${GEMM_STRIDED_SHAPES:-1x1x1,3x5x7,32x32x32,127x193x61,1000x1000x1000,1999x2999x37}" \
      --input-views strided --matrix-realization simt,tensor,tensor-3xtf32 --providers "$providers" \
      --samples 3 --warmup-ms 5 --quiet --out "$WORK/gemm/strided" > "$WORK/gemm/strided.log" 2>&1
    note "gemm strided (exit $?): $(grep -E 'cases valid' "$WORK/gemm/strided.log" || tail -2 "$WORK/gemm/strided.log")"
  fi
  if [[ $parts == *" gemv "* ]]; then
    # Matrix-vector plans (m = 1 or n = 1; docs/gemm.md), k split and whole,
    # both views, against cuBLAS; and 1x4096x4096 on the tiled kernel the rule
    # planned before (32x32x32, as a user block) for the A/B of the change.
    timeout 150 "$BIN/tilebench" run --backend cuda --ops gemm \
      --shapes "${GEMV_SHAPES:-1x4096x4096,4096x1x4096,1x300x257,257x1x300,1x1x64,1x1x4096}" \
      --input-views packed,strided --matrix-realization simt,tensor-3xtf32 --providers native,cublas \
      --samples 5 --warmup-ms 20 --quiet --out "$WORK/gemm/gemv" > "$WORK/gemm/gemv.log" 2>&1
    note "gemm matrix-vector (exit $?): $(grep -E 'cases valid' "$WORK/gemm/gemv.log" || tail -2 "$WORK/gemm/gemv.log")"
    grep -E '^gemm' "$WORK/gemm/gemv.log" | tee -a "$SUMMARY"
    timeout 60 "$BIN/tilebench" run --backend cuda --ops gemm --shapes 1x4096x4096 \
      --matrix-realization simt --gemm-block 32,32,32 --providers native --input-views packed \
      --samples 5 --warmup-ms 20 --quiet --out "$WORK/gemm/gemv-tiled" > "$WORK/gemm/gemv-tiled.log" 2>&1
    note "gemm 1x4096x4096 tiled 32,32,32: $(grep -E '^gemm' "$WORK/gemm/gemv-tiled.log" || tail -1 "$WORK/gemm/gemv-tiled.log")"
  fi
  for run in "$WORK"/gemm/*/; do
    [[ -f "$run/results.json" ]] &&
      python3 "$ROOT/tools/audit/tilebench_audit.py" "$run" --receipt "$run/receipt.json" 2>&1 |
      tail -1 | tee -a "$SUMMARY"
  done
  keep gemm
fi

if has gemm-blocks; then
  # The gemm tile rules' evidence (docs/gemm.md): every GEMM_BLOCKS entry, REALIZATION:BLOCK
  # (BLOCK as --gemm-block takes it, or "rule" for the rule's own pick), on GEMM_BLOCK_SHAPES,
  # native only, one run each, audited.
  mkdir -p "$WORK/gemm-blocks"
  for entry in ${GEMM_BLOCKS:-simt:rule simt:128,128,32 simt:128,256,16 simt:128,128,16 simt:128,64,32}; do
    if [[ $entry != *:* ]]; then
      note "gemm-blocks: entry '$entry' skipped: write REALIZATION:BLOCK (e.g. simt:128,128,32)"
      continue
    fi
    real=${entry%%:*} block=${entry#*:} opt=()
    [[ $block != rule ]] && opt=(--gemm-block "$block")
    run=$WORK/gemm-blocks/$real-$block
    timeout 100 "$BIN/tilebench" run --backend cuda --ops gemm \
      --shapes "${GEMM_BLOCK_SHAPES:-4096x4096x4096}" --matrix-realization "$real" "${opt[@]}" \
      --providers native --input-views packed --samples 5 --warmup-ms 20 --quiet --out "$run" \
      > "$run.log" 2>&1
    note "gemm $real block $block (exit $?):"
    grep -E '^gemm' "$run.log" | tee -a "$SUMMARY"
    [[ -f "$run/results.json" ]] &&
      python3 "$ROOT/tools/audit/tilebench_audit.py" "$run" 2>&1 | tail -1 | tee -a "$SUMMARY"
  done
  keep gemm-blocks
fi

if has gemm-tiles; then
  # The simt tile rule's evidence (docs/gemm.md): 128x256x32 against 128x128x32
  # and the rule's own choice on shapes whose waves fill differently, twice.
  mkdir -p "$WORK/gemm-tiles"
  shapes=${GEMM_TILE_SHAPES:-1999x2999x37,2048x1536x512,2048x2048x2048,3072x3072x3072,4096x4096x1024,8192x8192x512,4096x4096x4096}
  for rep in 1 2; do
    for tile in 128x256x32 128x128x32 rule; do
      block=(); [[ $tile != rule ]] && block=(--gemm-block "${tile//x/,}")
      timeout 100 "$BIN/tilebench" run --backend cuda --ops gemm --shapes "$shapes" \
        --matrix-realization simt "${block[@]}" --providers native --input-views packed \
        --samples 5 --warmup-ms 20 --quiet --out "$WORK/gemm-tiles/$rep-$tile" > "$WORK/gemm-tiles/$rep-$tile.log" 2>&1
      note "gemm simt $tile (round $rep):"
      grep -E '^gemm.*fp32' "$WORK/gemm-tiles/$rep-$tile.log" | tee -a "$SUMMARY"
      python3 "$ROOT/tools/audit/tilebench_audit.py" "$WORK/gemm-tiles/$rep-$tile" 2>&1 | tail -1 | tee -a "$SUMMARY"
    done
  done
  keep gemm-tiles
fi

if has ab && [[ ! -x "$ROOT/.device/builds/1/tilebench" ]]; then
  note "ab: no baseline build (pack with BASELINE=<commit> scripts/gpu-pack.sh); skipped"
elif has ab; then
  # Before and after changes, in one call: the builds of BASELINE (scripts/gpu-pack.sh), a
  # chain of commits, and this tree's build last, labelled A, B, ... in that order. Each runs
  # AB_ARGS twice, in the order A1 B1 ... B2 A2 (each build's runs balanced around the
  # middle), and `tilebench compare` pairs each build with the one after it, both rounds
  # (--allow-different: the builds differ by design; compare prints how). AB_ARGS comes after
  # the stage's defaults (packed views, the automatic variant, 9 samples), so it overrides them.
  mkdir -p "$WORK/ab"
  programs=() commits=()
  for folder in "$ROOT"/.device/builds/*/; do programs+=("$folder/tilebench") commits+=("$folder/commit"); done
  programs+=("$BIN/tilebench") commits+=("$ROOT/.device/commit")
  letters=ABCDEFGHIJ last=$(( ${#programs[@]} - 1 ))
  order=()  # build index and round: 0 1, 1 1, ..., last 1, last 2, ..., 0 2
  for (( k = 0; k <= last; k++ )); do order+=("$k 1"); done
  for (( k = last; k >= 0; k-- )); do order+=("$k 2"); done
  for k in $(seq 0 "$last"); do cp "${commits[k]}" "$WORK/ab/${letters:k:1}-commit"; done
  for entry in "${order[@]}"; do
    read -r k round <<< "$entry"
    run=${letters:k:1}$round
    limit=$(allowance "ab $run" 200 30 20) || continue
    # each build with its own timing library ahead of this tree's on the search path
    LD_LIBRARY_PATH="$(dirname "${programs[k]}"):$LD_LIBRARY_PATH" timeout "$limit" "${programs[k]}" \
      run --backend cuda --input-views packed --variants automatic --samples 9 --quiet \
      ${AB_ARGS:---ops layernorm --shapes 8192x32768} --out "$WORK/ab/$run" \
      > "$WORK/ab/$run.log" 2>&1
    note "ab $run ($(cut -c1-7 "${commits[k]}")): $(grep -E 'cases valid' "$WORK/ab/$run.log" || tail -1 "$WORK/ab/$run.log")"
    grep -E '^(sum|softmax|rmsnorm|layernorm|add|gelu_add|gemm)' "$WORK/ab/$run.log" | tee -a "$SUMMARY"
    keep ab
  done
  for (( k = 0; k < last; k++ )); do
    for round in 1 2; do
      before=${letters:k:1}$round after=${letters:k+1:1}$round
      [[ -f "$WORK/ab/$before/results.json" && -f "$WORK/ab/$after/results.json" ]] ||
        { note "ab: $before or $after wrote no results; not compared"; continue; }
      "$BIN/tilebench" compare --allow-different --across-plans "$WORK/ab/$before" "$WORK/ab/$after" 2>&1 |
        tee "$WORK/ab/compare-$before-$after.txt" | tee -a "$SUMMARY"
    done
  done
  keep ab
fi

if has cupti-variants; then
  # Issue 4: does another CUPTI 13 build keep the device memory a finalize
  # loses? Every libcupti.so.13 on the machine, CUPTI's lifecycle alone with each.
  mkdir -p "$WORK/cupti-variants"
  find / -xdev -name 'libcupti.so.13*' -type f 2>/dev/null | sort > "$WORK/cupti-variants/found.txt"
  i=0
  while read -r lib; do
    i=$((i + 1)); dir=$WORK/cupti-variants/$i; mkdir -p "$dir/lib"
    echo "$lib" > "$dir/path"; sha256sum "$lib" > "$dir/sha256"
    ln -s "$lib" "$dir/lib/libcupti.so.13"
    LD_LIBRARY_PATH=$dir/lib:$LD_LIBRARY_PATH timeout 120 "$BIN/cupti_lifecycle_memory" \
      "$dir/cupti_lifecycle.json" > "$dir/cupti_lifecycle.log" 2>&1
    note "CUPTI $i: $lib ($(cut -c1-12 "$dir/sha256"))"
    grep INFO "$dir/cupti_lifecycle.log" | tee -a "$SUMMARY"
    rm -rf "$dir/lib"
  done < "$WORK/cupti-variants/found.txt"
  keep cupti-variants
fi

if has ncu; then
  # Why a kernel runs at the speed it does: Nsight Compute (a CUPTI client, so
  # the probe is off) on the first launch of each NCU_CASES entry, one
  # `tilebench run` argument list per line; every section's details (the warp
  # state section's stall reasons among them). NCU_KERNEL (an ncu kernel
  # filter, "regex:..." allowed), NCU_LAUNCHES and NCU_SECTIONS (space-separated)
  # widen it, for example to a vendor library's kernels; NCU_SOURCE=1 adds each
  # SASS instruction's counters (the source page, as CSV). The launch count is
  # ncu's over the whole process tree: a case with providers native and
  # torch-compile spends it on native's kernels first (tilebench runs them
  # first), so profile torch.compile's kernels on a line of their own.
  mkdir -p "$WORK/ncu"
  ncu=$(ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | tail -1)
  sections=()
  for section in ${NCU_SECTIONS:-SpeedOfLight ComputeWorkloadAnalysis MemoryWorkloadAnalysis \
      Occupancy LaunchStats SchedulerStats WarpStateStats InstructionStats}; do
    sections+=(--section "$section")
  done
  i=0
  while read -r args; do
    [[ -z "$args" ]] && continue
    i=$((i + 1))
    echo "$args" > "$WORK/ncu/$i.args"
    # NCU_SOURCE: each SASS instruction's executions and stall samples too; the
    # report is kept, and its details page and source page (SASS, one CSV row an
    # instruction) are printed from it
    output=(--print-details all) log=$WORK/ncu/$i.txt
    [[ -n "${NCU_SOURCE:-}" ]] && output=(--section SourceCounters -o "$WORK/ncu/$i") log=$WORK/ncu/$i.log
    timeout 150 "$ncu" --kernel-name "${NCU_KERNEL:-tb_main}" --launch-count "${NCU_LAUNCHES:-1}" \
      "${sections[@]}" "${output[@]}" "$BIN/tilebench" run --backend cuda --probe off --samples 1 \
      --warmup-ms 1 --sample-ms 1 --quiet --out "$WORK/ncu/run-$i" $args > "$log" 2>&1
    note "ncu $i ($args): exit $?"
    if [[ -n "${NCU_SOURCE:-}" ]]; then
      "$ncu" --import "$WORK/ncu/$i.ncu-rep" --print-details all > "$WORK/ncu/$i.txt" 2>&1
      "$ncu" --import "$WORK/ncu/$i.ncu-rep" --page source --print-source sass --csv \
        > "$WORK/ncu/$i-sass.csv" 2>&1
      note "ncu $i source page: exit $? ($(wc -l < "$WORK/ncu/$i-sass.csv") lines)"
    fi
    grep -E "\([0-9]+, [0-9]+, [0-9]+\)x\(|Duration|Compute \(SM\) Throughput|Memory Throughput|Registers Per|Achieved Occupancy|Issue Slots Busy|No Eligible|Warp Cycles Per Issued|Stall" \
      "$WORK/ncu/$i.txt" | cut -c1-160 | head -$((20 * ${NCU_LAUNCHES:-1})) | tee -a "$SUMMARY"
  done <<< "${NCU_CASES:-}"
  keep ncu
fi

if has floor; then
  # The streaming floor at a reduction's own size: `add` moving the same bytes
  # as sum (16.9 MB, 2.1 MB) and the row-output ops (33.6 MB, 4.2 MB) at
  # 16384x257 and 8x65536, cold, in the same call as the reductions it explains.
  timeout 120 "$BIN/tilebench" run --backend cuda --ops add \
    --shapes 16384x86,16384x171,8x21845,8x43691 --input-views packed --samples 9 \
    --quiet --out "$WORK/floor" > "$WORK/floor.log" 2>&1
  cp "$WORK/floor.log" "$WORK/floor/" 2>/dev/null
  keep floor
  note "streaming floor (add at the bytes of the short and few-row reductions):"
  grep -E '^add' "$WORK/floor.log" | tee -a "$SUMMARY"
fi

if has replay-dumps; then
  # Issue 18: why one capture of a torch.compile function replays at its kernels' time and
  # another ~0.3-0.4 us a kernel above it. The worker's graphs and the independent check's
  # (kept, dropped, prefilled, TB_CHECK_RECAPTURES more) written as Graphviz text, their nodes
  # summarised by tests/gpu/graph_dot_summary.py; then the check's usual table. Both sides also
  # write each graph's output addresses (<dot name>-addresses.json: distinct blocks, their bytes,
  # how far apart one block is rewritten), set side by side in the summary; the check's kept
  # graphs are also timed behind tilebench's hold (TB_CHECK_TIMING_LIB), to tell the timing
  # method from the graphs.
  RD=$WORK/replay-dumps
  # CHECK OUT.json RESULTS_DIR LOG: the check (settings from the environment), its stdin closed
  rd_check() { timeout 300 python3 "$ROOT/tests/gpu/graph_replay_check.py" "$1" "$2" < /dev/null > "$3" 2>&1; }
  # LOG: the check's verdict lines, without their address clause, to the summary
  rd_verdicts() { grep -E '^(probe |ballast|PASS|FAIL)' "$1" | sed 's/; outputs a graph.*//' | tee -a "$SUMMARY"; }
  # RUN_DIR [ARGS...]: tilebench on the stage's torch-compile cases
  rd_run() {
    local dir=$1; shift
    timeout 240 "$BIN/tilebench" run --backend cuda --providers torch-compile \
      --ops "${REPLAY_DUMP_OPS:-softmax,layernorm}" --shapes "${REPLAY_DUMP_SHAPES:-1024x1024,8x65536}" \
      --input-views packed --samples 5 --warmup-ms 20 --quiet --out "$dir" "$@" > "$dir.log" 2>&1
    note "replay-dumps $(basename "$dir") (exit $?): $(grep -E 'cases valid' "$dir.log" || tail -1 "$dir.log")"
  }
  mkdir -p "$RD/dots/worker" "$RD/dots/check"
  TILEBENCH_TORCH_GRAPH_DUMP=$RD/dots/worker rd_run "$RD/run"
  TB_CHECK_GRAPH_DUMP=$RD/dots/check TB_CHECK_RECAPTURES=${REPLAY_DUMP_RECAPTURES:-4} \
    TB_CHECK_TIMING_LIB=$BIN/libtilebench_timing.so.2 rd_check "$RD/check.json" "$RD/run/" "$RD/check.log"
  grep -E '^(PASS|FAIL)' "$RD/check.log" | tee -a "$SUMMARY"
  # the same check with CUPTI set up, as the worker's probe sets it up in its process: once
  # first (1), or also before each graph mode's capture or its timed replays (capture, replay;
  # REPLAY_DUMP_PROBE_CHECKS, commas; empty or 0: none)
  probe_checks=${REPLAY_DUMP_PROBE_CHECKS-1}
  for when in ${probe_checks//,/ }; do
    [[ $when == 0 ]] && continue
    [[ $when == 1 ]] && name=check-probe-first || name=check-probe-$when
    TB_CHECK_TIMING_LIB=$BIN/libtilebench_timing.so.2 TB_CHECK_PROBE_FIRST=$when \
      rd_check "$RD/$name.json" "$RD/run/" "$RD/$name.log"
    note "replay-dumps check, probe sessions $when (exit $?):"
    rd_verdicts "$RD/$name.log"
  done
  # REPLAY_DUMP_PROBE_OFF=1: tilebench again with no probe in its process (--probe off), and the
  # usual check of that run: does tilebench's graph figure follow its own probe?
  if [[ ${REPLAY_DUMP_PROBE_OFF:-0} == 1 ]]; then
    rd_run "$RD/run-probe-off" --probe off
    rd_check "$RD/check-probe-off.json" "$RD/run-probe-off/" "$RD/check-probe-off.log"
    note "replay-dumps check of the --probe off run (exit $?):"
    rd_verdicts "$RD/check-probe-off.log"
  fi
  # REPLAY_DUMP_CASE_PROCESSES=1: each case checked alone in a process of its own (no dumps, no
  # timing library): is a case's figure its own, or what the check's process did before it?
  # REPLAY_DUMP_CASE_BALLAST_GIB=N: then again, each process first holding N GiB it never uses.
  if [[ ${REPLAY_DUMP_CASE_PROCESSES:-0} == 1 ]]; then
    mkdir -p "$RD/case-processes"
    python3 -c 'import json,sys; [print(c["id"]) for c in json.load(open(sys.argv[1]))["cases"] if c.get("provider") == "torch-compile"]' \
      "$RD/run/results.json" > "$RD/case-processes/ids.txt"
    for ballast in 0 ${REPLAY_DUMP_CASE_BALLAST_GIB:-}; do
      prefix=; [[ $ballast != 0 ]] && prefix=ballast-
      note "replay-dumps check, each case in a process of its own$([[ $ballast != 0 ]] && echo " holding $ballast GiB") ($(wc -l < "$RD/case-processes/ids.txt") torch-compile cases in run/):"
      i=0
      while read -r id; do
        i=$((i + 1))
        TB_CHECK_CASES=$id TB_CHECK_BALLAST_GIB=$ballast \
          rd_check "$RD/case-processes/$prefix$i.json" "$RD/run/" "$RD/case-processes/$prefix$i.log"
        rd_verdicts "$RD/case-processes/$prefix$i.log"
      done < "$RD/case-processes/ids.txt"
    done
  fi
  # the per-case comparisons and address facts (not the per-file listing) to the summary
  python3 "$ROOT/tests/gpu/graph_dot_summary.py" "$WORK/replay-dumps/dots" 2>&1 |
    tee "$WORK/replay-dumps/dots/summary.txt" |
    grep -E '^([a-z_]+-[0-9]+x[0-9]+[: ]|  (worker graph|check) |no \*-addresses|graph_dot_summary)' |
    tee -a "$SUMMARY"
  keep replay-dumps
fi

if has stopping; then
  # Issue 20 on the GPU: the noise rule (--max-noise) with the per-sample clock
  # checks (docs/method.md §2.6, §2.7), native and torch, audited; then each
  # case's stopping decision and its SM clock reads, summarised.
  mkdir -p "$WORK/stopping"
  run=$WORK/stopping/run
  timeout "${STOPPING_TIMEOUT_S:-200}" "$BIN/tilebench" run --backend cuda --ops softmax,rmsnorm \
    --shapes "${STOPPING_SHAPES:-17x257,4096x1024,32768x8192}" --input-views packed \
    --providers native,torch-compile --max-noise 0.02 --min-samples 5 --max-samples 40 \
    --timeout 5 --warmup-ms 20 --quiet --out "$run" > "$run.log" 2>&1
  note "stopping run (exit $?, ${SECONDS}s): $(grep -E 'cases valid' "$run.log" || tail -1 "$run.log")"
  [[ -f "$run/results.json" ]] &&
    python3 "$ROOT/tools/audit/tilebench_audit.py" "$run" --receipt "$run/receipt.json" 2>&1 | tail -1 | tee -a "$SUMMARY"
  python3 "$ROOT/tests/gpu/clock_checks_summary.py" "$run" | tee "$WORK/stopping/clock_checks.txt" | tee -a "$SUMMARY"
  # Do the per-sample NVML reads slow the host's launches? Host-bound native
  # cases with the checks on and off, alternating (on, off, on, off).
  for k in on-1 off-1 on-2 off-2; do
    timeout 60 "$BIN/tilebench" run --backend cuda --ops softmax,layernorm --shapes 17x257,37x769 \
      --input-views packed --samples 9 --warmup-ms 20 --clock-checks "${k%-*}" --quiet \
      --out "$WORK/stopping/clock-checks-$k" > "$WORK/stopping/clock-checks-$k.log" 2>&1
    note "clock-checks $k (exit $?): $(grep -E 'cases valid' "$WORK/stopping/clock-checks-$k.log" || tail -1 "$WORK/stopping/clock-checks-$k.log")"
  done
  python3 "$ROOT/tests/gpu/eager_against_host.py" "$WORK"/stopping/clock-checks-*/ | tee -a "$SUMMARY"
  keep stopping
fi

if has targets; then
  # Issue 21's targets (tests/gpu/kernel_targets.py), each ratio's two sides in one run, every
  # run graph replays (host-gap-free), probe off. TARGETS_PARTS picks among, and runs in this
  # order: one-row (a row of 10^6 beside add moving the same bytes: 4, 8, 12 and 16 MB),
  # short-rows (native, torch and torch.compile at n <= 32), compile (native and
  # torch.compile over the evidence matrix, or TARGETS_COMPILE_SHAPES, a run a shape),
  # long-rows (copy-ceiling fractions), gemm (native and cuBLAS). All of them take more than
  # one call: compile in one (8 of its 10 shapes in 543 s on an H100), the others in another.
  # A run starts only with 30 s of the call left beyond the 40 s kept for the scoreboard, over
  # every run here and any regret runs of this call.
  mkdir -p "$WORK/targets"
  parts=" ${TARGETS_PARTS:-one-row short-rows compile long-rows gemm} "
  for part in $parts; do
    [[ " one-row short-rows compile long-rows gemm " == *" $part "* ]] ||
      note "targets: part '$part' unknown (one-row, short-rows, compile, long-rows, gemm; spaces between)"
  done
  targets_run() {  # NAME, then tilebench run's arguments
    local name=$1 limit; shift
    limit=$(allowance "targets $name" "${TARGETS_RUN_TIMEOUT_S:-200}" 40 30) || return
    timeout "$limit" "$BIN/tilebench" run --backend cuda --batch graph \
      --probe off --input-views packed --samples 5 --warmup-ms 10 --quiet \
      --out "$WORK/targets/$name" "$@" > "$WORK/targets/$name.log" 2>&1
    note "targets $name (exit $?, ${SECONDS}s): $(grep -E 'cases valid' "$WORK/targets/$name.log" || tail -1 "$WORK/targets/$name.log")"
    keep targets
  }
  if [[ $parts == *" one-row "* ]]; then
    targets_run one-row --ops sum,softmax,rmsnorm,layernorm,add \
      --shapes 1x1000000,1x333334,1x666667,1x1333334
  fi
  if [[ $parts == *" short-rows "* ]]; then
    targets_run short-rows --ops sum,softmax,rmsnorm,layernorm --shapes 65536x17,65536x32 \
      --providers native,torch,torch-compile
  fi
  if [[ $parts == *" compile "* ]]; then
    compile_shapes=${TARGETS_COMPILE_SHAPES:-$ALL_SHAPES}  # a call rarely reaches all ten
    for shape in ${compile_shapes//,/ }; do
      targets_run "compile-$shape" --ops sum,softmax,rmsnorm,layernorm,add,gelu_add \
        --shapes "$shape" --providers native,torch-compile
    done
  fi
  if [[ $parts == *" long-rows "* ]]; then
    targets_run long-rows --ops sum,softmax,rmsnorm,layernorm --shapes 16x4194304,4096x393216
  fi
  if [[ $parts == *" gemm "* ]]; then
    targets_run gemm --ops gemm --matrix-realization simt,tensor --providers native,cublas \
      --shapes 1x4096x4096,4096x1x4096,4096x4096x13,32x32x32,128x128x128,127x193x61,1024x1024x1024,1999x2999x37,2048x1536x512,4096x4096x4096,8192x8192x8192
  fi
  runs=()  # the runs that wrote results: one that failed or timed out before it did is left out
  for run in "$WORK"/targets/*/ "$WORK"/regret/*/; do
    [[ -f "$run/results.json" ]] && runs+=("$run")
  done
  if (( ${#runs[@]} == 0 )); then
    note "issue 21 targets: no run wrote results"
  else
    python3 "$ROOT/tests/gpu/kernel_targets.py" --json "$WORK/targets/targets.json" "${runs[@]}" \
      > "$WORK/targets/targets.md" 2>&1
    note "issue 21 targets (exit $?):"
    tail -n 8 "$WORK/targets/targets.md" | tee -a "$SUMMARY"
  fi
  keep targets
fi
if has perf && limit=$(allowance perf 600 20 30); then
  # Performance evidence: cold throughput, full samples, every op, in what is left of the call
  timeout "$limit" "$BIN/tilebench" run --backend cuda \
    --shapes "$ALL_SHAPES" --input-views packed \
    --variants automatic --samples 9 --quiet --out "$WORK/perf" > "$WORK/perf.log" 2>&1
  cp "$WORK/perf.log" "$WORK/perf/" 2>/dev/null
  keep perf
  note ""
  note "performance (GPU control, cold throughput; fraction of this run's copy ceiling):"
  grep -E '^(case|sum|softmax|rmsnorm|layernorm|add|gelu_add)' "$WORK/perf.log" | tee -a "$SUMMARY"
  grep -E 'cases valid' "$WORK/perf.log" | tee -a "$SUMMARY"
fi
