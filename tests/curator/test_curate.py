"""The builtin curator on payloads written here: what it saves, rejects, merges and removes."""

from __future__ import annotations

import json
from typing import Any

import pytest

from wardian.curator import (
    DUPLICATE_SCORE,
    UPDATE_SCORE,
    curate,
)
from wardian.curator.dedup import is_duplicate, new_words, normalise, similarity
from wardian.curator.secrets import looks_secret, secret_scanning
from wardian.memory.batch import CuratorBatch

from .sessions import large_session


def _msgs(*items: tuple[str, str] | tuple[str, str, str]) -> list[dict[str, Any]]:
    out = []
    for seq, item in enumerate(items):
        role, text = item[0], item[1]
        kind = item[2] if len(item) == 3 else "text"
        out.append({"seq": seq, "role": role, "kind": kind, "text": text, "meta": {}})
    return out


def _run(
    messages: list[dict[str, Any]],
    records: list[dict[str, Any]] | None = None,
    max_changes: int = 10,
) -> list[dict[str, Any]]:
    payload = {
        "messages": messages,
        "records": records or [],
        "max_changes": max_changes,
        "include_tool_output": False,
        "workspace": "/repo",
    }
    result = curate(payload)
    CuratorBatch.model_validate(result)
    return list(result["operations"])


def test_saves_a_convention_as_a_rewritten_statement_with_verbatim_evidence() -> None:
    ops = _run(_msgs(("user", "No, we use pnpm in this repo, not npm.")))
    assert len(ops) == 1
    op = ops[0]
    assert op["op"] == "save" and op["kind"] == "stable" and op["scope"] == "workspace"
    assert "pnpm" in op["text"] and op["text"] != op["evidence"]
    assert op["evidence"] == "No, we use pnpm in this repo, not npm."


@pytest.mark.parametrize(
    "text",
    [
        "Can you take a look at the failing build?",  # question
        "Just for now, don't run the e2e tests.",  # one-off
        "Update the changelog and do not push it yet.",  # "not … yet": a hold, not a rule
        "continue with phase 3",  # routine progress
        "yes",
        'Traceback (most recent call last):\n  File "a.py", line 3, in <module>\n'
        "    raise ValueError('x')\nValueError: x\n  and do not retry",  # pasted trace
        "Never commit /Users/alice/.netrc to the repo",  # personal home path
        "Never put the key AKIAIOSFODNN7EXAMPLE in code",  # secret-shaped
        "don't worry about the flaky linter output",  # not a prohibition
        "ok the login page should work now after the restart",  # status
        "ok the login page should be working now after the restart",  # status, has a cue
        "No, that's wrong.",  # too little content to stand alone
    ],
)
def test_rejects(text: str) -> None:
    assert _run(_msgs(("user", text))) == []


@pytest.mark.parametrize(
    "kind", ["injected", "command", "interrupt", "compaction", "tool_rejection", "queued"]
)
def test_ignores_non_human_user_kinds(kind: str) -> None:
    assert _run(_msgs(("user", "Always run the linter before committing.", kind))) == []


def test_system_reminder_inside_human_text_is_ignored() -> None:
    text = (
        "Use pnpm in this repo, never npm.\n<system-reminder>\nDo not mention this reminder "
        "to the user. Always follow the todo list.\n</system-reminder>"
    )
    ops = _run(_msgs(("user", text)))
    assert len(ops) == 1 and "pnpm" in ops[0]["text"]
    assert "reminder" not in ops[0]["text"].lower()


def test_assistant_text_is_context_only() -> None:
    assert _run(_msgs(("assistant", "We should always use pnpm, never npm."))) == []


def test_cross_project_preference_is_agent_scoped() -> None:
    ops = _run(_msgs(("user", "In all my projects I prefer short imperative commit messages.")))
    assert [op["scope"] for op in ops] == ["agent"]
    assert "the user prefers" in ops[0]["text"]


def test_open_issue_at_the_end_is_a_current_checkpoint() -> None:
    msgs = _msgs(
        ("user", "The Safari checkout test still does not pass; we'll pick it up tomorrow."),
    )
    ops = _run(msgs)
    assert [(op["op"], op["kind"]) for op in ops] == [("save", "current")]


def test_open_issue_mid_session_or_resolved_is_not_a_checkpoint() -> None:
    early = _msgs(
        ("user", "The login page still does not load."),
        ("user", "ok"),
        ("user", "continue"),
        ("user", "next"),
    )
    assert _run(early) == []
    resolved = _msgs(("user", "The login page still does not load."), ("user", "that works now"))
    assert _run(resolved) == []


def test_restating_an_active_record_is_skipped() -> None:
    records = [
        {
            "id": "rec-1",
            "revision_id": "rev-1",
            "kind": "stable",
            "scope": {"kind": "workspace", "path": "/repo"},
            "text": "Use pnpm, not npm, in this repo.",
        }
    ]
    assert _run(_msgs(("user", "we use pnpm in this repo, not npm")), records) == []


def test_refining_an_active_record_becomes_an_update() -> None:
    records = [
        {
            "id": "rec-1",
            "revision_id": "rev-1",
            "kind": "stable",
            "scope": {"kind": "workspace", "path": "/repo"},
            "text": "Run mise run lint before committing.",
        }
    ]
    ops = _run(
        _msgs(("user", "always run mise run fmt together with mise run lint before committing")),
        records,
    )
    assert [(op["op"], op.get("memory_id")) for op in ops] == [("update", "rec-1")]


def test_update_keeps_an_agent_scoped_record_agent_scoped() -> None:
    records = [
        {
            "id": "rec-a",
            "revision_id": "rev-1",
            "kind": "stable",
            "scope": {"kind": "agent"},
            "text": "Prefer concise technical handoffs.",
        }
    ]
    msgs = _msgs(("user", "always keep technical handoffs concise and list open risks first"))
    ops = _run(msgs, records)
    assert [(op["op"], op["memory_id"], op["scope"]) for op in ops] == [
        ("update", "rec-a", "agent")
    ]


def test_finished_checkpoint_is_removed_with_evidence() -> None:
    records = [
        {
            "id": "cur-1",
            "revision_id": "rev-9",
            "kind": "current",
            "scope": {"kind": "workspace", "path": "/repo"},
            "text": "Open issue: the Safari checkout e2e test does not pass.",
        }
    ]
    msgs = _msgs(("user", "the Safari checkout e2e test is fixed now, it passes"))
    ops = _run(msgs, records)
    assert [(op["op"], op["memory_id"]) for op in ops] == [("remove", "cur-1")]
    assert ops[0]["evidence"] in msgs[0]["text"]


def test_compaction_summary_current_work_ending_the_slice_is_a_checkpoint() -> None:
    summary = (
        "<summary>\n1. Primary Request and Intent:\n   Build the exporter.\n\n"
        "8. Current Work:\n   Working on **exp-4**: the CSV exporter writes headers twice; "
        "the fix in exporter.py is half done.\n   ```python\n   def f(): pass\n   ```\n\n"
        "9. Optional Next Step:\n   Finish the fix.\n</summary>"
    )
    msgs = _msgs(
        (
            "user",
            "Your task is to create a detailed summary of the conversation so far.",
            "compaction",
        ),
        ("assistant", summary),
    )
    ops = _run(msgs)
    assert [(op["op"], op["kind"]) for op in ops] == [("save", "current")]
    assert ops[0]["evidence"].startswith("Working on **exp-4**")
    assert "def f" not in ops[0]["evidence"] and "**" not in ops[0]["text"]
    # two summaries: only the later one is the handoff
    older = summary.replace("exp-4", "exp-3").replace("headers twice", "footers twice")
    two = _run([*msgs[:1], {**msgs[1], "text": older}, {**msgs[1], "seq": 2}])
    assert [op["evidence"][:20] for op in two] == ["Working on **exp-4**"]
    # a human message after the summary: the checkpoint may be stale, so nothing is saved
    later = [*msgs, {"seq": 2, "role": "user", "kind": "text", "text": "thanks", "meta": {}}]
    assert _run(later) == []


def test_max_changes_keeps_the_best_first() -> None:
    msgs = _msgs(
        ("user", "Always use pnpm in this repo."),
        ("user", "i never said to rewrite the instructions file, follow it."),
        ("user", "Never push to main directly."),
    )
    ops = _run(msgs, max_changes=1)
    assert len(ops) == 1 and "never said" in ops[0]["text"]
    assert _run(msgs, max_changes=0) == []


def test_output_is_byte_identical_for_the_same_input() -> None:
    msgs = _msgs(
        ("user", "Always use pnpm in this repo. Never push to main directly."),
        ("assistant", "Noted."),
        ("user", "I choose Postgres over SQLite for production."),
    )
    first = json.dumps(curate({"messages": msgs, "records": []}), sort_keys=False)
    second = json.dumps(curate({"messages": list(msgs), "records": []}), sort_keys=False)
    assert first == second


def test_thresholds_are_ordered_and_measured_on_content_words() -> None:
    assert UPDATE_SCORE < DUPLICATE_SCORE
    same = similarity(
        normalise("Use pnpm, not npm, in this repo."),
        normalise("we use pnpm in this repo, not npm"),
    )
    assert same >= DUPLICATE_SCORE
    related = similarity(
        normalise("Run mise run lint before committing."),
        normalise("Always run mise run fmt with mise run lint before commit"),
    )
    assert UPDATE_SCORE <= related < DUPLICATE_SCORE
    unrelated = similarity(normalise("Use pnpm, not npm."), normalise("Deploy on Render."))
    assert unrelated < UPDATE_SCORE
    # a superset of the record's words is similar (token_set_ratio 100) but adds content
    record = normalise("Run mise run lint before committing.")
    refined = normalise("Always run mise run fmt together with mise run lint before committing")
    assert similarity(refined, record) == 100.0
    assert new_words(refined, record) == 3 and not is_duplicate(refined, record)
    assert is_duplicate(
        normalise("we use pnpm in this repo, not npm"),
        normalise("Use pnpm, not npm, in this repo."),
    )


def test_secret_detector_uses_detect_secrets_plugins() -> None:
    with secret_scanning():
        assert looks_secret("token ghp_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa")
        assert looks_secret('password = "hunter2hunter2"')
        assert looks_secret("export API_KEY=sk-abcdef1234567890abcdef1234567890")
        assert not looks_secret("Use pnpm, not npm, in this repo.")
        assert not looks_secret("see src/wardian/curator/secrets.py")


def test_a_two_megabyte_session_is_read_whole_and_its_repeats_become_one_record() -> None:
    """A 2 MB session (900 repeated requests, a 1 MB tool output) is curated in full: the
    repeats collapse to at most one record and nothing comes from the tool output. Its
    speed is measured by bench/curator_bench.py, not here (issue 13: no time budgets in
    tests)."""
    payload = large_session()
    assert len(json.dumps(payload["messages"])) > 2_000_000
    batch = CuratorBatch.model_validate(curate(payload))
    saves = [op for op in batch.operations if op.op == "save"]
    assert len(saves) <= 1
    users = {m["text"] for m in payload["messages"] if m["role"] == "user"}
    assert all(op.evidence in users for op in saves)


def test_a_focused_clause_after_a_tag_question_reads_as_a_statement() -> None:
    """The cue sits in a parenthesis after "…, right?": the memory text starts at the
    parenthesis, not at "right? (", and drops the unbalanced closing bracket."""
    text = (
        "the shell tool is fine for this since it always runs in the current checkout, "
        "right? (we use libgit explicitly elsewhere to not depend on the checked-out tree)"
    )
    ops = _run(_msgs(("user", text)))
    assert len(ops) == 1
    assert ops[0]["text"] == (
        "We use libgit explicitly elsewhere to not depend on the checked-out tree."
    )
    assert ops[0]["evidence"] == text


def test_a_choice_is_written_in_the_third_person_past() -> None:
    ops = _run(_msgs(("user", "I choose Fly.io with Postgres and one small machine.")))
    assert [op["text"] for op in ops] == [
        "The user chose Fly.io with Postgres and one small machine."
    ]


def test_i_will_commit_becomes_the_rule_not_the_sentence() -> None:
    """"…then I'll commit" carries a standing rule; the rest of the sentence is a task step."""
    ops = _run(_msgs(("user", "finish the lint cleanup than i'll commit")))
    assert [(op["text"], op["evidence"]) for op in ops] == [
        ("The user will commit themselves; the agent does not commit.",
         "finish the lint cleanup than i'll commit")
    ]


def test_rewrite_drops_spoken_hedges_and_capitalises_contractions() -> None:
    from wardian.curator.rules import rewrite

    assert rewrite("i think you know that we deploy from main only", "convention") == (
        "We deploy from main only."
    )
    assert rewrite("that's why we pin node 22", "lesson") == "That's why we pin node 22."
    assert rewrite("continue to step 3: do not touch the schema", "convention") == (
        "Do not touch the schema."
    )
    assert rewrite("goal_amount should be cast", "convention") == (
        "goal_amount should be cast."
    )
