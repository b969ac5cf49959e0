"""A statement that gives an earlier rule's value another one: "switch X to Y", "Y instead".

`switch_of(text)` reads one segment for the value it changes to and the value it replaces:

- "switch / change / move the formatter to fourmolu, ormolu fights with our CPP blocks":
  the new value follows "to"; the old one opens the next clause (the reason it goes);
- "make the timeout 45 s instead, 90 s blocks the pool": the new value comes before
  "instead";
- "use plotnine instead of matplotlib", "replace cabal with stack", "swap X for Y",
  "switch the builds from X to Y": both are named.

A value is a name ("fourmolu", "lua-format") or a number with its unit ("45 s", "2000 ms");
a number without a unit is none (its subject is unknown), and the old value must be of the
new one's type (a name for a name, a number for a number). Which earlier rule the change is
about is the caller's question (`Switch.named_in`): the old value must be named there with
the new one's unit, and a part the change names ("… in the e2e suite", `Switch.scope`)
must be one the rule names too (`Switch.fits`). Word patterns, not understanding: a change
said any other way is not read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Switch", "may_switch", "switch_of"]

_NAME = r"[A-Za-z][\w+#-]*(?:\.[\w+#-]+)*"
_NUMBER = r"\d+(?:\.\d+)?"
_UNIT = r"[A-Za-z%]{1,12}"
_VALUE = rf"(?:{_NUMBER}(?:\s*{_UNIT})?|{_NAME})"
_NOT_VALUES = frozenset(re.findall(
    r"\S+",
    "it this that these those them we i you they he she the a an and but so then which "
    "because since as there here now please pls thanks one way too also all everything "
    "something nothing",
))
"""Words that open a clause without naming a value ("…, it fights …", "…, the old one …")."""

_TO = re.compile(
    rf"\b(?:switch|change|move)\b(?P<subject>(?:\s+[\w.'-]+){{0,4}}?)\s+(?:over\s+)?to\s+"
    rf"(?P<new>{_VALUE})(?P<rest>.*)$",
    re.IGNORECASE,
)
_INSTEAD = re.compile(
    rf"^(?P<subject>.*?)(?:^|\s)(?P<new>{_VALUE})\s+instead\b(?!\s+of\b)(?P<rest>.*)$",
    re.IGNORECASE,
)
_SUBJECT_STOP = frozenset(re.findall(
    r"\S+", "the a an it that this them those these its our my your make use set every each "
             "also just please pls actually ok okay so and then now all over"))
_GENERIC_SETTING = frozenset(re.findall(
    r"\S+", "limit value number size amount max maximum min minimum cap threshold interval "
             "period frequency rate"))
"""Words that name a number's setting only in general ("make the limit 50 MB instead"):
such a change is tied to a rule by its unit, like one that names nothing."""
_NUMBER_LEAD_STOP = frozenset(re.findall(
    r"\S+", "to be is are should must at of for by with from can could would will"))
"""Words between a number's setting and the number ("the backoff should be 45 s")."""
_NAMED = re.compile(
    rf"(?P<new>{_VALUE})\s+(?:instead of|rather than|in place of)\s+(?P<old>{_VALUE})"
    rf"|\b(?:replace|swap)\s+(?P<old2>{_VALUE})\s+(?:with|for)\s+(?P<new2>{_VALUE})"
    rf"|\b(?:switch|chang|mov|migrat|go)\w*\b(?:\s+[\w.'-]+){{0,3}}?\s+from\s+"
    rf"(?P<old3>{_VALUE})\s+to\s+(?P<new3>{_VALUE})",
    re.IGNORECASE,
)
_REASON = re.compile(
    rf"^\s*(?:,|;|:|\s[-–—])\s*(?:(?:since|because|as)\s+)?(?P<old>{_VALUE})\b", re.IGNORECASE
)
"""The clause after the change opening on the old value: ", ormolu fights with …"."""
_CUE = re.compile(r"\b(?:switch|change|move|instead|rather than|in place of|replace|swap|from)\b",
                  re.IGNORECASE)
_WORDS = re.compile(r"[a-z0-9][\w.+#-]*")
_SCOPE = re.compile(r"\b(?:in|for|on|within|inside|across)\s+((?:[\w.+#/-]+\s*){1,4})",
                    re.IGNORECASE)
_SCOPE_STOP = frozenset(re.findall(r"\S+", "the a an this that these those our my all every "
                                           "each now it them"))
_SPLIT_NUMBER = re.compile(rf"^({_NUMBER})\s*({_UNIT})?$")


def _stem_shared(a: str, b: str) -> bool:
    """True when `a` and `b` open on one stem: equal, or a shared start of at least four
    letters that is the whole of the shorter one ("lint" / "linter")."""
    short, long_ = sorted((a, b), key=len)
    return (len(short) >= 4 and long_.startswith(short)) or a == b


@dataclass(frozen=True)
class Switch:
    """One change of value.

    Attributes:
        new: the value changed to, as written ("fourmolu", "45 s").
        old: the value replaced, as written ("ormolu", "90").
        unit: the new value's unit when it is a number ("s"), else "".
    """

    new: str
    old: str
    unit: str
    scope: frozenset[str] = frozenset()
    """Content words of the part the change is limited to ("… in the e2e suite")."""
    subject: frozenset[str] = frozenset()
    """Content words naming what changes ("switch the *screenshot tests* to firefox")."""

    def fits(self, text: str) -> bool:
        """True when the change may be about `text`: it names no part, or one `text`
        names ("use fakes instead of mocks in the e2e suite" is not about "use mocks in
        unit tests"); and what changes, where the change names it, is named in `text`
        too, a shared stem of four letters enough ("switch the linter to Y" is about
        "lint with X"; "switch the screenshot tests to firefox" is not about "run the e2e
        suite on chrome"; "make the cache ttl 45 s instead" is not about "set the request
        timeout to 90 s"). A number whose change names nothing, or only a setting in
        general ("make it 45 s", "make the limit 50 MB"), is tied by its unit."""
        words = set(_WORDS.findall(text.lower()))
        if self.scope and not self.scope & words:
            return False
        if not self.subject or (self.unit and self.subject <= _GENERIC_SETTING):
            return True
        return any(_stem_shared(a, b) for a in self.subject for b in words)


    def _old_pattern(self) -> re.Pattern[str]:
        number = _SPLIT_NUMBER.match(self.old)
        if self.unit and number:
            return re.compile(rf"(?<![\w.]){re.escape(number.group(1))}\s*"
                              rf"{re.escape(self.unit)}\b", re.IGNORECASE)
        return re.compile(rf"(?<![\w.+#-]){re.escape(self.old)}(?![\w+#-]|\.\w)",
                          re.IGNORECASE)

    def named_in(self, text: str) -> bool:
        """True when `text` names the old value (a number with the new value's unit) and
        not the new one."""
        new = re.compile(rf"(?<![\w.+#-]){re.escape(self.new)}(?![\w+#-]|\.\w)", re.IGNORECASE)
        return bool(self._old_pattern().search(text)) and not new.search(text)

    def applied_to(self, text: str) -> str:
        """`text` with its old value replaced by the new one."""
        return self._old_pattern().sub(self.new.replace("\\", "\\\\"), text, count=1)


def _kind(value: str) -> tuple[str, str] | None:
    """("number", unit) or ("name", "") for a value; None for a word that is no value."""
    number = _SPLIT_NUMBER.match(value)
    if number:
        return ("number", (number.group(2) or "").lower())
    if value.lower() in _NOT_VALUES:
        return None
    return ("name", "")


def may_switch(text: str) -> bool:
    """False when `text` holds none of the words a change of value is said with (a quick
    test before splitting a message into segments)."""
    return bool(_CUE.search(text))


def switch_of(text: str) -> Switch | None:
    """The change of value `text` states, or None (see the module docstring)."""
    named = _NAMED.search(text)
    subject: frozenset[str] = frozenset()
    if named:
        new = named.group("new") or named.group("new2") or named.group("new3")
        old = named.group("old") or named.group("old2") or named.group("old3")
        if _SPLIT_NUMBER.match(new):
            # "the retry backoff should be 45 s instead of 90 s": the setting before it
            before = re.split(r"[,;:.!?]", text[:named.start()])[-1]
            lead = [w for w in _WORDS.findall(before.lower())
                    if w not in _SUBJECT_STOP and w not in _NUMBER_LEAD_STOP][-4:]
            subject = frozenset(lead)
    else:
        match = _TO.search(text) or _INSTEAD.search(text)
        if match is None:
            return None
        reason = _REASON.match(match.group("rest"))
        if reason is None:
            return None
        new, old = match.group("new"), reason.group("old")
        lead = _WORDS.findall(match.group("subject").lower())
        if match.re is _INSTEAD and lead:
            lead = lead[1:]  # the verb that makes the change ("make", "poll")
        subject = frozenset(w for w in lead if w not in _SUBJECT_STOP)
    new, old = new.rstrip(".-"), old.rstrip(".-")
    clause = re.split(r"[,;:]|\s[-–—]\s", text, maxsplit=1)[0]
    scope = frozenset(w for m in _SCOPE.finditer(clause) for w in _WORDS.findall(m.group(1).lower())
                      if w not in _SCOPE_STOP and w not in (new.lower(), old.lower()))
    new_kind, old_kind = _kind(new), _kind(old)
    if new_kind is None or old_kind is None or new_kind[0] != old_kind[0]:
        return None
    if new_kind[0] == "number" and not new_kind[1]:
        return None  # a number names its subject by its unit: "14 px" changes no "12 tests"
    bare = _SPLIT_NUMBER.match(old)
    if bare and old_kind[1] not in ("", new_kind[1]):
        old = bare.group(1)  # ", 30 drains the battery": the 30 is in the new value's unit
    if new.lower() == old.lower():
        return None
    return Switch(new, old, new_kind[1], scope, subject)
