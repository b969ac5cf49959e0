"""Subject and value of a statement: when a new statement updates an active record.

A rule names a *subject* (what it is about: installs, indentation, the branch pull requests
target) and a *value* (npm, 4 spaces, develop). A value belongs to a *class* whose members
exclude each other: one package manager installs a project's packages, one indentation
width holds. `value_change(new, old)` is true when both statements have the same frame —
their content words once values are set aside — and name different values of one class:
"Use pnpm for installs" updates "Use npm for installs"; "Indent with 2 spaces" updates
"Indent with 4 spaces". `distinct_subjects(a, b)` is true when the two name different
things that do not exclude each other — "Run ruff before committing" and "Run cargo fmt
before committing" share the frame "before committing" but are two rules — so neither is a
repeat nor an update of the other.

Word lists, not understanding: a value outside `EXCLUSIVE` and not a number is not read as
a value, and such pairs are left to the other matchers (contradiction, similarity).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

__all__ = [
    "EXCLUSIVE",
    "Retired",
    "distinct_subjects",
    "retired_values",
    "supersedes",
    "value_change",
    "value_class",
]

EXCLUSIVE: dict[str, frozenset[str]] = {
    "js-packages": frozenset({"npm", "pnpm", "yarn", "bun"}),
    "py-packages": frozenset({"pip", "uv", "poetry", "pipenv", "conda", "pdm"}),
    "py-tests": frozenset({"pytest", "unittest", "nose"}),
    "js-tests": frozenset({"jest", "vitest", "mocha"}),
    "py-format": frozenset({"black", "yapf", "autopep8"}),
    "indent": frozenset({"tabs", "tab", "spaces", "space"}),
    "case": frozenset({"camelcase", "snake_case", "kebab-case", "pascalcase"}),
    "quotes": frozenset({"single", "double"}),
    "branch": frozenset({"main", "master", "develop", "trunk", "release"}),
    "py-docs": frozenset({"sphinx", "mkdocs", "pdoc"}),
}
"""Value class → its members (lower case); the members of one class exclude each other."""

TOOLS = frozenset(
    {
        "ruff",
        "mypy",
        "cargo",
        "eslint",
        "prettier",
        "flake8",
        "pylint",
        "isort",
        "rustfmt",
        "clippy",
        "gofmt",
        "tsc",
        "pyright",
        "make",
        "docker",
        "terraform",
        "helm",
    }
)
"""Named tools that are not alternatives of one another (a linter, a type checker...)."""

_NUMBER_WORDS = {
    "one": "1",
    "two": "2",
    "three": "3",
    "four": "4",
    "five": "5",
    "six": "6",
    "seven": "7",
    "eight": "8",
    "nine": "9",
    "ten": "10",
}
_WORD = re.compile(r"[a-z0-9_][a-z0-9_.\-/]*")
_FRAME_STOP_WORDS = (
    "a an the and or but so to of in on at for with from by is are was were be been it its "
    "this that these those we our us you your i my me they them should must will would can "
    "could do does did not no never don't dont always please pls just also now here "
    "from now on use using used uses instead rather over than only every all any let's lets "
    "then too actually"
)
_FRAME_STOP = frozenset(_FRAME_STOP_WORDS.split())
_STEMS = ("ing", "ed", "es", "s")


def _stem(word: str) -> str:
    for end in _STEMS:
        if len(word) > len(end) + 3 and word.endswith(end):
            word = word[: -len(end)]
            if end in ("ing", "ed") and len(word) > 3 and word[-1] == word[-2]:
                word = word[:-1]  # "tagged" and "tag", "committing" and "commit"
            return word
    return word


_CLASS_OF = {word: cls for cls, members in EXCLUSIVE.items() for word in members}
"""Word → its `EXCLUSIVE` class (each word is in one class)."""

def _names_branch(after: str) -> bool:
    """True when the word after a branch name leaves it a branch ("main branch", "main is
    protected", "into main before"), not a word describing the noun after it ("main
    filter", "release notes", "master key")."""
    return (after.startswith("branch") or after in _FRAME_STOP or after in _AFTER_BRANCH
            or after.endswith("ly"))


_AFTER_BRANCH = frozenset(re.findall(
    r"\S+", "like as again first anymore today these days yet or nor since until when unless "
         "whenever once before after is was has had gets got stays"))
"""Words that may follow a branch name and leave it one ("develop like always")."""


_READ_CACHE = 16_384
"""Texts whose reading `_read` keeps (more than the records of a large memory review)."""

_VERSION = re.compile(r"\d+(?:\.\d+)+")
"""A dotted version ("3.12"): a value of the thing named before it ("Python 3.12")."""


@functools.lru_cache(maxsize=_READ_CACHE)
def _read(text: str) -> tuple[dict[str, set[str]], set[str], set[str]]:
    """(value class → values, frame words, named tools) of `text`. Cached per text (a
    memory review compares each record with several others): callers never change what
    it returns."""
    words = [w.strip(".-/") for w in _WORD.findall(text.lower().replace("n't", " not"))]
    words = [w for w in words if w]
    values: dict[str, set[str]] = {}
    frame: set[str] = set()
    tools: set[str] = set()
    for k, word in enumerate(words):
        if _VERSION.fullmatch(word) and k > 0:
            values.setdefault(f"version:{words[k - 1]}", set()).add(word)
            continue
        number = _NUMBER_WORDS.get(word, word if word.isdigit() else None)
        if number is not None and k + 1 < len(words):
            unit = _stem(words[k + 1])
            values.setdefault(f"number:{unit}", set()).add(number)
            continue
        cls = _CLASS_OF.get(word)
        if cls == "quotes" and (k + 1 >= len(words) or not words[k + 1].startswith("quote")):
            cls = None
        if cls == "branch" and k + 1 < len(words) and not _names_branch(words[k + 1]):
            cls = None  # "the main filter", "release notes": a word before its noun
        if cls is not None:
            values.setdefault(cls, set()).add(_stem(word) if cls == "indent" else word)
            continue
        if word in TOOLS:
            tools.add(word)
        if word not in _FRAME_STOP:
            frame.add(_stem(word))
    # a unit word is part of the frame ("4 spaces": the subject is spaces, the value 4)
    return values, frame, tools


FRAME_OVERLAP = 0.6
"""Shared frame words / the larger frame's words: at least this for one subject."""


def _same_frame(a: set[str], b: set[str]) -> bool:
    """One subject: the frames overlap (`FRAME_OVERLAP`) and one holds the other — when
    each has a word the other lacks, they name two things ("keep functions under 50
    lines" / "keep files under 500 lines")."""
    if not a and not b:
        return True
    if not a or not b:
        return False
    return len(a & b) / max(len(a), len(b)) >= FRAME_OVERLAP and (a <= b or b <= a)


def value_change(new: str, old: str) -> bool:
    """True when `new` states `old`'s subject with another value of one exclusive class."""
    nv, nf, _ = _read(new)
    ov, of, _ = _read(old)
    shared = set(nv) & set(ov)
    if not shared or not any(nv[c] != ov[c] for c in shared):
        return False
    return _same_frame(nf, of)


def supersedes(later: str, earlier: str) -> bool:
    """True when `later`, said after `earlier` in one session, gives a subject of `earlier`
    another value of one exclusive class: `value_change`, or a class whose values in the
    two share none while the two share a frame word ("open the PR against develop" /
    "PRs go to main these days")."""
    lv, lf, _ = _read(later)
    ev, ef, _ = _read(earlier)
    if not any(not (lv[c] & ev[c]) for c in set(lv) & set(ev) if not c.startswith("number:")):
        return False
    return bool(lf & ef) or value_change(later, earlier)


def distinct_subjects(a: str, b: str) -> bool:
    """True when `a` and `b` name different things that do not exclude each other.

    Either both name tools of `TOOLS` and share none (ruff / cargo fmt); or both name values
    of one class for frames that each add words of their own ("keep functions under 50
    lines" / "keep files under 500 lines"); or one names a value the other has no value of
    its class for while the other adds frame words of its own ("Do not commit to main" /
    "Do not commit generated files").
    """
    av, af, at = _read(a)
    bv, bf, bt = _read(b)
    if at and bt and not (at & bt):
        return True
    if _other_filler(a, b):
        return True
    if set(av) & set(bv) and af - bf and bf - af and not _same_frame(af, bf):
        # one kind of value for two things: "keep functions under 50 lines" / "keep files
        # under 500 lines"
        return True
    return bool((av and not bv and bf - af) or (bv and not av and af - bf))


SLOT_WORDS = 4
"""At most this many words in the one slot two statements of one frame fill differently."""


def _other_filler(a: str, b: str) -> bool:
    """True when `a` and `b` are one sentence frame with another filler in one slot that is
    not a value ("Run the tests before pushing" / "Run the type checker before pushing"):
    what they share is the frame, and the fillers name two things. Fillers holding a value
    of `EXCLUSIVE`, a number or a version are left to `value_change`."""
    ta = [w.strip(".-/") for w in _WORD.findall(a.lower().replace("n't", " not"))]
    tb = [w.strip(".-/") for w in _WORD.findall(b.lower().replace("n't", " not"))]
    ta, tb = [w for w in ta if w], [w for w in tb if w]
    head = 0
    while head < min(len(ta), len(tb)) and ta[head] == tb[head]:
        head += 1
    tail = 0
    while tail < min(len(ta), len(tb)) - head and ta[-1 - tail] == tb[-1 - tail]:
        tail += 1
    fa, fb = ta[head : len(ta) - tail], tb[head : len(tb) - tail]
    shared = [w for w in ta[:head] + ta[len(ta) - tail :] if w not in _FRAME_STOP]
    ca = {_stem(w) for w in fa if w not in _FRAME_STOP}
    cb = {_stem(w) for w in fb if w not in _FRAME_STOP}
    if not ca or not cb or ca & cb or len(fa) > SLOT_WORDS or len(fb) > SLOT_WORDS:
        return False
    if len(shared) < max(2, len(ca), len(cb)):
        return False  # the frame must be the larger part of both statements
    if ca <= {_stem(w) for w in tb} or cb <= {_stem(w) for w in ta}:
        return False  # one statement holds the other's filler: a refinement
    for filler in (fa, fb):
        if any(_is_value(w) for w in filler) or all(w in _FRAME_STOP for w in filler):
            return False
    return True


def _is_value(word: str) -> bool:
    """A number, a version or a member of an `EXCLUSIVE` class."""
    return (
        word.isdigit()
        or word in _NUMBER_WORDS
        or bool(_VERSION.fullmatch(word))
        or any(word in members for members in EXCLUSIVE.values())
    )


def value_class(word: str) -> str | None:
    """The `EXCLUSIVE` class `word` is a member of ("bun" → "js-packages"), or None."""
    low = word.lower()
    return next((c for c, members in EXCLUSIVE.items() if low in members), None)


@dataclass(frozen=True)
class Retired:
    """A value a statement says is no longer in use.

    Attributes:
        word: the retired value as written ("master", "npm").
        replacement: the value said to replace it ("bun" in "moved from npm to bun"),
            or None when the statement names none.
        start: offset of the statement in its message.
        end: end offset of the statement.
    """

    word: str
    replacement: str | None
    start: int
    end: int


_NAME = r"([A-Za-z][\w.+#-]*)"
_MOVED = re.compile(
    r"\b(?:moved|migrated|switched|changed|went|are moving|have moved|'ve moved)\b"
    r"(?:\s+[\w.'-]+){0,4}?\s+from\s+" + _NAME + r"\s+(?:to|over to)\s+" + _NAME,
    re.IGNORECASE,
)
_GONE = re.compile(
    _NAME + r"\s+(?:(?:doesn'?t|does not|doesnt|don'?t|dont|do not) exist any ?more|"
    r"(?:is|are) gone\b|(?:is|are) (?:dead|obsolete|history)\b|"
    r"(?:is|are) (?:no longer|not) (?:used|in use) any ?more|"
    r"(?:is|are) no longer (?:used|in use)|(?:got|was|were|has been|have been) (?:\w+ and )?"
    r"(?:deleted|removed|retired|dropped))",
    re.IGNORECASE,
)
_NO_LONGER = re.compile(
    r"\b(?:we|i) (?:no longer|don'?t|dont|do not) use\s+" + _NAME + r"(?=\s+any ?more\b)"
    r"|\b(?:we|i) no longer use\s+" + _NAME
    + r"|\bforget (?:about )?([A-Za-z][\w+#-]*)(?=\s*(?:[.,;!]|$))",
    re.IGNORECASE,
)


def retired_values(text: str) -> list[Retired]:
    """The values `text` says are no longer in use, in order: "we moved from npm to bun"
    (npm, replaced by bun), "master doesn't exist anymore", "release was deleted",
    "develop is dead", "we no longer use poetry", "forget npm". Only values of an `EXCLUSIVE`
    class or a named tool of `TOOLS` count, and a replacement only when it is of the retired
    value's class: "I moved the file from src to lib" retires nothing."""
    out: list[Retired] = []
    for match in _MOVED.finditer(text):
        old, new = match.group(1), match.group(2)
        cls = value_class(old)
        if cls is not None or old.lower() in TOOLS:
            same = cls is not None and value_class(new) == cls
            out.append(Retired(old, new if same else None, match.start(), match.end()))
    for pattern in (_GONE, _NO_LONGER):
        for match in pattern.finditer(text):
            word = next(g for g in match.groups() if g)
            if value_class(word) is not None or word.lower() in TOOLS:
                out.append(Retired(word, None, match.start(), match.end()))
    return sorted(out, key=lambda r: r.start)
