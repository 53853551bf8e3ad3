"""A real model end to end (issue 10 item 8): llama.cpp's server with SmolLM2-135M on
127.0.0.1, an 8,192-token window, and the shipped 48k-token example session.

The model is tiny, so its summaries are poor; what is tested is everything around it: the
OpenAI-compatible client (JSON and streaming), the server's own overflow reply, summaries in
windows that fit, the recorded facts that do not depend on the model, branch summaries, and the
fallback to the offline summarizer when the server goes away.
"""

from __future__ import annotations

import asyncio
import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from contextree.branching import navigate_tree
from contextree.compaction.offline import RECORDED_FACTS_HEADING
from contextree.compaction.run import CompactionOutcome, compact_session
from contextree.errors import ModelError
from contextree.llm.base import Completion, CompletionRequest, ModelClient
from contextree.llm.errors import classify
from contextree.llm.registry import create_client
from contextree.session.tree import SessionTree
from contextree.settings.schema import CompactionSettings
from realmodel.conftest import N_CTX, LlamaServer, require_real_model, start_server
from reliability.fuzzing import run_cli

pytestmark = pytest.mark.realmodel

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "todo-api-session.jsonl"


def _client(server: LlamaServer, *, stream: bool = False) -> ModelClient:
    return create_client(server.spec, base_url=server.base_url, stream=stream, timeout=600)


def _ask(text: str, max_tokens: int = 24) -> CompletionRequest:
    return CompletionRequest(
        system_prompt="Answer in one short sentence.",
        messages=[{"role": "user", "content": [{"type": "text", "text": text}]}],
        max_tokens=max_tokens,
    )


@dataclass
class Recording:
    """A client that passes every call on and remembers the overflow replies."""

    inner: ModelClient
    overflows: list[str] = field(default_factory=list)
    calls: int = 0

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def parallel_requests(self) -> bool:
        # llama-cpp-python's server ends a running stream when a second request arrives.
        return bool(getattr(self.inner, "parallel_requests", True))

    async def complete(self, request: CompletionRequest) -> Completion:
        self.calls += 1
        try:
            return await self.inner.complete(request)
        except ModelError as exc:
            if classify(exc) == "overflow":
                self.overflows.append(str(exc))
            raise


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_our_client_gets_a_completion(llama_server: LlamaServer, stream: bool) -> None:
    reply = asyncio.run(_client(llama_server, stream=stream).complete(_ask("Name a colour.")))
    assert reply.text.strip()
    assert reply.stop_reason in ("stop", "length")
    if not stream:  # llama-cpp-python's server sends no usage chunk when streaming
        assert reply.usage["input"] > 0 and reply.usage["output"] > 0


def test_the_servers_overflow_reply_is_classified_as_overflow(llama_server: LlamaServer) -> None:
    # The server answers 400 "This model's maximum context length is 8192 tokens. However,
    # you requested 12041 tokens (12031 in the messages, 10 in the completion). ..."
    with pytest.raises(ModelError) as caught:
        asyncio.run(_client(llama_server).complete(_ask("word " * 12_000, max_tokens=10)))
    assert classify(caught.value) == "overflow"
    assert f"maximum context length is {N_CTX} tokens" in str(caught.value)


def test_compact_the_example_through_the_command_line(
    llama_server: LlamaServer, tmp_path: Path
) -> None:
    """No window configured: the server's 400 replies find the size that fits."""
    path = tmp_path / "demo.jsonl"
    shutil.copyfile(EXAMPLE, path)
    before = path.read_bytes()
    # Keeping 30k tokens verbatim leaves ~18k to summarize: about three windows of this model.
    args = ["compact", str(path), "--model", llama_server.spec, "--base-url",
            llama_server.base_url, "--summary-tokens", "384", "--keep-recent", "30000",
            "--quiet"]  # fmt: skip
    outcome = run_cli(args)
    assert outcome.exit_code == 0, outcome.stderr
    assert "falling back" not in outcome.stderr
    after = path.read_bytes()
    assert after.startswith(before)
    (line,) = after[len(before) :].splitlines()
    entry = json.loads(line)
    assert entry["type"] == "compaction" and entry["details"]["method"] == "hybrid"
    # Whatever the small model wrote, the user's rules are in the summary, verbatim.
    assert RECORDED_FACTS_HEADING in entry["summary"]
    assert "Don't change the public response schema." in entry["summary"]
    context = run_cli(["context", str(path)])
    assert context.exit_code == 0 and entry["summary"][:200] in context.stdout


def test_a_known_window_is_planned_so_no_request_overflows(
    llama_server: LlamaServer, tmp_path: Path
) -> None:
    path = tmp_path / "demo.jsonl"
    shutil.copyfile(EXAMPLE, path)
    client = Recording(_client(llama_server, stream=True))
    settings = CompactionSettings(keep_recent_tokens=30_000, summary_tokens=256)
    outcome = asyncio.run(
        compact_session(SessionTree.open(path), client, settings=settings, context_window=N_CTX)
    )
    assert isinstance(outcome, CompactionOutcome)
    assert outcome.result.method == "hybrid"
    assert outcome.result.windows >= 2
    assert client.overflows == []
    reopened = SessionTree.open(path)
    assert reopened.build_session_context().messages[0]["role"] == "compactionSummary"


def test_navigate_with_a_branch_summary_from_the_real_model(llama_server: LlamaServer) -> None:
    tree = SessionTree.in_memory()
    root = tree.append_message(
        {"role": "user", "content": [{"type": "text", "text": "Plan the cache."}], "timestamp": 1}
    )
    tree.append_message(
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "I will try an LRU cache in cache.py."}],
            "stopReason": "stop",
            "timestamp": 2,
        }
    )
    result = asyncio.run(
        navigate_tree(
            tree, root, summarize=True, client=_client(llama_server), context_window=N_CTX
        )
    )
    assert result.summary_entry is not None
    assert result.summary_entry["type"] == "branch_summary"
    assert result.summary_entry["summary"].strip()


def test_a_stopped_server_falls_back_to_the_offline_summarizer(tmp_path: Path) -> None:
    require_real_model()
    server = start_server(tmp_path / "server.log")
    try:
        assert asyncio.run(_client(server).complete(_ask("Say hi."))).text.strip()
    finally:
        server.stop()
    path = tmp_path / "demo.jsonl"
    shutil.copyfile(EXAMPLE, path)
    before = path.read_bytes()
    base = ["compact", str(path), "--model", server.spec, "--base-url", server.base_url, "-q"]

    refused = run_cli([*base, "--no-fallback"])
    assert refused.exit_code == 1
    (error,) = refused.stderr.splitlines()
    assert error.startswith("error: ") and "cannot reach" in error
    assert path.read_bytes() == before

    outcome = run_cli(base)
    assert outcome.exit_code == 0, outcome.stderr
    (warning,) = outcome.stderr.splitlines()
    assert warning.startswith("warning: summarizer failed, falling back to the offline summarizer")
    entry = json.loads(path.read_bytes()[len(before) :])
    assert entry["details"]["method"] == "offline-fallback"
    assert "cannot reach" in entry["details"]["fallbackReason"]
