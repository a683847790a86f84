#!/usr/bin/env bash
# Fleet and retry measurements on loopback (docs/fleet.md), release build:
#  1. three gateways + three site workers (config/fleet/) against one gateway with the same
#     three workers in scope (config/fleet/gateway-single.yaml), the same load (one load
#     generator, λ LAMBDA clients/min of workloads/live.yaml) over SEEDS;
#  2. the fleet with gateway 0 killed (SIGKILL) half way, each seed: streams lost, handovers,
#     failover time;
#  3. retry-on-reset, each seed: a config/gateway.yaml-like gateway in front of config/worker-co.yaml and
#     config/worker-cloud.yaml at λ 6 (workloads/default.yaml), the central office killed
#     (SIGKILL) half way, with retries off and on: the 502s.
# Then experiments/fleet.py prints the figures. Loopback only; ports 81xx and 82xx.
#
#   live/fleet.sh                                     # 5 seeds: about 35 minutes
#   SEEDS="1 2 3" DURATION=30 OUT=target/fleet live/fleet.sh
#   PARTS=retry live/fleet.sh                         # only part 3 (PARTS: any of compare kill retry)
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-target/release/continuum}
OUT=${OUT:-target/fleet}
SEEDS=${SEEDS:-1 2 3 4 5}
DURATION=${DURATION:-60}
LAMBDA=${LAMBDA:-24}          # clients/min over the whole fleet: 8 per antenna, 2/3 of workloads/live.yaml's 12
RETRY_LAMBDA=${RETRY_LAMBDA:-6}
RETRY_DURATION=${RETRY_DURATION:-120}   # as live.md's loopback run: streams build up to ~100 qps
PARTS=${PARTS:-compare kill retry}
part() { [[ " $PARTS " == *" $1 "* ]]; }
mkdir -p "$OUT"
[ -x "$BIN" ] || { echo "no $BIN: cargo build --release first" >&2; exit 1; }

pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT

ready() { for _ in $(seq 150); do curl -sf "$1/v2/health/ready" >/dev/null && return 0; sleep 0.2; done; echo "$1 not ready" >&2; exit 1; }
stop() { for p in "$@"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done; }

# The fleet's stream key, before any gateway starts (they share it).
[ -s target/fleet.stream.key ] || od -An -tx1 -N32 /dev/urandom | tr -d ' \n' >target/fleet.stream.key

workers=()
for i in 0 1 2; do
  rm -f "target/fleet-site-$i.der"
  "$BIN" worker --config "config/fleet/worker-$i.yaml" 2>"$OUT/worker-$i.log" &
  pids+=($!); workers+=($!)
done
for i in 0 1 2; do for _ in $(seq 150); do [ -s "target/fleet-site-$i.der" ] && break; sleep 0.2; done; done

FLEET=http://127.0.0.1:8180,http://127.0.0.1:8181,http://127.0.0.1:8182
loadgen() { # out gateways seed [extra…]
  local out=$1 gws=$2 seed=$3; shift 3
  "$BIN" loadgen --gateway "$gws" --workload workloads/live.yaml --profiles profiles/local.yaml \
    --lambda "$LAMBDA" --duration "$DURATION" --seed "$seed" --quiet --format json \
    "$@" >"$out" 2>>"$OUT/loadgen.log"
}
start_fleet() {
  gws=()
  for i in 0 1 2; do
    "$BIN" gateway --config "config/fleet/gateway-$i.yaml" 2>>"$OUT/gateway-$i.log" &
    pids+=($!); gws+=($!)
  done
  for i in 0 1 2; do ready "http://127.0.0.1:818$i"; done
}

for seed in $SEEDS; do
  part compare || break
  echo "seed $seed: fleet" >&2
  start_fleet
  loadgen "$OUT/fleet-seed$seed.json" "$FLEET" "$seed"
  stop "${gws[@]}"
  echo "seed $seed: single gateway" >&2
  "$BIN" gateway --config config/fleet/gateway-single.yaml 2>>"$OUT/gateway-single.log" &
  pids+=($!); single=$!
  ready http://127.0.0.1:8190
  loadgen "$OUT/single-seed$seed.json" http://127.0.0.1:8190 "$seed"
  stop "$single"
done

for seed in $SEEDS; do
  part kill || break
  echo "seed $seed: fleet, gateway 0 killed half way" >&2
  start_fleet
  loadgen "$OUT/kill-seed$seed.json" "$FLEET" "$seed" &
  lg=$!
  sleep "$(( DURATION / 2 ))"
  kill -9 "${gws[0]}"
  wait "$lg"
  stop "${gws[@]}"
done
stop "${workers[@]}"

# Retry-on-reset: the soak.sh setup (config/gateway.yaml-like, both workers on loopback).
co_cert="$OUT/worker-co.der"; cloud_cert="$OUT/worker-cloud.der"
for run in $(for s in $SEEDS; do echo "off:$s on:$s"; done); do
  part retry || break
  mode=${run%%:*}; seed=${run##*:}
  echo "seed $seed: retry $mode, central office killed half way" >&2
  rm -f "$co_cert" "$cloud_cert"
  CONTINUUM_HTTP__LISTEN=127.0.0.1:8210 CONTINUUM_QUIC__LISTEN=127.0.0.1:8211 CONTINUUM_GRPC__LISTEN=127.0.0.1:8212 \
    CONTINUUM_QUIC__DEV_CERT_OUT=$co_cert "$BIN" worker --config config/worker-co.yaml 2>"$OUT/retry-co.log" &
  pids+=($!); co=$!
  CONTINUUM_HTTP__LISTEN=127.0.0.1:8220 CONTINUUM_QUIC__LISTEN=127.0.0.1:8221 CONTINUUM_GRPC__LISTEN=127.0.0.1:8222 \
    CONTINUUM_QUIC__DEV_CERT_OUT=$cloud_cert "$BIN" worker --config config/worker-cloud.yaml 2>"$OUT/retry-cloud.log" &
  pids+=($!); cloud=$!
  for _ in $(seq 150); do [ -s "$co_cert" ] && [ -s "$cloud_cert" ] && break; sleep 0.2; done
  enabled=$([ "$mode" = on ] && echo true || echo false)
  cat >"$OUT/retry-$mode.yaml" <<YAML
name: retry-$mode
topology: topologies/live.yaml
profiles: profiles/local.yaml
scheduler: ant-00
http: {listen: 127.0.0.1:8280}
app_classes: [ar-overlay, cognitive-assistance, traffic-analytics, video-surveillance]
worker_silence_ms: 300
retry: {enabled: $enabled}
workers:
  - {name: worker-co, cluster: co-0, protocol: quic, address: 127.0.0.1:8211, cert: $co_cert}
  - {name: worker-cloud, cluster: cloud, protocol: quic, address: 127.0.0.1:8221, cert: $cloud_cert}
tasks:
  object-detection: {input: input, output: output, shape: [3, 64, 64], output_shape: [16]}
YAML
  "$BIN" gateway --config "$OUT/retry-$mode.yaml" 2>"$OUT/retry-$mode-gateway.log" &
  pids+=($!); gw=$!
  ready http://127.0.0.1:8280
  "$BIN" loadgen --gateway http://127.0.0.1:8280 --workload workloads/default.yaml --profiles profiles/local.yaml \
    --lambda "$RETRY_LAMBDA" --duration "$RETRY_DURATION" --seed "$seed" --quiet --format json \
    >"$OUT/retry-$mode-seed$seed.json" 2>>"$OUT/loadgen.log" &
  lg=$!
  sleep "$(( RETRY_DURATION / 2 ))"
  kill -9 "$co"
  wait "$lg"
  curl -s 127.0.0.1:8280/metrics >"$OUT/retry-$mode-seed$seed-metrics.txt" || true
  stop "$gw" "$cloud"
done

python3 -m experiments.fleet "$OUT" | tee "$OUT/summary.txt"
