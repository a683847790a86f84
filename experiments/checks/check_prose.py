"""Checks the prose of docs/*.md and README.md outside the generated blocks: every sentence that
states a figure with `±`, or uses a verdict word (above, below, tie, ties, tied, met, missed,
beat, beats, win, wins, lose, loses, lost, miss, misses, meet, meets, outperform, outperforms) as
a result's verdict, must carry a claim that this check recomputes from
the recorded results in docs/generated/*.json. Reads files only: it runs no simulation and takes
well under a second.

What is checked. A page is cut into units: a table row, a heading, or a sentence of a paragraph
or list item (text inside GENERATED and EXCERPT blocks, fenced code, inline code, link targets
and HTML comments is not read). In a unit, a `±` figure is always checked; a verdict word is
checked unless the unit's context shows it is not a verdict:

  doc       a place in the text: "the table above", "the rows below:", "see below", "as above",
            "listed below", "below:" (a structure word just before it, or a pointer verb), "the
            baselines below are …", "the checkpoint above was …", "(*Section title* below)"
  quantity  a comparison with a stated quantity or threshold, not a result: "below 1 ms", "at or
            above the share", "falls below θ", "never below 30 s" ("falls below it", "stays below
            `x`" and a bare difference, "0.56 pp below,", are results)
  rule      a tie-break or selection rule: "ties go to the lower index", "ties: lower p99",
            "tie-break"
  modal     a hypothetical: "must beat", "to beat", "would win", "would have lost", "cannot be met"
  event     a query's own deadline: "queries that missed their deadline"; a thing lost in
            transit: "streams lost", "lost packets", "the connection is lost", "no admitted query
            is lost", "the misses are streams refused"
  encounter meeting a thing, not a target: "how a checkpoint meets an application"
  quantity  (also) a threshold after the word: "valued above it by more than a margin"
  definition the rule's own wording: "**above** if …", "**tie** otherwise", "a tie, not "met"",
            "the words met, missed, above, below and tie"
  no-result a unit naming no figure (no digit) and no reference (heuristic, ASET, bound, target,
            agent, baseline, static, table(s) of a learned policy, …): "every crate above it in
            the graph", "allocation above dispatch", "the first answer wins"

A checked figure or word needs a claim in an HTML comment inside or right after its unit
(`<!-- claim: ... -->`; several claims in one comment are separated by ` ; `). Claims:

  SERIES [− SERIES] = FIGURE [(WORD [vs TARGET])]
      the per-seed series (or the paired per-seed difference of two), mean ± sd, must print as
      FIGURE (to FIGURE's precision; FIGURE must appear in the unit), and WORD must be the verdict
      of docs/methodology.md's rule (experiments/references.py `verdict`: above / below / tie,
      or against TARGET met / missed / tie); WORD must appear in the unit.
  count WORD [vs TARGET] of SERIES − SERIES over CELLS = N
      the number of CELLS whose verdict is WORD is N (N, or its name up to twenty, must appear in
      the unit, and WORD too). CELLS: `a,b × c,d` (cells `a|c`, `a|d`, …) or `a|c, b|d`; the
      series name the cell as `{cell}`.
  quote OUTPUT [row WORD …]
      every `±` figure of the unit not claimed otherwise appears in a recorded output
      (docs/generated/OUTPUT.md, rendered from its recorded JSON, which `check_docs --rerender`
      re-renders), and each verdict word of the unit appears on a line of it that holds one of
      those figures, or all the row words.

SERIES is `NAME:PATH` — NAME a recorded JSON (docs/generated/NAME.json, or an alias a page
defines with `<!-- claim-data: ALIAS = NAME -->`), PATH keys separated by `/` (a key that holds `/` itself, "imported/abilene", is read as one; `*`: every item of
a list or every value of a dict; `field=value[&field=value]` in a list: the item whose fields match, or with `*` after it every such item, by seed), ending on the per-seed values (a list, or a dict keyed by seed)
— or `best-heuristic(REF)` / `best-aset(REF)`: the per-seed values of the reference chosen by
mean (experiments/references.py), REF a `topology|load` cell of the recorded baselines table or
a `NAME:PATH` naming a references dict. `SERIES ++ SERIES` pools the seeds of several recorded
runs (the two sides of a difference pooled in the same order).

Exits 1 naming file:line and why for each failure, 0 otherwise.

Every page is checked (docs/*.md and README.md); `.ci/run` gates on it.

Usage: python3 -m experiments.checks.check_prose [--self-test] [--verbose]
"""
import json
import re
import statistics
import sys

sys.dont_write_bytecode = True  # a check leaves nothing behind
from experiments import docgen  # noqa: E402
from experiments import references as refs  # noqa: E402

VERDICT = re.compile(r"\b(above|below|ties|tied|tie|met|missed|beats|beat|wins|win|loses|lose|lost|misses|miss|meets|meet|outperforms|outperform)\b", re.I)
NUM = r"[+\-−]?\d+(?:\.\d+)?"
FIGURE = re.compile(rf"({NUM})\s*(?:%|pp|ms|s)?\s*±\s*(\d+(?:\.\d+)?)")
CLAIM = re.compile(r"<!--\s*claim:(.*?)-->", re.S)
DATA = re.compile(r"<!--\s*claim-data:\s*(\S+)\s*=\s*(\S+)\s*-->")
COMMENT = re.compile(r"<!--.*?-->", re.S)
# A unit whose claim states a verdict: "a tie against ≤ 1, not met" (the claim gives tie).
CLAIM_VERDICT = re.compile(r"\((?:above|below|tie|met|missed)(?:\s+vs\s+[^)]*)?\)\s*(?:;|-->)")

# Context rules for verdict words (see the module's docstring).
STRUCTURE = (r"table|tables|list|lists|figure|figures|section|sections|paragraph|row|rows|column|"
             r"columns|example|examples|command|commands|plot|plots|graph|chart|page|pages|text|"
             r"heading|note|notes|link|links|item|items|entry|entries|line|lines|block|blocks|"
             r"run|runs|round|rounds|measurement|measurements|figures|one|ones|layers|bench|"
             r"pages linked|step|steps|sweep|profile|cost model|the model|numbers|calls|code|cells")
POINTER = (r"see|shown|listed|described|defined|given|as|named|noted|printed|quoted|explained|"
           r"discussed|reported|recorded|measured|used|linked|following|follows|cited|stated")
FOLLOW = (r"[.,;:()\]]|$|\s(?:is|are|was|were|has|have|from|on|in|with|and|for|to|by|it|them|both|"
          r"that|which|shows?|lists?|gives?|gave|says?|holds?|—|–)(?:\s|$|[.,;:)])")
DOC_BEFORE = re.compile(rf"\b(?:{STRUCTURE}|{POINTER})\s*\**\s*$", re.I)
DOC_AFTER = re.compile(rf"^\s*\**\s*(?:{FOLLOW})", re.I)
DOC_AFTER_NOUN = re.compile(rf"^\s+(?:the\s+)?(?:{STRUCTURE}|core|crates?|modules?|layers?|"
                            rf"dispatch|the command line)\b", re.I)
DOC_NAMED_BEFORE = re.compile(r"(?:^|[.;:(—]\s*|\b(?:and|but)\s+)(?:the|these|this|those)\s+"
                              r"[\w`…-]+\s*$", re.I)
DOC_NAMED_AFTER = re.compile(r"^\s+(?:is|are|was|were|compares?|gives?|shows?|lists?|uses?|runs?)"
                             r"\s+(?!above|below|a tie|tied|met|missed)\w", re.I)
# A figure stated earlier in the page, named by a determiner: "the 35.6 s above was measured on
# …", "the 717–786× above"; a bare difference ("0.56 pp below,", "1.47 pp below it") is a result.
FIGURE_BEFORE = re.compile(r"\b(?:the|this|that|these|those)\s+"
                           r"(?:[\d.,–-]+\s*(?:s|ms|min|µs|%|pp|×)\s*)+$", re.I)
# The rule's own definition: "**above** if mean(d) …", "**tie** otherwise", "the words met,
# missed, above …", "is a tie, not \"met\"".
DEFINE = re.compile(r"^\**\s+(?:if|otherwise)\b|^\W?\s*,\s*\**(?:above|below|tie|met|missed)\b|^\"|"
                    r"^\s*,\s*not\s+[\"“]", re.I)
DEFINE_BEFORE = re.compile(r"(?:\bwords\s+|\"|(?:above|below|tie|met|missed),\s+|(?:above|below|tie|met|missed),?\s+(?:and|or)\s+)$", re.I)
# A clause that states a condition or a property of a bound, not a result.
# The clause opens the unit, or follows a `;` or `:` ("…; n/a where the oracle is not above the
# best ASET policy").
CONDITION = re.compile(r"(?:^|[;:]\s*(?:n/a\s+)?)\W*(?:where|if|when|whenever|unless|whether)\b"
                       r"[^,;:]*$", re.I)
NEGATED = re.compile(r"\bno\s+(?:[\w`…-]+\s+){0,2}$", re.I)
# `wins` of a mechanism: the first answer, a copy, a restart, the lowest index wins.
MECHANISM = re.compile(r"\b(?:answer|copy|copies|restart|index|claimant|offer|binding|worker|"
                       r"pointer|query|task|tasks|original|demand|capacity|one|cluster)\s+(?:[\w`…()]+\s+){0,1}$"
                       r"|\((?:and\s+)?$", re.I)
# A query's or job's own deadline: "queries that then missed their deadline" (an event, not a
# verdict).
EVENT_AFTER = re.compile(r"^\s+(?:(?:its|their|the|a|every|each)\s+)?(?:own\s+)?deadlines?\b", re.I)
# A thing lost, missed or lost in transit, not a result lost: "streams lost", "lost packets",
# "instead of lose packets", "the connection is lost", "no admitted query is lost", "the misses
# are streams refused at their open".
EVENT_NOUN = (r"streams?|quer(?:y|ies)|packets?|frames?|connections?|jobs?|tasks?|requests?|"
              r"messages?|replicas?")
EVENT_NOUN_BEFORE = re.compile(rf"\b(?:{EVENT_NOUN})\s+$", re.I)
EVENT_NOUN_AFTER = re.compile(rf"^\s+(?:the\s+|their\s+|its\s+|any\s+)?(?:{EVENT_NOUN})\b", re.I)
PASSIVE_BEFORE = re.compile(r"\b(?:is|are|was|were|be|been|being|gets?|got)\s+$", re.I)
NOUN_EVENT_AFTER = re.compile(rf"^\s+(?:is|are|was|were)\s+(?:[\w`…-]+\s+){{0,2}}(?:{EVENT_NOUN})\b",
                              re.I)
# Meeting a thing, not a target: "how a checkpoint meets an application it does not know".
ENCOUNTER_AFTER = re.compile(r"^\s+(?:an?|each|every|any)\s+(?!target|goal|bound|deadline|"
                             r"threshold|floor)\w", re.I)
THRESHOLD_AFTER = re.compile(r"^\s+[^,;.]*?\bby (?:more|less) than\b", re.I)
QUANTITY = re.compile(r"^\s+(?:the\s+|a\s+|about\s+|~|≈|roughly\s+|some\s+)?"
                      r"(?:[+\-−]?\d|[α-ωΑ-Ω]\b|[a-zA-Z]\b|×|probability|one period|warm-up|"
                      r"what any|the share|the configuration's|the earlier)", re.I)
# A floor or ceiling stated by its wording ("at or above the share", "never below the best single
# policy"); a motion word ("falls below", "stays above") is a quantity only with a stated quantity
# after it (QUANTITY: "falls below θ", "stays above 91 %"), else a result ("falls below it").
QUANTITY_BEFORE = re.compile(r"\b(?:at or|or|kept|keep|never)\s*$", re.I)
RULE_AFTER = re.compile(r"^(?:-break|-breaks|-breaking|\s*:|\s+(?:go|goes|going|to|are broken|"
                        r"broken|as below|in the deterministic))", re.I)
MODAL_BEFORE = re.compile(r"\b(?:(?:must|to|would|could|should|can|cannot|can't|might|may|will)"
                          r"(?:\s+have)?|not be|be)\s*$", re.I)
REFERENCE = re.compile(r"\d+\.\d|\d\s*(?:%|pp|ms|µs|s\b|×|qps)|×\s*\d|±|heuristic|ASET|bound|target|agent|baseline|static|paper|oracle|"
                       r"prior|transfer|scratch|tuner|network|learned|\bdqn\b|tables alone|"
                       r"the rules|every rule|comparison|goal", re.I)
NUMBER_WORDS = {w: i for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen twenty".split())}


def norm_num(s):
    return s.replace("−", "-").replace(",", "")


def context(text, m, raw=""):
    """The reason a verdict word (match `m` in `text`) is not a verdict, or None."""
    w = m.group(1).lower()
    before, after = text[:m.start()], text[m.end():]
    if DEFINE.match(after) or DEFINE_BEFORE.search(before):
        return "definition"
    if w in ("above", "below"):
        if (DOC_BEFORE.search(before) or FIGURE_BEFORE.search(before)) and DOC_AFTER.match(after):
            return "doc"
        if re.match(r"^\s+(?:was|were|is|are)\s*[.,;:)]", after):
            return "doc"
        if re.search(rf"\b(?:{POINTER})\s*$", before, re.I):
            return "doc"
        if re.match(r"^\s*:", after) or DOC_AFTER_NOUN.match(after):
            return "doc"
        # "The baselines below are …", "the checkpoint above was trained": a thing named by its
        # place in the page; "(*Retrained* below)": a section named by its title.
        if DOC_NAMED_BEFORE.search(before) and DOC_NAMED_AFTER.match(after):
            return "doc"
        if re.search(r"\*[^*\s][^*]*\*\s*$", before) and DOC_AFTER.match(after):
            return "doc"
        if QUANTITY.match(after) or QUANTITY_BEFORE.search(before):
            return "quantity"
        if re.search(r"\bat (?:most|least)\s+\S+\s*(?:%|pp|ms|s)?\s*$", before):
            return "quantity"
    if w in ("beat", "beats", "win", "wins", "above", "below") and THRESHOLD_AFTER.match(after):
        return "quantity"
    if w in ("met", "missed") and EVENT_AFTER.match(after):
        return "event"
    if w in ("lose", "loses", "lost", "miss", "misses") and (
            EVENT_NOUN_BEFORE.search(before) or EVENT_NOUN_AFTER.match(after)
            or (w == "lost" and PASSIVE_BEFORE.search(before))
            or (w in ("misses", "miss") and NOUN_EVENT_AFTER.match(after))):
        return "event"
    if w in ("meet", "meets") and ENCOUNTER_AFTER.match(after):
        return "encounter"
    if w in ("win", "wins") and MECHANISM.search(before):
        return "mechanism"
    if w in ("tie", "ties", "tied") and re.search(r"\bnear[- ]$", before, re.I):
        return "property"  # "a near-tie at λ 100 (seed 102: …)": how close, not a verdict
    if NEGATED.search(before):
        return "property"
    if CONDITION.search(before):
        return "condition"
    if w in ("tie", "ties", "tied") and (RULE_AFTER.match(after)
                                         or re.search(r"\((?:ties?\s*)?$", before)
                                         and RULE_AFTER.match(after)):
        return "rule"
    if w in ("ties",) and re.match(r"^\s*:", after):
        return "rule"
    if re.search(r"\b(?:not|neither\s+\w+\s+nor)\s+$", before) and CLAIM_VERDICT.search(raw):
        return "negated"
    if MODAL_BEFORE.search(before):
        return "modal"
    if not REFERENCE.search(text):
        return "no-result"
    return None


# --- units -------------------------------------------------------------------------------------

SPLIT = re.compile(r"(?<=[.!?])(\**)\s+(?=[A-Z(*`<\-−\[“\"_]|\d)")
ABBREV = re.compile(r"(?:\be\.g|\bi\.e|\bvs|\bcf|\betc|§\d+|\bNo|\bFig|\beq|\beqs|\bet al)\.$")


def units(path):
    """A page's units outside generated blocks and code: (first line, text with comments)."""
    lines = path.read_text().splitlines()
    out, para, block, code = [], [], False, False

    def flush():
        if para:
            out.extend(sentences(para))
            para.clear()

    for i, line in enumerate(lines, 1):
        if docgen.BEGIN.match(line):
            flush()
            block = True
            continue
        if docgen.END.match(line):
            block = False
            continue
        if block:
            continue
        if line.lstrip().startswith("```"):
            flush()
            code = not code
            continue
        if code:
            continue
        s = line.strip()
        if not s:
            flush()
        elif s.startswith("|") or s.startswith("#"):
            flush()
            out.append((i, s))
        elif re.match(r"^(?:[-*+]|\d+\.)\s", s):
            flush()
            para.append((i, s))
        else:
            para.append((i, s))
    flush()
    return out


def sentences(para):
    """A paragraph's sentences, each with the line it starts on; a comment that opens a sentence
    belongs to the one before it."""
    text, starts = "", []
    for i, s in para:
        starts.append((len(text), i))
        text += s + " "
    pieces, last = [], 0
    for m in SPLIT.finditer(text):
        if ABBREV.search(text[:m.start()]):
            continue
        pieces.append((last, text[last:m.end(1)]))
        last = m.end()
    pieces.append((last, text[last:]))
    out = []
    for off, s in pieces:
        lead = re.match(r"^(?:\s*<!--.*?-->)+", s, re.S)
        if lead and out:
            out[-1] = (out[-1][0], out[-1][1] + " " + lead.group(0))
            s, off = s[lead.end():], off + lead.end()
        if not s.strip():
            continue
        line = max(i for o, i in starts if o <= off)
        out.append((line, s.strip()))
    return out


def plain(text):
    """A unit's text as read for figures and words: no comments, inline code, link targets,
    emphasis."""
    t = COMMENT.sub(" ", text)
    t = re.sub(r"`[^`]*`", "`…`", t)
    t = re.sub(r"\]\([^)]*\)", "]", t)
    t = re.sub(r"<[^>]+>", " ", t)
    return t.replace("**", "").replace("\u202f", " ").replace("\u2009", " ")


# --- claims ------------------------------------------------------------------------------------

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


# --- the check ---------------------------------------------------------------------------------

# The verdicts a verdict word states: a claim that gives one of them covers the word ("loses" is
# covered by a claim that gives below, or missed against a target; "meets" by met).
SAME = {"ties": {"tie"}, "tied": {"tie"}, "meets": {"met"}, "meet": {"met"},
        "misses": {"missed"}, "miss": {"missed"},
        "loses": {"below", "missed"}, "lose": {"below", "missed"}, "lost": {"below", "missed"},
        "beats": {"above", "met"}, "beat": {"above", "met"}, "wins": {"above", "met"},
        "win": {"above", "met"}, "outperforms": {"above"}, "outperform": {"above"}}
# The words that state a claim's verdict.
VERDICT_FORMS = {v: "|".join(sorted({v} | {w for w, vs in SAME.items() if v in vs},
                                    key=len, reverse=True))
                 for v in ("above", "below", "tie", "met", "missed")}

def check_unit(text, aliases):
    """The failures of one unit (list of strings) and the kind of each verdict word found
    ({"claimed": n, "doc": n, …})."""
    errors, kinds = [], {}
    body = plain(text)
    figures = [(float(norm_num(a)), b, f"{a} ± {b}") for a, b in FIGURE.findall(body)]
    words = []
    for m in VERDICT.finditer(body):
        why = context(body, m, text)
        if why:
            kinds[why] = kinds.get(why, 0) + 1
        else:
            words.append(m.group(1).lower())
    if not figures and not words:
        return errors, kinds
    claims = []
    for com in CLAIM.findall(text):
        for c in com.split(" ; "):
            if c.strip():
                try:
                    claims.append(evaluate(c, aliases))
                except ClaimError as e:
                    errors.append(str(e))
    if errors:
        return errors, kinds
    lowered = body.lower()
    stated = {norm_num(n) for n in re.findall(NUM, body)}
    stated |= {str(v) for k, v in NUMBER_WORDS.items() if re.search(rf"\b{k}\b", lowered)}
    covered_f, covered_w = set(), set()
    for kind, a, b in claims:
        if kind == "figure":
            # An unsigned figure states a size ("missed by 14.14 ± 0.50 pp").
            match = [f for f in figures if f[1] == a[1] and (f[0] == a[0] or (
                f[0] == abs(a[0]) and not re.match(r"[+\-−]", f[2])))]
            if not match:
                errors.append(f"a claim gives {a[0]:+} ± {a[1]}, which the sentence does not "
                              "state")
            covered_f.update(f[2] for f in match)
            if b:
                forms = VERDICT_FORMS[b]
                if not re.search(rf"\b(?:{forms})\b", body, re.I):
                    errors.append(f"a claim gives the verdict {b}, which the sentence does not "
                                  "state")
                covered_w.add(b)
        elif kind == "count":
            if b not in stated:
                errors.append(f"a claim counts {b} cells {a}, which the sentence does not state")
            covered_w.add(a)
        else:
            lines = [l.replace("−", "-") for l in a.splitlines()]
            quoted = []
            for f in figures:
                if f[2] in covered_f:
                    continue
                at = [l for l in lines
                      if re.search(rf"(?<![\d.]){re.escape(norm_num(f[2].split(' ± ')[0]).lstrip('+'))}"
                                   rf"\s*(?:%|pp)?\s*±\s*{re.escape(f[1])}(?![\d])", l)]
                if at:
                    covered_f.add(f[2])
                    quoted += at
            if b:
                quoted += [l for l in lines if all(w.lower() in l.lower() for w in b)]
            for w in set(words):
                if any(re.search(rf"\b(?:{w}|{'|'.join(SAME.get(w, ()))})\b", l, re.I)
                       for l in quoted):
                    covered_w.add(w)
    for f in figures:
        if f[2] not in covered_f:
            errors.append(f"`{f[2]}` has no claim that recomputes it from recorded results")
    for w in sorted(set(words)):
        if w not in covered_w and not covered_w & SAME.get(w, set()):
            errors.append(f"the verdict word `{w}` has no claim that recomputes it from recorded "
                          "results")
    kinds["claimed"] = len(words) if not errors else 0
    return errors, kinds


def check(verbose=False, only=None):
    failures, totals, checked = [], {}, 0
    for page in docgen.pages():
        if only is not None and str(page.relative_to(docgen.ROOT)) not in only:
            continue
        text = page.read_text()
        aliases = dict(DATA.findall(text))
        for line, unit in units(page):
            errors, kinds = check_unit(unit, aliases)
            for k, v in kinds.items():
                totals[k] = totals.get(k, 0) + v
            if CLAIM.search(unit) and not errors:
                checked += 1
            rel = page.relative_to(docgen.ROOT)
            for e in errors:
                failures.append(f"{rel}:{line}: {e}")
                if verbose:
                    failures[-1] += f"\n    {' '.join(plain(unit).split())[:300]}"
    return failures, totals, checked


SELF_TESTS = [
    # (unit, aliases, failures expected)
    ("The table above lists every cell.", {}, 0),
    ("See below.", {}, 0),
    ("A query is answered in time at or below 1 s.", {}, 0),
    ("Ties go to the lower index.", {}, 0),
    ("Every crate above it in the graph recompiles.", {}, 0),
    ("The queue bound admitted queries that then missed their deadline: 1.81 % of them.", {}, 0),
    ("The network's action must be valued above it by more than a margin of 0.5 pp.", {}, 0),
    ("The agent is valued above the best heuristic by 0.5 pp.", {}, 1),
    ("The baselines below are the ones users compare with at 0.5 pp.", {}, 0),
    ("The checkpoint above was trained once, at λ 60 for 40 episodes.", {}, 0),
    ("The agent above is below the best heuristic at λ 60.", {}, 1),
    ("Retraining at λ 60 does not change that (*Retrained* below).", {}, 0),
    ("Its two ablations at λ 60 (a uniform prior; the lowest cluster wins).", {}, 0),
    ("They flip a near-tie at full-edge λ 100 (seed 102: 70.14 % against 70.26 %).", {}, 0),
    ("The robust agent ties at most scales up to ×1 at λ 60. <!-- claim: quote "
     "tuner--capacity-scales-0.5,0.75,1,1.25,1.5-lambdas-60 row robust tie -->", {}, 0),
    ("**above** if mean(d) − 2·SE > 0, **below** if mean(d) + 2·SE < 0, **tie** otherwise.", {}, 0),
    ("A difference above a target by its mean only is a tie, not \"met\".", {}, 0),
    ("The agent is a tie with the best heuristic, not above it.", {}, 1),
    ("Retraining with the `x` command above gave a byte-identical checkpoint.", {}, 0),
    ("The agent ties it at λ 100 and below it at λ 20 (−0.53 pp).", {}, 1),
    ("The words met, missed, above, below and tie come from this rule.", {}, 0),
    ("The agent is above the best heuristic.", {}, 1),
    ("The agent is at 89.67 ± 0.74 %.", {}, 1),
    ("Full-edge λ 60 is below the best heuristic: −3.71 ± 0.52 pp. "
     "<!-- claim: quote tuner--capacity-scales-1,0.5 -->", {}, 0),
    ("At dc-cloud λ 80 it is −0.12 ± 0.12 pp (below) <!-- claim: "
     "meta:dc-cloud|80/*/dqn:heuristics − meta:dc-cloud|80/*/tables:heuristics = −0.12 ± 0.12 "
     "(below) -->", {"meta": "generalisation--topologies-full-edge,co-dc-cloud,dc-cloud-workloads"
                     "-20,40,60,80,100,diurnal-agents-heuristics-models-topology-heuristics.dqn,"
                     "shipped-models-topology-.dqn"}, 0),
    ("At dc-cloud λ 80 it is −0.12 ± 0.12 pp (tie) <!-- claim: "
     "meta:dc-cloud|80/*/dqn:heuristics − meta:dc-cloud|80/*/tables:heuristics = −0.12 ± 0.12 "
     "(tie) -->", {"meta": "generalisation--topologies-full-edge,co-dc-cloud,dc-cloud-workloads"
                   "-20,40,60,80,100,diurnal-agents-heuristics-models-topology-heuristics.dqn,"
                   "shipped-models-topology-.dqn"}, 1),
    ("It is −0.13 ± 0.12 pp <!-- claim: meta:dc-cloud|80/*/dqn:heuristics − "
     "meta:dc-cloud|80/*/tables:heuristics = −0.13 ± 0.12 -->",
     {"meta": "generalisation--topologies-full-edge,co-dc-cloud,dc-cloud-workloads-20,40,60,80,"
              "100,diurnal-agents-heuristics-models-topology-heuristics.dqn,"
              "shipped-models-topology-.dqn"}, 1),
    # A bare difference before the word is a result; a determiner makes it a place in the page.
    ("It is 0.56 pp below, as the table shows.", {}, 1),
    ("The agent is 1.47 pp below it on dc-cloud.", {}, 1),
    ("The 35.6 s above was measured once.", {}, 0),
    # Motion words: a quantity only when a stated quantity follows.
    ("Its success falls below it at λ 60 (−0.59 pp).", {}, 1),
    ("The share of the bound stays above 91 % at every load.", {}, 0),
    # Widened verdict words.
    ("Step-inspection loses on every topology (−1.65, −1.23, −0.52 pp).", {}, 1),
    ("The agent misses the target at λ 20.", {}, 1),
    ("The agent meets the target at λ 60.", {}, 1),
    ("The tuned agent outperforms every fixed configuration.", {}, 1),
    # Events, encounters and modals are not verdicts.
    ("No admitted query is lost when a worker restarts.", {}, 0),
    ("A gateway killed: 0 of 54 streams lost.", {}, 0),
    ("The misses are streams that never bound.", {}, 0),
    ("How a checkpoint meets an application.", {}, 0),
    ("Without the fallback it would have lost its first windows.", {}, 0),
]


def self_test():
    bad = 0
    for unit, aliases, want in SELF_TESTS:
        errors, _ = check_unit(unit, aliases)
        if bool(errors) != bool(want):
            bad += 1
            print(f"check_prose self-test: {unit[:70]!r}: expected "
                  f"{'a failure' if want else 'none'}, got {errors}", file=sys.stderr)
    # Sentence splitting: a claim opening the next sentence belongs to the one before.
    got = sentences([(1, "One is above. <!-- claim: x --> Two is e.g. below it."), (2, "Three.")])
    if [s for _, s in got] != ["One is above. <!-- claim: x -->", "Two is e.g. below it.",
                               "Three."]:
        bad += 1
        print(f"check_prose self-test: sentences: {got}", file=sys.stderr)
    print(f"check_prose self-test: {len(SELF_TESTS) + 1 - bad} of {len(SELF_TESTS) + 1} pass")
    return 1 if bad else 0



def main():
    if "--self-test" in sys.argv[1:]:
        return self_test()
    failures, totals, checked = check("--verbose" in sys.argv[1:], None)
    for f in failures:
        print(f"check_prose: {f}", file=sys.stderr)
    summary = ", ".join(f"{k} {v}" for k, v in sorted(totals.items()))
    if failures:
        print(f"check_prose: {len(failures)} failures (verdict words: {summary})", file=sys.stderr)
        return 1
    print(f"check_prose: {checked} sentences with claims hold; verdict words: {summary}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
