"""What the results of other tools say: an agent that books, mails, looks up or files things
learns its facts from tool results (a record locator, a permit number, a bounced address),
not from a shell. Files read and shell commands have readers of their own (``commands.py``)."""

from __future__ import annotations

import json
import re
from typing import Final, NamedTuple

from contextree.compaction.offline.digest import SENTENCE_CHARS
from contextree.compaction.offline.lazy_pattern import LazyPattern
from contextree.compaction.offline.parts import ToolCall
from contextree.compaction.offline.prose import FILE_EXTENSIONS, stems
from contextree.compaction.offline.specifics import has_specifics, specific_count
from contextree.compaction.offline.text import LIST_MARKER, clip, one_line, split_sentences
from contextree.compaction.offline.written import SAVE_VERBS, writes
from contextree.text.tables import standout_rows

__all__ = [
    "READ_ONLY_TOOLS",
    "ResultFact",
    "call_note",
    "result_facts",
    "spoken_words",
    "tool_failed",
]

READ_ONLY_TOOLS: Final = frozenset({"grep", "find", "ls", "glob"})
"""pi's and oh-my-pi's tools that list or search files: their output can be asked again."""

_WHOLE_CHARS: Final = 600
"""A result this short is kept whole, on one line: it is the tool's answer."""
_FACTS_PER_RESULT: Final = 6
_STANDOUTS_PER_RESULT: Final = 3
_FLAGGED_PER_RESULT: Final = 2
_ECHOED_PER_RESULT: Final = 8
_WRITTEN_FACTS: Final = 3
"""A long text a call wrote: its most specific sentences (dev, held-out: 2 to 6 the same; the
assistant's words about the text added nothing and cost 1)."""
_MAIL_FRAME: Final = LazyPattern(
    r"(?i)^\W*(?:(?:from|to|cc|bcc|subject|date|sent|reply-to)\s*:|(?:dear|hi|hello)\s+\w+,?$|"
    r"(?:kind regards|best regards|regards|many thanks|best wishes)\b)"
)
"""The frame of a mail around what it says: noted after its other lines."""
_LABEL: Final = LazyPattern(r"^[^.!?]{0,60}:$")
"""A line that only introduces what follows ("[5] Sophie Turner, 21 Jun:", "Totals:") is not
noted: the name and date of a thread's message say who wrote, not what."""
_VALUE_IN_LABEL: Final = LazyPattern(r"\d{3,}|[£$€¥%]|\b[A-Za-z]+\d|\d+[A-Za-z]{2,}")
"""What makes a line ending in a colon more than a label: a number of three digits or more,
money, a code ("Your booking ref is QX7731, details below:", "Door code 4417, from 9am:")."""
_FLAGGED: Final = LazyPattern(
    r"(?i)^\W*(?:please note|note|nb|n\.b\.|important|warning|caution|attention|heads up|"
    r"reminder|please be aware)\b\W"
)
"""A line that asks to be read: "Please note: ...", "IMPORTANT - ...", "NB the gate ..."."""
_CALL_CHARS: Final = 240
_ASKED: Final = LazyPattern(
    r"(?i)\b(?:please|pls|can you|could you|can we|could we|must|mustn't|must not|"
    r"no later than|not allowed|never|do not|don't)\b(?!\s+(?:find attached|let me know|"
    r"hesitate|reply|contact|call|get in touch|see|note))"
)
"""A sentence that asks something of the reader (not a mail's "please find attached")."""

_FAILURE: Final = LazyPattern(
    r"(?i)^\W*(?:[\w.-]+\W+){0,3}?(?:declined|rejected|bounced|denied|refused|undeliverable|"
    r"failure|no match|not found|does not exist|doesn't exist|no such|invalid|unavailable|"
    r"timed out|timeout|insufficient|over (?:the )?limit|not allowed|forbidden|"
    r"unauthori[sz]ed)\b"
)
"""How a service says no at the start of its answer ("PAYMENT DECLINED", "DELIVERY FAILURE:",
"NO MATCH: ...", "Request timed out"): within its first four words, so that "Booking confirmed
(seat upgrade unavailable)" or "no conflicts found" is not a failure. Checked only for these
tools' results, where no exit code tells, and never for a search's or a listing's."""


_RECEIPT: Final = LazyPattern(
    r"(?:(?:reply|email|message|sms|text) )?sent\.?(?: at)? \d{1,2}:\d{2}\.?[\s✓.]*"
    r"(?:delivered)?\.?$",
    re.IGNORECASE,
)
"""A result that only says when the message went ("Sent 21:14 ✓✓", "Reply sent 10:31."): the
clock time is its only value, and the call itself is listed among the work done; noted, it
took one of the places the newest notes keep whatever they say. (A parcel's "Delivered 14:32"
is what a lookup found: noted.)"""


def tool_failed(first_line: str) -> bool:
    """Whether a tool's result starts by reporting a failure in a service's words."""
    return _FAILURE.search(first_line) is not None


class ResultFact(NamedTuple):
    """A line noted from a tool's result, and whether the assistant went on to speak of it."""

    text: str
    spoken: bool


def spoken_words(echo: str) -> frozenset[str]:
    """The words of what the assistant said that can tie a result's sentence to it, for
    :func:`result_facts` (found once for all the results it speaks of)."""
    return frozenset(stems(echo) - _COMMON)


def result_facts(
    name: str, text: str, spoken: frozenset[str] = frozenset(), *, label: str = ""
) -> list[ResultFact]:
    """What a result of the tool ``name`` states: a short result whole, a long one as its
    sentences that name the most specific values (at most six, in their order) and those that
    the assistant's next words (``spoken``, from :func:`spoken_words`) speak of (up to eight
    more), each marked so. ``label``: how each note starts instead of "`name` returned" (what
    a writing call wrote: a short text is noted whole, whatever values it names)."""
    whole = one_line(text)
    if not whole:
        return []
    start = f"{label or f'`{name}` returned'}: "
    if len(whole) <= _WHOLE_CHARS:
        noted = bool(label) or (has_specifics(whole) and _RECEIPT.match(whole) is None)
        # Not marked as spoken of: a short answer is the tool's whole answer, and ranking the
        # ones the assistant spoke of higher cost the held-out blind splits 5 probes.
        return [ResultFact(f"{start}{whole}", False)] if noted else []
    head = text[:20_000]
    # A table's rows that stand out from their column (one MISSING among many ok, the one row
    # with a note) are what the table says; then the sentences that name the most values.
    lines = head.splitlines()
    # A line the service flags ("Please note: our lift will be out of service ...") says
    # what it wants read, whatever values it names.
    flagged = [one_line(line) for line in lines if _FLAGGED.match(line)][:_FLAGGED_PER_RESULT]
    # So does a list of rules under its heading (the items alone do not say they are rules).
    flagged = _rule_lists(lines)[:_FLAGGED_PER_RESULT] + flagged
    # The rows that differ most (in more columns, from a column more alike) first; kept in
    # the table's order.
    rows = standout_rows(lines)
    ranked = sorted(rows, key=lambda i: (-len(rows[i].columns), -rows[i].sameness, i))
    standouts = [one_line(lines[index]) for index in sorted(ranked[:_STANDOUTS_PER_RESULT])]
    standouts = flagged + [row for row in standouts if row not in flagged]
    # A sentence within what a standing-out line shows is not noted again; one past where the
    # line is cut is.
    shown = [clip(row, SENTENCE_CHARS) for row in standouts]
    standout_lines = set(standouts)
    # The other rows of a table that has rows standing out are what those rows stand out
    # from: their many figures say less than any other line's.
    plain_rows = {
        one_line(lines[index])
        for standout in rows.values()
        for index in standout.table
        if index not in rows
    }
    # What a sentence asks of the reader ("please can we have no strobes", "can you end it on
    # the last chorus", "finish no later than 14:00") counts as much as a value it names.
    found = [
        (index, sentence, specific_count(sentence) + asks)
        for index, sentence in enumerate(split_sentences(head))
        if ((asks := _ASKED.search(sentence) is not None) or has_specifics(sentence))
        and not _labels(sentence)
        and (line := one_line(sentence)) not in standout_lines
        and not _part_of(line, shown, plain_rows)
    ]
    # A mail's header and greeting lines name values (an address, a date) but say little.
    found.sort(key=lambda item: (_MAIL_FRAME.match(item[1]) is not None, -item[2], item[0]))
    most = _WRITTEN_FACTS if label else _FACTS_PER_RESULT
    picked = found[: max(0, most - len(standouts))]
    # The sentences the assistant went on to speak of are the ones that mattered to the work,
    # whatever values they name: its own words often leave the value out ("there's a cap on
    # the field", "her nan has photosensitive epilepsy") and only the result holds it.
    if not label:
        echoed = [item for item in found[len(picked) :] if _echoed(item[1], spoken)]
        picked += echoed[:_ECHOED_PER_RESULT]
    kept = [*standouts, *(sentence for _, sentence, _ in sorted(picked))]
    return [
        ResultFact(f"{start}{clip(one_line(s), SENTENCE_CHARS)}", _echoed(s, spoken))
        for s in kept
    ]


_COMMON: Final = frozenset(
    {
        "about", "after", "again", "also", "been", "before", "being", "both", "could", "does",
        "each", "even", "every", "from", "have", "here", "into", "just", "like", "made", "make",
        "more", "most", "much", "must", "once", "only", "other", "over", "same", "should", "some",
        "such", "than", "that", "their", "them", "then", "there", "these", "they", "this",
        "those", "under", "until", "very", "were", "what", "when", "where", "which", "while",
        "will", "with", "would", "your", "yours"
    }
)
"""Words too common to tie a result's sentence to what the assistant said of it."""


def _echoed(sentence: str, spoken: frozenset[str]) -> bool:
    """Whether ``sentence`` shares at least two words, and a quarter of its own, with what the
    assistant said next (``spoken``)."""
    if not spoken:
        return False
    own = stems(sentence) - _COMMON
    shared = len(own & spoken)
    return shared >= 2 and 4 * shared >= len(own)


def _part_of(sentence: str, standouts: list[str], plain_rows: set[str]) -> bool:
    """Whether ``sentence`` is a row already shown or left out, or a piece of one (a row with
    a "?" in a cell is split there as a sentence is)."""
    if sentence in plain_rows:
        return True
    return any(sentence in row for row in standouts) or (
        "|" in sentence and any(sentence in row for row in plain_rows)
    )


_RULE_HEADING: Final = LazyPattern(
    r"(?i)\b(?:not covered|excluded|exclusions?|prohibited|not permitted|not allowed|"
    r"forbidden|restrictions?|(?<!search )terms|conditions|rules|must|must not|never|do not|"
    r"don't|cancellation|refunds?(?! (?:issued|made|paid|processed|sent|due))|requirements?)\b"
)
"""A heading that sets rules (not "Search terms used:" or "Refunds issued this week:")."""


def _rule_lists(lines: list[str]) -> list[str]:
    """The lists a document sets rules with ("Cancellation terms (per pupil):" or "EXCLUDED
    ITEMS - NOT COVERED UNDER ANY CIRCUMSTANCES" and the items under it), each as one line:
    its heading and its items, which alone do not say they are rules."""
    found: list[str] = []
    index = 0
    while index < len(lines):
        heading = lines[index].strip()
        items: list[str] = []
        next_index = index + 1
        while next_index < len(lines) and (
            (marker := LIST_MARKER.match(lines[next_index]))
            and (item := lines[next_index][marker.end() :].strip())
        ):
            items.append(item)
            next_index += 1
        if (
            len(items) >= 2
            and heading
            and len(heading) <= 100
            and LIST_MARKER.match(heading) is None
            and _RULE_HEADING.search(heading)
        ):
            found.append(f"{heading.rstrip(':')}: " + "; ".join(items))
            index = next_index
        else:
            index += 1
    return found


def _labels(sentence: str) -> bool:
    """Whether ``sentence`` only introduces what follows (see :data:`_LABEL`)."""
    return _LABEL.match(sentence) is not None and _VALUE_IN_LABEL.search(sentence) is None


def call_note(call: ToolCall) -> str:
    """The call as done: ``Called `calendar`: title=Reminder: ..., start=2026-03-23T10:30``."""
    shown = []
    for key, value in call.args.items():
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        shown.append(f"{key}={one_line(text)}")
    args = clip(", ".join(shown), _CALL_CHARS)
    return f"Called `{call.name}`" + (f": {args}" if args else "")


_NOT_TARGETS: Final = frozenset(
    {"body", "text", "content", "contents", "message", "html", "markdown", "url", "query",
     "from", "source", "src", "old", "old_path", "old_name", "from_path", "template"}
)
"""Arguments that hold what is written or where it came from, not the file written."""
_DOCUMENT: Final = LazyPattern(r"^[^\n]{0,180}\.(?P<ext>[A-Za-z][A-Za-z0-9]{1,4})$")
_DOCUMENT_EXTENSIONS: Final = FILE_EXTENSIONS | frozenset(
    {"docx", "doc", "xlsx", "xls", "pptx", "ppt", "pdf", "odt", "ods", "odp", "rtf", "pages",
     "numbers", "key", "png", "jpg", "jpeg", "gif", "svg", "webp", "mp3", "wav", "mp4", "ics",
     "vcf", "eml", "epub"}
)


def saved_paths(call: ToolCall) -> list[str]:
    """The file names a service tool that writes (``docs.write``, ``sheets.create``,
    ``drive_upload``) was given: its string arguments shaped like a file name with a known
    extension, in argument order."""
    if not writes(call, SAVE_VERBS):
        return []
    found = []
    for key, value in call.args.items():
        if key.lower() in _NOT_TARGETS or not isinstance(value, str) or "://" in value:
            continue
        shape = _DOCUMENT.match(value.strip())
        if shape is None or shape.group(0).count(" ") > 3:
            continue  # a sentence that names a file is not the file
        if shape.group("ext").lower() in _DOCUMENT_EXTENSIONS:
            found.append(shape.group(0))
    return found
