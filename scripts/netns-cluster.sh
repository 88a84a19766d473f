#!/usr/bin/env bash
# netns-cluster.sh — a multi-host cluster on one machine: Linux network namespaces joined by
# veth links to a bridge, each link rate-shaped with tc, and OpenMPI over TCP between them.
# Every namespace is a "host" with its own network stack and IP address; mpirun (in the root
# namespace) starts one orted per host through this script's `agent` mode (OpenMPI's rsh
# launcher with `ip netns exec` instead of ssh), so ranks on different hosts talk over the
# shaped links exactly as over a real network (btl tcp only: no shared memory between them).
#
#   scripts/netns-cluster.sh up N [RATE]         N hosts (2..16), links of RATE (default 10gbit)
#   scripts/netns-cluster.sh run N NP -- CMD...  mpirun -np NP over the N hosts (round robin)
#   scripts/netns-cluster.sh stats N             bytes / packets each host sent and received
#   scripts/netns-cluster.sh down N              removes the hosts and the bridge
#
# Root only. Hosts are namespaces cgnn-h0.. with addresses 10.88.0.10.., the bridge cgnn-br0
# has 10.88.0.1 (mpirun's side). Shaping: a tbf qdisc on both ends of every veth (egress of the
# host and egress towards it) at RATE. Latency: this machine's kernel has no netem qdisc
# (`tc qdisc add ... netem` → "Specified qdisc kind is unknown"), so the links add no delay of
# their own; docs/DISTRIBUTED.md puts the delay in on paper from the measured messages per step.
set -euo pipefail
self=$(realpath "$0")
PREFIX=10.88.0
ns() { echo "cgnn-h$1"; }

need_root() { [[ $(id -u) -eq 0 ]] || { echo "netns-cluster.sh: needs root (ip netns, tc)" >&2; exit 2; }; }

up() {
  local n=$1 rate=${2:-10gbit}
  [[ $n =~ ^[0-9]+$ && $n -ge 2 && $n -le 16 ]] || { echo "netns-cluster.sh: N must be 2..16" >&2; exit 2; }
  need_root
  down "$n" 2>/dev/null || true
  ip link add cgnn-br0 type bridge
  ip addr add "$PREFIX.1/24" dev cgnn-br0
  ip link set cgnn-br0 up
  for ((h = 0; h < n; h++)); do
    local name; name=$(ns "$h")
    ip netns add "$name"
    ip netns exec "$name" ip link set lo up
    ip link add "cgnn-v$h" type veth peer name "cgnn-p$h"
    ip link set "cgnn-p$h" netns "$name"
    ip link set "cgnn-v$h" master cgnn-br0
    ip link set "cgnn-v$h" up
    ip netns exec "$name" ip link set "cgnn-p$h" name eth0
    ip netns exec "$name" ip addr add "$PREFIX.$((10 + h))/24" dev eth0
    ip netns exec "$name" ip link set eth0 up
    ip netns exec "$name" ip route add default via "$PREFIX.1"
    # RATE each way: the host's egress, and the bridge port's egress towards the host
    ip netns exec "$name" tc qdisc add dev eth0 root tbf rate "$rate" burst 1mb latency 50ms
    tc qdisc add dev "cgnn-v$h" root tbf rate "$rate" burst 1mb latency 50ms
  done
  echo "netns-cluster: $n hosts ($PREFIX.10 .. $PREFIX.$((9 + n))), links $rate each way"
}

down() {
  local n=$1
  for ((h = 0; h < n; h++)); do
    ip netns del "$(ns "$h")" 2>/dev/null || true
    ip link del "cgnn-v$h" 2>/dev/null || true
  done
  ip link del cgnn-br0 2>/dev/null || true
}

# OpenMPI's rsh launcher calls: AGENT [options] HOST COMMAND...; HOST is an address of ours
agent() {
  while [[ $# -gt 0 && $1 == -* ]]; do shift; done
  local host=$1; shift
  local h=$(( ${host##*.} - 10 ))
  exec ip netns exec "$(ns "$h")" /bin/sh -c "$*"
}

run() {
  local n=$1 np=$2; shift 2
  [[ ${1:-} == -- ]] && shift
  need_root
  local hosts=()
  for ((h = 0; h < n; h++)); do hosts+=("$PREFIX.$((10 + h)):$(( (np + n - 1) / n ))"); done
  local xs=()
  for v in OMP_NUM_THREADS CGNN_RPC_TIMEOUT_S ASAN_OPTIONS; do [[ -n ${!v:-} ]] && xs+=(-x "$v"); done
  local IFS=,
  # plm_rsh_num_concurrent 1: the agents start one host's daemon at a time. Launched together,
  # two `ip netns exec` (each unshares and remounts /sys) left a daemon that never reported in,
  # and the job hung at start-up in about 1 run in 4 (measured: 3 of 12; serial: 0 of 28)
  exec mpirun --allow-run-as-root --oversubscribe --bind-to none -np "$np" --host "${hosts[*]}" \
    --map-by node \
    --mca plm_rsh_agent "$self agent" --mca plm_rsh_no_tree_spawn 1 --mca plm_rsh_num_concurrent 1 \
    --mca btl tcp,self --mca btl_tcp_if_include "$PREFIX.0/24" --mca oob_tcp_if_include "$PREFIX.0/24" \
    "${xs[@]}" "$@"
}

stats() {
  local n=$1
  for ((h = 0; h < n; h++)); do
    ip netns exec "$(ns "$h")" cat /proc/net/dev | awk -v host="$(ns "$h")" \
      '$1 == "eth0:" { printf "%s rx_bytes %s rx_packets %s tx_bytes %s tx_packets %s\n", host, $2, $3, $10, $11 }'
  done
}

case "${1:-}" in
  up) shift; up "$@" ;;
  down) shift; need_root; down "${1:-16}" ;;
  run) shift; run "$@" ;;
  stats) shift; stats "$@" ;;
  agent) shift; agent "$@" ;;
  *) sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
