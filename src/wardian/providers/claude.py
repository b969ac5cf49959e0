"""Claude Code adapter: ``claude -p --output-format stream-json --verbose``.

Flags: ``--model MODEL``, ``--effort EFFORT``, ``--json-schema SCHEMA``,
``--no-session-persistence``, ``--settings {"switchModelsOnFlag": false}`` (turns off the
content-classifier model switch); never ``--fallback-model``. ``CLAUDE_CODE_EFFORT_LEVEL``
and ``ANTHROPIC_MODEL`` are removed from the child's environment (the first overrides
``--effort``). The prompt is the last argument, or stdin when too long.

Verification: ``system/init.model``, every main-thread assistant ``message.model`` and
the result's ``modelUsage`` keys must be the assigned model (Haiku background usage is
allowed unless Haiku was assigned); a fallback/reroute system event, or an effort the
stream reports that differs from the assigned one (Claude lowers an unsupported level
silently), fails the step.

Discovery: no CLI listing exists. With an Anthropic API key the Anthropic ``/v1/models``
listing is used; otherwise a fixed alias list, marked ``fixed-alias``.

Issue 5 "Adapters"; reference/providers.md §2.
"""

from __future__ import annotations

import json
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


class ClaudeOptions(ProviderOptions):
    """Options of the claude adapter.

    Attributes:
        bare: pass ``--bare`` (no hooks, skills, MCP, CLAUDE.md; needs an API key).
        max_turns: ``--max-turns`` when set.
    """

    bare: bool = False
    max_turns: int | None = None


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

    def build_argv(self, exe: str, request: ProviderRequest,
                   options: ClaudeOptions) -> tuple[list[str], str | None]:
        """The exact argv and the stdin text for `request`."""
        argv = [exe, "-p", "--output-format", "stream-json", "--verbose",
                "--no-session-persistence",
                "--settings", json.dumps({"switchModelsOnFlag": False})]
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

    def run(self, request: ProviderRequest) -> ProviderResult:
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
        argv, stdin_text = self.build_argv(exe, request, options)
        proc = self.execute(argv, request, env=env, stdin_text=stdin_text)
        selection = selection_text(request.model, request.effort)
        init_model = None
        observed_effort = None
        result: dict[str, Any] | None = None
        retry_error = None
        main_models: list[str] = []
        for event in json_lines(proc.stdout):
            kind, subtype = event.get("type"), event.get("subtype")
            if kind == "system" and subtype == "init":
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
        observed_effort = _effort_of(result.get("effort")) or observed_effort
        observed = self._verify(request, init_model, main_models, result, observed_effort)
        text = str(result.get("result") or "")
        output = parse_output(text, request.output_schema, provider=self.name,
                              structured=result.get("structured_output"))
        usage = dict(result.get("usage") or {})
        if result.get("modelUsage"):
            usage["modelUsage"] = result["modelUsage"]
        if result.get("total_cost_usd") is not None:
            usage["total_cost_usd"] = result["total_cost_usd"]
        return ProviderResult(
            text=text, output=output, model=observed, effort=observed_effort or request.effort,
            usage=usage or None, transcript=excerpt(proc.stdout),
        )

    def _verify(self, request: ProviderRequest, init_model: str | None, main_models: list[str],
                result: dict[str, Any], observed_effort: str | None) -> str:
        assigned = selection_text(request.model, request.effort)
        if init_model is None:
            raise ModelUnverified("the stream had no system/init event naming the model",
                                  provider=self.name)
        checks = [(init_model, "system/init.model")]
        checks += [(m, "assistant message.model") for m in main_models]
        assigned_haiku = bool(request.model and "haiku" in request.model.lower())
        for model in (result.get("modelUsage") or {}):
            if "haiku" in model.lower() and not assigned_haiku:
                continue  # background utility calls (titles, summaries) use Haiku
            checks.append((model, "result.modelUsage"))
        if request.model:
            for model, evidence in checks:
                if not model_matches(request.model, model, CLAUDE_ALIASES):
                    raise ModelMismatch("another model answered", provider=self.name,
                                        assigned=assigned, observed=f"model {model}",
                                        evidence=evidence)
        if request.effort and observed_effort and observed_effort != request.effort:
            raise EffortLowered("Claude ran with another effort", provider=self.name,
                                assigned=assigned,
                                observed=selection_text(init_model, observed_effort),
                                evidence="stream effort field")
        return init_model

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
