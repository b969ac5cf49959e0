"""Garden's display helpers: ages, exact times, paths from ~ (pure functions)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from wardian.web.render import age, exact_time, home_relative, render

NOW = datetime(2026, 12, 7, 12, 0, 0, tzinfo=UTC)


def _ago(**delta: float) -> str:
    return (NOW - timedelta(**delta)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@pytest.mark.parametrize(("delta", "shown"), [
    ({"seconds": 5}, "just now"), ({"seconds": -300}, "just now"),
    ({"minutes": 1}, "1 minute ago"), ({"minutes": 59}, "59 minutes ago"),
    ({"hours": 1}, "1 hour ago"), ({"hours": 23}, "23 hours ago"),
    ({"days": 1}, "1 day ago"), ({"days": 3}, "3 days ago"), ({"days": 30}, "30 days ago"),
    ({"days": 59}, "59 days ago"), ({"days": 60}, "2 months ago"),
    ({"days": 364}, "12 months ago"), ({"days": 365}, "1 year ago"),
    ({"days": 800}, "2 years ago"),
])
def test_ages(delta: dict[str, float], shown: str) -> None:
    assert age(_ago(**delta), NOW) == shown


def test_missing_or_odd_times() -> None:
    assert age(None, NOW) == "never" and age("", NOW) == "never"
    assert age("not a time", NOW) == "not a time"
    assert exact_time("2026-12-07T01:21:57.123456Z") == "2026-12-07 01:21:57 UTC"
    assert exact_time("2026-12-07T02:21:57+01:00") == "2026-12-07 01:21:57 UTC"
    assert exact_time(None) == ""


def test_paths_from_home() -> None:
    assert home_relative("/home/me/src/app", "/home/me") == "~/src/app"
    assert home_relative("/home/me", "/home/me/") == "~"
    assert home_relative("/home/meadow/x", "/home/me") == "/home/meadow/x"
    assert home_relative("/srv/project", "/home/me") == "/srv/project"
    assert home_relative("/srv/project", "/") == "/srv/project"
    assert home_relative(None, "/home/me") == ""


def test_ids_are_short_with_the_full_id_kept() -> None:
    full = "0123abcd-0000-4000-8000-00000000beef"
    stale = type("Stale", (), {})()
    record = {"id": full, "kind": "current", "scope": {"kind": "agent"},
              "updated_at": "2026-11-01T00:00:00.000000Z", "text": "<b>not html</b>"}
    stale.record = type("R", (), record)()
    queue = {"agent_id": "a" * 36, "name": "ada", "review_days": 14, "total": 1,
             "stale": [stale], "flagged": [], "reviews": []}
    page = render("queue.html.j2", {"csrf": "c", "path": "/queue", "base": "/g/x",
                                    "title": "Review queue", "queues": [queue]})
    assert f'data-id="{full}">0123abcd</a>' in page
    assert f'data-copy="{full}"' in page and f'title="{full}"' in page
    assert '<time datetime="2026-11-01T00:00:00.000000Z" title="2026-11-01 00:00:00 UTC">' in page
    assert "&lt;b&gt;not html&lt;/b&gt;" in page
