"""Blueprint inputs are bounded (issue 15 point 4): file size, YAML alias expansion and
nesting depth, template output size and render time. Each bound: a test at the limit and
one past it; past it a clear problem (kind ``limit``), exit 2, never a hang or traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from tests.conftest import invoke
from typer.testing import CliRunner

from wardian.blueprints.loader import (
    MAX_BLUEPRINT_BYTES,
    MAX_YAML_DEPTH,
    MAX_YAML_NODES,
    check_yaml_bounds,
)
from wardian.blueprints.templates import (
    MAX_RENDER_CHARS,
    TemplateEngine,
    TemplateLimitError,
)
from wardian.blueprints.validate import validate_file

VALID = """\
blueprint: {id: tiny, name: Tiny, version: 1}
steps:
  - id: a
    action: noop
"""

LAUGHS = "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 9)}]\n"
    for i in range(8)
)
"""The classic "billion laughs": ~530 bytes that expand to 9**9 strings."""


def limits(path: Path) -> list[str]:
    return [p.message for p in validate_file(path).problems if p.kind == "limit"]


def test_file_size_at_the_limit_and_one_past(tmp_path: Path) -> None:
    at = tmp_path / "at.yaml"
    padding = MAX_BLUEPRINT_BYTES - len(VALID.encode())
    at.write_bytes(VALID.encode() + b"#" * (padding - 1) + b"\n")
    assert at.stat().st_size == MAX_BLUEPRINT_BYTES
    assert validate_file(at).problems == []
    past = tmp_path / "past.yaml"
    past.write_bytes(at.read_bytes() + b"\n")
    assert limits(past) == ["blueprint file is larger than 1,048,576 bytes (1 MiB)"]


def test_billion_laughs_is_refused_before_anything_is_built(
    tmp_path: Path, cli: CliRunner
) -> None:
    bomb = tmp_path / "laughs.yaml"
    bomb.write_text(LAUGHS)
    assert len(LAUGHS) < 600
    [message] = limits(bomb)
    assert "through aliases" in message and f"{MAX_YAML_NODES:,}" in message
    result = invoke(cli, "blueprint", "validate", str(bomb))
    assert result.exit_code == 2
    assert "limit" in result.stdout + result.stderr or "expands" in result.stdout + result.stderr


def test_blueprint_list_is_not_held_up_by_a_bomb_in_the_library(
    cli: CliRunner, wardian_home: Path
) -> None:
    library = wardian_home / "library"
    library.mkdir()
    (library / "laughs.yaml").write_text(LAUGHS)
    (library / "deep.yaml").write_text("a: " + "[" * 100_000 + "]" * 100_000 + "\n")
    result = invoke(cli, "blueprint", "list", "--json")
    assert result.exit_code in (0, 2), result.output
    assert "Traceback" not in result.output


def test_expanded_node_count_at_the_limit_and_one_past() -> None:
    # A list of N scalars is N + 1 nodes (the list itself), plus the root mapping and key.
    def doc(values: int) -> str:
        return "k: [" + ", ".join(["1"] * values) + "]\n"

    assert check_yaml_bounds(doc(MAX_YAML_NODES - 3), "f.yaml") is None
    past = check_yaml_bounds(doc(MAX_YAML_NODES - 2), "f.yaml")
    assert past is not None and past.kind == "limit"
    # Aliases count as what they name: 2 × half the limit through one alias is refused.
    half = MAX_YAML_NODES // 2
    aliased = "a: &x [" + ", ".join(["1"] * half) + "]\nb: *x\nc: *x\n"
    refused = check_yaml_bounds(aliased, "f.yaml")
    assert refused is not None and "through aliases" in refused.message


@pytest.mark.parametrize("depth", [MAX_YAML_DEPTH, MAX_YAML_DEPTH + 1, 100_000])
def test_nesting_depth_at_the_limit_one_past_and_far_past(
    tmp_path: Path, cli: CliRunner, depth: int
) -> None:
    # The root mapping is one level: `depth - 1` nested lists below it.
    path = tmp_path / "deep.yaml"
    path.write_text("k: " + "[" * (depth - 1) + "]" * (depth - 1) + "\n")
    found = limits(path)
    if depth <= MAX_YAML_DEPTH:
        assert found == []
        return
    assert found == [f"YAML nested more than {MAX_YAML_DEPTH} levels deep"]
    result = invoke(cli, "blueprint", "validate", str(path))
    assert result.exit_code == 2


def test_block_style_nesting_is_bounded_too(tmp_path: Path) -> None:
    lines = [f"{'  ' * i}k{i}:" for i in range(MAX_YAML_DEPTH + 5)]
    path = tmp_path / "block.yaml"
    path.write_text("\n".join(lines) + " end\n")
    assert limits(path) == [f"YAML nested more than {MAX_YAML_DEPTH} levels deep"]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs")
def test_a_fifo_or_directory_blueprint_is_refused_at_once(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.yaml"
    os.mkfifo(fifo)
    [problem] = validate_file(fifo).problems
    assert problem.kind == "io" and "FIFO" in problem.message
    folder = tmp_path / "dir.yaml"
    folder.mkdir()
    [problem] = validate_file(folder).problems
    assert "directory" in problem.message
    cli = subprocess.run([sys.executable, "-m", "wardian", "blueprint", "validate", str(fifo)],
                         capture_output=True, text=True, timeout=60)
    assert cli.returncode == 2 and "FIFO" in cli.stdout + cli.stderr


# --- templates ----------------------------------------------------------------------------


@pytest.fixture
def engine(tmp_path: Path) -> TemplateEngine:
    return TemplateEngine(tmp_path)


def test_output_size_at_the_limit_and_one_past(engine: TemplateEngine) -> None:
    n = MAX_RENDER_CHARS // 1000
    at = engine.render_text("{% for i in range(n) %}{{ s }}{% endfor %}",
                            {"n": n, "s": "x" * 1000})
    assert len(at) == MAX_RENDER_CHARS
    with pytest.raises(TemplateLimitError, match="output is over 1,000,000 characters"):
        engine.render_text("{% for i in range(n) %}{{ s }}{% endfor %}x",
                           {"n": n, "s": "x" * 1000})


def test_multiplication_and_power_at_the_limit_and_past(engine: TemplateEngine) -> None:
    assert len(engine.render_text("{{ 'a' * n }}", {"n": MAX_RENDER_CHARS})) == MAX_RENDER_CHARS
    for source in ("{{ 'a' * (n + 1) }}", "{{ ('a' * 10**9)|length }}", "{{ [0] * (n + 1) }}"):
        with pytest.raises(TemplateLimitError, match="too large"):
            engine.render_text(source, {"n": MAX_RENDER_CHARS})
    assert engine.evaluate("2 ** 1000", {}) == 2 ** 1000
    with pytest.raises(TemplateLimitError, match="too large"):
        engine.evaluate("2 ** (10 ** 9)", {})


def test_nested_loops_are_stopped_by_the_time_budget(engine: TemplateEngine) -> None:
    loops = "{% for i in range(99999) %}{% for j in range(99999) %}{% endfor %}{% endfor %}"
    with pytest.raises(TemplateLimitError, match="took over"):
        engine.render_text(loops, {})
    # The budget is per render: the engine renders normally afterwards.
    assert engine.render_text("{{ 1 + 1 }}", {}) == "2"
    assert sys.gettrace() is None  # the trace function is removed again
