"""Faults an operator trial of the CLI found (second trial), each through the real CLI: bad
input is refused with a clear message and a documented exit code, nothing half-written,
no Python class name or value (``None``, ``True``) in what an operator reads."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from tests.conftest import invoke
from typer.testing import CliRunner

ASSIGN = json.dumps({"curator": {"target_type": "temporary_provider", "provider": "builtin"}})
CLASS_NAME = re.compile(r"\b[A-Z][A-Za-z]+(Error|Exception|Unreadable|NotFound)\b")
"""A Python exception class name as it would leak into a message."""


@pytest.fixture
def ada(cli: CliRunner, tmp_path: Path) -> str:
    res = invoke(cli, "agent", "add", "ada", "--provider", "builtin",
                 "--workspace", str(tmp_path))
    assert res.exit_code == 0, res.output
    return "ada"


def _runs(cli: CliRunner) -> list[object]:
    res = invoke(cli, "automation", "runs", "--json")
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert isinstance(doc, list)
    return doc


# --- 1. --archive and other input files: exit 2, refused up front ------------------------


@pytest.mark.parametrize("kind", ["missing", "directory", "not-a-transcript", "binary"])
def test_run_start_refuses_a_bad_archive_before_recording_a_run(
        cli: CliRunner, ada: str, tmp_path: Path, kind: str) -> None:
    path = tmp_path / "session.jsonl"
    if kind == "directory":
        path.mkdir()
    elif kind == "not-a-transcript":
        path.write_text("# my notes\n\nnothing to see\n", encoding="utf-8")
    elif kind == "binary":
        path.write_bytes(bytes(range(256)) * 4)
    res = invoke(cli, "automation", "run", "start", "memory-consolidation", "--agent", ada,
                 "--assignments", ASSIGN, "--archive", str(path), "--wait")
    assert res.exit_code == 2, res.output
    assert "--archive" in res.stderr and "session.jsonl" in res.stderr
    assert not CLASS_NAME.search(res.stderr), res.stderr
    assert _runs(cli) == []  # no run row


def test_a_missing_blueprint_file_is_a_usage_error(cli: CliRunner, ada: str,
                                                    tmp_path: Path) -> None:
    missing = str(tmp_path / "nosuch.yaml")
    for args in (["blueprint", "show", missing],
                 ["automation", "run", "start", missing, "--agent", ada]):
        res = invoke(cli, *args)
        assert res.exit_code == 2, (args, res.output)
        assert "nosuch.yaml" in res.stderr
    res = invoke(cli, "blueprint", "validate", missing)
    assert res.exit_code == 2 and "nosuch.yaml" in res.stdout
    assert not CLASS_NAME.search(res.stdout), res.stdout


def test_a_failed_step_names_no_python_class(cli: CliRunner, ada: str, tmp_path: Path) -> None:
    # A blueprint whose own step meets a Wardian error at run time (a memory record that
    # does not exist): its message is for the operator, without the class behind it.
    bp = tmp_path / "bp" / "show-missing.yaml"
    bp.parent.mkdir()
    bp.write_text(
        "blueprint: {id: show-missing, name: Show missing, version: 1}\n"
        "triggers: [manual]\n"
        "steps:\n"
        "  - id: load\n"
        "    action: archive.load\n"
        "    with: {archive_path: " + json.dumps(str(tmp_path / "gone.jsonl")) + "}\n",
        encoding="utf-8")
    res = invoke(cli, "automation", "run", "start", str(bp), "--agent", ada, "--wait")
    assert res.exit_code == 1, res.output
    assert "gone.jsonl" in res.stdout
    assert not CLASS_NAME.search(res.stdout), res.stdout


# --- 2. show/list print operator words, never Python's None/True/False -------------------

PYTHON_WORDS = re.compile(r"\b(None|True|False)\b|\{'|\['")


def test_show_and_list_print_operator_words(cli: CliRunner, tmp_path: Path) -> None:
    from tests.cli.test_garden_cli import _agent, _save

    _agent_id, env = _agent(cli, "bea")
    record = _save(cli, env, "Run the linter before every commit.")
    added = invoke(cli, "automation", "schedule", "add", "--blueprint", "memory-consolidation",
                   "--name", "nightly", "--agent", "bea", "--cron", "30 2 * * *",
                   "--assignments", ASSIGN)
    assert added.exit_code == 0, added.output
    added = invoke(cli, "automation", "session-close", "add", "--blueprint",
                   "memory-consolidation", "--name", "on-close", "--agent", "bea",
                   "--assignments", ASSIGN)
    assert added.exit_code == 0, added.output
    for args in (["automation", "schedule", "show", "nightly"],
                 ["automation", "schedule", "list"],
                 ["automation", "session-close", "show", "on-close"],
                 ["automation", "session-close", "list"],
                 ["agent", "show", "bea"], ["agent", "list"],
                 ["garden", "memory", "show", record["id"]],
                 ["garden", "memory", "list", "--agent", "bea"],
                 ["memory", "show", record["id"]], ["memory", "list"]):
        res = invoke(cli, *args, env=env if args[0] == "memory" else None)
        assert res.exit_code == 0, (args, res.output)
        assert not PYTHON_WORDS.search(res.stdout), (args, res.stdout)
    shown = invoke(cli, "automation", "schedule", "show", "nightly").stdout
    assert re.search(r"enabled:\s+no$", shown, re.M) and re.search(r"last outcome:\s+-$",
                                                                    shown, re.M)


# --- 3. an unknown option names itself, the command and --help ---------------------------


def _wardian(*args: str, home: Path) -> tuple[int, str]:
    """The installed `wardian ARGS` as a real child process (the hot path runs there
    first)."""
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if not k.startswith("WARDIAN_")}
    done = subprocess.run([str(Path(sys.executable).with_name("wardian")), *args],
                          env={**env, "WARDIAN_HOME": str(home), "COLUMNS": "200"},
                          capture_output=True, text=True, timeout=120, check=False,
                          stdin=subprocess.DEVNULL)
    return done.returncode, done.stderr


@pytest.mark.parametrize(("argv", "option", "command"), [
    (["memory", "save", "a note", "--evidence", "e", "--colour"], "--colour",
     "wardian memory save"),
    (["memory", "save", "--colour", "a note", "--evidence", "e"], "--colour",
     "wardian memory save"),
    (["memory", "recall", "lint", "--jsn"], "--jsn", "wardian memory recall"),
    (["hooks", "claude-code", "session-end", "--agnet", "x"], "--agnet",
     "wardian hooks claude-code session-end"),
    (["agent", "exec", "ada", "--wrkspace", "/tmp", "--", "true"], "--wrkspace",
     "wardian agent exec"),
    (["agent", "exec", "--workspace", "/tmp", "--colour", "ada", "--", "true"], "--colour",
     "wardian agent exec"),
    (["agent", "list", "--colour"], "--colour", "wardian agent list"),
    (["automation", "schedule", "show", "x", "--colour"], "--colour",
     "wardian automation schedule show"),
])
def test_unknown_option_names_option_command_and_help(
        wardian_home: Path, argv: list[str], option: str, command: str) -> None:
    code, err = _wardian(*argv, home=wardian_home)
    assert code == 2, err
    flat = " ".join(re.sub(r"[│╭╰─╮╯]", " ", err).split())
    assert f"unknown option '{option}' for `{command}`" in flat, err
    assert f"`{command} --help`" in flat, err
    assert "Traceback" not in err and "Possible options" not in err


# --- 4. agent exec: the command resolves before anything is said -------------------------


@pytest.mark.parametrize(("cmd", "code", "said"), [
    (["no-such-program-q7"], 127, "command not found: 'no-such-program-q7' is on none of"),
    (["./missing-script.sh"], 127, "command not found: './missing-script.sh': no such file"),
    (["./notes.txt"], 126, "cannot run './notes.txt': not an executable file"),
])
def test_agent_exec_checks_the_command_before_memory_loaded(
        cli: CliRunner, ada: str, tmp_path: Path, wardian_home: Path,
        cmd: list[str], code: int, said: str) -> None:
    import sys

    (tmp_path / "notes.txt").write_text("not a program\n", encoding="utf-8")
    assert invoke(cli, "settings", "set", "agent_memory.enabled", "true").exit_code == 0
    saved, err = _wardian("agent", "exec", ada, "--", sys.executable, "-m", "wardian",
                          "memory", "save", "Use ruff check", "--evidence", "said so",
                          home=wardian_home)
    assert saved == 0, err
    before = json.loads(invoke(cli, "garden", "memory", "loaded", "--agent", ada,
                               "--json").stdout)
    exit_code, err = _wardian("agent", "exec", ada, "--", *cmd, home=wardian_home)
    assert exit_code == code, err
    assert "Memory loaded" not in err, err
    assert err.startswith(f"Error: {said}"), err
    after = json.loads(invoke(cli, "garden", "memory", "loaded", "--agent", ada,
                              "--json").stdout)
    assert after == before  # no Memory loaded event for a launch that never ran


# --- 6. a locked database: say what is waited for, and what to do when giving up ---------


@pytest.mark.parametrize(("db", "argv"), [
    ("state.db", ["agent", "add", "bob", "--provider", "builtin"]),
    ("memory.db", ["agent", "exec", "ada", "--", "true"]),
])
def test_a_locked_database_names_its_file_and_holder(
        cli: CliRunner, ada: str, wardian_home: Path, db: str, argv: list[str]) -> None:
    import os
    import sqlite3
    import subprocess
    import sys
    from contextlib import closing

    assert invoke(cli, "settings", "set", "agent_memory.enabled", "true").exit_code == 0
    assert _wardian("agent", "exec", ada, "--", "true", home=wardian_home)[0] == 0
    path = wardian_home / db
    env = {k: v for k, v in os.environ.items() if not k.startswith("WARDIAN_")}
    with closing(sqlite3.connect(path, isolation_level=None)) as holder:
        holder.execute("BEGIN IMMEDIATE")  # this test process holds the write lock
        done = subprocess.run(
            [str(Path(sys.executable).with_name("wardian")), *argv],
            env={**env, "WARDIAN_HOME": str(wardian_home), "WARDIAN_LOCK_TIMEOUT": "1.5"},
            capture_output=True, text=True, timeout=120, check=False)
        holder.execute("ROLLBACK")
    assert done.returncode == 1, done.stderr
    held = f"held by pid {os.getpid()} ("
    waiting, error = done.stderr.splitlines()[:2]
    assert waiting.startswith(f"wardian: waiting for the write lock on {path} ({held}"), waiting
    assert "giving up after 1.5 s" in waiting
    assert error.startswith(f"Error: {path} stayed locked by pid {os.getpid()} ("), error
    assert "nothing was written" in error and "WARDIAN_LOCK_TIMEOUT=SECONDS" in error
    assert "Traceback" not in done.stderr
    if db == "state.db":
        assert "bob" not in invoke(cli, "agent", "list").stdout


# --- 7. hooks install --settings in a folder that does not exist ---------------------------


@pytest.mark.parametrize("host", ["claude-code", "codex", "gemini"])
def test_hooks_install_refuses_a_settings_path_in_a_missing_folder(
        cli: CliRunner, ada: str, tmp_path: Path, host: str) -> None:
    target = tmp_path / ".calude" / "settings.json"  # the typo the operator made
    res = invoke(cli, "hooks", "install", host, "--agent", ada, "--settings", str(target))
    assert res.exit_code == 2, res.output
    assert f"the folder {target.parent} does not exist" in res.stderr
    assert "--create-dirs" in res.stderr
    assert not target.parent.exists()  # nothing created
    res = invoke(cli, "hooks", "install", host, "--agent", ada, "--settings", str(target),
                 "--create-dirs")
    assert res.exit_code == 0, res.output
    assert json.loads(target.read_text(encoding="utf-8"))["hooks"]


# --- 9. a preview cuts long texts with a marker, its length and where to read it all -------


def test_preview_cuts_long_texts_and_says_how_to_see_them_whole(
        cli: CliRunner, tmp_path: Path) -> None:
    from tests.cli.test_garden_cli import _agent, _save

    _, env = _agent(cli, "bea2")
    long_text = " ".join(f"step{n:04d} keeps the build green" for n in range(300))[:8000]
    record = _save(cli, env, long_text)
    plan = tmp_path / "revise.json"
    res = invoke(cli, "garden", "memory", "revise", record["id"], "--agent", "bea2",
                 "--text", long_text[::-1].strip(), "--output", str(plan))
    assert res.exit_code == 0, res.output
    shown = invoke(cli, "garden", "maintain", "preview", str(plan), "--agent", "bea2")
    assert shown.exit_code == 0, shown.output
    out = " ".join(shown.stdout.split())
    assert len(shown.stdout) < 4000 and long_text not in out
    assert (f"[cut: 8,000 characters; `wardian garden memory show {record['id']}` shows the "
            "whole text]") in out
    assert (f"[cut: {len(long_text[::-1].strip()):,} characters; `wardian garden maintain "
            f"preview {plan} --agent bea2 --full` shows the whole text]") in out
    whole = invoke(cli, "garden", "maintain", "preview", str(plan), "--agent", "bea2", "--full")
    assert long_text in " ".join(whole.stdout.split()) and "[cut:" not in whole.stdout
    assert long_text in invoke(cli, "garden", "memory", "show", record["id"]).stdout


# --- 10. an empty id is a usage error, not "not found" ------------------------------------


def test_an_empty_id_is_a_usage_error_everywhere(cli: CliRunner, tmp_path: Path) -> None:
    from tests.cli.test_garden_cli import _agent, _save

    _, env = _agent(cli, "bea")
    _save(cli, env, "Run the linter before every commit.")
    operator = [["garden", "memory", "show"], ["garden", "memory", "history"],
                ["automation", "run", "show"], ["automation", "run", "cancel"],
                ["agent", "show"], ["agent", "remove"],
                ["automation", "schedule", "show"], ["automation", "session-close", "show"],
                ["conversation", "show"]]
    agent_side = [["memory", "show"], ["memory", "history"]]
    for args in operator + agent_side:
        for empty in ("", "  "):
            res = invoke(cli, *args, empty, env=env if args in agent_side else None)
            assert res.exit_code == 2, (args, res.output)
            assert "is empty" in res.stderr and "not found" not in res.stderr, res.stderr
    res = invoke(cli, "memory", "remove", "", "--reason", "gone", env=env)
    assert res.exit_code == 2 and "the record id is empty" in res.stderr


# --- 11. invoker names: one per kind, kept by the database --------------------------------


def test_two_adds_at_once_cannot_both_take_one_invoker_name(
        cli: CliRunner, ada: str, wardian_home: Path) -> None:
    # Both commands check the name while this test holds state.db's write lock, then wait
    # for it (each says so on stderr: the synchronisation, no sleep); released, both insert.
    import os
    import sqlite3
    import subprocess
    import sys
    from contextlib import closing

    first = invoke(cli, "automation", "session-close", "add", "--blueprint",
                   "memory-consolidation", "--name", "warm-up", "--agent", ada,
                   "--assignments", ASSIGN)
    assert first.exit_code == 0, first.output  # every migration has run
    env = {k: v for k, v in os.environ.items() if not k.startswith("WARDIAN_")}
    env.update(WARDIAN_HOME=str(wardian_home), WARDIAN_LOCK_TIMEOUT="120")
    argv = [str(Path(sys.executable).with_name("wardian")), "automation", "session-close",
            "add", "--blueprint", "memory-consolidation", "--name", "nightly", "--agent", ada,
            "--assignments", ASSIGN]
    with closing(sqlite3.connect(wardian_home / "state.db", isolation_level=None)) as holder:
        holder.execute("BEGIN IMMEDIATE")
        procs = [subprocess.Popen(argv, env=env, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True) for _ in range(2)]
        try:
            for proc in procs:
                assert proc.stderr is not None
                line = proc.stderr.readline()
                assert "waiting for the write lock" in line, line
        finally:
            holder.execute("ROLLBACK")
        outcomes = []
        for proc in procs:
            out, err = proc.communicate(timeout=120)  # reads the rest, closes the pipes
            outcomes.append((proc.returncode, out, err))
    codes = sorted(code for code, _, _ in outcomes)
    assert codes == [0, 4], outcomes
    (refused,) = [err for code, _, err in outcomes if code == 4]
    assert "a session-close invoker named 'nightly' already exists (" in refused, refused
    listed = json.loads(invoke(cli, "automation", "session-close", "list", "--json").stdout)
    assert sorted(d["name"] for d in listed) == ["nightly", "warm-up"]


def test_the_migration_keeps_older_duplicate_names_addressable(
        cli: CliRunner, ada: str, wardian_home: Path) -> None:
    import sqlite3
    from contextlib import closing

    for name in ("a", "b"):
        assert invoke(cli, "automation", "session-close", "add", "--blueprint",
                      "memory-consolidation", "--name", name, "--agent", ada,
                      "--assignments", ASSIGN).exit_code == 0
    with closing(sqlite3.connect(wardian_home / "state.db")) as conn, conn:
        # As an older Wardian could leave it: two invokers named 'a', no unique index yet.
        conn.execute("DROP INDEX invokers_kind_name")
        conn.execute("DELETE FROM schema_migrations WHERE component = 'invokers'"
                     " AND version = 3")
        conn.execute("UPDATE invokers SET name = 'a'")
    import os
    import subprocess
    import sys

    # A new process: this one's open state.db was migrated already.
    env = {k: v for k, v in os.environ.items() if not k.startswith("WARDIAN_")}
    done = subprocess.run([str(Path(sys.executable).with_name("wardian")), "automation",
                           "session-close", "list", "--json"],
                          env={**env, "WARDIAN_HOME": str(wardian_home)},
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    listed = json.loads(done.stdout)
    names = sorted(d["name"] for d in listed)
    assert names[0] == "a" and re.fullmatch(r"a \([0-9a-f]{8}\)", names[1]), names
    res = invoke(cli, "automation", "session-close", "set", names[1], "--name", "a")
    assert res.exit_code == 4 and "already exists" in res.stderr
