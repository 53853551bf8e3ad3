"""Every session command on SQLite and PostgreSQL sessions, and ``import`` / ``export``: a
byte-identical round trip of every line of pi's and oh-my-pi's files."""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from cli_env import clean_cli_env, invoke, ok, reset_consoles
from contextree.session.tree import SessionTree
from pi_fixtures import PI_FIXTURES
from sample_session import build_session, open_session

Place = Callable[[str], str]
"""The URL of a new session named after its argument, on the backend under test."""


@pytest.fixture(autouse=True)
def clean_cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    clean_cli_env(tmp_path, monkeypatch)
    yield
    reset_consoles()


@pytest.fixture(params=["sqlite", "postgres"])
def place(request: pytest.FixtureRequest, tmp_path: Path) -> Place:
    run = uuid.uuid4().hex[:8]
    if request.param == "postgres":
        url = request.getfixturevalue("postgres").url
        return lambda name: f"{url}#{run}-{name}"
    return lambda name: f"sqlite://{tmp_path}/sessions.db#{name}"


def _round_trip(data: bytes, place: Place, tmp_path: Path, name: str) -> None:
    source = tmp_path / f"{name}.jsonl"
    source.write_bytes(data)
    url = place(name)
    out = ok("import", source, url).output
    assert "identical" in out
    back = tmp_path / f"{name}.back.jsonl"
    ok("export", url, back)
    assert back.read_bytes() == data
    assert back.stat().st_mode & 0o777 == 0o600


@pytest.mark.parametrize("fixture", ["before-compaction.jsonl", "large-session.jsonl"])
def test_pi_fixtures_round_trip_byte_for_byte(place: Place, tmp_path: Path, fixture: str) -> None:
    _round_trip((PI_FIXTURES / fixture).read_bytes(), place, tmp_path, fixture.split(".")[0])


TITLE_SLOT = (b'{"type":"title","v":1,"title":"Slot title","pad":"' + b" " * 180).ljust(255, b" ")[
    :253
] + b'"}\n'
HEADER = b'{"type":"session","version":3,"id":"0193a000-0000-7000-8000-000000000001",' + (
    b'"timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}'
)


def _entry(key: str, parent: str | None, text: str) -> bytes:
    entry = {
        "type": "message",
        "id": key,
        "parentId": parent,
        "timestamp": "2026-01-01T00:00:01.000Z",
        "message": {"role": "user", "content": text, "timestamp": 1},
    }
    return json.dumps(entry, separators=(",", ":")).encode()


CRAFTED = {
    "bad-lines": b"\n".join(
        [
            b"garbage before the header",
            HEADER,
            _entry("a1", None, "hello"),
            b"{not json",
            b"",
            b"   ",
            _entry("a2", "a1", "caf\xe9 latin-1"),
            b'{"type":"message","id":"a2","parentId":"a1","dup":true}',
            _entry("a3", "a2", "crlf line").replace(b"}", b"}\r", 1)[:-1] + b"}\r",
            b'["an","array"]',
            b"\x00\x01 binary",
        ]
    )
    + b"\n"
    + b'{"type":"message","id":"torn","par',
    "title-slot": TITLE_SLOT + HEADER + b"\n" + _entry("b1", None, "x") + b"\n",
    "no-final-newline": HEADER + b"\n" + _entry("c1", None, "x"),
    "header-only": HEADER + b"\n",
}


@pytest.mark.parametrize("name", sorted(CRAFTED))
def test_crafted_files_round_trip_byte_for_byte(place: Place, tmp_path: Path, name: str) -> None:
    _round_trip(CRAFTED[name], place, tmp_path, name)


def test_import_names_the_session_by_its_id_and_refuses_to_overwrite(
    place: Place, tmp_path: Path
) -> None:
    source = tmp_path / "s.jsonl"
    source.write_bytes(CRAFTED["title-slot"])
    base = place("x").rsplit("#", 1)[0]
    out = ok("import", source, base).output
    assert "#0193a000-0000-7000-8000-000000000001" in out
    target = f"{base}#0193a000-0000-7000-8000-000000000001"
    assert SessionTree.open(target, create=False).title == "Slot title"
    again = invoke("import", source, target)
    assert again.exit_code == 1
    assert "already holds a session" in again.output and "--force" in again.output
    other = tmp_path / "other.jsonl"
    other.write_bytes(CRAFTED["header-only"])
    assert "replaced" in ok("import", other, target, "--force").output
    exported = tmp_path / "e.jsonl"
    ok("export", target, exported)
    assert exported.read_bytes() == CRAFTED["header-only"]
    refused = invoke("export", target, exported)
    assert refused.exit_code == 1 and "already holds a session" in refused.output


def test_bad_sources_and_targets_are_one_line_errors(place: Place, tmp_path: Path) -> None:
    text = tmp_path / "notes.txt"
    text.write_bytes(b'{"just":"json"}\n')
    result = invoke("import", text, place("n"))
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert "notes.txt" in result.output
    missing = invoke("export", place("missing"), tmp_path / "m.jsonl")
    assert missing.exit_code == 1
    # SQLite: the database file was never created; PostgreSQL: the database has no such session
    said = missing.output
    assert "no such SQLite database" in said or "missing' in this database" in said
    assert not (tmp_path / "m.jsonl").exists()
    no_name = invoke("info", place("n").rsplit("#", 1)[0])
    assert no_name.exit_code == 1 and "add #SESSION" in no_name.output


READ_COMMANDS = [
    ["info"],
    ["tree"],
    ["tree", "--fold", "0"],
    ["context"],
    ["context", "--format", "json"],
    ["context", "--format", "openai"],
    ["check"],
    ["prune", "--dry-run"],
    ["compact", "--dry-run"],
]


def _sample(tmp_path: Path) -> Path:
    path = tmp_path / "sample.jsonl"
    build_session(open_session(path))
    return path


@pytest.mark.parametrize("command", READ_COMMANDS, ids=" ".join)
def test_read_commands_print_what_they_print_for_the_file(
    place: Place, tmp_path: Path, command: list[str]
) -> None:
    path = _sample(tmp_path)
    url = place("sample")
    ok("import", path, url)
    from_file = invoke(*command, path)
    from_db = invoke(*command, url)
    assert from_db.exit_code == from_file.exit_code, from_db.output

    def normal(text: str, where: str) -> str:
        # The location is the only difference (info shortens a long one to the table's width).
        text = re.sub(r"(?m)^file .*$", "file", text.replace(where, "<SESSION>"))
        return re.sub(r"[ \t]+", " ", text)

    assert normal(from_db.output, url) == normal(from_file.output, str(path))


def test_write_commands_append_to_the_database(place: Place, tmp_path: Path) -> None:
    path = _sample(tmp_path)
    url = place("writes")
    ok("import", path, url)
    before = SessionTree.open(url, create=False)
    first = before.get_entries()[0]["id"]
    ok("compact", url, "--keep-recent", "2000")
    ok("navigate", url, str(first))
    after = SessionTree.open(url, create=False)
    types = [entry["type"] for entry in after.get_entries()]
    assert len(types) == len(before) + 2
    assert types[-2] == "compaction"
    # What the database holds is a session file: exported, the file store reads the same.
    exported = tmp_path / "after.jsonl"
    ok("export", url, exported)
    assert [e["type"] for e in SessionTree.open(exported).get_entries()] == types


def test_check_repair_of_a_database_session_keeps_backup_and_rejects_beside_it(
    place: Place, tmp_path: Path
) -> None:
    source = tmp_path / "s.jsonl"
    source.write_bytes(CRAFTED["bad-lines"])
    url = place("repair")
    ok("import", source, url)
    assert invoke("check", url).exit_code == 1  # damage found, reported
    result = invoke("check", url, "--repair")
    assert "Traceback" not in result.output
    assert "original saved as" in result.output and ".bak-" in result.output
    # The same repair on the file, for comparison: the database ends as the file does.
    ok("check", source, "--repair")
    assert SessionTree.open(url, create=False).store.read() == source.read_bytes()
    backup = re.search(r"original saved as (\S+)", result.output)
    assert backup is not None
    assert SessionTree.open(backup.group(1), create=False).store.read() == CRAFTED["bad-lines"]
    rejected = SessionTree.open(url, create=False).store.name + ".rejected"
    from contextree.store.url import open_store

    stored = open_store(rejected).read()
    assert b"{not json" in stored and stored.startswith(b"# contextree check --repair")
    assert "nothing to repair" in ok("check", url, "--repair").output


def test_sessions_lists_a_databases_sessions(place: Place, tmp_path: Path) -> None:
    source = tmp_path / "s.jsonl"
    source.write_bytes(CRAFTED["header-only"])
    first, second = place("list-a"), place("list-b")
    ok("import", source, first)
    ok("import", source, second)
    database = first.rsplit("#", 1)[0]
    out = ok("sessions", database).output
    assert first in out and second in out and "1 line, " in out
    listed = json.loads(ok("sessions", database, "--format", "json").output)
    urls = {item["url"] for item in listed}
    assert {first, second} <= urls
    ours = [item for item in listed if item["url"] in (first, second)]  # the server is shared
    assert [item["bytes"] for item in ours] == [len(CRAFTED["header-only"])] * 2
