"""The one secret scanner every write path uses: "does this text hold a credential?".

Memory is shown to every later process of an agent, so nothing that looks like a
credential may be stored: not by `memory save`/`update`, a maintenance plan, a
consolidation commit, an archived transcript or a run's stored step inputs, outputs and
events. They all call this module (it sits in ``memory``, the lowest layer they all may
import; the builtin curator calls it too).

What counts as a secret (each finding names its detector):

* every maintained detect-secrets plugin (AWS, GitHub, GitLab, Slack, Stripe, JWT,
  basic-auth URLs, npm, PyPI, SendGrid, Twilio, Telegram, Discord, Mailchimp, Square, Azure,
  IBM, Cloudant, SoftLayer, Artifactory, OpenAI, quoted keyword assignments), with
  detect-secrets' own false-positive filters (UUIDs, sequences, templates, ``$VAR``,
  indirect references); left out are the two ad-hoc high-entropy plugins (they flag
  ordinary words), the public-IP plugin (an address is no credential) and the private-key
  header plugin (a header alone is a mention: private-key *blocks* with key material are
  found instead);
* token formats detect-secrets does not know (`EXTRA_PATTERNS`: ``github_pat_``,
  ``sk-proj-``, ``sk-ant-``, Google ``AIza``/``GOCSPX-``/``ya29.``, Hugging Face, npm
  ``npm_``, Stripe test keys, Vault, age, Grafana, …);
* password assignments in prose or config ("the DB password should always be X",
  ``passwd=X``, "password is X") and generic key assignments (``API_KEY=X``), whose value
  must look like a credential (a plain word, a placeholder such as ``sk-xxx``/``<token>``/
  ``${VAR}``, or an ``ENV_NAME`` is a reference, not a secret);
* long random tokens: Shannon entropy above `ENTROPY_LIMIT` bits/char over at least
  `MIN_TOKEN_CHARS`, letters and digits mixed, not a path, not an identifier
  (``snake_case``/``CamelCase`` words), never plain hex (git hashes, digests).

Cost: a cheap gate (long words that mix letters and digits; secret keywords followed by an
assignment or a verb, found with `str.find`) picks the few places that could hold a secret;
only those go to the detectors, whose instances are built once per process. detect-secrets
itself is imported only when something passes the gate, so a plain note costs no import.
``bench/secret_scan_bench.py`` prints the figure (and its target per 8 KiB save).

A finding never carries the value itself in its message; `redact` replaces values by a
typed placeholder ``[REDACTED:<kind>]`` (which the scanner never flags again).

Spec: docs/threat-model.md (one secret scanner, used on every write path).
"""

from __future__ import annotations

import math
import re
import string
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from functools import lru_cache
from typing import TYPE_CHECKING, NamedTuple

from wardian.errors import ValidationError

if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "ENTROPY_LIMIT",
    "EXTRA_PATTERNS",
    "MIN_TOKEN_CHARS",
    "PLACEHOLDER",
    "Finding",
    "SecretDetected",
    "check_fields",
    "contains_secret",
    "redact",
    "redact_value",
    "scan",
    "scan_fields",
]


class _Pattern:
    """A regex compiled on first use: compiling every pattern here is costly, which
    every `memory save` process would pay although a plain note never reaches most of
    them (whole-process CPU). Offers what this module calls."""

    __slots__ = ("_compiled", "_flags", "_source")

    def __init__(self, source: str, flags: int = 0) -> None:
        self._source = source
        self._flags = flags
        self._compiled: re.Pattern[str] | None = None

    @property
    def compiled(self) -> re.Pattern[str]:
        """The compiled pattern (compiled now, once)."""
        if self._compiled is None:
            self._compiled = re.compile(self._source, self._flags)
        return self._compiled

    @property
    def groups(self) -> int:
        """Number of capturing groups."""
        return self.compiled.groups

    def search(self, text: str) -> re.Match[str] | None:
        """`re.Pattern.search`."""
        return self.compiled.search(text)

    def match(self, text: str, pos: int = 0) -> re.Match[str] | None:
        """`re.Pattern.match`."""
        return self.compiled.match(text, pos)

    def finditer(self, text: str) -> Iterator[re.Match[str]]:
        """`re.Pattern.finditer`."""
        return self.compiled.finditer(text)

    def findall(self, text: str) -> list[Any]:
        """`re.Pattern.findall`."""
        return self.compiled.findall(text)


MIN_TOKEN_CHARS = 20
"""Only tokens at least this long are entropy-checked."""
ENTROPY_LIMIT = 4.0
"""Shannon entropy (bits/char) above which a long mixed token counts as a secret."""
PLACEHOLDER = "[REDACTED:{kind}]"
"""What `redact` puts in place of a secret value (``kind`` is the detector's slug)."""

REFERENCE_HINT = (
    "store a reference instead of the value, e.g. \"the deploy key lives in 1Password item "
    "'Deploy AWS'\" or \"read it from the DB_PASSWORD environment variable\""
)


class Finding(NamedTuple):
    """One secret found: which detector, in which field, where (never the value).

    Attributes:
        detector: the detector's human name, e.g. ``AWS Access Key``.
        kind: its slug for placeholders and JSON, e.g. ``aws-access-key``.
        field: the field path the caller gave (``text``, ``evidence``, ``sources[0].locator``).
        start, end: the value's character span in that field's text.
    """

    detector: str
    kind: str
    field: str
    start: int
    end: int

    def to_json(self) -> dict[str, Any]:
        """JSON-ready form (no value)."""
        return {"detector": self.detector, "kind": self.kind, "field": self.field}


class SecretDetected(ValidationError):
    """A write was refused because a field holds something secret-shaped (exit 2).

    The message names the detector(s) and field(s), never the value, and says how to
    store a reference instead.

    Args:
        findings: what was found (at least one).
        action: what was refused, e.g. ``memory save``.
    """

    def __init__(self, findings: list[Finding], *, action: str = "this write") -> None:
        self.findings = findings
        first = findings[0]
        kinds = sorted({f"{f.detector} in {f.field}" for f in findings})
        super().__init__(
            f"refused: {', '.join(kinds)} looks like a secret; {action} stored nothing "
            "(the value is not shown)",
            path=first.field, hint=REFERENCE_HINT,
        )


def _slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


# --- token formats detect-secrets does not know --------------------------------------------

EXTRA_PATTERNS: tuple[tuple[str, str], ...] = (
    ("GitHub Fine-grained Token", r"github_pat_[A-Za-z0-9_]{30,}"),
    ("Anthropic API Key", r"sk-ant-(?:api|admin|sid)[0-9]{2}-[A-Za-z0-9_\-]{20,}"),
    ("OpenAI API Key", r"sk-(?:proj|svcacct|admin)-[A-Za-z0-9_\-]{20,}"),
    ("OpenAI API Key", r"(?<![\w-])sk-[A-Za-z0-9]{32,}(?![\w-])"),
    ("Google API Key", r"AIza[0-9A-Za-z_\-]{35}"),
    ("Google OAuth Client Secret", r"GOCSPX-[A-Za-z0-9_\-]{28}"),
    ("Google OAuth Access Token", r"ya29\.[0-9A-Za-z_\-]{30,}"),
    ("Hugging Face Token", r"(?<![\w-])hf_[A-Za-z0-9]{30,}"),
    ("npm Token", r"(?<![\w-])npm_[A-Za-z0-9]{36}"),
    ("Stripe Key", r"(?<![\w-])(?:sk|rk|pk)_(?:test|live)_[0-9a-zA-Z]{16,}"),
    ("Stripe Webhook Secret", r"whsec_[A-Za-z0-9]{24,}"),
    ("Slack App Token", r"xapp-\d-[A-Z0-9]+-\d+-[a-z0-9]{16,}"),
    ("Slack Token", r"xox[abposr]-[A-Za-z0-9-]{20,}"),
    ("Discord Webhook", r"discord(?:app)?\.com/api/webhooks/\d+/[\w-]{20,}"),
    ("Shopify Token", r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}"),
    ("DigitalOcean Token", r"do[opr]_v1_[a-f0-9]{64}"),
    ("HashiCorp Vault Token", r"(?<![\w.])hv[sb]\.[A-Za-z0-9_\-]{24,}"),
    ("Terraform Cloud Token", r"[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_\-=]{60,}"),
    ("age Secret Key", r"AGE-SECRET-KEY-1[0-9A-Z]{58}"),
    ("Grafana Token", r"glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}|glc_[A-Za-z0-9+/]{32,}={0,2}"),
    ("Supabase Token", r"sbp_[a-f0-9]{40}"),
    ("Linear API Key", r"lin_api_[A-Za-z0-9]{40}"),
    ("Notion Token", r"ntn_[A-Za-z0-9]{40,}|(?<![\w-])secret_[A-Za-z0-9]{43}(?![\w-])"),
    ("Atlassian API Token", r"ATATT3[A-Za-z0-9_\-=]{50,}"),
    ("Databricks Token", r"(?<![\w-])dapi[a-f0-9]{32}(?![\w-])"),
    ("Mailgun API Key", r"(?<![\w-])key-[0-9a-f]{32}(?![\w-])"),
    ("Sentry Token", r"sntr[ysu]_[A-Za-z0-9+/=_]{40,}"),
    ("Doppler Token", r"dp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,}"),
    ("Azure Shared Access Key", r"(?:SharedAccessKey|AccountKey)=[A-Za-z0-9+/=]{40,}"),
    ("Postman API Key", r"PMAK-[a-f0-9]{24}-[a-f0-9]{34}"),
    ("Figma Token", r"figd_[A-Za-z0-9_\-]{40,}"),
    ("PlanetScale Token", r"pscale_(?:tkn|pw|oauth)_[A-Za-z0-9_\-.]{32,}"),
)
"""(detector name, regex) for token formats detect-secrets 1.5 lacks. A regex with a
group marks the value as group 1; otherwise the whole match is the value."""

_EXTRA = tuple((name, _slug(name), _Pattern(rx)) for name, rx in EXTRA_PATTERNS)

_PRIVATE_BLOCK = _Pattern(
    r"-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----"
    r"(?P<body>.*?)(?:-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----|\Z)"
    r"|PuTTY-User-Key-File-\d+:(?P<putty>.*?)(?:Private-MAC: *[0-9a-fA-F]+|\Z)"
    r"|-----BEGIN SSH2 ENCRYPTED PRIVATE KEY-----(?P<ssh2>.*?)"
    r"(?:-----END SSH2 ENCRYPTED PRIVATE KEY-----|\Z)",
    re.DOTALL,
)
_BASE64_RUN = _Pattern(r"[A-Za-z0-9+/=]{32,}")

# --- assignments in prose and config --------------------------------------------------------

_PASSWORD_WORDS = (
    r"(?:[\w-]*?(?:pass(?:word|wd|phrase|code)|_pass|pwd|passwd)|passw[oö]rt|kennwort"
    r"|mot\s+de\s+passe|contrase[ñn]a|senha|wachtwoord|l[öo]senord|has[łl]|salasana"
    r"|пароль|парол|şifre|sifre|parola)[^\W\d_]{0,3}"
    r"|mdp|(?P<short>(?:[\w-]*?_)?pw|p/w)|(?P<bare>pass)"
)
"""The word "password" in the languages the scanner reads (Latin and Cyrillic scripts, with
up to three letters of inflection: "Passworts", "lösenordet", "пароля"; CJK in the `cjk`
group), the short forms ``pw`` and ``p/w``, and a bare ``pass``."""
_PASSWORD_VALUE = r"""(?P<value>"[^"\n]{3,}"|'[^'\n]{3,}'|`[^`\n]{3,}`|[!#-&(-_a-~]{3,})"""
"""A value: quoted, or a run of printable ASCII (so "パスワードはX1です" ends at "です")."""
_VERB = r"""(?:(?:should|must|will|shall|can|would)\s+(?:always\s+|now\s+|still\s+)?
              (?:be|remain|stay)
           |is(?:\s+now|\s+still|\s+always)?|are|was|were|becomes|became
           |(?:is\s+)?(?:set|changed|reset)\s+to
           |ist|lautet|war|wird|est|était|sera|es|era|será|é|è|blijft|är|jest|to|on)"""
"""The verbs that state a password's value ("is", "should be", "lautet", "è", "är", ...)."""
_PASSWORD_KEY = _Pattern(
    r"""(?ix)(?:(?P<latin>""" + _PASSWORD_WORDS + r""")(?![\w-])
    |(?P<cjk>パスワード|密[码碼]|暗証番号|비밀번호))"""
)
"""The password keyword itself, matched at a word's start."""
_BETWEEN_WORD = _Pattern(r"\s+[^\s:=：,;]*[^\s:=：.,;!?]")
"""One word between the keyword and its verb or sign (a sentence or clause ends the run)."""
_MAX_BETWEEN = 6
"""At most this many words between the keyword and its verb or sign: "the password for the
box we share is X", "Passwort der Datenbank lautet X", "пароль от сервера: X"."""
_PASSWORD_TAIL = _Pattern(
    r"""(?ix)['"\]]{0,2}
    (?:
        (?P<assign>\s*(?::=|=>|->|[:=：]|\s[—–](?=\s)))\s*  # password: X, passwd=X, pw -> X
      | (?P<particle>\s*(?:は|是|为|為|が|는|은)\s*)      # パスワードはX, 密码是X
      | \s+""" + _VERB + r"""\s+
    )
    """ + _PASSWORD_VALUE + r"""
    (?P<next>[ \t]+[\w+]+)?
    """
)
"""What states a password's value after the keyword and the words between: a sign, a CJK
particle (after a CJK keyword only) or a verb, then the value."""
_PASSWORD_PLAIN = _Pattern(r"\s+" + _PASSWORD_VALUE + r"(?P<next>[ \t]+[\w+]+)?")
"""A value right after the keyword, nothing between ("password Tr0ub4dor&3", "pw X")."""
_PAIR = _Pattern(
    r"""(?ix)
    (?:log(?:\s*-?\s*in|on)|sign\s*-?\s*in|creds|credentials?|account|zugangsdaten
       |identifiants|credenciales|credenziali|логин|учётн\w*|учетн\w*|ログイン|[账帐]号)
    (?:\s+(?:for|of|to|on|at)\s+[\w.@-]+)?
    (?:\s*[:=：]|\s+(?:is|are|as|ist|sont|son|sono|est|es|è))?
    (?:\s+(?:the|a|an|our|test|shared)){0,2}
    (?:\s+(?:account|user|login))?\s+
    (?P<user>[\w.@+-]{2,64})
    (?:\s*/\s*|:|\s+(?:with|using)\s+)
    (?P<value>"[^"\n]{4,}"|'[^'\n]{4,}'|[!#-&(-_a-~]{4,})
    """
)
"""A user name and its password without a URL: "the login is admin / X", "creds: ci:X",
"sign in as root with X"."""
_BASIC_HEADER = _Pattern(r"(?i)basic\s+(?P<value>[A-Za-z0-9+/]{8,}={0,2})(?![\w+/=])")
"""``Authorization: Basic <base64 of user:password>``."""
_CLIENT_FLAG = _Pattern(
    r"""(?x)(?:(?<!\S)-u|--user|--auth|(?<!\S)-a)[\s=]+['"]?
    (?P<user>[^\s:'"$]+):(?P<value>[^\s'"]{4,})"""
)
"""``curl -u user:password``, ``--user``, httpie's ``--auth``/``-a``."""
_MYSQL_FLAG = _Pattern(
    r"""(?i)(?:mysql\w*|mariadb\w*)\b[^\n|;&]*?(?<!\S)-p"""
    r"""(?P<value>'[^'\n]{3,}'|"[^"\n]{3,}"|[^\s'"-]\S{2,})"""
)
"""The MySQL clients' ``-pPASSWORD`` (the password glued to the flag)."""
_KEY_ASSIGN = _Pattern(
    r"""(?ix)
    [\w-]*?(?:api[_-]?key|api[_-]?token|secret[_-]?key|access[_-]?key
        |auth[_-]?token|access[_-]?token|refresh[_-]?token|client[_-]?secret|app[_-]?secret
        |private[_-]?key|signing[_-]?key|encryption[_-]?key|master[_-]?key|webhook[_-]?secret
        |token|secret|apikey)(?![\w-])
    ['"\]]{0,2}\s*(?::=|=>|[:=])\s*
    (?P<value>"[^"\n]{8,}"|'[^'\n]{8,}'|[^\s"'`,;]{8,})
    """
)
_UNITS = frozenset({
    "characters", "chars", "char", "digits", "letters", "symbols", "long", "minimum",
    "maximum", "or", "and", "words",
})
_PLAIN_VALUES = frozenset({
    "required", "optional", "none", "null", "nil", "true", "false", "empty", "unset", "hidden",
    "redacted", "masked", "secret", "password", "passwords", "changeme", "example", "sample",
    "placeholder", "dummy", "fake", "test", "todo", "tbd", "different", "correct", "incorrect",
    "wrong", "invalid", "expired", "rotated", "missing", "stored", "managed", "same", "strong",
    "weak", "random", "generated", "encrypted", "hashed",
})
_ENV_NAME = _Pattern(r"^[A-Z][A-Z0-9_]*$")
_TEMPLATE = _Pattern(r"^(?:\$\{.*\}|\{\{.*\}\}|\{.*\}|<.*>|\$[A-Za-z_]\w*|%\(?\w*\)?s?|\.\.\.)$")


def _strip_value(raw: str) -> tuple[str, int, int]:
    """(value, offset of its start in `raw`, its length) without quotes/trailing punctuation."""
    if raw[:1] in "\"'`" and raw[-1:] == raw[:1]:
        return raw[1:-1], 1, len(raw) - 2
    value = raw.rstrip(".,;:!?)]}")
    return value, 0, len(value)


def _is_placeholder(value: str) -> bool:
    """A value that stands for a secret rather than being one."""
    body = value.strip()
    if not body or _TEMPLATE.match(body) or body.startswith("$"):
        return True
    if body.upper().startswith("[REDACTED"):
        return True
    tail = re.split(r"[-_.]", body)[-1]
    if len(tail) >= 3 and set(tail.lower()) <= set("x*0.#"):
        return True  # xxx, ***, 0000, sk-xxx, AKIAXXXXXXXX
    if len(set(body.lower())) <= 2:
        return True
    lowered = body.lower()
    return any(w in lowered for w in ("your", "xxxx", "****", "placeholder", "redacted",
                                      "changeme", "<", ">"))


def _password_value_ok(value: str, *, assigned: bool, next_word: str) -> bool:
    """Whether the value after a password keyword looks like an actual password."""
    if len(value) < 4 or _is_placeholder(value) or _ENV_NAME.match(value):
        return False
    if value.startswith(("/", "~/", "./", "../")) or "://" in value:
        return False  # a path or a link ("pwd: /srv/app", "the reset link is https://…")
    if _NAMES_A_PASSWORD.search(value):
        return False  # a name that says "password" ("the password manager is 1Password")
    if next_word.strip().lower() in _UNITS:
        return False  # "must be 16+ characters"
    if "(" in value or "[" in value:
        return False  # an indirect reference: os.environ["X"], get_secret()
    if value.lower() in _PLAIN_VALUES:
        return False
    if value.isdigit():
        return len(value) >= 6
    symbol = any(not c.isalnum() for c in value)
    digit = any(c.isdigit() for c in value)
    mixed = any(c.isupper() for c in value[1:]) and any(c.islower() for c in value)
    if digit or symbol or mixed:
        return not (symbol and not digit and not mixed and value.replace("-", "").isalpha()
                    and not assigned)  # "well-known" in prose
    # "password: correcthorsebattery", but not "password: ask the admin" (prose goes on)
    return assigned and len(value) >= 8 and not next_word.strip()


_NAMES_A_PASSWORD = _Pattern(r"(?i)pass(?:word|wort)|kennwort")


def _strong_password(value: str) -> bool:
    """A stricter test for a value no keyword announces as a password (a bare ``pass``, a
    user/password pair, a client flag): letters with a symbol, or letters with digits and
    both cases, and not a path or a link."""
    if not _password_value_ok(value, assigned=True, next_word=""):
        return False
    if "/" in value or "\\" in value or not any(c.isalpha() for c in value):
        return False
    mixed = any(c.isupper() for c in value) and any(c.islower() for c in value)
    return (any(c in "!#$%&*+=?@^~" for c in value)
            or (any(c.isdigit() for c in value) and (mixed or len(value) >= 8))
            or (mixed and len(value) >= 10 and not _looks_identifier(value)))


def _plain_password_ok(value: str) -> bool:
    """A value right after the word "password", with no verb or sign between ("password
    Tr0ub4dor&3"): stricter than an assignment, since prose puts any word there ("password
    protected", "password reset-flow"): letters with a digit or a symbol, not a path."""
    if "/" in value or "\\" in value or not any(c.isalpha() for c in value):
        return False
    return any(c.isdigit() for c in value) or any(c in "!#$%&*+=?@^~" for c in value)


def _key_value_ok(value: str) -> bool:
    if len(value) < 8 or _is_placeholder(value) or _ENV_NAME.match(value):
        return False
    if "(" in value or "[" in value or (value.count(".") >= 2 and "/" not in value):
        return False  # a call, an index, or a dotted name (settings.api.key)
    digit = any(c.isdigit() for c in value)
    alpha = any(c.isalpha() for c in value)
    if not (digit and alpha):
        return False
    return not _looks_identifier(value)


# --- credentials in URLs -----------------------------------------------------------------

_URL_CREDENTIALS = _Pattern(
    r"(?i)(?<![a-z0-9+.\-])[a-z][a-z0-9+.\-]*://"
    r"(?P<user>[^\s:/?#@'\"`<>]*):(?P<password>[^\s/'\"`]+)@(?=[^\s@/]*[a-z0-9\]])"
)
"""``scheme://user:password@host`` (any scheme, an empty user name too: ``redis://:pw@h``).
The password is everything between the colon and the last ``@`` before the host (``!``,
``$``, ``?``, ``#``, ``@`` and ``%40`` too: people paste passwords unencoded)."""
_STAND_INS = frozenset({
    "password", "passwd", "pass", "pwd", "secret", "changeme", "example", "sample", "dummy",
    "placeholder", "redacted", "masked", "hidden", "test", "mypassword", "yourpassword",
    "userpassword",
})
"""Words that stand for a password in documentation (``postgres://user:password@host``)."""


def _url_password_spans(text: str) -> Iterator[tuple[str, int, int]]:
    """Passwords in URLs, placeholders left out: a template (``${X}``, ``<pw>``), a mask, a
    stand-in word (`_STAND_INS`), or the user name repeated (``guest:guest``)."""
    for match in _URL_CREDENTIALS.finditer(text):
        password = match.group("password")
        lowered = password.lower()
        masked = set(lowered) <= set("x*#.") or lowered.startswith(("$", "[redacted", "%("))
        if (masked or _TEMPLATE.match(password) or lowered in _STAND_INS
                or lowered == match.group("user").lower() or "{" in password
                or "your" in lowered or "<" in password):
            continue
        yield "Basic Auth Credentials", match.start("password"), match.end("password")


# --- entropy ------------------------------------------------------------------------------

_ENTROPY_TOKEN = _Pattern(r"[A-Za-z0-9+/=_\-]{" + str(MIN_TOKEN_CHARS) + ",}")
_HEX = _Pattern(r"^[0-9a-fA-F-]+$")
_WORD_PARTS = _Pattern(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")


def _entropy(token: str) -> float:
    counts = Counter(token)
    n = len(token)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


def _looks_identifier(token: str) -> bool:
    """snake_case, kebab-case or CamelCase words (with a few numbers), not random."""
    parts = _WORD_PARTS.findall(token)
    if not parts:
        return False
    letters = [p for p in parts if not p.isdigit()]
    digit_runs = len(parts) - len(letters)
    average = sum(map(len, parts)) / len(parts)
    return average >= 3.2 and digit_runs <= 2 and all(len(p) >= 2 for p in letters[:-1])


def _high_entropy_spans(line: str) -> Iterator[tuple[int, int]]:
    for match in _ENTROPY_TOKEN.finditer(line):
        token = match.group(0).strip("=-_")
        if len(token) < MIN_TOKEN_CHARS or _HEX.match(token):
            continue
        if not (re.search(r"\d", token) and re.search(r"[A-Za-z]", token)):
            continue
        if token.count("/") >= 2:
            continue  # a path, not a key
        if _looks_identifier(token) or _is_placeholder(token):
            continue
        if _entropy(token) > ENTROPY_LIMIT:
            yield match.start(), match.end()


# --- the gate --------------------------------------------------------------------------------
# Scanning every line with every detector is slow; the gate keeps it cheap
# (bench/secret_scan_bench.py). Two cheap routes pick the places that could hold a secret:
#
# * words: whitespace-separated words of at least `_MIN_WORD` characters that mix letters
#   and digits. A word with a known prefix gets every token detector; any other word only
#   the shape-based ones, and only when it looks random (not hex, a path or an identifier).
# * keywords: "pass", "pwd", "secret", "token", "key", ... found with `str.find` on the
#   lower-cased text and followed by an assignment (``=``, ``:``) or a verb ("is", "should
#   be"): the assignment rules run anchored at that word, and detect-secrets' keyword
#   plugins on that line.

_MIN_WORD = 16
_STRIP = "\"'`()[]{}<>,;!?*"
_PREFIX = _Pattern(
    r"AKIA|ASIA|ABIA|ACCA|A3T|AKC|AP[0-9A-F]|gh[pousr]_|github_pat_|gl(?:pat|dt|ft|soat|rt|cbt"
    r"|imt|ptt|agent|oas|sa|c)[-_]|GR1348941|sk-|[spr]k_(?:live|test)|xox|xapp-|eyJ|SG\.|AIza"
    r"|GOCSPX|ya29\.|hf_|npm_|pypi-|whsec_|shp(?:at|ca|pa|ss)_|do[opr]_v1|hv[sb]\.|atlasv1"
    r"|AGE-SECRET|sbp_|lin_api|ntn_|secret_|ATATT|dapi|key-|sntr[ysu]_|dp\.|AccountKey"
    r"|SharedAccessKey|PMAK-|figd_|pscale_|sq0csp-|AC[a-z0-9]{32}|SK[a-z0-9]{32}|_authToken"
    r"|hooks\.slack|discord|softlayer|cloudant"
)
_HEXISH = _Pattern(r"^(?:sha\d+:|[0-9a-fA-F]+[.:])?[0-9a-fA-F-]+$")
_PASSWORD_KEYWORDS = frozenset({
    "pass", "pwd", "pw", "p/w", "kennwort", "mdp", "contrase", "senha", "wachtwoord", "senord",
    "hasł", "hasl", "salasana", "парол", "şifre", "sifre", "parola", "パスワード",
    "密码", "密碼", "暗証番号", "비밀번호",
})
"""Gate words of the password rule (`_password_spans`), lower-cased, in several languages."""
_PAIR_KEYWORDS = frozenset({
    "login", "log in", "log-in", "logon", "sign in", "sign-in", "signin", "creds", "credential",
    "account", "zugangsdaten", "identifiants", "credenciales", "credenziali", "логин", "учётн",
    "учетн", "ログイン", "账号", "帐号", "-u", "--user", "--auth", "-a", "mysql", "mariadb",
    "basic",
})
"""Gate words of the pair rules (`_pair_spans`): user/password pairs, Basic headers, the
password flags of HTTP and MySQL clients."""
_KEYWORDS = ("pass", "pwd", "secret", "token", "key", "auth", "bearer", "cred", "cloudant",
             "softlayer", *sorted((_PASSWORD_KEYWORDS | _PAIR_KEYWORDS) - {"pass", "pwd"}))
_VERBS = ("is ", "are ", "was ", "were ", "should ", "must ", "will ", "shall ", "can ",
          "would ", "be ", "set to", "changed to", "reset to", "becomes ", "became ")
_PASSWORD_VERBS = (*_VERBS, "for ", "of ", "on ", "to ")
_WORD_CHARS = frozenset(string.ascii_letters + string.digits + "_-")
_BEARER = _Pattern(r"(?i:bearer)\s+([A-Za-z0-9_\-.=+/~]{20,})")
_TOKEN_PLUGINS_BY_SHAPE = {"TelegramBotTokenDetector": ":", "DiscordBotTokenDetector": ".",
                           "MailchimpDetector": "-us", "TwilioKeyDetector": ""}


def _random_looking(word: str) -> bool:
    if _HEXISH.match(word) or word.count("/") >= 2 or "://" in word:
        return False
    return not _looks_identifier(word) and _entropy(word) > 3.0


def _word_spans(word: str) -> Iterator[tuple[str, int, int]]:
    """Secrets inside one word (spans relative to the word)."""
    if "://" in word:
        if "@" in word:
            yield from _detect_secrets_spans(word, token_only=True)
        parts = [(m.start(), m.group(0)) for m in re.finditer(r"[^/?&#=@]{16,}", word)]
        if _PREFIX.search(word):
            yield from _prefixed_spans(word)
        for offset, part in parts:
            if not _PREFIX.search(part):
                yield from ((n, offset + a, offset + b) for n, a, b in _shape_spans(part))
        return
    if _PREFIX.search(word):
        yield from _prefixed_spans(word)
    yield from _shape_spans(word)


def _prefixed_spans(word: str) -> Iterator[tuple[str, int, int]]:
    for name, _kind, regex in _EXTRA:
        for match in regex.finditer(word):
            group = 1 if regex.groups else 0
            if not _is_placeholder(match.group(group)):
                yield name, match.start(group), match.end(group)
    yield from _detect_secrets_spans(word, token_only=True)


def _shape_spans(word: str) -> Iterator[tuple[str, int, int]]:
    if not (_DIGIT.search(word) and _ALPHA.search(word)) or not _random_looking(word):
        return
    for name, plugin in _shape_plugins():
        if _TOKEN_PLUGINS_BY_SHAPE[type(plugin).__name__] in word:
            yield from _plugin_spans(plugin, name, word, word)
    for start, end in _high_entropy_spans(word):
        yield "High Entropy Token", start, end


def _keyword_spans(text: str, lower: str) -> Iterator[tuple[str, int, int]]:
    n = len(text)
    lines: set[int] = set()
    seen: set[tuple[int, int]] = set()
    for keyword in _KEYWORDS:
        i = lower.find(keyword)
        while i >= 0:
            j = i + len(keyword)
            i = lower.find(keyword, i + 1)
            k = j
            while k < n and k - j < 24 and text[k] in _WORD_CHARS:
                k += 1
            q = k
            while q < n and q - k < 2 and text[q] in "'\"]":
                q += 1
            while q < n and q - k < 6 and text[q] in " \t":
                q += 1
            if keyword == "bearer":
                hit = q > k
            elif keyword in _PASSWORD_KEYWORDS or keyword in _PAIR_KEYWORDS:
                hit = q < n  # the rule itself reads what follows (a verb, a sign, a value)
            else:
                verbs = _PASSWORD_VERBS if keyword in ("pass", "pwd") else _VERBS
                hit = q < n and (text[q] in ":=(" or lower.startswith(verbs, q))
            if not hit:
                continue
            ws = j - len(keyword)
            while ws > 0 and (text[ws - 1] in _WORD_CHARS
                              or (text[ws - 1].isalpha() and text[ws - 1] < "\u0530")):
                ws -= 1  # back to the word's start (Latin, Greek, Cyrillic letters too)
            if ws > 0 and text[ws - 1] == "/" and keyword != "p/w":
                continue  # a path segment (``/docs/Pass:Word``), not an assignment
            rule = (keyword in _PASSWORD_KEYWORDS) + 2 * (keyword in _PAIR_KEYWORDS)
            if (ws, rule) in seen and keyword != "bearer":
                continue
            seen.add((ws, rule))
            lines.add(text.rfind("\n", 0, ws) + 1)
            yield from _assignment_spans(text, ws, keyword, j - len(keyword))
    for start in sorted(lines):
        end = text.find("\n", start)
        line = text[start:n if end < 0 else end]
        yield from ((name, start + a, start + b)
                    for name, a, b in _detect_secrets_spans(line, token_only=False))


def _assignment_spans(text: str, ws: int, keyword: str, at: int
                      ) -> Iterator[tuple[str, int, int]]:
    if keyword == "bearer":
        match = _BEARER.match(text, at)
        if match and not _is_placeholder(match.group(1)) and _DIGIT.search(match.group(1)):
            yield "Bearer Token", match.start(1), match.end(1)
        return
    if keyword in _PASSWORD_KEYWORDS:
        if keyword == "pass" and text[max(0, ws - 7):ws].lower() == "mot de ":
            ws -= 7
        yield from _password_spans(text, ws)
        return
    if keyword in _PAIR_KEYWORDS:
        yield from _pair_spans(text, ws)
        return
    match = _KEY_ASSIGN.match(text, ws)
    if match:
        value, offset, length = _strip_value(match.group("value"))
        if _key_value_ok(value):
            start = match.start("value") + offset
            yield "Secret Assignment", start, start + length


def _password_spans(text: str, ws: int) -> Iterator[tuple[str, int, int]]:
    """The password stated after the keyword at `ws`: after up to `_MAX_BETWEEN` words, a
    sign or verb and a value that looks like a password; or a value right after the keyword
    (stricter). The first statement whose value passes is the finding."""
    key = _PASSWORD_KEY.match(text, ws)
    if not key:
        return
    cjk, bare = key.group("cjk") is not None, key.group("bare") is not None
    pos = key.end()
    for hop in range(1 if bare else _MAX_BETWEEN + 1):
        tail = _PASSWORD_TAIL.match(text, pos)
        if tail and (cjk or tail.group("particle") is None):
            value, offset, length = _strip_value(tail.group("value"))
            if _password_value_ok(value, assigned=bool(tail.group("assign")),
                                  next_word=tail.group("next") or ""):
                start = tail.start("value") + offset
                yield "Password Assignment", start, start + length
                return
        if hop == 0:
            plain = _PASSWORD_PLAIN.match(text, pos)
            if plain:
                value, offset, length = _strip_value(plain.group("value"))
                if (_strong_password(value) if bare else (
                        _password_value_ok(value, assigned=False,
                                           next_word=plain.group("next") or "")
                        and (_plain_password_ok(value) or _strong_password(value)))):
                    start = plain.start("value") + offset
                    yield "Password Assignment", start, start + length
                    return
        word = _BETWEEN_WORD.match(text, pos)
        if word is None:
            return
        pos = word.end()


def _pair_spans(text: str, ws: int) -> Iterator[tuple[str, int, int]]:
    """A user name and password pair, a Basic authorization header or a client's password
    flag at `ws`; the user name repeated as the password is a placeholder (``guest/guest``)."""
    for pattern, name in ((_PAIR, "Password Assignment"), (_CLIENT_FLAG, "Password Assignment"),
                          (_MYSQL_FLAG, "Password Assignment")):
        match = pattern.match(text, ws)
        if match is None:
            continue
        value, offset, length = _strip_value(match.group("value"))
        user = match.group("user") if "user" in match.groupdict() else None
        if user is not None and (value.lower() == user.lower() or not _ALPHA.search(user)):
            continue
        if _strong_password(value):
            start = match.start("value") + offset
            yield name, start, start + length
            return
    match = _BASIC_HEADER.match(text, ws)
    if match and _basic_credentials(match.group("value")):
        yield "Basic Auth Header", match.start("value"), match.end("value")


def _basic_credentials(encoded: str) -> bool:
    """Whether `encoded` is base64 of ``user:password`` with a real password (not a
    placeholder, not the user name again)."""
    import base64
    import binascii

    try:
        decoded = base64.b64decode(encoded + "=" * (-len(encoded) % 4), validate=True)
        plain = decoded.decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return False
    user, sep, password = plain.partition(":")
    if not sep or not password or not plain.isprintable():
        return False
    return (password.lower() != user.lower() and not _is_placeholder(password)
            and password.lower() not in _STAND_INS)


# --- detect-secrets ---------------------------------------------------------------------------

_LEFT_OUT = frozenset({"Base64HighEntropyString", "HexHighEntropyString", "IPPublicDetector",
                       "PrivateKeyDetector", "BasicAuthDetector"})
"""Plugins not used: the ad-hoc entropy plugins flag ordinary words (`_high_entropy_spans`
replaces them), a public IP is no credential, and a private-key header alone is a mention
("the PEM starts with -----BEGIN ...") while `_PRIVATE_BLOCK` requires key material; the
basic-auth plugin misses passwords with sub-delimiters (``!``, ``$``) or no user name, so
`_URL_CREDENTIALS` replaces it under the same detector name."""
_QUOTED_ASSIGN = _Pattern(r"""[:=(>]\s*@?['"`]|['"`]\s*[!=]=""")
"""An assignment of a quoted value: every pattern of detect-secrets' keyword plugin has one."""
_LINE_PLUGINS = frozenset({"KeywordDetector", "CloudantDetector", "IbmCloudIamDetector",
                           "IbmCosHmacDetector", "SoftlayerDetector", "AWSKeyDetector"})
"""Plugins that need the words around a value (``aws_secret = "..."``): run on keyword lines."""


@lru_cache(maxsize=1)
def _plugins() -> tuple[Any, ...]:
    """One instance of each detect-secrets plugin we use (built once per process)."""
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class

    classes: list[type[Any]] = list(get_mapping_from_secret_type_to_class().values())
    return tuple(cls() for cls in sorted(classes, key=lambda c: c.__name__)
                 if cls.__name__ not in _LEFT_OUT)


@lru_cache(maxsize=1)
def _shape_plugins() -> tuple[tuple[str, Any], ...]:
    return tuple((str(p.secret_type), p) for p in _plugins()
                 if type(p).__name__ in _TOKEN_PLUGINS_BY_SHAPE)


@lru_cache(maxsize=1)
def _filters() -> tuple[Any, ...]:
    from detect_secrets.filters import heuristic

    return (heuristic.is_sequential_string, heuristic.is_potential_uuid,
            heuristic.is_templated_secret, heuristic.is_prefixed_with_dollar_sign,
            heuristic.is_not_alphanumeric_string)


def _plugin_spans(plugin: Any, name: str, line: str, where: str
                  ) -> Iterator[tuple[str, int, int]]:
    from detect_secrets.filters.heuristic import is_indirect_reference, is_likely_id_string

    for value in plugin.analyze_string(line):
        if not value or any(f(value) for f in _filters()) or _is_placeholder(value):
            continue
        if is_likely_id_string(value, line, plugin):
            continue
        if type(plugin).__name__ == "KeywordDetector" and (
                is_indirect_reference(line) or _ENV_NAME.match(value) or len(value) < 4
                or not _password_value_ok(value, assigned=True, next_word="")):
            continue
        start = where.find(value)
        while start >= 0:
            yield name, start, start + len(value)
            start = where.find(value, start + len(value))


def _detect_secrets_spans(line: str, *, token_only: bool) -> Iterator[tuple[str, int, int]]:
    """detect-secrets' findings in `line`: the token plugins (`token_only`) or the plugins
    that read the words around a value (a keyword line; the keyword plugin only when the
    line has a quote, as all its patterns need one)."""
    if not token_only:
        quoted = bool(_QUOTED_ASSIGN.search(line))
        long_word = any(len(w) >= 24 for w in line.split())
        aws = "aws" in line.lower()
        if not (quoted or long_word):
            return
    for plugin in _plugins():
        kind = type(plugin).__name__
        if (kind in _LINE_PLUGINS) == token_only and kind != "AWSKeyDetector":
            continue
        if not token_only and (
                (kind == "KeywordDetector" and not quoted)
                or (kind == "AWSKeyDetector" and not (aws and long_word))
                or (kind not in ("KeywordDetector", "AWSKeyDetector") and not long_word)):
            continue
        yield from _plugin_spans(plugin, str(plugin.secret_type), line, line)


# --- scanning ---------------------------------------------------------------------------------

_DIGIT = _Pattern(r"\d")
_ALPHA = _Pattern(r"[A-Za-z]")


def _raw_spans(text: str) -> list[tuple[str, int, int]]:
    spans: list[tuple[str, int, int]] = []
    if "PRIVATE KEY" in text or "PuTTY-User-Key" in text or "SSH2 ENCRYPTED" in text:
        for match in _PRIVATE_BLOCK.finditer(text):
            body = match.group("body") or match.group("putty") or match.group("ssh2") or ""
            if _BASE64_RUN.search(body.replace("\\n", "").replace("\n", "").replace("\r", "")):
                spans.append(("Private Key", match.start(), match.end()))
    words = {w.strip(_STRIP) for w in text.split() if len(w) >= _MIN_WORD}
    for word in words:
        if len(word) < _MIN_WORD or not _ALPHA.search(word):
            continue
        if not _DIGIT.search(word) and not _PREFIX.search(word):
            continue
        found = list(_word_spans(word))
        if not found:
            continue
        at = text.find(word)
        while at >= 0:
            spans.extend((name, at + a, at + b) for name, a, b in found)
            at = text.find(word, at + len(word))
    if "://" in text and "@" in text:
        spans.extend(_url_password_spans(text))
    spans.extend(_keyword_spans(text, text.lower()))
    return spans


_GENERIC = {"High Entropy Token": 2, "Secret Assignment": 1, "Password Assignment": 1,
            "Secret Keyword": 1}


def _merge(spans: Iterable[tuple[str, int, int]]) -> list[tuple[str, int, int]]:
    """Overlapping spans become one, named by the most specific detector among them (a
    known token format before an assignment rule before the entropy rule)."""
    out: list[tuple[str, int, int]] = []
    for name, start, end in sorted(spans, key=lambda s: (s[1], -(s[2] - s[1]))):
        if out and start < out[-1][2]:
            prev = out[-1]
            better = _GENERIC.get(name, 0) < _GENERIC.get(prev[0], 0)
            out[-1] = (name if better else prev[0], prev[1], max(prev[2], end))
            continue
        out.append((name, start, end))
    return out


_RIGHT_STOP = frozenset(" \t\r\n\"'`,;:@/\\()[]{}<>|&?")
"""Characters that end a secret's extent (`_whole`); ``=`` and ``.`` do not (padding, JWTs)."""
_LEFT_STOP = _RIGHT_STOP | {"="}


def _whole(text: str, start: int, end: int) -> tuple[int, int]:
    """The span grown to the secret's full extent: on to the next whitespace, quote or
    delimiter on either side (printable ASCII only), so a detector that matched a token's
    head does not leave its tail ("glpat-" + 20 characters of a longer token) beside the
    placeholder, where nothing would recognise it any more."""
    n = len(text)
    while end < n and text[end] not in _RIGHT_STOP and "!" <= text[end] <= "~":
        end += 1
    while start > 0 and text[start - 1] not in _LEFT_STOP and "!" <= text[start - 1] <= "~":
        start -= 1
    return start, end


def scan(text: str, *, field: str = "text") -> list[Finding]:
    """Every secret-shaped value in `text`, in order, overlapping hits merged. Pure.

    Args:
        text: any text (a memory text, an evidence excerpt, a transcript message).
        field: the field path reported in each `Finding`.

    Returns:
        The findings (empty when clean). Spans index into `text`.
    """
    if not text:
        return []
    spans = [(name, *_whole(text, start, end)) for name, start, end in _raw_spans(text)
             if end > start]
    return [Finding(name, _slug(name), field, start, end) for name, start, end in _merge(spans)]


def contains_secret(text: str) -> bool:
    """Whether `scan` finds anything in `text`."""
    return bool(scan(text))


def scan_fields(fields: Mapping[str, str | None]) -> list[Finding]:
    """`scan` each named field (``{"text": ..., "evidence": ...}``); None values are skipped."""
    out: list[Finding] = []
    for name, value in fields.items():
        if value:
            out.extend(scan(value, field=name))
    return out


def check_fields(fields: Mapping[str, str | None], *, action: str = "this write") -> None:
    """Refuse a write whose fields hold a secret.

    Raises:
        SecretDetected: (exit 2) naming detector and field, never the value.
    """
    findings = scan_fields(fields)
    if findings:
        raise SecretDetected(findings, action=action)


def redact(text: str) -> tuple[str, list[Finding]]:
    """`text` with every secret value replaced by ``[REDACTED:<kind>]``, and the findings.

    Idempotent: redacting the result again changes nothing.
    """
    findings = scan(text)
    if not findings:
        return text, []
    parts: list[str] = []
    cursor = 0
    for finding in findings:
        parts.append(text[cursor:finding.start])
        parts.append(PLACEHOLDER.format(kind=finding.kind))
        cursor = finding.end
    parts.append(text[cursor:])
    return "".join(parts), findings


def redact_value(value: Any) -> tuple[Any, int]:
    """A copy of a JSON-able `value` with secrets in every string redacted, and the count.

    Dict keys are kept; lists, tuples and dicts are walked; other values are returned as is.
    """
    if isinstance(value, str):
        clean, findings = redact(value)
        return clean, len(findings)
    if isinstance(value, dict):
        total = 0
        out: dict[Any, Any] = {}
        for key, item in value.items():
            out[key], count = redact_value(item)
            total += count
        return out, total
    if isinstance(value, list | tuple):
        total = 0
        items = []
        for item in value:
            clean, count = redact_value(item)
            items.append(clean)
            total += count
        return items, total
    return value, 0
