"""The access guard in front of every Garden request.

Garden shows and changes every agent's memory, so a page must be reachable only by the
operator who started it — not by another local user, not by a web page the operator
happens to visit, and not through DNS rebinding:

* **Access token.** `serve` makes a random token per start and prints it in the URL. The
  first request carries it as ``?token=…``; the guard answers with a redirect to the same
  page without it and an ``HttpOnly``, ``SameSite=Strict`` cookie holding it, so the token
  leaves the address bar and history. Every request needs the cookie or the token
  (compared in constant time); otherwise 403.
* **Host header.** Only ``127.0.0.1:<port>`` and ``localhost:<port>`` are served (421
  otherwise): a rebinding attacker's page reaches the port under its own host name.
* **CSRF.** Every POST must carry the form field ``csrf`` equal to this start's CSRF token
  (derived from the access token; pages embed it in their forms), and a present ``Origin``
  must be this server's; otherwise 403. The cookie is ``SameSite=Strict`` too.

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
        self.csrf = hmac.new(token.encode(), b"garden-csrf", hashlib.sha256).hexdigest()
        self.cookie = f"wardian_garden_{port}"
        self.hosts = {f"127.0.0.1:{port}", f"localhost:{port}"}
        self.origins = {f"http://{host}" for host in self.hosts}

    def url(self, path: str = "/") -> str:
        """The URL to print and open: this server, `path`, and the token."""
        return f"http://127.0.0.1:{self.port}{path}?{urlencode({'token': self.token})}"

    def token_ok(self, given: str | None) -> bool:
        """Whether `given` is the access token (constant-time)."""
        return given is not None and hmac.compare_digest(given.encode(), self.token.encode())

    def csrf_ok(self, given: str | None) -> bool:
        """Whether `given` is this start's CSRF token (constant-time)."""
        return given is not None and hmac.compare_digest(given.encode(), self.csrf.encode())


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
        query = dict(parse_qsl(bytes(scope.get("query_string", b"")).decode("latin-1")))
        if guard.token_ok(query.get("token")):
            # Trade the token in the address bar for the cookie, then show the page.
            rest = {k: v for k, v in query.items() if k != "token"}
            location = scope.get("path", "/") + (f"?{urlencode(rest)}" if rest else "")
            await send({"type": "http.response.start", "status": 303, "headers": [
                (b"location", location.encode("latin-1")),
                (b"set-cookie", f"{guard.cookie}={guard.token}; HttpOnly; SameSite=Strict; "
                 "Path=/".encode()),
                (b"content-length", b"0"), *_HEADERS,
            ]})
            await send({"type": "http.response.body", "body": b""})
            return
        if not guard.token_ok(_cookie(scope, guard.cookie)):
            await _refuse(send, 403, "Refused: no valid access token. Open the URL that "
                          "`wardian garden serve` printed (it carries ?token=…).\n")
            return
        if scope.get("method") not in {"GET", "HEAD"}:
            origin = _header(scope, b"origin")
            if origin is not None and origin not in guard.origins:
                await _refuse(send, 403, f"Refused: cross-site request from {origin}.\n")
                return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *_HEADERS]
            await send(message)

        await self.app(scope, receive, send_with_headers)
