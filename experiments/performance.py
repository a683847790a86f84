"""The simulator's speed on one core: `continuum simulate topologies/full-edge.yaml --lambda 60
--duration 300 --seed 7 --policy least-impedance --threads 1 --format json`, run --repeat times
back to back; prints each run's simulated queries per second and × real time (the `sim` object
of the report), and the fastest and the median. Timings depend on the machine and on what else
runs on it: run it on an idle machine.

Usage: python3 -m experiments.performance [--repeat 5] [--bin target/release/continuum] [--publish]
       [--from-json]
--publish records the table and the runs under docs/generated/ (experiments/docgen.py);
--from-json prints them again from the recorded runs.

Page: docs/performance.md.
"""
import json
import os
import statistics
import sys

from experiments import cli
from experiments import docgen
from experiments.cells import run


def parser():
    """The command line: experiments/cli.py's shared flags and this module's own."""
    p = cli.parser("bin")
    p.add_argument("--repeat", type=int, default=5)
    return p


RUN = ["simulate", "topologies/full-edge.yaml", "--lambda", "60", "--duration", "300", "--seed",
       "7", "--policy", "least-impedance", "--threads", "1", "--format", "json"]
GOAL = 1000  # × real time on one core: the simulator's goal (docs/performance.md)


def measure():
    runs = []
    for _ in range(a.repeat):
        runs.append(json.loads(run([a.bin, *RUN]))["sim"])
    return {"runs": runs, "cores": os.cpu_count()}


def render(res):
    runs = res["runs"]
    x = [r["x_real_time_per_core"] for r in runs]
    q = [r["queries_per_core_s"] / 1e6 for r in runs]
    lines = [f"`continuum {' '.join(RUN)}`, {len(runs)} runs back to back:\n",
             "| run | simulated queries | wall s | M queries/s | × real time |", "|---|---:|---:|---:|---:|"]
    for i, r in enumerate(runs, 1):
        lines.append(f"| {i} | {r['queries']} | {r['wall_s']:.3f} | "
                     f"{r['queries_per_core_s'] / 1e6:.2f} | {r['x_real_time_per_core']:.0f} |")
    lines.append(f"\nFastest {max(x):.0f}× real time ({max(q):.2f} M queries/s), median "
                 f"{statistics.median(x):.0f}×; goal {GOAL}×: "
                 f"{'reached' if max(x) >= GOAL else 'not reached'}.")
    head = (f"simulator speed, full-edge λ 60, one core, {len(runs)} runs | fastest {max(x):.0f}× "
            f"real time ({max(q):.2f} M queries/s), median {statistics.median(x):.0f}×; goal "
            f"{GOAL}×: {'reached' if max(x) >= GOAL else 'not reached'}\n")
    return "\n".join(lines) + "\n", head


def main(argv=None):
    """Runs the command line `argv` (default: sys.argv[1:])."""
    global a
    argv = sys.argv[1:] if argv is None else argv
    a = parser().parse_args(argv)
    CMD = docgen.command(__file__, argv)
    res = docgen.recorded_or_exit(CMD) if a.from_json else measure()
    text, head = render(res)
    print(text, end="")
    if a.publish:
        docgen.publish(CMD, {None: text, "headline": head}, res)


if __name__ == "__main__":
    main()
