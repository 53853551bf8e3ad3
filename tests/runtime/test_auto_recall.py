"""recall.auto: once the path has a compaction, a user message that names words the model no
longer sees carries what recall finds for them, in the request only (the session keeps the
message as the user wrote it), the same bytes on every request after (a prompt cache's prefix)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from contextree.recall.auto import (
    AUTO_RECALL_CHARS,
    RecalledMessages,
    auto_recall,
    unseen_words,
)
from contextree.recall.tool import SessionRecall
from contextree.session.tree import SessionTree
from contextree.settings import Settings
from fakes.fake_llm import FakeLLMServer
from recall.recall_session import (
    ERROR,
    TOOL_DETAIL,
    add_turns,
    agent_on,
    compacted_file,
    fold_away,
)

_LEAD = "[From the condensed part of this conversation"



def _last_user(body: dict[str, Any]) -> str:
    user = [m for m in body["messages"] if m["role"] == "user"][-1]
    content = user["content"]
    return content if isinstance(content, str) else "\n".join(p["text"] for p in content)


@pytest.fixture
def compacted(tmp_path: Path) -> SessionTree:
    """A session compacted before the agent opens it, its recall index up to date (as after
    a compaction made here, or a search)."""
    tree = compacted_file(tmp_path / "s.jsonl")  # asyncio.run: outside the test's loop
    SessionRecall(tree).warm_up()
    return tree


def test_unseen_words_are_the_pointing_words_the_model_cannot_see() -> None:
    visible = "We fixed the retry logic. The minibus is booked."
    message = "Can Rashid still take the minibus on the 7th? Rashid's car is off the road."
    assert unseen_words(message, visible) == ["rashid", "7th", "road"]
    assert unseen_words("ok, the retry logic then", visible) == []


@pytest.mark.anyio
async def test_a_message_naming_a_condensed_detail_carries_it(
    fake_llm: FakeLLMServer, tmp_path: Path, compacted: SessionTree
) -> None:
    fake_llm.enqueue_text("It was 7.")
    fake_llm.enqueue_text("ok")
    agent = agent_on(compacted, fake_llm, tmp_path)
    # "seventh" is in no entry: searched for the word that is, not for both.
    await agent.prompt(f"What was {TOOL_DETAIL} set to, the seventh value?")
    first = fake_llm.requests[0].body
    text = _last_user(first)
    assert _LEAD in text and f'"{TOOL_DETAIL}"' in text and "seventh" not in text.split(_LEAD)[1]
    assert f"retries = 7 # {TOOL_DETAIL}" in text  # (an excerpt's spaces are one)
    assert len(text.split(_LEAD, 1)[1]) <= AUTO_RECALL_CHARS
    # The session keeps the message as the user wrote it.
    stored = [m for m in compacted.build_session_context().messages if m["role"] == "user"][-1]
    assert _LEAD not in str(stored["content"])
    # The next request sends the same bytes for that message (a cache's prefix).
    await agent.prompt("thanks")
    second = fake_llm.requests[1].body
    earlier = [m for m in second["messages"] if m["role"] == "user"][-2]
    assert earlier == [m for m in first["messages"] if m["role"] == "user"][-1]
    assert _LEAD not in _last_user(second)


@pytest.mark.anyio
async def test_nothing_is_added_for_words_the_model_sees_or_before_a_compaction(
    fake_llm: FakeLLMServer, tmp_path: Path, compacted: SessionTree
) -> None:
    fake_llm.enqueue_text("ok")
    await agent_on(compacted, fake_llm, tmp_path).prompt("go on with the filler steps")
    assert _LEAD not in _last_user(fake_llm.requests[0].body)
    fresh = SessionTree.open(tmp_path / "fresh.jsonl", cwd=str(tmp_path))
    add_turns(fresh, 1)
    fake_llm.enqueue_text("ok")
    await agent_on(fresh, fake_llm, tmp_path).prompt(f"what about {ERROR}?")
    assert _LEAD not in _last_user(fake_llm.requests[1].body)


@pytest.mark.anyio
async def test_recall_auto_can_be_turned_off(
    fake_llm: FakeLLMServer, tmp_path: Path, compacted: SessionTree
) -> None:
    fake_llm.enqueue_text("ok")
    settings = Settings(recall_auto=False)
    await agent_on(compacted, fake_llm, tmp_path, settings=settings).prompt(f"{TOOL_DETAIL}?")
    assert _LEAD not in _last_user(fake_llm.requests[0].body)


def test_no_entry_holding_the_words_finds_nothing(tmp_path: Path) -> None:
    tree = compacted_file(tmp_path / "s.jsonl")
    recall = SessionRecall(tree)
    recall.warm_up()
    assert auto_recall(recall, "what about the zebra crossing?", "") is None
    found = auto_recall(recall, f"and {ERROR}?", "")
    assert found is not None and ERROR in found
    recall.close()


@pytest.mark.anyio
async def test_a_search_that_fails_does_not_stop_the_turn(
    fake_llm: FakeLLMServer,
    tmp_path: Path,
    compacted: SessionTree,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    def broken(self: SessionRecall, term: str) -> bool:
        raise OSError("database is locked")

    monkeypatch.setattr(SessionRecall, "holds", broken)
    fake_llm.enqueue_text("ok")
    outcome = await agent_on(compacted, fake_llm, tmp_path).prompt(f"{TOOL_DETAIL}?")
    assert outcome is not None and len(fake_llm.requests) == 1
    assert _LEAD not in _last_user(fake_llm.requests[0].body)
    assert "database is locked" in caplog.text


def _ids(messages: list[Any]) -> list[str | None]:
    return [f"id{n}" for n in range(len(messages))]


def test_what_the_model_was_shown_is_not_searched_again(tmp_path: Path) -> None:
    tree = compacted_file(tmp_path / "s.jsonl")
    recall = SessionRecall(tree)
    recall.warm_up()
    memo = RecalledMessages()
    context = tree.build_session_context()
    first = {"role": "user", "content": f"what was {TOOL_DETAIL}?", "timestamp": 1}
    messages = [*context.messages, first]
    assert memo.find(messages, _ids(messages), recall) is not None
    # The next message names it again: the model has it in the first one's excerpts.
    second = {"role": "user", "content": [{"type": "text", "text": f"and {TOOL_DETAIL}?"}]}
    messages = [*messages, {"role": "assistant", "content": []}, second]
    assert memo.find(messages, _ids(messages), recall) is None
    shown = memo.apply(messages, _ids(messages))
    assert _LEAD in str(shown[len(context.messages)]["content"]) and shown[-1] is second
    assert first["content"] == f"what was {TOOL_DETAIL}?"  # the stored message is untouched
    recall.close()


def test_the_agents_own_prompt_is_not_searched_and_images_stay(tmp_path: Path) -> None:
    tree = compacted_file(tmp_path / "s.jsonl")
    recall = SessionRecall(tree)
    recall.warm_up()
    context = tree.build_session_context()
    synthetic = {"role": "user", "content": f"go on {TOOL_DETAIL}", "synthetic": True}
    messages = [*context.messages, synthetic]
    assert RecalledMessages().find(messages, _ids(messages), recall) is None
    image = {"type": "image", "data": "AAAA", "mimeType": "image/png"}
    asked = {"role": "user", "content": [{"type": "text", "text": f"{ERROR}?"}, image]}
    messages = [*context.messages, asked]
    memo = RecalledMessages()
    assert memo.find(messages, _ids(messages), recall) is not None
    carried = memo.apply(messages, _ids(messages))[-1]["content"]
    assert carried[:2] == asked["content"] and _LEAD in carried[2]["text"]
    assert len(asked["content"]) == 2
    recall.close()


def test_a_code_after_a_pasted_log_is_looked_for_first() -> None:
    log = " ".join(f"worker{n} started listening heartbeat" for n in range(5))
    words = unseen_words(f"{log}\nwhat about ERR_CONN_RESET then?", "", most=3)
    assert words[0] == "err_conn_reset" and len(words) == 3


def test_only_the_newest_four_messages_carry_what_was_found(tmp_path: Path) -> None:
    tree = SessionTree.open(tmp_path / "s.jsonl", cwd=str(tmp_path))
    codes = [f"locker{n}x" for n in range(5)]
    for n, code in enumerate(codes):
        tree.append_message({"role": "user", "content": f"{code} holds box {n}", "timestamp": n})
    fold_away(tree, "## Goal\nSort the lockers.")
    recall = SessionRecall(tree)
    recall.warm_up()
    memo = RecalledMessages()
    messages = list(tree.build_session_context().messages)
    start = len(messages)
    for code in codes:
        messages.append({"role": "user", "content": f"{code}?"})
        assert memo.find(messages, _ids(messages), recall) is not None, code
        messages.append({"role": "assistant", "content": []})
    shown = memo.apply(messages, _ids(messages))
    carrying = [at for at in range(start, len(messages)) if _LEAD in str(shown[at]["content"])]
    assert carrying == [start + 2, start + 4, start + 6, start + 8]
    recall.close()


@pytest.fixture
def cold(tmp_path: Path) -> SessionTree:
    """Compacted elsewhere (by pi, say) and never searched: no recall index yet."""
    return compacted_file(tmp_path / "cold.jsonl")


@pytest.mark.anyio
async def test_a_cold_index_waits_for_a_compaction_made_here(
    fake_llm: FakeLLMServer, tmp_path: Path, cold: SessionTree
) -> None:
    tree = cold
    fake_llm.enqueue_text("It was 7.")
    agent = agent_on(tree, fake_llm, tmp_path)
    await agent.prompt(f"What was {TOOL_DETAIL} set to?")
    assert _LEAD not in _last_user(fake_llm.requests[0].body)  # not indexed while one waits
    add_turns(tree, 60, start=100)
    fake_llm.enqueue_text("## Goal\nKeep going.")  # the summary of the compaction made here
    await agent.compact()
    fake_llm.enqueue_text("That was the reset.")
    await agent.prompt(f"and {ERROR}?")
    text = _last_user(fake_llm.requests[-1].body)
    assert _LEAD in text and ERROR in text.split(_LEAD, 1)[1]


def test_a_question_looks_for_the_words_the_summary_names_too(tmp_path: Path) -> None:
    # The summary names the retry logic; the file it was in is only in the condensed part.
    tree = compacted_file(tmp_path / "s.jsonl")
    recall = SessionRecall(tree)
    recall.warm_up()
    seen = "## Goal\nFix the retry logic; it works now."
    assert auto_recall(recall, "ok, the retry logic then.", seen) is None
    found = auto_recall(recall, "which file held the retry logic?", seen)
    assert found is not None and "src/net/client.py" in found
    recall.close()
