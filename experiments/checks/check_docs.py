"""Checks every generated block of docs/*.md and README.md against the recorded last output of
the command it names (docs/generated/; see experiments/docgen.py for the markers). Reads files
only: it runs no simulation and takes well under a second.

  GENERATED  the block's text must equal the recorded output (trailing spaces and blank lines
             at either end aside)
  EXCERPT    every number of the block must appear among the recorded output's numbers
             (a sign, a Unicode minus and thousands separators aside)

Exits 1 naming file:line for every block that does not match, 0 otherwise.

  --rerender  also runs every module a block names with --from-json (no simulation: from the
              results it recorded) and fails where the text it renders now differs from the
              recorded output, so a recorded `.md` cannot drift from its recorded JSON; about a
              minute

Usage: python3 -m experiments.checks.check_docs [--rerender]
"""
import os
import re
import shlex
import subprocess
import sys

sys.dont_write_bytecode = True  # a check leaves nothing behind
from experiments import docgen  # noqa: E402

NUMBER = re.compile(r"\d+(?:[,\u202f\u2009]\d{3})*(?:\.\d+)?")


def numbers(text):
    """The numbers of a text as strings: `−0.31` and `-0.31` give `0.31`; `1,024` and `1 024` (thin
    spaces) give `1024`."""
    out = []
    for m in NUMBER.finditer(text):
        out.append(re.sub(r"[,\u202f\u2009]", "", m.group(0)))
    return out


def rel(path):
    return path.relative_to(docgen.ROOT)


def check():
    """Every block of every page against its recorded output: (blocks, errors)."""
    errors = []
    count = 0
    for page in docgen.pages():
        try:
            found = docgen.blocks(page)
        except ValueError as e:
            errors.append(str(e).replace(str(docgen.ROOT) + "/", ""))
            continue
        for kind, cmd, part, first, lines in found:
            count += 1
            where = f"{rel(page)}:{first}"
            key = cmd + (f" [{part}]" if part else "")
            rec = docgen.recorded_path(cmd, part)
            if not rec.exists():
                errors.append(f"{where}: no recorded output of `{key}` ({rel(rec)} is missing); "
                              f"run `python3 -m {cmd} --publish`")
                continue
            want = docgen.normalise(rec.read_text())
            have = docgen.normalise("\n".join(lines))
            # Line of the block's first non-blank line (normalise dropped leading blanks).
            lead = next((i for i, l in enumerate(lines) if l.strip()), 0)
            if kind == "GENERATED":
                if have == want:
                    continue
                for i, (h, w) in enumerate(zip(have, want)):
                    if h != w:
                        errors.append(f"{rel(page)}:{first + lead + i}: differs from the recorded "
                                      f"output of `{key}` ({rel(rec)}, line {i + 1}):\n"
                                      f"    page:     {h}\n    recorded: {w}")
                        break
                else:
                    errors.append(f"{where}: the block has {len(have)} lines, the recorded output "
                                  f"of `{key}` ({rel(rec)}) {len(want)}")
            else:
                known = set(numbers("\n".join(want)))
                for i, line in enumerate(lines):
                    missing = [n for n in numbers(line) if n not in known]
                    if missing:
                        errors.append(f"{rel(page)}:{first + i}: {', '.join(missing)} not in the "
                                      f"recorded output of `{key}` ({rel(rec)})")
    return count, errors


def rerender():
    """Every command a block names, re-rendered from its recorded results (docgen.publish under
    DOCGEN_CHECK=1 compares instead of writing). Returns the errors."""
    cmds = []
    for page in docgen.pages():
        for _, cmd, _, _, _ in docgen.blocks(page):
            if cmd not in cmds:
                cmds.append(cmd)
    errors = []
    env = dict(os.environ, DOCGEN_CHECK="1", PYTHONDONTWRITEBYTECODE="1")
    for cmd in cmds:
        if docgen.load_results(cmd) is None:
            print(f"check_docs: `{cmd}` recorded no results to re-render from (its text is "
                  "checked, not re-rendered)", file=sys.stderr)
            continue
        r = subprocess.run([sys.executable, "-m", *shlex.split(cmd), "--from-json", "--publish"],
                           cwd=docgen.ROOT, env=env, capture_output=True, text=True)
        if r.returncode != 0:
            why = (r.stderr.strip().splitlines() or ["(no message)"])
            errors.append(f"`{cmd} --from-json`: " + "\n    ".join(why[-3:]))
    return len(cmds), errors


def main():
    count, errors = check()
    if "--rerender" in sys.argv[1:]:
        n, more = rerender()
        errors += more
        if not more:
            print(f"check_docs: {n} commands re-render their recorded outputs exactly")
    for e in errors:
        print(f"check_docs: {e}", file=sys.stderr)
    if errors:
        print(f"check_docs: {len(errors)} of {count} generated blocks do not match their recorded "
              f"outputs", file=sys.stderr)
        return 1
    print(f"check_docs: {count} generated blocks match their recorded outputs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
