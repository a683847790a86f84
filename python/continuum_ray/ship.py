"""Shipping the binary and its inputs to the cluster as Ray runtime-environment packages, so
that the nodes need not share paths with the driver.

For each connection the driver stages two directories:

  continuum_ray_bin/continuum
                      the binary (hard-linked or copied), as a package for Ray's `py_modules`:
                      a package of its own, so Ray uploads and unpacks it once per binary (its
                      URI is a hash of its content), whatever the inputs
  working_dir:        the inputs, for Ray's `working_dir`:
    config/ profiles/ workloads/ topologies/
                      these directories of the checkout (--cwd), whole: the binary's defaults
                      (`profiles/object-detection.yaml`, `config/dqn.yaml`, …) and a grid's bare
                      topology names resolve there
    <path>            every other file the run names by a path relative to the checkout (a
                      grid's files, `--config`, `--init`, checkpoints, a job's outputs), there
    _ext/<n>/<name>   every file it names outside the checkout or by an absolute path, under
                      its own name (the command line is rewritten to this path)

and hands them to `ray.init(runtime_env={"py_modules": […], "working_dir": …})`: Ray uploads them
(content-hashed: once) and unpacks them on each node; every task runs with the unpacked
working_dir as its working directory and finds the binary on its sys.path. The staging
directories are deleted once uploaded. Results still come back as values, a shipped job's output
files too (the driver writes them where the job would have, and ships them to the cells in a
second connection's working_dir). A grid's own text is never rewritten (a cell's digest covers
its command lines): a file a grid names outside the checkout (by an absolute path, or `../`)
stays at that path, which must then exist on every node (the driver says so).

Ray refuses a package of its gRPC message limit or more (512 MiB by default,
`RAY_max_grpc_message_size`); the driver checks both first, and ships a binary over the limit
without its debug sections (`strip --strip-debug`) if that brings it under."""
import glob
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time

BIN_PACKAGE = "continuum_ray_bin"
BIN = f"{BIN_PACKAGE}/continuum"  # found on a task's sys.path (py_modules)
STANDARD_DIRS = ("config", "profiles", "workloads", "topologies")
EXT = "_ext"


def package_limit():
    """The largest working_dir package Ray accepts, in bytes."""
    try:
        from ray._private.runtime_env.packaging import GCS_STORAGE_MAX_SIZE
        return int(GCS_STORAGE_MAX_SIZE)
    except Exception:  # noqa: BLE001 (a Ray without that constant: its documented default)
        return 512 * 1024 * 1024


def mib(n):
    return f"{n / 2**20:.1f} MiB"


def _pieces(value):
    """The parts of an option value that may name a file: the value, its comma-separated
    items, and each item without a `kind:` prefix (`per-class:out/t.yaml`, `dqn:m.dqn`)."""
    out = []
    for item in str(value).split(","):
        item = item.strip()
        if not item:
            continue
        out.append(item)
        head, sep, tail = item.partition(":")
        if sep and tail and "/" not in head:
            out.append(tail)
    return out


def _strings(node):
    """Every string value of a parsed YAML document (keys aside)."""
    if isinstance(node, str):
        yield node
    elif isinstance(node, dict):
        for v in node.values():
            yield from _strings(v)
    elif isinstance(node, list):
        for v in node:
            yield from _strings(v)


class Staging:
    """The staging directories of one connection (see the module's doc): `bin_pkg`, the
    binary's package (for `py_modules`), and `dir`, the inputs (the `working_dir`)."""

    def __init__(self, cwd, binary):
        self.cwd = pathlib.Path(cwd).resolve()
        self.dir = pathlib.Path(tempfile.mkdtemp(prefix="continuum-ray-ship-"))
        self.bin_dir = pathlib.Path(tempfile.mkdtemp(prefix="continuum-ray-bin-"))
        self.bin_pkg = self.bin_dir / BIN_PACKAGE
        self.ext = {}        # absolute source -> its path in the staging directory
        self.absolute = []   # files a grid names outside the checkout (not relocatable)
        self.files = 0
        self.source = pathlib.Path(binary)
        self.stripped = False
        self.bin_pkg.mkdir()
        (self.bin_pkg / "__init__.py").write_text(
            '"""The continuum binary, shipped by continuum_ray (ship.py)."""\n')
        dest = self.bin_pkg / "continuum"
        try:
            os.link(self.source, dest)  # no copy when on the same file system
        except OSError:
            shutil.copy2(self.source, dest)
        for d in STANDARD_DIRS:
            if (self.cwd / d).is_dir():
                self._copy(self.cwd / d, d)

    @property
    def binary(self):
        return self.bin_pkg / "continuum"

    def strip(self):
        """Replaces the staged binary by a copy without its debug sections (`strip
        --strip-debug`: the same code, symbols kept for backtraces); false if it cannot."""
        if not shutil.which("strip"):
            return False
        tmp = self.bin_dir / "continuum.stripped"
        r = subprocess.run(["strip", "--strip-debug", "-o", str(tmp), str(self.source)],
                           capture_output=True)
        if r.returncode != 0 or not tmp.exists():
            tmp.unlink(missing_ok=True)
            return False
        os.chmod(tmp, 0o755)
        os.replace(tmp, self.binary)
        self.stripped = True
        return True

    def _copy(self, src, rel):
        dest = self.dir / rel
        if dest.exists():
            return
        dest.parent.mkdir(parents=True, exist_ok=True)
        if src.is_dir():
            shutil.copytree(src, dest)
            self.files += sum(1 for p in dest.rglob("*") if p.is_file())
        else:
            shutil.copy2(src, dest)
            self.files += 1

    def file(self, name):
        """Stages the file `name` (relative to the checkout, or absolute) if it exists; returns
        the path a task names it by (relative to its working directory), or None."""
        src = pathlib.Path(name)
        if not src.is_absolute():
            src = self.cwd / src
        if not src.is_file():
            return None
        src = pathlib.Path(os.path.abspath(src))
        try:
            rel = src.relative_to(self.cwd).as_posix()
        except ValueError:
            rel = None
        if rel is None or rel.startswith(EXT + "/"):
            key = str(src.resolve())
            if key not in self.ext:
                self.ext[key] = f"{EXT}/{len(self.ext)}/{src.name}"
            rel = self.ext[key]
        self._copy(src, rel)
        return rel

    def args(self, argv):
        """`argv` with every argument (or `--opt=value`, or comma-separated item, or `kind:`
        item) that names an existing file staged and renamed to its path in the staging
        directory. Placeholders (`{out}`) are left to the task."""
        out = []
        for a in argv:
            if "{" in a:
                out.append(a)
                continue
            if a.startswith("--") and "=" in a:
                opt, value = a.split("=", 1)
                out.append(f"{opt}={self._value(value)}")
            elif a.startswith("-"):
                out.append(a)
            else:
                out.append(self._value(a))
        return out

    def _value(self, value):
        items = []
        for item in value.split(","):
            staged = self.file(item)
            if staged is None:
                head, sep, tail = item.partition(":")
                if sep and tail and "/" not in head:
                    t = self.file(tail)
                    if t is not None:
                        staged = f"{head}:{t}"
            items.append(item if staged is None else staged)
        return ",".join(items)

    def grid(self, grid, job_outputs=()):
        """Stages the grid file and every file it names (by a path relative to the checkout,
        `{axis}` placeholders expanded with the axes' labels, bare topology names as
        `topologies/<name>.yaml`), and the `job_outputs` that exist, with their side files (the
        directories of the others, for the jobs to write in); returns the path the tasks name
        the grid by."""
        import yaml  # Ray depends on PyYAML
        staged = self.file(grid)
        if staged is None:
            raise SystemExit(f"{grid}: no such grid file")
        doc = yaml.safe_load((self.cwd / grid).read_text())
        values = _template_values(doc)
        for s in _strings(doc):
            for piece in _pieces(s):
                for name in (piece, f"topologies/{piece}.yaml"):
                    path = os.path.join(self.cwd, name)
                    hits = _expand(path, values) if "{" in name else [path]
                    hits = [h for h in hits if os.path.isfile(h)]
                    if not hits:
                        continue
                    if os.path.isabs(name) or os.path.normpath(name).startswith(".."):
                        self.absolute.append(piece)  # the grid's text names it there
                        continue
                    for h in hits:
                        self.file(os.path.relpath(h, self.cwd))
        for out in job_outputs:
            if os.path.isabs(out) or os.path.normpath(out).startswith(".."):
                continue
            (self.dir / out).parent.mkdir(parents=True, exist_ok=True)  # where the job writes
            for p in side_files(self.cwd, out):
                self.file(p)
        return staged

    def size(self):
        """The inputs' size and the binary's, in bytes."""
        return (sum(p.stat().st_size for p in self.dir.rglob("*") if p.is_file()),
                self.binary.stat().st_size)

    def remove(self):
        shutil.rmtree(self.dir, ignore_errors=True)
        shutil.rmtree(self.bin_dir, ignore_errors=True)


def _topology_stem(t):
    """As the grid does: a bare topology name, or a path's stem."""
    return pathlib.Path(t).stem if "/" in t or t.endswith((".yaml", ".yml", ".json")) else t


def _template_values(doc):
    """Each `{axis}` placeholder's possible values in a grid: the labels of every axis of that
    name (a map value's `name`), and `{topology}` every topology's stem."""
    values = {}

    def walk(node):
        if isinstance(node, dict):
            for k, v in node.items():
                if k == "axes" and isinstance(v, list):
                    for axis in v:
                        if not isinstance(axis, dict):
                            continue
                        for name, labels in axis.items():
                            for i, label in enumerate(labels if isinstance(labels, list)
                                                      else []):
                                if isinstance(label, dict):
                                    values.setdefault(name, set()).add(
                                        str(label.get("name", i)))
                                elif name == "topology":
                                    values.setdefault(name, set()).add(
                                        _topology_stem(str(label)))
                                else:
                                    values.setdefault(name, set()).add(str(label).lower()
                                                                       if isinstance(label, bool)
                                                                       else str(label))
                if k == "topology" and isinstance(v, str):
                    values.setdefault("topology", set()).add(_topology_stem(v))
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(doc)
    return values


def _expand(pattern, values):
    """The files `pattern`'s `{axis}` placeholders name, with each axis's values; a placeholder
    of no known values (a map value labelled by its index) matches what exists (glob)."""
    import itertools
    import re
    names = re.findall(r"\{([^}]*)\}", pattern)
    if any(n not in values for n in names):
        return glob.glob(_as_glob(pattern))
    keys = sorted(set(names))
    found = []
    for combo in itertools.product(*(sorted(values[k]) for k in keys)):
        sub = dict(zip(keys, combo))
        found.append(re.sub(r"\{([^}]*)\}", lambda m: sub[m.group(1)], pattern))
    return found


def _as_glob(pattern):
    """`{axis}` placeholders as `*` (glob's own special characters escaped)."""
    import re
    return "*".join(glob.escape(part) for part in re.split(r"\{[^}]*\}", pattern))


def side_files(base, out, since=None):
    """A job's output `out` (relative to `base`, or absolute) and the files written beside it
    with its stem (`m.dqn` → `m.training.csv`, `m.training_curve.svg`), as paths in the same
    form as `out`; with `since`, only those modified since then."""
    path = pathlib.Path(out) if os.path.isabs(out) else pathlib.Path(base) / out
    if not path.parent.is_dir():
        return []
    found = []
    for p in sorted(path.parent.iterdir()):
        if not p.is_file():
            continue
        if p.name != path.name and not p.name.startswith(path.stem + "."):
            continue
        if since is not None and p.stat().st_mtime < since:
            continue
        found.append(str(pathlib.Path(out).parent / p.name))
    return found


def build(cwd, binary, grid=None, args=None, job_outputs=()):
    """Staging directories for a run: with `grid`, the grid's files; with `args`, the files its
    arguments name. Returns (staging, the grid's or the arguments' names for the tasks). A
    binary over Ray's limit goes without its debug sections; still over, the driver exits."""
    start = time.monotonic()
    st = Staging(cwd, binary)
    try:
        named = st.grid(grid, job_outputs) if grid is not None else st.args(args or [])
        limit = package_limit() - 2**20  # the zip's own bytes
        if st.size()[1] >= limit:
            st.strip()
        inputs, bin_size = st.size()
        for a in sorted(set(st.absolute)):
            print(f"ship: the grid names {a} outside --cwd or by an absolute path: it is not "
                  f"shipped and must exist at that path on every node (name it relative to "
                  f"--cwd, inside it, to ship it)", file=sys.stderr, flush=True)
        stripped = " without debug sections" if st.stripped else ""
        if bin_size >= limit or inputs >= limit:
            raise SystemExit(f"ship: the binary ({mib(bin_size)}{stripped}) or the inputs "
                             f"({mib(inputs)}) are over Ray's limit of {mib(limit)} a package: "
                             f"ship a release binary, or run with --no-ship on a shared file "
                             f"system")
        print(f"ship: the binary ({mib(bin_size)}{stripped}) and {st.files} input files "
              f"({mib(inputs)}) as Ray's py_modules and working_dir (staged in "
              f"{time.monotonic() - start:.1f} s)", file=sys.stderr, flush=True)
    except BaseException:
        st.remove()
        raise
    return st, named


class Remote:
    """How the tasks reach the binary and its inputs: at the driver's paths (`ship` false: a
    shared file system, or one machine), or shipped (`binary` BIN, found on the task's sys.path;
    `cwd` None: the task's own working directory, the unpacked working_dir). `connect` connects
    to the cluster, shipping what a grid or an argument list names (connecting again if
    connected: a job's runtime environment is fixed when it connects); it returns the names the
    tasks use for them."""

    def __init__(self, address, binary, cwd, ship):
        from . import cluster
        cluster.keep_on_loopback(address)  # before Ray is imported
        self.address, self.local_binary, self.local_cwd = address, binary, cwd
        self.ship = ship
        self.binary = BIN if ship else binary
        self.cwd = None if ship else cwd

    def connect(self, grid=None, args=None, job_outputs=()):
        from . import cluster
        if not self.ship:
            import ray
            if not ray.is_initialized():
                cluster.connect(self.address)
            return grid if grid is not None else args
        st, named = build(self.local_cwd, self.local_binary, grid=grid, args=args,
                          job_outputs=job_outputs)
        start = time.monotonic()
        try:
            cluster.connect(self.address, working_dir=st.dir, py_modules=[st.bin_pkg])
        finally:
            st.remove()  # uploaded: the tasks use Ray's copy
        print(f"ship: connected with them in {time.monotonic() - start:.1f} s",
              file=sys.stderr, flush=True)
        return named
