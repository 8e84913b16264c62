"""The names telemetry records under: GenAI semantic-convention attributes (pinned as text,
since upstream marks them incubating; a test checks them against the package), our targets'
provider names, and the effects it recognises."""

from __future__ import annotations

from typing import Final

__all__ = [
    "GEN_AI_CONVERSATION_ID",
    "GEN_AI_INPUT_MESSAGES",
    "GEN_AI_OPERATION_NAME",
    "GEN_AI_PROVIDER_NAME",
    "GEN_AI_SYSTEM_INSTRUCTIONS",
    "GEN_AI_TOOL_CALL_ARGUMENTS",
    "GEN_AI_TOOL_CALL_RESULT",
    "GEN_AI_TOOL_DEFINITIONS",
    "GEN_AI_TOOL_NAME",
    "GEN_AI_TOOL_TYPE",
    "MESSAGE_KEYS",
    "PROVIDERS",
    "SEMCONV",
    "STORE_WRITES",
    "SUMMARIZER",
    "SYSTEM_KEYS",
]

GEN_AI_PROVIDER_NAME: Final = "gen_ai.provider.name"
GEN_AI_CONVERSATION_ID: Final = "gen_ai.conversation.id"
GEN_AI_OPERATION_NAME: Final = "gen_ai.operation.name"
GEN_AI_TOOL_NAME: Final = "gen_ai.tool.name"
GEN_AI_TOOL_TYPE: Final = "gen_ai.tool.type"
GEN_AI_TOOL_CALL_ARGUMENTS: Final = "gen_ai.tool.call.arguments"
GEN_AI_TOOL_CALL_RESULT: Final = "gen_ai.tool.call.result"
GEN_AI_INPUT_MESSAGES: Final = "gen_ai.input.messages"
GEN_AI_SYSTEM_INSTRUCTIONS: Final = "gen_ai.system_instructions"
GEN_AI_TOOL_DEFINITIONS: Final = "gen_ai.tool.definitions"
SEMCONV: Final = {
    "GEN_AI_PROVIDER_NAME": GEN_AI_PROVIDER_NAME,
    "GEN_AI_CONVERSATION_ID": GEN_AI_CONVERSATION_ID,
    "GEN_AI_OPERATION_NAME": GEN_AI_OPERATION_NAME,
    "GEN_AI_TOOL_NAME": GEN_AI_TOOL_NAME,
    "GEN_AI_TOOL_TYPE": GEN_AI_TOOL_TYPE,
    "GEN_AI_TOOL_CALL_ARGUMENTS": GEN_AI_TOOL_CALL_ARGUMENTS,
    "GEN_AI_TOOL_CALL_RESULT": GEN_AI_TOOL_CALL_RESULT,
    "GEN_AI_INPUT_MESSAGES": GEN_AI_INPUT_MESSAGES,
    "GEN_AI_SYSTEM_INSTRUCTIONS": GEN_AI_SYSTEM_INSTRUCTIONS,
    "GEN_AI_TOOL_DEFINITIONS": GEN_AI_TOOL_DEFINITIONS,
}
"""The GenAI semantic-convention names used here (incubating upstream, so pinned as text; a
test checks them against `opentelemetry-semantic-conventions`)."""

PROVIDERS: Final = {
    "openai": "openai",
    "openai-responses": "openai",
    "anthropic": "anthropic",
    "gemini": "gcp.gemini",
}
"""Our targets → the semantic conventions' `gen_ai.provider.name` values."""

SUMMARIZER: Final = "compression model"
"""The `Call.what` of a summarizer call (see `selection.compaction.summary_flow`)."""

STORE_WRITES: Final = frozenset({"write", "create", "replace_if", "append", "delete"})
MESSAGE_KEYS: Final = ("messages", "input", "contents")
SYSTEM_KEYS: Final = ("system", "instructions", "system_instruction")
