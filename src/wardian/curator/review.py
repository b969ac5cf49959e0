"""The builtin reviewer: an agent's whole memory read by the curator's own rules, no model.

`review(payload) -> dict` answers the ``reviewer`` role of the ``memory-review`` blueprint
for the builtin provider: a `wardian.memory.review.ReviewAnswer` whose findings say what a
maintenance plan should do. The payload is the ``memory.snapshot`` output as the blueprint
passes it: ``records`` (each with ``id``, ``kind``, ``scope``, ``text``, ``updated_at``,
``updated_days``, ``flagged``, ``evidence_in_archive``) and ``current_review_days``.

What it finds, each by the rule the curator applies when a session restates a record:

* *Contradictions* — two active records of one subject where one prefers what the other
  rejects (`contradiction.contradicts`: negation and word order count) or names another
  value of one exclusive class (`values.value_change`: npm → pnpm, 4 → 2 spaces). The
  record revised last is kept; the other is proposed for retirement. Two records revised
  at the same instant (saved by one import) are ordered by id, and the reason says that
  the times do not tell which one holds.
* *Duplicates* — a record that restates another (`dedup.is_duplicate` either way: similar,
  at most one new content word). Each group keeps the record most others restate (then the
  one revised last) and absorbs the ones that restate it.
* Two records naming different things of one frame (`values.distinct_subjects`: "Run ruff
  before committing" / "Run cargo fmt before committing") are neither.
* *Stale checkpoints* — ``current`` records not revised for ``current_review_days``.
* *Missing evidence* — records whose ``evidence_in_archive`` is false.
* *Flagged* records — set aside as holding a secret (their text never reaches here).

Only records that can hold together are compared: of one kind, in one workspace or with one
of them agent-scoped. A pair is compared when the two share one of their
`KEY_WORDS` rarest content words (rarest across this memory, and held by at most
`SHARED_WORDS` records): restatements share nearly all their words and contradictions
share their subject, so a large memory is read in a few dictionary passes instead of every
pair.

Deterministic: no clocks, no randomness; the same payload gives the same answer.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from wardian.curator.contradiction import contradicts
from wardian.curator.dedup import is_duplicate, normalise, similarity
from wardian.curator.values import distinct_subjects, value_change
from wardian.memory.review import MAX_FINDINGS

__all__ = ["COMPARE_SCORE", "KEY_WORDS", "review"]

KEY_WORDS = 3
"""How many of a record's rarest content words it is indexed under."""

SHARED_WORDS = 64
"""A word more records than this hold is no key (a frame word of many rules); a record
whose every word is that common is indexed under its rarest one alone."""

COMPARE_SCORE = 60.0
"""token_set_ratio (normalised texts) below which a pair is neither a repeat nor one
subject; the rules are not asked."""

_QUOTE_CHARS = 80


def _quote(text: str) -> str:
    one = " ".join(text.split())
    return one if len(one) <= _QUOTE_CHARS else one[: _QUOTE_CHARS - 1] + "…"


def _scope_key(record: Mapping[str, Any]) -> str | None:
    """None for an agent-scoped record, else its workspace path."""
    scope = record.get("scope")
    if isinstance(scope, Mapping):
        return None if scope.get("kind") == "agent" else str(scope.get("path") or "")
    return None if scope == "agent" else str(scope or "")


def _together(a: tuple[Any, str | None], b: tuple[Any, str | None]) -> bool:
    """Both apply in one place: one kind; one workspace, or either agent-scoped (each
    given as ``(kind, _scope_key)``)."""
    if a[0] != b[0]:
        return False
    return a[1] is None or b[1] is None or a[1] == b[1]


def _newer(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """`a` was revised after `b` (ties: the larger id, so the order is total)."""
    return (str(a.get("updated_at") or ""), str(a["id"])) > (
        str(b.get("updated_at") or ""), str(b["id"]))


def _candidate_pairs(norms: Sequence[str]) -> list[tuple[int, int]]:
    """Index pairs (i < j) sharing one of their `KEY_WORDS` rarest words, in order."""
    words = [sorted(set(n.split())) for n in norms]
    df: dict[str, int] = {}
    for ws in words:
        for w in ws:
            df[w] = df.get(w, 0) + 1
    postings: dict[str, list[int]] = {}
    for index, ws in enumerate(words):
        rarest = sorted(ws, key=lambda w: (df[w], w))
        keys = [w for w in rarest[:KEY_WORDS] if df[w] <= SHARED_WORDS] or rarest[:1]
        for w in keys:
            postings.setdefault(w, []).append(index)
    pairs: set[tuple[int, int]] = set()
    for members in postings.values():
        for k, i in enumerate(members):
            for j in members[k + 1:]:
                pairs.add((i, j))
    return sorted(pairs)


def review(payload: Mapping[str, Any]) -> dict[str, Any]:
    """The review of `payload`'s records (see the module docstring) as a JSON-ready
    ``{"findings": [...]}``: flagged, stale checkpoints, missing evidence, contradictions,
    duplicates, each in record order."""
    records = [r for r in payload.get("records") or [] if isinstance(r, Mapping)]
    try:
        review_days = int(payload.get("current_review_days") or 0)
    except (TypeError, ValueError):
        review_days = 0
    findings: list[dict[str, Any]] = []
    for r in records:
        if r.get("flagged"):
            findings.append({"kind": "flagged", "memory_id": r["id"],
                             "reason": f"set aside for review: {r['flagged']}"})
    for r in records:
        days = r.get("updated_days")
        if (not r.get("flagged") and r.get("kind") == "current" and review_days > 0
                and isinstance(days, int) and days >= review_days):
            findings.append({
                "kind": "stale_checkpoint", "memory_id": r["id"],
                "reason": f"current checkpoint not revised for {days} days "
                          f"(memory.current_review_days = {review_days})"})
    for r in records:
        if not r.get("flagged") and r.get("evidence_in_archive") is False:
            findings.append({
                "kind": "missing_evidence", "memory_id": r["id"],
                "reason": "its evidence no longer occurs in any of the agent's archives"})
    findings.extend(_pair_findings([r for r in records if not r.get("flagged")]))
    # the answer format holds at most MAX_FINDINGS; a plan takes far fewer of them
    return {"findings": findings[:MAX_FINDINGS]}


def _pair_findings(records: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Contradictions, then duplicate groups, of the active unflagged `records`."""
    texts = [str(r.get("text") or "") for r in records]
    norms = [normalise(t) for t in texts]
    places = [(r.get("kind"), _scope_key(r)) for r in records]
    contradictions: list[tuple[int, int]] = []  # (keep, retire)
    by_value: dict[int, set[int]] = {}  # pairs that differ only by a value
    duplicate_of: dict[int, set[int]] = {}
    for i, j in _candidate_pairs(norms):
        a, b = records[i], records[j]
        if not _together(places[i], places[j]) or similarity(norms[i], norms[j]) < COMPARE_SCORE:
            continue
        # the veto last: it is the costliest rule and matters only for a match
        negated = contradicts(texts[i], texts[j])
        valued = not negated and (value_change(texts[i], texts[j])
                                  or value_change(texts[j], texts[i]))
        contradiction = negated or valued
        duplicate = not contradiction and (is_duplicate(norms[i], norms[j])
                                           or is_duplicate(norms[j], norms[i]))
        if not (contradiction or duplicate) or distinct_subjects(texts[i], texts[j]):
            continue
        if contradiction:
            contradictions.append((i, j) if _newer(a, b) else (j, i))
            if valued:
                by_value.setdefault(i, set()).add(j)
                by_value.setdefault(j, set()).add(i)
        else:
            duplicate_of.setdefault(i, set()).add(j)
            duplicate_of.setdefault(j, set()).add(i)
    siblings = _sibling_families(by_value)
    kept: dict[int, int] = {}  # retire -> the newest record that contradicts it
    for keep, retire in contradictions:
        if keep in siblings and retire in siblings:
            continue
        if retire not in kept or _newer(records[keep], records[kept[retire]]):
            kept[retire] = keep
    out: list[dict[str, Any]] = []
    for retire, keep in sorted(kept.items(), key=lambda item: (item[1], item[0])):
        if keep in kept:
            continue  # its keeper is retired itself: left to the next review
        reason = (f"contradicted by the later record {records[keep]['id'][:8]} "
                  f"({_quote(texts[keep])!r})")
        if str(records[keep].get("updated_at") or "") == str(
                records[retire].get("updated_at") or ""):
            reason = (f"contradicts {records[keep]['id'][:8]} ({_quote(texts[keep])!r}), "
                      "revised at the same time: check which one holds before applying")
        out.append({"kind": "contradiction", "keep": records[keep]["id"],
                    "retire": records[retire]["id"], "reason": reason})
    out.extend(_duplicate_groups(records, texts, duplicate_of))
    return out


MAX_VALUE_FAMILY = 3
"""Most records one frame may hold with different values and still read as one subject
whose value changed; more are a family of siblings ("shard 3", "shard 4", …)."""


def _sibling_families(by_value: Mapping[int, set[int]]) -> set[int]:
    """The records of every group, linked by value changes, larger than
    `MAX_VALUE_FAMILY`: one frame filled with many values names many things (one record
    per shard, per pool), not one rule that changed, so none of them retires another."""
    seen: set[int] = set()
    out: set[int] = set()
    for start in by_value:
        if start in seen:
            continue
        group, todo = {start}, [start]
        while todo:
            for other in by_value.get(todo.pop(), ()):
                if other not in group:
                    group.add(other)
                    todo.append(other)
        seen |= group
        if len(group) > MAX_VALUE_FAMILY:
            out |= group
    return out


def _duplicate_groups(records: Sequence[Mapping[str, Any]], texts: Sequence[str],
                      duplicate_of: Mapping[int, set[int]]) -> list[dict[str, Any]]:
    """One finding per group: the record most others restate (then the one revised
    last) keeps; those restating it directly are absorbed. Each record is in one group."""
    used: set[int] = set()
    # most restated first; among equals the one revised last
    order = sorted(duplicate_of, key=lambda i: (
        -len(duplicate_of[i]), _negate(str(records[i].get("updated_at") or "")),
        str(records[i]["id"])))
    groups: list[tuple[int, dict[str, Any]]] = []
    for keep in order:
        if keep in used:
            continue
        absorbed = sorted(j for j in duplicate_of[keep] if j not in used)
        if not absorbed:
            continue
        used.add(keep)
        used.update(absorbed)
        groups.append((min(keep, absorbed[0]), {
            "kind": "duplicate", "keep": records[keep]["id"],
            "absorbed": [records[j]["id"] for j in absorbed],
            "reason": f"restates {records[keep]['id'][:8]} ({_quote(texts[keep])!r})"}))
    return [finding for _, finding in sorted(groups, key=lambda g: g[0])]


def _negate(text: str) -> tuple[int, ...]:
    """A sort key ordering `text` descending."""
    return tuple(-ord(c) for c in text)
