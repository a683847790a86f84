#!/usr/bin/env python3
"""What the per-class agent's network adds over its own fallback tables, for checkpoints trained
with different counterfactual labels (docs/meta-results.md): each checkpoint is run as itself
(`--agent`) and as its tables alone (`--agent-tables`) on the evaluation seeds (default
101–105) at every λ, and the difference is given per λ as mean ± sd over the seeds (min … max),
over the whole run and from --warmup-s on.

Usage: python3 scripts/label_ablation.py --agents NAME=PATH,NAME=PATH [--topology full-edge]
       [--seeds 101,102,103,104,105] [--publish] [--from-json]
"""
import argparse
import json
import statistics
import subprocess
import sys

import docgen
from cells import success_from

p = argparse.ArgumentParser()
p.add_argument("--agents", required=True,
               help="comma-separated NAME=CHECKPOINT (the name is what the table shows)")
p.add_argument("--topology", default="full-edge")
p.add_argument("--seeds", default="101,102,103,104,105")
p.add_argument("--lambdas", default="20,40,60,80,100")
p.add_argument("--duration", type=float, default=300)
p.add_argument("--warmup-s", type=float, default=60)
p.add_argument("--bin", default="target/release/continuum")
p.add_argument("--publish", action="store_true")
p.add_argument("--from-json", action="store_true")
a = p.parse_args()
CMD = docgen.command(__file__, sys.argv[1:])
AGENTS = [x.split("=", 1) for x in a.agents.split(",")]


def after(row):
    return success_from(row, a.warmup_s)


def measure():
    out = {}
    for lam in a.lambdas.split(","):
        out[lam] = []
        for seed in a.seeds.split(","):
            cmd = [a.bin, "compare", f"topologies/{a.topology}.yaml", "--lambda", lam,
                   "--duration", str(a.duration), "--seed", seed, "--format", "json",
                   "--policies", "closest"]
            for _, path in AGENTS:
                cmd += ["--agent", path, "--agent-tables", path]
            r = subprocess.run(cmd, capture_output=True, text=True)
            if r.returncode != 0:
                sys.exit(f"failed: {' '.join(cmd)}\n{r.stderr}")
            rows = {x["policy"]: x for x in json.loads(r.stdout)["results"]}
            cell = {}
            for name, path in AGENTS:
                stem = path.rsplit("/", 1)[-1].removesuffix(".dqn")
                agent = rows.get(f"dqn:{stem}") or rows["dqn"]
                tables = rows[f"tables:{stem}"]
                cell[name] = dict(agent=100 * agent["success_ratio"],
                                  tables=100 * tables["success_ratio"],
                                  agent_after=after(agent), tables_after=after(tables))
            out[lam].append(cell)
        print(f"λ {lam} done", file=sys.stderr)
    return out


def pm(xs):
    sd = statistics.stdev(xs) if len(xs) > 1 else 0.0
    return f"{statistics.mean(xs):+.2f} ± {sd:.2f} ({min(xs):+.2f} … {max(xs):+.2f})"


def render(res):
    n = len(a.seeds.split(","))
    text = [f"{a.topology}; network − its tables alone, pp, mean ± sd over {n} seeds "
            f"({a.seeds}) (min … max); whole run / from {a.warmup_s:.0f} s on\n",
            "| λ | " + " | ".join(f"{name}: whole run | {name}: from {a.warmup_s:.0f} s"
                                  for name, _ in AGENTS) + " |",
            "|---|" + "---|---|" * len(AGENTS)]
    for lam in a.lambdas.split(","):  # recorded results come back with sorted keys
        cells = res[lam]
        parts = []
        for name, _ in AGENTS:
            parts.append(pm([c[name]["agent"] - c[name]["tables"] for c in cells]))
            parts.append(pm([c[name]["agent_after"] - c[name]["tables_after"] for c in cells]))
        text.append(f"| {lam} | " + " | ".join(parts) + " |")
    return "\n".join(text) + "\n"


docgen.single_part(CMD, a.from_json, a.publish, measure, render, end="")
