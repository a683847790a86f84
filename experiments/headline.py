"""The README's headline table: one row per results page, each the `headline` part its module
recorded (docs/generated/<command>.headline.md, rendered from that module's recorded results by
the verdict rule of docs/methodology.md), with the page and the command that produced it.

Reads files only. `check_docs --rerender` re-renders every module's headline part from its
recorded JSON and this table from those parts, so a README figure cannot drift from the results
it came from.

Usage: python3 -m experiments.headline [--publish] [--from-json]

Page: README.md.
"""
import sys

from experiments import cli
from experiments import docgen

# (page, anchor, command): the order of the README's table.
ROWS = [
    ("baselines.md", "", "experiments.baselines --part table"),
    ("meta-results.md", "",
     "experiments.generalisation --topologies full-edge,co-dc-cloud,dc-cloud --workloads "
     "20,40,60,80,100,diurnal --agents "
     "'heuristics=models/{topology}-heuristics.dqn,shipped=models/{topology}.dqn'"),
    ("meta-results.md", "#one-learned-default-for-any-network-zero-shot", "experiments.universal"),
    ("aset-findings.md", "", "experiments.aset_findings"),
    ("aset-findings.md", "#asets-protocol-and-its-load-view-figs-5-and-6-re-run",
     "experiments.aset_findings --protocol-summary"),
    ("tapfinger.md", "#1-tapfinger-in-its-own-problem-ml-tasks-on-edge-clusters",
     "experiments.tapfinger_jobs"),
    ("meta-results.md", "",
     "experiments.generalisation --topologies full-edge,co-dc-cloud,dc-cloud --agents "
     "'heuristics=models/{topology}-heuristics.dqn,shipped=models/{topology}.dqn'"),
    ("tuner.md", "", "experiments.tuner --capacity-scales 1,0.5"),
    ("tuner.md", "#edgetuner-on-batch-jobs-its-own-problem", "experiments.edgetuner_jobs"),
    ("allocation.md", "", "experiments.allocation --generated --ablation"),
    ("deeprm.md", "", "experiments.deeprm"),
    ("oga.md", "", "experiments.oga"),
    ("fleet.md", "", "experiments.fleet"),
    ("performance.md", "#simulator", "experiments.performance"),
]


def parser():
    """The command line: experiments/cli.py's shared flags and this module's own."""
    return cli.parser()


CMD = "experiments.headline"


def render(rows):
    lines = ["| what | result | page | command |", "|---|---|---|---|"]
    for page, anchor, cmd in rows:
        path = docgen.recorded_path(cmd, "headline")
        if not path.exists():
            sys.exit(f"headline: `{cmd}` recorded no headline ({path.relative_to(docgen.ROOT)}): "
                     f"run `python3 -m {cmd} --publish` (or with --from-json)")
        what, result = (x.strip() for x in path.read_text().strip().split(" | ", 1))
        lines.append(f"| {what} | {result} | [{page}](docs/{page}{anchor}) | `python3 -m {cmd}` |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    """Runs the command line `argv` (default: sys.argv[1:])."""
    argv = sys.argv[1:] if argv is None else argv
    a = parser().parse_args(argv)
    rows = [list(r) for r in (docgen.recorded_or_exit(CMD) if a.from_json else ROWS)]
    text = render(rows)
    print(text, end="")
    if a.publish:
        docgen.publish(CMD, {None: text}, rows)


if __name__ == "__main__":
    main()
