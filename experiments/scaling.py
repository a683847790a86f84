"""How the simulator's cost grows with the topology: for N antennas, `continuum topology
generate --antennas N` (full-edge's per-site resources and fan-outs), then one policy at
λ = 60 on one thread. Two routing scopes: every worker in the tree reachable (`all`, the
default of a topology file), and a regional scope (`--max-reach-ms 40`: the own regional DC's
sites and the cloud). Prints, per scope and N: simulated queries, queries/s per core, the cost
per query relative to the smallest N, set-up time (loading the topology: deployment and reach
lists) and peak RSS. Writes docs/scaling.md's table (stdout) and an SVG plot.

With --before BIN (another build of continuum, e.g. of an earlier commit) every point is also
run with BIN, interleaved run by run with --bin, and a second table (the part `before-after`)
gives both binaries' ns per query and the change.

Usage: python3 -m experiments.scaling [--sizes 16,64,256,1024,4096] [--duration 60]
       [--scopes all,40] [--max-all 1024] [--repeat 3] [--policy least-impedance] [--svg docs/scaling.svg]
       [--before BIN] [--publish] [--from-json]
It needs a release build (`cargo build --release`) and GNU time (/usr/bin/time), except with
--from-json. --publish records the tables and the measurements under docs/generated/ and
rewrites the docs' blocks that name this command (experiments/docgen.py); --from-json prints the
tables again from those recorded measurements without running anything (and, given --svg,
draws the plot from them).

Page: docs/scaling.md.
"""
import json
import math
import pathlib
import sys
import tempfile

from experiments import cli
from experiments import docgen
from experiments.cells import run, timed


def parser():
    """The command line: experiments/cli.py's shared flags and this module's own."""
    p = cli.parser("duration", "bin", duration=60)
    p.add_argument("--sizes", default="16,64,256,1024,4096")
    p.add_argument("--lambda", dest="lam", type=float, default=60)
    p.add_argument("--policy", default="least-impedance")
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--scopes", default="all,40",
                   help="routing scopes: `all` or a max_reach_ms value, comma-separated")
    p.add_argument("--max-all", type=int, default=1024,
                   help="largest N run with every worker reachable (reach lists grow as N²)")
    p.add_argument("--repeat", type=int, default=3,
                   help="runs per point; the fastest is kept (a shared machine's noise only slows)")
    p.add_argument("--svg", help="where the plot goes (default docs/scaling.svg; with --from-json, "
                   "only when given)")
    p.add_argument("--before", help="a second binary, run interleaved with --bin")
    return p


def simulate(binary, topo):
    """One run: its row (queries, speed, set-up time, peak RSS)."""
    stdout, stderr, wall = timed(["/usr/bin/time", "-f", "%M", binary, "simulate", topo,
                                  "--lambda", a.lam, "--duration", a.duration, "--seed", a.seed,
                                  "--policy", a.policy, "--threads", "1", "--format", "json"])
    rss_mb = int(stderr.strip().splitlines()[-1]) / 1024
    sim = json.loads(stdout)["sim"]
    return dict(queries=sim["queries"], qps=sim["queries_per_core_s"],
                ns_per_query=1e9 / sim["queries_per_core_s"],
                setup_s=wall - sim["wall_s"], rss_mb=rss_mb)


def measure():
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="continuum-scaling-"))
    series, before = {}, {}
    for scope in a.scopes.split(","):
        rows, old = [], []
        for n in [int(x) for x in a.sizes.split(",")]:
            if scope == "all" and n > a.max_all:
                continue
            topo = tmp / f"isp-{scope}-{n}.yaml"
            gen = [a.bin, "topology", "generate", "--antennas", str(n), "--seed", "1", "--out",
                   str(topo)]
            if scope != "all":
                gen += ["--max-reach-ms", scope]
            run(gen)
            row = prev = None
            for _ in range(max(a.repeat, 1)):
                if a.before:
                    one = simulate(a.before, topo)
                    if prev is None or one["ns_per_query"] < prev["ns_per_query"]:
                        prev = one
                one = simulate(a.bin, topo)
                if row is None or one["ns_per_query"] < row["ns_per_query"]:
                    row = one
            row["n"] = n
            rows.append(row)
            if prev is not None:
                prev["n"] = n
                old.append(prev)
            print(f"{scope} N {n}: {row['qps'] / 1e6:.2f} M queries/s, {row['ns_per_query']:.0f} "
                  f"ns/query, set-up {row['setup_s']:.2f} s, RSS {row['rss_mb']:.0f} MiB",
                  file=sys.stderr)
        series[scope] = rows
        if old:
            before[scope] = old
    return {"series": series, "before": before}


# The look of continuum's Rust figures (crates/plot): font, sizes in px, colours, margin.
FONT = "sans-serif"
TITLE_PX, AXIS_PX, TICK_PX, LEGEND_PX = 17.7, 13.7, 12.1, 12.1
PALETTE = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9"]
MARGIN = 0.06


def zoomed(values):
    """The range an axis shows: the values' span widened by MARGIN on both sides."""
    lo, hi = min(values), max(values)
    if hi - lo <= 1e-9 * max(abs(hi), 1):
        d = 0.05 * abs(hi) if hi else 0.5
        return lo - d, hi + d
    return lo - MARGIN * (hi - lo), hi + MARGIN * (hi - lo)


def ticks(lo, hi, most=7):
    """Round tick values (1, 2 or 5 × 10^k apart, at most `most`) in [lo, hi], and the decimals
    their step needs."""
    span = hi - lo
    for step in (m * 10 ** e for e in range(math.floor(math.log10(span)) - 2,
                                            math.floor(math.log10(span)) + 2)
                 for m in (1, 2, 5)):
        first = math.ceil(lo / step - 1e-9)
        last = math.floor(hi / step + 1e-9)
        if last - first + 1 <= most:
            return [k * step for k in range(first, last + 1)], max(0, math.ceil(-math.log10(step) - 1e-6))
    return [lo, hi], 2


def svg(series, path):
    """Two panels, log2(N) on x: ns per query and peak RSS; one line per routing scope, each
    point marked; y zoomed to the data with round ticks; the legend under the panels."""
    w, h = 500, 360            # one panel
    left, right, top, bottom = 78, 24, 44, 62   # its margins around the plot area
    ns = sorted({r["n"] for rows in series.values() for r in rows})
    lo, hi = math.log2(ns[0]), math.log2(ns[-1])
    legend_h = 28
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{2 * w}" height="{h + legend_h}" '
           f'font-family="{FONT}">',
           f'<rect width="{2 * w}" height="{h + legend_h}" fill="white"/>']
    for k, (key, title, desc) in enumerate([
            ("ns_per_query", "Cost per simulated query", "ns per simulated query (ns)"),
            ("rss_mb", "Peak memory", "peak RSS (MiB)")]):
        x0 = k * w
        y_lo, y_hi = zoomed([r[key] for rows in series.values() for r in rows])
        y_ticks, dec = ticks(y_lo, y_hi)
        pl, pr, pt, pb = x0 + left, x0 + w - right, top, h - bottom

        def px(n):
            return pl + (math.log2(n) - lo) / max(hi - lo, 1) * (pr - pl)

        def py(y):
            return pb - (y - y_lo) / (y_hi - y_lo) * (pb - pt)
        out.append(f'<text x="{(pl + pr) / 2}" y="24" text-anchor="middle" '
                   f'font-size="{TITLE_PX}">{title}</text>')
        for y in y_ticks:
            out.append(f'<line x1="{pl}" y1="{py(y):.1f}" x2="{pr}" y2="{py(y):.1f}" '
                       'stroke="black" stroke-opacity="0.1"/>')
            out.append(f'<line x1="{pl - 5}" y1="{py(y):.1f}" x2="{pl}" y2="{py(y):.1f}" '
                       'stroke="black"/>')
            out.append(f'<text x="{pl - 8}" y="{py(y):.1f}" dy="0.35em" text-anchor="end" '
                       f'font-size="{TICK_PX}">{y:.{dec}f}</text>')
        out.append(f'<polyline points="{pl},{pt} {pl},{pb} {pr},{pb}" fill="none" '
                   'stroke="black"/>')
        for n in ns:
            out.append(f'<line x1="{px(n):.1f}" y1="{pb}" x2="{px(n):.1f}" y2="{pb + 5}" '
                       'stroke="black"/>')
            out.append(f'<text x="{px(n):.1f}" y="{pb + 8}" dy="0.8em" text-anchor="middle" '
                       f'font-size="{TICK_PX}">{n}</text>')
        out.append(f'<text x="{(pl + pr) / 2}" y="{h - 14}" text-anchor="middle" '
                   f'font-size="{AXIS_PX}">antennas N (log scale)</text>')
        out.append(f'<text transform="translate({x0 + 18},{(pt + pb) / 2}) rotate(-90)" '
                   f'text-anchor="middle" font-size="{AXIS_PX}">{desc}</text>')
        for c, rows in zip(PALETTE, series.values()):
            pts = " ".join(f"{px(r['n']):.1f},{py(r[key]):.1f}" for r in rows)
            out.append(f'<polyline points="{pts}" fill="none" stroke="{c}" stroke-width="3"/>')
            for r in rows:
                out.append(f'<circle cx="{px(r["n"]):.1f}" cy="{py(r[key]):.1f}" r="5" '
                           f'fill="{c}"/>')
    x = left
    for c, scope in zip(PALETTE, series):
        label = "every worker reachable" if scope == "all" else f"regional: max_reach_ms {scope}"
        y = h + legend_h / 2 - 6
        out.append(f'<line x1="{x}" y1="{y}" x2="{x + 26}" y2="{y}" stroke="{c}" '
                   'stroke-width="3"/>')
        out.append(f'<text x="{x + 34}" y="{y}" dy="0.35em" font-size="{LEGEND_PX}" '
                   f'font-weight="bold">{label}</text>')
        x += 34 + 8 * len(label) + 40
    out.append("</svg>")
    pathlib.Path(path).write_text("\n".join(out) + "\n")


def render(measured):
    """The table of the measurements, and where a --before binary ran, the before → after
    table: {part: text}."""
    series = measured["series"]
    text = []
    text.append(f"One policy (`{a.policy}`), λ = {a.lam:g}, {a.duration:g} s simulated, seed {a.seed}, one "
                f"thread, fastest of {a.repeat} runs per point; topologies from `continuum topology generate --antennas N --seed 1` "
                f"[`--max-reach-ms M`].\n")
    text.append("| reach | antennas N | simulated queries | M queries/s per core | ns per query | vs "
                "smallest N | set-up s | peak RSS MiB |")
    text.append("|---|---|---|---|---|---|---|---|")
    for scope, rows in series.items():
        base = rows[0]["ns_per_query"]
        label = "every worker" if scope == "all" else f"≤ {scope} ms"
        for r in rows:
            text.append(f"| {label} | {r['n']} | {r['queries']:,} | {r['qps'] / 1e6:.2f} | "
                        f"{r['ns_per_query']:.0f} | {100 * (r['ns_per_query'] / base - 1):+.0f} % | "
                        f"{r['setup_s']:.2f} | {r['rss_mb']:.0f} |")
    parts = {None: "\n".join(text) + "\n"}
    if measured["before"]:
        ba = [f"Before → after: the binary of --before and that of --bin interleaved run by run, "
              f"fastest of {a.repeat} each; ns per simulated query.", "",
              "| reach | antennas N | before | after | change |", "|---|---|---|---|---|"]
        for scope, old in measured["before"].items():
            label = "every worker" if scope == "all" else f"≤ {scope} ms"
            for o, r in zip(old, series[scope]):
                ba.append(f"| {label} | {r['n']} | {o['ns_per_query']:.0f} | {r['ns_per_query']:.0f} | "
                          f"{100 * (r['ns_per_query'] / o['ns_per_query'] - 1):+.0f} % |")
        parts["before-after"] = "\n".join(ba) + "\n"
    return parts


def main(argv=None):
    """Runs the command line `argv` (default: sys.argv[1:])."""
    global a
    argv = sys.argv[1:] if argv is None else argv
    a = parser().parse_args(argv)
    # The measurements do not depend on where the plot goes: --svg is left out of the command.
    CMD = docgen.command(__file__, argv, drop_valued=("--out", "--bin", "--svg"))
    if a.from_json:
        measured = docgen.load_results(CMD)
        if measured is None:
            sys.exit(f"no recorded measurements of `{CMD}` ({docgen.results_path(CMD)}): run it "
                     "without --from-json")
    else:
        measured = measure()
    parts = render(measured)
    print("\n".join(parts.values()), end="")
    if not a.from_json or a.svg:
        svg(measured["series"], a.svg or "docs/scaling.svg")
    if a.publish:
        docgen.publish(CMD, parts, measured)


if __name__ == "__main__":
    main()
