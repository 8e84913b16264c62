"""Prompt-cache economics: what a compile's payload shares with the previous one and what keeps
it cacheable.

- `economics`: the serialized payload cut into parts in request order, and the figures of
  `payload.meta.cache` (`CacheReport`);
- `ledger`: what one chef remembers of its previous compile per target, measured against the
  next (`CacheLedger`); `_part_sizes` computes part sizes fast for a cold compile;
- `audit`: `cache_audit=True`, the findings about what costs cache hits;
- `planning`: the chef's `cache=` options, per-target state, memory layers, breakpoint planning
  and the provider options passed through.
"""
