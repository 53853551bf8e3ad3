"""Lone surrogate escapes (issue 15 item 2): pi writes ``"abcd\\ud83e"`` when it cuts a string
inside an emoji (``"abcd🤖".slice(0, 5)``) and reads it back with ``JSON.parse``; so do we.

msgspec rejects such a line, which made pi's valid entry a bad line, orphaned its descendants,
and let ``check --repair`` move it to ``.rejected``. Now the escape is read as U+FFFD (what node
writes for a lone surrogate to any UTF-8 output; one UTF-16 unit, so estimates stay pi's), no
warning is raised for a line pi itself wrote, and the bytes stay verbatim on every rewrite.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from contextree.entries.codec import decode_object_strict, surrogate_free
from contextree.session.check import check_session
from contextree.session.repair import repair_session
from contextree.session.tree import SessionTree
from contextree.tokens.estimate import estimate_tokens
from core_helpers import Chain, assistant, header, jsonl, user
from reliability.fuzzing import run_cli


def _session(tmp_path: Path) -> Path:
    chain = Chain()
    chain.msg(user("first"))
    chain.msg(assistant("abcd@"))  # pi's "abcd🤖".slice(0, 5)
    chain.msg(user("third"))
    chain.msg(assistant("done"))
    path = tmp_path / "s.jsonl"
    path.write_bytes(jsonl(header(), *chain.entries).replace(b"abcd@", b"abcd\\ud83e"))
    return path


@pytest.mark.parametrize(
    ("raw", "text"),
    [
        (rb'{"t":"abcd\ud83e"}', "abcd\ufffd"),  # a lone high half
        (rb'{"t":"\udc00y"}', "\ufffdy"),  # a lone low half
        (rb'{"t":"\ud83e\udd16!"}', "\U0001f916!"),  # a pair is one character
        (rb'{"t":"x\\ud83e"}', "x\\ud83e"),  # an escaped backslash: no escape at all
        (rb'{"t":"a\\\ud83e"}', "a\\\ufffd"),  # a backslash, then a lone escape
    ],
)
def test_lone_surrogate_escapes_read_as_replacement_characters(raw: bytes, text: str) -> None:
    assert decode_object_strict(raw) == {"t": text}


def test_lines_without_lone_surrogates_are_left_alone() -> None:
    assert surrogate_free(rb'{"t":"plain"}') is None
    assert surrogate_free(rb'{"t":"\ud83e\udd16"}') is None


def test_pis_line_is_an_entry_not_a_bad_line(tmp_path: Path) -> None:
    tree = SessionTree.open(_session(tmp_path))
    assert tree.report.clean and not tree.report.bad_lines
    texts = [m["content"][0]["text"] for m in tree.build_session_context().messages]
    assert texts == ["first", "abcd\ufffd", "third", "done"]
    # chars/4 of pi's string: the lone surrogate is one UTF-16 unit, as U+FFFD is.
    message = tree.build_session_context().messages[1]
    assert estimate_tokens(message) == estimate_tokens(
        {**message, "content": [{"type": "text", "text": "abcdX"}]}
    )


def test_check_passes_and_repair_keeps_the_line(tmp_path: Path) -> None:
    path = _session(tmp_path)
    before = path.read_bytes()
    assert not check_session(SessionTree.open(path)).findings
    report = repair_session(path)
    assert not report.changed and path.read_bytes() == before
    outcome = run_cli(["check", str(path)])
    assert outcome.exit_code == 0 and not outcome.stderr


def test_appends_and_rewrites_keep_the_original_bytes(tmp_path: Path) -> None:
    path = _session(tmp_path)
    tree = SessionTree.open(path)
    tree.append_message({"role": "user", "content": "more"})
    assert b"abcd\\ud83e" in path.read_bytes()
    first = tree.get_entries()[0]
    tree.rewrite_entries([{**first, "message": {**first["message"], "content": "edited"}}])
    assert b"abcd\\ud83e" in path.read_bytes()
    assert [m["role"] for m in SessionTree.open(path).build_session_context().messages] == [
        "user", "assistant", "user", "assistant", "user",
    ]  # fmt: skip
