#!/usr/bin/env bash
# test_blas_choice.sh CGNN — the BLAS kernel choice (nn/blas.h) as users see it:
#   - `cgnn info` (no dataset) names the BLAS kernels and who chose them, and prints the
#     measured float32 peak per vector width the CPU has;
#   - where OpenBLAS's own choice is narrower than the CPU (imitated on any AVX2 CPU by the hook
#     CGNN_TEST_BLAS_NARROW=1, which makes it count as Prescott): cgnn sets OPENBLAS_CORETYPE
#     and re-executes itself; `cgnn info` and the training log name the kernels chosen and why;
#     two such runs give the same bits; a chosen set that fails the check against the float64
#     reference (hook CGNN_TEST_BLAS_CHECK_FAIL=1) is dropped for OpenBLAS's own, and the log
#     says so;
#   - a user's OPENBLAS_CORETYPE is kept as it is, and cgnn says when it leaves width unused.
set -u
CGNN=${1:?usage: test_blas_choice.sh path/to/cgnn}
TMP_PREFIX=cgnn-blas
source "$(dirname "$0")/test_lib.sh"
has() { # has FILE PATTERN WHAT
  grep -Eq -- "$2" "$1" && ok || bad "$3: no '$2' in: $(head -5 "$1")"
}

"$CGNN" info --threads 1 >"$TMP/info.out" 2>&1 && ok || bad "cgnn info: $(cat "$TMP/info.out")"
cat "$TMP/info.out"
if grep -q "not OpenBLAS" "$TMP/info.out"; then
  echo "SKIP: this build's CBLAS is not OpenBLAS: no kernel choice to test"
  exit 77
fi
has "$TMP/info.out" "^BLAS: OpenBLAS [0-9.]+, [A-Za-z0-9]+ kernels \(" "the kernel line"
has "$TMP/info.out" "^float32 peak, 128-bit multiply \+ add: [0-9.]+ GFLOP/s" "the SSE peak"
width=$(sed -n 's/.*float32 vector width: \([0-9]*\)-bit.*/\1/p' "$TMP/info.out")
[[ $width == 256 || $width == 512 ]] && has "$TMP/info.out" "^float32 peak, $width-bit FMA: [0-9.]+ GFLOP/s" "the widest peak"

if [[ $width != 256 && $width != 512 ]]; then
  echo "SKIP (not counted): the CPU has no AVX2: no wider kernels to choose"
else
  want=Haswell
  [[ $width == 512 ]] && want=SkylakeX
  CGNN_TEST_BLAS_NARROW=1 "$CGNN" info --threads 1 >"$TMP/narrow.out" 2>&1 && ok || bad "hooked cgnn info failed"
  has "$TMP/narrow.out" "^BLAS: OpenBLAS [0-9.]+, $want kernels \(chosen by cgnn: OpenBLAS picked Prescott on a CPU with $width-bit vectors; checked against the float64 reference\)" \
    "cgnn's choice"
  # the failing check: back to OpenBLAS's own kernels, said
  CGNN_TEST_BLAS_NARROW=1 CGNN_TEST_BLAS_CHECK_FAIL=1 "$CGNN" info --threads 1 >"$TMP/fail.out" 2>&1 && ok ||
    bad "cgnn info with a failing check: $(cat "$TMP/fail.out")"
  has "$TMP/fail.out" "kernels \(OpenBLAS's choice: cgnn's choice $want:failed sgemm .* error 1e\+09 x the float32 bound\)" \
    "a failed check"
  ! grep -q "chosen by cgnn" "$TMP/fail.out" && ok || bad "a failed check still reports cgnn's choice"

  # training under the chosen kernels: said in the log; the same bits twice
  printf 'trainer_resource_config:\n  local_trainer_config: {num_workers: 2}\n' >"$TMP/res.yaml"
  for r in a b; do
    sed -e "s#out/[a-z_]*/#$TMP/$r/#g" -e 's/num_epochs: "200"/num_epochs: "3"/' examples/cora_graphsage.yaml >"$TMP/$r.yaml"
    CGNN_TEST_BLAS_NARROW=1 "$CGNN" train --task_config_uri="$TMP/$r.yaml" --resource_config_uri="$TMP/res.yaml" \
      >"$TMP/$r.out" 2>"$TMP/$r.err" && ok || bad "training $r: $(tail -3 "$TMP/$r.err")"
  done
  has "$TMP/a.err" "BLAS: OpenBLAS [0-9.]+, $want kernels \(chosen by cgnn" "the training log's kernel line"
  cmp -s "$TMP/a/model.safetensors" "$TMP/b/model.safetensors" && ok || bad "two runs under cgnn's kernels differ"
fi

# a user's OPENBLAS_CORETYPE stays; cgnn says what it leaves unused
OPENBLAS_CORETYPE=Prescott "$CGNN" info --threads 1 >"$TMP/user.out" 2>&1 && ok || bad "cgnn info with the user's coretype"
has "$TMP/user.out" "^BLAS: OpenBLAS [0-9.]+, Prescott kernels \(OPENBLAS_CORETYPE=Prescott, set before cgnn started\)" \
  "the user's kernels"
if [[ $width == 256 || $width == 512 ]]; then
  has "$TMP/user.out" "narrower than the CPU's vectors; unset it to let cgnn choose" "the width note"
fi

echo "test_blas_choice: $pass passed, $fails failed"
[[ $fails -eq 0 ]]
