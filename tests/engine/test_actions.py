"""The action registry: plugin discovery through the ``wardian.actions`` entry-point group,
thread-safe first lookup (the layering check is tests/test_architecture.py)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from wardian.engine.actions import ENTRY_POINT_GROUP, get_action, known_actions, plugin_errors
from wardian.errors import NotFoundError


def _python(code: str, extra_path: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    if extra_path is not None:
        env["PYTHONPATH"] = os.pathsep.join(
            p for p in (str(extra_path), env.get("PYTHONPATH", "")) if p)
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, env=env, timeout=120, check=False)


def test_builtin_actions_come_from_the_entry_point_group() -> None:
    from importlib.metadata import entry_points

    values = {e.value for e in entry_points(group=ENTRY_POINT_GROUP)}
    assert "wardian.app.consolidation_actions:register_actions" in values, (
        "the package metadata lacks the entry point: run `pip install -e .`")
    assert {"noop", "log", "archive.load", "memory.snapshot", "memory.commit",
            "memory.draft_plan"} <= set(known_actions())
    assert plugin_errors() == {}


def test_a_third_party_distribution_adds_actions(tmp_path: Path) -> None:
    (tmp_path / "fakeplugin.py").write_text(textwrap.dedent("""
        from wardian.engine.actions import known_actions, register_action

        known_actions()  # a plugin looking actions up while it loads must not deadlock

        @register_action("fake.hello")
        def hello(ctx, name="world"):
            return {"hello": name}
    """))
    (tmp_path / "brokenplugin.py").write_text("raise RuntimeError('plugin bug')\n")
    dist = tmp_path / "fakeplugin-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: fakeplugin\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(
        f"[{ENTRY_POINT_GROUP}]\nfake = fakeplugin\nbroken = brokenplugin\n")
    out = _python("""
        from wardian.engine.actions import get_action, known_actions, plugin_errors
        from wardian.errors import NotFoundError
        names = known_actions()
        assert "fake.hello" in names and "memory.commit" in names, names
        assert get_action("fake.hello")(None, name="x") == {"hello": "x"}
        assert list(plugin_errors()) == ["broken"], plugin_errors()
        try:
            get_action("fake.hullo")
        except NotFoundError as exc:
            print(exc.render())
    """, tmp_path)
    assert out.returncode == 0, out.stderr
    assert "unknown action 'fake.hullo' (did you mean 'fake.hello'?)" in out.stdout
    assert "broken (brokenplugin: RuntimeError: plugin bug)" in out.stdout


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
    assert ENTRY_POINT_GROUP in text
