"""Claude Code adapter: ``claude -p --output-format stream-json --verbose``.

Flags: ``--model MODEL``, ``--effort EFFORT``, ``--json-schema SCHEMA``,
``--no-session-persistence``, ``--settings {"switchModelsOnFlag": false}`` (turns off the
content-classifier model switch); never ``--fallback-model``. ``CLAUDE_CODE_EFFORT_LEVEL``
and ``ANTHROPIC_MODEL`` are removed from the child's environment (the first overrides
``--effort``). The prompt is the last argument, or stdin when too long.

Verification: ``system/init.model``, every main-thread assistant ``message.model``, the
SessionStart hook's ``model`` and the result's ``modelUsage`` keys must be the assigned
model (Haiku background usage is allowed unless Haiku was assigned); a fallback/reroute
system event (``model_refusal_fallback``) fails the step. Claude lowers an unsupported
effort *silently*, so ``--settings`` also installs SessionStart/Stop hooks that log their
input, whose ``effort.level`` is the level actually used; a different level fails the
step, and no report at all fails closed (option ``require_effort_report``).

Discovery: no CLI listing exists. With an Anthropic API key the Anthropic ``/v1/models``
listing is used; otherwise a fixed alias list, marked ``fixed-alias``.

Spec: reference/providers.md §2.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

from wardian.providers._cli import CliAdapter
from wardian.providers._common import (
    classify_error,
    excerpt,
    get_api_key,
    json_lines,
    model_matches,
    parse_output,
    reroute_notice,
    selection_text,
)
from wardian.providers.base import ModelInfo, ProviderOptions, ProviderRequest, ProviderResult
from wardian.providers.errors import (
    EffortLowered,
    ModelMismatch,
    ModelRerouted,
    ModelUnverified,
    ProviderError,
)
from wardian.providers.process import fits_argv

__all__ = ["CLAUDE_ALIASES", "ClaudeAdapter", "ClaudeOptions"]

CLAUDE_ALIASES: dict[str, str] = {
    "opus": r"opus",
    "sonnet": r"sonnet",
    "haiku": r"haiku",
    "fable": r"fable",
    "opus[1m]": r"opus",
    "sonnet[1m]": r"sonnet",
}
"""Alias -> regex an answering model id must match."""

_FIXED: list[tuple[str, list[str]]] = [
    ("opus", ["low", "medium", "high", "xhigh", "max"]),
    ("sonnet", ["low", "medium", "high", "xhigh", "max"]),
    ("fable", ["low", "medium", "high", "xhigh", "max"]),
    ("haiku", ["low", "medium", "high"]),
]

_FALLBACK_SUBTYPES = {"model_refusal_fallback", "model_fallback", "fallback", "model_switch",
                      "model_switched", "model_rerouted", "reroute"}
"""System event subtypes announcing that another model answers (``model_refusal_fallback``
is what Claude Code 2.1.17x emits for a classifier reroute: ``originalModel``,
``fallback_model``, ``content`` "... Switched to Opus 4.8.")."""


_HOOK_CODE = (
    "import sys; open(sys.argv[1], 'a', encoding='utf-8')"
    ".write(sys.stdin.read().replace(chr(10), ' ') + chr(10))"
)
"""The verification hook: append the hook's JSON input (one line) to the file in argv[1]."""


def hook_command(log: Path) -> str:
    """The shell command of the verification hook writing to `log`."""
    argv = [sys.executable, "-c", _HOOK_CODE, str(log)]
    return subprocess.list2cmdline(argv) if sys.platform == "win32" else shlex.join(argv)


def verification_settings(log: Path | None) -> dict[str, Any]:
    """The ``--settings`` document: no classifier model switch, plus the effort hooks.

    Claude Code gives every hook ``effort.level`` (the level it actually runs with, after
    any silent lowering) and SessionStart the ``model``; SessionStart and Stop hooks log
    that input to `log`.
    """
    settings: dict[str, Any] = {"switchModelsOnFlag": False}
    if log is not None:
        hook = [{"hooks": [{"type": "command", "command": hook_command(log), "timeout": 30}]}]
        settings["hooks"] = {"SessionStart": hook, "Stop": hook}
    return settings


class ClaudeOptions(ProviderOptions):
    """Options of the claude adapter.

    Attributes:
        bare: pass ``--bare`` (no hooks, skills, MCP, CLAUDE.md; needs an API key).
        max_turns: ``--max-turns`` when set.
        require_effort_report: when an effort is assigned, refuse the answer unless
            Claude reported the effort it ran with to the verification hook (not
            possible with ``bare``, which skips hooks).
    """

    bare: bool = False
    max_turns: int | None = None
    require_effort_report: bool = True


def _same_model(resolved: str, reported: str, assigned: str | None) -> bool:
    """Whether `reported` names the model the session resolved to (or echoes the alias)."""
    if model_matches(resolved, reported) or model_matches(reported, resolved):
        return True
    return reported == assigned


def _effort_of(value: Any) -> str | None:
    if isinstance(value, dict):
        value = value.get("level")
    return str(value) if value else None


class ClaudeAdapter(CliAdapter):
    """``claude -p`` with an exact model and effort, and no fallback model."""

    name = "claude"
    executable = "claude"
    supports_effort = True
    supports_output_schema = True
    effort_levels = ("low", "medium", "high", "xhigh", "max")
    options_model = ClaudeOptions
    strip_env = ("CLAUDE_CODE_EFFORT_LEVEL", "ANTHROPIC_MODEL")

    def build_argv(self, exe: str, request: ProviderRequest, options: ClaudeOptions,
                   hook_log: Path | None = None) -> tuple[list[str], str | None]:
        """The exact argv and the stdin text for `request`."""
        settings = verification_settings(None if options.bare else hook_log)
        argv = [exe, "-p", "--output-format", "stream-json", "--verbose",
                "--no-session-persistence", "--settings", json.dumps(settings)]
        if options.bare:
            argv.append("--bare")
        if options.max_turns is not None:
            argv += ["--max-turns", str(options.max_turns)]
        if request.model:
            argv += ["--model", request.model]
        if request.effort:
            argv += ["--effort", request.effort]
        if request.output_schema is not None:
            argv += ["--json-schema", json.dumps(request.output_schema, separators=(",", ":"))]
        prompt = request.prompt
        if request.system.strip():
            if fits_argv(request.system):
                argv += ["--append-system-prompt", request.system]
            else:
                prompt = f"{request.system}\n\n{prompt}"
        if fits_argv(prompt):
            return [*argv, prompt], None
        return argv, prompt

    def run(
        self, request: ProviderRequest, *, cancel: threading.Event | None = None
    ) -> ProviderResult:
        """Run claude -p; see the module docstring for what is verified.

        Raises:
            ProviderNotInstalled, MissingCredentials, ModelUnavailable, QuotaExhausted,
            ModelMismatch, ModelRerouted, EffortLowered, ModelUnverified, ProviderTimeout,
            OutputInvalid, ProviderError.
        """
        options = self.parse_options(request)
        assert isinstance(options, ClaudeOptions)
        env = self.child_env()
        exe = self.resolve(env)
        with tempfile.TemporaryDirectory(prefix="wardian-claude-") as tmp:
            hook_log = Path(tmp) / "hooks.jsonl"
            argv, stdin_text = self.build_argv(exe, request, options, hook_log)
            proc = self.execute(argv, request, env=env, stdin_text=stdin_text, cancel=cancel)
            log_text = hook_log.read_text(encoding="utf-8") if hook_log.exists() else ""
        hooks = list(json_lines(log_text))
        selection = selection_text(request.model, request.effort)
        init_model = None
        session_id: str | None = None
        observed_effort = None
        result: dict[str, Any] | None = None
        retry_error = None
        main_models: list[str] = []
        for event in json_lines(proc.stdout):
            kind, subtype = event.get("type"), event.get("subtype")
            if kind == "system" and subtype == "init":
                session_id = str(event.get("session_id") or "") or session_id
                init_model = event.get("model") or init_model
                observed_effort = _effort_of(event.get("effort") or event.get("effort_level")) \
                    or observed_effort
            elif kind == "system" and subtype == "api_retry":
                retry_error = str(event.get("error") or "") + " " + str(
                    event.get("error_message") or event.get("message") or "")
            elif kind == "system" and subtype == "model_refusal_no_fallback":
                raise ProviderError(
                    f"the model refused the request ({selection}); no other model was tried",
                    provider=self.name, detail=str(event.get("content") or ""),
                )
            elif kind == "system" and (subtype in _FALLBACK_SUBTYPES or "fallback_model" in event
                                       or reroute_notice(str(event.get("content") or ""))):
                target = event.get("fallback_model") or event.get("to") or reroute_notice(
                    str(event.get("content") or "")) or event.get("model")
                raise ModelRerouted(
                    "Claude switched to another model", provider=self.name, assigned=selection,
                    observed=f"model {target or '?'}",
                    evidence=f"system/{subtype} event",
                )
            elif kind == "assistant" and not event.get("parent_tool_use_id"):
                model = (event.get("message") or {}).get("model")
                if model and model != "<synthetic>":
                    main_models.append(model)
            elif kind == "result":
                result = event
        if result is None:
            detail = self.last_lines(proc.stderr) or retry_error or f"exit {proc.returncode}"
            raise classify_error(detail, provider=self.name, selection=selection)
        if result.get("is_error") or result.get("subtype") not in (None, "success"):
            detail = " ".join(
                str(x) for x in (result.get("subtype"), result.get("api_error_status"),
                                 result.get("result"), retry_error) if x
            )
            raise classify_error(detail, provider=self.name, selection=selection)
        efforts: list[tuple[str | None, str]] = (
            [(observed_effort, "stream effort field")] if observed_effort else [])
        if result.get("effort"):
            efforts.append((_effort_of(result.get("effort")), "result effort field"))
        for hook in hooks:
            hook_name = hook.get("hook_event_name") or "hook"
            if hook.get("effort"):
                efforts.append((_effort_of(hook["effort"]), f"{hook_name} hook effort.level"))
            if hook.get("model"):
                main_models.append(str(hook["model"]))
        if request.effort and options.require_effort_report and not options.bare \
                and not efforts:
            raise ModelUnverified(
                f"Claude reported no effort level (assigned {request.effort}); the effort "
                "cannot be verified",
                provider=self.name,
                hint="check that hooks are not disabled (disableAllHooks), or set the option "
                "require_effort_report=false to accept an unverified effort",
            )
        observed_effort = efforts[-1][0] if efforts else None
        observed = self._verify(request, init_model, main_models, result, efforts)
        text = str(result.get("result") or "")
        output = parse_output(text, request.output_schema, check=request.check_output,
                              provider=self.name,
                              structured=result.get("structured_output"))
        usage = dict(result.get("usage") or {})
        if result.get("modelUsage"):
            usage["modelUsage"] = result["modelUsage"]
        if result.get("total_cost_usd") is not None:
            usage["total_cost_usd"] = result["total_cost_usd"]
        return ProviderResult(
            text=text, output=output, model=observed, effort=observed_effort,
            usage=usage or None, transcript=excerpt(proc.stdout), session_id=session_id,
        )

    def _verify(self, request: ProviderRequest, init_model: str | None, main_models: list[str],
                result: dict[str, Any], efforts: list[tuple[str | None, str]]) -> str:
        assigned = selection_text(request.model, request.effort)
        if init_model is None:
            raise ModelUnverified("the stream had no system/init event naming the model",
                                  provider=self.name)
        resolved = init_model
        if init_model.lower() in CLAUDE_ALIASES and main_models:
            resolved = main_models[0]  # init echoed the alias; the first answer resolves it
        if request.model and not model_matches(request.model, resolved, CLAUDE_ALIASES):
            raise ModelMismatch("another model answered", provider=self.name,
                                assigned=assigned, observed=f"model {resolved}",
                                evidence="system/init.model")
        # Every later report must be the model the session started with: an alias such as
        # ``opus`` would also match a switch to an older Opus, so compare with the
        # resolved id from system/init, not with the alias.
        checks = [(m, "assistant message.model") for m in main_models]
        assigned_haiku = bool(request.model and "haiku" in request.model.lower())
        for model in (result.get("modelUsage") or {}):
            if "haiku" in model.lower() and not assigned_haiku:
                continue  # background utility calls (titles, summaries) use Haiku
            checks.append((model, "result.modelUsage"))
        for model, evidence in checks:
            if not _same_model(resolved, model, request.model):
                raise ModelMismatch("another model answered", provider=self.name,
                                    assigned=f"{assigned} (started as {resolved})",
                                    observed=f"model {model}", evidence=evidence)
        for effort, evidence in efforts:
            if request.effort and effort and effort != request.effort:
                raise EffortLowered("Claude ran with another effort", provider=self.name,
                                    assigned=assigned,
                                    observed=selection_text(init_model, effort),
                                    evidence=evidence)
        return resolved

    def discover_models(self, timeout_s: float = 30.0) -> list[ModelInfo]:
        """Anthropic ``/v1/models`` when an API key is available, else the fixed aliases.

        Raises:
            DiscoveryFailed: the API listing failed (with a key present).
        """
        fixed = [ModelInfo(id=alias, efforts=efforts, default_effort="high",
                           source="fixed-alias") for alias, efforts in _FIXED]
        if get_api_key("anthropic", ["ANTHROPIC_API_KEY"], required=False) is None:
            return fixed
        from wardian.providers.anthropic import AnthropicAdapter

        discovered = AnthropicAdapter().discover_models(timeout_s)
        return [*discovered, *fixed]
