# mpi_test_lib.sh — sourced by the CLI tests that launch mpirun (test_mpi.sh, test_train_part.sh,
# test_train_typed_part.sh, and through graph_store_lib.sh the server-client tests) once they
# have set CGNN and TMP_PREFIX: the MPI launch (or exit 77 on a serial build), then test_lib.sh (a
# temporary folder kept when KEEP is set, pass / fail counters), and the part and config helpers.
SRC=${CGNN_SOURCE_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
if ! "$CGNN" --version | grep -q "distributed: MPI"; then echo "SKIP: serial build (CGNN_WITH_MPI=OFF)"; exit 77; fi
if ! command -v mpirun >/dev/null; then echo "SKIP: mpirun not installed (openmpi-bin)"; exit 77; fi
MPIRUN=(mpirun --oversubscribe --bind-to none)
[[ $(id -u) -eq 0 ]] && MPIRUN+=(--allow-run-as-root)
export OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none
# OpenMPI keeps allocations alive past MPI_Finalize by design; LeakSanitizer would report them
[[ ${CGNN_TEST_SANITIZED:-0} == 1 ]] && export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0"
source "$(dirname "${BASH_SOURCE[0]}")/test_lib.sh"

part() { # part DATASET P METHOD OUT
  "$CGNN" partition --dataset "$1" --num_parts "$2" --method "$3" --out "$TMP/$4" >"$TMP/$4.log" 2>&1 ||
    bad "cgnn partition $1 into $2 failed: $(tail -3 "$TMP/$4.log")"
}
# The sanitized pass (CGNN_TEST_SANITIZED=1) evaluates 2 validation and 3 test batches per rank
# where the example evaluates whole splits (num_*_batches: "0"): evaluation dominated these short
# runs (Cora, batch 32: 16 + 32 evaluation batches an epoch against 3 training steps), and the
# code it runs is the same for batch 3 as for batch 30. Both sides of every comparison get the
# same config, so the equalities still hold; the plain pass evaluates whole splits. A test whose
# comparison needs whole splits (across world sizes: the batches are per rank) sets
# SAN_WHOLE_EVAL=1 before calling config.
SAN_EVAL=()
# ... and trains at most 6 batches a run (the trainer's test hook CGNN_TEST_MAX_TRAIN_BATCHES; a log
# line says so): the memory and UB checks need each code path once, not 40 steps of it (the
# typed link-prediction runs: 40 steps an epoch), and both sides of a comparison get the same
# cap. A test whose checks need more steps (test_mpi.sh: faults at step 20) sets SAN_KEEP_STEPS=1
# before sourcing this file.
[[ ${CGNN_TEST_SANITIZED:-0} == 1 && -z ${SAN_KEEP_STEPS:-} ]] && export CGNN_TEST_MAX_TRAIN_BATCHES=6
[[ ${CGNN_TEST_SANITIZED:-0} == 1 ]] &&
  SAN_EVAL=(-e 's/num_val_batches: "0"/num_val_batches: "2"/' -e 's/num_test_batches: "0"/num_test_batches: "3"/')
config() { # config NAME EXAMPLE DATA [sed expressions...]: outputs under $TMP/NAME/
  local name=$1 example=$2 data=$3 san=("${SAN_EVAL[@]}")
  shift 3
  [[ ${SAN_WHOLE_EVAL:-0} == 1 ]] && san=()
  # (the caller's expressions first: one that sets a limit of its own keeps it)
  sed -e "s#out/[a-z_]*/#$TMP/$name/#g" -e "s#preprocessedMetadataUri: [^ ]*#preprocessedMetadataUri: $data#" \
    "$@" "${san[@]}" "examples/$example.yaml" >"$TMP/$name.yaml"
}
