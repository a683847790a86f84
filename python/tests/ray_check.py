#!/usr/bin/env python3
"""The Ray driver on a loopback head (run by .ci/run): a 12-cell sweep equals the local run
(timings aside) although one task's Ray worker is killed mid-run and retried; an interrupted
sweep resumes from the cells written; meta-training with its inner loops on Ray writes the same
checkpoint as the local run; Ape-X training with its actors on Ray writes the same checkpoint as
with its actors on threads. The head listens on 127.0.0.1 only and is stopped at the end.

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

    def same(a, b):
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


def check_meta_train(binary, port, tmp):
    args = ["--config", "tests/fixtures/tiny-meta-inner.yaml", "--meta",
            "tests/fixtures/tiny-meta.yaml", "--seed", "3", "--threads", "1"]
    local, dist = tmp / "local.dqn", tmp / "ray.dqn"
    run([binary, "meta-train", *args, "--out", local])
    # Named by RAY_ADDRESS alone, as a Ray job's environment names its cluster.
    driver(binary, port, "meta-train", "--", *args, "--out", str(dist), by_env=True)
    assert local.read_bytes() == dist.read_bytes(), "the checkpoints differ"
    print("ray meta-train: checkpoint identical to the local run")


def check_apex_train(binary, port, tmp):
    cfg = tmp / "apex.yaml"
    base = [l for l in (ROOT / "tests/fixtures/tiny-dqn.yaml").read_text().splitlines()
            if not l.startswith("episodes:")]
    cfg.write_text("\n".join(base + ["episodes: 5", "apex: {actors: 2}", ""]))
    args = ["train", "tests/fixtures/tiny-topology.yaml", "--profiles",
            "tests/fixtures/tiny-profiles.yaml", "--workload", "tests/fixtures/tiny-workload.yaml",
            "--config", str(cfg), "--seed", "3"]
    local, dist = tmp / "apex-local.dqn", tmp / "apex-ray.dqn"
    run([binary, *args, "--out", local])
    r = driver(binary, port, "train", "--", *args[1:], "--out", str(dist))
    assert "round 2: 1 actors on Ray, 5 episodes" in r.stderr, r.stderr[-2000:]
    assert local.read_bytes() == dist.read_bytes(), "the Ape-X checkpoints differ"
    la, ra = (p.with_suffix(".training.csv").read_text().splitlines() for p in (local, dist))
    strip = lambda rows: [",".join(x.split(",")[:-1]) for x in rows]  # noqa: E731 (no wall_s)
    assert strip(la) == strip(ra), "the episode logs differ"
    print("ray apex train: 2 actors × 3 rounds on Ray, checkpoint identical to the threads' run")


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
        check_meta_train(binary, port, tmp)
        check_apex_train(binary, port, tmp)
    finally:
        subprocess.run(["ray", "stop", "--force"], capture_output=True)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
