"""The shared secret scanner: real-shaped secrets are found, near-misses pass.

Every secret here is built at run time from a prefix and seeded random characters, so no
real-looking credential sits in the source (push protection, and no one can mistake one).
"""

from __future__ import annotations

import base64
import json
import random
import string

import pytest

from wardian.memory.secret_scan import (
    SecretDetected,
    check_fields,
    contains_secret,
    redact,
    redact_value,
    scan,
)

_RNG = random.Random(14)
ALNUM = string.ascii_letters + string.digits
UPPER = string.ascii_uppercase + string.digits
LOWER = string.ascii_lowercase + string.digits
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "-_"


def r(n: int, alphabet: str = ALNUM) -> str:
    """`n` random characters that always mix letters and digits."""
    while True:
        out = "".join(_RNG.choice(alphabet) for _ in range(n))
        if any(c.isdigit() for c in out) and any(c.isalpha() for c in out):
            return out


def _jwt() -> str:
    def part(doc: dict[str, object]) -> str:
        return base64.urlsafe_b64encode(json.dumps(doc).encode()).decode().rstrip("=")
    return ".".join([part({"alg": "HS256", "typ": "JWT"}),
                     part({"sub": r(10), "iat": 1700000000}), r(43, URLSAFE)])


def _private_key(label: str) -> str:
    body = "\n".join(r(64, B64) for _ in range(5))
    return f"-----BEGIN {label}-----\n{body}\n-----END {label}-----"


SECRETS: dict[str, str] = {
    "aws-access-key": "Deploy key is " + "AKIA" + r(16, UPPER),
    "aws-session-key": "use " + "ASIA" + r(16, UPPER) + " for the session",
    "aws-secret-key": 'aws_secret_access_key = "' + r(40, ALNUM + "/+") + '"',
    "github-classic": "token " + "ghp" + "_" + r(36),
    "github-oauth": "gho" + "_" + r(36),
    "github-fine-grained": "github" + "_pat_" + r(22) + "_" + r(59),
    "gitlab": "glpat" + "-" + r(20, URLSAFE),
    "openai-project": "export OPENAI_API_KEY=" + "sk-" + "proj-" + r(48, URLSAFE),
    "openai-legacy": "sk-" + r(20) + "T3Blbk" + "FJ" + r(20),
    "anthropic": "sk-" + "ant-api03-" + r(90, URLSAFE),
    "slack-bot": "xox" + "b-" + str(_RNG.randrange(10**11, 10**12)) + "-"
                 + str(_RNG.randrange(10**12, 10**13)) + "-" + r(24, LOWER),
    "slack-webhook": "https://hooks.slack.com/services/T" + r(8, UPPER) + "/B" + r(8, UPPER)
                     + "/" + r(24),
    "stripe-live": "sk" + "_live_" + r(24),
    "stripe-test": "rk" + "_test_" + r(24),
    "stripe-webhook": "whsec" + "_" + r(32),
    "jwt": "Authorization: Bearer " + _jwt(),
    "rsa-private-key": _private_key("RSA PRIVATE KEY"),
    "openssh-private-key": _private_key("OPENSSH PRIVATE KEY"),
    "pkcs8-private-key": "key file:\n" + _private_key("PRIVATE KEY"),
    "postgres-url": "DATABASE_URL=postgres://app:" + r(16) + "@db.internal:5432/app",
    "mongodb-url": "mongodb+srv://admin:" + r(12) + "@cluster0.example.net/prod",
    "gcp-api-key": "AIza" + r(35, URLSAFE),
    "gcp-oauth-secret": "GOCSPX" + "-" + r(28, URLSAFE),
    "gcp-service-account": '{"type": "service_account", "private_key": "'
                           + _private_key("PRIVATE KEY").replace("\n", "\\n") + '"}',
    "huggingface": "hf" + "_" + r(34),
    "npm": "npm" + "_" + r(36),
    "npmrc": "//registry.npmjs.org/:_authToken=" + "npm" + "_" + r(36),
    "pypi": "pypi-" + "AgEIcHlwaS5vcmc" + r(80, URLSAFE),
    "sendgrid": "SG." + r(22, URLSAFE) + "." + r(43, URLSAFE),
    "twilio": "AC" + r(32, LOWER),
    "telegram": str(_RNG.randrange(10**8, 10**9)) + ":" + r(35, URLSAFE),
    "vault": "VAULT_TOKEN=" + "hvs." + r(90, URLSAFE),
    "digitalocean": "dop" + "_v1_" + r(64, HEX),
    "shopify": "shpat" + "_" + r(32, HEX),
    "age": "AGE-SECRET-KEY-1" + r(58, UPPER),
    "azure-storage": "DefaultEndpointsProtocol=https;AccountName=x;AccountKey="
                     + r(86, B64) + "==",
    "databricks": "dapi" + r(32, HEX),
    "mailgun": "key-" + r(32, HEX),
    "linear": "lin" + "_api_" + r(40),
    "password-prose": "The DB password should always be " + "Tr0ub4dor" + "&3 in staging.",
    "password-is": "the admin password is " + "hunter" + "2",
    "password-for-phrase": "the VPN password for the build farm is " + "Marten-Quill-" + "4096",
    "password-of-our": "btw the password of our guest wifi is " + "Ochre7" + "Lantern",
    "passwd-assign": "passwd=" + "s3cr" + "3t!x",
    "password-quoted": 'password: "' + "correct horse battery" + '"',
    "password-config": "DB_PASSWORD=" + "k9" + r(10),
    "api-key-assign": "API_KEY=" + r(32),
    "high-entropy": "here is the thing: " + r(40, ALNUM + "+/"),
}
"""Kind -> a note holding one real-shaped secret of that kind (>= 30 kinds)."""

NEAR_MISSES: list[str] = [
    "Rotate the API token every 90 days; the token lives in 1Password item 'Deploy AWS'.",
    "Never paste a secret into chat; use the secret manager instead.",
    "Our password policy requires 12 characters and a symbol.",
    "Passwords must be at least 16 characters long.",
    "The password is stored in 1Password, not in the repo.",
    "The password is in the vault under ops/db.",
    "The password for the staging box is in the vault under ops/db.",
    "The password for new accounts is required to have a symbol.",
    "Read the key from the DB_PASSWORD environment variable.",
    "password = os.environ['DB_PASSWORD']",
    'password: "${DB_PASSWORD}"',
    "api_key = 'sk-xxx'",
    "Set OPENAI_API_KEY=sk-... before running the eval.",
    "export GITHUB_TOKEN=<your token>",
    "token: {{ secrets.GITHUB_TOKEN }}",
    "AKIAXXXXXXXXXXXXXXXX is the placeholder used in the docs",
    "Use TokenBucketRateLimiter for the client, not SlidingWindowCounter.",
    "The class is called SecretStoreAdapterFactory.",
    "Run id 3f2b8c1e-9a4d-4e7b-8c2f-1d6e5a7b9c0d failed at step curate.",
    "Fixed in commit 9fceb02d0ae598e95dc970b74767f19372d61af8.",
    "sha256:4c1f0d8a7b2e9f3c6d5a8b1e0f7c2d9a3b6e5f8c1d0a7b4e2f9c6d3a8b5e1f0c",
    "Prefer small commits with tests; squash before merging.",
    "The key insight is that the scheduler must fire once per slot.",
    "see src/wardian/curator/secrets.py for the details",
    "Use pnpm, not npm, in this repo.",
    "The max_tokens=4096 setting is enough for the curator.",
    "token_count = 1200 and secret_sauce = recipe are both fine names",
    "Keyboard shortcuts: ctrl-k opens the command palette.",
    "Docs: https://docs.python.org/3/library/secrets.html#module-secrets",
    "Call https://api.example.com/v2/users?page=3 with the session cookie.",
    "The tokenizer splits on whitespace; authentication happens in middleware.",
    "Auth is handled by the AuthMiddleware2 class in app/auth.py.",
    "Reset your password via the forgot-password link.",
    "The password reset email was delayed by 3 minutes.",
    "test_scan_refuses_github_token_2 and test_password_policy_v2 are flaky",
    "The password must be changed every 90 days.",
    "Release 2.14.0-rc1 ships on Thursday; tag v2.14.0 afterwards.",
    "Use base64 for the payload and a JWT library for the header.",
    "Deploy to eu-west-1 with the prod profile; the bucket is wardian-artifacts-2024.",
    "The IP of the staging box is 10.0.3.17 and the public one changes.",
    "Our secret weapon is good tests.",
    "client_secret: see the Google console (project wardian-dev)",
    "The PEM file starts with -----BEGIN RSA PRIVATE KEY----- and must stay out of git.",
]
"""Notes that mention secrets, keys, tokens and passwords without holding one (>= 30)."""


def test_there_are_enough_cases() -> None:
    assert len(SECRETS) >= 30
    assert len(NEAR_MISSES) >= 30


@pytest.mark.parametrize("kind", sorted(SECRETS))
def test_real_shaped_secret_is_found(kind: str) -> None:
    assert scan(SECRETS[kind]), f"{kind} not detected"


@pytest.mark.parametrize("text", NEAR_MISSES)
def test_near_miss_passes(text: str) -> None:
    found = scan(text)
    assert found == [], [(f.detector, text[f.start:f.end]) for f in found]


@pytest.mark.parametrize("kind", sorted(SECRETS))
def test_redaction_removes_the_value_and_is_idempotent(kind: str) -> None:
    text = SECRETS[kind]
    clean, findings = redact(text)
    assert findings and "[REDACTED:" in clean
    for finding in findings:
        assert text[finding.start:finding.end] not in clean
    assert not contains_secret(clean), clean
    assert redact(clean) == (clean, [])


def test_finding_names_detector_and_field_never_the_value() -> None:
    key = "AKIA" + r(16, UPPER)
    with pytest.raises(SecretDetected) as caught:
        check_fields({"text": "ok", "evidence": f"the key is {key}"}, action="memory save")
    message = caught.value.render()
    assert key not in message
    assert "AWS Access Key in evidence" in message
    assert "1Password" in message
    assert caught.value.exit_code == 2


def test_password_value_is_redacted_but_the_sentence_stays() -> None:
    clean, _ = redact("The DB password should always be " + "Tr0ub4dor" + "&3 in staging.")
    assert clean == "The DB password should always be [REDACTED:password-assignment] in staging."


def test_redact_value_walks_json_and_counts() -> None:
    token = "ghp" + "_" + r(36)
    doc = {"a": [f"x {token}", {"b": token}], "n": 3, "ok": "fine"}
    clean, count = redact_value(doc)
    assert count == 2
    assert token not in json.dumps(clean)
    assert clean["n"] == 3 and clean["ok"] == "fine"


def test_plain_text_never_imports_detect_secrets() -> None:
    import subprocess
    import sys

    code = ("import sys; from wardian.memory.secret_scan import scan; "
            "assert scan('Prefer small commits with tests, then squash.') == []; "
            "print('detect_secrets' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=60).stdout.strip()
    assert out == "False"
