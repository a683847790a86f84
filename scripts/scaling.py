#!/usr/bin/env python3
"""How the simulator's cost grows with the topology: for N antennas, `continuum topology
generate --antennas N` (full-edge's per-site resources and fan-outs), then one policy at
λ = 60 on one thread. Two routing scopes: every worker in the tree reachable (`all`, the
default of a topology file), and a regional scope (`--max-reach-ms 40`: the own regional DC's
sites and the cloud). Prints, per scope and N: simulated queries, queries/s per core, the cost
per query relative to the smallest N, set-up time (loading the topology: deployment and reach
lists) and peak RSS. Writes docs/scaling.md's table (stdout) and an SVG plot.

Usage: python3 scripts/scaling.py [--sizes 16,64,256,1024,4096] [--duration 60]
       [--scopes all,40] [--max-all 1024] [--repeat 3] [--policy least-impedance] [--svg docs/scaling.svg]
It needs a release build (`cargo build --release`) and GNU time (/usr/bin/time).
"""
import argparse
import json
import math
import pathlib
import subprocess
import sys
import tempfile
import time

p = argparse.ArgumentParser()
p.add_argument("--sizes", default="16,64,256,1024,4096")
p.add_argument("--duration", type=float, default=60)
p.add_argument("--lambda", dest="lam", type=float, default=60)
p.add_argument("--policy", default="least-impedance")
p.add_argument("--seed", type=int, default=7)
p.add_argument("--scopes", default="all,40",
               help="routing scopes: `all` or a max_reach_ms value, comma-separated")
p.add_argument("--max-all", type=int, default=1024,
               help="largest N run with every worker reachable (reach lists grow as N²)")
p.add_argument("--repeat", type=int, default=3,
               help="runs per point; the fastest is kept (a shared machine's noise only slows)")
p.add_argument("--bin", default="target/release/continuum")
p.add_argument("--svg", default="docs/scaling.svg")
a = p.parse_args()

tmp = pathlib.Path(tempfile.mkdtemp(prefix="continuum-scaling-"))
series = {}
for scope in a.scopes.split(","):
    rows = []
    for n in [int(x) for x in a.sizes.split(",")]:
        if scope == "all" and n > a.max_all:
            continue
        topo = tmp / f"isp-{scope}-{n}.yaml"
        gen = [a.bin, "topology", "generate", "--antennas", str(n), "--seed", "1", "--out",
               str(topo)]
        if scope != "all":
            gen += ["--max-reach-ms", scope]
        subprocess.run(gen, check=True, capture_output=True)
        row = None
        for _ in range(max(a.repeat, 1)):
            t0 = time.monotonic()
            r = subprocess.run(["/usr/bin/time", "-f", "%M", a.bin, "simulate", str(topo),
                                "--lambda", str(a.lam), "--duration", str(a.duration), "--seed",
                                str(a.seed), "--policy", a.policy, "--threads", "1", "--format",
                                "json"], capture_output=True, text=True)
            wall = time.monotonic() - t0
            if r.returncode != 0:
                sys.exit(f"N = {n}: {r.stderr}")
            rss_mb = int(r.stderr.strip().splitlines()[-1]) / 1024
            sim = json.loads(r.stdout)["sim"]
            run = dict(n=n, queries=sim["queries"], qps=sim["queries_per_core_s"],
                       ns_per_query=1e9 / sim["queries_per_core_s"],
                       setup_s=wall - sim["wall_s"], rss_mb=rss_mb)
            if row is None or run["ns_per_query"] < row["ns_per_query"]:
                row = run
        rows.append(row)
        print(f"{scope} N {n}: {row['qps'] / 1e6:.2f} M queries/s, {row['ns_per_query']:.0f} "
              f"ns/query, set-up {row['setup_s']:.2f} s, RSS {row['rss_mb']:.0f} MiB",
              file=sys.stderr)
    series[scope] = rows

print(f"One policy (`{a.policy}`), λ = {a.lam:g}, {a.duration:g} s simulated, seed {a.seed}, one "
      f"thread, fastest of {a.repeat} runs per point; topologies from `continuum topology generate --antennas N --seed 1` "
      f"[`--max-reach-ms M`].\n")
print("| reach | antennas N | simulated queries | M queries/s per core | ns per query | vs "
      "smallest N | set-up s | peak RSS MiB |")
print("|---|---|---|---|---|---|---|---|")
for scope, rows in series.items():
    base = rows[0]["ns_per_query"]
    label = "every worker" if scope == "all" else f"≤ {scope} ms"
    for r in rows:
        print(f"| {label} | {r['n']} | {r['queries']:,} | {r['qps'] / 1e6:.2f} | "
              f"{r['ns_per_query']:.0f} | {100 * (r['ns_per_query'] / base - 1):+.0f} % | "
              f"{r['setup_s']:.2f} | {r['rss_mb']:.0f} |")


def svg(series, path):
    """Two panels, log2(N) on x: ns per query and peak RSS; one line per routing scope."""
    w, h, m = 360, 240, 50
    colours = ["#1f77b4", "#d62728", "#2ca02c"]
    ns = sorted({r["n"] for rows in series.values() for r in rows})
    lo, hi = math.log2(ns[0]), math.log2(ns[-1])
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{2 * w}" height="{h + 20}" '
           'font-family="sans-serif" font-size="11">']
    for k, (key, title) in enumerate([("ns_per_query", "ns per simulated query"),
                                      ("rss_mb", "peak RSS, MiB")]):
        x0 = k * w
        ymax = max(r[key] for rows in series.values() for r in rows) * 1.1 or 1

        def px(n):
            return x0 + m + (math.log2(n) - lo) / max(hi - lo, 1) * (w - 2 * m)

        def py(y):
            return h - m + 10 - y / ymax * (h - 2 * m)
        out.append(f'<text x="{x0 + w / 2}" y="18" text-anchor="middle">{title}</text>')
        out.append(f'<line x1="{x0 + m}" y1="{h - m + 10}" x2="{x0 + w - m}" y2="{h - m + 10}" '
                   'stroke="black"/>')
        out.append(f'<line x1="{x0 + m}" y1="{h - m + 10}" x2="{x0 + m}" y2="{m - 10}" '
                   'stroke="black"/>')
        for n in ns:
            out.append(f'<text x="{px(n):.1f}" y="{h - m + 24}" text-anchor="middle">{n}</text>')
        for c, (scope, rows) in zip(colours, series.items()):
            pts = " ".join(f"{px(r['n']):.1f},{py(r[key]):.1f}" for r in rows)
            out.append(f'<polyline points="{pts}" fill="none" stroke="{c}" stroke-width="2"/>')
            for r in rows:
                out.append(f'<circle cx="{px(r["n"]):.1f}" cy="{py(r[key]):.1f}" r="3" '
                           f'fill="{c}"/>')
                out.append(f'<text x="{px(r["n"]) + 4:.1f}" y="{py(r[key]) - 5:.1f}">'
                           f'{r[key]:.0f}</text>')
        out.append(f'<text x="{x0 + w / 2}" y="{h - 6}" text-anchor="middle">antennas N</text>')
    for i, (c, scope) in enumerate(zip(colours, series)):
        label = "every worker reachable" if scope == "all" else f"max_reach_ms {scope}"
        out.append(f'<text x="{m + i * 220}" y="{h + 14}" fill="{c}">— {label}</text>')
    out.append("</svg>")
    pathlib.Path(path).write_text("\n".join(out))


svg(series, a.svg)
