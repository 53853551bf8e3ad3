"""A short run of the multi-process soak of ``bench/soak.py`` on each store.

Appenders, compactors and a navigator share one session while the supervisor SIGKILLs random
workers and starts them again; afterwards every acknowledged entry must be held exactly once,
byte-identical in the export, and ``check`` must find no error. ``python -m bench.soak`` runs
the same code for minutes with 8 appenders.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from bench.soak import SoakConfig, SoakResult, _Crew, read_acknowledged, soak_store, verify

SHORT = SoakConfig(duration=8, appenders=4, compactors=2, navigators=1, kill_interval=0.8)


def _assert_clean(result: SoakResult) -> None:
    assert not result.problems, "\n".join(result.problems)
    for name in SoakResult.MUST_BE_ZERO:
        assert getattr(result, name) == 0, name
    assert result.ok
    assert result.kills > 0 and result.acknowledged > 0 and result.compactions > 0
    # Every entry held is the first message, an acknowledged append, or one written by a
    # worker that was killed before it could say so (appends) or count it (the others).
    assert result.unacknowledged >= 0


def test_soak_file(tmp_path: Path) -> None:
    _assert_clean(soak_store("file", str(tmp_path / "s.jsonl"), tmp_path, SHORT))


def test_soak_sqlite(tmp_path: Path) -> None:
    target = f"sqlite://{tmp_path / 'soak.db'}#soak"
    _assert_clean(soak_store("sqlite", target, tmp_path, SHORT))


def test_soak_postgres(tmp_path: Path, postgres: Any) -> None:
    _assert_clean(soak_store("postgres", f"{postgres.url}#soak", tmp_path, SHORT))


def test_acknowledgements_are_read_whole_lines_only(tmp_path: Path) -> None:
    log = tmp_path / "append-0.log"
    log.write_bytes(b'a1 {"id":"a1"}\nb2 {"id":"b2"}\na1 {"id":"a1"}\nc3 {"id":"c')
    acknowledged, twice = read_acknowledged([log, tmp_path / "missing.log"])
    # The cut last line was never acknowledged; an id acknowledged twice is a duplicate.
    assert acknowledged == {"a1": b'{"id":"a1"}', "b2": b'{"id":"b2"}'}
    assert twice == 1


def test_a_worker_started_again_writes_a_log_of_its_own(tmp_path: Path) -> None:
    # A SIGKILL can cut a write() at a page boundary (seen: 14 cut lines in 300 kills of a
    # process appending 100-6,000-byte lines). Had the next process appended to the same log,
    # the cut line would have taken its first line in and compared unequal to the export.
    crew = _Crew("unused", tmp_path, SHORT)
    first, again = crew.log("append", 0), crew.log("append", 0)
    assert first != again and first.parent == again.parent == tmp_path
    first.write_bytes(b'a1 {"id":"a1"}\nb2 {"id":"b')
    again.write_bytes(b'c3 {"id":"c3"}\n')
    acknowledged, twice = read_acknowledged(sorted(tmp_path.glob("append-*.log")))
    assert acknowledged == {"a1": b'{"id":"a1"}', "c3": b'{"id":"c3"}'}
    assert twice == 0


def test_blank_padding_left_by_a_killed_append_is_skipped(tmp_path: Path) -> None:
    from contextree.entries.codec import encode_line
    from contextree.session.tree import SessionTree

    target = tmp_path / "s.jsonl"
    tree = SessionTree.open(str(target))
    acknowledged = []
    for n in range(2):
        entry_id = tree.append_message({"role": "user", "content": f"m{n}", "timestamp": n})
        entry = tree.get_entry(entry_id)
        assert entry is not None
        acknowledged.append(entry_id.encode() + b" " + encode_line(entry) + b"\n")
    (tmp_path / "append-0-1.log").write_bytes(b"".join(acknowledged))
    # An append reserves its bytes as spaces first; a kill before the fill leaves them.
    with target.open("ab") as out:
        out.write(b" " * 300 + b"\n")
    result = SoakResult("file")
    verify(str(target), tmp_path, result)
    assert result.acknowledged == 2 and result.entries == 2
    assert result.export_mismatches == result.lost == result.duplicates == 0


@pytest.mark.parametrize("field", SoakResult.MUST_BE_ZERO)
def test_any_nonzero_count_fails_the_soak(field: str) -> None:
    result = SoakResult("x", acknowledged=1, kills=1)
    assert result.ok
    setattr(result, field, 1)
    assert not result.ok


def test_only_whole_report_lines_are_counted(tmp_path: Path) -> None:
    from bench.soak import _count_lines

    log = tmp_path / "compact-0-1.log"
    # "already_compacted" and "compacted_elsewhere" are compactions that wrote nothing.
    log.write_bytes(b"compacted\nalready_compacted\ncompacted_elsewhere\ncompacted\nnothing")
    assert _count_lines([log, tmp_path / "missing.log"], b"compacted") == 2
    assert _count_lines([log], b"compacted_elsewhere") == 1
