#!/usr/bin/env bash
# install-deps.sh — installs the Debian packages cgnn needs, only those missing; safe to rerun.
#   scripts/install-deps.sh          build + run dependencies
#   scripts/install-deps.sh --test   also python3-numpy / python3-torch / python3-yaml (fixture and
#                                    cross-check scripts in the test suite) and the --fuzz set
#   scripts/install-deps.sh --fuzz   also clang 14 with libFuzzer and its OpenMP runtime
#                                    (scripts/fuzz.sh; CI runs it from scripts/test.sh)
set -euo pipefail

pkgs=(gcc make libc6-dev cmake pkg-config libopenblas-openmp-dev libyaml-dev libmetis-dev
      libopenmpi-dev openmpi-bin zlib1g-dev python3-dev)
fuzz_pkgs=(clang-14 libclang-rt-14-dev libomp-14-dev)
case "${1:-}" in
  --test) pkgs+=(python3 python3-numpy python3-torch python3-yaml "${fuzz_pkgs[@]}") ;;
  --fuzz) pkgs+=("${fuzz_pkgs[@]}") ;;
esac

missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if (( ${#missing[@]} == 0 )); then
  echo "install-deps: all ${#pkgs[@]} packages present"
  exit 0
fi
echo "install-deps: installing ${missing[*]}"
SUDO=""
if [[ $(id -u) -ne 0 ]]; then
  command -v sudo >/dev/null || { echo "install-deps: need root (or sudo) to install: ${missing[*]}" >&2; exit 1; }
  SUDO=sudo
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
