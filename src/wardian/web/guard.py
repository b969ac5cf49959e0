"""The access guard in front of every Garden request.

Garden shows and changes every agent's memory, so a page must be reachable only by the
operator who started it — not by another local user, not by a web page the operator
happens to visit, and not through DNS rebinding:

* **Access token and a secret base path.** `serve` makes a random token per start. Every
  page lives under a base path derived from it (``/g/<22 characters>``, unguessable; the
  token itself cannot be read back from it) and nothing else is served. The printed URL
  carries the token as ``?token=…`` once; the guard answers with a redirect to the same
  page without it and a session cookie, so the token leaves the address bar and history.
* **A cookie no other port receives.** Browsers send a ``127.0.0.1`` cookie to every port
  of that host, so the cookie is scoped with ``Path=<base path>``: a browser sends it
  only to URLs under the secret base path, which a server on another port (another local
  user's) never learns. Its value is a session key derived from the token (not the token),
  it is ``HttpOnly`` and ``SameSite=Strict``, and every request needs it (or the token),
  compared in constant time; otherwise 403.
* **One-time open codes.** ``--open`` never puts the token on a command line (any local
  user reads those with ``ps``): it opens a private file whose page forwards to
  ``/open/<code>``, a code the guard trades once for the session cookie.
* **Host and Origin.** Only ``127.0.0.1:<port>`` and ``localhost:<port>`` are served (421
  otherwise): a rebinding attacker's page reaches the port under its own host name. A
  request that carries an ``Origin`` other than this server's is refused (403), whatever
  its method.
* **CSRF.** Every POST must carry the form field ``csrf`` equal to this start's CSRF token
  (derived from the access token; pages embed it in their forms).

Responses get a strict Content-Security-Policy (scripts and styles from this server only)
and ``no-store`` caching.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import parse_qsl, urlencode

__all__ = ["CSP", "Guard", "GuardMiddleware", "new_token"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
"""No inline script or style, nothing from elsewhere, no framing."""

_HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-frame-options", b"DENY"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"same-origin"),
    (b"cache-control", b"no-store"),
]


def new_token() -> str:
    """A fresh random access token (256 bits, URL-safe)."""
    return secrets.token_urlsafe(32)


class Guard:
    """The checks, given this start's access token and bound port.

    Args:
        token: the access token printed in the URL.
        port: the port the server is bound to on 127.0.0.1.
    """

    def __init__(self, token: str, port: int) -> None:
        self.token = token
        self.port = port
        self.csrf = _derive(token, b"garden-csrf")
        self.session = _derive(token, b"garden-session")
        self.base = "/g/" + _derive(token, b"garden-base")[:22]
        self.cookie = f"garden_session_{port}"
        self.hosts = {f"127.0.0.1:{port}", f"localhost:{port}"}
        self.origins = {f"http://{host}" for host in self.hosts}
        self._open_codes: set[str] = set()

    def url(self, path: str = "/") -> str:
        """The URL to print: this server, the base path, `path`, and the token."""
        return (f"http://127.0.0.1:{self.port}{self.base}{path}?"
                f"{urlencode({'token': self.token})}")

    def open_url(self) -> str:
        """A URL for a browser command line: a fresh one-time code, not the token."""
        code = secrets.token_urlsafe(32)
        self._open_codes.add(code)
        return f"http://127.0.0.1:{self.port}/open/{code}"

    def redeem(self, code: str) -> bool:
        """Whether `code` is an unspent open code; spends it."""
        for known in list(self._open_codes):
            if hmac.compare_digest(known.encode(), code.encode()):
                self._open_codes.discard(known)
                return True
        return False

    def set_cookie(self) -> bytes:
        """The ``Set-Cookie`` value that starts the session."""
        return (f"{self.cookie}={self.session}; HttpOnly; SameSite=Strict; "
                f"Path={self.base}/").encode()

    def token_ok(self, given: str | None) -> bool:
        """Whether `given` is the access token (constant-time)."""
        return given is not None and hmac.compare_digest(given.encode(), self.token.encode())

    def session_ok(self, given: str | None) -> bool:
        """Whether `given` is this start's session key (constant-time)."""
        return given is not None and hmac.compare_digest(given.encode(),
                                                         self.session.encode())

    def csrf_ok(self, given: str | None) -> bool:
        """Whether `given` is this start's CSRF token (constant-time)."""
        return given is not None and hmac.compare_digest(given.encode(), self.csrf.encode())


def _derive(token: str, purpose: bytes) -> str:
    return hmac.new(token.encode(), purpose, hashlib.sha256).hexdigest()


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", []):
        if key == name:
            return bytes(value).decode("latin-1")
    return None


def _cookie(scope: Scope, name: str) -> str | None:
    raw = _header(scope, b"cookie")
    if not raw:
        return None
    for part in raw.split(";"):
        key, _, value = part.strip().partition("=")
        if key == name:
            return value
    return None


async def _refuse(send: Send, status: int, text: str) -> None:
    body = text.encode()
    await send({"type": "http.response.start", "status": status, "headers": [
        (b"content-type", b"text/plain; charset=utf-8"),
        (b"content-length", str(len(body)).encode()), *_HEADERS,
    ]})
    await send({"type": "http.response.body", "body": body})


async def _start_session(send: Send, guard: Guard, location: str) -> None:
    await send({"type": "http.response.start", "status": 303, "headers": [
        (b"location", location.encode("latin-1")), (b"set-cookie", guard.set_cookie()),
        (b"content-length", b"0"), *_HEADERS,
    ]})
    await send({"type": "http.response.body", "body": b""})


class GuardMiddleware:
    """ASGI middleware applying `Guard` to every HTTP request (see the module docstring).

    The CSRF form field is checked by the POST handlers when they read the form
    (`wardian.web.app`); the Host, token/cookie and Origin checks happen here, before any
    handler runs.
    """

    def __init__(self, app: ASGIApp, guard: Guard) -> None:
        self.app = app
        self.guard = guard

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Refuse or pass the request on, adding the security headers to the response."""
        if scope["type"] != "http":
            if scope["type"] == "lifespan":
                await self.app(scope, receive, send)
            return  # no websockets
        guard = self.guard
        if _header(scope, b"host") not in guard.hosts:
            await _refuse(send, 421, "Refused: wrong Host header. Garden answers only on "
                          f"127.0.0.1:{guard.port} or localhost:{guard.port}.\n")
            return
        origin = _header(scope, b"origin")
        if origin is not None and origin not in guard.origins:
            await _refuse(send, 403, f"Refused: cross-site request from {origin}.\n")
            return
        path = str(scope.get("path", "/"))
        if path.startswith("/open/") and scope.get("method") == "GET":
            if not guard.redeem(path.removeprefix("/open/")):
                await _refuse(send, 403, "Refused: this link was used already or is not "
                              "this start's. Open the URL `wardian garden serve` printed.\n")
                return
            await _start_session(send, guard, guard.base + "/")
            return
        if path != guard.base and not path.startswith(guard.base + "/"):
            await _refuse(send, 403, "Refused: no valid access token. Open the URL that "
                          "`wardian garden serve` printed (it carries ?token=…).\n")
            return
        query = dict(parse_qsl(bytes(scope.get("query_string", b"")).decode("latin-1")))
        if guard.token_ok(query.get("token")):
            # Trade the token in the address bar for the cookie, then show the page.
            rest = {k: v for k, v in query.items() if k != "token"}
            await _start_session(send, guard, path + (f"?{urlencode(rest)}" if rest else ""))
            return
        if not guard.session_ok(_cookie(scope, guard.cookie)):
            await _refuse(send, 403, "Refused: no valid access token. Open the URL that "
                          "`wardian garden serve` printed (it carries ?token=…).\n")
            return
        inner = path.removeprefix(guard.base) or "/"
        scope = {**scope, "path": inner, "raw_path": inner.encode("latin-1")}

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *_HEADERS]
            await send(message)

        await self.app(scope, receive, send_with_headers)
