"""`continuum meta-train` with its inner trainings as Ray tasks.

Each meta-iteration's inner trainings (`continuum meta-train … --inner <it>:<task>`) run as Ray
tasks from θ, which travels to them as bytes (no shared file system needed); the outer step
(`--outer <it>`) runs here, on the driver, from their checkpoints. The binary computes both with
the functions the one-machine run uses, so the checkpoint is the same bit for bit. θ after each
iteration is kept in `<out>.ray-state/`: an interrupted run resumes at the first iteration
without θ."""
import json
import pathlib
import shutil
import sys
import time

import ray

from . import tasks


def split_out(args):
    """`args` without `--out FILE`, and FILE."""
    rest, out, i = [], None, 0
    while i < len(args):
        if args[i] == "--out" and i + 1 < len(args):
            out, i = args[i + 1], i + 2
        elif args[i].startswith("--out="):
            out, i = args[i].split("=", 1)[1], i + 1
        else:
            rest.append(args[i])
            i += 1
    if out is None:
        raise SystemExit("meta-train: expected --out FILE among continuum meta-train's arguments")
    return rest, out


def threads(args):
    """The `--threads` of `args` (1 if absent): the CPUs each inner task holds."""
    if "--threads" in args:
        return max(1, int(args[args.index("--threads") + 1]))
    return 1


def run_meta_train(binary, args, cwd, retries=3, remote=None):
    """Runs meta-training on the cluster `remote` connects to (ship.Remote); writes the
    checkpoint and its log."""
    from .ship import Remote
    remote = remote or Remote(None, binary, cwd, False)
    args, out = split_out(args)
    out = (pathlib.Path(cwd) / out).resolve()
    rargs = remote.connect(args=args)
    plan = json.loads(tasks.run_binary(binary, ["meta-train", *args, "--plan"], cwd))
    iters, n = plan["meta_iterations"], plan["tasks"]
    state = out.parent / (out.name + ".ray-state")
    state.mkdir(parents=True, exist_ok=True)
    theta = lambda it: state / f"theta-{it}.dqn"  # noqa: E731
    start = time.monotonic()
    for it in range(iters):
        if theta(it).exists():
            continue
        inputs, theta_args, prev = {}, [], None
        if it > 0:
            prev = theta(it - 1)
            inputs = {"theta": prev.read_bytes()}
            theta_args = ["--theta", "{theta}"]
        refs = [tasks.submit_files(remote.binary, ["meta-train", *rargs, "--inner", f"{it}:{b}",
                                                   *theta_args, "--out", "{out}"],
                                   remote.cwd, inputs, cpus=threads(args), retries=retries)
                for b in range(n)]
        runs = []
        for b, (summary, weights, where) in enumerate(ray.get(refs)):
            tasks.report_where(where)
            p = state / f"inner-{it}-{b}.dqn"
            p.write_bytes(weights)
            p.with_suffix(".json").write_text(summary)
            runs.append(str(p))
        outer = ["meta-train", *args, "--outer", str(it), "--inner-runs", ",".join(runs),
                 "--wall-s", f"{time.monotonic() - start:.1f}", "--out", str(theta(it))]
        if prev is not None:
            outer += ["--theta", str(prev)]
        line = json.loads(tasks.run_binary(binary, outer, cwd))
        print(f"[{time.monotonic() - start:7.1f} s] meta-iteration {it + 1}/{iters}  inner "
              f"success {line['success_ratio']:.3f}  ({n} inner tasks on Ray)",
              file=sys.stderr, flush=True)
    last = theta(iters - 1)
    shutil.copyfile(last, out)
    shutil.copyfile(last.with_suffix(".meta.csv"), out.with_suffix(".meta.csv"))
    print(f"wrote {out} and {out.with_suffix('.meta.csv')}")
