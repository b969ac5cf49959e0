"""Kinds of statement the eighth unseen set (tests/curator/unseen8/) showed the curator
missing or getting wrong.

As in test_generalisation7.py, each test is a kind of statement with sentences made up for
the test, neither from the corpus nor from any held-out set (which stay measurements), and
each kind has near misses that must not be saved.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.curator.sessions import curate_session
from wardian.curator import curate


def _ops(texts: list[str], done: str = "Done: all 9 checks pass.") -> list[dict[str, Any]]:
    """Operations for a session whose user says each of `texts` in turn, the agent answering
    each one (the last answer is `done`)."""
    messages: list[dict[str, Any]] = []
    for k, text in enumerate(texts):
        messages.append({"seq": 2 * k, "role": "user", "kind": "text", "meta": {}, "text": text})
        reply = done if k == len(texts) - 1 else "Understood, I'll keep to that."
        messages.append({"seq": 2 * k + 1, "role": "assistant", "kind": "text", "meta": {},
                         "text": reply})
    payload = {"messages": messages, "records": [], "max_changes": 10}
    return list(curate(payload)["operations"])


def _texts(texts: list[str]) -> list[str]:
    return [op["text"] for op in _ops(texts) if op["op"] in ("save", "update")]


# --- 1. a refused tool call whose reason comes in the next message (Gemini, Codex) ---------

REFUSALS_WITH_A_LATER_REASON = [
    # (the refused shell command, the user's next message, a word the record must keep)
    ("apt-get install redis-server", "redis runs in a container here, the compose file "
     "starts it", "container"),
    ("npm install moment", "no moment.js in this codebase, date handling goes through "
     "date-fns", "date-fns"),
    ("sudo cp nginx.conf /etc/nginx/nginx.conf", "the nginx config is managed by the "
     "playbook, it overwrites hand edits on every run", "playbook"),
    # "doesnt …" reads like an open problem, yet right after the refusal it is the reason
    ("sudo supervisorctl restart ingest", "ingest is a per-user service, it doesnt run "
     "under root", "per-user"),
    ("sudo npm install -g yarn", "yarn comes from corepack in this repo, never a global "
     "install", "corepack"),
]


@pytest.mark.parametrize("fmt", ["gemini", "codex"])
@pytest.mark.parametrize(("command", "reason", "kept"), REFUSALS_WITH_A_LATER_REASON)
def test_a_refusal_reason_given_in_the_next_message_is_saved(
    fmt: str, command: str, reason: str, kept: str, tmp_path: Path
) -> None:
    ops = curate_session(fmt, [
        ("user", "the worker queue drops jobs, have a look"),
        ("assistant", "I'll set up the pieces it needs first."),
        ("tool", "run_shell_command", {"command": command}),
        ("reject", reason),
        ("assistant", "Understood, I'll leave that as it is."),
    ], tmp_path)
    assert any(kept in op["text"] and op["kind"] == "stable" for op in ops), ops


REPLIES_AFTER_A_REFUSAL_THAT_ARE_NOT_RULES = [
    # the state of things right now, not a rule
    ("pytest tests/test_export.py", "the export tests are running in my other terminal"),
    # past tense: what happened
    ("alembic upgrade head", "the alembic migration already ran on staging yesterday"),
    # a question
    ("pip install numpy", "why does numpy need installing at all?"),
    # a one-off step to take now
    ("git push origin main", "show me the git diff first"),
    # a remark about something the refused call does not name
    ("make deploy", "the coffee machine is broken again"),
]


@pytest.mark.parametrize("fmt", ["gemini", "codex"])
@pytest.mark.parametrize(("command", "reply"), REPLIES_AFTER_A_REFUSAL_THAT_ARE_NOT_RULES)
def test_a_reply_after_a_refusal_that_states_no_rule_is_not_saved(
    fmt: str, command: str, reply: str, tmp_path: Path
) -> None:
    ops = curate_session(fmt, [
        ("user", "the worker queue drops jobs, have a look"),
        ("assistant", "I'll check a few things first."),
        ("tool", "run_shell_command", {"command": command}),
        ("reject", reply),
        ("assistant", "Alright."),
    ], tmp_path)
    assert not [op for op in ops if op["op"] == "save"], ops


# --- 5. situational remarks and one-off limits are not rules or checkpoints ---------------

SITUATIONAL = [
    # a toolchain or platform statement limited to a situation, a person or a condition
    "we deploy with helm on the staging cluster only when Priya is out",
    "we build with clang when the gcc image is broken",
    "we release with goreleaser if the tag is signed, otherwise by hand",
    "the app runs on Node 18 while the upgrade ticket is open",
    "we target Python 3.11 unless the client's server is still on 3.9",
]


@pytest.mark.parametrize("text", SITUATIONAL)
def test_a_conditional_or_situational_toolchain_remark_is_no_rule(text: str) -> None:
    assert _texts(["the nightly job is slow, look into it", text]) == []


STANDING_TOOLCHAIN = [
    # the same kind said plainly still holds
    "we deploy with helm, the charts live in deploy/charts",
    "the app runs on Node 20",
]


@pytest.mark.parametrize("text", STANDING_TOOLCHAIN)
def test_a_plain_toolchain_statement_is_still_saved(text: str) -> None:
    assert _texts(["the nightly job is slow, look into it", text]), text


def test_a_one_off_limit_after_a_correction_is_not_the_checkpointed_request() -> None:
    messages: list[dict[str, Any]] = []

    def say(role: str, text: str, kind: str = "text") -> None:
        messages.append({"seq": len(messages), "role": role, "kind": kind, "meta": {},
                         "text": text})

    say("user", "Add a CSV export to the invoices page.")
    say("assistant", "Write(/work/app/reports/export.py)", "tool_call")
    say("user", "no, not the whole table. export just the visible columns")
    say("assistant", "Edit(/work/app/reports/export.py)", "tool_call")
    say("user", "for this run just use the sample ledger, the full one is on the other disk")
    say("assistant", "Bash(pytest tests/test_export.py)", "tool_call")
    say("assistant", "The export writes the header, but the date column fails with "
        "ValueError: unconverted data remains.")
    say("user", "stop there, next time")
    ops = curate({"messages": messages, "records": [], "max_changes": 10})["operations"]
    current = [op for op in ops if op["kind"] == "current"]
    assert not any("sample ledger" in op["text"] or "this run" in op["text"]
                   for op in current), current


# --- 4. plain-worded rules with no cue word: what engine, library, versions ----------------

def _after_work(texts: list[str], agent: str = "I added the export page and a small chart "
                "for the totals.") -> list[str]:
    """Records of a session where the agent did some work, then the user said `texts`."""
    messages: list[dict[str, Any]] = [
        {"seq": 0, "role": "user", "kind": "text", "meta": {},
         "text": "the totals page is empty, please fix it"},
        {"seq": 1, "role": "assistant", "kind": "text", "meta": {}, "text": agent},
    ]
    for text in texts:
        messages.append({"seq": len(messages), "role": "user", "kind": "text", "meta": {},
                         "text": text})
        messages.append({"seq": len(messages), "role": "assistant", "kind": "text",
                         "meta": {}, "text": "Done: changed it, all 9 checks pass."})
    ops = curate({"messages": messages, "records": [], "max_changes": 10})["operations"]
    return [op["text"] for op in ops if op["op"] == "save" and op["kind"] == "stable"]


PLAIN_RULES = [
    # (the statement, a word its record keeps)
    ("Maps use Leaflet.", "Leaflet"),
    ("Background jobs use dramatiq, the old celery tasks are gone.", "dramatiq"),
    ("The manual is typeset with ConTeXt.", "ConTeXt"),
    ("Our web client is bundled with esbuild.", "esbuild"),
    ("the firmware images are built with Yocto", "Yocto"),
    ("we only support 12.4 and up", "12.4"),
    ("the extension supports 11 LTS or later", "11"),
    ("we use structlog for logging", "structlog"),
    ("We use Alembic for every schema change.", "Alembic"),
]


@pytest.mark.parametrize(("text", "kept"), PLAIN_RULES)
def test_a_plain_worded_rule_naming_the_engine_library_or_version_is_saved(
    text: str, kept: str
) -> None:
    texts = _after_work([text])
    assert any(kept in t for t in texts), texts


NOT_PLAIN_RULES = [
    # past tense
    "the old docs were built with sphinx",
    "Maps used Leaflet before the rewrite.",
    # an article or a pronoun: this thing at hand, not a kind of thing
    "the tests use the wrong fixture",
    "this page uses a lot of memory",
    "it uses numpy",
    "the export script uses pandas",
    # a question
    "is the wheel built with maturin?",
    "do maps use Leaflet?",
    # a situation or a condition
    "we use the blue theme for the demo",
    "we use docker for that when the laptop is offline",
    "Our web client is bundled with esbuild while the vite bug is open.",
    # the agent's words quoted back
    'you said "charts use d3", that is wrong',
    # a version range not said as what the project supports
    "the crash happens on 3.2 and newer",
]


@pytest.mark.parametrize("text", NOT_PLAIN_RULES)
def test_a_remark_that_only_looks_like_a_plain_rule_is_not_saved(text: str) -> None:
    assert _after_work([text]) == []


# --- 2. a correction that only names the replacement --------------------------------------

REPLACEMENTS = [
    # (the agent's report, the user's correction, a word the record keeps)
    ("I added the retries with requests.", "use httpx instead, requests has no async "
     "client", "httpx"),
    ("I wrote the dates with moment.", "it's dayjs here, not moment", "dayjs"),
    ("I parsed the flags with argparse.", "we use click for the command-line flags",
     "click"),
    ("I stored the settings in an ini file.", "use toml instead, configparser drops the "
     "comments", "toml"),
]


@pytest.mark.parametrize(("agent", "text", "kept"), REPLACEMENTS)
def test_a_correction_naming_only_the_replacement_is_saved(
    agent: str, text: str, kept: str
) -> None:
    texts = _after_work([text], agent=agent)
    assert any(kept in t for t in texts), texts


NOT_REPLACEMENTS = [
    # a thing at hand, with an article: this task's choice
    ("I put the button in the first tab.", "it's the second tab, not the first"),
    ("I used a list for the ids.", "use a set instead, it's faster here"),
    # the reason ties it to the present or says a state of the moment
    ("I pointed it at prod.", "use staging instead, prod is frozen today"),
    ("I ran it with the build script.", "use make instead, the script is broken"),
    # the other thing is nothing the agent used
    ("I added the retries with requests.", "it's Tuesday, not Monday"),
    # a trait of the thing at hand, no library or tool
    ("I made the badge red.", "it's green, not red"),
    ("I marked the field as required.", "it's optional, not required"),
    # a day the agent named
    ("I scheduled the export for Monday.", "it's Tuesday, not Monday"),
    # a pointer back to something unnamed: the record would not say what for
    ("I parsed the flags with argparse.", "we use click for that"),
    # a question
    ("I added the retries with requests.", "why not use httpx instead?"),
]


@pytest.mark.parametrize(("agent", "text"), NOT_REPLACEMENTS)
def test_a_replacement_for_the_thing_at_hand_is_not_saved(agent: str, text: str) -> None:
    assert _after_work([text], agent=agent) == []


# --- 4b. more plain forms: a kind of thing never does X, a whole-project scope, a build
# target, a build command with the reason the other one fails --------------------------------

MORE_PLAIN_RULES = [
    ("repositories never import from the web layer", "web layer"),
    ("Handlers don't touch the ORM directly, they go through the service classes.", "ORM"),
    ("card numbers never go into the audit table", "audit table"),
    ("headings are sentence case in the whole handbook", "sentence case"),
    ("use four-space indents in the entire monorepo", "four-space"),
    ("we compile for wasm32 only", "wasm32"),
    ("the firmware targets cortex-m4f and nothing older", "cortex-m4f"),
    ("please build with ninja, make chokes on the generated rules", "ninja"),
]


@pytest.mark.parametrize(("text", "kept"), MORE_PLAIN_RULES)
def test_more_plain_worded_rules_are_saved(text: str, kept: str) -> None:
    texts = _after_work([text])
    assert any(kept in t for t in texts), texts


MORE_NOT_RULES = [
    # a complaint about the work at hand, said with the same shape
    "the emails never arrive",
    "the workers don't pick up the jobs",
    "users don't like the new menu",
    # past tense
    "repositories never imported from the web layer before the rewrite",
    # a task for the whole project, to do now
    "rename the helper in the whole repo",
    "fix the typo in the entire handbook",
    # a count, a quarter, a time
    "we build for 3 hours every night",
    "we target Q3 for the launch",
    # a build command for this once
    "please build with ninja this time, make is slow today",
]


@pytest.mark.parametrize("text", MORE_NOT_RULES)
def test_more_remarks_that_only_look_like_rules_are_not_saved(text: str) -> None:
    assert _after_work([text]) == []


def test_a_plain_rule_quotes_its_own_sentence_not_the_one_off_beside_it() -> None:
    messages = [
        {"seq": 0, "role": "user", "kind": "text", "meta": {},
         "text": "sure. handlers never touch the ORM directly. and skip the slow tests for "
                 "now, I run them myself tonight"},
        {"seq": 1, "role": "assistant", "kind": "text", "meta": {}, "text": "Done."},
    ]
    ops = curate({"messages": messages, "records": [], "max_changes": 10})["operations"]
    assert [op["evidence"] for op in ops] == ["handlers never touch the ORM directly."], ops
