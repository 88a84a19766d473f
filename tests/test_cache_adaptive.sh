#!/usr/bin/env bash
# test_cache_adaptive.sh CGNN — the adaptive feature cache (sample/cache_policy.h, GraphBolt's
# SIEVE / S3-FIFO / LRU / CLOCK; docs/DISTRIBUTED.md, "Feature cache") on a partitioned graph:
#   - it never changes a number: Cora, 2 parts on 2 ranks, each adaptive policy (10% of the
#     nodes) writes the same model.safetensors and eval metrics as the run without a cache;
#   - its log lines (slots and bytes at the start, policy and hit rate at the end);
#   - the hit counts are reproducible when the batches reach the cache in a defined order (the
#     loaders without worker threads): two such runs log the same hits over the same lookups.
set -u
CGNN=${1:?usage: test_cache_adaptive.sh path/to/cgnn}
TMP_PREFIX=cgnn-cacheadapt
source "$(dirname "$0")/mpi_test_lib.sh"
run() { # run NAME
  timeout -k 10 300 "${MPIRUN[@]}" -np 2 "$CGNN" train --task_config_uri="$TMP/$1.yaml" >"$TMP/$1.out" 2>"$TMP/$1.err" ||
    bad "$1 failed: $(tail -3 "$TMP/$1.err")"
}
same() { # same A B
  if cmp -s "$TMP/$1/model.safetensors" "$TMP/$2/model.safetensors" &&
     cmp -s "$TMP/$1/eval_metrics.json" "$TMP/$2/eval_metrics.json"; then
    echo "ok: $2 = $1"
    ok
  else
    bad "$2 differs from $1"
  fi
}
has() { # has NAME PATTERN WHAT
  if grep -q "$2" "$TMP/$1.err"; then ok; else bad "$1: no $3 ($2): $(grep -i cache "$TMP/$1.err" | head -3)"; fi
}

part data/cora 2 metis cora2
NC=(-e 's/num_epochs: "200"/num_epochs: "2"/' -e 's/main_sample_batch_size: "140"/main_sample_batch_size: "32"/')
CACHE() { echo "s/    seed: \"0\"/    seed: \"0\"\n    cache_policy: $1\n    cache_ratio: \"0.1\"/"; }
W0='s/train_main_num_workers: "2"/train_main_num_workers: "0"/'
config none cora_graphsage "$TMP/cora2" "${NC[@]}"
run none
for p in s3fifo lru clock; do
  config "$p" cora_graphsage "$TMP/cora2" "${NC[@]}" -e "$(CACHE "$p")"
  run "$p"
  same none "$p"
  has "$p" "feature cache ($p, adaptive): [0-9]* slots" "the cache's size"
  has "$p" "feature cache ($p, [0-9]* rows = [0-9.]*% of the remote rows, [0-9.]* MiB): hit rate [0-9.]*% over [0-9]* lookups" "the hit rate"
done
for r in 1 2; do
  config "sieve$r" cora_graphsage "$TMP/cora2" "${NC[@]}" -e "$(CACHE sieve)" -e "$W0"
  run "sieve$r"
  same none "sieve$r" # (the worker count never changes the batches)
done
h1=$(grep -o "hit rate [0-9.]*% over [0-9]* lookups" "$TMP/sieve1.err")
h2=$(grep -o "hit rate [0-9.]*% over [0-9]* lookups" "$TMP/sieve2.err")
if [[ -n $h1 && $h1 == "$h2" ]]; then echo "ok: sieve hits reproducible: $h1"; ok; else bad "sieve hits differ: '$h1' vs '$h2'"; fi
if [[ $h1 != "hit rate 0.0%"* ]]; then ok; else bad "no hits at all: $h1"; fi
echo "test_cache_adaptive: $pass passed, $fails failed"
[[ $fails -eq 0 ]]
