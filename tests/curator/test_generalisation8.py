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
