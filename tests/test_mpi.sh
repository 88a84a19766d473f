#!/usr/bin/env bash
# test_mpi.sh CGNN — data-parallel training under mpirun (replicated graph):
#   - 2 ranks x batch B train like 1 rank x batch 2B (same neighbourhoods: draws are keyed by
#     node); replicas end bitwise identical (the trainer checks a hash of every rank's weights);
#   - Cora GraphSAGE test accuracy under -np 2 within one point of one process;
#   - an uneven split over 3 ranks finishes with and without drop_uneven_inputs, and evaluating
#     one model on 3 ranks gives the single-process metrics;
#   - a rank whose loss turns NaN, or that dies abruptly, stops the whole job within seconds
#     with its message; a num_replicas mismatch is a config error (exit 2).
set -u
CGNN=${1:?usage: test_mpi.sh path/to/cgnn}
TMP_PREFIX=cgnn-mpi
SAN_KEEP_STEPS=1 # (faults at step 20 below)
source "$(dirname "$0")/mpi_test_lib.sh"
SANITIZED=${CGNN_TEST_SANITIZED:-0}

# config NAME [sed expressions...] — Cora GraphSAGE example, outputs under $TMP/NAME/
config() {
  local out=$1
  shift
  sed -e "s#out/[a-z_]*/#$TMP/$out/#g" "$@" examples/cora_graphsage.yaml > "$TMP/$out.yaml"
}
run() { # run NP NAME [env...] — cgnn train on $TMP/NAME.yaml with NP ranks (0 = no mpirun)
  local np=$1 name=$2
  shift 2
  if [[ $np -eq 0 ]]; then
    env "$@" timeout -k 10 300 "$CGNN" train --task_config_uri="$TMP/$name.yaml" >"$TMP/$name.out" 2>"$TMP/$name.err"
  else
    env "$@" timeout -k 10 300 "${MPIRUN[@]}" -np "$np" "$CGNN" train --task_config_uri="$TMP/$name.yaml" \
      >"$TMP/$name.out" 2>"$TMP/$name.err"
  fi
}
acc() { awk '/^test:/{print $5}' "$TMP/$1.out"; }
loss() { awk '/^test:/{print $3}' "$TMP/$1.out"; }

# ---- one step: 2 ranks x batch 70 = 1 rank x batch 140 (SGD, no dropout): same weights ----
step_cfg=(-e 's/optim_class_path: .*/optim_class_path: SGD/' -e 's/optim_lr: .*/optim_lr: "1.0"/'
          -e 's/dropout: .*/dropout: "0.0"/' -e 's/num_epochs: "200"/num_epochs: "1"/')
config step1 "${step_cfg[@]}"
config step2 "${step_cfg[@]}" -e 's/main_sample_batch_size: "140"/main_sample_batch_size: "70"/'
run 0 step1 && run 2 step2 || bad "one-step runs failed: $(cat "$TMP/step1.err" "$TMP/step2.err" | tail -5)"
/usr/bin/python3 - "$TMP/step1/model.safetensors" "$TMP/step2/model.safetensors" <<'PY' && ok || bad "one step on 2 ranks != one step on the union batch"
import json, struct, sys
def load(p):
    b = open(p, "rb").read(); n = struct.unpack("<Q", b[:8])[0]; h = json.loads(b[8:8 + n]); d = b[8 + n:]
    return {k: struct.unpack("<%df" % ((v["data_offsets"][1] - v["data_offsets"][0]) // 4), d[v["data_offsets"][0]:v["data_offsets"][1]])
            for k, v in h.items() if k != "__metadata__"}
a, b = load(sys.argv[1]), load(sys.argv[2])
worst = max(abs(x - y) / max(abs(x), 1e-2) for k in a for x, y in zip(a[k], b[k]))
print("one SGD step: 1 rank x 140 vs 2 ranks x 70: max relative weight difference %.2e" % worst)
sys.exit(0 if worst < 1e-4 else 1)
PY

# ---- Cora GraphSAGE: 2 ranks x batch 70 vs 1 process x batch 140 (the same global batch) ----
SHORT=()
[[ $SANITIZED == 1 ]] && SHORT=(-e 's/num_epochs: "200"/num_epochs: "20"/')
config one "${SHORT[@]}"
config two "${SHORT[@]}" -e 's/main_sample_batch_size: "140"/main_sample_batch_size: "70"/'
run 0 one && run 2 two || bad "cora runs failed: $(cat "$TMP/one.err" "$TMP/two.err" | tail -5)"
grep -q "parameters bitwise identical on all 2 ranks" "$TMP/two.err" && ok || bad "replica check missing: $(tail -3 "$TMP/two.err")"
a1=$(acc one); a2=$(acc two)
echo "cora graphsage: 1 process x batch 140: test acc $a1; 2 ranks x batch 70: test acc $a2"
awk -v a="$a1" -v b="$a2" 'BEGIN{d = a - b; if (d < 0) d = -d; exit !(d <= 0.01)}' && ok || bad "accuracy $a2 not within 0.01 of $a1"
# only rank 0 writes outputs and prints results
[[ $(grep -c '^test:' "$TMP/two.out") -eq 1 ]] && ok || bad "results printed $(grep -c '^test:' "$TMP/two.out") times"

# ---- 3 ranks, uneven split (140 items, batch 32: slices 64/44/32), with and without drop ----
config uneven -e 's/main_sample_batch_size: "140"/main_sample_batch_size: "32"/' -e 's/num_epochs: "200"/num_epochs: "5"/'
config uneven_drop -e 's/main_sample_batch_size: "140"/main_sample_batch_size: "32"/' -e 's/num_epochs: "200"/num_epochs: "5"/' \
  -e 's/    seed: "0"/    seed: "0"\n    drop_uneven_inputs: "true"/'
run 3 uneven && ok || bad "3 ranks without drop failed: $(tail -3 "$TMP/uneven.err")"
run 3 uneven_drop && ok || bad "3 ranks with drop_uneven_inputs failed: $(tail -3 "$TMP/uneven_drop.err")"
# ... and 3 ranks evaluating one model = one process evaluating it (weighted sums, no average of averages)
for np in 0 3; do
  sed -e 's/shouldSkipTraining: false/shouldSkipTraining: true/' -e "s#$TMP/uneven/eval_metrics#$TMP/uneven/eval$np#" \
    -e 's/main_sample_batch_size: "32"/main_sample_batch_size: "100"/' "$TMP/uneven.yaml" > "$TMP/eval$np.yaml"
  run "$np" "eval$np" || bad "evaluation on $np ranks failed: $(tail -3 "$TMP/eval$np.err")"
done
echo "evaluation of one model: 1 process acc $(acc eval0) loss $(loss eval0); 3 ranks acc $(acc eval3) loss $(loss eval3)"
[[ -n "$(acc eval0)" && "$(acc eval0)" == "$(acc eval3)" ]] && ok || bad "3-rank accuracy differs"
awk -v a="$(loss eval0)" -v b="$(loss eval3)" 'BEGIN{d = a - b; if (d < 0) d = -d; exit !(a != "" && d <= 1e-4)}' && ok \
  || bad "3-rank loss differs"

# ---- failures: a NaN on rank 1 at step 20; rank 1 dying at step 20; wrong num_replicas ----
config nan -e 's/main_sample_batch_size: "140"/main_sample_batch_size: "70"/'
start=$(date +%s)
run 2 nan CGNN_TEST_NAN_AT_STEP=20 CGNN_TEST_FAULT_RANK=1; rc=$?
[[ $rc -ne 0 ]] && grep -q "rank 1: training loss is NaN" "$TMP/nan.err" && ok || bad "NaN on rank 1: exit $rc, $(tail -3 "$TMP/nan.err")"
config die -e 's/main_sample_batch_size: "140"/main_sample_batch_size: "70"/'
run 2 die CGNN_TEST_EXIT_AT_STEP=20 CGNN_TEST_FAULT_RANK=1; rc=$?
took=$(( $(date +%s) - start ))
[[ $rc -ne 0 ]] && grep -q "exiting abruptly" "$TMP/die.err" && ok || bad "rank 1 dying: exit $rc, $(tail -3 "$TMP/die.err")"
[[ $took -le 60 ]] && ok || bad "failures took ${took}s to stop the job"
printf 'trainer_resource_config:\n  mpi_trainer_config: {num_replicas: 4, num_threads_per_replica: 1}\n' > "$TMP/res4.yaml"
config rep
"${MPIRUN[@]}" -np 2 "$CGNN" train --task_config_uri="$TMP/rep.yaml" --resource_config_uri="$TMP/res4.yaml" \
  >"$TMP/rep.out" 2>"$TMP/rep.err"; rc=$?
[[ $rc -eq 2 ]] && grep -q "num_replicas is 4 but the job runs 2 processes" "$TMP/rep.err" && ok || bad "num_replicas mismatch: exit $rc, $(tail -2 "$TMP/rep.err")"

echo "test_mpi: $pass passed, $fails failed"
[[ $fails -eq 0 ]]
