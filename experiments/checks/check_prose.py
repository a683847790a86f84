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
import re
import sys

sys.dont_write_bytecode = True  # a check leaves nothing behind
from experiments import docgen  # noqa: E402
from experiments.checks.prose_claims import (  # noqa: E402
    NUM, ClaimError, evaluate, norm_num)
from experiments.checks.prose_rules import (  # noqa: E402
    VERDICT, context, plain, sentences, units)

FIGURE = re.compile(rf"({NUM})\s*(?:%|pp|ms|s)?\s*±\s*(\d+(?:\.\d+)?)")
CLAIM = re.compile(r"<!--\s*claim:(.*?)-->", re.S)
DATA = re.compile(r"<!--\s*claim-data:\s*(\S+)\s*=\s*(\S+)\s*-->")
NUMBER_WORDS = {w: i for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen twenty".split())}


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


def verdict_words(body, text, kinds):
    """The verdict words of a unit that are verdicts; each of the others is counted in `kinds` by
    the reason it is not one."""
    words = []
    for m in VERDICT.finditer(body):
        why = context(body, m, text)
        if why:
            kinds[why] = kinds.get(why, 0) + 1
        else:
            words.append(m.group(1).lower())
    return words


def unit_claims(text, aliases, errors):
    """The claims in a unit's comments, evaluated; each one the record disagrees with adds its
    failure to `errors`."""
    claims = []
    for com in CLAIM.findall(text):
        for c in com.split(" ; "):
            if c.strip():
                try:
                    claims.append(evaluate(c, aliases))
                except ClaimError as e:
                    errors.append(str(e))
    return claims


def stated_numbers(body):
    """The numbers a unit states, in digits or as a word up to twenty."""
    lowered = body.lower()
    stated = {norm_num(n) for n in re.findall(NUM, body)}
    stated |= {str(v) for k, v in NUMBER_WORDS.items() if re.search(rf"\b{k}\b", lowered)}
    return stated


def cover_figure(figure, word, body, figures, errors, covered_f, covered_w):
    """A figure claim: the unit's figures it states, and its verdict word."""
    # An unsigned figure states a size ("missed by 14.14 ± 0.50 pp").
    match = [f for f in figures if f[1] == figure[1] and (f[0] == figure[0] or (
        f[0] == abs(figure[0]) and not re.match(r"[+\-−]", f[2])))]
    if not match:
        errors.append(f"a claim gives {figure[0]:+} ± {figure[1]}, which the sentence does not "
                      "state")
    covered_f.update(f[2] for f in match)
    if word:
        forms = VERDICT_FORMS[word]
        if not re.search(rf"\b(?:{forms})\b", body, re.I):
            errors.append(f"a claim gives the verdict {word}, which the sentence does not "
                          "state")
        covered_w.add(word)


def cover_quote(output, row, figures, words, covered_f, covered_w):
    """A quote claim: the unit's figures that appear in the recorded output, and the verdict
    words on a line that holds one of them or all the row words."""
    lines = [l.replace("−", "-") for l in output.splitlines()]
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
    if row:
        quoted += [l for l in lines if all(w.lower() in l.lower() for w in row)]
    for w in set(words):
        if any(re.search(rf"\b(?:{w}|{'|'.join(SAME.get(w, ()))})\b", l, re.I)
               for l in quoted):
            covered_w.add(w)


def check_unit(text, aliases):
    """The failures of one unit (list of strings) and the kind of each verdict word found
    ({"claimed": n, "doc": n, …})."""
    errors, kinds = [], {}
    body = plain(text)
    figures = [(float(norm_num(a)), b, f"{a} ± {b}") for a, b in FIGURE.findall(body)]
    words = verdict_words(body, text, kinds)
    if not figures and not words:
        return errors, kinds
    claims = unit_claims(text, aliases, errors)
    if errors:
        return errors, kinds
    stated = stated_numbers(body)
    covered_f, covered_w = set(), set()
    for kind, a, b in claims:
        if kind == "figure":
            cover_figure(a, b, body, figures, errors, covered_f, covered_w)
        elif kind == "count":
            if b not in stated:
                errors.append(f"a claim counts {b} cells {a}, which the sentence does not state")
            covered_w.add(a)
        else:
            cover_quote(a, b, figures, words, covered_f, covered_w)
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
