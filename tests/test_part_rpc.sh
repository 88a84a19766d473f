#!/usr/bin/env bash
# test_part_rpc.sh CGNN — a partitioned graph sampled across ranks: runs tests/part_rpc_check.c
# (built beside cgnn when CGNN_WITH_MPI=ON) on 2 and 3 ranks over shared memory and on 2 over
# TCP: every rank's loaders on its own part, asking the other parts' owners for neighbours and
# feature rows through sample/part_rpc, must deliver exactly the whole graph's batches.
# Exit 77 (skipped) without the binary (serial build) or without mpirun.
set -u
CGNN=${1:?usage: test_part_rpc.sh path/to/cgnn}
BIN=$(dirname "$CGNN")/part_rpc_check
if [[ ! -x $BIN ]]; then echo "SKIP: $BIN not built (CGNN_WITH_MPI=OFF)"; exit 77; fi
if ! command -v mpirun >/dev/null; then echo "SKIP: mpirun not installed (openmpi-bin)"; exit 77; fi
MPIRUN=(mpirun --oversubscribe --bind-to none)
[[ $(id -u) -eq 0 ]] && MPIRUN+=(--allow-run-as-root)
export OMPI_MCA_btl_vader_single_copy_mechanism=none OMP_NUM_THREADS=1
# OpenMPI keeps allocations alive past MPI_Finalize by design
[[ ${CGNN_TEST_SANITIZED:-0} == 1 ]] && export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0"
fails=0
# TCP over loopback only: a test that brings network interfaces up and down while this one runs
# (test_netns's bridge, 10.88.0.1) must not be in the address list the ranks connect through
# (CI saw a 2-rank TCP run die with MPI_ERRORS_ARE_FATAL while test_netns ran beside it)
export OMPI_MCA_btl_tcp_if_include=lo
for run in "2 self,vader" "3 self,vader" "2 self,tcp"; do
  set -- $run
  out=$(OMPI_MCA_btl=$2 timeout -k 10 300 "${MPIRUN[@]}" -np "$1" "$BIN" 2>&1); rc=$?
  echo "$out" | tail -3
  if [[ $rc -ne 0 ]] || ! grep -q "part_rpc_check: OK ($1 ranks" <<<"$out"; then
    echo "$out" | grep -v '^ *#[0-9]' | tail -40
    echo "FAIL: $1 ranks over $2 (exit $rc)"
    fails=$((fails + 1))
  fi
done
[[ $fails -eq 0 ]]
