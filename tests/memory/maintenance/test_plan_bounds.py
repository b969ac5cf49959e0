"""Every plan string field is capped and plain (issue 15 point 6), and a plan file must be a
regular file (point 4): each cap at its limit and one past it, exit 2, nothing written."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import invoke
from tests.memory.maintenance.test_maintenance_plan import create, fails, load, plan, retire
from typer.testing import CliRunner

from wardian.memory.models import MAX_ID_CHARS, MAX_PATH_CHARS, MAX_SOURCE_TYPE_CHARS

MID = "0b6f3c59-9d6a-4c8e-9a35-3f5b1e0e7a11"


@pytest.mark.parametrize("field", ["plan_id", "agent_id", "idempotency_key"])
def test_top_level_ids_at_the_cap_and_one_past(field: str) -> None:
    load(plan(**{field: "k" * MAX_ID_CHARS}))
    fails(plan(**{field: "k" * (MAX_ID_CHARS + 1)}), field, "256")


@pytest.mark.parametrize("field", ["memory_id", "expected_revision_id"])
def test_operation_ids_at_the_cap_and_one_past(field: str) -> None:
    load(plan([{**retire(MID), field: "i" * MAX_ID_CHARS}]))
    fails(plan([{**retire(MID), field: "i" * (MAX_ID_CHARS + 1)}]),
          f"operations[0].{field}", "256")


def test_client_key_capped() -> None:
    load(plan([create("c" * MAX_ID_CHARS)]))
    fails(plan([create("c" * (MAX_ID_CHARS + 1))]), "operations[0].client_key", "256")


def test_workspace_path_at_4096_and_one_past() -> None:
    def path(n: int) -> str:
        return "/" + "p" * (n - 1)

    load(plan([create(scope={"kind": "workspace", "path": path(MAX_PATH_CHARS)})]))
    fails(plan([create(scope={"kind": "workspace", "path": path(MAX_PATH_CHARS + 1)})]),
          "operations[0].scope.path", "4096")
    fails(plan([create(scope={"kind": "workspace", "path": path(100_001)})]),
          "operations[0].scope.path")


def test_source_type_at_64_and_one_past() -> None:
    def src(t: str) -> dict[str, Any]:
        return {"source_type": t, "locator": "a.md", "primary": False}

    load(plan([create(sources=[src("t" * MAX_SOURCE_TYPE_CHARS)])]))
    fails(plan([create(sources=[src("t" * (MAX_SOURCE_TYPE_CHARS + 1))])]),
          "operations[0].sources[0].source_type", "64")


@pytest.mark.parametrize("field", ["plan_id", "agent_id", "idempotency_key"])
def test_nul_and_control_characters_refused_in_ids(field: str) -> None:
    for bad in ("p\0", "p\n", "a\x1bb", "p\x85"):
        fails(plan(**{field: bad}), field, "control")


def test_text_allows_newline_and_tab_but_no_other_control_character() -> None:
    load(plan([create(text="line one\n\tline two", evidence_excerpt="a\tb\r\nc")]))
    for field in ("text", "evidence_excerpt"):
        for bad in ("nul\0here", "bell\x07", "esc\x1b[31m"):
            fails(plan([create(**{field: bad})]), f"operations[0].{field}", "control")
    fails(plan([{**retire(MID), "reason": "old\0"}]), "operations[0].reason", "control")
    fails(plan([create(sources=[{"source_type": "file", "locator": "a\0b",
                                 "primary": False}])]),
          "operations[0].sources[0].locator", "control")


def test_at_most_one_primary_source_per_operation() -> None:
    one = [{"source_type": "file", "locator": f"{n}.md", "primary": n == 0} for n in range(2)]
    load(plan([create(sources=one)]))
    two = [{"source_type": "file", "locator": f"{n}.md", "primary": True} for n in range(2)]
    fails(plan([create(sources=two)]), "operations[0].sources", "primary")


# --- the file itself ----------------------------------------------------------------------


@pytest.fixture
def ada(cli: CliRunner) -> None:
    assert invoke(cli, "agent", "add", "ada", "--provider", "claude").exit_code == 0


def preview(path: Path, home: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("WARDIAN_") or k == "WARDIAN_DATABASE_URL"}
    env["WARDIAN_HOME"] = str(home)
    return subprocess.run([sys.executable, "-m", "wardian", "garden", "maintain", "preview",
                           str(path), "--agent", "ada"], capture_output=True, text=True,
                          env=env, timeout=60)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs")
def test_fifo_device_and_directory_plans_are_refused_at_once(
    tmp_path: Path, wardian_home: Path, ada: None
) -> None:
    fifo = tmp_path / "plan.json"
    os.mkfifo(fifo)
    folder = tmp_path / "plans"
    folder.mkdir()
    # No writer ever opens the FIFO: a blocking open would hang (the timeout would fire).
    for path, kind in ((fifo, "FIFO"), (Path("/dev/zero"), "device"), (folder, "directory")):
        result = preview(path, wardian_home)
        assert result.returncode == 2, result.stderr
        assert kind in result.stderr and "not a regular file" in result.stderr, result.stderr
        assert "Traceback" not in result.stderr


def test_a_regular_plan_file_is_read_and_checked(
    tmp_path: Path, wardian_home: Path, ada: None
) -> None:
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(plan(agent_id="x" * 300)))
    result = preview(path, wardian_home)
    assert result.returncode == 2 and "256" in result.stderr, result.stderr
