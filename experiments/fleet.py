"""Prints the figures of a fleet run (live/fleet.sh) from its load generator reports: the
fleet of three gateways against one gateway under the same load (success ratio, p50 and p99,
mean ± sample sd over the seeds), the fleet with a gateway killed (streams lost, handovers,
resent queries, failover time, per seed), and retry-on-reset off and on (502s among the queries,
mean ± sd over the seeds and per seed).

    python3 -m experiments.fleet [--dir target/fleet] [--publish] [--from-json]

--publish records the tables (and the figures read from the run, as JSON) under docs/generated/
and rewrites the blocks of docs/fleet.md that name this command (experiments/docgen.py);
--from-json prints them again from those recorded figures, without a run directory.

Page: docs/fleet.md (excerpts in docs/scale-out.md).
"""

import glob
import os
import statistics
import sys

from experiments import cli
from experiments import docgen

SETUPS = [("fleet", "3 gateways + 3 workers"), ("single", "1 gateway, same 3 workers")]
RETRIES = ["retried", "budget_refused", "no_target", "too_late"]


def load(path):
    import json
    with open(path) as f:
        return json.load(f)


def mean_sd(xs):
    if not xs:
        return "-"
    sd = statistics.stdev(xs) if len(xs) > 1 else 0.0
    return f"{statistics.mean(xs):.4g} ± {sd:.3g}"


def seed_of(path):
    return path.rsplit("seed", 1)[1].split(".")[0].split("-")[0]


def metric(path, prefix):
    if not os.path.exists(path):
        return 0
    total = 0.0
    with open(path) as f:
        for line in f:
            if line.startswith(prefix):
                total += float(line.rsplit(" ", 1)[1])
    return int(total)


def measure(out):
    """The figures the tables need, read from a run directory: per setup and seed."""
    res = {"compare": {}, "kill": {}, "retry": {}}
    for name, _ in SETUPS:
        for p in sorted(glob.glob(os.path.join(out, f"{name}-seed*.json"))):
            r = load(p)
            res["compare"].setdefault(name, {})[seed_of(p)] = {
                "offered": r["queries"]["offered"], "success_ratio": r["queries"]["success_ratio"],
                "p50": r["latency_ms"]["p50"], "p99": r["latency_ms"]["p99"]}
    for p in sorted(glob.glob(os.path.join(out, "kill-seed*.json"))):
        r = load(p)
        f, q = r["fleet"], r["queries"]
        res["kill"][seed_of(p)] = {
            "opened": r["streams"]["opened"], "lost": f["streams_lost"],
            "handovers": f["handovers"], "resent": f["resent"],
            "failovers": f["failover_ms"]["count"], "failover_max_ms": f["failover_ms"]["max"],
            "offered": q["offered"], "judged": q["success"] + q["failure"] + q["rejected"],
            "success_ratio": q["success_ratio"]}
    for mode in ["off", "on"]:
        for p in sorted(glob.glob(os.path.join(out, f"retry-{mode}-seed*.json"))):
            r = load(p)
            m = p[: -len(".json")] + "-metrics.txt"
            row = {"offered": r["queries"]["offered"], "502": r["infer_status"].get("502", 0),
                   "success_ratio": r["queries"]["success_ratio"]}
            for k in RETRIES:
                row[k] = metric(m, f'continuum_gateway_retries_total{{result="{k}"}}')
            res["retry"].setdefault(mode, {})[seed_of(p)] = row
    return res


def by_seed(d):
    return [d[s] for s in sorted(d, key=int)]


def render_compare(res):
    lines = ["| setup | seeds | offered | success ratio | p50 ms | p99 ms |", "|---|---|---|---|---|---|"]
    for name, label in SETUPS:
        runs = by_seed(res["compare"].get(name, {}))
        if runs:
            col = lambda k: [r[k] for r in runs]  # noqa: E731
            lines.append(f"| {label} | {len(runs)} | {mean_sd(col('offered'))} | "
                         f"{mean_sd(col('success_ratio'))} | {mean_sd(col('p50'))} | "
                         f"{mean_sd(col('p99'))} |")
    return "\n".join(lines) + "\n"


def render_kill(res):
    lines = ["| seed | streams opened | lost | handovers | queries resent | failover ms (n, max) "
             "| offered = judged | success ratio |", "|---|---|---|---|---|---|---|---|"]
    for seed in sorted(res["kill"], key=int):
        r = res["kill"][seed]
        lines.append(f"| {seed} | {r['opened']} | {r['lost']} | {r['handovers']} | {r['resent']} | "
                     f"{r['failovers']}, {r['failover_max_ms']:.1f} | {r['offered']} = "
                     f"{r['judged']} | {r['success_ratio']:.4f} |")
    return "\n".join(lines) + "\n"


def render_retry(res):
    keys = ["offered", "502", "success_ratio", *RETRIES]
    lines = ["| retry-on-reset | seeds | offered | 502 | 502 per seed | success ratio | retried | "
             "budget refused | no target | too late |", "|---|---|---|---|---|---|---|---|---|---|"]
    for mode in ["off", "on"]:
        rows = by_seed(res["retry"].get(mode, {}))
        if rows:
            col = lambda k: [r[k] for r in rows]  # noqa: E731
            cells = [mean_sd(col(k)) for k in keys]
            cells.insert(2, ", ".join(str(x) for x in col("502")))
            lines.append(f"| {mode} | {len(rows)} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def render_headline(res):
    """The README's row (experiments/headline.py)."""
    kill = by_seed(res["kill"])
    retry = {m: [r["502"] for r in by_seed(res["retry"].get(m, {}))] for m in ("off", "on")}
    fewer = sum(1 for a, b in zip(retry["off"], retry["on"]) if b < a)
    seeds = sorted(res["kill"], key=int)
    judged = all(r["offered"] == r["judged"] for r in kill)
    return (f"gateway fleet on loopback, seeds {seeds[0]}–{seeds[-1]} | a gateway killed: "
            f"{sum(r['lost'] for r in kill)} of {sum(r['opened'] for r in kill)} streams lost, "
            f"{'every' if judged else 'not every'} query judged once, failover ≤ "
            f"{max(r['failover_max_ms'] for r in kill):.1f} ms; a worker killed: 502s "
            f"{mean_sd(retry['off'])} without retry, {mean_sd(retry['on'])} with it (fewer in "
            f"{fewer} of {len(retry['on'])} seeds)\n")


def parser():
    """The command line: experiments/cli.py's shared flags and this module's own."""
    p = cli.parser()
    p.add_argument("dir", nargs="?", default=None, help="a run directory (default target/fleet)")
    p.add_argument("--dir", dest="dir_opt", default=None)
    return p


def main(argv=None):
    """Runs the command line `argv` (default: sys.argv[1:])."""
    a = parser().parse_args(argv)
    out = a.dir_opt or a.dir or "target/fleet"
    cmd = "experiments.fleet"
    res = docgen.recorded_or_exit(cmd) if a.from_json else measure(out)
    parts = {"compare": render_compare(res), "kill": render_kill(res), "retry": render_retry(res)}
    if res["kill"]:
        parts["headline"] = render_headline(res)
    for k, t in parts.items():
        if k != "headline":
            print(t)
    if a.publish:
        docgen.publish(cmd, parts, res)


if __name__ == "__main__":
    sys.exit(main())
