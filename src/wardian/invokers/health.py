"""Is an invoker able to fire? The one answer `list`/`show`, firing and ``doctor`` share.

An invoker is **broken** when its blueprint is missing or invalid, no longer accepts the
invoker's trigger, declares a required input (one without a default) the invoker does not
set or rejects a stored input, or when its agent is gone. (An assignment that no longer
resolves — an assigned agent removed, a model gone from the catalog — is not a broken
invoker: its run is recorded ``skipped: blocked assignment`` as before.)

A broken invoker is shown ``broken`` with the reason; its slots and events are recorded
``blocked`` with that reason and no run is created; nothing is deleted, and the problem
names the command that repairs it.

The model catalog is not consulted here (a stale catalog is not a broken invoker; the
run reports an unknown model itself). Spec: CLI.md ``automation`` (editable and broken invokers).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from wardian.errors import NotFoundError, WardianError
from wardian.invokers.store import Invoker

if TYPE_CHECKING:  # pydantic models: imported when a blueprint is validated
    from wardian._db import StateDB
    from wardian.blueprints.validate import LoadedBlueprint

__all__ = ["InvokerProblem", "invoker_problem", "trigger_of"]


@dataclass(frozen=True)
class InvokerProblem:
    """Why an invoker is broken (`reason`, one line) and the command that fixes it (`fix`)."""

    reason: str
    fix: str


def trigger_of(invoker: Invoker) -> str:
    """The blueprint trigger an invoker of this kind fires (``session-close``/``schedule``)."""
    return "schedule" if invoker.kind == "schedule" else "session-close"


def invoker_problem(invoker: Invoker, *, state: StateDB,
                    blueprint: LoadedBlueprint | None = None) -> InvokerProblem | None:
    """Why `invoker` cannot fire now, or None when it can. Read-only.

    Args:
        blueprint: the invoker's blueprint, already loaded and validated by the caller;
            None = load it here (a load that fails is the problem reported).
        state: the open state database holding the invoker's agent.
    """
    from wardian.blueprints.errors import BlueprintError
    from wardian.invokers.session_close import MissingInputs, validate_definition
    from wardian.runtime.agents import AgentRegistry

    group = f"wardian automation {invoker.kind}"
    ref = invoker.id[:8]
    registry = AgentRegistry(state)
    if registry.find(invoker.agent_id) is None:
        return InvokerProblem(f"its agent {invoker.agent_id[:8]} no longer exists",
                              f"`{group} remove {ref}` and add one for an existing agent")
    try:
        validate_definition(
            invoker.blueprint_id, invoker.assignments, invoker.inputs,
            trigger=trigger_of(invoker), inputs_from_text=False, check_catalog=False,
            origin=f"invoker {ref}", command=f"{group} set {ref}", check_roles=False,
            blueprint=blueprint)
    except MissingInputs as exc:
        inputs = " ".join(f"--input {n}=VALUE" for n in exc.names)
        return InvokerProblem(exc.message, f"`{group} set {ref} {inputs}`")
    except NotFoundError as exc:
        return InvokerProblem(
            exc.message, f"restore blueprint {invoker.blueprint_id!r} in your library, or "
            f"`{group} remove {ref}`")
    except BlueprintError as exc:
        return InvokerProblem(
            exc.message, f"fix the blueprint (`wardian blueprint validate "
            f"{invoker.blueprint_id}`), or `{group} remove {ref}`")
    except WardianError as exc:
        if "trigger" in exc.message:
            return InvokerProblem(exc.message, f"add {trigger_of(invoker)} to the blueprint's "
                                  f"`triggers:` list, or `{group} remove {ref}`")
        return InvokerProblem(exc.message, f"`{group} set {ref} --input NAME=VALUE`")
    return None
