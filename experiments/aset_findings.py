"""The ASET agent's ablation (docs/aset-findings.md): from ASET as its paper defines it (one
action per scheduler per window among the seven policies, the scheduler's window success ratio
as reward, temporal-difference learning, no fallback tables and no margin, trained at λ = 60
only) one change at a time, each row keeping the rows above; the last row is config/aset.yaml,
the shipped models/<topology>-aset.dqn.

Every variant is trained on full-edge with training seed 1 (its episodes' seeds are drawn from
it; none is an evaluation seed), then run with the seven static policies at λ = 60 on the
evaluation seeds (default 101–105), 300 s each. Per variant: its success ratio (mean ± sd over
the seeds), the best ASET policy's — the one policy with the best mean over those same seeds,
chosen in hindsight, a stronger baseline than any chosen beforehand — the per-seed difference
(mean ± sd, min … max), the same difference with the first --warmup-s seconds left out, and the
action the agent took most. The shipped variant (--shipped, chosen on probe seeds 7 and 8, which
are not evaluation seeds) is then run at λ 20 … 100 (ASET's generalisation: trained at 60 only)
against the best ASET policy at each λ.

With --queue-bound unbounded every variant is trained (`queue_bound: unbounded`) and run with the
workers serving every admitted query, a late answer a failure (ASET's setting, docs/model.md §7.3);
the shipped checkpoint is then models/<topology>-aset-unbounded.dqn, and the references (the best
heuristic) are run under the same bound (the offline bound does not depend on it: the recorded
one of the cell is used).

With --protocol the agent is trained by ASET's own protocol (config/aset-protocol.yaml: each
episode its own λ in [20, 100], its own mix of application classes and its own seed, ending when
a window's success ratio falls below θ or at H) on --topology under --load-view (`published`,
continuum's view, or `current`, the workers' present load with every scheduler's bindings:
ASET's assumption), as <out>/<topology>-<view>/checkpoint.dqn (reused when there), and run with
ASET's seven policies under the same view at every λ of --lambdas (ASET's Figs. 5 and 6).

Usage: python3 -m experiments.aset_findings [--seeds 101,102,103,104,105] [--publish]
       [--from-json] [--out out/aset] [--reuse] [--ray HOST:PORT]
       [--topology T --shipped-only --generalise] [--queue-bound unbounded]
       [--protocol --topology T --load-view published|current] [--protocol-summary]

--protocol-summary renders, from the six recorded --protocol runs (three topologies × two views),
the paper's Fig. 5 / 6 comparisons side by side: the agent against the best ASET policy per
topology, λ and view, and co-dc-cloud against dc-cloud policy by policy.
Needs a release build. Checkpoints already under <out> are reused (delete them to retrain); every
compare run is a report of one grid (`continuum sweep`: <out>/sweep, or <out>/shipped-sweep with
--shipped-only; --reuse keeps the cells already there, else they are run again), here or on a
Ray head (--ray).

Page: docs/aset-findings.md.
"""
import json
import pathlib
import statistics
import sys

import yaml

from experiments import cli
from experiments import docgen
from experiments import references as refs
from experiments.cells import run, success_from, sweep


def parser():
    """The command line: experiments/cli.py's shared flags and this module's own."""
    p = cli.parser("seeds", "duration", "bin", "threads", "runner")
    p.add_argument("--topology", default="full-edge")
    p.add_argument("--warmup-s", type=float, default=60,
                   help="windows before this are left out of the second difference column")
    p.add_argument("--lambdas", default="20,40,60,80,100")
    p.add_argument("--train-seed", type=int, default=1)
    p.add_argument("--shipped", default="longer",
                   help="the variant of models/<topology>-aset.dqn, run at every λ")
    p.add_argument("--shipped-only", action="store_true",
                   help="evaluate only the shipped checkpoint, models/<topology>-aset.dqn, at λ 60 "
                        "(no training): fresh seeds for the row chosen after seeing 101–105")
    p.add_argument("--generalise", action="store_true",
                   help="with --shipped-only: also run it at every λ of --lambdas (ASET's Fig. 5 and "
                        "6 on a topology whose checkpoint was trained by `continuum train "
                        "topologies/<topology>.yaml --config config/aset.yaml --seed 1`)")
    p.add_argument("--queue-bound", default="deadline", choices=["deadline", "unbounded"],
                   help="the workers' queue bound, in training and in every run")
    p.add_argument("--protocol", action="store_true",
                   help="train by ASET's protocol (config/aset-protocol.yaml) on --topology under "
                        "--load-view and run it at every λ of --lambdas with ASET's seven policies")
    p.add_argument("--protocol-summary", action="store_true",
                   help="the Fig. 5 / 6 comparisons of the six recorded --protocol runs (no run)")
    p.add_argument("--load-view", default="published", choices=["published", "current"],
                   help="with --protocol: the load view of training and of every run")
    p.add_argument("--out", default=None,
                   help="default out/aset, out/aset-unbounded, out/aset-protocol")
    return p


STATIC = ["closest", "load-balancing", "farthest", "cheaper", "random-proportional-latency",
          "random-proportional-load", "least-impedance"]
# (name, what the row changes, overrides of config/aset.yaml); each row keeps the rows above
# (a row may undo one: `system` replaces the bound streams' reward by the system's).
VARIANTS = [
    ("aset", "ASET as written: the scheduler's raw window success ratio, 200 episodes",
     {"reward_scale": 1.0, "reward_baseline_rate": 0.0, "episodes": 200}),
    ("centred", "+ reward in points around the scheduler's moving average (×100, rate 0.1)",
     {"reward_scale": 100.0, "reward_baseline_rate": 0.1}),
    ("bound", "+ reward: the streams bound in the window, over their next 30 s",
     {"reward_scope": "bound_streams", "reward_windows": 6}),
    ("identity", "+ the scheduler's identity in the state", {"identity": True}),
    ("bandit", "+ γ = 0 (the bound streams' outcome is the decision's whole consequence)",
     {"gamma": 0.0}),
    ("system", "γ = 0.9 again, reward: the whole system's window success ratio instead of the "
     "bound streams' (no selfish reward)",
     {"gamma": 0.9, "reward_scope": "system"}),
    ("longer", "the `centred` row (scheduler's reward, no identity, γ 0.9) with 2× the episodes "
     "(400): config/aset.yaml; chosen after seeing seeds 101–105 (docs/methodology.md)",
     {"reward_scope": "scheduler", "identity": False, "episodes": 400}),
]


def train(out):
    base = yaml.safe_load(pathlib.Path("config/aset.yaml").read_text())
    cfg = dict(base)
    if UNBOUNDED:
        cfg["queue_bound"] = "unbounded"
    for name, _, over in VARIANTS:
        cfg.update(over)
        ck = out / f"{name}.dqn"
        (out / f"{name}.yaml").write_text(json.dumps(cfg, indent=1) + "\n")
        if not ck.exists():
            print(f"training {name} …", file=sys.stderr)
            run([a.bin, "train", f"topologies/{a.topology}.yaml", "--config",
                 str(out / f"{name}.yaml"), "--seed", str(a.train_seed), "--out", str(ck),
                 "--threads", a.threads])


def score(row, warmup_s):
    """Success % of a result row, over the whole run or from `warmup_s` on."""
    return 100 * row["success_ratio"] if warmup_s <= 0 else success_from(row, warmup_s)


def agent_path(out, name):
    """The checkpoint of row `name`: the shipped one, the protocol's, or an ablation row's."""
    if a.protocol:
        return PROTOCOL / "checkpoint.dqn"
    return SHIPPED if a.shipped_only else out / f"{name}.dqn"


def evaluate(out, runs, sweep_dir):
    """`runs` ({λ: the agents run at it}) on every seed as one grid; per λ, per seed:
    {row name: {whole, after, rejected, failed, actions}}."""
    grid = {"name": "aset",
            "compare": {"topology": f"topologies/{a.topology}.yaml", "duration": a.duration,
                        "policies": ",".join(STATIC),
                        **({"queue-bound": a.queue_bound} if UNBOUNDED else {}),
                        **({"load-view": a.load_view} if a.load_view != "published" else {})},
            "axes": [{"lambda": [{"name": lam, "lambda": lam, "agent": [
                str(agent_path(out, ag)) for ag in agents]}
                                 for lam, agents in runs.items()]},
                     {"seed": [int(s) for s in a.seeds.split(",")]}]}
    per_lambda = {}
    for labels, report in sweep(grid, sweep_dir, a.bin, ray=a.ray, threads=a.threads,
                                 reuse=a.reuse):
        agents = runs[labels["lambda"]]
        cell = {}
        for r in report["results"]:
            name = r["policy"].removeprefix("dqn:")
            if name == "dqn":
                name = agents[0]
            top = ""
            if r.get("actions"):
                shares = r["actions"]["share"][0]
                i = max(range(len(shares)), key=lambda k: shares[k])
                top = f"{r['actions']['actions'][i]} {100 * shares[i]:.0f}%"
            cell[name] = dict(whole=score(r, 0), after=score(r, a.warmup_s),
                              rejected=100 * r["rejected"] / r["offered"],
                              failed=100 * r["failure"] / r["offered"], actions=top,
                              dropped=100 * r.get("rejected_at_worker", 0) / r["offered"])
        per_lambda.setdefault(labels["lambda"], []).append(cell)
    return per_lambda


def ms(xs):
    return f"{statistics.mean(xs):.2f} ± {statistics.stdev(xs) if len(xs) > 1 else 0:.2f}"


def best_static(per_seed, key):
    return max(STATIC, key=lambda s: statistics.mean(c[s][key] for c in per_seed))


def render(results):
    per_seed = results["ablation"]
    best = best_static(per_seed, "whole")
    best_after = best_static(per_seed, "after")
    n = len(per_seed)
    seeds = a.seeds.split(",")
    base = REFS
    ref60 = base.get(f"{a.topology}|60")
    h = refs.against(ref60, [c[best]["whole"] for c in per_seed], seeds)[0]
    bound = ", workers' queue unbounded (late answers are failures)" if UNBOUNDED else ""
    text = [f"{a.topology}, λ 60{bound}, {n} evaluation seeds ({a.seeds}), {a.duration:.0f} s; best "
            f"ASET policy (of its seven) by mean over these seeds: {best} "
            f"({ms([c[best]['whole'] for c in per_seed])} %); from {a.warmup_s:.0f} s on: "
            f"{best_after}. Best heuristic (every registered rule, without own-binding accounting and under `window`, "
            f"docs/baselines.md): {h}\n",
            "| variant | success % | − best ASET policy, pp (min … max) | − best ASET policy from "
            f"{a.warmup_s:.0f} s, pp | action taken most (seed {seeds[0]}) "
            "| − best heuristic, pp | share of bound |",
            "|---|---|---|---|---|---|---|"]
    for name, what, _ in VARIANTS:
        if name not in per_seed[0]:
            continue
        d = [c[name]["whole"] - c[best]["whole"] for c in per_seed]
        d2 = [c[name]["after"] - c[best_after]["after"] for c in per_seed]
        _, vs, sh = refs.against(ref60, [c[name]["whole"] for c in per_seed], seeds)
        text.append(f"| {what} | {ms([c[name]['whole'] for c in per_seed])} | {ms(d)} "
                    f"({min(d):+.2f} … {max(d):+.2f}) | {ms(d2)} | {per_seed[0][name]['actions']} "
                    f"| {vs} | {sh} |")
    gen = results["generalisation"]
    if not gen:
        return "\n".join(text) + "\n"
    last = a.shipped
    what = next(w for n, w, _ in VARIANTS if n == last)
    text += ["", f"Generalisation: the shipped variant (`{last}`: {what}), trained at λ 60 only, "
             "run at other rates "
             f"({n} seeds each; best ASET policy, of its seven, by mean at each λ)\n",
             "| λ | agent % | best ASET policy % | agent − best, pp (min … max) | rejected / failed %: "
             "agent | best ASET policy | best heuristic | agent − best heuristic, pp "
             "| agent, share of bound |",
             "|---|---|---|---|---|---|---|---|---|"]
    # In --lambdas order (recorded results come back with their keys sorted as strings).
    for lam in a.lambdas.split(","):
        cells = gen[lam]
        b = best_static(cells, "whole")
        d = [c[last]["whole"] - c[b]["whole"] for c in cells]
        rf = lambda k: (f"{statistics.mean(c[k]['rejected'] for c in cells):.2f} / "
                        f"{statistics.mean(c[k]['failed'] for c in cells):.2f}")
        against = refs.against(base.get(f"{a.topology}|{lam}"),
                               [c[last]["whole"] for c in cells], seeds)
        text.append(f"| {lam} | {ms([c[last]['whole'] for c in cells])} | "
                    f"{ms([c[b]['whole'] for c in cells])} ({b}) | {ms(d)} "
                    f"({min(d):+.2f} … {max(d):+.2f}) | {rf(last)} | {rf(b)} | "
                    + " | ".join(against) + " |")
    return "\n".join(text) + "\n"


def headline(results):
    """The README's row (experiments/headline.py): ASET as written and the shipped variant (chosen
    after these seeds were seen: docs/methodology.md) against the best ASET policy, the shipped
    variant against the best heuristic and the bound."""
    per_seed, seeds = results["ablation"], a.seeds.split(",")
    best = best_static(per_seed, "whole")
    xs = lambda name: [c[name]["whole"] for c in per_seed]
    h, vs, sh = refs.against(REFS.get(f"{a.topology}|60"), xs(a.shipped), seeds)
    written = ("" if "aset" not in per_seed[0] or UNBOUNDED else
               f"as written: {ms(xs('aset'))} %, vs best ASET policy ({best}) "
               f"{refs.versus(xs('aset'), xs(best))}; ")
    if UNBOUNDED:
        return (f"ASET (unbounded queue), {a.topology} λ 60, seeds {refs.seed_range(seeds)} | "
                f"`{a.shipped}` {ms(xs(a.shipped))} %, vs best ASET policy ({best}) "
                f"{refs.versus(xs(a.shipped), xs(best))}, vs best heuristic ({h}) {vs}\n")
    bound = " (unbounded queue)" if UNBOUNDED else ""
    return (f"ASET{bound}, {a.topology} λ 60, seeds {refs.seed_range(seeds)} | {written}"
            f"shipped variant `{a.shipped}` (chosen after seeing seeds 101–105): {ms(xs(a.shipped))} %, "
            f"vs best ASET policy {refs.versus(xs(a.shipped), xs(best))}, vs best heuristic "
            f"({h}) {vs}; {sh} of the bound\n")


def train_protocol():
    """Trains the protocol's agent on --topology under --load-view, unless its checkpoint is
    there; returns the training's episode log (rows of <dir>/checkpoint.training.csv)."""
    PROTOCOL.mkdir(parents=True, exist_ok=True)
    cfg = yaml.safe_load(pathlib.Path("config/aset-protocol.yaml").read_text())
    cfg["load_view"] = a.load_view
    (PROTOCOL / "config.yaml").write_text(json.dumps(cfg, indent=1) + "\n")
    if not (PROTOCOL / "checkpoint.dqn").exists():
        print(f"training by the protocol on {a.topology} ({a.load_view}) …", file=sys.stderr)
        run([a.bin, "train", f"topologies/{a.topology}.yaml", "--config",
             str(PROTOCOL / "config.yaml"), "--seed", str(a.train_seed), "--out", str(PROTOCOL),
             "--threads", a.threads, "--quiet"])
    log = next(iter(sorted(PROTOCOL.glob("*training.csv"))), None)
    if log is None:
        return []
    lines = log.read_text().splitlines()
    head = lines[0].split(",")
    return [dict(zip(head, line.split(","))) for line in lines[1:]]


def protocol_results():
    """Trains (or reuses) the protocol's agent and runs it with the seven policies at every λ."""
    episodes = train_protocol()
    lams = a.lambdas.split(",")
    # λ 60 (Fig. 5, Fig. 6a) as a grid of its own, so that it can be run first and kept
    # (--reuse) when the other rates (Fig. 6b) follow.
    runs = {}
    for grid, part in (("sweep-60", [x for x in lams if x == "60"]),
                       ("sweep", [x for x in lams if x != "60"])):
        if part:
            runs.update(evaluate(PROTOCOL, {lam: ["protocol"] for lam in part}, PROTOCOL / grid))
    ends = {}
    for e in episodes:
        ends[e["end"]] = ends.get(e["end"], 0) + 1
    return {"generalisation": {lam: runs[lam] for lam in lams},
            "training": {"episodes": len(episodes), "ends": ends,
                         "mean_lambda": statistics.mean(float(e["lambda"]) for e in episodes)
                         if episodes else None}}


def render_protocol(results):
    """Fig. 5 / 6 of one topology and load view: the protocol's agent against the best of ASET's
    seven policies at each λ (by mean over the seeds), with the verdict of docs/methodology.md,
    its rejected and late shares against that policy's, and against the best heuristic (recorded
    references, run under the published view: `–` under `current`)."""
    gen, seeds, tr = results["generalisation"], a.seeds.split(","), results["training"]
    ends = ", ".join(f"{k} {v}" for k, v in sorted(tr["ends"].items()))
    text = [f"{a.topology}, load view `{a.load_view}`; the agent trained by ASET's protocol "
            f"(config/aset-protocol.yaml, load_view {a.load_view}; training seed "
            f"{a.train_seed}: {tr['episodes']} episodes, mean λ {tr['mean_lambda'] or 0:.1f}, "
            f"ended by: {ends}); {len(seeds)} evaluation seeds ({a.seeds}), "
            f"{a.duration:.0f} s; best ASET policy (of its seven) by mean at each λ under the "
            "same view.\n",
            "| λ | agent % | best ASET policy % | agent − best, pp (min … max) | rejected / "
            "late %: agent | best ASET policy | action taken most (seed "
            f"{seeds[0]}) | worst ASET policy % | agent − best heuristic, pp |",
            "|---|---|---|---|---|---|---|---|---|"]
    for lam in a.lambdas.split(","):
        cells = gen[lam]
        b = best_static(cells, "whole")
        worst = min(STATIC, key=lambda s: statistics.mean(c[s]["whole"] for c in cells))
        xs = [c["protocol"]["whole"] for c in cells]
        d = [x - c[b]["whole"] for x, c in zip(xs, cells)]
        rf = lambda k: (f"{statistics.mean(c[k]['rejected'] for c in cells):.2f} / "
                        f"{statistics.mean(c[k]['failed'] for c in cells):.2f}")
        ref = REFS.get(f"{a.topology}|{lam}") if a.load_view == "published" else None
        vs_h = refs.against(ref, xs, seeds)[1]
        text.append(f"| {lam} | {ms(xs)} | {ms([c[b]['whole'] for c in cells])} ({b}) | "
                    f"{refs.versus(xs, [c[b]['whole'] for c in cells])} "
                    f"({min(d):+.2f} … {max(d):+.2f}) | {rf('protocol')} | {rf(b)} | "
                    f"{cells[0]['protocol']['actions']} | "
                    f"{ms([c[worst]['whole'] for c in cells])} ({worst}) | {vs_h} |")
    return "\n".join(text) + "\n"


TOPOLOGIES, VIEWS = ("full-edge", "dc-cloud", "co-dc-cloud"), ("published", "current")


def protocol_command(topology, view, lambdas=None):
    """The command whose recorded results hold the protocol's run on `topology` under `view`
    (at `lambdas` when given, else at the default rates)."""
    return (f"experiments.aset_findings --protocol --topology {topology} --load-view {view}"
            + (f" --lambdas {lambdas}" if lambdas else "")
            + (f" --seeds {a.seeds}" if a.seeds != "101,102,103,104,105" else ""))


def protocol_summary():
    """The recorded protocol runs, {view: {topology: results}}: each at every rate where that
    run is recorded, else at λ 60 alone (`--lambdas 60`), else left out (shown as not run)."""
    out = {view: {} for view in VIEWS}
    for view in VIEWS:
        for topology in TOPOLOGIES:
            r = (docgen.load_results(protocol_command(topology, view))
                 or docgen.load_results(protocol_command(topology, view, "60")))
            if r is not None:
                out[view][topology] = r
    if not any(out.values()):
        sys.exit("no recorded --protocol run: run one first")
    return out


def render_summary(results):
    """Fig. 5 / 6 side by side: per view, the agent − the best ASET policy on each topology at
    each λ, and co-dc-cloud − dc-cloud for each ASET policy at each λ (paired per seed, verdict
    of docs/methodology.md), with the change in queries dropped at a worker (the bursts that
    overflow a pool admitted on a stale view)."""
    lams = a.lambdas.split(",")
    text = [f"Seeds {a.seeds}, 300 s; the agent trained by ASET's protocol on each topology "
            "under each load view; pp of success, paired per seed (mean ± sd, verdict of "
            "docs/methodology.md).\n",
            "Agent − best ASET policy (of its seven, by mean at each λ, under the same view):\n",
            "| view | topology | " + " | ".join(f"λ {x}" for x in lams) + " |",
            "|---|---|" + "---|" * len(lams)]
    for view in VIEWS:
        for topology in TOPOLOGIES:
            gen = results[view].get(topology, {}).get("generalisation", {})
            row = []
            for lam in lams:
                cells = gen.get(lam)
                if not cells:
                    row.append("not run")
                    continue
                b = best_static(cells, "whole")
                row.append(refs.versus([c["protocol"]["whole"] for c in cells],
                                       [c[b]["whole"] for c in cells]))
            text.append(f"| `{view}` | {topology} | " + " | ".join(row) + " |")
    text += ["", "co-dc-cloud − dc-cloud, each of ASET's seven policies: how many are above / "
             "below / tie, the mean over the seven, and the best policy of each topology:\n",
             "| view | λ | above / below / tie | success, mean over policies, pp | dropped at a "
             "worker, mean over policies, pp | best on co-dc-cloud − best on dc-cloud, pp |",
             "|---|---|---|---|---|---|"]
    for view in VIEWS:
        co, dc = (results[view].get(t, {}).get("generalisation", {})
                  for t in ("co-dc-cloud", "dc-cloud"))
        for lam in lams:
            if lam not in co or lam not in dc:
                text.append(f"| `{view}` | {lam} | not run | – | – | – |")
                continue
            words = {"above": 0, "below": 0, "tie": 0}
            means, drops = [], []
            for pol in STATIC:
                drops.append(statistics.mean(c[pol]["dropped"] for c in co[lam])
                             - statistics.mean(c[pol]["dropped"] for c in dc[lam]))
                d = refs.diff([c[pol]["whole"] for c in co[lam]], [c[pol]["whole"] for c in dc[lam]])
                words[refs.verdict(d, 0.0, refs.COMPARED)] += 1
                means.append(statistics.mean(d))
            bc, bd = best_static(co[lam], "whole"), best_static(dc[lam], "whole")
            best = refs.versus([c[bc]["whole"] for c in co[lam]], [c[bd]["whole"] for c in dc[lam]])
            text.append(f"| `{view}` | {lam} | {words['above']} / {words['below']} / "
                        f"{words['tie']} | {statistics.mean(means):+.2f} | "
                        f"{statistics.mean(drops):+.2f} | {best} |")
    return "\n".join(text) + "\n"


def summary_headline(results):
    """The README's row (experiments/headline.py) for the protocol runs: per load view, how
    many (topology, λ) cells put the agent above, below or level with the best of ASET's seven
    policies (paired per seed, the verdict of docs/methodology.md)."""
    parts = []
    for view in VIEWS:
        words = {"above": 0, "below": 0, "tie": 0}
        for topology in TOPOLOGIES:
            for cells in results[view].get(topology, {}).get("generalisation", {}).values():
                b = best_static(cells, "whole")
                d = refs.diff([c["protocol"]["whole"] for c in cells], [c[b]["whole"] for c in cells])
                words[refs.verdict(d, 0.0, refs.COMPARED)] += 1
        parts.append(f"`{view}` view: above {words['above']}, below {words['below']}, "
                     f"tie {words['tie']}")
    seeds = a.seeds.split(",")
    return (f"ASET trained by its protocol, agent − best ASET policy, 3 topologies × λ 20–100, "
            f"seeds {seeds[0]}–{seeds[-1]} | " + "; ".join(parts) + "\n")


def unbounded_references():
    """The references under the unbounded queue: every rule run with it (recorded with the
    results), the bound of the recorded cell (an upper bound whatever the queue does)."""
    seeds = a.seeds.split(",")
    lams = sorted(set(a.lambdas.split(",")) | {"60"}, key=float)
    keys = [f"{a.topology}|{lam}|unbounded" for lam in lams]
    with_bound = refs.recorded(seeds, required=False) or refs.shared_references(seeds, False)

    def options(k):
        topology, lam, _ = k.split("|")
        return {"topology": f"topologies/{topology}.yaml", "lambda": float(lam),
                "duration": a.duration, "queue-bound": "unbounded"}

    # The rules only: the bound is the recorded cell's.
    found, computed = refs.of_cells(keys, seeds, results.get("references"), options,
                                    pathlib.Path(a.out) / "references", a.bin, ray=a.ray,
                                    compute_missing=not a.from_json, modes=("off", "window"),
                                    with_bound=False)
    if computed:
        results["references"] = dict(results.get("references") or {}, **computed)
    out = {}
    for k, ref in found.items():
        if ref is None:
            continue
        base = with_bound.get(k.rsplit("|", 1)[0]) or {}
        out[k.rsplit("|", 1)[0]] = dict(ref, bound=base.get("bound", {}))
    return out


def measure():
    """The results of the mode the command line chose: the protocol summary, the protocol,
    the shipped checkpoint alone, or every variant trained and evaluated."""
    if a.protocol_summary:
        results = protocol_summary()
    elif a.protocol:
        results = protocol_results()
    elif a.shipped_only:
        out = pathlib.Path(a.out)
        lams = a.lambdas.split(",") if a.generalise else ["60"]
        runs = evaluate(out, {lam: [a.shipped] for lam in lams}, out / "shipped-sweep")
        results = {"ablation": runs["60"],
                   "generalisation": {lam: runs[lam] for lam in lams} if a.generalise else {}}
    else:
        out = pathlib.Path(a.out)
        out.mkdir(parents=True, exist_ok=True)
        train(out)
        # Every variant at λ 60, the shipped one at every other λ: one grid.
        runs = evaluate(out, {"60": [v[0] for v in VARIANTS],
                              **{lam: [a.shipped] for lam in a.lambdas.split(",") if lam != "60"}},
                        out / "sweep")
        results = {"ablation": runs["60"], "generalisation": {}}
        for lam in a.lambdas.split(","):
            results["generalisation"][lam] = runs[lam]
    return results


def main(argv=None):
    """Runs the command line `argv` (default: sys.argv[1:])."""
    global PROTOCOL, REFS, SHIPPED, UNBOUNDED, a, results
    argv = sys.argv[1:] if argv is None else argv
    a = parser().parse_args(argv)
    UNBOUNDED = a.queue_bound == "unbounded"
    a.out = a.out or ("out/aset-protocol" if a.protocol else
                      "out/aset-unbounded" if UNBOUNDED else "out/aset")
    CMD = docgen.command(__file__, argv, drop=("--publish", "--from-json", "--reuse"),
                         drop_valued=("--out", "--bin", "--threads", "--ray"))
    SHIPPED = pathlib.Path(f"models/{a.topology}-aset{'-unbounded' if UNBOUNDED else ''}.dqn")
    PROTOCOL = pathlib.Path(a.out) / f"{a.topology}-{a.load_view}"
    if a.load_view != "published" and not a.protocol:
        sys.exit("--load-view: only with --protocol (the other modes run continuum's published view)")
    results = docgen.recorded_or_exit(CMD) if a.from_json else measure()
    # The references of experiments/baselines.py's tables (on the same seeds), else none; under the
    # unbounded queue, run under it.
    if UNBOUNDED:
        REFS = unbounded_references()
    else:
        REFS = refs.recorded(a.seeds.split(","), required=False) or refs.shared_references(
            a.seeds.split(","), False)
    text = (render_summary(results) if a.protocol_summary else
            render_protocol(results) if a.protocol else render(results))
    print(text, end="")
    if a.publish:
        parts = ({None: text} if a.protocol else
                 {None: text, "headline": summary_headline(results)} if a.protocol_summary else
                 {None: text, "headline": headline(results)})
        docgen.publish(CMD, parts, results)


if __name__ == "__main__":
    main()
