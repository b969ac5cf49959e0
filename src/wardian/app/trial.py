"""``wardian automation trial``: measure a curator on an agent's own archived sessions.

The trial copies ``state.db`` and ``memory.db`` with SQLite's online backup API (a live WAL
database is never copied file by file) into a temporary scratch data directory, plus the
user's blueprint library, and points ``WARDIAN_HOME`` there while it runs. For each of the
agent's last N archived sessions, oldest first, it rewinds the scratch consolidation cursor
to just before the session and runs the real blueprint through the same path a manual run
takes (`prepare_manual_run` + `execute_run`, the session's seq range as a session-close run
reads it), so the scratch memory evolves as it would have. What each session's run saved,
updated and removed is read back from the scratch store. The real data directory is only
read (read-only SQLite connections); the scratch directory is deleted afterwards.

Spec: docs/operator-guide.md (measure a curator before you switch to it).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import TYPE_CHECKING, Any

from wardian._backend import SQLITE
from wardian.errors import NotFoundError, StoreError, UsageError

if TYPE_CHECKING:
    from wardian._db import StateDB
    from wardian.memory.db import MemoryDB

__all__ = [
    "COMPARE_SCHEMA",
    "DEFAULT_LAST",
    "SCHEMA",
    "compare_trials",
    "run_trial",
    "run_trials",
    "usage_tokens",
]

DEFAULT_LAST = 5
"""Sessions a trial replays when ``--last`` is not given."""

SCHEMA = "wardian.trial/v1"
COMPARE_SCHEMA = "wardian.trial-compare/v1"

_ACTOR = "trial"


@contextmanager
def _scratch_home() -> Iterator[Path]:
    """A temporary data directory made current through ``WARDIAN_HOME``, then removed."""
    from wardian.config import ENV_HOME

    folder = Path(tempfile.mkdtemp(prefix="wardian-trial-"))
    previous = os.environ.get(ENV_HOME)
    os.environ[ENV_HOME] = str(folder)
    try:
        yield folder
    finally:
        _close_databases(folder)
        if previous is None:
            os.environ.pop(ENV_HOME, None)
        else:
            os.environ[ENV_HOME] = previous
        shutil.rmtree(folder, ignore_errors=True)


def _close_databases(folder: Path) -> None:
    """Close this process's shared connections to the scratch databases (they would stay
    open in the connection cache, on files about to be deleted)."""
    from wardian._db import StateDB
    from wardian.memory.db import MemoryDB

    for name, kind in (("state.db", StateDB), ("memory.db", MemoryDB)):
        if (folder / name).is_file():
            with suppress(StoreError):  # the folder is removed next either way
                kind.open(folder / name).close()


def _backup(source: Path, target: Path) -> None:
    """Copy SQLite database `source` to `target` with the online backup API, opening the
    source read-only (``mode=ro``) so nothing is written to it.

    Raises:
        StoreError: the source cannot be opened or read.
    """
    from wardian._db import backup

    try:
        backup(source, target)
    except SQLITE.Error as exc:
        raise StoreError(f"cannot copy {source} for the trial: {exc}",
                         hint="check the file's permissions") from exc


def _copy_real(real: Path, scratch: Path) -> None:
    """Copy the real data directory's databases and blueprint library into `scratch`."""
    for name in ("state.db", "memory.db"):
        if (real / name).is_file():
            _backup(real / name, scratch / name)
    library = real / "library"
    if library.is_dir():
        shutil.copytree(library, scratch / "library")


def _sessions(state: StateDB, agent_id: str, last: int) -> list[Any]:
    """The agent's last `last` archived conversations in `state` that hold messages,
    oldest first."""
    from wardian.runtime.archives import ArchiveStore

    archives = ArchiveStore(state)
    found = [c for c in archives.list(agent_id=agent_id, limit=10_000)
             if c.first_seq is not None and c.message_count > 0]
    # the archive sequence orders sessions exactly (import times can tie within a second)
    found.sort(key=lambda c: c.first_seq or 0)
    return found[-last:]


def _validate(state: StateDB, blueprint: str, agent: str, assignments: str,
              origin: str = "--assignments") -> tuple[Any, Any, dict[str, Any]]:
    """The checks `automation run start` makes, before any session runs; each message about
    the assignments starts with `origin` (the option they came from)."""
    from wardian.blueprints.library import find_blueprint
    from wardian.engine.actions import known_actions
    from wardian.engine.assignments import check_assignments, parse_assignments_json
    from wardian.runtime.agents import AgentRegistry

    loaded = find_blueprint(blueprint, known_actions=known_actions())
    if "manual" not in loaded.blueprint.triggers:
        raise UsageError(f"blueprint {loaded.id!r} does not accept manual runs "
                         f"(triggers: {', '.join(loaded.blueprint.triggers)})",
                         hint="a trial runs the blueprint like `automation run start`; "
                              "add 'manual' to its triggers")
    registry = AgentRegistry(state)
    principal = registry.get(agent)
    snapshot = check_assignments(loaded, parse_assignments_json(assignments, origin=origin),
                                 origin=origin)
    return loaded, principal, snapshot


def _active(memory: MemoryDB, agent_id: str) -> dict[str, Any]:
    """The agent's records by id (every status) in `memory` (the scratch store)."""
    from wardian.memory.store import MemoryStore

    store = MemoryStore(memory)
    return {r.id: r for r in store.list(agent_id, include_removed=True)}


def _rewind(memory: MemoryDB, agent_id: str, seq: int) -> None:
    from wardian.memory.consolidation import rewind_cursor
    from wardian.memory.store import MemoryStore

    store = MemoryStore(memory)
    rewind_cursor(store, agent_id, seq, actor=_ACTOR)


def _step_outputs(run: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for attempt in run.attempts:
        if attempt.status in ("succeeded", "skipped"):
            out[attempt.step_id] = attempt.output
    return out


def _changes(outputs: dict[str, Any], before: dict[str, Any], after: dict[str, Any],
             ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(changes, dropped) of one session's run, each record read back from the store."""
    curated = outputs.get("curate")
    operations = curated.get("operations", []) if isinstance(curated, dict) else []
    committed = outputs.get("commit")
    if not isinstance(committed, dict):
        return [], []
    changes: list[dict[str, Any]] = []
    for applied in committed.get("applied", []):
        index = int(applied["index"])
        op = operations[index] if index < len(operations) else {}
        record = after.get(applied["memory_id"])
        old = before.get(applied["memory_id"])
        changes.append({
            "op": applied["op"],
            "memory_id": applied["memory_id"],
            "text": record.text if record is not None else applied.get("text"),
            "previous_text": old.text if old is not None and applied["op"] == "update"
            else None,
            "kind": record.kind if record is not None else op.get("kind"),
            "scope": record.scope.to_json() if record is not None else None,
            "evidence": op.get("evidence"),
        })
    dropped = []
    for item in committed.get("dropped", []):
        index = int(item["index"])
        op = operations[index] if index < len(operations) else {}
        dropped.append({"op": item["op"], "code": item["code"], "reason": item["reason"],
                        "text": op.get("text")})
    return changes, dropped


def usage_tokens(usage: Any) -> dict[str, int] | None:
    """Input and output tokens in one provider-reported usage document, None when it has none.

    Reads the shapes the adapters pass through: ``input_tokens``/``output_tokens`` at the top
    (Claude Code, Codex, Gemini CLI; Claude's cache reads and writes count as input, Codex's
    ``cached_input_tokens`` are already part of its input) and opencode's ``tokens``
    ``{input, output}``. Never raises: anything else is "not reported".
    """
    if not isinstance(usage, dict):
        return None
    nested = usage.get("tokens")
    source: dict[str, Any] = nested if isinstance(nested, dict) else usage
    names_in = ("input_tokens", "input", "cache_creation_input_tokens", "cache_read_input_tokens")
    names_out = ("output_tokens", "output")
    counts = {"input": 0, "output": 0}
    found = False
    for key, names in (("input", names_in), ("output", names_out)):
        for name in names:
            value = source.get(name)
            if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
                counts[key] += value
                found = True
    return counts if found else None


def _run_tokens(state: StateDB, run_id: str) -> dict[str, int] | None:
    """Tokens the providers reported for every model step of the run in `state` (None:
    none reported)."""
    from wardian.engine.runs import RunStore

    store = RunStore(state, recover=False)
    events = store.events(run_id)
    total: dict[str, int] | None = None
    for event in events:
        data = event.get("data")
        tokens = usage_tokens(data.get("usage")) if isinstance(data, dict) else None
        if tokens is not None:
            total = total or {"input": 0, "output": 0}
            total["input"] += tokens["input"]
            total["output"] += tokens["output"]
    return total


def _one_session(state: StateDB, memory: MemoryDB, blueprint: str, principal: Any,
                 assignments: str, conv: Any) -> dict[str, Any]:
    from wardian.engine.executor import execute_run
    from wardian.engine.manual import prepare_manual_run

    _rewind(memory, principal.id, int(conv.first_seq) - 1)
    before = _active(memory, principal.id)
    workspace = conv.cwd if conv.cwd and os.path.isabs(conv.cwd) else None
    prepared = prepare_manual_run(
        blueprint, agent=principal.id, assignments=assignments, inputs={},
        archive_seq_range=(int(conv.first_seq), int(conv.last_seq)), workspace=workspace,
    )
    final = execute_run(prepared.run.id, secret_inputs=prepared.secrets,
                        blueprint=prepared.blueprint)
    after = _active(memory, principal.id)
    changes, dropped = _changes(_step_outputs(final), before, after)
    return {
        "conversation_id": conv.id,
        "session_id": conv.session_id,
        "provider": conv.provider,
        "imported_at": conv.imported_at,
        "workspace": workspace or principal.workspace,
        "messages": conv.message_count,
        "seq_range": [conv.first_seq, conv.last_seq],
        "run_status": final.status,
        "error": final.error,
        "changes": changes,
        "dropped": dropped,
        "tokens": _run_tokens(state, final.id),
        "active_before": sum(1 for r in before.values() if r.status == "active"),
        "active_after": sum(1 for r in after.values() if r.status == "active"),
    }


def _totals(sessions: list[dict[str, Any]]) -> dict[str, int]:
    totals = {"sessions": len(sessions), "save": 0, "update": 0, "remove": 0, "dropped": 0,
              "failed": 0}
    reported = [s["tokens"] for s in sessions if s.get("tokens")]
    if reported:
        totals["input_tokens"] = sum(t["input"] for t in reported)
        totals["output_tokens"] = sum(t["output"] for t in reported)
        totals["sessions_with_tokens"] = len(reported)
    for session in sessions:
        for change in session["changes"]:
            totals[change["op"]] += 1
        totals["dropped"] += len(session["dropped"])
        totals["failed"] += session["run_status"] != "succeeded"
    return totals


def run_trial(*, blueprint: str, agent: str, assignments: str,
              last: int = DEFAULT_LAST) -> dict[str, Any]:
    """Replay the agent's last `last` archived sessions through `blueprint` in scratch.

    Args:
        blueprint: blueprint id (user library first) or path, e.g. ``memory-consolidation``.
        agent: the agent's name or id.
        assignments: ``--assignments`` JSON text (validated as ``automation run start``).
        last: how many of the newest archived sessions (>= 1).

    Returns:
        The trial document (`SCHEMA`): ``{schema, blueprint, agent {id, name}, assignments,
        last, sessions: [{conversation_id, session_id, provider, imported_at, workspace,
        messages, seq_range, run_status, error, changes: [{op, memory_id, text,
        previous_text, kind, scope, evidence}], dropped: [{op, code, reason, text}],
        tokens ({input, output} the host reported for the run, None when it reported
        none: the builtin curator), active_before, active_after}], totals {sessions, save,
        update, remove, dropped, failed, and when any session reported tokens:
        input_tokens, output_tokens, sessions_with_tokens}}``.

    Raises:
        UsageError (exit 2): `last` < 1, bad assignments, a blueprint without ``manual``.
        NotFoundError (exit 1): no such agent, or no archived session (how to get some).
        BlueprintError / StoreError: as `automation run start`.
    """
    return run_trials(blueprint=blueprint, agent=agent, assignments=[assignments],
                      last=last)[0]


def run_trials(*, blueprint: str, agent: str, assignments: Sequence[str],
               last: int = DEFAULT_LAST,
               origins: Sequence[str] = ("--assignments", "--compare")
               ) -> list[dict[str, Any]]:
    """`run_trial` once per assignments document, each in its own fresh scratch copy, over
    the same sessions. Every document is validated before any session runs; a message
    about document N starts with ``origins[N]`` (the option it came from).

    Raises:
        as `run_trial`.
    """
    from wardian.config import data_dir, open_state_db
    from wardian.memory.db import open_memory_db

    if last < 1:
        raise UsageError(f"--last {last}: must be at least 1")
    real = data_dir(create=False)
    if not (real / "state.db").is_file():
        raise NotFoundError(f"no agent {agent!r}: the data directory {real} has no state.db",
                            hint="add one with `wardian agent add NAME`")
    docs: list[dict[str, Any]] = []
    sessions: list[Any] = []
    for number, text in enumerate(assignments):
        with _scratch_home() as scratch:
            _copy_real(real, scratch)
            state = open_state_db()  # the scratch copy's, for this trial's every step
            if number == 0:
                checked = [_validate(state, blueprint, agent, each,
                                     origins[i] if i < len(origins) else "--assignments")
                           for i, each in enumerate(assignments)]
                sessions = _sessions(state, checked[0][1].id, last)
                if not sessions:
                    raise NotFoundError(
                        f"agent {checked[0][1].name!r} has no archived sessions to try a "
                        "curator on",
                        hint="turn on conversation logging (`wardian settings set "
                             "conversation_logging.enabled true`); each session close then "
                             "archives its transcript (`wardian conversation list` shows "
                             "them)")
            loaded, principal, snapshot = checked[number]
            memory = open_memory_db()
            results = [_one_session(state, memory, blueprint, principal, text, conv)
                       for conv in sessions]
        docs.append({
            "schema": SCHEMA,
            "blueprint": loaded.id,
            "agent": {"id": principal.id, "name": principal.name},
            "assignments": snapshot,
            "last": last,
            "sessions": results,
            "totals": _totals(results),
        })
    return docs


def _key(change: dict[str, Any]) -> tuple[str, str]:
    from wardian.memory.consolidation import normalise_whitespace

    return change["op"], normalise_whitespace(str(change.get("text") or "")).casefold()


def compare_trials(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    """The difference of two trials of the same sessions, per session.

    Changes match on (op, whitespace/case-normalised text): memory ids differ between the
    two scratch copies for records the trial itself created.

    Returns:
        ``{schema (COMPARE_SCHEMA), blueprint, agent, a {assignments, totals}, b {…},
        sessions: [{conversation_id, session_id, imported_at, messages, workspace,
        seq_range, run_status_a, run_status_b, error_a, error_b, only_a, only_b, both}],
        totals {only_a, only_b, both}}``; ``both`` items are A's change plus B's
        ``text_b``/``evidence_b`` (the same text up to case and whitespace).
    """
    by_id = {s["conversation_id"]: s for s in b["sessions"]}
    sessions = []
    totals = {"only_a": 0, "only_b": 0, "both": 0}
    for sa in a["sessions"]:
        sb = by_id.get(sa["conversation_id"], {"changes": [], "run_status": None,
                                                "error": "not run"})
        b_keys = {_key(c): c for c in sb["changes"]}
        a_keys = {_key(c): c for c in sa["changes"]}
        both = []
        for key, change in a_keys.items():
            if key in b_keys:
                other = b_keys[key]
                both.append({**change, "text_b": other.get("text"),
                             "evidence_b": other.get("evidence")})
        entry = {
            "conversation_id": sa["conversation_id"], "session_id": sa["session_id"],
            "imported_at": sa["imported_at"], "messages": sa["messages"],
            "workspace": sa["workspace"], "seq_range": sa["seq_range"],
            "run_status_a": sa["run_status"], "run_status_b": sb["run_status"],
            "error_a": sa.get("error"), "error_b": sb.get("error"),
            "only_a": [c for k, c in a_keys.items() if k not in b_keys],
            "only_b": [c for k, c in b_keys.items() if k not in a_keys],
            "both": both,
        }
        for name in totals:
            totals[name] += len(entry[name])
        sessions.append(entry)
    return {
        "schema": COMPARE_SCHEMA,
        "blueprint": a["blueprint"],
        "agent": a["agent"],
        "a": {"assignments": a["assignments"], "totals": a["totals"]},
        "b": {"assignments": b["assignments"], "totals": b["totals"]},
        "sessions": sessions,
        "totals": totals,
    }
