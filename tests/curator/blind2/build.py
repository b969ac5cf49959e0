"""Write the second blind set: made-up sessions written after the first set's fixes.

The first blind set (tests/curator/blind/) was scored once and then used to find the kinds
the curator missed, so its later figures are no longer blind. This set was written after
those fixes and committed before the curator was run on it: it is the honest measurement of
whether they generalise. Same writers and formats as the first set; every sentence invented.

Run ``python tests/curator/blind2/build.py`` to rewrite the transcripts.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))

from tests.curator.blind import build  # noqa: E402

build.OUT = HERE / "transcripts"


def sessions() -> None:
    """Every session of the second blind set (the text is invented for this set)."""
    build.claude_code(
        "cc-offline-ci-schema-version",
        "/home/mo/code/parcel-tracker",
        [
            (
                "user",
                "Add a test for the carrier lookup that uses a recorded response. Heads "
                "up: the CI runners have no network access, so no test may call a real "
                "carrier API.",
            ),
            (
                "tool",
                (
                    "Write",
                    {
                        "file_path": "/home/mo/code/parcel-tracker/tests/test_lookup.py",
                        "content": "...",
                    },
                    "File created successfully.",
                ),
            ),
            ("tool", ("Bash", {"command": "pytest tests/test_lookup.py -q"}, "2 passed")),
            (
                "assistant",
                "Added tests/test_lookup.py with a recorded DHL response; both tests pass offline.",
            ),
            (
                "user",
                "good. one more thing: whenever the API schema changes, the version in "
                "openapi.yaml gets bumped too.",
            ),
            ("assistant", "Understood, I'll bump openapi.yaml's version with schema changes."),
        ],
    )
    build.codex(
        "codex-pytest-shop-logger",
        "/srv/repos/meter-reader",
        [
            ("user", "Write tests for the CSV parser in parser.py."),
            ("tool", ("apply_patch", {"input": "*** Begin Patch"}, "Success.")),
            (
                "assistant",
                "Added tests/test_parser.py with a unittest.TestCase class covering "
                "empty files, bad rows and the happy path.",
            ),
            (
                "user",
                "we're a pytest shop - rewrite those as plain test functions with fixtures, "
                "no TestCase classes.",
            ),
            ("tool", ("apply_patch", {"input": "*** Begin Patch"}, "Success.")),
            (
                "assistant",
                "Rewrote them as pytest functions; I also left a print() in the parser "
                "to show skipped rows.",
            ),
            ("user", "Take the print out. Diagnostics go through the module logger, not print."),
            ("tool", ("apply_patch", {"input": "*** Begin Patch"}, "Success.")),
            ("assistant", "Replaced it with logger.debug. All 9 tests pass."),
        ],
    )
    build.gemini(
        "gemini-config-format-choice",
        "/home/kit/dev/sprout",
        [
            ("user", "The app needs a config file for the sync interval and the server URL."),
            (
                "assistant",
                "Should the config be YAML or TOML? YAML is more common for apps like "
                "this; TOML matches pyproject.toml.",
            ),
            ("user", "TOML. Same as pyproject, one less format for people to learn."),
            (
                "tool",
                (
                    "write_file",
                    {"file_path": "/home/kit/dev/sprout/sprout.toml", "content": "..."},
                    "Successfully created file.",
                ),
            ),
            ("assistant", "Added sprout.toml and a loader using tomllib."),
            ("user", "thx"),
        ],
    )
    build.claude_code(
        "cc-api-versioning-answer",
        "/home/mo/code/parcel-tracker",
        [
            ("user", "We're about to publish the API to partners. Set up versioning."),
            ("ask", ("How should the public API be versioned?", "Path prefix (/v1/...)")),
            (
                "tool",
                (
                    "Edit",
                    {"file_path": "src/api/routes.py", "old_string": "a", "new_string": "b"},
                    "The file has been updated.",
                ),
            ),
            (
                "assistant",
                "All routes are now under /v1; the old unprefixed paths answer 308 redirects.",
            ),
            ("user", "perfect"),
        ],
    )
    build.codex(
        "codex-node-version-lesson",
        "/home/lee/projects/quill",
        [
            ("user", "npm run build fails on my machine, can you see why?"),
            (
                "tool",
                ("exec_command", {"cmd": "npm run build"}, "SyntaxError: Unexpected token '??='"),
            ),
            (
                "assistant",
                "The build uses logical assignment operators that your Node version "
                "does not support. Which Node version are you on?",
            ),
            ("user", "18 probably. the build needs node 20 or newer, run nvm use 20 first"),
            ("tool", ("exec_command", {"cmd": "nvm use 20 && npm run build"}, "built in 4.1s")),
            ("assistant", "With Node 20 the build succeeds."),
            ("user", "ok works"),
        ],
    )
    build.gemini(
        "gemini-dark-mode-half-done",
        "/home/kit/dev/sprout",
        [
            (
                "user",
                "Add a dark mode to the dashboard with a toggle in settings, and remember "
                "the user's choice between visits.",
            ),
            (
                "tool",
                (
                    "write_file",
                    {"file_path": "/home/kit/dev/sprout/web/theme.css", "content": "..."},
                    "Successfully created file.",
                ),
            ),
            (
                "assistant",
                "I've added dark theme tokens in web/theme.css. The settings toggle "
                "and saving the choice in localStorage are not done yet.",
            ),
        ],
    )
    build.claude_code(
        "cc-control-one-run-questions",
        "/home/mo/code/parcel-tracker",
        [
            ("user", "Run the tests but skip the slow ones for this run only."),
            ("tool", ("Bash", {"command": "pytest -m 'not slow' -q"}, "88 passed, 12 deselected")),
            ("assistant", "88 tests pass; 12 slow tests were deselected."),
            ("user", "what does the regex in tracking_number.py match?"),
            ("assistant", "It matches 10 or 12 digit numbers with an optional 'JD' prefix."),
            ("user", "ok thanks!"),
        ],
    )
    build.codex(
        "codex-control-cloud-key",
        "/srv/repos/meter-reader",
        [
            (
                "user",
                "Upload export.csv to the test bucket. Credentials: AKIAQ4EXAMPLE7TESTKEY "
                "with secret 9sKd8fJ2mQpL0vXz4RtY7uWb3NcE6hGa1iOe5TyU. Use the us-east-1 "
                "region for this one.",
            ),
            (
                "tool",
                (
                    "exec_command",
                    {"cmd": "aws s3 cp export.csv s3://meter-test/"},
                    "upload: ./export.csv to s3://meter-test/export.csv",
                ),
            ),
            ("assistant", "Uploaded export.csv to s3://meter-test/."),
            ("user", "thanks"),
        ],
    )
    build.claude_code(
        "cc-claude-md-make-check",
        "/home/dev/src/tidewater",
        [
            (
                "user",
                "Put this in CLAUDE.md: run `make check` before every commit, it runs "
                "clippy, fmt and the tests together.",
            ),
            (
                "tool",
                (
                    "Edit",
                    {
                        "file_path": "/home/dev/src/tidewater/CLAUDE.md",
                        "old_string": "",
                        "new_string": "...",
                    },
                    "The file has been updated.",
                ),
            ),
            ("assistant", "Added a 'Before committing' section to CLAUDE.md."),
        ],
    )
    build.gemini(
        "gemini-commit-style-everywhere",
        "/home/ana/code/bookshelf",
        [
            (
                "user",
                "Commit the fix for the ISBN validator. In all my projects I want commit "
                "messages in the imperative mood with a subject under 72 characters.",
            ),
            (
                "tool",
                (
                    "run_shell_command",
                    {"command": "git commit -am 'Fix ISBN-10 checksum validation'"},
                    "[main 1a2b3c4] Fix",
                ),
            ),
            ("assistant", "Committed as 'Fix ISBN-10 checksum validation'."),
        ],
    )
    build.claude_code(
        "cc-generated-code-interrupt",
        "/home/dev/work/ledgerline",
        [
            ("user", "Add a `currency` field to the Invoice message."),
            (
                "tool",
                (
                    "Read",
                    {"file_path": "/home/dev/work/ledgerline/gen/invoice_pb2.py"},
                    "class Invoice(...)",
                ),
            ),
            ("interrupt", None),
            (
                "user",
                "Stop - everything in gen/ is generated by buf. Change proto/invoice.proto "
                "and run buf generate instead of editing the output.",
            ),
            (
                "tool",
                (
                    "Edit",
                    {
                        "file_path": "/home/dev/work/ledgerline/proto/invoice.proto",
                        "old_string": "a",
                        "new_string": "b",
                    },
                    "The file has been updated.",
                ),
            ),
            ("tool", ("Bash", {"command": "buf generate"}, "")),
            (
                "assistant",
                "Added `string currency = 7;` to proto/invoice.proto and regenerated gen/.",
            ),
        ],
    )


if __name__ == "__main__":
    sessions()
