"""Run Garden on 127.0.0.1: bind, print the tokenised URL, serve until interrupted.

Local only (no host option: the socket is bound to 127.0.0.1), a random
access token per start, ``--open`` to open the operator's browser. The caller
(`wardian garden serve`) has already refused a managed process.
"""

from __future__ import annotations

import errno
import signal
import socket
from collections.abc import Callable

from wardian.errors import ConflictError, UsageError

__all__ = ["serve"]

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
    announce(f"Garden is serving on http://{HOST}:{bound}/ (this machine only).")
    announce(f"Open: {url}")
    announce("The token in the URL is this start's access key; stop with Ctrl-C.")
    if open_browser:
        import webbrowser

        webbrowser.open(url)
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
    announce("Garden stopped.")
    return 0


class _Stopped(Exception):
    """SIGTERM arrived (re-raised by uvicorn after its graceful shutdown)."""


def _stop(signum: int, frame: object) -> None:
    raise _Stopped
