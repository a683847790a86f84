"""The command line the results modules share: `parser` builds an argparse parser with the flags
they all redeclared (`--publish` and `--from-json` always; `--bin`, `--seeds`, `--duration`,
`--diurnal-duration`, `--threads`, `--out`, `--reuse`, `--ray` where a module asks for them),
each module adding its own flags to it.

    p = cli.parser("bin", "seeds", "duration", "runner", out="out/tail")
    p.add_argument("--lambdas", default="60,100")

A flag's default is the one the modules share unless given by name (`seeds="1,2,3,4,5"`,
`duration_type=str` for the modules that pass --duration through as written). `runner` stands for
`--reuse` and `--ray` (the flags of a module whose compare runs are a grid of
experiments/cells.py's `sweep`). No module parses its arguments at import: each has a `main()`.
"""
import argparse

BIN = "target/release/continuum"
EVALUATION_SEEDS = "101,102,103,104,105"

# Flag name → (option strings, argparse keywords, the keyword a module may override by name).
FLAGS = {
    "bin": (("--bin",), dict(default=BIN, help="the continuum binary (a release build)")),
    "seeds": (("--seeds",), dict(default=EVALUATION_SEEDS,
                                 help="the seeds, comma-separated (default: the evaluation seeds)")),
    "duration": (("--duration",), dict(type=float, default=300,
                                       help="simulated seconds of each run at a fixed λ")),
    "diurnal-duration": (("--diurnal-duration",), dict(type=float, default=600,
                                                       help="simulated seconds of a diurnal run "
                                                            "(one period)")),
    "threads": (("--threads",), dict(default="2", help="cells run at once")),
    "reuse": (("--reuse",), dict(action="store_true",
                                 help="keep the cells already under --out (else they are run "
                                      "again)")),
    "ray": (("--ray",), dict(metavar="HOST:PORT", help="run the compare cells on this Ray head")),
}
GROUPS = {"runner": ("reuse", "ray")}


def add(p, name, **override):
    """Adds the shared flag `name` (a key of FLAGS) to `p`, its keywords updated by `override`
    (`default=`, `type=`)."""
    opts, kw = FLAGS[name]
    p.add_argument(*opts, **dict(kw, **override))


def parser(*flags, description=None, out=None, **defaults):
    """An argparse parser with `--publish` (record the output under docs/generated/ and rewrite
    the blocks that name the command), `--from-json` (render again from the recorded results),
    and each shared flag of `flags` (keys of FLAGS or GROUPS) in that order; `out`: the default
    of `--out`; `defaults`: per flag, its default (`seeds="1,2,3,4,5"`) or, as `<flag>_type`,
    its type."""
    p = argparse.ArgumentParser(description=description)
    for flag in flags:
        for name in GROUPS.get(flag, (flag,)):
            key = name.replace("-", "_")
            override = {}
            if key in defaults:
                override["default"] = defaults.pop(key)
            if f"{key}_type" in defaults:
                override["type"] = defaults.pop(f"{key}_type")
            add(p, name, **override)
    if defaults:
        raise TypeError(f"cli.parser: unknown defaults {sorted(defaults)}")
    if out is not None:
        p.add_argument("--out", default=out, help="where the runs and their reports are kept")
    p.add_argument("--publish", action="store_true",
                   help="record the output and results under docs/generated/ and rewrite the "
                        "docs' blocks that name this command")
    p.add_argument("--from-json", action="store_true",
                   help="print the tables again from the recorded results (no simulation)")
    return p
