"""HTTP plumbing for the API adapters: one place where httpx errors become ours.

Adapters openai and anthropic; STYLE.md habit 4 (translate at the boundary).
"""

from __future__ import annotations

from typing import Any

from wardian.providers._common import classify_error
from wardian.providers.errors import (
    MissingCredentials,
    ModelUnavailable,
    ProviderError,
    ProviderTimeout,
    QuotaExhausted,
    RateLimited,
)

__all__ = ["http_call"]


def _error_text(body: Any) -> str:
    if isinstance(body, dict):
        err = body.get("error", body)
        if isinstance(err, dict):
            bits = [str(err.get(k)) for k in ("type", "code", "param", "message") if err.get(k)]
            return " ".join(bits)
        return str(err)
    return str(body)[:500]


def http_call(
    method: str,
    url: str,
    *,
    provider: str,
    selection: str,
    headers: dict[str, str],
    timeout_s: float,
    json_body: dict[str, Any] | None = None,
    params: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Send one request and return the JSON body; map every failure to a ProviderError.

    Raises:
        ProviderTimeout: no answer within `timeout_s` seconds.
        MissingCredentials: 401/403.
        ModelUnavailable: 404 on a request naming a model (model not found).
        ProviderError: 404 on a request naming no model (a listing): the URL is wrong.
        QuotaExhausted: 402, or 429 naming quota/billing.
        RateLimited: other 429, 529.
        ProviderError: unreachable server, non-JSON body, other statuses (classified).
    """
    import httpx

    try:
        with httpx.Client(timeout=timeout_s) as client:
            resp = client.request(method, url, headers=headers, json=json_body, params=params)
    except httpx.TimeoutException as exc:
        raise ProviderTimeout(f"no answer from {url} within {timeout_s:g} s",
                              provider=provider) from exc
    except httpx.HTTPError as exc:
        raise ProviderError(f"cannot reach {url}", provider=provider, detail=str(exc),
                            hint=f"check the providers.{provider}.base_url setting and that the "
                            "server runs") from exc
    try:
        body = resp.json()
    except ValueError:
        body = resp.text
    if resp.is_success:
        if not isinstance(body, dict):
            raise ProviderError(f"{url} answered with a non-JSON body", provider=provider,
                                detail=str(body)[:300])
        return body
    text = f"HTTP {resp.status_code} {_error_text(body)}"
    status = resp.status_code
    if status in (401, 403):
        raise MissingCredentials(f"the API refused the credentials ({selection})",
                                 provider=provider, detail=text,
                                 hint="check the API key in the environment or keyring")
    if status == 402:
        raise QuotaExhausted(f"payment required ({selection})", provider=provider, detail=text)
    if status == 404 and not (json_body and json_body.get("model")):
        raise ProviderError(
            f"{url} does not exist (HTTP 404)", provider=provider, detail=text,
            hint=f"check the providers.{provider}.base_url setting (`wardian settings get "
            f"providers.{provider}.base_url`); OpenAI-compatible servers usually end in /v1",
        )
    if status == 404:
        raise ModelUnavailable(f"the assigned model is not available ({selection})",
                               provider=provider, detail=text,
                               hint=f"see `wardian agent models --provider {provider} --refresh`")
    if status in (429, 529):
        error = classify_error(text, provider=provider, selection=selection,
                               default=RateLimited)
        if isinstance(error, QuotaExhausted):
            raise error
        raise RateLimited(f"rate limited or overloaded ({selection})", provider=provider,
                          detail=text, hint="run the step again later; nothing was retried")
    raise classify_error(text, provider=provider, selection=selection)
