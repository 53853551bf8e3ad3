"""Recall on the user's words: when the user's new message names something the model no
longer sees - a name, a place, a code, a word that only the condensed part of the session
holds - the request carries what recall finds for those words, without waiting for the model
to call the ``recall`` tool (a small model seldom does, and a large one does not know what it
forgot).

Only the words the model cannot see are searched: "can Rashid still take the minibus?" after
a compaction that left out Rashid's plans searches "rashid minibus" when neither word is in the
context, and nothing when both are (nor for an unseen word no condensed entry holds). The
hits that hold every such word are shown, else the one best hit; what is shown is bounded
(:data:`AUTO_RECALL_CHARS`), so a message of words the context already holds costs nothing,
and one that names something new costs a few hundred tokens at most.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

from contextree.context.convert import convert_to_llm
from contextree.entries.types import (
    LlmMessage,
    StoredMessage,
    is_text_content,
    is_tool_call_content,
    is_user_message,
)
from contextree.recall.documents import content_text

if TYPE_CHECKING:
    from contextree.recall.tool import SessionRecall
    from contextree.session.tree import SessionTree

log = logging.getLogger("contextree.recall")

__all__ = [
    "AUTO_RECALL_CHARS",
    "AUTO_RECALL_HITS",
    "AUTO_RECALL_LEAD",
    "RecalledMessages",
    "auto_recall",
    "compaction_id",
    "llm_text",
    "recall_before_request",
    "unseen_words",
]

AUTO_RECALL_CHARS: Final = 1500
"""The bound of what one message brings back (excerpts, ids and the lead line)."""
AUTO_RECALL_HITS: Final = 2
"""How many hits are shown at most: the best, and one more for the other half of a turn."""
AUTO_RECALL_LEAD: Final = (
    "[From the condensed part of this conversation, found by recall for the words "
    "{words} of the message above; the recall tool finds more.]"
)
_MAX_WORDS: Final = 6
"""More unseen words than this make a search few entries answer whole: the first are kept."""
_KEPT_BLOCKS: Final = 4
"""How many messages of a context carry what was found for them, the newest: what they add is
not in the session, so no size estimate counts it; four blocks are at most 6,000 characters."""
_CANDIDATES: Final = 12
"""Unseen words looked up one by one (a search each) before the first six the condensed part
holds are searched together."""
_WORD: Final = re.compile(r"\w(?:[\w-]*\w)?")
_COMMON_WORDS: Final = """
    about above after again against also although always another anyone anything anyway
    around back because been before being below between both could didn does doesn doing done
    down during each either else enough even ever every few first from further going gone good
    great have having here hers herself himself into isn itself just know last later least less
    like little made make many maybe might mine more most much must myself need needs never next
    nothing once only other ours ourselves over please quite rather really right same says
    should since some something still such sure than thank thanks that their theirs them
    themselves then there these they thing things think this those though through today
    tomorrow together told took under until upon very want wants wasn well were what whatever
    when where whether which while will with within without won would wouldn yeah yesterday yet
    your yours yourself okay take takes taking come comes coming came give gives gave given
    keep keeps kept tell tells said send sent look looks looking find found call called help
    work works time times week weeks year years days soon also able actually already
    fine hello hmm sorry cheers yes again asked asking check checked use used using lets
"""
_COMMON: Final = frozenset(_COMMON_WORDS.split())
"""Words too common to point at anything (four letters and more; shorter words never count)."""


def llm_text(messages: Sequence[LlmMessage]) -> str:
    """Everything a model reads in ``messages``: text blocks and tool-call arguments."""
    parts: list[str] = []
    for message in messages:
        content = message.get("content")
        if isinstance(content, str):
            parts.append(content)
            continue
        for block in content if isinstance(content, list) else []:
            if is_text_content(block) and isinstance(block.get("text"), str):
                parts.append(block["text"])
            elif is_tool_call_content(block):
                parts.append(json.dumps(block.get("arguments"), ensure_ascii=False))
    return "\n".join(parts)


def unseen_words(message: str, visible: str, most: int = _MAX_WORDS) -> list[str]:
    """The words of ``message`` that point at something and that ``visible`` (what the model
    reads) does not hold: four letters or more, or any word with a digit; not a common word;
    each once, at most ``most``. The words of the message's last line come first (the
    question after a pasted log: "what about ERR_CONN_RESET?"), and in each part those
    written like a name or a code (a capital letter, a digit, an underscore) before the
    others, in the message's order."""
    seen = {word.casefold() for word in _WORD.findall(visible)}
    lines = message.strip().splitlines() or [""]
    groups: list[list[str]] = [[], [], [], []]  # last line: named, plain; before: named, plain
    found: set[str] = set()
    for part, text in ((0, lines[-1]), (2, "\n".join(lines[:-1]))):
        for written in _WORD.findall(text):
            word = written.casefold()
            if word in seen or word in found or word in _COMMON:
                continue
            coded = any(ch.isdigit() or ch == "_" for ch in word)
            if len(word) >= 4 or coded:
                found.add(word)
                groups[part + (0 if coded or written != word else 1)].append(word)
    return [word for group in groups for word in group][:most]


def auto_recall(recall: SessionRecall, message: str, visible: str) -> str | None:
    """What to add to the user's ``message`` for a model that reads ``visible``: the lead
    line and the excerpts recall finds for :func:`unseen_words`, within
    :data:`AUTO_RECALL_CHARS`; ``None`` when the path has no compaction, the index would have
    to be built first (:meth:`SessionRecall.cold`), or the message names nothing unseen that
    a condensed entry holds."""
    if not recall.available():
        return None
    candidates = unseen_words(message, visible, most=_CANDIDATES)
    if "?" in message:
        # A question asks after something: the summary may name its subject ("Rashid") and
        # still lack the detail asked for, so its seen words are looked for too, after the
        # unseen ones.
        named = unseen_words(message, "", most=_CANDIDATES)
        candidates = [*candidates, *(w for w in named if w not in candidates)][:_CANDIDATES]
    if not candidates or recall.cold():
        # Indexing a session anew takes seconds at 100k entries: not while the user waits.
        # A compaction made here warms the index up (:func:`recall_before_request`), and so
        # does a search with the recall tool.
        return None
    # Only the words the condensed part holds: "can Rashid still come on the seventh?" looks
    # for Rashid, not for a "seventh" no entry has.
    words = [word for word in candidates if recall.holds(word)][:_MAX_WORDS]
    if not words:
        return None
    lead = AUTO_RECALL_LEAD.format(words=", ".join(f'"{word}"' for word in words))
    room = AUTO_RECALL_CHARS - len(lead) - 1
    query = " ".join(words)
    found = recall.search_shown(query, limit=AUTO_RECALL_HITS, max_chars=room, complete_only=True)
    if found is None:
        # No entry holds them all: the one that holds the most of them (the rarer first).
        found = recall.search_shown(query, limit=1, max_chars=room, complete_only=False)
    if found is None:
        return None
    text, hits = found
    if all(f"[{hit}]" in visible for hit in hits):
        return None  # (what an earlier message brought back, its ids in the heads: seen)
    return f"{lead}\n{text}"


def _user_text(message: StoredMessage) -> str:
    return content_text(message.get("content"))


def _latest_user(messages: Sequence[StoredMessage]) -> int | None:
    return next(
        (at for at in range(len(messages) - 1, -1, -1) if is_user_message(messages[at])), None
    )


def _carrying(message: StoredMessage, block: str) -> StoredMessage:
    """A copy of ``message`` with ``block`` as a text block of its own after its content."""
    content = message.get("content")
    blocks = (
        [{"type": "text", "text": content}] if isinstance(content, str) else list(content or [])
    )
    return {**message, "content": [*blocks, {"type": "text", "text": block}]}


class RecalledMessages:
    """What ``recall.auto`` found for the user messages of one session's context, by entry id.

    :meth:`find` searches for the latest user message, once a message (the slow part: run it
    off an event loop); :meth:`apply` adds what was found to each message that has it (the
    newest four), the same copy each time, so the requests of a turn and of the turns after
    it begin with the same bytes (a provider's prompt cache reads them as one prefix). Only
    the messages still in the context are remembered.
    """

    __slots__ = ("_copies", "_found", "_searched", "compaction_seen")

    def __init__(self, compaction_seen: str | None = None) -> None:
        self.compaction_seen = compaction_seen
        """The latest compaction whose index was warmed up (or that was there on open)."""
        self._found: dict[str, str] = {}
        self._searched: set[str] = set()
        self._copies: dict[str, tuple[StoredMessage, StoredMessage]] = {}

    def due(
        self, messages: Sequence[StoredMessage], ids: Sequence[str | None], recall: SessionRecall
    ) -> bool:
        """Whether :meth:`find` would search (a quick look, for a caller that would otherwise
        hand every request's check to a thread): the path has a compaction, and the latest
        user message is new to this object, has words, and is the user's own."""
        return recall.available() and self._due_position(messages, ids) is not None

    def _due_position(
        self, messages: Sequence[StoredMessage], ids: Sequence[str | None]
    ) -> int | None:
        """Where the latest user message is, when it is to be searched for: new to this object,
        with words, and not one the agent wrote itself (``synthetic``: the prompt to go on
        after a compaction)."""
        position = _latest_user(messages)
        if position is None or position >= len(ids):
            return None
        entry_id, message = ids[position], messages[position]
        if entry_id is None or entry_id in self._searched:
            return None
        if message.get("synthetic") or not _user_text(message).strip():
            return None
        return position

    def find(
        self,
        messages: Sequence[StoredMessage],
        ids: Sequence[str | None],
        recall: SessionRecall,
        *,
        also_visible: str = "",
    ) -> str | None:
        """Search for the latest user message of ``messages`` (``ids``: their entry ids) when
        it is due (:meth:`due`), once a message: what the model reads is the rest of the
        context, with what earlier messages carry, and ``also_visible`` (the system prompt).
        Returns what was found for it (``None``: nothing, or not searched)."""
        present = {entry_id for entry_id in ids if entry_id is not None}
        for entry_id in [key for key in self._searched if key not in present]:
            self._searched.discard(entry_id)
            self._found.pop(entry_id, None)
            self._copies.pop(entry_id, None)
        if not recall.available():
            return None  # nothing condensed yet: nothing to find, nor a context to read
        latest = self._due_position(messages, ids)
        if latest is None:
            return None
        latest_id = ids[latest]
        assert latest_id is not None
        self._searched.add(latest_id)  # (first: a search that fails is not made again)
        shown = self.apply(messages, ids)
        others = convert_to_llm([*shown[:latest], *shown[latest + 1 :]])
        text = _user_text(messages[latest])
        block = auto_recall(recall, text, f"{also_visible}\n{llm_text(others)}")
        if block is not None:
            self._found[latest_id] = block
        return block

    def apply(
        self, messages: Sequence[StoredMessage], ids: Sequence[str | None]
    ) -> list[StoredMessage]:
        """``messages`` with what was found added to each message that has it (a copy; the
        session keeps the message as the user wrote it)."""
        out = list(messages)
        if not self._found:
            return out
        carrying = [
            position
            for position, entry_id in enumerate(ids[: len(messages)])
            if entry_id is not None and entry_id in self._found
        ]
        for position in carrying[-_KEPT_BLOCKS:]:
            message, entry_id = messages[position], ids[position]
            assert entry_id is not None
            held = self._copies.get(entry_id)
            if held is None or held[0] is not message:
                held = (message, _carrying(message, self._found[entry_id]))
                self._copies[entry_id] = held
            out[position] = held[1]
        return out


def compaction_id(tree: SessionTree) -> str | None:
    """The id of the latest compaction on ``tree``'s path (``None``: none)."""
    latest = tree.latest_compaction()
    found = latest.get("id") if latest is not None else None
    return found if isinstance(found, str) else None


async def recall_before_request(
    memo: RecalledMessages, tree: SessionTree, recall: SessionRecall, *, also_visible: str = ""
) -> None:
    """What a host does before it builds a request: after a compaction made since ``memo``
    last looked, bring the index up to date (the first time, indexing the session: seconds
    at 100k entries, once); then :meth:`RecalledMessages.find` for the latest user message
    when it is due. Both run in a thread; a failure is logged and the request goes without."""
    import asyncio

    latest_id = compaction_id(tree)
    try:
        if latest_id is not None and latest_id != memo.compaction_seen:
            memo.compaction_seen = latest_id
            await asyncio.to_thread(recall.warm_up)
        context = tree.build_session_context()
        if memo.due(context.messages, context.entry_ids, recall):
            await asyncio.to_thread(
                memo.find, context.messages, context.entry_ids, recall, also_visible=also_visible
            )
    except Exception as exc:  # (a help: an index that cannot be read must not stop a turn)
        log.warning("recall.auto: the search failed, the request goes without it: %s", exc)
