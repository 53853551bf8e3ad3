"""``contextree serve`` redacts what it forwards and what it answers (README, Safety: text is
"redacted before text is sent to a summarizer"). The endpoint used to send the prompt to its
upstream model verbatim, and the offline summarizer echoed keys back in its summary.

Every server here listens on 127.0.0.1; the upstream is the fake OpenAI-compatible server.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from contextree.compaction.offline import OfflineSummarizer
from contextree.llm.registry import create_client
from contextree.llm.scripted import ScriptedClient
from contextree.security import DEFAULT_REDACTOR, Redactor
from contextree.serve import ServerConfig, SummaryServer
from fakes.fake_llm import FakeLLMServer
from serve_clients import serve_env, serving_at

# Assembled, so that no scanner mistakes this file for a leak.
OPENAI = "sk-proj-" + "AbCdEf1234567890abcdefGHIJ"
HF = "hf_" + "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"
PASSWORD = "hunter2-" + "Correct-Horse"
UPSTREAM_KEY = "sk-proj-" + "SERVEupstream0key0123456789"


def _post(url: str, body: dict[str, Any]) -> httpx.Response:
    return httpx.post(url, json=body, timeout=30)


def _sent(fake: FakeLLMServer) -> str:
    (request,) = fake.requests
    return request.raw.decode()


def test_the_prompt_and_system_prompt_are_redacted_before_the_upstream_model(
    fake_llm: FakeLLMServer,
) -> None:
    fake_llm.enqueue_text("## Goal\nsummary")
    client = create_client("openai:gpt-4o-mini", base_url=f"{fake_llm.url}/v1", api_key="k")
    with serving_at(client) as (_, _, url):
        reply = _post(
            url,
            {
                "systemPrompt": f"Summarize. The admin password={PASSWORD}",
                "prompt": f"my key is {OPENAI} and the hub token {HF}",
            },
        )
    assert reply.status_code == 200, reply.text
    sent = _sent(fake_llm)
    for secret in (OPENAI, HF, PASSWORD):
        assert secret not in sent
    assert "[REDACTED:openai_key]" in sent and "[REDACTED:huggingface_token]" in sent
    assert "[REDACTED:assigned_secret]" in sent
    assert "my key is" in sent  # the rest of the text is sent as it was


def test_what_the_model_answers_is_redacted(fake_llm: FakeLLMServer) -> None:
    fake_llm.enqueue_text(f"## Goal\nThe user set up {OPENAI} for the deploy")
    client = create_client("openai:gpt-4o-mini", base_url=f"{fake_llm.url}/v1", api_key="k")
    with serving_at(client) as (_, _, url):
        reply = _post(url, {"prompt": "summarize this"})
    assert reply.status_code == 200
    summary = reply.json()["summary"]
    assert OPENAI not in summary and "[REDACTED:openai_key]" in summary
    assert summary.startswith("## Goal\nThe user set up ")


def test_a_model_error_that_echoes_the_prompt_is_redacted(fake_llm: FakeLLMServer) -> None:
    fake_llm.enqueue_error(400, {"error": {"message": f"bad input near {OPENAI}"}})
    client = create_client("openai:gpt-4o-mini", base_url=f"{fake_llm.url}/v1", api_key="k")
    with serving_at(client) as (_, _, url):
        reply = _post(url, {"prompt": "summarize this"})
    assert reply.status_code == 502
    assert OPENAI not in reply.text and "[REDACTED:openai_key]" in reply.json()["error"]


def test_the_offline_summary_does_not_echo_a_secret() -> None:
    prompt = (
        "<conversation>\n[User]: deploy with my key "
        f"{OPENAI}, the hub token {HF} and DB_PASSWORD={PASSWORD}\n</conversation>"
    )
    with serving_at(OfflineSummarizer()) as (_, _, url):
        reply = _post(url, {"prompt": prompt})
    assert reply.status_code == 200
    summary = reply.json()["summary"]
    assert summary.startswith("## Goal")
    for secret in (OPENAI, HF, PASSWORD):
        assert secret not in summary, summary
    assert "[REDACTED:" in summary


def test_the_model_sees_the_redacted_text_and_a_redactor_can_be_given_or_left_out() -> None:
    model = ScriptedClient(default="ok")
    custom = Redactor([r"ACME-\d{6}"])
    server = SummaryServer(model, ServerConfig(host="127.0.0.1", port=0), redactor=custom)
    url = server.start()
    try:
        assert _post(url, {"prompt": f"ticket ACME-123456 key {OPENAI}"}).status_code == 200
    finally:
        server.close()
    text = model.requests[-1].messages[0]["content"][0]["text"]
    assert text == "ticket [REDACTED:custom] key [REDACTED:openai_key]"
    # redactor=None: the caller said not to redact (redaction.enabled = false).
    plain = ScriptedClient(default="ok")
    server = SummaryServer(plain, ServerConfig(host="127.0.0.1", port=0), redactor=None)
    url = server.start()
    try:
        assert _post(url, {"prompt": f"key {OPENAI}"}).status_code == 200
    finally:
        server.close()
    assert plain.requests[-1].messages[0]["content"][0]["text"] == f"key {OPENAI}"


def test_the_library_default_is_the_built_in_patterns() -> None:
    model = ScriptedClient(default="ok")
    with serving_at(model) as (_, _, url):
        assert _post(url, {"prompt": f"key {OPENAI}"}).status_code == 200
    text = model.requests[-1].messages[0]["content"][0]["text"]
    assert text == DEFAULT_REDACTOR.redact(f"key {OPENAI}") == "key [REDACTED:openai_key]"


# -- the command line: the settings' redaction, as `contextree compact --model` uses ----------


def _serve(
    tmp_path: Path, fake: FakeLLMServer, **extra_env: str
) -> tuple[subprocess.Popen[bytes], str]:
    env = serve_env(tmp_path, OPENAI_API_KEY=UPSTREAM_KEY, **extra_env)
    process = subprocess.Popen(
        [sys.executable, "-m", "contextree", "serve", "--port", "0",
         "--model", "openai:gpt-4o-mini", "--base-url", f"{fake.url}/v1"],
        cwd=tmp_path,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )  # fmt: skip
    assert process.stderr is not None
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        line = process.stderr.readline().decode()
        if line.startswith("serving "):
            return process, line.split(" at ", 1)[1].split()[0]
        if not line and process.poll() is not None:
            break
    process.kill()
    raise AssertionError("contextree serve did not start")


def _stop(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    process.wait(timeout=30)
    assert process.stderr is not None
    process.stderr.close()


def test_contextree_serve_applies_the_redaction_settings(
    tmp_path: Path, fake_llm: FakeLLMServer
) -> None:
    fake_llm.enqueue_text(f"## Goal\nsummary naming {UPSTREAM_KEY} and ACME-654321")
    patterns = json.dumps([r"ACME-\d{6}"])
    process, url = _serve(tmp_path, fake_llm, CONTEXTREE_REDACTION_PATTERNS=patterns)
    try:
        reply = _post(url, {"prompt": f"my key is {OPENAI}, ticket ACME-123456"})
    finally:
        _stop(process)
    assert reply.status_code == 200, reply.text
    sent = _sent(fake_llm)
    assert OPENAI not in sent and "ACME-123456" not in sent
    assert "[REDACTED:openai_key]" in sent and "[REDACTED:custom]" in sent
    summary = reply.json()["summary"]
    # The server's own upstream key (OPENAI_API_KEY) is a literal secret, as for compact.
    assert UPSTREAM_KEY not in summary and "ACME-654321" not in summary


def test_contextree_serve_with_redaction_off_forwards_the_text(
    tmp_path: Path, fake_llm: FakeLLMServer
) -> None:
    fake_llm.enqueue_text("## Goal\nsummary")
    process, url = _serve(tmp_path, fake_llm, CONTEXTREE_REDACTION_ENABLED="false")
    try:
        reply = _post(url, {"prompt": f"my key is {OPENAI}"})
    finally:
        _stop(process)
    assert reply.status_code == 200
    assert OPENAI in _sent(fake_llm)


@pytest.mark.parametrize("field", ["prompt", "systemPrompt"])
def test_contextree_serve_never_forwards_a_key_by_default(
    tmp_path: Path, fake_llm: FakeLLMServer, field: str
) -> None:
    fake_llm.enqueue_text("## Goal\nsummary")
    process, url = _serve(tmp_path, fake_llm)
    try:
        body = {"prompt": "summarize", field: f"my key is {OPENAI}"}
        reply = _post(url, body)
    finally:
        _stop(process)
    assert reply.status_code == 200, reply.text
    assert OPENAI not in _sent(fake_llm)
