"""Recall as a tool for models: one definition the built-in agent and every framework adapter
offer (``recall``), and its bounded text result.

The tool is offered only once the session's path has a compaction (before that nothing is
folded away). Its result lists the best hits, each with its entry id, role and time and an
excerpt of the entry's (redacted) text around the first match, within
:data:`MAX_RESULT_CHARS` in all.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from contextree.recall.documents import entry_text
from contextree.recall.index import RecallIndex
from contextree.recall.query import open_recall_index, recall
from contextree.recall.scan import snippet_around

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
            "description": 'Words to find; all must occur. "Quoted words" form one phrase.',
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
    """

    def __init__(self, tree: SessionTree, settings: Settings | None = None) -> None:
        self.tree = tree
        self.settings = settings
        self._index: RecallIndex | None = None

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
        redact = self._redactor()
        budget = MAX_RESULT_CHARS // len(result.hits)
        parts: list[str] = []
        if result.any_term:
            parts.append("No excerpt holds every word; these hold some of them.")
        for hit in result.hits:
            head = f"[{hit.entry_id}] {hit.role} {hit.timestamp}"
            entry = self.tree.get_entry(hit.entry_id)
            found = entry_text(entry) if entry is not None else None
            text = redact(found[1]) if found is not None else hit.snippet
            room = max(80, budget - len(head) - 2)
            parts.append(f"{head}\n{snippet_around(text, result.terms[0], room, mark=False)}")
        return "\n\n".join(parts)[:MAX_RESULT_CHARS]

    def _redactor(self) -> Any:
        from contextree.security.redact import Redactor
        from contextree.settings.load import Settings

        settings = self.settings or Settings()
        redactor = Redactor.from_settings(settings.redaction)
        return redactor.redact if redactor is not None else (lambda text: text)

    def close(self) -> None:
        """Close the index."""
        if self._index is not None:
            self._index.close()
            self._index = None
