#!/usr/bin/env bash
# test_netns.sh CGNN — scripts/netns-cluster.sh: two "hosts" (network namespaces joined by
# rate-shaped veth links) run an MPI program over TCP between them: the sharded and replicated
# embedding steps of tests/mpi_embedding_check.c must agree bitwise across hosts, and the bytes
# must have crossed the hosts' links. Skipped (77) without root, namespaces or an MPI build.
set -u
CGNN=${1:?usage: test_netns.sh path/to/cgnn}
SRC=$(cd "$(dirname "$0")/.." && pwd)
BIN=$(dirname "$CGNN")/mpi_embedding_check
if [[ ! -x $BIN ]]; then echo "SKIP: $BIN not built (CGNN_WITH_MPI=OFF)"; exit 77; fi
if [[ $(id -u) -ne 0 ]]; then echo "SKIP: network namespaces need root"; exit 77; fi
if ! ip netns add cgnn-probe 2>/dev/null; then echo "SKIP: no network namespaces here"; exit 77; fi
ip netns del cgnn-probe
CL="$SRC/scripts/netns-cluster.sh"
N=2
cleanup() { bash "$CL" down "$N" >/dev/null 2>&1; }
trap cleanup EXIT
[[ ${CGNN_TEST_SANITIZED:-0} == 1 ]] && export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0"
export OMP_NUM_THREADS=1
fails=0
bash "$CL" up "$N" 1gbit || { echo "FAIL: netns-cluster.sh up"; exit 1; }
before=$(bash "$CL" stats "$N" | awk '{s += $7} END {print s + 0}')
out=$(timeout 300 bash "$CL" run "$N" 2 -- "$BIN" 2>&1); rc=$?
echo "$out" | tail -3
if [[ $rc -ne 0 ]] || ! grep -q "mpi_embedding_check: OK (2 ranks" <<<"$out"; then
  echo "FAIL: mpi_embedding_check over two hosts (exit $rc)"; fails=$((fails + 1))
fi
after=$(bash "$CL" stats "$N" | awk '{s += $7} END {print s + 0}')
sent=$((after - before))
echo "bytes sent over the hosts' links: $sent"
if [[ $sent -lt 50000 ]]; then echo "FAIL: only $sent bytes crossed the links"; fails=$((fails + 1)); fi
bash "$CL" down "$N"
if ip netns list | grep -q cgnn-h; then echo "FAIL: namespaces left behind"; fails=$((fails + 1)); fi
[[ $fails -eq 0 ]]
