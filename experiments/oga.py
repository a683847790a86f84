"""Runs `continuum oga-bench` over the settings reported in docs/oga.md and prints the tables
(markdown). Needs a release build: `cargo build --release`.

    python3 -m experiments.oga            # every table (a few minutes on 2 cores)
    python3 -m experiments.oga --quick    # only the per-utility table

--publish records the output and the figures of every run under docs/generated/ and rewrites
the docs' blocks that name this command (experiments/docgen.py); --from-json prints the tables
again from those recorded figures without running anything.
"""

import argparse
import contextlib
import io
import json
import statistics
import sys

from experiments import docgen
from experiments.cells import run

BIN = "target/release/continuum"
BASELINES = ["drf", "fairness", "fairness-present", "binpacking", "spreading"]
# Earlier readings of three baselines, kept as ablations (docs/oga.md).
ABLATIONS = ["drf-port-total", "binpacking-one-instance", "spreading-one-instance"]
# The paper reports one FAIRNESS; both versions are held against it.
PAPER = {"drf": 11.33, "fairness": 7.75, "fairness-present": 7.75, "binpacking": 13.89,
         "spreading": 13.44}
# The paper's Table 3 at rho = 0.7, average reward of DRF, FAIRNESS, BINPACKING, SPREADING: its
# four baselines within 5 % of each other.
PAPER_T3 = {"drf": 2503, "fairness": 2628, "binpacking": 2519, "spreading": 2519}
# The paper's Fig. 2 setting: T = 8000, beta in [0.4, 0.6], contention 11.
FIG2 = ("--slots", 8000, "--beta", "0.4,0.6", "--contention", 11)


# The figures of every run, by its arguments: filled by the runs, or read back (--from-json).
RUNS = {}
FROM_JSON = False


def bench(*args):
    key = " ".join(map(str, args))
    if FROM_JSON:
        return RUNS[key]
    r = json.loads(run([BIN, "oga-bench", "--format", "json", *args]))
    RUNS[key] = {k: r[k] for k in ("allocators", "gains", "regret", "wall_s")}
    RUNS[key]["allocators"] = [{"name": x["name"], "average_reward": x["average_reward"]}
                               for x in r["allocators"]]
    return RUNS[key]


def avg(r, name):
    return next(a["average_reward"] for a in r["allocators"] if a["name"] == name)


def regret_per_t(r, name, frac):
    pts = r["regret"]
    p = pts[max(0, round(len(pts) * frac) - 1)]
    return p["t"], p["regret"][name] / p["t"]


def pct(x):
    return f"{x:+.2f} %"


def utilities(seed):
    print(f"### Per utility (defaults, seed {seed})\n")
    print("| utility | oga | oga-lookahead | " + " | ".join(BASELINES) + " | best fixed / T |")
    print("|---|---|---|" + "---|" * len(BASELINES) + "---|")
    rows = []
    for u in ["linear", "log", "reciprocal", "poly", "mixed"]:
        r = bench("--utility", u, "--seed", seed)
        rows.append((u, r))
        last = r["regret"][-1]
        cells = [f"{avg(r, n):.1f}" for n in ["oga", "oga-lookahead", *BASELINES]]
        print(f"| {u} | {' | '.join(cells)} | {last['best_fixed'] / last['t']:.1f} |")
    print("\nOGA's gain in average reward over each heuristic (oga / oga-lookahead), next to the paper's:\n")
    print("| utility | " + " | ".join(f"vs {b} (paper {PAPER[b]} %)" for b in BASELINES) + " |")
    print("|---|" + "---|" * len(BASELINES))
    for u, r in rows:
        g = {x["baseline"]: x for x in r["gains"]}
        cells = [f"{g[b]['gain_pct']:+.2f} / {g[b]['lookahead_gain_pct']:+.2f} %" for b in BASELINES]
        print(f"| {u} | {' | '.join(cells)} |")
    print("\nRegret per slot against the best fixed allocation in hindsight (oga / oga-lookahead):\n")
    print("| utility | t = T/4 | t = T/2 | t = T |")
    print("|---|---|---|---|")
    for u, r in rows:
        cells = []
        for f in [0.25, 0.5, 1.0]:
            t, a = regret_per_t(r, "oga", f)
            _, b = regret_per_t(r, "oga-lookahead", f)
            cells.append(f"{a:.1f} / {b:.1f} (t = {t})")
        print(f"| {u} | {' | '.join(cells)} |")
    print()
    return rows


def seeds():
    print("### Across seeds (defaults: linear utilities)\n")
    print("| seed | " + " | ".join(f"oga vs {b}" for b in BASELINES) + " | oga-lookahead regret/T | oga regret/T (T/4 → T) |")
    print("|---|" + "---|" * (len(BASELINES) + 2))
    for s in [1, 2, 3, 4, 5]:
        r = bench("--seed", s, "--regret-points", 4)
        g = {x["baseline"]: x["gain_pct"] for x in r["gains"]}
        _, o = regret_per_t(r, "oga-lookahead", 1.0)
        _, b0 = regret_per_t(r, "oga", 0.25)
        _, b1 = regret_per_t(r, "oga", 1.0)
        print(f"| {s} | {' | '.join(pct(g[b]) for b in BASELINES)} | {o:.1f} | {b0:.1f} → {b1:.1f} |")
    print()


def eta0():
    print("### Learning rate η0 (decay 0.9999, seed 1): average reward (oga / oga-lookahead) and regret/T at T\n")
    print("| utility | η0 | oga | oga-lookahead | regret/T oga | regret/T oga-lookahead | best fixed / T |")
    print("|---|---|---|---|---|---|---|")
    for u in ["linear", "reciprocal", "mixed"]:
        for e in [1, 5, 25, 100]:
            r = bench("--utility", u, "--eta0", e, "--regret-points", 4)
            last = r["regret"][-1]
            t = last["t"]
            print(
                f"| {u} | {e} | {avg(r, 'oga'):.1f} | {avg(r, 'oga-lookahead'):.1f} | "
                f"{last['regret']['oga'] / t:.1f} | {last['regret']['oga-lookahead'] / t:.1f} | "
                f"{last['best_fixed'] / t:.1f} |"
            )
    print()


def contention():
    print("### Contention level ℓ and links (seed 1): OGA's gain over each heuristic (oga)\n")
    print("| utility | ℓ | links | " + " | ".join(f"vs {b}" for b in BASELINES) + " |")
    print("|---|---|---|" + "---|" * len(BASELINES))
    cases = [(u, c, "regular:2.5") for u in ["linear", "mixed"] for c in [0.4, 1, 10, 11]]
    cases += [("linear", 1, "random"), ("linear", 10, "random")]
    for u, c, links in cases:
        r = bench("--utility", u, "--contention", c, "--links", links, "--regret-points", 2)
        g = {x["baseline"]: x["gain_pct"] for x in r["gains"]}
        print(f"| {u} | {c} | {links} | {' | '.join(pct(g[b]) for b in BASELINES)} |")
    print()


def mean_sd(v):
    return statistics.mean(v), (statistics.stdev(v) if len(v) > 1 else 0.0)


def table3():
    print("### The paper's Table 3: arrival probability ρ (linear, ℓ = 10, seeds 1–5): average reward per slot, mean ± sd\n")
    names = ["oga", "oga-lookahead", *BASELINES, *ABLATIONS]
    print("| ρ | " + " | ".join(names) + " | spread of drf, fairness, binpacking, spreading |")
    print("|---|" + "---|" * (len(names) + 1))
    gains = {}
    for rho in [0.3, 0.5, 0.7, 0.9]:
        runs = [bench("--arrival-prob", rho, "--seed", s, "--regret-points", 1,
                      "--hindsight-iterations", 200) for s in range(1, 6)]
        cells = []
        for n in names:
            m, sd = mean_sd([avg(r, n) for r in runs])
            cells.append(f"{m:.1f} ± {sd:.1f}")
        four = [statistics.mean(avg(r, n) for r in runs) for n in PAPER_T3]
        spread = (max(four) / min(four) - 1) * 100
        print(f"| {rho} | {' | '.join(cells)} | {spread:.1f} % |")
        gains[rho] = {b: mean_sd([{x["baseline"]: x["gain_pct"] for x in r["gains"]}[b] for r in runs])
                      for b in BASELINES}
        gains[rho].update({b: mean_sd([(avg(r, "oga") - avg(r, b)) / abs(avg(r, b)) * 100 for r in runs])
                           for b in ABLATIONS})
    t3 = PAPER_T3
    print(f"\nThe paper's Table 3 at ρ = 0.7 (DRF, FAIRNESS, BINPACKING, SPREADING): {t3['drf']}, "
          f"{t3['fairness']}, {t3['binpacking']}, {t3['spreading']}: a spread of "
          f"{(max(t3.values()) / min(t3.values()) - 1) * 100:.1f} %; OGA's lead over FAIRNESS falls from "
          "+47 % at ρ = 0.3 to +2.2 % at ρ = 0.9.\n")
    print("OGA's gain (`oga`, the paper's order) over each allocator, mean ± sd over seeds 1–5:\n")
    print("| ρ | " + " | ".join(f"vs {b}" for b in [*BASELINES, *ABLATIONS]) + " |")
    print("|---|" + "---|" * (len(BASELINES) + len(ABLATIONS)))
    for rho, g in gains.items():
        print(f"| {rho} | " + " | ".join(f"{g[b][0]:+.2f} ± {g[b][1]:.2f} %" for b in [*BASELINES, *ABLATIONS]) + " |")
    print()


def fig2():
    print("### The Fig. 2 setting (T = 8000, β ∈ [0.4, 0.6], ℓ = 11, linear, seeds 1–5): OGA's gain over each heuristic, mean ± sd\n")
    runs = [bench(*FIG2, "--seed", s, "--regret-points", 1, "--hindsight-iterations", 500)
            for s in range(1, 6)]
    print("| allocator | average reward | oga's gain over it | oga-lookahead's gain over it | paper |")
    print("|---|---|---|---|---|")
    for n in ["oga", "oga-lookahead", *BASELINES, *ABLATIONS]:
        m, sd = mean_sd([avg(r, n) for r in runs])
        if n in BASELINES:
            g = mean_sd([{x["baseline"]: x["gain_pct"] for x in r["gains"]}[n] for r in runs])
            gl = mean_sd([{x["baseline"]: x["lookahead_gain_pct"] for x in r["gains"]}[n] for r in runs])
            print(f"| {n} | {m:.1f} ± {sd:.1f} | {g[0]:+.2f} ± {g[1]:.2f} % | {gl[0]:+.2f} ± {gl[1]:.2f} % | +{PAPER[n]} % |")
        elif n in ABLATIONS:
            g = mean_sd([(avg(r, "oga") - avg(r, n)) / abs(avg(r, n)) * 100 for r in runs])
            gl = mean_sd([(avg(r, "oga-lookahead") - avg(r, n)) / abs(avg(r, n)) * 100 for r in runs])
            print(f"| {n} (ablation) | {m:.1f} ± {sd:.1f} | {g[0]:+.2f} ± {g[1]:.2f} % | {gl[0]:+.2f} ± {gl[1]:.2f} % | – |")
        else:
            print(f"| {n} | {m:.1f} ± {sd:.1f} | – | – | – |")
    print()
    print("Regret per slot over time, seed 1:\n")
    r = bench(*FIG2, "--regret-points", 8)
    print("| t | best fixed / t | oga | oga-lookahead |")
    print("|---|---|---|---|")
    for p in r["regret"]:
        t = p["t"]
        print(f"| {t} | {p['best_fixed'] / t:.1f} | {p['regret']['oga'] / t:.1f} | {p['regret']['oga-lookahead'] / t:.1f} |")
    print(f"\nWall time of that run: {r['wall_s']:.1f} s.\n")


def comparator():
    print("### Accuracy of the hindsight comparator (seed 1): best fixed / T at T\n")
    print("| utility | 2000 steps per horizon (default) | 10000 steps per horizon | difference |")
    print("|---|---|---|---|")
    for u in ["linear", "mixed", "reciprocal"]:
        v = []
        for it in [2000, 10000]:
            r = bench("--utility", u, "--regret-points", 1, "--hindsight-iterations", it)
            last = r["regret"][-1]
            v.append(last["best_fixed"] / last["t"])
        print(f"| {u} | {v[0]:.2f} | {v[1]:.2f} | {v[1] - v[0]:+.2f} ({(v[1] - v[0]) / abs(v[1]) * 100:+.2f} %) |")
    print()


def headline():
    """The README's row (experiments/headline.py): OGA's gain (the paper's order) over each
    heuristic in the paper's Fig. 2 setting over seeds 1–5, next to the paper's figures."""
    runs = [bench(*FIG2, "--seed", s, "--regret-points", 1, "--hindsight-iterations", 500)
            for s in range(1, 6)]
    def g(b):
        m, sd = mean_sd([{x["baseline"]: x["gain_pct"] for x in r["gains"]}[b] for r in runs])
        return f"{m:+.1f} ± {sd:.1f} %"
    return (f"OGASched (Algorithm 1's order), OGA's gain in reward, Fig. 2 setting, seeds 1–5 | "
            f"DRF {g('drf')} (paper +11.33), FAIRNESS {g('fairness')} (+7.75; the prototype's "
            f"{g('fairness-present')}), BINPACKING {g('binpacking')} (+13.89), SPREADING "
            f"{g('spreading')} (+13.44): a simple rule wins\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="only the per-utility table")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--publish", action="store_true")
    ap.add_argument("--from-json", action="store_true")
    a = ap.parse_args()
    cmd = docgen.command(__file__, sys.argv[1:])
    global FROM_JSON
    if a.from_json:
        FROM_JSON = True
        recorded = docgen.load_results(cmd)
        if recorded is None:
            sys.exit(f"no recorded figures of `{cmd}` ({docgen.results_path(cmd)}): run it "
                     "without --from-json")
        RUNS.update(recorded)
    text = io.StringIO()
    with contextlib.redirect_stdout(text):
        utilities(a.seed)
        if not a.quick:
            seeds()
            eta0()
            table3()
            fig2()
            contention()
            comparator()
    print(text.getvalue(), end="")
    if a.publish:
        parts = {None: text.getvalue()}
        if not a.quick:
            parts["headline"] = headline()
        docgen.publish(cmd, parts, RUNS)
    return 0


if __name__ == "__main__":
    sys.exit(main())
