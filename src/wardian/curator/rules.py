"""Cue patterns that make a human segment a memory candidate, and the text rewriter.

Each rule names a category, a base score and a regular expression over the segment.
Categories: ``explicit`` (the user asks to remember / write it into CLAUDE.md or AGENTS.md),
``correction`` (the user corrects the agent: "no, I want…", "I never said…", "like I
asked"), ``lesson`` (a cause or a must-order: "doesn't work since…", "the issue was…",
"you have to X before Y"), ``convention`` (imperative prohibitions and musts: "do not…",
"always…", "make sure…", "should…", "by default"), ``decision`` ("I choose…", "we'll go
with…"; not a plan for later), ``open_issue`` (a problem still unresolved — only kept as a
`current` checkpoint near the end of the session).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from wardian.curator.values import EXCLUSIVE, TOOLS

__all__ = [
    "AGENT_SCOPE",
    "RULES",
    "Rule",
    "agent_scoped",
    "clean_speech",
    "match_rules",
    "rewrite",
]


@dataclass(frozen=True)
class Rule:
    """One cue: `pattern` searched (case-insensitive) in a segment."""

    name: str
    category: str
    score: float
    pattern: re.Pattern[str]
    text: str | None = None
    """The memory text when the cue's meaning does not depend on the rest of the sentence
    ("…then I'll commit" means the user makes the commits); ``{0}`` is the cue's first group
    (lower-cased). None = rewrite the segment."""

    def fixed_text(self, segment: str) -> str | None:
        """The rule's own memory text for `segment` (None when the segment is rewritten)."""
        if self.text is None:
            return None
        match = self.pattern.search(segment)
        if match is None or (match.re.groups and match.group(1) is None):
            return None  # the text is for the alternative holding group 1; others rewrite
        group = match.group(1) if match.re.groups else ""
        return self.text.format(group.lower())


def _r(name: str, category: str, score: float, pattern: str, text: str | None = None) -> Rule:
    return Rule(name, category, score, re.compile(pattern, re.IGNORECASE), text)


_NOT_VERBS = (
    r"(?!know\b|think\b|recall\b|remember\b|see\b|understand\b|mind\b|care\b|get\b|have\b|"
    r"worry\b|bother\b|mean\b|like\b|really\b|quite\b|forget\b)"
)
"""Verbs after "don't" that make no rule: "I don't know", and "don't forget the tag" (a reminder
of work at hand: "don't forget to X" is a request to remember, read by its own cue)."""
_WE_NOT_VERBS = (
    r"(?!need\b|want\b|agree\b|expect\b|plan\b|got\b|had\b|did\b|were\b|was\b|\w+ed\b)"
)
"""After "we don't" / "we never": a verb saying what the team does not do ("we don't mock
the clock in this service"), not what it lacks or did ("we don't need", "we never tested")."""
_NOT_X_LEAD = (
    r"^\W*(?:no|nope|nah)\b[,.!]?\s+not\s+(?!(?:yet|now|really|quite|sure|exactly|today|that|"
    r"this|it|me|at all|here|there|again|so|too|like|anymore|for)\b)(?:the |a |an )?"
    r"[\w./@`'+#-]+(?:\s+[\w./@`'+#-]+){0,2}?\s*(?:[-–—,;:]|\s(?:but|please)\b)\s*"
    r"(?=(?:\S+\s+){2,}\S)"
)
""""no, not requests - use httpx": a correction naming what was wrong and, after a dash or
comma, what holds (at least three more words)."""
_CLAUSE_START = r"(?:^|[,;:\-–(]\s*|\b(?:and|but|please|pls|so|then|also|just|yet)\s+)"
_UNCONDITIONAL = (
    r"(?!(?:[^.!?]|[.!?](?=\S))*\b(?:when|whenever|if|unless|while|until|as long as|"
    r"otherwise|except|in case)\b)"
)
"""No condition later in the sentence (a stop inside "3.11" ends none): "we deploy with
helm when Priya is out", "the app runs on Node 18 while the ticket is open" are situations,
not the project's toolchain."""
_NOT_A_NAME = (
    r"(?!(?:it|this|that|them|those|these|a|an|the|my|your|our|their|its|some|any|no|lots?|"
    r"more|less|much|many|too|very|up|whatever|anything|something|everything|nothing|care|"
    r"caution|confidence|ease|pride|love|joy|help|luck|time|delay|notice)\b)"
)
"""Words that are no name of a tool, library or engine ("uses a lot", "built with care")."""
_TOOL_NAME = r"`?[A-Za-z][\w.+#/-]*`?"
"""A tool, library or engine name as said: "Leaflet", "Chart.js", "react-hook-form"."""
_NO_QUESTION = r"(?![^.]*\?)"
_NOT_OF_THE_MOMENT = (
    r"(?!(?:[^.!?]|\.(?=\S))*\b(?:now|today|tonight|yesterday|currently|right now|still|yet|"
    r"already|"
    r"at the moment|for now|this time|broken|failing|fails|failed|wrong|"
    r"missing|flaky|slow|weird|crash\w*|empty|gone|done|ready|fine|ok|okay|red|green)\b)"
)
"""No word of the state at hand later in the sentence (a stop inside "22.04" ends none):
"every page is broken", "all tests
are green now", "new builds go in slow today" describe this moment, not the project. It
scans the rest of the sentence, so a rule places it after its distinctive words."""
_GENERIC_LEAD = (
    r"^(?:[^:;.!?]{0,80}[:;]\s+|\W*(?:(?:ok|okay|yes|yeah)\W+)?but\s+)?\W*(?:(?:and|also|btw|"
    r"fyi|so|plus)\W+)?"
)
"""Where a plain statement starts: the segment's start, a clause after a colon or a
semicolon ("I checked the guide: labels are X"), or after a leading "but"; not a ", but"
mid-sentence, which sets a fault against what should happen ("X should go, but Y stays")."""
_CODE_NAME = (
    r"(?-i:`?(?:[A-Za-z_][\w.]*\([^)\s]{0,20}\)|[a-z]\w*_\w+|[a-z_]\w*\.[A-Za-z_]\w{4,}|"
    r"[a-z]+[A-Z]\w*)`?)"
)
"""A name said as code: a call ("print()", "ToString(\"C\")"), an underscored name
("raw_sql"), a dotted one whose last part is no file extension ("os.getenv", not
"data.csv"), a camelCase one ("setTimeout")."""
_NOT_A_PLATFORM_SUBJECT = (
    r"(?!(?:it|this|that|which|what|there|here|he|she|they|my|your|his|her|error|errors|"
    r"status|response|result|output|latest|current|last|next|new|old|previous|fix|bug|issue|"
    r"problem|ticket|pr|branch|commit|release|build)\b)"
)
"""A subject that names no part of the project: a pointer, a person, the user's own thing,
a result ("the error is HTTP 404") or a release of the moment ("the latest is X 2.1")."""
_WHOLE_SCOPE = (
    r"(?:\b(?:in|across|throughout) the (?:whole|entire) [\w-]+|\bthroughout(?=\s*(?:[.,;!]|$))"
    r"|\b(?:in|across) all (?:our |the )?[\w-]+s\b)"
)
"""A scope saying the statement holds across the project: "in the whole handbook",
"throughout" closing the clause, "in all docs"."""

RULES: tuple[Rule, ...] = (
    # Each rule is a kind of signal, written from made-up sessions (tests/curator/
    # test_signals.py, test_record_quality.py), never from one transcript's sentence.
    _r(
        "explicit-memory",
        "explicit",
        0.95,
        # the user asks the agent to keep something: the instruction file, "remember that",
        # "from now on", "going forward"
        r"\b(?:update|add (?:this |that |it )?to|write (?:this |it )?(?:in|into)|put (?:this |it )?"
        r"in) (?:the )?(?:claude|agents|gemini)\.md\b.*\b(?:that|to)\b"
        r"|\b(?:add|put|write|note|save) (?:this|that|the following) (?:in|into|to) (?:the )?"
        r"(?:claude|agents|gemini)\.md\s*[:,-]\s*\w"
        r"|\b(?:remember|keep in mind) (?:that|to)\b(?!.*\?\s*$)"
        # "don't forget that X…", not a closing "…, don't forget that" (a reminder)
        r"|\b(?:don'?t|dont|do not) forget (?:that\b(?!\s*(?:[.!,;]|$))|to\b)(?!.*\?\s*$)"
        r"|\b(?:from now on|from here on(?: ?wards?)?|henceforth|going forward|for future "
        r"(?:reference|sessions)|in (?:the )?future"
        r"(?= ,|,| always| never| please| use| do| don'?t)|next time(?=,| always| never| use))\b",
    ),
    _r(
        "correction-marker",
        "correction",
        0.88,
        # the user points back at what they said or asked before: "I never said…", "no, I
        # want…", "like I asked", "I meant…", "that's not what I asked"
        r"\bi never (?:said|asked|told|wanted)\b"
        r"|^(?:no|nope)\b[,. ]+(?:i|we|it|that|you|the)\b"
        r"|\b(?:like|as) i (?:asked|said|originally|told|wrote|mentioned)\b"
        r"|\bi (?:mostly |actually |only |really )?meant\b"
        r"|\b(?:that'?s|this is|it'?s) not what i (?:asked|said|meant|wanted)\b"
        # "no, not X - Y": the user names the thing the agent reached for and what holds
        # instead, in one breath (not "no, not yet", "no, not that one")
        r"|" + _NOT_X_LEAD,
    ),
    _r(
        "stated-reason",
        "lesson",
        0.85,
        # a reason given for why something fails, is safe, or is done on purpose: "X won't
        # work because…", "that's why we…", "X is fine since…", "we pin X deliberately",
        # "the reason is…", "you have to X before Y"
        r"\b(?:doesn'?t|does not|won'?t|will not|can'?t|cannot) work (?:since|because|as|when|"
        r"if|with)\b"
        r"|\b(?:that'?s|this is|which is) why (?:we|it|the|you)\b"
        r"|\b(?:is|should be|are) (?:fine|ok|okay|safe)\b.*\b(?:since|because)\b"
        r"|\bwe (?:use|chose|keep|avoid|pin|vendor) \S+(?: \S+)? (?:explicitly|on purpose|"
        r"deliberately|intentionally)\b"
        # a thing kept a certain way by design: "the export stays CSV on purpose"
        r"|\b(?:stays?|remains?|(?:is|are) kept|(?:is|are) left|returns?|answers?|responds?)\s"
        r"[^.;?!]{1,50}?\b(?:on purpose|deliberately|intentionally|by design)\b"
        r"|\bthe reason (?:is|being|we)\b|\bbecause otherwise\b"
        r"|\b(?:you|we) (?:have|need|must|got) to\b.*\bbefore\b",
    ),
    _r(
        "prohibition",
        "convention",
        0.8,
        _CLAUSE_START + r"(?:don'?t|do not|dont|never)\s+" + _NOT_VERBS + r"\w+"
        # the team's own prohibition: "we don't mock the clock", "here we never force-push"
        r"|" + _CLAUSE_START + r"(?:here,? )?we (?:don'?t|do not|dont|never)\s+" + _NOT_VERBS
        + _WE_NOT_VERBS + r"\w+"
        # "please not use X": the "do" left out (a learner's or a hurried negation)
        r"|\b(?:please|pls|plz) (?:do )?not\s+(?!now\b|yet\b|today\b|this\b|that\b|here\b|"
        r"again\b|so\b)" + _NOT_VERBS + r"\w+"
        r"|\bwithout (?:asking|approval|permission|confirmation|review|tests?)\b"
        # a prohibition by quantifier: "no test may…", "nothing should…", "no one pushes…"
        r"|(?:^|[,;:]\s*|\bso\s+)(?:no|nothing|no one|nobody)\b(?: \w+){0,3} (?:may|must|should|"
        r"can|is allowed to|gets to)\b",
    ),
    _r(
        "standing-rule",
        "convention",
        0.8,
        # a rule for every time: "always…", "every time…", "by default", "make sure to…",
        # "first X before Y", "I prefer…"
        # (not a report of what happens to the user, "every time I run it…", nor the idiom
        # "whenever you're ready")
        r"\b(?:always|every time|each time|whenever)\b(?!.*\?$)(?!\s+i\b)"
        r"(?!\s+you(?:'re| are) ready)"
        r"|\bmake sure (?:that )?(?:you |to )?(?:do not|don'?t|dont|never|always|use|run|keep|"
        r"add|update|call|put|set|pin|write)\b"
        r"|\bby default\b"
        r"|\b(?:before|after) (?:every|each) (?:single )?(?:commit|push|merge|release|deploy|"
        r"pr|pull request|change|run|build|test run)\b"
        r"|\bfirst\b.*\bbefore (?:you |we )?\w+"
        # an imperative gated on a workflow step said as a habit, with no object of its
        # own ("run mypy before pushing"; not "squash it before merging this")
        r"|^(?:and |also |please )*(?:run|use|format|lint|test|rebase|squash|update|check|"
        r"build|bump|regenerate|sign)\b[^?]*?\b(?:before|after) (?:committing|pushing|merging|"
        r"releasing|deploying|tagging)\b(?!\s+(?:this|it|these|that|them|now|the fix|my|your)\b)"
        r"(?![^.]*\?)"
        r"|\bi (?:always |really |much |strongly |generally |usually |personally |definitely )?"
        r"prefer\b|\bplease always\b",
    ),
    _r(
        "stated-preference",
        "convention",
        0.8,
        # what the user likes or dislikes as a way of working, said in passing: "I like short
        # functions", "I'd rather you…", "I hate it when…", "I'm not a fan of…" (not a
        # reaction to the work at hand: "I like it", "I like that", "I'd rather not")
        r"\bi (?:really |much |personally |generally |also )?(?:like|love|hate|dislike|"
        r"can'?t stand)\s+(?!it\b(?! when)|that\b|this\b|these\b|those\b|the (?:idea|way|"
        r"new|change|result|look|plan)\b|how\b|what\b|your\b|you\b|to (?:see|know|hear|"
        r"try|ask|check|understand)\b)\w+"
        r"|\bi(?:'d| would) (?:much |really )?(?:rather|prefer)\b(?! not\b)"
        r"|\bi'?m (?:not )?(?:a (?:big )?fan of|keen on)\s+(?!it\b|that\b|this\b)\w+",
    ),
    _r(
        "version-requirement",
        "lesson",
        0.8,
        # what a part needs to work, with a version: "the build needs node 20 or newer",
        # "requires Python 3.12+", "only works with at least v4"
        r"\b(?:needs?|requires?|only works (?:with|on)|depends on)\b[^.?!]{0,30}?"
        r"(?:\b(?:v|version )?\d+(?:\.\d+)*\+|\b(?:v|version )?\d+(?:\.\d+)* or (?:newer|later|"
        r"above|higher|up)\b|\bat least (?:v|version )?\d)",
    ),
    _r(
        "platform-target",
        "convention",
        0.77,
        # the platform or toolchain version the project is built for, said as a plain fact:
        # "we target Kotlin 2.0", "the service runs on Node 22", "we're on Postgres 16", "the
        # library supports Python 3.10 and later" (present tense only: "we targeted" is past)
        r"^\W*(?:(?:and|also|btw|fyi)\W+)?(?:(?:we|it|(?:the|our|this) [\w-]+)\s+"
        r"(?:only\s+|still\s+)?(?:targets?|supports?|(?:builds?|compiles?) (?:with|against|on)|"
        r"runs? on|(?:is|are) on|(?:deploys?|ships?) (?:on|to))|we(?:'re| are) (?:still )?on"
        # the subject left out, the verb's -s says it is the project ("targets Java 21")
        r"|(?:only\s+)?(?:targets|supports|(?:builds|compiles) (?:with|against|on)|runs on))\s+"
        r"(?!(?:the|a|an|our|my|their|its|all|only|about|around|over|under|up|to|at)\b)"
        r"(?:[A-Za-z.][\w.+#-]*\s+){1,2}v?\d+(?:\.\d+)*(?!\s*(?:minutes?|seconds?|hours?|"
        r"days?|workers?|threads?|times?|ms|s|%))\b(?![^.]*\?)" + _UNCONDITIONAL,
    ),
    _r(
        "team-toolchain",
        "convention",
        0.76,
        # the tool the team builds, deploys or releases with, said as a present fact: "we
        # deploy with kamal", "we release with goreleaser" (not "we deployed with", not a
        # pronoun: "we build with it")
        r"^\W*(?:(?:and|also|btw|fyi|here)\W+)?we\s+(?:always\s+|only\s+)?(?:deploy|release|"
        r"ship|package|build|bundle|provision|publish)\s+(?:with|via|using|through)\s+"
        r"(?!(?:it|this|that|them|those|these|a|an|the|my|your|some|any|whatever|anything|"
        r"something|everything|nothing|one|two|three|four|five|care|caution|confidence|ease|"
        r"pride|love|joy|help|luck|time|delay|notice)\b)`?[A-Za-z][\w.+#-]*"
        r"(?![^.]*\?)" + _UNCONDITIONAL,
    ),
    _r(
        "kind-uses-tool",
        "convention",
        0.76,
        # a kind of thing in the project and the library it uses, said as a generic present
        # fact with a plural subject: "Maps use Leaflet", "background jobs use dramatiq" (not
        # "the script uses pandas", one thing at hand; not "used", past)
        r"^\W*(?:(?:and|also|btw|fyi|here)\W+)?(?:(?:all|our|the)\s+)?"
        r"(?!(?:we|you|i|they|these|those|people|users?|most|many|some|other|others|do|does|"
        r"did|why|how|what|which|when|where|who|can|could|should|would)\b)"
        r"(?:[a-z][\w-]*\s+){0,2}[a-z][\w-]*[a-rt-z]s\s+(?:always\s+|only\s+)?use\s+"
        + _NOT_A_NAME + _TOOL_NAME + r"(?=\s*(?:[,.;!]|$|\s(?:for|everywhere|throughout)\b))"
        + _NO_QUESTION + _UNCONDITIONAL,
    ),
    _r(
        "made-with-tool",
        "convention",
        0.76,
        # what a part of the project is built, typeset or bundled with, said as a present
        # fact: "the manual is typeset with ConTeXt", "our web client is bundled with esbuild"
        # (not "were built", past; not "built with care")
        r"^\W*(?:(?:and|also|btw|fyi|here)\W+)?(?:(?:the|our|all)\s+)?"
        r"(?!(?:it|this|that|which|what|who|there|here|is|are)\b)(?:[\w-]+\s+){0,3}?[\w-]+\s+"
        r"(?:is|are)\s+(?:always\s+|only\s+)?(?:built|compiled|rendered|typeset|bundled|"
        r"packaged|generated|linted|formatted|transpiled|minified)\s+(?:with|by|using|via|"
        r"through)\s+" + _NOT_A_NAME + _TOOL_NAME + _NO_QUESTION + _UNCONDITIONAL,
    ),
    _r(
        "supported-range",
        "convention",
        0.77,
        # the oldest version supported, said as an open range with the name left to the
        # context: "we support 3.2 and newer only", "the extension supports 11 LTS or later"
        r"^\W*(?:(?:and|also|btw|fyi)\W+)?(?:(?:we|it|(?:the|our|this) [\w-]+|[A-Z][\w.-]+)\s+"
        r"(?:only\s+)?"
        r"(?:supports?|targets?)|(?:only\s+)?(?:supports|targets))\s+"
        r"(?:[A-Za-z][\w.+#-]*\s+)?v?\d+(?:\.\d+)*(?:\s+lts)?\s+(?:and|or)\s+(?:newer|later|"
        r"up|above|higher)\b" + _NO_QUESTION + _UNCONDITIONAL,
    ),
    _r(
        "team-uses-tool-for",
        "convention",
        0.76,
        # the tool the team uses for a job, said as a present fact: "we use structlog for
        # logging", "we use click for that" (not "we used", not "the blue theme for the demo")
        r"^\W*(?:(?:and|also|btw|fyi|here|no|nope)\W+)?we\s+(?:always\s+|only\s+)?use\s+"
        + _NOT_A_NAME + _TOOL_NAME + r"\s+(?:for|to)\s+(?!(?:a|an|this|now|today|tonight|"
        r"once|the (?:demo|presentation|meeting|moment|time being|workshop|pilot|weekend))\b)"
        r"\w+" + _NO_QUESTION + _UNCONDITIONAL,
    ),
    _r(
        "replacement-with-reason",
        "correction",
        0.78,
        # a correction naming the replacement and why the other one does not do: "use httpx
        # instead, requests has no async client" (not "use a set instead" for the code at
        # hand; not a state of the moment: "…, the script is broken")
        r"^\W*(?:(?:no|nope|nah|ok|okay|so|then|please|pls|hm+)\W+)*use\s+" + _NOT_A_NAME
        + _TOOL_NAME + r"\s+instead\s*[,;:\-–]\s*(?!(?:it|this|that|they|there|i|you|we)\b)"
        r"(?:[\w.+#/-]+\s+){1,3}?(?:has|have|is|are|does|do|doesn'?t|don'?t|can'?t|cannot|"
        r"won'?t|drops|breaks|needs|lacks|handles|supports|loses|ignores)\b"
        r"(?!\s+(?:still\s+|now\s+|currently\s+)?(?:broken|down|busy|failing|offline|slow|"
        r"stuck|frozen|gone|missing|\w+ing)\b)" + _NO_QUESTION + _UNCONDITIONAL
        # the build tool, with the reason the other one fails: "please build with ninja,
        # make chokes on the generated rules"
        + r"|^\W*(?:(?:please|pls|so|then)\W+)*(?:compile|build|typeset|render|bundle)\s+"
        r"with\s+" + _NOT_A_NAME + _TOOL_NAME + r"(?:\s+-{1,2}[\w-]+)*\s*[,;:\-–]\s*"
        r"(?!(?:it|this|that|they|there|i|you|we)\b)(?:[\w.+#/-]+\s+){1,3}?(?:not works?|"
        r"doesn'?t work|does not work|won'?t work|breaks|chokes|fails)\b"
        + _NO_QUESTION + _UNCONDITIONAL,
    ),
    _r(
        "kind-never-does",
        "convention",
        0.78,  # below "open-issue": "the tests don't pass" is a problem, not a rule
        # what a kind of thing in the project never does, said of a plural subject with a
        # design verb: "repositories never import from the web layer", "handlers don't touch
        # the ORM directly", "card numbers never go into the audit table" (not a complaint,
        # "the emails never arrive", whose verb says what happens, not how it is built)
        r"^\W*(?:(?:and|also|btw|fyi|here|no|nope)\W+)?(?:(?:all|our|the)\s+)?"
        r"(?!(?:we|you|i|they|these|those|people|users?|customers?|clients?|most|many|some|"
        r"other|others)\b)(?:[a-z][\w-]*\s+){0,2}[a-z][\w-]*[a-rt-z]s\s+"
        r"(?:don'?t|dont|do not|never)\s+(?:ever\s+)?(?:import|reference|touch|call|read|write|"
        r"return|log|store|go|depend|access|expose|include|contain|print|raise|throw|panic|"
        r"allocate|mutate|block|know|talk|hold|share|own|leak|cross)\b(?:\s+\S+){1,}"
        + _NO_QUESTION + _UNCONDITIONAL,
    ),
    _r(
        "whole-scope",
        "convention",
        0.76,
        # how things are or are done across the whole project, said with a scope: "headings
        # are sentence case in the whole handbook", "use four-space indents in the entire
        # monorepo" (not a task to do now across it: "rename the helper in the whole repo")
        r"^\W*(?:(?:and|also|btw|fyi|yes|yep|yeah|so)\W+)*(?:(?:the|our|all)\s+)?"
        r"(?!(?:it|this|that|which|what|there|here)\b)(?:[\w\\-]+\s+){0,3}?[\w\\-]+\s+"
        r"(?:is|are)\s+" + _NOT_OF_THE_MOMENT + r"[^.?!]{2,60}?" + _WHOLE_SCOPE
        + r"|^\W*(?:(?:and|also|yes|yep|yeah|so|please|pls)\W+)*(?:we\s+)?(?:use|keep|write|"
        r"indent|name|prefer)\s+" + _NOT_OF_THE_MOMENT + r"[^.?!]{2,60}?" + _WHOLE_SCOPE,
    ),
    _r(
        "kind-lives-in",
        "convention",
        0.76,
        # where or how a kind of thing is kept, said of a bare plural subject in the present
        # tense: "fixtures live in tests/data", "amounts are stored as integer pence" (not "the
        # files are in /tmp", one thing at hand; not "were stored", past)
        _GENERIC_LEAD + r"(?:(?:all|our|new)\s+)?"
        r"(?!(?:we|you|i|they|these|those|the|a|an|this|that|my|your|their|his|her|its|people|"
        r"users?|customers?|clients?|most|many|some|other|others|things|changes|results)\b)"
        r"(?:[a-z][\w-]*\s+){0,2}[a-z][\w-]*[a-rt-z]s\s+"
        r"(?:always\s+|only\s+)?" + _NOT_OF_THE_MOMENT + r"(?:live|go|belong|stay|are (?:stored|"
        r"kept|written|named|"
        r"formatted|computed|rendered|generated|defined|declared|registered|configured|"
        r"validated|logged|looked up))\s+(?:in|under|into|as|with|through|via|from|at)\s+\S+"
        + _NO_QUESTION + _UNCONDITIONAL,
    ),
    _r(
        "no-code-in-place",
        "convention",
        0.77,
        # a kind of code kept out of a part of the project, with the thing said as code (a
        # call, a dotted, underscored or camelCase name): "no print() in library code", "no
        # os.getenv outside config.py" (not "no errors in the log", an observation; not "no
        # print() in this file", the thing at hand)
        r"^\W*(?:(?:no|nope|and|also|but|so|ok|okay)\W+)*no\s+" + _CODE_NAME
        + r"(?:\s+(?:calls?|statements?|imports?))?\s+(?:in|on|inside|outside|under|within|"
        r"from|into)\s+(?!(?:this|that|these|those|my|your|it|here)\b)(?:the\s+)?[\w./-]+"
        + _NO_QUESTION + _UNCONDITIONAL,
    ),
    _r(
        "kind-is-not",
        "convention",
        0.76,
        # what a kind of thing in the project is, set against what it is not, with a bare
        # plural subject: "diagrams are mermaid, not plantuml", "ids are uuids here, no
        # integers" (not "the bug is in the parser, not the lexer", a finding; not "tests
        # are red, not green", the state at hand)
        _GENERIC_LEAD + r"(?:(?:all|our)\s+)?"
        r"(?!(?:we|you|i|they|these|those|the|a|an|this|that|my|your|their|his|her|its|people|"
        r"users?|customers?|clients?|most|many|some|other|others|things|changes|results|"
        r"problems|issues|bugs|errors)\b)"
        r"(?:[a-z][\w-]*\s+){0,2}[a-z][\w-]*[a-rt-z]s\s+are\s+" + _NOT_OF_THE_MOMENT +
        r"(?!(?:in|on|at|from|to|for|with|by|not|no|also|just|still|now|the|a|an)\b)"
        r"[\w.+#-]+(?:\s+[\w.+#-]+){0,2}?(?:\s+(?:here|everywhere))?,?\s+(?:not|no)\s+"
        r"(?!(?:sure|really|quite|yet|always|exactly|anymore|too|that|this|so|very|much|idea|"
        r"clue|doubt|wonder|problem|worries)\b)[\w.+#-]+(?:\s+[\w.+#-]+){0,2}\s*(?:[.,;!]|$)"
        + _NO_QUESTION + _UNCONDITIONAL,
    ),
    _r(
        "runs-on-version",
        "convention",
        0.76,
        # what a part of the project is or runs on, said as a product name and its version:
        # "the worker runs Python 3.12", "the desktop client is .NET 8" (not "the error is
        # HTTP 404", a result; not "my laptop runs macOS 14", the user's own machine)
        _GENERIC_LEAD + r"(?:(?:the|our)\s+" + _NOT_A_PLATFORM_SUBJECT + r"|(?!(?:the|our)\b)"
        + _NOT_A_PLATFORM_SUBJECT + r")"
        r"(?:[\w.-]+\s+){0,2}?[\w.-]+\s+(?:is|runs(?:\s+on)?)\s+" + _NOT_OF_THE_MOMENT
        + r"(?:(?-i:\.[A-Z][\w.+#-]*|[a-z]+[A-Z]\w*)\s+v?\d+(?:\.\d+){0,2}"
        r"|(?-i:[A-Z][\w+#-]*|[a-z]+-[a-z]+)\s+v?\d+(?:\.\d+){1,2})"
        r"(?=\s*(?:[,.;!]|$|\s(?:and|with|so|on|for|only)\b))" + _NO_QUESTION + _UNCONDITIONAL,
    ),
    _r(
        "standing-role",
        "convention",
        0.76,
        # what a thing stands as in the project: "the schema files are the source of truth",
        # "Python 3.10 is the lowest version we run on" (not "this is the only way", a
        # pointer to the thing at hand)
        _GENERIC_LEAD + r"(?:(?:the|our)\s+)?"
        r"(?!(?:it|this|that|which|what|there|here|he|she|they)\b)(?:[\w./+-]+\s+){0,4}?"
        r"[\w./+-]+\s+(?:is|are)\s+" + _NOT_OF_THE_MOMENT + r"(?:still\s+)?the\s+(?:single\s+|"
        r"only\s+)?"
        r"(?:source of truth|lowest (?:\w+ )?version|minimum (?:\w+ )?version|oldest (?:\w+ )?"
        r"version)\b" + _NO_QUESTION + _UNCONDITIONAL,
    ),
    _r(
        "build-target",
        "convention",
        0.76,
        # the architecture or target the project is built for, said as a present fact: "we
        # compile for wasm32 only", "the firmware targets cortex-m4f" (a name with a digit;
        # not "for 3 hours", not "Q3")
        r"^\W*(?:(?:and|also|btw|fyi)\W+)?(?:we|(?:the|our|this) [\w-]+)\s+(?:only\s+)?"
        r"(?:builds?|compiles?|targets?)\s+(?:for\s+)?(?:only\s+)?"
        r"(?=[A-Za-z][\w-]*\d)[A-Za-z][\w-]{3,}[\w.-]*\b" + _NO_QUESTION + _UNCONDITIONAL,
    ),
    _r(
        "standing-fact",
        "convention",
        0.77,
        # how things are in this project, said as a plain fact with a quantifier, a path, a
        # port, a command or a new name: "every migration gets a down step", "the fixtures
        # live in qa/fixtures", "the mock API is on port 4010", "the docs build with `make
        # html`", "the deploy branch is prod-eu now", "the audit log is append-only"
        r"^\W*(?:(?:ok|okay|yes|yeah)\W+)?(?:(?:but|and|so)\s+)?(?:every|each)\s+"
        r"(?!time\b|day\b|morning\b|week\b|night\b|one\b|other\b)"
        + _NOT_OF_THE_MOMENT +
        r"[^.,;?!]{2,50}?\b(?:gets?|is|are|has|have|goes|go|must|needs?|uses?|lives?|stays?|"
        r"belongs?|takes?(?!\s+(?:about|around|over|under|almost|nearly|up to|\d|an? (?:few|"
        r"couple|minute|second|hour|while)|ages|forever|long)\b)|declares?|requires?|carries|"
        r"follows?|keeps?)\b"
        r"(?!\s+(?:broken|failing|down|wrong|missing|empty|slow|red|gone|"
        r"flaky|fine|done|ok|okay|good|great|fixed|there)\b)"
        r"|^\W*(?:the |our |all )?[\w-]+s(?: [\w-]+){0,2} (?:live|go|belong|sit|are kept|are "
        r"stored) (?:in|under|into|inside) [`'\"]?[\w.-]*/[\w./-]*"
        r"|\bbranch(?:es)? (?:are|is|get|gets) (?:always )?(?:cut|created|made|branched|started|"
        r"based) (?:from|off|on)\b"
        r"|\b(?:is|are|runs?|listens?|serves?) on port \d{2,5}\b"
        r"|\b(?:starts|runs|builds|deploys|installs|(?:is|are) (?:started|run|built|deployed)) "
        r"(?:with|via|using|through) `[^`\n]{2,40}`"
        r"|^\W*(?:the |our )[\w-]+(?: [\w-]+){0,2} (?:is|are) (?:now )?(?:called |named )?`?"
        r"(?=[\w./-]*[-./\d])[\w./-]{2,40}`? now\b"
        r"|\b(?:is|are) (?:strictly |always )?(?:read-only|readonly|append-only|write-once)\b"
        r"|^\W*(?:please |pls )?keep (?:the |our |all |every )?[\w-]+(?: [\w-]+){0,2} (?:under|"
        r"below|within|at most|no longer than|shorter than|less than) \d+"
        r"|\bwe (?:always )?(?:use|indent|write|format|keep|name|store|quote)\b[^.?!;]{1,50}"
        r"\beverywhere\b"
        r"|\bwe(?:'ve| have)? (?:moved|switched|migrated|went over|changed) (?:\w+ ){0,3}?to "
        r"(?:" + "|".join(sorted({m for ms in EXCLUSIVE.values() for m in ms} | TOOLS)) + r")\b",
    ),
    _r(
        "prohibition-by-no",
        "convention",
        0.8,
        # "no X, ever" / "no X please": a prohibition said as a noun ("no emoji in PR
        # messages, ever"), not "no problem" or "no need"
        r"(?:^\W*|\bbut\s+|;\s*)no\s+(?!problem|worries|need|idea|thanks|way|rush|luck|change|"
        r"issue|clue|more\b|"
        r"longer\b|one\b|matter\b)[\w./-]+(?:\s+[\w./-]+){0,4}?(?:,\s*|\s+)(?:ever|please|"
        r"anywhere|at all)\b",
    ),
    _r(
        "cross-project",
        "convention",
        0.8,
        # a statement scoped to all the user's work is a standing preference
        r"\b(?:in|for|across) (?:all|every|any) (?:of )?my (?:projects?|repos?|repositories|"
        r"codebases?|work)\b|\bacross my (?:projects|repos)\b"
        r"|\b(?:for|in) (?:all|every) (?:future )?(?:sessions|conversations)\b",
    ),
    _r(
        "project-convention",
        "convention",
        0.77,
        # how things are done in this project, stated as a fact: "in this repo, handlers
        # return errors", "here we squash-merge", "our convention is…", "the rule here is…"
        r"\b(?:in|for|across|throughout) (?:this|our) (?:repo|repository|project|codebase|"
        r"monorepo|team|package|crate|service|app)\b,?\s+(?!(?:is|are|was|were|it|there)\b)"
        r"(?:[\w./`'-]+\s+){0,4}(?:are|is|go|live|stay|use|start|end|follow|get|must|should|"
        r"need|have|has|never|always)\b"
        r"|^(?:and |so |also )?here,? we (?:always |never |only |don'?t |do not )?"
        r"(?:use|write|keep|name|put|prefer|follow|squash|rebase|merge|run|pin|ship|avoid)\b"
        r"|\b(?:the|our) (?:convention|rule|policy|house style|style|norm) (?:here |in this "
        r"\w+ )?is\b"
        r"|\bwe(?:'re| are) an? [\w.+#-]+ (?:shop|team|house)\b",
    ),
    _r(
        "consumer-constraint",
        "convention",
        0.76,
        # an instruction with the constraint that forces it: "send dates as ISO 8601, the
        # client parses nothing else", "keep the ids numeric; the billing export only takes
        # integers"
        # (the cue starts at the comma: the instruction before it is the focused clause)
        r"(?<=\w)[,;]\s+(?:since |because |as )?(?:the |our |its |their )?[\w./-]+"
        r"(?: [\w./-]+)? (?:(?:parses|accepts|reads|understands|handles|supports|speaks|renders|"
        r"takes|knows) (?:nothing else|nothing but|only)\b|(?:only|just) (?:parses|accepts|reads|"
        r"understands|handles|supports|speaks|renders|takes)\b)",
    ),
    _r(
        "modal-rule",
        "convention",
        0.7,
        r"\b(?:should|must)(?:n'?t| not)?\s+(?:be|have|use|run|"
        r"always|never|not|cast|stay|go|live|only)\b",
    ),
    _r(
        "user-keeps-control",
        "convention",
        0.83,
        # the user keeps a step for themselves ("…then I'll commit", "I will do the deploy")
        # or gates the agent's work on their approval ("ask me before…", "wait for my ok")
        r"\b(?:i'?ll|i will|let me|i'?m going to) (?:do the |handle the )?(commit|push|merge|"
        r"deploy|release|publish)\b"
        r"|\b(?:ask|tell|check with|show|let) (?:me|the user)\b.*\bbefore (?:\w+ing|you|we|any|"
        r"anything)\b"
        r"|\bwait for (?:my|the user'?s) (?:ok|okay|approval|go-?ahead|confirmation|review)\b",
        "The user will {0} themselves; the agent does not {0}.",
    ),
    _r(
        "contrast",
        "correction",
        0.82,
        # the user names the way to do it in place of another: "use X, not Y", "instead of
        # X, do Y", "not as X but as Y"
        r"\buse \S+(?: \S+)?,? (?:not|instead of|rather than) \S+"
        r"|\binstead of\b[^,.;]{1,80},\s*(?:just\s+)?\w+"
        # a way of working with the one it replaces, sentence-final: "logs go to stderr, not
        # stdout", "dates are stored as UTC, never local time"
        r"|\b(?:go(?:es)?|live|lives|belongs?|stays?|comes?|runs?|(?:is|are) (?:stored|kept|"
        r"written|done|built|sent)) (?:through|in|into|under|via|to|from|on|as|with) "
        r"[^,;?]{2,80}, (?:not|never) (?:in |via |through |with |as |to |from |under |on |at |"
        r"inside |into |next to |beside )?(?:a |an |the )?[\w./`()-]+(?: [\w./`()-]+){0,3}\W*$"
        # what the team writes or uses in place of another: "we are writing Gherkin, not prose"
        r"|\bwe(?:'re| are)? (?:using|writing|on|use|write) [^,.;?]{1,40}, (?:not|instead of|"
        r"rather than) (?:the |a |an )?[\w.+#-]+"
        r"|\bnot (?:as|in|via|with|through|from|on|under) (?:a |an |the )?[\w./-]+(?: [\w./-]+)?"
        r",? but (?:as|in|via|with|through|from|on|under)\b"
        # "round on each line rather than on the total" (dictation spells it "then")
        r"|\b(?:rather th[ae]n|instead of) (?:on|in|at|with|via|through|by|as|from|into|per|for)"
        r" (?:a |an |the |each |every )?\w+",
    ),
    _r(
        "scoped-imperative",
        "convention",
        0.74,
        # an instruction scoped to the whole project or quantified over everything is a
        # standing rule, not a one-off task
        r"^(?:please\s+|pls\s+)?(?:use|run|keep|put|write|call|name|store|place|format|"
        r"build|test|install)\b[^?]*\b(?:in|for|across|throughout) (?:this|the|our) "
        r"(?:repo|repository|project|codebase|monorepo|workspace|app)\b"
        r"|^(?:please\s+|pls\s+|also\s+)?(?:have|keep|make|put|store|write|name|use)\s+"
        r"(?:everything|all (?:the )?\w+|every \w+|each \w+)\b",
    ),
    _r(
        "decision",
        "decision",
        0.78,
        # a choice made ("I choose…", "let's go with…"); a future or an order of work ("we'll
        # add the tests after lunch", "we're starting with the importer first") is the next
        # step or an intention the session may drop, not a decision
        r"\b(?:i|we) (?:(?:just|already|finally|now|have|'ve) )?(?:choose|chose|decided?|picked|"
        r"pick|go with|'ll go with|will go with)\b|"
        r"\blet'?s (?:use|go with|stick with)\b",
    ),
    _r(
        "open-issue",
        "open_issue",
        0.79,  # above "decision": "X still fails; we'll pick it up tomorrow" is open work
        r"\b(?:still )?(?:does not|doesn'?t|doesnt|do not|don'?t|is not|isn'?t|not) (?:seem to )?"
        r"(?:work|start|load|show|function|run|build|compile|pass)\w*\b"
        r"|\bstill (?:broken|failing|fails)\b"
        # what is left undone: "the changelog still needs writing", "X isn't done yet"
        r"|\bstill needs? (?:to be )?\w+(?:ing|ed|en)\b|\bstill needs? to \w+"
        r"|\b(?:still )?(?:isn'?t|is not|isnt|aren'?t|are not) (?:done|finished) yet\b"
        r"|\bstill (?:isn'?t|is not|isnt|aren'?t|are not) (?:done|finished)\b",
    ),
)
"""Every cue, in priority order (the best-scoring match names the category)."""

AGENT_SCOPE = re.compile(
    r"\b(?:in (?:all|every|any) (?:of )?(?:my )?(?:projects?|repos?|repositories|codebases?)|"
    r"across (?:all )?(?:my )?(?:projects|repos)|everywhere|globally|in general|"
    r"(?:for|in) (?:all|every) (?:future )?(?:sessions|conversations))\b|"
    r"\bi (?:always |generally |really |much |strongly |usually |personally |definitely )?"
    r"prefer\b",
    re.IGNORECASE,
)
"""A preference clearly about the user across projects → agent scope."""
_LOCAL_SCOPE = re.compile(
    r"\b(?:this|our|the) (?:service|repo|repository|project|codebase|monorepo|app|crate|"
    r"package|module|ui|frontend|backend|api)\b|\bhere\b",
    re.IGNORECASE,
)
_LOCAL_WORDS = frozenset({"everywhere", "globally", "in general"})


def agent_scoped(text: str) -> bool:
    """True when `text` is about the user across projects (`AGENT_SCOPE`); an "everywhere"
    bounded by this project ("this service uses httpx everywhere", "UTC everywhere in the
    UI") stays with the workspace."""
    match = AGENT_SCOPE.search(text)
    if match is None:
        return False
    return match.group(0).lower() not in _LOCAL_WORDS or not _LOCAL_SCOPE.search(text)


_ANY_RULE = re.compile("|".join(f"(?:{rule.pattern.pattern})" for rule in RULES), re.IGNORECASE)
"""All cues in one pattern: a fast "no cue at all" test before trying each rule."""


def match_rules(text: str) -> list[Rule]:
    """Every rule whose pattern matches `text`, best score first (stable by rule order)."""
    if not _ANY_RULE.search(text):
        return []
    hits = [rule for rule in RULES if rule.pattern.search(text)]
    return sorted(hits, key=lambda r: -r.score)


_LEAD = re.compile(
    r"^(?:(?:ok(?:ay)?|great|yes|yeah|also|and|so|but|then|well|hm+|um+|uh+|erm|please|pls|btw|"
    r"no need(?=\s*[,.!;:])|"
    r"by the way|"
    r"fyi|oh|heads up|one more "
    r"feedback|stop for a second|just to be sure|in theory|maybe)\b[!,.:;\-–]*\s*"
    # "no" / "nope" answering the agent ("no, use X", "no I meant X"), never the "no" of
    # "no tabs please" or "no-one", which negate the statement
    r"|(?:no|nope)\b(?:\s*[!,.:;]+\s*|\s*[\-–]\s+"
    r"|\s+(?=(?:i|we|you|it|that|this|let'?s|not|never)\b)))+",
    re.IGNORECASE,
)
_PROGRESS_LEAD = re.compile(
    r"^(?:continue|proceed|go ahead|move on|next)(?: (?:to|with) [^:.]{1,40})?:\s*",
    re.IGNORECASE,
)
"""A progress lead-in ("continue to phase 2: …"): routine, not part of the statement."""
_PART_LABEL = re.compile(
    r"^(phase|step|stage|part|milestone|sprint)\s+(\w{1,3})\s*[-–—:]\s+(?=\w)", re.IGNORECASE
)
"""A plan-part label ("phase 2 - ask before…"): the part the statement is for, said as a
phrase ("In phase 2, ask before…") instead of a dangling label."""
_HEDGE = re.compile(
    r"\b(?:i think|i guess|i believe|you know|i mean|basically|actually)\b,?\s*(?:that\s+)?",
    re.IGNORECASE,
)
"""Spoken hedges and fillers: they carry no content into a memory statement."""
_MEMORY_WRAPPER = re.compile(
    r"^(?:(?:please|pls|and|also|so)\s+)*(?:(?:remember|keep in mind|note|don'?t forget|do not "
    r"forget)(?: that| to)?,?\s+(?=\w)(?!(?:this|that|it)\W*$)|(?:from now on|going forward|"
    r"from here on|in (?:the )?future|for future (?:reference|sessions)|next time),?\s+(?=\w)"
    r"|(?:add|put|write|note|save) (?:this|that|the following) (?:in|into|to) (?:the )?"
    r"(?:claude|agents|gemini)\.md\s*[:,-]\s*)",
    re.IGNORECASE,
)
"""The request to remember is the record's reason, not its content ("Remember that X" → "X",
"From now on, run Y" → "Run Y"); the evidence keeps the words."""
_MAKE_SURE = re.compile(r"\bmake sure (?:that )?(?:you )?", re.IGNORECASE)
_ASK_WRAPPER = re.compile(
    r"^(?:can|could|would) you (?:please )?(?:update|add to|write (?:in|into)) (?:the )?"
    r"(?:claude|agents)\.md (?:that |to say that |so that )?|^(?:can|could|would) you (?:please )?",
    re.IGNORECASE,
)
_ALL_MY = re.compile(
    r"\b(in|across|for|throughout)( (?:all|every|each|any)(?: of)?)? my "
    r"(projects?|repos?|repositories|codebases?|work)\b(,?)(?=(\s+\w)?)",
    re.IGNORECASE,
)
"""A statement scoped to all the user's work ("in all my projects I want…"): the record is
agent-scoped already, so the phrase names the projects without a second "the user"
("In all projects, the user wants…", not "In all the user's projects the user wants…")."""


def _all_projects(match: re.Match[str]) -> str:
    quantifier = (match.group(2) or " all").replace(" of", "")
    head = f"{match.group(1)}{quantifier} {match.group(3)}"
    opens = match.start() == 0 and match.group(5) is not None
    return head + ("," if opens or match.group(4) else "")


_AFTER_SUBORDINATOR = re.compile(
    # the subordinator in any case: a sentence opens with it ("Before you push, …")
    r"\b((?i:before|after|until|till|when|whenever|if|unless|once|while) the (?:user|agent)) "
    r"([a-z]{2,})\b"
)
"""A clause "before you delete…" rewritten to "before the agent delete…": its verb agrees
with the new third-person subject ("…the agent deletes…")."""
_NOT_BASE_VERB = frozenset(
    re.findall(
        r"\S+",
        "can could will would shall should must may might did does is was has had am "
        "also always never just only still then first ever even really already again not "
        "the a an to and or",
    )
)
_IRREGULAR_THIRD = {"are": "is", "were": "was", "do": "does", "have": "has"}
"""Verbs whose third person is not the base form plus -s ("if you are done" → "if the
agent is done"; "if you do not know" → "if the agent does not know")."""


def _third_person(verb: str) -> str:
    """The third-person present of a base verb ("delete" → "deletes", "push" → "pushes",
    "try" → "tries"); a word that is no base verb (past, gerund, adverb, modal) unchanged."""
    if verb in _IRREGULAR_THIRD:
        return _IRREGULAR_THIRD[verb]
    if verb in _NOT_BASE_VERB or verb.endswith(("s", "ed", "ing", "ly", "'")):
        return verb
    if verb in ("go", "do") or verb.endswith(("sh", "ch", "x", "z")):
        return verb + "es"
    if verb.endswith("y") and verb[-2:-1] not in "aeiou":
        return verb[:-1] + "ies"
    return verb + "s"


_PRONOUNS = (
    (_ALL_MY, _all_projects),
    (re.compile(r"\bi'?ll\b", re.IGNORECASE), "the user will"),
    (re.compile(r"\bi'?m\b", re.IGNORECASE), "the user is"),
    (re.compile(r"\bi'?ve\b", re.IGNORECASE), "the user has"),
    (re.compile(r"\bi'd\b", re.IGNORECASE), "the user would"),
    (re.compile(r"(?<![\w/.-])[iI](?![\w/.'-])"), "the user"),
    (re.compile(r"\bme\b", re.IGNORECASE), "the user"),
    (re.compile(r"\bmy\b", re.IGNORECASE), "the user's"),
    (re.compile(r"\bmyself\b", re.IGNORECASE), "themselves"),
    # a capitalised "Your"/"You" after a lower-case word starts a quoted name or title
    # ("… is now Acme Your Data, unified"): left as written
    (re.compile(r"\byou'?re\b", re.IGNORECASE), "the agent is"),
    (re.compile(r"(?<![a-z,] )\b[Yy]our\b|(?<=[a-z,] )your\b"), "the agent's"),
    (re.compile(r"(?<![a-z,] )\b[Yy]ou\b|(?<=[a-z,] )you\b"), "the agent"),
    (re.compile(r"\b(?:dont|don't)\b", re.IGNORECASE), "do not"),
    (re.compile(r"\bdoesnt\b", re.IGNORECASE), "does not"),
    (re.compile(r"\bwe should always\b", re.IGNORECASE), "always"),
    (
        re.compile(
            # not after a verb that takes a bare infinitive or a modal ("could you use…")
            r"(?<!\blet )(?<!\bhelp )(?<!\bmake )(?<!\bcan )(?<!\bcould )(?<!\bwould )"
            r"(?<!\bshould )(?<!\bwill )(?<!\bdo )(?<!\bdid )(?<!\bdoes )(?<!\bmay )"
            r"(?<!\bmight )(?<!\bmust )(?<!\bhave )(?<!\bhad )(?<!\bsee )(?<!\bwatch )"
            r"\b(the (?:user|agent)) "
            r"(prefer|want|like|love|hate|dislike|need|use|think|know|expect|hope|wish|feel|"
            r"agree|plan|believe|assume|remember|mind|care|trust|suggest|see|run|review|write|"
            r"keep|add|name|call|commit|create|send|test|check|read|open|build|format|put)\b"
        ),
        r"\1 \2s",
    ),
    (re.compile(r"\b(the (?:user|agent)) have\b"), r"\1 has"),
    # "the user much prefer" → "the user prefers"; other adverbs stay ("strongly prefers")
    (re.compile(r"\b(the (?:user|agent)) (?:much )?((?:really |strongly |generally |usually |"
                r"personally |definitely )?)(prefer|like|love|hate|dislike|want)\b"), r"\1 \2\3s"),
    (_AFTER_SUBORDINATOR, lambda m: f"{m.group(1)} {_third_person(m.group(2))}"),
    (re.compile(r"\b(the user) (?:choose|chose)\b"), r"\1 chose"),
    (re.compile(r"^(?:like|so)\s+", re.IGNORECASE), ""),
)
_MEANT = re.compile(
    r"^(?:i|the user) (?:mostly |actually |only |really )?meant(?: that)?\s+", re.IGNORECASE
)
""""I meant X" says X: the record is the statement itself."""
_FILLER = re.compile(
    r"\b(?:actually|basically|literally|kind of|sort of|pls|plz|um+|uh+|erm)\b,?\s*"
    r"|(?-i:\bjust\s+)(?!this\b|once\b|for\b)"
    r"|\s+then(?=,)",
    re.IGNORECASE,
)
"""Spoken fillers inside a sentence ("remove default then, and just list…")."""
_LIKE_FILLER = re.compile(
    r"\b(is|be|are|was|were|something|stuff|thing)\s+like\s+(?!to\b)", re.IGNORECASE
)
"""A filler "like" after a verb of being ("which is like an agent" → "which is an agent")."""
_COMPARATIVE_THEN = re.compile(
    r"\b(more|less|fewer|older|newer|better|worse|later|earlier|rather|other|bigger|smaller|"
    r"faster|slower|longer|shorter|higher|lower|larger|greater)\s+then\b",
    re.IGNORECASE,
)
""""more then a few minutes": after a comparative, "then" is "than"."""
_COMPARATIVE_NOUN_THEN = re.compile(
    r"\b(more|less|fewer|older|newer|better|worse|later|earlier|bigger|smaller|faster|slower|"
    r"longer|shorter|higher|lower|larger|greater) ([a-z]{3,}) then (?=(?:the|a|an|that|this|"
    r"those|these|what|it|in|on|at|before|after|\d)\b)",
    re.IGNORECASE,
)
""""a newer date then the commit date": a comparative, its noun, then "then" before what is
compared is "than" too (not "add more tests then run them")."""
_AROUND_ADVERB = re.compile(r"\b(\w+)\s+(\w+ly)\s+\1\b", re.IGNORECASE)
"""A word said again around an adverb ("will be potentially be partnering")."""
_REPEATED = re.compile(r"\b(\w+)(?:\s+\1\b)+", re.IGNORECASE)
"""A word said twice in a row ("connect the the sessions directory")."""


_CODE_SPAN = re.compile(r"(`[^`\n]+`)")


def clean_speech(text: str) -> str:
    """Drop what speech and fast typing add to a statement: "I meant", fillers ("actually",
    "kind of", "pls", a filler "like"), a doubled word, "then" for "than" after a
    comparative. Text in `backticks` is a name or a command and stays as written (`just
    lint` runs a command runner, "just" is no filler there). The evidence keeps the words
    verbatim; this is for the record text."""
    parts = _CODE_SPAN.split(text)
    if len(parts) > 1:
        return "".join(part if k % 2 else _clean_words(part) for k, part in enumerate(parts))
    return " ".join(_clean_words(text).split())


def _clean_words(text: str) -> str:
    text = _MEANT.sub("", text)
    text = _FILLER.sub("", text)
    text = _LIKE_FILLER.sub(r"\1 ", text)
    text = _COMPARATIVE_THEN.sub(r"\1 than", text)
    text = _COMPARATIVE_NOUN_THEN.sub(r"\1 \2 than ", text)
    text = _AROUND_ADVERB.sub(r"\2 \1", text)
    return _REPEATED.sub(r"\1", text)


_NOT_X_THEN = re.compile(
    r"^not\s+(?!(?:yet|now|really|quite|sure|exactly|today|that|this|it|me|at all|here|there|"
    r"again|so|too|like|anymore|for)\b)((?:the |a |an )?[\w./@`'+#-]+(?:\s+[\w./@`'+#-]+){0,2}?)"
    r"\s*(?:[-–—,;:]|\s(?:please)\b)\s*(?!but\b)((?:\S+\s+){2,}\S.*)$",
    re.IGNORECASE,
)
_FIRST_CLAUSE_END = re.compile(r"(?:,|;|\s[-–—])\s")


def _what_holds_first(text: str) -> str:
    """"Not requests - this service uses httpx, keep it" → "This service uses httpx (not
    requests), keep it": a correction's record says what holds, with what it replaces in
    parentheses after its first clause, instead of opening on a bare "Not X"."""
    match = _NOT_X_THEN.match(text)
    if match is None:
        return text
    wrong, rest = match.group(1), match.group(2).strip()
    end = next((m.start() for m in _FIRST_CLAUSE_END.finditer(rest)
                if len(rest[: m.start()].split()) >= 3), None)
    if end is None:
        body = rest.rstrip(" .!;")
        tail = rest[len(body):]
        out = f"{body} (not {wrong}){tail}"
    else:
        out = f"{rest[:end]} (not {wrong}){rest[end:]}"
    return out[0].upper() + out[1:]


_TASK_TAIL = re.compile(
    r"(?<=\w)[,;]\s+(?:and\s+|so\s+)?(?:please\s+|pls\s+)?(?:put|tag|fix|amend|run|rerun|redo|"
    r"undo|revert|change|move|update|push|commit|merge|reword|(?:do not|don'?t|dont) forget)\s+"
    r"(?:it|them|that|this|those)\b"
    r"[^,;.!?]{0,30}[.!]?$",
    re.IGNORECASE,
)
_RULE_WORDS = re.compile(r"\b(?:instead|always|never|every|each|before|after|whenever)\b",
                         re.IGNORECASE)


def _drop_task_tail(text: str) -> str:
    """A rule followed by the task it asks for now ("We indent YAML with two spaces, revert
    it") keeps the rule: the closing "revert it" / "commit that" is this
    session's step, left to the evidence. A tail that is part of the rule ("…, revert it
    instead", "…, run them before every push") stays."""
    match = _TASK_TAIL.search(text)
    if match is None or _RULE_WORDS.search(match.group(0)) or match.start() < 12:
        return text
    return text[: match.start()]


_BARE_NOT = re.compile(r"^([Nn])ot (?=(?:use|run|edit|touch|commit|push|add|call|change|put|"
                       r"write|import|delete|remove|merge|deploy|store|send|log|print|mix|"
                       r"create|open|install|bump|rename|move)\b)")
""""please not use X" loses its "please": the record says "Do not use X"."""
_MD_LINK = re.compile(r"\[([^\]]+)\]\((?:https?://)[^)]+\)")
MAX_MEMORY_TEXT_CHARS = 280
"""Memory text longer than this is cut at a word boundary."""


_SENTENCE_END = re.compile(
    r"(?<![\s\d])(?<!\be\.g)(?<!\bi\.e)(?<!\bvs)[.!?][\"'”)\]]*(?=\s+[\"'“(*`]*[A-Z0-9])"
)
"""A sentence end ("…the shared UI\". Just wrote…"), not a list number ("1. Compile")."""
_CLAUSE_END = re.compile(r"[;:](?=\s)|\s[–—-](?=\s)")
"""A clause end inside a sentence: a semicolon, a colon, a dash between spaces."""
_LIST_START = re.compile(r"(?:^|\s)1[.)]\s")
"""A numbered list opening mid-text ("…two errors: 1. Compile error…"): a cut inside its
first item would promise items that never come, so the cut goes before it when it can."""
MIN_CUT_SHARE = 0.5
"""A sentence or clause boundary counts only when it keeps at least this share of the cap."""


def _shorten(text: str) -> str:
    """`text` within `MAX_MEMORY_TEXT_CHARS`: cut after the last whole sentence that fits,
    else at the last clause end (";", ":", a dash) that fits, when either keeps at least
    `MIN_CUT_SHARE` of the cap; else at a word boundary with "…". A record is never left
    ending mid-sentence when a boundary is in reach ("…but hit two errors: 1. Compile error
    at line 9: `cannot…" reads as "…but hit two errors.")."""
    cap = MAX_MEMORY_TEXT_CHARS
    floor = int(cap * MIN_CUT_SHARE)
    for pattern in (_SENTENCE_END, _CLAUSE_END):
        ends = [m.end() if pattern is _SENTENCE_END else m.start()
                for m in pattern.finditer(text, 0, cap)]
        # never inside `code` or a "quote": the record would open one it does not close
        ends = [e for e in ends if floor <= e <= cap and text.count("`", 0, e) % 2 == 0
                and text.count('"', 0, e) % 2 == 0]
        listed = _LIST_START.search(text, 0, cap)
        if listed and any(e <= listed.start() for e in ends):
            ends = [e for e in ends if e <= listed.start()]
        if ends:
            head = text[: ends[-1]].rstrip(" ,;:–—-")
            return head if head[-1:] in ".!?\"'”)]" else head + "."
    cut = text.rfind(" ", 0, cap - 1)
    return text[: cut if cut > 0 else cap - 1].rstrip(" ,;") + "…"


def rewrite(segment: str, category: str) -> str:
    """Turn a user's sentence into a short third-person/imperative memory statement.

    Drops filler, hedges ("I think", "you know") and "can you update CLAUDE.md that",
    rewrites first/second person ("I'll" → "the user will", "you" → "the agent"), joins
    wrapped lines and quote markers,
    and caps the length. No category label: the record's ``kind`` says stable/current.
    """
    text = _MD_LINK.sub(r"\1", segment).replace("**", "")
    text = re.sub(r"\s*\n\s*>?\s*", " ", text)
    text = " ".join(text.split())
    text = _LEAD.sub("", text)
    text = _ASK_WRAPPER.sub("", text)
    text = _MEMORY_WRAPPER.sub("", text)
    text = _MAKE_SURE.sub("", text)
    text = _HEDGE.sub("", text)
    text = _PROGRESS_LEAD.sub("", text)
    text = _PART_LABEL.sub(lambda m: f"In {m.group(1).lower()} {m.group(2)}, ", text)
    text = _LEAD.sub("", text)
    text = clean_speech(text)
    text = _what_holds_first(text)
    text = _drop_task_tail(text)
    text = _BARE_NOT.sub(lambda m: "Do not " if m.group(1) == "N" else "do not ", text)
    for pattern, repl in _PRONOUNS:
        text = pattern.sub(repl, text)
    text = text.strip(" ,;:-–")
    if text.endswith(")") and text.count(")") > text.count("("):
        text = text[:-1].rstrip()  # the focused clause began inside a parenthesis
    if len(text) > MAX_MEMORY_TEXT_CHARS:
        text = _shorten(text)
    if text and text[-1] not in ".!?…":
        text += "."
    if not text:
        return ""
    first = text.split(" ", 1)[0]
    if first.replace("'", "").isalpha():  # keep identifiers (goal_amount, .codex/sessions)
        text = text[0].upper() + text[1:]
    return text
