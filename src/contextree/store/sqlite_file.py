"""Whether an SQLite database file is where a URL says.

Apart from :mod:`contextree.store.missing` (which parses URLs, and so reaches the stores) so
that the SQLite store can ask it without an import cycle.
"""

from __future__ import annotations

from pathlib import Path

from contextree.errors import SessionFileError

__all__ = ["missing_database"]


def missing_database(path: str | Path, shown: str) -> SessionFileError | None:
    """The error when the SQLite database file ``path`` is not there, or ``None`` when it is
    a file. ``shown`` (the URL as given) names it: it holds the path."""
    file = Path(path)
    if file.is_dir():
        return SessionFileError(shown, "is a directory, not an SQLite database")
    if not file.is_file():
        return SessionFileError(shown, "no such SQLite database")
    return None
