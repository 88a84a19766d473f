#!/usr/bin/env bash
# test_lp_anchors.sh CGNN — link prediction with GiGL's anchor batching (lp_batching: anchors,
# max_labels_per_anchor_node; docs/CONFIG.md, "Link prediction batching"):
#   - typed (data/lastfm-mini, user:listens:artist, HeteroSAGE) with every positive, a whole epoch,
#     and homogeneous (data/facebook-lp, GraphSAGE) with max_labels_per_anchor_node 8: exit 0, the
#     log line naming the anchor batches, test metrics and eval_metrics.json written;
#   - 0 and 2 sampler threads give bitwise the same model; anchors give another model than pairs;
#   - the epoch's batch count is ceil(anchors / batch_size);
#   - a labelled typed split (listed hard negatives, capped) trains under anchor batching;
#   - the other task_path losses (BPR, Softmax, Margin, DirectAU beside Retrieval) train on them;
#   - exact resume (checkpoint_every_n_batches) gives the uninterrupted model; a state written
#     with pairs batching is refused by an anchors job (exit 2, naming lp_batching);
#   - mpirun -np 2 (anchors sliced over the ranks) runs and writes its metrics;
#   - errors, exit 2 naming the field: max_labels_per_anchor_node with lp_batching: pairs, and
#     anchor batching on a partitioned graph.
set -u
CGNN=${1:?usage: test_lp_anchors.sh path/to/cgnn}
SRC=${CGNN_SOURCE_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
PY=/usr/bin/python3
TMP=$(mktemp -d /tmp/cgnn-lp-anchors-XXXXXX)
trap 'rm -rf "$TMP"' EXIT
cd "$SRC"
fails=0
pass=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }
train() { # train NAME — cgnn train on $TMP/NAME.yaml; stdout in $TMP/NAME.out, stderr in .err
  timeout -k 10 300 "$CGNN" train --task_config_uri="$TMP/$1.yaml" >"$TMP/$1.out" 2>"$TMP/$1.err"
}
has_metrics() { # has_metrics NAME — test metrics printed and eval_metrics.json written
  grep -q "^test: .*mrr [0-9.]* .*HitRate_at_10 [0-9.]*" "$TMP/$1.out" &&
    grep -q '"name": "mrr", "numberValue": "[0-9.]*"' "$TMP/$1/eval_metrics.json"
}

# ---- typed: lastfm-mini, 64 users a batch with all their artists, a whole epoch ----
lastfm() { # lastfm NAME WORKERS [sed expressions...]
  local name=$1 w=$2
  shift 2
  sed -e "s#out/[a-z_]*/#$TMP/$name/#g" -e 's/hidden_dim: "64"/hidden_dim: "32"/' \
    -e 's/node_embedding_dim: "64"/node_embedding_dim: "16"/' \
    -e 's/random_negative_sample_batch_size: "512"/random_negative_sample_batch_size: "128"/' \
    -e 's/num_epochs: "10"/num_epochs: "1"\n    num_val_batches: "2"\n    num_test_batches: "3"/' \
    -e "s/train_main_num_workers: \"2\"/train_main_num_workers: \"$w\"/" "$@" examples/lastfm_hetero_sage_lp.yaml \
    > "$TMP/$name.yaml"
}
ANCH=(-e 's/main_sample_batch_size: "512"/main_sample_batch_size: "64"\n    lp_batching: anchors/')
for w in 0 2; do
  lastfm "lf$w" "$w" "${ANCH[@]}"
  train "lf$w" && ok || bad "lastfm-mini anchors ($w sampler threads): $(tail -3 "$TMP/lf$w.err")"
done
grep -q "link prediction batches: 64 anchors with all their positives" "$TMP/lf0.err" && ok \
  || bad "no anchor-batching log line: $(cat "$TMP/lf0.err")"
# every training user once: ceil(users / 64) steps
users=$("$PY" -c "import numpy as np; print(len(np.unique(np.load('data/lastfm-mini/lp-train-seeds.npy')[:, 0])))")
grep -q " $users training anchors" "$TMP/lf0.err" && ok \
  || bad "log does not count $users training anchors: $(grep 'link prediction batches' "$TMP/lf0.err")"
grep -q "^trained $(( (users + 63) / 64 )) steps" "$TMP/lf0.out" && ok || bad "lastfm: $(tail -1 "$TMP/lf0.out")"
has_metrics lf0 && ok || bad "lastfm-mini anchors: no metrics: $(cat "$TMP/lf0.out")"
cmp -s "$TMP/lf0/model.safetensors" "$TMP/lf2/model.safetensors" && ok \
  || bad "lastfm-mini anchors: 0 and 2 sampler threads give different weights"
lastfm lfpairs 0 -e 's/main_sample_batch_size: "512"/main_sample_batch_size: "64"/'
train lfpairs && ok || bad "lastfm-mini pairs: $(tail -3 "$TMP/lfpairs.err")"
cmp -s "$TMP/lf0/model.safetensors" "$TMP/lfpairs/model.safetensors" && bad "anchors and pairs give the same model" || ok

# ---- the other task_path losses take anchor batches as they take pair batches ----
lastfm tasks 0 "${ANCH[@]}" -e 's/    seed: "0"/    seed: "0"\n    task_path: "{Retrieval: 1.0, BPR: {weight: 0.5, num_negatives: 4}, Softmax: 0.5, Margin: 0.2, DirectAU: 0.2}"/' \
  -e 's/softmax_temp: "0.07"//' -e 's/should_remove_accidental_hits: "true"//'
train tasks && has_metrics tasks && grep -q "^train: .*loss [0-9.]*\|epoch 1/1  train loss [0-9.]" "$TMP/tasks.err" "$TMP/tasks.out" && ok \
  || bad "task_path losses with anchor batches: $(tail -3 "$TMP/tasks.err")"

# ---- exact resume: killed at step 5 of 10 (a state every 3 steps), resumed: the same model ----
for r in res_ref res; do
  lastfm "$r" 0 "${ANCH[@]}" -e 's/    seed: "0"/    seed: "0"\n    checkpoint_every_n_batches: "3"/'
done
train res_ref && ok || bad "resume reference run: $(tail -3 "$TMP/res_ref.err")"
CGNN_TEST_EXIT_AT_STEP=5 train res; rc=$?
[[ $rc -ne 0 && ! -e $TMP/res/model.safetensors && -e $TMP/res/model.safetensors.state ]] && ok \
  || bad "the interrupted run: exit $rc, files $(ls "$TMP/res" 2>/dev/null)"
train res && grep -q "resuming from the training state" "$TMP/res.err" && ok || bad "resume: $(tail -3 "$TMP/res.err")"
cmp -s "$TMP/res_ref/model.safetensors" "$TMP/res/model.safetensors" && ok \
  || bad "anchor batching: the resumed run's model differs from the uninterrupted one"
# a state of pairs batching is not resumed with anchors
lastfm res_pairs 0 -e 's/main_sample_batch_size: "512"/main_sample_batch_size: "64"/' \
  -e 's/    seed: "0"/    seed: "0"\n    checkpoint_every_n_batches: "3"/'
CGNN_TEST_EXIT_AT_STEP=5 train res_pairs
lastfm res_pairs 0 "${ANCH[@]}" -e 's/    seed: "0"/    seed: "0"\n    checkpoint_every_n_batches: "3"/'
train res_pairs; rc=$?
[[ $rc -eq 2 ]] && grep -q "cannot resume.*lp_batching" "$TMP/res_pairs.err" && ok \
  || bad "a pairs state resumed with anchors: exit $rc: $(tail -3 "$TMP/res_pairs.err")"

# ---- labelled typed split: listed hard negatives travel with their anchor (capped at 2) ----
"$PY" - "$SRC/data/lastfm-mini" "$TMP/lab" <<'PY' || bad "writing the labelled dataset"
import os, sys
import numpy as np
src, d = sys.argv[1:3]
os.makedirs(d)
rng = np.random.default_rng(11)
for f in os.listdir(src):
    if f.startswith("edges-"): os.symlink(os.path.join(src, f), os.path.join(d, f))
for name in ("train", "valid", "test"):
    pairs = np.load(os.path.join(src, f"lp-{name}-seeds.npy"))
    users = np.unique(pairs[:, 0])
    negs = np.stack([np.repeat(users, 3), rng.integers(0, 8271, 3 * len(users))], axis=1)
    rows = np.concatenate([pairs, negs]).astype(np.int64)
    labels = np.concatenate([np.ones(len(pairs)), np.zeros(len(negs))]).astype(np.int64)
    perm = rng.permutation(len(rows))
    np.save(os.path.join(d, f"{name}-seeds.npy"), rows[perm])
    np.save(os.path.join(d, f"{name}-labels.npy"), labels[perm])
meta = open(os.path.join(src, "metadata.yaml")).read()
meta = meta[:meta.index("tasks:")].replace("dataset_name: lastfm-mini", "dataset_name: lastfm-labelled")
meta += "tasks:\n  - name: link_prediction\n"
for split, name in (("train_set", "train"), ("validation_set", "valid"), ("test_set", "test")):
    meta += f"    {split}:\n      - type: \"user:listens:artist\"\n        data:\n"
    for f in ("seeds", "labels"):
        meta += f"          - {{name: {f}, format: numpy, path: {name}-{f}.npy}}\n"
open(os.path.join(d, "metadata.yaml"), "w").write(meta)
PY
for w in 0 2; do
  lastfm "lab$w" "$w" -e "s#preprocessedMetadataUri: .*#preprocessedMetadataUri: $TMP/lab#" \
    -e 's/main_sample_batch_size: "512"/main_sample_batch_size: "32"\n    max_labels_per_anchor_node: "2"/'
  train "lab$w" && ok || bad "labelled lastfm anchors ($w sampler threads): $(tail -3 "$TMP/lab$w.err")"
done
has_metrics lab0 && ok || bad "labelled anchors: no metrics: $(cat "$TMP/lab0.out")"
cmp -s "$TMP/lab0/model.safetensors" "$TMP/lab2/model.safetensors" && ok \
  || bad "labelled anchors: 0 and 2 sampler threads give different weights"

# ---- homogeneous: facebook-lp, 64 anchors a batch with their first 8 positives ----
fb() { # fb NAME WORKERS [sed expressions...]
  local name=$1 w=$2
  shift 2
  sed -e "s#out/[a-z_]*/#$TMP/$name/#g" -e 's/hidden_dim: "128"/hidden_dim: "16"/' \
    -e 's/num_neighbors: "\[10, 10\]"/num_neighbors: "[4, 4]"/' \
    -e 's/main_sample_batch_size: "512"/main_sample_batch_size: "64"\n    max_labels_per_anchor_node: "8"/' \
    -e 's/random_negative_sample_batch_size: "512"/random_negative_sample_batch_size: "64"/' \
    -e 's/num_epochs: "4"/num_epochs: "1"\n    num_max_train_batches: "8"\n    num_test_batches: "2"/' \
    -e 's/num_val_batches: "0"/num_val_batches: "1"/' \
    -e "s/train_main_num_workers: \"1\"/train_main_num_workers: \"$w\"/" "$@" examples/facebook_lp_graphsage.yaml \
    > "$TMP/$name.yaml"
}
for w in 0 2; do
  fb "fb$w" "$w"
  train "fb$w" && ok || bad "facebook-lp anchors ($w sampler threads): $(tail -3 "$TMP/fb$w.err")"
done
has_metrics fb0 && ok || bad "facebook-lp anchors: no metrics: $(cat "$TMP/fb0.out")"
cmp -s "$TMP/fb0/model.safetensors" "$TMP/fb2/model.safetensors" && ok \
  || bad "facebook-lp anchors: 0 and 2 sampler threads give different weights"
grep -q "link prediction batches: 64 anchors with their first 8 positives" "$TMP/fb0.err" && ok \
  || bad "facebook-lp: no anchor-batching log line: $(cat "$TMP/fb0.err")"
grep -q "max_labels_per_anchor_node: GiGL's anchor batching" "$TMP/fb0.err" && ok || bad "no note for the GiGL name"

# ---- mpirun -np 2: anchors sliced over the ranks ----
if ! "$CGNN" --version | grep -q "distributed: MPI"; then
  echo "SKIP (mpirun part): serial build (CGNN_WITH_MPI=OFF)"
elif ! command -v mpirun >/dev/null; then
  echo "SKIP (mpirun part): mpirun not installed (openmpi-bin)"
else
  MPIRUN=(mpirun --oversubscribe --bind-to none -np 2)
  [[ $(id -u) -eq 0 ]] && MPIRUN+=(--allow-run-as-root)
  export OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none
  [[ ${CGNN_TEST_SANITIZED:-0} == 1 ]] && export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0"
  fb fbmpi 1
  timeout -k 10 300 "${MPIRUN[@]}" "$CGNN" train --task_config_uri="$TMP/fbmpi.yaml" >"$TMP/fbmpi.out" 2>"$TMP/fbmpi.err" \
    && ok || bad "mpirun -np 2 facebook-lp anchors: $(tail -5 "$TMP/fbmpi.err")"
  has_metrics fbmpi && ok || bad "mpirun -np 2: no metrics: $(cat "$TMP/fbmpi.out")"
  # a whole lastfm epoch: 10 batches of 64 users, 5 per rank
  lastfm lfmpi 1 "${ANCH[@]}"
  timeout -k 10 300 "${MPIRUN[@]}" "$CGNN" train --task_config_uri="$TMP/lfmpi.yaml" >"$TMP/lfmpi.out" 2>"$TMP/lfmpi.err" \
    && has_metrics lfmpi && ok || bad "mpirun -np 2 lastfm-mini anchors: $(tail -5 "$TMP/lfmpi.err")"
  grep -q "^trained $(( ((users + 63) / 64 + 1) / 2 )) steps" "$TMP/lfmpi.out" && ok || bad "mpirun: $(tail -1 "$TMP/lfmpi.out")"
fi

# ---- errors ----
lastfm conflict 0 -e 's/main_sample_batch_size: "512"/main_sample_batch_size: "64"\n    lp_batching: pairs\n    max_labels_per_anchor_node: "5"/'
train conflict; rc=$?
[[ $rc -eq 2 ]] && grep -q "conflict.yaml.*max_labels_per_anchor_node.*lp_batching: pairs" "$TMP/conflict.err" && ok \
  || bad "max_labels_per_anchor_node with lp_batching: pairs: exit $rc: $(cat "$TMP/conflict.err")"
[[ ! -e $TMP/conflict/model.safetensors ]] && ok || bad "a refused run wrote a model"
if "$CGNN" partition --dataset data/facebook-lp --num_parts 1 --method random --out "$TMP/fbparts" >"$TMP/part.log" 2>&1; then
  fb parted 0 -e "s#preprocessedMetadataUri: .*#preprocessedMetadataUri: $TMP/fbparts#"
  train parted; rc=$?
  [[ $rc -eq 2 ]] && grep -q "lp_batching: anchors.*not available on a partitioned graph" "$TMP/parted.err" && ok \
    || bad "anchor batching on a partitioned graph: exit $rc: $(tail -3 "$TMP/parted.err")"
else
  bad "cgnn partition facebook-lp: $(tail -3 "$TMP/part.log")"
fi

echo "test_lp_anchors: $pass passed, $fails failed"
[[ $fails -eq 0 ]]
