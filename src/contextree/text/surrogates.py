"""Text that UTF-8 can encode: a lone surrogate (U+D800-U+DFFF on its own) can be in a string
built in memory or decoded from JSON (``"\\ud800"``) - never in one read from a session file,
which decoding makes well formed - and neither the byte-level searches (the automata that scan
for words) nor a UTF-8 request or reply can take it."""

from __future__ import annotations

from typing import Any

__all__ = ["well_formed", "without_lone_surrogates"]


def without_lone_surrogates(text: str) -> str:
    """``text`` with each lone surrogate as U+FFFD (a high and a low one side by side are the
    character they make); ``text`` itself when it has none."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return text


def well_formed(value: Any) -> Any:
    """``value`` with :func:`without_lone_surrogates` applied to its strings (in lists, tuples
    and dict values and keys too); other values as they are."""
    if isinstance(value, str):
        return without_lone_surrogates(value)
    if isinstance(value, dict):
        return {well_formed(key): well_formed(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(well_formed(item) for item in value)
    return value
