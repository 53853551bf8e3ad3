"""Move the leaf to another entry, optionally summarizing the branch left behind (§9.4).

``navigate_tree`` follows pi 0.73.1's ``navigateTree``:

1. moving to the current leaf moves nothing (a label given is still written on the leaf; pi
   drops it);
2. the abandoned entries are collected (§9.1) into a :class:`TreePreparation`;
3. ``session_before_tree`` hooks may cancel, supply the summary, or override the custom
   instructions, ``replace_instructions`` and the label;
4. with ``summarize`` the branch is summarized (§9.3) unless nothing was abandoned (or only
   our ``contextree.leaf`` markers); a cancelled or aborted call writes nothing and leaves the
   leaf where it was; a failed call raises :class:`BranchSummaryError`;
5. the new position: a user message or custom message target puts its text in the editor and
   the leaf at its parent (so the message can be edited and sent again); any other target
   becomes the leaf;
6. with a summary, a ``branch_summary`` entry is appended at the new position and becomes the
   leaf; without one the leaf only moves in memory (pi's behaviour; see :func:`persist_leaf`);
7. a label is attached to the summary entry, or to the target when there is no summary. As in
   pi, the ``label`` entry is appended at the leaf, so the leaf ends on that entry (it carries
   no message, so the context is the same) and the move is then on disk;
8. ``session_tree`` hooks are told where the leaf went.

The steps are functions of their own (``_plan``: 1-2, ``_run_before_hooks``: 3, ``_summarize``:
4, ``_write``: 5-7, ``_finish``: 8), as in :mod:`contextree.compaction.run`. No lock is held
during the model call; on a shared session the summary's write re-checks under the store's
write lock whether another worker left the same summary meanwhile (docs/stores.md).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, replace
from typing import Any, Final, Unpack

from contextree.branching.collect import collect_entries_for_branch_summary
from contextree.branching.summarize import BranchSummaryResult, generate_branch_summary
from contextree.compaction.options import SummaryKeywords, SummaryOptions, resolve_options
from contextree.entries.types import (
    StoredEntry,
    is_custom_entry,
    is_custom_message_entry,
    is_message_entry,
    is_text_content,
    is_user_message,
)
from contextree.errors import BranchSummaryError, EntryNotFoundError, TreeError
from contextree.hooks.events import BeforeTreeEvent, SessionTreeEvent
from contextree.hooks.registry import BEFORE_TREE, TREE, HookRegistry
from contextree.hooks.results import before_tree_result, hook_summary
from contextree.llm.base import ModelClient
from contextree.session.rebase import SummarizedElsewhereError, WriteMark
from contextree.session.tree import SessionTree
from contextree.settings.schema import BranchSummarySettings

__all__ = [
    "LEAF_CUSTOM_TYPE",
    "NavigationResult",
    "TreePreparation",
    "navigate_tree",
    "persist_leaf",
    "resolve_entry_id",
]

LEAF_CUSTOM_TYPE: Final = "contextree.leaf"
"""``customType`` of the ``custom`` entry that records a leaf move on disk (DESIGN decision 8)."""

_MAX_LISTED_CANDIDATES: Final = 8


@dataclass(frozen=True, slots=True)
class TreePreparation:
    """What a move is about to do; ``session_before_tree`` hooks receive it."""

    target_id: str
    old_leaf_id: str | None
    common_ancestor_id: str | None
    entries_to_summarize: list[StoredEntry]
    """The abandoned entries, oldest first (§9.1)."""
    user_wants_summary: bool
    custom_instructions: str | None = None
    replace_instructions: bool = False
    label: str | None = None


@dataclass(frozen=True, slots=True)
class NavigationResult:
    """How a move went.

    ``cancelled`` means nothing was written and the leaf did not move: a hook cancelled, or
    (with ``aborted``) the summary call was cancelled or aborted.
    """

    cancelled: bool = False
    aborted: bool = False
    editor_text: str | None = None
    """The text of a user or custom message target, to edit and send again."""
    summary_entry: StoredEntry | None = None
    """The ``branch_summary`` entry written, if any."""
    new_leaf_id: str | None = None
    """The leaf after the move: the summary entry, the label entry, or the new position."""
    old_leaf_id: str | None = None
    from_extension: bool = False
    """The summary came from a ``session_before_tree`` hook."""
    label_entry_id: str | None = None
    """The ``label`` entry written, if a label was given."""
    summarized_elsewhere: bool = False
    """Another worker left a summary of the same branch at the same place while the model was
    summarizing: nothing was written, and ``summary_entry`` is theirs (the leaf follows it)."""
    leaf_entry_id: str | None = None
    """The ``contextree.leaf`` entry written by ``persist=True`` (:func:`persist_leaf`), if any."""

    def to_json(self) -> dict[str, Any]:
        """``contextree navigate --format json`` (docs/cli-json.md)."""
        summary = self.summary_entry
        return {
            "cancelled": self.cancelled,
            "oldLeafId": self.old_leaf_id,
            "newLeafId": self.new_leaf_id,
            "leafEntryId": self.leaf_entry_id,
            "labelEntryId": self.label_entry_id,
            "editorText": self.editor_text,
            "summaryEntryId": summary.get("id") if summary is not None else None,
            "summary": summary.get("summary") if summary is not None else None,
            "summarizedElsewhere": self.summarized_elsewhere,
        }


def _text_blocks(content: object) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "".join(str(block.get("text", "")) for block in content if is_text_content(block))


def _position(
    tree: SessionTree, target: StoredEntry, target_id: str
) -> tuple[str | None, str | None]:
    """``(new_leaf_id, editor_text)`` for a move to ``target`` (§9.4 step 6)."""
    if is_message_entry(target):
        message = target["message"]
        if not is_user_message(message):
            return target_id, None
        text = _text_blocks(message.get("content"))
    elif is_custom_message_entry(target):
        text = _text_blocks(target.get("content"))
    else:
        return target_id, None
    parent = target.get("parentId")
    # A parent that is missing (an orphan) or the entry itself makes the target a root.
    if not isinstance(parent, str) or parent == target_id or not tree.has_entry(parent):
        return None, text
    return parent, text


def _is_leaf_marker(entry: StoredEntry) -> bool:
    # Our decision-8 bookkeeping is no content: a branch holding only such markers is not
    # summarized (pi would write "No content to summarize" for it).
    return is_custom_entry(entry) and entry.get("customType") == LEAF_CUSTOM_TYPE


def _hook_summary(value: object) -> tuple[str, Any]:
    if isinstance(value, BranchSummaryResult):
        return value.summary or "", value.details
    given = hook_summary(value)
    return given.summary, given.details


async def navigate_tree(
    tree: SessionTree,
    target_id: str,
    *,
    summarize: bool = False,
    client: ModelClient | None = None,
    options: SummaryOptions | None = None,
    settings: BranchSummarySettings | None = None,
    label: str | None = None,
    hooks: HookRegistry | None = None,
    persist: bool = False,
    **keywords: Unpack[SummaryKeywords],
) -> NavigationResult:
    """Move the leaf of ``tree`` to ``target_id``; with ``summarize``, leave a branch summary.

    Args:
        summarize: summarize the abandoned branch with ``client`` (or a hook's summary).
        client: the summarizing model; required with ``summarize``.
        options: how the summary is asked for
            (:class:`~contextree.compaction.options.SummaryOptions`, e.g. built with
            :func:`~contextree.compaction.options.summary_options`): ``custom_instructions``
            (what to focus on), ``replace_instructions`` (send them instead of the branch
            prompt), ``prompts_dir``, ``context_window`` (default looked up from
            ``client.name``), ``branch_reserve_tokens``, ``estimator`` and ``redactor``
            (blanks secrets out of the branch before it is sent; default the built-in
            patterns, ``None`` sends it as it is).
        settings: ``branchSummary.*``; when given, its ``reserve_tokens`` wins over the
            options'. ``enabled`` only gates offering summaries in a UI; an explicit
            ``summarize`` is always honoured.
        label: a label for the summary entry, or for the target when there is no summary.
        hooks: ``session_before_tree`` / ``session_tree`` handlers.
        persist: keep a move without a summary on disk too: a ``contextree.leaf`` entry is
            appended when a reload would not land on the new leaf (:func:`persist_leaf`,
            DESIGN decision 8); the command line, the tree browser and chat's ``/navigate``
            all move this way.
        keywords: the options' fields one by one (the older spelling), applied over
            ``options``.

    Without ``persist``, a move without a summary changes only the in-memory leaf (pi's
    behaviour: a reload puts the leaf back on the last entry in the file).

    Raises:
        ValueError: ``summarize`` without a client.
        EntryNotFoundError: no entry ``target_id``.
        ParentCycleError: the new position's parent chain loops (pi would hang on a file
            with an entry written there); nothing was written.
        BranchSummaryError: the summary call failed; nothing was written.

    On a session other workers share, the summary call runs without the write lock; the
    summary is written under it, and when another worker left a summary of the same branch
    at the same place meanwhile, this one writes nothing and follows theirs
    (``summarized_elsewhere``; see :meth:`SessionTree.branch_with_summary`).
    """
    opts = _resolved(resolve_options(options, keywords), settings, client if summarize else None)
    plan = _plan(tree, target_id, summarize=summarize, client=client, opts=opts, label=label)
    if isinstance(plan, NavigationResult):
        return plan
    hooks = hooks or HookRegistry()
    choice = await _run_before_hooks(plan, hooks)
    if choice is None:
        return plan.unchanged(aborted=False)
    summary = await _summarize(plan, choice, client)
    if summary is None:
        return plan.unchanged(aborted=True)
    written = _write(tree, plan, choice, summary)
    return await _finish(tree, plan, written, hooks, persist=persist)


def _resolved(
    opts: SummaryOptions, settings: BranchSummarySettings | None, client: ModelClient | None
) -> SummaryOptions:
    """``opts`` with every choice made: ``settings``' reserve, and the window of the model
    that will summarize (``client``; ``None``: no summary call)."""
    if settings is not None:
        opts = replace(opts, branch_reserve_tokens=settings.reserve_tokens)
    if client is not None and opts.context_window is None:
        from contextree.llm.registry import context_window as lookup_window

        opts = replace(opts, context_window=lookup_window(client.name))
    return opts


@dataclass(frozen=True, slots=True)
class _Plan:
    """What a move will do, read before any hook or model runs."""

    target: StoredEntry
    old_leaf_id: str | None
    preparation: TreePreparation
    opts: SummaryOptions
    mark: WriteMark
    """Taken before the branch was read: what other writers append later is news when the
    summary is written (a shared session)."""

    def unchanged(self, *, aborted: bool) -> NavigationResult:
        """Nothing written, the leaf where it was."""
        return NavigationResult(
            cancelled=True,
            aborted=aborted,
            new_leaf_id=self.old_leaf_id,
            old_leaf_id=self.old_leaf_id,
        )


@dataclass(frozen=True, slots=True)
class _Choice:
    """The run's settings once ``session_before_tree`` hooks had their say."""

    supplied: Any
    """A hook's summary (used instead of the model), or ``None``."""
    custom_instructions: str | None
    replace_instructions: bool
    label: str | None


@dataclass(frozen=True, slots=True)
class _Summary:
    text: str | None
    details: Any = None
    from_extension: bool = False


@dataclass(frozen=True, slots=True)
class _Written:
    editor_text: str | None
    summary_entry: StoredEntry | None = None
    label_entry_id: str | None = None
    from_extension: bool = False
    elsewhere: bool = False


def _plan(
    tree: SessionTree,
    target_id: str,
    *,
    summarize: bool,
    client: ModelClient | None,
    opts: SummaryOptions,
    label: str | None,
) -> _Plan | NavigationResult:
    """Steps 1-2: the target, the abandoned entries; a result when there is nothing to do."""
    old_leaf_id = tree.leaf_id
    if target_id == old_leaf_id:
        # Nothing to move (pi returns at once, dropping the label too). A label asked for is
        # still written, on the leaf: appended at it, as any label (step 7).
        label_id = tree.append_label(target_id, label) if label else None
        return NavigationResult(
            new_leaf_id=tree.leaf_id, old_leaf_id=old_leaf_id, label_entry_id=label_id
        )
    if summarize and client is None:
        raise ValueError("No model available for summarization")
    target = tree.get_entry(target_id)
    if target is None:
        raise EntryNotFoundError(target_id)
    # Before any summary is paid for: nothing may be written under a parent cycle.
    position, _ = _position(tree, target, target_id)
    if position is not None:
        tree.ensure_acyclic(position)
    mark = tree.write_mark()
    collection = collect_entries_for_branch_summary(tree, old_leaf_id, target_id)
    preparation = TreePreparation(
        target_id=target_id,
        old_leaf_id=old_leaf_id,
        common_ancestor_id=collection.common_ancestor_id,
        entries_to_summarize=collection.entries,
        user_wants_summary=summarize,
        custom_instructions=opts.custom_instructions,
        replace_instructions=opts.replace_instructions,
        label=label,
    )
    return _Plan(target, old_leaf_id, preparation, opts, mark)


async def _run_before_hooks(plan: _Plan, hooks: HookRegistry) -> _Choice | None:
    """Step 3: ``session_before_tree`` hooks; ``None`` when one cancels."""
    preparation = plan.preparation
    choice = _Choice(
        None,
        preparation.custom_instructions,
        preparation.replace_instructions,
        preparation.label,
    )
    decided = await hooks.run_before(BEFORE_TREE, BeforeTreeEvent(preparation))
    if decided is None:
        return choice
    decision = before_tree_result(decided)
    if decision.cancel:
        return None
    if preparation.user_wants_summary:
        choice = replace(choice, supplied=decision.summary)
    # None: not overridden; "" (a dict's explicit null): cleared.
    if decision.custom_instructions is not None:
        choice = replace(choice, custom_instructions=decision.custom_instructions or None)
    if decision.replace_instructions is not None:
        choice = replace(choice, replace_instructions=decision.replace_instructions)
    if decision.label is not None:
        choice = replace(choice, label=decision.label or None)
    return choice


async def _summarize(plan: _Plan, choice: _Choice, client: ModelClient | None) -> _Summary | None:
    """Step 4: the summary (a hook's, the model's, or none); ``None`` when the call was
    cancelled or aborted. No lock is held here: the call may take seconds."""
    if choice.supplied:
        text, details = _hook_summary(choice.supplied)
        return _Summary(text, details, from_extension=True)
    entries = plan.preparation.entries_to_summarize
    if not plan.preparation.user_wants_summary or all(_is_leaf_marker(e) for e in entries):
        return _Summary(None)
    assert client is not None
    opts = plan.opts
    assert opts.context_window is not None  # navigate_tree resolved it for the client
    try:
        result = await generate_branch_summary(
            entries,
            client,
            context_window=opts.context_window,
            reserve_tokens=opts.branch_reserve_tokens,
            custom_instructions=choice.custom_instructions,
            replace_instructions=choice.replace_instructions,
            prompts_dir=opts.prompts_dir,
            estimator=opts.estimator,
            redactor=opts.redactor,
        )
    except asyncio.CancelledError:
        # pi aborts only the summary call and reports the move as cancelled. The
        # cancellation is handled here, so this task is not left "cancelling".
        task = asyncio.current_task()
        if task is not None:
            task.uncancel()
        return None
    if result.aborted:
        return None
    if result.error is not None:
        raise BranchSummaryError(result.error)
    return _Summary(result.summary, result.details)


def _write(tree: SessionTree, plan: _Plan, choice: _Choice, summary: _Summary) -> _Written:
    """Steps 5-7: move the leaf, append the summary and the label (each under the lock)."""
    target_id = plan.preparation.target_id
    new_position, editor_text = _position(tree, plan.target, target_id)
    label = choice.label
    if not summary.text:
        if new_position is None:
            tree.reset_leaf()
        else:
            tree.branch(new_position)
        label_id = tree.append_label(target_id, label) if label else None
        return _Written(editor_text, label_entry_id=label_id)
    try:
        summary_id = tree.branch_with_summary(
            new_position,
            summary.text,
            summary.details,
            summary.from_extension,
            planned_at=plan.mark,
        )
    except SummarizedElsewhereError as lost:
        # Another worker made this move (and paid for it) while we waited for the model:
        # the leaf now follows theirs and nothing of ours is written.
        theirs = tree.get_entry(lost.entry_id)
        from_hook = bool(theirs.get("fromHook")) if theirs is not None else False
        return _Written(editor_text, theirs, from_extension=from_hook, elsewhere=True)
    label_id = tree.append_label(summary_id, label) if label else None
    return _Written(
        editor_text, tree.get_entry(summary_id), label_id, from_extension=summary.from_extension
    )


async def _finish(
    tree: SessionTree, plan: _Plan, written: _Written, hooks: HookRegistry, *, persist: bool
) -> NavigationResult:
    """Step 8: ``session_tree`` hooks, the ``contextree.leaf`` record, the result."""
    has_summary = written.summary_entry is not None
    new_leaf_id = tree.leaf_id
    await hooks.emit(
        TREE,
        SessionTreeEvent(
            new_leaf_id=new_leaf_id,
            old_leaf_id=plan.old_leaf_id,
            summary_entry=written.summary_entry,
            from_extension=written.from_extension if has_summary else None,
        ),
    )
    leaf_entry_id = None
    if persist and not has_summary and new_leaf_id != plan.old_leaf_id:
        leaf_entry_id = persist_leaf(tree)  # decision 8: the move must survive the process
    return NavigationResult(
        editor_text=written.editor_text,
        summary_entry=written.summary_entry,
        new_leaf_id=new_leaf_id,
        old_leaf_id=plan.old_leaf_id,
        from_extension=written.from_extension and has_summary,
        label_entry_id=written.label_entry_id,
        leaf_entry_id=leaf_entry_id,
        summarized_elsewhere=written.elsewhere,
    )


def persist_leaf(tree: SessionTree) -> str | None:
    """Record the current leaf on disk, so that a reload puts the leaf there (decision 8).

    pi and contextree load the last entry in the file as the leaf, so a ``custom`` entry with
    ``customType`` :data:`LEAF_CUSTOM_TYPE` is appended at the leaf (a new root when the leaf
    is before the first entry). Custom entries never reach the context. Returns the new
    entry's id, or ``None`` when a reload already lands on the leaf and nothing was written.
    """
    # What other writers appended counts: after their lines a reload would land elsewhere.
    tree.refresh()
    last: str | None = None
    for record in tree.records():
        last = record.id
    if tree.leaf_id == last:
        return None
    return tree.append_custom(LEAF_CUSTOM_TYPE, {"leafId": tree.leaf_id})


def resolve_entry_id(tree: SessionTree, text: str) -> str:
    """The id of the entry that ``text`` names: a full id, or a prefix of exactly one id.

    Raises:
        EntryNotFoundError: no id starts with ``text``.
        TreeError: several ids start with ``text`` (the message lists them).
    """
    wanted = text.strip()
    if wanted and tree.has_entry(wanted):
        return wanted
    matches = (
        sorted({r.id for r in tree.records() if r.id is not None and r.id.startswith(wanted)})
        if wanted
        else []
    )
    if not matches:
        raise EntryNotFoundError(wanted)
    if len(matches) > 1:
        shown = ", ".join(matches[:_MAX_LISTED_CANDIDATES])
        more = len(matches) - _MAX_LISTED_CANDIDATES
        if more > 0:
            shown += f" and {more} more"
        raise TreeError(
            f'entry id prefix "{wanted}" matches {len(matches)} entries ({shown}); '
            "give more characters"
        )
    return matches[0]
