"""Gemini CLI adapter: ``gemini -p PROMPT -o stream-json -m MODEL``.

Gemini CLI has no effort flag, so an assignment with an effort is a validation error
(exit 2), never silently dropped. Long prompts go on stdin without ``-p`` (headless mode
starts when stdin is not a terminal). ``--skip-trust`` keeps an untrusted scratch dir
from ending the run (option ``skip_trust``).

Verification: ``init.model`` and every model with main-role usage in the result's
``stats.models`` must be the assigned model (stream-json's stats carry no roles, so there
every model listed counts; the CLI keys them by the model that answered); an error/warning
event or the result's error announcing a fallback or switch fails the step (Gemini's
availability chains end in Flash). Stderr is never read for such notices. ``init.model``
only repeats ``-m``: a model the CLI asks in its place (a newer one it resolves the id to,
or a silent fallback) shows in the stats alone.

Discovery: no CLI listing. With a Gemini API key (``GEMINI_API_KEY``/``GOOGLE_API_KEY``)
the Gemini API ``models`` listing is used; otherwise a fixed list of concrete ids
(aliases such as ``auto``/``pro``/``flash`` are left out: they route and fall back).

Spec: reference/providers.md §3.
"""

from __future__ import annotations

import threading
from typing import Any

from wardian.providers._cli import CliAdapter
from wardian.providers._common import (
    classify_error,
    combined_prompt,
    excerpt,
    get_api_key,
    json_lines,
    model_matches,
    parse_output,
    raise_if_rerouted,
    selection_text,
)
from wardian.providers.base import ModelInfo, ProviderOptions, ProviderRequest, ProviderResult
from wardian.providers.errors import (
    DiscoveryFailed,
    MissingCredentials,
    ModelMismatch,
    ModelUnverified,
    UnsupportedEffort,
)
from wardian.providers.process import fits_argv

__all__ = ["GEMINI_FIXED_MODELS", "GeminiAdapter", "GeminiOptions"]

GEMINI_FIXED_MODELS = (
    "gemini-2.5-pro",
    "gemini-2.5-flash",
    "gemini-2.5-flash-lite",
    "gemini-3-pro-preview",
    "gemini-3.1-pro-preview",
    "gemini-3.5-flash",
    "gemini-3.1-flash-lite",
)
"""Concrete ids from gemini-cli's VALID_GEMINI_MODELS (reference/providers.md §3)."""

GEMINI_API_MODELS_URL = "https://generativelanguage.googleapis.com/v1beta/models"


class GeminiOptions(ProviderOptions):
    """Options of the gemini adapter.

    Attributes:
        skip_trust: pass ``--skip-trust`` so an untrusted working dir does not end the run.
    """

    skip_trust: bool = True


class GeminiAdapter(CliAdapter):
    """``gemini -p -o stream-json`` with an exact model (no effort levels)."""

    name = "gemini"
    executable = "gemini"
    supports_effort = False
    supports_output_schema = False
    options_model = GeminiOptions
    strip_env = ("GEMINI_MODEL",)

    def build_argv(self, exe: str, request: ProviderRequest,
                   options: GeminiOptions) -> tuple[list[str], str | None]:
        """The exact argv and the stdin text for `request`."""
        argv = [exe, "-o", "stream-json"]
        if request.model:
            argv += ["-m", request.model]
        if options.skip_trust:
            argv.append("--skip-trust")
        prompt = combined_prompt(request)
        if fits_argv(prompt):
            return [*argv, "-p", prompt], None
        return argv, prompt

    def run(
        self, request: ProviderRequest, *, cancel: threading.Event | None = None
    ) -> ProviderResult:
        """Run gemini headless; see the module docstring for what is verified.

        Raises:
            UnsupportedEffort (exit 2): an effort was assigned.
            ProviderNotInstalled, MissingCredentials, ModelUnavailable, QuotaExhausted,
            ModelMismatch, ModelRerouted, ModelUnverified, ProviderTimeout, OutputInvalid,
            ProviderError.
        """
        if request.effort:
            raise UnsupportedEffort(self.name, request.model, request.effort, [])
        options = self.parse_options(request)
        assert isinstance(options, GeminiOptions)
        env = self.child_env()
        exe = self.resolve(env)
        argv, stdin_text = self.build_argv(exe, request, options)
        proc = self.execute(argv, request, env=env, stdin_text=stdin_text, cancel=cancel)
        selection = selection_text(request.model, None)
        init_model = None
        session_id: str | None = None
        parts: list[str] = []
        result: dict[str, Any] | None = None
        errors: list[str] = []
        for event in json_lines(proc.stdout):
            kind = event.get("type")
            if kind == "init":
                session_id = str(event.get("session_id") or "") or session_id
                init_model = event.get("model") or init_model
            elif kind == "message" and event.get("role") == "assistant":
                content = event.get("content") or ""
                if not event.get("delta"):
                    parts.clear()
                parts.append(content if isinstance(content, str) else str(content))
            elif kind == "error":
                message = str(event.get("message") or "")
                self._check_reroute(message, request)
                errors.append(message)
            elif kind == "result":
                result = event
        if proc.returncode == 41:
            raise MissingCredentials(
                "not authenticated", provider=self.name,
                detail=" ".join(errors) or self.last_lines(proc.stderr),
                hint="run `gemini` once to log in, or set GEMINI_API_KEY",
            )
        if result is None or result.get("status") not in (None, "success") or proc.returncode:
            err = (result or {}).get("error") or {}
            detail = " ".join(
                x for x in (str(err.get("type") or ""), str(err.get("message") or ""),
                            *errors, self.last_lines(proc.stderr)) if x
            ) or f"exit code {proc.returncode}"
            # Only the CLI's own error report can announce a fallback: stderr carries its
            # start-up notes ("Ripgrep is not available. Falling back to GrepTool.").
            self._check_reroute(str(err.get("message") or ""), request)
            raise classify_error(detail, provider=self.name, selection=selection)
        stats = result.get("stats") or {}
        observed = self._verify(request, init_model, stats)
        text = "".join(parts) or str(result.get("response") or "")
        output = parse_output(text, request.output_schema, check=request.check_output,
                              provider=self.name)
        return ProviderResult(text=text, output=output, model=observed, usage=stats or None,
                              transcript=excerpt(proc.stdout), session_id=session_id)

    def _check_reroute(self, message: str, request: ProviderRequest) -> None:
        raise_if_rerouted(message, provider=self.name,
                          selection=selection_text(request.model, None),
                          what="Gemini fell back to another model", evidence="event")

    def _verify(self, request: ProviderRequest, init_model: str | None,
                stats: dict[str, Any]) -> str:
        if init_model is None:
            raise ModelUnverified("the stream had no init event naming the model",
                                  provider=self.name)
        # With no model assigned, the session must still end on the model it started with.
        expected = request.model or init_model
        assigned = selection_text(request.model, None)
        if not model_matches(expected, init_model):
            raise ModelMismatch("another model answered", provider=self.name,
                                assigned=assigned, observed=f"model {init_model}",
                                evidence="init.model")
        others: list[str] = []
        for model, data in (stats.get("models") or {}).items():
            roles = (data or {}).get("roles") if isinstance(data, dict) else None
            if roles is not None and not (roles.get("main") if isinstance(roles, dict) else 0):
                continue  # utility/router calls (flash-lite) are not the answer
            if not model_matches(expected, model):
                others.append(model)
        if others:
            # Every substitute is named: after a silent fallback the first one listed was
            # only asked (and failed), the answer came from a later one.
            observed = (f"model {others[0]}" if len(others) == 1
                        else "models " + ", ".join(others))
            raise ModelMismatch("another model answered", provider=self.name,
                                assigned=assigned, observed=observed,
                                evidence="result.stats.models")
        return init_model

    def discover_models(self, timeout_s: float = 30.0) -> list[ModelInfo]:
        """The Gemini API listing when a key is set, else the fixed concrete ids.

        Raises:
            DiscoveryFailed: the API listing failed or timed out.
        """
        key = get_api_key("gemini", ["GEMINI_API_KEY", "GOOGLE_API_KEY"], required=False)
        if key is None:
            return [ModelInfo(id=m, source="fixed-alias") for m in GEMINI_FIXED_MODELS]
        import httpx

        models: list[ModelInfo] = []
        params: dict[str, str] = {"pageSize": "1000"}
        try:
            with httpx.Client(timeout=timeout_s) as client:
                for _ in range(20):
                    resp = client.get(GEMINI_API_MODELS_URL, params=params,
                                      headers={"x-goog-api-key": key})
                    resp.raise_for_status()
                    body = resp.json()
                    for entry in body.get("models") or []:
                        name = str(entry.get("name", "")).removeprefix("models/")
                        methods = entry.get("supportedGenerationMethods") or []
                        if name.startswith("gemini") and "generateContent" in methods:
                            models.append(ModelInfo(id=name,
                                                    display_name=entry.get("displayName")))
                    token = body.get("nextPageToken")
                    if not token:
                        break
                    params["pageToken"] = token
        except (httpx.HTTPError, ValueError) as exc:
            raise DiscoveryFailed(f"Gemini API model listing failed: {exc}",
                                  provider=self.name) from exc
        return models
