"""Prints the figures of a fleet run (scripts/fleet.sh) from its load generator reports: the
fleet of three gateways against one gateway under the same load (success ratio, p50 and p99,
mean ± sample sd over the seeds), the fleet with a gateway killed (streams lost, handovers,
resent queries, failover time, per seed), and retry-on-reset off and on (502s among the queries,
mean ± sd over the seeds and per seed).

    python3 scripts/fleet_results.py target/fleet
"""

import glob
import json
import os
import statistics
import sys


def load(path):
    with open(path) as f:
        return json.load(f)


def mean_sd(xs):
    if not xs:
        return "-"
    sd = statistics.stdev(xs) if len(xs) > 1 else 0.0
    return f"{statistics.mean(xs):.4g} ± {sd:.3g}"


def comparison(out):
    print("| setup | seeds | offered | success ratio | p50 ms | p99 ms |")
    print("|---|---|---|---|---|---|")
    for name, label in [("fleet", "3 gateways + 3 workers"), ("single", "1 gateway, same 3 workers")]:
        runs = [load(p) for p in sorted(glob.glob(os.path.join(out, f"{name}-seed*.json")))]
        if not runs:
            continue
        q = [r["queries"] for r in runs]
        lat = [r["latency_ms"] for r in runs]
        print(
            f"| {label} | {len(runs)} | {mean_sd([x['offered'] for x in q])} "
            f"| {mean_sd([x['success_ratio'] for x in q])} "
            f"| {mean_sd([x['p50'] for x in lat])} | {mean_sd([x['p99'] for x in lat])} |"
        )


def kill(out):
    runs = [load(p) for p in sorted(glob.glob(os.path.join(out, "kill-seed*.json")))]
    if not runs:
        return
    print()
    print(f"gateway 0 killed half way ({len(runs)} seeds):")
    print()
    print("| seed | streams opened | lost | handovers | queries resent | failover ms (n, max) | offered = judged | success ratio |")
    print("|---|---|---|---|---|---|---|---|")
    for p, r in zip(sorted(glob.glob(os.path.join(out, "kill-seed*.json"))), runs):
        f, q = r["fleet"], r["queries"]
        fo = f["failover_ms"]
        judged = q["success"] + q["failure"] + q["rejected"]
        seed = p.rsplit("seed", 1)[1].split(".")[0]
        print(f"| {seed} | {r['streams']['opened']} | {f['streams_lost']} | {f['handovers']} | "
              f"{f['resent']} | {fo['count']}, {fo['max']:.1f} | {q['offered']} = {judged} | "
              f"{q['success_ratio']:.4f} |")


def metric(path, prefix):
    if not os.path.exists(path):
        return 0
    total = 0.0
    with open(path) as f:
        for line in f:
            if line.startswith(prefix):
                total += float(line.rsplit(" ", 1)[1])
    return int(total)


def retry(out):
    print()
    print("| retry-on-reset | seeds | offered | 502 | success ratio | retried | budget refused | no target | too late |")
    print("|---|---|---|---|---|---|---|---|---|")
    for mode in ["off", "on"]:
        paths = sorted(glob.glob(os.path.join(out, f"retry-{mode}-seed*.json")))
        if not paths:
            continue
        rows = []
        for path in paths:
            r = load(path)
            m = path[: -len(".json")] + "-metrics.txt"
            counts = [metric(m, f'continuum_gateway_retries_total{{result="{k}"}}')
                      for k in ["retried", "budget_refused", "no_target", "too_late"]]
            rows.append([r["queries"]["offered"], r["infer_status"].get("502", 0),
                         r["queries"]["success_ratio"], *counts])
        col = lambda k: [x[k] for x in rows]  # noqa: E731
        print(f"| {mode} | {len(rows)} | " + " | ".join(mean_sd(col(k)) for k in range(len(rows[0])))
              + " |")
        print(f"| {mode}, per seed: 502 | | | " + ", ".join(str(x) for x in col(1)) + " | | | | | |")


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "target/fleet"
    comparison(out)
    kill(out)
    retry(out)


if __name__ == "__main__":
    main()
