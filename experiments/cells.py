"""The shared runner of the results modules. Every `continuum compare` they run is a report of
one grid, run by `sweep` (`continuum sweep`, or the Ray driver in python/); `run` and `timed`
run any other command once (a training, a generator, a benchmark). Also what the tables
share: a load's options, a compare report's summary rows, `mean ± sd`."""
import json
import os
import pathlib
import shutil
import statistics
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]


def load_args(load, duration, diurnal_duration):
    """The compare arguments of a load: `--lambda L --duration D`, or the diurnal workload."""
    if load == "diurnal":
        return ["--workload", "workloads/diurnal.yaml", "--duration", str(diurnal_duration)]
    return ["--lambda", load, "--duration", str(duration)]


def load_flags(load, duration, diurnal_duration):
    """A load as a value of a grid axis (its options, labelled by the load): a λ for
    `duration` s, or one period of the diurnal workload (as `load_args`)."""
    if load == "diurnal":
        return {"name": load, "workload": "workloads/diurnal.yaml",
                "duration": float(diurnal_duration)}
    return {"name": load, "lambda": float(load), "duration": float(duration)}


def summary_rows(rows):
    """Each row of a compare report as {policy, success_ratio, p99, job_tail, stream_tail}
    (the tail and tuner tables): the pooled p99 of answered queries, the mean over jobs of each
    job's slowest answer (None in reports without jobs), the p50 over streams of each stream's
    slowest answer."""
    return [dict(policy=r["policy"], success_ratio=r["success_ratio"],
                 p99=r["latency_ms"]["p99"],
                 job_tail=r.get("job_tail_ms", {}).get("mean"),
                 stream_tail=r["stream_tail_ms"]["p50"]) for r in rows]


def success_from(row, t_s):
    """Success % of a compare result row over its windows from `t_s` on (0: the whole run), from
    the per-window counts, so that a warm-up can be left out."""
    w = [x for x in row["per_window"] if x["t_s"] >= t_s]
    return 100 * sum(x["success"] for x in w) / max(1, sum(x["offered"] for x in w))


def cell_key(scale, topology, load):
    """The key of one (capacity scale, topology, load) cell in recorded results."""
    return f"{scale}|{topology}|{load}"


def timed(cmd, env=None, cwd=None):
    """Runs `cmd` once; exits with its standard error when it fails; returns its standard
    output, its standard error and its wall time in seconds."""
    cmd = [str(x) for x in cmd]
    t0 = time.monotonic()
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=cwd)
    wall = time.monotonic() - t0
    if r.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{r.stderr[-3000:]}")
    return r.stdout, r.stderr, wall


def run(cmd, env=None, cwd=None):
    """Runs `cmd` once; exits with its standard error when it fails; returns its standard
    output."""
    return timed(cmd, env, cwd)[0]


def pm(xs, d=2):
    """`mean ± sd` of `xs` with `d` decimals (sd 0 for one value)."""
    sd = statistics.stdev(xs) if len(xs) > 1 else 0.0
    return f"{statistics.mean(xs):.{d}f} ± {sd:.{d}f}"


def driver(address, binary, *args):
    """The command line and environment of the Ray driver (python/continuum_ray) on the
    cluster at `address` (host:port) with `binary`."""
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    return ([sys.executable, "-m", "continuum_ray", "--address", address, "--bin", binary,
             *map(str, args)], env)


def sweep(grid, sweep_dir, binary, ray=None, threads=None, reuse=True):
    """Runs `grid` (a dict in the grid file's shape: name, compare, axes, jobs) with
    `continuum sweep run` (`threads` cells at once), or on the Ray cluster at `ray` (host:port)
    through the driver in python/; returns [(labels, report)] in grid order, labels a dict
    axis → label. Cells already written under `sweep_dir` are reused, unless `reuse` is false
    (then they are deleted and run again); a directory holds one grid."""
    sweep_dir = pathlib.Path(sweep_dir)
    if not reuse:
        shutil.rmtree(sweep_dir, ignore_errors=True)
    sweep_dir.mkdir(parents=True, exist_ok=True)
    path = sweep_dir / "grid.yaml"
    path.write_text(json.dumps(grid, indent=1) + "\n")  # JSON is YAML
    env = None
    if ray:
        cmd, env = driver(ray, binary, "sweep", path, "--dir", sweep_dir)
    else:
        cmd = [binary, "sweep", "run", str(path), "--dir", str(sweep_dir)]
        if threads:
            cmd += ["--threads", str(threads)]
    r = subprocess.run(cmd, env=env, stdout=sys.stderr)  # progress: not part of the tables
    if r.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}")
    index = json.loads((sweep_dir / "sweep.json").read_text())
    return [(dict(e["labels"]), json.loads((sweep_dir / e["results"]).read_text()))
            for e in index["reports"]]


def success_grid(name, cells, seeds, sweep_dir, binary, ray=None, reuse=True):
    """Every cell of `cells` ({cell name: compare options}) on each of `seeds`, as one grid
    named `name` under `sweep_dir`; {cell name: per seed, {row: success %, mean and p99
    latency, rejected %, and of the rejected those refused at binding and those dropped at a
    worker, % of the offered (0 in reports that predate the split)}} (the pull-dispatch
    tables)."""
    grid = {"name": name,
            "axes": [{"cell": [dict(o, name=n) for n, o in cells.items()]},
                     {"seed": [int(s) for s in seeds]}]}
    res = {}
    for labels, r in sweep(grid, sweep_dir, binary, ray=ray, reuse=reuse):
        res.setdefault(labels["cell"], []).append(
            {x["policy"]: dict(success=100 * x["success_ratio"], mean=x["latency_mean_ms"],
                               p99=x["latency_ms"]["p99"],
                               rejected=100 * x["rejected"] / max(1, x["offered"]),
                               at_binding=100 * x.get("rejected_at_binding", 0)
                               / max(1, x["offered"]),
                               at_worker=100 * x.get("rejected_at_worker", 0)
                               / max(1, x["offered"]))
             for x in r["results"]})
    return res

