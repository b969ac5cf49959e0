"""The builtin reviewer (`wardian.curator.review`) and the plan drafted from its findings
(`wardian.app.reviews.build_review_plan`): every finding kind, near misses left alone, the
order a plan takes findings in, and what the run's redactor skips."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from wardian.app.reviews import build_review_plan
from wardian.curator.review import review
from wardian.errors import ValidationError

WS = {"kind": "workspace", "path": "/repo"}


def _records(*specs: tuple[str, str] | tuple[str, str, dict[str, Any]]) -> list[dict[str, Any]]:
    """Snapshot records: (text, kind[, overrides]), revised one after another."""
    out = []
    for n, spec in enumerate(specs):
        text, kind = spec[0], spec[1]
        extra = spec[2] if len(spec) > 2 else {}
        out.append({"id": f"{n:08d}-0000-4000-8000-000000000000", "revision_id": f"rev-{n}",
                    "kind": kind, "scope": WS, "text": text,
                    "updated_at": f"2026-12-01T00:00:{n:02d}.000000Z", "updated_days": 1,
                    "flagged": None, "evidence_in_archive": True, **extra})
    return out


def _findings(records: list[dict[str, Any]], days: int = 14) -> list[dict[str, Any]]:
    return list(review({"records": records, "current_review_days": days})["findings"])


def _pairs(findings: list[dict[str, Any]]) -> set[tuple[str, str, str]]:
    """(kind, kept or subject, retired) by record number."""
    out = set()
    for f in findings:
        if f["kind"] == "duplicate":
            out |= {("duplicate", f["keep"][6:8], a[6:8]) for a in f["absorbed"]}
        elif f["kind"] == "contradiction":
            out.add(("contradiction", f["keep"][6:8], f["retire"][6:8]))
        else:
            out.add((f["kind"], f["memory_id"][6:8], ""))
    return out


def test_each_finding_kind() -> None:
    records = _records(
        ("Use npm for installs", "stable"),                          # 00
        ("Never use npm", "stable"),                                 # 01 contradicts 00
        ("Use tabs, not spaces", "stable"),                          # 02
        ("Use spaces, not tabs", "stable"),                          # 03 contradicts 02
        ("Indent with 4 spaces in Python files", "stable"),          # 04
        ("Indent with 2 spaces in Python files", "stable"),          # 05 another value
        ("Run the tests before pushing", "stable"),                  # 06
        ("Always run the tests before pushing", "stable"),           # 07 restates 06
        ("Run the tests before you push", "stable"),                 # 08 restates 06 too
        ("The billing migration is half done", "current", {"updated_days": 30}),   # 09
        ("The docs move waits for review", "current", {"updated_days": 13}),       # 10
        ("Keep the API docs in docs/api", "stable", {"evidence_in_archive": False}),  # 11
        ("<withheld: flagged record>", "stable", {"flagged": "secret_detected: x"}),  # 12
        ("Deploy from CI only", "stable", {"evidence_in_archive": None}),          # 13
    )
    found = _pairs(_findings(records))
    assert found == {
        ("contradiction", "01", "00"), ("contradiction", "03", "02"),
        ("contradiction", "05", "04"),
        ("duplicate", "06", "07"), ("duplicate", "06", "08"),
        ("stale_checkpoint", "09", ""), ("missing_evidence", "11", ""), ("flagged", "12", ""),
    }


@pytest.mark.parametrize(("a", "b"), [
    ("Run ruff before committing", "Run cargo fmt before committing"),
    ("Never rebase shared branches", "Always rebase your own feature branches"),
    ("Run the tests before pushing", "Run the type checker before pushing"),
    ("Do not commit to main", "Do not commit generated files"),
    ("Use pnpm for installs", "Use ruff for linting"),
])
def test_near_misses_stay_two_records(a: str, b: str) -> None:
    assert _findings(_records((a, "stable"), (b, "stable"))) == []


def test_only_records_that_hold_together_are_compared() -> None:
    other = {"scope": {"kind": "workspace", "path": "/other"}}
    # another workspace's convention is no contradiction; a checkpoint is no rule
    assert _findings(_records(("Use npm for installs", "stable"),
                              ("Never use npm", "stable", other))) == []
    assert _findings(_records(("Run the tests before pushing", "stable"),
                              ("Run the tests before pushing", "current"))) == []
    # an agent-scoped record holds in every workspace
    agent = {"scope": {"kind": "agent"}}
    assert _pairs(_findings(_records(("Use npm for installs", "stable"),
                                     ("Never use npm", "stable", agent)))) == {
        ("contradiction", "01", "00")}


def test_the_answer_is_deterministic() -> None:
    records = _records(("Run the tests before pushing", "stable"),
                       ("Always run the tests before pushing", "stable"),
                       ("Use npm for installs", "stable"), ("Never use npm", "stable"))
    assert _findings(records) == _findings(list(records))


def _snapshot(records: list[dict[str, Any]]) -> dict[str, Any]:
    return {"records": records, "taken_at": "2026-12-07T00:00:00.000000Z"}


def test_the_plan_takes_findings_in_order_and_each_record_once() -> None:
    records = _records(("A is done", "current"), ("B holds", "stable"), ("C holds", "stable"))
    a, b, c = (r["id"] for r in records)
    answer = {"findings": [
        {"kind": "duplicate", "keep": b[:8], "absorbed": [a[:8], c[:8]], "reason": "same"},
        {"kind": "stale_checkpoint", "memory_id": a, "reason": "old"},
        {"kind": "contradiction", "keep": "ffffffff", "retire": c, "reason": "no keep"},
    ]}
    built = build_review_plan(run_id="r", agent_id="agent-1", answer=answer,
                              snapshot=_snapshot(records))
    ops = built["plan"]["operations"]
    assert [(op["op"], op["memory_id"]) for op in ops] == [("retire", a), ("retire_into", c)]
    assert ops[1]["target_memory_id"] == b and ops[1]["expected_revision_id"] == "rev-2"
    assert built["counts"] == {"flagged": 0, "stale_checkpoint": 1, "missing_evidence": 0,
                               "contradiction": 0, "duplicate": 1}
    assert [d["kind"] for d in built["dropped"]] == ["contradiction"]
    assert built["plan"]["idempotency_key"] == "review:r"


def test_a_plan_holds_at_most_100_operations() -> None:
    records = _records(*[(f"Checkpoint {n} is open", "current") for n in range(120)])
    answer = {"findings": [{"kind": "stale_checkpoint", "memory_id": r["id"], "reason": "old"}
                           for r in records]}
    built = build_review_plan(run_id="r", agent_id="a", answer=answer,
                              snapshot=_snapshot(records))
    assert len(built["plan"]["operations"]) == 100 and built["left"] == 20


def test_a_bad_answer_is_a_validation_error() -> None:
    with pytest.raises(ValidationError) as caught:
        build_review_plan(run_id="r", agent_id="a", snapshot=_snapshot([]),
                          answer={"findings": [{"kind": "merge", "memory_id": "x" * 8}]})
    assert caught.value.path is not None and caught.value.path.startswith("review.findings")
    assert build_review_plan(run_id="r", agent_id="a", answer=None,
                             snapshot=_snapshot([]))["plan"] is None


def test_the_redactor_skips_only_what_the_scanner_never_flags() -> None:
    from wardian.engine.executor import Redactor
    from wardian.memory.secret_scan import redact

    plain = [str(uuid.uuid4()) for _ in range(200)]
    plain += [f"2026-12-0{n % 9 + 1}T0{n % 10}:1{n % 6}:2{n % 10}.{n:06d}Z" for n in range(200)]
    assert all(redact(value)[0] == value for value in plain)
    redactor = Redactor([])
    secret = "the password is Hunter2-Zebra!"
    doc = {"ids": plain, "text": secret, "again": [secret], "n": 3, "none": None}
    scrubbed = redactor.scrub(doc)
    assert scrubbed["ids"] == plain and scrubbed["n"] == 3 and scrubbed["none"] is None
    assert scrubbed["text"] == redact(secret)[0] != secret
    assert scrubbed["again"] == [scrubbed["text"]]


def test_the_builtin_provider_answers_the_review_schema_with_its_one_model() -> None:
    from wardian.memory.review import review_output_schema
    from wardian.providers.base import ProviderRequest
    from wardian.providers.builtin.adapter import BuiltinAdapter
    from wardian.providers.errors import ModelUnavailable

    records = _records(("Use npm for installs", "stable"), ("Never use npm", "stable"))
    request = ProviderRequest(provider="builtin", model="curator-rules",
                              output_schema=review_output_schema(),
                              output_ref="wardian:memory-review",
                              payload={"records": records, "current_review_days": 14})
    result = BuiltinAdapter().run(request)
    assert result.model == "curator-rules" and result.output is not None
    assert [f["kind"] for f in result.output["findings"]] == ["contradiction"]
    # a curator request still gets a curator batch
    curator = BuiltinAdapter().run(ProviderRequest(
        provider="builtin", payload={}, output_ref="wardian:curator-batch"))
    assert curator.output is not None and "operations" in curator.output
    with pytest.raises(ModelUnavailable):  # no fallback to the rules for another model
        BuiltinAdapter().run(request.model_copy(update={"model": "gpt-5.2-codex"}))


def test_a_family_of_siblings_is_not_a_chain_of_contradictions() -> None:
    """One frame filled with many values names many things (a record per shard): none
    retires another, and the answer stays within the format's bound."""
    from wardian.memory.review import check_review_answer

    records = _records(*[(f"Resizing volume {n} of the archive cluster is half done",
                          "current", {"updated_days": 30}) for n in range(60)])
    findings = _findings(records)
    check_review_answer({"findings": findings})
    assert {f["kind"] for f in findings} == {"stale_checkpoint"} and len(findings) == 60
    pools = _records(*[(f"Keep the retry limit for queue {n} at {n + 3} attempts", "stable")
                       for n in range(12)])
    assert _findings(pools) == []


def test_a_short_chain_of_values_keeps_the_newest_and_retires_each_older_once() -> None:
    records = _records(("Install packages with npm", "stable"),       # 00
                       ("Install packages with yarn", "stable"),      # 01
                       ("Install packages with pnpm", "stable"))      # 02 newest
    pairs = _pairs(_findings(records))
    assert pairs == {("contradiction", "02", "00"), ("contradiction", "02", "01")}


def test_the_answer_never_holds_more_findings_than_its_format_allows() -> None:
    from wardian.memory.review import MAX_FINDINGS, check_review_answer

    records = _records(*[(f"Set-aside note {n}", "stable", {"flagged": "secret_detected"})
                         for n in range(MAX_FINDINGS + 50)])
    findings = _findings(records)
    assert len(findings) == MAX_FINDINGS
    check_review_answer({"findings": findings})


def test_a_contradiction_between_records_revised_together_says_the_times_do_not_tell() -> None:
    """Records saved by one import share their revision time: which one holds is not known
    from the times, and the reason must not call either "later"."""
    records = _records(("Use npm for installs", "stable"), ("Never use npm", "stable"))
    for r in records:
        r["updated_at"] = "2026-12-01T00:00:00.000000Z"
    (finding,) = _findings(records)
    assert finding["kind"] == "contradiction"
    assert "later" not in finding["reason"]
    assert "revised at the same time: check which one holds" in finding["reason"]
    # one revised after the other: that one is "the later record"
    (finding,) = _findings(_records(("Use npm for installs", "stable"),
                                    ("Never use npm", "stable")))
    assert finding["reason"].startswith("contradicted by the later record 00000001")
