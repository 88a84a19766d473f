#!/usr/bin/env bash
# test_resume_typed.sh CGNN — exact resume (trainerArgs.checkpoint_every_n_batches) on typed
# (heterogeneous) graphs, as tests/test_resume.sh does for homogeneous ones:
#   - DBLP node classification (data/dblp-mini: HeteroSAGE, Adam, StepLR, dropout, validation
#     every 3 steps on a shuffled subset, early stopping; the featureless `venue` type's learnable
#     table with SparseAdam) and Last.fm link prediction (data/lastfm-mini, user:listens:artist:
#     RGCN with 2 bases, every node type a learnable table, CosineAnnealingLR, random negatives of
#     the artist type, exclude_seed_edges): a run killed again and again — at random steps, half
#     way through writing a state file, by kill -9 at random moments — and started again until it
#     finishes ends with model.safetensors and eval_metrics.json byte-identical to an
#     uninterrupted run's; metrics.jsonl and the TensorBoard events hold the same records;
#   - the state holds every typed tensor: each featureless type's table, its SparseAdam moments
#     and its table at the best validation;
#   - the same under mpirun -np 2 (DBLP, an uneven split: one rank joins the last batch of each
#     epoch with no gradient);
#   - a state of the same job with other per-edge-type fanouts is refused with exit 2, naming the
#     state file and the field, and left in place.
# The random steps and delays come from RANDOM seeded with CGNN_TEST_SEED (printed).
set -u
CGNN=${1:?usage: test_resume_typed.sh path/to/cgnn}
[[ $CGNN == */* ]] && CGNN=$(cd "$(dirname "$CGNN")" && pwd)/$(basename "$CGNN")
SRC=${CGNN_SOURCE_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
PY=/usr/bin/python3
if [[ ! -x $PY ]]; then echo "SKIP: /usr/bin/python3 is needed to compare the logs"; exit 77; fi
TMP=$(mktemp -d /tmp/cgnn-resume-typed-XXXXXX)
trap '[[ -n ${KEEP:-} ]] || rm -rf "$TMP"' EXIT
cd "$SRC"
fails=0
pass=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }
SANITIZED=${CGNN_TEST_SANITIZED:-0}
SEED=${CGNN_TEST_SEED:-$(( $(date +%s) % 100000 ))}
RANDOM=$SEED
echo "test_resume_typed: random seed $SEED (CGNN_TEST_SEED=$SEED replays it)"
printf 'trainer_resource_config:\n  local_trainer_config: {num_workers: 2}\n' > "$TMP/resource.yaml"

MPIRUN=()
if "$CGNN" --version | grep -q "distributed: MPI" && command -v mpirun >/dev/null; then
  MPIRUN=(mpirun --oversubscribe --bind-to none)
  [[ $(id -u) -eq 0 ]] && MPIRUN+=(--allow-run-as-root)
  export OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none
  [[ $SANITIZED == 1 ]] && export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0"
fi

# ---- configs ----
# DBLP: 144 train authors, batch 32 -> 5 steps per epoch (the last one partial); validation every
# 3 steps on 2 shuffled batches, early stopping, StepLR; a state every 2 steps.
NC_EPOCHS=8
[[ $SANITIZED == 1 ]] && NC_EPOCHS=3
nc_config() { # nc_config NAME [sed expressions...]
  local name=$1
  shift
  sed -e "s#out/[a-z_]*/#$TMP/$name/#g" -e 's/main_sample_batch_size: "128"/main_sample_batch_size: "32"/' \
    -e "s/num_epochs: \"40\"/num_epochs: \"$NC_EPOCHS\"/" -e 's/val_every_num_batches: "0"/val_every_num_batches: "3"/' \
    -e 's/early_stop_patience: "10"/early_stop_patience: "4"\n    num_val_batches: "2"\n    lr_scheduler_name: StepLR\n    lr_scheduler_step_size: "7"\n    lr_scheduler_gamma: "0.7"\n    checkpoint_every_n_batches: "2"/' \
    "$@" examples/dblp_hetero_sage.yaml > "$TMP/$name.yaml"
}
# Last.fm: RGCN with 2 bases, batch 128, 24 steps, validation every 7 steps, a state every 3.
LP_STEPS=24
[[ $SANITIZED == 1 ]] && LP_STEPS=12
lp_config() { # lp_config NAME [sed expressions...]
  local name=$1
  shift
  sed -e "s#out/[a-z_]*/#$TMP/$name/#g" -e 's/gnn_model_class_path: HeteroSAGE/gnn_model_class_path: RGCN/' \
    -e 's/main_sample_batch_size: "512"/main_sample_batch_size: "128"/' \
    -e 's/random_negative_sample_batch_size: "512"/random_negative_sample_batch_size: "128"/' \
    -e 's/node_embedding_dim: "64"/node_embedding_dim: "16"/' -e 's/hidden_dim: "64"/hidden_dim: "32"/' \
    -e "s/num_epochs: \"10\"/num_epochs: \"2\"\n    num_max_train_batches: \"$LP_STEPS\"\n    num_bases: \"2\"\n    lr_scheduler_name: CosineAnnealingLR\n    lr_scheduler_t_max: \"20\"\n    checkpoint_every_n_batches: \"3\"/" \
    -e 's/val_every_num_batches: "0"/val_every_num_batches: "7"\n    num_val_batches: "2"\n    num_test_batches: "3"/' \
    "$@" examples/lastfm_hetero_sage_lp.yaml > "$TMP/$name.yaml"
}

# the shared helpers: train, kill_train, same_logs, check_same, crash_and_finish
. "$SRC/tests/resume_lib.sh"

# state_has NAME TENSOR... — the state file of NAME holds these tensors
state_has() {
  local name=$1 t
  shift
  for t in "$@"; do
    head -c 65536 "$TMP/$name/model.safetensors.state" | grep -aq "\"$t\"" && ok || bad "$name: the state lacks $t"
  done
}

# ---- DBLP node classification, one process ----
nc_config nc_ref
sed -e "s#$TMP/nc_ref/#$TMP/nc/#g" "$TMP/nc_ref.yaml" > "$TMP/nc.yaml"
if ! train 0 nc_ref; then echo "FAIL: dblp reference run failed: $(tail -5 "$TMP/nc_ref.log")"; exit 1; fi
steps=$(awk '/^trained/{print $2}' "$TMP/nc_ref.log")
echo "dblp-mini reference: $steps steps, $(grep -o 'training state: .*' "$TMP/nc_ref.log")"
[[ -e "$TMP/nc_ref/model.safetensors" && ! -e "$TMP/nc_ref/model.safetensors.state" ]] && ok || bad "dblp reference: outputs"
grep -q "training state: [0-9]* checkpoints" "$TMP/nc_ref.log" && ok || bad "dblp reference: no training state written"
crash_and_finish 0 nc "$steps" "dblp-mini"
check_same nc_ref nc "dblp-mini"

# the state's tensors; a state with other fanouts is refused and left as it was
train 0 nc CGNN_TEST_EXIT_AT_STEP=7 >/dev/null
state_has nc params optim.m optim.v best_params embedding_dict.venue.weight embedding_dict.venue.m \
  embedding_dict.venue.v embedding_dict.venue.best
cp "$TMP/nc/model.safetensors.state" "$TMP/nc.state.before"
# GiGL's per-edge-type form: the same fanouts except venue -> paper's second hop
fan='{("author", "writes", "paper"): [10, 10], ("paper", "written_by", "author"): [10, 10], ("paper", "has_term", "term"): [10, 10], ("term", "term_of", "paper"): [10, 10], ("paper", "published_in", "venue"): [10, 10], ("venue", "publishes", "paper"): [10, 5]}'
nc_config nc_fan -e "s/num_neighbors: .*/num_neighbors: '$fan'/"
sed -i "s#$TMP/nc_fan/#$TMP/nc/#g" "$TMP/nc_fan.yaml"
train 0 nc_fan; rc=$?
[[ $rc -eq 2 ]] && grep -q "model.safetensors.state: cannot resume.*typed.num_neighbors is 6 edge types' fanouts: \[10, 10\], .*\[10, 10\] in the state, .*\[10, 5\] in this job" "$TMP/nc_fan.log" && ok \
  || bad "other fanouts: exit $rc, $(tail -1 "$TMP/nc_fan.log")"
cmp -s "$TMP/nc.state.before" "$TMP/nc/model.safetensors.state" && ok || bad "a refused run changed the state file"
: >"$TMP/nc.log"
train 0 nc && grep -q "resuming from the training state" "$TMP/nc.log" && ok || bad "dblp after the refusal: $(tail -3 "$TMP/nc.log")"
check_same nc_ref nc "dblp-mini after the refusal"

# ---- Last.fm link prediction (RGCN, three learnable tables), one process ----
lp_config lp_ref
sed -e "s#$TMP/lp_ref/#$TMP/lp/#g" "$TMP/lp_ref.yaml" > "$TMP/lp.yaml"
if ! train 0 lp_ref; then echo "FAIL: lastfm reference run failed: $(tail -5 "$TMP/lp_ref.log")"; exit 1; fi
steps=$(awk '/^trained/{print $2}' "$TMP/lp_ref.log")
echo "lastfm-mini reference: $steps steps, $(grep -o 'training state: .*' "$TMP/lp_ref.log")"
crash_and_finish 0 lp "$steps" "lastfm-mini"
check_same lp_ref lp "lastfm-mini"
train 0 lp CGNN_TEST_EXIT_AT_STEP=10 >/dev/null # the state of step 9: after the best validation of step 7
state_has lp params embedding_dict.user.weight embedding_dict.artist.m embedding_dict.tag.v embedding_dict.artist.best
: >"$TMP/lp.log"
train 0 lp && grep -q "resuming from the training state" "$TMP/lp.log" && ok || bad "lastfm: last resume failed"
check_same lp_ref lp "lastfm-mini, resumed once more"

# ---- under mpirun -np 2: DBLP with batch 16 (slices of 5 and 4 batches: Join) ----
if [[ ${#MPIRUN[@]} -eq 0 ]]; then
  echo "SKIP (part): serial build or no mpirun: the data-parallel typed resume is not tested here"
else
  nc_config mnc_ref -e 's/main_sample_batch_size: "32"/main_sample_batch_size: "16"/'
  sed -e "s#$TMP/mnc_ref/#$TMP/mnc/#g" "$TMP/mnc_ref.yaml" > "$TMP/mnc.yaml"
  if ! train 2 mnc_ref; then echo "FAIL: mpi dblp reference run failed: $(tail -5 "$TMP/mnc_ref.log")"; exit 1; fi
  steps=$(awk '/^trained/{print $2}' "$TMP/mnc_ref.log")
  echo "dblp-mini, 2 ranks: $steps steps"
  crash_and_finish 2 mnc "$steps" "dblp-mini, 2 ranks"
  check_same mnc_ref mnc "dblp-mini, 2 ranks"
fi

echo "test_resume_typed: $pass passed, $fails failed (random seed $SEED)"
[[ $fails -eq 0 ]]
