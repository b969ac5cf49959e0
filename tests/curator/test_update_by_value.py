"""Updates by value: a statement about the subject of an active record with another value.

A new statement about the same subject with a different value (tool, number, branch, style)
is an ``update`` of the active record (the store keeps the old text as a revision); two
rules that share a frame but not a subject stay two records; a checkpoint never overwrites
a stable record. Every sentence is invented for these tests.
"""

from __future__ import annotations

from typing import Any

import pytest

from wardian.curator import curate

ACTIVE_ID = "m-active"


def _curate(said: str, record: str, kind: str = "stable") -> list[dict[str, Any]]:
    payload = {
        "messages": [{"seq": 1, "role": "user", "kind": "text", "text": said, "meta": {}}],
        "records": [
            {"id": ACTIVE_ID, "text": record, "kind": kind, "scope": {"kind": "workspace"}}
        ],
        "max_changes": 10,
    }
    return list(curate(payload)["operations"])


# (active record, what the user says later): the later statement replaces the active one
UPDATES = [
    # package manager
    ("Use npm for installs.", "From now on use pnpm for installs."),
    ("Use npm for installs.", "Use yarn for installs."),
    ("Install packages with npm.", "We install packages with pnpm now."),
    ("Use pip to install dependencies.", "Always use uv to install dependencies."),
    ("Use poetry for dependency management.", "Use uv for dependency management."),
    ("Use yarn for installs.", "Use bun for installs from now on."),
    # numbers with the same unit
    ("Indent with 4 spaces.", "Indent with 2 spaces."),
    ("Use 4 spaces for indentation.", "Use 2 spaces for indentation."),
    ("Keep lines under 100 characters.", "Keep lines under 88 characters."),
    ("Retry failed uploads 3 times.", "Retry failed uploads 5 times."),
    ("Indent YAML with two spaces.", "Indent YAML with four spaces."),
    # branches
    ("Open pull requests against develop.", "Open pull requests against main."),
    ("Feature branches are cut from develop.", "Feature branches are cut from trunk."),
    ("Deploy from the release branch.", "Deploy from the main branch."),
    # styles
    ("Use single quotes in Python.", "Use double quotes in Python."),
    ("API keys are snake_case.", "API keys are camelCase."),
    ("Indent with tabs.", "Indent with spaces."),
    ("Use tabs, not spaces.", "Use spaces, not tabs."),
    ("Name test files in kebab-case.", "Name test files in snake_case."),
    # negation: the same subject said the other way round
    ("Commit to main directly.", "Do not commit to main directly."),
    ("Commit to main directly.", "Don't commit to main directly."),
    ("Do not commit to main directly.", "Commit to main directly, it is fine now."),
    ("Use npm for installs.", "Never use npm for installs, use pnpm."),
    ("Mock the database in tests.", "Do not mock the database in tests."),
    ("Always rebase feature branches.", "Never rebase feature branches."),
    ("Never squash merge pull requests.", "Squash merge pull requests."),
    ("Squash merge pull requests.", "Do not squash merge pull requests."),
    ("Don't use tabs in YAML.", "Use tabs in YAML."),
    ("Log in JSON format.", "Do not log in JSON format."),
    ("Never use pip here.", "Use pip here, the uv mirror is gone."),
    # word order
    ("For installs use npm.", "Use pnpm for installs."),
    ("Tests run with pytest.", "Run the tests with unittest."),
    ("For the docs, use mkdocs.", "Use sphinx for the docs."),
    ("In CI, run the tests on Python 3.11.", "Run the tests on Python 3.12 in CI."),
    ("Use 2 spaces for indentation.", "For indentation use 4 spaces."),
    ("Releases are tagged on the main branch.", "Tag releases on the release branch."),
    # more values: numbers with a unit, test runners
    ("Keep functions under 50 lines.", "Keep functions under 80 lines."),
    ("Time out requests after 30 seconds.", "Time out requests after 10 seconds."),
    ("Use Jest for the frontend tests.", "Use Vitest for the frontend tests."),
]

# (active record, what the user says later): a second, separate rule
SEPARATE = [
    (
        "Always run the linter with ruff before committing.",
        "We always run cargo fmt before committing.",
    ),
    ("Run ruff before committing.", "Run cargo fmt before committing."),
    ("Run the tests before pushing.", "Run the type checker before pushing."),
    ("Use pnpm for installs.", "Use ruff for linting."),
    ("Indent Python with 4 spaces.", "Keep lines under 100 characters."),
    ("Open pull requests against develop.", "Tag releases on main."),
    ("Never push to main.", "Never force-push to release branches."),
    ("Use single quotes in Python.", "Use double quotes in JSON fixtures."),
    ("Retry failed uploads 3 times.", "Time out uploads after 30 seconds."),
    ("Do not commit to main.", "Do not commit generated files."),
    ("Don't mock the database in tests.", "Don't call the network in tests."),
    ("Use pytest for the tests.", "Use mypy for type checks."),
    ("Store sessions in Postgres.", "Store uploads in the object store."),
    ("Never push to main.", "Never push tags from a laptop."),
    ("Do not log secrets.", "Do not log request bodies."),
    ("Do not commit to main.", "Do not push to main."),
    ("Keep functions under 50 lines.", "Keep files under 500 lines."),
    ("Run the tests on Python 3.12 in CI.", "Run the docs build on Python 3.11 in CI."),
    ("Use Jest for the frontend tests.", "Use pytest for the backend tests."),
    ("Indent Python with 4 spaces.", "Indent YAML with 2 spaces."),
    ("Never rebase shared branches.", "Always rebase your own feature branches before review."),
]


@pytest.mark.parametrize(("record", "said"), UPDATES)
def test_a_new_value_updates_the_active_record(record: str, said: str) -> None:
    ops = _curate(said, record)
    assert [op["op"] for op in ops] == ["update"], ops
    assert ops[0]["memory_id"] == ACTIVE_ID


@pytest.mark.parametrize(("record", "said"), SEPARATE)
def test_a_shared_frame_is_not_a_shared_subject(record: str, said: str) -> None:
    ops = _curate(said, record)
    # the active rule stays as it is; the new one, when the builtin reads it, is a new record
    assert all(op["op"] == "save" for op in ops), ops


@pytest.mark.parametrize(
    ("record", "said"),
    [
        ("Use npm for installs.", "Use npm for installs."),
        ("Do not commit to main.", "Do not commit to main."),
        ("Don't commit to main.", "Do not commit to main."),
    ],
)
def test_the_same_value_again_is_not_saved(record: str, said: str) -> None:
    assert _curate(said, record) == []


def test_do_not_and_dont_are_both_saved_as_prohibitions() -> None:
    for said in ("Do not commit to main.", "Don't commit to main."):
        payload = {
            "messages": [{"seq": 1, "role": "user", "kind": "text", "text": said, "meta": {}}],
            "records": [],
            "max_changes": 10,
        }
        ops = curate(payload)["operations"]
        assert [op["op"] for op in ops] == ["save"], (said, ops)
        assert "not commit" in ops[0]["text"].lower() or "n't commit" in ops[0]["text"].lower()


def test_a_checkpoint_never_overwrites_a_stable_record() -> None:
    payload = {
        "messages": [
            {
                "seq": 1,
                "role": "user",
                "kind": "text",
                "meta": {},
                "text": "Port the exporter to the writer API and use pnpm for installs.",
            },
            {
                "seq": 2,
                "role": "assistant",
                "kind": "text",
                "meta": {},
                "text": "Started on the exporter port.",
            },
        ],
        "records": [
            {
                "id": ACTIVE_ID,
                "text": "Use npm for installs.",
                "kind": "stable",
                "scope": {"kind": "workspace"},
            }
        ],
        "max_changes": 10,
    }
    for op in curate(payload)["operations"]:
        if op["op"] == "update" and op["memory_id"] == ACTIVE_ID:
            assert op["kind"] == "stable", op
