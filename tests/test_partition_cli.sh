#!/usr/bin/env bash
# test_partition_cli.sh CGNN — `cgnn partition` end to end:
#   - Cora (int64 edges, uint8 features, node classification) and a generated graph (int32
#     edges, float32 node and float64 edge features, node classification + link prediction whose
#     validation split has GraphBolt labels and indexes), metis and random, 2 and 3 parts: every
#     output checked by
#     tests/check_partition.py against the source with numpy (edges exactly once, in original
#     order per dst; id maps inverse bijections; contiguous ranges; feature rows; splits
#     partitioned by anchor in original order; global splits; stats), METIS node balance <= 1.05;
#   - `cgnn info OUT` (stats, time, memory; every part checked) and `cgnn info OUT/part<p>`;
#   - determinism: the same seed gives byte-identical output for --threads 1 and 2 (everything
#     but run.yaml, the run's measurements); another seed another partition id;
#   - mixing the part directories of two runs: exit 2 naming both files;
#   - typed datasets (dblp-mini, lastfm-mini), metis and random, 2 and 3 parts, checked the same
#     way per type; byte-identical for --threads 1 and 2; typed `cgnn info`; broken typed
#     partitions (node_map, ntypes, in-degree bounds, per-type id maps, foreign edges, mixed runs,
#     a homogeneous JSON): exit 2 naming the file and the field;
#   - bad input: exit 2 and the dataset untouched (num_parts 0 or > N, unknown method, missing
#     flags, non-empty OUT without --force, OUT = the dataset directory or holding the dataset,
#     even with --force, a part as the dataset); --force replaces an old partition.
set -u
CGNN=${1:?usage: test_partition_cli.sh path/to/cgnn}
SRC=${CGNN_SOURCE_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
PY=/usr/bin/python3
if ! $PY -c "import numpy, yaml" 2>/dev/null; then
  echo "SKIP: test_partition_cli.sh needs $PY with numpy and PyYAML (scripts/install-deps.sh --test)"
  exit 77
fi
TMP=$(mktemp -d /tmp/cgnn-partition-XXXXXX)
trap 'rm -rf "$TMP"' EXIT
fails=0
pass=0

# expect CODE DESCRIPTION -- command...   (stdout+stderr in $TMP/out)
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
contains() {
  if ! grep -qF -- "$1" "$TMP/out"; then
    echo "FAIL: $2: output lacks '$1'"; sed 's/^/    /' "$TMP/out" | head -20; fails=$((fails + 1))
  else
    pass=$((pass + 1))
  fi
}
check() { # check DESCRIPTION -- python check_partition.py args...
  local desc=$1
  shift 2
  if ! "$@" >"$TMP/check" 2>&1; then
    echo "FAIL: $desc"; sed 's/^/    /' "$TMP/check" | head -30; fails=$((fails + 1))
  else
    pass=$((pass + 1))
  fi
}
digest() { (cd "$1" && find . -type f -print0 | sort -z | xargs -0 md5sum | md5sum); }

# ---- fixtures --------------------------------------------------------------------------------
cp -r "$SRC/data/cora" "$TMP/cora"
"$CGNN" generate --out "$TMP/gen" --nodes 3000 --avg_degree 8 --feat_dim 8 --link_prediction --seed 3 \
  >/dev/null 2>&1 || { echo "FAIL: generate"; exit 1; }
# GraphBolt labelled pairs in the LP validation split: each positive (label 1) and one listed
# negative (label 0) form a group (index) with the same anchor; rows interleaved
$PY - "$TMP/gen" <<'EOF' || { echo "FAIL: LP fixture"; exit 1; }
import sys, numpy as np, yaml
d = sys.argv[1]
pos = np.load(f"{d}/lp-valid-seeds.npy").astype(np.int64)
rng = np.random.default_rng(0)
neg = np.stack([pos[:, 0], rng.integers(0, 3000, len(pos))], axis=1)
seeds = np.empty((2 * len(pos), 2), np.int64); seeds[0::2] = pos; seeds[1::2] = neg
labels = np.tile([1, 0], len(pos)).astype(np.int64)
indexes = np.repeat(np.arange(len(pos)), 2).astype(np.int64)
np.save(f"{d}/lp-valid-seeds.npy", seeds); np.save(f"{d}/lp-valid-labels.npy", labels)
np.save(f"{d}/lp-valid-indexes.npy", indexes)
m = yaml.safe_load(open(f"{d}/metadata.yaml"))
lp = [t for t in m["tasks"] if t["name"] == "link_prediction"][0]
lp["validation_set"][0]["data"] += [{"name": "labels", "format": "numpy", "path": "lp-valid-labels.npy"},
                                   {"name": "indexes", "format": "numpy", "path": "lp-valid-indexes.npy"}]
# an edge feature (float64): each part holds the rows of its edges
E = np.load(f"{d}/edges.npy").shape[1]
np.save(f"{d}/edge-weight.npy", rng.standard_normal((E, 2)))
m["feature_data"].append({"domain": "edge", "name": "weight", "format": "numpy", "in_memory": False,
                          "path": "edge-weight.npy"})
yaml.safe_dump(m, open(f"{d}/metadata.yaml", "w"), sort_keys=False)
EOF
before_cora=$(digest "$TMP/cora")
before_gen=$(digest "$TMP/gen")

# ---- both methods, 2 and 3 parts, two datasets: checked against the source -------------------------
for ds in cora gen; do
  for method in metis random; do
    for P in 2 3; do
      out="$TMP/$ds-$method-$P"
      expect 0 "partition $ds $method $P" -- "$CGNN" partition --dataset "$TMP/$ds" --num_parts $P \
        --method $method --out "$out" --seed 1
      contains "edge cut:" "partition prints the edge cut"
      contains "peak RSS" "partition prints the peak memory"
      bal=()
      [[ $method == metis ]] && bal=(--max-node-balance 1.05)
      check "$ds $method $P against the source" -- $PY "$SRC/tests/check_partition.py" "$TMP/$ds" "$out" "${bal[@]}"
      grep -h "check_partition" "$TMP/check"
    done
  done
done
[[ $(digest "$TMP/cora") == "$before_cora" && $(digest "$TMP/gen") == "$before_gen" ]] && pass=$((pass + 1)) ||
  { echo "FAIL: partitioning modified its input"; fails=$((fails + 1)); }

# ---- cgnn info -----------------------------------------------------------------------------------
expect 0 "info OUT" -- "$CGNN" info "$TMP/gen-metis-3"
contains "3 parts (metis, seed 1)" "info: method and seed"
contains "edge cut:" "info: edge cut"; contains "balance (max/mean): nodes" "info: balance"
contains "link_prediction/validation_set" "info: seeds per split"
contains "peak RSS" "info: peak memory"; contains "run: " "info: time"
contains "checked: the 3 parts, the global splits and the id maps agree" "info checks every part"
expect 0 "info JSON" -- "$CGNN" info "$TMP/cora-random-2/cora.json"; contains "2 parts (random, seed 1)" "info on the JSON"
expect 0 "info part" -- "$CGNN" info "$TMP/cora-metis-2/part1"
contains "partition: part 1 of 2" "info on a part"; contains "in-degree (the part's nodes)" "info: the part's index"

# ---- determinism: same seed, other thread counts -> the same bytes (run.yaml aside) -----------------
for method in metis random; do
  expect 0 "$method threads 1" -- "$CGNN" partition --dataset "$TMP/gen" --num_parts 3 --method $method \
    --out "$TMP/t1-$method" --seed 1 --threads 1
  expect 0 "$method threads 2" -- "$CGNN" partition --dataset "$TMP/gen" --num_parts 3 --method $method \
    --out "$TMP/t2-$method" --seed 1 --threads 2
  if diff -r -x run.yaml "$TMP/t1-$method" "$TMP/t2-$method" >/dev/null &&
     diff -r -x run.yaml "$TMP/t1-$method" "$TMP/gen-$method-3" >/dev/null; then pass=$((pass + 1))
  else echo "FAIL: $method: output depends on --threads"; fails=$((fails + 1)); fi
  expect 0 "$method seed 2" -- "$CGNN" partition --dataset "$TMP/gen" --num_parts 3 --method $method \
    --out "$TMP/s2-$method" --seed 2
  id1=$(sed -n 's/.*"partition_id": "\([0-9a-f]*\)".*/\1/p' "$TMP/t1-$method/synthetic.json")
  id2=$(sed -n 's/.*"partition_id": "\([0-9a-f]*\)".*/\1/p' "$TMP/s2-$method/synthetic.json")
  [[ -n $id1 && -n $id2 && $id1 != "$id2" ]] && pass=$((pass + 1)) ||
    { echo "FAIL: $method: seeds 1 and 2 share the partition id ($id1, $id2)"; fails=$((fails + 1)); }
done

# ---- mixing parts of two runs ------------------------------------------------------------------------
cp -r "$TMP/cora-metis-2" "$TMP/mixed" && rm -rf "$TMP/mixed/part1" && cp -r "$TMP/cora-random-2/part1" "$TMP/mixed/part1"
expect 2 "mixed parts" -- "$CGNN" info "$TMP/mixed"
contains "$TMP/mixed/part1/metadata.yaml: partition id" "mixing names the part"
contains "in $TMP/mixed/cora.json" "mixing names the JSON"
contains "another run of cgnn partition" "mixing says why"

# ---- bad input: exit 2, nothing changed ---------------------------------------------------------------
P0=(partition --dataset "$TMP/cora" --method metis)
expect 2 "num_parts 0" -- "$CGNN" "${P0[@]}" --num_parts 0 --out "$TMP/bad"; contains "--num_parts" "num_parts 0 named"
expect 2 "num_parts > N" -- "$CGNN" "${P0[@]}" --num_parts 2709 --out "$TMP/bad"; contains "2709 parts for 2708 nodes" "num_parts > N"
expect 2 "unknown method" -- "$CGNN" partition --dataset "$TMP/cora" --num_parts 2 --method spectral --out "$TMP/bad"
contains "unknown method 'spectral'" "unknown method named"
expect 2 "no --out" -- "$CGNN" "${P0[@]}" --num_parts 2; contains "--out OUT is required" "missing --out"
expect 2 "no --method" -- "$CGNN" partition --dataset "$TMP/cora" --num_parts 2 --out "$TMP/bad"
expect 2 "bad seed" -- "$CGNN" "${P0[@]}" --num_parts 2 --out "$TMP/bad" --seed -1
expect 2 "unknown flag" -- "$CGNN" "${P0[@]}" --num_part 2 --out "$TMP/bad"; contains "did you mean '--num_parts'" "flag typo"
[[ ! -e "$TMP/bad" ]] && pass=$((pass + 1)) || { echo "FAIL: a refused job left $TMP/bad"; fails=$((fails + 1)); }
expect 2 "non-empty OUT" -- "$CGNN" "${P0[@]}" --num_parts 2 --out "$TMP/cora-random-3"
contains "not empty" "non-empty OUT"
expect 2 "OUT = dataset" -- "$CGNN" "${P0[@]}" --num_parts 2 --out "$TMP/cora"
expect 2 "OUT = dataset, --force" -- "$CGNN" "${P0[@]}" --num_parts 2 --out "$TMP/cora/" --force
contains "is the dataset's directory" "OUT = dataset named"
mkdir -p "$TMP/holder" && cp -r "$TMP/cora" "$TMP/holder/cora"
expect 2 "OUT holds the dataset, --force" -- "$CGNN" partition --dataset "$TMP/holder/cora" --num_parts 2 \
  --method random --out "$TMP/holder" --force
contains "holds the dataset's" "OUT holding the dataset named"
[[ -f "$TMP/holder/cora/metadata.yaml" ]] && pass=$((pass + 1)) || { echo "FAIL: --force removed the input"; fails=$((fails + 1)); }
expect 2 "a part as the dataset" -- "$CGNN" partition --dataset "$TMP/cora-metis-2/part0" --num_parts 2 \
  --method metis --out "$TMP/bad"
contains "already a part of a partitioned graph" "partitioning a part"
expect 2 "rank on a part" -- "$CGNN" rank --embeddings "$TMP/nope.npy" --dataset "$TMP/cora-metis-2/part0"
contains "renumbered" "rank refuses a part"
[[ $(digest "$TMP/cora") == "$before_cora" ]] && pass=$((pass + 1)) ||
  { echo "FAIL: a refused job modified the dataset"; fails=$((fails + 1)); }
# --force replaces an old partition with a complete new one
expect 0 "--force" -- "$CGNN" "${P0[@]}" --num_parts 3 --out "$TMP/cora-random-2" --force
check "--force result" -- $PY "$SRC/tests/check_partition.py" "$TMP/cora" "$TMP/cora-random-2"
ls "$TMP" | grep -q "tmp\." && { echo "FAIL: staging directories left behind"; fails=$((fails + 1)); } || pass=$((pass + 1))

# ---- typed datasets (DistDGL's heterogeneous layout): data/dblp-mini (NC, features on 3 of 4 node
# types) and data/lastfm-mini (LP on user:listens:artist, featureless), both methods, 2 and 3 parts ----
cp -r "$SRC/data/dblp-mini" "$TMP/dblp" && cp -r "$SRC/data/lastfm-mini" "$TMP/lastfm"
before_dblp=$(digest "$TMP/dblp")
for ds in dblp lastfm; do
  for method in metis random; do
    for P in 2 3; do
      out="$TMP/$ds-$method-$P"
      expect 0 "partition typed $ds $method $P" -- "$CGNN" partition --dataset "$TMP/$ds" --num_parts $P \
        --method $method --out "$out" --seed 1
      contains "typed: " "typed partition prints the per-type ranges"
      bal=()
      [[ $method == metis ]] && bal=(--max-node-balance 1.10)
      check "typed $ds $method $P against the source" -- $PY "$SRC/tests/check_partition.py" "$TMP/$ds" "$out" "${bal[@]}"
      grep -h "check_partition" "$TMP/check"
    done
  done
done
[[ $(digest "$TMP/dblp") == "$before_dblp" ]] && pass=$((pass + 1)) || { echo "FAIL: typed partitioning modified its input"; fails=$((fails + 1)); }
expect 0 "typed: metis threads 1" -- "$CGNN" partition --dataset "$TMP/dblp" --num_parts 3 --method metis \
  --out "$TMP/dblp-t1" --seed 1 --threads 1
if diff -r -x run.yaml "$TMP/dblp-t1" "$TMP/dblp-metis-3" >/dev/null; then pass=$((pass + 1))
else echo "FAIL: typed metis: output depends on --threads"; fails=$((fails + 1)); fi
expect 0 "typed info OUT" -- "$CGNN" info "$TMP/dblp-metis-2"
contains "typed: 4 node types, 6 edge types" "typed info: types"
contains "checked: the 2 parts, the global splits and the id maps agree" "typed info checks every part"
expect 0 "typed info part" -- "$CGNN" info "$TMP/lastfm-random-2/part0"
contains "owns [" "typed info on a part: per-type ranges"
# bad typed partitions: exit 2 naming the file and the field (each a copy with one thing broken)
tbad() { # tbad NAME PYTHON-EDIT: a copy of dblp-metis-2 as $TMP/NAME, edited by PYTHON-EDIT (d = its dir, j = the JSON)
  rm -rf "$TMP/$1" && cp -r "$TMP/dblp-metis-2" "$TMP/$1"
  $PY - "$TMP/$1" "$2" <<'PY'
import json, sys, numpy as np
d = sys.argv[1]; jp = d + "/dblp-mini.json"; j = json.load(open(jp))
exec(sys.argv[2])
json.dump(j, open(jp, "w"))
PY
}
tbad tb_ranges 'j["node_map"]["paper"][1][0] += 1'
expect 2 "typed: node_map not contiguous" -- "$CGNN" info "$TMP/tb_ranges"
contains '"node_map"."paper"[1]' "typed: broken node_map named"
tbad tb_ntypes 'del j["ntypes"]["venue"]'
expect 2 "typed: ntypes without a type" -- "$CGNN" info "$TMP/tb_ntypes"
contains 'dblp-mini.json: "etypes"."paper:published_in:venue"' "typed: etype of an undeclared node type named"
tbad tb_maxdeg 'j["etype_max_in_degree"]["paper:has_term:term"] = 3'
expect 2 "typed: etype_max_in_degree below max_in_degree" -- "$CGNN" info "$TMP/tb_maxdeg"
contains '"max_in_degree" is 416, but the largest of "etype_max_in_degree" is 343' "typed: in-degree bounds named"
# a part whose real in-degree is above the JSON's bound: info refuses it with training's own check
tbad tb_deglow 'j["etype_max_in_degree"]["author:writes:paper"] = 1'
expect 2 "typed: a part's in-degree above etype_max_in_degree (info, the check training runs)" -- \
  "$CGNN" info "$TMP/tb_deglow"
contains 'in-edges of type '"'"'author:writes:paper'"'"', above "etype_max_in_degree" 1' "typed: the in-degree bound named"
rm -rf "$TMP/deglow" && cp -r "$TMP/cora-metis-2" "$TMP/deglow"
sed -i 's/"max_in_degree": [0-9]*/"max_in_degree": 2/' "$TMP/deglow/cora.json"
expect 2 "a part's in-degree above max_in_degree (info, the check training runs)" -- "$CGNN" info "$TMP/deglow"
contains 'in-edges, above "max_in_degree" 2' "the in-degree bound named"
tbad tb_map 'np.save(d + "/orig_ids-paper.npy", np.arange(5))'
expect 2 "typed: a per-type id map of the wrong length" -- "$CGNN" info "$TMP/tb_map"
contains 'orig_ids-paper.npy: expected (2881,) int64 ids ("orig_ids.paper"' "typed: the map file and field named"
tbad tb_perm 'a = np.load(d + "/new_ids-term.npy"); a[[0, 1]] = a[[1, 0]]; np.save(d + "/new_ids-term.npy", a)'
expect 2 "typed: per-type maps not inverse" -- "$CGNN" info "$TMP/tb_perm"
contains "orig_ids-term.npy and $TMP/tb_perm/new_ids-term.npy: not inverse" "typed: broken map pair named"
tbad tb_edges 'import shutil; shutil.copy(d + "/part0/edges-author-writes-paper.npy", d + "/part1/edges-author-writes-paper.npy")'
expect 2 "typed: a part holding another part's edges" -- "$CGNN" info "$TMP/tb_edges"
contains "tb_edges/part1/edges-author-writes-paper.npy: column 0: dst" "typed: foreign edges named"
tbad tb_mixed 'import shutil; shutil.rmtree(d + "/part1"); shutil.copytree(d + "/../dblp-random-2/part1", d + "/part1")'
expect 2 "typed: parts of two runs" -- "$CGNN" info "$TMP/tb_mixed"
contains "another run of cgnn partition" "typed: mixed parts named"
tbad tb_untyped 'j["ntypes"] = {"_N": 0}; j["etypes"] = {"_N:_E:_N": 0}'
expect 2 "typed: JSON claims a homogeneous graph" -- "$CGNN" info "$TMP/tb_untyped"
contains 'dblp-mini.json: "node_map": expected one entry "_N"' "typed: homogeneous JSON over typed parts named"

echo "test_partition_cli.sh: $pass passed, $fails failed"
[[ $fails -eq 0 ]]
