"""Signal readers: where in a session the user (or a verified result) says something durable.

Each reader is named by the kind of signal it reads, not by any sentence it was tried on.
They work on normalised messages (`Message.to_json()` dicts) and return `Signal`s whose
``evidence`` is an exact substring of one message's text (``seq``).

- *rejection reason* (`rejection_reasons`): the text a user types when refusing a tool call
  (Claude Code error ``tool_result`` "…the user said:\\n<reason>"); the rejected call is its
  context. A Codex approval denial has no reason of its own: the next human message is read
  as the correction (`corrections`).
- *answer* (`answers`): the user's answer to the agent's question; the question gives it its
  meaning. Claude Code ``AskUserQuestion`` results (``"question"="answer"``) and a short human
  reply that picks one of the options the agent's last message offered ("option B").
- *correction* (`corrections`): the first human message after the user interrupted or
  rejected the agent's action; it says what the agent should have done.
- *unfinished state* (`unfinished`): at most `MAX_CHECKPOINTS` ``current`` checkpoints: the
  task list (``TodoWrite``/``update_plan``) left with undone items, the agent's final
  question the user never answered, or the last request the agent did not finish. None when
  the session shows the work finished.
- *verified finding* (`findings`): the agent's own explanation of a cause, kept as a lesson
  only when the user then confirmed that the result works.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any, Literal

from wardian.curator import spelling
from wardian.curator.rules import MAX_MEMORY_TEXT_CHARS, match_rules, rewrite
from wardian.curator.segments import is_one_off, is_one_time

__all__ = [
    "MAX_CHECKPOINTS",
    "UNFINISHED_REQUEST",
    "UNFINISHED_TASKS",
    "Signal",
    "action_summary",
    "answers",
    "before_sign_off",
    "corrections",
    "findings",
    "is_routine",
    "name_options",
    "offers",
    "opens_on_change",
    "proposes_alternative",
    "quotes_agent",
    "redirects",
    "rejection_reasons",
    "strip_proposal",
    "unfinished",
]

UNFINISHED_TASKS = "Unfinished tasks when the session ended:"
"""How a checkpoint of the task list's undone items opens."""
UNFINISHED_REQUEST = "Unfinished when the session ended:"
"""How a checkpoint of the last request the agent did not finish opens."""
UNFINISHED_LEFT = "Left open when the user stopped the session:"
"""How a checkpoint of the part the agent named open, when the user stopped, opens."""
MAX_CHECKPOINTS = 2
"""At most this many `current` checkpoints come from one session's unfinished state."""
MAX_ITEM_LIST = 4
"""A checkpoint lists at most this many undone task-list items."""
MAX_REASON_CHARS = 400
"""A rejection reason longer than this is a paste, not a reason."""
MAX_ANSWER_WORDS = 14
"""A human reply this short, right after the agent offered options, is an answer."""
MAX_TERSE_WORDS = 4
"""A rejection reason this short needs the agent's next words to say what it means."""
"""A human reply this short, right after the agent offered options, is an answer."""

SignalKind = Literal["rejection", "answer", "correction", "unfinished", "finding"]


@dataclass(frozen=True)
class Signal:
    """One candidate read from a non-plain-text signal.

    Attributes:
        kind: which reader found it.
        seq: the message holding the evidence.
        start: offset of the evidence in that message's text.
        evidence: verbatim excerpt (the quote kept with the record).
        text: the record text (one self-contained sentence), or "" to rewrite ``source``.
        source: the user's words the record text is rewritten from (when ``text`` is "").
        context: what the words refer to (the rejected action, the question), appended.
        record_kind: ``stable`` or ``current``.
        score: ranking weight (0..1).
    """

    kind: SignalKind
    seq: int
    start: int
    evidence: str
    text: str = ""
    source: str = ""
    context: str = ""
    record_kind: Literal["stable", "current"] = "stable"
    score: float = 0.8
    covers: tuple[int, str] | None = None
    """(seq, words) of a human message part the record already says (a finding carries the
    user's remark after "good to know"): no record of its own."""


_SAID = re.compile(r"\bthe user said:\s*\n?", re.IGNORECASE)
_ROUTINE = re.compile(
    r"^\W*(?:(?:ok(?:ay)?|yes|yeah|yep|sure|no|nope|sorry|thanks?(?: you)?|great|cool|nice|"
    r"perfect|good|fine|go(?: ahead| on)?|continue|proceed|carry on|stop|wait|hold on|do it|"
    r"k+|kk|thx|ty|ya|yup|yes pls|bye|cya|"
    r"please|pls|lgtm|sounds good|looks good|that works|works|done|next|retry|try again|"
    r"go for it|ship it|exactly|right|correct|agreed|makes sense)\b[\s,.!:;-]*)+\W*$",
    re.IGNORECASE,
)
_CONFIRM = re.compile(
    # "fixed" of the work ("fixed, thanks", "that fixed it"), not naming a kind of thing ("a
    # fixed window", "fixed width")
    r"\b(?:(?:it |that |this )?works(?: now)?|worked|fixed(?!\s+(?:a |an )?(?!it\b|that\b|"
    r"this\b|now\b|too\b|already\b|and\b|but\b|thanks?\b|the (?:bug|issue|problem|test)"
    r")[a-z])|perfect|exactly|that did it|"
    r"looks good|lgtm|great)\b",
    re.IGNORECASE,
)
_ACKNOWLEDGE = re.compile(
    r"^\W*(?:(?:oh|ah|ok(?:ay)?|wow|nice|great|thanks?)[,!. ]+)*(?:good|nice|great) "
    r"(?:catch|find|spot|call)\b|^\W*(?:good to know|that explains it|til)\b"
    r"|\b(?:keep|bear) (?:that|this|it) in mind\b|\bremember (?:that|this)(?= for|\W*$)"
    # said after a sigh or a story: "argh, that cost me a day too. good to know, …"
    r"|(?:[.!;]\s+|,\s+)(?:good to know|that explains (?:it|a lot))\b",
    re.IGNORECASE,
)
"""The user acknowledging the agent's finding ("good catch", "keep that in mind"): what the
agent found is confirmed as worth knowing, even before anything is re-run."""
MAX_ACKNOWLEDGE_WORDS = 25
_COUNTER = re.compile(
    r"^\W*(?:but\s+)?(?:can'?t|couldn'?t|shouldn'?t|why not|how about|what about|could|can|"
    r"should|would)\s+(?:we|you|it|this|that)\b",
    re.IGNORECASE,
)
"""A question that proposes another way ("can't we change those funcs to take X instead?")."""
_QUESTION_START = re.compile(
    r"^\W*(?:what|why|how|where|when|which|who|whose|is|are|was|were|(?:do|does|did)\b"
    r"(?!\s+not\b)|have|has|any|isn'?t|aren'?t|wdyt)\b",
    re.IGNORECASE,
)
_RULE_START = re.compile(r"^\W*(?:never|always|don'?t|do not|dont|only)\b", re.IGNORECASE)
"""A terse refusal sentence opening like a rule ("Never force-push to trunk.") says itself
what holds; other terse sentences ("branch and PR") need the agent's next words."""
_DEFERS = re.compile(
    r"\b(?:you decide|up to you|not sure|no preference|don'?t care|whatever you|your call|"
    r"skip(?: for now)?|later)\b",
    re.IGNORECASE,
)
"""An answer that leaves the choice to the agent decides nothing."""
_DECLINES = re.compile(
    r"^\W*(?:(?:no|none|neither|nothing|nope|nah|not now|not yet|not today|not needed|"
    r"no thanks|thanks|maybe later|later)\b[\s,.!]*)+(?:[a-z][\w-]*)?\W*$",
    re.IGNORECASE,
)
"""An answer that only declines ("No rig", "None", "Not now", "nope, not yet") says what not
to do this once, not what holds: it decides nothing either ("No, use X" names what holds and
is kept)."""
_ANSWER_PAIR = re.compile(r'"((?:[^"\\]|\\.){3,300})"="((?:[^"\\]|\\.){1,300})"')
_OPTION_REF = re.compile(
    r"\b(?:option|approach|choice|variant|alternative|plan|number|#)\s*([A-Za-z]|\d{1,2})\b|"
    r"^\W*(?:the )?([A-Za-z]|\d{1,2})\W*$|\b(first|second|third|fourth|last) (?:one|option)\b",
    re.IGNORECASE,
)
_RECOMMENDED = re.compile(r"\s*\((?:recommended|default|suggested)\)", re.IGNORECASE)
"""The agent's own label on an option: not part of what the user chose."""
MAX_DETAIL_CHARS = 120
_ORDINALS = {"first": "1", "second": "2", "third": "3", "fourth": "4"}
"""Ordinal words → option labels; "last" is resolved against the offer (`_chosen_option`)."""
_OPTION_HEAD = re.compile(
    r"^[ \t>*#-]*(?:\*\*)?(?:option|approach|choice|variant|alternative|plan)?\s*"
    r"\(?([A-Za-z]|\d{1,2})[).:]\s*(?:\*\*)?(.*)$|"
    r"^[ \t>*#-]*(?:\*\*)?(?:option|approach|choice|variant|alternative|plan)\s+"
    r"([A-Za-z]|\d{1,2})\b[^\w\n]*(.*)$",
    re.IGNORECASE | re.MULTILINE,
)
_ASKS_USER = re.compile(
    r"\?\s*$|\b(?:want me to|should i|shall i|would you like|do you want|which (?:one|option)|"
    r"let me know (?:which|whether|if you(?:'d)? (?:want|prefer)))\b",
    re.IGNORECASE,
)
_GENERIC_OFFER = re.compile(
    r"\b(?:anything else|what would you like (?:to do )?next|any (?:other )?questions|"
    r"let me know if (?:you (?:have|need)|there'?s anything)|happy to help|need anything)\b",
    re.IGNORECASE,
)
_INTENT = re.compile(
    r"(?:\b(?:let me|i'?ll|i will|i'?m going to|i am going to|now i|next,? i|next i'?m|"
    r"i'?m (?:now )?(?:exporting|checking|adding|writing|running|taking|collecting|reading)|"
    r"going to)\b[^.!?\n]*[.:]?\s*$|:\s*$)",
    re.IGNORECASE,
)
_DONE_VERBS = (
    r"(?:created|updated|deleted|removed|fixed|added|implemented|committed|pushed|merged|"
    r"renamed|moved|wrote|written|changed|staged|reverted|applied)"
)
_DONE = re.compile(
    r"^#+ [^\n]*\b(?:created|done|complete[d]?|finished|summary|fixed|added|updated)\b|"
    r"(?:^|[.!]\s+)(?:i(?:'ve| have) )?" + _DONE_VERBS + r"\b|"
    r"\b(?:i'?ve|i have|has been|have been|was|were|is now|are now) " + _DONE_VERBS + r"\b|"
    r"\b(?:done|completed|(?:is|now|task|all|work) complete|finished|all (?:tests|checks) "
    r"pass(?:ed)?|(?:both|tests?|checks?) "
    r"pass(?:es|ed)?|is ready|here'?s (?:a |the )?summary|summary of (?:the )?changes)\b",
    re.IGNORECASE | re.MULTILINE,
)
"""The agent reporting its work finished (a past-tense report, a summary, passing checks)."""
_LEFT_OPEN = re.compile(
    r"\b(?:(?:is|are) (?:still )?not (?:done|finished|implemented|wired up|hooked up|there) yet|"
    r"(?:is|are) still (?:to do|todo|missing|pending|open|left)|(?:is|are) (?:still )?left to do|"
    r"still (?:need|needs) to be (?:done|added|written|implemented)|remaining (?:work|steps|items|"
    r"parts?) (?:is|are)|not yet (?:done|implemented|wired up|started)|"
    r"(?:is|are) the (?:only |last )?(?:remaining|missing|open)|"
    r"left for (?:tomorrow|later|next time|the next session)|comes? next|(?:is|are) next(?=\W*$|"
    r"[.;,])|next up)\b|\bstill open:",
    re.IGNORECASE,
)
"""The agent saying part of the request is still open ("the toggle is not done yet"): its
report of what it did does not finish the request."""
_CAUSE = re.compile(
    r"\b(?:because|since|root cause|the (?:real )?(?:issue|problem|bug|cause|culprit) "
    r"(?:is|was)|caused by|requires?|needs? (?:a|an|the|to)|must (?:be|have|use)|"
    r"only works (?:when|if)|crash(?:es|ed)? (?:when|if|because)|unless|only (?:if|when)|"
    r"ignores?|(?:is|are) not (?:stored|persisted|saved|inherited|shared|kept))\b"
    # a consequence: "the file starts with a BOM, so the first header never matches"
    r"|,\s+so\s+(?:the|its?|every|each|all|any|no|nothing|that)\b",
    re.IGNORECASE,
)
_FIRST_PERSON_ACTION = re.compile(
    r"^\W*(?:let me|i'?ll|i will|i'?m|i am|i've|i have|now|next|great|perfect|done|sure)\b",
    re.IGNORECASE,
)
_PATH_ARG = re.compile(r"^(\w[\w.:-]*)\((.*)\)$", re.DOTALL)
_UNDONE = re.compile(r"^- \[(pending|in_progress|in progress|todo)\] (.+)$", re.MULTILINE)
_STATE_HEAD = re.compile(r"^(TodoWrite|update_plan):\n", re.MULTILINE)
_CHECK_TOOL_WORDS = ("tool_call",)


_PROPOSAL_LEAD = re.compile(
    r"^\W*(?:but\s+)?(?:(?:could|can|should|would)(?:n'?t|'t)?\s+(?:we|you)|how about|"
    r"what about|why not)\s+"
    r"(?:(?:also|just|maybe|please|instead)\s+)*",
    re.IGNORECASE,
)


_REDIRECT = re.compile(
    r"\b(?:not|instead|rather|but|only|just|explicitly|directly|wrong|should|shouldn'?t|"
    r"never|always|don'?t|do not|without|keep|leave)\b",
    re.IGNORECASE,
)


def redirects(text: str) -> bool:
    """True when a correction says what to do differently (a contrast or limit word), not
    just the next one-off request ("search the docs for X")."""
    return bool(_REDIRECT.search(text))


def proposes_alternative(text: str) -> bool:
    """True for a question that proposes another way ("could we just X", "can't we X")."""
    return bool(_COUNTER.match(text)) and not bool(_QUESTION_START.match(text))


def strip_proposal(text: str) -> str:
    """"could we also just remove X?" → "remove X" (the proposal as an instruction)."""
    out = _PROPOSAL_LEAD.sub("", text.strip()).rstrip(" ?")
    return out if len(out) >= 8 else text


_QUOTES_AGENT = re.compile(
    r"\byou (?:said|wrote|suggested|claimed|proposed|mentioned)\b\s*:?\s*[\"'“`]",
    re.IGNORECASE,
)


def quotes_agent(text: str) -> bool:
    """True when the user quotes the agent's words ("you said \"X\""): the quote is the
    agent's, not a rule the user states (often the user is rejecting it)."""
    return bool(_QUOTES_AGENT.search(text))


def is_routine(text: str) -> bool:
    """True for an acknowledgement or a go-ahead that carries no content ("yes", "ok, go")."""
    return bool(_ROUTINE.match(text.strip()))


_SIGN_OFF = re.compile(
    r"\b(?:(?:stop|pause|leave it|break)(?: it)? (?:here|there)(?: for (?:today|now|tonight))?"
    r"(?=\s*(?:[,.!;:\-–—]|$))"
    r"|(?:call(?:ing)? it|that'?s it|that'?s all|done) (?:a day|for (?:today|now|tonight|the day))"
    r"|(?:continue|resume|pick (?:this|it|that) (?:back )?up|carry on|finish (?:this|it|up)|"
    r"come back to (?:this|it)|get back to (?:this|it))\b[^.?!]{0,20}\b(?:tomorrow|tmrw|tmr|"
    r"2morrow|later|"
    r"next (?:time|week|session)|on (?:monday|tuesday|wednesday|thursday|friday)|after (?:lunch|"
    r"the weekend)|in the morning)"
    r"|(?:\bi(?:'ve| have)?\s+|^\W*(?:ok(?:ay)?|sorry|argh|right|hm+)?[,!. ]*)(?:(?:have|need|got)"
    r" to|gotta|must) (?:(?:go|leave|run|stop|head out|log off|sign off)(?=\s*(?:now|soon|"
    r"for (?:today|now|the day)|[,.!;:]|$))|(?:jump|hop|get) (?:in|on)(?:to)? (?:a |the |my )?"
    r"(?:meeting|call|"
    r"standup))"
    r"|\bleave it (?:like (?:that|this)|as (?:it is|is))(?= for now| until| till|\s*(?:[,.!;]|$))"
    r"|\b(?:i'?m|i am|we'?re|we are) out of time\b"
    # "we finish tomorrow": a bare "finish" right before when
    r"|\b(?:we|i)(?:'ll| will)? finish (?:tomorrow|later|next (?:time|week|session)|on "
    r"(?:monday|tuesday|wednesday|thursday|friday)|in the morning|after (?:lunch|the weekend)))"
    r"\b",
    re.IGNORECASE,
)
MAX_SIGN_OFF_WORDS = 24


_TAIL_JOIN = re.compile(r"(?:,|;|\s[-–—]|\s(?:but|and|so))\s+", re.IGNORECASE)


def before_sign_off(text: str) -> str:
    """`text` without a sign-off clause that ends it ("the export still needs a header row,
    I have to leave now" → "the export still needs a header row"); `text` when no
    sign-off follows a clause of at least `MIN_KEPT_CHARS`."""
    match = _SIGN_OFF.search(text)
    if match is None or match.start() == 0:
        return text
    joins = [m.start() for m in _TAIL_JOIN.finditer(text, 0, match.start())]
    head = text[: joins[-1]] if joins else text[: match.start()]
    head = head.rstrip(" ,;:-–—")
    return head if len(head) >= MIN_KEPT_CHARS else text


MIN_KEPT_CHARS = 12


def is_sign_off(text: str) -> bool:
    """True for a short message that ends the working session without asking for anything
    ("I have to go, let's pick this up tomorrow"): it is no record itself, and the work it
    leaves is whatever the request before it left open."""
    stripped = text.strip()
    return (
        len(stripped.split()) <= MAX_SIGN_OFF_WORDS
        and not stripped.endswith("?")
        and bool(_SIGN_OFF.search(stripped))
    )


def _texts(messages: list[dict[str, Any]]) -> list[tuple[int, dict[str, Any], str]]:
    out = []
    for position, msg in enumerate(messages):
        text = msg.get("text")
        seq = msg.get("seq")
        if isinstance(text, str) and text.strip():
            out.append((seq if isinstance(seq, int) else position, msg, text))
    return out


def _is_human(msg: dict[str, Any]) -> bool:
    return msg.get("role") == "user" and msg.get("kind", "text") == "text"


def _relative(path: str, workspace: str | None) -> str:
    root = (workspace or "").rstrip("/")
    if root and path.startswith(root + "/"):  # a workspace of "/" (unknown) keeps paths whole
        return path[len(root) + 1 :]
    return path


def action_summary(tool_call_text: str, workspace: str | None) -> str:
    """A short phrase for a summarised tool call: ``Edit(/ws/a/b.go)`` → "Edit of a/b.go"."""
    match = _PATH_ARG.match(tool_call_text.strip())
    if not match:
        return tool_call_text.split("\n", 1)[0][:80]
    name, arg = match.group(1), match.group(2).strip()
    if arg.startswith("/") or arg.startswith("~"):
        arg = _relative(arg, workspace)
        if arg.startswith(("/", "~")):
            arg = arg.rsplit("/", 1)[-1]
        return f"{name} of {arg}"
    if name in ("Bash", "shell", "exec_command", "shell_command", "run_shell_command"):
        words = []
        for word in arg.split()[:3]:
            if "/" in word or "\\" in word or word in ("&&", "|", ";", "2>&1"):
                break
            words.append(word)
        return f"`{' '.join(words)}` command" if words else "shell command"
    return f"{name} call"


def _previous(
    texts: list[tuple[int, dict[str, Any], str]], index: int, kind: str
) -> tuple[int, dict[str, Any], str] | None:
    for j in range(index - 1, -1, -1):
        if texts[j][1].get("kind") == kind and texts[j][1].get("role") == "assistant":
            return texts[j]
        if _is_human(texts[j][1]):
            return None
    return None


_SENTENCE = re.compile(r"(?:[^\n.!?]|[.!?]+(?=[^\s.!?]))+(?:[.!?]+(?=\s|$)|$)")
"""A sentence: anything up to an end mark followed by white space, or to the end of the text."""


def _sentences(text: str, offset: int = 0) -> list[tuple[int, str]]:
    """(start, sentence) pieces of `text` split at sentence ends and line breaks.

    A sentence ends at ``.``, ``!`` or ``?`` followed by white space or the end of the text:
    the dot inside a file name, a version or a URL ("spec/api.yaml", "2.31.4") ends nothing.
    """
    out = []
    for match in _SENTENCE.finditer(text):
        piece = match.group(0)
        stripped = piece.strip()
        if stripped:
            out.append((offset + match.start() + piece.index(stripped[0]), stripped))
    return out


WHOLE_REASON_CHARS = 240
"""A refusal reason of several statements up to this long is quoted as one record."""


def rejection_reasons(
    messages: list[dict[str, Any]], workspace: str | None
) -> list[Signal]:
    """The user's reason for refusing a tool call, with the refused call as its context.

    Statements in the reason are kept; a question is kept only when it proposes another
    way (`_COUNTER`). A rejection the agent then resolved by asking the user (an `answer`
    follows before the next human message) is left to `answers`.
    """
    texts = _texts(messages)
    out: list[Signal] = []
    for i, (seq, msg, text) in enumerate(texts):
        if msg.get("kind") != "tool_rejection":
            continue
        said = _SAID.search(text)
        if said is None:
            continue
        reason = text[said.end() :].strip()
        if not reason or len(reason) > MAX_REASON_CHARS or is_routine(reason):
            continue
        if _answered_later(texts, i):
            continue
        call = _previous(texts, i, "tool_call")
        context = action_summary(call[2], workspace) if call else ""
        base = text.index(reason, said.end())
        sentences = _sentences(reason, base)
        whole = [s for s in sentences if not is_one_off(s[1])]
        if len(whole) < len(sentences):
            # "…, renovate opens those PRs. just tidy if you must": the grudging permission
            # is this call's, the rest is the rule
            sentences, reason = whole, ""
        if (
            context
            and reason
            and len(sentences) > 1
            and len(reason) <= WHOLE_REASON_CHARS
            and not any(s.endswith("?") or _QUESTION_START.match(s) for _, s in sentences)
            and all(len(s.split()) > MAX_TERSE_WORDS for _, s in sentences)
        ):
            # a short reason of several statements is one thought: quoted whole, so that
            # no sentence of it is lost ("We never do X here. Do Y instead.")
            out.append(
                Signal("rejection", seq, base, reason, source=reason, context=context,
                       text=f"The user rejected the agent's {context}: {reason}", score=0.83)
            )
            continue
        mine: list[Signal] = []
        message = text
        for start, sentence in sentences:
            question = sentence.endswith("?") or bool(_QUESTION_START.match(sentence))
            if question and not _COUNTER.match(sentence):
                continue
            if is_routine(sentence) or len(sentence) < 4:
                continue
            if len(sentence.split()) <= MAX_TERSE_WORDS and not question and not (
                    match_rules(sentence) and _RULE_START.match(sentence)):
                # a terse reason ("Entire Inc.", "branch and PR") means what the agent then
                # did with it: read it in the agent's next words, or leave it
                meaning = _echo(texts, i, sentence.rstrip(".!"))
                if meaning is None:
                    continue
                text = f"Rejecting the agent's {context}, the user asked for: {meaning}."
                mine.append(Signal("rejection", seq, start, sentence, text=text, score=0.83))
                continue
            mine.append(
                Signal("rejection", seq, start, sentence, source=sentence, context=context,
                       score=0.83)
            )
        out += _reason_with_rule(mine, message)
    return out


def _is_rule_sentence(sig: Signal) -> bool:
    return bool(sig.source and not sig.text and match_rules(sig.source)
                and not proposes_alternative(sig.source))


def _reason_with_rule(found: list[Signal], message: str) -> list[Signal]:
    """One refusal's sentence signals, with a plain reason folded into the rule it gives:
    "that wipes the staging data. never run db:reset here" is one record, the rule with
    its reason ("Never run db:reset here: that wipes the staging data."), quoting both
    sentences; two records would say one thing twice. Unchanged when the refusal states
    no rule, several rules, or more than one plain reason, or when the two together pass
    `MAX_MEMORY_TEXT_CHARS`."""
    ruled = [s for s in found if _is_rule_sentence(s)]
    plain = [s for s in found if s.source and not s.text and not match_rules(s.source)
             and not s.source.endswith("?") and not _QUESTION_START.match(s.source)]
    if len(ruled) != 1 or len(plain) != 1:
        return found
    rule, reason = ruled[0], plain[0]
    rule_text = rewrite(rule.source, "convention").rstrip(". ")
    why = rewrite(reason.source, "correction").rstrip(". ")
    if not rule_text or not why:
        return found
    if why[:1].isupper() and why[1:2].islower():
        why = why[0].lower() + why[1:]
    text = f"{rule_text}: {why}."
    if len(text) > MAX_MEMORY_TEXT_CHARS:
        return found
    first, last = sorted((rule, reason), key=lambda s: s.start)
    end = last.start + len(last.evidence)
    evidence = message[first.start:end]
    merged = replace(rule, start=first.start, evidence=evidence, text=text)
    return [merged if s is rule else s for s in found if s is not reason]


_ECHO_LEAD = re.compile(
    r"^(?:(?:i|we)(?:'ll| will| can| could| have| am|'ve|'m)?|let me|now i|done|ok(?:ay)?|"
    r"sure|got it|updated|understood)\b[\s,:-]*",
    re.IGNORECASE,
)


def _echo(
    texts: list[tuple[int, dict[str, Any], str]], index: int, words: str
) -> str | None:
    """The clause of the agent's next prose (before the next human message) that repeats
    `words`, from its clause start to the end of `words`, without a first-person lead
    ("I can create a branch and PR for …" → "create a branch and PR"); None when the agent
    never repeats them."""
    needle = re.compile(re.escape(words), re.IGNORECASE)
    for _, msg, text in texts[index + 1 :]:
        if _is_human(msg):
            return None
        if msg.get("role") != "assistant" or msg.get("kind") != "text":
            continue
        for _, sentence in _sentences(text):
            found = needle.search(sentence)
            if found is None:
                continue
            head = sentence[: found.start()]
            cut = max(head.rfind(","), head.rfind(";"), head.rfind(":"), head.rfind(" — "))
            clause = sentence[cut + 1 : found.end()].strip(" *_`")
            clause = _ECHO_LEAD.sub("", clause).strip(" *_`")
            clause = re.sub(r"[*`_]{2,}|`", "", clause)
            if len(clause) >= len(words):
                return clause
    return None


def _answered_later(texts: list[tuple[int, dict[str, Any], str]], index: int) -> bool:
    for _, msg, _ in texts[index + 1 :]:
        if msg.get("kind") == "answer":
            return True
        if _is_human(msg):
            return False
    return False


def _unescape(value: str) -> str:
    return value.replace('\\"', '"').replace("\\\\", "\\").strip()


def answers(messages: list[dict[str, Any]]) -> list[Signal]:
    """The user's answers to the agent's questions, each read with its question.

    ``AskUserQuestion`` results give ``"question"="answer"`` pairs; a content-free answer to
    a yes/no question ("Yes") is routine and skipped, and so is an answer limited to this time
    or the present (`segments.is_one_off`: "the sandbox one for now"). A short human reply
    naming one of the
    options the agent's previous prose offered ("I like option B") is recorded with that
    option's own line.
    """
    texts = _texts(messages)
    out: list[Signal] = []
    for i, (seq, msg, text) in enumerate(texts):
        if msg.get("kind") == "answer":
            for match in _ANSWER_PAIR.finditer(text):
                question, answer = _unescape(match.group(1)), _unescape(match.group(2))
                answer = _RECOMMENDED.sub("", answer).strip()
                if is_routine(answer) or _DEFERS.search(answer) or _DECLINES.match(answer):
                    continue
                if is_one_off(answer):
                    continue  # "only the open ones this time": decides this task, no rule
                out.append(
                    Signal(
                        "answer",
                        seq,
                        match.start(),
                        match.group(0),
                        text=f'The user chose "{answer}" when asked: {question}',
                        score=0.86,
                    )
                )
        elif _is_human(msg) and len(text.split()) <= MAX_CHOICE_REPLY_WORDS:
            short = len(text.split()) <= MAX_ANSWER_WORDS
            if not short and not (_PICKS.search(text) or _LABEL_LEAD.match(text.strip())
                                  or _BARE_CHOICE.match(text.strip())):
                continue  # a longer reply picks an option only with a choice verb or a label
            prior = _previous(texts, i, "text")
            if prior is None:
                continue
            option = _chosen_option(text, prior[2], short)
            if option is None and _PICKS.search(text):
                # "ok, let's take the third one" after a question about one option: the
                # options are in an earlier message of the discussion
                option = next((o for offer in _earlier_offers(texts, i)
                               if (o := _chosen_option(text, offer, short)) is not None), None)
            if option is None:
                either = (_either_choice(text, prior[2])
                          if short or _BARE_CHOICE.match(text.strip()) else None)
                if either is not None:
                    chosen, question = either
                    out.append(
                        Signal(
                            "answer",
                            seq,
                            0,
                            text.strip(),
                            text=f'The user chose "{chosen}" when asked: {question}',
                            score=0.84,
                        )
                    )
                continue
            label, line = option
            if _rejects_option(text, label):
                continue  # "option 1 doesn't work because…": a verdict on it, not a choice
            out.append(
                Signal(
                    "answer",
                    seq,
                    0,
                    text.strip(),
                    text=f"Of the options the agent offered, the user chose option {label}: "
                    f"{line}",
                    score=0.86,
                )
            )
    return out


_EITHER = re.compile(
    r"(?:^|\s)([\w.+#/-]+) or ([\w.+#/-]+(?: [\w.+#/-]+){0,4})\s*\?\s*$", re.IGNORECASE
)
"""A question offering two named alternatives ("…be YAML or TOML?")."""
_CHOICE_LEAD = re.compile(
    r"^(?:(?:let'?s |we'?ll |i'?d )?(?:go with|use|pick|take|say|stick with)\s+|definitely\s+|"
    r"(?:the )?)", re.IGNORECASE
)
_ASIDE = re.compile(r"\s*\([^()]{1,40}\)")
_NOT_ALTERNATIVES = frozenset({"not", "no", "yes", "later", "now", "else", "something", "both"})


_OPTION_VERDICT = (
    r"\s+(?:\w+\s+){0,2}?(?:doesn'?t|does not|doesnt|won'?t|will not|wont|isn'?t|is not|isnt|"
    r"can'?t|cannot|is (?:too|a bad|the wrong)|fails?|breaks?)\b"
)


def _rejects_option(reply: str, label: str) -> bool:
    """True when `reply` speaks against option `label` rather than choosing it: the label
    followed by a negative verdict ("option 1 doesn't work", "B is too slow") or after a
    "not" ("not 2", "anything but option A")."""
    name = rf"(?:option|approach|choice|variant|alternative|number|#)?\s*{re.escape(label)}\b"
    return bool(
        re.search(rf"(?<![\w-]){name}{_OPTION_VERDICT}", reply, re.IGNORECASE)
        or re.search(rf"\b(?:not|but|except|no)\s+(?:the\s+)?{name}", reply, re.IGNORECASE)
    )


_BARE_CHOICE = re.compile(r"^[\w.+#/-]+\.\s+\S")
"""A reply whose first sentence is one bare word ("Redis. The queue already …"): the word
answers the question before it, the rest gives reasons, however long."""
_ASKING_LEAD = re.compile(
    r"^(?:.*?[,:;]\s+)?(?:should|shall|do you want|would you like|want)\s+(?:i|we|me to)?\s*",
    re.IGNORECASE)


_FUNCTION_WORDS = frozenset(
    {"it", "to", "in", "on", "at", "a", "an", "the", "of", "ok", "okay", "so", "or", "and",
     "is", "me", "my", "we", "us", "you", "he", "she", "they", "this", "that", "there"})


def _phrase_choice(head: str, question: str) -> str | None:
    """The alternative of "should I A or B?" that alone names the one word `head`
    ("pinia" in "…fix it in the Vuex store or move the cart to Pinia?" → "move the cart
    to Pinia"); None when the word is in both phrases, in neither, or is no name."""
    if " " in head or len(head) < 2 or head in _NOT_ALTERNATIVES or head in _FUNCTION_WORDS:
        return None
    body = _ASKING_LEAD.sub("", question.rstrip(" ?*_`"))
    if body.lower().count(" or ") != 1:
        return None
    left, right = re.split(r"\s+or\s+", body, maxsplit=1, flags=re.IGNORECASE)
    word = re.compile(rf"(?<![\w.+#/-]){re.escape(head)}(?![\w+#/-])", re.IGNORECASE)
    hits = [phrase for phrase in (left, right) if word.search(phrase)]
    return hits[0].strip() if len(hits) == 1 else None


def _either_choice(reply: str, offer: str) -> tuple[str, str] | None:
    """(chosen alternative, question) when `reply` opens by naming one of the two
    alternatives of the agent's closing "X or Y?" question ("TOML. Same as…"), or one word
    that only one of two phrased alternatives names (`_phrase_choice`)."""
    if is_routine(reply):
        return None
    questions = [q.strip() for _, q in _sentences(offer) if q.strip().endswith("?")]
    if not questions:
        return None
    question = questions[-1]
    # an aside on each alternative ("kebab-case (--output-dir) or snake_case (--x)?") is
    # an example, not the alternative's name
    match = _EITHER.search(_ASIDE.sub("", question))
    if match is None:
        return None
    alternatives = [match.group(1), match.group(2)]
    if any(a.lower() in _NOT_ALTERNATIVES for a in alternatives):
        return None
    head = re.split(r"[.,;:!\-–—(]", reply.strip(), maxsplit=1)[0].strip()
    head = _CHOICE_LEAD.sub("", head).strip().lower()
    if not head or len(head.split()) > 4:
        return None
    for alternative in alternatives:
        name = alternative.lower()
        # "kebab" names "kebab-case": the reply may say an alternative's first part
        if head == name or (len(head) >= 3 and re.split(r"[-_ ]", name)[0] == head
                            and not any(o != alternative and re.split(r"[-_ ]", o.lower())[0]
                                        == head for o in alternatives)):
            return alternative, question.strip(" *_`")
    phrase = _phrase_choice(head, question)
    return (phrase, question.strip(" *_`")) if phrase else None


def _options(offer: str) -> dict[str, str]:
    """label (upper-cased) → the option's line, for the options an agent message lists (one
    per line, or `_inline_options` when the agent ran them into one paragraph)."""
    options: dict[str, str] = {}
    for match in _OPTION_HEAD.finditer(offer):
        key = (match.group(1) or match.group(3) or "").upper()
        body = (match.group(2) or match.group(4) or "").strip(" *:-—–")
        if key and body and key not in options:
            options[key] = body
    if len(options) < 2:
        inline = _inline_options(offer)
        if len(inline) >= 2:
            return inline
    return options


_INLINE_LABEL = re.compile(r"(?:^|(?<=[\s:;,.]))\(?([A-E]|[1-5])\)\s+(?=\S)")
"""An option label inside running prose: "1) blobs in the database, 2) files on disk" or
"(A) a shared cache, or (B) a per-worker cache"."""
_INLINE_TAIL = re.compile(r"[\s,;]*(?:\b(?:or|and)\s*)?$", re.IGNORECASE)


def _inline_options(offer: str) -> dict[str, str]:
    """Options labelled in one paragraph, when their labels run in order from 1 or A (so a
    stray "(2)" in prose is no list): label → the words up to the next label."""
    for paragraph in re.split(r"\n\s*\n", offer):
        marks = list(_INLINE_LABEL.finditer(paragraph))
        labels = [m.group(1) for m in marks]
        if len(labels) < 2 or labels[0] not in ("1", "A"):
            continue
        expected = [chr(ord(labels[0]) + k) for k in range(len(labels))]
        if labels != expected:
            continue
        options: dict[str, str] = {}
        for k, mark in enumerate(marks):
            end = marks[k + 1].start() if k + 1 < len(marks) else len(paragraph)
            body = _INLINE_TAIL.sub("", paragraph[mark.end() : end]).strip(" *")
            if k + 1 == len(marks):  # the last option ends with its sentence
                stop = re.search(r"[.!?](?:\s|$)", body)
                body = body[: stop.start()] if stop else body
            if len(body) < 3:
                break
            options[mark.group(1)] = body
        else:
            return options
    return {}


_OPTION_MENTION = re.compile(
    r"\b(?:option|approach|choice|variant|alternative)\s+([A-Za-z]|\d{1,2})\b(?!\s*[(:])",
    re.IGNORECASE,
)
_OPTION_NAME_END = re.compile(r"\s+[-—–(]\s*|[:.;]\s|\*\*")
MAX_OPTION_NAME_CHARS = 60


def name_options(text: str, offer: str | None) -> str:
    """`text` with each "option N" it mentions named from the agent's `offer`: "Option 1
    doesn't work…" → "Option 1 (store the commit hash in metadata) doesn't work…", so the
    record reads without the agent's message. Unchanged when `offer` lists no such option."""
    if not offer or not _OPTION_MENTION.search(text):
        return text
    options = _options(offer)
    if len(options) < 2:
        return text

    def named(match: re.Match[str]) -> str:
        line = options.get(match.group(1).upper())
        if not line:
            return match.group(0)
        line = line.strip(" *")
        end = _OPTION_NAME_END.search(line)
        name = re.sub(r"[*`_]{2,}|`", "", line[: end.start()] if end else line).strip(" .")
        if not name or len(name) > MAX_OPTION_NAME_CHARS:
            return match.group(0)
        if not name[:2].isupper():
            name = name[0].lower() + name[1:]
        return f"{match.group(0)} ({name})"

    return _OPTION_MENTION.sub(named, text)


def offers(messages: list[dict[str, Any]]) -> dict[int, str]:
    """seq of each human message → the agent's prose just before it (since the previous
    human message), the offer a short reply or an "option N" refers to."""
    texts = _texts(messages)
    out: dict[int, str] = {}
    for i, (seq, msg, _) in enumerate(texts):
        if _is_human(msg):
            prior = _previous(texts, i, "text")
            if prior is not None:
                out[seq] = prior[2]
    return out


_LABEL_LEAD = re.compile(r"^\W*(?:option\s+)?([A-Z]|\d)(?:[.,:;!)]|\s+[-–—])\s+\w")
"""A reply opening on a label ("A. we never send anything back", "2 - cheaper")."""
_PICKS = re.compile(
    r"\b(?:go(?:ing)? with|take|pick|choose|do|use|prefer)\s+(?:the\s+)?(?:(?:option|number|"
    r"approach)\s+([A-Za-z]|\d)\b|(first|second|third|fourth|last)(?: one\b| option\b|"
    r"(?=\s*(?:[.!,;]|$)))|"
    r"(?-i:([A-E]))\b(?![-'’]))",
    re.IGNORECASE,
)
"""A choice by position inside a longer reply ("ok let's take the third one", "we'll go
with option 2")."""
MAX_CHOICE_REPLY_WORDS = 60


_AGENT_TO_USER = re.compile(r"\byour\b|(?<!\bthank )\byou\b", re.IGNORECASE)
"""The agent's "you" in an option's words is the user ("the one your host offers"); not in a
"thank you" (nor a title holding one)."""
MAX_DISCUSSION_TURNS = 3
"""A choice by position may refer to options the agent listed this many human turns back."""


def _earlier_offers(texts: list[tuple[int, dict[str, Any], str]], index: int) -> list[str]:
    """The agent's prose before each of the last `MAX_DISCUSSION_TURNS` human messages
    before `index`, most recent first (the options a discussion went back and forth on)."""
    out: list[str] = []
    turns = 0
    for j in range(index - 1, -1, -1):
        if _is_human(texts[j][1]):
            turns += 1
            if turns > MAX_DISCUSSION_TURNS:
                break
            prior = _previous(texts, j, "text")
            if prior is not None:
                out.append(prior[2])
    return out


def _option_label(reply: str, short: bool) -> str:
    """The option label `reply` picks ("B", "3"), or "" when it picks none: any form in a
    short reply (`_OPTION_REF`, `_LABEL_LEAD`), only a choice verb with a position in a
    longer one (`_PICKS`)."""
    stripped = reply.strip()
    if short:
        ref = _OPTION_REF.search(stripped)
        if ref is not None:
            return ref.group(1) or ref.group(2) or _ordinal(ref.group(3))
    lead = _LABEL_LEAD.match(stripped)
    if lead is not None:
        return lead.group(1)
    picks = list(_PICKS.finditer(stripped))
    if not picks:
        return ""
    pick = picks[-1]
    return pick.group(1) or pick.group(3) or _ordinal(pick.group(2))


def _ordinal(word: str | None) -> str:
    word = (word or "").lower()
    return "LAST" if word == "last" else _ORDINALS.get(word, "")


def _chosen_option(reply: str, offer: str, short: bool = True) -> tuple[str, str] | None:
    """(label, option line) when `reply` names one of the options listed in `offer`."""
    label = _option_label(reply, short)
    if not label:
        return None
    options = _options(offer)
    if label == "LAST" and options:
        label = list(options)[-1]
    if len(options) < 2 or label.upper() not in options:
        return None
    line = _RECOMMENDED.sub("", re.sub(r"[*`_]+", "", options[label.upper()])).strip()
    line = _AGENT_TO_USER.sub(lambda m: "the user's" if m.group(0).lower() == "your"
                              else "the user", line)  # the agent addressed the user
    if len(line) < 8:
        return None
    detail = _option_detail(offer, label.upper())
    if detail and len(line) < MAX_OPTION_NAME_CHARS:
        line = f"{line.rstrip('.:')}: {detail[0].lower() + detail[1:]}"
    return label.upper(), line.rstrip(".:") + "."


def _option_detail(offer: str, label: str) -> str:
    """The prose line right under option `label`'s heading ("A short callout at the bottom
    of each release"), when the heading is all the option says; "" when there is none."""
    for match in _OPTION_HEAD.finditer(offer):
        if (match.group(1) or match.group(3) or "").upper() != label:
            continue
        rest = offer[match.end() :].lstrip("\n")
        line = rest.split("\n", 1)[0].strip(" \t>*-")
        line = re.sub(r"[*`_]+", "", line).strip()
        if (not line or line.startswith(("```", "|")) or _OPTION_HEAD.match(line)
                or len(line) > MAX_DETAIL_CHARS):
            return ""
        return line.rstrip(":. ")
    return ""


def corrections(messages: list[dict[str, Any]], workspace: str | None) -> dict[int, str]:
    """seq → the corrected action, for each human message right after an interrupt or a
    refused tool call (a refusal that carried its own reason is read by
    `rejection_reasons` instead).

    The message says what the agent should have done instead, so statements in it count
    as corrections even without a cue word. Routine replies ("sorry, continue") are skipped.
    """
    texts = _texts(messages)
    out: dict[int, str] = {}
    pending: str | None = None
    for i, (seq, msg, text) in enumerate(texts):
        kind = msg.get("kind")
        if kind in ("interrupt", "tool_rejection"):
            if kind == "tool_rejection" and _SAID.search(text):
                pending = None
                continue
            call = _previous(texts, i, "tool_call")
            pending = action_summary(call[2], workspace) if call else ""
            continue
        if _is_human(msg):
            if pending is not None and not is_routine(text):
                out[seq] = pending
            pending = None
    return out


def refused_calls(messages: list[dict[str, Any]]) -> dict[int, str]:
    """seq → the refused tool call's text, for each human message right after a tool call
    the user refused without a reason of its own (Gemini CLI's cancelled call, Codex's
    rejected command): that message is where the user says why. An interrupt is not a
    refusal and gives none."""
    texts = _texts(messages)
    out: dict[int, str] = {}
    pending: str | None = None
    for i, (seq, msg, text) in enumerate(texts):
        kind = msg.get("kind")
        if kind in ("interrupt", "tool_rejection"):
            pending = None
            if kind == "tool_rejection" and not _SAID.search(text):
                call = _previous(texts, i, "tool_call")
                pending = call[2] if call else None
            continue
        if _is_human(msg):
            if pending:
                out[seq] = pending
            pending = None
    return out


def _last_state(texts: list[tuple[int, dict[str, Any], str]]) -> tuple[int, str] | None:
    for seq, msg, text in reversed(texts):
        if msg.get("kind") == "tool_call" and _STATE_HEAD.match(text):
            return seq, text
    return None


_FAILURE = re.compile(
    r"\b(?:fail(?:s|ed|ing|ure)?|errors?|exceptions?|traceback|crash(?:es|ed)?|panics?|"
    r"(?:does|do|did) not (?:compile|build|pass|start|load)|(?:won'?t|can'?t|cannot) "
    r"(?:compile|build|import|find|resolve))\b|[A-Z]\w+(?:Error|Exception)\b"
)
_PROSE_SENTENCE = re.compile(r"\S(?:[^\n]*?)(?:[.!?](?=\s|$)|$)", re.MULTILINE)
"""A sentence of agent prose, ending at a stop before a space (not in "Transit.altitude")."""
_REPORT_LEAD = re.compile(r"^(?:\w+\s+){0,3}(?:are|is) (?:left|open|failing|remaining):\s+",
                          re.IGNORECASE)
_UNDER_WAY = re.compile(r"\b(?:i(?:'|’)?m|i am|i(?:'|’)ll|i will|let me|i(?:'|’)m going to)\b",
                        re.IGNORECASE)
MAX_REPORT_CHARS = 260
"""The agent's report of what it stopped on, kept with a checkpoint, is cut to this."""


def _stopped_on(prose: str) -> str:
    """What the agent's last report says failed ("test_env fails with ImportError: …"), at
    most `MAX_REPORT_CHARS`, cut at a clause end; "" when it names no failure. A checkpoint
    of work that stopped on errors names them: the next session starts from them."""
    picked: list[str] = []
    for match in _PROSE_SENTENCE.finditer(prose):
        sentence = match.group(0).strip(" *_>-")
        if sentence.endswith("?") or not _FAILURE.search(sentence) or "```" in sentence:
            continue
        if _FIRST_PERSON_ACTION.match(sentence) or _UNDER_WAY.search(sentence):
            continue  # the agent narrating its next move, not where the work stopped
        picked.append(_REPORT_LEAD.sub("", sentence))
    report = " ".join(picked)
    if len(report) > MAX_REPORT_CHARS:
        cut = max(report.rfind(". ", 0, MAX_REPORT_CHARS), report.rfind("; ", 0, MAX_REPORT_CHARS),
                  report.rfind(", ", 0, MAX_REPORT_CHARS))
        report = report[: cut if cut > MAX_REPORT_CHARS // 2 else MAX_REPORT_CHARS].rstrip(",;. ")
        report += "…" if cut <= MAX_REPORT_CHARS // 2 else "."
    if report and report[-1] not in ".!…":
        report += "."
    if report.split(" ", 1)[0].isalpha():  # an identifier keeps its case (test_env)
        report = report[0].upper() + report[1:]
    return report


def unfinished(
    messages: list[dict[str, Any]], workspace: str | None, rewrite: Any
) -> list[Signal]:
    """The session's unfinished state as at most `MAX_CHECKPOINTS` ``current`` checkpoints.

    Args:
        messages: the slice.
        workspace: the transcript's working directory (paths are shown relative to it).
        rewrite: ``str -> str`` turning the user's words into a record sentence.

    Sources, best first: the last task list with undone items; the agent's last message
    asking the user something that no human message answers; a closing message that puts
    off a part the agent's last report names open (`_left_at_stop`); the last human request
    when the agent neither reported it done nor was confirmed by the user, or when the
    user's interrupt is all that follows it.
    """
    texts = _texts(messages)
    if not texts:
        return []
    out: list[Signal] = []
    # a closing "let's continue tomorrow" leaves the turn before it in progress
    human_idx = [i for i, (_, msg, t) in enumerate(texts) if _is_human(msg) and not is_sign_off(t)]
    last_human = human_idx[-1] if human_idx else -1
    state = _last_state(texts)
    last_human_seq = texts[last_human][0] if last_human >= 0 else -1
    if state is not None and state[0] > last_human_seq:  # the list of the turn in progress
        seq, text = state
        undone = [(m.start(2), m.group(2).strip()) for m in _UNDONE.finditer(text)]
        if undone:
            items = "; ".join(item for _, item in undone[:MAX_ITEM_LIST])
            extra = len(undone) - MAX_ITEM_LIST
            more = f" (and {extra} more)" if extra > 0 else ""
            out.append(
                Signal(
                    "unfinished",
                    seq,
                    undone[0][0],
                    undone[0][1],
                    text=f"{UNFINISHED_TASKS} {items}{more}.",
                    record_kind="current",
                    score=0.84,
                )
            )
    after = texts[last_human + 1 :]
    prose = [
        (s, m, t) for s, m, t in after if m.get("role") == "assistant" and m.get("kind") == "text"
    ]
    report = _stopped_on(prose[-1][2]) if prose else ""
    if out and report:
        out[0] = replace(out[0], text=f"{out[0].text} Stopped on: {report}")
    if prose and last_human >= 0:
        seq, _, final = prose[-1]
        question = _final_question(final)
        if question is not None:
            start, sentence, body = question
            out.append(
                Signal("unfinished", seq, start, sentence, text=body, record_kind="current",
                       score=0.8)
            )
    asked = _asked_request(texts, human_idx) if last_human >= 0 and not out else None
    if last_human >= 0 and not out and asked is not None:
        seq, _, request = texts[asked]
        after = texts[asked + 1 :]
        left_open = bool(prose) and bool(_LEFT_OPEN.search(prose[-1][2]))
        finished = not left_open and (
            any(_DONE.search(t) for _, m, t in after
                if m.get("role") == "assistant" and m.get("kind") == "text")
            or _closing_report(after, report)
        )
        # a request the user interrupted the agent on is started work left whole; one the
        # slice merely ends on may be answered in the next slice, and is not read as left
        started = any(m.get("role") == "assistant" or m.get("kind") == "interrupt"
                      for _, m, _ in after)
        if started and not finished and not is_routine(request) and not _CONFIRM.search(request):
            piece = _request_piece(request)
            if piece is not None:
                start, evidence, words = piece
                files = _touched_files(after, workspace)
                where = f" ({', '.join(files)})" if files else ""
                sentence = rewrite(words).rstrip(".?")
                if sentence:
                    sentence = sentence[0].lower() + sentence[1:]
                    out.append(
                        Signal(
                            "unfinished",
                            seq,
                            start,
                            evidence,
                            text=f"{UNFINISHED_REQUEST} {sentence}{where}."
                            + (f" Stopped on: {report}" if report else ""),
                            record_kind="current",
                            score=0.78,
                        )
                    )
    if all(sig.text.startswith(UNFINISHED_REQUEST) for sig in out):
        # a closing message deferring a part the agent named open says more precisely where
        # the work stopped than the request before it
        left = _left_at_stop(texts)
        if left is not None:
            out = [left]
    return out[:MAX_CHECKPOINTS]


_LATER = re.compile(
    r"\b(?:tomorrow|tomorow|tmrw|tmr|2morrow|next (?:time|week|session|sprint)|another day|"
    r"(?:on )?(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)|after the weekend|"
    r"in the morning|enough for (?:today|now|tonight)|stop (?:here|there|for (?:today|now))|"
    r"later|(?:we|i)(?:'ll|’ll| will)? (?:continue|resume|finish|pick (?:it |this |that )?up)|"
    r"when (?:\w+ ){1,4}(?:is|are) (?:back|here|ready)|when (?:\w+ ){1,4}(?:comes?|arrives?))\b",
    re.IGNORECASE,
)
"""A closing message putting work off ("X next time", "stop here", "i look at it monday",
"X later", "we continue with X when Y is back")."""
_OPEN_PART = re.compile(
    r"\b(?:is|are)(?:n'?t|’t| (?:still )?not) (?:\w+ )?(?:started|done|finished|written|"
    r"migrated|implemented|handled|rewritten|covered|wired(?: up)?|ported|converted|added|built|"
    r"scheduled|resized|updated|fixed|tested|run|bound|connected|translated|deployed)(?: yet)?\b"
    r"|\b(?:not|no|n'?t) (?:\S+ ){0,3}yet\b|\bthat part is not done\b"
    r"|\bha(?:ve|s)(?:n'?t| not) (?:started|changed|fixed|finished|touched) (?:it|that|them)\b"
    r"|\bfail(?:s|ing)? (?:on|with|for|when|because)\b"
    r"|\bstill (?:fails|failing|broken|crashes|errors)\b",
    re.IGNORECASE,
)
"""A sentence of the agent's report naming a part of the work left open ("X isn't done",
"Y has no handler yet", "Z fails on …; I have not changed it")."""
_STILL_WRONG = re.compile(
    r"\bstill (?:computes|uses|calls|rounds|reads|writes|sends|returns|stores|parses|relies|"
    r"depends|hardcodes|ignores|skips|leaks|retries|loads|drops|logs)\b",
    re.IGNORECASE,
)
"""A sentence of the agent's report naming a part that still does the old, wrong thing
("X still writes local time"); it is open only when the closing message names it."""
_LEFT_ON_PURPOSE = re.compile(
    r"\b(?:as (?:you )?(?:asked|requested|agreed|discussed)|on purpose|deliberately|"
    r"intentionally|by design)\b", re.IGNORECASE)
"""A part the agent left as the user asked ("not removed yet, as you asked") is not open."""
MAX_STOP_WORDS = 24
"""A closing message at most this long can stop the session (a longer one asks for work)."""
_TOPIC_STOP = frozenset(re.findall(
    r"\S+", "the a an it is are not yet still and or of to in on for with we i do look at "
             "leave ok okay stop here there today next time week tomorrow tomorow another day "
             "this that those these enough now"))


_FOR_ALWAYS = re.compile(
    r"\b(?:never|ever|always|from now on|any ?more|in (?:the )?future|no longer|again)\b",
    re.IGNORECASE,
)
"""A word saying a prohibition holds beyond this session ("never", "from now on")."""
_PLAIN_PROHIBITION = re.compile(r"^\W*(?:(?:and|but|also|just|pls|please)\W+)*(?:do not|"
                                r"don'?t|don’t|dont)\b", re.IGNORECASE)


def stops_session(text: str) -> bool:
    """True when the human message `text` is a short one (`MAX_STOP_WORDS`) that stops the
    session or puts work off (`_LATER`, `is_sign_off`): what else it asks is about this
    session's leftovers."""
    return len(text.split()) <= MAX_STOP_WORDS and (bool(_LATER.search(text))
                                                    or is_sign_off(text))


def is_parting_one_off(sentence: str, message: str) -> bool:
    """True when `sentence` of the session's last human `message` is a plain prohibition
    ("don't commit the output") with no word saying it holds beyond the session
    (`_FOR_ALWAYS`) and `message` stops the session (`stops_session`): it is about what this
    session leaves behind, not a rule."""
    return (bool(_PLAIN_PROHIBITION.match(sentence)) and not _FOR_ALWAYS.search(sentence)
            and stops_session(message))


def _topic_word(word: str) -> str:
    """`word` without a plural ending ("retries" → "retry", "pages" → "page")."""
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith("s") and not word.endswith("ss") and len(word) > 3:
        return word[:-1]
    return word


def _topic(text: str) -> set[str]:
    """The content words of `text`, singular; a hyphenated word also gives its parts
    ("digest-mode" → digest-mode, digest, mode) and a CamelCase name its words
    ("ExportJob.py" → export, job)."""
    words = re.findall(r"[a-z0-9][a-z0-9_-]{2,}", text.lower())
    words += [w.lower() for name in re.findall(r"\b[A-Z][a-z]+[A-Z]\w*", text)
              for w in re.findall(r"[A-Z][a-z]{2,}", name)]
    parts = [p for w in words if "-" in w for p in w.split("-") if len(p) >= 3]
    return {_topic_word(w) for w in words + parts if w not in _TOPIC_STOP}


def _left_at_stop(texts: list[tuple[int, dict[str, Any], str]]) -> Signal | None:
    """The part of the work the agent's last report names open ("the currency conversion
    is not written yet", `_OPEN_PART`) when the session's last human message stops or puts
    work off (`_LATER`: "ok stop here, currency conversion tomorrow", "leave the blending
    for next week") and the agent did no work after it; a part left as the user asked
    (`_LEFT_ON_PURPOSE`) is not open. The message must be a short
    statement, and name what the open part names (a shared word) unless it only signs off
    (`is_sign_off`). The checkpoint quotes the user's closing message; None otherwise."""
    human = [i for i, (_, msg, _) in enumerate(texts) if _is_human(msg)]
    if not human:
        return None
    last = human[-1]
    seq, _, closing = texts[last]
    stripped = closing.strip()
    if (len(stripped.split()) > MAX_STOP_WORDS or "?" in stripped
            or not _LATER.search(stripped)):
        return None
    if any(m.get("role") == "assistant" and m.get("kind") == "tool_call"
           for _, m, _ in texts[last + 1:]):
        return None  # the agent went on working: the message asked for work
    prose = [t for _, m, t in texts[:last]
             if m.get("role") == "assistant" and m.get("kind") == "text"]
    if not prose or not any(_is_human(m) for _, m, _ in texts[:last]):
        return None
    # the agent's last report, and what it said after the closing message without working
    report = "\n".join([prose[-1]] + [t for _, m, t in texts[last + 1:]
                                      if m.get("role") == "assistant" and m.get("kind") == "text"])
    open_parts = [m.group(0).strip(" *_>-") for m in _PROSE_SENTENCE.finditer(report)
                  if _OPEN_PART.search(m.group(0)) and not _LEFT_ON_PURPOSE.search(m.group(0))
                  and not m.group(0).rstrip().endswith("?")]
    said = _topic(stripped)
    named = [p for p in open_parts if said & _topic(p)]
    if not named:  # a part that still does the old thing is open only when named
        named = [m.group(0).strip(" *_>-") for m in _PROSE_SENTENCE.finditer(report)
                 if _STILL_WRONG.search(m.group(0)) and not m.group(0).rstrip().endswith("?")
                 and said & _topic(m.group(0))]
    if not open_parts and not named:
        return None
    if not named and not is_sign_off(stripped):
        return None
    parts = " ".join(dict.fromkeys((named or open_parts)[:2]))
    if len(parts) > MAX_REPORT_CHARS:
        parts = parts[:MAX_REPORT_CHARS].rsplit(" ", 1)[0].rstrip(",;:") + "…"
    if parts.split(" ", 1)[0].isalpha():
        parts = parts[0].upper() + parts[1:]
    # the quote is the sentence that defers, not the closing message's other asks
    deferring = [m.group(0).strip() for m in _PROSE_SENTENCE.finditer(stripped)
                 if _LATER.search(m.group(0))]
    quote = next((d for d in deferring if any(_topic(d) & _topic(p) for p in named)),
                 deferring[0] if deferring else stripped)
    return Signal("unfinished", seq, closing.index(quote), quote[:1_000],
                  text=f"{UNFINISHED_LEFT} {parts}", record_kind="current", score=0.8)


def _asked_request(
    texts: list[tuple[int, dict[str, Any], str]], human_idx: list[int]
) -> int | None:
    """Index in `texts` of the request the session's work answers: the last human message,
    or, when that one is a rule said mid-task that asks for no work ("don't bump the schema
    version, it stays 7", a cue of `rules.match_rules`) and the agent went on working
    after it, the human message before it when that one asks for work. When the last
    message only limits the work to this one time ("for this run use X") and the agent
    acted on it, the latest earlier message that asks for work and is no such limit itself
    (a correction in between is skipped); None when there is none: a one-time limit is never
    the checkpointed request. A closing remark the agent did not act on is the last word,
    and so is any message that asks for work."""
    last = human_idx[-1]
    text = texts[last][2]
    acted = any(m.get("role") == "assistant" for _, m, _ in texts[last + 1 :])
    if acted and is_one_time(text):
        # "for this run just use the eu bucket": a limit on the work asked before it, past
        # any correction said in between; with no such request, none is checkpointed
        asked = [i for i in human_idx[:-1] if texts[i][1].get("kind") == "text"
                 and _request_piece(texts[i][2]) is not None and not is_one_time(texts[i][2])]
        return asked[-1] if asked else None
    if (len(human_idx) < 2 or not acted or _request_piece(text) is not None
            or is_routine(text) or _CONFIRM.search(text) or not match_rules(text)):
        return last
    before = human_idx[-2]
    return before if _request_piece(texts[before][2]) is not None else last


def _closing_report(after: list[tuple[int, dict[str, Any], str]], failure: str) -> bool:
    """True when the session ended on the agent's prose reporting the state of the work:
    the last message after the user's request is the agent's text, it names no failure
    (`failure` is `_stopped_on` of it), and it does not announce a next move ("Next I'll…",
    "Let me…"). Reporting in plain words ("the exporter streams rows now") counts; the
    request is then not left as unfinished work."""
    if not after or failure:
        return False
    _, msg, text = after[-1]
    if msg.get("role") != "assistant" or msg.get("kind") != "text":
        return False
    return not (_FIRST_PERSON_ACTION.match(text) or _UNDER_WAY.search(text))


_CHOICE = re.compile(
    r"\b(?:which|prefer|choose|pick|option|approach|or\b|what do you want)", re.IGNORECASE
)
_SHIP = re.compile(
    r"\b(?:commit|push|merge|deploy|release|publish|pull request|PR|open (?:a|the) PR)\b",
    re.IGNORECASE,
)


def _final_question(text: str) -> tuple[int, str, str] | None:
    """(start, question, record text) for a question that ends the agent's message and
    leaves the session waiting: a choice the user has to make (options offered) or a
    go-ahead to ship finished work (commit, push, merge, deploy). An offer to start more
    work ("want me to start on X?") or a generic closing offer is not waiting state."""
    stripped = text.rstrip()
    if _GENERIC_OFFER.search(stripped[-300:]):
        return None
    paragraphs = [m for m in re.finditer(r"(?:[^\n]|\n(?!\s*\n))+", stripped)]
    if not paragraphs or not _ASKS_USER.search(paragraphs[-1].group(0)):
        return None
    closing = paragraphs[-3:]
    questions: list[tuple[int, str]] = []
    for para in closing:
        for start, sentence in _sentences(para.group(0), para.start()):
            clean = sentence.strip(" *_`#>-")
            if clean.endswith("?") and len(clean.split()) >= 4:
                questions.append((start + sentence.index(clean[0]) if clean else start, clean))
    if not questions:
        return None
    options = [
        (m.group(1) or m.group(3) or "", (m.group(2) or m.group(4) or "").strip(" *:-—–"))
        for m in _OPTION_HEAD.finditer(stripped)
    ]
    options = [
        (k, _RECOMMENDED.sub("", re.sub(r"[*`_]+", "", v)).strip()) for k, v in options if k and v
    ]
    start, question = next(((s, q) for s, q in questions if _CHOICE.search(q)), questions[-1])
    labelled = [k for k, _ in options if not k.isdigit()]
    # a numbered list of what was done is not a set of options: only lettered options, or a
    # question that itself asks to choose, make a choice
    if _CHOICE.search(question) or (len(labelled) >= 2 and not _SHIP.search(question)):
        # an option worded as a question ("…: choose a license?") is still a choice offered
        offered = "; ".join(f"{k}: {v}".rstrip(".?") for k, v in options[:MAX_ITEM_LIST])
        body = f"Awaiting the user's choice: {question}"
        return start, question, body + (f" (options offered: {offered})." if offered else "")
    if _SHIP.search(question):
        first = _sentences(stripped)[0][1] if _sentences(stripped) else ""
        first = first[0].lower() + first[1:].rstrip(".:") if 0 < len(first) < 120 else ""
        changes = _change_items(stripped[:start])
        status = "; ".join(part for part in (first, changes) if part)
        status = f" ({status})" if status else ""
        return start, question, f'Awaiting the user\'s answer to "{question}"{status}.'
    return None


_LIST_ITEM = re.compile(r"^[ \t]*(?:\d{1,2}[.)]|[-*•])[ \t]+(.+)$", re.MULTILINE)
_BOLD_LABEL = re.compile(r"^\*\*([^*\n]{2,40})\*\*")
MAX_CHANGE_ITEM_CHARS = 40
"""An item of the list of changes is named by at most this much (its bold label, or its
words up to the first clause mark)."""


def _change_items(text: str) -> str:
    """What a list of changes before a go-ahead question names ("changed: session ID,
    transcript entries"): each item's bold label, or its first words up to a clause mark,
    at most `MAX_ITEM_LIST` items; "" when the message lists nothing. The checkpoint then
    says what is waiting to ship, not only that something is."""
    names: list[str] = []
    for match in _LIST_ITEM.finditer(text):
        item = match.group(1).strip()
        bold = _BOLD_LABEL.match(item)
        name = bold.group(1) if bold else re.split(r"[:;(—–]| - ", item, maxsplit=1)[0]
        name = re.sub(r"[*`_]+", "", name).strip(" .,:")
        if name[1:2].islower():  # "Header row" → "header row"; "CSV export" stays
            name = name[0].lower() + name[1:]
        if len(name) > MAX_CHANGE_ITEM_CHARS:
            name = name[:MAX_CHANGE_ITEM_CHARS].rsplit(" ", 1)[0]
        if len(name) >= 3 and name not in names:
            names.append(name)
    if not names:
        return ""
    more = len(names) - MAX_ITEM_LIST
    listed = ", ".join(names[:MAX_ITEM_LIST]) + (f" and {more} more" if more > 0 else "")
    return f"changed: {listed}"


_ASK_FORM = re.compile(
    r"^(?:let'?s|let us|please|pls|(?:can|could|would) you(?: please)?|go ahead and)\s+",
    re.IGNORECASE,
)
_TAG = re.compile(r",?\s*(?:right|correct|no|isn'?t it|don'?t you think)\?\s*$", re.IGNORECASE)
"""A tag question: the sentence states something and asks for confirmation."""
_REQUEST_WORD = re.compile(
    r"\b(?:let'?s|let us|please|pls|can you|could you|would you|need to|want|add|create|"
    r"write|fix|make|implement|update|move|rename|remove|delete|build|run|set up|help|migrate|"
    r"convert|port|upgrade|refactor|replace)\b",
    re.IGNORECASE,
)


_OWN_FUTURE = re.compile(
    r"\b(?:we|i)(?:'ll|’ll| will| are going to|'re going to| am going to|'m going to)\s+"
    r"(?:\w+\s+){0,2}$",
    re.IGNORECASE,
)
"""What comes before a request word when the user states their own plan ("we'll add the
photo upload later"): a plan told to the agent, not work asked of it."""


_IMPERATIVE = re.compile(
    r"^\W*(?:(?:ok(?:ay)?|so|and|also|now|then)\W+)*(?:swap|switch|change|drop|bump|split|"
    r"extract|rewrite|wire up|hook up|integrate|start|tag)\b"
    r"(?!\s+(?:is|are|was|were|has|have|seems?|looks?)\b)",
    re.IGNORECASE,
)
"""A sentence opening on a verb of change is a request ("Switch the parser to Y in z.py")."""


def opens_on_change(sentence: str) -> bool:
    """True when `sentence` opens on a verb of change asking for work ("Switch X to Y")."""
    return bool(_IMPERATIVE.match(sentence))


def _asks(sentence: str) -> bool:
    """True when `sentence` asks for work: a request word (`_REQUEST_WORD`) not inside the
    user's statement of their own future ("we will add…"), or an imperative opening it."""
    return bool(_IMPERATIVE.match(sentence)) or any(
        not _OWN_FUTURE.search(sentence[: m.start()]) for m in _REQUEST_WORD.finditer(sentence)
    )


def _request_piece(text: str) -> tuple[int, str, str] | None:
    """(start, evidence, request words) of a human message's request: its first paragraph
    without pasted references (``@path`` mentions, URLs, code), at most 300 characters; the
    words start at the first sentence that asks for something, without the asking form
    ("let's", "can you"). None for a question that asks for no work ("…, right?")."""
    para_end = text.find("\n")
    para = text[: para_end if para_end != -1 else len(text)]
    para = para.rstrip()
    lead = len(para) - len(para.lstrip())
    para = para.strip()
    if len(para) < 8 or "```" in para or para.startswith("@"):
        return None
    if len(para) > 300:
        cut = max(para.rfind(". ", 0, 300), para.rfind("? ", 0, 300))
        para = para[: cut + 1] if cut > 40 else para[:300].rsplit(" ", 1)[0]
    pieces = _sentences(para)
    # "lets continue tmrw" closing the message ends the day; it asks for no work
    first = next((i for i, (_, p) in enumerate(pieces) if _asks(p) and not is_sign_off(p)),
                 None)
    if first is None and pieces and _TAG.search(para):
        first = 0  # a concern raised for confirmation ("…, right?") and left open
    if first is None:
        return None
    words = para[pieces[first][0] :]
    if words.rstrip().endswith("?") and not _ASK_FORM.match(words) and not _TAG.search(words):
        return None
    words = _TAG.sub("", _ASK_FORM.sub("", words)).rstrip(" ?")
    return lead, para, words


_PATH_IN_CALL = re.compile(r"^(?:Read|Edit|Write|MultiEdit|NotebookEdit|write_file|replace|"
                           r"read_file|apply_patch)\((/[^)\s]+|[\w./-]+\.\w+)\)$")


def _touched_files(
    after: list[tuple[int, dict[str, Any], str]], workspace: str | None
) -> list[str]:
    """Files the agent read or changed after the last request (relative to the workspace),
    most recent first, at most two; files outside the workspace are left out."""
    files: list[str] = []
    for _, msg, text in reversed(after):
        if msg.get("kind") != "tool_call":
            continue
        match = _PATH_IN_CALL.match(text.strip())
        if not match:
            continue
        path = match.group(1)
        rel = _relative(path, workspace)
        if rel.startswith("/") or rel.startswith("~") or rel in files:
            continue
        files.append(rel)
        if len(files) == 2:
            break
    return files


_NAMED_REPLACEMENT = re.compile(
    r"^\W*(?:(?:no|nope|nah)\W+)?(?:it'?s|it is|that'?s|that is)\s+(`?[A-Za-z][\w.+#/-]*`?)"
    r"(?:\s+here|\s+in this (?:repo|project|codebase))?\s*,?\s+not\s+"
    r"(`?[A-Za-z][\w.+#/-]*`?)\s*[.!]*$",
    re.IGNORECASE,
)
"""A correction naming only the replacement: "it's dayjs here, not moment"."""
_NOT_NAMES = frozenset([
    "a", "an", "the", "this", "that", "it", "my", "your", "our", "their", "its", "one", "me",
    "you", "him", "her", "them", "us", "here", "there", "now", "then", "yet", "today",
    "tomorrow", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday",
    "january", "february", "march", "april", "may", "june", "july", "august", "september",
    "october", "november", "december",
])


def _name_like(word: str) -> bool:
    """True for a word said as a name: with a digit or a mark ("Chart.js", "date-fns"),
    capitalised as typed ("Leaflet"), or no common English word ("dayjs")."""
    return (bool(re.search(r"[\d._+#/-]", word)) or word[:1].isupper()
            or not spelling.is_english_word(word))


def named_replacements(messages: list[dict[str, Any]]) -> list[Signal]:
    """A human message that says only "it's X, not Y" (X and Y bare names, "here" or "in
    this repo" allowed), where Y is a word of the agent's messages since the user last
    spoke: the user corrects a library, tool or name the agent reached for, and the record
    keeps the user's words. X must be said as a name (`_name_like`): "it's green, not red"
    is a trait of the thing at hand. An "X, not Y" about anything the agent did not use, a
    day or a month ("it's Tuesday, not Monday") or with an article ("the second tab, not
    the first") is not read.
    """
    texts = _texts(messages)
    out: list[Signal] = []
    for i, (seq, msg, text) in enumerate(texts):
        if not _is_human(msg):
            continue
        match = _NAMED_REPLACEMENT.match(text.strip())
        if match is None:
            continue
        new, old = (match.group(k).strip("`").lower() for k in (1, 2))
        if new in _NOT_NAMES or old in _NOT_NAMES or new == old:
            continue
        if not _name_like(match.group(1).strip("`")):
            continue  # "it's green, not red": a trait of the thing at hand, no library
        used: set[str] = set()
        for j in range(i - 1, -1, -1):
            if _is_human(texts[j][1]):
                break
            if texts[j][1].get("role") == "assistant":
                used |= {w.lower().rstrip(".") for w in re.findall(r"[\w.+#/-]+", texts[j][2])}
        if old.rstrip(".") not in used:
            continue
        sentence = text.strip()
        out.append(Signal("correction", seq, text.index(sentence), sentence, source=sentence,
                          score=0.8))
    return out


def findings(messages: list[dict[str, Any]]) -> list[Signal]:
    """The agent's explanation of a cause, kept when the user's next message confirms the
    result works ("ok, works"): the one best sentence per session, as a lesson."""
    texts = _texts(messages)
    out: list[Signal] = []
    for i, (_, msg, text) in enumerate(texts):
        if not _is_human(msg):
            continue
        words = len(text.split())
        confirmed = words <= 12 and _CONFIRM.search(text)
        acknowledged = words <= MAX_ACKNOWLEDGE_WORDS and _ACKNOWLEDGE.search(text)
        if not (confirmed or acknowledged):
            continue
        best: tuple[int, int, str] | None = None
        for j in range(i - 1, -1, -1):
            seq, prev, ptext = texts[j]
            if _is_human(prev):
                break
            if prev.get("role") != "assistant" or prev.get("kind") != "text":
                continue
            for start, sentence in _sentences(ptext):
                if not (40 <= len(sentence) <= 260) or _FIRST_PERSON_ACTION.match(sentence):
                    continue
                if not _CAUSE.search(sentence) or sentence.endswith("?") or "`" * 3 in sentence:
                    continue
                if best is None or len(sentence) < len(best[2]):
                    best = (seq, start, sentence)
        if best is not None:
            seq, start, sentence = best
            remark = _remark(text) if acknowledged else ""
            source = f"{sentence.rstrip('.')}; {remark}" if remark else sentence
            covers = (texts[i][0], remark) if remark else None
            out.append(Signal("finding", seq, start, sentence, source=source, score=0.76,
                              covers=covers))
    return out[-1:]


_REMARK_AFTER = re.compile(r"\b(?:good to know|that explains (?:it|a lot))\b\W*", re.IGNORECASE)


def _remark(text: str) -> str:
    """What the user adds after acknowledging a finding ("good to know, the field team sends
    everything from Excel"): context the lesson keeps; "" when nothing follows or the rest
    is a question or another acknowledgement ("good catch, keep that in mind")."""
    match = _REMARK_AFTER.search(text)
    if match is None:
        return ""
    tail = text[match.end() :].strip(" ,.;:!-–—")
    if len(tail.split()) < 4 or "?" in tail or _ACKNOWLEDGE.search(tail) or is_routine(tail):
        return ""
    return tail

