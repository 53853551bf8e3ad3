"""Issue 28 point 7: the secret formats the third campaign found passing through redaction,
one test per class, and the chat path that stored one read from a ``.env``."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from contextree.compaction.run import compact_session
from contextree.security import DEFAULT_REDACTOR
from contextree.session.tree import SessionTree
from fakes.fake_llm import FakeLLMServer
from reliability import faults
from reliability.common import FAKE_KEY, assistant_call, tool_result, user
from reliability.fuzzing import run_cli

# Assembled, so that no scanner mistakes this file for a leak.
AWS_ID = "AKIA" + "IOSFODNN7EXAMPLE"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYEXAMPLEKEY"
AZURE_KEY = "abcdEFGH1234abcdEFGH" + "1234abcdEFGH1234abcd+/=="
TWILIO = "SK" + "a1b2c3d4e5f6a1b2c3d4e5f6a1b2c3d4"
OPENAI = "proj-" + "A1b2C3d4E5f6G7h8I9j0K1l2"


@pytest.mark.parametrize(
    ("text", "secret", "name"),
    [
        ("DB_PASS=hunter2-Correct", "hunter2-Correct", "assigned_password"),
        ("export DB_PASS='hunter2 Correct'", "hunter2 Correct", "assigned_password"),
        ("db.pass: hunter2-Correct", "hunter2-Correct", "assigned_password"),
        ("Server=db;Uid=app;Pwd=hunter2-Correct;", "hunter2-Correct", "assigned_password"),
        ("pwd=hunter2-Correct", "hunter2-Correct", "assigned_password"),
        (f"AccountName=acct;AccountKey={AZURE_KEY};EndpointSuffix=core.windows.net",
         AZURE_KEY, "assigned_secret"),
        ("sshpass -p hunter2-Correct ssh deploy@host", "hunter2-Correct", "sshpass_password"),
        ("sshpass -p'hunter2 Correct' scp a b", "hunter2 Correct", "sshpass_password"),
        (f"{AWS_ID}\n{AWS_SECRET}", AWS_SECRET, "aws_secret_key"),
        (f"Secret access key,Access key ID\n{AWS_SECRET},{AWS_ID}", AWS_SECRET, "aws_secret_key"),
        (f"aws_secret_access_key = {AWS_SECRET}", AWS_SECRET, "assigned_secret"),
        (f"TWILIO key {TWILIO}", TWILIO, "twilio_key"),
        (f"key: sk\u2010{OPENAI}", OPENAI, "openai_key"),
        (f"key: sk\u2011{OPENAI}", OPENAI, "openai_key"),
        (f"key: sk\u2212{OPENAI}", OPENAI, "openai_key"),
    ],
)  # fmt: skip
def test_each_missed_class_is_redacted(text: str, secret: str, name: str) -> None:
    redacted = DEFAULT_REDACTOR.redact(text)
    assert secret not in redacted and secret[4:-4] not in redacted
    assert f"[REDACTED:{name}]" in redacted


@pytest.mark.parametrize(
    "text",
    [
        "PWD=/home/dev/project",
        "the pass: through the gate",
        "compass=northward bypass=enabled",
        "commit 3f2a1b4c5d6e7f8091a2b3c4d5e6f708192a3b4c",
        "sshpass is not installed",
        "SKIP_TESTS=1 and SKU 1234",
    ],
)
def test_look_alikes_are_left_alone(text: str) -> None:
    assert DEFAULT_REDACTOR.redact(text) == text


def test_password_and_key_variables_of_the_environment_are_literal_secrets() -> None:
    from contextree.security import environment_secrets

    env = {
        "DB_PASS": "db-pass-value-1",
        "SMTP_PASSWD": "smtp-passwd-value",
        "AWS_SECRET_ACCESS_KEY": AWS_SECRET,
        "AZURE_STORAGE_ACCOUNT_KEY": AZURE_KEY,
        "PWD": "/home/dev",
        "OLDPWD": "/tmp",
        "PATH": "/bin",
    }
    assert sorted(environment_secrets(env)) == sorted(
        ["db-pass-value-1", "smtp-passwd-value", AWS_SECRET, AZURE_KEY]
    )


def test_a_dot_env_read_in_chat_is_redacted_before_it_is_stored_or_sent(
    fake_llm: FakeLLMServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    secret = "hunter2" + "-Dot-Env-Value"
    (tmp_path / ".env").write_text(f"DB_HOST=db\nDB_PASS={secret}\n")
    fake_llm.enqueue_tool_call("read", {"path": ".env"})
    fake_llm.enqueue_text(f"The database password is DB_PASS={secret}.")
    args = ["chat", "--model", "openai:gpt-4o-mini", "--base-url", fake_llm.url, "-p", "DB?"]
    outcome = run_cli(args, env={"OPENAI_API_KEY": FAKE_KEY})
    assert outcome.exit_code == 0, outcome.stderr
    (session,) = Path(os.environ["CONTEXTREE_HOME"]).rglob("*.jsonl")
    stored = session.read_text()
    assert secret not in stored and "[REDACTED:assigned_password]" in stored
    assert "DB_HOST=db" in stored  # the rest of the tool result is kept
    # The request after the tool ran carries the stored (redacted) tool result.
    assert len(fake_llm.requests) == 2
    assert all(secret.encode() not in request.raw for request in fake_llm.requests)


def test_no_missed_class_reaches_the_summarizer(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    """A session written before these rules (or by another tool) holds the secrets raw; the
    summary request made from it must not."""
    secrets = {
        "DB_PASS=hunter2-Summary-One": "hunter2-Summary-One",
        "pwd=hunter2-Summary-Two": "hunter2-Summary-Two",
        f"AccountName=a;AccountKey={AZURE_KEY};": AZURE_KEY,
        "sshpass -p hunter2-Summary-Three ssh host": "hunter2-Summary-Three",
        f"{AWS_ID}\n{AWS_SECRET}": AWS_SECRET,
        f"twilio {TWILIO}": TWILIO,
        f"key sk\u2011{OPENAI}": OPENAI,
    }
    tree = SessionTree.open(tmp_path / "s.jsonl", cwd="/work")
    tree.append_message(user("What is in the environment?"))
    tree.append_message(assistant_call("c1", "cat .env"))
    tree.append_message(tool_result("c1", "\n".join(secrets) + "\n" + "padding line\n" * 400))
    tree.append_message(user("Thanks, now fix it."))
    tree.append_message(assistant_call("c2", "cat deploy.yml"))
    tree.append_message(tool_result("c2", "steps:\n" + "  - run: make\n" * 200))
    fake_llm.enqueue_text(faults.SUMMARY)
    fake_llm.enqueue_text("Deploy fix.")
    client = faults.make_client("openai", fake_llm.url)
    asyncio.run(compact_session(tree, client, settings=faults.SETTINGS))
    assert fake_llm.requests
    sent = "\n".join(r.raw.decode("utf-8", "replace") for r in fake_llm.requests)
    assert [s for s in secrets.values() if s in sent] == []
    assert "DB_PASS=[REDACTED:assigned_password]" in sent  # the tool result was summarized
