"""Execute a run: claim it, walk its steps in order, record every attempt and event.

Semantics (docs/blueprint-guide.md):

* **Claim.** `execute_run` moves the run ``queued -> running`` atomically, stamping the
  owner's process identity (pid + psutil create time); a second process gets ``False`` from
  the claim and just returns the stored run. Opening the store first marks runs owned by
  dead processes ``interrupted``. On PostgreSQL the claim is a lease renewed at every
  cancel check (`RunStore.keep_lease`); a worker whose lease was taken over stops writing.
* **Resume.** Steps that already have a succeeded or skipped attempt are not run again;
  their stored outputs feed the templates. `resume_run` requeues an interrupted, failed or
  cancelled run and executes it; the step it stopped in gets its full retry budget again
  (attempt numbers keep counting). Secret inputs are never stored: pass them again
  (``secret_inputs``) or the run fails saying which ``--input`` is missing (defaults from
  the blueprint are used when declared).
* **when.** A false `when` records the step as ``skipped`` (output None).
* **Retry.** Up to ``retry.attempts`` tries; before try *n+1* it waits
  ``backoff * 2**(n-1)`` capped at ``max_backoff``. The wait goes through the injected
  `sleep` (tests pass a fake clock) in slices, so a cancel request ends it early.
* **Timeout.** Role steps pass the timeout to the provider adapter as ``timeout_s``; the
  adapter kills the provider's whole process tree. Action steps run in a worker thread
  (so a cancel can reach them too): when a timeout expires the attempt is recorded
  ``timed_out`` at once and ``ctx.should_stop()`` turns true; Python cannot kill a thread,
  so an action that never checks it keeps running in the background until it returns (its
  result is discarded).
* **Cancel.** ``request_cancel`` sets a flag checked before every step and attempt, during
  retry waits, and while waiting for a step (which is then asked to stop: ``should_stop()``
  for actions, a ``cancel`` event for adapters whose ``run`` accepts one). The run ends
  ``cancelled`` at that safe point.
* **Step references.** An action argument named ``<name>_step`` whose value is a step id
  (``batch_step: curate``) is a reference declared in the blueprint: validation checks the
  step exists and runs before (`wardian.blueprints.validate`), and the action is called with
  ``<name>`` = that step's output (null when it was skipped), the argument itself passed on
  only when the action registered it (``register_action(..., step_refs=...)``). A
  registered reference's default step (``memory.commit``: ``archive_step`` = ``archive``)
  is used when that step exists and the blueprint gives neither ``<name>`` nor
  ``<name>_step``. The stored input holds the step id, never a copy.
* **Outputs by reference.** A step's output is stored once: where a later step's input
  value is a whole template naming a path into an earlier output (``{{ steps.x.output }}``,
  ``{{ steps.x.output.y[0] }}``) and its rendered value equals that path of the stored
  output, the stored input refers to it (`wardian.engine.runs.OutputRef`) instead of holding
  a copy; `RunStore.attempts` resolves the reference for every reader. The reference is read
  from the blueprint's text, never from the rendered objects.
* **Outputs kept elsewhere.** An action with an `OutputStorage`
  (`wardian.engine.actions`) has its output stored in its short form (``archive.load``: the
  archive slice's seq range and digest, not its messages); `RunStore.attempts` expands it
  for every reader, so templates, later steps and a resume see the whole output.
* **Secrets.** Values of secret inputs are replaced by ``***`` in everything stored:
  inputs, rendered step inputs, outputs, errors and events; in the rendered step inputs,
  outputs, errors and events anything else the shared secret scanner finds is replaced by
  a typed ``[REDACTED:<kind>]`` placeholder.
"""

from __future__ import annotations

import copy
import json
import re
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from wardian._db import in_this_scope
from wardian._util import new_id
from wardian.config import open_state_db
from wardian.engine.runs import (
    REDACTED,
    LeaseLost,
    OutputRef,
    PathPart,
    Run,
    RunStore,
    value_at,
)
from wardian.errors import UsageError, ValidationError, WardianError

if TYPE_CHECKING:  # pydantic models: the drain imports this module on every worker start
    from wardian.blueprints.schema import Step
    from wardian.blueprints.validate import LoadedBlueprint
    from wardian.providers.base import ProviderAdapter, ProviderResult
    from wardian.runtime.step_launch import StepLaunch

AdapterLookup = Callable[[str], "ProviderAdapter"]
"""Provider name -> its adapter (`wardian.providers.registry.get_adapter` by default)."""

T = TypeVar("T")

__all__ = ["Redactor", "execute_run", "resolve_inputs", "resume_run"]

DEFAULT_ROLE_TIMEOUT_S = 600.0
POLL_S = 0.2
MIN_REF_CHARS = 128
"""A part of an input is stored as a reference only when its JSON is at least this long
(a reference costs about 80 characters itself)."""


class Redactor:
    """Replaces secret values inside any JSON-able structure before it is stored.

    The run's secret inputs become ``***``; anything else the shared secret scanner
    (`wardian.memory.secret_scan`) finds — a key in a step's output, a password in an
    event — becomes a typed ``[REDACTED:<kind>]`` placeholder. A string that is exactly a
    canonical UUID or an ISO-8601 UTC time (record and revision ids, timestamps: most of
    the strings of a large memory snapshot) holds none and is not scanned; each other
    string is scanned once per redactor (a run stores one record list as one step's
    output and again as the next step's input).
    """

    _PLAIN = re.compile(
        r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
        r"|\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,6})?(?:Z|\+00:00)")
    _MEMO_CHARS = 4_096
    _MEMO_ITEMS = 200_000

    def __init__(self, secrets: list[str]) -> None:
        values = sorted({s for s in secrets if s}, key=len, reverse=True)
        self._exact = set(values)
        long = [v for v in values if len(v) >= 3]
        self._pattern = re.compile("|".join(re.escape(v) for v in long)) if long else None
        self._memo: dict[str, str] = {}

    def scrub(self, value: Any) -> Any:
        """A copy of `value` with every secret replaced (see the class docstring)."""
        if isinstance(value, str):
            return self._string(value)
        if not isinstance(value, dict | list | tuple):
            return value
        # without secret inputs a string scanned before is its memo entry: looked up here,
        # in the loop, since a large output is mostly such leaves
        known = self._memo.get if not self._exact else (lambda _v: None)
        items = value.items() if isinstance(value, dict) else enumerate(value)
        out: dict[Any, Any] = {}
        for key, item in items:
            if isinstance(item, str):
                clean = known(item)
                out[key] = clean if clean is not None else self._string(item)
            elif item is None or isinstance(item, int | float):
                out[key] = item
            else:
                out[key] = self.scrub(item)
        return out if isinstance(value, dict) else list(out.values())

    def _string(self, value: str) -> str:
        if value in self._exact:
            return REDACTED
        if self._pattern:
            value = self._pattern.sub(REDACTED, value)
        known = self._memo.get(value)
        if known is not None:
            return known
        if len(value) <= 36 and self._PLAIN.fullmatch(value):
            clean = value
        else:
            from wardian.memory.secret_scan import redact

            clean = redact(value)[0]
        if len(value) <= self._MEMO_CHARS and len(self._memo) < self._MEMO_ITEMS:
            self._memo[value] = clean
        return clean


def resolve_inputs(loaded: LoadedBlueprint, given: dict[str, Any], *,
                   from_text: bool) -> dict[str, Any]:
    """Apply defaults and check/convert inputs against blueprint `loaded`.

    Args:
        given: name -> value (strings when `from_text`, e.g. from ``--input k=v``).

    Raises:
        ValidationError (exit 2): an unknown input (nearest named), a bad value, or a
            required input (no default) missing.
    """
    from wardian.blueprints.errors import nearest
    from wardian.blueprints.schema import coerce_input

    specs = loaded.blueprint.inputs
    out: dict[str, Any] = {}
    for name, value in given.items():
        if name not in specs:
            guess = nearest(name, specs)
            raise ValidationError(
                f"unknown input {name!r}; the blueprint declares "
                + (", ".join(sorted(specs)) or "no inputs")
                + (f" (did you mean {guess!r}?)" if guess else ""), path=f"inputs.{name}")
        try:
            out[name] = coerce_input(specs[name], value, from_text=from_text)
        except ValueError as exc:
            shown = REDACTED if specs[name].secret else repr(value)
            raise ValidationError(f"expected {exc}, found {shown}", path=f"inputs.{name}"
                                  ) from None
    for name, spec in specs.items():
        if name not in out:
            if spec.default is None:
                raise ValidationError(f"input {name!r} is required (it has no default)",
                                      path=f"inputs.{name}", hint=f"pass --input {name}=VALUE")
            out[name] = spec.default
    return out


def execute_run(
    run_id: str,
    *,
    store: RunStore | None = None,
    secret_inputs: dict[str, Any] | None = None,
    sleep: Callable[[float], None] | None = None,
    get_adapter: AdapterLookup | None = None,
    blueprint: LoadedBlueprint | None = None,
    detail: bool = True,
) -> Run:
    """Execute a queued run to completion in this process (see the module docstring).

    Args:
        run_id: the run id (or unique prefix).
        store: the run store (default: one over `wardian.config.open_state_db()`).
        secret_inputs: values of secret inputs (never stored).
        sleep: ``sleep(seconds)`` used for retry backoff (tests inject a fake clock).
        get_adapter: provider lookup (default `wardian.providers.registry.get_adapter`).
        blueprint: the validated blueprint the caller loaded for this run (the drain loads
            one per event). Used when it is the run's (same path and hash), every action
            it names is registered and its files still hash the same; otherwise the
            blueprint is loaded from the run's path and must have the run's hash.
        detail: return the run with its attempts and events (False: the run alone, two
            reads fewer, for a caller that only needs it done — the drain).

    Returns:
        The final run (with attempts and events when `detail`). Step failures never raise:
        see `status`.

    Raises:
        NotFoundError / AmbiguousIdError: no run, or several, with that id or prefix.
    """
    store = store or RunStore(open_state_db())
    # The claim first, by the id as given: a full id (every caller but the CLI's) is then
    # resolved by the claim itself, a read fewer per run; a prefix or a run that is not
    # queued any more is looked up after.
    claimed = store.claim(run_id)
    if not claimed:
        run = store.get(run_id)
        if run.id == run_id or not store.claim(run.id):
            return store.get(run.id, detail=detail)
        run_id = run.id
    return execute_claimed(run_id, store=store, secret_inputs=secret_inputs, sleep=sleep,
                           get_adapter=get_adapter, blueprint=blueprint, detail=detail)


def execute_claimed(run_id: str, *, store: RunStore,
                    secret_inputs: dict[str, Any] | None = None,
                    sleep: Callable[[float], None] | None = None,
                    get_adapter: AdapterLookup | None = None,
                    blueprint: LoadedBlueprint | None = None, detail: bool = True) -> Run:
    """Execute a run this process has just claimed (`RunStore.claim` returned True for its
    full id `run_id`): what `execute_run` does after its claim, for a caller that claimed
    the run itself (the drain, for the runs it has just created). Arguments as there.

    Returns:
        The final run (with attempts and events when `detail`).
    """
    try:
        _Execution(store, run_id, secret_inputs or {}, sleep, get_adapter, blueprint).run()
    except LeaseLost:
        # Another worker reclaimed the run (its lease had expired): it is theirs now, so
        # nothing more is written to it here.
        return store.get(run_id, detail=detail)
    except (KeyboardInterrupt, SystemExit):
        store.finish(run_id, "interrupted", "the process was interrupted")
        raise
    except Exception as exc:  # a bug must not leave the run 'running' for ever
        store.finish(run_id, "failed", f"internal error: {type(exc).__name__}: {exc}")
        raise
    return store.get(run_id, detail=detail)


def resume_run(run_id: str, *, store: RunStore,
               secret_inputs: dict[str, Any] | None = None,
               sleep: Callable[[float], None] | None = None,
               get_adapter: AdapterLookup | None = None,
               blueprint: LoadedBlueprint | None = None) -> Run:
    """Requeue an interrupted/failed/cancelled run and execute it, skipping completed steps
    (arguments as in `execute_run`; `store` is the run store of the caller's open state
    database).

    Raises:
        UsageError: the run is not resumable (queued, running, succeeded, skipped).
    """
    run = store.requeue(run_id)
    return execute_run(run.id, store=store, secret_inputs=secret_inputs, sleep=sleep,
                       get_adapter=get_adapter, blueprint=blueprint)


class _StepFailed(Exception):
    def __init__(self, message: str, *, status: str = "failed", retry: bool = True) -> None:
        super().__init__(message)
        self.status = status
        self.retry = retry


class _Cancelled(Exception):
    pass


class _Execution:
    def __init__(self, store: RunStore, run_id: str, secrets: dict[str, Any],
                 sleep: Callable[[float], None] | None,
                 get_adapter: AdapterLookup | None,
                 blueprint: LoadedBlueprint | None = None) -> None:
        self.store = store
        self.given = blueprint
        self.run_id = run_id
        self.secrets = secrets
        self.sleep = sleep
        self.get_adapter = get_adapter
        self.lock = threading.Lock()
        self.redactor = Redactor([])
        self.stored_outputs: dict[str, tuple[int, Any]] = {}
        """step id -> (attempt, output as stored) of each succeeded step."""

    # -- helpers ---------------------------------------------------------------------------

    def cancelled(self) -> bool:
        with self.lock:
            # Every safe point also renews the run's lease (PostgreSQL; no-op on SQLite).
            self.store.keep_lease(self.run_id)
            return self.store.cancel_requested(self.run_id)

    def emit(self, kind: str, data: dict[str, Any], step_id: str | None = None,
             attempt: int | None = None) -> None:
        with self.lock:
            self.store.add_event(self.run_id, kind, self.redactor.scrub(data), step_id=step_id,
                                 attempt=attempt)

    def wait(self, seconds: float) -> None:
        """Wait `seconds` for a retry, ending early (raising _Cancelled) on cancel."""
        if self.sleep is not None:
            self.sleep(seconds)
        else:
            deadline = time.monotonic() + seconds
            while (left := deadline - time.monotonic()) > 0:
                if self.cancelled():
                    raise _Cancelled
                time.sleep(min(left, POLL_S))
        if self.cancelled():
            raise _Cancelled

    # -- the run -----------------------------------------------------------------------------

    def run(self) -> None:
        run = self.store.get(self.run_id)
        run.attempts = self.store.attempts(run.id)  # what a resumed run has done (no events)
        try:
            loaded = self._load(run)
            inputs = self._inputs(run, loaded)
        except WardianError as exc:
            self.store.finish(run.id, "failed", exc.render())
            return
        specs = loaded.blueprint.inputs
        # A secret's declared default is in the blueprint file, so it is no secret; only
        # values given to the run are scrubbed.
        self.redactor = Redactor([
            str(inputs[n]) for n in run.secret_inputs if inputs.get(n) is not None
            and (n not in specs or inputs[n] != specs[n].default)])
        payload = run.invocation.get("payload") or {}
        context: dict[str, Any] = {
            "inputs": inputs,
            "invocation": {
                "trigger": run.trigger, "payload": payload, "agent_id": run.agent_id,
                "agent_name": payload.get("agent_name"), "workspace": run.workspace,
                "archive": payload.get("archive"), "time": run.created_at, "run_id": run.id,
                "idempotency_key": run.idempotency_key,
            },
            "steps": {},
            "roles": dict(loaded.blueprint.roles),
        }
        next_attempt: dict[str, int] = {}
        for attempt in run.attempts:
            next_attempt[attempt.step_id] = max(next_attempt.get(attempt.step_id, 1),
                                                attempt.attempt + 1)
            if attempt.status in ("succeeded", "skipped"):
                context["steps"][attempt.step_id] = {"output": attempt.output,
                                                     "status": attempt.status}
            if attempt.status == "succeeded":
                self.stored_outputs[attempt.step_id] = (attempt.attempt, attempt.output)
        for index, step in enumerate(loaded.blueprint.steps):
            if step.id in context["steps"]:
                continue
            if self.cancelled():
                self.store.finish(run.id, "cancelled", f"cancelled before step {step.id!r}")
                return
            try:
                outcome = self._step(run, loaded, index, step, context,
                                     next_attempt.get(step.id, 1))
            except _Cancelled:
                self.store.finish(run.id, "cancelled", f"cancelled during step {step.id!r}")
                return
            if outcome is not None:
                self.store.finish(run.id, "failed", self.redactor.scrub(outcome))
                return
        if self.cancelled():
            self.store.finish(run.id, "cancelled", "cancelled after the last step")
            return
        self.store.finish(run.id, "succeeded")

    def _load(self, run: Run) -> LoadedBlueprint:
        from wardian.blueprints.library import find_blueprint
        from wardian.engine.actions import known_actions

        actions = known_actions()
        given = self.given
        # The caller's copy may have been validated without action names (the validator's
        # known_actions=None): then it is loaded again here and the unknown action reported.
        if (given is not None and run.blueprint_hash == given.source_hash
                and run.blueprint_path == str(given.path)
                and all(s.action is None or s.action in actions for s in given.blueprint.steps)
                and given.unchanged_on_disk()):
            return given
        loaded = find_blueprint(run.blueprint_path or run.blueprint_id, known_actions=actions)
        if run.blueprint_hash and loaded.source_hash != run.blueprint_hash:
            raise UsageError(
                f"blueprint {run.blueprint_id!r} changed since the run was created "
                f"(was {run.blueprint_hash[:19]}, now {loaded.source_hash[:19]})",
                hint="start a new run with `wardian automation run start`")
        return loaded

    def _inputs(self, run: Run, loaded: LoadedBlueprint) -> dict[str, Any]:
        given = dict(run.inputs)
        for name in run.secret_inputs:
            if given.get(name) == REDACTED:
                if name in self.secrets:
                    given[name] = self.secrets[name]
                else:
                    spec = loaded.blueprint.inputs.get(name)
                    if spec is None or spec.default is None:
                        raise UsageError(
                            f"secret input {name!r} is never stored, and this process was not "
                            "given it", hint=f"resume with --input {name}=VALUE")
                    given.pop(name)
        # Invokers store --input values as text; accept both text and native forms.
        return resolve_inputs(loaded, given, from_text=True)

    def _step(self, run: Run, loaded: LoadedBlueprint, index: int, step: Step,
              context: dict[str, Any], first_attempt: int) -> str | None:
        """Run one step with retries; returns an error message when the step failed."""
        engine = loaded.engine
        if step.when is not None:
            try:
                go = bool(engine.evaluate(step.when, context))
            except Exception as exc:
                return f"step {step.id!r}: `when` failed: {type(exc).__name__}: {exc}"
            if not go:
                with self.lock:
                    self.store.record_skipped_step(run.id, step.id, index, first_attempt,
                                                   f"when: {step.when}")
                context["steps"][step.id] = {"output": None, "status": "skipped"}
                return None
        retry = step.retry
        total = retry.attempts if retry else 1
        from wardian.blueprints.schema import parse_duration

        backoff = parse_duration(retry.backoff) if retry else 0.0
        cap = parse_duration(retry.max_backoff) if retry and retry.max_backoff else None
        error = ""
        for n in range(total):
            attempt = first_attempt + n
            if n and self.cancelled():
                raise _Cancelled
            started = time.perf_counter()
            rendered: dict[str, Any] | None = None
            render_error: str | None = None
            try:
                rendered = self._render(loaded, step, context)
            except Exception as exc:
                render_error = f"{type(exc).__name__}: {exc}"
            refs: list[OutputRef] = []
            stored = self._by_reference(_templates_of(step), self.redactor.scrub(rendered),
                                        (), refs)
            with self.lock:
                self.store.start_attempt(run.id, step.id, index, attempt, stored, refs)
            if render_error is not None or rendered is None:
                error = f"could not render the step's input: {render_error}"
                self._finish_attempt(run, step, attempt, "failed", None, error, started)
                return f"step {step.id!r} failed: {self.redactor.scrub(error)}"
            try:
                output, extra = self._call(run, loaded, step, rendered, context, attempt)
            except _StepFailed as exc:
                error = str(exc)
                self._finish_attempt(run, step, attempt, exc.status, None, error, started)
                if exc.status == "cancelled":
                    raise _Cancelled from None
                if n + 1 < total and exc.retry:
                    delay = backoff * (2 ** n)
                    if cap is not None:
                        delay = min(delay, cap)
                    self.emit("step.retried", {"next_attempt": attempt + 1, "delay_s": delay},
                              step.id, attempt)
                    self.wait(delay)
                    continue
                break
            kept = self._finish_attempt(run, step, attempt, "succeeded", output, None, started,
                                        extra)
            context["steps"][step.id] = {"output": output, "status": "succeeded"}
            self.stored_outputs[step.id] = (attempt, kept)
            return None
        tries = n + 1
        return (f"step {step.id!r} failed after {tries} attempt(s): "
                f"{self.redactor.scrub(error)}")

    def _finish_attempt(self, run: Run, step: Step, attempt: int, status: str, output: Any,
                        error: str | None, started: float,
                        extra: dict[str, Any] | None = None) -> Any:
        """Record how the attempt ended; returns the output as every reader sees it
        (redacted; expanded where the row holds its short form, `_shortened`)."""
        seen = self.redactor.scrub(output)
        stored = self._shortened(step, attempt, seen) if status == "succeeded" else seen
        with self.lock:
            self.store.finish_attempt(
                run.id, step.id, attempt, status, output=stored,
                error=self.redactor.scrub(error) if error else None,
                duration_ms=round((time.perf_counter() - started) * 1000, 3),
                event_data=self.redactor.scrub(extra) if extra else None)
        return seen

    def _shortened(self, step: Step, attempt: int, seen: Any) -> Any:
        """An action's output as the run store keeps it: its `OutputStorage` short form
        when the action has one and expanding it reads back exactly `seen`, else `seen`
        (an event says why it was kept whole)."""
        if step.action is None or seen is None:
            return seen
        from wardian.engine.actions import output_storage

        storage = output_storage(step.action)
        if storage is None:
            return seen
        try:
            short = storage.shorten(copy.deepcopy(seen))
            if storage.expand(copy.deepcopy(short)) == seen:
                return short
            why = "its short form does not read back the same output"
        except Exception as exc:  # a plug-in's storage must not fail the step it stores
            why = f"{type(exc).__name__}: {exc}"
        self.emit("step.output_stored_whole", {"reason": why}, step.id, attempt)
        return seen

    # -- outputs by reference ------------------------------------------------------------

    def _by_reference(self, raw: Any, stored: Any, at: tuple[PathPart, ...],
                      refs: list[OutputRef]) -> Any:
        """`stored` (the redacted rendered input) with every part whose template (`raw`, the
        step's input as the blueprint writes it, parallel to `stored`) is a whole
        ``{{ steps.x.output<path> }}`` replaced by None and listed in `refs` — when step
        ``x`` succeeded and that path of its stored output equals the part, so a reference
        always reads back exactly what would have been stored."""
        if isinstance(raw, str):
            named = _output_path(raw)
            if named is None or named[0] not in self.stored_outputs:
                return stored
            step_id, path = named
            attempt, output = self.stored_outputs[step_id]
            if value_at(output, path) == stored and len(
                    json.dumps(stored, default=str)) >= MIN_REF_CHARS:
                refs.append(OutputRef(at, step_id, attempt, path))
                return None
            return stored
        if isinstance(raw, dict) and isinstance(stored, dict):
            return {k: (self._by_reference(raw[k], v, (*at, k), refs)
                        if isinstance(k, str) and k in raw else v) for k, v in stored.items()}
        if isinstance(raw, list) and isinstance(stored, list) and len(raw) == len(stored):
            return [self._by_reference(r, v, (*at, i), refs)
                    for i, (r, v) in enumerate(zip(raw, stored, strict=True))]
        return stored

    def _render(self, loaded: LoadedBlueprint, step: Step,
                context: dict[str, Any]) -> dict[str, Any]:
        engine = loaded.engine
        if step.action is not None:
            return {"action": step.action,
                    "with": engine.render_value(step.with_ or {}, context)}
        if step.id in loaded.prompt_files:
            prompt = engine.render_file(loaded.prompt_files[step.id], context)
        else:
            prompt = engine.render_text(loaded.prompts[step.id], context)
        # The role's description goes to the provider as the system text (the request's
        # `system`): stored beside the prompt so `run show` shows all that was sent.
        return {"role": step.role, "system": loaded.blueprint.roles.get(str(step.role), ""),
                "prompt": prompt, "payload": engine.render_value(step.payload or {}, context)}

    # -- calling -----------------------------------------------------------------------------

    def _call(self, run: Run, loaded: LoadedBlueprint, step: Step, rendered: dict[str, Any],
              context: dict[str, Any], attempt: int) -> tuple[Any, dict[str, Any] | None]:
        if step.action is not None:
            return self._call_action(run, step, rendered, context, attempt), None
        return self._call_role(run, loaded, step, rendered)

    def _call_action(self, run: Run, step: Step, rendered: dict[str, Any],
                     context: dict[str, Any], attempt: int) -> Any:
        from wardian.engine.actions import ActionContext, get_action

        assert step.action is not None  # an action step (`_call` dispatches on it)
        try:
            fn = get_action(step.action)
        except WardianError as exc:
            raise _StepFailed(exc.render(), retry=False) from None
        payload = context["invocation"]["payload"]
        ctx = ActionContext(
            run_id=run.id, step_id=step.id, attempt=attempt, agent_id=run.agent_id,
            workspace=run.workspace, invocation={"trigger": run.trigger, "payload": payload},
            inputs=context["inputs"], steps=dict(context["steps"]),
            idempotency_key=run.idempotency_key,
            emit=lambda kind, data: self.emit(f"action.{kind}", data, step.id, attempt),
            agent_name=context["invocation"]["agent_name"],
        )
        args = _with_references(step.action, rendered["with"], context["steps"], step.id)
        # Always in a worker thread, so a cancel (or the timeout) can reach should_stop().
        return self._in_thread(lambda: _jsonable(fn(ctx, **args)), step.timeout_s(),
                               ctx.stop_event, f"action {step.action!r}")

    def _in_thread(self, call: Callable[[], T], timeout_s: float | None,
                   stop: threading.Event, what: str) -> T:
        values: list[T] = []
        errors: list[BaseException] = []

        def target() -> None:
            try:
                values.append(call())
            except BaseException as exc:
                errors.append(exc)

        # The step is part of this run's unit of work: it uses this thread's connections.
        worker = threading.Thread(target=in_this_scope(target),
                                  name=f"wardian-step-{self.run_id[:8]}", daemon=True)
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        worker.start()
        while True:
            wait = POLL_S if deadline is None else min(POLL_S, deadline - time.monotonic())
            worker.join(max(0.0, wait))
            if not worker.is_alive():
                break
            if not stop.is_set() and self.cancelled():
                stop.set()  # ask it to stop; the run ends cancelled once it returns
            if deadline is not None and time.monotonic() >= deadline:
                stop.set()
                raise _StepFailed(
                    f"{what} timed out after {timeout_s:g}s (asked to stop; a Python action "
                    "that ignores ctx.should_stop() keeps running in the background)",
                    status="timed_out")
        if errors:
            exc = errors[0]
            if isinstance(exc, _StepFailed):
                raise exc
            if stop.is_set() and self.cancelled():
                raise _StepFailed(f"cancelled: {_describe(exc)}", status="cancelled",
                                  retry=False) from exc
            from wardian.providers.errors import ProviderTimeout

            status = "timed_out" if isinstance(exc, ProviderTimeout) else "failed"
            raise _StepFailed(_describe(exc), status=status) from exc
        return values[0]

    def _call_role(self, run: Run, loaded: LoadedBlueprint, step: Step,
                   rendered: dict[str, Any]) -> tuple[Any, dict[str, Any] | None]:
        from wardian.engine.assignments import resolve_selection
        from wardian.providers.base import ProviderRequest, ProviderResult

        assert step.role is not None  # a role step (`_call` dispatches on `action`)
        assignment = run.assignments.get(step.role)
        if assignment is None:
            raise _StepFailed(f"role {step.role!r} has no assignment in this run", retry=False)
        try:
            provider, model, effort = resolve_selection(assignment)
        except WardianError as exc:
            raise _StepFailed(exc.render(), retry=False) from None
        lookup = self.get_adapter
        if lookup is None:
            from wardian.providers import registry

            lookup = registry.get_adapter
        try:
            adapter = lookup(provider)
        except WardianError as exc:
            raise _StepFailed(exc.render(), retry=False) from None
        schema = loaded.outputs.get(step.id)
        timeout = step.timeout_s() or DEFAULT_ROLE_TIMEOUT_S
        launch = None
        if assignment.get("target_type") == "agent":
            # The agent's provider runs with a capability of its own, revoked below however
            # the step ends (spec: independent capabilities; runtime.step_launch).
            from wardian.runtime.step_launch import prepare_step_launch

            try:
                launch = prepare_step_launch(str(assignment["agent"]), workspace=run.workspace,
                                             state=self.store.db)
            except WardianError as exc:
                raise _StepFailed(exc.render(), retry=False) from None
            if launch.workspace is None and adapter.runs_process:
                # Its provider may save workspace-scoped memory: in a scratch directory
                # that would be a workspace nobody ever opens again.
                raise _StepFailed(
                    f"role {step.role!r} runs as agent {launch.agent_name!r}, but the run "
                    "and the agent have no workspace for what it saves (give the "
                    f"agent one: `wardian agent set {launch.agent_name} --workspace PATH`, "
                    "or start the run with a workspace)", retry=False)
        # Whatever transcript the provider keeps of this call is the step's own, never a
        # session of an agent (runtime.automation_sessions): recorded before it starts.
        from wardian.runtime.automation_sessions import (
            ENV_AUTOMATION_STEP,
            begin_step,
            held_record_path,
        )

        automation_id = None
        if adapter.runs_process:  # in-process and HTTP providers keep no transcript here
            automation_id = launch.launch_id if launch is not None else new_id()
            begin_step(automation_id, run_id=run.id, step_id=step.id, provider=provider,
                       cwd=launch.workspace if launch is not None else run.workspace,
                       state=self.store.db)
        request = ProviderRequest(
            provider=provider, model=model, effort=effort,
            system=rendered["system"], prompt=rendered["prompt"],
            output_schema=schema, output_ref=loaded.output_refs.get(step.id),
            check_output=False, timeout_s=timeout,
            cwd=launch.workspace if launch is not None else run.workspace,
            payload=rendered["payload"],
            launch_env={**(launch.env if launch else {}),
                        **({ENV_AUTOMATION_STEP: automation_id} if automation_id else {})},
            launch_prefix=launch.prefix if launch else [],
            # Named by the provider's supervisor if this engine dies mid-call.
            held_record=str(held_record_path(automation_id)) if automation_id else None)
        stop = threading.Event()

        def call() -> ProviderResult:
            return adapter.run(request, cancel=stop)  # `ProviderAdapter.run` takes `cancel`

        # The adapter enforces `timeout_s` (and kills the process tree); the grace covers
        # an adapter that does not return.
        outcome: ProviderResult | BaseException | None = None
        try:
            result = outcome = self._in_thread(call, timeout + 30.0, stop,
                                               f"role {step.role!r} ({provider})")
        except _StepFailed as failed:
            outcome = failed.__cause__  # the adapter's error names the session it left
            raise
        finally:
            if automation_id is not None:
                self._end_automation(automation_id, provider, outcome, step)
            if launch is not None:
                self._end_launch(launch, run, step)
        if not isinstance(result, ProviderResult):  # a plug-in adapter that breaks the contract
            raise _StepFailed(f"{provider} adapter returned {type(result).__name__}, not a "
                              "ProviderResult", retry=False)
        output: Any = result.output
        text = result.text
        if output is None and schema is not None:
            try:
                output = json.loads(text)
            except (TypeError, ValueError):
                raise _StepFailed(f"{provider} answered text that is not JSON: "
                                  f"{str(text)[:200]!r}") from None
        if schema is not None:
            # The answer is accepted here: by the registered output schema's check for a
            # `$ref` output (the curator batch: memory's model), else by the inline schema.
            try:
                loaded.check_output(step.id, output)
            except ValidationError as exc:  # its message starts with the JSON path
                where = exc.message if exc.path else f"$: {exc.message}"
                raise _StepFailed(f"{provider} answer does not match the output schema at "
                                  f"{where}") from None
            except KeyError:
                raise _StepFailed(f"the output schema of step {step.id!r} is no longer "
                                  "registered", retry=False) from None
        extra = {"provider": provider, "model": result.model, "usage": result.usage}
        if launch is not None:
            extra["agent"] = launch.agent_name
            extra["launch_id"] = launch.launch_id
        return (output if schema is not None else text), extra

    def _end_automation(self, automation_id: str, provider: str,
                        outcome: ProviderResult | BaseException | None, step: Step) -> None:
        """Record the session a role step's provider reported (its `ProviderResult`, or the
        `ProviderError` it raised) as the step's own; a failure is an event, never the
        outcome."""
        from wardian.providers.base import ProviderResult
        from wardian.providers.errors import ProviderError
        from wardian.runtime.automation_sessions import end_step

        reported = outcome if isinstance(outcome, ProviderResult | ProviderError) else None
        try:
            end_step(automation_id, host=provider, state=self.store.db,
                     session_id=reported.session_id if reported else None,
                     transcript_path=reported.transcript_path if reported else None)
        except Exception as exc:
            self.emit("step.automation_session_not_recorded",
                      {"launch_id": automation_id, "error": f"{type(exc).__name__}: {exc}"},
                      step.id)

    def _end_launch(self, launch: StepLaunch, run: Run, step: Step) -> None:
        """Revoke an agent-assigned step's capability; a failure is an event, never the
        step's outcome (the provider has ended: its identity no longer matches anyway)."""
        from wardian.runtime.step_launch import end_step_launch

        try:
            end_step_launch(launch, reason=f"step {step.id!r} of run {run.id[:8]} ended")
        except Exception as exc:
            self.emit("step.capability_not_revoked",
                      {"launch_id": launch.launch_id, "error": f"{type(exc).__name__}: {exc}"},
                      step.id)


def _templates_of(step: Step) -> dict[str, Any]:
    """The parts of a step's rendered input that come from templates, as the blueprint
    writes them (parallel to `_Execution._render`'s result)."""
    if step.action is not None:
        return {"with": step.with_ or {}}
    return {"payload": step.payload or {}}


_OUTPUT_PATH = re.compile(
    r"steps\.(?P<step>[A-Za-z_][A-Za-z0-9_]*)\.output"
    r"(?P<path>(?:\.[A-Za-z_][A-Za-z0-9_]*|\[\d+\]|\['[^'\\]*'\]|\[\"[^\"\\]*\"\])*)")
_PATH_PART = re.compile(r"\.([A-Za-z_][A-Za-z0-9_]*)|\[(\d+)\]|\['([^']*)'\]|\[\"([^\"]*)\"\]")


def _output_path(template: str) -> tuple[str, tuple[PathPart, ...]] | None:
    """``(step id, path)`` when `template` is exactly ``{{ steps.ID.output<path> }}`` (a path
    of ``.name``, ``[n]`` and ``['key']`` parts, no filter or test), else None."""
    from wardian.blueprints.templates import is_whole_expression

    expr = is_whole_expression(template) if "{{" in template else None
    match = _OUTPUT_PATH.fullmatch(expr.strip()) if expr is not None else None
    if match is None:
        return None
    path: list[PathPart] = []
    for part in _PATH_PART.finditer(match.group("path")):
        name, index, single, double = part.groups()
        path.append(int(index) if index is not None else (name or single or double or ""))
    return match.group("step"), tuple(path)


def _with_references(action: str, given: dict[str, Any], steps: dict[str, Any],
                     step_id: str) -> dict[str, Any]:
    """An action's keyword arguments: `given` (its rendered ``with:``) with each step
    reference resolved (module docstring, "Step references").

    Raises:
        _StepFailed: a reference names a step that has not run (validation refuses a
            blueprint that could; a ``with:`` rendered to a reference cannot be checked).
    """
    from wardian.engine.actions import action_step_refs

    declared = action_step_refs(action)
    args = dict(given)
    for key in sorted({k for k in given if k.endswith("_step")} | set(declared)):
        target = key[:-len("_step")]
        if not target or target in given:
            continue  # the value itself was given (the template form): it wins
        named = given.get(key, declared.get(key))
        if key not in given and named not in steps:
            continue  # a default reference to a step this blueprint does not have
        entry = steps.get(named) if isinstance(named, str) else None
        if entry is None:
            raise _StepFailed(
                f"step {step_id!r}: `{key}: {named}` names no step that ran before it "
                f"(ran: {', '.join(steps) or 'none'})", retry=False)
        args[target] = entry.get("output")
        if key in given and key not in declared:
            del args[key]
    return args


def _describe(exc: BaseException) -> str:
    """A step's error for the run's history: a `WardianError`'s own message (what, where,
    how to fix; its Python class name says nothing to an operator), an OS error's reason
    and file; anything else is a bug in an action and keeps its class name."""
    if isinstance(exc, WardianError):
        return exc.render()
    if isinstance(exc, OSError) and exc.strerror:
        return f"{exc.filename}: {exc.strerror}" if exc.filename else exc.strerror
    return f"{type(exc).__name__}: {exc}"


def _jsonable(value: Any) -> Any:
    """An action's return value as JSON: a pydantic model dumped, anything else checked."""
    from pydantic import BaseModel

    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    json.dumps(value, default=str)
    return value
