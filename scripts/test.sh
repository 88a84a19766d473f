#!/usr/bin/env bash
# test.sh — the README's second command (and what CI runs): install what is missing, then three
# passes (README, "Two commands"):
#   1. Release build, warnings as errors: the whole suite, accuracy-level end-to-end runs included,
#      and the tests whose code differs without MPI a second time against the serial backend
#      (TEST_serial, ctest -L serial: the same objects linked to dist/*_serial.c, short runs);
#   2. ASan + UBSan build: the whole suite with short end-to-end runs (memory and UB on every code
#      path; accuracy is pass 1's);
#   3. a short fuzzing run of every parser of outside bytes (scripts/fuzz.sh, 5 s per target,
#      one target per core).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bash scripts/install-deps.sh --test
jobs=$(nproc)
# ctest runs one test more than there are cores: the MPI and end-to-end tests wait much of their
# time (start-up, time-outs, peers, Python), and a third test fills those gaps (measured on 2
# cores, the sanitized pass: 400 s with 2 at a time, 349 s with 3, no faster with 4)
test_jobs=${CGNN_TEST_JOBS:-$((jobs + 1))}
t_start=$(date +%s)
stamp() { echo "== $1 done in $(( $(date +%s) - t_start )) s since the start"; }

echo "== 1. build (Release, -Werror) and the whole suite"
bash scripts/build.sh "$root/build-ci" -DCGNN_WERROR=ON
# passes 2 and 3's builds start now at the lowest CPU priority, one after the other: they take
# only the time the tests leave idle (MPI start-up, time-outs, sleeps, Python); pass 2 waits for
# the sanitized build, and the fuzz build goes on behind pass 2's tests
mkdir -p "$root/build-ci-san"
rm -f "$root/build-ci-san.rc" "$root/build-ci-fuzz.rc"
# (no libcgnn nor Python package there: the tests that load them, test_c_api and test_python, are
# pass 1's; the C API itself runs sanitized in test_api; nor the serial backend's variants, pass 1's)
( nice -n 19 bash scripts/build.sh "$root/build-ci-san" -DCGNN_WERROR=ON -DCGNN_SANITIZE=ON \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCGNN_DEBUG_INFO=-g1 -DCGNN_LIBRARY=OFF -DCGNN_PYTHON=OFF -DCGNN_SERIAL_VARIANT=OFF \
    >"$root/build-ci-san.log" 2>&1
  echo $? >"$root/build-ci-san.rc"
  nice -n 19 bash scripts/fuzz.sh --build-only >"$root/build-ci-fuzz.log" 2>&1
  echo $? >"$root/build-ci-fuzz.rc" ) &
bg_build=$!
# wait_build NAME: waits for build-ci-NAME.rc; exits 1 with the build's log if it failed
wait_build() {
  while [[ ! -f "$root/build-ci-$1.rc" ]] && kill -0 "$bg_build" 2>/dev/null; do sleep 1; done
  if [[ $(cat "$root/build-ci-$1.rc" 2>/dev/null) != 0 ]]; then
    tail -40 "$root/build-ci-$1.log"
    echo "test.sh: the $1 build failed ($root/build-ci-$1.log)" >&2
    exit 1
  fi
}
(cd "$root/build-ci" && ctest --output-on-failure -j"$test_jobs")
stamp "pass 1"

echo "== 2. build (ASan + UBSan, -Werror) and the whole suite"
wait_build san
stamp "the sanitized build"
# malloc_context_size=8: the allocation and free stacks in a report 8 frames deep (ASan's default
# 30): what is detected is the same, and recording the stack of every malloc costs 6% less CPU
# (measured: test_train + test_hostile, 52.1 -> 49.2 CPU-s)
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1:malloc_context_size=8
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# end-to-end scripts train fewer seeds/epochs here: the plain run checks accuracy, this run
# checks memory and UB on the same code paths
export CGNN_TEST_SANITIZED=1
# (the tests labelled plain_only run no C that another test does not run here: CMakeLists.txt)
(cd "$root/build-ci-san" && ctest --output-on-failure -j"$test_jobs" -LE plain_only)
unset CGNN_TEST_SANITIZED
stamp "pass 2"

echo "== 3. fuzz every parser of outside bytes (libFuzzer, 5 s per target; long run: scripts/fuzz.sh 3600)"
wait_build fuzz
wait "$bg_build" || true
stamp "the fuzz build"
bash scripts/fuzz.sh 5
stamp "pass 3"
echo "== all tests passed (plain and serial, sanitized, fuzzed) in $(( $(date +%s) - t_start )) s"
