#!/usr/bin/env bash
# test_graph_store.sh CGNN — server-client mode (GiGL's graph-store mode; docs/DISTRIBUTED.md, "Server-client
# mode"): storage ranks hold the parts and build whole mini-batches, compute ranks only train.
#   - the same numbers: 2 storage + 2 compute ranks write byte-identical model.safetensors and
#     eval metrics to 2 worker-mode ranks (Cora node classification, local seeds; facebook link
#     prediction with learnable embeddings, random negatives and exclude_seed_edges, global
#     seeds); 1 storage rank holding both parts + 4 compute ranks = 4 worker ranks (local seeds,
#     2 compute ranks per part); evaluation of a trained model (shouldSkipTraining);
#   - the feature cache never changes a number: hotness / halo in worker mode, degree and
#     hotness (and the adaptive s3fifo) on the storage ranks, against the runs without it; its log lines;
#   - GiGL's two graph-store resource configs (tests/fixtures/gigl/, unchanged) load and train;
#   - `cgnn embed` with a graph-store resource config = the worker-mode embed;
#   - failures: pools that do not add up to the world, parts that the storage ranks cannot
#     share, a dataset that is not partitioned (exit 2, named); a storage rank that stops
#     answering (its name in the message), a storage rank that dies and a compute rank that dies
#     each end the whole job within seconds; a NaN loss on the compute ranks ends every rank
#     with exit 1.
set -u
CGNN=${1:?usage: test_graph_store.sh path/to/cgnn}
TMP_PREFIX=cgnn-graphstore
source "$(dirname "$0")/graph_store_lib.sh"
has() { # has NAME PATTERN WHAT
  grep -q -- "$2" "$TMP/$1.err" && ok || bad "$1: no '$2' ($3): $(grep -i error "$TMP/$1.err" | head -2)"
}

part data/cora 2 metis cora2
part data/cora 3 metis cora3
part data/facebook-lp 2 random fb2
gsconf gs22.yaml 2 2
gsconf gs14.yaml 1 4

# ---- node classification, Cora, 2 parts: 2 workers = 2 storage + 2 compute ----
NC=(-e 's/num_epochs: "200"/num_epochs: "4"/' -e 's/main_sample_batch_size: "140"/main_sample_batch_size: "32"/')
config nc_w cora_graphsage "$TMP/cora2" "${NC[@]}"
config nc_s cora_graphsage "$TMP/cora2" "${NC[@]}"
run 2 nc_w "" || bad "worker run failed: $(tail -3 "$TMP/nc_w.err")"
run 4 nc_s "$TMP/gs22.yaml" || bad "server-client run failed: $(tail -3 "$TMP/nc_s.err")"
same nc_w nc_s
has nc_s "server-client mode (graph store): 2 storage ranks (world ranks 2-3), 2 compute ranks" "roles"
has nc_s "ignored (no meaning for CPU ranks here): graph_store_pool.machine_type n2-highmem-32" "ignored fields"
has nc_s "graph store: traffic per batch: compute <-> storage 1.00 requests" "one storage rank per compute rank"
has nc_s "seed assignment: local" "local seeds"

# ---- the feature cache never changes a number (worker mode and storage ranks) ----
CACHE() { echo "s/    seed: \"0\"/    seed: \"0\"\n    cache_policy: $1\n    cache_ratio: \"$2\"/"; }
config nc_w_hot cora_graphsage "$TMP/cora2" "${NC[@]}" -e "$(CACHE hotness 0.2)"
config nc_w_halo cora_graphsage "$TMP/cora2" "${NC[@]}" -e "$(CACHE halo 0.1)"
config nc_s_deg cora_graphsage "$TMP/cora2" "${NC[@]}" -e "$(CACHE degree 0.2)"
run 2 nc_w_hot "" || bad "cached worker run failed: $(tail -3 "$TMP/nc_w_hot.err")"
same nc_w nc_w_hot
has nc_w_hot "feature cache (hotness): [0-9]* rows" "the cache's size"
has nc_w_hot "feature cache: hit rate [0-9.]*% of" "hit rate and bytes saved"
run 2 nc_w_halo "" || bad "halo worker run failed: $(tail -3 "$TMP/nc_w_halo.err")"
same nc_w nc_w_halo
has nc_w_halo "feature cache (halo)" "the halo policy"
run 4 nc_s_deg "$TMP/gs22.yaml" || bad "cached server-client run failed: $(tail -3 "$TMP/nc_s_deg.err")"
same nc_w nc_s_deg
has nc_s_deg "graph store: feature cache (degree)" "the storage ranks' cache"
has nc_s_deg "graph store: feature cache: hit rate" "the storage ranks' hit rate"
# an adaptive cache on the storage ranks (their batch workers share it)
config nc_s_s3 cora_graphsage "$TMP/cora2" "${NC[@]}" -e "$(CACHE s3fifo 0.1)"
run 4 nc_s_s3 "$TMP/gs22.yaml" || bad "s3fifo server-client run failed: $(tail -3 "$TMP/nc_s_s3.err")"
same nc_w nc_s_s3
has nc_s_s3 "graph store: feature cache (s3fifo)" "the storage ranks' adaptive cache"
has nc_s_s3 "graph store: feature cache: hit rate" "the adaptive cache's hit rate"

# ---- GiGL's two graph-store resource configs, unchanged (2 + 2 ranks) ----
# (the plain pass: past the resource config's parsing, fuzzed and run sanitized in test_config
# and test_gigl_configs, these runs are nc_s's C)
GIGL_RES="example_resource_config e2e_glt_gs_resource_config"
[[ ${CGNN_TEST_SANITIZED:-0} == 1 ]] && GIGL_RES=""
for f in $GIGL_RES; do
  config "gigl_$f" cora_graphsage "$TMP/cora2" "${NC[@]}"
  run 4 "gigl_$f" "tests/fixtures/gigl/$f.yaml" || bad "GiGL's $f.yaml: $(tail -3 "$TMP/gigl_$f.err")"
  same nc_w "gigl_$f"
  has "gigl_$f" "compute_pool.gpu_type NVIDIA_TESLA_T4, compute_pool.gpu_limit 2" "GPU fields ignored"
done

# ---- link prediction with learnable embeddings, global seeds: 2 workers = 2 + 2 ----
LP=(-e 's/num_epochs: "4"/num_epochs: "1"/' -e 's/    seed: "0"/    seed: "0"\n    node_embedding_dim: "8"\n    num_max_train_batches: "8"/'
    -e 's/val_every_num_batches: "0"/val_every_num_batches: "4"/' -e 's/num_val_batches: "0"/num_val_batches: "2"/'
    -e 's/main_sample_batch_size: "512"/main_sample_batch_size: "128"/' -e 's/random_negative_sample_batch_size: "512"/random_negative_sample_batch_size: "64"/')
GLOBAL=(-e 's/num_val_batches: "2"/num_val_batches: "2"\n    num_test_batches: "3"\n    seed_assignment: global/')
config lp_w facebook_lp_graphsage "$TMP/fb2" "${LP[@]}" "${GLOBAL[@]}"
config lp_s facebook_lp_graphsage "$TMP/fb2" "${LP[@]}" "${GLOBAL[@]}" -e "$(CACHE hotness 0.2)"
run 2 lp_w "" || bad "LP worker run failed: $(tail -3 "$TMP/lp_w.err")"
run 4 lp_s "$TMP/gs22.yaml" || bad "LP server-client run failed: $(tail -3 "$TMP/lp_s.err")"
same lp_w lp_s
# evaluation only, from the trained model with its embedding table
EVAL=(-e 's/shouldSkipTraining: false/shouldSkipTraining: true/' -e "s#trainedModelUri: .*#trainedModelUri: $TMP/lp_w/model.safetensors#")
config ev_w facebook_lp_graphsage "$TMP/fb2" "${LP[@]}" "${GLOBAL[@]}" "${EVAL[@]}"
config ev_s facebook_lp_graphsage "$TMP/fb2" "${LP[@]}" "${GLOBAL[@]}" "${EVAL[@]}"
run 2 ev_w "" && run 4 ev_s "$TMP/gs22.yaml" || bad "evaluation runs failed: $(tail -2 "$TMP/ev_w.err" "$TMP/ev_s.err")"
cmp -s "$TMP/ev_w/eval_metrics.json" "$TMP/ev_s/eval_metrics.json" && ok ||
  bad "server-client evaluation differs: $(cat "$TMP/ev_w/eval_metrics.json") vs $(cat "$TMP/ev_s/eval_metrics.json")"
# local seeds, 2 parts on 4 compute ranks; one storage rank holds both parts (k = 2)
# (the sanitized pass runs the server-client side alone: its worker twin, 2 parts on 4 ranks with
# local seeds, runs sanitized in test_train_part.sh; the equality is the plain pass's)
config lp4_w facebook_lp_graphsage "$TMP/fb2" "${LP[@]}"
config lp4_s facebook_lp_graphsage "$TMP/fb2" "${LP[@]}"
if [[ ${CGNN_TEST_SANITIZED:-0} != 1 ]]; then
  run 4 lp4_w "" || bad "LP 4-rank worker run failed: $(tail -3 "$TMP/lp4_w.err")"
fi
run 5 lp4_s "$TMP/gs14.yaml" || bad "LP 1 + 4 run failed: $(tail -3 "$TMP/lp4_s.err")"
if [[ ${CGNN_TEST_SANITIZED:-0} != 1 ]]; then same lp4_w lp4_s; else ok; fi

# ---- cgnn embed under the same launch (worker-mode inference over every rank) ----
config emb facebook_lp_graphsage "$TMP/fb2" "${LP[@]}" -e "s#trainedModelUri: .*#trainedModelUri: $TMP/lp_w/model.safetensors#"
timeout -k 10 300 "${MPIRUN[@]}" -np 2 "$CGNN" embed --quiet --task_config_uri="$TMP/emb.yaml" --out "$TMP/emb_w.npy" \
  >"$TMP/emb_w.out" 2>&1 || bad "worker embed failed: $(tail -3 "$TMP/emb_w.out")"
timeout -k 10 300 "${MPIRUN[@]}" -np 4 "$CGNN" embed --quiet --task_config_uri="$TMP/emb.yaml" \
  --resource_config_uri="$TMP/gs22.yaml" --out "$TMP/emb_s.npy" >"$TMP/emb_s.out" 2>&1 ||
  bad "embed with the graph-store config failed: $(tail -3 "$TMP/emb_s.out")"
cmp -s "$TMP/emb_w.npy" "$TMP/emb_s.npy" && ok || bad "embed with the graph-store config differs"
# server-client embed (compute ranks run the layers on the storage ranks' one-hop blocks) = one
# process on the whole dataset: learnable embeddings + features (GraphSAGE), and GCN's full-graph
# norms; chunks of 500 nodes, 2 + 2 and 1 + 3 ranks
config emb1 facebook_lp_graphsage data/facebook-lp "${LP[@]}" -e "s#trainedModelUri: .*#trainedModelUri: $TMP/lp_w/model.safetensors#"
"$CGNN" embed --quiet --task_config_uri="$TMP/emb1.yaml" --out "$TMP/emb_1.npy" >"$TMP/emb_1.out" 2>&1 ||
  bad "single-process embed failed: $(tail -3 "$TMP/emb_1.out")"
cmp -s "$TMP/emb_1.npy" "$TMP/emb_s.npy" && ok || bad "server-client embed differs from the single-process embed"
gsconf gs13.yaml 1 3
config gcn1 cora_gcn data/cora -e 's/num_epochs: "200"/num_epochs: "3"/'
config gcn_p cora_gcn "$TMP/cora2" -e 's/num_epochs: "200"/num_epochs: "3"/' \
  -e "s#trainedModelUri: .*#trainedModelUri: $TMP/gcn1/model.safetensors#"
"$CGNN" train --quiet --task_config_uri="$TMP/gcn1.yaml" >"$TMP/gcn1.out" 2>&1 || bad "GCN training failed: $(tail -3 "$TMP/gcn1.out")"
"$CGNN" embed --quiet --task_config_uri="$TMP/gcn1.yaml" --out "$TMP/gcn_1.npy" >>"$TMP/gcn1.out" 2>&1 ||
  bad "single-process GCN embed failed: $(tail -3 "$TMP/gcn1.out")"
for gs in gs22 gs13; do
  timeout -k 10 300 "${MPIRUN[@]}" -np 4 "$CGNN" embed --batch 500 --task_config_uri="$TMP/gcn_p.yaml" \
    --resource_config_uri="$TMP/$gs.yaml" --out "$TMP/gcn_$gs.npy" >"$TMP/gcn_$gs.out" 2>&1 ||
    bad "server-client GCN embed ($gs) failed: $(tail -3 "$TMP/gcn_$gs.out")"
  cmp -s "$TMP/gcn_1.npy" "$TMP/gcn_$gs.npy" && ok || bad "server-client GCN embed ($gs) differs from one process"
done
# the blocks came from the storage ranks: 3 passes (norms, 2 layers) x 6 chunks of 500 of 2708 nodes
grep -q "graph store: 18 batches built by 2 storage ranks for 2 compute ranks" "$TMP/gcn_gs22.out" && ok ||
  bad "server-client GCN embed: expected 18 batches from the storage ranks: $(grep 'graph store' "$TMP/gcn_gs22.out")"
# a model of 0 layers (matrix factorisation, L2-normalised): the compute ranks' rows are the table's
for n in mf1 mf_p; do
  data=data/facebook-lp/metadata.yaml
  [[ $n == mf_p ]] && data=$TMP/fb2
  printf 'taskMetadata:\n  nodeAnchorBasedLinkPredictionTaskMetadata: {}\nsharedConfig:\n  preprocessedMetadataUri: %s\n  trainedModelMetadata:\n    trainedModelUri: %s\n    evalMetricsUri: %s\ntrainerConfig:\n  trainerArgs:\n    num_layers: "0"\n    node_embedding_dim: "8"\n    should_l2_normalize_embedding_layer_output: "true"\n    main_sample_batch_size: "64"\n    random_negative_sample_batch_size: "64"\n    task_path: BPR\n    num_epochs: "1"\n    num_max_train_batches: "5"\n' \
    "$data" "$TMP/mf/model.safetensors" "$TMP/mf/eval_metrics.json" >"$TMP/$n.yaml"
done
"$CGNN" train --quiet --task_config_uri="$TMP/mf1.yaml" >"$TMP/mf1.out" 2>&1 &&
  "$CGNN" embed --quiet --task_config_uri="$TMP/mf1.yaml" --out "$TMP/mf_1.npy" >>"$TMP/mf1.out" 2>&1 ||
  bad "MF training / single-process embed failed: $(tail -3 "$TMP/mf1.out")"
timeout -k 10 300 "${MPIRUN[@]}" -np 4 "$CGNN" embed --quiet --task_config_uri="$TMP/mf_p.yaml" \
  --resource_config_uri="$TMP/gs22.yaml" --out "$TMP/mf_s.npy" >"$TMP/mf_s.out" 2>&1 || bad "server-client MF embed failed: $(tail -3 "$TMP/mf_s.out")"
cmp -s "$TMP/mf_1.npy" "$TMP/mf_s.npy" && ok || bad "server-client MF embed differs from one process"
timeout -k 10 300 "${MPIRUN[@]}" -np 4 "$CGNN" embed --quiet --task_config_uri="$TMP/gcn_p.yaml" --activations_dir "$TMP/act" \
  --resource_config_uri="$TMP/gs22.yaml" --out "$TMP/gcn_act.npy" >"$TMP/gcn_act.out" 2>&1
rc=$?
[[ $rc -eq 2 ]] && grep -q "activations stay in the compute ranks' memory" "$TMP/gcn_act.out" && [[ ! -e "$TMP/gcn_act.npy" ]] &&
  ok || bad "server-client embed with --activations_dir: rc $rc, $(tail -2 "$TMP/gcn_act.out")"

# ---- refused before anything is written (exit 2, named) ----
expect() { # expect NAME CODE PATTERN RC
  if [[ $4 -eq $2 ]] && grep -q -- "$3" "$TMP/$1.err"; then ok
  else bad "$1: exit $4 (want $2), output: $(grep -i error "$TMP/$1.err" | head -3)"; fi
}
config e_world cora_graphsage "$TMP/cora2" "${NC[@]}"
run 3 e_world "$TMP/gs22.yaml"; expect e_world 2 "graph_store_pool.num_replicas 2 + compute ranks 2 .* = 4 ranks, but the job runs 3 processes" $?
config e_parts cora_graphsage "$TMP/cora3" "${NC[@]}"
run 4 e_parts "$TMP/gs22.yaml"; expect e_parts 2 "the graph has 3 parts but the job has 2 storage ranks" $?
config e_whole cora_graphsage data/cora "${NC[@]}"
run 4 e_whole "$TMP/gs22.yaml"; expect e_whole 2 "needs a partitioned graph" $?
printf 'trainer_resource_config:\n  vertex_ai_graph_store_trainer_config:\n    graph_store_pool: {machine_type: x}\n    compute_pool: {num_replicas: 2}\n' >"$TMP/gs_bad.yaml"
run 2 e_world "$TMP/gs_bad.yaml"; expect e_world 2 "graph_store_pool.*num_replicas is missing" $?
ls "$TMP/e_world" "$TMP/e_parts" "$TMP/e_whole" >/dev/null 2>&1 && bad "a refused run created its outputs" || ok

# ---- failures during training end the whole job, within seconds ----
config f_stall cora_graphsage "$TMP/cora2" "${NC[@]}" -e 's/    seed: "0"/    seed: "0"\n    rpc_timeout_s: "2"/'
start=$(date +%s)
run 4 f_stall "$TMP/gs22.yaml" CGNN_TEST_RPC_STALL_S=60 CGNN_TEST_FAULT_RANK=2
rc=$?
took=$(( $(date +%s) - start ))
if [[ $rc -ne 0 && $took -le 45 ]] &&
   grep -Eq "to rank 2 on host .*: no reply within [0-9.]+ s|storage rank 0 \(world rank 2" "$TMP/f_stall.err"; then ok
else bad "a silent storage rank: exit $rc after $took s: $(grep -i error "$TMP/f_stall.err" | head -2)"; fi
config f_sdie cora_graphsage "$TMP/cora2" "${NC[@]}"
start=$(date +%s)
run 4 f_sdie "$TMP/gs22.yaml" CGNN_TEST_STORAGE_EXIT_AFTER=3 CGNN_TEST_FAULT_RANK=3
rc=$?
took=$(( $(date +%s) - start ))
# (the launcher names it: "Process name: [[JOB,1],3]")
if [[ $rc -ne 0 && $took -le 45 ]] && grep -q "Process name: \[\[[0-9]*,1\],3\]" "$TMP/f_sdie.err"; then ok
else bad "a dying storage rank: exit $rc after $took s: $(tail -3 "$TMP/f_sdie.err")"; fi
config f_cdie cora_graphsage "$TMP/cora2" "${NC[@]}"
start=$(date +%s)
run 4 f_cdie "$TMP/gs22.yaml" CGNN_TEST_EXIT_AT_STEP=2 CGNN_TEST_FAULT_RANK=1
rc=$?
took=$(( $(date +%s) - start ))
[[ $rc -ne 0 && $took -le 45 ]] && ok || bad "a dying compute rank: exit $rc after $took s: $(tail -3 "$TMP/f_cdie.err")"

# a malformed batch from a storage rank (its 3rd answer names node -1): the compute rank refuses
# it naming the storage rank and the field; exit 2, no model; the same for server-client embed
config f_bad cora_graphsage "$TMP/cora2" "${NC[@]}"
start=$(date +%s)
run 4 f_bad "$TMP/gs22.yaml" CGNN_TEST_CORRUPT_BATCH=3 CGNN_TEST_FAULT_RANK=2
rc=$?
took=$(( $(date +%s) - start ))
if [[ $rc -eq 2 && $took -le 45 && ! -e "$TMP/f_bad/model.safetensors" ]] &&
   grep -q "storage rank 0 (world rank 2, host [^)]*) answered a batch whose input_nodes\[0\] = -1 is not a node" "$TMP/f_bad.err"; then ok
else bad "a malformed batch: exit $rc after $took s: $(grep -i error "$TMP/f_bad.err" | head -2)"; fi
CGNN_TEST_CORRUPT_BATCH=2 CGNN_TEST_FAULT_RANK=3 timeout -k 10 300 "${MPIRUN[@]}" -np 4 "$CGNN" embed --quiet --batch 500 \
  --task_config_uri="$TMP/gcn_p.yaml" --resource_config_uri="$TMP/gs22.yaml" --out "$TMP/gcn_bad.npy" >"$TMP/gcn_bad.out" 2>&1
rc=$?
if [[ $rc -eq 2 && ! -e "$TMP/gcn_bad.npy" ]] &&
   grep -q "storage rank 1 (world rank 3, host [^)]*) answered a batch whose input_nodes\[0\] = -1" "$TMP/gcn_bad.out"; then ok
else bad "server-client embed, a malformed block: exit $rc, $(grep -i error "$TMP/gcn_bad.out" | head -2)"; fi

# an orderly failure on the compute ranks (a NaN loss): every rank ends with its exit status
config f_nan cora_graphsage "$TMP/cora2" "${NC[@]}"
start=$(date +%s)
run 4 f_nan "$TMP/gs22.yaml" CGNN_TEST_NAN_AT_STEP=2
rc=$?
took=$(( $(date +%s) - start ))
if [[ $rc -eq 1 && $took -le 45 ]] && grep -q "training loss is NaN at step 2" "$TMP/f_nan.err"; then ok
else bad "a NaN loss in server-client mode: exit $rc after $took s: $(grep -i error "$TMP/f_nan.err" | head -2)"; fi

echo "test_graph_store: $pass passed, $fails failed"
[[ $fails -eq 0 ]]
