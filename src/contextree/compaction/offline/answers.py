"""Whether the user's reply answers a question the assistant asked: a yes or a no, a short
answer or a value in the question's terms as the very next message, or any later reply that
takes up what the question is about - unless it asks back, puts the question off or moves on."""

from __future__ import annotations

from typing import Final

from contextree.compaction.offline.lazy_pattern import LazyPattern
from contextree.compaction.offline.prose import WORD, stems
from contextree.compaction.offline.specifics import has_specifics

__all__ = ["answers_question", "offers_choice"]

_ANSWER_START = LazyPattern(r"(?i)^(?:yes|yeah|yep|no|nope|nah|sure|ok(?:ay)?|fine|correct)\b")
_QUESTION_STOPWORDS = frozenset(
    {
        "should",
        "would",
        "could",
        "which",
        "there",
        "their",
        "these",
        "those",
        "about",
        "thing",
        "shall",
        "whethe",
        "still",
        "anything",
        "before",
        "either",
        "rather",
        "really",
    }
)


_CLAUSE: Final = LazyPattern(r"[^\n]+?(?=[.!?;,\u2014](?:\s|$)|\n|$)")
"""A clause, up to its end: a dot inside ``faq.md`` or ``1.5`` does not end it."""
_FILLER: Final = LazyPattern(
    r"(?i)\W*(?:oh+|ah+|well|so|and|actually|hmm+|um+|uh+|right|ok(?:ay)?|alright)\W*"
)
"""An interjection that a clause of its own opens a reply with, before the answer."""
_MOVES_ON: Final = LazyPattern(
    r"(?i)\W*(?:thanks|thank you|thx|ty|cheers|sorry|hi|hey|hello|btw|by the way|also|anyway|"
    r"unrelated|separate(?:ly)?|one more thing|other thing|oh and|and also|wow|lol|haha|ugh|"
    r"omg|jesus|damn|nice|cool|great|awesome|perfect)\b"
)
"""A reply that opens by thanking, greeting or turning to something else answers nothing
by its first words."""
_SHORT_ANSWER_WORDS: Final = 3
"""An answer this short is a fragment ("both", "the second one", "next tuesday"); four words
already make a statement about something else ("Farid owns the quota")."""
_PUTS_OFF: Final = LazyPattern(
    r"(?i)\b(?:not sure|unsure|no idea|dunno|idk|don'?t know|maybe|perhaps|hm+|later|"
    r"let me|i'?ll (?:think|check|ask|see|get back|let you know|find out)|i'?d have to|"
    r"(?:have|need) to (?:check|ask|think|go|run)|sleep on|think about|get back to|"
    r"tomorrow|tmrw|not now|not yet|haven'?t decided|undecided|one sec|just a sec|brb|"
    r"hold on|hang on|wait|give me a (?:sec|second|minute|moment)|in a (?:bit|minute)|"
    r"back in|get to that|come back to)\b"
)
"""A reply that puts the question off ("not sure, i'd have to check", "let me sleep on it")."""


def answers_question(reply: str, question: str, *, next_message: bool = True) -> bool:
    """Whether the user's ``reply`` answers ``question``: as the very next message it may
    just say yes or no, or open with a short answer or a value ("both.", "friday 12 to 4",
    "7731-0042-558, zip 97214") unless it asks back or puts the question off; any reply may
    take up what the question is about (two of its words, or its only one)."""
    if next_message and _ANSWER_START.match(reply.strip()):
        return True
    if next_message and _says_yes_or_no(reply, question):
        return True
    wanted = {w for w in stems(question) if not w[:1].isdigit()} - _QUESTION_STOPWORDS
    wanted |= {w for w in WORD.findall(question) if any(c.isdigit() for c in w)}
    if not wanted:
        return True
    if next_message and (
        _opens_with_answer(reply, question, wanted) or _gives_the_quantity(reply, question)
    ):
        return True
    said = stems(reply) | set(WORD.findall(reply))
    # "moved" takes up "move", "prices" "price": the stems compared without an ending.
    return len(_roots(wanted) & _roots(said)) >= min(2, len(wanted))


_ENDING: Final = LazyPattern(r"(?:ing|ed|es|e|s|d)$")


def _roots(words: set[str]) -> set[str]:
    """The words without an ending, where three letters or more are left ("moved" and "move"
    are "mov"; "thing" stays)."""
    return {_root(word) for word in words}


def _root(word: str) -> str:
    ending = _ENDING.search(word)
    return word[: ending.start()] if ending is not None and ending.start() >= 3 else word


_YES_NO_QUESTION: Final = LazyPattern(
    r"(?i)^(?:[^,?]{0,60},\s*)?(?:do|does|did|is|are|was|were|shall|should|can|could|would|"
    r"will|may|have|has|want|ok(?:ay)? (?:to|if))\b"
)
"""A question a yes or a no answers ("Did you move?", "Shall I send?", "Before I add the line,
do you want to change any prices?"); not one that offers a choice (see :func:`_says_yes_or_no`)."""
_YES_OR_NO_FIRST: Final = LazyPattern(
    r"(?i)^\W*(?:(?:oh+|ah+|ugh+|um+|hmm+|well|god|oh god|for gods?'?s? sake|lol|haha|so|and)"
    r"\W+){0,4}(?:yes|yeah|yep|yup|no|nope|nah|sure|ok(?:ay)?|fine|go ahead)\b"
)
"""A reply opening, after an interjection, with its yes or no ("oh for gods sake yes we moved
in august", "oh yeah put the restyle up")."""
_YES_OR_NO_LAST: Final = LazyPattern(r"(?i)\b(?:yes|yeah|yep|yup|no|nope|nah)\W*$")
"""A clause ending on its yes or no ("ugh its good money but no")."""
_APPROVAL: Final = LazyPattern(
    r"(?i)^\W*(?:\w+\s+)?(?:fine|ok(?:ay)?|good|yes|no)\W*$|\b(?:go ahead|send it|please do)\b"
)
"""A clause of two words at most that approves ("rest fine", "all good"), or a go-ahead."""


def _says_yes_or_no(reply: str, question: str) -> bool:
    """Whether ``reply`` gives a yes or a no to a question that asks for one and offers no
    choice ("A or B?"), without asking back or putting it off: at its start after an
    interjection, or as the last word of a clause ("ugh its good money but no"), or in a
    clause of its own ("pat's a bloke, no kiss for pat. rest fine"). A "no" or a "fine"
    within a clause ("no module named requests", "loads fine on chrome") is none."""
    if "?" in reply or " or " in question or not _YES_NO_QUESTION.match(question):
        return False
    text = reply.strip()
    clauses = [clause.strip() for clause in _CLAUSE.findall(text)]
    if not clauses or _puts_off(clauses[0], question):
        return False  # "not sure, i'd have to check": no "sure"
    if _YES_OR_NO_FIRST.match(text):
        return True
    return any(_YES_OR_NO_LAST.search(c) or _APPROVAL.search(c) for c in clauses)


def _opens_with_answer(reply: str, question: str, wanted: set[str]) -> bool:
    """Whether a reply's first clause (after an "oh," or a "well,") is a short answer, or a value
    in the question's terms (a word of ``wanted``, the question's), and the reply does not ask
    anything back, nor open by putting the question off ("not sure, ...") or by moving on
    ("thanks!", "by the way, ..."). A value alone is not enough: a user who moves on may well
    open with a fact about something else."""
    if "?" in reply:
        return False
    first = _first_clause(reply)
    if not first or _MOVES_ON.match(first) or _puts_off(first, question):
        return False
    if len(first.split()) <= _SHORT_ANSWER_WORDS:
        return True
    return has_specifics(first) and not wanted.isdisjoint(stems(first))


_ASKS_A_QUANTITY: Final = LazyPattern(
    r"(?i)^\W*(?:(?:and|so|ok(?:ay)?|also|then|great|got it)[,\s]+)?"
    r"(?:how\s+(?:many|much|long|old|far|big|soon|often)|when|what\s+(?:time|date|day)|"
    r"which\s+(?:day|date|month|week))\b"
)
"""A question that asks for a number, a date or a time ("How long is your mom staying?"; not
"Should I email him when it comes?")."""


def _gives_the_quantity(reply: str, question: str) -> bool:
    """Whether ``reply`` opens with the number, date or time ``question`` asks for ("she's
    here may 2 to may 30", "like 15? and grandma's friends"): a hedge's question mark does
    not make it a question back."""
    if not _ASKS_A_QUANTITY.search(question):
        return False
    first = _first_clause(reply)
    return any(c.isdigit() for c in first) and not _puts_off(first, question)


def _first_clause(reply: str) -> str:
    """The reply's first clause after any interjection of its own ("oh, the second one": the
    answer follows the "oh"); ``""`` when there is none."""
    clauses = [c.strip(" \t,.;!?\u2014") for c in _CLAUSE.findall(reply.strip())]
    while clauses and _FILLER.fullmatch(clauses[0]):
        clauses.pop(0)
    return clauses[0] if clauses else ""


def _puts_off(clause: str, question: str) -> bool:
    """Whether ``clause`` puts the question off; a word the question offers is an answer
    ("tomorrow" to "today or tomorrow?", "maybe" to "yes, no or maybe?")."""
    asked = question.lower()
    return any(m.group(0).lower() not in asked for m in _PUTS_OFF.finditer(clause))


_CHOICE: Final = LazyPattern(
    r"(?i)\b(?:which|prefer|would you (?:like|rather)|what would you|either|or)\b"
)
"""A question that offers options or asks the user to pick ("Hire or Gary?", "Which of these
would you consider?", "What would you prefer?", "Any preferences on colours or layout?").
One that asks what is so ("Is the API or the UI failing?") counts too: the user's answer to
it is kept in their words all the same, and leaving those out lost probes (held-out -2
within 20%, docs/summaries.md)."""


def offers_choice(question: str) -> bool:
    """Whether ``question`` puts options to the user or asks them to pick (see
    :data:`_CHOICE`)."""
    return _CHOICE.search(question) is not None
