"""``wardian doctor``: checks that say what is wrong with an installation and how to fix it.

A check is a function ``(DoctorContext) -> Iterable[Finding]`` registered under a name and
a heading with ``registry.add_doctor_check`` (`wardian.plugins`; Wardian's own through
`wardian.builtin_plugin` and `builtin_check`). `run_doctor` runs every registered check (or
the named ones) and never lets one check's crash hide the others (a crashing check is
itself a problem finding); the ``plugins`` check reports every plugin that was refused or
failed to load.

Every problem carries the command that fixes it. The doctor writes nothing: databases are
opened read-only (`wardian._db.open_readonly`), and while the checks run every store over
``state.db`` that a check (or code it calls) opens is a view over one read-only object
(`wardian._db.Database.read_only`), so nothing migrates it and a write fails instead of
landing; the file keeps its bytes and mtime, and a file the doctor cannot write is checked
all the same. A missing data directory is reported, not created, and runs left ``running``
by a dead process are reported, not marked. What a check
reads from another component's tables it asks that component for (``read_settings``,
``read_agents``, ``read_running_runs``, `wardian.memory.readonly`): no SQL here names their
tables. Spec: CLI.md ``doctor``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from contextlib import ExitStack, closing, suppress
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from wardian._backend import SQLITE, Connection
from wardian.errors import WardianError

if TYPE_CHECKING:
    from wardian._db import StateDB
    from wardian.memory.db import MemoryDB

__all__ = [
    "DoctorContext",
    "DoctorReport",
    "Finding",
    "builtin_check",
    "builtin_checks",
    "run_doctor",
]

Status = Literal["ok", "warning", "problem"]
T = TypeVar("T")


@dataclass(frozen=True)
class Finding:
    """One result of a check.

    Attributes:
        check: the registered check name. status: ``ok``, ``warning`` (worth knowing, not
            wrong) or ``problem`` (doctor exits 1). message: what was found, naming the
            file, id or key. fix: the command (or action) that fixes it; set on every
            problem. subject: the id/path/key the finding is about, for ``--json`` readers.
    """

    check: str
    status: Status
    message: str
    fix: str | None = None
    subject: str | None = None

    @classmethod
    def ok(cls, check: str, message: str, *, subject: str | None = None) -> Finding:
        """A passed check."""
        return cls(check, "ok", message, None, subject)

    @classmethod
    def warning(cls, check: str, message: str, *, fix: str | None = None,
                subject: str | None = None) -> Finding:
        """Worth knowing; does not fail the doctor."""
        return cls(check, "warning", message, fix, subject)

    @classmethod
    def problem(cls, check: str, message: str, *, fix: str,
                subject: str | None = None) -> Finding:
        """Something is wrong; `fix` is the command that fixes it."""
        return cls(check, "problem", message, fix, subject)

    def to_json(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return asdict(self)


@dataclass(frozen=True)
class DoctorContext:
    """What every check gets: the data directory and whether it can be read.

    Attributes:
        data_dir: the resolved data directory (``$WARDIAN_HOME`` or the platform default).
        exists: it exists and is a directory (checks that read databases skip when not).
        url: the PostgreSQL database the installation uses instead of the files
            ``state.db`` and ``memory.db`` (its schemas ``state`` and ``memory``), or None.
        state: ``state.db`` opened read-only (`wardian._db.Database.read_only`) for the
            stores a check reads through, or None when it cannot be opened (absent, not a
            database, an unreachable server: the data-dir and database checks say so).
        memory: ``memory.db`` likewise, on PostgreSQL only (None for the SQLite file:
            checks read it through `db`).
    """

    data_dir: Path
    exists: bool
    url: str | None = None
    state: StateDB | None = None
    memory: MemoryDB | None = None

    def opened_state(self) -> StateDB:
        """`state`, for a check that reads a store (it has checked with `read` that the
        tables exist, so the file opened).

        Raises:
            StoreError: it could not be opened read-only after all.
        """
        if self.state is None:
            from wardian.errors import StoreError

            raise StoreError(f"{self.data_dir / 'state.db'} cannot be opened read-only",
                             hint="the data-dir and database checks say why")
        return self.state

    def has_file(self, name: str) -> bool:
        """True when ``<data dir>/<name>`` exists as a file."""
        return self.exists and (self.data_dir / name).is_file()

    def db(self, name: str) -> Connection | None:
        """A read-only connection to the database `name` (``state.db`` or ``memory.db``):
        the file in the data directory, or None when it is absent; on PostgreSQL a
        connection of its own to the schema of that name whose transactions are read-only
        (a schema not created yet has no tables: the ``read_*`` functions return None).

        Raises:
            SQLITE.Error: the file is not a readable database (the caller reports it).
            StoreError: the PostgreSQL server cannot be reached (the check's problem).
        """
        if self.url is not None:
            from wardian._pg import PgConnection

            return PgConnection(self.url, name.removesuffix(".db"), read_only=True)
        from wardian._db import open_readonly

        return open_readonly(self.data_dir / name) if self.has_file(name) else None

    def read(self, name: str, reader: Callable[[Connection], T | None]) -> T | None:
        """`reader` over a read-only connection to ``<data dir>/<name>``, closed after it.

        Returns:
            What `reader` returned; None when the file is absent or `reader` returned None
            (the components' ``read_*`` functions do for a table not created yet).

        Raises:
            Backend.Error: the database cannot be read (the caller reports it).
        """
        conn = self.db(name)
        if conn is None:
            return None
        with closing(conn):
            return reader(conn)

    def has_table(self, conn: Connection, table: str) -> bool:
        """True when `table` exists in `conn`'s database."""
        from wardian._db import has_table

        return has_table(conn, table)


CheckFn = Callable[[DoctorContext], Iterable[Finding]]


def builtin_checks() -> dict[str, CheckFn]:
    """Wardian's own checks, name -> function, in the order the doctor runs them
    (`wardian.builtin_plugin` registers each, with its heading, lazily through
    `builtin_check`; a test keeps its names equal to the plugin's). Imports the check
    modules."""
    from wardian.app import (
        doctor_catalog,
        doctor_database,
        doctor_hooks,
        doctor_host_settings,
        doctor_launches,
        doctor_memory,
        recall,
    )

    return {
        "data-dir": _data_dir, "settings": _settings, "invokers": _invokers, "runs": _runs,
        "memory-hygiene": _memory_hygiene, "model-catalogs": doctor_catalog._model_catalogs,
        "database": doctor_database._database, "hooks": doctor_hooks._hooks,
        "provider-clis": doctor_hooks._provider_clis,
        "host-settings": doctor_host_settings._host_settings,
        "launches": doctor_launches._launches, "memory-history": doctor_memory._memory_history,
        "recall": recall._recall, "plugins": _plugins,
    }


def builtin_check(name: str) -> CheckFn:
    """The function of Wardian's own check `name` (`builtin_checks`).

    Raises:
        KeyError: no built-in check of that name.
    """
    return builtin_checks()[name]


@dataclass
class DoctorReport:
    """Every finding of a doctor run, grouped by check in registration order."""

    data_dir: str
    findings: list[Finding] = field(default_factory=list)
    titles: dict[str, str] = field(default_factory=dict)

    @property
    def problems(self) -> list[Finding]:
        """The findings with status ``problem``."""
        return [f for f in self.findings if f.status == "problem"]

    @property
    def ok(self) -> bool:
        """True when nothing is a problem (warnings allowed)."""
        return not self.problems

    def to_json(self) -> dict[str, Any]:
        """``{"ok", "data_dir", "problems", "warnings", "checks": [{name, title, findings}]}``."""
        return {
            "ok": self.ok,
            "data_dir": self.data_dir,
            "problems": len(self.problems),
            "warnings": sum(1 for f in self.findings if f.status == "warning"),
            "checks": [
                {"name": name, "title": title,
                 "findings": [f.to_json() for f in self.findings if f.check == name]}
                for name, title in self.titles.items()
            ],
        }


def run_doctor(only: Iterable[str] | None = None) -> DoctorReport:
    """Run the registered checks (all, or those named in `only`). Writes nothing.

    Raises:
        UsageError: `only` names a check that is not registered.
    """
    from wardian.config import data_dir
    from wardian.errors import UsageError
    from wardian.plugins import loaded

    checks = loaded().doctor_checks
    names = list(checks) if only is None else list(only)
    unknown = [n for n in names if n not in checks]
    if unknown:
        raise UsageError(f"unknown doctor check(s): {', '.join(unknown)}",
                         hint=f"checks: {', '.join(checks)}")
    base = data_dir(create=False)
    url = _database_url(base)
    report = DoctorReport(str(base))
    with ExitStack() as scope:
        from wardian._db import StateDB

        state_path = base / "state.db"
        state: StateDB | None = None
        memory: MemoryDB | None = None
        if url is not None:
            from wardian.memory.db import MemoryDB

            # An unreachable server is the database check's to report (and each check's).
            with suppress(WardianError):
                state = scope.enter_context(StateDB.read_only(state_path))
                memory = scope.enter_context(MemoryDB.read_only(base / "memory.db"))
        elif base.is_dir() and state_path.is_file():
            # A file that cannot even be opened is the data-dir check's to report.
            with suppress(*SQLITE.Error):
                state = scope.enter_context(StateDB.read_only(state_path))
        ctx = DoctorContext(base, base.is_dir(), url, state, memory)
        _run_checks(ctx, names, report)
    return report


def _database_url(base: Path) -> str | None:
    """The PostgreSQL URL the installation in `base` uses, or None (the SQLite files, also
    when the configured URL is unusable: the database check reports that)."""
    from wardian._db import configured_url_for

    try:
        return configured_url_for(base)
    except WardianError:
        return None


def _run_checks(ctx: DoctorContext, names: list[str], report: DoctorReport) -> None:
    from wardian.plugins import loaded, resolve

    checks = loaded().doctor_checks
    for name in names:
        check = checks[name]
        report.titles[name] = check.title
        try:
            report.findings.extend(resolve(check.run)(ctx))
        except WardianError as exc:  # e.g. a store older than this Wardian (read-only here)
            if name != "database" and _unusable_database(ctx, exc):
                # The database check says why (refused, login, missing) once, with its fix.
                report.findings.append(Finding.problem(
                    name, "not checked: the PostgreSQL database cannot be used (the "
                    "Database check says why)",
                    fix="the fix of the Database check (`wardian doctor --check database`)"))
                continue
            report.findings.append(Finding.problem(
                name, exc.message, fix=exc.hint or "`WARDIAN_DEBUG=1 wardian doctor` says more"))
        except Exception as exc:  # one broken check must not hide the others
            from wardian.oserrors import translate

            # A read-only mount, a full disk, a file SQLite cannot open: the user's to fix,
            # and the same words the commands themselves print.
            ours = translate(exc)
            if ours is not None:
                report.findings.append(Finding.problem(
                    name, ours.message,
                    fix=ours.hint or "`WARDIAN_DEBUG=1 wardian doctor` says more"))
                continue
            report.findings.append(Finding.problem(
                name, f"the check itself failed: {type(exc).__name__}: {exc}",
                fix="report this with the output of `WARDIAN_DEBUG=1 wardian doctor`"))


def _unusable_database(ctx: DoctorContext, exc: WardianError) -> bool:
    """Whether `exc` is the configured PostgreSQL server refusing the connection or not
    answering (`wardian._pg.ConnectError`; that module is loaded only with a URL)."""
    if ctx.url is None:
        return False
    from wardian._pg import ConnectError

    return isinstance(exc, ConnectError)


# --- the core checks ----------------------------------------------------------------------


def _set_home_fix(path: Path) -> str:
    return f"fix the permissions of {path} (`chmod u+rwx {path}`), or export WARDIAN_HOME=DIR"


def _read_only_mount(path: Path) -> bool:
    """True when `path` is on a file system mounted read-only (POSIX ``statvfs``)."""
    if os.name != "posix":
        return False
    try:
        return bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    except OSError:
        return False


MIN_FREE_BYTES = 1024 * 1024
"""Below this much free space on the data directory's disk (bytes available to the
user), doctor reports the disk full."""


def _free_bytes(path: Path) -> int | None:
    """Bytes free for the user on the file system of `path` (POSIX ``statvfs``), or None
    where it cannot be told."""
    if os.name != "posix":
        return None
    try:
        st = os.statvfs(path)
    except OSError:
        return None
    return st.f_bavail * st.f_frsize


def _data_dir(ctx: DoctorContext) -> Iterator[Finding]:
    name = "data-dir"
    path = ctx.data_dir
    if not path.exists():
        yield Finding.warning(
            name, f"{path} does not exist yet (nothing has been set up here)",
            fix="`wardian agent add NAME --provider builtin` creates it", subject=str(path))
        return
    if not path.is_dir():
        yield Finding.problem(name, f"{path} is not a directory", subject=str(path),
                              fix=f"move {path} aside, or export WARDIAN_HOME=DIR")
        return
    read_only = _read_only_mount(path)
    if read_only:
        # Still read below (and by every other check): what is there is worth checking.
        yield Finding.problem(
            name, f"{path} is on a file system mounted read-only: nothing can be saved",
            fix="remount it read-write, or export WARDIAN_HOME=DIR on a writable disk",
            subject=str(path))
    elif not os.access(path, os.R_OK | os.W_OK | os.X_OK):
        yield Finding.problem(name, f"{path} is not readable and writable by you",
                              fix=_set_home_fix(path), subject=str(path))
        return
    else:
        yield Finding.ok(name, f"{path} is a writable directory", subject=str(path))
    free = _free_bytes(path)
    disk_full = not read_only and free is not None and free < MIN_FREE_BYTES
    if disk_full:
        yield Finding.problem(
            name, f"the disk holding {path} is full ({free:,} bytes free): nothing can be "
            "saved, and SQLite cannot open a database that needs its -wal or -shm file "
            "made", subject=str(path),
            fix="free space on that disk (or export WARDIAN_HOME=DIR on a disk with room), "
                "then run `wardian doctor` again: the files are not damaged by it")
    for db in ("state.db", "memory.db"):
        file = path / db
        if not file.exists():
            continue
        if not os.access(file, os.R_OK | (0 if read_only else os.W_OK)):
            yield Finding.problem(name, f"{file} is not readable and writable by you",
                                  fix=f"`chmod u+rw {file}`", subject=str(file))
            continue
        from wardian._db import open_readonly, read_as_immutable

        try:
            with closing(open_readonly(file)) as conn:
                verdict = conn.execute("PRAGMA quick_check").fetchone()[0]
        except SQLITE.Error as exc:
            verdict = str(exc)
            if disk_full:
                yield Finding.problem(
                    name, f"{file} cannot be checked while the disk is full ({exc})",
                    subject=str(file), fix="free space on that disk, then run `wardian "
                                            "doctor` again")
                continue
            wal = Path(f"{file}-wal")
            if read_only and wal.exists() and wal.stat().st_size > 0:
                yield Finding.problem(
                    name, f"{file} cannot be read on this read-only mount: {wal} holds "
                    "changes not yet written into it, which SQLite reads only where it can "
                    "create its -shm file", subject=str(file),
                    fix="remount it read-write, or copy the data directory to a writable "
                        "disk and export WARDIAN_HOME=COPY")
                continue
            if isinstance(exc, SQLITE.OperationalError):
                # Not a verdict on the file's content: it could not be opened or read.
                yield Finding.problem(
                    name, f"{file} could not be read: {exc}", subject=str(file),
                    fix="check the disk (free space, `dmesg` for I/O errors) and the "
                        "file's permissions, then run `wardian doctor` again")
                continue
        if verdict != "ok":
            yield Finding.problem(
                name, f"{file} is damaged: {verdict}", subject=str(file),
                fix=f"stop Wardian, move {file} aside and restore it from a backup "
                    f"(`sqlite3 {file} .recover` salvages what it can)")
        elif read_as_immutable(file):
            yield Finding.ok(name, f"{file} passes SQLite's quick_check (read as immutable: "
                             "its folder cannot hold SQLite's -shm file)", subject=str(file))
        else:
            yield Finding.ok(name, f"{file} passes SQLite's quick_check", subject=str(file))


def _settings(ctx: DoctorContext) -> Iterator[Finding]:
    from wardian.config import read_settings
    from wardian.runtime.agents import read_agents

    def stored(conn: Connection) -> tuple[list[tuple[str, str | None, str]],
                                                   set[str]] | None:
        rows = read_settings(conn)
        return None if rows is None else (rows, {a.id for a in read_agents(conn) or []})

    found = ctx.read("state.db", stored)
    if found is None:
        yield Finding.ok("settings", "no settings stored (defaults apply)")
        return
    rows, agents = found
    bad = [finding for row in rows for finding in _setting_findings(*row, agents=agents)]
    yield from bad
    if not bad:
        yield Finding.ok("settings", f"{len(rows)} stored setting(s), all valid")


def _setting_findings(key: str, agent_id: str | None, value_json: str, *,
                      agents: set[str]) -> Iterator[Finding]:
    """What is wrong with one stored setting: unknown key, invalid value, gone agent."""
    import json

    from wardian.config import SETTINGS

    name = "settings"
    where = f" for agent {agent_id[:8]}" if agent_id else ""
    setting = SETTINGS.get(key)
    if setting is None:
        yield Finding.warning(name, f"unknown setting {key!r}{where} is stored and ignored",
                              subject=key)
        return
    try:
        value = json.loads(value_json)
        setting.parse(value if isinstance(value, str) else json.dumps(value))
    except (ValueError, TypeError) as exc:
        agent_opt = f" --agent {agent_id}" if agent_id else ""
        yield Finding.problem(
            name, f"setting {key}{where} holds an invalid value {value_json}: {exc}",
            fix=f"`wardian settings set {key} VALUE{agent_opt}` (valid: {setting.values})",
            subject=key)
        return
    if agent_id and agent_id not in agents:
        yield Finding.warning(name, f"setting {key} is overridden for agent "
                              f"{agent_id[:8]}, which no longer exists", subject=key)


def _invokers(ctx: DoctorContext) -> Iterator[Finding]:
    from wardian._db import has_table

    name = "invokers"
    if not ctx.read("state.db", lambda conn: has_table(conn, "invokers")):
        yield Finding.ok(name, "no invokers")
        return
    from wardian.invokers.health import invoker_problem
    from wardian.invokers.store import InvokerStore

    state = ctx.opened_state()
    invokers = InvokerStore(state).list()
    broken = [(inv, problem) for inv in invokers
              if (problem := invoker_problem(inv, state=state)) is not None]
    for inv, problem in broken:
        yield Finding.problem(
            name, f"{inv.kind} invoker {inv.id[:8]} ({inv.name}) is broken: {problem.reason}",
            fix=problem.fix, subject=inv.id)
    if not broken:
        yield Finding.ok(name, f"{len(invokers)} invoker(s), none broken")


def _runs(ctx: DoctorContext) -> Iterator[Finding]:
    from wardian._process import is_alive
    from wardian.engine.runs import read_running_runs

    name = "runs"
    rows = ctx.read("state.db", read_running_runs)
    if rows is None:
        yield Finding.ok(name, "no runs")
        return
    stuck = [row for row in rows if not is_alive(row[2], row[3])]
    for run_id, blueprint_id, owner_pid, _ in stuck:
        yield Finding.problem(
            name, f"run {run_id[:8]} ({blueprint_id}) is recorded running, but "
            f"its process {owner_pid or '?'} is gone",
            fix=f"`wardian automation run resume {run_id[:8]}` (continues from its last "
                "completed step)", subject=run_id)
    if not stuck:
        yield Finding.ok(name, f"{len(rows)} run(s) running, none stuck")


def _memory_hygiene(ctx: DoctorContext) -> Iterator[Finding]:
    """Records set aside by the upgrade secret check, per agent."""
    from wardian.memory.readonly import flagged_by_agent

    name = "memory-hygiene"
    if ctx.url is None and not ctx.has_file("memory.db"):
        yield Finding.ok(name, "no memory records")
        return
    rows = ctx.read("memory.db", flagged_by_agent)
    if rows is None:
        yield Finding.ok(name, "not checked for secrets yet (any memory command checks it)")
        return
    for agent_id, count in rows:
        agent = agent_id[:8]
        yield Finding.warning(
            name, f"{count} record(s) of agent {agent} hold what looks like a secret and "
            "are set aside (not recalled, not in the startup context)",
            fix=f"`wardian garden memory list --agent {agent} --flagged`, then retire or "
                "revise each one", subject=agent_id)
    if not rows:
        yield Finding.ok(name, "no records set aside as holding a secret")


def _plugins(ctx: DoctorContext) -> Iterator[Finding]:
    from wardian.plugins import ENTRY_POINT_GROUP, loaded

    errors = loaded().errors
    for error in errors:
        yield Finding.problem("plugins", error,
                              fix="fix or uninstall that plugin's distribution, or rename "
                                  "what it registers")
    if not errors:
        yield Finding.ok("plugins", f"every {ENTRY_POINT_GROUP!r} plugin loaded")
