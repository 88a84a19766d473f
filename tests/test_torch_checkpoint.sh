#!/usr/bin/env bash
# test_torch_checkpoint.sh CGNN — trainedModelUri ending in .pt: PyTorch's own format holding the
# state_dict of GiGL's model classes (train/gigl_ckpt.h), end to end:
#   - cgnn -> PyTorch: Cora node classification (GraphSAGE, GCN, GAT) and link prediction on a
#     generated graph (GraphSAGE, learnable node embeddings, L2-normalised output) trained to .pt;
#     tests/check_torch_checkpoint.py torch.loads each (also weights_only=True), loads it with
#     load_state_dict(strict=True) into re-implementations of GiGL's HomogeneousNodeClassificationGNN
#     / LinkPredictionGNN (GiGL's GraphSAGE encoder, PyG's GCN / GAT) and compares their full-graph
#     output with `cgnn embed`'s;
#   - round trips: shouldSkipTraining on the .pt gives the training run's test metrics exactly; the
#     same job writing .safetensors gives the same metrics and the same embeddings, bit for bit; a
#     typed model (HeteroSAGE on dblp-mini) writes `_encoder.*` keys and evaluates the same again;
#   - PyTorch -> cgnn: checkpoints torch.save wrote for GiGL models with torch's random init
#     (a random Linear head for node classification: folded into GraphSAGE's / GCN's last layer)
#     give `cgnn embed` the torch model's output and shouldSkipTraining (GraphSAGE, all neighbours)
#     its test accuracy; a GAT with a random head is refused (exit 2, saying why);
#   - errors: a .pt for node classification with hidden_dim < classes is refused before training
#     (exit 2 naming trainedModelUri, nothing written); a node classification .pt evaluated as link
#     prediction is refused naming `_head.weight`.
set -u
CGNN=${1:?usage: test_torch_checkpoint.sh path/to/cgnn}
SRC=${CGNN_SOURCE_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
PY=/usr/bin/python3
if ! "$PY" -c "import torch, numpy" 2>/dev/null; then
  echo "SKIP: test_torch_checkpoint.sh needs /usr/bin/python3 with torch and numpy (scripts/install-deps.sh --test)"
  exit 77
fi
CHECK="$SRC/tests/check_torch_checkpoint.py"
TMP=$(mktemp -d /tmp/cgnn-torchckpt-XXXXXX)
trap 'rm -rf "$TMP"' EXIT
cd "$SRC"
fails=0
pass=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }
printf 'trainer_resource_config:\n  local_trainer_config: {num_workers: 2}\n' > "$TMP/resource.yaml"
CORA=(--edges data/cora/edges.npy --features data/cora/node-feat.npy --row_normalize)

# config EXAMPLE NAME EXT [sed expressions...] — $TMP/NAME.yaml, outputs under $TMP/NAME/, model.EXT
config() {
  local ex=$1 name=$2 ext=$3
  shift 3
  sed -e "s#out/[a-z_]*/model.safetensors#$TMP/$name/model.$ext#" -e "s#out/[a-z_]*/#$TMP/$name/#g" "$@" \
    "examples/$ex.yaml" > "$TMP/$name.yaml"
}
run() { # run CMD NAME [flags...]: cgnn CMD on $TMP/NAME.yaml, output in $TMP/NAME.CMD.{out,err}
  local cmd=$1 name=$2
  shift 2
  "$CGNN" "$cmd" --task_config_uri="$TMP/$name.yaml" --resource_config_uri="$TMP/resource.yaml" "$@" \
    >"$TMP/$name.$cmd.out" 2>"$TMP/$name.$cmd.err"
}
skip_training() { # skip_training NAME NEW [sed...]: NEW.yaml = NAME.yaml evaluating NAME's model
  local name=$1 new=$2
  shift 2
  sed -e 's/shouldSkipTraining: false/shouldSkipTraining: true/' \
      -e "s#evalMetricsUri: $TMP/$name/eval_metrics.json#evalMetricsUri: $TMP/$new/eval_metrics.json#" \
      -e "s#tensorboardLogsUri: $TMP/$name/tensorboard/#tensorboardLogsUri: $TMP/$new/tensorboard/#" \
      "$@" "$TMP/$name.yaml" > "$TMP/$new.yaml"
  grep -q "shouldSkipTraining: true" "$TMP/$new.yaml" ||
    sed -i 's/^  trainedModelMetadata:/  shouldSkipTraining: true\n  trainedModelMetadata:/' "$TMP/$new.yaml"
}
test_line() { grep '^test:' "$TMP/$1.train.out"; }
# pycheck ARGS: check_torch_checkpoint.py's `check` (PyTorch reads what cgnn wrote and agrees with
# `cgnn embed`). The sanitized pass skips it: the file and the numbers are the plain pass's, and
# the C that wrote them ran here under the sanitizers all the same (its Python side is no C).
pycheck() {
  [[ ${CGNN_TEST_SANITIZED:-0} == 1 ]] && return 0
  "$PY" "$CHECK" check "$@"
}

# ---- 1. Cora node classification: GraphSAGE, GCN, GAT -> .pt -> PyTorch ----
EPOCHS=(-e 's/num_epochs: "200"/num_epochs: "4"/')
config cora_graphsage sage pt "${EPOCHS[@]}"
config cora_graphsage sage_st safetensors "${EPOCHS[@]}"
config cora_gcn gcn pt "${EPOCHS[@]}"
config cora_gat gat pt "${EPOCHS[@]}"
for n in sage sage_st gcn gat; do
  if run train "$n" && run embed "$n"; then ok; else bad "$n: train / embed failed: $(tail -3 "$TMP/$n".*.err)"; continue; fi
done
[[ -s $TMP/sage/model.pt && ! -e $TMP/sage/model.safetensors ]] && ok || bad "sage: no model.pt"
pycheck --model "$TMP/sage/model.pt" --embeddings "$TMP/sage/embeddings.npy" "${CORA[@]}" \
  --kind sage --task nc --hidden 128 --out_dim 7 && ok || bad "GraphSAGE (Cora, NC): the GiGL model disagrees"
pycheck --model "$TMP/gcn/model.pt" --embeddings "$TMP/gcn/embeddings.npy" "${CORA[@]}" \
  --kind gcn --task nc --hidden 16 --out_dim 7 && ok || bad "GCN (Cora, NC): the GiGL model disagrees"
pycheck --model "$TMP/gat/model.pt" --embeddings "$TMP/gat/embeddings.npy" "${CORA[@]}" \
  --kind gat --task nc --hidden 64 --heads 8 --out_dim 7 && ok || bad "GAT (Cora, NC): the GiGL model disagrees"
# the same job, .safetensors: the same metrics, the same embeddings
cmp -s "$TMP/sage/eval_metrics.json" "$TMP/sage_st/eval_metrics.json" && ok \
  || bad "metrics differ between .pt and .safetensors: $(cat "$TMP/sage/eval_metrics.json" "$TMP/sage_st/eval_metrics.json")"
cmp -s "$TMP/sage/embeddings.npy" "$TMP/sage_st/embeddings.npy" && ok || bad "embeddings differ between .pt and .safetensors"
# shouldSkipTraining reads the .pt back: the same test metrics
for n in sage gat; do
  skip_training "$n" "${n}_skip"
  if run train "${n}_skip"; then
    [[ "$(test_line "${n}_skip")" == "$(test_line "$n")" ]] && ok \
      || bad "$n shouldSkipTraining: '$(test_line "${n}_skip")' != '$(test_line "$n")'"
    cmp -s "$TMP/$n/eval_metrics.json" "$TMP/${n}_skip/eval_metrics.json" && ok || bad "$n: eval_metrics.json differs"
    grep -q "shouldSkipTraining: loaded $TMP/$n/model.pt" "$TMP/${n}_skip.train.err" && ok || bad "$n: no load line"
  else bad "$n shouldSkipTraining failed: $(tail -3 "$TMP/${n}_skip.train.err")"; fi
done

# ---- 2. link prediction (generated graph): learnable embeddings, L2-normalised output ----
GEN="$TMP/gen"
"$CGNN" generate --out "$GEN" --nodes 500 --avg_degree 6 --classes 4 --feat_dim 12 --link_prediction --seed 5 \
  >/dev/null 2>&1 && ok || bad "generate failed"
config facebook_lp_graphsage lp pt -e "s#preprocessedMetadataUri: .*#preprocessedMetadataUri: $GEN#" \
  -e 's/hidden_dim: "128"/hidden_dim: "16"\n    out_channels: "8"\n    node_embedding_dim: "4"/' \
  -e 's/num_epochs: "4"/num_epochs: "2"/' -e 's/main_sample_batch_size: "512"/main_sample_batch_size: "64"/' \
  -e 's/random_negative_sample_batch_size: "512"/random_negative_sample_batch_size: "64"/' \
  -e 's/random_negative_sample_batch_size_for_evaluation: "100"/random_negative_sample_batch_size_for_evaluation: "20"/'
if run train lp && run embed lp; then
  ok
  pycheck --model "$TMP/lp/model.pt" --embeddings "$TMP/lp/embeddings.npy" --edges "$GEN/edges.npy" \
    --features "$GEN/node-feat.npy" --kind sage --task lp --hidden 16 --out_dim 8 --l2 1 --emb_dim 4 && ok \
    || bad "GraphSAGE (LP, embeddings): the GiGL model disagrees"
  skip_training lp lp_skip
  if run train lp_skip; then
    [[ "$(test_line lp_skip)" == "$(test_line lp)" ]] && ok || bad "LP shouldSkipTraining: '$(test_line lp_skip)' != '$(test_line lp)'"
  else bad "LP shouldSkipTraining failed: $(tail -3 "$TMP/lp_skip.train.err")"; fi
else bad "LP train / embed failed: $(tail -3 "$TMP"/lp.*.err)"; fi

# ---- 3. a typed model: `_encoder.` + its own keys, read back the same ----
config dblp_hetero_sage typed pt -e 's/num_epochs: "40"/num_epochs: "2"/'
if run train typed; then
  "$PY" - "$TMP/typed/model.pt" <<'PY' && ok || bad "typed .pt keys"
import sys, torch
sd = torch.load(sys.argv[1], weights_only=True)
keys = list(sd)
assert keys and all(k.startswith("_encoder.") or k.startswith("embedding_dict.") for k in keys), keys
assert any(k.startswith("_encoder.lin_dict.") for k in keys) and any(".convs." in k for k in keys), keys
assert sd._metadata["cgnn"]["cgnn_model"] == "HeteroSAGE", sd._metadata
print("typed: %d tensors, e.g. %s" % (len(keys), keys[:2]))
PY
  skip_training typed typed_skip
  if run train typed_skip; then
    [[ "$(test_line typed_skip)" == "$(test_line typed)" ]] && ok \
      || bad "typed shouldSkipTraining: '$(test_line typed_skip)' != '$(test_line typed)'"
  else bad "typed shouldSkipTraining failed: $(tail -3 "$TMP/typed_skip.train.err")"; fi
else bad "typed training failed: $(tail -3 "$TMP/typed.train.err")"; fi

# ---- 4. PyTorch -> cgnn: checkpoints torch.save wrote for GiGL models ----
ALL=(-e 's/num_neighbors: "\[10, 10\]"/num_neighbors: "[-1, -1]"/')
for kind in sage gcn; do
  name=gigl_$kind
  acc=$("$PY" "$CHECK" make --model "$TMP/$name.pt" --embeddings "$TMP/$name.torch.npy" "${CORA[@]}" --kind $kind \
        --task nc --hidden 16 --out_dim 7 --seed 3 --test_seeds data/cora/nc-test-seeds.npy \
        --test_labels data/cora/nc-test-labels.npy) && ok || bad "$kind: making the torch checkpoint failed"
  ex=cora_graphsage; [[ $kind == gcn ]] && ex=cora_gcn
  config $ex "$name" pt "${ALL[@]}" -e 's/hidden_dim: "128"/hidden_dim: "16"/'
  sed -i -e "s#trainedModelUri: .*#trainedModelUri: $TMP/$name.pt#" -e 's/shouldSkipTraining: false/shouldSkipTraining: true/' "$TMP/$name.yaml"
  grep -q "shouldSkipTraining: true" "$TMP/$name.yaml" ||
    sed -i 's/^  trainedModelMetadata:/  shouldSkipTraining: true\n  trainedModelMetadata:/' "$TMP/$name.yaml"
  if run embed "$name" --out "$TMP/$name.cgnn.npy"; then
    "$PY" - "$TMP/$name.torch.npy" "$TMP/$name.cgnn.npy" "$kind" <<'PY' && ok || bad "$kind: cgnn embed of torch's checkpoint differs"
import sys, numpy as np
t, c = np.load(sys.argv[1]).astype(np.float64), np.load(sys.argv[2]).astype(np.float64)
err = np.abs(t - c).max() / (1 + np.abs(t).max())
print("torch.save of GiGL's %s NC model (random head folded): cgnn embed vs torch: max difference %.2e" % (sys.argv[3], err))
assert t.shape == c.shape and err < 1e-5, (t.shape, c.shape, err)
PY
  else bad "$kind: cgnn embed of torch's checkpoint failed: $(tail -3 "$TMP/$name.embed.err")"; fi
  if run train "$name" && [[ $kind == gcn ]]; then
    ok # (GCN's sampled evaluation normalises the outermost sources by their sampled degree, not the graph's)
  elif [[ -s $TMP/$name/eval_metrics.json ]]; then
    got=$(sed -n 's/.*"name": "acc", "numberValue": "\([0-9.]*\)".*/\1/p' "$TMP/$name/eval_metrics.json")
    "$PY" -c "import sys; a, b = float(sys.argv[1]), float(sys.argv[2]); print('test accuracy: torch %.4f, cgnn shouldSkipTraining %.4f' % (a, b)); sys.exit(abs(a - b) > 1e-5)" \
      "$acc" "$got" && ok || bad "$kind: accuracy torch $acc vs cgnn $got"
  else bad "$kind: shouldSkipTraining on torch's checkpoint failed: $(tail -3 "$TMP/$name.train.err")"; fi
done
# a GAT with a head that is not [I | 0]: refused, saying why
"$PY" "$CHECK" make --model "$TMP/gigl_gat.pt" --embeddings "$TMP/gigl_gat.torch.npy" "${CORA[@]}" --kind gat \
  --task nc --hidden 16 --heads 2 --out_dim 7 --seed 3 >/dev/null && ok || bad "gat: making the torch checkpoint failed"
config cora_gat gigl_gat pt -e "s#trainedModelUri: .*#trainedModelUri: $TMP/gigl_gat.pt#"
run embed gigl_gat --out "$TMP/gigl_gat.cgnn.npy"
rc=$?
[[ $rc == 2 ]] && grep -q "gigl_gat.pt.*cannot take another Linear head" "$TMP/gigl_gat.embed.err" && ok \
  || bad "GAT with a random head: exit $rc, $(cat "$TMP/gigl_gat.embed.err")"
# link prediction, L2-normalised (what GiGL's example trains), on the generated graph
"$PY" "$CHECK" make --model "$TMP/gigl_lp.pt" --embeddings "$TMP/gigl_lp.torch.npy" --edges "$GEN/edges.npy" \
  --features "$GEN/node-feat.npy" --kind sage --task lp --hidden 16 --out_dim 8 --l2 1 --seed 4 && ok || bad "lp: make failed"
sed -e "s#trainedModelUri: .*#trainedModelUri: $TMP/gigl_lp.pt#" -e '/node_embedding_dim/d' "$TMP/lp.yaml" > "$TMP/gigl_lp.yaml"
if run embed gigl_lp --out "$TMP/gigl_lp.cgnn.npy"; then
  "$PY" -c "
import sys, numpy as np
t, c = np.load('$TMP/gigl_lp.torch.npy').astype(np.float64), np.load('$TMP/gigl_lp.cgnn.npy').astype(np.float64)
err = np.abs(t - c).max(); print('torch.save of GiGL LinkPredictionGNN (GraphSAGE, L2): cgnn embed vs torch: max difference %.2e' % err)
sys.exit(not (t.shape == c.shape and err < 1e-5))" && ok || bad "lp: cgnn embed of torch's checkpoint differs"
else bad "lp: cgnn embed of torch's checkpoint failed: $(tail -3 "$TMP/gigl_lp.embed.err")"; fi

# ---- 5. errors ----
config cora_graphsage narrow pt -e 's/hidden_dim: "128"/hidden_dim: "4"/'
run train narrow
rc=$?
[[ $rc == 2 ]] && grep -q "narrow.yaml: sharedConfig.trainedModelMetadata.trainedModelUri: '$TMP/narrow/model.pt'.*out_channels 7 (the classes) must be <= hidden_dim 4" "$TMP/narrow.train.err" \
  && ok || bad "NC .pt with hidden_dim 4: exit $rc, $(cat "$TMP/narrow.train.err")"
[[ ! -e $TMP/narrow/model.pt && ! -e $TMP/narrow/eval_metrics.json ]] && ok || bad "narrow: outputs written"
sed -e "s#trainedModelUri: .*#trainedModelUri: $TMP/sage/model.pt#" -e 's/^  trainedModelMetadata:/  shouldSkipTraining: true\n  trainedModelMetadata:/' \
  "$TMP/lp.yaml" > "$TMP/wrongtask.yaml"
run train wrongtask
rc=$?
[[ $rc == 2 ]] && grep -q "sage/model.pt: '_head.weight': a node classification checkpoint, but this is link prediction" \
  "$TMP/wrongtask.train.err" && ok || bad "NC .pt evaluated as LP: exit $rc, $(cat "$TMP/wrongtask.train.err")"

echo "test_torch_checkpoint: $pass passed, $fails failed"
[[ $fails -eq 0 ]]
