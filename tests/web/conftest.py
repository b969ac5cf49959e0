"""Garden's browser fixture: Playwright drives the system Chromium (headless).

Without Chromium a browser test skips with a reason — except under CI=true, where it must
run (`.ci/run` installs Chromium from the distribution's packages).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

CHROMIUM = "/usr/bin/chromium"
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run"]


def chromium_path() -> str:
    """Chromium's path; skips the test when it is missing (outside CI)."""
    if os.path.exists(CHROMIUM) or os.environ.get("CI") == "true":
        return CHROMIUM
    pytest.skip(f"Chromium is not installed at {CHROMIUM} (apt-get install chromium "
                "chromium-driver); under CI=true this test runs and fails instead")


@pytest.fixture
def browser() -> Iterator[Any]:
    """A headless Chromium for the test; closed after it."""
    from playwright.sync_api import sync_playwright

    path = chromium_path()
    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=path, headless=True, args=FLAGS)
        try:
            yield chromium
        finally:
            chromium.close()
