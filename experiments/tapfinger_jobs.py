"""TapFinger in its own problem (docs/tapfinger.md §1): edge clusters that pull ML tasks and give
each whole CPU cores and GPUs (`continuum jobs ml`, docs/jobs.md §10–11), TapFinger's synthetic
setting (16-core, 16-GPU clusters, 64 tasks per cluster, Poisson arrivals, half the clusters
reachable per task, the 0.5-timestep switching overhead), TapFinger and its three ablations
trained by MAPPO (`continuum jobs ml train`, training seed 1; validation and training seeds are
64-bit draws from it), judged by `continuum jobs ml compare` on held-out seeds against the rules
Optimus, Tiresias, Random, Min and prior-pull.

Cases (TapFinger §V-B1, Fig. 6, §V-C): 3 clusters at λ 2, 6 at λ 4, 6 at λ 2 and 3, the six
heterogeneous clusters at λ 6; and 3 at λ 2, 6 at λ 4 without switching overhead (§V-C grants it
to Optimus and Tiresias).

Usage: python3 -m experiments.tapfinger_jobs [--seeds 1,2,3,4,5] [--updates N] [--publish]
       [--from-json] [--out DIR]
Needs a release build; checkpoints missing under <out> are trained first.

Page: docs/tapfinger.md.
"""
import json
import pathlib
import statistics
import sys

from experiments import cli
from experiments import docgen
from experiments import references as refs
from experiments.cells import pm, run, timed

RULES = ["optimus", "tiresias", "random", "min", "prior-pull", "efficient"]
VARIANTS = [("tapfinger", "TapFinger (HAN, pointer, eq. 11)"),
            ("no-han", "no HAN: an MLP over each task and the means of its neighbours"),
            ("no-pointer", "no pointer: a pending task drawn at random"),
            ("vanilla-marl", "vanilla MARL: no HAN, the earliest task, no conflict resolution")]
# What else was tried for TapFinger itself, before the shipped reward scale: (folder, label,
# settings YAML, updates), same environments and seed.
TRIED = [("scale-0.05", "reward × 0.05, 100 updates", "reward_scale: 0.05\n", "100"),
         ("scale-0.005", "reward × 0.005, 100 updates", "reward_scale: 0.005\n", "100")]
CASES = "3:2,6:4,6:2,6:3,het:6"
NO_OVERHEAD = "3:2,6:4"
# TapFinger's headline figures (§V-B1, §V-C): reductions of the average completion time.
PAPER = {"3 clusters, λ 2": "−25.1 % vs Optimus (single-task, Fig. 5a); −44.5 % (multi-task, "
         "Fig. 11a)", "6 clusters, λ 4": "at least −20.5 % vs every baseline (Fig. 5c)",
         "6 heterogeneous, λ 6": "−40.1 % to −54.9 % vs the best baseline (Fig. 12a)"}


def parser():
    """The command line: experiments/cli.py's shared flags and this module's own."""
    p = cli.parser("seeds", "bin", "threads", seeds="1,2,3,4,5", out="out/tapfinger-jobs")
    p.add_argument("--updates", default="120")
    p.add_argument("--train-seed", type=int, default=1)
    return p


def train(name, variant=None, yaml=None, updates=None):
    """Trains <out>/<name> unless its checkpoint is there; its wall time, s (None: reused)."""
    if (OUT / name / "checkpoint.tapfinger").exists():
        return None
    print(f"training {name} …", file=sys.stderr)
    extra = []
    if yaml is not None:
        settings = OUT / f"{name}.yaml"
        settings.write_text(yaml)
        extra = ["--settings", str(settings)]
    _, wall = timed([a.bin, "jobs", "ml", "train", "--variant", variant or name, "--updates",
                     updates or a.updates, "--seed", str(a.train_seed), "--threads", a.threads, "--quiet",
                     "--out", str(OUT / name), *extra])
    return wall


def compare(cases, overhead, names):
    cks = [x for n in names for x in ("--checkpoint", f"{n}={OUT / n}")]
    out = run([a.bin, "jobs", "ml", "compare", "--cases", cases, "--seeds", a.seeds,
               "--overhead", str(overhead), "--threads", a.threads, "--format", "json", *cks])
    return json.loads(out)


def curve(name):
    rows = [r.split(",") for r in (OUT / name / "curve.csv").read_text().splitlines()[1:]]
    val = [float(r[2]) for r in rows]
    return {"updates": len(rows), "decisions": sum(int(r[3]) for r in rows),
            "validation_jct": val, "best_update": min(range(len(val)), key=val.__getitem__)}


def measure():
    OUT.mkdir(parents=True, exist_ok=True)
    walls = {n: train(n) for n, _ in VARIANTS}
    walls.update({n: train(n, "tapfinger", y, u) for n, _, y, u in TRIED})
    names = [n for n, _ in VARIANTS] + [n for n, *_ in TRIED]
    return {"rows": compare(CASES, 0.5, names), "no_overhead": compare(NO_OVERHEAD, 0.0, names),
            "curves": {n: curve(n) for n in names},
            "walls": {n: w for n, w in walls.items() if w is not None}}


def by(rows, case, method):
    return next(r for r in rows if r["case"] == case and r["method"] == method)


def totals(row):
    return [r["total_completion"] for r in row["reports"]]


def change(row, base):
    return [100 * (x - y) / y for x, y in zip(totals(row), totals(base))]


def cases(rows):
    seen = []
    for r in rows:
        if r["case"] not in seen:
            seen.append(r["case"])
    return seen


def best_rule(rows, case):
    return min((by(rows, case, m) for m in RULES), key=lambda r: statistics.mean(totals(r)))


def cell(row, base):
    d = change(row, base)
    return f"{pm(d, 1)} ({refs.verdict(d, 0.0, refs.COMPARED)})"


def first(row):
    """Mean cores and GPUs each type was first placed at, over the seeds: `(c, g) · (c, g)`."""
    def mean(key):
        return "({:.1f}, {:.1f})".format(*(statistics.mean(x[key][i] for x in row["reports"])
                                           for i in (0, 1)))
    return f"{mean('first_alloc_insensitive')} · {mean('first_alloc_sensitive')}"


def render_table(rows, title):
    text = [title, "", "| case | method | total completion (timesteps) | mean JCT | makespan | "
            "first allocation, insensitive · sensitive | vs the best rule, % |",
            "|---|---|---|---|---|---|---|"]
    shown = RULES + [n for n, _ in VARIANTS]
    for case in cases(rows):
        b = best_rule(rows, case)
        for r in (r for r in rows if r["case"] == case and r["method"] in shown):
            jct = [x["mean_jct"] for x in r["reports"]]
            mk = [x["makespan"] for x in r["reports"]]
            vs = f"best rule ({b['method']})" if r is b else cell(r, b)
            text.append(f"| {case} | {r['method']} | {pm(totals(r), 0)} | {pm(jct, 2)} | "
                        f"{pm(mk, 1)} | {first(r)} | {vs} |")
    return text


def render(res):
    rows = res["rows"]
    text = render_table(rows, f"{len(SEEDS)} held-out seeds ({refs.seed_range(SEEDS)}); 16-core, "
                        "16-GPU clusters (the heterogeneous case: 4 to 32 units); 64 tasks per "
                        "cluster; switching overhead 0.5 timestep. Totals and times in "
                        "timesteps, mean ± sd over the seeds; *first allocation*: the mean (cores, "
                        "GPUs) a task of each type was first placed at; *vs the best rule*: per seed, the "
                        "change of the total completion time against the rule with the lowest "
                        "mean in that case (verdict of docs/methodology.md: below = shorter).")
    text += ["", "TapFinger against each rule (per-seed change of the total completion time, %; "
             "the paper's figure where it prints one):", "",
             "| case | " + " | ".join(RULES) + " | paper |", "|---|" + "---|" * (len(RULES) + 1)]
    for case in cases(rows):
        tf = by(rows, case, "tapfinger")
        text.append(f"| {case} | " + " | ".join(cell(tf, by(rows, case, m)) for m in RULES)
                    + f" | {PAPER.get(case, '—')} |")
    text += [""] + render_table(res["no_overhead"], "Without switching overhead (TapFinger "
                                "§V-C grants it to Optimus and Tiresias; the agents never "
                                "re-allocate, so only the re-allocating rules change):")
    return "\n".join(text) + "\n"


def render_ablation(res):
    rows = res["rows"]
    text = ["Each variant trained as TapFinger is (same updates, environments and seed; "
            "reward × 0.001 unless said), its checkpoint the one with the best validation JCT; "
            "total completion time against TapFinger's on the same seeds, %.", "",
            "| variant | " + " | ".join(cases(rows)) + " | best validation JCT (update) |",
            "|---|" + "---|" * (len(cases(rows)) + 1)]
    for name, what in VARIANTS + [(n, "TapFinger, " + w) for n, w, *_ in TRIED]:
        cv = res["curves"][name]
        cells = []
        for case in cases(rows):
            r, tf = by(rows, case, name), by(rows, case, "tapfinger")
            cells.append(pm(totals(r), 0) if name == "tapfinger" else cell(r, tf))
        text.append(f"| {what} | " + " | ".join(cells) +
                    f" | {min(cv['validation_jct']):.2f} ({cv['best_update'] + 1} of "
                    f"{cv['updates']}) |")
    return "\n".join(text) + "\n"


def headline(res):
    rows = res["rows"]

    def tally(base):
        v = [refs.verdict(change(by(rows, c, "tapfinger"), base(c)), 0.0, refs.COMPARED)
             for c in cases(rows)]
        return f"below in {v.count('below')}, above in {v.count('above')}, tie in {v.count('tie')}"

    best = sorted({best_rule(rows, c)["method"] for c in cases(rows)})
    return (f"TapFinger on ML tasks (its problem), {len(cases(rows))} cases, seeds "
            f"{refs.seed_range(SEEDS)} | total completion time vs Optimus (the paper's "
            f"headline baseline): {tally(lambda c: by(rows, c, 'optimus'))}; vs the best rule "
            f"({', '.join(best)}): {tally(lambda c: best_rule(rows, c))}; a simple rule is "
            "better\n")


def main(argv=None):
    """Runs the command line `argv` (default: sys.argv[1:])."""
    global OUT, SEEDS, a
    argv = sys.argv[1:] if argv is None else argv
    a = parser().parse_args(argv)
    CMD = docgen.command(__file__, argv, drop=("--publish", "--from-json"),
                         drop_valued=("--out", "--bin", "--threads"))
    SEEDS = a.seeds.split(",")
    OUT = pathlib.Path(a.out)
    results = docgen.recorded_or_exit(CMD) if a.from_json else measure()
    text, abl = render(results), render_ablation(results)
    print(text + "\n" + abl, end="")
    if a.publish:
        docgen.publish(CMD, {None: text, "ablation": abl, "headline": headline(results)}, results)


if __name__ == "__main__":
    main()
