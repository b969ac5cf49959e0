"""The adapter interface: request, result, model info, options, and the adapter ABC.

An adapter has ONE abstract method, `run(request) -> ProviderResult`; everything else is a
capability attribute or an overridable default (model discovery). Options are pydantic
models with ``extra="forbid"`` so a typo in an option is an error, not a silent default.

Spec: DESIGN.md "Blueprints, runs, providers".
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "ModelInfo",
    "ProviderAdapter",
    "ProviderOptions",
    "ProviderRequest",
    "ProviderResult",
]


class ProviderRequest(BaseModel):
    """One role-step call.

    Attributes:
        provider: registered adapter name.
        model: exact model id; None only when the assignment omits it.
        effort: effort level; None only when the assignment omits it.
        system: system text (instructions).
        prompt: the rendered prompt.
        output_schema: JSON Schema the final answer must satisfy, or None for free text.
        output_ref: the registered output schema name of the step (``output: {$ref:
            NAME}``), or None for an inline schema; the builtin provider answers by it.
        check_output: the adapter validates the answer against `output_schema`
            (`OutputInvalid`). The engine sets False: it checks every answer itself, once,
            when it accepts the result (with the output schema's registered check); the
            schema is still sent to providers that enforce one.
        timeout_s: wall-clock limit in seconds for the whole call.
        cwd: absolute working directory for CLI providers, or None for a scratch dir.
        payload: structured data for the builtin provider (LLM adapters ignore it).
        options: adapter-specific options, validated by the adapter's `options_model`.
        launch_env: variables added to a CLI provider's child environment (an
            agent-assigned step's ``WARDIAN_AGENT_ID``/``WARDIAN_LAUNCH_ID``).
        launch_prefix: the argv a CLI provider's child is started through, before the
            CLI's own argv (the step's capability holder, which then execs the CLI;
            `wardian.runtime.step_launch`). Providers without a child process ignore both.
        held_record: a file the CLI's supervisor writes (Linux) when the engine dies
            mid-call, naming the transcript the CLI held open (`CliAdapter.transcript_dir`;
            `wardian.providers.supervisor`), or None. The engine gives an automation
            step's (`wardian.runtime.automation_sessions.held_record_path`).
    """

    model_config = ConfigDict(extra="forbid")

    provider: str
    model: str | None = None
    effort: str | None = None
    system: str = ""
    prompt: str = ""
    output_schema: dict[str, Any] | None = None
    output_ref: str | None = None
    check_output: bool = True
    timeout_s: float = Field(default=600.0, gt=0)
    cwd: str | None = None
    payload: dict[str, Any] = Field(default_factory=dict)
    options: dict[str, Any] = Field(default_factory=dict)
    launch_env: dict[str, str] = Field(default_factory=dict)
    launch_prefix: list[str] = Field(default_factory=list)
    held_record: str | None = None


class ProviderResult(BaseModel):
    """What a provider answered.

    Attributes:
        text: the final answer text.
        output: the parsed JSON, validated against the output schema unless the request
            said ``check_output=False`` (None when no schema was requested).
        model: the model that answered, as the provider reported it.
        effort: the effort the provider reported, when it reports one.
        usage: token/cost usage as reported, when any.
        transcript: the raw transcript path or an excerpt (size-capped).
        session_id: the provider's own session/thread id of this call, when it reports one.
        transcript_path: the transcript file the provider keeps of this call, when known
            (recovery must never take it for an agent's session;
            `wardian.runtime.automation_sessions`).
    """

    model_config = ConfigDict(extra="forbid")

    text: str
    output: dict[str, Any] | None = None
    model: str | None = None
    effort: str | None = None
    usage: dict[str, Any] | None = None
    transcript: str | None = None
    session_id: str | None = None
    transcript_path: str | None = None


class ModelInfo(BaseModel):
    """One model in a provider's catalog.

    Attributes:
        id: the exact id to assign.
        efforts: supported effort levels (empty = the model takes no effort).
        default_effort: the provider's default level, when known.
        source: ``discovered`` (from the provider's own listing), ``builtin`` (static),
            or ``fixed-alias`` (the tool has no listing; a fixed list shipped with Wardian).
        display_name: a human name, when the provider gives one.
        is_default: the provider's default model.
    """

    model_config = ConfigDict(extra="forbid")

    id: str
    efforts: list[str] = Field(default_factory=list)
    default_effort: str | None = None
    source: Literal["discovered", "fixed-alias", "builtin"] = "discovered"
    display_name: str | None = None
    is_default: bool = False


class ProviderOptions(BaseModel):
    """Base of every adapter's options (``extra="forbid"``: unknown options are errors)."""

    model_config = ConfigDict(extra="forbid")


class ProviderAdapter(ABC):
    """A provider adapter. Subclasses set the capability attributes and implement `run`.

    Capability attributes:
        name: the registry name.
        supports_effort: the provider takes an effort level.
        supports_output_schema: the provider enforces a JSON Schema itself (the engine
            still checks the answer when it accepts it).
        effort_levels: every effort value the provider knows (a model may support fewer).
        efforts_not_passed: effort values the provider accepts but does not send as the
            model request's effort (value → what it does instead). A role step refuses
            them before anything runs (`check_step_effort`): the answer could not be
            verified as coming from the assigned effort.
        options_model: the pydantic options class.
        runs_process: the call runs a child process (a CLI) that can act as an agent
            (save memory, keep a transcript); False for in-process and HTTP providers.
    """

    name: ClassVar[str]
    runs_process: ClassVar[bool] = False
    supports_effort: ClassVar[bool] = False
    supports_output_schema: ClassVar[bool] = False
    effort_levels: ClassVar[tuple[str, ...]] = ()
    efforts_not_passed: ClassVar[dict[str, str]] = {}
    options_model: ClassVar[type[ProviderOptions]] = ProviderOptions

    def check_step_effort(self, model: str | None, effort: str | None,
                          supported: list[str] | None = None, *,
                          path: str | None = None) -> None:
        """Refuse `effort` for a role step when the provider does not send it as the
        request's effort (`efforts_not_passed`).

        Args:
            supported: the model's efforts, for the hint.

        Raises:
            UnsupportedEffort (exit 2): naming what the provider does instead.
        """
        if effort is not None and effort in self.efforts_not_passed:
            from wardian.providers.errors import UnsupportedEffort

            raise UnsupportedEffort(self.name, model, effort, list(supported or []),
                                    path=path, not_passed=self.efforts_not_passed[effort])

    @abstractmethod
    def run(
        self, request: ProviderRequest, *, cancel: threading.Event | None = None
    ) -> ProviderResult:
        """Run `request` with exactly its model and effort; verify who answered.

        Args:
            request: the call.
            cancel: set it from another thread to stop the call; a CLI child is killed
                with its whole tree and ProviderCancelled raised.

        Raises:
            ProviderError: a subclass naming the cause (see `wardian.providers.errors`).
        """

    def answerable_outputs(self) -> list[str] | None:
        """The registered output schema names this provider can answer, or None when it
        can be asked for any JSON Schema (a model that follows the prompt). The
        assignment checks refuse a role step whose output is not among them.
        Read-only."""
        return None

    def answers_output(self, output_ref: str | None) -> bool:
        """True when this provider can answer a step whose output is the registered schema
        `output_ref` (None: an inline schema)."""
        answerable = self.answerable_outputs()
        return answerable is None or (output_ref is not None and output_ref in answerable)

    def discover_models(self, timeout_s: float = 30.0) -> list[ModelInfo]:
        """Ask the provider itself which models (and efforts) it offers.

        Args:
            timeout_s: wall-clock limit in seconds; discovery fails closed after it.

        Raises:
            DiscoveryFailed: the listing could not be obtained.
        """
        from wardian.providers.errors import DiscoveryFailed

        raise DiscoveryFailed("this provider has no model listing", provider=self.name)

    def parse_options(self, request: ProviderRequest) -> ProviderOptions:
        """Validate `request.options` against `options_model`.

        Raises:
            ValidationError (exit 2): an unknown option or a bad value, with its path.
        """
        from pydantic import ValidationError as PydanticError

        from wardian.errors import ValidationError

        try:
            return self.options_model.model_validate(request.options)
        except PydanticError as exc:
            first = exc.errors()[0]
            path = "options." + ".".join(str(p) for p in first["loc"])
            raise ValidationError(
                f"{self.name}: {first['msg']}", path=path,
                hint=f"valid options: {', '.join(self.options_model.model_fields) or 'none'}",
            ) from exc
