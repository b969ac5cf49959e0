"""Pin the public surface other packages build on (contracts: Engine interface)."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

SURFACE = {
    "wardian.engine.runs": ["FINAL_STATUSES", "LEASE_EXPIRED", "REDACTED", "RUN_STATUSES",
                            "LeaseLost", "OutputRef", "PathPart", "Run", "RunStore",
                            "StepAttempt", "lease_seconds", "read_running_runs", "value_at"],
    "wardian.engine.executor": ["Redactor", "execute_run", "resolve_inputs", "resume_run"],
    "wardian.engine.actions": ["ActionContext", "OutputStorage",
                               "action_step_refs", "actions_accepting_skipped",
                               "get_action", "known_actions", "output_storage",
                               "register_action",
                               "unregister_action"],
    "wardian.engine.assignments": ["agent_selection", "check_assignments",
                                   "parse_assignments_json",
                                   "resolve_selection", "unanswerable_outputs"],
    "wardian.engine.manual": ["PreparedRun", "prepare_manual_run", "run_log_path",
                              "spawn_detached"],
    "wardian.blueprints.errors": ["BlueprintError", "BlueprintInvalid", "BlueprintSyntaxError",
                                  "Problem", "format_path", "nearest"],
    "wardian.blueprints.validate": ["FileReport", "LoadedBlueprint",
                                    "load_blueprint", "resolve_output_ref",
                                    "validate_file", "validate_paths"],
    "wardian.blueprints.template_checks": ["TemplateChecker"],
    "wardian.blueprints.skip_checks": ["OutputRead", "guarded_steps",
                                       "skipped_output_warnings", "step_field"],
    "wardian.blueprints.partial": ["AnyName", "hidden_model_errors", "partial_blueprint"],
    "wardian.blueprints.output_schemas": ["OutputCheck", "OutputSchema",
                                          "check_json_schema", "get_output_schema",
                                          "json_path", "known_output_schemas",
                                          "plugin_errors", "register_output_schema",
                                          "standard_json_schema",
                                          "unregister_output_schema"],
    "wardian.blueprints.library": ["MANIFEST_NAME", "LibraryEntry", "find_blueprint",
                                   "init_library", "list_library", "shipped_library_dir"],
}


@pytest.mark.parametrize("module", sorted(SURFACE))
def test_public_surface(module: str) -> None:
    mod = importlib.import_module(module)
    assert sorted(mod.__all__) == sorted(SURFACE[module])
    for name in mod.__all__:
        assert getattr(mod, name).__doc__ or not callable(getattr(mod, name)), name


def test_cli_modules_do_not_import_heavy_libraries() -> None:
    code = ("import sys; import wardian.cli.blueprint, wardian.cli.library, "
            "wardian.cli.automation; "
            "print(','.join(m for m in ('jinja2', 'yaml', 'pydantic', 'jsonschema') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=120)
    assert out.stdout.strip() == ""


SEAM_MODULES = ["wardian.engine.executor", "wardian.engine.runs", "wardian.engine.manual",
                "wardian.engine.assignments", "wardian.invokers.drain",
                "wardian.invokers.slots"]
SEAM_NAMES = {"loaded", "blueprint", "step", "adapter", "result", "outcome", "store", "runs",
              "run"}
"""Parameters that carry our own types across the executor/drain boundary (issue 13)."""


@pytest.mark.parametrize("module", SEAM_MODULES)
def test_the_executor_and_drain_seams_are_typed(module: str) -> None:
    # Issue 13 "typed seams": LoadedBlueprint, Step, ProviderAdapter, ProviderResult and
    # RunStore are named in signatures, never `Any`; our own objects are read as typed
    # attributes, never with getattr/hasattr, and no signature is sniffed.
    import ast
    import inspect

    source = inspect.getsource(importlib.import_module(module))
    for needle in ("getattr(", "hasattr(", "inspect.signature"):
        assert needle not in source, f"{module}: {needle}"
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            args = [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]
            for arg in args:
                if arg.arg in SEAM_NAMES and isinstance(arg.annotation, ast.Name):
                    assert arg.annotation.id != "Any", f"{module}.{node.name}({arg.arg}: Any)"
            if node.name in ("_load", "_make_request", "_call_role", "run_now"):
                assert not (isinstance(node.returns, ast.Name) and node.returns.id == "Any")
