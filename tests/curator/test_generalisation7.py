"""Kinds of statement the seventh unseen set (tests/curator/unseen7/) showed the curator
getting wrong.

As in test_generalisation6.py, each test is a kind of statement with sentences made up for
the test, neither from the corpus nor from any held-out set (which stay measurements).
"""

from __future__ import annotations

from typing import Any

import pytest

from wardian.curator import curate


def _ops(texts: list[str], records: list[dict[str, Any]] | None = None,
         done: str = "Done: switched over, and all 12 tests pass.") -> list[dict[str, Any]]:
    """Operations for a session whose user says each of `texts` in turn, the agent answering
    each one (the last answer is `done`)."""
    messages: list[dict[str, Any]] = []
    for k, text in enumerate(texts):
        messages.append({"seq": 2 * k, "role": "user", "kind": "text", "meta": {}, "text": text})
        reply = done if k == len(texts) - 1 else "Understood, I'll keep to that."
        messages.append({"seq": 2 * k + 1, "role": "assistant", "kind": "text", "meta": {},
                         "text": reply})
    payload = {"messages": messages, "records": records or [], "max_changes": 10}
    return list(curate(payload)["operations"])


def _texts(texts: list[str], records: list[dict[str, Any]] | None = None) -> list[str]:
    return [op["text"] for op in _ops(texts, records) if op["op"] in ("save", "update")]


# --- 1. a value the user changes later in the session: only the later one is kept ---------

SWITCHED = [
    # (the rule, the later message changing its value, old value, new value)
    ("Lint the shaders with glslang before every commit.",
     "actually switch the linter to shaderc, glslang chokes on our include guards",
     "glslang", "shaderc"),
    ("Always give the geocoder requests a timeout of 90 s.",
     "make the timeout 45 s instead, 90 s blocks the worker pool",
     "90 s", "45 s"),
    ("Build the Haskell parts with cabal, never with nix.",
     "change that to stack, cabal keeps rebuilding the world",
     "cabal", "stack"),
    ("Poll the weather station every 30 seconds.",
     "poll it every 120 seconds instead, 30 drains the solar battery",
     "30 seconds", "120 seconds"),
    ("Render the dose charts with matplotlib from now on.",
     "use plotnine instead of matplotlib for the charts, the PDFs need the grammar",
     "matplotlib", "plotnine"),
]


@pytest.mark.parametrize(("first", "second", "old", "new"), SWITCHED)
def test_a_value_changed_later_in_the_session_keeps_only_the_new_one(
    first: str, second: str, old: str, new: str
) -> None:
    texts = _texts([first, second])
    assert not any(old in t and new not in t for t in texts), texts
    assert any(new in t for t in texts), texts


def test_the_new_value_updates_the_record_an_earlier_session_saved() -> None:
    record = {"id": "mem-0001", "revision_id": "rev-0001", "kind": "stable", "scope": "workspace",
              "text": "Format the Lua scripts with stylua before each commit."}
    ops = _ops(["switch the formatter to lua-format, stylua mangles our table literals"],
               [record])
    changed = [op for op in ops if op["op"] in ("save", "update")]
    assert [op["op"] for op in changed] == ["update"], ops
    assert changed[0]["memory_id"] == "mem-0001"
    assert "lua-format" in changed[0]["text"] and "stylua" not in changed[0]["text"].split(
        "(")[0], changed


NOT_SWITCHES = [
    # a switch of something no earlier rule named: a task, not a changed rule
    (["Format the SQL with sqlfluff before each commit.",
      "switch the CI image to debian-slim, alpine breaks the wheels"],
     "sqlfluff", "debian-slim"),
    # the number it changes is not the earlier rule's (another unit)
    (["Run the 12 smoke tests before each push.",
      "make the font 14 px instead, 12 is tiny on the kiosk"],
     "12 smoke tests", "14 px"),
    # the change is limited to a part the earlier rule does not name
    (["Always use mocks for the payment client in unit tests.",
      "use fakes instead of mocks in the e2e suite, the mocks hide the retries"],
     "mocks for the payment client", "fakes for the payment client"),
    # what changes is another thing than the earlier rule's
    (["Run the e2e suite on chrome before each release.",
      "switch the screenshot tests to firefox, chrome renders the fonts differently"],
     "e2e suite on chrome", "e2e suite on firefox"),
    # "from X to Y" in a task moves something, it changes no rule
    (["Always seed staging with the fixture dump before a demo.",
      "copy the dump from staging to prod, prod is empty"],
     "seed staging", "seed prod"),
    # a one-off change with nothing said before
    (["add an export button to the report page",
      "make it green instead, red reads as an error"],
     None, "green"),
]


@pytest.mark.parametrize(("texts", "kept", "never"), NOT_SWITCHES)
def test_a_change_of_something_else_is_no_new_value(texts: list[str], kept: str | None,
                                                     never: str) -> None:
    saved = _texts(texts)
    assert not any(never in t for t in saved), saved
    if kept is not None:
        assert any(kept in t for t in saved), saved


# --- 2. one statement, one record: a refusal's reason and rule, a request said again ------

def _refused(command: str, reason: str) -> list[str]:
    """Texts saved from a session where the user refuses the agent's `command` saying
    `reason`."""
    messages: list[dict[str, Any]] = [
        {"seq": 0, "role": "user", "kind": "text", "meta": {},
         "text": "the nightly import of the tide readings is failing, have a look"},
        {"seq": 1, "role": "assistant", "kind": "tool_call", "meta": {},
         "text": f"Bash({command})"},
        {"seq": 2, "role": "tool", "kind": "tool_rejection", "meta": {},
         "text": "The user doesn't want to proceed with this tool use. To tell you how to "
                 f"proceed, the user said:\n{reason}"},
        {"seq": 3, "role": "assistant", "kind": "text", "meta": {},
         "text": "Understood. The import works again: the parser skips the blank rows."},
    ]
    ops = curate({"messages": messages, "records": [], "max_changes": 10})["operations"]
    return [op["text"] for op in ops if op["op"] in ("save", "update")]


REFUSALS_WITH_RULE = [
    ("rake db:reset", "nope. that wipes the buoy calibration rows. never run db:reset here",
     "db:reset", "calibration"),
    ("kubectl delete pvc tide-cache",
     "stop! the cache volume holds a week of readings. Do not delete volumes in this cluster",
     "delete volumes", "week of readings"),
]


@pytest.mark.parametrize(("command", "reason", "rule", "why"), REFUSALS_WITH_RULE)
def test_a_refusal_giving_a_reason_and_a_rule_is_one_record(command: str, reason: str,
                                                             rule: str, why: str) -> None:
    texts = _refused(command, reason)
    assert len(texts) == 1, texts
    assert rule in texts[0] and why in texts[0], texts


def test_a_refusal_with_two_rules_keeps_both() -> None:
    texts = _refused("git push --force origin trunk",
                     "Never force-push to trunk. Always open a pull request for tide changes.")
    assert any("force-push" in t for t in texts) and any("pull request" in t for t in texts)


def test_a_refusal_giving_only_a_reason_is_still_saved() -> None:
    texts = _refused("rm -rf data/raw", "no. data/raw is the only copy of the 2019 survey.")
    assert len(texts) == 1 and "2019 survey" in texts[0], texts


def test_a_request_repeated_about_a_main_part_is_one_record() -> None:
    # "main" here describes a part (the main menu), it is no branch name
    texts = _texts([
        "the export entry is not in the main menu like i asked so move it out of the "
        "settings drawer and check why the preview is blank",
        "export_csv entry should be a top-level menu item not in the settings drawer",
        "export_csv should have its own entry in the main menu.",
    ])
    assert sum("main menu" in t or "top-level" in t for t in texts) <= 2, texts
    texts = _texts([
        "export_csv should have its own entry in the main menu, not in the settings drawer.",
        "export_csv should sit in the main menu as its own entry, never in the drawer.",
    ])
    assert len(texts) == 1, texts


def test_a_branch_name_still_reads_as_a_branch() -> None:
    texts = _texts(["Always open the pull requests against main.",
                    "Always open the pull requests against develop."])
    assert texts == ["Always open the pull requests against develop."], texts


# --- 3. work the user stops with something left: a checkpoint of what is left -----------

def _stopped(report: str, last: str, after: list[dict[str, Any]] | None = None
             ) -> list[dict[str, Any]]:
    """Checkpoints saved from a session whose agent reports `report` and whose user then
    says `last` (then the agent's messages `after`)."""
    messages: list[dict[str, Any]] = [
        {"seq": 0, "role": "user", "kind": "text", "meta": {},
         "text": "port the tide report generator to the new charting module"},
        {"seq": 1, "role": "assistant", "kind": "tool_call", "meta": {},
         "text": "Bash(make test)"},
        {"seq": 2, "role": "tool", "kind": "tool_result", "meta": {}, "text": "ok"},
        {"seq": 3, "role": "assistant", "kind": "text", "meta": {}, "text": report},
        {"seq": 4, "role": "user", "kind": "text", "meta": {}, "text": last},
    ]
    for k, msg in enumerate(after or []):
        messages.append({"seq": 5 + k, "meta": {}, **msg})
    ops = curate({"messages": messages, "records": [], "max_changes": 10})["operations"]
    return [op for op in ops if op["op"] == "save" and op["kind"] == "current"]


STOPPED = [
    ("The importer reads the ledger rows and 9 tests pass. The currency conversion is not "
     "written yet.", "ok stop here, currency conversion tomorrow", "currency conversion"),
    ("The sprite atlas loads in the new renderer. The animation blending is not done.",
     "leave the blending for next week", "blending"),
    ("Signup works end to end. The password reset mail still fails with a 550 from the relay.",
     "enough for today, i look at the reset mail on friday", "reset mail"),
    ("Uploads go to the bucket now; the retry of dropped uploads is not implemented yet.",
     "we do the upload retry tomorow", "retry"),
]


@pytest.mark.parametrize(("report", "last", "topic"), STOPPED)
def test_work_stopped_with_a_part_left_is_a_checkpoint(report: str, last: str,
                                                       topic: str) -> None:
    current = _stopped(report, last)
    assert len(current) == 1, current
    assert topic in current[0]["text"].lower(), current
    assert current[0]["evidence"] == last


NOT_STOPPED = [
    # finished work and a goodbye
    ("All 14 tests pass and the generator draws every chart with the new module.",
     "great, see you tomorrow", None),
    # a new request, not a stop
    ("The nightly job is not scheduled yet.", "schedule it for 2 am and add a log line",
     [{"role": "assistant", "kind": "tool_call", "text": "Bash(crontab -l)"},
      {"role": "assistant", "kind": "text", "text": "Scheduled for 2 am; the log line is in."}]),
    # "tomorrow" inside a request the agent then carried out
    ("The banner is not resized yet.", "tomorrow we demo it, so make the banner smaller now",
     [{"role": "assistant", "kind": "tool_call", "text": "Edit(src/banner.css)"},
      {"role": "assistant", "kind": "text",
       "text": "The banner is 40% smaller; all 6 tests pass."}]),
    # a part left as the user asked is not open work
    ("The generator is ported; the old module is not removed yet, as you asked.",
     "good, stop here", None),
    # the user defers something the agent did not name as open
    ("The generator draws every chart with the new module and all tests pass.",
     "the colour palette we discuss next week", None),
]


@pytest.mark.parametrize(("report", "last", "after"), NOT_STOPPED)
def test_no_stopped_checkpoint_without_a_part_left(report: str, last: str,
                                                   after: list[dict[str, Any]] | None) -> None:
    assert not any("stopped" in op["text"].lower() for op in _stopped(report, last, after))


# --- 4. a correction of the agent's claim without "don't": "that's wrong, X" ---------------

def _after_claim(claim: str, reply: str) -> list[str]:
    """Texts saved from a session where the agent claims `claim` and the user replies."""
    messages: list[dict[str, Any]] = [
        {"seq": 0, "role": "user", "kind": "text", "meta": {},
         "text": "the event consumer drops messages after a broker restart, have a look"},
        {"seq": 1, "role": "assistant", "kind": "text", "meta": {}, "text": claim},
        {"seq": 2, "role": "user", "kind": "text", "meta": {}, "text": reply},
        {"seq": 3, "role": "assistant", "kind": "text", "meta": {},
         "text": "Understood. The consumer now commits offsets after processing; 8 tests pass."},
    ]
    ops = curate({"messages": messages, "records": [], "max_changes": 10})["operations"]
    return [op["text"] for op in ops if op["op"] in ("save", "update")]


CLAIM_CORRECTIONS = [
    ("Kafka needs ZooKeeper here, so I'll add a zookeeper service to the compose file.",
     "that's wrong, the cluster runs in KRaft mode and has no ZooKeeper at all", "KRaft"),
    ("Rounding each line with round() is fine for the invoice totals.",
     "not true. amounts are Decimal with banker's rounding, round() on floats drifts",
     "Decimal"),
    ("The consumer group id can be random per pod.",
     "no, that's not right: every pod shares the group id orders-consumer, offsets live there",
     "orders-consumer"),
    ("I'll move the consumer to the v3 client API.",
     "wrong, stay on the v2 client until the platform team migrates the brokers", "v2 client"),
]


@pytest.mark.parametrize(("claim", "reply", "rule"), CLAIM_CORRECTIONS)
def test_a_plain_correction_of_the_agent_is_saved(claim: str, reply: str, rule: str) -> None:
    texts = _after_claim(claim, reply)
    assert any(rule in t for t in texts), texts
    assert not any(t.lower().startswith(("that's wrong", "not true", "wrong", "no,"))
                   for t in texts), texts


NOT_CLAIM_CORRECTIONS = [
    "that's wrong, I ran it yesterday and it printed 42",
    "not true? let me check the broker logs",
    "no that's wrong. try again",
    "that's not right, just redo the chart for this run",
    "wrong file, open the other consumer",
    "not true, it compiles fine on my machine",
    "that's wrong. revert the last commit and start over",
]


@pytest.mark.parametrize("reply", NOT_CLAIM_CORRECTIONS)
def test_a_rejection_saying_no_rule_saves_nothing(reply: str) -> None:
    assert _after_claim("The consumer group id can be random per pod.", reply) == []


# --- 5. the platform said without a subject, or the tool the team works with --------------

PLATFORM = [
    ("targets Java 21, nothing older.", "Java 21"),
    ("Compiles against OpenSSL 3.0 on every runner.", "OpenSSL 3.0"),
    ("we deploy with kamal to both regions", "kamal"),
    ("We release with goreleaser from the tag pipeline.", "goreleaser"),
    ("we package with briefcase for all three desktops", "briefcase"),
]
NOT_PLATFORM = [
    "we deployed with nomad jobs last year",
    "should we deploy with nomad jobs?",
    "we build with it in the container",
    "support Java 17 in the parser too",
    "we test with the staging keys just this once",
    "we deploy with confidence now",
    "we publish with care, the docs site is public",
    "targets the 5 biggest customers first",
]


@pytest.mark.parametrize(("text", "value"), PLATFORM)
def test_a_platform_said_plainly_is_saved(text: str, value: str) -> None:
    texts = _texts([f"add a health endpoint to the relay. {text}"])
    assert any(value in t for t in texts), texts


@pytest.mark.parametrize("text", NOT_PLATFORM)
def test_a_platform_asked_about_past_or_one_off_is_not_saved(text: str) -> None:
    assert _texts([f"add a health endpoint to the relay. {text}"]) == []


def test_a_number_changed_later_is_kept_new_and_quoted_without_the_old_one() -> None:
    ops = _ops(["In the uploader, reject files larger than 20 MB. We ship with flatpak, the "
                "snap build is unmaintained.",
                "make the limit 50 MB instead, 20 is too tight for the scans"])
    saved = [op for op in ops if op["op"] == "save"]
    assert any("50 MB" in op["text"] for op in saved), saved
    assert not any("20 MB" in op["text"] + op["evidence"] for op in saved), saved
    assert any("flatpak" in op["text"] for op in saved), saved


# A number is tied to a rule by its unit only when the change names nothing else: a change
# that names its own setting ("the cache ttl", "the retry backoff") is not about a rule of
# another setting that happens to hold the same number.
OTHER_NUMBER_SETTING = [
    ("Always set the request timeout to 90 s in the client.",
     "make the cache ttl 45 s instead, 90 s is too long"),
    ("Always set the request timeout to 90 s in the client.",
     "the retry backoff should be 45 s instead of 90 s"),
    ("Always wait 60 s for the broker to come up before retrying.",
     "set the heartbeat to 15 s instead of 60 s, the dashboard lags"),
    ("Keep the thumbnails under 200 KB.",
     "make the upload chunk size 512 KB instead of 200 KB"),
]


@pytest.mark.parametrize(("rule", "change"), OTHER_NUMBER_SETTING)
def test_a_number_of_another_setting_does_not_rewrite_a_stored_rule(rule: str, change: str
                                                                    ) -> None:
    record = {"id": "mem-0001", "revision_id": "rev-0001", "kind": "stable",
              "scope": "workspace", "text": rule}
    ops = _ops([change], [record])
    assert not any(op["op"] in ("update", "retire") and op.get("memory_id") == "mem-0001"
                   for op in ops), ops


@pytest.mark.parametrize(("rule", "change"), OTHER_NUMBER_SETTING)
def test_a_number_of_another_setting_keeps_the_earlier_rule_of_the_session(rule: str,
                                                                          change: str) -> None:
    assert rule in _texts([rule])  # the rule alone is saved
    assert rule in _texts([rule, change])


def test_a_number_whose_change_names_only_a_general_setting_still_updates_the_rule() -> None:
    record = {"id": "mem-0001", "revision_id": "rev-0001", "kind": "stable",
              "scope": "workspace", "text": "Poll the payment queue every 5 s."}
    ops = _ops(["make the interval 30 s instead, 5 s floods the broker"], [record])
    changed = [op for op in ops if op["op"] in ("save", "update")]
    assert [op["op"] for op in changed] == ["update"], ops
    assert "30 s" in changed[0]["text"], changed
