"""ASET's co-dc-cloud finding, policy by policy (docs/aset-findings.md): every one of ASET's
policies (and `random`) on dc-cloud and on co-dc-cloud, λ 20 … 100, the evaluation seeds, 300
s, under both worker queue bounds: `deadline` (continuum's default: a worker drops a query that
would answer late) and `unbounded` (a worker serves every admitted query; late answers are
failures). Each run's queries are split by outcome: answered in time, answered late, refused at
binding (queries of streams that found no feasible binding) and dropped at a worker (queries of
bound streams that no worker processed), so that the multiplexing explanation of the finding is
measured.

- **policies**: per queue bound, at λ 60, every policy's success on both topologies and co-dc-cloud
  − dc-cloud for each outcome, paired per seed with the verdict of docs/methodology.md.
- **loads**: per queue bound and λ, how many policies are above / below / tie on co-dc-cloud, and
  the mean over policies of each outcome's difference.

Usage: python3 -m experiments.aset_topologies [--seeds 101,102,103,104,105] [--publish]
       [--from-json] [--ray HOST:PORT]

Page: docs/aset-findings.md.
"""
import pathlib
import statistics
import sys

from experiments import cli
from experiments import docgen
from experiments import references as refs
from experiments.cells import sweep


def parser():
    """The command line: experiments/cli.py's shared flags and this module's own."""
    p = cli.parser("seeds", "duration", "bin", "ray", out="out/aset-topologies")
    p.add_argument("--lambdas", default="20,40,60,80,100")
    return p


BOUNDS = ["deadline", "unbounded"]
TOPOLOGIES = ["dc-cloud", "co-dc-cloud"]
# Outcome → its share of the offered queries, % (keys of a report row).
OUTCOMES = {"success": "in time", "late": "late", "at_binding": "refused at binding",
            "at_worker": "dropped at a worker"}


def measure():
    grid = {"name": "aset-topologies",
            "compare": {"policies": ",".join(refs.ASET), "duration": a.duration},
            "axes": [{"queue-bound": BOUNDS}, {"topology": [f"topologies/{t}.yaml"
                                                           for t in TOPOLOGIES]},
                     {"lambda": [float(x) for x in LAMBDAS]},
                     {"seed": [int(s) for s in SEEDS]}]}
    res = {}
    for labels, r in sweep(grid, pathlib.Path(a.out) / "sweep", a.bin, ray=a.ray):
        topo = pathlib.Path(labels["topology"]).stem
        lam = f"{float(labels['lambda']):g}"
        cell = res.setdefault(labels["queue-bound"], {}).setdefault(topo, {}).setdefault(lam, {})
        for x in r["results"]:
            n = max(1, x["offered"])
            cell.setdefault(x["policy"], {})[str(labels["seed"])] = {
                "success": 100 * x["success"] / n, "late": 100 * x["failure"] / n,
                "at_binding": 100 * x["rejected_at_binding"] / n,
                "at_worker": 100 * x["rejected_at_worker"] / n}
    return res


def series(res, bound, topo, lam, policy, k):
    return [res[bound][topo][lam][policy][s][k] for s in SEEDS]


def co_minus_dc(res, bound, lam, policy, k):
    return refs.diff(series(res, bound, "co-dc-cloud", lam, policy, k),
                     series(res, bound, "dc-cloud", lam, policy, k))


def mean_pm(d):
    sd = statistics.stdev(d) if len(d) > 1 else 0.0
    return f"{statistics.mean(d):+.2f} ± {sd:.2f}"


def render_policies(res):
    lam = "60" if "60" in LAMBDAS else LAMBDAS[0]
    text = [f"λ {lam}, seeds {refs.seed_range(SEEDS)}, {a.duration:.0f} s; shares of the offered "
            "queries, %, mean over seeds; co-dc-cloud − dc-cloud paired per seed (mean ± sd), with "
            "the verdict of docs/methodology.md on success.\n"]
    for bound in BOUNDS:
        text += [f"Queue bound `{bound}`:\n",
                 "| policy | success dc-cloud | success co-dc-cloud | co − dc: success, pp | "
                 + " | ".join(f"co − dc: {v}, pp" for k, v in OUTCOMES.items() if k != "success")
                 + " |", "|---|---|---|---|---|---|---|"]
        for policy in refs.ASET:
            dc, co = (series(res, bound, t, lam, policy, "success") for t in TOPOLOGIES)
            text.append(
                f"| {policy} | {statistics.mean(dc):.2f} | {statistics.mean(co):.2f} | "
                f"{refs.versus(co, dc)} | "
                + " | ".join(mean_pm(co_minus_dc(res, bound, lam, policy, k))
                             for k in OUTCOMES if k != "success") + " |")
        text.append("")
    return "\n".join(text)


def render_loads(res):
    text = [f"Seeds {refs.seed_range(SEEDS)}, {a.duration:.0f} s; over the {len(refs.ASET)} "
            "policies: how many have a higher success on co-dc-cloud than on dc-cloud (paired per "
            "seed, verdict of docs/methodology.md), and the mean over policies of co-dc-cloud − "
            "dc-cloud for each outcome, pp.\n",
            "| queue bound | λ | above / below / tie | "
            + " | ".join(f"{v}, pp" for v in OUTCOMES.values()) + " |",
            "|---|---|---|" + "---|" * len(OUTCOMES)]
    for bound in BOUNDS:
        for lam in LAMBDAS:
            verdicts = [refs.verdict(co_minus_dc(res, bound, lam, p, "success"), 0.0,
                                     refs.COMPARED) for p in refs.ASET]
            counts = " / ".join(str(verdicts.count(w)) for w in refs.COMPARED)
            means = [statistics.mean(statistics.mean(co_minus_dc(res, bound, lam, p, k))
                                     for p in refs.ASET) for k in OUTCOMES]
            text.append(f"| `{bound}` | {lam} | {counts} | "
                        + " | ".join(f"{m:+.2f}" for m in means) + " |")
    return "\n".join(text) + "\n"


def main(argv=None):
    """Runs the command line `argv` (default: sys.argv[1:])."""
    global LAMBDAS, SEEDS, a
    argv = sys.argv[1:] if argv is None else argv
    a = parser().parse_args(argv)
    CMD = docgen.command(__file__, argv, drop_valued=("--out", "--bin", "--ray"))
    SEEDS = a.seeds.split(",")
    LAMBDAS = a.lambdas.split(",")
    res = docgen.recorded_or_exit(CMD) if a.from_json else measure()
    parts = {"policies": render_policies(res), "loads": render_loads(res)}
    for t in parts.values():
        print(t)
    if a.publish:
        docgen.publish(CMD, parts, res)


if __name__ == "__main__":
    main()
