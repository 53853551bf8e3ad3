"""``contextree context`` reads what the context needs, not the whole file (issue 27).

In a large session the context lies in the file's tail: the command checks that part of the
path for a parent cycle and warns about the lines it read, with their true line numbers. A
problem further back is for ``info`` and ``check``, which read every line.
"""

from __future__ import annotations

import json
import random
import string
from pathlib import Path
from typing import Any

import pytest

from cli_env import invoke, ok
from contextree.cli.context_render import _ASCII_CONTROLS, _printable_fast
from contextree.cli.preview import CONTROL_CHARACTERS, printable
from contextree.session.tree import SessionTree
from core_helpers import Chain, header, jsonl, user

pytestmark = pytest.mark.usefixtures("clean_cli")

FILLER = 600
"""Old entries of 4 kB each: more than the lazy index's first steps back decode."""


def _session(path: Path, *, loop_in_history: bool = False) -> dict[str, int]:
    """A session whose context is its tail (after a compaction), with an unreadable line near
    the start and one in the tail; returns the line numbers of those two lines."""
    chain = Chain("h")
    if loop_in_history:
        # The history's first entry hangs under the second: a loop far behind the compaction.
        chain.msg(user("start of a loop"), parent="h002")
    else:
        chain.msg(user("start"))
    for n in range(FILLER):
        chain.msg(user(f"old message {n} " + "x" * 4000))
    chain.add("model_change", provider="anthropic", modelId="claude-sonnet-4")
    chain.add("thinking_level_change", thinkingLevel="high")
    kept = chain.msg(user("the first kept message"))
    chain.add("compaction", summary="what happened", firstKeptEntryId=kept["id"], tokensBefore=9)
    chain.msg(user("after the compaction"))
    lines = [jsonl(header())] + [jsonl(entry) for entry in chain.entries]
    early, late = 3, len(lines)  # 0-based positions of the bad lines once inserted
    lines.insert(early, b"this line is not json\n")
    lines.insert(late, b"{also not json\n")
    path.write_bytes(b"".join(lines))
    return {"early": early + 1, "late": late + 1}


def _warnings(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.startswith("warning:")]


def test_context_warns_about_the_lines_it_read_with_their_line_numbers(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    where = _session(path)
    result = ok("context", path)
    assert "after the compaction" in result.stdout
    assert "old message" not in result.stdout
    warned = _warnings(result.output)
    assert len(warned) == 1, result.output
    assert f"{path}:{where['late']}: skipped" in warned[0]
    # info reads every line: both, with the same numbers
    info = _warnings(ok("info", path).output)
    assert any(f"{path}:{where['early']}: skipped" in line for line in info), info
    assert any(f"{path}:{where['late']}: skipped" in line for line in info), info


def test_the_partial_report_becomes_the_whole_one(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    where = _session(path)
    tree = SessionTree.open(path)
    tree.build_session_context()
    partial = [bad.line for bad in tree.read_report.bad_lines]
    assert partial == [where["late"]]
    assert [bad.line for bad in tree.report.bad_lines] == [where["early"], where["late"]]
    assert [bad.line for bad in tree.read_report.bad_lines] == [where["early"], where["late"]]


def test_a_loop_behind_the_compaction_leaves_context_working(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    _session(path, loop_in_history=True)
    assert "after the compaction" in ok("context", path).stdout
    assert json.loads(ok("context", path, "-f", "json").stdout)["messages"]
    # Every command that reads the whole path still refuses it, and check reports it.
    for args in (["info"], ["compact", "--dry-run"]):
        refused = invoke(*args, path)
        assert refused.exit_code == 1, refused.output
        assert "its parent chain loops back on itself" in refused.output
    assert invoke("check", path).exit_code == 1


def test_a_loop_in_the_part_the_context_reads_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    chain = Chain("k")
    chain.msg(user("one"))
    chain.msg(user("two"))
    chain.entries[0]["parentId"] = "k002"  # no compaction: the context reads the whole path
    path.write_bytes(jsonl(header(), *chain.entries))
    result = invoke("context", path)
    assert result.exit_code == 1
    assert "its parent chain loops back on itself" in result.output


def test_ascii_controls_are_the_ascii_part_of_control_characters() -> None:
    ascii_controls = {c for c in range(0x80) if CONTROL_CHARACTERS.match(chr(c))}
    assert set(_ASCII_CONTROLS) == ascii_controls


@pytest.mark.parametrize("seed", range(20))
def test_printable_fast_is_printable(seed: int) -> None:
    rng = random.Random(seed)
    alphabet: list[Any] = [
        *string.printable,
        *(chr(c) for c in range(0x20)),
        "\x7f",
        "\x85",
        "\x9b",
        "\xa0",
        "é",
        "─",
        "中",
        "\U0001f600",
    ]
    text = "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 400)))
    assert _printable_fast(text) == printable(text)
