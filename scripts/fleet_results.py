"""Prints the figures of a fleet run (scripts/fleet.sh) from its load generator reports: the
fleet of three gateways against one gateway under the same load (success ratio, p50 and p99,
mean ± sample sd over the seeds), the fleet with a gateway killed (streams lost, handovers,
resent queries, failover time), and retry-on-reset off and on (502s among the queries).

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
    path = os.path.join(out, "kill.json")
    if not os.path.exists(path):
        return
    r = load(path)
    f, q = r["fleet"], r["queries"]
    print()
    print("gateway 0 killed half way (seed 1):")
    print(
        f"  streams opened {r['streams']['opened']}, lost {f['streams_lost']}; "
        f"handovers {f['handovers']}; queries resent {f['resent']}"
    )
    fo = f["failover_ms"]
    print(f"  failover time ms: n {fo['count']}, p50 {fo['p50']:.1f}, p99 {fo['p99']:.1f}, max {fo['max']:.1f}")
    judged = q["success"] + q["failure"] + q["rejected"]
    print(
        f"  queries offered {q['offered']} = judged {judged} (success {q['success']}, "
        f"failure {q['failure']}, rejected {q['rejected']}); success ratio {q['success_ratio']:.4f}"
    )
    for g in f["gateways"]:
        print(
            f"  {g['url']}: opened {g['opened']}, answered {g['answered']}, "
            f"unreachable {g['unreachable']}, handovers in {g['handovers_in']}"
        )


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
    print("| retry-on-reset | offered | 502 | 504 | 200 | success ratio | retried | budget refused | no target | too late |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for mode in ["off", "on"]:
        path = os.path.join(out, f"retry-{mode}.json")
        if not os.path.exists(path):
            continue
        r = load(path)
        st = r["infer_status"]
        m = os.path.join(out, f"retry-{mode}-metrics.txt")
        counts = [
            metric(m, f'continuum_gateway_retries_total{{result="{k}"}}')
            for k in ["retried", "budget_refused", "no_target", "too_late"]
        ]
        print(
            f"| {mode} | {r['queries']['offered']} | {st.get('502', 0)} | {st.get('504', 0)} "
            f"| {st.get('200', 0)} | {r['queries']['success_ratio']:.4f} | "
            + " | ".join(str(c) for c in counts)
            + " |"
        )


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "target/fleet"
    comparison(out)
    kill(out)
    retry(out)


if __name__ == "__main__":
    main()
