"""The history that earlier offline compactions summarized, for the offline summarizer to read
again (a deliberate difference from pi, DESIGN.md and docs/summaries.md).

pi updates a summary from the previous summary and the new messages: what one compaction left
out for its budget is gone for every later one, and the first compactions of a session have
the smallest budgets (within a fifth of the history, 60 tokens for the first of the blind dev
sessions). The session file keeps every message, and the offline summarizer reads them at no
cost in money: so when every earlier summary on the path was its own, it reads the messages
they summarized again with the new ones, and chooses within the budget among all of them; so
do the recorded facts appended to a model's summary when every earlier summary held them (the
model still updates its own text from the previous summary). A model's summary alone, or a
hook's, says things the messages do not: then the previous summary is updated as pi does.
Past :data:`MAX_EARLIER_TOKENS` or :data:`MAX_EARLIER_MESSAGES` the previous summary is
updated too, so that reading again never costs more than a fraction of a second.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final

from contextree.context.build import RESET_BOUNDARY, message_from_entry
from contextree.entries.sequence import type_reader
from contextree.entries.types import StoredEntry, StoredMessage, is_compaction_entry
from contextree.tokens.estimate import estimate_tokens

__all__ = [
    "MAX_EARLIER_MESSAGES",
    "MAX_EARLIER_TOKENS",
    "OFFLINE_SUMMARIES",
    "RECORDED_SUMMARIES",
    "EarlierHistory",
    "summary_method",
]

MAX_EARLIER_TOKENS: Final = 250_000
"""The most history (estimated tokens) read again: about a megabyte of text, 0.14 s more for
the offline summarizer (1,091 messages of the 100k bench session, mostly tool output)."""
MAX_EARLIER_MESSAGES: Final = 2_000
"""The most messages read again: grouping near-duplicate requests compares a request with
the earlier ones that share its rarest words, which in plain talk with few words of its own
is many (2,000 short messages of a 16-word vocabulary: 0.19 s more; 25,000: 12.9 s)."""
OFFLINE_SUMMARIES: Final = frozenset({"offline", "offline-fallback"})
"""Compactions whose whole summary the offline summarizer wrote from the messages."""
RECORDED_SUMMARIES: Final = OFFLINE_SUMMARIES | {"hybrid"}
"""Compactions whose summary holds the offline summarizer's lines (a model's summary with the
recorded facts, "hybrid", holds them under their own heading)."""


def summary_method(entry: Mapping[str, object]) -> str | None:
    """Who wrote a compaction entry's summary (``details.method``: ``"offline"``,
    ``"hybrid"``, ``"model"``, ...); ``None`` for a hook's or an extension's, or unknown."""
    if entry.get("fromHook") or entry.get("fromExtension"):
        return None
    details = entry.get("details")
    method = details.get("method") if isinstance(details, Mapping) else None
    return method if isinstance(method, str) else None


@dataclass(slots=True)
class EarlierHistory:
    """``path[:end]``, the messages before the current context (``end``: where it starts),
    read only when asked; ``previous``: the latest compaction's index."""

    path: Sequence[StoredEntry]
    end: int
    previous: int
    _read: dict[frozenset[str], list[StoredMessage] | None] = field(
        default_factory=dict, repr=False, compare=False
    )

    def messages(self, methods: frozenset[str]) -> list[StoredMessage] | None:
        """The messages since the session's start (or its latest ``/clear``) up to ``end``,
        compaction entries left out; ``None`` when a compaction since then (the latest
        included) was not written by one of ``methods``, or the messages pass
        :data:`MAX_EARLIER_MESSAGES` or :data:`MAX_EARLIER_TOKENS` (read once per
        ``methods``: a model's recorded facts and then the offline fallback both ask)."""
        if methods not in self._read:
            self._read[methods] = self._messages(methods)
        return self._read[methods]

    def _messages(self, methods: frozenset[str]) -> list[StoredMessage] | None:
        type_of = type_reader(self.path)
        start = 0
        for index in range(self.end - 1, -1, -1):
            if type_of(index) == RESET_BOUNDARY:
                start = index + 1
                break
        # Every compaction up to the latest: one kept messages from before another, whose
        # summary the next one then read, so the current context may hold one too.
        compactions = 0
        for index in range(start, self.previous + 1):
            if type_of(index) == "compaction":
                if summary_method(self.path[index]) not in methods:
                    return None
                compactions += index < self.end
        if self.end - start - compactions > 2 * MAX_EARLIER_MESSAGES:
            return None  # (known without decoding: most entries are messages)
        messages: list[StoredMessage] = []
        tokens = 0
        for entry in self.path[start : self.end]:  # decoded in runs, not one by one
            if is_compaction_entry(entry):
                continue
            message = message_from_entry(entry, for_context=False)
            if message is None:
                continue
            tokens += estimate_tokens(message)
            messages.append(message)
            if tokens > MAX_EARLIER_TOKENS or len(messages) > MAX_EARLIER_MESSAGES:
                return None
        return messages
