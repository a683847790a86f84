#!/usr/bin/env python3
"""The Ray driver on a loopback head (run by .ci/run): a 12-cell sweep equals the local run
(timings aside) although one task's Ray worker is killed mid-run and retried; an interrupted
sweep resumes from the cells written; meta-training with its inner loops on Ray writes the same
checkpoint as the local run; Ape-X training with its actors on Ray writes the same checkpoint as
with its actors on threads. Shipped (`--ship`: the binary and inputs as Ray packages), the
sweep, run by a driver whose checkout, binary and grid lie at paths no task is told, gives the
same reports, its tasks running Ray's unpacked copy; so does the Ape-X training, its config
outside the checkout. The head listens on 127.0.0.1 only and is stopped at the end.

usage: python3 python/tests/ray_check.py [--bin target/debug/continuum]"""
import argparse
import json
import os
import pathlib
import shutil
import socket
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[2]
TIMINGS = {"wall_s", "queries_per_core_s", "x_real_time_per_core", "threads"}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def results_only(report):
    report = dict(report)
    report["sim"] = {k: v for k, v in report["sim"].items() if k not in TIMINGS}
    return report


def run(cmd, **kw):
    r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        sys.exit(f"failed: {' '.join(map(str, cmd))}\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}")
    return r


def driver(binary, port, *args, by_env=False):
    """The Ray driver on the head at `port`: named by --address, or (`by_env`) by RAY_ADDRESS."""
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    address = []
    if by_env:
        env["RAY_ADDRESS"] = f"127.0.0.1:{port}"
    else:
        address = ["--address", f"127.0.0.1:{port}"]
    return run([sys.executable, "-m", "continuum_ray", *address, "--bin", binary, *args],
               env=env)


def same(a, b):
    """The sweeps under `a` and `b` merged the same reports (timings aside); their count."""
    ia = json.loads((a / "sweep.json").read_text())
    ib = json.loads((b / "sweep.json").read_text())
    assert [e["key"] for e in ia["reports"]] == [e["key"] for e in ib["reports"]]
    for e in ia["reports"]:
        ra = json.loads((a / e["results"]).read_text())
        rb = json.loads((b / e["results"]).read_text())
        assert results_only(ra) == results_only(rb), f"report {e['key']} differs"
        assert (a / e["results"]).with_suffix(".csv").read_text() == \
            (b / e["results"]).with_suffix(".csv").read_text(), e["key"]
    return len(ia["reports"])


def check_sweep(binary, port, tmp):
    grid = "config/grids/ci-small.yaml"
    local, dist = tmp / "local", tmp / "ray"
    run([binary, "sweep", "run", grid, "--dir", local])
    cells = json.loads(run([binary, "sweep", "plan", grid]).stdout)["cells"]
    assert len(cells) == 12, len(cells)
    victim = cells[4]["id"]
    r = driver(binary, port, "sweep", grid, "--dir", str(dist), "--fault-kill-once", victim)
    assert (dist / "fault-injected").exists(), "the fault was not injected"
    assert "12 cells merged" in r.stdout, r.stdout
    assert "ship:" not in r.stderr, "a loopback head ships by default"
    n = same(local, dist)
    print(f"ray sweep: 12 cells, {n} reports equal to the local run; the killed task "
          f"({victim}) was retried")
    # Interrupted: two cells and the reports gone; the driver runs those two only.
    for c in cells[:2]:
        key, row = c["id"].rsplit("/", 1)
        (dist / "cells" / key / f"{row}.json").unlink()
    shutil.rmtree(dist / "reports")
    r = driver(binary, port, "sweep", grid, "--dir", str(dist))
    assert "2 to run, 10 already written" in r.stderr, r.stderr
    same(local, dist)
    print("ray sweep: resumed 2 of 12 cells, reports equal again")


# One job (a per-class table) and the two cells of a report that reads it.
JOB_GRID = """name: ci-job
compare: {duration: 30, lambda: 60, policies: "closest,per-class:out/tables/{topology}.yaml"}
axes:
  - topology: [dc-cloud]
jobs:
  - {command: table, axes: [{topology: [dc-cloud]}], seeds: "1", duration: 30, lambda: 60,
     policies: "closest,least-impedance", out: "out/tables/{topology}.yaml"}
"""


def elsewhere(binary, tmp):
    """A copy of the checkout's inputs and of the binary under `tmp/elsewhere` (a path no task
    is told), for a shipped run; returns (its directory, its binary)."""
    drv = tmp / "elsewhere"
    for d in ("config", "topologies", "profiles", "workloads"):
        shutil.copytree(ROOT / d, drv / d)
    shutil.copytree(ROOT / "tests/fixtures", drv / "tests/fixtures")
    copy = drv / "bin" / "continuum"
    copy.parent.mkdir()
    try:
        os.link(binary, copy)
    except OSError:
        shutil.copy2(binary, copy)
    return drv, str(copy)


def task_ran_shipped(stderr, drv, ray_tmp):
    """The driver's `tasks run BINARY in DIR` line names Ray's unpacked copies (the binary's
    py_module, the working_dir), not the driver's; returns DIR."""
    line = next((l for l in stderr.splitlines() if l.startswith("tasks run ")), None)
    assert line, stderr[-2000:]
    binary, where = line[len("tasks run "):].split(" in ", 1)
    assert "/runtime_resources/working_dir_files/_ray_pkg_" in where, line
    assert "/runtime_resources/py_modules_files/_ray_pkg_" in binary, line
    assert binary.endswith("/continuum_ray_bin/continuum"), line
    for p in (binary, where):
        assert pathlib.Path(p).resolve().is_relative_to(ray_tmp.resolve()), line
        for elsewhere_ in (drv, ROOT):
            assert not pathlib.Path(p).resolve().is_relative_to(elsewhere_.resolve()), line
    return where


def check_sweep_shipped(binary, port, tmp, ray_tmp):
    """The sweep shipped as a working_dir: the driver's checkout, binary and grid copied where
    no task is told (the grid outside that checkout, so it travels under `_ext/`); its tasks run
    the unpacked copy, and the reports equal the unshipped Ray run's."""
    drv, copy = elsewhere(binary, tmp)
    grid = tmp / "grids" / "ci-small.yaml"
    grid.parent.mkdir()
    shutil.copyfile(ROOT / "config/grids/ci-small.yaml", grid)
    shipped = tmp / "shipped"
    r = driver(copy, port, "--ship", "--cwd", str(drv), "sweep", str(grid), "--dir", str(shipped))
    assert "12 cells merged" in r.stdout, r.stdout
    assert "as Ray's py_modules and working_dir" in r.stderr, r.stderr[-2000:]
    where = task_ran_shipped(r.stderr, drv, ray_tmp)
    n = same(tmp / "ray", shipped)
    print(f"ray sweep shipped: 12 cells run from Ray's working_dir ({pathlib.Path(where).name}), "
          f"{n} reports equal to the unshipped run")
    # A job (a per-class table) whose output the cells read: shipped, the job's file comes back
    # to the driver's checkout, and the cells get it in a second working_dir.
    grid = tmp / "grids" / "ci-job.yaml"
    grid.write_text(JOB_GRID)
    table, local_job, shipped_job = drv / "out/tables/dc-cloud.yaml", tmp / "job-local", \
        tmp / "job-shipped"
    table.parent.mkdir(parents=True)
    subprocess.run([copy, "sweep", "run", grid, "--dir", local_job], cwd=drv, check=True,
                   capture_output=True)
    chosen = table.read_text()
    table.unlink()
    r = driver(copy, port, "--ship", "--cwd", str(drv), "sweep", str(grid), "--dir",
               str(shipped_job))
    task_ran_shipped(r.stderr, drv, ray_tmp)
    assert r.stderr.count("ship: connected") == 2, r.stderr[-2000:]
    assert table.read_text() == chosen, "the shipped job's table differs"
    same(local_job, shipped_job)
    print("ray sweep shipped, with a job: its table came back as bytes, equal to the local "
          "run's, and so do the reports of the cells that read it")


def check_meta_train(binary, port, tmp):
    args = ["--config", "tests/fixtures/tiny-meta-inner.yaml", "--meta",
            "tests/fixtures/tiny-meta.yaml", "--seed", "3", "--threads", "1"]
    local, dist = tmp / "local.dqn", tmp / "ray.dqn"
    run([binary, "meta-train", *args, "--out", local])
    # Named by RAY_ADDRESS alone, as a Ray job's environment names its cluster.
    driver(binary, port, "meta-train", "--", *args, "--out", str(dist), by_env=True)
    assert local.read_bytes() == dist.read_bytes(), "the checkpoints differ"
    print("ray meta-train: checkpoint identical to the local run")


def check_apex_train(binary, port, tmp, ray_tmp):
    """Ape-X on Ray, shipped: the config lies outside the driver's checkout (a copy where no
    task is told), so its path is rewritten to the working_dir's `_ext/`."""
    cfg = tmp / "apex.yaml"
    base = [l for l in (ROOT / "tests/fixtures/tiny-dqn.yaml").read_text().splitlines()
            if not l.startswith("episodes:")]
    cfg.write_text("\n".join(base + ["episodes: 5", "apex: {actors: 2}", ""]))
    args = ["train", "tests/fixtures/tiny-topology.yaml", "--profiles",
            "tests/fixtures/tiny-profiles.yaml", "--workload", "tests/fixtures/tiny-workload.yaml",
            "--config", str(cfg), "--seed", "3"]
    local, dist = tmp / "apex-local.dqn", tmp / "apex-ray.dqn"
    run([binary, *args, "--out", local])
    drv, copy = tmp / "elsewhere", str(tmp / "elsewhere" / "bin" / "continuum")
    r = driver(copy, port, "--ship", "--cwd", str(drv), "train", "--", *args[1:], "--out",
               str(dist))
    assert "round 2: 1 actors on Ray, 5 episodes" in r.stderr, r.stderr[-2000:]
    task_ran_shipped(r.stderr, drv, ray_tmp)
    assert local.read_bytes() == dist.read_bytes(), "the Ape-X checkpoints differ"
    la, ra = (p.with_suffix(".training.csv").read_text().splitlines() for p in (local, dist))
    strip = lambda rows: [",".join(x.split(",")[:-1]) for x in rows]  # noqa: E731 (no wall_s)
    assert strip(la) == strip(ra), "the episode logs differ"
    print("ray apex train (shipped): 2 actors × 3 rounds on Ray, checkpoint identical to the "
          "threads' run")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="target/debug/continuum")
    a = ap.parse_args()
    binary = str((ROOT / a.bin).resolve())
    port = free_port()
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="continuum-ray-"))
    ray_tmp = tmp / "ray"
    head = ["ray", "start", "--head", "--num-cpus", "2", "--node-ip-address", "127.0.0.1",
            "--port", str(port), "--include-dashboard", "false", "--disable-usage-stats",
            "--temp-dir", str(ray_tmp)]
    # One machine: Ray keeps every process on 127.0.0.1 only when told so (else it replaces the
    # loopback address by the primary interface's).
    run(head, env=dict(os.environ, RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER="0"))
    try:
        check_sweep(binary, port, tmp)
        check_sweep_shipped(binary, port, tmp, ray_tmp)
        check_meta_train(binary, port, tmp)
        check_apex_train(binary, port, tmp, ray_tmp)
    finally:
        subprocess.run(["ray", "stop", "--force"], capture_output=True)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
