"""The lazy record index: decoding from the end answers exactly as a full parse does."""

from __future__ import annotations

import json
import os
import signal
import threading
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from contextree.session import SessionTree
from contextree.store import MemoryStore, Record, parse_session, record_index
from contextree.store.index import parse_head
from contextree.store.record_index import RecordIndex
from core_helpers import Chain, assistant, header, jsonl, user

# One generated line: a good entry (parent: an earlier id, a missing one or none; the id may
# repeat an earlier one), a blank line, a line that cannot be used, an entry broken over two
# lines, or two entries on one line (msgspec's decode_lines reads the last two as if fine).
_entry = st.tuples(st.integers(0, 30), st.integers(-2, 30), st.integers(1, 300))
_lines = st.lists(
    st.one_of(
        st.tuples(st.just("entry"), _entry),
        st.tuples(st.just("blank"), st.sampled_from(["", "   ", "\t"])),
        st.tuples(st.just("bad"), st.sampled_from(['{"type":', "[1,2]", '{"id":"x"}', "nope"])),
        st.tuples(st.just("split"), _entry),
        st.tuples(st.just("double"), _entry, _entry),
    ),
    max_size=40,
)


def _entry_json(number: int, parent: int, size: int) -> str:
    parent_id = None if parent == -1 else f"{parent:08x}" if parent >= 0 else "gone"
    entry = {"type": "message", "id": f"{number:08x}", "parentId": parent_id}
    entry["message"] = {"role": "user", "content": "x" * size}
    return json.dumps(entry)


def _file(lines: list[tuple[Any, ...]], torn: bool) -> bytes:
    out = [json.dumps({"type": "session", "version": 3, "id": "s", "timestamp": "t", "cwd": "/"})]
    for line in lines:
        if line[0] == "entry":
            out.append(_entry_json(*line[1]))
        elif line[0] == "split":
            text = _entry_json(*line[1])
            cut = text.index('"message"')
            out.extend([text[:cut], text[cut:]])
        elif line[0] == "double":
            out.append(_entry_json(*line[1]) + " " + _entry_json(*line[2]))
        else:
            out.append(line[1])
    data = "\n".join(out) + "\n"
    return (data[:-1] + "{" if torn and lines else data).encode()


def _line_by_line(data: bytes) -> list[tuple[int, str]]:
    """(line, id) of every entry as a reader of one line at a time (pi) sees them."""
    found = []
    for number, line in enumerate(data.split(b"\n")[1:], start=2):
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict) and isinstance(value.get("type"), str) and value.get("id"):
            found.append((number, value["id"]))
    return found


def _lazy(data: bytes) -> RecordIndex:
    return RecordIndex.lazy(data, parse_head(data, "s.jsonl"))


def _shape(index: RecordIndex) -> list[tuple[Any, ...]]:
    return [
        (item.line, item.id) if isinstance(item, Record) else (item.line, item.reason)
        for item in index.items
    ]


@given(_lines, st.booleans(), st.integers(1, 400), st.lists(st.integers(-2, 30), max_size=8))
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_a_lazy_index_answers_as_the_full_parse_does(
    lines: list[tuple[Any, ...]], torn: bool, chunk: int, lookups: list[int]
) -> None:
    data = _file(lines, torn)
    full = parse_session(data, "s.jsonl")
    eager = RecordIndex.loaded(full.items, full.report, full.next_line)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(record_index, "FIRST_CHUNK_BYTES", chunk)
        lazy = _lazy(data)
    last = lazy.last_record()
    expected_last = next((i for i in reversed(full.items) if isinstance(i, Record)), None)
    assert (last.id if last else None) == (expected_last.id if expected_last else None)
    found = {n: lazy.get(f"{n:08x}") for n in lookups}
    lazy.complete_all()
    assert _shape(lazy) == _shape(eager)
    assert [(r.line, r.id) for r in lazy.items if isinstance(r, Record)] == _line_by_line(data)
    for n, record in found.items():
        assert record is lazy.by_id.get(f"{n:08x}")
        assert (record.line if record else None) == (
            eager.by_id[f"{n:08x}"].line if f"{n:08x}" in eager.by_id else None
        )
    assert lazy.report.messages() == eager.report.messages()
    assert lazy.report.partial_last_line == (torn and bool(lines))
    assert lazy.next_line == eager.next_line
    # Every id (repeated ones too, within a step or across steps) names its last line's record.
    assert {key: r.line for key, r in lazy.by_id.items()} == {
        key: r.line for key, r in eager.by_id.items()
    }
    in_items = {id(item) for item in lazy.items}
    assert all(id(r) in in_items for r in lazy.by_id.values())


def _long_session(turns: int) -> tuple[bytes, Chain]:
    chain = Chain()
    chain.add("thinking_level_change", thinkingLevel="low")
    for n in range(turns):
        chain.msg(user(f"question {n} " + "q" * 400))
        chain.msg(assistant(f"answer {n} " + "a" * 400))
        if n == turns - 3:
            chain.add("thinking_level_change", thinkingLevel="high")
    kept = chain.entries[-4]["id"]
    chain.add("compaction", summary="all of it", firstKeptEntryId=kept, tokensBefore=99)
    chain.msg(user("after the compaction"))
    return jsonl(header(), *chain.entries), chain


@pytest.fixture
def chunk_bytes(monkeypatch: pytest.MonkeyPatch) -> Callable[[int], None]:
    """Set the first lazy step's size, so that small test files take many steps."""
    return lambda size: monkeypatch.setattr(record_index, "FIRST_CHUNK_BYTES", size)


def test_opening_and_building_the_context_reads_only_the_end_of_a_large_session(
    chunk_bytes: Callable[[int], None],
) -> None:
    data, chain = _long_session(400)
    chunk_bytes(4096)
    tree = SessionTree.in_memory(data)
    assert tree.leaf_id == chain.leaf
    context = tree.build_session_context()
    assert not tree._index.complete
    assert len(tree._index.items) < 100  # of 803 entries
    full = SessionTree.in_memory(data)
    full._index.complete_all()
    assert context == full.build_session_context()
    assert context.thinking_level == "high"
    assert [m["role"] for m in context.messages] == [
        "compactionSummary",
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
    ]


def test_the_report_and_writes_read_the_whole_file_first(
    chunk_bytes: Callable[[int], None], tmp_path: Any
) -> None:
    data, chain = _long_session(50)
    path = tmp_path / "s.jsonl"
    path.write_bytes(data.replace(b'"answer 3 ', b'"answer 3 \n{broken\n', 1))
    chunk_bytes(2048)
    tree = SessionTree.open(path)
    assert not tree._index.complete
    assert [m for m in tree.report.messages() if "skipped" in m]
    assert tree._index.complete
    again = SessionTree.open(path)
    again.append_message(user("new"))
    assert again._index.complete
    assert again.get_entry(chain.ids()[0]) is not None
    assert SessionTree.open(path).get_branch()[-1]["message"]["content"][0]["text"] == "new"


def test_a_missing_id_reads_everything_once_and_is_then_known_missing(
    chunk_bytes: Callable[[int], None],
) -> None:
    data, chain = _long_session(30)
    chunk_bytes(512)
    tree = SessionTree.in_memory(data)
    assert tree.get_entry(chain.ids()[1]) == chain.entries[1]
    assert not tree.has_entry("ffffffff")
    assert tree._index.complete
    assert len(tree) == len(chain.entries)


def _entry_line(entry_id: str, parent: str | None) -> str:
    message = {"role": "user", "content": f"text of {entry_id}"}
    return json.dumps({"type": "message", "id": entry_id, "parentId": parent, "message": message})


_HEADER = json.dumps({"type": "session", "version": 3, "id": "s", "timestamp": "t", "cwd": "/"})


@pytest.mark.parametrize("step", [1, 1 << 20])
def test_a_repeated_id_names_its_last_line_within_a_step_and_across_steps(
    chunk_bytes: Callable[[int], None], step: int
) -> None:
    lines = [
        _HEADER,
        _entry_line("00000001", None),
        _entry_line("00000002", "00000001"),
        _entry_line("00000001", "00000002"),  # repeats the first id
        _entry_line("00000003", "00000001"),
        _entry_line("00000002", "00000003"),  # repeats the second id
    ]
    data = ("\n".join(lines) + "\n").encode()
    chunk_bytes(step)  # one line a step, or the whole file in one
    tree = SessionTree.in_memory(data)
    index = tree._index
    assert [entry["id"] for entry in tree.get_branch()] == ["00000001", "00000003", "00000002"]
    index.complete_all()
    assert {key: record.line for key, record in index.by_id.items()} == {
        "00000001": 4,
        "00000002": 6,
        "00000003": 5,
    }
    in_items = {id(item) for item in index.items}
    assert all(id(record) in in_items for record in index.by_id.values())
    assert tree.report.duplicate_ids == {"00000001": [2, 4], "00000002": [3, 6]}


def test_a_walk_that_steps_back_reaches_the_root_or_stops_at_a_cycle(
    chunk_bytes: Callable[[int], None],
) -> None:
    lines = [_HEADER, _entry_line("0000000a", "0000000b")]  # a and b: a cycle, apart
    lines += [_entry_line(f"{n:08x}", f"{n - 1:08x}" if n > 1 else None) for n in range(1, 7)]
    lines.append(_entry_line("0000000b", "0000000a"))
    data = ("\n".join(lines) + "\n").encode()
    chunk_bytes(1)  # one line a step: the walk steps back at every parent
    chain = [f"{n:08x}" for n in range(1, 7)]
    assert [e["id"] for e in SessionTree.in_memory(data).get_branch("00000006")] == chain
    cycle = SessionTree.in_memory(data)
    assert [e["id"] for e in cycle.get_branch("0000000b")] == ["0000000a", "0000000b"]
    assert [e["id"] for e in cycle.get_branch("00000006")] == chain


def test_parent_ids_and_types_share_the_strings_of_the_ids_and_types_they_name() -> None:
    # One string per id and per type in a large index: a child's parent id is its parent's
    # own id string (the entry before, or further back: a branch), a type one string.
    lines = [_HEADER, _entry_line("00000001", None)]
    lines += [_entry_line(f"{n:08x}", f"{n - 1:08x}") for n in range(2, 6)]
    lines.append(_entry_line("00000006", "00000002"))  # a branch from further back
    lines.append(json.dumps({"type": "label", "id": "00000007", "parentId": "00000006"}))
    lines.append(_entry_line("00000008", "00000007"))
    data = ("\n".join(lines) + "\n").encode()
    tree = SessionTree.in_memory(data)
    index = tree._index.complete_all()
    by_id = index.by_id
    for record in by_id.values():
        if record.parent_id is not None:
            assert record.parent_id is by_id[record.parent_id].id
    messages = [r for r in by_id.values() if r.type == "message"]
    assert len(messages) == 7 and all(r.type is messages[0].type for r in messages)


def test_two_objects_on_one_line_and_a_blank_line_shift_nothing() -> None:
    # msgspec reads two objects on one line as two records; with one blank line elsewhere the
    # counts of records and lines agree, which must not pair records with the wrong lines.
    lines = [
        _HEADER,
        _entry_line("aaaaaaaa", None) + " " + _entry_line("bbbbbbbb", "aaaaaaaa"),
        _entry_line("cccccccc", None),
        _entry_line("dddddddd", "cccccccc"),
        "",
        _entry_line("eeeeeeee", "dddddddd"),
    ]
    data = ("\n".join(lines) + "\n").encode()
    tree = SessionTree.in_memory(data)
    entry = tree.get_entry("dddddddd")
    assert entry is not None and entry["message"]["content"] == "text of dddddddd"
    assert [m["content"] for m in tree.build_session_context().messages] == [
        "text of cccccccc",
        "text of dddddddd",
        "text of eeeeeeee",
    ]
    assert [bad.line for bad in tree.report.bad_lines] == [2]
    edited = json.loads(_entry_line("cccccccc", None).replace("text of", "edited"))
    tree.rewrite_entries([edited])
    assert isinstance(tree.store, MemoryStore)
    assert _entry_line("dddddddd", "cccccccc").encode() in tree.store.getvalue()


def test_a_torn_last_line_followed_by_white_space_is_labelled_as_eagerly(
    chunk_bytes: Callable[[int], None],
) -> None:
    data = _HEADER + "\n" + _entry_line("aaaaaaaa", None) + '\n{"type":"message","id":"bb\n   '
    eager = SessionTree.in_memory(data.encode())
    eager._index.complete_all()
    chunk_bytes(1)
    lazy = SessionTree.in_memory(data.encode())
    assert lazy.report.messages() == eager.report.messages()
    assert "partial last line" in lazy.report.messages()[0]


def test_an_interrupted_step_back_leaves_the_index_as_it_was(
    chunk_bytes: Callable[[int], None], monkeypatch: pytest.MonkeyPatch
) -> None:
    lines = [_HEADER] + [_entry_line(f"{n:08x}", f"{n - 1:08x}" if n else None) for n in range(6)]
    data = ("\n".join(lines) + "\n").encode()
    chunk_bytes(1)
    tree = SessionTree.in_memory(data)
    real = record_index.parse_lines
    calls = {"n": 0}

    def interrupted_once(*args: Any, **kwargs: Any) -> Any:
        calls["n"] += 1
        if calls["n"] == 1:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(record_index, "parse_lines", interrupted_once)
    with pytest.raises(KeyboardInterrupt):
        tree.get_entry("00000000")
    assert tree.get_entry("00000000") is not None
    assert [(r.id, r.line) for r in tree.records()] == [(f"{n:08x}", n + 2) for n in range(6)]
    assert tree._index.next_line == 8


def test_reading_newest_first_decodes_only_as_far_back_as_read(
    chunk_bytes: Callable[[int], None],
) -> None:
    data, chain = _long_session(400)
    chunk_bytes(4096)
    tree = SessionTree.in_memory(data)
    newest = [record.id for _, record in zip(range(3), tree.records_newest_first(), strict=False)]
    assert newest == chain.ids()[-1:-4:-1]
    assert not tree._index.complete and len(tree._index.items) < 100
    # Read to the end, it steps back chunk by chunk and gives every record once.
    everything = [record.id for record in tree.records_newest_first()]
    assert everything == chain.ids()[::-1]
    assert tree._index.complete


def test_walking_the_whole_path_does_not_gather_the_report_until_it_is_asked_for(
    chunk_bytes: Callable[[int], None], monkeypatch: pytest.MonkeyPatch
) -> None:
    chain = Chain()
    first = chain.msg(user("first"))["id"]
    for n in range(60):
        chain.msg(user(f"question {n} " + "q" * 200))
    chain.add("label", parent="missing", targetId=first, label="x")  # an orphan
    chain.msg(user("again"), parent=first)
    data = jsonl(header(), *chain.entries)
    chunk_bytes(512)
    gathered = {"n": 0}
    real = RecordIndex.recount

    def counted(self: RecordIndex, leading: Any) -> None:
        gathered["n"] += 1
        real(self, leading)

    monkeypatch.setattr(RecordIndex, "recount", counted)
    tree = SessionTree.in_memory(data)
    assert [entry["id"] for entry in tree.get_branch()] == [first, chain.leaf]
    tree.get_entry("0" * 8)  # a miss: every line is read
    assert tree._index.complete and gathered["n"] == 0
    messages = tree.report.messages()  # asked for: gathered once, whole
    assert gathered["n"] == 1
    assert any("missing parent 'missing'" in message for message in messages)
    tree.report.messages()
    assert gathered["n"] == 1


@pytest.mark.parametrize("sender", ["this-thread", "another-thread"])
def test_ctrl_c_while_a_step_back_is_merged_waits_until_the_step_is_done(
    chunk_bytes: Callable[[int], None], monkeypatch: pytest.MonkeyPatch, sender: str
) -> None:
    lines = [_HEADER] + [_entry_line(f"{n:08x}", f"{n - 1:08x}" if n else None) for n in range(6)]
    lines.append(_entry_line("00000003", "00000005"))  # a repeated id: the last line wins
    data = ("\n".join(lines) + "\n").encode()
    chunk_bytes(1)
    tree = SessionTree.in_memory(data)
    real = RecordIndex._merge
    merged = {"n": 0}
    # Another thread that does not block SIGINT (a test suite's, a server's): the kernel hands
    # it the signal when this one blocks it, and Python runs the handler here at its next
    # check, while the step is still going - a signal mask on this thread alone let that
    # through (seen once in a full test run). Started now: a thread inherits the signal mask
    # of the thread that starts it.
    go = threading.Event()
    killer = threading.Thread(
        target=lambda: go.wait(30) and os.kill(os.getpid(), signal.SIGINT), daemon=True
    )
    if sender == "another-thread":
        killer.start()

    def interrupted(self: RecordIndex, *args: Any) -> None:
        merged["n"] += 1
        real(self, *args)
        if merged["n"] == 2:
            # A real Ctrl-C after the chunk is merged, before the step has noted where it
            # stopped: run again from there, the step would merge the chunk twice.
            if sender == "this-thread":
                os.kill(os.getpid(), signal.SIGINT)
                return
            go.set()
            killer.join()
            for _ in range(10_000):  # bytecode, where Python runs pending signal handlers
                pass

    monkeypatch.setattr(RecordIndex, "_merge", interrupted)
    with pytest.raises(KeyboardInterrupt):
        tree.get_entry("00000000")
    assert tree.get_entry("00000000") is not None
    assert [(r.id, r.line) for r in tree.records()] == [
        *[(f"{n:08x}", n + 2) for n in range(6)],
        ("00000003", 8),
    ]
    assert tree._index.next_line == 9
    assert tree.report.duplicate_ids == {"00000003": [5, 8]}


def test_an_interrupted_report_is_gathered_again_when_asked_for(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    lines = [_HEADER, _entry_line("00000001", None), _entry_line("00000001", None)]
    tree = SessionTree.in_memory(("\n".join(lines) + "\n").encode())
    tree._index.complete_all()
    real = RecordIndex._note_duplicates
    calls = {"n": 0}

    def interrupted_once(self: RecordIndex, records: Any) -> None:
        calls["n"] += 1
        if calls["n"] == 1:
            raise KeyboardInterrupt
        real(self, records)

    monkeypatch.setattr(RecordIndex, "_note_duplicates", interrupted_once)
    with pytest.raises(KeyboardInterrupt):
        tree.report.messages()
    assert tree.report.duplicate_ids == {"00000001": [2, 3]}
