#!/usr/bin/env bash
# test_train_part.sh CGNN — training on a partitioned graph (docs/DISTRIBUTED.md, "Training on parts"):
#   - the partitioned run equals the replicated run byte for byte (model.safetensors and the
#     eval metrics JSON) with the same seed assignment:
#       Cora node classification, 2 parts (METIS) on 2 ranks: global, and local (the replicated
#       run takes the assignment from the partition: seed_partition_uri); 3 parts on 3 ranks;
#       facebook link prediction with learnable node embeddings (sharded by part), random
#       negatives and exclude_seed_edges, 3 parts on 3 ranks and 2 on 2 (global), and 2 parts on
#       4 ranks (ranks share parts: local);
#       evaluating a trained model with embeddings on parts (shouldSkipTraining);
#   - failures: a part count that does not fit the world, a missing part, a part of another
#     partitioning run (exit 2, named); a rank that dies, or whose server stops answering (a
#     time-out naming the peer), ends the whole job within seconds.
set -u
CGNN=${1:?usage: test_train_part.sh path/to/cgnn}
TMP_PREFIX=cgnn-trainpart
source "$(dirname "$0")/mpi_test_lib.sh"
run() { # run NP NAME [env...]
  local np=$1 name=$2
  shift 2
  env "$@" timeout -k 10 300 "${MPIRUN[@]}" -np "$np" "$CGNN" train --task_config_uri="$TMP/$name.yaml" \
    >"$TMP/$name.out" 2>"$TMP/$name.err"
}
same() { # same A B: the two runs wrote the same model and metrics
  if cmp -s "$TMP/$1/model.safetensors" "$TMP/$2/model.safetensors" &&
     cmp -s "$TMP/$1/eval_metrics.json" "$TMP/$2/eval_metrics.json"; then
    echo "ok: $2 = $1 ($(cat "$TMP/$2/eval_metrics.json" | tr -d '\n' | cut -c1-90))"
    ok
  else
    bad "$2 differs from $1: $(grep '^test:' "$TMP/$1.out") vs $(grep '^test:' "$TMP/$2.out")"
  fi
}
both() { # both NP A B: run both, compare
  run "$1" "$2" || bad "$2 failed: $(tail -3 "$TMP/$2.err")"
  run "$1" "$3" || bad "$3 failed: $(tail -3 "$TMP/$3.err")"
  same "$2" "$3"
}

part data/cora 2 metis cora2
part data/cora 2 random cora2r
part data/facebook-lp 3 metis fb3
part data/facebook-lp 2 random fb2

# ---- node classification, Cora, 2 parts on 2 ranks (dropout keyed by original ids) ----
NC=(-e 's/num_epochs: "200"/num_epochs: "4"/' -e 's/main_sample_batch_size: "140"/main_sample_batch_size: "32"/')
config nc_rep cora_graphsage data/cora "${NC[@]}" -e 's/    seed: "0"/    seed: "0"\n    seed_assignment: global/'
config nc_par cora_graphsage "$TMP/cora2" "${NC[@]}" -e 's/    seed: "0"/    seed: "0"\n    seed_assignment: global/'
both 2 nc_rep nc_par
grep -q "remote traffic per batch" "$TMP/nc_par.err" && ok || bad "no traffic line: $(tail -3 "$TMP/nc_par.err")"
config nc_repl cora_graphsage data/cora "${NC[@]}" -e "s#    seed: \"0\"#    seed: \"0\"\n    seed_partition_uri: $TMP/cora2#"
config nc_parl cora_graphsage "$TMP/cora2/cora.json" "${NC[@]}" # local: the default on parts
both 2 nc_repl nc_parl
grep -q "seed assignment: local" "$TMP/nc_parl.err" && ok || bad "local assignment not announced"
# 3 parts on 3 ranks (an uneven local split: ranks whose part runs out join)
part data/cora 3 metis cora3
config nc3_repl cora_graphsage data/cora "${NC[@]}" -e "s#    seed: \"0\"#    seed: \"0\"\n    seed_partition_uri: $TMP/cora3#"
config nc3_parl cora_graphsage "$TMP/cora3" "${NC[@]}"
both 3 nc3_repl nc3_parl

# ---- link prediction with sharded embeddings, facebook ----
LP=(-e 's/num_epochs: "4"/num_epochs: "1"/' -e 's/    seed: "0"/    seed: "0"\n    node_embedding_dim: "8"\n    num_max_train_batches: "10"/'
    -e 's/val_every_num_batches: "0"/val_every_num_batches: "5"/' -e 's/num_val_batches: "0"/num_val_batches: "2"/'
    -e 's/main_sample_batch_size: "512"/main_sample_batch_size: "128"/' -e 's/random_negative_sample_batch_size: "512"/random_negative_sample_batch_size: "64"/')
GLOBAL=(-e 's/num_val_batches: "2"/num_val_batches: "2"\n    num_test_batches: "3"\n    seed_assignment: global/')
config lp_rep facebook_lp_graphsage data/facebook-lp "${LP[@]}" "${GLOBAL[@]}"
config lp_par facebook_lp_graphsage "$TMP/fb3" "${LP[@]}" "${GLOBAL[@]}"
both 3 lp_rep lp_par
config lp2_rep facebook_lp_graphsage data/facebook-lp "${LP[@]}" "${GLOBAL[@]}"
config lp2_par facebook_lp_graphsage "$TMP/fb2" "${LP[@]}" "${GLOBAL[@]}"
both 2 lp2_rep lp2_par
LOCAL=(-e 's/num_val_batches: "2"/num_val_batches: "2"\n    num_test_batches: "3"/')
config lp4_rep facebook_lp_graphsage data/facebook-lp "${LP[@]}" "${LOCAL[@]}" \
  -e "s#num_test_batches: \"3\"#num_test_batches: \"3\"\n    seed_partition_uri: $TMP/fb2#"
config lp4_par facebook_lp_graphsage "$TMP/fb2" "${LP[@]}" "${LOCAL[@]}"
both 4 lp4_rep lp4_par

# evaluating a trained model with embeddings on parts = on the whole graph
EVAL=(-e 's/shouldSkipTraining: false/shouldSkipTraining: true/'
      -e "s#trainedModelUri: .*#trainedModelUri: $TMP/lp_rep/model.safetensors#")
config ev_rep facebook_lp_graphsage data/facebook-lp "${LP[@]}" "${GLOBAL[@]}" "${EVAL[@]}"
config ev_par facebook_lp_graphsage "$TMP/fb3" "${LP[@]}" "${GLOBAL[@]}" "${EVAL[@]}"
run 3 ev_rep && run 3 ev_par || bad "evaluation runs failed: $(tail -3 "$TMP/ev_rep.err" "$TMP/ev_par.err")"
cmp -s "$TMP/ev_rep/eval_metrics.json" "$TMP/ev_par/eval_metrics.json" && ok ||
  bad "evaluation on parts differs: $(cat "$TMP/ev_rep/eval_metrics.json") vs $(cat "$TMP/ev_par/eval_metrics.json")"

# ---- cgnn embed on parts: each rank its own nodes, layer by layer, remote rows of the previous
# layer from their owners; the .npy equals the replicated run's (SAGE + embeddings; GCN's norms)
embed() { # embed NP NAME CONFIG OUT
  timeout -k 10 300 "${MPIRUN[@]}" -np "$1" "$CGNN" embed --quiet --task_config_uri="$TMP/$3.yaml" --batch 700 \
    --out "$TMP/$4.npy" >"$TMP/$2.out" 2>"$TMP/$2.err" || bad "embed $2 failed: $(tail -3 "$TMP/$2.err")"
}
config emb_rep facebook_lp_graphsage data/facebook-lp "${LP[@]}" -e "s#trainedModelUri: .*#trainedModelUri: $TMP/lp_rep/model.safetensors#"
config emb_par facebook_lp_graphsage "$TMP/fb3" "${LP[@]}" -e "s#trainedModelUri: .*#trainedModelUri: $TMP/lp_rep/model.safetensors#"
embed 2 emb_rep emb_rep emb_rep
embed 3 emb_par emb_par emb_par
cmp -s "$TMP/emb_rep.npy" "$TMP/emb_par.npy" && ok || bad "embed on 3 parts differs from the replicated embed"
config gcn cora_gcn data/cora -e 's/num_epochs: "[0-9]*"/num_epochs: "3"/'
run 1 gcn || bad "cora gcn training failed: $(tail -3 "$TMP/gcn.err")"
config gcn_par cora_gcn "$TMP/cora2" -e "s#trainedModelUri: .*#trainedModelUri: $TMP/gcn/model.safetensors#"
embed 1 gcn_rep gcn gcn_rep
embed 2 gcn_par gcn_par gcn_par
cmp -s "$TMP/gcn_rep.npy" "$TMP/gcn_par.npy" && ok || bad "GCN embed on 2 parts differs from the replicated embed"

# ---- failures ----
expect() { # expect NAME CODE PATTERN: the run failed with CODE and rank 0 printed PATTERN
  local name=$1 code=$2 pattern=$3 rc=$4
  if [[ $rc -eq $code ]] && grep -q -- "$pattern" "$TMP/$name.err"; then ok
  else bad "$name: exit $rc (want $code), output: $(grep -i error "$TMP/$name.err" | head -3)"; fi
}
run 3 nc_par; expect nc_par 2 "the graph has 2 parts but the job has 3 ranks" $?
cp -r "$TMP/cora2" "$TMP/cora2m" && rm -rf "$TMP/cora2m/part1"
config missing cora_graphsage "$TMP/cora2m" "${NC[@]}"
run 2 missing; expect missing 2 "part 1 of .*cannot open" $?
rm -rf "$TMP/cora2m/part1" && cp -r "$TMP/cora2r/part1" "$TMP/cora2m/"
config mixed cora_graphsage "$TMP/cora2m" "${NC[@]}"
run 2 mixed; expect mixed 2 "written by another run of cgnn partition" $?
# a part whose in-degree is above the JSON's bound: refused by the check cgnn info runs too
# (tests/test_partition_cli.sh), with the same message
rm -rf "$TMP/cora2d" && cp -r "$TMP/cora2" "$TMP/cora2d"
sed -i 's/"max_in_degree": [0-9]*/"max_in_degree": 2/' "$TMP/cora2d/cora.json"
config deglow cora_graphsage "$TMP/cora2d" "${NC[@]}"
run 2 deglow; expect deglow 2 'in-edges, above "max_in_degree" 2' $?
"$CGNN" info "$TMP/cora2d" >"$TMP/deglow.info" 2>&1; rc=$?
[[ $rc -eq 2 ]] && grep -q 'in-edges, above "max_in_degree" 2' "$TMP/deglow.info" && ok \
  || bad "cgnn info on a partition training refuses: exit $rc, $(tail -1 "$TMP/deglow.info")"
ls "$TMP/missing" "$TMP/mixed" >/dev/null 2>&1 && bad "a refused run created its outputs" || ok
# an output naming one of the partition's files is refused, and the file is left as it was
cp "$TMP/cora2/cora.json" "$TMP/cora.json.orig"
config alias cora_graphsage "$TMP/cora2" "${NC[@]}" -e "s#trainedModelUri: .*#trainedModelUri: $TMP/cora2/cora.json#"
run 2 alias; expect alias 2 "is the partition JSON" $?
cmp -s "$TMP/cora2/cora.json" "$TMP/cora.json.orig" && ok || bad "the partition JSON was changed"
config dies cora_graphsage "$TMP/cora2" "${NC[@]}"
start=$(date +%s)
run 2 dies CGNN_TEST_EXIT_AT_STEP=3 CGNN_TEST_FAULT_RANK=1
rc=$?
took=$(( $(date +%s) - start ))
[[ $rc -ne 0 && $took -le 20 ]] && ok || bad "a dying rank: exit $rc after $took s"
config stall cora_graphsage "$TMP/cora2" "${NC[@]}" -e 's/    seed: "0"/    seed: "0"\n    rpc_timeout_s: "2"/'
start=$(date +%s)
run 2 stall CGNN_TEST_RPC_STALL_S=60 CGNN_TEST_FAULT_RANK=1
rc=$?
took=$(( $(date +%s) - start ))
if [[ $rc -ne 0 && $took -le 20 ]] && grep -q "to rank 1 on host .*: no reply within 2.0 s" "$TMP/stall.err"; then ok
else bad "a silent peer: exit $rc after $took s: $(grep -i error "$TMP/stall.err" | head -2)"; fi

echo "test_train_part: $pass passed, $fails failed"
[[ $fails -eq 0 ]]
