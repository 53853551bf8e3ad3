"""One summary asked of one summarizer: the request value, the reply, and the protocol.

Every summarizer takes a :class:`SummaryRequest` (the messages, the kind of summary, the
previous summary, the budget, the instructions) and answers a :class:`SummaryReply`. A text
model is wrapped by :class:`~contextree.compaction.summary_prompt.ModelSummarizer`, which
builds the prompt (pi-behaviour §7.2); the offline summarizer reads the messages themselves; a
provider's own compaction answers through
:class:`~contextree.compaction.provider_summary.ProviderSummarizer`. Where they differ, the
protocol says so in attributes (:attr:`Summarizer.method`, :attr:`~Summarizer.fallible`,
:attr:`~Summarizer.summarizes_turn_prefix`, :attr:`~Summarizer.parallel_requests`), so
compaction never asks which class it holds.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Literal, Protocol, get_args, runtime_checkable

from contextree.entries.types import StoredMessage
from contextree.security.redact import DEFAULT_REDACTOR, Redactor

__all__ = [
    "SUMMARY_KINDS",
    "Summarizer",
    "SummaryKind",
    "SummaryMethod",
    "SummaryReply",
    "SummaryRequest",
    "redacted",
    "redacted_messages",
]

SummaryKind = Literal["initial", "update", "turn_prefix", "short", "branch"]
"""Which summary is asked for: first history summary, update of a previous one, the prefix of
a split turn, the short display summary, or a branch summary."""

SUMMARY_KINDS: Final[tuple[SummaryKind, ...]] = get_args(SummaryKind)

SummaryMethod = Literal["hybrid", "model", "offline", "offline-fallback", "hook", "provider"]
"""Who wrote a summary: a model plus our recorded facts, a model alone, the offline
summarizer (chosen, or after every model failed), a hook, or the provider's own compaction
(``details.providerCompaction``)."""


def redacted_messages(
    messages: Sequence[StoredMessage], redactor: Redactor | None
) -> list[StoredMessage]:
    """``messages`` with every string redacted by ``redactor`` (as they are for ``None``)."""
    if redactor is None:
        return list(messages)
    # One call for all: a string repeated across messages is redacted once.
    result: list[StoredMessage] = redacted(list(messages), redactor)
    return result


def redacted(value: Any, redactor: Redactor) -> Any:
    """A copy of a JSON value with every string redacted (for summarizers that read messages)."""
    return _redacted(value, redactor, {})


_SCALARS: Final = frozenset({int, float, bool, type(None)})
"""Values kept as they are."""


def _redacted(value: Any, redactor: Redactor, done: dict[str, str]) -> Any:
    # ``done``: each distinct string is redacted once. Most strings of a history repeat
    # ("assistant", "toolCall", the model's name): 28k of a 100k-entry session's 38k.
    if isinstance(value, str):
        text = done.get(value)
        return text if text is not None else _redact_once(value, redactor, done)
    if isinstance(value, dict):
        # A dict's strings seen before and its numbers are copied here, not in a call each:
        # they are most of a history's values (the calls were half the time of the walk).
        copy: dict[Any, Any] = {}
        for key, item in value.items():
            kind = type(item)
            if kind is str:
                text = done.get(item)
                copy[key] = text if text is not None else _redact_once(item, redactor, done)
            elif kind in _SCALARS:
                copy[key] = item
            else:
                copy[key] = _redacted(item, redactor, done)
        return copy
    if isinstance(value, list):
        return [_redacted(item, redactor, done) for item in value]
    return value


def _redact_once(text: str, redactor: Redactor, done: dict[str, str]) -> str:
    redacted_text = done[text] = redactor.redact(text)
    return redacted_text


@dataclass(frozen=True, slots=True)
class SummaryRequest:
    """Everything one summary needs; each summarizer uses what applies to it."""

    messages: tuple[StoredMessage, ...]
    """The messages to summarize (pi's AgentMessages, before ``convert_to_llm``)."""
    kind: SummaryKind
    budget_tokens: int
    """The summary's ceiling (chars/4); a model's ``max_tokens``."""
    previous_summary: str | None = None
    """An earlier summary to update; for ``"short"``, the summary to shorten."""
    extra_context: tuple[str, ...] = ()
    """Hook context lines (``<additional-context>``)."""
    custom_instructions: str | None = None
    """What to focus on (``Additional focus: ...``)."""
    instructions: str | None = None
    """Replaces the built-in prompt of a history or branch summary (a hook's prompt, a
    branch summary's replacing instructions); summarizers without prompts ignore it."""
    earlier_messages: tuple[StoredMessage, ...] = ()
    """The messages earlier compactions summarized, when every one of them was the offline
    summarizer's (``compaction/earlier.py``): it reads them again with :attr:`messages`
    instead of updating its previous summary. Other summarizers ignore them (pi sends the
    previous summary only)."""
    continued_by: StoredMessage | None = None
    """The message the kept part starts with (a split turn's first): read by a summarizer
    that tracks questions and requests, so it does not report as pending what it answers."""
    redactor: Redactor | None = DEFAULT_REDACTOR
    """Blanks secrets out of what the summarizer reads; ``None`` leaves it as it is."""
    reasoning: str | None = None
    """Reasoning effort asked of a model, if it has one."""
    prompts_dir: Path | None = None
    """A directory whose ``<name>.md`` files override our prompts."""
    context_window: int | None = None
    """The model's window in tokens; a longer conversation is summarized window by window."""
    on_usage: Callable[[Mapping[str, Any]], None] | None = field(default=None, compare=False)
    """Called with the provider usage of each call as it is spent (cost reporting)."""

    def redacted_messages(self) -> list[StoredMessage]:
        """:attr:`messages` with every string redacted (for summarizers that read them)."""
        return redacted_messages(self.messages, self.redactor)

    def redacted_earlier(self) -> list[StoredMessage]:
        """:attr:`earlier_messages` with every string redacted."""
        return redacted_messages(self.earlier_messages, self.redactor)

    def spent(self, usage: Mapping[str, Any]) -> None:
        """Report ``usage`` to :attr:`on_usage`, if anyone listens."""
        if self.on_usage is not None:
            self.on_usage(usage)


@dataclass(frozen=True, slots=True)
class SummaryReply:
    """What a summarizer answered; the caller decides what a failure means for it."""

    text: str
    stop_reason: Literal["stop", "error", "aborted"] = "stop"
    """``"error"`` or ``"aborted"`` when the model reported so (then ``text`` is partial)."""
    error_message: str | None = None
    windows: int = 0
    """Model requests the summary took (0 when no model was asked)."""
    details: Mapping[str, Any] = field(default_factory=dict)
    """Extra ``details`` keys for the entry (a provider's compaction items)."""


@runtime_checkable
class Summarizer(Protocol):
    """Writes the summary a :class:`SummaryRequest` asks for."""

    name: str
    method: SummaryMethod
    """How its summaries are made: ``"model"``, ``"offline"`` (its summary holds the
    recorded facts already) or ``"provider"`` (the provider compacts the whole history in
    one call and takes no budget)."""
    fallible: bool
    """Whether it can fail (a model, an endpoint); the offline summarizer cannot: it is
    never retried, and no fallback stands in for it."""
    summarizes_turn_prefix: bool
    """Whether a split turn's prefix may go to it (§7.6: never to the remote endpoint)."""
    parallel_requests: bool
    """Whether it takes two requests at once (one local server may serve one at a time)."""

    async def write_summary(self, request: SummaryRequest) -> SummaryReply:
        """The summary of ``request``.

        Raises:
            contextree.errors.ModelError: a call failed.
            contextree.errors.CompactionError: the request cannot be summarized.
        """
        ...
