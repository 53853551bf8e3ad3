"""The session tree: entries, leaf, appends, branches and labels."""

from contextree.session.tree import SessionTree, TreeNode

__all__ = ["SessionTree", "TreeNode"]
