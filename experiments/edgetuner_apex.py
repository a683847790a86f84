"""EdgeTuner's Ape-X (docs/tuner.md): the actor-scaling figures (the paper's Fig. 15) and its
learners side by side (Fig. 14: IQN, Ape-X, both), on full-edge with `config/edgetuner-k8s.yaml`
(training seed 1, 400 episodes, `--threads` cores).

Scaling: the system agent learnt by the Double DQN with Ape-X at 1, 2, 4 and 8 actors
(`apex: {actors: n}`, the rest Ape-X's printed settings). Per run, from the rounds' log the
binary writes (`<checkpoint>.apex.csv`):
  sampling      the wall-clock seconds of the rounds' actor phases (each from the round's start
                until its last episode is in hand), summed: the time to collect the run's
                transitions; and one actor's own seconds per transition
  training      the wall-clock seconds of the training episodes (validation excluded), and the
                learner's busy share of them
  convergence   every run writes its network every 40 episodes (`--snapshot-every 40`); each
                snapshot is run on the curve seeds (default 201–203, not the evaluation seeds)
                at λ 60; converged: the transitions collected by the first snapshot whose mean
                success comes within 1 pp of the final network's, and the training seconds then
Learners: the Double DQN and the implicit quantile network, each in the one-process loop
(decaying ε, uniform replay; the shipped agent, retrained here with snapshots and checked equal
to models/, and the `iqn` row of experiments.edgetuner_global) and with Ape-X at 8 actors
(EdgeTuner's count). Every final checkpoint is also run on the evaluation seeds at λ 60 and
under the diurnal workload, against `least-allocated` alone (the best single configuration of
experiments.edgetuner_global).

Usage: python3 -m experiments.edgetuner_apex [--actors 1,2,4,8] [--seeds 101,…] [--publish]
       [--from-json] [--reuse]
Needs a release build. Checkpoints missing under <out> are trained first, one at a time (the
timings need a machine doing nothing else).

Page: docs/tuner.md.
"""
import csv
import json
import pathlib
import statistics
import sys

import yaml

from experiments import cli
from experiments import docgen
from experiments.cells import load_flags, pm, run, summary_rows, sweep

CONFIG = "config/edgetuner-k8s.yaml"
BEST = "least-allocated"
SNAPSHOT_EVERY = 40
NEAR_PP = 1.0


def parser():
    """The command line: experiments/cli.py's shared flags and this module's own."""
    p = cli.parser("seeds", "duration", "diurnal-duration", "bin", "threads", "runner",
                   out="out/edgetuner-k8s")
    p.add_argument("--actors", default="1,2,4,8")
    p.add_argument("--curve-seeds", default="201,202,203")
    p.add_argument("--no-curve", default="",
                   help="runs (comma-separated) kept as trained, without snapshots: no convergence")
    p.add_argument("--loads", default="60,diurnal")
    p.add_argument("--topology", default="full-edge")
    p.add_argument("--train-seed", type=int, default=1)
    return p


def runs():
    """(name, learner, actors, checkpoint, overrides of the config; None: shipped as is)."""
    t = a.topology
    out = [("dqn", "Double DQN", 0, OUT / f"{t}-dqn.dqn", {})]
    for n in ACTORS:
        # 8 actors: experiments.edgetuner_global's `apex` row, the same config.
        ck = OUT / (f"{t}-apex.dqn" if n == 8 else f"{t}-apex-{n}.dqn")
        out.append((f"apex-{n}", "Double DQN + Ape-X", n, ck, {"apex": {"actors": n}}))
    out.append(("iqn-apex", "IQN + Ape-X", 8, OUT / f"{t}-iqn-apex.dqn",
                {"algorithm": "iqn", "apex": {"actors": 8}}))
    # Last: the longest training, and no Ape-X.
    out.append(("iqn", "IQN", 0, OUT / f"{t}-iqn.dqn", {"algorithm": "iqn"}))
    return out


def config_name(name):
    return {"apex-8": "apex"}.get(name, name)


def snapshots(ck):
    """The snapshots written beside checkpoint `ck`, by episode."""
    found = {}
    for f in ck.parent.glob(f"{ck.stem}.at-*.dqn"):
        found[int(f.stem.rsplit("-", 1)[1])] = f
    return dict(sorted(found.items()))


def train():
    """Trains every run without its snapshots (one at a time: the timings are figures)."""
    OUT.mkdir(parents=True, exist_ok=True)
    base = yaml.safe_load(pathlib.Path(CONFIG).read_text())
    for name, _, _, ck, over in runs():
        if ck.exists() and (snapshots(ck) or name in NO_CURVE):
            continue
        cfg = OUT / f"{config_name(name)}.yaml"
        cfg.write_text(json.dumps(dict(base, **over), indent=1) + "\n")
        print(f"training {a.topology} {name} …", file=sys.stderr)
        run([a.bin, "train", f"topologies/{a.topology}.yaml", "--config", str(cfg), "--seed",
             str(a.train_seed), "--out", str(ck), "--threads", a.threads, "--quiet",
             "--snapshot-every", str(SNAPSHOT_EVERY)])
    shipped = pathlib.Path(f"models/{a.topology}-edgetuner-k8s.dqn")
    if shipped.exists() and a.train_seed == 1:
        same = shipped.read_bytes() == runs()[0][3].read_bytes()
        print(f"the Double DQN retrained with snapshots {'equals' if same else 'DIFFERS FROM'} "
              f"{shipped}", file=sys.stderr)
        if not same:
            sys.exit(f"{shipped} is not reproduced by its config and seed")


def rows(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def curve_cells():
    """One cell per run: its snapshots and final network at λ 60 on the curve seeds."""
    cells = []
    for name, _, _, ck, _ in runs():
        if name in NO_CURVE:
            continue
        agents = [str(f) for f in snapshots(ck).values()] + [str(ck)]
        cells.append(dict(name=name, topology=f"topologies/{a.topology}.yaml", configs=BEST,
                          agent=agents, **{"lambda": 60.0, "duration": float(a.duration)}))
    return cells


def curves():
    """Per run: [(episodes, mean success % on the curve seeds)] of its snapshots and its final
    network (episodes: the run's total)."""
    grid = {"name": "edgetuner-apex-curves", "compare": {"policies": ""},
            "axes": [{"cell": curve_cells()}, {"seed": [int(x) for x in a.curve_seeds.split(",")]}]}
    got = {}
    for labels, report in sweep(grid, OUT / "sweep-apex-curves", a.bin, ray=a.ray,
                                threads=a.threads, reuse=a.reuse):
        by = {}
        for r in summary_rows(report["results"]):
            if r["policy"].startswith("dqn"):
                by[r["policy"]] = 100 * r["success_ratio"]
        got.setdefault(labels["cell"], []).append(by)
    out = {}
    for name, _, _, ck, _ in runs():
        if name in NO_CURVE:
            continue
        per_seed = got[name]
        points = []
        for ep, f in snapshots(ck).items():
            key = f"dqn:{f.stem}"
            points.append((ep, statistics.mean(s[key] for s in per_seed)))
        final = [v for s in per_seed for k, v in s.items() if k in ("dqn", f"dqn:{ck.stem}")]
        points.append(("final", statistics.mean(final)))
        out[name] = points
    return out


def training_figures(curve):
    warmup = yaml.safe_load(pathlib.Path(CONFIG).read_text())["warmup_windows"]
    out = {}
    for name, _, n, ck, _ in runs():
        stem = ck.with_suffix("")
        log = rows(stem.with_name(stem.name + ".training.csv"))
        counts, total = [], 0
        for r in log:
            total += max(0, int(r["windows"]) - warmup)
            counts.append((total, float(r["wall_s"])))
        f = {"episodes": len(log), "transitions": total, "train_s": float(log[-1]["wall_s"]),
             "curve": curve.get(name)}
        if name in curve:
            final = curve[name][-1][1]
            at = next(ep for ep, v in curve[name] if ep == "final" or v >= final - NEAR_PP)
            conv = counts[-1] if at == "final" else counts[at - 1]
            f.update(converged_at=conv[0], converged_s=conv[1],
                     converged_episode=at if at != "final" else len(log))
        if n:
            rounds = rows(stem.with_name(stem.name + ".apex.csv"))
            tr = sum(int(r["transitions"]) for r in rounds)
            f.update(train_s=float(rounds[-1]["wall_s"]),
                     actor_ms=1e3 * sum(float(r["actor_s"]) for r in rounds) / tr,
                     sampling_s=sum(float(r["sampling_s"]) for r in rounds),
                     learn_s=sum(float(r["learn_s"]) for r in rounds),
                     steps=sum(int(r["gradient_steps"]) for r in rounds))
        out[name] = f
    return out


def measure():
    train()
    cells = [dict(load_flags(load, a.duration, a.diurnal_duration), name=load,
                  topology=f"topologies/{a.topology}.yaml", configs=BEST,
                  agent=[str(ck) for _, _, _, ck, _ in runs()])
             for load in a.loads.split(",")]
    grid = {"name": "edgetuner-apex", "compare": {"policies": ""},
            "axes": [{"cell": cells}, {"seed": [int(s) for s in SEEDS]}]}
    stems = {ck.stem: name for name, _, _, ck, _ in runs()}
    first = runs()[0][0]
    res = {}
    for labels, report in sweep(grid, OUT / "sweep-apex", a.bin, ray=a.ray, threads=a.threads,
                                reuse=a.reuse):
        got = {}
        for r in summary_rows(report["results"]):
            n = r["policy"]
            if n.startswith("dqn"):
                k = n.removeprefix("dqn").removeprefix(":")
                n = stems.get(k, first) if k else first
            got[n] = dict(success=100 * r["success_ratio"], jtl=r["job_tail"])
        res.setdefault(labels["cell"], []).append(got)
    return {"cells": res, "training": training_figures(curves())}


def converged(f, total=False):
    """`transitions / s` at convergence (`transitions (of all) / s` with `total`), or why not."""
    if "converged_at" not in f:
        return "not measured (no snapshots)"
    of = f" ({f['transitions']})" if total else ""
    return f"{f['converged_at']}{of} / {f['converged_s']:.0f}"


def gap(res, load, name):
    """Per-seed success of `name` minus `least-allocated`'s, pp."""
    return [s[name]["success"] - s[BEST]["success"] for s in res["cells"][load]]


def render(res):
    tr = res["training"]
    loads = a.loads.split(",")
    text = [f"{a.topology}, `{CONFIG}`, training seed {a.train_seed} on {a.threads} cores; "
            f"evaluation: {len(SEEDS)} seeds ({a.seeds}), λ 60 for {a.duration:.0f} s and the "
            f"diurnal workload over one {a.diurnal_duration:.0f} s period, success pp against "
            f"`{BEST}` alone (mean ± sd of the per-seed differences). Converged: the transitions "
            f"collected (and the training seconds) by the first snapshot (every "
            f"{SNAPSHOT_EVERY} episodes) whose success on the curve seeds ({a.curve_seeds}, "
            f"λ 60) comes within {NEAR_PP:g} pp of the final network's. Sampling s: the rounds' "
            f"actor phases, summed; learner busy: its gradient steps' share of the training "
            f"seconds.\n",
            "Actor scaling (Double DQN + Ape-X):\n",
            "| actors | sampling s | one actor's ms per transition | training s | learner busy "
            "| gradient steps | converged at: transitions / s | "
            + " | ".join(f"pp vs `{BEST}`, {x}" for x in loads) + " |",
            "|---|---|---|---|---|---|---|" + "---|" * len(loads)]
    for name, _, n, _, _ in runs():
        if not name.startswith("apex-"):
            continue
        f = tr[name]
        text.append(f"| {n} | {f['sampling_s']:.0f} | {f['actor_ms']:.1f} | "
                    f"{f['train_s']:.0f} | {100 * f['learn_s'] / f['train_s']:.0f} % | "
                    f"{f['steps']} | {converged(f)} | "
                    + " | ".join(pm(gap(res, x, name)) for x in loads) + " |")
    text += ["", "Learners (Fig. 14):\n",
             "| learner | actors | training s | converged at: transitions (of all) / s | "
             + " | ".join(f"pp vs `{BEST}`, {x}" for x in loads) + " | JTL ms, "
             + loads[0] + " |",
             "|---|---|---|---|" + "---|" * len(loads) + "---|"]
    for name, learner, n, _, _ in runs():
        if name.startswith("apex-") and n != 8:
            continue
        f = tr[name]
        jtl = [s[name]["jtl"] for s in res["cells"][loads[0]]]
        text.append(f"| {learner} | {n or 'one process'} | {f['train_s']:.0f} | "
                    f"{converged(f, True)} | "
                    + " | ".join(pm(gap(res, x, name)) for x in loads)
                    + f" | {pm(jtl, 1)} |")
    text += ["", f"Learning curves: mean success % of each snapshot on the curve seeds "
             f"({a.curve_seeds}), λ 60, by episodes trained:\n"]
    eps = sorted({ep for f in tr.values() for ep, _ in f["curve"] or [] if ep != "final"})
    text += ["| run | " + " | ".join(str(e) for e in eps) + " | final |",
             "|---|" + "---|" * (len(eps) + 1)]
    for name, _, _, _, _ in runs():
        if not tr[name]["curve"]:
            continue
        c = dict(tr[name]["curve"])
        text.append(f"| {name} | " + " | ".join(f"{c[e]:.2f}" if e in c else "–" for e in eps)
                    + f" | {c['final']:.2f} |")
    return "\n".join(text) + "\n"


def main(argv=None):
    """Runs the command line `argv` (default: sys.argv[1:])."""
    global ACTORS, NO_CURVE, OUT, SEEDS, a
    argv = sys.argv[1:] if argv is None else argv
    a = parser().parse_args(argv)
    CMD = docgen.command(__file__, argv, drop=("--publish", "--from-json", "--reuse"),
                         drop_valued=("--out", "--bin", "--threads", "--ray"))
    SEEDS = a.seeds.split(",")
    OUT = pathlib.Path(a.out)
    ACTORS = [int(x) for x in a.actors.split(",")]
    NO_CURVE = set(filter(None, a.no_curve.split(",")))
    results = docgen.recorded_or_exit(CMD) if a.from_json else measure()
    text = render(results)
    print(text, end="")
    if a.publish:
        docgen.publish(CMD, {None: text}, results)


if __name__ == "__main__":
    main()
