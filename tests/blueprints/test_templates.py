"""Sandboxed templates: strict undefined, native whole-value expressions, folder jail."""

from __future__ import annotations

from pathlib import Path

import jinja2
import pytest

from wardian.blueprints.templates import TemplateEngine, is_whole_expression

CTX = {"inputs": {"n": 3}, "steps": {"load": {"output": {"items": [1, 2], "text": "hi"}}},
       "invocation": {"trigger": "manual"}, "roles": {"curator": "c"}}


def test_whole_expression_is_native_and_other_strings_are_text(tmp_path: Path) -> None:
    engine = TemplateEngine(tmp_path)
    assert engine.render_value("{{ steps.load.output.items }}", CTX) == [1, 2]
    assert engine.render_value(" {{ inputs.n + 1 }} ", CTX) == 4
    assert engine.render_value("n={{ inputs.n }}", CTX) == "n=3"
    assert engine.render_value({"a": ["{{ inputs.n }}", 5]}, CTX) == {"a": [3, 5]}
    assert is_whole_expression("{{ a }} and {{ b }}") is None


def test_mapping_keys_win_over_methods(tmp_path: Path) -> None:
    engine = TemplateEngine(tmp_path)
    assert engine.evaluate("steps.load.output.items | length", CTX) == 2


def test_undefined_is_an_error(tmp_path: Path) -> None:
    engine = TemplateEngine(tmp_path)
    with pytest.raises(jinja2.UndefinedError):
        engine.render_text("{{ inputs.missing }}", CTX)
    with pytest.raises(jinja2.UndefinedError):
        engine.evaluate("inputs.missing", CTX)


def test_sandbox_blocks_attribute_escapes(tmp_path: Path) -> None:
    engine = TemplateEngine(tmp_path)
    with pytest.raises(jinja2.exceptions.SecurityError):
        engine.render_text("{{ inputs.__class__.__mro__ }}", CTX)


def test_templates_cannot_read_outside_the_folder(tmp_path: Path) -> None:
    folder = tmp_path / "bp"
    folder.mkdir()
    (tmp_path / "secret.txt").write_text("TOP SECRET")
    (folder / "part.j2").write_text("part {{ inputs.n }}")
    (folder / "link.j2").symlink_to(tmp_path / "secret.txt")
    engine = TemplateEngine(folder)
    assert engine.render_text('{% include "part.j2" %}', CTX) == "part 3"
    for name in ("../secret.txt", str(tmp_path / "secret.txt"), "link.j2"):
        with pytest.raises(jinja2.TemplateNotFound):
            engine.render_text('{% include "' + name + '" %}', CTX)
