"""The DeepRM reproduction as the authors run it (docs/deeprm.md): M = 10 visible job slots (their
experiment mains' `num_nw`), training episodes that end when every job is done (the paper's §3
and the public code's `pg_re`), the authors' baselines (Tetris, Tetris★ = `tetris-sjf` with its
knob tuned on training-seed jobsets, SJF, their Random over all M + 1 actions) and the
fitting-only random kept as `random-fit`. Every figure is a mean ± sd over the held-out
evaluation seeds (default 101–105, 20 jobsets each, run until every job is done); training
draws its jobsets and rollouts from --train-seed only.

  reproduction  one plain-REINFORCE agent per load of --train-loads (trained per setting, as
                the paper does) on fresh jobsets every iteration, keeping its best validated
                iteration, and the heuristics at every load of --loads: average slowdown vs
                load, the share of jobs with slowdown <= 2 and <= 1.5, the slowdown CDF at
                --cdf-load, and each agent's learning curve with where it flattens. Two
                variants: the same agents taking their most likely action (greedy), and agents
                on --more-jobsets fresh jobsets per iteration at --more-jobsets-loads
  fixed         the earlier reading, kept as an ablation: the agents on 10 fixed training
                jobsets (best validated iteration and last iterate) per load of --train-loads,
                on fresh jobsets at --resample-loads, the --cdf-load agent trained
                --long-iterations and from --replicate-seeds
  ablation      at --ablation-load, every variant on all-done episodes: plain, + entropy bonus,
                + normalised advantages, + masked invalid actions (= improved), + learned
                critic; plain on episodes that end with the jobset; plain after imitating SJF
                for --imitate-epochs epochs (the public code's supervised pre-training)
  objectives    at --ablation-load, one plain agent per reward objective (slowdown, completion
                and makespan on all-done episodes; utilisation on fixed-length episodes that
                end with the jobset, where its return is not a constant), each measured on
                every objective
  meta          Reptile meta-trained over loads 0.3-1.8 and short-job shares 0.5-0.95; on 5
                held-out tasks (drawn from the evaluation seeds): adaptation from the
                meta-initialisation, from the agent trained at --ablation-load (transfer) and
                from scratch for --adapt-iterations, and scratch given the meta-training's
                rollouts too; figures: the adaptation curve and, per held-out task, every
                start after adaptation beside Tetris, Tetris*, SJF and random
  share         the assignment's second ask: agents on fresh jobsets rewarded for the jobs
                whose slowdown exceeds 2 (--share-objectives) at --share-loads, against the
                reproduction's agent and the heuristics on the share of jobs with slowdown <= 2

Usage: python3 -m experiments.deeprm [--parts reproduction,fixed,ablation,objectives,meta,share]
       [--publish] [--from-json] [--reuse-checkpoints]

Page: docs/deeprm.md.
"""
import json
import math
import os
import pathlib
import random
import re
import statistics
import sys

from experiments import cli
from experiments import docgen
from experiments import references as refs
from experiments.cells import pm, run, timed
from experiments.deeprm_figures import adaptation_svg, bars_svg, copy_to_docs, curve, mean_curve


def parser():
    """The command line: experiments/cli.py's shared flags and this module's own."""
    p = cli.parser("seeds", "bin", out="out/deeprm")
    p.add_argument("--jobsets", default="20")
    p.add_argument("--slots", default="10", help="visible job slots M (the authors' mains: 10)")
    p.add_argument("--loads", default="0.1,0.3,0.5,0.7,0.9,1.1,1.3,1.5,1.7,1.8")
    p.add_argument("--train-loads", default="0.3,0.7,1.1,1.5,1.8")
    p.add_argument("--fixed-loads", default="0.3,0.7,1.1,1.5,1.8",
                   help="training loads of the earlier reading on 10 fixed jobsets (`fixed`)")
    p.add_argument("--iterations", default="600")
    p.add_argument("--cdf-load", default="1.5")
    p.add_argument("--long-iterations", default="1500",
                   help="the agent at --cdf-load is also trained this long (the budget study)")
    p.add_argument("--replicate-seeds", default="2,3",
                   help="the agent at --cdf-load is also trained from these training seeds")
    p.add_argument("--resample-loads", default="0.3,0.7",
                   help="loads where an agent is also trained on fresh jobsets every iteration")
    p.add_argument("--more-jobsets", default="50",
                   help="fresh jobsets per iteration of the variant at --more-jobsets-loads")
    p.add_argument("--more-jobsets-loads", default="0.3")
    p.add_argument("--more-jobsets-iterations", default="200")
    p.add_argument("--share-loads", default="1.1",
                   help="loads of the agents trained for the share of jobs with slowdown <= 2")
    p.add_argument("--share-objectives", default="within-2,within-2-slowdown")
    p.add_argument("--ablation-load", default="1.1")
    p.add_argument("--ablation-iterations", default="300")
    p.add_argument("--imitate-epochs", default="100")
    p.add_argument("--train-jobsets", default="10")
    p.add_argument("--meta-iterations", default="50")
    p.add_argument("--adapt-iterations", default="50")
    p.add_argument("--train-seed", default="1")
    p.add_argument("--parts", default="reproduction,fixed,ablation,objectives,meta,share")
    p.add_argument("--reuse-checkpoints", action="store_true",
                   help="keep a checkpoint already in --out instead of training it again")
    return p


DEFAULT_CMD = "experiments.deeprm"
DOCS = docgen.ROOT / "docs"
HEUR = ["tetris", "tetris-sjf", "sjf", "random", "random-fit"]
OBJECTIVES = ["slowdown", "completion", "utilisation", "makespan"]
VARIANTS = ["plain", "entropy", "normalised", "masked", "critic"]
ROLLOUTS = 20  # per jobset: the public code's and `deeprm train`'s default


def train(name, *extra, iterations=None, config=None, seed=None, jobsets=None):
    """Trains `name` (skipped with --reuse-checkpoints when it exists) from --train-seed or
    `seed`; returns its checkpoint."""
    ck = out / f"{name}.deeprm"
    if a.reuse_checkpoints and ck.exists() and ck.with_suffix(".training.csv").exists():
        return ck
    args = [a.bin, "deeprm", "train", "--config", str(config or ENV), "--jobsets",
            jobsets or a.train_jobsets, "--seed", seed or a.train_seed, "--out", str(ck),
            "--iterations", iterations or a.iterations] + list(extra)
    err = timed(args)[1]
    ck.with_suffix(".stderr.txt").write_text(err)
    return ck


def evaluate(agents, loads, extra=()):
    js = out / f"eval-{os.getpid()}.json"
    args = [a.bin, "deeprm", "eval", "--loads", loads, "--seeds", a.seeds, "--jobsets",
            a.jobsets, "--slots", a.slots, "--tetris-sjf-knob", "auto", "--tune-seed",
            a.train_seed, "--json", str(js)] + list(extra)
    for spec in agents:
        args += ["--agent", spec]
    run(args)
    return json.loads(js.read_text())


def cell(report, name, load, key="mean_slowdown"):
    return [r["figures"][key] for r in report["rows"]
            if r["scheduler"] == name and abs(r["load"] - load) < 1e-9]


def flattens(points):
    """The first validated iteration from which the validation slowdown (a running mean of 5
    points) improves by less than 5 % until the end, and whether that is within the last sixth
    of the run (still falling)."""
    vals = [v for _, v, _ in points]
    smooth = [statistics.mean(vals[max(0, i - 2):i + 3]) for i in range(len(vals))]
    for i, s in enumerate(smooth):
        if min(smooth[i:]) >= 0.95 * s:
            it = points[i][0]
            return it, it > points[-1][0] * 5 / 6
    return points[-1][0], True


def alldone(load, iterations=None):
    return train(f"alldone-load{load}", "--load", load, "--end", "all-done", iterations=iterations)


def best(load, iterations=None, suffix="", seed=None):
    """The agent at `load` whose weights are those of its best validated iteration (the
    training's own validation jobsets: early stopping)."""
    return train(f"best-load{load}{suffix}", "--load", load, "--end", "all-done", "--keep-best",
                 iterations=iterations, seed=seed)


LAST = "deeprm, last iterate"
FRESH = "deeprm, fresh jobsets"
GREEDY = "deeprm, greedy"


def resample_config():
    cfg = out / f"m{a.slots}-resample.yaml"
    cfg.write_text(f"env:\n  num_nw: {a.slots}\nresample: true\n")
    return cfg


def fresh(load, jobsets=None, objective=None, iterations=None):
    """As `best`, on fresh training jobsets every iteration (the public code keeps the same
    ones): `jobsets` of them (default --train-jobsets) for `iterations` (default
    --iterations), rewarded for `objective` (default the paper's slowdown); the validated
    iteration kept is the best for that objective."""
    name = (f"{objective}-" if objective else "") + "fresh" + (
        f"{jobsets}x{iterations}" if jobsets else "") + f"-load{load}"
    extra = ["--objective", objective] if objective else []
    return train(name, "--load", load, "--end", "all-done", "--keep-best", *extra,
                 config=resample_config(), jobsets=jobsets, iterations=iterations)


def reproduction():
    """The reproduction: `deeprm` on fresh jobsets every iteration at each training load."""
    loads = a.train_loads.split(",")
    more = [l for l in a.more_jobsets_loads.split(",") if l]
    agents = [f"deeprm@{l}={fresh(l)}" for l in loads]
    agents += [f"{MORE}@{l}={fresh(l, a.more_jobsets, iterations=a.more_jobsets_iterations)}"
               for l in more]
    rep = evaluate(agents, a.loads, ["--cdf-load", a.cdf_load, "--svg-prefix", str(out / "deeprm")])
    js = out / f"eval-greedy-{os.getpid()}.json"
    run([a.bin, "deeprm", "eval", "--loads", a.train_loads, "--seeds", a.seeds, "--jobsets",
         a.jobsets, "--slots", a.slots, "--greedy", "--json", str(js)]
        + [f"--agent={GREEDY}@{l}={fresh(l)}" for l in loads])
    rep["rows"] += [r for r in json.loads(js.read_text())["rows"] if r["scheduler"] == GREEDY]
    if a.publish and CMD == DEFAULT_CMD:  # the docs' figures are the default run's
        for f in ("load", "cdf", "share"):
            copy_to_docs(out / f"deeprm-{f}.svg", DOCS / f"deeprm-{f}.svg")
        copy_to_docs(out / f"fresh-load{a.cdf_load}.training_curve.svg",
                     DOCS / "deeprm-learning-curve.svg")
    curves = [[l, (out / f"fresh-load{l}.training.csv").read_text()] for l in loads]
    curves += [[f"{l}, {a.more_jobsets} jobsets per iteration",
                fresh(l, a.more_jobsets, iterations=a.more_jobsets_iterations).with_suffix(
                    ".training.csv").read_text()] for l in more]
    return {"report": rep, "curves": curves}


def fixed():
    """The earlier reading (an ablation now): agents on 10 fixed training jobsets."""
    loads = a.fixed_loads.split(",")
    agents = [f"deeprm@{l}={best(l)}" for l in loads]
    agents += [f"{LAST}@{l}={alldone(l)}" for l in loads]
    agents += [f"{FRESH}@{l}={fresh(l)}" for l in a.resample_loads.split(",") if l]
    agents += [f"deeprm, training seed {s}@{a.cdf_load}={best(a.cdf_load, suffix=f'-seed{s}', seed=s)}"
               for s in a.replicate_seeds.split(",") if s]
    long = best(a.cdf_load, a.long_iterations, "-long")
    agents.append(f"{LONG}@{a.cdf_load}={long}")
    rep = evaluate(agents, a.loads, ["--cdf-load", a.cdf_load, "--svg-prefix", str(out / "fixed")])
    # A list, not a dict: the recorded JSON sorts a dict's keys.
    curves = [[l, (out / f"best-load{l}.training.csv").read_text()] for l in loads]
    curves.append([f"{a.cdf_load}, {a.long_iterations} it", long.with_suffix(".training.csv").read_text()])
    return {"report": rep, "curves": curves}


def best_heuristic(rep, load):
    return min(HEUR, key=lambda h: statistics.mean(cell(rep, h, load)))


def reproduction_text(r):
    more = [MORE] if a.more_jobsets_loads else []
    return slowdown_text(r, HEUR + ["deeprm", GREEDY] + more, lambda n: n)


def fixed_label(n):
    """How the earlier reading's rows are named in docs/deeprm.md."""
    return FIXED_LABELS.get(n, n.replace("deeprm, ", "10 fixed jobsets, "))


def fixed_text(r):
    return slowdown_text(r, HEUR + ["deeprm", LAST, FRESH, LONG] + [
        f"deeprm, training seed {s}" for s in a.replicate_seeds.split(",") if s], fixed_label)


def curve_label(l):
    """`0.3` → `load 30%`; `1.5, 1500 it` → `load 150%, 1500 it`."""
    load, _, rest = l.partition(",")
    return f"load {float(load):.0%}" + (f",{rest}" if rest else "")


def slowdown_text(r, names, label):
    """The reproduction's tables: `names`' rows (shown as `label(name)`) of the report `r`."""
    rep = r["report"]
    loads = rep["loads"]
    lines = ["| average slowdown | " + " | ".join(f"load {l:.0%}" for l in loads) + " |",
             "|---|" + "---:|" * len(loads)]
    for n in names:
        cells = [pm(cell(rep, n, l)) if cell(rep, n, l) else "—" for l in loads]
        lines.append(f"| {label(n)} | " + " | ".join(cells) + " |")
    knobs = ", ".join(f"{l:.0%}: {k:g}" for l, k in rep["tetris_sjf_knobs"])
    lines += ["", f"Tetris★'s knob at each load, tuned on seed {rep['tune_seed']}'s jobsets: {knobs}."]
    lines += ["", "The agent against the best heuristic at its load (lowest mean; paired per seed, "
              "heuristic − agent: positive is the agent better):", ""]
    for n in names[len(HEUR):]:
        for l in loads:
            xs = cell(rep, n, l)
            if xs:
                b = best_heuristic(rep, l)
                lines.append(f"- `{label(n)}` at load {l:.0%}: {b} {pm(cell(rep, b, l))}, it {pm(xs)}: "
                             f"{b} − it {refs.versus(cell(rep, b, l), xs)}")
    unf = {n: sum(r["figures"]["unfinished"] for r in rep["rows"] if r["scheduler"] == n)
           for n in names}
    jobs = {n: sum(r["figures"]["jobs"] for r in rep["rows"] if r["scheduler"] == n)
            for n in names}
    lines += ["", "Jobs left unfinished at 1000 steps or dropped, all loads and seeds (an unfinished job "
              "counts with its earliest possible completion): " + ", ".join(
                  f"{label(n)} {unf[n]} of {jobs[n]}" for n in unf)]
    tl = [l for l in loads if cell(rep, "deeprm", l)]
    lines += ["", "Share of jobs with slowdown ≤ 2 / ≤ 1.5 (mean over the seeds), at the agents' loads:", "",
              "| scheduler | " + " | ".join(f"load {l:.0%}" for l in tl) + " |", "|---|" + "---:|" * len(tl)]
    for n in names:
        lines.append(f"| {label(n)} | " + " | ".join(
            f"{100 * statistics.mean(cell(rep, n, l, 'share_slowdown_le2')):.1f} / "
            f"{100 * statistics.mean(cell(rep, n, l, 'share_slowdown_le1_5')):.1f} %"
            if cell(rep, n, l) else "—" for l in tl) + " |")
    lines += ["", f"At load {float(a.cdf_load):.0%}: median and p90 job slowdown (pooled over the seeds' jobs):",
              "", "| scheduler | p50 | p90 |", "|---|---:|---:|"]
    for n in names:
        s = sorted(rep["cdf"].get(n, []))
        if s:
            lines.append(f"| {label(n)} | {s[len(s) // 2]:.2f} | {s[int(0.9 * (len(s) - 1))]:.2f} |")
    lines += ["", "Learning curves (validation jobsets of the training load, mean slowdown), where each "
              "flattens (less than 5 % left to gain) and the training's wall time:", "",
              "| agent | it 0 | it 100 | it 300 | it 590 | last | lowest (kept by `deeprm`) | flattens at | wall time |",
              "|---|---:|---:|---:|---:|---:|---:|---|---:|"]
    for l, text in r["curves"]:
        pts = curve(text)
        at = {i: f"{v:.2f}" for i, v, _ in pts}
        it, falling = flattens(pts)
        low = min(pts, key=lambda x: x[1])[:2]  # the first lowest: what --keep-best keeps
        lines.append(f"| {curve_label(l)} | " + " | ".join(at.get(i, "—") for i in (0, 100, 300, 590))
                     + f" | {pts[-1][1]:.2f} (it {pts[-1][0]}) | {low[1]:.2f} (it {low[0]}) | "
                     f"it {it}{' (still falling)' if falling else ''} | {pts[-1][2]:.0f} s |")
    return "\n".join(lines)


def ablation_agents():
    load, its = a.ablation_load, a.ablation_iterations
    agents = {v: train(f"{v}-alldone-load{load}", "--load", load, "--variant", v, "--end", "all-done",
                       iterations=its) for v in VARIANTS}
    agents["plain, episodes end with the jobset"] = train(
        f"plain-nonewjob-load{load}", "--load", load, "--end", "no-new-job", iterations=its)
    agents[f"plain after {a.imitate_epochs} epochs of SJF imitation"] = train(
        f"imitate-alldone-load{load}", "--load", load, "--end", "all-done", "--imitate-sjf",
        a.imitate_epochs, iterations=its)
    return agents


def ablation():
    agents = ablation_agents()
    rep = evaluate([f"{n}={c}" for n, c in agents.items()], a.ablation_load)
    im = [c for n, c in agents.items() if "imitation" in n][0]
    said = im.with_suffix(".stderr.txt")
    m = re.search(r"SJF's in ([0-9.]+) %", said.read_text()) if said.exists() else None
    return {"report": rep, "names": list(agents), "imitation_agreement": m and float(m.group(1))}


def ablation_text(r):
    rep, l = r["report"], float(a.ablation_load)
    lines = [f"| variant (load {l:.0%}, {a.ablation_iterations} iterations) | mean slowdown | "
             "jobs with slowdown ≤ 2 | unfinished |", "|---|---:|---:|---:|"]
    for n in r["names"] + HEUR:
        lines.append(f"| {n} | {pm(cell(rep, n, l))} | "
                     f"{pm([100 * x for x in cell(rep, n, l, 'share_slowdown_le2')], 1)} % | "
                     f"{sum(cell(rep, n, l, 'unfinished'))} |")
    if r["imitation_agreement"] is not None:
        lines += ["", f"After imitation, before REINFORCE, the policy's most likely action was SJF's "
                      f"in {r['imitation_agreement']:.1f} % of the imitated decisions."]
    return "\n".join(lines)


def objectives():
    load, its = a.ablation_load, a.ablation_iterations
    agents = {"slowdown": train(f"plain-alldone-load{load}", "--load", load, "--variant", "plain",
                                "--end", "all-done", iterations=its)}
    for o in OBJECTIVES[1:]:
        end = "no-new-job" if o == "utilisation" else "all-done"
        agents[o] = train(f"objective-{o}-load{load}", "--load", load, "--objective", o, "--end",
                          end, iterations=its)
    rep = evaluate([f"{o}={c}" for o, c in agents.items()], load,
                   ["--svg-prefix", str(out / "objectives")])
    if a.publish and CMD == DEFAULT_CMD:
        copy_to_docs(out / "objectives-objectives.svg", DOCS / "deeprm-objectives.svg")
    return {"report": rep}


def objectives_text(r):
    rep, l = r["report"], float(a.ablation_load)
    keys = [("mean_slowdown", "mean slowdown ↓", 1), ("mean_completion", "mean completion ↓", 1),
            ("utilisation", "utilisation % ↑", 100), ("makespan", "makespan ↓", 1)]
    lines = [f"| trained for (load {l:.0%}) | " + " | ".join(k[1] for k in keys) + " |",
             "|---|" + "---:|" * len(keys)]
    for n in OBJECTIVES + HEUR:
        lines.append(f"| {n} | " + " | ".join(pm([k[2] * x for x in cell(rep, n, l, k[0])])
                                              for k in keys) + " |")
    return "\n".join(lines)


def held_out_tasks():
    tasks = []
    for s in a.seeds.split(","):
        g = random.Random(int(s))
        load, small = round(g.uniform(0.3, 1.8), 2), round(g.uniform(0.5, 0.95), 2)
        # At most one job per step: the load a rate of 1 offers with this mix (2 resources,
        # mean demand 4.5 of 10 units; short jobs 2 steps on average, long ones 12.5).
        top = 0.45 * (2 * small + 12.5 * (1 - small))
        tasks.append((min(load, int(top * 100) / 100), small))
    return tasks


META = {"tasks": 4, "inner_steps": 5, "jobsets": 4}  # per meta-iteration (meta.yaml below)


def meta():
    meta_cfg = out / "meta.yaml"
    meta_cfg.write_text(
        f"base: {{env: {{num_nw: {a.slots}}}, end: all-done, jobsets: {META['jobsets']}, "
        f"rollouts: {ROLLOUTS}, resample: true, eval_every: 0}}\n"
        f"tasks: {META['tasks']}\ninner_steps: {META['inner_steps']}\n")
    init = out / "meta-reptile.deeprm"
    if not (a.reuse_checkpoints and init.exists()):
        run([a.bin, "deeprm", "meta-train", "--config", str(meta_cfg), "--method", "reptile",
             "--meta-iterations", a.meta_iterations, "--seed", a.train_seed, "--out", str(init)])
    meta_rollouts = (int(a.meta_iterations) * META["tasks"] * META["inner_steps"]
                     * META["jobsets"] * ROLLOUTS)
    tasks = held_out_tasks()
    per_iteration = int(a.train_jobsets) * ROLLOUTS
    extra = math.ceil(meta_rollouts / len(tasks) / per_iteration)
    n = int(a.adapt_iterations)
    transfer = alldone(a.ablation_load)
    res = []
    for k, (load, small) in enumerate(tasks):
        cfg = out / f"task{k}.yaml"
        cfg.write_text(f"env:\n  num_nw: {a.slots}\n  small_job_chance: {small}\neval_every: 5\n")
        common = ["--load", str(load), "--end", "all-done"]
        runs = {"meta, 0 it": init, "transfer, 0 it": transfer}
        runs[f"meta, {n} it"] = train(f"task{k}-meta", *common, "--init", str(init),
                                       iterations=str(n), config=cfg)
        runs[f"transfer, {n} it"] = train(f"task{k}-transfer", *common, "--init", str(transfer),
                                           iterations=str(n), config=cfg)
        runs[f"scratch, {n} it"] = train(f"task{k}-scratch", *common, iterations=str(n), config=cfg)
        runs[f"scratch, {n + extra} it"] = train(f"task{k}-scratch-long", *common,
                                                 iterations=str(n + extra), config=cfg)
        rep = evaluate([f"{name}={c}" for name, c in runs.items()], str(load),
                       ["--small-job-chance", str(small)])
        curves = {s: (out / f"task{k}-{s}.training.csv").read_text()
                  for s in ("meta", "transfer", "scratch-long")}
        res.append({"load": load, "small": small, "report": rep, "curves": curves,
                    "names": list(runs)})
    return {"tasks": res, "meta_rollouts": meta_rollouts, "extra_iterations": extra,
            "meta_log": (out / "meta-reptile.meta.csv").read_text()}


def meta_figures(r):
    """The meta part's figures, from its results (measured or recorded): the adaptation curve,
    and per held-out task every start after adaptation beside the heuristics (mean slowdown
    ± sd over the seeds)."""
    n, res = int(a.adapt_iterations), r["tasks"]
    adaptation_svg(res, n, r["extra_iterations"], out / "deeprm-adaptation.svg")
    starts = [(f"meta, {n} it", f"meta (Reptile), {n} it"), (f"transfer, {n} it", f"transfer, {n} it"),
              (f"scratch, {n} it", f"scratch, {n} it"),
              (f"scratch, {n + r['extra_iterations']} it",
               f"scratch, {n + r['extra_iterations']} it")]
    rules = [("tetris", "Tetris"), ("tetris-sjf", "Tetris★"), ("sjf", "SJF"), ("random", "random")]
    series = [(label, [cell(t["report"], name, t["report"]["loads"][0]) for t in res])
              for name, label in starts + rules]
    groups = [f"load {t['load']:.0%}\nshort jobs {t['small']:.0%}" for t in res]
    bars_svg(f"{len(res)} held-out tasks: the starts after adaptation and the heuristics",
             "mean slowdown (lower is better)", groups, series, out / "deeprm-meta-tasks.svg")
    if a.publish and CMD == DEFAULT_CMD:
        for f in ("adaptation", "meta-tasks"):
            copy_to_docs(out / f"deeprm-{f}.svg", DOCS / f"deeprm-{f}.svg")


def meta_text(r):
    n, extra = int(a.adapt_iterations), r["extra_iterations"]
    heads = r["tasks"][0]["names"]
    rules = ["tetris", "tetris-sjf", "sjf", "random"]
    lines = ["| held-out task (load, short jobs) | " + " | ".join(heads + rules) + " |",
             "|---|" + "---:|" * (len(heads) + len(rules))]
    for t in r["tasks"]:
        rep = t["report"]
        l = rep["loads"][0]
        lines.append(f"| {t['load']:.0%}, {t['small']:.0%} | "
                     + " | ".join(pm(cell(rep, x, l)) for x in heads + rules) + " |")
    lines += ["", "Paired per seed (other − meta: positive is the meta start better after adaptation):", ""]
    for t in r["tasks"]:
        rep = t["report"]
        l = rep["loads"][0]
        m = cell(rep, f"meta, {n} it", l)
        lines.append(f"- {t['load']:.0%}, {t['small']:.0%}: " + "; ".join(
            f"{o} − meta {refs.versus(cell(rep, o, l), m)}"
            for o in (f"transfer, {n} it", f"scratch, {n} it", f"scratch, {n + extra} it",
                      best_heuristic(rep, l))))
    lines += ["", f"Meta-training used {r['meta_rollouts']} rollouts, {extra} iterations' worth "
                  f"({int(a.train_jobsets)} jobsets × {ROLLOUTS} rollouts) per held-out task: "
                  f"`scratch, {n + extra} it` is scratch given them too."]
    mean = {s: dict(mean_curve(r["tasks"], s)) for s in ("meta", "transfer", "scratch-long")}
    its = [i for i in (0, 10, 25, 45) if all(i in m for m in mean.values())]
    lines += ["", "Validation slowdown, mean over the tasks, after each number of adaptation iterations:", "",
              "| start | " + " | ".join(f"it {i + 1}" for i in its) + " |", "|---|" + "---:|" * len(its)]
    for s, name in (("meta", "meta (Reptile)"), ("transfer", "transfer"), ("scratch-long", "scratch")):
        lines.append(f"| {name} | " + " | ".join(f"{mean[s][i]:.2f}" for i in its) + " |")
    return "\n".join(lines)


SHARE_RULES = ["tetris-sjf", "sjf", "tetris", "random"]


def share():
    """Ask 2: agents rewarded for the jobs whose slowdown exceeds 2, at --share-loads, trained as
    the reproduction's `deeprm` (fresh jobsets, the best validated iteration for their own
    objective), measured with it and the heuristics."""
    loads = a.share_loads.split(",")
    agents = [f"deeprm@{l}={fresh(l)}" for l in loads]
    for o in a.share_objectives.split(","):
        agents += [f"deeprm, {o}@{l}={fresh(l, objective=o)}" for l in loads]
    return {"report": evaluate(agents, a.share_loads), "objectives": a.share_objectives.split(",")}


def share_of(rep, n, l):
    return [100 * x for x in cell(rep, n, l, "share_slowdown_le2")]


def share_figures(r):
    rep = r["report"]
    names = ["deeprm"] + [f"deeprm, {o}" for o in r["objectives"]] + SHARE_RULES
    label = {"deeprm": "deeprm (slowdown reward)", "tetris-sjf": "Tetris★", "sjf": "SJF",
             "tetris": "Tetris", "random": "random"}
    series = [(label.get(n, n.replace("deeprm, ", "deeprm (") + " reward)"),
               [share_of(rep, n, l) for l in rep["loads"]]) for n in names]
    bars_svg("Jobs with slowdown ≤ 2, by training objective", "share of jobs with slowdown ≤ 2 (%)",
             [f"load {l:.0%}" for l in rep["loads"]], series, out / "deeprm-within-2.svg")
    if a.publish and CMD == DEFAULT_CMD:
        copy_to_docs(out / "deeprm-within-2.svg", DOCS / "deeprm-within-2.svg")


def share_text(r):
    rep = r["report"]
    names = ["deeprm"] + [f"deeprm, {o}" for o in r["objectives"]]
    lines = ["| scheduler | " + " | ".join(f"load {l:.0%}: slowdown ≤ 2 | load {l:.0%}: mean slowdown"
                                         for l in rep["loads"]) + " |",
             "|---|" + "---:|---:|" * len(rep["loads"])]
    for n in names + HEUR:
        lines.append(f"| {n} | " + " | ".join(f"{pm(share_of(rep, n, l), 1)} % | {pm(cell(rep, n, l))}"
                                              for l in rep["loads"]) + " |")
    lines += ["", "Share of jobs with slowdown ≤ 2, paired per seed (agent − other, percentage points; "
                  "the best heuristic is the one with the highest mean share at the load):", ""]
    for l in rep["loads"]:
        best_h = max(HEUR, key=lambda h: statistics.mean(share_of(rep, h, l)))
        for n in names[1:]:
            xs = share_of(rep, n, l)
            lines.append(f"- load {l:.0%}, `{n}`: − `deeprm` {refs.versus(xs, share_of(rep, 'deeprm', l))}; "
                         f"− {best_h} {refs.versus(xs, share_of(rep, best_h, l))}; mean slowdown − "
                         f"`deeprm` {refs.versus(cell(rep, n, l), cell(rep, 'deeprm', l))}")
    return "\n".join(lines)


def headline(results):
    """The README's row (experiments/headline.py): the agent against the best heuristic at
    --cdf-load and at the lowest training load, paired per seed (heuristic − agent: positive is
    the agent better), by the verdict rule of docs/methodology.md; with the meta part, how the
    adapted meta start fares against transfer."""
    rep = results["reproduction"]["report"]
    seeds = a.seeds.split(",")
    items = []
    for l in (float(a.cdf_load), min(float(x) for x in a.train_loads.split(","))):
        xs = cell(rep, "deeprm", l)
        b = best_heuristic(rep, l)
        items.append(f"load {l:.0%}: `deeprm` {pm(xs)}, {b} {pm(cell(rep, b, l))}: "
                     f"{b} − it {refs.versus(cell(rep, b, l), xs)}")
    if "meta" in results:
        n = int(a.adapt_iterations)
        verdicts = []
        for t in results["meta"]["tasks"]:
            r, l = t["report"], t["report"]["loads"][0]
            d = refs.diff(cell(r, f"transfer, {n} it", l), cell(r, f"meta, {n} it", l))
            verdicts.append(refs.verdict(d, 0.0, refs.COMPARED))
        below = sum(v == "below" for v in verdicts)
        items.append(f"meta start adapted {n} it: below transfer on {below} of {len(verdicts)} tasks")
    return (f"DeepRM as printed (M = {a.slots}, all-done episodes), mean slowdown, seeds "
            f"{refs.seed_range(seeds)} | " + "; ".join(items) + "\n")


PARTS = {"reproduction": (reproduction, reproduction_text), "fixed": (fixed, fixed_text),
         "ablation": (ablation, ablation_text), "objectives": (objectives, objectives_text),
         "meta": (meta, meta_text), "share": (share, share_text)}
FIGURES = {"meta": meta_figures, "share": share_figures}


def main(argv=None):
    """Runs the command line `argv` (default: sys.argv[1:])."""
    global CMD, ENV, FIXED_LABELS, LONG, MORE, a, out
    argv = sys.argv[1:] if argv is None else argv
    a = parser().parse_args(argv)
    # --parts chooses what runs, not what a part prints: every part is recorded under one command.
    CMD = docgen.command(__file__, argv, drop=("--publish", "--from-json", "--reuse-checkpoints"),
                         drop_valued=("--out", "--bin", "--parts"))
    out = pathlib.Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    ENV = out / f"m{a.slots}.yaml"
    ENV.write_text(f"env:\n  num_nw: {a.slots}\n")
    LONG = f"deeprm, {a.long_iterations} it"
    MORE = f"deeprm, {a.more_jobsets} jobsets per iteration, {a.more_jobsets_iterations} it"
    # The earlier reading's rows (`fixed`), as docs/deeprm.md labels them: its `deeprm` agents
    # trained on 10 fixed jobsets.
    FIXED_LABELS = {"deeprm": "10 fixed jobsets", LAST: "10 fixed jobsets, last iterate",
                    FRESH: "fresh jobsets (the reproduction's `deeprm`)", LONG: f"10 fixed jobsets, {a.long_iterations} it"}
    # Parts not run keep their recorded results, so publishing some parts keeps the others.
    results = (docgen.load_results(CMD) or {}) if a.publish and CMD == DEFAULT_CMD else {}
    if a.from_json:
        results = docgen.recorded_or_exit(CMD)
    texts = {}
    for part in a.parts.split(","):
        if part not in PARTS:
            sys.exit(f"--parts: unknown part `{part}`; expected {', '.join(PARTS)}")
        if not a.from_json:
            results[part] = PARTS[part][0]()
        texts[part] = PARTS[part][1](results[part])
        if part in FIGURES:
            FIGURES[part](results[part])
        print(f"## {part}\n\n{texts[part]}\n", flush=True)
    if a.publish:
        if "reproduction" in texts:
            texts["headline"] = headline(results)
        docgen.publish(CMD, texts, results)


if __name__ == "__main__":
    main()
