"""`python -m continuum_ray` (or `continuum-ray` once installed with pip):

  --address HOST:PORT sweep GRID --dir DIR      a grid's jobs and cells as Ray tasks, merged
  --address HOST:PORT meta-train -- ARGS…       meta-training's inner loops as Ray tasks
  --address HOST:PORT train -- ARGS…            Ape-X training's actors as Ray tasks

--address defaults to the RAY_ADDRESS environment variable (host:port or `local`).

Shipping (--ship, the default for a head that is not this machine's loopback): the binary (as
a `py_modules` package) and the files the run names (the grid and its files, configs,
checkpoints; config/, profiles/, workloads/ and topologies/ of --cwd whole; as the
`working_dir`) go to the cluster in the job's runtime environment, so the nodes need not share
paths with the driver; Ray refuses a package of 512 MiB or more (ship.py). --no-ship (the default
on 127.0.0.1 or `local`): the binary and those files must be at the same paths on every node (a
shared checkout). Either way, results come back through Ray."""
import argparse
import os
import pathlib
import sys

from . import cluster


def main(argv=None):
    ap = argparse.ArgumentParser(prog="continuum-ray", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    env_address = os.environ.get("RAY_ADDRESS")
    ap.add_argument("--address", required=not env_address, default=env_address,
                    help="Ray head, host:port (e.g. 127.0.0.1:6379), or `local`; default: "
                         "the RAY_ADDRESS environment variable")
    ap.add_argument("--bin", default="target/release/continuum", help="the continuum binary")
    ap.add_argument("--cwd", default=".", help="directory the binary runs in (the checkout)")
    ap.add_argument("--ship", action=argparse.BooleanOptionalAction, default=None,
                    help="ship the binary and the run's inputs in Ray's runtime environment "
                         "(default: unless the head is 127.0.0.1, localhost or `local`); "
                         "--no-ship: the nodes share the driver's paths")
    ap.add_argument("--retries", type=int, default=3,
                    help="retries of a task whose process dies (Ray's max_retries)")
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("sweep", help="run a grid file's jobs and cells, then merge")
    s.add_argument("grid")
    s.add_argument("--dir", required=True, help="sweep directory (cells, reports, sweep.json)")
    s.add_argument("--fault-kill-once", metavar="CELL",
                   help="fault injection (tests): kill the first attempt of this cell's task "
                        "and its Ray worker")
    m = sub.add_parser("meta-train", help="`continuum meta-train` with its inner loops on Ray")
    m.add_argument("args", nargs=argparse.REMAINDER,
                   help="continuum meta-train's arguments (after `--`)")
    t = sub.add_parser("train", help="`continuum train` (an `apex:` config) with its actors on Ray")
    t.add_argument("args", nargs=argparse.REMAINDER,
                   help="continuum train's arguments (after `--`)")
    a = ap.parse_args(argv)
    cwd = str(pathlib.Path(a.cwd).resolve())
    binary = str((pathlib.Path(cwd) / a.bin).resolve()) if not os.path.isabs(a.bin) else a.bin
    if not os.access(binary, os.X_OK):
        sys.exit(f"--bin: {binary} is not an executable (cargo build --release first)")
    ship_on = a.ship if a.ship is not None else not cluster.is_loopback(a.address or "")
    from .ship import Remote
    remote = Remote(a.address, binary, cwd, ship_on)
    if a.cmd == "sweep":
        from .sweep import run_sweep
        index = run_sweep(binary, a.grid, a.dir, cwd, a.retries, a.fault_kill_once, remote)
        print(f"{index['cells']} cells merged into {len(index['reports'])} reports under "
              f"{pathlib.Path(a.dir) / 'reports'}")
    elif a.cmd == "train":
        from .apex import run_apex_train
        args = a.args[1:] if a.args[:1] == ["--"] else a.args
        run_apex_train(binary, args, cwd, a.retries, remote)
    else:
        from .meta_train import run_meta_train
        args = a.args[1:] if a.args[:1] == ["--"] else a.args
        run_meta_train(binary, args, cwd, a.retries, remote)


if __name__ == "__main__":
    main()
