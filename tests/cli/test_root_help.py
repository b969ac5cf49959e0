"""The root ``--help`` lists every command without importing their modules (issue 19),
with the same one-line help each module gives itself. ``wardian --help`` is served by the
hot path from the static tables of `wardian.cli._root_help` (no Typer, Click or Rich); the
tables are checked here against the Typer app so that the two cannot drift."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import typer
from typer.main import get_command

from wardian.cli._root_help import APP_HELP, GROUP_HELP, OPTIONS, render
from wardian.cli.main import LazyWardianGroup, app
from wardian.plugins import loaded

_PROBE = ("import json, runpy, sys\nsys.argv = ['wardian', *sys.argv[1:]]\ncode = 0\n"
          "try:\n    runpy.run_module('wardian', run_name='__main__')\n"
          "except SystemExit as exc:\n    code = exc.code or 0\n"
          "print(json.dumps({'code': code, 'modules': sorted(sys.modules)}), file=sys.stderr)\n")


def _probe(*argv: str, env: dict[str, str] | None = None) -> tuple[int, str, list[str]]:
    done = subprocess.run([sys.executable, "-c", _PROBE, *argv], capture_output=True,
                          text=True, timeout=120, env=env)
    report = json.loads(done.stderr.strip().splitlines()[-1])
    return report["code"], done.stdout, report["modules"]


def test_listed_help_is_each_modules_own() -> None:
    assert list(GROUP_HELP) == list(loaded().cli_groups)
    root = get_command(app)
    assert isinstance(root, LazyWardianGroup)
    with typer.Context(root) as ctx:
        for name in GROUP_HELP:
            command = root.get_command(ctx, name)  # the real one: not writing help now
            assert (command.help or "").split("\n\n")[0].strip() == GROUP_HELP[name], name


def test_static_root_help_is_the_typer_apps() -> None:
    root = get_command(app)
    assert isinstance(root, LazyWardianGroup) and root.help == APP_HELP
    with typer.Context(root, info_name="wardian", **root.context_settings) as ctx:
        assert root.list_commands(ctx) == list(GROUP_HELP)
        options = []
        for param in root.get_params(ctx):
            record = param.get_help_record(ctx)
            if record is not None:
                options.append((record[0], " ".join(record[1].split())))
    assert options == [(name, " ".join(text.split())) for name, text in OPTIONS]


@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_root_help_imports_no_cli_framework_and_no_group(flag: str) -> None:
    code, out, modules = _probe(flag)
    assert code == 0
    assert out == render(78) + "\n"  # COLUMNS unset, no terminal: Click's 80 - 2
    for name, text in GROUP_HELP.items():
        assert f"  {name} " in out and text.split()[0] in out, name
    heavy = [m for m in modules if m.split(".")[0] in {"typer", "click", "rich"}]
    assert heavy == []
    assert all(f"wardian.cli.{name}" not in modules for name in GROUP_HELP)


def test_typer_root_help_still_imports_no_group() -> None:
    probe = ("import sys\nsys.argv = ['wardian', '--help']\n"
             "from wardian.cli.main import main\n"
             "try:\n    main()\nexcept SystemExit:\n    pass\n"
             "print(sorted(m for m in sys.modules if m.startswith('wardian.cli.')),"
             " file=sys.stderr)\n")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          timeout=120)
    for name in GROUP_HELP:
        assert name in done.stdout
    loaded = done.stderr.strip().splitlines()[-1]
    assert all(f"'wardian.cli.{name}'" not in loaded for name in GROUP_HELP), loaded


def test_render_wraps_to_the_width_and_keeps_every_word() -> None:
    for width in (50, 78, 100):
        text = render(width)
        assert max(len(line) for line in text.splitlines()) <= width
        flat = " ".join(text.split())
        for help_text in GROUP_HELP.values():
            assert " ".join(help_text.split()) in flat


def test_group_help_stays_typers() -> None:
    code, out, modules = _probe("memory", "--help")
    assert code == 0 and "recall" in out and "typer" in modules
