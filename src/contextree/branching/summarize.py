"""Write the summary of an abandoned branch with a summarizer (pi-behaviour.md §9.3, §7.2).

The summarizer gets a ``"branch"`` :class:`~contextree.compaction.summary_request.SummaryRequest`;
a model gets one user message: the serialized branch in ``<conversation>`` followed by our
branch prompt (custom instructions are appended as ``Additional focus: ...``, or replace the
prompt when asked). It answers with at most 2048 tokens and no reasoning. The stored summary is
our preamble, a blank line, the model's text, then the file tags (DESIGN decision 5).

Deliberate difference: the fork stores its preamble and the model's text with no separator
(§7.3 quirk); we put a blank line between them, as pi 0.73.1 does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from contextree.branching.prepare import prepare_branch_entries
from contextree.compaction.file_ops import compute_file_lists, upsert_file_tags
from contextree.compaction.prompt_templates import load_prompt
from contextree.compaction.summarize import as_summarizer
from contextree.compaction.summary_request import Summarizer, SummaryRequest
from contextree.entries.types import StoredEntry
from contextree.errors import ModelError
from contextree.llm.base import ModelClient
from contextree.security.redact import DEFAULT_REDACTOR, Redactor
from contextree.tokens.estimate import TokenEstimator

__all__ = [
    "BRANCH_SUMMARY_MAX_TOKENS",
    "DEFAULT_CONTEXT_WINDOW",
    "NO_CONTENT_SUMMARY",
    "NO_SUMMARY_GENERATED",
    "BranchSummaryResult",
    "generate_branch_summary",
]

BRANCH_SUMMARY_MAX_TOKENS: Final = 2048
"""Output limit of a branch summary call (fixed, as in pi)."""
DEFAULT_CONTEXT_WINDOW: Final = 128_000
"""The window assumed when the caller passes 0 (pi's fallback)."""
NO_CONTENT_SUMMARY: Final = "No content to summarize"
"""The summary of a branch with no messages (still written, as pi does)."""
NO_SUMMARY_GENERATED: Final = "No summary generated"
"""Stands in for the model's text when it answered with none."""
_DEFAULT_ERROR: Final = "Summarization failed"


@dataclass(frozen=True, slots=True)
class BranchSummaryResult:
    """A branch summary, or why there is none (``aborted`` or ``error``)."""

    summary: str | None = None
    read_files: list[str] = field(default_factory=list)
    modified_files: list[str] = field(default_factory=list)
    aborted: bool = False
    """The model reported that the call was aborted; nothing should be written."""
    error: str | None = None
    """The model call failed; this says why."""

    @property
    def details(self) -> dict[str, Any]:
        """The ``details`` of the ``branch_summary`` entry: ``{readFiles, modifiedFiles}``."""
        return {"readFiles": list(self.read_files), "modifiedFiles": list(self.modified_files)}


def _instructions(
    custom_instructions: str | None, replace_instructions: bool
) -> tuple[str | None, str | None]:
    """``(instructions, focus)`` following pi 0.73.1: custom text replaces the prompt only
    when asked to, and is otherwise appended as ``Additional focus``."""
    if replace_instructions and custom_instructions:
        return custom_instructions, None
    return None, custom_instructions or None


async def generate_branch_summary(
    entries: Sequence[StoredEntry],
    client: ModelClient | Summarizer,
    *,
    context_window: int,
    reserve_tokens: int = 16384,
    custom_instructions: str | None = None,
    replace_instructions: bool = False,
    prompts_dir: Path | None = None,
    estimator: TokenEstimator | None = None,
    redactor: Redactor | None = DEFAULT_REDACTOR,
) -> BranchSummaryResult:
    """Summarize the abandoned ``entries`` (oldest first) with ``client``.

    Args:
        context_window: the model's window in tokens (0 means 128k); the branch may use the
            window minus ``reserve_tokens``, newest messages first.
        reserve_tokens: room kept for the prompt text and the answer
            (``branchSummary.reserveTokens``).
        custom_instructions: what to focus on; appended to the branch prompt.
        replace_instructions: send ``custom_instructions`` instead of the branch prompt.
        prompts_dir: a directory whose ``<name>.md`` files override our prompts.
        redactor: blanks secrets out of the branch before it is sent (default: the built-in
            patterns; ``None`` sends it as it is).

    Returns a result with ``aborted`` set when the model reports an aborted call, or ``error``
    when the call failed (a ``ModelError`` or an error stop reason); never raises for those.
    Cancelling the awaiting task cancels the call and propagates ``CancelledError``.
    """
    budget = (context_window or DEFAULT_CONTEXT_WINDOW) - reserve_tokens
    preparation = prepare_branch_entries(entries, budget, estimator=estimator)
    if not preparation.messages:
        return BranchSummaryResult(summary=NO_CONTENT_SUMMARY)

    instructions, focus = _instructions(custom_instructions, replace_instructions)
    request = SummaryRequest(
        tuple(preparation.messages),
        "branch",
        BRANCH_SUMMARY_MAX_TOKENS,
        custom_instructions=focus,
        instructions=instructions,
        redactor=redactor,
        prompts_dir=prompts_dir,
    )
    try:
        reply = await as_summarizer(client).write_summary(request)
    except ModelError as exc:
        return BranchSummaryResult(error=str(exc) or _DEFAULT_ERROR)
    if reply.stop_reason == "aborted":
        return BranchSummaryResult(aborted=True)
    if reply.stop_reason == "error":
        return BranchSummaryResult(error=reply.error_message or _DEFAULT_ERROR)

    text = reply.text
    if not text.strip():
        text = NO_SUMMARY_GENERATED
    preamble = load_prompt("branch-preamble", overrides_dir=prompts_dir)
    summary = f"{preamble}\n\n{text}" if preamble else text
    read_files, modified_files = compute_file_lists(preparation.file_ops)
    summary = upsert_file_tags(summary, read_files, modified_files)
    return BranchSummaryResult(
        summary=summary, read_files=read_files, modified_files=modified_files
    )
