"""Which entries a query searches, and keeping that answer beside the index.

The scope of a query at a leaf is the entries of its path that come before the kept part of
the latest compaction and are not in the context (or, with ``all_branches``, every entry not in
the context). Finding it walks the leaf's whole path, and for a file opened lazily that reads
every line: most of a command-line ``recall`` on a 100k-entry session (1.4 s of 2.5 s). The
scope depends only on the stored bytes and the leaf, so it is kept beside the index under the
index's identity (a rewrite gives a new one) and size (an append changes it), with what loading
those bytes reported; a later query of the unchanged session reads it back. The path was
checked for a parent cycle when the scope was made, and the same bytes have the same path.

After an append the bytes differ, and walking the path again would cost the same second at
100k entries. So the scope of the leaf is kept as the *tip* (:data:`TIP_KEY`), with every id
the session held and the id of its last line, across appends. The next query at the new leaf
reads only the lines appended since (from the end of the file) and reuses the tip's scope when
they cannot have changed it: every new line is a usable entry with a new id and a known parent,
and the new leaf's parent chain runs through new entries, none a compaction, to the tip's leaf.
Then the latest compaction of the path and the entries it folded are the tip's, and the path
cannot loop. Anything else (a bad line, a repeated id, a compaction, a move to another branch)
walks the path as before.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

import msgspec

from contextree.recall.appended import lines_since
from contextree.recall.base import TIP_KEY
from contextree.store.index import Record

if TYPE_CHECKING:
    from contextree.recall.base import IndexBackend, IndexState
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
    these bytes (or of the bytes before an append that cannot have changed it), else found
    (raising ``ParentCycleError`` for a looping path) and kept."""
    target = leaf_id if leaf_id is not None else tree.leaf_id
    if target is None:
        return SearchScope(set(), tree.report.messages(), False)
    backend = index.backend
    state = backend.load_state()
    # Only an index of these very bytes may keep a scope: a known identity (not an in-memory
    # session) at the size this tree read (another process may have synced further).
    if state is None or state.identity == "unknown" or state.size != tree.known_size:
        return _found(tree, target, all_branches)
    key = f"{'all' if all_branches else 'path'}:{target}"
    memo = index.scopes.get(key)
    if memo is not None and memo[0] == state:
        return memo[1]  # a repeated query in this process (the model's recall tool)
    if not all_branches and target == tree.leaf_id:
        scope = _at_tip(backend, tree, target, state)
    else:
        scope = _read_back(backend.load_scope(key, state)) or _found_and_kept(
            backend, tree, key, state, all_branches
        )
    index.scopes = {k: v for k, v in index.scopes.items() if v[0] == state}
    index.scopes[key] = (state, scope)
    return scope


class _Tip(msgspec.Struct, array_like=True):
    leaf: str
    last_id: str | None
    """The id of the session's last line when the tip was kept."""
    ids: list[str]
    others: list[str]
    """Every other id the session held."""
    warnings: list[str]


def _at_tip(backend: IndexBackend, tree: SessionTree, leaf: str, state: IndexState) -> SearchScope:
    """The scope at the session's leaf: the tip's, extended over appends when it may be."""
    stored = backend.load_tip(state.identity)
    tip_size, tip = (stored[0], _unpack(stored[1], _Tip)) if stored is not None else (0, None)
    if tip is not None and tip_size > state.size:
        tip = None  # kept for bytes this tree has not read
    if tip is not None and tip_size == state.size and tip.leaf == leaf:
        return SearchScope(set(tip.ids), tip.warnings, True)
    extended = _extended(tree, leaf, tip, tip_size) if tip is not None else None
    if extended is not None:
        scope, others, last_id = extended
    else:
        scope = _found(tree, leaf, False)
        others = [r.id for r in tree.records() if r.id is not None and r.id not in scope.ids]
        last = next(tree.records_newest_first(), None)
        last_id = last.id if last is not None else None
    kept = _Tip(leaf, last_id, sorted(scope.ids), others, scope.load_warnings)
    backend.save_scope(TIP_KEY, state, _pack(kept))
    return scope


def _extended(
    tree: SessionTree, leaf: str, tip: _Tip, tip_size: int
) -> tuple[SearchScope, list[str], str | None] | None:
    """The tip's scope for ``leaf`` after appends that cannot have changed it (see the
    module), with the ids outside it and the last line's id; ``None`` when they may have."""
    appended = lines_since(tree, tip_size, tip.last_id)
    if appended is None:
        return None
    new: dict[str, Record] = {}
    for item in appended:
        if type(item) is not Record or item.id is None or item.utf8_replaced:
            return None  # a line loading warns about: the warnings change
        if item.id in new:
            return None
        new[item.id] = item
    known = set(tip.ids)
    known.update(tip.others)
    for record in new.values():
        if record.id in known or (
            record.parent_id is not None
            and record.parent_id not in new
            and record.parent_id not in known
        ):
            return None  # a repeated id or a missing parent: the warnings and paths change
    node: str | None = leaf
    for _ in range(len(new) + 1):
        step = new.get(node) if node is not None else None
        if step is None:
            break
        if step.type == "compaction":
            return None
        node = step.parent_id
    if node != tip.leaf:
        return None  # another branch, or a loop among the new entries
    last_id = next(reversed(new)) if new else tip.last_id
    return SearchScope(set(tip.ids), tip.warnings, True), [*tip.others, *new], last_id


def _found_and_kept(
    backend: IndexBackend, tree: SessionTree, key: str, state: IndexState, all_branches: bool
) -> SearchScope:
    scope = _found(tree, key.partition(":")[2], all_branches)
    backend.save_scope(key, state, _pack(_Kept(sorted(scope.ids), scope.load_warnings)))
    return scope


def _found(tree: SessionTree, target: str, all_branches: bool) -> SearchScope:
    tree.ensure_acyclic(target)
    ids = folded_entry_ids(tree, target, all_branches=all_branches)
    return SearchScope(ids, tree.report.messages(), False)


def _pack(kept: msgspec.Struct) -> bytes:
    return zlib.compress(msgspec.msgpack.encode(kept), 1)


_Stored = TypeVar("_Stored", bound=msgspec.Struct)


def _read_back(blob: bytes | None) -> SearchScope | None:
    kept = _unpack(blob, _Kept) if blob is not None else None
    return SearchScope(set(kept.ids), kept.warnings, True) if kept is not None else None


def _unpack(blob: bytes, kind: type[_Stored]) -> _Stored | None:
    try:
        return msgspec.msgpack.decode(zlib.decompress(blob), type=kind)
    except (zlib.error, msgspec.DecodeError):
        return None  # a damaged row (or one of an older layout): found again
