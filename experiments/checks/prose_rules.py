"""The reading half of the prose check (experiments/checks/check_prose.py): a page cut into units
(a table row, a heading, a sentence of a paragraph or list item, outside generated blocks and
code), and the context rules that tell a verdict word that is not a result's verdict ("the table
above", "below 1 ms", "ties go to …", "must beat", "streams lost", …). check_prose's docstring
lists the rules; its self-test exercises them."""
import re

from experiments import docgen

VERDICT = re.compile(r"\b(above|below|ties|tied|tie|met|missed|beats|beat|wins|win|loses|lose|lost|misses|miss|meets|meet|outperforms|outperform)\b", re.I)
COMMENT = re.compile(r"<!--.*?-->", re.S)
# A unit whose claim states a verdict: "a tie against ≤ 1, not met" (the claim gives tie).
CLAIM_VERDICT = re.compile(r"\((?:above|below|tie|met|missed)(?:\s+vs\s+[^)]*)?\)\s*(?:;|-->)")

# Context rules for verdict words (see check_prose's docstring).
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


def place(before, after):
    """Why `above` or `below` (between `before` and `after`) is not a verdict: "doc" (a place
    in the page), "quantity" (a stated quantity or threshold), or None."""
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
    return None


def context(text, m, raw=""):
    """The reason a verdict word (match `m` in `text`) is not a verdict, or None."""
    w = m.group(1).lower()
    before, after = text[:m.start()], text[m.end():]
    if DEFINE.match(after) or DEFINE_BEFORE.search(before):
        return "definition"
    if w in ("above", "below"):
        why = place(before, after)
        if why:
            return why
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
