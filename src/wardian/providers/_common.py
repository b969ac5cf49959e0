"""Helpers shared by adapters: answer validation, model matching, error classification,
credentials (environment or OS keyring only), and the prompt text a CLI receives.

Spec: DESIGN.md "Blueprints, runs, providers" (no fallback, verified; output).
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Iterable
from typing import Any

from wardian.providers.base import ProviderRequest
from wardian.providers.errors import (
    EffortRejected,
    MissingCredentials,
    ModelRerouted,
    ModelUnavailable,
    OutputInvalid,
    ProviderError,
    QuotaExhausted,
    RateLimited,
)

__all__ = [
    "classify_error",
    "combined_prompt",
    "get_api_key",
    "json_lines",
    "model_matches",
    "parse_output",
    "raise_if_rerouted",
    "reroute_notice",
]

TRANSCRIPT_EXCERPT_CHARS = 8192


def combined_prompt(request: ProviderRequest) -> str:
    """The text a CLI gets when it has no separate system-prompt channel we rely on."""
    if request.system.strip():
        return f"{request.system.strip()}\n\n{request.prompt}"
    return request.prompt


def _strip_fence(text: str) -> str:
    stripped = text.strip()
    match = re.fullmatch(r"```(?:json|JSON)?\s*\n(.*?)\n?```", stripped, flags=re.DOTALL)
    return match.group(1) if match else stripped


def _json_path(parts: Iterable[Any]) -> str:
    path = "$"
    for part in parts:
        path += f"[{part}]" if isinstance(part, int) else f".{part}"
    return path


def parse_output(
    text: str, schema: dict[str, Any] | None, *, provider: str, structured: Any = None,
    check: bool = True,
) -> dict[str, Any] | None:
    """Parse the final answer as JSON and validate it against `schema` (jsonschema).

    Args:
        text: the answer text (a single fenced ```json block is accepted).
        schema: the output JSON Schema; None means free text (returns None).
        structured: an already-parsed document the provider returned, used instead of text.
        check: validate against `schema` (`ProviderRequest.check_output`); False = parse
            only, for a caller that checks the answer itself (the engine).

    Raises:
        OutputInvalid: not JSON, not an object, or (with `check`) a schema violation (with
            its JSON path).
    """
    if schema is None:
        return None

    if structured is not None:
        document = structured
    else:
        try:
            document = json.loads(_strip_fence(text))
        except json.JSONDecodeError as exc:
            raise OutputInvalid(
                f"the answer is not JSON ({exc.msg} at line {exc.lineno} column {exc.colno})",
                provider=provider,
            ) from exc
    if check:
        import jsonschema

        validator_cls = jsonschema.validators.validator_for(schema)
        validator = validator_cls(schema)
        errors = sorted(validator.iter_errors(document), key=lambda e: list(e.absolute_path))
        if errors:
            first = errors[0]
            raise OutputInvalid(first.message, provider=provider,
                                path=_json_path(first.absolute_path))
    if not isinstance(document, dict):
        raise OutputInvalid("the answer must be a JSON object", provider=provider)
    return document


def model_matches(assigned: str, observed: str, aliases: dict[str, str] | None = None) -> bool:
    """Whether `observed` is the assigned model (exactly, or a dated snapshot of it).

    ``gpt-5`` matches ``gpt-5-2025-08-07`` (APIs report the resolved snapshot) but not
    ``gpt-5-mini``; ``claude-fable-5[1m]`` matches ``claude-fable-5``; an alias (``opus``)
    matches ids containing its family (``-opus-``) when `aliases` maps it.
    """
    # ``[1m]``-style suffixes select a context window, not another model.
    a = re.sub(r"\[\w+\]$", "", assigned.strip().lower())
    o = re.sub(r"\[\w+\]$", "", observed.strip().lower())
    if "/" in a and "/" not in o:
        a = a.split("/", 1)[1]
    if a == o:
        return True
    if o.startswith(a + "-") and re.fullmatch(r"\d{4}-?\d{2}-?\d{2}|\d{8}|latest", o[len(a) + 1:]):
        return True
    if aliases and a in aliases:
        return re.search(aliases[a], o) is not None
    return False


_REROUTE = re.compile(
    r"model rerouted: *(?P<from>\S+) *-> *(?P<to>\S+)|"
    r"(?:falling back|fell back|switch(?:ed|ing)) (?:from \S+ )?to (?:the )?(?:fallback )?"
    r"(?:model )?(?P<to2>\S+)",
    re.IGNORECASE,
)


def reroute_notice(message: str) -> str | None:
    """The model a reroute/fallback notice names, or None when `message` is no such notice."""
    match = _REROUTE.search(message or "")
    if not match:
        return None
    return (match.group("to") or match.group("to2") or "another model").strip("`'\".,()")


def raise_if_rerouted(message: str, *, provider: str, selection: str, what: str,
                      evidence: str) -> None:
    """Fail the step when `message` announces a reroute or fallback to another model.

    Args:
        message: an error/warning text from the provider's stream.
        selection: the assigned selection (``model M effort E``).
        what: the summary, e.g. ``Gemini fell back to another model``.
        evidence: where `message` came from (``codex error item``), for the message.

    Raises:
        ModelRerouted: naming the assigned selection and the model the notice names.
    """
    target = reroute_notice(message)
    if target is not None:
        raise ModelRerouted(what, provider=provider, assigned=selection,
                            observed=f"model {target}", evidence=f"{evidence} {message!r}")


_QUOTA = re.compile(
    r"insufficient_quota|quota|billing|credit balance|usage limit|exceeded your current|"
    r"TerminalQuotaError|out of credits|spending limit",
    re.IGNORECASE,
)
_AUTH = re.compile(
    r"\b401\b|unauthori[sz]ed|invalid[_ ]api[_ ]key|authentication|not logged in|"
    r"please run /login|codex login|api key|apikey|permission denied|forbidden|\b403\b",
    re.IGNORECASE,
)
_MODEL = re.compile(
    r"model_not_found|model .{0,80}(?:not found|does not exist|not supported|not available|"
    r"unavailable|is not a recognized)|unknown model|invalid model|no such model|"
    r"ModelNotFound|not_found_error|issue with the selected model|may not exist",
    re.IGNORECASE,
)
_EFFORT = re.compile(r"reasoning[._ ]effort|effort.{0,40}(?:not supported|invalid|unsupported)",
                     re.IGNORECASE)
_RATE = re.compile(r"rate[_ ]limit|\b429\b|too many requests|overloaded|\b529\b", re.IGNORECASE)


def classify_error(
    message: str, *, provider: str, selection: str, default: type[ProviderError] = ProviderError
) -> ProviderError:
    """Map a provider's error text to our error class (checked most specific first).

    Args:
        message: the provider's own words.
        selection: the assigned selection, e.g. ``model gpt-5 effort high``, for the message.
        default: the class used when nothing matches.
    """
    if _QUOTA.search(message):
        return QuotaExhausted(
            f"quota exhausted while running {selection}", provider=provider, detail=message,
            hint="check the account's plan, credit or usage limits; nothing was retried",
        )
    if _EFFORT.search(message):
        return EffortRejected(
            f"the provider rejected the effort of {selection}", provider=provider,
            detail=message,
            hint=f"pick an effort listed by `wardian agent models --provider {provider} "
            "--refresh`",
        )
    if _MODEL.search(message):
        return ModelUnavailable(
            f"the assigned model is not available ({selection})", provider=provider,
            detail=message,
            hint=f"refresh the catalog with `wardian agent models --provider {provider} "
            "--refresh` and assign a listed model",
        )
    if _AUTH.search(message):
        return MissingCredentials(
            f"not authenticated ({selection})", provider=provider, detail=message,
            hint=f"log in to the {provider} CLI or set its API key",
        )
    if _RATE.search(message):
        return RateLimited(
            f"rate limited while running {selection}", provider=provider, detail=message,
            hint="wait and run the step again; Wardian does not switch models",
        )
    return default(f"{selection} failed", provider=provider, detail=message)


def _keyring_password(provider: str) -> str | None:
    """The key stored for `provider` under service ``wardian`` in the OS keyring, or None.

    Finding the backend starts no process: keyring imports every installed backend to rank
    them, and its macOS one loads the Security framework at import through
    ``ctypes.util.find_library``, which on other systems runs ldconfig, gcc and ld and then
    fails. Off macOS that module is blocked, so that backend reports itself unavailable
    without the search. Other backends and keyring's own configuration
    (``PYTHON_KEYRING_BACKEND``, ``keyringrc.cfg``) are untouched.
    """
    if sys.platform != "darwin":
        sys.modules.setdefault("keyring.backends.macOS.api", None)  # type: ignore[arg-type]
    import keyring

    return keyring.get_password("wardian", provider)


def get_api_key(provider: str, env_names: Iterable[str], *, required: bool) -> str | None:
    """An API key from the environment, else the OS keyring (service ``wardian``).

    Keys are never stored in state.db or run records; this is the only place they are read.

    Raises:
        MissingCredentials: no key found and `required`.
    """
    names = list(env_names)
    for name in names:
        value = os.environ.get(name)
        if value:
            return value
    try:
        value = _keyring_password(provider)
    except Exception:
        value = None
    if value:
        return value
    if required:
        raise MissingCredentials(
            "no API key found",
            provider=provider,
            hint=f"set {' or '.join(names)}, or store it with "
            f"`keyring set wardian {provider}`",
        )
    return None


def json_lines(stdout: str) -> Iterable[dict[str, Any]]:
    """Each JSON object line of `stdout` (other lines are skipped)."""
    for line in stdout.splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict):
            yield value


def selection_text(model: str | None, effort: str | None) -> str:
    """``model M effort E`` for messages (``provider default`` when absent)."""
    text = f"model {model}" if model else "the provider's default model"
    return f"{text} effort {effort}" if effort else text


def excerpt(text: str, limit: int = TRANSCRIPT_EXCERPT_CHARS) -> str:
    """The last `limit` characters of `text` (the end of a transcript is the useful part)."""
    return text if len(text) <= limit else "…" + text[-limit:]
