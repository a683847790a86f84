"""Tail-latency mitigation results (static configurations): on each topology and load, every
dispatch policy under every mitigation of a small grid (none; reissue and discard at each ratio),
on an evaluation seed. Per cell:

  best success     the configuration with the highest success ratio (ties: lower p99)
  lowest p99 within the allowance
                   the configuration with the lowest p99 among those whose success ratio is at
                   most SUCCESS_ALLOWANCE_PP below the best success (the allowance is printed in
                   the caption). Its p99 over the best-success one's is at most 1 by
                   construction (the best-success configuration is itself within the
                   allowance): 1.000 means no configuration within the allowance has a shorter
                   tail, below 1 how much tail the allowance buys.
  per mitigation   for the best-success configuration's policy: p99 and success under none, the
                   best reissue and the best discard (best = lowest p99), each with its p99 over
                   none's and its success minus none's (either can come out above or below)
  ×1 choice        with several capacity scales (--capacity-scales): the configuration that has
                   the best success at ×1, run at each scale, and its success minus that
                   scale's best success (at most 0 by construction: how much the choice made at
                   ×1 loses when capacity changes)

Usage: python3 -m experiments.tail [--seed 101] [--duration 300] [--ratios 0.7,0.8,0.9]
       [--capacity-scales 1] [--queue-bound deadline] [--out out/tail] [--publish]
       [--from-json]
It needs a release build (`cargo build --release`), except with --from-json. Prints a Markdown
table; every run is a report of one grid under <out>/sweep (`continuum sweep`; --ray HOST:PORT
runs it on a Ray head). --publish records the output and the results it was printed from under docs/generated/ and rewrites the docs' blocks that name this
command (experiments/docgen.py); --from-json prints the table again from those recorded results
without running anything.

Page: docs/tail.md.
"""
import pathlib
import sys

from experiments import cli
from experiments import docgen
from experiments.cells import cell_key, load_flags, summary_rows, sweep

# How far below the best success ratio (percentage points) a configuration may be and still
# count as "as successful" when looking for the shortest tail.
SUCCESS_ALLOWANCE_PP = 0.5


def parser():
    """The command line: experiments/cli.py's shared flags and this module's own."""
    p = cli.parser("duration", "diurnal-duration", "bin", "ray", out="out/tail")
    p.add_argument("--seed", type=int, default=101)
    p.add_argument("--lambdas", default="60,100")
    p.add_argument("--topologies", default="full-edge,co-dc-cloud")
    p.add_argument("--ratios", default="0.7,0.8,0.9")
    p.add_argument("--capacity-scales", "--capacity-scale", dest="scales", default="1",
                   help="comma-separated; with scales other than 1, ×1 is run too (the reference)")
    p.add_argument("--queue-bound", default="deadline",
                   help="the workers' admission; `unbounded` shows mitigation without it")
    return p


key = cell_key


def fmt(r):
    return f"{100 * r['success_ratio']:.2f} % / {r['p99']:.1f}"


def best_success(rows):
    return max(rows, key=lambda r: (r["success_ratio"], -r["p99"]))


def lowest_p99_within(rows, best):
    ok = [r for r in rows
          if 100 * (best["success_ratio"] - r["success_ratio"]) <= SUCCESS_ALLOWANCE_PP + 1e-9]
    return min(ok, key=lambda r: (r["p99"], -r["success_ratio"]))


def vs_none(r, none):
    return (f"{fmt(r)} (p99 ×{r['p99'] / none['p99']:.2f}, "
            f"{100 * (r['success_ratio'] - none['success_ratio']):+.2f} pp)")


def render():
    lines = [f"seed {a.seed}, queue bound {a.queue_bound}, ratios {a.ratios}; {a.duration:g} s "
             f"runs, diurnal {a.diurnal_duration:g} s; success allowance "
             f"{SUCCESS_ALLOWANCE_PP} pp; cells: success / p99 ms", ""]
    head = ["topology", "load", "best success", f"lowest p99 within {SUCCESS_ALLOWANCE_PP} pp",
            "p99 ratio (≤ 1)", "its policy: none", "best reissue (vs none)",
            "best discard (vs none)"]
    if reference:
        head = ["capacity"] + head + ["×1 choice (vs best success)"]
    lines.append("| " + " | ".join(head) + " |")
    lines.append("|" + "---|" * len(head))
    for scale in scales:
        for topology in topologies:
            for load in loads:
                rows = results["cells"][key(scale, topology, load)]
                best = best_success(rows)
                tail = lowest_p99_within(rows, best)
                policy = best["policy"].split("+")[0]
                mine = [r for r in rows if r["policy"].split("+")[0] == policy]
                none = next(r for r in mine if "+" not in r["policy"])

                def best_of(kind):
                    c = [r for r in mine if f"+{kind}@" in r["policy"]]
                    r = min(c, key=lambda r: r["p99"])
                    return f"{r['policy'].split('+')[1]}: {vs_none(r, none)}"

                cells = [topology, load, f"{best['policy']}: {fmt(best)}",
                         f"{tail['policy']}: {fmt(tail)}", f"{tail['p99'] / best['p99']:.3f}",
                         fmt(none), best_of("reissue"), best_of("discard")]
                if reference:
                    chosen = best_success(results["cells"][key("1", topology, load)])["policy"]
                    here = next(r for r in rows if r["policy"] == chosen)
                    d = 100 * (here["success_ratio"] - best["success_ratio"])
                    cells = [f"×{scale}"] + cells + [f"{chosen}: {fmt(here)} ({d:+.2f} pp)"]
                lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    """Runs the command line `argv` (default: sys.argv[1:])."""
    global a, loads, reference, results, scales, topologies
    argv = sys.argv[1:] if argv is None else argv
    a = parser().parse_args(argv)
    CMD = docgen.command(__file__, argv, drop_valued=("--out", "--bin", "--ray"))
    scales = a.scales.split(",")
    loads = a.lambdas.split(",") + ["diurnal"]
    topologies = a.topologies.split(",")
    reference = scales != ["1"]
    if a.from_json:
        results = docgen.recorded_or_exit(CMD)
    else:
        # Every run is a report of one grid (`continuum sweep`; <out>/sweep): capacity scale ×
        # topology × load, each report every policy under the mitigation grid.
        run_scales = scales + (["1"] if reference and "1" not in scales else [])
        grid = {"name": "tail", "compare": {"grid": True, "ratios": a.ratios, "seed": a.seed,
                                            "queue-bound": a.queue_bound},
                "axes": [{"capacity-scale": run_scales}, {"topology": topologies},
                         {"load": [load_flags(x, a.duration, a.diurnal_duration) for x in loads]}]}
        results = {"cells": {}}
        for labels, r in sweep(grid, pathlib.Path(a.out) / "sweep", a.bin, ray=a.ray):
            results["cells"][key(labels["capacity-scale"], labels["topology"], labels["load"])] = \
                summary_rows(r["results"])
    text = render()
    print(text, end="")
    if a.publish:
        docgen.publish(CMD, {None: text}, results)


if __name__ == "__main__":
    main()
