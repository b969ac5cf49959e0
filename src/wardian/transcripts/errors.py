"""Transcript errors (rooted in `wardian.errors`)."""

from __future__ import annotations

from wardian.errors import NotFoundError, ValidationError

__all__ = ["TranscriptFormatError", "TranscriptNotFound"]


class TranscriptNotFound(NotFoundError):
    """The transcript file does not exist or cannot be read."""


class TranscriptFormatError(ValidationError):
    """The transcript's format is unknown, or `fmt` names no supported format."""
