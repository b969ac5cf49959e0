"""Dependencies point one way (DESIGN.md "Layout"; STYLE.md habit 1).

``cli -> app -> invokers -> (runtime, engine) -> (blueprints, providers) -> memory -> config``:
every module under ``src/wardian`` is parsed with `ast` and each import — at module level,
inside a function or under ``TYPE_CHECKING``, absolute or relative, or an
``importlib.import_module("wardian....")`` with a literal name — must point at its own
layer or below. ``transcripts`` sits beside ``memory`` but imports only the base modules.
Only ``wardian.cli`` imports Typer or Rich; only ``wardian.web`` imports Starlette or uvicorn.
"""

from __future__ import annotations

import ast
from pathlib import Path

import wardian

SRC = Path(wardian.__file__).parent

# Layer of each top-level part of the package; a module may import its own layer or lower.
LAYERS: dict[str, int] = {
    "": 0,  # the package root itself (``__version__`` only)
    "config": 0, "_db": 0, "_pg": 0, "_process": 0, "_util": 0, "errors": 0, "_fs": 0,
    "oserrors": 0,
    "library": 0,  # package data (shipped blueprints); holds no logic
    "transcripts": 1, "memory": 1,
    "blueprints": 2, "providers": 2,
    "engine": 3, "runtime": 3,
    "invokers": 4,
    "app": 5,  # the application layer the CLI, MCP server and web app share
    "cli": 6, "web": 6,  # operator surfaces; web is Garden in the browser
    "mcp_server": 6,  # the agent-facing MCP surface beside the CLI
    "demo": 7, "__main__": 7,
}
BASE = {"", "config", "_db", "_pg", "_process", "_util", "errors", "_fs", "oserrors"}
UI_PACKAGES = ("typer", "rich")
WEB_PACKAGES = ("starlette", "uvicorn", "multipart", "python_multipart")

# (importing module, imported module) -> why it is allowed. Keep this short and explain
# each entry; an entry that no longer matches fails `test_allowed_list_is_current`.
# (The blueprint validator once imported the engine's action registry; its callers now pass
# the known action names in: `validate_file(..., known_actions=...)`.)
ALLOWED: dict[tuple[str, str], str] = {}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path, name: str) -> list[tuple[str, int]]:
    """Every module `path` (module `name`) imports, with its line; relative made absolute."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: list[tuple[str, int]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.extend((alias.name, node.lineno) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            found.append((target, node.lineno))
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute | ast.Name)
              and getattr(node.func, "attr", getattr(node.func, "id", "")) == "import_module"
              and node.args and isinstance(node.args[0], ast.Constant)
              and isinstance(node.args[0].value, str)):
            found.append((node.args[0].value, node.lineno))
    return found


def _part(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def _all_imports() -> list[tuple[str, str, str]]:
    """(importing module, imported module, "file:line") for every import under src/wardian."""
    return [
        (_module_name(path), target, f"{path.relative_to(SRC.parent)}:{line}")
        for path in sorted(SRC.rglob("*.py"))
        for target, line in _imports(path, _module_name(path))
    ]


def test_every_module_has_a_layer() -> None:
    unknown = {_part(_module_name(p)) for p in SRC.rglob("*.py")} - set(LAYERS)
    assert not unknown, f"add these to LAYERS in {__file__}: {sorted(unknown)}"


def test_imports_point_downward() -> None:
    offenders = []
    for source, target, where in _all_imports():
        if target != "wardian" and not target.startswith("wardian."):
            continue
        src_part, dst_part = _part(source), _part(target)
        if src_part == "transcripts":
            upward = dst_part not in BASE | {"transcripts"}
        else:
            upward = LAYERS[dst_part] > LAYERS[src_part]
        if upward and (source, target) not in ALLOWED:
            offenders.append(f"{where}: {source} imports {target}")
    assert not offenders, "DESIGN.md: dependencies point one way\n" + "\n".join(offenders)


def test_only_cli_imports_typer_or_rich() -> None:
    offenders = [
        f"{where}: {source} imports {target}"
        for source, target, where in _all_imports()
        if target.split(".")[0] in UI_PACKAGES and _part(source) != "cli"
    ]
    assert not offenders, "only wardian.cli imports Typer/Rich\n" + "\n".join(offenders)


def test_only_web_imports_the_web_stack() -> None:
    offenders = [
        f"{where}: {source} imports {target}"
        for source, target, where in _all_imports()
        if target.split(".")[0] in WEB_PACKAGES and _part(source) != "web"
    ]
    assert not offenders, "only wardian.web imports Starlette/uvicorn\n" + "\n".join(offenders)


def test_allowed_list_is_current() -> None:
    seen = {(source, target) for source, target, _ in _all_imports()}
    stale = set(ALLOWED) - seen
    assert not stale, f"remove stale ALLOWED entries: {sorted(stale)}"


def test_a_planted_upward_import_is_caught(tmp_path: Path) -> None:
    # The scan must see imports inside functions, relative imports and import_module.
    probe = tmp_path / "probe.py"
    probe.write_text("def f():\n    from ..cli import main\n    import wardian.invokers.drain\n"
                     "    importlib.import_module('wardian.runtime')\n", encoding="utf-8")
    targets = {t for t, _ in _imports(probe, "wardian.memory.probe")}
    assert {"wardian.cli", "wardian.invokers.drain", "wardian.runtime"} <= targets
