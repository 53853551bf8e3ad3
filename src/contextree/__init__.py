"""contextree: keep long-running LLM agent sessions usable without losing their past.

Sessions are append-only trees of entries in pi-compatible JSONL files. Compaction folds old
history into a summary entry while recent messages stay verbatim; branch summaries capture an
abandoned branch when the user moves elsewhere in the tree.
"""

from typing import TYPE_CHECKING

from contextree.errors import ContextreeError, EntryNotFoundError, SessionFileError

if TYPE_CHECKING:
    from contextree.session.tree import SessionTree, TreeNode

__version__ = "0.1.0"

__all__ = [
    "ContextreeError",
    "EntryNotFoundError",
    "SessionFileError",
    "SessionTree",
    "TreeNode",
    "__version__",
]


def __getattr__(name: str) -> object:
    # The session layer pulls in msgspec and the context builder; load it on first use so that
    # `contextree --help` and `import contextree.errors` stay fast.
    if name in ("SessionTree", "TreeNode"):
        from contextree.session import tree

        return getattr(tree, name)
    raise AttributeError(f"module 'contextree' has no attribute {name!r}")
