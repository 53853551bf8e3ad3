"""JavaScript's ``JSON.stringify``, byte for byte, for the values a session holds.

pi measures and renders tool-call arguments with ``JSON.stringify`` (token estimates,
pi-behaviour.md §4.1; serialized conversations, §7.1; ``Command exited with code N``), so
contextree writes JSON the way JavaScript does: compact, non-ASCII kept, numbers as JavaScript
prints them, lone surrogates escaped and object keys in JavaScript's own-key order.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any, Final

import msgspec

__all__ = ["js_object_entries", "js_stringify"]

_MAX_ARRAY_INDEX: Final = 2**32 - 2
_MAX_SAFE_INTEGER: Final = 2**53
# A plain character class is scanned far faster than the lookarounds of _LONE_SURROGATE.
_ANY_SURROGATE = re.compile("[\ud800-\udfff]")
_LONE_SURROGATE = re.compile(
    "[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]"
)


def js_object_entries(obj: Mapping[str, Any]) -> list[tuple[str, Any]]:
    """The items of ``obj`` in JavaScript's own-key order (``Object.entries``).

    A JSON object parsed by JavaScript lists its array-index keys (``"0"`` .. ``"4294967294"``,
    no leading zeros) first, in ascending numeric order, then the other keys in insertion order.
    ``JSON.stringify`` and pi's tool-call rendering follow that order.
    """
    items = list(obj.items())
    indexed = [item for item in items if _is_array_index(item[0])]
    if not indexed:
        return items
    indexed.sort(key=lambda item: int(item[0]))
    return indexed + [item for item in items if not _is_array_index(item[0])]


def _is_array_index(key: object) -> bool:
    if not (isinstance(key, str) and key.isascii() and key.isdigit()):
        return False
    if len(key) > 1 and key[0] == "0":
        return False
    return int(key) <= _MAX_ARRAY_INDEX


def _js_float(x: float) -> str:
    """JavaScript ``Number.prototype.toString`` of a finite float."""
    if x == 0:
        return "0"  # also -0
    sign = "-" if x < 0 else ""
    # repr gives the shortest round-trip digits, which is what JavaScript prints too; only the
    # placement of the decimal point and the exponent format differ.
    mantissa, _, exp_text = repr(abs(x)).partition("e")
    int_part, _, frac_part = mantissa.partition(".")
    all_digits = int_part + frac_part
    stripped = all_digits.lstrip("0")
    point = len(int_part) + (int(exp_text) if exp_text else 0) - (len(all_digits) - len(stripped))
    digits = stripped.rstrip("0")
    k = len(digits)
    if k <= point <= 21:
        return sign + digits + "0" * (point - k)
    if 0 < point <= 21:
        return sign + digits[:point] + "." + digits[point:]
    if -6 < point <= 0:
        return sign + "0." + "0" * -point + digits
    exponent = point - 1
    exp_str = ("e+" if exponent >= 0 else "e-") + str(abs(exponent))
    if k == 1:
        return sign + digits + exp_str
    return sign + digits[0] + "." + digits[1:] + exp_str


def _js_number(value: int | float) -> str:
    if isinstance(value, int):
        if -_MAX_SAFE_INTEGER <= value <= _MAX_SAFE_INTEGER:
            return str(value)
        # JavaScript holds every number as a double: round as JSON.parse would.
        try:
            value = float(value)
        except OverflowError:
            return "null"
    if math.isnan(value) or math.isinf(value):
        return "null"
    return _js_float(value)


def _js_string(s: str) -> str:
    # The stdlib escaper writes exactly JSON.stringify's escapes (\" \\ \b \f \n \r \t, other
    # controls as lowercase \u00xx, everything else literal) except for lone surrogates, which
    # JavaScript escapes since ES2019 and the stdlib copies verbatim.
    return _escape_lone_surrogates(json.encoder.encode_basestring(s))


def js_stringify(value: object) -> str:
    """Exactly what JavaScript's ``JSON.stringify(value)`` returns for a JSON value.

    Compact, non-ASCII kept, numbers formatted as JavaScript prints them (``1.0`` -> ``1``,
    ``1e21`` -> ``1e+21``, ``1e-7`` -> ``1e-7``), NaN and infinities as ``null``, lone
    surrogates escaped, object keys in JavaScript's own-key order (:func:`js_object_entries`).

    Raises:
        TypeError: ``value`` holds something JSON has no spelling for (or a non-string key).
    """
    if type(value) is dict and _is_flat_plain(value):
        try:
            return _compact_json(value).decode()
        except UnicodeEncodeError:
            pass  # a lone surrogate: JavaScript escapes it, the general writer below does too
    parts: list[str] = []
    _write(value, parts, set())
    return "".join(parts)


# Tool-call arguments are nearly always one flat object of strings, booleans and safe integers.
# For those msgspec's encoder writes exactly what JSON.stringify does (same escapes, insertion
# order, which is JavaScript's order when no key is an array index) and refuses lone surrogates;
# it is many times faster than _write.
_compact_json = msgspec.json.Encoder().encode


def _is_flat_plain(obj: dict[Any, Any]) -> bool:
    for key, item in obj.items():
        if type(key) is not str or key[:1].isdigit():
            return False
        kind = type(item)
        if kind is str or kind is bool or item is None:
            continue
        if kind is int and -_MAX_SAFE_INTEGER <= item <= _MAX_SAFE_INTEGER:
            continue
        return False
    return True


def _escape_lone_surrogates(text: str) -> str:
    # JavaScript escapes lone surrogates since ES2019; the stdlib copies them verbatim.
    if text.isascii() or _ANY_SURROGATE.search(text) is None:
        return text
    return _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def _write(value: object, parts: list[str], active: set[int]) -> None:
    if value is None:
        parts.append("null")
    elif value is True:
        parts.append("true")
    elif value is False:
        parts.append("false")
    elif isinstance(value, str):
        parts.append(_js_string(value))
    elif isinstance(value, int | float):
        parts.append(_js_number(value))
    elif isinstance(value, list | tuple):
        _enter(value, active)
        parts.append("[")
        for i, item in enumerate(value):
            if i:
                parts.append(",")
            _write(item, parts, active)
        parts.append("]")
        active.discard(id(value))
    elif isinstance(value, dict):
        _enter(value, active)
        parts.append("{")
        for i, (key, item) in enumerate(js_object_entries(value)):
            if not isinstance(key, str):
                raise TypeError(f"JSON object keys must be strings, found {type(key).__name__}")
            if i:
                parts.append(",")
            parts.append(_js_string(key))
            parts.append(":")
            _write(item, parts, active)
        parts.append("}")
        active.discard(id(value))
    else:
        raise TypeError(f"{type(value).__name__} is not a JSON value")


def _enter(container: object, active: set[int]) -> None:
    if id(container) in active:
        raise TypeError("cannot stringify a value that contains itself")
    active.add(id(container))
