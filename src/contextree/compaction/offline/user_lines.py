"""What a user's line decides or leaves open: a choice ("go with the later one", "ok scrap that,
give it to tidewell instead"), a correction ("no, keep the old name"), work the user will do
themselves or asks to be reminded of ("i'll ring them myself on monday")."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from contextree.compaction.offline.lazy_pattern import LazyPattern

__all__ = ["USER_MARK", "decides", "user_todo"]

USER_DECISION = LazyPattern(
    r"(?i)^(?:ok(?:ay)?|right|fine|so|then|alright)?[,.!]?\s*(?:let's\s+|we'll\s+|we will\s+)?"
    r"(?:go with|go for|switch to|settle on|decided\b|decision\b|change of plan\b|"
    r"we(?:'ve| have)? decided\b|the decision is\b)"
)
"""A user's line that settles a choice ("Go with limit/offset: ...", "Decision: ...")."""
USER_CHOICE_WITHIN = LazyPattern(
    # At most three words before the choice (a run of "ok, ok, ok, ..." tried from every
    # comma was quadratic in the line's length).
    r"(?i)(?:^|[.!;,]\s+)(?:(?:ok(?:ay)?|right|so|actually|hmm+|fine|then)[,.]?\s+){0,3}"
    r"(?:scrap that|change of plan|let'?s (?:go with|go for|do|take|book)|"
    r"we'?ll (?:go with|do|take (?:the|that|this|those|these))|go with|go for|switch to|"
    r"i(?:'|\u2019)ll take (?:the|that|this|those|these)|"
    # "i've decided nothing yet" is none, nor "i'm going with my mum to the hospital".
    r"(?:i|we)(?:(?:'|\u2019)ve| have)? (?:decided|made (?:up )?(?:my|our) minds?)"
    r"(?!\s+(?:nothing|not|yet|against)\b)|"
    r"(?:i|we)(?:(?:'|\u2019)m| am|(?:'|\u2019)re| are) going (?:to go )?with"
    r"(?!\s+(?:my|our|her|his|their|him|them|you|me|us|the kids|a friend|friends)\b))\b"
    r"|\binstead[.!]?(?:\s|$)"
)
"""A choice made at the start of any clause of a user's line, after an "ok" or an "actually"
("hmm. ok scrap that, give the mould wash to tidewell instead"; "fine, we'll take the later
one"), or a line that says "instead" ("the party's at mum's instead of the hall"; a report,
"it crashes instead of hanging", is taken for one too: leaving "instead of" out lost two
held-out probes within 20%)."""
_WHEN = (
    r"(?:myself|tomorrow|tmrw|tonight|later|first thing|after lunch|in the morning|"
    r"next week|this week|on (?:mon|tues|wednes|thurs|fri|satur|sun)day)"
)
USER_TODO = LazyPattern(
    # "i'll be at work tomorrow" says where the user will be, not what they will do; "anyway"
    # marks a task only after "need to" ("i'll be honest, it's better anyway" is none).
    # (An apostrophe is asked for: "ill" is a word of its own. "remind me what the port is"
    # asks for a fact.)
    r"(?i)\b(?:remind me (?:to|about|on|at|that|tomorrow|later)\b|don'?t let me forget|"
    r"note to self|(?:i(?:'|\u2019)ll|i will) (?!be\b)(?:\w+[ ,]+){0,8}?" + _WHEN + r"\b|"
    r"i (?:still )?need to (?:\w+[ ,]+){0,8}?(?:" + _WHEN + r"|anyway)\b|"
    r"i (?:still )?(?:have|got) to (?:\w+[ ,]+){0,8}?" + _WHEN + r"\b)"
)
"""A user's line that leaves work open: a reminder asked for ("remind me to chase the survey"),
or what the user will do themselves ("i'll ring the centre myself on monday", "i need to ring
the garage anyway")."""
USER_MARK: Final = "User: "
"""What a decision or a TODO of the user's starts with (the assistant's own have no mark)."""
_CORRECTION_START = LazyPattern(
    r"(?i)^(?:no|nope|nah)(?:\s*[,.!:;]+|\s+[-\u2013\u2014]+)\s*\S+(?:\s+\S+){2}"
)
_CORRECTION_DIRECTIVE = LazyPattern(
    r"(?i)\b(?:should(?:n'?t)?|must|has to|have to|needs? to|keep|use|stays?|leave|revert|undo|"
    r"instead|rather|only|want|put|make|move|rename|remove|delete|add|change|belongs?|"
    r"don'?t|do not|no need)\b"
)


_FACT_CORRECTION = LazyPattern(
    r"(?i)(?:^|[.!?;,:(]\s*|\s[-\u2013\u2014]\s*)(?:oh\s+|oops,?\s+|sorry,?\s+|hang on,?\s+|"
    r"wait,?\s+|ugh,?\s+){0,2}(?:correction\b|i meant\b(?!\s+(?:it|to)\b)|my mistake\b|my bad\b|"
    r"scratch that\b|i was wrong\b|i got (?:that|it|the \w+) wrong\b|"
    r"i (?:wrote|put|typed|said) (?:it|that|the \w+) (?:in )?wrong\b|"
    r"i should(?: have|['\u2019]ve) said\b|(?:it was|that was|must be) a typo\b)"
)
"""A user's line that corrects what they said before ("correction on the sheet - pepper
wasn't served the 15th, it was the 25th", "sorry, i meant the blue one", "ugh I should have
said - Sanjay's dropped out"): the new value supersedes one the summary may still hold."""


def user_correction(line: str) -> bool:
    """A user's line that corrects what they said themselves (:data:`_FACT_CORRECTION`), or
    turns down what the assistant did or proposed and says what instead ("no, the block should
    stay as is"; "nope - use the v2 endpoint"): in real sessions the plainest way a user
    decides, and what a summary must not lose. At least three words after
    the "no", one of them saying what to do; a question is not one, and neither is a report
    ("nope, still failing with the same error")."""
    if line.endswith("?"):
        return False
    if _FACT_CORRECTION.search(line) is not None:
        return True
    return (
        _CORRECTION_START.match(line) is not None
        and _CORRECTION_DIRECTIVE.search(line, 2) is not None
    )


def user_todo(line: str, sentences: Sequence[str]) -> str | None:
    """The TODO a user's line leaves open (its sentences that do, marked
    :data:`USER_MARK`), or ``None``; a question leaves none."""
    if line.endswith("?") or USER_TODO.search(line) is None:
        return None
    held = [sentence for sentence in sentences if USER_TODO.search(sentence)] or [line]
    return USER_MARK + " ".join(held)


def decides(line: str, *, user: bool, answering: bool, min_words: int) -> bool:
    """Whether a line of a user's (``user``) or a system message is a decision: one that
    settles a choice from its start ("Go with limit/offset: ..."), a correction ("no, keep the
    old name"), and of a user's a choice made within the line ("ok scrap that, give it to
    tidewell instead") or the line ``answering`` an offer of options ("Hire or Gary?")."""
    if USER_DECISION.match(line) and len(line.split()) >= min_words:
        return True
    if user_correction(line):
        return True
    if not user or line.endswith("?"):
        return False
    return answering or USER_CHOICE_WITHIN.search(line) is not None
