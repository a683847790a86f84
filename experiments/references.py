"""The three references every results table names per cell (docs/baselines.md,
docs/methodology.md): the best ASET policy (ASET's seven and `random`), the best heuristic (every
registered rule without own-binding accounting and under `window`), each chosen by mean over the evaluation seeds,
and the offline upper bound of each run (docs/model.md §16).

A cell is one setting of `compare` (topology, load, duration, capacity scale, …) run on each
seed. `compute` runs the references of any cells as one grid (`continuum sweep`): every rule
under `off`, `publication` and `window`, and the bound. `recorded` reads those of
experiments/baselines.py's table (the three topologies at λ 20…100 and diurnal, seeds 101–105),
so that tables on the same cells need not run them again.

REFERENCES_BOUND=0 in the environment runs computed references without the bound (its LPs take
minutes per overloaded run on 2 cores; the rules take seconds): those cells then show no share
of the bound, and a later run without it adds the bound to them.
"""
import hashlib
import json
import math
import os
import statistics
import subprocess

from experiments import docgen
from experiments.cells import sweep

MODES = ["off", "publication", "window"]
WITH_BOUND = os.environ.get("REFERENCES_BOUND", "1") != "0"
ASET = ["closest", "load-balancing", "farthest", "cheaper", "random-proportional-latency",
        "random-proportional-load", "least-impedance", "random"]
BASELINES = "experiments.baselines --part table"


def registry(binary):
    """Every registered policy, in the registry's order, read from the binary's answer to an
    unknown name."""
    r = subprocess.run([binary, "compare", "topologies/full-edge.yaml", "--policies", "?"],
                       capture_output=True, text=True)
    known = r.stderr.split("known policies: ", 1)[1].split(", and `choices:", 1)[0]
    return [n.strip() for n in known.split(",")]


def mode_axis(rules):
    """The accounting axis of a references grid: every rule under each mode."""
    return [{"name": m, "own-bindings": m, "policies": ",".join(rules)} for m in MODES]


def file_report(refs, key, seed, mode, report):
    """Files a references report (mode `mode`, seed `seed`) under cell `key` of `refs`:
    {key: {"rows": {"rule|mode": {seed: success %}}, "bound": {seed: %}}}."""
    cell = refs.setdefault(key, {"rows": {}, "bound": {}})
    b = report.get("bound")
    if b:
        cell["bound"][str(seed)] = 100 * b["success_ratio"]
    for row in report["results"]:
        cell["rows"].setdefault(f"{row['policy']}|{mode}", {})[str(seed)] = \
            100 * row["success_ratio"]


def compute(cells, seeds, out, binary, ray=None, modes=None, with_bound=WITH_BOUND):
    """The references of `cells` ({key: compare options}) on `seeds`, as one grid under `out`:
    every rule under each of `modes` (default: every mode) and, `with_bound`, the bound."""
    rules = registry(binary)
    axis = [m for m in mode_axis(rules) if modes is None or m["name"] in modes]
    if with_bound:
        axis[0]["bound"] = True  # it does not depend on the mode: with the first
    keys = list(cells)  # grid labels must be file-name safe: cells are named by their index
    grid = {"name": "references",
            "axes": [{"cell": [dict(cells[k], name=f"c{i}") for i, k in enumerate(keys)]},
                     {"seed": [int(s) for s in seeds]}, {"mode": axis}]}
    refs = {}
    for labels, r in sweep(grid, out, binary, ray=ray):
        key = keys[int(labels["cell"][1:])]
        file_report(refs, key, labels["seed"], labels["mode"], r)
    return refs


def recorded(seeds, required=True):
    """The references of experiments/baselines.py's recorded table, keyed `topology|load`: the
    default table (seeds 101–105), else any other recorded run of it on exactly `seeds` (e.g.
    `--seeds 106,107,108,109,110 --loads 60`). When none was run on these seeds: exits if
    `required`, else returns {}."""
    import sys
    want = sorted(str(s) for s in seeds)
    found = None
    for path in [docgen.results_path(BASELINES)] + sorted(
            docgen.GENERATED.glob("baselines--part-table-*.json")):
        if not path.exists():
            continue
        r = json.loads(path.read_text())
        if sorted(next(iter(r["cells"].values()))["bound"]) == want:
            found = r
            break
    if found is None:
        if not required:
            return {}
        sys.exit(f"no recorded run of `{BASELINES}` on seeds {want}: run it with --seeds and "
                 "--publish first")
    return {k: {"rows": {n: v for n, v in c["rows"].items() if "|" in n},
                "bound": c["bound"]} for k, c in found["cells"].items()}


def series(ref, name, seeds):
    return [ref["rows"][name][str(s)] for s in seeds]


def best(ref, names, seeds):
    """The name among `names` with the best mean over `seeds`, and its per-seed values."""
    top = max(names, key=lambda n: (statistics.mean(series(ref, n, seeds)), n))
    return top, series(ref, top, seeds)


def best_aset(ref, seeds, mode="off"):
    return best(ref, [f"{r}|{mode}" for r in ASET], seeds)


def best_heuristic(ref, seeds):
    names = [n for n in ref["rows"] if "|" in n]
    return best(ref, names, seeds)


def bound(ref, seeds):
    """The bound per seed, or None where the references were run without it."""
    if any(str(s) not in ref["bound"] for s in seeds):
        return None
    return [ref["bound"][str(s)] for s in seeds]


def label(name):
    """`headroom|window` → `headroom (window)`; a rule without accounting keeps its name (a
    name without a mode is returned as it is)."""
    if "|" not in name:
        return name
    rule, mode = name.split("|")
    return rule if mode == "off" else f"{rule} ({mode})"


def verdict(d, target=0.0, words=("met", "missed", "tie")):
    """The one verdict rule of docs/methodology.md for paired per-seed differences `d` against a
    target: with SE = sd(d)/√n, words[0] ("met") if mean(d) − 2·SE ≥ target, words[1]
    ("missed") if mean(d) + 2·SE < target, words[2] ("tie") otherwise. Against no target
    (`COMPARED`), "above" needs mean(d) − 2·SE > 0."""
    m = statistics.mean(d)
    se = (statistics.stdev(d) if len(d) > 1 else 0.0) / math.sqrt(len(d))
    lo = m - 2 * se
    first = lo > target if words == COMPARED else lo >= target
    return words[0] if first else words[1] if m + 2 * se < target else words[2]


COMPARED = ("above", "below", "tie")


def versus(xs, ys):
    """mean ± sd of the per-seed differences xs − ys and the verdict of docs/methodology.md:
    `above` / `below` when the mean is more than two standard errors from zero, else `tie`."""
    d = [x - y for x, y in zip(xs, ys)]
    sd = statistics.stdev(d) if len(d) > 1 else 0.0
    return f"{statistics.mean(d):+.2f} ± {sd:.2f} ({verdict(d, 0.0, COMPARED)})"


def tally(diffs, target=0.0, words=COMPARED):
    """Over cells ({cell name: per-seed differences}): how many are above / below / tie (or
    met / missed / tie against `target`) by the verdict rule, and the worst and best cell by
    mean, as one phrase: `above 2, below 15, tie 1 of 18; lowest dc-cloud λ 60 -5.76 pp,
    highest …`."""
    counts = {w: 0 for w in words}
    for d in diffs.values():
        counts[verdict(d, target, words)] += 1
    order = sorted(diffs, key=lambda k: statistics.mean(diffs[k]))
    parts = ", ".join(f"{w} {counts[w]}" for w in words)

    lo, hi = (statistics.mean(diffs[k]) for k in (order[0], order[-1]))
    return f"{parts} of {len(diffs)}; lowest {order[0]} {lo:+.2f} pp, highest {order[-1]} {hi:+.2f} pp"


def seed_range(seeds):
    """`101–105` for consecutive seeds, else `1, 3, 7`."""
    xs = [int(x) for x in seeds]
    if len(xs) > 2 and xs == list(range(xs[0], xs[-1] + 1)):
        return f"{xs[0]}–{xs[-1]}"
    return ", ".join(str(x) for x in xs)


def diff(xs, ys):
    """Per-seed differences xs − ys."""
    return [x - y for x, y in zip(xs, ys)]


def share(xs, bounds):
    """The mean over seeds of xs / bound, % (`–` without a bound)."""
    if bounds is None:
        return "–"
    return f"{statistics.mean(100 * x / b for x, b in zip(xs, bounds)):.1f} %"


def dump(refs, path):
    path.write_text(json.dumps(refs, indent=1, sort_keys=True) + "\n")


def against(ref, xs, seeds):
    """The three columns a learned row `xs` (per seed) gains against cell references `ref`
    (None: the cell has none): the best heuristic, the row − it (with its verdict), the row's
    share of the bound."""
    if ref is None:
        return "–", "–", "–"
    from experiments.cells import pm
    name, h = best_heuristic(ref, seeds)
    return f"{label(name)} {pm(h)}", versus(xs, h), share(xs, bound(ref, seeds))


def complete(ref, seeds, with_bound):
    """Whether references were run on exactly `seeds` (and with the bound, if `with_bound`)."""
    want = sorted(str(s) for s in seeds)
    have = sorted(next(iter(ref.get("rows", {}).values()), {}))
    return have == want and (not with_bound or sorted(ref.get("bound", {})) == want)


def shared_references(seeds, with_bound):
    """Every cell's references recorded with any script's results (docs/generated/*.json, under
    `references`) on exactly `seeds`, keyed as recorded (`topology|load`: the same compare
    options wherever the key is the same)."""
    out = {}
    for path in sorted(docgen.GENERATED.glob("*.json")):
        try:
            r = json.loads(path.read_text())
        except ValueError:
            continue
        stored = r.get("references") if isinstance(r, dict) else None
        for k, c in (stored or {}).items():
            if isinstance(c, dict) and complete(c, seeds, with_bound):
                out.setdefault(k, c)
    return out


def of_cells(keys, seeds, stored, options, out, binary, ray=None, compute_missing=False,
             modes=("off",), with_bound=None):
    """The references of cells `keys`: experiments/baselines.py's recorded table where it has the
    cell, else `stored` (those a script recorded with its results), else those another script
    recorded under the same key on the same seeds, else — with
    `compute_missing` — run now (every rule under `modes` and the bound; `options(key)` gives a
    cell's compare options), else none; `with_bound` False runs the rules only (default: unless
    REFERENCES_BOUND=0). Returns ({key: references or None}, what was computed)."""
    with_bound = WITH_BOUND if with_bound is None else with_bound
    base = recorded(seeds, required=False)
    # Computing: references without the bound are run again with it (unless REFERENCES_BOUND=0);
    # rendering: whatever was recorded.
    need = compute_missing and with_bound
    shared = shared_references(seeds, need)
    stored = {k: c for k, c in (stored or {}).items() if complete(c, seeds, need)}
    found = {k: base.get(k) or stored.get(k) or shared.get(k) for k in keys}
    missing = [k for k in keys if found[k] is None]
    computed = {}
    if missing and compute_missing:
        # One directory per set of cells: two tables of one script share `out`, and a sweep
        # directory holds one grid.
        tag = hashlib.sha256(json.dumps([missing, [str(s) for s in seeds], with_bound])
                             .encode()).hexdigest()[:12]
        computed = compute({k: options(k) for k in missing}, seeds, out / tag, binary, ray=ray,
                           modes=list(modes), with_bound=with_bound)
        found.update(computed)
    return found, computed
