#!/usr/bin/env bash
# test_resume.sh CGNN — exact resume after a crash (trainerArgs.checkpoint_every_n_batches):
#   - Cora node classification (GraphSAGE, Adam, StepLR, validation every 3 steps on a shuffled
#     subset, early stopping) and Facebook link prediction with a learnable embedding table
#     (SparseAdam, CosineAnnealingLR, random negatives, exclude_seed_edges): a run killed again
#     and again — at random steps (the CGNN_TEST_EXIT_AT_STEP hook), half way through writing a
#     state file (CGNN_TEST_EXIT_IN_CHECKPOINT), and by a real kill -9 at a random moment — and
#     started again with the same command until it finishes, ends with model.safetensors and
#     eval_metrics.json byte-identical to those of a run never interrupted; metrics.jsonl and the
#     TensorBoard event file hold the same records (timings aside), no step twice;
#   - the same under mpirun -np 2 with an uneven split (one rank joins the last batch of every
#     epoch with no gradient);
#   - a state from another config (hidden_dim), dataset or world size is refused with exit 2 and
#     a message naming the state file and the field, before any output is touched (the state,
#     the last good checkpoint and the logs stay as they were); the state file is
#     removed when the run finishes; no temporary file is left behind.
# The random steps and delays come from RANDOM seeded with CGNN_TEST_SEED (printed), so a failure
# can be replayed.
set -u
CGNN=${1:?usage: test_resume.sh path/to/cgnn}
[[ $CGNN == */* ]] && CGNN=$(cd "$(dirname "$CGNN")" && pwd)/$(basename "$CGNN")
SRC=${CGNN_SOURCE_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
PY=/usr/bin/python3
if [[ ! -x $PY ]]; then echo "SKIP: /usr/bin/python3 is needed to compare the logs"; exit 77; fi
TMP=$(mktemp -d /tmp/cgnn-resume-XXXXXX)
trap 'rm -rf "$TMP"' EXIT
cd "$SRC"
fails=0
pass=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }
SANITIZED=${CGNN_TEST_SANITIZED:-0}
SEED=${CGNN_TEST_SEED:-$(( $(date +%s) % 100000 ))}
RANDOM=$SEED
echo "test_resume: random seed $SEED (CGNN_TEST_SEED=$SEED replays it)"
printf 'trainer_resource_config:\n  local_trainer_config: {num_workers: 2}\n' > "$TMP/resource.yaml"

MPIRUN=()
if "$CGNN" --version | grep -q "distributed: MPI" && command -v mpirun >/dev/null; then
  MPIRUN=(mpirun --oversubscribe --bind-to none)
  [[ $(id -u) -eq 0 ]] && MPIRUN+=(--allow-run-as-root)
  export OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none
  # OpenMPI keeps allocations alive past MPI_Finalize by design; LeakSanitizer would report them
  [[ $SANITIZED == 1 ]] && export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0"
fi

# ---- configs ----
# Cora: batch 32 -> 5 steps per epoch (the last one partial), 12 epochs = 60 steps; validation
# every 3 steps on 2 shuffled batches, early stopping, StepLR; a state every 2 steps.
NC_EPOCHS=12
[[ $SANITIZED == 1 ]] && NC_EPOCHS=5
nc_config() { # nc_config NAME [sed expressions...]
  local name=$1
  shift
  sed -e "s#out/[a-z_]*/#$TMP/$name/#g" -e 's/main_sample_batch_size: "140"/main_sample_batch_size: "32"/' \
    -e "s/num_epochs: \"200\"/num_epochs: \"$NC_EPOCHS\"/" -e 's/val_every_num_batches: "0"/val_every_num_batches: "3"/' \
    -e 's/num_val_batches: "0"/num_val_batches: "2"/' \
    -e 's/early_stop_patience: "20"/early_stop_patience: "4"\n    lr_scheduler_name: StepLR\n    lr_scheduler_step_size: "7"\n    lr_scheduler_gamma: "0.7"\n    checkpoint_every_n_batches: "2"/' \
    "$@" examples/cora_graphsage.yaml > "$TMP/$name.yaml"
}
# Facebook link prediction with a 16-column learnable embedding table: batch 128, 40 steps,
# validation every 7 steps, a state every 3 steps.
LP_STEPS=40
[[ $SANITIZED == 1 ]] && LP_STEPS=16
lp_config() { # lp_config NAME [sed expressions...]
  local name=$1
  shift
  sed -e "s#out/[a-z_]*/#$TMP/$name/#g" -e 's/main_sample_batch_size: "512"/main_sample_batch_size: "128"/' \
    -e 's/random_negative_sample_batch_size: "512"/random_negative_sample_batch_size: "128"/' \
    -e "s/num_epochs: \"4\"/num_epochs: \"2\"\n    num_max_train_batches: \"$LP_STEPS\"\n    node_embedding_dim: \"16\"\n    lr_scheduler_name: CosineAnnealingLR\n    lr_scheduler_t_max: \"30\"\n    checkpoint_every_n_batches: \"3\"/" \
    -e 's/val_every_num_batches: "0"/val_every_num_batches: "7"/' \
    -e 's/num_val_batches: "0"/num_val_batches: "2"\n    num_test_batches: "3"/' \
    "$@" examples/facebook_lp_graphsage.yaml > "$TMP/$name.yaml"
}

# train NP NAME [VAR=value...] — cgnn train on $TMP/NAME.yaml (NP 0: one process, else mpirun
# -np NP), stdout/stderr appended to $TMP/NAME.log; returns cgnn's (or mpirun's) exit status.
train() {
  local np=$1 name=$2
  shift 2
  local cmd=("$CGNN" train --job_name="$name" --task_config_uri="$TMP/$name.yaml")
  [[ $np -eq 0 ]] && cmd+=(--resource_config_uri="file://$TMP/resource.yaml") || cmd=("${MPIRUN[@]}" -np "$np" "${cmd[@]}")
  echo "== $* ${cmd[*]}" >>"$TMP/$name.log"
  env "$@" timeout 300 "${cmd[@]}" >>"$TMP/$name.log" 2>&1
}

# cgnn_pids PID — the cgnn processes among PID's descendants (this test's own runs only; cgnn
# re-executes itself at start-up, so they are found by executable, not by name).
CGNN_EXE=$(readlink -f "$CGNN")
cgnn_pids() {
  local c
  for c in $(pgrep -P "$1"); do
    [[ $(readlink "/proc/$c/exe" 2>/dev/null) == "$CGNN_EXE" ]] && echo "$c"
    cgnn_pids "$c"
  done
}

# kill_train NP NAME STATES DELAY — starts the run and kill -9s it (one process: cgnn; under
# mpirun: a random rank, whose death makes mpirun end the others) DELAY seconds after it wrote
# STATES new state files (0: DELAY seconds after the start), unless it finished first. Returns 137
# when killed, else the run's exit status.
kill_train() {
  local np=$1 name=$2 states=$3 delay=$4
  train "$np" "$name" 2>/dev/null & # (bash's own "Killed" notice)
  local pid=$! state="$TMP/$name/model.safetensors.state" seen ino i
  seen=$(stat -c %i "$state" 2>/dev/null)
  for ((i = 0; states > 0 && i < 3000; i++)); do # a new state file is a new inode (rename)
    kill -0 "$pid" 2>/dev/null || break
    ino=$(stat -c %i "$state" 2>/dev/null)
    if [[ -n $ino && $ino != "$seen" ]]; then
      seen=$ino
      states=$((states - 1))
    fi
    sleep 0.005
  done
  sleep "$delay"
  local pids victim=""
  pids=($(cgnn_pids "$pid"))
  [[ ${#pids[@]} -gt 0 ]] && victim=${pids[$((RANDOM % ${#pids[@]}))]}
  if [[ -n $victim ]]; then
    echo "== kill -9 $victim after ${delay}s" >>"$TMP/$name.log"
    kill -9 "$victim" 2>/dev/null
  fi
  wait "$pid"
  local rc=$?
  [[ -n $victim && $rc -ne 0 ]] && return 137
  return $rc
}

# same_logs REF RUN — metrics.jsonl and the TensorBoard scalars of two runs: the same records in
# the same order, timings aside (seeds_per_s, *_ms, *_gflops, wall_time), and no step logged twice.
same_logs() {
  "$PY" - "$TMP/$1/tensorboard" "$TMP/$2/tensorboard" "$SRC/tests/read_tb_events.py" <<'PY'
import glob, json, subprocess, sys
def jsonl(d):
    recs = []
    for line in open(d + "/metrics.jsonl"):
        r = json.loads(line)
        recs.append({k: v for k, v in r.items() if k != "seeds_per_s" and not k.endswith(("_ms", "_gflops"))})
    return recs
def tb(d, reader):
    files = glob.glob(d + "/events.out.tfevents.*")
    assert len(files) == 1, "%s: %d event files" % (d, len(files))
    out = subprocess.run([sys.executable, reader, "--dump", files[0]], check=True, capture_output=True, text=True).stdout
    evs = []
    for line in out.splitlines():
        if not line.startswith("{"): continue
        e = json.loads(line)
        if e.get("values") is None: continue
        evs.append((e["step"], [(v["tag"], v["bits"]) for v in e["values"] if "seeds_per_s" not in v["tag"]]))
    return evs
ref, run = jsonl(sys.argv[1]), jsonl(sys.argv[2])
kinds = [(r["step"], tuple(sorted(r))) for r in run]
dup = len(kinds) - len(set(kinds))
assert dup == 0, "metrics.jsonl: %d records repeat a step" % dup
assert ref == run, "metrics.jsonl differs: %d vs %d records, first difference %s" % (
    len(ref), len(run), next(((a, b) for a, b in zip(ref, run) if a != b), "(one is a prefix)"))
a, b = tb(sys.argv[1], sys.argv[3]), tb(sys.argv[2], sys.argv[3])
assert a == b, "TensorBoard scalars differ: %d vs %d events, first difference %s" % (
    len(a), len(b), next(((x, y) for x, y in zip(a, b) if x != y), "(one is a prefix)"))
print("  logs: %d metrics.jsonl records, %d TensorBoard events, the same as the uninterrupted run's" % (len(run), len(b)))
PY
}

# check_same REF RUN WHAT — final outputs byte-identical, logs equivalent, nothing left behind.
check_same() {
  local ref=$1 run=$2 what=$3
  cmp -s "$TMP/$ref/model.safetensors" "$TMP/$run/model.safetensors" && ok || bad "$what: model.safetensors differs from the uninterrupted run's"
  cmp -s "$TMP/$ref/eval_metrics.json" "$TMP/$run/eval_metrics.json" && ok || bad "$what: eval_metrics.json differs: $(cat "$TMP/$run/eval_metrics.json" 2>&1)"
  same_logs "$ref" "$run" && ok || bad "$what: logs differ"
  [[ ! -e "$TMP/$run/model.safetensors.state" ]] && ok || bad "$what: the state file was not removed at the end"
  ls "$TMP/$run"/*.state.tmp.* >/dev/null 2>&1 && bad "$what: a temporary state file was left behind" || ok
}

# crash_and_finish NP NAME MAX_STEP WHAT — kills the run of NAME again and again, then lets it
# finish: hook exits at 2 (sanitized: 1) increasing random steps below MAX_STEP, one exit half way
# through a state write, kill -9s at random moments (not under sanitizers), then a plain run.
crash_and_finish() {
  local np=$1 name=$2 max=$3 what=$4 rc k=0 n
  local hooks=2 kills=2
  [[ $SANITIZED == 1 ]] && hooks=1 kills=0
  for ((n = 1; n <= hooks; n++)); do
    k=$((k + 1 + RANDOM % (max / (hooks + 1))))
    train "$np" "$name" CGNN_TEST_EXIT_AT_STEP=$k; rc=$?
    echo "  $what: exit at step $k -> status $rc"
    [[ $rc -ne 0 ]] && ok || bad "$what: the run with CGNN_TEST_EXIT_AT_STEP=$k was not interrupted"
  done
  n=$((1 + RANDOM % 2))
  # with no state yet (killed before the first one), die in the 2nd write: a state to resume
  [[ -e "$TMP/$name/model.safetensors.state" ]] || n=2
  train "$np" "$name" CGNN_TEST_EXIT_IN_CHECKPOINT=$n; rc=$?
  echo "  $what: exit half way through the run's state write #$n -> status $rc"
  [[ $rc -ne 0 ]] && grep -q "exiting abruptly after" "$TMP/$name.log" && ok || bad "$what: the state write #$n was not interrupted"
  ls "$TMP/$name"/*.state.tmp.* >/dev/null 2>&1 && ok || bad "$what: no partial state file after the interrupted write"
  local finished=0
  for ((n = 1; n <= kills; n++)); do
    # the first kill lands 0-30 ms after the run's 1st-3rd new state file (in a step, a
    # validation, a log write or a state write), the second at any moment of 0-0.4 s (often
    # while the process starts or reads the state)
    local states delay
    if [[ $n -eq 1 ]]; then
      states=$((1 + RANDOM % 3))
      delay=$(awk -v r=$RANDOM 'BEGIN{printf "%.3f", (r % 30) / 1000}')
    else
      states=0
      delay=$(awk -v r=$RANDOM 'BEGIN{printf "%.2f", (r % 40) / 100}')
    fi
    kill_train "$np" "$name" "$states" "$delay"; rc=$?
    echo "  $what: kill -9 ${delay}s after $states new state files -> status $rc"
    if [[ $rc -eq 0 ]]; then finished=1; break; fi
  done
  if [[ $finished -eq 0 ]]; then
    local before
    before=$(wc -l <"$TMP/$name.log")
    train "$np" "$name"; rc=$?
    [[ $rc -eq 0 ]] && ok || bad "$what: the final run failed ($rc): $(tail -5 "$TMP/$name.log")"
    tail -n +$((before + 1)) "$TMP/$name.log" | grep -q "resuming from the training state" && ok \
      || bad "$what: the final run did not resume"
  fi
}

# ---- Cora node classification, one process ----
nc_config nc_ref
sed -e "s#$TMP/nc_ref/#$TMP/nc/#g" "$TMP/nc_ref.yaml" > "$TMP/nc.yaml"
if ! train 0 nc_ref; then echo "FAIL: cora reference run failed: $(tail -5 "$TMP/nc_ref.log")"; exit 1; fi
steps=$(awk '/^trained/{print $2}' "$TMP/nc_ref.log")
echo "cora reference: $steps steps, $(grep -o 'training state: .*' "$TMP/nc_ref.log")"
[[ -e "$TMP/nc_ref/model.safetensors" && ! -e "$TMP/nc_ref/model.safetensors.state" ]] && ok || bad "cora reference: outputs"
crash_and_finish 0 nc "$steps" "cora"
check_same nc_ref nc "cora"

# refused: another config or dataset; the state is left as it was and still resumes
train 0 nc CGNN_TEST_EXIT_AT_STEP=7 >/dev/null
cp "$TMP/nc/model.safetensors.state" "$TMP/nc.state.before"
cp "$TMP/nc/tensorboard/metrics.jsonl" "$TMP/nc.jsonl.before"
nc_config nc_hidden -e 's/hidden_dim: "128"/hidden_dim: "64"/'
sed -i "s#$TMP/nc_hidden/#$TMP/nc/#g" "$TMP/nc_hidden.yaml"
train 0 nc_hidden; rc=$?
[[ $rc -eq 2 ]] && grep -q "model.safetensors.state: cannot resume.*hidden_dim is 128 in the state, 64 in this job.*Delete the file" "$TMP/nc_hidden.log" && ok \
  || bad "another hidden_dim: exit $rc, $(tail -2 "$TMP/nc_hidden.log")"
nc_config nc_data -e 's#preprocessedMetadataUri: data/cora#preprocessedMetadataUri: data/facebook#'
sed -i "s#$TMP/nc_data/#$TMP/nc/#g" "$TMP/nc_data.yaml"
train 0 nc_data; rc=$?
[[ $rc -eq 2 ]] && grep -q "cannot resume.*dataset.name is cora in the state, facebook in this job" "$TMP/nc_data.log" && ok \
  || bad "another dataset: exit $rc, $(tail -2 "$TMP/nc_data.log")"
cmp -s "$TMP/nc.state.before" "$TMP/nc/model.safetensors.state" && ok || bad "a refused run changed the state file"
# ... and removed nothing: the interrupted run's last good checkpoint and its logs are still there
[[ -s "$TMP/nc/model.safetensors" ]] && cmp -s "$TMP/nc.jsonl.before" "$TMP/nc/tensorboard/metrics.jsonl" && ok \
  || bad "a refused run removed or changed the previous outputs"
: >"$TMP/nc.log"
train 0 nc && grep -q "resuming from the training state" "$TMP/nc.log" && ok || bad "cora after the refusals: $(tail -3 "$TMP/nc.log")"
check_same nc_ref nc "cora after the refusals"
# a truncated state file is refused too, naming the file
train 0 nc CGNN_TEST_EXIT_AT_STEP=5 >/dev/null
truncate -s 1000 "$TMP/nc/model.safetensors.state"
: >"$TMP/nc.log"
train 0 nc; rc=$?
[[ $rc -eq 2 ]] && grep -q "model.safetensors.state: cannot resume" "$TMP/nc.log" && ok || bad "truncated state: exit $rc, $(tail -2 "$TMP/nc.log")"
# checkpoint_every_n_batches 0: a state file is an old output, removed
sed -e 's/checkpoint_every_n_batches: "2"/checkpoint_every_n_batches: "0"/' "$TMP/nc.yaml" > "$TMP/nc_off.yaml"
train 0 nc_off && [[ ! -e "$TMP/nc/model.safetensors.state" ]] && ok || bad "checkpointing off: the old state file stays"

# ---- Facebook link prediction with a learnable embedding table, one process ----
lp_config lp_ref
sed -e "s#$TMP/lp_ref/#$TMP/lp/#g" "$TMP/lp_ref.yaml" > "$TMP/lp.yaml"
if ! train 0 lp_ref; then echo "FAIL: facebook-lp reference run failed: $(tail -5 "$TMP/lp_ref.log")"; exit 1; fi
steps=$(awk '/^trained/{print $2}' "$TMP/lp_ref.log")
echo "facebook-lp reference: $steps steps, $(grep -o 'training state: .*' "$TMP/lp_ref.log")"
crash_and_finish 0 lp "$steps" "facebook-lp"
check_same lp_ref lp "facebook-lp"

# ---- under mpirun -np 2: Cora with batch 16 (slices of 5 and 4 batches: Join) and LP ----
if [[ ${#MPIRUN[@]} -eq 0 ]]; then
  echo "SKIP (part): serial build or no mpirun: the data-parallel resume is not tested here"
else
  nc_config mnc_ref -e 's/main_sample_batch_size: "32"/main_sample_batch_size: "16"/'
  sed -e "s#$TMP/mnc_ref/#$TMP/mnc/#g" "$TMP/mnc_ref.yaml" > "$TMP/mnc.yaml"
  if ! train 2 mnc_ref; then echo "FAIL: mpi cora reference run failed: $(tail -5 "$TMP/mnc_ref.log")"; exit 1; fi
  steps=$(awk '/^trained/{print $2}' "$TMP/mnc_ref.log")
  echo "cora, 2 ranks: $steps steps"
  crash_and_finish 2 mnc "$steps" "cora, 2 ranks"
  check_same mnc_ref mnc "cora, 2 ranks"
  grep -q "parameters bitwise identical on all 2 ranks" "$TMP/mnc.log" && ok || bad "cora, 2 ranks: no replica check"
  # a state of 2 ranks is refused by one process
  train 2 mnc CGNN_TEST_EXIT_AT_STEP=6 >/dev/null
  cp "$TMP/mnc.yaml" "$TMP/mnc_one.yaml" # the same job, one process
  train 0 mnc_one; rc=$?
  [[ $rc -eq 2 ]] && grep -q "cannot resume.*world_size is 2 in the state, 1 in this job" "$TMP/mnc_one.log" && ok \
    || bad "another world size: exit $rc, $(tail -2 "$TMP/mnc_one.log")"
  if [[ $SANITIZED != 1 ]]; then
    lp_config mlp_ref
    sed -e "s#$TMP/mlp_ref/#$TMP/mlp/#g" "$TMP/mlp_ref.yaml" > "$TMP/mlp.yaml"
    if ! train 2 mlp_ref; then echo "FAIL: mpi facebook-lp reference run failed: $(tail -5 "$TMP/mlp_ref.log")"; exit 1; fi
    steps=$(awk '/^trained/{print $2}' "$TMP/mlp_ref.log")
    crash_and_finish 2 mlp "$steps" "facebook-lp, 2 ranks"
    check_same mlp_ref mlp "facebook-lp, 2 ranks"
  fi
fi

echo "test_resume: $pass passed, $fails failed (random seed $SEED)"
[[ $fails -eq 0 ]]
