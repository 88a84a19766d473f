#!/usr/bin/env bash
# test_resume_graph_store.sh CGNN — exact resume in server-client mode (train/graph_store.h):
# 2 storage + 2 compute ranks (one mpirun -np 4 with GiGL's graph-store resource config) on
# 2-part partitions, trainerArgs.checkpoint_every_n_batches set:
#   - Facebook link prediction with a learnable embedding table (SparseAdam, CosineAnnealingLR,
#     random negatives, validation) and Cora node classification (validation, early stopping,
#     StepLR): a run killed again and again (CGNN_TEST_EXIT_AT_STEP on a compute rank, an exit
#     half way through a state write, kill -9 of a random rank — compute or storage — at a random
#     moment) and started again with the same command ends with model.safetensors and
#     eval_metrics.json byte-identical to those of a 2 + 2 run never interrupted, the same logs;
#   - the storage ranks may change (1 storage + 2 compute resumes a 2 + 2 state: the storage
#     ranks hold no training state and never change the numbers);
#   - a state from another partition of the same dataset, or from another number of compute
#     ranks, is refused with exit 2 naming the state file and the field;
#   - typed graphs (the featureless types' tables replicated on the compute ranks): dblp-mini node
#     classification killed again and again, lastfm-mini link prediction (3 tables) stopped at a
#     step on 2 + 2 and finished by 1 + 2, both byte-identical to the uninterrupted 2 + 2 run.
# Random steps and delays come from RANDOM seeded with CGNN_TEST_SEED (printed).
set -u
CGNN=${1:?usage: test_resume_graph_store.sh path/to/cgnn}
[[ $CGNN == */* ]] && CGNN=$(cd "$(dirname "$CGNN")" && pwd)/$(basename "$CGNN")
SRC=${CGNN_SOURCE_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
PY=/usr/bin/python3
if [[ ! -x $PY ]]; then echo "SKIP: /usr/bin/python3 is needed to compare the logs"; exit 77; fi
if ! "$CGNN" --version | grep -q "distributed: MPI" || ! command -v mpirun >/dev/null; then
  echo "SKIP: serial build or no mpirun: server-client mode needs MPI"; exit 77
fi
TMP=$(mktemp -d /tmp/cgnn-resume-gs-XXXXXX)
trap 'rm -rf "$TMP"' EXIT
cd "$SRC"
fails=0
pass=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }
SANITIZED=${CGNN_TEST_SANITIZED:-0}
SEED=${CGNN_TEST_SEED:-$(( $(date +%s) % 100000 ))}
RANDOM=$SEED
echo "test_resume_graph_store: random seed $SEED (CGNN_TEST_SEED=$SEED replays it)"
MPIRUN=(mpirun --oversubscribe --bind-to none)
[[ $(id -u) -eq 0 ]] && MPIRUN+=(--allow-run-as-root)
export OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none
[[ $SANITIZED == 1 ]] && export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0"

gsconf() { # gsconf FILE S T: a graph-store resource config
  printf 'trainer_resource_config:\n  vertex_ai_graph_store_trainer_config:\n    graph_store_pool:\n      num_replicas: %d\n    compute_pool:\n      num_replicas: %d\n' "$2" "$3" >"$TMP/$1"
}
gsconf gs22.yaml 2 2
gsconf gs12.yaml 1 2
gsconf gs13.yaml 1 3
GS=$TMP/gs22.yaml
part() { # part DATASET P METHOD OUT
  "$CGNN" partition --dataset "$1" --num_parts "$2" --method "$3" --out "$TMP/$4" >"$TMP/$4.log" 2>&1 ||
    { echo "FAIL: cgnn partition $1 failed: $(tail -3 "$TMP/$4.log")"; exit 1; }
}
part data/facebook-lp 2 random fb2
part data/facebook-lp 2 metis fb2m
part data/cora 2 metis cora2

. "$SRC/tests/resume_lib.sh"
# resume_lib's train, with every run a server-client job: mpirun -np NP with the resource config $GS
train() {
  local np=$1 name=$2
  shift 2
  local cmd=("${MPIRUN[@]}" -np "$np" "$CGNN" train --job_name="$name" --task_config_uri="$TMP/$name.yaml"
             --resource_config_uri="$GS")
  echo "== $* ${cmd[*]}" >>"$TMP/$name.log"
  env "$@" timeout -k 10 300 "${cmd[@]}" >>"$TMP/$name.log" 2>&1
}

# ---- Facebook link prediction, learnable embeddings: batch 128, 24 steps, a state every 3 ----
LP_STEPS=24
[[ $SANITIZED == 1 ]] && LP_STEPS=12
lp_config() { # lp_config NAME DATA [sed expressions...]
  local name=$1 data=$2
  shift 2
  sed -e "s#out/[a-z_]*/#$TMP/$name/#g" -e "s#preprocessedMetadataUri: [^ ]*#preprocessedMetadataUri: $data#" \
    -e 's/main_sample_batch_size: "512"/main_sample_batch_size: "128"/' \
    -e 's/random_negative_sample_batch_size: "512"/random_negative_sample_batch_size: "128"/' \
    -e "s/num_epochs: \"4\"/num_epochs: \"2\"\n    num_max_train_batches: \"$LP_STEPS\"\n    node_embedding_dim: \"16\"\n    lr_scheduler_name: CosineAnnealingLR\n    lr_scheduler_t_max: \"30\"\n    checkpoint_every_n_batches: \"3\"/" \
    -e 's/val_every_num_batches: "0"/val_every_num_batches: "7"/' \
    -e 's/num_val_batches: "0"/num_val_batches: "2"\n    num_test_batches: "3"/' \
    "$@" examples/facebook_lp_graphsage.yaml > "$TMP/$name.yaml"
}
lp_config lp_ref "$TMP/fb2"
sed -e "s#$TMP/lp_ref/#$TMP/lp/#g" "$TMP/lp_ref.yaml" > "$TMP/lp.yaml"
if ! train 4 lp_ref; then echo "FAIL: LP 2 + 2 reference run failed: $(tail -5 "$TMP/lp_ref.log")"; exit 1; fi
steps=$(awk '/^trained/{print $2}' "$TMP/lp_ref.log")
echo "facebook-lp, 2 storage + 2 compute: $steps steps, $(grep -o 'training state: .*' "$TMP/lp_ref.log")"
crash_and_finish 4 lp "$steps" "facebook-lp 2 + 2"
check_same lp_ref lp "facebook-lp 2 + 2"

# the storage pool changes between the crash and the resume: 2 + 2 state, 1 + 2 finish
: >"$TMP/lp.log"
# (a step the run reaches: 4 .. 13, or 4 .. steps - 2 in the sanitized pass's 12-step run; an exit
# drawn past the end left no state: CI failed on it)
# (drawn in this shell, not a subshell: CGNN_TEST_SEED replays it)
at=$((4 + RANDOM % (steps - 5 < 10 ? steps - 5 : 10)))
train 4 lp CGNN_TEST_EXIT_AT_STEP=$at CGNN_TEST_FAULT_RANK=1 >/dev/null
[[ -e "$TMP/lp/model.safetensors.state" ]] && ok || bad "facebook-lp: no state after the exit at a step"
GS=$TMP/gs12.yaml
train 3 lp && grep -q "resuming from the training state" "$TMP/lp.log" && ok ||
  bad "facebook-lp: 1 + 2 did not resume the 2 + 2 state: $(tail -3 "$TMP/lp.log")"
check_same lp_ref lp "facebook-lp, 2 + 2 resumed by 1 + 2"
GS=$TMP/gs22.yaml

# refused: another partition of the same dataset; another number of compute ranks
train 4 lp CGNN_TEST_EXIT_AT_STEP=5 >/dev/null
cp "$TMP/lp/model.safetensors.state" "$TMP/lp.state.before"
lp_config lp_m "$TMP/fb2m"
sed -i "s#$TMP/lp_m/#$TMP/lp/#g" "$TMP/lp_m.yaml"
train 4 lp_m; rc=$?
# (the first differing field: the splits' seeds in the other partition's new ids, or its id)
[[ $rc -eq 2 ]] && grep -Eq "model.safetensors.state: cannot resume.*(partition|dataset\.[a-z_]+\.hash) is .* in the state, .* in this job" "$TMP/lp_m.log" && ok \
  || bad "another partition: exit $rc, $(grep -i 'error' "$TMP/lp_m.log" | tail -2)"
GS=$TMP/gs13.yaml
train 4 lp; rc=$?
[[ $rc -eq 2 ]] && grep -q "cannot resume.*world_size is 2 in the state, 3 in this job" "$TMP/lp.log" && ok \
  || bad "3 compute ranks on a 2-rank state: exit $rc, $(grep -i 'error' "$TMP/lp.log" | tail -2)"
GS=$TMP/gs22.yaml
cmp -s "$TMP/lp.state.before" "$TMP/lp/model.safetensors.state" && ok || bad "a refused run changed the state file"

# ---- Cora node classification: batch 32, 6 epochs, validation every 3 steps, early stopping ----
NC_EPOCHS=6
NC_TEST=() # the sanitized pass tests on 3 batches per rank (whole test split: the plain pass)
[[ $SANITIZED == 1 ]] && NC_EPOCHS=3 NC_TEST=(-e 's/num_test_batches: "0"/num_test_batches: "3"/')
nc_config() { # nc_config NAME
  sed -e "s#out/[a-z_]*/#$TMP/$1/#g" -e "s#preprocessedMetadataUri: [^ ]*#preprocessedMetadataUri: $TMP/cora2#" \
    -e 's/main_sample_batch_size: "140"/main_sample_batch_size: "32"/' \
    -e "s/num_epochs: \"200\"/num_epochs: \"$NC_EPOCHS\"/" -e 's/val_every_num_batches: "0"/val_every_num_batches: "3"/' \
    -e 's/num_val_batches: "0"/num_val_batches: "2"/' "${NC_TEST[@]}" \
    -e 's/early_stop_patience: "20"/early_stop_patience: "4"\n    lr_scheduler_name: StepLR\n    lr_scheduler_step_size: "7"\n    lr_scheduler_gamma: "0.7"\n    checkpoint_every_n_batches: "2"/' \
    examples/cora_graphsage.yaml > "$TMP/$1.yaml"
}
nc_config nc_ref
sed -e "s#$TMP/nc_ref/#$TMP/nc/#g" "$TMP/nc_ref.yaml" > "$TMP/nc.yaml"
if ! train 4 nc_ref; then echo "FAIL: cora 2 + 2 reference run failed: $(tail -5 "$TMP/nc_ref.log")"; exit 1; fi
steps=$(awk '/^trained/{print $2}' "$TMP/nc_ref.log")
echo "cora, 2 storage + 2 compute: $steps steps"
crash_and_finish 4 nc "$steps" "cora 2 + 2"
check_same nc_ref nc "cora 2 + 2"

# ---- typed graphs: dblp-mini node classification (typed features + the venue table) and
# lastfm-mini link prediction (every type featureless: 3 replicated tables), 2 + 2 ----
part data/dblp-mini 2 metis dblp2
part data/lastfm-mini 2 metis lastfm2
tnc_config() { # tnc_config NAME
  sed -e "s#out/[a-z_]*/#$TMP/$1/#g" -e "s#preprocessedMetadataUri: [^ ]*#preprocessedMetadataUri: $TMP/dblp2#" \
    -e 's/num_epochs: "40"/num_epochs: "4"\n    checkpoint_every_n_batches: "2"/' \
    -e 's/main_sample_batch_size: "128"/main_sample_batch_size: "16"/' examples/dblp_hetero_sage.yaml > "$TMP/$1.yaml"
}
tnc_config tnc_ref
tnc_config tnc
if ! train 4 tnc_ref; then echo "FAIL: dblp-mini 2 + 2 reference run failed: $(tail -5 "$TMP/tnc_ref.log")"; exit 1; fi
steps=$(awk '/^trained/{print $2}' "$TMP/tnc_ref.log")
echo "dblp-mini (typed), 2 storage + 2 compute: $steps steps"
crash_and_finish 4 tnc "$steps" "dblp-mini 2 + 2"
check_same tnc_ref tnc "dblp-mini 2 + 2"
# (the sanitized pass: 16 of the 2 epochs' steps; the exit comes at step 4 .. 13 either way)
TLP_CAP=()
[[ $SANITIZED == 1 ]] && TLP_CAP=(-e 's/checkpoint_every_n_batches: "2"/checkpoint_every_n_batches: "2"\n    num_max_train_batches: "16"/')
tlp_config() { # tlp_config NAME
  sed -e "s#out/[a-z_]*/#$TMP/$1/#g" -e "s#preprocessedMetadataUri: [^ ]*#preprocessedMetadataUri: $TMP/lastfm2#" \
    -e 's/num_epochs: "10"/num_epochs: "2"\n    checkpoint_every_n_batches: "2"/' "${TLP_CAP[@]}" -e 's/dropout: "0.0"/dropout: "0.3"/' \
    -e 's/main_sample_batch_size: "512"/main_sample_batch_size: "128"/' \
    -e 's/random_negative_sample_batch_size: "512"/random_negative_sample_batch_size: "128"/' \
    -e 's/val_every_num_batches: "0"/val_every_num_batches: "3"/' examples/lastfm_hetero_sage_lp.yaml > "$TMP/$1.yaml"
}
tlp_config tlp_ref
tlp_config tlp
if ! train 4 tlp_ref; then echo "FAIL: lastfm-mini 2 + 2 reference run failed: $(tail -5 "$TMP/tlp_ref.log")"; exit 1; fi
steps=$(awk '/^trained/{print $2}' "$TMP/tlp_ref.log")
echo "lastfm-mini (typed), 2 storage + 2 compute: $steps steps"
# the storage pool changes between the crash and the resume: 2 + 2 state, 1 + 2 finish
at=$((4 + RANDOM % (steps - 5 < 10 ? steps - 5 : 10)))
train 4 tlp CGNN_TEST_EXIT_AT_STEP=$at CGNN_TEST_FAULT_RANK=1 >/dev/null
[[ -e "$TMP/tlp/model.safetensors.state" ]] && ok || bad "lastfm-mini: no state after the exit at a step"
GS=$TMP/gs12.yaml
train 3 tlp && grep -q "resuming from the training state" "$TMP/tlp.log" && ok ||
  bad "lastfm-mini: 1 + 2 did not resume the 2 + 2 state: $(tail -3 "$TMP/tlp.log")"
GS=$TMP/gs22.yaml
check_same tlp_ref tlp "lastfm-mini, 2 + 2 resumed by 1 + 2"

echo "test_resume_graph_store: $pass passed, $fails failed"
[[ $fails -eq 0 ]]
