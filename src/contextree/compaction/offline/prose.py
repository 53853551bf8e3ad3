"""What the user's and the assistant's prose says: constraints, preferences, decisions, planned
steps, a pending question and the file paths mentioned."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import Final

from contextree.compaction.offline.digest import SENTENCE_CHARS
from contextree.compaction.offline.lazy_pattern import LazyPattern
from contextree.compaction.offline.specifics import has_specifics, says_something
from contextree.compaction.offline.text import (
    FENCE,
    LIST_MARKER,
    Gated,
    add_once,
    clip,
    split_sentences,
)

_OPENERS: Final = (
    r"(?:(?:oh|and|but|also|so|please|pls|plz|just|btw|plus|ok(?:ay)?|yes|yeah)[,.!]?\s+)"
)
"""Words people put before a rule in plain talk ("oh and don't cc him", "ok but never ...")."""

_DONT: Final = r"(?:don['\u2019]?t|do not)"
_NOT_A_RULE_AFTER_DONT: Final = (
    r"(?!\s+(?:know|think|care|remember|understand|see|get|mind|worry|bother|recall|have|has|"
    r"need|want|like|love|feel|believe|agree|mean|seem|look|sound|own|exist|matter)\b)"
)
"""Not a rule: "don't" before a verb of state ("don't know why", "don't worry about it")."""

_NOT_A_RULE_AFTER_NO: Final = (
    r"(?!(?:worries|worry|idea|problems?|luck|rush|hurry|thanks|way|clue|doubt|matter|wonder|"
    r"one|longer|sense|need|kidding|offen[cs]e|comment|chance|pressure|difference|change|"
    r"response|reply|answer|signal|sign|results?|match(?:es)?|errors?|issues?|news|word|"
    r"reason|big deal|biggie|stress|judg(?:e)?ment|shame|harm|hard feelings|"
    r"surprise|mention|record|trace|more|less|further|other|such|the|a|an|"
    r"i|it|we|you|they|he|she|that|this)\b)"
)
"""Words after "no" that report, answer or reassure ("no luck", "no worries", "no idea"),
rather than rule something out."""

_AMOUNT = (
    r"(?:[£$€]?\d+|(?:a |an )?(?:couple|few|hour|day|week|month|night|mile|grand|half|quarter|"
    r"midnight|noon|one(?! of)|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|"
    r"twenty|thirty|forty|fifty|sixty|hundred|thousand))"
)
"""What follows a limit's "more than" when words stand between it and the verb: an amount."""

# Imperatives at the start of a sentence, or obligations anywhere in it. "I don't know why"
# is a complaint, not a rule, so "don't" only counts at the start. A curly apostrophe is an
# apostrophe.
CONSTRAINT = Gated(
    (
        r"(?i)^(?:please\s+|and\s+|but\s+|also\s+|so\s+)?only\b"
        rf"|^{_OPENERS}{{0,3}}(?:{_DONT}{_NOT_A_RULE_AFTER_DONT}|never(?!\s+mind\b)|always|"
        r"avoid|make sure|ensure)\b"
        # A limit said plainly ("no more than 3000", "can't be over 95,000 words", "that's a
        # real ceiling"; not "no more than a scratch"), and what a thing has to be ("the
        # barrier has to be in the contract"; not "it has to be the router", a guess).
        r"|\b(?:no more than(?!\s+an?\b)|not more than|no later than|not later than|"
        r"can['\u2019]?t (?:be|go|cost|run|spend|pay|take|last) (?:\w+ )?"
        r"(?:over|above|past|beyond|more than|later than|longer than)|"
        # With more words between, a limit names an amount: "i cant be away from the farm more
        # than a couple of hours", "we're not spending more than three hundred quid" (not
        # "he was not going over the bridge", "i can't be sure it was more than that").
        r"(?:can['\u2019]?t (?:be|go|stay|spend|pay|take|last|work|drive)(?! sure\b)|"
        r"(?:not|never|won['\u2019]?t) (?:be )?(?:spending|spend|paying|pay|going|go|driving|"
        r"drive|working|work|taking|take|staying|stay|travell?ing|travel)) (?:\w+ ){0,4}?"
        rf"(?:over|above|past|beyond|more than|later than|longer than) {_AMOUNT}|"
        # A must said as what holds whatever else happens ("they need a cover they can show
        # by then whatever happens"; not "no matter what I do the printer jams").
        r"whatever happens|at all costs|"
        r"(?:shouldn['\u2019]?t|should not|mustn['\u2019]?t|must not) (?:cost|be|go|run|take|last) "
        r"(?:\w+ )?(?:over|above|more than|later than|longer than)|"
        r"(?:cannot|can['\u2019]?t|must not|mustn['\u2019]?t|shouldn['\u2019]?t|should not) exceed|"
        r"(?:hard|real|firm|strict|absolute) (?:cap|limit|ceiling|maximum|max|deadline|cutoff)|"
        # What a thing has to be is a rule; what "somebody has to rotate" is a task.
        r"(?<!\bit )(?<!\bthat )(?<!\bthis )(?<!\bthere )has to (?:be|stay|remain|include|fit))\b"
        # "don't" the same after a comma or a dash ("please just text, don't call me"), but not
        # a subject dropped before a verb of state ("tried again, don't know why", "we moved in
        # May, don't have a lease yet"). "never" mid-sentence is the rule below; "always" after
        # a comma describes more often than it rules ("the kids are 4 and 7, always hungry").
        rf"|[,;\u2013\u2014-]\s+(?:please\s+|and\s+|but\s+|so\s+)?{_DONT}\b"
        + _NOT_A_RULE_AFTER_DONT
        # "never" in the middle of a sentence, but not what has never happened ("he's never
        # driven stick", "we've never bothered"): that is a fact, not a rule.
        + r"|\b(?:must|mustn['\u2019]?t|shall not|not allowed|no need to)\b"
        r"|(?<!'ve )(?<!'s )(?<!'d )(?<!\u2019ve )(?<!\u2019s )(?<!\u2019d )(?<!have )(?<!has )"
        r"(?<!had )(?<!was )(?<!were )\bnever\b(?!\s+mind\b)"
        r"|\b(?:you|we) (?:should(?:n['\u2019]?t)?|have to)\b"
        # "we need to" after a request says what is needed, not a rule: "can you look at my
        # calendar, we need to book a design appointment".
        r"|^(?!.*\b(?:can|could|would|will) (?:you|u)\b.*\b(?:you|we) need to\b)"
        r".*\b(?:you|we) need to\b"
        # A rule without a verb: "no surnames in anything public", "ok and no calls after 8";
        # after a comma only with what it rules out and where ("..., no photos on the
        # website"). Not what a report finds ("tried it, no luck", "no signal in the hall").
        rf"|^{_OPENERS}{{0,3}}no\s+{_NOT_A_RULE_AFTER_NO}[a-z]"
        rf"|[,;\u2013\u2014-]\s+no\s+{_NOT_A_RULE_AFTER_NO}[a-z]+\s+"
        r"(?:in|on|at|for|after|before|until|during|near|inside|outside|anywhere)\b"
        # "first names only.", "cash only!": the few words a sentence allows and nothing else.
        r"|^(?:\w+[\s-]+){1,3}only[.!]*$"
        # A limit said as what happens past it ("if it creeps past 245 a head she won't sign
        # it off"), a rule as someone's strictness ("the trust is really strict that ..."),
        # and money that is all there is ("there's no more where that came from").
        r"|\b(?:if|once)\s+(?:it|we|they|that|this|the\s+\w+)\s+(?:goes|go|creeps?|gets?|"
        r"runs?|comes?|ends?\s+up)\s+(?:\w+\s+)?(?:over|past|above|beyond|more\s+than)\b"
        r"|\b(?:is|are|['\u2019]re|['\u2019]s)\s+(?:really\s+|very\s+|super\s+|quite\s+)?"
        r"strict\s+(?:that|about)\b"
        r"|\bno more where (?:that|this) came from\b"
        # A rule someone else set, reported: "the landlord wont allow nails in the walls",
        # "kids under 8 arent allowed on the boat", "the insurer says the van cant be parked
        # on the street", "my partner says no dogs in the house", "the council told us
        # nothing can go up before 6pm".
        r"|\b(?:won['\u2019]?t|will not|don['\u2019]?t|doesn['\u2019]?t|wouldn['\u2019]?t|"
        r"never) (?:allow|let|permit)\b"
        r"|\b(?:aren['\u2019]?t|isn['\u2019]?t|not) (?:allowed|permitted)\b"
        r"|\b(?:shouldn['\u2019]?t|should not|can['\u2019]?t|cannot|mustn['\u2019]?t|must not) be "
        r"(?:parked|used|left|moved|opened|shared|posted|sent|served|sold|given|taken|shown|"
        r"lifted|driven|touched|changed|eaten|worn|brought|kept|stored|photographed|named)\b"
        rf"|\b(?:says?|said),? no (?!(?:to|thank)\b){_NOT_A_RULE_AFTER_NO}[a-z]+"
        r"|\bnothing (?:can|may) (?:go|happen|start|open|run)\b"
    ),
    (
        "don",
        "do not",
        "never",
        "always",
        "avoid",
        "make sure",
        "ensure",
        "only",
        "must",
        "shall not",
        "not allowed",
        "no need to",
        "should",
        "need to",
        "have to",
        "has to",
        "more than",
        "later than",
        "shouldn",
        "mustn",
        "can\u2019t",
        "don\u2019t",
        "exceed",
        "cap",
        "limit",
        "ceiling",
        "max",
        "deadline",
        "cutoff",
        "can't",
        "cant",
        "no ",
        "over",
        "past",
        "above",
        "beyond",
        "strict",
        "longer than",
        "allow",
        "permit",
        " let",
        "be ",
        "says no",
        "said no",
        "say no",
        "nothing can",
        "nothing may",
        "whatever happens",
        "at all costs",
    ),
)
GOAL_STATEMENT = Gated(
    (
        r"(?i)\b(?:the|my|our)\s+whole\s+point\s+"
        r"(?:of\s+(?:this|the|our|my|all\s+this|it\s+all)(?:\s+\w+)?\s+)?is\b"
        r"|\bthe\s+point\s+of\s+(?:this|all\s+this|it\s+all)\s+is\b"
        r"|\b(?:the|my|our)\s+(?:main\s+|real\s+|end\s+|big\s+|ultimate\s+|overall\s+)?goal\s+"
        r"(?:here\s+|for\s+(?:this|now|the)(?:\s+\w+)?\s+|this\s+\w+\s+)?(?:is|was)\b"
        r"|^(?:the\s+|my\s+|our\s+)?(?:main\s+|end\s+)?goal\s*:"
        r"|\bthat['\u2019]?s\s+(?:basically\s+|really\s+|kind\s+of\s+)?(?:the|my|our)\s+"
        r"(?:main\s+|real\s+|whole\s+|big\s+)?goal\b"
        r"|\bthat['\u2019]?s\s+the\s+whole\s+point\b"
        r"|\bend\s+goal\b"
        # "what i actually care about is ...", "what I'd love by Friday is ...", "all we
        # really want is ...": what the work is for, said as what matters to the speaker.
        r"|\b(?:what|all)\s+(?:i|we)(?:['\u2019]d|\s+would)?\s+(?:really\s+|actually\s+|"
        r"most\s+|just\s+)?(?:care\s+about|want|love|like\s+to\s+see|am\s+after|"
        r"['\u2019]m\s+after|are\s+after)(?:\s+most)?"
        r"(?:\s+(?:by|from|out\s+of)\s+[\w'\u2019 ]{1,30}?)?\s+is\b"
        r"|\b(?:the|my|our)\s+(?:main\s+|real\s+|principal\s+|primary\s+|overall\s+|big\s+|"
        r"whole\s+)?(?:objective|aim|priority|mission)\s+(?:here\s+|for\s+\w+\s+)?(?:is|was)\b"
        r"|\bthe\s+(?:big|main|most\s+important)\s+thing\s+(?:for\s+(?:me|us)\s+)?"
        r"(?:this\s+(?:year|month|week|time|season)\s+|here\s+|now\s+)?is\b"
        r"|\bthat\s+is\s+the\s+(?:target|aim|objective|goal)\b"
        r"|\bthat['\u2019]?s\s+the\s+(?:target|aim|objective)\b"
        r"|\bbigger\s+picture\b"
        # "honestly i just want every kid to be able to come", "mostly i just want it all done
        # by then": the whole of it wanted, not one thing ("I just want to check the bill").
        r"|\b(?:I|we)\s+(?:just|really|honestly|mostly|only)\s+want\s+(?:every|all|it\s+all|"
        r"everyone|everybody|everything|them\s+all|the\s+whole)\b"
    ),
    (
        "point",
        "goal",
        "care about",
        "want",
        "love",
        "like to see",
        "after",
        "objective",
        "aim",
        "priority",
        "mission",
        "thing",
        "target",
        "bigger picture",
    ),
)
"""A user's sentence that says what the whole work is for ("the whole point of this is ...",
"..., that's basically the goal this week", "what we really care about is ...", "our main
aim is ...", "the big thing is ..."): said once, in passing, and never again."""


def states_rule(sentences: Sequence[str]) -> bool:
    """Whether one of ``sentences`` sets a rule (a question - "why don't we ...?" - asks)."""
    return any(CONSTRAINT.search(s) and not s.endswith("?") for s in sentences)


def says_the_goal(sentences: Sequence[str]) -> bool:
    """Whether ``sentences`` say what the whole work is for and set no rule (a line that
    does both is kept as the rule)."""
    return any(GOAL_STATEMENT.search(s) for s in sentences) and not states_rule(sentences)


def goal_clause(text: str) -> str | None:
    """The clause of ``text`` that says what the work is for (from the start of the clause
    that holds the goal's words: "...; getting issue 12 out before the AGM, that's the main
    goal"), or ``None`` when no sentence says it."""
    for sentence in split_sentences(text):
        found = GOAL_STATEMENT.search(sentence)
        if found is None:
            continue
        marks = (";", ":", " - ", " \u2013 ", " \u2014 ", "(")
        cut = max(
            (
                at + len(mark)
                for mark in marks
                if (at := sentence.rfind(mark, 0, found.start())) >= 0
            ),
            default=0,
        )
        return sentence[cut:].strip(" -\u2013\u2014:;(") or sentence
    return None


RULE_START = LazyPattern(
    rf"(?i)^{_OPENERS}{{0,3}}(?:{_DONT}|never|always|avoid|make sure|ensure|only|must)\b"
)
_RULES_HEADING = LazyPattern(
    r"(?i)^[#*_\s]*(?:(?:hard|ground|house|some|a few|the|our|my)\s+)?(?P<kind>constraints?|"
    r"rules?|requirements?|restrictions?|must[- ]haves?|non[- ]negotiables?|preferences?|"
    r"guidelines?|conventions?|polic(?:y|ies)|safety|limits?|boundaries|do(?:'?s)? and "
    r"don'?ts)\b[^:\n]{0,30}:[*_\s]*$"
)
"""A line that introduces a list of rules ("Constraints:", "**Preferences:**")."""
_DECISION = Gated(
    (
        r"(?i)\b(?:decided|decide to|decision|instead of|rather than|because|root cause|"
        r"the (?:issue|problem|bug|fix) (?:is|was)|going with|opted|chose|switch(?:ed|ing)? to|"
        r"the approach)\b"
    ),
    (
        "decide",
        "decision",
        "instead of",
        "rather than",
        "because",
        "root cause",
        "the issue",
        "the problem",
        "the bug",
        "the fix",
        "going with",
        "opted",
        "chose",
        "switch",
        "the approach",
    ),
)
_INTENT = LazyPattern(r"(?i)^(?:I'll|I will|Let's|We'll|We will|I'm going to|I am going to)\b")
_LOOK_INTENT = LazyPattern(
    r"(?i)^(?:I'll|I will|Let's|Let me|We'll|We will|I'm going to|I am going to)\s+"
    r"(?:now\s+|first\s+|also\s+|quickly\s+|just\s+)?(?:read|check|look|see|examine|inspect|"
    r"view|search|find|explore|start|run|verify|try|open|investigate|review|analy[sz]e|"
    r"understand|get|take|fix|help|create a summary|summarize)\b"
)
_LET_ME = LazyPattern(r"(?i)let me\b")
_PLAN_INTRO = LazyPattern(r"(?i)\b(?:next|remaining|todo|to do|still need|plan|will)\b.*:$")
_PLAN_SENTENCE = LazyPattern(
    r"(?i)^(?:next|then|after that|finally)\b|\b(?:still need to|next step|remaining work|"
    r"left to do|todo)\b"
)
TODO_STATEMENT = Gated(
    (
        r"(?i)^(?:[-*]\s+|\d+[.)]\s+)?(?:\*\*)?(?:TODO|FIXME)\b"
        # Not what the user would still need if something were otherwise ("without the move
        # you'd still need to reconnect the sink"); the assistant's "I'd still need to" is.
        r"|(?<!you'd )(?<!you\u2019d )(?<!you would )\b(?:still need to|still have to)\b"
        r"|\b(?:not done yet|left to do|remaining work"
        # (Not "you haven't done anything wrong": comfort, not work left.)
        r"|haven't (?:yet )?(?:done|migrated|updated|fixed))\b(?!\s+(?:anything|nothing)\b)"
        # "X is not wired up yet", "nobody has started Y yet": unfinished work without a keyword.
        r"|\b(?:not|isn't|aren't|hasn't|haven't|wasn't|weren't|no one|nobody)\b[^.?!]{0,60}"
        r"\byet\b"
    ),
    ("todo", "fixme", "still ", "left to do", "remaining work", "haven't", "yet"),
)
_PLAN_PREFIX = LazyPattern(r"(?i)^(?:next|then|after that|finally)\b[,:]?\s*")
PATH = LazyPattern(
    r"(?<![\w/.:@-])(?:~/|\.{1,2}/|/)?(?:[\w@+-][\w.@+-]*/)+[\w.@+-]*\w\.[A-Za-z][A-Za-z0-9]{0,7}\b"
    r"|`([\w.@+-]+\.[A-Za-z][A-Za-z0-9]{0,7})`"
)


def paths_in(text: str) -> Iterator[re.Match[str]]:
    """``PATH.finditer(text)``, searched only in the lines that hold a slash or a backtick.

    Every match of :data:`PATH` holds one (a path a slash, a bare name its backticks) and no
    white space, so it lies within one line; a search from a line's start sees the newline
    before it, as the look-behind did, and one that ends at a line's end ends where white
    space follows, as it did. The other lines are skipped instead of tried at every
    character (the search was a twentieth of reading a long conversation)."""
    start = 0
    size = len(text)
    while start < size:
        end = text.find("\n", start)
        if end < 0:
            end = size
        if text.find("/", start, end) >= 0 or text.find("`", start, end) >= 0:
            yield from PATH.finditer(text, start, end)
        start = end + 1


# fmt: off
FILE_EXTENSIONS: Final = frozenset({
    "py", "pyi", "ipynb", "js", "mjs", "cjs", "ts", "tsx", "jsx", "json", "jsonl", "md", "rst",
    "txt", "toml", "yaml", "yml", "cfg", "ini", "conf", "env", "sh", "bash", "zsh", "ps1", "rs",
    "go", "java", "kt", "kts", "scala", "swift", "c", "h", "cc", "cpp", "hpp", "cs", "rb",
    "php", "pl", "lua", "r", "sql", "html", "htm", "css", "scss", "less", "vue", "svelte",
    "xml", "csv", "tsv", "lock", "log", "db", "sqlite", "sqlite3", "proto", "graphql", "tf",
    "dockerfile", "mk", "cmake", "gradle", "patch", "diff", "gguf", "whl", "zip", "gz", "tar",
})
# fmt: on
"""Extensions that make a bare backticked ``name.ext`` a file name."""


def listed_rules(text: str) -> tuple[list[tuple[str, bool]], int | None]:
    """The list items under a rules heading of a user's message, each with whether it is a
    preference rather than a constraint, and where the first heading starts (or ``None``).

    An item is a rule because of where the user put it ("Tests with pytest, and no new
    dependencies." under "Constraints:"), whatever its wording."""
    rules: list[tuple[str, bool]] = []
    first: int | None = None
    preference: bool | None = None
    offset = 0
    for line in text.splitlines(keepends=True):
        stripped = line.strip()
        heading = _RULES_HEADING.match(stripped)
        if heading:
            first = offset if first is None else first
            preference = heading.group("kind").lower().startswith(("preference", "guideline"))
        elif preference is not None and LIST_MARKER.match(line):
            item = LIST_MARKER.sub("", line).strip()
            if item:
                rules.append((item, preference))
        elif stripped and preference is not None:
            preference = None  # prose after the list ends it
        offset += len(line)
    return rules, first


_QUOTED_LINES = LazyPattern(r"(?m)^[ \t]*>.*$")


def pending_question_in(text: str) -> str | None:
    """The end of an assistant message that asks the user something, verbatim."""
    paragraphs = [p for p in re.split(r"\n[ \t]*\n", text.strip()) if p.strip()]
    for index in range(len(paragraphs) - 1, max(len(paragraphs) - 4, -1), -1):
        # A quoted draft ("> ... is a gluten-free cake possible?") asks its addressee, not
        # the user.
        prose = _QUOTED_LINES.sub("", FENCE.sub("", paragraphs[index]))
        if re.search(r"\?(?:[\s)\"'*_`]|$)", prose):
            tail = "\n\n".join(paragraphs[index:])
            if len(tail) <= 1200:
                return tail
            asked = [
                s for s in split_sentences(paragraphs[index]) if s.rstrip("*_`\"') ").endswith("?")
            ]
            return " ".join(asked) or paragraphs[index]
    return None


_STEP_LEAD = LazyPattern(
    r"(?i)^(?:\*\*)?(?:next,?\s+|then,?\s+|after that,?\s+|finally,?\s+|also,?\s+)?"
    r"(?:(?:I'll|I will|we'll|we will|I need to|we need to|I still need to|we still need to|"
    r"still need to|TODO:?|to do:?)\s+)?"
    r"(?:add|fix|run|re-?run|update|write|test|check|verify|remove|delete|implement|migrate|"
    r"refactor|document|review|deploy|create|rename|move|replace|split|merge|wire|handle|"
    r"support|bump|release|commit|push|open|ask|confirm|investigate|profile|measure|benchmark|"
    r"clean|drop|extend|port|convert|regenerate|refresh|rebuild|install|configure|set|make|"
    r"finish|complete|continue|start|retry|revert|restore|decide|choose|expose|validate|"
    r"reproduce|cover|mock|stub)\b"
)


def _is_step(text: str) -> bool:
    """Whether a sentence is something to do (an imperative or a stated plan), not a fact
    about the work ("The body is still a plain JSON array")."""
    return _STEP_LEAD.match(text.strip()) is not None or bool(
        re.search(r"(?i)\b(?:still need to|next step is to|left to do)\b", text)
    )


def planned_steps(text: str, limit: int = 5) -> list[str]:
    steps: list[str] = []
    in_plan = False
    for line in FENCE.sub("\n", text).splitlines():
        stripped = line.strip()
        if not stripped:
            continue
        item = LIST_MARKER.match(stripped)
        if item and in_plan:
            if _is_step(stripped[item.end() :]):
                add_once(steps, clip(stripped[item.end() :], SENTENCE_CHARS))
            continue
        in_plan = bool(_PLAN_INTRO.search(stripped)) and not item
        if not in_plan:
            for sentence in split_sentences(stripped):
                if _PLAN_SENTENCE.search(sentence) and _is_step(_PLAN_PREFIX.sub("", sentence)):
                    add_once(steps, clip(sentence, SENTENCE_CHARS))
    return steps[:limit]


def decision_in(sentence: str) -> str | None:
    """The sentence, as written (bold marks aside), when it settles a choice: a search for
    the decision finds it in the summary."""
    sentence = sentence.replace("**", "").strip()
    if len(sentence) < 25 or sentence.endswith((":", "?")):
        return None
    if _LOOK_INTENT.match(sentence) or _LET_ME.match(sentence):
        # "Let me ask the app directly rather than guess": how to find out, not a choice.
        return None
    strong = _DECISION.search(sentence) is not None
    if not strong and not _INTENT.match(sentence):
        return None
    return clip(sentence, SENTENCE_CHARS)


_DONE: Final = (
    "done|finished|completed|migrated|fixed|resolved|implemented|added|updated|removed|"
    "converted|moved"
)
DONE_WORDS = Gated(rf"(?i)\b(?:{_DONE})\b", tuple(_DONE.split("|")))
WORD = LazyPattern(r"[A-Za-z0-9_./-]{4,}")
_TODO_WORDS = frozenset({"todo", "still", "need", "have", "left", "fixme", "remain", "work"})


def stems(text: str) -> set[str]:
    """Lower-case word stems (first six letters, end punctuation dropped): "migrated" meets
    "migrate", "format." meets "format"."""
    return {w.lower().strip(".,;:!?")[:6] for w in WORD.findall(text)} - {""}


def reports_done(text: str, todo: str) -> bool:
    """Whether a sentence of ``text`` (other than a TODO itself) says the TODO is done."""
    wanted = stems(todo) - _TODO_WORDS
    if not wanted:
        return False
    for sentence in split_sentences(text):
        if TODO_STATEMENT.search(sentence) or not DONE_WORDS.search(sentence):
            continue
        if len(wanted & stems(sentence)) >= max(2, (2 * len(wanted) + 2) // 3):
            return True
    return False


STATUS = Gated(
    (
        r"(?i)\b(?:status|progress|current task|currently working on|next up|next (?:is|step is)|"
        r"remaining|steps? \d+(?:\s*[-–]\s*\d+)?)\b"
        r"|\b\d+\s*(?:/|of)\s*\d+\s+(?:steps?|parts?|tasks?|items?|stages?|phases?|done|complete|"
        r"finished)\b"
    ),
    # Every match holds one of these words: the step counts ("steps 1-3", "3 of 5 tasks")
    # name what they count. (Gated on a digit instead, as before, the pattern was searched in
    # most sentences of a coding session: 35 ms of compacting a 100k-entry one.)
    (
        *("status", "progress", "current task", "currently working on", "next ", "remaining"),
        *("step", "part", "task", "item", "stage", "phase", "done", "complete", "finished"),
    ),
)
"""A statement of where the work stands ("steps 1-3 of 5 done, next is token refresh")."""
_STATEMENT = LazyPattern(
    # The look-ahead (the first letters of the words, matched as (?i) matches them) lets the
    # engine pass over a position at once instead of trying each word there: 40% faster.
    r"(?i)\b(?=[iawrluhospenm])(?:is|are|was|were|runs?|lives?|uses?|holds?|owns?|starts?|"
    r"ends?|points? to|sits?|has|have|needs?|requires?|must|never|only|will not|won't)\b|[=:]\s"
)
"""A declarative sentence: says what something is, has or must be."""
PROSE_ERROR = Gated(
    (
        r"\b[A-Z]\w*(?:Error|Exception)\b|(?i:\b(?:fails?|failed|failing|crashes|errors?) "
        r"(?:with|on)\b)"
    ),
    ("error", "exception", "fail", "crashes"),
)


def noted_fact(sentence: str) -> bool:
    """Whether an assistant's sentence states something specific (a host, a version, a date,
    a URL ...) rather than narrating what it does next."""
    if sentence.endswith("?") or _LOOK_INTENT.match(sentence) or _LET_ME.match(sentence):
        return False
    return _STATEMENT.search(sentence) is not None and has_specifics(sentence)


def questions_in(tail: str | None) -> list[str]:
    """The questions an assistant message ends with, verbatim, from its end that
    :func:`pending_question_in` found (none for ``None``)."""
    if tail is None:
        return []
    return [s for s in split_sentences(tail) if s.rstrip("*_`\"') ").endswith("?")]


_INTERJECTION = (
    r"(?:(?:ok(?:ay)?|alright|all right|right|yes|yeah|yep|no|nope|so|now|then|and|also|hmm+|"
    r"great|cool|fine|thanks|thx|pls|please|actually|wait|well)[,.!]*\s+)*"
)
_INSTRUCTION = LazyPattern(
    rf"(?i)^{_INTERJECTION}(?:"
    r"(?:please|pls|can you|could you|would you|will you|let'?s|go ahead|try|make|write|"
    r"create|add|remove|delete|use|read|open|show|tell|give|find|fix|run|check|look|"
    r"continue|update|rename|put|set|send|book|call|email|draft|draw|build|"
    r"start|stop|leave|skip|drop|undo|revert|explain|summari[sz]e|list|search|"
    r"compare|prepare|schedule|cancel|think|say|do|get|take|ask|help|investigate|"
    r"implement|refactor|review|edit|format|split|merge|commit|push|install|"
    r"increase|decrease|reduce|lower|raise|double|halve|swap|replace|convert|translate|"
    r"pick|choose|include|exclude|go|come|wait)\b)"
)
"""A user's line that tells the assistant what to do: an imperative, after any "ok, so",
or a polite form of one. Its form, not its topic: the request list keeps it."""


def instruction(line: str) -> bool:
    """Whether a user's line is an instruction to the assistant rather than a statement."""
    return _INSTRUCTION.match(line.strip()) is not None


_ASKS = LazyPattern(
    rf"(?i)^{_INTERJECTION}(?:like,?\s+|um+,?\s+|oh,?\s+)?(?:"
    r"how (?:many|much|long|far|often|come|do|does|did|is|are|was|were)|"
    r"what(?:'?s| is| are| was| were| do| does| did| time| about| if| happens)|"
    r"(?:when|where|who|which|why) (?:is|are|was|were|do|does|did|will|would|can|should)|"
    r"why|whats|wheres|whos|"
    r"(?:is|are|was|were) (?:there|it|that|this|anything|anyone|everything|everyone|he|she|"
    r"they|we)|"
    r"(?:do|does|did|have|has|can|could|should|will) (?:we|you|they|i|he|she|it|anyone|"
    r"anything)|"
    r"any(?:thing|one)? (?:news|update|luck|word|idea|clash|problem)s?)\b"
)
"""A user's line shaped as a question, with or without its question mark ("how many drops is
that next week in total", "like is anything clashing"): it asks, it does not state."""


def states_fact(line: str) -> bool:
    """Whether a user's line is kept as a fact: it names a specific value, or it says
    something plainly (:func:`says_something`) and is neither an instruction to the assistant
    nor a question."""
    if has_specifics(line):
        return True
    return says_something(line) and not instruction(line) and _ASKS.match(line.strip()) is None
