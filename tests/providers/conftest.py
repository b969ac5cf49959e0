"""Fixtures for provider tests: fake CLIs on PATH, and a loopback HTTP server."""

from __future__ import annotations

import contextlib
import json
import os
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import psutil
import pytest

from wardian.providers.errors import ProviderTimeout

FAKE = Path(__file__).resolve().parents[1] / "fakes" / "fake_provider.py"
TOOLS = ("codex", "claude", "gemini", "opencode")


@dataclass
class FakeCli:
    """The fake provider CLIs: where they record calls, and how to pick a scenario."""

    bin_dir: Path
    record: Path
    grandchild_pid_file: Path
    monkeypatch: pytest.MonkeyPatch

    def scenario(self, name: str, answer: str | None = None) -> None:
        self.monkeypatch.setenv("FAKE_PROVIDER_SCENARIO", name)
        if answer is not None:
            self.monkeypatch.setenv("FAKE_PROVIDER_ANSWER", answer)

    def calls(self) -> list[dict[str, Any]]:
        if not self.record.exists():
            return []
        return [json.loads(line) for line in self.record.read_text().splitlines() if line]

    def grandchild_pid(self) -> int:
        return int(self.grandchild_pid_file.read_text())

    def time_out(self, call: Callable[[float], object]) -> ProviderTimeout:
        """`time_out_once_ready` for ``call(timeout_s)`` on the ``hang`` scenario."""
        self.scenario("hang")
        return time_out_once_ready(self.grandchild_pid_file, call)


def time_out_once_ready(ready: Path, call: Callable[[float], object]) -> ProviderTimeout:
    """The ProviderTimeout of ``call(timeout_s)`` from the first timeout in a growing series
    that fired after the child had written `ready` (its grandchild's pid).

    A shorter timeout only met a child that was not ready yet (nothing of the product is
    wrong then), so it is retried longer instead of fixing one long enough for a loaded
    machine.
    """
    for timeout_s in (0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0):
        with pytest.raises(ProviderTimeout) as info:
            call(timeout_s)
        if ready.exists():
            return info.value
    pytest.fail(f"the child never wrote {ready} before its timeout")


@pytest.fixture
def fake_cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeCli]:
    """Put fake ``codex``/``claude``/``gemini``/``opencode`` (and nothing else) on PATH."""
    bin_dir = tmp_path / "fake-bin"
    bin_dir.mkdir()
    for tool in TOOLS:
        launcher = bin_dir / tool
        launcher.write_text(
            f"#!{sys.executable}\n"
            "import runpy\n"
            f"runpy.run_path({str(FAKE)!r}, init_globals={{'FAKE_TOOL': {tool!r}}}, "
            "run_name='__main__')\n"
        )
        launcher.chmod(0o755)
    state = tmp_path / "fake-state"
    state.mkdir()
    fake = FakeCli(bin_dir, tmp_path / "calls.jsonl", tmp_path / "grandchild.pid", monkeypatch)
    monkeypatch.setenv("PATH", str(bin_dir))
    monkeypatch.setenv("FAKE_PROVIDER_RECORD", str(fake.record))
    monkeypatch.setenv("FAKE_PROVIDER_STATE", str(state))
    monkeypatch.setenv("FAKE_PROVIDER_GRANDCHILD_PID", str(fake.grandchild_pid_file))
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex-home"))
    for key in ("CLAUDE_CODE_EFFORT_LEVEL", "ANTHROPIC_MODEL", "GEMINI_MODEL",
                "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("FAKE_PROVIDER_SCENARIO", "ok")
    yield fake
    # Nothing a test started may outlive it.
    if fake.grandchild_pid_file.exists():
        with contextlib.suppress(psutil.NoSuchProcess, ValueError):
            psutil.Process(fake.grandchild_pid()).kill()


def gone(pid: int) -> bool:
    """True when `pid` no longer runs (exited, or a zombie awaiting its reaper)."""
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


@dataclass
class HttpRecord:
    method: str
    path: str
    headers: dict[str, str]
    body: Any


@dataclass
class FakeHttp:
    """A real HTTP server on 127.0.0.1; `routes` maps "METHOD /path" to (status, body)."""

    url: str
    routes: dict[str, tuple[int, Any] | Callable[[HttpRecord], tuple[int, Any]]] = field(
        default_factory=dict)
    requests: list[HttpRecord] = field(default_factory=list)


@pytest.fixture
def fake_http() -> Iterator[FakeHttp]:
    """Serve canned provider answers on 127.0.0.1 from a thread; records every request."""
    fake = FakeHttp(url="")

    class Handler(BaseHTTPRequestHandler):
        def _serve(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            path = self.path.split("?", 1)[0]
            rec = HttpRecord(self.command, self.path, {k.lower(): v for k, v in
                                                       self.headers.items()},
                             json.loads(raw) if raw else None)
            fake.requests.append(rec)
            route = fake.routes.get(f"{self.command} {path}")
            status, body = (404, {"error": {"message": "no route"}}) if route is None else (
                route(rec) if callable(route) else route)
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            try:
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (timeout tests)

        do_GET = _serve
        do_POST = _serve

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    fake.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                              daemon=True)
    thread.start()
    try:
        yield fake
    finally:
        server.shutdown()
        server.server_close()


def real_providers_enabled() -> bool:
    """Opt-in switch for tests that call real provider CLIs/APIs."""
    return os.environ.get("WARDIAN_REAL_PROVIDERS") == "1"


@pytest.fixture(autouse=True)
def no_os_keyring(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests never read the developer's real keyring (the null backend finds nothing)."""
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.null.Keyring")
