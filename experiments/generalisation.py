"""Learned policies against the static ones, per workload: by default on each held-out workload
(workloads/heldout/: application names no checkpoint knows, demand combinations the training
workload lacks, step and fast-sine λ; never used in training or in choosing a table or margin),
over evaluation seeds (default 101–105), every figure a mean ± sd over the seeds. A workload is a
file, a number (the default workload at that λ) or `diurnal` (workloads/diurnal.yaml, one
600 s period).

  dqn          each --agents checkpoint, a path in which {topology} is replaced (the shipped
               per-class meta-policy by default); two agents need different file names
  its tables   the same checkpoint's fallback tables alone (`compare --agent-tables`)
  best ASET policy  the one static policy of the eight (ASET's seven and `random`) with the best
               mean over the seeds, chosen in hindsight on the evaluation seeds
  best heuristic, share of bound  the references of docs/baselines.md: experiments/baselines.py's
               recorded table where it has the cell, else every registered rule (without
               own-binding accounting) and the offline bound, run with --add-references and
               recorded with the results

Usage: python3 -m experiments.generalisation [--topologies full-edge,co-dc-cloud,dc-cloud]
       [--workloads workloads/heldout/a.yaml,60,diurnal,...] [--agents name=path,...]
       [--seeds ...] [--duration 300] [--out out/heldout] [--reuse] [--publish] [--from-json]
It needs a release build and the checkpoints, except with --from-json. --publish records the
output and the results under docs/generated/ (--reuse reads each run's JSON kept under --out
instead of running it again) and rewrites the docs' blocks that name this
command; --from-json prints the tables again from those recorded results.

Page: docs/generalisation.md and docs/meta-results.md.
"""
import pathlib
import statistics
import sys

from experiments import cli
from experiments import docgen
from experiments import references as refs
from experiments.cells import pm, sweep

# The allowance of the targets: an agent within this many pp below the best ASET policy holds.
ALLOWANCE_PP = 0.3

STATIC = ["closest", "load-balancing", "farthest", "cheaper", "random-proportional-latency",
          "random-proportional-load", "least-impedance", "random"]


def parser():
    """The command line: experiments/cli.py's shared flags and this module's own."""
    p = cli.parser("seeds", "duration", "bin", "runner", out="out/heldout")
    p.add_argument("--topologies", default="full-edge,co-dc-cloud,dc-cloud")
    p.add_argument("--workloads", default=",".join(
        str(w) for w in sorted(pathlib.Path("workloads/heldout").glob("*.yaml"))))
    p.add_argument("--agents", default="shipped=models/{topology}.dqn",
                   help="name=path pairs, {topology} replaced in each path")
    p.add_argument("--add-references", action="store_true",
                   help="with --from-json: run the references of the cells experiments/baselines.py's "
                        "table does not have, and record them")
    return p


def workload_flags(w, duration):
    """The compare options of a workload entry (a grid axis value): a λ or a workload file for
    `duration` s, or one 600 s period of the diurnal workload (experiments/universal.py reads
    its workloads with it too)."""
    if w == "diurnal":
        return {"workload": "workloads/diurnal.yaml", "duration": 600.0}
    if w.replace(".", "", 1).isdigit():
        return {"lambda": float(w), "duration": duration}
    return {"workload": w, "duration": duration}


def label(w):
    """How a workload entry reads in the table (experiments/universal.py's too)."""
    if w == "diurnal":
        return w
    if w.replace(".", "", 1).isdigit():
        return f"λ {w}"
    return pathlib.Path(w).stem


def measure():
    """Per topology, workload and seed: success % of every static policy and of each agent and
    its tables. Every run is a report of one grid (`continuum sweep`; <out>/sweep), here or on
    a Ray cluster with --ray."""
    topos = []
    for topo in a.topologies.split(","):
        cks = [path.format(topology=topo) for _, path in AGENTS]
        topos.append({"name": topo, "topology": f"topologies/{topo}.yaml", "agent": cks,
                      "agent-tables": cks})
    works = [dict(workload_flags(w, a.duration), name=w) for w in a.workloads.split(",")]
    grid = {"name": "heldout", "compare": {"policies": ",".join(STATIC)},
            "axes": [{"topology": topos}, {"load": works},
                     {"seed": [int(x) for x in SEEDS]}]}
    out = {}
    for labels, report in sweep(grid, pathlib.Path(a.out) / "sweep", a.bin, ray=a.ray,
                                reuse=a.reuse):
        topo, w = labels["topology"], labels["load"]
        got = {}
        for r in report["results"]:
            name = r["policy"]
            for agent, path in AGENTS:
                stem = pathlib.Path(path.format(topology=topo)).stem
                if name in (f"dqn:{stem}", "dqn"):
                    name = f"dqn:{agent}"
                elif name == f"tables:{stem}":
                    name = f"tables:{agent}"
            got[name] = 100 * r["success_ratio"]
            for app in r["per_app"]:
                got[f"{name}@{app['app']}"] = 100 * app["success"] / max(1, app["offered"])
        out.setdefault(f"{topo}|{w}", []).append(got)
    return out


def with_references(results):
    """The results with the references of every cell (recorded, or run with
    --add-references or a fresh measurement)."""
    cells = [k for k in results if k != "references"]
    found, computed = refs.of_cells(
        cells, SEEDS, results.get("references"),
        lambda k: dict(workload_flags(k.split("|", 1)[1], a.duration),
                       topology=f"topologies/{k.split('|', 1)[0]}.yaml"),
        pathlib.Path(a.out) / "references", a.bin, ray=a.ray,
        compute_missing=a.add_references or not a.from_json)
    if computed:
        results["references"] = dict(results.get("references") or {}, **computed)
    return results, found


def text(results):
    results, found = with_references(results)
    lines = [f"{len(SEEDS)} seeds ({a.seeds}), {a.duration:.0f} s runs (diurnal 600 s); success %, mean ± sd; "
             "differences per seed, pp (min … max). Best ASET policy: of ASET's seven and `random`; "
             "best heuristic: of every registered rule (docs/baselines.md); both by mean over the "
             "seeds; the agents run without own-binding accounting.\n"]
    lines.append("| topology | workload | agent | dqn | its tables | best ASET policy | dqn − best "
                 "ASET policy | dqn − its tables | best heuristic | dqn − best heuristic | dqn, "
                 "share of bound |")
    lines.append("|---|---|---|---|---|---|---|---|---|---|---|")
    for key, seeds in results.items():
        if key == "references":
            continue
        topo, w = key.split("|")
        best = max(STATIC, key=lambda s: statistics.mean(x[s] for x in seeds))
        for agent, _ in AGENTS:
            d = [x[f"dqn:{agent}"] for x in seeds]
            t = [x[f"tables:{agent}"] for x in seeds]
            b = [x[best] for x in seeds]
            db = [x - y for x, y in zip(d, b)]
            dt = [x - y for x, y in zip(d, t)]
            lines.append(f"| {topo} | {label(w)} | {agent} | {pm(d)} | {pm(t)} | "
                         f"{pm(b)} ({best}) | {pm(db)} ({min(db):+.2f} … {max(db):+.2f}) | "
                         f"{pm(dt)} | " + " | ".join(refs.against(found[key], d, SEEDS)) + " |")
    lines += ["", f"Per application where an agent is more than {ALLOWANCE_PP} pp below the best "
              "ASET policy (success %, mean over the seeds):", ""]
    for key, seeds in results.items():
        if key == "references":
            continue
        topo, w = key.split("|")
        best = max(STATIC, key=lambda s: statistics.mean(x[s] for x in seeds))
        apps = sorted(k.split("@", 1)[1] for k in seeds[0] if k.startswith(best + "@"))
        for agent, _ in AGENTS:
            gap = statistics.mean(x[f"dqn:{agent}"] - x[best] for x in seeds)
            if gap >= -ALLOWANCE_PP:
                continue
            cells = []
            for app in apps:
                m = [statistics.mean(x[f"{n}@{app}"] for x in seeds)
                     for n in (f"dqn:{agent}", f"tables:{agent}", best)]
                cells.append(f"{app} {m[0]:.1f} / {m[1]:.1f} / {m[2]:.1f}")
            lines.append(f"- {topo}, {label(w)}, {agent} (dqn / its tables / {best}): "
                         + "; ".join(cells))
    return "\n".join(lines)


def headline(results):
    """The README's row (experiments/headline.py): the first agent in every cell against the best
    ASET policy (target: ≥ it − ALLOWANCE_PP) and against the best heuristic, by the verdict
    rule of docs/methodology.md, and where the cells have the offline bound, the share of the
    gap between the best heuristic and the bound the agent closes."""
    results, found = with_references(results)
    agent = AGENTS[0][0]
    vs_aset, vs_rule, closed = {}, {}, []
    for key, seeds in results.items():
        if key == "references":
            continue
        name = f"{key.split('|')[0]} {label(key.split('|')[1])}"
        d = [x[f"dqn:{agent}"] for x in seeds]
        best = max(STATIC, key=lambda s: statistics.mean(x[s] for x in seeds))
        vs_aset[name] = refs.diff(d, [x[best] for x in seeds])
        if found.get(key) is not None:
            h = refs.best_heuristic(found[key], SEEDS)[1]
            vs_rule[name] = refs.diff(d, h)
            b = refs.bound(found[key], SEEDS)
            if b is not None and statistics.mean(b) - statistics.mean(h) > 1e-9:
                closed.append(100 * (statistics.mean(d) - statistics.mean(h))
                              / (statistics.mean(b) - statistics.mean(h)))
    text = (f"vs best ASET policy − {ALLOWANCE_PP} pp: "
            f"{refs.tally(vs_aset, -ALLOWANCE_PP, ('met', 'missed', 'tie'))}")
    if vs_rule:
        text += f"; vs best heuristic: {refs.tally(vs_rule)}"
    if closed:
        text += (f"; of the gap between the best heuristic and the bound it closes "
                 f"{min(closed):+.0f} … {max(closed):+.0f} % (median "
                 f"{statistics.median(closed):+.0f} %)")
    works = [label(w) for w in a.workloads.split(",")]
    files = all(not w.replace(".", "", 1).isdigit() and w != "diurnal"
                for w in a.workloads.split(","))
    what = (f"held-out workloads {', '.join(works)}" if files else
            f"{len(a.topologies.split(','))} topologies × {len(works)} loads")
    return (f"meta-policy `{agent}`, {what}, seeds {refs.seed_range(SEEDS)} | {text}\n")


def main(argv=None):
    """Runs the command line `argv` (default: sys.argv[1:])."""
    global AGENTS, SEEDS, a
    argv = sys.argv[1:] if argv is None else argv
    a = parser().parse_args(argv)
    CMD = docgen.command(__file__, argv,
                         drop=("--publish", "--from-json", "--reuse", "--add-references"),
                         drop_valued=("--out", "--bin", "--ray"))
    SEEDS = a.seeds.split(",")
    AGENTS = [tuple(x.split("=", 1)) for x in a.agents.split(",")]
    results = docgen.recorded_or_exit(CMD) if a.from_json else measure()
    rendered = text(results)
    print(rendered)
    if a.publish:
        docgen.publish(CMD, {None: rendered, "headline": headline(results)}, results)


if __name__ == "__main__":
    main()
