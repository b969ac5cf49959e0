"""Shipped and user libraries: shadowing with a note, broken files listed, init never
overwrites edits."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.conftest import invoke
from typer.testing import CliRunner

from wardian.blueprints.errors import BlueprintInvalid
from wardian.blueprints.library import (
    MANIFEST_NAME,
    find_blueprint,
    init_library,
    list_library,
    shipped_library_dir,
)
from wardian.engine.actions import known_actions
from wardian.errors import NotFoundError

HELLO = """\
blueprint: {{id: hello, name: {name}, version: 1}}
steps:
  - id: greet
    action: noop
    with: {{text: "hello"}}
"""


@pytest.fixture
def shipped(tmp_path: Path) -> Path:
    folder = tmp_path / "shipped"
    (folder / "hello").mkdir(parents=True)
    (folder / "hello" / "blueprint.yaml").write_text(HELLO.format(name="Shipped hello"))
    (folder / "hello" / "prompt.md.j2").write_text("Hi\n")
    (folder / "__init__.py").write_text("")
    return folder


def test_user_copy_shadows_shipped_with_a_note(shipped: Path, tmp_path: Path) -> None:
    user = tmp_path / "user"
    (user / "hello").mkdir(parents=True)
    (user / "hello" / "blueprint.yaml").write_text(HELLO.format(name="My hello"))
    entries = list_library(shipped_dir=shipped, user_dir=user)
    assert [(e.id, e.source, e.active) for e in entries] == [
        ("hello", "user", True), ("hello", "shipped", False)]
    assert entries[0].note == "shadows the shipped copy"
    assert entries[1].note is not None and entries[1].note.startswith("shadowed by the user copy")
    found = find_blueprint("hello", shipped_dir=shipped, user_dir=user)
    assert found.blueprint.blueprint.name == "My hello"


def test_broken_files_are_listed_not_dropped(shipped: Path, tmp_path: Path) -> None:
    user = tmp_path / "user"
    user.mkdir()
    (user / "broken.yaml").write_text("blueprint: {id: broken, name: B, version: 1}\nsteps: []\n")
    entries = list_library(shipped_dir=shipped, user_dir=user)
    broken = [e for e in entries if e.id == "broken"]
    assert len(broken) == 1 and not broken[0].ok
    assert broken[0].error is not None and ":2:8: steps: too few items" in broken[0].error
    with pytest.raises(BlueprintInvalid):
        find_blueprint("broken", shipped_dir=shipped, user_dir=user)
    with pytest.raises(NotFoundError, match="did you mean 'hello'"):
        find_blueprint("helo", shipped_dir=shipped, user_dir=user)


def test_init_copies_then_keeps_edits_and_refreshes_unedited(shipped: Path, tmp_path: Path
                                                             ) -> None:
    user = tmp_path / "user"
    assert init_library(shipped_dir=shipped, user_dir=user) == [
        ("hello/blueprint.yaml", "copied"), ("hello/prompt.md.j2", "copied")]
    assert json.loads((user / MANIFEST_NAME).read_text())["files"].keys() == {
        "hello/blueprint.yaml", "hello/prompt.md.j2"}
    assert init_library(shipped_dir=shipped, user_dir=user) == [
        ("hello/blueprint.yaml", "unchanged"), ("hello/prompt.md.j2", "unchanged")]
    (user / "hello" / "prompt.md.j2").write_text("My own prompt\n")  # the user edits one
    (shipped / "hello" / "blueprint.yaml").write_text(HELLO.format(name="Shipped v2"))
    (shipped / "hello" / "prompt.md.j2").write_text("Shipped v2 prompt\n")
    assert init_library(shipped_dir=shipped, user_dir=user) == [
        ("hello/blueprint.yaml", "updated"), ("hello/prompt.md.j2", "kept (edited)")]
    assert (user / "hello" / "prompt.md.j2").read_text() == "My own prompt\n"
    assert "Shipped v2" in (user / "hello" / "blueprint.yaml").read_text()
    # still edited on the next init: the manifest remembers what was last copied
    assert init_library(shipped_dir=shipped, user_dir=user)[1] == (
        "hello/prompt.md.j2", "kept (edited)")


def test_shipped_library_is_package_data() -> None:
    assert shipped_library_dir().name == "library"
    assert (shipped_library_dir() / "__init__.py").is_file()


def test_cli_library_and_blueprint_list_show_broken_user_files(cli: CliRunner, wardian_home: Path
                                                               ) -> None:
    user = wardian_home / "library"
    user.mkdir()
    (user / "mine.yaml").write_text(HELLO.format(name="Mine").replace("hello", "mine", 1))
    (user / "broken.yaml").write_text("blueprint: {id: broken, name: B, version: 1}\n")
    result = invoke(cli, "library", "list", "--json")
    assert result.exit_code == 0, result.output
    doc = {(e["id"], e["source"]): e for e in json.loads(result.stdout)}
    assert doc[("mine", "user")]["ok"] is True
    assert doc[("broken", "user")]["ok"] is False
    assert doc[("broken", "user")]["problems"][0].endswith(
        "broken.yaml:1:1: steps: missing required key 'steps'; expected a value for 'steps', "
        "found none")
    listed = invoke(cli, "blueprint", "list", "--json")
    assert {e["id"] for e in json.loads(listed.stdout)} >= {"mine", "broken"}
    table = invoke(cli, "blueprint", "list")
    assert "BROKEN" in table.stdout
    shown = invoke(cli, "blueprint", "show", "mine", "--json")
    assert shown.exit_code == 0, shown.output
    doc = json.loads(shown.stdout)
    assert doc["path"] == str(user / "mine.yaml")
    assert doc["blueprint"]["triggers"] == ["manual"]  # defaults resolved
    human = invoke(cli, "blueprint", "show", "mine")
    assert human.stdout.startswith(f"# source: {user / 'mine.yaml'}")
    missing = invoke(cli, "blueprint", "show", "nope")
    assert missing.exit_code == 1
    assert invoke(cli, "blueprint", "show", "broken").exit_code == 2


def test_cli_library_init(cli: CliRunner, wardian_home: Path) -> None:
    result = invoke(cli, "library", "init")
    assert result.exit_code == 0, result.output
    assert f"user library: {wardian_home / 'library'}" in result.stdout
    assert (wardian_home / "library" / MANIFEST_NAME).is_file()


@pytest.mark.parametrize(("text", "claimed"), [
    ("blueprint: {id: flow, name: F, version: 1}\nsteps: []\n", "flow"),
    ("# c\nsteps:\n  - {id: a, action: noop}\nblueprint:\n  name: B\n  id: 'later'\n", "later"),
    ("meta: &m {id: anchored, name: A, version: 1}\nblueprint: *m\n", "anchored"),
    ("blueprint: {id: early}\nsteps: [unclosed\n", "early"),
    ("blueprint: [not, a, mapping]\n", "folder"),
    ("steps: {\n", "folder"),
    ("- a list\n", "folder"),
    ("", "folder"),
])
def test_claimed_id_reads_only_blueprint_id(tmp_path: Path, text: str, claimed: str) -> None:
    from wardian.blueprints.library import _claimed_id

    (tmp_path / "folder").mkdir()
    path = tmp_path / "folder" / "blueprint.yaml"
    path.write_text(text)
    assert _claimed_id(path, tmp_path) == claimed


def test_find_by_id_validates_only_the_file_that_claims_it(
        shipped: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from wardian.blueprints import library

    user = tmp_path / "user"
    for name in ("a", "b", "c"):
        (user / name).mkdir(parents=True)
        (user / name / "blueprint.yaml").write_text(
            HELLO.format(name=name).replace("id: hello", f"id: {name}"))
    loaded_paths: list[Path] = []
    real = library.load_blueprint  # type: ignore[attr-defined]

    def spy(path: Path, **kwargs: object) -> object:
        loaded_paths.append(Path(path))
        return real(path, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(library, "load_blueprint", spy)
    monkeypatch.setattr(library, "validate_file", None)  # a full scan would fail loudly
    assert find_blueprint("b", shipped_dir=shipped, user_dir=user).id == "b"
    assert find_blueprint("hello", shipped_dir=shipped, user_dir=user).id == "hello"
    assert loaded_paths == [user / "b" / "blueprint.yaml", shipped / "hello" / "blueprint.yaml"]


def test_a_broken_user_copy_shadows_the_shipped_one(shipped: Path, tmp_path: Path) -> None:
    user = tmp_path / "user"
    (user / "mine").mkdir(parents=True)
    (user / "mine" / "blueprint.yaml").write_text(
        HELLO.format(name="Mine").replace("action: noop", "action: nope"))
    entries = list_library(shipped_dir=shipped, user_dir=user, known_actions=known_actions())
    assert [(e.id, e.source, e.ok, e.active) for e in entries] == [
        ("hello", "user", False, True), ("hello", "shipped", True, False)]
    assert entries[1].note is not None and entries[1].note.endswith(
        "(broken: fix it or remove it)")
    with pytest.raises(BlueprintInvalid, match="unknown action 'nope'"):
        find_blueprint("hello", shipped_dir=shipped, user_dir=user,
                       known_actions=known_actions())


def test_init_into_an_unwritable_place_is_a_clear_error(shipped: Path, tmp_path: Path) -> None:
    from wardian.errors import StoreError

    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the library should be")
    with pytest.raises(StoreError, match=r"cannot write the user library at .*not-a-folder"):
        init_library(shipped_dir=shipped, user_dir=blocker)
