"""API keys come from the environment or the OS keyring and are never stored."""

from __future__ import annotations

from collections.abc import Iterator

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
