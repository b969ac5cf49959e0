"""Write the second unseen set: made-up sessions held out from the precision-first changes.

Written, with its targets, before the rules were changed to reach the corpus release check,
and scored once after. It mixes cue words with plain speech, and carries the records a
curator must not save: an agent claim the user rejects, an abandoned design, a negation, a
value the user corrects, one-off instructions, tool output that reads like a rule, a secret.
Claude Code JSONL, Codex rollouts and Gemini CLI session documents; every person, project,
path and sentence is invented.

Run ``python tests/curator/unseen2/build.py`` to rewrite the transcripts.
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
_CC = "/home/tamsin/dev/orchard"
_CX = "/home/ravi/proj/kestrel"
_GM = "/home/ines/work/quayside"


def sessions() -> None:
    """Every session of the second unseen set (the text is invented for this set)."""
    # an answer to the agent's question tool
    build.claude_code(
        "cc-answer-queue-backend",
        _CC,
        [
            ("user", "The thumbnail jobs block the web workers. Move them to a background queue."),
            ("ask", ("Which queue backend should the job runner use?", "SQS (Recommended)")),
            ("tool", ("Write", {"file_path": f"{_CC}/jobs/queue.py"}, "File created.")),
            ("assistant", "Thumbnail jobs go through an SQS queue now; the web workers enqueue."),
        ],
    )
    # a refused edit with the reason and what to do instead
    build.claude_code(
        "cc-reject-generated-client",
        _CC,
        [
            ("user", "The API client is missing the archive endpoint, add it."),
            (
                "reject",
                (
                    "Edit",
                    {"file_path": f"{_CC}/client/api_gen.py"},
                    "That file is generated. Change spec/openapi.yaml and run make gen instead.",
                ),
            ),
            ("tool", ("Edit", {"file_path": f"{_CC}/spec/openapi.yaml"}, _EDITED)),
            ("tool", ("Bash", {"command": "make gen"}, "generated client/api_gen.py")),
            ("assistant", "Added the archive endpoint to the spec and regenerated the client."),
        ],
    )
    # a refused command in Codex: the user types the reason next
    build.codex(
        "codex-reject-prod-migrate",
        _CX,
        [
            ("user", "Apply the new migration."),
            (
                "reject",
                (
                    "exec_command",
                    {"cmd": "alembic -x env=prod upgrade head"},
                    "not against prod from your shell. Only the release job migrates "
                    "production; use the local database.",
                ),
            ),
            ("tool", ("exec_command", {"cmd": "alembic upgrade head"}, "Running upgrade 41 -> 42")),
            ("assistant", "Applied migration 42 to the local database."),
        ],
    )
    # a task list left with undone items
    build.claude_code(
        "cc-todo-rate-limit",
        _CC,
        [
            ("user", "Add rate limiting to the public upload endpoint."),
            (
                "todo",
                [
                    ("Add a token bucket per API key", "completed"),
                    ("Return 429 with a Retry-After header", "in_progress"),
                    ("Document the limits in docs/api.md", "pending"),
                ],
            ),
            ("tool", ("Edit", {"file_path": f"{_CC}/api/uploads.py"}, _EDITED)),
            ("assistant", "The bucket is in; now wiring the 429 response."),
        ],
    )
    # the user rejects a claim the agent made; the claim is not a rule
    build.claude_code(
        "cc-reject-docker-claim",
        _CC,
        [
            ("user", "Run the test suite before you push."),
            (
                "assistant",
                "The tests need a running Docker daemon, so I skipped them and pushed.",
            ),
            (
                "user",
                "They don't need Docker. The tests run against SQLite in memory, run them.",
            ),
            ("tool", ("Bash", {"command": "pytest -q"}, "212 passed")),
            ("assistant", "All 212 tests pass on in-memory SQLite."),
        ],
    )
    # a value the user corrects in the same session
    build.codex(
        "codex-port-corrected",
        _CX,
        [
            ("user", "Write a README section on running the dev server. It listens on 8080."),
            ("tool", ("apply_patch", {"input": "*** Begin Patch"}, _PATCHED)),
            ("assistant", "Added 'Running locally' to the README, pointing at port 8080."),
            (
                "user",
                "Sorry, I misspoke: the dev server is on port 3000, 8080 is the metrics "
                "exporter. Fix the README.",
            ),
            ("tool", ("apply_patch", {"input": "*** Begin Patch"}, _PATCHED)),
            ("assistant", "The README says port 3000 now."),
        ],
    )
    # a plain statement of a project convention, Gemini format
    build.gemini(
        "gemini-plain-utc-timestamps",
        _GM,
        [
            ("user", "Add a created field to the berth booking response."),
            ("tool", ("read_file", {"path": f"{_GM}/api/booking.py"}, "class Booking: ...")),
            ("assistant", "Should created be a Unix timestamp or a string?"),
            ("user", "Every timestamp in the API is a UTC ISO-8601 string. Same here."),
            ("tool", ("replace", {"file_path": f"{_GM}/api/booking.py"}, "OK")),
            ("assistant", "created is an ISO-8601 UTC string."),
        ],
    )
    # one-off instructions only, Gemini format
    build.gemini(
        "gemini-one-off-control",
        _GM,
        [
            ("user", "For now skip the flaky e2e test so we can see the rest of the run."),
            ("tool", ("run_shell_command", {"command": "npm test -- --skip e2e"}, "41 passed")),
            ("user", "Print the first twenty lines of the server log."),
            ("tool", ("run_shell_command", {"command": "head -20 server.log"}, "boot ok")),
            ("assistant", "Everything else passes; the log shows a clean boot."),
            ("user", "thanks, that's all for today"),
        ],
    )
    # a design the session abandons
    build.claude_code(
        "cc-abandon-websocket",
        _CC,
        [
            ("user", "Let's push live order updates to the dashboard over a websocket."),
            ("tool", ("Write", {"file_path": f"{_CC}/web/live.py"}, "File created successfully.")),
            ("assistant", "Added a websocket endpoint at /ws/orders."),
            (
                "user",
                "Actually forget the websocket, the corporate proxy drops long-lived "
                "connections. Poll /orders/status every five seconds instead.",
            ),
            ("tool", ("Edit", {"file_path": f"{_CC}/web/dashboard.js"}, _EDITED)),
            ("assistant", "Removed the websocket; the dashboard polls /orders/status every 5 s."),
        ],
    )
    # a terse negated convention, Codex format
    build.codex(
        "codex-no-emoji-commits",
        _CX,
        [
            ("user", "Commit the parser fix."),
            ("tool", ("exec_command", {"cmd": "git commit -m 'Fix parser :bug:'"}, "1 file")),
            ("assistant", "Committed with the message 'Fix parser :bug:'."),
            ("user", "no emoji in commit messages, ever. amend it."),
            ("tool", ("exec_command", {"cmd": "git commit --amend -m 'Fix parser'"}, "1 file")),
            ("assistant", "Amended to 'Fix parser'."),
        ],
    )
    # a stable rule early and an unfinished request at the end
    build.claude_code(
        "cc-changelog-then-unfinished",
        _CC,
        [
            ("user", "Fix the off-by-one in the pagination helper."),
            ("tool", ("Edit", {"file_path": f"{_CC}/web/paging.py"}, _EDITED)),
            ("assistant", "Fixed: the last page was dropped when the count divided evenly."),
            (
                "user",
                "Good. Every user-visible fix gets a line in CHANGELOG.md under Unreleased.",
            ),
            ("tool", ("Edit", {"file_path": f"{_CC}/CHANGELOG.md"}, _EDITED)),
            ("user", "Now add a regression test for the even-count case."),
            ("interrupt", None),
        ],
    )
    # the agent asks in prose; the user answers with the reason
    build.codex(
        "codex-answer-csv-separator",
        _CX,
        [
            ("user", "Add a CSV export of the monthly ledger."),
            (
                "assistant",
                "Should the export use commas or semicolons as the separator?",
            ),
            ("user", "semicolons - finance opens these files in a German Excel"),
            ("tool", ("apply_patch", {"input": "*** Begin Patch"}, _PATCHED)),
            ("assistant", "The ledger export writes semicolon-separated CSV."),
        ],
    )
    # an interrupted tool call followed by the correction
    build.claude_code(
        "cc-interrupt-uv",
        _CC,
        [
            ("user", "Add the requests library."),
            ("tool", ("Bash", {"command": "pip install requests"}, "")),
            ("interrupt", None),
            ("user", "we don't use pip in this repo, it's uv: uv add requests"),
            ("tool", ("Bash", {"command": "uv add requests"}, "Resolved 12 packages")),
            ("assistant", "Added requests with uv; pyproject.toml and uv.lock updated."),
        ],
    )
    # tool output that reads like a rule; the user says nothing durable, Gemini format
    build.gemini(
        "gemini-tool-output-control",
        _GM,
        [
            ("user", "Why is the vendored geo library failing to import?"),
            (
                "tool",
                (
                    "run_shell_command",
                    {"command": "cat vendor/geo/README"},
                    "NOTE: never edit files under vendor/ by hand; always re-vendor.",
                ),
            ),
            ("assistant", "The vendored copy lacks its compiled extension; re-vendoring fixes it."),
            ("user", "ok, looks good"),
        ],
    )
    # a durable rule said with a cue word
    build.codex(
        "codex-from-now-on-drafts",
        _CX,
        [
            ("user", "Open a pull request for the retry branch."),
            ("tool", ("exec_command", {"cmd": "gh pr create --fill"}, "https://example.test/pr/7")),
            ("assistant", "Opened pull request 7."),
            ("user", "From now on open pull requests as drafts until CI is green."),
            ("tool", ("exec_command", {"cmd": "gh pr ready 7 --undo"}, "converted to draft")),
            ("assistant", "Pull request 7 is a draft now."),
        ],
    )
    # a secret in passing: never saved
    build.claude_code(
        "cc-secret-control",
        _CC,
        [
            (
                "user",
                "Log in to the staging admin to check the banner; the password is "
                "tulip-Harbor-42.",
            ),
            ("tool", ("Bash", {"command": "curl -s https://staging.example.test/admin"}, "200")),
            ("assistant", "The banner shows the new text on staging."),
        ],
    )


if __name__ == "__main__":
    sessions()
