"""The claims of the prose check (experiments/checks/check_prose.py): their grammar (a figure, a
count, a quote; check_prose's docstring states it) and their evaluation against the recorded
results in docs/generated/*.json, with the verdict rule of docs/methodology.md
(experiments/references.py)."""
import json
import re
import statistics

from experiments import docgen
from experiments import references as refs

NUM = r"[+\-−]?\d+(?:\.\d+)?"


def norm_num(s):
    return s.replace("−", "-").replace(",", "")


class ClaimError(Exception):
    pass


def load(name, aliases, cache={}):
    name = aliases.get(name, name)
    if name not in cache:
        p = docgen.GENERATED / f"{name}.json"
        if not p.exists():
            raise ClaimError(f"no recorded results docs/generated/{name}.json")
        cache[name] = json.loads(p.read_text())
    return cache[name]


def walk(x, keys):
    if not keys:
        return x
    k, rest = keys[0], keys[1:]
    if k == "*":
        items = x if isinstance(x, list) else [x[s] for s in sorted(x, key=seed_key)]
        return [walk(v, rest) for v in items]
    if isinstance(x, dict) and "," in k and k not in x:
        # Several keys, one per seed; a key may hold `,` itself ("--beta 0.4,0.6 --seed 1"):
        # the pieces are joined until each run is a key.
        parts, cur = [], None
        for piece in k.split(","):
            cur = piece if cur is None else f"{cur},{piece}"
            if cur in x:
                parts.append(cur)
                cur = None
        if cur is not None:
            raise ClaimError(f"no key {cur!r}")
        return [walk(x[s], rest) for s in parts]
    if isinstance(x, list) and "=" in k:
        # `field=value`, or several joined by `&`: the one item that matches; where several
        # match and `*` follows, every one of them (ordered by its `seed` field where it has one).
        conds = [c.split("=", 1) for c in k.split("&")]
        hit = [v for v in x if isinstance(v, dict)
               and all(str(v.get(f)) == want for f, want in conds)]
        if rest and rest[0] == "*" and len(hit) > 1:
            hit.sort(key=lambda v: seed_key(v.get("seed", "")))
            return [walk(v, rest[1:]) for v in hit]
        if len(hit) != 1:
            raise ClaimError(f"{len(hit)} items with {k!r}")
        return walk(hit[0], rest)
    if isinstance(x, list):
        try:
            return walk(x[int(k)], rest)
        except (ValueError, IndexError):
            raise ClaimError(f"no item {k!r} in a list of {len(x)}")
    if isinstance(x, dict) and k not in x:
        # A key may hold `/` itself ("imported/abilene"): the shortest run of keys that is one.
        for n in range(2, len(keys) + 1):
            if "/".join(keys[:n]) in x:
                return walk(x["/".join(keys[:n])], keys[n:])
    if not isinstance(x, dict) or k not in x:
        near = ", ".join(sorted(map(str, x))[:8]) if isinstance(x, dict) else type(x).__name__
        raise ClaimError(f"no key {k!r} (has: {near})")
    return walk(x[k], rest)


def seed_key(s):
    return (0, int(s)) if str(s).isdigit() else (1, str(s))


def values(x):
    """Per-seed values: a list of numbers, or a dict keyed by seed."""
    if isinstance(x, dict):
        x = [x[s] for s in sorted(x, key=seed_key)]
    if not isinstance(x, list) or not all(isinstance(v, (int, float)) for v in x):
        raise ClaimError(f"the path does not end on per-seed numbers ({str(x)[:60]})")
    return [float(v) for v in x]


def series(expr, aliases, cell=None):
    expr = expr.strip()
    if " ++ " in expr:
        # Seeds pooled from several recorded runs: the series one after the other.
        return [v for part in expr.split(" ++ ") for v in series(part, aliases, cell)]
    scale = re.match(r"^(\d+)\s*\*\s*", expr)
    if scale:
        return [int(scale.group(1)) * v for v in series(expr[scale.end():], aliases, cell)]
    if cell is not None:
        expr = expr.replace("{cell}", cell)
    m = re.fullmatch(r"(best-heuristic|best-aset)\((.+)\)", expr)
    if m:
        ref = m.group(2).strip()
        if ":" in ref:
            name, path = ref.split(":", 1)
            ref = walk(load(name, aliases), path.split("/"))
        else:
            base = refs.recorded([101, 102, 103, 104, 105], required=False)
            if ref not in base:
                raise ClaimError(f"no cell {ref!r} in the recorded baselines table")
            ref = base[ref]
        seeds = sorted(next(iter(ref["rows"].values())), key=seed_key)
        pick = refs.best_heuristic if m.group(1) == "best-heuristic" else refs.best_aset
        return pick(ref, seeds)[1]
    if ":" not in expr:
        raise ClaimError(f"a series is NAME:PATH or best-heuristic(…): {expr!r}")
    name, path = expr.split(":", 1)
    return values(walk(load(name, aliases), path.split("/")))


def difference(expr, aliases, cell=None):
    """A series, the paired difference `A − B` or the paired ratio `A / B` of two."""
    parts = re.split(r"\s+([−/-])\s+", expr.strip())
    if len(parts) > 3:
        raise ClaimError(f"at most one difference or ratio: {expr!r}")
    xs = series(parts[0], aliases, cell)
    if len(parts) == 1:
        return xs, False
    ys = series(parts[2], aliases, cell)
    if len(xs) != len(ys):
        raise ClaimError(f"{len(xs)} seeds against {len(ys)}")
    if parts[1] == "/":
        return [x / y for x, y in zip(xs, ys)], True
    return refs.diff(xs, ys), True


def rule(d, word, target):
    """The verdict of docs/methodology.md: against no target above / below / tie; against
    `≥T` (or `T`) met / missed / tie of d − T; against `≤T` of T − d."""
    if target is None:
        return refs.verdict(d, 0.0, refs.COMPARED)
    t = target.replace(" ", "")
    if t.startswith("≤"):
        return refs.verdict([float(norm_num(t[1:])) - x for x in d])
    return refs.verdict(d, float(norm_num(t.lstrip("≥"))), ("met", "missed", "tie"))


def decimals(s):
    return len(s.split(".", 1)[1]) if "." in s else 0


def cells(spec):
    if "×" in spec:
        a, b = spec.split("×")
        return [f"{x.strip()}|{y.strip()}" for x in a.split(",") for y in b.split(",")]
    return [c.strip() for c in spec.split(",")]


FIG_CLAIM = re.compile(rf"^(.+?)\s*=\s*({NUM})\s*±\s*(\d+(?:\.\d+)?)\s*"
                       rf"(?:\(\s*(above|below|tie|met|missed)(?:\s+vs\s+([≥≤]?\s*{NUM}))?\s*\))?$")
COUNT_CLAIM = re.compile(rf"^count\s+(above|below|tie|met|missed)(?:\s+vs\s+([≥≤]?\s*{NUM}))?\s+of\s+"
                         rf"(.+?)\s+over\s+(.+?)\s*=\s*(\d+)$")
QUOTE_CLAIM = re.compile(r"^quote\s+(\S+)(?:\s+row\s+(.+))?$")


def evaluate(claim, aliases):
    """One claim: ("figure", (mean, sd) as printed, word or None) | ("count", word, n) |
    ("quote", output text, row words). Raises ClaimError where the record disagrees."""
    c = " ".join(claim.split())
    m = COUNT_CLAIM.match(c)
    if m:
        word, target, expr, spec, n = m.groups()
        got = sum(rule(difference(expr, aliases, cell)[0], word, target) == word
                  for cell in cells(spec))
        if got != int(n):
            raise ClaimError(f"`{c}`: the record gives {got}, not {n}")
        return ("count", word, n)
    m = QUOTE_CLAIM.match(c)
    if m:
        out = docgen.GENERATED / f"{m.group(1)}.md"
        if not out.exists():
            raise ClaimError(f"no recorded output docs/generated/{m.group(1)}.md")
        stem = m.group(1).rsplit(".", 1)[0] if not (docgen.GENERATED /
                                                     f"{m.group(1)}.json").exists() else m.group(1)
        if not (docgen.GENERATED / f"{stem}.json").exists():
            raise ClaimError(f"docs/generated/{m.group(1)}.md was rendered from no recorded "
                             "JSON: quote one that was")
        return ("quote", out.read_text(), (m.group(2) or "").split())
    m = FIG_CLAIM.match(c)
    if not m:
        raise ClaimError(f"`{c}` is not a claim (see check_prose's docstring)")
    expr, mean, sd, word, target = m.groups()
    d, _ = difference(expr, aliases)
    have_m = f"{statistics.mean(d):+.{decimals(mean)}f}"
    have_s = f"{(statistics.stdev(d) if len(d) > 1 else 0.0):.{decimals(sd)}f}"
    want_m = norm_num(mean)
    if float(have_m) != float(want_m) or have_s != sd:
        raise ClaimError(f"`{c}`: the record gives {have_m} ± {have_s}")
    if word:
        got = rule(d, word, target)
        if got != word:
            raise ClaimError(f"`{c}`: the verdict rule gives {got}, not {word}")
    return ("figure", (float(want_m), sd), word)
