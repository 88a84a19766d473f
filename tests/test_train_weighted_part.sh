#!/usr/bin/env bash
# test_train_weighted_part.sh CGNN — weighted sampling (trainerArgs.sampling_weight) on a
# partitioned graph: Cora with an edge weight feature, 2 parts (cgnn partition copies the edge
# features per part):
#   - 2 parts on 2 ranks train the same model and metrics byte for byte as the replicated run
#     with the same seed assignment (global), and not the uniform run's model;
#   - server-client mode: 2 storage + 2 compute ranks = the 2 worker ranks, and 1 storage rank
#     holding both parts (its weights concatenated as its index is) + 4 compute ranks = 4
#     worker ranks.
set -u
CGNN=${1:?usage: test_train_weighted_part.sh path/to/cgnn}
TMP_PREFIX=cgnn-wpart
source "$(dirname "$0")/graph_store_lib.sh"

mkdir -p "$TMP/cora"
for f in data/cora/*.npy; do ln -s "$SRC/$f" "$TMP/cora/"; done
/usr/bin/python3 -c "
import numpy as np, sys
d = sys.argv[1]
E = np.load(d + '/edges.npy').shape[1]
r = np.random.default_rng(0)
w = r.random(E).astype(np.float32); w[r.random(E) < 0.3] = 0
np.save(d + '/w.npy', w)
" "$TMP/cora" || { echo "FAIL: fixture"; exit 1; }
{
  sed -n '/^tasks:/q;p' data/cora/metadata.yaml
  printf '  - domain: edge\n    name: w\n    format: numpy\n    path: w.npy\n'
  sed -n '/^tasks:/,$p' data/cora/metadata.yaml
} > "$TMP/cora/metadata.yaml"
part "$TMP/cora" 2 metis cora2
[[ -f $TMP/cora2/part0/edge-w.npy && -f $TMP/cora2/part1/edge-w.npy ]] && ok || bad "the parts have no edge feature w: $(ls -R "$TMP/cora2" | head -20)"

SHORT=(-e 's/num_epochs: "200"/num_epochs: "1"/' -e 's/main_sample_batch_size: "140"/main_sample_batch_size: "32"/'
       -e 's/num_val_batches: "0"/num_val_batches: "2"/' -e 's/num_test_batches: "0"/num_test_batches: "4"/')
NC=("${SHORT[@]}" -e 's/    seed: "0"/    seed: "0"\n    seed_assignment: global/')
W=(-e 's/^\(    gnn_model_class_path: .*\)$/\1\n    sampling_weight: w/')
config w_rep cora_graphsage "$TMP/cora" "${NC[@]}" "${W[@]}"
config w_par cora_graphsage "$TMP/cora2" "${NC[@]}" "${W[@]}"
config u_par cora_graphsage "$TMP/cora2" "${NC[@]}"
run 2 w_rep "" || bad "w_rep failed: $(tail -3 "$TMP/w_rep.err")"
run 2 w_par "" || bad "w_par failed: $(tail -3 "$TMP/w_par.err")"
run 2 u_par "" || bad "u_par failed: $(tail -3 "$TMP/u_par.err")"
same w_rep w_par
cmp -s "$TMP/w_par/model.safetensors" "$TMP/u_par/model.safetensors" && bad "weighted on parts trained the uniform model" || ok
grep -q "weighted sampling: draw weights from edge feature 'w'" "$TMP/w_par.err" && ok || bad "w_par: no weighted log line"

# server-client: the storage ranks read the weights (local seeds, the default on parts)
gsconf gs22.yaml 2 2
gsconf gs14.yaml 1 4
for n in w_w w_s w4_w w4_s; do config $n cora_graphsage "$TMP/cora2" "${SHORT[@]}" "${W[@]}"; done
run 2 w_w "" || bad "w_w failed: $(tail -3 "$TMP/w_w.err")"
run 4 w_s "$TMP/gs22.yaml" || bad "w_s failed: $(tail -3 "$TMP/w_s.err")"
same w_w w_s
run 4 w4_w "" || bad "w4_w failed: $(tail -3 "$TMP/w4_w.err")"
run 5 w4_s "$TMP/gs14.yaml" || bad "w4_s failed: $(tail -3 "$TMP/w4_s.err")"
same w4_w w4_s

echo "test_train_weighted_part: $pass passed, $fails failed"
[[ $fails -eq 0 ]]
