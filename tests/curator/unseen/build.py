"""Write the unseen set: made-up sessions in plain wording, held out from rule writing.

The earlier blind sets were scored and then mined for phrasings, so their figures are no
longer held out. This set was written before the conservative curator and committed with
main's figure before any rule was changed for it. Its users speak plainly, without cue words
("The schemas live in app/schemas."), and it carries the cases a curator must not get wrong:
an agent claim the user quotes in order to reject it, a design the session abandons, a
negated preference, one-off instructions, a rule that changes value mid-session, two rules
sharing a frame, tool output that reads like a rule, answers to the agent's questions,
rejection reasons and task-list or unfinished-request checkpoints. Claude Code JSONL and
Codex rollouts only; every person, project, path and sentence is invented.

Run ``python tests/curator/unseen/build.py`` to rewrite the transcripts.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))

from tests.curator.blind import build  # noqa: E402

build.OUT = HERE / "transcripts"

_EDITED = "The file has been updated."
_PATCHED = "Success. Updated the following files."


def sessions() -> None:
    """Every session of the unseen set (the text is invented for this set)."""
    # a plain statement of where things live, inside a task request
    build.claude_code(
        "cc-plain-schema-location",
        "/home/mirela/src/ledgerline",
        [
            (
                "user",
                "Add a request schema for the invoice export endpoint. The schemas live in "
                "app/schemas, one module per resource.",
            ),
            ("tool", ("Bash", {"command": "ls app/schemas"}, "customer.py\ninvoice.py")),
            (
                "tool",
                (
                    "Write",
                    {"file_path": "/home/mirela/src/ledgerline/app/schemas/export.py"},
                    "File created successfully.",
                ),
            ),
            ("assistant", "Added app/schemas/export.py with an ExportRequest model."),
            ("user", "good"),
        ],
    )
    # the user quotes an agent claim in order to reject it
    build.claude_code(
        "cc-reject-quoted-claim",
        "/home/mirela/src/ledgerline",
        [
            ("user", "Tidy up the indentation in report/render.py, it is all over the place."),
            (
                "assistant",
                "This project uses tabs for indentation, so I converted the file to tabs.",
            ),
            (
                "user",
                '"This project uses tabs for indentation" is wrong. We indent with four '
                "spaces everywhere, put it back.",
            ),
            (
                "tool",
                (
                    "Edit",
                    {"file_path": "/home/mirela/src/ledgerline/report/render.py"},
                    _EDITED,
                ),
            ),
            ("assistant", "Back to four spaces throughout report/render.py."),
        ],
    )
    # a negated preference, said tersely
    build.codex(
        "codex-no-tabs-please",
        "/home/olu/work/tidepool",
        [
            ("user", "Write a Makefile target that runs the unit tests."),
            ("tool", ("apply_patch", {"input": "*** Begin Patch"}, _PATCHED)),
            ("assistant", "Added a `test` target; the recipe lines are indented with tabs."),
            (
                "user",
                "the recipe needs tabs, fine, but no tabs please in the Python files, "
                "the formatter rejects them",
            ),
            ("assistant", "Understood, only the Makefile uses tabs."),
        ],
    )
    # a design the session abandons for another
    build.codex(
        "codex-abandoned-redis-design",
        "/home/olu/work/tidepool",
        [
            ("user", "Let's keep the login sessions in Redis, start on the session store."),
            ("tool", ("apply_patch", {"input": "*** Begin Patch"}, _PATCHED)),
            ("assistant", "Added a RedisSessionStore with a one-hour expiry."),
            (
                "user",
                "Hmm, scrap Redis, it is one more service to run in every environment. "
                "Keep the sessions in the Postgres sessions table we already have.",
            ),
            ("tool", ("apply_patch", {"input": "*** Begin Patch"}, _PATCHED)),
            (
                "assistant",
                "Removed RedisSessionStore; sessions are rows in the Postgres sessions table.",
            ),
        ],
    )
    # one-off instructions only: nothing durable
    build.claude_code(
        "cc-one-off-instructions-control",
        "/home/mirela/src/ledgerline",
        [
            (
                "user",
                "Just for this run, skip the integration tests, they need the VPN and I am "
                "on a train.",
            ),
            ("tool", ("Bash", {"command": "pytest -m 'not integration' -q"}, "88 passed")),
            ("user", "Now rename the variable tmp to buffer in parse.py."),
            (
                "tool",
                ("Edit", {"file_path": "/home/mirela/src/ledgerline/parse.py"}, _EDITED),
            ),
            ("assistant", "Renamed tmp to buffer in parse.py; 88 unit tests pass."),
        ],
    )
    # an answer to the agent's question
    build.claude_code(
        "cc-answer-date-library",
        "/home/anouk/code/harbourmaster",
        [
            ("user", "The berth report needs the arrival dates in the harbour's time zone."),
            ("ask", ("Which date library should the report use?", "pendulum, same as billing")),
            ("tool", ("Edit", {"file_path": "/home/anouk/code/harbourmaster/report.py"}, _EDITED)),
            ("assistant", "The berth report converts arrivals with pendulum now."),
        ],
    )
    # a rejected tool call with a reason
    build.claude_code(
        "cc-reject-push-main",
        "/home/anouk/code/harbourmaster",
        [
            ("user", "Commit the berth report change."),
            ("tool", ("Bash", {"command": "git commit -am 'Berth report time zone'"}, "1 file")),
            (
                "reject",
                (
                    "Bash",
                    {"command": "git push origin main"},
                    "We never push straight to main here. Open a pull request from a "
                    "feature branch.",
                ),
            ),
            ("assistant", "Pushed to feature/berth-tz instead and opened a pull request."),
        ],
    )
    # a task list left unfinished
    build.claude_code(
        "cc-todo-checkpoint",
        "/home/anouk/code/harbourmaster",
        [
            ("user", "Add an audit trail for berth changes."),
            (
                "todo",
                [
                    ("Add the audit_log table migration", "completed"),
                    ("Write audit entries from the berth service", "in_progress"),
                    ("Show the audit trail on the berth page", "pending"),
                ],
            ),
            ("tool", ("Write", {"file_path": "/home/anouk/code/harbourmaster/m/0042.sql"}, "ok")),
            ("assistant", "The migration is in; starting on the berth service writes."),
        ],
    )
    # a request interrupted before it was done
    build.claude_code(
        "cc-interrupted-exporter-port",
        "/home/mirela/src/ledgerline",
        [
            (
                "user",
                "Port the CSV exporter to the new writer API, then update docs/export.md to match.",
            ),
            (
                "tool",
                ("Edit", {"file_path": "/home/mirela/src/ledgerline/export/csv.py"}, _EDITED),
            ),
            ("interrupt", None),
        ],
    )
    # a plain durable statement about an environment
    build.codex(
        "codex-plain-staging-readonly",
        "/home/olu/work/tidepool",
        [
            ("user", "Add the index on events.created_at."),
            ("tool", ("apply_patch", {"input": "*** Begin Patch"}, _PATCHED)),
            ("assistant", "Wrote migration 0031; shall I apply it to staging now?"),
            (
                "user",
                "No. The staging database is read-only for us; migrations reach it only "
                "through the deploy pipeline.",
            ),
            ("assistant", "Left it for the pipeline."),
        ],
    )
    # a rule that changes value in the same session
    build.codex(
        "codex-npm-then-pnpm",
        "/home/olu/work/tidepool-web",
        [
            ("user", "Install dependencies with npm and run the build."),
            ("tool", ("exec_command", {"cmd": "npm install"}, "added 912 packages")),
            ("assistant", "Installed with npm and the build passes."),
            (
                "user",
                "Actually we moved to pnpm last week, use pnpm for installs, the lockfile is "
                "pnpm-lock.yaml now.",
            ),
            ("tool", ("exec_command", {"cmd": "pnpm install"}, "Done in 4.1s")),
            ("assistant", "Reinstalled with pnpm."),
        ],
    )
    # two rules sharing a frame but not a subject
    build.codex(
        "codex-two-precommit-rules",
        "/home/olu/work/tidepool",
        [
            ("user", "Fix the lint failure in cli.py."),
            ("tool", ("apply_patch", {"input": "*** Begin Patch"}, _PATCHED)),
            ("assistant", "Fixed the unused import in cli.py."),
            (
                "user",
                "Thanks. Run ruff before committing. And run cargo fmt before committing "
                "too, the native crate lives in native/.",
            ),
            ("assistant", "Will do both."),
        ],
    )
    # a prohibition with "Do not"
    build.claude_code(
        "cc-do-not-commit-main",
        "/home/anouk/code/harbourmaster",
        [
            ("user", "Bump the version to 2.4.0."),
            ("tool", ("Edit", {"file_path": "/home/anouk/code/harbourmaster/VERSION"}, _EDITED)),
            (
                "user",
                "Do not commit to main; I merge from the release branch myself.",
            ),
            ("assistant", "Committed on release/2.4 and left main alone."),
        ],
    )
    # tool output that reads like a rule; the user says nothing durable
    build.codex(
        "codex-tool-output-control",
        "/home/olu/work/tidepool",
        [
            ("user", "Why does the deploy script fail?"),
            (
                "tool",
                (
                    "exec_command",
                    {"cmd": "./deploy.sh --dry-run"},
                    "WARNING: always pass --force when the lock file is stale\n"
                    "error: lock held by pid 4411",
                ),
            ),
            ("assistant", "A stale deploy lock held by pid 4411; removing it fixes the run."),
            ("user", "ok thanks"),
        ],
    )
    # the agent's guess is corrected by a plain fact
    build.claude_code(
        "cc-correct-key-case",
        "/home/mirela/src/ledgerline",
        [
            ("user", "Expose the invoice totals on the API."),
            ("assistant", "I'll assume the API uses snake_case keys, like the database."),
            ("user", "No, camelCase. The mobile client depends on it."),
            ("tool", ("Edit", {"file_path": "/home/mirela/src/ledgerline/api/totals.py"}, _EDITED)),
            ("assistant", "The totals endpoint returns camelCase keys."),
        ],
    )
    # a branch convention in plain words
    build.codex(
        "codex-plain-branch-base",
        "/home/olu/work/tidepool",
        [
            ("user", "Start a branch for the retry work. Feature branches are cut from develop."),
            ("tool", ("exec_command", {"cmd": "git switch -c feature/retry develop"}, "")),
            ("assistant", "On feature/retry, branched from develop."),
        ],
    )


if __name__ == "__main__":
    sessions()
