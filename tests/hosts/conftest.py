"""Fixtures for the real-host tests: the scripted endpoint and the host CLIs.

- ``endpoint``: a started `ScriptedEndpoint` (empty script; call ``endpoint.script(...)``).
- ``claude_host``, ``codex_host``, ``gemini_host``, ``opencode_host``: a `Host` in an
  isolated home pointing at ``endpoint``; a test using one is marked ``hosts``.
- ``host_exe(name)`` (``host_exe`` fixture, a function): the pinned executable, or skip —
  under ``CI=true`` fail — when `scripts/install-hosts` has not installed it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.hosts.endpoint import ScriptedEndpoint
from tests.hosts.hostcli import CACHE, Host, host_path, pins

HOST_FIXTURES = {"claude_host": "claude", "codex_host": "codex", "gemini_host": "gemini",
                 "opencode_host": "opencode"}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A test that uses a host fixture, or a test of this folder parametrized by a host's
    name (it takes the host with ``request.getfixturevalue``), is a ``hosts`` test."""
    hosts, here = set(HOST_FIXTURES.values()), Path(__file__).parent
    for item in items:
        callspec = getattr(item, "callspec", None)
        by_name = (callspec is not None and item.path.is_relative_to(here)
                   and bool(set(map(str, callspec.params.values())) & hosts))
        if set(getattr(item, "fixturenames", ())) & HOST_FIXTURES.keys() or by_name:
            item.add_marker(pytest.mark.hosts)


def require_host(command: str) -> Path:
    """The executable of pinned host `command`; skip when absent, fail under CI=true."""
    exe = host_path(command)
    if exe is None:
        pin = pins()[command]
        reason = (f"host {pin.package}@{pin.version} is not installed in {CACHE}: "
                  f"run scripts/install-hosts")
        if os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    return exe


@pytest.fixture
def host_exe() -> Callable[[str], Path]:
    return require_host


@pytest.fixture
def endpoint() -> Iterator[ScriptedEndpoint]:
    with ScriptedEndpoint() as ep:
        yield ep


def _host(name: str, tmp_path: Path, endpoint: ScriptedEndpoint) -> Host:
    return Host.create(name, require_host(name), tmp_path / name, endpoint)


@pytest.fixture
def claude_host(tmp_path: Path, endpoint: ScriptedEndpoint) -> Host:
    return _host("claude", tmp_path, endpoint)


@pytest.fixture
def codex_host(tmp_path: Path, endpoint: ScriptedEndpoint) -> Host:
    return _host("codex", tmp_path, endpoint)


@pytest.fixture
def gemini_host(tmp_path: Path, endpoint: ScriptedEndpoint) -> Host:
    return _host("gemini", tmp_path, endpoint)


@pytest.fixture
def opencode_host(tmp_path: Path, endpoint: ScriptedEndpoint) -> Host:
    return _host("opencode", tmp_path, endpoint)
