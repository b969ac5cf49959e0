"""Which tests count as ``hosts`` tests (`tests.hosts.conftest.pytest_collection_modifyitems`):
`-m "not hosts"` must leave out every test that starts a real host, also those that take
their host by name (``request.getfixturevalue(f"{name}_host")``)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _collected(marker: str, *paths: str) -> set[str]:
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--collect-only", "-q",
         "-m", marker, *paths], cwd=ROOT, capture_output=True, text=True, check=False)
    assert proc.returncode in (0, 5), proc.stdout[-2000:] + proc.stderr[-2000:]
    return {line for line in proc.stdout.splitlines() if "::" in line}


def test_a_host_taken_by_name_marks_the_test() -> None:
    paths = ("tests/hosts/test_smoke.py", "tests/hosts/test_mcp_tools.py")
    hosts = _collected("hosts", *paths)
    assert any("test_scripted_shell_call_round_trip[codex]" in t for t in hosts), hosts
    left = _collected("not hosts", *paths)
    by_name = [t for t in left if any(f"[{n}" in t for n in
                                      ("claude", "codex", "gemini", "opencode"))]
    assert not by_name, by_name


def test_a_test_without_a_host_is_not_marked() -> None:
    assert _collected("hosts", "tests/hosts/test_endpoint.py") == set()


def test_a_host_name_outside_the_host_tests_marks_nothing() -> None:
    marked = _collected("hosts", "tests/curator/test_generalisation.py")
    assert marked == set(), sorted(marked)[:5]
