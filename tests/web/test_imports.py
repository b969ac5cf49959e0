"""Garden's web stack stays off every other command's start-up path (issue 17): Starlette,
uvicorn and python-multipart load only for `wardian garden serve`."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

WEB = {"starlette", "uvicorn", "multipart", "python_multipart", "playwright"}

PROBE = r"""
import json, runpy, sys
sys.argv = ["wardian", *sys.argv[1:]]
try:
    runpy.run_module("wardian", run_name="__main__")
except SystemExit:
    pass
print(json.dumps(sorted({m.split(".")[0] for m in sys.modules} | {m for m in sys.modules
                 if m.startswith("wardian.web")})), file=sys.stderr)
"""


@pytest.mark.parametrize("argv", [
    ["garden", "memory", "list", "--agent", "nobody"],
    ["garden", "maintain", "check-receipt", "--idempotency-key", "k", "--agent", "nobody"],
    ["garden", "--help"],
    ["agent", "list"],
])
def test_other_commands_do_not_import_the_web_stack(argv: list[str]) -> None:
    done = subprocess.run([sys.executable, "-c", PROBE, *argv], env=dict(os.environ),
                          capture_output=True, text=True, timeout=120)
    modules = set(json.loads(done.stderr.strip().splitlines()[-1]))
    assert WEB.isdisjoint(modules), sorted(WEB & modules)
    assert not any(m.startswith("wardian.web") for m in modules)
