"""Runs `continuum oga-bench` over the settings reported in docs/oga.md and prints the tables
(markdown). Needs a release build: `cargo build --release`.

    python3 -m experiments.oga            # every table (several minutes on 2 cores)
    python3 -m experiments.oga --quick    # only the per-utility table

--publish records the output and the figures of every run under docs/generated/ and rewrites
the docs' blocks that name this command (experiments/docgen.py); --from-json prints the tables
again from those recorded figures without running anything.

Page: docs/oga.md (excerpt in docs/results.md).
"""

import contextlib
import io
import json
import statistics
import sys

from experiments import cli
from experiments import docgen
from experiments.cells import run
from experiments import references as refs

BIN = "target/release/continuum"
# The paper's four baselines as its §4 defines them (docs/oga.md).
BASELINES = ["drf", "fairness", "binpacking", "spreading"]
# This reproduction's previous readings of them, kept as ablations.
ABLATIONS = ["drf-per-channel", "fairness-linked", "binpacking-per-channel", "spreading-per-channel"]
ALL = ["oga", "oga-lookahead", *BASELINES, *ABLATIONS]
PAPER = {"drf": 11.33, "fairness": 7.75, "binpacking": 13.89, "spreading": 13.44}
# The paper's Table 3 (average reward per slot), column by column: T (ρ 0.7, density ≈ 2.5),
# ρ (T 2000), graph density (T 2000, ρ 0.7).
T3_COLUMNS = [("T", 1000), ("T", 2000), ("T", 5000), ("T", 10000), ("ρ", 0.3), ("ρ", 0.5),
              ("ρ", 0.7), ("ρ", 0.9), ("density", 2), ("density", 2.5), ("density", 3)]
PAPER_T3 = {
    "oga": [2578.53, 2886.33, 2911.37, 3104.98, 1904.87, 2154.18, 3117.29, 2938.22, 2816.18,
            2904.51, 3127.47],
    "drf": [2422.47, 2493.02, 2449.23, 2497.85, 1364.53, 2086.59, 2503.01, 2755.41, 2417.08,
            2786.94, 2795.42],
    "fairness": [2532.24, 2582.80, 2552.41, 2436.22, 1295.53, 1997.19, 2628.02, 2873.84,
                 2501.54, 2857.60, 2918.98],
    "binpacking": [2386.01, 2449.15, 2444.32, 2365.13, 1246.39, 1897.79, 2518.98, 2740.19,
                   2374.31, 2757.71, 2829.19],
    "spreading": [2382.01, 2466.71, 2436.60, 2362.88, 1250.67, 1888.06, 2519.37, 2737.93,
                  2382.87, 2766.07, 2836.37],
}
# The paper's Fig. 2 setting: T = 8000, beta in [0.4, 0.6], contention 11.
FIG2 = ("--slots", 8000, "--beta", "0.4,0.6", "--contention", 11)
SEEDS = [1, 2, 3, 4, 5]
# Fig. 3(c): the contention level from 0.1 to beyond 1 (the paper's axis starts at 0.1).
CONTENTION = [0.1, 0.2, 0.5, 1, 2, 5, 10, 20]


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


def mean_sd(v):
    return statistics.mean(v), (statistics.stdev(v) if len(v) > 1 else 0.0)


def gain_pct(r, a, b):
    return (avg(r, a) - avg(r, b)) / abs(avg(r, b)) * 100


def t3_args(col):
    what, v = col
    flag = {"T": "--slots", "ρ": "--arrival-prob", "density": "--links"}[what]
    value = f"regular:{v}" if what == "density" else v
    return (flag, value, "--regret-points", 1, "--hindsight-iterations", 200)


def t3_runs(col):
    return [bench(*t3_args(col), "--seed", s) for s in SEEDS]


def col_name(col):
    what, v = col
    return f"{what} {v}" if what != "density" else f"density ≈ {v}"


def table3():
    print("### The paper's Table 3, every column (linear, ℓ = 10, trace-scale requests, seeds 1–5): "
          "average reward per slot, mean ± sd, beside the paper's\n")
    print("Columns: T (ρ 0.7, density 2.5), ρ (T 2000, density 2.5), graph density (mean ports per instance) "
          "(T 2000, ρ 0.7).\n")
    cols = T3_COLUMNS
    runs = {c: t3_runs(c) for c in cols}
    print("| allocator | " + " | ".join(col_name(c) for c in cols) + " |")
    print("|---|" + "---:|" * len(cols))
    for n in ["oga", "oga-lookahead", *BASELINES]:
        cells = []
        for c in cols:
            m, sd = mean_sd([avg(r, n) for r in runs[c]])
            cells.append(f"{m:.0f} ± {sd:.0f}")
        print(f"| {n} | {' | '.join(cells)} |")
        if n in PAPER_T3:
            label = "OGASched" if n == "oga" else n.upper()
            print(f"| {label} (paper) | " + " | ".join(f"{v:.0f}" for v in PAPER_T3[n]) + " |")
    print("\nPer column: `oga`'s gain over each baseline, mean ± sd over the seeds and the verdict of "
          "docs/methodology.md on the paired per-seed rewards; the best baseline here and in the "
          "paper; the ratio of `oga`'s and of the baselines' rewards to the paper's.\n")
    print("| column | " + " | ".join(f"oga vs {b}" for b in BASELINES)
          + " | best baseline (paper's) | oga ÷ paper | baselines ÷ paper |")
    print("|---|" + "---|" * (len(BASELINES) + 3))
    for i, c in enumerate(cols):
        rs = runs[c]
        cells = []
        for b in BASELINES:
            m, sd = mean_sd([gain_pct(r, "oga", b) for r in rs])
            v = refs.verdict([avg(r, "oga") - avg(r, b) for r in rs], 0.0, refs.COMPARED)
            cells.append(f"{m:+.1f} ± {sd:.1f} % ({v})")
        best = max(BASELINES, key=lambda b: statistics.mean(avg(r, b) for r in rs))
        pbest = max(BASELINES, key=lambda b: PAPER_T3[b][i])
        ratio = statistics.mean(avg(r, "oga") for r in rs) / PAPER_T3["oga"][i]
        base = [statistics.mean(avg(r, b) for r in rs) / PAPER_T3[b][i] for b in BASELINES]
        print(f"| {col_name(c)} | {' | '.join(cells)} | {best} ({pbest}) | {ratio:.1f}× | "
              f"{min(base):.1f}–{max(base):.1f}× |")
    print()


def findings():
    """The paper-vs-continuum table: each finding of §4 under the paper's readings, with its
    verdict (computed from the runs of table3(), fig3c() and fig2())."""
    cols = T3_COLUMNS
    runs = {c: t3_runs(c) for c in cols}

    def beats_all(rs):
        return all(refs.verdict([avg(r, "oga") - avg(r, b) for r in rs], 0.0, refs.COMPARED)
                   == "above" for b in BASELINES)

    def best_baseline(rs):
        return max(BASELINES, key=lambda b: statistics.mean(avg(r, b) for r in rs))

    def mean(rs, n):
        return statistics.mean(avg(r, n) for r in rs)

    won = sum(beats_all(runs[c]) for c in cols)
    fair = sum(best_baseline(runs[c]) == "fairness" for c in cols)
    pfair = sum(max(BASELINES, key=lambda b: PAPER_T3[b][i]) == "fairness" for i in range(len(cols)))
    rho = [c for c in cols if c[0] == "ρ"]
    ts = [c for c in cols if c[0] == "T"]
    i07 = cols.index(("ρ", 0.7))
    ratios = {n: mean(runs[("ρ", 0.7)], n) / PAPER_T3[n][i07] for n in PAPER_T3}
    within = [n for n, x in ratios.items() if 0.5 <= x <= 2.0]
    f2 = [bench(*FIG2, "--seed", s, "--regret-points", 1, "--hindsight-iterations", 500)
          for s in SEEDS]
    cont = {c: [bench("--contention", c, "--seed", s, "--regret-points", 1,
                      "--hindsight-iterations", 200) for s in SEEDS] for c in CONTENTION}
    peak = {n: max(CONTENTION, key=lambda c: mean(cont[c], n)) for n in ["oga", *BASELINES]}
    oga_best = sum(beats_all(cont[c]) for c in CONTENTION)

    def yes(ok, partly=False):
        return "reproduced" if ok else ("partly" if partly else "not reproduced")

    print("### The paper's findings under its own readings\n")
    print("| finding (OGASched §4) | paper | continuum (`oga`, baselines as printed, seeds 1–5) | verdict |")
    print("|---|---|---|---|")
    print(f"| OGA above every baseline (Table 3) | all {len(cols)} columns | above all four in "
          f"{won} of {len(cols)} columns; the best baseline: "
          f"{', '.join(sorted({best_baseline(runs[c]) for c in cols}))} | {yes(won == len(cols), won > 0)} |")
    print(f"| FAIRNESS the best baseline (§4.1) | {pfair} of {len(cols)} columns of Table 3 "
          f"(DRF in the others) | {fair} of {len(cols)} columns | {yes(fair >= pfair, fair > 0)} |")
    for b in BASELINES:
        m, sd = mean_sd([gain_pct(r, "oga", b) for r in f2])
        v = refs.verdict([avg(r, "oga") - avg(r, b) for r in f2], 0.0, refs.COMPARED)
        print(f"| Fig. 2: OGA's gain over {b.upper()} | +{PAPER[b]} % | {m:+.1f} ± {sd:.1f} % ({v}) "
              f"| {yes(v == 'above' and m < 2 * PAPER[b], v == 'above')} |")
    print(f"| reward scale (Table 3, ρ 0.7): within 2× of the paper's | 2503–3117 per slot | "
          + ", ".join(f"{n} {x:.1f}×" for n, x in ratios.items())
          + f" | {yes(len(within) == len(ratios), bool(within))} ({len(within)} of {len(ratios)}) |")
    grow = mean(runs[ts[-1]], "oga") / mean(runs[ts[0]], "oga") - 1
    print(f"| OGA's reward grows with T (Table 3) | +{(PAPER_T3['oga'][3] / PAPER_T3['oga'][0] - 1) * 100:.0f} % "
          f"from T 1000 to 10000 | {grow * 100:+.1f} % | {yes(grow > 0.05, grow > 0)} |")
    top = max(rho, key=lambda c: mean(runs[c], "oga"))
    print(f"| OGA's reward peaks at ρ 0.7, not 0.9 (Table 3) | 3117 at ρ 0.7, 2938 at 0.9 | highest at "
          f"ρ {top[1]} | {yes(top == ('ρ', 0.7))} |")
    print(f"| Fig. 3(c): rewards rise from ℓ 0.1 to 1 and fall beyond | every algorithm | peak ℓ: "
          + ", ".join(f"{n} {c}" for n, c in peak.items())
          + f" | {yes(all(1 <= c < CONTENTION[-1] for c in peak.values()))} |")
    print(f"| Fig. 3(c): OGA the best at every ℓ | every ℓ | above all four at {oga_best} of "
          f"{len(CONTENTION)} ℓ | {yes(oga_best == len(CONTENTION), oga_best > 0)} |")
    print()


def fig3c():
    print("### Fig. 3(c): the contention level ℓ (linear, T 2000, ρ 0.7, seeds 1–5): average reward "
          "per slot, mean over the seeds\n")
    names = ["oga", "oga-lookahead", *BASELINES]
    print("| ℓ | " + " | ".join(names) + " | oga − best baseline (verdict) |")
    print("|---|" + "---:|" * len(names) + "---|")
    for c in CONTENTION:
        rs = [bench("--contention", c, "--seed", s, "--regret-points", 1,
                    "--hindsight-iterations", 200) for s in SEEDS]
        best = max(BASELINES, key=lambda b: statistics.mean(avg(r, b) for r in rs))
        cells = [f"{statistics.mean(avg(r, n) for r in rs):.0f}" for n in names]
        d = [avg(r, "oga") - avg(r, best) for r in rs]
        m, sd = mean_sd(d)
        print(f"| {c} | {' | '.join(cells)} | {m:+.0f} ± {sd:.0f} against {best} "
              f"({refs.verdict(d, 0.0, refs.COMPARED)}) |")
    print()


def readings():
    print("### The earlier readings, as ablations (linear, T 2000, ρ 0.7, ℓ = 10, seeds 1–5): "
          "average reward per slot, mean ± sd\n")
    print("`requests trace` is the headline setting; `requests capacity` draws each job type's "
          "request from the instances' capacity range (this reproduction's previous setting).\n")
    print("| allocator | requests trace | requests capacity |")
    print("|---|---:|---:|")
    tr = t3_runs(("ρ", 0.7))
    ca = [bench("--requests", "capacity", "--seed", s, "--regret-points", 1,
                "--hindsight-iterations", 200) for s in SEEDS]
    for n in ALL:
        cells = []
        for rs in (tr, ca):
            m, sd = mean_sd([avg(r, n) for r in rs])
            cells.append(f"{m:.0f} ± {sd:.0f}")
        tag = " (ablation)" if n in ABLATIONS else ""
        print(f"| {n}{tag} | {' | '.join(cells)} |")
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
            g = mean_sd([gain_pct(r, "oga", n) for r in runs])
            gl = mean_sd([gain_pct(r, "oga-lookahead", n) for r in runs])
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
    baseline as the paper defines it, in the paper's Fig. 2 setting over seeds 1–5, next to the
    paper's figures, and the best allocator there."""
    runs = [bench(*FIG2, "--seed", s, "--regret-points", 1, "--hindsight-iterations", 500)
            for s in SEEDS]
    def g(b):
        m, sd = mean_sd([gain_pct(r, "oga", b) for r in runs])
        return f"{m:+.0f} ± {sd:.0f} %" if abs(m) >= 100 else f"{m:+.1f} ± {sd:.1f} %"
    best = max(["oga", *BASELINES], key=lambda n: statistics.mean(avg(r, n) for r in runs))
    return (f"OGASched, baselines as printed, OGA's gain in reward, Fig. 2 setting, seeds 1–5 | "
            f"DRF {g('drf')} (paper +11.33), FAIRNESS "
            f"{g('fairness')} (+7.75), BINPACKING {g('binpacking')} (+13.89), SPREADING "
            f"{g('spreading')} (+13.44); the highest reward: {best}\n")


def parser():
    """The command line: experiments/cli.py's shared flags and this module's own."""
    ap = cli.parser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="only the per-utility table")
    ap.add_argument("--seed", type=int, default=1)
    return ap


def main(argv=None):
    """Runs the command line `argv` (default: sys.argv[1:]); returns the exit status."""
    argv = sys.argv[1:] if argv is None else argv
    a = parser().parse_args(argv)
    cmd = docgen.command(__file__, argv)
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
            findings()
            table3()
            fig3c()
            fig2()
            readings()
            seeds()
            eta0()
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
