"""The meta-policy's results table: on every topology, at λ ∈ {20, 40, 60, 80, 100} and on the
diurnal workload, over evaluation seeds never used in training or in choosing a table (default
101–105), every figure a mean ± sd over the seeds:

  dqn per-class   models/<topology>.dqn          (one head per application class, its network
                  deviating from its fallback tables past its margin)
  its tables      the same checkpoint's fallback tables alone (`compare --agent-tables`): what
                  the network adds is dqn per-class − its tables, per seed
  ASET agent      models/<topology>-aset.dqn     (config/aset.yaml: ASET as its paper defines it,
                  trained at λ 60 only; docs/aset-findings.md)
  best ASET policy the one static policy of the eight (ASET's seven and `random`) with the best
                  mean over the seeds, chosen in hindsight on the evaluation seeds
  best heuristic  every registered rule without own-binding accounting and under `window`, and
                  the offline bound: the references of experiments/baselines.py's recorded table
                  (docs/baselines.md), read, not run; on cells it does not have (imported
                  networks), every rule without accounting and the bound, run by a measurement
                  or by --from-json --add-references and recorded with the results; the learned
                  rows here run without own-binding accounting
  per-class table the best static per-class table, chosen by `continuum table` on seeds 1, 2
  oracle          the per-window oracle over the per-class agent's actions and classes (at
                  --oracle-loads only: it costs some 20 runs per cell)
  gap closed      (dqn − best) / (oracle − best) of the means, `n/a` where the oracle is not
                  above the best ASET policy

A second table gives the same differences with the first --warmup-s seconds of every run left
out (the topology fills with streams from empty at the start of a run).

Usage: python3 -m experiments.meta_results [--seeds 101,102,103,104,105] [--duration 300]
       [--out out/meta] [--publish] [--from-json [--add-references]] [--no-oracle] [--ray HOST:PORT]
It needs a release build (`cargo build --release`) and the checkpoints, except with
--from-json. Every run is a cell of one grid (<out>/sweep/grid.yaml: `continuum sweep`), run
here or, with --ray, on a Ray cluster; cells and tables already written under <out> are reused
(delete them to run again). --publish records both parts and the results under docs/generated/ and rewrites the
docs' blocks that name this command (experiments/docgen.py); --from-json prints the tables again
from those recorded results without running anything.

Page: docs/meta-results.md and docs/aset-findings.md (excerpts in docs/results.md).
"""
import json
import pathlib
import statistics
import sys

from experiments import cli
from experiments import docgen
from experiments import references as refs
from experiments.cells import success_from, sweep


def parser():
    """The command line: experiments/cli.py's shared flags and this module's own."""
    p = cli.parser("seeds", "duration", "diurnal-duration", "bin", "ray", out="out/meta")
    p.add_argument("--lambdas", default="20,40,60,80,100")
    p.add_argument("--topologies", default="full-edge,co-dc-cloud,dc-cloud")
    p.add_argument("--table-seeds", default="1,2")
    p.add_argument("--warmup-s", type=float, default=60)
    p.add_argument("--models", default="models")
    p.add_argument("--no-oracle", action="store_true")
    p.add_argument("--oracle-loads", default="60,diurnal",
                   help="the loads that get an oracle row (it costs some 20 runs per cell)")
    p.add_argument("--summary-loads", default="60,diurnal",
                   help="the loads of the summary table (λ values or `diurnal`)")
    p.add_argument("--add-references", action="store_true",
                   help="with --from-json: run the references of the cells experiments/baselines.py's "
                        "table does not have, and record them")
    return p


STATIC = ["closest", "load-balancing", "farthest", "cheaper", "random-proportional-latency",
          "random-proportional-load", "least-impedance", "random"]


def dominant(actions):
    """`class: policy share%` of the most chosen action per class, e.g. `ar: closest 92%`."""
    if not actions:
        return ""
    parts = []
    for c, shares in zip(actions["classes"], actions["share"]):
        i = max(range(len(shares)), key=lambda k: shares[k])
        parts.append(f"{c.split('-')[0]}: {actions['actions'][i]} {100 * shares[i]:.0f}%")
    return "; ".join(parts)


def after(row):
    """Success % of a result row from --warmup-s on."""
    return success_from(row, a.warmup_s)


def loads():
    """The load axis: each λ, and one period of the diurnal workload; the oracle where asked."""
    out = [{"name": lam, "workload": "workloads/default.yaml", "lambda": float(lam),
            "duration": a.duration} for lam in a.lambdas.split(",")]
    out.append({"name": "diurnal", "workload": "workloads/diurnal.yaml",
                "duration": a.diurnal_duration})
    return out


def grid():
    """Every compare run of the table as one grid: topologies × loads × seeds, each report the
    eight static policies, the per-class table (a job chosen on --table-seeds), the per-class
    agent, its tables, the ASET agent where there is one, the oracle at --oracle-loads."""
    topos = []
    for topo in a.topologies.split(","):
        agents = [f"{a.models}/{topo}.dqn"]
        aset = pathlib.Path(f"{a.models}/{topo}-aset.dqn")
        if aset.exists():
            agents.append(str(aset))
        topos.append({"name": topo, "topology": topo, "agent": agents,
                      "agent-tables": [f"{a.models}/{topo}.dqn"]})
    table = str(out / "tables" / "{topology}-{load}.yaml")
    compare_loads = [dict(x, oracle=(not a.no_oracle and x["name"] in a.oracle_loads.split(",")))
                     for x in loads()]
    return {
        "name": "meta-results",
        "compare": {"policies": ",".join(STATIC + [f"per-class:{table}"])},
        "axes": [{"topology": topos}, {"load": compare_loads},
                 {"seed": [int(x) for x in SEEDS]}],
        "jobs": [{"command": "table", "seeds": a.table_seeds, "out": table,
                  "axes": [{"topology": a.topologies.split(",")}, {"load": loads()}]}],
    }


def measure_all():
    """Runs the grid (here, or on Ray with --ray) and files each row by topology, load, seed."""
    found = {}
    for labels, r in sweep(grid(), out / "sweep", a.bin, ray=a.ray):
        topo, key = labels["topology"], labels["load"]
        table = str(out / "tables" / f"{topo}-{key}.yaml")
        named = {}
        for x in r["results"]:
            name = x["policy"]
            if name == f"dqn:{topo}" or name == "dqn":
                name = "dqn"
            elif name == f"dqn:{topo}-aset":
                name = "aset"
            elif name == f"tables:{topo}":
                name = "tables"
            elif name == f"per-class:{table}":
                name = "table"
            named[name] = x
        found.setdefault(topo, {}).setdefault(key, []).append(
            {k: dict(whole=100 * v["success_ratio"], after=after(v),
                     rejected=100 * v["rejected"] / max(1, v["offered"]),
                     failed=100 * v["failure"] / max(1, v["offered"]),
                     actions=dominant(v.get("actions")))
             for k, v in named.items()})
    summary = {}
    for topo, by_load in found.items():
        summary[topo] = [dict(cell="diurnal" if key == "diurnal" else f"λ {key}", load=key,
                              seeds=per_seed) for key, per_seed in by_load.items()]
    return summary


def stats(xs):
    return statistics.mean(xs), (statistics.stdev(xs) if len(xs) > 1 else 0.0)


def pm(xs):
    m, sd = stats(xs)
    return f"{m:.2f} ± {sd:.2f}"


def col(x, name, key="whole"):
    return [s[name][key] for s in x["seeds"] if name in s]


def best_static(x, key="whole"):
    return max(STATIC, key=lambda k: statistics.mean(col(x, k, key)))


def diff(x, p, q, key="whole"):
    return [s[p][key] - s[q][key] for s in x["seeds"] if p in s and q in s]


def gap_text(x):
    best = best_static(x)
    orc = col(x, "oracle")
    if not orc:
        return "–"
    o, b, d = (statistics.mean(v) for v in (orc, col(x, best), col(x, "dqn")))
    return "n/a" if o - b <= 1e-9 else f"{100 * (d - b) / (o - b):.0f} %"


def maybe(xs):
    return pm(xs) if xs else "–"


REFS = {}


def ref(topo, load):
    """The references of a cell (see `references`), or None."""
    return REFS.get(f"{topo}|{load}")


def load_options(topo, load):
    """The compare options of a cell, for its references."""
    o = {"topology": f"topologies/{topo}.yaml"}
    if load == "diurnal":
        return dict(o, workload="workloads/diurnal.yaml", duration=a.diurnal_duration)
    return dict(o, workload="workloads/default.yaml", duration=a.duration, **{"lambda": float(load)})


def references(summary):
    """The references of every cell: experiments/baselines.py's recorded table where it has the
    cell, else those recorded with these results, else (with --add-references or a fresh
    measurement) every registered rule without own-binding accounting and the bound, run now.
    Returns what is to be recorded with the results (None: nothing)."""
    stored = summary.pop("references", None)
    keys = [f"{t}|{x['load']}" for t, rows in summary.items() for x in rows]
    found, computed = refs.of_cells(
        keys, SEEDS, stored, lambda k: load_options(*k.split("|", 1)), out / "references",
        a.bin, ray=a.ray, compute_missing=a.add_references or not a.from_json)
    REFS.update({k: v for k, v in found.items() if v is not None})
    keep = dict(stored or {}, **computed)
    return keep or None


def render_cells(summary):
    n = len(SEEDS)
    text = []
    for topo, rows in summary.items():
        text.append(f"**{topo}** ({n} seeds, {a.seeds}; {a.duration:.0f} s runs, diurnal "
                    f"{a.diurnal_duration:.0f} s; success %, mean ± sd)\n")
        text.append("| workload | dqn per-class | its tables alone | ASET agent | best ASET policy | "
                    "per-class table | oracle | dqn − best ASET policy | dqn − its tables (min … max) "
                    "| gap closed | best heuristic | dqn − best heuristic | dqn, share of bound |")
        text.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
        for x in rows:
            b = best_static(x)
            t = diff(x, "dqn", "tables")
            h, vs, sh = refs.against(ref(topo, x["load"]), col(x, "dqn"), SEEDS)
            text.append(f"| {x['cell']} | {pm(col(x, 'dqn'))} | {pm(col(x, 'tables'))} | "
                        f"{maybe(col(x, 'aset'))} | {pm(col(x, b))} ({b}) | {pm(col(x, 'table'))} | "
                        f"{maybe(col(x, 'oracle'))} | {pm(diff(x, 'dqn', b))} | {pm(t)} "
                        f"({min(t):+.2f} … {max(t):+.2f}) | {gap_text(x)} | {h} | {vs} | {sh} |")
        text.append("")
        text.append(f"From {a.warmup_s:.0f} s on (the warm-up left out; best ASET policy chosen "
                    "again on these figures):\n")
        text.append("| workload | dqn − best ASET policy | dqn − its tables | ASET agent − best ASET policy |")
        text.append("|---|---|---|---|")
        for x in rows:
            b = best_static(x, "after")
            text.append(f"| {x['cell']} | {pm(diff(x, 'dqn', b, 'after'))} ({b}) | "
                        f"{pm(diff(x, 'dqn', 'tables', 'after'))} | "
                        f"{maybe(diff(x, 'aset', b, 'after'))} |")
        text.append("")
        text.append(f"Actions the per-class agent took most (seed {SEEDS[0]}, share of its "
                    "decisions per class):\n")
        for x in rows:
            text.append(f"- {x['cell']}: {x['seeds'][0]['dqn']['actions']}")
        text.append("")
    return "\n".join(text) + "\n"


def render_summary(summary):
    wanted = a.summary_loads.split(",")
    text = [f"Success %, mean ± sd over {len(SEEDS)} evaluation seeds ({a.seeds}); the best "
            "mean of the four contenders in bold (the oracle looks ahead: a reference). Best ASET "
            "policy: of ASET's seven and `random`; best heuristic: of every registered rule, "
            "without own-binding accounting and under `window` (docs/baselines.md); both by mean over the seeds.\n",
            "| topology | workload | dqn per-class | ASET agent | best ASET policy | "
            "per-class table | oracle | dqn − best ASET policy | gap closed | best heuristic "
            "| dqn − best heuristic | dqn, share of bound |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for topo, rows in summary.items():
        for x in rows:
            if x["load"] not in wanted:
                continue
            b = best_static(x)
            means = {k: statistics.mean(col(x, n)) for k, n in
                     (("dqn", "dqn"), ("aset", "aset"), ("best", b), ("table", "table"))
                     if col(x, n)}
            top = max(round(v, 2) for v in means.values())
            cell = {}
            for k, n in (("dqn", "dqn"), ("aset", "aset"), ("best", b), ("table", "table")):
                v = col(x, n)
                cell[k] = "–" if not v else (f"**{pm(v)}**" if round(means[k], 2) == top else pm(v))
            h, vs, sh = refs.against(ref(topo, x["load"]), col(x, "dqn"), SEEDS)
            text.append(f"| {topo} | {x['cell']} | {cell['dqn']} | {cell['aset']} | "
                        f"{cell['best']} ({b}) | {cell['table']} | {maybe(col(x, 'oracle'))} | "
                        f"{pm(diff(x, 'dqn', b))} | {gap_text(x)} | {h} | {vs} | {sh} |")
    return "\n".join(text) + "\n"


def render_findings(summary):
    """ASET's findings, each as measured here (docs/aset-findings.md)."""
    lams = [x for x in a.lambdas.split(",")]
    cell = {(t, x["load"]): x for t, rows in summary.items() for x in rows}
    topos = list(summary)
    text = [f"Means over {len(SEEDS)} seeds ({a.seeds}); pp = percentage points of success.\n"]
    # 1. One size does not fit all.
    text.append("**1. No one-size-fits-all** — the best ASET policy (by mean) per cell:\n")
    text.append("| topology | " + " | ".join(f"λ {l}" for l in lams) + " |")
    text.append("|---|" + "---|" * len(lams))
    bests = set()
    for t in topos:
        names = [best_static(cell[(t, l)]) for l in lams]
        bests.update(names)
        text.append(f"| {t} | " + " | ".join(names) + " |")
    text.append(f"\n{len(bests)} different policies are best somewhere.\n")
    # 2. Room to improve: how much the choice of policy matters, and the oracle's lead.
    def spread(t, l):
        x = cell[(t, l)]
        means = sorted(statistics.mean(col(x, k)) for k in STATIC)
        return means[-1] - statistics.median(means)

    def room(t, l):
        x = cell[(t, l)]
        o = col(x, "oracle")
        return statistics.mean(o) - statistics.mean(col(x, best_static(x))) if o else None
    text.append("**2. Room for a meta-policy** — best ASET policy − the median of the eight static "
                "policies, pp (how much the choice matters); in brackets, oracle − best ASET policy "
                "where the oracle ran:\n")
    text.append("| topology | " + " | ".join(f"λ {l}" for l in lams) + " |")
    text.append("|---|" + "---|" * len(lams))
    for t in topos:
        text.append(f"| {t} | " + " | ".join(
            f"{spread(t, l):+.2f}" + ("" if room(t, l) is None else f" ({room(t, l):+.2f})")
            for l in lams) + " |")
    text.append("")
    # 3. Compute in central offices: best ASET policy of co-dc-cloud − dc-cloud.
    if "co-dc-cloud" in summary and "dc-cloud" in summary:
        text.append("**3. Compute moved to central offices** — best ASET policy on co-dc-cloud − "
                    "best ASET policy on dc-cloud, pp (and full-edge − dc-cloud):\n")
        text.append("| | " + " | ".join(f"λ {l}" for l in lams) + " |")
        text.append("|---|" + "---|" * len(lams))
        for t in ("co-dc-cloud", "full-edge"):
            if t not in summary:
                continue
            d = []
            for l in lams:
                x, y = cell[(t, l)], cell[("dc-cloud", l)]
                d.append(statistics.mean(col(x, best_static(x)))
                         - statistics.mean(col(y, best_static(y))))
            text.append(f"| {t} − dc-cloud | " + " | ".join(f"{v:+.2f}" for v in d) + " |")
        text.append("")
    # 4–6. The ASET agent against the best ASET policy: gain, mechanism, generalisation.
    text.append("**4–6. The ASET agent (trained at λ 60 only) − best ASET policy**: success, "
                "rejected and answered-late shares, pp (mean ± sd over seeds):\n")
    text.append("| topology | λ | success | rejected | late |")
    text.append("|---|---|---|---|---|")
    for t in topos:
        for l in lams:
            x = cell[(t, l)]
            if not col(x, "aset"):
                continue
            b = best_static(x)
            text.append(f"| {t} | {l} | {pm(diff(x, 'aset', b))} | "
                        f"{pm(diff(x, 'aset', b, 'rejected'))} | "
                        f"{pm(diff(x, 'aset', b, 'failed'))} |")
    return "\n".join(text) + "\n"


def render_headline(summary):
    """The README's row (experiments/headline.py): the focus cell (full-edge λ 60 where the table
    has it) against the best ASET policy, the best heuristic and the bound, then every cell
    against the best heuristic by the verdict rule, worst and best."""
    cells = {f"{t} {x['cell']}": (t, x) for t, rows in summary.items() for x in rows}
    focus = "full-edge λ 60" if "full-edge λ 60" in cells else next(iter(cells))
    t, x = cells[focus]
    dqn, b = col(x, "dqn"), best_static(x)
    r = ref(t, x["load"])
    text = f"{focus}: {pm(dqn)} %; vs best ASET policy ({b}) {refs.versus(dqn, col(x, b))}"
    if r is not None:
        name, h = refs.best_heuristic(r, SEEDS)
        text += (f"; vs best heuristic ({refs.label(name)}) {refs.versus(dqn, h)}; "
                 f"{refs.share(dqn, refs.bound(r, SEEDS))} of the bound")
    against = {}
    for k, (t, x) in cells.items():
        r = ref(t, x["load"])
        if r is not None:
            against[k] = refs.diff(col(x, "dqn"), refs.best_heuristic(r, SEEDS)[1])
    if against:
        text += f". Per cell vs best heuristic: {refs.tally(against)}"
    what = (f"meta-policy `dqn`, {len(summary)} topologies × {len(cells) // len(summary)} loads, "
            f"seeds {refs.seed_range(SEEDS)}")
    return f"{what} | {text}\n"


def main(argv=None):
    """Runs the command line `argv` (default: sys.argv[1:])."""
    global SEEDS, a, out
    argv = sys.argv[1:] if argv is None else argv
    a = parser().parse_args(argv)
    CMD = docgen.command(__file__, argv, drop=("--publish", "--from-json", "--add-references"),
                         drop_valued=("--out", "--bin", "--ray"))
    out = pathlib.Path(a.out)
    (out / "tables").mkdir(parents=True, exist_ok=True)
    SEEDS = a.seeds.split(",")
    if a.from_json:
        summary = docgen.recorded_or_exit(CMD)
    else:
        summary = measure_all()
    stored_refs = references(summary)
    cells_text, summary_text = render_cells(summary), render_summary(summary)
    findings_text = render_findings(summary)
    headline_text = render_headline(summary)
    print(cells_text, end="")
    print(summary_text, end="")
    print(findings_text, end="")
    if a.publish:
        docgen.publish(CMD, {"cells": cells_text, "summary": summary_text,
                             "findings": findings_text, "headline": headline_text},
                       dict(summary, references=stored_refs) if stored_refs else summary)
    if not a.from_json:
        (out / "summary.json").write_text(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
