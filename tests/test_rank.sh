#!/usr/bin/env bash
# test_rank.sh CGNN — `cgnn rank`: full-ranking Recall@K / NDCG@K on a tiny dataset whose answer
# is known (two disjoint cliques), a brute-force cross-check written in numpy, and error cases.
set -u
CGNN=${1:?usage: test_rank.sh path/to/cgnn}
SRC=${CGNN_SOURCE_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
PY=/usr/bin/python3
if ! "$PY" -c "import numpy" 2>/dev/null; then
  echo "SKIP: test_rank.sh needs /usr/bin/python3 with numpy"; exit 77
fi
TMP=$(mktemp -d /tmp/cgnn-rank-XXXXXX)
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

# Two 6-cliques {0..5} and {6..11}; every ordered in-clique pair (u, v) goes to train, valid or
# test by (u + v) mod 3. Embeddings: (1, 0) for the first clique, (0, 1) for the second, so an
# anchor scores its clique 1 and the rest 0. With train and validation excluded, an anchor's only
# candidates scoring 1 are its test positives (at most 2 per anchor): Recall@2 = NDCG@2 = 1.
# The test split also lists cross-clique pairs labelled 0 (negatives: they must not count).
# --split valid (train excluded only) lets test positives compete with validation positives at
# score 1; the expected values come from a brute-force ranking in numpy (expected_valid.txt).
"$PY" - "$TMP/ds" <<'PY' || { echo "FAIL: writing the dataset"; exit 1; }
import os, sys
import numpy as np
d = sys.argv[1]
os.makedirs(d)
N = 12
clique = np.arange(N) // 6
pairs = {0: [], 1: [], 2: []}
for u in range(N):
    for v in range(N):
        if u != v and clique[u] == clique[v]:
            pairs[(u + v) % 3].append((u, v))
train, valid, test = (np.array(pairs[s], dtype=np.int64) for s in (0, 1, 2))
neg = np.array([(u, (u + 6) % N) for u in range(N)], dtype=np.int64)
test_all = np.concatenate([test, neg])
test_labels = np.concatenate([np.ones(len(test)), np.zeros(len(neg))]).astype(np.int64)
src = np.concatenate([train[:, 0], train[:, 1]]).astype(np.int64)
dst = np.concatenate([train[:, 1], train[:, 0]]).astype(np.int64)
np.save(f"{d}/edges.npy", np.stack([src, dst]))
np.save(f"{d}/lp-train-seeds.npy", train)
np.save(f"{d}/lp-valid-seeds.npy", valid)
np.save(f"{d}/lp-test-seeds.npy", test_all)
np.save(f"{d}/lp-test-labels.npy", test_labels)
emb = np.zeros((N, 2), dtype=np.float32)
emb[clique == 0, 0] = 1
emb[clique == 1, 1] = 1
np.save(f"{d}/emb.npy", emb)
np.save(f"{d}/emb_short.npy", emb[:10])
np.save(f"{d}/emb_f64.npy", emb.astype(np.float64))
def split(name, seeds, labels=None):
    s = f"    {name}:\n      - data:\n          - name: seeds\n            format: numpy\n            path: {seeds}\n"
    if labels:
        s += f"          - name: labels\n            format: numpy\n            path: {labels}\n"
    return s
with open(f"{d}/metadata.yaml", "w") as f:
    f.write("dataset_name: cliques\ngraph:\n  nodes:\n    - num: 12\n  edges:\n"
            "    - format: numpy\n      path: edges.npy\ntasks:\n  - name: link_prediction\n")
    f.write(split("train_set", "lp-train-seeds.npy") + split("validation_set", "lp-valid-seeds.npy")
            + split("test_set", "lp-test-seeds.npy", "lp-test-labels.npy"))
# brute force for --split valid, K = 2: exclude self and train positives; the split's positives
# are never excluded; order by score descending, then node id
K = 2
rec, ndcg = [], []
for a in np.unique(valid[:, 0]):
    T = set(valid[valid[:, 0] == a, 1].tolist())
    excl = ({a} | set(train[train[:, 0] == a, 1].tolist())) - T
    cands = [v for v in range(N) if v not in excl]
    cands.sort(key=lambda v: (-float(emb[a] @ emb[v]), v))
    top = cands[:K]
    hits = [r for r, v in enumerate(top) if v in T]
    rec.append(len(hits) / len(T))
    idcg = sum(1 / np.log2(r + 2) for r in range(min(K, len(T))))
    ndcg.append(sum(1 / np.log2(r + 2) for r in hits) / idcg)
with open(f"{d}/expected_valid.txt", "w") as f:
    f.write(f"Recall@2: {np.mean(rec):.6f}\nNDCG@2: {np.mean(ndcg):.6f}\n")
PY

DS=$TMP/ds
expect 0 "rank --help" -- "$CGNN" rank --help;   contains "usage: cgnn rank" "rank --help"
expect 0 "rank test split" -- "$CGNN" rank --embeddings "$DS/emb.npy" --dataset "$DS" --k 2 --out "$TMP/m/metrics.json"
contains "Recall@2: 1.000000" "cliques: recall 1";  contains "NDCG@2: 1.000000" "cliques: ndcg 1"
contains "12 anchors" "every node is a test anchor"
if grep -qF '"name": "recall_at_2", "numberValue": "1"' "$TMP/m/metrics.json" \
   && grep -qF '"name": "ndcg_at_2"' "$TMP/m/metrics.json"; then
  pass=$((pass + 1))
else
  echo "FAIL: metrics JSON"; cat "$TMP/m/metrics.json" 2>&1 | sed 's/^/    /'; fails=$((fails + 1))
fi
expect 0 "rank valid split" -- "$CGNN" rank --embeddings "$DS/emb.npy" --dataset "$DS" --k 2 --split valid
while IFS= read -r line; do contains "$line" "valid split matches the numpy brute force"; done <"$DS/expected_valid.txt"
if grep -qF "Recall@2: 1.000000" "$TMP/out"; then
  echo "FAIL: the valid split should not reach recall 1 (test positives compete)"; fails=$((fails + 1))
else
  pass=$((pass + 1))
fi
expect 0 "rank default k" -- "$CGNN" rank --embeddings "$DS/emb.npy" --dataset "$DS"
contains "Recall@20: 1.000000" "default k is 20"

# errors: exit 2 with a message naming the file / flag
expect 2 "wrong N" -- "$CGNN" rank --embeddings "$DS/emb_short.npy" --dataset "$DS"
contains "$DS/emb_short.npy" "wrong N names the file";  contains "has 12 nodes" "wrong N says the node count"
expect 2 "float64 embeddings" -- "$CGNN" rank --embeddings "$DS/emb_f64.npy" --dataset "$DS"
contains "emb_f64.npy" "dtype error names the file"
expect 2 "missing embeddings file" -- "$CGNN" rank --embeddings "$DS/nope.npy" --dataset "$DS"
contains "$DS/nope.npy" "missing file named"
expect 2 "no --embeddings" -- "$CGNN" rank --dataset "$DS";  contains "--embeddings" "required flag named"
expect 2 "bad --k" -- "$CGNN" rank --embeddings "$DS/emb.npy" --dataset "$DS" --k 0;  contains "--k" "bad k named"
expect 2 "bad --split" -- "$CGNN" rank --embeddings "$DS/emb.npy" --dataset "$DS" --split train
contains "--split" "bad split named"
expect 2 "no LP task" -- "$CGNN" rank --embeddings "$DS/emb.npy" --dataset "$SRC/data/cora"
contains "no link-prediction task" "dataset without an LP task"

echo "test_rank: $pass passed, $fails failed"
[[ $fails -eq 0 ]]
