"""``contextree tree --interactive``: browse a session tree in the terminal (textual).

Keyboard only, so it works over SSH: move with the arrows or j/k, fold with enter or space,
preview the entry under the cursor, label it, and move the leaf there with or without a branch
summary. ``branchSummary.enabled`` decides whether ``n`` first asks about a summary (pi asks
only when summaries are on); ``s`` always summarizes. A move without a summary is recorded on
disk (``navigate_tree(..., persist=True)``, DESIGN decision 8), as ``contextree navigate`` does;
the folding is :mod:`contextree.session.folding`'s, as for ``contextree tree --fold``.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from typing import ClassVar, Final

from rich.cells import cell_len
from rich.text import Text

from contextree.cli.entry_detail import entry_detail, entry_line, theme_style
from contextree.cli.preview import escaped
from contextree.errors import ContextreeError
from contextree.llm.base import ModelClient
from contextree.session.folding import fold_run, linear_run
from contextree.session.tree import SessionTree, TreeNode
from contextree.settings.schema import Settings

try:
    from textual import on
    from textual.app import App, ComposeResult
    from textual.binding import Binding, BindingType
    from textual.containers import Horizontal, VerticalScroll
    from textual.widgets import Footer, Header, Static, Tree
    from textual.widgets.tree import TreeNode as UiNode
except ModuleNotFoundError as exc:  # textual is the [tui] extra
    if exc.name != "textual":
        raise
    from contextree.cli.extras import install_command

    raise ContextreeError(
        f"the interactive tree needs textual; install it with: {install_command('tui')}"
    ) from exc

from contextree.cli.tree_dialogs import JUST_MOVE, SUMMARIZE, LabelPrompt, SummaryChoice

__all__ = ["EntryTree", "NodeData", "PreviewPane", "TreeApp", "run_tree_app"]

_EDITOR_PREVIEW_CHARS: Final = 200

FOLD_RUNS_OVER = 60
"""A linear run longer than this shows only its ends; the entries between them are folded.

With :data:`FOLD_KEEP` a folded run takes about one screen. Every run on the leaf path is shown,
so these bound how many lines a long session opens with (a 100k-entry one has ~200 runs there).
"""
FOLD_KEEP = 15
"""Entries shown at each end of a folded run."""
FOLD_CHUNK = 1000
"""Most entries one unfolding shows; a larger fold opens into parts of up to this many."""
DEFER_BRANCHES_OVER = 20
"""A folded branch heading over this many entries makes its entries only when unfolded."""
FOLD_NOTABLE_MAX = 100
"""Most notable entries (the leaf, compactions, summaries, labelled) kept visible in one run."""


def _entries(count: int, more: str = "") -> str:
    return f"{count:,} {more}{'entry' if count == 1 else 'entries'}"


@dataclass(slots=True)
class _Fold:
    """The entries one fold node hides, created as UI nodes only when it is unfolded."""

    nodes: list[TreeNode]
    part: int
    """Entries per part when it unfolds into parts (0: it unfolds into its entries)."""
    branch: TreeNode | None = None
    """For a folded branch heading instead: the first entry of the branch."""
    filled: bool = False


@dataclass(frozen=True, slots=True)
class NodeData:
    """What one line of the tree stands for: an entry, a branch heading or the session."""

    key: str
    """Stable across reloads (keeps folds): the entry id, ``branch:<first id>``,
    ``root:<first id>`` (one of several roots), ``fold:<first id>`` (``fold:<first id>/<size>``
    for a part of a fold) or ``session``."""
    entry_id: str | None = None
    note: str = ""
    """What the preview shows for a heading."""


class EntryTree(Tree[NodeData]):
    """The session tree: linear runs flat, each branch a foldable heading under its fork.

    A long run shows its first and last entries around a fold node (``… N more entries``) whose
    entries are made only when it is unfolded; so is a large folded branch.
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("down,j", "cursor_down", "Move", key_display="↑↓/jk"),
        Binding("k", "cursor_up", "Up", show=False),
        Binding("space", "toggle_node", "Fold", key_display="enter/space"),
    ]

    def get_label_width(self, node: UiNode[NodeData]) -> int:
        """``render_label``'s width without rendering (textual asks it of every shown line)."""
        label = node.label
        width = label.cell_len if isinstance(label, Text) else cell_len(label)
        if node.allow_expand:
            width += cell_len(self.ICON_NODE_EXPANDED if node.is_expanded else self.ICON_NODE)
        return width


class PreviewPane(VerticalScroll):
    """The full text of the entry under the cursor; focus it with ``p`` to scroll."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("j", "scroll_down", "Scroll", show=False),
        Binding("k", "scroll_up", "Scroll", show=False),
    ]


class TreeApp(App[None]):
    """The interactive tree of one session.

    ``client_factory`` builds the summarizing model when a summary is asked for (default: the
    ``model`` setting, else the offline summarizer). ``notices`` keeps every notification shown.
    """

    TITLE = "contextree"
    ENABLE_COMMAND_PALETTE = False
    CSS = """
    #panes { height: 1fr; }
    EntryTree { width: 3fr; }
    PreviewPane { width: 2fr; border-left: solid $primary; padding: 0 1; }
    PreviewPane:focus { border-left: thick $accent; }
    SummaryChoice, LabelPrompt { align: center middle; }
    .dialog {
        width: 72; height: auto; padding: 1 2; border: thick $primary; background: $surface;
    }
    .choices { height: auto; margin-top: 1; }
    .choices Button { margin-right: 2; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("p", "toggle_preview", "Preview"),
        Binding("l", "label", "Label"),
        Binding("n", "navigate", "Go here"),
        Binding("s", "navigate_summary", "Go + summary"),
        Binding("q", "quit", "Quit"),
    ]

    def __init__(
        self,
        tree: SessionTree,
        *,
        settings: Settings,
        client_factory: Callable[[], ModelClient] | None = None,
    ) -> None:
        super().__init__()
        self.session_tree = tree
        self.app_settings = settings
        if client_factory is None:
            from contextree.cli.models import make_client

            client_factory = partial(make_client, self.app_settings.model)
        self.client_factory = client_factory
        self.notices: list[str] = []
        self.busy = False
        self._entry_nodes: dict[str, UiNode[NodeData]] = {}
        self._labels: dict[str, str] = {}
        self._on_path: set[str] = set()
        self._folds: dict[str, _Fold] = {}
        self._fold_nodes: dict[str, UiNode[NodeData]] = {}
        self._hidden: dict[str, str] = {}
        """Each folded entry's id -> the key of the innermost created fold that holds it."""
        self._sizes: dict[str, int] = {}
        self._was_shown: set[str] = set()
        """Entries that had a node before the last reload (a fold made of them starts open)."""
        self._expanded: dict[str, bool] = {}
        """Fold states by key, kept across reloads also for nodes not made yet."""
        self.sub_title = escaped(str(tree.path or _stored_name(tree) or tree.session_id))

    # -- layout and the tree --------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="panes"):
            yield EntryTree(Text(f"session {self.session_tree.session_id}"), id="tree")
            with PreviewPane(id="preview"):
                yield Static(id="preview-text")
        yield Footer()

    def on_mount(self) -> None:
        self.reload(focus=self.session_tree.leaf_id)
        self.query_one(EntryTree).focus()

    def reload(self, *, focus: str | None) -> None:
        """Rebuild the tree from the session (folds kept) and put the cursor on ``focus``."""
        widget = self.query_one(EntryTree)
        expanded = self._expanded
        expanded.update(
            (node.data.key, node.is_expanded)
            for node in _walk(widget.root)
            if node.data is not None and node.allow_expand
        )
        session = self.session_tree
        leaf_id = session.leaf_id
        self._labels = session.labels()
        self._on_path = {str(key) for key in session.get_branch_view().ids()} if leaf_id else set()
        self._was_shown = set(self._entry_nodes)
        self._entry_nodes = {}
        self._folds = {}
        self._fold_nodes = {}
        self._hidden = {}
        widget.clear()
        widget.root.data = NodeData(
            "session",
            note=f"session {session.session_id}\n{_where(session)}\n"
            f"{len(session)} entries; leaf {leaf_id or '(before the first entry)'}",
        )
        widget.root.expand()
        roots = session.get_tree()
        sizes = self._sizes = _subtree_sizes(roots)
        if len(roots) == 1:
            self._add_run(widget.root, roots[0], sizes, expanded)
        for number, root in enumerate(roots if len(roots) > 1 else [], start=1):
            # Several roots: each under a heading of its own, as `contextree tree` shows them,
            # never as if one root followed the previous root's last entry.
            first_id = str(root.id)
            marker = "◆" if first_id in self._on_path else "◇"
            count = _entries(sizes[first_id])
            key = f"root:{first_id}"
            heading = widget.root.add(
                Text(f"{marker} root {number} ({count})", style=theme_style("ct.meta")),
                NodeData(key, note=f"root {number}: {count} from {first_id}"),
                expand=expanded.get(key, True),
            )
            self._add_run(heading, root, sizes, expanded)
        self.select_entry(focus)

    def _add_run(
        self,
        parent: UiNode[NodeData],
        start: TreeNode,
        sizes: dict[str, int],
        expanded: dict[str, bool],
    ) -> None:
        run = linear_run(start)
        last: UiNode[NodeData] | None = None
        for piece in self._fold_run(run):
            if isinstance(piece, list):
                key = f"fold:{piece[0].id}"
                self._add_fold(parent, piece, expanded, key, f"… {_entries(len(piece), 'more ')}")
                continue
            last = self._add_entry(parent, piece, expanded, branches=piece is run[-1])
        assert last is not None
        for number, child in enumerate(run[-1].children, start=1):
            first_id = str(child.id)
            holds_leaf = first_id in self._on_path
            count = sizes[first_id]
            marker = "◆" if holds_leaf else "◇"
            heading = Text(
                f"{marker} branch {number} ({_entries(count)})", style=theme_style("ct.meta")
            )
            note = f"branch {number} at {run[-1].id}: {_entries(count)} from {first_id}"
            key = f"branch:{first_id}"
            expand = expanded.get(key, holds_leaf)
            branch = last.add(
                heading,
                NodeData(key, note=note + ("; it holds the leaf" if holds_leaf else "")),
                expand=expand,
            )
            if expand or count <= DEFER_BRANCHES_OVER:
                self._add_run(branch, child, sizes, expanded)
                continue
            # Folded and large: its entries are made when it is unfolded (see _fill).
            self._folds[key] = _Fold([], 0, branch=child)
            self._fold_nodes[key] = branch
            stack = [child]
            while stack:
                node = stack.pop()
                self._hidden[str(node.id)] = key
                stack.extend(node.children)

    def _add_entry(
        self,
        parent: UiNode[NodeData],
        node: TreeNode,
        expanded: dict[str, bool],
        *,
        branches: bool = False,
    ) -> UiNode[NodeData]:
        entry_id = str(node.id)
        line = entry_line(
            node.entry,
            label=node.label,
            is_leaf=entry_id == self.session_tree.leaf_id,
            on_path=entry_id in self._on_path,
        )
        data = NodeData(entry_id, entry_id)
        if branches and node.children:
            added = parent.add(line, data, expand=expanded.get(entry_id, True))
        else:
            added = parent.add_leaf(line, data)
        self._entry_nodes[entry_id] = added
        return added

    def _fold_run(self, run: list[TreeNode]) -> list[TreeNode | list[TreeNode]]:
        """The run's entries to show, with the hidden stretches between them as lists."""
        return fold_run(
            run,
            keep=max(FOLD_KEEP, 1),
            leaf_id=self.session_tree.leaf_id,
            fold_over=FOLD_RUNS_OVER,
            min_fold=3,  # a fold of one or two entries saves nothing
            notable_max=FOLD_NOTABLE_MAX,
        )

    def _add_fold(
        self,
        parent: UiNode[NodeData],
        nodes: list[TreeNode],
        expanded: dict[str, bool],
        key: str,
        label: str,
    ) -> None:
        """One fold node for ``nodes``; its children are made when it is first unfolded."""
        chunk = max(FOLD_CHUNK, 2)
        part = 0
        if len(nodes) > chunk:
            part = chunk
            while -(-len(nodes) // part) > chunk:
                part *= chunk
        first_id, last_id = str(nodes[0].id), str(nodes[-1].id)
        count = len(nodes)
        how = f" in parts of up to {part:,}" if part else ""
        note = (
            f"{count:,} entries folded here, from {first_id} to {last_id}.\n"
            f"Press enter or space to unfold them{how}; "
            "selecting a folded entry (after a move) unfolds it too."
        )
        fold = _Fold(nodes, part)
        self._folds[key] = fold
        for node in nodes:
            self._hidden[str(node.id)] = key
        ui = parent.add(Text(label, style=theme_style("ct.meta")), NodeData(key, note=note))
        self._fold_nodes[key] = ui
        if expanded.get(key, first_id in self._was_shown):  # new folds stay open if they were
            self._fill(key, expanded)
            ui.expand()

    def _fill(self, key: str, expanded: dict[str, bool]) -> None:
        """Create the children of a fold (its entries, or its parts) once."""
        fold = self._folds[key]
        if fold.filled:
            return
        fold.filled = True
        ui = self._fold_nodes[key]
        if fold.branch is not None:
            self._add_run(ui, fold.branch, self._sizes, expanded)
            return
        nodes = fold.nodes
        if not fold.part:
            for node in nodes:
                self._hidden.pop(str(node.id), None)
                self._add_entry(ui, node, expanded)
            return
        total = len(nodes)
        for start in range(0, total, fold.part):
            part = nodes[start : start + fold.part]
            label = f"… {_entries(len(part))} ({start + 1:,}–{start + len(part):,} of {total:,})"
            self._add_fold(ui, part, expanded, f"fold:{part[0].id}/{fold.part}", label)

    @on(Tree.NodeExpanded)
    def _unfolded(self, event: Tree.NodeExpanded[NodeData]) -> None:
        data = event.node.data
        if data is not None and self._fold_nodes.get(data.key) is event.node:
            self._fill(data.key, self._expanded)

    def select_entry(self, entry_id: str | None) -> None:
        """Put the cursor on an entry (unfolding what hides it); ``None`` selects the session."""
        widget = self.query_one(EntryTree)
        while entry_id and entry_id not in self._entry_nodes and entry_id in self._hidden:
            fold = self._hidden[entry_id]
            if self._folds[fold].filled:
                break  # cannot happen: filling gives each entry a node or a nested fold
            self._fill(fold, self._expanded)
        node = self._entry_nodes.get(entry_id) if entry_id else None
        node = node or widget.root
        ancestor = node.parent
        while ancestor is not None:
            if not ancestor.is_expanded:
                ancestor.expand()
            ancestor = ancestor.parent
        _ = widget.last_line  # rebuilds the line index, so that node.line is current
        widget.move_cursor(node)
        self._show_preview(node)

    @on(Tree.NodeHighlighted)
    def _highlighted(self, event: Tree.NodeHighlighted[NodeData]) -> None:
        self._show_preview(event.node)

    def _show_preview(self, node: UiNode[NodeData]) -> None:
        data = node.data
        entry = self.session_tree.get_entry(data.entry_id) if data and data.entry_id else None
        if entry is None:
            text = Text(data.note if data else "")
        else:
            entry_id = str(entry.get("id"))
            text = entry_detail(
                entry,
                label=self._labels.get(entry_id),
                is_leaf=entry_id == self.session_tree.leaf_id,
                on_path=entry_id in self._on_path,
            )
        self.query_one("#preview-text", Static).update(text)
        self.query_one(PreviewPane).scroll_home(animate=False)

    # -- actions --------------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if self.busy and action in ("label", "navigate", "navigate_summary"):
            return None  # shown greyed out while a move runs
        return True

    def action_toggle_preview(self) -> None:
        preview = self.query_one(PreviewPane)
        if preview.has_focus:
            self.query_one(EntryTree).focus()
        else:
            preview.focus()

    def action_label(self) -> None:
        entry_id = self._selected_entry()
        if entry_id is None:
            return
        current = self._labels.get(entry_id)

        def done(value: str | None) -> None:
            if value is None:
                return
            label = value.strip() or None
            if label == current:
                self._say(f"The label of {entry_id} is unchanged.")
                return
            try:
                self.session_tree.append_label(entry_id, label)
            except (ContextreeError, OSError) as exc:
                self._say(f"Could not write the label: {exc}", "error")
                return
            self._say(
                f"Labelled {entry_id} #{label}." if label else f"Cleared the label of {entry_id}."
            )
            self.reload(focus=entry_id)

        self.push_screen(LabelPrompt(entry_id, current), done)

    def action_navigate(self) -> None:
        target_id = self._navigation_target()
        if target_id is None:
            return
        if not self.app_settings.branch_summary.enabled:
            self._start_navigation(target_id, summarize=False)
            return

        def chosen(choice: str | None) -> None:
            if choice == SUMMARIZE:
                self._start_navigation(target_id, summarize=True)
            elif choice == JUST_MOVE:
                self._start_navigation(target_id, summarize=False)
            else:
                self._say("Cancelled; nothing was written.")

        self.push_screen(SummaryChoice(target_id), chosen)

    def action_navigate_summary(self) -> None:
        target_id = self._navigation_target()
        if target_id is not None:
            self._start_navigation(target_id, summarize=True)

    def _selected_entry(self) -> str | None:
        if self.busy:
            self._say("Wait for the move to finish.", "warning")
            return None
        node = self.query_one(EntryTree).cursor_node
        entry_id = node.data.entry_id if node is not None and node.data is not None else None
        if entry_id is None:
            self._say("Put the cursor on an entry first (not a heading).", "warning")
        return entry_id

    def _navigation_target(self) -> str | None:
        entry_id = self._selected_entry()
        if entry_id is not None and entry_id == self.session_tree.leaf_id:
            self._say(f"{entry_id} is already the leaf.")
            return None
        return entry_id

    # -- navigation -----------------------------------------------------------------------------

    def _start_navigation(self, target_id: str, *, summarize: bool) -> None:
        self._set_busy(True)
        self.run_worker(
            self._navigate(target_id, summarize=summarize),
            name=f"navigate to {target_id}",
            group="navigate",
            exclusive=True,
            exit_on_error=False,
        )

    async def _navigate(self, target_id: str, *, summarize: bool) -> None:
        from contextree.branching.navigate import navigate_tree
        from contextree.compaction.options import summary_options

        focus: str | None = target_id
        try:
            client = self.client_factory() if summarize else None
            result = await navigate_tree(
                self.session_tree,
                target_id,
                summarize=summarize,
                client=client,
                options=summary_options(
                    self.app_settings, model=client.name if client is not None else None
                ),
                persist=True,  # decision 8
            )
            if result.cancelled:
                self._say("Summary cancelled; nothing was written.", "warning")
            else:
                focus = self.session_tree.leaf_id
                self._say(
                    _describe_move(
                        result.new_leaf_id,
                        result.leaf_entry_id,
                        result.editor_text,
                        result.summary_entry is not None,
                    )
                )
        except Exception as exc:  # the UI's edge: report any failure, never show a traceback
            self._say(_failure(exc), "error")
        finally:
            self._set_busy(False)
            self.reload(focus=focus)

    def _set_busy(self, busy: bool) -> None:
        self.busy = busy
        widget = self.query_one(EntryTree)
        widget.loading = busy
        if not busy:
            widget.focus()
        self.refresh_bindings()

    def _say(self, message: str, severity: str = "information") -> None:
        self.notices.append(message)
        if severity == "error":
            self.notify(message, severity="error", markup=False, timeout=10)
        elif severity == "warning":
            self.notify(message, severity="warning", markup=False)
        else:
            self.notify(message, markup=False)


def _describe_move(
    new_leaf_id: str | None, recorded: str | None, editor_text: str | None, summarized: bool
) -> str:
    where = new_leaf_id or "the start of the session"
    lines = [
        f"Summarized the branch left; new leaf {where}."
        if summarized
        else f"Moved the leaf to {where}."
    ]
    if recorded is not None:
        lines.append(f"Recorded on disk as contextree.leaf entry {recorded}.")
    if editor_text is not None:
        shown = editor_text
        if len(shown) > _EDITOR_PREVIEW_CHARS:
            shown = shown[: _EDITOR_PREVIEW_CHARS - 1] + "…"
        lines.append(f"Message to edit and send again: {shown}")
    return "\n".join(lines)


def _failure(exc: Exception) -> str:
    if isinstance(exc, (ContextreeError, OSError, ValueError)):
        return f"Move failed; nothing was written: {exc}"
    return f"Move failed ({type(exc).__name__}): {exc}"


def _walk(node: UiNode[NodeData]) -> Iterator[UiNode[NodeData]]:
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(current.children))


def _subtree_sizes(roots: list[TreeNode]) -> dict[str, int]:
    """Entries in each node's subtree, by entry id (iterative: runs can be thousands long)."""
    order: list[TreeNode] = []
    stack = list(roots)
    while stack:
        node = stack.pop()
        order.append(node)
        stack.extend(node.children)
    sizes: dict[str, int] = {}
    for node in reversed(order):
        sizes[str(node.id)] = 1 + sum(sizes[str(child.id)] for child in node.children)
    return sizes


def _is_terminal() -> bool:
    return sys.stdin.isatty() and sys.stdout.isatty()


def run_tree_app(
    tree: SessionTree, *, settings: Settings, client_factory: Callable[[], ModelClient]
) -> None:
    """Run the interactive tree of ``tree`` until the user quits (needs a terminal)."""
    if not _is_terminal():
        raise ContextreeError(
            "the interactive tree needs a terminal; run it without redirecting input or output"
        )
    TreeApp(tree, settings=settings, client_factory=client_factory).run()


def _stored_name(tree: SessionTree) -> str | None:
    """A database session's URL (``None`` for a file or memory)."""
    name = tree.store.name
    return name if tree.path is None and name != "<memory>" else None


def _where(tree: SessionTree) -> str:
    """Where the session lives, for the session line's note."""
    return escaped(str(tree.path or _stored_name(tree) or "(in memory)"))
