"""Where a session lives, from a path or a URL: the one place that picks a store.

- ``path/to/session.jsonl`` (anything that is not one of the URLs below): a JSONL file.
- ``sqlite://PATH#SESSION``: the session ``SESSION`` in the SQLite database at ``PATH``
  (everything between ``sqlite://`` and ``#``, so ``sqlite:///abs/s.db`` is absolute and
  ``sqlite://rel/s.db`` relative to the working directory).
- ``postgresql://user@host:port/db#SESSION`` (or ``postgres://``): the session in a PostgreSQL
  database; the part before ``#`` is a libpq connection URL.

``SESSION`` is percent-decoded (``%23`` for a ``#`` in a name). A file whose name starts with
``sqlite:`` or ``postgres`` is reached as ``./sqlite:...``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal
from urllib.parse import unquote, urlsplit, urlunsplit

from contextree.errors import SessionFileError
from contextree.store.base import SessionStore

__all__ = ["StoreTarget", "is_store_url", "open_store", "parse_target"]

_URL: Final = re.compile(r"(sqlite|postgres|postgresql)://", re.IGNORECASE)


@dataclass(frozen=True)
class StoreTarget:
    """A parsed session location."""

    kind: Literal["file", "sqlite", "postgres"]
    location: str
    """The file or database path, or the PostgreSQL connection URL (password included)."""
    session: str
    """The ``#SESSION`` part ("" for a file, or when the URL names none)."""
    display: str
    """The location for messages: a PostgreSQL password is masked."""


def is_store_url(target: str | Path) -> bool:
    """Whether ``target`` is a database URL rather than a file path."""
    return isinstance(target, str) and _URL.match(target) is not None


def parse_target(target: str | Path) -> StoreTarget:
    """Split ``target`` into the store kind, its location and the session name."""
    if not is_store_url(target):
        return StoreTarget("file", str(target), "", str(target))
    text = str(target)
    base, _, fragment = text.partition("#")
    session = unquote(fragment)
    scheme = base.split(":", 1)[0].lower()
    if scheme == "sqlite":
        path = unquote(base[len("sqlite://") :])
        if not path:
            raise SessionFileError(text, "names no database file: write sqlite:///path/to/file.db")
        display = f"sqlite://{path}#{session}" if session else f"sqlite://{path}"
        return StoreTarget("sqlite", path, session, display)
    display = _masked(base) + (f"#{session}" if session else "")
    return StoreTarget("postgres", base, session, display)


def _masked(url: str) -> str:
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.hostname or ""
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    user = f"{parts.username}:***@" if parts.username else ":***@"
    return urlunsplit(parts._replace(netloc=user + host))


def open_store(
    target: str | Path,
    *,
    fsync: bool = False,
    lock_timeout: float = 30.0,
    default_session: str | None = None,
) -> SessionStore:
    """The store of ``target`` (a file path or a URL, see the module docstring).

    ``default_session`` names the session when a URL has no ``#SESSION`` part (import uses
    the session's own id); without it such a URL is an error.
    """
    from contextree.store.jsonl import JsonlFileStore

    where = parse_target(target)
    if where.kind == "file":
        return JsonlFileStore(where.location, fsync=fsync, lock_timeout=lock_timeout)
    session = where.session or default_session or ""
    display = where.display if where.session else f"{where.display}#{session}"
    if not session:
        raise SessionFileError(where.display, "names no session: add #SESSION to the URL")
    if where.kind == "sqlite":
        from contextree.store.sqlite import SqliteStore

        return SqliteStore(
            where.location, session, fsync=fsync, lock_timeout=lock_timeout, name=display
        )
    from contextree.store.postgres import PostgresStore

    return PostgresStore(where.location, session, lock_timeout=lock_timeout, name=display)
