"""The simulator's work per simulated query, counted in instructions (docs/performance.md): the
command of experiments/performance.py run under `valgrind --tool=callgrind` for 90 s and for
30 s of simulated time; the difference of the two instruction counts over the difference of
the two query counts is the steady-state cost of one query (the shorter run cancels the
start-up: reading the files, building the topology). Unlike a wall time, the count does not
depend on how fast or how busy the machine is, so it compares across commits.

Usage: python3 -m experiments.instructions [--bin target/release/continuum] [--check]
       [--publish] [--from-json]
--check compares the count with the recorded one (docs/generated/) and exits 1 when it grew by
more than 10 %; --publish records the table and the counts under docs/generated/
(experiments/docgen.py); --from-json prints them again from the recorded counts.
Needs valgrind and a release build.

Page: docs/performance.md.
"""
import json
import re
import subprocess
import sys
import tempfile

from experiments import cli
from experiments import docgen

GROWTH = 1.10  # --check fails above the recorded count × this


def simulate(duration):
    return ["simulate", "topologies/full-edge.yaml", "--lambda", "60", "--duration", str(duration),
            "--seed", "7", "--policy", "least-impedance", "--threads", "1", "--format", "json"]


def count(binary, duration):
    """(instructions, simulated queries) of one run under callgrind."""
    with tempfile.NamedTemporaryFile(suffix=".callgrind") as out:
        p = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out.name}",
                            binary, *simulate(duration)], capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"callgrind run of {duration} s failed:\n{p.stderr[-2000:]}")
    m = re.search(r"Collected : (\d+)", p.stderr)
    if not m:
        sys.exit("callgrind printed no instruction count")
    return int(m.group(1)), json.loads(p.stdout)["sim"]["queries"]


def measure(binary):
    (i30, q30), (i90, q90) = count(binary, 30), count(binary, 90)
    return {"short": {"duration_s": 30, "instructions": i30, "queries": q30},
            "long": {"duration_s": 90, "instructions": i90, "queries": q90},
            "per_query": (i90 - i30) / (q90 - q30)}


def render(res):
    s, g = res["short"], res["long"]
    return (f"`continuum {' '.join(simulate('D'))}` under `valgrind --tool=callgrind`:\n\n"
            "| D (simulated s) | instructions | simulated queries |\n|---:|---:|---:|\n"
            f"| {s['duration_s']} | {s['instructions']} | {s['queries']} |\n"
            f"| {g['duration_s']} | {g['instructions']} | {g['queries']} |\n\n"
            f"Instructions per simulated query (the difference of the two runs): "
            f"{res['per_query']:.0f}.\n")


def parser():
    """The command line: experiments/cli.py's shared flags and this module's own."""
    ap = cli.parser("bin", description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true")
    return ap


def main(argv=None):
    """Runs the command line `argv` (default: sys.argv[1:]); returns the exit status."""
    argv = sys.argv[1:] if argv is None else argv
    a = parser().parse_args(argv)
    cmd = docgen.command(__file__, [x for x in argv if x != "--check"])
    if a.from_json:
        res = docgen.recorded_or_exit(cmd)
    else:
        res = measure(a.bin)
    print(render(res), end="")
    if a.check:
        old = docgen.recorded_or_exit(cmd)["per_query"]
        grew = res["per_query"] / old
        print(f"\nagainst the recorded {old:.0f}: ×{grew:.3f}")
        if grew > GROWTH:
            print(f"the count grew by more than {(GROWTH - 1) * 100:.0f} %", file=sys.stderr)
            return 1
    if a.publish:
        docgen.publish(cmd, {None: render(res)}, res)
    return 0


if __name__ == "__main__":
    sys.exit(main())
