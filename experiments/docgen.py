"""Generated blocks in the docs, shared by the results modules and by
experiments/checks/check_docs.py.

A results module's table goes into a page between two markers that name the command which
printed it (the module, run as `python3 -m <module>`, and its arguments; where one run prints
several tables, the part):

    <!-- BEGIN GENERATED: experiments.tail --topologies full-edge -->
    ...exactly what that command printed...
    <!-- END GENERATED -->

    <!-- BEGIN GENERATED: experiments.allocation --generated --ablation [matrix] -->

A page may also quote some figures of a recorded output in a table of its own:

    <!-- BEGIN EXCERPT: experiments.meta_results --seed 101 --duration 300 [cells] -->
    ...a table whose every number appears in that output...
    <!-- END EXCERPT -->

Every command's last output is kept in docs/generated/ (<name>.md, one file per command and
part, and <name>.json: the results it was printed from, where the module saves them; <name> is
the module's last name and the arguments), so that the check reads files and never runs a
simulation. A module run with `--publish` writes both and replaces the text of every block that
names it.
"""
import hashlib
import json
import os
import pathlib
import re
import shlex
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
GENERATED = ROOT / "docs" / "generated"
BEGIN = re.compile(r"^<!-- BEGIN (GENERATED|EXCERPT): (.+?) -->\s*$")
END = re.compile(r"^<!-- END (GENERATED|EXCERPT) -->\s*$")
PART = re.compile(r"^(.*?)(?: \[([A-Za-z0-9_-]+)\])?$")


def pages():
    """The pages whose blocks are checked: docs/*.md and README.md."""
    return sorted((ROOT / "docs").glob("*.md")) + [ROOT / "README.md"]


def module(path):
    """The module name of a file of the package (`experiments/tail.py` → `experiments.tail`)."""
    rel = pathlib.Path(path).resolve().relative_to(ROOT).with_suffix("")
    return ".".join(rel.parts)


def command(script, argv, drop=("--publish", "--from-json"), drop_valued=("--out", "--bin")):
    """The command a block names: the module of the file `script` and its arguments as given,
    less those that do not change what it prints (where files go, which binary, publishing
    itself)."""
    keep = []
    it = iter(argv)
    for x in it:
        name = x.split("=", 1)[0]
        if name in drop:
            continue
        if name in drop_valued:
            if "=" not in x:
                next(it, None)
            continue
        keep.append(x)
    return " ".join([module(script)] + [shlex.quote(x) for x in keep])


# Longest slug kept whole (file systems allow 255 bytes per name, less the part and extension).
MAX_SLUG = 200


def slug(cmd, part=None):
    """The file name (without extension) of a command's recorded output: the module's last
    name, then its arguments (`experiments.tail --lambdas 60` → `tail--lambdas-60`)."""
    words = cmd.split()
    stem = words[0].rsplit(".", 1)[-1]
    rest = re.sub(r"[^A-Za-z0-9.,]+", "-", " ".join(words[1:])).strip("-")
    name = stem + (f"--{rest}" if rest else "")
    if len(name) > MAX_SLUG:
        # File names have a length limit: a long command keeps its start and a digest of all.
        digest = hashlib.sha256(cmd.encode()).hexdigest()[:12]
        name = f"{name[:MAX_SLUG - 13]}-{digest}"
    return name + (f".{part}" if part else "")


def recorded_path(cmd, part=None):
    """Where a command's recorded output (of part `part`) lies."""
    return GENERATED / f"{slug(cmd, part)}.md"


def results_path(cmd):
    """Where the results a command's output was printed from lie."""
    return GENERATED / f"{slug(cmd)}.json"


def split_key(key):
    """`cmd [part]` -> (cmd, part or None)."""
    m = PART.match(key.strip())
    return m.group(1).strip(), m.group(2)


def blocks(path):
    """The marked blocks of a page: (kind, cmd, part, first line number of the block's text,
    its lines); raises ValueError naming the line of a marker that does not pair up."""
    out = []
    lines = path.read_text().splitlines()
    open_ = None
    for i, line in enumerate(lines, 1):
        b, e = BEGIN.match(line), END.match(line)
        if b:
            if open_:
                raise ValueError(f"{path}:{i}: a block begins inside the block of line {open_[3]}")
            cmd, part = split_key(b.group(2))
            open_ = [b.group(1), cmd, part, i, []]
        elif e:
            if not open_:
                raise ValueError(f"{path}:{i}: an END marker with no BEGIN before it")
            if e.group(1) != open_[0]:
                raise ValueError(f"{path}:{i}: END {e.group(1)} closes BEGIN {open_[0]} of line "
                                 f"{open_[3]}")
            out.append((open_[0], open_[1], open_[2], open_[3] + 1, open_[4]))
            open_ = None
        elif open_:
            open_[4].append(line)
    if open_:
        raise ValueError(f"{path}:{open_[3]}: BEGIN {open_[0]} is never closed")
    return out


def normalise(text):
    """A block's or a recorded output's text, compared without trailing spaces and without
    blank lines at either end."""
    lines = [l.rstrip() for l in text.splitlines()]
    while lines and not lines[0]:
        lines.pop(0)
    while lines and not lines[-1]:
        lines.pop()
    return lines


def publish(cmd, parts, results=None):
    """Records a command's output (`parts`: {part or None: text}) and its results (any JSON
    value) under docs/generated/, then rewrites every GENERATED block that names it. Prints
    where each went.

    With DOCGEN_CHECK=1 in the environment it writes nothing: it compares each part with the
    recorded output and exits 1 naming the first line that differs (`check_docs --rerender`
    runs every module this way, from its recorded results)."""
    if os.environ.get("DOCGEN_CHECK") == "1":
        check_recorded(cmd, parts)
        return
    GENERATED.mkdir(parents=True, exist_ok=True)
    for part, text in parts.items():
        recorded_path(cmd, part).write_text("\n".join(normalise(text)) + "\n")
    if results is not None:
        results_path(cmd).write_text(json.dumps(results, indent=1, sort_keys=True) + "\n")
    placed = set()
    for page in pages():
        lines = page.read_text().splitlines()
        out, i, changed = [], 0, False
        while i < len(lines):
            out.append(lines[i])
            b = BEGIN.match(lines[i])
            i += 1
            if not b or b.group(1) != "GENERATED":
                continue
            c, part = split_key(b.group(2))
            if c != cmd or part not in parts:
                continue
            while i < len(lines) and not END.match(lines[i]):
                i += 1
            out.extend(normalise(parts[part]))
            placed.add(part)
            changed = True
        if changed:
            page.write_text("\n".join(out) + "\n")
            print(f"published into {page.relative_to(ROOT)}", file=sys.stderr)
    for part in parts:
        if part not in placed:
            key = cmd + (f" [{part}]" if part else "")
            print(f"recorded {recorded_path(cmd, part).relative_to(ROOT)}; no page has a block "
                  f"for it yet: put its text between <!-- BEGIN GENERATED: {key} --> and "
                  f"<!-- END GENERATED --> where it belongs", file=sys.stderr)


def check_recorded(cmd, parts):
    """Exits 1 if a part's text differs from what `cmd` recorded (see `publish`)."""
    for part, text in parts.items():
        rec = recorded_path(cmd, part)
        want = normalise(rec.read_text()) if rec.exists() else None
        have = normalise(text)
        if want == have:
            continue
        key = cmd + (f" [{part}]" if part else "")
        if want is None:
            sys.exit(f"`{key}`: nothing recorded at {rec.relative_to(ROOT)}")
        for i, (h, w) in enumerate(zip(have, want)):
            if h != w:
                sys.exit(f"`{key}`: re-rendered from its recorded results, line {i + 1} differs "
                         f"from {rec.relative_to(ROOT)}:\n    now:      {h}\n    recorded: {w}")
        sys.exit(f"`{key}`: re-rendered from its recorded results, {len(have)} lines against "
                 f"{len(want)} in {rec.relative_to(ROOT)}")


def load_results(cmd):
    """The results a command saved when it was last published, or None."""
    p = results_path(cmd)
    return json.loads(p.read_text()) if p.exists() else None


def single_part(cmd, from_json, publish_too, measure, render, end="\n"):
    """The whole run of a module with one part: its results (measured, or recorded with
    --from-json), their text printed, and with --publish recorded and written into the docs."""
    results = recorded_or_exit(cmd) if from_json else measure()
    text = render(results)
    print(text, end=end)
    if publish_too:
        publish(cmd, {None: text}, results)


def recorded_or_exit(cmd):
    """The recorded results of `cmd` (for --from-json), or exit naming the file to produce."""
    results = load_results(cmd)
    if results is None:
        sys.exit(f"no recorded results of `{cmd}` ({results_path(cmd)}): run it without "
                 "--from-json")
    return results
