"""Pin the public surface of wardian.providers (STYLE.md habit 11)."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

SURFACE = {
    "wardian.providers.base": ["ModelInfo", "ProviderAdapter", "ProviderOptions",
                               "ProviderRequest", "ProviderResult"],
    "wardian.providers.registry": ["get_adapter", "known_providers",
                                   "register_adapter", "unregister_adapter"],
    "wardian.providers.catalog": ["DISCOVERY_TIMEOUT_S", "CatalogEntry", "CatalogRefreshFailed",
                                  "ModelCatalog"],
    "wardian.providers.assignments": ["AgentAssignment", "AgentLookup", "Assignment",
                                      "TemporaryProviderAssignment", "parse_assignments",
                                      "resolve_assignment", "validate_assignments"],
    "wardian.providers.process": ["MAX_ARG_PROMPT_BYTES", "MAX_OUTPUT_BYTES", "ProcessResult",
                                  "fits_argv", "resolve_executable",
                                  "run_process"],
    "wardian.providers.builtin": ["BUILTIN_EFFORTS", "BUILTIN_MODEL", "builtin_output_schemas",
                                  "register_builtin_answer", "unregister_builtin_answer"],
    "wardian.providers.builtin.answers": ["BUILTIN_ANSWERS", "builtin_answer",
                                          "builtin_output_schemas", "register_builtin_answer",
                                          "unregister_builtin_answer"],
    "wardian.providers.errors": [
        "CatalogNotRefreshed", "DiscoveryFailed", "EffortLowered", "EffortRejected",
        "MissingCredentials", "ModelMismatch", "ModelRerouted", "ModelUnavailable",
        "ModelUnverified", "OutputInvalid", "OutputUnsupported", "ProviderCancelled",
        "ProviderError",
        "ProviderNotInstalled", "ProviderTimeout", "QuotaExhausted", "RateLimited",
        "SelectionMismatch", "UnknownModel", "UnknownProvider", "UnsupportedEffort"],
}


@pytest.mark.parametrize("module", sorted(SURFACE))
def test_public_surface_is_pinned(module: str) -> None:
    mod = importlib.import_module(module)
    assert sorted(mod.__all__) == sorted(SURFACE[module])
    for name in mod.__all__:
        assert getattr(mod, name).__doc__ or not callable(getattr(mod, name)), name


def test_every_provider_error_has_its_own_code() -> None:
    from wardian.providers import errors

    classes = [getattr(errors, n) for n in errors.__all__
               if issubclass(getattr(errors, n), errors.ProviderError)]
    codes = [c.code for c in classes]
    assert len(codes) == len(set(codes))
    assert all(c.exit_code == 1 for c in classes)


def test_importing_the_cli_module_does_not_import_provider_machinery() -> None:
    code = ("import sys, wardian.cli.agent_models; "
            "print(any(m.startswith(('wardian.providers', 'httpx', 'psutil')) "
            "for m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "False"
