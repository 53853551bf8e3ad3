"""Token estimates for messages, with pi's arithmetic (pi-behaviour.md §4.1).

pi estimates a message as ``ceil(chars / 4)``, where ``chars`` is the JavaScript ``.length`` of
a few strings taken from the message (UTF-16 code units) plus 4800 per image in a tool result
or custom message. :class:`PiEstimator` reproduces that exactly, including ``JSON.stringify``
of tool-call arguments (:mod:`contextree.entries.js_json`). :class:`Utf8Estimator` counts the
same strings in UTF-8 bytes instead, which undercounts Chinese and Japanese far less (DESIGN
"Token estimators").

Estimates never raise: a field that is missing or has the wrong type counts 0.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final, Protocol, assert_never

from contextree.entries.js_json import js_stringify
from contextree.entries.types import AgentMessage, StoredMessage, known_block, known_message

__all__ = [
    "IMAGE_CHARS",
    "PiEstimator",
    "TokenEstimator",
    "Utf8Estimator",
    "estimate_tokens",
    "get_estimator",
    "utf16_len",
]

IMAGE_CHARS: Final = 4800
"""What pi charges for one image in a tool result or custom message (1200 tokens)."""


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


# --- estimators -----------------------------------------------------------------------------


class TokenEstimator(Protocol):
    """Estimates how many tokens a message or a text takes in a model's context."""

    name: str
    """The name ``tokens.estimator`` selects it by (``"pi"``, ``"utf8"``)."""

    def estimate(self, message: Mapping[str, Any]) -> int:
        """Tokens of one message (any role; unknown roles count 0). Never raises.

        Any message mapping: an :data:`AgentMessage` or one narrowed by a guard."""
        ...

    def count_text(self, text: str) -> int:
        """Tokens of a plain text."""
        ...


class _QuarterEstimator:
    """``ceil(units / 4)`` over the strings pi counts, each measured by ``_measure``."""

    name: str
    _measure: Callable[[str], int]

    def estimate(self, message: Mapping[str, Any]) -> int:
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


def estimate_tokens(message: StoredMessage | AgentMessage) -> int:
    """pi's token estimate of one message (§4.1): ``ceil(chars / 4)`` over UTF-16 units."""
    return _PI.estimate(message)


def _ceil_quarter(size: int) -> int:
    return (size + 3) // 4


def _message_size(message: object, measure: Callable[[str], int]) -> int:
    """The units pi counts for ``message`` (§4.1), each string measured with ``measure``."""
    known = known_message(message)
    if known is None:
        return 0  # not an object, or a role this format does not define: counts 0, as in pi
    match known["role"]:
        case "user":
            return _content_size(known.get("content"), measure, images=False)
        case "assistant":
            return _assistant_size(known.get("content"), measure)
        # pi counts custom messages (DESIGN decision 7); "hookMessage" is their pre-v3 name,
        # which pi's migration renames to "custom" before estimating.
        case "toolResult" | "custom" | "hookMessage":
            return _content_size(known.get("content"), measure, images=True)
        case "bashExecution":
            return _str_size(known.get("command"), measure) + _str_size(
                known.get("output"), measure
            )
        case "branchSummary" | "compactionSummary":
            return _str_size(known.get("summary"), measure)
        case "developer" | "pythonExecution" | "fileMention":
            return 0  # the fork's estimator has no case for these (§4.1, a quirk kept)
        case _:
            assert_never(known)


def _str_size(value: object, measure: Callable[[str], int]) -> int:
    return measure(value) if isinstance(value, str) else 0


def _content_size(content: object, measure: Callable[[str], int], *, images: bool) -> int:
    if isinstance(content, str):
        return measure(content)
    if not isinstance(content, list):
        return 0
    size = 0
    for item in content:
        block = known_block(item)
        if block is None:
            continue  # not an object, or a block type this format does not define: counts 0
        # Estimating runs over every message of a context: no helper call per string.
        match block["type"]:
            case "text":
                text = block.get("text")
                if isinstance(text, str):
                    size += measure(text)
            case "image":
                size += IMAGE_CHARS if images else 0
            case "thinking" | "redactedThinking" | "toolCall":
                pass  # not content a user message or a tool result carries: counts 0
            case _:
                assert_never(block)
    return size


def _assistant_size(content: object, measure: Callable[[str], int]) -> int:
    if not isinstance(content, list):
        return 0
    size = 0
    for item in content:
        block = known_block(item)
        if block is None:
            continue  # not an object, or a block type this format does not define: counts 0
        match block["type"]:
            case "text":
                text = block.get("text")
            case "thinking":
                text = block.get("thinking")
            case "toolCall":
                text = block.get("name")
                if "arguments" in block:
                    size += _arguments_size(block["arguments"], measure)
            case "image" | "redactedThinking":
                continue  # pi counts neither in an assistant message
            case _:
                assert_never(block)
        if isinstance(text, str):
            size += measure(text)
    return size


def _arguments_size(arguments: object, measure: Callable[[str], int]) -> int:
    try:
        return measure(js_stringify(arguments))
    except (TypeError, RecursionError):
        return 0
