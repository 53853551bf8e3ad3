"""navigate_tree, persist_leaf and resolve_entry_id (pi-behaviour.md §9.4, DESIGN decision 8).

Modelled on pi's agent-session-tree-navigation tests (§13.2).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from branch_builders import assistant, linear, run, two_branches, user

from contextree.branching import (
    LEAF_CUSTOM_TYPE,
    NavigationResult,
    TreePreparation,
    navigate_tree,
    persist_leaf,
    resolve_entry_id,
)
from contextree.compaction.offline import OfflineSummarizer
from contextree.compaction.prompt_templates import load_prompt
from contextree.context.convert import branch_summary_text, convert_to_llm
from contextree.errors import BranchSummaryError, EntryNotFoundError, TreeError
from contextree.hooks.events import BeforeTreeEvent, BeforeTreeResult, SessionTreeEvent
from contextree.hooks.registry import BEFORE_TREE, TREE, HookRegistry
from contextree.llm.base import Completion
from contextree.llm.scripted import ScriptedClient
from contextree.session.tree import SessionTree
from contextree.settings.schema import BranchSummarySettings


@pytest.fixture
def session_file(tmp_path: Path) -> Path:
    return tmp_path / "session.jsonl"


def _texts(tree: SessionTree, leaf: str | None = None) -> list[str]:
    """The context at the leaf as the model sees it: one string per message."""
    out: list[str] = []
    for message in convert_to_llm(tree.build_session_context(leaf).messages):
        content = message["content"]
        out.append(
            content if isinstance(content, str) else "".join(b.get("text", "") for b in content)
        )
    return out


def _prompt(client: ScriptedClient, index: int = 0) -> str:
    return str(client.requests[index].messages[0]["content"][0]["text"])


# --- moving without a summary ---------------------------------------------------------------


def test_a_user_target_goes_to_the_editor_and_the_leaf_to_its_parent() -> None:
    tree = SessionTree.in_memory()
    u1, a1, u2, a2 = linear(tree, user("one"), assistant("two"), user("three"), assistant("4"))
    result = run(navigate_tree(tree, u2))
    assert result == NavigationResult(editor_text="three", new_leaf_id=a1, old_leaf_id=a2)
    assert tree.leaf_id == a1
    del u1


def test_a_root_user_target_puts_the_leaf_before_the_first_entry() -> None:
    tree = SessionTree.in_memory()
    u1, _ = linear(tree, user("first"), assistant("reply"))
    result = run(navigate_tree(tree, u1))
    assert result.editor_text == "first"
    assert result.new_leaf_id is None
    assert tree.leaf_id is None
    assert tree.build_session_context().messages == []


def test_editor_text_joins_the_text_blocks_and_skips_images() -> None:
    tree = SessionTree.in_memory()
    message = {
        "role": "user",
        "content": [
            {"type": "text", "text": "look at "},
            {"type": "image", "data": "AAAA", "mimeType": "image/png"},
            {"type": "text", "text": "this"},
        ],
        "timestamp": 1,
    }
    u1, _ = linear(tree, message, assistant("seen"))
    assert run(navigate_tree(tree, u1)).editor_text == "look at this"


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("plain note", "plain note"),
        ([{"type": "text", "text": "a"}, {"type": "text", "text": "b"}], "ab"),
    ],
)
def test_a_custom_message_target_behaves_like_a_user_message(content: Any, expected: str) -> None:
    tree = SessionTree.in_memory()
    (u1,) = linear(tree, user("one"))
    cm = tree.append_custom_message("ext.note", content)
    (a1,) = linear(tree, assistant("two"))
    result = run(navigate_tree(tree, cm))
    assert result.editor_text == expected
    assert tree.leaf_id == u1
    del a1


def test_a_non_user_target_becomes_the_leaf_with_no_editor_text() -> None:
    tree = SessionTree.in_memory()
    u1, a1, u2, a2 = linear(tree, user("one"), assistant("two"), user("three"), assistant("4"))
    result = run(navigate_tree(tree, a1))
    assert result.editor_text is None
    assert result.new_leaf_id == a1 == tree.leaf_id
    assert _texts(tree) == ["one", "two"]
    del u1, u2, a2


def test_without_summarize_nothing_is_written(session_file: Path) -> None:
    tree = SessionTree.open(session_file)
    ids = two_branches(tree)
    before = session_file.read_bytes()
    result = run(navigate_tree(tree, ids["a3"]))
    assert result.summary_entry is None
    assert session_file.read_bytes() == before
    assert tree.leaf_id == ids["a3"]
    # pi's behaviour: the move is in memory only; a reload is back on the last line.
    assert SessionTree.open(session_file).leaf_id == ids["a2"]


def test_the_same_position_is_a_no_op() -> None:
    tree = SessionTree.in_memory()
    _, a1 = linear(tree, user("one"), assistant("two"))
    hooks = HookRegistry()
    events: list[Any] = []
    hooks.on(BEFORE_TREE, events.append)
    hooks.on(TREE, events.append)
    client = ScriptedClient()
    result = run(navigate_tree(tree, a1, summarize=True, client=client, hooks=hooks))
    assert result == NavigationResult(cancelled=False, new_leaf_id=a1, old_leaf_id=a1)
    assert events == [] and client.requests == [] and len(tree) == 2


def test_a_label_on_the_same_position_is_still_written() -> None:
    tree = SessionTree.in_memory()
    _, a1 = linear(tree, user("one"), assistant("two"))
    result = run(navigate_tree(tree, a1, label="here"))
    assert tree.get_label(a1) == "here"
    assert result.label_entry_id is not None and not result.cancelled
    assert result.old_leaf_id == a1 and result.new_leaf_id == tree.leaf_id == result.label_entry_id
    assert _texts(tree) == ["one", "two"]


def test_unknown_target_and_missing_model_raise() -> None:
    tree = SessionTree.in_memory()
    _, a1 = linear(tree, user("one"), assistant("two"))
    with pytest.raises(EntryNotFoundError, match="Entry deadbeef not found"):
        run(navigate_tree(tree, "deadbeef"))
    with pytest.raises(ValueError, match="No model available for summarization"):
        run(navigate_tree(tree, a1 + "x", summarize=True))
    assert tree.leaf_id == a1


# --- moving with a summary ------------------------------------------------------------------


def test_summarize_writes_a_branch_summary_at_the_new_position(session_file: Path) -> None:
    tree = SessionTree.open(session_file)
    ids = two_branches(tree)
    client = ScriptedClient(default="## Goal\nParser work")
    result = run(navigate_tree(tree, ids["u3"], summarize=True, client=client))
    entry = result.summary_entry
    assert entry is not None
    # Nested user target: the summary hangs off the target's parent, beside the target.
    assert entry["parentId"] == ids["a1"] == entry["fromId"]
    assert tree.get_entry(ids["u3"])["parentId"] == ids["a1"]  # type: ignore[index]
    assert tree.leaf_id == entry["id"] == result.new_leaf_id
    assert result.editor_text == "Write the docs"
    assert entry["fromHook"] is False and entry["fromExtension"] is False
    assert entry["details"] == {"readFiles": [], "modifiedFiles": ["src/a.py"]}
    assert entry["summary"].startswith(f"{load_prompt('branch-preamble')}\n\n## Goal\nParser work")
    assert entry["summary"].endswith("<modified-files>\nsrc/a.py\n</modified-files>")
    assert "Fix the parser" in _prompt(client) and "Write the docs" not in _prompt(client)


def test_summarize_to_a_root_user_message_attaches_the_summary_at_the_root() -> None:
    tree = SessionTree.in_memory()
    u1, _, _, _ = linear(tree, user("one"), assistant("two"), user("3"), assistant("4"))
    result = run(navigate_tree(tree, u1, summarize=True, client=ScriptedClient(default="s")))
    entry = result.summary_entry
    assert entry is not None
    assert entry["parentId"] is None and entry["fromId"] == "root"
    assert tree.leaf_id == entry["id"]


def test_summarize_to_an_assistant_attaches_the_summary_under_it() -> None:
    tree = SessionTree.in_memory()
    ids = two_branches(tree)
    result = run(navigate_tree(tree, ids["a3"], summarize=True, client=ScriptedClient(default="s")))
    entry = result.summary_entry
    assert entry is not None and entry["parentId"] == ids["a3"] == entry["fromId"]
    assert result.editor_text is None


def test_the_context_after_a_summary_holds_the_branch_summary(session_file: Path) -> None:
    tree = SessionTree.open(session_file)
    ids = two_branches(tree)
    run(navigate_tree(tree, ids["a3"], summarize=True, client=ScriptedClient(default="Did X")))
    summary = tree.get_leaf_entry()["summary"]  # type: ignore[index]
    expected = [
        "Start the project",
        "Started.",
        "Write the docs",
        "Reading docs.",
        branch_summary_text(summary),
    ]
    assert _texts(tree) == expected
    assert tree.build_session_context().messages[-1]["role"] == "branchSummary"
    # The file reopens with the summary as the leaf and the same context.
    reopened = SessionTree.open(session_file)
    assert reopened.leaf_id == tree.leaf_id
    assert _texts(reopened) == expected


def test_summarize_with_nothing_abandoned_only_moves() -> None:
    tree = SessionTree.in_memory()
    u1, a1, u2, a2 = linear(tree, user("one"), assistant("two"), user("3"), assistant("4"))
    tree.branch(a1)
    client = ScriptedClient()
    result = run(navigate_tree(tree, a2, summarize=True, client=client))
    assert result.summary_entry is None and client.requests == []
    assert tree.leaf_id == a2 and len(tree) == 4
    del u1, u2


def test_a_branch_of_only_tool_results_is_summarized_as_no_content() -> None:
    tree = SessionTree.in_memory()
    u1, a1 = linear(tree, user("one"), assistant("two"))
    tree.append_message(
        {
            "role": "toolResult",
            "toolCallId": "c",
            "toolName": "read",
            "content": [],
            "isError": False,
        }
    )
    client = ScriptedClient()
    result = run(navigate_tree(tree, a1, summarize=True, client=client))
    assert result.summary_entry is not None
    assert result.summary_entry["summary"] == "No content to summarize"
    assert client.requests == []
    del u1


def test_navigating_back_and_forth_between_branches() -> None:
    tree = SessionTree.in_memory()
    ids = two_branches(tree)
    client = ScriptedClient()
    client.enqueue_text("Summary of A")
    client.enqueue_text("Summary of B")
    first = run(navigate_tree(tree, ids["a3"], summarize=True, client=client))
    assert first.summary_entry is not None
    second = run(navigate_tree(tree, ids["a2"], summarize=True, client=client))
    assert second.summary_entry is not None
    # Leaving B abandons B's messages and the summary of A that hung off a3.
    assert "Write the docs" in _prompt(client, 1)
    assert "Summary of A" in _prompt(client, 1)
    assert "Fix the parser" not in _prompt(client, 1)
    assert second.summary_entry["parentId"] == ids["a2"]
    assert _texts(tree)[:4] == ["Start the project", "Started.", "Fix the parser", "Fixed it."]
    assert "Summary of B" in _texts(tree)[4]
    # And back again without a summary: the first summary's position is a valid target.
    third = run(navigate_tree(tree, first.summary_entry["id"]))
    assert tree.leaf_id == first.summary_entry["id"] and third.summary_entry is None
    assert "Summary of A" in _texts(tree)[-1]


def test_file_lists_accumulate_across_branch_summaries() -> None:
    tree = SessionTree.in_memory()
    ids = two_branches(tree)
    client = ScriptedClient(default="text")
    first = run(navigate_tree(tree, ids["a3"], summarize=True, client=client))
    assert first.summary_entry is not None
    # On branch B now (below the first summary): read one more file, then leave for a1.
    linear(tree, assistant("", ("read", {"path": "notes.txt"})))
    second = run(navigate_tree(tree, ids["a1"], summarize=True, client=client))
    entry = second.summary_entry
    assert entry is not None
    assert entry["details"] == {
        "readFiles": ["docs/b.md", "notes.txt"],
        "modifiedFiles": ["src/a.py"],
    }
    assert entry["summary"].endswith(
        "<read-files>\ndocs/b.md\nnotes.txt\n</read-files>\n\n"
        "<modified-files>\nsrc/a.py\n</modified-files>"
    )


def test_the_budget_comes_from_the_client_window_and_the_reserve_setting() -> None:
    tree = SessionTree.in_memory()
    (u0,) = linear(tree, user("root"))
    for i in range(6):
        linear(tree, user(f"m{i} " + "x" * 397))  # 100 tokens each
    client = ScriptedClient(name="openai:gpt-4", default="s")  # an 8192-token window
    settings = BranchSummarySettings(reserve_tokens=8192 - 250)
    run(navigate_tree(tree, u0, summarize=True, client=client, settings=settings))
    prompt = _prompt(client)
    assert "m3 " not in prompt and "m4 " in prompt and "m5 " in prompt


def test_an_explicit_context_window_wins() -> None:
    tree = SessionTree.in_memory()
    (u0,) = linear(tree, user("root"))
    for i in range(6):
        linear(tree, user(f"m{i} " + "x" * 397))
    client = ScriptedClient(name="openai:gpt-4", default="s")
    settings = BranchSummarySettings(reserve_tokens=1000)
    run(
        navigate_tree(
            tree, u0, summarize=True, client=client, settings=settings, context_window=1350
        )
    )
    assert "m2 " not in _prompt(client) and "m3 " in _prompt(client)


def test_custom_instructions_are_appended_or_replace_the_prompt() -> None:
    tree = SessionTree.in_memory()
    ids = two_branches(tree)
    client = ScriptedClient(default="short")
    run(navigate_tree(tree, ids["a3"], summarize=True, client=client, custom_instructions="API"))
    assert _prompt(client, 0).endswith(f"{load_prompt('branch-summary')}\n\nAdditional focus: API")
    run(
        navigate_tree(
            tree,
            ids["a1"],
            summarize=True,
            client=client,
            custom_instructions="Under 20 words.",
            replace_instructions=True,
        )
    )
    assert _prompt(client, 1).endswith("</conversation>\n\nUnder 20 words.")


# --- cancellation and failure ---------------------------------------------------------------


def test_cancelling_during_the_summary_writes_nothing(session_file: Path) -> None:
    tree = SessionTree.open(session_file)
    ids = two_branches(tree)
    before = session_file.read_bytes()

    async def scenario() -> NavigationResult:
        gate = asyncio.Event()
        client = ScriptedClient(gate=gate, default="never used")
        task = asyncio.create_task(navigate_tree(tree, ids["u3"], summarize=True, client=client))
        while not client.requests:
            await asyncio.sleep(0)
        task.cancel()
        return await task

    result = run(scenario())
    assert result == NavigationResult(
        cancelled=True, aborted=True, new_leaf_id=ids["a2"], old_leaf_id=ids["a2"]
    )
    assert session_file.read_bytes() == before
    assert tree.leaf_id == ids["a2"]


def test_an_aborted_answer_writes_nothing(session_file: Path) -> None:
    tree = SessionTree.open(session_file)
    ids = two_branches(tree)
    before = session_file.read_bytes()
    client = ScriptedClient()
    client.enqueue(Completion(content=[], stop_reason="aborted", error_message="aborted"))
    events: list[Any] = []
    hooks = HookRegistry()
    hooks.on(TREE, events.append)
    result = run(navigate_tree(tree, ids["a3"], summarize=True, client=client, hooks=hooks))
    assert result.cancelled and result.aborted
    assert session_file.read_bytes() == before
    assert tree.leaf_id == ids["a2"]
    assert events == []


def test_a_failed_summary_raises_and_writes_nothing(session_file: Path) -> None:
    tree = SessionTree.open(session_file)
    ids = two_branches(tree)
    before = session_file.read_bytes()
    client = ScriptedClient()
    client.enqueue(Completion(content=[], stop_reason="error", error_message="quota exceeded"))
    with pytest.raises(BranchSummaryError, match="quota exceeded") as caught:
        run(navigate_tree(tree, ids["a3"], summarize=True, client=client, label="x"))
    assert caught.value.reason == "quota exceeded"
    assert session_file.read_bytes() == before
    assert tree.leaf_id == ids["a2"]


# --- labels ---------------------------------------------------------------------------------


def test_a_label_without_a_summary_goes_on_the_target_and_ends_the_leaf_there(
    session_file: Path,
) -> None:
    tree = SessionTree.open(session_file)
    ids = two_branches(tree)
    result = run(navigate_tree(tree, ids["u3"], label="docs start"))
    assert tree.get_label(ids["u3"]) == "docs start"
    label_entry = tree.get_entry(result.label_entry_id or "")
    assert label_entry is not None
    # As in pi: the label entry is appended at the new position and becomes the leaf.
    assert label_entry["parentId"] == ids["a1"]
    assert tree.leaf_id == result.new_leaf_id == label_entry["id"]
    assert _texts(tree) == ["Start the project", "Started."]
    # The label entry is the last line, so a reload lands on the new position too.
    assert _texts(SessionTree.open(session_file)) == ["Start the project", "Started."]


def test_a_label_with_a_summary_goes_on_the_summary() -> None:
    tree = SessionTree.in_memory()
    ids = two_branches(tree)
    result = run(
        navigate_tree(
            tree, ids["a3"], summarize=True, client=ScriptedClient(default="s"), label="left A"
        )
    )
    assert result.summary_entry is not None
    assert tree.get_label(result.summary_entry["id"]) == "left A"
    assert tree.get_label(ids["a3"]) is None
    assert tree.leaf_id == result.label_entry_id


# --- hooks ----------------------------------------------------------------------------------


def test_a_hook_sees_the_preparation_and_can_cancel(session_file: Path) -> None:
    tree = SessionTree.open(session_file)
    ids = two_branches(tree)
    before = session_file.read_bytes()
    seen: list[TreePreparation] = []

    def cancel(event: BeforeTreeEvent) -> dict[str, Any]:
        seen.append(event.preparation)
        return {"cancel": True}

    hooks = HookRegistry()
    hooks.on(BEFORE_TREE, cancel)
    client = ScriptedClient()
    result = run(
        navigate_tree(
            tree,
            ids["a3"],
            summarize=True,
            client=client,
            hooks=hooks,
            custom_instructions="focus",
            label="lbl",
        )
    )
    assert result == NavigationResult(
        cancelled=True, aborted=False, new_leaf_id=ids["a2"], old_leaf_id=ids["a2"]
    )
    assert client.requests == [] and session_file.read_bytes() == before
    (prep,) = seen
    assert prep.target_id == ids["a3"] and prep.old_leaf_id == ids["a2"]
    assert prep.common_ancestor_id == ids["a1"]
    assert [e["id"] for e in prep.entries_to_summarize] == [ids["u2"], ids["a2"]]
    assert prep.user_wants_summary is True
    assert (prep.custom_instructions, prep.replace_instructions, prep.label) == (
        "focus",
        False,
        "lbl",
    )


def test_a_hook_summary_is_used_with_from_extension_and_its_details() -> None:
    tree = SessionTree.in_memory()
    ids = two_branches(tree)
    hooks = HookRegistry()
    hooks.on(
        BEFORE_TREE,
        lambda event: {"summary": {"summary": "From the hook", "details": {"custom": 1}}},
    )
    events: list[SessionTreeEvent] = []
    hooks.on(TREE, events.append)
    client = ScriptedClient()
    result = run(navigate_tree(tree, ids["a3"], summarize=True, client=client, hooks=hooks))
    entry = result.summary_entry
    assert entry is not None and client.requests == []
    assert entry["summary"] == "From the hook"
    assert entry["details"] == {"custom": 1}
    assert entry["fromHook"] is True and entry["fromExtension"] is True
    assert result.from_extension is True
    assert events == [
        SessionTreeEvent(
            new_leaf_id=entry["id"],
            old_leaf_id=ids["a2"],
            summary_entry=entry,
            from_extension=True,
        )
    ]


def test_a_hook_summary_is_ignored_without_summarize() -> None:
    tree = SessionTree.in_memory()
    ids = two_branches(tree)
    hooks = HookRegistry()
    hooks.on(BEFORE_TREE, lambda event: BeforeTreeResult(summary={"summary": "unused"}))
    result = run(navigate_tree(tree, ids["a3"], hooks=hooks))
    assert result.summary_entry is None and tree.leaf_id == ids["a3"]


def test_a_hook_summary_is_used_even_when_nothing_is_abandoned() -> None:
    tree = SessionTree.in_memory()
    _, a1, _, a2 = linear(tree, user("one"), assistant("two"), user("3"), assistant("4"))
    tree.branch(a1)
    hooks = HookRegistry()
    hooks.on(BEFORE_TREE, lambda event: BeforeTreeResult(summary={"summary": "hook text"}))
    result = run(navigate_tree(tree, a2, summarize=True, client=ScriptedClient(), hooks=hooks))
    assert result.summary_entry is not None
    assert result.summary_entry["parentId"] == a2


@pytest.mark.parametrize(
    ("hook_result", "prompt_ending", "label"),
    [
        pytest.param(
            BeforeTreeResult(
                custom_instructions="hook focus", replace_instructions=True, label="hook label"
            ),
            "</conversation>\n\nhook focus",
            "hook label",
            id="overrides",
        ),
        pytest.param(
            {"customInstructions": None, "label": None},
            load_prompt("branch-summary"),
            None,
            id="a-dict-with-null-overrides-clears-them",
        ),
    ],
)
def test_a_hook_can_override_instructions_and_label(
    hook_result: BeforeTreeResult | dict[str, Any], prompt_ending: str, label: str | None
) -> None:
    tree = SessionTree.in_memory()
    ids = two_branches(tree)
    hooks = HookRegistry()
    hooks.on(BEFORE_TREE, lambda event: hook_result)
    client = ScriptedClient(default="s")
    result = run(
        navigate_tree(
            tree,
            ids["a3"],
            summarize=True,
            client=client,
            hooks=hooks,
            custom_instructions="my focus",
            label="my label",
        )
    )
    assert _prompt(client).endswith(prompt_ending)
    assert result.summary_entry is not None
    assert tree.get_label(result.summary_entry["id"]) == label
    assert (result.label_entry_id is None) == (label is None)


def test_a_throwing_hook_is_reported_and_ignored() -> None:
    tree = SessionTree.in_memory()
    ids = two_branches(tree)
    failures: list[Any] = []
    hooks = HookRegistry(on_error=failures.append)

    def broken(event: BeforeTreeEvent) -> None:
        raise RuntimeError("hook bug")

    hooks.on(BEFORE_TREE, broken)
    hooks.on(TREE, broken)
    client = ScriptedClient(default="generated")
    result = run(navigate_tree(tree, ids["a3"], summarize=True, client=client, hooks=hooks))
    assert result.summary_entry is not None and len(client.requests) == 1
    assert [f.event for f in failures] == [BEFORE_TREE, TREE]


def test_session_tree_reports_the_move_without_a_summary() -> None:
    tree = SessionTree.in_memory()
    ids = two_branches(tree)
    events: list[SessionTreeEvent] = []
    hooks = HookRegistry()
    hooks.on(TREE, events.append)
    run(navigate_tree(tree, ids["u3"], hooks=hooks))
    assert events == [SessionTreeEvent(new_leaf_id=ids["a1"], old_leaf_id=ids["a2"])]


async def _async_summary(event: BeforeTreeEvent) -> dict[str, Any]:
    return {"summary": {"summary": f"{len(event.preparation.entries_to_summarize)} entries"}}


def test_an_async_hook_works_too() -> None:
    tree = SessionTree.in_memory()
    ids = two_branches(tree)
    hooks = HookRegistry()
    hooks.on(BEFORE_TREE, _async_summary)
    result = run(
        navigate_tree(tree, ids["a3"], summarize=True, client=ScriptedClient(), hooks=hooks)
    )
    assert result.summary_entry is not None
    assert result.summary_entry["summary"] == "2 entries"


# --- the offline summarizer -----------------------------------------------------------------


def test_the_offline_summarizer_end_to_end(session_file: Path) -> None:
    tree = SessionTree.open(session_file)
    ids = two_branches(tree)
    result = run(
        navigate_tree(
            tree, ids["u3"], summarize=True, client=OfflineSummarizer(), context_window=128_000
        )
    )
    entry = result.summary_entry
    assert entry is not None
    summary = entry["summary"]
    assert summary.startswith(load_prompt("branch-preamble") + "\n\n")
    assert "Fix the parser" in summary
    assert "src/a.py" in summary
    assert summary.count("<modified-files>") == 1
    reopened = SessionTree.open(session_file)
    assert reopened.leaf_id == entry["id"]
    assert _texts(reopened)[-1] == branch_summary_text(summary)


# --- persist_leaf and resolve_entry_id ------------------------------------------------------


def test_persist_leaf_records_a_move_so_that_a_reload_keeps_it(session_file: Path) -> None:
    tree = SessionTree.open(session_file)
    ids = two_branches(tree)
    run(navigate_tree(tree, ids["a3"]))
    entry_id = persist_leaf(tree)
    assert entry_id is not None
    entry = tree.get_entry(entry_id)
    assert entry is not None
    assert entry["type"] == "custom" and entry["customType"] == LEAF_CUSTOM_TYPE
    assert entry["parentId"] == ids["a3"] and entry["data"] == {"leafId": ids["a3"]}
    reopened = SessionTree.open(session_file)
    assert reopened.leaf_id == entry_id
    assert _texts(reopened) == ["Start the project", "Started.", "Write the docs", "Reading docs."]
    # Already where a reload lands: nothing more to write.
    assert persist_leaf(tree) is None
    assert len(SessionTree.open(session_file)) == len(tree)


def test_a_branch_of_only_leaf_markers_is_not_summarized() -> None:
    tree = SessionTree.in_memory()
    ids = two_branches(tree)
    run(navigate_tree(tree, ids["u3"]))  # the leaf goes to a1
    assert persist_leaf(tree) is not None
    client = ScriptedClient()
    result = run(navigate_tree(tree, ids["a2"], summarize=True, client=client))
    assert result.summary_entry is None and client.requests == []
    assert tree.leaf_id == ids["a2"]


def test_persist_leaf_before_the_first_entry_starts_an_empty_root(session_file: Path) -> None:
    tree = SessionTree.open(session_file)
    u1, _ = linear(tree, user("one"), assistant("two"))
    run(navigate_tree(tree, u1))
    entry_id = persist_leaf(tree)
    assert entry_id is not None
    reopened = SessionTree.open(session_file)
    assert reopened.get_leaf_entry()["parentId"] is None  # type: ignore[index]
    assert reopened.build_session_context().messages == []


def test_persist_leaf_on_an_empty_session_writes_nothing() -> None:
    assert persist_leaf(SessionTree.in_memory()) is None


def test_resolve_entry_id_takes_full_ids_and_unique_prefixes() -> None:
    tree = SessionTree.in_memory()
    ids = two_branches(tree)
    a2 = ids["a2"]
    assert resolve_entry_id(tree, a2) == a2
    others = {v for k, v in ids.items() if k != "a2"}
    prefix = next(a2[:n] for n in range(1, 9) if not any(o.startswith(a2[:n]) for o in others))
    assert resolve_entry_id(tree, prefix) == a2
    with pytest.raises(EntryNotFoundError):
        resolve_entry_id(tree, "zz")
    with pytest.raises(EntryNotFoundError):
        resolve_entry_id(tree, "")


def test_resolve_entry_id_lists_candidates_when_ambiguous() -> None:
    tree = SessionTree.in_memory()
    u1, a1 = linear(tree, user("one"), assistant("two"))
    for entry_id, parent in (("abc00001", a1), ("abc00002", a1)):
        tree.append_entry(
            {
                "type": "message",
                "id": entry_id,
                "parentId": parent,
                "timestamp": "2026-01-01T00:00:00.000Z",
                "message": user(entry_id),
            }
        )
    with pytest.raises(TreeError, match=r'"abc" matches 2 entries \(abc00001, abc00002\)'):
        resolve_entry_id(tree, "abc")
    del u1


# --- navigate_tree(persist=True): the one "move, then keep it on disk" ----------------------


def test_persist_true_records_a_plain_move_on_disk(session_file: Path) -> None:
    tree = SessionTree.open(session_file)
    ids = two_branches(tree)
    result = run(navigate_tree(tree, ids["a3"], persist=True))
    assert result.new_leaf_id == ids["a3"]
    assert result.leaf_entry_id is not None
    entry = tree.get_entry(result.leaf_entry_id)
    assert entry is not None and entry["customType"] == LEAF_CUSTOM_TYPE
    assert SessionTree.open(session_file).leaf_id == result.leaf_entry_id
    # without persist the move stays in memory (pi's behaviour)
    plain = run(navigate_tree(tree, ids["a2"]))
    assert plain.leaf_entry_id is None
    assert SessionTree.open(session_file).leaf_id == result.leaf_entry_id


def test_persist_true_writes_no_marker_after_a_summary_or_a_label(session_file: Path) -> None:
    tree = SessionTree.open(session_file)
    ids = two_branches(tree)
    summarized = run(
        navigate_tree(tree, ids["a3"], summarize=True, client=OfflineSummarizer(), persist=True)
    )
    assert summarized.summary_entry is not None and summarized.leaf_entry_id is None
    labelled = run(navigate_tree(tree, ids["a1"], label="fork point", persist=True))
    assert labelled.label_entry_id is not None and labelled.leaf_entry_id is None
    assert SessionTree.open(session_file).leaf_id == labelled.label_entry_id
