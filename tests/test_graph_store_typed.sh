#!/usr/bin/env bash
# test_graph_store_typed.sh CGNN — server-client mode on a TYPED partition (docs/DISTRIBUTED.md, "Server-client
# mode", typed graphs): the storage ranks run the typed part sampler and gather every type's rows,
# the compute ranks decode the typed batches and train exactly as worker mode does:
#   - dblp-mini node classification (HeteroSAGE, venue featureless: its table replicated on the
#     compute ranks), 2 parts: 2 storage + 2 compute ranks write byte-identical model.safetensors
#     and eval metrics to 2 worker-mode ranks, local seeds and global seeds; 1 storage rank
#     holding both parts + 2 compute ranks as well; RGCN and HGT likewise;
#   - lastfm-mini link prediction (every type featureless, random negatives of the dst type,
#     exclude_seed_edges, dropout keyed by original ids), 2 parts: the same, global and local, and
#     1 storage rank holding both parts;
#   - evaluation of a trained typed model (shouldSkipTraining) = worker mode's;
#   - the traffic line of the storage ranks is printed;
#   - refusals (exit 2, named): the feature cache on a typed partition (the storage ranks' cache
#     is homogeneous), `cgnn embed` of a typed graph in server-client mode (exact resume of typed
#     server-client runs: tests/test_resume_graph_store.sh);
#     a storage rank answering a corrupted typed batch (the compute rank names it and the field);
#   - GiGL's e2e_het_dblp_sup_gs config with GiGL's graph-store resource config: served, and
#     stopped by its self-supervised split (built on a whole graph), exit 2.
set -u
CGNN=${1:?usage: test_graph_store_typed.sh path/to/cgnn}
TMP_PREFIX=cgnn-gstyped
source "$(dirname "$0")/graph_store_lib.sh"
# pair NAME EXAMPLE DATA RESOURCE NP_SERVER [sed...]: worker mode on 2 ranks vs server-client.
# In the sanitized pass, PAIR_SAN=server runs the server-client side alone: its worker-mode twin
# runs sanitized in test_train_typed_part.sh (dblp-mini HeteroSAGE and RGCN, lastfm-mini link
# prediction, local and global seeds), and the equality of the two is the plain pass's, as accuracy is.
pair() {
  local name=$1 example=$2 data=$3 res=$4 np=$5
  shift 5
  config "${name}_w" "$example" "$data" "$@"
  config "${name}_s" "$example" "$data" "$@"
  local worker=1
  [[ ${CGNN_TEST_SANITIZED:-0} == 1 && ${PAIR_SAN:-} == server ]] && worker=0
  ((worker)) && { run 2 "${name}_w" "" || bad "${name}_w failed: $(tail -3 "$TMP/${name}_w.err")"; }
  run "$np" "${name}_s" "$TMP/$res" || bad "${name}_s failed: $(tail -3 "$TMP/${name}_s.err")"
  if ((worker)); then same "${name}_w" "${name}_s"; else ok; fi
}

part data/dblp-mini 2 metis dblp2
part data/lastfm-mini 2 metis lastfm2
gsconf gs22.yaml 2 2
gsconf gs12.yaml 1 2

# ---- node classification, dblp-mini (venue featureless) ----
NC=(-e 's/num_epochs: "40"/num_epochs: "3"/' -e 's/main_sample_batch_size: "128"/main_sample_batch_size: "48"/')
GLOBAL=(-e 's/    seed: "0"/    seed: "0"\n    seed_assignment: global/')
PAIR_SAN=server pair nc dblp_hetero_sage "$TMP/dblp2" gs22.yaml 4 "${NC[@]}"
grep -q "graph store: .* batches built by 2 storage ranks" "$TMP/nc_s.err" && ok ||
  bad "no storage traffic line: $(tail -3 "$TMP/nc_s.err")"
grep -q '"embedding_dict.venue.weight"' <(head -c 65536 "$TMP/nc_s/model.safetensors") && ok ||
  bad "the server-client model lacks the venue table"
PAIR_SAN=server pair ncg dblp_hetero_sage "$TMP/dblp2" gs22.yaml 4 "${NC[@]}" "${GLOBAL[@]}"
cmp -s "$TMP/nc_s/model.safetensors" "$TMP/ncg_s/model.safetensors" && bad "global and local trained the same model" || ok
PAIR_SAN=server pair nc1 dblp_hetero_sage "$TMP/dblp2" gs12.yaml 3 "${NC[@]}" # 1 storage rank holding both parts
PAIR_SAN=server pair rgcn dblp_hetero_sage "$TMP/dblp2" gs22.yaml 4 "${NC[@]}" -e 's/gnn_model_class_path: HeteroSAGE/gnn_model_class_path: RGCN/'
pair hgt dblp_hetero_sage "$TMP/dblp2" gs22.yaml 4 "${NC[@]}" -e 's/gnn_model_class_path: HeteroSAGE/gnn_model_class_path: HGT/' \
  -e 's/main_sample_batch_size: "48"/main_sample_batch_size: "32"/'

# ---- link prediction, lastfm-mini (every type featureless) ----
LP=(-e 's/num_epochs: "10"/num_epochs: "1"/' -e 's/dropout: "0.0"/dropout: "0.3"/'
    -e 's/main_sample_batch_size: "512"/main_sample_batch_size: "256"/' -e 's/random_negative_sample_batch_size: "512"/random_negative_sample_batch_size: "128"/')
pair lp lastfm_hetero_sage_lp "$TMP/lastfm2" gs22.yaml 4 "${LP[@]}" "${GLOBAL[@]}"
PAIR_SAN=server pair lpl lastfm_hetero_sage_lp "$TMP/lastfm2" gs22.yaml 4 "${LP[@]}"
PAIR_SAN=server pair lp1 lastfm_hetero_sage_lp "$TMP/lastfm2" gs12.yaml 3 "${LP[@]}" "${GLOBAL[@]}" # 1 storage rank, both parts
for key in embedding_dict.user.weight embedding_dict.artist.weight embedding_dict.tag.weight; do
  head -c 65536 "$TMP/lp_s/model.safetensors" | grep -aq "\"$key\"" && ok || bad "the server-client LP model lacks $key"
done

# evaluating a trained model in server-client mode = in worker mode
EVAL=(-e 's/shouldSkipTraining: false/shouldSkipTraining: true/'
      -e "s#trainedModelUri: .*#trainedModelUri: $TMP/lp_w/model.safetensors#")
config ev_w lastfm_hetero_sage_lp "$TMP/lastfm2" "${LP[@]}" "${GLOBAL[@]}" "${EVAL[@]}"
config ev_s lastfm_hetero_sage_lp "$TMP/lastfm2" "${LP[@]}" "${GLOBAL[@]}" "${EVAL[@]}"
run 2 ev_w "" && run 4 ev_s "$TMP/gs22.yaml" || bad "evaluation runs failed: $(tail -3 "$TMP/ev_w.err" "$TMP/ev_s.err")"
cmp -s "$TMP/ev_w/eval_metrics.json" "$TMP/ev_s/eval_metrics.json" && ok ||
  bad "evaluation in server-client mode differs: $(cat "$TMP/ev_w/eval_metrics.json") vs $(cat "$TMP/ev_s/eval_metrics.json")"

# ---- refusals: exit 2, the reason named, no output written ----
expect() { # expect NAME CODE PATTERN RC
  local name=$1 code=$2 pattern=$3 rc=$4
  if [[ $rc -eq $code ]] && grep -q -- "$pattern" "$TMP/$name.err"; then ok
  else bad "$name: exit $rc (want $code), output: $(grep -i error "$TMP/$name.err" | head -3)"; fi
  [[ -e $TMP/$name/model.safetensors ]] && bad "$name wrote a model" || ok
}
config cache dblp_hetero_sage "$TMP/dblp2" "${NC[@]}" -e 's/    seed: "0"/    seed: "0"\n    cache_policy: hotness\n    cache_ratio: "0.2"/'
run 4 cache "$TMP/gs22.yaml"; expect cache 2 "cache_policy: .* is typed; train it with cache_policy: none" $?
timeout -k 10 300 "${MPIRUN[@]}" -np 4 "$CGNN" embed --task_config_uri="$TMP/nc_s.yaml" --resource_config_uri="$TMP/gs22.yaml" \
  --out "$TMP/emb" >"$TMP/emb.out" 2>"$TMP/emb.err"
rc=$?
if [[ $rc -eq 2 ]] && grep -q "typed" "$TMP/emb.err"; then ok; else bad "typed embed in server-client mode: exit $rc: $(tail -3 "$TMP/emb.err")"; fi

# a storage rank that answers a corrupted typed batch: the compute rank names it and the field, exit 2
config corrupt dblp_hetero_sage "$TMP/dblp2" "${NC[@]}"
run 4 corrupt "$TMP/gs22.yaml" CGNN_TEST_CORRUPT_BATCH=3 CGNN_TEST_FAULT_RANK=2
expect corrupt 2 "storage rank 0 (world rank 2, host [^)]*) answered a typed batch whose nodes of type [0-9] \[0\] = -1" $?

# GiGL's heterogeneous graph-store config (e2e_het_dblp_sup_gs, tests/gigl_configs/, untouched but
# for the dataset and outputs) with GiGL's graph-store resource config (2 storage + 2 compute
# ranks) on a partition of its dataset: the typed partition is served now; what stops it is its
# self-supervised split (ssl_positive_label_percentage), which is built on a whole graph, as in
# worker mode on parts (exit 2, named)
cp -r tests/fixtures/gigl_datasets/dblp_ssl "$TMP/dblp_ssl"
part "$TMP/dblp_ssl" 2 metis dblp_ssl2
awk -v ds="$TMP/dblp_ssl2" -v out="$TMP/gigl_het" '
  { print }
  /^sharedConfig:[ \t]*$/ { print "  preprocessedMetadataUri: " ds; print "  trainedModelMetadata:";
    print "    trainedModelUri: " out "/model.safetensors"; print "    evalMetricsUri: " out "/eval_metrics.json" }' \
  tests/gigl_configs/examples/link_prediction/graph_store/configs/e2e_het_dblp_sup_gs_task_config.yaml >"$TMP/gigl_het.yaml"
run 4 gigl_het tests/fixtures/gigl/e2e_glt_gs_resource_config.yaml
expect gigl_het 2 "ssl_positive_label_percentage: self-supervised splits are built on a whole graph; .* is served by storage ranks" $?
grep -q "serves homogeneous graphs only" "$TMP/gigl_het.err" && bad "the typed partition was refused as typed" || ok

echo "$pass checks passed, $fails failed"
[[ $fails -eq 0 ]]
