"""ContextreeSession: the SDK's Session protocol on a contextree session file."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from agents.memory import Session, SessionSettings
from agents.models.chatcmpl_converter import Converter
from agents.run_config import CallModelData, ModelInputData

from contextree.integrations.core import ManagedSession
from contextree.integrations.openai_agents import CLEAR_MARKER, POP_MARKER, ContextreeSession
from contextree.session import SessionTree
from differential.installs import find_pi, require
from differential.pi_checks import check_contexts
from provider_rules import openai_problems

pytestmark = pytest.mark.anyio

Json = dict[str, Any]

USER = {"role": "user", "content": "add 1 and 2, then 3 and 4"}
TURN: list[Json] = [
    {
        "type": "message",
        "role": "assistant",
        "id": "msg_1",
        "status": "completed",
        "content": [{"type": "output_text", "text": "Adding.", "annotations": []}],
    },
    {"type": "function_call", "call_id": "c1", "name": "add", "arguments": '{"a": 1, "b": 2}'},
    {"type": "function_call", "call_id": "c2", "name": "add", "arguments": '{"a": 3, "b": 4}'},
    {"type": "function_call_output", "call_id": "c1", "output": "3"},
    {"type": "function_call_output", "call_id": "c2", "output": "7"},
]
ANSWER = {
    "type": "message",
    "role": "assistant",
    "id": "msg_2",
    "status": "completed",
    "content": [{"type": "output_text", "text": "3 and 7.", "annotations": []}],
}


def open_session(path: Path, **options: Any) -> ContextreeSession:
    return ContextreeSession(ManagedSession.open(path, model="openai:gpt-4o"), **options)


async def filled(path: Path) -> ContextreeSession:
    session = open_session(path)
    await session.add_items([USER])  # type: ignore[list-item]
    await session.add_items(TURN)  # type: ignore[arg-type]
    await session.add_items([ANSWER])  # type: ignore[list-item]
    return session


def entry_ids(path: Path) -> list[str]:
    return [str(entry["id"]) for entry in SessionTree.open(path).get_entries()]


def stored_messages(path: Path) -> list[Json]:
    tree = SessionTree.open(path)
    return [e["message"] for e in tree.get_branch() if e["type"] == "message"]


async def test_it_is_an_sdk_session(tmp_path: Path) -> None:
    session = open_session(tmp_path / "s.jsonl")
    assert isinstance(session, Session)
    assert session.session_id == session.managed.tree.session_id


async def test_items_come_back_as_they_were_added(tmp_path: Path) -> None:
    session = await filled(tmp_path / "s.jsonl")

    assert await session.get_items() == [USER, *TURN, ANSWER]
    # ...from the file too, by a new process, as pi messages:
    again = open_session(tmp_path / "s.jsonl")
    assert await again.get_items() == [USER, *TURN, ANSWER]
    roles = [m["role"] for m in stored_messages(tmp_path / "s.jsonl")]
    assert roles == ["user", "assistant", "toolResult", "toolResult", "assistant"]
    assert [m["toolName"] for m in stored_messages(tmp_path / "s.jsonl")[2:4]] == ["add", "add"]


async def test_a_result_added_apart_from_its_call_gets_the_tool_name(tmp_path: Path) -> None:
    session = open_session(tmp_path / "s.jsonl")
    await session.add_items([USER, *TURN[:3]])  # type: ignore[list-item]
    await session.add_items(TURN[3:])  # type: ignore[arg-type]
    results = stored_messages(tmp_path / "s.jsonl")[2:]
    assert [m["toolName"] for m in results] == ["add", "add"]


async def test_a_limit_gives_the_latest_items_without_an_orphan_result(tmp_path: Path) -> None:
    session = await filled(tmp_path / "s.jsonl")

    assert await session.get_items(limit=1) == [ANSWER]
    assert await session.get_items(limit=2) == [ANSWER]  # the result of c2 lost its call
    assert await session.get_items(limit=4) == [TURN[2], TURN[4], ANSWER]
    assert await session.get_items(limit=6) == [*TURN, ANSWER]
    session.session_settings = SessionSettings(limit=1)
    assert await session.get_items() == [ANSWER]


async def test_pop_item_moves_the_leaf_back_and_keeps_the_file(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    session = await filled(path)
    await session.add_items(
        [{"type": "function_call", "call_id": "c3", "name": "add", "arguments": "{}"}]  # type: ignore[list-item]
    )
    entries_before = len(SessionTree.open(path).get_entries())

    assert await session.pop_item() == {
        "type": "function_call",
        "call_id": "c3",
        "name": "add",
        "arguments": "{}",
    }
    assert await session.pop_item() == ANSWER
    assert await session.get_items() == [USER, *TURN]
    # A message holding several items: its last one goes, the rest is written again.
    for _ in range(2):
        await session.pop_item()
    assert await session.pop_item() == TURN[2]
    items = await session.get_items()
    assert items[:3] == [USER, *TURN[:2]]
    # The call whose result was popped is answered for the model (the provider view).
    assert items[3]["type"] == "function_call_output" and items[3]["call_id"] == "c1"
    assert len(items) == 4
    tree = SessionTree.open(path)
    # Appended: a marker where each of the first four pops left the leaf, and the remainder.
    assert len(tree.get_entries()) == entries_before + 5
    markers = [e for e in tree.get_entries() if e.get("customType") == POP_MARKER]
    assert len(markers) == 4
    assert await open_session(path).get_items() == items  # the leaf is the file's


async def test_pop_item_on_an_empty_session_gives_none(tmp_path: Path) -> None:
    session = open_session(tmp_path / "s.jsonl")
    assert await session.pop_item() is None
    await session.add_items([USER])  # type: ignore[list-item]
    assert await session.pop_item() == USER
    assert await session.pop_item() is None
    assert await session.get_items() == []


async def test_clear_session_starts_a_new_root_and_deletes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    session = await filled(path)
    before = SessionTree.open(path).get_entries()

    await session.clear_session()

    assert await session.get_items() == []
    tree = SessionTree.open(path)
    assert tree.get_entries()[: len(before)] == before
    leaf = tree.get_leaf_entry()
    assert leaf is not None and leaf["parentId"] is None and leaf["customType"] == CLEAR_MARKER
    assert await open_session(path).get_items() == []  # cleared for the next process too
    await session.add_items([USER])  # type: ignore[list-item]
    assert await open_session(path).get_items() == [USER]


async def test_usage_without_the_runner_is_left_to_the_estimate(tmp_path: Path) -> None:
    session = await filled(tmp_path / "s.jsonl")
    assistant = stored_messages(tmp_path / "s.jsonl")[1]
    assert assistant["usage"]["totalTokens"] == 0
    assert (assistant["provider"], assistant["model"]) == ("openai", "gpt-4o")
    assert session.compactions == []


async def test_a_kept_part_that_starts_after_a_call_is_still_valid(tmp_path: Path) -> None:
    """A compaction whose kept part starts at a tool result (its call summarized away)."""
    path = tmp_path / "s.jsonl"
    session = await filled(path)
    tree = session.managed.tree
    second_result = [e for e in tree.get_branch() if e["type"] == "message"][3]
    assert second_result["message"]["role"] == "toolResult"
    tree.append_compaction("The user asked for two sums.", second_result["id"], 5_000)

    items = await session.get_items()

    assert items[0]["role"] == "user" and "two sums" in str(items[0]["content"])
    assert not any(item.get("type") == "function_call_output" for item in items)
    assert items[-1] == ANSWER
    assert openai_problems([dict(m) for m in Converter.items_to_messages(items)]) == []


async def test_the_input_filter_leaves_an_uncompacted_request_alone(tmp_path: Path) -> None:
    session = await filled(tmp_path / "s.jsonl")
    data = ModelInputData(input=[USER, *TURN, ANSWER], instructions="x")  # type: ignore[list-item]
    assert session.model_input_filter(CallModelData(data, agent=None, context=None)) is data  # type: ignore[arg-type]


async def test_the_input_filter_swaps_in_the_compacted_context(tmp_path: Path) -> None:
    session = await filled(tmp_path / "s.jsonl")
    tree = session.managed.tree
    kept = [e for e in tree.get_branch() if e["type"] == "message"][4]
    tree.append_compaction("Summed twice.", kept["id"], 5_000)
    new_call = {"type": "function_call", "call_id": "c9", "name": "add", "arguments": "{}"}
    sent = [USER, *TURN, ANSWER, new_call]
    data = ModelInputData(input=sent, instructions="x")  # type: ignore[arg-type]

    out = session.model_input_filter(CallModelData(data, agent=None, context=None))  # type: ignore[arg-type]

    assert out.instructions == "x"
    assert len(out.input) == 3 and "Summed twice." in str(out.input[0])
    assert out.input[1:] == [ANSWER, new_call]


async def test_a_pop_holds_for_the_next_process(tmp_path: Path) -> None:
    # The SDK's sessions forget a popped item for good; a file opens on its last entry, so
    # the new position is written (a marker that never reaches the model).
    path = tmp_path / "s.jsonl"
    session = await filled(path)

    assert await session.pop_item() == ANSWER  # a whole message: nothing to write again
    assert await open_session(path).get_items() == [USER, *TURN]
    assert await session.pop_item() == TURN[4]
    after = await open_session(path).get_items()
    assert after == await session.get_items()
    assert after[:4] == [USER, *TURN[:3]] and after[4]["call_id"] == "c1"  # c2: answered
    # Popping the first message leaves an empty conversation, also for the next process.
    first = open_session(tmp_path / "t.jsonl")
    await first.add_items([USER])  # type: ignore[list-item]
    assert await first.pop_item() == USER
    assert await open_session(tmp_path / "t.jsonl").get_items() == []
    # What comes next goes on from there.
    await session.add_items([ANSWER])  # type: ignore[list-item]
    assert await open_session(path).get_items() == [*after, ANSWER]


@pytest.mark.differential
async def test_pi_opens_the_file_where_pop_and_clear_left_it(tmp_path: Path) -> None:
    pi = require(find_pi(), "PI_UNAVAILABLE")
    path = tmp_path / "s.jsonl"
    session = await filled(path)
    for _ in range(3):  # the last one writes the message of c1 and c2 again without c2
        await session.pop_item()
    await session.add_items([{"role": "user", "content": "go on"}])  # type: ignore[list-item]
    await session.pop_item()
    popped = tmp_path / "popped.jsonl"
    shutil.copyfile(path, popped)
    expected = {popped: await session.get_items()}
    await session.clear_session()
    expected[path] = await session.get_items()

    answers = pi.run(
        [{"file": str(file), "leaves": entry_ids(file)} for file in expected],
        tmp_path / "pi-home",
    )

    for (file, items), answer in zip(expected.items(), answers, strict=True):
        tree = SessionTree.open(file)
        assert answer["leafId"] == tree.leaf_id  # pi opens it where contextree does
        assert check_contexts(tree, answer) == len(tree.get_entries())
        assert await open_session(file).get_items() == items  # which is where the SDK left it
