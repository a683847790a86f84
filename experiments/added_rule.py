"""A rule registered after docs/baselines.md's table was run, measured on that table's cells
(docs/baselines.md): every topology × load of the recorded table, its seeds (101–105), under
`off` and `window` accounting, against the recorded best heuristic of each cell. Where the rule
is never above it by mean, the best heuristic of every results table — the best of every
registered rule — is unchanged, and so is every comparison made against it.

Usage: python3 -m experiments.added_rule [--rule balanced-allocation] [--publish] [--from-json]
       [--reuse] [--ray HOST:PORT]

Page: docs/baselines.md.
"""
import statistics
import sys

from experiments import cli
from experiments import docgen
from experiments import references as refs
from experiments.cells import load_flags, pm, sweep


def parser():
    """The command line: experiments/cli.py's shared flags and this module's own."""
    p = cli.parser("seeds", "duration", "diurnal-duration", "bin", "threads", "runner",
                   out="out/added-rule")
    p.add_argument("--rule", default="balanced-allocation")
    return p


MODES = ["off", "window"]


def measure():
    base = refs.recorded(SEEDS)
    cells = []
    for key in sorted(base):
        topology, load = key.split("|")
        cells.append(dict(load_flags(load, a.duration, a.diurnal_duration),
                          name=f"{topology}--{load}", topology=f"topologies/{topology}.yaml"))
    grid = {"name": "added-rule", "compare": {"policies": a.rule},
            "axes": [{"cell": cells}, {"seed": [int(s) for s in SEEDS]},
                     {"mode": [{"name": m, "own-bindings": m} for m in MODES]}]}
    res = {}
    for labels, report in sweep(grid, f"{a.out}/{a.rule}", a.bin, ray=a.ray, threads=a.threads,
                                reuse=a.reuse):
        key = labels["cell"].replace("--", "|")
        row = next(r for r in report["results"] if r["policy"] == a.rule)
        res.setdefault(key, {}).setdefault(labels["mode"], {})[str(labels["seed"])] = \
            100 * row["success_ratio"]
    return {"rule": a.rule, "cells": res}


def render(res):
    base = refs.recorded(SEEDS)
    text = [f"`{res['rule']}` on the cells of the table above ({len(SEEDS)} seeds, {a.seeds}), "
            "against each cell's recorded best heuristic (every rule registered when the table "
            "was run); success %, mean ± sd; the difference per seed with the verdict of "
            "docs/methodology.md\n",
            f"| cell | `{res['rule']}` (off) | (window) | best heuristic | best of the rule − it, "
            "pp |", "|---|---|---|---|---|"]
    above = 0
    order = lambda k: (k.split("|")[0], float("inf") if k.endswith("diurnal")
                       else float(k.split("|")[1]))
    for key in sorted(res["cells"], key=order):
        per_mode = res["cells"][key]
        name, h = refs.best_heuristic(base[key], SEEDS)
        xs = {m: [per_mode[m][s] for s in SEEDS] for m in MODES}
        top = max(MODES, key=lambda m: statistics.mean(xs[m]))
        above += statistics.mean(xs[top]) > statistics.mean(h)
        topology, load = key.split("|")
        cell = f"{topology}, {load}" if load == "diurnal" else f"{topology}, λ {load}"
        text.append(f"| {cell} | {pm(xs['off'])} | {pm(xs['window'])} | "
                    f"{refs.label(name)} {pm(h)} | {refs.versus(xs[top], h)} |")
    text.append(f"\nCells where the rule's mean is above the best heuristic's: {above} of "
                f"{len(res['cells'])}.")
    return "\n".join(text) + "\n"


def main(argv=None):
    """Runs the command line `argv` (default: sys.argv[1:])."""
    global SEEDS, a
    argv = sys.argv[1:] if argv is None else argv
    a = parser().parse_args(argv)
    CMD = docgen.command(__file__, argv, drop=("--publish", "--from-json", "--reuse"),
                         drop_valued=("--out", "--bin", "--threads", "--ray"))
    SEEDS = a.seeds.split(",")
    results = docgen.recorded_or_exit(CMD) if a.from_json else measure()
    text = render(results)
    print(text, end="")
    if a.publish:
        docgen.publish(CMD, {None: text}, results)


if __name__ == "__main__":
    main()
