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
cp -r "$SRC/data/cora" "$TMP/cora" && rm -rf "$TMP/cora/preprocessed"
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

echo "test_partition_cli.sh: $pass passed, $fails failed"
[[ $fails -eq 0 ]]
