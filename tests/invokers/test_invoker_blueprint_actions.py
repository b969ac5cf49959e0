"""Adding an invoker checks the blueprint's action names, as a run would (a misspelled action
used to be accepted at add and only fail the first run)."""

from __future__ import annotations

from tests.conftest import invoke
from typer.testing import CliRunner

from wardian.config import user_library_dir

BLUEPRINT = """\
blueprint: {id: typo-bp, name: Typo, description: An action name with a typo, version: 1}
triggers: [session-close, schedule, manual]
steps:
  - id: one
    action: nopp
"""


def test_invoker_add_refuses_an_unknown_action(cli: CliRunner) -> None:
    folder = user_library_dir() / "typo-bp"
    folder.mkdir(parents=True)
    (folder / "blueprint.yaml").write_text(BLUEPRINT, encoding="utf-8")
    assert invoke(cli, "agent", "add", "ada", "--provider", "builtin").exit_code == 0
    for kind, extra in (("session-close", []), ("schedule", ["--every", "1h"])):
        result = invoke(cli, "automation", kind, "add", "--blueprint", "typo-bp",
                        "--name", f"t-{kind}", "--agent", "ada", *extra,
                        "--assignments", "{}")
        assert result.exit_code == 2, (kind, result.output, result.stderr)
        assert "unknown action 'nopp'" in result.stderr, result.stderr
