"""Model faults for every client, through ``compact_session`` and through ``contextree compact``
(see :mod:`reliability.faults` for the matrix and what each case must show)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from fakes.fake_llm import FakeLLMServer
from reliability import faults
from reliability.common import FAKE_KEY
from reliability.fuzzing import run_cli


@pytest.mark.parametrize("case", faults.fault_cases(), ids=lambda c: c.id)
def test_a_fault_leaves_the_session_unchanged_and_says_so_in_one_line(
    case: faults.FaultCase, fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    result = asyncio.run(faults.run_fault_case(case, fake_llm, tmp_path))
    assert not result.problems, f"{case.id}: {result.problems} ({result.message})"


CLI_FAULTS = ("ok", "refused", "429-retry-after", "500", "malformed", "empty", "overflow")


@pytest.mark.parametrize("fault", CLI_FAULTS)
@pytest.mark.parametrize("client", ["openai", "anthropic", "remote"])
def test_the_command_line_shows_one_error_line_and_writes_nothing(
    client: str, fault: str, fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    path = tmp_path / "s.jsonl"
    faults.build_session(path)
    before = path.read_bytes()
    faults.script(fake_llm, fault)
    case = faults.FaultCase(client, fault)
    args, env = faults.cli_args(case, fake_llm, path)
    outcome = run_cli(args, env=env)
    after = path.read_bytes()
    assert FAKE_KEY not in outcome.stdout + outcome.stderr
    if fault == "ok":
        assert outcome.exit_code == 0, outcome.stderr
        assert after.startswith(before) and after[len(before) :].count(b"\n") == 1
        return
    assert outcome.exit_code == 1
    lines = outcome.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), outcome.stderr
    assert faults.one_clear_line(lines[0]) == []
    assert after == before


@pytest.mark.parametrize("fault", ["refused", "500", "malformed", "overflow"])
@pytest.mark.parametrize("client", ["openai", "remote"])
def test_by_default_a_failing_model_falls_back_to_the_offline_summarizer(
    client: str, fault: str, fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    path = tmp_path / "s.jsonl"
    faults.build_session(path)
    before = path.read_bytes()
    faults.script(fake_llm, fault)
    args, env = faults.cli_args(faults.FaultCase(client, fault), fake_llm, path, fallback=True)
    outcome = run_cli(args, env=env)
    assert outcome.exit_code == 0, outcome.stderr
    (line,) = outcome.stderr.splitlines()
    assert line.startswith("warning: summarizer failed, falling back to the offline summarizer: ")
    assert FAKE_KEY not in outcome.stdout + outcome.stderr
    after = path.read_bytes()
    assert after.startswith(before)
    (added,) = after[len(before) :].splitlines()
    entry = json.loads(added)
    assert entry["type"] == "compaction" and entry["summary"].strip()
    assert entry["details"]["method"] == "offline-fallback"
    assert entry["details"]["fallbackReason"]
