"""Allocator-above-dispatch results: on each topology, under workloads/shifting-mix.yaml (one
whole day of 600 s), every dispatch policy under every allocator (`static`: the topology
file's deployment). Each allocator's dispatch policy is chosen on training seeds
(--choose-seeds: the highest mean success ratio over them), the same way for every allocator,
and evaluated on a seed that is not among them (--seed). Prints Markdown, in parts:

  summary      per topology and allocator: the success ratio on the evaluation seed of the
               policy chosen on the training seeds (its name) and OGASched's reward per slot of
               that row; OGA's margin over the best other allocator and over static (target:
               >= 0 and >= +3 pp on full-edge)
  matrix       success ratio of every allocator x policy on the evaluation seed
  other-seeds  the same chosen policies on each of --other-seeds
  ablation     with --ablation: full-edge, OGA under `least-impedance`: units x learning rate

Usage: python3 -m experiments.allocation [--seed 101] [--choose-seeds 1,2]
       [--other-seeds 102,103] [--duration 600] [--out out/alloc]
       [--topologies full-edge,co-dc-cloud,dc-cloud] [--generated] [--ablation]
       [--reuse] [--publish] [--from-json] [--ray HOST:PORT]
It needs a release build (`cargo build --release`), except with --from-json. `--generated`
adds a topology that is not in the repository (`continuum topology generate`, written under
--out). Every run is a report of one grid (`continuum sweep`: <out>/sweep, the ablation's
<out>/ablation-sweep; --reuse keeps the cells already there, else they are run again), here
or on a Ray head (--ray).
--publish records every part and the results under docs/generated/ and rewrites the docs'
blocks that name this command (experiments/docgen.py); --from-json prints the parts again from
those recorded results without running anything.

Page: docs/allocation.md (excerpt in docs/results.md).
"""
import pathlib
import sys

import statistics

from experiments import cli
from experiments import docgen
from experiments import references as refs
from experiments.cells import pm, run, sweep

ALLOCATORS = ["static", "oga", "oga-lookahead", "drf-per-channel", "fairness-linked", "fairness",
              "binpacking-per-channel", "spreading-per-channel"]
# (These are the readings the bridge was run with: the heuristics over the per-channel polytope
# and FAIRNESS over every linked port (`fairness-linked`) or the present ones (`fairness`);
# docs/oga.md names the paper's readings.)
# OGASched's two orders: neither is "another allocator" to `oga`.
OGA = ("oga", "oga-lookahead", "static")
GENERATE = ["topology", "generate", "--antennas", "24", "--antennas-per-co", "3",
            "--cos-per-rdc", "3", "--link-ms", "2,8,25", "--link-spread", "0.4",
            "--cpu", "12,48,96,192", "--gpu", "8,16,24", "--antenna-gpu-share", "0.3",
            "--seed", "5"]


def parser():
    """The command line: experiments/cli.py's shared flags and this module's own."""
    p = cli.parser("duration", "bin", "runner", duration=600, out="out/alloc")
    p.add_argument("--seed", type=int, default=101, help="the evaluation seed")
    p.add_argument("--choose-seeds", default="1,2",
                   help="the seeds each allocator's dispatch policy is chosen on")
    p.add_argument("--other-seeds", default="102,103",
                   help="more evaluation seeds (an empty value: none)")
    p.add_argument("--topologies", default="full-edge,co-dc-cloud,dc-cloud")
    p.add_argument("--generated", action="store_true")
    p.add_argument("--ablation", action="store_true")
    return p


def compact(rows):
    keep = []
    for r in rows:
        al = r.get("allocation") or {}
        keep.append(dict(policy=r["policy"], success_ratio=r["success_ratio"],
                         mean_reward=al.get("mean_reward"),
                         replica_changes=al.get("replica_changes")))
    return keep


def measure():
    paths = [(t, f"topologies/{t}.yaml") for t in a.topologies.split(",") if t]
    if a.generated:
        out.mkdir(parents=True, exist_ok=True)
        g = out / "isp-24.yaml"
        run([a.bin, *GENERATE, "--out", str(g)])
        paths.append(("isp-24 (generated)", str(g)))
    # Every topology on every seed, every allocator: one grid.
    names = {pathlib.Path(path).stem: name for name, path in paths}
    seeds = list(dict.fromkeys(choose_seeds + [a.seed] + other_seeds))
    grid = {"name": "allocation",
            "compare": dict(DAY, allocators=",".join(ALLOCATORS)),
            "axes": [{"topology": [{"name": pathlib.Path(path).stem, "topology": path}
                                   for _, path in paths]},
                     {"seed": seeds}]}
    runs = {}
    for labels, r in sweep(grid, out / "sweep", a.bin, ray=a.ray, reuse=a.reuse):
        runs.setdefault(labels["topology"], {})[labels["seed"]] = compact(r["results"])
    res = {"topologies": [{"name": names[tag], "runs": runs[tag]} for tag in names]}
    if a.ablation:
        # OGA under one policy on full-edge: units × learning rate (none: the regret bound's).
        grid = {"name": "allocation-ablation",
                "compare": dict(DAY, topology="topologies/full-edge.yaml", seed=a.seed,
                                policies="least-impedance", allocators="oga"),
                "axes": [{"units": [{"name": u, "alloc-units": u}
                                    for u in ["natural", "replica", "instance"]]},
                         {"eta": [{"name": "bound"}] + [{"name": e, "alloc-eta0": e}
                                                        for e in ["25", "1"]]}]}
        res["ablation"] = [
            dict(units=labels["units"], eta=None if labels["eta"] == "bound" else labels["eta"],
                 **compact(r["results"])[0])
            for labels, r in sweep(grid, out / "ablation-sweep", a.bin, ray=a.ray,
                                     reuse=a.reuse)]
    return res


def split(row):
    policy, allocator = row["policy"].rsplit("@", 1)
    return policy, allocator


def pct(x):
    return f"{100 * x:.2f}"


def table(rows):
    return {split(r): r for r in rows}


def chosen(runs):
    """Per allocator, the dispatch policy with the highest mean success over the training
    seeds (ties: the first in name order)."""
    cells = [table(runs[str(s)]) for s in choose_seeds]
    policies = sorted({pol for pol, _ in cells[0]})
    return {al: max(policies, key=lambda pol: (sum(c[(pol, al)]["success_ratio"] for c in cells),
                                               [-ord(ch) for ch in pol]))
            for al in ALLOCATORS}


def render(res):
    seeds = ",".join(map(str, choose_seeds))
    summary = [f"Policy per allocator chosen on seeds {seeds} (highest mean success), success % "
               f"on seed {a.seed}:", "",
               "| topology | " + " | ".join(ALLOCATORS) + " | oga − best other | oga − static |",
               "|---|" + "---|" * (len(ALLOCATORS) + 2)]
    matrices, others = [], []
    for t in res["topologies"]:
        pick = chosen(t["runs"])
        cells = table(t["runs"][str(a.seed)])
        row = {al: cells[(pick[al], al)] for al in ALLOCATORS}
        line = f"| {t['name']} |"
        for al in ALLOCATORS:
            reward = row[al]["mean_reward"]
            rtxt = "" if reward is None else f", q {reward:.0f}"
            line += f" {pct(row[al]['success_ratio'])} ({pick[al]}{rtxt}) |"
        oga = row["oga"]["success_ratio"]
        other = max(row[al]["success_ratio"] for al in ALLOCATORS if al not in OGA)
        line += (f" {100 * (oga - other):+.2f} pp | "
                 f"{100 * (oga - row['static']['success_ratio']):+.2f} pp |")
        summary.append(line)
        policies = sorted({pol for pol, _ in cells})
        m = [f"**{t['name']}** (success %, seed {a.seed})", "",
             "| policy | " + " | ".join(ALLOCATORS) + " |", "|---|" + "---|" * len(ALLOCATORS)]
        for pol in policies:
            m.append(f"| {pol} | " + " | ".join(pct(cells[(pol, al)]["success_ratio"])
                                               for al in ALLOCATORS) + " |")
        matrices.append("\n".join(m))
        for s in other_seeds:
            c = table(t["runs"][str(s)])
            others.append(f"| {t['name']}, {s} | " + " | ".join(
                pct(c[(pick[al], al)]["success_ratio"]) for al in ALLOCATORS) + " |")
    parts = {"summary": "\n".join(summary) + "\n", "matrix": "\n\n".join(matrices) + "\n"}
    if other_seeds:
        parts["other-seeds"] = "\n".join(
            [f"Success % of the policy each allocator was given on seeds {seeds}:", "",
             "| topology, seed | " + " | ".join(ALLOCATORS) + " |",
             "|---|" + "---|" * len(ALLOCATORS)] + others) + "\n"
    if "ablation" in res:
        ab = [f"**Ablation** (full-edge, `least-impedance`, seed {a.seed}): OGA's model settings",
              "", "| units | η0 | success % | reward/slot | replica changes |",
              "|---|---|---|---|---|"]
        for r in res["ablation"]:
            ab.append(f"| {r['units']} | {r['eta'] or 'regret bound'} | "
                      f"{pct(r['success_ratio'])} | {r['mean_reward']:.1f} | "
                      f"{r['replica_changes']} |")
        parts["ablation"] = "\n".join(ab) + "\n"
    parts["headline"] = headline(res)
    return parts


def headline(res):
    """The README's row (experiments/headline.py): per topology, `oga` against `static` and against
    the best other allocator, each with the policy chosen on --choose-seeds, paired over every
    evaluation seed, by the verdict rule of docs/methodology.md."""
    seeds = [a.seed] + other_seeds
    focus, counts = None, {"static": [], "other": []}
    for t in res["topologies"]:
        pick = chosen(t["runs"])
        per = {al: [100 * table(t["runs"][str(s)])[(pick[al], al)]["success_ratio"]
                    for s in seeds] for al in ALLOCATORS}
        other = max((al for al in ALLOCATORS if al not in OGA),
                    key=lambda al: statistics.mean(per[al]))
        counts["static"].append(refs.verdict(refs.diff(per["oga"], per["static"]), 0, refs.COMPARED))
        counts["other"].append(refs.verdict(refs.diff(per["oga"], per[other]), 0, refs.COMPARED))
        if focus is None:
            focus = (f"{t['name']}: `oga` {pm(per['oga'])} % vs `static` "
                     f"{refs.versus(per['oga'], per['static'])}, vs the best other allocator "
                     f"(`{other}`) {refs.versus(per['oga'], per[other])}")
    tally = lambda ws: ", ".join(f"{w} {ws.count(w)}" for w in refs.COMPARED)
    return (f"allocation, seeds {refs.seed_range(seeds)} (policies chosen on seeds "
            f"{refs.seed_range(choose_seeds)}) | {focus}. Over {len(res['topologies'])} "
            f"topologies, vs `static`: {tally(counts['static'])}; vs the best other: "
            f"{tally(counts['other'])}\n")


def main(argv=None):
    """Runs the command line `argv` (default: sys.argv[1:])."""
    global DAY, a, choose_seeds, other_seeds, out
    argv = sys.argv[1:] if argv is None else argv
    a = parser().parse_args(argv)
    CMD = docgen.command(__file__, argv, drop=("--publish", "--from-json", "--reuse"),
                         drop_valued=("--out", "--bin", "--ray"))
    choose_seeds = [int(s) for s in a.choose_seeds.split(",") if s]
    other_seeds = [int(s) for s in a.other_seeds.split(",") if s]
    if a.seed in choose_seeds or set(other_seeds) & set(choose_seeds):
        sys.exit("the evaluation seeds must differ from --choose-seeds")
    out = pathlib.Path(a.out)
    # The compare options of every run: one day of the shifting mix.
    DAY = {"workload": "workloads/shifting-mix.yaml", "duration": a.duration}
    if a.from_json:
        res = docgen.load_results(CMD)
        if res is None:
            sys.exit(f"no recorded results of `{CMD}` ({docgen.results_path(CMD)}): run it without "
                     "--from-json")
    else:
        res = measure()
    parts = render(res)
    print("\n".join(v for k, v in parts.items() if k != "headline"), end="")
    if a.publish:
        docgen.publish(CMD, parts, res)


if __name__ == "__main__":
    main()
