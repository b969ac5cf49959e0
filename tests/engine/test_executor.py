"""The executor: when, retries with backoff, timeouts, cancel, role steps, secrets."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path
from typing import Any, ClassVar

import pytest
from tests.engine.helpers import actions, create_run, write_blueprint
from tests.waits import wait_until

from wardian.config import open_state_db
from wardian.engine.executor import execute_run, resume_run
from wardian.engine.runs import RunStore


@pytest.fixture
def store() -> RunStore:
    return RunStore(open_state_db())


def statuses(run: Any) -> list[tuple[str, int, str]]:
    return [(a.step_id, a.attempt, a.status) for a in run.attempts]


WHEN = """\
blueprint: {id: when-demo, name: When, version: 1}
inputs:
  mode: {type: enum, choices: [commit, review], default: review}
steps:
  - id: first
    action: noop
    with: {items: "{{ [1, 2, 3] }}"}
  - id: commit
    when: "inputs.mode == 'commit'"
    action: noop
  - id: review
    when: "inputs.mode == 'review' and steps.first.output['items'] | length == 3"
    action: noop
    with: {seen: "{{ steps.commit.status }}"}
"""


def test_when_skips_and_records(store: RunStore, tmp_path: Path) -> None:
    run = create_run(store, write_blueprint(tmp_path / "bp", WHEN))
    final = execute_run(run.id, store=store)
    assert final.status == "succeeded", final.error
    assert statuses(final) == [("first", 1, "succeeded"), ("commit", 1, "skipped"),
                               ("review", 1, "succeeded")]
    assert final.outputs()["review"] == {"seen": "skipped"}
    assert [e["kind"] for e in final.events] == [
        "run.created", "run.started", "step.started", "step.succeeded", "step.skipped",
        "step.started", "step.succeeded", "run.finished"]


RETRY = """\
blueprint: {id: retry-demo, name: Retry, version: 1}
steps:
  - id: flaky
    retry: {attempts: 4, backoff: 2s, max_backoff: 5s}
    action: test.flaky
  - id: after
    action: noop
"""


def test_retries_with_exponential_backoff_capped(store: RunStore, tmp_path: Path) -> None:
    calls: list[int] = []
    slept: list[float] = []

    def flaky(ctx: Any) -> dict[str, int]:
        calls.append(ctx.attempt)
        if len(calls) < 4:
            raise RuntimeError(f"boom {len(calls)}")
        return {"ok": len(calls)}

    with actions(**{"test.flaky": flaky}):
        run = create_run(store, write_blueprint(tmp_path / "bp", RETRY))
        final = execute_run(run.id, store=store, sleep=slept.append)
    assert final.status == "succeeded", final.error
    assert calls == [1, 2, 3, 4]
    assert slept == [2.0, 4.0, 5.0]  # 2s, doubled, then capped at max_backoff
    assert statuses(final)[:4] == [("flaky", 1, "failed"), ("flaky", 2, "failed"),
                                   ("flaky", 3, "failed"), ("flaky", 4, "succeeded")]
    assert final.attempts[0].error == "RuntimeError: boom 1"
    retried = [e for e in final.events if e["kind"] == "step.retried"]
    assert [e["data"]["delay_s"] for e in retried] == [2.0, 4.0, 5.0]


def test_retries_exhausted_fail_the_run(store: RunStore, tmp_path: Path) -> None:
    slept: list[float] = []

    def always(ctx: Any) -> None:
        raise ValueError("nope")

    text = RETRY.replace("attempts: 4", "attempts: 2")
    with actions(**{"test.flaky": always}):
        run = create_run(store, write_blueprint(tmp_path / "bp", text))
        final = execute_run(run.id, store=store, sleep=slept.append)
    assert final.status == "failed"
    assert final.error == "step 'flaky' failed after 2 attempt(s): ValueError: nope"
    assert slept == [2.0]
    assert "after" not in {a.step_id for a in final.attempts}


TIMEOUT = """\
blueprint: {id: timeout-demo, name: Timeout, version: 1}
steps:
  - id: slow
    timeout: 200ms
    action: test.slow
"""


def test_timeout_stops_a_cooperative_action(store: RunStore, tmp_path: Path) -> None:
    seen: dict[str, Any] = {}

    def slow(ctx: Any) -> str:
        seen["stopped"] = ctx.stop_event.wait(30)  # returns True once asked to stop
        return "late"

    with actions(**{"test.slow": slow}):
        run = create_run(store, write_blueprint(tmp_path / "bp", TIMEOUT))
        final = execute_run(run.id, store=store)
    assert final.status == "failed"
    assert statuses(final) == [("slow", 1, "timed_out")]
    assert (final.attempts[0].error or "").startswith("action 'test.slow' timed out after 0.2s")
    # Stopped by the timeout's request, not by its own 30 s wait running out (no bound on
    # the attempt's duration: that measured the machine's load).
    assert wait_until(lambda: seen, what="the action returned") == {"stopped": True}


def test_timeout_abandons_an_action_that_ignores_it(store: RunStore, tmp_path: Path) -> None:
    gate = threading.Event()

    def stubborn(ctx: Any) -> str:
        gate.wait(30)
        return "too late"

    with actions(**{"test.slow": stubborn}):
        run = create_run(store, write_blueprint(tmp_path / "bp", TIMEOUT))
        final = execute_run(run.id, store=store)
    gate.set()
    assert final.status == "failed"
    assert statuses(final) == [("slow", 1, "timed_out")]


CANCEL = """\
blueprint: {id: cancel-demo, name: Cancel, version: 1}
steps:
  - id: one
    action: test.one
  - id: two
    action: test.two
"""


def test_cancel_stops_at_the_next_safe_point(store: RunStore, tmp_path: Path) -> None:
    ran: list[str] = []

    def one(ctx: Any) -> None:
        ran.append("one")
        # as `automation run cancel` from elsewhere
        RunStore(open_state_db()).request_cancel(ctx.run_id)

    with actions(**{"test.one": one, "test.two": lambda ctx: ran.append("two")}):
        run = create_run(store, write_blueprint(tmp_path / "bp", CANCEL))
        final = execute_run(run.id, store=store)
    assert ran == ["one"]
    assert final.status == "cancelled"
    assert final.error == "cancelled before step 'two'"
    assert statuses(final) == [("one", 1, "succeeded")]
    assert "run.cancel_requested" in [e["kind"] for e in final.events]


def test_cancel_reaches_a_running_action_and_a_retry_wait(store: RunStore, tmp_path: Path
                                                          ) -> None:
    def one(ctx: Any) -> str:
        RunStore(open_state_db()).request_cancel(ctx.run_id)
        ctx.stop_event.wait(30)  # the executor notices the flag and asks us to stop
        return "stopped"

    text = CANCEL.replace("    action: test.one", "    timeout: 60s\n    action: test.one")
    with actions(**{"test.one": one, "test.two": lambda ctx: None}):
        run = create_run(store, write_blueprint(tmp_path / "bp", text))
        final = execute_run(run.id, store=store)
    assert final.status == "cancelled"
    assert statuses(final) == [("one", 1, "succeeded")]

    def failing(ctx: Any) -> None:
        raise RuntimeError("again")

    text = RETRY.replace("action: test.flaky", "action: test.fail")
    with actions(**{"test.fail": failing}):
        run = create_run(store, write_blueprint(tmp_path / "bp2", text))

        def cancel_instead_of_waiting(seconds: float) -> None:
            RunStore(open_state_db()).request_cancel(run.id)

        final = execute_run(run.id, store=store, sleep=cancel_instead_of_waiting)
    assert final.status == "cancelled"
    assert statuses(final) == [("flaky", 1, "failed")]


def test_cancel_a_queued_run_and_refuse_a_finished_one(store: RunStore, tmp_path: Path) -> None:
    from wardian.errors import UsageError

    run = create_run(store, write_blueprint(tmp_path / "bp", WHEN))
    assert store.request_cancel(run.id).status == "cancelled"
    assert execute_run(run.id, store=store).status == "cancelled"  # claim refused
    with pytest.raises(UsageError, match="already cancelled"):
        store.request_cancel(run.id)


SECRET = """\
blueprint: {id: secret-demo, name: Secret, version: 1}
inputs:
  token: {type: string, secret: true}
  user: {type: string, default: ada}
steps:
  - id: use
    action: noop
    with: {header: "Bearer {{ inputs.token }}", raw: "{{ inputs.token }}"}
  - id: tell
    action: log
    with: {message: "token is {{ steps.use.output.raw }}"}
  - id: leak
    action: test.leak
    with: {value: "{{ inputs.token }}"}
"""


def test_secrets_never_reach_the_database(store: RunStore, tmp_path: Path,
                                          wardian_home: Path) -> None:
    secret = "s3cr3t-T0KEN-value"

    def leak(ctx: Any, value: str) -> None:
        ctx.emit("note", {"value": value})
        raise RuntimeError(f"server rejected {value}")

    with actions(**{"test.leak": leak}):
        run = create_run(store, write_blueprint(tmp_path / "bp", SECRET),
                         inputs={"token": secret})
        final = execute_run(run.id, store=store, secret_inputs={"token": secret})
        # the secret is not stored, so a resume must be given it again
        resumed = resume_run(run.id, store=store)
    assert resumed.status == "failed"
    assert "secret input 'token' is never stored" in (resumed.error or "")
    assert final.status == "failed"
    assert final.inputs == {"token": "***", "user": "ada"}
    assert final.attempts[0].input["with"] == {"header": "Bearer ***", "raw": "***"}
    assert final.error == "step 'leak' failed after 1 attempt(s): RuntimeError: server rejected ***"
    conn = sqlite3.connect(wardian_home / "state.db")
    for table in ("runs", "step_attempts", "run_events"):
        for row in conn.execute(f"SELECT * FROM {table}"):
            assert secret not in " ".join(str(v) for v in row), table
    conn.close()


def test_completed_steps_are_not_repeated_on_resume(store: RunStore, tmp_path: Path) -> None:
    ran: list[str] = []
    fail = {"two": True}

    def two(ctx: Any) -> str:
        ran.append("two")
        if fail["two"]:
            raise RuntimeError("first time")
        return "ok"

    with actions(**{"test.one": lambda ctx: ran.append("one"), "test.two": two}):
        run = create_run(store, write_blueprint(tmp_path / "bp", CANCEL))
        assert execute_run(run.id, store=store).status == "failed"
        fail["two"] = False
        final = resume_run(run.id[:8], store=store)
    assert final.status == "succeeded"
    assert ran == ["one", "two", "two"]
    assert statuses(final) == [("one", 1, "succeeded"), ("two", 1, "failed"),
                               ("two", 2, "succeeded")]


def test_a_changed_blueprint_fails_the_run(store: RunStore, tmp_path: Path) -> None:
    path = write_blueprint(tmp_path / "bp", WHEN)
    run = create_run(store, path)
    path.write_text(WHEN.replace("name: When", "name: Changed"))
    final = execute_run(run.id, store=store)
    assert final.status == "failed"
    assert "changed since the run was created" in (final.error or "")



def test_a_copy_validated_without_action_names_is_not_trusted(store: RunStore,
                                                                tmp_path: Path) -> None:
    # A caller may validate without checking action names (known_actions=None) and hand
    # that copy over; the executor then validates again with the registry's names and
    # fails the run up front.
    from wardian.blueprints.validate import load_blueprint

    head, _, tail = WHEN.rpartition("action: noop")  # the last step: the first ones could run
    path = write_blueprint(tmp_path / "bp", head + "action: nope" + tail)
    loaded = load_blueprint(path, known_actions=None)
    run, _created = store.create_run(
        blueprint_id=loaded.id, agent_id=None, assignments={}, inputs={},
        invocation={"trigger": "manual", "payload": {}}, blueprint=loaded)
    final = execute_run(run.id, store=store, blueprint=loaded)
    assert final.status == "failed"
    assert "unknown action 'nope'" in (final.error or "")
    assert store.get(run.id, detail=True).attempts == []


def test_an_edited_prompt_file_fails_the_run_even_when_handed_the_validated_copy(
        store: RunStore, tmp_path: Path) -> None:
    from wardian.blueprints.validate import load_blueprint

    path = write_blueprint(tmp_path / "bp", ROLE, {"ask.md.j2": "Keep {{ inputs.limit }}\n"})
    run = create_run(store, path)
    loaded = load_blueprint(path)
    assert loaded.unchanged_on_disk()
    (tmp_path / "bp" / "ask.md.j2").write_text("Keep nothing\n")
    assert not loaded.unchanged_on_disk()
    final = execute_run(run.id, store=store, blueprint=loaded)
    assert final.status == "failed"
    assert "changed since the run was created" in (final.error or "")


ROLE = """\
blueprint: {id: role-demo, name: Role, version: 1}
roles: {curator: You decide what to remember.}
inputs:
  limit: {type: integer, default: 2}
steps:
  - id: load
    action: noop
    with: {messages: "{{ ['a', 'b'] }}"}
  - id: ask
    role: curator
    timeout: 30s
    retry: {attempts: 2}
    prompt: {file: ask.md.j2}
    output:
      type: object
      required: [keep]
      properties: {keep: {type: array, items: {type: string}}}
      additionalProperties: false
    payload:
      messages: "{{ steps.load.output.messages }}"
      limit: "{{ inputs.limit }}"
"""


class FakeAdapter:
    """A provider double registered through the real registry API."""

    name: ClassVar[str] = "fake-test"
    answers: ClassVar[list[Any]] = []
    requests: ClassVar[list[Any]] = []

    def run(self, request: Any, *, cancel: threading.Event | None = None) -> Any:
        from wardian.providers.base import ProviderResult

        self.requests.append(request)
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return ProviderResult(text="{}", output=answer, model="fake-1")


@pytest.fixture
def fake_adapter() -> Any:
    registry = pytest.importorskip("wardian.providers.registry")
    from wardian.providers.base import ProviderAdapter

    adapter_cls: type[FakeAdapter] = type("Fake", (FakeAdapter, ProviderAdapter), {})
    adapter_cls.answers = []
    adapter_cls.requests = []
    registry.register_adapter(adapter_cls(), replace=True)
    yield adapter_cls
    registry.unregister_adapter("fake-test")


def test_role_step_goes_through_the_adapter(store: RunStore, tmp_path: Path,
                                            fake_adapter: Any) -> None:
    fake_adapter.answers[:] = [{"keep": 5}, {"keep": ["a"]}]
    path = write_blueprint(tmp_path / "bp", ROLE,
                           {"ask.md.j2": "Keep at most {{ inputs.limit }} of "
                                         "{{ steps.load.output.messages | join(',') }}"})
    assignments = {"curator": {"target_type": "temporary_provider", "provider": "fake-test",
                               "model": "fake-1"}}
    run = create_run(store, path, assignments=assignments, workspace=str(tmp_path))
    final = execute_run(run.id, store=store)
    assert final.status == "succeeded", final.error
    assert len(fake_adapter.requests) == 2
    second = fake_adapter.requests[1]
    assert second.prompt == "Keep at most 2 of a,b"
    assert second.system == "You decide what to remember."
    assert second.payload == {"messages": ["a", "b"], "limit": 2}
    assert (second.provider, second.model, second.timeout_s) == ("fake-test", "fake-1", 30.0)
    assert second.cwd == str(tmp_path)
    assert second.output_schema["required"] == ["keep"]
    assert statuses(final)[1:] == [("ask", 1, "failed"), ("ask", 2, "succeeded")]
    assert "does not match the output schema at $['keep']" in (final.attempts[1].error or "")
    assert final.outputs()["ask"] == {"keep": ["a"]}


def test_role_step_provider_timeout_is_recorded(store: RunStore, tmp_path: Path,
                                                fake_adapter: Any) -> None:
    from wardian.providers.errors import ProviderTimeout

    fake_adapter.answers[:] = [ProviderTimeout("ran past 30s", provider="fake-test")] * 2
    path = write_blueprint(tmp_path / "bp", ROLE, {"ask.md.j2": "hi"})
    run = create_run(store, path, assignments={"curator": {
        "target_type": "temporary_provider", "provider": "fake-test"}})
    final = execute_run(run.id, store=store, sleep=lambda s: None)
    assert final.status == "failed"
    assert [a.status for a in final.attempts[1:]] == ["timed_out", "timed_out"]


def test_cancel_reaches_an_adapter_that_accepts_it(store: RunStore, tmp_path: Path) -> None:
    registry = pytest.importorskip("wardian.providers.registry")
    from wardian.providers.base import ProviderAdapter, ProviderRequest, ProviderResult
    from wardian.providers.errors import ProviderCancelled

    class Cancellable(ProviderAdapter):
        name = "fake-cancel"

        def run(self, request: ProviderRequest, cancel: threading.Event | None = None
                ) -> ProviderResult:
            assert cancel is not None
            # `automation run cancel` from elsewhere
            RunStore(open_state_db()).request_cancel(run.id)
            if cancel.wait(30):
                raise ProviderCancelled("killed the process tree", provider=self.name)
            return ProviderResult(text="{}", output={"keep": []})

    registry.register_adapter(Cancellable(), replace=True)
    try:
        path = write_blueprint(tmp_path / "bp", ROLE, {"ask.md.j2": "hi"})
        run = create_run(store, path, assignments={"curator": {
            "target_type": "temporary_provider", "provider": "fake-cancel"}})
        final = execute_run(run.id, store=store)
    finally:
        registry.unregister_adapter("fake-cancel")
    assert final.status == "cancelled"
    assert statuses(final)[1:] == [("ask", 1, "cancelled")]
    assert final.error == "cancelled during step 'ask'"


def test_cancel_reaches_an_action_without_timeout(store: RunStore, tmp_path: Path) -> None:
    def one(ctx: Any) -> str:
        RunStore(open_state_db()).request_cancel(ctx.run_id)
        return "stopped" if ctx.stop_event.wait(30) else "never asked"

    with actions(**{"test.one": one, "test.two": lambda ctx: None}):
        run = create_run(store, write_blueprint(tmp_path / "bp", CANCEL))
        final = execute_run(run.id, store=store)
    assert final.status == "cancelled"
    assert final.outputs() == {"one": "stopped"}
