"""Write the seventh unseen set: made-up sessions written blind to the curator's rules.

Its author saw only the transcript builders, the earlier sets' layout (file names, target
format, how the bench and the held-out test load a set), never the curator's rules nor the
earlier sets' sentences, and the curator was not run on it before it was committed: it
measures how the rules generalise to projects none of the earlier sets used (a bakery point of
sale, a GHC plugin, a genomics pipeline, an Elixir chat service, a WordPress plugin, embedded
Zig, a Swift iOS app, an R Shiny dashboard, a Unity game, Ansible, a WPF desktop app, a Julia
solver). It holds durable rules in plain words and with cue words, corrections of the agent,
refusals with a reason, answers to the agent's questions (durable and one-off), values changed
later in the session, "Do not" / "Don't" negations, one-off instructions, quoted agent claims
the user rejects, pasted logs and tool output holding rule-like sentences, secrets, typos,
terse and non-native English, work left unfinished (a checkpoint is expected) and work
finished (none may be left). Claude Code JSONL, Codex rollouts, Gemini CLI session documents
and Gemini CLI session JSONL; every person, project, path, token and sentence is invented.

Run ``python tests/curator/unseen7/build.py`` to rewrite the transcripts.
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
    root = "/home/ines/src/crumbpos"
    build.claude_code(
        "cc-bakery-pos-finished",
        root,
        [
            (
                "user",
                "receipt totals are a cent off sometimes when a croissant discount applies. "
                "prices are integer cents everywhere in crumbpos, never floats. the code is in "
                "pos/pricing.py",
            ),
            ("assistant", "I'll read the discount code in pos/pricing.py."),
            (
                "tool",
                (
                    "Read",
                    {"file_path": f"{root}/pos/pricing.py"},
                    "31 def apply_discount(line, pct):\n"
                    "32     return int(line.total_cents * (1 - pct / 100))",
                ),
            ),
            (
                "assistant",
                "The discount multiplies by a float and truncates. I'll wrap it in round() so "
                "the half cents go up.",
            ),
            (
                "user",
                "no, not round() on a float. discounts are computed with Decimal and "
                "ROUND_HALF_EVEN, the tax office checks receipts that way",
            ),
            ("assistant", "Understood: Decimal arithmetic with ROUND_HALF_EVEN for discounts."),
            (
                "tool",
                (
                    "Edit",
                    {
                        "file_path": f"{root}/pos/pricing.py",
                        "old_string": "    return int(line.total_cents * (1 - pct / 100))\n",
                        "new_string": "    off = (Decimal(line.total_cents) * Decimal(pct) / 100)"
                        ".quantize(Decimal(1), rounding=ROUND_HALF_EVEN)\n"
                        "    return line.total_cents - int(off)\n",
                    },
                    _EDITED,
                ),
            ),
            ("user", "also show me the diff before you commit, just this once"),
            (
                "tool",
                (
                    "Bash",
                    {"command": "git diff --stat && pytest tests/pricing -q"},
                    " pos/pricing.py | 4 +++-\n 1 file changed, 3 insertions(+), 1 deletion(-)\n"
                    "............                                   [100%]\n12 passed in 0.41s",
                ),
            ),
            (
                "assistant",
                "Here is the diff: pos/pricing.py changes the discount line only. All 12 pricing "
                "tests pass. Shall I commit?",
            ),
            ("user", "yes commit"),
            (
                "tool",
                (
                    "Bash",
                    {"command": "git commit -am 'pricing: exact discounts with Decimal'"},
                    "[main 4f1c2aa] pricing: exact discounts with Decimal\n 1 file changed",
                ),
            ),
            (
                "assistant",
                "Committed 4f1c2aa: discounts use Decimal with ROUND_HALF_EVEN and the receipt "
                "totals match the till report now.",
            ),
            ("user", "great, thats it for the croissants"),
        ],
    )

    root = "/home/toma/hs/strictify-plugin"
    build.claude_code(
        "cc-ghc-plugin-changed-stopped",
        root,
        [
            (
                "user",
                "strictify should add bang patterns to top-level and where bindings in Core. we "
                "build against GHC 9.6 and 9.8, the CI matrix has both. the plugin must not "
                "depend on ghc-lib-parser",
            ),
            ("user", "format with ormolu before each commit"),
            ("assistant", "I'll look at the plugin entry point and the Core pass."),
            (
                "tool",
                (
                    "Read",
                    {"file_path": f"{root}/src/Strictify/Plugin.hs"},
                    "12 plugin :: Plugin\n13 plugin = defaultPlugin { installCoreToDos = install }",
                ),
            ),
            (
                "ask",
                (
                    "Which framework should the golden tests of the rewritten Core use?",
                    "tasty-golden. golden files live in test/golden/, one per module",
                ),
            ),
            (
                "tool",
                (
                    "Edit",
                    {
                        "file_path": f"{root}/src/Strictify/Pass.hs",
                        "old_string": "strictifyBind b = b\n",
                        "new_string": "strictifyBind (NonRec v e) = NonRec (markStrict v) e\n"
                        "strictifyBind b = b\n",
                    },
                    _EDITED,
                ),
            ),
            (
                "user",
                "actually switch the formatter to fourmolu, ormolu fights with our CPP blocks "
                "for the 9.6/9.8 differences",
            ),
            (
                "tool",
                (
                    "Bash",
                    {"command": "fourmolu -i src && cabal test"},
                    "Test suite golden: RUNNING...\nAll 14 tests passed (0.88s)",
                ),
            ),
            (
                "assistant",
                "Top-level bindings get bang patterns now and the 14 golden tests pass. Where "
                "bindings are not rewritten yet: the pass does not descend into Let inside "
                "a binding's body.",
            ),
            ("user", "ok stop here, battery almost dead. where bindings next time"),
        ],
    )

    root = "/data/lab/hamid/varcall-nf"
    build.claude_code(
        "cc-nextflow-log-secret-finished",
        root,
        [
            (
                "user",
                "the reference genome is GRCh38 for everything in this repo, no hg19 anywhere. "
                "the run on the cluster died, here:\n"
                "```\nN E X T F L O W  ~  version 24.04.2\n"
                "ERROR ~ Error executing process > 'BWA_MEM (S12)'\n"
                "Caused by:\n"
                "  Process requirement exceeds available memory -- req: 64 GB; avail: 32 GB\n"
                "Tip: always set process.memory for every label in nextflow.config\n```",
            ),
            ("assistant", "I'll read the BWA module and the config labels."),
            (
                "tool",
                (
                    "Read",
                    {"file_path": f"{root}/modules/bwa_mem.nf"},
                    "4 process BWA_MEM {\n5   label 'process_high'\n"
                    "18   bwa mem -t 16 ${ref} ${r1} ${r2} | samtools sort -@ 16 -o ${id}.bam",
                ),
            ),
            (
                "assistant",
                "The module asks for 64 GB under process_high. I'll lower the label and keep "
                "samtools sort at -@ 16 threads.",
            ),
            (
                "user",
                "dont hardcode thread counts in modules, pass ${task.cpus}. the cluster decides "
                "cpus per label",
            ),
            (
                "tool",
                (
                    "Edit",
                    {
                        "file_path": f"{root}/modules/bwa_mem.nf",
                        "old_string": "bwa mem -t 16",
                        "new_string": "bwa mem -t ${task.cpus}",
                    },
                    _EDITED,
                ),
            ),
            (
                "user",
                "for the upload step the bucket key is AKIAZ7Q4HV2MPL3XK9TD and secret "
                "wJr8Hq2LmN5vB9xZ0cT4yK7pQ1sD6fG3hJ8kL2mN",
            ),
            (
                "assistant",
                "I won't write the key into the repo; the upload step reads AWS_ACCESS_KEY_ID "
                "and AWS_SECRET_ACCESS_KEY from the environment.",
            ),
            (
                "tool",
                (
                    "Bash",
                    {"command": "nextflow run main.nf -profile test -resume"},
                    "[a1/77c2e0] BWA_MEM (S12)  [100%] 1 of 1 ✔\nCompleted at: 04-Mar-2026\n"
                    "Succeeded   : 6",
                ),
            ),
            (
                "assistant",
                "The test profile run succeeds: BWA_MEM uses ${task.cpus} and fits the label's "
                "memory. Committed as 'bwa: cpus from task'.",
            ),
            ("user", "perfect thx, all done"),
        ],
    )

    root = "/home/olu/ex/parley"
    build.claude_code(
        "cc-phoenix-refused-claim-stopped",
        root,
        [
            (
                "user",
                "presence in the room channel is flaky, users show up twice after a reconnect. "
                "lib/parley_web/channels/room_channel.ex. we are on elixir 1.16 and OTP 26, "
                "nothing that needs newer",
            ),
            ("assistant", "I'll reset the dev database first so the rooms are in a clean state."),
            (
                "reject",
                (
                    "Bash",
                    {"command": "mix ecto.reset"},
                    "no! that drops the dev db with my seeded rooms. never run ecto.reset or "
                    "ecto.drop in this repo",
                ),
            ),
            (
                "assistant",
                "Understood. Phoenix.Presence requires a Redis adapter to work across nodes, so "
                "I'll add :redix to mix.exs.",
            ),
            (
                "user",
                "thats wrong, Presence replicates over Phoenix.PubSub with pg, no redis needed. "
                "Do not add redis to parley",
            ),
            ("user", "and run only the channel tests this time"),
            (
                "tool",
                (
                    "Edit",
                    {
                        "file_path": f"{root}/lib/parley_web/channels/room_channel.ex",
                        "old_string": "    {:ok, _} = Presence.track(socket, user_id, %{})\n",
                        "new_string": "    send(self(), :after_join)\n",
                    },
                    _EDITED,
                ),
            ),
            (
                "tool",
                (
                    "Bash",
                    {"command": "mix test test/parley_web/channels"},
                    "..F\n  1) test rejoin after disconnect keeps one presence (RoomChannelTest)\n"
                    "     Assertion with == failed\n3 tests, 1 failure",
                ),
            ),
            (
                "assistant",
                "Tracking moved to handle_info(:after_join). The rejoin test still fails: the "
                "old presence is listed until the socket times out.",
            ),
            ("user", "leave the rejoin test, i look at it monday"),
        ],
    )


def _codex() -> None:
    root = "/srv/www/kowalczyk/wp-content/plugins/tidy-menus"
    build.codex(
        "codex-wp-plugin-oneoff-finished",
        root,
        [
            (
                "user",
                "add a walker that marks the current ancestor in the primary menu. the plugin "
                "supports PHP 7.4 and up, so no match expressions, no enums, no readonly "
                "properties. every visible string goes through esc_html__ with the text domain "
                "tidy-menus",
            ),
            (
                "assistant",
                "Should the walker apply to the footer menu as well, or only the primary location?",
            ),
            ("user", "only primary for now"),
            (
                "tool",
                (
                    "apply_patch",
                    {
                        "input": "*** Begin Patch\n*** Add File: src/AncestorWalker.php\n"
                        "*** End Patch"
                    },
                    _PATCHED.format("src/AncestorWalker.php"),
                ),
            ),
            (
                "tool",
                (
                    "exec_command",
                    {"cmd": "composer run phpcs"},
                    "FILE: src/AncestorWalker.php\n"
                    " 42 | ERROR   | Processing form data without nonce verification.\n"
                    " 57 | WARNING | All output should be run through an escaping function\n"
                    "FOUND 1 ERROR AND 1 WARNING AFFECTING 2 LINES",
                ),
            ),
            ("user", "dont bump the plugin version this time, i do it with the release"),
            (
                "tool",
                (
                    "apply_patch",
                    {
                        "input": "*** Begin Patch\n*** Update File: src/AncestorWalker.php\n"
                        "*** End Patch"
                    },
                    _PATCHED.format("src/AncestorWalker.php"),
                ),
            ),
            (
                "tool",
                (
                    "exec_command",
                    {"cmd": "composer run phpcs && vendor/bin/phpunit"},
                    "No violations found.\nOK (9 tests, 21 assertions)",
                ),
            ),
            (
                "assistant",
                "The walker adds current-menu-ancestor on the primary location, phpcs is clean "
                "and the 9 tests pass. I left the plugin version unchanged.",
            ),
            ("user", "perfect, merged it"),
        ],
    )

    root = "/home/rein/zig/soilnode"
    build.codex(
        "codex-zig-interval-changed-stopped",
        root,
        [
            (
                "user",
                "soilnode reads the moisture sensor over i2c on an rp2040. we target zig 0.13.0 "
                "exactly, microzig is pinned in build.zig.zon. the sensor loop never allocates, "
                "hand a FixedBufferAllocator to any std api that wants one",
            ),
            ("user", "sample every 500 ms"),
            (
                "tool",
                (
                    "exec_command",
                    {"cmd": "sed -n 1,40p src/sensor.zig"},
                    "const interval_ms = 100;\npub fn loop() void {\n    while (true) {",
                ),
            ),
            (
                "tool",
                (
                    "apply_patch",
                    {"input": "*** Begin Patch\n*** Update File: src/sensor.zig\n*** End Patch"},
                    _PATCHED.format("src/sensor.zig"),
                ),
            ),
            (
                "user",
                "pls not touch the linker script memmap.ld, is from vendor, we not own it",
            ),
            (
                "user",
                "make the interval 2000 ms instead, 500 empties the battery in one week",
            ),
            (
                "tool",
                (
                    "exec_command",
                    {"cmd": "zig build -Doptimize=ReleaseSmall"},
                    "",
                ),
            ),
            (
                "assistant",
                "The loop samples every 2000 ms and uses a FixedBufferAllocator for the "
                "formatting. The retry when the sensor NACKs on i2c is not written yet; a NACK "
                "now ends the loop.",
            ),
            ("user", "ok, we do i2c retry tomorow"),
        ],
    )

    root = "/Users/priya/dev/Tallyho"
    build.codex(
        "codex-swift-claim-refused-finished",
        root,
        [
            (
                "user",
                "the scoreboard screen freezes when a new round starts. deployment target is "
                "iOS 16. SwiftUI only, no UIKit views except the camera picker wrapper",
            ),
            (
                "assistant",
                "Apple's guidance says @StateObject must always be used instead of "
                "@ObservedObject, so I'll convert all of them in the Views folder.",
            ),
            (
                "user",
                "no, thats not what it says. a view that gets its model passed in keeps "
                "@ObservedObject, only the view that creates the model uses @StateObject",
            ),
            (
                "reject",
                (
                    "exec_command",
                    {"cmd": "pod install"},
                    "we dropped cocoapods last year, dependencies are swift package manager only. "
                    "dont bring a Podfile back",
                ),
            ),
            (
                "tool",
                (
                    "apply_patch",
                    {
                        "input": "*** Begin Patch\n"
                        "*** Update File: Tallyho/Views/Scoreboard.swift\n"
                        "*** End Patch"
                    },
                    _PATCHED.format("Tallyho/Views/Scoreboard.swift"),
                ),
            ),
            (
                "tool",
                (
                    "exec_command",
                    {"cmd": "xcodebuild test -scheme Tallyho -destination 'name=iPhone 15'"},
                    "Test Suite 'All tests' passed.\n\t Executed 31 tests, with 0 failures\n"
                    "** TEST SUCCEEDED **",
                ),
            ),
            (
                "assistant",
                "The scoreboard model is now created once with @StateObject in RoundView and "
                "passed down; the freeze is gone and the 31 tests pass.",
            ),
            ("user", "works on my phone too. done, thanks"),
        ],
    )

    root = "/home/achterberg/r/grazing-dash"
    build.codex(
        "codex-shiny-secret-answer-stopped",
        root,
        [
            (
                "user",
                "add a paddock filter to the grazing dashboard. we use renv, new packages go in "
                "with renv::install and then renv::snapshot. plots are plotly not base "
                "graphics, the farmers want the hover values",
            ),
            (
                "user",
                "db for testing: postgres://grazer:Tm4vqR9zx2Lp@10.22.4.7:5432/pasture",
            ),
            (
                "assistant",
                "I'll read the connection from the PASTURE_DB_URL environment variable instead "
                "of the code. Which paddock should the filter select by default?",
            ),
            ("user", "north-7, for the demo on thursday"),
            (
                "tool",
                (
                    "apply_patch",
                    {"input": "*** Begin Patch\n*** Add File: R/mod_filter.R\n*** End Patch"},
                    _PATCHED.format("R/mod_filter.R"),
                ),
            ),
            (
                "tool",
                (
                    "exec_command",
                    {"cmd": "Rscript -e 'testthat::test_dir(\"tests/testthat\")'"},
                    "══ Testing mod_filter ══\n[ FAIL 0 | WARN 1 | SKIP 0 | PASS 7 ]\n"
                    "Warning: package 'sf' was built under R version 4.3.3",
                ),
            ),
            (
                "assistant",
                "The paddock filter module is in R/mod_filter.R and wired into the server, 7 "
                "tests pass. The rainfall overlay on the paddock map is not started.",
            ),
            ("user", "enough for today, rainfall overlay next"),
        ],
    )


def _gemini() -> None:
    build.gemini(
        "gemini-unity-folder-changed-log",
        "/home/kasia/unity/mossbound",
        [
            (
                "user",
                "the player falls through moving platforms. we're on Unity 2022.3 LTS with URP. "
                "physics code runs in FixedUpdate, input is read in Update",
            ),
            ("user", "put new scripts under Assets/Scripts/Gameplay"),
            (
                "user",
                "console shows this:\n"
                "NullReferenceException: Object reference not set to an instance of an object\n"
                "PlayerMotor.FixedUpdate () (at Assets/Scripts/PlayerMotor.cs:58)\n"
                "Hint: Never call GetComponent inside FixedUpdate; cache it in Awake.",
            ),
            (
                "tool",
                (
                    "read_file",
                    {"absolute_path": "/home/kasia/unity/mossbound/Assets/Scripts/PlayerMotor.cs"},
                    "58        var platform = hit.collider.GetComponent<MovingPlatform>();",
                ),
            ),
            (
                "user",
                "wait, not Assets/Scripts, that folder belongs to the asset store pack. our "
                "scripts go in Assets/_Project/Scripts",
            ),
            (
                "tool",
                (
                    "write_file",
                    {
                        "file_path": "/home/kasia/unity/mossbound/Assets/_Project/Scripts/"
                        "PlatformRider.cs",
                        "content": "public class PlatformRider : MonoBehaviour { }",
                    },
                    "Successfully created and wrote to new file.",
                ),
            ),
            (
                "assistant",
                "PlatformRider in Assets/_Project/Scripts parents the player to the platform "
                "while grounded; the null reference is fixed and the player stays on the lift "
                "in the test scene.",
            ),
            ("user", "tested in play mode, it works. thats all"),
        ],
    )

    build.gemini(
        "gemini-ansible-refused-stopped",
        "/home/dmitri/infra/ansible-hopfield",
        [
            (
                "user",
                "migrate the roles to fully qualified module names. every role has molecule "
                "tests and has to pass ansible-lint with the production profile. inventories/"
                "prod is read only for you, you only touch inventories/staging",
            ),
            (
                "tool",
                (
                    "run_shell_command",
                    {"command": "ansible-lint --profile production roles/nginx"},
                    "WARNING  Listing 3 violation(s) that are fatal\n"
                    "fqcn[action-core]: Use FQCN for builtin module actions (copy).\n"
                    "roles/nginx/tasks/main.yml:12 Task/Handler: Always use "
                    "become_user with become",
                ),
            ),
            (
                "user",
                "use ansible.builtin. fqcn evrywhere, no short module names. Do not use the "
                "shell module when a builtin module exists",
            ),
            (
                "reject",
                (
                    "run_shell_command",
                    {"command": "ansible-playbook -i inventories/prod site.yml --check"},
                    "not even --check against prod, it still opens ssh to 40 hosts and pages "
                    "on-call. staging only",
                ),
            ),
            (
                "tool",
                (
                    "run_shell_command",
                    {"command": "cd roles/nginx && molecule test"},
                    "INFO     Verifier completed successfully.\nINFO     Pruning extra files",
                ),
            ),
            (
                "assistant",
                "The nginx role uses ansible.builtin names and its molecule test passes. The "
                "postgres role still uses short module names and is not migrated.",
            ),
            ("user", "stop here, postgres role another day"),
        ],
    )

    unseen4_build.gemini_jsonl(
        "gemini-wpf-answer-finished",
        "/home/fenna/src/Ledgerly",
        [
            (
                "user",
                "the invoice list shows wrong totals after editing a line. Ledgerly is .NET 8, "
                "WPF with CommunityToolkit.Mvvm. no logic in code-behind, everything goes "
                "through the viewmodels. Don't add NuGet packages without asking me first",
            ),
            (
                "assistant",
                "Should line amounts be stored as decimal or double in the InvoiceLine model?",
            ),
            ("user", "decimal. always decimal for money in this app"),
            (
                "assistant",
                'I\'ll switch InvoiceLine.Amount to decimal and format totals with ToString("C").',
            ),
            (
                "user",
                'no ToString("C") - users have mixed locales. amounts display with the '
                "invariant culture and the ISO currency code after, like 1,234.50 EUR",
            ),
            ("user", "skip the installer project build this time, it takes forever"),
            (
                "tool",
                (
                    "run_shell_command",
                    {"command": "dotnet test Ledgerly.Tests"},
                    "Passed!  - Failed: 0, Passed: 48, Skipped: 0, Total: 48",
                ),
            ),
            (
                "assistant",
                "InvoiceLine.Amount is decimal, the total is recomputed in the view model on "
                "every line change, and amounts show as 1,234.50 EUR. All 48 tests pass.",
            ),
            ("user", "checked it, totals are right now. done"),
        ],
    )

    unseen4_build.gemini_jsonl(
        "gemini-julia-oneoff-claim-stopped",
        "/home/lindqvist/jl/StiffSolve.jl",
        [
            (
                "user",
                "the Rosenbrock23 step allocates too much. StiffSolve supports julia 1.10 LTS "
                "and later. no type piracy, and every exported function has a docstring with "
                "a jldoctest",
            ),
            ("user", "for the benchmark now use abstol 1e-8, only for this comparison"),
            (
                "tool",
                (
                    "run_shell_command",
                    {"command": "julia --project bench/rosenbrock.jl"},
                    "  412.331 μs (1822 allocations: 96.41 KiB)",
                ),
            ),
            (
                "assistant",
                "Allocations in the inner loop are unavoidable because the Jacobian changes "
                "every step, so I'll accept them and tune the tolerance instead.",
            ),
            (
                "user",
                "not true. preallocate the jacobian cache in the integrator struct, the inner "
                "loop has to be allocation-free",
            ),
            (
                "tool",
                (
                    "replace",
                    {
                        "file_path": "/home/lindqvist/jl/StiffSolve.jl/src/rosenbrock.jl",
                        "old_string": "J = jacobian(f, u, p, t)",
                        "new_string": "jacobian!(cache.J, f, u, p, t)",
                    },
                    "Successfully modified file.",
                ),
            ),
            (
                "assistant",
                "The step now fills cache.J in place. The adaptive step controller still "
                "allocates two arrays per step; that part is not done.",
            ),
            ("user", "leave the controller for next week"),
        ],
    )


def sessions() -> None:
    """Every session of the seventh unseen set (the text is invented for this set)."""
    _claude_code()
    _codex()
    _gemini()


if __name__ == "__main__":
    sessions()
