"""The topology-free learned default: one meta-policy checkpoint (--agent, models/universal.dqn by
default) run with no training on networks it never saw (zero-shot), per cell (topology ×
workload) over the evaluation seeds (default 101–105), beside what each network has now:

  universal (zero-shot)  the checkpoint, run here (`compare --agent`, no static row); a path with
                         {topology} in it is formatted per topology (a plumbing test: with
                         'models/{topology}-heuristics.dqn' the column equals the next one)
  per-network default    `dqn:heuristics`, models/<topology>-heuristics.dqn trained on that very
                         network: READ from experiments/generalisation.py's records
                         (RECORDS: docs/meta-results.md's claim data G, H, AB, GN, G50, GG),
                         never run here
  best heuristic         the best of every registered rule by mean over the seeds, with the
                         share of the offline bound where recorded (docs/baselines.md): READ
                         from the recorded references (experiments/references.py: the baselines
                         table, then any module's recorded references on these seeds or on a
                         superset of them); a cell without them is named on standard error and
                         left n/a, unless --add-references runs them (every rule and the bound
                         via references.compute: minutes per overloaded cell on 2 cores;
                         REFERENCES_BOUND=0 runs the rules only, in seconds)
  --adapted name=path    further checkpoints (a path with {topology}), each a column and its
                         difference against the per-network default (target: ≥ it − 0.3 pp)

Differences are per seed, pp: mean ± sd, the verdict of docs/methodology.md's rule
(experiments/references.py `versus`) and min … max. The summary counts the cells above / tie /
below the best heuristic and the targets ≥ best heuristic − 0.3 pp and ≥ per-network default −
0.3 pp (met / missed / tie by the same rule, `references.tally`), and, by mean alone, how many
cells reach each. A workload is a number (the default workload at that λ), `diurnal`
(workloads/diurnal.yaml, one 600 s period) or a file (e.g. workloads/heldout/*.yaml, classes no
checkpoint knows: there the per-network default is recorded only on full-edge, co-dc-cloud and
dc-cloud, and the references only where a module recorded them), as in
experiments/generalisation.py.

Usage: python3 -m experiments.universal [--agent models/universal.dqn]
       [--topologies full-edge,co-dc-cloud,dc-cloud,imported/abilene,...]
       [--workloads 20,60,100,diurnal,workloads/heldout/a.yaml,...] [--adapted name=path,...]
       [--seeds 101,102,103,104,105] [--duration 300] [--out out/universal] [--reuse]
       [--add-references] [--publish] [--from-json]
It needs a release build and the checkpoint, except with --from-json. --reuse keeps the runs
already under --out; --publish records the output and the results under docs/generated/ and
rewrites the docs' blocks that name this command; --from-json prints the tables again from those
recorded results (with --add-references it runs the missing references first).

Page: docs/meta-results.md.
"""
import json
import pathlib
import statistics
import sys

from experiments import cli
from experiments import docgen
from experiments import references as refs
from experiments.cells import pm, success_grid
from experiments.generalisation import label, workload_flags

# The allowance of the targets: within this many pp below the reference holds.
ALLOWANCE_PP = 0.3
TARGET = ("met", "missed", "tie")

TOPOLOGIES = ("full-edge,co-dc-cloud,dc-cloud,imported/abilene,imported/geant2012,"
              "imported/germany50,generated/gen-metro,generated/gen-sparse,generated/gen-wide")
WORKLOADS = "20,60,100,diurnal"

# The per-network default: the `heuristics` agent (models/<topology>-heuristics.dqn) of
# experiments/generalisation.py's recorded runs (all on seeds 101–105), first found first.
DEFAULT_ROW = "dqn:heuristics"
DEFAULT_SEEDS = ["101", "102", "103", "104", "105"]
RECORDED_DURATION = 300.0  # of every λ cell and held-out workload of RECORDS and the references
_AGENTS = "'heuristics=models/{topology}-heuristics.dqn,shipped=models/{topology}.dqn'"
RECORDS = [
    # G: the three topologies at λ 20…100 and diurnal
    "experiments.generalisation --topologies full-edge,co-dc-cloud,dc-cloud --workloads "
    f"20,40,60,80,100,diurnal --agents {_AGENTS}",
    # H: the three topologies on the held-out workloads (workloads/heldout/*.yaml)
    f"experiments.generalisation --topologies full-edge,co-dc-cloud,dc-cloud --agents {_AGENTS}",
    # AB, G50, GG: the imported networks
    "experiments.generalisation --topologies imported/abilene --workloads 20,60,100,diurnal "
    f"--agents {_AGENTS}",
    "experiments.generalisation --topologies imported/germany50 --workloads 20,60,100,diurnal "
    f"--agents {_AGENTS}",
    "experiments.generalisation --topologies imported/geant2012 --workloads 20,60,100,diurnal "
    f"--agents {_AGENTS}",
    # GN: the generated networks
    "experiments.generalisation --topologies generated/gen-metro,generated/gen-sparse,"
    "generated/gen-wide --workloads 20,60,100,diurnal --agents "
    "'heuristics=models/{topology}-heuristics.dqn'",
]
UNIVERSAL = "universal"


def parser():
    """The command line: experiments/cli.py's shared flags and this module's own."""
    p = cli.parser("seeds", "duration", "bin", "runner", out="out/universal",
                   description="the topology-free learned default, zero-shot")
    p.add_argument("--agent", default="models/universal.dqn",
                   help="the checkpoint run zero-shot ({topology} replaced, for tests)")
    p.add_argument("--adapted", default="",
                   help="name=path pairs of adapted checkpoints, {topology} replaced in each path")
    p.add_argument("--topologies", default=TOPOLOGIES)
    p.add_argument("--workloads", default=WORKLOADS)
    p.add_argument("--add-references", action="store_true",
                   help="run the references (every rule and the bound) of the cells none was "
                        "recorded for, and record them with the results")
    return p


def parse(argv):
    """The arguments of `argv`, with the command a block names (`cmd`) and the lists they
    give."""
    a = parser().parse_args(argv)
    a.cmd = docgen.command(__file__, argv,
                           drop=("--publish", "--from-json", "--reuse", "--add-references"),
                           drop_valued=("--out", "--bin", "--ray"))
    a.seed_list = a.seeds.split(",")
    a.topo_list = a.topologies.split(",")
    a.work_list = a.workloads.split(",")
    a.agents = [(UNIVERSAL, a.agent)] + [tuple(x.split("=", 1))
                                          for x in a.adapted.split(",") if x]
    return a


def keys(a):
    return [f"{t}|{w}" for t in a.topo_list for w in a.work_list]


def measure(a):
    """Per cell and seed: success % of each agent ({name: %}), every run a report of one grid
    (cells named by index: topology and workload names hold `/`)."""
    cells, names = {}, {}
    for i, key in enumerate(keys(a)):
        topo, w = key.split("|", 1)
        cks = [path.format(topology=topo) for _, path in a.agents]
        stems = [pathlib.Path(c).stem for c in cks]
        if len(set(stems)) < len(stems):
            sys.exit(f"universal: the checkpoints of {topo} share a file name ({', '.join(cks)}): "
                     "their rows would share a name")
        cells[f"c{i}"] = dict(workload_flags(w, a.duration), topology=f"topologies/{topo}.yaml",
                              agent=cks)
        names[f"c{i}"] = (key, stems)
    got = success_grid("universal", cells, a.seed_list, pathlib.Path(a.out) / "sweep", a.bin,
                       ray=a.ray, reuse=a.reuse)
    out = {}
    for c, seeds in got.items():
        key, stems = names[c]
        rows = []
        for r in seeds:
            row = {}
            for (agent, _), stem in zip(a.agents, stems):
                x = r.get(f"dqn:{stem}") or r.get("dqn")
                row[agent] = x["success"]
            rows.append(row)
        out[key] = rows
    return {k: out[k] for k in keys(a)}


def per_network(a, cells):
    """{cell: {seed: success %}} of the per-network default on `cells` where a record in
    RECORDS has every seed of --seeds (the first that does), and the record it came from."""
    found = {}
    if a.duration != RECORDED_DURATION:
        print(f"universal: the per-network default is recorded on {RECORDED_DURATION:.0f} s runs "
              f"only, not {a.duration:g} s: n/a", file=sys.stderr)
        return found
    for cmd in RECORDS:
        r = docgen.load_results(cmd)
        if r is None:
            continue
        for k in cells:
            if k in found or not isinstance(r.get(k), list):
                continue
            by_seed = dict(zip(DEFAULT_SEEDS, r[k]))
            if all(s in by_seed and DEFAULT_ROW in by_seed[s] for s in a.seed_list):
                found[k] = {"record": cmd,
                            "seeds": {s: by_seed[s][DEFAULT_ROW] for s in a.seed_list}}
    return found


def covering(cells, seeds):
    """The recorded references of `cells` on a superset of `seeds` (a test on fewer seeds):
    experiments/baselines.py's tables, then any module's recorded references, first found
    first; the best heuristic is then chosen by mean over `seeds` alone."""
    found = {}
    paths = [docgen.results_path(refs.BASELINES)] + sorted(docgen.GENERATED.glob("*.json"))
    for path in paths:
        if not path.exists():
            continue
        try:
            r = json.loads(path.read_text())
        except ValueError:
            continue
        if not isinstance(r, dict):
            continue
        for stored in (r.get("cells"), r.get("references")):
            if not isinstance(stored, dict):
                continue
            for k in cells:
                c = stored.get(k)
                if k in found or not isinstance(c, dict) or not isinstance(c.get("rows"), dict):
                    continue
                rows = {n: v for n, v in c["rows"].items() if "|" in n}
                if rows and all(str(s) in v for v in rows.values() for s in seeds):
                    found[k] = {"rows": rows, "bound": c.get("bound", {})}
    return found


def with_references(a, results):
    """The results with every cell's references: recorded on --seeds (references.of_cells),
    else recorded on more seeds, else — with --add-references — run now and kept with the
    results; {cell: references or None}."""
    cells = keys(a)
    stored = results.get("references")
    if a.duration != RECORDED_DURATION:
        print(f"universal: the recorded references are of {RECORDED_DURATION:.0f} s runs; these "
              f"are {a.duration:g} s", file=sys.stderr)
    found, _ = refs.of_cells(cells, a.seed_list, stored, None, None, a.bin)
    missing = [k for k in cells if found[k] is None]
    found.update(covering(missing, a.seed_list))
    missing = [k for k in cells if found[k] is None]
    if missing and a.add_references:
        more, computed = refs.of_cells(
            missing, a.seed_list, stored,
            lambda k: dict(workload_flags(k.split("|", 1)[1], a.duration),
                           topology=f"topologies/{k.split('|', 1)[0]}.yaml"),
            pathlib.Path(a.out) / "references", a.bin, ray=a.ray, compute_missing=True)
        found.update(more)
        if computed:
            results["references"] = dict(stored or {}, **computed)
    return found


def with_per_network(a, results):
    """The per-network default of every cell: as recorded with the results, else read now from
    RECORDS (and kept with the results)."""
    have = dict(results.get("per-network") or {})
    fresh = per_network(a, [k for k in keys(a) if k not in have])
    if fresh:
        have.update(fresh)
        results["per-network"] = have
    return {k: [have[k]["seeds"][s] for s in a.seed_list] if k in have else None
            for k in keys(a)}


def spread(xs, ys):
    """xs − ys per seed: mean ± sd (verdict), min … max."""
    d = refs.diff(xs, ys)
    return f"{refs.versus(xs, ys)}, {min(d):+.2f} … {max(d):+.2f}"


def cell_name(key):
    topo, w = key.split("|", 1)
    return f"{topo} {label(w)}"


def compared(a, results):
    """Per cell: the agents' series, the per-network default's and the best heuristic's (name,
    series, bound), None where not recorded."""
    found = with_references(a, results)
    default = with_per_network(a, results)
    out = {}
    for k in keys(a):
        row = {"agents": {n: [x[n] for x in results[k]] for n, _ in a.agents},
               "default": default[k], "heuristic": None, "bound": None}
        if found.get(k) is not None:
            name, h = refs.best_heuristic(found[k], a.seed_list)
            row["heuristic"] = (refs.label(name), h)
            row["bound"] = refs.bound(found[k], a.seed_list)
        out[k] = row
    return out


def missing_note(cells):
    """The cells without a per-network default or references, named (also on standard
    error)."""
    lines = []
    no_default = [cell_name(k) for k, c in cells.items() if c["default"] is None]
    no_refs = [cell_name(k) for k, c in cells.items() if c["heuristic"] is None]
    if no_default:
        lines.append(f"- no recorded per-network default (n/a): {', '.join(no_default)}")
    if no_refs:
        lines.append(f"- no recorded references (n/a; --add-references runs them): "
                     f"{', '.join(no_refs)}")
    for l in lines:
        print(f"universal: {l[2:]}", file=sys.stderr)
    return lines


def summary(diffs, target_words=False):
    """One tally phrase over cells ({name: per-seed differences}), or n/a without cells."""
    if not diffs:
        return "n/a (no cell has it recorded)"
    if target_words:
        means = sum(statistics.mean(d) >= -ALLOWANCE_PP for d in diffs.values())
        return (f"{refs.tally(diffs, -ALLOWANCE_PP, TARGET)} (by mean alone {means} of "
                f"{len(diffs)})")
    return refs.tally(diffs)


def text(a, results):
    cells = compared(a, results)
    adapted = [n for n, _ in a.agents[1:]]
    lines = [f"{len(a.seed_list)} seeds ({a.seeds}), {a.duration:.0f} s runs (diurnal 600 s); "
             "success %, mean ± sd; differences per seed, pp: mean ± sd (verdict of "
             "docs/methodology.md), min … max. universal: `" + a.agent + "` with no training on "
             "the network (zero-shot); per-network default: models/<topology>-heuristics.dqn, "
             "trained on that network (recorded by experiments.generalisation); best heuristic: "
             "of every registered rule by mean over the seeds (docs/baselines.md), with its share "
             "of the offline bound where recorded; n/a: not recorded.\n"]
    head = ["topology", "workload", "universal (zero-shot)", "per-network default",
            "best heuristic", "universal − best heuristic", "universal − per-network default"]
    for n in adapted:
        head += [n, f"{n} − per-network default"]
    head.append("universal, share of bound")
    lines.append("| " + " | ".join(head) + " |")
    lines.append("|" + "---|" * len(head))
    for k, c in cells.items():
        topo, w = k.split("|", 1)
        u = c["agents"][UNIVERSAL]
        d, h = c["default"], c["heuristic"]
        hb = "n/a"
        if h is not None:
            hb = f"{h[0]} {pm(h[1])}"
            if c["bound"] is not None:
                hb += f" ({refs.share(h[1], c['bound'])} of bound)"
        row = [topo, label(w), pm(u), pm(d) if d else "n/a", hb,
               spread(u, h[1]) if h else "n/a", spread(u, d) if d else "n/a"]
        for n in adapted:
            x = c["agents"][n]
            row += [pm(x), spread(x, d) if d else "n/a"]
        row.append(refs.share(u, c["bound"]) if c["bound"] is not None else "n/a")
        lines.append("| " + " | ".join(row) + " |")
    vs_rule = {cell_name(k): refs.diff(c["agents"][UNIVERSAL], c["heuristic"][1])
               for k, c in cells.items() if c["heuristic"] is not None}
    vs_default = {cell_name(k): refs.diff(c["agents"][UNIVERSAL], c["default"])
                  for k, c in cells.items() if c["default"] is not None}
    lines += ["", f"Over the {len(cells)} cells (verdicts by docs/methodology.md's rule; a target "
              f"is met when mean − 2·SE ≥ −{ALLOWANCE_PP} pp):", "",
              f"- universal against the best heuristic: {summary(vs_rule)}",
              f"- universal ≥ best heuristic − {ALLOWANCE_PP} pp (the target, every cell): "
              f"{summary(vs_rule, True)}",
              f"- universal ≥ per-network default − {ALLOWANCE_PP} pp: "
              f"{summary(vs_default, True)}"]
    for n in adapted:
        vs = {cell_name(k): refs.diff(c["agents"][n], c["default"])
              for k, c in cells.items() if c["default"] is not None}
        lines.append(f"- {n} ≥ per-network default − {ALLOWANCE_PP} pp (the target of an adapted "
                     f"checkpoint): {summary(vs, True)}")
    lines += missing_note(cells)
    return "\n".join(lines)


def headline(a, results):
    """The README's row (experiments/headline.py): the zero-shot checkpoint in every cell against
    the best heuristic − ALLOWANCE_PP (the target), against the best heuristic, and against the
    per-network default − ALLOWANCE_PP, by the verdict rule of docs/methodology.md."""
    cells = compared(a, results)
    vs_rule = {cell_name(k): refs.diff(c["agents"][UNIVERSAL], c["heuristic"][1])
               for k, c in cells.items() if c["heuristic"] is not None}
    vs_default = {cell_name(k): refs.diff(c["agents"][UNIVERSAL], c["default"])
                  for k, c in cells.items() if c["default"] is not None}
    n, m = len(a.topo_list), len(a.work_list)
    what = (f"one meta-policy `{a.agent}` zero-shot on {n} network{'s' * (n > 1)} × {m} "
            f"workload{'s' * (m > 1)}, seeds {refs.seed_range(a.seed_list)}")
    result = f"vs best heuristic − {ALLOWANCE_PP} pp: "
    result += (refs.tally(vs_rule, -ALLOWANCE_PP, TARGET) if vs_rule else "n/a")
    if vs_rule:
        above = sum(refs.verdict(d, 0.0, refs.COMPARED) == "above" for d in vs_rule.values())
        result += f"; above the best heuristic in {above} of {len(vs_rule)}"
    if vs_default:
        # Counts only: the extremes are in the page's summary (the README has little room).
        result += (f"; vs per-network default − {ALLOWANCE_PP} pp: "
                   f"{refs.tally(vs_default, -ALLOWANCE_PP, TARGET).split(';')[0]}")
    return f"{what} | {result}\n"


def main(argv=None):
    a = parse(sys.argv[1:] if argv is None else argv)
    results = docgen.recorded_or_exit(a.cmd) if a.from_json else measure(a)
    rendered = text(a, results)
    print(rendered)
    if a.publish:
        docgen.publish(a.cmd, {None: rendered, "headline": headline(a, results)}, results)


if __name__ == "__main__":
    main()
