#!/usr/bin/env python3
"""How the simulator's cost grows with the topology: for N antennas, `continuum topology
generate --antennas N` (full-edge's per-site resources and fan-outs), then one policy at
λ = 60 on one thread. Prints, per N: simulated queries, queries/s per core, the cost per query
relative to N = 16, set-up time (loading the topology: deployment and reach lists) and peak RSS.
Writes docs/scaling.md's table (stdout) and an SVG plot.

Usage: python3 scripts/scaling.py [--sizes 16,64,256,1024,4096] [--duration 120]
       [--policy least-impedance] [--svg docs/scaling.svg]
It needs a release build (`cargo build --release`) and GNU time (/usr/bin/time).
"""
import argparse
import json
import pathlib
import subprocess
import sys
import tempfile
import time

p = argparse.ArgumentParser()
p.add_argument("--sizes", default="16,64,256,1024,4096")
p.add_argument("--duration", type=float, default=120)
p.add_argument("--lambda", dest="lam", type=float, default=60)
p.add_argument("--policy", default="least-impedance")
p.add_argument("--seed", type=int, default=7)
p.add_argument("--bin", default="target/release/continuum")
p.add_argument("--svg", default="docs/scaling.svg")
a = p.parse_args()

tmp = pathlib.Path(tempfile.mkdtemp(prefix="continuum-scaling-"))
rows = []
for n in [int(x) for x in a.sizes.split(",")]:
    topo = tmp / f"isp-{n}.yaml"
    subprocess.run([a.bin, "topology", "generate", "--antennas", str(n), "--seed", "1",
                    "--out", str(topo)], check=True, capture_output=True)
    t0 = time.monotonic()
    r = subprocess.run(["/usr/bin/time", "-f", "%M", a.bin, "simulate", str(topo),
                        "--lambda", str(a.lam), "--duration", str(a.duration), "--seed",
                        str(a.seed), "--policy", a.policy, "--threads", "1", "--format", "json"],
                       capture_output=True, text=True)
    wall = time.monotonic() - t0
    if r.returncode != 0:
        sys.exit(f"N = {n}: {r.stderr}")
    rss_mb = int(r.stderr.strip().splitlines()[-1]) / 1024
    sim = json.loads(r.stdout)["sim"]
    row = dict(n=n, queries=sim["queries"], qps=sim["queries_per_core_s"],
               ns_per_query=1e9 / sim["queries_per_core_s"], setup_s=wall - sim["wall_s"],
               sim_s=sim["wall_s"], rss_mb=rss_mb)
    rows.append(row)
    print(f"N {n}: {row['qps'] / 1e6:.2f} M queries/s, {row['ns_per_query']:.0f} ns/query, "
          f"set-up {row['setup_s']:.2f} s, RSS {rss_mb:.0f} MiB", file=sys.stderr)

base = rows[0]["ns_per_query"]
print(f"One policy (`{a.policy}`), λ = {a.lam:g}, {a.duration:g} s simulated, seed {a.seed}, one "
      f"thread; topologies from `continuum topology generate --antennas N --seed 1`.\n")
print("| antennas N | simulated queries | M queries/s per core | ns per query | vs N = "
      f"{rows[0]['n']} | set-up s | peak RSS MiB |")
print("|---|---|---|---|---|---|---|")
for r in rows:
    print(f"| {r['n']} | {r['queries']:,} | {r['qps'] / 1e6:.2f} | {r['ns_per_query']:.0f} | "
          f"{100 * (r['ns_per_query'] / base - 1):+.0f} % | {r['setup_s']:.2f} | {r['rss_mb']:.0f} |")


def svg(rows, path):
    """Two panels, log2(N) on x: ns per query and peak RSS."""
    import math
    w, h, m = 360, 240, 50
    xs = [math.log2(r["n"]) for r in rows]
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{2 * w}" height="{h}" '
           'font-family="sans-serif" font-size="11">']
    for k, (key, title) in enumerate([("ns_per_query", "ns per simulated query"),
                                      ("rss_mb", "peak RSS, MiB")]):
        ys = [r[key] for r in rows]
        x0 = k * w
        ymax = max(ys) * 1.1 or 1
        def px(x):
            return x0 + m + (x - xs[0]) / max(xs[-1] - xs[0], 1) * (w - 2 * m)
        def py(y):
            return h - m + 10 - y / ymax * (h - 2 * m)
        out.append(f'<text x="{x0 + w / 2}" y="18" text-anchor="middle">{title}</text>')
        out.append(f'<line x1="{x0 + m}" y1="{h - m + 10}" x2="{x0 + w - m}" y2="{h - m + 10}" stroke="black"/>')
        out.append(f'<line x1="{x0 + m}" y1="{h - m + 10}" x2="{x0 + m}" y2="{m - 10}" stroke="black"/>')
        pts = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in zip(xs, ys))
        out.append(f'<polyline points="{pts}" fill="none" stroke="#1f77b4" stroke-width="2"/>')
        for x, y, r in zip(xs, ys, rows):
            out.append(f'<circle cx="{px(x):.1f}" cy="{py(y):.1f}" r="3" fill="#1f77b4"/>')
            out.append(f'<text x="{px(x):.1f}" y="{h - m + 24}" text-anchor="middle">{r["n"]}</text>')
            out.append(f'<text x="{px(x) + 4:.1f}" y="{py(y) - 5:.1f}">{y:.0f}</text>')
        out.append(f'<text x="{x0 + w / 2}" y="{h - 6}" text-anchor="middle">antennas N</text>')
    out.append("</svg>")
    pathlib.Path(path).write_text("\n".join(out))


svg(rows, a.svg)
