"""Issue 12: the command line as pi users expect it (each numbered point has tests here)."""

from __future__ import annotations

import builtins
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from cli_env import copy_pi_fixture as copy
from cli_env import invoke, ok, reset_consoles
from pi_fixtures import pi_fixture

pytestmark = pytest.mark.usefixtures("clean_cli")


# -- 1. text in square brackets is printed literally ------------------------------------------


def test_missing_textual_message_keeps_the_extra_in_brackets(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    path = copy("before-compaction.jsonl", tmp_path)
    real_import = builtins.__import__

    def no_textual(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "textual" or name.startswith("textual."):
            raise ModuleNotFoundError(f"No module named {name!r}", name="textual")
        return real_import(name, *args, **kwargs)

    for module in [m for m in sys.modules if m.startswith(("textual", "contextree.cli.tree_"))]:
        monkeypatch.delitem(sys.modules, module)
    monkeypatch.setattr(builtins, "__import__", no_textual)
    result = invoke("tree", path, "-i")
    assert result.exit_code == 1
    # From this checkout the hint installs the checkout's extra (issue 24 point 9).
    from contextree.cli.extras import install_command

    assert install_command("tui") in result.stderr and "[tui]" in result.stderr


def test_chat_help_keeps_bracketed_arguments() -> None:
    from contextree.cli.chat import HELP, ChatApp

    console = Console(record=True, width=120, color_system=None)
    ui = ChatApp.__new__(ChatApp)
    ui.console = console
    import asyncio

    assert asyncio.run(ui._command("help", ""))
    out = console.export_text()
    assert "/compact [instructions]" in out
    assert "/navigate ID [--summarize]" in out
    assert out.strip() == HELP.strip()


def test_session_values_with_brackets_are_printed_as_they_are(tmp_path: Path) -> None:
    from contextree.session.tree import SessionTree

    path = tmp_path / "s.jsonl"
    tree = SessionTree.open(path, cwd="/work/[bold]x[/bold]")
    tree.append_message({"role": "user", "content": "hi [red]there[/red]", "timestamp": 1})
    tree.append_session_info("[b]named[/b]")
    info = ok("info", path).stdout
    assert "[b]named[/b]" in info
    assert "/work/[bold]x[/bold]" in info
    context = ok("context", path).stdout
    assert "hi [red]there[/red]" in context


def test_error_lines_keep_brackets(tmp_path: Path) -> None:
    missing = tmp_path / "[x].jsonl"
    result = invoke("info", missing)
    assert result.exit_code == 1
    assert "[x].jsonl" in result.stderr


# -- 3. navigate --summarize: compact's model choice, options and redaction --------------------


def _branch_with_secret(path: Path) -> str:
    """A session whose last turn mentions ACME-123456; returns the id to move back to."""
    from contextree.session.tree import SessionTree
    from core_helpers import assistant, user

    tree = SessionTree.open(path, cwd="/work")
    first = tree.append_message(user("Set up the deploy."))
    tree.append_message(assistant("Done: the deploy is set up."))
    tree.append_message(user("Our ticket token is ACME-123456; use it for the release."))
    tree.append_message(assistant("Released with the ticket token."))
    return first


def test_navigate_summarizes_with_the_configured_model_and_redaction_patterns(
    fake_llm: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "s.jsonl"
    target = _branch_with_secret(path)
    monkeypatch.setenv("CONTEXTREE_MODEL", f"remote:{fake_llm.remote_url}")
    monkeypatch.setenv("CONTEXTREE_REDACTION_PATTERNS", "ACME-[0-9]{6}")
    reset_consoles()
    fake_llm.enqueue_text("The branch released the deploy.")
    result = ok("navigate", path, target, "--summarize")
    # Before, navigate used the offline summarizer whatever the settings said.
    assert len(fake_llm.requests) == 1
    sent = fake_llm.requests[0].raw.decode()
    assert "ticket token" in sent
    assert "ACME-123456" not in sent
    assert "The branch released the deploy." in result.stdout


def test_navigate_takes_compacts_model_instructions_and_base_url_options(
    fake_llm: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "s.jsonl"
    target = _branch_with_secret(path)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-key")
    fake_llm.enqueue_text("Summary of the release branch.")
    result = ok(
        "navigate", path, target, "--summarize", "-m", "openai:gpt-4o-mini",
        "--base-url", fake_llm.url, "-i", "focus on the release",
    )  # fmt: skip
    assert len(fake_llm.requests) == 1
    body = fake_llm.requests[0].raw.decode()
    assert "focus on the release" in body
    assert "ACME-123456" in body  # not a built-in pattern, and none configured
    assert "Summary of the release branch." in result.stdout


def test_navigate_tree_passes_its_redactor_to_the_branch_summary(tmp_path: Path) -> None:
    import asyncio

    from contextree.branching.navigate import navigate_tree
    from contextree.llm.scripted import ScriptedClient
    from contextree.security.redact import RedactionSettings, Redactor
    from contextree.session.tree import SessionTree

    path = tmp_path / "s.jsonl"
    target = _branch_with_secret(path)
    tree = SessionTree.open(path, create=False)
    client = ScriptedClient(default="A summary.")
    redactor = Redactor.from_settings(RedactionSettings(patterns=("ACME-[0-9]{6}",)))
    result = asyncio.run(
        navigate_tree(tree, target, summarize=True, client=client, redactor=redactor)
    )
    assert result.summary_entry is not None
    prompt = repr(client.requests)
    assert "ticket token" in prompt
    assert "ACME-123456" not in prompt


# -- 4. info, context and sessions count alike -------------------------------------------------


def _row(output: str, name: str) -> str:
    line = next(line for line in output.splitlines() if line.startswith(name))
    return " ".join(line[len(name) :].split())


def test_info_counts_the_messages_context_prints(tmp_path: Path) -> None:
    # A `!!` command (excludeFromContext) is in the session context but not sent: info
    # counted it (32 against context's 31 on a user's file).
    from contextree.session.tree import SessionTree
    from core_helpers import assistant, user

    path = tmp_path / "s.jsonl"
    tree = SessionTree.open(path, cwd="/work")
    tree.append_message(user("hello"))
    tree.append_message(assistant("hi"))
    tree.append_message(
        {
            "role": "bashExecution",
            "command": "ls",
            "output": "a\nb",
            "exitCode": 0,
            "cancelled": False,
            "truncated": False,
            "excludeFromContext": True,
            "timestamp": 1,
        }
    )
    assert _row(ok("info", path).stdout, "context").startswith("2 messages,")
    assert ok("context", path).stdout.splitlines()[-1].startswith("2 messages,")


def test_one_message_is_singular(tmp_path: Path) -> None:
    from contextree.session.tree import SessionTree
    from core_helpers import user

    path = tmp_path / "s.jsonl"
    SessionTree.open(path, cwd="/work").append_message(user("hello"))
    assert _row(ok("info", path).stdout, "context").startswith("1 message,")
    assert ok("context", path).stdout.splitlines()[-1].startswith("1 message,")


@pytest.mark.parametrize(
    "damage",
    ['{"type":"mess', "garbage", "[1, 2]", ""],
    ids=["truncated last line", "text", "array", "blank line"],
)
def test_sessions_counts_the_entries_info_counts(tmp_path: Path, damage: str) -> None:
    # sessions counted lines; info counts the entries a load keeps. A line that is not a JSON
    # object is skipped by the load and now not counted by sessions either.
    folder = tmp_path / "sessions"
    folder.mkdir()
    lines = pi_fixture("before-compaction.jsonl").read_text().splitlines()[:20]
    path = folder / "s.jsonl"
    path.write_text("\n".join([*lines[:10], damage, *lines[10:]]) + "\n")
    import json as json_module

    listed = json_module.loads(ok("sessions", folder, "--format", "json").stdout)
    assert listed[0]["entries"] == 19
    assert _row(ok("info", path).stdout, "entries").startswith("19 ")


def test_an_empty_file_is_not_a_session_for_info_as_for_sessions(tmp_path: Path) -> None:
    import json as json_module

    folder = tmp_path / "sessions"
    folder.mkdir()
    path = folder / "empty.jsonl"
    path.write_bytes(b"")
    listed = json_module.loads(ok("sessions", folder, "--format", "json").stdout)
    assert listed[0]["problem"] == "not a session file: the file is empty"
    result = invoke("info", path)
    assert result.exit_code == 1
    assert result.stderr == f"error: {path}: not a session file: the file is empty\n"
    assert path.read_bytes() == b""  # no header written, no id invented


def test_info_shows_the_size_after_prune(tmp_path: Path) -> None:
    # The measured usage counted the outputs pruning replaced: what it saved is subtracted.
    from contextree.compaction.prune import prune_session
    from contextree.session.tree import SessionTree
    from contextree.settings import PruneSettings
    from core_helpers import assistant, chars, tool_call, tool_result, user

    path = tmp_path / "s.jsonl"
    tree = SessionTree.open(path, cwd="/work")
    tree.append_message(user("look around"))
    for n in range(4):
        tree.append_message(assistant("", calls=[tool_call(f"c{n}")]))
        tree.append_message(tool_result(f"c{n}", chars(5_000)))
    usage = {"input": 20_100, "output": 50, "cacheRead": 0, "cacheWrite": 0}
    reply = assistant("done", usage=usage)
    reply["timestamp"] = 1_000
    tree.append_message(reply)
    before = _row(ok("info", path).stdout, "context")
    assert before.startswith("10 messages, ~20,150 tokens")
    decision = prune_session(tree, PruneSettings(protect_tokens=6_000, minimum_savings=100))
    assert decision.pruned_count == 2  # the newest two fill the protect window
    after = ok("info", path).stdout
    expected = 20_150 - decision.tokens_saved
    assert _row(after, "context") == f"10 messages, ~{expected:,} tokens"
    assert f"- {decision.tokens_saved:,} pruned since" in after
    assert ok("context", path).stdout.splitlines()[-1].startswith(f"10 messages, ~{expected:,}")


# -- 6. chat checks for a key first, and its help is true -------------------------------------


@pytest.mark.parametrize(
    ("model", "env"),
    [
        ("openai:gpt-4o-mini", "OPENAI_API_KEY"),
        ("anthropic:claude-sonnet-4-5", "ANTHROPIC_API_KEY"),
    ],
)
def test_chat_without_an_api_key_fails_at_once_with_one_line(
    tmp_path: Path, model: str, env: str
) -> None:
    import time

    started = time.monotonic()
    result = invoke("chat", "-m", model, "-p", "hi", "--session", tmp_path / "c.jsonl")
    assert time.monotonic() - started < 5  # before: three retries, ~15 s, "cannot reach"
    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1
    assert result.stderr.startswith(f"error: {model} needs an API key: set {env}")
    assert not (tmp_path / "c.jsonl").exists()


def test_chat_with_a_base_url_or_a_local_server_needs_no_key() -> None:
    from contextree.cli.models import make_client
    from contextree.llm.registry import missing_api_key

    assert missing_api_key(make_client("openai:gpt-4o-mini")) == "OPENAI_API_KEY"
    assert missing_api_key(make_client("openai:x", base_url="http://127.0.0.1:8080")) is None
    assert missing_api_key(make_client("ollama:llama3.1")) is None
    assert missing_api_key(make_client("anthropic:claude-sonnet-4-5")) == "ANTHROPIC_API_KEY"
    assert missing_api_key(make_client("offline")) is None


def test_chat_help_claims_no_offline_default() -> None:
    text = " ".join(ok("chat", "--help").stdout.split())
    assert "offline summarizer" not in text
    assert "offline and remote cannot chat" in text


# -- 7. the small ones ------------------------------------------------------------------------


def test_version() -> None:
    from contextree import __version__

    assert ok("--version").stdout == f"contextree {__version__}\n"


def test_debug_is_accepted_after_the_command(tmp_path: Path) -> None:
    from contextree.errors import SessionFileError

    missing = tmp_path / "missing.jsonl"
    plain = invoke("info", missing)
    assert plain.exit_code == 1
    assert not isinstance(plain.exception, SessionFileError)  # one error line, no traceback

    for args in (("--debug", "info", missing), ("info", missing, "--debug")):
        result = invoke(*args)
        assert isinstance(result.exception, SessionFileError), result.output


def _one_usage_line(result: Any, *fragments: str) -> None:
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    assert result.stderr.startswith("error: ")
    assert result.stderr.count("\n") == 1, result.stderr
    for fragment in fragments:
        assert fragment in result.stderr


def test_usage_errors_are_one_line(tmp_path: Path) -> None:
    path = copy("before-compaction.jsonl", tmp_path)
    _one_usage_line(invoke("info"), "Missing argument 'SESSION'", "info --help")
    _one_usage_line(invoke("bogus"), "No such command 'bogus'")
    fold = invoke("tree", path, "--fold", "-3")
    _one_usage_line(fold, "'--fold'")
    # The range as typer words it (0.28: "not in the range x>=0"; 0.29: "greater than or equal").
    assert "x>=0" in fold.stderr or "greater than or equal to 0" in fold.stderr
    _one_usage_line(
        invoke("context", path, "--format", "xml"),
        "'xml' is not one of 'text', 'json', 'openai', 'anthropic'",
    )
    assert "Value error" not in invoke("context", path, "--format", "xml").stderr
    _one_usage_line(invoke("sessions", tmp_path, "--format", "openai"), "'text', 'json'")


def test_usage_lines_name_arguments_as_the_help_does() -> None:
    assert "[OPTIONS] SESSION\n" in ok("info", "--help").stdout
    assert "[OPTIONS] SESSION TARGET\n" in ok("navigate", "--help").stdout
    assert "{" not in ok("info", "--help").stdout.splitlines()[0]


def test_a_fold_of_one_entry_is_singular(tmp_path: Path) -> None:
    from contextree.session.tree import SessionTree
    from core_helpers import user

    path = tmp_path / "s.jsonl"
    tree = SessionTree.open(path, cwd="/work")
    for n in range(5):
        tree.append_message(user(f"m{n}"))
    out = ok("tree", path, "--fold", "2").stdout
    assert "… 1 more entry …" in out


def test_the_readme_names_the_tui_extra_and_the_tree_markers() -> None:
    readme = (Path(__file__).parents[2] / "README.md").read_text()
    assert '".[tui]"' in readme
    for marker in ("◀ leaf", "◆ branch", "◇ branch", "[compaction]", "more entries"):
        assert marker in readme


def test_a_chat_command_error_is_printed_once(
    fake_llm: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # /compact on a new session: the compaction's end event printed the error, then the
    # command printed it again.
    from typer.testing import CliRunner

    from contextree.cli.app import app

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-key")
    result = CliRunner().invoke(
        app,
        ["chat", "-m", "openai:x", "--base-url", fake_llm.url, "-s", str(tmp_path / "c.jsonl")],
        input="/compact\n",
    )
    assert result.exit_code == 0, result.output
    assert result.output.count("Nothing to compact") == 1, result.output
    assert fake_llm.requests == []


def test_the_agents_navigate_uses_the_redaction_settings(tmp_path: Path) -> None:
    import asyncio

    from contextree.llm.scripted import ScriptedClient
    from contextree.runtime.agent import AgentSession
    from contextree.security.redact import RedactionSettings
    from contextree.session.tree import SessionTree
    from contextree.settings.load import Settings

    path = tmp_path / "s.jsonl"
    target = _branch_with_secret(path)
    client = ScriptedClient(default="A summary.")
    agent = AgentSession(
        SessionTree.open(path, create=False),
        client,
        model_spec="openai:gpt-4o-mini",
        settings=Settings(redaction=RedactionSettings(patterns=("ACME-[0-9]{6}",))),
    )
    result = asyncio.run(agent.navigate_tree(target, summarize=True))
    assert result.summary_entry is not None
    prompt = repr(client.requests)
    assert "ticket token" in prompt
    assert "ACME-123456" not in prompt


def test_the_library_listing_example_works_without_a_sessions_folder(tmp_path: Path) -> None:
    # docs/library.md lists this directory's sessions; before there were any it raised.
    from contextree.session.listing import list_sessions, session_files

    assert session_files(tmp_path / "missing") == []
    assert session_files(tmp_path / "missing", nested=True) == []
    assert list_sessions(session_files(tmp_path / "missing"), limit=10) == []


def test_chat_checks_the_fallback_models_keys_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The primary model is a local server (no key needed); a fallback is Anthropic's service.
    monkeypatch.setenv("CONTEXTREE_RETRY_FALLBACK_MODELS", "anthropic:claude-sonnet-4-5")
    result = invoke(
        "chat",
        "-m",
        "openai:x",
        "--base-url",
        "http://127.0.0.1:9",
        "-p",
        "hi",
        "--session",
        tmp_path / "c.jsonl",
    )
    assert result.exit_code == 1
    assert result.stderr.count("\n") == 1
    assert result.stderr.startswith(
        "error: fallback model anthropic:claude-sonnet-4-5 (retry.fallbackModels) needs an API "
        "key: set ANTHROPIC_API_KEY"
    )
    assert not (tmp_path / "c.jsonl").exists()
