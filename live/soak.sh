#!/usr/bin/env bash
# Soak run: the gateway and both workers of config/ plus the load generator at a steady rate
# for DURATION seconds; the RSS and open file descriptors of each process are sampled every
# SAMPLE seconds into OUT/samples.csv, then live/soak_report.py plots them (OUT/soak.svg)
# and writes OUT/summary.txt (growth per hour over the whole run, its halves and after WARMUP
# seconds; where the RSS lies). Loopback only. The binary uses mimalloc (src/main.rs); ALLOC_ENV
# is passed to all four processes for allocator experiments.
#
#   live/soak.sh                           # 30 min at λ = 5 clients/min (~80 qps), release build
#   DURATION=600 LAMBDA=5 OUT=target/soak live/soak.sh
#   WORKER_ENV=CONTINUUM_BACKEND=tract live/soak.sh        # docs/soak.md: the workers on tract
#   ALLOC_ENV=MIMALLOC_PURGE_DELAY=0 live/soak.sh           # a mimalloc option, every process
#   BIN=glibc-build ALLOC_ENV=MALLOC_ARENA_MAX=2 live/soak.sh   # a build without mimalloc
#   ALLOC_ENV=LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2 BIN=glibc-build live/soak.sh
#   WORKER_WRAP="heaptrack -o target/soak/co" BIN=glibc-build live/soak.sh   # trace worker-co's heap
# (glibc-build: `cargo build --release --no-default-features`, the binary on the system
# allocator, which heap profilers can hook; with WORKER_WRAP, worker-co's RSS column is the
# wrapper's.)
set -euo pipefail
cd "$(dirname "$0")/.."
DURATION=${DURATION:-1800}
SAMPLE=${SAMPLE:-30}
LAMBDA=${LAMBDA:-5}
BIN=${BIN:-target/release/continuum}
OUT=${OUT:-target/soak}
BASE=${BASE_PORT:-18000}
WORKER_ENV=${WORKER_ENV:-}   # the workers only, e.g. WORKER_ENV=CONTINUUM_BACKEND=tract
ALLOC_ENV=${ALLOC_ENV:-}     # every continuum process, e.g. ALLOC_ENV=MALLOC_ARENA_MAX=2
WARMUP=${WARMUP:-600}        # growth "after warm-up" is fitted from this many seconds on
WORKER_WRAP=${WORKER_WRAP:-} # a command worker-co runs under, e.g. a heap profiler
mkdir -p "$OUT"
[ -x "$BIN" ] || { echo "no $BIN: cargo build --release first" >&2; exit 1; }

pids=()
# Children first: a wrapped worker (WORKER_WRAP) is the wrapper's child.
cleanup() { for p in "${pids[@]}"; do pkill -P "$p" 2>/dev/null || true; kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT

co_cert="$OUT/worker-co.der"; cloud_cert="$OUT/worker-cloud.der"
rm -f "$co_cert" "$cloud_cert"
CONTINUUM_HTTP__LISTEN=127.0.0.1:$((BASE + 10)) CONTINUUM_QUIC__LISTEN=127.0.0.1:$((BASE + 11)) \
  CONTINUUM_GRPC__LISTEN=127.0.0.1:$((BASE + 12)) CONTINUUM_QUIC__DEV_CERT_OUT=$co_cert env $ALLOC_ENV $WORKER_ENV $WORKER_WRAP "$BIN" worker --config config/worker-co.yaml 2>"$OUT/worker-co.log" &
pids+=($!); co=$!
CONTINUUM_HTTP__LISTEN=127.0.0.1:$((BASE + 20)) CONTINUUM_QUIC__LISTEN=127.0.0.1:$((BASE + 21)) \
  CONTINUUM_GRPC__LISTEN=127.0.0.1:$((BASE + 22)) CONTINUUM_QUIC__DEV_CERT_OUT=$cloud_cert env $ALLOC_ENV $WORKER_ENV "$BIN" worker --config config/worker-cloud.yaml 2>"$OUT/worker-cloud.log" &
pids+=($!); cloud=$!
for _ in $(seq 100); do [ -s "$co_cert" ] && [ -s "$cloud_cert" ] && break; sleep 0.2; done

cat > "$OUT/gateway.yaml" <<YAML
name: soak-gateway
topology: topologies/live.yaml
profiles: profiles/local.yaml
scheduler: ant-00
http: {listen: 127.0.0.1:$((BASE + 80))}
app_classes: [ar-overlay, cognitive-assistance, traffic-analytics, video-surveillance]
stream_key_file: $OUT/stream.key
workers:
  - {name: worker-co, cluster: co-0, protocol: quic, address: 127.0.0.1:$((BASE + 11)), cert: $co_cert}
  - {name: worker-cloud, cluster: cloud, protocol: quic, address: 127.0.0.1:$((BASE + 21)), cert: $cloud_cert}
tasks:
  object-detection: {input: input, output: output, shape: [3, 64, 64], output_shape: [16]}
YAML
env $ALLOC_ENV "$BIN" gateway --config "$OUT/gateway.yaml" 2>"$OUT/gateway.log" &
pids+=($!); gw=$!
for _ in $(seq 100); do curl -sf "127.0.0.1:$((BASE + 80))/v2/health/ready" >/dev/null && break; sleep 0.2; done

env $ALLOC_ENV "$BIN" loadgen --gateway "http://127.0.0.1:$((BASE + 80))" --workload workloads/default.yaml \
  --profiles profiles/local.yaml --lambda "$LAMBDA" --duration "$DURATION" --progress \
  --format json >"$OUT/loadgen.json" 2>"$OUT/loadgen.log" &
pids+=($!); lg=$!

sample() { # name pid: RSS, descriptors, and where the RSS lies (brk heap, anonymous maps, files)
  local rss fds split
  rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$2/status" 2>/dev/null || echo "")
  fds=$(ls "/proc/$2/fd" 2>/dev/null | wc -l)
  split=$(awk '/^[0-9a-f]+-[0-9a-f]+ / {name = (NF >= 6) ? $6 : "anon"}
               /^Rss:/ {if (name == "[heap]") h += $2; else if (name == "anon") a += $2; else f += $2}
               END {printf "%d,%d,%d", h, a, f}' "/proc/$2/smaps" 2>/dev/null || echo ",,")
  [ -n "$rss" ] && echo "$t,$1,$rss,$fds,$split" >>"$OUT/samples.csv"
}
echo "t_s,process,rss_kib,fds,heap_kib,anon_kib,file_kib" >"$OUT/samples.csv"
start=$(date +%s)
while kill -0 "$lg" 2>/dev/null; do
  t=$(( $(date +%s) - start ))
  sample gateway "$gw"; sample worker-co "$co"; sample worker-cloud "$cloud"; sample loadgen "$lg"
  sleep "$SAMPLE"
done
t=$(( $(date +%s) - start ))
sample gateway "$gw"; sample worker-co "$co"; sample worker-cloud "$cloud"
curl -s "127.0.0.1:$((BASE + 80))/metrics" >"$OUT/gateway-metrics.txt" || true
python3 live/soak_report.py "$OUT/samples.csv" "$OUT/soak.svg" "$WARMUP" | tee "$OUT/summary.txt"
