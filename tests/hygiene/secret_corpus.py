"""Real-shaped secrets and their near-misses, built at run time (made up for the tests).

`SECRETS` maps a case name to (text, value): `value` is the whole secret, which the
scanner must find and a redaction must remove completely. `NEAR_MISSES` must not be
flagged. Placeholder rule (docs/threat-model.md): a credential slot that holds a
placeholder (a template such as ``${DB_PASS}``/``<password>``, a run of ``x``/``*``, a
well-known stand-in word such as ``password``, ``changeme``, ``secret``, ``example`` or the
user name again, as in ``guest:guest``) is documentation, not a secret.
"""

from __future__ import annotations

import random
import string

_RNG = random.Random(3030)
_AN = string.ascii_letters + string.digits


def _r(n: int, alphabet: str = _AN) -> str:
    return "".join(_RNG.choice(alphabet) for _ in range(n))


def _hex(n: int) -> str:
    return _r(n, "0123456789abcdef")


def _secrets() -> dict[str, tuple[str, str]]:
    out: dict[str, tuple[str, str]] = {}

    def add(name: str, template: str, value: str) -> None:
        out[name] = (template.format(v=value), value)

    # URL credentials, several schemes; the value is the password part.
    add("postgres-bang", "DATABASE_URL is postgres://admin:{v}@db.internal/app", "Sup3rS3cret!")
    add("redis-no-user", "cache at redis://:{v}@cache.internal:6379/0", "r3dIsPw0rd")
    add("mysql", "connect with mysql://root:{v}@10.0.0.5/prod", "hunter2x9")
    add("mongodb-srv", "mongodb+srv://svc:{v}@cluster0.example.net/db", "Xk9pLq2wZ")
    add("amqp", "broker amqp://worker:{v}@mq.local:5672/", "Rabb1t-Pw")
    add("https-basic", "clone https://deploy:{v}@git.example.com/repo.git", "gh8Kd92jQ")
    add("ftp", "ftp://backup:{v}@files.example.org/", "B4ckup!now")
    add("postgres-percent", "postgresql://app:{v}@localhost/app", "p%40ssW0rd")
    add("redis-short", "redis://:{v}@host", "pw4cache")
    # "password" phrasings, several languages.
    add("password-no-verb", "password {v}", "Tr0ub4dor&3")
    add("pass-is", "the wifi pass is {v}", "Qw3rty!9")
    add("password-colon", "the staging password: {v}", "CorrectHorse9")
    add("pwd-assign", "pwd={v}", "Zx81Spectrum")
    add("env-assign", "export PGPASSWORD={v}", "Gh7!kLm2q")
    add("de-ist", "Das Passwort ist {v}", "Geheim#2024")
    add("de-kennwort", "Kennwort: {v}", "Blume7Regen")
    add("de-lautet", "das Passwort lautet {v}", "Sonne99Mond")
    add("fr-colon", "mot de passe : {v}", "Soleil2024!")
    add("fr-est", "le mot de passe est {v}", "Chat9Noir")
    add("fr-mdp", "mdp: {v}", "Fromage#77")
    add("es-es", "la contraseña es {v}", "Gato#2024")
    add("es-colon", "contraseña: {v}", "Perro88Azul")
    add("ja-wa", "パスワードは{v}です", "Sakura2024!")
    add("ja-colon", "パスワード：{v}", "Fuji9San")
    add("ja-space", "パスワードは {v}", "hanabi77x")
    add("it", "la password è {v}", "Pizza2024!")
    add("pt", "a senha é {v}", "Brasil#2024")
    add("nl", "het wachtwoord is {v}", "Fiets99Rood")
    add("ru", "пароль: {v}", "Medved2024")
    add("zh", "密码是 {v}", "Dragon88Fly")
    # Provider tokens (detect-secrets plugin shapes and ours).
    add("aws", "key {v} for deploys", "AKIA" + _r(16, string.ascii_uppercase + "234567"))
    add("github", "token {v}", "ghp_" + _r(36))
    add("gitlab", "the runner uses {v}", "glpat-" + _r(20, _AN + "-_"))
    add("slack", "bot {v}", "xoxb-" + _r(11, string.digits) + "-" + _r(12, string.digits)
        + "-" + _r(24))
    add("stripe", "charge with {v}", "sk_live_" + _r(24))
    add("jwt", "Authorization: Bearer {v}",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0." + _r(43, _AN + "-_"))
    add("npm", "//registry.npmjs.org/:_authToken={v}", "npm_" + _r(36))
    add("pypi", "upload with {v}", "pypi-AgEIcHlwaS5vcmc" + _r(60, _AN + "-_"))
    add("sendgrid", "mail via {v}", "SG." + _r(22, _AN + "-_") + "." + _r(43, _AN + "-_"))
    add("telegram", "bot token {v}", _r(9, string.digits) + ":AA" + _r(33, _AN + "-_"))
    add("mailchimp", "list key {v}", _hex(32) + "-us12")
    add("openai", "OPENAI {v}", "sk-proj-" + _r(48, _AN + "-_"))
    add("anthropic", "use {v}", "sk-ant-api03-" + _r(80, _AN + "-_"))
    add("google", "maps key {v}", "AIza" + _r(35, _AN + "-_"))
    add("huggingface", "HF {v}", "hf_" + _r(34))
    add("square", "square {v}", "sq0csp-" + _r(43, _AN + "-_"))
    add("twilio", "twilio sid {v}", "AC" + _hex(32))
    add("gitlab-hyphen", "runner token {v}", "glpat-" + _r(8) + "-" + _r(11))
    return out


SECRETS = _secrets()

_PLACEHOLDER_URLS = [
    "postgres://user:password@localhost/db",
    "mysql://root:<password>@db.example.com/app",
    "postgres://${DB_USER}:${DB_PASS}@db/app",
    "amqp://guest:guest@localhost:5672/",
    "postgres://app:changeme@localhost/app",
    "redis://:secret@localhost:6379",
    "https://user:xxxxxxxx@example.com/",
    "mongodb://admin:****@mongo:27017",
]

NEAR_MISSES: list[str] = [
    *(f"example connection string {u}" for u in _PLACEHOLDER_URLS),
    "Implement the password reset flow before the release.",
    "pass the test before merging",
    "Our password policy requires 12 characters.",
    "The password must be at least 16 characters long.",
    "A password is required for the admin page.",
    "password protected archives are rejected",
    "the password was rotated yesterday",
    "Read the password from the DB_PASSWORD environment variable.",
    "password=os.environ['DB_PASSWORD']",
    "API_KEY=${API_KEY}",
    "password: ********",
    "The deploy key lives in 1Password item 'Deploy AWS'.",
    "pass --json to get machine-readable output",
    "the bypass flag is --no-verify",
    "the boarding pass is in the email",
    "the pass is valid until Friday",
    "Passing tests: 42 of 42",
    "password hashing uses argon2id with 64 MiB",
    "Das Passwort ist im Tresor gespeichert.",
    "Passwort vergessen? Nutze den Link zum Zurücksetzen.",
    "Die Passwortrichtlinie verlangt 12 Zeichen.",
    "le mot de passe est dans le coffre",
    "mot de passe oublié : voir la procédure",
    "la contraseña es obligatoria",
    "contraseña incorrecta, inténtalo de nuevo",
    "パスワードは必須です",
    "パスワードを変更してください",
    "密码是必需的",
    "Connect to postgres://localhost:5432/app for local tests.",
    "The cache is redis://localhost:6379/0.",
    "See https://github.com/org/repo/pull/1432 for the fix.",
    "Clone ssh://git@github.com/org/repo.git or git@github.com:org/repo.git",
    "The profile page is https://user@example.com/profile.",
    "http://localhost:8080/api?page=2&sort=name",
    "Fixed in commit 9fceb02d0ae598e95dc970b74767f19372d61af8.",
    "Run id 3f2b8c1e-9a4d-4e7b-8c2f-1d6e5a7b9c0d failed at step curate.",
    "Use TokenBucketRateLimiter for the HTTP client.",
    "The token budget is 4096 per request.",
    "The image digest is sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "Release 2.14.0-rc1 ships on Thursday.",
    "the password is the same as on staging",
    "compass heading and passport number fields are optional",
]

SECRETS["redis-pw"] = ("redis://:pw@host", "pw")
_LONG_GITLAB = "glpat-" + _r(20) + "-WDzk" + _r(8)
SECRETS["gitlab-long"] = (f"push with {_LONG_GITLAB} from CI", _LONG_GITLAB)
_JWT_TAIL = "sk-ant-api03-" + _r(40) + "!" + _r(12)
SECRETS["anthropic-bang"] = (f"key={_JWT_TAIL}", _JWT_TAIL)
