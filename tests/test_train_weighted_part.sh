#!/usr/bin/env bash
# test_train_weighted_part.sh CGNN — weighted sampling (trainerArgs.sampling_weight) on a
# partitioned graph: Cora with an edge weight feature, 2 parts (cgnn partition copies the edge
# features per part):
#   - 2 parts on 2 ranks train the same model and metrics byte for byte as the replicated run
#     with the same seed assignment (global), and not the uniform run's model;
#   - server-client mode: 2 storage + 2 compute ranks = the 2 worker ranks, and 1 storage rank
#     holding both parts (its weights concatenated as its index is) + 4 compute ranks = 4
#     worker ranks;
#   - typed (dblp-mini, weights on two of its six edge types): 2 parts on 2 ranks = replicated,
#     and 1 storage rank holding both parts + 2 compute ranks = 2 worker ranks.
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
# a name no part has: the storage ranks refuse it (exit 2, the key named)
config w_bad cora_graphsage "$TMP/cora2" "${SHORT[@]}" -e 's/^\(    gnn_model_class_path: .*\)$/\1\n    sampling_weight: nope/'
run 4 w_bad "$TMP/gs22.yaml"
rc=$?
[[ $rc == 2 ]] && grep -q "sampling_weight: .*no edge feature 'nope'" "$TMP/w_bad.err" && ok ||
  bad "w_bad: exit $rc, expected 2 naming the key: $(tail -3 "$TMP/w_bad.err")"
run 4 w4_w "" || bad "w4_w failed: $(tail -3 "$TMP/w4_w.err")"
run 5 w4_s "$TMP/gs14.yaml" || bad "w4_s failed: $(tail -3 "$TMP/w4_s.err")"
same w4_w w4_s

# ---- typed: dblp-mini with weights on two edge types ----
mkdir -p "$TMP/dblp"
for f in data/dblp-mini/*.npy; do ln -s "$SRC/$f" "$TMP/dblp/"; done
/usr/bin/python3 -c "
import numpy as np, sys
d = sys.argv[1]
r = np.random.default_rng(1)
for t in ['paper-written_by-author', 'term-term_of-paper']:
    E = np.load(d + '/edges-' + t + '.npy').shape[1]
    w = r.random(E).astype(np.float32); w[r.random(E) < 0.3] = 0
    np.save(d + '/w-' + t + '.npy', w)
" "$TMP/dblp" || { echo "FAIL: typed fixture"; exit 1; }
{
  sed -n '1,/^feature_data:/p' data/dblp-mini/metadata.yaml
  for t in paper:written_by:author term:term_of:paper; do
    printf '  - domain: edge\n    type: "%s"\n    name: w\n    format: numpy\n    path: w-%s.npy\n' "$t" "$(echo "$t" | tr : -)"
  done
  sed -n '/^feature_data:/,$p' data/dblp-mini/metadata.yaml | tail -n +2
} > "$TMP/dblp/metadata.yaml"
part "$TMP/dblp" 2 metis dblp2
TS=(-e 's/num_epochs: "[0-9]*"/num_epochs: "1"/' -e 's/main_sample_batch_size: "128"/main_sample_batch_size: "48"/'
    -e 's/num_val_batches: "0"/num_val_batches: "2"/' -e 's/num_test_batches: "0"/num_test_batches: "3"/' "${W[@]}")
config t_rep dblp_hetero_sage "$TMP/dblp" "${TS[@]}" -e 's/    seed: "0"/    seed: "0"\n    seed_assignment: global/'
config t_par dblp_hetero_sage "$TMP/dblp2" "${TS[@]}" -e 's/    seed: "0"/    seed: "0"\n    seed_assignment: global/'
config t_uni dblp_hetero_sage "$TMP/dblp2" -e 's/num_epochs: "[0-9]*"/num_epochs: "1"/' \
  -e 's/main_sample_batch_size: "128"/main_sample_batch_size: "48"/' -e 's/num_val_batches: "0"/num_val_batches: "2"/' \
  -e 's/num_test_batches: "0"/num_test_batches: "3"/' -e 's/    seed: "0"/    seed: "0"\n    seed_assignment: global/'
run 2 t_rep "" || bad "t_rep failed: $(tail -3 "$TMP/t_rep.err")"
run 2 t_par "" || bad "t_par failed: $(tail -3 "$TMP/t_par.err")"
run 2 t_uni "" || bad "t_uni failed: $(tail -3 "$TMP/t_uni.err")"
same t_rep t_par
cmp -s "$TMP/t_par/model.safetensors" "$TMP/t_uni/model.safetensors" && bad "typed weighted parts trained the uniform model" || ok
gsconf gs12.yaml 1 2
config t_w dblp_hetero_sage "$TMP/dblp2" "${TS[@]}"
config t_s dblp_hetero_sage "$TMP/dblp2" "${TS[@]}"
run 2 t_w "" || bad "t_w failed: $(tail -3 "$TMP/t_w.err")"
run 3 t_s "$TMP/gs12.yaml" || bad "t_s failed: $(tail -3 "$TMP/t_s.err")"
same t_w t_s

echo "test_train_weighted_part: $pass passed, $fails failed"
[[ $fails -eq 0 ]]
