"""Small shared helpers: UTC timestamps and ids (DESIGN.md "Conventions": UTC ISO-8601 with Z)."""

from __future__ import annotations

import os
from datetime import UTC, datetime

__all__ = ["new_id", "parse_utc", "short_id", "utc_now", "utc_now_iso"]


def host_name() -> str:
    """The name this machine goes by among machines sharing one database:
    ``WARDIAN_HOST_NAME`` when set (e.g. a container whose host name changes), else the
    host name. Read per call; no import (the hooks' hot path records it)."""
    import os

    named = os.environ.get("WARDIAN_HOST_NAME", "").strip()
    if named:
        return named
    if hasattr(os, "uname"):
        return os.uname().nodename
    import socket  # pragma: no cover - Windows

    return socket.gethostname()  # pragma: no cover


def utc_now() -> datetime:
    """The current time, timezone-aware UTC."""
    return datetime.now(UTC)


def utc_now_iso() -> str:
    """The current time as ISO-8601 UTC with microseconds and a ``Z`` suffix."""
    return format_utc(utc_now())


def format_utc(moment: datetime) -> str:
    """Format an aware datetime as ISO-8601 UTC with a ``Z`` suffix (microsecond precision)."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_utc(text: str) -> datetime:
    """Parse a timestamp written by `utc_now_iso` (or any ISO-8601 string) into aware UTC."""
    moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)


def new_id() -> str:
    """A fresh random UUID4 as a string (what ``str(uuid.uuid4())`` returns).

    Built here from `os.urandom` because importing `uuid` (which imports `platform`)
    costs a noticeable share of a `memory save` process's CPU budget (bench/process_bench.py).
    """
    raw = bytearray(os.urandom(16))
    raw[6] = (raw[6] & 0x0F) | 0x40  # version 4
    raw[8] = (raw[8] & 0x3F) | 0x80  # RFC 4122 variant
    h = raw.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def short_id(full_id: str) -> str:
    """The 8-character display form of an id."""
    return full_id[:8]
