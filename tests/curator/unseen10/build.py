"""Write the tenth unseen set: made-up sessions written blind to the curator's rules.

Its author saw only the transcript builders, the earlier sets' layout (file names, target
format, how the bench and the held-out test load a set), never the curator's rules nor the
earlier sets' sentences, and the curator was not run on it before it was committed: it
measures how the rules generalise to projects none of the earlier sets used (an Ada/SPARK
flight data decoder, a Lua Neovim plugin, an F# ferry fare engine, a Solidity escrow contract
built with Foundry, a Scala Akka Typed warehouse robot controller, an Erlang/OTP SMS gateway, a
Nix flake for a lab cluster, a MATLAB hearing-aid filter bank, a Racket course autograder, a
Flutter bird-sighting app, PL/pgSQL procedures for a library lending database, a Verilog
synthesiser voice on an iCE40 FPGA). It holds durable rules in plain words and with cue
words, corrections of the agent, refusals of tool calls with a reason (a Claude Code rejection,
a Codex denial followed by the typed reason, a Gemini cancelled call followed by the user's
reason), a Claude Code interrupt, answers to the agent's questions (durable and one-off, terse
ones too), values changed later in the session (a fixture folder, a threshold, a sample rate,
a loan period), a lesson from a failing test, one-off instructions, quoted agent claims the
user rejects, tool output holding rule-like sentences, secrets, typos, work left unfinished (a
checkpoint is expected) and work finished (none may be left). Claude Code JSONL, Codex
rollouts, Gemini CLI session documents and Gemini CLI session JSONL; every person, project,
path, token and sentence is invented.

Run ``python tests/curator/unseen10/build.py`` to rewrite the transcripts.
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
    root = "/home/ingrid/src/fdr-decode"
    build.claude_code(
        "cc-ada-flightlog-refused-changed-stopped",
        root,
        [
            (
                "user",
                "we need the decoder to handle the new ARINC 717 frame layout from the ATR "
                "recorders. gnatprove has to stay clean at level 2 for every unit under "
                "src/core, and dont add pragma Annotate just to silence a check. put the "
                "sample recordings for the tests in test/fixtures/atr",
            ),
            ("assistant", "Let me read the frame spec package first."),
            (
                "tool",
                (
                    "Read",
                    {"file_path": f"{root}/src/core/frames.ads"},
                    "package Frames with SPARK_Mode is\n   type Word_12 is mod 2**12;\n"
                    "   type Subframe is array (Positive range <>) of Word_12;\n"
                    "   function Sync_Ok (S : Subframe; Layout : Layout_Id) return Boolean;\n"
                    "end Frames;",
                ),
            ),
            (
                "reject",
                (
                    "Bash",
                    {"command": "gprbuild -P fdr.gpr"},
                    "no, alr build. plain gprbuild picks up the system GNAT 12 and we pin "
                    "gnat_native 13.2 in alire.toml",
                ),
            ),
            (
                "tool",
                (
                    "Bash",
                    {"command": "alr build && alr exec -- gnatprove -P fdr.gpr --level=2"},
                    "Success: Build finished successfully in 14.2 seconds.\n"
                    "Phase 1 of 2: generation of Global contracts ...\n"
                    "Phase 2 of 2: flow analysis and proof ...\n"
                    "frames.adb:88:19: medium: array index check might fail\n"
                    "info: consider adding pragma Annotate (GNATprove, False_Positive) to "
                    "justify this check",
                ),
            ),
            (
                "assistant",
                "One index check is unproved at frames.adb:88. I also filled in the ATR "
                "layout: the sync words are 0x247, 0x5B8, 0xA47, 0xDB8 (the usual ones) and "
                "the subframe rate is 64 words per second.",
            ),
            (
                "user",
                "its 128 wps on the ATR recorders, not 64. and dont guess sync words, they "
                "come from the ICD pdfs in docs/icd. if the ICD for a layout isnt there ask me "
                "instead of making them up",
            ),
            (
                "tool",
                (
                    "Edit",
                    {
                        "file_path": f"{root}/src/core/frames.adb",
                        "old_string": "for I in S'First .. S'Last + 1 loop",
                        "new_string": "for I in S'Range loop",
                    },
                    _EDITED,
                ),
            ),
            (
                "user",
                "oh and change of plan for the recordings, they go under testdata/ now, "
                "Henrik is deleting the old test/fixtures tree next week",
            ),
            (
                "tool",
                (
                    "Bash",
                    {
                        "command": "git mv test/fixtures/atr testdata/atr && alr exec -- "
                        "gnatprove -P fdr.gpr --level=2"
                    },
                    "Phase 2 of 2: flow analysis and proof ...\nSummary logged in "
                    "obj/gnatprove/gnatprove.out",
                ),
            ),
            (
                "todo",
                [
                    ("Decode ATR 717 subframes and check sync", "completed"),
                    ("Proof clean at level 2 for src/core", "completed"),
                    ("Engineering-unit scaling for the engine parameters", "pending"),
                ],
            ),
            (
                "user",
                "stop here, I have to go to the hangar. engine param scaling tomorrow",
            ),
        ],
    )

    root = "/home/pavel/code/tidemarks.nvim"
    build.claude_code(
        "cc-neovim-plugin-typos-oneoff-finished",
        root,
        [
            (
                "user",
                "hey can u add a telescope picker for the marks list. plugin has to keep "
                "working on neovim 0.9 so no vim.system or vim.iter, those are 0.10 only",
            ),
            (
                "tool",
                (
                    "Read",
                    {"file_path": f"{root}/lua/tidemarks/init.lua"},
                    "local M = {}\nM.marks = {}\nfunction M.setup(opts)\n  M.opts = "
                    "vim.tbl_deep_extend('force', defaults, opts or {})\nend\nreturn M",
                ),
            ),
            (
                "tool",
                (
                    "Write",
                    {
                        "file_path": f"{root}/lua/tidemarks/picker.lua",
                        "content": "local pickers = require('telescope.pickers')\n",
                    },
                    "File created successfully at: " + f"{root}/lua/tidemarks/picker.lua",
                ),
            ),
            (
                "user",
                "we format with stylua using the .stylua.toml in the repo root, run it befor "
                "you say youre done. every time",
            ),
            (
                "tool",
                (
                    "Bash",
                    {"command": "stylua lua/ && busted"},
                    "●●●●●●●●●●●●\n12 successes / 0 failures / 0 errors / 0 pending : 0.04 seconds",
                ),
            ),
            (
                "assistant",
                "The picker works; I also made telescope.nvim a hard dependency in the "
                "rockspec so the require never fails.",
            ),
            (
                "user",
                "nope, telescope stays optional. pcall(require, 'telescope') and fall back to "
                "vim.ui.select when its missing, half the users are on fzf-lua",
            ),
            (
                "tool",
                (
                    "Edit",
                    {
                        "file_path": f"{root}/lua/tidemarks/picker.lua",
                        "old_string": "local pickers = require('telescope.pickers')",
                        "new_string": "local ok, pickers = pcall(require, 'telescope.pickers')",
                    },
                    _EDITED,
                ),
            ),
            (
                "user",
                "skip the README for now, i'll write the docs myself on the weekend",
            ),
            (
                "tool",
                (
                    "Bash",
                    {"command": "stylua --check lua/ && busted"},
                    "●●●●●●●●●●●●●●\n14 successes / 0 failures / 0 errors / 0 pending : "
                    "0.05 seconds",
                ),
            ),
            (
                "assistant",
                "Telescope is optional now, with a vim.ui.select fallback; stylua is clean and "
                "14 specs pass.",
            ),
            ("user", "works on my 0.9 box too. merged, thx!"),
        ],
    )

    root = "/home/siobhan/dev/ferryfare"
    build.claude_code(
        "cc-fsharp-ferry-answers-secret-stopped",
        root,
        [
            (
                "user",
                "Adding the vehicle length surcharge to the island ferry fares. Money is "
                "decimal everywhere in this codebase, never float, and we round half to even "
                "once on the final total, not per line.",
            ),
            (
                "ask",
                (
                    "Should the length surcharge also apply to motorbikes?",
                    "no, only vehicles over 5 m",
                ),
            ),
            (
                "ask",
                (
                    "The existing tests use xUnit. Should the new tests be xUnit as well, or "
                    "Expecto?",
                    "Expecto. we're moving over to it, all new tests are Expecto",
                ),
            ),
            (
                "tool",
                (
                    "Bash",
                    {"command": "cat src/Fares.Api/appsettings.Development.json"},
                    '{\n  "ConnectionStrings": {\n    "Fares": "Host=localhost;Database=fares;'
                    'Username=fares_app;Password=Fj8!kQz2-ferry"\n  }\n}',
                ),
            ),
            (
                "user",
                "please dont cat appsettings.Development.json into the chat again, it has the "
                "db password in it. if you need a setting ask me",
            ),
            (
                "tool",
                (
                    "Edit",
                    {
                        "file_path": f"{root}/src/Fares.Core/Surcharge.fs",
                        "old_string": "let surcharge (v: Vehicle) = 0m",
                        "new_string": "let surcharge (v: Vehicle) =\n    if v.LengthM > 5.0m "
                        "then lengthRate * (v.LengthM - 5.0m) else 0m",
                    },
                    _EDITED,
                ),
            ),
            (
                "tool",
                (
                    "Bash",
                    {"command": "dotnet test"},
                    "Surcharge.fs(31,17): warning FS3370: The use of '!' for dereferencing is "
                    "deprecated, use '.Value' instead.\nPassed!  - Failed: 0, Passed: 57, "
                    "Skipped: 0, Total: 57 - Fares.Tests.dll (net8.0)",
                ),
            ),
            (
                "todo",
                [
                    ("Vehicle length surcharge over 5 m", "completed"),
                    ("Expecto tests for the surcharge", "completed"),
                    ("Summer 2027 season price table", "pending"),
                ],
            ),
            (
                "user",
                "ok lets pause, the summer prices come from the ops team next week, we do the "
                "season table then",
            ),
        ],
    )

    root = "/home/kofi/src/tool-commons"
    build.claude_code(
        "cc-solidity-escrow-claim-interrupt-stopped",
        root,
        [
            (
                "user",
                "deposit escrow for the tool library contract. We're on foundry, not "
                "hardhat. solc is pinned to 0.8.24 in foundry.toml, leave that pin where it "
                "is",
            ),
            (
                "tool",
                (
                    "Read",
                    {"file_path": f"{root}/src/ToolEscrow.sol"},
                    "// SPDX-License-Identifier: MIT\npragma solidity 0.8.24;\n\nimport "
                    '{Guard} from "../lib/guard/Guard.sol";\n\ncontract ToolEscrow is Guard {',
                ),
            ),
            (
                "assistant",
                'Plan: "Since Solidity 0.8 has built-in overflow checks, reentrancy guards '
                "are no longer needed.\" So I'll leave the nonReentrant modifier off "
                "withdrawDeposit to save gas.",
            ),
            (
                "user",
                "thats wrong, overflow checks have nothing to do with reentrancy. any "
                "function that sends ETH does checks-effects-interactions AND has "
                "nonReentrant from lib/guard. no exceptions",
            ),
            (
                "tool",
                (
                    "Edit",
                    {
                        "file_path": f"{root}/src/ToolEscrow.sol",
                        "old_string": "function withdrawDeposit(uint256 loanId) external {",
                        "new_string": "function withdrawDeposit(uint256 loanId) external "
                        "nonReentrant {",
                    },
                    _EDITED,
                ),
            ),
            (
                "tool",
                (
                    "Bash",
                    {"command": "forge test -vvv"},
                    "Compiler run successful with warnings:\nWarning (2018): Function state "
                    "mutability can be restricted to view\n\nRan 9 tests for "
                    "test/ToolEscrow.t.sol:ToolEscrowTest\nSuite result: ok. 9 passed; 0 "
                    "failed; 0 skipped",
                ),
            ),
            (
                "tool",
                (
                    "Bash",
                    {"command": "forge script script/Deploy.s.sol --rpc-url sepolia --broadcast"},
                    "",
                ),
            ),
            ("interrupt", None),
            (
                "user",
                "whoa, no deploying. never run forge script with --broadcast, deployments go "
                "through the multisig and I do them myself",
            ),
            (
                "todo",
                [
                    ("Deposit on checkout", "completed"),
                    ("Refund deposit on return", "completed"),
                    ("Late fee deduction in withdrawDeposit", "pending"),
                ],
            ),
            ("user", "ok enough for today. the late fee part of the withdraw is still open"),
        ],
    )


def _codex() -> None:
    root = "/home/ruth/src/pickbot-fleet"
    build.codex(
        "codex-akka-robots-changed-lesson-stopped",
        root,
        [
            (
                "user",
                "fleet controller is akka typed, built with sbt. scalafmt runs on compile so "
                "dont hand-format anything. every actor keeps its messages as a sealed trait "
                "in a Protocol object next to the behavior",
            ),
            (
                "user",
                "the feature: a robot heads to the nearest free charging dock once its battery "
                "drops below 20%",
            ),
            (
                "tool",
                (
                    "exec_command",
                    {"cmd": "sed -n 1,40p modules/robot/src/main/scala/fleet/RobotActor.scala"},
                    "object RobotActor {\n  object Protocol {\n    sealed trait Command\n"
                    "    final case class Telemetry(battery: Double, pos: GridPos) extends "
                    "Command\n  }\n",
                ),
            ),
            (
                "tool",
                (
                    "apply_patch",
                    {
                        "input": "*** Update File: modules/robot/src/main/scala/fleet/"
                        "RobotActor.scala\n+      case Telemetry(b, _) if b < cfg.dockBelow =>"
                    },
                    _PATCHED.format("modules/robot/src/main/scala/fleet/RobotActor.scala"),
                ),
            ),
            (
                "tool",
                (
                    "exec_command",
                    {"cmd": "sbt robot/test"},
                    "[info] scalafmt: Reformatted 2 files. Tip: add runner.dialect = scala3 to "
                    ".scalafmt.conf\n[info] DockRoutingSpec:\n[info] - should route to the "
                    "nearest free dock *** FAILED ***\n[info]   Timeout (3 seconds) during "
                    "receiveMessage\n[error] Failed: Total 11, Failed 1",
                ),
            ),
            (
                "assistant",
                "DockRoutingSpec waits with Thread.sleep(2000) for the battery timer and the "
                "CI box is slower than that. I switched it to ManualTime from the "
                "ActorTestKit and advance the clock by hand; the spec passes now.",
            ),
            (
                "user",
                "yes good catch. that goes for all specs: no Thread.sleep in tests ever, use "
                "ManualTime, our CI runners are way too slow for real timers",
            ),
            (
                "user",
                "and ops just told me its 25% not 20, the new battery packs degrade when they "
                "go under 25. make the threshold 25",
            ),
            (
                "tool",
                (
                    "apply_patch",
                    {
                        "input": "*** Update File: modules/robot/src/main/resources/robot.conf\n"
                        "-dock-below = 0.20\n+dock-below = 0.25"
                    },
                    _PATCHED.format("modules/robot/src/main/resources/robot.conf"),
                ),
            ),
            (
                "tool",
                (
                    "exec_command",
                    {"cmd": "sbt robot/test"},
                    "[info] Passed: Total 11, Failed 0, Errors 0, Passed 11",
                ),
            ),
            (
                "todo",
                [
                    ("Route to nearest free dock under the threshold", "completed"),
                    ("Threshold 25% in robot.conf", "completed"),
                    ("Queue robots when every dock is busy", "pending"),
                ],
            ),
            ("user", "lets stop here, the queueing when all docks are busy is for monday"),
        ],
    )

    root = "/srv/src/smsgw"
    build.codex(
        "codex-erlang-sms-refused-oneoff-finished",
        root,
        [
            (
                "user",
                "rate limiting per sender id in the sms gateway, 10 msgs a second. this repo "
                "is plain erlang/OTP, no elixir deps in here. run rebar3 dialyzer before you "
                "tell me something is finished",
            ),
            (
                "tool",
                (
                    "exec_command",
                    {"cmd": "grep -rn TODO apps/smsgw/src"},
                    "apps/smsgw/src/smsgw_smpp.erl:12:%% TODO(arne): always use gen_statem for "
                    "new protocol handlers, gen_fsm is banned\napps/smsgw/src/smsgw_router.erl"
                    ":88:%% TODO: drop the legacy MO path",
                ),
            ),
            (
                "reject",
                (
                    "exec_command",
                    {"cmd": "rebar3 upgrade --all"},
                    "dont upgrade deps. rebar.lock is pinned on purpose, dependency bumps "
                    "go in their own PR",
                ),
            ),
            (
                "tool",
                (
                    "apply_patch",
                    {
                        "input": "*** Add File: apps/smsgw/src/smsgw_ratelimit.erl\n+-module("
                        "smsgw_ratelimit)."
                    },
                    _PATCHED.format("apps/smsgw/src/smsgw_ratelimit.erl"),
                ),
            ),
            (
                "tool",
                (
                    "exec_command",
                    {"cmd": "rebar3 eunit && rebar3 dialyzer"},
                    "===> Performing EUnit tests...\n  All 23 tests passed.\n===> Dialyzer "
                    "starting, this may take a while...\n===> Analyzing 14 files with "
                    '"_build/default/rebar3_26.2_plt"...\n===> Dialyzer done (passed '
                    "successfully)",
                ),
            ),
            (
                "assistant",
                "Rate limiting is in smsgw_ratelimit (token bucket per sender id in ETS, 10 "
                "per second). eunit and dialyzer pass. Shall I open a PR against master?",
            ),
            (
                "user",
                "no this once push it straight to the hotfix-carrier branch, the carrier is "
                "waiting on us",
            ),
            (
                "tool",
                (
                    "exec_command",
                    {"cmd": "git push origin HEAD:hotfix-carrier"},
                    "To git.telco.internal:sms/smsgw.git\n * [new branch]      HEAD -> "
                    "hotfix-carrier",
                ),
            ),
            ("assistant", "Pushed to hotfix-carrier."),
            ("user", "deployed, carrier confirms. all good thanks"),
        ],
    )

    root = "/home/tomasz/infra/lab-nix"
    build.codex(
        "codex-nix-cluster-claim-secret-stopped",
        root,
        [
            (
                "user",
                "flake for the lab cluster nodes. everything on those boxes comes from the "
                "flake, nobody runs nix-env -i on them. nixpkgs stays on nixos-24.05 for the "
                "cluster until the summer maintenance window",
            ),
            (
                "tool",
                (
                    "exec_command",
                    {"cmd": "nix flake check"},
                    "warning: Git tree '/home/tomasz/infra/lab-nix' is dirty\nchecking "
                    "NixOS configuration 'nixosConfigurations.node01'...\nchecking NixOS "
                    "configuration 'nixosConfigurations.gpu01'...",
                ),
            ),
            (
                "assistant",
                'The flake checks. One idea: "Running nix-channel --update on the nodes '
                'from a systemd timer is the simplest way to keep them current." Want me to '
                "add that timer?",
            ),
            (
                "user",
                "no. we dont use channels here at all, flake.lock is the only thing that "
                "decides versions. updates are nix flake update in a PR, reviewed like code",
            ),
            (
                "user",
                "for the binary cache push you need this: cachix authtoken "
                "xK9labQw77eEr4sT2vvN. dont commit it anywhere, secrets go through sops-nix, "
                "secrets/ is encrypted to the lab age key",
            ),
            (
                "tool",
                (
                    "apply_patch",
                    {
                        "input": "*** Update File: hosts/node01.nix\n+  sops.secrets.cachix-token "
                        "= { };"
                    },
                    _PATCHED.format("hosts/node01.nix"),
                ),
            ),
            (
                "tool",
                (
                    "exec_command",
                    {"cmd": "nixos-rebuild build --flake .#node01"},
                    "building the system configuration...\n/nix/store/"
                    "p3w1n0d3-nixos-system-node01-24.05",
                ),
            ),
            (
                "todo",
                [
                    ("node01..node08 on the flake", "completed"),
                    ("cachix token through sops-nix", "completed"),
                    ("gpu01/gpu02 with the pinned CUDA driver", "pending"),
                ],
            ),
            (
                "user",
                "stop there. the gpu nodes need me on site, we do them after I have console access",
            ),
        ],
    )


def _gemini() -> None:
    project = "/home/lena/work/hearfit"
    build.gemini(
        "gemini-matlab-filterbank-answer-changed-finished",
        project,
        [
            (
                "user",
                "Filter bank for the hearing aid fitting tool. Sample rate is 16 kHz in all the "
                "code. We target MATLAB R2023b with the Signal Processing Toolbox and nothing "
                "else, the clinic only licenses that one toolbox.",
            ),
            (
                "tool",
                (
                    "read_file",
                    {"absolute_path": f"{project}/dsp/filterbank.m"},
                    "function y = filterbank(x, fs)\n%FILTERBANK split x into bands\n"
                    "edges = [250 500 1000 2000 4000 6000];\n",
                ),
            ),
            (
                "assistant",
                "The band edges are hard-coded in filterbank.m. Should they move to a config "
                "file, or stay in the code?",
            ),
            (
                "user",
                "config file. bands.json next to the .m files, the audiologists edit it themselves",
            ),
            (
                "tool",
                (
                    "replace",
                    {
                        "file_path": f"{project}/dsp/filterbank.m",
                        "old_string": "edges = [250 500 1000 2000 4000 6000];",
                        "new_string": "edges = jsondecode(fileread(fullfile(here, "
                        "'bands.json'))).edges;",
                    },
                    "Successfully modified file: " + f"{project}/dsp/filterbank.m (1 "
                    "replacements).",
                ),
            ),
            (
                "tool",
                (
                    "run_shell_command",
                    {
                        "command": "matlab -batch \"results = runtests('tests'); disp(table("
                        'results))"'
                    },
                    "filterbank.m line 41: The variable 'g' appears to change size on every "
                    "loop iteration. Consider preallocating for speed.\nTotals:\n   14 Passed, "
                    "0 Failed, 0 Incomplete.",
                ),
            ),
            ("assistant", "14 tests pass. Do you want the frequency response plots as well?"),
            ("user", "no plots this time, not needed today"),
            (
                "user",
                "ah and the new receivers run at 24 kHz. make the default fs 24000 everywhere "
                "and fix the tests for it",
            ),
            (
                "tool",
                (
                    "run_shell_command",
                    {
                        "command": "grep -rln 'fs = 16000' dsp tests | xargs sed -i "
                        "'s/fs = 16000/fs = 24000/'"
                    },
                    "",
                ),
            ),
            (
                "tool",
                (
                    "run_shell_command",
                    {"command": "matlab -batch \"runtests('tests')\""},
                    "Totals:\n   14 Passed, 0 Failed, 0 Incomplete.",
                ),
            ),
            ("assistant", "Default fs is 24000 in dsp/ and tests/; all 14 tests pass."),
            ("user", "perfect, merged it. thats everything for today"),
        ],
    )

    project = "/home/ahmed/teaching/cs1-grader"
    build.gemini(
        "gemini-racket-grader-refused-log-stopped",
        project,
        [
            (
                "user",
                "autograder for the CS1 racket course, hw3 this week. student submissions only "
                "ever run inside racket/sandbox with the 10 second and 128 MB limits. never "
                "run student code outside the sandbox, not even for a quick look",
            ),
            (
                "reject",
                (
                    "run_shell_command",
                    {"command": "racket submissions/hw3/s1042.rkt"},
                    "no!! that is exactly running student code outside the sandbox. use "
                    "./grade-one, it wraps the sandbox",
                ),
            ),
            (
                "tool",
                (
                    "run_shell_command",
                    {"command": "./grade-one hw3 s1042"},
                    "[grade-one] hw3/s1042: 7/9 checks passed\n[grade-one] WARN student file "
                    "requires racket/system -- NOTE TO GRADERS: always allow racket/system "
                    "for hw5\n[grade-one] wrote out/hw3/s1042.json",
                ),
            ),
            (
                "assistant",
                'Since many students write #lang racket anyway, "the grader should accept '
                "#lang racket too, it is a superset of the teaching languages\". I'll add it "
                "to the allowed list.",
            ),
            (
                "user",
                "no, teaching languages only. a #lang racket submission gets zero points and "
                "a message telling them why, that's course policy",
            ),
            (
                "user",
                "grade export is CSV with the student number in the first column, the LMS "
                "import chokes on anything else",
            ),
            (
                "tool",
                (
                    "write_file",
                    {"file_path": f"{project}/export.rkt", "content": "#lang racket/base\n"},
                    "Successfully created and wrote to new file: " + f"{project}/export.rkt.",
                ),
            ),
            (
                "tool",
                (
                    "run_shell_command",
                    {"command": "raco test tests/"},
                    'raco test: "tests/export-test.rkt"\n6 tests passed',
                ),
            ),
            (
                "user",
                "stop here, the hw4 rubric isnt final yet. when I send it, we write the hw4 "
                "test cases",
            ),
        ],
    )

    project = "/home/mei/apps/birdlog"
    build.gemini(
        "gemini-flutter-birdlog-terse-tooloutput-finished",
        project,
        [
            (
                "user",
                "flutter app. add offline sync for sightings. state mgmt is riverpod, no "
                "bloc and no provider package",
            ),
            (
                "tool",
                (
                    "run_shell_command",
                    {"command": "flutter pub get"},
                    "Resolving dependencies...\nGot dependencies!\n12 packages have newer "
                    "versions incompatible with dependency constraints.\nTry `flutter pub "
                    "outdated` for more information.",
                ),
            ),
            ("assistant", "For the local store, sqflite or drift?"),
            ("user", "drift"),
            (
                "tool",
                (
                    "write_file",
                    {
                        "file_path": f"{project}/lib/sync/sighting_store.dart",
                        "content": "import 'package:drift/drift.dart';\n",
                    },
                    "Successfully created and wrote to new file: "
                    + f"{project}/lib/sync/sighting_store.dart.",
                ),
            ),
            (
                "user",
                "dart format . and flutter analyze clean before you call anything done. always",
            ),
            (
                "tool",
                (
                    "run_shell_command",
                    {"command": "dart run build_runner build && git status --short"},
                    "[INFO] Succeeded after 9.1s with 4 outputs\n?? lib/sync/sighting_store.g.dart",
                ),
            ),
            (
                "user",
                "generated code doesnt go in git. *.g.dart is gitignored, CI runs build_runner",
            ),
            ("user", "and dont touch ios/ this time, xcode is broken on my mac rn"),
            (
                "tool",
                (
                    "run_shell_command",
                    {"command": "dart format . && flutter analyze && flutter test"},
                    "Formatted 31 files (0 changed) in 0.41 seconds.\nAnalyzing birdlog...\n"
                    "No issues found! (ran in 3.2s)\n00:06 +18: All tests passed!",
                ),
            ),
            (
                "assistant",
                "Offline sync is in: sightings queue in drift and upload when back "
                "online. Format, analyze and 18 tests are clean.",
            ),
            ("user", "👍 merged"),
        ],
    )

    project = "/home/oscar/src/lending-db"
    unseen4_build.gemini_jsonl(
        "gemini-plpgsql-lending-cancelled-secret-stopped",
        project,
        [
            (
                "user",
                "renewals for the public library lending db. all the loan business logic "
                "lives in plpgsql functions in the lending schema, the app only calls them. "
                "migrations are sqitch changes: a change that's deployed is never edited, "
                "you add a new change",
            ),
            (
                "reject",
                (
                    "run_shell_command",
                    {"command": 'psql "$PROD_DATABASE_URL" -f sql/renew_loan.sql'},
                    "not against prod!! only the local docker db on port 5433",
                ),
            ),
            (
                "user",
                "staging is postgres://lend_admin:Tr0utLake88x@staging-db.lib.internal/lending "
                "if you need it",
            ),
            (
                "assistant",
                "I wrote lending.renew_loan: it refuses when a reservation exists and extends "
                "the due date by 21 days, like the old app did.",
            ),
            (
                "user",
                "its 28 days since january, the council changed it. and the loan period "
                "comes from the lending.settings table, not a literal in the function",
            ),
            (
                "tool",
                (
                    "run_shell_command",
                    {
                        "command": "sqitch add renew_loan_settings -n 'renewal reads period from "
                        "settings' && sqitch deploy db:pg://localhost:5433/lending"
                    },
                    "Created deploy/renew_loan_settings.sql\nDeploying changes to "
                    "db:pg://localhost:5433/lending\n  + renew_loan_settings .. ok",
                ),
            ),
            (
                "tool",
                (
                    "run_shell_command",
                    {"command": "pg_prove -d lending -p 5433 test/*.sql"},
                    "test/renew.sql .. ok\n# NOTE: always pass --ext .pg to pg_prove on the "
                    "build server\nAll tests successful.\nFiles=3, Tests=27",
                ),
            ),
            ("user", "forget staging btw, I'll try it there myself"),
            (
                "user",
                "gotta run. fines calculation is next time, renewals are done",
            ),
        ],
    )

    project = "/home/jonas/fpga/ice-synth"
    unseen4_build.gemini_jsonl(
        "gemini-verilog-synth-claim-answers-finished",
        project,
        [
            (
                "user",
                "adding a second oscillator to the iCE40 synth voice. build is yosys + "
                "nextpnr-ice40 + icepack through the Makefile, and testbenches run in "
                "verilator, not iverilog",
            ),
            (
                "assistant",
                "Should the second oscillator get its own PLL output, or share the 48 MHz clock?",
            ),
            (
                "user",
                "share it. one clock in the whole design, anything slower uses a clock enable",
            ),
            (
                "assistant",
                "For the phase accumulator I'll follow \"blocking assignments (=) are fine in "
                "clocked always blocks if you're careful\", it reads more easily.",
            ),
            (
                "user",
                "no. nonblocking <= in every clocked block, blocking only in always @*",
            ),
            (
                "tool",
                (
                    "replace",
                    {
                        "file_path": f"{project}/rtl/osc.v",
                        "old_string": "phase = phase + inc;",
                        "new_string": "phase <= phase + inc;",
                    },
                    "Successfully modified file: " + f"{project}/rtl/osc.v (1 replacements).",
                ),
            ),
            (
                "tool",
                (
                    "run_shell_command",
                    {"command": "make sim && make"},
                    "verilator --binary tb/osc_tb.v ... PASS 4/4\nWarning: unused signal "
                    "'dbg_cnt', consider removing it to save LUTs\nInfo: Max frequency for "
                    "clock 'clk': 52.10 MHz (PASS at 48.00 MHz)\nicepack build/voice.asc "
                    "build/voice.bin",
                ),
            ),
            (
                "assistant",
                "Both oscillators build and meet 48 MHz. Flash the board with iceprog now?",
            ),
            ("user", "no not now, board is at the lab"),
            ("user", "great, all done, committed it. thanks"),
        ],
    )


def sessions() -> None:
    """Every session of the tenth unseen set (the text is invented for this set)."""
    _claude_code()
    _codex()
    _gemini()


if __name__ == "__main__":
    sessions()
