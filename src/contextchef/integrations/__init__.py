"""Optional integrations with agent frameworks and tools; each module needs its own extra."""
