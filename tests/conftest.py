"""Shared fixtures: every test gets its own WARDIAN_HOME and a clean WARDIAN_* environment."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus" / "transcripts"
"""The shared transcript corpus (never copied into the project; tests skip when absent)."""


@pytest.fixture(autouse=True)
def wardian_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Point WARDIAN_HOME at a fresh temp dir and drop every other WARDIAN_* variable."""
    for key in list(os.environ):
        if key.startswith("WARDIAN_"):
            monkeypatch.delenv(key, raising=False)
    home = tmp_path / "wardian-home"
    home.mkdir(mode=0o700)  # as Wardian creates it (a wider one is tightened, with a notice)
    monkeypatch.setenv("WARDIAN_HOME", str(home))
    yield home


@pytest.fixture
def cli() -> CliRunner:
    """Typer's runner for the real `wardian` app (stderr kept separate)."""
    return CliRunner()


def invoke(
    runner: CliRunner, *args: str, input: str | None = None, env: dict[str, str] | None = None
) -> Result:
    """Run `wardian ARGS…` in-process and return the click Result."""
    from wardian.cli.main import app

    return runner.invoke(app, list(args), input=input, env=env)


@pytest.fixture
def corpus_dir() -> Path:
    """The transcript corpus folder, or skip with a reason when it is absent."""
    if not CORPUS.is_dir():
        pytest.skip(f"transcript corpus not found at {CORPUS} (it lives in ../shared/corpus)")
    return CORPUS
