#!/usr/bin/env python3
"""Runs `continuum compare --agent … --oracle` on every topology at λ ∈ {20, 40, 60, 80, 100} on
an evaluation seed (never used in training) and prints a Markdown table of success ratios:
the DQN, every static policy, the best static one, and the oracle.

Usage: python3 scripts/meta_results.py [--seed 101] [--duration 300] [--out out/meta]
It needs a release build (`cargo build --release`) and the checkpoints models/<topology>.dqn.
"""
import argparse
import json
import pathlib
import subprocess

p = argparse.ArgumentParser()
p.add_argument("--seed", type=int, default=101)
p.add_argument("--duration", type=float, default=300)
p.add_argument("--lambdas", default="20,40,60,80,100")
p.add_argument("--topologies", default="full-edge,co-dc-cloud,dc-cloud")
p.add_argument("--out", default="out/meta")
p.add_argument("--bin", default="target/release/continuum")
a = p.parse_args()

out = pathlib.Path(a.out)
out.mkdir(parents=True, exist_ok=True)
print(f"Success ratio (%), seed {a.seed}, {a.duration:.0f} s per run; the DQN was trained at λ = 60 only.\n")
for topo in a.topologies.split(","):
    rows = []
    for lam in a.lambdas.split(","):
        cmd = [a.bin, "compare", f"topologies/{topo}.yaml", "--lambda", lam, "--duration", str(a.duration),
               "--seed", str(a.seed), "--agent", f"models/{topo}.dqn", "--oracle", "--format", "json"]
        if lam == "60":
            cmd += ["--out", str(out / topo)]
        r = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
        by = {x["policy"]: x["success_ratio"] * 100 for x in r["results"]}
        static = {k: v for k, v in by.items() if k not in ("dqn", "oracle")}
        best = max(static, key=static.get)
        rows.append((lam, by, static, best))
    names = list(rows[0][2].keys())
    print(f"**{topo}**\n")
    print("| λ | dqn | best static | oracle | dqn − best | gap closed | " + " | ".join(names) + " |")
    print("|---" * (6 + len(names)) + "|")
    for lam, by, static, best in rows:
        gap = by["oracle"] - static[best]
        closed = f"{100 * (by['dqn'] - static[best]) / gap:.0f} %" if gap > 1e-9 else "n/a"
        cells = " | ".join(f"{static[n]:.2f}" for n in names)
        print(f"| {lam} | {by['dqn']:.2f} | {static[best]:.2f} ({best}) | {by['oracle']:.2f} | {by['dqn'] - static[best]:+.2f} | {closed} | {cells} |")
    print()
