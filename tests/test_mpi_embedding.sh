#!/usr/bin/env bash
# test_mpi_embedding.sh CGNN — sparse embedding steps under mpirun: runs
# tests/mpi_embedding_check.c (built beside cgnn when CGNN_WITH_MPI=ON) on 2 and 3 ranks; it
# checks that the replicas' tables stay bitwise equal and equal a single-process replay of the
# merged updates, and that a bad id on one rank fails every rank alike.
# Exit 77 (skipped) without the binary (serial build) or without mpirun.
set -u
CGNN=${1:?usage: test_mpi_embedding.sh path/to/cgnn}
BIN=$(dirname "$CGNN")/mpi_embedding_check
if [[ ! -x $BIN ]]; then echo "SKIP: $BIN not built (CGNN_WITH_MPI=OFF)"; exit 77; fi
if ! command -v mpirun >/dev/null; then echo "SKIP: mpirun not installed (openmpi-bin)"; exit 77; fi
MPIRUN=(mpirun --oversubscribe --bind-to none)
[[ $(id -u) -eq 0 ]] && MPIRUN+=(--allow-run-as-root)
export OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none OMP_NUM_THREADS=1
# OpenMPI keeps allocations alive past MPI_Finalize by design; LeakSanitizer would report them
[[ ${CGNN_TEST_SANITIZED:-0} == 1 ]] && export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0"
fails=0
for np in 2 3; do
  out=$(timeout -k 10 120 "${MPIRUN[@]}" -np "$np" "$BIN" 2>&1); rc=$?
  echo "$out" | tail -5
  if [[ $rc -ne 0 ]] || ! grep -q "mpi_embedding_check: OK ($np ranks" <<<"$out"; then
    echo "FAIL: $np ranks (exit $rc)"
    fails=$((fails + 1))
  fi
done
[[ $fails -eq 0 ]]
