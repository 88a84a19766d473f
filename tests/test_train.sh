#!/usr/bin/env bash
# test_train.sh CGNN — `cgnn train` end to end on the bundled real datasets:
#   accuracy targets (Cora, mean of 5 seeds: GraphSAGE >= 0.80 with row-normalised features,
#   >= 0.79 on raw features (3 seeds), GCN >= 0.80; Facebook Page-Page GraphSAGE >= 0.90), the
#   outputs and their formats, shouldSkipTraining, determinism, config errors (exit 2) and a NaN loss (exit 1).
set -u
CGNN=${1:?usage: test_train.sh path/to/cgnn}
SRC=${CGNN_SOURCE_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
TMP=$(mktemp -d /tmp/cgnn-train-XXXXXX)
trap 'rm -rf "$TMP"' EXIT
cd "$SRC"
fails=0
pass=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }
printf 'trainer_resource_config:\n  local_trainer_config: {num_workers: 2}\n' > "$TMP/resource.yaml"

# config EXAMPLE OUTDIR [sed expressions...] — writes $TMP/OUTDIR.yaml from an example with
# outputs redirected to $TMP/OUTDIR/
config() {
  local ex=$1 out=$2
  shift 2
  sed -e "s#out/[a-z_]*/#$TMP/$out/#g" "$@" "examples/$ex.yaml" > "$TMP/$out.yaml"
}
# train NAME — runs cgnn train on $TMP/NAME.yaml; stdout in $TMP/NAME.out, stderr in .err
train() {
  "$CGNN" train --quiet --job_name="$1" --task_config_uri="$TMP/$1.yaml" \
    --resource_config_uri="file://$TMP/resource.yaml" >"$TMP/$1.out" 2>"$TMP/$1.err"
}
test_acc() { awk '/^test:/{print $5}' "$TMP/$1.out"; }

# Under sanitizers (CGNN_TEST_SANITIZED=1, set by scripts/test.sh) the accuracy runs use one seed
# and 20 epochs and assert only that training succeeds: the plain build asserts the targets.
SANITIZED=${CGNN_TEST_SANITIZED:-0}
SEEDS="0 1 2 3 4"
[[ $SANITIZED == 1 ]] && SEEDS="0"

SHORT=()
[[ $SANITIZED == 1 ]] && SHORT=(-e 's/num_epochs: "200"/num_epochs: "20"/')

# mean_acc EXAMPLE MIN [sed expressions...] — mean test accuracy over seeds 0..4 (MEAN_SEEDS) >= MIN;
# with SEED0=NAME, seed 0's run is $TMP/NAME (kept for the tests below)
mean_acc() {
  local ex=$1 min=$2
  shift 2
  set -- "$@" "${SHORT[@]}"
  local accs="" s name
  for s in ${MEAN_SEEDS:-$SEEDS}; do
    name=acc_$s
    [[ $s == 0 && -n ${SEED0:-} ]] && name=$SEED0
    config "$ex" "$name" -e "s/seed: \"0\"/seed: \"$s\"/" "$@"
    if ! train "$name"; then bad "$ex seed $s failed: $(cat "$TMP/$name.err")"; return; fi
    accs="$accs $(test_acc "$name")"
  done
  local mean
  mean=$(echo "$accs" | awk '{s = 0; for (i = 1; i <= NF; i++) s += $i; printf "%.4f", s / NF}')
  echo "$ex $*: test accuracy$accs -> mean $mean (need >= $min)"
  if [[ $SANITIZED == 1 ]]; then ok; return; fi
  if awk -v m="$mean" -v t="$min" 'BEGIN{exit !(m >= t)}'; then ok; else bad "$ex mean accuracy $mean < $min"; fi
}

# seed 0 of the first is the run whose outputs are checked below
SEED0=run mean_acc cora_graphsage 0.80
# (raw features: 3 seeds, 0.807 on this machine's kernels, 0.017 above the target)
MEAN_SEEDS=${SEEDS% 3 4} mean_acc cora_graphsage 0.79 -e 's/feature_normalization: row/feature_normalization: none/'
mean_acc cora_gcn 0.80

FB_EPOCHS=4
[[ $SANITIZED == 1 ]] && FB_EPOCHS=1
config facebook_graphsage fb -e "s/num_epochs: \"20\"/num_epochs: \"$FB_EPOCHS\"/"
if train fb; then
  a=$(test_acc fb); echo "facebook_graphsage ($FB_EPOCHS epochs): test accuracy $a (need >= 0.90)"
  [[ $SANITIZED == 1 ]] && ok || { awk -v a="$a" 'BEGIN{exit !(a >= 0.90)}' && ok || bad "facebook accuracy $a < 0.90"; }
else bad "facebook training failed: $(cat "$TMP/fb.err")"; fi

# ---- outputs of one run (seed 0 of the accuracy runs above) ----
[[ -s "$TMP/run/model.safetensors" ]] && ok || bad "no model.safetensors"
grep -q '"name": "acc", "numberValue": "0\.[0-9]*", "format": "RAW"' "$TMP/run/eval_metrics.json" && ok \
  || bad "eval_metrics.json: $(cat "$TMP/run/eval_metrics.json" 2>&1)"
grep -q '"train_loss"' "$TMP/run/tensorboard/metrics.jsonl" && grep -q '"val_acc"' "$TMP/run/tensorboard/metrics.jsonl" \
  && grep -q '"test_acc"' "$TMP/run/tensorboard/metrics.jsonl" && ok || bad "metrics.jsonl lacks records"
ls "$TMP"/run/*.tmp.* >/dev/null 2>&1 && bad "temporary files left behind" || ok
# TensorBoard: exactly one event file (a rerun replaces it), read back by an independent reader
ev=("$TMP"/run/tensorboard/events.out.tfevents.*)
[[ ${#ev[@]} -eq 1 && -s "${ev[0]}" ]] && ok || bad "expected one TensorBoard event file, got ${#ev[@]}"
if [[ -x /usr/bin/python3 ]]; then
  /usr/bin/python3 tests/read_tb_events.py --dump "${ev[0]}" 2>"$TMP/tb.err" | grep -q "val/acc" && ok \
    || bad "event file unreadable: $(cat "$TMP/tb.err")"
fi
acc_run=$(test_acc run)

# ---- shouldSkipTraining: load the model and only evaluate: same test accuracy ----
sed -e 's/shouldSkipTraining: false/shouldSkipTraining: true/' -e "s#$TMP/run/eval#$TMP/run/skip_eval#" \
  "$TMP/run.yaml" > "$TMP/skip.yaml"
cp "$TMP/run/model.safetensors" "$TMP/model.before"
if train skip; then
  [[ "$(test_acc skip)" == "$acc_run" ]] && ok || bad "skip-training accuracy $(test_acc skip) != $acc_run"
  cmp -s "$TMP/model.before" "$TMP/run/model.safetensors" && ok || bad "skip-training rewrote the model"
else bad "skip-training run failed: $(cat "$TMP/skip.err")"; fi

# ---- determinism: same seed -> identical weights; the sampler thread count changes nothing ----
# determinism over the sampler thread count: 20 epochs of 0 and 3 threads against 2 (the run
# above when it was 20 epochs long, the sanitized pass; else a 20-epoch run of its own)
DET=(-e 's/num_epochs: "200"/num_epochs: "20"/')
ref=run
if [[ $SANITIZED != 1 ]]; then
  ref=det_ref
  config cora_graphsage det_ref "${DET[@]}"
  train det_ref || bad "determinism reference run failed"
fi
config cora_graphsage det1 "${DET[@]}" -e 's/train_main_num_workers: "2"/train_main_num_workers: "0"/'
config cora_graphsage det2 "${DET[@]}" -e 's/train_main_num_workers: "2"/train_main_num_workers: "3"/'
train det1 && train det2 || bad "determinism runs failed"
cmp -s "$TMP/det1/model.safetensors" "$TMP/$ref/model.safetensors" && ok || bad "0 vs 2 sampler threads: weights differ"
cmp -s "$TMP/det2/model.safetensors" "$TMP/$ref/model.safetensors" && ok || bad "3 vs 2 sampler threads: weights differ"

# ---- config errors: exit 2, the message names file and key, previous outputs untouched ----
config cora_graphsage typo -e 's/hidden_dim:/hiden_dim:/'
train typo; rc=$?
[[ $rc -eq 2 ]] && grep -q "did you mean 'hidden_dim'" "$TMP/typo.err" && grep -q "typo.yaml" "$TMP/typo.err" && ok \
  || bad "typo config: exit $rc, $(cat "$TMP/typo.err")"
config cora_graphsage gs -e 's#trainedModelUri: .*#trainedModelUri: gs://bucket/model.safetensors#'
train gs; rc=$?
[[ $rc -eq 2 ]] && grep -q "gs://" "$TMP/gs.err" && ok || bad "gs:// uri: exit $rc"
"$CGNN" train --job_name=x >/dev/null 2>&1; [[ $? -eq 2 ]] && ok || bad "missing --task_config_uri should exit 2"
config cora_graphsage missing -e "s#preprocessedMetadataUri: .*#preprocessedMetadataUri: $TMP/nowhere#"
train missing; rc=$?
[[ $rc -eq 2 ]] && grep -q "$TMP/nowhere" "$TMP/missing.err" && ok || bad "missing dataset: exit $rc"

# ---- a NaN loss at step 25 (test hook): exit 1 with a clear message; the last good checkpoint
# (written at the best validation so far) stays ----
config cora_graphsage nan -e 's/num_epochs: "200"/num_epochs: "30"/' # (the NaN comes at step 25)
CGNN_TEST_NAN_AT_STEP=25 train nan; rc=$?
[[ $rc -eq 1 ]] && grep -Eq "loss is (NaN|infinite)" "$TMP/nan.err" && ok || bad "NaN loss: exit $rc, $(cat "$TMP/nan.err")"
[[ -s "$TMP/nan/model.safetensors" ]] && ok || bad "NaN loss: the last good checkpoint is missing"
[[ ! -e "$TMP/nan/eval_metrics.json" ]] && ok || bad "NaN loss: eval metrics written"
# ... and a real divergence (SGD with a huge learning rate) is caught the same way
config cora_graphsage div -e 's/optim_class_path: .*/optim_class_path: SGD/' -e 's/optim_lr: .*/optim_lr: "1e30"/'
train div; rc=$?
[[ $rc -eq 1 ]] && grep -Eq "loss is (NaN|infinite)" "$TMP/div.err" && ok || bad "diverging run: exit $rc, $(cat "$TMP/div.err")"

echo "test_train: $pass passed, $fails failed"
[[ $fails -eq 0 ]]
