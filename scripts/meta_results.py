#!/usr/bin/env python3
"""The meta-policy's results table: on every topology, at λ ∈ {20, 40, 60, 80, 100} and on the
diurnal workload, on an evaluation seed never used in training or in choosing a table:

  dqn per-class   models/<topology>.dqn         (one head per application class)
  dqn single      models/<topology>-single.dqn  (one action for all streams, docs/model.md §9 as written)
  best single     the best of the eight static policies on this seed
  per-class table the best static per-class table, chosen by `continuum table` on other seeds
  oracle          the per-window oracle over the per-class agent's actions and classes
  gap closed      (dqn per-class − best single) / (oracle − best single), computed here and
                  only here: negative where the agent is below the best single policy, `n/a`
                  where the oracle is not above the best single policy (the ratio would have
                  no meaning: on dc-cloud at λ 20 it would read +105 % for an agent 1.95 pp
                  below)

Prints, per topology, every cell (the part `cells`), then a summary of the loads in
--summary-loads over every topology (the part `summary`), in which the best of the four
contenders (dqn per-class, dqn single, best single static, per-class table: the oracle looks
ahead and is a reference) is in bold, compared at the two decimals shown (ties all bold).

Usage: python3 scripts/meta_results.py [--seed 101] [--duration 300] [--out out/meta]
       [--publish] [--from-json]
It needs a release build (`cargo build --release`) and the checkpoints, except with
--from-json. Tables already written under <out>/tables are reused (delete them to choose
again). --publish records both parts and the results under docs/generated/ and rewrites the
docs' blocks that name this command (scripts/docgen.py); --from-json prints the tables again
from those recorded results without running anything.
"""
import argparse
import json
import pathlib
import subprocess
import sys

import docgen

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
p.add_argument("--summary-loads", default="60,diurnal",
               help="the loads of the summary table (λ values or `diurnal`)")
p.add_argument("--publish", action="store_true")
p.add_argument("--from-json", action="store_true")
a = p.parse_args()
CMD = docgen.command(__file__, sys.argv[1:])

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


def gap_closed(dqn, best, oracle):
    """The share of the gap between the best single policy and the oracle that the agent
    closes, in %; None where the oracle is not above the best single policy."""
    if oracle is None or oracle - best <= 1e-9:
        return None
    return 100 * (dqn - best) / (oracle - best)


def measure(topo):
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
        rows.append(dict(cell=label, load=key, dqn=dqn, single=single, best=ratio[best],
                         best_name=best, table=tab, oracle=orc,
                         gap_closed=gap_closed(dqn, ratio[best], orc),
                         dqn_actions=dominant(by[f"dqn:{topo}"].get("actions")),
                         single_actions=dominant(by[f"dqn:{topo}-single"].get("actions"))))
        print(f"{topo} {label}: dqn {dqn:.2f} single {single:.2f} best {ratio[best]:.2f} ({best}) "
              f"table {tab:.2f} oracle {orc if orc is None else round(orc, 2)}", file=sys.stderr)
    return rows


def gap_text(x):
    return "n/a" if x["gap_closed"] is None else f"{x['gap_closed']:.0f} %"


def render_cells(summary):
    text = []
    for topo, rows in summary.items():
        text.append(f"**{topo}** (seed {a.seed}; {a.duration:.0f} s runs, diurnal "
                    f"{a.diurnal_duration:.0f} s)\n")
        text.append("| workload | dqn per-class | dqn single | best single static | per-class table | oracle | dqn − best | dqn − table | gap closed |")
        text.append("|---|---|---|---|---|---|---|---|---|")
        for x in rows:
            orc = "–" if x["oracle"] is None else f"{x['oracle']:.2f}"
            text.append(f"| {x['cell']} | {x['dqn']:.2f} | {x['single']:.2f} | {x['best']:.2f} ({x['best_name']}) | "
                        f"{x['table']:.2f} | {orc} | {x['dqn'] - x['best']:+.2f} | {x['dqn'] - x['table']:+.2f} | {gap_text(x)} |")
        text.append("")
        text.append("Actions the per-class agent took most (share of its decisions per class):\n")
        for x in rows:
            text.append(f"- {x['cell']}: {x['dqn_actions']}")
        text.append("")
    return "\n".join(text) + "\n"


def render_summary(summary):
    wanted = a.summary_loads.split(",")
    text = ["| topology | workload | dqn per-class | dqn single (ASET) | best single static | "
            "per-class table | oracle | dqn − best | gap closed |",
            "|---|---|---|---|---|---|---|---|---|"]
    for topo, rows in summary.items():
        for x in rows:
            load = x.get("load", x["cell"].removeprefix("λ "))
            if load not in wanted:
                continue
            shown = {k: f"{x[k]:.2f}" for k in ("dqn", "single", "best", "table")}
            top = max(float(v) for v in shown.values())
            cell = {k: f"**{v}**" if float(v) == top else v for k, v in shown.items()}
            orc = "–" if x["oracle"] is None else f"{x['oracle']:.2f}"
            text.append(f"| {topo} | {x['cell']} | {cell['dqn']} | {cell['single']} | "
                        f"{cell['best']} ({x['best_name']}) | {cell['table']} | {orc} | "
                        f"{x['dqn'] - x['best']:+.2f} | {gap_text(x)} |")
    return "\n".join(text) + "\n"


if a.from_json:
    summary = docgen.load_results(CMD)
    if summary is None:
        sys.exit(f"no recorded results of `{CMD}` ({docgen.results_path(CMD)}): run it without "
                 "--from-json")
else:
    summary = {topo: measure(topo) for topo in a.topologies.split(",")}
cells_text, summary_text = render_cells(summary), render_summary(summary)
print(cells_text, end="")
print(summary_text, end="")
if a.publish:
    docgen.publish(CMD, {"cells": cells_text, "summary": summary_text}, summary)
if a.from_json:
    sys.exit(0)
(out / "summary.json").write_text(json.dumps(summary, indent=1))
