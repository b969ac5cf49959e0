"""Write the ninth unseen set: made-up sessions written blind to the curator's rules.

Its author saw only the transcript builders, the earlier sets' layout (file names, target
format, how the bench and the held-out test load a set) and the spec of a memory record, never
the curator's rules nor the earlier sets' sentences, and the curator was not run on it before
it was committed: it measures how the rules generalise to projects none of the earlier sets
used (a port berth scheduler in Kotlin, a dental DICOM viewer in C++/Qt, a Perl billing system,
a Godot puzzle game, a Go gRPC ride-hailing dispatcher, a Fortran climate post-processor, a
Clojure insurance rules engine, an Elm school timetable, a React Native pharmacy app, Rust
no_std drone firmware, PowerShell Active Directory onboarding, a dbt warehouse for a bike-share
operator). It holds durable rules in plain words and with cue words, corrections of the agent
with and without "don't", refusals of tool calls with a reason (a Gemini cancelled call
followed by the user's reason), answers to the agent's questions (durable and one-off), values
changed later in the session (a number, a branch, a tool), a lesson from a failure, an agent-scope
preference, one-off instructions, quoted agent claims the user rejects, pasted logs and tool
output holding rule-like sentences, secrets, typos, terse and non-native English, work left
unfinished (a checkpoint is expected) and work finished (none may be left). Claude Code JSONL,
Codex rollouts, Gemini CLI session documents and Gemini CLI session JSONL; every person,
project, path, token and sentence is invented.

Run ``python tests/curator/unseen9/build.py`` to rewrite the transcripts.
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
    root = "/home/maarten/src/berthplan"
    build.claude_code(
        "cc-berth-planner-changed-log-stopped",
        root,
        [
            (
                "user",
                "Next feature for the berth planner: tide windows. A vessel with a deep draft "
                "may only be assigned a berth slot when the water depth during the whole slot "
                "is enough. Everything inside the planner is kept in UTC; the web UI turns it "
                "into Rotterdam local time only when it renders. The under-keel clearance "
                "margin is 0.5 m on top of the draft.",
            ),
            ("assistant", "I'll look at the slot model and the tide table loader first."),
            (
                "tool",
                (
                    "Read",
                    {"file_path": f"{root}/planner/src/main/kotlin/berth/Slot.kt"},
                    "data class Slot(\n    val berthId: BerthId,\n    val start: Instant,\n"
                    "    val end: Instant,\n    val vessel: VesselRef?,\n)",
                ),
            ),
            (
                "tool",
                (
                    "Read",
                    {"file_path": f"{root}/planner/src/main/kotlin/tide/TideTable.kt"},
                    "class TideTable(private val points: List<TidePoint>) {\n"
                    "    fun depthAt(t: Instant, chartDatum: Double): Double = ...\n}",
                ),
            ),
            (
                "tool",
                (
                    "Edit",
                    {
                        "file_path": f"{root}/planner/src/main/kotlin/berth/Assigner.kt",
                        "old_string": "if (slot.vessel == null) {",
                        "new_string": "if (slot.vessel == null && tideOk(slot, vessel)) {",
                    },
                    _EDITED,
                ),
            ),
            (
                "tool",
                (
                    "Bash",
                    {"command": "gradle test"},
                    "Gradle 7.6.1\n\nFAILURE: Build failed "
                    "with an exception.\n* What went wrong:\nPlugin [id: 'org.jetbrains.kotlin"
                    ".jvm', version: '1.9.22'] requires Gradle 8.5 or newer.",
                ),
            ),
            (
                "user",
                "use the wrapper, ./gradlew. the gradle on the PATH is an old 7.x and this "
                "build needs 8.5",
            ),
            (
                "tool",
                (
                    "Bash",
                    {"command": "./gradlew :planner:test"},
                    "> Task :planner:compileKotlin\n> Task :planner:test\n\nDeprecated Gradle "
                    "features were used in this build, making it incompatible with Gradle 9.0.\n"
                    "Consider enabling the configuration cache to speed up this build.\n\n"
                    "BUILD SUCCESSFUL in 41s\n38 tests completed, 0 failed",
                ),
            ),
            (
                "assistant",
                "Tide windows are checked for the general cargo and container berths now, with "
                "the 0.5 m margin; 38 tests pass. Gradle also suggests enabling the "
                "configuration cache — shall I turn it on?",
            ),
            (
                "user",
                "no leave the gradle settings alone. And a change from this morning's call: the "
                "harbour master raised the clearance to 0.6 m for every berth, please put 0.6 "
                "in PlannerConfig and in the tests",
            ),
            (
                "tool",
                (
                    "Edit",
                    {
                        "file_path": f"{root}/planner/src/main/kotlin/PlannerConfig.kt",
                        "old_string": "val ukcMarginMeters = 0.5",
                        "new_string": "val ukcMarginMeters = 0.6",
                    },
                    _EDITED,
                ),
            ),
            (
                "tool",
                (
                    "Bash",
                    {"command": "./gradlew :planner:test"},
                    "BUILD SUCCESSFUL in 37s\n38 tests completed, 0 failed",
                ),
            ),
            (
                "todo",
                [
                    ("Tide window check for cargo and container berths", "completed"),
                    ("Clearance margin 0.6 m in PlannerConfig", "completed"),
                    ("Tide window check for the tanker jetties (lock schedule)", "pending"),
                ],
            ),
            (
                "assistant",
                "Margin is 0.6 m everywhere and the tests pass. The tanker jetties are still "
                "open: they also depend on the lock schedule, which the assigner does not read "
                "yet.",
            ),
            ("user", "ok. stopping for today, the tanker jetties are for tomorrow"),
        ],
    )

    root = "/home/ines/dev/panoview"
    build.claude_code(
        "cc-dental-viewer-refused-secret-finished",
        root,
        [
            (
                "user",
                "The ruler tool in the panoramic viewer shows wrong millimetres on images from "
                "the new Planmeca unit. Length measurements have to use the PixelSpacing from "
                "the DICOM header of each image; when the tag is missing we show the length as "
                "'uncalibrated' in pixels, we never guess a spacing.",
            ),
            ("assistant", "Let me find where the ruler converts pixels to millimetres."),
            (
                "tool",
                (
                    "Bash",
                    {"command": "grep -rn 'mmPerPixel' src/"},
                    "src/tools/RulerTool.cpp:58:    const double mmPerPixel = 0.1; // TODO\n"
                    "src/tools/AngleTool.cpp:12:// uses RulerTool::mmPerPixel",
                ),
            ),
            (
                "reject",
                (
                    "Bash",
                    {"command": "conan install . --build=missing"},
                    "not conan, the project is on vcpkg in manifest mode (vcpkg.json), "
                    "conan was removed a year ago",
                ),
            ),
            (
                "tool",
                (
                    "Bash",
                    {"command": "cmake --preset linux-debug && cmake --build --preset linux-debug"},
                    "-- Running vcpkg install\n-- Found DCMTK 3.6.8\n[212/212] Linking CXX "
                    "executable panoview",
                ),
            ),
            (
                "user",
                "to try it against the test PACS: host pacs-test.lab.local port 11112, AE "
                "title PANOVIEW, user ines.r password Qm7#tr9LpX2v",
            ),
            (
                "tool",
                (
                    "Edit",
                    {
                        "file_path": f"{root}/src/tools/RulerTool.cpp",
                        "old_string": "const double mmPerPixel = 0.1; // TODO",
                        "new_string": "const auto spacing = image.pixelSpacing(); "
                        "// std::optional<Spacing>",
                    },
                    _EDITED,
                ),
            ),
            (
                "tool",
                (
                    "Bash",
                    {"command": "ctest --preset linux-debug"},
                    "QWidget::repaint: Recursive repaint detected, do not call repaint() from "
                    "inside paintEvent()\n100% tests passed, 0 tests failed out of 27",
                ),
            ),
            (
                "assistant",
                "The ruler and the angle tool now read the spacing per image and show "
                "'uncalibrated' px when the tag is absent. All 27 tests pass; the repaint "
                "warning comes from the old thumbnail strip test.",
            ),
            (
                "user",
                "good. skip the windows CI job for this PR, I'll build it on my laptop",
            ),
            (
                "tool",
                (
                    "Bash",
                    {"command": "git push -o ci.skip-windows origin ruler-spacing"},
                    "To git.lab.local:imaging/panoview.git\n * [new branch] ruler-spacing",
                ),
            ),
            ("assistant", "Pushed ruler-spacing with the Windows job skipped."),
            ("user", "merged, thanks. all done"),
        ],
    )

    root = "/srv/billing/legacy-bill"
    build.claude_code(
        "cc-perl-billing-claim-answers-stopped",
        root,
        [
            (
                "user",
                "This is the old billing code, it runs on perl 5.16 on the AIX machine. So "
                "nothing newer than 5.16 syntax: no postfix dereference, no subroutine "
                "signatures. The VAT on invoice lines is rounded wrong for lines with a "
                "quantity above 1, please fix that in Invoice::Line.",
            ),
            (
                "tool",
                (
                    "Read",
                    {"file_path": f"{root}/lib/Invoice/Line.pm"},
                    "sub vat {\n    my ($self) = @_;\n    return sprintf('%.2f', "
                    "$self->{unit_price} * $self->{vat_rate}) * $self->{qty};\n}",
                ),
            ),
            (
                "assistant",
                "The VAT is rounded per unit and then multiplied. Math::BigFloat makes the "
                "totals slow, so I'll switch the invoice totals to native floats; rounding "
                "error at two decimals is negligible.",
            ),
            (
                "user",
                '"rounding error at two decimals is negligible" - no. That is exactly how we '
                "got the audit finding in 2019. Amounts are integer cents in this codebase, "
                "from reading the input until printing the invoice.",
            ),
            (
                "ask",
                (
                    "How do you run the tests here: prove, or the Makefile target?",
                    "prove -lr t/ with PERL5LIB=lib/legacy set, the Makefile target is broken "
                    "since the move",
                ),
            ),
            (
                "tool",
                (
                    "Edit",
                    {
                        "file_path": f"{root}/lib/Invoice/Line.pm",
                        "old_string": "return sprintf('%.2f', $self->{unit_price} * "
                        "$self->{vat_rate}) * $self->{qty};",
                        "new_string": "return _round_half_up($self->{unit_cents} * "
                        "$self->{qty} * $self->{vat_rate});",
                    },
                    _EDITED,
                ),
            ),
            (
                "tool",
                (
                    "Bash",
                    {"command": "PERL5LIB=lib/legacy prove -lr t/"},
                    "t/invoice/line.t .... ok\nt/invoice/totals.t .. ok\nt/credit/note.t ..... "
                    "ok\nAll tests successful.\nFiles=14, Tests=212,  3 wallclock secs\n"
                    "Result: PASS",
                ),
            ),
            (
                "ask",
                (
                    "Should I regenerate all March invoices to compare the VAT totals?",
                    "no, only customer 40417 for now, that's the one who complained",
                ),
            ),
            (
                "tool",
                (
                    "Bash",
                    {
                        "command": "PERL5LIB=lib/legacy perl bin/reissue.pl --customer 40417 "
                        "--month 2026-03 --dry-run"
                    },
                    "invoice 2026-03-40417-01: vat old 18.93 new 18.90 (diff -0.03)",
                ),
            ),
            (
                "assistant",
                "Invoice::Line now works in integer cents and rounds the VAT once per line; the "
                "dry run for 40417 shows the 3 cent difference. CreditNote.pm still computes "
                "in floats with sprintf, the same bug in the other direction.",
            ),
            (
                "user",
                "ok thats it for today, credit notes next time. dont commit the reissue output",
            ),
        ],
    )

    root = "/home/kit/games/tilesmith"
    build.claude_code(
        "cc-godot-puzzle-typos-oneoff-finished",
        root,
        [
            (
                "user",
                "hey. add an undo button to the puzzle screen, undo the last move. levels r "
                "in res://levels/ as .tres resources one per level, dont put level data in the "
                "scenes. and static typing in gdscript evrywhere pls, var moves: int not var "
                "moves",
            ),
            ("assistant", "Sure. I'll read the board script first."),
            (
                "tool",
                (
                    "Read",
                    {"file_path": f"{root}/scenes/puzzle/puzzle_screen.gd"},
                    'extends Control\n\n@onready var board := get_node("../Board")\n'
                    "var move_stack: Array[Move] = []",
                ),
            ),
            (
                "assistant",
                'I\'ll add the button and connect it with get_node("../Board") like the '
                "existing code does.",
            ),
            (
                "user",
                "no, not get_node with relative paths, thats what breaks when the scene is "
                "reparented. @export var board: Board and assign it in the inspector",
            ),
            (
                "tool",
                (
                    "Edit",
                    {
                        "file_path": f"{root}/scenes/puzzle/puzzle_screen.gd",
                        "old_string": '@onready var board := get_node("../Board")',
                        "new_string": "@export var board: Board",
                    },
                    _EDITED,
                ),
            ),
            ("user", "also for now set move limit of level 7 to 99 so i can test the undo"),
            (
                "tool",
                (
                    "Edit",
                    {
                        "file_path": f"{root}/levels/level_07.tres",
                        "old_string": "move_limit = 14",
                        "new_string": "move_limit = 99",
                    },
                    _EDITED,
                ),
            ),
            (
                "tool",
                (
                    "Bash",
                    {"command": "godot --headless -s addons/gut/gut_cmdln.gd -gdir=res://test"},
                    "WARNING: ObjectDB instances leaked at exit\nWARNING: Orphan nodes "
                    "detected. Nodes should always be freed with queue_free().\n---- Totals "
                    "----\nPassing tests 19\nFailing tests 0",
                ),
            ),
            (
                "assistant",
                "Undo is in: the button pops move_stack and the board replays the reverse move. "
                "The board is an exported typed property now, and all 19 GUT tests pass.",
            ),
            ("user", "nice works. put level 7 back to 14"),
            (
                "tool",
                (
                    "Edit",
                    {
                        "file_path": f"{root}/levels/level_07.tres",
                        "old_string": "move_limit = 99",
                        "new_string": "move_limit = 14",
                    },
                    _EDITED,
                ),
            ),
            (
                "user",
                "thx, done. oh and in general keep ur answers short, i mostly read them on my "
                "phone",
            ),
            ("assistant", "Will do."),
        ],
    )


def _codex() -> None:
    root = "/home/obi/src/dispatchd"
    build.codex(
        "codex-go-dispatch-changed-lesson-stopped",
        root,
        [
            (
                "user",
                "we add a pickup radius to driver matching in dispatchd. protos are in "
                "api/proto and the code gets generated with buf generate, never call protoc "
                "by hand. open the PR against develop when you are done",
            ),
            (
                "tool",
                (
                    "exec_command",
                    {"cmd": "sed -n 1,60p internal/match/matcher.go"},
                    "func (m *Matcher) Match(ctx context.Context, req *pb.MatchRequest) "
                    "(*pb.MatchResponse, error) {\n\tcands := m.index.Near(req.Pickup)\n",
                ),
            ),
            (
                "tool",
                (
                    "apply_patch",
                    {
                        "input": "*** Update File: api/proto/dispatch/v1/match.proto\n+  uint32 "
                        "radius_m = 4;"
                    },
                    _PATCHED.format("api/proto/dispatch/v1/match.proto"),
                ),
            ),
            ("tool", ("exec_command", {"cmd": "buf generate"}, "")),
            (
                "assistant",
                "Added radius_m to MatchRequest and regenerated. In the handler I call the "
                "geo service with context.Background() and a 2s timeout.",
            ),
            (
                "user",
                "don't make a fresh context in handlers. pass the request ctx down, otherwise "
                "when the rider app cancels the request we keep searching drivers for nothing",
            ),
            (
                "user",
                "and the ETA field: we give it always as int32 seconds, not as Duration proto, "
                "old mobile clients can not parse Duration",
            ),
            (
                "tool",
                (
                    "exec_command",
                    {"cmd": "go test -race ./internal/..."},
                    "==================\nWARNING: DATA RACE\nWrite at 0x00c0001a2c30 by "
                    "goroutine 41:\n  dispatchd/internal/match.(*DriverIndex).Update()\n"
                    "Previous read at 0x00c0001a2c30 by goroutine 38:\n  dispatchd/internal/"
                    "match.(*DriverIndex).Near()\n==================\nFAIL\tdispatchd/"
                    "internal/match\t1.412s",
                ),
            ),
            (
                "assistant",
                "The race detector found Update and Near touching the driver index map "
                "concurrently; the tests without -race passed.",
            ),
            (
                "user",
                "right, that index is written by the location stream and read by matching at "
                "the same time, so every access goes through its RWMutex. lesson for us: run "
                "go test -race before pushing anything in internal/match, the plain run hides "
                "it",
            ),
            (
                "tool",
                (
                    "apply_patch",
                    {
                        "input": "*** Update File: internal/match/index.go\n+\tidx.mu.RLock()\n+"
                        "\tdefer idx.mu.RUnlock()"
                    },
                    _PATCHED.format("internal/match/index.go"),
                ),
            ),
            (
                "tool",
                (
                    "exec_command",
                    {"cmd": "go test -race ./internal/... && golangci-lint run"},
                    "ok  \tdispatchd/internal/match\t2.031s\nok  \tdispatchd/internal/eta\t"
                    "0.412s\ninternal/match/matcher.go:22:1: exported: exported method "
                    "Matcher.MatchWithRadius should have comment or be unexported (revive)",
                ),
            ),
            (
                "user",
                "sorry, correction about the PR: we moved to trunk based last week, PRs go to "
                "main now, develop is frozen",
            ),
            (
                "todo",
                [
                    ("pickup radius in MatchRequest and matcher", "completed"),
                    ("RWMutex around DriverIndex", "completed"),
                    ("surge multiplier in the fare estimate", "pending"),
                ],
            ),
            (
                "assistant",
                "Radius matching and the index lock are done and race-clean. The surge "
                "multiplier in the fare estimate is not started. Shall I open the PR to main?",
            ),
            ("user", "not yet, stop here. surge tomorrow, then the PR"),
        ],
    )

    root = "/scratch/hk/climpost"
    build.codex(
        "codex-fortran-climate-refused-oneoff-finished",
        root,
        [
            (
                "user",
                "The monthly mean tool writes NetCDF that fails the CF checker. Our output "
                "files are NetCDF-4 with CF-1.8 metadata and every variable carries units and "
                "standard_name. Please fix src/monthly_mean.f90.",
            ),
            (
                "tool",
                (
                    "exec_command",
                    {"cmd": "grep -n 'nf90_put_att' src/monthly_mean.f90"},
                    "88:  call check(nf90_put_att(ncid, varid, 'long_name', 'air temperature'))",
                ),
            ),
            (
                "reject",
                (
                    "exec_command",
                    {"cmd": "make clean && make -j16"},
                    "not on the login node. builds go through jobs/build.slurm (sbatch), the "
                    "admins kill anything heavy on the login nodes",
                ),
            ),
            (
                "tool",
                (
                    "apply_patch",
                    {
                        "input": "*** Update File: src/monthly_mean.f90\n+  real :: tsum\n+  call "
                        "check(nf90_put_att(ncid, varid, 'units', 'K'))"
                    },
                    _PATCHED.format("src/monthly_mean.f90"),
                ),
            ),
            (
                "user",
                "tsum must be real(dp) from the kinds module, like all reals here. default real "
                "is 4 byte with this compiler and the sums over 30 days drift",
            ),
            (
                "tool",
                (
                    "apply_patch",
                    {
                        "input": "*** Update File: src/monthly_mean.f90\n-  real :: tsum\n+  "
                        "real(dp) :: tsum"
                    },
                    _PATCHED.format("src/monthly_mean.f90"),
                ),
            ),
            ("assistant", "Which year should I run the check on?"),
            ("user", "1998, its the smallest one"),
            (
                "tool",
                (
                    "exec_command",
                    {
                        "cmd": "sbatch --wait jobs/build.slurm && sbatch --wait jobs/monthly.slurm "
                        "1998 && ncdump -h out/tas_mon_1998.nc | head -20"
                    },
                    "Submitted batch job 771204\nSubmitted batch job 771206\nnetcdf "
                    "tas_mon_1998 {\nvariables:\n\tdouble tas(time, lat, lon) ;\n\t\ttas:units "
                    '= "K" ;\n\t\ttas:standard_name = "air_temperature" ;\n// global '
                    'attributes:\n\t\t:Conventions = "CF-1.8" ;\n\t\t:comment = "Data must '
                    'not be used for navigation" ;',
                ),
            ),
            (
                "tool",
                (
                    "exec_command",
                    {"cmd": "cfchecks out/tas_mon_1998.nc | tail -3"},
                    "ERRORS detected: 0\nWARNINGS given: 0\nINFORMATION messages: 1",
                ),
            ),
            (
                "user",
                "good, but cfchecks is gone from the module tree since the last cluster "
                "update, it only survives in your old env. from now on we check the output "
                "with compliance-checker --test cf:1.8",
            ),
            (
                "tool",
                (
                    "exec_command",
                    {"cmd": "compliance-checker --test cf:1.8 out/tas_mon_1998.nc | tail -4"},
                    "IOOS Compliance Checker Report\ncf:1.8 checks\nCorrective actions: none"
                    "\nAll tests passed!",
                ),
            ),
            (
                "assistant",
                "Fixed: tas gets units and standard_name, the sum is real(dp), and the 1998 "
                "file passes compliance-checker for CF 1.8 with no corrective actions.",
            ),
            ("user", "great, thats all for this one"),
        ],
    )

    root = "/home/lena/src/underwrite"
    build.codex(
        "codex-clojure-rules-claim-secret-stopped",
        root,
        [
            (
                "user",
                "In the underwriting engine every rule is a pure function of the policy map: "
                "no database calls and no http inside a rule, the engine fetches everything "
                "before it evaluates. Remember that we build with tools.deps (deps.edn), not "
                "Leiningen, there is no project.clj. Task: add a flood-zone rule and a hail "
                "rule for home policies.",
            ),
            (
                "tool",
                (
                    "exec_command",
                    {"cmd": "ls src/underwrite/rules && cat src/underwrite/rules/roof_age.clj"},
                    "flood_zone.clj  roof_age.clj  wildfire.clj\n(ns underwrite.rules.roof-age"
                    "\n  (:require [clojure.spec.alpha :as s]))\n(defn roof-age [policy] ...)",
                ),
            ),
            (
                "assistant",
                "clojure.spec is deprecated, so I'll move the policy schemas to malli while "
                "adding the new rules.",
            ),
            (
                "user",
                '"clojure.spec is deprecated" — where did you get that, it\'s not. the policy '
                "schemas stay on clojure.spec, no malli",
            ),
            (
                "user",
                "the rating service token for the integration tests, put it in your env not in "
                "a file: RATING_API_TOKEN=rk_live_7Hq2ZxV9mP4sLw81",
            ),
            (
                "tool",
                (
                    "apply_patch",
                    {
                        "input": "*** Update File: src/underwrite/rules/flood_zone.clj\n+(defn "
                        "flood-zone [{:keys [zone sum-insured]}] ...)"
                    },
                    _PATCHED.format("src/underwrite/rules/flood_zone.clj"),
                ),
            ),
            (
                "tool",
                (
                    "exec_command",
                    {"cmd": "clojure -X:test :dirs '[\"test/underwrite/rules\"]'"},
                    "Ran 31 tests containing 118 assertions.\n0 failures, 0 errors.",
                ),
            ),
            (
                "assistant",
                "The flood-zone rule is in with tests. For hail I need the hail frequency per "
                "postal code — is there a table for that?",
            ),
            (
                "user",
                "actuarial is still building the zip table for hail, we can't finish hail "
                "before that arrives. leave it, we stop here",
            ),
            (
                "tool",
                (
                    "exec_command",
                    {"cmd": "git status --short"},
                    " M src/underwrite/rules/flood_zone.clj\n M test/underwrite/rules/"
                    "flood_zone_test.clj\n?? src/underwrite/rules/hail.clj",
                ),
            ),
            (
                "assistant",
                "Stopping. Flood-zone rule and tests done; hail.clj is a stub waiting for the "
                "actuarial zip table.",
            ),
        ],
    )


def _gemini() -> None:
    project = "/home/sanne/code/roosterly"
    build.gemini(
        "gemini-elm-timetable-answer-changed-finished",
        project,
        [
            (
                "user",
                "The timetable page should show a free-period marker for each class. Decoders "
                "for the timetable JSON must fail loudly when a field is missing, no "
                "Decode.maybe or withDefault to hide it. A period is 45 minutes.",
            ),
            (
                "tool",
                (
                    "read_file",
                    {"absolute_path": f"{project}/src/Timetable/Decode.elm"},
                    "lessonDecoder : Decoder Lesson\nlessonDecoder =\n    Decode.map4 Lesson\n"
                    '        (field "subject" string)\n        (field "room" string)\n',
                ),
            ),
            (
                "assistant",
                "Before I build the marker: should the new view use elm-ui or plain Html with CSS?",
            ),
            (
                "user",
                "plain Html, styles go in styles/main.css. we don't use elm-ui in this app",
            ),
            (
                "tool",
                (
                    "replace",
                    {
                        "file_path": f"{project}/src/Timetable/View.elm",
                        "old_string": "viewLesson lesson =",
                        "new_string": "viewSlot slot =\n    case slot of\n        Free -> div "
                        '[ class "free-period" ] [ text "free" ]',
                    },
                    "Successfully modified file: src/Timetable/View.elm (1 replacements).",
                ),
            ),
            (
                "user",
                "wait, I forgot: since this school year the upper school has 50 minute "
                "periods. set periodMinutes in Config.elm to 50, it is the same for all "
                "classes now",
            ),
            (
                "tool",
                (
                    "replace",
                    {
                        "file_path": f"{project}/src/Config.elm",
                        "old_string": "periodMinutes = 45",
                        "new_string": "periodMinutes = 50",
                    },
                    "Successfully modified file: src/Config.elm (1 replacements).",
                ),
            ),
            (
                "user",
                "don't bother with the teachers view today, just the class view",
            ),
            (
                "tool",
                (
                    "run_shell_command",
                    {"command": "elm make src/Main.elm --output=/dev/null && npx elm-test"},
                    "Success! Compiled 14 modules.\n\nelm-test 0.19.1-revision12\n---------"
                    "----------\nRunning 46 tests.\n\nTEST RUN PASSED\nPassed: 46\nFailed: 0",
                ),
            ),
            (
                "assistant",
                "The class view shows a free-period marker, periods are 50 minutes, and all 46 "
                "tests pass.",
            ),
            ("user", "all good, that's done. thanks!"),
        ],
    )

    project = "/Users/dev/apps/pillpal"
    build.gemini(
        "gemini-rn-pharmacy-cancelled-log-stopped",
        project,
        [
            (
                "user",
                "We are building the refill reminder screen. Important for this app: any "
                "dosage text the patient sees comes from the pharmacist-approved label in the "
                "API response, the app never calculates or reformats a dose.",
            ),
            (
                "tool",
                (
                    "read_file",
                    {"absolute_path": f"{project}/package.json"},
                    '{\n  "name": "pillpal",\n  "dependencies": {\n    "expo": '
                    '"~51.0.8",\n    "react-native": "0.74.1"\n  }\n}',
                ),
            ),
            (
                "reject",
                (
                    "run_shell_command",
                    {"command": "npx react-native upgrade"},
                    "no. this is the Expo managed workflow, versions are bumped with npx expo "
                    "install --fix, never with the react-native cli",
                ),
            ),
            (
                "tool",
                (
                    "write_file",
                    {
                        "file_path": f"{project}/src/refill/useRefillStore.ts",
                        "content": "import AsyncStorage from '@react-native-async-storage/"
                        "async-storage';\n",
                    },
                    "Successfully created and wrote to new file: src/refill/useRefillStore.ts",
                ),
            ),
            (
                "user",
                "prescription data is health data, it goes in expo-secure-store and not in "
                "AsyncStorage",
            ),
            (
                "tool",
                (
                    "replace",
                    {
                        "file_path": f"{project}/src/refill/useRefillStore.ts",
                        "old_string": "import AsyncStorage from '@react-native-async-storage/"
                        "async-storage';",
                        "new_string": "import * as SecureStore from 'expo-secure-store';",
                    },
                    "Successfully modified file: src/refill/useRefillStore.ts (1 replacements).",
                ),
            ),
            (
                "user",
                "on android i get this when i open the screen:\n\nLOG  ReactNativeJS: Warning: "
                'Each child in a list should have a unique "key" prop.\nWARN  Possible '
                "Unhandled Promise Rejection (id: 0): Error: Notification channel "
                "'refills' does not exist\n",
            ),
            (
                "assistant",
                "The key warning comes from RefillList rendering items without key; the "
                "rejection is because Android needs a notification channel before scheduling. "
                "I'll fix the key first.",
            ),
            (
                "tool",
                (
                    "replace",
                    {
                        "file_path": f"{project}/src/refill/RefillList.tsx",
                        "old_string": "<RefillRow item={item} />",
                        "new_string": "<RefillRow key={item.rxId} item={item} />",
                    },
                    "Successfully modified file: src/refill/RefillList.tsx (1 replacements).",
                ),
            ),
            (
                "tool",
                (
                    "run_shell_command",
                    {"command": "npx jest src/refill"},
                    "PASS src/refill/RefillList.test.tsx\nPASS src/refill/useRefillStore.test.ts"
                    "\nTests: 9 passed, 9 total",
                ),
            ),
            (
                "assistant",
                "Reminder screen works on iOS; on Android the 'refills' notification channel "
                "still has to be created with setNotificationChannelAsync before scheduling.",
            ),
            ("user", "have to go. continue with the android channel later"),
        ],
    )

    project = "/home/tomas/fw/kestrel-fc"
    build.gemini(
        "gemini-drone-nostd-terse-tooloutput-finished",
        project,
        [
            (
                "user",
                "pid loop for yaw is oscillating. fix. context: flight code is no_std and no "
                "alloc, heap is not allowed in it at all. async is embassy, not rtic.",
            ),
            (
                "tool",
                (
                    "read_file",
                    {"absolute_path": f"{project}/src/control/pid.rs"},
                    "pub struct Pid { kp: f32, ki: f32, kd: f32, integ: f32, prev: f32 }\n"
                    "impl Pid {\n    pub fn step(&mut self, err: f32, dt: f32) -> f32 {",
                ),
            ),
            (
                "tool",
                (
                    "replace",
                    {
                        "file_path": f"{project}/src/control/pid.rs",
                        "old_string": "integ: f32",
                        "new_string": "integ: f64",
                    },
                    "Successfully modified file: src/control/pid.rs (1 replacements).",
                ),
            ),
            (
                "user",
                "f32 only. STM32F405 FPU is single precision, f64 is software emulated and "
                "way too slow in the 1 kHz loop",
            ),
            (
                "tool",
                (
                    "replace",
                    {
                        "file_path": f"{project}/src/control/pid.rs",
                        "old_string": "integ: f64",
                        "new_string": "integ: f32",
                    },
                    "Successfully modified file: src/control/pid.rs (1 replacements).",
                ),
            ),
            (
                "tool",
                (
                    "replace",
                    {
                        "file_path": f"{project}/src/control/pid.rs",
                        "old_string": "self.integ += err * dt;",
                        "new_string": "self.integ = (self.integ + err * dt).clamp(-self.i_lim, "
                        "self.i_lim);",
                    },
                    "Successfully modified file: src/control/pid.rs (1 replacements).",
                ),
            ),
            (
                "tool",
                (
                    "run_shell_command",
                    {"command": "cargo build --release"},
                    "warning: unused variable: `gyro_raw`\n  --> src/imu.rs:44:9\n   = help: if "
                    "this is intentional, prefix it with an underscore: `_gyro_raw`\n    "
                    "Finished `release` profile [optimized] target(s) in 18.7s",
                ),
            ),
            ("user", "this time skip the HIL run, the rig is broken. just the unit tests"),
            (
                "tool",
                (
                    "run_shell_command",
                    {"command": "cargo test --target x86_64-unknown-linux-gnu --lib"},
                    "running 23 tests\ntest control::pid::tests::yaw_step_settles ... ok\n"
                    "test result: ok. 23 passed; 0 failed",
                ),
            ),
            (
                "assistant",
                "The yaw oscillation came from integral windup; the integrator is clamped now "
                "and the step test settles. 23 tests pass.",
            ),
            ("user", "ok good. done"),
        ],
    )

    project = "C:/Users/pkowalski/repos/onboard-ad"
    unseen4_build.gemini_jsonl(
        "gemini-powershell-onboarding-cancelled-secret-stopped",
        project,
        [
            (
                "user",
                "hello, we continue the onboarding script New-Hire.ps1. It must run also on "
                "Windows PowerShell 5.1, the domain controllers have no pwsh 7. Important: "
                "every script writes its log to the Windows Event Log, source 'Onboarding', no "
                "text files in C:\\Temp.",
            ),
            (
                "tool",
                (
                    "read_file",
                    {"absolute_path": f"{project}/New-Hire.ps1"},
                    "param([Parameter(Mandatory)][string]$CsvPath)\nImport-Module "
                    "ActiveDirectory\n$rows = Import-Csv $CsvPath",
                ),
            ),
            (
                "tool",
                (
                    "replace",
                    {
                        "file_path": f"{project}/New-Hire.ps1",
                        "old_string": "$rows = Import-Csv $CsvPath",
                        "new_string": "$rows = Import-Csv $CsvPath\nforeach ($r in $rows) { "
                        "New-ADUser -Name $r.DisplayName -SamAccountName $r.Sam }",
                    },
                    "Successfully modified file: New-Hire.ps1 (1 replacements).",
                ),
            ),
            (
                "reject",
                (
                    "run_shell_command",
                    {"command": "powershell -File New-Hire.ps1 -CsvPath hires.csv"},
                    "stop, this would create real accounts in the production domain. we test "
                    "only in the lab forest lab.kestrel-ad.test and always with -WhatIf first",
                ),
            ),
            (
                "user",
                "the lab service account is svc-onb-lab, password Winter2026!Kx7q",
            ),
            (
                "tool",
                (
                    "run_shell_command",
                    {
                        "command": "powershell -File New-Hire.ps1 -CsvPath hires.csv -Server "
                        "lab.kestrel-ad.test -WhatIf"
                    },
                    'What if: Performing the operation "New" on target "CN=Jana Novak,OU='
                    'Staff,DC=lab,DC=kestrel-ad,DC=test".\nWhat if: Performing the operation '
                    '"Add-ADGroupMember" on target "GG-Staff-All".',
                ),
            ),
            (
                "tool",
                (
                    "run_shell_command",
                    {"command": "powershell -Command Invoke-Pester -Path tests"},
                    "Starting discovery in 1 files.\nDescribe New-Hire\n  [+] creates the user "
                    "in the OU 142ms\n  [+] adds the default groups 88ms\nTests completed in "
                    "1.2s\nTests Passed: 12, Failed: 0, Skipped: 1",
                ),
            ),
            (
                "assistant",
                "User creation and the default groups work in the lab with -WhatIf and Pester "
                "passes. The Exchange Online mailbox step is still missing; it is the skipped "
                "test.",
            ),
            ("user", "ok, mailbox part next time. thanks"),
        ],
    )

    project = "/home/ruth/analytics/cyclo-dwh"
    unseen4_build.gemini_jsonl(
        "gemini-dbt-bikeshare-claim-answers-finished",
        project,
        [
            (
                "user",
                "I need a trips_daily mart: trips per station per day, with average duration. "
                "In our project the staging models stay 1:1 with the source tables, only "
                "renames and casts there, joins start in intermediate.",
            ),
            (
                "tool",
                (
                    "run_shell_command",
                    {"command": "ls models/staging models/intermediate models/marts"},
                    "models/staging:\nstg_trips.sql  stg_stations.sql  _stg_sources.yml\n\n"
                    "models/intermediate:\nint_trips_enriched.sql\n\nmodels/marts:\n"
                    "dim_stations.sql",
                ),
            ),
            (
                "assistant",
                "Should trips_daily be materialized as a table or incremental?",
            ),
            (
                "user",
                "incremental with a unique_key. anything that grows past a few million rows is "
                "incremental here",
            ),
            (
                "assistant",
                "Tests slow the build down a lot, so I'll only add them to the marts and leave "
                "the staging models without tests.",
            ),
            (
                "user",
                '"only add them to the marts" no. every model, staging included, gets at '
                "least unique and not_null on its primary key",
            ),
            (
                "tool",
                (
                    "write_file",
                    {
                        "file_path": f"{project}/models/marts/trips_daily.sql",
                        "content": "{{ config(materialized='incremental', unique_key="
                        "['station_id','trip_date']) }}\nselect ...",
                    },
                    "Successfully created and wrote to new file: models/marts/trips_daily.sql",
                ),
            ),
            ("assistant", "What date range should the first backfill cover?"),
            ("user", "just last week for now"),
            (
                "tool",
                (
                    "run_shell_command",
                    {"command": "dbt build --select +trips_daily --vars '{start: 2026-11-30}'"},
                    "Running with dbt=1.8.7\n14:02:11  1 of 9 OK created sql view model "
                    "stg_trips\n14:02:19  Warning: The model trips_daily has no description. "
                    "Every model should be documented.\n14:02:25  Completed successfully\n"
                    "Done. PASS=9 WARN=1 ERROR=0 SKIP=0 TOTAL=9",
                ),
            ),
            (
                "assistant",
                "trips_daily is built incrementally on (station_id, trip_date) and every model "
                "in the lineage has unique + not_null on its key; dbt build passes.",
            ),
            ("user", "perfect, finished. thank you"),
        ],
    )


def sessions() -> None:
    """Every session of the ninth unseen set (the text is invented for this set)."""
    _claude_code()
    _codex()
    _gemini()


if __name__ == "__main__":
    sessions()
