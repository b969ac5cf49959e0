"""The real host CLIs for the `hosts` tests: where `scripts/install-hosts` put them, and how
to run one offline against the scripted endpoint with an isolated HOME.

The pins are `tests/hosts/pins.txt` (``<command> <npm package> <version>``, one a line); the
cache is ``$WARDIAN_HOSTS_CACHE``, else ``$XDG_CACHE_HOME/wardian-hosts``, else
``~/.cache/wardian-hosts`` (the same rule as the script), read when this module is imported,
before any test's environment is cleaned. Pin ``<command>-<version>/node_modules/.bin/
<command>`` is the executable.

`Host` prepares one host's isolated home (``HOME`` = a temp folder; the host's config files
there point it at the endpoint, with telemetry, update checks and auth prompts off) and
runs it as a child process. Nothing the host does reaches the network: every model call
goes to the endpoint's 127.0.0.1 URL.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.hosts.endpoint import ScriptedEndpoint

__all__ = ["CACHE", "PINS", "Host", "Pin", "host_path", "pins"]

PINS = Path(__file__).with_name("pins.txt")
CACHE = Path(os.environ.get("WARDIAN_HOSTS_CACHE") or (
    Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "wardian-hosts"))
REAL_PATH = os.environ.get("PATH", "/usr/bin:/bin")
"""PATH as the test process found it (node for Gemini CLI and the Codex launcher)."""

SIDE_MODEL = "wardian-side-model"
"""The model Claude Code is told to use for its side requests (titles, summaries), so the
endpoint answers them without consuming the script."""


@dataclass(frozen=True)
class Pin:
    command: str
    package: str
    version: str


def pins() -> dict[str, Pin]:
    """The pins by command name."""
    out: dict[str, Pin] = {}
    for line in PINS.read_text().splitlines():
        fields = line.split("#", 1)[0].split()
        if len(fields) == 3:
            out[fields[0]] = Pin(*fields)
    return out


def host_path(command: str) -> Path | None:
    """The installed executable of pinned host `command`, or None when it is not installed."""
    pin = pins()[command]
    folder = CACHE / f"{command}-{pin.version}"
    exe = folder / "node_modules" / ".bin" / command
    return exe if (folder / ".installed").is_file() and exe.exists() else None


PROMPT_ARGS: dict[str, tuple[str, ...]] = {
    "claude": ("-p", "{prompt}", "--model", "claude-opus-4-5",
               "--allowedTools", "mcp__wardian,Bash", "--output-format", "json"),
    "codex": ("exec", "--skip-git-repo-check", "--model", "gpt-5.1-codex", "{prompt}"),
    "gemini": ("-m", "gemini-2.5-pro", "--yolo", "-p", "{prompt}"),
    "opencode": ("run", "--model", "scripted/scripted-model", "{prompt}"),
}
"""Each host's arguments for one non-interactive turn (``{prompt}`` stands for the
prompt): its print/exec mode, a model the scripted endpoint answers as, and the tool
approvals a scripted tool call needs (Claude Code's allowed tools, Gemini's ``--yolo``;
Codex and opencode are set up to run tools without asking)."""


@dataclass
class Host:
    """One host CLI set up in an isolated home against `endpoint`.

    `home` is the HOME the host sees; `workspace` the folder it runs in (its project);
    `env` the environment every run gets (the test's own, with HOME, the endpoint variables
    and the host's quiet switches; ``WARDIAN_HOME`` passes through so the installed hooks
    and ``wardian`` reach the test's data folder). `wardian_bin` is a folder put first on
    PATH (and by ``~/.profile`` for login shells) with a ``wardian`` command running this
    interpreter's package, so a scripted Bash call of ``wardian …`` reaches the code under
    test.
    """

    name: str
    exe: Path
    version: str
    home: Path
    workspace: Path
    endpoint: ScriptedEndpoint
    env: dict[str, str] = field(default_factory=dict)

    @classmethod
    def create(cls, name: str, exe: Path, root: Path, endpoint: ScriptedEndpoint) -> Host:
        home, workspace, wbin = root / "home", root / "workspace", root / "bin"
        for d in (home, workspace, wbin):
            d.mkdir(parents=True, exist_ok=True)
        shim = wbin / "wardian"
        shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m wardian "$@"\n')
        shim.chmod(0o755)
        # A login shell (Codex runs its shell tool as ``bash -lc``) takes PATH from
        # /etc/profile; the user's own profile puts ``wardian`` back, as a real install's
        # ~/.profile does for ~/.local/bin.
        (home / ".profile").write_text(f'PATH="{wbin}:$PATH"\n')
        host = cls(name=name, exe=exe, version=pins()[name].version, home=home,
                   workspace=workspace, endpoint=endpoint)
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("ANTHROPIC_", "CLAUDE", "GEMINI_", "GOOGLE_", "OPENAI_",
                                    "CODEX_", "OPENCODE"))}
        env.update(HOME=str(home), PATH=f"{wbin}:{REAL_PATH}", NO_COLOR="1",
                   XDG_CONFIG_HOME=str(home / ".config"), XDG_DATA_HOME=str(home / ".local/share"),
                   XDG_CACHE_HOME=str(home / ".cache"), XDG_STATE_HOME=str(home / ".local/state"))
        env.pop("CI", None)  # hosts change their output under CI (no TTY probing is wanted)
        host.env = env
        getattr(host, f"_setup_{name}")()
        return host

    # per-host setup -------------------------------------------------------------------

    def _setup_claude(self) -> None:
        self.env.update(
            ANTHROPIC_BASE_URL=self.endpoint.url, ANTHROPIC_API_KEY="sk-ant-scripted",
            ANTHROPIC_DEFAULT_HAIKU_MODEL=SIDE_MODEL, ANTHROPIC_SMALL_FAST_MODEL=SIDE_MODEL,
            CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1", DISABLE_AUTOUPDATER="1",
            DISABLE_TELEMETRY="1", DISABLE_ERROR_REPORTING="1")
        self.write_json(self.home / ".claude.json", {
            "hasCompletedOnboarding": True, "bypassPermissionsModeAccepted": True,
            "projects": {str(self.workspace): {"hasTrustDialogAccepted": True}}})

    def _setup_gemini(self) -> None:
        # GEMINI_CLI_NO_RELAUNCH: the CLI runs in its first process, as the child it would
        # otherwise start again (a second Node start) only to give it a larger heap.
        self.env.update(GOOGLE_GEMINI_BASE_URL=self.endpoint.url, GEMINI_API_KEY="scripted",
                        GEMINI_CLI_TRUST_WORKSPACE="true", GEMINI_CLI_NO_RELAUNCH="true")
        self.write_json(self.gemini_settings, {
            "security": {"auth": {"selectedType": "gemini-api-key"}},
            "privacy": {"usageStatisticsEnabled": False},
            "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
            "telemetry": {"enabled": False}})

    def _setup_codex(self) -> None:
        codex_home = self.home / ".codex"
        codex_home.mkdir(exist_ok=True)
        self.env.update(CODEX_HOME=str(codex_home), SCRIPTED_API_KEY="scripted")
        (codex_home / "config.toml").write_text(
            'model = "gpt-5.1-codex"\nmodel_provider = "scripted"\n'
            'approval_policy = "never"\nsandbox_mode = "danger-full-access"\n\n'
            "[model_providers.scripted]\n"
            'name = "scripted"\n'
            f'base_url = "{self.endpoint.url}/v1"\n'
            'wire_api = "responses"\nenv_key = "SCRIPTED_API_KEY"\n'
            "request_max_retries = 0\nstream_max_retries = 0\n")

    def _setup_opencode(self) -> None:
        self.env.update(OPENCODE_DISABLE_AUTOUPDATE="1", OPENCODE_DISABLE_MODELS_FETCH="1",
                        OPENCODE_DISABLE_LSP_DOWNLOAD="1", SCRIPTED_API_KEY="scripted")
        self.write_json(self.home / ".config" / "opencode" / "opencode.json", {
            "$schema": "https://opencode.ai/config.json",
            "autoupdate": False, "share": "disabled",
            "model": "scripted/scripted-model", "small_model": f"scripted/{SIDE_MODEL}",
            "provider": {"scripted": {
                "npm": "@ai-sdk/openai", "name": "scripted",
                "options": {"baseURL": f"{self.endpoint.url}/v1", "apiKey": "scripted"},
                "models": {"scripted-model": {"name": "scripted-model"},
                           SIDE_MODEL: {"name": SIDE_MODEL}}}}})
        self._opencode_dependencies_installed(self.home / ".config" / "opencode")

    def _opencode_dependencies_installed(self, config_dir: Path) -> None:
        """Leave opencode's config folder as its first start leaves it: opencode adds
        ``@opencode-ai/plugin`` (the types of plugins written in TypeScript) to each config
        folder's package.json and installs it from the npm registry, in the background,
        unless the folder has a node_modules and its package-lock.json names every
        dependency. In a fresh home that install reaches the network, a plugin load waits
        for it, and a run that exits first leaves its lock behind, which the next run waits
        out until it is stale (a minute). Wardian's plugin imports only Node built-ins, so
        the folder is written as installed with no packages in node_modules."""
        dependency = {"@opencode-ai/plugin": self.version}
        self.write_json(config_dir / "package.json", {"dependencies": dependency})
        self.write_json(config_dir / "package-lock.json", {
            "name": "opencode", "lockfileVersion": 3, "requires": True,
            "packages": {"": {"dependencies": dependency}}})
        (config_dir / "node_modules").mkdir(exist_ok=True)

    # helpers --------------------------------------------------------------------------

    @property
    def gemini_settings(self) -> Path:
        return self.home / ".gemini" / "settings.json"

    @staticmethod
    def write_json(path: Path, value: Any) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(value, indent=2) + "\n")

    def prompt_argv(self, prompt: str, *, launch: str | None = None) -> list[str]:
        """The command line of one non-interactive turn of `prompt` (`PROMPT_ARGS`), run
        directly or, with `launch`, inside ``wardian agent exec LAUNCH`` in the
        workspace."""
        args = [a.replace("{prompt}", prompt) for a in PROMPT_ARGS[self.name]]
        if launch is None:
            return self.argv(*args)
        return [sys.executable, "-m", "wardian", "agent", "exec", "--workspace",
                str(self.workspace), launch, "--", str(self.exe), *args]

    def argv(self, *args: str) -> list[str]:
        """The host's command line: its executable and `args`."""
        return [str(self.exe), *args]

    def run(self, *args: str, argv: Sequence[str] | None = None,
            env: Mapping[str, str] | None = None, input: str | None = None,
            timeout: float = 180, cwd: Path | None = None,
            ) -> subprocess.CompletedProcess[str]:
        """Run the host with `args` (or the whole command line `argv`, e.g. wrapped in
        ``wardian agent exec``) in the workspace; returns the finished process (never
        raises on a non-zero exit; the timeout is a safety cap, not a budget)."""
        where = cwd or self.workspace
        return subprocess.run(list(argv) if argv is not None else self.argv(*args),
                              env={**self.env, "PWD": str(where), **(env or {})}, cwd=where,
                              input=input if input is not None else "", text=True,
                              capture_output=True, timeout=timeout, check=False)

    def popen(self, *args: str, argv: Sequence[str] | None = None,
              env: Mapping[str, str] | None = None) -> subprocess.Popen[str]:
        """Start the host without waiting (stdout/stderr piped, stdin closed)."""
        return subprocess.Popen(list(argv) if argv is not None else self.argv(*args),
                                env={**self.env, "PWD": str(self.workspace), **(env or {})},
                                cwd=self.workspace,
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, start_new_session=True)

    def transcripts(self) -> list[Path]:
        """The session transcripts the host wrote under its home, oldest first."""
        roots = {"claude": self.home / ".claude" / "projects",
                 "gemini": self.home / ".gemini" / "tmp",
                 "codex": self.home / ".codex" / "sessions",
                 "opencode": self.home / ".local" / "share" / "opencode"}
        root = roots[self.name]
        found = [p for p in root.rglob("*") if p.suffix in {".jsonl", ".json"} and p.is_file()
                 and (self.name != "gemini" or p.parent.name == "chats")] if root.is_dir() else []
        return sorted(found, key=lambda p: p.stat().st_mtime_ns)
