"""Speed-up on Ray with N worker processes on one machine (N = 1, 2) against the same work run
here (`--threads N`), for a sweep (config/grids/scaling.yaml) and for meta-training (its inner
loops as Ray tasks); every distributed result is checked equal to the local one (the sweep's
reports but for timings, the meta-trained checkpoint bit for bit). Also prints the figures of
the cost model (docs/scale-out.md): cells and their bytes, θ's bytes per inner task.

Each Ray head is started here on 127.0.0.1 only (`--num-cpus N`) and stopped after its runs.

Usage: python3 -m experiments.scale_out_ray [--bin target/release/continuum]
       [--out out/ray-scaling] [--publish] [--from-json]
--publish records the table and the timings under docs/generated/ and rewrites the blocks of
docs/scale-out.md that name this command (experiments/docgen.py); --from-json prints them again
from the recorded timings without running anything. Timings depend on the machine and on what
else runs on it: run it on an idle machine. A timing benchmark, not a table of compare runs: it
times each command itself (`cells.timed`; the driver as `cells.sweep` starts it).

Page: docs/scale-out.md (quoted in its prose).
"""
import json
import os
import shutil
import socket
import subprocess
import sys

from experiments import cli
from experiments import docgen
from experiments.cells import ROOT, driver, run, timed


def parser():
    """The command line: experiments/cli.py's shared flags and this module's own."""
    p = cli.parser("bin", out="out/ray-scaling")
    p.add_argument("--grid", default="config/grids/scaling.yaml")
    p.add_argument("--meta", default="config/meta-scaling.yaml")
    p.add_argument("--workers", default="1,2")
    return p


TIMINGS = {"wall_s", "queries_per_core_s", "x_real_time_per_core", "threads"}


def seconds(cmd, env=None):
    """The wall time of `cmd`, run in the repository root."""
    return timed(cmd, env, ROOT)[2]


def reports(d):
    index = json.loads((d / "sweep.json").read_text())
    rs = []
    for e in index["reports"]:
        r = json.loads((d / e["results"]).read_text())
        r["sim"] = {k: v for k, v in r["sim"].items() if k not in TIMINGS}
        rs.append(r)
    return rs


def on_ray(port, *args):
    """The wall time of the Ray driver's command `args` on the head at `port`."""
    return seconds(*driver(f"127.0.0.1:{port}", binary, *args))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def measure():
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    workers = [int(n) for n in a.workers.split(",")]
    rows = []
    base_sweep = base_meta = None
    for n in workers:
        d = out / f"local-{n}"
        ts = seconds([binary, "sweep", "run", a.grid, "--dir", d, "--threads", n])
        tm = seconds([binary, "meta-train", *META, "--threads", n, "--out",
                      out / f"meta-local-{n}.dqn"])
        if base_sweep is None:
            base_sweep, base_meta = reports(d), (out / f"meta-local-{n}.dqn").read_bytes()
        assert reports(d) == base_sweep, f"local sweep on {n} threads differs"
        assert (out / f"meta-local-{n}.dqn").read_bytes() == base_meta
        rows.append((f"this machine, `--threads {n}`", ts, tm))
        print(f"{rows[-1][0]}: sweep {ts:.1f} s, meta-train {tm:.1f} s", file=sys.stderr, flush=True)
    for n in workers:
        port = free_port()
        env = dict(os.environ, RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER="0")
        seconds(["ray", "start", "--head", "--num-cpus", n, "--node-ip-address", "127.0.0.1",
                 "--port", port, "--include-dashboard", "false", "--disable-usage-stats",
                 "--temp-dir", out / "ray"], env=env)
        try:
            d = out / f"ray-{n}"
            ts = on_ray(port, "sweep", a.grid, "--dir", d)
            tm = on_ray(port, "meta-train", "--", *META, "--out", out / f"meta-ray-{n}.dqn")
        finally:
            subprocess.run(["ray", "stop", "--force"], capture_output=True)
        assert reports(d) == base_sweep, f"the Ray sweep with {n} workers differs from the local one"
        assert (out / f"meta-ray-{n}.dqn").read_bytes() == base_meta, "meta-train on Ray differs"
        rows.append((f"Ray, {n} worker process{'es' if n > 1 else ''}", ts, tm))
        print(f"{rows[-1][0]}: sweep {ts:.1f} s, meta-train {tm:.1f} s", file=sys.stderr, flush=True)
    plan = json.loads(run([binary, "sweep", "plan", a.grid], cwd=ROOT))
    cells = list((out / f"local-{workers[0]}" / "cells").rglob("*.json"))
    theta = out / f"meta-local-{workers[0]}.dqn"
    return {"rows": rows, "cells": len(plan["cells"]),
            "reports": len({c["report"] for c in plan["cells"]}),
            "cell_kib": sum(c.stat().st_size for c in cells) / len(cells) / 1024,
            "theta_kib": theta.stat().st_size / 1024, "cores": os.cpu_count()}


def render(res):
    rows, first = res["rows"], res["rows"][0]
    lines = [f"sweep: {a.grid}, {res['cells']} cells in {res['reports']} reports; meta-train: "
             f"config/meta-inner.yaml with {a.meta}; a machine of {res['cores']} cores\n",
             "| runs on | sweep, s | speed-up | meta-train, s | speed-up |", "|---|---:|---:|---:|---:|"]
    for name, ts, tm in rows:
        lines.append(f"| {name} | {ts:.1f} | ×{first[1] / ts:.2f} | {tm:.1f} | ×{first[2] / tm:.2f} |")
    lines.append("\nEvery run's reports equal (timings aside); every meta-trained checkpoint identical.")
    lines.append(f"Cost model: {res['cells']} cells, {res['cell_kib']:.0f} KiB of JSON back per cell "
                 f"on average; θ is {res['theta_kib']:.0f} KiB, sent to each inner task and "
                 "returned by it.")
    last = rows[-1]
    head = (f"Ray on one machine, {last[0]} | sweep ×{first[1] / last[1]:.2f}, meta-train "
            f"×{first[2] / last[2]:.2f} over `--threads 1`; reports equal and checkpoints identical "
            "to the local runs\n")
    return "\n".join(lines) + "\n", head


def main(argv=None):
    """Runs the command line `argv` (default: sys.argv[1:])."""
    global META, a, binary, out
    argv = sys.argv[1:] if argv is None else argv
    a = parser().parse_args(argv)
    # One core per cell, task or inner training (the network's matrix products would otherwise take
    # every core), so that N counts cores; Ray's workers inherit it from the head started below.
    os.environ["RAYON_NUM_THREADS"] = "1"
    CMD = docgen.command(__file__, argv)
    out = (ROOT / a.out).resolve()
    binary = str((ROOT / a.bin).resolve())
    META = ["--config", "config/meta-inner.yaml", "--meta", a.meta, "--seed", "1"]
    res = docgen.recorded_or_exit(CMD) if a.from_json else measure()
    text, head = render(res)
    print(text, end="")
    if a.publish:
        docgen.publish(CMD, {None: text, "headline": head}, res)


if __name__ == "__main__":
    main()
