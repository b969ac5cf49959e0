"""Provider adapters, the model catalog and assignments (DESIGN.md "Blueprints,
runs, providers").

Public surface (each module has an ``__all__`` pinned by tests/providers/test_surface.py):

- `wardian.providers.base` — `ProviderRequest`, `ProviderResult`, `ModelInfo`,
  `ProviderOptions`, `ProviderAdapter` (one abstract method, ``run``).
- `wardian.providers.registry` — `get_adapter`, `register_adapter`, `unregister_adapter`,
  `known_providers`.
- `wardian.providers.catalog` — `ModelCatalog` (state.db component ``model_catalog``).
- `wardian.providers.assignments` — `parse_assignments`, `resolve_assignment`,
  `validate_assignments`.
- `wardian.providers.errors` — the `ProviderError` tree and the catalog usage errors.
- `wardian.providers.process` — `run_process`, `resolve_executable` (trees end with
  `wardian._process.end_tree`).

Adapters: ``builtin``, ``codex``, ``claude``, ``gemini``, ``opencode`` (CLIs) and
``openai``, ``anthropic`` (HTTP). Nothing is imported here, so importing the package is free.
"""
