"""Selection axis: what enters the window (overflow runner, strategies, compaction)."""

from contextchef._lazy import lazy_exports

# Eager: a strategy shares its name with its module, which would shadow a lazy export (`_lazy`).
from contextchef.selection.anchored import Anchored, anchored
from contextchef.selection.background import Background, background
from contextchef.selection.server import Server, ServerCompaction, server

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (mypy reads the name)
if TYPE_CHECKING:
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

__getattr__, __dir__ = lazy_exports(
    __name__,
    globals(),
    {
        "contextchef.selection.budget": ("Budget", "BudgetConfig"),
        "contextchef.selection.compaction": (
            "CompactionPlan",
            "asummarize_history",
            "compact_history",
            "compact_messages",
            "plan_compaction",
            "summarize_history",
        ),
        "contextchef.selection.overflow": (
            "CompressEnd",
            "CompressStart",
            "Lineage",
            "OverflowConfig",
            "OverflowReport",
        ),
        "contextchef.selection.strategies": (
            "OverflowInput",
            "OverflowResult",
            "Strategy",
            "TargetProfile",
            "chain",
            "reset",
            "summarize",
        ),
    },
    renamed={"JanitorConfig": "BudgetConfig"},
)
