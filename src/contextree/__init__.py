"""contextree: keep long-running LLM agent sessions usable without losing their past.

Sessions are append-only trees of entries in pi-compatible JSONL files. Compaction folds old
history into a summary entry while recent messages stay verbatim; branch summaries capture an
abandoned branch when the user moves elsewhere in the tree.
"""

from contextree.errors import ContextreeError, EntryNotFoundError, SessionFileError
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
