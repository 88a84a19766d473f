#!/usr/bin/env bash
# test_lp_typed_labelled.sh CGNN — labelled link-prediction pairs (GraphBolt labels + indexes) on a
# typed dataset: data/lastfm-mini's user:listens:artist splits rewritten in the labelled form
# (every row (user, artist) labelled 1 or 0, grouped by `indexes`: up to 3 positives of one user
# with their listed negatives — random artists, and the group's first positive again, an
# accidental hit the loss and the ranks skip):
#   - training uses the listed (hard) negatives beside the random ones; 0 and 2 sampler threads
#     give the same model;
#   - evaluation ranks each positive against its own group's listed negatives only: the trainer's
#     test MRR, HitRate@1, ROC-AUC and AP (full neighbourhoods) equal those computed in numpy from
#     `cgnn embed`'s user.npy and artist.npy;
#   - a label other than 0 / 1 is refused with exit 2 naming the file and row.
set -u
CGNN=${1:?usage: test_lp_typed_labelled.sh path/to/cgnn}
SRC=${CGNN_SOURCE_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
PY=/usr/bin/python3
if ! "$PY" -c "import numpy" 2>/dev/null; then echo "SKIP: needs /usr/bin/python3 with numpy"; exit 77; fi
TMP=$(mktemp -d /tmp/cgnn-lp-typed-lab-XXXXXX)
trap 'rm -rf "$TMP"' EXIT
cd "$SRC"
fails=0
pass=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }
train() { # train NAME — cgnn train on $TMP/NAME.yaml; stdout in $TMP/NAME.out, stderr in .err
  timeout -k 10 300 "$CGNN" train --quiet --task_config_uri="$TMP/$1.yaml" >"$TMP/$1.out" 2>"$TMP/$1.err"
}
metric() { awk -v k="$2" '/^test:/{for (i = 2; i < NF; i++) if ($i == k) print $(i + 1)}' "$TMP/$1.out"; }

"$PY" - "$SRC/data/lastfm-mini" "$TMP/lab" <<'PY' || { echo "FAIL: writing the labelled dataset"; exit 1; }
import os, re, sys
import numpy as np
src, d = sys.argv[1:3]
os.makedirs(d)
rng = np.random.default_rng(7)
for f in os.listdir(src):
    if f.startswith("edges-"): os.symlink(os.path.join(src, f), os.path.join(d, f))
A = 8271
def labelled(name, n_neg):
    pairs = np.load(os.path.join(src, f"lp-{name}-seeds.npy"))
    by_user = {}
    for u, a in pairs: by_user.setdefault(int(u), []).append(int(a))
    rows, labels, idx, g = [], [], [], 0
    for u in sorted(by_user):
        ps = by_user[u]
        for k in range(0, len(ps), 3):
            negs = [int(v) for v in rng.choice(A, n_neg, replace=False)] + [ps[k]]  # + an accidental hit
            for p in ps[k:k + 3]: rows.append((u, p)); labels.append(1); idx.append(g)
            for v in negs: rows.append((u, v)); labels.append(0); idx.append(g)
            g += 1
    perm = rng.permutation(len(rows))
    for f, a in (("seeds", rows), ("labels", labels), ("indexes", idx)):
        np.save(os.path.join(d, f"{name}-{f}.npy"), np.array(a, dtype=np.int64)[perm])
labelled("train", 2)
labelled("valid", 5)
labelled("test", 5)
meta = open(os.path.join(src, "metadata.yaml")).read()
meta = meta[:meta.index("tasks:")].replace("dataset_name: lastfm-mini", "dataset_name: lastfm-labelled")
meta += "tasks:\n  - name: link_prediction\n"
for split, name in (("train_set", "train"), ("validation_set", "valid"), ("test_set", "test")):
    meta += f"    {split}:\n      - type: \"user:listens:artist\"\n        data:\n"
    for f in ("seeds", "labels", "indexes"):
        meta += f"          - {{name: {f}, format: numpy, path: {name}-{f}.npy}}\n"
open(os.path.join(d, "metadata.yaml"), "w").write(meta)
PY

# training with listed hard negatives: 15 batches of 256 positives, 0 and 2 sampler threads
for w in 0 2; do
  sed -e "s#out/[a-z_]*/#$TMP/w$w/#g" -e "s#preprocessedMetadataUri: .*#preprocessedMetadataUri: $TMP/lab#" \
    -e 's/hidden_dim: "64"/hidden_dim: "32"/' -e 's/node_embedding_dim: "64"/node_embedding_dim: "16"/' \
    -e 's/main_sample_batch_size: "512"/main_sample_batch_size: "256"/' \
    -e 's/random_negative_sample_batch_size: "512"/random_negative_sample_batch_size: "128"/' \
    -e 's/num_epochs: "10"/num_epochs: "1"\n    num_max_train_batches: "15"\n    num_val_batches: "2"\n    num_test_batches: "3"/' \
    -e "s/train_main_num_workers: \"2\"/train_main_num_workers: \"$w\"/" examples/lastfm_hetero_sage_lp.yaml > "$TMP/w$w.yaml"
  train "w$w" && ok || bad "labelled typed training ($w sampler threads) failed: $(tail -3 "$TMP/w$w.err")"
done
cmp -s "$TMP/w0/model.safetensors" "$TMP/w2/model.safetensors" && ok \
  || bad "labelled typed training: 0 and 2 sampler threads give different weights"
grep -q "test: .*mrr" "$TMP/w0.out" && ok || bad "no test metrics: $(cat "$TMP/w0.out")"

# evaluation with fixed candidates, full neighbourhoods, against cgnn embed's embeddings
sed -e 's/shouldSkipTraining: .*//' -e "s#trainedModelMetadata:#shouldSkipTraining: true\n  trainedModelMetadata:#" \
  -e "s#evalMetricsUri: .*#evalMetricsUri: $TMP/eval/eval_metrics.json#" \
  -e "s#tensorboardLogsUri: .*#tensorboardLogsUri: $TMP/eval/tb/#" -e 's/num_neighbors: .*/num_neighbors: "[-1, -1]"/' \
  -e 's/num_test_batches: "3"/num_test_batches: "0"/' "$TMP/w0.yaml" > "$TMP/eval.yaml"
if train eval; then
  "$CGNN" embed --quiet --task_config_uri="$TMP/eval.yaml" --out "$TMP/emb" >"$TMP/embed.out" 2>&1 \
    || bad "embed failed: $(cat "$TMP/embed.out")"
  "$PY" - "$TMP/emb" "$TMP/lab" "$(metric eval mrr)" "$(metric eval HitRate_at_1)" "$(metric eval auc)" \
    "$(metric eval ap)" <<'PY' && ok || bad "labelled typed test split: embed vs trainer MRR / HitRate@1 / AUC / AP"
import os, sys
import numpy as np
e, d = sys.argv[1:3]
user, artist = (np.load(os.path.join(e, f"{t}.npy")).astype(np.float64) for t in ("user", "artist"))
seeds, labels, idx = (np.load(os.path.join(d, f"test-{f}.npy")) for f in ("seeds", "labels", "indexes"))
negs = {}
for (u, v), l, g in zip(seeds, labels, idx):
    if l == 0: negs.setdefault(g, []).append(v)
rr, sc, y = [], [], []
for (u, p), l, g in zip(seeds, labels, idx):
    if l != 1: continue
    sp = user[u] @ artist[p]
    others = [v for v in negs.get(g, []) if v != p]  # the accidental hit (the positive itself) is skipped
    rr.append(1.0 / (1 + sum(user[u] @ artist[v] > sp for v in others)))
    sc.append(sp); y.append(1)
    if g in negs: sc.append(user[u] @ artist[negs[g][0]]); y.append(0)  # its group's first listed negative
mrr, h1 = float(np.mean(rr)), float(np.mean([r == 1.0 for r in rr]))
sc, y = np.array(sc), np.array(y)
P, N = y.sum(), len(y) - y.sum()
ranks = np.empty(len(sc)); ranks[np.argsort(sc, kind="stable")] = np.arange(1, len(sc) + 1)
for s in np.unique(sc):  # average ranks of ties
    m = sc == s; ranks[m] = ranks[m].mean()
auc = (ranks[y == 1].sum() - P * (P + 1) / 2) / (P * N)
ap, prev = 0.0, 0.0
for t in sorted(set(sc), reverse=True):
    tp, fp = float(np.sum(y[sc >= t])), float(np.sum(1 - y[sc >= t]))
    ap += (tp / P - prev) * tp / (tp + fp); prev = tp / P
print("labelled typed test: %d positives; MRR from cgnn embed %.4f, trainer %s; HitRate@1 %.4f, trainer %s; "
      "ROC-AUC %.4f / %s, AP %.4f / %s" % (len(rr), mrr, sys.argv[3], h1, sys.argv[4], auc, sys.argv[5], ap, sys.argv[6]))
assert abs(mrr - float(sys.argv[3])) < 1e-3 and abs(h1 - float(sys.argv[4])) < 1e-3, "mrr / hitrate"
assert abs(auc - float(sys.argv[5])) < 1e-3 and abs(ap - float(sys.argv[6])) < 1e-3, "auc / ap"
assert 0.2 < mrr < 1.0, mrr
PY
else bad "labelled typed evaluation failed: $(tail -3 "$TMP/eval.err")"; fi

# a bad label: exit 2 naming the file and the row
cp -r "$TMP/lab" "$TMP/badlab"
"$PY" -c "
import numpy as np, sys
l = np.load(sys.argv[1]); l[5] = 2; np.save(sys.argv[1], l)" "$TMP/badlab/valid-labels.npy"
sed -e "s#$TMP/lab#$TMP/badlab#" -e "s#$TMP/w0/#$TMP/bad/#g" "$TMP/w0.yaml" > "$TMP/bad.yaml"
train bad; rc=$?
[[ $rc -eq 2 ]] && grep -q "badlab/valid-labels.npy: row 5: label 2" "$TMP/bad.err" && ok \
  || bad "a bad label: exit $rc: $(tail -2 "$TMP/bad.err")"

echo "test_lp_typed_labelled: $pass passed, $fails failed"
[[ $fails -eq 0 ]]
