"""The built-in offline summarizer: structured summaries with no model, no network, no key.

It is the default summarizer (DESIGN.md "Built-in default"). It implements the model-client
protocol, so the compaction code can hand it the same request it would send to a model: one user
message holding the assembled prompt (pi-behaviour.md §7.2). The prompt is taken apart again, the
serialized conversation (§7.1) is read as structure (requests, tool calls and their results,
commands and exit codes, errors, the assistant's last words) and the summary is written in the
section layout our prompts ask models for (§7.3). Code that already has the pieces can call
:meth:`OfflineSummarizer.summarize` directly and skip the prompt round trip.

Properties the compaction code relies on:

- Deterministic: the same input gives the same output, byte for byte.
- Iterative: with a previous summary, its facts are merged with the new ones, not replaced.
- Bounded: the summary is at most ``max_fraction`` of the summarized tokens (chars/4, with
  the previous summary carried at its own size), at most ``max_tokens_cap`` and at most the
  request's ``max_tokens``. Lines are dropped least important and oldest first; the goal, file
  paths, failing commands, the user's constraints and a pending question are kept even then.
"""

from __future__ import annotations

from contextree.compaction.offline.prompt import (
    SUMMARY_KINDS,
    SummaryKind,
    SummaryPrompt,
    parse_summary_prompt,
)
from contextree.compaction.offline.summarizer import OfflineSummarizer

__all__ = [
    "SUMMARY_KINDS",
    "OfflineSummarizer",
    "SummaryKind",
    "SummaryPrompt",
    "parse_summary_prompt",
]
