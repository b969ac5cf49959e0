"""One plugin mechanism: a third-party distribution installed for real (a ``.dist-info``
with ``entry_points.txt`` on the path of a real ``python -m wardian`` child) adds an action,
an output schema, a provider, a doctor check and a command group through the
``wardian.plugins`` group; a broken plugin and a clashing name are refused clearly."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import wardian

SRC = Path(wardian.__file__).parent.parent

PLUGIN = '''
from wardian.plugins import lazy


def _hello():
    import typer
    app = typer.Typer(help="Greetings from a plugin.")

    @app.callback()
    def group() -> None:
        """Greetings from a plugin."""

    @app.command()
    def hello() -> None:
        """Say hello."""
        print("hello from the plugin")
    return app


def _adapter():
    from wardian.providers.base import ProviderAdapter

    class Echo(ProviderAdapter):
        name = "plug-echo"

        def run(self, request, *, cancel=None):
            raise NotImplementedError
    return Echo


def _check(ctx):
    from wardian.app.doctor import Finding
    yield Finding.ok("plug-check", "the plugin's check ran")


def register(registry):
    registry.add_action("plug.echo", lambda ctx, text="": {"text": text})
    registry.add_output_schema("plug:note", description="a note",
                               schema={"type": "object", "required": ["note"]})
    registry.add_provider("plug-echo", lazy(_adapter))
    registry.add_doctor_check("plug-check", "Plugin check", _check)
    registry.add_cli_group("plug", "Greetings from a plugin.", lazy(_hello))
'''

BLUEPRINT = """
blueprint: {id: plug-demo, name: Plug demo, version: 1}
roles:
  writer: Writes a note.
triggers: [manual]
steps:
  - id: echo
    action: plug.echo
    with: {text: hi}
  - id: note
    role: writer
    prompt: "Write a note about {{ steps.echo.output.text }}."
    output:
      $ref: plug:note
"""


def _install(site: Path, dist: str, module: str, source: str) -> None:
    (site / f"{module}.py").write_text(source, encoding="utf-8")
    info = site / f"{dist}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[wardian.plugins]\n{dist} = {module}:register\n")


def _wardian(site: Path, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("WARDIAN_")}
    env.update(PYTHONPATH=os.pathsep.join([str(SRC), str(site)]), WARDIAN_HOME=str(home),
               COLUMNS="100")
    return subprocess.run([sys.executable, "-m", "wardian", *args], capture_output=True,
                          text=True, env=env, timeout=120, check=False)


@pytest.fixture
def site(tmp_path: Path) -> Path:
    path = tmp_path / "site"
    path.mkdir()
    return path


def test_a_third_party_plugin_adds_every_kind(site: Path, tmp_path: Path) -> None:
    _install(site, "plugdemo", "plugdemo", PLUGIN)
    home = tmp_path / "home"
    root = _wardian(site, home, "--help")
    assert root.returncode == 0, root.stderr
    assert "plug" in root.stdout and "Greetings from a plugin." in root.stdout
    hello = _wardian(site, home, "plug", "hello")
    assert (hello.returncode, hello.stdout) == (0, "hello from the plugin\n"), hello.stderr
    doctor = _wardian(site, home, "doctor", "--check", "plug-check")
    assert doctor.returncode == 0, doctor.stdout + doctor.stderr
    assert "Plugin check" in doctor.stdout and "the plugin's check ran" in doctor.stdout
    blueprint = tmp_path / "plug.yaml"
    blueprint.write_text(BLUEPRINT, encoding="utf-8")
    valid = _wardian(site, home, "blueprint", "validate", str(blueprint))
    assert valid.returncode == 0, valid.stdout + valid.stderr
    agent = _wardian(site, home, "agent", "add", "bob", "--provider", "plug-echo")
    assert agent.returncode == 0, agent.stdout + agent.stderr
    assert "Agent bob added" in agent.stdout


def test_a_plugin_that_fails_to_import_is_named_not_a_traceback(site: Path,
                                                               tmp_path: Path) -> None:
    _install(site, "brokendemo", "brokendemo", "import no_such_module_here\n")
    home = tmp_path / "home"
    root = _wardian(site, home, "--help")
    assert root.returncode == 0, root.stderr
    assert "Traceback" not in root.stderr
    assert "brokendemo = brokendemo:register" in root.stderr
    assert "no_such_module_here" in root.stderr
    doctor = _wardian(site, home, "doctor", "--check", "plugins")
    assert doctor.returncode == 1, doctor.stdout + doctor.stderr
    assert "brokendemo = brokendemo:register" in doctor.stdout
    assert "Traceback" not in doctor.stdout + doctor.stderr


def test_a_name_clash_with_a_builtin_is_refused_naming_both(site: Path,
                                                            tmp_path: Path) -> None:
    _install(site, "clashdemo", "clashdemo", textwrap.dedent("""
        def register(registry):
            registry.add_action("noop", lambda ctx: None)
            registry.add_cli_group("memory", "Not Wardian's memory.", lambda: None)
    """))
    home = tmp_path / "home"
    root = _wardian(site, home, "--help")
    assert root.returncode == 0, root.stderr
    assert "Not Wardian's memory." not in root.stdout
    for kind, name in (("action", "noop"), ("command group", "memory")):
        assert (f"{kind} {name!r} of clashdemo (clashdemo = clashdemo:register) is refused: "
                "wardian (built-in) registers it") in root.stderr, root.stderr
    doctor = _wardian(site, home, "doctor", "--check", "plugins")
    assert doctor.returncode == 1 and "clashdemo" in doctor.stdout
