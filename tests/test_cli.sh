#!/usr/bin/env bash
# test_cli.sh CGNN — the command line: help, version, exit codes, info, generate, bench.
set -u
CGNN=${1:?usage: test_cli.sh path/to/cgnn}
SRC=${CGNN_SOURCE_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
TMP=$(mktemp -d /tmp/cgnn-cli-XXXXXX)
trap 'rm -rf "$TMP"' EXIT
fails=0
pass=0

# expect CODE DESCRIPTION -- command...   (stdout+stderr captured in $TMP/out)
expect() {
  local want=$1 desc=$2
  shift 3
  "$@" >"$TMP/out" 2>&1
  local got=$?
  if [[ $got -ne $want ]]; then
    echo "FAIL: $desc: exit $got, want $want"; sed 's/^/    /' "$TMP/out" | head -20; fails=$((fails + 1))
  else
    pass=$((pass + 1))
  fi
}
# contains TEXT DESCRIPTION — the last command's output contains TEXT
contains() {
  if ! grep -qF -- "$1" "$TMP/out"; then
    echo "FAIL: $2: output lacks '$1'"; sed 's/^/    /' "$TMP/out" | head -20; fails=$((fails + 1))
  else
    pass=$((pass + 1))
  fi
}

expect 0 "--help" -- "$CGNN" --help;                 contains "usage: cgnn" "--help"
expect 0 "--version" -- "$CGNN" --version;           contains "cgnn 0." "--version"
expect 2 "no command" -- "$CGNN"
expect 2 "unknown command" -- "$CGNN" frobnicate;    contains "unknown command 'frobnicate'" "unknown command"
expect 0 "info --help" -- "$CGNN" info --help;       contains "usage: cgnn info" "info --help"
expect 0 "info without dataset: the machine" -- "$CGNN" info --threads 1
contains "BLAS: " "info without dataset names the BLAS kernels"
expect 2 "info with two datasets" -- "$CGNN" info "$SRC/data/cora" "$SRC/data/cora"
expect 2 "info unknown flag" -- "$CGNN" info "$SRC/data/cora" --thread 2
contains "did you mean '--threads'" "info unknown flag suggestion"
expect 2 "info missing dataset" -- "$CGNN" info "$TMP/nope";   contains "$TMP/nope" "missing dataset names the path"
expect 2 "bad flag value" -- "$CGNN" info "$SRC/data/cora" --threads=two; contains "--threads" "bad value names flag"

# info on the bundled Cora (copied: its edges are rewritten below), with a cache folder of its own
export CGNN_CACHE_DIR="$TMP/cache"
cp -r "$SRC/data/cora" "$TMP/cora" && rm -rf "$TMP/cora/preprocessed" # (older cgnn cached there)
expect 0 "info cora" -- "$CGNN" info "$TMP/cora"
contains "nodes: 2708" "cora nodes"; contains "edges: 10556" "cora edges"
contains "node/feat: (2708, 1433) uint8" "cora features"; contains "7 classes" "cora classes"
contains "train_set: 140" "cora train split"; contains "graph index: built" "first info builds the index"
expect 0 "info cora (cached)" -- "$CGNN" info "$TMP/cora"; contains "loaded from cache" "second info reuses the cache"
# the cache is tied to the edge list's content, not the file's metadata
touch "$TMP/cora/edges.npy"
expect 0 "info cora (edges touched)" -- "$CGNN" info "$TMP/cora"; contains "loaded from cache" "touched, same content: reused"
cache0=$(sed -n 's/^graph index cache: //p' "$TMP/out")
# same size and mtime, other content (two edges' sources swapped): a stale index must not be used
stamp=$(stat -c %y "$TMP/cora/edges.npy")
/usr/bin/python3 -c "
import numpy as np, sys
e = np.load(sys.argv[1]); e[0, 0], e[0, -1] = e[0, -1], e[0, 0]; assert e[0, 0] != e[0, -1]; np.save(sys.argv[1], e)" "$TMP/cora/edges.npy"
touch -d "$stamp" "$TMP/cora/edges.npy"
expect 0 "info cora (edges rewritten)" -- "$CGNN" info "$TMP/cora"; contains "graph index: built" "changed content rebuilds"
grep -q "^graph index cache: $cache0\$" "$TMP/out" && { echo "FAIL: other edges, the same cache file"; fails=$((fails + 1)); } || pass=$((pass + 1))
# a corrupted cache (body zeroed: structurally plausible) is rebuilt, never used
cache=$(sed -n 's/^graph index cache: //p' "$TMP/out")
[[ $cache == "$TMP/cache/csc/csc-"*.bin && -f $cache ]] && pass=$((pass + 1)) || { echo "FAIL: the cache file '$cache' is not in \$CGNN_CACHE_DIR/csc"; fails=$((fails + 1)); }
[[ ! -e $TMP/cora/preprocessed ]] && pass=$((pass + 1)) || { echo "FAIL: the dataset folder got a preprocessed/"; fails=$((fails + 1)); }
size=$(stat -c %s "$cache")
dd if=/dev/zero of="$cache" bs=1 seek=$((size - 4096)) count=4096 conv=notrunc status=none
expect 0 "info cora (cache zeroed)" -- "$CGNN" info "$TMP/cora"; contains "graph index: built" "corrupt cache rebuilt"
contains "checksum mismatch" "corrupt cache: why"
# offsets corrupted (out of range): rebuilt, never a crash
printf '\xff\xff\xff\xff\xff\xff\xff\x7f' | dd of="$cache" bs=1 seek=$((4096 + 8 * 100)) conv=notrunc status=none
expect 0 "info cora (offsets corrupt)" -- "$CGNN" info "$TMP/cora"; contains "graph index: built" "corrupt offsets rebuilt"
contains "offsets decrease" "corrupt offsets: why"
# a cache of another format (old version) or a FIFO in its place: rebuilt
rm -f "$cache"; mkfifo "$cache"
expect 0 "info cora (cache is a FIFO)" -- timeout -k 10 20 "$CGNN" info "$TMP/cora"; contains "graph index: built" "FIFO cache: rebuilt"
rm -f "$cache"
# a typed dataset: per-type counts, features or featureless, edge types with their in-degree, task type
cp -r "$SRC/data/dblp-mini" "$TMP/dblp-mini"
expect 0 "info dblp-mini" -- "$CGNN" info "$TMP/dblp-mini"
contains "node types: 4" "typed: node type count"; contains "author: 600 nodes" "typed: author count"
contains "paper: 2881 nodes (offset 600), features: feat (uint8, dim 256)" "typed: paper count and feature"
contains "venue: 20 nodes (offset 6720), featureless" "typed: featureless venue"
contains "author:writes:paper: 3054 edges" "typed: edge type count"; contains "in-degree over paper" "typed: in-degree over the dst type"
contains "node_classification, node type author, 4 classes" "typed: task type"
expect 0 "info dblp-mini (cached)" -- "$CGNN" info "$TMP/dblp-mini"; contains "loaded from cache" "typed: per edge type cache reused"
expect 0 "partition a typed dataset" -- "$CGNN" partition --dataset "$TMP/dblp-mini" --num_parts 2 --method random --out "$TMP/dblp-parts"
contains "typed: 4 node types, 6 edge types" "partition of a typed dataset: per-type ranges printed"
expect 0 "info on a typed part" -- "$CGNN" info "$TMP/dblp-parts/part1"
contains "owns one range of new per-type ids per node type" "typed part: the partition line"
contains "in-degree over paper (the part's nodes)" "typed part: per edge type index of the part's nodes"
# a read-only dataset still works (no cache written)
expect 0 "info read-only copy" -- "$CGNN" info "$SRC/data/cora"

# generate + info + bench on a small synthetic graph
expect 2 "generate without --out" -- "$CGNN" generate --nodes 100
expect 2 "generate bad homophily" -- "$CGNN" generate --out "$TMP/g" --homophily 1.5; contains "homophily" "names the parameter"
expect 0 "generate small" -- "$CGNN" generate --out "$TMP/g" --nodes 3000 --avg_degree 8 --classes 5 --feat_dim 16 --seed 3
expect 0 "info generated" -- "$CGNN" info "$TMP/g";  contains "nodes: 3000" "generated nodes"
expect 0 "bench sample" -- "$CGNN" bench sample --dataset "$TMP/g" --fanouts 5,3 --batch 64 --batches 4 --reps 2
contains "edges/s per core" "bench prints per-core rate"; contains "copy bandwidth" "bench prints copy bandwidth"
expect 2 "bench sample bad fanouts" -- "$CGNN" bench sample --dataset "$TMP/g" --fanouts 5,0
contains "fanouts[1]" "bad fanout named"
expect 2 "bench unknown" -- "$CGNN" bench nothing

# a config declaring a typed graph (GiGL's DBLP-style graphMetadata) on a homogeneous dataset is
# refused naming both sides, never trained as a homogeneous model; nothing is written
sed -e "s#out/cora_graphsage/#$TMP/typed/#g" \
    -e 's/  nodeTypes: \[paper\]/  nodeTypes: [author, paper, term]/' \
    -e 's/  edgeTypes: \[{srcNodeType: paper, relation: cites, dstNodeType: paper}\]/  edgeTypes: [{srcNodeType: author, relation: writes, dstNodeType: paper}, {srcNodeType: paper, relation: cites, dstNodeType: paper}]/' \
    "$SRC/examples/cora_graphsage.yaml" >"$TMP/typed.yaml"
expect 2 "typed config on a homogeneous dataset" -- bash -c "cd '$SRC' && '$CGNN' train --task_config_uri='$TMP/typed.yaml'"
contains "graphMetadata declares 3 node types (author, paper, term) and 2 edge types (author:writes:paper, paper:cites:paper)" "typed config: the config's side"
contains "has 1 node type (_default" "typed config: the dataset side"
[[ ! -e $TMP/typed ]] && pass=$((pass + 1)) || { echo "FAIL: a refused typed config wrote outputs"; fails=$((fails + 1)); }

# a read-only dataset directory (no write bits; root could write it anyway) is never modified,
# and its index is cached all the same (in the cache folder); GraphBolt's own preprocessed/ folder
# in a dataset is left as it is
cp -r "$SRC/data/cora" "$TMP/ro-cora" && mkdir -p "$TMP/ro-cora/preprocessed" && echo graphbolt >"$TMP/ro-cora/preprocessed/fused_csc_sampling_graph.pt"
chmod -R a-w "$TMP/ro-cora"
before=$(find "$TMP/ro-cora" -printf '%p %s %T@ %C@\n' | sort)
rm -rf "$TMP/cache2"
expect 0 "info on a read-only dataset" -- env CGNN_CACHE_DIR="$TMP/cache2" "$CGNN" info "$TMP/ro-cora"; contains "graph index: built" "read-only dataset: built"
contains "graph index cache: $TMP/cache2/csc/csc-" "read-only dataset: cached in the cache folder"
expect 0 "info on a read-only dataset (cached)" -- env CGNN_CACHE_DIR="$TMP/cache2" "$CGNN" info "$TMP/ro-cora"; contains "loaded from cache" "read-only dataset: the cache reused"
[[ $(find "$TMP/ro-cora" -printf '%p %s %T@ %C@\n' | sort) == "$before" ]] && pass=$((pass + 1)) || { echo "FAIL: a read-only dataset (with GraphBolt's preprocessed/) was modified"; fails=$((fails + 1)); }
chmod -R u+w "$TMP/ro-cora"
# no cache folder: CGNN_CACHE_DIR="" (or no HOME): built in memory every run, with a note
expect 0 "info without a cache folder" -- env CGNN_CACHE_DIR= "$CGNN" info "$SRC/data/cora"; contains "not caching the graph index (no cache folder" "no cache folder: the note"
contains "graph index: built" "no cache folder: built"
# XDG_CACHE_HOME, then HOME: the cache folder cgnn info names
expect 0 "info: cache folder from XDG" -- env -u CGNN_CACHE_DIR XDG_CACHE_HOME="$TMP/xdg" "$CGNN" info; contains "cache folder: $TMP/xdg/cgnn (from \$XDG_CACHE_HOME)" "XDG_CACHE_HOME"
expect 0 "info: cache folder from HOME" -- env -u CGNN_CACHE_DIR -u XDG_CACHE_HOME HOME="$TMP/home" "$CGNN" info; contains "cache folder: $TMP/home/.cache/cgnn (from \$HOME)" "HOME"

# small things a new user meets: names from other tools get a suggestion; --dataset as elsewhere;
# what cgnn ignores or converts is said; counts read right
expect 2 "a flag without its suffix" -- "$CGNN" train --task_config=x.yaml
contains "did you mean '--task_config_uri'?" "--task_config: the suggestion"
expect 2 "--resource_config" -- "$CGNN" train --task_config_uri=x.yaml --resource_config=r.yaml
contains "did you mean '--resource_config_uri'?" "--resource_config: the suggestion"
expect 0 "info --dataset" -- "$CGNN" info --dataset "$SRC/data/cora"; contains "nodes: 2708" "info --dataset"
expect 2 "info with a dataset twice" -- "$CGNN" info "$SRC/data/cora" --dataset "$SRC/data/cora"
contains "a dataset given twice" "info with a dataset twice"
cp -r "$SRC/data/facebook-lp" "$TMP/fblp-alone"
expect 0 "facebook-lp without its sibling folder" -- "$CGNN" info "$TMP/fblp-alone"
contains "nodes: 22470" "facebook-lp on its own"
# (trainer arguments other trainers spell differently; 1 step; no epoch count)
small() { # small NAME [sed expressions...]: a one-step Cora config, outputs under $TMP/NAME/
  local name=$1
  shift
  sed -e "s#out/[a-z_]*/#$TMP/$name/#g" -e "s#preprocessedMetadataUri: .*#preprocessedMetadataUri: $SRC/data/cora#" \
    -e 's/num_epochs: "200"/num_epochs: "1"/' "$@" "$SRC/examples/cora_graphsage.yaml" >"$TMP/$name.yaml"
}
small lr -e 's/    seed: "0"/    seed: "0"\n    lr: "0.1"/'
expect 2 "trainer argument lr" -- "$CGNN" train --task_config_uri="$TMP/lr.yaml"; contains "did you mean 'optim_lr'?" "lr"
small epochs -e 's/    seed: "0"/    seed: "0"\n    epochs: "3"/'
expect 2 "trainer argument epochs" -- "$CGNN" train --task_config_uri="$TMP/epochs.yaml"
contains "did you mean 'num_epochs'?" "epochs"
small one -e 's#trainedModelUri: \(.*\)#trainedModelUri: \1\n    scriptedModelUri: gs://b/m.pt#'
printf 'trainer_resource_config:\n  vertex_ai_trainer_config: {machine_type: n1-standard-4}\n  local_trainer_config: {num_workers: 1}\n' >"$TMP/vertex.yaml"
expect 0 "one step" -- "$CGNN" train --task_config_uri="$TMP/one.yaml" --resource_config_uri="$TMP/vertex.yaml"
contains "trained 1 step in " "1 step, singular"
contains "scriptedModelUri ignored: cgnn writes no TorchScript model" "scriptedModelUri is said"
contains "trainer_resource_config.vertex_ai_trainer_config ignored: GiGL's cloud trainer" "vertex_ai_trainer_config is said"
contains "edges.npy: Fortran-order edges copied to C order in memory" "Fortran-order edges are said"
small nolimit -e 's/    num_epochs: "1"/    num_max_train_batches: "2"/'
expect 0 "no epoch count" -- "$CGNN" train --task_config_uri="$TMP/nolimit.yaml"
contains "cgnn: epoch 1  train loss" "an epoch line without a count"
if grep -q "epoch 1/0" "$TMP/out"; then echo "FAIL: 'epoch 1/0' printed"; fails=$((fails + 1)); else pass=$((pass + 1)); fi

# GraphBolt's own tutorial dataset (tests/fixtures/graphbolt/homograph: format: torch features and
# labels, CSV edges, edge features, float64 LP labels) opens and trains as GraphBolt opens it
cp -r "$SRC/tests/fixtures/graphbolt/homograph" "$TMP/gb-homograph"
expect 0 "info on GraphBolt's homograph tutorial" -- "$CGNN" info --dataset "$TMP/gb-homograph"
contains "node/feat_1: (40, 5) float32" "GraphBolt tutorial: a format: torch feature"
contains "train_set: 24 validation_set: 8 test_set: 8" "GraphBolt tutorial: NC splits (torch labels)"
contains "validation_set: 880 pairs" "GraphBolt tutorial: LP splits (float64 labels)"
small gbtrain -e "s#preprocessedMetadataUri: .*#preprocessedMetadataUri: $TMP/gb-homograph#" \
  -e 's/main_sample_batch_size: "140"/main_sample_batch_size: "24"/'
expect 0 "train on GraphBolt's homograph tutorial" -- "$CGNN" train --task_config_uri="$TMP/gbtrain.yaml"
contains "trained 1 step in " "GraphBolt tutorial: trained"

# GraphBolt's heterograph tutorial: each task has a set per type; read as one task per type, and
# the config's supervision type picks the one trained
cp -r "$SRC/tests/fixtures/graphbolt/heterograph" "$TMP/gb-hetero"
expect 0 "info on GraphBolt's heterograph tutorial" -- "$CGNN" info --dataset "$TMP/gb-hetero"
contains "read as the tasks 'node_classification[user]', 'node_classification[item]'" "heterograph: the tasks per type, said"
contains "link_prediction[user:follow:user]: link_prediction, edge type user:follow:user" "heterograph: an LP task per edge type"
gbh() { # gbh NAME TASKMETADATA: a one-batch typed config on the heterograph tutorial
  printf 'graphMetadata:
  nodeTypes: [user, item]
  edgeTypes:
    - {srcNodeType: user, relation: like, dstNodeType: item}
    - {srcNodeType: user, relation: follow, dstNodeType: user}
taskMetadata:
%s
sharedConfig:
  preprocessedMetadataUri: %s
  trainedModelMetadata: {trainedModelUri: %s/model.safetensors}
trainerConfig:
  trainerArgs: {hidden_dim: "8", num_max_train_batches: "1", main_sample_batch_size: "8", node_feature: feat_1}
' \
    "$2" "$TMP/gb-hetero" "$TMP/$1" >"$TMP/$1.yaml"
}
gbh gbh-nc "  nodeBasedTaskMetadata: {supervisionNodeTypes: [item]}"
expect 0 "train on the heterograph tutorial: items" -- "$CGNN" train --task_config_uri="$TMP/gbh-nc.yaml"
contains "18/6/6 train/val/test item nodes of task 'node_classification[item]'" "heterograph NC: the item task"
contains "item 'feat_1' (5, float32) of feat_0, feat_1" "heterograph NC: node_feature feat_1 per type"
gbh gbh-lp "  nodeAnchorBasedLinkPredictionTaskMetadata:\n    supervisionEdgeTypes: [{srcNodeType: user, relation: follow, dstNodeType: user}]"
sed -i 's/\\n/\n/g' "$TMP/gbh-lp.yaml"
expect 0 "train on the heterograph tutorial: follows" -- "$CGNN" train --task_config_uri="$TMP/gbh-lp.yaml"
contains "user:follow:user pairs of task 'link_prediction[user:follow:user]'" "heterograph LP: the follow task"

# a user's CSV: a header line is skipped (said); edges listed one way are warned about
mkdir -p "$TMP/oneway"
printf 'src,dst\n0,1\n1,2\n2,3\n3,4\n' >"$TMP/oneway/edges.csv"
printf 'dataset_name: oneway\ngraph:\n  nodes: [{num: 5}]\n  edges: [{format: csv, path: edges.csv}]\n' >"$TMP/oneway/metadata.yaml"
expect 0 "CSV with a header, one way" -- "$CGNN" info "$TMP/oneway"
contains "edges.csv:1: header line 'src,dst' skipped" "the CSV header: said"
contains "edges: 4 (" "the CSV header: not an edge"
contains "reverse edges: 0.0% of the edges" "the reverse-edge share"
contains "warning: $TMP/oneway: 0.0% of the edges have their reverse edge" "one-way edges: the warning"
printf 'src,dst\n0,1\n1,0\n1,2\n2,1\n' >"$TMP/oneway/edges.csv"
expect 0 "CSV both ways" -- "$CGNN" info "$TMP/oneway"
contains "reverse edges: 100.0% of the edges" "both ways: the share"
if grep -q "have their reverse edge" "$TMP/out"; then echo "FAIL: a warning for edges listed both ways"; fails=$((fails + 1)); else pass=$((pass + 1)); fi

# which node feature a run reads: trainerArgs.node_feature, else "feat"; the log says which, and
# lists the others; a name the dataset lacks is exit 2 naming the ones it has
cp -r "$SRC/data/cora" "$TMP/twofeat"
/usr/bin/python3 -c "
import numpy as np, sys
np.save(sys.argv[1] + '/feat2.npy', np.random.default_rng(0).standard_normal((2708, 8)).astype(np.float32))" "$TMP/twofeat"
sed -i 's#^tasks:#  - {domain: node, name: feat2, format: numpy, path: feat2.npy}\ntasks:#' "$TMP/twofeat/metadata.yaml"
sed -e "s#out/[a-z_]*/#$TMP/twofeat-out/#g" -e "s#preprocessedMetadataUri: .*#preprocessedMetadataUri: $TMP/twofeat#" \
  "$SRC/examples/cora_graphsage.yaml" >"$TMP/twofeat.yaml"
expect 0 "two node features: the default" -- env CGNN_TEST_MAX_TRAIN_BATCHES=1 "$CGNN" train --task_config_uri="$TMP/twofeat.yaml"
contains "node feature: 'feat' (1433, uint8) of feat, feat2 (trainerArgs.node_feature picks one); normalisation: row" "two features: the log names the one used"
sed -i 's#^  trainerArgs:#  trainerArgs:\n    node_feature: feat2#' "$TMP/twofeat.yaml"
expect 0 "two node features: node_feature feat2" -- env CGNN_TEST_MAX_TRAIN_BATCHES=1 "$CGNN" train --task_config_uri="$TMP/twofeat.yaml"
contains "node feature: 'feat2' (8, float32) of feat, feat2;" "node_feature: feat2 used"
grep -q '"in_channels":"8"' "$TMP/twofeat-out/model.safetensors" && grep -q '"node_feature":"feat2"' "$TMP/twofeat-out/model.safetensors" \
  && pass=$((pass + 1)) || { echo "FAIL: the checkpoint is not of feat2 (8 channels)"; fails=$((fails + 1)); }
sed -i 's#node_feature: feat2#node_feature: feet#' "$TMP/twofeat.yaml"
expect 2 "node_feature: a name the dataset lacks" -- "$CGNN" train --task_config_uri="$TMP/twofeat.yaml"
contains "trainerConfig.trainerArgs.node_feature: 'feet' is not a node feature of $TMP/twofeat (its node features: feat, feat2)" "bad node_feature: the message"

echo "test_cli: $pass passed, $fails failed"
[[ $fails -eq 0 ]]
