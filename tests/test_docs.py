"""Docs stay true to the code: the CLI reference is generated from --help and current, every
command is documented and has help text, every command and option the README and the guides
show exists, and the examples an operator copies (a blueprint, a maintenance plan,
assignments, the settings table, the actions table) are what the code accepts."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
GENERATOR = ROOT / "scripts" / "gen_cli_docs.py"
GUIDES = ("operator-guide.md", "blueprint-guide.md")
DOC_FILES = ("README.md", "docs/operator-guide.md", "docs/blueprint-guide.md", "docs/hosts.md",
             "docs/threat-model.md")
"""Everything an operator reads before typing: each `wardian …` they show is checked."""


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


def _snippets(text: str) -> list[tuple[int, str]]:
    """`(line, "wardian …")` for each command line of a fenced code block (a trailing `\\`
    joins the next line; a `#` comment is cut) and each inline `wardian …` code span."""
    out: list[tuple[int, str]] = []
    in_code = False
    lines = text.splitlines()
    number = 0
    while number < len(lines):
        line = lines[number]
        number += 1
        if line.strip().startswith("```"):
            in_code = not in_code
            continue
        if in_code:
            match = _CMD.match(line)
            if not match:
                continue
            start, command = number, match.group(1)
            while command.rstrip().endswith("\\") and number < len(lines):
                command = command.rstrip()[:-1] + " " + lines[number].strip()
                number += 1
            out.append((start, "wardian " + command.split(" #")[0]))
        else:
            out.extend((number, span) for span in re.findall(r"`(wardian [^`]+)`", line))
    return out


def _resolve(root: Any, words: list[str]) -> tuple[list[list[str]], list[Any], list[str]]:
    """Walk `words` down the command tree. A word such as `save|list` or `exec/launch`
    names alternatives: each is followed. Returns the paths reached, their commands, and
    the words that follow the command path (options and arguments)."""
    import typer

    paths: list[list[str]] = [[]]
    commands = [root]
    rest = list(words)
    while rest and all(hasattr(c, "list_commands") for c in commands):
        names = re.split(r"[|/]", rest[0])
        found = []
        for path, command in zip(paths, commands, strict=True):
            ctx = typer.Context(command)
            for name in names:
                sub = command.get_command(ctx, name)
                if sub is not None:
                    found.append(([*path, name], sub))
        if not found or len(found) != len(paths) * len(names):
            break
        paths = [p for p, _ in found]
        commands = [c for _, c in found]
        rest.pop(0)
    return paths, commands, rest


def test_docs_show_only_options_that_exist() -> None:
    """Every `--option` after a command shown in the README or a guide (code block or inline
    code) is one of that command's options, and every code-block command is a real leaf
    command (alternatives like `save|list` each checked)."""
    import typer

    from wardian.cli.main import app

    root = typer.main.get_command(app)
    problems: list[str] = []
    for name in DOC_FILES:
        text = (ROOT / name).read_text(encoding="utf-8")
        for line, snippet in _snippets(text):
            paths, commands, rest = _resolve(root, snippet.split()[1:])
            where = f"{name}:{line}: `{snippet.strip()}`"
            if not paths[0] and rest and not rest[0].startswith("-") and rest[0] != "…":
                problems.append(f"{where}: no such command")
                continue
            for path, command in zip(paths, commands, strict=True):
                if hasattr(command, "list_commands") and not (rest and rest[0][0] == "-"):
                    if rest and re.fullmatch(r"[a-z][a-z-]*", rest[0]):
                        problems.append(f"{where}: no command `{rest[0]}` under "
                                        f"`wardian {' '.join(path)}`")
                    continue
                known = {"--help", "-h"}
                for param in command.params:
                    known.update(param.opts)
                    known.update(getattr(param, "secondary_opts", []))
                for word in rest:
                    if word in ("--", "|", ">", "&&", ";"):
                        break  # what follows belongs to another program
                    for part in re.split(r"[|/]", word.strip("[]")):
                        option = re.match(r"(--?[a-z][a-z0-9-]*)", part)
                        if option and option.group(1) not in known:
                            problems.append(f"{where}: `wardian {' '.join(path)}` has no "
                                            f"option {option.group(1)}")
    assert not problems, "\n".join(problems)


def _fenced(text: str, language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", text, re.S | re.M)


def test_the_format_example_of_the_blueprint_guide_validates(tmp_path: Path) -> None:
    """The whole blueprint under "The format" is one an author can copy: `wardian blueprint
    validate` accepts it (with its prompt file beside it)."""
    text = (DOCS / "blueprint-guide.md").read_text(encoding="utf-8")
    section = text.split("## The format", 1)[1]
    example = _fenced(section, "yaml")[0]
    folder = tmp_path / "memory-consolidation"
    folder.mkdir()
    (folder / "blueprint.yaml").write_text(example, encoding="utf-8")
    (folder / "curator.md.j2").write_text("Curate for {{ invocation.agent_name }}.\n",
                                          encoding="utf-8")
    proc = subprocess.run([sys.executable, "-m", "wardian", "blueprint", "validate",
                           str(folder)], capture_output=True, text=True, timeout=120,
                          check=False, env={**os.environ, "WARDIAN_HOME": str(tmp_path / "h")})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "0 with problems" in proc.stdout + proc.stderr


def _review_example() -> str:
    text = (DOCS / "blueprint-guide.md").read_text(encoding="utf-8")
    return text.split("## Worked example: memory-review", 1)[1].split("\n## ", 1)[0]


def test_the_memory_review_example_shows_the_shipped_steps() -> None:
    """The steps the worked example walks through line by line are the shipped ones."""
    import yaml

    from wardian.blueprints.library import shipped_library_dir

    shipped = yaml.safe_load((shipped_library_dir() / "memory-review" / "blueprint.yaml")
                             .read_text(encoding="utf-8"))
    shown = next(yaml.safe_load(b) for b in _fenced(_review_example(), "yaml")
                 if b.startswith("triggers:"))
    assert shown == {"triggers": shipped["triggers"], "steps": shipped["steps"]}


def test_the_memory_review_variant_validates_and_drafts_a_review(tmp_path: Path) -> None:
    """The variant of the worked example, copied into a user library as the guide says:
    `blueprint validate --assignments` accepts it without warnings, and a run with the
    builtin reviewer drafts a review retiring exactly the checkpoint older than `days`,
    which `garden memory review show` previews."""
    from wardian.memory.db import open_memory_db
    from wardian.memory.models import Scope
    from wardian.memory.store import MemoryStore

    variant = next(b for b in _fenced(_review_example(), "yaml")
                   if "id: checkpoint-review" in b)
    home = tmp_path / "h"
    folder = home / "library" / "checkpoint-review"
    folder.mkdir(parents=True)
    (folder / "blueprint.yaml").write_text(variant, encoding="utf-8")
    env = {**os.environ, "WARDIAN_HOME": str(home)}
    reviewer = json.dumps({"reviewer": {"target_type": "temporary_provider",
                                        "provider": "builtin", "model": "curator-rules"}})

    def wardian(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "wardian", *args], capture_output=True,
                              text=True, timeout=120, check=False, env=env)

    checked = wardian("blueprint", "validate", str(folder), "--assignments", reviewer)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "0 with problems (0 problem(s))" in checked.stdout + checked.stderr
    assert "warning" not in checked.stdout + checked.stderr

    assert wardian("agent", "add", "dev", "--provider", "builtin").returncode == 0
    agent_id = json.loads(wardian("agent", "show", "dev", "--json").stdout)["id"]
    os.environ["WARDIAN_HOME"], saved = str(home), os.environ.get("WARDIAN_HOME")
    try:
        store = MemoryStore(open_memory_db())
        scope = Scope("workspace", str(tmp_path))
        ids = {key: store.save(agent_id, text, evidence=text, kind=kind, scope=scope,  # type: ignore[arg-type]
                               actor="test").id
               for key, text, kind in [
                   ("old", "The billing table migration is half done", "current"),
                   ("young", "The release notes wait for the changelog", "current"),
                   ("rule", "Use npm for installs", "stable")]}
        for key, when in (("old", "2026-01-05T09:00:00.000000Z"),
                          ("rule", "2026-01-05T09:00:00.000000Z")):
            store.conn.execute("UPDATE records SET updated_at = ? WHERE id = ?",
                               (when, ids[key]))
    finally:
        if saved is None:
            del os.environ["WARDIAN_HOME"]
        else:
            os.environ["WARDIAN_HOME"] = saved
    started = wardian("automation", "run", "start", "checkpoint-review", "--agent", "dev",
                      "--assignments", reviewer, "--input", "days=30", "--wait", "--json")
    assert started.returncode == 0, started.stdout + started.stderr
    run = json.loads(started.stdout)
    assert run["status"] == "succeeded", run
    shown = json.loads(wardian("garden", "memory", "review", "show", run["id"][:8],
                               "--agent", "dev", "--json").stdout)
    operations = shown["review"]["plan"]["operations"]
    assert [(op["op"], op["memory_id"]) for op in operations] == [("retire", ids["old"])]
    assert "stale checkpoint" in operations[0]["reason"]
    assert shown["review"]["state"] == "pending"


def test_the_plan_example_of_the_operator_guide_previews(tmp_path: Path) -> None:
    """The hand-written maintenance plan in the operator guide, its `<placeholders>` filled
    with an agent's id and made-up record ids, is a valid schema-v1 plan: `garden maintain
    preview` reads it and reports only that the made-up records are missing."""
    text = (DOCS / "operator-guide.md").read_text(encoding="utf-8")
    example = next(b for b in _fenced(text, "json") if '"schema_version"' in b)
    env = {**os.environ, "WARDIAN_HOME": str(tmp_path / "h")}

    def wardian(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "wardian", *args], capture_output=True,
                              text=True, timeout=120, check=False, env=env)

    added = wardian("agent", "add", "reviewer", "--provider", "builtin")
    assert added.returncode == 0, added.stderr
    agent_id = json.loads(wardian("agent", "show", "reviewer", "--json").stdout)["id"]
    filled = re.sub(r'"<agent-id[^"]*>"', json.dumps(agent_id), example)
    filled = re.sub(r'"<[^"]*>"', lambda _m: json.dumps(str(uuid.uuid4())), filled)
    plan = tmp_path / "plan.json"
    plan.write_text(filled, encoding="utf-8")
    proc = wardian("garden", "maintain", "preview", str(plan), "--agent", "reviewer", "--json")
    assert proc.returncode in (0, 4), proc.stderr  # conflicts, never a validation error
    doc = json.loads(proc.stdout)
    assert doc["operation_count"] == 4
    assert {c["kind"] for c in doc["conflicts"]} == {"target_missing"}, doc["conflicts"]


def test_the_assignment_examples_parse() -> None:
    """Each one-line assignments example (`{"curator": …}`) of the guides is well formed."""
    from wardian.engine.assignments import parse_assignments_json

    shown = []
    for name in ("operator-guide.md", "blueprint-guide.md"):
        for block in _fenced((DOCS / name).read_text(encoding="utf-8"), "json"):
            shown += [line.strip() for line in block.splitlines()
                      if line.strip().startswith(('{"curator"', '{"reviewer"'))]
    assert len(shown) >= 5
    for line in shown:
        assert set(parse_assignments_json(line)) == {line.split('"')[1]}, line


def test_the_settings_table_lists_every_setting_with_its_default() -> None:
    """The operator guide's settings table has exactly the keys `settings list` has, with
    the same defaults."""
    from wardian.config import SETTINGS

    text = (DOCS / "operator-guide.md").read_text(encoding="utf-8")
    section = text.split("## 3. Settings", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| `([a-z_.]+)` \| `([^`]*)` \|", section, re.M)
    documented = {key: default for key, default in rows}
    assert set(documented) == set(SETTINGS), (sorted(documented), sorted(SETTINGS))
    for key, default in documented.items():
        assert str(SETTINGS[key].default).lower() == default.lower(), key


def test_the_actions_table_lists_every_built_in_action() -> None:
    from wardian.engine.actions import known_actions

    text = (DOCS / "blueprint-guide.md").read_text(encoding="utf-8")
    section = text.split("## Actions", 1)[1].split("\n## ", 1)[0]
    documented = set(re.findall(r"^\| `([a-z_.]+)` \|", section, re.M))
    assert documented == set(known_actions())


def test_every_list_show_and_history_command_takes_json() -> None:
    """The operator guide: "Every `list`/`show`/`history` command takes `--json`"."""
    import typer

    from wardian.cli.main import app

    def leaves(command: Any, path: list[str]) -> list[tuple[list[str], Any]]:
        if not hasattr(command, "list_commands"):
            return [(path, command)]
        ctx = typer.Context(command)
        found = []
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            if sub is not None and not getattr(sub, "hidden", False):
                found += leaves(sub, [*path, name])
        return found

    assert "Every `list`/`show`/`history` command takes `--json`" in (
        DOCS / "operator-guide.md").read_text(encoding="utf-8")
    checked = [(path, command) for path, command in leaves(typer.main.get_command(app), [])
               if path[-1] in ("list", "show", "history")]
    assert len(checked) > 10
    without = [" ".join(path) for path, command in checked
               if "--json" not in {o for p in command.params for o in p.opts}]
    assert not without, f"no --json: {without}"
