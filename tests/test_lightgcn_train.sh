#!/usr/bin/env bash
# test_lightgcn_train.sh CGNN — LightGCN (gnn_model_class_path LightGCN, docs/LINK_PREDICTION.md, "LightGCN") end to end on
# two disjoint 16-node cliques (as test_rec.sh):
#   - BPR with node_embedding_reg trains (the loss falls); the checkpoint is PyG LightGCN's
#     state_dict (embedding.weight and the alpha buffer) with num_layers 3 and lightgcn_alpha in
#     its metadata; a .pt checkpoint loads in torch with those keys and embeds the same;
#   - `cgnn embed` writes the propagated, alpha-combined rows: numpy's own LGConv + gcn_norm over
#     the dataset's edges, from the checkpoint's table, agrees; `cgnn rank` ranks every anchor's
#     own clique first (Recall@15 = 1);
#   - PyG's dotted path and a per-layer lightgcn_alpha are accepted (and end up in the checkpoint);
#   - the retrieval loss trains it too; `cgnn bench lightgcn` runs and reports its JSON line;
#   - 0 vs 2 sampler threads and 1 vs 2 compute threads give the same bits; a crashed run resumes
#     to the same bits;
#   - refusals, exit 2, nothing written: mpirun -np 2, a typed dataset, node classification, a
#     wrong number of alphas, lightgcn_alpha on another model, no node_embedding_dim.
set -u
CGNN=${1:?usage: test_lightgcn_train.sh path/to/cgnn}
SRC=${CGNN_SOURCE_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
TMP=$(mktemp -d /tmp/cgnn-lgc-XXXXXX)
[[ ${KEEP:-0} == 1 ]] || trap 'rm -rf "$TMP"' EXIT
cd "$SRC"
PY=/usr/bin/python3
fails=0
pass=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }
printf 'trainer_resource_config:\n  local_trainer_config: {num_workers: 2}\n' > "$TMP/resource.yaml"
printf 'trainer_resource_config:\n  local_trainer_config: {num_workers: 1}\n' > "$TMP/resource1.yaml"
train() { # train NAME [resource]
  "$CGNN" train --quiet --job_name="$1" --task_config_uri="$TMP/$1.yaml" \
    --resource_config_uri="file://$TMP/${2:-resource}.yaml" >"$TMP/$1.out" 2>"$TMP/$1.err"
}

mkdir -p "$TMP/cliques"
$PY "$SRC/tests/make_cliques.py" "$TMP/cliques"
# lgc NAME [key=value ...] — a LightGCN config $TMP/NAME.yaml, outputs under $TMP/NAME/
lgc() {
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
    gnn_model_class_path: LightGCN
    num_layers: "3"
    node_embedding_dim: "8"
    node_embedding_init_std: "0.1"
    node_embedding_reg: "1e-4"
    embedding_lr: "0.05"
    main_sample_batch_size: "64"
    random_negative_sample_batch_size: "64"
    random_negative_sample_batch_size_for_evaluation: "32"
    task_path: BPR
    num_epochs: "20"
    val_every_num_batches: "10"
EOF
  for kv in "$@"; do
    local k=${kv%%=*} v=${kv#*=}
    if grep -q "^    $k:" "$TMP/$name.yaml"; then sed -i "s|^    $k: .*|    $k: $v|" "$TMP/$name.yaml"
    else echo "    $k: $v" >> "$TMP/$name.yaml"; fi
  done
}

# ---- BPR: trains, checkpoint, embed = numpy's propagation, rank ----
lgc b0 train_main_num_workers='"0"'
lgc b2 train_main_num_workers='"2"'
if train b0 && train b2; then
  cmp -s "$TMP/b0/model.safetensors" "$TMP/b2/model.safetensors" && ok || bad "LightGCN: 0 vs 2 sampler threads: weights differ"
  cp "$TMP/b2/model.safetensors" "$TMP/b2_t2.st"
  lgc b2 train_main_num_workers='"2"'
  train b2 resource1 && cmp -s "$TMP/b2/model.safetensors" "$TMP/b2_t2.st" && ok \
    || bad "LightGCN: 1 vs 2 compute threads: weights differ: $(tail -2 "$TMP/b2.err")"
  "$CGNN" embed --quiet --task_config_uri="$TMP/b0.yaml" --out "$TMP/b0/emb.npy" >"$TMP/embed.out" 2>&1 \
    && ok || bad "LightGCN: cgnn embed failed: $(cat "$TMP/embed.out")"
  $PY - "$TMP/b0/model.safetensors" "$TMP/b0/emb.npy" "$TMP/cliques/edges.npy" "$TMP/b0/tb/metrics.jsonl" <<'PY' \
    && ok || bad "LightGCN: checkpoint / embeddings / loss"
import json, struct, sys, numpy as np
raw = open(sys.argv[1], "rb").read()
n = struct.unpack("<Q", raw[:8])[0]
head = json.loads(raw[8:8 + n])
meta = head.pop("__metadata__")
assert sorted(head) == ["alpha", "embedding.weight"], ("PyG LightGCN's state_dict: the table and alpha", list(head))
a = head["alpha"]; b, e = a["data_offsets"]
assert a["shape"] == [4] and list(np.frombuffer(raw[8 + n + b:8 + n + e], dtype=np.float32)) == [0.25] * 4, a
assert meta["cgnn_model"] == "LightGCN" and meta["num_layers"] == "3", meta
assert [float(a) for a in meta["lightgcn_alpha"].split(",")] == [0.25] * 4, meta
t = head["embedding.weight"]; b, e = t["data_offsets"]
w = np.frombuffer(raw[8 + n + b:8 + n + e], dtype=np.float32).reshape(t["shape"]).astype(np.float64)
src, dst = np.load(sys.argv[3])
N = w.shape[0]
deg = np.bincount(dst, minlength=N).astype(np.float64)
dis = np.where(deg > 0, deg ** -0.5, 0)
wt = dis[src] * dis[dst]
x, out = w, w * 0.25
for _ in range(3):
    y = np.zeros_like(x); np.add.at(y, dst, wt[:, None] * x[src]); x = y
    out = out + 0.25 * x
emb = np.load(sys.argv[2])
assert emb.shape == (32, 8) and emb.dtype == np.float32
err = np.abs(emb - out).max() / np.abs(out).max()
assert err < 1e-5, err
assert np.abs(emb - w).max() > 1e-3, "embed wrote the propagated rows, not the table"
losses = [json.loads(l)["train_loss"] for l in open(sys.argv[4]) if "train_loss" in l]
print("LightGCN-BPR cliques: loss %.4f -> %.4f; embed = numpy's propagation (max err %.1e)" % (losses[0], losses[-1], err))
assert losses[-1] < losses[0] - 0.1, losses
PY
  "$CGNN" rank --embeddings "$TMP/b0/emb.npy" --dataset "$TMP/cliques" --k 15 >"$TMP/rank.out" 2>&1 \
    || bad "LightGCN: cgnn rank failed: $(cat "$TMP/rank.out")"
  grep -Eq "[Rr]ecall@15[^0-9]*1\.0000" "$TMP/rank.out" && ok || bad "LightGCN: own clique not ranked first: $(cat "$TMP/rank.out")"
else bad "LightGCN-BPR training failed: $(cat "$TMP/b0.err" "$TMP/b2.err" | tail -5)"; fi

# ---- full-ranking validation (recall_at_K criterion): the ranked rows are the propagated ones ----
# the trainer's test recall_at_5 / ndcg_at_5 equal cgnn rank --k 5 on cgnn embed's rows of the kept
# model (the propagated table, not the raw one), on a random graph (the cliques rank alike either way)
mkdir -p "$TMP/rand"
$PY - "$TMP/rand" <<'PY'
import numpy as np, sys, os
d = sys.argv[1]; n = 80
rng = np.random.default_rng(1)
pairs = set()
while len(pairs) < 320:
    a, b = rng.integers(0, n, 2)
    if a != b: pairs.add((int(a), int(b)))
pairs = np.array(sorted(pairs), dtype=np.int64); rng.shuffle(pairs)
test, valid, train = pairs[:40], pairs[40:80], pairs[80:]
both = np.concatenate([train, train[:, ::-1]])
np.save(os.path.join(d, "edges.npy"), np.ascontiguousarray(both.T))
for name, p in (("train", train), ("valid", valid), ("test", test)): np.save(os.path.join(d, name + ".npy"), p)
open(os.path.join(d, "metadata.yaml"), "w").write("""dataset_name: rand
graph:
  nodes: [{num: 80}]
  edges: [{format: numpy, path: edges.npy}]
tasks:
  - name: link_prediction
    train_set: [{data: [{name: seeds, format: numpy, path: train.npy}]}]
    validation_set: [{data: [{name: seeds, format: numpy, path: valid.npy}]}]
    test_set: [{data: [{name: seeds, format: numpy, path: test.npy}]}]
""")
PY
lgc rk early_stop_criterion=recall_at_5 early_stop_patience='"3"' num_epochs='"1"' val_every_num_batches='"3"' val_at_end='"true"'
sed -i "s#$TMP/cliques/metadata.yaml#$TMP/rand/metadata.yaml#" "$TMP/rk.yaml"
if train rk && "$CGNN" embed --quiet --task_config_uri="$TMP/rk.yaml" --out "$TMP/rk/emb.npy" >"$TMP/rk_embed.out" 2>&1 \
   && "$CGNN" rank --embeddings "$TMP/rk/emb.npy" --dataset "$TMP/rand" --k 5 --out "$TMP/rk/rank.json" \
      >"$TMP/rk_rank.out" 2>&1 \
   && $PY -c "
import json, struct, sys, numpy as np
raw = open(sys.argv[1], 'rb').read(); n = struct.unpack('<Q', raw[:8])[0]
t = json.loads(raw[8:8 + n])['embedding.weight']; b, e = t['data_offsets']
np.save(sys.argv[2], np.frombuffer(raw[8 + n + b:8 + n + e], dtype=np.float32).reshape(t['shape']))
" "$TMP/rk/model.safetensors" "$TMP/rk/raw.npy" \
   && "$CGNN" rank --embeddings "$TMP/rk/raw.npy" --dataset "$TMP/rand" --k 5 --out "$TMP/rk/rank_raw.json" \
      >"$TMP/rk_rank_raw.out" 2>&1; then
  $PY - "$TMP/rk/eval_metrics.json" "$TMP/rk/rank.json" "$TMP/rk/tb/metrics.jsonl" "$TMP/rk/rank_raw.json" <<'PY' && ok \
    || bad "LightGCN: full-ranking metrics differ from cgnn rank on the propagated rows"
import json, sys
def metrics(path):
    m = json.load(open(path))["metrics"]
    return {x["name"]: float(x["numberValue"]) for x in m}
tr, rk = metrics(sys.argv[1]), metrics(sys.argv[2])
for k in ("recall_at_5", "ndcg_at_5"):
    assert abs(tr[k] - rk[k]) < 1e-6, (k, tr[k], rk[k])
vals = [json.loads(l) for l in open(sys.argv[3]) if "val_recall_at_5" in l]
assert vals and all(0 <= v["val_recall_at_5"] <= 1 for v in vals), vals
raw = metrics(sys.argv[4])
assert (raw["recall_at_5"], raw["ndcg_at_5"]) != (tr["recall_at_5"], tr["ndcg_at_5"]), ("the raw table ranks alike", raw, tr)
print("LightGCN full ranking: trainer recall_at_5 %.6f ndcg_at_5 %.6f = cgnn rank of the propagated rows "
      "(the raw table: %.6f %.6f; %d validations)" % (tr["recall_at_5"], tr["ndcg_at_5"], raw["recall_at_5"], raw["ndcg_at_5"], len(vals)))
PY
else bad "LightGCN recall_at_5 run failed: $(tail -3 "$TMP/rk.err" "$TMP/rk_embed.out" "$TMP/rk_rank.out")"; fi

# ---- the same run written as a .pt (torch.save of PyG's state_dict) ----
lgc pt train_main_num_workers='"0"'
sed -i "s#$TMP/pt/model.safetensors#$TMP/pt/model.pt#" "$TMP/pt.yaml"
if train pt && "$CGNN" embed --quiet --task_config_uri="$TMP/pt.yaml" --out "$TMP/pt/emb.npy" >"$TMP/embed_pt.out" 2>&1; then
  cmp -s "$TMP/pt/emb.npy" "$TMP/b0/emb.npy" && ok || bad "LightGCN: embed of the .pt differs from the .safetensors'"
  $PY -c "
import sys, torch
sd = torch.load(sys.argv[1])
assert sorted(sd) == ['alpha', 'embedding.weight'], list(sd)
assert sd['alpha'].tolist() == [0.25] * 4 and tuple(sd['embedding.weight'].shape) == (32, 8)
" "$TMP/pt/model.pt" && ok || bad "LightGCN: the .pt state_dict"
else bad "LightGCN .pt run failed: $(tail -3 "$TMP/pt.err" "$TMP/embed_pt.out")"; fi

# ---- PyG's dotted path, a per-layer alpha, the retrieval loss ----
lgc al gnn_model_class_path=torch_geometric.nn.models.LightGCN lightgcn_alpha='"0.4, 0.3, 0.2, 0.1"' num_epochs='"2"'
lgc ret task_path=Retrieval num_epochs='"5"'
if train al && train ret; then
  $PY - "$TMP/al/model.safetensors" "$TMP/ret/tb/metrics.jsonl" <<'PY' && ok || bad "LightGCN: alpha list / retrieval"
import json, struct, sys, math
raw = open(sys.argv[1], "rb").read(); n = struct.unpack("<Q", raw[:8])[0]
meta = json.loads(raw[8:8 + n])["__metadata__"]
a = [float(x) for x in meta["lightgcn_alpha"].split(",")]
assert max(abs(x - y) for x, y in zip(a, [0.4, 0.3, 0.2, 0.1])) < 1e-7 and len(a) == 4, meta
losses = [json.loads(l)["train_loss"] for l in open(sys.argv[2]) if "train_loss" in l]
assert all(math.isfinite(l) for l in losses) and losses[-1] < losses[0], losses
print("LightGCN-Retrieval cliques: loss %.4f -> %.4f" % (losses[0], losses[-1]))
PY
else bad "LightGCN alpha / retrieval runs failed: $(tail -3 "$TMP/al.err" "$TMP/ret.err")"; fi

# ---- exact resume after a crash ----
lgc ck checkpoint_every_n_batches='"5"' num_epochs='"4"'
if train ck && cp "$TMP/ck/model.safetensors" "$TMP/ck_full.st" && rm -rf "$TMP/ck"; then
  CGNN_TEST_EXIT_AT_STEP=23 train ck; rc=$?
  [[ $rc -eq 3 && -f "$TMP/ck/model.safetensors.state" ]] && ok || bad "LightGCN crash run: exit $rc, $(tail -2 "$TMP/ck.err")"
  train ck && cmp -s "$TMP/ck/model.safetensors" "$TMP/ck_full.st" && ok \
    || bad "LightGCN: a resumed run differs from an uninterrupted one: $(tail -2 "$TMP/ck.err")"
else bad "LightGCN checkpointed run failed: $(tail -3 "$TMP/ck.err")"; fi

# ---- cgnn bench lightgcn: the three ways, on the cliques ----
if "$CGNN" bench lightgcn --dataset "$TMP/cliques" --batch 8 --reps 2 --layers 2 >"$TMP/bench.out" 2>&1; then
  $PY - "$TMP/bench.out" <<'PY' && ok || bad "bench lightgcn: $(cat "$TMP/bench.out")"
import json, sys
r = json.loads([l for l in open(sys.argv[1]) if l.startswith("{")][-1])
assert r["bench"] == "lightgcn" and r["nodes"] == 32 and r["layers"] == 2, r
assert r["full_forward_ms"] >= 0 and 0 < r["field_forward_edge_frac"] <= 1 and r["sampler_block_edges"] > 0, r
PY
else bad "bench lightgcn failed: $(cat "$TMP/bench.out")"; fi

# ---- refusals: exit 2, nothing written ----
refused() { # refused NAME PATTERN [train args...]
  local name=$1 pat=$2 rc
  shift 2
  if [[ $# -gt 0 ]]; then "$@" >"$TMP/$name.out" 2>"$TMP/$name.err"; rc=$?; else train "$name"; rc=$?; fi
  [[ $rc -eq 2 && ! -e "$TMP/$name/model.safetensors" ]] && grep -q -- "$pat" "$TMP/$name.err" && ok \
    || bad "$name: exit $rc (want 2 and '$pat'): $(cat "$TMP/$name.err" | tail -3)"
}
lgc bad_alpha lightgcn_alpha='"0.5, 0.5"'
refused bad_alpha "lightgcn_alpha.*2 values"
lgc bad_model gnn_model_class_path=GraphSAGE num_layers='"2"' lightgcn_alpha='"0.5"'
refused bad_model "applies to gnn_model_class_path LightGCN only"
lgc bad_noemb node_embedding_dim='"0"' node_embedding_init_std='"1"' node_embedding_reg='"0"'
sed -i -e '/node_embedding_dim/d' -e '/node_embedding_init_std/d' -e '/node_embedding_reg/d' "$TMP/bad_noemb.yaml"
refused bad_noemb "set node_embedding_dim"
sed -e "s#$TMP/cliques/metadata.yaml#$SRC/data/lastfm-mini/metadata.yaml#" -e "s#$TMP/b0#$TMP/typed#g" "$TMP/b0.yaml" \
  > "$TMP/typed.yaml"
refused typed "LightGCN trains on one process over the whole homogeneous graph"
sed -e 's/nodeAnchorBasedLinkPredictionTaskMetadata: {}/nodeBasedTaskMetadata: {}/' -e '/random_negative/d' \
  -e '/task_path/d' -e '/node_embedding_reg/d' -e "s#$TMP/b0#$TMP/nc#g" "$TMP/b0.yaml" > "$TMP/nc.yaml"
refused nc "LightGCN scores node pairs"
if command -v mpirun >/dev/null && "$CGNN" --version | grep -q "distributed: MPI"; then
  MPIRUN=(mpirun --oversubscribe --bind-to none)
  [[ $(id -u) -eq 0 ]] && MPIRUN+=(--allow-run-as-root)
  export OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none
  [[ ${CGNN_TEST_SANITIZED:-0} == 1 ]] && export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0"
  lgc mpi
  refused mpi "data-parallel training (mpirun -np > 1) is not supported" \
    timeout -k 10 300 "${MPIRUN[@]}" -np 2 "$CGNN" train --task_config_uri="$TMP/mpi.yaml"
else echo "note: serial build or no mpirun: the mpirun refusal is not tested here"; fi

echo "test_lightgcn_train: $pass passed, $fails failed"
[[ $fails -eq 0 ]]
