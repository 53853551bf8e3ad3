"""Recall as a tool for models: one definition the built-in agent and every framework adapter
offer (``recall``), and its bounded text result.

The tool is offered only once the session's path has a compaction (before that nothing is
folded away). Its result lists the best hits, each with its entry id, role and time and an
excerpt of the entry's (redacted) text where most of the search's words meet, within
:data:`MAX_RESULT_CHARS` in all. Hits holding every word come first, then hits holding some
(see :mod:`contextree.recall.query`); an assistant message or tool result comes with an excerpt
of the user message its turn answers, a message that calls a tool with what the call
returned, and a question of the assistant with the user's answer, when those are folded away
too (see :mod:`contextree.recall.turns`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Final

from contextree.recall.base import Hit
from contextree.recall.documents import entry_text
from contextree.recall.excerpt import excerpt as excerpt_of
from contextree.recall.index import RecallIndex
from contextree.recall.query import RecallResult, open_recall_index, recall
from contextree.recall.turns import (
    asking_message,
    call_result,
    calling_message,
    reported_result,
    user_answer,
)

if TYPE_CHECKING:
    from contextree.session.tree import SessionTree
    from contextree.settings.load import Settings

__all__ = [
    "MAX_RESULT_CHARS",
    "RECALL_TOOL_DESCRIPTION",
    "RECALL_TOOL_NAME",
    "RECALL_TOOL_PARAMETERS",
    "SessionRecall",
]

RECALL_TOOL_NAME: Final = "recall"
RECALL_TOOL_DESCRIPTION: Final = (
    "Search the earlier part of this conversation that was condensed into the summary, for "
    "details the summary left out: exact identifiers, file paths, error messages, numbers, "
    "tool outputs. Returns matching excerpts, best first, each with its entry id."
)
RECALL_TOOL_PARAMETERS: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        "query": {
            "type": "string",
            "description": (
                "Words to find; excerpts holding all of them come first. "
                '"Quoted words" form one phrase.'
            ),
        },
        "limit": {
            "type": "integer",
            "minimum": 1,
            "maximum": 10,
            "description": "How many excerpts at most (default 5).",
        },
    },
    "required": ["query"],
}
MAX_RESULT_CHARS: Final = 4000
"""The whole result's size bound: excerpts share it."""
_MAX_LIMIT: Final = 10


class SessionRecall:
    """Recall over one session for a model's tool calls (the index stays open between them).

    Args:
        tree: the session.
        settings: where the index lives and what is redacted (default: built-in settings).
        index: an index already open for ``tree`` (the caller closes it); by default one is
            opened on the first search and closed by :meth:`close`.
        literals: exact secret values redacted too (the agent passes the environment's), in
            the index and in each excerpt before it is cut around the search's words.
    """

    def __init__(
        self,
        tree: SessionTree,
        settings: Settings | None = None,
        *,
        index: RecallIndex | None = None,
        literals: Iterable[str] = (),
    ) -> None:
        self.tree = tree
        self.settings = settings
        self._literals = tuple(literals)
        self._index: RecallIndex | None = index
        self._owns_index = index is None
        self._redact: Callable[[str], str] | None = None

    def available(self) -> bool:
        """Whether the tool should be offered: the leaf's path has a compaction."""
        return self.tree.leaf_id is not None and self.tree.latest_compaction() is not None

    def search_text(self, query: str, *, limit: int = 5) -> str:
        """The tool's result for ``query``: at most ``limit`` (1-10) excerpts, within
        :data:`MAX_RESULT_CHARS` in all."""
        result, found = self._search(query, limit)
        if not result.terms:
            return "The query has no word to search for."
        if not found:
            return f'Nothing in the condensed part of the conversation matches "{query}".'
        parts: list[str] = []
        if result.any_term:
            parts.append(_NO_COMPLETE)
        for rank, excerpt in enumerate(found):
            if rank == result.complete and rank > 0:
                parts.append(_PARTIAL_FROM_HERE)
            parts.append(excerpt.render())
        # The budget below is exact; the cut only guards against a miscount.
        return _SEPARATOR.join(parts)[:MAX_RESULT_CHARS]

    def search_excerpts(self, query: str, *, limit: int = 5) -> list[str]:
        """What :meth:`search_text` shows of each hit's words (its excerpt, and the request it
        answers), without the ids and times around them: what the eval checks."""
        return [
            text
            for excerpt in self._search(query, limit)[1]
            for text in (excerpt.text, *(words for _, words in excerpt.context))
            if text
        ]

    def cold(self) -> bool:
        """Whether the first search would index the session anew (seconds for a large one)
        rather than add what was appended: see :meth:`RecallIndex.needs_rebuild`."""
        return self._open_index().needs_rebuild(self.tree)

    def warm_up(self) -> None:
        """Bring the index up to date now (after a compaction: the search that follows finds
        it ready)."""
        self._open_index().sync(self.tree)

    def _open_index(self) -> RecallIndex:
        if self._index is None:
            self._index = open_recall_index(self.tree, self.settings, literals=self._literals)
            self._owns_index = True
        return self._index

    def holds(self, term: str) -> bool:
        """Whether an entry of the condensed part holds ``term`` (a word or a phrase)."""
        return bool(self._search_hits(term, 1).hits)

    def search_shown(
        self, query: str, *, limit: int, max_chars: int, complete_only: bool
    ) -> tuple[str, list[str]] | None:
        """The hits of ``query`` (with ``complete_only``, only those holding every one of its
        terms; at most ``limit``), shown as :meth:`search_text` shows them within
        ``max_chars``, without its notes, and their entry ids; ``None`` when there is none
        (see :mod:`contextree.recall.auto`)."""
        result, found = self._search(
            query, limit, max_chars=max_chars, complete_only=complete_only
        )
        if not found:
            return None
        text = _SEPARATOR.join(excerpt.render() for excerpt in found)[:max_chars]
        return text, [hit.entry_id for hit in result.hits]

    def _search_hits(self, query: str, limit: int) -> RecallResult:
        index = self._open_index()
        return recall(self.tree, query, limit=max(1, min(_MAX_LIMIT, limit)), index=index)

    def _search(
        self,
        query: str,
        limit: int,
        *,
        max_chars: int = MAX_RESULT_CHARS,
        complete_only: bool = False,
    ) -> tuple[RecallResult, list[Excerpt]]:
        result = self._search_hits(query, limit)
        if complete_only:
            # Hits holding only some terms, and the notes that say where they begin, go.
            result = replace(result, hits=result.hits[: result.complete], any_term=False)
        if not result.hits:
            return result, []
        # The bound, once the notes and separators are counted, shared by the hits: each
        # has as much as it needs up to an equal level, and what a short one leaves goes to
        # the long ones (a tool result's table or mail thread shows more of its lines).
        notes = len(_NO_COMPLETE) if result.any_term else 0
        if 0 < result.complete < len(result.hits):
            notes += len(_PARTIAL_FROM_HERE) + len(_SEPARATOR)
        separators = len(_SEPARATOR) * (len(result.hits) - (0 if result.any_term else 1))
        shown = {hit.entry_id for hit in result.hits}
        found = [self._parts(hit, result, shown) for hit in result.hits]
        shares = fill([part.need() for part in found], max_chars - notes - separators)
        return result, [
            part.cut(result.terms, share) for part, share in zip(found, shares, strict=True)
        ]

    def _parts(self, hit: Hit, result: RecallResult, shown: set[str]) -> _Parts:
        """One hit's words, with the request it answers, the result its tool call returned
        and the user's answer to its question, each when folded away and not shown already
        (``shown`` gains them)."""
        redact = self._redactor()
        head = f"[{hit.entry_id}] {hit.role} {hit.timestamp}"
        entry = self.tree.get_entry(hit.entry_id)
        found = entry_text(entry) if entry is not None else None
        text = redact(found[1]) if found is not None else hit.snippet
        # What the hit answers and what its call returned, each once in the whole result.
        asked = asking_message(self.tree, hit.entry_id, result.scope)
        returned = call_result(self.tree, hit.entry_id, result.scope)
        answered = user_answer(self.tree, hit.entry_id, result.scope)
        called = calling_message(self.tree, hit.entry_id, result.scope)
        reported = reported_result(self.tree, hit.entry_id, result.scope)
        extras = []
        related_entries = (
            (asked, _REQUEST_LEAD),
            (called, _CALL_LEAD),
            (returned, _RESULT_LEAD),
            (answered, _ANSWER_LEAD),
            (reported, _REPORTED_LEAD),
        )
        for related, template in related_entries:
            if related is None:
                continue
            # A message that made several calls is shown once per call (each result that
            # is a hit names its own file); any other entry once in the whole result.
            key = f"{related[0]} {related[1]}" if template is _CALL_LEAD else related[0]
            if key not in shown:
                shown.add(key)
                extras.append((template.format(id=related[0]), redact(related[1])))
        return _Parts(head, text, tuple(extras))

    def _redactor(self) -> Callable[[str], str]:
        """The settings' redaction (made once: the rules do not change while this lives)."""
        if self._redact is None:
            from contextree.security.redact import Redactor
            from contextree.settings.load import Settings

            settings = self.settings or Settings()
            redactor = Redactor.from_settings(settings.redaction, literals=self._literals)
            self._redact = redactor.redact if redactor is not None else _unchanged
        return self._redact

    def close(self) -> None:
        """Close the index, if this object opened it."""
        if self._index is not None and self._owns_index:
            self._index.close()
        self._index = None


@dataclass(frozen=True, slots=True)
class _Parts:
    """One hit's words before they are cut to its share: its head, its text, and the
    ``(lead, text)`` of each related entry shown with it."""

    head: str
    text: str
    extras: tuple[tuple[str, str], ...]

    def need(self) -> int:
        """The characters the hit takes shown whole (its head and each line's lead too)."""
        lines = [(len(self.head) + 1, self.text)]
        lines += [(len(lead) + 1, words) for lead, words in self.extras]
        return sum(lead + len(" ".join(words.split())) for lead, words in lines)

    def cut(self, terms: list[str], share: int) -> Excerpt:
        """The hit within ``share`` characters: its text and each related entry's words
        share the room (:func:`fill`), so a short request leaves more of a long result,
        and a short message more of the result its call returned."""
        room = share - len(self.head) - 1
        if not self.extras:
            return Excerpt(self.head, _around(self.text, terms, room))
        # Each a third of the hit's share (a quarter when three apply to one entry: a
        # question after a tool result, in a folded turn), and more when the hit's own text
        # is short: the room it leaves goes to them; the text has the rest.
        part = room // max(3, len(self.extras) + 1)
        leads = sum(len(lead) + 1 for lead, _ in self.extras)
        needs = [len(" ".join(words.split())) for _, words in self.extras]
        own = len(" ".join(self.text.split()))
        spare = max(0, room - len(self.extras) * part - own)
        rooms = fill(needs, len(self.extras) * part - leads + spare)
        lines = tuple(
            (lead, _around(words, terms, size))
            for (lead, words), size in zip(self.extras, rooms, strict=True)
        )
        used = sum(len(lead) + len(words) + 1 for lead, words in lines)
        return Excerpt(self.head, _around(self.text, terms, room - used), lines)


def fill(needs: list[int], total: int) -> list[int]:
    """Shares of ``total`` for parts that need ``needs``: each has what it needs up to one
    level, the same for all, that uses ``total`` when they need more in all (what a short
    part leaves goes to the long ones equally)."""
    shares = [0] * len(needs)
    left = max(0, total)
    waiting = sorted(range(len(needs)), key=lambda index: needs[index])
    while waiting:
        level = left // len(waiting)
        index = waiting[0]
        if needs[index] > level:
            for index in waiting:
                shares[index] = level
            break
        shares[index] = needs[index]
        left -= needs[index]
        waiting.pop(0)
    return shares


@dataclass(frozen=True, slots=True)
class Excerpt:
    """One hit as the tool shows it."""

    head: str
    """``[id] role time``."""
    text: str
    context: tuple[tuple[str, str], ...] = ()
    """``(lead, excerpt)`` of the user message the hit answers, of what its tool call
    returned and of the user's answer to its question, when shown."""

    def render(self) -> str:
        context = "".join(f"\n{lead}{words}" for lead, words in self.context)
        return f"{self.head}\n{self.text}{context}"


_SEPARATOR: Final = "\n\n"
_NO_COMPLETE: Final = "No excerpt holds every word; these hold some of them."
_PARTIAL_FROM_HERE: Final = "These hold only some of the words:"
_REQUEST_LEAD: Final = "  in reply to [{id}] user: "
_RESULT_LEAD: Final = "  returned [{id}]: "
_ANSWER_LEAD: Final = "  answered by [{id}] user: "
_CALL_LEAD: Final = "  called by [{id}]: "
_REPORTED_LEAD: Final = "  after result [{id}]: "
_MIN_EXCERPT: Final = 40


def _unchanged(text: str) -> str:
    return text


def _around(text: str, terms: list[str], room: int) -> str:
    """At most ``room`` characters (never fewer than :data:`_MIN_EXCERPT`) of ``text``: its
    lines and sentences that hold the most of ``terms`` (see :mod:`contextree.recall.excerpt`)."""
    return excerpt_of(text, terms, max(_MIN_EXCERPT, room))
