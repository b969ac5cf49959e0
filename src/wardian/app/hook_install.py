"""Installing Wardian's hooks into a host's settings file (``wardian hooks install HOST``;
docs/hosts.md says what each host documents and what is installed).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

    from wardian._db import StateDB
    from wardian.runtime.hook_install import InstallResult

__all__ = ["install_host_hooks"]


def install_host_hooks(host: str, settings: Path | None = None, *, agents: list[str],
                       uninstall: bool = False, create_dirs: bool = False,
                       state: StateDB | None = None) -> InstallResult:
    """Add (or, with `uninstall`, remove) Wardian's hooks for `host` in its settings file;
    run again, nothing changes (`wardian.runtime.hook_install.install_hooks`).

    Args:
        host: ``claude-code``, ``codex`` or ``gemini``.
        settings: the host's settings file (default its user settings file).
        agents: agent names the hooks report for: added to the ones already installed
            (uninstall: only these are removed). Each must exist when installing, so an
            unknown name is refused now, not at the host's next session.
        create_dirs: create the missing folders of an explicit `settings` path (without
            it such a path is refused: a typo would put hooks where no host reads them).
            The host's default file gets its folder either way.
        state: the open state database the `agents` are checked in; needed (and only
            read) when installing with `agents`.

    Raises:
        NotFoundError: an unknown agent. UsageError: unknown host, or an explicit
            `settings` path whose folder does not exist. ValidationError: the settings
            file is not a JSON object (left as it is). ValueError: `agents` to install
            without `state`.
    """
    from wardian.errors import UsageError
    from wardian.runtime.hook_install import install_hooks

    if settings is not None and not uninstall and not create_dirs:
        folder = settings.expanduser().parent
        if not folder.is_dir():
            raise UsageError(
                f"--settings {settings}: the folder {folder} "
                + ("is not a folder" if folder.exists() else "does not exist"),
                hint="check the path for a typo (the host reads only its own settings "
                     "file), or pass --create-dirs to create the folder")

    if agents and not uninstall:
        from wardian.runtime.agents import AgentRegistry

        if state is None:
            raise ValueError("install_host_hooks: agents to check need the state database")
        registry = AgentRegistry(state)
        for name in agents:
            registry.get(name)
    return install_hooks(host, settings, agents=agents, uninstall=uninstall)
