"""Issue 28 point 6: one session-name limit for every database store, with a clear error.

PostgreSQL used to fail at ~8,000 characters, 4,500 ``"`` or 700 emoji with "payload string
too long" (the NOTIFY payload limit after JSON escaping) while SQLite took any length."""

from __future__ import annotations

from pathlib import Path

import pytest

from contextree.errors import SessionFileError
from contextree.session.tree import SessionTree
from contextree.store.url import MAX_SESSION_NAME

LONGEST = ["😀" * MAX_SESSION_NAME, '"' * MAX_SESSION_NAME, "\x01" * MAX_SESSION_NAME]
TOO_LONG = ["😀" * 700, '"' * 4_500, "n" * 8_000, "x" * (MAX_SESSION_NAME + 1)]


def _urls(kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> str:
    if kind == "postgres":
        return str(request.getfixturevalue("postgres").url)
    return f"sqlite://{tmp_path}/s.db"


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_the_longest_names_work_and_longer_ones_fail_clearly(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    from urllib.parse import quote

    base = _urls(kind, tmp_path, request)
    for name in LONGEST:
        tree = SessionTree.open(f"{base}#{quote(name)}", cwd="/w")
        tree.append_message({"role": "user", "content": "hi", "timestamp": 0})
        assert SessionTree.open(f"{base}#{quote(name)}", create=False).get_branch()
    for name in TOO_LONG:
        with pytest.raises(SessionFileError) as caught:
            SessionTree.open(f"{base}#{quote(name)}", cwd="/w")
        message = str(caught.value)
        assert f"the limit is {MAX_SESSION_NAME} characters" in message
        assert "\n" not in message and len(message) < 300


def test_import_names_a_session_by_a_long_header_id(tmp_path: Path) -> None:
    from contextree.store.transfer import copy_session

    source = tmp_path / "s.jsonl"
    long_id = "i" * (MAX_SESSION_NAME + 1)
    source.write_text(
        '{"type":"session","version":3,"id":"' + long_id + '","timestamp":"t","cwd":"/w"}\n'
    )
    with pytest.raises(SessionFileError, match="the limit is"):
        copy_session(source, f"sqlite://{tmp_path}/s.db")
