"""The Ray tasks: each runs the `continuum` binary once and returns what it printed.

A task whose `continuum` process dies (a signal: killed, out of memory) raises `ProcessDied`,
which Ray retries (`retry_exceptions`); a task whose Ray worker process dies is retried by Ray
(`max_retries`). A process that exits with an error (bad input) raises `CommandFailed`, which is
not retried: it would fail again.

A task runs the binary by the path and in the directory the driver gives it (a shared file
system), or, shipped (ship.py: `cwd` None), in its own working directory, where Ray unpacked the
working_dir on its node, the binary found on its sys.path, where Ray unpacked its package. Each
task also returns where it ran (`where`: the binary's path and the directory), which the driver
reports once."""
import os
import signal
import subprocess
import sys
import time

import ray


class ProcessDied(Exception):
    """The `continuum` process was ended by a signal (worth retrying)."""


class CommandFailed(Exception):
    """The `continuum` process exited with an error (not worth retrying)."""


def run_binary(binary, args, cwd, fault_marker=None):
    """Runs `binary args` in `cwd`; returns its standard output.

    `fault_marker` (tests only): on the first attempt (the marker file absent), the task creates
    the marker, starts the process, and kills the process and its own Ray worker with SIGKILL,
    so that Ray must retry it on a new worker."""
    proc = subprocess.Popen([binary, *args], cwd=cwd, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    if fault_marker is not None and not os.path.exists(fault_marker):
        with open(fault_marker, "w") as f:
            f.write(f"killed worker {os.getpid()} running {' '.join(args)}\n")
        proc.kill()
        proc.wait()
        os.kill(os.getpid(), signal.SIGKILL)
    out, err = proc.communicate()
    if proc.returncode < 0:
        raise ProcessDied(f"continuum {' '.join(args)}: ended by signal {-proc.returncode}")
    if proc.returncode != 0:
        raise CommandFailed(f"continuum {' '.join(args)}: exit {proc.returncode}\n{err[-4000:]}")
    return out


def locate(binary, cwd):
    """In a task: the binary's path and the directory to run it in. `cwd` None: this process's
    working directory (a shipped working_dir), and a relative `binary` is looked for there,
    then on sys.path (the binary's package, shipped as a py_module)."""
    cwd = cwd or os.getcwd()
    path = binary
    if not os.path.isabs(binary):
        found = (os.path.join(base or ".", binary) for base in [cwd, *sys.path])
        path = next((p for p in found if os.path.isfile(p)), os.path.join(cwd, binary))
    if os.path.isfile(path) and not os.access(path, os.X_OK):
        os.chmod(path, 0o755)  # a Ray that unpacks without the file modes
    return os.path.abspath(path), cwd


@ray.remote
def binary_task(binary, args, cwd, fault_marker=None, collect=()):
    """A Ray task: `run_binary` on whichever worker Ray picks. Returns {"stdout", "where",
    "files"}: `files` maps each path of `collect` (outputs, relative to the working directory or
    absolute), and the files written beside it with its stem, to their bytes (a shipped job's
    outputs, which the driver writes where the job would have)."""
    from .ship import side_files
    path, cwd = locate(binary, cwd)
    start = time.time() - 1
    out = run_binary(path, args, cwd, fault_marker)
    files = {}
    for o in collect:
        for f in side_files(cwd, o, since=start):
            with open(f if os.path.isabs(f) else os.path.join(cwd, f), "rb") as fh:
                files[f] = fh.read()
    return {"stdout": out, "where": {"binary": path, "cwd": cwd}, "files": files}


def submit(binary, args, cwd, cpus=1, retries=3, fault_marker=None, collect=()):
    """Submits one run of the binary as a Ray task holding `cpus` CPUs; returns its reference."""
    return binary_task.options(num_cpus=cpus, max_retries=retries,
                               retry_exceptions=[ProcessDied]).remote(
        binary, args, cwd, fault_marker, list(collect))


@ray.remote
def binary_file_task(binary, args, cwd, inputs):
    """A Ray task that runs the binary on files it is sent and returns the file it writes:
    `inputs` maps a placeholder name to bytes (written to a private directory, `{name}` in
    `args` replaced by its path); `{out}` in `args` is the output file. Returns (standard
    output, the output file's bytes, where it ran)."""
    import tempfile
    path, cwd = locate(binary, cwd)
    with tempfile.TemporaryDirectory(prefix="continuum-task-") as d:
        paths = {"out": os.path.join(d, "out.bin")}
        for name, data in inputs.items():
            paths[name] = os.path.join(d, name)
            with open(paths[name], "wb") as f:
                f.write(data)
        full = [a.format(**paths) if "{" in a else a for a in args]
        out = run_binary(path, full, cwd)
        with open(paths["out"], "rb") as f:
            return out, f.read(), {"binary": path, "cwd": cwd}


def submit_files(binary, args, cwd, inputs, cpus=1, retries=3):
    """Submits `binary_file_task` holding `cpus` CPUs; returns its reference."""
    return binary_file_task.options(num_cpus=cpus, max_retries=retries,
                                    retry_exceptions=[ProcessDied]).remote(
        binary, args, cwd, inputs)


_reported = []


def report_where(where):
    """On the driver: says once where the tasks ran the binary."""
    if not _reported:
        _reported.append(where)
        print(f"tasks run {where['binary']} in {where['cwd']}", file=sys.stderr, flush=True)
