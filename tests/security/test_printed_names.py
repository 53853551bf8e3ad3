"""Issue 28 points 2, 3 and 5: passwords are masked and names escaped in everything the CLI
prints; a listed URL opens the session it names; a malformed URL is one line."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cli_env import clean_cli_env, invoke, ok, reset_consoles
from contextree.store.masking import mask_passwords
from contextree.store.url import parse_target, session_url

HEADER = (
    '{{"type":"session","version":3,"id":{id},"timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}}\n'
)
ENTRY = (
    '{"type":"message","id":"a0000001","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z",'
    '"message":{"role":"user","content":"hello","timestamp":0}}\n'
)
RAW = ("\x1b", "\x00", "\x07", "\r", "\u202e")


@pytest.fixture(autouse=True)
def clean_cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    clean_cli_env(tmp_path, monkeypatch)
    yield
    reset_consoles()


def _session(tmp_path: Path, session_id: str) -> Path:
    path = tmp_path / "s.jsonl"
    path.write_text(HEADER.format(id=json.dumps(session_id)) + ENTRY)
    return path


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("postgresql://u:PW1234@h:5/db#A", "postgresql://u:***@h:5/db#A"),
        ("postgresql://u@h/db?password=PW1234&x=1", "postgresql://u@h/db?password=***&x=1"),
        (
            "postgres://u@h/d?sslmode=a&password=PW1234#A",
            "postgres://u@h/d?sslmode=a&password=***#A",
        ),
        ("host=h password=PW1234 dbname=d", "host=h password=*** dbname=d"),
        ("at postgresql://:p@w1234@h/db", "at postgresql://:***@h/db"),
        ("postgres://x:PW1234@[::1:bad#A", "postgres://x:***@[::1:bad#A"),
    ],
)
def test_every_spelling_of_a_password_is_masked(text: str, shown: str) -> None:
    assert mask_passwords(text) == shown


@pytest.mark.parametrize(
    "url",
    [
        "postgresql://postgres:PW1234SECRET@127.0.0.1:1/db#A",
        "postgresql://postgres@127.0.0.1:1/db?password=PW1234SECRET#A",
    ],
)
def test_a_connection_error_never_shows_the_password(url: str) -> None:
    pytest.importorskip("psycopg")
    for command in (["info", url], ["sessions", url.split("#")[0]], ["export", url, "x.jsonl"]):
        result = invoke(*command)
        assert result.exit_code == 1, result.output
        assert "PW1234SECRET" not in result.output
        assert "***" in result.output


def test_info_masks_the_password_in_its_file_row(postgres: Any, tmp_path: Path) -> None:
    source = _session(tmp_path, "pw-info")
    base = postgres.url.replace("postgres@", "postgres:PW1234SECRET@")
    by_query = postgres.url + "?password=PW1234SECRET"
    for url in (base, by_query):
        ok("import", source, f"{url}#pw-info", "--force")
        for output in (
            ok("info", f"{url}#pw-info").output,
            ok("sessions", url).output,
            ok("sessions", url, "--format", "json").output,
        ):
            assert "PW1234SECRET" not in output
            assert "***" in output


def test_a_multi_host_url_still_parses() -> None:
    target = parse_target("postgresql://u:PW1234@h1:5432,h2:5433/db?password=PW1234#A")
    assert target.session == "A" and "PW1234" not in target.display


def test_a_malformed_url_is_one_line_naming_it() -> None:
    result = invoke("info", "postgres://x:PW1234SECRET@[::1:bad#A")
    assert result.exit_code == 1
    assert result.output.count("\n") == 1 and "Traceback" not in result.output
    assert "postgres://x:***@[::1:bad" in result.output and "Invalid IPv6 URL" in result.output


@pytest.mark.parametrize("name", ["%41", "a#b", "x\x1b[2J\ny", "Über 😀", "\u202etxt", "a/b?c=1"])
def test_a_printed_url_opens_the_session_it_names(name: str) -> None:
    url = session_url("sqlite:///t.db", name)
    assert parse_target(url).session == name
    assert not any(c in url for c in (*RAW, "\n", " "))


def test_percent_in_a_name_is_encoded_in_the_listing(tmp_path: Path) -> None:
    source = _session(tmp_path, "plain")
    db = f"sqlite://{tmp_path}/s.db"
    ok("import", source, f"{db}#%2541")  # the session named "%41"
    ok("import", source, f"{db}#A")
    listing = json.loads(ok("sessions", db, "--format", "json").stdout)
    by_name = {row["session"]: row["url"] for row in listing}
    assert by_name["%41"].endswith("#%2541")
    assert "#%2541 " in ok("sessions", db).stdout
    assert parse_target(by_name["%41"]).session == "%41"


def test_hostile_names_print_escaped(tmp_path: Path) -> None:
    hostile = "\x1b[2J\nforged: ok\x00\x07\r\u202e"
    source = _session(tmp_path, hostile)
    db = f"sqlite://{tmp_path}/s.db"
    imported = ok("import", source, db).output  # named by the header's id
    listed = ok("sessions", db).output
    url = json.loads(ok("sessions", db, "--format", "json").stdout)[0]["url"]
    info = ok("info", url).output
    tree = ok("tree", url).output
    missing = invoke("info", f"{db}#{hostile.replace('%', '%25')}x")
    for output in (imported, listed, info, tree, missing.output):
        assert not any(c in output for c in RAW), output
        assert "\nforged" not in output
    assert "\\x1b[2J\\nforged" in info
    assert missing.exit_code == 1 and missing.output.count("\n") == 1


def test_navigate_prints_hostile_ids_escaped(tmp_path: Path) -> None:
    path = _session(tmp_path, "nav")
    second = ENTRY.replace(
        '"id":"a0000001","parentId":null', '"id":"\\u001b[2J\\nb","parentId":"a0000001"'
    )
    path.write_text(path.read_text() + second)
    moved = ok("navigate", path, "a0000001").output
    assert not any(c in moved for c in RAW) and "\\x1b[2J\\nb" in moved
