#!/usr/bin/env bash
# The learned default live (docs/live.md, "The learned default on a live fleet"):
# topologies/live-fleet.yaml's four antennas, a gateway each, sharing the slice's two workers
# (config/live-fleet/, emulated devices of profiles/live-fleet.yaml), one load generator per
# antenna drawing that scheduler's clients; each row run live and in the simulator on the same
# clients and seed by examples/sim_to_live.rs. Rows: the meta-policy over the strong rules trained
# for the slice (models/live-fleet-heuristics.dqn, config/dqn-live-fleet.yaml), `headroom`,
# `least-allocated`, and the best of ASET's policies in the simulator over the same seeds.
# Then experiments/live_fleet.py prints the table. Loopback only; ephemeral ports.
#
#   cargo build --release --example sim_to_live
#   live/fleet_live.sh                                   # seeds 101–105, 120 s: about 40 minutes
#   SEEDS="101 102 103" live/fleet_live.sh
set -euo pipefail
cd "$(dirname "$0")/.."
EX=${EX:-target/release/examples/sim_to_live}
BIN=${BIN:-target/release/continuum}
OUT=${OUT:-target/live-fleet}
SEEDS=${SEEDS:-101 102 103 104 105}
DURATION=${DURATION:-120}
LAMBDA=${LAMBDA:-12}          # clients/min per antenna: the slice's emulated workers are loaded, the machine is not
AGENT=${AGENT:-models/live-fleet-heuristics.dqn}
FILES=(--profiles profiles/live-fleet.yaml --workload workloads/live-fleet.yaml)
SLICE=(--topology topologies/live-fleet.yaml "${FILES[@]}")
ASET=closest,load-balancing,random-proportional-latency,random-proportional-load,least-impedance
mkdir -p "$OUT"
[ -x "$EX" ] || { echo "no $EX: cargo build --release --example sim_to_live first" >&2; exit 1; }
[ -x "$BIN" ] || { echo "no $BIN: cargo build --release first" >&2; exit 1; }

# The best ASET policy: highest mean simulated success over the seeds (the simulator alone).
for s in $SEEDS; do
  "$BIN" compare topologies/live-fleet.yaml "${FILES[@]}" --lambda "$LAMBDA" --duration "$DURATION" --seed "$s" \
    --policies "$ASET" --format json --quiet >"$OUT/aset-seed$s.json"
done
BEST=$(python3 -c '
import glob, json, statistics, sys
runs = [json.load(open(p)) for p in sorted(glob.glob(sys.argv[1] + "/aset-seed*.json"))]
names = [r["policy"] for r in runs[0]["results"]]
mean = {n: statistics.mean(next(x["success_ratio"] for x in r["results"] if x["policy"] == n) for r in runs) for n in names}
print(max(names, key=lambda n: (mean[n], n)))' "$OUT")
echo "best ASET policy in the simulator: $BEST"

for s in $SEEDS; do
  "$EX" "${SLICE[@]}" --workers config/live-fleet/worker-co.yaml,config/live-fleet/worker-cloud.yaml \
    --lambda "$LAMBDA" --duration "$DURATION" --seed "$s" --agent "$AGENT" --json "$OUT/learned-seed$s.json"
  for p in headroom least-allocated "$BEST"; do
    "$EX" "${SLICE[@]}" --workers config/live-fleet/worker-co.yaml,config/live-fleet/worker-cloud.yaml \
      --lambda "$LAMBDA" --duration "$DURATION" --seed "$s" --policy "$p" --json "$OUT/$p-seed$s.json"
  done
done
python3 -m experiments.live_fleet --dir "$OUT"
