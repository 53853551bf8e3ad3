"""Settings: typed values, defaults, and (later) loading from files and the environment."""

from contextree.settings.schema import (
    BranchSummarySettings,
    CompactionSettings,
    PruneSettings,
    RetrySettings,
)

__all__ = ["BranchSummarySettings", "CompactionSettings", "PruneSettings", "RetrySettings"]
