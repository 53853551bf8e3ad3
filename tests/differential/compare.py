"""Reading the drivers' answers and putting ours next to them.

The drivers report a message that is the very object a ``message`` entry stores as
``{"$ref": id}`` and list those once; :func:`resolve` puts them back. Where contextree differs
from pi or oh-my-pi on purpose (docs/compatibility.md), the helpers here say so by name:

- :func:`pi_wording`: our summary wrappers are in our own words; with pi's wording put in,
  ``convert_to_llm`` and ``serialize_conversation`` must give pi's output byte for byte;
- :func:`for_pi`: pi 0.73.1 has no ``shortSummary`` on a compaction summary message (the fork's);
- :func:`pruned_as_sent`: pi has no pruning; its ``convertToLlm`` passes a pruned tool result on
  as stored, with the ``prunedContent`` we keep (decision 6), where ours sends the fork's form;
- :func:`omp_view`: oh-my-pi 18's ``buildSessionContext`` also does some of the send-time
  cleanup that contextree does in ``provider_messages`` (failed replies and unanswered tool
  calls leave the context) and adds display fields to the compaction summary.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import pytest

from contextree.context import convert

Json = dict[str, Any]

PI_COMPACTION = (
    "The conversation history before this point was compacted into the following summary:"
    "\n\n<summary>\n",
    "\n</summary>",
)
PI_BRANCH = (
    "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n",
    "</summary>",
)
_OMP_SUMMARY_DISPLAY_KEYS = ("tokensAfter", "method", "warning", "blocks", "images")


def resolve(items: Sequence[Any], messages: Json) -> list[Any]:
    """A driver's message list with every ``{"$ref": id}`` replaced by that entry's message."""
    return [
        messages[item["$ref"]] if isinstance(item, dict) and item.keys() == {"$ref"} else item
        for item in items
    ]


def plain(value: Any) -> Any:
    """``value`` as JSON gives it back (what a driver would have received)."""
    return json.loads(json.dumps(value, ensure_ascii=False))


def text_hash(text: str) -> str:
    """The drivers' ``hashText``: sha256 over the UTF-16LE code units."""
    return hashlib.sha256(text.encode("utf-16-le", "surrogatepass")).hexdigest()


@contextmanager
def pi_wording() -> Iterator[None]:
    """Our ``convert_to_llm`` with pi 0.73.1's summary wrappers instead of our own words."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(convert, "compaction_summary_text", lambda s: s.join(PI_COMPACTION))
        patch.setattr(convert, "branch_summary_text", lambda s: s.join(PI_BRANCH))
        yield


def for_pi(messages: Sequence[Json]) -> list[Json]:
    """Our context messages as pi 0.73.1 would build them: no fork ``shortSummary``."""
    out = []
    for message in messages:
        if message.get("role") == "compactionSummary" and "shortSummary" in message:
            message = {k: v for k, v in message.items() if k != "shortSummary"}
        out.append(message)
    return out


def pruned_as_sent(llm_messages: Sequence[Json]) -> list[Json]:
    """pi's LLM messages with each pruned tool result (``prunedAt``) as contextree sends it:
    its text only (or the fork's placeholder) and no ``prunedContent``. pi's provider layer
    sends only ``content`` of a tool result, so the model sees the same either way."""
    out = []
    for message in llm_messages:
        if message.get("role") == "toolResult" and message.get("prunedAt") is not None:
            text = "".join(
                b.get("text", "") for b in message.get("content") or [] if b.get("type") == "text"
            )
            message = {k: v for k, v in message.items() if k != "prunedContent"}
            message["content"] = [
                {"type": "text", "text": text or convert.PRUNED_OUTPUT_PLACEHOLDER}
            ]
        out.append(message)
    return out


def omp_view(messages: Sequence[Json]) -> list[Json]:
    """Our context messages as oh-my-pi 18.2.3's ``buildSessionContext`` returns them.

    Its differences, in its order: a reply that ended in ``error`` with nothing in it is left
    out; tool calls with no result on the path are removed from their reply (a reply left
    empty goes), and such a rewritten reply loses its thinking signatures and redacted
    thinking; then replies that ended in ``error`` / ``aborted`` are removed with their results.
    """
    out = [m for m in messages if not (m.get("role") == "assistant" and _empty_error_turn(m))]
    answered = {m.get("toolCallId") for m in out if m.get("role") == "toolResult"}
    for index in range(len(out) - 1, -1, -1):
        message = out[index]
        if message.get("role") != "assistant":
            continue
        content = message.get("content") or []
        dangling = [
            b for b in content if b.get("type") == "toolCall" and b.get("id") not in answered
        ]
        if not dangling:
            continue
        kept = []
        for block in content:
            if block in dangling or block.get("type") == "redactedThinking":
                continue
            if block.get("type") == "thinking" and block.get("thinkingSignature"):
                block = {k: v for k, v in block.items() if k != "thinkingSignature"}
            kept.append(block)
        if kept:
            out[index] = {**message, "content": kept}
        else:
            del out[index]
    index = len(out) - 1
    while index >= 0:
        message = out[index]
        if message.get("role") == "assistant" and message.get("stopReason") in ("aborted", "error"):
            calls = {
                b.get("id") for b in message.get("content") or [] if b.get("type") == "toolCall"
            }
            del out[index]
            out[index:] = [
                m
                for m in out[index:]
                if not (m.get("role") == "toolResult" and m.get("toolCallId") in calls)
            ]
        index -= 1
    return out


def _empty_error_turn(message: Json) -> bool:
    if message.get("stopReason") != "error":
        return False
    for block in message.get("content") or []:
        kind = block.get("type")
        if kind == "text" and block.get("text", "").strip():
            return False
        if kind == "thinking" and (
            block.get("thinking", "").strip() or (block.get("thinkingSignature") or "").strip()
        ):
            return False
        if kind == "redactedThinking" and block.get("data", "").strip():
            return False
        if kind not in ("text", "thinking", "redactedThinking", "fallback"):
            return False
    return True


def from_omp(messages: Sequence[Json]) -> list[Json]:
    """oh-my-pi's context messages without the display fields it adds to a compaction summary."""
    out = []
    for message in messages:
        if message.get("role") == "compactionSummary":
            message = {k: v for k, v in message.items() if k not in _OMP_SUMMARY_DISPLAY_KEYS}
        out.append(message)
    return out


def omp_default_model(path: Sequence[Json]) -> str | None:
    """oh-my-pi 18's session model: an explicit ``model_change`` (``model``, default role) wins
    over later assistant messages; pi's ``{provider, modelId}`` changes are not read."""
    model: str | None = None
    explicit = False
    for entry in path:
        if entry.get("type") == "model_change" and entry.get("model"):
            if (entry.get("role") or "default") == "default":
                model, explicit = entry["model"], True
        elif (
            entry.get("type") == "message"
            and entry["message"].get("role") == "assistant"
            and not explicit
        ):
            message = entry["message"]
            model = f"{message.get('provider')}/{message.get('model')}"
    return model


def first_difference(ours: Sequence[Any], theirs: Sequence[Any]) -> str:
    """Where two message lists part, for an assertion message."""
    for index, (a, b) in enumerate(zip(ours, theirs, strict=False)):
        if a != b:
            return (
                f"message {index} differs:\n ours:   {json.dumps(a, ensure_ascii=False)[:600]}"
                f"\n theirs: {json.dumps(b, ensure_ascii=False)[:600]}"
            )
    return f"lengths differ: ours {len(ours)}, theirs {len(theirs)}"
