"""Provider errors: one class per cause, each with a stable `code` for run records.

Every failure of a role step's provider surfaces as one of these; nothing is retried
with another model or provider. Catalog and
assignment problems found *before* a run are usage/validation errors (exit 2) that
say which command to run.

Tree::

    WardianError
    ├── ProviderError                  exit 1, code "provider_failed"
    │   ├── ProviderNotInstalled       the CLI is not on PATH
    │   ├── MissingCredentials         no API key / not logged in
    │   ├── ModelUnavailable           the provider does not serve the assigned model
    │   ├── EffortRejected             the provider rejected the assigned effort
    │   ├── QuotaExhausted             quota, billing or usage limit reached
    │   ├── RateLimited                a transient rate limit (not retried here)
    │   ├── SelectionMismatch          the answer did not come from the assigned selection
    │   │   ├── ModelMismatch          another model answered
    │   │   ├── ModelRerouted          the provider announced a reroute/fallback
    │   │   └── EffortLowered          the effort was silently lowered
    │   ├── ModelUnverified            the answering model could not be established
    │   ├── ProviderTimeout            the child/request ran past its timeout (tree killed)
    │   ├── ProviderCancelled          cancelled by the caller (tree killed)
    │   ├── OutputInvalid              the answer is not JSON or fails the output schema
    │   └── DiscoveryFailed            model discovery failed (catalog refresh)
    └── UsageError (exit 2)
        ├── UnknownProvider            lists the known providers
        ├── CatalogNotRefreshed        "run `wardian agent models --provider P --refresh`"
        └── ValidationError
            ├── UnknownModel
            ├── UnsupportedEffort
            └── OutputUnsupported      the provider cannot answer the step's output schema
"""

from __future__ import annotations

from wardian.errors import UsageError, ValidationError, WardianError

__all__ = [
    "CatalogNotRefreshed",
    "DiscoveryFailed",
    "EffortLowered",
    "EffortRejected",
    "MissingCredentials",
    "ModelMismatch",
    "ModelRerouted",
    "ModelUnavailable",
    "ModelUnverified",
    "OutputInvalid",
    "OutputUnsupported",
    "ProviderCancelled",
    "ProviderError",
    "ProviderNotInstalled",
    "ProviderTimeout",
    "QuotaExhausted",
    "RateLimited",
    "SelectionMismatch",
    "UnknownModel",
    "UnknownProvider",
    "UnsupportedEffort",
]


def refresh_command(provider: str) -> str:
    """The command that refreshes `provider`'s catalog, quoted for messages."""
    return f"`wardian agent models --provider {provider} --refresh`"


class ProviderError(WardianError):
    """A provider run failed (exit 1). `code` is stable and goes into run records.

    Args:
        message: what failed, naming the selection (kept as `reason`; the provider name
            is prefixed to the rendered text).
        provider: the provider name (``codex``, ``openai``, …).
        detail: the provider's own words (error message, stderr excerpt), when any.
        hint: how to fix it.
    """

    code = "provider_failed"
    session_id: str | None = None
    """The provider's session/thread id of the failed call, when the adapter learned it."""
    transcript_path: str | None = None
    """The transcript file the provider kept of the failed call, when known."""
    partial_stdout: str | None = None
    """What the process printed before it was killed (timeout, cancel), when it was."""
    open_files: tuple[str, ...] = ()
    """The files its process tree held open when it was killed (timeout, cancel): a
    transcript the CLI writes as it goes is one of them, also before it named its session."""

    def __init__(
        self,
        message: str,
        *,
        provider: str | None = None,
        detail: str | None = None,
        hint: str | None = None,
    ) -> None:
        self.provider = provider
        self.reason = message
        self.detail = detail
        text = f"{provider}: {message}" if provider else message
        if detail:
            text = f"{text}: {detail.strip()[:500]}"
        super().__init__(text, hint=hint)


class ProviderNotInstalled(ProviderError):
    """The provider's CLI executable was not found on PATH."""

    code = "provider_not_installed"


class MissingCredentials(ProviderError):
    """No API key in the environment or keyring, or the CLI is not logged in."""

    code = "missing_credentials"


class ModelUnavailable(ProviderError):
    """The provider says the assigned model does not exist or is not available to you."""

    code = "model_unavailable"


class EffortRejected(ProviderError):
    """The provider rejected the assigned effort level for this model."""

    code = "effort_rejected"


class QuotaExhausted(ProviderError):
    """The account's quota, credit or usage limit is exhausted."""

    code = "quota_exhausted"


class RateLimited(ProviderError):
    """A transient rate limit; the step fails (the engine's retry policy decides, not us)."""

    code = "rate_limited"


class SelectionMismatch(ProviderError):
    """The answer did not come from the assigned selection.

    Args:
        assigned: the assigned selection, e.g. ``model gpt-5 effort high``.
        observed: what the provider reported, e.g. ``model gpt-5-mini``.
        evidence: where the observation came from (``system/init``, ``response.model``, …).
    """

    code = "selection_mismatch"

    def __init__(
        self,
        what: str,
        *,
        provider: str,
        assigned: str,
        observed: str,
        evidence: str,
    ) -> None:
        self.assigned = assigned
        self.observed = observed
        self.evidence = evidence
        super().__init__(
            f"{what}: assigned {assigned}, observed {observed} (from {evidence})",
            provider=provider,
            hint="Wardian never accepts a substitute; fix the assignment or the provider "
            "account, then run the step again",
        )


class ModelMismatch(SelectionMismatch):
    """Another model answered than the one assigned."""

    code = "model_mismatch"


class ModelRerouted(SelectionMismatch):
    """The provider announced a reroute or fallback to another model."""

    code = "model_rerouted"


class EffortLowered(SelectionMismatch):
    """The provider ran with a lower effort than assigned."""

    code = "effort_lowered"


class ModelUnverified(ProviderError):
    """The model that answered could not be established, so the result is refused."""

    code = "model_unverified"


class ProviderTimeout(ProviderError):
    """The provider ran past `timeout_s`; the whole process tree was killed."""

    code = "provider_timeout"


class ProviderCancelled(ProviderError):
    """The run was cancelled; the whole process tree was killed."""

    code = "provider_cancelled"


class OutputInvalid(ProviderError):
    """The final answer is not JSON, or does not match the output schema.

    Args:
        path: the JSON path of the first violation (``$`` for the whole document).
    """

    code = "output_invalid"

    def __init__(self, message: str, *, provider: str | None = None, path: str = "$") -> None:
        self.path = path
        super().__init__(f"output at {path}: {message}", provider=provider)


class DiscoveryFailed(ProviderError):
    """Model discovery failed (timeout, missing CLI, bad answer); fails closed."""

    code = "discovery_failed"

    @classmethod
    def wrap(cls, exc: ProviderError, provider: str | None = None) -> DiscoveryFailed:
        """`exc` (met while discovering models) as a DiscoveryFailed with the same words.

        Keeps the reason, the provider's own detail and the hint (how to fix it), without
        naming the provider twice.
        """
        if isinstance(exc, DiscoveryFailed):
            return exc
        return cls(exc.reason, provider=provider or exc.provider, detail=exc.detail,
                   hint=exc.hint)


class UnknownProvider(UsageError):
    """The provider name is not registered (exit 2); the message lists the known ones."""

    def __init__(self, provider: str, known: list[str]) -> None:
        self.provider = provider
        self.known = known
        super().__init__(
            f"unknown provider {provider!r}", hint=f"known providers: {', '.join(known)}"
        )


class CatalogNotRefreshed(UsageError):
    """The provider's model catalog was never fetched (exit 2)."""

    def __init__(self, provider: str) -> None:
        self.provider = provider
        super().__init__(
            f"the model catalog of {provider} was never refreshed",
            hint=f"run {refresh_command(provider)}",
        )


class UnknownModel(ValidationError):
    """The model is not in the provider's catalog (exit 2)."""

    def __init__(self, provider: str, model: str, known: list[str], *, path: str | None = None):
        self.provider = provider
        self.model = model
        shown = ", ".join(known[:12]) + (", …" if len(known) > 12 else "")
        super().__init__(
            f"model {model!r} is not in the {provider} catalog (known: {shown or 'none'})",
            path=path,
            hint=f"pick one listed by {refresh_command(provider)}",
        )


class UnsupportedEffort(ValidationError):
    """The effort level is not supported by the provider or model (exit 2).

    Args:
        supported: the efforts the provider/model has (empty: none at all).
        not_passed: why the provider would not send `effort` as the request's effort
            (`ProviderAdapter.efforts_not_passed`): a role step refuses it.
    """

    def __init__(
        self,
        provider: str,
        model: str | None,
        effort: str,
        supported: list[str],
        *,
        path: str | None = None,
        not_passed: str | None = None,
    ) -> None:
        self.provider = provider
        self.model = model
        self.effort = effort
        target = f"{provider} model {model}" if model else provider
        if not_passed:
            msg = f"effort {effort!r} cannot be passed to {target} for a step: {not_passed}"
            others = [e for e in supported if e != effort]
            hint = "assign an effort the provider sends as it is" + (
                f": {', '.join(others)}" if others else "")
        elif supported:
            msg = f"effort {effort!r} is not supported by {target} (supported: " + ", ".join(
                supported
            ) + ")"
            hint = f"see {refresh_command(provider)}"
        else:
            msg = f"{target} has no effort levels, but effort {effort!r} was assigned"
            hint = "drop `effort` from the assignment"
        super().__init__(msg, path=path, hint=hint)


class OutputUnsupported(ValidationError):
    """A provider cannot produce a role step's output schema (exit 2): the ``builtin``
    provider answers only the registered output schemas it implements
    (`wardian.providers.builtin.builtin_output_schemas`).

    Args:
        provider: the provider's name.
        output_ref: the step's registered output schema name, or None for an inline one.
        answerable: the output schema names the provider implements.
        step / role: the step and its role, when known (for the message).
        path / source: as for `ValidationError` (``steps[2].output``, ``--assignments``).
    """

    def __init__(self, provider: str, output_ref: str | None, answerable: list[str], *,
                 step: str | None = None, role: str | None = None, path: str | None = None,
                 source: str | None = None) -> None:
        self.provider = provider
        self.output_ref = output_ref
        self.answerable = answerable
        what = f"output schema {output_ref!r}" if output_ref else "an inline output schema"
        who = f"step {step!r} (role {role!r})" if step and role else "this step"
        implemented = ", ".join(answerable) or "none"
        super().__init__(
            f"{who} needs {what}, which the {provider} provider cannot answer: it answers "
            f"only {implemented}", path=path, source=source,
            hint=f"assign role {role or '…'!r} to a model provider (claude, codex, gemini, "
                 "opencode, openai, anthropic): a model can answer any JSON Schema")
