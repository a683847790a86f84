"""The Ray tasks: each runs the `continuum` binary once and returns what it printed.

A task whose `continuum` process dies (a signal: killed, out of memory) raises `ProcessDied`,
which Ray retries (`retry_exceptions`); a task whose Ray worker process dies is retried by Ray
(`max_retries`). A process that exits with an error (bad input) raises `CommandFailed`, which is
not retried: it would fail again."""
import os
import signal
import subprocess

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


@ray.remote
def binary_task(binary, args, cwd, fault_marker=None):
    """A Ray task: `run_binary` on whichever worker Ray picks."""
    return run_binary(binary, args, cwd, fault_marker)


def submit(binary, args, cwd, cpus=1, retries=3, fault_marker=None):
    """Submits one run of the binary as a Ray task holding `cpus` CPUs; returns its reference."""
    return binary_task.options(num_cpus=cpus, max_retries=retries,
                               retry_exceptions=[ProcessDied]).remote(
        binary, args, cwd, fault_marker)


@ray.remote
def binary_file_task(binary, args, cwd, inputs):
    """A Ray task that runs the binary on files it is sent and returns the file it writes:
    `inputs` maps a placeholder name to bytes (written to a private directory, `{name}` in
    `args` replaced by its path); `{out}` in `args` is the output file. Returns (standard
    output, the output file's bytes)."""
    import tempfile
    with tempfile.TemporaryDirectory(prefix="continuum-task-") as d:
        paths = {"out": os.path.join(d, "out.bin")}
        for name, data in inputs.items():
            paths[name] = os.path.join(d, name)
            with open(paths[name], "wb") as f:
                f.write(data)
        full = [a.format(**paths) if "{" in a else a for a in args]
        out = run_binary(binary, full, cwd)
        with open(paths["out"], "rb") as f:
            return out, f.read()


def submit_files(binary, args, cwd, inputs, cpus=1, retries=3):
    """Submits `binary_file_task` holding `cpus` CPUs; returns its reference."""
    return binary_file_task.options(num_cpus=cpus, max_retries=retries,
                                    retry_exceptions=[ProcessDied]).remote(
        binary, args, cwd, inputs)
