"""``recall``: search what compactions folded out of a path's context.

The scope is the entries of the path to the leaf that come before the kept part of its latest
compaction (their words no longer reach the model except through the summary), or with
``all_branches`` every entry of the session that is not in the leaf's context (abandoned
branches too). A query is split into terms at white space (``"two words"`` is one term), each
searched as a phrase. Entries holding every term come first; when fewer of them than asked for
exist, entries holding some of the terms fill the rest (``RecallResult.complete`` says where they
start): a model that remembers one word wrong, or an assistant's reply that restates what the
user said in other words, still leaves the page full instead of holding one hit or none.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from contextree.recall.base import Hit
from contextree.recall.index import RecallIndex, SyncReport
from contextree.recall.scope import folded_entry_ids, searched_scope

if TYPE_CHECKING:
    from contextree.session.tree import SessionTree
    from contextree.settings.load import Settings

__all__ = [
    "RecallResult",
    "folded_entry_ids",
    "open_recall_index",
    "query_terms",
    "recall",
    "recall_json",
]

_TERM = re.compile(r'"([^"]*)"|(\S+)')


def query_terms(query: str) -> list[str]:
    """The terms of ``query``: words, or ``"quoted phrases"``; those without a letter or digit
    are dropped (they match nothing)."""
    terms = [quoted or bare for quoted, bare in _TERM.findall(query)]
    return [t for t in terms if any(ch.isalnum() for ch in t)]


@dataclass(frozen=True, slots=True)
class RecallResult:
    """What ``recall`` found."""

    query: str
    terms: list[str]
    hits: list[Hit]
    searched: int
    """How many entries were in scope."""
    all_branches: bool
    any_term: bool = False
    """No entry held every term: these hits hold at least one."""
    complete: int = 0
    """How many of the first hits hold every term; those after them hold some."""
    index: str = ""
    """Which backend answered (``sqlite-fts5``, ``postgres``, ``scan``)."""
    sync: SyncReport | None = None
    notices: list[str] = field(default_factory=list)
    load_warnings: list[str] = field(default_factory=list)
    """What loading the session found wrong (``SessionTree.report``), as of when the scope was
    made: a query of unchanged bytes reads it back with the scope instead of every line."""
    scope_cached: bool = False
    """The scope was read back from the index (see :mod:`contextree.recall.scope`)."""
    scope: AbstractSet[str] = field(default=frozenset(), repr=False, compare=False)
    """The ids searched (:attr:`searched` of them)."""


def open_recall_index(
    tree: SessionTree, settings: Settings | None = None, *, literals: Iterable[str] = ()
) -> RecallIndex:
    """``tree``'s index, placed and redacted as ``settings`` say (``recall.indexDir``,
    ``redaction.*``); default settings without ``settings``. ``literals`` are exact secret
    values redacted too (the CLI and the agent pass the environment's, as ``compact`` does)."""
    from contextree.security.redact import Redactor
    from contextree.settings.load import Settings

    settings = settings if settings is not None else Settings()
    values = sorted(set(literals))
    redactor = Redactor.from_settings(settings.redaction, literals=values)
    # Other literals rebuild the index. The key names how many and how long they are, never
    # a hash of them: the index must not hold what would check a guessed password.
    secrets = f":{len(values)}/{sum(map(len, values))}" if values else ""
    key = "off" if redactor is None else f"{redactor.names}:{settings.redaction.patterns}{secrets}"
    return RecallIndex.for_tree(
        tree,
        index_dir=settings.recall_index_dir,
        redact=redactor.redact if redactor is not None else None,
        redaction_key=key,
    )


def recall(
    tree: SessionTree,
    query: str,
    *,
    leaf_id: str | None = None,
    limit: int = 10,
    all_branches: bool = False,
    index: RecallIndex | None = None,
    settings: Settings | None = None,
    literals: Iterable[str] = (),
) -> RecallResult:
    """Search the entries compactions folded out of ``leaf_id``'s context (see the module).

    ``index`` is kept up to date and reused; without it one is opened for this call (with
    ``literals``, see :func:`open_recall_index`). A leaf
    whose parent chain loops raises :class:`~contextree.errors.ParentCycleError`.
    """
    if limit < 1:
        raise ValueError("limit must be at least 1")
    terms = query_terms(query)
    values = tuple(value for value in dict.fromkeys(literals) if value)
    own = index is None
    used = open_recall_index(tree, settings, literals=values) if index is None else index
    try:
        report = used.sync(tree)
        scope = searched_scope(used, tree, leaf_id, all_branches=all_branches)
        allowed = scope.ids
        hits, complete = _hits(used, terms, allowed, limit)
        if values and _shows_any(hits, values):
            # Built while these secrets had other values of the same lengths (the index's
            # key holds only their count and length): rebuilt with the ones set now.
            report = used.rebuild(tree, "secrets changed")
            hits, complete = _hits(used, terms, allowed, limit)
        notices = [used.notice] if used.notice else []
        return RecallResult(
            query,
            terms,
            hits,
            len(allowed),
            all_branches,
            complete == 0 and bool(hits),
            complete,
            used.backend.kind,
            report,
            notices,
            scope.load_warnings,
            scope.cached,
            allowed,
        )
    finally:
        if own:
            used.close()


def _hits(
    index: RecallIndex, terms: list[str], allowed: set[str], limit: int
) -> tuple[list[Hit], int]:
    """The hits holding every term, then those holding some; and how many hold every one."""
    hits = index.search(terms, allowed=allowed, limit=limit) if allowed else []
    complete = len(hits)
    if complete < limit and allowed and len(terms) > 1:
        hits += _partial(index, terms, allowed, hits, limit)
    return hits, complete


def _shows_any(hits: Sequence[Hit], values: Sequence[str]) -> bool:
    """Whether a hit's snippet (its match marks taken out) shows one of ``values``."""
    for hit in hits:
        parts, at = [], 0
        for start, end in hit.marks:
            parts += [hit.snippet[at:start], hit.snippet[start + 1 : end - 1]]
            at = end
        text = "".join([*parts, hit.snippet[at:]])
        if any(value in text for value in values):
            return True
    return False


def _partial(
    index: RecallIndex, terms: list[str], allowed: set[str], complete: list[Hit], limit: int
) -> list[Hit]:
    """The best entries holding some of ``terms`` but not all, up to ``limit`` hits in all."""
    shown = {hit.entry_id for hit in complete}
    more = index.search(terms, allowed=allowed, limit=limit + len(complete), any_term=True)
    partial: list[Hit] = []
    for hit in more:
        if hit.entry_id not in shown and len(partial) < limit - len(complete):
            shown.add(hit.entry_id)
            partial.append(hit)
    return partial


def recall_json(result: RecallResult) -> dict[str, object]:
    """``recall --format json``."""
    return {
        "query": result.query,
        "terms": result.terms,
        "searched": result.searched,
        "allBranches": result.all_branches,
        "anyTerm": result.any_term,
        "complete": result.complete,
        "index": result.index,
        "notices": result.notices,
        "hits": [
            {
                "entryId": hit.entry_id,
                "role": hit.role,
                "timestamp": hit.timestamp,
                "snippet": hit.snippet,
                "score": round(hit.score, 6),
                "everyTerm": rank < result.complete,
            }
            for rank, hit in enumerate(result.hits)
        ],
    }
