#!/usr/bin/env python3
"""Tail-latency mitigation results (static configurations): on each topology and load, every
dispatch policy under every mitigation of a small grid (none; reissue and discard at each ratio),
on an evaluation seed, and:

  best static        the configuration with the highest success ratio (ties: lower p99)
  best p99 at equal  the configuration with the lowest overall p99 among those whose success
                     ratio is not below the best static's (EdgeTuner's objective with our
                     success constraint); its p99 over the best static's is the target ratio
                     (≤ 0.80 asked)
  per mitigation     for the best static's policy: p99 and success under none, the best
                     reissue and the best discard (best = lowest p99)

Usage: python3 scripts/tail_results.py [--seed 101] [--duration 300] [--ratios 0.7,0.8,0.9]
       [--capacity-scale 1] [--queue-bound deadline] [--out out/tail]
It needs a release build (`cargo build --release`). Prints a Markdown table; the compare JSON of
every run goes under --out.
"""
import argparse
import pathlib

from cells import load_args, run_json

p = argparse.ArgumentParser()
p.add_argument("--seed", type=int, default=101)
p.add_argument("--duration", type=float, default=300)
p.add_argument("--diurnal-duration", type=float, default=600,
               help="one whole period of workloads/diurnal.yaml")
p.add_argument("--lambdas", default="60,100")
p.add_argument("--topologies", default="full-edge,co-dc-cloud")
p.add_argument("--ratios", default="0.7,0.8,0.9")
p.add_argument("--capacity-scale", default="1")
p.add_argument("--queue-bound", default="deadline",
               help="the workers' admission; `unbounded` shows mitigation without it")
p.add_argument("--out", default="out/tail")
p.add_argument("--bin", default="target/release/continuum")
a = p.parse_args()

out = pathlib.Path(a.out)
out.mkdir(parents=True, exist_ok=True)


def compare(topology, load):
    args = [a.bin, "compare", f"topologies/{topology}.yaml", "--grid", "--ratios", a.ratios,
            "--seed", str(a.seed), "--capacity-scale", a.capacity_scale,
            "--queue-bound", a.queue_bound, "--format", "json"]
    args += load_args(load, a.duration, a.diurnal_duration)
    return run_json(args, out / f"{topology}-{load}-cap{a.capacity_scale}-{a.queue_bound}.json")


def fmt(r):
    return f"{100 * r['success_ratio']:.2f} % / {r['latency_ms']['p99']:.1f}"


print(f"seed {a.seed}, capacity ×{a.capacity_scale}, queue bound {a.queue_bound}, "
      f"ratios {a.ratios}; cells: success / p99 ms")
print()
print("| topology | load | best static | best p99 at ≥ its success | p99 ratio | "
      "its policy: none | best reissue | best discard |")
print("|---|---|---|---|---|---|---|---|")
for topology in a.topologies.split(","):
    for load in a.lambdas.split(",") + ["diurnal"]:
        rows = compare(topology, load)
        best = max(rows, key=lambda r: (r["success_ratio"], -r["latency_ms"]["p99"]))
        ok = [r for r in rows if r["success_ratio"] >= best["success_ratio"] - 1e-12]
        tail = min(ok, key=lambda r: r["latency_ms"]["p99"])
        policy = best["policy"].split("+")[0]
        mine = [r for r in rows if r["policy"].split("+")[0] == policy]
        none = next(r for r in mine if "+" not in r["policy"])

        def best_of(kind):
            c = [r for r in mine if f"+{kind}@" in r["policy"]]
            r = min(c, key=lambda r: r["latency_ms"]["p99"])
            return f"{r['policy'].split('+')[1]}: {fmt(r)}"

        ratio = tail["latency_ms"]["p99"] / best["latency_ms"]["p99"]
        print(f"| {topology} | {load} | {best['policy']}: {fmt(best)} | "
              f"{tail['policy']}: {fmt(tail)} | {ratio:.3f} | {fmt(none)} | "
              f"{best_of('reissue')} | {best_of('discard')} |", flush=True)
