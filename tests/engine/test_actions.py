"""The action registry: actions from the plugin registry (tests/test_plugins.py installs a
third-party one), thread-safe first lookup (the layering check is tests/test_architecture.py)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from wardian.engine.actions import get_action, known_actions
from wardian.errors import NotFoundError


def _python(code: str, extra_path: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    if extra_path is not None:
        env["PYTHONPATH"] = os.pathsep.join(
            p for p in (str(extra_path), env.get("PYTHONPATH", "")) if p)
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, env=env, timeout=120, check=False)


def test_builtin_actions_come_from_the_builtin_plugin() -> None:
    from wardian.plugins import BUILTIN_OWNER, loaded

    plugins = loaded()
    for name in ("noop", "log", "archive.load", "memory.snapshot", "memory.commit",
                 "memory.draft_plan", "memory.draft_review"):
        assert plugins.owners[("actions", name)] == BUILTIN_OWNER
        assert name in known_actions()
    assert plugins.errors == []


def test_first_lookup_from_many_threads_sees_every_action() -> None:
    out = _python("""
        import threading
        from wardian.engine.actions import get_action
        barrier = threading.Barrier(8)
        failures = []
        def look():
            barrier.wait()
            try:
                get_action("memory.commit")
                get_action("noop")
            except Exception as exc:
                failures.append(repr(exc))
        threads = [threading.Thread(target=look) for _ in range(8)]
        for t in threads: t.start()
        for t in threads: t.join()
        print(failures)
    """)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_unknown_action_names_the_nearest_and_the_group() -> None:
    with pytest.raises(NotFoundError) as info:
        get_action("nop")
    text = info.value.render()
    assert "unknown action 'nop' (did you mean 'noop'?)" in text
    assert "wardian.plugins" in text
