"""One exception root for Wardian, with the tree drawn here.

Every error a user can meet is a `WardianError`. Subclasses carry structured
fields (path, line, column, field path, record id, …) and build their message
from them, so the CLI prints one line that says what failed, where, and how to
fix it. Foreign errors (pydantic, yaml, jinja2, sqlite3, subprocess, httpx) are
translated into these at the single place they enter, chained with ``from``.

Tree::

    WardianError                      exit 1 unless a subclass says otherwise
    ├── UsageError                    exit 2: bad flag/argument/setting value
    │   └── ValidationError           exit 2: a document failed validation
    ├── NotFoundError                 exit 1: agent/record/run/invoker not found
    │   └── AmbiguousIdError          exit 2: an id prefix matches several
    ├── AuthorityError                exit 3: fail closed (no/forged/expired capability,
    │   ├── CapabilityMissing                  memory disabled, operator-only command)
    │   ├── CapabilityInvalid
    │   │   └── CapabilityNotHeld          used outside its launch's process tree
    │   ├── CapabilityExpired
    │   ├── MemoryDisabled
    │   ├── OperatorOnly
    │   ├── IdentityUnavailable        process identity unreadable in the owner's namespace
    │   └── TerminalRequired           no terminal to confirm a change on
    │                                  (defined in wardian.memory.maintenance.errors)
    ├── ConflictError                 exit 4: revision changed, idempotency key reused
    ├── StoreError                    exit 1: database problems
    ├── BlueprintError                exit 2: (defined in wardian.blueprints.errors)
    ├── ProviderError                 exit 1: (defined in wardian.providers.errors)
    └── RunError                      exit 1: (defined in wardian.engine)

Exit codes (DESIGN.md "Conventions"): 0 ok, 1 operation failed, 2 usage or
validation error, 3 not authorised, 4 conflict.
"""

from __future__ import annotations

__all__ = [
    "EXIT_AUTH",
    "EXIT_CONFLICT",
    "EXIT_FAILED",
    "EXIT_OK",
    "EXIT_USAGE",
    "AmbiguousIdError",
    "AuthorityError",
    "CapabilityExpired",
    "CapabilityInvalid",
    "CapabilityMissing",
    "CapabilityNotHeld",
    "ConflictError",
    "IdentityUnavailable",
    "MemoryDisabled",
    "NotFoundError",
    "OperatorOnly",
    "StoreError",
    "UsageError",
    "ValidationError",
    "WardianError",
    "require_ref",
]

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_AUTH = 3
EXIT_CONFLICT = 4


class WardianError(Exception):
    """Root of every Wardian error; `exit_code` is what the CLI exits with."""

    exit_code: int = EXIT_FAILED

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        self.message = message
        self.hint = hint
        super().__init__(self.render())

    def render(self) -> str:
        """The one-line user-facing message: what, where, and how to fix it."""
        if self.hint:
            return f"{self.message} ({self.hint})"
        return self.message


class UsageError(WardianError):
    """A bad argument, flag or setting value (exit 2)."""

    exit_code = EXIT_USAGE


class ValidationError(UsageError):
    """A document (plan, batch, blueprint, assignment) failed validation (exit 2).

    Args:
        message: what was wrong.
        path: the field path, e.g. ``operations[3].scope.path``, when known.
        source: the file the document came from, when known.
    """

    def __init__(
        self,
        message: str,
        *,
        path: str | None = None,
        source: str | None = None,
        hint: str | None = None,
    ) -> None:
        self.path = path
        self.source = source
        where = ": ".join(p for p in (source, path) if p)
        super().__init__(f"{where}: {message}" if where else message, hint=hint)


class NotFoundError(WardianError):
    """Something named by id or name does not exist (or is not visible to the caller)."""


class AmbiguousIdError(UsageError):
    """An id prefix matches more than one object; `candidates` lists 8-character ids."""

    def __init__(self, what: str, prefix: str, candidates: list[str]) -> None:
        self.prefix = prefix
        self.candidates = candidates
        super().__init__(
            f"{what} id prefix {prefix!r} is ambiguous: matches {', '.join(candidates)}",
            hint="use a longer prefix",
        )


class AuthorityError(WardianError):
    """The caller may not do this; Wardian fails closed (exit 3)."""

    exit_code = EXIT_AUTH


class CapabilityMissing(AuthorityError):
    """A memory command ran without a launch-scoped capability."""


class CapabilityInvalid(AuthorityError):
    """The capability in the environment is forged, malformed or for another agent."""


class CapabilityNotHeld(CapabilityInvalid):
    """A valid capability used from outside the process tree of the launch it belongs to
    (read from another process's environment, or replayed from a copied one)."""


class CapabilityExpired(AuthorityError):
    """The capability's runtime has ended (or was replaced or reclaimed)."""


class MemoryDisabled(AuthorityError):
    """Agent memory is disabled (setting `agent_memory.enabled`)."""


class OperatorOnly(AuthorityError):
    """An operator command was called from inside a managed process."""


class IdentityUnavailable(AuthorityError):
    """This process's identity (pid, start time, namespaces) cannot be read as the data
    directory's owner reads it: it runs in another pid or user namespace, or in a pid
    namespace whose ``/proc`` belongs to another one (``unshare --pid`` without
    ``--mount-proc``). Nothing bound to a process identity (a launch, a capability, the
    operator guard) is decided from such a reading."""


class ConflictError(WardianError):
    """A revision changed underneath, or an idempotency key was reused (exit 4)."""

    exit_code = EXIT_CONFLICT


class StoreError(WardianError):
    """A database could not be opened, migrated or written."""


def require_ref(value: str, what: str, *, hint: str) -> None:
    """Refuse an empty (or blank) id, prefix or name before it is looked up: ``""`` is a
    slip of the shell (an unset variable), not a record that does not exist, and as a
    prefix it would match everything.

    Args:
        value: the argument as given. what: what it names, e.g. ``"record id"``.
        hint: how to find a valid one (the list command).

    Raises:
        UsageError (exit 2): `value` is empty or only whitespace.
    """
    if not value.strip():
        raise UsageError(f"the {what} is empty", hint=hint)
