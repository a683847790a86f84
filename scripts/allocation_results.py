#!/usr/bin/env python3
"""Allocator-above-dispatch results: on each topology, under workloads/shifting-mix.yaml (one
whole day of 600 s), every dispatch policy under every allocator (`static`: the topology
file's deployment), on a held-out seed. Prints Markdown:

  summary   per topology and allocator: the best dispatch policy's success ratio (its name)
            and OGASched's reward per slot of that row; OGA's margin over the best other
            allocator and over static (target: >= 0 and >= +3 pp on full-edge)
  matrix    success ratio of every allocator x policy (docs)
  ablation  full-edge, OGA under each policy's best: units x learning rate

Usage: python3 scripts/allocation_results.py [--seed 101] [--duration 600] [--out out/alloc]
       [--topologies full-edge,co-dc-cloud,dc-cloud] [--generated] [--ablation]
It needs a release build (`cargo build --release`). `--generated` adds a topology that is not
in the repository (`continuum topology generate`, written under --out). The compare JSON of
every run goes under --out.
"""
import argparse
import pathlib
import subprocess

from cells import run_json

ALLOCATORS = ["static", "oga", "drf", "fairness", "binpacking", "spreading"]
GENERATE = ["topology", "generate", "--antennas", "24", "--antennas-per-co", "3",
            "--cos-per-rdc", "3", "--link-ms", "2,8,25", "--link-spread", "0.4",
            "--cpu", "12,48,96,192", "--gpu", "8,16,24", "--antenna-gpu-share", "0.3",
            "--seed", "5"]

p = argparse.ArgumentParser()
p.add_argument("--seed", type=int, default=101)
p.add_argument("--duration", type=float, default=600)
p.add_argument("--topologies", default="full-edge,co-dc-cloud,dc-cloud")
p.add_argument("--generated", action="store_true")
p.add_argument("--ablation", action="store_true")
p.add_argument("--out", default="out/alloc")
p.add_argument("--bin", default="target/release/continuum")
a = p.parse_args()

out = pathlib.Path(a.out)
out.mkdir(parents=True, exist_ok=True)
paths = [(t, f"topologies/{t}.yaml") for t in a.topologies.split(",") if t]
if a.generated:
    g = out / "isp-24.yaml"
    subprocess.run([a.bin, *GENERATE, "--out", str(g)], check=True, capture_output=True)
    paths.append(("isp-24 (generated)", str(g)))


def compare(path, tag, extra):
    args = [a.bin, "compare", path, "--workload", "workloads/shifting-mix.yaml",
            "--duration", str(a.duration), "--seed", str(a.seed), "--format", "json", *extra]
    return run_json(args, out / f"{tag}.json")


def split(row):
    policy, allocator = row["policy"].rsplit("@", 1)
    return policy, allocator


def pct(x):
    return f"{100 * x:.2f}"


summary = ["| topology | " + " | ".join(ALLOCATORS) + " | oga − best other | oga − static |",
           "|---|" + "---|" * (len(ALLOCATORS) + 2)]
matrices = []
for name, path in paths:
    tag = pathlib.Path(path).stem
    rows = compare(path, tag, ["--allocators", ",".join(ALLOCATORS)])
    best = {}
    cells = {}
    for r in rows:
        pol, al = split(r)
        cells[(pol, al)] = r
        if al not in best or r["success_ratio"] > best[al]["success_ratio"]:
            best[al] = r
    line = f"| {name} |"
    for al in ALLOCATORS:
        r = best[al]
        reward = r["allocation"]["mean_reward"]
        rtxt = "" if reward is None else f", q {reward:.0f}"
        line += f" {pct(r['success_ratio'])} ({split(r)[0]}{rtxt}) |"
    oga = best["oga"]["success_ratio"]
    other = max(best[al]["success_ratio"] for al in ALLOCATORS if al not in ("oga", "static"))
    line += f" {100 * (oga - other):+.2f} pp | {100 * (oga - best['static']['success_ratio']):+.2f} pp |"
    summary.append(line)
    policies = sorted({pol for pol, _ in cells})
    m = [f"**{name}** (success %, seed {a.seed})", "",
         "| policy | " + " | ".join(ALLOCATORS) + " |", "|---|" + "---|" * len(ALLOCATORS)]
    for pol in policies:
        m.append(f"| {pol} | " + " | ".join(pct(cells[(pol, al)]["success_ratio"])
                                           for al in ALLOCATORS) + " |")
    matrices.append("\n".join(m))

print("\n".join(summary))
print()
print("\n\n".join(matrices))

if a.ablation:
    print()
    print(f"**Ablation** (full-edge, `least-impedance`, seed {a.seed}): OGA's model settings")
    print()
    print("| units | η0 | success % | reward/slot | replica changes |")
    print("|---|---|---|---|---|")
    for units in ["natural", "replica", "instance"]:
        for eta in [None, "25", "1"]:
            extra = ["--policies", "least-impedance", "--allocators", "oga",
                     "--alloc-units", units]
            if eta:
                extra += ["--alloc-eta0", eta]
            r = compare("topologies/full-edge.yaml", f"ablation-{units}-{eta or 'bound'}",
                        extra)[0]
            al = r["allocation"]
            print(f"| {units} | {eta or 'regret bound'} | {pct(r['success_ratio'])} | "
                  f"{al['mean_reward']:.1f} | {al['replica_changes']} |")
