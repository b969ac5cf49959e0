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
Spec "Optional consolidation".
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
WIDTH = 100
"""The demo's output fits a terminal this wide (no line is longer, no JSON is cut)."""
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
        self.env["COLUMNS"] = str(WIDTH)  # tables fit the demo's terminal width

    def wardian(self, *args: str, capture: bool = False, show: bool = True,
                check: bool = True) -> subprocess.CompletedProcess[str]:
        """Run ``wardian ARGS`` (as ``python -m wardian``), echoing the command first.

        Args:
            capture: capture stdout (returned) instead of letting it through.
            show: echo the command.
            check: exit the demo when the command fails.
        """
        if show:
            print("\n" + echo_command(args), flush=True)
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


def wait_for_run(demo: Demo, invoker_id: str, deadline_s: float) -> dict[str, Any]:
    """Poll the invoker's history until its run reaches a final state (or the deadline).

    Raises:
        SystemExit: no finished run before the deadline.
    """
    print(f"\n(waiting for the run; `wardian automation session-close history "
          f"{invoker_id[:8]}` shows it)", flush=True)
    end = time.monotonic() + deadline_s
    delay = 0.2
    while True:
        history = demo.json("automation", "session-close", "history", invoker_id, show=False)
        for entry in history["runs"]:
            if entry["status"] in TERMINAL:
                return dict(entry)
        if time.monotonic() > end:
            raise SystemExit(
                f"demo stopped: no finished run after {deadline_s:.0f} s; inspect it with "
                f"`WARDIAN_HOME={demo.home} wardian automation runs`"
            )
        time.sleep(delay)
        delay = min(delay * 1.5, 2.0)


def echo_command(args: tuple[str, ...] | list[str]) -> str:
    """``$ wardian ARGS`` as a user would type it, continued with `` \\`` lines so no line
    is wider than `WIDTH`."""
    words = ["$", "wardian", *(shlex.quote(a) for a in args)]
    lines: list[str] = []
    line = ""
    for word in words:
        candidate = f"{line} {word}" if line else word
        if line and len(candidate) > WIDTH - 2:
            lines.append(line + " \\")
            line = "    " + word
        else:
            line = candidate
    lines.append(line)
    return "\n".join(lines)


def _wrap(text: str, indent: str, hang: int = 2) -> list[str]:
    import textwrap

    return textwrap.wrap(" ".join(text.split()), width=WIDTH, initial_indent=indent,
                         subsequent_indent=" " * (len(indent) + hang),
                         break_on_hyphens=False) or [indent.rstrip()]


def summary_lines(run: dict[str, Any]) -> list[str]:
    """What the consolidation read, saved, updated, removed and dropped (and why), from
    ``automation run show --json``, in lines of at most `WIDTH` characters."""
    outputs = {a["step_id"]: a for a in run.get("attempts", [])}
    archive = (outputs.get("archive") or {}).get("output") or {}
    curate = outputs.get("curate") or {}
    commit = (outputs.get("commit") or {}).get("output") or {}
    lines = [f"Run {run['id'][:8]} {run['status']}" + (f": {run['error']}" if run.get("error")
                                                        else "")]
    if archive:
        lines += _wrap(f"read: {archive.get('count')} messages of the archive (seq "
                       f"{archive.get('first_seq')}..{archive.get('last_seq')}; "
                       f"{archive.get('skipped_tool_messages')} tool outputs left out)", "  ")
    proposed = ((curate.get("output") or {}).get("operations") or []) if curate else []
    if curate:
        who = "/".join(str(x) for x in (run.get("assignments", {}).get("curator", {})
                                        .get("provider"), run.get("assignments", {})
                                        .get("curator", {}).get("model")) if x)
        lines += _wrap(f"curator ({who or 'assigned provider'}): proposed "
                       f"{len(proposed)} operation(s)", "  ")
    if commit:
        lines += _wrap(f"result: {commit.get('summary')}", "  ")
        for item in commit.get("applied", []):
            op = proposed[item["index"]] if item.get("index", -1) < len(proposed) else {}
            where = " · ".join(str(x) for x in (op.get("kind"), op.get("scope")) if x)
            verb = {"save": "saved", "update": "updated", "remove": "removed"}.get(
                item.get("op"), item.get("op"))
            lines += _wrap(f"{verb} [{str(item.get('memory_id', ''))[:8]}] "
                           f"{where + ': ' if where else ''}{item.get('text') or ''}", "    ")
        for dropped in commit.get("dropped", []):
            lines += _wrap(f"dropped operation {dropped['index']} ({dropped['op']}): "
                           f"{dropped['reason']}", "    ")
        if commit.get("replayed"):
            lines += _wrap("skipped: this batch was already committed (idempotent replay)",
                           "    ")
    return lines


def show_context() -> int:
    """Print the startup context file of this managed process (``--show-context``)."""
    path = os.environ.get("WARDIAN_MEMORY_CONTEXT")
    if not path:
        print("(no memory context: agent memory was disabled at launch)")
        return 0
    # The context as the agent receives it; lines wider than the demo's terminal are
    # wrapped for display only (a recalled record continues under its text).
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        if len(line) <= WIDTH:
            print(line)
            continue
        hang = 4 if line.startswith("- [") else 2
        print("\n".join(_wrap(line, "", hang)).replace("\n", "\n" + " " * 0))
    return 0


PROVIDER_OF_FORMAT = {"claude-code": "claude", "codex": "codex", "gemini": "gemini",
                      "generic": "generic"}
"""The session's provider for each transcript format (it picks the archive's parser)."""


def session_provider(transcript: Path) -> str:
    """The provider whose transcript format `transcript` is in (auto-detected).

    Raises:
        SystemExit: the file is not a transcript Wardian can read.
    """
    from wardian.errors import WardianError
    from wardian.transcripts import detect_format

    try:
        return PROVIDER_OF_FORMAT.get(detect_format(transcript), "generic")
    except WardianError as exc:
        raise SystemExit(f"Error: {exc.render()}") from None


def run(transcript: Path, home: Path) -> int:
    """The demo itself; returns the process exit code."""
    workspace = home / "workspace"
    workspace.mkdir(parents=True, exist_ok=True)
    demo = Demo(home, workspace)
    provider = session_provider(transcript)
    print(f"Wardian demo — throwaway data directory:\n  {home}")
    print(f"Transcript ({provider} format):\n  {transcript}")

    demo.wardian("settings", "set", "agent_memory.enabled", "true")
    demo.wardian("settings", "set", "conversation_logging.enabled", "true")
    demo.wardian("agent", "add", AGENT, "--provider", provider, "--workspace", str(workspace))
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
    invoker_id = added.stdout.split()[0]
    demo.wardian("automation", "session-close", "show", invoker_id[:8])
    demo.wardian("automation", "session-close", "enable", invoker_id[:8])

    demo.wardian(
        "session", "close", "--agent", AGENT, "--boundary", "clear",
        "--session-id", "demo-session-1", "--transcript", str(transcript),
        "--provider", provider,
    )
    entry = wait_for_run(demo, invoker_id, RUN_DEADLINE_S)
    run_id = str(entry["run_id"])
    status = str(entry["status"])
    print()
    print("\n".join(summary_lines(demo.json("automation", "run", "show", run_id, show=False))))
    print(f"  full run: `wardian automation run show {run_id[:8]}`")

    print("\nThe agent's memory as it sees it at its next start "
          "(the startup context a managed process receives):")
    demo.wardian("agent", "exec", AGENT, "--", sys.executable, "-m", "wardian.demo",
                 "--show-context")

    print()
    # The command stands alone on one line, never wrapped: pasted over two lines, the first
    # would only set a shell variable and the second would read the default data directory.
    print(f"Done: the run {status}. Look around with:")
    print(f"  WARDIAN_HOME={home} {_wardian_command()} automation runs")
    print("\n".join(_wrap(f"Delete {home} when finished.", "")))
    return 0 if status == "succeeded" else 1


def _wardian_command() -> str:
    """How the user can type `wardian` from their shell: plain when it is on PATH and is this
    installation, else the absolute path of this installation's console script."""
    import shutil
    import sysconfig

    script = os.path.join(sysconfig.get_path("scripts"), "wardian")
    found = shutil.which("wardian")
    if found and os.path.realpath(found) == os.path.realpath(script):
        return "wardian"
    return script if os.path.exists(script) else f"{sys.executable} -m wardian"


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
    parser.add_argument("--show-context", action="store_true",
                        help="(used inside the demo's managed process) print its startup "
                        "context")
    args = parser.parse_args(argv)
    if args.show_context:
        return show_context()
    transcript = (args.transcript or example_transcript()).expanduser().resolve()
    if not transcript.is_file():
        print(f"Error: transcript not found: {transcript}", file=sys.stderr)
        return 2
    home = Path(tempfile.mkdtemp(prefix="wardian-demo-"))
    return run(transcript, home)


if __name__ == "__main__":
    raise SystemExit(main())
