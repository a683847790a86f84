"""Prints the figures of the learned default live (live/fleet_live.sh): per row (the meta-policy
over the strong rules, `headroom`, `least-allocated`, the best ASET policy) its live and simulated
success ratios over the seeds, the live − simulated difference per seed against the 1.5 pp
goal, the ranking of the learned default against the best rule live and simulated (the verdict
rule of docs/methodology.md over the paired seeds), and the gateways' decision times per
binding and per meta-policy window, live.

    python3 -m experiments.live_fleet [--dir target/live-fleet] [--publish] [--from-json]

--publish records the tables (and the figures read from the run, as JSON) under docs/generated/
and rewrites the blocks of docs/live.md that name this command (experiments/docgen.py);
--from-json prints them again from those recorded figures, without a run directory.

Page: docs/live.md.
"""

import glob
import json
import os
import statistics
import subprocess
import sys

from experiments import cli
from experiments import docgen
from experiments.references import ASET, COMPARED, registry, verdict

GOAL_PP = 1.5
SLICE = ["topologies/live-fleet.yaml", "--profiles", "profiles/live-fleet.yaml",
         "--workload", "workloads/live-fleet.yaml"]
AGENT = "models/live-fleet-heuristics.dqn"


def mean_sd(xs, digits=2, sign=""):
    sd = statistics.stdev(xs) if len(xs) > 1 else 0.0
    return f"{statistics.mean(xs):{sign}.{digits}f} ± {sd:.{digits}f}"


def measure(out):
    """Per row and seed: live and simulated success (%), decision times, from a run directory."""
    rows = {}
    for p in sorted(glob.glob(os.path.join(out, "*-seed*.json"))):
        if os.path.basename(p).startswith("aset-"):
            continue
        with open(p) as f:
            r = json.load(f)
        dec = r["metrics"]["gateways"]
        rows.setdefault(r["row"], {})[str(r["seed"])] = {
            "live": 100 * r["live"]["success_ratio"],
            "simulated": 100 * r["simulated"]["success_ratio"],
            "offered_live": r["live"]["offered"],
            "offered_simulated": r["simulated"]["offered"],
            "bindings": sum(g["binding"]["count"] for g in dec),
            "binding_mean_us": statistics.mean(g["binding"]["mean_us"] for g in dec),
            "binding_p99_le_us": max(g["binding"]["p99_le_us"] for g in dec),
            "windows": sum(g["window"]["count"] for g in dec),
            "window_mean_us": (statistics.mean(g["window"]["mean_us"] for g in dec)
                               if any(g["window"]["count"] for g in dec) else None),
            "window_p99_le_us": (max(g["window"]["p99_le_us"] for g in dec)
                                 if any(g["window"]["count"] for g in dec) else None),
            "lambda": r["lambda"], "duration_s": r["duration_s"],
        }
    best = best_aset(out)
    return {"rows": rows, "best_aset": best}


def best_aset(out):
    """The ASET policy live/fleet_live.sh ran: the highest mean simulated success over the
    seeds of its `aset-seed*.json` reports."""
    runs = []
    for p in sorted(glob.glob(os.path.join(out, "aset-seed*.json"))):
        with open(p) as f:
            runs.append({x["policy"]: x["success_ratio"] for x in json.load(f)["results"]})
    if not runs:
        return None
    return max(runs[0], key=lambda n: (statistics.mean(r[n] for r in runs), n))


def label(res, name):
    return f"{name} (best ASET policy)" if name == res.get("best_aset") else name


def simulate(binary, seeds, lam, duration):
    """The simulator alone on the slice: every registered rule, the learned default and the
    offline bound, per seed (success %)."""
    rules = [r for r in registry(binary) if r != "random"]
    out = {"rules": rules, "seeds": {}}
    for seed in seeds:
        r = subprocess.run([binary, "compare", *SLICE, "--lambda", str(lam), "--duration",
                            str(duration), "--seed", str(seed), "--policies", ",".join(rules),
                            "--agent", AGENT, "--bound", "--format", "json", "--quiet"],
                           capture_output=True, text=True, check=True)
        rep = json.loads(r.stdout)
        row = {x["policy"]: 100 * x["success_ratio"] for x in rep["results"]}
        row["bound"] = 100 * rep["bound"]["success_ratio"]
        out["seeds"][str(seed)] = row
    return out


def render_simulated(res):
    sim = res["simulated"]
    seeds = sorted(sim["seeds"], key=int)
    col = lambda n: [sim["seeds"][s][n] for s in seeds]  # noqa: E731
    rules = sim["rules"]
    best = max(rules, key=lambda n: (statistics.mean(col(n)), n))
    best_aset = max((r for r in rules if r in ASET), key=lambda n: (statistics.mean(col(n)), n))
    lines = ["| row | success %, mean ± sd | learned − row, pp, mean ± sd | verdict |",
             "|---|---|---|---|"]
    rows = [("learned (models/live-fleet-heuristics.dqn)", "dqn"),
            (f"best rule of the registry ({best})", best),
            (f"best ASET policy ({best_aset})", best_aset),
            ("headroom", "headroom"), ("least-allocated", "least-allocated")]
    for label, n in rows:
        d = [a - b for a, b in zip(col("dqn"), col(n))]
        cells = ("-", "-") if n == "dqn" else (mean_sd(d, sign="+"), verdict(d, 0.0, COMPARED))
        lines.append(f"| {label} | {mean_sd(col(n))} | {cells[0]} | {cells[1]} |")
    lines.append(f"| offline bound | {mean_sd(col('bound'))} | - | - |")
    return "\n".join(lines) + "\n"


def seeds_of(res):
    return sorted({s for r in res["rows"].values() for s in r}, key=int)


def render_rows(res):
    seeds = seeds_of(res)
    lines = ["| row | live success % | simulated success % | live − simulated, pp, per seed "
             "| within 1.5 pp | offered live = simulated |", "|---|---|---|---|---|---|"]
    for name, r in sorted(res["rows"].items(), key=lambda kv: (kv[0] != "learned", kv[0])):
        runs = [r[s] for s in seeds if s in r]
        d = [x["live"] - x["simulated"] for x in runs]
        same = all(x["offered_live"] == x["offered_simulated"] for x in runs)
        lines.append(
            f"| {label(res, name)} | {mean_sd([x['live'] for x in runs])} | "
            f"{mean_sd([x['simulated'] for x in runs])} | "
            + ", ".join(f"{x:+.2f}" for x in d)
            + f" | {sum(abs(x) <= GOAL_PP for x in d)} of {len(d)} | {'yes' if same else 'no'} |")
    return "\n".join(lines) + "\n"


def ranking(res):
    """Learned − best rule per seed, live and simulated; the best rule is the rule row with the
    highest mean over the seeds in that run kind."""
    seeds = seeds_of(res)
    rules = {n: r for n, r in res["rows"].items() if n != "learned"}
    learned = res["rows"].get("learned", {})
    out = {}
    for kind in ("simulated", "live"):
        best = max(rules, key=lambda n: statistics.mean(rules[n][s][kind] for s in seeds))
        d = [learned[s][kind] - rules[best][s][kind] for s in seeds]
        out[kind] = {"best": best, "d": d, "verdict": verdict(d, 0.0, COMPARED)}
    return out


def render_ranking(res):
    rk = ranking(res)
    lines = ["| run | best rule (of the rows) | learned − best rule, pp, per seed | mean ± sd "
             "| verdict |", "|---|---|---|---|---|"]
    for kind in ("simulated", "live"):
        r = rk[kind]
        lines.append(f"| {kind} | {r['best']} | " + ", ".join(f"{x:+.2f}" for x in r["d"])
                     + f" | {mean_sd(r['d'], sign='+')} | {r['verdict']} |")
    same = rk["simulated"]["verdict"] == rk["live"]["verdict"]
    lines.append(f"\nRanking of the learned default against the best rule: "
                 f"{'the same' if same else 'not the same'} live as simulated "
                 f"({rk['live']['verdict']} live, {rk['simulated']['verdict']} simulated).")
    return "\n".join(lines) + "\n"


def render_decisions(res):
    lines = ["| row | bindings | per binding: mean µs, p99 ≤ µs | meta-policy windows "
             "| per window: mean µs, p99 ≤ µs |", "|---|---|---|---|---|"]
    seeds = seeds_of(res)
    for name, r in sorted(res["rows"].items(), key=lambda kv: (kv[0] != "learned", kv[0])):
        runs = [r[s] for s in seeds if s in r]
        win = [x for x in runs if x["window_mean_us"] is not None]
        w = (f"{mean_sd([x['window_mean_us'] for x in win], 1)}, "
             f"{max(x['window_p99_le_us'] for x in win):.1f}" if win else "-")
        lines.append(f"| {label(res, name)} | {sum(int(x['bindings']) for x in runs)} | "
                     f"{mean_sd([x['binding_mean_us'] for x in runs], 1)}, "
                     f"{max(x['binding_p99_le_us'] for x in runs):.1f} | "
                     f"{sum(int(x['windows']) for x in runs)} | {w} |")
    return "\n".join(lines) + "\n"


def parser():
    """The command line: experiments/cli.py's shared flags and this module's own."""
    p = cli.parser("bin", "seeds")
    p.add_argument("--dir", default="target/live-fleet", help="the run directory")
    return p


def main(argv=None):
    """Runs the command line `argv` (default: sys.argv[1:])."""
    a = parser().parse_args(argv)
    cmd = "experiments.live_fleet"
    if a.from_json:
        res = docgen.recorded_or_exit(cmd)
    else:
        res = measure(a.dir)
        if not res["rows"]:
            sys.exit(f"no runs under {a.dir}: run live/fleet_live.sh first")
        run = next(iter(next(iter(res["rows"].values())).values()))
        res["simulated"] = simulate(a.bin, a.seeds.split(","), run["lambda"], run["duration_s"])
    parts = {"rows": render_rows(res), "ranking": render_ranking(res),
             "decisions": render_decisions(res), "simulated": render_simulated(res)}
    for t in parts.values():
        print(t)
    if a.publish:
        docgen.publish(cmd, parts, res)


if __name__ == "__main__":
    sys.exit(main())
