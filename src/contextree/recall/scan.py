"""The fallback without FTS5: documents kept in memory and searched by a plain scan.

Used when this Python's SQLite lacks FTS5 (and for in-memory sessions without it): slower,
with a cruder ranking (how often the terms occur), but the same results for exact terms.
"""

from __future__ import annotations

import re
from collections.abc import Container, Iterable, Sequence
from typing import Final

from contextree.recall.base import MARK_END, MARK_START, TIP_KEY, Hit, IndexState, marked_hit
from contextree.recall.documents import Document
from contextree.recall.forms import term_forms, whole_word

__all__ = ["ScanBackend", "snippet_around"]

_SNIPPET_CHARS: Final = 160


def snippet_around(
    text: str,
    needle: str,
    chars: int = _SNIPPET_CHARS,
    *,
    mark: bool = True,
    marks: tuple[str, str] = ("[", "]"),
) -> str:
    """About ``chars`` characters of ``text`` around the first ``needle`` (case-insensitive),
    the match between ``marks`` (brackets, as ``recall --format json`` shows them) unless
    ``mark`` is false."""
    found = re.search(re.escape(needle), text, re.IGNORECASE) if needle else None
    if found is None:
        return " ".join(text[:chars].split()) + ("…" if len(text) > chars else "")
    start = max(0, found.start() - chars // 2)
    end = min(len(text), found.end() + chars // 2)
    match = f"{marks[0]}{found.group(0)}{marks[1]}" if mark else found.group(0)
    piece = f"{text[start : found.start()]}{match}{text[found.end() : end]}"
    return ("…" if start else "") + " ".join(piece.split()) + ("…" if end < len(text) else "")


def _other_forms(term: str) -> list[re.Pattern[str]]:
    """``term``'s other written forms, each as a whole word (made once a search, not once a
    document)."""
    return [re.compile(whole_word(form)) for form in term_forms(term)[1:]]


def _count(lower: str, term: str, others: list[re.Pattern[str]]) -> int:
    """How often ``term`` (lower case) is in ``lower``, as text or, the most often of them, in
    one of its other written forms."""
    found = lower.count(term)
    for form in others:
        found = max(found, len(form.findall(lower)))
    return found


def _needle(lower: str, term: str, others: list[re.Pattern[str]]) -> str:
    """What of ``term`` the snippet centres on: the term, or the first other form found."""
    if term in lower:
        return term
    for form in others:
        found = form.search(lower)
        if found is not None:
            return found.group(0)
    return term


class ScanBackend:
    """Documents of one session in a list, searched term by term."""

    kind = "scan"

    def __init__(self) -> None:
        self._documents: list[Document] = []
        self._state: IndexState | None = None
        self._scopes: dict[str, tuple[IndexState, bytes]] = {}

    def identity(self) -> str | None:
        return None

    def load_state(self) -> IndexState | None:
        return self._state

    def replace(self, documents: Iterable[Document], state: IndexState) -> None:
        self._documents = list(documents)
        self._state = state

    def add(self, documents: Sequence[Document], state: IndexState, previous: IndexState) -> bool:
        if self._state != previous:
            return False
        self._documents.extend(documents)
        self._state = state
        return True

    def load_scope(self, key: str, state: IndexState) -> bytes | None:
        kept = self._scopes.get(key)
        return kept[1] if kept is not None and kept[0] == state else None

    def load_tip(self, identity: str) -> tuple[int, bytes] | None:
        kept = self._scopes.get(TIP_KEY)
        if kept is None or kept[0].identity != identity:
            return None
        return kept[0].size, kept[1]

    def save_scope(self, key: str, state: IndexState, scope: bytes) -> None:
        self._scopes = {
            k: v
            for k, v in self._scopes.items()
            if v[0] == state or (k == TIP_KEY and v[0].identity == state.identity)
        }
        self._scopes[key] = (state, scope)

    def search(
        self, terms: Sequence[str], *, any_term: bool, allowed: Container[str] | None, limit: int
    ) -> list[Hit]:
        wanted = [t.lower() for t in terms if t.strip()]
        if not wanted or limit <= 0:
            return []
        searched = [(term, _other_forms(term)) for term in wanted]
        scored: list[tuple[int, int, Document]] = []
        for position, document in enumerate(self._documents):
            if allowed is not None and document.entry_id not in allowed:
                continue
            lower = document.text.lower()
            counts = [_count(lower, term, others) for term, others in searched]
            if any(counts) if any_term else all(counts):
                scored.append((-sum(counts), position, document))
        scored.sort(key=lambda item: (item[0], item[1]))
        around = (MARK_START, MARK_END)
        return [
            marked_hit(
                d.entry_id,
                d.role,
                d.timestamp,
                snippet_around(d.text, _needle(d.text.lower(), *searched[0]), marks=around),
                -s,
            )
            for s, _, d in scored[:limit]
        ]

    def close(self) -> None:
        self._documents = []
