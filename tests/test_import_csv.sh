#!/usr/bin/env bash
# test_import_csv.sh CGNN — `cgnn import csv` (graph/import_csv.h, io/csv.h):
#   - a header line is skipped and said; one-way edges get the warning, --undirected adds the
#     reverses and drops duplicates (the edge set checked against numpy);
#   - the splits: labelled nodes only, sizes from --val_frac / --test_frac, the same bytes for
#     the same seed, another split for another seed; one- and two-column label files and a .npy
#     give the same dataset; CSV and .npy features the same values;
#   - --link_prediction: held-out pairs are not in the graph, in either direction;
#   - the dataset opens (cgnn info) and trains (a few steps);
#   - bad input is exit 2 naming the file and the line / edge / row, and writes nothing.
# (docs/BRING_YOUR_OWN_DATA.md's commands run in tests/test_docs.sh.)
set -u
CGNN=${1:?usage: test_import_csv.sh path/to/cgnn}
TMP_PREFIX=cgnn-import
source "$(dirname "$0")/test_lib.sh"
PY=/usr/bin/python3

# expect CODE DESC -- cmd...: exit status CODE; output in $TMP/out
expect() {
  local want=$1 desc=$2
  shift 3
  "$@" >"$TMP/out" 2>&1
  local got=$?
  [[ $got == "$want" ]] && ok || { bad "$desc: exit $got, want $want"; sed 's/^/    /' "$TMP/out" | head -8; }
}
has() { grep -qF -- "$1" "$TMP/out" && ok || { bad "$2: no '$1' in:"; sed 's/^/    /' "$TMP/out" | head -8; }; }

# 12 nodes: a one-way edge list with a header, one duplicate and one pair listed both ways
printf 'source,target\n0,1\n1,2\n2,3\n3,4\n4,5\n5,6\n6,7\n7,8\n8,9\n9,10\n10,11\n0,1\n2,0\n0,2\n' >"$TMP/e.csv"
printf 'node,label\n' >"$TMP/l2.csv"
for i in 0 1 2 3 4 5 6 7 8 9 11; do echo "$i,$((i % 3))" >>"$TMP/l2.csv"; done # node 10 unlabelled
$PY - "$TMP" <<'EOF'
import numpy as np, sys
t = sys.argv[1]
lab = np.array([i % 3 for i in range(12)]); lab[10] = -1
np.savetxt(f"{t}/l1.csv", lab, fmt="%d")
np.save(f"{t}/l.npy", lab.astype(np.int64))
x = np.arange(12 * 3, dtype=np.float32).reshape(12, 3) / 7
np.savetxt(f"{t}/x.csv", x, fmt="%.9g", delimiter=", ")
np.save(f"{t}/x.npy", x)
EOF

expect 0 "import (one way)" -- "$CGNN" import csv --edges "$TMP/e.csv" --node_features "$TMP/x.csv" --labels "$TMP/l2.csv" --out "$TMP/d1"
has "e.csv:1: header line 'source,target' skipped" "the header line"
has "wrote $TMP/d1" "the summary"
has "12 nodes, 14 edges" "one way: the edges as given"
has "node_classification: 3 classes, 11 labelled nodes: 7 train / 2 validation / 2 test" "the split sizes"
expect 0 "import --undirected" -- "$CGNN" import csv --edges "$TMP/e.csv" --node_features "$TMP/x.npy" --labels "$TMP/l1.csv" --undirected --out "$TMP/d2"
has "12 nodes, 24 edges (14 in $TMP/e.csv, with their reverses)" "--undirected: reverses added, duplicates dropped"
grep -q "have their reverse edge" "$TMP/out" && bad "--undirected still warns" || ok
expect 0 "import, labels as .npy" -- "$CGNN" import csv --edges "$TMP/e.csv" --node_features "$TMP/x.csv" --labels "$TMP/l.npy" --out "$TMP/d3"
expect 0 "import, another seed" -- "$CGNN" import csv --edges "$TMP/e.csv" --node_features "$TMP/x.csv" --labels "$TMP/l2.csv" --seed 5 --out "$TMP/d4"
expect 0 "import: link prediction" -- "$CGNN" import csv --edges "$TMP/e.csv" --undirected --link_prediction --val_frac 0.25 --test_frac 0.25 --num_nodes 14 --out "$TMP/d5"
has "link_prediction: 6 train / 3 validation / 3 test pairs" "LP: the pair counts (12 undirected pairs)"
has "no features" "LP: no features said"

$PY - "$TMP" <<'EOF' && ok || bad "the datasets' contents"
import numpy as np, sys
t = sys.argv[1]
E = lambda d: np.load(f"{t}/{d}/edges.npy")
raw = [(0,1),(1,2),(2,3),(3,4),(4,5),(5,6),(6,7),(7,8),(8,9),(9,10),(10,11),(0,1),(2,0),(0,2)]
e1 = E("d1"); assert e1.shape == (2, 14) and e1.dtype == np.int64 and [tuple(p) for p in e1.T] == raw, e1
und = set(raw) | {(b, a) for a, b in raw}
e2 = E("d2"); got = [tuple(p) for p in e2.T]
assert len(got) == len(set(got)) == len(und) and set(got) == und, got
assert got == sorted(got, key=lambda p: (p[1], p[0])), "sorted by dst, then src"
x = np.load(f"{t}/x.npy")
for d in ("d1", "d2", "d3"):
    f = np.load(f"{t}/{d}/node-feat.npy"); assert f.dtype == np.float32 and np.array_equal(f, x), d
def split(d):
    return [np.load(f"{t}/{d}/nc-{s}-{k}.npy") for s in ("train", "valid", "test") for k in ("seeds", "labels")]
s1, s2, s3, s4 = split("d1"), split("d2"), split("d3"), split("d4")
assert all(np.array_equal(a, b) for a, b in zip(s1, s2)) and all(np.array_equal(a, b) for a, b in zip(s1, s3)), \
    "one-column, two-column and .npy labels: the same split"
seeds = np.concatenate(s1[0::2]); labels = np.concatenate(s1[1::2])
assert sorted(seeds) == [0,1,2,3,4,5,6,7,8,9,11], seeds          # every labelled node once, not node 10
assert all(labels == seeds % 3), (seeds, labels)
assert not all(np.array_equal(a, b) for a, b in zip(s1, s4)), "seed 5 gives the same split as seed 0"
e5 = {tuple(p) for p in E("d5").T}
held = [tuple(p) for s in ("valid", "test") for p in np.load(f"{t}/d5/lp-{s}-seeds.npy")]
train = [tuple(p) for p in np.load(f"{t}/d5/lp-train-seeds.npy")]
assert len(held) == 6 and len(train) == 6
for a, b in held: assert (a, b) not in e5 and (b, a) not in e5, (a, b)
for a, b in train: assert (a, b) in e5 and (b, a) in e5
assert len(e5) == 2 * 6 + 0, len(e5)                                 # the 6 training pairs, both ways
print("contents ok")
EOF
cmp -s "$TMP/d1/nc-train-seeds.npy" "$TMP/d2/nc-train-seeds.npy" && ok || bad "the same seed, other bytes"

# the dataset opens and trains
expect 0 "info on the import" -- "$CGNN" info "$TMP/d2"
has "train_set: 7 validation_set: 2 test_set: 2" "info: the splits"
cat >"$TMP/t.yaml" <<EOF
taskMetadata: {nodeBasedTaskMetadata: {}}
sharedConfig:
  preprocessedMetadataUri: $TMP/d2
  trainedModelMetadata: {trainedModelUri: $TMP/out2/model.safetensors}
trainerConfig:
  trainerArgs: {hidden_dim: "8", num_epochs: "2", main_sample_batch_size: "4"}
EOF
expect 0 "train on the import" -- "$CGNN" train --task_config_uri="$TMP/t.yaml"
has "node feature: 'feat' (3, float32)" "train: the feature"

# bad input: exit 2 naming the file and where; nothing written (no --out, no staging folder)
bad_case() { # DESC NEEDLE -- import args...
  local desc=$1 needle=$2
  shift 3
  rm -rf "$TMP/outbad"*
  expect 2 "$desc" -- "$CGNN" import csv "$@" --out "$TMP/outbad"
  has "$needle" "$desc: the message"
  compgen -G "$TMP/outbad*" >/dev/null && bad "$desc: something written: $(ls -d "$TMP"/outbad*)" || ok
}
printf '0,1\n1,x\n' >"$TMP/bad_e.csv"
bad_case "a word in the edges" "bad_e.csv:2: column 2: expected an integer, got '1,x'" -- --edges "$TMP/bad_e.csv"
printf '0,1\n1,2,3\n' >"$TMP/rag.csv"
bad_case "a ragged edge row" "rag.csv:2: 3 columns, expected 2" -- --edges "$TMP/rag.csv"
printf '0,1.5\n' >"$TMP/frac.csv"
bad_case "a fractional id" "frac.csv:1: column 2: expected an integer" -- --edges "$TMP/frac.csv"
printf '0,1\n-1,2\n' >"$TMP/neg.csv"
bad_case "a negative id" "neg.csv: edge 2: src id -1 is negative" -- --edges "$TMP/neg.csv"
bad_case "an id past the features" "e.csv: edge 10: dst id 10 is not below the node count 10" -- --edges "$TMP/e.csv" --num_nodes 10
printf '1,2\nnan,3\n' >"$TMP/nanx.csv"
bad_case "NaN in a feature" "nanx.csv:2: column 1: NaN" -- --edges "$TMP/e.csv" --node_features "$TMP/nanx.csv"
bad_case "feature rows against the node count" "x.csv: 12 rows of features, but the graph has 20 nodes (--num_nodes)" -- --edges "$TMP/e.csv" --node_features "$TMP/x.csv" --num_nodes 20
printf '0,1,2\n' >"$TMP/l3.csv"
bad_case "three label columns" "l3.csv: labels: one column (row i: node i's class) or two (node,label), got 3" -- --edges "$TMP/e.csv" --labels "$TMP/l3.csv"
printf 'a,b\n' >"$TMP/hdr.csv"
bad_case "a header alone" "hdr.csv: no rows" -- --edges "$TMP/hdr.csv"
bad_case "a missing file" "nope.csv" -- --edges "$TMP/nope.csv"
bad_case "fractions past 1" "--val_frac 0.6, --test_frac 0.5" -- --edges "$TMP/e.csv" --val_frac 0.6 --test_frac 0.5
expect 2 "no --edges" -- "$CGNN" import csv --out "$TMP/outbad"
has "--edges FILE is required" "no --edges: the message"
expect 2 "an unknown format" -- "$CGNN" import parquet
has "import: expected a format: csv" "unknown format: the message"
# an existing dataset is never overwritten without --force; the inputs are never written
sum0=$(cat "$TMP/e.csv" "$TMP/x.csv" | md5sum)
expect 2 "--out exists" -- "$CGNN" import csv --edges "$TMP/e.csv" --out "$TMP/d1"
[[ $(cat "$TMP/e.csv" "$TMP/x.csv" | md5sum) == "$sum0" ]] && ok || bad "an input changed"

echo "test_import_csv: $pass passed, $fails failed"
[[ $fails -eq 0 ]]
