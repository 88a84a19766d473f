#!/usr/bin/env bash
# test_rank.sh CGNN — `cgnn rank`: full-ranking Recall@K / NDCG@K on a tiny dataset whose answer
# is known (two disjoint cliques), a brute-force cross-check written in numpy, and error cases;
# on a typed dataset (users, items): anchors of the edge type's src type ranked against every
# node of its dst type from the directory cgnn embed writes (<type>.npy), checked against a
# numpy brute force for a two-type edge type (the anchor's own id is not excluded: another node)
# and a one-type edge type (user:follows:user, the anchor excluded), plus its errors.
set -u
CGNN=${1:?usage: test_rank.sh path/to/cgnn}
SRC=${CGNN_SOURCE_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
PY=/usr/bin/python3
if ! "$PY" -c "import numpy" 2>/dev/null; then
  echo "SKIP: test_rank.sh needs /usr/bin/python3 with numpy"; exit 77
fi
TMP=$(mktemp -d /tmp/cgnn-rank-XXXXXX)
trap '[[ -n ${KEEP:-} ]] || rm -rf "$TMP"' EXIT
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

# ---- a typed dataset: users (9) buy items (13), users follow users ----
"$PY" - "$TMP/typed" <<'PY' || { echo "FAIL: writing the typed dataset"; exit 1; }
import os, sys
import numpy as np
d = sys.argv[1]
os.makedirs(d + "/emb")
rng = np.random.default_rng(5)
U, I, D = 9, 13, 3
buys = np.array(sorted({(int(rng.integers(U)), int(rng.integers(I))) for _ in range(70)}), dtype=np.int64)
follows = np.array(sorted({(u, v) for u, v in rng.integers(U, size=(40, 2)) if u != v}), dtype=np.int64)
def split3(p):
    k = rng.permutation(len(p)); a, b = len(p) // 2, 3 * len(p) // 4
    return p[np.sort(k[:a])], p[np.sort(k[a:b])], p[np.sort(k[b:])]
btr, bva, bte = split3(buys)
ftr, fva, fte = split3(follows)
# the test split of buys is labelled: its rows plus listed negatives (label 0) that must not count
neg = np.array([(u, (u * 5 + 1) % I) for u in range(U)], dtype=np.int64)
bte_all = np.concatenate([bte, neg]); bte_lab = np.concatenate([np.ones(len(bte)), np.zeros(len(neg))]).astype(np.int64)
np.save(f"{d}/edges-buys.npy", btr.T.copy()); np.save(f"{d}/edges-bought.npy", btr[:, ::-1].T.copy())
np.save(f"{d}/edges-follows.npy", ftr.T.copy())
for name, arr in [("b-train", btr), ("b-valid", bva), ("b-test", bte_all), ("b-test-labels", bte_lab),
                  ("f-train", ftr), ("f-valid", fva), ("f-test", fte)]:
    np.save(f"{d}/{name}.npy", arr)
# embeddings: rounded to halves (ties), user rows a few item rows' copies (hits)
user = np.round(rng.normal(size=(U, D)) * 2) / 2
item = np.round(rng.normal(size=(I, D)) * 2) / 2
for u, i in bte[::2]: item[i] = user[u]
np.save(f"{d}/emb/user.npy", user.astype(np.float32)); np.save(f"{d}/emb/item.npy", item.astype(np.float32))
np.save(f"{d}/emb/tag.npy", np.zeros((2, D), np.float32))
os.makedirs(d + "/emb_short")
np.save(f"{d}/emb_short/item.npy", item[:5].astype(np.float32))
np.save(f"{d}/emb_short/user.npy", user.astype(np.float32))
def sset(name, typ, seeds, labels=None):
    s = f"    {name}:\n      - type: \"{typ}\"\n        data:\n          - name: seeds\n            format: numpy\n            path: {seeds}\n"
    if labels: s += f"          - name: labels\n            format: numpy\n            path: {labels}\n"
    return s
with open(f"{d}/metadata.yaml", "w") as f:
    f.write("dataset_name: shop\ngraph:\n  nodes:\n    - {type: user, num: %d}\n    - {type: item, num: %d}\n"
            "    - {type: tag, num: 2}\n  edges:\n" % (U, I))
    for t, p in [("user:buys:item", "edges-buys.npy"), ("item:bought_by:user", "edges-bought.npy"),
                 ("user:follows:user", "edges-follows.npy")]:
        f.write(f"    - {{type: \"{t}\", format: numpy, path: {p}}}\n")
    f.write("tasks:\n  - name: buy\n")
    f.write(sset("train_set", "user:buys:item", "b-train.npy") + sset("validation_set", "user:buys:item", "b-valid.npy")
            + sset("test_set", "user:buys:item", "b-test.npy", "b-test-labels.npy"))
    f.write("  - name: follow\n")
    f.write(sset("train_set", "user:follows:user", "f-train.npy") + sset("validation_set", "user:follows:user", "f-valid.npy")
            + sset("test_set", "user:follows:user", "f-test.npy"))
# brute force: per anchor, candidates = every node of the dst type less the anchor's train (and,
# for test, validation) positives (and, one type, the anchor itself), its split positives always
# in; score descending, then id; Recall@K and NDCG@K averaged over anchors
def brute(Q, C, rank, train, excl, same, K):
    rec, nd = [], []
    for a in np.unique(rank[:, 0]):
        T = set(rank[rank[:, 0] == a, 1].tolist())
        x = set(train[train[:, 0] == a, 1].tolist()) | set(excl[excl[:, 0] == a, 1].tolist())
        if same: x |= {int(a)}
        cands = [v for v in range(len(C)) if v not in x - T]
        cands.sort(key=lambda v: (-float(np.float32(Q[a] @ C[v])), v))
        hits = [r for r, v in enumerate(cands[:K]) if v in T]
        rec.append(len(hits) / len(T))
        nd.append(sum(1 / np.log2(r + 2) for r in hits) / sum(1 / np.log2(r + 2) for r in range(min(K, len(T)))))
    return np.mean(rec), np.mean(nd), len(rec)
empty = np.zeros((0, 2), np.int64)
with open(f"{d}/expected.txt", "w") as f:
    for tag, Q, C, rank, train, excl, same, K in [
            ("buy-test-3", user, item, bte, btr, bva, False, 3), ("buy-valid-2", user, item, bva, btr, empty, False, 2),
            ("follow-test-2", user, user, fte, ftr, fva, True, 2)]:
        r, n, a = brute(Q, C, rank, train, excl, same, K)
        f.write(f"{tag} {a} anchors Recall@{K}: {r:.6f} NDCG@{K}: {n:.6f}\n")
PY
TD=$TMP/typed
expect 0 "typed rank buy test" -- "$CGNN" rank --embeddings "$TD/emb" --dataset "$TD" --task buy --k 3
contains "candidates: every item node (13 x 3 dims)" "typed: the candidates are the dst type's nodes"
line=$(grep "^buy-test-3 " "$TD/expected.txt")
contains "$(awk '{print $2}' <<<"$line") anchors of type user" "buy test: anchors"
contains "Recall@3: $(awk '{print $5}' <<<"$line")" "buy test: recall = numpy brute force"
contains "NDCG@3: $(awk '{print $7}' <<<"$line")" "buy test: ndcg = numpy brute force"
expect 0 "typed rank buy valid" -- "$CGNN" rank --embeddings "$TD/emb" --dataset "$TD" --task buy --k 2 --split valid
line=$(grep "^buy-valid-2 " "$TD/expected.txt")
contains "$(awk '{print $2}' <<<"$line") anchors of type user" "buy valid: anchors"
contains "Recall@2: $(awk '{print $5}' <<<"$line")" "buy valid: recall = numpy brute force"
contains "NDCG@2: $(awk '{print $7}' <<<"$line")" "buy valid: ndcg = numpy brute force"
expect 0 "typed rank follow (one node type)" -- "$CGNN" rank --embeddings "$TD/emb" --dataset "$TD" --task follow --k 2
line=$(grep "^follow-test-2 " "$TD/expected.txt")
contains "$(awk '{print $2}' <<<"$line") anchors of type user" "follow: anchors"
contains "candidates: every user node (9 x 3 dims)" "follow: candidates are users"
contains "Recall@2: $(awk '{print $5}' <<<"$line")" "follow: recall = numpy brute force"
contains "NDCG@2: $(awk '{print $7}' <<<"$line")" "follow: ndcg = numpy brute force"
expect 2 "typed: --embeddings a file" -- "$CGNN" rank --embeddings "$TD/emb/user.npy" --dataset "$TD" --task buy
contains "name the directory cgnn embed wrote" "typed file error";  contains "user.npy and item.npy" "typed file error names the files"
expect 2 "typed: wrong rows" -- "$CGNN" rank --embeddings "$TD/emb_short" --dataset "$TD" --task buy
contains "node type 'item' of dataset" "typed wrong rows names the type"
expect 2 "typed: missing file" -- "$CGNN" rank --embeddings "$TD/nowhere" --dataset "$TD" --task buy
contains "$TD/nowhere/user.npy" "typed missing file named"

# ---- a homogeneous user-item graph ranked over the item ids only (--candidates LO:HI) ----
# users 0..U-1, items U..U+I-1 in one id space; embeddings rounded to halves (ties) and a few
# item rows copies of user rows (hits); numpy brute force over the candidate range: the anchor's
# train (and, for test, validation) positives excluded, its split positives always in
"$PY" - "$TMP/bip" <<'PY' || { echo "FAIL: writing the bipartite dataset"; exit 1; }
import os, sys
import numpy as np
d = sys.argv[1]
os.makedirs(d)
rng = np.random.default_rng(11)
U, I, D = 10, 17, 3
N = U + I
pairs = np.array(sorted({(int(rng.integers(U)), U + int(rng.integers(I))) for _ in range(90)}), dtype=np.int64)
k = rng.permutation(len(pairs)); a, b = len(pairs) // 2, 3 * len(pairs) // 4
tr, va, te = (pairs[np.sort(k[s])] for s in (slice(0, a), slice(a, b), slice(b, None)))
np.save(f"{d}/edges.npy", np.concatenate([tr.T, tr[:, ::-1].T], axis=1).copy())
for name, arr in [("train", tr), ("valid", va), ("test", te)]: np.save(f"{d}/{name}.npy", arr)
np.save(f"{d}/test_user_pos.npy", np.concatenate([te, [[0, 3]]]).astype(np.int64))  # a positive among the users
open(f"{d}/bad_row.txt", "w").write(str(len(te)))
emb = np.round(rng.normal(size=(N, D)) * 2) / 2
for u, i in te[::2]: emb[i] = emb[u]
emb[U - 1] = emb[0] * 3  # a user scoring high: ranked only without --candidates
np.save(f"{d}/emb.npy", emb.astype(np.float32))
def split(name, seeds):
    return f"    {name}:\n      - data:\n          - name: seeds\n            format: numpy\n            path: {seeds}\n"
meta = lambda test: ("dataset_name: bip\ngraph:\n  nodes:\n    - num: %d\n  edges:\n    - format: numpy\n      path: edges.npy\n"
                     "tasks:\n  - name: link_prediction\n" % N + split("train_set", "train.npy")
                     + split("validation_set", "valid.npy") + split("test_set", test))
open(f"{d}/metadata.yaml", "w").write(meta("test.npy"))
os.makedirs(f"{d}/bad")
for f in ["edges.npy", "train.npy", "valid.npy", "test_user_pos.npy"]: os.link(f"{d}/{f}", f"{d}/bad/{f}")
open(f"{d}/bad/metadata.yaml", "w").write(meta("test_user_pos.npy"))
E = emb.astype(np.float32)
def brute(rank, train, excl, lo, hi, K):
    rec, nd = [], []
    for a in np.unique(rank[:, 0]):
        T = set(rank[rank[:, 0] == a, 1].tolist())
        x = ({int(a)} | set(train[train[:, 0] == a, 1].tolist()) | set(excl[excl[:, 0] == a, 1].tolist())) - T
        cands = [v for v in range(lo, hi) if v not in x]
        cands.sort(key=lambda v: (-float(np.float32(E[a] @ E[v])), v))
        hits = [r for r, v in enumerate(cands[:K]) if v in T]
        rec.append(len(hits) / len(T))
        nd.append(sum(1 / np.log2(r + 2) for r in hits) / sum(1 / np.log2(r + 2) for r in range(min(K, len(T)))))
    return np.mean(rec), np.mean(nd), len(rec)
empty = np.zeros((0, 2), np.int64)
with open(f"{d}/expected.txt", "w") as f:
    for tag, rank, excl, lo, hi, K in [("items-test-3", te, va, U, N, 3), ("items-valid-2", va, empty, U, N, 2),
                                       ("all-test-3", te, va, 0, N, 3), ("sub-valid-5", va, empty, U - 2, N, 5)]:
        r, n, a = brute(rank, tr, excl, lo, hi, K)
        f.write(f"{tag} {a} anchors Recall@{K}: {r:.6f} NDCG@{K}: {n:.6f}\n")
PY
BD=$TMP/bip
check_line() { # TAG: the last output matches expected.txt's line TAG (anchors, recall, ndcg)
  local line; line=$(grep "^$1 " "$BD/expected.txt")
  contains "$(awk '{print $2}' <<<"$line") anchors" "$1: anchors"
  contains "$(awk '{print $4, $5}' <<<"$line")" "$1: recall = numpy brute force"
  contains "$(awk '{print $6, $7}' <<<"$line")" "$1: ndcg = numpy brute force"
}
expect 0 "candidates: items, test" -- "$CGNN" rank --embeddings "$BD/emb.npy" --dataset "$BD" --k 3 --candidates 10:27 \
  --out "$TMP/bm/metrics.json"
contains "candidates: nodes [10, 27) of 27" "candidates: the range is reported";  check_line items-test-3
grep -qF '"name": "recall_at_3"' "$TMP/bm/metrics.json" && pass=$((pass + 1)) || { echo "FAIL: candidates metrics JSON"; fails=$((fails + 1)); }
expect 0 "candidates: items, valid" -- "$CGNN" rank --embeddings "$BD/emb.npy" --dataset "$BD" --k 2 --split valid \
  --candidates " 10 : 27 "
check_line items-valid-2
expect 0 "candidates: part of the users too" -- "$CGNN" rank --embeddings "$BD/emb.npy" --dataset "$BD" --k 5 \
  --split valid --candidates 8:27
check_line sub-valid-5
expect 0 "candidates: 0:N = no range" -- "$CGNN" rank --embeddings "$BD/emb.npy" --dataset "$BD" --k 3 --candidates 0:27
check_line all-test-3
expect 0 "no candidates: every node" -- "$CGNN" rank --embeddings "$BD/emb.npy" --dataset "$BD" --k 3
check_line all-test-3
if [[ $(grep "^items-test-3 " "$BD/expected.txt" | cut -d' ' -f4-) == $(grep "^all-test-3 " "$BD/expected.txt" | cut -d' ' -f4-) ]]; then
  echo "FAIL: the fixture should rank differently over the items than over every node"; fails=$((fails + 1))
else
  pass=$((pass + 1))
fi
for bad in "27:10" "10:10" "-1:27" "10:28" "abc" "10:" ":27" "10:27:30" "1e1:27" "10:27x" "99999999999999999999:1"; do
  expect 2 "--candidates '$bad'" -- "$CGNN" rank --embeddings "$BD/emb.npy" --dataset "$BD" --candidates "$bad"
  contains "--candidates" "--candidates '$bad' is named"
done
expect 2 "--candidates: a test positive outside" -- "$CGNN" rank --embeddings "$BD/emb.npy" --dataset "$BD/bad" \
  --candidates 10:27
contains "test_user_pos.npy" "positive outside the range: the file is named"
contains "row $(cat "$BD/bad_row.txt"): positive id 3 outside the candidate range [10, 27)" "positive outside the range: the row is named"
expect 2 "--candidates on a typed dataset" -- "$CGNN" rank --embeddings "$TD/emb" --dataset "$TD" --task buy --candidates 0:5
contains "destination type" "typed + --candidates explained"

echo "test_rank: $pass passed, $fails failed"
[[ $fails -eq 0 ]]
