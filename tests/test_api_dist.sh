#!/usr/bin/env bash
# test_api_dist.sh CGNN — the C API on a partitioned graph under mpirun (include/cgnn.h, "a
# partitioned graph under mpirun"): tests/test_api.c's partition case on 2 ranks, each rank
# opening its part with global seeds: 2 epochs of batches (every array: node ids in original ids,
# features, blocks, labels), with 0 and 2 sampler threads, equal the whole graph's loader's with the
# rank's slice; the description is the whole graph's. Cora node classification (2 parts, METIS),
# facebook-lp link prediction (2 parts, random: negatives and exclude_seed_edges) and dblp-mini
# typed node classification (2 parts). The same in server-client mode (cgnn_graph_store_run, 2
# storage + 2 compute ranks: the compute ranks' batches, built by the storage ranks, equal the
# whole graph's; a compute function's error ends the run on every rank). Runs in the sanitized pass too (the API's collective open
# and close, the part source under the loader).
set -u
CGNN=${1:?usage: test_api_dist.sh path/to/cgnn}
TMP_PREFIX=cgnn-apidist
source "$(dirname "$0")/mpi_test_lib.sh"
BIN=$(dirname "$CGNN")/test_api
part data/cora 2 metis cora2
part data/facebook-lp 2 random fb2
part data/dblp-mini 2 metis dblp2
# worker mode on 2 ranks (CGNN_TEST_API_PARTITION), then server-client mode (cgnn_graph_store_run,
# CGNN_TEST_API_GRAPH_STORE): 2 storage + 2 compute ranks on the same parts
for mode in "PARTITION 2" "GRAPH_STORE 4"; do
  read -r var np <<<"$mode"
  cases=("cora2 cora nc" "fb2 facebook-lp lp" "dblp2 dblp-mini nc")
  # (the sanitized pass: server-client on the typed graph only; the API's C on a homogeneous part
  # is worker mode's, run above, and the storage ranks' is test_graph_store's)
  [[ $var == GRAPH_STORE && ${CGNN_TEST_SANITIZED:-0} == 1 ]] && cases=("dblp2 dblp-mini nc")
  for c in "${cases[@]}"; do
    read -r p w k <<<"$c"
    if env "CGNN_TEST_API_$var=$TMP/$p:$SRC/data/$w:$k" timeout -k 10 300 "${MPIRUN[@]}" -x "CGNN_TEST_API_$var" \
         -np "$np" "$BIN" >"$TMP/$var-$p.out" 2>&1; then
      grep "^rank 0" "$TMP/$var-$p.out"
      ok
    else
      bad "mpirun -np $np test_api ($var) on $p: $(grep -v '^ *#' "$TMP/$var-$p.out" | tail -12)"
    fi
  done
done
echo "test_api_dist: $pass passed, $fails failed"
[[ $fails -eq 0 ]]
