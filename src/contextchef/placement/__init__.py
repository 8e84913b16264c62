"""Placement axis: where things go (the sandwich, dynamic state, guardrails, cache breakpoints)."""
