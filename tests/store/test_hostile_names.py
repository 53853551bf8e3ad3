"""Hostile session names on both databases (issue 28): every name round-trips byte for byte,
is listed under its own name, and the URL contextree prints for it opens it again."""

from __future__ import annotations

from pathlib import Path

import pytest

from contextree.store.url import MAX_SESSION_NAME, open_store, parse_target, session_url

NAMES = [
    "%41", "%", "%%25", "#", "a#b", "a?b=c&d", "a/b", "../up", "\x1b[2J", "a\nb", "\r\n", "\t",
    " ", " lead", "trail ", "'", '"', "\\", "😀", "\u202etxt", "名前", "a.rejected", "\x7f",
    "n" * MAX_SESSION_NAME,
]  # fmt: skip
DATA = b'{"type":"session","version":3,"id":"h","timestamp":"t","cwd":"/w"}\n\xff\x00 raw\n'


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_hostile_names_round_trip_and_list_as_urls_that_open_them(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    if kind == "postgres":
        base = request.getfixturevalue("postgres").url
        database = base.rsplit("/", 1)[0] + "/" + _fresh_database(base, tmp_path.name)
    else:
        database = f"sqlite://{tmp_path}/names.db"
    for name in NAMES:
        with open_store(session_url(database, name)).transaction() as txn:
            txn.replace(DATA + name.encode())
    if kind == "postgres":
        from contextree.store.postgres import list_postgres_sessions

        listed = [row[0] for row in list_postgres_sessions(database, database)]
    else:
        from contextree.store.sqlite import list_sqlite_sessions

        listed = [row[0] for row in list_sqlite_sessions(f"{tmp_path}/names.db")]
    assert sorted(listed) == sorted(NAMES)
    for name in listed:
        url = session_url(database, name)
        assert parse_target(url).session == name
        assert open_store(url).read() == DATA + name.encode()


def _fresh_database(url: str, name: str) -> str:
    import psycopg

    database = "names_" + "".join(c for c in name.lower() if c.isalnum())[-40:]
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{database}"')
        conn.execute(f'CREATE DATABASE "{database}"')
    return database
