"""Appends to a session other writers append to stay O(new entries) (issue 27 item 1).

Taking in another writer's lines used to forget which chains reach a root, so the next
append's cycle check walked the whole parent chain while holding the write lock.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from contextree.errors import ParentCycleError
from contextree.session.tree import SessionTree
from core_helpers import assistant, user

ENTRIES = 2_000


def _counting_lookups(tree: SessionTree, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    looked_up: list[str] = []
    get = tree._index.get

    def counting(key: str) -> object:
        looked_up.append(key)
        return get(key)

    monkeypatch.setattr(tree._index, "get", counting)
    return looked_up


def test_an_append_after_another_writers_costs_lookups_not_the_chain(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "shared.jsonl"
    ours = SessionTree.open(path)
    for n in range(ENTRIES):
        ours.append_message(user(f"turn {n}") if n % 2 == 0 else assistant(f"reply {n}"))
    theirs = SessionTree.open(path)
    theirs.append_message(user("from another worker"))
    looked_up = _counting_lookups(ours, monkeypatch)
    ours.append_message(user("ours again"))
    assert len(looked_up) < 10, f"{len(looked_up)} lookups for one append"
    reopened = SessionTree.open(path)
    assert len(reopened.get_entries()) == ENTRIES + 2


def test_a_foreign_line_that_repeats_an_id_still_refuses_a_cycle(tmp_path: Path) -> None:
    """The marks are dropped when a foreign line repeats a known id: such a line can close
    a cycle above our leaf (the last line with an id wins)."""
    path = tmp_path / "shared.jsonl"
    ours = SessionTree.open(path)
    first = ours.append_message(user("first"))
    ours.append_message(assistant("second"))
    last = ours.append_message(user("third"))
    line = path.read_text().splitlines()[1].replace('"parentId":null', f'"parentId":"{last}"')
    assert f'"id":"{first}"' in line
    assert f'"parentId":"{last}"' in line
    with path.open("a") as handle:
        handle.write(line + "\n")
    with pytest.raises(ParentCycleError):
        ours.append_message(assistant("under a cycle"))
