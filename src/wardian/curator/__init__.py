"""`curator-rules`: Wardian's deterministic memory curator — a rules engine.

It is memory logic, not a provider adapter: `wardian.providers.builtin.adapter` calls it.

`curate(payload) -> dict` reads the normalised conversation slice and the agent's active
records and returns a `CuratorBatch` (save / update / remove, each with text, kind, scope
and an evidence excerpt quoted verbatim from one message). Spec "You do not need to
say 'remember this'…"; DESIGN.md "The builtin provider". It is not a language model: it
only knows the heuristics below, and it says so.

Signals read (each rule is named by the kind of signal it reads; `signals` has the readers):

1. *Who speaks*: ``role=user, kind=text`` messages are the human typing (the normaliser marks
   injected instruction files, skill/slash-command text, system reminders, compaction
   prompts and interrupt markers with other kinds). Two tool-role kinds carry the user's own
   words and are read too: ``tool_rejection`` (a refused tool call and the user's reason)
   and ``answer`` (the user's answer to the agent's question tool). Other tool output is
   never saved (`include_tool_output` is accepted and ignored); prompts the agent writes
   for its subagents are tool calls, not user text.
2. *Pastes*: messages that are mostly code/log/stack-trace lines are skipped whole
   (`segments.message_is_paste`); segments with code fences, trace frames or a high symbol
   ratio too.
3. *Segments*: messages are split into sentences/lines (exact substrings: the evidence);
   long rambles are cut at clause words.
4. *Statements* (`rules.RULES`): a segment is a candidate when a cue of its kind matches —
   explicit requests to remember, corrections ("I never said", "no, I want", "I meant"),
   lessons ("doesn't work since", "you have to … before"), conventions ("do not", "always",
   "make sure", "use X not Y", "by default"), decisions ("I choose", "we'll go with").
   Routine progress ("continue", "yes", "apply phase 1") matches none. "Do not …" is a rule,
   not a question. A hedged statement ("maybe", "probably", "might", "I guess") is not.
5. *Rejection reasons* (`signals.rejection_reasons`): the user's reason for refusing a tool
   call, read with the refused action ("The user rejected the agent's Write of LICENSE: …").
6. *Answers* (`signals.answers`): an ``AskUserQuestion`` answer with its question; a short
   reply naming one of the options the agent offered, with that option's line (options one
   per line or run into a paragraph, "1) … 2) …"); a longer reply that picks one by position
   with a choice verb ("let's take the third one", options up to three turns back). Answers
   that decide nothing ("yes", "you decide") are skipped; a reply read as a choice is not
   saved again as a bare "let's go with B".
7. *Corrections* (`signals.corrections`): in the first human message after an interrupt or
   a refusal, statements that say what to do differently count without a cue word.
8. *Verified findings* (`signals.findings`): the agent's explanation of a cause, kept as a
   lesson only when the user's next message confirms the result works or acknowledges it
   ("good to know, X": the remark X goes into the lesson, not into a record of its own).
9. *Unfinished state* (`signals.unfinished`, plus a compaction summary's "Current Work"
   that ends the slice): at most `MAX_CURRENT` ``current`` checkpoints — the task list
   (``TodoWrite`` / ``update_plan``) of the turn in progress with undone items, a final
   question that leaves the user a choice or a go-ahead to ship (with what the agent's list
   of changes names), the last request the agent neither finished nor was confirmed on;
   none when the work finished. An "X still does not work" near the end is an open issue
   checkpoint too. A checkpoint names what the work stopped on: the agent's last report of
   what failed ("Stopped on: …"), a compaction's list of errors item by item.
10. *Not saved*: questions, one-off limits ("just this once", "for now"), home-directory
    paths, text quoting the agent ("you said …"), secret-shaped text (detect-secrets
    plugins plus plain "password is …"/"passwd=…", `secrets.looks_secret`).
11. *Text*: `rules.rewrite` — one sentence, filler, hedges and spoken repeats dropped
    (`rules.clean_speech`), plain typos corrected (`spelling`), first/second person
    rewritten to third person, no category label (the record's ``kind`` says
    stable/current), capped length (cut at a sentence or clause end when one is in reach);
    a short prohibition keeps the next sentence saying what holds instead
    (`_with_positive_half`); a checkpoint states, never asks (`_as_state`); the evidence
    keeps the verbatim quote. A typo that is an English word stays (see `spelling`).
12. *Scope*: agent when the statement is about the user across projects (`rules.agent_scoped`),
    else workspace (the transcript's cwd, resolved by ``archive.load``).
13. *Updates, not duplicates* (`dedup`, `contradiction`): a candidate that contradicts an
    active record (negation and word order aware: "Never use npm" vs "Use npm for
    installs", "Use spaces, not tabs" vs "Use tabs, not spaces") becomes an ``update`` of
    it; a restatement (rapidfuzz token_set_ratio >= `DUPLICATE_SCORE`, at most
    `DUPLICATE_MAX_NEW_WORDS` new content words) is skipped; a refinement
    (>= `UPDATE_SCORE`) is an ``update``. Within one session, when two statements
    contradict, the later one wins.
14. *Finished checkpoints*: an active `current` record whose topic (>= `REMOVE_TOPIC_SCORE`)
    appears in a message saying it is done/fixed/shipped/works → `remove` with that evidence.
15. *Order and limits*: score, then message seq, then offset; at most `max_changes`
    operations (at most `MAX_PER_MESSAGE` from one message).

Deterministic: no clocks, no randomness, no set iteration in output order; the same payload
gives byte-identical JSON.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from itertools import pairwise
from typing import Any, Literal

from wardian.curator import signals, spelling
from wardian.curator.contradiction import contradicts, stance
from wardian.curator.dedup import (
    DUPLICATE_MAX_NEW_WORDS,
    DUPLICATE_SCORE,
    REMOVE_TOPIC_SCORE,
    UPDATE_SCORE,
    is_duplicate,
    normalise,
    same_subject,
    similarity,
    topic_overlap,
)
from wardian.curator.reasons import is_refusal_reason
from wardian.curator.rules import (
    MAX_MEMORY_TEXT_CHARS,
    agent_scoped,
    match_rules,
    rewrite,
)
from wardian.curator.secrets import looks_secret, secret_scanning
from wardian.curator.segments import (
    Segment,
    is_code_or_log,
    is_one_off,
    is_one_time,
    is_question,
    mentions_home_path,
    message_is_paste,
    pasted_spans,
    split_segments,
)
from wardian.curator.switches import Switch, may_switch, switch_of
from wardian.curator.values import (
    EXCLUSIVE,
    distinct_subjects,
    retired_values,
    supersedes,
    value_change,
    value_class,
)
from wardian.memory.batch import CuratorBatch, RemoveOp, SaveOp, UpdateOp
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
    r"\b(?:so (?:that )?you remember|remember (?:this|that)(?=\W*$)|add (?:this|that|it) to "
    r"(?:claude|agents)\.md|(?:claude|agents)\.md somehow|note (?:this|that) down)\b",
    re.IGNORECASE,
)
_TASK_REQUEST = re.compile(
    r"^\W*(?:(?:ok(?:ay)?|so|also|and|hey|hi)\W+)*(?:(?:could|can|would) you|please|pls|"
    r"let'?s|i need|i want|we need|add|write|create|build|implement|make|fix|set up|move|"
    r"rename|update|refactor|convert|port)\b",
    re.IGNORECASE,
)
"""A segment opening on a task request ("Could you add an endpoint…")."""
MIN_FOCUS_EVIDENCE = 40
"""A focused clause at least this long is the evidence of its record on its own."""
FOCUS_MIN_CHARS = 120
"""Segments longer than this are rewritten from the clause holding the cue."""
COMPACTION_CHECKPOINT_CHARS = 600
"""At most this much of a compaction summary's "Current Work" section is quoted."""
_CLAUSE_BOUNDARY = re.compile(
    r"(?:,\s+|;\s+|\?\s+\(?|\s+\(|\s[-–—]\s+|\s+(?:so|that|and then|then)\s+)", re.IGNORECASE
)
"""Where a focused clause may start: a comma, semicolon, a tag question ("…, right? (…"),
an opening parenthesis, a spaced dash, or a clause word."""
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
    switch: Switch | None = None  # the change of value it states (`switches.switch_of`)

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


_DANGLING_END = re.compile(
    r"\b(?:and|or|but|so|then|till|until|to|with|of|for|the|a|an|because|which|that|like)"
    r"\s*$",  # a full stop after it ends a sentence ("…tasked you with.")
    re.IGNORECASE,
)
"""A segment ending on a function word was cut mid-thought ("a beta we'll invite and till")."""
_DEICTIC_START = re.compile(
    r"^(?:(?:so|and|then|like|but|also)\s+)*(?:that'?s|that is|this is|it'?s)(?:\s+that'?s)?"
    r"\s+(?:how|where|what|when|it|why\b(?! we\b))",
    re.IGNORECASE,
)
"""A segment that opens by pointing back ("so that's how we'll do it…") needs the sentence
before it to mean anything: without it the record is a context-free fragment."""


_VAGUE = frozenset(
    re.findall(
        r"\S+",
        "like something anything everything thing things stuff etc really actually kind sort "
        "basically maybe there here have has had going get got doing done want ll re ve s d m t",
    )
)
"""Words that carry no subject: "we will be adding like something like we should" has one
content word left ("adding") and says nothing a reader could keep."""


_HEDGED = re.compile(
    r"\b(?:maybe|perhaps|probably|possibly|potentially|might|i guess|i suppose|not sure|"
    r"in theory)\b",
    re.IGNORECASE,
)
"""A statement the user hedges ("maybe X should be Y", "I guess we always…", "it might be
Z") is not a rule they hold; dropping the hedge would change its meaning, so it is not
saved. A request to remember and an open problem keep their hedge ("maybe because…")."""


_CONTRACTED_NOT = re.compile(r"n't\b", re.IGNORECASE)
_NEGATION = re.compile(r"\b(?:not|never|no)\b", re.IGNORECASE)


def _content_words(text: str) -> int:
    """How many content words `text` has (stop words and `_VAGUE` words not counted; a
    negation counts as one, so "Do not X" and "Don't X" weigh the same)."""
    text = _CONTRACTED_NOT.sub(" not", text)
    words = sum(1 for w in normalise(text).split() if w not in _VAGUE)
    return words + (1 if _NEGATION.search(text) else 0)


def _segment_ok(seg: Segment, present: bool = False) -> bool:
    """True when a segment may become a record: not code or a log, no home path, no
    one-off limit (with `present`, a limit tied to the present is allowed)."""
    text = seg.text
    one_off = is_one_time(text) if present else is_one_off(text)
    return not (is_code_or_log(text) or one_off or mentions_home_path(text))


def _is_fragment(text: str) -> bool:
    """True for a segment that cannot stand alone as a record (see `_DANGLING_END`,
    `_DEICTIC_START`)."""
    stripped = text.strip()
    return bool(_DANGLING_END.search(stripped) or _DEICTIC_START.match(stripped))


def _candidates(
    human: list[tuple[int, str]],
    corrections: dict[int, str] | None = None,
    offers: dict[int, str] | None = None,
    refused: dict[int, str] | None = None,
) -> list[_Candidate]:
    """Cue-matched statements in human messages; in a message that corrects an interrupted
    or refused action (`corrections`: seq → the action), plain statements that redirect
    too, and in the message right after a call refused without a reason (`refused`: seq →
    the call's text) the statements that give the refusal's reason
    (`reasons.is_refusal_reason`). An "option N" a statement mentions is named from the
    agent's prose before it (`offers`)."""
    corrections = corrections or {}
    offers = offers or {}
    refused = refused or {}
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
        pasted = pasted_spans(text)
        if pasted:  # a log, an error or a document the user pasted is not their statement
            segments = [
                s for s in segments if not any(a < s.end and s.start < b for a, b in pasted)
            ]
        tags = [(m.start(), m.end()) for m in _INJECTED_BLOCK.finditer(text)]
        if tags:  # a system reminder or command echo appended to human text is not human
            segments = [s for s in segments if not any(a < s.end and s.start < b for a, b in tags)]
        remember_idx = [s.index for s in segments if _REMEMBER.search(s.text)]
        local: list[_Candidate] = []
        for seg in segments:
            if seg.index in remember_idx:
                continue
            if signals.quotes_agent(seg.text):
                continue
            rules = match_rules(seg.text)
            if (rules and rules[0].category == "open_issue"
                    and is_refusal_reason(seg.text, refused.get(seq, ""))):
                rules = []  # "X doesn't run as root" after a refused sudo call says why
            if signals.is_sign_off(seg.text) and all(r.category == "decision" for r in rules):
                continue  # "we'll pick it up tomorrow" ends the day; it plans nothing
            if rules and seq == human[-1][0] and signals.is_parting_one_off(seg.text, text):
                continue  # "stop here. don't commit the output": this session's leftovers
            correcting = seq in corrections
            if (not rules and not correcting) or not (
                _segment_ok(seg) or (rules and rules[0].category == "open_issue"
                                     and _segment_ok(seg, present=True))
            ):
                continue  # an open problem said with "today"/"tomorrow" is still open
            if _HEDGED.search(seg.text) and not (
                rules and rules[0].category in ("explicit", "open_issue")
            ):
                continue  # the user is unsure: when unsure, save nothing
            if _content_words(seg.text) < MIN_CONTENT_WORDS or _is_fragment(seg.text):
                continue
            if _STATUS.search(seg.text):
                continue  # "it should work now", "should be fixed": status, not a rule
            question = is_question(seg.text) and (
                not rules or is_question(_clause(seg.text, rules[0].pattern))
            )
            if not rules:
                # a correction: a statement, or a question proposing another way
                if (question and not signals.proposes_alternative(seg.text)) or (
                    signals.is_routine(seg.text) or not (
                        signals.redirects(seg.text)
                        or is_refusal_reason(seg.text, refused.get(seq, "")))
                ):
                    continue
                cand = _cand(seg, 0.8, "stable", "correction", text)
                action = corrections[seq]
                source = signals.strip_proposal(seg.text)
                body = rewrite(source, "correction").rstrip(".")
                if action and body:
                    cand = replace(cand, text=f"{body} (correcting the agent's {action}).")
                elif body:
                    cand = replace(cand, source=source)
                local.append(cand)
                continue
            best = rules[0]
            if best.category == "open_issue":
                if seq not in last_seqs or success_after.get(seq):
                    continue
                kind: Literal["stable", "current"] = "current"
            else:
                if question and best.category != "explicit" and not (
                    correcting and signals.proposes_alternative(seg.text)
                ):
                    continue
                kind = "stable"
            score = best.score + 0.02 * min(len(rules) - 1, 3)
            if len(seg.text) > 250:
                score -= 0.05
            if remember_idx:
                score += 0.1
            cand = _cand(seg, score, kind, best.category, text)
            if cand.evidence != seg.text and (best.name in SELF_CONTAINED_RULES
                                              or _beside_task(seg, segments)):
                # "Add X. The loaders live in etl/loaders.": the rule's own sentence is its
                # quote; the task beside it is this session's, not part of the rule
                cand = replace(cand, evidence=seg.text[:MAX_EVIDENCE_CHARS])
            focus = _focus(seg.text, best.pattern)
            if is_question(seg.text) and not question:
                focus = _clause(seg.text, best.pattern)  # the rule, not the question
            focus = _after_task_lead(focus, best.pattern)
            fixed = best.fixed_text(seg.text)
            if fixed:
                cand = replace(cand, text=fixed)
            elif focus != seg.text:
                cand = replace(cand, source=focus)
                lead = seg.text[: seg.text.find(focus)] if focus in seg.text else ""
                if (len(cand.evidence) > FOCUS_MIN_CHARS and len(focus) >= MIN_FOCUS_EVIDENCE
                        and _TASK_REQUEST.match(lead)):
                    # a rule said in passing inside a task request: the quote is the rule's
                    # clause, not the whole request (a reason or question before it stays)
                    cand = replace(cand, evidence=focus[:MAX_EVIDENCE_CHARS])
            corrected = corrections.get(seq) if kind == "stable" else None
            if corrected and not fixed and _about(cand.source, corrected):
                # a rule stated right after an interrupt or refusal corrects that action
                body = rewrite(cand.source, best.category).rstrip(".")
                if body:
                    cand = replace(cand, text=f"{body} (correcting the agent's {corrected}).")
            if best.name == "prohibition" and not cand.text:
                cand = _with_positive_half(cand, seg, segments, text)
            if kind == "current" and not cand.text:
                # "the export still needs a header row, I have to leave now": the open work
                cand = replace(cand, source=signals.before_sign_off(cand.source))
            local.append(cand)
        if remember_idx and not local:
            before = [s for s in segments if s.index == remember_idx[0] - 1]
            if before and _segment_ok(before[0]) and not is_question(before[0].text):
                local.append(_cand(before[0], 0.95, "stable", "explicit", text))
        # the most specific statements first: a dictated message repeats itself, and only
        # its best few clauses are worth keeping
        offer = offers.get(seq)
        if offer:
            local = [
                replace(c, source=signals.name_options(c.source, offer)) if not c.text else c
                for c in local
            ]
        local.sort(key=lambda c: (-c.score, -_content_words(c.source), c.start))
        found.extend(local[:MAX_PER_MESSAGE])
    return found


SELF_CONTAINED_RULES = frozenset({
    "kind-uses-tool", "made-with-tool", "supported-range", "team-uses-tool-for",
    "replacement-with-reason", "kind-never-does", "whole-scope", "build-target",
    "kind-lives-in", "standing-role", "no-code-in-place", "kind-is-not", "runs-on-version",
})
"""Cue-less plain statements that name their own subject ("Maps use Leaflet", "handlers
never touch the ORM"): the quote is the statement's own sentence, never the message around
it, whose other sentences (a one-off, a task, another value) the record does not say."""
MIN_OWN_EVIDENCE_CHARS = 25
"""A rule sentence at least this long is quoted on its own when a task request is beside it."""


_SESSION_STEP = re.compile(
    r"^\W*(?:(?:ok(?:ay)?|so|also|and|then)\W+)*(?:(?:today|this week|now)\s+)?"
    r"(?:(?:we|we'?ll|we will|we'?re going to)\s+(?:add|build|port|write|migrate|move|rework|"
    r"extend|ship)\b"
    r"|(?:open|push|merge|send|deploy|ship|release|submit)\b.*\b(?:when|after|once|before)\b)",
    re.IGNORECASE,
)
"""A sentence giving this session's work ("we add X to Y", "today we port Z") or a step
for when it is done ("open the PR against B when you are done", "merge it after …")."""


def _beside_task(seg: Segment, segments: list[Segment]) -> bool:
    """True when `seg` is a statement of its own (`MIN_OWN_EVIDENCE_CHARS`, no pointer back
    to the sentence before it) and another sentence of its message is a task request or a
    step of this session (`_SESSION_STEP`) with no rule cue of its own ("Add a schema for
    the export endpoint.", "Open the PR when you are done.")."""
    if len(seg.text) < MIN_OWN_EVIDENCE_CHARS or _DEICTIC_START.match(seg.text):
        return False
    return any(
        other.index != seg.index
        and (_TASK_REQUEST.match(other.text) or signals.opens_on_change(other.text)
             or _SESSION_STEP.match(other.text))
        and not match_rules(other.text)
        for other in segments
    )


MAX_PROHIBITION_WORDS = 10
"""A prohibition this short says what not to do and leaves what to do to the next sentence."""
_STATE_FORM = re.compile(
    r"^(?!(?:i|we|you|let'?s|let|please|pls|now|then|this|that|there|here|ok|okay|thanks|"
    r"so|and|but|also)\b)(?:[\w./`'-]+\s+){1,5}?(?:is|are|stay|stays|remain|remains|must|"
    r"should|go|goes|live|lives|belong|belongs|needs?|ha(?:s|ve) to|comes?|gets?|runs?)\b"
    # or what the thing itself does ("It expires after ten minutes"), not how it looked
    r"|^(?:it|they)\s+(?!was\b|were\b|did\b|seems?\b|looks?\b|worked\b|works\b)[a-z]{3,}\b",
    re.IGNORECASE,
)
"""A sentence stating how something is or must be ("Dates from the API stay in UTC…",
"Generated files live under gen/"), not a request for the next task ("Now add X") nor talk
about the session ("This is the last thing")."""


def _with_positive_half(
    cand: _Candidate, seg: Segment, segments: list[Segment], message: str
) -> _Candidate:
    """A short prohibition ("Don't cache the token.") followed in the same message by a
    sentence stating how things are instead ("It expires every hour.") is one rule with
    its positive half: the record keeps both ("Do not cache the token; it expires every
    hour."), and the evidence spans both when it is not the whole message already. The
    next sentence must carry no cue of its own (it would be its own record), ask nothing
    and state a state (`_STATE_FORM`)."""
    if len(seg.text.split()) > MAX_PROHIBITION_WORDS or is_question(seg.text):
        return cand
    nxt = next((s for s in segments if s.index == seg.index + 1), None)
    if nxt is None or not message[seg.end : nxt.start].isspace():
        return cand
    after = nxt.text
    if (
        match_rules(after)
        or is_question(after)
        or not _segment_ok(nxt)
        or _is_fragment(after)
        or _content_words(after) < MIN_CONTENT_WORDS
        or not _STATE_FORM.match(after)
        or signals.quotes_agent(after)
    ):
        return cand
    first = rewrite(cand.source, cand.category).rstrip(".!")
    second = rewrite(after, cand.category)
    word = second.split(" ", 1)[0]
    if word[:1].isupper() and word[1:].islower():
        second = second[0].lower() + second[1:]
    joined = f"{first}; {second}"
    if not first or len(joined) > MAX_MEMORY_TEXT_CHARS:
        return cand
    span = message[seg.start : nxt.end]
    evidence = cand.evidence if span in cand.evidence else span[:MAX_EVIDENCE_CHARS]
    return replace(cand, text=joined, evidence=evidence)


_ACTION_WORDS = frozenset(["edit", "write", "read", "call", "command", "file", "bash", "shell"])


def _about(statement: str, action: str) -> bool:
    """True when `statement` names something of the corrected `action` ("…not as a comment"
    after a create_comment call): only then does the record say which action it corrects."""
    said = {w.lower() for w in re.findall(r"[A-Za-z]{4,}", statement)}
    named = {w.lower() for w in re.findall(r"[A-Za-z]{4,}", action)} - _ACTION_WORDS
    return bool(said & named)


def _clause(text: str, pattern: re.Pattern[str]) -> str:
    """The clause holding the cue: from the clause boundary before the cue's match to the
    end. "can you look at X, let me know before doing anything" asks a question and states a
    rule; the rule's own clause decides whether it is a question."""
    match = pattern.search(text)
    if match is None:
        return text
    starts = [m.end() for m in _CLAUSE_BOUNDARY.finditer(text, 0, match.start())]
    return text[starts[-1] :] if starts else text


MAX_TASK_LEAD_CHARS = 60
"""A lead-in before a colon at most this long is the task at hand, not the rule."""


def _after_task_lead(text: str, pattern: re.Pattern[str]) -> str:
    """The rule after a short task lead-in and a colon ("Fix the header: in this repo titles
    are sentence case" → the part after the colon); `text` when the cue is not after one."""
    match = pattern.search(text)
    if match is None:
        return text
    colon = text.rfind(": ", 0, match.start())
    if 0 < colon <= MAX_TASK_LEAD_CHARS and len(text) - colon > 20:
        return text[colon + 2 :]
    return text


def _focus(text: str, pattern: re.Pattern[str]) -> str:
    """For a long ramble, the clause where the cue is: from the clause boundary before the
    cue's match to the end (the memory text is rewritten from it; evidence stays whole)."""
    if len(text) <= FOCUS_MIN_CHARS:
        return text
    best = ""
    for match in pattern.finditer(text):
        starts = [m.end() for m in _CLAUSE_BOUNDARY.finditer(text, 0, match.start())]
        clause = text[starts[-1] :] if starts and len(text) - starts[-1] >= 30 else text
        if "?" not in clause:
            return clause  # the statement after a question ("…, right? (we use X…)")
        best = best or clause
    return best or text


_FENCED = re.compile(r"(?:\s+in:)?\s*```.*?(?:```|\Z)", re.DOTALL)
_NUMBERED = re.compile(r"^[ \t]*\d{1,2}[.)][ \t]+(.+)$", re.MULTILINE)
_LIST_INTRO = re.compile(r":\s*$")
MAX_ITEM_DETAIL_CHARS = 70


def _item_name(item: str, detailed: bool) -> str:
    """A list item as a short phrase: its head before the first ": " ("Compile error at line
    171"), with what follows when `detailed` and that is short ("…: `cannot invoke …`")."""
    item = re.sub(r"\*\*|__", "", item).strip()
    head, sep, rest = item.partition(": ")
    if not sep:
        return re.split(r"(?<=[.;])\s", item, maxsplit=1)[0].rstrip(".;")
    if not detailed:
        return head
    detail = re.split(r"\s+in\b|\s\(|[.;](?:\s|$)", rest, maxsplit=1)[0].strip()
    detail = detail.rstrip(":")
    if not detail or len(detail) > MAX_ITEM_DETAIL_CHARS or detail.count("`") % 2:
        return head
    return f"{head}: {detail}"


def _with_list_named(section: str) -> str:
    """A compaction's "Current Work" with the numbered list after its "…hit two errors:"
    named item by item (code blocks dropped) instead of cut off before it, so the
    checkpoint still says what the work stopped on; "" when no list follows a colon."""
    lead_end = _NUMBERED.search(section)
    if lead_end is None:
        return ""
    lead = section[: lead_end.start()].rstrip()
    if not _LIST_INTRO.search(lead) or "```" in lead:
        return ""
    body = _FENCED.sub("", section[lead_end.start() :])
    items = [m.group(1) for m in _NUMBERED.finditer(body)][:MAX_LIST_ITEMS]
    if len(items) < 2:
        return ""
    lead = " ".join(lead.split())
    for detailed in (True, False):
        named = "; ".join(_item_name(item, detailed) for item in items)
        text = f"{lead} {named}."
        if len(text) <= MAX_MEMORY_TEXT_CHARS:
            return text
    return text


MAX_LIST_ITEMS = 4


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
        section_end = nxt.start() if nxt else len(text)
        fence = text.find("```", start, section_end)
        end = fence if fence != -1 else section_end
        end = min(end, start + COMPACTION_CHECKPOINT_CHARS)
        while end > start and text[end - 1].isspace():
            end -= 1
        if end - start < MIN_CONTENT_WORDS * 4:
            continue
        seg = Segment(seq, start, end, text[start:end], 0)
        cand = _cand(seg, 0.8, "current", "checkpoint", None)
        listed = _with_list_named(text[start:section_end])
        if listed:
            cand = replace(cand, source=listed)
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
    if short and looks_secret(whole):
        # a rule said next to a pasted credential keeps its own sentence as evidence: the
        # secret never enters the record, and the rule is not lost with it
        short = False
    evidence = whole if short else seg.text[:MAX_EVIDENCE_CHARS]
    scope: Literal["agent", "workspace"] = "agent" if agent_scoped(seg.text) else "workspace"
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
            text = cand.memory_text().rstrip(".") + f" (asked in {-neg_n} messages)."
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
    """None when the candidate restates an active record; `update` when it refines or
    contradicts one (`contradiction.contradicts`: negation and word order count, so "Use
    spaces, not tabs" updates "Use tabs, not spaces" instead of passing as a repeat) or
    states its subject with another value (`values.value_change`: npm → pnpm, 4 → 2
    spaces). A record naming another subject (`values.distinct_subjects`: ruff / cargo fmt)
    is never updated, and a ``current`` checkpoint never updates a stable record."""
    best_rec, best_norm, best_sim = None, "", 0.0
    against: dict[str, Any] | None = None
    for rec, rnorm in norm_records:
        switched = cand.switch is not None and cand.switch.named_in(str(rec["text"]))
        if rec["id"] in updated or (distinct_subjects(text, str(rec["text"])) and not switched):
            continue
        if cand.kind == "current" and rec.get("kind") != "current":
            continue  # a checkpoint never overwrites a stable record
        if switched or contradicts(text, str(rec["text"])) or value_change(text, str(rec["text"])):
            sim = similarity(norm, rnorm)
            if against is None or sim > similarity(norm, normalise(str(against["text"]))):
                against = rec
            continue
        sim = similarity(norm, rnorm)
        if sim > best_sim:
            best_rec, best_norm, best_sim = rec, rnorm, sim
    if against is not None:
        best_rec, best_sim = against, 100.0
    elif best_rec is not None and is_duplicate(norm, best_norm):
        return None
    if best_rec is not None and best_sim >= UPDATE_SCORE:
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


REPLACEMENT_SCORE = 0.8
"""Score of the statement naming what replaces a value the same message says is retired."""
_WORD_CHARS = r"[\w.+#-]"


def _names(text: str, word: str) -> bool:
    """True when `text` has `word` as a word of its own ("npm", not "npm.lock")."""
    return bool(re.search(rf"(?<!{_WORD_CHARS}){re.escape(word)}(?![\w+#-]|\.\w)", text,
                          re.IGNORECASE))


def _without_retired(
    human: list[tuple[int, str]], candidates: list[_Candidate]
) -> list[_Candidate]:
    """Candidates once the session retires a value (`values.retired_values`: "we moved from
    npm to bun", "master doesn't exist anymore"): a stable statement made before the
    retirement that names the value as in use ("open merge requests against master") is
    dropped (a statement rejecting it, "never use npm", still holds); and when no candidate of the
    retiring message or after names what replaces it, that message's statement naming
    another value of its class ("merge requests go to main now") is the rule."""
    out = list(candidates)
    for seq, text in human:
        if message_is_paste(text):
            continue
        for gone in retired_values(text):
            out = [
                c for c in out
                if c.kind != "stable" or c.seq >= seq
                or not (_names(c.memory_text(), gone.word) or _names(c.source, gone.word))
                or gone.word.lower() in stance(c.memory_text()).rejects
            ]
            cls = value_class(gone.word)
            if cls is None:
                continue
            others = [m for m in EXCLUSIVE[cls] if m != gone.word.lower()]
            if gone.replacement:
                others = [gone.replacement.lower()]
            if any(c.seq >= seq and c.kind == "stable"
                   and any(_names(c.memory_text(), m) for m in others) for c in out):
                continue
            taken = {(c.seq, c.start) for c in out}
            for seg in split_segments(seq, text):
                if (seq, seg.start) in taken or not any(_names(seg.text, m) for m in others):
                    continue
                if gone.start < seg.end and seg.start < gone.end and not gone.replacement:
                    continue  # the retiring clause itself names no replacement
                if (not _segment_ok(seg) or is_question(seg.text) or _HEDGED.search(seg.text)
                        or signals.quotes_agent(seg.text) or _content_words(seg.text) < 3):
                    continue
                cand = _cand(seg, REPLACEMENT_SCORE, "stable", "convention", text)
                body = rewrite(seg.text, "convention").rstrip(".")
                if body and not _names(body, gone.word):
                    body += f" (replacing {gone.word})"
                out.append(replace(cand, text=body + "."))
                break
    return out


def _without_superseded(
    human: list[tuple[int, str]], candidates: list[_Candidate]
) -> list[_Candidate]:
    """Candidates without a stable statement a later human message of the session gives
    another value (`values.supersedes`: "open the PR against develop" then "PRs go to main
    these days"): only the last value may be saved. The later statement counts when it is
    the user's own (not pasted, not a question, not quoting the agent); a value it rejects
    is none it gives ("never open PRs against main" leaves "open them against develop")."""
    later: list[tuple[int, str]] = []
    for seq, text in human:
        if message_is_paste(text):
            continue
        pasted = pasted_spans(text)
        for seg in split_segments(seq, text):
            if any(a < seg.end and seg.start < b for a, b in pasted):
                continue
            if (not _segment_ok(seg) or is_question(seg.text) or _HEDGED.search(seg.text)
                    or signals.quotes_agent(seg.text)):
                continue
            rejects = stance(seg.text).rejects
            kept = " ".join(w for w in seg.text.split() if w.strip(".,;:!()`'\"").lower()
                            not in rejects)  # what it rejects is no value it gives
            later.append((seq, kept))
    return [
        c for c in candidates
        if c.kind != "stable"
        or not any(seq > c.seq and supersedes(text, c.source) for seq, text in later)
    ]


_RETRACTION = re.compile(
    r"^\W*(?:(?:oh|ok|okay|hmm+|um+|no|sorry)\W+){0,2}"
    r"(?:(?:scratch|strike|forget|ignore|disregard|scrap|cancel)\s+(?:that|this)\b"
    r"|never\s*mind(?:\s+(?:that|this|what\s+i\s+(?:said|wrote)))?\s*[,.;:!\u2013\u2014-]"
    r"|on\s+second\s+thoughts?\b"
    r"|(?:wait|actually)\W+no\b|no\W+wait\b"
    r"|i\s+take\s+(?:it|that)\s+back\b)",
    re.IGNORECASE,
)
"""A message that opens by taking back what the user said just before ("scratch that",
"on second thought", "wait, no", "never mind that, …", "I take it back")."""

_SIGN_OFF = re.compile(
    r"^\W*(?:thanks|thank\s+you|thx|ty|cheers|please|pls|ok|okay|great|cool)\b[\W\s]*"
    r"(?:(?:a\s+lot|so\s+much|in\s+advance)\W*)?$", re.IGNORECASE)
"""A segment that only signs off or thanks: no statement a retraction could take back."""



def _without_retracted(
    human: list[tuple[int, str]], candidates: list[_Candidate]
) -> list[_Candidate]:
    """Candidates without the stable statement a human message's next message takes back
    (`_RETRACTION` at its start): "lint with X before every push", then "scratch that, lint
    with Y" keeps nothing of the first. "That" is what was said last: the earlier message's
    last statement (sign-offs such as "thanks!" aside) is dropped when it is a candidate;
    its other statements stand. What the retracting message says instead is kept only when
    another rule reads it as a rule of its own (precision first)."""
    last: dict[int, int] = {}
    for (before, said), (_, text) in pairwise(human):
        if message_is_paste(text) or not _RETRACTION.search(text):
            continue
        statements = [seg for seg in split_segments(before, said)
                      if not _SIGN_OFF.match(seg.text) and _content_words(seg.text) >= 1]
        if not statements:
            continue
        tail = said[statements[-1].end:].strip()
        if re.search(r"\w", tail) and not _SIGN_OFF.match(tail):
            continue  # something said after the last statement is what is taken back
        last[before] = statements[-1].start
    return [c for c in candidates
            if c.kind != "stable" or c.seq not in last or c.start < last[c.seq]]


SWITCH_SCORE = 0.8
"""Score of the rule a later message gives another value when the earlier one was no
candidate (a standing number, or an active record)."""
_STANDING = re.compile(r"\b(?:every|each|per|always|by default|default)\b", re.IGNORECASE)
"""A plain statement holding one of these words states a standing value ("poll every 30
seconds"), not a one-off setting."""


def _with_switches(
    human: list[tuple[int, str]],
    records: list[dict[str, Any]],
    candidates: list[_Candidate],
) -> list[_Candidate]:
    """Candidates once a later human message gives an earlier rule's value another one
    (`switches.switch_of`: "switch the formatter to Y, X fights with …", "make it 45 s
    instead"): only the later value may be saved. The earlier rule is a stable candidate of
    an earlier message naming the old value, else an earlier plain statement naming it — a
    number with the new value's unit ("idle after 90 seconds"), or a name said as a standing
    value (`_STANDING`: "lint with X every time") — else an active record. A candidate of
    an earlier message quoting the old value beside its own sentence quotes only its
    sentence. Its stable
    candidates naming the old value as in use are dropped; the rule is kept with the new
    value — as the changing statement when that is a candidate already, else as the earlier
    rule's text with the value replaced — and an active record naming the old value is
    updated by it. A change of something no earlier rule or record names ("make it green
    instead") is a task, not saved."""
    out = list(candidates)
    for seq, text in human:
        if not may_switch(text) or message_is_paste(text):
            continue
        for seg in split_segments(seq, text):
            switch = switch_of(seg.text)
            if switch is None or not _segment_ok(seg) or is_question(seg.text):
                continue
            if _HEDGED.search(seg.text) or signals.quotes_agent(seg.text):
                continue
            earlier = [c for c in out if c.kind == "stable" and c.seq < seq
                       and switch.named_in(c.memory_text()) and switch.fits(c.memory_text())
                       and switch.old.lower() not in stance(c.memory_text()).rejects]
            base = earlier[-1].memory_text() if earlier else None
            if base is None:
                base = next((s.text for s_seq, s_text in reversed(human) if s_seq < seq
                             for s in split_segments(s_seq, s_text)
                             if (switch.unit or _STANDING.search(s.text))
                             and switch.named_in(s.text) and switch.fits(s.text)
                             and _segment_ok(s) and not is_question(s.text)), None)
                base = rewrite(base, "convention") if base else None
            if base is None:
                base = next((str(r["text"]) for r in records
                             if switch.named_in(str(r["text"]))
                             and switch.fits(str(r["text"]))), None)
            if base is None:
                continue
            out = [c for c in out if c not in earlier]
            # a record's quote carries no value the session replaced: the rule beside
            # "… idle after 90 seconds." quotes its own sentence
            out = [replace(c, evidence=c.source[:MAX_EVIDENCE_CHARS])
                   if c.seq < seq and c.evidence != c.source and c.source in c.evidence
                   and switch.named_in(c.evidence) and not switch.named_in(c.source) else c
                   for c in out]
            here = [k for k, c in enumerate(out)
                    if c.seq == seq and c.start < seg.end and seg.start < c.start + len(c.source)]
            if here:
                out[here[0]] = replace(out[here[0]], switch=switch)
                continue
            cand = _cand(seg, max([SWITCH_SCORE] + [c.score for c in earlier]), "stable",
                         "convention", text)
            out.append(replace(cand, text=switch.applied_to(base), switch=switch))
    return out


CLAIM_CORRECTION_SCORE = 0.78
"""Score of a plain statement in a message that opens by calling the agent wrong."""
_CLAIM_WRONG = re.compile(
    r"^\W*(?:(?:no|nope|nah)\W+)?(?:(?:that'?s|thats|that is|this is|it'?s|its)\s+"
    r"(?:wrong|incorrect|false|not (?:true|right|correct))|not true|wrong|incorrect)"
    r"(?:\s*[,.;:!\u2013\u2014-]+\s*|\s*$)",
    re.IGNORECASE,
)
"""A message opening by calling what the agent said or did wrong ("that's wrong, …", "not
true. …", "no, that's not right: …"); "wrong file, …" names a thing and is not one."""
_PAST_OR_SELF = re.compile(
    r"\b(?:i|we) (?:\w+ed|ran|did|tried|saw|got|had|was|were|said|told|wrote)\b"
    r"|\b(?:yesterday|earlier|last (?:time|week)|just now|again)\b",
    re.IGNORECASE,
)
"""What the user did or saw ("I ran it yesterday"), not how things are: no rule."""
_ACT_NOW = re.compile(
    r"^\W*(?:it|this|that|they|he|she)\b|\b(?:revert|rerun|re-run|retry|undo|redo|restart|"
    r"start over|try again|roll back)\b|\b(?:my|your) (?:machine|laptop|box|setup)\b",
    re.IGNORECASE,
)
"""A statement about the thing at hand ("it compiles fine on my machine") or a step to take
now ("revert the last commit and start over"): no rule either."""


def _claim_corrections(
    human: list[tuple[int, str]],
    messages: list[dict[str, Any]],
    found: list[_Candidate],
) -> list[_Candidate]:
    """Plain statements (no cue word) in a human message that opens by calling the agent's
    last words wrong (`_CLAIM_WRONG`): "that's wrong, the cluster runs in KRaft mode" says
    how things are instead. Each statement after the opener is a correction when it is no
    question, no one-off, no report of what the user did (`_PAST_OR_SELF`), no statement
    about the thing at hand or step to take now (`_ACT_NOW`), has
    `MIN_CONTENT_WORDS` content words and is not already a candidate; the opener itself is
    not part of the record."""
    first_prose = next((k for k, m in enumerate(messages)
                        if m.get("role") == "assistant" and m.get("kind") == "text"), None)
    agent_said = set() if first_prose is None else {
        m.get("seq") for m in messages[first_prose + 1:] if m.get("role") == "user"}
    taken = {(c.seq, c.start) for c in found}
    out: list[_Candidate] = []
    for seq, text in human:
        opener = _CLAIM_WRONG.match(text)
        if opener is None or seq not in agent_said or message_is_paste(text):
            continue
        for seg in split_segments(seq, text):
            if (seq, seg.start) in taken or seg.end <= opener.end():
                continue
            cut = max(0, opener.end() - seg.start)
            words = seg.text[cut:].strip()
            if (not words or is_question(words) or is_one_off(words) or _HEDGED.search(words)
                    or _PAST_OR_SELF.search(words) or _ACT_NOW.search(words)
                    or signals.is_routine(words)
                    or signals.quotes_agent(words) or not _segment_ok(seg)
                    or _content_words(words) < MIN_CONTENT_WORDS or _is_fragment(words)):
                continue
            cand = _cand(seg, CLAIM_CORRECTION_SCORE, "stable", "correction", text)
            out.append(replace(cand, source=words))
    return out


RESTATED_SCORE = 0.75
"""Score of a plain statement that gives an active record's subject another value."""


def _restated(
    human: list[tuple[int, str]],
    records: list[dict[str, Any]],
    found: list[_Candidate],
) -> list[_Candidate]:
    """Plain statements (no cue word) that state an active record's subject the other way
    round or with another value: the user is changing a rule the agent already keeps."""
    if not records:
        return []
    taken = {(c.seq, c.start) for c in found}
    out: list[_Candidate] = []
    for seq, text in human:
        if message_is_paste(text):
            continue
        for seg in split_segments(seq, text):
            if (seq, seg.start) in taken or not _segment_ok(seg) or is_question(seg.text):
                continue
            if signals.quotes_agent(seg.text) or _content_words(seg.text) < 2:
                continue
            if any(
                (value_change(seg.text, str(rec["text"]))
                 or contradicts(seg.text, str(rec["text"])))
                and not distinct_subjects(seg.text, str(rec["text"]))
                for rec in records
            ):
                out.append(_cand(seg, RESTATED_SCORE, "stable", "convention", text))
    return out


def _from_signal(sig: signals.Signal) -> _Candidate | None:
    """A candidate from a signal reader's finding (see `signals`), or None when unusable."""
    source = sig.source or sig.evidence
    if sig.kind in ("rejection", "finding") and (
        is_code_or_log(source) or is_one_off(source) or mentions_home_path(source)
    ):
        return None
    text = sig.text
    if not text and sig.kind == "rejection":
        proposal = signals.proposes_alternative(source)
        body = rewrite(signals.strip_proposal(source) if proposal else source, "correction")
        if (match_rules(source) and not proposal) or not sig.context:
            text = body
        elif proposal:
            text = f"The user rejected the agent's {sig.context} and proposed: {body}"
        else:
            text = f"The user rejected the agent's {sig.context}: {body}"
    elif not text:
        text = rewrite(source, sig.kind)
    if not text:
        return None
    scope: Literal["agent", "workspace"] = "agent" if agent_scoped(source) else "workspace"
    return _Candidate(
        round(sig.score, 4),
        sig.seq,
        sig.start,
        source,
        sig.record_kind,
        scope,
        sig.evidence[:MAX_EVIDENCE_CHARS],
        sig.kind,
        text,
    )


_OPEN_QUESTION = "Open question when the session ended"


def _as_state(text: str) -> str:
    """A checkpoint says a state, never asks: a statement the user ended with "?" (a guess
    at the cause, "X still fails (maybe because of Y)?") keeps its words and ends with a
    full stop; a question by form is recorded as the open question it is, quoted. Text
    that quotes a question inside ("Awaiting the user's answer to \"…?\"") is left as is."""
    stripped = text.rstrip()
    if not stripped.endswith("?"):
        return text
    body = stripped.rstrip("? ")
    if not body:
        return ""
    if is_question(body):
        return f'{_OPEN_QUESTION}: "{body[0].upper() + body[1:]}?"'
    return body + "."


def _checkpoint_text(words: str) -> str:
    return rewrite(words, "checkpoint")


TASK_ITEM_OVERLAP = 70.0
"""`topic_overlap` of the user's "X is still not done" with an undone task-list item at which
the two are one piece of open work."""
MAX_CURRENT = signals.MAX_CHECKPOINTS
"""At most this many `current` checkpoints come from one session (all sources together)."""


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
    workspace = payload.get("workspace") if isinstance(payload.get("workspace"), str) else None
    human = _human_messages(messages)
    corrections = signals.corrections(messages, workspace)
    found = signals.findings(messages)
    candidates = [
        c
        for c in _candidates(human, corrections, signals.offers(messages),
                             signals.refused_calls(messages))
        # the user's remark a finding already carries ("good to know, X") is not a record
        if not any(c.seq == seq and (c.source.rstrip(" .") in words or words in c.source)
                   for seq, words in (s.covers for s in found if s.covers))
    ] + _habits(human) + [
        c
        for sig in signals.rejection_reasons(messages, workspace)
        + signals.answers(messages)
        + signals.named_replacements(messages)
        + found
        if (c := _from_signal(sig)) is not None
    ]
    candidates += _restated(human, records, candidates)
    candidates += _claim_corrections(human, messages, candidates)
    candidates = _without_retired(human, candidates)
    candidates = _without_superseded(human, candidates)
    candidates = _without_retracted(human, candidates)
    candidates = _with_switches(human, records, candidates)
    # a reply that picks one of the agent's options is recorded with that option's words
    # (signals.answers); the same reply read as a bare "let's go with B" would say nothing,
    # and the reason it gives ("B. we never block the request") is the choice's reason,
    # quoted in its evidence, not a rule of its own
    chose = {c.seq for c in candidates if c.category == "answer"}
    candidates = [c for c in candidates if c.category == "answer" or c.seq not in chose]
    known = spelling.session_words(
        str(m.get("text") or "") for m in messages if m.get("role") == "assistant"
    )
    checkpoints = _compaction_checkpoints(messages, human)
    checkpoints += [
        c
        for sig in signals.unfinished(messages, workspace, _checkpoint_text)
        if (c := _from_signal(sig)) is not None
    ]
    stated = {c.seq for c in candidates if c.kind == "stable"}
    # a last request that is itself a rule was saved as one: no "unfinished" copy of it
    checkpoints = [c for c in checkpoints if c.category != "unfinished" or c.seq not in stated
                   or c.text.startswith(("Awaiting", signals.UNFINISHED_TASKS,
                                         signals.UNFINISHED_LEFT))]
    items = [normalise(item) for c in checkpoints if c.text.startswith(signals.UNFINISHED_TASKS)
             for item in c.text[len(signals.UNFINISHED_TASKS):].split(" Stopped on:")[0]
             .strip(" .").split("; ")]
    # "the man page still isn't written" when the task list says "Write the man page" is
    # left undone: one checkpoint, the list's
    candidates = [c for c in candidates if c.category != "open_issue" or not any(
        topic_overlap(normalise(c.source), item) >= TASK_ITEM_OVERLAP for item in items)]
    if any(c.category == "open_issue" for c in candidates):
        # the user said what is left in their own words: the request they made before it is
        # no checkpoint of its own (a task list still is)
        checkpoints = [c for c in checkpoints
                       if not c.text.startswith(signals.UNFINISHED_REQUEST)]
    candidates += checkpoints[:MAX_CURRENT]
    candidates.sort(key=lambda c: (-c.score, c.seq, c.start, c.evidence))
    ranked: list[tuple[float, int, int, SaveOp | UpdateOp | RemoveOp]] = []
    kept: list[tuple[str, str, int]] = []  # (normalised text, text, seq) of kept candidates
    updated: list[str] = []
    norm_records = [(rec, normalise(rec["text"])) for rec in records]
    current = 0
    with secret_scanning():
        for cand in candidates:
            if len(ranked) >= max_changes:
                break  # later candidates score lower: they could never make the cut
            text = spelling.correct(cand.memory_text(), known)
            if cand.kind == "current":
                text = _as_state(text)
            norm = normalise(text)
            if not text or (cand.kind == "current" and current >= MAX_CURRENT):
                continue
            clash = [k for k, (_, other, _) in enumerate(kept)
                     if contradicts(text, other) or value_change(text, other)]
            if clash:
                # the session changed its mind: the later statement wins; two clauses of one
                # message ("don't run X, … only Y") are one thought, said best by the first
                if any(kept[k][2] >= cand.seq for k in clash):
                    continue
                for k in sorted(clash, reverse=True):
                    del kept[k]
                    del ranked[k]
            elif any((is_duplicate(norm, other) or same_subject(norm, other))
                     and not distinct_subjects(text, raw) for other, raw, _ in kept):
                continue  # said again in this session: the best-scored statement stands
            if looks_secret(cand.evidence) or looks_secret(text):
                continue
            op = _save_or_update(cand, text, norm, norm_records, updated)
            if op is not None:
                kept.append((norm, text, cand.seq))
                ranked.append((cand.score, cand.seq, cand.start, op))
                current += cand.kind == "current"
    for score, seq, start, rop in _removals(records, messages):
        if rop.memory_id not in updated:
            ranked.append((score, seq, start, rop))
    ranked.sort(key=lambda item: (-item[0], item[1], item[2]))
    batch = CuratorBatch(operations=[item[3] for item in ranked[:max_changes]])
    return batch.model_dump(mode="json")
