"""Write the blind set: made-up coding-agent sessions in the real on-disk formats.

The blind set measures how the builtin curator does on sessions it was not developed against
(issue 12's worry). Every sentence here is invented; only the *structure* of the records
follows ../shared/corpus/transcripts/FORMATS.md and the loaders in src/wardian/transcripts/.
Targets are in ``blind_gold.json`` (same shape as the corpus gold.json, read by
``tests/curator/gold.py``). Rules must not be fitted to these sentences: unit tests use
fresh sentences of their own, so this set stays a measurement.

Run ``python tests/curator/blind/build.py`` to rewrite the transcripts after editing a
session below; the output is deterministic.
"""

from __future__ import annotations

import json
import zlib
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
OUT = HERE / "transcripts"

Turn = tuple[str, Any]
"""("user", text) | ("assistant", text) | ("tool", (name, input, output)) |
("reject", (name, input, reason)) | ("ask", (question, answer)) | ("todo", [(text, status)]) |
("interrupt", None) (Claude Code only)"""


def _ts(n: int) -> str:
    return f"2026-03-{(n // 1440) + 4:02d}T{(n // 60) % 24:02d}:{n % 60:02d}:00.000Z"


class _Ids:
    def __init__(self, seed: str) -> None:
        self.seed = seed
        self.n = 0

    def next(self, kind: str = "") -> str:
        self.n += 1
        return f"{self.seed}{kind}-{self.n:04d}"


def claude_code(name: str, cwd: str, turns: list[Turn]) -> None:
    """A Claude Code session JSONL: envelope, assistant blocks, tool_use/tool_result pairs."""
    ids = _Ids(f"b{zlib.crc32(name.encode()) % 10**6:06d}")
    session = f"5e55{len(name):04d}-0000-4000-8000-{sum(map(ord, name)):012d}"
    lines: list[dict[str, Any]] = []
    parent: str | None = None
    clock = 0

    def env(kind: str) -> dict[str, Any]:
        nonlocal parent, clock
        uid = f"{ids.next('u')}"
        clock += 1
        rec = {
            "parentUuid": parent,
            "isSidechain": False,
            "userType": "external",
            "cwd": cwd,
            "sessionId": session,
            "version": "2.1.12",
            "gitBranch": "main",
            "type": kind,
            "uuid": uid,
            "timestamp": _ts(clock),
        }
        parent = uid
        return rec

    def assistant(blocks: list[dict[str, Any]]) -> None:
        mid = ids.next("msg")
        for block in blocks:
            rec = env("assistant")
            rec["message"] = {
                "model": "claude-sonnet-4-5",
                "id": mid,
                "type": "message",
                "role": "assistant",
                "content": [block],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {"input_tokens": 12, "output_tokens": 40},
            }
            lines.append(rec)

    def result(tool_id: str, text: str, error: bool = False) -> None:
        rec = env("user")
        block: dict[str, Any] = {"tool_use_id": tool_id, "type": "tool_result", "content": text}
        if error:
            block["is_error"] = True
        rec["message"] = {"role": "user", "content": [block]}
        rec["toolUseResult"] = ("Error: " if error else "") + text
        lines.append(rec)

    lines.append(
        {
            "type": "file-history-snapshot",
            "messageId": ids.next("snap"),
            "snapshot": {"messageId": "m0", "trackedFileBackups": {}, "timestamp": _ts(0)},
            "isSnapshotUpdate": False,
        }
    )
    for kind, body in turns:
        if kind == "user":
            rec = env("user")
            rec["message"] = {"role": "user", "content": body}
            lines.append(rec)
        elif kind == "assistant":
            assistant([{"type": "text", "text": body}])
        elif kind == "interrupt":
            rec = env("user")
            text = "[Request interrupted by user for tool use]"
            rec["message"] = {"role": "user", "content": [{"type": "text", "text": text}]}
            lines.append(rec)
        elif kind in ("tool", "reject"):
            tool, args, out = body
            tid = ids.next("toolu")
            assistant([{"type": "tool_use", "id": tid, "name": tool, "input": args}])
            if kind == "tool":
                result(tid, out)
            else:
                result(
                    tid,
                    "The user doesn't want to proceed with this tool use. The tool use was "
                    "rejected (eg. if it was a file edit, the new_string was NOT written to the "
                    "file). To tell you how to proceed, the user said:\n" + out,
                    error=True,
                )
        elif kind == "ask":
            question, answer = body
            tid = ids.next("toolu")
            assistant(
                [
                    {
                        "type": "tool_use",
                        "id": tid,
                        "name": "AskUserQuestion",
                        "input": {"questions": [{"question": question, "options": []}]},
                    }
                ]
            )
            result(tid, f'User has answered your questions: "{question}"="{answer}".')
        elif kind == "todo":
            tid = ids.next("toolu")
            todos = [
                {"content": text, "status": status, "activeForm": text} for text, status in body
            ]
            assistant(
                [{"type": "tool_use", "id": tid, "name": "TodoWrite", "input": {"todos": todos}}]
            )
            result(tid, "Todos have been modified successfully.")
    _write(OUT / "claude-code" / f"{name}.jsonl", lines)


def codex(name: str, cwd: str, turns: list[Turn]) -> None:
    """A Codex rollout (0.128 envelope): session_meta, turn_context, items and event mirrors."""
    ids = _Ids("call_b")
    clock = 0
    lines: list[dict[str, Any]] = []

    def put(kind: str, payload: dict[str, Any]) -> None:
        nonlocal clock
        clock += 1
        lines.append({"timestamp": _ts(clock), "type": kind, "payload": payload})

    put(
        "session_meta",
        {
            "id": f"0199aaaa-{len(name):04d}-7000-8000-{sum(map(ord, name)):012d}",
            "timestamp": _ts(0),
            "cwd": cwd,
            "originator": "codex_cli_rs",
            "cli_version": "0.128.0",
            "source": "cli",
            "model_provider": "openai",
            "base_instructions": {"text": "You are Codex, a coding agent."},
            "git": {"branch": "main"},
        },
    )
    put(
        "response_item",
        {
            "type": "message",
            "role": "user",
            "content": [
                {
                    "type": "input_text",
                    "text": f"<environment_context>\n  <cwd>{cwd}</cwd>\n  <shell>bash</shell>\n"
                    "</environment_context>",
                }
            ],
        },
    )
    for kind, body in turns:
        if kind == "user":
            put(
                "turn_context",
                {
                    "cwd": cwd,
                    "model": "gpt-5.5",
                    "effort": "medium",
                    "approval_policy": "on-request",
                    "summary": "auto",
                },
            )
            put(
                "response_item",
                {
                    "type": "message",
                    "role": "user",
                    "content": [{"type": "input_text", "text": body}],
                },
            )
            put("event_msg", {"type": "user_message", "message": body, "images": []})
        elif kind == "assistant":
            put(
                "response_item",
                {
                    "type": "message",
                    "role": "assistant",
                    "phase": "final_answer",
                    "content": [{"type": "output_text", "text": body}],
                },
            )
            put("event_msg", {"type": "agent_message", "message": body, "phase": "final_answer"})
        elif kind in ("tool", "reject"):
            tool, args, out = body
            cid = ids.next()
            put(
                "response_item",
                {
                    "type": "function_call",
                    "name": tool,
                    "arguments": json.dumps(args),
                    "call_id": cid,
                },
            )
            if kind == "tool":
                text = (
                    f"Chunk ID: {cid[-4:]}\nWall time: 0.2 seconds\nProcess exited with code "
                    f"0\nOutput:\n{out}"
                )
            else:
                text = "exec command rejected by user"
            put("response_item", {"type": "function_call_output", "call_id": cid, "output": text})
            if kind == "reject" and out:
                # Codex has no reason field on a denial: the user types it next
                put(
                    "response_item",
                    {
                        "type": "message",
                        "role": "user",
                        "content": [{"type": "input_text", "text": out}],
                    },
                )
                put("event_msg", {"type": "user_message", "message": out, "images": []})
        elif kind == "todo":
            cid = ids.next()
            plan = [{"step": text, "status": status} for text, status in body]
            put(
                "response_item",
                {
                    "type": "function_call",
                    "name": "update_plan",
                    "arguments": json.dumps({"plan": plan}),
                    "call_id": cid,
                },
            )
            put(
                "response_item",
                {"type": "function_call_output", "call_id": cid, "output": "Plan updated"},
            )
    _write(OUT / "codex" / f"{name}.jsonl", lines)


def gemini(name: str, project: str, turns: list[Turn]) -> None:
    """A Gemini CLI session document: messages of type user / gemini with inline toolCalls."""
    ids = _Ids("g")
    clock = 0
    messages: list[dict[str, Any]] = []
    for kind, body in turns:
        clock += 1
        if kind == "user":
            messages.append(
                {"id": ids.next(), "timestamp": _ts(clock), "type": "user", "content": body}
            )
        elif kind == "assistant":
            messages.append(
                {
                    "id": ids.next(),
                    "timestamp": _ts(clock),
                    "type": "gemini",
                    "content": body,
                    "thoughts": [],
                    "model": "gemini-2.5-pro",
                    "tokens": {"input": 100, "output": 20, "total": 120},
                }
            )
        elif kind in ("tool", "reject"):
            tool, args, out = body
            cid = f"{tool}-{1700000000000 + clock}-b{clock:04d}"
            call: dict[str, Any] = {
                "id": cid,
                "name": tool,
                "args": args,
                "status": "success" if kind == "tool" else "cancelled",
                "timestamp": _ts(clock),
                "displayName": tool,
                "description": "",
                "renderOutputAsMarkdown": True,
            }
            if kind == "tool":
                call["result"] = [
                    {"functionResponse": {"id": cid, "name": tool, "response": {"output": out}}}
                ]
            messages.append(
                {
                    "id": ids.next(),
                    "timestamp": _ts(clock),
                    "type": "gemini",
                    "content": "",
                    "toolCalls": [call],
                    "thoughts": [],
                    "model": "gemini-2.5-pro",
                }
            )
            if kind == "reject" and out:
                clock += 1
                messages.append(
                    {"id": ids.next(), "timestamp": _ts(clock), "type": "user", "content": out}
                )
    doc = {
        "sessionId": f"b1d0{len(name):04d}-0000-4000-8000-{sum(map(ord, name)):012d}",
        "projectHash": f"{zlib.crc32(project.encode()):016d}" * 4,
        "startTime": _ts(0),
        "lastUpdated": _ts(clock),
        "messages": messages,
    }
    path = OUT / "gemini" / f"{name}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")


def _write(path: Path, lines: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "".join(json.dumps(rec, separators=(",", ":")) + "\n" for rec in lines), encoding="utf-8"
    )


def sessions() -> None:
    """Every blind session (the text is invented for this set)."""
    claude_code(
        "cc-rust-cli-remember",
        "/home/dev/src/tidewater",
        [
            (
                "user",
                "Set up a new subcommand `tidewater export` that writes the station list "
                "as CSV. Please remember that this crate builds on stable Rust only, so no "
                "nightly features, ever.",
            ),
            ("assistant", "Understood. I'll look at the existing subcommands first."),
            (
                "tool",
                (
                    "Read",
                    {"file_path": "/home/dev/src/tidewater/src/cli.rs"},
                    "pub enum Command { Import(ImportArgs), Stats }",
                ),
            ),
            (
                "tool",
                (
                    "Edit",
                    {
                        "file_path": "/home/dev/src/tidewater/src/cli.rs",
                        "old_string": "Stats }",
                        "new_string": "Stats, Export(ExportArgs) }",
                    },
                    "The file has been updated.",
                ),
            ),
            (
                "assistant",
                "I added the Export variant and a small writer in src/export.rs. "
                "I put its unit tests at the bottom of export.rs.",
            ),
            (
                "user",
                "Looks fine. From now on put integration tests in tests/integration/ "
                "instead of inline test modules, we keep src/ free of test code.",
            ),
            (
                "tool",
                (
                    "Bash",
                    {"command": "mkdir -p tests/integration && cargo test"},
                    "test result: ok. 14 passed; 0 failed",
                ),
            ),
            (
                "assistant",
                "Moved the export tests to tests/integration/export.rs; all 14 tests pass.",
            ),
            ("user", "great, thanks"),
        ],
    )
    claude_code(
        "cc-yarn-rejected-utc",
        "/home/dev/work/ledgerline",
        [
            (
                "user",
                "The invoice page crashes when the due date is missing. Can you fix it and "
                "add the date-fns package if you need it?",
            ),
            ("assistant", "I'll install date-fns and guard the missing date."),
            (
                "reject",
                (
                    "Bash",
                    {"command": "yarn add date-fns"},
                    "we don't use yarn in this repo, it's pnpm. use pnpm add",
                ),
            ),
            ("tool", ("Bash", {"command": "pnpm add date-fns"}, "+ date-fns 3.6.0")),
            (
                "tool",
                (
                    "Edit",
                    {"file_path": "src/invoice/DueDate.tsx", "old_string": "x", "new_string": "y"},
                    "The file has been updated.",
                ),
            ),
            (
                "assistant",
                "Fixed: a missing due date now renders as a dash. I also converted the "
                "due date to the browser's local time zone before formatting.",
            ),
            (
                "user",
                "No, don't convert to local time. Dates from the API stay in UTC "
                "everywhere in the UI, the accountants compare them across offices.",
            ),
            (
                "tool",
                (
                    "Edit",
                    {"file_path": "src/invoice/DueDate.tsx", "old_string": "y", "new_string": "z"},
                    "The file has been updated.",
                ),
            ),
            ("assistant", "Reverted the conversion; dates are formatted in UTC now."),
            ("user", "ok good"),
        ],
    )
    codex(
        "codex-passing-preferences",
        "/srv/app/harbor-api",
        [
            (
                "user",
                "The test test_parse_weekday fails on Sundays, can you look? btw I like "
                "small commits that each do one thing, much easier to review.",
            ),
            (
                "tool",
                ("exec_command", {"cmd": "pytest tests/test_dates.py -q"}, "1 failed, 11 passed"),
            ),
            (
                "assistant",
                "The parser uses isoweekday() where the table expects weekday(). "
                "Fixed and committed as one commit: 'dates: use weekday() in "
                "parse_weekday'.",
            ),
            (
                "user",
                "nice. also I'd rather you ask me before pulling in any new dependency, "
                "we have to get every package approved by security.",
            ),
            ("assistant", "Noted. The fix needed no new dependency."),
            ("user", "perfect, that's all for today"),
        ],
    )
    codex(
        "codex-cache-decision",
        "/srv/app/harbor-api",
        [
            (
                "user",
                "Lookups of port codes are slow under load. What are our options for caching them?",
            ),
            (
                "assistant",
                "Two realistic options: (A) a Redis cache shared by all workers, or "
                "(B) an in-process LRU cache per worker with a 10 minute TTL. B needs "
                "no new infrastructure; A keeps workers consistent.",
            ),
            (
                "user",
                "We only run one instance. Let's go with B, the in-process LRU; Redis would "
                "be overkill here.",
            ),
            (
                "todo",
                [
                    ("Add LRU cache around port code lookup", "in_progress"),
                    ("Add cache hit/miss metrics", "pending"),
                ],
            ),
            ("tool", ("apply_patch", {"input": "*** Begin Patch"}, "Success.")),
            ("tool", ("exec_command", {"cmd": "pytest -q"}, "58 passed")),
            (
                "todo",
                [
                    ("Add LRU cache around port code lookup", "completed"),
                    ("Add cache hit/miss metrics", "completed"),
                ],
            ),
            (
                "assistant",
                "Done: lookups are cached in a per-worker LRU (maxsize 4096, TTL 10 "
                "min) with hit/miss counters on /metrics. All 58 tests pass.",
            ),
            ("user", "thanks, merged"),
        ],
    )
    gemini(
        "gemini-sqlite-fk-lesson",
        "/home/ana/code/bookshelf",
        [
            (
                "user",
                "Deleting an author should delete their books too, but the books stay in "
                "the table. Find out why.",
            ),
            (
                "assistant",
                "The schema declares ON DELETE CASCADE on books.author_id. Let me run the test.",
            ),
            (
                "tool",
                (
                    "run_shell_command",
                    {"command": "pytest tests/test_authors.py"},
                    "FAILED tests/test_authors.py::test_delete_cascades - assert 3 == 0",
                ),
            ),
            (
                "assistant",
                "SQLite ignores foreign keys unless `PRAGMA foreign_keys = ON` is run "
                "on each new connection; it is not stored in the database file. I "
                "added it to the connection factory.",
            ),
            (
                "tool",
                ("run_shell_command", {"command": "pytest tests/test_authors.py"}, "3 passed"),
            ),
            ("assistant", "The cascade works now and the test passes."),
            (
                "user",
                "good catch, keep that in mind for the other services that open sqlite "
                "connections.",
            ),
        ],
    )
    claude_code(
        "cc-v2-router-unfinished",
        "/home/dev/work/ledgerline",
        [
            (
                "user",
                "Move the remaining REST endpoints from the legacy express router to the "
                "new v2 router in src/api/v2/. Keep the old paths working with redirects.",
            ),
            (
                "todo",
                [
                    ("Move /customers endpoints to v2", "in_progress"),
                    ("Move /invoices endpoints to v2", "pending"),
                    ("Move /payments endpoints to v2", "pending"),
                    ("Add redirects from legacy paths", "pending"),
                ],
            ),
            (
                "tool",
                (
                    "Edit",
                    {"file_path": "src/api/v2/customers.ts", "old_string": "a", "new_string": "b"},
                    "The file has been updated.",
                ),
            ),
            (
                "todo",
                [
                    ("Move /customers endpoints to v2", "completed"),
                    ("Move /invoices endpoints to v2", "in_progress"),
                    ("Move /payments endpoints to v2", "pending"),
                    ("Add redirects from legacy paths", "pending"),
                ],
            ),
            (
                "tool",
                (
                    "Bash",
                    {"command": "pnpm test api"},
                    "FAIL src/api/v2/invoices.test.ts: expected 200, received 404",
                ),
            ),
            (
                "assistant",
                "Customers are on v2. Invoices are half moved: the list route works "
                "but the PDF download route returns 404 under v2.",
            ),
            ("user", "I need to stop here for today, we'll continue tomorrow."),
        ],
    )
    claude_code(
        "cc-control-one-off",
        "/home/dev/src/tidewater",
        [
            ("user", "Rename the variable `tmp` to `reading` in src/parse.rs."),
            (
                "tool",
                (
                    "Edit",
                    {"file_path": "src/parse.rs", "old_string": "tmp", "new_string": "reading"},
                    "The file has been updated.",
                ),
            ),
            ("assistant", "Renamed all 6 uses of `tmp` to `reading`."),
            (
                "user",
                "Just for this answer, give me the list of public functions in parse.rs "
                "as a bullet list, no prose.",
            ),
            ("assistant", "- parse_line\n- parse_header\n- parse_file"),
            ("user", "Now run cargo fmt."),
            ("tool", ("Bash", {"command": "cargo fmt"}, "")),
            ("assistant", "Formatted."),
            ("user", "thanks"),
        ],
    )
    codex(
        "codex-secrets-staging",
        "/srv/app/harbor-api",
        [
            (
                "user",
                "Connect to the staging database and count the rows in shipments. The "
                "password is Gull-Harbor-4417 and the user is svc_readonly.",
            ),
            (
                "tool",
                (
                    "exec_command",
                    {
                        "cmd": "psql -h staging-db -U svc_readonly -c "
                        "'select count(*) from shipments'"
                    },
                    "  count\n 18234",
                ),
            ),
            ("assistant", "There are 18,234 rows in shipments on staging."),
            (
                "user",
                "For the webhook test use this key: whk_live_9fQ2zLx81VbNc4TmRa7Y. And going "
                "forward, always run manual checks against staging, never production.",
            ),
            (
                "tool",
                (
                    "exec_command",
                    {"cmd": "curl -X POST https://staging.example/hook"},
                    "HTTP/1.1 204 No Content",
                ),
            ),
            ("assistant", "The webhook accepted the test event on staging (204)."),
        ],
    )
    gemini(
        "gemini-control-routine",
        "/home/ana/code/bookshelf",
        [
            ("user", "run the test suite"),
            ("tool", ("run_shell_command", {"command": "pytest -q"}, "41 passed, 1 warning")),
            ("assistant", "All 41 tests pass; one deprecation warning from a dependency."),
            ("user", "ok, now fix the flake8 error in models.py"),
            ("tool", ("replace", {"file_path": "/home/ana/code/bookshelf/models.py"}, "OK")),
            ("assistant", "Removed the unused import that flake8 reported."),
            ("user", "cool, that's it"),
        ],
    )
    codex(
        "codex-conventions-denied",
        "/home/lee/projects/quill",
        [
            ("user", "Add a --dry-run flag to the publish command."),
            ("assistant", "I'll add the flag and commit it on main."),
            (
                "reject",
                (
                    "exec_command",
                    {"cmd": "git commit -am 'Add --dry-run' && git push origin main"},
                    "Never push to main directly. Work on a branch and open a pull request.",
                ),
            ),
            (
                "tool",
                (
                    "exec_command",
                    {"cmd": "git switch -c publish-dry-run"},
                    "Switched to a new branch 'publish-dry-run'",
                ),
            ),
            (
                "assistant",
                "Created branch publish-dry-run. The flag prints 'Would publish 3 "
                "posts.' when set.",
            ),
            (
                "user",
                "Change that message: in this project CLI messages are lowercase and have "
                "no trailing period.",
            ),
            ("assistant", "Changed it to 'would publish 3 posts'."),
            ("user", "good, open the PR"),
            (
                "tool",
                (
                    "exec_command",
                    {"cmd": "gh pr create --fill"},
                    "https://example.invalid/quill/pull/12",
                ),
            ),
        ],
    )


if __name__ == "__main__":
    sessions()
