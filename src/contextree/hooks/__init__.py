"""Hook registry and runner for compaction and tree-navigation events (pi-behaviour §11)."""

from contextree.hooks.registry import (
    BEFORE_COMPACT,
    BEFORE_TREE,
    COMPACT,
    COMPACTING,
    EVENTS,
    TREE,
    HookFailure,
    HookRegistry,
)

__all__ = [
    "BEFORE_COMPACT",
    "BEFORE_TREE",
    "COMPACT",
    "COMPACTING",
    "EVENTS",
    "TREE",
    "HookFailure",
    "HookRegistry",
]
