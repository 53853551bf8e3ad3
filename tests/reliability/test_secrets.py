"""Secrets: API keys stay in headers; secrets in tool output are redacted before a summarizer
sees them; files are private; the serve token is never echoed or logged.

The fault matrix (``test_model_faults``) already checks every client and failure for the key in
the session file, request bodies, log records and error messages; here are the cases it does
not reach: a provider that echoes the key back, a chat turn, redaction, modes and ``serve``.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from contextree.branching.navigate import navigate_tree
from contextree.compaction.run import compact_session
from contextree.errors import ModelError, SettingsError
from contextree.runtime.agent import AgentSession
from contextree.security import (
    DEFAULT_REDACTOR,
    RedactionSettings,
    Redactor,
    environment_secrets,
)
from contextree.session.tree import SessionTree
from contextree.settings.load import Settings, load_settings
from fakes.fake_llm import FakeLLMServer
from reliability import faults
from reliability.common import FAKE_KEY, assistant_call, tool_result, user
from reliability.fuzzing import run_cli

# Fake secrets, assembled so that no scanner mistakes this file for a leak.
PLANTED = {
    "openai_key": "sk-proj-" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4",
    "anthropic_key": "sk-ant-api03-" + "Zz9Yy8Xx7Ww6Vv5Uu4Tt3Ss2",
    "github_token": "ghp_" + "R4nd0mL00k1ngT0k3nV4lu3F0rT3st1ng0000",
    "aws_access_key": "AKIA" + "IOSFODNN7EXAMPLE",
    "slack_token": "xoxb-" + "1234567890-abcdefghijkl",
    "google_api_key": "AIza" + "SyB" + "x" * 32,
    "jwt": "eyJhbGciOiJIUzI1NiJ9"
    + ".eyJzdWIiOiIxMjM0NTY3ODkwIn0"
    + ".SflKxwRJSMeKKF2QT4fwpMeJf36P",
    "bearer_token": "tok" + "_live_9f8e7d6c5b4a3210",
    "assigned_secret": "hunter2" + "-Correct-Horse",
    "url_password": "S3cr3t" + "P4ss",
    "private_key": "b3BlbnNzaC1rZXktdjEAAAAA" + "BG5vbmUAAAAEbm9uZQAAAAAAAAAB",
}
TOOL_OUTPUT = "\n".join(
    [
        "$ env",
        f"OPENAI_API_KEY={PLANTED['openai_key']}",
        f"ANTHROPIC_API_KEY={PLANTED['anthropic_key']}",
        f"GITHUB_TOKEN={PLANTED['github_token']}",
        f"AWS_ACCESS_KEY_ID={PLANTED['aws_access_key']}",
        f"SLACK={PLANTED['slack_token']}",
        f"maps key {PLANTED['google_api_key']}",
        f"session cookie {PLANTED['jwt']}",
        f'curl -H "Authorization: Bearer {PLANTED["bearer_token"]}" https://api.example.com',
        f"db.password={PLANTED['assigned_secret']}",
        f"DATABASE_URL=postgres://app:{PLANTED['url_password']}@db:5432/app",
        "-----BEGIN OPENSSH PRIVATE KEY-----",
        PLANTED["private_key"],
        "-----END OPENSSH PRIVATE KEY-----",
        "ACME-123456 is our internal ticket token format",
    ]
)


def _session_with_secrets(path: Path) -> SessionTree:
    tree = SessionTree.open(path, cwd="/work")
    tree.append_message(user("Why does the deploy fail? Check the environment."))
    tree.append_message(assistant_call("c1", "env"))
    tree.append_message(tool_result("c1", TOOL_OUTPUT + "\n" + "padding line\n" * 400))
    tree.append_message(user("Thanks, now fix it."))
    tree.append_message(assistant_call("c2", "cat deploy.yml"))
    tree.append_message(tool_result("c2", "steps:\n" + "  - run: make\n" * 200))
    return tree


def _sent_text(server: FakeLLMServer) -> str:
    return "\n".join(request.raw.decode("utf-8", "replace") for request in server.requests)


# -- the Redactor ----------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(PLANTED))
def test_each_builtin_pattern_redacts_its_kind(name: str) -> None:
    line = next(line for line in TOOL_OUTPUT.splitlines() if PLANTED[name] in line)
    text = line if name != "private_key" else TOOL_OUTPUT
    redacted = DEFAULT_REDACTOR.redact(text)
    assert PLANTED[name] not in redacted
    assert "[REDACTED:" in redacted


@pytest.mark.parametrize(
    "text",
    [
        "max_tokens=4000 and tokens_before: 12",
        "def f(token: str) -> None:",
        "the token budget and the secret of good code",
        "basic functionality works",
        "sk-short and AKIA alone",
        "see https://example.com:8080/path and postgres://db:5432/app",
        "password: [REDACTED:assigned_secret]",
    ],
)
def test_ordinary_text_is_left_alone(text: str) -> None:
    assert DEFAULT_REDACTOR.redact(text) == text


def test_a_secret_group_keeps_the_rest_of_the_match() -> None:
    redactor = Redactor([r"ticket (?P<secret>ACME-\d{6})", r"INTERNAL-\d+"], builtin=False)
    assert redactor("ticket ACME-123456 and INTERNAL-42") == (
        "ticket [REDACTED:custom] and [REDACTED:custom]"
    )


def test_literal_secrets_are_replaced_wherever_they_appear() -> None:
    redactor = Redactor(builtin=False, literals=["local-model-key-77", "short"])
    assert redactor("key local-model-key-77; short stays") == "key [REDACTED:secret]; short stays"


def test_settings_turn_redaction_off_or_add_patterns(tmp_path: Path) -> None:
    assert Redactor.from_settings(RedactionSettings(enabled=False)) is None
    loaded = load_settings(
        cwd=tmp_path,
        env={"CONTEXTREE_REDACTION_PATTERNS": '["ACME-[0-9]{6}", "x{1,3}y"]'},
        files=[],
    )
    assert loaded.settings.redaction == RedactionSettings(patterns=("ACME-[0-9]{6}", "x{1,3}y"))
    assert loaded.origins["redaction.patterns"] == "env CONTEXTREE_REDACTION_PATTERNS"
    assert Settings().redaction.enabled is True


def test_an_invalid_pattern_is_a_settings_error_naming_the_key(tmp_path: Path) -> None:
    with pytest.raises(SettingsError, match=r"redaction\.patterns: invalid regular expression"):
        load_settings(cwd=tmp_path, env={}, files=[], overrides={"redaction.patterns": ["(x"]})


# -- what reaches a summarizer ---------------------------------------------------------------


def test_planted_secrets_never_reach_the_summarizer(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    path = tmp_path / "s.jsonl"
    tree = _session_with_secrets(path)
    fake_llm.enqueue_text(faults.SUMMARY)
    fake_llm.enqueue_text("Deploy fix.")
    client = faults.make_client("openai", fake_llm.url)
    asyncio.run(compact_session(tree, client, settings=faults.SETTINGS))
    sent = _sent_text(fake_llm)
    assert len(fake_llm.requests) == 2
    leaked = [name for name, secret in PLANTED.items() if secret in sent]
    assert leaked == []
    assert "[REDACTED:openai_key]" in sent and "[REDACTED:private_key]" in sent
    # The session keeps what the tool printed: redaction changes what is sent, not the file.
    assert PLANTED["openai_key"] in path.read_text()


def test_the_offline_summary_written_to_the_session_holds_no_planted_secret(
    tmp_path: Path,
) -> None:
    path = tmp_path / "s.jsonl"
    _session_with_secrets(path)
    before = path.read_bytes()
    outcome = run_cli(["compact", str(path), "--keep-recent", "800", "--no-usage-adjust", "-q"])
    assert outcome.exit_code == 0, outcome.stderr
    (line,) = path.read_bytes()[len(before) :].splitlines()
    entry = json.loads(line)
    assert entry["type"] == "compaction"
    assert [name for name, secret in PLANTED.items() if secret in line.decode()] == []


@pytest.mark.parametrize(
    ("env", "leaks"),
    [
        ({"CONTEXTREE_REDACTION_PATTERNS": "ACME-[0-9]{6}"}, False),
        ({}, True),  # not a built-in pattern
        ({"CONTEXTREE_REDACTION_ENABLED": "false"}, True),
    ],
    ids=["user pattern", "no user pattern", "redaction off"],
)
def test_the_command_line_applies_the_redaction_settings(
    fake_llm: FakeLLMServer, tmp_path: Path, env: dict[str, str], leaks: bool
) -> None:
    path = tmp_path / "s.jsonl"
    _session_with_secrets(path)
    fake_llm.enqueue_text(faults.SUMMARY)
    fake_llm.enqueue_text("Deploy fix.")
    args, key_env = faults.cli_args(faults.FaultCase("openai", "ok"), fake_llm, path)
    outcome = run_cli(args, env={**key_env, **env})
    assert outcome.exit_code == 0, outcome.stderr
    sent = _sent_text(fake_llm)
    assert ("ACME-123456" in sent) is leaks
    off = env.get("CONTEXTREE_REDACTION_ENABLED") == "false"
    assert (PLANTED["openai_key"] in sent) is off


def test_a_key_from_the_environment_printed_by_a_tool_is_blanked_out(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    local_key = "llama" + "-local-0042-abcdef"  # no built-in pattern knows this format
    assert environment_secrets({"LLAMACPP_API_KEY": local_key, "PATH": "/bin"}) == [local_key]
    path = tmp_path / "s.jsonl"
    tree = faults.build_session(path)
    tree.append_message(user("Which key does the local server use?"))
    tree.append_message(assistant_call("c1", "cat ~/.llama"))
    tree.append_message(tool_result("c1", f"the key is {local_key}\n" + "log line\n" * 200))
    tree.append_message(user("Thanks."))
    tree.append_message(assistant_call("c2", "ls"))
    tree.append_message(tool_result("c2", "file\n" * 100))
    # Later work, so that the key's tool result is in the summarized part.
    for turn in range(3):
        tree.append_message(user(f"Next step {turn}."))
        tree.append_message(assistant_call(f"d{turn}", "ls -la"))
        tree.append_message(tool_result(f"d{turn}", "entry\n" * 400))
    fake_llm.enqueue_text(faults.SUMMARY)
    fake_llm.enqueue_text("Keys.")
    args, env = faults.cli_args(faults.FaultCase("openai", "ok"), fake_llm, path)
    outcome = run_cli(args, env={**env, "LLAMACPP_API_KEY": local_key})
    assert outcome.exit_code == 0, outcome.stderr
    assert local_key not in _sent_text(fake_llm)
    assert "[REDACTED:secret]" in _sent_text(fake_llm)


def test_a_branch_summary_request_is_redacted(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    tree = _session_with_secrets(tmp_path / "s.jsonl")
    first = tree.get_entries()[0]["id"]
    fake_llm.enqueue_text("The abandoned branch looked at the environment.")
    client = faults.make_client("anthropic", fake_llm.url)
    result = asyncio.run(navigate_tree(tree, first, summarize=True, client=client))
    assert result.summary_entry is not None
    sent = _sent_text(fake_llm)
    assert [name for name, secret in PLANTED.items() if secret in sent] == []


def test_the_agent_compacts_with_the_redaction_settings(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    tree = _session_with_secrets(tmp_path / "s.jsonl")
    settings = Settings(
        compaction=faults.SETTINGS, redaction=RedactionSettings(patterns=(r"ACME-\d{6}",))
    )
    fake_llm.enqueue_text(faults.SUMMARY)
    fake_llm.enqueue_text("Deploy fix.")
    agent = AgentSession(tree, faults.make_client("openai", fake_llm.url), settings=settings)
    asyncio.run(agent.compact())
    sent = _sent_text(fake_llm)
    assert "ACME-123456" not in sent and PLANTED["jwt"] not in sent


# -- the API key -----------------------------------------------------------------------------


@pytest.fixture
def all_logs(caplog: pytest.LogCaptureFixture) -> Iterator[pytest.LogCaptureFixture]:
    caplog.set_level(logging.DEBUG)
    yield caplog


def _logged(caplog: pytest.LogCaptureFixture) -> str:
    return "\n".join(
        record.getMessage() + (repr(record.exc_info[1]) if record.exc_info else "")
        for record in caplog.records
    )


@pytest.mark.parametrize("client", ["openai", "anthropic-stream", "remote"])
def test_a_provider_echoing_the_key_does_not_leak_it(
    client: str,
    fake_llm: FakeLLMServer,
    tmp_path: Path,
    all_logs: pytest.LogCaptureFixture,
) -> None:
    path = tmp_path / "s.jsonl"
    tree = faults.build_session(path)
    before = path.read_bytes()
    echo = {"error": {"message": f"Incorrect API key provided: {FAKE_KEY}.", "type": "auth"}}
    fake_llm.enqueue_error(401, body=echo)
    model = faults.make_client(client, fake_llm.url)
    with pytest.raises(ModelError) as caught:
        asyncio.run(compact_session(tree, model, settings=faults.SETTINGS))
    error = caught.value
    assert FAKE_KEY not in str(error) and FAKE_KEY not in repr(error)
    assert FAKE_KEY not in str(getattr(error, "body", "") or "")
    assert FAKE_KEY not in _logged(all_logs)
    assert path.read_bytes() == before
    (request,) = fake_llm.requests
    assert FAKE_KEY.encode() not in request.raw
    assert FAKE_KEY in request.headers.get("authorization", request.headers.get("x-api-key", ""))


@pytest.fixture
def umask_022() -> Iterator[None]:
    previous = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(previous)


@pytest.mark.usefixtures("umask_022")
def test_a_chat_turn_keeps_the_key_out_of_the_session_and_makes_private_files(
    fake_llm: FakeLLMServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    all_logs: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.chdir(tmp_path)
    fake_llm.enqueue_text("The build is green.")
    args = ["chat", "--model", "openai:gpt-4o-mini", "--base-url", fake_llm.url, "-p", "Status?"]
    outcome = run_cli(args, env={"OPENAI_API_KEY": FAKE_KEY})
    assert outcome.exit_code == 0, outcome.stderr
    assert FAKE_KEY not in outcome.stdout + outcome.stderr + _logged(all_logs)
    home = Path(os.environ["CONTEXTREE_HOME"])
    (session,) = home.rglob("*.jsonl")
    assert FAKE_KEY not in session.read_text()
    assert "The build is green." in session.read_text()
    assert stat.S_IMODE(session.stat().st_mode) == 0o600
    folder = session.parent
    while folder != home.parent:
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700, folder
        folder = folder.parent
    (request,) = fake_llm.requests
    assert FAKE_KEY.encode() not in request.raw
    assert request.headers["authorization"] == f"Bearer {FAKE_KEY}"


# -- serve -----------------------------------------------------------------------------------


def test_the_serve_token_is_never_echoed_or_logged(all_logs: pytest.LogCaptureFixture) -> None:
    from contextree.compaction.offline import OfflineSummarizer
    from contextree.serve import ServerConfig, SummaryServer

    token = "serve-" + "T0k3nValue-abcdef123456"
    server = SummaryServer(OfflineSummarizer(), ServerConfig(port=0, token=token))
    url = server.start()
    body: dict[str, Any] = {"systemPrompt": "", "prompt": "[User]: hi"}
    try:
        replies = [
            httpx.post(url, json=body, headers=headers, timeout=30)
            for headers in (
                {},
                {"Authorization": f"Bearer {token}x"},
                {"Authorization": token},
                {"Authorization": f"Bearer {token}"},
            )
        ]
    finally:
        server.close()
    assert [r.status_code for r in replies] == [401, 401, 401, 200]
    assert all(token not in r.text for r in replies)
    assert replies[0].json() == {"error": "missing or wrong bearer token"}
    assert token not in _logged(all_logs)


# -- issue 15 item 6: formats the first campaign found missing -------------------------------------


@pytest.mark.parametrize(
    ("text", "secret", "name"),
    [
        ("STRIPE=sk_live_51HxYzAbCdEfGhIjKlMnOp", "sk_live_51HxYzAbCdEfGhIjKlMnOp", "stripe_key"),
        ("use glpat-abcdefghijklmnopqrst1234", "glpat-abcdefghijklmnopqrst1234", "gitlab_token"),
        ("//registry.npmjs.org/:_authToken=npm_abcdefghijklmnopqrstuvwxyz0123456789",
         "npm_abcdefghijklmnopqrstuvwxyz0123456789", "npm_token"),
        ("curl -H 'Authorization: Token 9f8e7d6c5b4a3f2e1d0c' https://x",
         "9f8e7d6c5b4a3f2e1d0c", "authorization_header"),
        ("pg_dump --password hunter2xyz --host db", "hunter2xyz", "cli_password"),
        ("tool --token=abcd1234efgh run", "abcd1234efgh", "cli_password"),
        ("mysql -u root -pS3cr3tPass app", "S3cr3tPass", "mysql_password"),
        ('{"body": "{\\"password\\": \\"hunter2!x\\"}"}', "hunter2!x", "escaped_json_secret"),
    ],
)  # fmt: skip
def test_more_secret_formats_are_redacted(text: str, secret: str, name: str) -> None:
    redacted = DEFAULT_REDACTOR.redact(text)
    assert secret not in redacted
    assert f"[REDACTED:{name}]" in redacted


def test_a_found_secret_is_redacted_where_it_appears_again() -> None:
    text = "password=hunter2!xyz, and later the log echoes hunter2!xyz alone"
    redacted = DEFAULT_REDACTOR.redact(text)
    assert "hunter2!xyz" not in redacted and "[REDACTED:repeated]" in redacted


@pytest.mark.parametrize("text", ["mkdir -p /tmp/x && ls -p8080", "git log --pretty=oneline"])
def test_short_flags_of_other_commands_are_left_alone(text: str) -> None:
    assert DEFAULT_REDACTOR.redact(text) == text
