"""opencode adapter: ``opencode run --format json -m provider/model [--variant EFFORT]``.

The model is always passed (opencode silently picks the newest available model when the
configured default is unavailable). The effort is opencode's provider-specific
*variant*. Long prompts go on stdin.

Verification: the JSON event stream names no model, so after the run
``opencode export <sessionID>`` is read and every assistant message's
``providerID/modelID`` (and ``variant``, when recorded) must be the assigned selection;
no export → ModelUnverified (fail closed).

Discovery: ``opencode models --verbose`` (ids ``provider/model``; variants when listed).

Spec: reference/providers.md §4.
"""

from __future__ import annotations

import json
import re
import tempfile
import threading
from typing import Any

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
from wardian.providers.process import fits_argv, run_process

__all__ = ["OpencodeAdapter", "OpencodeOptions"]

_MODEL_LINE = re.compile(r"^[A-Za-z0-9][\w.@-]*/\S+$")


class OpencodeOptions(ProviderOptions):
    """Options of the opencode adapter.

    Attributes:
        agent: ``--agent NAME`` when set.
        export_timeout_s: limit, in seconds, for the ``opencode export`` verification call.
    """

    agent: str | None = None
    export_timeout_s: float = 60.0


class OpencodeAdapter(CliAdapter):
    """``opencode run --format json`` with an exact ``provider/model`` and variant."""

    name = "opencode"
    executable = "opencode"
    supports_effort = True
    supports_output_schema = False
    effort_levels = ("minimal", "low", "medium", "high", "max")
    options_model = OpencodeOptions

    def build_argv(self, exe: str, request: ProviderRequest,
                   options: OpencodeOptions) -> tuple[list[str], str | None]:
        """The exact argv and the stdin text for `request`."""
        argv = [exe, "run", "--format", "json"]
        if request.model:
            argv += ["-m", request.model]
        if request.effort:
            argv += ["--variant", request.effort]
        if options.agent:
            argv += ["--agent", options.agent]
        prompt = combined_prompt(request)
        if fits_argv(prompt):
            return [*argv, prompt], None
        return argv, prompt

    def run(
        self, request: ProviderRequest, *, cancel: threading.Event | None = None
    ) -> ProviderResult:
        """Run opencode; see the module docstring for what is verified.

        Raises:
            ProviderNotInstalled, MissingCredentials, ModelUnavailable, QuotaExhausted,
            ModelMismatch, ModelRerouted, EffortLowered, ModelUnverified, ProviderTimeout,
            OutputInvalid, ProviderError.
        """
        options = self.parse_options(request)
        assert isinstance(options, OpencodeOptions)
        if request.cwd is None:
            # `opencode export` of a session started in another directory may hang, so
            # the run and its verification share one scratch directory.
            with tempfile.TemporaryDirectory(prefix="wardian-opencode-") as scratch:
                return self.run(request.model_copy(update={"cwd": scratch}), cancel=cancel)
        env = self.child_env()
        exe = self.resolve(env)
        argv, stdin_text = self.build_argv(exe, request, options)
        proc = self.execute(argv, request, env=env, stdin_text=stdin_text, cancel=cancel)
        selection = selection_text(request.model, request.effort)
        session_id = None
        step_text: list[str] = []
        final_text = None
        usage: dict[str, Any] = {}
        failure = None
        for event in json_lines(proc.stdout):
            session_id = event.get("sessionID") or session_id
            kind = event.get("type")
            part = event.get("part") or {}
            if kind == "step_start":
                step_text = []
            elif kind == "text":
                step_text.append(str(part.get("text") or ""))
            elif kind == "step_finish":
                usage = {"tokens": part.get("tokens"), "cost": part.get("cost")}
                if part.get("reason") != "tool-calls":
                    final_text = "".join(step_text)
            elif kind == "error":
                err = event.get("error") or {}
                message = f"{err.get('name') or ''} {(err.get('data') or {}).get('message') or ''}"
                raise_if_rerouted(message.strip(), provider=self.name, selection=selection,
                                  what="opencode switched models", evidence="error event")
                failure = message.strip() or "error event"
        if failure is not None:
            raise classify_error(failure, provider=self.name, selection=selection)
        if proc.returncode != 0 or final_text is None:
            detail = self.last_lines(proc.stderr) or f"exit code {proc.returncode}"
            raise classify_error(detail, provider=self.name, selection=selection)
        observed, variant = self._verify(exe, env, request, options, session_id)
        output = parse_output(final_text, request.output_schema, check=request.check_output,
                              provider=self.name)
        return ProviderResult(text=final_text, output=output, model=observed,
                              effort=variant, usage=usage or None,
                              transcript=excerpt(proc.stdout), session_id=session_id)

    def _verify(self, exe: str, env: dict[str, str], request: ProviderRequest,
                options: OpencodeOptions, session_id: str | None) -> tuple[str, str | None]:
        """The (model, variant) the export records; the variant is None when not recorded."""
        selection = selection_text(request.model, request.effort)
        if not session_id:
            raise ModelUnverified("the event stream carried no sessionID to verify the model",
                                  provider=self.name)
        try:
            proc = run_process([exe, "export", session_id], provider=self.name,
                               timeout_s=options.export_timeout_s, cwd=request.cwd, env=env)
        except ProviderError as exc:
            raise ModelUnverified(f"`opencode export {session_id}` failed: {exc.reason}",
                                  provider=self.name, detail=exc.detail) from exc
        text = proc.stdout
        start = text.find("{")
        try:
            document = json.loads(text[start:]) if start >= 0 else None
        except json.JSONDecodeError:
            document = None
        if proc.returncode != 0 or not isinstance(document, dict):
            raise ModelUnverified(
                f"`opencode export {session_id}` gave no session document",
                provider=self.name, detail=self.last_lines(proc.stderr),
            )
        observed: list[tuple[str, str | None]] = []
        for message in document.get("messages") or []:
            info = message.get("info") or {}
            if info.get("role") != "assistant":
                continue
            model_id = info.get("modelID")
            if not model_id:
                continue
            provider_id = info.get("providerID")
            full = f"{provider_id}/{model_id}" if provider_id else str(model_id)
            observed.append((full, info.get("variant")))
        if not observed:
            raise ModelUnverified(f"the export of session {session_id} names no assistant model",
                                  provider=self.name)
        for model, variant in observed:
            if not model_matches(request.model or observed[0][0], model):
                raise ModelMismatch("another model answered", provider=self.name,
                                    assigned=selection, observed=f"model {model}",
                                    evidence=f"opencode export {session_id}")
            if request.effort and variant and variant != request.effort:
                raise EffortLowered("opencode ran another variant", provider=self.name,
                                    assigned=selection,
                                    observed=selection_text(model, variant),
                                    evidence=f"opencode export {session_id}")
        return observed[-1]

    def discover_models(self, timeout_s: float = 30.0) -> list[ModelInfo]:
        """Parse ``opencode models --verbose``.

        Raises:
            DiscoveryFailed: opencode missing, failed, timed out, or listed nothing.
        """
        env = self.child_env()
        try:
            exe = self.resolve(env)
            proc = run_process([exe, "models", "--verbose"], provider=self.name,
                               timeout_s=timeout_s, env=env)
        except ProviderError as exc:
            raise DiscoveryFailed.wrap(exc, self.name) from exc
        if proc.returncode != 0:
            raise DiscoveryFailed("`opencode models --verbose` failed", provider=self.name,
                                  detail=self.last_lines(proc.stderr))
        models = _parse_models(proc.stdout)
        if not models:
            raise DiscoveryFailed("`opencode models --verbose` listed no models",
                                  provider=self.name)
        return models


def _parse_models(stdout: str) -> list[ModelInfo]:
    entries: list[tuple[str, list[str]]] = []
    for line in stdout.splitlines():
        stripped = line.strip()
        if _MODEL_LINE.match(stripped) and not line.startswith((" ", "\t")):
            entries.append((stripped, []))
        elif entries:
            entries[-1][1].append(line)
    models = []
    for model_id, body in entries:
        efforts: list[str] = []
        text = "\n".join(body).strip()
        if text.startswith("{"):
            try:
                meta = json.loads(text)
            except json.JSONDecodeError:
                meta = {}
            variants = meta.get("variants") if isinstance(meta, dict) else None
            if isinstance(variants, dict):
                efforts = [str(k) for k in variants]
            elif isinstance(variants, list):
                efforts = [str(v) for v in variants]
        models.append(ModelInfo(id=model_id, efforts=efforts))
    return models
