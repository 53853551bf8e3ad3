"""pi 0.73.1 reads its own line after a kill cut our append short (issue 15 item 8).

pi appends with ``appendFileSync`` and never ends a torn line first. A kill in the middle of one
of our appends (simulated here, at each write of the append, with part of the bytes written)
followed by such an append must leave pi's line readable by pi itself and by us; see
``tests/store/test_torn_appends.py`` for the store side.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from contextree.session.tree import SessionTree
from differential.installs import Install
from torn_appends import CUTS, PI_TEXT, Injector, append_killed, pi_append, start_session

pytestmark = pytest.mark.differential


def test_pi_reads_its_line_appended_after_our_append_was_killed(
    pi: Install, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path
    files: list[tuple[str, Path, str]] = []
    for call in (1, 2):  # the reservation, then the fill
        for name in ("one byte", "half", "all but one byte", "all"):
            path = root / f"kill-{call}-{name.replace(' ', '-')}.jsonl"
            before = start_session(path)
            append_killed(path, Injector(call, CUTS[name]), monkeypatch)
            foreign = pi_append(path, before[-1])
            assert SessionTree.open(path).has_entry(foreign), path.name
            files.append((f"write {call}, {name} written", path, foreign))
    results = pi.run(
        [{"file": str(path), "leaves": [foreign]} for _, path, foreign in files], root / "home"
    )
    for (where, _, foreign), result in zip(files, results, strict=True):
        assert foreign in result["ids"], f"{where}: pi lost its own line"
        assert result["leafId"] == foreign, where
        context = result["contexts"][foreign]["messages"]
        last = context[-1]
        if "$ref" in last:
            last = result["messages"][last["$ref"]]
        assert last["content"] == PI_TEXT, where
