#!/usr/bin/env bash
# test_train_typed_part.sh CGNN — training on a partitioned TYPED graph (docs/DISTRIBUTED.md, "Training on
# parts", typed graphs):
#   - the partitioned run equals the replicated typed run byte for byte (model.safetensors, with
#     the featureless types' tables, and the eval metrics JSON) with the same seed assignment:
#       dblp-mini node classification (HeteroSAGE), 2 parts (METIS) on 2 ranks: global, and
#       local (the replicated run takes the assignment from the partition: seed_partition_uri);
#       RGCN on 3 parts (random) on 3 ranks, local (an uneven split: ranks that run out join);
#       lastfm-mini link prediction (every type featureless, random negatives of the dst type,
#       exclude_seed_edges), 2 parts on 2 ranks (global) and 2 parts on 4 ranks (ranks share
#       parts: local);
#       evaluating a trained model on parts (shouldSkipTraining) = on the whole graph;
#   - the traffic line (requests and bytes per batch) is printed;
#   - failures: a part count that does not fit the world, a typed part of another run (exit 2,
#     named, no output written).
set -u
CGNN=${1:?usage: test_train_typed_part.sh path/to/cgnn}
TMP_PREFIX=cgnn-typedpart
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
    echo "ok: $2 = $1 ($(tr -d '\n' <"$TMP/$2/eval_metrics.json" | cut -c1-90))"
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

part data/dblp-mini 2 metis dblp2
part data/dblp-mini 3 random dblp3
part data/lastfm-mini 2 metis lastfm2

# ---- node classification, dblp-mini (venue featureless: its table replicated) ----
NC=(-e 's/num_epochs: "40"/num_epochs: "3"/' -e 's/main_sample_batch_size: "128"/main_sample_batch_size: "48"/')
GLOBAL=(-e 's/    seed: "0"/    seed: "0"\n    seed_assignment: global/')
config nc_rep dblp_hetero_sage data/dblp-mini "${NC[@]}" "${GLOBAL[@]}"
config nc_par dblp_hetero_sage "$TMP/dblp2" "${NC[@]}" "${GLOBAL[@]}"
both 2 nc_rep nc_par
grep -q "remote traffic per batch" "$TMP/nc_par.err" && ok || bad "no traffic line: $(tail -3 "$TMP/nc_par.err")"
grep -q '"embedding_dict.venue.weight"' <(head -c 65536 "$TMP/nc_par/model.safetensors") && ok ||
  bad "the parted model lacks the venue table"
config nc_repl dblp_hetero_sage data/dblp-mini "${NC[@]}" -e "s#    seed: \"0\"#    seed: \"0\"\n    seed_partition_uri: $TMP/dblp2#"
config nc_parl dblp_hetero_sage "$TMP/dblp2/dblp-mini.json" "${NC[@]}" # local: the default on parts
both 2 nc_repl nc_parl
grep -q "seed assignment: local" "$TMP/nc_parl.err" && ok || bad "local assignment not announced"
cmp -s "$TMP/nc_rep/model.safetensors" "$TMP/nc_parl/model.safetensors" && bad "global and local trained the same model" || ok
RGCN=(-e 's/gnn_model_class_path: HeteroSAGE/gnn_model_class_path: RGCN/')
config nc3_repl dblp_hetero_sage data/dblp-mini "${NC[@]}" "${RGCN[@]}" -e "s#    seed: \"0\"#    seed: \"0\"\n    seed_partition_uri: $TMP/dblp3#"
config nc3_parl dblp_hetero_sage "$TMP/dblp3" "${NC[@]}" "${RGCN[@]}"
both 3 nc3_repl nc3_parl

# ---- link prediction, lastfm-mini (every type featureless; dropout keyed by original ids) ----
LP=(-e 's/num_epochs: "10"/num_epochs: "1"/' -e 's/dropout: "0.0"/dropout: "0.3"/'
    -e 's/main_sample_batch_size: "512"/main_sample_batch_size: "256"/' -e 's/random_negative_sample_batch_size: "512"/random_negative_sample_batch_size: "128"/')
config lp_rep lastfm_hetero_sage_lp data/lastfm-mini "${LP[@]}" "${GLOBAL[@]}"
config lp_par lastfm_hetero_sage_lp "$TMP/lastfm2" "${LP[@]}" "${GLOBAL[@]}"
both 2 lp_rep lp_par
for key in embedding_dict.user.weight embedding_dict.artist.weight embedding_dict.tag.weight; do
  head -c 65536 "$TMP/lp_par/model.safetensors" | grep -aq "\"$key\"" && ok || bad "the parted LP model lacks $key"
done
config lp4_rep lastfm_hetero_sage_lp data/lastfm-mini "${LP[@]}" -e "s#    seed: \"0\"#    seed: \"0\"\n    seed_partition_uri: $TMP/lastfm2#"
config lp4_par lastfm_hetero_sage_lp "$TMP/lastfm2" "${LP[@]}"
both 4 lp4_rep lp4_par

# evaluating a trained model on parts = on the whole graph
EVAL=(-e 's/shouldSkipTraining: false/shouldSkipTraining: true/'
      -e "s#trainedModelUri: .*#trainedModelUri: $TMP/lp_rep/model.safetensors#")
config ev_rep lastfm_hetero_sage_lp data/lastfm-mini "${LP[@]}" "${GLOBAL[@]}" "${EVAL[@]}"
config ev_par lastfm_hetero_sage_lp "$TMP/lastfm2" "${LP[@]}" "${GLOBAL[@]}" "${EVAL[@]}"
run 2 ev_rep && run 2 ev_par || bad "evaluation runs failed: $(tail -3 "$TMP/ev_rep.err" "$TMP/ev_par.err")"
cmp -s "$TMP/ev_rep/eval_metrics.json" "$TMP/ev_par/eval_metrics.json" && ok ||
  bad "evaluation on typed parts differs: $(cat "$TMP/ev_rep/eval_metrics.json") vs $(cat "$TMP/ev_par/eval_metrics.json")"

# ---- failures ----
expect() { # expect NAME CODE PATTERN RC: the run failed with CODE and rank 0 printed PATTERN
  local name=$1 code=$2 pattern=$3 rc=$4
  if [[ $rc -eq $code ]] && grep -q -- "$pattern" "$TMP/$name.err"; then ok
  else bad "$name: exit $rc (want $code), output: $(grep -i error "$TMP/$name.err" | head -3)"; fi
}
config world dblp_hetero_sage "$TMP/dblp2" "${NC[@]}"
run 3 world; expect world 2 "the graph has 2 parts but the job has 3 ranks" $?
part data/dblp-mini 2 random dblp2r
cp -r "$TMP/dblp2" "$TMP/dblp2m" && rm -rf "$TMP/dblp2m/part1" && cp -r "$TMP/dblp2r/part1" "$TMP/dblp2m/"
config mixed dblp_hetero_sage "$TMP/dblp2m" "${NC[@]}"
run 2 mixed; expect mixed 2 "written by another run of cgnn partition" $?
ls "$TMP/world" "$TMP/mixed" >/dev/null 2>&1 && bad "a refused run created its outputs" || ok
# cgnn embed on a typed partition: refused by name (exit 2), nothing written
timeout -k 10 300 "${MPIRUN[@]}" -np 2 "$CGNN" embed --task_config_uri="$TMP/ev_par.yaml" --out="$TMP/emb_par" >"$TMP/emb_par.out" 2>"$TMP/emb_par.err"
expect emb_par 2 "cgnn embed does not run on typed parts yet" $?
[[ -e "$TMP/emb_par" ]] && bad "a refused embed created its output" || ok

echo "test_train_typed_part: $pass passed, $fails failed"
[[ $fails -eq 0 ]]
