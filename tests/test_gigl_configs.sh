#!/usr/bin/env bash
# test_gigl_configs.sh CGNN — every task config and resource config of Snapchat/GiGL
# (tests/gigl_configs/, copied unchanged; tests/gigl_configs/README.md names GiGL's commit) runs
# with only what GiGL's config populator fills in rewritten: sharedConfig.preprocessedMetadataUri
# (the dataset) and sharedConfig.trainedModelMetadata (the outputs). Nothing else in a config is
# touched: no trainer argument, no batch limit (the datasets are small instead: a generated
# 400-node graph for the homogeneous configs, tests/fixtures/gigl_datasets/ for the typed ones,
# whose type names are GiGL's).
#
# Each config has one expected outcome in the table below:
#   0      exit status 0, the model written (non-empty), eval metrics written, steps > 0;
#   2:RE   exit status 2 with a message matching RE that names what is missing (graph-store
#          resource configs: the launch), and no model.
# GiGL's self-supervised configs (trainerArgs.ssl_positive_label_percentage) run on datasets
# without a link prediction task (*_ssl), as GiGL's data for them has no labels; the split's log
# line is checked. Typed configs that name no model train HGT (a log line says so).
# Never exit 0 with something silently different: a trainer argument cgnn accepts without effect
# must be named on a log line (checked for the configs that carry such arguments), and a config
# file without a row in the table fails the test.
set -u
CGNN=${1:?usage: test_gigl_configs.sh path/to/cgnn}
SRC=${CGNN_SOURCE_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
TMP=$(mktemp -d /tmp/cgnn-gigl-XXXXXX)
[[ ${KEEP:-0} == 1 ]] || trap 'rm -rf "$TMP"' EXIT
cd "$SRC"
fails=0
pass=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }
CFG=tests/gigl_configs

# ---- the datasets ----------------------------------------------------------------------
# homogeneous: node classification with 7 classes (GiGL's Cora configs say num_classes / out_dim 7)
# and a link_prediction task (held-out edge pairs)
if ! "$CGNN" generate --out "$TMP/data/hom" --nodes 400 --avg_degree 5 --classes 7 --feat_dim 16 \
     --link_prediction --seed 3 --name gigl-hom >"$TMP/gen.log" 2>&1; then
  echo "FAIL: cgnn generate: $(tail -3 "$TMP/gen.log")"
  exit 1
fi
# typed: copied so that the graph index cache is written under $TMP, not into the source tree
for d in tests/fixtures/gigl_datasets/*/; do cp -r "$d" "$TMP/data/"; done

# ---- the rewrite: what GiGL's config populator fills in, nothing else -------------------------
# rewrite SRC DATASET OUTDIR DST: drops a sharedConfig.preprocessedMetadataUri the config has
# (GiGL's scala test assets point at their own preprocessed_metadata.yaml) and puts the dataset and
# the trainedModelMetadata first under sharedConfig (added at the end when there is none).
rewrite() {
  local src=$1 ds=$2 out=$3 dst=$4
  if grep -q 'trainedModelMetadata' "$src"; then
    echo "rewrite: $src already has trainedModelMetadata" >&2
    return 1
  fi
  awk -v ds="$ds" -v out="$out" '
    function block() {
      print "  preprocessedMetadataUri: " ds
      print "  trainedModelMetadata:"
      print "    trainedModelUri: " out "/model.safetensors"
      print "    evalMetricsUri: " out "/eval_metrics.json"
      print "    tensorboardLogsUri: " out "/tensorboard/"
    }
    /^  preprocessedMetadataUri:/ { next }
    { print }
    /^sharedConfig:[ \t]*$/ { block(); done = 1 }
    END { if (!done) { print "sharedConfig:"; block() } }' "$src" >"$dst"
}

# run ID CONFIG DATASET [RESOURCE] — rewrites CONFIG into $TMP/ID.yaml, trains; the exit status is
# in $TMP/ID.rc, stdout / stderr in $TMP/ID.out / .err. GiGL's MAG240M heterogeneous config asks
# for 20000 training batches (HGT, hidden 256) and nothing else ends it: that one run is capped at
# 3 batches by the trainer's test hook CGNN_TEST_MAX_TRAIN_BATCHES (a log line says so), the
# config itself untouched.
run() {
  local id=$1 cfg=$2 ds=$3 res=${4:-}
  local args=() cap=
  rewrite "$cfg" "$TMP/data/$ds" "$TMP/out/$id" "$TMP/$id.yaml" || return 1
  [[ -n $res ]] && args=(--resource_config_uri="$res")
  [[ $cfg == */MAG240M/task_config_heterogeneous.yaml ]] && cap=3
  CGNN_TEST_MAX_TRAIN_BATCHES=$cap timeout -k 10 300 "$CGNN" train --job_name="$id" --task_config_uri="$TMP/$id.yaml" \
    "${args[@]}" >"$TMP/$id.out" 2>"$TMP/$id.err"
  echo $? >"$TMP/$id.rc"
}

# check ID WHAT EXPECT — EXPECT is 0 or 2:REGEX (above)
accepted=0
check() {
  local id=$1 what=$2 expect=$3 rc
  rc=$(cat "$TMP/$id.rc" 2>/dev/null || echo "?")
  [[ $rc == 0 ]] && accepted=$((accepted + 1))
  if [[ $expect == 0 ]]; then
    local steps
    steps=$(sed -n 's/^trained \([0-9]*\) steps*[ ;].*/\1/p' "$TMP/$id.out")
    if [[ $rc == 0 && -s $TMP/out/$id/model.safetensors && -s $TMP/out/$id/eval_metrics.json && ${steps:-0} -gt 0 ]]; then
      ok
      echo "ok   $what: exit 0, $steps steps, $(grep '^test:' "$TMP/$id.out")"
    else
      bad "$what: expected exit 0 with a model, got exit $rc: $(tail -n 2 "$TMP/$id.err")"
    fi
  else
    local re=${expect#2:}
    if [[ $rc == 2 ]] && grep -Eq "$re" "$TMP/$id.err" && [[ ! -e $TMP/out/$id/model.safetensors ]]; then
      ok
      echo "ok   $what: exit 2: $(grep -Eo "$re" "$TMP/$id.err" | head -1)"
    else
      bad "$what: expected exit 2 naming /$re/, got exit $rc: $(tail -n 2 "$TMP/$id.err")"
    fi
  fi
}

# ---- task configs: path | dataset | expected ---------------------------------------------------
# GiGL's graph-store resource configs ask for S + T ranks; this harness runs one process, so they
# must be refused naming the launch (tests/test_graph_store.sh trains with both under mpirun)
GS='2:ranks, but the job runs 1 process: launch mpirun -np 4'
TASKS=(
  "examples/MAG240M/task_config.yaml|hom|0"
  "examples/MAG240M/task_config_heterogeneous.yaml|mag_ssl|0"
  "examples/link_prediction/configs/e2e_het_dblp_sup_task_config.yaml|dblp_ssl|0"
  "examples/link_prediction/configs/e2e_hom_cora_sup_task_config.yaml|hom|0"
  "examples/link_prediction/graph_store/configs/e2e_het_dblp_sup_gs_task_config.yaml|dblp_ssl|0"
  "examples/link_prediction/graph_store/configs/e2e_hom_cora_sup_gs_task_config.yaml|hom|0"
  "examples/node_classification/configs/e2e_hom_cora_sup_task_config.yaml|hom|0"
  "examples/toy_visual_example/template_task_config.yaml|hom|0"
  "examples/tutorial/KDD_2025/task_config.yaml|user_story_ssl|0"
  "gigl/src/mocking/configs/dblp_node_anchor_based_link_prediction_template_gbml_config.yaml|dblp_to|0"
  "gigl/src/mocking/configs/e2e_node_anchor_based_link_prediction_template_gbml_config.yaml|hom|0"
  "gigl/src/mocking/configs/e2e_supervised_node_classification_template_gbml_config.yaml|hom|0"
  "gigl/src/mocking/configs/e2e_udl_node_anchor_based_link_prediction_template_gbml_config.yaml|hom|0"
  "scala/common/src/test/assets/split_generator/node_anchor_based_link_prediction/frozen_gbml_config.yaml|hom|0"
  "scala/common/src/test/assets/split_generator/supervised_node_classification/frozen_gbml_config.yaml|hom|0"
  "scala/common/src/test/assets/subgraph_sampler/heterogeneous/node_anchor_based_link_prediction/frozen_gbml_config_graphdb_dblp_local.yaml|ap_rel|0"
  "scala/common/src/test/assets/subgraph_sampler/node_anchor_based_link_prediction/frozen_gbml_config.yaml|hom|0"
  "scala/common/src/test/assets/subgraph_sampler/supervised_node_classification/frozen_gbml_config.yaml|hom|0"
  "scala_spark35/common/src/test/assets/split_generator/hetero_node_anchor_based_link_prediction/frozen_gbml_config.yaml|user_story|0"
  "scala_spark35/common/src/test/assets/split_generator/node_anchor_based_link_prediction/frozen_gbml_config.yaml|hom|0"
  "scala_spark35/common/src/test/assets/split_generator/supervised_node_classification/frozen_gbml_config.yaml|hom|0"
  "scala_spark35/common/src/test/assets/subgraph_sampler/heterogeneous/node_anchor_based_link_prediction/frozen_gbml_config_graphdb_dblp_local.yaml|ap_to|0"
  "scala_spark35/common/src/test/assets/subgraph_sampler/node_anchor_based_link_prediction/frozen_gbml_config.yaml|hom|0"
  "scala_spark35/common/src/test/assets/subgraph_sampler/supervised_node_classification/frozen_gbml_config.yaml|hom|0"
  "tests/api_test/api_test_task_config.yaml|hom|0"
  "tests/test_assets/small_graph/sgs_input_node_anchor_link_prediction.yaml|hom|0"
)
# ---- resource configs, each with one task config (GiGL's scala node classification asset) --------
RES_TASK=scala/common/src/test/assets/subgraph_sampler/supervised_node_classification/frozen_gbml_config.yaml
RESOURCES=(
  "deployment/configs/e2e_cicd_resource_config.yaml|0"
  "deployment/configs/e2e_glt_gs_resource_config.yaml|$GS"
  "deployment/configs/e2e_glt_resource_config.yaml|0"
  "deployment/configs/unittest_resource_config.yaml|0"
  "docs/examples/configs/template_resource_config.yaml|0"
  "examples/MAG240M/resource_config.yaml|0"
  "examples/MAG240M/resource_config_heterogeneous.yaml|0"
  "examples/link_prediction/configs/example_resource_config.yaml|0"
  "examples/link_prediction/graph_store/configs/example_resource_config.yaml|$GS"
  "examples/toy_visual_example/resource_config.yaml|0"
  "examples/tutorial/KDD_2025/resource_config.yaml|0"
  "scala/common/src/test/assets/resource_config.yaml|0"
  "scala_spark35/common/src/test/assets/resource_config.yaml|0"
  "tests/api_test/api_test_resource_config.yaml|0"
)

# every config file has a row, and every row a file
listed=$( { for r in "${TASKS[@]}"; do echo "${r%%|*}"; done; for r in "${RESOURCES[@]}"; do echo "${r%%|*}"; done; } | sort)
present=$(cd "$CFG" && find . -name '*.yaml' | sed 's#^\./##' | sort)
if [[ $listed == "$present" ]]; then ok; else
  bad "tests/gigl_configs and the table differ: $(diff <(echo "$listed") <(echo "$present") | grep '^[<>]' | tr '\n' ' ')"
fi

# id PATH — the run's name: the config's path with / and . as _
id() { local p=${1%.yaml}; p=${p//\//_}; echo "${p//./_}"; }
for row in "${TASKS[@]}"; do
  IFS='|' read -r path ds expect <<<"$row"
  run "$(id "$path")" "$CFG/$path" "$ds"
  check "$(id "$path")" "$path" "$expect"
done
task_accepted=$accepted
accepted=0
for row in "${RESOURCES[@]}"; do
  IFS='|' read -r path expect <<<"$row"
  run "res_$(id "$path")" "$CFG/$RES_TASK" hom "$CFG/$path"
  check "res_$(id "$path")" "resource $path" "$expect"
done
echo "accepted (exit 0): $task_accepted of ${#TASKS[@]} task configs, $accepted of ${#RESOURCES[@]} resource configs"

# ---- what GiGL's names did (not only that the configs were accepted) ----------------------------
# has ID REGEX WHAT — stderr of run ID matches REGEX
has() { grep -Eq "$2" "$TMP/$1.err" && ok || bad "$3: no /$2/ in $(tail -n 3 "$TMP/$1.err")"; }
steps() { sed -n 's/^trained \([0-9]*\) steps*[ ;].*/\1/p' "$TMP/$1.out"; }
# GiGL's node classification example: num_max_train_batches 200 of train_batch_size 16 (240 train
# nodes: 15 batches an epoch), validation every 50 (val_every_n_batch) on 20 batches, a progress
# line every 25 batches over epochs (log_every_n_batch: 8 lines); shouldSkipModelEvaluation with
# the in-memory backend still tests (eval metrics checked above)
nc=$(id examples/node_classification/configs/e2e_hom_cora_sup_task_config.yaml)
[[ $(steps "$nc") == 200 ]] && ok || bad "NC example: $(steps "$nc") steps, not num_max_train_batches 200"
has "$nc" "epoch 1: 15 steps" "NC example: train_batch_size 16 is not the batch size"
nlines=$(grep -c '^cgnn: epoch [0-9]* batch ' "$TMP/$nc.err")
[[ $nlines == 8 ]] && ok || bad "NC example: log_every_n_batch 25 over 200 batches: $nlines lines, not 8"
has "$nc" "GiGL's names read as cgnn's: num_classes = out_channels, train_batch_size = main_sample_batch_size, val_every_n_batch = val_every_num_batches" "NC example: the names note"
has "$nc" "shouldSkipModelEvaluation is true, but featureFlags.should_run_glt_backend is True" "NC example: in-memory evaluation note"
# the toy template (v1 names): hid_dim / out_dim 128 are the model's widths; margin, the
# *_sample_num_workers and should_l2_normalize_output are named as without effect
toy=$(id examples/toy_visual_example/template_task_config.yaml)
hdr=$(head -c 8192 "$TMP/out/$toy/model.safetensors" | tr -d '\0')
if grep -Eq '"convs\.0\.lin_l\.weight":\{[^}]*"shape":\[128, ?16\]' <<<"$hdr" &&
   grep -Eq '"convs\.1\.lin_l\.weight":\{[^}]*"shape":\[128, ?128\]' <<<"$hdr"; then ok; else
  bad "toy template: hid_dim / out_dim 128 not in the model's shapes"
fi
for k in margin train_main_sample_num_workers test_random_sample_num_workers should_l2_normalize_output; do
  has "$toy" "trainerArgs\.$k: accepted, no effect" "toy template: $k"
done
# the v1 NC template: batch_size 16, num_epochs 1 over 240 train nodes = 15 steps; out_dim 7
v1nc=$(id gigl/src/mocking/configs/e2e_supervised_node_classification_template_gbml_config.yaml)
[[ $(steps "$v1nc") == 15 ]] && ok || bad "v1 NC template: $(steps "$v1nc") steps, not 15 (batch_size 16, 1 epoch)"
# MAG240M (v1 names): train_main_num_workers 10; the random negative loaders' workers named
mag=$(id examples/MAG240M/task_config.yaml)
has "$mag" "10 sampler threads" "MAG240M: train_main_num_workers 10"
has "$mag" "trainerArgs\.val_random_negative_num_workers: accepted, no effect" "MAG240M: random negative workers note"
# val_main_num_workers / test_main_num_workers (4, 8) are threads only: the same numbers with 0
sed -e "s/val_main_num_workers: '4'/val_main_num_workers: '0'/" -e "s/test_main_num_workers: '8'/test_main_num_workers: '0'/" \
  "$CFG/examples/MAG240M/task_config.yaml" >"$TMP/mag0_src.yaml"
if grep -q "val_main_num_workers: '0'" "$TMP/mag0_src.yaml" && grep -q "test_main_num_workers: '0'" "$TMP/mag0_src.yaml"; then
  run mag0 "$TMP/mag0_src.yaml" hom
  if [[ $(cat "$TMP/mag0.rc") == 0 ]] && cmp -s "$TMP/out/mag0/eval_metrics.json" "$TMP/out/$mag/eval_metrics.json" &&
     cmp -s "$TMP/out/mag0/model.safetensors" "$TMP/out/$mag/model.safetensors"; then ok; else
    bad "MAG240M with 0 validation / test sampler threads differs from 4 / 8 (or failed: $(tail -n 1 "$TMP/mag0.err"))"
  fi
else
  bad "mag0: the sed did not apply"
fi

# the self-supervised configs: GiGL's split of the supervision edge type, its validation / test
# label edges out of message passing; typed configs without a model train HGT
kdd=$(id examples/tutorial/KDD_2025/task_config.yaml)
has "$kdd" "ssl_positive_label_percentage 0.7, num_val 0.3, num_test 0.3\): [0-9]+ of the [0-9]+ edges of user:to:story are labels" "KDD: the ssl split"
has "$kdd" "ssl: removed [0-9]+ validation / test label edges of user:to:story" "KDD: held-out edges removed"
dblp=$(id examples/link_prediction/configs/e2e_het_dblp_sup_task_config.yaml)
has "$dblp" "ssl_positive_label_percentage 0.05, num_val 0.1, num_test 0.1\): [0-9]+ of the [0-9]+ edges of paper:to:author are labels" "DBLP: the ssl split"
# GiGL's DBLP config names examples.link_prediction.heterogeneous_training and sets neither model,
# widths, batch sizes, learning rate nor a batch limit: the script's defaults are taken (one note)
has "$dblp" "link prediction: HGT on dblp_ssl" "DBLP: HGT (the script's model)"
has "$dblp" "GiGL's defaults of examples/link_prediction/heterogeneous_training.py for what trainerArgs leaves out: hid_dim=16, out_dim=16, main_batch_size=16, random_batch_size=16, learning_rate=0.0005, weight_decay=0.0005, num_max_train_batches=1000, num_val_batches=100, val_every_n_batch=50, gnn_model_class_path=gigl.src.common.models.pyg.heterogeneous.HGT, num_heads=2" "DBLP: the script's defaults note"
[[ $(steps "$dblp") == 1000 ]] && ok || bad "DBLP: $(steps "$dblp") steps, not the script's num_max_train_batches 1000"
gsdblp=$(id examples/link_prediction/graph_store/configs/e2e_het_dblp_sup_gs_task_config.yaml)
has "$gsdblp" "graph_store/heterogeneous_training.py for what trainerArgs leaves out: hid_dim=16, out_dim=16, main_batch_size=4, random_batch_size=4" "graph-store DBLP: that script's batch size 4"
# the NC example sets its own widths and limits: only what it leaves out comes from the script
has "$nc" "GiGL's defaults of examples/node_classification/homogeneous_training.py for what trainerArgs leaves out: hid_dim=16, learning_rate=0.001, weight_decay=0.0005 \\(" "NC example: the script's defaults note"
# the v1 task specs (trainerClsPath): their constructor's defaults
has "$v1nc" "node_classification_modeling_task_spec.py for what trainerArgs leaves out: gnn_model_class_path=gigl.src.common.models.pyg.homogeneous.GCN" "v1 NC template: the spec's defaults"
maghet=$(id examples/MAG240M/task_config_heterogeneous.yaml)
has "$maghet" "edges of paper:cites:paper are labels" "MAG240M heterogeneous: the ssl split"
has "$maghet" "CGNN_TEST_MAX_TRAIN_BATCHES \\(a test hook\\): at most 3 training batches \\(the config: 20000" "MAG240M heterogeneous: the cap"

# ---- profilerConfig as GiGL's trainer docs write it (snake_case, string args) -------------------
# schedule wait 0, warmup 1, active 2, repeat 2: steps 1, 2 and 4, 5 of the 15 are recorded
{
  cat "$CFG/$RES_TASK"
  echo "profilerConfig:"
  echo "  should_enable_profiler: true"
  echo "  profiler_log_dir: $TMP/out/prof/profile"
  echo "  profiler_args: {wait: '0', warmup: '1', active: '2', repeat: '2', with_stack: 'True', profile_memory: 'False'}"
  echo "trainerConfig:"
  echo "  trainerArgs: {main_sample_batch_size: '16', num_epochs: '1'}"
} >"$TMP/prof_src.yaml"
run prof "$TMP/prof_src.yaml" hom
if [[ $(cat "$TMP/prof.rc") == 0 ]]; then
  /usr/bin/python3 - "$TMP/out/prof/profile/trace_rank0.json" <<'PY' && ok || bad "profiler: the recorded steps are not 1, 2, 4, 5"
import json, sys
t = json.load(open(sys.argv[1]))
steps = sorted({e["args"]["batch"] for e in t["traceEvents"] if e.get("name") == "forward"})
print("profiler (wait 0, warmup 1, active 2, repeat 2): forward spans of batches", steps, "otherData", t["otherData"])
sys.exit(0 if steps == [1, 2, 4, 5] and t["otherData"]["repeat"] == 2 else 1)
PY
  has prof "profiler_args\.with_stack: accepted, no effect" "profiler: with_stack note"
  has prof "profiler_args\.profile_memory: accepted, no effect" "profiler: profile_memory note"
else
  bad "profiler run failed: $(tail -n 2 "$TMP/prof.err")"
fi

# ---- shouldSkipModelEvaluation ------------------------------------------------------------------
# the legacy trainer (no featureFlags.should_run_glt_backend): no test, no eval metrics, a note
sed 's/^sharedConfig:$/sharedConfig:\n  shouldSkipModelEvaluation: true/' "$CFG/$RES_TASK" >"$TMP/skip_src.yaml"
run skip "$TMP/skip_src.yaml" hom
if [[ $(cat "$TMP/skip.rc") == 0 && -s $TMP/out/skip/model.safetensors && ! -e $TMP/out/skip/eval_metrics.json ]] &&
   ! grep -q '^test:' "$TMP/skip.out"; then ok; else bad "legacy shouldSkipModelEvaluation: tested anyway, or failed"; fi
has skip "shouldSkipModelEvaluation: the test split is not evaluated" "legacy shouldSkipModelEvaluation note"
# both skip flags: GiGL's Trainer does nothing; neither does cgnn (the dataset does not even exist)
sed 's/^sharedConfig:$/sharedConfig:\n  shouldSkipModelEvaluation: true\n  shouldSkipTraining: true/' "$CFG/$RES_TASK" >"$TMP/none_src.yaml"
run none "$TMP/none_src.yaml" no-such-dataset
if [[ $(cat "$TMP/none.rc") == 0 && ! -e $TMP/out/none ]]; then ok; else
  bad "both skip flags: exit $(cat "$TMP/none.rc") or outputs touched: $(tail -n 1 "$TMP/none.err")"
fi
has none "nothing to do" "both skip flags: the log line"

echo "test_gigl_configs: $pass passed, $fails failed"
[[ $fails -eq 0 ]]
