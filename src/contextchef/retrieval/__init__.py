"""Retrieval axis: how the model reaches back (the `context` tool and tool dispatch)."""
