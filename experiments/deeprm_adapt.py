"""Meta-learning for fast adaptation on continuum's own problem (docs/deeprm.md, "Adapting to
a new topology"): the per-class meta-policy learnt by REINFORCE improved with a fixed-size
state (config/meta-inner.yaml), on topologies that are not in the repository (generated with
seeds no training saw). Per held-out topology, four trainings of the same network, every one
with the network deciding alone (fallback_levels 0, so the comparison is of what was learnt):

  scratch-full  from fresh weights, --full-budget simulated queries of training episodes (the
                episode share of config/dqn.yaml's 3.5e9 budget on full-edge: 14 episodes)
  meta          from the meta-trained initialisation (`continuum meta-train`), 10 % of it
  transfer      from another held-out topology's scratch-full checkpoint, 10 % of it
  scratch       from fresh weights, 10 % of it

each measured with every static policy over the evaluation seeds (default 101-105) at λ 60,
300 s: success % mean ± sd. The target: meta within 0.3 pp of scratch-full, and no learnt row
below the best ASET policy − 0.3 pp.

Usage: python3 -m experiments.deeprm_adapt [--reuse] [--publish] [--from-json] [--ray HOST:PORT]
The trainings run here, one after another; the compare runs are the reports of one grid
(`continuum sweep`: <out>/sweep; --reuse keeps the cells already there, else they are run
again), here or on a Ray head (--ray).

Page: docs/deeprm.md.
"""
import pathlib
import statistics
import sys

from experiments import cli
from experiments import docgen
from experiments import references as refs
from experiments.cells import pm, run, sweep


def parser():
    """The command line: experiments/cli.py's shared flags and this module's own."""
    p = cli.parser("seeds", "duration", "bin", "runner", duration="300", duration_type=str,
                   out="out/adapt")
    p.add_argument("--lambda", dest="lam", default="60")
    p.add_argument("--topologies", default="10:3:2:901,12:4:2:902,16:2:3:903",
                   help="held-out topologies, antennas:antennas_per_co:cos_per_rdc:seed each")
    p.add_argument("--full-budget", default="1.8e9")
    p.add_argument("--meta-iterations", default="6")
    p.add_argument("--meta-budget", default="2.5e8", help="simulated queries per inner training")
    p.add_argument("--train-seed", default="1")
    return p


STATIC = ["closest", "load-balancing", "farthest", "cheaper", "random-proportional-latency",
          "random-proportional-load", "least-impedance", "random", "tetris"]
ARMS = ["scratch-full", "meta", "transfer", "scratch"]


def measure():
    cfg = out / "adapt.yaml"
    cfg.write_text("algorithm: reinforce-improved\nstate_workers: 8\nfallback_levels: 0\n")
    meta_cfg = out / "meta.yaml"
    meta_cfg.write_text(f"task_budget_queries: {a.meta_budget}\n")
    meta = out / "meta.dqn"
    run([a.bin, "meta-train", "--config", str(cfg), "--meta", str(meta_cfg), "--meta-iterations",
         a.meta_iterations, "--seed", a.train_seed, "--out", str(meta)])
    topos = []
    for spec in a.topologies.split(","):
        n, per, cos, seed = spec.split(":")
        t = out / f"held-out-{n}-{seed}.yaml"
        run([a.bin, "topology", "generate", "--antennas", n, "--antennas-per-co", per,
             "--cos-per-rdc", cos, "--seed", seed, "--name", t.stem, "--out", str(t)])
        topos.append(t)
    small = f"{float(a.full_budget) / 10:.3g}"
    ck = {}
    for t in topos:
        ck[(t, "scratch-full")] = out / f"{t.stem}-scratch-full.dqn"
        run([a.bin, "train", str(t), "--config", str(cfg), "--budget", a.full_budget,
             "--seed", a.train_seed, "--out", str(ck[(t, "scratch-full")])])
    for i, t in enumerate(topos):
        other = topos[(i + 1) % len(topos)]
        for arm, init in [("meta", meta), ("transfer", ck[(other, "scratch-full")]), ("scratch", None)]:
            ck[(t, arm)] = out / f"{t.stem}-{arm}.dqn"
            args = [a.bin, "train", str(t), "--config", str(cfg), "--budget", small,
                    "--seed", a.train_seed, "--out", str(ck[(t, arm)])]
            if init:
                args += ["--init", str(init)]
            run(args)
    # Every held-out topology on every seed, with its four checkpoints: one grid.
    grid = {"name": "adapt",
            "compare": {"lambda": a.lam, "duration": a.duration, "policies": ",".join(STATIC)},
            "axes": [{"topology": [{"name": t.stem, "topology": str(t),
                                    "agent": [str(ck[(t, arm)]) for arm in ARMS]}
                                   for t in topos]},
                     {"seed": [int(s) for s in a.seeds.split(",")]}]}
    rows_of = {}
    for labels, report in sweep(grid, out / "sweep", a.bin, ray=a.ray, reuse=a.reuse):
        rows = rows_of.setdefault(labels["topology"], {})
        for r in report["results"]:
            rows.setdefault(r["policy"], []).append(100 * r["success_ratio"])
    res = []
    for i, t in enumerate(topos):
        rows = rows_of[t.stem]
        res.append({"topology": t.stem, "transfer_from": topos[(i + 1) % len(topos)].stem,
                    "rows": rows, "curves": {arm: pathlib.Path(str(ck[(t, arm)]).replace(
                        ".dqn", ".training.csv")).read_text() for arm in ARMS}})
    return {"tasks": res, "meta_log": (out / "meta.meta.csv").read_text()}


def text(r):
    lines = ["| held-out topology | " + " | ".join(ARMS) + " | best ASET policy | verdict |",
             "|---|" + "---:|" * (len(ARMS) + 2) + ""]
    for t in r["tasks"]:
        rows = t["rows"]
        arm = {x: rows[f"dqn:{t['topology']}-{x}"] for x in ARMS}
        best = max(STATIC, key=lambda n: statistics.mean(rows[n]))
        # Paired per seed, by the verdict rule of docs/methodology.md (target: −0.3 pp).
        gap = refs.diff(arm["meta"], arm["scratch-full"])
        floor = refs.diff(arm["meta"], rows[best])
        verdict = (f"meta − scratch-full {pm(gap)} pp: {refs.verdict(gap, -0.3)}; meta − best "
                   f"ASET policy {pm(floor)} pp: {refs.verdict(floor, -0.3)}")
        lines.append(f"| {t['topology']} | " + " | ".join(pm(arm[x]) for x in ARMS)
                     + f" | {best} {pm(rows[best])} | {verdict} |")
    return "\n".join(lines)


def main(argv=None):
    """Runs the command line `argv` (default: sys.argv[1:])."""
    global a, out
    argv = sys.argv[1:] if argv is None else argv
    a = parser().parse_args(argv)
    CMD = docgen.command(__file__, argv, drop=("--publish", "--from-json", "--reuse"),
                         drop_valued=("--out", "--bin", "--ray"))
    out = pathlib.Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    docgen.single_part(CMD, a.from_json, a.publish, measure, text)


if __name__ == "__main__":
    main()
