# graph_store_lib.sh — sourced by the server-client CLI tests (test_graph_store.sh,
# test_graph_store_typed.sh) once they have set CGNN and TMP_PREFIX: mpi_test_lib.sh, then the
# graph-store resource config, run and compare helpers both use.
source "$(dirname "${BASH_SOURCE[0]}")/mpi_test_lib.sh"
gsconf() { # gsconf NAME S T: a graph-store resource config
  printf 'trainer_resource_config:\n  vertex_ai_graph_store_trainer_config:\n    graph_store_pool:\n      machine_type: n2-highmem-32\n      num_replicas: %d\n    compute_pool:\n      machine_type: n1-standard-16\n      gpu_type: NVIDIA_TESLA_T4\n      gpu_limit: 2\n      num_replicas: %d\n' "$2" "$3" >"$TMP/$1"
}
run() { # run NP NAME [RESOURCE] [env...]: worker mode, or server-client with a resource config
  local np=$1 name=$2 res=${3:-}
  shift 3
  local r=()
  [[ -n $res ]] && r=(--resource_config_uri="$res")
  env "$@" timeout -k 10 300 "${MPIRUN[@]}" -np "$np" "$CGNN" train --task_config_uri="$TMP/$name.yaml" "${r[@]}" \
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
