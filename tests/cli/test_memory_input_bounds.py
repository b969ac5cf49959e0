"""`wardian memory save` input bounds (issue 15 points 4 and 6): ``--source`` type at 64
characters and one past, control characters, and text that starts with dashes after ``--``."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.test_memory_cli import _agent, _capability, _records, workdir
from tests.conftest import invoke
from typer.testing import CliRunner

from wardian.memory.models import MAX_SOURCE_TYPE_CHARS

__all__ = ["workdir"]  # the fixture, re-used


def test_source_type_at_64_and_one_past(cli: CliRunner, workdir: Path, wardian_home: Path) -> None:
    env = _capability(_agent(cli, "ada"))
    at = invoke(cli, "memory", "save", "t", "--evidence", "e", "--source",
                "t" * MAX_SOURCE_TYPE_CHARS + "=a.md", env=env)
    assert at.exit_code == 0, at.stderr
    past = invoke(cli, "memory", "save", "u", "--evidence", "e", "--source",
                  "t" * (MAX_SOURCE_TYPE_CHARS + 1) + "=a.md", env=env)
    assert past.exit_code == 2
    assert "source type is 65 characters; the limit is 64" in past.stderr
    huge = invoke(cli, "memory", "save", "v", "--evidence", "e", "--source",
                  "t" * 10_000 + "=a.md", env=env)
    assert huge.exit_code == 2 and len(huge.stderr) < 300
    assert [r["text"] for r in _records(wardian_home)] == ["t"]


def test_control_characters_refused_newlines_kept(
    cli: CliRunner, workdir: Path, wardian_home: Path
) -> None:
    env = _capability(_agent(cli, "ada"))
    for args in (("nul\0here", "--evidence", "e"), ("t", "--evidence", "esc\x1b[2J"),
                 ("t", "--evidence", "e", "--source", "file=a\0b")):
        refused = invoke(cli, "memory", "save", *args, env=env)
        assert refused.exit_code == 2, (args, refused.output)
        assert "control character" in refused.stderr
    kept = invoke(cli, "memory", "save", "line one\n\tline two", "--evidence", "e", env=env)
    assert kept.exit_code == 0
    assert [r["text"] for r in _records(wardian_home)] == ["line one\n\tline two"]


def test_text_starting_with_dashes_is_accepted_after_double_dash(
    cli: CliRunner, workdir: Path, wardian_home: Path
) -> None:
    env = _capability(_agent(cli, "ada"))
    text = "-----BEGIN OPENSSH PRIVATE KEY----- made-up"
    after = invoke(cli, "memory", "save", "--evidence", "e", "--json", "--", text, env=env)
    # The text reaches the command: saved, or refused by the secret scanner (issue 14),
    # never mistaken for an option.
    assert "No such option" not in after.stderr
    if after.exit_code == 0:
        assert json.loads(after.stdout)["text"] == text
