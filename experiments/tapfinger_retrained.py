"""TapFinger retrained with what might lift its learned parts above eq. 11's prior
(docs/tapfinger.md, "Retrained: the reward, the rules' features, longer"): from the shipped
config (`config/tapfinger.yaml`: 40 episodes on full-edge, training seed 1), TapFinger's own
reward (`reward: waiting`), the features the strong rules score (`features: rules`: per worker
and per cluster the copies of the demand their free capacity holds), and both; then the best of
those on the selection seeds trained longer (40 episodes more, twice, each continued from the
last with `--init` on new episodes: training seeds 2, 3).

- **selection**: full-edge λ 60 on the selection seeds 1–5 (never the evaluation seeds): every
  variant as it is (the most probable choice), with the confidence fallback (c from a grid) and
  drawing from its policy, and the chosen one (the best mean; ties to the earlier row, then
  column).
- **evaluation**: the chosen variant on the evaluation seeds, 300 s, at full-edge λ 40, 60 and
  80 against `prior-pull` (target: + 0.5 pp), `headroom` and the shipped checkpoint; and on
  the cells where the shipped checkpoint lost most to the rules (dc-cloud λ 20 and 60,
  co-dc-cloud λ 60) against the best heuristic of experiments/baselines.py's recorded table.

Usage: python3 -m experiments.tapfinger_retrained [--seeds 101,102,103,104,105] [--reuse-runs]
       [--publish] [--from-json] [--ray HOST:PORT]

Trainings are kept under --out and reused when there (each ≈ 10 min on 2 cores; the `waiting`
one is also experiments.tapfinger's ablation row); compare runs are one grid per part
(`continuum sweep`, <out>/retrained-<part>-sweep; --reuse-runs keeps the cells already there).

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
    p = cli.parser("seeds", "duration", "bin", "ray", out="out/tapfinger")
    p.add_argument("--reuse-runs", action="store_true",
                   help="keep the cells already under <out>/retrained-<part>-sweep (else they are run "
                        "again)")
    return p


SELECTION_SEEDS = ["1", "2", "3", "4", "5"]
BASE = "config/tapfinger.yaml"
SHIPPED_CK = "models/full-edge-tapfinger.tapfinger"
# name → (label, the shipped config's fields changed); each trained 40 episodes, seed 1.
VARIANTS = {
    "shipped": ("shipped: continuum's `success` reward, the first feature set", []),
    "waiting": ("TapFinger's reward, −(streams left waiting)", ["reward: waiting"]),
    "rules": ("the rules' features", ["features: rules"]),
    "rules-waiting": ("the rules' features and TapFinger's reward",
                      ["features: rules", "reward: waiting"]),
}
LONGER = [("+40", "2"), ("+80", "3")]
# Run-time settings tried on every variant: the confidence fallback's grid, and drawing from the
# policy as in training instead of the most probable choice.
SETTINGS = ["fallback=0.5", "fallback=0.7", "fallback=0.9", "sample"]
TARGET_PP = 0.5
LOADS = ["40", "60", "80"]
# The cells where the shipped checkpoint was furthest below the best rule (docs/baselines.md).
OTHER = ["dc-cloud|20", "dc-cloud|60", "co-dc-cloud|60"]


def ck(name):
    if name == "shipped":
        return pathlib.Path(SHIPPED_CK)
    return out / f"full-edge-tapfinger-{name}.tapfinger"


def config_of(name):
    fields = VARIANTS[name.split("+")[0]][1]
    keys = [f.split(":")[0] for f in fields]
    lines = [x for x in pathlib.Path(BASE).read_text().splitlines()
             if x.split(":")[0] not in keys]
    cfg = out / f"tapfinger-{name.split('+')[0]}.yaml"
    cfg.write_text("\n".join(lines + fields) + "\n")
    return cfg


def train(name, seed="1", init=None):
    """Trains `name` on full-edge unless its checkpoint is there."""
    if ck(name).exists():
        return
    cmd = [a.bin, "train", "topologies/full-edge.yaml", "--config", config_of(name), "--seed",
           seed, "--out", ck(name), "--quiet"]
    if init:
        cmd += ["--init", ck(init)]
    run(cmd)


def row(name, c=None):
    return f"tapfinger[{c}]:{ck(name)}" if c else f"tapfinger:{ck(name)}"


def variant(name, c=None):
    return f"{name}, {c}" if c else name


def opts(key):
    topo, load = key.split("|")
    o = dict(load_flags(load, a.duration, a.duration), topology=f"topologies/{topo}.yaml")
    del o["name"]
    return o


def compare(part, cells, seeds, names):
    res = success_grid(f"tapfinger-retrained-{part}", cells, seeds,
                       out / f"retrained-{part}-sweep", a.bin, ray=a.ray, reuse=a.reuse_runs)
    return {k: [{names.get(n, n): v for n, v in r.items()} for r in per]
            for k, per in res.items()}


def mean(xs):
    return statistics.mean(xs)


def signed(d):
    """`+m ± sd` of per-seed differences."""
    return f"{mean(d):+.2f} ± {statistics.stdev(d) if len(d) > 1 else 0.0:.2f}"


def series(per_seed, name, k="success"):
    return [r[name][k] for r in per_seed]


def split(per_seed, name):
    """Mean shares of the offered queries refused at binding and dropped at a worker."""
    return (f"{mean(series(per_seed, name, 'at_binding')):.2f} / "
            f"{mean(series(per_seed, name, 'at_worker')):.2f}")


def select(part, names):
    """The selection runs of `names`, each as it is and under every run-time setting."""
    rows = {row(n, c): variant(n, c) for n in names for c in [None] + SETTINGS}
    cells = {"full-edge|60": dict(opts("full-edge|60"),
                                  policies=",".join(list(rows) + ["prior-pull", "headroom"]))}
    return compare(part, cells, SELECTION_SEEDS, rows)["full-edge|60"]


def best(sel, candidates):
    """The best mean over the selection seeds; ties to the earlier candidate."""
    return max(candidates, key=lambda v: (round(mean(series(sel, v)), 6), -candidates.index(v)))


def measure():
    out.mkdir(parents=True, exist_ok=True)
    for name in VARIANTS:
        train(name)
    first = select("selection-40", list(VARIANTS))
    longest = best(first, list(VARIANTS))
    longer, prev = [], longest
    for suffix, seed in LONGER:
        train(longest + suffix, seed, prev)
        longer.append(longest + suffix)
        prev = longest + suffix
    sel = select("selection", list(VARIANTS) + longer)
    variants = [variant(n, c) for n in list(VARIANTS) + longer for c in [None] + SETTINGS]
    chosen = best(sel, variants)
    stage, _, c = chosen.partition(", ")
    eval_rows = {row(stage, c or None): chosen}
    eval_rows.setdefault(row(stage), stage)
    eval_rows.setdefault(row("shipped"), "shipped")
    policies = ",".join(list(eval_rows) + ["prior-pull", "headroom"])
    cells = {k: dict(opts(k), policies=policies) for k in [f"full-edge|{x}" for x in LOADS] + OTHER}
    ev = compare("evaluation", cells, SEEDS, eval_rows)
    return {"selection": sel, "variants": variants, "longer_from": longest, "longer": longer,
            "chosen": chosen, "evaluation": ev}


def render_selection(res):
    sel = res["selection"]
    text = [f"full-edge λ 60, selection seeds {','.join(SELECTION_SEEDS)}, {a.duration:.0f} s; "
            "mean success % over the seeds, and the paired difference of the most probable choice "
            "to `prior-pull` (mean ± sd, verdict). Each variant: the shipped config with the fields named changed, 40 "
            "episodes from training seed 1; the best of them trained 40 episodes more, twice "
            "(`--init`, training seeds 2 and 3). References: `prior-pull` "
            f"{mean(series(sel, 'prior-pull')):.2f} (refused / dropped {split(sel, 'prior-pull')}), "
            f"`headroom` {mean(series(sel, 'headroom')):.2f} ({split(sel, 'headroom')}).\n",
            "| variant | episodes | most probable | "
            + " | ".join(f"`{c}`" for c in SETTINGS) + " | most probable − prior pull, pp | "
            "most probable: refused at binding / dropped at a worker, % |",
            "|---|---|---|" + "---|" * len(SETTINGS) + "---|---|"]
    for name in list(VARIANTS) + res["longer"]:
        base, _, more = name.partition("+")
        label = VARIANTS[base][0] + (f", then {more} episodes" if more else "")
        episodes = 40 + int(more or 0)
        cols = [f"{mean(series(sel, variant(name, c))):.2f}" for c in [None] + SETTINGS]
        text.append(f"| {label} | {episodes} | " + " | ".join(cols) + " | "
                    f"{refs.versus(series(sel, name), series(sel, 'prior-pull'))} | "
                    f"{split(sel, name)} |")
    text.append(f"\nChosen: `{res['chosen']}` (the best mean; ties to the earlier row, then to "
                "the earlier column).")
    return "\n".join(text) + "\n"


def render_evaluation(res):
    ev, chosen = res["evaluation"], res["chosen"]
    stage = chosen.split(",")[0]
    # The chosen variant's own most probable choice, where it is another row than the shipped.
    plain = stage not in (chosen, "shipped")
    recorded = refs.recorded(SEEDS, required=False)
    text = [f"{len(SEEDS)} evaluation seeds ({a.seeds}), {a.duration:.0f} s; success %, mean ± sd; "
            "differences paired per seed with the verdict of docs/methodology.md. Chosen "
            f"variant: {chosen}. Target at full-edge: ≥ `prior-pull` + {TARGET_PP} pp; "
            "elsewhere ≥ the best heuristic − 0.3 pp (experiments/baselines.py's recorded "
            "table).\n",
            "| cell | retrained | " + (f"{stage}, most probable | " if plain else "")
            + "shipped | prior pull | `headroom` | retrained − prior pull, pp | target | "
            "retrained − shipped, pp | retrained − headroom, pp | best heuristic | "
            "retrained − best heuristic, pp | retrained, share of bound |",
            "|---|---|" + ("---|" if plain else "") + "---|---|---|---|---|---|---|---|---|---|"]
    for key in [f"full-edge|{x}" for x in LOADS] + OTHER:
        per = ev[key]
        topo, load = key.split("|")
        x = series(per, chosen)
        d = refs.diff(x, series(per, "prior-pull"))
        ref = recorded.get(key)
        h, vs, share = refs.against(ref, x, SEEDS)
        if key.startswith("full-edge"):
            target = refs.verdict(d, TARGET_PP)
        elif ref is not None:
            target = refs.verdict(refs.diff(x, refs.best_heuristic(ref, SEEDS)[1]), -0.3)
        else:
            target = "–"
        text.append(f"| {topo} λ {load} | {pm(x)} | "
                    + (f"{pm(series(per, stage))} | " if plain else "")
                    + f"{pm(series(per, 'shipped'))} | {pm(series(per, 'prior-pull'))} | "
                    f"{pm(series(per, 'headroom'))} | {signed(d)} | {target} | "
                    f"{refs.versus(x, series(per, 'shipped'))} | "
                    f"{refs.versus(x, series(per, 'headroom'))} | {h} | {vs} | {share} |")
    return "\n".join(text) + "\n"


def main(argv=None):
    """Runs the command line `argv` (default: sys.argv[1:])."""
    global SEEDS, a, out
    argv = sys.argv[1:] if argv is None else argv
    a = parser().parse_args(argv)
    CMD = docgen.command(__file__, argv, drop=("--publish", "--from-json", "--reuse-runs"),
                         drop_valued=("--out", "--bin", "--ray"))
    SEEDS = a.seeds.split(",")
    out = pathlib.Path(a.out)
    res = docgen.recorded_or_exit(CMD) if a.from_json else measure()
    parts = {"selection": render_selection(res), "evaluation": render_evaluation(res)}
    for t in parts.values():
        print(t)
    if a.publish:
        docgen.publish(CMD, parts, res)


if __name__ == "__main__":
    main()
