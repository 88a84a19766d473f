#!/usr/bin/env bash
# test_trainer_command.sh CGNN — `cgnn train` runs the user's training command (GiGL's in-memory
# Trainer's trainerConfig.command) when featureFlags.cgnn_run_trainer_command is True
# (src/cli/cli_launch.c, docs/CONFIG.md "The user's training command"):
#   1. the launch contract, on one process and under mpirun -np 2: argv = the command's words,
#      --job_name / --task_config_uri / --resource_config_uri, trainerArgs as --key=value (a value
#      with spaces stays one argument); GiGL's GIGL_* variables; RANK, WORLD_SIZE, LOCAL_RANK,
#      LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT (one port for the whole job); a launcher's RANK /
#      WORLD_SIZE kept; the command's exit status is cgnn's;
#   2. bad input: exit 2 naming the field or variable, the command not run;
#   3. without the flag, a config's command is not run: cgnn's trainer trains, and says so;
#   4. (plain pass: the sanitized build has no Python package) GiGL's homogeneous link-prediction
#      example, ported (examples/gigl/), under mpirun -np 2 on data/facebook-lp: it trains (test
#      loss well under the untrained model's), writes GiGL's eval metrics and a .pt whose
#      state_dict loads strictly into the example's model, and its evaluation-only run
#      (shouldSkipTraining) loads that file and reproduces the test loss exactly; cgnn.gigl's
#      writers refuse an output over the task config or inside the dataset, and write whole files.
set -u
CGNN=${1:?usage: test_trainer_command.sh path/to/cgnn}
TMP_PREFIX=cgnn-command
source "$(dirname "$0")/mpi_test_lib.sh"
PROBE=(-e "s#^  command: .*#  command: /bin/sh $SRC/tests/launch_probe.sh#")
export PROBE_DIR=$TMP/probe
mkdir -p "$PROBE_DIR"

# a command config on the bundled Facebook graph (the ported GiGL example's), outputs under TMP/NAME
cmdconf() { # cmdconf NAME [sed expressions...]
  local name=$1
  shift
  sed -e "s#out/gigl_facebook_lp/#$TMP/$name/#g" "$@" examples/gigl/facebook_lp_homogeneous.yaml >"$TMP/$name.yaml"
}
has() { # has FILE LINE WHAT
  grep -qxF -- "$2" "$1" && ok || bad "$3: no line '$2' in $1: $(head -c 600 "$1" | tr '\n' '|')"
}

# ---- 1. the launch contract ----------------------------------------------------------
cmdconf probe "${PROBE[@]}" -e 's/    sampling_workers_per_process: "1"/    sampling_workers_per_process: "1"\n    note: "two words"/'
env -u RANK -u WORLD_SIZE -u MASTER_ADDR -u MASTER_PORT "$CGNN" train --job_name=j1 --task_config_uri="$TMP/probe.yaml" \
  --resource_config_uri=examples/resource.yaml >"$TMP/p1.out" 2>&1
rc=$?
[[ $rc -eq 0 && -f $PROBE_DIR/rank0 ]] && ok || bad "one process: exit $rc: $(tail -3 "$TMP/p1.out")"
f=$PROBE_DIR/rank0
has "$f" "arg0 $SRC/tests/launch_probe.sh" "the command's words"
has "$f" "arg --job_name=j1" "GiGL's --job_name"
has "$f" "arg --task_config_uri=$TMP/probe.yaml" "GiGL's --task_config_uri"
has "$f" "arg --resource_config_uri=examples/resource.yaml" "GiGL's --resource_config_uri"
has "$f" "arg --main_batch_size=64" "trainerArgs as --key=value"
has "$f" "arg --note=two words" "a value with spaces: one argument"
has "$f" "env RANK=0" "RANK"
has "$f" "env WORLD_SIZE=1" "WORLD_SIZE"
has "$f" "env MASTER_ADDR=127.0.0.1" "MASTER_ADDR"
grep -qE "^env MASTER_PORT=[0-9]+$" "$f" && ok || bad "one process: no MASTER_PORT"
has "$f" "env GIGL_APPLIED_TASK_IDENTIFIER=j1" "GIGL_APPLIED_TASK_IDENTIFIER"
has "$f" "env GIGL_TASK_CONFIG_URI=$TMP/probe.yaml" "GIGL_TASK_CONFIG_URI"
has "$f" "env GIGL_COMPONENT=Trainer" "GIGL_COMPONENT"
# the arguments in order: the command, the launcher's three, then trainerArgs in the config's order
order=$(grep '^arg ' "$f" | sed 's/^arg //; s/=.*//' | tr '\n' ' ')
[[ $order == "--job_name --task_config_uri --resource_config_uri --num_neighbors --main_batch_size "* ]] \
  && ok || bad "argument order: $order"

rm -f "$PROBE_DIR"/rank*
env -u RANK -u WORLD_SIZE -u MASTER_ADDR -u MASTER_PORT timeout -k 10 120 "${MPIRUN[@]}" -x PROBE_DIR -np 2 \
  "$CGNN" train --job_name=j2 --task_config_uri="$TMP/probe.yaml" >"$TMP/p2.out" 2>&1
rc=$?
[[ $rc -eq 0 && -f $PROBE_DIR/rank0 && -f $PROBE_DIR/rank1 ]] && ok || bad "mpirun -np 2: exit $rc: $(tail -3 "$TMP/p2.out")"
for r in 0 1; do
  has "$PROBE_DIR/rank$r" "env RANK=$r" "mpirun rank $r: RANK"
  has "$PROBE_DIR/rank$r" "env WORLD_SIZE=2" "mpirun rank $r: WORLD_SIZE"
  has "$PROBE_DIR/rank$r" "env LOCAL_RANK=$r" "mpirun rank $r: LOCAL_RANK"
  has "$PROBE_DIR/rank$r" "env LOCAL_WORLD_SIZE=2" "mpirun rank $r: LOCAL_WORLD_SIZE"
done
p0=$(grep '^env MASTER_PORT=' "$PROBE_DIR/rank0"); p1=$(grep '^env MASTER_PORT=' "$PROBE_DIR/rank1")
[[ -n $p0 && $p0 == "$p1" ]] && ok || bad "mpirun: the ranks' MASTER_PORT differ: '$p0' '$p1'"
grep -q "running trainerConfig.command on 2 ranks (mpirun" "$TMP/p2.out" && ok || bad "mpirun: no launch line: $(head -3 "$TMP/p2.out")"

rm -f "$PROBE_DIR"/rank*
RANK=2 WORLD_SIZE=3 LOCAL_RANK=0 LOCAL_WORLD_SIZE=1 MASTER_ADDR=10.0.0.7 MASTER_PORT=29999 \
  "$CGNN" train --job_name=j3 --task_config_uri="$TMP/probe.yaml" >"$TMP/p3.out" 2>&1
has "$PROBE_DIR/rank2" "env WORLD_SIZE=3" "a launcher's WORLD_SIZE kept"
has "$PROBE_DIR/rank2" "env MASTER_ADDR=10.0.0.7" "a launcher's MASTER_ADDR kept"
has "$PROBE_DIR/rank2" "env MASTER_PORT=29999" "a launcher's MASTER_PORT kept"

PROBE_EXIT=7 "$CGNN" train --job_name=j4 --task_config_uri="$TMP/probe.yaml" >"$TMP/p4.out" 2>&1
rc=$?
[[ $rc -eq 7 ]] && ok || bad "the command's exit status 7 became $rc"

# ---- 2. bad input: exit 2, named, nothing run -------------------------------------------
expect2() { # expect2 NAME PATTERN [env...] -- (the config TMP/NAME.yaml)
  local name=$1 pat=$2
  shift 2
  rm -f "$PROBE_DIR"/rank*
  env "$@" "$CGNN" train --job_name=e --task_config_uri="$TMP/$name.yaml" >"$TMP/$name.out" 2>&1
  local rc=$?
  [[ $rc -eq 2 ]] && grep -q -- "$pat" "$TMP/$name.out" && ! ls "$PROBE_DIR"/rank* >/dev/null 2>&1 && ok ||
    bad "$name: exit $rc (want 2, '$pat', nothing run): $(tail -2 "$TMP/$name.out")"
}
cmdconf nocmd "${PROBE[@]}" -e '/^  command: /d'
expect2 nocmd "featureFlags.cgnn_run_trainer_command.*trainerConfig.command is missing" A=1
cmdconf notfound -e "s#^  command: .*#  command: /nonexistent/train.py --x#"
expect2 notfound "trainerConfig.command: cannot run '/nonexistent/train.py'" A=1
cmdconf listarg "${PROBE[@]}" -e 's/num_neighbors: "\[10, 10\]"/num_neighbors: [10, 10]/'
expect2 listarg "trainerArgs.num_neighbors.*expected a string" A=1
cmdconf badflag "${PROBE[@]}" -e 's/cgnn_run_trainer_command: "True"/cgnn_run_trainer_command: "maybe"/'
expect2 badflag "cgnn_run_trainer_command" A=1
expect2 probe "RANK is set but WORLD_SIZE is not" RANK=1
expect2 probe "environment variable WORLD_SIZE='x'" RANK=0 WORLD_SIZE=x
expect2 probe "span several hosts (2 on this one): set MASTER_ADDR" -u MASTER_ADDR -u RANK -u WORLD_SIZE \
  OMPI_COMM_WORLD_SIZE=4 OMPI_COMM_WORLD_RANK=1 OMPI_COMM_WORLD_LOCAL_RANK=1 OMPI_COMM_WORLD_LOCAL_SIZE=2

# ---- 3. without the flag: cgnn's own trainer, and a line that says so -------------------
sed -e "s#out/facebook_lp/#$TMP/builtin/#g" -e "s#^trainerConfig:#trainerConfig:\n  command: /bin/sh $SRC/tests/launch_probe.sh#" \
  -e 's/num_epochs: "4"/num_epochs: "1"\n    num_max_train_batches: "2"\n    num_test_batches: "1"/' \
  examples/facebook_lp_graphsage.yaml >"$TMP/builtin.yaml"
rm -f "$PROBE_DIR"/rank*
"$CGNN" train --job_name=b --task_config_uri="$TMP/builtin.yaml" >"$TMP/builtin.out" 2>&1
rc=$?
[[ $rc -eq 0 && -s $TMP/builtin/model.safetensors ]] && ! ls "$PROBE_DIR"/rank* >/dev/null 2>&1 && ok ||
  bad "no flag: exit $rc, or the command ran: $(tail -3 "$TMP/builtin.out")"
grep -q "trainerConfig.command '/bin/sh .*launch_probe.sh' is not run: cgnn's own trainer trains this config" "$TMP/builtin.out" \
  && ok || bad "no flag: no line saying the command is not run"

# ---- 4. GiGL's example script, ported, under mpirun -np 2 ---------------------------------
if [[ ${CGNN_TEST_SANITIZED:-0} == 1 ]]; then
  echo "(the sanitized build has no Python package: the ported GiGL script runs in the plain pass)"
else
  B=$(dirname "$CGNN")
  [[ -f $B/python/cgnn/__init__.py ]] || bad "no Python package beside $CGNN"
  FAST=(-e 's/num_max_train_batches: "200"/num_max_train_batches: "40"/' -e 's/num_val_batches: "16"/num_val_batches: "4"/'
        -e 's/val_every_n_batch: "50"/val_every_n_batch: "20"/' -e 's/log_every_n_batch: "25"/log_every_n_batch: "10"/')
  cmdconf g0 "${FAST[@]}" -e 's/num_max_train_batches: "40"/num_max_train_batches: "0"/'
  cmdconf g1 "${FAST[@]}"
  cmdconf g2 "${FAST[@]}" -e "s#trainedModelUri: .*#trainedModelUri: $TMP/g1/model.pt#" \
    -e 's#^sharedConfig:#sharedConfig:\n  shouldSkipTraining: true#'
  for g in g0 g1 g2; do
    env -u RANK -u WORLD_SIZE -u MASTER_ADDR -u MASTER_PORT OMP_NUM_THREADS=1 timeout -k 10 400 \
      "${MPIRUN[@]}" -x OMP_NUM_THREADS -np 2 "$CGNN" train --job_name=$g --task_config_uri="$TMP/$g.yaml" \
      >"$TMP/$g.out" 2>&1
    rc=$?
    [[ $rc -eq 0 && -s $TMP/$g/eval_metrics.json ]] && ok || bad "GiGL script $g: exit $rc: $(grep -v '^ *$' "$TMP/$g.out" | tail -5)"
  done
  loss() { /usr/bin/python3 -c 'import json,sys; m=json.load(open(sys.argv[1]))["metrics"]; print(next(x["numberValue"] for x in m if x["name"]=="loss"))' "$1" 2>/dev/null; }
  l0=$(loss "$TMP/g0/eval_metrics.json"); l1=$(loss "$TMP/g1/eval_metrics.json"); l2=$(loss "$TMP/g2/eval_metrics.json")
  echo "GiGL example on facebook-lp, 2 ranks: test loss untrained $l0, after 40 batches $l1, evaluation-only from the file $l2"
  awk -v a="$l0" -v b="$l1" 'BEGIN { exit !(a > 0 && b > 0 && b < 0.75 * a) }' && ok ||
    bad "training did not lower the test loss enough: untrained $l0, trained $l1 (want < 0.75x)"
  [[ -n $l1 && $l1 == "$l2" ]] && ok || bad "evaluation-only run from the saved model: loss $l2, the trained run's $l1"
  grep -q "num_max_train_batches_per_process is set to 20" "$TMP/g1.out" && ok ||
    bad "40 batches over 2 ranks: not 20 per process: $(grep -m1 num_max_train "$TMP/g1.out")"
  PYTHONPATH=$SRC/examples/gigl /usr/bin/python3 - "$TMP/g1/model.pt" <<'PY' && ok || bad "the script's model.pt does not load into the example's model"
import sys, torch
from models import init_example_gigl_homogeneous_model
sd = torch.load(sys.argv[1], map_location="cpu")
assert set(sd) == {f"_encoder.conv_layers.{l}.{k}" for l in (0, 1) for k in ("lin_l.weight", "lin_l.bias", "lin_r.weight")}, sorted(sd)
model = init_example_gigl_homogeneous_model(node_feature_dim=sd["_encoder.conv_layers.0.lin_l.weight"].shape[1],
                                            edge_feature_dim=0, hid_dim=64, out_dim=64, state_dict=sd)
print("model.pt loads strictly:", sum(p.numel() for p in model.parameters()), "parameters")
PY
  # cgnn.gigl's writers: never over an input (the task config, a dataset's files), never half a file
  cp -r data/cora "$TMP/cora"
  sed -e "s#preprocessedMetadataUri: .*#preprocessedMetadataUri: $TMP/cora#" examples/cora_graphsage.yaml >"$TMP/guard.yaml"
  sum0=$(cat "$TMP/guard.yaml" "$TMP/cora/edges.npy" | md5sum)
  PYTHONPATH=$B/python /usr/bin/python3 - "$TMP" <<'PY' && ok || bad "cgnn.gigl's guarded writers"
import os, sys, torch
import cgnn.gigl as g
tmp = sys.argv[1]
g.build_dataset_from_task_config_uri(f"{tmp}/guard.yaml")
lin = torch.nn.Linear(2, 2)
for what, call in (("config", lambda: g.write_eval_metrics_to_uri({"loss": 1.0}, f"{tmp}/guard.yaml")),
                   ("dataset", lambda: g.save_state_dict(lin, f"{tmp}/cora/edges.npy")),
                   ("dataset", lambda: g.save_state_dict(lin, f"file://{tmp}/cora/new/model.pt"))):
    try:
        call()
        sys.exit(f"an output over the {what} was written")
    except ValueError as e:
        assert what in str(e) and tmp in str(e), e
assert not os.path.exists(f"{tmp}/cora/new"), "a folder was made inside the dataset"
g.save_state_dict(lin, f"{tmp}/out/model.pt")
g.write_eval_metrics_to_uri({"loss": 2.5}, f"{tmp}/out/m.json")
assert sorted(os.listdir(f"{tmp}/out")) == ["m.json", "model.pt"], os.listdir(f"{tmp}/out")
assert torch.load(f"{tmp}/out/model.pt").keys() == lin.state_dict().keys()
print("cgnn.gigl's writers: 3 outputs over inputs refused, 2 written whole")
PY
  [[ $(cat "$TMP/guard.yaml" "$TMP/cora/edges.npy" | md5sum) == "$sum0" ]] && ok || bad "an input changed"
fi

echo "test_trainer_command: $pass passed, $fails failed"
[[ $fails -eq 0 ]]
