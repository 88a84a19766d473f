#!/usr/bin/env bash
# test_gigl_import.sh CGNN — GiGL's preprocessed output (preprocessed_metadata.yaml + TFRecords)
# as cgnn's input (train/gigl_import.h, docs/DATASETS.md "GiGL's preprocessed output"):
#   - our own generated output (scripts/fixtures/make_gigl_tfrecord_fixtures.py, homogeneous and
#     typed with condensed ids in another order than the config's types: gzip and plain
#     shards, shuffled node records, packed and unpacked lists, int64 features, a stray file
#     GiGL's pattern leaves out): `cgnn import gigl` gives exactly the expected features by node
#     id, labels, edges, edge features, and splits that are disjoint, cover every node (NC) /
#     every positive and kept negative (LP), keep each anchor's pairs together and follow GiGL's
#     hash (the max-hash id in test, the min-hash id in train);
#   - hostile copies (truncated, CRC flipped, lying lengths, bytes / float where int64 or numbers
#     are expected, a wrong width, a missing key, a duplicate or out-of-range id, an edge id out
#     of range, not an Example, a gs:// URI, a folder without TFRecords): exit 2, the message
#     naming the file and the record, nothing written;
#   - `cgnn train` on a config whose preprocessedMetadataUri names the YAML: converted once into
#     the cache (a log line names it), reused on the second run, converted again after a TFRecord
#     changes; the input folders unchanged;
#   - under mpirun -np 2 (skipped in a serial build or without mpirun): one conversion, one log
#     line, and a bad TFRecord exits 2 from the job naming the file and record;
#   - GiGL's own assets (tests/fixtures/gigl/, GiGL's task configs with the outputs added): the
#     homogeneous link prediction and the typed (heterogeneous) link prediction train from the
#     frozen configs as they are, from GiGL's scala/ folder; node classification is refused as
#     written (its YAML names another asset's edges, whose ids pass its 16 nodes: exit 2 naming the
#     file and record) and trains from a copy naming its own edges; small_graph trains from its
#     own task config.
set -u
CGNN=${1:?usage: test_gigl_import.sh path/to/cgnn}
TMP_PREFIX=cgnn-gigl-import
source "$(dirname "$0")/test_lib.sh"
PY=/usr/bin/python3
export CGNN_CACHE_DIR=$TMP/cache
export CGNN_TEST_MAX_TRAIN_BATCHES=2
G=$SRC/tests/fixtures/gigl
A=$G/scala/common/src/test/assets/subgraph_sampler

if ! $PY scripts/fixtures/make_gigl_tfrecord_fixtures.py "$TMP/f" >"$TMP/gen.log" 2>&1; then
  echo "FAIL: make_gigl_tfrecord_fixtures.py: $(tail -3 "$TMP/gen.log")"
  exit 1
fi
F=$TMP/f
snapshot() { (cd "$1" && find . -type f -exec cksum {} + | sort); }
snapshot "$F/good" >"$TMP/good.before"
snapshot "$G" >"$TMP/assets.before"

# ---- our own output: exact conversion -------------------------------------------------------
for task in nc lp; do
  if "$CGNN" import gigl --task_config_uri "$F/$task.yaml" --out "$TMP/$task" >"$TMP/$task.log" 2>&1; then ok
  else bad "import gigl $task: $(tail -3 "$TMP/$task.log")"; fi
done
grep -q "wrote $TMP/nc (untyped): 60 nodes.*240 edges.*370 records from 6 TFRecord files" "$TMP/nc.log" && ok ||
  bad "import log: $(tail -1 "$TMP/nc.log")"
if $PY - "$TMP" "$F/expected" <<'EOF'; then ok; else bad "the converted arrays differ from the expected ones"; fi
import sys, numpy as np
tmp, exp = sys.argv[1], sys.argv[2]
E = lambda n: np.load(exp + "/" + n)
fail = []
def check(c, what):
    if not c: fail.append(what)
for t in ("nc", "lp"):
    d = tmp + "/" + t
    check(np.array_equal(np.load(d + "/node-feat.npy"), E("node_feat.npy")), t + " node features by id")
    check(np.load(d + "/node-feat.npy").dtype == np.float32, t + " float32")
    check(np.array_equal(np.load(d + "/edges.npy"), E("edges.npy")), t + " edges")
    check(np.array_equal(np.load(d + "/edge-feat.npy"), E("edge_feat.npy")), t + " edge features")
def h(x):  # GiGL's _fast_hash (int64, wrapping, arithmetic shifts)
    x = np.int64(x) + np.int64(1)
    with np.errstate(over="ignore"):
        for _ in range(2):
            x ^= x >> np.int64(30); x = np.int64(np.uint64(x) * np.uint64(0xBF58476D1CE4E5B9))
            x ^= x >> np.int64(27); x = np.int64(np.uint64(x) * np.uint64(0x94D049BB133111EB))
            x ^= x >> np.int64(31)
    return int(x)
# node classification: a partition of all 60 nodes with their labels
d = tmp + "/nc"
seeds = [np.load(d + "/nc-%s-seeds.npy" % s) for s in ("train", "valid", "test")]
labels = [np.load(d + "/nc-%s-labels.npy" % s) for s in ("train", "valid", "test")]
allseeds = np.concatenate(seeds)
check(sorted(allseeds.tolist()) == list(range(60)), "nc splits partition the nodes")
check(all(np.array_equal(l, E("labels.npy")[s]) for s, l in zip(seeds, labels)), "nc labels")
hs = {i: h(i) for i in range(60)}
check(max(hs, key=hs.get) in seeds[2].tolist(), "nc: the max-hash node is in test")
check(min(hs, key=hs.get) in seeds[0].tolist(), "nc: the min-hash node is in train")
check(len(seeds[0]) > 40 and len(seeds[1]) > 0 and len(seeds[2]) > 0, "nc split sizes %s" % [len(s) for s in seeds])
meta = open(d + "/metadata.yaml").read()
check("num_classes: %d" % (E("labels.npy").max() + 1) in meta, "num_classes")
# link prediction: positives (label 1) and negatives (label 0), each anchor in one split
d = tmp + "/lp"
ls = [np.load(d + "/lp-%s-seeds.npy" % s) for s in ("train", "valid", "test")]
ll = [np.load(d + "/lp-%s-labels.npy" % s) for s in ("train", "valid", "test")]
pos, neg = E("pos.npy"), E("neg.npy")
got_pos = sorted(map(tuple, np.concatenate([s[l == 1] for s, l in zip(ls, ll)]).tolist()))
got_neg = sorted(map(tuple, np.concatenate([s[l == 0] for s, l in zip(ls, ll)]).tolist()))
check(got_pos == sorted(map(tuple, pos.T.tolist())), "lp positives")
check(got_neg == sorted(map(tuple, neg.T.tolist())), "lp negatives (every anchor has a positive)")
anch = [set(s[:, 0].tolist()) for s in ls]
check(not (anch[0] & anch[1]) and not (anch[0] & anch[2]) and not (anch[1] & anch[2]), "lp anchors in one split")
a = sorted(set(pos[0].tolist()) | set(neg[0].tolist()))
ha = {x: h(x) for x in a}
check(max(ha, key=ha.get) in anch[2] and min(ha, key=ha.get) in anch[0], "lp: GiGL's hash order")
if fail:
    print("failed:", fail)
    sys.exit(1)
EOF
# the typed graph on the same files: types by condensed id (the config lists them in another order)
"$CGNN" import gigl --task_config_uri "$F/nc_typed.yaml" --out "$TMP/typed" >"$TMP/typed.log" 2>&1 &&
  $PY - "$TMP/typed" "$F/expected" <<'EOF' && ok || bad "typed conversion: $(tail -2 "$TMP/typed.log")"
import sys, numpy as np
d, e = sys.argv[1], sys.argv[2]
meta = open(d + "/metadata.yaml").read()
assert meta.index('type: "author"') < meta.index('type: "paper"'), "node types in config order"
assert "num: 30" in meta and "num: 60" in meta
assert np.array_equal(np.load(d + "/node-feat-1.npy"), np.load(e + "/node_feat.npy")), "paper features"
assert np.array_equal(np.load(d + "/edges-0.npy"), np.load(e + "/writes.npy")), "author:writes:paper"
assert np.array_equal(np.load(d + "/edges-1.npy"), np.load(e + "/writes.npy")[::-1]), "paper:written_by:author"
assert np.array_equal(np.load(d + "/edges-2.npy"), np.load(e + "/edges.npy")), "paper:cites:paper"
assert sorted(np.concatenate([np.load(d + "/nc-%s-seeds.npy" % k) for k in ("train", "valid", "test")]).tolist()) == list(range(60))
EOF
"$CGNN" info "$TMP/lp" >"$TMP/info.log" 2>&1 && grep -q "link_prediction" "$TMP/info.log" && ok ||
  bad "cgnn info on the converted dataset: $(tail -3 "$TMP/info.log")"

# ---- hostile copies: exit 2 naming the file and the record, nothing written -----------------------
for e in "$F"/hostile/*.expect; do
  name=$(basename "$e" .expect)
  IFS='|' read -r file rec words <"$e"
  sed "s#$F/good/#$F/hostile/$name/#" "$F/nc.yaml" >"$TMP/h-$name.yaml"
  "$CGNN" import gigl --task_config_uri "$TMP/h-$name.yaml" --out "$TMP/h-$name" >"$TMP/h-$name.log" 2>&1
  rc=$?
  msg=$(grep "error:" "$TMP/h-$name.log")
  if [[ $rc -ne 2 ]]; then bad "hostile $name: exit $rc (want 2): $(tail -2 "$TMP/h-$name.log")"
  elif [[ $msg != *"hostile/$name/$file"* || $msg != *"$rec"* || $msg != *"$words"* ]]; then
    bad "hostile $name: message lacks '$file' / '$rec' / '$words': $msg"
  elif [[ -e $TMP/h-$name ]] || ls -d "$TMP/h-$name".tmp.* >/dev/null 2>&1; then bad "hostile $name: output left behind"
  else ok; fi
done
# the same through cgnn train: exit 2, the message names the file and the record
sed "s#$F/good/#$F/hostile/crc_flipped/#" "$F/nc.yaml" >"$TMP/h-train.yaml"
"$CGNN" train --task_config_uri "$TMP/h-train.yaml" >"$TMP/h-train.log" 2>&1
rc=$?
[[ $rc -eq 2 ]] && grep -q "crc_flipped/nodes/data-00001-of-00002.tfrecord: record 3: data CRC mismatch" "$TMP/h-train.log" &&
  ok || bad "train on a hostile TFRecord: exit $rc: $(tail -2 "$TMP/h-train.log")"
[[ -z $(ls -A "$CGNN_CACHE_DIR/gigl" 2>/dev/null) ]] && ok || bad "a failed conversion left $(ls "$CGNN_CACHE_DIR/gigl")"

# ---- cgnn train: converted once, reused, converted again after a change -----------------------------
for task in nc lp nc_typed; do
  "$CGNN" train --task_config_uri "$F/$task.yaml" >"$TMP/t-$task.log" 2>&1
  rc=$?
  if [[ $rc -eq 0 ]] && grep -q "GiGL's preprocessed output converted into $CGNN_CACHE_DIR/gigl/" "$TMP/t-$task.log" &&
     grep -q "^trained 2 steps" "$TMP/t-$task.log" && [[ -s $F/out-$task/model.safetensors ]]; then ok
  else bad "train $task: exit $rc: $(tail -3 "$TMP/t-$task.log")"; fi
done
"$CGNN" train --task_config_uri "$F/nc.yaml" >"$TMP/t-nc2.log" 2>&1 &&
  grep -q "converted before" "$TMP/t-nc2.log" && ! grep -q "converted into" "$TMP/t-nc2.log" && ok ||
  bad "second train did not reuse the conversion: $(grep -i gigl "$TMP/t-nc2.log" | head -2)"
[[ $(ls "$CGNN_CACHE_DIR/gigl" | wc -l) -eq 3 ]] && ok || bad "cache entries: $(ls "$CGNN_CACHE_DIR/gigl")"
snapshot "$F/good" >"$TMP/good.after"
cmp -s "$TMP/good.before" "$TMP/good.after" && ok || bad "the input folder changed: $(diff "$TMP/good.before" "$TMP/good.after" | head -3)"
# cgnn embed on the same config: the same cache entry, (60, out) embeddings
"$CGNN" embed --task_config_uri "$F/lp.yaml" --out "$TMP/emb.npy" >"$TMP/embed.log" 2>&1 &&
  grep -q "converted before" "$TMP/embed.log" &&
  $PY -c "import numpy as np, sys; a = np.load(sys.argv[1]); sys.exit(0 if a.shape[0] == 60 and np.isfinite(a).all() else 1)" "$TMP/emb.npy" &&
  ok || bad "embed on a GiGL config: $(tail -2 "$TMP/embed.log")"
# cgnn info names what the YAML is and what to run
"$CGNN" info "$F/good/preprocessed_metadata.yaml" >"$TMP/info2.log" 2>&1
[[ $? -eq 2 ]] && grep -q "GiGL's preprocessed output.*cgnn import gigl" "$TMP/info2.log" && ok ||
  bad "cgnn info on preprocessed_metadata.yaml: $(tail -1 "$TMP/info2.log")"
# a changed TFRecord converts again
$PY - "$F/good/edges/part-00001-of-00002.tfrecord" <<'EOF'
import sys, struct
sys.path.insert(0, "scripts/fixtures")
import tfrecord_lib as tl
p = sys.argv[1]
recs = list(tl.read_records(p))
ex = tl.decode_example(recs[0])
new = tl.example({k: tl.feature(v[1], v[0]) for k, v in ex.items() if k != "w"} | {"w": tl.feature([0.25], "float")})
open(p, "wb").write(b"".join(tl.frame(r) for r in [new] + recs[1:]))
EOF
touch -d '2001-01-01' "$F/good/edges/part-00001-of-00002.tfrecord" # a new time too, as any rewrite gives
"$CGNN" train --task_config_uri "$F/nc.yaml" >"$TMP/t-nc3.log" 2>&1 && grep -q "converted into" "$TMP/t-nc3.log" && ok ||
  bad "a changed TFRecord did not convert again: $(grep -i gigl "$TMP/t-nc3.log" | head -2)"
[[ $(ls "$CGNN_CACHE_DIR/gigl" | wc -l) -eq 4 ]] && ok || bad "cache entries after the change: $(ls "$CGNN_CACHE_DIR/gigl")"
# no cache folder: a temporary one, removed at exit
mkdir -p "$TMP/tmpdir"
CGNN_CACHE_DIR= TMPDIR=$TMP/tmpdir "$CGNN" train --task_config_uri "$F/lp.yaml" >"$TMP/t-nocache.log" 2>&1 &&
  grep -q "removed at exit" "$TMP/t-nocache.log" && [[ -z $(ls -A "$TMP/tmpdir") ]] && ok ||
  bad "train without a cache folder: $(tail -2 "$TMP/t-nocache.log"); left: $(ls "$TMP/tmpdir")"

# under mpirun: two ranks convert at once into a fresh cache; one entry, one log line, and a bad
# TFRecord is exit 2 from every rank with the file and record named
if ! "$CGNN" --version | grep -q "distributed: MPI"; then
  echo "SKIP (mpirun part): serial build (CGNN_WITH_MPI=OFF)"
elif ! command -v mpirun >/dev/null; then
  echo "SKIP (mpirun part): mpirun not installed (openmpi-bin)"
else
  MPIRUN=(mpirun --oversubscribe --bind-to none -np 2)
  [[ $(id -u) -eq 0 ]] && MPIRUN+=(--allow-run-as-root)
  (
    export OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none CGNN_CACHE_DIR=$TMP/mpi-cache
    [[ ${CGNN_TEST_SANITIZED:-0} == 1 ]] && export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0"
    timeout -k 10 300 "${MPIRUN[@]}" "$CGNN" train --task_config_uri "$F/nc.yaml" >"$TMP/mpi.log" 2>&1
    echo $? >"$TMP/mpi.rc"
    timeout -k 10 300 "${MPIRUN[@]}" "$CGNN" train --task_config_uri "$TMP/h-train.yaml" >"$TMP/mpi-bad.log" 2>&1
    echo $? >"$TMP/mpi-bad.rc"
  )
  [[ $(cat "$TMP/mpi.rc") -eq 0 && $(grep -c "GiGL's preprocessed output converted into" "$TMP/mpi.log") -eq 1 &&
     $(ls "$TMP/mpi-cache/gigl" | wc -l) -eq 1 ]] && grep -q "^trained 2 steps" "$TMP/mpi.log" && ok ||
    bad "mpirun -np 2 train: exit $(cat "$TMP/mpi.rc"): $(tail -3 "$TMP/mpi.log"); entries: $(ls "$TMP/mpi-cache/gigl")"
  [[ $(cat "$TMP/mpi-bad.rc") -eq 2 ]] && grep -q "crc_flipped/nodes/data-00001-of-00002.tfrecord: record 3" "$TMP/mpi-bad.log" &&
    ok || bad "mpirun -np 2 on a bad TFRecord: exit $(cat "$TMP/mpi-bad.rc"): $(tail -2 "$TMP/mpi-bad.log")"
fi

# ---- GiGL's own assets with GiGL's task configs ---------------------------------------------------------
# with_outputs SRC DST OUT — GiGL's frozen config with sharedConfig.trainedModelMetadata added (the
# part GiGL's config populator fills in); PM, when set, replaces preprocessedMetadataUri
with_outputs() {
  awk -v out="$3" -v pm="${PM:-}" '
    /^  preprocessedMetadataUri:/ && pm != "" { print "  preprocessedMetadataUri: " pm; next }
    { print }
    /^sharedConfig:/ { print "  trainedModelMetadata:\n    trainedModelUri: " out "/model.safetensors\n    evalMetricsUri: " out "/eval_metrics.json" }' "$1" >"$2"
}
# train_asset ID CONFIG CWD — trains from CWD (GiGL's URIs are relative to its scala/ or root folder)
train_asset() {
  (cd "$3" && "$CGNN" train --task_config_uri "$2" >"$TMP/a-$1.log" 2>&1)
  echo $?
}
with_outputs "$A/node_anchor_based_link_prediction/frozen_gbml_config.yaml" "$TMP/a-lp.yaml" "$TMP/out-a-lp"
with_outputs "$A/heterogeneous/node_anchor_based_link_prediction/frozen_gbml_config_graphdb_dblp_local.yaml" \
  "$TMP/a-het.yaml" "$TMP/out-a-het"
with_outputs "$A/supervised_node_classification/frozen_gbml_config.yaml" "$TMP/a-nc-asis.yaml" "$TMP/out-a-nc-asis"
sed "s#node_anchor_based_link_prediction/edge_data#supervised_node_classification/edge_data#" \
  "$A/supervised_node_classification/preprocessed_metadata.yaml" >"$TMP/nc_preprocessed_metadata.yaml"
PM=$TMP/nc_preprocessed_metadata.yaml with_outputs "$A/supervised_node_classification/frozen_gbml_config.yaml" \
  "$TMP/a-nc.yaml" "$TMP/out-a-nc"
with_outputs "$G/tests/test_assets/small_graph/sgs_input_node_anchor_link_prediction.yaml" "$TMP/a-sg.yaml" "$TMP/out-a-sg"
for id in lp het nc; do
  rc=$(train_asset $id "$TMP/a-$id.yaml" "$G/scala")
  # (the node classification asset's 16 nodes leave GiGL's test split empty: no eval metrics)
  if [[ $rc -eq 0 && -s $TMP/out-a-$id/model.safetensors && ($id == nc || -s $TMP/out-a-$id/eval_metrics.json) ]] &&
     grep -q "^trained 1 step" "$TMP/a-$id.log"; then ok
  else bad "GiGL asset $id: exit $rc: $(tail -3 "$TMP/a-$id.log")"; fi
done
grep -q "converted into .*(typed; 34 nodes, 165 edges" "$TMP/a-het.log" && grep -q "HGT" "$TMP/a-het.log" && ok ||
  bad "typed asset: $(grep -E 'converted|HGT' "$TMP/a-het.log")"
grep -q "16 nodes, 34 edges" "$TMP/a-nc.log" && ok || bad "NC asset: $(grep 'node classification' "$TMP/a-nc.log")"
rc=$(train_asset nc-asis "$TMP/a-nc-asis.yaml" "$G/scala")
[[ $rc -eq 2 ]] && grep -q "node_anchor_based_link_prediction/edge_data/data.tfrecord: record 14: source id 17 (src) is not a node of type 'user'" "$TMP/a-nc-asis.log" &&
  ok || bad "NC asset as written: exit $rc: $(tail -2 "$TMP/a-nc-asis.log")"
rc=$(train_asset sg "$TMP/a-sg.yaml" "$G")
[[ $rc -eq 0 && -s $TMP/out-a-sg/model.safetensors ]] && grep -q "older schema" "$TMP/a-sg.log" && ok ||
  bad "small_graph: exit $rc: $(tail -3 "$TMP/a-sg.log")"
# from elsewhere: the relative prefixes resolve against the YAML's folder and those above it
(cd "$TMP" && PM=$A/node_anchor_based_link_prediction/preprocessed_metadata.yaml with_outputs \
  "$A/node_anchor_based_link_prediction/frozen_gbml_config.yaml" "$TMP/a-lp2.yaml" "$TMP/out-a-lp2")
rc=$(train_asset lp2 "$TMP/a-lp2.yaml" "$TMP")
[[ $rc -eq 0 ]] && grep -q "converted before" "$TMP/a-lp2.log" && ok || bad "asset from another folder: exit $rc: $(tail -2 "$TMP/a-lp2.log")"
# cgnn import gigl takes GiGL's frozen config as it is (no trainedModelMetadata: import writes no model)
(cd "$G/scala" && "$CGNN" import gigl --task_config_uri "$A/node_anchor_based_link_prediction/frozen_gbml_config.yaml" \
  --out "$TMP/asis-lp" >"$TMP/asis-lp.log" 2>&1) && grep -q "27 nodes in 1 node type, 21 edges" "$TMP/asis-lp.log" &&
  [[ -s $TMP/asis-lp/metadata.yaml ]] && ok || bad "import gigl on GiGL's frozen config as it is: $(tail -2 "$TMP/asis-lp.log")"
snapshot "$G" >"$TMP/assets.after"
cmp -s "$TMP/assets.before" "$TMP/assets.after" && ok || bad "GiGL's asset folder changed"

echo "test_gigl_import: $pass passed, $fails failed"
[[ $fails -eq 0 ]]
