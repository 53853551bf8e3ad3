"""A string field of a message holding another JSON type (a hand-edited or damaged file):
``toolName`` of a tool result, ``stopReason`` of an assistant message.

pi compares these (``protectedTools.includes(toolName)``, ``stopReason === "error"``) and never
sends them, so such a value reads as no name / an unknown stop reason. Every command reads it
so, without a traceback (``prune`` and ``context --format openai|anthropic`` used to fail with
``TypeError: unhashable type``), and ``check`` warns, naming the line and the field.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cli_env import invoke
from contextree.compaction.prune import decide_prune
from contextree.context.provider import ProviderView, provider_messages
from contextree.settings.schema import PruneSettings
from core_helpers import Chain, assistant, chars, header, jsonl, tool_call, tool_result, user
from fakes.fake_llm import FakeLLMServer

pytestmark = pytest.mark.usefixtures("clean_cli")

WRONG: list[Any] = [["bash"], {"name": "bash"}, 7, None, True]


def _session(path: Path, *, tool_name: Any = "bash", stop: Any = "toolUse") -> Path:
    chain = Chain()
    chain.msg(user("list the files"))
    chain.msg({**assistant("", calls=[tool_call("c1")]), "stopReason": stop})
    chain.msg(tool_result("c1", chars(400), name=tool_name))  # e003, large enough to prune
    chain.msg(assistant("done"))
    chain.msg(user("thanks"))
    path.write_bytes(jsonl(header(), *chain.entries))
    return path


@pytest.mark.parametrize("value", WRONG, ids=json.dumps)
@pytest.mark.parametrize("dry_run", [True, False], ids=["dry-run", "write"])
def test_prune_reads_a_tool_name_of_another_type_as_no_name(
    tmp_path: Path, value: Any, dry_run: bool
) -> None:
    path = _session(tmp_path / "s.jsonl", tool_name=value)
    args = ["--dry-run"] if dry_run else []
    result = invoke(
        "prune", path, "--minimum-savings", "0", "--protect-tokens", "0", "-f", "json", *args
    )
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output
    shown = json.loads(result.stdout)
    # Not protected: pruned like any unnamed result, and shown with no name.
    assert [(e["entryId"], e["toolName"]) for e in shown["entries"]] == [("e003", None)]
    if not dry_run:
        pruned = json.loads(path.read_bytes().splitlines()[3])["message"]
        assert pruned["toolName"] == value and pruned["prunedContent"]  # nothing lost


@pytest.mark.parametrize("value", [["read"], {"read": 1}])
def test_the_library_decision_and_the_decider_agree(value: Any) -> None:
    from contextree.compaction.prune_decider import PruneDecider
    from contextree.session.tree import SessionTree

    tree = SessionTree.in_memory(_session_bytes(tool_name=value))
    path = tree.get_branch()
    settings = PruneSettings(protect_tokens=0, minimum_savings=0)
    decided = decide_prune(path, settings)
    assert [c.entry["id"] for c in decided.candidates] == ["e003"]
    by_decider = PruneDecider().decide(tree.get_branch_view(), settings)
    assert [c.entry["id"] for c in by_decider.candidates] == ["e003"]


def _session_bytes(**fields: Any) -> bytes:
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        return _session(Path(folder) / "s.jsonl", **fields).read_bytes()


@pytest.mark.parametrize("value", WRONG, ids=json.dumps)
def test_check_warns_about_a_tool_name_of_another_type(tmp_path: Path, value: Any) -> None:
    path = _session(tmp_path / "s.jsonl", tool_name=value)
    result = invoke("check", path)
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert f"{path}:4: warning: message.toolName must be a string, found " in text
    assert "(entry e003)" in text


@pytest.mark.parametrize("value", [["error"], {"a": 1}, ["aborted", "stop"], 3, None])
@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_context_for_a_provider_reads_a_stop_reason_of_another_type_as_unknown(
    tmp_path: Path, value: Any, provider: str
) -> None:
    path = _session(tmp_path / "s.jsonl", stop=value)
    result = invoke("context", "--format", provider, path)
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output
    # An unknown reason is not a failed reply: the call and its result are sent (as pi does).
    assert "c1" in result.stdout


def test_the_provider_view_keeps_a_reply_whose_stop_reason_is_not_a_string() -> None:
    messages = [
        user("hi"),
        {**assistant("", calls=[tool_call("c1")]), "stopReason": ["error"]},
        tool_result("c1"),
    ]
    assert [m["role"] for m in provider_messages(messages)] == ["user", "assistant", "toolResult"]
    view = ProviderView().messages(messages)
    assert [m["role"] for m in view] == ["user", "assistant", "toolResult"]


def test_check_warns_about_a_stop_reason_of_another_type(tmp_path: Path) -> None:
    path = _session(tmp_path / "s.jsonl", stop=["stop"])
    result = invoke("check", path)
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert f"{path}:3: warning: message.stopReason must be a string, found array" in text


def test_chat_continues_a_session_whose_stop_reason_is_a_list(
    tmp_path: Path, fake_llm: FakeLLMServer
) -> None:
    path = _session(tmp_path / "s.jsonl", stop=["stop"])
    before = path.read_bytes()
    fake_llm.enqueue_text("Hello again.")
    result = invoke(
        "chat", "-m", "openai:gpt-x", "--base-url", fake_llm.url, "-p", "hi", "-s", path
    )
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output
    assert result.stdout.strip() == "Hello again."
    (request,) = fake_llm.requests
    assert [m["role"] for m in request.body["messages"]][1:4] == ["user", "assistant", "tool"]
    assert path.read_bytes().startswith(before)  # appended to, nothing rewritten


@pytest.mark.parametrize(
    ("where", "value"),
    [
        ("call id", ["c1"]),
        ("result's call id", ["c1"]),
        ("assistant content", 7),
        ("assistant content", {"type": "text"}),
    ],
)
def test_the_recall_tool_reads_fields_of_another_type(
    tmp_path: Path, where: str, value: Any
) -> None:
    # The recall tool (chat's, eval --recall) adds the result a call returned and the call a
    # result answers: it used to fail with "unhashable type" or "'int' object is not iterable".
    from contextree.recall.tool import SessionRecall
    from contextree.session.tree import SessionTree

    chain = Chain()
    chain.msg(user("read the config please"))
    call = {**assistant("Reading config.", calls=[tool_call("c1")])}
    result = tool_result("c1", "retries = 7  # plugh_budget")
    if where == "call id":
        call["content"][1]["id"] = value
    elif where == "result's call id":
        result["toolCallId"] = value
    else:
        call["content"] = value
    chain.msg(call)
    chain.msg(result)
    for turn in range(30):
        chain.msg(user(f"step {turn} " + "filler " * 200))
        chain.msg(assistant(f"done {turn} " + "ok " * 200))
    path = tmp_path / "s.jsonl"
    path.write_bytes(jsonl(header(), *chain.entries))
    assert invoke("compact", path, "--keep-recent", "2000", "--quiet").exit_code == 0
    recall = SessionRecall(SessionTree.open(path))
    try:
        assert recall.available()
        for query in ("config", "plugh_budget"):
            assert "[" in recall.search_text(query)  # a hit, with its entry id
    finally:
        recall.close()
