"""A rebuild reads an entry's text straight from its line (``line_text``): the same document
as the decoded entry gives, for entries of any shape, and the usual shapes take that path."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from contextree.entries.codec import decode_object
from contextree.entries.js_json import js_stringify
from contextree.entries.types import BLOCK_TYPES, MESSAGE_ROLES
from contextree.recall.build import record_documents
from contextree.recall.documents import entry_document
from contextree.recall.line_text import UnusualLine, line_text
from contextree.session.tree import SessionTree

_MISSING = object()

_scalars = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=8)
)
_json = st.recursive(
    _scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=6,
)
_words = st.one_of(st.text(min_size=1, max_size=12), st.sampled_from(["", " ", "a\nb", "é…"]))


def _shapes(odd: bool) -> st.SearchStrategy[dict[str, Any]]:
    """Entries whose fields are of the usual kinds or absent; with ``odd``, any JSON value
    may stand in for any field (the general way then reads most of them)."""

    def field(values: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
        return st.one_of(values, _json, st.just(_MISSING)) if odd else values

    arguments = st.dictionaries(
        st.one_of(st.text(max_size=6), st.sampled_from(["path", "0", "1x", "\u0663"])),
        st.one_of(st.text(max_size=10), st.booleans(), st.none(), st.integers(-9, 2**54)),
        max_size=3,
    )
    block = st.fixed_dictionaries(
        {"type": field(st.sampled_from([*sorted(BLOCK_TYPES), "other"]))},
        optional={
            "text": field(_words),
            "name": field(_words),
            "arguments": field(st.one_of(arguments, arguments, st.text(max_size=6), _json)),
            "thinking": field(_words),
        },
    )
    content = st.one_of(_words, st.lists(block, max_size=4), st.none())
    message = st.fixed_dictionaries(
        {"role": field(st.sampled_from([*sorted(MESSAGE_ROLES), "other"]))},
        optional={
            "content": field(content),
            "prunedContent": field(content),
            "toolName": field(_words),
            "command": field(_words),
            "output": field(_words),
            "summary": field(_words),
            "usage": _json,
        },
    )
    kinds = ["message", "message", "message", "compaction", "branch_summary", "custom_message"]
    return st.fixed_dictionaries(
        {
            "type": st.sampled_from(kinds),
            "id": field(st.text(max_size=8)),
            "timestamp": field(st.text(max_size=8)),
            "message": field(st.one_of(message, message, st.none())),
            "summary": field(_words),
            "content": field(content),
        }
    )


def _present(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _present(v) for k, v in value.items() if v is not _MISSING}
    if isinstance(value, list):
        return [_present(v) for v in value]
    return value


_WRITERS = {
    "js": lambda e: js_stringify(e).encode(),
    "ascii": lambda e: json.dumps(e).encode(),
    "spaced": lambda e: json.dumps(e, ensure_ascii=False, separators=(", ", ": ")).encode(),
}


def _general(line: bytes) -> tuple[str, str, str, str] | None:
    document = entry_document(decode_object(line), 0, None)
    if document is None:
        return None
    return (document.entry_id, document.role, document.timestamp, document.text)


@settings(max_examples=400, deadline=None)
@given(st.one_of(_shapes(odd=False), _shapes(odd=True)), st.sampled_from(sorted(_WRITERS)))
def test_the_same_text_as_the_decoded_entry(entry: dict[str, Any], writer: str) -> None:
    try:
        line = _WRITERS[writer](_present(entry))
    except UnicodeEncodeError:
        return  # a lone surrogate: no UTF-8 line to read
    try:
        fast = line_text(line)
    except UnusualLine:
        return  # read the general way
    assert fast == _general(line)


_USUAL = [
    {"role": "user", "content": "hello there"},
    {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "image", "data": "x"}]},
    {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "hmm", "thinkingSignature": "sig"},
            {"type": "text", "text": "reading it"},
            {"type": "toolCall", "id": "t1", "name": "read", "arguments": {"path": "a.py"}},
            {"type": "toolCall", "id": "t2", "name": "bash", "arguments": {"n": 3, "x": None}},
        ],
        "usage": {"input": 1, "cost": {"total": 0.5}},
    },
    {"role": "toolResult", "toolName": "read", "content": [{"type": "text", "text": "x = 1"}]},
    {"role": "toolResult", "toolName": "read", "content": [], "prunedContent": "the original"},
    {"role": "toolResult", "toolName": "read", "content": "kept", "prunedContent": None},
    {"role": "bashExecution", "command": "ls", "output": "a.py", "exitCode": 0},
    {"role": "compactionSummary", "summary": "what happened"},
    {
        "role": "assistant",
        "content": [
            {"type": "toolCall", "name": "f", "arguments": {"b": 1, "10": 2, "2": True}},
            {"type": "toolCall", "arguments": "as a string"},
            {"type": "toolCall", "name": "g"},
            {"type": "other", "text": "unknown"},
            {"type": "text"},
        ],
    },
    {"role": "someoneElse", "content": "a role this format does not define"},
    {"content": [{"type": "text", "text": "no role"}]},
]


def _usual_lines(*, python_order: bool = False) -> list[bytes]:
    lines = [
        {"type": "message", "id": f"m{n}", "timestamp": "t", "message": message}
        for n, message in enumerate(_USUAL)
    ]
    lines.append({"type": "compaction", "id": "c1", "summary": "so far", "firstKeptEntryId": "m1"})
    lines.append({"type": "custom_message", "id": "c2", "content": "note", "display": True})
    if python_order:  # compact, with keys in the order written (not JavaScript's)
        return [
            json.dumps(line, ensure_ascii=False, separators=(",", ":")).encode() for line in lines
        ]
    return [js_stringify(line).encode() for line in lines]


def test_the_usual_shapes_are_read_from_the_line() -> None:
    for line in [*_usual_lines(), *_usual_lines(python_order=True)]:
        fast = line_text(line)
        assert fast is not None
        assert fast == _general(line)


def test_unusual_shapes_are_left_to_the_general_way() -> None:
    unusual = [
        {"type": "message", "id": "a", "message": {"role": "user", "content": 5}},
        {"type": "message", "id": "a", "message": {"role": None, "content": "x"}},
        {"type": "message", "id": "a", "message": {"role": "user", "content": ["str block"]}},
        {
            "type": "message",
            "id": "a",
            "message": {
                "role": "assistant",
                "content": [{"type": "toolCall", "name": "f", "arguments": {"x": [1, 2.5]}}],
            },
        },
    ]
    for entry in unusual:
        line = js_stringify(entry).encode()
        try:
            line_text(line)
        except UnusualLine:
            continue
        raise AssertionError(f"read from the line: {entry}")


def test_a_line_with_invalid_utf8_is_marked_as_before(tmp_path: Path) -> None:
    # The bytes are in a field the line reader skips: the general way reads the line (and
    # marks the record), as it always did.
    header = {"type": "session", "version": 3, "id": "s", "timestamp": "t", "cwd": "/"}
    entry = {
        "type": "message",
        "id": "abcd0001",
        "parentId": None,
        "timestamp": "t",
        "message": {"role": "user", "content": "hi", "note": "@@"},
    }
    lines = [json.dumps(header).encode(), json.dumps(entry).encode().replace(b"@@", b"\xff\xfe")]
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"\n".join([*lines, *_usual_lines()]) + b"\n")
    records = list(SessionTree.open(path).records())
    documents = list(record_documents(records, 0, str.upper))
    assert [d.text for d in documents[:2]] == ["HI", "HELLO THERE"]
    assert records[0].utf8_replaced
    general = [
        d
        for seq, r in enumerate(records)
        if (d := entry_document(r.peek(), seq, str.upper)) is not None
    ]
    assert documents == general
