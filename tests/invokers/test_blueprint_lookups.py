"""The blueprint is validated once per session-close event (issue 13): the invoker's health
check, the run's creation and its execution share the copy the drain loaded, with no
process-global cache holding them together."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tests.e2e._support import write_claude_session
from tests.engine.test_step_storage import TURNS, _setup_consolidation
from typer.testing import CliRunner

import wardian.blueprints.validate as validate
from wardian.config import open_state_db
from wardian.engine.runs import RunStore


def _count_validations(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    seen: list[str] = []
    real = validate.validate_file

    def counting(path: Any, **kwargs: Any) -> Any:
        seen.append(Path(path).parent.name)
        return real(path, **kwargs)

    monkeypatch.setattr(validate, "validate_file", counting)
    return seen


def test_one_event_validates_the_blueprint_once(cli: CliRunner, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    from wardian.invokers.drain import drain_once
    from wardian.runtime.session_events import record_session_close

    agent_id, invoker_id = _setup_consolidation(cli, tmp_path)
    transcript = write_claude_session(tmp_path / "session.jsonl", "s-once", TURNS[:4])
    record_session_close(agent_id, "clear", session_id="s-1", transcript_path=str(transcript),
                         provider="claude", start_drain=False)
    seen = _count_validations(monkeypatch)
    report = drain_once()
    assert report.executed == 1 and not report.errors, report
    (run,) = RunStore(open_state_db(), recover=False).list(invoker_id=invoker_id)
    assert run.status == "succeeded", run.error
    assert seen == ["memory-consolidation"]


def test_the_blueprint_module_keeps_no_cache_of_validated_blueprints() -> None:
    import inspect

    source = inspect.getsource(validate)
    assert "loaded_by_hash" not in source and "_RECENT" not in source
