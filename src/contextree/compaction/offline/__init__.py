"""The built-in offline summarizer: structured summaries with no model, no network, no key.

It is the default summarizer (DESIGN.md "Built-in default"). ``compact()`` and branch summaries
hand it a :class:`~contextree.compaction.summary_request.SummaryRequest`
(:meth:`OfflineSummarizer.write_summary`), whose messages it reads as structure (requests,
constraints, tool calls and their results, commands and exit codes, TODOs, errors, the
assistant's last words) with long tool outputs kept at both ends; the summary is written as a
handoff in the section layout our prompts ask models for (§7.3, docs/summaries.md). It also
implements the model-client protocol, so a prompt that arrives as text (pi-behaviour.md §7.2,
e.g. at ``contextree serve``) is taken apart again and summarized the same way.
:func:`extract_facts` and :func:`render_key_facts` give the facts alone, for model summaries.

Properties the compaction code relies on:

- Deterministic: the same input gives the same output, byte for byte.
- Iterative: with a previous summary, its facts are merged with the new ones, not replaced.
- Bounded: the summary is at most ``max_fraction`` of the summarized tokens (chars/4, with
  the previous summary carried at its own size), at most ``max_tokens_cap`` and never more
  than the caller's budget (the request's ``max_tokens``). Lines are dropped least important
  first; the goal, file paths, failing commands, the user's constraints, open TODOs and a
  pending question go last.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from contextree.compaction.offline.prompt import (
    SUMMARY_KINDS,
    SummaryKind,
    SummaryPrompt,
    parse_summary_prompt,
)
from contextree.compaction.offline.summarizer import OfflineSummarizer

if TYPE_CHECKING:
    from contextree.compaction.offline.facts import (
        RECORDED_FACTS_HEADING,
        HandoffFacts,
        RecordedFacts,
        extract_facts,
        record_facts,
        render_key_facts,
    )

__all__ = [
    "RECORDED_FACTS_HEADING",
    "SUMMARY_KINDS",
    "HandoffFacts",
    "OfflineSummarizer",
    "RecordedFacts",
    "SummaryKind",
    "SummaryPrompt",
    "extract_facts",
    "parse_summary_prompt",
    "record_facts",
    "render_key_facts",
]


def __getattr__(name: str) -> object:
    # The facts alone are for a model's summary: loaded on first use, not by every offline
    # compaction (their module and its classes were 1.5 ms of `compact`'s start).
    if name in __all__:  # the names above that are not imported: facts.py's
        from contextree.compaction.offline import facts

        return getattr(facts, name)
    from contextree.compaction.submodules import submodule  # (when no name above)

    return submodule(__name__, name)
