"""Dependencies point one way (DESIGN.md "Layout"; STYLE.md habit 1).

``cli -> app -> invokers -> (runtime, engine) -> (blueprints, providers) -> memory -> config``:
every module under ``src/wardian`` is parsed with `ast` and each import — at module level,
inside a function or under ``TYPE_CHECKING``, absolute or relative, or an
``importlib.import_module("wardian....")`` with a literal name — must point at its own
layer or below. ``transcripts`` sits beside ``memory`` but imports only the base modules.
Only ``wardian.cli`` imports Typer or Rich; only ``wardian.web`` imports Starlette or uvicorn.
The surfaces (cli, web, mcp_server) go further: they import only ``wardian.app``, their own
package and the base modules (issue 13).

Two ways around that order are closed too: a string constant naming a module of the
package (``"wardian.invokers.drain"``: an import the scan above cannot see), and SQL in one
part naming a table another part creates (a store's tables are read through its functions).
And each backend owns its SQL: outside the database modules nothing compares a backend's
name (``db.dialect == "postgres"``); it asks ``db.backend`` (`wardian._backend`) instead.
And the entry points open the databases: a module below them opens no more than it still
did (`OPENS_LEFT`, which only shrinks), so a new open below an entry point fails.
"""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

import wardian

SRC = Path(wardian.__file__).parent

# Layer of each top-level part of the package; a module may import its own layer or lower.
LAYERS: dict[str, int] = {
    "": 0,  # the package root itself (``__version__`` only)
    "config": 0, "_db": 0, "_lock": 0, "_pg": 0, "_pg_coord": 0, "_process": 0, "_util": 0,
    "_backend": 0, "errors": 0, "_fs": 0, "oserrors": 0, "_jsonc": 0, "_argv": 0,
    "library": 0,  # package data (shipped blueprints); holds no logic
    "transcripts": 1, "memory": 1,
    "blueprints": 2, "providers": 2,
    "curator": 2,  # the builtin memory curator; the builtin provider adapter calls it
    "engine": 3, "runtime": 3,
    "invokers": 4,
    "app": 5,  # the application layer the CLI, MCP server and web app share
    "cli": 6, "web": 6,  # operator surfaces; web is Garden in the browser
    "mcp_server": 6,  # the agent-facing MCP surface beside the CLI
    "demo": 7, "__main__": 7,
    "plugins": 0,  # the plugin registry: imports nothing of Wardian but the built-in plugin
    "builtin_plugin": 7,  # Wardian's own plugin: names every part, lazily
}
BASE = {"", "config", "plugins", "_backend",
        "_db", "_lock", "_pg", "_pg_coord", "_process", "_util", "errors", "_fs",
        "oserrors", "_jsonc", "_argv"}
UI_PACKAGES = ("typer", "rich")
WEB_PACKAGES = ("starlette", "uvicorn", "multipart", "python_multipart")

# (importing module, imported module) -> why it is allowed. Keep this short and explain
# each entry; an entry that no longer matches fails `test_allowed_list_is_current`.
# (The blueprint validator once imported the engine's action registry; its callers now pass
# the known action names in: `validate_file(..., known_actions=...)`.)
ALLOWED: dict[tuple[str, str], str] = {
    ("wardian.plugins", "wardian"):
        "imports the built-in plugin (wardian.builtin_plugin), called first, by module, so "
        "a checkout whose installed "
        "metadata predates the wardian.plugins entry point still has its built-ins; every "
        "other registration comes through entry points (docs/decisions/plugins.md)",
}


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


# --- no module paths in strings -----------------------------------------------------------

# (module, string) -> why a string there must name a module. Each is the argv of a fresh
# interpreter that another program starts, where no import can stand in for the name.
ALLOWED_STRINGS: dict[tuple[str, str], str] = {
    ("wardian.runtime.hook_install",
     "import sys; from wardian.runtime.hooks import main; sys.exit(main())"):
        "the hook command written into a host's settings file (Claude Code, Codex, Gemini "
        "CLI run it); importing only the hook keeps each hook call fast",
    ("wardian.runtime.hook_install", "wardian.runtime.hooks"):
        "recognises the hook commands Wardian installed in a host's settings file",
    ("wardian._process",
     "import sys; from wardian.runtime.launcher import main; sys.exit(main(sys.argv[1:]))"):
        "the one launcher every small program starts through (the provider supervisor, an "
        "agent step's holder, `agent launch`'s provider shim; its own `-c`)",
    ("wardian.demo", "wardian.demo"): "the demo re-runs itself with `python -m` in a child",
    ("wardian.plugins", "wardian.plugins"):
        "the entry-point group's name, which is also the name of its module",
    ("wardian.demo", "python -m wardian.demo"): "the demo's own usage line",
}

_DOTTED = re.compile(r"\bwardian(?:\.[A-Za-z_][A-Za-z0-9_]*)+")


def _names_a_module(dotted: str) -> bool:
    """Whether `dotted` (``wardian.x.y...``) starts with the path of a module or package."""
    parts = dotted.split(".")[1:]
    for end in range(len(parts), 0, -1):
        base = SRC.joinpath(*parts[:end])
        if base.with_suffix(".py").is_file() or (base / "__init__.py").is_file():
            return True
    return False


def _docstrings(tree: ast.AST) -> set[int]:
    """ids of the string constants that are docstrings (module, class, function, attribute)."""
    return {id(node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)}


def _module_paths_in_strings(path: Path) -> list[tuple[str, int]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docs = _docstrings(tree)
    return [(node.value, node.lineno) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str)
            and id(node) not in docs
            and any(_names_a_module(m.group(0)) for m in _DOTTED.finditer(node.value))]


def test_no_module_paths_in_strings() -> None:
    offenders = []
    seen: set[tuple[str, str]] = set()
    for path in sorted(SRC.rglob("*.py")):
        name = _module_name(path)
        for text, line in _module_paths_in_strings(path):
            seen.add((name, text))
            if (name, text) not in ALLOWED_STRINGS:
                offenders.append(f"{path.relative_to(SRC.parent)}:{line}: {text[:80]!r}")
    assert not offenders, ("DESIGN.md: no module paths in strings (import the callable, or "
                           "register it)\n" + "\n".join(offenders))
    stale = set(ALLOWED_STRINGS) - seen
    assert not stale, f"remove stale ALLOWED_STRINGS entries: {sorted(stale)}"


def test_a_planted_module_path_string_is_caught(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text('"""Docstrings may say wardian.invokers.drain."""\n'
                     'WORKER = "from wardian.invokers.drain import worker_main"\n'
                     'GROUPS = {"x": "wardian.cli.agent"}\nSCHEMA = "wardian.trial/v1"\n',
                     encoding="utf-8")
    found = [text for text, _ in _module_paths_in_strings(probe)]
    assert found == ["from wardian.invokers.drain import worker_main", "wardian.cli.agent"]


# --- no SQL on another component's tables -------------------------------------------------

_CREATE = re.compile(
    r"\bCREATE\s+(?:VIRTUAL\s+)?TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?([A-Za-z_]\w*)", re.I)
_TABLE_REF = re.compile(
    r"\b(?:FROM|JOIN|INTO|UPDATE|TABLE|table_info\s*\()\s*([A-Za-z_]\w*)", re.I)


@functools.cache
def _strings(path: Path) -> list[tuple[str, int]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [(node.value, node.lineno) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str)]


def _table_owners() -> dict[str, str]:
    """Table -> the part of the package whose migrations create it."""
    owners: dict[str, str] = {}
    for path in sorted(SRC.rglob("*.py")):
        for text, _ in _strings(path):
            for match in _CREATE.finditer(text):
                owners.setdefault(match.group(1), _part(_module_name(path)))
    return owners


def _foreign_sql(path: Path, owners: dict[str, str], part: str | None = None) -> list[str]:
    """Every table of another part that SQL in `path` (of part `part`, else its own) names."""
    part = _part(_module_name(path)) if part is None else part
    found = []
    for text, line in _strings(path):
        for match in _TABLE_REF.finditer(text):
            owner = owners.get(match.group(1))
            if owner is not None and owner != part:
                found.append(f"{path.name}:{line}: {part or 'wardian'} "
                             f"names {match.group(1)} (a table of {owner})")
    return found


def test_no_sql_on_another_components_tables() -> None:
    owners = _table_owners()
    assert {"records", "runs", "invokers", "agents", "settings"} <= set(owners)
    offenders = [hit for path in sorted(SRC.rglob("*.py")) for hit in _foreign_sql(path, owners)]
    assert not offenders, ("DESIGN.md: no SQL on another component's tables (ask the owning "
                           "store)\n" + "\n".join(offenders))


def test_a_planted_foreign_query_is_caught(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text('Q = "SELECT 1 FROM invokers WHERE enabled = 1"\n'
                     'OWN = "SELECT * FROM session_events"\n', encoding="utf-8")
    hits = _foreign_sql(probe, _table_owners(), part="runtime")
    assert len(hits) == 1 and "runtime names invokers (a table of invokers)" in hits[0], hits


# --- surfaces call only the application layer ---------------------------------------------

# The surfaces (cli, web, mcp_server) reach the rest of the package only through
# ``wardian.app`` (issue 13: "the CLI and the web/MCP surfaces call only it"): every module
# under them imports only ``wardian.app.*``, its own package and these base modules. Types a
# surface renders are re-exported by the app module that returns them.
SURFACES = ("cli", "web", "mcp_server")
SURFACE_BASE = {"", "errors", "config", "_util", "_fs", "oserrors", "_process", "_lock", "_argv",
                "plugins"}  # the root group lists the command groups every plugin registered

# (surface module, imported module) -> why it must import around ``wardian.app``. Only one
# surface starting another in this process belongs here: the app layer sits below the
# surfaces, so it cannot hand one to the other. Keep it short; an entry that no longer
# matches fails the test.
SURFACE_CROSSINGS: dict[tuple[str, str], str] = {
    ("wardian.cli.garden", "wardian.web.server"):
        "`wardian garden serve` starts the web surface (Starlette loads only for it)",
    ("wardian.cli.mcp", "wardian.mcp_server.server"):
        "`wardian mcp serve` runs the MCP surface over stdio (the mcp SDK loads only for it)",
}


def _outside_app(source: str, target: str) -> bool:
    """Whether surface module `source` importing `target` goes around ``wardian.app``."""
    if target != "wardian" and not target.startswith("wardian."):
        return False
    return (_part(target) not in SURFACE_BASE | {"app", _part(source)}
            and (source, target) not in SURFACE_CROSSINGS)


def test_surfaces_import_only_the_app_layer() -> None:
    offenders = [f"{where}: {source} imports {target}"
                 for source, target, where in _all_imports()
                 if _part(source) in SURFACES and _outside_app(source, target)]
    assert not offenders, ("surfaces call only wardian.app (add or extend a service "
                           "function in src/wardian/app/)\n" + "\n".join(offenders))
    seen = {(source, target) for source, target, _ in _all_imports()}
    stale = set(SURFACE_CROSSINGS) - seen
    assert not stale, f"remove stale SURFACE_CROSSINGS entries: {sorted(stale)}"


def test_the_surface_rule_sees_every_surface() -> None:
    # A surface moved or renamed out of these packages would leave the rule silently.
    checked = {_module_name(p) for p in SRC.rglob("*.py") if _part(_module_name(p)) in SURFACES}
    assert {"wardian.cli.main", "wardian.cli.hot", "wardian.web.app",
            "wardian.mcp_server.server"} <= checked
    assert all(_part(s) in SURFACES for s, _ in SURFACE_CROSSINGS)


def test_a_planted_surface_import_around_the_app_is_caught(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text("from wardian.app.runs import get_run\nfrom wardian.cli._common import "
                     "stdout\nfrom wardian.errors import UsageError\n\ndef f():\n"
                     "    from wardian.engine.runs import RunStore\n"
                     "    from wardian.web import app\n", encoding="utf-8")
    caught = [t for t, _ in _imports(probe, "wardian.cli.probe")
              if _outside_app("wardian.cli.probe", t)]
    assert caught == ["wardian.engine.runs", "wardian.web"]


def test_type_only_imports_around_the_app_are_caught_too(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                     "    from wardian.memory.models import Record\n"
                     "def f():\n    from wardian.app.garden import find_record\n"
                     "    from wardian.errors import UsageError\n    from . import _common\n"
                     "    from wardian.runtime.agents import AgentRegistry\n", encoding="utf-8")
    found = [t for t, _ in _imports(probe, "wardian.cli.probe")
             if _outside_app("wardian.cli.probe", t)]
    assert found == ["wardian.memory.models", "wardian.runtime.agents"], found


# --- each backend owns its SQL ------------------------------------------------------------

# The modules that choose per backend by its name: the database objects themselves.
DATABASE_MODULES = {"wardian._db", "wardian._pg", "wardian._backend", "wardian.memory.db"}

# module -> why it still compares the backend's name. An entry that no longer matches fails.
DIALECT_EXCEPTIONS: dict[str, str] = {
    "wardian.memory.recall_index":
        "recall's ranking differs per backend and is being reworked; its branches move to "
        "the full-text modules (wardian.memory.fulltext_*) with that work",
}


def _dialect_comparisons(path: Path) -> list[int]:
    """Lines of `path` comparing a ``dialect`` (name or attribute) with anything."""
    def is_dialect(node: ast.AST) -> bool:
        return (node.id if isinstance(node, ast.Name) else getattr(node, "attr", "")) == "dialect"

    return sorted(node.lineno for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
            if isinstance(node, ast.Compare)
            and any(is_dialect(side) for side in (node.left, *node.comparators)))


def test_only_database_modules_compare_the_backend_name() -> None:
    found = {_module_name(p): lines for p in sorted(SRC.rglob("*.py"))
             if _module_name(p) not in DATABASE_MODULES and (lines := _dialect_comparisons(p))}
    offenders = [f"{module}: lines {lines}" for module, lines in found.items()
                 if module not in DIALECT_EXCEPTIONS]
    assert not offenders, ("compare no backend name outside the database modules: ask "
                           "db.backend (wardian._backend) or add what differs there\n"
                           + "\n".join(offenders))
    stale = set(DIALECT_EXCEPTIONS) - set(found)
    assert not stale, f"no longer compares the backend name; drop from DIALECT_EXCEPTIONS: {stale}"


def test_a_planted_dialect_comparison_is_caught(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text('def f(db, dialect):\n'
                     '    a = db.dialect == "postgres"\n'
                     '    if "sqlite" != dialect:\n        pass\n'
                     '    b = db.conn.dialect in ("postgres",)\n'
                     '    return db.backend.shared_across_machines, {"sqlite": 1}[db.dialect]\n',
                     encoding="utf-8")
    assert _dialect_comparisons(probe) == [2, 3, 5]


# Each backend raises its own driver's errors, and code above the database layer holds a
# `wardian._db.Connection`: outside these modules nothing names sqlite3's connection or
# error classes (it asks ``db.backend.IntegrityError`` and the like, or `SQLITE` for a
# file that is SQLite whatever the configured backend is).
SQLITE_MODULES: dict[str, str] = {
    "wardian._db": "the SQLite connections themselves (connect, atomic, migrations)",
    "wardian._backend": "`Backend` is SQLite: its error classes are sqlite3's",
    "wardian.memory.fulltext_sqlite": "FTS5's half of the full-text pair, SQLite only",
    "wardian.transcripts.opencode": "reads OpenCode's own SQLite file, not a Wardian store",
}
_SQLITE_NAMES = re.compile(r"^(Connection|Cursor|Row|Error|[A-Za-z]+Error)$")


def _sqlite_names(path: Path) -> list[int]:
    """Lines naming ``sqlite3.Connection``, ``sqlite3.Row`` or one of sqlite3's errors."""
    return sorted({node.lineno for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                   if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                   and node.value.id == "sqlite3" and _SQLITE_NAMES.match(node.attr)})


def test_only_sqlite_modules_name_sqlite3_connections_or_errors() -> None:
    found = {_module_name(p): lines for p in sorted(SRC.rglob("*.py"))
             if (lines := _sqlite_names(p))}
    offenders = [f"{module}: lines {lines}" for module, lines in found.items()
                 if module not in SQLITE_MODULES]
    assert not offenders, ("name no sqlite3 connection or error class outside the SQLite "
                           "modules: annotate wardian._db.Connection, catch "
                           "db.backend.IntegrityError (OperationalError, Error)\n"
                           + "\n".join(offenders))
    stale = set(SQLITE_MODULES) - set(found)
    assert not stale, f"no longer names sqlite3's classes; drop from SQLITE_MODULES: {stale}"


def test_a_planted_sqlite3_name_is_caught(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text("import sqlite3\n"
                     "def f(conn: sqlite3.Connection) -> None:\n"
                     "    try:\n        conn.execute('SELECT 1')\n"
                     "    except sqlite3.IntegrityError:\n        pass\n"
                     "    sqlite3.complete_statement('x'); sqlite3.connect(':memory:')\n"
                     "    return isinstance(conn, sqlite3.Error), conn.backend.Error\n",
                     encoding="utf-8")
    assert _sqlite_names(probe) == [2, 5, 8]
# --- an explicit unit of work: entry points open the databases --------------------------

# The entry points, which open ``state.db`` / ``memory.db`` for their unit of work and pass
# the open databases down (docs/decisions/unit-of-work.md): the surfaces, and the app
# layer's openers they call.
OPENING_PARTS = {"cli", "web", "mcp_server"}
OPENING_MODULES: dict[str, str] = {
    "wardian.app.databases": "names the openers for the surfaces",
    "wardian.config": "defines open_state_db",
    "wardian.memory.db": "defines open_memory_db",
}

# module -> opens it still has below an entry point. These are being moved up to their
# entry points; a count may only go down (lower it when it does, the test says so).
OPENS_LEFT: dict[str, int] = {
    "wardian.app.agent_memory": 4,
    "wardian.app.consolidation": 1,
    "wardian.app.consolidation_actions": 2,
    "wardian.app.trial": 2,
    "wardian.engine.assignments": 1,
    "wardian.engine.executor": 1,
    "wardian.engine.manual": 1,
    "wardian.invokers.daemon": 3,
    "wardian.invokers.drain": 3,
    "wardian.memory.maintenance.service": 4,
    "wardian.memory.principal": 2,
    "wardian.providers.anthropic": 1,
    "wardian.providers.assignments": 1,
    "wardian.providers.openai": 1,
    "wardian.runtime.hooks": 2,
    "wardian.runtime.launch": 3,
    "wardian.runtime.provider_launch": 1,
    "wardian.runtime.recovery": 1,
    "wardian.runtime.session_events": 1,
    "wardian.runtime.step_launch": 3,
}

_OPENERS = {"open_state_db", "open_memory_db"}
_DATABASES = {"StateDB", "MemoryDB", "Database"}


def _opens(path: Path) -> list[int]:
    """Lines of `path` that open a database: ``open_state_db()`` / ``open_memory_db()``
    (bare or as an attribute) or ``StateDB|MemoryDB|Database.open|open_at(...)``."""
    def opens(node: ast.Call) -> bool:
        func = node.func
        name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
        return name in _OPENERS or (
            name in ("open", "open_at") and isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Name) and func.value.id in _DATABASES)

    return sorted(node.lineno for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                  if isinstance(node, ast.Call) and opens(node))


def _opens_below_entry_points() -> dict[str, list[int]]:
    found = {}
    for path in sorted(SRC.rglob("*.py")):
        module = _module_name(path)
        if (_part(module) in OPENING_PARTS or module in OPENING_MODULES
                or module == "wardian._db"):
            continue
        if lines := _opens(path):
            found[module] = lines
    return found


def test_only_entry_points_open_a_database() -> None:
    found = _opens_below_entry_points()
    more = [f"{module}: {len(lines)} open(s), lines {lines}"
            for module, lines in found.items() if len(lines) > OPENS_LEFT.get(module, 0)]
    assert not more, ("open the database at the entry point (a CLI command, web route, MCP "
                      "call, hook or worker) and pass it down as a parameter\n"
                      + "\n".join(more))
    fewer = {module: len(found.get(module, [])) for module, left in OPENS_LEFT.items()
             if len(found.get(module, [])) < left}
    assert not fewer, f"fewer opens than OPENS_LEFT allows; lower it (0: drop it): {fewer}"


def test_a_planted_open_below_an_entry_point_is_caught(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text("from wardian import config\n"
                     "def f(state, path):\n    a = open_state_db()\n"
                     "    b = config.open_memory_db()\n    c = StateDB.open(path)\n"
                     "    d = MemoryDB.open_at(path)\n    e = state.open(path)\n"
                     "    return open_state_db\n", encoding="utf-8")
    assert _opens(probe) == [3, 4, 5, 6]
