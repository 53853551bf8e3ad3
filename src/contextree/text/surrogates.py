"""Text that UTF-8 can encode: a lone surrogate (U+D800-U+DFFF on its own) can be in a string
built in memory - never in one read from a file, which decoding makes well formed - and the
byte-level searches (the automata that scan for words) cannot take it."""

from __future__ import annotations

import re
from typing import Any, Final

__all__ = ["well_formed"]

_LONE_SURROGATE: Final = re.compile("[\ud800-\udfff]")


def well_formed(value: Any) -> Any:
    """``value`` with every lone surrogate in its strings (in lists, tuples and dict values
    and keys too) replaced by U+FFFD, one code point for one; other values as they are."""
    if isinstance(value, str):
        return _LONE_SURROGATE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {well_formed(key): well_formed(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(well_formed(item) for item in value)
    return value
