"""Running one session through N rounds of compaction and recording what is kept.

Round ``r`` appends slice ``r`` of the session and compacts. "Full" keeps the summarizer's own
budget; a ``ratio`` (0.2) asks the context after each compaction to fit in that share of the
whole history so far: a quarter of it for recent messages kept verbatim (at least: the cut
falls where a message starts), the rest for the summary. A probe is scored from the first
round whose compaction folded its message away (before that, the model reads the message
itself).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from contextree.compaction.options import SummaryOptions
from contextree.compaction.prepare import CompactionPreparation, prepare_compaction
from contextree.compaction.run import compact_session
from contextree.compaction.summary_prompt import text_tokens
from contextree.context.convert import compaction_summary_text, convert_to_llm
from contextree.entries.types import StoredMessage, is_compaction_entry
from contextree.eval.corpus import PlantedProbe
from contextree.eval.score import KeptCheck
from contextree.llm.base import ModelClient
from contextree.session.tree import SessionTree
from contextree.settings.schema import CompactionSettings
from contextree.tokens.estimate import estimate_tokens

__all__ = ["RoundResult", "SessionRun", "run_session"]

_FULL_KEEP_SHARE = 0.1
"""With the full budget, recent messages kept verbatim: a tenth of the history so far."""


@dataclass(frozen=True, slots=True)
class RoundResult:
    """One round of one session: which probes were scored and which of them were kept."""

    round: int
    scored: tuple[str, ...]
    kept: tuple[str, ...]
    context_tokens: int
    history_tokens: int


@dataclass(frozen=True, slots=True)
class SessionRun:
    name: str
    rounds: tuple[RoundResult, ...]


async def run_session(
    name: str,
    slices: Sequence[Sequence[StoredMessage]],
    probes: Sequence[PlantedProbe],
    summarizer: ModelClient,
    *,
    ratio: float | None,
    kept: KeptCheck,
    instructions: str | None = None,
    context_window: int | None = None,
) -> SessionRun:
    """Append each slice, compact, and check every probe folded away so far."""
    tree = SessionTree.in_memory()
    where: dict[str, str] = {}
    history = 0
    folded: set[str] = set()
    results: list[RoundResult] = []
    for number, messages in enumerate(slices, start=1):
        ids = [tree.append_message(message) for message in messages]
        history += sum(estimate_tokens(message) for message in messages)
        for planted in probes:
            if planted.probe.segment == number - 1:
                where[planted.probe.id] = ids[planted.message]
        keep = int(history * (_FULL_KEEP_SHARE if ratio is None else ratio / 4))
        settings = CompactionSettings(keep_recent_tokens=max(keep, 1), reserve_tokens=16384)
        summary_tokens = None
        if ratio is not None:
            summary_tokens = max(64, int(history * ratio) - _beside_summary(tree, settings))
        options = SummaryOptions(
            summary_tokens=summary_tokens,
            custom_instructions=instructions,
            context_window=context_window,
        )
        await compact_session(tree, summarizer, settings=settings, options=options)
        folded |= _folded(tree, where)
        scored = tuple(p.probe.id for p in probes if p.probe.id in folded)
        kept_ids = tuple(p.probe.id for p in probes if p.probe.id in folded and kept(p.probe, tree))
        context = convert_to_llm(tree.build_session_context().messages)
        results.append(
            RoundResult(
                round=number,
                scored=scored,
                kept=kept_ids,
                context_tokens=sum(estimate_tokens(m) for m in context),
                history_tokens=history,
            )
        )
    return SessionRun(name, tuple(results))


def _beside_summary(tree: SessionTree, settings: CompactionSettings) -> int:
    """Tokens the context will hold besides the summary's text: the messages the compaction
    keeps verbatim (at least ``keep_recent_tokens``: the cut falls where a message starts, a
    long one kept whole) and the words around the summary. Budgeting the summary with
    ``keep_recent_tokens`` alone let the context pass its share once summaries filled
    their budget."""
    prep = prepare_compaction(tree.get_branch(), settings)
    wrapper = text_tokens(compaction_summary_text(""))
    if not isinstance(prep, CompactionPreparation):
        return settings.keep_recent_tokens + wrapper
    return sum(estimate_tokens(message) for message in prep.recent_messages) + wrapper


def _folded(tree: SessionTree, where: dict[str, str]) -> set[str]:
    """Probes whose message lies before the latest compaction's first kept entry."""
    path = tree.get_branch()
    first_kept = None
    for entry in reversed(path):
        if is_compaction_entry(entry):
            first_kept = entry.get("firstKeptEntryId")
            break
    if first_kept is None:
        return set()
    order = {entry["id"]: index for index, entry in enumerate(path)}
    cut = order.get(str(first_kept), 0)
    return {probe for probe, entry_id in where.items() if order.get(entry_id, cut) < cut}
