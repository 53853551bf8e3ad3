"""Control characters written as escapes, for text printed to a terminal or a log: a name,
an id, a path or a request line that holds them could otherwise drive the terminal of whoever
reads it (clear the screen, set the window title) or forge another line."""

from __future__ import annotations

import re
from typing import Final

__all__ = ["escaped"]

_UNSAFE_IN_NAMES: Final = re.compile(
    "[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]"
)
"""Characters a name or id must not print raw: C0 (newline and tab too), DEL, C1, line and
paragraph separators and the bidirectional marks and overrides."""

_ESCAPES: Final = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def escaped(text: str) -> str:
    """``text`` (a session name, an id, a path, a URL, a message naming one of them) with each
    control character written as an escape (``\\x1b``, ``\\n``, ``\\u202e``): one line that
    cannot drive the terminal or forge another line, and still shows that the character is
    there. Every name or id the CLI prints, and every request line ``serve`` logs, goes through
    this function."""

    def escape(found: re.Match[str]) -> str:
        char = found.group(0)
        if char in _ESCAPES:
            return _ESCAPES[char]
        return f"\\x{ord(char):02x}" if ord(char) < 0x100 else f"\\u{ord(char):04x}"

    return _UNSAFE_IN_NAMES.sub(escape, text)
