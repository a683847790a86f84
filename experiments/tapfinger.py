"""TapFinger's learned pull dispatch against push dispatch and the pull baselines
(docs/tapfinger.md). Every figure is a mean ± sd over the evaluation seeds (default 101–105,
never used in training: training draws its own episode seeds from `--train-seed`), 300 s runs
(diurnal: one 600 s period).

  cells      every topology of --topologies at each λ of --lambdas and under
             workloads/diurnal.yaml: the TapFinger checkpoint (--checkpoint, trained on
             full-edge only), every static policy (the best one by mean over the seeds is the
             baseline, as ASET's paper picks it), the best static per-class table (chosen by
             `continuum table` on seeds 1, 2), the shipped per-class ASET agent
             (models/<topology>.dqn), greedy and random pull, and the per-window oracle over the
             static policies at --oracle-loads of full-edge: success %, mean and p99 latency of
             answered queries, share of streams refused
  ablation   full-edge at λ 60 and 100: the paper's ablations — without HAN, without the
             pointer, TapFinger's own reward — each trained as the shipped checkpoint is (same
             config but the one field, same episodes and seed; written under --out), and the
             shipped checkpoint with conflicts resolved without Bayes (uniform prior, first
             claim)
  fallback   TapFinger's confidence fallback (`tapfinger[fallback=c]`: an agent whose most
             probable pointer choice is below c claims as `prior-pull`): c chosen on the
             selection seeds 1–5 at full-edge λ 60 from --fallback-grid, then full-edge at each
             λ of --prior-loads on the evaluation seeds against TapFinger, `prior-pull` and
             `headroom`
  prior      full-edge at each λ of --prior-loads: TapFinger against `prior-pull` (eq. 11's
             prior alone settles contested streams: what the learned pointer must beat), the
             other pull baselines and the push rule `headroom` (the prior as a push rule); the
             target TapFinger ≥ prior-pull + 0.5 pp by the verdict rule of docs/methodology.md
  unseen     topologies that are not in the repository (`continuum topology generate` with
             other shapes and seeds) at λ 60 and 100, and workloads/shifting-mix.yaml on
             full-edge: TapFinger against the best ASET policy

Usage: python3 -m experiments.tapfinger [--seeds 101,102,103,104,105]
       [--parts cells,ablation,unseen] [--reuse-runs] [--publish] [--from-json] [--ray HOST:PORT]
It needs a release build and the checkpoint (except with --from-json). The tables and trainings
run here; every compare run is a report of one grid per part (`continuum sweep`:
<out>/<part>-sweep; --reuse-runs keeps the cells already there, else they are run again), here
or on a Ray head (--ray).

Page: docs/tapfinger.md.
"""
import pathlib
import statistics
import sys

from experiments import cli
from experiments import docgen
from experiments import references as refs
from experiments.cells import load_flags, pm, run, success_grid


def parser():
    """The command line: experiments/cli.py's shared flags and this module's own."""
    p = cli.parser("seeds", "duration", "diurnal-duration", "bin", "ray", out="out/tapfinger")
    p.add_argument("--lambdas", default="20,40,60,80,100")
    p.add_argument("--topologies", default="full-edge,co-dc-cloud")
    p.add_argument("--checkpoint", default="models/full-edge-tapfinger.tapfinger")
    p.add_argument("--oracle-loads", default="60")
    p.add_argument("--table-seeds", default="1,2")
    p.add_argument("--parts", default="cells,ablation,unseen")
    p.add_argument("--prior-loads", default="40,60,80")
    p.add_argument("--fallback-grid", default="0.3,0.5,0.7,0.9")
    p.add_argument("--train-seed", default="1")
    p.add_argument("--reuse-runs", action="store_true",
                   help="keep the cells already under <out>/<part>-sweep (else they are run again)")
    p.add_argument("--add-references", action="store_true",
                   help="with --from-json: run the references (every rule and the bound) of the "
                        "cells experiments/baselines.py's table does not have, and record them")
    return p


STATIC = ["closest", "load-balancing", "farthest", "cheaper", "random-proportional-latency",
          "random-proportional-load", "least-impedance", "random"]
ALLOWANCE_PP = 0.3
# Topologies that are not in the repository: other sizes, fan-outs, link delays and seeds.
UNSEEN = {
    "gen-24-3x3": ["--antennas", "24", "--antennas-per-co", "3", "--cos-per-rdc", "3",
                   "--seed", "7"],
    "gen-40-5x2-far": ["--antennas", "40", "--antennas-per-co", "5", "--cos-per-rdc", "2",
                       "--link-ms", "3,10,35", "--seed", "13"],
    "gen-12-2x2-gpu": ["--antennas", "12", "--antennas-per-co", "2", "--cos-per-rdc", "2",
                       "--antenna-gpu-share", "0.9", "--seed", "21"],
}
ABLATIONS = {
    "no-han": ("without HAN (an MLP over each stream's features and its neighbours' means)",
               "han: false"),
    "no-pointer": ("without the pointer (each agent considers its oldest stream only)",
                   "pointer: false"),
    "waiting": ("TapFinger's reward: −(streams left waiting), the refusal term", "reward: waiting"),
    "uniform-prior-retrained": ("conflicts by eq. 11 with a uniform prior, retrained under it",
                                "resolution: uniform_prior"),
    "first-claim-retrained": ("conflicts to the lowest cluster index, retrained under it",
                              "resolution: first_claim"),
}


def compare(part, cells, seeds=None):
    """Every cell of `cells` ({name: compare options}) on each seed (default: the evaluation
    seeds), as one grid under <out>/<part>-sweep."""
    return success_grid(f"tapfinger-{part}", cells, seeds or SEEDS, out / f"{part}-sweep", a.bin,
                        ray=a.ray, reuse=a.reuse_runs)


def load_opts(load, topology="topologies/full-edge.yaml"):
    """The compare options of a load on a topology: a λ, or one period of the diurnal
    workload."""
    o = dict(load_flags(load, a.duration, a.diurnal_duration), topology=topology)
    del o["name"]
    return o


def load_args(load):
    if load == "diurnal":
        return ["--workload", "workloads/diurnal.yaml", "--duration", str(a.diurnal_duration)]
    return ["--lambda", load, "--duration", str(a.duration)]


def table_for(topo, load):
    t = out / "tables" / f"{topo}-{load}.yaml"
    if not t.exists():
        t.parent.mkdir(parents=True, exist_ok=True)
        run([a.bin, "table", f"topologies/{topo}.yaml", *load_args(load), "--seeds",
             a.table_seeds, "--out", str(t)])
    return t


def measure_cells():
    cells, tables = {}, {}
    for topo in a.topologies.split(","):
        for load in a.lambdas.split(",") + ["diurnal"]:
            key = f"{topo}|{load}"
            tables[key] = table_for(topo, load)
            rows = STATIC + [f"per-class:{tables[key]}", "greedy-pull", "random-pull", TF]
            cells[key] = dict(load_opts(load, f"topologies/{topo}.yaml"),
                              policies=",".join(rows), agent=f"models/{topo}.dqn",
                              oracle=topo == "full-edge" and load in a.oracle_loads.split(","))
    res = compare("cells", cells)
    for key, per_seed in res.items():
        for r in per_seed:
            r["table"] = r.pop(f"per-class:{tables[key]}")
            r["aset"] = r.pop("dqn")
            r["tapfinger"] = r.pop(TF)
    return res


def train_ablation(key, override):
    ck = out / f"full-edge-tapfinger-{key}.tapfinger"
    if not ck.exists():
        base = pathlib.Path("config/tapfinger.yaml").read_text()
        field = override.split(":")[0]
        lines = [x for x in base.splitlines() if not x.startswith(field + ":")]
        cfg = out / f"tapfinger-{key}.yaml"
        cfg.write_text("\n".join(lines + [override]) + "\n")
        run([a.bin, "train", "topologies/full-edge.yaml", "--config", str(cfg), "--seed",
             a.train_seed, "--out", str(ck)])
    return ck


def measure_ablation():
    cks = {k: train_ablation(k, v[1]) for k, v in ABLATIONS.items()}
    rows = [TF] + [f"tapfinger:{c}" for c in cks.values()] + [
        f"tapfinger[uniform-prior]:{a.checkpoint}", f"tapfinger[first-claim]:{a.checkpoint}",
        "prior-pull"]
    res = compare("ablation", {lam: dict(load_opts(lam), policies=",".join(rows))
                               for lam in ["60", "100"]})
    for lam, per_seed in res.items():
        for i, r in enumerate(per_seed):
            named = {"shipped": r[TF], "uniform-prior": r[rows[-3]], "first-claim": r[rows[-2]],
                     "prior-pull": r["prior-pull"]}
            for k, c in cks.items():
                named[k] = r[f"tapfinger:{c}"]
            per_seed[i] = named
    return res


def measure_unseen():
    policies = ",".join(STATIC + [TF])
    cells = {}
    for name, gen in UNSEEN.items():
        path = out / f"{name}.yaml"
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            run([a.bin, "topology", "generate", *gen, "--name", name, "--out", str(path)])
        for lam in ["60", "100"]:
            cells[f"{name}|λ {lam}"] = dict(load_opts(lam, str(path)), policies=policies)
    cells["full-edge|shifting-mix"] = {"topology": "topologies/full-edge.yaml",
                                       "workload": "workloads/shifting-mix.yaml",
                                       "duration": a.duration, "policies": policies}
    return {k: [renamed(r) for r in v] for k, v in compare("unseen", cells).items()}


PRIOR_ROWS = ["prior-pull", "greedy-pull", "random-pull", "headroom"]
PRIOR_TARGET_PP = 0.5


def measure_prior():
    res = compare("prior", {load: dict(load_opts(load), policies=",".join(PRIOR_ROWS + [TF]))
                            for load in a.prior_loads.split(",")})
    return {k: [renamed(r) for r in v] for k, v in res.items()}


SELECTION_SEEDS = ["1", "2", "3", "4", "5"]


def fallback_row(c):
    return f"tapfinger[fallback={c}]:{a.checkpoint}"


def measure_fallback():
    grid = a.fallback_grid.split(",")
    rows = [TF] + [fallback_row(c) for c in grid] + ["prior-pull"]
    sel = compare("fallback-select", {"60": dict(load_opts("60"), policies=",".join(rows))},
                  SELECTION_SEEDS)["60"]
    means = {c: sum(r[fallback_row(c)]["success"] for r in sel) / len(sel) for c in grid}
    chosen = max(grid, key=lambda c: (means[c], -float(c)))
    res = {"grid": grid, "selection": {c: [r[fallback_row(c)]["success"] for r in sel]
                                       for c in grid},
           "selection_refs": {n: [r[n]["success"] for r in sel] for n in (TF, "prior-pull")},
           "chosen": chosen, "loads": {}}
    policies = ",".join([TF, fallback_row(chosen), "prior-pull", "headroom"])
    runs = compare("fallback", {load: dict(load_opts(load), policies=policies)
                                for load in a.prior_loads.split(",")})
    for load, per in runs.items():
        for r in per:
            r["fallback"] = r.pop(fallback_row(chosen))
        res["loads"][load] = [renamed(r) for r in per]
    return res


def render_fallback(res):
    mean = lambda v: sum(v) / len(v)
    sel = ", ".join(f"c = {c}: {mean(res['selection'][c]):.2f}" for c in res["grid"])
    text = [f"Selection (full-edge λ 60, seeds {','.join(SELECTION_SEEDS)}, mean success %): "
            f"TapFinger {mean(res['selection_refs'][TF]):.2f}, {sel}, prior pull "
            f"{mean(res['selection_refs']['prior-pull']):.2f}; chosen c = {res['chosen']}.\n",
            f"Evaluation: full-edge, {len(SEEDS)} seeds ({a.seeds}), {a.duration:.0f} s; success "
            "%, mean ± sd; differences paired per seed with the verdict of docs/methodology.md. "
            f"Target: TapFinger ≥ prior-pull + {PRIOR_TARGET_PP} pp.\n",
            f"| load | TapFinger | TapFinger, fallback {res['chosen']} | prior pull | `headroom` | "
            "fallback − prior pull, pp | target | fallback − TapFinger, pp | "
            "fallback − headroom, pp |",
            "|---|---|---|---|---|---|---|---|---|"]
    for load, per in res["loads"].items():
        fb = series(per, "fallback")
        d = diff(per, "fallback", "prior-pull")
        text.append(f"| λ {load} | {pm(series(per, 'tapfinger'))} | {pm(fb)} | "
                    f"{pm(series(per, 'prior-pull'))} | {pm(series(per, 'headroom'))} | {pm(d)} | "
                    f"{refs.verdict(d, PRIOR_TARGET_PP)} | "
                    f"{refs.versus(fb, series(per, 'tapfinger'))} | "
                    f"{refs.versus(fb, series(per, 'headroom'))} |")
    return "\n".join(text) + "\n"


def render_prior(res):
    text = [f"full-edge, {len(SEEDS)} seeds ({a.seeds}), {a.duration:.0f} s; success %, mean ± sd; "
            "differences paired per seed with the verdict of docs/methodology.md. `prior-pull`: "
            "each cluster claims a uniform offer on its least-e2e worker, every claimant with the "
            "same probability, so eq. 11's prior (the copies of the demand a cluster's free "
            "capacity holds) alone settles contested streams. Target: TapFinger ≥ prior-pull + "
            f"{PRIOR_TARGET_PP} pp.\n",
            "| load | TapFinger | prior pull | greedy pull | random pull | `headroom` (push) | "
            "TF − prior pull, pp | target | TF − headroom, pp | prior pull − headroom, pp |",
            "|---|---|---|---|---|---|---|---|---|---|"]
    for load, per_seed in res.items():
        tf = series(per_seed, "tapfinger")
        d = diff(per_seed, "tapfinger", "prior-pull")
        text.append(f"| λ {load} | {pm(tf)} | " + " | ".join(
            pm(series(per_seed, n)) for n in PRIOR_ROWS) + f" | {pm(d)} | "
            f"{refs.verdict(d, PRIOR_TARGET_PP)} | "
            f"{refs.versus(tf, series(per_seed, 'headroom'))} | "
            f"{refs.versus(series(per_seed, 'prior-pull'), series(per_seed, 'headroom'))} |")
    return "\n".join(text) + "\n"


def renamed(r):
    """A run's rows with the checkpoint's row named `tapfinger`."""
    r["tapfinger"] = r.pop(TF)
    return r


def series(per_seed, name, k="success"):
    return [r[name][k] for r in per_seed]


def best_static(per_seed):
    return max(STATIC, key=lambda n: statistics.mean(series(per_seed, n)))


def diff(per_seed, x, y):
    return [r[x]["success"] - r[y]["success"] for r in per_seed]


def ref_of(key):
    return REFS.get(key)


def render_cells(res):
    text = [f"{len(SEEDS)} evaluation seeds ({a.seeds}), {a.duration:.0f} s (diurnal: "
            f"{a.diurnal_duration:.0f} s); success %, mean ± sd. `{a.checkpoint}` was trained on "
            "full-edge only. Best ASET policy: of ASET's seven and `random`; best heuristic: of "
            "every registered rule, without own-binding accounting and under `window` (docs/baselines.md; TapFinger "
            "here runs without accounting); both by mean over these seeds.\n",
            "| topology | load | TapFinger | ASET per-class agent | per-class table | best ASET policy | "
            "greedy pull | random pull | oracle | TF − max(agent, table), pp | TF − best ASET policy, pp "
            "| best heuristic | TF − best heuristic, pp | TF, share of bound |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for key, per_seed in res.items():
        topo, load = key.split("|")
        b = best_static(per_seed)
        ref = max(["aset", "table"], key=lambda n: statistics.mean(series(per_seed, n)))
        oracle = pm(series(per_seed, "oracle")) if "oracle" in per_seed[0] else "—"
        text.append(
            f"| {topo} | {'λ ' + load if load != 'diurnal' else 'diurnal'} | "
            f"{pm(series(per_seed, 'tapfinger'))} | {pm(series(per_seed, 'aset'))} | "
            f"{pm(series(per_seed, 'table'))} | {pm(series(per_seed, b))} ({b}) | "
            f"{pm(series(per_seed, 'greedy-pull'))} | {pm(series(per_seed, 'random-pull'))} | "
            f"{oracle} | {pm(diff(per_seed, 'tapfinger', ref))} | "
            f"{pm(diff(per_seed, 'tapfinger', b))} | "
            + " | ".join(refs.against(ref_of(key), series(per_seed, "tapfinger"), SEEDS)) + " |")
    text += ["", "Latency of answered queries (mean / p99, ms) and streams refused (% of the "
             "queries offered that were rejected), TapFinger against the best ASET policy:\n",
             "| topology | load | TapFinger mean / p99 ms | best ASET policy mean / p99 ms | "
             "TapFinger rejected % | best ASET policy rejected % |", "|---|---|---|---|---|---|"]
    for key, per_seed in res.items():
        topo, load = key.split("|")
        b = best_static(per_seed)
        lat = lambda n: (f"{pm(series(per_seed, n, 'mean'), 1)} / "
                         f"{pm(series(per_seed, n, 'p99'), 0)}")
        text.append(f"| {topo} | {load} | {lat('tapfinger')} | {lat(b)} | "
                    f"{pm(series(per_seed, 'tapfinger', 'rejected'))} | "
                    f"{pm(series(per_seed, b, 'rejected'))} |")
    return "\n".join(text) + "\n"


def render_ablation(res):
    text = [f"full-edge, {len(SEEDS)} seeds ({a.seeds}), {a.duration:.0f} s; success % (and "
            "differences to the shipped checkpoint and to `prior-pull`, pp, paired per seed with "
            "the verdict of docs/methodology.md). Retrained rows: the shipped config with one "
            "field changed, same episodes and training seed.\n",
            "| variant | λ 60 | − shipped, pp | − prior pull, pp | λ 100 | − shipped, pp | "
            "− prior pull, pp |", "|---|---|---|---|---|---|---|"]
    names = {"shipped": "shipped (HAN, pointer, Bayes, success reward)",
             **{k: v[0] for k, v in ABLATIONS.items()},
             "uniform-prior": "shipped checkpoint, conflicts by eq. 11 with a uniform prior",
             "first-claim": "shipped checkpoint, conflicts to the lowest cluster index",
             "prior-pull": "`prior-pull` (eq. 11's prior alone)"}
    for k, label in names.items():
        cells = []
        for lam in ["60", "100"]:
            per_seed = res[lam]
            x = series(per_seed, k)
            cells += [pm(x),
                      "–" if k == "shipped" else refs.versus(x, series(per_seed, "shipped")),
                      "–" if k == "prior-pull" else refs.versus(x, series(per_seed, "prior-pull"))]
        text.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(text) + "\n"


def render_unseen(res):
    text = [f"{len(SEEDS)} seeds ({a.seeds}), {a.duration:.0f} s; the checkpoint trained on "
            "full-edge, run as it is. Target: ≥ best ASET policy − 0.3 pp. Best heuristic: every "
            "registered rule without own-binding accounting (on these topologies the modes were "
            "not run; they move the rules by a tenth of a point on the shipped ones, "
            "docs/baselines.md).\n",
            "| topology | load | TapFinger % | best ASET policy % | TF − best, pp (min … max) | met "
            "| best heuristic | TF − best heuristic, pp | TF, share of bound |",
            "|---|---|---|---|---|---|---|---|---|"]
    for key, per_seed in res.items():
        topo, load = key.split("|")
        b = best_static(per_seed)
        d = diff(per_seed, "tapfinger", b)
        met = refs.verdict(d, -ALLOWANCE_PP)
        text.append(f"| {topo} | {load} | {pm(series(per_seed, 'tapfinger'))} | "
                    f"{pm(series(per_seed, b))} ({b}) | {pm(d)} ({min(d):+.2f} … {max(d):+.2f}) "
                    f"| {met} | "
                    + " | ".join(refs.against(ref_of(key), series(per_seed, "tapfinger"), SEEDS))
                    + " |")
    return "\n".join(text) + "\n"


def render_headline(res):
    """The README's row (experiments/headline.py): full-edge λ 60 against the per-class agent, the
    better of agent and table, the best heuristic and the bound; then every cell against the
    better of agent and table and against the best heuristic, by the verdict rule."""
    cells = res["cells"]
    name = lambda k: f"{k.split('|')[0]} {'λ ' if k.split('|')[1] != 'diurnal' else ''}{k.split('|')[1]}"
    tf = lambda k: series(cells[k], "tapfinger")
    learned = lambda k: max(["aset", "table"], key=lambda n: statistics.mean(series(cells[k], n)))
    focus = "full-edge|60" if "full-edge|60" in cells else next(iter(cells))
    h, vs, sh = refs.against(ref_of(focus), tf(focus), SEEDS)
    vs_learned = {name(k): diff(cells[k], "tapfinger", learned(k)) for k in cells}
    vs_rule = {name(k): refs.diff(tf(k), refs.best_heuristic(ref_of(k), SEEDS)[1])
               for k in cells if ref_of(k) is not None}
    return (f"TapFinger pull dispatch (one checkpoint, trained on full-edge), {len(cells)} cells, "
            f"seeds {refs.seed_range(SEEDS)} | {name(focus)}: "
            f"{pm(tf(focus))} %; vs per-class agent "
            f"{refs.versus(tf(focus), series(cells[focus], 'aset'))}; vs best heuristic ({h}) {vs}; "
            f"{sh} of the bound. Per cell vs max(agent, table): {refs.tally(vs_learned)}; vs best "
            f"heuristic: {refs.tally(vs_rule)}\n")


def ref_options(key):
    """The compare options of a cell of the unseen part (its topology regenerated)."""
    topo, load = key.split("|")
    if load == "shifting-mix":
        return {"topology": "topologies/full-edge.yaml", "workload": "workloads/shifting-mix.yaml",
                "duration": a.duration}
    path = out / f"{topo}.yaml"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        run([a.bin, "topology", "generate", *UNSEEN[topo], "--name", topo, "--out", str(path)])
    return {"topology": str(path), "lambda": float(load.split()[-1]), "duration": a.duration}


def measure(parts):
    """The results of each part of `parts` (a list of --parts names)."""
    out.mkdir(parents=True, exist_ok=True)
    measures = {"cells": measure_cells, "ablation": measure_ablation, "unseen": measure_unseen,
                "prior": measure_prior, "fallback": measure_fallback}
    return {part: run() for part, run in measures.items() if part in parts}


RENDER = {"cells": render_cells, "ablation": render_ablation, "unseen": render_unseen,
          "prior": render_prior, "fallback": render_fallback}


def main(argv=None):
    """Runs the command line `argv` (default: sys.argv[1:])."""
    global REFS, SEEDS, TF, a, out
    argv = sys.argv[1:] if argv is None else argv
    a = parser().parse_args(argv)
    CMD = docgen.command(__file__, argv,
                         drop=("--publish", "--from-json", "--reuse-runs", "--add-references"),
                         drop_valued=("--out", "--bin", "--ray"))
    SEEDS = a.seeds.split(",")
    out = pathlib.Path(a.out)
    TF = f"tapfinger:{a.checkpoint}"
    parts_wanted = a.parts.split(",")
    res = docgen.recorded_or_exit(CMD) if a.from_json else measure(parts_wanted)
    keys = [k for part in ("cells", "unseen") for k in res.get(part, {})]
    REFS, computed = refs.of_cells(keys, SEEDS, res.get("references"), ref_options,
                                   out / "references", a.bin, ray=a.ray,
                                   compute_missing=a.add_references or not a.from_json)
    if computed:
        res["references"] = dict(res.get("references") or {}, **computed)
    parts = {k: RENDER[k](v) for k, v in res.items() if k in RENDER}
    if "cells" in res:
        parts["headline"] = render_headline(res)
    for k, t in parts.items():
        if k != "headline":
            print(t)
    if a.publish:
        docgen.publish(CMD, parts, res)


if __name__ == "__main__":
    main()
