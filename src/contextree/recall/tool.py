"""Recall as a tool for models: one definition the built-in agent and every framework adapter
offer (``recall``), and its bounded text result.

The tool is offered only once the session's path has a compaction (before that nothing is
folded away). Its result lists the best hits, each with its entry id, role and time and an
excerpt of the entry's (redacted) text around the first match, within
:data:`MAX_RESULT_CHARS` in all. Hits holding every word come first, then hits holding some
(see :mod:`contextree.recall.query`); an assistant message or tool result comes with an excerpt
of the user message its turn answers, when that is folded away too (see
:mod:`contextree.recall.turns`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

from contextree.recall.base import Hit
from contextree.recall.documents import entry_text
from contextree.recall.index import RecallIndex
from contextree.recall.query import RecallResult, open_recall_index, recall
from contextree.recall.scan import snippet_around
from contextree.recall.turns import asking_message

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
    """

    def __init__(
        self,
        tree: SessionTree,
        settings: Settings | None = None,
        *,
        index: RecallIndex | None = None,
    ) -> None:
        self.tree = tree
        self.settings = settings
        self._index: RecallIndex | None = index
        self._owns_index = index is None
        self._redact: Callable[[str], str] | None = None

    def available(self) -> bool:
        """Whether the tool should be offered: the leaf's path has a compaction."""
        return self.tree.leaf_id is not None and self.tree.latest_compaction() is not None

    def search_text(self, query: str, *, limit: int = 5) -> str:
        """The tool's result for ``query``: at most ``limit`` (1-10) excerpts, bounded."""
        limit = max(1, min(_MAX_LIMIT, limit))
        if self._index is None:
            self._index = open_recall_index(self.tree, self.settings)
        result = recall(self.tree, query, limit=limit, index=self._index)
        if not result.terms:
            return "The query has no word to search for."
        if not result.hits:
            return f'Nothing in the condensed part of the conversation matches "{query}".'
        budget = MAX_RESULT_CHARS // len(result.hits)
        shown = {hit.entry_id for hit in result.hits}
        parts: list[str] = []
        if result.any_term:
            parts.append("No excerpt holds every word; these hold some of them.")
        for rank, hit in enumerate(result.hits):
            if rank == result.complete and rank > 0:
                parts.append("These hold only some of the words:")
            parts.append(self._excerpt(hit, result, budget, shown))
        return "\n\n".join(parts)[:MAX_RESULT_CHARS]

    def _excerpt(self, hit: Hit, result: RecallResult, budget: int, shown: set[str]) -> str:
        """One hit within ``budget`` characters, with the request it answers when that is
        folded away and not shown already (``shown`` gains it)."""
        redact = self._redactor()
        head = f"[{hit.entry_id}] {hit.role} {hit.timestamp}"
        entry = self.tree.get_entry(hit.entry_id)
        found = entry_text(entry) if entry is not None else None
        text = redact(found[1]) if found is not None else hit.snippet
        room = max(80, budget - len(head) - 2)
        asked = asking_message(self.tree, hit.entry_id, result.scope)
        if asked is None or asked[0] in shown:
            return f"{head}\n{_around(text, result.terms, room)}"
        shown.add(asked[0])
        asked_room = max(80, room // 3)
        request = _around(redact(asked[1]), result.terms, asked_room)
        return (
            f"{head}\n{_around(text, result.terms, max(80, room - asked_room))}\n"
            f"  in reply to [{asked[0]}] user: {request}"
        )

    def _redactor(self) -> Callable[[str], str]:
        """The settings' redaction (made once: the rules do not change while this lives)."""
        if self._redact is None:
            from contextree.security.redact import Redactor
            from contextree.settings.load import Settings

            settings = self.settings or Settings()
            redactor = Redactor.from_settings(settings.redaction)
            self._redact = redactor.redact if redactor is not None else _unchanged
        return self._redact

    def close(self) -> None:
        """Close the index, if this object opened it."""
        if self._index is not None and self._owns_index:
            self._index.close()
        self._index = None


def _unchanged(text: str) -> str:
    return text


def _around(text: str, terms: list[str], room: int) -> str:
    """About ``room`` characters of ``text`` around the first of ``terms`` that it holds (a hit
    holding only some terms may lack the first)."""
    lowered = text.lower()
    needle = next((term for term in terms if term.lower() in lowered), terms[0])
    return snippet_around(text, needle, room, mark=False)
