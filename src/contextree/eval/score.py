"""Whether a probe is kept: the extension point of the eval's scoring.

A :data:`KeptCheck` gets a probe and the session after a compaction and says whether the
probe is kept. The default, :func:`visible`, asks whether every value of the probe appears in
what the model would see next (the built context: summaries and the messages kept). Another
check (e.g. one that also lets a search over compacted entries find the value) plugs in as
``run_eval(kept=...)``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from contextree.context.convert import convert_to_llm
from contextree.entries.types import LlmMessage
from contextree.eval.probes import Probe
from contextree.recall.auto import llm_text
from contextree.session.tree import SessionTree

__all__ = ["KeptCheck", "context_text", "values_found", "visible"]

KeptCheck = Callable[[Probe, SessionTree], bool]
"""``(probe, session after the compaction) -> kept``."""


def context_text(messages: Sequence[LlmMessage]) -> str:
    """Everything the model reads in ``messages``: text blocks and tool-call arguments."""
    return llm_text(messages)


def _normal(text: str) -> str:
    return " ".join(text.split()).casefold()


def values_found(probe: Probe, text: str) -> bool:
    """Whether every value of ``probe`` appears in ``text`` (case and spacing ignored)."""
    haystack = _normal(text)
    return all(_normal(value) in haystack for value in probe.values)


_last: list[tuple[int, str | None, str]] = []
"""The context text of the last session asked about: probes are checked one after another
against the same state."""


def visible(probe: Probe, tree: SessionTree) -> bool:
    """The default check: the probe's values are in the context the model would see."""
    key = (id(tree), tree.leaf_id)
    if not _last or _last[0][:2] != key:
        messages = convert_to_llm(tree.build_session_context().messages)
        _last[:] = [(*key, context_text(messages))]
    return values_found(probe, _last[0][2])
