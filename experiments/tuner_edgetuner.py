"""EdgeTuner's mitigations and tail as its paper prints them, beside continuum's deadline-fraction
hedge (docs/tuner.md). Two parts, every figure a mean ± sd over the evaluation seeds (default
101–105), 300 s runs on one topology:

  families   every policy of --policies under no mitigation, the deadline-fraction kinds
             (`reissue@r`, `discard@r`) and the paper's task-count kinds (`restart@r`: Res_r,
             `tdp@r`: TDP_r; docs/model.md §12) at each ratio of --ratios, at each λ of
             --lambdas: success %, degraded % (tasks TDP discarded: the job completes
             without them), the pooled p99 of answered queries, and the paper's per-job tail
             (the mean over jobs of each job's slowest answer)
  agent      the checkpoint --agent (default models/<topology>-edgetuner-paper.dqn,
             config/edgetuner-paper.yaml) against every static configuration of its own action
             list (115: five policies × none, restart and tdp at 0.70 … 0.90) at λ 60, three
             ways: EdgeTuner's (the mean over every configuration of the relative change of the
             tail — pooled p99 and per-job tail both), the lowest-p99 configuration within
             0.3 pp of the best success, and the best-success one

Usage: python3 -m experiments.tuner_edgetuner [--seeds 101,102,103,104,105] [--publish]
       [--from-json] [--parts families,agent] [--reuse] [--ray HOST:PORT]
Every run is a report of one grid (`continuum sweep`: <out>/sweep; --reuse keeps the cells
already there, else they are run again), here or on a Ray head (--ray).

Page: docs/tuner.md.
"""
import pathlib
import statistics
import sys

from experiments import cli
from experiments import docgen
from experiments import references as refs
from experiments.cells import sweep

ALLOWANCE_PP = 0.3


def parser():
    """The command line: experiments/cli.py's shared flags and this module's own."""
    p = cli.parser("seeds", "duration", "bin", "runner", out="out/edgetuner")
    p.add_argument("--topology", default="full-edge")
    p.add_argument("--lambdas", default="60,100")
    p.add_argument("--policies", default="closest,random-proportional-load,least-impedance")
    p.add_argument("--ratios", default="0.7,0.8,0.9")
    p.add_argument("--agent", default=None)
    p.add_argument("--parts", default="families,agent")
    return p


def rows_of(report):
    """A report's rows: success %, degraded %, pooled p99 and mean job tail."""
    return [dict(policy=x["policy"], success=100 * x["success_ratio"],
                 degraded=100 * x["degraded"] / max(1, x["offered"]),
                 p99=x["latency_ms"]["p99"], job_tail=x["job_tail_ms"]["mean"])
            for x in report["results"]]


def agent_actions():
    """The agent's action list, from its config file's flow sequence."""
    text = pathlib.Path("config/edgetuner-paper.yaml").read_text()
    body = text.split("actions: [", 1)[1].split("]", 1)[0]
    return [x.strip() for x in body.replace("\n", " ").split(",") if x.strip()]


def measure():
    """Both parts as one grid: a run per part (and λ) on every seed."""
    runs = []
    if "families" in a.parts:
        runs += [{"name": f"families-{lam}", "lambda": lam, "grid": True,
                  "policies": a.policies, "kinds": "reissue,discard,restart,tdp",
                  "ratios": a.ratios} for lam in a.lambdas.split(",")]
    if "agent" in a.parts:
        runs.append({"name": "agent", "lambda": "60", "configs": ",".join(agent_actions()),
                     "agent": AGENT})
    if not runs:
        return {}
    grid = {"name": "edgetuner",
            "compare": {"topology": f"topologies/{a.topology}.yaml", "duration": a.duration},
            "axes": [{"run": runs}, {"seed": [int(s) for s in SEEDS]}]}
    res = {}
    for labels, report in sweep(grid, pathlib.Path(a.out) / "sweep", a.bin, ray=a.ray,
                                reuse=a.reuse):
        part, _, lam = labels["run"].partition("-")
        if part == "families":
            res.setdefault("families", {}).setdefault(lam, []).append(rows_of(report))
        else:
            res.setdefault("agent", []).append(rows_of(report))
    return res


def pm(xs, d=2):
    sd = statistics.stdev(xs) if len(xs) > 1 else 0.0
    return f"{statistics.mean(xs):.{d}f} ± {sd:.{d}f}"


def by_name(per_seed):
    names = [r["policy"] for r in per_seed[0]]
    return {n: {k: [next(r for r in s if r["policy"] == n)[k] for s in per_seed]
                for k in ("success", "degraded", "p99", "job_tail")} for n in names}


def render_families(fam):
    text = [f"{a.topology}, {len(SEEDS)} seeds ({a.seeds}), {a.duration:.0f} s; mean ± sd. "
            "Degraded: tasks TDP discarded (part of the offered, not of the successes).\n"]
    for lam in a.lambdas.split(","):  # recorded results come back with sorted keys
        per_seed = fam[lam]
        m = by_name(per_seed)
        text += [f"**λ {lam}**\n", "| configuration | success % | degraded % | pooled p99 ms | "
                 "mean job tail ms |", "|---|---|---|---|---|"]
        for n, v in m.items():
            text.append(f"| {n} | {pm(v['success'])} | {pm(v['degraded'])} | "
                        f"{pm(v['p99'], 0)} | {pm(v['job_tail'], 1)} |")
        text.append("")
    return "\n".join(text) + "\n"


def render_agent(per_seed):
    m = by_name(per_seed)
    agent = "dqn"
    statics = [n for n in m if n != agent]
    mean = lambda n, k: statistics.mean(m[n][k])
    best = max(statics, key=lambda n: (mean(n, "success"), -mean(n, "p99")))
    ok = [n for n in statics if mean(best, "success") - mean(n, "success") <= ALLOWANCE_PP + 1e-9]
    tail = min(ok, key=lambda n: (mean(n, "p99"), -mean(n, "success")))

    def change(k):
        per = [statistics.mean(s_agent / s_other - 1 for s_other in
                               (m[n][k][i] for n in statics))
               for i, s_agent in enumerate(m[agent][k])]
        return f"{100 * statistics.mean(per):+.1f} %"

    def vs(n):
        d = [x - y for x, y in zip(m[agent]["success"], m[n]["success"])]
        q = [x / y for x, y in zip(m[agent]["p99"], m[n]["p99"])]
        j = [x / y for x, y in zip(m[agent]["job_tail"], m[n]["job_tail"])]
        return (f"{pm(d)} pp, p99 ×{statistics.mean(q):.3f}, job tail "
                f"×{statistics.mean(j):.3f}")

    fmt = lambda n: (f"{pm(m[n]['success'])} % / {pm(m[n]['p99'], 0)} ms / "
                     f"{pm(m[n]['job_tail'], 1)} ms")
    # The README's row (experiments/headline.py): EdgeTuner's form and both static references, the
    # success differences by the verdict rule of docs/methodology.md.
    headline = (f"EdgeTuner's actions and reward, {a.topology} λ 60, seeds "
                f"{refs.seed_range(SEEDS)} | mean p99 change over the {len(statics)} static "
                f"configurations {change('p99')} (paper −21.66 %); vs best-success static "
                f"(`{best}`) {refs.versus(m[agent]['success'], m[best]['success'])} pp success; vs "
                f"lowest-p99 static within {ALLOWANCE_PP} pp (`{tail}`) "
                f"{refs.versus(m[agent]['success'], m[tail]['success'])} pp, p99 "
                f"×{statistics.mean(x / y for x, y in zip(m[agent]['p99'], m[tail]['p99'])):.3f}\n")
    return headline, "\n".join([
        f"{a.topology}, λ 60, {len(SEEDS)} seeds ({a.seeds}); `{AGENT}` against the "
        f"{len(statics)} static configurations of its action list (success / pooled p99 / mean "
        "job tail)\n",
        "| comparison | figures |", "|---|---|",
        f"| the agent | {fmt(agent)} |",
        f"| EdgeTuner's form: mean change of the pooled p99 over every static configuration | {change('p99')} |",
        f"| the same, of the mean job tail | {change('job_tail')} |",
        f"| best-success static `{best}` | {fmt(best)} |",
        f"| agent vs it | {vs(best)} |",
        f"| lowest-p99 static within {ALLOWANCE_PP} pp `{tail}` | {fmt(tail)} |",
        f"| agent vs it | {vs(tail)} |",
    ]) + "\n"


def main(argv=None):
    """Runs the command line `argv` (default: sys.argv[1:])."""
    global AGENT, SEEDS, a
    argv = sys.argv[1:] if argv is None else argv
    a = parser().parse_args(argv)
    CMD = docgen.command(__file__, argv, drop=("--publish", "--from-json", "--reuse"),
                         drop_valued=("--out", "--bin", "--ray"))
    SEEDS = a.seeds.split(",")
    AGENT = a.agent or f"models/{a.topology}-edgetuner-paper.dqn"
    res = docgen.recorded_or_exit(CMD) if a.from_json else measure()
    parts = {}
    if "families" in res:
        parts["families"] = render_families(res["families"])
    if "agent" in res:
        parts["headline"], parts["agent"] = render_agent(res["agent"])
    for k, t in parts.items():
        if k != "headline":
            print(t)
    if a.publish:
        docgen.publish(CMD, parts, res)


if __name__ == "__main__":
    main()
