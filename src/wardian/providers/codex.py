"""OpenAI Codex CLI adapter: ``codex exec --json``.

Flags: ``-m MODEL``, ``-c model_reasoning_effort=EFFORT``, ``--output-schema FILE``,
``--sandbox read-only``, ``--skip-git-repo-check``; the prompt is the last argument, or
``-`` with the prompt on stdin when it is too long for the command line. Codex sends the
effort as the Responses ``reasoning.effort`` as it is, except ``ultra``, for which it sends
a lower one (its catalog: "Maximum reasoning with automatic task delegation") and records
``ultra`` in the rollout: a step refuses ``ultra`` before it runs.

Verification (the JSONL stream carries no model name): a ``model rerouted: A -> B``
error item or event (Codex reports one when the ``OpenAI-Model`` response header names
another model than it asked for) fails the step; then the rollout file of the thread
(``$CODEX_HOME/sessions/**/rollout-*-<thread_id>.jsonl``) is read and its
``turn_context`` records must name the assigned model and effort. No rollout → the
model cannot be verified → ModelUnverified (fail closed; option ``require_rollout``).

Discovery: ``codex app-server`` JSON-RPC ``model/list`` (ids, supported efforts, default).

Spec: reference/providers.md §1.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import re
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, ClassVar, Literal

from wardian._process import end_tree
from wardian.providers._cli import CliAdapter
from wardian.providers._common import (
    classify_error,
    combined_prompt,
    excerpt,
    json_lines,
    model_matches,
    parse_output,
    raise_if_rerouted,
    selection_text,
)
from wardian.providers.base import ModelInfo, ProviderOptions, ProviderRequest, ProviderResult
from wardian.providers.errors import (
    DiscoveryFailed,
    EffortLowered,
    ModelMismatch,
    ModelUnverified,
    ProviderError,
)
from wardian.providers.process import MAX_OUTPUT_BYTES, fits_argv
from wardian.providers.supervisor import held_below, supervised

__all__ = ["CodexAdapter", "CodexOptions"]


class CodexOptions(ProviderOptions):
    """Options of the codex adapter.

    Attributes:
        sandbox: ``--sandbox`` value (role steps default to read-only).
        require_rollout: refuse the answer when the rollout file (the only record of the
            model that answered) cannot be found.
    """

    sandbox: Literal["read-only", "workspace-write", "danger-full-access"] = "read-only"
    require_rollout: bool = True


def codex_home(env: dict[str, str] | None = None) -> Path:
    """``$CODEX_HOME`` or ``~/.codex``."""
    value = (env or os.environ).get("CODEX_HOME")
    return Path(value).expanduser() if value else Path.home() / ".codex"


class CodexAdapter(CliAdapter):
    """``codex exec --json`` with an exact model and reasoning effort."""

    name = "codex"
    executable = "codex"
    supports_effort = True
    supports_output_schema = True
    effort_levels = ("none", "minimal", "low", "medium", "high", "xhigh", "max", "ultra")
    efforts_not_passed: ClassVar[dict[str, str]] = {
        "ultra": "Codex sends a lower reasoning effort for ultra (xhigh or max, by model) "
                 "with automatic task delegation, and records ultra in its rollout",
    }
    options_model = CodexOptions

    def transcript_dir(self, env: dict[str, str]) -> Path | None:
        """``$CODEX_HOME/sessions``: the rollout is open there from session start."""
        return codex_home(env) / "sessions"

    def build_argv(self, exe: str, request: ProviderRequest, options: CodexOptions,
                   schema_file: Path | None) -> tuple[list[str], str | None]:
        """The exact argv and the stdin text for `request`."""
        argv = [exe, "exec", "--json", "--skip-git-repo-check", "--sandbox", options.sandbox]
        if request.model:
            argv += ["-m", request.model]
        if request.effort:
            argv += ["-c", f"model_reasoning_effort={request.effort}"]
        if schema_file is not None:
            argv += ["--output-schema", str(schema_file)]
        prompt = combined_prompt(request)
        if fits_argv(prompt):
            return [*argv, prompt], None
        return [*argv, "-"], prompt

    def run(
        self, request: ProviderRequest, *, cancel: threading.Event | None = None
    ) -> ProviderResult:
        """Run codex exec; see the module docstring for what is verified.

        Raises:
            UnsupportedEffort (exit 2): ``ultra`` (`efforts_not_passed`), before anything
                runs.
            ProviderNotInstalled, MissingCredentials, ModelUnavailable, EffortRejected,
            QuotaExhausted, ModelRerouted, ModelMismatch, EffortLowered, ModelUnverified,
            ProviderTimeout, OutputInvalid, ProviderError.
        """
        options = self.parse_options(request)
        assert isinstance(options, CodexOptions)
        self.check_step_effort(request.model, request.effort)
        env = self.child_env()
        exe = self.resolve(env)
        with tempfile.TemporaryDirectory(prefix="wardian-codex-") as tmp:
            schema_file = None
            if request.output_schema is not None:
                schema_file = self.write_temp(
                    Path(tmp), "output-schema.json", json.dumps(request.output_schema)
                )
            argv, stdin_text = self.build_argv(exe, request, options, schema_file)
            try:
                proc = self.execute(argv, request, env=env, stdin_text=stdin_text,
                                    cancel=cancel)
            except ProviderError as exc:  # killed: its rollout still names it
                self._name_session(exc, _thread_of(exc.partial_stdout or ""), env)
                if exc.transcript_path is None:  # killed before it printed its thread
                    self._name_open_rollout(exc, env)
                raise
        thread_id = _thread_of(proc.stdout)
        try:
            return self._answer(proc, request, options, env, thread_id)
        except ProviderError as exc:
            self._name_session(exc, thread_id, env)
            raise

    @staticmethod
    def _rollout(thread_id: str | None, env: dict[str, str]) -> Path | None:
        """The rollout file of thread `thread_id`, or None."""
        if not thread_id:
            return None
        sessions = codex_home(env) / "sessions"
        matches = sorted(sessions.glob(f"**/rollout-*{thread_id}.jsonl"))
        return matches[-1] if matches else None

    def _name_session(self, exc: ProviderError, thread_id: str | None,
                      env: dict[str, str]) -> None:
        """Tell the engine which session a failed call left behind (it is the step's own,
        never an agent's; `wardian.runtime.automation_sessions`)."""
        if thread_id:
            exc.session_id = thread_id
            rollout = self._rollout(thread_id, env)
            exc.transcript_path = str(rollout) if rollout else None

    @staticmethod
    def _name_open_rollout(exc: ProviderError, env: dict[str, str]) -> None:
        """Name the session of a call killed before Codex printed ``thread.started``: the
        rollout file its process held open (Codex's recorder keeps it open from session
        start; `ProviderError.open_files`), whose name ends with the thread id. Exact,
        not a guess by time or directory: a session the user runs beside it is never
        taken for the step's."""
        for held in held_below(codex_home(env) / "sessions", exc.open_files):
            path = Path(held)  # spelled as recovery's scan spells it
            if not (path.name.startswith("rollout-") and path.suffix == ".jsonl"):
                continue
            exc.transcript_path = held
            tail = _THREAD_TAIL.search(path.stem)
            if tail and not exc.session_id:
                exc.session_id = tail.group(0)
            return

    def _answer(self, proc: Any, request: ProviderRequest, options: CodexOptions,
                env: dict[str, str], thread_id: str | None) -> ProviderResult:
        selection = selection_text(request.model, request.effort)
        text = None
        usage = None
        failure = None
        for event in json_lines(proc.stdout):
            kind = event.get("type")
            if kind in ("item.completed", "item.updated", "item.started"):
                item = event.get("item") or {}
                item_type = item.get("type") or item.get("item_type")
                if item_type == "agent_message" and kind == "item.completed":
                    text = item.get("text", "")
                elif item_type == "error":
                    self._check_reroute(item.get("message", ""), request)
            elif kind == "turn.completed":
                usage = event.get("usage")
            elif kind == "turn.failed":
                failure = (event.get("error") or {}).get("message") or "turn failed"
            elif kind == "error":
                message = event.get("message") or ""
                self._check_reroute(message, request)
                failure = failure or message
        if failure is not None:
            raise classify_error(failure, provider=self.name, selection=selection)
        if proc.returncode != 0 or text is None:
            detail = self.last_lines(proc.stderr) or f"exit code {proc.returncode}"
            raise classify_error(detail, provider=self.name, selection=selection)
        observed_model, observed_effort, rollout = self._verify_rollout(
            thread_id, request, options, env
        )
        output = parse_output(text, request.output_schema, check=request.check_output,
                              provider=self.name)
        return ProviderResult(
            text=text,
            output=output,
            model=observed_model,
            effort=observed_effort,
            usage=usage,
            transcript=str(rollout) if rollout else excerpt(proc.stdout),
            session_id=thread_id,
            transcript_path=str(rollout) if rollout else None,
        )

    def _check_reroute(self, message: str, request: ProviderRequest) -> None:
        raise_if_rerouted(message, provider=self.name,
                          selection=selection_text(request.model, request.effort),
                          what="the provider rerouted the request", evidence="codex error item")

    def _verify_rollout(
        self, thread_id: str | None, request: ProviderRequest, options: CodexOptions,
        env: dict[str, str],
    ) -> tuple[str | None, str | None, Path | None]:
        rollout = self._rollout(thread_id, env)
        if rollout is None:
            if options.require_rollout:
                raise ModelUnverified(
                    f"no rollout file for thread {thread_id or '?'} under "
                    f"{codex_home(env) / 'sessions'}; the answering model cannot be verified",
                    provider=self.name,
                    hint="do not run codex with --ephemeral or history off, or set the "
                    "option require_rollout=false to accept unverified answers",
                )
            return None, None, None
        models: list[str] = []
        efforts: list[str] = []
        for record in json_lines(rollout.read_text(encoding="utf-8", errors="replace")):
            if record.get("type") != "turn_context":
                continue
            payload = record.get("payload") or record
            if payload.get("model"):
                models.append(str(payload["model"]))
            effort = payload.get("effort") or payload.get("reasoning_effort")
            if effort:
                efforts.append(str(effort))
        assigned = selection_text(request.model, request.effort)
        if not models:
            raise ModelUnverified(
                f"the rollout {rollout} names no model", provider=self.name
            )
        for model in models:
            if not model_matches(request.model or models[0], model):
                raise ModelMismatch(
                    "another model answered", provider=self.name, assigned=assigned,
                    observed=selection_text(model, efforts[-1] if efforts else None),
                    evidence=f"rollout turn_context in {rollout.name}",
                )
        if request.effort and not efforts:
            raise ModelUnverified(
                f"the rollout {rollout} records no reasoning effort (assigned "
                f"{request.effort}); the effort cannot be verified", provider=self.name,
            )
        for effort in efforts:
            if request.effort and effort != request.effort:
                raise EffortLowered(
                    "the reasoning effort was changed", provider=self.name, assigned=assigned,
                    observed=selection_text(models[-1], effort),
                    evidence=f"rollout turn_context in {rollout.name}",
                )
        return models[-1], (efforts[-1] if efforts else None), rollout

    def discover_models(self, timeout_s: float = 30.0) -> list[ModelInfo]:
        """List models through ``codex app-server`` JSON-RPC ``model/list``.

        Raises:
            DiscoveryFailed: codex missing, no answer within `timeout_s`, or an error reply.
        """
        env = self.child_env()
        try:
            exe = self.resolve(env)
        except ProviderError as exc:
            raise DiscoveryFailed.wrap(exc, self.name) from exc
        rpc = _JsonRpc([exe, "app-server"], env, timeout_s, self.name)
        try:
            rpc.call("initialize", {"clientInfo": {"name": "wardian", "title": "Wardian",
                                                   "version": "0.1"}})
            rpc.notify("initialized")
            models: list[ModelInfo] = []
            cursor = None
            for _ in range(50):
                params: dict[str, Any] = {"includeHidden": False}
                if cursor:
                    params["cursor"] = cursor
                result = rpc.call("model/list", params)
                for entry in result.get("data") or result.get("models") or []:
                    if entry.get("hidden"):
                        continue
                    efforts = [
                        e.get("reasoningEffort") if isinstance(e, dict) else str(e)
                        for e in entry.get("supportedReasoningEfforts") or []
                    ]
                    models.append(ModelInfo(
                        id=entry.get("model") or entry.get("id"),
                        efforts=[e for e in efforts if e],
                        default_effort=entry.get("defaultReasoningEffort"),
                        display_name=entry.get("displayName"),
                        is_default=bool(entry.get("isDefault")),
                    ))
                cursor = result.get("nextCursor")
                if not cursor:
                    break
            return models
        finally:
            rpc.close()


_THREAD_TAIL = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-"
                          r"[0-9a-fA-F]{12}$")
"""The thread id a rollout's file name ends with (``rollout-<time>-<thread id>.jsonl``)."""


def _thread_of(stdout: str) -> str | None:
    """The thread id of ``codex exec --json`` output (its ``thread.started`` event)."""
    for event in json_lines(stdout):
        if event.get("type") == "thread.started" and event.get("thread_id"):
            return str(event["thread_id"])
    return None


_OVERFLOW = "\x00overflow"
"""Queued instead of a line once the app-server's output passes the cap."""


class _JsonRpc:
    """A minimal JSONL JSON-RPC client over a child's stdio (``jsonrpc`` field omitted)."""

    def __init__(self, argv: list[str], env: dict[str, str], timeout_s: float, provider: str):
        self.provider = provider
        self.deadline = time.monotonic() + timeout_s
        self.timeout_s = timeout_s
        self.next_id = 0
        kwargs: dict[str, Any] = {"start_new_session": True} if os.name != "nt" else {}
        try:
            self.proc = subprocess.Popen(
                supervised(argv), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL, env=env, text=True, encoding="utf-8", **kwargs,
            )
        except OSError as exc:
            raise DiscoveryFailed(f"cannot start {argv[0]}: {exc}", provider=provider) from exc
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        read = 0
        for line in self.proc.stdout:
            read += len(line)
            if read > MAX_OUTPUT_BYTES:  # a flood must not exhaust memory before the timeout
                self.lines.put(_OVERFLOW)
                return
            self.lines.put(line)
        self.lines.put(None)

    def _send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(json.dumps(message) + "\n")
            self.proc.stdin.flush()
        except OSError as exc:
            raise DiscoveryFailed(f"app-server closed its input: {exc}",
                                  provider=self.provider) from exc

    def notify(self, method: str) -> None:
        self._send({"method": method})

    def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.next_id += 1
        self._send({"id": self.next_id, "method": method, "params": params})
        while True:
            remaining = self.deadline - time.monotonic()
            if remaining <= 0:
                raise DiscoveryFailed(
                    f"no answer to {method} within {self.timeout_s:g} s", provider=self.provider
                )
            try:
                line = self.lines.get(timeout=remaining)
            except queue.Empty:
                continue
            if line is None:
                raise DiscoveryFailed(f"app-server exited before answering {method}",
                                      provider=self.provider)
            if line is _OVERFLOW:
                raise DiscoveryFailed(
                    f"app-server wrote more than {MAX_OUTPUT_BYTES:,} characters without "
                    f"answering {method}", provider=self.provider)
            try:
                message = json.loads(line)
            except json.JSONDecodeError:
                continue
            if not isinstance(message, dict) or message.get("id") != self.next_id:
                continue
            if "error" in message:
                raise DiscoveryFailed(
                    f"{method} failed: {(message['error'] or {}).get('message')}",
                    provider=self.provider,
                )
            result = message.get("result")
            return result if isinstance(result, dict) else {}

    def close(self) -> None:
        try:
            if self.proc.stdin:
                self.proc.stdin.close()
        except OSError:
            pass
        if self.proc.poll() is None:
            end_tree(self.proc.pid, grace_s=1.0)
        self.proc.wait()
        # The reader ends at EOF (the tree is gone); then its pipe can be closed.
        self.reader.join(timeout=2.0)
        if self.proc.stdout is not None and not self.reader.is_alive():
            with contextlib.suppress(OSError):
                self.proc.stdout.close()
