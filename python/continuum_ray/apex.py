"""`continuum train` with Ape-X's actors as Ray tasks (a config with an `apex:` block).

The learner is one `continuum train … --apex-learner` process on the driver's machine: for each
round it prints the episodes it wants (`{"round", "weights", "jobs"}`) and learns from the round
before while they run. Each episode runs as a Ray task (`continuum train … --apex-actor E:A`),
the learner's weights travelling to it as bytes and its transitions coming back as bytes (no
shared file system needed); the driver writes them to files and hands the learner their paths,
in job order. The binary computes everything, and a round's actors act on the weights the
learner had before the round before, whatever their timing, so the checkpoint is the one the
same training writes with its actors on threads, bit for bit."""
import json
import pathlib
import shutil
import subprocess
import sys
import time

import ray

from . import tasks
from .meta_train import split_out, threads


def run_apex_train(binary, args, cwd, retries=3, remote=None):
    """Runs Ape-X training on the cluster `remote` connects to (ship.Remote); the binary writes
    the checkpoint, its log and its rounds' CSV."""
    from .ship import Remote
    remote = remote or Remote(None, binary, cwd, False)
    args, out = split_out(args)
    rargs = remote.connect(args=args)
    out = (pathlib.Path(cwd) / out).resolve()
    state = out.parent / (out.name + ".ray-actors")
    state.mkdir(parents=True, exist_ok=True)
    learner = subprocess.Popen([binary, "train", *args, "--apex-learner", "--out", str(out)],
                               cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    start, episodes = time.monotonic(), 0
    try:
        for line in learner.stdout:
            msg = json.loads(line)
            if msg.get("done"):
                break
            weights = (pathlib.Path(cwd) / msg["weights"]).read_bytes()
            refs = [tasks.submit_files(remote.binary, ["train", *rargs, "--apex-actor",
                                                       f"{e}:{a}", "--weights", "{weights}",
                                                       "--out", "{out}"],
                                       remote.cwd, {"weights": weights}, cpus=threads(args),
                                       retries=retries)
                    for e, a in msg["jobs"]]
            paths = []
            for (e, _), (_, data, where) in zip(msg["jobs"], ray.get(refs)):
                tasks.report_where(where)
                p = state / f"episode-{e}.bin"
                p.write_bytes(data)
                paths.append(str(p))
            learner.stdin.write(json.dumps(paths) + "\n")
            learner.stdin.flush()
            episodes += len(paths)
            print(f"[{time.monotonic() - start:7.1f} s] round {msg['round']}: "
                  f"{len(paths)} actors on Ray, {episodes} episodes", file=sys.stderr, flush=True)
    finally:
        if learner.stdin:
            learner.stdin.close()
        rc = learner.wait()
        shutil.rmtree(state, ignore_errors=True)
    if rc != 0:
        raise SystemExit(f"continuum train --apex-learner: exit {rc}")
    print(f"wrote {out}")
