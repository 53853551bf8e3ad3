"""The one error for a session that is not where a command looks: what exactly is missing.

Every command that reads an existing session (``info``, ``check --repair``, ``import``,
``export``, ``sessions URL``...) raises this, so a directory, a missing database and a missing
session inside an existing database each read the same way everywhere.
"""

from __future__ import annotations

from pathlib import Path

from contextree.errors import SessionFileError
from contextree.store.sqlite_file import missing_database
from contextree.store.url import parse_target

__all__ = ["missing_database", "missing_session"]


def missing_session(target: str | Path) -> SessionFileError:
    """Why there is no session at ``target`` (a file path or a store URL)."""
    where = parse_target(target)
    if where.kind == "file":
        file = Path(where.location)
        if file.is_dir():
            return SessionFileError(file, "is a directory, not a session file")
        return SessionFileError(file, "no such session file")
    base = where.display.split("#", 1)[0]
    if where.kind == "sqlite":
        problem = missing_database(where.location, where.display)
        if problem is not None:
            return problem
    return SessionFileError(
        where.display,
        f"no session {where.session!r} in this database (contextree sessions {base} lists them)",
    )
