"""Anthropic Messages HTTP adapter with the effort parameter.

``POST {base_url}/v1/messages`` with ``output_config.effort`` (and
``output_config.format`` = JSON schema when the step declares an output schema).
``base_url`` comes from the setting ``providers.anthropic.base_url``; the key from
``ANTHROPIC_API_KEY`` or the OS keyring (service ``wardian``, user ``anthropic``).
The response ``model`` must be the assigned id (or a dated snapshot of it).

Discovery: ``GET /v1/models`` (paginated), with effort levels from
``capabilities.effort`` where the API reports them.

Spec: reference/providers.md §7.
"""

from __future__ import annotations

import threading
from typing import Any

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
    ModelMismatch,
    ModelUnverified,
    ProviderCancelled,
    ProviderError,
)

__all__ = ["AnthropicAdapter", "AnthropicOptions"]

DEFAULT_BASE_URL = "https://api.anthropic.com"
ANTHROPIC_VERSION = "2023-06-01"
_LEVELS = ("low", "medium", "high", "xhigh", "max")


class AnthropicOptions(ProviderOptions):
    """Options of the anthropic adapter.

    Attributes:
        max_tokens: the required ``max_tokens`` of a Messages request.
    """

    max_tokens: int = 16_000


def _efforts(capabilities: Any) -> list[str]:
    effort = (capabilities or {}).get("effort") if isinstance(capabilities, dict) else None
    if isinstance(effort, list):
        return [str(e) for e in effort]
    if not isinstance(effort, dict):
        return []
    levels = effort.get("levels")
    if isinstance(levels, list):
        return [str(e) for e in levels]
    found = [k for k, v in effort.items()
             if k != "supported" and (v is True or (isinstance(v, dict) and v.get("supported")))]
    return sorted(found, key=lambda e: _LEVELS.index(e) if e in _LEVELS else len(_LEVELS))


class AnthropicAdapter(ProviderAdapter):
    """The Anthropic Messages API."""

    name = "anthropic"
    supports_effort = True
    supports_output_schema = True
    effort_levels = _LEVELS
    options_model = AnthropicOptions

    def base_url(self) -> str:
        """The ``providers.anthropic.base_url`` setting, without a trailing slash."""
        from wardian.config import SettingsStore, open_state_db

        value = (SettingsStore(open_state_db()).get("providers.anthropic.base_url")
                 or DEFAULT_BASE_URL)
        return str(value).rstrip("/")

    def _headers(self) -> dict[str, str]:
        key = get_api_key(self.name, ["ANTHROPIC_API_KEY"], required=True)
        assert key is not None
        return {"x-api-key": key, "anthropic-version": ANTHROPIC_VERSION}

    def run(
        self, request: ProviderRequest, *, cancel: threading.Event | None = None
    ) -> ProviderResult:
        """Call Messages with exactly the assigned model and effort, then verify the model.

        Raises:
            UsageError: no model assigned.
            MissingCredentials, ModelUnavailable, EffortRejected, QuotaExhausted, RateLimited,
            ModelMismatch, ProviderTimeout, OutputInvalid, ProviderError.
        """
        options = self.parse_options(request)
        if cancel is not None and cancel.is_set():
            raise ProviderCancelled("cancelled before the request was sent", provider=self.name)
        assert isinstance(options, AnthropicOptions)
        if not request.model:
            raise UsageError("the anthropic provider needs a model in the assignment",
                             hint="see `wardian agent models --provider anthropic --refresh`")
        headers = self._headers()
        selection = selection_text(request.model, request.effort)
        body: dict[str, Any] = {
            "model": request.model,
            "max_tokens": options.max_tokens,
            "messages": [{"role": "user", "content": request.prompt}],
        }
        if request.system:
            body["system"] = request.system
        output_config: dict[str, Any] = {}
        if request.effort:
            output_config["effort"] = request.effort
        if request.output_schema is not None:
            output_config["format"] = {"type": "json_schema", "schema": request.output_schema}
        if output_config:
            body["output_config"] = output_config
        answer = http_call("POST", f"{self.base_url()}/v1/messages", provider=self.name,
                           selection=selection, headers=headers, timeout_s=request.timeout_s,
                           json_body=body)
        text = "".join(
            str(block.get("text") or "") for block in answer.get("content") or []
            if isinstance(block, dict) and block.get("type") == "text"
        )
        observed = answer.get("model")
        if not observed:
            raise ModelUnverified("the response names no model", provider=self.name)
        if not model_matches(request.model, str(observed)):
            raise ModelMismatch("another model answered", provider=self.name,
                                assigned=selection, observed=f"model {observed}",
                                evidence="response.model")
        output = parse_output(text, request.output_schema, check=request.check_output,
                              provider=self.name)
        return ProviderResult(text=text, output=output, model=str(observed),
                              effort=None, usage=answer.get("usage"),  # not reported
                              transcript=excerpt(text))

    def discover_models(self, timeout_s: float = 30.0) -> list[ModelInfo]:
        """``GET /v1/models`` (all pages), efforts from ``capabilities.effort``.

        Raises:
            DiscoveryFailed: the listing failed, timed out or had no credentials.
        """
        models: list[ModelInfo] = []
        params: dict[str, Any] = {"limit": 1000}
        try:
            headers = self._headers()
            for _ in range(50):
                body = http_call("GET", f"{self.base_url()}/v1/models", provider=self.name,
                                 selection="model listing", headers=headers,
                                 timeout_s=timeout_s, params=params)
                for entry in body.get("data") or []:
                    efforts = _efforts(entry.get("capabilities"))
                    models.append(ModelInfo(
                        id=str(entry.get("id")), efforts=efforts,
                        default_effort="high" if "high" in efforts else None,
                        display_name=entry.get("display_name"),
                    ))
                if not body.get("has_more") or not body.get("last_id"):
                    break
                params["after_id"] = body["last_id"]
        except ProviderError as exc:
            raise DiscoveryFailed.wrap(exc, self.name) from exc
        return models
