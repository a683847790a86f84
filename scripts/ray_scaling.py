#!/usr/bin/env python3
"""Speed-up on Ray with N worker processes on one machine (N = 1, 2) against the same work run
here (`--threads N`), for a sweep (config/grids/scaling.yaml) and for meta-training (its inner
loops as Ray tasks); every distributed result is checked equal to the local one (the sweep's
reports but for timings, the meta-trained checkpoint bit for bit). Also prints the figures of
the cost model (docs/scale-out.md): cells and their bytes, θ's bytes per inner task.

Each Ray head is started here on 127.0.0.1 only (`--num-cpus N`) and stopped after its runs.

Usage: python3 scripts/ray_scaling.py [--bin target/release/continuum] [--out out/ray-scaling]
"""
import argparse
import json
import os
import pathlib
import shutil
import socket
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
# One core per cell, task or inner training (the network's matrix products would otherwise take
# every core), so that N counts cores; Ray's workers inherit it from the head started below.
os.environ["RAYON_NUM_THREADS"] = "1"
p = argparse.ArgumentParser()
p.add_argument("--bin", default="target/release/continuum")
p.add_argument("--out", default="out/ray-scaling")
p.add_argument("--grid", default="config/grids/scaling.yaml")
p.add_argument("--meta", default="config/meta-scaling.yaml")
p.add_argument("--workers", default="1,2")
a = p.parse_args()
out = (ROOT / a.out).resolve()
binary = str((ROOT / a.bin).resolve())
TIMINGS = {"wall_s", "queries_per_core_s", "x_real_time_per_core", "threads"}
META = ["--config", "config/meta-inner.yaml", "--meta", a.meta, "--seed", "1"]


def run(cmd, env=None):
    t = time.monotonic()
    r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, env=env)
    if r.returncode != 0:
        sys.exit(f"failed: {' '.join(map(str, cmd))}\n{r.stderr[-3000:]}")
    return time.monotonic() - t


def reports(d):
    index = json.loads((d / "sweep.json").read_text())
    rs = []
    for e in index["reports"]:
        r = json.loads((d / e["results"]).read_text())
        r["sim"] = {k: v for k, v in r["sim"].items() if k not in TIMINGS}
        rs.append(r)
    return rs


def driver(port, *args):
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    return run([sys.executable, "-m", "continuum_ray", "--address", f"127.0.0.1:{port}",
                "--bin", binary, *args], env=env)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


shutil.rmtree(out, ignore_errors=True)
out.mkdir(parents=True)
workers = [int(n) for n in a.workers.split(",")]
rows = []
base_sweep = base_meta = None
for n in workers:
    d = out / f"local-{n}"
    ts = run([binary, "sweep", "run", a.grid, "--dir", d, "--threads", str(n)])
    tm = run([binary, "meta-train", *META, "--threads", str(n), "--out", out / f"meta-local-{n}.dqn"])
    if base_sweep is None:
        base_sweep, base_meta = reports(d), (out / f"meta-local-{n}.dqn").read_bytes()
    assert reports(d) == base_sweep, f"local sweep on {n} threads differs"
    assert (out / f"meta-local-{n}.dqn").read_bytes() == base_meta
    rows.append((f"this machine, --threads {n}", ts, tm))
    print(f"{rows[-1][0]}: sweep {ts:.1f} s, meta-train {tm:.1f} s", file=sys.stderr, flush=True)
for n in workers:
    port = free_port()
    env = dict(os.environ, RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER="0")
    run(["ray", "start", "--head", "--num-cpus", str(n), "--node-ip-address", "127.0.0.1",
         "--port", str(port), "--include-dashboard", "false", "--disable-usage-stats",
         "--temp-dir", str(out / "ray")], env=env)
    try:
        d = out / f"ray-{n}"
        ts = driver(port, "sweep", a.grid, "--dir", str(d))
        tm = driver(port, "meta-train", "--", *META, "--out", str(out / f"meta-ray-{n}.dqn"))
    finally:
        subprocess.run(["ray", "stop", "--force"], capture_output=True)
    assert reports(d) == base_sweep, f"the Ray sweep with {n} workers differs from the local one"
    assert (out / f"meta-ray-{n}.dqn").read_bytes() == base_meta, "meta-train on Ray differs"
    rows.append((f"Ray, {n} worker process{'es' if n > 1 else ''}", ts, tm))
    print(f"{rows[-1][0]}: sweep {ts:.1f} s, meta-train {tm:.1f} s", file=sys.stderr, flush=True)

plan = json.loads(subprocess.run([binary, "sweep", "plan", a.grid], cwd=ROOT, check=True,
                                 capture_output=True, text=True).stdout)
cells = list((out / f"local-{workers[0]}" / "cells").rglob("*.json"))
size = sum(c.stat().st_size for c in cells) / len(cells)
theta = out / f"meta-local-{workers[0]}.dqn"
first = rows[0]
reports_n = len({c["report"] for c in plan["cells"]})
print(f"sweep: {a.grid}, {len(plan['cells'])} cells in {reports_n} reports; meta-train: "
      f"config/meta-inner.yaml with {a.meta}\n")
print("| runs on | sweep, s | speed-up | meta-train, s | speed-up |")
print("|---|---:|---:|---:|---:|")
for name, ts, tm in rows:
    print(f"| {name} | {ts:.1f} | ×{first[1] / ts:.2f} | {tm:.1f} | ×{first[2] / tm:.2f} |")
print(f"\nEvery run's reports equal (timings aside); every meta-trained checkpoint identical.")
print(f"Cost model: {len(plan['cells'])} cells, {size / 1024:.0f} KiB of JSON back per cell on "
      f"average; θ is {theta.stat().st_size / 1024:.0f} KiB, sent to each inner task and "
      f"returned by it.")
