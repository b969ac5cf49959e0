"""API keys come from the environment or the OS keyring and are never stored."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import keyring
import pytest
from keyring.backend import KeyringBackend

from tests.providers.conftest import FakeHttp
from tests.providers.test_http_adapters import SCHEMA, areq, message_answer
from wardian.config import SettingsStore, data_dir, open_state_db
from wardian.providers.catalog import ModelCatalog
from wardian.providers.registry import get_adapter


class MemoryKeyring(KeyringBackend):
    priority = 1

    def __init__(self) -> None:
        super().__init__()  # type: ignore[no-untyped-call]  # keyring's __init__ is unannotated
        self.secrets: dict[tuple[str, str], str] = {}

    def get_password(self, service: str, username: str) -> str | None:
        return self.secrets.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self.secrets[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        self.secrets.pop((service, username), None)


@pytest.fixture
def memory_keyring() -> Iterator[MemoryKeyring]:
    previous = keyring.get_keyring()
    backend = MemoryKeyring()
    keyring.set_keyring(backend)
    try:
        yield backend
    finally:
        keyring.set_keyring(previous)


def test_key_from_keyring_is_used_and_never_stored(fake_http: FakeHttp,
                                                   memory_keyring: MemoryKeyring,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    secret = "sk-ant-keyring-" + "q" * 24
    memory_keyring.set_password("wardian", "anthropic", secret)
    SettingsStore(open_state_db()).set("providers.anthropic.base_url", fake_http.url)
    fake_http.routes["POST /v1/messages"] = (200, message_answer("claude-opus-5"))
    fake_http.routes["GET /v1/models"] = (200, {"data": [
        {"id": "claude-opus-5", "capabilities": {"effort": {"high": {"supported": True}}}}],
        "has_more": False})
    result = get_adapter("anthropic").run(areq(output_schema=SCHEMA))
    assert fake_http.requests[0].headers["x-api-key"] == secret
    ModelCatalog(open_state_db()).refresh("anthropic", timeout_s=5)
    assert secret not in result.model_dump_json()
    for path in data_dir().rglob("*"):
        if path.is_file():
            assert secret.encode() not in path.read_bytes(), path


def test_environment_wins_over_keyring(fake_http: FakeHttp, memory_keyring: MemoryKeyring,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    memory_keyring.set_password("wardian", "anthropic", "from-keyring")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "from-env")
    SettingsStore(open_state_db()).set("providers.anthropic.base_url", fake_http.url)
    fake_http.routes["POST /v1/messages"] = (200, message_answer("claude-opus-5"))
    get_adapter("anthropic").run(areq())
    assert fake_http.requests[0].headers["x-api-key"] == "from-env"


@pytest.mark.skipif(sys.platform == "darwin", reason="the macOS keychain is the backend there")
def test_a_lookup_without_a_key_starts_no_process(tmp_path: Path) -> None:
    """keyring's macOS backend finds its frameworks through ctypes.util.find_library, which
    elsewhere runs ldconfig, gcc and ld: a command without an API key must not start them."""
    env = {k: v for k, v in os.environ.items()
           if k not in {"PYTHON_KEYRING_BACKEND", "ANTHROPIC_API_KEY"}}
    env.update(HOME=str(tmp_path), XDG_CONFIG_HOME=str(tmp_path / "config"),
               XDG_DATA_HOME=str(tmp_path / "data"),
               DBUS_SESSION_BUS_ADDRESS=f"unix:path={tmp_path / 'no-bus'}")
    code = ("import subprocess\n"
            "started = []\n"
            "real = subprocess.Popen.__init__\n"
            "def spy(self, args, *a, **k):\n"
            "    started.append(args)\n"
            "    real(self, args, *a, **k)\n"
            "subprocess.Popen.__init__ = spy\n"
            "from wardian.providers._common import get_api_key\n"
            "print(get_api_key('anthropic', ['ANTHROPIC_API_KEY'], required=False))\n"
            "print(started)\n")
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, check=True)
    assert done.stdout.splitlines() == ["None", "[]"], done.stderr
