"""Whether a sentence said right after a refused tool call is the refusal's lasting reason.

Claude Code carries the user's reason inside the refusal itself; Gemini CLI (a cancelled
call) and Codex (a rejected command) record the refusal bare and the user gives the reason
in their next message. A reason usually names what is so about the project that makes the
refused call wrong ("redis runs in a container here", "no vendored X, the host ships its
own") and carries none of the contrast words a correction is otherwise read by. This module
decides, for one sentence of that next message, whether it reads as such a reason: a
statement in the present tense about something the refused call names, or a refusal of the
thing itself ("no moment.js in this codebase"). It refuses what is not a lasting reason:
questions, the state of things right now ("the tests are running in my other terminal"),
what happened ("the migration already ran"), a step to take now ("show me the diff first")
and anything that names nothing of the refused call.
"""

from __future__ import annotations

import re

_NO_THING = re.compile(
    r"^no\s+(?!(?:idea|worries|problem|problems|need|thanks|thank|rush|way|wait|clue|"
    r"matter|biggie|sorry|one|luck|more|longer|not|it|that|this|i|you|we)\b)[\w.@/-]",
    re.IGNORECASE,
)
"""A refusal of the thing itself: "no moment.js here", "no vendored numpy, …" (not "no
idea", "no worries", "no need", "no, …")."""

_PRONOUN_START = re.compile(
    r"^(?:i|i'm|im|i've|you|you're|we'll|let'?s|let|please|pls|can|could|would|will|why|"
    r"what|how|when|where|who|which|is|are|do|does|did|this|that|there|here|ok|okay|"
    r"thanks|so|and|but|also|then|now|first|just|wait|hold|sorry|oops|hmm|hm)\b",
    re.IGNORECASE,
)
"""An opening that is no project thing stated about: a person, a question, a filler."""

_PRESENT_STATE = re.compile(
    r"^(?:[\w.@/`'+-]+\s+){1,5}?(?:is|are|runs|uses|ships|comes|lives|handles|owns|"
    r"manages|starts|provides|bundles|installs|belongs|stays|goes|has|needs)\b",
    re.IGNORECASE,
)
"""A present-tense statement of how a named thing is ("the nginx config is managed by …",
"redis runs in a container here", "the host ships its own numpy")."""

_NOT_LASTING = re.compile(
    r"\b(?:is|are|was|were)\s+(?:still\s+|now\s+|currently\s+|just\s+)?(?:\w+ing|broken|down|"
    r"busy|full|empty|dead|gone|missing|slow|stuck|locked|offline)\b"
    r"|\b(?:yesterday|earlier|last\s+(?:time|week|night)|right now|at the moment|"
    r"currently|again)\b"
    r"|\b(?:was|were|did|had|ran|went|broke|failed|crashed)\b",
    re.IGNORECASE,
)
"""The state of things right now or what happened: "are running in my terminal", "is
broken again", "already ran yesterday"."""

_ACTION_WORDS = frozenset(
    ["edit", "write", "read", "call", "command", "file", "bash", "shell", "sudo", "install"]
)


def names_the_action(sentence: str, action: str) -> bool:
    """True when `sentence` shares a word of four or more letters with `action` (the refused
    call's summary, e.g. "`npm install moment` command"), tool words aside."""
    said = {w.lower() for w in re.findall(r"[A-Za-z]{4,}", sentence)}
    named = {w.lower() for w in re.findall(r"[A-Za-z]{4,}", action)} - _ACTION_WORDS
    return bool(said & named)


def is_refusal_reason(sentence: str, action: str) -> bool:
    """True when `sentence`, said in the human message right after the user refused
    `action` with no reason of its own, states a lasting reason for the refusal: it names
    something of `action`, asks nothing, and either refuses the thing ("no X …") or states
    in the present tense how a named thing is; the state of things right now and past
    events are not reasons. `action` is the refused call's summary; "" (unknown) never
    gives a reason."""
    text = sentence.strip().strip("*_>")
    if not action or not text or text.endswith("?") or not names_the_action(text, action):
        return False
    if _NOT_LASTING.search(text):
        return False
    if _NO_THING.match(text):
        return True
    return not _PRONOUN_START.match(text) and bool(_PRESENT_STATE.match(text))
