# graph_store_lib.sh — sourced by the server-client CLI tests (test_graph_store.sh,
# test_graph_store_typed.sh) once they have set CGNN and TMP_PREFIX: the MPI launch (or exit 77
# on a serial build), a temporary folder, pass / fail counters, and the partition, config,
# graph-store resource config, run and compare helpers both use.
SRC=${CGNN_SOURCE_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
if ! "$CGNN" --version | grep -q "distributed: MPI"; then echo "SKIP: serial build (CGNN_WITH_MPI=OFF)"; exit 77; fi
if ! command -v mpirun >/dev/null; then echo "SKIP: mpirun not installed (openmpi-bin)"; exit 77; fi
MPIRUN=(mpirun --oversubscribe --bind-to none)
[[ $(id -u) -eq 0 ]] && MPIRUN+=(--allow-run-as-root)
export OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none
[[ ${CGNN_TEST_SANITIZED:-0} == 1 ]] && export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0"
TMP=$(mktemp -d "/tmp/$TMP_PREFIX-XXXXXX")
trap "[[ -n \"${KEEP:-}\" ]] || rm -rf \"$TMP\"" EXIT
cd "$SRC"
fails=0
pass=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }

part() { # part DATASET P METHOD OUT
  "$CGNN" partition --dataset "$1" --num_parts "$2" --method "$3" --out "$TMP/$4" >"$TMP/$4.log" 2>&1 ||
    bad "cgnn partition $1 into $2 failed: $(tail -3 "$TMP/$4.log")"
}
config() { # config NAME EXAMPLE DATA [sed expressions...]: outputs under $TMP/NAME/
  local name=$1 example=$2 data=$3
  shift 3
  sed -e "s#out/[a-z_]*/#$TMP/$name/#g" -e "s#preprocessedMetadataUri: [^ ]*#preprocessedMetadataUri: $data#" \
    "$@" "examples/$example.yaml" >"$TMP/$name.yaml"
}
gsconf() { # gsconf NAME S T: a graph-store resource config
  printf 'trainer_resource_config:\n  vertex_ai_graph_store_trainer_config:\n    graph_store_pool:\n      machine_type: n2-highmem-32\n      num_replicas: %d\n    compute_pool:\n      machine_type: n1-standard-16\n      gpu_type: NVIDIA_TESLA_T4\n      gpu_limit: 2\n      num_replicas: %d\n' "$2" "$3" >"$TMP/$1"
}
run() { # run NP NAME [RESOURCE] [env...]: worker mode, or server-client with a resource config
  local np=$1 name=$2 res=${3:-}
  shift 3
  local r=()
  [[ -n $res ]] && r=(--resource_config_uri="$res")
  env "$@" timeout 300 "${MPIRUN[@]}" -np "$np" "$CGNN" train --task_config_uri="$TMP/$name.yaml" "${r[@]}" \
    >"$TMP/$name.out" 2>"$TMP/$name.err"
}
same() { # same A B: the two runs wrote the same model and metrics
  if cmp -s "$TMP/$1/model.safetensors" "$TMP/$2/model.safetensors" &&
     cmp -s "$TMP/$1/eval_metrics.json" "$TMP/$2/eval_metrics.json"; then
    echo "ok: $2 = $1 ($(tr -d '\n' <"$TMP/$2/eval_metrics.json" | cut -c1-80))"
    ok
  else
    bad "$2 differs from $1: $(grep '^test:' "$TMP/$1.out") vs $(grep '^test:' "$TMP/$2.out")"
  fi
}
