"""A sweep on Ray: the grid's jobs, then its cells, as Ray tasks; the cells' files written by
this driver (once each), then merged by the binary into the reports `compare` writes.

Resuming: cells whose file exists under `<dir>/cells/` are not run again, so an interrupted
sweep goes on where it stopped. Each cell is counted once: its file is written by the driver
alone, from the one result Ray returns for its task, however often the task was retried."""
import json
import os
import pathlib
import sys
import time

import ray

from . import tasks


def plan(binary, grid, sweep_dir, cwd):
    """The grid's plan as `continuum sweep plan` prints it."""
    return json.loads(tasks.run_binary(binary, ["sweep", "plan", grid, "--dir", sweep_dir], cwd))


def cell_path(sweep_dir, cell_id):
    """Where cell `cell_id` (`<report key>/<row>`) lies (as the binary places it)."""
    key, row = cell_id.rsplit("/", 1)
    return pathlib.Path(sweep_dir) / "cells" / key / f"{row}.json"


def write_atomic(path, data):
    """Writes `data` (text or bytes) to `path` whole or not at all."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".tmp{os.getpid()}")
    if isinstance(data, bytes):
        tmp.write_bytes(data)
    else:
        tmp.write_text(data)
    os.replace(tmp, path)


class Progress:
    """`cells done/total` with an ETA from this run's pace, on standard error."""

    def __init__(self, total, done, label):
        self.total, self.done, self.label = total, done, label
        self.start, self.ran = time.monotonic(), 0

    def step(self):
        self.done += 1
        self.ran += 1
        spent = time.monotonic() - self.start
        left = (self.total - self.done) * spent / self.ran
        print(f"[{spent:7.1f} s] {self.label} {self.done}/{self.total} done, ETA {left:.0f} s",
              file=sys.stderr, flush=True)


def run_sweep(binary, grid, sweep_dir, cwd, retries=3, fault_kill_once=None, remote=None):
    """Runs `grid` on the cluster `remote` connects to (ship.Remote) into `sweep_dir`; returns
    the merged index. Shipped, the jobs' outputs come back as bytes and are written here, and the
    cells get a working_dir with them."""
    from .ship import Remote
    remote = remote or Remote(None, binary, cwd, False)
    sweep_dir = str(pathlib.Path(sweep_dir).resolve())
    p = plan(binary, grid, sweep_dir, cwd)
    jobs = [j for j in p["jobs"] if not j["done"]]
    outs = [str(j["out"]) for j in p["jobs"]]
    if jobs:
        rgrid = remote.connect(grid=grid, job_outputs=outs)
        refs = [tasks.submit(remote.binary, ["sweep", "job", rgrid, j["key"]], remote.cwd,
                             cpus=job_threads(j["command"]), retries=retries,
                             collect=[str(j["out"])] if remote.ship else ())
                for j in jobs]
        prog = Progress(len(p["jobs"]), len(p["jobs"]) - len(jobs), "jobs")
        job_of = {ref: str(j["out"]) for ref, j in zip(refs, jobs)}
        while refs:
            ready, refs = ray.wait(refs, num_returns=1)
            res = ray.get(ready[0])
            tasks.report_where(res["where"])
            for name, data in res["files"].items():  # shipped: the job's outputs
                if name == job_of[ready[0]] or name not in outs:
                    write_atomic(pathlib.Path(cwd) / name, data)
            prog.step()
        p = plan(binary, grid, sweep_dir, cwd)
    # Shipped, a working_dir with the jobs' outputs (connecting again if the jobs ran).
    rgrid = remote.connect(grid=grid, job_outputs=outs)
    cells = p["cells"]
    todo = [c for c in cells if not c["done"]]
    print(f"{p['grid']}: {len(cells)} cells, {len(todo)} to run, "
          f"{len(cells) - len(todo)} already written; {ray.cluster_resources().get('CPU', 0):.0f} "
          f"CPUs", file=sys.stderr, flush=True)
    pending = {}
    for c in todo:
        marker = None
        if fault_kill_once == c["id"]:
            marker = str(pathlib.Path(sweep_dir) / "fault-injected")
        ref = tasks.submit(remote.binary, ["sweep", "cell", rgrid, c["id"], "--stdout"],
                           remote.cwd, retries=retries, fault_marker=marker)
        pending[ref] = c["id"]
    prog = Progress(len(cells), len(cells) - len(todo), "cells")
    while pending:
        ready, _ = ray.wait(list(pending), num_returns=1)
        for ref in ready:
            cid = pending.pop(ref)
            res = ray.get(ref)
            tasks.report_where(res["where"])
            text = res["stdout"]
            cell = json.loads(text)
            if cell["cell"]["id"] != cid or cell["digest"] != p["digest"]:
                raise SystemExit(f"cell {cid}: the task returned cell {cell['cell']['id']} "
                                 f"of digest {cell['digest']}, expected {p['digest']}")
            path = cell_path(sweep_dir, cid)
            if not path.exists():
                write_atomic(path, text)
            prog.step()
    tasks.run_binary(binary, ["sweep", "merge", grid, "--dir", sweep_dir], cwd)
    return json.loads((pathlib.Path(sweep_dir) / "sweep.json").read_text())


def job_threads(command):
    """CPUs a job's task holds: its `--threads` (a training's result depends on it)."""
    args = command.split()
    if "--threads" in args:
        return max(1, int(args[args.index("--threads") + 1]))
    return 1
