"""Invalid UTF-8 in a session line (issue 11): read as pi reads it, reported, kept byte for byte.

pi reads a session with ``readFileSync(path, "utf8")``, which puts U+FFFD for each invalid
sequence, and so uses such a line. contextree does the same, says which line it was, and never
changes or drops the line's bytes unless the entry itself is rewritten.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import contextree.entries.codec as codec
import contextree.store.lines as lines_module
from contextree.session.check import check_session
from contextree.session.repair import repair_session
from contextree.session.tree import SessionTree
from core_helpers import Chain, assistant, header, jsonl, user

# Line 3 (entry e002) holds an invalid byte inside a message text: "caf\xe9" is Latin-1.
BAD_BYTE = b"\xe9"
READ_AS = "caf\ufffd au lait"


def _session(*, header_extra: dict[str, str] | None = None) -> bytes:
    chain = Chain()
    chain.msg(user("first"))
    chain.msg(assistant("caf@ au lait"))
    chain.msg(user("third"))
    chain.msg(assistant("done"))
    return jsonl(header(**(header_extra or {})), *chain.entries).replace(b"@", BAD_BYTE)


def _write(tmp_path: Path, data: bytes) -> Path:
    path = tmp_path / "s.jsonl"
    path.write_bytes(data)
    return path


def _lines(path: Path) -> list[bytes]:
    return path.read_bytes().split(b"\n")


def _text(entry: dict[str, object] | None) -> object:
    assert entry is not None
    message = entry["message"]
    assert isinstance(message, dict)
    return message["content"][0]["text"]


# --- reading ------------------------------------------------------------------------------------


def test_an_entry_with_invalid_utf8_reads_as_pi_reads_it(tmp_path: Path) -> None:
    path = _write(tmp_path, _session())
    tree = SessionTree.open(path)
    assert _text(tree.get_entry("e002")) == READ_AS
    assert len(tree) == 4 and tree.leaf_id == "e004"
    report = tree.report
    assert report.invalid_utf8 == [3]
    assert report.clean  # a warning: nothing skipped, nothing cut off
    assert report.messages() == [
        f"{path}:3: invalid UTF-8 read as U+FFFD (as pi reads it); the line is kept byte for byte"
    ]


def test_the_report_lists_a_body_once_it_is_read(tmp_path: Path) -> None:
    # The envelope decoder skips message bodies, so a body's bytes are seen when it is decoded.
    tree = SessionTree.open(_write(tmp_path, _session()))
    assert tree.report.invalid_utf8 == []
    messages = tree.build_session_context().messages
    assert [m["content"][0]["text"] for m in messages][1] == READ_AS
    assert tree.report.invalid_utf8 == [3]


def test_invalid_utf8_in_an_envelope_field_is_found_on_load(tmp_path: Path) -> None:
    data = _session().replace(b'"type":"message","id":"e003"', b'"type":"messag\xff","id":"e003"')
    assert data != _session()
    tree = SessionTree.open(_write(tmp_path, data))
    assert tree.report.invalid_utf8 == [4]  # nothing decoded but the envelopes
    assert tree.report.bad_lines == []
    assert [r.type for r in tree.records()][2] == "messag\ufffd"


def test_invalid_utf8_in_the_timestamp_is_found_when_it_is_read(tmp_path: Path) -> None:
    # The timestamp is not part of the envelope (it is read when asked for), so its bytes are
    # seen as a body's are.
    data = _session().replace(b'"timestamp":"2026-01-01T00:00:03.000Z"', b'"timestamp":"\xff"')
    tree = SessionTree.open(_write(tmp_path, data))
    assert tree.report.invalid_utf8 == []
    assert tree.report.bad_lines == []
    assert [r.timestamp for r in tree.records()][2] == "\ufffd"
    assert tree.report.invalid_utf8 == [4]
    branch = tree.get_branch()
    assert branch[2]["id"] == "e003"  # still in its place in the tree
    assert [entry["id"] for entry in branch][1] == "e002"
    assert tree.report.invalid_utf8 == [3, 4]  # the path's bodies are read now


def test_a_header_with_invalid_utf8_reads_as_pi_reads_it(tmp_path: Path) -> None:
    path = _write(tmp_path, _session(header_extra={"cwd": "/home/jos@"}))
    original = _lines(path)
    tree = SessionTree.open(path)
    assert tree.header["cwd"] == "/home/jos\ufffd"
    assert 1 in tree.report.invalid_utf8
    findings = check_session(tree).findings
    assert ("warning", 1) in [(f.severity, f.line) for f in findings]
    # A rewrite writes the header as it was read from the file.
    tree.rewrite_entries([{**tree.get_entries()[0], "extra": 1}])
    assert _lines(path)[0] == original[0]
    assert SessionTree.open(path).header["cwd"] == "/home/jos\ufffd"


def test_the_header_line_number_follows_a_rewrite(tmp_path: Path) -> None:
    data = _session(header_extra={"cwd": "/home/jos@"})
    path = _write(tmp_path, b"\n\n" + data)  # two blank lines before the header
    tree = SessionTree.open(path)
    assert tree.report.invalid_utf8 == [3]
    tree.rewrite_entries([{**tree.get_entries()[0], "extra": 1}])  # drops the blank lines
    assert tree.report.invalid_utf8 == [1, 3]  # the header, and e002 (read by get_entries)
    assert _lines(path)[0] == data.split(b"\n")[0]


def test_invalid_utf8_that_breaks_the_json_is_a_bad_line_kept_in_place(tmp_path: Path) -> None:
    data = _session().replace(b',"timestamp":"2026-01-01T00:00:03.000Z"', b',\xff"t":1')
    path = _write(tmp_path, data)
    tree = SessionTree.open(path)
    assert [bad.line for bad in tree.report.bad_lines] == [4]
    assert "(and invalid UTF-8)" in tree.report.bad_lines[0].reason
    tree.rewrite_entries([{**tree.get_entries()[0], "extra": 1}])
    assert _lines(path)[3] == data.split(b"\n")[3]


# --- writing ------------------------------------------------------------------------------------


def test_an_append_keeps_the_line_byte_for_byte(tmp_path: Path) -> None:
    data = _session()
    path = _write(tmp_path, data)
    tree = SessionTree.open(path)
    tree.build_session_context()  # the bad line is decoded (and replaced) in memory
    new_id = tree.append_message(user("after"))
    after = path.read_bytes()
    assert after.startswith(data)
    assert json.loads(after[len(data) :])["id"] == new_id


def test_a_rewrite_writes_the_original_bytes_of_unchanged_lines(tmp_path: Path) -> None:
    data = _session()
    path = _write(tmp_path, data)
    tree = SessionTree.open(path)
    assert _text(tree.get_entry("e002")) == READ_AS
    third = tree.get_entry("e003")
    assert third is not None
    tree.rewrite_entries([{**third, "message": user("third, edited")}])
    lines = _lines(path)
    assert lines[2] == data.split(b"\n")[2]  # e002: the invalid byte is still there
    assert BAD_BYTE in lines[2]
    assert b"third, edited" in lines[3]
    assert tree.report.invalid_utf8 == [3]
    assert _text(SessionTree.open(path).get_entry("e002")) == READ_AS


def test_rewriting_the_entry_itself_stores_the_replacement(tmp_path: Path) -> None:
    path = _write(tmp_path, _session())
    tree = SessionTree.open(path)
    second = tree.get_entry("e002")
    assert second is not None
    tree.rewrite_entries([{**second, "edited": True}])
    assert READ_AS.encode() in _lines(path)[2]  # a changed line is encoded anew: valid UTF-8
    assert tree.report.invalid_utf8 == []
    reopened = SessionTree.open(path)
    assert _text(reopened.get_entry("e002")) == READ_AS
    assert reopened.report.invalid_utf8 == []


def test_a_migration_rewrite_keeps_the_bytes_of_lines_it_does_not_change(tmp_path: Path) -> None:
    chain = Chain()
    chain.msg(user("caf@"))
    chain.msg({"role": "hookMessage", "customType": "x", "content": "hi", "display": True})
    data = jsonl(header(version=2), *chain.entries).replace(b"@", BAD_BYTE)
    path = _write(tmp_path, data)
    tree = SessionTree.open(path)
    assert tree.needs_rewrite
    tree.append_message(user("after"))  # the v2 -> v3 rewrite
    lines = _lines(path)
    assert lines[1] == data.split(b"\n")[1]  # unchanged by the migration: byte for byte
    assert b'"role":"custom"' in lines[2]


def test_line_numbers_follow_a_rewrite(tmp_path: Path) -> None:
    lines = _session().split(b"\n")
    path = _write(tmp_path, b"\n".join([*lines[:2], b"", *lines[2:]]))  # a blank line 3
    tree = SessionTree.open(path)
    tree.get_entries()
    assert tree.report.invalid_utf8 == [4]
    tree.rewrite_entries([{**tree.get_entries()[0], "extra": 1}])  # drops the blank line
    assert tree.report.invalid_utf8 == [3]


def test_a_line_another_writer_appended_is_read_the_same_way(tmp_path: Path) -> None:
    path = _write(tmp_path, _session())
    tree = SessionTree.open(path)
    tree.append_message(user("ours"))
    foreign = jsonl({"type": "custom", "customType": "x", "data": "na@ve"})
    foreign = foreign.replace(b"@", BAD_BYTE)[:-2] + b',"id":"f0000001","parentId":null}\n'
    with path.open("ab") as handle:
        handle.write(foreign)
    tree.append_message(user("ours again"))  # takes in the foreign line first
    entry = tree.get_entry("f0000001")
    assert entry is not None and entry["data"] == "na\ufffdve"
    assert tree.report.invalid_utf8 == [7]
    assert _lines(path)[6] == foreign[:-1]


def test_a_v1_line_with_invalid_utf8_is_encoded_anew_by_its_migration(tmp_path: Path) -> None:
    # The migration changes every v1 line (ids), so the rewrite encodes each one anew.
    data = jsonl(
        header(version=None),
        {"type": "message", "timestamp": "t1", "message": user("caf@")},
        {"type": "message", "timestamp": "t2", "message": assistant("ok")},
    ).replace(b"@", BAD_BYTE)
    path = _write(tmp_path, data)
    tree = SessionTree.open(path)
    ids = [r.id for r in tree.records()]
    assert ids == [r.id for r in SessionTree.open(path).records()]
    assert tree.report.invalid_utf8 == [2]
    tree.flush()
    assert tree.report.invalid_utf8 == []
    assert "caf\ufffd".encode() in _lines(path)[1]
    reopened = SessionTree.open(path)
    assert [r.id for r in reopened.records()] == ids
    assert reopened.get_entries()[0]["message"]["content"][0]["text"] == "caf\ufffd"


# --- check and repair -----------------------------------------------------------------------


def test_check_reports_a_warning_not_damage(tmp_path: Path) -> None:
    report = check_session(SessionTree.open(_write(tmp_path, _session())))
    assert not report.damaged
    assert [(f.severity, f.line, f.entry_id) for f in report.warnings] == [("warning", 3, "e002")]
    assert "invalid UTF-8 read as U+FFFD" in report.warnings[0].message


def test_repair_leaves_a_file_whose_only_oddity_is_invalid_utf8(tmp_path: Path) -> None:
    data = _session()
    path = _write(tmp_path, data)
    report = repair_session(path)
    assert not report.changed and not report.rejected and not report.damaged
    assert path.read_bytes() == data
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.jsonl"]
    assert [(f.severity, f.line) for f in report.findings] == [("warning", 3)]


def test_repair_keeps_the_line_so_no_entry_loses_its_parent(tmp_path: Path) -> None:
    lines = _session().split(b"\n")
    data = b"\n".join([*lines[:3], b'{"type":"message",', *lines[3:]])  # a torn line 4
    path = _write(tmp_path, data)
    report = repair_session(path)
    assert report.changed and [r.line for r in report.rejected] == [4]
    assert path.read_bytes() == b"\n".join(lines)  # the line with the bad byte is kept
    assert not report.damaged  # e003 still has its parent e002
    tree = SessionTree.open(path)
    assert tree.report.clean and not tree.report.orphans
    assert [e["id"] for e in tree.get_branch()] == ["e001", "e002", "e003", "e004"]


# --- valid files pay nothing --------------------------------------------------------------------


def test_valid_files_never_take_the_replacement_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[bytes] = []

    def recorder(line: bytes | memoryview) -> str | None:
        calls.append(bytes(line))
        return None

    monkeypatch.setattr(codec, "replaced_text", recorder)
    monkeypatch.setattr(lines_module, "replaced_text", recorder)
    data = _session().replace(BAD_BYTE, "é ✓ 😀".encode())
    tree = SessionTree.open(_write(tmp_path, data))
    tree.get_entries()
    tree.build_session_context()
    assert check_session(tree).findings == []
    assert tree.report.invalid_utf8 == []
    assert calls == []
