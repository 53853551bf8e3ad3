"""``contextree tree --interactive``: the textual tree browser, driven headless by its pilot."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import typer
from rich.text import Text
from textual.pilot import Pilot
from textual.widgets import Input, Static
from typer.testing import CliRunner

from contextree.branching import LEAF_CUSTOM_TYPE
from contextree.cli import app as app_module
from contextree.cli import tree_app as tree_app_module
from contextree.cli.entry_detail import entry_detail, entry_line
from contextree.cli.tree_app import EntryTree, NodeData, PreviewPane, TreeApp, run_tree_app
from contextree.cli.tree_dialogs import LabelPrompt, SummaryChoice
from contextree.compaction.offline import OfflineSummarizer
from contextree.errors import ContextreeError, ModelHTTPError
from contextree.llm.base import ModelClient
from contextree.llm.scripted import ScriptedClient
from contextree.session.tree import SessionTree
from contextree.settings import BranchSummarySettings, Settings
from core_helpers import assistant, counter_clock, tool_call, tool_result, user

pytestmark = pytest.mark.anyio

SIZE = (120, 30)


@dataclass
class Session:
    path: Path
    ids: dict[str, str]

    def reopen(self) -> SessionTree:
        return SessionTree.open(self.path, create=False)

    def open(self) -> SessionTree:
        return SessionTree.open(self.path, create=False, now=counter_clock(100))


@pytest.fixture
def session(tmp_path: Path) -> Session:
    """u1 - a1, then branch 1: u3 - a3 (reads docs) - t3, and branch 2: u2 - a2 (the leaf)."""
    path = tmp_path / "session.jsonl"
    tree = SessionTree.open(path, now=counter_clock())
    ids: dict[str, str] = {}
    ids["u1"] = tree.append_message(user("Start the project"))
    ids["a1"] = tree.append_message(assistant("Started."))
    ids["u3"] = tree.append_message(user("Write the docs"))
    call = tool_call("c1", "read", {"path": "docs/b.md"})
    ids["a3"] = tree.append_message(assistant("Reading docs.", calls=[call]))
    ids["t3"] = tree.append_message(tool_result("c1", "# B docs", name="read"))
    tree.branch(ids["a1"])
    ids["u2"] = tree.append_message(user("Fix the parser"))
    ids["a2"] = tree.append_message(assistant("Fixed it."))
    return Session(path, ids)


def offline() -> ModelClient:
    return OfflineSummarizer()


def make_app(
    session: Session,
    *,
    enabled: bool = False,
    reserve_tokens: int = 16384,
    client_factory: Callable[[], ModelClient] = offline,
) -> TreeApp:
    settings = Settings(
        branch_summary=BranchSummarySettings(enabled=enabled, reserve_tokens=reserve_tokens)
    )
    return TreeApp(session.open(), settings=settings, client_factory=client_factory)


def cursor(app: TreeApp) -> NodeData:
    node = app.query_one(EntryTree).cursor_node
    assert node is not None and node.data is not None
    return node.data


def preview(app: TreeApp) -> str:
    content = app.query_one("#preview-text", Static).content
    return content.plain if isinstance(content, Text) else str(content)


def visible(app: TreeApp) -> list[NodeData]:
    widget = app.query_one(EntryTree)
    rows: list[NodeData] = []
    for line in range(widget.last_line + 1):
        node = widget.get_node_at_line(line)
        assert node is not None and node.data is not None
        rows.append(node.data)
    return rows


def all_nodes(app: TreeApp) -> list[NodeData]:
    return [n.data for n in tree_app_module._walk(app.query_one(EntryTree).root) if n.data]


def busy(app: TreeApp) -> tuple[bool, bool]:
    return app.busy, app.query_one(EntryTree).loading


async def press_on(pilot: Pilot[None], entry_id: str | None, *keys: str) -> None:
    """Put the cursor on ``entry_id`` (None: on a heading) and press ``keys``."""
    app = pilot.app
    assert isinstance(app, TreeApp)
    app.select_entry(entry_id)
    await pilot.press(*keys)


async def settle(pilot: Pilot[None]) -> None:
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


# --- showing the tree --------------------------------------------------------------------------


async def test_the_tree_shows_every_entry_with_the_leaf_path_open(session: Session) -> None:
    app = make_app(session)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        entry_ids = [d.entry_id for d in all_nodes(app) if d.entry_id]
        assert sorted(entry_ids) == sorted(session.ids.values())
        ids = session.ids
        assert cursor(app).entry_id == ids["a2"]
        assert str(app.query_one(EntryTree).root.label).endswith(app.session_tree.session_id)
        # Runs are flat; each branch is a heading under the fork; the abandoned one is folded.
        assert [d.entry_id or d.key for d in visible(app)] == [
            "session",
            ids["u1"],
            ids["a1"],
            f"branch:{ids['u3']}",
            f"branch:{ids['u2']}",
            ids["u2"],
            ids["a2"],
        ]
        leaf_line = app.query_one(EntryTree).cursor_node
        assert leaf_line is not None
        assert "◀ leaf" in str(leaf_line.label)
        assert "Fixed it." in preview(app)


async def test_separate_roots_are_headings_of_their_own(tmp_path: Path) -> None:
    # As in `contextree tree`: a second root is not drawn as if it followed the first one.
    path = tmp_path / "roots.jsonl"
    tree = SessionTree.open(path, now=counter_clock())
    u1 = tree.append_message(user("hello"))
    a1 = tree.append_message(assistant("world"))
    tree.reset_leaf()
    u2 = tree.append_message(user("second root"))
    a2 = tree.append_message(assistant("ok"))
    app = make_app(Session(path, {}))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert [d.entry_id or d.key for d in visible(app)] == [
            "session",
            f"root:{u1}",
            u1,
            a1,
            f"root:{u2}",
            u2,
            a2,
        ]
        labels = [str(n.label) for n in app.query_one(EntryTree).root.children]
        assert labels == ["◇ root 1 (2 entries)", "◆ root 2 (2 entries)"]
        assert cursor(app).entry_id == a2


async def test_arrows_and_jk_move_and_enter_or_space_fold(session: Session) -> None:
    ids = session.ids
    app = make_app(session)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("k")
        assert cursor(app).entry_id == ids["u2"]
        await pilot.press("up", "k")
        assert cursor(app).key == f"branch:{ids['u3']}"
        await pilot.press("space")
        assert [d.entry_id for d in visible(app)][4:7] == [ids["u3"], ids["a3"], ids["t3"]]
        await pilot.press("j", "down")
        assert cursor(app).entry_id == ids["a3"]
        await pilot.press("up", "up", "enter")
        assert cursor(app).key == f"branch:{ids['u3']}"
        assert ids["u3"] not in [d.entry_id for d in visible(app)]
        assert "branch 1 at" in preview(app)


async def test_the_preview_shows_the_selected_entrys_full_text(session: Session) -> None:
    ids = session.ids
    app = make_app(session)
    async with app.run_test(size=SIZE) as pilot:
        app.select_entry(ids["a3"])
        await pilot.pause()
        text = preview(app)
        assert text.startswith(f"{ids['a3']} assistant")
        assert "Reading docs." in text
        assert "→ read" in text and '"path": "docs/b.md"' in text
        await pilot.press("down")
        assert "# B docs" in preview(app)


async def test_p_moves_the_focus_between_tree_and_preview(session: Session) -> None:
    app = make_app(session)
    async with app.run_test(size=SIZE) as pilot:
        assert app.query_one(EntryTree).has_focus
        await pilot.press("p")
        assert app.query_one(PreviewPane).has_focus
        await pilot.press("p")
        assert app.query_one(EntryTree).has_focus


# --- labels ------------------------------------------------------------------------------------


async def test_l_sets_and_clears_a_label_on_disk(session: Session) -> None:
    ids = session.ids
    app = make_app(session)
    async with app.run_test(size=SIZE) as pilot:
        await press_on(pilot, ids["a1"], "l")
        assert isinstance(app.screen, LabelPrompt)
        await pilot.press(*"checkpoint", "enter")
        await pilot.pause()
        assert session.reopen().get_label(ids["a1"]) == "checkpoint"
        assert cursor(app).entry_id == ids["a1"]
        assert "#checkpoint" in preview(app)

        await pilot.press("l")
        app.screen.query_one(Input).value = ""
        await pilot.press("enter")
        await pilot.pause()
        assert session.reopen().get_label(ids["a1"]) is None
        assert app.notices[-1] == f"Cleared the label of {ids['a1']}."


async def test_escape_in_the_label_prompt_writes_nothing(session: Session) -> None:
    before = session.path.read_bytes()
    app = make_app(session)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("l", "x", "escape")
        await pilot.pause()
        assert not isinstance(app.screen, LabelPrompt)
    assert session.path.read_bytes() == before


# --- navigating --------------------------------------------------------------------------------


async def test_n_moves_the_leaf_and_keeps_the_move_on_disk(session: Session) -> None:
    ids = session.ids
    app = make_app(session)
    async with app.run_test(size=SIZE) as pilot:
        await press_on(pilot, ids["a3"], "n")
        assert not isinstance(app.screen, SummaryChoice)  # branchSummary.enabled is false
        await settle(pilot)
        assert app.notices[-1].startswith(f"Moved the leaf to {ids['a3']}.")
        assert cursor(app).entry_id == app.session_tree.leaf_id
    reopened = session.reopen()
    marker = reopened.get_leaf_entry()
    assert marker is not None and marker["customType"] == LEAF_CUSTOM_TYPE
    assert marker["parentId"] == ids["a3"]
    assert not [e for e in reopened.get_entries() if e["type"] == "branch_summary"]


async def test_moving_to_a_user_message_offers_its_text_for_editing(session: Session) -> None:
    ids = session.ids
    app = make_app(session)
    async with app.run_test(size=SIZE) as pilot:
        await press_on(pilot, ids["u3"], "n")
        await settle(pilot)
        assert f"Moved the leaf to {ids['a1']}." in app.notices[-1]
        assert "Message to edit and send again: Write the docs" in app.notices[-1]
    assert session.reopen().get_branch()[-2]["id"] == ids["a1"]


async def test_with_summaries_enabled_n_asks_and_summarize_writes_one(session: Session) -> None:
    ids = session.ids
    app = make_app(session, enabled=True)
    async with app.run_test(size=SIZE) as pilot:
        await press_on(pilot, ids["a3"], "n")
        assert isinstance(app.screen, SummaryChoice)
        await pilot.click("#summarize")
        await settle(pilot)
        leaf = app.session_tree.leaf_id
        assert cursor(app).entry_id == leaf
        assert app.notices[-1] == f"Summarized the branch left; new leaf {leaf}."
    reopened = session.reopen()
    summaries = [e for e in reopened.get_entries() if e["type"] == "branch_summary"]
    assert len(summaries) == 1
    assert summaries[0]["parentId"] == ids["a3"]
    assert reopened.leaf_id == summaries[0]["id"]


async def test_cancel_in_the_summary_prompt_writes_nothing(session: Session) -> None:
    before = session.path.read_bytes()
    app = make_app(session, enabled=True)
    async with app.run_test(size=SIZE) as pilot:
        await press_on(pilot, session.ids["a3"], "n")
        await pilot.click("#cancel")
        await settle(pilot)
        assert app.session_tree.leaf_id == session.ids["a2"]
        assert app.notices[-1] == "Cancelled; nothing was written."
    assert session.path.read_bytes() == before


async def test_just_move_in_the_summary_prompt_moves_without_a_summary(session: Session) -> None:
    app = make_app(session, enabled=True)
    async with app.run_test(size=SIZE) as pilot:
        await press_on(pilot, session.ids["a3"], "n", "m")
        await settle(pilot)
    reopened = session.reopen()
    assert reopened.get_branch()[-2]["id"] == session.ids["a3"]
    assert not [e for e in reopened.get_entries() if e["type"] == "branch_summary"]


async def test_s_summarizes_even_when_summaries_are_disabled(session: Session) -> None:
    app = make_app(session, reserve_tokens=2000)
    async with app.run_test(size=SIZE) as pilot:
        await press_on(pilot, session.ids["a3"], "s")
        await settle(pilot)
    summaries = [e for e in session.reopen().get_entries() if e["type"] == "branch_summary"]
    assert [e["parentId"] for e in summaries] == [session.ids["a3"]]


async def test_the_settings_reach_navigate_tree(
    session: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    from contextree.branching import navigate

    seen: dict[str, Any] = {}
    real = navigate.navigate_tree

    async def spy(*args: Any, **kwargs: Any) -> Any:
        seen.update(kwargs)
        return await real(*args, **kwargs)

    monkeypatch.setattr(navigate, "navigate_tree", spy)
    app = make_app(session, reserve_tokens=1234)
    async with app.run_test(size=SIZE) as pilot:
        await press_on(pilot, session.ids["a3"], "s")
        await settle(pilot)
    assert seen["options"].branch_reserve_tokens == 1234
    assert seen["summarize"] is True and seen["client"].name == "offline"


async def test_a_running_move_shows_loading_and_blocks_other_moves(session: Session) -> None:
    gate = asyncio.Event()
    client = ScriptedClient(gate=gate, default="## Goal\nDocs")
    app = make_app(session, client_factory=lambda: client)
    async with app.run_test(size=SIZE) as pilot:
        await press_on(pilot, session.ids["a3"], "s")
        await pilot.pause()
        assert busy(app) == (True, True)
        await pilot.press("n", "l")  # disabled while the move runs
        assert not isinstance(app.screen, LabelPrompt)
        gate.set()
        await settle(pilot)
        assert busy(app) == (False, False)
        assert len(client.requests) == 1


async def test_a_failed_summary_is_a_notification_and_writes_nothing(session: Session) -> None:
    before = session.path.read_bytes()
    client = ScriptedClient()
    client.enqueue_error(ModelHTTPError("scripted", "401 bad key", status=401))
    app = make_app(session, client_factory=lambda: client)
    async with app.run_test(size=SIZE) as pilot:
        await press_on(pilot, session.ids["a3"], "s")
        await settle(pilot)
        assert app.notices[-1].startswith("Move failed; nothing was written:")
        assert app.is_running and cursor(app).entry_id == session.ids["a3"]
    assert session.path.read_bytes() == before


async def test_headings_and_the_leaf_are_not_navigation_targets(session: Session) -> None:
    before = session.path.read_bytes()
    app = make_app(session)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("n")
        assert app.notices[-1] == f"{session.ids['a2']} is already the leaf."
        await press_on(pilot, None, "n", "l")
        assert app.notices[-1] == "Put the cursor on an entry first (not a heading)."
    assert session.path.read_bytes() == before


async def test_q_quits(session: Session) -> None:
    app = make_app(session)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("q")
        await pilot.pause()
    assert app.return_code == 0


# --- wiring ------------------------------------------------------------------------------------


def _capture_runs(monkeypatch: pytest.MonkeyPatch) -> list[TreeApp]:
    runs: list[TreeApp] = []
    monkeypatch.setattr(TreeApp, "run", lambda self, *a, **k: runs.append(self))
    monkeypatch.setattr(tree_app_module, "_is_terminal", lambda: True)
    return runs


def test_run_tree_app_builds_the_app_and_runs_it(
    session: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    runs = _capture_runs(monkeypatch)
    tree = session.open()
    settings = Settings(branch_summary=BranchSummarySettings(enabled=True))
    run_tree_app(tree, settings=settings, client_factory=offline)
    [app] = runs
    assert app.session_tree is tree and app.app_settings is settings
    assert app.client_factory is offline


def test_run_tree_app_refuses_without_a_terminal(session: Session) -> None:
    with pytest.raises(ContextreeError, match="needs a terminal"):
        run_tree_app(session.open(), settings=Settings(), client_factory=offline)


def _tree_cli() -> typer.Typer:
    """``contextree`` with only its ``tree`` command, so other commands cannot get in the way."""
    cli = typer.Typer()
    cli.callback()(lambda: None)
    cli.command()(app_module.tree)
    return cli


def test_the_tree_command_passes_the_branch_summary_settings(
    session: Session, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    runs = _capture_runs(monkeypatch)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CONTEXTREE_BRANCH_SUMMARY_ENABLED", "true")
    monkeypatch.setenv("CONTEXTREE_BRANCH_SUMMARY_RESERVE_TOKENS", "4096")
    result = CliRunner().invoke(_tree_cli(), ["tree", str(session.path), "--interactive"])
    assert result.exit_code == 0, result.output
    [app] = runs
    assert app.app_settings.branch_summary == BranchSummarySettings(
        enabled=True, reserve_tokens=4096
    )
    assert app.client_factory().name == "offline"
    assert app.session_tree.path == session.path


def test_the_tree_command_reports_a_missing_terminal(session: Session) -> None:
    result = CliRunner().invoke(_tree_cli(), ["tree", str(session.path), "-i"])
    assert result.exit_code == 1
    assert "needs a terminal" in result.output


# --- entry text --------------------------------------------------------------------------------


def test_entry_lines_mark_the_leaf_and_dim_other_branches() -> None:
    entry = {"type": "message", "id": "abcd1234", "parentId": None, "message": user("hello")}
    leaf = entry_line(entry, label="start", is_leaf=True, on_path=True)
    assert leaf.plain == "abcd1234 user hello  #start  ◀ leaf"
    other = entry_line(entry, label=None, is_leaf=False, on_path=False)
    assert other.plain == "abcd1234 user hello"
    assert any(span.style.dim for span in other.spans if not isinstance(span.style, str))


def test_entry_details_show_summaries_and_json_of_other_entries() -> None:
    compaction = {
        "type": "compaction",
        "id": "c0000001",
        "parentId": "p",
        "timestamp": "t",
        "summary": "## Goal\nShip it",
        "firstKeptEntryId": "k",
        "tokensBefore": 900,
        "details": {"readFiles": ["a.py"]},
    }
    text = entry_detail(compaction, label=None, is_leaf=False, on_path=True).plain
    assert "first kept entry k · 900 tokens before" in text
    assert "## Goal\nShip it" in text and '"a.py"' in text
    custom = {"type": "custom", "id": "c0000002", "parentId": None, "customType": "x", "data": 1}
    text = entry_detail(custom, label=None, is_leaf=True, on_path=True).plain
    assert '"customType": "x"' in text and "◀ leaf" in text


# --- long runs fold ----------------------------------------------------------------------------


@pytest.fixture
def long_session(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Session:
    """One run of 20 messages m0..m19 (the leaf); runs over 10 show 2 entries at each end."""
    monkeypatch.setattr(tree_app_module, "FOLD_RUNS_OVER", 10)
    monkeypatch.setattr(tree_app_module, "FOLD_KEEP", 2)
    path = tmp_path / "long.jsonl"
    tree = SessionTree.open(path, now=counter_clock())
    ids: dict[str, str] = {}
    for number in range(20):
        message = user if number % 2 == 0 else assistant
        ids[f"m{number}"] = tree.append_message(message(f"message {number}"))
    return Session(path, ids)


def node_of(app: TreeApp, key: str) -> Any:
    for node in tree_app_module._walk(app.query_one(EntryTree).root):
        if node.data is not None and node.data.key == key:
            return node
    raise AssertionError(f"no node {key}")


def shown(app: TreeApp) -> list[str]:
    return [d.entry_id or d.key for d in visible(app)]


async def test_a_long_run_shows_its_ends_around_a_fold(long_session: Session) -> None:
    ids = long_session.ids
    fold = f"fold:{ids['m2']}"
    app = make_app(long_session)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert shown(app) == ["session", ids["m0"], ids["m1"], fold, ids["m18"], ids["m19"]]
        assert cursor(app).entry_id == ids["m19"]
        assert str(node_of(app, fold).label) == "… 16 more entries"
        made = {d.entry_id for d in all_nodes(app) if d.entry_id}
        assert made == {ids["m0"], ids["m1"], ids["m18"], ids["m19"]}  # the rest: no node yet
        await pilot.press("up", "up")
        assert cursor(app).key == fold
        assert preview(app).startswith(f"16 entries folded here, from {ids['m2']} to {ids['m17']}")
        await pilot.press("n")
        assert app.notices[-1] == "Put the cursor on an entry first (not a heading)."
        await pilot.press("enter")
        await pilot.pause()
        assert shown(app) == [
            "session",
            ids["m0"],
            ids["m1"],
            fold,
            *(ids[f"m{n}"] for n in range(2, 18)),
            ids["m18"],
            ids["m19"],
        ]
        await pilot.press("down")
        assert "message 2" in preview(app)
        await pilot.press("up", "space")  # folds again
        assert ids["m2"] not in shown(app)


async def test_a_fold_over_a_chunk_opens_into_parts(
    long_session: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tree_app_module, "FOLD_CHUNK", 5)
    ids = long_session.ids
    app = make_app(long_session)
    async with app.run_test(size=SIZE) as pilot:
        app.query_one(EntryTree).move_cursor(node_of(app, f"fold:{ids['m2']}"))
        await pilot.pause()
        assert "in parts of up to 5" in preview(app)
        await pilot.press("enter")
        await pilot.pause()
        parts = [f"fold:{ids[f'm{n}']}/5" for n in (2, 7, 12, 17)]
        assert shown(app)[4:8] == parts
        assert [str(node_of(app, key).label) for key in parts] == [
            "… 5 entries (1–5 of 16)",
            "… 5 entries (6–10 of 16)",
            "… 5 entries (11–15 of 16)",
            "… 1 entry (16–16 of 16)",
        ]
        assert ids["m8"] not in {d.entry_id for d in all_nodes(app)}
        await pilot.press("down", "down", "enter")
        await pilot.pause()
        assert shown(app)[5:11] == [parts[1], *(ids[f"m{n}"] for n in range(7, 12))]
        assert ids["m2"] not in {d.entry_id for d in all_nodes(app)}  # part 1 is still folded


async def test_selecting_a_hidden_entry_unfolds_what_hides_it(
    long_session: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tree_app_module, "FOLD_CHUNK", 5)
    ids = long_session.ids
    app = make_app(long_session)
    async with app.run_test(size=SIZE) as pilot:
        app.select_entry(ids["m9"])
        await pilot.pause()
        assert cursor(app).entry_id == ids["m9"]
        assert "message 9" in preview(app)
        assert ids["m9"] in shown(app)
        assert node_of(app, f"fold:{ids['m2']}").is_expanded
        assert node_of(app, f"fold:{ids['m7']}/5").is_expanded
        assert not node_of(app, f"fold:{ids['m12']}/5").is_expanded


async def test_n_moves_the_leaf_to_a_folded_entry(long_session: Session) -> None:
    ids = long_session.ids
    app = make_app(long_session)
    async with app.run_test(size=SIZE) as pilot:
        await press_on(pilot, ids["m15"], "n")  # hidden in the fold
        await settle(pilot)
        assert app.notices[-1].startswith(f"Moved the leaf to {ids['m15']}.")
        leaf = app.session_tree.leaf_id
        assert cursor(app).entry_id == leaf
        # The run now ends at m15, a fork; the fold the move opened stays open.
        assert node_of(app, f"fold:{ids['m2']}").is_expanded
        assert shown(app)[15:21] == [
            ids["m13"],
            ids["m14"],
            ids["m15"],
            f"branch:{ids['m16']}",
            f"branch:{leaf}",
            leaf,
        ]
    marker = long_session.reopen().get_leaf_entry()
    assert marker is not None and marker["parentId"] == ids["m15"]


async def test_a_reload_keeps_an_expanded_fold_expanded(long_session: Session) -> None:
    ids = long_session.ids
    fold = f"fold:{ids['m2']}"
    app = make_app(long_session)
    async with app.run_test(size=SIZE) as pilot:
        app.query_one(EntryTree).move_cursor(node_of(app, fold))
        await pilot.press("enter")
        await pilot.pause()
        await press_on(pilot, ids["m5"], "l")
        await pilot.press(*"mark", "enter")
        await pilot.pause()  # the label reloads the tree
        assert long_session.reopen().get_label(ids["m5"]) == "mark"
        assert cursor(app).entry_id == ids["m5"]
        # The labelled m5 now splits the fold in two; both are open, as the one fold was.
        assert node_of(app, fold).is_expanded
        assert node_of(app, f"fold:{ids['m6']}").is_expanded
        assert shown(app)[3:9] == [
            fold,
            ids["m2"],
            ids["m3"],
            ids["m4"],
            ids["m5"],
            f"fold:{ids['m6']}",
        ]
        assert shown(app)[9] == ids["m6"]
        node = app.query_one(EntryTree).cursor_node
        assert node is not None and "#mark" in str(node.label)


async def test_notable_entries_stay_outside_folds(long_session: Session) -> None:
    ids = long_session.ids
    tree = long_session.open()
    label_id = tree.append_label(ids["m9"], "checkpoint")  # the label entry is the new leaf
    app = TreeApp(tree, settings=Settings(), client_factory=offline)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert shown(app) == [
            "session",
            ids["m0"],
            ids["m1"],
            f"fold:{ids['m2']}",
            ids["m9"],
            f"fold:{ids['m10']}",
            ids["m19"],
            label_id,
        ]
        assert str(node_of(app, f"fold:{ids['m2']}").label) == "… 7 more entries"
        assert str(node_of(app, f"fold:{ids['m10']}").label) == "… 9 more entries"


async def test_a_large_folded_branch_is_made_when_unfolded(
    session: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tree_app_module, "DEFER_BRANCHES_OVER", 2)
    ids = session.ids
    heading = f"branch:{ids['u3']}"
    app = make_app(session)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        made = {d.entry_id for d in all_nodes(app)}
        assert not made & {ids["u3"], ids["a3"], ids["t3"]}
        app.query_one(EntryTree).move_cursor(node_of(app, heading))
        await pilot.press("space")
        await pilot.pause()
        assert shown(app)[4:7] == [ids["u3"], ids["a3"], ids["t3"]]
        await pilot.press("space")
        app.reload(focus=ids["a2"])
        await pilot.pause()
        assert ids["t3"] not in {d.entry_id for d in all_nodes(app)}  # folded again: not made
        app.select_entry(ids["t3"])
        await pilot.pause()
        assert cursor(app).entry_id == ids["t3"]
        assert node_of(app, heading).is_expanded
