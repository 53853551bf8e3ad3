"""``contextree context SESSION`` into a pipe skips building the command line (issue 27).

:mod:`contextree.cli.context_fast` prints the usual case itself; anything else falls through to
the full command. Either way the output is the same bytes.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from cli_env import copy_pi_fixture as copy
from cli_env import ok
from contextree.cli import entry
from contextree.cli.context_fast import print_context
from core_helpers import Chain, assistant, header, jsonl, user

pytestmark = pytest.mark.usefixtures("clean_cli")


def _fast(capsys: pytest.CaptureFixture[str], target: str) -> tuple[bool, str]:
    printed = print_context(target)
    return printed, capsys.readouterr().out


@pytest.mark.parametrize("name", ["before-compaction.jsonl", "large-session.jsonl"])
def test_the_fast_path_prints_what_the_command_prints(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    path = copy(name, tmp_path)
    expected = ok("context", path).stdout
    capsys.readouterr()
    assert _fast(capsys, str(path)) == (True, expected)


def test_the_fast_path_through_the_entry_point(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    chain = Chain()
    chain.msg(user("hello\x1b[2J there"))
    chain.msg(assistant("hi"))
    path = tmp_path / "s.jsonl"
    path.write_bytes(jsonl(header(), *chain.entries))
    expected = ok("context", path).stdout
    capsys.readouterr()
    monkeypatch.setattr(sys, "argv", ["contextree", "context", str(path)])
    exits: list[bool] = []
    monkeypatch.setattr(entry, "exit_now", lambda: exits.append(True))  # not pytest's process
    entry.main()
    assert capsys.readouterr().out == expected
    assert exits == [True]
    assert "\x1b" not in expected


def test_what_needs_the_full_command_prints_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    chain = Chain()
    chain.msg(user("one"))
    warned = tmp_path / "warned.jsonl"
    warned.write_bytes(jsonl(header(), *chain.entries) + b"not json\n")
    looped = tmp_path / "looped.jsonl"
    chain.entries[0]["parentId"] = chain.entries[0]["id"]
    looped.write_bytes(jsonl(header(), *chain.entries))
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    for target in [warned, looped, empty, tmp_path / "missing.jsonl", tmp_path, "sqlite:///x"]:
        assert _fast(capsys, str(target)) == (False, ""), target
    monkeypatch.setenv("FORCE_COLOR", "1")  # rich would style it: the full command prints
    good = tmp_path / "good.jsonl"
    good.write_bytes(jsonl(header(), *Chain().entries, Chain().msg(user("x"))))
    assert _fast(capsys, str(good)) == (False, "")


def test_the_installed_command_prints_warnings_the_fast_path_leaves_to_it(
    tmp_path: Path,
) -> None:
    chain = Chain()
    chain.msg(user("one"))
    path = tmp_path / "s.jsonl"
    path.write_bytes(jsonl(header(), *chain.entries) + b"not json\n")
    done = subprocess.run(
        [sys.executable, "-m", "contextree", "context", str(path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "one" in done.stdout
    assert f"{path}:3: skipped" in done.stderr


def test_the_fast_path_exits_with_its_output_flushed(tmp_path: Path) -> None:
    chain = Chain()
    for n in range(300):
        chain.msg(user(f"message {n} " + "x" * 200))
    path = tmp_path / "s.jsonl"
    path.write_bytes(jsonl(header(), *chain.entries))
    out = tmp_path / "out.txt"
    with out.open("wb") as sink:
        done = subprocess.run(
            [sys.executable, "-m", "contextree", "context", str(path)], stdout=sink, check=False
        )
    assert done.returncode == 0
    text = out.read_text(encoding="utf-8")
    assert "message 299" in text
    assert text.endswith("model -\n")


@pytest.mark.parametrize("name", ["before-compaction.jsonl", "large-session.jsonl"])
def test_the_plain_and_the_styled_text_are_the_same(tmp_path: Path, name: str) -> None:
    from contextree.cli.context_render import context_plain, context_text
    from contextree.context.convert import convert_to_llm
    from contextree.session.tree import SessionTree

    tree = SessionTree.open(copy(name, tmp_path))
    messages = convert_to_llm(tree.build_session_context().messages)
    lines = [text.plain for text in context_text(messages).renderables]  # type: ignore[attr-defined]
    assert context_plain(messages) == "".join(line + "\n" for line in lines)
