"""The one launcher (`wardian.runtime.launcher`): every small program Wardian starts in a
fresh interpreter, one argparse parser, bad argument lines refused with exit 2, the
provider shim's earlier ``python -m`` command line still accepted. Real processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from wardian._process import launcher_argv

FAKE_CLI = """#!{python}
import json, os, sys
from pathlib import Path
Path(os.environ["FAKE_OUT"]).write_text(json.dumps({{"argv": sys.argv[1:], "pid": os.getpid()}}))
"""


def run(argv: list[str], env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, env=env, stdin=subprocess.DEVNULL, capture_output=True,
                          text=True, timeout=120)


@pytest.mark.parametrize(("args", "says"), [
    (["--", "/bin/true"], "the following arguments are required: PROGRAM"),
    (["nope", "--", "/bin/true"], "invalid choice: 'nope'"),
    (["supervise", "--", "/bin/true"], "the following arguments are required: --parent"),
    (["supervise", "--parent", "x", "--", "/bin/true"], "argument --parent: invalid int"),
    (["supervise", "--parent", "1"], "supervise: expected -- CMD [ARGS]..."),
    (["supervise", "--parent", "1", "--held-record", "f", "--", "/bin/true"],
     "--held-record and --held-under go together"),
    (["hold", "--parent", "1", "--"], "hold: expected -- CMD [ARGS]..."),
    (["hold", "--parent", "1", "--bogus", "--", "/bin/true"], "unrecognized arguments: --bogus"),
    (["provider", "--", "x"], "the following arguments are required: PROVIDER"),
])
def test_a_bad_argument_line_exits_2_with_the_usage(args: list[str], says: str) -> None:
    done = run(launcher_argv(args[0], *args[1:]))
    assert done.returncode == 2, done
    assert says in done.stderr and "usage: wardian launcher" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


def test_the_command_after_the_separator_is_passed_on_untouched(tmp_path: Path) -> None:
    if not sys.platform.startswith("linux"):
        pytest.skip("the supervisor runs on Linux")
    out = tmp_path / "argv.json"
    probe = [sys.executable, "-c", "import json, sys; open(sys.argv[1], 'w').write("
             "json.dumps(sys.argv[2:]))", str(out), "--parent", "--", "-h", "--held-under"]
    done = run(launcher_argv("supervise", "--parent", str(os.getpid()), "--", *probe))
    assert done.returncode == 0, done.stderr
    assert json.loads(out.read_text()) == ["--parent", "--", "-h", "--held-under"]


def test_supervise_passes_the_exit_code_on(tmp_path: Path) -> None:
    if not sys.platform.startswith("linux"):
        pytest.skip("the supervisor runs on Linux")
    done = run(launcher_argv("supervise", "--parent", str(os.getpid()), "--", sys.executable,
                             "-c", "raise SystemExit(7)"))
    assert done.returncode == 7, done.stderr


def test_a_launcher_error_is_one_error_line_with_its_exit_code(tmp_path: Path) -> None:
    env = {**os.environ, "PATH": str(tmp_path)}
    done = run(launcher_argv("provider", "claude", "--"), env=env)
    assert done.returncode == 1, done
    assert done.stderr.startswith("Error: claude: the `claude` command was not found"), done
    assert "Traceback" not in done.stderr
    done = run(launcher_argv("provider", "nope", "--"), env=env)
    assert done.returncode == 2, done
    assert "cannot start provider 'nope' interactively" in done.stderr


@pytest.mark.parametrize("form", ["launcher", "python -m provider_launch"])
def test_the_provider_shim_becomes_the_cli_in_both_forms(tmp_path: Path, form: str) -> None:
    # `python -m wardian.runtime.provider_launch ...` is the shim's command line before the
    # launcher; a runtime started by an older Wardian may still run it.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    exe = bin_dir / "codex"
    exe.write_text(FAKE_CLI.format(python=sys.executable), encoding="utf-8")
    exe.chmod(0o755)
    out = tmp_path / "out.json"
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
           "FAKE_OUT": str(out)}
    env.pop("WARDIAN_MEMORY_CONTEXT", None)
    args = ["codex", "--model", "gpt-9", "--effort", "high", "--", "--search", "--"]
    argv = (launcher_argv("provider", *args) if form == "launcher"
            else [sys.executable, "-m", "wardian.runtime.provider_launch", *args])
    proc = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL)
    assert proc.wait(timeout=120) == 0
    seen = json.loads(out.read_text())
    assert seen["argv"] == ["-m", "gpt-9", "-c", 'model_reasoning_effort="high"', "--search",
                            "--"]
    assert seen["pid"] == proc.pid  # exec: the CLI is the shim's process
