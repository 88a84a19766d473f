#!/usr/bin/env bash
# test.sh — the README's second command (and what CI runs): install what is missing, build
# with warnings as errors, run the whole suite; then again under ASan + UBSan; then a short
# fuzzing run of every parser of outside bytes (scripts/fuzz.sh, 20 s per target).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bash scripts/install-deps.sh --test
jobs=$(nproc)

echo "== build (Release, -Werror) and test"
bash scripts/build.sh "$root/build-ci" -DCGNN_WERROR=ON
(cd "$root/build-ci" && ctest --output-on-failure -j"$jobs")

echo "== build without MPI (serial dist fallback) and test"
bash scripts/build.sh "$root/build-ci-serial" -DCGNN_WERROR=ON -DCGNN_WITH_MPI=OFF
(cd "$root/build-ci-serial" && ctest --output-on-failure -j"$jobs")

echo "== build (ASan + UBSan, -Werror) and test"
bash scripts/build.sh "$root/build-ci-san" -DCGNN_WERROR=ON -DCGNN_SANITIZE=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# end-to-end scripts train fewer seeds/epochs here: the plain run checks accuracy, this run
# checks memory and UB on the same code paths
export CGNN_TEST_SANITIZED=1
(cd "$root/build-ci-san" && ctest --output-on-failure -j"$jobs")
unset CGNN_TEST_SANITIZED

echo "== fuzz every parser of outside bytes (libFuzzer, 20 s per target; long run: scripts/fuzz.sh 3600)"
bash scripts/fuzz.sh 20
echo "== all tests passed (plain, sanitized, fuzzed)"
