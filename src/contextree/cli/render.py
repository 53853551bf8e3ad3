"""Turn domain values into rich renderables; nothing here reads files or calls models."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from rich.tree import Tree

from contextree.cli.preview import (
    entry_kind,
    entry_preview,
    escaped,
    kind_tag,
    one_line,
    plural,
)
from contextree.compaction.prepare import NothingToCompact
from contextree.entries.js_json import js_stringify
from contextree.entries.types import entry_message
from contextree.session.folding import fold_run, linear_run
from contextree.settings.prices import ModelPrice
from contextree.store.url import session_url
from contextree.tokens.estimate import estimate_tokens

if TYPE_CHECKING:
    # Types only: importing compaction.run, the check and the listing here would load the
    # model clients (httpx) into every command that prints (issue 27: 47% of `context`).
    from contextree.compaction.prepare import CompactionPreparation
    from contextree.compaction.run import CompactionPlan
    from contextree.entries.types import StoredEntry
    from contextree.eval import EvalReport
    from contextree.session.check import CheckReport
    from contextree.session.describe import SessionDescription
    from contextree.session.listing import SessionListing, SessionSummary
    from contextree.session.tree import SessionTree, TreeNode

__all__ = [
    "check_report",
    "compaction_plan",
    "database_listing",
    "database_listing_json",
    "dry_run",
    "entry_tree",
    "info_table",
    "repair_lines",
    "session_description",
    "session_list",
    "session_listing",
]


_GUIDE = 4
"""Columns rich's tree guides take per level ("├── ")."""
_MIN_PREVIEW = 12


def _entry_label(node: TreeNode, leaf_id: str | None, on_path: set[str], room: int) -> Text:
    """One entry on one line of at most ``room`` columns: the preview is cut to fit (a
    wrapped preview made two lines of one entry at 80 columns)."""
    entry = node.entry
    raw_id = str(entry.get("id"))
    entry_id = escaped(raw_id)
    tag, style = kind_tag(entry_kind(entry))
    label = f"  #{escaped(node.label)}" if node.label else ""
    marker = "  ◀ leaf" if raw_id == leaf_id else ""
    fixed = len(entry_id) + 1 + len(tag) + 1 + len(label) + len(marker)
    preview = entry_preview(entry, max(_MIN_PREVIEW, min(72, room - fixed)))
    text = Text(no_wrap=True, overflow="ellipsis")  # a last guard when even that is too wide
    text.append(entry_id, style="ct.id")
    text.append(" ")
    text.append(tag, style=style)
    if preview:
        is_message = entry_message(entry) is not None
        text.append(" " + preview, style=None if is_message else "ct.meta")
    if label:
        text.append(label, style="ct.label")
    if marker:
        text.append(marker, style="ct.leaf")
    elif raw_id in on_path:
        text.stylize("bold", 0, len(entry_id))
    return text


def entry_tree(
    tree: SessionTree, *, fold: int = 6, title: str | None = None, width: int = 80
) -> Tree:
    """The session as a tree: linear runs flat, branches indented, long runs folded; with
    several roots, each one a top-level branch (``◆ root 2``, ``◆`` on the leaf's path).

    ``fold`` is how many entries to show at each end of a linear run; 0 shows everything.
    The leaf, compactions, branch summaries and labelled entries are never folded away.
    Each entry takes one line of the ``width`` columns (previews are cut to fit).
    """
    leaf_id = tree.leaf_id
    on_path = {str(key) for key in tree.get_branch_view().ids()} if leaf_id else set()
    root = Tree(Text(escaped(title or f"session {tree.session_id}"), style="ct.heading"))

    def add_run(target: Tree, start: TreeNode, depth: int) -> None:
        run = linear_run(start)
        last: Tree | None = None
        room = width - _GUIDE * depth
        for piece in fold_run(run, keep=fold, leaf_id=leaf_id):
            if isinstance(piece, list):
                noun = "entry" if len(piece) == 1 else "entries"
                target.add(Text(f"… {len(piece)} more {noun} …", style="ct.fold"))
            else:
                last = target.add(_entry_label(piece, leaf_id, on_path, room))
        children = run[-1].children
        if not children or last is None:
            return
        for number, child in enumerate(children, start=1):
            marker = "◆" if str(child.id) in on_path else "◇"
            branch = last.add(Text(f"{marker} branch {number}", style="ct.meta"))
            add_run(branch, child, depth + 2)

    roots = tree.get_tree()
    if len(roots) == 1:
        add_run(root, roots[0], 1)
        return root
    # Several roots (a `parentId: null` entry after others, as `navigate` to the first message
    # writes; an orphan): each is its own top-level branch, marked as forks are, never drawn
    # as if it followed the previous root's last entry.
    for number, node in enumerate(roots, start=1):
        marker = "◆" if str(node.id) in on_path else "◇"
        add_run(root.add(Text(f"{marker} root {number}", style="ct.meta")), node, 2)
    return root


def info_table(rows: Sequence[tuple[str, str]]) -> Table:
    """A two-column key/value table."""
    table = Table(show_header=False, box=None, pad_edge=False)
    table.add_column(style="ct.heading", no_wrap=True)
    table.add_column()
    for key, value in rows:
        table.add_row(key, escaped(value))  # values come from the session (ids, names, cwd)
    return table


def session_description(info: SessionDescription, *, file: str) -> Table:
    """``contextree info``: the session at a glance, one row per fact."""
    version = info.version
    if info.migrated_from:
        version = f"3 (file is v{info.migrated_from}; migrated in memory)"
    roles = ", ".join(f"{n} {role}" for role, n in info.message_roles.most_common())
    kinds = info.entry_types + Counter({"undecodable": info.undecodable})  # 0 drops out
    others = ", ".join(f"{n} {kind}" for kind, n in kinds.most_common())
    estimate = info.estimate
    rows = [
        ("file", file),
        ("session id", info.session_id),
        ("name", info.name or "-"),
        ("format version", version),
        ("cwd", info.cwd or "-"),
        ("created", info.created or "-"),
        ("entries", f"{info.entries} ({others or 'no other entries'})"),
        ("messages", roles or "none"),
        ("branches (leaves)", str(info.leaves)),
        ("leaf", info.leaf_id or "-"),
        ("model", info.model or "-"),
        ("thinking level", info.thinking_level),
        ("context", f"{plural(info.context_messages, 'message')}, ~{estimate.tokens:,} tokens"),
    ]
    if estimate.last_usage_index is not None:
        pruned = f" - {estimate.pruned_tokens:,} pruned since" if estimate.pruned_tokens else ""
        rows.append(
            (
                "",
                f"{estimate.usage_tokens:,} measured by the provider{pruned} + "
                f"{estimate.trailing_tokens:,} estimated after it",
            )
        )
    # Entry bodies are read only as far as shown here; check decodes and validates every one.
    rows.append(
        (
            "problems",
            f"{info.problems} (run contextree check)"
            if info.problems
            else "none found on load (contextree check validates every entry)",
        )
    )
    return info_table(rows)


def _size_text(size: int) -> str:
    """``812 B``, ``4.2 KB``, ``141.2 MB`` (SI units, as the docs and ``ls --si`` give them)."""
    if size < 1000:
        return f"{size} B"
    value = size / 1000
    for unit in ("KB", "MB", "GB"):
        if value < 1000 or unit == "GB":
            break
        value /= 1000
    return f"{value:.1f} {unit}"


def session_listing(listing: SessionListing, *, here: bool, width: int | None) -> RenderableType:
    """``contextree sessions``: a title naming the folders, then :func:`session_list`, or one
    line saying there is nothing (``here``: the folders of this directory were searched)."""
    where = " and ".join(str(folder) for folder in listing.folders)
    inside = "under" if listing.nested else "in"
    if not listing.sessions:
        if here and not listing.nested:
            return Text(f"No sessions for this directory yet (looked in {where}).")
        return Text(f"No session files {inside} {where}.")
    count, total = len(listing.sessions), listing.total
    shown = (
        f"{count} of {total}, newest first (--limit 0 shows all)"
        if count < total
        else f"{total}, newest first"
    )
    return session_list(
        listing.sessions,
        title=f"Sessions {inside} {where}: {shown}",
        width=width,
        # Whole paths when the files come from several folders: each says where it is.
        full_paths=listing.nested or len(listing.folders) > 1,
    )


def session_list(
    summaries: Sequence[SessionSummary],
    *,
    title: str,
    width: int | None = None,
    full_paths: bool = True,
    preview_chars: int = 60,
) -> RenderableType:
    """Session files, two lines each: modified, entries, size, name and first user message,
    then the path (``full_paths``) or file name, with the session id when the name lacks it.

    Print it with ``soft_wrap=True``: the first line of each session is cut to ``width`` here,
    while the title and paths are never cut or broken (they stay whole for copying). A file
    that is not a session shows why in place of its name and message.
    """

    def fitted(text: Text) -> Text:
        if width is not None:
            text.truncate(width, overflow="ellipsis")
        return text

    lines: list[RenderableType] = [
        Text(title, style="ct.heading"),
        fitted(
            Text(
                f"{'modified':<16}  {'entries':>9}  {'size':>9}  name · first user message",
                "ct.meta",
            )
        ),
    ]
    for summary in summaries:
        modified = summary.modified_at.strftime("%Y-%m-%d %H:%M") if summary.modified else "-"
        entries = "-" if summary.entries is None else f"{summary.entries:,}"
        line = Text(f"{modified:<16}  {entries:>9}  {_size_text(summary.size):>9}  ")
        if summary.problem is not None:
            line.append(escaped(summary.problem), style="ct.warning")
        else:
            if summary.name:
                line.append(one_line(escaped(summary.name), preview_chars), style="ct.heading")
                line.append(" · ", style="ct.meta")
            line.append(one_line(summary.first_message or "", preview_chars) or "-")
            fitted(line)
        shown = str(summary.path) if full_paths else summary.path.name
        where = Text("  " + escaped(shown), "ct.meta")
        if summary.id and summary.id not in summary.path.name:
            where.append(f"  id {escaped(summary.id)}", style="ct.id")
        lines += [line, where]
    return Group(*lines)


def check_report(report: CheckReport) -> RenderableType:
    lines: list[RenderableType] = []
    for finding in report.findings:
        where = escaped(report.source) + (f":{finding.line}" if finding.line else "")
        style = {"error": "ct.error", "warning": "ct.warning"}.get(finding.severity, "ct.meta")
        text = Text(f"{where}: ", style="ct.meta")
        text.append(f"{finding.severity}: ", style=style)
        text.append(escaped(finding.message))
        if finding.entry_id:
            text.append(f" (entry {escaped(finding.entry_id)})", style="ct.meta")
        lines.append(text)
    errors, warnings = len(report.errors), len(report.warnings)
    if errors:
        lines.append(Text(f"damaged: {errors} error(s), {warnings} warning(s)", style="ct.error"))
    else:
        lines.append(Text(f"ok: no damage found ({warnings} warning(s))", style="ct.ok"))
    return Group(*lines)


def _tokens(messages: Sequence[dict[str, Any]]) -> int:
    return sum(estimate_tokens(m) for m in messages)


def compaction_plan(
    prep: CompactionPreparation, path: Sequence[StoredEntry], *, summary_budget: int
) -> RenderableType:
    """The dry-run view of a compaction: cut point, split turn, summarized and kept."""
    first = path[prep.first_kept_entry_index]
    summarized = _tokens(prep.messages_to_summarize)
    prefix = _tokens(prep.turn_prefix_messages)
    kept = _tokens(prep.recent_messages)
    table = Table(title="Compaction plan (dry run: nothing written)", title_justify="left")
    table.add_column("", style="ct.heading")
    table.add_column("entries", justify="right")
    table.add_column("messages", justify="right")
    table.add_column("tokens (est.)", justify="right")
    history_end = prep.turn_start_index if prep.is_split_turn else prep.first_kept_entry_index
    table.add_row(
        "summarized",
        str(history_end - prep.boundary_start),
        str(len(prep.messages_to_summarize)),
        f"{summarized:,}",
    )
    if prep.is_split_turn:
        table.add_row(
            "turn prefix (summarized)",
            str(prep.first_kept_entry_index - prep.turn_start_index),
            str(len(prep.turn_prefix_messages)),
            f"{prefix:,}",
        )
    table.add_row(
        "kept verbatim",
        str(prep.boundary_end - prep.first_kept_entry_index),
        str(len(prep.recent_messages)),
        f"{kept:,}",
    )
    after = kept + summary_budget
    rows = [
        (
            "first kept entry",
            f"{prep.first_kept_entry_id} (index {prep.first_kept_entry_index}, "
            f"{entry_kind(first)}: {entry_preview(first, 50)})",
        ),
        (
            "split turn",
            f"yes, turn starts at index {prep.turn_start_index}" if prep.is_split_turn else "no",
        ),
        (
            "boundary",
            f"path index {prep.boundary_start}"
            + (" (previous compaction's first kept entry)" if prep.previous_summary else ""),
        ),
        (
            "keep budget",
            f"{prep.keep_recent_tokens:,} tokens"
            + (
                " (shrunk by measured usage)"
                if prep.keep_recent_tokens < prep.settings.keep_recent_tokens
                else ""
            ),
        ),
        ("tokens before", f"{prep.tokens_before:,}"),
        ("estimated after", f"~{after:,} (kept + summary of at most {summary_budget:,})"),
        ("previous summary", "yes (update prompt)" if prep.previous_summary else "no"),
    ]
    return Group(table, info_table(rows))


_METHOD_LABELS = {
    "hybrid": "model + recorded facts",
    "model": "model",
    "offline": "offline summarizer",
    "offline-fallback": "offline summarizer (the model failed)",
    "hook": "a hook",
    "provider": "the provider's own compaction",
}


def _nothing_to_do(skipped: NothingToCompact) -> Text:
    message = skipped.message
    # "Nothing to compact: ..." says it already; "Already compacted" needs the lead.
    return Text(f"{message}." if message.startswith("Nothing") else f"Nothing to do: {message}.")


def dry_run(plan: CompactionPlan | NothingToCompact) -> RenderableType:
    """``compact --dry-run``: the plan, or why there is nothing to do."""
    if isinstance(plan, NothingToCompact):
        return _nothing_to_do(plan)
    return compaction_plan(plan.preparation, plan.path, summary_budget=plan.summary_budget)


def compaction_outcome(outcome: Any, *, show_summary: bool) -> RenderableType:
    """Before/after table of a saved compaction, then the summary (or why there is none)."""
    if isinstance(outcome, NothingToCompact):
        return _nothing_to_do(outcome)
    prep = outcome.preparation
    result = outcome.result
    table = Table(title="Compacted", title_justify="left")
    table.add_column("", style="ct.heading")
    table.add_column("value", justify="right")
    summarized = len(prep.messages_to_summarize) + len(prep.turn_prefix_messages)
    table.add_row("messages summarized", f"{summarized:,}")
    table.add_row("messages kept verbatim", f"{len(prep.recent_messages):,}")
    table.add_row("split turn", "yes" if prep.is_split_turn else "no")
    table.add_row("tokens before", f"{result.tokens_before:,}")
    table.add_row("tokens after (est.)", f"{result.tokens_after:,}")
    table.add_row("summary by", _METHOD_LABELS.get(result.method, result.method))
    if result.windows > 1:
        table.add_row("summary windows", f"{result.windows:,}")
    table.add_row("compaction entry", str(outcome.entry.get("id")))
    table.add_row("first kept entry", result.first_kept_entry_id)
    parts: list[RenderableType] = [table]
    if outcome.dropped is not None:
        from contextree.cli.dropped_counts import dropped_summary

        parts.append(dropped_summary(outcome.dropped))
    if show_summary:
        # Imported here: rich's markdown takes 70 ms to import, for `compact --quiet` nothing.
        from rich.markdown import Markdown
        from rich.panel import Panel

        parts.append(Panel(Markdown(result.summary), title="summary", title_align="left"))
        if result.short_summary:
            parts.append(Text(result.short_summary, style="ct.meta"))
    return Group(*parts)


def prune_outcome(decision: Any, *, dry_run: bool, cost: Any = None) -> RenderableType:
    """What pruning did (or would do); with ``cost``, the dry run's cost report after it."""
    if cost is not None:
        return Group(prune_outcome(decision, dry_run=dry_run), cost_report(cost))
    held = decision.held_for_cache
    kept = f" ({held} kept for the warm prompt cache)" if held else ""
    if not decision.candidates:
        return Text(f"Nothing to prune: {decision.reason}.")
    verb = "would prune" if dry_run else "pruned"
    stale = sum(c.reason == "superseded" for c in decision.candidates)
    which = f" ({stale} superseded)" if stale else ""
    text = Text(
        f"{verb} {decision.pruned_count} tool result(s){which}, "
        f"saving ~{decision.tokens_saved:,} tokens{kept}"
    )
    if not dry_run:
        text.append("; original outputs kept in the file (prunedContent)", style="ct.meta")
    return text


def cost_report(report: Any) -> RenderableType:
    """A dry run's cost report: the next requests without and with the change."""
    table = Table(title=f"The next {report.turns} requests (est.)", title_justify="left")
    table.add_column("", style="ct.heading")
    table.add_column("without", justify="right")
    table.add_column("with", justify="right")
    for label, name in (
        ("input tokens", "input_tokens"),
        ("cache reads", "cache_read_tokens"),
        ("cache writes", "cache_write_tokens"),
    ):
        before, after = getattr(report.before, name), getattr(report.after, name)
        table.add_row(label, f"{before:,}", f"{after:,}")
    if report.priced:
        table.add_row("cost (USD)", f"${report.before.money:,.4f}", f"${report.after.money:,.4f}")
    model = f"at {report.model}'s prices: " if report.model else ""
    if report.break_even_turn is None:
        verdict = f"{model}does not pay off within {report.turns} requests"
    else:
        verdict = f"{model}pays off at request {report.break_even_turn}"
    if report.one_time_usd:
        verdict += f" (summary call ${report.one_time_usd:,.4f} included)"
    lines: list[RenderableType] = [table, Text(verdict)]
    lines.extend(Text(f"note: {note}", style="ct.meta") for note in report.notes)
    return Group(*lines)


def _setting_text(value: Any) -> str:
    if value is None:
        return "unset"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, tuple):
        return ", ".join(value)
    if isinstance(value, dict) and any(isinstance(v, ModelPrice) for v in value.values()):
        return f"{len(value)} models: " + ", ".join(sorted(value))  # the price table
    if isinstance(value, dict):
        return js_stringify(value)
    return str(value)


def settings_table(loaded: Any) -> Table:
    """Every setting: key, effective value, source."""
    from contextree.settings.schema import KEYS
    from contextree.store.masking import mask_passwords

    table = Table(title="Effective settings", title_justify="left")
    table.add_column("key", style="ct.heading", no_wrap=True)
    table.add_column("value")
    # fold, not the default ellipsis: the source (a file path) is the point of this table.
    table.add_column("from", style="ct.meta", overflow="fold")
    for key in KEYS:
        # A URL's password (remoteEndpoint, remote:URL models) is masked as in every message.
        value = mask_passwords(_setting_text(loaded.value(key)))
        table.add_row(key, value, loaded.origins[key])
    return table


def _share(kept: int, scored: int) -> str:
    return f"{kept / scored:.2f} ({kept}/{scored})" if scored else "-"


def eval_report(report: EvalReport) -> RenderableType:
    """The retention eval as a table: survival per kind at each budget, the splits, rounds."""
    budgets = report.budgets
    table = Table(
        title=f"Retention after {report.rounds} rounds ({report.model}, {report.sessions} "
        f"session{'s' if report.sessions != 1 else ''})",
        title_justify="left",
    )
    table.add_column("probes")
    for budget in budgets:
        name = "full budget" if budget.label == "full" else f"{budget.label} of original"
        table.add_column(name, justify="right")
    kinds = [budget.by_kind() for budget in budgets]
    for kind in kinds[0]:
        table.add_row(kind, *(_share(k[kind].kept, k[kind].scored) for k in kinds))
    table.add_section()
    overall = [budget.overall() for budget in budgets]
    table.add_row("all", *(_share(s.kept, s.scored) for s in overall), style="bold")
    for name, held_out in (("held-out phrasings", True), ("tuning phrasings", False)):
        splits = [budget.split(held_out) for budget in budgets]
        table.add_row(name, *(_share(s.kept, s.scored) for s in splits))
    rounds = Table(title="Per round (full budget)", title_justify="left")
    for column in ("round", "survival", "lost in this round"):
        rounds.add_column(column, justify="right")
    for number, survival, lost in report.full.per_round():
        rounds.add_row(str(number), _share(survival.kept, survival.scored), str(lost))
    kept = "values are in the context the model would see"
    if report.check == "visible_or_recalled":
        kept += ", or in what the recall tool shows for 5 hits of a search for its words"
    note = Text(
        f"A probe is scored once a compaction has folded its message away; kept when all its "
        f"{kept}.",
        style="dim",
    )
    return Group(table, rounds, note)

def repair_lines(report: Any) -> Text:
    """``check --repair``: one line per action and remaining problem, names escaped."""
    return Text("\n".join(escaped(line) for line in report.messages()))


def database_listing(location: str, found: Sequence[tuple[str, int, int]]) -> Text:
    """``sessions URL``: the sessions of a database, each as the URL that opens it."""
    where = escaped(location)
    if not found:
        return Text(f"No sessions in {where}.")
    lines = [f"Sessions in {where}: {len(found)}"]
    for name, count, size in found:
        url = escaped(session_url(location, name))
        lines.append(f"{url}  {plural(count, 'line')}, {plural(size, 'byte')}")
    return Text("\n".join(lines))


def database_listing_json(
    location: str, found: Sequence[tuple[str, int, int]]
) -> list[dict[str, Any]]:
    """``sessions URL --format json``: name, URL (percent-encoded), lines, bytes."""
    return [
        {"session": name, "url": session_url(location, name), "lines": count, "bytes": size}
        for name, count, size in found
    ]
