"""Common ground for the CLI adapters (codex, claude, gemini, opencode).

Processes: the executable is resolved on PATH (missing → ProviderNotInstalled),
the prompt goes in argv when it fits and through stdin otherwise, and the child runs
through `wardian.providers.process.run_process` (own session, timeout, tree kill).
"""

from __future__ import annotations

import os
import tempfile
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import ClassVar

from wardian.providers.base import ProviderAdapter, ProviderRequest
from wardian.providers.errors import ProviderError
from wardian.providers.process import (
    MAX_OUTPUT_BYTES,
    ProcessResult,
    resolve_executable,
    run_process,
)
from wardian.providers.supervisor import HeldRecord

__all__ = ["CliAdapter"]


class CliAdapter(ProviderAdapter):
    """A provider driven through its command-line tool.

    Class attributes:
        executable: the command name looked up on PATH.
        strip_env: environment variables removed from the child's environment because
            they would override the assigned model/effort or enable a fallback.
    """

    executable: ClassVar[str]
    strip_env: ClassVar[tuple[str, ...]] = ()
    runs_process: ClassVar[bool] = True

    def child_env(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        """Our environment minus `strip_env`, plus `extra`."""
        env = {k: v for k, v in os.environ.items() if k not in self.strip_env}
        env.update(extra or {})
        return env

    def transcript_dir(self, env: dict[str, str]) -> Path | None:
        """The folder where the CLI keeps the transcript of a call, held open while it runs
        (Codex's ``$CODEX_HOME/sessions``), or None (default): what the supervisor records
        when the engine dies mid-call (`ProviderRequest.held_record`)."""
        return None

    def resolve(self, env: dict[str, str]) -> str:
        """The executable's full path (raises ProviderNotInstalled)."""
        return resolve_executable(self.executable, self.name, env)

    def execute(
        self,
        argv: list[str],
        request: ProviderRequest,
        *,
        env: dict[str, str],
        stdin_text: str | None = None,
        timeout_s: float | None = None,
        cancel: threading.Event | None = None,
        max_output_bytes: int = MAX_OUTPUT_BYTES,
    ) -> ProcessResult:
        """Run `argv` for `request` (cwd = request.cwd or a scratch dir), started through
        `request.launch_prefix` with `request.launch_env` added to `env` when given.

        Args:
            max_output_bytes: cap, in bytes, on the stdout kept; past it the call fails.

        Raises:
            ProviderError: stdout went past `max_output_bytes` (the final answer, which
                comes last, was cut off), besides what `run_process` raises.
        """
        cwd = request.cwd
        scratch = None
        if cwd is None:
            scratch = tempfile.TemporaryDirectory(prefix="wardian-provider-")
            cwd = scratch.name
        held = None
        if request.held_record and (under := self.transcript_dir(env)) is not None:
            held = HeldRecord(Path(request.held_record), under)
        try:
            result = run_process(
                [*request.launch_prefix, *argv],
                provider=self.name,
                label=os.path.basename(argv[0]),
                stdin_text=stdin_text,
                timeout_s=timeout_s if timeout_s is not None else request.timeout_s,
                cwd=cwd,
                env={**env, **request.launch_env},
                cancel=cancel,
                max_output_bytes=max_output_bytes,
                held=held,
            )
        finally:
            if scratch is not None:
                scratch.cleanup()
        if result.stdout_truncated:
            raise ProviderError(
                f"`{self.executable}` wrote more than {max_output_bytes:,} bytes to stdout; "
                "the output was cut there, so the final answer was lost",
                provider=self.name,
                hint="ask for a shorter answer, or check what the CLI prints (tool output, "
                "verbose logs)",
            )
        return result

    @staticmethod
    def last_lines(text: str, count: int = 5) -> str:
        """The last `count` non-empty lines of `text` (for error details)."""
        lines = [ln for ln in text.splitlines() if ln.strip()]
        return "\n".join(lines[-count:])

    @staticmethod
    def write_temp(directory: Path, name: str, content: str) -> Path:
        """Write `content` to `directory/name` and return the path."""
        from wardian._fs import open_private

        path = directory / name
        with open_private(path, "w", encoding="utf-8") as handle:
            handle.write(content)
        return path

    @staticmethod
    def first(values: Iterable[str | None]) -> str | None:
        """The first truthy value, or None."""
        for value in values:
            if value:
                return value
        return None
