"""Pin the memory core's public surface: maintenance, consolidation, the runtime, hooks and
the CLI build on these names (contracts: "What already exists"; STYLE habit 11)."""

from __future__ import annotations

import importlib

import pytest

SURFACE = {
    "wardian.memory.models": ["KINDS", "MAX_EVIDENCE_CHARS", "MAX_ID_CHARS",
                              "MAX_LOCATOR_CHARS", "MAX_PATH_CHARS", "MAX_SOURCES",
                              "MAX_SOURCE_TYPE_CHARS", "MAX_TEXT_CHARS", "Record", "Revision",
                              "Scope", "Source", "check_caps", "control_character",
                              "default_workspace"],
    "wardian.memory.store": ["MemoryStore", "SaveOutcome", "UNSET", "normalise_sources",
                             "record_from_row"],
    "wardian.memory.recall_index": ["RECALL_EXACT_POSTINGS", "RecallIndex", "Recalled"],
    "wardian.memory.schema": ["FLAG_MIGRATION", "MIGRATIONS", "flag_secret_records"],
    "wardian.memory.capabilities": ["LAUNCH_RECORD_WINDOW_S", "BadLaunch", "Capability",
                                    "CapabilityStore", "Refusal", "hash_token",
                                    "launch_row_problem", "new_token", "read_bad_launches"],
    "wardian.memory.recall": ["DEFAULT_BUDGET_CHARS", "DEFAULT_CURRENT_REVIEW_DAYS",
                              "DIRECT_RETENTION_INSTRUCTIONS", "StartupContext", "age_days",
                              "build_startup_context", "is_stale", "load_startup_context",
                              "record_line", "saved_ago"],
    "wardian.memory.loaded": ["LoadedEvent", "LoadedEvents"],
    "wardian.memory.principal": ["ENV_AGENT_ID", "ENV_CAPABILITY", "ENV_LAUNCH_ID",
                                 "ENV_MEMORY_CONTEXT", "MANAGED_ENV", "Principal",
                                 "managed_agent", "require_operator", "resolve_principal"],
    "wardian._process": ["LAUNCH_CGROUP_PREFIX", "START_TIME_TOLERANCE_S", "LaunchCgroup",
                         "Namespaces", "ProcessIdentity", "ancestors",
                         "ancestry_to", "become_subreaper", "boot_time", "current",
                         "die_with_parent",
                         "end_descendants", "end_kept", "end_tree", "identity_of", "is_alive",
                         "keep", "kept_pids", "launch_cgroup_of_self", "launcher_argv",
                         "lineage", "namespaces", "open_files"],
    "wardian.runtime.launch": ["EXIT_NOT_EXECUTABLE", "EXIT_NOT_FOUND", "CommandNotFound",
                               "Launch", "exec_managed", "prepare_launch",
                               "put_wardian_on_path", "require_owner_namespace",
                               "resolve_workspace", "run_dir"],
    "wardian.runtime.step_launch": ["StepLaunch", "end_step_launch", "hold",
                                    "prepare_step_launch"],
}

STORE_METHODS = ["resolve", "get", "history", "list", "startup_set", "startup_count", "index",
                 "count", "owner", "save", "update", "remove", "delete_agent_records",
                 "insert_in_transaction", "update_in_transaction",
                 "write_revision_in_transaction"]
INDEX_METHODS = ["recall", "recall_with_nearest", "recall_considered", "embedder",
                 "semantic_enabled", "store_vector_in_transaction",
                 "carry_vector_in_transaction", "missing_vectors", "backfill_vectors"]


@pytest.mark.parametrize("module", sorted(SURFACE))
def test_public_surface(module: str) -> None:
    mod = importlib.import_module(module)
    assert sorted(mod.__all__) == sorted(SURFACE[module])
    for name in mod.__all__:
        value = getattr(mod, name)
        assert value.__doc__ or not callable(value), f"{module}.{name} has no docstring"


def test_store_methods_are_documented() -> None:
    from wardian.memory.store import MemoryStore

    for name in STORE_METHODS:
        assert getattr(MemoryStore, name).__doc__, name


def test_index_methods_are_documented() -> None:
    from wardian.memory.recall_index import RecallIndex

    for name in INDEX_METHODS:
        assert getattr(RecallIndex, name).__doc__, name
