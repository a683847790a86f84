#!/usr/bin/env python3
"""The meta-policy's results table: on every topology, at λ ∈ {20, 40, 60, 80, 100} and on the
diurnal workload, on an evaluation seed never used in training or in choosing a table:

  dqn per-class   models/<topology>.dqn         (one head per application class)
  dqn single      models/<topology>-single.dqn  (one action for all streams, SPEC §9 as written)
  best single     the best of the eight static policies on this seed
  per-class table the best static per-class table, chosen by `continuum table` on other seeds
  oracle          the per-window oracle over the per-class agent's actions and classes
  gap closed      (dqn per-class − best single) / (oracle − best single)

Usage: python3 scripts/meta_results.py [--seed 101] [--duration 300] [--out out/meta]
It needs a release build (`cargo build --release`) and the checkpoints. Tables already written
under <out>/tables are reused (delete them to choose again).
"""
import argparse
import json
import pathlib
import subprocess
import sys

p = argparse.ArgumentParser()
p.add_argument("--seed", type=int, default=101)
p.add_argument("--duration", type=float, default=300)
p.add_argument("--diurnal-duration", type=float, default=600,
               help="one whole period of workloads/diurnal.yaml")
p.add_argument("--lambdas", default="20,40,60,80,100")
p.add_argument("--topologies", default="full-edge,co-dc-cloud,dc-cloud")
p.add_argument("--table-seeds", default="1,2")
p.add_argument("--models", default="models")
p.add_argument("--out", default="out/meta")
p.add_argument("--bin", default="target/release/continuum")
p.add_argument("--no-oracle", action="store_true")
a = p.parse_args()

out = pathlib.Path(a.out)
(out / "tables").mkdir(parents=True, exist_ok=True)
STATIC = ["closest", "load-balancing", "farthest", "cheaper", "random-proportional-latency",
          "random-proportional-load", "least-impedance", "random"]


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{r.stderr}")
    return r.stdout


def dominant(actions):
    """`class: policy share%` of the most chosen action per class, e.g. `ar: closest 92%`."""
    if not actions:
        return ""
    parts = []
    for c, shares in zip(actions["classes"], actions["share"]):
        i = max(range(len(shares)), key=lambda k: shares[k])
        parts.append(f"{c.split('-')[0]}: {actions['actions'][i]} {100 * shares[i]:.0f}%")
    return "; ".join(parts)


summary = {}
for topo in a.topologies.split(","):
    cells = [(f"λ {lam}", ["--lambda", lam], "workloads/default.yaml", a.duration, lam)
             for lam in a.lambdas.split(",")]
    cells.append(("diurnal", [], "workloads/diurnal.yaml", a.diurnal_duration, "diurnal"))
    rows = []
    for label, lam_args, workload, duration, key in cells:
        table = out / "tables" / f"{topo}-{key}.yaml"
        if not table.exists():
            run([a.bin, "table", f"topologies/{topo}.yaml", "--workload", workload, *lam_args,
                 "--duration", str(duration), "--seeds", a.table_seeds, "--out", str(table)])
        cmd = [a.bin, "compare", f"topologies/{topo}.yaml", "--workload", workload, *lam_args,
               "--duration", str(duration), "--seed", str(a.seed), "--format", "json",
               "--policies", ",".join(STATIC + [f"per-class:{table}"]),
               "--agent", f"{a.models}/{topo}.dqn", "--agent", f"{a.models}/{topo}-single.dqn"]
        if not a.no_oracle:
            cmd.append("--oracle")
        if topo == "full-edge" and key in ("60", "diurnal"):
            cmd += ["--out", str(out / f"{topo}-{key}")]
        r = json.loads(run(cmd))
        by = {x["policy"]: x for x in r["results"]}
        ratio = {k: v["success_ratio"] * 100 for k, v in by.items()}
        best = max(STATIC, key=lambda k: ratio[k])
        dqn, single = ratio[f"dqn:{topo}"], ratio[f"dqn:{topo}-single"]
        tab = ratio[f"per-class:{table}"]
        orc = ratio.get("oracle")
        gap = None if orc is None or orc - ratio[best] <= 1e-9 else 100 * (dqn - ratio[best]) / (orc - ratio[best])
        rows.append(dict(cell=label, dqn=dqn, single=single, best=ratio[best], best_name=best,
                         table=tab, oracle=orc, gap_closed=gap,
                         dqn_actions=dominant(by[f"dqn:{topo}"].get("actions")),
                         single_actions=dominant(by[f"dqn:{topo}-single"].get("actions"))))
        print(f"{topo} {label}: dqn {dqn:.2f} single {single:.2f} best {ratio[best]:.2f} ({best}) "
              f"table {tab:.2f} oracle {orc if orc is None else round(orc, 2)}", file=sys.stderr)
    summary[topo] = rows
    print(f"**{topo}** (seed {a.seed}; {a.duration:.0f} s runs, diurnal {a.diurnal_duration:.0f} s)\n")
    print("| workload | dqn per-class | dqn single | best single static | per-class table | oracle | dqn − best | dqn − table | gap closed |")
    print("|---|---|---|---|---|---|---|---|---|")
    for x in rows:
        orc = "–" if x["oracle"] is None else f"{x['oracle']:.2f}"
        gap = "n/a" if x["gap_closed"] is None else f"{x['gap_closed']:.0f} %"
        print(f"| {x['cell']} | {x['dqn']:.2f} | {x['single']:.2f} | {x['best']:.2f} ({x['best_name']}) | "
              f"{x['table']:.2f} | {orc} | {x['dqn'] - x['best']:+.2f} | {x['dqn'] - x['table']:+.2f} | {gap} |")
    print()
    print("Actions the per-class agent took most (share of its decisions per class):\n")
    for x in rows:
        print(f"- {x['cell']}: {x['dqn_actions']}")
    print()
(out / "summary.json").write_text(json.dumps(summary, indent=1))
