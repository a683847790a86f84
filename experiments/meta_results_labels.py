"""What the per-class agent's network adds over its own fallback tables, for checkpoints trained
with different counterfactual labels (docs/meta-results.md): each checkpoint is run as itself
(`--agent`) and as its tables alone (`--agent-tables`) on the evaluation seeds (default
101–105) at every λ, and the difference is given per λ as mean ± sd over the seeds (min … max),
over the whole run and from --warmup-s on.

Usage: python3 -m experiments.meta_results_labels --agents NAME=PATH,NAME=PATH
       [--topology full-edge] [--seeds 101,102,103,104,105] [--publish] [--from-json]
       [--ray HOST:PORT]
Every run is a cell of one grid (<out>/sweep: `continuum sweep`), here or on a Ray cluster.

Page: docs/meta-results.md.
"""
import statistics
import sys

from experiments import cli
from experiments import docgen
from experiments.cells import success_from, sweep


def parser():
    """The command line: experiments/cli.py's shared flags and this module's own."""
    p = cli.parser("seeds", "duration", "bin", "ray", out="out/label-ablation")
    p.add_argument("--agents", required=True,
                   help="comma-separated NAME=CHECKPOINT (the name is what the table shows)")
    p.add_argument("--topology", default="full-edge")
    p.add_argument("--lambdas", default="20,40,60,80,100")
    p.add_argument("--warmup-s", type=float, default=60)
    return p


def after(row):
    return success_from(row, a.warmup_s)


def measure():
    """Every run as one grid (`continuum sweep`; <out>/sweep): λ × seed, each report `closest`
    and every checkpoint as itself and as its tables alone."""
    paths = [path for _, path in AGENTS]
    grid = {"name": "label-ablation",
            "compare": {"topology": a.topology, "duration": a.duration, "policies": "closest",
                        "agent": paths, "agent-tables": paths},
            "axes": [{"lambda": a.lambdas.split(",")}, {"seed": a.seeds.split(",")}]}
    out = {}
    for labels, r in sweep(grid, f"{a.out}/sweep", a.bin, ray=a.ray):
        rows = {x["policy"]: x for x in r["results"]}
        cell = {}
        for name, path in AGENTS:
            stem = path.rsplit("/", 1)[-1].removesuffix(".dqn")
            agent = rows.get(f"dqn:{stem}") or rows["dqn"]
            tables = rows[f"tables:{stem}"]
            cell[name] = dict(agent=100 * agent["success_ratio"],
                              tables=100 * tables["success_ratio"],
                              agent_after=after(agent), tables_after=after(tables))
        out.setdefault(labels["lambda"], []).append(cell)
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


def main(argv=None):
    """Runs the command line `argv` (default: sys.argv[1:])."""
    global AGENTS, a
    argv = sys.argv[1:] if argv is None else argv
    a = parser().parse_args(argv)
    CMD = docgen.command(__file__, argv, drop_valued=("--out", "--bin", "--ray"))
    AGENTS = [x.split("=", 1) for x in a.agents.split(",")]
    docgen.single_part(CMD, a.from_json, a.publish, measure, render, end="")


if __name__ == "__main__":
    main()
