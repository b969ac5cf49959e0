"""``python -m wardian.demo [--transcript PATH]`` — the main job end to end (``make demo``).

Drives the real ``wardian`` command line as subprocesses in a throwaway data directory, and
echoes each command before running it, so what you see is what a user would type:

1. enable agent memory and conversation logging;
2. add an agent;
3. add a session-close invoker bound to the shipped ``memory-consolidation`` blueprint with
   the embedded ``builtin`` curator, inspect it, enable it;
4. close a session with a transcript (default: the example Claude Code session shipped in
   ``wardian/library/examples/``; or your own Claude Code, Codex or Gemini CLI file);
5. wait for the run the drain worker starts (polling, with a deadline);
6. print the run summary and the agent's memory as the agent sees it at its next start
   (the startup context of a managed process, via ``wardian agent exec``).

Nothing here is canned: every line of output comes from those commands.
Spec "Optional consolidation"; issue 9 "Quick start".
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

__all__ = ["main"]

AGENT = "demo-agent"
ASSIGNMENTS = {
    "curator": {"target_type": "temporary_provider", "provider": "builtin",
                "model": "curator-rules"}
}
RUN_DEADLINE_S = 120.0
TERMINAL = {"succeeded", "failed", "cancelled", "interrupted", "skipped"}


def example_transcript() -> Path:
    """The example Claude Code session shipped with the package (written for Wardian)."""
    return Path(__file__).resolve().parent / "library" / "examples" / "claude-code-session.jsonl"


class Demo:
    """Runs ``wardian`` commands in one throwaway ``WARDIAN_HOME`` and echoes them."""

    def __init__(self, home: Path, workspace: Path) -> None:
        self.home = home
        self.workspace = workspace
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("WARDIAN_")}
        self.env["WARDIAN_HOME"] = str(home)

    def wardian(self, *args: str, capture: bool = False, show: bool = True,
                check: bool = True) -> subprocess.CompletedProcess[str]:
        """Run ``wardian ARGS`` (as ``python -m wardian``), echoing the command first.

        Args:
            capture: capture stdout (returned) instead of letting it through.
            show: echo the command.
            check: exit the demo when the command fails.
        """
        if show:
            print(f"\n$ wardian {shlex.join(args)}", flush=True)
        proc = subprocess.run(
            [sys.executable, "-m", "wardian", *args], env=self.env, cwd=self.workspace,
            text=True, capture_output=capture, timeout=300, check=False,
        )
        if check and proc.returncode != 0:
            if capture:
                sys.stdout.write(proc.stdout)
                sys.stderr.write(proc.stderr)
            raise SystemExit(f"demo stopped: `wardian {shlex.join(args)}` exited "
                             f"{proc.returncode}")
        return proc

    def json(self, *args: str, show: bool = True) -> Any:
        """Run a ``--json`` command and parse its output."""
        proc = self.wardian(*args, "--json", capture=True, show=show)
        return json.loads(proc.stdout)


def _first(document: Any, *keys: str) -> Any:
    """The first of `keys` present in a JSON document (a dict), else None."""
    if isinstance(document, dict):
        for key in keys:
            if document.get(key) is not None:
                return document[key]
    return None


def _runs_of(history: Any) -> list[dict[str, Any]]:
    if isinstance(history, dict):
        for key in ("runs", "history", "items"):
            if isinstance(history.get(key), list):
                return list(history[key])
        return []
    return list(history) if isinstance(history, list) else []


def wait_for_run(demo: Demo, invoker_id: str, deadline_s: float) -> dict[str, Any]:
    """Poll the invoker's history until its run reaches a final state (or the deadline).

    Raises:
        SystemExit: no finished run before the deadline.
    """
    print(f"\n$ wardian automation session-close history {invoker_id} --json   "
          "# polled until the run finishes", flush=True)
    end = time.monotonic() + deadline_s
    delay = 0.2
    while True:
        history = demo.json("automation", "session-close", "history", invoker_id, show=False)
        for entry in _runs_of(history):
            status = _first(entry, "status", "outcome", "run_status")
            if status in TERMINAL:
                return entry
        if time.monotonic() > end:
            raise SystemExit(
                f"demo stopped: no finished run after {deadline_s:.0f} s; inspect it with "
                f"`WARDIAN_HOME={demo.home} wardian automation runs`"
            )
        time.sleep(delay)
        delay = min(delay * 1.5, 2.0)


_SHOW_CONTEXT = (
    "import os, pathlib; p = os.environ.get('WARDIAN_MEMORY_CONTEXT');"
    " print(pathlib.Path(p).read_text() if p else '(no memory context: memory disabled)')"
)


def run(transcript: Path, home: Path) -> int:
    """The demo itself; returns the process exit code."""
    workspace = home / "workspace"
    workspace.mkdir(parents=True, exist_ok=True)
    demo = Demo(home, workspace)
    print(f"Wardian demo — throwaway data directory: {home}")
    print(f"Transcript: {transcript}")

    demo.wardian("settings", "set", "agent_memory.enabled", "true")
    demo.wardian("settings", "set", "conversation_logging.enabled", "true")
    demo.wardian("agent", "add", AGENT, "--provider", "claude", "--workspace", str(workspace))
    demo.wardian("agent", "models", "--provider", "builtin", "--refresh")

    added = demo.wardian(
        "automation", "session-close", "add",
        "--blueprint", "memory-consolidation",
        "--name", "Consolidate the demo agent",
        "--agent", AGENT,
        "--boundary", "clear",
        "--require-archive",
        "--assignments", json.dumps(ASSIGNMENTS, separators=(",", ":")),
        capture=True,
    )
    sys.stdout.write(added.stdout)
    invokers = demo.json("automation", "session-close", "list")
    items = invokers if isinstance(invokers, list) else _first(invokers, "invokers", "items")
    invoker_id = str(_first((items or [{}])[0], "id", "invoker_id"))
    demo.wardian("automation", "session-close", "show", invoker_id)
    demo.wardian("automation", "session-close", "enable", invoker_id)

    demo.wardian(
        "session", "close", "--agent", AGENT, "--boundary", "clear",
        "--session-id", "demo-session-1", "--transcript", str(transcript),
    )
    entry = wait_for_run(demo, invoker_id, RUN_DEADLINE_S)
    run_id = str(_first(entry, "run_id", "id"))
    demo.wardian("automation", "run", "show", run_id)
    demo.wardian("garden", "memory", "list", "--agent", AGENT)

    print("\nThe agent's memory as it sees it at its next start "
          "(the startup context of a managed process):")
    demo.wardian("agent", "exec", AGENT, "--", sys.executable, "-c", _SHOW_CONTEXT)

    status = _first(entry, "status", "outcome", "run_status")
    print(f"\nDone: the run {status}. Look around with "
          f"`WARDIAN_HOME={home} wardian automation runs`; delete {home} when finished.")
    return 0 if status == "succeeded" else 1


def main(argv: list[str] | None = None) -> int:
    """Parse ``--transcript`` and run the demo in a fresh temporary ``WARDIAN_HOME``."""
    parser = argparse.ArgumentParser(
        prog="python -m wardian.demo",
        description="Memory consolidation end to end in a throwaway WARDIAN_HOME.",
    )
    parser.add_argument(
        "--transcript", type=Path, default=None,
        help="a Claude Code, Codex or Gemini CLI session file (default: the shipped example)",
    )
    args = parser.parse_args(argv)
    transcript = (args.transcript or example_transcript()).expanduser().resolve()
    if not transcript.is_file():
        print(f"Error: transcript not found: {transcript}", file=sys.stderr)
        return 2
    home = Path(tempfile.mkdtemp(prefix="wardian-demo-"))
    return run(transcript, home)


if __name__ == "__main__":
    raise SystemExit(main())
