#!/usr/bin/env bash
# test_embed_typed.sh CGNN — `cgnn embed` on typed datasets: one <node type>.npy per node type.
#   - DBLP (data/dblp-mini, HeteroSAGE trained with fanout -1 on every edge type, so the trainer's
#     own evaluation is the full-neighbourhood forward): cgnn embed writes embeddings/<type>.npy
#     for the 4 node types beside the model; they equal an independent numpy HeteroSAGE over the
#     whole graph from the checkpoint (the featureless venue type from its embedding_dict table),
#     and the author rows give exactly the trainer's test accuracy and (to 1e-4) its test loss;
#   - the same bits for another --batch, with --activations_dir (no files left), under
#     `mpirun -np 2` (in memory and with a shared activations dir);
#   - --node_types chooses the files; a rerun into the same directory leaves no file of the
#     previous run;
#   - DBLP with HGT (2 heads, fanout -1): one file per type, the trainer's test accuracy and loss
#     from the author rows, the same bits for another --batch and under `mpirun -np 2`;
#   - Last.fm (data/lastfm-mini, RGCN with 2 bases, every type a learnable table, L2-normalised
#     link-prediction output): unit rows equal to a numpy RGCN;
#   - errors (exit 2, naming the problem): --out naming an .npy, an unknown --node_types entry,
#     --node_types on an untyped dataset, a homogeneous checkpoint on a typed dataset.
set -u
CGNN=${1:?usage: test_embed_typed.sh path/to/cgnn}
SRC=${CGNN_SOURCE_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
PY=/usr/bin/python3
if ! "$PY" -c "import numpy" 2>/dev/null; then echo "SKIP: test_embed_typed.sh needs /usr/bin/python3 with numpy"; exit 77; fi
TMP=$(mktemp -d /tmp/cgnn-embed-typed-XXXXXX)
trap 'rm -rf "$TMP"' EXIT
cd "$SRC"
fails=0
pass=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }
printf 'trainer_resource_config:\n  local_trainer_config: {num_workers: 2}\n' > "$TMP/resource.yaml"
TYPES="author paper term venue"

# embed NAME [flags...] — cgnn embed on $TMP/NAME.yaml; stdout/stderr in $TMP/NAME.embed.{out,err}
embed() {
  local name=$1
  shift
  "$CGNN" embed --task_config_uri="$TMP/$name.yaml" --resource_config_uri="$TMP/resource.yaml" "$@" \
    >"$TMP/$name.embed.out" 2>"$TMP/$name.embed.err"
}
# same_dirs A B [types] — the files of every type are byte-identical
same_dirs() {
  local t
  for t in ${3:-$TYPES}; do cmp -s "$1/$t.npy" "$2/$t.npy" || return 1; done
}

# metrics_match MODEL EMB_DIR METRICS — the author rows of EMB_DIR give the trainer's test accuracy
# (exactly) and loss (to 1e-4) in METRICS (its evaluation with fanout -1 is the same forward)
metrics_match() {
  "$PY" - "$@" <<'PY' && ok || bad "$1: the embeddings do not give the trainer's test metrics"
import json, sys
import numpy as np
name, emb_dir, metrics_path = sys.argv[1:4]
D = "data/dblp-mini/"
a = np.load(f"{emb_dir}/author.npy").astype(np.float64)
seeds = np.load(D + "nc-test-author-seeds.npy"); labels = np.load(D + "nc-test-author-labels.npy")
acc = float((a[seeds].argmax(1) == labels).mean())
z = a[seeds] - a[seeds].max(1, keepdims=True)
loss = float((np.log(np.exp(z).sum(1)) - z[np.arange(len(seeds)), labels]).mean())
m = {x["name"]: float(x["numberValue"]) for x in json.load(open(metrics_path))["metrics"]}
print(f"{name}: test accuracy from the embeddings {acc:.6f}, trainer {m['acc']:.6f}; loss {loss:.6f}, trainer {m['loss']:.6f}")
assert abs(acc - m["acc"]) < 1e-5 and abs(loss - m["loss"]) <= 1e-4 * max(1, abs(loss)), (acc, loss, m)
PY
}

# ---- DBLP, HeteroSAGE, every neighbour in training and evaluation ----
sed -e "s#out/[a-z_]*/#$TMP/run/#g" -e 's/num_epochs: "40"/num_epochs: "6"/' -e 's/num_neighbors: .*/num_neighbors: "[-1, -1]"/' \
  examples/dblp_hetero_sage.yaml > "$TMP/run.yaml"
if ! "$CGNN" train --quiet --task_config_uri="$TMP/run.yaml" --resource_config_uri="$TMP/resource.yaml" \
  >"$TMP/run.train.out" 2>"$TMP/run.train.err"; then
  echo "FAIL: training failed: $(cat "$TMP/run.train.err")"
  exit 1
fi
E="$TMP/run/embeddings"
embed run && ok || bad "embed failed: $(cat "$TMP/run.embed.err")"
for t in $TYPES; do
  [[ -s $E/$t.npy ]] && ok || bad "no $E/$t.npy (the default directory beside trainedModelUri)"
done
grep -q "^embeddings of author: 600 x 4 float32 -> $E/author.npy" "$TMP/run.embed.out" && grep -q "^embeddings of venue: 20 x 4" \
  "$TMP/run.embed.out" && ok || bad "summary: $(cat "$TMP/run.embed.out")"
grep -q "layer 3/3" "$TMP/run.embed.err" && ok || bad "no progress on stderr: $(cat "$TMP/run.embed.err")"

"$PY" - "$E" "$TMP/run/model.safetensors" <<'PY' && ok || bad "DBLP embeddings check failed"
import json, struct, sys
import numpy as np
emb_dir, model_path = sys.argv[1:3]
b = open(model_path, "rb").read(); n = struct.unpack("<Q", b[:8])[0]; h = json.loads(b[8:8 + n]); d = b[8 + n:]
P = {k: np.frombuffer(d[v["data_offsets"][0]:v["data_offsets"][1]], "<f4").reshape(v["shape"]).astype(np.float64)
     for k, v in h.items() if k != "__metadata__"}
D = "data/dblp-mini/"
types = ["author", "paper", "term", "venue"]
num = {"author": 600, "paper": 2881, "term": 3239, "venue": 20}
x = {t: np.load(D + f"feat-{t}.npy").astype(np.float64) for t in types[:3]}
x["venue"] = P["embedding_dict.venue.weight"]
etypes = [("author", "writes", "paper"), ("paper", "written_by", "author"), ("paper", "has_term", "term"),
          ("term", "term_of", "paper"), ("paper", "published_in", "venue"), ("venue", "publishes", "paper")]
edges = {e: np.load(D + f"edges-{e[0]}-{e[1]}-{e[2]}.npy") for e in etypes}
def mean_agg(hs, e):
    src, dst = edges[e]
    agg = np.zeros((num[e[2]], hs.shape[1])); np.add.at(agg, dst, hs[src])
    return agg / np.maximum(np.bincount(dst, minlength=num[e[2]]), 1)[:, None]
hcur = {t: np.maximum(x[t] @ P[f"lin_dict.{t}.weight"].T + P[f"lin_dict.{t}.bias"], 0) for t in types}
for l in range(2):
    y = {t: 0 for t in types}
    for e in etypes:
        k = f"convs.{l}.convs.{e[0]}__{e[1]}__{e[2]}"
        y[e[2]] = y[e[2]] + mean_agg(hcur[e[0]], e) @ P[k + ".lin_l.weight"].T + P[k + ".lin_l.bias"] \
                  + hcur[e[2]] @ P[k + ".lin_r.weight"].T
    hcur = {t: (np.maximum(y[t], 0) if l == 0 else y[t]) for t in types}
worst = 0
for t in types:
    e = np.load(f"{emb_dir}/{t}.npy")
    assert e.shape == (num[t], 4) and e.dtype == np.float32 and e.flags["C_CONTIGUOUS"], (t, e.shape, e.dtype)
    worst = max(worst, np.abs(e - hcur[t]).max() / (1 + np.abs(hcur[t]).max()))
print(f"numpy full-graph HeteroSAGE, every node type: max difference {worst:.2e}")
assert worst < 1e-5, worst
PY
metrics_match HeteroSAGE "$E" "$TMP/run/eval_metrics.json"

# chunking and out-of-core activations: the same bits; no layer files left behind
embed run --batch 97 --out "$TMP/b97" && same_dirs "$E" "$TMP/b97" && ok || bad "--batch 97 gives other bits: $(tail -2 "$TMP/run.embed.err")"
mkdir -p "$TMP/act"
embed run --batch 500 --activations_dir "$TMP/act" --out "$TMP/actout" && same_dirs "$E" "$TMP/actout" && ok \
  || bad "--activations_dir gives other bits: $(tail -2 "$TMP/run.embed.err")"
[[ -z $(ls -A "$TMP/act") ]] && ok || bad "activation files left behind: $(ls "$TMP/act")"

# --node_types: only those files; a rerun into the same directory removes the previous run's files
embed run --out "$TMP/some" && embed run --out "$TMP/some" --node_types author,venue && ok \
  || bad "--node_types run failed: $(tail -2 "$TMP/run.embed.err")"
[[ $(ls "$TMP/some" | tr '\n' ' ') == "author.npy venue.npy " ]] && ok || bad "--node_types author,venue wrote: $(ls "$TMP/some")"
same_dirs "$E" "$TMP/some" "author venue" && ok || bad "--node_types: other bits"
grep -q "embeddings of paper" "$TMP/run.embed.out" && bad "--node_types author,venue wrote paper" || ok

# data parallel: the same files from 2 ranks (in memory and with a shared activations dir)
if ! "$CGNN" --version | grep -q "distributed: MPI"; then
  echo "SKIP (mpirun part): serial build (CGNN_WITH_MPI=OFF)"
elif ! command -v mpirun >/dev/null; then
  echo "SKIP (mpirun part): mpirun not installed (openmpi-bin)"
else
  MPIRUN=(mpirun --oversubscribe --bind-to none -np 2)
  [[ $(id -u) -eq 0 ]] && MPIRUN+=(--allow-run-as-root)
  export OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none
  [[ ${CGNN_TEST_SANITIZED:-0} == 1 ]] && export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0"
  timeout -k 10 300 "${MPIRUN[@]}" "$CGNN" embed --quiet --task_config_uri="$TMP/run.yaml" --batch 300 --out "$TMP/mpi" \
    >"$TMP/mpi.out" 2>&1 && same_dirs "$E" "$TMP/mpi" && ok || bad "mpirun -np 2: other bits: $(tail -5 "$TMP/mpi.out")"
  timeout -k 10 300 "${MPIRUN[@]}" "$CGNN" embed --quiet --task_config_uri="$TMP/run.yaml" --activations_dir "$TMP/act" \
    --out "$TMP/mpi_act" >"$TMP/mpi_act.out" 2>&1 && same_dirs "$E" "$TMP/mpi_act" && ok \
    || bad "mpirun -np 2 --activations_dir: other bits: $(tail -5 "$TMP/mpi_act.out")"
  [[ -z $(ls -A "$TMP/act") ]] && ok || bad "mpirun: activation files left behind: $(ls "$TMP/act")"
fi

# ---- Last.fm link prediction: RGCN with 2 bases, every type a table, L2-normalised output ----
sed -e "s#out/[a-z_]*/#$TMP/lp/#g" -e 's/gnn_model_class_path: HeteroSAGE/gnn_model_class_path: RGCN/' \
  -e 's/hidden_dim: "64"/hidden_dim: "16"/' -e 's/node_embedding_dim: "64"/node_embedding_dim: "8"/' \
  -e 's/num_epochs: "10"/num_epochs: "1"\n    num_max_train_batches: "6"\n    num_bases: "2"/' \
  -e 's/random_negative_sample_batch_size_for_evaluation: "100"/random_negative_sample_batch_size_for_evaluation: "20"\n    num_val_batches: "1"\n    num_test_batches: "1"/' \
  examples/lastfm_hetero_sage_lp.yaml > "$TMP/lp.yaml"
if "$CGNN" train --quiet --task_config_uri="$TMP/lp.yaml" --resource_config_uri="$TMP/resource.yaml" \
  >"$TMP/lp.train.out" 2>"$TMP/lp.train.err"; then
  embed lp --batch 1000 && ok || bad "lastfm embed failed: $(tail -3 "$TMP/lp.embed.err")"
  "$PY" - "$TMP/lp/embeddings" "$TMP/lp/model.safetensors" <<'PY' && ok || bad "Last.fm RGCN embeddings check failed"
import json, struct, sys
import numpy as np
emb_dir, model_path = sys.argv[1:3]
b = open(model_path, "rb").read(); n = struct.unpack("<Q", b[:8])[0]; h = json.loads(b[8:8 + n]); d = b[8 + n:]
P = {k: np.frombuffer(d[v["data_offsets"][0]:v["data_offsets"][1]], "<f4").reshape(v["shape"]).astype(np.float64)
     for k, v in h.items() if k != "__metadata__"}
D = "data/lastfm-mini/"
types = ["user", "artist", "tag"]
num = {"user": 600, "artist": 8271, "tag": 1027}
etypes = [("user", "listens", "artist"), ("artist", "listened_by", "user"), ("user", "friend", "user"),
          ("artist", "tagged", "tag"), ("tag", "tags", "artist")]
edges = [np.load(D + f"edges-{e[0]}-{e[1]}-{e[2]}.npy") for e in etypes]
def mean_agg(hs, k):
    src, dst = edges[k]; nd = num[etypes[k][2]]
    agg = np.zeros((nd, hs.shape[1])); np.add.at(agg, dst, hs[src])
    return agg / np.maximum(np.bincount(dst, minlength=nd), 1)[:, None]
hcur = {t: np.maximum(P[f"embedding_dict.{t}.weight"] @ P[f"lin_dict.{t}.weight"].T + P[f"lin_dict.{t}.bias"], 0)
        for t in types}
for l in range(2):
    W = np.einsum("rb,bio->rio", P[f"convs.{l}.comp"], P[f"convs.{l}.weight"])
    y = {t: hcur[t] @ P[f"convs.{l}.root"] + P[f"convs.{l}.bias"] for t in types}
    for k, e in enumerate(etypes):
        y[e[2]] = y[e[2]] + mean_agg(hcur[e[0]], k) @ W[k]
    hcur = {t: np.maximum(y[t], 0) if l == 0 else y[t] / np.maximum(np.linalg.norm(y[t], axis=1, keepdims=True), 1e-12)
            for t in types}
worst = 0
for t in types:
    e = np.load(f"{emb_dir}/{t}.npy").astype(np.float64)
    assert e.shape == (num[t], 16), (t, e.shape)
    assert np.abs(np.linalg.norm(e, axis=1) - 1).max() < 1e-5, t
    worst = max(worst, np.abs(e - hcur[t]).max())
print(f"numpy full-graph RGCN (2 bases), L2-normalised: max difference {worst:.2e}")
assert worst < 1e-5, worst
PY
else
  bad "lastfm training failed: $(tail -3 "$TMP/lp.train.err")"
fi

# ---- DBLP, HGT (2 heads), fanout -1: the trainer's evaluation is the full forward ----
sed -e "s#out/[a-z_]*/#$TMP/hgt/#g" -e 's/num_epochs: "200"/num_epochs: "2"/' -e 's/hidden_dim: "64"/hidden_dim: "16"/' \
  examples/dblp_hgt.yaml > "$TMP/hgt.yaml"
if "$CGNN" train --quiet --task_config_uri="$TMP/hgt.yaml" --resource_config_uri="$TMP/resource.yaml" \
  >"$TMP/hgt.train.out" 2>"$TMP/hgt.train.err"; then
  embed hgt && ok || bad "HGT embed failed: $(tail -3 "$TMP/hgt.embed.err")"
  grep -q "^embeddings of author: 600 x 4 float32 -> $TMP/hgt/embeddings/author.npy" "$TMP/hgt.embed.out" \
    && grep -q "^embeddings of venue: 20 x 4" "$TMP/hgt.embed.out" && ok || bad "HGT summary: $(cat "$TMP/hgt.embed.out")"
  embed hgt --batch 97 --out "$TMP/hgt97" && same_dirs "$TMP/hgt/embeddings" "$TMP/hgt97" && ok \
    || bad "HGT --batch 97 gives other bits: $(tail -2 "$TMP/hgt.embed.err")"
  "$PY" - "$TMP/hgt/embeddings" <<'PY' && ok || bad "HGT embeddings: shapes"
import sys
import numpy as np
emb_dir = sys.argv[1]
for t, n in (("author", 600), ("paper", 2881), ("term", 3239), ("venue", 20)):
    e = np.load(f"{emb_dir}/{t}.npy")
    assert e.shape == (n, 4) and e.dtype == np.float32 and np.isfinite(e).all(), (t, e.shape, e.dtype)
PY
  metrics_match HGT "$TMP/hgt/embeddings" "$TMP/hgt/eval_metrics.json"
  if [[ -n ${MPIRUN+x} ]]; then # 2 ranks: every rank computes all keys / values, a slice of the attention
    timeout -k 10 300 "${MPIRUN[@]}" "$CGNN" embed --quiet --task_config_uri="$TMP/hgt.yaml" --batch 50 --out "$TMP/hgt_mpi" \
      >"$TMP/hgt_mpi.out" 2>&1 && same_dirs "$TMP/hgt/embeddings" "$TMP/hgt_mpi" && ok \
      || bad "HGT mpirun -np 2: other bits: $(tail -5 "$TMP/hgt_mpi.out")"
  fi
else
  bad "HGT training failed: $(tail -3 "$TMP/hgt.train.err")"
fi

# ---- errors: exit 2 naming the problem ----
embed run --out "$TMP/emb.npy"; rc=$?
[[ $rc -eq 2 ]] && grep -q "names a directory" "$TMP/run.embed.err" && ok || bad "--out x.npy: exit $rc: $(cat "$TMP/run.embed.err")"
embed run --node_types author,artist; rc=$?
[[ $rc -eq 2 ]] && grep -q "'artist' is not a node type of the dataset .*(author, paper, term, venue)" "$TMP/run.embed.err" \
  && ok || bad "unknown node type: exit $rc: $(cat "$TMP/run.embed.err")"
sed -e "s#out/[a-z_]*/#$TMP/cora/#g" -e 's/num_epochs: "200"/num_epochs: "1"/' examples/cora_graphsage.yaml > "$TMP/cora.yaml"
"$CGNN" train --quiet --task_config_uri="$TMP/cora.yaml" >/dev/null 2>&1 || bad "cora training failed"
embed cora --node_types paper; rc=$?
[[ $rc -eq 2 ]] && grep -q -- "--node_types: the dataset .* is not typed" "$TMP/cora.embed.err" && ok \
  || bad "--node_types on Cora: exit $rc: $(cat "$TMP/cora.embed.err")"
sed -e "s#trainedModelUri: .*#trainedModelUri: $TMP/cora/model.safetensors#" "$TMP/run.yaml" > "$TMP/mixed.yaml"
embed mixed --out "$TMP/mixed"; rc=$?
[[ $rc -eq 2 ]] && grep -q "is not a typed model" "$TMP/mixed.embed.err" && ok || bad "homogeneous checkpoint: exit $rc: $(cat "$TMP/mixed.embed.err")"

echo "test_embed_typed: $pass passed, $fails failed"
[[ $fails -eq 0 ]]
