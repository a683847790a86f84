"""Configuration tuner results (EdgeTuner in continuum): on each topology, load and capacity
scale, the trained tuner(s) against every static configuration of the tuner's own grid (its
action list: each dispatch policy under none, reissue@0.8 and discard@0.9), over evaluation
seeds never used in training or in choosing a fallback table or margin (default 101–105);
every figure is a mean ± sd over the seeds.

  best success  the static configuration with the highest mean success ratio over the seeds
                (ties: lower p99), chosen in hindsight on the evaluation seeds
  lowest p99 within the allowance
                the static configuration with the lowest mean p99 among those whose mean
                success ratio is at most SUCCESS_ALLOWANCE_PP below the best success's
  tuner         models/<topology>-tuner.dqn (per class, per scheduler, 5 s windows), trained
                at capacity ×1 and run under every scale (the stricter protocol: the change is
                hidden from it)
  robust        each --robust checkpoint where it exists (default models/<topology>-tuner-robust.dqn,
                config/dqn-tuner-robust.yaml: every training and selection episode at its own
                capacity drawn from ×0.5 … ×1.5, one checkpoint for every resource level, none
                of them known to it at run time; and -w0.03.dqn, the same with the tail weighed
                0.03)
  retrained     <retrained>/<topology>-tuner-cap<scale>.dqn where it exists: the same
                configuration trained at that scale (`train --capacity-scale`, EdgeTuner's
                protocol: one model per resource level)
  edgetuner     models/<topology>-edgetuner.dqn when it exists (one configuration for all,
                every 10 s)

Each agent is compared three ways, each of which can come out either way:
  vs best success   its success minus that configuration's (pp) and its p99 over that one's
  vs lowest p99     the same against the lowest-p99 configuration within the allowance
  mean p99 change   EdgeTuner's form (its Tables 2–3 average over every baseline): the mean,
                    over every static configuration of the grid, of (agent p99 /
                    configuration p99 − 1), in % (negative: a shorter tail)
and the tail is given three ways: the pooled p99 of answered queries, the mean over jobs of
each job's slowest answer (EdgeTuner's per-job tail; docs/model.md §12), and the p50 over
streams of each stream's slowest answer.

Usage: python3 -m experiments.tuner [--seeds 101,102,103,104,105] [--duration 300]
       [--lambdas 60,100] [--topologies full-edge,co-dc-cloud]
       [--capacity-scales 1,0.5] [--retrained out/tuner-retrained]
       [--reuse] [--publish] [--from-json] [--ray HOST:PORT]
It needs a release build (`cargo build --release`) and the checkpoints (README: `train` with
config/dqn-tuner.yaml), except with --from-json. Prints Markdown tables; every run is a report
of one grid (`continuum sweep`: <out>/sweep; --reuse keeps the cells already there, else they
are run again), here or on a Ray head (--ray). --publish records the output and the results under
docs/generated/ and rewrites the docs' blocks that name this command (experiments/docgen.py);
--from-json prints the tables again from those recorded results without running anything.

Page: docs/tuner.md.
"""
import pathlib
import statistics
import sys

from experiments import cli
from experiments import docgen
from experiments import references as refs
from experiments.cells import cell_key, load_args, load_flags, summary_rows, sweep

# How far below the best success ratio (percentage points) a static configuration may be and
# still count as "as successful" when looking for the shortest tail.
SUCCESS_ALLOWANCE_PP = 0.3


def parser():
    """The command line: experiments/cli.py's shared flags and this module's own."""
    p = cli.parser("seeds", "duration", "diurnal-duration", "bin", "runner", out="out/tuner")
    p.add_argument("--lambdas", default="60,100")
    p.add_argument("--topologies", default="full-edge,co-dc-cloud")
    p.add_argument("--capacity-scales", default="1,0.5")
    p.add_argument("--retrained", default="out/tuner-retrained",
                   help="directory of checkpoints trained at each capacity scale")
    p.add_argument("--robust", default="robust=models/{topology}-tuner-robust.dqn,"
                   "robust-w0.03=models/{topology}-tuner-robust-w0.03.dqn",
                   help="label=path pairs of agents trained across capacities, {topology} replaced")
    p.add_argument("--add-references", action="store_true",
                   help="with --from-json: run the references of the cells experiments/baselines.py's "
                        "table does not have (capacity scales other than 1), and record them")
    return p


def actions():
    """The tuner's action list, read from config/dqn-tuner.yaml (a flow sequence)."""
    text = pathlib.Path("config/dqn-tuner.yaml").read_text()
    body = text.split("actions: [", 1)[1].split("]", 1)[0]
    return [x.strip() for x in body.replace("\n", " ").split(",") if x.strip()]


def agents_of(topology, scale):
    """(label, checkpoint) of every agent row of a cell, where the checkpoint exists."""
    found = [("tuner", pathlib.Path(f"models/{topology}-tuner.dqn"))]
    found += [(label, pathlib.Path(path.format(topology=topology))) for label, path in ROBUST]
    found += [("retrained", pathlib.Path(a.retrained) / f"{topology}-tuner-cap{scale}.dqn"),
              ("edgetuner", pathlib.Path(f"models/{topology}-edgetuner.dqn"))]
    return [(label, m) for label, m in found
            if m.exists() and not (label == "retrained" and float(scale) == 1.0)]


key = cell_key


def mean_rows(per_seed):
    """{name: {success_ratio, p99, job_tail, stream_tail, sd}} of a cell: means over the seeds
    (success ratio in %), with each figure's sd."""
    names = [r["policy"] for r in per_seed[0]]
    out = {}
    for n in names:
        rows = [next(r for r in seed if r["policy"] == n) for seed in per_seed]
        m = {}
        for k, scale in (("success_ratio", 100), ("p99", 1), ("job_tail", 1), ("stream_tail", 1)):
            xs = [scale * r[k] for r in rows if r.get(k) is not None]
            m[k] = statistics.mean(xs) if xs else None
            m[k + "_sd"] = statistics.stdev(xs) if len(xs) > 1 else 0.0
        out[n] = m
    return out


def fmt(r):
    job = "–" if r["job_tail"] is None else f"{r['job_tail']:.0f}"
    return (f"{r['success_ratio']:.2f} ± {r['success_ratio_sd']:.2f} / {r['p99']:.0f} ± "
            f"{r['p99_sd']:.0f} / {job}")


def paired(per_seed, agent, static):
    """Per seed: the success difference agent − static (pp) and the p99 ratio agent / static."""
    d, q = [], []
    for seed in per_seed:
        by = {r["policy"]: r for r in seed}
        d.append(100 * (by[agent]["success_ratio"] - by[static]["success_ratio"]))
        q.append(by[agent]["p99"] / by[static]["p99"])
    return d, q


def vs(per_seed, agent, static):
    """Per seed: success difference (pp) and p99 ratio, as mean ± sd."""
    d, q = paired(per_seed, agent, static)
    sd = lambda xs: statistics.stdev(xs) if len(xs) > 1 else 0.0
    return (f"{statistics.mean(d):+.2f} ± {sd(d):.2f} pp, p99 ×{statistics.mean(q):.3f} ± "
            f"{sd(q):.3f}")


def mean_change(per_seed, agent, statics):
    """EdgeTuner's mean p99 change over every static configuration, averaged over seeds."""
    xs = []
    for seed in per_seed:
        by = {r["policy"]: r for r in seed}
        xs.append(statistics.mean(by[agent]["p99"] / by[s]["p99"] - 1 for s in statics))
    return 100 * statistics.mean(xs)


def best_static(m):
    """The best-success static configuration of a cell's mean rows (ties: lower p99)."""
    statics = [n for n in m if n not in LABELS]
    return max(statics, key=lambda n: (m[n]["success_ratio"], -m[n]["p99"]))


def static_references(m):
    """A cell's static configurations (of its mean rows `m`), the best-success one and the
    lowest-p99 one whose success is within the allowance of it."""
    statics = [n for n in m if n not in LABELS]
    best = best_static(m)
    ok = [n for n in statics if m[best]["success_ratio"] - m[n]["success_ratio"]
          <= SUCCESS_ALLOWANCE_PP + 1e-9]
    tail = min(ok, key=lambda n: (m[n]["p99"], -m[n]["success_ratio"]))
    return statics, best, tail


def robustness():
    """The capacity target, per agent run at every scale: success minus the best-success
    static's (pp, mean over seeds; the target is ≥ −SUCCESS_ALLOWANCE_PP) and, at λ 60, p99
    over that static's (the target is ≤ 1)."""
    scales = a.capacity_scales.split(",")
    out = [f"The capacity target: agent − best-success static, pp (mean over the seeds), and at "
           f"λ 60 the p99 ratio; met where success ≥ best − {SUCCESS_ALLOWANCE_PP} pp (and at λ 60 "
           "p99 ≤ the best's), each by the verdict rule of docs/methodology.md on the per-seed "
           "differences (missed where either is missed, else tie)", ""]
    head = ["topology", "load", "agent"] + [f"×{x}" for x in scales] + ["met"]
    out.append("| " + " | ".join(head) + " |")
    out.append("|" + "---|" * len(head))
    for topology in a.topologies.split(","):
        for load in loads:
            for label in LABELS[:1 + len(ROBUST)]:
                cells, met = [], 0
                for scale in scales:
                    per_seed = results["cells"][key(scale, topology, load)]
                    m = mean_rows(per_seed)
                    if label not in m:
                        cells.append("–")
                        continue
                    word, d, q = capacity_verdict(per_seed, m, label, load)
                    met += word == "met"
                    tail = f", p99 ×{q:.2f}" if load == "60" else ""
                    cells.append(f"{d:+.2f}{tail} {word}")
                if all(c == "–" for c in cells):
                    continue
                out.append(f"| {topology} | {load} | {label} | " + " | ".join(cells) +
                           f" | {met}/{len(scales)} |")
    out.append("")
    return "\n".join(out)


def capacity_verdict(per_seed, m, label, load):
    """The capacity target of one cell by the verdict rule: success ≥ the best-success static
    − SUCCESS_ALLOWANCE_PP and, at λ 60, p99 ≤ its p99; (word, mean pp, mean p99 ratio)."""
    d, q = paired(per_seed, label, best_static(m))
    words = [refs.verdict(d, -SUCCESS_ALLOWANCE_PP)]
    if load == "60":
        words.append(refs.verdict([1 - x for x in q]))
    word = "missed" if "missed" in words else "met" if all(w == "met" for w in words) else "tie"
    return word, statistics.mean(d), statistics.mean(q)


def headline(found):
    """The README's row (experiments/headline.py): the tuner at capacity ×1 (full-edge λ 60 where
    run) against both static references of its page (target p99 ≤ 0.8 × the best-success
    static's, ≤ 1 × the lowest-p99 static's within the allowance), the best heuristic and the
    bound; then the capacity target over the scales, by the verdict rule."""
    scale = "1" if "1" in a.capacity_scales.split(",") else a.capacity_scales.split(",")[0]
    topology = "full-edge" if "full-edge" in a.topologies.split(",") else a.topologies.split(",")[0]
    load = "60" if "60" in loads else loads[0]
    k = key(scale, topology, load)
    per_seed = results["cells"][k]
    m = mean_rows(per_seed)
    _, best, tail = static_references(m)
    d1, q1 = paired(per_seed, "tuner", best)
    d2, q2 = paired(per_seed, "tuner", tail)
    xs = [100 * next(r for r in seed if r["policy"] == "tuner")["success_ratio"] for seed in per_seed]
    h, against, sh = refs.against(found[k], xs, SEEDS)
    text = (f"vs best-success static ({best}): {vs(per_seed, 'tuner', best)}, target p99 ≤ ×0.80: "
            f"{refs.verdict([0.8 - x for x in q1])}; vs lowest-p99 static within "
            f"{SUCCESS_ALLOWANCE_PP} pp ({tail}): {vs(per_seed, 'tuner', tail)}, target p99 ≤ ×1: "
            f"{refs.verdict([1 - x for x in q2])}; vs best heuristic ({h}) {against}; {sh} of the bound")
    scales = a.capacity_scales.split(",")
    if len(scales) > 1:
        words = [capacity_verdict(results["cells"][key(x, topology, load)],
                                  mean_rows(results["cells"][key(x, topology, load)]), "tuner",
                                  load)[0] for x in scales]
        text += (f"; capacity target (success ≥ best-success static − {SUCCESS_ALLOWANCE_PP} pp"
                 f"{' and p99 ≤ its p99' if load == '60' else ''}) at ×{', ×'.join(scales)}: "
                 f"{', '.join(words)}")
    return (f"configuration tuner, {topology} λ {load}, capacity ×{scale}, seeds "
            f"{refs.seed_range(SEEDS)} | {text}\n")


def references():
    """The references of every cell (docs/baselines.md): experiments/baselines.py's recorded table
    at capacity ×1, else recorded with these results, else run (--add-references)."""
    keys = list(results["cells"])

    def base_key(k):
        scale, topology, load = k.split("|")
        return f"{topology}|{load}" if float(scale) == 1.0 else k

    def options(k):
        scale, topology, load = k.split("|") if k.count("|") == 2 else ("1", *k.split("|"))
        o = {"topology": f"topologies/{topology}.yaml", "capacity-scale": scale}
        args = load_args(load, a.duration, a.diurnal_duration)
        for name, v in zip(args[::2], args[1::2]):
            o[name.lstrip("-")] = float(v) if name in ("--lambda", "--duration") else v
        return o

    found, computed = refs.of_cells(
        [base_key(k) for k in keys], SEEDS, results.get("references"), options,
        pathlib.Path(a.out) / "references", a.bin, ray=a.ray,
        compute_missing=a.add_references or not a.from_json)
    if computed:
        results["references"] = dict(results.get("references") or {}, **computed)
    return {k: found[base_key(k)] for k in keys}


def render():
    found = FOUND
    out = []
    for scale in a.capacity_scales.split(","):
        out.append(f"{len(SEEDS)} seeds ({a.seeds}), capacity ×{scale}; success allowance "
                   f"{SUCCESS_ALLOWANCE_PP} pp; cells: success % / pooled p99 ms / mean job "
                   "tail ms (each job's slowest answer), means ± sd over the seeds; best heuristic: "
                   "the best-success rule of docs/baselines.md (every registered policy, no "
                   "mitigation), its success and the bound's share as success %")
        out.append("")
        head = ["topology", "load", "agent", "its success / p99 / job tail", "best success static",
                "agent vs it", f"lowest p99 static within {SUCCESS_ALLOWANCE_PP} pp",
                "agent vs it", "mean p99 change vs every static (EdgeTuner's form)",
                "best heuristic", "agent − best heuristic, pp", "agent, share of bound"]
        out.append("| " + " | ".join(head) + " |")
        out.append("|" + "---|" * len(head))
        for topology in a.topologies.split(","):
            for load in loads:
                per_seed = results["cells"][key(scale, topology, load)]
                m = mean_rows(per_seed)
                statics, best, tail = static_references(m)
                for label in LABELS:
                    if label not in m:
                        continue
                    xs = [100 * next(r for r in seed if r["policy"] == label)["success_ratio"]
                          for seed in per_seed]
                    against = refs.against(found[key(scale, topology, load)], xs, SEEDS)
                    out.append(f"| {topology} | {load} | {label} | {fmt(m[label])} | "
                               f"{best}: {fmt(m[best])} | {vs(per_seed, label, best)} | "
                               f"{tail}: {fmt(m[tail])} | {vs(per_seed, label, tail)} | "
                               f"{mean_change(per_seed, label, statics):+.1f} % over "
                               f"{len(statics)} | " + " | ".join(against) + " |")
        out.append("")
    if len(a.capacity_scales.split(",")) > 1:
        out.append(robustness())
    return "\n".join(out)


def measure():
    """Every run is a report of one grid: (capacity scale, topology) × load × seed, each with
    the agents whose checkpoint exists for that scale and topology; {"cells": {cell: per seed,
    summary rows}}."""
    runs = [(scale, topology, agents_of(topology, scale))
            for scale in a.capacity_scales.split(",") for topology in a.topologies.split(",")]
    grid = {"name": "tuner", "compare": {"configs": ",".join(actions())},
            "axes": [{"cell": [{"name": f"{scale}|{topology}", "capacity-scale": scale,
                                "topology": f"topologies/{topology}.yaml",
                                "agent": [str(m) for _, m in agents]}
                               for scale, topology, agents in runs]},
                     {"load": [load_flags(x, a.duration, a.diurnal_duration) for x in loads]},
                     {"seed": [int(s) for s in SEEDS]}]}
    agents = {f"{scale}|{topology}": found for scale, topology, found in runs}
    results = {"cells": {}}
    for labels, report in sweep(grid, pathlib.Path(a.out) / "sweep", a.bin, ray=a.ray,
                                reuse=a.reuse):
        rows = summary_rows(report["results"])
        for r in rows:
            for label, m in agents[labels["cell"]]:
                if r["policy"] in (f"dqn:{m.stem}", "dqn"):
                    r["policy"] = label
        scale, topology = labels["cell"].split("|")
        results["cells"].setdefault(key(scale, topology, labels["load"]), []).append(rows)
    return results


def main(argv=None):
    """Runs the command line `argv` (default: sys.argv[1:])."""
    global FOUND, LABELS, ROBUST, SEEDS, a, loads, results
    argv = sys.argv[1:] if argv is None else argv
    a = parser().parse_args(argv)
    CMD = docgen.command(__file__, argv,
                         drop=("--publish", "--from-json", "--add-references", "--reuse"),
                         drop_valued=("--out", "--bin", "--retrained", "--ray"))
    SEEDS = a.seeds.split(",")
    ROBUST = [tuple(x.split("=", 1)) for x in a.robust.split(",") if x]
    loads = a.lambdas.split(",") + ["diurnal"]
    results = docgen.recorded_or_exit(CMD) if a.from_json else measure()
    LABELS = ("tuner", *(label for label, _ in ROBUST), "retrained", "edgetuner")
    FOUND = references()
    text = render()
    print(text, end="")
    if a.publish:
        docgen.publish(CMD, {None: text, "headline": headline(FOUND)}, results)


if __name__ == "__main__":
    main()
