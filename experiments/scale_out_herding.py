"""Herding: schedulers that share workers and decide on a stale load view (docs/scale-out.md).

G antennas — one scheduler each, as one gateway each in a fleet — share one central office,
one regional DC and the cloud (`continuum topology generate --antennas G --antennas-per-co G
--cos-per-rdc 1`, with the antennas' own compute removed so that every worker is shared). The
total client rate Λ is the same for every G (λ = Λ / G per antenna), so G alone changes how many
schedulers decide on the same published load view; Δ (`--staleness-ms`) is the load
publication period. Every cell is one `compare` run of a grid (`continuum sweep`), seeds 101–105;
success %, mean ± sd.

Usage: python3 -m experiments.scale_out_herding [--totals 120,240] [--gateways 1,2,4,8,16,32]
       [--staleness 10,100,1000,5000] [--publish] [--from-json] [--ray HOST:PORT]

Page: docs/scale-out.md.
"""
import pathlib
import sys

from experiments import cli
from experiments import docgen
from experiments.cells import pm, run, sweep


def parser():
    """The command line: experiments/cli.py's shared flags and this module's own."""
    p = cli.parser("seeds", "duration", "bin", "ray", duration="300", duration_type=str,
                   out="out/herding")
    p.add_argument("--totals", default="120,240", help="total client rates Λ, clients/min")
    p.add_argument("--gateways", default="1,2,4,8,16,32")
    p.add_argument("--staleness", default="10,100,1000,5000", help="publication periods Δ, ms")
    p.add_argument("--policies", default="load-balancing,least-impedance,random-proportional-load,closest")
    return p


def topology(g):
    """Writes the shared topology of `g` antennas (none of them with compute)."""
    path = out / "topologies" / f"shared-{g}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    text = run([a.bin, "topology", "generate", "--antennas", str(g), "--antennas-per-co", str(g),
                "--cos-per-rdc", "1", "--antenna-gpu-share", "0", "--name", f"shared-{g}"])
    lines, in_access = [], False
    for line in text.splitlines():
        if line.startswith("  ") and not line.startswith("    "):
            in_access = line.strip() == "access:"
        if in_access and line.strip().startswith(("capacity:", "deploy:")):
            continue
        lines.append(line)
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def measure():
    gs = [int(g) for g in a.gateways.split(",")]
    paths = {g: topology(g) for g in gs}
    # One load per (Λ, G): G's topology with λ = Λ / G per antenna.
    grid = {
        "name": "herding",
        "compare": {"duration": float(a.duration), "policies": ",".join(POLICIES)},
        "axes": [{"load": [{"name": f"{t}x{g}", "topology": paths[g], "lambda": float(t) / g}
                           for t in a.totals.split(",") for g in gs]},
                 {"staleness-ms": [int(d) for d in a.staleness.split(",")]},
                 {"seed": [int(s) for s in a.seeds.split(",")]}],
    }
    results = {}
    for labels, r in sweep(grid, out / "sweep", a.bin, ray=a.ray):
        total, g = labels["load"].split("x")
        key = f"{total}|{g}|{labels['staleness-ms']}"
        for row in r["results"]:
            results.setdefault(key, {}).setdefault(row["policy"], []).append(
                100 * row["success_ratio"])
    return results


def render(results):
    text = []
    stale = a.staleness.split(",")
    for total in a.totals.split(","):
        text.append(f"**Λ = {total} clients/min in all** (success %, mean ± sd over "
                    f"{len(a.seeds.split(','))} seeds; {a.duration} s runs)\n")
        text.append("| policy | G | " + " | ".join(f"Δ {d} ms" for d in stale) + " |")
        text.append("|---|---|" + "---:|" * len(stale))
        for pol in POLICIES:
            for g in a.gateways.split(","):
                cells = [results[f"{total}|{g}|{d}"][pol] for d in stale]
                text.append(f"| {pol} | {g} | " + " | ".join(pm(c) for c in cells) + " |")
        text.append("")
    return "\n".join(text)


def main(argv=None):
    """Runs the command line `argv` (default: sys.argv[1:])."""
    global POLICIES, a, out
    argv = sys.argv[1:] if argv is None else argv
    a = parser().parse_args(argv)
    CMD = docgen.command(__file__, argv, drop_valued=("--out", "--bin", "--ray"))
    out = pathlib.Path(a.out)
    POLICIES = a.policies.split(",")
    docgen.single_part(CMD, a.from_json, a.publish, measure, render)


if __name__ == "__main__":
    main()
