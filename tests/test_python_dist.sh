#!/usr/bin/env bash
# test_python_dist.sh CGNN — the Python package under mpirun (worker mode, docs/PYTHON.md
# "Distributed"): tests/python/ddp_parts.py on 2 ranks over a 2-part Cora (METIS): the
# partition's batches equal the whole graph's loader's (global seeds), local seeds cover the
# train split once, and DistributedDataParallel (gloo) trains a plain-PyTorch GraphSAGE on them
# (replicas identical, test accuracy >= 0.70); a partition opened by one process (no mpirun) is
# refused with cgnn.DataError naming it; server-client mode (tests/python/graph_store.py, 2 storage
# + 2 compute ranks): the compute ranks' batches equal the whole graph's, DDP trains on them, and
# an exception in one compute rank's function ends the job cleanly.
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

# run NP SCRIPT NAME LINE: SCRIPT under mpirun -np NP on the 2-part Cora (a free loopback port for
# torch.distributed's rendezvous); every rank must say "rank R: ok", rank 0 prints LINE's line
run() {
  local np=$1 script=$2 name=$3 line=$4 port
  port=$(/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  if CGNN_TEST_PORT=$port timeout -k 10 300 "${MPIRUN[@]}" -x CGNN_TEST_PORT -x PYTHONPATH -x OMP_NUM_THREADS -np "$np" \
       /usr/bin/python3 "tests/python/$script" "$TMP/cora2" data/cora >"$TMP/$name.out" 2>&1; then
    grep "^$line" "$TMP/$name.out"
    [[ $(grep -o "rank [0-9]: ok" "$TMP/$name.out" | sort -u | wc -l) == "$np" ]] && ok ||
      bad "$script: not every rank finished: $(tail -5 "$TMP/$name.out")"
  else
    bad "mpirun -np $np $script: $(grep -v '^ *#' "$TMP/$name.out" | tail -15)"
  fi
}
run 2 ddp_parts.py ddp "rank 0 of"
# server-client mode (cgnn.run_graph_store): 2 storage ranks + 2 compute ranks on the same parts
run 4 graph_store.py gs "server-client"

# a partition needs the job its parts fit: one process is refused, naming the partition
out=$(/usr/bin/python3 -c "import cgnn; cgnn.OnDiskDataset('$TMP/cora2')" 2>&1)
grep -q "DataError" <<<"$out" && grep -q "cora2" <<<"$out" && ok || bad "a 2-part partition in one process: $out"

echo "test_python_dist: $pass passed, $fails failed"
[[ $fails -eq 0 ]]
