"""``contextree eval --recall``: a probe is kept when the model sees its values, or when the
top hits of a search over what the compactions folded away hold them (issue 26 item 7).

The search is the one a model makes with the ``recall`` tool: the words it remembers of the
planted sentence (its values taken out, so the value itself is not the query), and what counts
is what the tool gives back for the first :data:`RECALL_TOP` hits, as the model reads it (an
excerpt of each, bounded; :class:`~contextree.recall.tool.SessionRecall`).
"""

from __future__ import annotations

import re
from typing import Final

from contextree.eval.probes import Probe
from contextree.eval.score import values_found, visible
from contextree.recall import RecallIndex, open_recall_index
from contextree.recall.tool import SessionRecall
from contextree.session.tree import SessionTree

__all__ = [
    "RECALL_TOP",
    "auto_recalled",
    "recall_query",
    "recalled",
    "visible_or_asked",
    "visible_or_auto_recalled",
    "visible_or_recalled",
]

RECALL_TOP: Final = 5
"""How many hits count, as in the issue: the model reads the first few."""

_WORD: Final = re.compile(r"[A-Za-z][A-Za-z'-]{3,}")
_MAX_WORDS: Final = 6

# One index for the session the probes are checked against one after another (an eval
# compacts one in-memory session at a time); the tree is held so its id cannot be reused.
_open: list[tuple[SessionTree, RecallIndex]] = []


def recall_query(probe: Probe) -> str:
    """The search a model would make for ``probe``: the longer words of the planted sentence
    without its values (the longest first, at most six); the values when nothing is left."""
    text = probe.text
    for value in probe.values:
        text = text.replace(value, " ")
    words = list(dict.fromkeys(w.lower() for w in _WORD.findall(text)))
    words.sort(key=len, reverse=True)
    return " ".join(words[:_MAX_WORDS]) or " ".join(f'"{v}"' for v in probe.values)


def _index(tree: SessionTree) -> RecallIndex:
    if not _open or _open[0][0] is not tree:
        for _, old in _open:
            old.close()
        _open[:] = [(tree, open_recall_index(tree))]
    return _open[0][1]


def recalled(probe: Probe, tree: SessionTree) -> bool:
    """Whether the ``recall`` tool's result for :func:`recall_query` (its first
    :data:`RECALL_TOP` hits) holds every value of ``probe`` in the words it shows (its
    excerpts and the requests they answer; not the ids and times around them)."""
    tool = SessionRecall(tree, index=_index(tree))
    shown = tool.search_excerpts(recall_query(probe), limit=RECALL_TOP)
    return values_found(probe, "\n".join(shown))


def visible_or_recalled(probe: Probe, tree: SessionTree) -> bool:
    """The ``--recall`` check: :func:`~contextree.eval.score.visible`, else :func:`recalled`."""
    return visible(probe, tree) or recalled(probe, tree)


def auto_recalled(probe: Probe, tree: SessionTree, message: str | None = None) -> bool:
    """Whether ``recall.auto``'s excerpts for a user message that asks after ``probe``
    (``message``; by default its planted sentence without its values) hold every value of
    it."""
    from contextree.context.convert import convert_to_llm
    from contextree.recall.auto import auto_recall, llm_text

    text = probe.text if message is None else message
    for value in probe.values:
        text = text.replace(value, " ")
    seen = llm_text(convert_to_llm(tree.build_session_context().messages))
    tool = SessionRecall(tree, index=_index(tree))
    tool.warm_up()  # (the eval's compactions are made in this process: the agent's would be)
    found = auto_recall(tool, text, seen)
    return found is not None and values_found(probe, found)


def visible_or_auto_recalled(probe: Probe, tree: SessionTree) -> bool:
    """:func:`~contextree.eval.score.visible`, else :func:`auto_recalled`."""
    return visible(probe, tree) or auto_recalled(probe, tree)


def visible_or_asked(probe: Probe, tree: SessionTree) -> bool:
    """:func:`~contextree.eval.score.visible`, else what ``recall.auto`` adds to the user's
    own later question (:attr:`~contextree.eval.probes.Probe.ask`; a probe without one counts
    as visible or not)."""
    return visible(probe, tree) or bool(probe.ask and auto_recalled(probe, tree, probe.ask))
