"""docs/hosts.md's table of what the real-host tests show names the versions they ran:
the pins of tests/hosts/pins.txt, one column per host."""

from __future__ import annotations

from pathlib import Path

from tests.hosts.hostcli import pins

HOSTS_MD = Path(__file__).resolve().parents[1] / "docs" / "hosts.md"
COLUMNS = {"Claude Code": "claude", "Codex CLI": "codex", "Gemini CLI": "gemini",
           "opencode": "opencode"}
ROWS = ("1 SessionStart", "2 Session end", "3 Recovery", "4 MCP", "5 `wardian memory save`",
        "6 Host as curator")


def _row(lines: list[str], start: str) -> list[str]:
    (line,) = [line for line in lines if line.startswith(f"| {start}")]
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def test_the_tested_versions_row_is_the_pins() -> None:
    lines = HOSTS_MD.read_text(encoding="utf-8").splitlines()
    header = [cell.strip() for cell in next(
        line for line in lines if line.startswith("| | Claude Code")).strip().strip(
        "|").split("|")][1:]
    assert header == list(COLUMNS)
    versions = _row(lines, "Version the tests ran")[1:]
    assert versions == [pins()[COLUMNS[name]].version for name in header]
    for row in ROWS:
        cells = _row(lines, row)[1:]
        assert len(cells) == len(COLUMNS) and all(cells), row


def test_every_test_file_the_table_names_exists() -> None:
    import re

    text = HOSTS_MD.read_text(encoding="utf-8")
    tests = HOSTS_MD.parents[1] / "tests"
    named = set(re.findall(r"`(?:[\w/]+/)?(test_\w+\.py)`", text))
    assert named
    missing = [n for n in sorted(named) if not list(tests.rglob(n))]
    assert missing == [], missing
