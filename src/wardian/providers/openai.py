"""OpenAI-compatible HTTP adapter: Responses API or Chat Completions, with reasoning effort.

``base_url`` comes from the setting ``providers.openai.base_url`` (default
``https://api.openai.com/v1``), so Ollama, vLLM, LM Studio and llama.cpp servers work.
The key comes from ``OPENAI_API_KEY`` or the OS keyring (service ``wardian``, user
``openai``); it is required only for api.openai.com.

Before the call ``GET /models`` must list the exact model id (llama.cpp and others answer
with whatever they loaded, so the response's ``model`` alone cannot be trusted); after it,
the response ``model`` must be the assigned id or a dated snapshot of it, and a Responses
answer's ``reasoning.effort`` (the only place the API reports it) the assigned effort.

Effort: Responses ``reasoning.effort`` / Chat ``reasoning_effort``. ``/models`` carries no
effort data, so the catalog's effort levels come from `openai_efforts` (a capability
table by model family, reference/providers.md §6).

Spec: reference/providers.md §5, §6, §8.
"""

from __future__ import annotations

import re
import threading
import time
from typing import Any, Literal
from urllib.parse import urlparse

from wardian.errors import UsageError
from wardian.providers._common import (
    excerpt,
    get_api_key,
    model_matches,
    parse_output,
    selection_text,
)
from wardian.providers._http import http_call
from wardian.providers.base import (
    ModelInfo,
    ProviderAdapter,
    ProviderOptions,
    ProviderRequest,
    ProviderResult,
)
from wardian.providers.errors import (
    DiscoveryFailed,
    EffortLowered,
    ModelMismatch,
    ModelUnavailable,
    ModelUnverified,
    ProviderCancelled,
    ProviderError,
    ProviderTimeout,
)

__all__ = ["OpenAIAdapter", "OpenAIOptions", "openai_efforts"]

DEFAULT_BASE_URL = "https://api.openai.com/v1"


def openai_efforts(model_id: str) -> list[str]:
    """Effort levels of an OpenAI model id by family (empty: the model takes none)."""
    m = model_id.lower().split("/")[-1]
    if re.match(r"o[134](-|$)", m) or "gpt-oss" in m:
        return ["low", "medium", "high"]
    match = re.match(r"gpt-(\d+)(?:\.(\d+))?", m)
    if not match:
        return []
    major, minor = int(match.group(1)), int(match.group(2) or 0)
    if major < 5:
        return []
    if major == 5 and minor == 0:
        return ["minimal", "low", "medium", "high"]
    if major == 5 and minor == 1:
        return ["none", "low", "medium", "high", *(["xhigh"] if "codex-max" in m else [])]
    return ["none", "low", "medium", "high", "xhigh"]


class OpenAIOptions(ProviderOptions):
    """Options of the openai adapter.

    Attributes:
        api: ``responses``, ``chat`` (Chat Completions) or ``auto`` (Responses on
            api.openai.com, Chat Completions elsewhere — what local servers speak).
        check_listed: require the model in ``GET /models`` before the call.
        max_output_tokens: output cap, when set.
    """

    api: Literal["auto", "responses", "chat"] = "auto"
    check_listed: bool = True
    max_output_tokens: int | None = None


class OpenAIAdapter(ProviderAdapter):
    """The OpenAI HTTP API and OpenAI-compatible local servers."""

    name = "openai"
    supports_effort = True
    supports_output_schema = True
    effort_levels = ("none", "minimal", "low", "medium", "high", "xhigh")
    options_model = OpenAIOptions

    def base_url(self) -> str:
        """The ``providers.openai.base_url`` setting, without a trailing slash."""
        from wardian.config import SettingsStore, open_state_db

        value = SettingsStore(open_state_db()).get("providers.openai.base_url") or DEFAULT_BASE_URL
        return str(value).rstrip("/")

    def _headers(self, base: str) -> dict[str, str]:
        official = urlparse(base).hostname == "api.openai.com"
        key = get_api_key(self.name, ["OPENAI_API_KEY"], required=official)
        return {"Authorization": f"Bearer {key}"} if key else {}

    def listed_models(self, timeout_s: float, selection: str = "model listing") -> list[str]:
        """The ids ``GET {base_url}/models`` lists."""
        base = self.base_url()
        body = http_call("GET", f"{base}/models", provider=self.name, selection=selection,
                         headers=self._headers(base), timeout_s=timeout_s)
        data = body.get("data")
        if not isinstance(data, list):
            raise ProviderError(f"{base}/models did not return a list", provider=self.name)
        return [str(m.get("id")) for m in data if isinstance(m, dict) and m.get("id")]

    def run(
        self, request: ProviderRequest, *, cancel: threading.Event | None = None
    ) -> ProviderResult:
        """Call the API with exactly the assigned model and effort, then verify the model.

        Raises:
            UsageError: no model assigned (an HTTP API needs one).
            MissingCredentials, ModelUnavailable, EffortRejected, QuotaExhausted, RateLimited,
            ModelMismatch, ProviderTimeout, OutputInvalid, ProviderError.
        """
        options = self.parse_options(request)
        if cancel is not None and cancel.is_set():
            raise ProviderCancelled("cancelled before the request was sent", provider=self.name)
        assert isinstance(options, OpenAIOptions)
        if not request.model:
            raise UsageError("the openai provider needs a model in the assignment",
                             hint="see `wardian agent models --provider openai --refresh`")
        base = self.base_url()
        headers = self._headers(base)
        selection = selection_text(request.model, request.effort)
        deadline = time.monotonic() + request.timeout_s  # one limit for listing + answer
        if options.check_listed:
            listed = self.listed_models(request.timeout_s, selection)
            if request.model not in listed:
                raise ModelUnavailable(
                    f"{base}/models does not list {request.model!r}", provider=self.name,
                    detail=f"listed: {', '.join(listed[:20]) or 'nothing'}",
                    hint="load/pull the model on the server, or assign a listed one",
                )
        api = options.api
        if api == "auto":
            api = "responses" if urlparse(base).hostname == "api.openai.com" else "chat"
        if api == "responses":
            body = self._responses_body(request, options)
            answer = http_call("POST", f"{base}/responses", provider=self.name,
                               selection=selection, headers=headers,
                               timeout_s=_remaining(deadline, request.timeout_s), json_body=body)
            text = _responses_text(answer)
        else:
            body = self._chat_body(request, options)
            answer = http_call("POST", f"{base}/chat/completions", provider=self.name,
                               selection=selection, headers=headers,
                               timeout_s=_remaining(deadline, request.timeout_s), json_body=body)
            choices = answer.get("choices") or [{}]
            text = str(((choices[0] or {}).get("message") or {}).get("content") or "")
        observed = answer.get("model")
        if not observed:
            raise ModelUnverified("the response names no model", provider=self.name)
        if not model_matches(request.model, str(observed)):
            raise ModelMismatch("another model answered", provider=self.name,
                                assigned=selection, observed=f"model {observed}",
                                evidence="response.model")
        reasoning = answer.get("reasoning")
        effort = reasoning.get("effort") if isinstance(reasoning, dict) else None
        if request.effort and effort and effort != request.effort:
            raise EffortLowered("the API ran with another reasoning effort",
                                provider=self.name, assigned=selection,
                                observed=selection_text(str(observed), str(effort)),
                                evidence="response.reasoning.effort")
        output = parse_output(text, request.output_schema, check=request.check_output,
                              provider=self.name)
        return ProviderResult(text=text, output=output, model=str(observed),
                              effort=str(effort) if effort else None, usage=answer.get("usage"),
                              transcript=excerpt(text))

    def _responses_body(self, request: ProviderRequest,
                        options: OpenAIOptions) -> dict[str, Any]:
        body: dict[str, Any] = {"model": request.model, "input": request.prompt}
        if request.system:
            body["instructions"] = request.system
        if request.effort:
            body["reasoning"] = {"effort": request.effort}
        if request.output_schema is not None:
            body["text"] = {"format": {"type": "json_schema", "name": "output",
                                       "schema": request.output_schema, "strict": False}}
        if options.max_output_tokens:
            body["max_output_tokens"] = options.max_output_tokens
        return body

    def _chat_body(self, request: ProviderRequest, options: OpenAIOptions) -> dict[str, Any]:
        messages = []
        if request.system:
            messages.append({"role": "system", "content": request.system})
        messages.append({"role": "user", "content": request.prompt})
        body: dict[str, Any] = {"model": request.model, "messages": messages}
        if request.effort:
            body["reasoning_effort"] = request.effort
        if request.output_schema is not None:
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "output", "schema": request.output_schema,
                                "strict": False},
            }
        if options.max_output_tokens:
            body["max_completion_tokens"] = options.max_output_tokens
        return body

    def discover_models(self, timeout_s: float = 30.0) -> list[ModelInfo]:
        """``GET {base_url}/models``; efforts from `openai_efforts`.

        Raises:
            DiscoveryFailed: the listing failed, timed out or had no credentials.
        """
        try:
            ids = self.listed_models(timeout_s)
        except ProviderError as exc:
            raise DiscoveryFailed.wrap(exc, self.name) from exc
        models = []
        for model_id in sorted(set(ids)):
            efforts = openai_efforts(model_id)
            models.append(ModelInfo(id=model_id, efforts=efforts,
                                    default_effort="medium" if efforts else None))
        return models


def _remaining(deadline: float, timeout_s: float) -> float:
    """Seconds left before `deadline` (monotonic), or raise ProviderTimeout."""
    left = deadline - time.monotonic()
    if left <= 0:
        raise ProviderTimeout(f"the model listing used the whole {timeout_s:g} s",
                              provider=OpenAIAdapter.name)
    return left


def _responses_text(answer: dict[str, Any]) -> str:
    if isinstance(answer.get("output_text"), str):
        return str(answer["output_text"])
    parts: list[str] = []
    for item in answer.get("output") or []:
        if not isinstance(item, dict) or item.get("type") != "message":
            continue
        for content in item.get("content") or []:
            if isinstance(content, dict) and content.get("type") == "output_text":
                parts.append(str(content.get("text") or ""))
    return "".join(parts)
