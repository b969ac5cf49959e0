"""Docs stay true to the code: the CLI reference is generated from --help and current, every
command is documented and has help text, and every command the guides show exists."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
GENERATOR = ROOT / "scripts" / "gen_cli_docs.py"
GUIDES = ("operator-guide.md", "blueprint-guide.md")


def _command_paths() -> list[list[str]]:
    proc = subprocess.run(
        [sys.executable, str(GENERATOR), "--list"], capture_output=True, text=True,
        timeout=300, check=True, cwd=ROOT,
    )
    return [line.split()[1:] for line in proc.stdout.splitlines() if line.strip()]


@pytest.fixture(scope="module")
def commands() -> list[list[str]]:
    return _command_paths()


def test_cli_reference_is_current() -> None:
    proc = subprocess.run(
        [sys.executable, str(GENERATOR), "--check"], capture_output=True, text=True,
        timeout=300, check=False, cwd=ROOT,
    )
    assert proc.returncode == 0, (
        "docs/cli-reference.md is stale: run `python scripts/gen_cli_docs.py` and commit it\n"
        + proc.stderr
    )


def test_every_command_is_documented(commands: list[list[str]]) -> None:
    page = (DOCS / "cli-reference.md").read_text(encoding="utf-8")
    headings = {
        line.lstrip("#").strip() for line in page.splitlines() if line.startswith("#")
    }
    missing = [" ".join(["wardian", *p]) for p in commands
               if " ".join(["wardian", *p]) not in headings]
    assert not missing, f"commands missing from docs/cli-reference.md: {missing}"
    assert len(commands) > 40  # the whole tree was walked


def test_every_command_has_help_text() -> None:
    from typer.main import get_command

    from wardian.cli.main import app

    root = get_command(app)
    without: list[str] = []

    def walk(command: object, path: list[str]) -> None:
        if path and not (getattr(command, "help", None) or "").strip():
            without.append(" ".join(path))
        lister = getattr(command, "commands", None)
        if isinstance(lister, dict):
            for name, sub in sorted(lister.items()):
                if not getattr(sub, "hidden", False):
                    walk(sub, [*path, name])

    walk(root, [])
    assert not without, f"commands without help text: {without}"


_CMD = re.compile(r"^\s*(?:\$\s+)?wardian\s+(.+)$")


def _guide_commands(text: str) -> list[list[str]]:
    """`wardian …` command lines inside fenced code blocks of a guide."""
    out: list[list[str]] = []
    in_code = False
    for line in text.splitlines():
        if line.strip().startswith("```"):
            in_code = not in_code
            continue
        if not in_code:
            continue
        match = _CMD.match(line)
        if match:
            words = []
            for word in match.group(1).split():
                if not re.fullmatch(r"[a-z][a-z-]*", word):
                    break
                words.append(word)
            out.append(words)
    return out


@pytest.mark.parametrize("guide", GUIDES)
def test_guides_only_show_commands_that_exist(guide: str, commands: list[list[str]]) -> None:
    known = {tuple(p) for p in commands}
    parents = {tuple(p[:i]) for p in commands for i in range(len(p))}
    leaves = known - parents
    text = (DOCS / guide).read_text(encoding="utf-8")
    shown = _guide_commands(text)
    assert shown, f"{guide} shows no commands"
    unknown = []
    for words in shown:
        # The longest prefix of the words that is a command must be a leaf command.
        longest = max((i for i in range(1, len(words) + 1) if tuple(words[:i]) in known),
                      default=0)
        if tuple(words[:longest]) not in leaves:
            unknown.append(" ".join(words))
    assert not unknown, f"{guide} shows commands that do not exist: {unknown}"
