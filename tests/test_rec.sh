#!/usr/bin/env bash
# test_rec.sh CGNN — recommendation-grade link prediction end to end (docs/LINK_PREDICTION.md, "Recommendation
# losses and matrix factorisation"):
#   - MF (num_layers 0: the learnable embeddings alone) with BPR on two disjoint cliques: it
#     trains; the checkpoint holds embedding.weight and nothing else; `cgnn embed` writes exactly
#     those rows (L2-normalised when the config asks); `cgnn rank` ranks every anchor's own clique
#     first (Recall@15 = 1); 0 vs 2 sampler threads give the same bits; a crashed run resumes to
#     the same bits; under mpirun the replicas stay identical and embed on 2 ranks = 1 process;
#   - every task_path loss (Softmax, Margin, DirectAU, BPR with 3 negatives, and a weighted
#     combination with Retrieval) trains GraphSAGE on facebook-lp: finite losses, the test
#     metrics written; the combination is deterministic across sampler thread counts;
#   - the loss's own stage: loss_ms and loss_gemm_gflops in metrics.jsonl, the end-of-run line
#     with the loss's GEMM rate, "loss" spans in the profiler trace;
#   - node_embedding_init_std (an untrained table's spread), embedding_weight_decay (smaller
#     rows after training) and node_embedding_reg (in the training loss);
#   - errors, exit 2 and nothing written: MF on a typed dataset, a misspelt task argument.
set -u
CGNN=${1:?usage: test_rec.sh path/to/cgnn}
SRC=${CGNN_SOURCE_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
TMP=$(mktemp -d /tmp/cgnn-rec-XXXXXX)
trap 'rm -rf "$TMP"' EXIT
cd "$SRC"
PY=/usr/bin/python3
fails=0
pass=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }
printf 'trainer_resource_config:\n  local_trainer_config: {num_workers: 2}\n' > "$TMP/resource.yaml"
train() {
  "$CGNN" train --quiet --job_name="$1" --task_config_uri="$TMP/$1.yaml" \
    --resource_config_uri="file://$TMP/resource.yaml" >"$TMP/$1.out" 2>"$TMP/$1.err"
}
metric() { awk -v k="$2" '/^test:/{for (i = 2; i < NF; i++) if ($i == k) print $(i + 1)}' "$TMP/$1.out"; }

# ---- two disjoint cliques of 16 featureless nodes (as test_lp.sh) ----
mkdir -p "$TMP/cliques"
$PY "$SRC/tests/make_cliques.py" "$TMP/cliques"
# mf NAME [extra trainer args...] — an MF config $TMP/NAME.yaml, outputs under $TMP/NAME/
mf() {
  local name=$1
  shift
  cat > "$TMP/$name.yaml" <<EOF
taskMetadata:
  nodeAnchorBasedLinkPredictionTaskMetadata: {}
sharedConfig:
  preprocessedMetadataUri: $TMP/cliques/metadata.yaml
  trainedModelMetadata:
    trainedModelUri: $TMP/$name/model.safetensors
    evalMetricsUri: $TMP/$name/eval_metrics.json
    tensorboardLogsUri: $TMP/$name/tb
trainerConfig:
  trainerArgs:
    num_layers: "0"
    node_embedding_dim: "8"
    node_embedding_init_std: "0.1"
    embedding_lr: "0.05"
    main_sample_batch_size: "64"
    random_negative_sample_batch_size: "64"
    random_negative_sample_batch_size_for_evaluation: "32"
    task_path: BPR
    num_epochs: "30"
EOF
  for kv in "$@"; do
    local k=${kv%%=*} v=${kv#*=}
    if grep -q "^    $k:" "$TMP/$name.yaml"; then sed -i "s|^    $k: .*|    $k: $v|" "$TMP/$name.yaml"
    else echo "    $k: $v" >> "$TMP/$name.yaml"; fi
  done
}

# ---- MF + BPR: trains, embeds, ranks; deterministic ----
mf mf0 train_main_num_workers=0
mf mf2 train_main_num_workers=2
if train mf0 && train mf2; then
  cmp -s "$TMP/mf0/model.safetensors" "$TMP/mf2/model.safetensors" && ok || bad "MF: 0 vs 2 sampler threads: weights differ"
  "$CGNN" embed --quiet --task_config_uri="$TMP/mf0.yaml" --out "$TMP/mf0/emb.npy" >"$TMP/embed.out" 2>&1 \
    && ok || bad "MF: cgnn embed failed: $(cat "$TMP/embed.out")"
  $PY - "$TMP/mf0/model.safetensors" "$TMP/mf0/emb.npy" <<'PY' && ok || bad "MF: checkpoint / embeddings"
import json, struct, sys, numpy as np
raw = open(sys.argv[1], "rb").read()
n = struct.unpack("<Q", raw[:8])[0]
head = json.loads(raw[8:8 + n])
meta = head.pop("__metadata__")
assert list(head) == ["embedding.weight"], ("MF's checkpoint holds the table alone", list(head))
assert meta["num_layers"] == "0" and meta["in_channels"] == meta["out_channels"] == "8", meta
t = head["embedding.weight"]; b, e = t["data_offsets"]
w = np.frombuffer(raw[8 + n + b:8 + n + e], dtype=np.float32).reshape(t["shape"])
emb = np.load(sys.argv[2])
assert emb.shape == (32, 8) and np.array_equal(emb, w), "cgnn embed of MF = the table's rows"
print("MF: checkpoint = embedding.weight (32, 8); cgnn embed writes the same rows")
PY
  "$CGNN" rank --embeddings "$TMP/mf0/emb.npy" --dataset "$TMP/cliques" --k 15 >"$TMP/rank.out" 2>&1 \
    || bad "MF: cgnn rank failed: $(cat "$TMP/rank.out")"
  echo "MF-BPR cliques: $(grep -i recall "$TMP/rank.out"), trainer test MRR $(metric mf0 mrr)"
  grep -Eq "[Rr]ecall@15[^0-9]*1\.0000" "$TMP/rank.out" && ok || bad "MF: own clique not ranked first: $(cat "$TMP/rank.out")"
  # L2-normalised output when asked: the embedded rows are unit rows of the table's directions
  sed -e "s#$TMP/mf0/eval_metrics.json#$TMP/mf0/eval_l2.json#" -e 's/^trainerConfig:/trainerConfig:/' "$TMP/mf0.yaml" > "$TMP/mfl2.yaml"
  echo '    should_l2_normalize_embedding_layer_output: "true"' >> "$TMP/mfl2.yaml"
  "$CGNN" embed --quiet --task_config_uri="$TMP/mfl2.yaml" --out "$TMP/mf0/emb_l2.npy" >"$TMP/embed2.out" 2>&1 \
    || bad "MF l2: cgnn embed failed: $(cat "$TMP/embed2.out")"
  $PY - "$TMP/mf0/emb.npy" "$TMP/mf0/emb_l2.npy" <<'PY' && ok || bad "MF: L2-normalised embeddings"
import sys, numpy as np
e, u = np.load(sys.argv[1]).astype(np.float64), np.load(sys.argv[2]).astype(np.float64)
assert np.allclose(np.linalg.norm(u, axis=1), 1, atol=1e-6)
assert np.allclose(u, e / np.linalg.norm(e, axis=1, keepdims=True), atol=1e-6)
PY
else bad "MF training failed: $(cat "$TMP/mf0.err" "$TMP/mf2.err" | tail -5)"; fi

# ---- MF: exact resume after a crash (a model with no parameters but the table) ----
mf mfck checkpoint_every_n_batches='"5"' node_embedding_reg='"1e-3"'
if train mfck && cp "$TMP/mfck/model.safetensors" "$TMP/mfck_full.st" && rm -rf "$TMP/mfck"; then
  CGNN_TEST_EXIT_AT_STEP=23 train mfck; rc=$?
  [[ $rc -eq 3 && -f "$TMP/mfck/model.safetensors.state" ]] && ok || bad "MF crash run: exit $rc, $(tail -2 "$TMP/mfck.err")"
  train mfck && cmp -s "$TMP/mfck/model.safetensors" "$TMP/mfck_full.st" && ok \
    || bad "MF: a resumed run differs from an uninterrupted one: $(tail -2 "$TMP/mfck.err")"
else bad "MF checkpointed run failed: $(tail -3 "$TMP/mfck.err")"; fi

# ---- MF under mpirun: replicas stay identical, embed on 2 ranks = 1 process ----
if command -v mpirun >/dev/null && "$CGNN" --version | grep -q "distributed: MPI" && [[ -f "$TMP/mf0/emb.npy" ]]; then
  MPIRUN=(mpirun --oversubscribe --bind-to none)
  [[ $(id -u) -eq 0 ]] && MPIRUN+=(--allow-run-as-root)
  export OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none
  [[ ${CGNN_TEST_SANITIZED:-0} == 1 ]] && export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0"
  mf mfmpi num_epochs='"3"' node_embedding_reg='"1e-3"'
  if timeout -k 10 300 "${MPIRUN[@]}" -np 2 "$CGNN" train --task_config_uri="$TMP/mfmpi.yaml" >"$TMP/mfmpi.out" 2>"$TMP/mfmpi.err"; then
    grep -q "bitwise identical on all 2 ranks" "$TMP/mfmpi.err" && ok || bad "MF on 2 ranks: no replica check: $(tail -3 "$TMP/mfmpi.err")"
  else bad "MF on 2 ranks failed: $(tail -5 "$TMP/mfmpi.err")"; fi
  timeout -k 10 300 "${MPIRUN[@]}" -np 2 "$CGNN" embed --quiet --task_config_uri="$TMP/mf0.yaml" --out "$TMP/mf0/emb_np2.npy" \
    >"$TMP/embed_np2.out" 2>&1 && cmp -s "$TMP/mf0/emb.npy" "$TMP/mf0/emb_np2.npy" && ok \
    || bad "MF: cgnn embed on 2 ranks differs from 1 process: $(tail -3 "$TMP/embed_np2.out")"
else echo "note: serial build or no mpirun: MF on 2 ranks is not tested here"; fi

# ---- the embedding table's arguments ----
# init std: a table that barely moves (one step at a tiny rate) keeps its N(0, 0.1^2) spread
mf std0 node_embedding_init_std='"0.1"' embedding_lr='"1e-9"' num_epochs='"1"' num_max_train_batches='"1"'
mf std1 node_embedding_init_std='"1.0"' embedding_lr='"1e-9"' num_epochs='"1"' num_max_train_batches='"1"'
mf wd0 embedding_optim_class_path=SGD embedding_lr='"0.5"'
mf wd1 embedding_optim_class_path=SGD embedding_lr='"0.5"' embedding_weight_decay='"0.5"'
mf reg0 num_max_train_batches='"1"' node_embedding_init_std='"1.0"'
mf reg1 num_max_train_batches='"1"' node_embedding_init_std='"1.0"' node_embedding_reg='"0.5"'
if train std0 && train std1 && train wd0 && train wd1 && train reg0 && train reg1; then
  $PY - "$TMP" <<'PY' && ok || bad "embedding init std / weight decay / reg"
import json, struct, sys, numpy as np
def table(p):
    raw = open(p, "rb").read(); n = struct.unpack("<Q", raw[:8])[0]; t = json.loads(raw[8:8 + n])["embedding.weight"]
    b, e = t["data_offsets"]
    return np.frombuffer(raw[8 + n + b:8 + n + e], dtype=np.float32).reshape(t["shape"]).astype(np.float64)
d = sys.argv[1]
s0, s1 = table(d + "/std0/model.safetensors").std(), table(d + "/std1/model.safetensors").std()
print("init std 0.1: table std %.4f; init std 1: %.4f" % (s0, s1))
assert 0.08 < s0 < 0.12 and 0.8 < s1 < 1.2 and abs(s0 * 10 - s1) < 0.02 * s1   # the same draws, scaled
n0 = np.linalg.norm(table(d + "/wd0/model.safetensors"), axis=1).mean()
n1 = np.linalg.norm(table(d + "/wd1/model.safetensors"), axis=1).mean()
print("mean row norm after training: no weight decay %.4f, embedding_weight_decay 0.5: %.4f" % (n0, n1))
assert n1 < 0.8 * n0
def first_loss(name):
    for l in open(d + "/" + name + "/tb/metrics.jsonl"):
        r = json.loads(l)
        if "train_loss" in r and r.get("step") == 1: return r["train_loss"]
l0, l1 = first_loss("reg0"), first_loss("reg1")
# one step from the same N(0, 1) table: the task loss is the same, reg adds 0.5 * 1/2 * sum ||e||^2 / 64
# over the batch's 64 anchors, 64 positives and 64 negatives: about 0.25 * 3 * 8 = 6
print("first training loss: %.4f, with node_embedding_reg 0.5: %.4f" % (l0, l1))
assert 4.0 < l1 - l0 < 8.0
PY
else bad "embedding argument runs failed: $(cat "$TMP"/{std0,std1,wd0,wd1,reg0,reg1}.err | tail -5)"; fi

# ---- every loss trains GraphSAGE on facebook-lp (a few steps) ----
# lossrun NAME TASK_PATH_VALUE [extra sed]
lossrun() {
  local name=$1 tp=$2
  shift 2
  sed -e "s#out/[a-z_]*/#$TMP/$name/#g" -e 's/num_epochs: "4"/num_max_train_batches: "6"/' \
    -e 's/num_val_batches: "0"/num_val_batches: "2"\n    num_test_batches: "2"/' \
    -e 's/val_every_num_batches: "0"/val_every_num_batches: "3"/' -e 's/train_main_num_workers: "1"/train_main_num_workers: "2"/' \
    "$@" examples/facebook_lp_graphsage.yaml > "$TMP/$name.yaml"
  [[ -n $tp ]] && printf '    task_path: %s\n' "$tp" >> "$TMP/$name.yaml"
}
lossrun l_softmax Softmax
lossrun l_margin "{Margin: {margin: 0.3}}"
lossrun l_directau DirectAU
lossrun l_bpr "{BPR: {num_negatives: 3}}"
lossrun l_combo0 '"{Retrieval: 1.0, BPR: {weight: 0.5, num_negatives: 2}, DirectAU: 0.2}"' -e 's/train_main_num_workers: "1"/train_main_num_workers: "0"/'
lossrun l_combo2 '"{Retrieval: 1.0, BPR: {weight: 0.5, num_negatives: 2}, DirectAU: 0.2}"'
sed -i 's/train_main_num_workers: "2"/train_main_num_workers: "0"/' "$TMP/l_combo0.yaml"
lossrun l_retrieval ""
cat >> "$TMP/l_retrieval.yaml" <<EOF
profilerConfig:
  shouldEnableProfiler: true
  profilerLogDir: $TMP/l_retrieval/profile
  profilerArgs: {wait: "1", warmup: "1", active: "3"}
EOF
for r in l_softmax l_margin l_directau l_bpr l_combo0 l_combo2 l_retrieval; do
  if [[ $r == l_retrieval ]]; then # not --quiet: the end-of-run lines are checked below
    "$CGNN" train --job_name=$r --task_config_uri="$TMP/$r.yaml" --resource_config_uri="file://$TMP/resource.yaml" \
      >"$TMP/$r.out" 2>"$TMP/$r.err"
  else train $r; fi
  if [[ $? -eq 0 ]]; then
    m=$(metric $r mrr); l=$(metric $r loss)
    echo "facebook-lp GraphSAGE, $r, 6 steps: test loss $l, MRR $m"
    $PY - "$TMP/$r/tensorboard/metrics.jsonl" "$m" <<'PY' && ok || bad "$r: losses / metrics"
import json, math, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
tl = [r["train_loss"] for r in recs if "train_loss" in r and "val_loss" not in r]
assert len(tl) == 6 and all(math.isfinite(x) for x in tl), tl
assert 0.0 < float(sys.argv[2]) <= 1.0
st = [r for r in recs if "loss_ms" in r]
assert st and st[-1]["loss_ms"] > 0 and st[-1]["forward_ms"] > 0, st
PY
  else bad "$r failed: $(tail -3 "$TMP/$r.err")"; fi
done
cmp -s "$TMP/l_combo0/model.safetensors" "$TMP/l_combo2/model.safetensors" && ok \
  || bad "weighted tasks: 0 vs 2 sampler threads give different weights"
# the loss's GEMM rate: Retrieval's three (batch x candidates) GEMMs per step
$PY - "$TMP/l_retrieval/tensorboard/metrics.jsonl" <<'PY' && ok || bad "loss_gemm_gflops"
import json, sys
st = [json.loads(l) for l in open(sys.argv[1]) if "loss_gemm_gflops" in l]
assert st and st[-1]["loss_gemm_gflops"] > 0, st
print("Retrieval loss: %.1f ms per step, its GEMMs %.2f GFLOP/s" % (st[-1]["loss_ms"], st[-1]["loss_gemm_gflops"]))
PY
grep -q "loss GEMMs: .* GFLOP per step, .* GFLOP/s" "$TMP/l_retrieval.err" && ok \
  || bad "no end-of-run loss GEMM line: $(grep -i 'per step' "$TMP/l_retrieval.err")"
$PY - "$TMP/l_retrieval/profile/trace_rank0.json" <<'PY' && ok || bad "profiler: loss spans"
import json, sys
ev = [e for e in json.load(open(sys.argv[1]))["traceEvents"] if e.get("ph") == "X"]
loss = [e for e in ev if e["name"] == "loss"]
fw = [e for e in ev if e["name"] == "forward"]
assert len(loss) == 3 and len(fw) == 3, (len(loss), len(fw))
for f, l in zip(sorted(fw, key=lambda e: e["ts"]), sorted(loss, key=lambda e: e["ts"])):
    assert l["ts"] >= f["ts"] + f["dur"] - 1, "the loss span follows the forward span"
PY

# ---- errors: exit 2, nothing written ----
# MF on a typed dataset (data/lastfm-mini: users, artists, tags): refused by the trainer
sed -e "s#$TMP/cliques/metadata.yaml#$SRC/data/lastfm-mini/metadata.yaml#" -e "s#$TMP/mf0#$TMP/typed#g" "$TMP/mf0.yaml" \
  > "$TMP/typed.yaml"
train typed; rc=$?
[[ $rc -eq 2 && ! -e "$TMP/typed/model.safetensors" ]] && grep -q "num_layers: 0 .*typed graph" "$TMP/typed.err" && ok \
  || bad "MF on a typed graph: exit $rc, $(cat "$TMP/typed.err")"
mf typo task_path='"{BPR: {num_negative: 2}}"'
train typo; rc=$?
[[ $rc -eq 2 && ! -e "$TMP/typo/model.safetensors" ]] && grep -q "did you mean 'num_negatives'" "$TMP/typo.err" && ok \
  || bad "task argument typo: exit $rc, $(cat "$TMP/typo.err")"

echo "test_rec: $pass passed, $fails failed"
[[ $fails -eq 0 ]]
