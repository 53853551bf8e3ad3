"""Which entries a query searches, and keeping that answer beside the index.

The scope of a query at a leaf is the entries of its path that come before the kept part of
the latest compaction and are not in the context (or, with ``all_branches``, every entry not in
the context). Finding it walks the leaf's whole path, and for a file opened lazily that reads
every line: most of a command-line ``recall`` on a 100k-entry session (1.4 s of 2.5 s). The
scope depends only on the stored bytes and the leaf, so it is kept beside the index under the
index's identity (a rewrite gives a new one) and size (an append changes it), with what loading
those bytes reported; a later query of the unchanged session reads it back. The path was
checked for a parent cycle when the scope was made, and the same bytes have the same path.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from typing import TYPE_CHECKING

import msgspec

if TYPE_CHECKING:
    from contextree.recall.index import RecallIndex
    from contextree.session.tree import SessionTree

__all__ = ["SearchScope", "folded_entry_ids", "searched_scope"]


def folded_entry_ids(
    tree: SessionTree, leaf_id: str | None = None, *, all_branches: bool = False
) -> set[str]:
    """Ids of the entries recall searches at ``leaf_id`` (default: the leaf)."""
    target = leaf_id if leaf_id is not None else tree.leaf_id
    if target is None:
        return set()
    in_context = {i for i in tree.build_session_context(target).entry_ids if i is not None}
    if all_branches:
        return {r.id for r in tree.records() if r.id is not None and r.id not in in_context}
    path = tree.get_branch_view(target)
    latest = next((i for i in range(len(path) - 1, -1, -1) if path.type_at(i) == "compaction"), -1)
    return {i for i in path.ids()[:latest] if i is not None and i not in in_context}


@dataclass(frozen=True, slots=True)
class SearchScope:
    """The entries a query searches and what loading the session reported."""

    ids: set[str]
    load_warnings: list[str]
    cached: bool
    """Read back from the index (the session's lines were not read for it)."""


class _Kept(msgspec.Struct, array_like=True):
    ids: list[str]
    warnings: list[str]


def searched_scope(
    index: RecallIndex, tree: SessionTree, leaf_id: str | None, *, all_branches: bool
) -> SearchScope:
    """The scope at ``leaf_id`` (default: the leaf), from the index when it kept the scope of
    these bytes, else found (raising ``ParentCycleError`` for a looping path) and kept."""
    target = leaf_id if leaf_id is not None else tree.leaf_id
    if target is None:
        return SearchScope(set(), tree.report.messages(), False)
    backend = index.backend
    state = backend.load_state()
    # Only an index of these very bytes may keep a scope: a known identity (not an in-memory
    # session) at the size this tree read (another process may have synced further).
    if state is None or state.identity == "unknown" or state.size != tree.known_size:
        state = None
    key = f"{'all' if all_branches else 'path'}:{target}"
    if state is None:
        return _found(tree, target, all_branches)
    memo = index.scopes.get(key)
    if memo is not None and memo[0] == state:
        return memo[1]  # a repeated query in this process (the model's recall tool)
    scope = _read_back(backend.load_scope(key, state))
    if scope is None:
        scope = _found(tree, target, all_branches)
        blob = zlib.compress(
            msgspec.msgpack.encode(_Kept(sorted(scope.ids), scope.load_warnings)), 1
        )
        backend.save_scope(key, state, blob)
    index.scopes = {k: v for k, v in index.scopes.items() if v[0] == state}
    index.scopes[key] = (state, scope)
    return scope


def _found(tree: SessionTree, target: str, all_branches: bool) -> SearchScope:
    tree.ensure_acyclic(target)
    ids = folded_entry_ids(tree, target, all_branches=all_branches)
    return SearchScope(ids, tree.report.messages(), False)


def _read_back(blob: bytes | None) -> SearchScope | None:
    if blob is None:
        return None
    try:
        kept = msgspec.msgpack.decode(zlib.decompress(blob), type=_Kept)
    except (zlib.error, msgspec.DecodeError):
        return None  # a damaged row: found again
    return SearchScope(set(kept.ids), kept.warnings, True)
