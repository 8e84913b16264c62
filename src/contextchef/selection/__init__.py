"""Selection axis: what enters the window (overflow runner, strategies, compaction)."""

from contextchef._renamed import deprecated_names
from contextchef.selection.anchored import Anchored, anchored
from contextchef.selection.background import Background, background
from contextchef.selection.budget import Budget, BudgetConfig
from contextchef.selection.compaction import (
    CompactionPlan,
    asummarize_history,
    compact_history,
    compact_messages,
    plan_compaction,
    summarize_history,
)
from contextchef.selection.overflow import (
    CompressEnd,
    CompressStart,
    Lineage,
    OverflowConfig,
    OverflowReport,
)
from contextchef.selection.server import Server, ServerCompaction, server
from contextchef.selection.strategies import (
    OverflowInput,
    OverflowResult,
    Strategy,
    TargetProfile,
    chain,
    reset,
    summarize,
)

__all__ = [
    "Anchored",
    "Background",
    "Budget",
    "BudgetConfig",
    "CompactionPlan",
    "CompressEnd",
    "CompressStart",
    "Lineage",
    "OverflowConfig",
    "OverflowInput",
    "OverflowReport",
    "OverflowResult",
    "Server",
    "ServerCompaction",
    "Strategy",
    "TargetProfile",
    "anchored",
    "asummarize_history",
    "background",
    "chain",
    "compact_history",
    "compact_messages",
    "plan_compaction",
    "reset",
    "server",
    "summarize",
    "summarize_history",
]

__getattr__ = deprecated_names(
    "contextchef.selection", {"JanitorConfig": ("BudgetConfig", BudgetConfig)}
)
