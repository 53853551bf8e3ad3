"""``contextree chat`` prints a reply and a tool's output without their control characters.

``context``, ``tree`` and ``expand`` strip them (``contextree.cli.preview.printable``); chat
printed the model's text, its tool calls, the first line of a tool's output and error texts
as they came, and rich passes ESC through. A file in a cloned repository that the agent
``cat``s, or a reply a page talked the model into, could then set the clipboard (OSC 52),
retitle the window or clear the screen of the user's terminal.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from fakes.fake_llm import FakeLLMServer
from reliability.common import FAKE_KEY
from reliability.fuzzing import run_cli

OSC52 = "\x1b]52;c;ZXZpbA==\x1b\\"


def test_replies_and_tool_output_reach_the_terminal_without_escapes(
    fake_llm: FakeLLMServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "README").write_text(f"{OSC52}\x1b[2Jhello from the file\x07\n")
    fake_llm.enqueue_tool_call("read", {"path": f"README{OSC52}"})
    fake_llm.enqueue_tool_call("bash", {"command": "cat README"})
    fake_llm.enqueue_text(f"done {OSC52}\x1b]0;owned\x07\x1b[31mred\x9b2J")
    args = ["chat", "--model", "openai:gpt-4o-mini", "--base-url", fake_llm.url, "-p", "go"]
    outcome = run_cli(args, env={"OPENAI_API_KEY": FAKE_KEY})
    assert outcome.exit_code == 0, outcome.stderr
    shown = outcome.stdout + outcome.stderr
    assert "hello from the file" in shown and "done" in shown
    for char in "\x1b\x07\x9b":
        assert char not in shown, repr(shown)
