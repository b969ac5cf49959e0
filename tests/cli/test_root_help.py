"""The root ``--help`` lists every command without importing their modules (issue 19),
with the same one-line help each module gives itself."""

from __future__ import annotations

import subprocess
import sys

import typer
from typer.main import get_command

from wardian.cli.main import GROUP_HELP, GROUPS, LazyWardianGroup, app


def test_listed_help_is_each_modules_own() -> None:
    assert set(GROUP_HELP) == set(GROUPS)
    root = get_command(app)
    assert isinstance(root, LazyWardianGroup)
    with typer.Context(root) as ctx:
        for name in GROUPS:
            command = root.get_command(ctx, name)  # the real one: not writing help now
            assert (command.help or "").split("\n\n")[0].strip() == GROUP_HELP[name], name


def test_root_help_imports_no_group() -> None:
    probe = ("import runpy, sys\nsys.argv = ['wardian', '--help']\n"
             "try:\n    runpy.run_module('wardian', run_name='__main__')\n"
             "except SystemExit:\n    pass\n"
             "print(sorted(m for m in sys.modules if m.startswith('wardian.cli.')),"
             " file=sys.stderr)\n")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          timeout=120)
    for name in GROUP_HELP:
        assert name in done.stdout
    loaded = done.stderr.strip().splitlines()[-1]
    assert all(f"'wardian.cli.{name}'" not in loaded for name in GROUPS), loaded
