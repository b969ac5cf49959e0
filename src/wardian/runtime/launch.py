"""Managed launches: ``wardian agent exec NAME [--workspace PATH] -- CMD [ARGS]...``.

`exec_managed` runs CMD as a managed process of an agent and waits for it:

1. Reads ``agent_memory.enabled`` *now* (the setting applies to newly launched processes).
2. Clears every inherited managed variable (`wardian.memory.principal.MANAGED_ENV`) from
   the child's environment, then sets ``WARDIAN_AGENT_ID`` and ``WARDIAN_LAUNCH_ID``, and
   records the launch (table ``launches``: agent, supervisor pid + start time) so operator
   commands refuse its processes even after they clear their environment.
3. Memory enabled: mints a fresh capability (only its hash is stored), writes the startup
   context (instructions + recalled records within ``memory.startup_budget_chars``) to
   ``<data dir>/run/<launch id>.md`` (mode 0600), sets ``WARDIAN_CAPABILITY`` and
   ``WARDIAN_MEMORY_CONTEXT``, and, once the child has started, records a ``Memory
   loaded`` event with the exact context and the child's pid/start time (no event when
   the startup set was empty). Memory disabled: none of that.
4. Waits for the child, forwarding SIGTERM/SIGHUP to it and letting it handle Ctrl-C.
   On Linux this supervisor is a child subreaper (`become_subreaper`): a descendant that
   detaches (``setsid -f``, a double fork) is re-parented to it, not to pid 1, so it stays
   inside the launch's tree, where capability and operator checks look. When the child
   exits, every process the runtime left below the supervisor is ended (SIGTERM, then
   stopped and killed until none is left, whatever it forks meanwhile;
   `end_descendants`): no agent process outlives the capability. Elsewhere
   there is no such call; a detached descendant leaves the tree and is only refused by
   the capability's expiry (docs/threat-model.md).
5. Calls `_on_runtime_exit` — the one place where work happens after the runtime ends —
   and returns the child's exit code (128 + N when it died of signal N).

Which process holds the capability: **this supervisor** (the ``agent exec`` process),
not the child. The token must be in the child's environment before the child exists,
so the child's pid is unknown when the capability is minted, and binding afterwards
would leave a window in which a fast child is refused. The supervisor's identity is
known up front and its lifetime covers the child's: it waits for the child and revokes
in `_on_runtime_exit` as soon as the child exits (normally or by crash); if the
supervisor itself dies (crash, ``kill -9``), its pid + start time no longer match a live
process and every check sees the capability as expired. A grandchild left running after
the child exits is refused too: the runtime has ended.

Workspace rule: ``--workspace PATH``, else the agent's registered workspace, else the
current directory; the child runs in that directory, and the launch workspace (the
workspace of the startup set) is its git root, or the directory itself outside git —
the same rule `wardian memory save` uses for its default scope
(`wardian.memory.models.default_workspace`).

Spec: "Agent memory", "Save and inspect memory", "What appears in chat"; DESIGN.md
"Identity and authority".
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING

from wardian._process import (
    LaunchCgroup,
    ProcessIdentity,
    become_subreaper,
    current,
    end_descendants,
    identity_of,
)
from wardian._util import new_id, utc_now_iso
from wardian.errors import UsageError
from wardian.memory.principal import (
    ENV_AGENT_ID,
    ENV_CAPABILITY,
    ENV_LAUNCH_ID,
    ENV_MEMORY_CONTEXT,
    MANAGED_ENV,
)
from wardian.runtime.agents import Agent

if TYPE_CHECKING:
    from wardian._db import StateDB
    from wardian.memory.store import MemoryStore

__all__ = [
    "EXIT_NOT_EXECUTABLE",
    "EXIT_NOT_FOUND",
    "CommandNotFound",
    "Launch",
    "exec_managed",
    "prepare_launch",
    "put_wardian_on_path",
    "require_owner_namespace",
    "resolve_workspace",
    "run_dir",
]


EXIT_NOT_FOUND = 127
"""`agent exec` exit code when CMD does not exist (the shell's and ``env``'s convention)."""
EXIT_NOT_EXECUTABLE = 126
"""`agent exec` exit code when CMD exists but cannot be run (no permission, not a program)."""


class CommandNotFound(UsageError):
    """The command given after ``--`` cannot be started.

    Exits 127 when it does not exist and 126 when it cannot be executed, as ``sh``,
    ``env`` and ``timeout`` do, so a caller of `agent exec` sees the same codes as when it
    runs CMD itself (a wrapped program's own exit code 2 stays distinguishable).
    """

    def __init__(self, message: str, *, hint: str | None = None, exit_code: int) -> None:
        super().__init__(message, hint=hint)
        self.exit_code = exit_code



def put_wardian_on_path(env: dict[str, str]) -> None:
    """Prepend the folder of this installation's `wardian` script to the child's PATH.

    The startup context tells the agent to run `wardian memory …`; with Wardian installed in
    a virtual environment that is not activated, that command would not be found (or would
    be another installation's) inside the managed process.
    """
    import sysconfig

    scripts = sysconfig.get_path("scripts")
    names = ("wardian.exe", "wardian") if os.name == "nt" else ("wardian",)
    if not scripts or not any(os.path.isfile(os.path.join(scripts, n)) for n in names):
        return
    parts = [p for p in env.get("PATH", "").split(os.pathsep) if p]
    if not parts or os.path.normcase(parts[0]) != os.path.normcase(scripts):
        env["PATH"] = os.pathsep.join([scripts, *parts])

def run_dir() -> Path:
    """``<data dir>/run``: startup context files of running launches (mode 0700)."""
    from wardian._fs import private_dir
    from wardian.config import data_dir

    return private_dir(data_dir() / "run")


def resolve_workspace(agent: Agent, workspace: str | None) -> tuple[Path, str]:
    """The child's working directory and the launch workspace path (see module docstring).

    Raises:
        UsageError: the chosen directory, or the current one, does not exist.
    """
    from wardian.memory.models import default_workspace

    chosen = workspace or agent.workspace
    if chosen is None:
        try:
            cwd = Path.cwd()
        except FileNotFoundError:
            raise UsageError(
                "the current directory no longer exists",
                hint="cd into the project, or pass --workspace PATH",
            ) from None
    else:
        cwd = Path(chosen).expanduser().resolve()
        if not cwd.is_dir():
            flag = "--workspace" if workspace else f"agent {agent.name}'s workspace"
            raise UsageError(
                f"workspace {cwd} is not a directory ({flag})",
                hint="pass --workspace with an existing directory",
            )
    return cwd, default_workspace(cwd)


class Launch:
    """A prepared launch: environment, directory and (when enabled) memory material.

    Attributes:
        agent: the agent launched.
        launch_id: fresh UUID4 of this launch (``WARDIAN_LAUNCH_ID``).
        cwd: the child's working directory.
        workspace: the launch workspace (git root of `cwd`, or `cwd`).
        env: the child's complete environment.
        memory_enabled: ``agent_memory.enabled`` as read at launch.
        holder: the process identity the capability is bound to (this supervisor).
        token: the minted capability, when memory is enabled.
        context_text / context_path / record_ids / omitted / has_records: the startup
            context, when any (set by `prepare_launch`).

    A plain class, not a dataclass: the dataclass machinery alone costs ``agent exec``
    a noticeable share of its CPU budget.
    """

    def __init__(self, *, agent: Agent, launch_id: str, cwd: Path, workspace: str,
                 env: dict[str, str], memory_enabled: bool, holder: ProcessIdentity) -> None:
        self.agent = agent
        self.launch_id = launch_id
        self.cwd = cwd
        self.workspace = workspace
        self.env = env
        self.memory_enabled = memory_enabled
        self.holder = holder
        self.token: str | None = None
        self.context_text: str | None = None
        self.context_path: Path | None = None
        self.record_ids: tuple[str, ...] = ()
        self.omitted = 0
        self.has_records = False


def _write_private(path: Path, text: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    if os.name != "nt":
        os.fchmod(fd, 0o600)  # whatever the umask
    with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
        handle.write(text)


def require_owner_namespace() -> None:
    """Refuse a launch whose supervisor's pid, start time or namespaces the data
    directory's owner cannot read as this process reads them (`IdentityUnavailable`)."""
    from wardian.config import namespace_mismatch
    from wardian.errors import IdentityUnavailable

    foreign = namespace_mismatch()
    if foreign:
        raise IdentityUnavailable(
            f"launch refused: {foreign}; a launch recorded from here would name another "
            "namespace's process",
            hint="start the agent from your own shell, in the namespace the data directory "
            "was set up in")
    current()  # raises when /proc is another pid namespace's


def prepare_launch(
    agent: Agent, *, state: StateDB, store: MemoryStore, workspace: str | None = None,
    base_env: dict[str, str] | None = None,
) -> Launch:
    """Read the setting, build the child's environment, and mint memory material if enabled.

    Atomic for the database part (capability row). The context file is written after.

    Args:
        agent: the agent to launch.
        state: the open state database the settings are read from.
        store: the memory store over the open ``memory.db`` the launch is recorded in.
        workspace: ``--workspace`` (a directory), or None.
        base_env: the environment to start from (default: a copy of ``os.environ``).

    Raises:
        UsageError: the workspace is not a directory.
        IdentityUnavailable (exit 3): this supervisor runs in a pid or user namespace other
            than the data directory owner's, or its identity cannot be read there.
    """
    from wardian.runtime.startup_recall import startup_recall, startup_settings

    require_owner_namespace()

    cwd, launch_workspace = resolve_workspace(agent, workspace)
    recall = startup_settings(state)
    enabled = recall.enabled
    env = dict(os.environ if base_env is None else base_env)
    for name in MANAGED_ENV:
        env.pop(name, None)
    launch = Launch(
        agent=agent, launch_id=new_id(), cwd=cwd, workspace=launch_workspace, env=env,
        memory_enabled=enabled, holder=current(),
    )
    env[ENV_AGENT_ID] = agent.id
    env[ENV_LAUNCH_ID] = launch.launch_id
    put_wardian_on_path(env)

    from wardian._db import atomic
    from wardian.memory.capabilities import CapabilityStore
    from wardian.memory.recall import StartupContext

    context: StartupContext | None = None
    with atomic(store.conn):
        capabilities = CapabilityStore(store.conn)
        now = utc_now_iso()
        # Recorded even with memory disabled: operator commands recognise the launch's
        # processes by this ancestor, whatever they do to their environment.
        capabilities.record_launch_in_transaction(
            launch.launch_id, agent.id, pid=launch.holder.pid,
            started_at=launch.holder.started_at, workspace=launch_workspace,
            memory_enabled=enabled, now=now,
        )
        if enabled:
            launch.token = capabilities.mint_in_transaction(
                agent.id, pid=launch.holder.pid, started_at=launch.holder.started_at,
                workspace=launch_workspace, now=now,
            )
            context = startup_recall(
                store, agent_id=agent.id, agent_name=agent.name,
                workspace=launch_workspace, settings=recall,
            )
    if context is None or launch.token is None:
        return launch
    launch.context_text = context.text
    launch.record_ids = tuple(r.id for r in context.loaded)
    launch.omitted = context.omitted
    launch.has_records = context.has_records
    launch.context_path = run_dir() / f"{launch.launch_id}.md"
    try:
        _write_private(launch.context_path, context.text)
    except OSError:
        _revoke(launch.holder, "startup context could not be written")
        raise
    env[ENV_CAPABILITY] = launch.token
    env[ENV_MEMORY_CONTEXT] = str(launch.context_path)
    return launch


def _record_loaded(launch: Launch, store: MemoryStore, child_pid: int, source: str) -> None:
    if not (launch.memory_enabled and launch.has_records and launch.context_text):
        return
    from wardian.runtime.startup_recall import record_loaded

    child = identity_of(child_pid)
    record_loaded(
        store, launch.agent.id, context=launch.context_text, record_ids=launch.record_ids,
        omitted_count=launch.omitted, pid=child_pid,
        process_started_at=child.started_at if child else None,
        workspace=launch.workspace, source=source,
    )


def _announce(launch: Launch, state: StateDB) -> None:
    """Before the runtime starts: print the collapsed "Memory loaded · N records · …" line
    on stderr (nothing when nothing was loaded; stdout stays the runtime's), and queue a
    recovery sweep of the agent's earlier sessions for the detached drain worker
    (`wardian.runtime.recovery`) in `state`, the open state database. Neither may stop
    the launch: failures are one stderr line.
    """
    from wardian.runtime.hooks import loaded_line

    if launch.memory_enabled and launch.has_records:
        line = loaded_line(len(launch.record_ids), launch.agent.name)
        if line:
            print(line, file=sys.stderr, flush=True)
    try:
        from wardian.config import SettingsStore

        settings = SettingsStore(state)
        logging_on = bool(settings.get("conversation_logging.enabled",
                                       agent_id=launch.agent.id))
        if logging_on:
            from wardian.runtime.recovery import request_recovery
            from wardian.runtime.session_events import start_drain_worker

            request_recovery(launch.agent.id, launch.workspace, state=state)
            start_drain_worker()
    except Exception as exc:  # recovery is best effort; the launch goes on
        print(f"wardian: recovery not requested: {exc}", file=sys.stderr)


def _revoke(holder: ProcessIdentity, reason: str) -> None:
    from wardian._db import database_exists
    from wardian.config import memory_db_path

    if not database_exists(memory_db_path()):
        return
    from wardian.memory.capabilities import CapabilityStore
    from wardian.memory.db import open_memory_db
    from wardian.memory.store import MemoryStore

    store = MemoryStore(open_memory_db())
    CapabilityStore(store.conn).revoke_for_process(
        holder.pid, holder.started_at, reason=reason
    )


def _on_runtime_exit(agent: Agent, session_id: str, workspace: str, source: str) -> None:
    """Everything that happens once the managed runtime has ended; called exactly once
    per started runtime (normal exit, crash or signal), never when it failed to start.

    Revokes the capability held by this supervisor, then records the session-close event
    (boundary ``shutdown``, session id = the launch id; the session's Claude Code or Codex
    transcript is attached when one is found, see `provider_launch.find_transcript`)
    and starts a drain worker. Neither raises: the runtime has ended either way, and the
    child's exit code must reach the caller. A failed revocation is reported on stderr;
    the capability is bound to this supervisor's pid and start time, so it expires when
    this process exits moments later.

    Args:
        agent: the agent whose process ended.
        session_id: this launch's id (``WARDIAN_LAUNCH_ID``).
        workspace: the launch workspace.
        source: the event source, ``exec`` or ``launch``.
    """
    holder = current()
    try:
        _revoke(holder, f"runtime exited (launch {session_id})")
    except Exception as exc:  # never mask the runtime's exit; see the docstring
        print(f"wardian: capability not revoked ({exc}); it expires when this process exits",
              file=sys.stderr)
    finally:
        try:
            from wardian.runtime.provider_launch import find_transcript
            from wardian.runtime.session_events import record_session_close

            transcript, provider = find_transcript(
                session_id, provider=agent.provider, started_at=holder.started_at,
                workspace=workspace,
            )
            record_session_close(
                agent.id, "shutdown", session_id=session_id, transcript_path=transcript,
                provider=provider or agent.provider, workspace=workspace, source=source,
            )
        except Exception as exc:  # the session still ended; say so, never mask the exit
            print(f"wardian: session-close event not recorded: {exc}", file=sys.stderr)


def _exit_code(returncode: int) -> int:
    return 128 - returncode if returncode < 0 else returncode


def exec_managed(
    agent: Agent, command: Sequence[str], *, workspace: str | None = None,
    source: str = "exec",
) -> int:
    """Run `command` as a managed process of `agent`, wait, and return its exit code.

    Args:
        agent: the agent (see `AgentRegistry.get`).
        command: the program and its arguments (non-empty).
        workspace: ``--workspace`` directory, or None (see module docstring).
        source: which command started it, ``exec`` (``agent exec``) or ``launch``
            (``agent launch``); recorded on its ``Memory loaded`` and session-close events.

    Returns:
        The child's exit code; ``128 + N`` when it died of signal N.

    Raises:
        UsageError: empty command, bad workspace.
        CommandNotFound: the program cannot be started (exit 127 not found, 126 not
            executable).
    """
    if not command:
        raise UsageError("no command given", hint="use `wardian agent exec NAME -- CMD [ARGS]...`")
    # Before the child exists, so everything it detaches stays below this supervisor.
    contained = become_subreaper()
    from wardian.config import open_state_db
    from wardian.memory.db import open_memory_db
    from wardian.memory.store import MemoryStore

    # Its refusals come before memory.db is opened (and perhaps created).
    require_owner_namespace()
    resolve_workspace(agent, workspace)
    # The launch's start is one unit of work (up to the child's start); its end opens
    # again (`_on_runtime_exit`): the files may have been replaced while the child ran.
    state, store = open_state_db(), MemoryStore(open_memory_db())
    launch = prepare_launch(agent, state=state, store=store, workspace=workspace)
    try:
        # Before "Memory loaded" is said: a launch whose program does not exist loaded
        # nothing into anything.
        check_program(command[0], env=launch.env, cwd=launch.cwd)
    except CommandNotFound:
        _abandon(launch)
        raise
    _announce(launch, state)
    # After the drain worker started (it is the supervisor's, not the runtime's).
    cgroup = LaunchCgroup.create(launch.launch_id) if contained else None
    try:
        def start() -> subprocess.Popen[bytes]:
            return subprocess.Popen(list(command), env=launch.env, cwd=launch.cwd)

        child = cgroup.spawn(start) if cgroup is not None else start()
    except OSError as exc:
        if cgroup is not None:
            cgroup.end()
        _abandon(launch)
        missing = isinstance(exc, FileNotFoundError)
        raise CommandNotFound(
            f"cannot start {command[0]!r}: {exc.strerror or exc}",
            hint="check the command after `--` and your PATH" if missing
            else "check that it is an executable program",
            exit_code=EXIT_NOT_FOUND if missing else EXIT_NOT_EXECUTABLE,
        ) from exc
    try:
        restore = _forward_signals(child)
        try:
            try:
                _record_loaded(launch, store, child.pid, source)
            except Exception as exc:
                # Bookkeeping must not end a live runtime (spec: a reader or broker error
                # alone does not revoke a still-live runtime's capability).
                print(f"wardian: Memory loaded event not recorded: {exc}", file=sys.stderr)
            returncode = child.wait()
        finally:
            try:
                if contained:
                    # The runtime has ended: so does everything it left running, before
                    # anything else this supervisor starts (the drain worker) exists.
                    from wardian._process import kept_pids

                    # The drain worker this supervisor started (`_announce`) is its own.
                    end_descendants(started_after=launch.holder.started_at,
                                    spare=kept_pids())
                if cgroup is not None:  # and whatever left the tree but not the cgroup
                    cgroup.end()
            finally:
                restore()
    finally:
        try:
            _on_runtime_exit(launch.agent, launch.launch_id, launch.workspace, source)
        finally:
            if launch.context_path is not None:
                launch.context_path.unlink(missing_ok=True)
    return _exit_code(returncode)


def _abandon(launch: Launch) -> None:
    """No runtime ever ran: revoke and clean up; there is no runtime exit to report."""
    try:
        _revoke(launch.holder, f"runtime could not start (launch {launch.launch_id})")
    finally:
        if launch.context_path is not None:
            launch.context_path.unlink(missing_ok=True)


def check_program(program: str, *, env: dict[str, str], cwd: str | Path) -> str:
    """The file `program` runs as (a path, relative to `cwd`, or a name looked up on
    `env`'s ``PATH``, as the child would be started); else say what was not found.

    Raises:
        CommandNotFound: exit 127 when no such file / nothing of that name on ``PATH``
            (the directories searched are counted), 126 when it is not an executable file.
    """
    import shutil

    if os.sep in program or (os.altsep and os.altsep in program):
        path = Path(cwd, program)
        if not path.exists():
            raise CommandNotFound(f"command not found: {program!r}: no such file in {cwd}",
                                  hint="check the command after `--` for a typo",
                                  exit_code=EXIT_NOT_FOUND)
        if not path.is_file() or not os.access(path, os.X_OK):
            raise CommandNotFound(f"cannot run {program!r}: not an executable file",
                                  hint="make it executable with chmod +x, or run it "
                                       "through its interpreter",
                                  exit_code=EXIT_NOT_EXECUTABLE)
        return str(path)
    search = env.get("PATH", os.defpath)
    found = shutil.which(program, path=search)
    if found is None:
        dirs = [d for d in search.split(os.pathsep) if d]
        raise CommandNotFound(
            f"command not found: {program!r} is on none of the {len(dirs)} PATH "
            "directories", hint="check the command after `--` for a typo, and PATH",
            exit_code=EXIT_NOT_FOUND)
    return found


def _forward_signals(child: subprocess.Popen[bytes]) -> _Restore:
    """Forward termination signals to the child; let it alone handle Ctrl-C."""
    import threading

    if threading.current_thread() is not threading.main_thread():
        return _Restore({})

    def forward(signum: int, _frame: FrameType | None) -> None:
        with contextlib.suppress(OSError):  # already gone
            child.send_signal(signum)

    def ignore(_signum: int, _frame: FrameType | None) -> None:
        # The terminal sends Ctrl-C to the whole foreground group: the child gets it too.
        return None

    previous: dict[int, object] = {}
    wanted: list[tuple[int, object]] = [(signal.SIGINT, ignore), (signal.SIGTERM, forward)]
    if sys.platform != "win32":
        wanted.append((signal.SIGHUP, forward))
    for signum, handler in wanted:
        previous[signum] = signal.signal(signum, handler)  # type: ignore[arg-type]
    return _Restore(previous)


class _Restore:
    def __init__(self, previous: dict[int, object]) -> None:
        self.previous = previous

    def __call__(self) -> None:
        for signum, handler in self.previous.items():
            signal.signal(signum, handler)  # type: ignore[arg-type]
