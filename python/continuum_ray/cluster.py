"""Connecting to a Ray cluster, explicitly: an address `host:port` of a running head (started
with `ray start --head …`), or `local` for a private single-machine instance on 127.0.0.1.
`auto` (whatever cluster the environment points at) is refused on purpose.

Ray replaces a loopback address by the machine's primary interface unless told that the cluster
is one machine (`RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0`); for a loopback head the driver sets that
before Ray is imported, so that it too stays on 127.0.0.1 (start the head with the same variable:
docs/scale-out.md)."""
import logging
import os
import pathlib

LOOPBACK = ("127.0.0.1", "localhost", "::1", "[::1]")


def is_loopback(address):
    """Whether `address` (host:port, or `local`) is this machine's loopback."""
    return address == "local" or address.rsplit(":", 1)[0] in LOOPBACK


def keep_on_loopback(address):
    """Before Ray is imported: a loopback address keeps every Ray process on 127.0.0.1."""
    if address and is_loopback(address):
        os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")


def _no_large_file_advice(record):
    """Ray's advice to exclude a large file from a package: the shipped binary is meant to go."""
    return not str(record.msg).startswith("File ") or "is very large" not in str(record.msg)


def _ray():
    import ray
    return ray

PACKAGE_DIR = pathlib.Path(__file__).resolve().parent


def connect(address, num_cpus=None, working_dir=None, py_modules=()):
    """Connects this driver to the cluster at `address`, shipping this package to the workers
    (so that they need not have it installed), the packages `py_modules` (local directories:
    the binary's, ship.py) and `working_dir` (a local directory, ship.py), which Ray uploads and
    unpacks on each node as its tasks' working directory. Connected already: disconnects
    first, since a job's runtime environment is fixed when it connects."""
    if address in (None, "", "auto"):
        raise SystemExit("--address: name the head explicitly (host:port, e.g. 127.0.0.1:6379) "
                         "or `local`; `auto` is refused")
    keep_on_loopback(address)
    ray = _ray()
    if ray.is_initialized():
        ray.shutdown()
    runtime_env = {"py_modules": [str(PACKAGE_DIR), *map(str, py_modules)]}
    if working_dir is not None:
        runtime_env["working_dir"] = str(working_dir)
        for name in ("ray._private.worker", "ray._private.runtime_env.packaging"):
            logging.getLogger(name).addFilter(_no_large_file_advice)
    if address == "local":
        ray.init(address="local", num_cpus=num_cpus or os.cpu_count(), include_dashboard=False,
                 _node_ip_address="127.0.0.1", runtime_env=runtime_env,
                 logging_level="WARNING", log_to_driver=False)
    else:
        ray.init(address=address, runtime_env=runtime_env, logging_level="WARNING",
                 log_to_driver=False)


def worker_cpus():
    """CPUs the cluster offers to tasks."""
    return int(_ray().cluster_resources().get("CPU", 0))
