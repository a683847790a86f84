"""Training cost as the topology grows: `continuum train` on generated ISP topologies of N
antennas (`continuum topology generate --antennas N --seed 1 --max-reach-ms 40`) with a short
fixed schedule (config/dqn.yaml with 2 episodes of 60 s, one fallback seed and one validation
episode), printing the simulated queries of its plan, wall time, time per simulated query, peak
RSS and the checkpoint's size. Prints a Markdown table.

Usage: python3 -m experiments.scaling_train [--sizes 16,64,256,1024] [--out out/train-scaling]
       [--threads 2] [--publish] [--from-json]
It needs a release build (`cargo build --release`) and GNU time (/usr/bin/time), except with
--from-json. --publish records the table and the measurements under docs/generated/ and
rewrites the docs' blocks that name this command (experiments/docgen.py); --from-json prints the
table again from those recorded measurements without running anything.

Page: docs/scaling.md (quoted in its prose and in docs/performance.md).
"""
import pathlib
import re
import sys

from experiments import cli
from experiments import docgen
from experiments.cells import run, timed


def parser():
    """The command line: experiments/cli.py's shared flags and this module's own."""
    p = cli.parser("threads", "bin", out="out/train-scaling")
    p.add_argument("--sizes", default="16,64,256,1024")
    return p


SHORT = {"budget_queries": "1.0e12", "episodes": "2", "horizon_s": "60.0",
         "fallback_seeds": "1", "validation_episodes": "1"}


def measure():
    out.mkdir(parents=True, exist_ok=True)
    cfg_lines = []
    for line in pathlib.Path("config/dqn.yaml").read_text().splitlines():
        key = line.split(":", 1)[0]
        cfg_lines.append(f"{key}: {SHORT[key]}" if key in SHORT else line)
    cfg = out / "dqn-short.yaml"
    cfg.write_text("\n".join(cfg_lines) + "\n")
    rows = []
    for n in [int(x) for x in a.sizes.split(",")]:
        topo = out / f"isp-{n}.yaml"
        run([a.bin, "topology", "generate", "--antennas", n, "--seed", "1", "--max-reach-ms", "40",
             "--out", topo])
        ck = out / f"isp-{n}.dqn"
        stdout, stderr, wall = timed(["/usr/bin/time", "-v", a.bin, "train", topo, "--config", cfg,
                                      "--threads", a.threads, "--out", ck])
        text = stdout + stderr
        m = re.search(r"plan: (\d+) episodes of ([\d.e+]+) simulated queries.*?then ([\d.e+]+) for", text)
        queries = int(m.group(1)) * float(m.group(2)) + float(m.group(3))
        rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", text).group(1)) / 1024
        rows.append(dict(n=n, queries=queries, wall=wall, rss=rss,
                         size=ck.stat().st_size / 1024))
        print(f"ran N = {n}", file=sys.stderr)
    return rows


def main(argv=None):
    """Runs the command line `argv` (default: sys.argv[1:])."""
    global a, out
    argv = sys.argv[1:] if argv is None else argv
    a = parser().parse_args(argv)
    CMD = docgen.command(__file__, argv)
    out = pathlib.Path(a.out)
    if a.from_json:
        rows = docgen.load_results(CMD)
        if rows is None:
            sys.exit(f"no recorded measurements of `{CMD}` ({docgen.results_path(CMD)}): run it "
                     "without --from-json")
    else:
        rows = measure()
    lines = ["| antennas N | simulated queries (plan) | wall s | ns per simulated query | peak RSS MiB | checkpoint KiB |",
             "|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['n']} | {r['queries']:.3g} | {r['wall']:.1f} | "
                     f"{1e9 * r['wall'] / r['queries']:.0f} | {r['rss']:.0f} | {r['size']:.0f} |")
    text = "\n".join(lines) + "\n"
    print(text, end="")
    if a.publish:
        docgen.publish(CMD, {None: text}, rows)


if __name__ == "__main__":
    main()
