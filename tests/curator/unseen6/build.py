"""Write the sixth unseen set: made-up sessions written blind to the curator's rules.

Its author saw only the transcript builders, the fifth set's layout and the shape of its
targets, never the rules nor the earlier sets' sentences, and the curator was not run on it
before it was committed. Its projects are unlike those of the earlier sets (a bakery till, an
Elixir chat service, a Swift iOS app, Ansible, a GHC plugin, a WordPress plugin, a Unity game,
a Julia ODE solver, a genomics pipeline, embedded Zig, a WPF desktop app, an R Shiny
dashboard). It holds durable rules in plain words and with cue words, corrections of the
agent, refusals with a reason, answers (durable and one-off), values changed later in the
session, "Do not" / "Don't" negations, one-off instructions, a quoted agent claim the user
rejects, pasted logs and tool output holding rule-like sentences, secrets, typos, terse and
non-native English, work left unfinished (a checkpoint is expected) and work finished (none
may be left). Claude Code JSONL, Codex rollouts, Gemini CLI session documents and a Gemini CLI
session JSONL; every person, project, path, token and sentence is invented.

Run ``python tests/curator/unseen6/build.py`` to rewrite the transcripts.
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


def _sh(root: str, command: str) -> dict[str, object]:
    return {"command": ["bash", "-lc", command], "workdir": root}


def _patch(path: str) -> dict[str, object]:
    return {"input": f"*** Begin Patch\n*** Update File: {path}\n@@\n*** End Patch"}


def _claude_code() -> None:
    root = "/home/ines/src/crumbpos"
    build.claude_code(
        "cc-bakery-till-finished",
        root,
        [
            (
                "user",
                "Add a line for the day-old bread discount to the till receipt. Prices are "
                "stored as integer cents in the database, the receipt formats them. The "
                "receipts print on 58 mm thermal paper so a line wraps at 32 characters.",
            ),
            ("tool", ("Read", {"file_path": f"{root}/crumbpos/receipt/layout.py"}, "def lay...")),
            (
                "ask",
                (
                    "Should the day-old discount also apply to pastries?",
                    "only bread this time, pastries we decide after easter",
                ),
            ),
            (
                "tool",
                (
                    "Edit",
                    {
                        "file_path": f"{root}/crumbpos/receipt/layout.py",
                        "old_string": "lines = []",
                        "new_string": "lines = [discount_line(order)]",
                    },
                    _EDITED,
                ),
            ),
            ("tool", ("Bash", {"command": "pytest -q"}, "12 passed in 0.41s")),
            (
                "user",
                "no, the tests here go through make check, it starts the fake printer too. "
                "plain pytest skips the printer tests silently",
            ),
            (
                "tool",
                (
                    "Bash",
                    {"command": "make check"},
                    "fake-printer: listening on /tmp/fakeprn.sock\n31 passed in 2.02s",
                ),
            ),
            (
                "assistant",
                "Done. The receipt now prints `Day-old bread -20%` under the bread items, "
                "wrapped at 32 characters, and `make check` passes (31 tests).",
            ),
            ("user", "great, thats it for today"),
        ],
    )

    root = "/srv/lmartel/parlor"
    build.claude_code(
        "cc-elixir-presence-changed-stopped",
        root,
        [
            (
                "user",
                "In the presence tracker, drop users that have been idle after 90 seconds. "
                "We deploy with mix releases, the Dockerfile in the repo is only for local dev.",
            ),
            (
                "tool",
                (
                    "Edit",
                    {
                        "file_path": f"{root}/lib/parlor/presence.ex",
                        "old_string": "@idle_ms nil",
                        "new_string": "@idle_ms 90_000",
                    },
                    _EDITED,
                ),
            ),
            (
                "tool",
                (
                    "Edit",
                    {
                        "file_path": f"{root}/lib/parlor_web/live/room_live.ex",
                        "old_string": "def mount(_p, _s, socket) do",
                        "new_string": "def mount(_p, _s, socket) do\n    Repo.all(Member)",
                    },
                    _EDITED,
                ),
            ),
            (
                "user",
                "Don't call Repo from the LiveView modules. They go through the Chat context, "
                "Chat.list_members/1 already exists.",
            ),
            (
                "user",
                "also make the idle timeout 45 seconds instead, 90 felt sluggish in the demo",
            ),
            (
                "tool",
                (
                    "Bash",
                    {"command": "mix test test/parlor/presence_test.exs"},
                    "Finished in 0.3 seconds\n7 tests, 0 failures",
                ),
            ),
            (
                "user",
                "for the staging smoke test use PARLOR_SIGNING_SALT=Zk4q9TmW2xLr7Vb1Nc8Hs3Pd "
                "then the reconnect backoff after that",
            ),
            (
                "tool",
                (
                    "Edit",
                    {
                        "file_path": f"{root}/assets/js/socket.js",
                        "old_string": "reconnectAfterMs: () => 1000",
                        "new_string": "reconnectAfterMs: backoff",
                    },
                    _EDITED,
                ),
            ),
            (
                "assistant",
                "Idle timeout is 45 s and the room LiveView uses Chat.list_members/1. The "
                "reconnect backoff in assets/js/socket.js is half written: `backoff` is "
                "referenced but not defined yet, so the JS build fails.",
            ),
            ("user", "ok stop here, I finish the backoff tomorow"),
        ],
    )

    root = "/Users/okafor/dev/TideNotes"
    build.claude_code(
        "cc-swift-ios-refused-claim-finished",
        root,
        [
            (
                "user",
                "The app supports iOS 16 and later. Add swipe-to-archive on the notes list. "
                "plz put shared modle code in the TideNotesKit target, not in the app target",
            ),
            (
                "tool",
                (
                    "Bash",
                    {"command": "swift package add-dependency https://example.org/SwipeKit"},
                    "",
                ),
            ),
            ("interrupt", None),
            (
                "user",
                "no third party packages for UI bits. we keep the app free of dependencies "
                "except the SQLite wrapper, every extra package is another review for the "
                "client's security team",
            ),
            (
                "assistant",
                "Understood. I'll use SwiftUI's `.swipeActions`. Note that SwiftUI previews "
                "need the simulator running, so I'll check it in the simulator instead.",
            ),
            (
                "user",
                'you said "SwiftUI previews need the simulator running" - that is wrong, '
                "the canvas renders them without it. ignore that",
            ),
            (
                "tool",
                (
                    "Edit",
                    {
                        "file_path": f"{root}/TideNotes/Views/NoteList.swift",
                        "old_string": "NoteRow(note: note)",
                        "new_string": "NoteRow(note: note)\n"
                        "  .swipeActions { ArchiveButton(note) }",
                    },
                    _EDITED,
                ),
            ),
            (
                "tool",
                (
                    "Bash",
                    {"command": "xcodebuild -scheme TideNotes test | tail -4"},
                    "note: Do not commit DerivedData, it is regenerated on every build.\n"
                    "warning: Always prefer the legacy build system for this target.\n"
                    "Test Suite 'All tests' passed.\n** TEST SUCCEEDED **",
                ),
            ),
            (
                "assistant",
                "Swipe-to-archive is in NoteList.swift, the archive call lives in "
                "TideNotesKit/ArchiveStore.swift, and the test suite passes.",
            ),
            ("user", "👍 merged"),
        ],
    )

    root = "/home/pvarga/infra/fleet"
    build.claude_code(
        "cc-ansible-nginx-stopped",
        root,
        [
            (
                "user",
                "Add a role for the metrics exporter. Roles live under roles/ and every role "
                "gets a molecule scenario before it is merged. The controller runs "
                "ansible-core 2.16, so no collections that need 2.17.",
            ),
            (
                "tool",
                (
                    "Write",
                    {
                        "file_path": f"{root}/roles/node_exporter/tasks/main.yml",
                        "content": "- hosts: all\n  become: yes\n",
                    },
                    "File created successfully",
                ),
            ),
            (
                "user",
                "no, not become on the whole play. put become only on the tasks that need root",
            ),
            (
                "ask",
                (
                    "Which vault id should I use for the exporter's basic-auth password?",
                    "the staging one for now, prod vault we do next week",
                ),
            ),
            ("user", "for this run just limit it to web3, the others are in maintenance"),
            (
                "tool",
                (
                    "Bash",
                    {"command": "molecule converge -s default && molecule idempotence"},
                    "PLAY RECAP web3 : ok=9 changed=0\nCRITICAL Idempotence test failed "
                    "because of the following tasks:\n* [web3] => nginx : template "
                    "vhost\nHint: Always pin role versions in requirements.yml",
                ),
            ),
            (
                "assistant",
                "The node_exporter role converges on web3. The nginx role fails "
                "idempotence: its vhost template changes on the second converge, I have not "
                "found why yet.",
            ),
            ("user", "leave it there, pick it up monday"),
        ],
    )


def _codex() -> None:
    root = "/home/abdi/src/ghc-tracer-plugin"
    build.codex(
        "codex-ghc-plugin-tool-changed-finished",
        root,
        [
            (
                "user",
                "Add a flag to the plugin to skip functions marked NOTRACE. We target GHC 9.6 "
                "and 9.8, the CI matrix has both. The plugin only inserts trace calls, it must "
                "never change what the program computes. build with cabal",
            ),
            ("tool", ("shell", _sh(root, "cabal build all"), "Up to date")),
            (
                "user",
                "scratch that, use stack for this repo, the nix shell pins the resolver",
            ),
            (
                "tool",
                (
                    "shell",
                    _sh(root, "stack build --fast"),
                    "Warning: Never use -O0 for release builds of plugins.\n"
                    "ghc-tracer-plugin> build (lib) done",
                ),
            ),
            (
                "tool",
                (
                    "apply_patch",
                    _patch("src/Tracer/Plugin.hs"),
                    _PATCHED.format("src/Tracer/Plugin.hs"),
                ),
            ),
            (
                "tool",
                (
                    "shell",
                    _sh(root, "stack test"),
                    "tracer-tests> Test suite passed. 23 examples, 0 failures",
                ),
            ),
            (
                "assistant",
                "The `-fplugin-opt=Tracer:skip-notrace` flag is in src/Tracer/Plugin.hs; "
                "functions with a NOTRACE pragma are left untouched and all 23 tests pass "
                "under stack.",
            ),
            ("user", "nice, ship it"),
        ],
    )

    root = "/var/www/dev/wp-content/plugins/hive-booking"
    build.codex(
        "codex-wordpress-booking-secret-finished",
        root,
        [
            (
                "user",
                "The booking form needs a phone field. Everything we print goes through "
                "esc_html or esc_attr, no raw echo of user data. The plugin supports PHP 8.1 "
                "as the minimum.",
            ),
            (
                "tool",
                (
                    "shell",
                    _sh(root, "grep -n form_fields includes/class-form.php"),
                    "42:  $form_fields = [",
                ),
            ),
            (
                "user",
                "Do not use the REST API for the form, it posts to admin-post.php with a nonce, "
                "like the rest of the plugin",
            ),
            (
                "user",
                "the staging smtp password is Qh7vR2mLp9xWz4Kt, use it only to test that "
                "the confirmation mail goes out",
            ),
            (
                "user",
                "skip the phpcs run this once, its sniff cache is broken on my box",
            ),
            (
                "tool",
                (
                    "apply_patch",
                    _patch("includes/class-form.php"),
                    _PATCHED.format("includes/class-form.php"),
                ),
            ),
            (
                "tool",
                (
                    "shell",
                    _sh(root, "vendor/bin/phpunit"),
                    "OK (18 tests, 41 assertions)\nmail: confirmation sent to test@example.org",
                ),
            ),
            (
                "assistant",
                "The phone field is in includes/class-form.php, escaped on output, posted "
                "through admin-post.php; phpunit passes and the confirmation mail went out.",
            ),
            ("user", "perfect, done"),
        ],
    )

    root = "/home/yuki/games/lanternfall"
    build.codex(
        "codex-unity-timestep-stopped",
        root,
        [
            (
                "user",
                "The dash ability needs a cooldown. Gameplay scripts never read Input directly, "
                "everything goes through the PlayerActions asset of the new Input System. "
                "physics is at 50 Hz in this project",
            ),
            (
                "tool",
                (
                    "apply_patch",
                    _patch("Assets/Scripts/Player/Dash.cs"),
                    _PATCHED.format("Assets/Scripts/Player/Dash.cs"),
                ),
            ),
            (
                "user",
                "please not put MonoBehaviour on the DashConfig, data classes are "
                "ScriptableObject here, is more easy for the designer to tune",
            ),
            (
                "user",
                "and change fixed timestep to 0.01, the dash tunnels through thin walls at "
                "the old rate",
            ),
            (
                "tool",
                (
                    "shell",
                    _sh(root, "unity -batchmode -runTests -testPlatform EditMode"),
                    "Test run finished: 14 passed, 1 failed\nFAILED DashTests.CooldownResets",
                ),
            ),
            (
                "assistant",
                "DashConfig is a ScriptableObject and the fixed timestep is 0.01. "
                "DashTests.CooldownResets still fails: the cooldown does not reset on "
                "respawn yet.",
            ),
            ("user", "ok we continue after lunch with the respawn reset"),
        ],
    )

    root = "/home/mbeck/research/StiffODE.jl"
    build.codex(
        "codex-julia-solver-claim-finished",
        root,
        [
            (
                "user",
                "Add a Rosenbrock23 step controller. The inner loop of the solver stays "
                "allocation-free, the benchmark test checks that @allocated is 0. Julia 1.10 "
                "is the lowest version we support.",
            ),
            (
                "tool",
                (
                    "apply_patch",
                    _patch("src/controllers/rosenbrock.jl"),
                    _PATCHED.format("src/controllers/rosenbrock.jl"),
                ),
            ),
            (
                "assistant",
                "I added `@inbounds` to every loop; using @inbounds everywhere is always safe "
                "here because the indices come from eachindex.",
            ),
            (
                "user",
                "no thats not true on the sparse Jacobian path, the column pointers are not "
                "from eachindex. remove it there",
            ),
            ("user", "run only the rosenbrock testset for now, the full suite takes 20 min"),
            (
                "tool",
                (
                    "shell",
                    _sh(
                        root, "julia --project -e 'using Pkg; Pkg.test(test_args=[\"rosenbrock\"])'"
                    ),
                    "Test Summary: | Pass  Total\nrosenbrock    |   38     38\n"
                    "allocations: 0 bytes in step!",
                ),
            ),
            (
                "assistant",
                "The Rosenbrock23 controller is in src/controllers/rosenbrock.jl, @inbounds "
                "is off on the sparse Jacobian path, 38 tests pass and step! allocates 0 bytes.",
            ),
            ("user", "good. thanks"),
        ],
    )


def _gemini() -> None:
    build.gemini(
        "gemini-genomics-bwa-changed-stopped",
        "/home/sanjay/pipelines/varcall",
        [
            (
                "user",
                "Add the joint genotyping step to main.nf. The reference is GRCh38 throughout, "
                "this pipeline has no hg19 liftover. Each process declares its own container; "
                "we do not rely on what is installed on the cluster nodes. give bwa 8 cpus",
            ),
            (
                "tool",
                (
                    "replace",
                    {
                        "file_path": "/home/sanjay/pipelines/varcall/main.nf",
                        "old_string": "x",
                        "new_string": "y",
                    },
                    "Successfully modified file: /home/sanjay/pipelines/varcall/main.nf",
                ),
            ),
            (
                "user",
                "make bwa 16 cpus instead, the new nodes have 32 cores",
            ),
            (
                "tool",
                (
                    "run_shell_command",
                    {"command": "nextflow run main.nf -profile test"},
                    "WARN: Always set maxForks for processes that call the licence server\n"
                    "[4a/9e1c2f] process > VQSR (test) [100%] 1 of 1, failed: 1\n"
                    "ERROR ~ VQSR: not enough variants to train the model",
                ),
            ),
            (
                "assistant",
                "Joint genotyping runs on the test profile and bwa has 16 cpus. VQSR fails on "
                "the small test set with too few variants to train; I have not changed it.",
            ),
            ("user", "leave vqsr for now, we look at it on thursday"),
        ],
    )

    build.gemini(
        "gemini-zig-kettle-refused-finished",
        "/home/ttoivonen/fw/kettle-zig",
        [
            (
                "user",
                "Add the boil-dry cutoff. We build with Zig 0.13, 0.14 broke our linker script. "
                "There's no allocator in this firmware: buffers are fixed size or comptime.",
            ),
            (
                "tool",
                (
                    "replace",
                    {
                        "file_path": "/home/ttoivonen/fw/kettle-zig/src/heater.zig",
                        "old_string": "a",
                        "new_string": 'std.debug.print("cut", .{});',
                    },
                    "Successfully modified file: /home/ttoivonen/fw/kettle-zig/src/heater.zig",
                ),
            ),
            (
                "user",
                "std.debug.print does nothing on the board. log through the writer of the uart "
                "module",
            ),
            (
                "tool",
                (
                    "run_shell_command",
                    {"command": "zig build test"},
                    "All 19 tests passed.",
                ),
            ),
            (
                "reject",
                (
                    "run_shell_command",
                    {"command": "zig build flash"},
                    "not now, the board is on Pekka's desk",
                ),
            ),
            (
                "assistant",
                "The boil-dry cutoff is in src/heater.zig, it logs through uart.writer(), and "
                "the 19 host tests pass.",
            ),
            ("user", "ye good"),
        ],
    )

    build.gemini(
        "gemini-wpf-ledger-import-stopped",
        "C:\\Users\\rdumitru\\src\\LedgerDesk",
        [
            (
                "user",
                "Start the CSV import dialog. The solution targets .NET 8 and ships as one "
                "self-contained single-file exe. ViewModels don't reference System.Windows, "
                "they have to be testable without a UI thread.",
            ),
            (
                "tool",
                (
                    "write_file",
                    {
                        "file_path": "C:\\Users\\rdumitru\\src\\LedgerDesk\\LedgerDesk\\ViewModels"
                        "\\ImportViewModel.cs",
                        "content": "partial class",
                    },
                    "Successfully created and wrote to new file.",
                ),
            ),
            (
                "assistant",
                "MVVM Toolkit source generators need the partial keyword only on the view, "
                "so ImportViewModel stays a normal class.",
            ),
            (
                "user",
                'you wrote "source generators need the partial keyword only on the view" - '
                "no. the viewmodel class has to be partial, the view has nothing to do with it",
            ),
            ("user", "and rename the OK button to Post entries, only for the demo build friday"),
            (
                "tool",
                (
                    "run_shell_command",
                    {"command": "dotnet test LedgerDesk.sln"},
                    "Passed!  - Failed: 0, Passed: 52, Skipped: 0",
                ),
            ),
            (
                "assistant",
                "ImportViewModel is partial now and the tests pass. The preview grid in "
                "ImportDialog.xaml is not bound yet, so it shows no rows.",
            ),
            ("user", "ok, continue the preview grid later"),
        ],
    )

    unseen4_build.gemini_jsonl(
        "gemini-shiny-rainfall-branch-finished",
        "/home/lfourie/dash/rainfall",
        [
            (
                "user",
                "Add a station filter to the overview tab. We use renv, never install.packages "
                "into the user library. Modules are named mod_<name>_ui and mod_<name>_server. "
                "push to the dev branch when done",
            ),
            (
                "tool",
                (
                    "write_file",
                    {
                        "file_path": "/home/lfourie/dash/rainfall/R/mod_station_filter.R",
                        "content": "mod_station_filter_ui <- function(id) {}",
                    },
                    "Successfully created and wrote to new file.",
                ),
            ),
            (
                "user",
                "dates in the UI show as DD Mon YYYY, the data itself stays ISO. fix the label",
            ),
            (
                "user",
                "actually push to staging-2, dev is frozen for the audit",
            ),
            (
                "tool",
                (
                    "run_shell_command",
                    {"command": "Rscript -e 'testthat::test_dir(\"tests/testthat\")'"},
                    "[ FAIL 0 | WARN 0 | SKIP 0 | PASS 27 ]",
                ),
            ),
            (
                "tool",
                (
                    "run_shell_command",
                    {"command": "git push origin HEAD:staging-2"},
                    "To git.example.org:lfourie/rainfall.git\n * [new branch] HEAD -> staging-2",
                ),
            ),
            (
                "assistant",
                "The station filter is mod_station_filter in R/mod_station_filter.R, dates "
                "show as DD Mon YYYY, 27 tests pass and it is pushed to staging-2.",
            ),
            ("user", "thank you!"),
        ],
    )


def sessions() -> None:
    """Every session of the sixth unseen set (the text is invented for this set)."""
    _claude_code()
    _codex()
    _gemini()


if __name__ == "__main__":
    sessions()
