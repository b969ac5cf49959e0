"""Write the fourth unseen set: made-up sessions written before reading the curator's rules.

Its author saw only the transcript builders and readers, the earlier sets' layout (file names,
target format, how the bench and the held-out test load a set) and the shipped example
session, never the rules or the earlier sets' sentences, and the curator was not run on it
before it was committed: it measures how the rules generalise. It stresses the way people
really type: durable rules in plain words without cue words, corrections of the agent in the
middle of a task, refusals of a tool call with a reason, answers to the agent's questions, a
rule stated and later changed (package manager, branch, number), negations in several forms,
one-off instructions, an agent's quoted claim the user rejects, pasted logs and tool output
holding rule-like sentences, secrets, typos and terse messages, non-native English, work left
unfinished at the end (a checkpoint is expected) and work finished (none may be left).
Claude Code JSONL, Codex rollouts, Gemini CLI session documents and the Gemini CLI 0.61
session JSONL; every person, project, path, token and sentence is invented.

Run ``python tests/curator/unseen4/build.py`` to rewrite the transcripts.
"""

from __future__ import annotations

import json
import sys
import zlib
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))

from tests.curator.blind import build  # noqa: E402

build.OUT = HERE / "transcripts"

_EDITED = "The file has been updated successfully."
_PATCHED = "Success. Updated the following files:\nM {}"


def gemini_jsonl(name: str, project: str, turns: list[build.Turn]) -> None:
    """A Gemini CLI 0.61 session JSONL: a metadata line, then one line per message record.

    A gemini message with a tool call is written twice, the way the CLI appends a record and
    later rewrites it by id: first with the call still running, then with its result. User
    content is a list of parts; the last line is a ``$set`` of ``lastUpdated``.
    """
    lines: list[dict[str, Any]] = []
    clock = 0
    n = 0

    def mid() -> str:
        nonlocal n
        n += 1
        return f"{zlib.crc32(name.encode()) % 10**8:08d}-m{n:03d}"

    lines.append(
        {
            "sessionId": f"9e61{len(name):04d}-0000-4000-8000-{sum(map(ord, name)):012d}",
            "projectHash": f"{zlib.crc32(project.encode()):016x}" * 4,
            "startTime": build._ts(0),
            "lastUpdated": build._ts(0),
            "kind": "main",
        }
    )
    for kind, body in turns:
        clock += 1
        ts = build._ts(clock + 3000)
        if kind == "user":
            lines.append(
                {"id": mid(), "timestamp": ts, "type": "user", "content": [{"text": body}]}
            )
        elif kind == "assistant":
            lines.append(
                {
                    "id": mid(),
                    "timestamp": ts,
                    "type": "gemini",
                    "content": body,
                    "thoughts": [],
                    "model": "gemini-3-pro-preview",
                    "tokens": {"input": 900, "output": 60, "total": 960},
                }
            )
        elif kind in ("tool", "reject"):
            tool, args, out = body
            cid = f"{tool}_{1765000000000 + clock}_{clock}"
            msg_id = mid()
            call: dict[str, Any] = {
                "id": cid,
                "name": tool,
                "args": args,
                "status": "executing",
                "timestamp": ts,
                "displayName": tool,
                "description": "",
                "renderOutputAsMarkdown": True,
            }
            base = {
                "id": msg_id,
                "timestamp": ts,
                "type": "gemini",
                "content": "",
                "thoughts": [],
                "model": "gemini-3-pro-preview",
            }
            lines.append({**base, "toolCalls": [dict(call)]})
            done = dict(call)
            done["status"] = "success" if kind == "tool" else "cancelled"
            if kind == "tool":
                done["result"] = [
                    {"functionResponse": {"id": cid, "name": tool, "response": {"output": out}}}
                ]
            lines.append({**base, "toolCalls": [done]})
            if kind == "reject" and out:
                clock += 1
                lines.append(
                    {
                        "id": mid(),
                        "timestamp": build._ts(clock + 3000),
                        "type": "user",
                        "content": [{"text": out}],
                    }
                )
    lines.append({"$set": {"lastUpdated": build._ts(clock + 3000)}})
    path = build.OUT / "gemini" / f"{name}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "".join(json.dumps(rec, separators=(",", ":")) + "\n" for rec in lines), encoding="utf-8"
    )


def _claude_code() -> None:
    root = "/home/ines/work/tidepool-ledger"
    build.claude_code(
        "cc-yarn-then-pnpm",
        root,
        [
            (
                "user",
                "the invoice export button in apps/web is broken since yesterday, clicking it "
                "does nothing. can you check? we're on yarn workspaces btw so dont run npm "
                "install, it makes a package-lock nobody wants",
            ),
            ("assistant", "I'll look at the export handler first."),
            (
                "tool",
                (
                    "Grep",
                    {"pattern": "exportInvoices", "path": f"{root}/apps/web/src"},
                    "apps/web/src/invoices/ExportButton.tsx:14:  onClick={exportInvoices}\n"
                    "apps/web/src/invoices/api.ts:31:export async function exportInvoices() {",
                ),
            ),
            (
                "tool",
                (
                    "Read",
                    {"file_path": f"{root}/apps/web/src/invoices/api.ts"},
                    "31 export async function exportInvoices() {\n"
                    "32   const res = await fetch('/api/invoices/export')\n"
                    "33   res.blob\n"
                    "34 }",
                ),
            ),
            (
                "assistant",
                "Line 33 reads `res.blob` without calling it, so nothing is downloaded. I'll "
                "call it and hand the blob to the download helper.",
            ),
            (
                "tool",
                (
                    "Edit",
                    {
                        "file_path": f"{root}/apps/web/src/invoices/api.ts",
                        "old_string": "  res.blob\n",
                        "new_string": "  saveBlob(await res.blob(), 'invoices.csv')\n",
                    },
                    _EDITED,
                ),
            ),
            (
                "user",
                "oh wait, I forgot to say. we moved the whole repo from yarn to pnpm on "
                "monday, the yarn.lock is gone. so pnpm for everything from now on, "
                "pnpm install, pnpm -F web test etc",
            ),
            ("assistant", "Got it, pnpm then. Running the web tests."),
            (
                "tool",
                (
                    "Bash",
                    {"command": "pnpm -F web test -- invoices", "description": "Run web tests"},
                    " RUN  v2.1.4 /home/ines/work/tidepool-ledger/apps/web\n"
                    " ✓ src/invoices/api.test.ts (3 tests) 41ms\n"
                    " Test Files  1 passed (1)\n      Tests  3 passed (3)",
                ),
            ),
            (
                "user",
                "good. just for this one skip the playwright e2e run, the staging box is down "
                "today",
            ),
            (
                "assistant",
                "Skipping the e2e run. The export button works again: `exportInvoices` now "
                "awaits the blob and saves it as invoices.csv, and the three invoice tests "
                "pass.",
            ),
            ("user", "perfect thx"),
        ],
    )

    root = "/home/dmitri/src/orchard-api"
    build.claude_code(
        "cc-migration-refusal-stopped",
        root,
        [
            (
                "user",
                "Add a due_date column to Invoice, nullable for now, and show it in the admin "
                "list. After that the old invoices need a backfill from issued_at + 30 days.",
            ),
            (
                "todo",
                [
                    ("Add nullable due_date to Invoice model", "in_progress"),
                    ("Show due_date in InvoiceAdmin list_display", "pending"),
                    ("Backfill due_date for old invoices from issued_at + 30 days", "pending"),
                ],
            ),
            (
                "tool",
                (
                    "Read",
                    {"file_path": f"{root}/billing/models.py"},
                    "class Invoice(models.Model):\n    number = models.CharField(max_length=32)\n"
                    "    issued_at = models.DateTimeField()\n",
                ),
            ),
            (
                "reject",
                (
                    "Edit",
                    {
                        "file_path": f"{root}/billing/migrations/0042_invoice_issued_at.py",
                        "old_string": "operations = [",
                        "new_string": "operations = [\n    migrations.AddField('invoice', "
                        "'due_date', models.DateField(null=True)),",
                    },
                    "no, 0042 is already on production. migrations that are merged are "
                    "frozen, we never edit them, always generate a new one with makemigrations",
                ),
            ),
            (
                "assistant",
                "Understood, I'll leave 0042 alone and generate a new migration instead.",
            ),
            (
                "tool",
                (
                    "Edit",
                    {
                        "file_path": f"{root}/billing/models.py",
                        "old_string": "    issued_at = models.DateTimeField()\n",
                        "new_string": "    issued_at = models.DateTimeField()\n"
                        "    due_date = models.DateField(null=True, blank=True)\n",
                    },
                    _EDITED,
                ),
            ),
            (
                "tool",
                (
                    "Bash",
                    {"command": "python manage.py makemigrations billing"},
                    "Migrations for 'billing':\n  billing/migrations/0043_invoice_due_date.py\n"
                    "    - Add field due_date to invoice",
                ),
            ),
            (
                "tool",
                (
                    "Bash",
                    {"command": "python manage.py migrate --plan"},
                    "WARNING: always set DJANGO_SETTINGS_MODULE explicitly before running "
                    "manage.py in containers\nPlanned operations:\nbilling.0043_invoice_due_date"
                    "\n    Add field due_date to invoice",
                ),
            ),
            (
                "assistant",
                "Migration 0043 is generated. I added a print of the planned backfill count "
                "to check the numbers before writing it.",
            ),
            (
                "user",
                "take the print out pls. we dont print in this codebase, anything diagnostic "
                "goes through structlog (log = structlog.get_logger())",
            ),
            (
                "tool",
                (
                    "Edit",
                    {
                        "file_path": f"{root}/billing/admin.py",
                        "old_string": "print('backfill candidates', qs.count())",
                        "new_string": "log.info('backfill_candidates', count=qs.count())",
                    },
                    _EDITED,
                ),
            ),
            (
                "todo",
                [
                    ("Add nullable due_date to Invoice model", "completed"),
                    ("Show due_date in InvoiceAdmin list_display", "in_progress"),
                    ("Backfill due_date for old invoices from issued_at + 30 days", "pending"),
                ],
            ),
            (
                "user",
                "ok i have to jump into a call. leave it like this, we continue tomorrow",
            ),
            (
                "assistant",
                "Stopping here. Done: due_date on Invoice and migration 0043. Still open: the "
                "admin list column is half wired, and the backfill from issued_at + 30 days "
                "is not written yet.",
            ),
        ],
    )

    root = "/home/akua/code/ferrule"
    build.claude_code(
        "cc-answers-error-crates",
        root,
        [
            (
                "user",
                "ferrule needs a proper error type instead of all the Box<dyn Error>. can you "
                "do the refactor in crates/ferrule-core?",
            ),
            (
                "tool",
                (
                    "Bash",
                    {"command": "grep -rn 'Box<dyn Error' crates | wc -l"},
                    "23",
                ),
            ),
            (
                "ask",
                (
                    "Which error crate should the refactor use: thiserror, anyhow, or both?",
                    "thiserror in ferrule-core, anyhow only in the ferrule binary crate",
                ),
            ),
            (
                "ask",
                (
                    "What is the minimum supported Rust version I should keep compatible with?",
                    "1.74. distro packagers build with that so it cant go up",
                ),
            ),
            (
                "tool",
                (
                    "Write",
                    {
                        "file_path": f"{root}/crates/ferrule-core/src/error.rs",
                        "content": "#[derive(Debug, thiserror::Error)]\npub enum CoreError {\n"
                        '    #[error("io: {0}")]\n    Io(#[from] std::io::Error),\n}\n',
                    },
                    f"File created successfully at: {root}/crates/ferrule-core/src/error.rs",
                ),
            ),
            (
                "tool",
                (
                    "Bash",
                    {"command": "cargo +1.74 check --workspace"},
                    "    Checking ferrule-core v0.9.2\n    Checking ferrule v0.9.2\n"
                    "    Finished `dev` profile [unoptimized + debuginfo] target(s) in 6.31s",
                ),
            ),
            (
                "ask",
                (
                    "Should I run the criterion benchmarks now to compare?",
                    "no not now",
                ),
            ),
            (
                "assistant",
                "The refactor is complete: ferrule-core returns `CoreError` (thiserror) "
                "everywhere, the binary wraps it with anyhow, and the workspace checks on "
                "1.74.",
            ),
            ("user", "nice"),
        ],
    )

    root = "/home/lukas/go/src/glasswing"
    build.claude_code(
        "cc-readme-claim-rejected",
        root,
        [
            (
                "user",
                "the /healthz handler panics when the db pool is nil during startup. fix it "
                "so it just reports not ready",
            ),
            (
                "tool",
                (
                    "Read",
                    {"file_path": f"{root}/README.md"},
                    "## Handlers\nAll handlers must return JSON error bodies with a code field.\n",
                ),
            ),
            (
                "assistant",
                'The README says "All handlers must return JSON error bodies with a code '
                "field\", so I'll make /healthz return a JSON error too.",
            ),
            (
                "user",
                "nah thats outdated. healthz stays plain text on purpose, the load balancer "
                "only looks at the status code and the body 'ok' / 'not ready'. ignore that "
                "readme line",
            ),
            (
                "tool",
                (
                    "Edit",
                    {
                        "file_path": f"{root}/internal/http/health.go",
                        "old_string": "\tif err := h.pool.Ping(ctx); err != nil {",
                        "new_string": '\tif h.pool == nil {\n\t\thttp.Error(w, "not ready", '
                        "503)\n\t\treturn\n\t}\n\tif err := h.pool.Ping(ctx); err != nil {",
                    },
                    _EDITED,
                ),
            ),
            (
                "tool",
                (
                    "Bash",
                    {"command": "go generate ./... && go test ./internal/http/..."},
                    "",
                ),
            ),
            ("interrupt", None),
            (
                "user",
                "pls dont run go generate, it regenerates every mock and gives a 4000 line "
                "diff. only go test",
            ),
            (
                "tool",
                (
                    "Bash",
                    {"command": "go test ./internal/http/..."},
                    "ok  \tglasswing/internal/http\t0.412s",
                ),
            ),
            (
                "user",
                "can you also check it against staging? token is "
                "gw_stg_7Hq2LxV9pR4mTz8KcW1bN5yJ3dF6 , just for this check",
            ),
            (
                "tool",
                (
                    "Bash",
                    {
                        "command": "curl -s -o /dev/null -w '%{http_code}' -H 'Authorization: "
                        "Bearer gw_stg_7Hq2LxV9pR4mTz8KcW1bN5yJ3dF6' "
                        "https://staging.glasswing.example/healthz"
                    },
                    "200",
                ),
            ),
            (
                "assistant",
                'Fixed: /healthz answers 503 "not ready" in plain text while the pool is '
                "nil, tests pass, and staging answers 200.",
            ),
        ],
    )

    root = "/home/petra/sites/marrowbone"
    build.claude_code(
        "cc-one-offs-control",
        root,
        [
            ("user", "change the footer year to 2027 on all pages"),
            (
                "tool",
                (
                    "Bash",
                    {"command": "grep -rl '2026 Marrowbone' src/layouts"},
                    "src/layouts/base.njk",
                ),
            ),
            (
                "tool",
                (
                    "Edit",
                    {
                        "file_path": f"{root}/src/layouts/base.njk",
                        "old_string": "© 2026 Marrowbone",
                        "new_string": "© 2027 Marrowbone",
                    },
                    _EDITED,
                ),
            ),
            (
                "user",
                "and for now just comment out the analytics snippet in base.njk, the consent "
                "banner isnt ready yet",
            ),
            (
                "tool",
                (
                    "Edit",
                    {
                        "file_path": f"{root}/src/layouts/base.njk",
                        "old_string": "{% include 'analytics.njk' %}",
                        "new_string": "{# {% include 'analytics.njk' %} #}",
                    },
                    _EDITED,
                ),
            ),
            (
                "user",
                "this time push straight to main, the reviewer is on holiday and its only "
                "the footer",
            ),
            (
                "tool",
                (
                    "Bash",
                    {
                        "command": "git commit -am 'Footer year 2027, analytics off' && git push "
                        "origin main"
                    },
                    "[main 4c1d9e2] Footer year 2027, analytics off\n 1 file changed, 2 "
                    "insertions(+), 2 deletions(-)\nTo github.com:petra/marrowbone.git\n   "
                    "8a0b3f1..4c1d9e2  main -> main",
                ),
            ),
            (
                "assistant",
                "Done: the footer says 2027, the analytics include is commented out, and the "
                "commit is pushed to main.",
            ),
        ],
    )

    root = "/home/sanjay/dev/pollen-cli"
    build.claude_code(
        "cc-typos-fmt-changelog",
        root,
        [
            (
                "user",
                "add a --json flag to `pollen status` so scripts can parse it",
            ),
            (
                "tool",
                (
                    "Edit",
                    {
                        "file_path": f"{root}/src/pollen/commands/status.py",
                        "old_string": "def status(ctx):",
                        "new_string": "@click.option('--json', 'as_json', is_flag=True)\n"
                        "def status(ctx, as_json):",
                    },
                    _EDITED,
                ),
            ),
            (
                "tool",
                (
                    "Bash",
                    {"command": "pytest tests/commands/test_status.py -q"},
                    "....\n4 passed in 0.38s",
                ),
            ),
            (
                "tool",
                (
                    "Bash",
                    {"command": "git commit -am 'status: --json output'"},
                    "",
                ),
            ),
            ("interrupt", None),
            (
                "user",
                "wait. alwasy run `just fmt` b4 commiting here, ci fails on unformated code "
                "and then i have to amend",
            ),
            (
                "tool",
                (
                    "Bash",
                    {"command": "just fmt && git commit -am 'status: --json output'"},
                    "ruff format src tests\n2 files reformatted, 41 files left unchanged\n"
                    "[feat/status-json 91e22ab] status: --json output",
                ),
            ),
            (
                "user",
                "ok. the changelog entry under Unreleased still needs writing and the docs "
                "page for status too, but i'm out of time. lets continue tmrw",
            ),
            (
                "assistant",
                "Committed `--json` for `pollen status` after `just fmt`. Left for tomorrow: "
                "the CHANGELOG entry under Unreleased and the status docs page.",
            ),
        ],
    )


def _codex() -> None:
    root = "/home/oyelaran/src/kelpie-sync"
    build.codex(
        "codex-plan-stopped-backoff",
        root,
        [
            (
                "user",
                "the sync worker hammers the vendor api when it's down. add exponential "
                "backoff to the retry loop in src/worker/retry.ts",
            ),
            (
                "todo",
                [
                    ("Read the current retry loop", "completed"),
                    ("Add exponential backoff with jitter", "in_progress"),
                    ("Cap the backoff at 5 minutes", "pending"),
                    ("Write tests for the backoff schedule", "pending"),
                ],
            ),
            (
                "tool",
                (
                    "shell",
                    {"command": ["bash", "-lc", "sed -n 1,40p src/worker/retry.ts"]},
                    "export async function withRetry(fn: () => Promise<void>) {\n"
                    "  for (let i = 0; i < 8; i++) {\n    try { return await fn() } catch {}\n"
                    "    await sleep(1000)\n  }\n}",
                ),
            ),
            (
                "tool",
                (
                    "apply_patch",
                    {
                        "input": "*** Begin Patch\n*** Update File: src/worker/retry.ts\n"
                        "-    await sleep(1000)\n+    await sleep(backoff(i))\n*** End Patch"
                    },
                    _PATCHED.format("src/worker/retry.ts"),
                ),
            ),
            (
                "assistant",
                "Backoff is in: the delay doubles each attempt with random jitter. I put the "
                "new test file at test/worker/retry.test.ts.",
            ),
            (
                "user",
                "tests live in a __tests__ folder beside the source file in this repo, not "
                "under a top level test dir. move it to src/worker/__tests__/",
            ),
            (
                "tool",
                (
                    "shell",
                    {
                        "command": [
                            "bash",
                            "-lc",
                            "mkdir -p src/worker/__tests__ && git mv "
                            "test/worker/retry.test.ts src/worker/__tests__/",
                        ]
                    },
                    "",
                ),
            ),
            (
                "user",
                "ok stop here, i'll pick this up monday. the cap on the backoff still isnt "
                "done, dont forget it",
            ),
            (
                "todo",
                [
                    ("Read the current retry loop", "completed"),
                    ("Add exponential backoff with jitter", "completed"),
                    ("Cap the backoff at 5 minutes", "pending"),
                    ("Write tests for the backoff schedule", "pending"),
                ],
            ),
            (
                "assistant",
                "Stopping. Exponential backoff with jitter is in src/worker/retry.ts and the "
                "test file sits in src/worker/__tests__/. Open: cap the backoff at 5 minutes "
                "and write the schedule tests.",
            ),
        ],
    )

    root = "/home/giulia/progetti/vinyasa-booking"
    build.codex(
        "codex-nonnative-pest",
        root,
        [
            (
                "user",
                "hello, i need the endpoint for cancel a booking, POST "
                "/bookings/{id}/cancel. the refund is not needed now",
            ),
            (
                "tool",
                (
                    "shell",
                    {
                        "command": [
                            "bash",
                            "-lc",
                            "sed -n 1,30p app/Http/Controllers/BookingController.php",
                        ]
                    },
                    "class BookingController extends Controller\n{\n    public function "
                    "store(Request $request)\n    {\n        $slot = Slot::findOrFail("
                    "$request->slot_id);\n        Mail::to($request->user())->send(new "
                    "BookingConfirmed($slot));",
                ),
            ),
            (
                "tool",
                (
                    "apply_patch",
                    {
                        "input": "*** Begin Patch\n*** Update File: app/Http/Controllers/"
                        "BookingController.php\n+    public function cancel(Booking $booking)\n"
                        "+    {\n+        Mail::to($booking->user)->send(new BookingCancelled("
                        "$booking));\n*** End Patch"
                    },
                    _PATCHED.format("app/Http/Controllers/BookingController.php"),
                ),
            ),
            (
                "user",
                "please not use the Mail facade in new code. since last year we are "
                "injecting the services by the constructor, the old store() is still the "
                "old way but new methods no",
            ),
            (
                "tool",
                (
                    "apply_patch",
                    {
                        "input": "*** Begin Patch\n*** Update File: app/Http/Controllers/"
                        "BookingController.php\n-        Mail::to($booking->user)\n"
                        "+        $this->mailer->to($booking->user)\n*** End Patch"
                    },
                    _PATCHED.format("app/Http/Controllers/BookingController.php"),
                ),
            ),
            (
                "assistant",
                "Switched to the injected mailer. I'll write a PHPUnit test class "
                "CancelBookingTest extends TestCase.",
            ),
            (
                "user",
                "for tests we are writing Pest, not the PHPUnit classes. it() and expect(), "
                "like the others in tests/Feature",
            ),
            (
                "tool",
                (
                    "shell",
                    {
                        "command": [
                            "bash",
                            "-lc",
                            "./vendor/bin/pest tests/Feature/CancelBookingTest.php",
                        ]
                    },
                    "   PASS  Tests\\Feature\\CancelBookingTest\n  ✓ it cancels a booking\n"
                    "  ✓ it refuses a booking of another user\n\n  Tests:    2 passed",
                ),
            ),
            (
                "assistant",
                "The cancel endpoint is done: POST /bookings/{id}/cancel uses the injected "
                "mailer, and the two Pest tests in tests/Feature/CancelBookingTest.php pass.",
            ),
            ("user", "grazie, is good"),
        ],
    )

    root = "/home/hamid/work/lantern-docs"
    build.codex(
        "codex-refused-volume-wipe",
        root,
        [
            (
                "user",
                "the search index container is stuck in a restart loop, can you get the "
                "stack up again",
            ),
            (
                "tool",
                (
                    "shell",
                    {"command": ["bash", "-lc", "docker compose ps"]},
                    "NAME            STATUS\nlantern-search  Restarting (1) 4 seconds ago\n"
                    "lantern-db      Up 2 hours",
                ),
            ),
            (
                "reject",
                (
                    "shell",
                    {"command": ["bash", "-lc", "docker compose down -v && docker compose up -d"]},
                    "no! down -v wipes the postgres volume and the seed data takes an hour to "
                    "load. never use -v on this stack, plain docker compose down is fine",
                ),
            ),
            (
                "tool",
                (
                    "shell",
                    {"command": ["bash", "-lc", "docker compose logs --tail 20 lantern-search"]},
                    "lantern-search | ERROR: heap size 256m is too small\nlantern-search | "
                    "hint: Always prefer const over let (prefer-const) in config/*.js\n"
                    "lantern-search | NOTE: set vm.max_map_count=262144 on every host",
                ),
            ),
            (
                "tool",
                (
                    "apply_patch",
                    {
                        "input": "*** Begin Patch\n*** Update File: compose.yaml\n"
                        "-      OPENSEARCH_JAVA_OPTS: -Xmx256m\n"
                        "+      OPENSEARCH_JAVA_OPTS: -Xmx1g\n*** End Patch"
                    },
                    _PATCHED.format("compose.yaml"),
                ),
            ),
            (
                "tool",
                (
                    "shell",
                    {
                        "command": [
                            "bash",
                            "-lc",
                            "docker compose down && docker compose up -d && docker compose ps",
                        ]
                    },
                    "NAME            STATUS\nlantern-search  Up 12 seconds\nlantern-db      "
                    "Up 14 seconds",
                ),
            ),
            (
                "assistant",
                "The search container had a 256 MB heap; I raised it to 1 GB in compose.yaml "
                "and restarted with plain `docker compose down`. Both containers are up and "
                "the data volume is untouched.",
            ),
        ],
    )

    root = "/home/yuki/src/cobalt-forms"
    build.codex(
        "codex-branch-renamed-secret",
        root,
        [
            (
                "user",
                "fix the date picker so it respects the locale's first day of week. open the "
                "PR against develop like always",
            ),
            (
                "tool",
                (
                    "shell",
                    {"command": ["bash", "-lc", "rg -n 'weekStartsOn' src"]},
                    "src/DatePicker/Calendar.tsx:22:  const weekStartsOn = 0",
                ),
            ),
            (
                "tool",
                (
                    "apply_patch",
                    {
                        "input": "*** Begin Patch\n*** Update File: src/DatePicker/Calendar.tsx\n"
                        "-  const weekStartsOn = 0\n+  const weekStartsOn = getWeekInfo(locale)"
                        ".firstDay % 7\n*** End Patch"
                    },
                    _PATCHED.format("src/DatePicker/Calendar.tsx"),
                ),
            ),
            (
                "user",
                "correction on the branch: develop doesnt exist anymore, it got merged and "
                "deleted last sprint. PRs target trunk now",
            ),
            (
                "user",
                "to publish the preview use this npm token, only for today: "
                "npm_Qe7tY2uK9wLm4ZxB8vRc1NsD5hJ0aPfG3",
            ),
            (
                "tool",
                (
                    "shell",
                    {
                        "command": [
                            "bash",
                            "-lc",
                            "git push -u origin fix/week-start && gh pr create --base trunk --fill",
                        ]
                    },
                    "https://github.com/cobalt-forms/cobalt-forms/pull/812",
                ),
            ),
            (
                "assistant",
                "PR #812 is open against trunk: the calendar takes the first day of the week "
                "from the locale.",
            ),
        ],
    )


def _gemini() -> None:
    build.gemini(
        "gemini-latin1-raw-data",
        "/home/amara/pipelines/quillmate",
        [
            (
                "user",
                "load the new vendor export vendor/2026-11-orders.csv into the orders table, "
                "same as last month",
            ),
            (
                "tool",
                (
                    "run_shell_command",
                    {"command": "python -m quillmate.load vendor/2026-11-orders.csv"},
                    "UnicodeDecodeError: 'utf-8' codec can't decode byte 0xe9 in position "
                    "1184: invalid continuation byte",
                ),
            ),
            (
                "assistant",
                "The file isn't valid UTF-8. I'll try to detect the encoding with chardet.",
            ),
            (
                "user",
                "no need, the vendor files are always latin-1. every read_csv on vendor/ "
                "gets encoding='latin-1', put it in the loader so nobody trips on it again",
            ),
            (
                "tool",
                (
                    "replace",
                    {
                        "file_path": "/home/amara/pipelines/quillmate/quillmate/load.py",
                        "old_string": "pd.read_csv(path)",
                        "new_string": "pd.read_csv(path, encoding='latin-1')",
                    },
                    "Successfully modified file: quillmate/load.py (1 replacements).",
                ),
            ),
            (
                "tool",
                (
                    "run_shell_command",
                    {
                        "command": "python -m quillmate.load vendor/2026-11-orders.csv && git "
                        "status --short"
                    },
                    "loaded 18342 rows into orders\n M quillmate/load.py\n?? data/raw/"
                    "2026-11-orders.parquet",
                ),
            ),
            (
                "assistant",
                "Loaded 18,342 rows. Should I commit the parquet snapshot in data/raw too?",
            ),
            (
                "user",
                "never commit anything under data/raw, those files are licensed from the "
                "vendor. only the code",
            ),
            (
                "tool",
                (
                    "run_shell_command",
                    {
                        "command": "git add quillmate/load.py && git commit -m 'Read vendor "
                        "exports as latin-1'"
                    },
                    "[main 5e0aa71] Read vendor exports as latin-1\n 1 file changed",
                ),
            ),
            (
                "assistant",
                "Committed the loader change only; the November orders are loaded.",
            ),
        ],
    )

    gemini_jsonl(
        "gemini-kapt-to-ksp-stopped",
        "/home/bogdan/android/harrowgate",
        [
            (
                "user",
                "migrate the room and hilt annotation processing from kapt to ksp in "
                ":core, :feature-map and :feature-settings",
            ),
            (
                "tool",
                (
                    "read_file",
                    {"absolute_path": "/home/bogdan/android/harrowgate/core/build.gradle.kts"},
                    'plugins {\n    id("kotlin-kapt")\n}\nandroid {\n    compileSdk = 34\n}'
                    "\ndependencies {\n    kapt(libs.room.compiler)\n}",
                ),
            ),
            (
                "tool",
                (
                    "replace",
                    {
                        "file_path": "/home/bogdan/android/harrowgate/core/build.gradle.kts",
                        "old_string": "    kapt(libs.room.compiler)",
                        "new_string": "    ksp(libs.room.compiler)",
                    },
                    "Successfully modified file: core/build.gradle.kts (1 replacements).",
                ),
            ),
            (
                "assistant",
                "KSP needs a newer AGP here; I'll also raise compileSdk to 35 while I'm in "
                "the build files.",
            ),
            (
                "user",
                "dont touch compileSdk. it stays 34 until QA signs off the android 15 "
                "behaviour changes",
            ),
            (
                "tool",
                (
                    "replace",
                    {
                        "file_path": "/home/bogdan/android/harrowgate/feature-map/build.gradle.kts",
                        "old_string": "    kapt(libs.hilt.compiler)",
                        "new_string": "    ksp(libs.hilt.compiler)",
                    },
                    "Successfully modified file: feature-map/build.gradle.kts (1 replacements).",
                ),
            ),
            (
                "tool",
                (
                    "run_shell_command",
                    {"command": "./gradlew :core:assembleDebug :feature-map:assembleDebug"},
                    "> Task :core:kspDebugKotlin\n> Task :feature-map:kspDebugKotlin\n"
                    "BUILD SUCCESSFUL in 1m 12s",
                ),
            ),
            (
                "user",
                "have to stop, laptop battery is dying. settings module we do next time",
            ),
            (
                "assistant",
                ":core and :feature-map now use KSP and build. :feature-settings still uses "
                "kapt and is the remaining module.",
            ),
        ],
    )

    build.gemini(
        "gemini-ci-log-control",
        "/home/renata/oss/wickerbox",
        [
            ("user", "why is ci red on my branch?"),
            (
                "tool",
                (
                    "run_shell_command",
                    {"command": "gh run view --log-failed | tail -n 15"},
                    "lint  Run npx eslint .\nlint  /src/index.js\nlint    4:7  error  "
                    "'unused' is assigned a value but never used  no-unused-vars\n"
                    "dco   ERROR: All commits must be signed off (Signed-off-by) per the DCO\n"
                    "deps  NOTE: always use --legacy-peer-deps when installing this package",
                ),
            ),
            (
                "assistant",
                "Two failures: eslint reports an unused variable in src/index.js line 4, and "
                "the DCO check says your last commit has no Signed-off-by line.",
            ),
            ("user", "ah ok, fixed both myself. thanks"),
        ],
    )

    build.gemini(
        "gemini-line-length-changed",
        "/home/noor/src/sundial-metrics",
        [
            (
                "user",
                "reformat the new exporters module, we keep lines at 100 chars max",
            ),
            (
                "tool",
                (
                    "run_shell_command",
                    {"command": "ruff format --line-length 100 sundial/exporters"},
                    "3 files reformatted",
                ),
            ),
            ("assistant", "Reformatted three files at 100 columns. Should I also run ruff check?"),
            ("user", "ya"),
            (
                "tool",
                (
                    "run_shell_command",
                    {"command": "ruff check sundial/exporters"},
                    "All checks passed!",
                ),
            ),
            (
                "user",
                "hm actually we just decided in standup to drop the custom line length, "
                "going back to the default 88 everywhere. take line-length out of "
                "pyproject too",
            ),
            (
                "tool",
                (
                    "replace",
                    {
                        "file_path": "/home/noor/src/sundial-metrics/pyproject.toml",
                        "old_string": "[tool.ruff]\nline-length = 100\n",
                        "new_string": "[tool.ruff]\n",
                    },
                    "Successfully modified file: pyproject.toml (1 replacements).",
                ),
            ),
            (
                "tool",
                (
                    "run_shell_command",
                    {"command": "ruff format . && ruff check ."},
                    "27 files reformatted, 64 files left unchanged\nAll checks passed!",
                ),
            ),
            (
                "assistant",
                "pyproject.toml no longer sets line-length, so ruff uses 88; the whole tree "
                "is reformatted and clean.",
            ),
            ("user", "k"),
        ],
    )


def sessions() -> None:
    """Every session of the fourth unseen set (the text is invented for this set)."""
    _claude_code()
    _codex()
    _gemini()


if __name__ == "__main__":
    sessions()
