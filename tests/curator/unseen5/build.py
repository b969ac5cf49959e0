"""Write the fifth unseen set: made-up sessions written blind to the curator's rules.

Its author saw only the transcript builders and readers, the earlier sets' layout (file names,
target format, how the bench and the held-out test load a set) and the shipped example
session, never the rules nor the earlier sets' sentences, and the curator was not run on it
before it was committed: it measures how the rules generalise to projects unlike web apps
(firmware, a Go CLI, a game, a science notebook, a Django admin, Terraform, a Kubernetes
operator, a Rust library, an ML training script, a Flutter app, a docs site, a data
pipeline). It holds durable rules in plain words, corrections of the agent, refusals with a
reason, answers (durable and one-off), a rule changed later in the session, negations, one-off
instructions, an agent's quoted claim the user rejects, pasted logs and tool output holding
rule-like sentences, secrets, typos, terse and non-native English, work left unfinished (a
checkpoint is expected) and work finished (none may be left). Claude Code JSONL, Codex
rollouts, Gemini CLI session documents and a Gemini CLI session JSONL; every person, project,
path, token and sentence is invented.

Run ``python tests/curator/unseen5/build.py`` to rewrite the transcripts.
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
    root = "/home/marek/fw/hydroprobe"
    build.claude_code(
        "cc-firmware-isr-finished",
        root,
        [
            (
                "user",
                "the conductivity reading jumps every ~2s on the rev C board. i think its the "
                "adc dma callback in src/drivers/adc.c. heap is off limits in src/drivers, "
                "static buffers only",
            ),
            ("assistant", "I'll read the ADC driver and its DMA callback."),
            (
                "tool",
                (
                    "Read",
                    {"file_path": f"{root}/src/drivers/adc.c"},
                    "88 void HAL_ADC_ConvCpltCallback(ADC_HandleTypeDef *h) {\n"
                    "89   HAL_Delay(2);\n"
                    "90   filter_push(&cond_filter, adc_buf[0]);\n"
                    "91 }",
                ),
            ),
            (
                "assistant",
                "The callback waits 2 ms with HAL_Delay before pushing the sample. I'll move "
                "the settle wait into the callback with a longer delay so the sample is stable.",
            ),
            (
                "user",
                "no!! that callback runs in interrupt context. never block inside an ISR, not "
                "HAL_Delay not a busy loop nothing. set a flag and do the work in the main loop",
            ),
            ("assistant", "Understood: the ISR only sets a flag; the main loop does the work."),
            (
                "tool",
                (
                    "Edit",
                    {
                        "file_path": f"{root}/src/drivers/adc.c",
                        "old_string": "  HAL_Delay(2);\n  filter_push(&cond_filter, adc_buf[0]);\n",
                        "new_string": "  adc_ready = true;\n",
                    },
                    _EDITED,
                ),
            ),
            (
                "tool",
                (
                    "Edit",
                    {
                        "file_path": f"{root}/src/main.c",
                        "old_string": "  for (;;) {\n",
                        "new_string": "  for (;;) {\n    if (adc_ready) { adc_ready = false; "
                        "filter_push(&cond_filter, adc_buf[0]); }\n",
                    },
                    _EDITED,
                ),
            ),
            (
                "user",
                "good. host unit tests go in test/host/ and we run them with `ceedling test:all`",
            ),
            (
                "tool",
                (
                    "Write",
                    {
                        "file_path": f"{root}/test/host/test_adc_flag.c",
                        "content": '#include "unity.h"\n#include "adc.h"\n\n'
                        "void test_callback_sets_flag(void) {\n"
                        "  HAL_ADC_ConvCpltCallback(NULL);\n  TEST_ASSERT_TRUE(adc_ready);\n}\n",
                    },
                    "File created successfully at: test/host/test_adc_flag.c",
                ),
            ),
            (
                "tool",
                (
                    "Bash",
                    {"command": "ceedling test:all", "description": "Run host tests"},
                    "Test 'test_adc_flag.c'\n-----------------------\n"
                    "Running test_adc_flag.out...\n"
                    "\n--------------------\nOVERALL TEST SUMMARY\n--------------------\n"
                    "TESTED:  14\nPASSED:  14\nFAILED:   0\nIGNORED:  0",
                ),
            ),
            (
                "assistant",
                "All 14 host tests pass. Shall I flash the rev C board with st-flash to check "
                "the reading on hardware?",
            ),
            (
                "user",
                "dont flash it now, the board is on Jonas desk today. i'll try it tomorow "
                "myself. thats all, thanks",
            ),
            (
                "assistant",
                "The ISR now only sets adc_ready and the main loop pushes the sample; host "
                "tests pass (14/14). The fix is complete.",
            ),
        ],
    )

    root = "/home/priya/code/tern"
    build.claude_code(
        "cc-go-cli-refused-stopped",
        root,
        [
            (
                "user",
                "add a --output flag to `tern status` that takes table|json. we target go 1.21 "
                "so no range-over-int and no for-loop var tricks from 1.22",
            ),
            ("assistant", "I'll look at how the status command is built."),
            (
                "tool",
                (
                    "Read",
                    {"file_path": f"{root}/cmd/status.go"},
                    "12 func newStatusCmd(deps *Deps) *cobra.Command {\n"
                    '13   return &cobra.Command{Use: "status", RunE: func(c *cobra.Command, '
                    "a []string) error {\n14     return printTable(c.OutOrStdout(), "
                    "deps.Status())\n15   }}\n16 }",
                ),
            ),
            (
                "assistant",
                "Cobra requires commands be registered in init(), so I'll add an init() in "
                "status.go that registers the flag and the command on the root.",
            ),
            (
                "user",
                "> Cobra requires commands be registered in init()\n\nthat's not true. we do "
                "not use init() registration anywhere in this repo, every command is wired "
                "in NewRootCmd in cmd/root.go. keep it that way",
            ),
            ("assistant", "Right, I'll wire the flag in newStatusCmd and leave NewRootCmd as is."),
            (
                "reject",
                (
                    "Bash",
                    {"command": "go get -u ./... && go mod tidy", "description": "Update deps"},
                    "no. we never bump dependencies by hand in a feature branch, renovate opens "
                    "those PRs. just go mod tidy if you must",
                ),
            ),
            (
                "tool",
                (
                    "Edit",
                    {
                        "file_path": f"{root}/cmd/status.go",
                        "old_string": '  return &cobra.Command{Use: "status",',
                        "new_string": '  var output string\n  cmd := &cobra.Command{Use: "status",',
                    },
                    _EDITED,
                ),
            ),
            (
                "todo",
                [
                    ("Add --output flag to status", "completed"),
                    ("Write the JSON printer for status", "in_progress"),
                    ("Golden tests for json output in cmd/testdata", "pending"),
                ],
            ),
            (
                "tool",
                (
                    "Bash",
                    {"command": "go build ./... && go vet ./cmd/...", "description": "Build"},
                    "# github.com/priya/tern/cmd\ncmd/status.go:22:3: undefined: printJSON",
                ),
            ),
            (
                "assistant",
                "The flag is parsed, but printJSON doesn't exist yet, so the build fails. "
                "Next is the JSON printer, then the golden tests.",
            ),
            (
                "user",
                "ok i have to run to a meeting. leave it like that, we continue tomorrow with "
                "the json printer",
            ),
        ],
    )

    root = "/home/lucas/games/mossfall"
    build.claude_code(
        "cc-godot-tick-changed-secret",
        root,
        [
            (
                "user",
                "Player falls through the moving platforms in world 2. physics tick is 60 in "
                "this project, keep that in mind for the platform speed math",
            ),
            ("assistant", "I'll check the platform script and the project settings."),
            (
                "tool",
                (
                    "Grep",
                    {"pattern": "physics_ticks_per_second", "path": f"{root}/project.godot"},
                    "project.godot:41:common/physics_ticks_per_second=120",
                ),
            ),
            (
                "assistant",
                "project.godot says 120 ticks per second, not 60. Which one should I assume?",
            ),
            (
                "user",
                "ah right, we changed it to 120 last sprint because of the tunneling. 120 is "
                "the number now, forget the 60",
            ),
            (
                "tool",
                (
                    "Edit",
                    {
                        "file_path": f"{root}/scripts/moving_platform.gd",
                        "old_string": "var step := speed / 60.0",
                        "new_string": "var step := speed / Engine.physics_ticks_per_second",
                    },
                    _EDITED,
                ),
            ),
            (
                "ask",
                (
                    "Should I also move the enemy scenes to the new state machine while I'm in "
                    "world 2?",
                    "not now",
                ),
            ),
            (
                "ask",
                (
                    "Where should I save the new test level scene?",
                    "scenes/levels/<world>/ , one folder per world, always. so "
                    "scenes/levels/world2/",
                ),
            ),
            (
                "tool",
                (
                    "Write",
                    {
                        "file_path": f"{root}/scenes/levels/world2/platform_test.tscn",
                        "content": "[gd_scene load_steps=3 format=3]\n",
                    },
                    "File created successfully at: scenes/levels/world2/platform_test.tscn",
                ),
            ),
            (
                "user",
                "also for the steam export the key is STMK-7Q2X-99LD-ZP4A, put it in "
                "export_presets.cfg for me",
            ),
            (
                "assistant",
                "I'd rather not write a key into export_presets.cfg, since that file is "
                "committed. I'll read it from the STEAM_UPLOAD_KEY environment variable.",
            ),
            ("user", "fine"),
            (
                "tool",
                (
                    "Bash",
                    {
                        "command": "godot --headless --path . -s addons/gut/gut_cmdln.gd "
                        "-gdir=res://test",
                        "description": "Run GUT tests",
                    },
                    "Totals\nScripts 9\nTests 31\nPassing 31\nAsserts 77\n---- All tests "
                    "passed! ----",
                ),
            ),
            (
                "assistant",
                "Platforms now step by Engine.physics_ticks_per_second and the player stays "
                "on them in the test level; all 31 GUT tests pass. Done.",
            ),
            ("user", "perfect ty"),
        ],
    )

    root = "/home/akiko/notebooks/lyra-survey"
    build.claude_code(
        "cc-notebook-pasted-log-stopped",
        root,
        [
            (
                "user",
                "hello, please help with reduction of the night frames of 2025-11. the "
                "reduce/ package we don't use pandas, only polars, please keep like this",
            ),
            ("assistant", "I'll look at the reduction package first."),
            (
                "tool",
                (
                    "Bash",
                    {"command": "ls reduce/ && git status --short", "description": "List"},
                    "__init__.py\nbias.py\nflat.py\nio.py\n M notebooks/02_flats.ipynb",
                ),
            ),
            (
                "user",
                "when I run the flat step I get this, what is it?\n\n```\n"
                "WARNING: AstropyDeprecationWarning: Always pass units explicitly. You should "
                "set ASTROPY_STRICT=1 in every environment.\n"
                "INFO: Consider caching downloaded IERS tables in ~/.astropy [astropy.utils]\n"
                "RuntimeWarning: invalid value encountered in divide\n"
                "  flat_norm = flat / np.median(flat)\n```",
            ),
            (
                "assistant",
                "The divide warning means some flat frames have a median of 0, likely "
                "saturated or empty frames. The astropy lines are only library advice.",
            ),
            (
                "tool",
                (
                    "Read",
                    {"file_path": f"{root}/reduce/flat.py"},
                    "20 def normalise(flat):\n21     return flat / np.median(flat)",
                ),
            ),
            (
                "tool",
                (
                    "Edit",
                    {
                        "file_path": f"{root}/reduce/flat.py",
                        "old_string": "    return flat / np.median(flat)",
                        "new_string": "    med = np.median(flat)\n    if med <= 0:\n        "
                        "raise ValueError('empty or saturated flat frame')\n    return flat / med",
                    },
                    _EDITED,
                ),
            ),
            (
                "assistant",
                "I'll commit this together with notebooks/02_flats.ipynb, which has your "
                "latest plots.",
            ),
            (
                "user",
                "no, notebooks are never committed with outputs. nbstripout is installed in "
                "the repo, run it on the notebook before any commit",
            ),
            (
                "tool",
                (
                    "Bash",
                    {
                        "command": "nbstripout notebooks/02_flats.ipynb && git add -A && git "
                        "commit -m 'flat: refuse empty frames'",
                        "description": "Strip and commit",
                    },
                    "[main 4c1e9a2] flat: refuse empty frames\n 2 files changed, 6 insertions(+), "
                    "812 deletions(-)",
                ),
            ),
            (
                "assistant",
                "Committed. Next I need to find which of the 2025-11 flats are empty and redo "
                "the master flat for the R band; the B and V bands are not started.",
            ),
            (
                "user",
                "ok stop here please, I must leave. The master flat for R band is still to do, "
                "tomorrow we continue",
            ),
        ],
    )

    root = "/srv/apps/clinicdesk"
    build.claude_code(
        "cc-django-admin-finished",
        root,
        [
            (
                "user",
                "the Appointments changelist in the admin is super slow, like 8 seconds. "
                "we target python 3.9 btw",
            ),
            ("assistant", "I'll look at the admin class for Appointment."),
            (
                "tool",
                (
                    "Read",
                    {"file_path": f"{root}/scheduling/admin.py"},
                    "14 class AppointmentAdmin(admin.ModelAdmin):\n"
                    "15     list_display = ('patient', 'doctor', 'room', 'starts_at')",
                ),
            ),
            (
                "assistant",
                "Each row loads patient, doctor and room separately. I'll add "
                "list_select_related and use a match statement in the status column.",
            ),
            (
                "user",
                "select_related yes, match no — 3.9 doesnt have it. plain if/elif",
            ),
            (
                "tool",
                (
                    "Edit",
                    {
                        "file_path": f"{root}/scheduling/admin.py",
                        "old_string": "    list_display = ('patient', 'doctor', 'room', "
                        "'starts_at')",
                        "new_string": "    list_display = ('patient', 'doctor', 'room', "
                        "'starts_at')\n    list_select_related = ('patient', 'doctor', 'room')\n"
                        "    list_per_page = 50",
                    },
                    _EDITED,
                ),
            ),
            (
                "user",
                "the page size 50 is ok for now, just for this change, we revisit later",
            ),
            (
                "assistant",
                "I'll also add a 'cancel selected' admin action so the front desk stops "
                "editing rows one by one.",
            ),
            (
                "user",
                "ok but every admin action here has to declare permissions=[...] in "
                "@admin.action, no action without a permission check. Sara got burned by "
                "that last year",
            ),
            (
                "tool",
                (
                    "Edit",
                    {
                        "file_path": f"{root}/scheduling/admin.py",
                        "old_string": "class AppointmentAdmin(admin.ModelAdmin):\n",
                        "new_string": "class AppointmentAdmin(admin.ModelAdmin):\n    actions = "
                        "['cancel_selected']\n\n    @admin.action(description='Cancel selected', "
                        "permissions=['change'])\n    def cancel_selected(self, request, qs):\n"
                        "        qs.update(status='cancelled')\n",
                    },
                    _EDITED,
                ),
            ),
            (
                "tool",
                (
                    "Bash",
                    {
                        "command": "python manage.py test scheduling",
                        "description": "Run scheduling tests",
                    },
                    "Found 23 test(s).\nSystem check identified no issues (0 silenced).\n"
                    "......................\n----------------------------------------------------"
                    "------------------\nRan 23 tests in 1.904s\n\nOK",
                ),
            ),
            (
                "assistant",
                "The changelist now does 3 queries instead of ~150 and the cancel action "
                "checks the change permission. All 23 scheduling tests pass.",
            ),
            ("user", "shipped, thx"),
        ],
    )


def _codex() -> None:
    root = "/home/dana/infra/harbor-tf"
    build.codex(
        "codex-terraform-refused-apply",
        root,
        [
            (
                "user",
                "add an s3 bucket for the lidar uploads in envs/prod/storage.tf, versioning "
                "on. every resource gets local.common_tags merged in",
            ),
            (
                "tool",
                (
                    "shell",
                    {"command": ["bash", "-lc", "sed -n 1,30p envs/prod/storage.tf"]},
                    'resource "aws_s3_bucket" "ortho" {\n  bucket = "harbor-prod-ortho"\n'
                    '  tags   = merge(local.common_tags, { purpose = "ortho" })\n}',
                ),
            ),
            (
                "tool",
                (
                    "apply_patch",
                    {
                        "input": "*** Begin Patch\n*** Update File: envs/prod/storage.tf\n@@\n"
                        '+resource "aws_s3_bucket" "lidar" {\n'
                        '+  bucket = "harbor-prod-lidar"\n'
                        '+  tags   = merge(local.common_tags, { purpose = "lidar" })\n+}\n'
                        "*** End Patch"
                    },
                    _PATCHED.format("envs/prod/storage.tf"),
                ),
            ),
            (
                "tool",
                (
                    "shell",
                    {"command": ["bash", "-lc", "terraform -chdir=envs/prod plan -no-color"]},
                    "Plan: 2 to add, 0 to change, 0 to destroy.\n\nNote: You didn't use the -out "
                    "option to save this plan, so Terraform can't guarantee to take exactly "
                    'these actions if you run "terraform apply" now.',
                ),
            ),
            (
                "reject",
                (
                    "shell",
                    {"command": ["bash", "-lc", "terraform -chdir=envs/prod apply -auto-approve"]},
                    "no. nobody applies from a laptop, apply happens only through atlantis on "
                    "the PR (`atlantis apply`). open the PR and stop there",
                ),
            ),
            (
                "assistant",
                "Understood, I won't apply locally. I'll push a branch and open the PR so "
                "Atlantis plans it.",
            ),
            (
                "user",
                "btw if the plan complains about creds, my session is:\n"
                "AWS_ACCESS_KEY_ID=AKIAZ7Q3EXAMPLE4KD2P\n"
                "AWS_SECRET_ACCESS_KEY=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",
            ),
            (
                "tool",
                (
                    "shell",
                    {
                        "command": [
                            "bash",
                            "-lc",
                            "git switch -c lidar-bucket && git commit -am 'storage: lidar "
                            "bucket' && gh pr create --fill",
                        ]
                    },
                    "Switched to a new branch 'lidar-bucket'\n[lidar-bucket 7d21f0e] storage: "
                    "lidar bucket\nhttps://github.com/harbor/harbor-tf/pull/412",
                ),
            ),
            (
                "assistant",
                "PR #412 is open with the lidar bucket (versioning on, common_tags merged); "
                "Atlantis will post the plan there. I didn't need the credentials.",
            ),
            ("user", "👍 done, merged after review"),
        ],
    )

    root = "/home/tomasz/go/src/kelp-operator"
    build.codex(
        "codex-k8s-branch-changed-stopped",
        root,
        [
            (
                "user",
                "we need a finalizer on the Reservoir CR so the PVCs gets cleaned before "
                "delete. branch off develop like always",
            ),
            (
                "tool",
                (
                    "shell",
                    {"command": ["bash", "-lc", "git branch -a | head"]},
                    "* main\n  remotes/origin/HEAD -> origin/main\n  remotes/origin/main\n"
                    "  remotes/origin/develop",
                ),
            ),
            (
                "assistant",
                "origin/develop exists but HEAD points at main. Should the branch come from "
                "develop?",
            ),
            (
                "user",
                "hm, you are right, develop is dead since october. we branch from main now, "
                "for every feature. forget develop",
            ),
            (
                "tool",
                (
                    "shell",
                    {"command": ["bash", "-lc", "git switch -c reservoir-finalizer main"]},
                    "Switched to a new branch 'reservoir-finalizer'",
                ),
            ),
            (
                "todo",
                [
                    ("Add finalizer constant and field markers", "completed"),
                    ("Handle deletion in Reconcile: delete PVCs, remove finalizer", "in_progress"),
                    ("envtest case for delete with PVCs", "pending"),
                ],
            ),
            (
                "tool",
                (
                    "apply_patch",
                    {
                        "input": "*** Begin Patch\n*** Update File: api/v1alpha1/"
                        'reservoir_types.go\n@@\n+// +kubebuilder:printcolumn:name="Phase",'
                        "type=string,JSONPath=`.status.phase`\n*** End Patch"
                    },
                    _PATCHED.format("api/v1alpha1/reservoir_types.go"),
                ),
            ),
            (
                "user",
                "when you touch anything in api/ you run `make manifests generate` after, the "
                "CRD yaml in config/crd is generated, never edit by hand",
            ),
            (
                "tool",
                (
                    "shell",
                    {"command": ["bash", "-lc", "make manifests generate"]},
                    'controller-gen rbac:roleName=manager-role crd webhook paths="./..." '
                    "output:crd:artifacts:config=config/crd/bases",
                ),
            ),
            (
                "assistant",
                "CRDs regenerated. The deletion branch in Reconcile is half written: PVCs are "
                "listed but not deleted yet, and the envtest case is not started.",
            ),
            (
                "user",
                "ok, enough for today. pvc delete + envtest tomorrow, leave the branch as is",
            ),
        ],
    )

    root = "/home/ines/src/tidemark"
    build.codex(
        "codex-rust-lib-claim-log",
        root,
        [
            (
                "user",
                "parse_window() panics on an empty input, fix it. this is a library, no "
                "unwrap or expect outside tests, return a ParseError",
            ),
            (
                "tool",
                (
                    "shell",
                    {"command": ["bash", "-lc", "rg -n 'unwrap\\(\\)' src/window.rs"]},
                    "41:    let first = input.split(',').next().unwrap();",
                ),
            ),
            (
                "tool",
                (
                    "apply_patch",
                    {
                        "input": "*** Begin Patch\n*** Update File: src/window.rs\n@@\n-    let "
                        "first = input.split(',').next().unwrap();\n+    let first = input."
                        "split(',').next().filter(|s| !s.is_empty()).ok_or(ParseError::Empty)?;\n"
                        "*** End Patch"
                    },
                    _PATCHED.format("src/window.rs"),
                ),
            ),
            (
                "assistant",
                "Fixed. I also used `let ... else` in two places; MSRV doesn't matter for a "
                "crate that's only used internally.",
            ),
            (
                "user",
                "\"MSRV doesn't matter for a crate that's only used internally\" - wrong, two "
                "downstream teams pin rustc 1.64. MSRV is 1.64, let-else is 1.65 so take it out",
            ),
            (
                "tool",
                (
                    "apply_patch",
                    {
                        "input": "*** Begin Patch\n*** Update File: src/window.rs\n@@\n-    let "
                        "Some(end) = parts.next() else { return Err(ParseError::Empty) };\n+    "
                        "let end = match parts.next() { Some(e) => e, None => return "
                        "Err(ParseError::Empty) };\n*** End Patch"
                    },
                    _PATCHED.format("src/window.rs"),
                ),
            ),
            (
                "user",
                "CI said this on my last push, fyi:\n\nwarning: this could be a `const fn`\n"
                "note: you should always run `cargo +nightly fmt` before committing\n"
                "help: consider adding `#[must_use]` to every public function\n"
                "error: could not compile `tidemark` due to previous error",
            ),
            (
                "assistant",
                "Those were clippy lints from the pedantic group plus the compile error my "
                "patch now fixes. I'll run the tests on 1.64.",
            ),
            (
                "tool",
                (
                    "shell",
                    {"command": ["bash", "-lc", "cargo +1.64 test --all-features"]},
                    "running 38 tests\n......................................\ntest result: ok. "
                    "38 passed; 0 failed; 0 ignored",
                ),
            ),
            (
                "user",
                "good. changelog line under ## Unreleased in CHANGELOG.md, every user-visible "
                "fix gets one",
            ),
            (
                "tool",
                (
                    "apply_patch",
                    {
                        "input": "*** Begin Patch\n*** Update File: CHANGELOG.md\n@@ ## "
                        "Unreleased\n+- `parse_window` returns `ParseError::Empty` on empty "
                        "input instead of panicking.\n*** End Patch"
                    },
                    _PATCHED.format("CHANGELOG.md"),
                ),
            ),
            (
                "assistant",
                "parse_window returns ParseError::Empty on empty input, builds on rustc 1.64, "
                "38 tests pass and the changelog has the entry. Finished.",
            ),
        ],
    )

    root = "/home/rafa/ml/sedna-seg"
    build.codex(
        "codex-ml-oneoff-stopped",
        root,
        [
            (
                "user",
                "switch train.py to bf16 mixed precision. and pls we dont use wandb here, "
                "metrics go to mlflow only",
            ),
            (
                "tool",
                (
                    "shell",
                    {"command": ["bash", "-lc", "rg -n 'wandb|mlflow|save\\(' train.py"]},
                    "12:import wandb\n88:    wandb.log({'loss': loss.item()})\n"
                    "140:    torch.save(model.state_dict(), 'checkpoints/last.pt')",
                ),
            ),
            (
                "user",
                "oh and that checkpoints/ path is wrong. checkpoints never go in the repo, "
                "they go to /mnt/scratch/sedna/ckpt",
            ),
            (
                "tool",
                (
                    "apply_patch",
                    {
                        "input": "*** Begin Patch\n*** Update File: train.py\n@@\n-import wandb\n"
                        "+import mlflow\n@@\n-    wandb.log({'loss': loss.item()})\n+    "
                        "mlflow.log_metric('loss', loss.item(), step=step)\n@@\n-    torch.save("
                        "model.state_dict(), 'checkpoints/last.pt')\n+    torch.save(model."
                        "state_dict(), CKPT_DIR / 'last.pt')\n*** End Patch"
                    },
                    _PATCHED.format("train.py"),
                ),
            ),
            (
                "todo",
                [
                    ("Replace wandb with mlflow", "completed"),
                    ("Move checkpoints to scratch", "completed"),
                    ("Wrap train step in torch.autocast bf16", "in_progress"),
                    ("Convert the eval loop to autocast", "pending"),
                ],
            ),
            (
                "user",
                "for the smoke run today use batch size 16, the a100 is shared with Mila's job",
            ),
            (
                "tool",
                (
                    "shell",
                    {
                        "command": [
                            "bash",
                            "-lc",
                            "python train.py --config configs/base.yaml --batch-size 16 "
                            "--max-steps 50",
                        ]
                    },
                    "step 50 | loss 0.6412 | 3.1 it/s\nsaved /mnt/scratch/sedna/ckpt/last.pt",
                ),
            ),
            (
                "assistant",
                "The smoke run finished 50 steps. The train step uses autocast with bf16 now, "
                "but the eval loop still runs in fp32; that part isn't done.",
            ),
            ("user", "ok leave eval for monday, i'm off"),
        ],
    )


def _gemini() -> None:
    build.gemini(
        "gemini-flutter-refused-upgrade",
        "/home/oluwaseun/apps/pantry-pal",
        [
            (
                "user",
                "The expiry date on the item screen shows in US format for german users. Fix "
                "it. We use riverpod for state, dont add provider or bloc packages",
            ),
            (
                "tool",
                (
                    "read_file",
                    {"absolute_path": "/home/oluwaseun/apps/pantry-pal/lib/screens/item.dart"},
                    "Text('Expires ${DateFormat('MM/dd/yyyy').format(item.expiry)}')",
                ),
            ),
            (
                "user",
                "and the 'Expires' word there: user-facing strings live in lib/l10n/app_en.arb "
                "and get looked up through AppLocalizations, nothing hardcoded in widgets",
            ),
            (
                "tool",
                (
                    "replace",
                    {
                        "file_path": "/home/oluwaseun/apps/pantry-pal/lib/screens/item.dart",
                        "old_string": "Text('Expires ${DateFormat('MM/dd/yyyy').format(item."
                        "expiry)}')",
                        "new_string": "Text(AppLocalizations.of(context)!.expiresOn(DateFormat."
                        "yMd(locale).format(item.expiry)))",
                    },
                    "Successfully modified file: lib/screens/item.dart (1 replacements).",
                ),
            ),
            (
                "reject",
                (
                    "run_shell_command",
                    {"command": "flutter pub upgrade --major-versions"},
                    "not now, we are in release freeze until friday",
                ),
            ),
            (
                "tool",
                (
                    "run_shell_command",
                    {"command": "flutter gen-l10n && flutter test test/screens"},
                    "00:04 +12: All tests passed!",
                ),
            ),
            (
                "assistant",
                "The date now follows the device locale and 'Expires' comes from app_en.arb "
                "(with the German entry in app_de.arb); the 12 screen tests pass.",
            ),
            ("user", "great, works on my phone"),
        ],
    )

    build.gemini(
        "gemini-docs-case-changed",
        "/home/hannah/docs/orbit-handbook",
        [
            (
                "user",
                "write a page docs/guides/rotating-keys.md for the key rotation. headings in "
                "Title Case please, and we write British English in all docs",
            ),
            (
                "tool",
                (
                    "write_file",
                    {
                        "file_path": "/home/hannah/docs/orbit-handbook/docs/guides/"
                        "rotating-keys.md",
                        "content": "# Rotating Signing Keys\n\n## Before You Start\n",
                    },
                    "Successfully created and wrote to new file: docs/guides/rotating-keys.md",
                ),
            ),
            (
                "user",
                "sorry my mistake, I checked the style guide: headings are sentence case, "
                "not title case. so '## Before you start'. that's for every page",
            ),
            (
                "tool",
                (
                    "replace",
                    {
                        "file_path": "/home/hannah/docs/orbit-handbook/docs/guides/"
                        "rotating-keys.md",
                        "old_string": "# Rotating Signing Keys\n\n## Before You Start\n",
                        "new_string": "# Rotating signing keys\n\n## Before you start\n",
                    },
                    "Successfully modified file: docs/guides/rotating-keys.md (1 replacements).",
                ),
            ),
            (
                "tool",
                (
                    "run_shell_command",
                    {"command": "vale docs/guides/rotating-keys.md"},
                    "docs/guides/rotating-keys.md\n 3:1  suggestion  Use 'e.g.' instead of 'for "
                    "example'.  Orbit.Latin\n 7:12 warning  Always spell out numbers below ten."
                    "  Orbit.Numbers\n\n✖ 0 errors, 1 warning and 1 suggestion in 1 file.",
                ),
            ),
            (
                "user",
                "ignore vale's Latin and Numbers rules, they're noisy. but every page needs "
                "a description: in the front matter, the search index uses it",
            ),
            (
                "tool",
                (
                    "replace",
                    {
                        "file_path": "/home/hannah/docs/orbit-handbook/docs/guides/"
                        "rotating-keys.md",
                        "old_string": "# Rotating signing keys\n",
                        "new_string": "---\ndescription: How to rotate the signing keys "
                        "without downtime.\n---\n\n# Rotating signing keys\n",
                    },
                    "Successfully modified file: docs/guides/rotating-keys.md (1 replacements).",
                ),
            ),
            (
                "assistant",
                "The page has a description in its front matter, sentence-case headings and "
                'British spelling ("authorise", "organisation"). mkdocs build passes.',
            ),
            ("user", "k"),
        ],
    )

    unseen4_build.gemini_jsonl(
        "gemini-airflow-secret-stopped",
        "/home/wei/pipelines/loomline",
        [
            (
                "user",
                "new dag for the daily orders rollup. dag ids in this repo are snake_case and "
                "start with the team prefix dwh_ , so dwh_orders_daily",
            ),
            (
                "tool",
                (
                    "read_file",
                    {"absolute_path": "/home/wei/pipelines/loomline/dags/dwh_customers.py"},
                    "with DAG('dwh_customers', schedule='0 3 * * *', catchup=False) as dag:\n"
                    "    load = SQLExecuteQueryOperator(task_id='load', sql='sql/customers.sql')",
                ),
            ),
            (
                "assistant",
                "I'll write the DAG with the created_at column converted to Europe/Berlin "
                "time, since the business reports are in Berlin time.",
            ),
            (
                "user",
                "no, everything in the warehouse is stored in UTC. conversion to local time "
                "happens only in the BI layer, never in the dags",
            ),
            (
                "tool",
                (
                    "write_file",
                    {
                        "file_path": "/home/wei/pipelines/loomline/dags/dwh_orders_daily.py",
                        "content": "with DAG('dwh_orders_daily', schedule='30 3 * * *', "
                        "catchup=False) as dag:\n    rollup = SQLExecuteQueryOperator("
                        "task_id='rollup', sql='sql/orders_daily.sql')\n",
                    },
                    "Successfully created and wrote to new file: dags/dwh_orders_daily.py",
                ),
            ),
            (
                "user",
                "to test against the staging warehouse use user etl_wei password "
                "Kx9!vLm2#Tqa77, only for today",
            ),
            (
                "tool",
                (
                    "run_shell_command",
                    {"command": "airflow dags test dwh_orders_daily 2026-11-30"},
                    "[2026-12-06T20:14:02] {taskinstance.py:1203} INFO - Marking task as "
                    "SUCCESS. dag_id=dwh_orders_daily, task_id=rollup\nDagRun finished: "
                    "state=success",
                ),
            ),
            (
                "reject",
                (
                    "run_shell_command",
                    {
                        "command": "airflow dags backfill dwh_orders_daily -s 2026-10-01 -e "
                        "2026-11-30"
                    },
                    "not this week, the warehouse is busy with the quarter close",
                ),
            ),
            (
                "assistant",
                "The DAG runs for one day on staging. The October–November backfill is not "
                "run and sql/orders_daily.sql has no data-quality check yet.",
            ),
            ("user", "yes. the dq check I'll write with you tomorrow, stop for now"),
        ],
    )


def sessions() -> None:
    """Every session of the fifth unseen set (the text is invented for this set)."""
    _claude_code()
    _codex()
    _gemini()


if __name__ == "__main__":
    sessions()
