"""The line codec: decoding, encoding, and lossless round trips (DESIGN)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from contextree.entries.codec import (
    LineError,
    decode_object,
    decode_object_strict,
    decode_replacing,
    encode_line,
    entry_problem,
    header_problem,
    replaced_text,
    replacements,
)
from contextree.session import SessionTree
from core_helpers import Chain, assistant, header, jsonl, user

# --- decode_object / encode_line ---------------------------------------------------------------


def test_decode_object_keeps_every_key_in_order() -> None:
    line = b'{"type":"message","zeta":1,"id":"a1","alpha":{"b":[1,2.5,null,true]},"parentId":null}'
    obj = decode_object(line)
    assert list(obj) == ["type", "zeta", "id", "alpha", "parentId"]
    assert obj["alpha"] == {"b": [1, 2.5, None, True]}


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        (b'{"type":"message",', "not valid JSON"),
        (b"not json at all", "not valid JSON"),
        (b"[1,2]", "expected a JSON object, found list"),
        (b'"text"', "expected a JSON object, found str"),
        (b"42", "expected a JSON object, found int"),
    ],
)
def test_decode_object_rejects_non_objects_with_a_reason(line: bytes, reason: str) -> None:
    with pytest.raises(LineError) as info:
        decode_object(line)
    assert reason in str(info.value)


# --- invalid UTF-8 (issue 11): read as pi reads it, U+FFFD for each invalid sequence ------------

# What node 20's Buffer.toString("utf8") (pi's readFileSync(path, "utf8")) gives for each
# sequence inside a JSON string, as checked against node: one U+FFFD per maximal invalid part.
NODE_REPLACEMENTS = [
    ("ff", "\ufffd"),
    ("80", "\ufffd"),
    ("8080", "\ufffd\ufffd"),
    ("c3", "\ufffd"),
    ("c3c3a9", "\ufffd\u00e9"),
    ("e282", "\ufffd"),
    ("f09f98", "\ufffd"),
    ("c0af", "\ufffd\ufffd"),
    ("eda080", "\ufffd\ufffd\ufffd"),
    ("f4908080", "\ufffd\ufffd\ufffd\ufffd"),
    ("f8", "\ufffd"),
]


@pytest.mark.parametrize(("sequence", "text"), NODE_REPLACEMENTS)
def test_invalid_utf8_reads_as_node_reads_it(sequence: str, text: str) -> None:
    line = b'{"type":"message","text":"a' + bytes.fromhex(sequence) + b'b"}'
    assert decode_object(line) == {"type": "message", "text": f"a{text}b"}
    with pytest.raises(LineError, match="Invalid UTF-8"):
        decode_object_strict(line)


def test_replaced_text_is_none_for_valid_utf8_and_counts_replacements() -> None:
    before = replacements()
    assert replaced_text("caf\u00e9 \u2713 \U0001f600".encode()) is None
    assert replacements() == before
    assert replaced_text(memoryview(b"caf\xe9")) == "caf\ufffd"
    assert replacements() == before + 1


def test_decode_replacing_raises_the_first_error_for_a_valid_utf8_line() -> None:
    line = b'{"type":"message",'
    with pytest.raises(LineError) as first:
        decode_object_strict(line)
    with pytest.raises(LineError) as again:
        decode_replacing(line, first.value)
    assert again.value is first.value


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        (b'{"type":"message",\xff"x":1}', "not valid JSON"),  # outside a string: not JSON
        (b'"\xff"', "expected a JSON object, found str"),
    ],
)
def test_invalid_utf8_that_is_not_a_json_object_either_is_a_line_error(
    line: bytes, reason: str
) -> None:
    with pytest.raises(LineError) as info:
        decode_object(line)
    assert reason in str(info.value) and "(and invalid UTF-8)" in str(info.value)


def test_encode_line_is_compact_utf8_without_newline() -> None:
    data = encode_line({"type": "label", "text": "café ✓ 😀", "n": [1, None, False]})
    assert data == '{"type":"label","text":"café ✓ 😀","n":[1,null,false]}'.encode()
    assert not data.endswith(b"\n")


def test_encode_line_matches_json_stringify_spelling_of_pi_lines() -> None:
    # pi writes JSON.stringify output: no spaces, non-ASCII raw, control characters escaped.
    obj = {"type": "message", "message": {"role": "user", "content": 'a\nb\t"q" é'}}
    expected = json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode()
    assert encode_line(obj) == expected


# --- header and entry problems -----------------------------------------------------------------


def test_valid_headers_have_no_problem() -> None:
    assert header_problem(header()) is None
    assert header_problem(header(version=None)) is None  # v1: no version key


@pytest.mark.parametrize(
    ("obj", "words"),
    [
        ({"type": "message", "id": "x"}, ['type "session"', "'message'"]),
        ({"type": "session", "id": 5}, ['"id"']),
        ({"type": "session"}, ['"id"']),
        ({"type": "session", "id": "s", "version": "3"}, ["version", "'3'"]),
        ({"type": "session", "id": "s", "version": 0}, ["version"]),
        ({"type": "session", "id": "s", "version": True}, ["version"]),
    ],
)
def test_header_problems_have_reasons(obj: dict[str, Any], words: list[str]) -> None:
    problem = header_problem(obj)
    assert problem is not None
    for word in words:
        assert word in problem


def test_entry_problems() -> None:
    good = {"type": "message", "id": "a", "parentId": None, "message": {"role": "user"}}
    assert entry_problem(good, needs_id=True) is None
    assert entry_problem({"type": "brand_new_kind", "id": "a"}, needs_id=True) is None
    assert entry_problem({"type": "message", "message": {"role": "user"}}, needs_id=False) is None
    assert "type" in (entry_problem({"id": "a"}, needs_id=True) or "")
    assert "id" in (entry_problem({"type": "label"}, needs_id=True) or "")
    assert "parentId" in (
        entry_problem({"type": "label", "id": "a", "parentId": 3}, needs_id=True) or ""
    )
    assert '"message"' in (entry_problem({"type": "message", "id": "a"}, needs_id=True) or "")
    assert "role" in (
        entry_problem({"type": "message", "id": "a", "message": {}}, needs_id=True) or ""
    )


# --- lossless round trips (hypothesis) ---------------------------------------------------------

_keys = st.text(min_size=1, max_size=8)
_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**53), max_value=2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
)
_json = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_keys, inner, max_size=4),
    max_leaves=12,
)
_json_objects = st.dictionaries(_keys, _json, max_size=6)


@given(_json_objects)
@settings(max_examples=150)
def test_decode_encode_round_trip_is_lossless(obj: dict[str, Any]) -> None:
    line = encode_line(obj)
    decoded = decode_object(line)
    assert decoded == obj
    assert list(decoded) == list(obj)  # key order survives
    assert encode_line(decoded) == line  # and re-encoding is byte-identical


# Names that are surely not pi's, so they exercise the "unknown" paths.
_unknown_names = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_", min_size=3, max_size=10).map(
    lambda s: "zz_" + s
)


@given(
    extra=_json_objects,
    unknown_type=_unknown_names,
    unknown_role=_unknown_names,
    message_extra=_json_objects,
)
@settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow])
def test_unknown_fields_types_and_roles_survive_a_tree_rewrite(
    extra: dict[str, Any],
    unknown_type: str,
    unknown_role: str,
    message_extra: dict[str, Any],
) -> None:
    base_keys = {"type", "id", "parentId", "timestamp", "message", "version", "cwd"}
    extra = {k: v for k, v in extra.items() if k not in base_keys}
    message_extra = {k: v for k, v in message_extra.items() if k not in {"role"}}
    chain = Chain()
    first = chain.msg(user("start"))
    chain.add(unknown_type, **extra)
    chain.msg({"role": unknown_role, **message_extra})
    chain.msg(assistant("end"), **extra)
    data = jsonl(header(**extra), *chain.entries)
    tree = SessionTree.in_memory(data)
    assert tree.get_entries() == chain.entries
    assert tree.header == header(**extra)

    changed = dict(first, message=user("changed"))
    tree.rewrite_entries([changed])
    written = tree.store.getvalue()  # type: ignore[attr-defined]
    old_lines, new_lines = data.splitlines(), written.splitlines()
    assert len(new_lines) == len(old_lines)
    assert json.loads(new_lines[1]) == changed
    # Every line we did not change is written back byte for byte, unknowns included.
    assert new_lines[0] == old_lines[0]
    assert new_lines[2:] == old_lines[2:]
    reopened = SessionTree.in_memory(written)
    assert reopened.get_entries() == [changed, *chain.entries[1:]]
