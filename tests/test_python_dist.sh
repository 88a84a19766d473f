#!/usr/bin/env bash
# test_python_dist.sh CGNN — the Python package under mpirun (worker mode, docs/PYTHON.md
# "Distributed"): tests/python/ddp_parts.py on 2 ranks over a 2-part Cora (METIS): the
# partition's batches equal the whole graph's loader's (global seeds), local seeds cover the
# train split once, and DistributedDataParallel (gloo) trains a plain-PyTorch GraphSAGE on them
# (replicas identical, test accuracy >= 0.70); a partition opened by one process (no mpirun) is
# refused with cgnn.DataError naming it.
set -u
CGNN=${1:?usage: test_python_dist.sh /abs/path/to/cgnn}
TMP_PREFIX=cgnn-pydist
source "$(dirname "$0")/mpi_test_lib.sh"
BUILD=$(dirname "$CGNN")
if ! ls "$BUILD"/python/cgnn/_C*.so >/dev/null 2>&1; then
  echo "FAIL: $BUILD/python/cgnn/_C*.so was not built (python3-dev missing? scripts/install-deps.sh installs it)"
  exit 1
fi
export PYTHONPATH="$BUILD/python" OMP_NUM_THREADS=1
part data/cora 2 metis cora2

# a free TCP port on the loopback for torch.distributed's rendezvous
port=$(/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
if CGNN_TEST_PORT=$port timeout -k 10 300 "${MPIRUN[@]}" -x CGNN_TEST_PORT -x PYTHONPATH -x OMP_NUM_THREADS -np 2 \
     /usr/bin/python3 tests/python/ddp_parts.py "$TMP/cora2" data/cora >"$TMP/ddp.out" 2>&1; then
  grep "^rank 0 of" "$TMP/ddp.out"
  [[ $(grep -c "^rank [01]: ok" "$TMP/ddp.out") == 2 ]] && ok || bad "not every rank finished: $(tail -5 "$TMP/ddp.out")"
else
  bad "mpirun -np 2 ddp_parts.py: $(grep -v '^ *#' "$TMP/ddp.out" | tail -15)"
fi

# a partition needs the job its parts fit: one process is refused, naming the partition
out=$(/usr/bin/python3 -c "import cgnn; cgnn.OnDiskDataset('$TMP/cora2')" 2>&1)
grep -q "DataError" <<<"$out" && grep -q "cora2" <<<"$out" && ok || bad "a 2-part partition in one process: $out"

echo "test_python_dist: $pass passed, $fails failed"
[[ $fails -eq 0 ]]
