#!/usr/bin/env bash
# test_outputs_guard.sh CGNN — every file cgnn creates, truncates, renames or deletes is checked
# against every input of the job, on every rank, before anything is touched (io/outguard.h).
# One case per way an output used to destroy an input or an earlier result; each asserts exit 2
# (or, for logs, exit 0 and what is kept), the message naming the field and the input, and that
# every input is byte-identical afterwards:
#   - an output naming a file of ANOTHER rank's part (worker mode, and server-client mode where
#     only a storage rank holds the part);
#   - "<output>.lock" that is a dataset feature file (train, and cgnn partition), the task
#     config, or the checkpoint cgnn embed loads;
#   - an input named like a stale temporary file of an output ("<output>.tmp.<dead pid>");
#   - the profiler's trace_rank<R>.json being the task config;
#   - tensorboardLogsUri equal to trainedModelUri (exit 2 before training, not 1 at the first
#     checkpoint);
#   - an evaluation-only run, and another job, logging into the same tensorboardLogsUri: the
#     earlier event file and metrics.jsonl records are kept (a new event file, appended records).
set -u
CGNN=$(realpath "${1:?usage: test_outputs_guard.sh path/to/cgnn}")
SRC=${CGNN_SOURCE_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
TMP=$(mktemp -d /tmp/cgnn-outguard-XXXXXX)
trap 'rm -rf "$TMP"' EXIT
cd "$TMP" || exit 1
fails=0
pass=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }

# hashes of every file under the work dir except outputs (out/) and caches
snapshot() { find . -path ./out -prune -o -name '*.sum' -prune -o -name '*.log' -prune \
  -o -type f -print0 | sort -z | xargs -0 sha256sum 2>/dev/null; }
# expect CODE DESC TEXT... -- command: exit code, every TEXT in the output, no input changed
expect() {
  local want=$1 desc=$2; shift 2
  local texts=()
  while [[ $1 != -- ]]; do texts+=("$1"); shift; done
  shift
  snapshot > before.sum
  timeout -k 10 300 "$@" > case.log 2>&1
  local got=$?
  snapshot > after.sum
  if [[ $got -ne $want ]]; then bad "$desc: exit $got, want $want"; sed 's/^/    /' case.log | tail -5; return; fi
  for t in "${texts[@]}"; do
    if ! grep -qF -- "$t" case.log; then bad "$desc: message lacks '$t'"; sed 's/^/    /' case.log | tail -3; return; fi
  done
  if ! cmp -s before.sum after.sum; then bad "$desc: an input changed"; diff before.sum after.sum | head -5; return; fi
  ok
}

cp -r "$SRC/data/cora" cora
# task FILE DATASET MODEL [extra top-level YAML lines...]: outputs under out/<FILE>/ unless MODEL says
task() {
  local f=$1 ds=$2 model=$3; shift 3
  local n=${f##*/}; n=${n%.yaml}
  cat > "$f" <<EOF
taskMetadata: {nodeBasedTaskMetadata: {supervisionNodeTypes: [paper]}}
sharedConfig:
  preprocessedMetadataUri: $ds
  trainedModelMetadata:
    trainedModelUri: $model
    evalMetricsUri: out/$n/eval_metrics.json
    tensorboardLogsUri: out/$n/tb/
trainerConfig:
  trainerArgs:
    num_layers: "2"
    hidden_dim: "16"
    num_neighbors: "[5, 5]"
    main_sample_batch_size: "70"
    num_epochs: "1"
    train_main_num_workers: "1"
EOF
  for l in "$@"; do echo "$l" >> "$f"; done
}
TRAIN=("$CGNN" train --job_name=guard)

# ---- the lock file "<output>.lock" is an input ----
# a dataset whose feature file is named m.lock: trainedModelUri m would lock (truncate) it
cp -r cora lockds && mv lockds/node-feat.npy lockds/m.lock && sed -i 's#node-feat.npy#m.lock#' lockds/metadata.yaml
task lock.yaml lockds lockds/m
expect 2 "train: the model's lock is a feature file" "trainedModelUri" "lock file" "lockds/m.lock" -- "${TRAIN[@]}" --task_config_uri=lock.yaml
expect 2 "partition: --out's lock is a feature file" "--out" "lockds/m.lock" -- \
  "$CGNN" partition --dataset lockds --num_parts 2 --method random --out lockds/m
# the task config is the lock of the metrics file
mkdir -p out/cfg
task out/cfg/eval_metrics.json.lock cora out/cfg/model.safetensors
sed -i 's#evalMetricsUri: .*#evalMetricsUri: out/cfg/eval_metrics.json#' out/cfg/eval_metrics.json.lock
cp out/cfg/eval_metrics.json.lock cfg.copy
"$CGNN" train --job_name=guard --task_config_uri=out/cfg/eval_metrics.json.lock > cfg.log 2>&1
rc=$?
[[ $rc -eq 2 ]] && grep -q "the task config" cfg.log && cmp -s cfg.copy out/cfg/eval_metrics.json.lock && ok \
  || bad "train: the metrics file's lock is the task config: exit $rc, $(tail -2 cfg.log)"

# ---- a good run, then cgnn embed whose --out lock is the checkpoint it loads ----
task good.yaml cora out/good/m.lock
expect 0 "a good run (checkpoint named m.lock)" -- "${TRAIN[@]}" --task_config_uri=good.yaml
expect 2 "embed: --out's lock is the checkpoint" "embed --out" "the checkpoint" -- \
  "$CGNN" embed --quiet --task_config_uri=good.yaml --out out/good/m
[[ -s out/good/m.lock ]] && ok || bad "embed removed the checkpoint out/good/m.lock"

# ---- an input named like a stale temporary file of an output (a dead pid) ----
mkdir -p out/stale
task out/stale/model.safetensors.tmp.4194999 cora out/stale/model.safetensors
expect 2 "train: the task config looks like a stale temporary file of the model" "temporary file" "the task config" -- \
  "${TRAIN[@]}" --task_config_uri=out/stale/model.safetensors.tmp.4194999
[[ -s out/stale/model.safetensors.tmp.4194999 ]] && ok || bad "the task config named like a stale temporary file was removed"

# ---- the profiler's trace_rank0.json is the task config ----
mkdir -p prof
task prof/trace_rank0.json cora out/prof/model.safetensors "profilerConfig: {shouldEnableProfiler: true, profilerLogDir: prof}"
expect 2 "train: the trace file is the task config" "profilerConfig.profilerLogDir" "the task config" -- \
  "${TRAIN[@]}" --task_config_uri=prof/trace_rank0.json

# ---- tensorboardLogsUri equal to trainedModelUri: exit 2 before training ----
task same.yaml cora out/same/x
sed -i 's#tensorboardLogsUri: .*#tensorboardLogsUri: out/same/x#' same.yaml
expect 2 "train: tensorboardLogsUri is trainedModelUri" "tensorboardLogsUri" "trainedModelUri" -- "${TRAIN[@]}" --task_config_uri=same.yaml
grep -q "trained [0-9]* step\|step 1" case.log && bad "tensorboardLogsUri = trainedModelUri trained before failing" || ok

# ---- logs are kept: an evaluation-only run and another job in the same tensorboardLogsUri ----
task logs.yaml cora out/logs/model.safetensors
expect 0 "a training run" -- "${TRAIN[@]}" --task_config_uri=logs.yaml
ev1=(out/logs/tb/events.out.tfevents.*)
cp "${ev1[0]}" ev1.copy
cp out/logs/tb/metrics.jsonl jsonl1.copy
sed 's/^  shouldSkipTraining: .*//; s#trainedModelMetadata:#shouldSkipTraining: true\n  trainedModelMetadata:#' logs.yaml \
  | sed 's#evalMetricsUri: .*#evalMetricsUri: out/logs/eval_only.json#' > evalonly.yaml
expect 0 "an evaluation-only run into the same logs" -- "${TRAIN[@]}" --task_config_uri=evalonly.yaml
cmp -s ev1.copy "${ev1[0]}" && ok || bad "the evaluation-only run changed or removed the training run's event file"
n=$(ls out/logs/tb/events.out.tfevents.* | wc -l)
[[ $n -eq 2 ]] && ok || bad "expected the training run's and the evaluation run's event files, got $n"
head -c "$(stat -c %s jsonl1.copy)" out/logs/tb/metrics.jsonl | cmp -s - jsonl1.copy && ok \
  || bad "the evaluation-only run rewrote the training run's metrics.jsonl records"
[[ $(grep -c '"run": "guard"' out/logs/tb/metrics.jsonl) -eq 2 ]] && grep -q '"mode": "evaluate"' out/logs/tb/metrics.jsonl \
  && ok || bad "metrics.jsonl lacks one run record per run: $(grep '"run"' out/logs/tb/metrics.jsonl)"
grep -q '"test_acc"' out/logs/tb/metrics.jsonl && ok || bad "the evaluation run logged no test record"
# another training job with its own model but the same logs
task other.yaml cora out/other/model.safetensors
sed -i 's#tensorboardLogsUri: .*#tensorboardLogsUri: out/logs/tb/#' other.yaml
expect 0 "another job logging into the same directory" -- "${TRAIN[@]}" --task_config_uri=other.yaml
cmp -s ev1.copy "${ev1[0]}" && [[ $(ls out/logs/tb/events.out.tfevents.* | wc -l) -eq 3 ]] && ok \
  || bad "another job removed or changed earlier event files"
# a retry of the first job: its own results are replaced, the logs kept
cp out/logs/model.safetensors model1.copy
expect 0 "a retry of the training job" "removed the previous results of this job's outputs" -- "${TRAIN[@]}" --task_config_uri=logs.yaml
cmp -s ev1.copy "${ev1[0]}" && ok || bad "a retry removed the logs"

# ---- every rank: an output naming a file of another rank's part ----
if ! "$CGNN" --version | grep -q "distributed: MPI"; then
  echo "SKIP (mpirun part): serial build (CGNN_WITH_MPI=OFF)"
elif ! command -v mpirun >/dev/null; then
  echo "SKIP (mpirun part): mpirun not installed (openmpi-bin)"
else
  MPIRUN=(mpirun --oversubscribe --bind-to none)
  [[ $(id -u) -eq 0 ]] && MPIRUN+=(--allow-run-as-root)
  export OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none
  [[ ${CGNN_TEST_SANITIZED:-0} == 1 ]] && export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0"
  "$CGNN" partition --dataset cora --num_parts 2 --method random --out p2 > part.log 2>&1 || bad "partition: $(tail -2 part.log)"
  p1feat=$(ls p2/part1/*.npy | head -1)
  task part.yaml p2 out/part/model.safetensors
  sed -i "s#evalMetricsUri: .*#evalMetricsUri: $p1feat#" part.yaml
  expect 2 "worker mode: evalMetricsUri is a file of rank 1's part" "rank 1" "evalMetricsUri" "$p1feat" -- \
    "${MPIRUN[@]}" -np 2 "$CGNN" train --job_name=guard --task_config_uri=part.yaml
  [[ ! -e out/part/model.safetensors ]] && ok || bad "worker mode: a refused job wrote the model"
  task partm.yaml p2 p2/part1/metadata.yaml
  expect 2 "worker mode: trainedModelUri is rank 1's part metadata" "rank 1" "trainedModelUri" -- \
    "${MPIRUN[@]}" -np 2 "$CGNN" train --job_name=guard --task_config_uri=partm.yaml
  # server-client: 1 storage rank (both parts) + 1 compute rank: only the storage rank holds p2/part1
  printf 'trainer_resource_config:\n  vertex_ai_graph_store_trainer_config:\n    graph_store_pool:\n      num_replicas: 1\n    compute_pool:\n      num_replicas: 1\n' > gs11.yaml
  expect 2 "server-client: evalMetricsUri is a file the storage rank holds" "storage" "evalMetricsUri" "$p1feat" -- \
    "${MPIRUN[@]}" -np 2 "$CGNN" train --job_name=guard --task_config_uri=part.yaml --resource_config_uri=gs11.yaml
fi

echo "test_outputs_guard: $pass passed, $fails failed"
[[ $fails -eq 0 ]]
