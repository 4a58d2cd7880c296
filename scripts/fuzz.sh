#!/usr/bin/env bash
# Fuzzes every parser of outside input (tests/fuzz) for a bounded time:
#   scripts/fuzz.sh [SECONDS_PER_TARGET]     (default 30)
# Builds the libFuzzer targets in build-fuzz/ (clang, ASan + UBSan), runs
# each over a copy of its committed corpus (tests/fuzz/corpus/<target>, never
# written to), and fails on any crash, leak, timeout or sanitizer report.
# Logs, the grown corpora and any crashing input stay in build-fuzz/run/;
# to replay one: build-fuzz/tests/fuzz/<target> build-fuzz/run/<target>-crash-...
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"

seconds=${1:-30}
if ! [[ "$seconds" =~ ^[1-9][0-9]*$ ]]; then
  echo "usage: scripts/fuzz.sh [SECONDS_PER_TARGET]" >&2
  exit 2
fi
targets=(fuzz_options fuzz_results fuzz_worker_reply fuzz_launch_spec)
dir=$TB_ROOT/build-fuzz
run=$dir/run

# clang and its libFuzzer runtime (Debian: clang, libclang-rt-14-dev).
if ! command -v clang >/dev/null; then
  echo "tilebench fuzz: clang is not installed (Debian packages clang libclang-rt-14-dev)" >&2
  exit 1
fi
probe=$(mktemp -d)
if ! echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return 0; }' |
  clang -x c - -fsanitize=fuzzer,address,undefined -o "$probe/probe" >/dev/null 2>&1; then
  rm -rf "$probe"
  echo "tilebench fuzz: clang cannot link libFuzzer (Debian package libclang-rt-14-dev)" >&2
  exit 1
fi
rm -rf "$probe"

echo "== fuzz build ($dir)"
mkdir -p "$dir"
cmake -S "$TB_ROOT" -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang \
  -DTB_FUZZ=ON -DBUILD_TESTING=ON >"$dir.configure.log" 2>&1 ||
  { cat "$dir.configure.log" >&2; exit 1; }
cmake --build "$dir" -j"$(nproc)" --target fuzz >"$dir.build.log" 2>&1 ||
  { tail -50 "$dir.build.log" >&2; exit 1; }

# Stacks with file:line when llvm-symbolizer is there (Debian package llvm).
symbolizer=$(command -v llvm-symbolizer || command -v llvm-symbolizer-14 || true)
if [ -n "$symbolizer" ]; then
  export ASAN_SYMBOLIZER_PATH=$symbolizer
fi
export ASAN_OPTIONS=detect_leaks=1:strict_string_checks=1:check_initialization_order=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

echo "== fuzzing ${#targets[@]} targets, ${seconds} s each"
rm -rf "$run"
mkdir -p "$run/tmp"
failed=0
for target in "${targets[@]}"; do
  corpus=$run/$target
  mkdir -p "$corpus"
  cp "$TB_ROOT/tests/fuzz/corpus/$target/"* "$corpus/"
  seeds=$(find "$corpus" -type f | wc -l)
  log=$run/$target.log
  # -close_fd_mask=3: the code's own stdout/stderr chatter (tables, usage
  # errors) goes nowhere; libFuzzer's and the sanitizers' reports still come.
  rc=0
  TMPDIR=$run/tmp "$dir/tests/fuzz/$target" "$corpus" \
    -dict="$TB_ROOT/tests/fuzz/${target#fuzz_}.dict" \
    -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
    -close_fd_mask=3 -print_final_stats=1 -artifact_prefix="$run/$target-" >"$log" 2>&1 || rc=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  last=$(grep -E '^#[0-9]+' "$log" | grep ' cov: ' | tail -1 || true)
  cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
  ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
  corp=$(sed -n 's/.* corp: \([0-9]*\).*/\1/p' <<<"$last")
  inputs=$(find "$run" -maxdepth 1 -type f -name "$target-*") # crash-, leak-, timeout-, oom-
  # The exit status, and the log and the inputs written in case a report
  # came from a path that exits 0.
  if [ "$rc" -eq 0 ] && [ -z "$inputs" ] &&
    ! grep -qE 'ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error:|SUMMARY: ' "$log"; then
    verdict=ok
  else
    verdict="FAILED (exit $rc, log $log)"
    failed=1
  fi
  printf '%-18s %s executions, coverage %s edges / %s features, corpus %s (from %s seeds): %s\n' \
    "$target" "${runs:-?}" "${cov:-?}" "${ft:-?}" "${corp:-?}" "$seeds" "$verdict"
  if [ "$verdict" != ok ]; then
    grep -E -A40 'ERROR: |runtime error:|fuzz property violated|ALARM|out-of-memory' "$log" | head -80 >&2 || tail -40 "$log" >&2
    if [ -n "$inputs" ]; then
      while read -r input; do echo "  input: $input (base64 in the log)" >&2; done <<<"$inputs"
    fi
  fi
done
if [ "$failed" -ne 0 ]; then
  echo "tilebench fuzz: failures above (inputs and logs in $run)" >&2
  exit 1
fi
