"""Parsing stored bytes: lazy records, bad lines kept and reported, headers (§1.7, decision 6)."""

from __future__ import annotations

import gc
import json
from pathlib import Path

import pytest

from contextree.errors import SessionFileError, UnsupportedVersionError
from contextree.session import SessionTree
from contextree.store import BadLine, LoadReport, Record, parse_session
from contextree.store.index import entries_of
from contextree.store.lines import parse_entry_lines
from core_helpers import Chain, assistant, header, jsonl, user


def _session() -> tuple[Chain, bytes]:
    chain = Chain()
    chain.msg(user("one"))
    chain.msg(assistant("two"))
    chain.msg(user("three"))
    return chain, jsonl(header(), *chain.entries)


def test_records_carry_the_envelope_and_decode_bodies_lazily() -> None:
    chain, data = _session()
    parsed = parse_session(data, "s.jsonl")
    assert parsed.header == header()
    assert parsed.version == 3
    records = [item for item in parsed.items if isinstance(item, Record)]
    assert [(r.type, r.id, r.parent_id, r.line) for r in records] == [
        ("message", "e001", None, 2),
        ("message", "e002", "e001", 3),
        ("message", "e003", "e002", 4),
    ]
    assert not any(r.is_decoded for r in records)
    assert records[1].entry == chain.entries[1]
    assert records[1].is_decoded
    assert not records[0].is_decoded
    assert parsed.report.clean
    assert parsed.report.messages() == []


def test_malformed_lines_are_skipped_kept_in_place_and_reported_with_line_numbers() -> None:
    chain, _ = _session()
    lines = [
        jsonl(header()),
        jsonl(chain.entries[0]),
        b'{"type":"message","id":"broken",\n',  # line 3
        jsonl(chain.entries[1]),
        b"\n",  # line 5: blank lines are skipped silently
        b"[1, 2, 3]\n",  # line 6
        b'{"id":"no-type"}\n',  # line 7
        b'{"type":"label","targetId":"e001"}\n',  # line 8: v3 entry without id
        jsonl(chain.entries[2]),
    ]
    parsed = parse_session(b"".join(lines), "s.jsonl")
    bad = parsed.report.bad_lines
    assert [b.line for b in bad] == [3, 6, 7, 8]
    assert "not valid JSON" in bad[0].reason
    assert '"type"' in bad[2].reason
    assert '"id"' in bad[3].reason
    assert bad[0].raw == b'{"type":"message","id":"broken",'
    kinds = ["bad" if isinstance(i, BadLine) else i.id for i in parsed.items]
    assert kinds == ["e001", "bad", "e002", "bad", "bad", "bad", "e003"]
    messages = parsed.report.messages()
    assert messages[0].startswith("s.jsonl:3: skipped: ")
    assert len(messages) == 4
    assert not parsed.report.clean


def test_a_partial_last_line_is_reported_as_an_interrupted_write() -> None:
    _, data = _session()
    parsed = parse_session(data + b'{"type":"message","id":"x', "s.jsonl")
    assert parsed.report.partial_last_line
    last = parsed.items[-1]
    assert isinstance(last, BadLine)
    assert last.line == 5
    assert "partial last line" in last.reason
    assert parsed.report.bad_lines == [last]


def test_a_complete_last_line_without_newline_is_still_an_entry() -> None:
    chain, data = _session()
    parsed = parse_session(data.rstrip(b"\n"), "s.jsonl")
    assert parsed.report.partial_last_line
    assert parsed.report.bad_lines == []
    assert isinstance(parsed.items[-1], Record)
    assert parsed.items[-1].entry == chain.entries[-1]


def test_garbage_before_the_header_is_kept_and_reported() -> None:
    _, data = _session()
    parsed = parse_session(b"garbage line\n" + data, "s.jsonl")
    assert parsed.header["id"] == "sess-1"
    assert [b.line for b in parsed.leading] == [1]
    assert parsed.report.bad_lines[0].line == 1
    assert [r.line for r in parsed.items if isinstance(r, Record)] == [3, 4, 5]


def test_v1_entries_without_ids_are_records() -> None:
    data = jsonl(header(version=None), {"type": "message", "message": user("a")})
    parsed = parse_session(data, "s.jsonl")
    assert parsed.version == 1
    assert isinstance(parsed.items[0], Record)
    assert parsed.items[0].id is None


# --- files that are not sessions: errors, and the bytes stay untouched -------------------------

_NOT_SESSIONS = {
    "entry-first": (jsonl({"type": "message", "id": "a", "message": user()}), 1, "not a session"),
    "header-id-not-string": (jsonl({"type": "session", "id": 7}), 1, '"id"'),
    "only-garbage": (b"{oops\nnot json\n", None, "no valid session header"),
    "header-after-garbage-is-entry": (
        b"{oops\n" + jsonl({"type": "label", "id": "a"}),
        2,
        "not a session",
    ),
}


@pytest.mark.parametrize(("data", "line", "words"), _NOT_SESSIONS.values(), ids=_NOT_SESSIONS)
def test_a_file_without_a_valid_header_raises_and_is_left_unchanged(
    tmp_path: Path, data: bytes, line: int | None, words: str
) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(data)
    with pytest.raises(SessionFileError) as info:
        SessionTree.open(path)
    error = info.value
    assert error.path == str(path)
    assert error.line == line
    assert str(path) in str(error)
    assert words in str(error)
    assert "left unchanged" in str(error)
    assert path.read_bytes() == data  # never truncated (DESIGN decision 6)


def test_parse_session_of_empty_bytes_says_empty() -> None:
    with pytest.raises(SessionFileError) as info:
        parse_session(b"", "empty.jsonl")
    assert "empty" in str(info.value)
    assert str(info.value).startswith("empty.jsonl")


@pytest.mark.parametrize("data", [b"", b"\n\n  \n"], ids=["empty", "blank"])
def test_an_empty_file_opens_as_a_new_session_and_is_not_written_on_open(
    tmp_path: Path, data: bytes
) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(data)
    tree = SessionTree.open(path, cwd="/work")
    assert len(tree) == 0
    assert tree.leaf_id is None
    assert path.read_bytes() == data
    entry_id = tree.append_message(user("first"))
    lines = [json.loads(line) for line in path.read_bytes().splitlines()]
    assert [line["type"] for line in lines] == ["session", "message"]
    assert lines[0]["version"] == 3
    assert lines[1]["id"] == entry_id


def test_an_unsupported_version_raises_and_leaves_the_file(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    data = jsonl(header(version=4), {"type": "message", "id": "a", "message": user()})
    path.write_bytes(data)
    with pytest.raises(UnsupportedVersionError) as info:
        SessionTree.open(path)
    assert isinstance(info.value, SessionFileError)
    assert info.value.line == 1
    assert "version 4" in str(info.value)
    assert path.read_bytes() == data


def test_a_file_of_only_malformed_entries_after_a_header_opens_empty_with_a_report(
    tmp_path: Path,
) -> None:
    path = tmp_path / "s.jsonl"
    data = jsonl(header()) + b"{bad\n{worse\n"
    path.write_bytes(data)
    tree = SessionTree.open(path)
    assert len(tree) == 0
    assert [b.line for b in tree.report.bad_lines] == [2, 3]
    assert path.read_bytes() == data


def test_bulk_decoding_pauses_the_collector_and_restores_it() -> None:
    chain = Chain()
    for n in range(1200):
        chain.msg(user(f"m{n}"))
    records = [i for i in parse_session(jsonl(header(), *chain.entries), "s").items]
    assert all(isinstance(r, Record) for r in records)
    seen: list[bool] = []
    original = Record.entry.fget
    assert original is not None

    def spy(record: Record) -> object:
        seen.append(gc.isenabled())
        return original(record)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Record, "entry", property(spy))
        assert entries_of(records[:10]) == chain.entries[:10]  # small batches: collector runs
        assert seen == [True] * 10
        seen.clear()
        assert entries_of(records) == chain.entries
        assert set(seen) == {False}
    assert gc.isenabled()
    gc.disable()
    try:
        entries_of(records)
        assert not gc.isenabled()  # a caller's choice to keep it off is left alone
    finally:
        gc.enable()


# --- envelopes (the store decodes only the keys that place an entry) --------------------------


def _envelope(line: bytes, *, needs_id: bool = True) -> Record | BadLine:
    [item] = parse_entry_lines(line, first_line=2, needs_id=needs_id, report=LoadReport("s"))
    return item


def test_an_envelope_reads_only_the_tree_keys() -> None:
    record = _envelope(
        b'{"type":"message","id":"ab12cd34","parentId":null,"timestamp":"t","message":{"x":1}}'
    )
    assert isinstance(record, Record)
    assert (record.type, record.id, record.parent_id, record.timestamp, record.line) == (
        "message",
        "ab12cd34",
        None,
        "t",
        2,
    )
    assert not record.is_decoded


def test_the_timestamp_is_read_from_the_line_not_kept() -> None:
    record = _envelope(b'{"type":"message","id":"ab12cd34","timestamp":"t","message":{}}')
    assert isinstance(record, Record)
    assert not hasattr(record, "__dict__") and "timestamp" not in Record.__struct_fields__
    assert record.timestamp == "t" and not record.is_decoded
    # Not a string: the line is still an entry (pi reads it), with no timestamp.
    numeric = _envelope(b'{"type":"message","id":"ab12cd35","timestamp":5,"message":{}}')
    assert isinstance(numeric, Record) and numeric.timestamp is None


def test_the_envelope_of_a_v1_line_has_no_id() -> None:
    v1_line = b'{"type":"message","timestamp":"t","message":{"role":"user"}}'
    record = _envelope(v1_line, needs_id=False)
    assert isinstance(record, Record)
    assert (record.type, record.id, record.parent_id) == ("message", None, None)


@pytest.mark.parametrize(
    ("line", "words"),
    [
        (b'{"type":"message","id":12345678}', ["id", "str"]),
        (b'{"type":"message","id":"a","parentId":7}', ["parentId"]),
        (b'{"type":5,"id":"a"}', ["type"]),
        (b"[]", ["object"]),
        (b'{"type":"message",', ["not valid JSON"]),
    ],
)
def test_envelope_errors_say_what_and_where(line: bytes, words: list[str]) -> None:
    bad = _envelope(line)
    assert isinstance(bad, BadLine)
    for word in words:
        assert word in bad.reason


def test_entries_decoded_a_run_at_a_time_are_what_each_line_decodes_to() -> None:
    """entries_of decodes records on consecutive lines with one call; a line that strict
    decoding rejects (invalid UTF-8, pi's lone surrogate escapes, an array where an object
    was expected is not possible for a record) leaves its run to the line-by-line decode."""
    chain = Chain()
    for n in range(6):
        chain.msg(user(f"u{n} \u00e9 \U0001f600"))
    lines = [jsonl(entry) for entry in chain.entries]
    lines.insert(3, b"\n")  # a blank line splits the runs
    lines.insert(5, b'{"type":"message","id":"sur1","parentId":"e003","message":'
                    b'{"role":"user","content":"cut \\ud83e"}}\n')
    lines.append(b'{"type":"message","id":"bad8","parentId":"e006","message":'
                 b'{"role":"user","content":"x \xff y"}}\n')
    data = jsonl(header()) + b"".join(lines)

    def fresh() -> list[Record]:
        parsed = parse_session(data, "s.jsonl")
        return [item for item in parsed.items if isinstance(item, Record)]

    one_by_one = fresh()
    expected = [record.entry for record in one_by_one]
    records = fresh()
    records[1].entry  # one decoded already: it stays what it was  # noqa: B018
    assert entries_of(records) == expected
    assert [r.utf8_replaced for r in records] == [r.utf8_replaced for r in one_by_one]
    assert records[-1].utf8_replaced and expected[-1]["message"]["content"] == "x \ufffd y"
    assert expected[4]["message"]["content"] == "cut \ufffd"
    # A path with a side branch left out: the runs break where a line is skipped.
    path = fresh()
    path = [*path[:2], *path[3:]]
    assert entries_of(path) == [*expected[:2], *expected[3:]]
