#!/usr/bin/env bash
# fuzz.sh [SECONDS_PER_TARGET] [TARGET...] — fuzzes every parser of outside bytes.
#
# Builds the libFuzzer targets of fuzz/ (clang, ASan + UBSan + LeakSanitizer; CMake option
# CGNN_FUZZ) in build-fuzz/ and runs each target (default: all of fuzz/fuzz_*.c; a TARGET is
# "npy" or "fuzz_npy") for SECONDS_PER_TARGET seconds (default 20; CI runs 5), one per core at a
# time, one process on one core. Prints the executions of each target and exits non-zero if
# any target found a crash, hang, leak, out-of-memory or sanitizer report.
#
#   scripts/fuzz.sh            # 20 s per target (CI: scripts/test.sh runs 5 s)
#   scripts/fuzz.sh 3600       # the long run: an hour per target
#   scripts/fuzz.sh 600 npy    # one target
#   scripts/fuzz.sh --build-only   # only (re)build the targets
#
# Seeds: fuzz/corpus/<target>/ (read only); what the fuzzer adds goes to
# build-fuzz/fuzz-work/<target>/corpus/ and is kept for the next run; a finding is written to
# build-fuzz/fuzz-work/<target>/artifacts/ (replay it: build-fuzz/fuzz_<target> FILE; the next
# run of that target clears the folder).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
build_only=0
if [[ ${1:-} == --build-only ]]; then build_only=1; shift; fi # (scripts/test.sh builds it ahead)
secs=${1:-20}
shift || true
[[ "$secs" =~ ^[0-9]+$ && "$secs" -gt 0 ]] || { echo "usage: scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]" >&2; exit 2; }

bash scripts/install-deps.sh --fuzz
cc=${CGNN_FUZZ_CC:-clang-14}
command -v "$cc" >/dev/null || cc=clang
build="$root/build-fuzz"
CC=$cc cmake -S "$root" -B "$build" -DCGNN_FUZZ=ON -DCGNN_WITH_MPI=OFF \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCGNN_DEBUG_INFO=-g1 >/dev/null
cmake --build "$build" -j"$(nproc)" --target fuzz >"$build/fuzz-build.log" 2>&1 ||
  { tail -40 "$build/fuzz-build.log"; echo "fuzz.sh: build failed ($build/fuzz-build.log)" >&2; exit 1; }
(( build_only )) && exit 0

targets=()
if (( $# )); then
  for t in "$@"; do targets+=("${t#fuzz_}"); done
else
  for f in fuzz/fuzz_*.c; do t=$(basename "$f" .c); targets+=("${t#fuzz_}"); done
fi

jobs=${CGNN_FUZZ_JOBS:-$(nproc)} # (before OMP_NUM_THREADS=1: GNU nproc honours it)
export OMP_NUM_THREADS=1
export ASAN_OPTIONS=detect_leaks=1:strict_string_checks=1:${ASAN_OPTIONS:-}
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:${UBSAN_OPTIONS:-}
# one target: runs it for $secs seconds, writes its table row (and its findings) to $work/result
run_target() {
  local t=$1 bin="$build/fuzz_$1" work="$build/fuzz-work/$1"
  mkdir -p "$work/corpus" "$work/artifacts"
  rm -f "$work/artifacts/"* "$work/result" # findings of an earlier run: this run decides
  local args=(-max_total_time="$secs" -rss_limit_mb=2048 -timeout=10 -max_len=8192
              -print_final_stats=1 -artifact_prefix="$work/artifacts/")
  [[ -f "fuzz/$t.dict" ]] && args+=(-dict="fuzz/$t.dict")
  local start rc=0
  start=$(date +%s)
  "$bin" "${args[@]}" "$work/corpus" "fuzz/corpus/$t" >"$work/log" 2>&1 || rc=$?
  local took=$(( $(date +%s) - start ))
  local execs rate units found result=ok
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$work/log" | tail -1)
  units=$(find "$work/corpus" -type f | wc -l)
  found=$(find "$work/artifacts" -type f | wc -l)
  (( rc != 0 || found > 0 )) && result="FAILED (exit $rc; $found artifact(s) in $work/artifacts)"
  {
    printf '%-22s %12s %8s %9s %7s  %s\n' "fuzz_$t" "${execs:-?}" "$took" "${rate:-?}" "$units" "$result"
    if [[ "$result" != ok ]]; then
      grep -E "ERROR|SUMMARY|fuzz: |runtime error|==[0-9]+==" "$work/log" | head -20 | sed 's/^/    /'
      echo "    full log: $work/log"
    fi
  } >"$work/result"
}

for t in "${targets[@]}"; do
  [[ -x "$build/fuzz_$t" ]] || { echo "fuzz.sh: no target fuzz_$t (fuzz/fuzz_$t.c)" >&2; exit 2; }
done
# one target per core at a time (each is single-threaded): the wall time is ceil(targets / cores)
# x SECONDS_PER_TARGET, every target still gets its full SECONDS_PER_TARGET
running=0
for t in "${targets[@]}"; do
  run_target "$t" &
  running=$((running + 1))
  if (( running >= jobs )); then wait -n || true; running=$((running - 1)); fi
done
wait
failed=()
printf '%-22s %12s %8s %9s %7s  %s\n' target executions seconds exec/s corpus result
for t in "${targets[@]}"; do
  r="$build/fuzz-work/$t/result"
  if [[ -f $r ]]; then cat "$r"; else echo "fuzz_$t: no result (the runner died)"; failed+=("$t"); continue; fi
  grep -q '  ok$' <(head -1 "$r") || failed+=("$t")
done
if (( ${#failed[@]} )); then
  echo "fuzz.sh: findings in: ${failed[*]}" >&2
  exit 1
fi
echo "fuzz.sh: no findings (${#targets[@]} targets, ${secs} s each)"
