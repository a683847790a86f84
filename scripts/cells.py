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
