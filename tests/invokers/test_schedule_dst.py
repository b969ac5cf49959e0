"""DST policy of schedule fire times (issue 8 acceptance: >= 3 IANA zones, daily and hourly cron,
spring-forward and fall-back).

Declared policy (wardian.invokers.schedule): a local time that does not exist fires once at
the first valid instant after the gap; a repeated local time fires once (first occurrence).
The expected fire times are computed here independently, by scanning every UTC minute of the
transition day, so the test does not re-use the code under test.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from wardian.invokers.schedule import ScheduleConfig

# zone -> (spring-forward day, fall-back day, local hour of the gap/repeat) in 2026
ZONES = {
    "America/New_York": ("2026-03-08", "2026-11-01", 2, 1),
    "Europe/Berlin": ("2026-03-29", "2026-10-25", 2, 2),
    "Australia/Sydney": ("2026-10-04", "2026-04-05", 2, 2),
    "Europe/London": ("2026-03-29", "2026-10-25", 1, 1),
    "America/Los_Angeles": ("2026-03-08", "2026-11-01", 2, 1),
}


def _matches(expr: str, wall: datetime) -> bool:
    minute, hour = expr.split()[:2]
    ok_minute = minute == "*" or int(minute) == wall.minute
    ok_hour = hour == "*" or int(hour) == wall.hour
    return ok_minute and ok_hour


def _expected(expr: str, zone_name: str, start: datetime, end: datetime) -> list[datetime]:
    """Brute force over UTC minutes: fire where the local wall clock matches, once per wall
    time (fold 0 only), plus once at the end of a gap that swallowed a matching wall time."""
    zone = ZoneInfo(zone_name)
    out: list[datetime] = []
    moment = start
    prev_local: datetime | None = None
    while moment <= end:
        local = moment.astimezone(zone)
        wall = local.replace(tzinfo=None)
        if prev_local is not None and wall - prev_local > timedelta(minutes=1):
            # A gap: wall times strictly between prev_local and wall never happened.
            probe = prev_local + timedelta(minutes=1)
            while probe < wall:
                if _matches(expr, probe):
                    out.append(moment)
                    break
                probe += timedelta(minutes=1)
        if _matches(expr, wall) and local.fold == 0 and (not out or out[-1] != moment):
            out.append(moment)
        prev_local = wall
        moment += timedelta(minutes=1)
    return out


def _day_window(day: str, zone_name: str) -> tuple[datetime, datetime]:
    zone = ZoneInfo(zone_name)
    local_midnight = datetime.fromisoformat(day).replace(tzinfo=zone)
    start = local_midnight.astimezone(UTC) - timedelta(hours=3)
    return start, start + timedelta(hours=30)


@pytest.mark.parametrize("zone_name", sorted(ZONES))
@pytest.mark.parametrize("transition", ["spring", "fall"])
@pytest.mark.parametrize("kind", ["daily-gap-hour", "hourly-30", "hourly-00"])
def test_fire_times_follow_declared_policy(zone_name: str, transition: str, kind: str) -> None:
    spring, fall, gap_hour, repeat_hour = ZONES[zone_name]
    day = spring if transition == "spring" else fall
    hour = gap_hour if transition == "spring" else repeat_hour
    expr = {"daily-gap-hour": f"30 {hour} * * *", "hourly-30": "30 * * * *",
            "hourly-00": "0 * * * *"}[kind]
    config = ScheduleConfig(cron=expr, timezone=zone_name)
    start, end = _day_window(day, zone_name)
    got = config.fire_times.between(start, end)
    want = _expected(expr, zone_name, start + timedelta(minutes=1), end)
    assert got == want
    assert len(got) == len(set(got)), "duplicate fire time"
    assert got == sorted(got)


def test_spring_forward_gap_fires_at_first_valid_time() -> None:
    config = ScheduleConfig(cron="30 2 * * *", timezone="America/New_York")
    fires = config.fire_times.between(datetime(2026, 3, 7, 12, tzinfo=UTC),
                                      datetime(2026, 3, 9, 12, tzinfo=UTC))
    local = [f.astimezone(config.zone).strftime("%m-%d %H:%M %Z") for f in fires]
    assert local == ["03-08 03:00 EDT", "03-09 02:30 EDT"]


def test_fall_back_repeated_time_fires_once() -> None:
    daily = ScheduleConfig(cron="30 2 * * *", timezone="Europe/Berlin")
    fires = daily.fire_times.between(datetime(2026, 10, 24, 12, tzinfo=UTC),
                                     datetime(2026, 10, 26, 12, tzinfo=UTC))
    assert [f.strftime("%m-%dT%H:%MZ") for f in fires] == ["10-25T00:30Z", "10-26T01:30Z"]
    hourly = ScheduleConfig(cron="30 * * * *", timezone="America/New_York")
    fires = hourly.fire_times.between(datetime(2026, 11, 1, 4, tzinfo=UTC),
                                      datetime(2026, 11, 1, 9, tzinfo=UTC))
    local = [f.astimezone(hourly.zone).strftime("%H:%M %Z") for f in fires]
    assert local == ["00:30 EDT", "01:30 EDT", "02:30 EST", "03:30 EST"]


def test_gap_collapses_several_missing_times_into_one_fire() -> None:
    config = ScheduleConfig(cron="*/20 2 * * *", timezone="Europe/Berlin")
    fires = config.fire_times.between(datetime(2026, 3, 28, 12, tzinfo=UTC),
                                      datetime(2026, 3, 29, 12, tzinfo=UTC))
    assert [f.astimezone(config.zone).strftime("%H:%M") for f in fires] == ["03:00"]


def test_next_fire_times_resume_correctly_from_inside_the_repeated_hour() -> None:
    config = ScheduleConfig(cron="30 * * * *", timezone="Europe/Helsinki")
    # 03:45 in the second (EET) pass of Helsinki's repeated 03:00 hour: APScheduler issue #1021.
    inside = datetime(2017, 10, 29, 3, 45, tzinfo=ZoneInfo("Europe/Helsinki"), fold=1)
    nxt = config.fire_times.upcoming(inside, 3)
    assert [n.astimezone(config.zone).strftime("%H:%M") for n in nxt] == ["04:30", "05:30",
                                                                           "06:30"]


def test_apscheduler_alone_fires_a_repeated_wall_time_twice() -> None:
    """Why we do not hand APScheduler the zone: on its own it runs a daily 02:30 job twice on
    Berlin's fall-back day. If this starts failing, APScheduler changed; re-check the policy."""
    from apscheduler.triggers.cron import CronTrigger  # type: ignore[import-untyped]

    zone = ZoneInfo("Europe/Berlin")
    trigger = CronTrigger.from_crontab("30 2 * * *", timezone=zone)
    now = datetime(2026, 10, 24, 12, tzinfo=UTC).astimezone(zone)
    first = trigger.get_next_fire_time(None, now)
    second = trigger.get_next_fire_time(first, first)
    assert first.date() == second.date()
    assert second.astimezone(UTC) - first.astimezone(UTC) == timedelta(hours=1)
