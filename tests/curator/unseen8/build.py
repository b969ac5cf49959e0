"""Write the eighth unseen set: made-up sessions written blind to the curator's rules.

Its author saw only the transcript builders, the earlier sets' layout (file names, target
format, how the bench and the held-out test load a set), never the curator's rules nor the
earlier sets' sentences, and the curator was not run on it before it was committed: it
measures how the rules generalise to projects none of the earlier sets used (a COBOL batch
migration, a Django + HTMX clinic app, a Kafka Streams job, a LaTeX thesis, a Vue storefront,
a Laravel API, an OCaml compiler, a Scala Spark job, a Blender add-on, a CUDA kernel, a
Raspberry Pi home automation, a Svelte dashboard). It holds durable rules in plain words and
with cue words, corrections of the agent with and without "don't", refusals with a reason,
answers to the agent's questions (durable and one-off), values changed later in the session,
one-off instructions, quoted agent claims the user rejects, pasted logs and tool output holding
rule-like sentences, secrets, typos, terse and non-native English, work left unfinished (a
checkpoint is expected) and work finished (none may be left). Claude Code JSONL, Codex
rollouts, Gemini CLI session documents and Gemini CLI session JSONL; every person, project,
path, token and sentence is invented.

Run ``python tests/curator/unseen8/build.py`` to rewrite the transcripts.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))

from tests.curator.blind import build  # noqa: E402
from tests.curator.unseen4 import build as unseen4_build  # noqa: E402

build.OUT = HERE / "transcripts"  # set after the unseen4 import, which points it at unseen4

_EDITED = "The file has been updated successfully."
_PATCHED = "Success. Updated the following files:\nM {}"


def _claude_code() -> None:
    root = "/home/tereza/work/ledgerbatch"
    build.claude_code(
        "cc-cobol-batch-codepage-changed-stopped",
        root,
        [
            (
                "user",
                "we migrate the nightly COBOL batch INTRST01 to java. copybooks in cpy/ are the "
                "source of truth, the java records in generated/ come from tools/cpy2java and "
                "nobody edits them by hand. input files are EBCDIC cp037",
            ),
            ("assistant", "I'll read the copybook and the generator first."),
            (
                "tool",
                (
                    "Read",
                    {"file_path": f"{root}/cpy/ACCTREC.cpy"},
                    "01 ACCT-REC.\n   05 ACCT-NO     PIC 9(10).\n   05 ACCT-BAL    PIC "
                    "S9(11)V99 COMP-3.",
                ),
            ),
            (
                "assistant",
                "ACCT-BAL is packed decimal. I'll add a BigDecimal unpacker and fix the scale in "
                "generated/AcctRec.java directly so it reads two decimals.",
            ),
            (
                "reject",
                (
                    "Edit",
                    {
                        "file_path": f"{root}/generated/AcctRec.java",
                        "old_string": "scale(0)",
                        "new_string": "scale(2)",
                    },
                    "no, generated/ gets overwritten on every run. fix the scale handling in "
                    "tools/cpy2java and regenerate",
                ),
            ),
            (
                "tool",
                (
                    "Edit",
                    {
                        "file_path": f"{root}/tools/cpy2java/Comp3.java",
                        "old_string": "int scale = 0;",
                        "new_string": "int scale = pic.decimals();",
                    },
                    _EDITED,
                ),
            ),
            (
                "tool",
                (
                    "Bash",
                    {"command": "./gradlew regen test"},
                    "> Task :regen\nregenerated 14 records\n> Task :test\n"
                    "ReconcileTest > interestMatchesMainframe() FAILED\n"
                    "  expected: 1023.45 but was: 1023.4\n"
                    "BUILD FAILED in 41s",
                ),
            ),
            (
                "assistant",
                "One reconciliation test fails on a sample file from the Zurich branch: the "
                "umlauts in the names decode wrong with cp037.",
            ),
            (
                "user",
                "ah sorry my mistake. its cp500 not cp037, for all the branch files, also Zurich. "
                "and the reconcile must compare to the cent, dont round",
            ),
            (
                "tool",
                (
                    "Edit",
                    {
                        "file_path": f"{root}/src/main/java/ch/ledger/batch/Io.java",
                        "old_string": 'Charset.forName("Cp037")',
                        "new_string": 'Charset.forName("Cp500")',
                    },
                    _EDITED,
                ),
            ),
            (
                "tool",
                (
                    "Bash",
                    {"command": "./gradlew regen test"},
                    "> Task :test\n38 tests completed, 0 failed\nBUILD SUCCESSFUL in 39s",
                ),
            ),
            (
                "assistant",
                "INTRST01 now reconciles to the cent on all sample files. Next would be INTRST02 "
                "(the compound interest program); I have not started it.",
            ),
            (
                "user",
                "ok good. stop here for today, INTRST02 we do tomorow. its the one with the "
                "REDEFINES, be carefull",
            ),
            ("assistant", "Stopping here. INTRST02 is not started."),
        ],
    )

    root = "/srv/dev/mediclinic"
    build.claude_code(
        "cc-clinic-htmx-refused-secret-finished",
        root,
        [
            (
                "user",
                "appointments list in the clinic app should refresh when a nurse changes the "
                "status, without full reload. Django 5 + htmx. patient names never go into log "
                "lines, we log the patient id only",
            ),
            ("assistant", "I'll add django-htmx for the request helpers."),
            (
                "reject",
                (
                    "Bash",
                    {"command": "pip install django-htmx"},
                    "not pip. this project is managed by uv, use uv add, otherwise the lock "
                    "file drifts",
                ),
            ),
            (
                "tool",
                (
                    "Bash",
                    {"command": "uv add django-htmx"},
                    "Resolved 31 packages\n+ django-htmx==1.21.0",
                ),
            ),
            (
                "tool",
                (
                    "Edit",
                    {
                        "file_path": f"{root}/templates/base.html",
                        "old_string": "<body>",
                        "new_string": '<body hx-boost="true">',
                    },
                    _EDITED,
                ),
            ),
            (
                "assistant",
                "I turned on hx-boost on the body so every link and form goes through htmx, "
                "and the status select posts to /appointments/<id>/status/.",
            ),
            (
                "user",
                "take the boost off again. the intake forms have file uploads and they break "
                "with boost. htmx only on the partials, hx-get / hx-post on the table rows",
            ),
            (
                "tool",
                (
                    "Edit",
                    {
                        "file_path": f"{root}/templates/base.html",
                        "old_string": '<body hx-boost="true">',
                        "new_string": "<body>",
                    },
                    _EDITED,
                ),
            ),
            (
                "user",
                "tests fail locally with db error, here is my env, maybe you see it\n"
                "DATABASE_URL=postgres://clinic:Qe7vR2pLw9xZ@localhost:5433/clinic\n"
                "DJANGO_DEBUG=1",
            ),
            (
                "tool",
                (
                    "Bash",
                    {"command": "uv run pytest -q appointments"},
                    "........\n8 passed in 3.12s",
                ),
            ),
            (
                "assistant",
                "With the port 5433 from your env the tests pass: 8 passed. The status change "
                "swaps only the row partial now.",
            ),
            ("user", "works on my side too. thx, merged"),
        ],
    )

    root = "/home/okafor/code/payflow-streams"
    build.claude_code(
        "cc-kafka-claim-log-answer-stopped",
        root,
        [
            (
                "user",
                "the fraud-score stream app duplicates scores after a broker restart. kotlin, "
                "kafka streams 3.7. look at FraudTopology.kt",
            ),
            (
                "tool",
                (
                    "Read",
                    {"file_path": f"{root}/src/main/kotlin/FraudTopology.kt"},
                    'props[StreamsConfig.PROCESSING_GUARANTEE_CONFIG] = "at_least_once"',
                ),
            ),
            (
                "assistant",
                "Kafka Streams is exactly-once by default, so the explicit at_least_once line "
                "is what causes it. I removed the processing.guarantee setting.",
            ),
            (
                "user",
                "> Kafka Streams is exactly-once by default\nno, the default is at_least_once. "
                "every app of ours sets processing.guarantee=exactly_once_v2 explicit in its "
                "config, put that",
            ),
            (
                "tool",
                (
                    "Edit",
                    {
                        "file_path": f"{root}/src/main/kotlin/FraudTopology.kt",
                        "old_string": '"at_least_once"',
                        "new_string": "StreamsConfig.EXACTLY_ONCE_V2",
                    },
                    _EDITED,
                ),
            ),
            (
                "user",
                "this is what the broker logged during the restart:\n"
                "[2026-11-30 02:14:07,311] WARN [GroupCoordinator 2]: Member fraud-score-1 "
                "failed to commit. Consumers should always commit offsets before a rebalance "
                "completes. (kafka.coordinator.group.GroupCoordinator)\n"
                "[2026-11-30 02:14:07,402] INFO [GroupCoordinator 2]: Preparing to rebalance "
                "group fraud-score",
            ),
            (
                "ask",
                (
                    "The dead-letter topic needs a name. Which naming should I follow?",
                    "same as all our topics: <domain>.<entity>.v<N>, dots, lower case. so "
                    "fraud.score-dlq.v1",
                ),
            ),
            (
                "tool",
                (
                    "Bash",
                    {"command": "./gradlew test"},
                    "FraudTopologyTest > noDuplicatesAfterRestart() PASSED\nBUILD SUCCESSFUL",
                ),
            ),
            (
                "assistant",
                "Exactly-once is set and the restart test passes. The DLQ topic "
                "fraud.score-dlq.v1 is declared, but the handler that routes poison records to "
                "it is not wired yet.",
            ),
            ("user", "pause here, i have to go in a meeting. DLQ handler next time"),
        ],
    )

    root = "/home/lucia/thesis"
    build.claude_code(
        "cc-latex-thesis-oneoff-finished",
        root,
        [
            (
                "user",
                "chapter 3 doesnt compile anymore since I added the new figures. please compile "
                "with latexmk -lualatex, pdflatex not works with our fonts (the university "
                "template need fontspec)",
            ),
            (
                "tool",
                (
                    "Bash",
                    {"command": "latexmk -lualatex main.tex"},
                    "! LaTeX Error: Unknown option 'backend=bibtex' for package biblatex.\n"
                    "l.12 \\usepackage[backend=bibtex]{biblatex}",
                ),
            ),
            (
                "assistant",
                "The preamble asks biblatex for the bibtex backend. I'll switch to plain "
                "natbib with \\bibliographystyle so it works with bibtex.",
            ),
            (
                "user",
                "no natbib. bibliography is biblatex with biber, the backend=bibtex is just a "
                "typo I made",
            ),
            (
                "tool",
                (
                    "Edit",
                    {
                        "file_path": f"{root}/preamble.tex",
                        "old_string": "backend=bibtex",
                        "new_string": "backend=biber",
                    },
                    _EDITED,
                ),
            ),
            (
                "assistant",
                "Fixed the backend. Chapter 3 also has \\ref{fig:...} and \\cref mixed; want me "
                "to unify them?",
            ),
            (
                "user",
                "yes. figures and tables are referenced with \\cref in the whole thesis. and "
                "leave the \\todo notes in chapter 3 for now, I delete them myself this week",
            ),
            (
                "tool",
                (
                    "Bash",
                    {"command": "latexmk -lualatex main.tex"},
                    "Output written on main.pdf (142 pages).\nLatexmk: All targets are up-to-date",
                ),
            ),
            (
                "assistant",
                "main.pdf builds (142 pages); all figure and table references in chapter 3 use "
                "\\cref now, the \\todo notes are untouched.",
            ),
            ("user", "perfect, that was all. danke"),
        ],
    )


def _codex() -> None:
    root = "/Users/mhoang/dev/lumen-shop"
    build.codex(
        "codex-vue-storefront-answers-finished",
        root,
        [
            (
                "user",
                "cart badge shows wrong count after removing an item. vue 3 storefront. prices "
                'come from the api as strings like "19.90" and we never parseFloat them, '
                "formatting goes through src/utils/money.ts",
            ),
            (
                "tool",
                (
                    "exec_command",
                    {"cmd": "rg -n cartCount src"},
                    "src/store/cart.js:22:  cartCount: state => state.items.length",
                ),
            ),
            (
                "assistant",
                "The count comes from the old Vuex cart module and ignores quantities. Should "
                "I fix it in the Vuex store or move the cart to Pinia?",
            ),
            (
                "user",
                "pinia. vuex is on the way out, nothing new goes there. new stores in "
                "src/stores/ with the setup syntax",
            ),
            (
                "tool",
                (
                    "apply_patch",
                    {"input": "*** Add File: src/stores/cart.ts"},
                    _PATCHED.format("src/stores/cart.ts"),
                ),
            ),
            (
                "assistant",
                "Moved the cart to src/stores/cart.ts (setup store); the count sums "
                "quantities. Which port should the dev server use, the default 5173?",
            ),
            ("user", "take 5174 today, 5173 is busy with the admin app I have open"),
            (
                "tool",
                (
                    "exec_command",
                    {"cmd": "pnpm vitest run && pnpm dev --port 5174"},
                    " Test Files  12 passed (12)\n  VITE v5.4.2  ready in 612 ms\n"
                    "  -> Local:   http://localhost:5174/",
                ),
            ),
            (
                "assistant",
                "Tests pass and the dev server is on 5174. Removing an item updates the badge.",
            ),
            ("user", "yep fixed, thanks"),
        ],
    )

    root = "/home/deniz/projects/rentdesk-api"
    build.codex(
        "codex-laravel-refused-secret-stopped",
        root,
        [
            (
                "user",
                "add a refund endpoint POST /api/v1/payments/{id}/refund. controllers dont "
                "return eloquent models direct, everything goes out through a JsonResource",
            ),
            (
                "tool",
                (
                    "exec_command",
                    {"cmd": "php artisan make:migration add_refunded_at_to_payments"},
                    "INFO  Migration [2026_12_01_101500_add_refunded_at_to_payments] created "
                    "successfully.",
                ),
            ),
            (
                "reject",
                (
                    "exec_command",
                    {"cmd": "php artisan migrate:fresh --seed"},
                    "never migrate:fresh here, the .env points to the shared staging database "
                    "and fresh drops every table. plain php artisan migrate only",
                ),
            ),
            (
                "tool",
                (
                    "exec_command",
                    {"cmd": "php artisan migrate"},
                    "INFO  Running migrations.\n  2026_12_01_101500_add_refunded_at_to_payments "
                    "... 18ms DONE",
                ),
            ),
            (
                "user",
                "for the stripe call use the test key from my env: "
                "STRIPE_SECRET=sk_test_51Nf8QaZx3LmT0pR7yVc2wEk9HbU4 (will rotate it later)",
            ),
            (
                "tool",
                (
                    "apply_patch",
                    {"input": "*** Add File: app/Http/Resources/RefundResource.php"},
                    _PATCHED.format("app/Http/Resources/RefundResource.php"),
                ),
            ),
            (
                "assistant",
                "The endpoint refunds through Stripe and returns a RefundResource. Partial "
                "refunds and the feature tests for the endpoint are not written yet.",
            ),
            ("user", "ok we stop. partial refunds + tests next session"),
        ],
    )

    root = "/home/arno/src/kestrelc"
    build.codex(
        "codex-ocaml-claim-changed-stopped",
        root,
        [
            (
                "user",
                "kestrelc: add the closure conversion pass after typecheck. parser is menhir, "
                "we dont write parsers by hand. commit msgs start with the pass name like "
                "`typecheck: ...`",
            ),
            (
                "tool",
                (
                    "exec_command",
                    {"cmd": "dune build 2>&1 | head -5"},
                    'File "lib/ir.ml", line 3: Error: Unbound value show_term',
                ),
            ),
            (
                "assistant",
                "ppx_deriving's show does not work with OCaml 5.1, so I wrote the IR printers "
                "by hand in lib/ir_print.ml.",
            ),
            (
                "user",
                '"does not work with OCaml 5.1" - not true, we use it since months on 5.1. '
                "the dune file is just missing the preprocess stanza. delete ir_print.ml and "
                "use [@@deriving show]",
            ),
            (
                "tool",
                (
                    "apply_patch",
                    {"input": "*** Update File: lib/dune\n*** Delete File: lib/ir_print.ml"},
                    _PATCHED.format("lib/dune"),
                ),
            ),
            (
                "tool",
                (
                    "exec_command",
                    {"cmd": "dune build && dune test"},
                    'File "test/closure.t", line 1: passed\nAll 23 tests passed',
                ),
            ),
            (
                "user",
                "about the commits: forget the pass-name prefix, the team moved to "
                "conventional commits last week. so `feat(closure): ...`, `fix(typecheck): ...`",
            ),
            (
                "assistant",
                "Noted. Closure conversion handles lambdas and let rec; free variables of "
                "nested closures inside match arms are not converted yet, and there is no "
                "cram test for them.",
            ),
            ("user", "fine, leave it there. we continue the match arms monday"),
        ],
    )

    root = "/opt/jobs/ferngrid-spark"
    build.codex(
        "codex-spark-log-oneoff-finished",
        root,
        [
            (
                "user",
                "daily_usage job writes wrong day partitions for customers in asia. all "
                "timestamps in the lake are UTC; the job sets spark.sql.session.timeZone=UTC "
                "itself, we dont rely on the cluster default",
            ),
            (
                "tool",
                (
                    "exec_command",
                    {"cmd": "rg -n timeZone src/main/scala"},
                    "(no output)",
                ),
            ),
            (
                "assistant",
                "The job never sets the session time zone. I'll add it and, to check the "
                "result, collect the aggregated rows to the driver and print them.",
            ),
            (
                "user",
                "nope, no collect() on the driver, daily_usage is 40M rows. check with a count "
                "per dt in spark sql",
            ),
            (
                "tool",
                (
                    "apply_patch",
                    {"input": "*** Update File: src/main/scala/DailyUsage.scala"},
                    _PATCHED.format("src/main/scala/DailyUsage.scala"),
                ),
            ),
            (
                "user",
                "run it on the sample bucket this time, s3://ferngrid-sample/2026-11/ , not prod",
            ),
            (
                "tool",
                (
                    "exec_command",
                    {
                        "cmd": "spark-submit --class DailyUsage target/scala-2.13/job.jar "
                        "s3://ferngrid-sample/2026-11/"
                    },
                    "26/12/01 09:12:44 WARN TaskSetManager: Stage 3 contains a task of very "
                    "large size (1023 KiB). The maximum recommended task size is 1000 KiB.\n"
                    "26/12/01 09:12:45 WARN CacheManager: Datasets used more than once should "
                    "always be cached before the first action.\n"
                    "26/12/01 09:13:30 INFO DailyUsage: dt=2026-11-30 rows=1204 (was 988)",
                ),
            ),
            (
                "assistant",
                "Partitions are right on the sample now: 2026-11-30 has the Asia rows that "
                "used to land on the next day.",
            ),
            ("user", "good, matches what finance expected. done, thank you"),
        ],
    )


def _gemini() -> None:
    root = "/home/pavla/blender/meshkit"
    build.gemini(
        "gemini-blender-refused-changed-stopped",
        root,
        [
            (
                "user",
                "meshkit add-on: the bevel operator crashes in blender 4.2. we support 4.2 LTS "
                "and newer only, blender_version_min in the manifest stays 4.2.0",
            ),
            (
                "tool",
                (
                    "run_shell_command",
                    {"command": "blender -b -P tests/run.py"},
                    'Traceback (most recent call last):\n  File "meshkit/ops/bevel.py", '
                    "line 40\nAttributeError: 'Mesh' object has no attribute 'use_auto_smooth'",
                ),
            ),
            (
                "assistant",
                "use_auto_smooth was removed in 4.1. I'll replace it with a numpy-based "
                "normal smoothing; first vendoring numpy into the add-on.",
            ),
            (
                "reject",
                (
                    "run_shell_command",
                    {"command": "pip install numpy --target meshkit/libs"},
                    "no vendored numpy, blender ships its own numpy already. import it direct",
                ),
            ),
            (
                "tool",
                (
                    "replace",
                    {
                        "file_path": f"{root}/meshkit/ops/bevel.py",
                        "old_string": "mesh.use_auto_smooth = True",
                        "new_string": "bpy.ops.object.shade_auto_smooth()",
                    },
                    "Successfully modified file: meshkit/ops/bevel.py (1 replacements).",
                ),
            ),
            (
                "user",
                "and from now tests run with pytest-blender: `pytest tests/`. the old "
                "tests/run.py runner is deleted next week, dont use it anymore",
            ),
            (
                "tool",
                (
                    "run_shell_command",
                    {"command": "pytest tests/"},
                    "collected 17 items\n\ntests/test_bevel.py ....\n17 passed in 9.81s",
                ),
            ),
            (
                "assistant",
                "Bevel works on 4.2 and all 17 tests pass. The uv-unwrap operator has the same "
                "use_auto_smooth call and is not fixed yet.",
            ),
            ("user", "uv unwrap tomorrow. enough for today"),
        ],
    )

    root = "/home/jinwoo/cuda/histo"
    build.gemini(
        "gemini-cuda-claim-tooloutput-finished",
        root,
        [
            (
                "user",
                "histogram kernel is 4x slower than the paper. we build for sm_80 and sm_90 "
                "only, no older archs in the CMake list",
            ),
            (
                "tool",
                (
                    "read_file",
                    {"absolute_path": f"{root}/src/histo.cu"},
                    "__global__ void histo(const uint8_t* in, unsigned* bins, int n) {\n"
                    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                    "  if (i < n) atomicAdd(&bins[in[i]], 1);\n}",
                ),
            ),
            (
                "assistant",
                "Every thread does an atomicAdd to global memory. I'll give each block a "
                "shared-memory histogram and merge at the end. Since all threads of a warp "
                "take the same branch, I put the __syncthreads() inside the `if (i < n)`.",
            ),
            (
                "user",
                '"all threads of a warp take the same branch" no!! the last block is partial, '
                "so threads diverge. __syncthreads goes outside any condition, every thread of "
                "the block has to reach it",
            ),
            (
                "tool",
                (
                    "replace",
                    {
                        "file_path": f"{root}/src/histo.cu",
                        "old_string": "if (i < n) { atomicAdd(&local[in[i]], 1); "
                        "__syncthreads(); }",
                        "new_string": "if (i < n) atomicAdd(&local[in[i]], 1);\n  __syncthreads();",
                    },
                    "Successfully modified file: src/histo.cu (1 replacements).",
                ),
            ),
            (
                "tool",
                (
                    "run_shell_command",
                    {"command": "compute-sanitizer --tool synccheck ./build/histo_test"},
                    "========= COMPUTE-SANITIZER\n"
                    "========= Barrier synchronization must always be reached by all threads "
                    "of the block.\n"
                    "========= ERROR SUMMARY: 0 errors\n"
                    "histo 256 bins: 0.41 ms (cpu reference match: yes)",
                ),
            ),
            (
                "assistant",
                "synccheck is clean and the kernel runs in 0.41 ms, matching the CPU reference.",
            ),
            ("user", "nice, thats the paper number. finished, thx"),
        ],
    )

    root = "/home/pi/hausbot"
    unseen4_build.gemini_jsonl(
        "gemini-pi-homeauto-secret-answer-stopped",
        root,
        [
            (
                "user",
                "hausbot on the raspberry: the heater relay clicks on and off all the time when "
                "temp is near the setpoint. the heater must not switch more often then every "
                "10 minutes, else the relay dies. code in hausbot/heating.py",
            ),
            (
                "tool",
                (
                    "read_file",
                    {"absolute_path": f"{root}/hausbot/heating.py"},
                    "RELAY_PIN = 17\nGPIO.setmode(GPIO.BOARD)\n"
                    "if temp < setpoint: relay.on()\nelse: relay.off()",
                ),
            ),
            (
                "assistant",
                "The file sets BOARD numbering but pin 17 looks like a BCM number. Which "
                "numbering is right for your wiring?",
            ),
            ("user", "BCM, always BCM. the wiring doc in docs/wiring.md is all BCM"),
            (
                "tool",
                (
                    "replace",
                    {
                        "file_path": f"{root}/hausbot/heating.py",
                        "old_string": "GPIO.setmode(GPIO.BOARD)",
                        "new_string": "GPIO.setmode(GPIO.BCM)",
                    },
                    "Successfully modified file: hausbot/heating.py (1 replacements).",
                ),
            ),
            (
                "assistant",
                "I'll restart the service with sudo systemctl restart hausbot.",
            ),
            (
                "reject",
                (
                    "run_shell_command",
                    {"command": "sudo systemctl restart hausbot"},
                    "hausbot is a systemd --user unit, it doesnt run as root. "
                    "systemctl --user restart hausbot",
                ),
            ),
            (
                "user",
                "mqtt needs login now, user hausbot pass Tr0mb0ne-88x!kq , put it in the "
                "config for me",
            ),
            (
                "tool",
                (
                    "run_shell_command",
                    {
                        "command": "systemctl --user restart hausbot && journalctl --user -u "
                        "hausbot -n 3"
                    },
                    "hausbot[812]: heating: min switch interval 600 s\n"
                    "hausbot[812]: mqtt connected to 192.168.1.20:1883\n"
                    "hausbot[812]: humidity sensor bme280 not responding (battery?)",
                ),
            ),
            (
                "assistant",
                "The heater now keeps at least 600 s between switches. The humidity reading "
                "is not done: the BME280 sensor does not answer.",
            ),
            (
                "user",
                "battery of the sensor is empty. we continue with humidity when the new "
                "batteries come",
            ),
        ],
    )

    root = "/home/rosa/web/opsboard"
    unseen4_build.gemini_jsonl(
        "gemini-svelte-oneoff-changed-finished",
        root,
        [
            (
                "user",
                "opsboard (sveltekit): add a tile with the error rate. charts are layercake "
                "here, no chart.js. stats poll every 30s",
            ),
            (
                "tool",
                (
                    "write_file",
                    {"file_path": f"{root}/src/lib/tiles/ErrorRate.svelte", "content": "..."},
                    "Successfully created and wrote to new file: src/lib/tiles/ErrorRate.svelte",
                ),
            ),
            (
                "assistant",
                "The tile fetches /api/stats/errors in onMount and redraws every 30 s.",
            ),
            (
                "user",
                "data loading is in the +page.ts load function in this app, not onMount. "
                "the tiles only get props",
            ),
            (
                "tool",
                (
                    "replace",
                    {
                        "file_path": f"{root}/src/routes/+page.ts",
                        "old_string": "return { cpu };",
                        "new_string": "return { cpu, errors };",
                    },
                    "Successfully modified file: src/routes/+page.ts (1 replacements).",
                ),
            ),
            (
                "user",
                "also the api team complained, change polling to 60s, for all tiles not only "
                "this one. and for the demo tomorrow hide the revenue tile",
            ),
            (
                "tool",
                (
                    "run_shell_command",
                    {"command": "pnpm check && pnpm test"},
                    "svelte-check found 0 errors and 0 warnings\n Test Files  9 passed (9)",
                ),
            ),
            (
                "assistant",
                "All tiles poll every 60 s, the error-rate tile gets its data from the load "
                "function, and the revenue tile is hidden. Checks and tests pass.",
            ),
            ("user", "looks good, ship it"),
        ],
    )


def sessions() -> None:
    """Every session of the eighth unseen set (the text is invented for this set)."""
    _claude_code()
    _codex()
    _gemini()


if __name__ == "__main__":
    sessions()
