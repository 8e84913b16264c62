"""Selection axis: what enters the window (overflow runner, strategies, compaction, pruning)."""
