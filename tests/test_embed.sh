#!/usr/bin/env bash
# test_embed.sh CGNN — `cgnn embed` end to end on Cora:
#   - a short `cgnn train`, then `cgnn embed`: an (N, classes) float32 .npy beside the model;
#   - the embeddings equal an independent numpy re-implementation of full-graph GraphSAGE from
#     the checkpoint, and their argmax scores the trainer's test accuracy within 0.03;
#   - the same bits for another --batch, with --activations_dir (files removed afterwards), and
#     under `mpirun -np 2` (skipped with a message without mpirun / in a serial build);
#   - should_l2_normalize_embedding_layer_output: unit rows;
#   - errors: missing checkpoint -> exit 2 naming trainedModelUri; a checkpoint whose dims do not
#     fit the dataset -> exit 2 naming in_channels; bad flags -> exit 2.
set -u
CGNN=${1:?usage: test_embed.sh path/to/cgnn}
SRC=${CGNN_SOURCE_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
PY=/usr/bin/python3
TMP=$(mktemp -d /tmp/cgnn-embed-XXXXXX)
trap 'rm -rf "$TMP"' EXIT
cd "$SRC"
fails=0
pass=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }
printf 'trainer_resource_config:\n  local_trainer_config: {num_workers: 2}\n' > "$TMP/resource.yaml"

# config NAME [sed expressions...] — Cora GraphSAGE example, outputs under $TMP/NAME/, 20 epochs
config() {
  local out=$1
  shift
  sed -e "s#out/[a-z_]*/#$TMP/$out/#g" -e 's/num_epochs: "200"/num_epochs: "20"/' "$@" \
    examples/cora_graphsage.yaml > "$TMP/$out.yaml"
}
# embed NAME [flags...] — cgnn embed on $TMP/NAME.yaml; stdout/stderr in $TMP/NAME.embed.{out,err}
embed() {
  local name=$1
  shift
  "$CGNN" embed --task_config_uri="$TMP/$name.yaml" --resource_config_uri="$TMP/resource.yaml" "$@" \
    >"$TMP/$name.embed.out" 2>"$TMP/$name.embed.err"
}

config run
if ! "$CGNN" train --quiet --task_config_uri="$TMP/run.yaml" --resource_config_uri="$TMP/resource.yaml" \
  >"$TMP/run.train.out" 2>"$TMP/run.train.err"; then
  echo "FAIL: training failed: $(cat "$TMP/run.train.err")"
  exit 1
fi
E="$TMP/run/embeddings.npy"
embed run && ok || bad "embed failed: $(cat "$TMP/run.embed.err")"
[[ -s $E ]] && ok || bad "no $E (the default output beside trainedModelUri)"
grep -q "^embeddings: 2708 x 7 float32 -> $E" "$TMP/run.embed.out" && ok || bad "summary: $(cat "$TMP/run.embed.out")"
grep -q "layer 2/2" "$TMP/run.embed.err" && ok || bad "no progress on stderr: $(cat "$TMP/run.embed.err")"

# shape, dtype, a numpy full-graph GraphSAGE from the checkpoint, and test accuracy
"$PY" - "$E" "$TMP/run/model.safetensors" "$TMP/run/eval_metrics.json" <<'PY' && ok || bad "embeddings check failed"
import json, struct, sys
import numpy as np
emb_path, model_path, metrics_path = sys.argv[1:4]
e = np.load(emb_path)
assert e.shape == (2708, 7) and e.dtype == np.float32 and e.flags["C_CONTIGUOUS"], (e.shape, e.dtype)
b = open(model_path, "rb").read(); n = struct.unpack("<Q", b[:8])[0]; h = json.loads(b[8:8 + n]); d = b[8 + n:]
P = {k: np.frombuffer(d[v["data_offsets"][0]:v["data_offsets"][1]], "<f4").reshape(v["shape"]).astype(np.float64)
     for k, v in h.items() if k != "__metadata__"}
x = np.load("data/cora/node-feat.npy").astype(np.float64)
s = np.abs(x).sum(1, keepdims=True); x = np.where(s > 0, x / np.where(s > 0, s, 1), x)   # feature_normalization: row
src, dst = np.load("data/cora/edges.npy")
deg = np.bincount(dst, minlength=len(x)).astype(np.float64)[:, None]
def sage(hin, l):
    agg = np.zeros_like(hin); np.add.at(agg, dst, hin[src]); agg /= np.maximum(deg, 1)
    return agg @ P[f"convs.{l}.lin_l.weight"].T + P[f"convs.{l}.lin_l.bias"] + hin @ P[f"convs.{l}.lin_r.weight"].T
ref = sage(np.maximum(sage(x, 0), 0), 1)
err = np.abs(e - ref).max() / (1 + np.abs(ref).max())
print(f"numpy full-graph GraphSAGE: max difference {err:.2e}")
assert err < 1e-5, err
seeds = np.load("data/cora/nc-test-seeds.npy"); labels = np.load("data/cora/nc-test-labels.npy")
acc = float((e[seeds].argmax(1) == labels).mean())
trained = float([m["numberValue"] for m in json.load(open(metrics_path))["metrics"] if m["name"] == "acc"][0])
print(f"test accuracy from the embeddings {acc:.4f}, trainer (sampled) {trained:.4f}")
assert abs(acc - trained) <= 0.03, (acc, trained)
PY

# chunking and out-of-core activations: the same bits; no layer files left behind
embed run --batch 97 --out "$TMP/b97.npy" && cmp -s "$E" "$TMP/b97.npy" && ok || bad "--batch 97 gives other bits"
# the checkpoint records its input (node feature, normalisation): a config that forgets
# feature_normalization: row still embeds with it (a warning says so), the same bits
grep -q '"node_feature":"feat"' "$TMP/run/model.safetensors" && grep -q '"feature_normalization":"row"' "$TMP/run/model.safetensors" \
  && ok || bad "the checkpoint does not record its node feature and normalisation"
sed -e '/feature_normalization: row/d' "$TMP/run.yaml" >"$TMP/nonorm.yaml"
embed nonorm --out "$TMP/nonorm.npy" && cmp -s "$E" "$TMP/nonorm.npy" && ok || bad "a config without feature_normalization: other bits"
grep -q "was trained with feature_normalization row; trainerArgs says none: the checkpoint's is used" "$TMP/nonorm.embed.err" \
  && ok || bad "no warning for the normalisation: $(cat "$TMP/nonorm.embed.err")"
mkdir -p "$TMP/act"
embed run --batch 500 --activations_dir "$TMP/act" --out "$TMP/act.npy" && cmp -s "$E" "$TMP/act.npy" && ok \
  || bad "--activations_dir gives other bits: $(cat "$TMP/run.embed.err")"
[[ -z $(ls -A "$TMP/act") ]] && ok || bad "activation files left behind: $(ls "$TMP/act")"

# data parallel: the same file from 2 ranks (in memory and with a shared activations dir)
if ! "$CGNN" --version | grep -q "distributed: MPI"; then
  echo "SKIP (mpirun part): serial build (CGNN_WITH_MPI=OFF)"
elif ! command -v mpirun >/dev/null; then
  echo "SKIP (mpirun part): mpirun not installed (openmpi-bin)"
else
  MPIRUN=(mpirun --oversubscribe --bind-to none -np 2)
  [[ $(id -u) -eq 0 ]] && MPIRUN+=(--allow-run-as-root)
  export OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none
  [[ ${CGNN_TEST_SANITIZED:-0} == 1 ]] && export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0"
  timeout -k 10 300 "${MPIRUN[@]}" "$CGNN" embed --quiet --task_config_uri="$TMP/run.yaml" --batch 300 --out "$TMP/mpi.npy" \
    >"$TMP/mpi.out" 2>&1 && cmp -s "$E" "$TMP/mpi.npy" && ok || bad "mpirun -np 2: other bits: $(tail -5 "$TMP/mpi.out")"
  timeout -k 10 300 "${MPIRUN[@]}" "$CGNN" embed --quiet --task_config_uri="$TMP/run.yaml" --activations_dir "$TMP/act" \
    --out "$TMP/mpi_act.npy" >"$TMP/mpi_act.out" 2>&1 && cmp -s "$E" "$TMP/mpi_act.npy" && ok \
    || bad "mpirun -np 2 --activations_dir: other bits: $(tail -5 "$TMP/mpi_act.out")"
  [[ -z $(ls -A "$TMP/act") ]] && ok || bad "mpirun: activation files left behind: $(ls "$TMP/act")"
fi

# should_l2_normalize_embedding_layer_output: true -> unit rows
sed -e 's/^\(    gnn_model_class_path: .*\)$/\1\n    should_l2_normalize_embedding_layer_output: "true"/' "$TMP/run.yaml" > "$TMP/l2.yaml"
embed l2 --out "$TMP/l2.npy" && "$PY" - "$TMP/l2.npy" "$E" <<'PY' && ok || bad "L2-normalised embeddings: $(cat "$TMP/l2.embed.err")"
import sys
import numpy as np
a, b = np.load(sys.argv[1]).astype(np.float64), np.load(sys.argv[2]).astype(np.float64)
assert np.abs(np.linalg.norm(a, axis=1) - 1).max() < 1e-5
assert np.abs(a - b / np.linalg.norm(b, axis=1, keepdims=True)).max() < 1e-5
PY

# errors: exit 2 with the file and field named
sed -e "s#trainedModelUri: .*#trainedModelUri: $TMP/nowhere/model.safetensors#" "$TMP/run.yaml" > "$TMP/missing.yaml"
embed missing; rc=$?
[[ $rc -eq 2 ]] && grep -q "trainedModelUri" "$TMP/missing.embed.err" && ok \
  || bad "missing checkpoint: exit $rc: $(cat "$TMP/missing.embed.err")"
# the Cora model (1433 input channels) on Facebook (128 features)
sed -e "s#preprocessedMetadataUri: .*#preprocessedMetadataUri: data/facebook#" "$TMP/run.yaml" > "$TMP/wrongdims.yaml"
embed wrongdims; rc=$?
[[ $rc -eq 2 ]] && grep -q "in_channels" "$TMP/wrongdims.embed.err" && grep -q "model.safetensors" "$TMP/wrongdims.embed.err" \
  && ok || bad "checkpoint with wrong dims: exit $rc: $(cat "$TMP/wrongdims.embed.err")"
embed run --batch 0; rc=$?
[[ $rc -eq 2 ]] && grep -q -- "--batch" "$TMP/run.embed.err" && ok || bad "--batch 0: exit $rc"
embed run --batchsize 5; rc=$?
[[ $rc -eq 2 ]] && ok || bad "unknown flag: exit $rc"
"$CGNN" embed >/dev/null 2>"$TMP/noargs.err"; rc=$?
[[ $rc -eq 2 ]] && grep -q "task_config_uri" "$TMP/noargs.err" && ok || bad "no --task_config_uri: exit $rc"

echo "test_embed: $pass passed, $fails failed"
[[ $fails -eq 0 ]]
