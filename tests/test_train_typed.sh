#!/usr/bin/env bash
# test_train_typed.sh CGNN — `cgnn train` on typed (heterogeneous) datasets (data/dblp-mini):
#   HeteroSAGE and RGCN node classification on `author` reach their accuracy targets and report
#   micro_f1 / macro_f1; the checkpoint holds the PyG/GiGL keys and the featureless type's
#   learnable table; 0 and 3 sampler threads give bitwise the same model; shouldSkipTraining
#   reloads it to the same test metrics; GiGL's per-edge-type num_neighbors (edge types left out
#   are not sampled); 2 ranks x batch B = 1 process x batch 2B (one SGD step); and what is not
#   supported yet, or wrong, is refused with exit code 2 naming both sides; typed link prediction
#   (data/lastfm-mini, user:listens:artist, every type featureless) reaches its MRR target and
#   reports ROC-AUC / AP in (0.5, 1], saves every type's table, and is bitwise the same for 0 and
#   3 sampler threads; cgnn embed writes one file per node type.
set -u
CGNN=${1:?usage: test_train_typed.sh path/to/cgnn}
SRC=${CGNN_SOURCE_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
TMP=$(mktemp -d /tmp/cgnn-typed-XXXXXX)
trap 'rm -rf "$TMP"' EXIT
cd "$SRC"
fails=0
pass=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }
SANITIZED=${CGNN_TEST_SANITIZED:-0}

# config NAME [sed expressions...] — the DBLP HeteroSAGE example, outputs under $TMP/NAME/
config() {
  local out=$1
  shift
  sed -e "s#out/[a-z_]*/#$TMP/$out/#g" "$@" examples/dblp_hetero_sage.yaml > "$TMP/$out.yaml"
}
train() { # train NAME [extra cgnn args] — stdout in $TMP/NAME.out, stderr in .err; returns cgnn's code
  local name=$1
  shift
  local q=(--quiet)
  [[ ${VERBOSE:-0} == 1 ]] && q=()
  timeout -k 10 300 "$CGNN" train "${q[@]}" --task_config_uri="$TMP/$name.yaml" "$@" >"$TMP/$name.out" 2>"$TMP/$name.err"
}
metric() { awk -v k="$2" '/^test:/{for (i = 2; i < NF; i++) if ($i == k) print $(i + 1)}' "$TMP/$1.out"; }
atleast() { awk -v a="$1" -v b="$2" 'BEGIN{exit !(a >= b)}'; }

# ---- accuracy: HeteroSAGE and RGCN ----
# (sanitized and serial passes: a few epochs, the same code paths; the plain pass asserts accuracy)
ACC_SHORT=()
[[ $SANITIZED == 1 ]] && ACC_SHORT=(-e 's/num_epochs: "40"/num_epochs: "3"/')
for model in HeteroSAGE RGCN; do # RGCN early-stops on validation macro-F1
  crit=loss; [[ $model == RGCN ]] && crit=macro_f1
  config "$model" "${ACC_SHORT[@]}" -e "s/gnn_model_class_path: HeteroSAGE/gnn_model_class_path: $model/" \
    -e "s/early_stop_criterion: loss/early_stop_criterion: $crit/"
  if ! VERBOSE=1 train "$model"; then bad "$model failed: $(tail -3 "$TMP/$model.err")"; continue; fi
  mi=$(metric "$model" micro_f1); ma=$(metric "$model" macro_f1)
  echo "dblp-mini $model: test micro_f1 $mi macro_f1 $ma (need >= 0.85 each)"
  if [[ $SANITIZED == 1 ]] || { atleast "$mi" 0.85 && atleast "$ma" 0.85; }; then ok; else bad "$model below target"; fi
  grep -q '"macro_f1"' "$TMP/$model/eval_metrics.json" && ok || bad "$model: macro_f1 missing from eval_metrics.json"
done
ck="$TMP/HeteroSAGE/model.safetensors"
for key in lin_dict.author.weight lin_dict.venue.weight convs.0.convs.author__writes__paper.lin_l.weight \
           convs.1.convs.venue__publishes__paper.lin_r.weight embedding_dict.venue.weight; do
  head -c 65536 "$ck" | grep -aq "\"$key\"" && ok || bad "checkpoint lacks $key"
done
head -c 65536 "$TMP/RGCN/model.safetensors" | grep -aq '"convs.1.root"' && ok || bad "RGCN checkpoint lacks convs.1.root"
grep -q "validation macro_f1" "$TMP/RGCN.err" && ok || bad "RGCN did not early-stop on macro_f1: $(tail -2 "$TMP/RGCN.err")"

config bases -e 's/gnn_model_class_path: HeteroSAGE/gnn_model_class_path: RGCN/' -e 's/num_epochs: "40"/num_epochs: "2"/' \
  -e 's/    seed: "0"/    seed: "0"\n    num_bases: "2"/'
if train bases; then
  head -c 65536 "$TMP/bases/model.safetensors" | grep -aq '"convs.0.comp"' && ok || bad "RGCN num_bases: no convs.0.comp"
else bad "RGCN num_bases failed: $(tail -2 "$TMP/bases.err")"; fi

# ---- HGT: GiGL's gigl.src.common.models.pyg.heterogeneous.HGT (examples/dblp_hgt.yaml) ----
hgtconfig() {
  local out=$1
  shift
  sed -e "s#out/[a-z_]*/#$TMP/$out/#g" "$@" examples/dblp_hgt.yaml > "$TMP/$out.yaml"
}
HGT_EPOCHS=10
[[ $SANITIZED == 1 ]] && HGT_EPOCHS=2
hgtconfig hgt -e "s/num_epochs: \"200\"/num_epochs: \"$HGT_EPOCHS\"/" -e 's/optim_lr: "0.001"/optim_lr: "0.005"/'
if VERBOSE=1 train hgt; then
  mi=$(metric hgt micro_f1); ma=$(metric hgt macro_f1)
  echo "dblp-mini HGT ($HGT_EPOCHS epochs): test micro_f1 $mi macro_f1 $ma (need >= 0.85 each)"
  if [[ $SANITIZED == 1 ]] || { atleast "$mi" 0.85 && atleast "$ma" 0.85; }; then ok; else bad "HGT below target"; fi
  grep -q "HGT on dblp-mini" "$TMP/hgt.err" && ok || bad "HGT: the log does not name the model: $(grep -m1 'node classification' "$TMP/hgt.err")"
  # GiGL HGT's state_dict (F = 64, H = 2 heads of D = 32, K = 6 edge types, 4 classes) + the venue table
  /usr/bin/python3 - "$TMP/hgt/model.safetensors" <<'PY' && ok || bad "HGT checkpoint keys / shapes"
import json, struct, sys
b = open(sys.argv[1], "rb").read(); n = struct.unpack("<Q", b[:8])[0]; h = json.loads(b[8:8 + n])
want = {"lin_dict.author.weight": [64, 334], "lin_dict.venue.weight": [64, 64],
        "convs.0.kqv_lin.lins.paper.weight": [192, 64], "convs.0.kqv_lin.lins.paper.bias": [192],
        "convs.1.out_lin.lins.term.weight": [64, 64], "convs.0.k_rel.weight": [12, 32, 32],
        "convs.1.v_rel.weight": [12, 32, 32], "convs.0.skip.venue": [1],
        "convs.1.p_rel.venue__publishes__paper": [1, 2], "lin.weight": [4, 64], "lin.bias": [4],
        "embedding_dict.venue.weight": [20, 64]}
bad = [(k, h.get(k, {}).get("shape"), s) for k, s in want.items() if h.get(k, {}).get("shape") != s]
n_keys = len([k for k in h if k != "__metadata__"])
meta = h.get("__metadata__", {})
print("HGT checkpoint: %d tensors, model %s, heads %s; wrong or missing: %s" % (n_keys, meta.get("cgnn_model"), meta.get("heads"), bad))
# lin_dict 2T + per conv (5T + 2 + K) + lin 2 + the venue table, T = 4, K = 6
sys.exit(0 if not bad and n_keys == 2 * 4 + 2 * (5 * 4 + 2 + 6) + 2 + 1 and meta.get("cgnn_model") == "HGT" else 1)
PY
else bad "HGT failed: $(tail -3 "$TMP/hgt.err")"; fi
hgtconfig hgtw0 -e 's/num_epochs: "200"/num_epochs: "2"/' -e 's/num_neighbors: .*/num_neighbors: "[5, 3]"/' \
  -e 's/train_main_num_workers: "2"/train_main_num_workers: "0"/'
hgtconfig hgtw3 -e 's/num_epochs: "200"/num_epochs: "2"/' -e 's/num_neighbors: .*/num_neighbors: "[5, 3]"/' \
  -e 's/train_main_num_workers: "2"/train_main_num_workers: "3"/'
if train hgtw0 && train hgtw3; then
  cmp -s "$TMP/hgtw0/model.safetensors" "$TMP/hgtw3/model.safetensors" && ok || bad "HGT: 0 and 3 sampler threads trained different models"
else bad "HGT sampler-thread runs failed: $(tail -n 2 "$TMP/hgtw0.err" "$TMP/hgtw3.err")"; fi
config hgtheads -e 's/gnn_model_class_path: HeteroSAGE/gnn_model_class_path: HGT/' -e 's/    seed: "0"/    seed: "0"\n    num_heads: "3"/'
train hgtheads; rc=$?
[[ $rc -eq 2 ]] && grep -q "divisible by num_heads" "$TMP/hgtheads.err" && ok || bad "HGT with hidden 64, 3 heads: rc $rc $(tail -1 "$TMP/hgtheads.err")"

# ---- determinism: 0 and 3 sampler threads ----
config w0 -e 's/train_main_num_workers: "2"/train_main_num_workers: "0"/' -e 's/num_epochs: "40"/num_epochs: "3"/'
config w3 -e 's/train_main_num_workers: "2"/train_main_num_workers: "3"/' -e 's/num_epochs: "40"/num_epochs: "3"/'
if train w0 && train w3; then
  cmp -s "$TMP/w0/model.safetensors" "$TMP/w3/model.safetensors" && ok || bad "0 and 3 sampler threads trained different models"
else bad "sampler-thread runs failed: $(tail -n 2 "$TMP/w0.err" "$TMP/w3.err")"; fi

# ---- shouldSkipTraining: the saved model (and venue table) evaluates to the same metrics ----
config skip -e 's/shouldSkipTraining: false/shouldSkipTraining: true/' \
  -e "s#trainedModelUri: .*#trainedModelUri: $TMP/w0/model.safetensors#"
if train skip; then
  [[ "$(metric skip macro_f1)" == "$(metric w0 macro_f1)" && -n "$(metric w0 macro_f1)" ]] && ok \
    || bad "reloaded model: macro_f1 $(metric skip macro_f1) != $(metric w0 macro_f1)"
else bad "shouldSkipTraining failed: $(tail -2 "$TMP/skip.err")"; fi

# ---- GiGL's per-edge-type num_neighbors: the venue edge types left out (not sampled) ----
config pertype -e 's/num_epochs: "40"/num_epochs: "2"/' -e "s|num_neighbors: .*|num_neighbors: '{(\"paper\", \"written_by\", \"author\"): [10, 5], (\"author\", \"writes\", \"paper\"): [5, 5], (\"term\", \"term_of\", \"paper\"): [5, 5], (\"paper\", \"has_term\", \"term\"): [0, 3]}'|"
train pertype && ok || bad "per-edge-type fanouts failed: $(tail -2 "$TMP/pertype.err")"
config badtype -e "s|num_neighbors: .*|num_neighbors: '{(\"paper\", \"cites\", \"paper\"): [10, 5]}'|"
train badtype; rc=$?
[[ $rc -eq 2 ]] && grep -q "paper:cites:paper" "$TMP/badtype.err" && ok || bad "unknown edge type in num_neighbors: rc $rc $(tail -1 "$TMP/badtype.err")"

# ---- refusals ----
config homog -e 's/gnn_model_class_path: HeteroSAGE/gnn_model_class_path: GraphSAGE/'
train homog; rc=$?
[[ $rc -eq 2 ]] && grep -q "homogeneous model" "$TMP/homog.err" && ok || bad "GraphSAGE on a typed dataset: rc $rc $(tail -1 "$TMP/homog.err")"
config nocfg -e 's/nodeTypes: \[author, paper, term, venue\]/nodeTypes: [author, paper, term]/'
train nocfg; rc=$?
[[ $rc -eq 2 ]] && grep -q "venue" "$TMP/nocfg.err" && ok || bad "graphMetadata without venue: rc $rc $(tail -1 "$TMP/nocfg.err")"
# ---- typed link prediction (data/lastfm-mini, user:listens:artist, no features) ----
lpconfig() {
  local out=$1
  shift
  sed -e "s#out/[a-z_]*/#$TMP/$out/#g" "$@" examples/lastfm_hetero_sage_lp.yaml > "$TMP/$out.yaml"
}
lpconfig lp -e 's/num_epochs: "10"/num_epochs: "3"/'
if train lp; then
  mrr=$(metric lp mrr)
  echo "lastfm-mini HeteroSAGE link prediction (3 epochs): test mrr $mrr against 100 random artists (need >= 0.2)"
  if [[ $SANITIZED == 1 ]] || atleast "$mrr" 0.2; then ok; else bad "typed LP mrr $mrr < 0.2"; fi
  auc=$(metric lp auc); ap=$(metric lp ap)
  echo "lastfm-mini HeteroSAGE link prediction: test ROC-AUC $auc, AP $ap (one random artist per positive; need (0.5, 1])"
  awk -v a="$auc" -v p="$ap" 'BEGIN{exit !(a > 0.5 && a <= 1 && p > 0.5 && p <= 1)}' && ok || bad "typed LP auc $auc / ap $ap"
  for key in embedding_dict.user.weight embedding_dict.artist.weight embedding_dict.tag.weight \
             convs.0.convs.user__listens__artist.lin_l.weight; do
    head -c 65536 "$TMP/lp/model.safetensors" | grep -aq "\"$key\"" && ok || bad "typed LP checkpoint lacks $key"
  done
else bad "typed LP failed: $(tail -3 "$TMP/lp.err")"; fi
lpconfig lpw0 -e 's/num_epochs: "10"/num_epochs: "1"/' -e 's/train_main_num_workers: "2"/train_main_num_workers: "0"/'
lpconfig lpw3 -e 's/num_epochs: "10"/num_epochs: "1"/' -e 's/train_main_num_workers: "2"/train_main_num_workers: "3"/'
if train lpw0 && train lpw3; then
  cmp -s "$TMP/lpw0/model.safetensors" "$TMP/lpw3/model.safetensors" && ok || bad "typed LP: 0 and 3 sampler threads trained different models"
else bad "typed LP thread runs failed: $(tail -2 "$TMP/lpw0.err")"; fi
# cgnn embed writes one file per node type (tests/test_embed_typed.sh checks the values)
"$CGNN" embed --task_config_uri="$TMP/HeteroSAGE.yaml" --out="$TMP/emb" >"$TMP/embed.out" 2>&1; rc=$?
[[ $rc -eq 0 && -s $TMP/emb/author.npy && -s $TMP/emb/venue.npy ]] && ok || bad "cgnn embed on a typed graph: rc $rc $(tail -1 "$TMP/embed.out")"

# ---- data parallel: one SGD step, 2 ranks x 72 = 1 process x 144 (the whole train split) ----
if "$CGNN" --version | grep -q "distributed: MPI" && command -v mpirun >/dev/null; then
  MPIRUN=(mpirun --oversubscribe --bind-to none)
  [[ $(id -u) -eq 0 ]] && MPIRUN+=(--allow-run-as-root)
  export OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none
  [[ $SANITIZED == 1 ]] && export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0"
  step=(-e 's/optim_class_path: .*/optim_class_path: SGD/' -e 's/optim_lr: .*/optim_lr: "0.5"/'
        -e 's/dropout: .*/dropout: "0.0"/' -e 's/num_epochs: "40"/num_epochs: "1"/'
        -e 's/optim_weight_decay: .*/optim_weight_decay: "0"/' -e 's/    seed: "0"/    seed: "0"\n    embedding_optim_class_path: SGD/')
  config s1 "${step[@]}" -e 's/main_sample_batch_size: "128"/main_sample_batch_size: "144"/'
  config s2 "${step[@]}" -e 's/main_sample_batch_size: "128"/main_sample_batch_size: "72"/'
  if train s1 && timeout -k 10 300 "${MPIRUN[@]}" -np 2 "$CGNN" train --quiet --task_config_uri="$TMP/s2.yaml" >"$TMP/s2.out" 2>"$TMP/s2.err"; then
    /usr/bin/python3 - "$TMP/s1/model.safetensors" "$TMP/s2/model.safetensors" <<'PY' && ok || bad "typed: one step on 2 ranks != one step on the union batch"
import json, struct, sys
def load(p):
    b = open(p, "rb").read(); n = struct.unpack("<Q", b[:8])[0]; h = json.loads(b[8:8 + n]); d = b[8 + n:]
    return {k: struct.unpack("<%df" % ((v["data_offsets"][1] - v["data_offsets"][0]) // 4), d[v["data_offsets"][0]:v["data_offsets"][1]])
            for k, v in h.items() if k != "__metadata__"}
a, b = load(sys.argv[1]), load(sys.argv[2])
assert sorted(a) == sorted(b) and "embedding_dict.venue.weight" in a
worst = max(abs(x - y) / max(abs(x), 1e-2) for k in a for x, y in zip(a[k], b[k]))
print("typed one SGD step: 1 rank x 144 vs 2 ranks x 72: max relative weight difference %.2e" % worst)
sys.exit(0 if worst < 1e-4 else 1)
PY
  else bad "typed data-parallel step failed: $(tail -n 3 "$TMP/s1.err" "$TMP/s2.err")"; fi
  # HGT: its output lin is reduced with the last layer's parameters
  hgtconfig h1 "${step[@]}" -e 's/num_epochs: "200"/num_epochs: "1"/' -e 's/main_sample_batch_size: "128"/main_sample_batch_size: "144"/'
  hgtconfig h2 "${step[@]}" -e 's/num_epochs: "200"/num_epochs: "1"/' -e 's/main_sample_batch_size: "128"/main_sample_batch_size: "72"/'
  if train h1 && timeout -k 10 300 "${MPIRUN[@]}" -np 2 "$CGNN" train --quiet --task_config_uri="$TMP/h2.yaml" >"$TMP/h2.out" 2>"$TMP/h2.err"; then
    /usr/bin/python3 - "$TMP/h1/model.safetensors" "$TMP/h2/model.safetensors" <<'PY' && ok || bad "HGT: one step on 2 ranks != one step on the union batch"
import json, struct, sys
def load(p):
    b = open(p, "rb").read(); n = struct.unpack("<Q", b[:8])[0]; h = json.loads(b[8:8 + n]); d = b[8 + n:]
    return {k: struct.unpack("<%df" % ((v["data_offsets"][1] - v["data_offsets"][0]) // 4), d[v["data_offsets"][0]:v["data_offsets"][1]])
            for k, v in h.items() if k != "__metadata__"}
a, b = load(sys.argv[1]), load(sys.argv[2])
assert sorted(a) == sorted(b) and "lin.weight" in a and "embedding_dict.venue.weight" in a
worst = max(abs(x - y) / max(abs(x), 1e-2) for k in a for x, y in zip(a[k], b[k]))
print("HGT one SGD step: 1 rank x 144 vs 2 ranks x 72: max relative weight difference %.2e" % worst)
sys.exit(0 if worst < 1e-4 else 1)
PY
  else bad "HGT data-parallel step failed: $(tail -n 3 "$TMP/h1.err" "$TMP/h2.err")"; fi
else
  echo "SKIP (counted as not passed): data-parallel typed step needs an MPI build and mpirun"
fi

echo "test_train_typed: $pass passed, $fails failed"
[[ $fails -eq 0 ]]
