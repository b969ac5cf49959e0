"""Property tests: whatever the conversation, the curator's answer is a valid batch whose
evidence is quoted verbatim, and an empty or assistant-only slice yields nothing."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from wardian.curator import curate
from wardian.memory.batch import CuratorBatch, curator_output_schema

_PHRASES = [
    "always",
    "never",
    "do not",
    "don't",
    "use pnpm",
    "not npm",
    "I choose",
    "we'll go with",
    "instead of",
    "make sure you",
    "by default",
    "should be",
    "still does not work",
    "i never said",
    "no, i want",
    "like i asked",
    "you have to",
    "before",
    "in all my projects",
    "remember this",
    "CLAUDE.md",
    "?",
    ".",
    ",",
    "\n",
    "  ",
    "`code`",
    "/Users/x/",
    "é",
    "🙂",
    "AKIAIOSFODNN7EXAMPLE",
    "Traceback (most recent call last):",
    "```",
    "# Heading",
    "fixed now",
    "it works",
    "the",
    "tests",
    "deploy",
    "render",
    "lint",
    "x" * 40,
]
_text = st.lists(st.one_of(st.sampled_from(_PHRASES), st.text(max_size=30)), max_size=25).map(
    " ".join
)
_kind = st.sampled_from(["text", "text", "text", "injected", "command", "interrupt", "queued"])
_role = st.sampled_from(["user", "user", "assistant", "tool"])


@st.composite
def _payload(draw: st.DrawFn) -> dict[str, Any]:
    n = draw(st.integers(min_value=0, max_value=12))
    messages = [
        {"seq": i, "role": draw(_role), "kind": draw(_kind), "text": draw(_text), "meta": {}}
        for i in range(n)
    ]
    records = [
        {
            "id": f"rec-{i:04d}",
            "revision_id": f"rev-{i}",
            "kind": draw(st.sampled_from(["stable", "current"])),
            "scope": {"kind": "workspace", "path": "/repo"},
            "text": draw(_text) or "x",
        }
        for i in range(draw(st.integers(min_value=0, max_value=3)))
    ]
    return {
        "messages": messages,
        "records": records,
        "max_changes": draw(st.integers(min_value=0, max_value=12)),
        "include_tool_output": False,
        "workspace": "/repo",
    }


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_payload())
def test_output_validates_and_evidence_is_verbatim(payload: dict[str, Any]) -> None:
    import jsonschema

    result = curate(payload)
    batch = CuratorBatch.model_validate(result)
    jsonschema.validate(result, curator_output_schema())
    assert len(batch.operations) <= payload["max_changes"]
    texts = [m["text"] for m in payload["messages"]]
    record_ids = {r["id"] for r in payload["records"]}
    for op in result["operations"]:
        assert any(op["evidence"] in t for t in texts)
        if op["op"] in ("update", "remove"):
            assert op["memory_id"] in record_ids
    assert curate(payload) == result  # deterministic


@settings(max_examples=80, deadline=None)
@given(st.lists(_text, max_size=10))
def test_assistant_only_or_empty_gives_nothing(texts: list[str]) -> None:
    messages = [
        {"seq": i, "role": "assistant", "kind": "text", "text": t, "meta": {}}
        for i, t in enumerate(texts)
    ]
    assert curate({"messages": messages, "records": [], "max_changes": 10}) == {"operations": []}
    assert curate({"messages": [], "records": []}) == {"operations": []}
