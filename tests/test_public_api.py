"""Every name a package exports exists, and every package's ``__all__`` is pinned here, so
``__all__`` and the real exports cannot drift and an addition to the public API is deliberate
(update :data:`EXPECTED` with it)."""

from __future__ import annotations

import importlib
import pkgutil

import pytest

import contextree

NOT_LIBRARY_API = {"contextree.cli"}
FRAMEWORKS = {
    "contextree.integrations.langchain": "langchain",
    "contextree.integrations.openai_agents": "agents",
    "contextree.integrations.pydantic_ai": "pydantic_ai",
}
"""Packages that need a framework (an extra) to import, by the framework's module."""
"""The command line is an application, not an API: it exports nothing."""

EXPECTED: dict[str, set[str]] = {
    "contextree": {
        "ContextreeError",
        "EntryNotFoundError",
        "SessionFileError",
        "SessionTree",
        "TreeNode",
        "__version__",
    },
    "contextree.branching": {
        "BranchCollection",
        "BranchPreparation",
        "BranchSummaryResult",
        "LEAF_CUSTOM_TYPE",
        "NavigationResult",
        "TreePreparation",
        "UncompactResult",
        "collect_entries_for_branch_summary",
        "generate_branch_summary",
        "navigate_tree",
        "persist_leaf",
        "prepare_branch_entries",
        "resolve_entry_id",
        "uncompact",
        "uncompact_json",
    },
    "contextree.compaction": {
        "CompactionPreparation",
        "CompactionResult",
        "CutPoint",
        "FileOps",
        "ModelSummarizer",
        "NothingToCompact",
        "OfflineSummarizer",
        "PruneDecider",
        "PruneDecision",
        "Summarizer",
        "SummaryOptions",
        "SummaryReply",
        "SummaryRequest",
        "apply_prune",
        "as_summarizer",
        "compact",
        "compact_session",
        "compute_file_lists",
        "decide_prune",
        "find_cut_point",
        "find_turn_start_index",
        "find_valid_cut_points",
        "prepare_compaction",
        "prune_session",
        "prune_tool_outputs",
        "serialize_conversation",
        "summary_model",
        "summary_options",
        "upsert_file_tags",
    },
    "contextree.compaction.offline": {
        "HandoffFacts",
        "OfflineSummarizer",
        "RECORDED_FACTS_HEADING",
        "RecordedFacts",
        "SUMMARY_KINDS",
        "SummaryKind",
        "SummaryPrompt",
        "extract_facts",
        "parse_summary_prompt",
        "record_facts",
        "render_key_facts",
    },
    "contextree.report": {
        "EventMoney",
        "ReportEvent",
        "SessionSeries",
        "TurnPoint",
        "build_series",
        "event_money",
        "series_html",
        "session_model",
    },
    "contextree.eval": {
        "DEFAULT_RATIOS",
        "PROBE_KINDS",
        "BudgetReport",
        "EvalReport",
        "EvalSession",
        "KeptCheck",
        "PlantedProbe",
        "Probe",
        "ProbeKind",
        "ProbesFileError",
        "Survival",
        "build_corpus",
        "load_probes",
        "run_eval",
        "run_sessions",
        "session_with_probes",
        "values_found",
        "visible",
    },
    "contextree.context": {
        "DROPPED_STOP_REASONS",
        "MISSING_RESULT_TEXT",
        "ModelRef",
        "ProviderView",
        "SessionContext",
        "appended_context",
        "bash_execution_to_text",
        "branch_summary_text",
        "build_context_from_path",
        "build_session_context",
        "compaction_summary_text",
        "convert_message",
        "convert_to_llm",
        "message_from_entry",
        "provider_messages",
    },
    "contextree.entries": {
        "AgentMessage",
        "CURRENT_SESSION_VERSION",
        "ContentBlock",
        "ENTRY_TYPES",
        "Entry",
        "Header",
        "JsonDict",
        "LlmMessage",
        "MESSAGE_ROLES",
        "Usage",
        "decode_object",
        "encode_line",
        "iso_now",
        "new_entry_id",
        "new_session_id",
    },
    "contextree.hooks": {
        "BEFORE_COMPACT",
        "BEFORE_TREE",
        "COMPACT",
        "COMPACTING",
        "EVENTS",
        "HookFailure",
        "HookRegistry",
        "TREE",
    },
    # The framework modules under it are imported by name (each pulls in its framework).
    "contextree.integrations": set(),
    "contextree.integrations.core": {"ManagedSession"},
    "contextree.integrations.langchain": {
        "ContextreeMiddleware",
        "MessageConversionError",
        "from_langchain",
        "from_langchain_messages",
        "to_langchain",
        "to_langchain_messages",
    },
    "contextree.integrations.openai_agents": {
        "CLEAR_MARKER",
        "POP_MARKER",
        "ContextreeSession",
        "UnsupportedItemError",
        "items_to_messages",
        "messages_to_items",
    },
    "contextree.integrations.pydantic_ai": {
        "EXTRA_KEY",
        "METADATA_KEY",
        "SessionHistory",
        "model_messages_to_pi",
        "pi_to_model_messages",
    },
    "contextree.llm": {
        "AnthropicClient",
        "AnthropicSDKClient",
        "Completion",
        "CompletionRequest",
        "DEFAULT_CONTEXT_WINDOW",
        "ErrorKind",
        "ModelClient",
        "OpenAIClient",
        "OpenAISDKClient",
        "RemoteSummaryClient",
        "ScriptedClient",
        "ToolSpec",
        "classify",
        "context_window",
        "create_client",
        "is_auth_error",
        "is_context_overflow",
        "is_overflow_text",
        "is_retryable_error",
        "make_usage",
        "parse_model_spec",
        "parse_retry_after",
        "supports_reasoning",
    },
    "contextree.runtime": {
        "AgentEvent",
        "AgentSession",
        "EVENT_TYPES",
        "EventListener",
        "FallbackClient",
        "OVERFLOW_RETRY_FAILED",
        "TurnOutcome",
        "coding_agent",
        "default_system_prompt",
    },
    "contextree.runtime.tools": {
        "BashTool",
        "CommandOutput",
        "DEFAULT_READ_LIMIT",
        "EditTool",
        "JsonSchema",
        "ReadTool",
        "RecallTool",
        "Tool",
        "ToolArguments",
        "ToolContext",
        "ToolError",
        "ToolResult",
        "WriteTool",
        "builtin_tools",
        "resolve_path",
        "run_command",
        "run_tool_call",
        "tool_result_message",
        "tool_spec",
        "validate_arguments",
    },
    "contextree.recall": {
        "Document",
        "Expansion",
        "Hit",
        "IndexState",
        "RecallIndex",
        "RecallResult",
        "SyncReport",
        "default_index_dir",
        "entry_text",
        "expand_entry",
        "expansion_json",
        "folded_entry_ids",
        "index_path",
        "open_recall_index",
        "query_terms",
        "recall",
        "recall_json",
    },
    "contextree.security": {
        "BUILTIN_PATTERNS",
        "DEFAULT_REDACTOR",
        "RedactionSettings",
        "Redactor",
        "environment_secrets",
    },
    "contextree.session": {
        "SessionTree",
        "TreeNode",
    },
    "contextree.settings": {
        "BranchSummarySettings",
        "CompactionSettings",
        "KEYS",
        "LoadedSettings",
        "PruneSettings",
        "RetrySettings",
        "Settings",
        "load_settings",
    },
    "contextree.serve": {"ServerConfig", "SummaryServer", "is_loopback"},
    "contextree.store": {
        "BadLine",
        "JsonlFileStore",
        "LoadReport",
        "MemoryStore",
        "ParsedSession",
        "Record",
        "SessionStore",
        "StoreTransaction",
        "migrate",
        "parse_session",
        "share_connections",
        "stop_sharing",
    },
    "contextree.text": {"Standout", "standout_rows"},
    "contextree.tokens": {
        "ContextEstimate",
        "IMAGE_CHARS",
        "MemoizedEstimator",
        "PiEstimator",
        "TokenEstimator",
        "Utf8Estimator",
        "calculate_context_tokens",
        "calculate_prompt_tokens",
        "estimate_context_tokens",
        "estimate_current_tokens",
        "estimate_tokens",
        "get_estimator",
        "get_last_assistant_usage",
        "get_last_assistant_usage_index",
        "js_object_entries",
        "js_stringify",
        "resolve_threshold_tokens",
        "should_compact",
        "utf16_len",
    },
    "contextree.errors": {
        "BranchSummaryError",
        "CompactionCancelledError",
        "CompactionError",
        "ContextOverflowError",
        "ContextreeError",
        "EntryNotFoundError",
        "HookError",
        "ModelError",
        "ModelHTTPError",
        "ModelResponseError",
        "ModelSpecError",
        "ModelTimeoutError",
        "ModelUnreachableError",
        "ParentCycleError",
        "SessionFileError",
        "SessionLockedError",
        "SettingsError",
        "ToolError",
        "TreeError",
        "UnsupportedVersionError",
        "cycle_text",
    },
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_every_exported_name_resolves(name: str) -> None:
    module = importlib.import_module(name)
    exported = getattr(module, "__all__", None)
    assert exported is not None, f"{name} declares no __all__"
    assert len(set(exported)) == len(exported)
    for attribute in exported:
        assert getattr(module, attribute, None) is not None, f"{name}.{attribute} is missing"


def test_the_design_api_names_exist() -> None:
    from contextree import SessionTree
    from contextree.branching import collect_entries_for_branch_summary, prepare_branch_entries
    from contextree.compaction import (
        compact,
        find_cut_point,
        prepare_compaction,
        prune_tool_outputs,
        serialize_conversation,
    )
    from contextree.context import convert_to_llm
    from contextree.runtime.agent import AgentSession
    from contextree.tokens import estimate_tokens

    for method in (
        "open",
        "in_memory",
        "append_message",
        "append_compaction",
        "branch",
        "branch_with_summary",
        "get_branch",
        "get_tree",
        "build_session_context",
    ):
        assert callable(getattr(SessionTree, method))
    assert all(
        callable(f)
        for f in (
            collect_entries_for_branch_summary,
            prepare_branch_entries,
            compact,
            find_cut_point,
            prepare_compaction,
            prune_tool_outputs,
            serialize_conversation,
            convert_to_llm,
            estimate_tokens,
            AgentSession,
        )
    )


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_the_exported_names_are_the_pinned_ones(name: str) -> None:
    framework = FRAMEWORKS.get(name)
    if framework is not None:
        pytest.importorskip(framework)  # the integration's extra is not installed
    exported = set(importlib.import_module(name).__all__)
    assert exported - EXPECTED[name] == set(), f"new in {name}.__all__: pin them in EXPECTED"
    assert EXPECTED[name] - exported == set(), f"gone from {name}.__all__"


def test_every_package_is_pinned() -> None:
    packages = {
        info.name
        for info in pkgutil.walk_packages(contextree.__path__, "contextree.")
        if info.ispkg
    }
    unpinned = packages - set(EXPECTED) - NOT_LIBRARY_API
    assert unpinned == set(), f"packages whose __all__ is not pinned in EXPECTED: {unpinned}"


def test_the_runtime_package_exports_the_agent_session() -> None:
    from contextree.runtime import AgentSession
    from contextree.runtime.agent import AgentSession as Direct

    assert AgentSession is Direct
