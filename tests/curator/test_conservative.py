"""The builtin saves only what it reads reliably, quoting the user without losing meaning.

Every sentence is invented for these tests.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.curator.blind import build
from wardian.curator import curate
from wardian.curator.contradiction import contradicts, stance
from wardian.curator.rules import rewrite
from wardian.transcripts import load_transcript


def _ops_of(path: Path) -> list[dict[str, Any]]:
    conv = load_transcript(path)
    payload = {"messages": [m.to_json() for m in conv.messages], "records": []}
    return list(curate(payload)["operations"])


def _user(*texts: str) -> list[dict[str, Any]]:
    payload = {
        "messages": [
            {"seq": k, "role": "user", "kind": "text", "text": t, "meta": {}}
            for k, t in enumerate(texts, 1)
        ],
        "records": [],
    }
    return list(curate(payload)["operations"])


def test_a_refusal_reason_of_two_statements_keeps_both(tmp_path: Path) -> None:
    build.OUT = tmp_path
    build.claude_code(
        "refusal",
        "/srv/orchard",
        [
            ("user", "Ship the pruning fix."),
            (
                "reject",
                (
                    "Bash",
                    {"command": "git push origin trunk"},
                    "Nobody pushes straight to trunk in this repo. Open a merge request "
                    "from a topic branch.",
                ),
            ),
            ("assistant", "Opened a merge request from topic/pruning."),
        ],
    )
    ops = [op for op in _ops_of(tmp_path / "claude-code" / "refusal.jsonl")
           if op["kind"] == "stable"]
    assert len(ops) == 1, ops
    assert "Nobody pushes straight to trunk" in ops[0]["text"]
    assert "merge request from a topic branch" in ops[0]["text"]


NEGATED = [
    "no tabs please",
    "No semicolons in the TypeScript sources.",
    "nope, no tabs",
    "No force pushes to the release branches.",
    "no mocks in the integration tests please",
    "No-one merges their own pull request.",
    "no-op migrations still need a review",
]


@pytest.mark.parametrize("said", NEGATED)
@pytest.mark.parametrize("category", ["correction", "convention", "explicit", "decision"])
def test_a_leading_no_that_negates_is_never_dropped(said: str, category: str) -> None:
    text = rewrite(said, category).lower()
    assert text.startswith(("no ", "no-")) or " no " in text, text


@pytest.mark.parametrize(
    ("said", "rest"),
    [("no, use spaces", "Use spaces."), ("Nope - keep it on httpx.", "Keep it on httpx."),
     ("no I meant the staging bucket", "the staging bucket")],
)
def test_a_leading_no_that_answers_is_dropped(said: str, rest: str) -> None:
    assert rest.lower() in rewrite(said, "correction").lower()


def test_a_negated_preference_read_as_a_stance_rejects() -> None:
    assert "tabs" in stance("no tabs please").rejects
    assert contradicts("no tabs please", "Use tabs.")


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        ("Which label should the release get?", "None"),
        ("Which reviewer should I add to the pull request?", "No reviewer"),
        ("Should I add a changelog entry as well?", "Not now"),
        ("Which cache should the build use?", "Neither"),
    ],
)
def test_an_answer_that_only_declines_decides_nothing(
    tmp_path: Path, question: str, answer: str
) -> None:
    build.OUT = tmp_path
    build.claude_code(
        "declined",
        "/srv/orchard",
        [("user", "Cut the 3.2 release."), ("ask", (question, answer)),
         ("assistant", "Release 3.2 is tagged.")],
    )
    ops = _ops_of(tmp_path / "claude-code" / "declined.jsonl")
    assert not [op for op in ops if "chose" in op["text"]], ops


@pytest.mark.parametrize(
    "answer", ["No, use the local disk cache", "Redis streams (Recommended)", "no-store"]
)
def test_an_answer_that_names_what_holds_is_kept(tmp_path: Path, answer: str) -> None:
    build.OUT = tmp_path
    build.claude_code(
        "named",
        "/srv/orchard",
        [("user", "Speed up the build."), ("ask", ("Which cache should the build use?", answer)),
         ("assistant", "The build uses it now.")],
    )
    ops = _ops_of(tmp_path / "claude-code" / "named.jsonl")
    assert any("chose" in op["text"] and "cache" in op["text"] for op in ops), ops


HEDGED = [
    "maybe the importer should always skip blank rows",
    "I guess we always tag releases on Fridays",
    "the parser might be faster with a lookup table, use one",
    "we should probably pin orjson to the 3.x line",
    "in theory the cron job never overlaps, so don't add a lock",
    "perhaps always run the slow suite before a release",
]


@pytest.mark.parametrize("said", HEDGED)
def test_a_hedged_statement_is_not_saved(said: str) -> None:
    assert [op for op in _user(said) if op.get("kind") == "stable"] == []


@pytest.mark.parametrize(
    "said",
    [
        "the importer should always skip blank rows",
        "we always tag releases on Fridays",
        "remember that the nightly job might run twice after a deploy",
    ],
)
def test_the_same_statement_without_a_hedge_or_asked_to_be_remembered_is_saved(
    said: str,
) -> None:
    assert [op for op in _user(said) if op.get("kind") == "stable"], said


def test_the_users_own_plan_is_not_left_as_unfinished_work() -> None:
    payload = {
        "messages": [
            {"seq": 1, "role": "user", "kind": "text",
             "text": "we will add the photo upload later this year"},
            {"seq": 2, "role": "assistant", "kind": "text", "text": "Noted."},
        ],
        "records": [],
    }
    assert curate(payload)["operations"] == []


@pytest.mark.parametrize(
    ("reason", "kept"),
    [
        ("Leave vendor/lib.min.js alone. Patch src/widgets/slider.ts in the theme instead.",
         "src/widgets/slider.ts"),
        ("That module is built by the toolchain. Edit proto/ledger.proto and rerun buf.",
         "proto/ledger.proto"),
        ("Not that one. Bump the pin in constraints.txt to 2.31.4 and rebuild.", "2.31.4"),
        ("Wrong config. Settings go in deploy/values.prod.yaml for this chart.",
         "deploy/values.prod.yaml"),
    ],
)
def test_a_refusal_reason_is_never_cut_inside_a_file_name_or_version(
    tmp_path: Path, reason: str, kept: str
) -> None:
    build.OUT = tmp_path
    build.claude_code(
        "refusal-dotted",
        "/srv/heron",
        [
            ("user", "Wire the new option through."),
            ("reject", ("Edit", {"file_path": "/srv/heron/gen/out.py"}, reason)),
            ("assistant", "Understood."),
        ],
    )
    texts = [op["text"] for op in _ops_of(tmp_path / "claude-code" / "refusal-dotted.jsonl")]
    assert texts, "the reason says what to do instead: it is kept"
    assert any(kept in t for t in texts), texts
    for t in texts:
        # no piece of a dotted name left as a sentence of its own ("Yaml and rebuild")
        assert not any(t.rstrip(".").endswith(frag) for frag in (": Ts instead", ": Proto"))


@pytest.mark.parametrize(
    "report",
    [
        "The exporter streams rows in batches of 500 now, and memory stays flat.",
        "Uploads go straight to the bucket through a signed URL; the API no longer proxies them.",
        "Search results page through a cursor, so deep pages cost the same as the first one.",
    ],
)
def test_a_request_the_agent_reports_in_plain_words_is_not_left_unfinished(
    tmp_path: Path, report: str
) -> None:
    build.OUT = tmp_path
    build.claude_code(
        "plain-report",
        "/srv/heron",
        [
            ("user", "The export endpoint runs out of memory on big accounts. Make it stream."),
            ("tool", ("Edit", {"file_path": "/srv/heron/export/rows.py"},
                      "The file has been updated.")),
            ("assistant", report),
        ],
    )
    ops = _ops_of(tmp_path / "claude-code" / "plain-report.jsonl")
    assert not [op for op in ops if op["kind"] == "current"], ops


def test_a_request_the_agent_was_still_working_on_is_left_unfinished(tmp_path: Path) -> None:
    build.OUT = tmp_path
    build.claude_code(
        "mid-work",
        "/srv/heron",
        [
            ("user", "The export endpoint runs out of memory on big accounts. Make it stream."),
            ("tool", ("Edit", {"file_path": "/srv/heron/export/rows.py"},
                      "The file has been updated.")),
            ("assistant", "Next I'll switch the CSV writer over to the generator."),
        ],
    )
    ops = _ops_of(tmp_path / "claude-code" / "mid-work.jsonl")
    assert [op for op in ops if op["kind"] == "current"], ops


@pytest.mark.parametrize(
    "said",
    [
        "Rebase on trunk before merging.",
        "Please run the contract tests before deploying.",
        "Thanks. Regenerate the lockfile before pushing.",
        "And sign the tag after releasing, the mirror checks it.",
    ],
)
def test_an_imperative_gated_on_a_workflow_step_is_a_standing_rule(said: str) -> None:
    ops = _user(said)
    assert [op["kind"] for op in ops] == ["stable"], ops


@pytest.mark.parametrize(
    "said",
    [
        "Run the tests before committing this.",
        "Squash the fixups before merging it.",
        "Can you lint before pushing?",
        "I ran the formatter before committing.",
    ],
)
def test_a_one_off_or_a_report_gated_on_a_workflow_step_is_not_saved(said: str) -> None:
    assert _user(said) == []
