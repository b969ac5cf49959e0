"""The SQL in `src/` runs as written on both backends: no SQLite-only spellings.

The PostgreSQL backend converts placeholders only (`wardian._pg.translate`); a spelling
only SQLite knows would fail there. This scans every string literal of `src/` (docstrings
left out: prose may name what it avoids) for the forms the stores used to rely on a
run-time rewrite for. A statement for SQLite alone, the value under the key ``"sqlite"``
of a per-backend table (``{"sqlite": ..., "postgres": ...}``), may use them.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"


class _BareLike:
    """Finds a ``LIKE`` not written ``lower(column) LIKE lower(?)``: the one spelling
    that matches the same rows on both engines."""

    PORTABLE = re.compile(r"\blower\([\w.]+\)\s+LIKE\s+lower\(\?\)", re.IGNORECASE)
    # An upper-case LIKE, or a lower-case one before an operand (prose says "like" too).
    UPPER = re.compile(r"\bLIKE\b")
    LOWER = re.compile(r"\blike\s+(?:\?|'|lower\()", re.IGNORECASE)

    def search(self, text: str) -> bool:
        rest = self.PORTABLE.sub("", text)
        return bool(self.UPPER.search(rest) or self.LOWER.search(rest))


SQLITE_ONLY: dict[str, re.Pattern[str] | _BareLike] = {
    "IFNULL (write COALESCE)": re.compile(r"\bIFNULL\s*\(", re.IGNORECASE),
    "INSERT OR IGNORE/REPLACE (write INSERT ... ON CONFLICT)": re.compile(
        r"\bINSERT\s+OR\s+(?:IGNORE|REPLACE)\b|\bREPLACE\s+INTO\b", re.IGNORECASE),
    "SQLite's clock (pass the time from Python: wardian._util.utc_now_iso)": re.compile(
        r"\b(?:strftime|datetime|julianday|unixepoch|date|time)\s*\([^)]*'now'",
        re.IGNORECASE),
    "a LIKE that is not lower(column) LIKE lower(?) (SQLite's ignores ASCII case, "
    "PostgreSQL's none)": _BareLike(),
    "INDEXED BY (a SQLite planner hint: put it in a per-backend {'sqlite': ...} table)":
        re.compile(r"\bINDEXED\s+BY\b", re.IGNORECASE),
}


def _docstrings(tree: ast.AST) -> set[int]:
    nodes = [tree, *(n for n in ast.walk(tree) if isinstance(
        n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef))]
    out = set()
    for node in nodes:
        body = getattr(node, "body", [])
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            out.add(id(body[0].value))
    return out


def _sqlite_only(tree: ast.AST) -> set[int]:
    return {id(value) for node in ast.walk(tree) if isinstance(node, ast.Dict)
            for key, value in zip(node.keys, node.values, strict=True)
            if isinstance(key, ast.Constant) and key.value == "sqlite"}


def string_literals(source: str) -> Iterator[tuple[int, str]]:
    """(line, text) of every string literal in `source` but docstrings and statements for
    SQLite alone; an f-string's literal parts joined with ``{}`` where a value goes in."""
    tree = ast.parse(source)
    skip = _docstrings(tree) | _sqlite_only(tree)
    inner = {id(v) for n in ast.walk(tree) if isinstance(n, ast.JoinedStr) for v in n.values}
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr) and id(node) not in skip:
            yield node.lineno, "".join(
                v.value if isinstance(v, ast.Constant) and isinstance(v.value, str) else "{}"
                for v in node.values)
        elif (isinstance(node, ast.Constant) and isinstance(node.value, str)
              and id(node) not in skip and id(node) not in inner):
            yield node.lineno, node.value


def offending(source: str) -> list[tuple[int, str, str]]:
    """(line, rule, literal) of every SQLite-only spelling in the literals of `source`."""
    return [(line, rule, text) for line, text in string_literals(source)
            for rule, pattern in SQLITE_ONLY.items() if pattern.search(text)]


def test_rules_catch_what_they_are_for() -> None:
    caught = ['q = "SELECT ifnull(a, 0) FROM t"',
              'q = ("SELECT a FROM t"\n     " WHERE IFNULL (b, 1) = ?")',
              'q = f"SELECT IFNULL({col}, 0) FROM t"',
              'q = "INSERT OR IGNORE INTO t (a) VALUES (?)"',
              'q = "insert or replace into t (a) values (?)"', 'q = "REPLACE INTO t VALUES (1)"',
              "q = \"VALUES (?, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))\"",
              "q = \"WHERE at < datetime('now', '-1 day')\"",
              'q = "SELECT * FROM runs WHERE id LIKE ? LIMIT 11"',
              "q = \"WHERE text like '%x%'\"", 'q = "WHERE name LIKE lower(?)"',
              'q = "WHERE lower(a) LIKE lower(?) OR b LIKE ?"',
              'q = "SELECT * FROM records INDEXED BY records_startup WHERE a = ?"',
              'FROM = {"postgres": "records INDEXED BY records_startup", "sqlite": "records"}']
    passed = ['"""IFNULL( is spelled COALESCE here."""', 'q = "SELECT COALESCE(a, 0) FROM t"',
              "# IFNULL(a, 0) in a comment", 'q = "SELECT ifnull_count FROM t"',
              'q = "INSERT INTO t (a) VALUES (?) ON CONFLICT DO NOTHING"',
              'q = "CREATE OR REPLACE FUNCTION f() RETURNS trigger"',
              "q = \"SELECT strftime('%Y', at) FROM t WHERE kind = 'now'\"",
              "q = \"WHERE lower(id) LIKE lower(?) ESCAPE '\\\\'\"",
              'hint = "ids look like ses_..."', 'q = "_LOOKS_LIKE_OPTION"',
              'FROM = {"sqlite": "records INDEXED BY records_startup", "postgres": "records"}']
    assert all(offending(s) for s in caught)
    assert not [s for s in passed if offending(s)]


def test_src_sql_has_no_sqlite_only_spellings() -> None:
    found = [f"{path.relative_to(SRC.parent)}:{line}: {rule}: {text[:80]!r}"
             for path in sorted(SRC.rglob("*.py"))
             for line, rule, text in offending(path.read_text(encoding="utf-8"))]
    assert not found, ("SQL only SQLite runs, in src/ (PostgreSQL gets it as written):\n"
                       + "\n".join(found))
