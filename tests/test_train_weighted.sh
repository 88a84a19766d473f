#!/usr/bin/env bash
# test_train_weighted.sh CGNN — trainerArgs.sampling_weight end to end on Cora and dblp-mini (1-2 epochs):
# weighted training runs (float weights, a uint8 mask, with replacement, fanout -1; a typed
# dataset with weights on some edge types), the model is the same with 0 and 2 sampler threads
# and differs from uniform sampling's, and bad weights (negative, NaN, two columns, an unknown
# name) exit 2 naming the file and row or the key.
set -u
CGNN=${1:?usage: test_train_weighted.sh path/to/cgnn}
TMP_PREFIX=cgnn-weighted
source "$(dirname "$0")/test_lib.sh"
printf 'trainer_resource_config:\n  local_trainer_config: {num_workers: 2}\n' > "$TMP/resource.yaml"

# the dataset: Cora's files linked, its edges' weights beside them
mkdir -p "$TMP/cora"
for f in data/cora/*.npy; do ln -s "$SRC/$f" "$TMP/cora/"; done
/usr/bin/python3 -c "
import numpy as np, sys
d = sys.argv[1]
E = np.load(d + '/edges.npy').shape[1]
r = np.random.default_rng(0)
w = r.random(E).astype(np.float32); w[r.random(E) < 0.3] = 0
np.save(d + '/w.npy', w)
np.save(d + '/mask.npy', (r.random(E) < 0.5).astype(np.uint8))
bad = w.copy(); bad[5] = -1; np.save(d + '/neg.npy', bad)
bad = w.copy(); bad[7] = np.nan; np.save(d + '/nan.npy', bad)
np.save(d + '/wide.npy', np.stack([w, w], 1))
" "$TMP/cora" || { echo "FAIL: fixture"; exit 1; }
# metadata DIR FEATURES... — Cora's metadata.yaml with edge features FEATURES (NAME.npy each)
metadata() {
  local dir=$1
  shift
  {
    sed -n '/^tasks:/q;p' data/cora/metadata.yaml
    for n in "$@"; do
      printf '  - domain: edge\n    name: %s\n    format: numpy\n    path: %s.npy\n' "$n" "$n"
    done
    sed -n '/^tasks:/,$p' data/cora/metadata.yaml
  } > "$dir/metadata.yaml"
}
metadata "$TMP/cora" w mask neg wide
# the dataset reader refuses a NaN feature first (naming file, row and column): a folder of its own
mkdir -p "$TMP/cora_nan"
ln -s "$TMP"/cora/*.npy "$TMP/cora_nan/"
metadata "$TMP/cora_nan" w nan

# run NAME EXPECTED_RC [sed expressions...] — trains a 2-epoch Cora config; stdout / stderr in $TMP/NAME.out / .err
run() {
  local name=$1 want=$2
  shift 2
  sed -e "s#out/[a-z_]*/#$TMP/$name/#g" -e "s#data/cora#$TMP/cora#" -e 's/num_epochs: "200"/num_epochs: "2"/' "$@" examples/cora_graphsage.yaml > "$TMP/$name.yaml"
  "$CGNN" train --job_name="$name" --task_config_uri="$TMP/$name.yaml" \
    --resource_config_uri="file://$TMP/resource.yaml" >"$TMP/$name.out" 2>"$TMP/$name.err"
  local rc=$?
  [[ $rc == "$want" ]] && ok || { bad "$name: exit $rc, expected $want: $(tail -3 "$TMP/$name.err")"; return 1; }
}
# weight NAME — the sed expression that adds sampling_weight: NAME
weight() { echo "s/^\(    gnn_model_class_path: .*\)\$/\1\n    sampling_weight: $1/"; }
contains() { grep -q -- "$2" "$TMP/$1.err" && ok || bad "$1: stderr lacks '$2': $(tail -2 "$TMP/$1.err")"; }

run uniform 0
run weighted 0 -e "$(weight w)" && contains weighted "weighted sampling: draw weights from edge feature 'w'"
run weighted0 0 -e "$(weight w)" -e 's/train_main_num_workers: "2"/train_main_num_workers: "0"/'
cmp -s "$TMP/weighted/model.safetensors" "$TMP/weighted0/model.safetensors" && ok ||
  bad "weighted: the model differs between 2 and 0 sampler threads"
cmp -s "$TMP/weighted/model.safetensors" "$TMP/uniform/model.safetensors" && bad "weighted: the same model as uniform" || ok
run mask 0 -e "$(weight mask)"
run replace 0 -e "$(weight w)" -e 's/^\(    seed: .*\)$/\1\n    sample_with_replacement: "true"/'
run fanout_all 0 -e "$(weight w)" -e 's/num_neighbors: "\[10, 10\]"/num_neighbors: "[-1, 5]"/'

run neg 2 -e "$(weight neg)" && contains neg "neg.npy: row 5: sampling weight -1 is negative"
run nan 2 -e "$(weight nan)" -e "s#$TMP/cora#$TMP/cora_nan#" && contains nan "nan.npy: row 7"
run wide 2 -e "$(weight wide)" && contains wide "edge feature 'wide' has 2 columns"
run unknown 2 -e "$(weight nope)" && contains unknown "trainerArgs.sampling_weight: .*no edge feature 'nope'"
run badname 2 -e "$(weight 'a:b')" && contains badname "sampling_weight"
# cgnn bench sample --weights (a smoke run: the line is there, not its numbers)
"$CGNN" bench sample --dataset "$TMP/cora" --weights w --fanouts 5,5 --batch 64 --batches 2 --reps 1 --threads 1 \
  >"$TMP/bench.out" 2>"$TMP/bench.err" && ok || bad "bench sample --weights: $(tail -2 "$TMP/bench.err")"
grep -q "^weighted sample 1 thread : .* ns per sampled edge (uniform .*x)" "$TMP/bench.out" && ok ||
  bad "bench sample --weights: no weighted line: $(cat "$TMP/bench.out")"
"$CGNN" bench sample --dataset "$TMP/cora" --weights neg --fanouts 5 --batches 1 --reps 1 --threads 1 \
  >"$TMP/bench_neg.out" 2>"$TMP/bench_neg.err"
rc=$?
[[ $rc == 2 ]] && grep -q "neg.npy: row 5" "$TMP/bench_neg.err" && ok || bad "bench --weights neg: exit $rc: $(tail -2 "$TMP/bench_neg.err")"

# a typed dataset: weights on two of its six edge types (the others sample uniformly)
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
    w[3] = -2; np.save(d + '/neg-' + t + '.npy', w)
" "$TMP/dblp" || { echo "FAIL: typed fixture"; exit 1; }
feat() { printf '  - domain: edge\n    type: "%s"\n    name: %s\n    format: numpy\n    path: %s-%s.npy\n' "$1" "$2" "$2" "$(echo "$1" | tr : -)"; }
{
  sed -n '1,/^feature_data:/p' data/dblp-mini/metadata.yaml
  feat paper:written_by:author w; feat term:term_of:paper w; feat term:term_of:paper neg
  sed -n '/^feature_data:/,$p' data/dblp-mini/metadata.yaml | tail -n +2
} > "$TMP/dblp/metadata.yaml"
# typed NAME RC [sed expressions...] — a 1-epoch typed run
typed() {
  local name=$1 want=$2
  shift 2
  sed -e "s#out/[a-z_]*/#$TMP/$name/#g" -e "s#data/dblp-mini#$TMP/dblp#" -e 's/num_epochs: "[0-9]*"/num_epochs: "1"/' \
    "$@" examples/dblp_hetero_sage.yaml > "$TMP/$name.yaml"
  "$CGNN" train --job_name="$name" --task_config_uri="$TMP/$name.yaml" \
    --resource_config_uri="file://$TMP/resource.yaml" >"$TMP/$name.out" 2>"$TMP/$name.err"
  local rc=$?
  [[ $rc == "$want" ]] && ok || { bad "$name: exit $rc, expected $want: $(tail -3 "$TMP/$name.err")"; return 1; }
}
typed typed 0 -e "$(weight w)" &&
  contains typed "edge feature 'w' of edge types paper:written_by:author, term:term_of:paper (the others uniform)"
typed typed0 0 -e "$(weight w)" -e 's/train_main_num_workers: "2"/train_main_num_workers: "0"/'
cmp -s "$TMP/typed/model.safetensors" "$TMP/typed0/model.safetensors" && ok ||
  bad "typed: the model differs between 2 and 0 sampler threads"
typed typed_uniform 0
cmp -s "$TMP/typed/model.safetensors" "$TMP/typed_uniform/model.safetensors" && bad "typed: the same model as uniform" || ok
typed typed_neg 2 -e "$(weight neg)" && contains typed_neg "neg-term-term_of-paper.npy: row 3: sampling weight -2 is negative"
typed typed_none 2 -e "$(weight nope)" && contains typed_none "no edge type of .* has an edge feature 'nope'"

echo "test_train_weighted: $pass passed, $fails failed"
[[ $fails -eq 0 ]]
