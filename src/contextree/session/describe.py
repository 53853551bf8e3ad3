"""What ``contextree info`` shows about a session, computed once: counts, model, context size.

:func:`describe_session` counts as the other commands do, so their numbers agree: the context
row counts the messages :func:`~contextree.context.convert.convert_to_llm` sends (what
``contextree context`` prints), and the token figure is
:func:`~contextree.tokens.usage.estimate_current_tokens` (measured usage, less what pruning
saved since, plus estimates after it).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from contextree.context.convert import convert_to_llm
from contextree.session.check import UNDECODABLE, count_types, parent_cycles
from contextree.tokens.usage import ContextEstimate, estimate_current_tokens

if TYPE_CHECKING:
    from contextree.session.tree import SessionTree

__all__ = ["SessionDescription", "describe_session"]


@dataclass(frozen=True, slots=True)
class SessionDescription:
    """A session at a glance (the rows of ``contextree info``)."""

    session_id: str
    name: str | None
    """The latest ``session_info`` name, else the oh-my-pi title slot's, else ``None``."""
    version: str
    """The header's format version as written in the file."""
    migrated_from: int | None
    """The version the file was migrated from in memory, ``None`` when it is v3."""
    cwd: str | None
    created: str | None
    entries: int
    """Entries in the file (the header and unreadable lines are not entries)."""
    entry_types: Counter[str]
    """Entries per type, ``message`` entries left out (see :attr:`message_roles`)."""
    message_roles: Counter[str]
    """``message`` entries per role."""
    undecodable: int
    """``message`` entries whose body cannot be decoded."""
    leaves: int
    leaf_id: str | None
    model: str | None
    """``provider/modelId`` of the context at the leaf."""
    thinking_level: str
    context_messages: int
    """Messages sent to the model at the leaf, as ``contextree context`` counts them."""
    estimate: ContextEstimate
    """The context's size in tokens at the leaf."""
    load_problems: int
    """Lines the load report names (corrupt lines, invalid UTF-8, ...)."""
    cycle_entries: int = 0
    """Entries on a parent cycle (``contextree check`` names them)."""

    @property
    def problems(self) -> int:
        """What ``contextree check`` should look at: load problems, undecodable bodies and
        entries on parent cycles."""
        return self.load_problems + self.undecodable + self.cycle_entries

    def to_json(self) -> dict[str, Any]:
        """``contextree info --format json`` (docs/cli-json.md)."""
        estimate = self.estimate
        return {
            "sessionId": self.session_id,
            "name": self.name,
            "version": self.version,
            "migratedFrom": self.migrated_from,
            "cwd": self.cwd,
            "created": self.created,
            "entries": self.entries,
            "entryTypes": dict(self.entry_types),
            "messageRoles": dict(self.message_roles),
            "undecodable": self.undecodable,
            "leaves": self.leaves,
            "leafId": self.leaf_id,
            "model": self.model,
            "thinkingLevel": self.thinking_level,
            "context": {
                "messages": self.context_messages,
                "tokens": estimate.tokens,
                "measuredTokens": estimate.usage_tokens,
                "estimatedTokens": estimate.trailing_tokens,
                "prunedTokens": estimate.pruned_tokens,
            },
            "problems": self.problems,
        }


def describe_session(tree: SessionTree) -> SessionDescription:
    """Describe ``tree`` at its leaf. Entry bodies are decoded only as far as the counts and the
    context need (``contextree check`` decodes and validates every one)."""
    counts = count_types(tree)
    context = tree.build_session_context()
    names = [r.entry.get("name") for r in tree.records() if r.type == "session_info"]
    name = names[-1] if names and names[-1] else tree.title
    roles: Counter[str] = Counter()
    types: Counter[str] = Counter()
    for key, count in counts.items():
        if key.startswith("message:"):
            roles[key.split(":", 1)[1]] = count
        elif key != UNDECODABLE:
            types[key] = count
    header = tree.header
    cwd, created = header.get("cwd"), header.get("timestamp")
    return SessionDescription(
        session_id=tree.session_id,
        name=str(name) if name else None,
        version=str(header.get("version")),
        migrated_from=tree.report.migrated_from,
        cwd=str(cwd) if cwd is not None else None,
        created=str(created) if created is not None else None,
        entries=len(tree),
        entry_types=types,
        message_roles=roles,
        undecodable=counts[UNDECODABLE],
        leaves=len(tree.leaves()),
        leaf_id=tree.leaf_id,
        model=context.model.spec if context.model else None,
        thinking_level=context.thinking_level,
        # A `!!` command's output and other messages kept out of the context are not sent.
        context_messages=len(convert_to_llm(context.messages)),
        estimate=estimate_current_tokens(context.messages),
        load_problems=len(tree.report.messages()),
        cycle_entries=sum(len(cycle) for cycle in parent_cycles(tree)),
    )
