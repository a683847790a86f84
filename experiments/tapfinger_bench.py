"""Decision time of pull dispatch per binding (docs/tapfinger.md): runs `cargo bench --bench pull`
(one decision step over one pending stream per antenna of generated ISP topologies of 16 and 257
clusters, idle view, the shipped TapFinger checkpoint and `greedy-pull`) and prints, per puller
and size, the time per binding it reports, against the targets of 100 µs at 16 clusters and
1 ms at 257; then the same bench held to one core (`taskset -c 0`, where there is one), since
TapFinger's agents split a large round's encoding and forwards over the cores. One measurement
on this machine: timings depend on the machine and on what else runs on it.

Usage: python3 -m experiments.tapfinger_bench [--publish] [--from-json]
--publish records the table and the figures under docs/generated/ and rewrites the blocks of
the docs that name this command (experiments/docgen.py); --from-json prints them again from the
recorded figures.

Page: docs/tapfinger.md.
"""
import os
import re
import shutil
import sys

from experiments import cli
from experiments import docgen
from experiments.cells import timed


def parser():
    """The command line: experiments/cli.py's shared flags and this module's own."""
    return cli.parser()


LINE = re.compile(r"pull/(?P<name>[a-z-]+)-(?P<clusters>\d+)-clusters: (?P<pending>\d+) pending, "
                  r"(?P<bound>\d+) bound in (?P<rounds>\d+) rounds; ≈ (?P<us>[\d.]+) µs per binding")
TARGET_US = {16: 100.0, 257: 1000.0}


def bench(prefix=()):
    _, stderr, _ = timed([*prefix, "cargo", "bench", "--bench", "pull", "--", "--warm-up-time", "1",
                          "--measurement-time", "3", "--sample-size", "10"], cwd=docgen.ROOT)
    rows = [dict(name=m["name"], clusters=int(m["clusters"]), pending=int(m["pending"]),
                 bound=int(m["bound"]), rounds=int(m["rounds"]), us=float(m["us"]))
            for m in LINE.finditer(stderr)]
    if not rows:
        sys.exit("no figure in the bench's output")
    return rows


def measure():
    res = {"rows": bench(), "cores": os.cpu_count()}
    if os.cpu_count() > 1 and shutil.which("taskset"):
        res["one_core"] = bench(("taskset", "-c", "0"))
    return res


def render(res):
    one = {(r["name"], r["clusters"]): r["us"] for r in res.get("one_core", [])}
    lines = ["`cargo bench --bench pull`: one decision step over one pending stream per "
             f"scheduler, idle view; time per binding (the step's time over the streams it bound, "
             f"mean of 5 steps); a machine of {res['cores']} cores, and the same bench held to "
             "one of them\n",
             "| puller | clusters | pending | bound | rounds | µs per binding | target | "
             "one core, µs |",
             "|---|---:|---:|---:|---:|---:|---|---:|"]
    for r in res["rows"]:
        t = TARGET_US.get(r["clusters"])
        verdict = "—" if r["name"] != "tapfinger" or t is None else (
            f"≤ {t:.0f} µs: {'met' if r['us'] <= t else 'missed'}")
        o = one.get((r["name"], r["clusters"]))
        lines.append(f"| {r['name']} | {r['clusters']} | {r['pending']} | {r['bound']} | "
                     f"{r['rounds']} | {r['us']:.1f} | {verdict} | "
                     f"{'–' if o is None else f'{o:.1f}'} |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    """Runs the command line `argv` (default: sys.argv[1:])."""
    argv = sys.argv[1:] if argv is None else argv
    a = parser().parse_args(argv)
    CMD = docgen.command(__file__, argv)
    res = docgen.recorded_or_exit(CMD) if a.from_json else measure()
    text = render(res)
    print(text, end="")
    if a.publish:
        docgen.publish(CMD, {None: text}, res)


if __name__ == "__main__":
    main()
