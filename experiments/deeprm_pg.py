"""Policy gradient against Double DQN for continuum's per-class meta-policy (docs/deeprm.md,
"On continuum's own problem"): the checkpoints trained by `continuum train` with
config/reinforce.yaml and config/reinforce-improved.yaml (same budget, fallback tables and
margin selection as config/dqn.yaml's models/full-edge.dqn), every static policy (tetris and
random among them; the best by mean over the seeds is the baseline, as ASET's paper picks it),
on full-edge at each λ of --lambdas, 300 s, seeds 101-105: success % mean ± sd.

Usage: python3 -m experiments.deeprm_pg [--publish] [--from-json] [--ray HOST:PORT]
Every run is a cell of one grid (<out>/sweep: `continuum sweep`), here or on a Ray cluster.

Page: docs/deeprm.md.
"""
import statistics
import sys

from experiments import cli
from experiments import docgen
from experiments.cells import pm, sweep


def parser():
    """The command line: experiments/cli.py's shared flags and this module's own."""
    p = cli.parser("seeds", "duration", "bin", "ray", duration="300", duration_type=str,
                   out="out/pg")
    p.add_argument("--lambdas", default="20,60,100")
    p.add_argument("--topology", default="full-edge")
    p.add_argument("--agents", default="dqn=models/full-edge.dqn,reinforce=models/full-edge-reinforce.dqn,"
                   "reinforce-improved=models/full-edge-reinforce-improved.dqn")
    return p


STATIC = ["closest", "load-balancing", "farthest", "cheaper", "random-proportional-latency",
          "random-proportional-load", "least-impedance", "random", "tetris"]


def measure():
    """Every run as one grid (`continuum sweep`): λ × seed, each report the static policies and
    the agents."""
    grid = {"name": "pg-results",
            "compare": {"topology": a.topology, "duration": float(a.duration),
                        "policies": ",".join(STATIC), "agent": [path for _, path in AGENTS]},
            "axes": [{"lambda": a.lambdas.split(",")}, {"seed": a.seeds.split(",")}]}
    cells = {}
    for labels, r in sweep(grid, f"{a.out}/sweep", a.bin, ray=a.ray):
        rows = cells.setdefault(labels["lambda"], {})
        for x in r["results"]:
            rows.setdefault(x["policy"], []).append(100 * x["success_ratio"])
    return cells


def text(cells):
    lams = [l for l in a.lambdas.split(",") if l in cells]  # the order asked (JSON sorts keys)
    lines = ["| row | " + " | ".join(f"λ {l}" for l in lams) + " |", "|---|" + "---:|" * len(lams)]
    stem = {name: "dqn:" + path.rsplit("/", 1)[-1].rsplit(".", 1)[0] for name, path in AGENTS}
    for name, _ in AGENTS:
        lines.append(f"| {name} | " + " | ".join(pm(cells[l][stem[name]]) for l in lams) + " |")
    best = {l: max(STATIC, key=lambda n: statistics.mean(cells[l][n])) for l in lams}
    lines.append("| best ASET policy | " + " | ".join(f"{pm(cells[l][best[l]])} ({best[l]})" for l in lams) + " |")
    for n in ["tetris", "random"]:
        lines.append(f"| {n} | " + " | ".join(pm(cells[l][n]) for l in lams) + " |")
    return "\n".join(lines)


def main(argv=None):
    """Runs the command line `argv` (default: sys.argv[1:])."""
    global AGENTS, a
    argv = sys.argv[1:] if argv is None else argv
    a = parser().parse_args(argv)
    CMD = docgen.command(__file__, argv, drop_valued=("--out", "--bin", "--ray"))
    AGENTS = [x.split("=", 1) for x in a.agents.split(",")]
    docgen.single_part(CMD, a.from_json, a.publish, measure, text)


if __name__ == "__main__":
    main()
