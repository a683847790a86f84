"""Shared by the results scripts: one `continuum compare` cell — a load (a λ, or `diurnal`: one
period of workloads/diurnal.yaml) run once, its JSON kept on disk."""
import json
import subprocess


def load_args(load, duration, diurnal_duration):
    """The compare arguments of a load: `--lambda L --duration D`, or the diurnal workload."""
    if load == "diurnal":
        return ["--workload", "workloads/diurnal.yaml", "--duration", str(diurnal_duration)]
    return ["--lambda", load, "--duration", str(duration)]


def run_json(args, path):
    """Runs `args` (a compare with `--format json`), writes its output to `path` and returns
    its results rows."""
    text = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    path.write_text(text)
    return json.loads(text)["results"]


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


def run(cmd):
    """Runs `cmd`; exits with its standard error when it fails; returns its standard output."""
    import sys
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{r.stderr}")
    return r.stdout


def pm(xs, d=2):
    """`mean ± sd` of `xs` with `d` decimals (sd 0 for one value)."""
    import statistics
    sd = statistics.stdev(xs) if len(xs) > 1 else 0.0
    return f"{statistics.mean(xs):.{d}f} ± {sd:.{d}f}"


def sweep(grid, sweep_dir, binary, ray=None, threads=None):
    """Runs `grid` (a dict in the grid file's shape: name, compare, axes, jobs) with
    `continuum sweep run`, or on the Ray cluster at `ray` (host:port) through the driver in
    python/; returns [(labels, report)] in grid order, labels a dict axis → label. Cells
    already written under `sweep_dir` are reused (delete it to run again)."""
    import os
    import pathlib
    import sys
    sweep_dir = pathlib.Path(sweep_dir)
    sweep_dir.mkdir(parents=True, exist_ok=True)
    path = sweep_dir / "grid.yaml"
    path.write_text(json.dumps(grid, indent=1) + "\n")  # JSON is YAML
    if ray:
        root = pathlib.Path(__file__).resolve().parents[1]
        env = dict(os.environ, PYTHONPATH=str(root / "python"))
        cmd = [sys.executable, "-m", "continuum_ray", "--address", ray, "--bin", binary,
               "sweep", str(path), "--dir", str(sweep_dir)]
        r = subprocess.run(cmd, env=env, stdout=sys.stderr)
    else:
        cmd = [binary, "sweep", "run", str(path), "--dir", str(sweep_dir)]
        if threads:
            cmd += ["--threads", str(threads)]
        r = subprocess.run(cmd, stdout=sys.stderr)  # jobs' messages: not part of the tables
    if r.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}")
    index = json.loads((sweep_dir / "sweep.json").read_text())
    return [(dict(e["labels"]), json.loads((sweep_dir / e["results"]).read_text()))
            for e in index["reports"]]
