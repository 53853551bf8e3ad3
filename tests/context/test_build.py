"""``build_session_context`` (pi-behaviour.md §3.1; the cases of pi's build-context.test.ts)."""

from __future__ import annotations

from typing import Any

import pytest

from contextree.context.build import (
    ModelRef,
    SessionContext,
    build_context_from_path,
    build_session_context,
    message_from_entry,
)
from contextree.entries.ids import iso_to_ms
from contextree.session import SessionTree
from core_helpers import Chain, assistant, header, iso, jsonl, roles, tool_call, tool_result, user


def _texts(messages: list[dict[str, Any]]) -> list[str]:
    out = []
    for m in messages:
        if m["role"] in ("compactionSummary", "branchSummary"):
            out.append(f"[{m['summary']}]")
        elif isinstance(m.get("content"), str):
            out.append(m["content"])
        else:
            out.append(m["content"][0]["text"])
    return out


def _conversation() -> Chain:
    chain = Chain()
    chain.msg(user("u1"))
    chain.msg(assistant("a1"))
    chain.msg(user("u2"))
    chain.msg(assistant("a2"))
    return chain


def test_empty_entries_give_the_defaults() -> None:
    assert build_session_context([]) == SessionContext([], "off", None)
    context = build_session_context([])
    assert (context.messages, context.thinking_level, context.model) == ([], "off", None)


def test_a_null_leaf_gives_an_empty_context() -> None:
    chain = _conversation()
    chain.add("thinking_level_change", thinkingLevel="high")
    assert build_session_context(chain.entries, None) == SessionContext()


def test_plain_conversation_in_order_with_model_from_the_assistant() -> None:
    chain = _conversation()
    context = build_session_context(chain.entries)
    assert _texts(context.messages) == ["u1", "a1", "u2", "a2"]
    assert context.messages[1] is chain.entries[1]["message"]  # the message as stored
    assert context.model == ModelRef("anthropic", "claude-sonnet-4-5")


def test_thinking_level_and_pi_model_changes_are_tracked() -> None:
    chain = Chain()
    chain.add("thinking_level_change", thinkingLevel="high")
    chain.msg(user("u"))
    chain.msg(assistant("a", provider="anthropic", model="claude-opus"))
    chain.add("model_change", provider="openai", modelId="gpt-4o")
    chain.add("thinking_level_change", thinkingLevel="low")
    context = build_session_context(chain.entries)
    assert context.thinking_level == "low"
    assert context.model == ModelRef("openai", "gpt-4o")
    assert context.model.spec == "openai/gpt-4o"
    # pi: whichever comes last wins, so a later assistant reply overrides the model_change.
    chain.msg(assistant("b", provider="google", model="gemini"))
    assert build_session_context(chain.entries).model == ModelRef("google", "gemini")


def test_the_forks_model_change_shape_and_null_thinking() -> None:
    chain = Chain()
    chain.msg(user("u"))
    chain.add("model_change", model="openai/gpt-4o")  # no role: the default model
    chain.add("thinking_level_change", thinkingLevel=None)  # the fork's "off"
    assert build_session_context(chain.entries).model == ModelRef("openai", "gpt-4o")
    assert build_session_context(chain.entries).thinking_level == "off"
    chain.add("model_change", model="anthropic/claude-haiku", role="default")
    assert build_session_context(chain.entries).model == ModelRef("anthropic", "claude-haiku")
    chain.add("model_change", model="openai/gpt-4o-mini", role="smol")  # not the session model
    assert build_session_context(chain.entries).model == ModelRef("anthropic", "claude-haiku")


def test_compaction_summary_comes_before_kept_messages() -> None:
    chain = _conversation()
    u2 = chain.entries[2]
    compaction = chain.add("compaction", summary="S", firstKeptEntryId=u2["id"], tokensBefore=9)
    chain.msg(user("u3"))
    chain.msg(assistant("a3"))
    messages = build_session_context(chain.entries).messages
    assert _texts(messages) == ["[S]", "u2", "a2", "u3", "a3"]
    assert messages[0] == {
        "role": "compactionSummary",
        "summary": "S",
        "tokensBefore": 9,
        "timestamp": iso_to_ms(compaction["timestamp"]),
    }


def test_keep_from_first_keeps_everything_before_the_compaction() -> None:
    chain = _conversation()
    chain.add("compaction", summary="S", firstKeptEntryId="e001", tokensBefore=1)
    chain.msg(user("u3"))
    assert _texts(build_session_context(chain.entries).messages) == [
        "[S]",
        "u1",
        "a1",
        "u2",
        "a2",
        "u3",
    ]


def test_a_first_kept_id_missing_before_the_compaction_keeps_nothing() -> None:
    chain = _conversation()
    chain.add("compaction", summary="S", firstKeptEntryId="nowhere", tokensBefore=1)
    chain.msg(user("u3"))
    assert _texts(build_session_context(chain.entries).messages) == ["[S]", "u3"]


def test_the_latest_compaction_wins() -> None:
    chain = _conversation()
    chain.add("compaction", summary="S1", firstKeptEntryId="e003", tokensBefore=1)  # e005
    chain.msg(user("u3"))  # e006
    chain.msg(assistant("a3"))  # e007
    # The second compaction keeps from u2, so the first compaction lies in its kept range and
    # still contributes nothing: only the latest one counts.
    chain.add("compaction", summary="S2", firstKeptEntryId="e003", tokensBefore=2)
    chain.msg(user("u4"))
    messages = build_session_context(chain.entries).messages
    assert _texts(messages) == ["[S2]", "u2", "a2", "u3", "a3", "u4"]
    assert roles(messages).count("compactionSummary") == 1


def test_openai_replacement_history_replaces_the_kept_messages() -> None:
    chain = _conversation()
    history = [{"type": "message", "role": "user", "content": "native"}, {"type": "compaction"}]
    chain.add(
        "compaction",
        summary="S",
        firstKeptEntryId="e001",
        tokensBefore=5,
        preserveData={
            "openaiRemoteCompaction": {
                "provider": "openai",
                "replacementHistory": history,
                "compactionItem": {"type": "compaction"},
            }
        },
    )
    chain.msg(user("after"))
    messages = build_session_context(chain.entries).messages
    assert _texts(messages) == ["[S]", "after"]
    assert messages[0]["providerPayload"] == {
        "type": "openaiResponsesHistory",
        "provider": "openai",
        "items": history,
    }


@pytest.mark.parametrize(
    "remote",
    [
        {"provider": "", "replacementHistory": []},
        {"provider": "openai", "replacementHistory": "not a list"},
        {"replacementHistory": []},
        "not an object",
    ],
)
def test_incomplete_remote_data_keeps_messages_as_usual(remote: Any) -> None:
    chain = _conversation()
    chain.add(
        "compaction",
        summary="S",
        firstKeptEntryId="e003",
        tokensBefore=5,
        preserveData={"openaiRemoteCompaction": remote},
    )
    messages = build_session_context(chain.entries).messages
    assert _texts(messages) == ["[S]", "u2", "a2"]
    assert "providerPayload" not in messages[0]


def test_the_path_follows_the_leaf() -> None:
    chain = Chain()
    root = chain.msg(user("root"))
    chain.msg(assistant("left"))
    left_leaf = chain.msg(user("left 2"))
    chain.msg(assistant("right"), parent=root["id"])
    right_leaf = chain.msg(user("right 2"))
    assert _texts(build_session_context(chain.entries, left_leaf["id"]).messages) == [
        "root",
        "left",
        "left 2",
    ]
    assert _texts(build_session_context(chain.entries, right_leaf["id"]).messages) == [
        "root",
        "right",
        "right 2",
    ]
    assert _texts(build_session_context(chain.entries, root["id"]).messages) == ["root"]


def test_a_branch_summary_in_the_path_becomes_a_message() -> None:
    chain = Chain()
    root = chain.msg(user("root"))
    chain.msg(assistant("abandoned"))
    summary = chain.add("branch_summary", parent=root["id"], fromId=root["id"], summary="tried X")
    chain.msg(user("next"))
    messages = build_session_context(chain.entries).messages
    assert _texts(messages) == ["root", "[tried X]", "next"]
    assert messages[1] == {
        "role": "branchSummary",
        "summary": "tried X",
        "fromId": root["id"],
        "timestamp": iso_to_ms(summary["timestamp"]),
    }


def test_an_empty_branch_summary_produces_nothing() -> None:
    chain = Chain()
    chain.msg(user("root"))
    empty = chain.add("branch_summary", fromId="e001", summary="")
    chain.msg(user("next"))
    assert _texts(build_session_context(chain.entries).messages) == ["root", "next"]
    # Compaction preparation still sees it (pi's getMessageFromEntry has no such check).
    assert message_from_entry(empty, for_context=False) is not None
    assert message_from_entry(empty) is None


def test_custom_messages_become_custom_role_with_attribution_when_present() -> None:
    chain = Chain()
    with_attr = chain.add(
        "custom_message",
        customType="ext",
        content="hello",
        display=False,
        details={"k": 1},
        attribution="user",
    )
    without = chain.add(
        "custom_message", customType="ext", content=[{"type": "text", "text": "t"}], display=True
    )
    messages = build_session_context(chain.entries).messages
    assert messages[0] == {
        "role": "custom",
        "customType": "ext",
        "content": "hello",
        "display": False,
        "details": {"k": 1},
        "attribution": "user",
        "timestamp": iso_to_ms(with_attr["timestamp"]),
    }
    assert "attribution" not in messages[1]
    assert "details" not in messages[1]
    assert messages[1]["timestamp"] == iso_to_ms(without["timestamp"])


def test_entries_without_messages_link_the_path_but_produce_nothing() -> None:
    chain = Chain()
    chain.msg(user("a"))
    chain.add("custom", customType="state", data={"x": 1})
    chain.add("label", targetId="e001", label="L")
    chain.add("session_info", name="n")
    chain.add("zz_future_entry_type", payload=[1, 2])
    chain.msg({"role": "zz_future_role", "content": "kept as stored"})
    chain.msg(assistant("b"))
    messages = build_session_context(chain.entries).messages
    assert roles(messages) == ["user", "zz_future_role", "assistant"]


def test_an_unknown_leaf_falls_back_to_the_last_entry() -> None:
    chain = _conversation()
    assert _texts(build_session_context(chain.entries, "no-such-id").messages) == [
        "u1",
        "a1",
        "u2",
        "a2",
    ]


def test_an_orphan_yields_only_itself() -> None:
    chain = _conversation()
    chain.msg(user("orphan"), parent="missing-parent")
    assert _texts(build_session_context(chain.entries).messages) == ["orphan"]


def test_a_complex_tree_with_compaction_on_one_branch() -> None:
    chain = Chain()
    root = chain.msg(user("root"))
    chain.msg(assistant("calls", calls=[tool_call("c1")]))
    chain.msg(tool_result("c1", "result"))
    chain.msg(user("keep me"))
    chain.add("compaction", summary="S", firstKeptEntryId="e004", tokensBefore=1)
    compacted_leaf = chain.msg(assistant("after"))
    chain.msg(assistant("other branch"), parent=root["id"])
    assert _texts(build_session_context(chain.entries, compacted_leaf["id"]).messages) == [
        "[S]",
        "keep me",
        "after",
    ]
    assert _texts(build_session_context(chain.entries).messages) == ["root", "other branch"]


def test_the_tree_builds_the_same_context_as_the_function() -> None:
    chain = _conversation()
    chain.add("compaction", summary="S", firstKeptEntryId="e003", tokensBefore=1)
    chain.msg(user("u3"))
    tree = SessionTree.in_memory(jsonl(header(), *chain.entries))
    assert tree.build_session_context() == build_session_context(tree.get_entries())
    assert tree.build_session_context("e002") == build_session_context(tree.get_entries(), "e002")
    assert build_context_from_path(tree.get_branch()) == tree.build_session_context()


def test_message_timestamps_of_built_messages_are_entry_times_in_ms() -> None:
    chain = Chain()
    entry = chain.add("custom_message", customType="x", content="c", display=True)
    assert entry["timestamp"] == iso(1)
    assert message_from_entry(entry)["timestamp"] == 1_767_225_601_000  # type: ignore[index]
