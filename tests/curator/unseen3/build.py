"""Write the third unseen set: made-up sessions written without reading the curator's rules.

Its author saw only the transcript builders, the earlier sets' targets and the corpus notes on
what a good curator extracts, never the rules, and the curator was not run on it before it was
committed: it measures how the rules generalise. It stresses durable statements in plain
phrasings ("we use X here", "please keep Y", "in this repo Z"), refusals whose reasons name
dotted paths and versions, answers to the agent's questions, task lists and work that really
stopped, work the agent finished and reported in plain words (no checkpoint may be left), value
changes (tool, number, branch), negations, one-off instructions, tool output that reads like a
rule, a quoted line the user rejects, and controls that must yield nothing. Claude Code JSONL,
Codex rollouts and Gemini CLI session documents; every person, project, path and sentence is
invented.

Run ``python tests/curator/unseen3/build.py`` to rewrite the transcripts.
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
_CC = "/home/oswin/code/pebblewick"
_CX = "/home/marisol/src/brambleway"
_GM = "/home/teodor/proj/saltmarsh"


def _claude_code() -> None:
    """The Claude Code sessions (photo catalogue project)."""
    # a refused edit whose reason names the real file (a dotted path)
    build.claude_code(
        "cc-reject-sphinx-conf",
        _CC,
        [
            ("user", "Turn on autodoc type hints for the API docs."),
            (
                "reject",
                (
                    "Edit",
                    {"file_path": f"{_CC}/docs/conf.py"},
                    "Not that one: docs/conf.py only re-exports. The settings live in "
                    "docs/source/conf_base.py, change it there.",
                ),
            ),
            ("tool", ("Edit", {"file_path": f"{_CC}/docs/source/conf_base.py"}, _EDITED)),
            ("tool", ("Bash", {"command": "make -C docs html"}, "build succeeded.")),
            ("assistant", "conf_base.py sets autodoc_typehints = 'description'; the build passes."),
        ],
    )
    # an answer through the question tool
    build.claude_code(
        "cc-ask-test-runner",
        _CC,
        [
            ("user", "The date helpers in web/src/dates.ts have no tests. Give them some."),
            (
                "ask",
                (
                    "Which test runner should the date helper specs use?",
                    "Vitest, same as packages/gallery",
                ),
            ),
            ("tool", ("Write", {"file_path": f"{_CC}/web/src/dates.test.ts"}, "File created.")),
            ("tool", ("Bash", {"command": "npx vitest run web/src"}, "Tests  18 passed (18)")),
            ("assistant", "dates.test.ts has 18 Vitest specs and all of them pass."),
        ],
    )
    # a task list left with undone items
    build.claude_code(
        "cc-todo-renderer-split",
        _CC,
        [
            ("user", "Split the thumbnail renderer into one module per image format."),
            (
                "todo",
                [
                    ("Move the PNG path to render/png.py", "completed"),
                    ("Move the WebP path to render/webp.py", "in_progress"),
                    ("Delete the old render_all() switch", "pending"),
                ],
            ),
            ("tool", ("Write", {"file_path": f"{_CC}/render/png.py"}, "File created.")),
            ("assistant", "PNG has its own module; WebP is halfway across."),
        ],
    )
    # the agent finished and reported in plain words; a layout rule on the way
    build.claude_code(
        "cc-finished-bom-fixtures",
        _CC,
        [
            ("user", "Make the CSV importer accept files that begin with a UTF-8 BOM."),
            ("tool", ("Edit", {"file_path": f"{_CC}/pebblewick/importer.py"}, _EDITED)),
            (
                "tool",
                ("Write", {"file_path": f"{_CC}/pebblewick/test_bom.csv"}, "File created."),
            ),
            ("assistant", "I put a sample file next to the importer for the new case."),
            (
                "user",
                "In this repo test fixtures go under tests/data/, one file per case. Move it.",
            ),
            (
                "tool",
                (
                    "Bash",
                    {"command": "git mv pebblewick/test_bom.csv tests/data/bom_header.csv"},
                    "",
                ),
            ),
            ("tool", ("Bash", {"command": "pytest -q tests/test_importer.py"}, "34 passed")),
            (
                "assistant",
                "The sample sits at tests/data/bom_header.csv and the importer skips a leading "
                "BOM; all 34 importer tests pass.",
            ),
        ],
    )
    # work that really stopped: the last tool call was interrupted
    build.claude_code(
        "cc-stopped-exif-port",
        _CC,
        [
            (
                "user",
                "Swap piexif for Pillow's getexif() in pebblewick/exif.py and take piexif "
                "out of requirements.txt.",
            ),
            ("tool", ("Edit", {"file_path": f"{_CC}/pebblewick/exif.py"}, _EDITED)),
            ("tool", ("Bash", {"command": "pytest -q tests/test_exif.py"}, "2 failed, 40 passed")),
            (
                "assistant",
                "The two orientation tests fail: getexif() hands back raw tag ids. Mapping "
                "them to names.",
            ),
            ("tool", ("Edit", {"file_path": f"{_CC}/pebblewick/exif.py"}, "")),
            ("interrupt", None),
        ],
    )
    # a tool change and a number, said as "we use X here"
    build.claude_code(
        "cc-black-to-ruff",
        _CC,
        [
            ("user", "Format the new tags module before I review it."),
            (
                "tool",
                ("Bash", {"command": "black pebblewick/tags.py"}, "bash: black: command not found"),
            ),
            ("assistant", "black isn't installed in this environment. Shall I install it?"),
            (
                "user",
                "No, we use ruff format here; black went out in the spring. The line length "
                "in this repo is 100, ruff reads it from pyproject.toml.",
            ),
            ("tool", ("Bash", {"command": "ruff format pebblewick/tags.py"}, "1 file reformatted")),
            ("assistant", "tags.py is formatted with ruff at line length 100."),
        ],
    )
    # one-off instructions around one standing rule
    build.claude_code(
        "cc-one-off-and-subject-length",
        _CC,
        [
            (
                "user",
                "Just for now, mark the geotag round-trip test as skipped so I can cut beta 3.",
            ),
            ("tool", ("Edit", {"file_path": f"{_CC}/tests/test_geotag.py"}, _EDITED)),
            ("assistant", "The geotag round-trip test is skipped with a reason string."),
            ("user", "Commit it, and this time leave CHANGELOG.md alone."),
            (
                "tool",
                (
                    "Bash",
                    {
                        "command": "git commit -am 'Temporarily skip the geotag round-trip "
                        "test so that beta 3 can be cut'"
                    },
                    "1 file changed",
                ),
            ),
            (
                "user",
                "Please keep commit subjects under 60 characters; the release script cuts "
                "anything longer. Reword that one.",
            ),
            (
                "tool",
                (
                    "Bash",
                    {"command": "git commit --amend -m 'Skip geotag round-trip for beta 3'"},
                    "1 file changed",
                ),
            ),
            ("assistant", "The subject reads 'Skip geotag round-trip for beta 3' (34 characters)."),
        ],
    )
    # the agent quotes a stale line; the user rejects it and gives the real command
    build.claude_code(
        "cc-quoted-readme-start",
        _CC,
        [
            ("user", "Start the app and check that the gallery page renders."),
            (
                "assistant",
                'The README says "run the app with `python main.py`", so I will start it that way.',
            ),
            (
                "tool",
                (
                    "Bash",
                    {"command": "python main.py"},
                    "ModuleNotFoundError: No module named 'pebblewick.settings_local'",
                ),
            ),
            (
                "user",
                "Ignore that README line, it's stale. The app starts with `make serve`, which "
                "writes settings_local.py before it launches.",
            ),
            ("tool", ("Bash", {"command": "make serve"}, "Serving on http://127.0.0.1:5100")),
            ("assistant", "The gallery page renders on port 5100 with 24 thumbnails."),
        ],
    )
    # a lesson drawn from a repeated bug
    build.claude_code(
        "cc-lesson-locale-key",
        _CC,
        [
            ("user", "German visitors see English prices on the print shop again."),
            ("tool", ("Read", {"file_path": f"{_CC}/shop/cache.py"}, "def price_key(path): ...")),
            ("tool", ("Edit", {"file_path": f"{_CC}/shop/cache.py"}, _EDITED)),
            (
                "assistant",
                "The price cache key came from the path alone, so whichever locale reached a "
                "page first won for everyone. The key carries the locale as well now.",
            ),
            (
                "user",
                "That's twice this year. Remember for this codebase: any cache key built from "
                "a request has to include the locale, never only the path.",
            ),
            ("assistant", "Understood: request-derived cache keys include the locale."),
        ],
    )


def _codex() -> None:
    """The Codex sessions (sync tool project)."""
    # a refused command; the typed reason pins a version
    build.codex(
        "codex-reject-base-image-pin",
        _CX,
        [
            (
                "user",
                "Bump the Python base image in the Dockerfile so CI gets a newer interpreter.",
            ),
            (
                "reject",
                (
                    "exec_command",
                    {"cmd": "sed -i 's/python:3.11.4-slim/python:3.13.1-slim/' Dockerfile"},
                    "not 3.13, pyarrow 14.0.2 has no wheels for it and the runners can't build "
                    "it from source. Pin it to python:3.11.9-slim.",
                ),
            ),
            (
                "tool",
                (
                    "exec_command",
                    {"cmd": "sed -i 's/python:3.11.4-slim/python:3.11.9-slim/' Dockerfile"},
                    "",
                ),
            ),
            ("assistant", "The Dockerfile builds from python:3.11.9-slim."),
        ],
    )
    # the agent asks in prose; the answer carries the setting and its default
    build.codex(
        "codex-answer-retry-config",
        _CX,
        [
            ("user", "Make the ingest retry wait configurable."),
            (
                "assistant",
                "Should the backoff stay a constant in ingest/retry.py, or become a setting?",
            ),
            (
                "user",
                "a setting. ops tune it per region, so read ingest.retry_backoff_ms from the "
                "config and fall back to 750",
            ),
            ("tool", ("apply_patch", {"input": "*** Begin Patch"}, _PATCHED)),
            ("assistant", "ingest/retry.py reads ingest.retry_backoff_ms, 750 when unset."),
        ],
    )
    # a plan left with undone steps
    build.codex(
        "codex-plan-dry-run",
        _CX,
        [
            (
                "user",
                "Add a --dry-run flag to `bramble sync` that prints the changes without "
                "writing anything.",
            ),
            (
                "todo",
                [
                    ("Parse --dry-run in cli/sync.py", "completed"),
                    ("Skip the writes in sync/apply.py when the flag is set", "in_progress"),
                    ("Cover dry-run in tests/test_sync.py", "pending"),
                ],
            ),
            ("tool", ("apply_patch", {"input": "*** Begin Patch"}, _PATCHED)),
            ("assistant", "The flag parses; the write path in sync/apply.py comes next."),
        ],
    )
    # finished and reported in plain words: nothing to keep
    build.codex(
        "codex-finished-rename-control",
        _CX,
        [
            (
                "user",
                "Rename the `cfg` parameter to `settings` in every function of the sync package.",
            ),
            ("tool", ("exec_command", {"cmd": "rg -l '\\bcfg\\b' sync/"}, "sync/apply.py")),
            ("tool", ("apply_patch", {"input": "*** Begin Patch"}, _PATCHED)),
            ("tool", ("exec_command", {"cmd": "pytest -q"}, "61 passed")),
            (
                "assistant",
                "Every function in sync/ takes settings; rg finds no cfg left and the 61 "
                "tests pass.",
            ),
            ("user", "nice, thanks"),
        ],
    )
    # a branch name the user corrects
    build.codex(
        "codex-branch-renamed",
        _CX,
        [
            ("user", "Tag v4.2.0 on the release branch, that's `stable`."),
            (
                "tool",
                (
                    "exec_command",
                    {"cmd": "git checkout stable"},
                    "error: pathspec 'stable' did not match any file(s) known to git",
                ),
            ),
            ("assistant", "There is no stable branch; the remote has trunk-release and main."),
            (
                "user",
                "right, it got renamed in the spring. the release branch is trunk-release now, "
                "tag it there",
            ),
            ("tool", ("exec_command", {"cmd": "git tag v4.2.0 origin/trunk-release"}, "")),
            ("assistant", "v4.2.0 is tagged on trunk-release and pushed."),
        ],
    )
    # a negation the record must keep
    build.codex(
        "codex-no-type-ignore",
        _CX,
        [
            ("user", "mypy complains about the new loader."),
            (
                "tool",
                (
                    "exec_command",
                    {"cmd": "mypy sync/loader.py"},
                    'error: Incompatible return value type (got "object", expected "Row")',
                ),
            ),
            ("assistant", "I can add a `# type: ignore[return-value]` on that line."),
            (
                "user",
                "please don't. We don't paper over mypy with type: ignore in brambleway; "
                "narrow the type or ask me.",
            ),
            ("tool", ("apply_patch", {"input": "*** Begin Patch"}, _PATCHED)),
            ("tool", ("exec_command", {"cmd": "mypy sync/loader.py"}, "Success: no issues found")),
            ("assistant", "The loader narrows with isinstance and mypy is clean."),
        ],
    )
    # tool output that reads like a rule; the user says nothing durable
    build.codex(
        "codex-contributing-output-control",
        _CX,
        [
            ("user", "Why does the commit hook reject my commit?"),
            (
                "tool",
                (
                    "exec_command",
                    {"cmd": "cat CONTRIBUTING.md"},
                    "Every commit must carry a Signed-off-by trailer (git commit -s). Do not "
                    "push to main directly; all changes go through review.",
                ),
            ),
            (
                "assistant",
                "The hook looks for a Signed-off-by trailer and your last commit has none; "
                "`git commit --amend -s` adds it.",
            ),
            ("user", "ok, I'll amend it myself"),
        ],
    )


def _gemini() -> None:
    """The Gemini CLI sessions (tide and harbour data project)."""
    # finished and reported in plain words: nothing to keep
    build.gemini(
        "gemini-finished-footer-control",
        _GM,
        [
            ("user", "The footer still says 2024. Have it take the year from the build date."),
            ("tool", ("read_file", {"path": f"{_GM}/site/footer.html"}, "&copy; 2024 Saltmarsh")),
            ("tool", ("replace", {"file_path": f"{_GM}/site/footer.html"}, "OK")),
            ("tool", ("run_shell_command", {"command": "npm run build"}, "built in 3.1s")),
            (
                "assistant",
                "The footer takes its year from BUILD_DATE during the build; the build passes "
                "and the preview shows 2026.",
            ),
            ("user", "perfect"),
        ],
    )
    # work that stopped with steps left, in the Gemini format
    build.gemini(
        "gemini-stopped-uplot",
        _GM,
        [
            ("user", "Move the tide chart from Chart.js to uPlot. Same colours as now."),
            ("tool", ("read_file", {"path": f"{_GM}/site/tide_chart.js"}, "new Chart(ctx, {")),
            ("tool", ("replace", {"file_path": f"{_GM}/site/tide_chart.js"}, "OK")),
            (
                "assistant",
                "The axes use uPlot scales now; the series and the colour palette come next.",
            ),
        ],
    )
    # a number the user raises, and the standing rule that follows
    build.gemini(
        "gemini-upload-limit-change",
        _GM,
        [
            (
                "user",
                "Uploads over 25 MB fail on the server. Check the size in the client before "
                "sending.",
            ),
            ("tool", ("replace", {"file_path": f"{_GM}/site/upload.js"}, "OK")),
            ("assistant", "The client refuses files over 25 MB before the upload starts."),
            (
                "user",
                "The server limit went up to 40 MB in yesterday's deploy. Use 40, and keep the "
                "client and server limits equal from here on.",
            ),
            ("tool", ("replace", {"file_path": f"{_GM}/site/upload.js"}, "OK")),
            ("assistant", "The client limit is 40 MB."),
        ],
    )
    # a negation with its reason and the alternative
    build.gemini(
        "gemini-harbour-ro-negation",
        _GM,
        [
            ("user", "Add the berth length column to the mooring report."),
            (
                "tool",
                ("read_file", {"path": f"{_GM}/reports/mooring.sql"}, "FROM harbour_ro.berths b"),
            ),
            ("assistant", "The lengths are in harbour_ro.berths. I'll add a view there."),
            (
                "user",
                "No, never write to harbour_ro: it is replicated nightly from the port "
                "authority and anything we add gets wiped. Views go in the saltmarsh schema.",
            ),
            ("tool", ("replace", {"file_path": f"{_GM}/reports/mooring.sql"}, "OK")),
            (
                "assistant",
                "The report reads berth lengths through a view in the saltmarsh schema.",
            ),
        ],
    )
    # one-off instructions only
    build.gemini(
        "gemini-one-off-control",
        _GM,
        [
            (
                "user",
                "This time only, deploy the preview straight from my branch and skip the "
                "staging gate.",
            ),
            (
                "tool",
                (
                    "run_shell_command",
                    {"command": "make deploy-preview BRANCH=teodor/wave-heights"},
                    "preview at https://preview.example.test/wave",
                ),
            ),
            ("user", "Run the smoke tests with verbose output for this run."),
            ("tool", ("run_shell_command", {"command": "make smoke V=1"}, "9 passed")),
            ("assistant", "The preview is live and the 9 smoke tests pass."),
            ("user", "good, that's it"),
        ],
    )
    # a refused install; the typed reason pins a version ("please keep")
    build.gemini(
        "gemini-reject-numpy-pin",
        _GM,
        [
            ("user", "The wave model needs numpy for the FFT, install it."),
            (
                "reject",
                (
                    "run_shell_command",
                    {"command": "pip install numpy==2.1.0"},
                    "Please keep numpy at 1.26.4: scipy 1.11.4 in this project breaks on numpy "
                    "2. Add it to constraints.txt and install with pip install -c "
                    "constraints.txt.",
                ),
            ),
            (
                "tool",
                (
                    "run_shell_command",
                    {"command": "pip install -c constraints.txt numpy"},
                    "Successfully installed numpy-1.26.4",
                ),
            ),
            ("assistant", "numpy 1.26.4 is installed through constraints.txt."),
        ],
    )


def sessions() -> None:
    """Every session of the third unseen set (the text is invented for this set)."""
    _claude_code()
    _codex()
    _gemini()


if __name__ == "__main__":
    sessions()
