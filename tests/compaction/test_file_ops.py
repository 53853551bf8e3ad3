"""File-operation tracking and file tags (pi-behaviour.md §8, DESIGN decision 5)."""

from __future__ import annotations

from typing import Any

import pytest

from contextree.compaction.file_ops import (
    FileOps,
    compute_file_lists,
    extract_file_ops_from_message,
    seed_from_details,
    upsert_file_tags,
)


def _call(name: object, arguments: object) -> dict[str, Any]:
    return {"type": "toolCall", "id": "c", "name": name, "arguments": arguments}


def _assistant(*blocks: object) -> dict[str, Any]:
    return {"role": "assistant", "content": list(blocks)}


# --- extract_file_ops_from_message ----------------------------------------------------------


def test_read_write_edit_calls_are_tracked() -> None:
    ops = FileOps()
    message = _assistant(
        _call("read", {"path": "r.py"}),
        _call("write", {"path": "w.py", "content": "x"}),
        _call("edit", {"path": "e.py", "oldText": "a", "newText": "b"}),
        {"type": "text", "text": "done"},
    )
    extract_file_ops_from_message(message, ops)
    assert ops == FileOps(read={"r.py"}, written={"w.py"}, edited={"e.py"})


def test_other_tool_names_are_ignored() -> None:
    ops = FileOps()
    message = _assistant(
        _call("bash", {"path": "b.py"}),
        _call("Read", {"path": "c.py"}),
        _call("grep", {"path": "d.py"}),
        _call(None, {"path": "e.py"}),
    )
    extract_file_ops_from_message(message, ops)
    assert ops == FileOps()


@pytest.mark.parametrize("arguments", [{}, {"path": ""}, {"path": 3}, {"file": "x"}, None, "p"])
def test_calls_without_a_non_empty_string_path_are_ignored(arguments: object) -> None:
    ops = FileOps()
    extract_file_ops_from_message(_assistant(_call("read", arguments)), ops)
    assert ops == FileOps()


@pytest.mark.parametrize("role", ["user", "toolResult", "custom", "developer"])
def test_only_assistant_messages_are_scanned(role: str) -> None:
    ops = FileOps()
    extract_file_ops_from_message({"role": role, "content": [_call("read", {"path": "x"})]}, ops)
    assert ops == FileOps()


def test_malformed_assistant_content_is_ignored() -> None:
    ops = FileOps()
    extract_file_ops_from_message({"role": "assistant", "content": "text"}, ops)
    extract_file_ops_from_message(_assistant(None, 3, "x", {"type": "toolCall"}), ops)
    assert ops == FileOps()


def test_extraction_accumulates() -> None:
    ops = FileOps(read={"old.py"})
    extract_file_ops_from_message(_assistant(_call("read", {"path": "new.py"})), ops)
    assert ops.read == {"old.py", "new.py"}


# --- seed_from_details ----------------------------------------------------------------------


def test_details_seed_read_and_edited() -> None:
    ops = FileOps()
    seed_from_details(ops, {"readFiles": ["a", "b"], "modifiedFiles": ["c"]})
    assert ops == FileOps(read={"a", "b"}, edited={"c"})


@pytest.mark.parametrize(
    "details",
    [None, "x", [], {}, {"readFiles": "a", "modifiedFiles": {"c": 1}}, {"readFiles": None}],
)
def test_malformed_details_are_ignored(details: object) -> None:
    ops = FileOps()
    seed_from_details(ops, details)
    assert ops == FileOps()


def test_malformed_paths_in_details_are_skipped() -> None:
    ops = FileOps()
    seed_from_details(ops, {"readFiles": ["a", 1, None, ""], "modifiedFiles": [["x"], "m"]})
    assert ops == FileOps(read={"a"}, edited={"m"})


# --- compute_file_lists ---------------------------------------------------------------------


def test_modified_is_written_and_edited_read_is_the_rest() -> None:
    ops = FileOps(read={"r", "w", "e"}, written={"w", "both"}, edited={"e", "both"})
    assert compute_file_lists(ops) == (["r"], ["both", "e", "w"])


def test_lists_are_sorted_in_javascript_order() -> None:
    # UTF-16 code units: "Z" < "a" (ASCII), and an emoji (0xD83D...) sorts before U+FF61,
    # although its code point is larger.
    ops = FileOps(read={"b", "a", "Z", "\uff61", "😀"}, edited={"y", "X"})
    read_files, modified_files = compute_file_lists(ops)
    assert read_files == ["Z", "a", "b", "😀", "\uff61"]
    assert modified_files == ["X", "y"]


def test_empty_ops_give_empty_lists() -> None:
    assert compute_file_lists(FileOps()) == ([], [])


# --- upsert_file_tags -----------------------------------------------------------------------


def test_tags_are_appended_one_file_per_line_with_a_blank_line_between_blocks() -> None:
    assert upsert_file_tags("Summary.", ["r1", "r2"], ["m1"]) == (
        "Summary.\n\n<read-files>\nr1\nr2\n</read-files>\n\n<modified-files>\nm1\n</modified-files>"
    )


def test_only_non_empty_blocks_are_written() -> None:
    assert upsert_file_tags("S", ["r1"], []) == "S\n\n<read-files>\nr1\n</read-files>"
    assert upsert_file_tags("S", [], ["m1"]) == "S\n\n<modified-files>\nm1\n</modified-files>"


def test_no_files_leave_the_summary_alone_apart_from_trailing_space() -> None:
    assert upsert_file_tags("S\n\n", [], []) == "S"


def test_empty_summary_gives_only_the_tags() -> None:
    assert upsert_file_tags("", ["r"], []) == "<read-files>\nr\n</read-files>"
    assert upsert_file_tags("  \n", [], []) == ""


def test_existing_tags_are_replaced_not_duplicated() -> None:
    summary = (
        "## Goal\nShip it.\n\n<read-files>\nold-r\n</read-files>\n\n"
        "<modified-files>\nold-m\n</modified-files>\n"
    )
    assert upsert_file_tags(summary, ["new-r"], ["new-m"]) == (
        "## Goal\nShip it.\n\n<read-files>\nnew-r\n</read-files>\n\n"
        "<modified-files>\nnew-m\n</modified-files>"
    )


def test_every_old_block_is_removed_even_in_the_middle() -> None:
    summary = (
        "A<read-files>\nx\n</read-files>  \nB\n<modified-files>y</modified-files>\n"
        "C<read-files>z</read-files>"
    )
    assert upsert_file_tags(summary, [], []) == "AB\nC"


def test_upsert_is_idempotent() -> None:
    once = upsert_file_tags("S", ["r"], ["m"])
    assert upsert_file_tags(once, ["r"], ["m"]) == once


def test_more_than_twenty_files_are_cut_with_a_count() -> None:
    files = [f"f{i:02}" for i in range(23)]
    text = upsert_file_tags("", files, [])
    assert text == "<read-files>\n" + "\n".join(files[:20]) + (
        "\n... (3 more files omitted)\n</read-files>"
    )


def test_exactly_twenty_files_are_all_listed() -> None:
    files = [f"f{i:02}" for i in range(20)]
    assert "omitted" not in upsert_file_tags("", [], files)


def test_max_listed_is_configurable() -> None:
    assert upsert_file_tags("", ["a", "b", "c"], [], max_listed=1) == (
        "<read-files>\na\n... (2 more files omitted)\n</read-files>"
    )
    with pytest.raises(ValueError):
        upsert_file_tags("", ["a"], [], max_listed=-1)


OMP_FILES_TAG = """<files>
README.md (Read)
# src/
app.py (RW)
## lib/
util.py (Write)
# /abs/
x.ts (Read)
[…3 files elided…]
</files>"""


def test_oh_my_pi_18s_files_tag_is_read_as_a_folded_tree() -> None:
    from contextree.compaction.file_ops import parse_files_tag

    body = OMP_FILES_TAG.removeprefix("<files>\n").removesuffix("\n</files>")
    read, modified = parse_files_tag(body)
    assert read == ["README.md", "src/app.py", "/abs/x.ts"]
    assert modified == ["src/app.py", "src/lib/util.py"]


def test_oh_my_pi_18s_files_tag_is_replaced_not_duplicated() -> None:
    summary = upsert_file_tags(f"## Goal\nShip it.\n\n{OMP_FILES_TAG}", ["a.py"], [])
    assert "<files>" not in summary
    assert summary == "## Goal\nShip it.\n\n<read-files>\na.py\n</read-files>"


def test_an_earlier_oh_my_pi_summary_keeps_its_files_in_the_offline_update() -> None:
    from contextree.compaction.offline import OfflineSummarizer

    update = OfflineSummarizer().summarize_messages(
        [{"role": "user", "content": [{"type": "text", "text": "go on"}]}],
        kind="update",
        previous_summary=f"## Goal\nShip it.\n\n{OMP_FILES_TAG}",
        budget_tokens=2000,
    )
    assert "Modified `src/lib/util.py`" in update and "Modified `src/app.py`" in update
    assert "`/abs/x.ts`" in update and "<files>" not in update
