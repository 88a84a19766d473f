#!/usr/bin/env bash
# test_hostile.sh CGNN — hostile input, one or more cases per defect class of the hardening
# issue and per reader. Every case asserts the exit code, that the message names the right
# file and field, and that every input file is unchanged afterwards (size, inode and times of
# every file of the work tree, minus the outputs the case may write). Runs plain and under ASan/UBSan
# (the sanitized CI build runs every ctest script).
set -u
CGNN=$(realpath "${1:?usage: test_hostile.sh path/to/cgnn}")
SRC=${CGNN_SOURCE_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
PY=/usr/bin/python3
if ! "$PY" -c "import numpy" 2>/dev/null; then echo "SKIP: test_hostile.sh needs /usr/bin/python3 with numpy"; exit 77; fi
TMP=$(mktemp -d /tmp/cgnn-hostile-XXXXXX)
trap 'rm -rf "$TMP"' EXIT
mkdir "$TMP/w" && cd "$TMP/w" || exit 1 # the work tree; hashes and logs stay outside it
fails=0
pass=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }

# snapshot: every file under the work dir except outputs (out*/) and caches, by path, size, inode,
# and modification and change times in ns: a write, truncation, rename over or deletion changes one
# (the change time cannot be set back), so an equal snapshot is unchanged content. (Hashing the
# contents cost 30 CPU-s of this test: the work dir holds a dozen copies of Cora's 15 MB features.)
snapshot() { find . -path ./out -prune -o -type f -printf '%p %s %i %T@ %C@\n' |
             LC_ALL=C sort; }
# expect CODE DESC TEXT... -- command: runs it (30 s limit: a hang fails), checks the exit code,
# that stderr contains every TEXT, and that no input changed
expect() {
  local want=$1 desc=$2; shift 2
  local texts=()
  while [[ $1 != -- ]]; do texts+=("$1"); shift; done
  shift
  snapshot > "$TMP/before.sum"
  timeout -k 10 30 bash -c '"$@"' bash "$@" > "$TMP/out.log" 2>&1 # (bash: the command may be a function)
  local got=$?
  snapshot > "$TMP/after.sum"
  if [[ $got -ne $want ]]; then
    bad "$desc: exit $got, want $want"; sed 's/^/    /' "$TMP/out.log" | tail -5; return
  fi
  for t in "${texts[@]}"; do
    if ! grep -qF -- "$t" "$TMP/out.log"; then bad "$desc: message lacks '$t'"; sed 's/^/    /' "$TMP/out.log" | tail -3; return; fi
  done
  if ! cmp -s "$TMP/before.sum" "$TMP/after.sum"; then
    bad "$desc: an input changed"; diff "$TMP/before.sum" "$TMP/after.sum" | head -5; return
  fi
  ok
}

cp -r "$SRC/data/cora" cora
# task config on dataset DIR writing to out/NAME, with extra "key: value" trainerArgs lines
task() { # task FILE DATASET [trainerArgs lines...]
  local f=$1 ds=$2; shift 2
  cat > "$f" <<EOF
taskMetadata: {nodeBasedTaskMetadata: {supervisionNodeTypes: [paper]}}
sharedConfig:
  preprocessedMetadataUri: $ds
  trainedModelMetadata:
    trainedModelUri: out/${f%.yaml}/model.safetensors
    evalMetricsUri: out/${f%.yaml}/eval_metrics.json
    tensorboardLogsUri: out/${f%.yaml}/tb/
trainerConfig:
  trainerArgs:
    num_layers: "2"
    hidden_dim: "16"
    num_neighbors: "[5, 5]"
    main_sample_batch_size: "70"
    num_epochs: "2"
    train_main_num_workers: "1"
EOF
  for l in "$@"; do echo "    $l" >> "$f"; done
}
train() { "$CGNN" train --job_name=hostile --task_config_uri="$1"; }
export CGNN
export -f train
npy() { "$PY" -c "import numpy as np, sys; $1" "${@:2}"; } # npy CODE ARGS...
task ok.yaml cora
expect 0 "a good run first (caches the index)" -- train ok.yaml

# ---- 1. size arithmetic from file contents and flags ----
# an .npy header whose count x itemsize wraps past 2^64 (2^61 int64 = 2^64 bytes -> 0)
mkdir -p wrap && cp cora/*.npy cora/metadata.yaml wrap/
printf "\x93NUMPY\x01\x00\x76\x00{'descr': '<i8', 'fortran_order': False, 'shape': (2305843009213693952,), }" > wrap/nc-train-seeds.npy
printf '%*s\n' $((128 - $(stat -c %s wrap/nc-train-seeds.npy) - 1)) '' >> wrap/nc-train-seeds.npy
task wrap.yaml wrap
expect 2 "npy: count x itemsize wraps (seeds)" "wrap/nc-train-seeds.npy" "overflows" -- train wrap.yaml
cp cora/nc-train-seeds.npy wrap/
printf "\x93NUMPY\x01\x00\x76\x00{'descr': '<i8', 'fortran_order': True, 'shape': (2, 1152921504606846976), }" > wrap/edges.npy
printf '%*s\n' $((128 - $(stat -c %s wrap/edges.npy) - 1)) '' >> wrap/edges.npy
expect 2 "npy: wrapping Fortran-order edges" "wrap/edges.npy" "overflows" -- train wrap.yaml
expect 2 "flag: bench sample --batch 2^62" "--batch" -- "$CGNN" bench sample --dataset cora --batch 4611686018427387904
expect 2 "flag: info --threads -3" "--threads" -- "$CGNN" info cora --threads -3
expect 2 "flag: rank --k 2^40" "--k" -- "$CGNN" rank --embeddings x.npy --dataset cora --k 1099511627776
# checkpoint metadata: layer sizes near 2^31 (int products overflow) -> a clear error
mkdir -p ck
"$PY" - ck/huge.safetensors <<'PY'
import json, struct, sys
meta = {"cgnn_model": "GraphSAGE", "num_layers": "2", "in_channels": "2147483647", "hidden_channels": "2147483647",
        "out_channels": "2147483647"}
h = json.dumps({"__metadata__": meta}).encode(); h += b" " * (-len(h) % 8)
open(sys.argv[1], "wb").write(struct.pack("<Q", len(h)) + h)
PY
sed -e 's#trainedModelUri: out/ok/model.safetensors#trainedModelUri: ck/huge.safetensors#' ok.yaml > huge.yaml
expect 2 "checkpoint metadata: channels near 2^31" "ck/huge.safetensors" "channels" -- \
  "$CGNN" embed --task_config_uri=huge.yaml --out out/huge.npy
# safetensors header with a shape whose byte count overflows
"$PY" - ck/shape.safetensors <<'PY'
import json, struct, sys
h = json.dumps({"x": {"dtype": "F32", "shape": [4611686018427387904, 8], "data_offsets": [0, 0]}}).encode()
h += b" " * (-len(h) % 8)
open(sys.argv[1], "wb").write(struct.pack("<Q", len(h)) + h)
PY
task shape.yaml cora
sed -i -e 's#trainedModelUri: out/shape/model.safetensors#trainedModelUri: ck/shape.safetensors#' -e 's#^trainerConfig:#  shouldSkipTraining: true\ntrainerConfig:#' shape.yaml
expect 2 "safetensors: shape overflows" "ck/shape.safetensors" "too large" -- train shape.yaml

# .pt checkpoints (PyTorch's zip format; GiGL's layout): a good one, then broken copies of it,
# each refused naming the file, by shouldSkipTraining and by cgnn embed; a pickle that calls
# os.system is refused and never runs
task okpt.yaml cora; sed -i 's#out/okpt/model.safetensors#out/okpt/model.pt#' okpt.yaml
expect 0 "a .pt checkpoint" -- train okpt.yaml
mkdir -p ckpt
"$PY" - out/okpt/model.pt ckpt <<'PY'
import collections, os, pickle, struct, sys, zipfile
src, d = sys.argv[1], sys.argv[2]
b = open(src, "rb").read()
open(os.path.join(d, "half.pt"), "wb").write(b[: len(b) // 2])
z = zipfile.ZipFile(src)
names = z.namelist()
data = {n: z.read(n) for n in names}
info = z.getinfo([n for n in names if n.endswith("/data/0")][0])
nlen, xlen = struct.unpack("<HH", b[info.header_offset + 26: info.header_offset + 30])
bb = bytearray(b)
bb[info.header_offset + 30 + nlen + xlen + 5] ^= 0x10  # one bit of the first tensor
open(os.path.join(d, "crc.pt"), "wb").write(bb)
class Evil:
    def __reduce__(self):
        return (os.system, ("touch PWNED",))
evil = pickle.dumps(collections.OrderedDict(w=Evil()), protocol=2)
for out, comp, repl in (("evil.pt", zipfile.ZIP_STORED, evil), ("deflated.pt", zipfile.ZIP_DEFLATED, None)):
    with zipfile.ZipFile(os.path.join(d, out), "w", comp) as w:
        for n in names:
            w.writestr(n, repl if (repl and n.endswith("/data.pkl")) else data[n])
PY
for c in "half:zip end-of-central-directory" "crc:CRC-32 mismatch" "evil:global 'posix.system' is not allowed" \
         "deflated:is compressed (method 8)"; do
  n=${c%%:*}
  sed -e "s#trainedModelUri: out/okpt/model.pt#trainedModelUri: ckpt/$n.pt#" -e 's#^trainerConfig:#  shouldSkipTraining: true\ntrainerConfig:#' \
    -e "s#out/okpt/#out/pt_$n/#g" okpt.yaml > "pt_$n.yaml"
  expect 2 ".pt checkpoint: $n (shouldSkipTraining)" "ckpt/$n.pt" "${c#*:}" -- train "pt_$n.yaml"
  expect 2 ".pt checkpoint: $n (embed)" "trainedModelUri" "ckpt/$n.pt" "${c#*:}" -- \
    "$CGNN" embed --task_config_uri="pt_$n.yaml" --out "out/pt_$n.npy"
done
[[ ! -e PWNED ]] && ok || bad "the pickle's os.system ran"

# ---- 3. ranks that disagree (MPI builds) ----
if command -v mpirun > /dev/null && "$CGNN" --version | grep -q "distributed: MPI"; then
  # OpenMPI's own allocations are not freed when a job ends in MPI_Abort (as every MPI test)
  saved_asan=${ASAN_OPTIONS:-}
  [[ ${CGNN_TEST_SANITIZED:-0} == 1 ]] && export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0"
  task rank0.yaml cora; task rank1.yaml cora
  sed -i 's/hidden_dim: "16"/hidden_dim: "32"/; s#out/rank1#out/rank0#' rank1.yaml
  expect 2 "ranks: another hidden_dim" "trainerArgs.hidden_dim" "rank 0 has 16, rank 1 has 32" -- \
    mpirun --oversubscribe --bind-to none --allow-run-as-root -np 1 "$CGNN" train --job_name=r --task_config_uri=rank0.yaml \
      : -np 1 "$CGNN" train --job_name=r --task_config_uri=rank1.yaml
  mkdir -p cora_f && cp cora/*.npy cora/metadata.yaml cora_f/
  npy "a = np.load('cora_f/node-feat.npy'); np.save('cora_f/node-feat.npy', a[:, :1000])"
  task rank2.yaml cora_f; sed -i 's#out/rank2#out/rank0#' rank2.yaml
  expect 2 "ranks: another feature width" "input channels" "rank 0 has 1433, rank 1 has 1000" -- \
    mpirun --oversubscribe --bind-to none --allow-run-as-root -np 1 "$CGNN" train --job_name=r --task_config_uri=rank0.yaml \
      : -np 1 "$CGNN" train --job_name=r --task_config_uri=rank2.yaml
  # same shapes, other values (every feature doubled): the sampled rows' CRC differs
  mkdir -p cora_v && cp cora/*.npy cora/metadata.yaml cora_v/
  npy "a = np.load('cora_v/node-feat.npy'); np.save('cora_v/node-feat.npy', a * 2)"
  task rank4.yaml cora_v; sed -i 's#out/rank4#out/rank0#' rank4.yaml
  expect 2 "ranks: same shapes, other feature values" "the node features' values" -- \
    mpirun --oversubscribe --bind-to none --allow-run-as-root -np 1 "$CGNN" train --job_name=r --task_config_uri=rank0.yaml \
      : -np 1 "$CGNN" train --job_name=r --task_config_uri=rank4.yaml
  task rank3.yaml cora; sed -i 's/num_epochs: "2"/num_epochs: "3"/; s#out/rank3#out/rank0#' rank3.yaml
  expect 2 "ranks: another num_epochs" "trainerArgs.num_epochs" -- \
    mpirun --oversubscribe --bind-to none --allow-run-as-root -np 1 "$CGNN" train --job_name=r --task_config_uri=rank0.yaml \
      : -np 1 "$CGNN" train --job_name=r --task_config_uri=rank3.yaml
  export ASAN_OPTIONS=$saved_asan
else
  echo "note: ranks-disagree cases need an MPI build with mpirun (not counted)"
fi

# ---- 4. outputs that alias inputs ----
task a1.yaml cora; sed -i 's#out/a1/model.safetensors#cora/edges.npy#' a1.yaml
expect 2 "trainedModelUri = the edge file" "a1.yaml: sharedConfig.trainedModelMetadata.trainedModelUri" "edges" -- train a1.yaml
task a2.yaml cora; sed -i 's#out/a2/eval_metrics.json#cora/metadata.yaml#' a2.yaml
expect 2 "evalMetricsUri = metadata.yaml" "evalMetricsUri" "metadata.yaml" -- train a2.yaml
task a3.yaml cora; sed -i 's#out/a3/model.safetensors#a3.yaml#' a3.yaml
expect 2 "trainedModelUri = the task config" "trainedModelUri" "the task config" -- train a3.yaml
task a4.yaml cora; sed -i 's#out/a4/tb/#cora#' a4.yaml
expect 2 "tensorboardLogsUri = the dataset dir" "tensorboardLogsUri" "did not fill" -- train a4.yaml
task a5.yaml cora; sed -i 's#out/a5/model.safetensors#./cora/../cora/nc-train-seeds.npy#' a5.yaml
expect 2 "trainedModelUri = a split file by another path" "trainedModelUri" "split file" -- train a5.yaml
expect 2 "embed --out = the features" "embed --out" "feature" -- "$CGNN" embed --task_config_uri=ok.yaml --out cora/node-feat.npy
expect 2 "embed --out = the checkpoint" "embed --out" "checkpoint" -- "$CGNN" embed --task_config_uri=ok.yaml --out out/ok/model.safetensors
expect 2 "generate --out into a dataset" "--out cora" "not empty" -- "$CGNN" generate --out cora --nodes 100
expect 2 "generate --out onto a file" "not a directory" -- "$CGNN" generate --out ok.yaml --nodes 100

# ---- 5. non-regular files: FIFOs never block, devices are refused ----
for f in metadata.yaml node-feat.npy nc-train-seeds.npy; do
  rm -rf fifo && mkdir fifo && cp cora/*.npy cora/metadata.yaml fifo/ && rm fifo/$f && mkfifo fifo/$f
  task fifo.yaml fifo
  expect 2 "FIFO as $f" "fifo/$f" "FIFO" -- train fifo.yaml
done
mkfifo fifo_task.yaml
expect 2 "FIFO as the task config" "fifo_task.yaml" "FIFO" -- "$CGNN" train --job_name=x --task_config_uri=fifo_task.yaml
mkdir -p csv && cp cora/*.npy cora/metadata.yaml csv/ && rm csv/edges.npy && ln -s /dev/zero csv/edges.csv
sed -i 's/format: numpy\n      path: edges.npy/X/' csv/metadata.yaml
"$PY" -c "
import sys; t = open('csv/metadata.yaml').read()
t = t.replace('    - format: numpy\n      path: edges.npy', '    - format: csv\n      path: edges.csv')
open('csv/metadata.yaml', 'w').write(t)"
task csv.yaml csv
expect 2 "/dev/zero as CSV edges" "csv/edges.csv" "character device" -- train csv.yaml
rm csv/edges.csv && mkfifo csv/edges.csv
expect 2 "FIFO as CSV edges" "csv/edges.csv" "FIFO" -- train csv.yaml

# ---- 6. small input, unbounded memory: an alias bomb of long scalars ----
mkdir -p bomb && cp cora/*.npy cora/metadata.yaml bomb/
"$PY" - bomb/metadata.yaml <<'PY'
import sys
s = "x" * 60000
refs = ", ".join(["*s"] * 2000)
open(sys.argv[1], "w").write("dataset_name: &s " + s + "\nextra: [" + refs + "]\n")
PY
task bomb.yaml bomb
# (the address-space cap proves the budget holds; ASan reserves terabytes of shadow address
# space, so the sanitized run relies on the budget alone)
expect 2 "YAML alias bomb in metadata.yaml" "bomb/metadata.yaml" "too many nodes or bytes" -- \
  bash -c '[[ ${CGNN_TEST_SANITIZED:-0} == 1 ]] || ulimit -v 4000000; exec "$0" train --job_name=x --task_config_uri=bomb.yaml' "$CGNN"

# ---- 7. non-finite features ----
mkdir -p nan && cp cora/*.npy cora/metadata.yaml nan/
npy "a = np.load('nan/node-feat.npy').astype(np.float32); a[17, 42] = np.nan; np.save('nan/node-feat.npy', a)"
task nan.yaml nan
expect 2 "NaN feature" "nan/node-feat.npy: row 17, column 42" "NaN" -- train nan.yaml
npy "a = np.load('nan/node-feat.npy').astype(np.float16); a[17, 42] = 0; a[5, 3] = -np.inf; np.save('nan/node-feat.npy', a)"
expect 2 "-Inf float16 feature" "nan/node-feat.npy: row 5, column 3" "-Inf" -- train nan.yaml

# ---- 8. write errors are never ignored ----
task full.yaml cora
mkdir -p out/full/tb && ln -s /dev/full out/full/tb/metrics.jsonl
expect 1 "metrics.jsonl on a full disk" "metrics.jsonl" "No space left" -- train full.yaml
rm -rf out/full

# ---- 9. concurrent runs with the same outputs ----
task long.yaml cora 'val_every_num_batches: "1"'
sed -i 's/num_epochs: "2"/num_epochs: "400"/' long.yaml
"$CGNN" train --job_name=long --task_config_uri=long.yaml > "$TMP/long.log" 2>&1 &
first=$!
for _ in $(seq 100); do [[ -e out/long/model.safetensors.lock ]] && break; sleep 0.1; done
expect 2 "a second job on the same outputs" "in use by another cgnn job" "pid $first" -- train long.yaml
kill -TERM $first; wait $first 2>/dev/null
# ---- 12. signals: SIGTERM leaves no partial file and no lock ----
[[ -z $(find out/long -name '*.tmp.*' -o -name '*.lock') ]] && ok || bad "SIGTERM left $(find out/long -name '*.tmp.*' -o -name '*.lock')"
grep -q "Terminated: stopped" "$TMP/long.log" && ok || bad "SIGTERM: no message ($(tail -2 "$TMP/long.log"))"
# a temporary file of a killed run (dead pid) is removed by the next run on the same output
"$PY" -c "open('out/ok/model.safetensors.tmp.999999999', 'w').write('partial')"
expect 0 "stale temporary file" "removed 1 temporary file" -- train ok.yaml
[[ ! -e out/ok/model.safetensors.tmp.999999999 ]] && ok || bad "stale temporary file still there"
# an interrupted generate leaves no half-made dataset
"$CGNN" generate --out gen --nodes 3000000 > "$TMP/gen.log" 2>&1 &
g=$!
sleep 1; kill -TERM $g; wait $g 2>/dev/null
left=$(ls -d gen gen.tmp.* 2>/dev/null)
[[ -z $left ]] && ok || bad "interrupted generate left $left"

# ---- 10. empty splits and degenerate values ----
mkdir -p empty && cp cora/*.npy cora/metadata.yaml empty/
npy "np.save('empty/nc-train-seeds.npy', np.zeros(0, np.int64)); np.save('empty/nc-train-labels.npy', np.zeros(0, np.int64))"
task empty.yaml empty
expect 2 "empty train split" "empty/nc-train-seeds.npy" "train_set is empty" -- train empty.yaml
cp cora/nc-train-* empty/
npy "np.save('empty/nc-test-seeds.npy', np.zeros(0, np.int64)); np.save('empty/nc-test-labels.npy', np.zeros(0, np.int64))"
expect 2 "empty test split" "empty/nc-test-seeds.npy" "test_set is empty" -- train empty.yaml
task temp.yaml cora 'softmax_temp: "1e-300"'
sed -i 's/nodeBasedTaskMetadata: {supervisionNodeTypes: \[paper\]}/nodeAnchorBasedLinkPredictionTaskMetadata: {}/' temp.yaml
expect 2 "softmax_temp 1e-300 (0 as a float)" "softmax_temp" "too small for float32" -- train temp.yaml
task lr.yaml cora 'optim_lr: "1e39"'
expect 2 "optim_lr 1e39 (inf as a float)" "optim_lr" "too large for float32" -- train lr.yaml

# ---- 11. the right file blamed ----
mkdir -p classes && cp cora/*.npy cora/metadata.yaml classes/
sed -i 's/num_classes: 7/num_classes: 4000000000/' classes/metadata.yaml
task classes.yaml classes
expect 2 "huge num_classes" "classes/metadata.yaml" "num_classes" -- train classes.yaml
mkdir -p nofeat && cp cora/*.npy cora/metadata.yaml nofeat/
npy "np.save('nofeat/node-feat.npy', np.zeros((2708, 0), np.float32))"
task nofeat.yaml nofeat
expect 2 "(2708, 0) features" "nofeat/node-feat.npy" "0 columns" -- train nofeat.yaml
# a label far past any class count, no num_classes: the labels file and row, not trainerArgs
mkdir -p biglabel && cp cora/*.npy cora/metadata.yaml biglabel/
sed -i '/num_classes/d' biglabel/metadata.yaml
npy "a = np.load('biglabel/nc-train-labels.npy'); a[3] = 2**40; np.save('biglabel/nc-train-labels.npy', a)"
task biglabel.yaml biglabel
expect 2 "label 2^40 without num_classes" "biglabel/nc-train-labels.npy: row 3: label 1099511627776" -- train biglabel.yaml
grep -q "trainerArgs" "$TMP/out.log" && bad "label 2^40: blamed trainerArgs: $(tail -1 "$TMP/out.log")" || ok
# a model larger than the machine: trainerArgs.hidden_dim named, before anything is allocated
task hugehidden.yaml cora # 3 layers: a 2^20 x 2^20 weight, 4 TiB
sed -i 's/hidden_dim: "16"/hidden_dim: "1048576"/; s/num_layers: "2"/num_layers: "3"/; s/num_neighbors: "\[5, 5\]"/num_neighbors: "[5, 5, 5]"/' hugehidden.yaml
expect 2 "hidden_dim past the machine's memory" "hugehidden.yaml: trainerConfig.trainerArgs: hidden_dim" \
  "more than this machine's" -- train hugehidden.yaml
grep -q "num_classes" "$TMP/out.log" && bad "hidden_dim: blamed num_classes: $(tail -1 "$TMP/out.log")" || ok
task missing.yaml no_such_dataset
expect 2 "missing dataset" "missing.yaml: sharedConfig.preprocessedMetadataUri" "no_such_dataset" -- train missing.yaml

# ---- 13. link prediction groups ----
mkdir -p lp && "$PY" - lp <<'PY'
import numpy as np, sys, os
d = sys.argv[1]
np.save(os.path.join(d, "edges.npy"), np.array([[0, 1, 2, 3], [1, 2, 3, 0]], np.int64))
np.save(os.path.join(d, "train.npy"), np.array([[0, 1], [1, 2]], np.int64))
np.save(os.path.join(d, "test.npy"), np.array([[0, 1], [2, 3]], np.int64))   # two positives, different anchors
np.save(os.path.join(d, "test-labels.npy"), np.array([1, 1], np.int64))
np.save(os.path.join(d, "test-indexes.npy"), np.array([7, 7], np.int64))      # ... in one group
open(os.path.join(d, "metadata.yaml"), "w").write("""graph:
  nodes: [{num: 4}]
  edges: [{format: numpy, path: edges.npy}]
tasks:
  - name: link_prediction
    train_set: [{data: [{name: seeds, format: numpy, path: train.npy}]}]
    test_set:
      - data: [{name: seeds, format: numpy, path: test.npy}, {name: labels, format: numpy, path: test-labels.npy},
               {name: indexes, format: numpy, path: test-indexes.npy}]
""")
PY
expect 2 "LP: positives of different anchors in one index group" "lp/test-indexes.npy: rows 0 and 1 share index 7" \
  "different anchors" -- "$CGNN" info lp

# ---- 14. typed (heterogeneous) datasets ----
# typed CASE 'PYTHON EDIT': a fresh copy of data/dblp-mini in CASE/ with metadata.yaml edited (t: its text)
typed() {
  rm -rf "$1" && cp -r "$SRC/data/dblp-mini" "$1"
  "$PY" -c "import sys; p = sys.argv[1] + '/metadata.yaml'; t = open(p).read(); $2; open(p, 'w').write(t)" "$1"
}
typed ty_undeclared "t = t.replace('author:writes:paper', 'author:writes:book', 1)"
expect 2 "typed: edge type naming an undeclared node type" "ty_undeclared/metadata.yaml: graph.edges[0].type" \
  "dst node type 'book' is not declared" -- "$CGNN" info ty_undeclared
typed ty_malformed "t = t.replace('\"author:writes:paper\"', 'author-writes-paper', 1)"
expect 2 "typed: malformed edge type" "ty_malformed/metadata.yaml: graph.edges[0].type" \
  "is not \"src:relation:dst\"" -- "$CGNN" info ty_malformed
typed ty_src "pass"
npy "e = np.load('ty_src/edges-author-writes-paper.npy'); e[0, 5] = 600; np.save('ty_src/edges-author-writes-paper.npy', e)"
expect 2 "typed: src id out of its type's range" "ty_src/edges-author-writes-paper.npy: column 5: src id 600 out of range [0, 600)" \
  "node type 'author'" "edge type 'author:writes:paper'" -- "$CGNN" info ty_src
typed ty_dst "pass"
npy "e = np.load('ty_dst/edges-author-writes-paper.npy'); e[1, 7] = 2881; np.save('ty_dst/edges-author-writes-paper.npy', e)"
expect 2 "typed: dst id out of its type's range" "ty_dst/edges-author-writes-paper.npy: column 7: dst id 2881 out of range [0, 2881)" \
  "node type 'paper'" -- "$CGNN" info ty_dst
typed ty_rows "pass"
npy "a = np.load('ty_rows/feat-term.npy'); np.save('ty_rows/feat-term.npy', a[:100])"
expect 2 "typed: node features with another type's row count" "ty_rows/feat-term.npy" "has 100 rows, expected 3239" \
  "node type 'term'" -- "$CGNN" info ty_rows
typed ty_task "t = t.replace('      - type: author', '      - type: authors', 1)"
expect 2 "typed: task set naming an unknown type" "ty_task/metadata.yaml: tasks[0].train_set[0].type" \
  "task 'node_classification', train_set: unknown type 'authors'" -- "$CGNN" info ty_task
typed ty_mixed "t = t.replace('    - type: venue\n      num: 20', '    - num: 20', 1)"
expect 2 "typed: typed and untyped node entries mixed" "ty_mixed/metadata.yaml: graph.nodes[3]" "cannot be mixed" -- \
  "$CGNN" info ty_mixed
typed ty_dup "t = t.replace('    - type: venue\n', '    - type: term\n', 1)"
expect 2 "typed: duplicate node type" "ty_dup/metadata.yaml: graph.nodes[3].type" "duplicate node type 'term'" -- \
  "$CGNN" info ty_dup
typed ty_part "t = t.replace('graph:', 'partition: {id: ab, part: 0, num_parts: 1, node_start: 0, node_end: 600, graph: g.json}\ngraph:', 1)"
expect 2 "typed: a typed part with an untyped node range" "ty_part/metadata.yaml: partition.node_start" \
  "a typed part gives one range per node type" -- "$CGNN" info ty_part

# node counts past int64 when summed over types (2^63 - 8 venues after 6720 other nodes): exit 2
# naming the file and the entry, before any size is computed (was signed overflow, or exit 1)
typed ty_sum "t = t.replace('    - type: venue\n      num: 20', '    - type: venue\n      num: 9223372036854775800', 1)"
expect 2 "typed: node counts summing past INT64_MAX (info)" "ty_sum/metadata.yaml: graph.nodes[3].num" \
  "more than cgnn accepts" -- "$CGNN" info ty_sum
sed -e "s#preprocessedMetadataUri: .*#preprocessedMetadataUri: ty_sum#" -e "s#out/[a-z_]*/#out/ty_sum/#g" \
  "$SRC/examples/dblp_hetero_sage.yaml" > ty_sum.yaml
expect 2 "typed: node counts summing past INT64_MAX (train)" "ty_sum/metadata.yaml: graph.nodes[3].num" -- \
  train ty_sum.yaml
# a count within bounds whose graph index is past the machine's memory: named, exit 2 (was exit 1)
typed ty_big "t = t.replace('    - type: venue\n      num: 20', '    - type: venue\n      num: 17592186044416', 1)"
expect 2 "typed: a node type whose index is past the machine's memory" "ty_big/metadata.yaml: graph.nodes[3].num" \
  "more than this machine's" -- "$CGNN" info ty_big

# GraphBolt's format: torch files (torch_save_read_npy): hostile or wrong tensors are exit 2 naming
# the file and the field, never a crash or a hang (GraphBolt's homograph tutorial, one file replaced)
gbcase() { # gbcase CASE FILE: a fresh copy of the tutorial in CASE/ whose FILE the caller replaces
  rm -rf "$1" && cp -r "$SRC/tests/fixtures/graphbolt/homograph" "$1" && rm -f "$1/$2"
}
gbcase gb_trunc node-feat-1.pt && head -c 600 "$SRC/tests/fixtures/graphbolt/homograph/node-feat-1.pt" > gb_trunc/node-feat-1.pt
expect 2 "format: torch: a truncated tensor file" "gb_trunc/node-feat-1.pt" "feature_data[1].path in" -- \
  "$CGNN" info gb_trunc
gbcase gb_evil nc-train-labels.pt && cp "$SRC/tests/fixtures/torch_save/evil.pt" gb_evil/nc-train-labels.pt
expect 2 "format: torch: a pickle that calls os.system" "gb_evil/nc-train-labels.pt" "is not allowed" \
  "tasks[0].train_set[0].data[1].path in" -- "$CGNN" info gb_evil
gbcase gb_view node-feat-1.pt && cp "$SRC/tests/fixtures/graphbolt/tensors/transposed.pt" gb_view/node-feat-1.pt
expect 2 "format: torch: a transposed view" "gb_view/node-feat-1.pt" "strides are not C order" -- "$CGNN" info gb_view
gbcase gb_dict node-feat-1.pt && cp "$SRC/tests/fixtures/torch_save/linear.pt" gb_dict/node-feat-1.pt
expect 2 "format: torch: a state_dict, not a tensor" "gb_dict/node-feat-1.pt" "holds a dict" -- "$CGNN" info gb_dict
gbcase gb_zero node-feat-1.pt && ln -s /dev/zero gb_zero/node-feat-1.pt
expect 2 "format: torch: /dev/zero" "gb_zero/node-feat-1.pt" -- "$CGNN" info gb_zero
gbcase gb_fifo nc-val-labels.pt && mkfifo gb_fifo/nc-val-labels.pt
expect 2 "format: torch: a FIFO (no hang)" "gb_fifo/nc-val-labels.pt" -- "$CGNN" info gb_fifo
gbcase gb_shape nc-train-labels.pt && cp "$SRC/tests/fixtures/graphbolt/tensors/int64.pt" gb_shape/nc-train-labels.pt
expect 2 "format: torch: labels of the wrong shape" "gb_shape/nc-train-labels.pt" "expected shape (24,), got (3, 2)" -- \
  "$CGNN" info gb_shape

echo "test_hostile: $pass passed, $fails failed"
[[ $fails -eq 0 ]]
