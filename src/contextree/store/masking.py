"""Passwords out of every message: the one masking function for URLs and connection strings.

A PostgreSQL location may carry its password in the URL's user part
(``postgresql://user:PW@host/db``), in a query parameter (``?password=PW``, ``&sslpassword=PW``)
or in a libpq key/value string (``password=PW``); a driver's error may quote any of them.
:func:`mask_passwords` replaces each password with ``***`` wherever it stands in a text, so a
message, a listed URL or a table row can be printed as it is.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Final

__all__ = ["MASK", "mask_passwords", "passwords_in"]

MASK: Final = "***"

# scheme://NETLOC, where the netloc ends at the first "/", "?", "#" or white space.
_NETLOC: Final = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)([^/?#\s]*)")
# password=VALUE in a query string or a libpq key/value string; a quoted value may hold spaces.
_PARAMETER: Final = re.compile(
    r"(?i)((?:^|(?<=[?&;\s]))(?:ssl)?password\s*=\s*)('(?:[^'\\]|\\.)*'?|[^&#\s]*)"
)


def _mask_netloc(found: re.Match[str]) -> str:
    scheme, netloc = found.group(1), found.group(2)
    user_part, at, host = netloc.rpartition("@")
    if not at or ":" not in user_part:
        return found.group(0)
    user = user_part.split(":", 1)[0]
    return f"{scheme}{user}:{MASK}@{host}"


def mask_passwords(text: str, *, known: Iterable[str] = ()) -> str:
    """``text`` with every password of a URL or a connection string replaced by ``***``.

    ``known`` are passwords to mask wherever they appear verbatim (a driver may quote one
    outside any URL); values shorter than 4 characters are left alone, since masking them
    would garble the rest of the text more than it protects.
    """
    masked = _PARAMETER.sub(lambda m: m.group(1) + MASK, _NETLOC.sub(_mask_netloc, text))
    for secret in known:
        if len(secret) >= 4:
            masked = masked.replace(secret, MASK)
    return masked


def passwords_in(url: str) -> list[str]:
    """The passwords written in ``url`` (user part and parameters), decoded and as written."""
    from urllib.parse import unquote

    found: list[str] = []
    for netloc in _NETLOC.finditer(url):
        user_part, at, _ = netloc.group(2).rpartition("@")
        if at and ":" in user_part:
            found.append(user_part.split(":", 1)[1])
    found.extend(m.group(2).strip("'") for m in _PARAMETER.finditer(url))
    return [value for raw in found for value in {raw, unquote(raw)} if value]
