"""Write the third blind set: made-up sessions in styles the corpus and the first two sets lack.

The first two blind sets were scored and then used to find the kinds the curator missed, so
their later figures are no longer blind. This set was written before any rule was changed
for it and committed before the curator ran on it. Its sessions are in styles the others
barely have: a user correcting the agent mid-task ("no, not X, Y"), preferences said in
passing inside a long request, a decision reached after discussing options (and one picked
by letter or number only), a lesson learnt from a failure, a checkpoint at the end of an
interrupted task that names the errors it stopped on, non-native English, dictated
run-ons (with "then" for "than"), terse one-word answers, sessions with nothing worth
remembering and sessions carrying secrets. Same writers and formats as the first set; every
person, project, tool name and sentence is invented.

Run ``python tests/curator/blind3/build.py`` to rewrite the transcripts.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))

from tests.curator.blind import build  # noqa: E402

build.OUT = HERE / "transcripts"

_EDITED = "The file has been updated."


def sessions() -> None:
    """Every session of the third blind set (the text is invented for this set)."""
    # a correction mid-task: the agent reaches for one library, the user names the house one
    build.claude_code(
        "cc-correct-httpx-not-requests",
        "/home/ines/src/kelpwatch",
        [
            (
                "user",
                "The buoy poller gives up after the first timeout. Make it retry three times "
                "with a growing delay.",
            ),
            (
                "tool",
                (
                    "Edit",
                    {
                        "file_path": "/home/ines/src/kelpwatch/poller/fetch.py",
                        "old_string": "import json",
                        "new_string": "import json\nimport requests",
                    },
                    _EDITED,
                ),
            ),
            (
                "assistant",
                "I switched the poller to requests with a Retry adapter so the back-off is "
                "handled by urllib3.",
            ),
            (
                "user",
                "no, not requests - this service talks HTTP through httpx everywhere, keep "
                "it on httpx and do the retries with its transport.",
            ),
            (
                "tool",
                (
                    "Edit",
                    {
                        "file_path": "/home/ines/src/kelpwatch/poller/fetch.py",
                        "old_string": "import requests",
                        "new_string": "import httpx",
                    },
                    _EDITED,
                ),
            ),
            (
                "tool",
                ("Bash", {"command": "pytest tests/poller -q"}, "7 passed in 0.41s"),
            ),
            (
                "assistant",
                "Back on httpx: an HTTPTransport(retries=3) plus a small sleep of 1, 2 and "
                "4 seconds between attempts. The 7 poller tests pass.",
            ),
            ("user", "ok"),
        ],
    )
    # preferences said in passing inside a longer request
    build.codex(
        "codex-long-request-passing-prefs",
        "/home/tomasz/work/orrery",
        [
            (
                "user",
                "Could you add an endpoint that returns the next five transits for a given "
                "observatory, it should take the observatory id and an optional date, and "
                "return JSON with the body name, the start and end time and the altitude "
                "at mid-transit - oh and I much prefer dataclasses over plain dicts for "
                "things like that, and put the timestamps out as ISO 8601 in UTC, the "
                "frontend parses nothing else. The tests for the other endpoints are in "
                "tests/api if you need an example.",
            ),
            (
                "tool",
                (
                    "exec_command",
                    {"cmd": "ls tests/api"},
                    "test_bodies.py\ntest_observatories.py",
                ),
            ),
            ("tool", ("apply_patch", {"input": "*** Begin Patch"}, "Success.")),
            ("tool", ("exec_command", {"cmd": "pytest tests/api -q"}, "23 passed")),
            (
                "assistant",
                "Added GET /observatories/{id}/transits with a Transit dataclass; times are "
                "ISO 8601 in UTC. Added tests/api/test_transits.py; all 23 API tests pass.",
            ),
            ("user", "great thanks"),
        ],
    )
    # a decision after discussing options over several turns, picked by position only
    build.gemini(
        "gemini-upload-storage-discussion",
        "/home/priya/code/fernbank",
        [
            (
                "user",
                "Members will upload scans of their plant cuttings, a few MB each. Where "
                "should we keep the files?",
            ),
            (
                "assistant",
                "Three options: 1) blobs in the Postgres database, simplest backups but the "
                "database grows fast; 2) files on the app server's disk with a nightly rsync "
                "to the backup box; 3) an S3-compatible object store such as the one your "
                "host offers, which costs a little each month but scales without work.",
            ),
            (
                "user",
                "how big would the database get with option 1 if we have 2000 members "
                "uploading maybe ten scans a year?",
            ),
            (
                "assistant",
                "About 2000 x 10 x 3 MB = 60 GB a year, and every backup would carry all of "
                "it.",
            ),
            (
                "user",
                "hm, too much for the db. and we move hosting next year so nothing tied to "
                "this server. ok let's take the third one.",
            ),
            (
                "tool",
                (
                    "write_file",
                    {
                        "file_path": "/home/priya/code/fernbank/app/storage.py",
                        "content": "...",
                    },
                    "Successfully created file.",
                ),
            ),
            (
                "assistant",
                "Added app/storage.py with an S3 client configured from STORAGE_URL; "
                "uploads go to the object store under scans/<member>/.",
            ),
        ],
    )
    # a lesson learnt from a failure, acknowledged by the user
    build.claude_code(
        "cc-bom-csv-failure-lesson",
        "/home/ines/src/kelpwatch",
        [
            (
                "user",
                "The station import says 0 rows for stations_march.csv but the file has 140 "
                "lines. What's going on?",
            ),
            (
                "tool",
                (
                    "Bash",
                    {"command": "python -m kelpwatch.importer data/stations_march.csv"},
                    "imported 0 rows (skipped 140: missing column 'station_id')",
                ),
            ),
            (
                "tool",
                (
                    "Bash",
                    {"command": "head -c 16 data/stations_march.csv | xxd"},
                    "00000000: efbb bf73 7461 7469 6f6e 5f69 6420 2c6c  ...station_id ,l",
                ),
            ),
            (
                "assistant",
                "The file starts with a UTF-8 byte order mark, so the first header is read "
                "as '\\ufeffstation_id' and never matches. Spreadsheet exports add that "
                "mark. I changed the importer to open files with encoding='utf-8-sig', "
                "which strips it.",
            ),
            (
                "tool",
                (
                    "Bash",
                    {"command": "python -m kelpwatch.importer data/stations_march.csv"},
                    "imported 140 rows",
                ),
            ),
            ("assistant", "All 140 rows import now."),
            (
                "user",
                "argh, that cost me an afternoon last month too. good to know, the field "
                "team always sends their sheets from Excel.",
            ),
        ],
    )
    # an interrupted task: the checkpoint must name what is left and the errors it stopped on
    build.codex(
        "codex-upgrade-interrupted-errors",
        "/home/tomasz/work/orrery",
        [
            ("user", "Upgrade pydantic from 1.10 to 2 across the project."),
            (
                "todo",
                [
                    ("Bump pydantic in pyproject.toml", "completed"),
                    ("Replace .dict() and .parse_obj() calls", "completed"),
                    ("Port validators to field_validator", "in_progress"),
                    ("Fix the settings module for pydantic-settings", "pending"),
                ],
            ),
            (
                "tool",
                (
                    "exec_command",
                    {"cmd": "pytest -q"},
                    "FAILED tests/test_models.py::test_altitude_range - PydanticUserError: "
                    "`@validator` has been removed\nFAILED tests/test_settings.py::test_env - "
                    "ImportError: cannot import name 'BaseSettings' from 'pydantic'\n2 failed, "
                    "61 passed",
                ),
            ),
            (
                "assistant",
                "61 of 63 tests pass. Two are left: test_altitude_range fails because the "
                "`@validator` on Transit.altitude still needs porting to field_validator, "
                "and test_env fails with ImportError: BaseSettings moved to the "
                "pydantic-settings package, which is not installed yet.",
            ),
            (
                "user",
                "have to jump into a meeting now, leave it like that and we finish tomorrow",
            ),
        ],
    )
    # non-native English: rules and a correction in imperfect phrasing
    build.gemini(
        "gemini-non-native-rules",
        "/home/jurgen/projekte/zaunkoenig",
        [
            (
                "user",
                "hello, please can you make the function for the invoice number more "
                "readable. and for this project always you write the comments and the "
                "variable names in english, not in german, also when the old code is in "
                "german.",
            ),
            (
                "tool",
                (
                    "replace",
                    {"file_path": "/home/jurgen/projekte/zaunkoenig/rechnung.py"},
                    "OK",
                ),
            ),
            (
                "assistant",
                "I split next_invoice_number into two helpers and renamed rechnungsNr to "
                "invoice_number. Then I ran pytest directly: 12 passed.",
            ),
            (
                "user",
                "thank you. but the tests we run them only with tox here, never direct "
                "pytest, because tox make the right environment with the old django.",
            ),
            (
                "tool",
                ("run_shell_command", {"command": "tox -e py311"}, "py311: OK (12 passed)"),
            ),
            ("assistant", "Ran them through tox -e py311: 12 passed."),
        ],
    )
    # dictation: one long run-on with two different requests and "then" for "than"
    build.claude_code(
        "cc-dictated-runon",
        "/Users/olu/dev/tallyho",
        [
            (
                "user",
                "okay so what I want is the export to also do a PDF version of the monthly "
                "statement using the same header as the CSV one and um when you do the "
                "rounding do it on each line item rather then on the total because the "
                "auditors add up the lines themselves and also never put the customer "
                "email in the file name of an export those files end up on the shared "
                "drive and then can you also check why the February totals are off by a "
                "cent",
            ),
            (
                "tool",
                (
                    "Read",
                    {"file_path": "/Users/olu/dev/tallyho/tallyho/export.py"},
                    "def export_csv(statement, path): ...",
                ),
            ),
            (
                "tool",
                (
                    "Edit",
                    {
                        "file_path": "/Users/olu/dev/tallyho/tallyho/export.py",
                        "old_string": "round(total, 2)",
                        "new_string": "sum(round(x, 2) for x in lines)",
                    },
                    _EDITED,
                ),
            ),
            (
                "assistant",
                "Added export_pdf with the CSV header, rounding is per line item now, and "
                "export file names use the statement id instead of the email. The February "
                "cent came from rounding the total: with per-line rounding it matches.",
            ),
            ("user", "perfect"),
        ],
    )
    # terse one-word answers to the agent's questions
    build.codex(
        "codex-terse-answers",
        "/home/mira/src/lanternfish",
        [
            ("user", "add a flag to the lanternfish CLI for the output directory"),
            (
                "assistant",
                "Should the CLI flags be kebab-case (--output-dir) or snake_case "
                "(--output_dir)? The existing ones are mixed.",
            ),
            ("user", "kebab"),
            ("tool", ("apply_patch", {"input": "*** Begin Patch"}, "Success.")),
            ("assistant", "Added --output-dir. Should I rename the old snake_case flags too?"),
            ("user", "yes"),
            ("tool", ("apply_patch", {"input": "*** Begin Patch"}, "Success.")),
            ("assistant", "Renamed --max_depth and --dry_run. Commit?"),
            ("user", "no"),
            ("assistant", "Left the changes uncommitted."),
        ],
    )
    # nothing worth remembering: questions, a one-off and a routine fix
    build.gemini(
        "gemini-control-nothing-to-keep",
        "/home/priya/code/fernbank",
        [
            ("user", "what does this error mean: TypeError: 'NoneType' object is not iterable"),
            (
                "assistant",
                "Something you loop over is None. In app/views.py line 88, "
                "get_cuttings() returns None when the member has no cuttings.",
            ),
            ("user", "ah ok. make it return an empty list then"),
            (
                "tool",
                ("replace", {"file_path": "/home/priya/code/fernbank/app/views.py"}, "OK"),
            ),
            ("assistant", "get_cuttings() returns [] now when there are none."),
            ("user", "just this once skip the pre-commit hooks, I'm in a hurry"),
            (
                "tool",
                (
                    "run_shell_command",
                    {"command": "git commit --no-verify -am 'Return [] for no cuttings'"},
                    "[main 7c1d2e9] Return [] for no cuttings",
                ),
            ),
            ("assistant", "Committed without running the hooks."),
            ("user", "ty"),
        ],
    )
    build.claude_code(
        "cc-control-explain-and-format",
        "/Users/olu/dev/tallyho",
        [
            ("user", "explain what the decorator on line 40 of ledger.py does"),
            (
                "assistant",
                "@functools.cache memoises fiscal_year_bounds(): each year's start and end "
                "are computed once and then returned from the cache.",
            ),
            ("user", "k. run black on ledger.py"),
            ("tool", ("Bash", {"command": "black tallyho/ledger.py"}, "reformatted ledger.py")),
            ("assistant", "Reformatted ledger.py."),
            ("user", "thx, bye"),
        ],
    )
    # secrets next to a durable rule: the rule is kept, the secrets never
    build.codex(
        "codex-secrets-with-rule",
        "/home/mira/src/lanternfish",
        [
            (
                "user",
                "Run the monthly report against the database. The URL is "
                "postgres://report:Vq8!tLm2#Wz@db-main.lanternfish.internal/fish and the "
                "GitHub token for pushing the PDF is ghp_R4nD0mFaK3T0k3nV4lu3xYz1234567890a. "
                "Reports always go against the read replica db-ro, never the primary.",
            ),
            (
                "tool",
                (
                    "exec_command",
                    {"cmd": "python report.py --db db-ro --month 2026-02"},
                    "wrote report-2026-02.pdf (14 pages)",
                ),
            ),
            ("assistant", "Wrote report-2026-02.pdf from the read replica and pushed it."),
            ("user", "cheers"),
        ],
    )
    # a secret the user asks to remember: it must still not be saved
    build.claude_code(
        "cc-secret-asked-to-remember",
        "/home/ines/src/kelpwatch",
        [
            (
                "user",
                "remember the SMTP password for the alert mails is Plover-Stack-9921, I "
                "always forget it. now send a test alert to me.",
            ),
            (
                "tool",
                (
                    "Bash",
                    {"command": "python -m kelpwatch.alerts --test --to ines@example.org"},
                    "sent 1 message",
                ),
            ),
            ("assistant", "Sent a test alert to ines@example.org."),
            ("user", "got it, thanks"),
        ],
    )
    # a decision picked by letter from the agent's options
    build.claude_code(
        "cc-decision-by-letter",
        "/home/mira/src/lanternfish",
        [
            (
                "user",
                "The dashboard should show new sonar readings live. How would you push them "
                "to the browser?",
            ),
            (
                "assistant",
                "A) server-sent events from the existing aiohttp app, one-way and simple; "
                "B) WebSockets, two-way but more code on both ends; C) polling every 5 "
                "seconds, no server changes but more load.",
            ),
            ("user", "A. we never send anything back from the dashboard."),
            (
                "tool",
                (
                    "Write",
                    {
                        "file_path": "/home/mira/src/lanternfish/web/stream.py",
                        "content": "...",
                    },
                    "File created successfully.",
                ),
            ),
            ("assistant", "Added /stream with server-sent events; the dashboard subscribes."),
        ],
    )
    # a correction of a rejected tool call, said in non-native English, plus a one-off
    build.gemini(
        "gemini-correct-package-manager",
        "/home/jurgen/projekte/zaunkoenig",
        [
            ("user", "add the library for parsing the iban numbers"),
            (
                "reject",
                (
                    "run_shell_command",
                    {"command": "pip install schwifty"},
                    "no not pip, in this project we use uv for all the packages, so uv add",
                ),
            ),
            (
                "tool",
                ("run_shell_command", {"command": "uv add schwifty"}, "+ schwifty==2024.6.1"),
            ),
            ("assistant", "Added schwifty with uv add."),
            ("user", "for now leave the old validator in place, we remove it next week"),
            ("assistant", "Kept the old validator alongside."),
        ],
    )
    # a lesson from a failed deploy, told by the user after the agent's fix did not hold
    build.codex(
        "codex-cache-purge-lesson",
        "/home/tomasz/work/orrery",
        [
            ("user", "the new star chart css is deployed but the site still shows the old one"),
            (
                "assistant",
                "The deploy finished and static/chart.css on the server has the new rules. "
                "It may be your browser cache; try a hard reload.",
            ),
            (
                "user",
                "hard reload doesn't help, colleagues see it too. I think the CDN still has "
                "it.",
            ),
            (
                "tool",
                (
                    "exec_command",
                    {"cmd": "cdnctl purge --path /static/*"},
                    "purge queued: 214 objects",
                ),
            ),
            ("assistant", "Purged /static/* on the CDN; the new chart.css is served now."),
            (
                "user",
                "right, lesson learned: after every deploy that touches static files the CDN "
                "has to be purged, it does not pick up changes by itself.",
            ),
        ],
    )


if __name__ == "__main__":
    sessions()
