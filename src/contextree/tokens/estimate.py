"""Token estimates for messages, with pi's arithmetic (pi-behaviour.md §4.1).

pi estimates a message as ``ceil(chars / 4)``, where ``chars`` is the JavaScript ``.length`` of
a few strings taken from the message (UTF-16 code units) plus 4800 per image in a tool result
or custom message. :class:`PiEstimator` reproduces that exactly, including ``JSON.stringify``
of tool-call arguments (:func:`js_stringify`). :class:`Utf8Estimator` counts the same strings in
UTF-8 bytes instead, which undercounts Chinese and Japanese far less (DESIGN "Token estimators").

Estimates never raise: a field that is missing or has the wrong type counts 0.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping
from typing import Any, Final, Protocol

import msgspec

from contextree.entries.types import AgentMessage

__all__ = [
    "IMAGE_CHARS",
    "PiEstimator",
    "TokenEstimator",
    "Utf8Estimator",
    "estimate_tokens",
    "get_estimator",
    "js_object_entries",
    "js_stringify",
    "utf16_len",
]

IMAGE_CHARS: Final = 4800
"""What pi charges for one image in a tool result or custom message (1200 tokens)."""

_MAX_ARRAY_INDEX: Final = 2**32 - 2
_MAX_SAFE_INTEGER: Final = 2**53
# A plain character class is scanned far faster than the lookarounds of _LONE_SURROGATE.
_ANY_SURROGATE = re.compile("[\ud800-\udfff]")
_LONE_SURROGATE = re.compile(
    "[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]"
)


def utf16_len(s: str) -> int:
    """The length of ``s`` in UTF-16 code units, i.e. JavaScript's ``s.length``."""
    if s.isascii():
        return len(s)
    # Characters outside the BMP take two units; a lone surrogate takes one.
    return len(s.encode("utf-16-le", "surrogatepass")) // 2


def _utf8_len(s: str) -> int:
    if s.isascii():
        return len(s)
    return len(s.encode("utf-8", "surrogatepass"))


# --- JSON.stringify -------------------------------------------------------------------------


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


# --- estimators -----------------------------------------------------------------------------


class TokenEstimator(Protocol):
    """Estimates how many tokens a message or a text takes in a model's context."""

    name: str
    """The name ``tokens.estimator`` selects it by (``"pi"``, ``"utf8"``)."""

    def estimate(self, message: AgentMessage) -> int:
        """Tokens of one message (any role; unknown roles count 0). Never raises."""
        ...

    def count_text(self, text: str) -> int:
        """Tokens of a plain text."""
        ...


class _QuarterEstimator:
    """``ceil(units / 4)`` over the strings pi counts, each measured by ``_measure``."""

    name: str
    _measure: Callable[[str], int]

    def estimate(self, message: AgentMessage) -> int:
        return _ceil_quarter(_message_size(message, self._measure))

    def count_text(self, text: str) -> int:
        return _ceil_quarter(self._measure(text))


class PiEstimator(_QuarterEstimator):
    """pi's estimator: ``ceil(chars / 4)`` over UTF-16 code units, exactly as pi 0.73.1."""

    name: str = "pi"
    _measure = staticmethod(utf16_len)


class Utf8Estimator(_QuarterEstimator):
    """``ceil(bytes / 4)`` over the UTF-8 bytes of the strings pi counts (images as pi)."""

    name: str = "utf8"
    _measure = staticmethod(_utf8_len)


_ESTIMATORS: Final[dict[str, Callable[[], TokenEstimator]]] = {
    "pi": PiEstimator,
    "utf8": Utf8Estimator,
}
_PI: Final = PiEstimator()


def get_estimator(name: str) -> TokenEstimator:
    """The estimator named ``name`` (``"pi"`` or ``"utf8"``).

    Raises:
        ValueError: no estimator has that name.
    """
    factory = _ESTIMATORS.get(name)
    if factory is None:
        choices = ", ".join(f'"{n}"' for n in _ESTIMATORS)
        raise ValueError(f'unknown token estimator "{name}"; expected one of {choices}')
    return factory()


def estimate_tokens(message: AgentMessage) -> int:
    """pi's token estimate of one message (§4.1): ``ceil(chars / 4)`` over UTF-16 units."""
    return _PI.estimate(message)


def _ceil_quarter(size: int) -> int:
    return (size + 3) // 4


def _message_size(message: object, measure: Callable[[str], int]) -> int:
    """The units pi counts for ``message`` (§4.1), each string measured with ``measure``."""
    if not isinstance(message, dict):
        return 0
    match message.get("role"):
        case "user":
            return _content_size(message.get("content"), measure, images=False)
        case "assistant":
            return _assistant_size(message.get("content"), measure)
        # pi counts custom messages (DESIGN decision 7); "hookMessage" is their pre-v3 name,
        # which pi's migration renames to "custom" before estimating.
        case "toolResult" | "custom" | "hookMessage":
            return _content_size(message.get("content"), measure, images=True)
        case "bashExecution":
            return _str_size(message.get("command"), measure) + _str_size(
                message.get("output"), measure
            )
        case "branchSummary" | "compactionSummary":
            return _str_size(message.get("summary"), measure)
        case _:
            return 0


def _str_size(value: object, measure: Callable[[str], int]) -> int:
    return measure(value) if isinstance(value, str) else 0


def _content_size(content: object, measure: Callable[[str], int], *, images: bool) -> int:
    if isinstance(content, str):
        return measure(content)
    if not isinstance(content, list):
        return 0
    size = 0
    # Estimating runs over every message of a context: no helper call per string.
    for block in content:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text":
            text = block.get("text")
            if isinstance(text, str):
                size += measure(text)
        elif kind == "image" and images:
            size += IMAGE_CHARS
    return size


def _assistant_size(content: object, measure: Callable[[str], int]) -> int:
    if not isinstance(content, list):
        return 0
    size = 0
    for block in content:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text":
            text = block.get("text")
        elif kind == "thinking":
            text = block.get("thinking")
        elif kind == "toolCall":
            text = block.get("name")
            if "arguments" in block:
                size += _arguments_size(block["arguments"], measure)
        else:
            continue
        if isinstance(text, str):
            size += measure(text)
    return size


def _arguments_size(arguments: object, measure: Callable[[str], int]) -> int:
    try:
        return measure(js_stringify(arguments))
    except (TypeError, RecursionError):
        return 0
