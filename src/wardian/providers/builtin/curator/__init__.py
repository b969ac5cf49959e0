"""`curator-rules`: the builtin provider's deterministic memory curator — a rules engine.

`curate(payload) -> dict` reads the normalised conversation slice and the agent's active
records and returns a `CuratorBatch` (save / update / remove, each with text, kind, scope
and an evidence excerpt quoted verbatim from one message). Issue 6; spec "You do not need to
say 'remember this'…"; DESIGN.md "The builtin provider". It is not a language model: it
only knows the heuristics below, and it says so.

Heuristics, in order:

1. *Who speaks*: only ``role=user, kind=text`` messages are candidates (the normaliser marks
   injected instruction files, skill/slash-command text, system reminders, compaction
   prompts, interrupt markers and tool rejections with other kinds). Assistant text is
   context only: it can show that a `current` record finished. Tool output is never saved
   (`include_tool_output` is accepted and ignored).
2. *Pastes*: messages that are mostly code/log/stack-trace lines are skipped whole
   (`segments.message_is_paste`); segments with code fences, trace frames or a high symbol
   ratio too.
3. *Segments*: messages are split into sentences/lines (exact substrings: the evidence);
   long rambles are cut at clause words.
4. *Cues* (`rules.RULES`): a segment becomes a candidate only when a cue matches — explicit
   requests to remember / write into CLAUDE.md or AGENTS.md, corrections ("I never said",
   "no, I want", "like I asked", "I meant"), lessons ("doesn't work since", "you have to …
   before"), conventions (imperative "do not", "always", "make sure", "should", "by
   default", "use X not Y", "I'll commit"), decisions ("I choose", "we'll go with", roadmap
   statements). Routine progress ("continue", "yes", "apply phase 1") matches none.
5. *Rejections*: questions (unless an explicit remember request), one-off limits ("just
   this once", "for now", "this time"), home-directory paths (the user's machine, not the
   project), secret-shaped text (detect-secrets plugins, `secrets.looks_secret`).
6. *Open issues*: "X still does not work" becomes a `current` checkpoint only in the last
   `OPEN_ISSUE_WINDOW` human messages and only if no later human message reports success.
7. *Remember requests* about "this"/"that" boost the message's other candidates (or promote
   the sentence before them).
8. *Text*: `rules.rewrite` — filler and markdown emphasis dropped, first/second person
   rewritten to third person ("the user", "the agent"), a category label prefixed
   ("Correction: …"), capped length.
9. *Scope*: agent when the statement is about the user across projects (`rules.AGENT_SCOPE`:
   "in all my projects", "globally", "I prefer"), else workspace.
10. *De-duplication* (`dedup`, rapidfuzz token_set_ratio over normalised content words):
    >= `DUPLICATE_SCORE` to an active record while adding at most
    `DUPLICATE_MAX_NEW_WORDS` content words → skipped; otherwise >= `UPDATE_SCORE` →
    `update` of that record (a correction or refinement); candidates restating each other
    keep the best one.
11. *Finished checkpoints*: an active `current` record whose topic (>= `REMOVE_TOPIC_SCORE`)
    appears in a message saying it is done/fixed/shipped/works → `remove` with that evidence.
12. *Compaction handoff*: the "Current Work" section of a compaction summary (Claude Code's
    generated summary, assistant reply or continuation message) that ends the slice with no
    human message after it is quoted (up to a code fence) as a `current` checkpoint.
13. *Focus*: a long ramble's memory text is rewritten from the clause holding the cue
    (`FOCUS_MIN_CHARS`); its evidence stays the whole segment.
14. *Order and limits*: score (rule base score, adjusted), then message seq, then offset;
    at most `max_changes` operations (at most `MAX_PER_MESSAGE` from one message).

Deterministic: no clocks, no randomness, no set iteration in output order; the same payload
gives byte-identical JSON.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from itertools import pairwise
from typing import Any, Literal

from wardian.memory.batch import CuratorBatch, RemoveOp, SaveOp, UpdateOp
from wardian.providers.builtin.curator.dedup import (
    DUPLICATE_MAX_NEW_WORDS,
    DUPLICATE_SCORE,
    REMOVE_TOPIC_SCORE,
    UPDATE_SCORE,
    is_duplicate,
    normalise,
    similarity,
    topic_overlap,
)
from wardian.providers.builtin.curator.rules import AGENT_SCOPE, label_for, match_rules, rewrite
from wardian.providers.builtin.curator.secrets import looks_secret, secret_scanning
from wardian.providers.builtin.curator.segments import (
    Segment,
    is_code_or_log,
    is_one_off,
    is_question,
    mentions_home_path,
    message_is_paste,
    split_segments,
)
from wardian.transcripts.classify import classify_user_text

__all__ = [
    "DEFAULT_MAX_CHANGES",
    "DUPLICATE_MAX_NEW_WORDS",
    "DUPLICATE_SCORE",
    "MAX_PER_MESSAGE",
    "MODEL",
    "OPEN_ISSUE_WINDOW",
    "REMOVE_TOPIC_SCORE",
    "UPDATE_SCORE",
    "curate",
]

MODEL = "curator-rules"
"""The builtin provider's model name for this curator."""
DEFAULT_MAX_CHANGES = 10
MAX_PER_MESSAGE = 6
"""At most this many candidates are taken from one message."""
OPEN_ISSUE_WINDOW = 2
"""Open problems count as checkpoints only in the last N human messages."""
MAX_EVIDENCE_CHARS = 1_000
WHOLE_MESSAGE_EVIDENCE_CHARS = 200
"""A message at most this long is quoted whole as evidence (its context stays with it)."""
MIN_CONTENT_WORDS = 3
"""A candidate needs this many content words ("Have it in the roadmap." has two)."""
HABIT_MIN_MESSAGES = 3
"""A verb phrase in at least this many human messages is a recurring request."""
HABIT_MIN_HUMAN = 6
"""…and only in sessions with at least this many human messages."""
HABIT_VERBS = ("add", "note", "log", "record", "track", "document", "update", "write", "test")
"""Recording/tracking verbs: "add task", "note memory" repeated is a workflow habit."""
_HABIT_STOP = frozenset(
    [
        "continue",
        "proceed",
        "phase",
        "step",
        "next",
        "move",
        "start",
        "ready",
        "retry",
        "go",
        "apply",
        "fix",
        "implement",
    ]
)

_REMEMBER = re.compile(
    r"\b(?:so (?:that )?you remember|remember (?:this|that)|add (?:this|that|it) to "
    r"(?:claude|agents)\.md|(?:claude|agents)\.md somehow|note (?:this|that) down)\b",
    re.IGNORECASE,
)
FOCUS_MIN_CHARS = 120
"""Segments longer than this are rewritten from the clause holding the cue."""
COMPACTION_CHECKPOINT_CHARS = 600
"""At most this much of a compaction summary's "Current Work" section is quoted."""
_CLAUSE_BOUNDARY = re.compile(
    r"(?:,\s+|;\s+|\?\s+\(?|\s+\(|\s+(?:so|that|and then|then)\s+)", re.IGNORECASE
)
"""Where a focused clause may start: a comma, semicolon, a tag question ("…, right? (…")
or an opening parenthesis, or a clause word."""
_CURRENT_WORK = re.compile(r"^\s*(?:\d+\.\s*)?(?:#+\s*)?Current Work:?[ \t]*$", re.MULTILINE)
_SUMMARY_HEADING = re.compile(r"^\s*(?:\d+\.\s+|#+\s+)[A-Z][^\n]{2,60}:?\s*$", re.MULTILINE)
_INJECTED_BLOCK = re.compile(
    r"<(system-reminder|command-[a-z]+|local-command-[a-z]+|user-prompt-submit-hook|"
    r"task-notification|bash-[a-z]+)>.*?(?:</\1>|$)",
    re.DOTALL,
)
_HEADING = re.compile(r"^#{1,6} \S", re.MULTILINE)
_STATUS = re.compile(
    r"\bshould (?:now |already )?(?:be )?(?:work(?:ing)?|fixed|done|good|resolved|ready)\b"
    r"(?: now)?",
    re.IGNORECASE,
)
_SUCCESS = re.compile(
    r"\b(?:works now|now works|that works|it works|is fixed|fixed now|resolved|is done|"
    r"(?:has |have )?shipped|completed|finished|merged|is deployed)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class _Candidate:
    score: float
    seq: int
    start: int
    source: str  # the segment the memory text is rewritten from
    kind: Literal["stable", "current"]
    scope: Literal["agent", "workspace"]
    evidence: str
    category: str
    text: str = ""  # set for habits and fixed-text rules; else rewritten lazily when used

    def memory_text(self) -> str:
        return self.text or rewrite(self.source, self.category)


def _human_messages(messages: list[dict[str, Any]]) -> list[tuple[int, str]]:
    out: list[tuple[int, str]] = []
    for position, msg in enumerate(messages):
        if not isinstance(msg, dict) or msg.get("role") != "user":
            continue
        text = msg.get("text")
        if not isinstance(text, str) or not text.strip():
            continue
        kind = msg.get("kind") or classify_user_text(text)
        if kind != "text":
            continue
        seq = msg.get("seq")
        out.append((seq if isinstance(seq, int) else position, text))
    return out


def _segment_ok(seg: Segment) -> bool:
    text = seg.text
    return not (is_code_or_log(text) or is_one_off(text) or mentions_home_path(text))


def _candidates(human: list[tuple[int, str]]) -> list[_Candidate]:
    found: list[_Candidate] = []
    last_seqs = [seq for seq, _ in human[-OPEN_ISSUE_WINDOW:]]
    success_after: dict[int, bool] = {}
    seen_success = False
    for seq, text in reversed(human):
        success_after[seq] = seen_success
        seen_success = seen_success or bool(_SUCCESS.search(text))
    for seq, text in human:
        if message_is_paste(text):
            continue
        segments = split_segments(seq, text)
        heading = _HEADING.search(text)
        if heading:  # what follows a markdown heading is a pasted document
            segments = [s for s in segments if s.start < heading.start()]
        tags = [(m.start(), m.end()) for m in _INJECTED_BLOCK.finditer(text)]
        if tags:  # a system reminder or command echo appended to human text is not human
            segments = [s for s in segments if not any(a < s.end and s.start < b for a, b in tags)]
        remember_idx = [s.index for s in segments if _REMEMBER.search(s.text)]
        local: list[_Candidate] = []
        for seg in segments:
            if seg.index in remember_idx:
                continue
            rules = match_rules(seg.text)
            if not rules or not _segment_ok(seg):
                continue
            if len(normalise(seg.text).split()) < MIN_CONTENT_WORDS:
                continue
            if _STATUS.search(seg.text):
                continue  # "it should work now", "should be fixed": status, not a rule
            best = rules[0]
            question = is_question(seg.text)
            if best.category == "open_issue":
                if seq not in last_seqs or success_after.get(seq):
                    continue
                kind: Literal["stable", "current"] = "current"
            else:
                if question and best.category != "explicit":
                    continue
                kind = "stable"
            score = best.score + 0.02 * min(len(rules) - 1, 3)
            if len(seg.text) > 250:
                score -= 0.05
            if remember_idx:
                score += 0.1
            cand = _cand(seg, score, kind, best.category, text)
            focus = _focus(seg.text, best.pattern)
            if best.text:
                cand = replace(cand, text=f"{label_for(best.category)}: {best.text}")
            elif focus != seg.text:
                cand = replace(cand, source=focus)
            local.append(cand)
        if remember_idx and not local:
            before = [s for s in segments if s.index == remember_idx[0] - 1]
            if before and _segment_ok(before[0]) and not is_question(before[0].text):
                local.append(_cand(before[0], 0.95, "stable", "explicit", text))
        local.sort(key=lambda c: (-c.score, c.start))
        found.extend(local[:MAX_PER_MESSAGE])
    return found


def _focus(text: str, pattern: re.Pattern[str]) -> str:
    """For a long ramble, the clause where the cue is: from the clause boundary before the
    cue's match to the end (the memory text is rewritten from it; evidence stays whole)."""
    if len(text) <= FOCUS_MIN_CHARS:
        return text
    match = pattern.search(text)
    if match is None:
        return text
    starts = [m.end() for m in _CLAUSE_BOUNDARY.finditer(text, 0, match.start())]
    return text[starts[-1] :] if starts and len(text) - starts[-1] >= 30 else text


def _compaction_checkpoints(
    messages: list[dict[str, Any]], human: list[tuple[int, str]]
) -> list[_Candidate]:
    """The "Current Work" section of a compaction summary that ends the slice (no human
    message after it) is the agent's own handoff of open work: a `current` checkpoint."""
    last_human = human[-1][0] if human else -1
    found: list[_Candidate] = []
    for position, msg in enumerate(messages):
        seq = msg.get("seq", position)
        text = msg.get("text")
        if not isinstance(seq, int) or seq <= last_human or not isinstance(text, str):
            continue
        if msg.get("role") not in ("assistant", "user") or msg.get("kind") not in (
            "text",
            "compaction",
        ):
            continue
        head = _CURRENT_WORK.search(text)
        if head is None:
            continue
        start = head.end()
        while start < len(text) and text[start].isspace():
            start += 1
        nxt = _SUMMARY_HEADING.search(text, start)
        end = nxt.start() if nxt else len(text)
        fence = text.find("```", start, end)
        end = fence if fence != -1 else end
        end = min(end, start + COMPACTION_CHECKPOINT_CHARS)
        while end > start and text[end - 1].isspace():
            end -= 1
        if end - start < MIN_CONTENT_WORDS * 4:
            continue
        seg = Segment(seq, start, end, text[start:end], 0)
        cand = _cand(seg, 0.8, "current", "checkpoint", None)
        found = [cand]  # the latest summary wins
    return found


def _cand(
    seg: Segment,
    score: float,
    kind: Literal["stable", "current"],
    category: str,
    message: str | None,
) -> _Candidate:
    whole = (message or "").strip()
    short = 0 < len(whole) <= WHOLE_MESSAGE_EVIDENCE_CHARS and not message_is_paste(whole)
    evidence = whole if short else seg.text[:MAX_EVIDENCE_CHARS]
    scope: Literal["agent", "workspace"] = "agent" if AGENT_SCOPE.search(seg.text) else "workspace"
    return _Candidate(
        round(score, 4),
        seg.seq,
        seg.start,
        seg.text,
        kind,
        scope,
        evidence,
        category,
    )


def _habits(human: list[tuple[int, str]]) -> list[_Candidate]:
    """A recording/tracking request repeated across messages ("add … task", "note … in
    memory") is a workflow habit: one candidate, quoting the shortest such sentence."""
    if len(human) < HABIT_MIN_HUMAN:
        return []
    counts: dict[tuple[str, str], int] = {}
    for _, text in human:
        if message_is_paste(text):
            continue
        words = normalise(text).split()
        for pair in sorted(set(pairwise(words))):
            counts[pair] = counts.get(pair, 0) + 1
    qualifying = sorted(
        (
            (-n, pair)
            for pair, n in counts.items()
            if n >= HABIT_MIN_MESSAGES
            and pair[0] in HABIT_VERBS
            and not _HABIT_STOP.intersection(pair)
            and not any(w.isdigit() for w in pair)
        ),
    )
    for neg_n, pair in qualifying[:1]:
        best: Segment | None = None
        for seq, text in human:
            for seg in split_segments(seq, text):
                words = normalise(seg.text).split()
                if pair not in set(pairwise(words)):
                    continue
                if not _segment_ok(seg) or is_question(seg.text) or len(words) < 3:
                    continue
                if best is None or len(seg.text) < len(best.text):
                    best = seg
        if best is not None:
            cand = _cand(best, 0.7, "stable", "habit", None)
            text = cand.memory_text().replace(": ", f" ({-neg_n} times): ", 1)
            return [
                _Candidate(
                    cand.score,
                    cand.seq,
                    cand.start,
                    cand.source,
                    cand.kind,
                    cand.scope,
                    cand.evidence,
                    cand.category,
                    text,
                )
            ]
    return []


def _records(payload: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for rec in payload.get("records") or []:
        if (
            isinstance(rec, dict)
            and isinstance(rec.get("id"), str)
            and isinstance(rec.get("text"), str)
        ):
            out.append(rec)
    return sorted(out, key=lambda r: str(r["id"]))


def _removals(
    records: list[dict[str, Any]], messages: list[dict[str, Any]]
) -> list[tuple[float, int, int, RemoveOp]]:
    """`current` records that a later statement shows finished."""
    texts = [
        (m.get("seq", i), m.get("text"), m.get("role"))
        for i, m in enumerate(messages)
        if isinstance(m, dict)
        and m.get("kind", "text") == "text"
        and m.get("role") in ("user", "assistant")
        and isinstance(m.get("text"), str)
    ]
    out = []
    for rec in records:
        if rec.get("kind") != "current":
            continue
        topic = normalise(rec["text"])
        best: tuple[float, int, int, str] | None = None
        for seq, text, role in texts:
            if not isinstance(text, str):
                continue
            for seg in split_segments(seq if isinstance(seq, int) else 0, text):
                if not _SUCCESS.search(seg.text) or is_question(seg.text):
                    continue
                overlap = topic_overlap(topic, normalise(seg.text))
                if overlap < REMOVE_TOPIC_SCORE:
                    continue
                score = 0.9 if role == "user" else 0.85
                key = (score + overlap / 1000, -seg.seq, -seg.start, seg.text)
                if best is None or key[:3] > best[:3]:
                    best = key
        if best is not None:
            evidence = best[3][:MAX_EVIDENCE_CHARS]
            op = RemoveOp(
                op="remove",
                memory_id=rec["id"],
                evidence=evidence,
                reason="The session shows this checkpoint finished.",
            )
            out.append((round(best[0], 4), -best[1], -best[2], op))
    return out


def _scope_of(record: dict[str, Any]) -> Literal["agent", "workspace"]:
    """An active record's scope kind (an update keeps an agent-scoped record agent-scoped)."""
    scope = record.get("scope")
    kind = scope.get("kind") if isinstance(scope, dict) else scope
    return "agent" if kind == "agent" else "workspace"


def _save_or_update(
    cand: _Candidate,
    text: str,
    norm: str,
    norm_records: list[tuple[dict[str, Any], str]],
    updated: list[str],
) -> SaveOp | UpdateOp | None:
    """None when the candidate restates an active record; `update` when it refines one."""
    best_rec, best_norm, best_sim = None, "", 0.0
    for rec, rnorm in norm_records:
        sim = similarity(norm, rnorm)
        if sim > best_sim:
            best_rec, best_norm, best_sim = rec, rnorm, sim
    if best_rec is not None and is_duplicate(norm, best_norm):
        return None
    if best_rec is not None and best_sim >= UPDATE_SCORE and best_rec["id"] not in updated:
        updated.append(best_rec["id"])
        return UpdateOp(
            op="update",
            memory_id=best_rec["id"],
            text=text,
            kind=cand.kind,
            scope=_scope_of(best_rec) if cand.scope == "workspace" else cand.scope,
            evidence=cand.evidence,
        )
    return SaveOp(op="save", text=text, kind=cand.kind, scope=cand.scope, evidence=cand.evidence)


def curate(payload: dict[str, Any]) -> dict[str, Any]:
    """Propose memory changes for one conversation slice (deterministic, read-only).

    Args:
        payload: the curator payload (contracts "Curator payload"): ``messages`` (normalised
            `Message.to_json()` dicts), ``records`` (active: id, revision_id, kind, scope,
            text), ``max_changes`` (int, default 10), ``include_tool_output`` (ignored:
            tool output is never saved), ``workspace`` (absolute path, informational).

    Returns:
        a `CuratorBatch` as JSON: ``{"operations": [...]}``, best first, at most
        ``max_changes`` long; every evidence is a verbatim substring of one message text.
    """
    messages = [m for m in payload.get("messages") or [] if isinstance(m, dict)]
    max_changes = payload.get("max_changes", DEFAULT_MAX_CHANGES)
    if not isinstance(max_changes, int) or isinstance(max_changes, bool):
        max_changes = DEFAULT_MAX_CHANGES
    max_changes = max(0, min(max_changes, 100))
    records = _records(payload)
    human = _human_messages(messages)
    candidates = _candidates(human) + _habits(human) + _compaction_checkpoints(messages, human)
    candidates.sort(key=lambda c: (-c.score, c.seq, c.start, c.evidence))
    ranked: list[tuple[float, int, int, SaveOp | UpdateOp | RemoveOp]] = []
    kept_norms: list[str] = []
    updated: list[str] = []
    norm_records = [(rec, normalise(rec["text"])) for rec in records]
    with secret_scanning():
        for cand in candidates:
            if len(ranked) >= max_changes:
                break  # later candidates score lower: they could never make the cut
            text = cand.memory_text()
            norm = normalise(text)
            if not text or any(is_duplicate(norm, other) for other in kept_norms):
                continue
            if looks_secret(cand.evidence) or looks_secret(text):
                continue
            kept_norms.append(norm)
            op = _save_or_update(cand, text, norm, norm_records, updated)
            if op is not None:
                ranked.append((cand.score, cand.seq, cand.start, op))
    for score, seq, start, rop in _removals(records, messages):
        if rop.memory_id not in updated:
            ranked.append((score, seq, start, rop))
    ranked.sort(key=lambda item: (-item[0], item[1], item[2]))
    batch = CuratorBatch(operations=[item[3] for item in ranked[:max_changes]])
    return batch.model_dump(mode="json")
