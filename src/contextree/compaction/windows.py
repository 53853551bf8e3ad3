"""Summarize a conversation larger than the summarizer's window, one window at a time.

pi sends the whole serialized conversation in one request; a local model with an 8k window
then answers ``400 ... maximum context length is 8192 tokens``. Here the conversation is cut
at message boundaries into windows that fit the model's context (when it is known) and each
window *updates* the running summary with the anchored update prompt, as one compaction
after another would. A window the server still rejects as too long is halved and retried, and
every later window is kept to the size that worked, so an unknown window is found from the
server's own reply.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Final

from contextree.compaction.serialize import serialize_conversation
from contextree.entries.types import LlmMessage
from contextree.errors import CompactionError, ModelError
from contextree.llm.errors import classify
from contextree.tokens.estimate import utf16_len

__all__ = ["MIN_WINDOW_CHARS", "WindowPlan", "conversation_pieces", "summarize_in_windows"]

MIN_WINDOW_CHARS: Final = 400
"""A window is never halved below this: a model that cannot read 100 tokens of conversation
next to its prompt cannot summarize at all."""
_SAFETY: Final = 0.7
"""Share of the computed room actually used: chars/4 undercounts code and non-English text for
many tokenizers (SmolLM2's counts about 1.3x chars/4 on our sessions)."""
_CHARS_PER_TOKEN: Final = 4

Summarize = Callable[[str, str | None], Awaitable[str]]
"""Summarize one window: (conversation text, running summary or None) -> summary."""


@dataclass(frozen=True, slots=True)
class WindowPlan:
    """How much conversation one request may carry (``None``: no limit known)."""

    max_chars: int | None

    @classmethod
    def for_window(
        cls, context_window: int | None, *, fixed_tokens: int, output_tokens: int
    ) -> WindowPlan:
        """The plan for a model with ``context_window`` tokens.

        ``fixed_tokens`` is what every request carries besides the conversation (system
        prompt, instructions); ``output_tokens`` the summary's budget, counted twice: once for
        the answer and once for the running summary sent back in the next window.

        Raises:
            CompactionError: the window cannot hold even a minimal conversation.
        """
        if context_window is None or context_window <= 0:
            return cls(None)
        room = context_window - fixed_tokens - 2 * output_tokens
        max_chars = int(room * _SAFETY) * _CHARS_PER_TOKEN
        if max_chars < MIN_WINDOW_CHARS:
            raise CompactionError(
                f"Summarization failed: the summarizer's context window ({context_window} "
                f"tokens) has no room for the conversation next to the prompt and a "
                f"{output_tokens}-token summary; lower compaction.summaryTokens or use a "
                "model with a larger window"
            )
        return cls(max_chars)


def conversation_pieces(messages: Sequence[LlmMessage]) -> list[str]:
    """Each message's serialized text (pi-behaviour §7.1), empty ones left out.

    Joined with a blank line they are exactly ``serialize_conversation(messages)``.
    """
    pieces = (serialize_conversation([message]) for message in messages)
    return [piece for piece in pieces if piece]


async def summarize_in_windows(
    pieces: Sequence[str],
    summarize: Summarize,
    *,
    plan: WindowPlan,
    previous_summary: str | None = None,
) -> tuple[str, int]:
    """Fold ``pieces`` into one summary, window by window; returns (summary, windows used).

    The first window starts from ``previous_summary`` (``None``: the initial prompt); each
    later window updates the summary of the ones before it.

    Raises:
        CompactionError: a window of :data:`MIN_WINDOW_CHARS` still overflows.
        ModelError: any other model failure (the caller decides about fallbacks).
    """
    queue = list(pieces)
    limit = plan.max_chars
    summary = previous_summary
    windows = 0
    while queue:
        window, queue = _take_window(queue, limit)
        try:
            summary = await summarize(window, summary)
        except ModelError as exc:
            if classify(exc) != "overflow":
                raise
            size = utf16_len(window)
            if size < 2 * MIN_WINDOW_CHARS:
                raise CompactionError(
                    f"Summarization failed: even {size} characters of conversation overflow "
                    f"the summarizer's context window ({exc})"
                ) from exc
            # Halve, and keep every later window to the size that is known to fit.
            limit = size // 2
            queue = [window, *queue]
            continue
        windows += 1
    return summary or "", windows


def _take_window(queue: list[str], limit: int | None) -> tuple[str, list[str]]:
    """The longest run of whole pieces within ``limit``; a single piece over it is cut."""
    if limit is None:
        return "\n\n".join(queue), []
    taken: list[str] = []
    size = 0
    for index, piece in enumerate(queue):
        extra = utf16_len(piece) + (2 if taken else 0)
        if size + extra <= limit:
            taken.append(piece)
            size += extra
            continue
        if taken:
            return "\n\n".join(taken), queue[index:]
        head, tail = _cut(piece, limit)
        return head, [tail, *queue[index + 1 :]]
    return "\n\n".join(taken), []


def _cut(piece: str, limit: int) -> tuple[str, str]:
    """Split one over-long message at a line break near ``limit`` (else exactly there); the
    tail is marked so the model knows it continues a message."""
    # Python indexes code points, the limit counts UTF-16 units: stay under it either way.
    at = min(limit, len(piece))
    newline = piece.rfind("\n", at // 2, at)
    at = newline if newline > 0 else at
    return piece[:at], "[... continued]: " + piece[at:].lstrip("\n")
