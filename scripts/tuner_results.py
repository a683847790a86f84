#!/usr/bin/env python3
"""Configuration tuner results (EdgeTuner in continuum): on each topology, load and capacity
scale, the trained tuner(s) against every static configuration of the tuner's own grid (its
action list: each dispatch policy under none, reissue@0.8 and discard@0.9), on an evaluation
seed never used in training or in choosing a fallback table or margin.

  best success  the static configuration with the highest success ratio (ties: lower p99),
                chosen in hindsight on the evaluation seed
  lowest p99 within the allowance
                the static configuration with the lowest p99 among those whose success ratio
                is at most SUCCESS_ALLOWANCE_PP below the best success (printed in the caption)
  tuner         models/<topology>-tuner.dqn (per class, per scheduler, 5 s windows)
  edgetuner     models/<topology>-edgetuner.dqn when it exists (one configuration for all,
                every 10 s)

Each agent is compared three ways, each of which can come out either way:
  vs best success   its success minus that configuration's (pp) and its p99 over that one's
  vs lowest p99     the same against the lowest-p99 configuration within the allowance
  mean p99 change   EdgeTuner's form: the mean, over every static configuration of the grid,
                    of (agent p99 / configuration p99 − 1), in % (negative: a shorter tail)
The target (p99 ratio ≤ 0.80 at no lower success) reads off the first two.

Usage: python3 scripts/tuner_results.py [--seed 101] [--duration 300] [--lambdas 60,100]
       [--topologies full-edge,co-dc-cloud] [--capacity-scales 1,0.5,0.75,1.25,1.5]
       [--publish] [--from-json]
It needs a release build (`cargo build --release`) and the checkpoints (README: `train` with
config/dqn-tuner.yaml), except with --from-json. Prints Markdown tables; the compare JSON of
every cell goes under --out. --publish records the output and the results under
docs/generated/ and rewrites the docs' blocks that name this command (scripts/docgen.py);
--from-json prints the tables again from those recorded results without running anything.
"""
import argparse
import pathlib
import sys

import docgen
from cells import cell_key, load_args, run_json, summary_rows

# How far below the best success ratio (percentage points) a static configuration may be and
# still count as "as successful" when looking for the shortest tail.
SUCCESS_ALLOWANCE_PP = 0.5

p = argparse.ArgumentParser()
p.add_argument("--seed", type=int, default=101)
p.add_argument("--duration", type=float, default=300)
p.add_argument("--diurnal-duration", type=float, default=600,
               help="one whole period of workloads/diurnal.yaml")
p.add_argument("--lambdas", default="60,100")
p.add_argument("--topologies", default="full-edge,co-dc-cloud")
p.add_argument("--capacity-scales", default="1,0.5,0.75,1.25,1.5")
p.add_argument("--out", default="out/tuner")
p.add_argument("--bin", default="target/release/continuum")
p.add_argument("--publish", action="store_true")
p.add_argument("--from-json", action="store_true")
a = p.parse_args()
CMD = docgen.command(__file__, sys.argv[1:])
loads = a.lambdas.split(",") + ["diurnal"]


def grid():
    """The tuner's action list, read from config/dqn-tuner.yaml (a flow sequence)."""
    text = pathlib.Path("config/dqn-tuner.yaml").read_text()
    body = text.split("actions: [", 1)[1].split("]", 1)[0]
    return [x.strip() for x in body.replace("\n", " ").split(",") if x.strip()]


def compare(topology, load, scale, agents):
    out = pathlib.Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    args = [a.bin, "compare", f"topologies/{topology}.yaml", "--configs", ",".join(grid()),
            "--seed", str(a.seed), "--capacity-scale", scale, "--format", "json"]
    for ag in agents:
        args += ["--agent", str(ag)]
    args += load_args(load, a.duration, a.diurnal_duration)
    rows = run_json(args, out / f"{topology}-{load}-cap{scale}.json")
    return summary_rows(rows)


key = cell_key


if a.from_json:
    results = docgen.recorded_or_exit(CMD)
else:
    results = {"cells": {}}
    for scale in a.capacity_scales.split(","):
        for topology in a.topologies.split(","):
            agents = [m for m in (pathlib.Path(f"models/{topology}-tuner.dqn"),
                                  pathlib.Path(f"models/{topology}-edgetuner.dqn")) if m.exists()]
            for load in loads:
                results["cells"][key(scale, topology, load)] = compare(topology, load, scale,
                                                                       agents)
                print(f"ran ×{scale} {topology} {load}", file=sys.stderr)


def fmt(r):
    return f"{100 * r['success_ratio']:.2f} / {r['p99']:.0f}"


def vs(r, s):
    return (f"{100 * (r['success_ratio'] - s['success_ratio']):+.2f} pp, "
            f"p99 ×{r['p99'] / s['p99']:.3f}")


def render():
    out = []
    for scale in a.capacity_scales.split(","):
        out.append(f"seed {a.seed}, capacity ×{scale}; success allowance {SUCCESS_ALLOWANCE_PP} "
                   "pp; cells: success % / p99 ms")
        out.append("")
        head = ["topology", "load", "agent", "its success / p99", "best success static", "agent vs it",
                f"lowest p99 static within {SUCCESS_ALLOWANCE_PP} pp", "agent vs it",
                "mean p99 change vs every static"]
        out.append("| " + " | ".join(head) + " |")
        out.append("|" + "---|" * len(head))
        for topology in a.topologies.split(","):
            for load in loads:
                rows = results["cells"][key(scale, topology, load)]
                statics = [r for r in rows if not r["policy"].startswith("dqn")]
                best = max(statics, key=lambda r: (r["success_ratio"], -r["p99"]))
                ok = [r for r in statics if 100 * (best["success_ratio"] - r["success_ratio"])
                      <= SUCCESS_ALLOWANCE_PP + 1e-9]
                tail = min(ok, key=lambda r: (r["p99"], -r["success_ratio"]))
                by_name = {r["policy"]: r for r in rows}
                for label, name in (("tuner", f"dqn:{topology}-tuner"),
                                    ("edgetuner", f"dqn:{topology}-edgetuner")):
                    r = by_name.get(name)
                    if r is None and label == "tuner":
                        # With one --agent (a topology without an EdgeTuner checkpoint),
                        # compare names the row plain `dqn`.
                        r = by_name.get("dqn")
                    if r is None:
                        continue
                    mean = sum(r["p99"] / s["p99"] - 1 for s in statics) / len(statics)
                    out.append(f"| {topology} | {load} | {label} | {fmt(r)} | "
                               f"{best['policy']}: {fmt(best)} | {vs(r, best)} | "
                               f"{tail['policy']}: {fmt(tail)} | {vs(r, tail)} | "
                               f"{100 * mean:+.1f} % over {len(statics)} |")
        out.append("")
    return "\n".join(out)


text = render()
print(text, end="")
if a.publish:
    docgen.publish(CMD, {None: text}, results)
