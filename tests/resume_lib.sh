# resume_lib.sh — the helpers of the exact-resume tests (tests/test_resume.sh,
# tests/test_resume_typed.sh), sourced after the test set CGNN, SRC, TMP, PY, SANITIZED, MPIRUN
# (empty: no mpirun), RANDOM (seeded) and the counters' ok / bad functions. Each job NAME has
# its config in $TMP/NAME.yaml writing under $TMP/NAME/, its log in $TMP/NAME.log, and one
# process reads its resource config from $TMP/resource.yaml.

# train NP NAME [VAR=value...] — cgnn train on $TMP/NAME.yaml (NP 0: one process, else mpirun
# -np NP), stdout/stderr appended to $TMP/NAME.log; returns cgnn's (or mpirun's) exit status.
train() {
  local np=$1 name=$2
  shift 2
  local cmd=("$CGNN" train --job_name="$name" --task_config_uri="$TMP/$name.yaml")
  [[ $np -eq 0 ]] && cmd+=(--resource_config_uri="file://$TMP/resource.yaml") || cmd=("${MPIRUN[@]}" -np "$np" "${cmd[@]}")
  echo "== $* ${cmd[*]}" >>"$TMP/$name.log"
  env "$@" timeout -k 10 300 "${cmd[@]}" >>"$TMP/$name.log" 2>&1
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
    # OpenMPI 4.1's mpirun can hang for good (a PMIx "UNREACHABLE" error, its other ranks
    # already gone, SIGTERM not heeded) when a rank dies while the job starts: what is tested
    # is the next run's resume, so a launcher still there 20 s after the kill is killed too
    for ((i = 0; i < 200 && $(pgrep -c -P "$pid"); i++)); do sleep 0.1; done
    if [[ $(pgrep -c -P "$pid") -gt 0 && $np -gt 0 ]]; then
      echo "== the launcher did not end 20 s after the kill: kill -9 of mpirun" >>"$TMP/$name.log"
      pkill -9 -P "$(pgrep -P "$pid")" -x mpirun 2>/dev/null
    fi
  fi
  wait "$pid"
  local rc=$?
  [[ -n $victim && $rc -ne 0 ]] && return 137
  return $rc
}

# same_logs REF RUN — metrics.jsonl and the TensorBoard scalars of two runs: the same records in
# the same order, timings aside (seeds_per_s, *_ms, *_gflops, wall_time), and no step logged twice.
# Logs are never removed (train/outputs.h): a directory holds every run's event file and
# records, so each side is its last run: the records after the last "run" record (itself
# compared without the job name), and the event file written last.
same_logs() {
  "$PY" - "$TMP/$1/tensorboard" "$TMP/$2/tensorboard" "$SRC/tests/read_tb_events.py" <<'PY'
import glob, json, os, subprocess, sys
def jsonl(d):
    recs = []
    for line in open(d + "/metrics.jsonl"):
        r = json.loads(line)
        if "run" in r:  # a run starts: only the last run counts
            recs = [{"step": r["step"], "mode": r["mode"]}]
            continue
        recs.append({k: v for k, v in r.items() if k != "seeds_per_s" and not k.endswith(("_ms", "_gflops"))})
    assert recs and "mode" in recs[0], d + "/metrics.jsonl: no run record"
    return recs
def tb(d, reader):
    files = glob.glob(d + "/events.out.tfevents.*")
    assert files, "%s: no event file" % d
    last = max(files, key=os.path.getmtime)
    out = subprocess.run([sys.executable, reader, "--dump", last], check=True, capture_output=True, text=True).stdout
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
  # die in state write #1 or #2 of the resumed run, among the writes it still has to make: states
  # are written at multiples of checkpoint_every_n_batches below MAX_STEP, and the run resumes at
  # or before the last multiple <= k (from step 0 if no state exists yet)
  local every from left
  every=$(sed -n 's/^ *checkpoint_every_n_batches: *"\{0,1\}\([0-9]*\)"\{0,1\}$/\1/p' "$TMP/$name.yaml" | head -1)
  [[ -n $every && $every -gt 0 ]] || { bad "$what: no checkpoint_every_n_batches in $TMP/$name.yaml"; return; }
  from=$((k / every * every))
  [[ -e "$TMP/$name/model.safetensors.state" ]] || from=0
  left=$(((max - 1) / every - from / every))
  [[ $left -ge 1 ]] || { bad "$what: no state write left after step $from of $max (every $every)"; return; }
  n=$((1 + RANDOM % (left < 2 ? left : 2)))
  # with no state yet (killed before the first one), die in the 2nd write: a state to resume
  [[ -e "$TMP/$name/model.safetensors.state" || $left -lt 2 ]] || n=2
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
    local before had_state=0
    before=$(wc -l <"$TMP/$name.log")
    # (a kill can land after a run removed its state at the end: then the next run starts afresh)
    [[ -e "$TMP/$name/model.safetensors.state" ]] && had_state=1
    train "$np" "$name"; rc=$?
    [[ $rc -eq 0 ]] && ok || bad "$what: the final run failed ($rc): $(tail -5 "$TMP/$name.log")"
    if [[ $had_state -eq 1 ]]; then
      tail -n +$((before + 1)) "$TMP/$name.log" | grep -q "resuming from the training state" && ok \
        || bad "$what: the final run did not resume"
    else
      echo "  $what: no state left by the last killed run (it had finished training): the final run started afresh"
    fi
  fi
}
