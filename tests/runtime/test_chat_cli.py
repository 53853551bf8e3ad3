"""``contextree chat -p`` end to end: typer's CliRunner, the real app, the fake server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from contextree.cli.app import app
from contextree.session.paths import sessions_dir
from contextree.session.tree import SessionTree
from fakes.fake_llm import FakeLLMServer

NO_MODEL = (
    "error: chat needs a model that can hold a conversation: pass --model provider:model "
    "(e.g. openai:gpt-4o-mini, anthropic:claude-sonnet-4-5, ollama:llama3.1) or set "
    '"model" in settings'
)


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run in an empty directory: no project settings, and tools work on tmp files."""
    monkeypatch.chdir(tmp_path)


def chat(fake: FakeLLMServer, *args: str) -> Result:
    return CliRunner().invoke(
        app, ["chat", "--model", "openai:gpt-x", "--base-url", fake.url, *args]
    )


def roles(tree: SessionTree) -> list[str]:
    return [e["message"]["role"] for e in tree.get_entries() if e["type"] == "message"]


def test_chat_prompt_prints_the_answer_and_exits_0(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    fake_llm.enqueue_text("Hello from the fake model.")
    path = tmp_path / "chat.jsonl"

    result = chat(fake_llm, "-p", "Say hello.", "--session", str(path))

    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == "Hello from the fake model."
    (request,) = fake_llm.requests
    body = request.body
    assert body["model"] == "gpt-x"
    assert body["messages"][0]["role"] == "system"
    assert str(tmp_path) in body["messages"][0]["content"]
    assert body["messages"][1:] == [{"role": "user", "content": "Say hello."}]
    assert [tool["function"]["name"] for tool in body["tools"]] == ["read", "write", "edit", "bash"]
    tree = SessionTree.open(path, create=False)
    assert roles(tree) == ["user", "assistant"]
    assert tree.header["cwd"] == str(tmp_path)


def test_chat_system_option_replaces_the_default_prompt(fake_llm: FakeLLMServer) -> None:
    fake_llm.enqueue_text("ok")
    result = chat(fake_llm, "-p", "hi", "--system", "Answer in one word.")
    assert result.exit_code == 0, result.output
    assert fake_llm.requests[0].body["messages"][0] == {
        "role": "system",
        "content": "Answer in one word.",
    }


def test_chat_prompt_exits_1_on_a_model_error(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    fake_llm.enqueue_error(400)
    path = tmp_path / "chat.jsonl"

    result = chat(fake_llm, "-p", "Say hello.", "--session", str(path))

    assert result.exit_code == 1
    assert result.stdout.strip() == "✗ 400 fake error 400"
    assert "Traceback" not in result.output
    failed = SessionTree.open(path, create=False).get_leaf_entry()
    assert failed is not None
    assert failed["message"]["stopReason"] == "error"


def test_chat_prompt_runs_tools(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("the answer is 42\n", encoding="utf-8")
    fake_llm.enqueue_tool_call("read", {"path": "notes.txt"}, call_id="call_1")
    fake_llm.enqueue_text("Your notes say the answer is 42.")

    result = chat(fake_llm, "-p", "What do my notes say?", "--session", "s.jsonl")

    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[-1] == "Your notes say the answer is 42."
    tool = fake_llm.requests[1].body["messages"][-1]
    assert tool["role"] == "tool" and tool["tool_call_id"] == "call_1"
    assert "the answer is 42" in tool["content"]
    tree = SessionTree.open(tmp_path / "s.jsonl", create=False)
    assert roles(tree) == ["user", "assistant", "toolResult", "assistant"]


def test_chat_continue_resumes_the_latest_session(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    fake_llm.enqueue_text("First answer.")
    fake_llm.enqueue_text("Second answer.")

    first = chat(fake_llm, "-p", "First question.")
    second = chat(fake_llm, "-c", "-p", "Second question.")

    assert first.exit_code == 0, first.output
    assert second.exit_code == 0, second.output
    (path,) = sessions_dir(tmp_path).glob("*.jsonl")
    assert roles(SessionTree.open(path, create=False)) == ["user", "assistant"] * 2
    sent = fake_llm.requests[1].body["messages"][1:]
    assert [m["content"] for m in sent] == ["First question.", "First answer.", "Second question."]


def test_chat_compacts_its_own_context(
    fake_llm: FakeLLMServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CONTEXTREE_CONTEXT_WINDOWS", json.dumps({"gpt-x": 10_000}))
    monkeypatch.setenv("CONTEXTREE_COMPACTION_RESERVE_TOKENS", "2000")
    monkeypatch.setenv("CONTEXTREE_COMPACTION_KEEP_RECENT_TOKENS", "40")
    monkeypatch.setenv("CONTEXTREE_COMPACTION_ADJUST_KEEP_RECENT_BY_USAGE", "false")
    question = "please answer this question carefully. " * 6
    fake_llm.enqueue_text("First answer.")
    fake_llm.enqueue_text("Second answer.", usage={"input": 8_500, "output": 10})
    fake_llm.enqueue_text("## Goal\nAnswer questions.")
    fake_llm.enqueue_text("Answering questions.")
    fake_llm.enqueue_text("All done.")

    first = chat(fake_llm, "-s", "s.jsonl", "-p", "One: " + question)
    second = chat(fake_llm, "-s", "s.jsonl", "-p", "Two: " + question)

    assert first.exit_code == 0, first.output
    assert second.exit_code == 0, second.output
    lines = second.stdout.splitlines()
    assert lines[:2] == ["Second answer.", "⟳ context threshold: compacting..."]
    assert lines[2].startswith("✓ compacted: 8,510 → ~")  # measured before, estimated after
    assert lines[3:] == ["All done."]
    tree = SessionTree.open(tmp_path / "s.jsonl", create=False)
    assert [e["type"] for e in tree.get_entries()].count("compaction") == 1
    assert len(fake_llm.requests) == 5


@pytest.mark.parametrize(
    "model",
    [None, "offline", "remote:http://127.0.0.1:9/summarize"],
    ids=["no-model", "offline", "remote"],
)
def test_chat_without_a_conversational_model_fails_with_one_error(
    fake_llm: FakeLLMServer, tmp_path: Path, model: str | None
) -> None:
    args = ["chat", "-p", "hi", "--session", "s.jsonl"]
    if model is not None:
        args += ["--model", model]

    result = CliRunner().invoke(app, args)

    assert result.exit_code == 1
    assert result.stdout == ""
    # One message (rich wraps it to the width of the captured stream).
    assert " ".join(result.stderr.split()) == NO_MODEL
    assert fake_llm.requests == []
    assert not (tmp_path / "s.jsonl").exists()


def test_chat_says_where_a_compaction_sends_the_conversation(tmp_path: Path) -> None:
    # As `compact` does (issue 15 item 3): a summary written off this machine names the model
    # and the URL; a local one says nothing more.
    from rich.console import Console

    from contextree.cli.chat import ChatApp
    from contextree.llm.openai_compat import OpenAIClient
    from contextree.runtime.agent import AgentSession
    from contextree.runtime.events import AgentEvent

    def shown(base_url: str, event: AgentEvent) -> str:
        client = OpenAIClient("gpt-x", base_url=base_url, api_key="sk-test")
        session = AgentSession(SessionTree.in_memory(), client, model_spec="openai:gpt-x")
        console = Console(record=True, width=200)
        app = ChatApp(session, console, lambda spec: None, lambda: None, lambda: None)
        app.render_event(event)
        return console.export_text().strip()

    threshold = AgentEvent("auto_compaction_start", {"reason": "threshold"})
    manual = AgentEvent("compaction_start", {"reason": "manual"})
    remote = "https://llm.example.com/v1"
    assert shown(remote, threshold) == (
        "⟳ context threshold: compacting... (the conversation is sent to openai:gpt-x at "
        "https://llm.example.com/v1/chat/completions)"
    )
    assert shown(remote, manual).startswith("⟳ compacting... (the conversation is sent to ")
    assert shown("http://127.0.0.1:9/v1", threshold) == "⟳ context threshold: compacting..."
