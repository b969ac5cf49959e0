"""Run Garden on 127.0.0.1: bind, print the tokenised URL, serve until interrupted.

Local only (no host option: the socket is bound to 127.0.0.1), a random
access token per start, ``--open`` to open the operator's browser (through a private
launcher file and a one-time code: the token is never on a command line). The caller
(`wardian garden serve`) has already refused a managed process.
"""

from __future__ import annotations

import errno
import signal
import socket
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from wardian.errors import ConflictError, UsageError

if TYPE_CHECKING:
    from wardian.web.guard import Guard

__all__ = ["launcher_page", "serve"]

HOST = "127.0.0.1"


def _bind(port: int) -> socket.socket:
    if not 0 <= port <= 65535:
        raise UsageError(f"--port {port} is out of range", hint="use 1 to 65535, or 0 for any")
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.bind((HOST, port))
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise ConflictError(f"port {port} on {HOST} is already in use",
                                hint="pick another --port, or 0 for a free one") from exc
        raise UsageError(f"cannot listen on {HOST}:{port}: {exc.strerror or exc}",
                         hint="pick another --port, or 0 for a free one") from exc
    # Listening now, before the URL is printed: a browser opened at once is queued until
    # the server accepts, never refused.
    sock.listen(128)
    return sock


def serve(port: int = 0, *, open_browser: bool = False,
          announce: Callable[[str], None] = print) -> int:
    """Serve Garden on 127.0.0.1:`port` (0: a free port) until SIGINT/SIGTERM.

    Args:
        port: the TCP port; 0 lets the system choose.
        open_browser: open the URL in the operator's default browser once listening.
        announce: prints the lines the operator needs (the URL with its token).

    Returns:
        0 after a clean shutdown.

    Raises:
        UsageError: port out of range or not bindable. ConflictError: port in use.
    """
    import uvicorn

    from wardian.web.app import create_app
    from wardian.web.guard import Guard, new_token

    sock = _bind(port)
    bound = sock.getsockname()[1]
    guard = Guard(new_token(), bound)
    config = uvicorn.Config(
        create_app(guard), log_level="warning", access_log=False, lifespan="off",
        server_header=False, date_header=False, proxy_headers=False,
    )
    server = uvicorn.Server(config)
    url = guard.url()
    launcher = _open_in_browser(guard) if open_browser else None
    announce(f"Garden is serving on http://{HOST}:{bound}/ (this machine only).")
    if launcher is not None:
        announce("Opened in the default browser (through a one-time link).")
    announce(f"Open: {url}")
    announce("The token in the URL is this start's access key; stop with Ctrl-C.")
    # uvicorn shuts down gracefully on SIGINT/SIGTERM, then re-raises the signal to the
    # handler that was there before; stopping is this command's normal end, so exit 0.
    previous = signal.signal(signal.SIGTERM, _stop)
    try:
        server.run(sockets=[sock])
    except (KeyboardInterrupt, _Stopped):
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)
        sock.close()
        if launcher is not None:
            launcher.unlink(missing_ok=True)
    announce("Garden stopped.")
    return 0


def launcher_page(guard: Guard) -> str:
    """A page that forwards the browser to a fresh one-time open code of `guard`. Pure
    apart from minting the code."""
    from html import escape

    target = escape(guard.open_url(), quote=True)
    return ("<!doctype html>\n<meta charset=\"utf-8\">\n<title>Wardian Garden</title>\n"
            f"<meta http-equiv=\"refresh\" content=\"0;url={target}\">\n"
            f"<p><a href=\"{target}\">Open Wardian Garden</a></p>\n")


def _open_in_browser(guard: Guard) -> Path:
    """Open Garden in the default browser without the token on any command line.

    The browser's command line (readable by every local user with ``ps``) names only a
    private file (0600, in the data directory's ``run/``); the file forwards to a one-time
    open code that the server trades for the session. Returns the file, removed when the
    server stops.
    """
    import webbrowser

    from wardian._fs import private_dir, write_private
    from wardian.config import data_dir

    launcher = private_dir(data_dir() / "run") / f"garden-{guard.port}.html"
    write_private(launcher, launcher_page(guard))
    webbrowser.open(launcher.as_uri())
    return launcher


class _Stopped(Exception):
    """SIGTERM arrived (re-raised by uvicorn after its graceful shutdown)."""


def _stop(signum: int, frame: object) -> None:
    raise _Stopped
