"""The curated top level (issue 22, item 8): at most 70 names, and nothing it used to export
was lost: each of the 145 names `contextchef.__all__` held before is importable from a public
module, listed in that module's `__all__`."""

from __future__ import annotations

import importlib

import pytest

import contextchef

# The 145 names `contextchef.__all__` held before the curation (frozen), each with the public
# module that holds it (`contextchef` itself for a name defined in a private module that stays
# at the top).
FORMER_TOP_LEVEL: dict[str, str] = {
    "UNSET": "contextchef.memory",
    "AdapterInput": "contextchef.adapters",
    "AdapterRegistry": "contextchef.adapters",
    "Announcement": "contextchef.placement.announcements",
    "AnthropicAdapter": "contextchef.adapters",
    "AssembleContext": "contextchef.events",
    "AsyncChefPool": "contextchef.pool",
    "AsyncContextChef": "contextchef.chef",
    "AsyncInMemoryBackend": "contextchef.store.backends",
    "AsyncMemory": "contextchef.memory",
    "AsyncNamespaceView": "contextchef.store",
    "AsyncPostgresBackend": "contextchef.store.backends",
    "AsyncStorageBackend": "contextchef.store",
    "AsyncStore": "contextchef.store",
    "Budget": "contextchef.selection",
    "CacheBreakpoint": "contextchef.cache.economics",
    "CacheFinding": "contextchef.events",
    "CacheReport": "contextchef.cache.economics",
    "ChefPool": "contextchef.pool",
    "CleanupReport": "contextchef.store",
    "CompactionPlan": "contextchef.selection",
    "CompileAbortedError": "contextchef.errors",
    "CompileDone": "contextchef.payload",
    "CompileError": "contextchef.errors",
    "CompileMeta": "contextchef.payload",
    "CompileStart": "contextchef.events",
    "CompressEnd": "contextchef.selection",
    "CompressStart": "contextchef.selection",
    "ConfigError": "contextchef.errors",
    "ContextChef": "contextchef.chef",
    "ContextChefError": "contextchef.errors",
    "DynamicStateError": "contextchef.errors",
    "EntryExistsError": "contextchef.errors",
    "EntryNotFoundError": "contextchef.errors",
    "EstimateTokenizer": "contextchef.tokens",
    "EvictionPolicy": "contextchef.store",
    "FileSystemBackend": "contextchef.store",
    "ForeignDatabaseError": "contextchef.errors",
    "GeminiAdapter": "contextchef.adapters",
    "HandoffConfig": "contextchef.selection.overflow_config",
    "HistoryFix": "contextchef.payload",
    "ImportedHistory": "contextchef.adapters",
    "InMemoryBackend": "contextchef.store",
    "InvalidPathError": "contextchef.errors",
    "BudgetConfig": "contextchef.selection",
    "LayerTokens": "contextchef.payload",
    "ListedEntry": "contextchef.store",
    "LoadedSkills": "contextchef.skills",
    "Memory": "contextchef.memory",
    "MemoryArtifacts": "contextchef.memory",
    "MemoryChange": "contextchef.memory",
    "MemoryEntry": "contextchef.memory",
    "MemoryKeyNotAllowedError": "contextchef.errors",
    "MemoryRefusedError": "contextchef.errors",
    "MemoryValueTooLargeError": "contextchef.errors",
    "MemoryVetoedError": "contextchef.errors",
    "Message": "contextchef.messages",
    "MessageError": "contextchef.errors",
    "MigrationError": "contextchef.errors",
    "MissingDependencyError": "contextchef.errors",
    "NamespaceView": "contextchef.store",
    "OffloadConfig": "contextchef.selection.offload",
    "OpenAIChatAdapter": "contextchef.adapters",
    "OpenAIResponsesAdapter": "contextchef.adapters",
    "OverflowConfig": "contextchef.selection",
    "OverflowReport": "contextchef.selection",
    "Payload": "contextchef.payload",
    "PipelineInvariant": "contextchef.events",
    "PostgresBackend": "contextchef.store.backends",
    "PruneResult": "contextchef.selection.tool_plan",
    "PrunerState": "contextchef.selection.pruner",
    "PutResult": "contextchef.store",
    "SQLiteBackend": "contextchef.store.backends",
    "SchemaTooNewError": "contextchef.errors",
    "SearchHit": "contextchef.store",
    "ServerCompaction": "contextchef.selection",
    "Skill": "contextchef.skills",
    "SkillError": "contextchef.errors",
    "SkillWarning": "contextchef.skills",
    "Snapshot": "contextchef.chef",
    "SnapshotError": "contextchef.errors",
    "SnapshotTooNewError": "contextchef.errors",
    "StorageBackend": "contextchef.store",
    "Store": "contextchef.store",
    "StoreBusyError": "contextchef.errors",
    "StoreCapabilityError": "contextchef.errors",
    "StoreConflictError": "contextchef.errors",
    "StoreCorruptError": "contextchef.errors",
    "StoreError": "contextchef.errors",
    "StoreInUseError": "contextchef.errors",
    "StoreUnavailableError": "contextchef.errors",
    "StoredEntry": "contextchef.store",
    "Strategy": "contextchef.selection",
    "TargetAdapter": "contextchef.adapters",
    "Tokenizer": "contextchef.tokens",
    "TokenizerAdapter": "contextchef.tokens",
    "ToolCallCheck": "contextchef.selection.blocklist",
    "ToolCallError": "contextchef.errors",
    "ToolCollisionError": "contextchef.errors",
    "ToolDecision": "contextchef.selection.tool_plan",
    "ToolDefinition": "contextchef.adapters",
    "ToolDefinitionError": "contextchef.errors",
    "UnknownSkillError": "contextchef.errors",
    "UnknownTargetError": "contextchef.errors",
    "UnknownToolError": "contextchef.errors",
    "UnknownToolNameError": "contextchef.errors",
    "WindowExceeded": "contextchef.events",
    "adapter_registry": "contextchef.adapters",
    "ahandle_anthropic_memory": "contextchef.retrieval",
    "aload_store_skills": "contextchef.skills",
    "anchored": "contextchef.selection",
    "anthropic_memory_path": "contextchef.retrieval",
    "apublish_skill": "contextchef.skills",
    "asummarize_history": "contextchef.selection",
    "background": "contextchef.selection",
    "chain": "contextchef.selection",
    "compact_history": "contextchef.selection",
    "compact_messages": "contextchef.selection",
    "ensure_valid_history": "contextchef",
    "estimate": "contextchef.tokens",
    "estimate_object": "contextchef.tokens",
    "format_skill_listing": "contextchef.skills",
    "from_anthropic": "contextchef.adapters",
    "from_gemini": "contextchef.adapters",
    "from_openai": "contextchef.adapters",
    "from_openai_responses": "contextchef.adapters",
    "get_adapter": "contextchef.adapters",
    "get_context_tool_definition": "contextchef.retrieval",
    "get_legacy_memory_tool_definitions": "contextchef.retrieval",
    "get_new_context_tool_definition": "contextchef.retrieval",
    "group_turns": "contextchef.messages",
    "handle_anthropic_memory": "contextchef.retrieval",
    "load_skill": "contextchef.skills",
    "load_skills": "contextchef.skills",
    "load_store_skills": "contextchef.skills",
    "object_to_xml": "contextchef.placement.xml",
    "plan_compaction": "contextchef.selection",
    "publish_skill": "contextchef.skills",
    "render_skill": "contextchef.skills",
    "reset": "contextchef.selection",
    "server": "contextchef.selection",
    "summarize": "contextchef.selection",
    "summarize_history": "contextchef.selection",
    "validate_history": "contextchef.messages",
}


def test_the_top_level_is_curated() -> None:
    assert len(contextchef.__all__) <= 70
    assert contextchef.__all__ == sorted(contextchef.__all__)


def test_the_frozen_list_is_the_former_top_level() -> None:
    assert len(FORMER_TOP_LEVEL) + 1 == 145  # plus __version__
    assert set(contextchef.__all__) - {"__version__"} <= set(FORMER_TOP_LEVEL)


@pytest.mark.parametrize(("name", "module"), sorted(FORMER_TOP_LEVEL.items()))
def test_every_former_name_is_importable_from_a_public_module(name: str, module: str) -> None:
    assert not any(part.startswith("_") for part in module.split(".")), module
    holder = importlib.import_module(module)
    assert name in holder.__all__, f"{name} is not in {module}.__all__"
    value = getattr(holder, name)
    if name in contextchef.__all__:
        assert getattr(contextchef, name) is value


def test_names_left_at_the_top_are_the_same_objects_as_in_their_modules() -> None:
    for name in contextchef.__all__:
        if name != "__version__":
            module = importlib.import_module(FORMER_TOP_LEVEL[name])
            assert name in module.__all__
            assert getattr(contextchef, name) is getattr(module, name)
