"""The shipped `memory-review` blueprint through the real CLI: a run drafts ONE plan over the
agent's whole memory and changes nothing; `garden memory reviews` lists it pending; applying
it goes through the ordinary preview, terminal confirmation and receipt and replays; a record
revised after drafting makes the review stale and apply refuses (exit 4); a model reviewer
gets exactly its assigned model, and a reply from another model fails the run."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import building_home, copy_home
from tests.e2e._support import W, install_fake_codex, recorded_calls, write_claude_session
from tests.terminal import on_terminal
from wardian.memory.db import open_memory_db
from wardian.memory.models import Scope
from wardian.memory.store import MemoryStore

REVIEWER = {"reviewer": {"target_type": "temporary_provider", "provider": "builtin",
                         "model": "curator-rules"}}

# name -> (text, kind); the evidence of each is its text, said in the archived session,
# except "gone", whose evidence was never archived
RECORDS: dict[str, tuple[str, str]] = {
    "npm": ("Use npm for installs", "stable"),
    "never_npm": ("Never use npm", "stable"),
    "indent4": ("Indent with 4 spaces in Python files", "stable"),
    "indent2": ("Indent with 2 spaces in Python files", "stable"),
    "tests": ("Run the tests before pushing", "stable"),
    "tests_again": ("Always run the tests before pushing", "stable"),
    "ruff": ("Run ruff before committing", "stable"),
    "cargo": ("Run cargo fmt before committing", "stable"),
    "stale": ("The billing table migration is half done", "current"),
    "fresh": ("The release notes draft waits for the changelog", "current"),
    "gone": ("Keep the public API docs in docs/api", "stable"),
    "secret": ("The staging deploy token lives in the vault", "stable"),
}


def _seed(w: W, tmp_path: Path, name: str = "dev") -> tuple[str, dict[str, str]]:
    """Agent `name` with `RECORDS` (saved in order, so each pair's second is the later),
    an archived session quoting every evidence but the gone one's, a stale checkpoint
    and a flagged record; returns (agent id, name -> record id)."""
    from wardian.config import open_state_db
    from wardian.runtime.archives import ArchiveStore

    agent_id, _ = w.setup_agent(name, invoker=False)
    workspace = Scope("workspace", str(w.home / f"ws-{name}"))
    store = MemoryStore(open_memory_db())
    ids: dict[str, str] = {}
    for key, (text, kind) in RECORDS.items():
        evidence = "we never wrote this down anywhere" if key == "gone" else text
        ids[key] = store.save(agent_id, text, evidence=evidence, kind=kind,  # type: ignore[arg-type]
                              scope=workspace, actor="test").id
    store.conn.execute("UPDATE records SET updated_at = '2026-01-05T09:00:00.000000Z' "
                       "WHERE id = ?", (ids["stale"],))
    store.conn.execute("UPDATE records SET flagged = 'secret_detected: test' WHERE id = ?",
                       (ids["secret"],))
    session = write_claude_session(tmp_path / f"{name}.jsonl", f"s-{name}", [
        ("user", text) for key, (text, _) in RECORDS.items() if key != "gone"])
    archives = ArchiveStore(open_state_db())
    archives.import_transcript(agent_id, session, event_id=f"e-{name}")
    return agent_id, ids


def _memory_rows() -> list[tuple[Any, ...]]:
    store = MemoryStore(open_memory_db())
    records = store.conn.execute(
        "SELECT id, text, status, current_revision_id, updated_at, flagged FROM records "
        "ORDER BY id").fetchall()
    revisions = store.conn.execute("SELECT COUNT(*) FROM revisions").fetchone()[0]
    receipts = store.conn.execute(
        "SELECT COUNT(*) FROM maintenance_receipts").fetchone()[0]
    return [tuple(r) for r in records] + [("revisions", revisions), ("receipts", receipts)]


def _review(w: W, name: str = "dev") -> dict[str, Any]:
    run = w.json("automation", "run", "start", "memory-review", "--agent", name,
                 "--assignments", json.dumps(REVIEWER), "--wait")
    assert run["status"] == "succeeded", run
    return dict(run)


def _reviews(w: W, name: str = "dev") -> list[dict[str, Any]]:
    doc = json.loads(w.run("garden", "memory", "reviews", "--agent", name,
                           "--format", "json").stdout)
    return list(doc["reviews"])


@dataclass(frozen=True)
class Drafted:
    """A data directory with `_seed`'s agent ``dev`` and one memory-review run drafted by
    the real CLI; `before`/`after` are the memory rows around the run."""

    home: Path
    agent_id: str
    ids: dict[str, str]
    run: dict[str, Any]
    before: list[tuple[Any, ...]]
    after: list[tuple[Any, ...]]


@pytest.fixture(scope="module")
def prepared(tmp_path_factory: pytest.TempPathFactory) -> Drafted:
    """Seeded and drafted once for the module (the review run is the real CLI's)."""
    root = tmp_path_factory.mktemp("review")
    with building_home(root) as home:
        w = W(home)
        agent_id, ids = _seed(w, root)
        before = _memory_rows()
        run = _review(w)
        after = _memory_rows()
        w.wait_quiet()
    return Drafted(home, agent_id, ids, run, before, after)


@pytest.fixture
def drafted(prepared: Drafted, wardian_home: Path, w: W) -> Drafted:
    """This test's own copy of the prepared home (`w` drives it)."""
    copy_home(prepared.home, wardian_home)
    return prepared


def test_a_review_run_drafts_one_pending_plan_and_changes_nothing(
        w: W, drafted: Drafted) -> None:
    ids, run = drafted.ids, drafted.run
    assert drafted.after == drafted.before  # drafting applies nothing
    assert _memory_rows() == drafted.before

    draft = w.steps(run["id"])["draft"]["output"]
    ops = {op["memory_id"]: op for op in draft["plan"]["operations"]}
    assert ops[ids["npm"]]["op"] == "retire"  # contradicted by the later "Never use npm"
    assert ops[ids["indent4"]]["op"] == "retire"  # another value of the later record
    assert ops[ids["tests"]] == {**ops[ids["tests"]], "op": "retire_into",
                                 "target_memory_id": ids["tests_again"]}
    assert "stale checkpoint" in ops[ids["stale"]]["reason"]
    assert "archives" in ops[ids["gone"]]["reason"]
    assert "flagged" in ops[ids["secret"]]["reason"]
    # near misses: one frame, two subjects; a fresh checkpoint; the records kept
    for kept in ("ruff", "cargo", "fresh", "never_npm", "indent2", "tests_again"):
        assert ids[kept] not in ops, kept
    assert len(ops) == 6

    (review,) = _reviews(w)
    assert review["run_id"] == run["id"] and review["state"] == "pending"
    assert review["operations"] == 6 and review["digest"] == draft["digest"]
    assert review["counts"] == {"duplicate": 1, "contradiction": 2, "stale_checkpoint": 1,
                                "missing_evidence": 1, "flagged": 1}
    table = w.run("garden", "memory", "reviews", "--agent", "dev").stdout
    assert run["id"][:8] in table and "pending" in table
    assert review["digest_prefix"].removeprefix("sha256:") in table


def test_applying_a_review_gives_a_receipt_and_replays(w: W, drafted: Drafted) -> None:
    ids, run = drafted.ids, drafted.run
    (review,) = _reviews(w)
    shown = w.run("garden", "memory", "review", "show", run["id"][:8], "--agent", "dev")
    assert review["digest_prefix"] in shown.stdout and "Conflicts: none" in shown.stdout

    applied = on_terminal("garden", "memory", "review", "apply", run["id"][:8],
                          "--agent", "dev", "--confirm", review["digest_prefix"],
                          answer="yes", env=w.env)
    assert applied.returncode == 0, applied.stderr
    assert "Applied: plan memory-review:" in applied.stdout
    left = {r["id"] for r in w.records("dev")}
    assert ids["npm"] not in left and ids["tests"] not in left and ids["ruff"] in left
    (after,) = _reviews(w)
    assert after["state"] == "applied" and after["applied_at"]

    rows = _memory_rows()
    again = on_terminal("garden", "memory", "review", "apply", run["id"][:8],
                        "--agent", "dev", answer=None, env=w.env)
    assert again.returncode == 0, again.stderr
    assert "Already applied (stored receipt)" in again.stdout
    assert _memory_rows() == rows


def test_a_record_revised_after_drafting_makes_the_review_stale(w: W, drafted: Drafted) -> None:
    agent_id, ids, run = drafted.agent_id, drafted.ids, drafted.run
    store = MemoryStore(open_memory_db())
    store.update(agent_id, ids["npm"], text="Use npm for installs in the docs site",
                 actor="test")
    (review,) = _reviews(w)
    assert review["state"] == "stale"
    assert [c["memory_id"] for c in review["conflicts"]] == [ids["npm"]]
    shown = w.run("garden", "memory", "review", "show", run["id"][:8], "--agent", "dev")
    assert "Conflicts: 1 — apply is disabled" in shown.stdout
    assert "This review is stale" in shown.stdout
    # a review is re-drafted, never edited: no advice to update the plan
    assert "Update the plan" not in shown.stdout
    rows = _memory_rows()
    refused = on_terminal("garden", "memory", "review", "apply", run["id"][:8],
                          "--agent", "dev", answer="yes", env=w.env)
    assert refused.returncode == 4, (refused.stdout, refused.stderr)
    assert f"review {run['id'][:8]} is stale" in refused.stderr
    assert "revision_changed" in refused.stderr and "Traceback" not in refused.stderr
    assert _memory_rows() == rows

    redrafted = _review(w)  # a new review reads the revised record: applicable again
    assert _reviews(w)[0]["run_id"] == redrafted["id"]
    assert _reviews(w)[0]["state"] == "pending"


def test_bad_input_is_a_clear_error(w: W, tmp_path: Path) -> None:
    _seed(w, tmp_path)
    fmt = w.run("garden", "memory", "reviews", "--agent", "dev", "--format", "xml",
                check=False)
    assert fmt.returncode == 2 and "--format" in fmt.stderr and "Traceback" not in fmt.stderr
    missing = w.run("garden", "memory", "review", "apply", "0000ffff", "--agent", "dev",
                    check=False)
    assert missing.returncode == 1 and "no run with id" in missing.stderr
    assert "Traceback" not in missing.stderr
    other = w.json("automation", "run", "start", "memory-review", "--agent", "dev",
                   "--assignments", json.dumps(REVIEWER), "--wait")
    w.setup_agent("other", invoker=False)
    wrong = w.run("garden", "memory", "review", "show", other["id"][:8], "--agent", "other",
                  check=False)
    assert wrong.returncode == 1 and "drafted no memory review" in wrong.stderr


def test_an_empty_memory_drafts_an_empty_review(w: W) -> None:
    w.setup_agent("quiet", invoker=False)
    run = _review(w, "quiet")
    assert w.steps(run["id"])["review"]["status"] == "skipped"
    (review,) = _reviews(w, "quiet")
    assert review["state"] == "empty" and review["operations"] == 0


def test_a_schedule_invoker_reviews_weekly_by_default(w: W) -> None:
    w.setup_agent("dev", invoker=False)
    created = w.json("automation", "schedule", "add", "--blueprint", "memory-review",
                     "--name", "weekly review", "--agent", "dev",
                     "--assignments", json.dumps(REVIEWER))
    assert created["config"]["cron"] == "0 3 * * 0" and created["enabled"] is False
    assert created["schedule"] == "cron '0 3 * * 0' (UTC)"


def test_the_shipped_blueprint_validates_and_library_init_copies_it(w: W) -> None:
    from wardian.blueprints.library import shipped_library_dir

    sample = shipped_library_dir() / "memory-review" / "blueprint.yaml"
    checked = w.run("blueprint", "validate", str(sample))
    assert "memory-review" in checked.stdout
    # the builtin provider answers the reviewer's output schema
    w.run("blueprint", "validate", str(sample), "--assignments", json.dumps(REVIEWER))
    init = w.run("library", "init")
    assert "memory-review/blueprint.yaml" in init.stdout
    assert "memory-review/reviewer.md.j2" in init.stdout


MODEL, EFFORT = "gpt-5.2-codex", "low"
MODEL_REVIEWER = {"reviewer": {"target_type": "temporary_provider", "provider": "codex",
                               "model": MODEL, "effort": EFFORT}}


def _model_answer(ids: dict[str, str]) -> str:
    return json.dumps({"findings": [
        {"kind": "duplicate", "keep": ids["tests_again"][:8], "absorbed": [ids["tests"][:8]],
         "reason": "the same rule twice"},
        {"kind": "contradiction", "keep": ids["never_npm"][:8], "retire": ids["npm"][:8],
         "reason": "npm is no longer used"},
    ]})


def _exec_calls(record: Path) -> list[dict[str, Any]]:
    return [c for c in recorded_calls(record) if c.get("mode") != "app-server"
            and "exec" in c["argv"]]


def test_a_model_reviewer_gets_the_exact_model_and_its_findings_are_drafted(
        w: W, tmp_path: Path) -> None:
    record = install_fake_codex(w, tmp_path, scenario="ok", answer="{}")
    _agent_id, ids = _seed(w, tmp_path)
    w.env["FAKE_PROVIDER_ANSWER"] = _model_answer(ids)
    w.run("agent", "models", "--provider", "codex", "--refresh")
    before = _memory_rows()
    run = w.json("automation", "run", "start", "memory-review", "--agent", "dev",
                 "--assignments", json.dumps(MODEL_REVIEWER), "--wait")
    assert run["status"] == "succeeded", run
    (call,) = _exec_calls(record)
    argv = call["argv"]
    assert argv[argv.index("-m") + 1] == MODEL and argv.count("-m") == 1
    assert argv[argv.index("-c") + 1] == f"model_reasoning_effort={EFFORT}"
    assert "Run cargo fmt before committing" in json.dumps(call)  # the prompt lists them
    plan = w.steps(run["id"])["draft"]["output"]["plan"]
    assert [(op["op"], op["memory_id"]) for op in plan["operations"]] == [
        ("retire", ids["npm"]), ("retire_into", ids["tests"])]
    assert _memory_rows() == before


def test_a_reply_from_another_model_fails_the_review_without_fallback(
        w: W, tmp_path: Path) -> None:
    record = install_fake_codex(w, tmp_path, scenario="mismatch", answer='{"findings": []}')
    _seed(w, tmp_path)
    w.run("agent", "models", "--provider", "codex", "--refresh")
    before = _memory_rows()
    proc = w.run("automation", "run", "start", "memory-review", "--agent", "dev",
                 "--assignments", json.dumps(MODEL_REVIEWER), "--wait", "--json",
                 check=False)
    run = json.loads(proc.stdout)
    assert run["status"] == "failed", run
    assert MODEL in (run["error"] or "") and "gpt-5.1-codex-mini" in (run["error"] or "")
    steps = w.steps(run["id"])
    assert steps["review"]["status"] == "failed" and "draft" not in steps
    assert len(_exec_calls(record)) == 1  # no retry with another model
    assert _memory_rows() == before
    assert _reviews(w) == []
