#!/usr/bin/env python3
"""Configuration tuner results (EdgeTuner in continuum): on each topology, load and capacity
scale, the trained tuner(s) against every static configuration of the tuner's own grid (its
action list: each dispatch policy under none, reissue@0.8 and discard@0.9), on an evaluation
seed never used in training or in choosing a fallback table or margin.

  best static   the static configuration with the highest success ratio (ties: lower p99),
                chosen in hindsight on the evaluation seed
  best p99 at ≥ the lowest p99 among static configurations whose success ratio is not below
                the best static's
  tuner         models/<topology>-tuner.dqn (per class, per scheduler, 5 s windows)
  edgetuner     models/<topology>-edgetuner.dqn when it exists (one configuration for all,
                every 10 s)
  p99 ratio     tuner p99 / best static p99 (target ≤ 0.80 with success not below)

Usage: python3 scripts/tuner_results.py [--seed 101] [--duration 300] [--lambdas 60,100]
       [--topologies full-edge,co-dc-cloud] [--capacity-scales 1,0.5,0.75,1.25,1.5]
It needs a release build (`cargo build --release`) and the checkpoints (README: `train` with
config/dqn-tuner.yaml). Prints Markdown tables; the compare JSON of every cell goes under --out.
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
p.add_argument("--capacity-scales", default="1,0.5,0.75,1.25,1.5")
p.add_argument("--out", default="out/tuner")
p.add_argument("--bin", default="target/release/continuum")
a = p.parse_args()

out = pathlib.Path(a.out)
out.mkdir(parents=True, exist_ok=True)


def grid():
    """The tuner's action list, read from config/dqn-tuner.yaml (a flow sequence)."""
    text = pathlib.Path("config/dqn-tuner.yaml").read_text()
    body = text.split("actions: [", 1)[1].split("]", 1)[0]
    return [x.strip() for x in body.replace("\n", " ").split(",") if x.strip()]


CONFIGS = ",".join(grid())


def compare(topology, load, scale, agents):
    args = [a.bin, "compare", f"topologies/{topology}.yaml", "--configs", CONFIGS,
            "--seed", str(a.seed), "--capacity-scale", scale, "--format", "json"]
    for ag in agents:
        args += ["--agent", str(ag)]
    args += load_args(load, a.duration, a.diurnal_duration)
    return run_json(args, out / f"{topology}-{load}-cap{scale}.json")


def fmt(r):
    return f"{100 * r['success_ratio']:.2f} / {r['latency_ms']['p99']:.0f}"


for scale in a.capacity_scales.split(","):
    print(f"\nseed {a.seed}, capacity ×{scale}; cells: success % / p99 ms\n")
    print("| topology | load | best static | best p99 at ≥ its success | tuner | tuner − best "
          "(pp) | p99 ratio | edgetuner | edgetuner p99 ratio |")
    print("|---|---|---|---|---|---|---|---|---|")
    for topology in a.topologies.split(","):
        tuner = pathlib.Path(f"models/{topology}-tuner.dqn")
        edge = pathlib.Path(f"models/{topology}-edgetuner.dqn")
        agents = [m for m in (tuner, edge) if m.exists()]
        for load in a.lambdas.split(",") + ["diurnal"]:
            rows = compare(topology, load, scale, agents)
            statics = [r for r in rows if not r["policy"].startswith("dqn")]
            best = max(statics, key=lambda r: (r["success_ratio"], -r["latency_ms"]["p99"]))
            ok = [r for r in statics if r["success_ratio"] >= best["success_ratio"] - 1e-12]
            tail = min(ok, key=lambda r: r["latency_ms"]["p99"])
            by_name = {r["policy"]: r for r in rows}
            cells = []
            for name in ("dqn:" + topology + "-tuner", "dqn:" + topology + "-edgetuner", "dqn"):
                if name in by_name:
                    cells.append(by_name[name])
            t = cells[0] if cells else None
            e = cells[1] if len(cells) > 1 else None

            def vs(r):
                if r is None:
                    return "–", "–", "–"
                d = 100 * (r["success_ratio"] - best["success_ratio"])
                ratio = r["latency_ms"]["p99"] / best["latency_ms"]["p99"]
                return fmt(r), f"{d:+.2f}", f"{ratio:.3f}"

            tf, td, tr = vs(t)
            ef, _, er = vs(e)
            print(f"| {topology} | {load} | {best['policy']}: {fmt(best)} | "
                  f"{tail['policy']}: {fmt(tail)} | {tf} | {td} | {tr} | {ef} | {er} |",
                  flush=True)
