"""Step references declared in the blueprint (``batch_step: curate``) through the real CLI,
real subprocesses and a real state.db, on a made-up transcript: the shipped
memory-consolidation commits the curator's batch it names by step id (the commit's stored
input holds the id, no copy); a user's copy that still passes the batch by template
(``batch: "{{ steps.curate.output }}"``) runs the same; a reference to a later or missing
step is refused before anything runs, with file:line."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import wardian
from tests.e2e._support import BUILTIN, W, write_claude_session

SHIPPED = Path(wardian.__file__).parent / "library" / "memory-consolidation"

TURNS = [
    ("user", "From now on, always write commit messages in English in this project."),
    ("assistant", "Understood: English commit messages from now on."),
    ("user", "We decided to pin Node 22 for this project because of the native addons."),
    ("assistant", "Pinned Node 22 in .nvmrc."),
]
"""A made-up conversation (never corpus text)."""


def _copy(tmp_path: Path, old: str, new: str) -> Path:
    """The shipped memory-consolidation folder copied, with `old` replaced by `new` in its
    blueprint.yaml; returns the copy's blueprint.yaml."""
    folder = tmp_path / "my-consolidation"
    shutil.copytree(SHIPPED, folder)
    path = folder / "blueprint.yaml"
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))
    return path


def _run(w: W, agent: str, blueprint: str, transcript: Path) -> dict[str, object]:
    run = w.json("automation", "run", "start", blueprint, "--agent", agent,
                 "--assignments", json.dumps(BUILTIN), "--archive", str(transcript), "--wait")
    assert run["status"] == "succeeded", run
    return dict(run)


def test_the_declared_reference_commits_the_batch_it_names(w: W, tmp_path: Path) -> None:
    transcript = write_claude_session(tmp_path / "t.jsonl", "refs", TURNS)
    w.setup_agent("ada", invoker=False)
    shipped = (SHIPPED / "blueprint.yaml").read_text()
    assert shipped.count("batch_step: curate") == 2 and "steps.curate.output" not in shipped
    run = _run(w, "ada", "memory-consolidation", transcript)
    steps = w.steps(str(run["id"]))
    assert steps["commit"]["input"]["with"] == {"batch_step": "curate",
                                                "archive_step": "archive"}
    saved = steps["commit"]["output"]["counts"]["save"]
    assert len(w.records("ada")) == saved > 0, steps["commit"]["output"]


def test_the_template_form_still_commits_the_batch(w: W, tmp_path: Path) -> None:
    transcript = write_claude_session(tmp_path / "t.jsonl", "tmpl", TURNS)
    w.setup_agent("bob", invoker=False)
    path = _copy(tmp_path, "batch_step: curate", 'batch: "{{ steps.curate.output }}"')
    assert w.run("blueprint", "validate", str(path)).returncode == 0
    run = _run(w, "bob", str(path), transcript)
    steps = w.steps(str(run["id"]))
    assert steps["commit"]["input"]["with"]["batch"] == steps["curate"]["output"]
    assert len(w.records("bob")) == steps["commit"]["output"]["counts"]["save"] > 0


def test_a_reference_to_a_later_or_missing_step_is_refused_with_its_line(
        w: W, tmp_path: Path) -> None:
    w.setup_agent("cy", invoker=False)
    later = _copy(tmp_path, "    action: memory.snapshot\n",
                  "    action: memory.snapshot\n    with: {archive_step: commit}\n")
    line = later.read_text().splitlines().index("    with: {archive_step: commit}") + 1
    checked = w.run("blueprint", "validate", str(later), check=False)
    assert checked.returncode == 2, checked
    assert (f"{later}:{line}:" in checked.stdout and "step reference 'archive_step' names a "
            "later step: 'commit'" in checked.stdout), checked.stdout
    started = w.run("automation", "run", "start", str(later), "--agent", "cy",
                    "--assignments", json.dumps(BUILTIN), "--wait", check=False)
    assert started.returncode == 2, started
    assert "names a later step" in started.stderr + started.stdout
    assert "Traceback" not in started.stderr
    from wardian.config import open_state_db
    from wardian.engine.runs import RunStore

    store = RunStore(open_state_db())
    assert store.list() == []  # refused before a run was created

    shutil.rmtree(later.parent)
    missing = _copy(tmp_path, "memory.commit\n    with:\n      batch_step: curate",
                    "memory.commit\n    with:\n      batch_step: curat")
    checked = w.run("blueprint", "validate", str(missing), check=False)
    assert checked.returncode == 2
    assert ("step reference 'batch_step' names no step: 'curat'" in checked.stdout
            and "(did you mean 'curate'?)" in checked.stdout), checked.stdout
