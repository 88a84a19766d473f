#!/usr/bin/env bash
# test_lp_candidates.sh CGNN — ranking over the right candidates on a homogeneous user-item graph
# (docs/LINK_PREDICTION.md, "Candidates and full-ranking validation"):
#   - trainerArgs.lp_candidate_range "48:112" (the items) with MF-BPR and
#     early_stop_criterion recall_at_10: every validation logs val_recall_at_10 / val_ndcg_at_10
#     (metrics.jsonl and TensorBoard), early stopping is decided by recall (the best recall is
#     followed by exactly `patience` validations without a strict improvement), the test split's
#     recall_at_10 / ndcg_at_10 are in eval_metrics.json;
#   - `cgnn rank --candidates 48:112` on `cgnn embed`'s rows of the kept (best) model gives the
#     trainer's test recall / ndcg, and both agree with a numpy brute force over the items;
#   - ndcg_at_5 as the criterion; val_at_end: a run bounded by num_max_train_batches validates its
#     last step too (and not without the key);
#   - under mpirun -np 2: the same test recall / ndcg as 1 process for the same model
#     (shouldSkipTraining), and a 2-rank training with full-ranking validation keeps the replicas
#     identical (every rank takes the same early-stopping decisions);
#   - hostile values: exit 2 naming the file and field, nothing written.
# (Random negatives inside the range: test_loader's negatives_from_candidate_range.)
set -u
CGNN=${1:?usage: test_lp_candidates.sh path/to/cgnn}
SRC=${CGNN_SOURCE_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
PY=/usr/bin/python3
if ! "$PY" -c "import numpy" 2>/dev/null; then
  echo "SKIP: test_lp_candidates.sh needs /usr/bin/python3 with numpy"; exit 77
fi
TMP=$(mktemp -d /tmp/cgnn-lpcand-XXXXXX)
trap '[[ -n ${KEEP:-} ]] || rm -rf "$TMP"' EXIT
cd "$SRC"
fails=0
pass=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }
train() {
  "$CGNN" train --job_name="$1" --task_config_uri="$TMP/$1.yaml" >"$TMP/$1.out" 2>"$TMP/$1.err"
}

# users 0..47 in 4 taste groups, items 48..111 (item i belongs to group i % 4); each user has 9
# items of its group and one random one; 10% of the pairs validate, 20% test
"$PY" - "$TMP/bip" <<'PY' || { echo "FAIL: writing the dataset"; exit 1; }
import numpy as np, sys, os
d = sys.argv[1]; os.makedirs(d)
rng = np.random.default_rng(3)
U, I, G = 48, 64, 4
pairs = set()
for u in range(U):
    items = [U + i for i in range(I) if i % G == u % G]
    for i in rng.choice(items, size=9, replace=False): pairs.add((u, int(i)))
    pairs.add((u, U + int(rng.integers(I))))
pairs = np.array(sorted(pairs), dtype=np.int64); rng.shuffle(pairs)
nv, nt = len(pairs) // 10, len(pairs) // 5
valid, test, train = pairs[:nv], pairs[nv:nv + nt], pairs[nv + nt:]
np.save(f"{d}/edges.npy", np.ascontiguousarray(np.concatenate([train, train[:, ::-1]]).T))
for k, v in [("train", train), ("valid", valid), ("test", test)]: np.save(f"{d}/{k}.npy", v)
open(f"{d}/metadata.yaml", "w").write(f"""dataset_name: bip
graph:
  nodes: [{{num: {U + I}}}]
  edges: [{{format: numpy, path: edges.npy}}]
tasks:
  - name: link_prediction
    train_set: [{{data: [{{name: seeds, format: numpy, path: train.npy}}]}}]
    validation_set: [{{data: [{{name: seeds, format: numpy, path: valid.npy}}]}}]
    test_set: [{{data: [{{name: seeds, format: numpy, path: test.npy}}]}}]
""")
PY
# cfg NAME [key=value ...] — an MF-BPR config $TMP/NAME.yaml over the items, outputs in $TMP/NAME/
cfg() {
  local name=$1
  shift
  cat > "$TMP/$name.yaml" <<EOF
taskMetadata:
  nodeAnchorBasedLinkPredictionTaskMetadata: {}
sharedConfig:
  preprocessedMetadataUri: $TMP/bip/metadata.yaml
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
    main_sample_batch_size: "32"
    random_negative_sample_batch_size: "32"
    random_negative_sample_batch_size_for_evaluation: "32"
    train_main_num_workers: "0"
    task_path: BPR
    num_epochs: "40"
    val_every_num_batches: "5"
    lp_candidate_range: "48:112"
    early_stop_criterion: recall_at_10
    early_stop_patience: "3"
EOF
  for kv in "$@"; do
    local k=${kv%%=*} v=${kv#*=}
    if grep -q "^    $k:" "$TMP/$name.yaml"; then
      if [[ $v == DELETE ]]; then sed -i "/^    $k:/d" "$TMP/$name.yaml"; else sed -i "s|^    $k: .*|    $k: $v|" "$TMP/$name.yaml"; fi
    else echo "    $k: $v" >> "$TMP/$name.yaml"; fi
  done
}
# val_steps NAME — the steps of NAME's validation records (metrics.jsonl), space-separated
val_steps() {
  "$PY" -c '
import json, sys
print(" ".join(str(int(r["step"])) for r in map(json.loads, open(sys.argv[1])) if "val_loss" in r))' "$TMP/$1/tb/metrics.jsonl"
}

# stops_by NAME KEY PATIENCE MIN — NAME's validations log KEY, training stopped exactly PATIENCE checks
# after KEY's first best value (at least MIN), and the kept weights are that best (the "restored" line)
stops_by() {
  "$PY" - "$TMP/$1/tb/metrics.jsonl" "$2" "$3" "$TMP/$1.err" "$4" <<'PY'
import json, re, sys
path, key, patience, log, lo = sys.argv[1], sys.argv[2], int(sys.argv[3]), open(sys.argv[4]).read(), float(sys.argv[5])
v = [r for r in map(json.loads, open(path)) if "val_loss" in r]
assert len(v) >= patience + 2 and all(key in r for r in v), "every validation logs " + key
x = [r[key] for r in v]
best = max(range(len(x)), key=lambda i: (x[i], -i))  # the first best
assert best == len(x) - 1 - patience, ("stopped %d validations after the best %s" % (patience, key), x)
assert all(y <= x[best] for y in x[best + 1:]), x
assert x[best] > lo, ("MF learns", x)
m = re.search(r"restored the best weights \(validation (\S+) ([0-9.]+)\)", log)
assert m and m.group(1) == key[4:] and abs(float(m.group(2)) - x[best]) < 1e-4, ("kept the best by " + key, m and m.group(0))
print("%s: %s (best %.4f at check %d of %d)" % (key, " ".join("%.3f" % y for y in x), x[best], best + 1, len(x)))
PY
}

# ---- early stopping on Recall@10 over the items ----
cfg rec
if train rec; then
  ok
  grep -q "early stopping after" "$TMP/rec.err" && ok || bad "recall_at_10: no early stop: $(tail -3 "$TMP/rec.err")"
  grep -q "full ranking (validation_set, 30 anchors, 64 candidates)" "$TMP/rec.err" && ok \
    || bad "the validation ranks the 64 items: $(grep 'full ranking' "$TMP/rec.err" | head -2)"
  stops_by rec val_recall_at_10 3 0.3 && ok || bad "recall_at_10 drives early stopping (metrics.jsonl)"
  "$PY" tests/read_tb_events.py "$TMP"/rec/tb/events.out.tfevents.* --dump >"$TMP/tb.txt" 2>&1 \
    && grep -q "val/recall_at_10" "$TMP/tb.txt" && grep -q "val/ndcg_at_10" "$TMP/tb.txt" && grep -q "test/recall_at_10" "$TMP/tb.txt" \
    && ok || bad "TensorBoard lacks val/recall_at_10, val/ndcg_at_10 or test/recall_at_10: $(head -5 "$TMP/tb.txt")"
  grep -q '"name": "recall_at_10"' "$TMP/rec/eval_metrics.json" && grep -q '"name": "ndcg_at_10"' "$TMP/rec/eval_metrics.json" \
    && ok || bad "eval_metrics.json lacks recall_at_10 / ndcg_at_10: $(cat "$TMP/rec/eval_metrics.json")"
  # the kept model's rows, ranked by cgnn rank and by numpy: the trainer's test values
  if "$CGNN" embed --quiet --task_config_uri="$TMP/rec.yaml" --out "$TMP/rec/emb.npy" >"$TMP/embed.out" 2>&1; then
    "$CGNN" rank --embeddings "$TMP/rec/emb.npy" --dataset "$TMP/bip" --k 10 --candidates 48:112 >"$TMP/rank.out" 2>&1 \
      || bad "cgnn rank --candidates failed: $(cat "$TMP/rank.out")"
    "$CGNN" rank --embeddings "$TMP/rec/emb.npy" --dataset "$TMP/bip" --k 10 >"$TMP/rank_all.out" 2>&1 \
      || bad "cgnn rank failed: $(cat "$TMP/rank_all.out")"
    "$PY" - "$TMP/bip" "$TMP/rec/emb.npy" "$TMP/rank.out" "$TMP/rank_all.out" "$TMP/rec/eval_metrics.json" <<'PY' \
      && ok || bad "cgnn rank --candidates / the trainer / numpy disagree"
import json, re, sys
import numpy as np
d, emb, out, out_all, ev = sys.argv[1:6]
E = np.load(emb)
tr, va, te = (np.load(f"{d}/{k}.npy") for k in ("train", "valid", "test"))
def brute(lo, hi, K=10):
    rec, nd = [], []
    for a in np.unique(te[:, 0]):
        T = set(te[te[:, 0] == a, 1].tolist())
        x = ({int(a)} | set(tr[tr[:, 0] == a, 1].tolist()) | set(va[va[:, 0] == a, 1].tolist())) - T
        c = [v for v in range(lo, hi) if v not in x]
        s = {v: float(np.float32(np.dot(E[a].astype(np.float64), E[v].astype(np.float64)))) for v in c}
        c.sort(key=lambda v: (-s[v], v))
        hits = [r for r, v in enumerate(c[:K]) if v in T]
        rec.append(len(hits) / len(T))
        nd.append(sum(1 / np.log2(r + 2) for r in hits) / sum(1 / np.log2(r + 2) for r in range(min(K, len(T)))))
    return np.mean(rec), np.mean(nd)
def parse(path):
    t = open(path).read()
    return float(re.search(r"Recall@10: ([0-9.]+)", t).group(1)), float(re.search(r"NDCG@10: ([0-9.]+)", t).group(1))
r, n = parse(out)
ra, na = parse(out_all)
br, bn = brute(48, 112)
m = {x["name"]: float(x["numberValue"]) for x in json.load(open(ev))["metrics"]}
print(f"test Recall@10 over the items: rank {r:.6f}, numpy {br:.6f}, trainer {m['recall_at_10']:.6f}; "
      f"NDCG@10 {n:.6f} / {bn:.6f} / {m['ndcg_at_10']:.6f}; over every node: {ra:.6f}")
assert abs(r - br) < 1e-6 and abs(n - bn) < 1e-6, "rank --candidates = numpy brute force"
assert abs(m["recall_at_10"] - r) < 2e-6 and abs(m["ndcg_at_10"] - n) < 2e-6, "trainer test metrics = cgnn rank"
assert r > 0.3
PY
  else bad "cgnn embed failed: $(cat "$TMP/embed.out")"; fi
else bad "training with recall_at_10 failed: $(tail -5 "$TMP/rec.err")"; fi

# ---- a GNN (GraphSAGE, 1 layer, learnable embeddings): the validation's rows come from full
# inference (as cgnn embed); the trainer's test recall = cgnn rank --candidates on cgnn embed ----
cfg sage num_layers='"1"' gnn_model_class_path=GraphSAGE hidden_dim='"8"' num_neighbors='"[5]"' num_epochs='"6"'
if train sage; then
  grep -q "full ranking (validation_set" "$TMP/sage.err" && ok || bad "GraphSAGE: no full-ranking validation"
  if "$CGNN" embed --quiet --task_config_uri="$TMP/sage.yaml" --out "$TMP/sage/emb.npy" >"$TMP/sembed.out" 2>&1 &&
     "$CGNN" rank --embeddings "$TMP/sage/emb.npy" --dataset "$TMP/bip" --k 10 --candidates 48:112 >"$TMP/srank.out" 2>&1; then
    r=$(sed -n 's/^Recall@10: //p' "$TMP/srank.out")
    m=$(grep -o '"recall_at_10", "numberValue": "[^"]*"' "$TMP/sage/eval_metrics.json" | sed 's/.*: "//; s/"$//')
    "$PY" -c "import sys; a, b = float(sys.argv[1]), float(sys.argv[2]); sys.exit(abs(a - b) > 2e-6)" "$r" "$m" && ok \
      || bad "GraphSAGE: trainer test recall_at_10 $m != cgnn rank $r"
    echo "GraphSAGE test Recall@10 over the items: trainer $m, cgnn rank $r"
  else bad "GraphSAGE: embed / rank failed: $(cat "$TMP/sembed.out" "$TMP/srank.out")"; fi
else bad "GraphSAGE with recall_at_10 failed: $(tail -5 "$TMP/sage.err")"; fi

# ---- NDCG@5 as the criterion ----
cfg nd early_stop_criterion=NDCG_at_5 early_stop_patience='"2"'
if train nd; then
  grep -q "early stopping after" "$TMP/nd.err" && stops_by nd val_ndcg_at_5 2 0.05 && ok \
    || bad "ndcg_at_5: not logged / not the criterion: $(grep -i 'restored' "$TMP/nd.err")"
else bad "training with ndcg_at_5 failed: $(tail -5 "$TMP/nd.err")"; fi

# ---- val_at_end: 7 steps, validations every 3: 3, 6 and (with the key) 7 ----
cfg vend num_epochs=DELETE num_max_train_batches='"7"' val_every_num_batches='"3"' early_stop_patience='"0"' val_at_end='"true"'
cfg vno num_epochs=DELETE num_max_train_batches='"7"' val_every_num_batches='"3"' early_stop_patience='"0"'
if train vend && train vno; then
  [[ $(val_steps vend) == "3 6 7" ]] && ok || bad "val_at_end: validations at steps '$(val_steps vend)', want '3 6 7'"
  [[ $(val_steps vno) == "3 6" ]] && ok || bad "without val_at_end: validations at steps '$(val_steps vno)', want '3 6'"
  grep -q "validation at the end of training (step 7)" "$TMP/vend.err" && ok || bad "val_at_end: no log line"
else bad "val_at_end runs failed: $(tail -3 "$TMP/vend.err" "$TMP/vno.err")"; fi
# once per epoch (val_every_num_batches 0) and stopped mid-epoch by num_max_train_batches: the
# per-epoch validation never ran; val_at_end validates the last step
cfg vep num_epochs=DELETE num_max_train_batches='"4"' val_every_num_batches='"0"' early_stop_patience='"0"' val_at_end='"true"'
if train vep; then
  [[ $(val_steps vep) == "4" ]] && ok || bad "val_at_end mid-epoch: validations at '$(val_steps vep)', want '4'"
else bad "val_at_end mid-epoch failed: $(tail -3 "$TMP/vep.err")"; fi

# ---- mpirun: the same test metrics on 2 ranks; a 2-rank training stays consistent ----
if command -v mpirun >/dev/null && "$CGNN" --version | grep -q "distributed: MPI" && [[ -f "$TMP/rec/model.safetensors" ]]; then
  MPIRUN=(mpirun --oversubscribe --bind-to none)
  [[ $(id -u) -eq 0 ]] && MPIRUN+=(--allow-run-as-root)
  export OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none
  [[ ${CGNN_TEST_SANITIZED:-0} == 1 ]] && export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0"
  for np in 1 2; do
    cfg "ev$np" && sed -i "s#trainedModelUri: .*#trainedModelUri: $TMP/rec/model.safetensors#" "$TMP/ev$np.yaml"
    sed -i 's/^sharedConfig:/sharedConfig:\n  shouldSkipTraining: true/' "$TMP/ev$np.yaml"
    timeout -k 10 300 "${MPIRUN[@]}" -np $np "$CGNN" train --task_config_uri="$TMP/ev$np.yaml" >"$TMP/ev$np.out" 2>"$TMP/ev$np.err" \
      || bad "evaluation on $np ranks failed: $(tail -3 "$TMP/ev$np.err")"
  done
  r1=$(grep -o '"recall_at_10", "numberValue": "[^"]*"' "$TMP/ev1/eval_metrics.json" 2>/dev/null)
  r2=$(grep -o '"recall_at_10", "numberValue": "[^"]*"' "$TMP/ev2/eval_metrics.json" 2>/dev/null)
  n1=$(grep -o '"ndcg_at_10", "numberValue": "[^"]*"' "$TMP/ev1/eval_metrics.json" 2>/dev/null)
  n2=$(grep -o '"ndcg_at_10", "numberValue": "[^"]*"' "$TMP/ev2/eval_metrics.json" 2>/dev/null)
  [[ -n $r1 && $r1 == "$r2" && -n $n1 && $n1 == "$n2" ]] && ok || bad "2 ranks vs 1: '$r1' '$n1' vs '$r2' '$n2'"
  grep -q '"recall_at_10", "numberValue"' "$TMP/rec/eval_metrics.json" && [[ $(grep -o '"recall_at_10", "numberValue": "[^"]*"' "$TMP/rec/eval_metrics.json") == "$r1" ]] \
    && ok || bad "skip-training evaluation differs from the training's own test metrics"
  cfg mpi2
  if timeout -k 10 300 "${MPIRUN[@]}" -np 2 "$CGNN" train --task_config_uri="$TMP/mpi2.yaml" >"$TMP/mpi2.out" 2>"$TMP/mpi2.err"; then
    grep -q "bitwise identical on all 2 ranks" "$TMP/mpi2.err" && grep -q '"val_recall_at_10"' "$TMP/mpi2/tb/metrics.jsonl" \
      && grep -q '"name": "recall_at_10"' "$TMP/mpi2/eval_metrics.json" && ok \
      || bad "2-rank training with full-ranking validation: $(tail -3 "$TMP/mpi2.err")"
  else bad "2-rank training with recall_at_10 failed: $(tail -5 "$TMP/mpi2.err")"; fi
else echo "note: serial build or no mpirun: 2 ranks are not tested here"; fi

# ---- hostile values: exit 2, the file and field named, nothing written ----
# refuse NAME WANT_TEXT key=value ... — the run exits 2, its message has the config file, the key
# (or WANT_TEXT) and no output directory was created
refuse() {
  local name=$1 want=$2
  shift 2
  cfg "$name" "$@"
  train "$name"
  local rc=$?
  if [[ $rc -ne 2 ]]; then bad "$name: exit $rc, want 2: $(tail -3 "$TMP/$name.err")"; return; fi
  grep -qF -- "$want" "$TMP/$name.err" && ok || bad "$name: message lacks '$want': $(cat "$TMP/$name.err")"
  [[ ! -e $TMP/$name ]] && ok || bad "$name: outputs written although the config was refused"
}
for v in '"112:48"' '"48:48"' '"abc"' '"-1:112"' '"48:"' '"1e2:112"' '"48:112:2"'; do
  refuse badrange lp_candidate_range "lp_candidate_range=$v"
  grep -qF "$TMP/badrange.yaml" "$TMP/badrange.err" && ok || bad "badrange $v: the config file is not named"
done
refuse beyond "outside the nodes [0, 112)" 'lp_candidate_range="48:113"'
refuse posout "train.npy: row" 'lp_candidate_range="60:112"'
grep -q "outside trainerArgs.lp_candidate_range 60:112" "$TMP/posout.err" && ok || bad "posout: $(cat "$TMP/posout.err")"
for v in recall_at_0 recall_at_x ndcg_at_ recall@10 recall_at_99999999; do
  refuse badcrit early_stop_criterion "early_stop_criterion=$v"
done
refuse badend val_at_end 'val_at_end="maybe"'
# a typed dataset: the destination type defines the candidates
sed -e "s#trainedModelUri: .*#trainedModelUri: $TMP/typed/model.safetensors#" \
    -e "s#evalMetricsUri: .*#evalMetricsUri: $TMP/typed/eval.json#" -e "s#tensorboardLogsUri: .*#tensorboardLogsUri: $TMP/typed/tb#" \
    examples/lastfm_hetero_sage_lp.yaml > "$TMP/typed.yaml"
sed -i 's/^  trainerArgs:/  trainerArgs:\n    lp_candidate_range: "0:10"/' "$TMP/typed.yaml"
train typed
[[ $? -eq 2 ]] && grep -q "lp_candidate_range: .* is a typed graph" "$TMP/typed.err" && [[ ! -e $TMP/typed ]] && ok \
  || bad "typed + lp_candidate_range: $(cat "$TMP/typed.err")"
sed -i -e '/lp_candidate_range/d' -e '/^    early_stop_criterion:/d' \
  -e 's/^  trainerArgs:/  trainerArgs:\n    early_stop_criterion: recall_at_20/' "$TMP/typed.yaml"
train typed
[[ $? -eq 2 ]] && grep -q "recall_at_20 (full ranking over every candidate) needs a homogeneous graph" "$TMP/typed.err" && ok \
  || bad "typed + recall_at_20: $(cat "$TMP/typed.err")"
# node classification: the range is a link-prediction key
sed -e 's/^  trainerArgs:/  trainerArgs:\n    lp_candidate_range: "0:10"/' \
    -e "s#trainedModelUri: .*#trainedModelUri: $TMP/nc/model.safetensors#" examples/cora_graphsage.yaml > "$TMP/nc.yaml" 2>/dev/null
if [[ -s $TMP/nc.yaml ]]; then
  train nc
  [[ $? -eq 2 ]] && grep -q "applies to link prediction" "$TMP/nc.err" && ok || bad "NC + lp_candidate_range: $(cat "$TMP/nc.err")"
fi

echo "test_lp_candidates: $pass passed, $fails failed"
[[ $fails -eq 0 ]]
