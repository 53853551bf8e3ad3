"""Where a session lives, from a path or a URL: the one place that picks a store.

- ``path/to/session.jsonl`` (anything that is not one of the URLs below): a JSONL file.
- ``sqlite://PATH#SESSION``: the session ``SESSION`` in the SQLite database at ``PATH``
  (everything between ``sqlite://`` and ``#``, so ``sqlite:///abs/s.db`` is absolute and
  ``sqlite://rel/s.db`` relative to the working directory).
- ``postgresql://user@host:port/db#SESSION`` (or ``postgres://``): the session in a PostgreSQL
  database; the part before ``#`` is a libpq connection URL.

``SESSION`` is percent-decoded (``%23`` for a ``#`` in a name), and every URL we print
percent-encodes it again (:func:`session_url`), so a listed URL opens the session it names. A
name is at most :data:`MAX_SESSION_NAME` characters in every store. A file whose name starts with
``sqlite:`` or ``postgres`` is reached as ``./sqlite:...``.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal
from urllib.parse import quote, unquote, urlsplit

from contextree.errors import SessionFileError
from contextree.store.base import SessionStore
from contextree.store.masking import mask_passwords

__all__ = [
    "DERIVED_NAME_ROOM",
    "MAX_SESSION_NAME",
    "StoreTarget",
    "check_session_name",
    "is_store_url",
    "open_store",
    "parse_target",
    "session_url",
]

MAX_SESSION_NAME: Final = 500
"""The longest session name (in characters) of a database store. PostgreSQL announces each
change with a NOTIFY payload of at most 8,000 bytes holding the JSON-escaped name, and one
character escapes to at most 12 bytes (an emoji as two ``\\uXXXX``); SQLite takes the same
limit so that a session can move between the two."""

DERIVED_NAME_ROOM: Final = 32
"""What ``check --repair`` may add to a name for its backup and rejected lines
(``.bak-20260101T000000Z-999``, ``.rejected-1000``): such names may be this much longer."""

# Kept as they are in a printed fragment: RFC 3986's fragment characters, except "%".
_FRAGMENT_SAFE: Final = "/?:@!$&'()*+,;=-._~"
# Outside ASCII, escaped: controls, format (bidi overrides), separators, surrogates, unassigned.
_ESCAPED_CATEGORIES: Final = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zs", "Zl", "Zp"})

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
        location = f"sqlite://{path}"
        return StoreTarget("sqlite", path, session, session_url(location, session))
    location = mask_passwords(base)
    try:
        # Splitting is the check (unbalanced IPv6 brackets); the port is left to libpq, which
        # also takes several hosts (h1:5432,h2:5433) that urllib would call a bad port.
        urlsplit(base)
    except ValueError as exc:
        raise SessionFileError(location, f"is not a valid PostgreSQL URL ({exc})") from None
    return StoreTarget("postgres", base, session, session_url(location, session))


def session_url(location: str, session: str) -> str:
    """``location#SESSION`` with the name percent-encoded (``%`` as ``%25``, ``#`` as ``%23``,
    spaces, control and format characters as UTF-8 escapes; letters of any script stay), so
    that :func:`parse_target` of the result names the same session; ``location`` alone for no
    session."""
    if not session:
        return location
    return f"{location}#{''.join(map(_fragment_char, session))}"


def _fragment_char(char: str) -> str:
    if char in _FRAGMENT_SAFE or (char.isascii() and char.isalnum()):
        return char
    if not char.isascii() and unicodedata.category(char) not in _ESCAPED_CATEGORIES:
        return char
    return quote(char, safe="", errors="surrogatepass")


def check_session_name(name: str, where: str, *, derived: bool = False) -> None:
    """Refuse a session name longer than :data:`MAX_SESSION_NAME` characters (any store);
    ``derived``: a name made from a session's (a repair's backup), allowed
    :data:`DERIVED_NAME_ROOM` more."""
    if len(name) > MAX_SESSION_NAME + (DERIVED_NAME_ROOM if derived else 0):
        raise SessionFileError(
            where,
            f"the session name is {len(name):,} characters long; the limit is "
            f"{MAX_SESSION_NAME} characters",
        )


def open_store(
    target: str | Path,
    *,
    fsync: bool = False,
    lock_timeout: float = 30.0,
    default_session: str | None = None,
    derived_name: bool = False,
) -> SessionStore:
    """The store of ``target`` (a file path or a URL, see the module docstring).

    ``default_session`` names the session when a URL has no ``#SESSION`` part (import uses
    the session's own id); without it such a URL is an error. ``derived_name``: the name was
    made from another session's (see :func:`check_session_name`).
    """
    from contextree.store.jsonl import JsonlFileStore

    where = parse_target(target)
    if where.kind == "file":
        return JsonlFileStore(where.location, fsync=fsync, lock_timeout=lock_timeout)
    session = where.session or default_session or ""
    display = where.display if where.session else session_url(where.display, session)
    if not session:
        raise SessionFileError(where.display, "names no session: add #SESSION to the URL")
    check_session_name(session, display.partition("#")[0], derived=derived_name)
    if where.kind == "sqlite":
        from contextree.store.sqlite import SqliteStore

        return SqliteStore(
            where.location, session, fsync=fsync, lock_timeout=lock_timeout, name=display
        )
    from contextree.store.postgres import PostgresStore

    return PostgresStore(where.location, session, lock_timeout=lock_timeout, name=display)
