"""Every string- or list-building operation a blueprint template can reach is bounded by
the output cap *before* it builds anything: widths, counts, fill and join strings,
``%``/``str.format`` widths and precisions, concatenation, captured blocks and
container-to-text conversions. Many large strings kept in one render are
bounded by `MAX_RENDER_BUILT`. Ordinary uses keep working."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.conftest import invoke
from tests.engine.helpers import write_blueprint
from typer.testing import CliRunner

from wardian.blueprints.templates import (
    MAX_RENDER_BUILT,
    MAX_RENDER_CHARS,
    TemplateEngine,
    TemplateLimitError,
)

BIG = "{% set s = 'x' * 1000000 %}"

TOO_LARGE = [
    "{{ 'x'|center(10**8) }}",
    "{{ 'a'|indent(10**8) }}",
    "{{ ('a\n' * 1000)|indent('x' * 100000) }}",
    "{{ 'a'.ljust(10**8) }}",
    "{{ 'a'.rjust(10**8) }}",
    "{{ 'a'.center(10**8) }}",
    "{{ 'a'.zfill(10**8) }}",
    "{{ '\t'.expandtabs(10**8) }}",
    "{{ ('ab' * 50000).replace('a', 'x' * 2000) }}",
    "{{ 'ab'.replace('', 'x' * 1000000) }}",
    "{{ '%*s' % (10**8, '') }}",
    "{{ '%100000000s' % '' }}",
    "{{ '%.100000000f' % 1.0 }}",
    "{{ ('%s' * 100) % ((s,) * 100) }}",
    "{{ '{:>100000000}'.format(1) }}",
    "{{ '{:{}}'.format(1, 10**8) }}",
    "{{ '{x:>{w}}'.format_map({'x': 1, 'w': 10**8}) }}",
    "{{ ('{0}' * 100).format(s) }}",
    "{{ '%*s'|format(10**8, '') }}",
    "{{ range(100000)|join('x' * 1000) }}",
    "{{ (['x' * 1000000] * 100)|join }}",
    "{{ 'ab'.join(['x' * 1000000] * 100) }}",
    "{{ ('a ' * 50000)|wordwrap(1, wrapstring='x' * 2000) }}",
    "{{ ('a' * 1000).translate({97: 'x' * 100000}) }}",
    "{{ ['x' * 1000000] * 100 }}",
    "{{ (['x' * 1000000] * 100)|tojson|length }}",
    "{{ (['x' * 1000000] * 100)|string|length }}",
    "{{ (['x' * 1000000] * 100)|upper|length }}",
    "{% set ns = namespace(s='x' * 1000) %}{% for i in range(17) %}"
    "{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s|length }}",
    "{% set ns = namespace(s='x' * 1000) %}{% for i in range(17) %}"
    "{% set ns.s = ns.s + ns.s %}{% endfor %}{{ ns.s|length }}",
    "{{ s ~ s }}",
    "{% macro m() %}{% for i in range(100) %}{{ s }}{% endfor %}{% endmacro %}{{ m()|length }}",
    "{% set x %}{% for i in range(100) %}{{ s }}{% endfor %}{% endset %}{{ x|length }}",
    "{{ [1]|batch(10**7, 0)|list|length }}",
    "{{ ([[0] * 100000] * 100)|sum(start=[])|length }}",
    "{% set l = [0] * 1000 %}{% for i in range(14) %}{{ l.extend(l) or '' }}{% endfor %}"
    "{{ l|length }}",
    "{{ ([0] * 1000000 + [0] * 1000000)|length }}",
    "{{ ('a.com ' * 10000)|urlize(target='x' * 10000)|length }}",
    "{{ lipsum(10**4)|length }}",
]

ORDINARY = [
    ("{{ 'a'|center(5) }}", "  a  "),
    ("{{ 'x'.ljust(5) }}|", "x    |"),
    ("{{ 'x'.rjust(3, '-') }}", "--x"),
    ("{{ '7'.zfill(3) }}", "007"),
    ("{{ 'a\tb'.expandtabs(4) }}", "a   b"),
    ("{{ 'abc'.replace('b', 'xx') }}", "axxc"),
    ("{{ '%s-%s' % (1, 2) }}", "1-2"),
    ("{{ '%5.2f|%-3s|%(a)s' % {'a': 1} if false else '%5.2f|%-3s|' % (3.14159, 'a') }}",
     " 3.14|a  |"),
    ("{{ '%(a)s' % {'a': 1} }}", "1"),
    ("{{ '{:>8}'.format(3) }}", "       3"),
    ("{{ '{:{}}|{x}'.format(1, 3, x='y') }}", "  1|y"),
    ("{{ '{a}'.format_map({'a': 2}) }}", "2"),
    ("{{ '%s=%s'|format('k', 'v') }}", "k=v"),
    ("{{ [1, 2]|join(',') }}", "1,2"),
    ("{{ ['a', 'b']|join }}", "ab"),
    ("{{ '-'.join(['a', 'b']) }}", "a-b"),
    ("{{ 'a\nb'|indent(4) }}", "a\n    b"),
    ("{{ 'a\nb'|indent('> ', first=true) }}", "> a\n> b"),
    ("{{ 'a b c'|wordwrap(1) }}", "a\nb\nc"),
    ("{{ 'abc'.translate({98: 'XY'}) }}", "aXYc"),
    ("{{ 'a' ~ 1 ~ [2] }}", "a1[2]"),
    ("{{ 'a' + 'b' }}{{ [1] + [2] }}{{ 1 + 2 }}", "ab[1, 2]3"),
    ("{{ [1, 'x'] }}", "[1, 'x']"),
    ("{{ {'a': [1]}|tojson }}", '{"a": [1]}'),
    ("{% macro m(x) %}<{{ x }}>{% endmacro %}{{ m(1) }}{{ m(2) }}", "<1><2>"),
    ("{% set x %}ab{% endset %}{{ x }}{{ x|length }}", "ab2"),
    ("{{ [1, 2, 3]|batch(2, 0)|list }}", "[[1, 2], [3, 0]]"),
    ("{{ [[1], [2]]|sum(start=[]) }}", "[1, 2]"),
    ("{% set l = [1] %}{{ l.extend([2]) or l }}", "[1, 2]"),
    ("{{ 'see https://a.com'|urlize(target='_blank')|length > 10 }}", "True"),
    ("{{ lipsum(2)|length > 10 }}", "True"),
    ("{{ 'a'|truncate(10) }}{{ 'hello'|upper }}", "aHELLO"),
    ("{{ ((s,) * 100)|list|length }}{{ ((s,) * 100)|map('string')|map('trim')|list|length }}",
     "100100"),
    ("{{ 'hello'[1:] }}{{ [1, 2, 3][::2] }}{{ 'abc'[:-1] }}", "ello[1, 3]ab"),
]


@pytest.fixture
def engine(tmp_path: Path) -> TemplateEngine:
    return TemplateEngine(tmp_path)


@pytest.mark.parametrize("source", TOO_LARGE)
def test_a_huge_string_or_list_is_refused_before_it_is_built(
    engine: TemplateEngine, source: str
) -> None:
    with pytest.raises(TemplateLimitError, match=r"too large.*1,000,000"):
        engine.render_text(BIG + source, {})


@pytest.mark.parametrize(("source", "expected"), ORDINARY)
def test_ordinary_string_building_still_works(
    engine: TemplateEngine, source: str, expected: str
) -> None:
    assert engine.render_text(BIG + source, {}) == expected


def test_expressions_are_bounded_too(engine: TemplateEngine) -> None:
    with pytest.raises(TemplateLimitError, match=r"too large.*1,000,000"):
        engine.evaluate("'a'.ljust(10**8)", {})
    with pytest.raises(TemplateLimitError, match=r"too large.*1,000,000"):
        engine.evaluate("inputs.s|center(10**8)", {"inputs": {"s": "a"}})


@pytest.mark.parametrize(
    "source",
    ["{{ 'a'.ljust(n) }}", "{{ 'a'|center(n) }}", "{{ '%*s' % (n, 'a') }}",
     "{{ ('{:>' ~ n ~ '}').format('a') }}", "{{ ('a' * (n - 1)) ~ 'b' }}"],
)
def test_widths_at_the_limit_and_one_past(engine: TemplateEngine, source: str) -> None:
    assert len(engine.render_text(source, {"n": MAX_RENDER_CHARS})) == MAX_RENDER_CHARS
    with pytest.raises(TemplateLimitError, match=r"too large.*1,000,000"):
        engine.render_text(source, {"n": MAX_RENDER_CHARS + 1})


RETAINED = [
    "{{ ((s,) * 200)|map('upper')|list|length }}",
    "{% set l = [] %}{% for i in range(200) %}{{ l.append(s[i:]) or '' }}{% endfor %}",
    "{% set l = [] %}{% for i in range(200) %}{{ l.append(s[10:] ~ i) or '' }}{% endfor %}",
    "{% set l = [] %}{% for i in range(200) %}{{ l.append(s.replace('x', 'y')) or '' }}"
    "{% endfor %}",
]


@pytest.mark.parametrize("source", RETAINED)
def test_many_large_strings_kept_in_one_render_are_refused(
    engine: TemplateEngine, source: str
) -> None:
    with pytest.raises(TemplateLimitError, match=f"built over {MAX_RENDER_BUILT:,}"):
        engine.render_text(BIG + source, {})


def test_the_built_budget_is_per_render(engine: TemplateEngine) -> None:
    source = BIG + "{{ (s ~ '')|length }}"
    for _ in range(MAX_RENDER_BUILT // MAX_RENDER_CHARS + 5):
        assert engine.render_text(source, {}) == str(MAX_RENDER_CHARS)


PADDED = """\
blueprint: {id: padded, name: Padded, version: 1}
triggers: [manual]
steps:
  - id: pad
    action: noop
    with: {text: "{{ 'a'.ljust(10**8) }}"}
"""


def test_a_run_fails_the_step_with_the_reason(cli: CliRunner, tmp_path: Path) -> None:
    added = invoke(cli, "agent", "add", "bob", "--provider", "builtin",
                   "--workspace", str(tmp_path))
    assert added.exit_code == 0, added.output
    path = write_blueprint(tmp_path / "bp", PADDED)
    result = invoke(cli, "automation", "run", "start", str(path), "--agent", "bob",
                    "--wait", "--json")
    assert "template result too large: str.ljust would be 100,000,000" in result.output
    assert "Traceback" not in result.output
