"""End-to-end fixtures (helpers in `tests.e2e._support`)."""

from __future__ import annotations

from tests.e2e._support import later_transcript, w

__all__ = ["later_transcript", "w"]
