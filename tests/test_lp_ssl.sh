#!/usr/bin/env bash
# test_lp_ssl.sh CGNN — link prediction from GiGL's self-supervised split
# (trainerArgs.ssl_positive_label_percentage, graph/edge_split.h) on datasets that have only a
# node classification task: a generated homogeneous graph and data/dblp-mini (typed, supervision
# edge type paper:written_by:author, no model named: HGT by default).
#   - exit 0, a model, eval metrics (mrr);
#   - the split's label count is int(E * p), train + validation + test pairs = labels;
#   - the validation / test label edges are absent from message passing: the log's removed count
#     equals the validation + test pairs, and the graph the run samples has that many edges
#     fewer than with ssl_keep_eval_edges: true (which keeps every edge: GiGL's behaviour);
#   - the same seed gives the same model bits (0 and 2 sampler threads), another seed another split;
#   - bad values and conflicts exit 2 naming the file and field.
set -u
CGNN=${1:?usage: test_lp_ssl.sh path/to/cgnn}
SRC=${CGNN_SOURCE_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
TMP=$(mktemp -d /tmp/cgnn-lp-ssl-XXXXXX)
[[ ${KEEP:-0} == 1 ]] || trap 'rm -rf "$TMP"' EXIT
cd "$SRC"
fails=0
pass=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }
train() { # train NAME — cgnn train on $TMP/NAME.yaml; stdout in $TMP/NAME.out, stderr in .err, rc in .rc
  timeout -k 10 300 "$CGNN" train --task_config_uri="$TMP/$1.yaml" >"$TMP/$1.out" 2>"$TMP/$1.err"
  echo $? >"$TMP/$1.rc"
}
rc() { cat "$TMP/$1.rc"; }
# split NAME FIELD — from the split log line: labels, edges, trp / vap / tep (pairs), tra / vaa / tea (anchors)
split() {
  sed -n 's/.*split (GiGL.*): \([0-9]*\) of the \([0-9]*\) edges of .* are labels; per anchor: \([0-9]*\) \/ \([0-9]*\) \/ \([0-9]*\) anchors, \([0-9]*\) \/ \([0-9]*\) \/ \([0-9]*\) pairs.*/\1 \2 \3 \4 \5 \6 \7 \8/p' \
    "$TMP/$1.err" | awk -v f="$2" '{m["labels"]=$1; m["edges"]=$2; m["tra"]=$3; m["vaa"]=$4; m["tea"]=$5;
                                     m["trp"]=$6; m["vap"]=$7; m["tep"]=$8; print m[f]}'
}
removed() { sed -n 's/.*ssl: removed \([0-9]*\) validation \/ test label edges.*/\1/p' "$TMP/$1.err"; }
# reversed NAME — the reverse copies removed: in the supervision edge type itself (same node type at
# both ends) plus in the reverse edge types (typed), summed
reversed() {
  sed -n -e 's/.*ssl: removed [0-9]* validation .* and \([0-9]*\) reverse copies of them in .*/\1/p' \
    -e 's/.*ssl: removed \([0-9]*\) reverse copies of the validation .*/\1/p' "$TMP/$1.err" | awk '{s += $1} END {print s + 0}'
}
graph_edges() { sed -n 's/.*link prediction: .* nodes, \([0-9]*\) edges.*/\1/p' "$TMP/$1.err"; }
metric() { awk -v k="$2" '/^test:/{for (i = 2; i < NF; i++) if ($i == k) print $(i + 1)}' "$TMP/$1.out"; }

# check_run NAME P — exit 0, model, metrics, the split sizes and the removed edges
check_run() {
  local n=$1 p=$2
  if [[ $(rc "$n") != 0 ]]; then bad "$n: exit $(rc "$n"): $(tail -3 "$TMP/$n.err")"; return; fi
  [[ -s $TMP/$n/model.safetensors && -s $TMP/$n/eval_metrics.json ]] && grep -q '"mrr"' "$TMP/$n/eval_metrics.json" \
    && ok || bad "$n: no model or eval metrics"
  local labels edges trp vap tep rem want
  labels=$(split "$n" labels) edges=$(split "$n" edges) trp=$(split "$n" trp) vap=$(split "$n" vap) tep=$(split "$n" tep)
  want=$(awk -v e="$edges" -v p="$p" 'BEGIN{printf "%d", e * p}')
  [[ -n $labels && $labels == "$want" ]] && ok || bad "$n: $labels labels of $edges edges, expected int(E * $p) = $want"
  [[ -n $trp && $((trp + vap + tep)) == "$labels" && $vap -gt 0 && $tep -gt 0 ]] && ok \
    || bad "$n: pairs $trp + $vap + $tep != $labels labels (or an empty split)"
  rem=$(removed "$n")
  [[ -n $rem && $rem == $((vap + tep)) ]] && ok || bad "$n: removed '$rem' edges from message passing, expected $vap + $tep"
  grep -q "^test: .*mrr" "$TMP/$n.out" && ok || bad "$n: no test metrics"
  echo "ok   $n: $labels of $edges edges are labels, pairs $trp / $vap / $tep, $rem removed; test mrr $(metric "$n" mrr)"
}

# ---- homogeneous: a generated graph with a node classification task only --------------------
"$CGNN" generate --out "$TMP/hom" --nodes 1500 --avg_degree 6 --classes 4 --feat_dim 16 --seed 5 --name ssl-hom \
  >"$TMP/gen.log" 2>&1 || { echo "FAIL: cgnn generate: $(tail -3 "$TMP/gen.log")"; exit 1; }
grep -q link_prediction "$TMP/hom/metadata.yaml" && bad "the generated dataset has a link prediction task"
hom_cfg() { # hom_cfg NAME [extra trainerArgs lines]
  local n=$1
  shift
  {
    cat <<EOF
taskMetadata:
  nodeAnchorBasedLinkPredictionTaskMetadata:
    supervisionEdgeTypes:
    - {srcNodeType: paper, relation: cites, dstNodeType: paper}
trainerConfig:
  trainerArgs:
    hidden_dim: "32"
    num_neighbors: "[5, 5]"
    main_sample_batch_size: "128"
    random_negative_sample_batch_size: "128"
    num_epochs: "2"
EOF
    for l in "$@"; do echo "    $l"; done
    cat <<EOF
sharedConfig:
  preprocessedMetadataUri: $TMP/hom
  trainedModelMetadata:
    trainedModelUri: $TMP/$n/model.safetensors
    evalMetricsUri: $TMP/$n/eval_metrics.json
EOF
  } >"$TMP/$n.yaml"
}
SSL=('ssl_positive_label_percentage: "0.3"' 'num_val: "0.2"' 'num_test: "0.2"')
hom_cfg hom "${SSL[@]}" && train hom && check_run hom 0.3
hom_cfg hom_w0 "${SSL[@]}" 'train_main_num_workers: "0"' && train hom_w0
cmp -s "$TMP/hom/model.safetensors" "$TMP/hom_w0/model.safetensors" && ok \
  || bad "homogeneous: 2 and 0 sampler threads give different models"
hom_cfg hom_keep "${SSL[@]}" 'ssl_keep_eval_edges: "true"' && train hom_keep
if [[ $(rc hom_keep) == 0 ]]; then
  grep -q "ssl: message passing keeps all $(split hom edges) edges" "$TMP/hom_keep.err" && ok \
    || bad "hom_keep: no 'keeps all' line: $(grep ssl: "$TMP/hom_keep.err")"
  [[ $(graph_edges hom_keep) == $(($(graph_edges hom) + $(removed hom) + $(reversed hom))) && $(graph_edges hom_keep) == $(split hom edges) ]] \
    && ok || bad "graph edges: $(graph_edges hom) removed, $(graph_edges hom_keep) kept, $(removed hom) + $(reversed hom) removed"
  [[ $(split hom_keep vap) == $(split hom vap) ]] && ok || bad "keeping the edges changed the split"
else
  bad "hom_keep: exit $(rc hom_keep): $(tail -3 "$TMP/hom_keep.err")"
fi
hom_cfg hom_seed "${SSL[@]}" 'seed: "9"' && train hom_seed
[[ $(rc hom_seed) == 0 && "$(split hom_seed trp) $(split hom_seed vap)" != "$(split hom trp) $(split hom vap)" ]] && ok \
  || bad "another seed gives the same split (or failed): $(tail -2 "$TMP/hom_seed.err")"
# data parallel: every rank computes the same split (rank 0 logs it): the split and the removed
# edges are those of the single process
if "$CGNN" --version | grep -q "distributed: MPI" && command -v mpirun >/dev/null; then
  MPIRUN=(mpirun --oversubscribe --bind-to none)
  [[ $(id -u) -eq 0 ]] && MPIRUN+=(--allow-run-as-root)
  [[ ${CGNN_TEST_SANITIZED:-0} == 1 ]] && export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0"
  hom_cfg hom_np2 "${SSL[@]}"
  OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none timeout -k 10 300 "${MPIRUN[@]}" -np 2 \
    "$CGNN" train --task_config_uri="$TMP/hom_np2.yaml" >"$TMP/hom_np2.out" 2>"$TMP/hom_np2.err"
  echo $? >"$TMP/hom_np2.rc"
  line() { grep -o 'split (GiGL.*pairs' "$TMP/$1.err"; }
  [[ $(rc hom_np2) == 0 && -n $(line hom) && "$(line hom_np2)" == "$(line hom)" && $(removed hom_np2) == $(removed hom) ]] \
    && ok || bad "mpirun -np 2: another split or failed (exit $(rc hom_np2)): $(line hom_np2) $(tail -2 "$TMP/hom_np2.err")"
else
  echo "note: no MPI build or mpirun: the 2-rank check did not run (not counted)"
fi
# bad values: exit 2 naming the config file and the field
expect2() { # expect2 NAME REGEX
  if [[ $(rc "$1") == 2 ]] && grep -Eq "$2" "$TMP/$1.err" && grep -q "$TMP/$1.yaml" "$TMP/$1.err" \
     && [[ ! -e $TMP/$1/model.safetensors ]]; then ok; else
    bad "$1: expected exit 2 naming /$2/, got exit $(rc "$1"): $(tail -2 "$TMP/$1.err")"
  fi
}
hom_cfg bad_p 'ssl_positive_label_percentage: "1.5"' && train bad_p && expect2 bad_p "ssl_positive_label_percentage.*\(0, 1\]"
hom_cfg bad_p0 'ssl_positive_label_percentage: "0"' && train bad_p0 && expect2 bad_p0 "ssl_positive_label_percentage"
hom_cfg bad_sum 'ssl_positive_label_percentage: "0.3"' 'num_val: "0.6"' 'num_test: "0.5"' && train bad_sum \
  && expect2 bad_sum "num_val \+ num_test"
hom_cfg bad_neg 'ssl_positive_label_percentage: "0.3"' 'num_test: "-0.1"' && train bad_neg && expect2 bad_neg "num_test"
# a dataset with its own link prediction pairs: refused (GiGL refuses loaded labels with ssl ones)
"$CGNN" generate --out "$TMP/hom_lp" --nodes 300 --avg_degree 4 --classes 3 --feat_dim 8 --seed 2 --link_prediction \
  >>"$TMP/gen.log" 2>&1
hom_cfg both 'ssl_positive_label_percentage: "0.3"'
sed -i "s#preprocessedMetadataUri: .*#preprocessedMetadataUri: $TMP/hom_lp#" "$TMP/both.yaml"
train both && expect2 both "has link prediction task .*own pairs"

# ---- typed: data/dblp-mini (node classification only), no model named: HGT ------------------
cp -r data/dblp-mini "$TMP/dblp"
dblp_cfg() { # dblp_cfg NAME [extra trainerArgs lines]
  local n=$1
  shift
  {
    cat <<EOF
graphMetadata:
  nodeTypes: [author, paper, term, venue]
taskMetadata:
  nodeAnchorBasedLinkPredictionTaskMetadata:
    supervisionEdgeTypes:
    - {srcNodeType: paper, relation: written_by, dstNodeType: author}
trainerConfig:
  trainerArgs:
    ssl_positive_label_percentage: "0.5"
    hid_dim: "32"
    num_neighbors: "[5, 5]"
    main_batch_size: "128"
    random_batch_size: "128"
    num_epochs: "2"
EOF
    for l in "$@"; do echo "    $l"; done
    cat <<EOF
sharedConfig:
  preprocessedMetadataUri: $TMP/dblp
  trainedModelMetadata:
    trainedModelUri: $TMP/$n/model.safetensors
    evalMetricsUri: $TMP/$n/eval_metrics.json
EOF
  } >"$TMP/$n.yaml"
}
dblp_cfg dblp && train dblp && check_run dblp 0.5
grep -q "gnn_model_class_path not given .* typed .*training HGT" "$TMP/dblp.err" && ok || bad "dblp: no HGT default line"
grep -q "link prediction: HGT on dblp-mini" "$TMP/dblp.err" && ok || bad "dblp: not HGT"
dblp_cfg dblp_keep 'ssl_keep_eval_edges: "true"' && train dblp_keep
[[ $(rc dblp_keep) == 0 && $(graph_edges dblp_keep) == $(($(graph_edges dblp) + $(removed dblp) + $(reversed dblp))) ]] && ok \
  || bad "dblp_keep: graph edges $(graph_edges dblp_keep) vs $(graph_edges dblp) + $(removed dblp) + $(reversed dblp) (exit $(rc dblp_keep))"
# dblp-mini stores author:writes:paper beside paper:written_by:author: the reverse copy of every
# held-out (paper, author) label leaves message passing too
[[ $(reversed dblp) -ge $(removed dblp) && $(removed dblp) -gt 0 ]] && ok \
  || bad "dblp: $(reversed dblp) reverse copies removed for $(removed dblp) held-out labels"
# naming a homogeneous model on a typed dataset stays an error
dblp_cfg dblp_sage 'gnn_model_class_path: GraphSAGE' && train dblp_sage && expect2 dblp_sage "GraphSAGE is a homogeneous model"
# typed with several edge types: the supervision edge type must be named
dblp_cfg dblp_nosup && sed -i '/taskMetadata:/,/dstNodeType: author}/c\taskMetadata:\n  nodeAnchorBasedLinkPredictionTaskMetadata: {}' \
  "$TMP/dblp_nosup.yaml" && train dblp_nosup && expect2 dblp_nosup "supervisionEdgeTypes"

echo "test_lp_ssl: $pass passed, $fails failed"
[[ $fails == 0 ]]
