"""Schedule invokers: the config model, fire-time computation and the slot policy.

DESIGN.md "Invokers" (schedules): our ``invokers`` table is the source of truth; APScheduler
3.x triggers are used **only** as fire-time calculators, in memory, inside this module.
Nothing is pickled, no APScheduler job store or scheduler object exists.

Fire times (all returned as aware UTC datetimes, whole milliseconds):

* ``cron EXPR`` — a five-field crontab expression (minute hour day-of-month month
  day-of-week; day-of-week 0 or 7 = Sunday, names ``sun``..``sat`` allowed) evaluated on the
  **wall clock** of the invoker's IANA time zone.
* ``every DURATION`` — a fixed elapsed-time interval (``90s``, ``5m``, ``1h30m``, ``250ms``)
  anchored at the invoker's ``anchor`` instant; wall-clock changes (DST) do not affect it.

DST policy (declared, enforced here, tested in tests/invokers/test_schedule_dst.py):

* A local time that does not exist (spring-forward gap) fires **once, at the first valid
  instant after the gap** (e.g. 02:30 on the New York spring-forward day fires at 03:00
  EDT). Several missing times in one gap collapse into that single fire.
* A local time that occurs twice (fall-back) fires **once**, at its first occurrence.

What APScheduler 3.11 does on its own (verified; the reason we do not hand it the zone):
a nonexistent 02:30 fires at 03:30 (shifted by the gap), and a repeated wall time fires
**twice** (a daily 02:30 job in Europe/Berlin runs at 02:30 CEST and again at 02:30 CET
on the fall-back day; an hourly job runs both 01:30s in New York). APScheduler issues
#1021/#980 also report fire-time loops at fall-back. So the cron trigger here runs in UTC
over *naive wall-clock* values (where no DST exists), and `_wall_to_instant` maps each
wall time to a real instant with the policy above.

Slot policy (`plan_due_slots`): a slot is *missed* when it is later than ``misfire_grace``
(default 5 minutes — never APScheduler's 1 s) at decision time. On-time slots run.
Missed slots follow ``catch_up``: ``none`` skips them (``misfired by N s``); ``latest``
(default) runs one — the newest missed slot, or, when an on-time slot is also due,
coalesces the missed ones into its run; ``all`` runs the newest ``max_catch_up``
missed slots and skips older ones. ``overlap`` (skip|queue|parallel, default skip) decides
what a slot does while the invoker's previous run is still queued or running; the runs of
one catch-up batch never overlap-skip each other (they run one after another).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from wardian._util import format_utc, parse_utc
from wardian.errors import UsageError

__all__ = [
    "CATCH_UP_MODES",
    "DEFAULT_MAX_CATCH_UP",
    "DEFAULT_MISFIRE_GRACE_S",
    "MAX_CATCH_UP_LIMIT",
    "MIN_INTERVAL_S",
    "OVERLAP_MODES",
    "FireTimes",
    "ScheduleConfig",
    "SlotDecision",
    "format_duration",
    "parse_duration",
    "plan_due_slots",
    "slot_key",
]

DEFAULT_MISFIRE_GRACE_S = 300.0
"""Default misfire grace, seconds (5 minutes)."""
DEFAULT_MAX_CATCH_UP = 10
"""Default cap on slots run by ``catch_up=all`` in one catch-up."""
MAX_CATCH_UP_LIMIT = 100
"""Hard upper bound for ``--max-catch-up``."""
MIN_INTERVAL_S = 0.01
"""Smallest ``every`` interval, seconds (sub-second intervals exist for tests and benches)."""
CATCH_UP_MODES = ("none", "latest", "all")
OVERLAP_MODES = ("skip", "queue", "parallel")

_DURATION_RE = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h|d)")
_UNIT_S = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}
_DOW_NAMES = {"sun": 0, "mon": 1, "tue": 2, "wed": 3, "thu": 4, "fri": 5, "sat": 6}
_APS_DOW = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")
_MAX_DST_SHIFT = timedelta(hours=3)


def parse_duration(text: str, *, flag: str = "duration") -> float:
    """Parse ``250ms``, ``90s``, ``5m``, ``2h``, ``1d`` or combinations (``1h30m``) to seconds.

    A bare number means seconds.

    Raises:
        UsageError: the text is not a positive duration.
    """
    raw = text.strip().lower().replace(" ", "")
    if re.fullmatch(r"\d+(\.\d+)?", raw):
        seconds = float(raw)
    else:
        pos, seconds = 0, 0.0
        for match in _DURATION_RE.finditer(raw):
            if match.start() != pos:
                break
            seconds += float(match.group(1)) * _UNIT_S[match.group(2)]
            pos = match.end()
        if pos != len(raw) or not raw:
            raise UsageError(
                f"{flag}: cannot read {text!r} as a duration",
                hint="use a number with a unit: 250ms, 30s, 5m, 2h, 1d or 1h30m",
            )
    if seconds <= 0 or not math.isfinite(seconds):
        raise UsageError(f"{flag}: {text!r} must be longer than zero")
    return seconds


def format_duration(seconds: float) -> str:
    """Render seconds compactly (``300`` → ``5m``, ``0.25`` → ``250ms``, ``5400`` → ``1h30m``)."""
    if seconds < 1:
        return f"{round(seconds * 1000)}ms"
    out, rest = "", seconds
    for unit in ("d", "h", "m"):
        size = _UNIT_S[unit]
        if rest >= size:
            count = int(rest // size)
            out += f"{count}{unit}"
            rest -= count * size
    if rest:
        out += f"{rest:g}s"
    return out or "0s"


def _cron_dow_to_aps(field: str) -> str:
    """Translate a crontab day-of-week field (0/7 = Sunday) into APScheduler names.

    APScheduler 3.x numbers weekdays from Monday = 0 (its ``from_crontab`` warns of this),
    so numbers, ranges and steps are expanded here into an explicit list of names.
    """
    if field in {"*", "?"}:
        return "*"
    days: set[int] = set()
    for item in field.lower().split(","):
        base, _, step_text = item.partition("/")
        step = int(step_text) if step_text else 1
        if step < 1:
            raise ValueError(f"bad step in {item!r}")
        if base in {"*", "?"}:
            lo, hi = 0, 6
        elif "-" in base:
            a, b = base.split("-", 1)
            lo, hi = _dow_value(a), _dow_value(b)
            if hi < lo:
                raise ValueError(f"day-of-week range {base!r} runs backwards")
        else:
            lo = _dow_value(base)
            hi = 6 if step_text else lo
        days.update(d % 7 for d in range(lo, hi + 1, step))
    return ",".join(_APS_DOW[d] for d in sorted(days))


def _dow_value(text: str) -> int:
    if text in _DOW_NAMES:
        return _DOW_NAMES[text]
    value = int(text)
    if not 0 <= value <= 7:
        raise ValueError(f"day of week {value} is outside 0-7")
    return value


def _cron_trigger(expr: str) -> Any:
    """An APScheduler CronTrigger over naive wall-clock time (UTC stands in for 'no DST')."""
    from apscheduler.triggers.cron import CronTrigger  # type: ignore[import-untyped]

    fields = expr.split()
    if len(fields) != 5:
        raise UsageError(
            f"--cron {expr!r} has {len(fields)} fields; a cron expression has five",
            hint="minute hour day-of-month month day-of-week, e.g. '30 2 * * *'",
        )
    minute, hour, day, month, dow = fields
    if day not in {"*", "?"} and dow not in {"*", "?"}:
        raise UsageError(
            f"--cron {expr!r} restricts both day-of-month and day-of-week",
            hint="classic cron ORs them while APScheduler ANDs them; "
            "add two schedules instead so the meaning is unambiguous",
        )
    try:
        return CronTrigger(
            minute=minute, hour=hour, day=day, month=month,
            day_of_week=_cron_dow_to_aps(dow), timezone=UTC,
        )
    except ValueError as exc:
        raise UsageError(
            f"--cron {expr!r} is not a valid cron expression: {exc}",
            hint="minute hour day-of-month month day-of-week, e.g. '0 3 * * 1-5'",
        ) from exc


def _zone(name: str) -> ZoneInfo:
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise UsageError(
            f"--timezone {name!r} is not an IANA time zone",
            hint="use a name such as Europe/Berlin, America/New_York or UTC",
        ) from exc


def _wall_to_instant(wall: datetime, zone: ZoneInfo) -> datetime:
    """Map a naive local wall time to the UTC instant our DST policy fires it at.

    Repeated (ambiguous) times map to their first occurrence (``fold=0``); nonexistent
    times map to the first instant after the gap (found by bisection on whole seconds).
    """
    first = wall.replace(tzinfo=zone, fold=0)
    instant = first.astimezone(UTC)
    if instant.astimezone(zone).replace(tzinfo=None) == wall:
        return instant
    # Nonexistent: fold=0 uses the pre-gap offset (lands after the gap), fold=1 the post-gap
    # offset (lands before it). The transition instant lies between them.
    lo = int(wall.replace(tzinfo=zone, fold=1).timestamp())
    hi = int(instant.timestamp())
    if lo > hi:
        lo, hi = hi, lo
    after_offset = datetime.fromtimestamp(hi, UTC).astimezone(zone).utcoffset()
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if datetime.fromtimestamp(mid, UTC).astimezone(zone).utcoffset() == after_offset:
            hi = mid
        else:
            lo = mid
    return datetime.fromtimestamp(hi, UTC)


def _to_ms(moment: datetime) -> datetime:
    """Round an aware datetime to whole milliseconds in UTC (slot keys must be stable)."""
    ms = round(moment.timestamp() * 1000)
    return datetime.fromtimestamp(ms / 1000, UTC).replace(microsecond=(ms % 1000) * 1000)


def slot_key(moment: datetime) -> str:
    """The stored form of a scheduled time: UTC ISO-8601 with ``Z`` (whole milliseconds)."""
    return format_utc(_to_ms(moment))


class ScheduleConfig:
    """A schedule invoker's clock and policies (stored in the invoker's ``config_json``).

    Args:
        cron: five-field crontab expression, or None when `every_s` is given.
        every_s: interval in seconds (>= `MIN_INTERVAL_S`), or None when `cron` is given.
        timezone: IANA zone the cron expression is read in (default ``UTC``); shown times use it.
        misfire_grace_s: seconds a slot may be late and still count as on time (default 300).
        catch_up: ``none`` | ``latest`` (default) | ``all``.
        max_catch_up: cap for ``all`` (1..`MAX_CATCH_UP_LIMIT`, default 10).
        overlap: ``skip`` (default) | ``queue`` | ``parallel``.
        anchor: UTC ISO instant the interval counts from (the time the invoker was added).

    Raises:
        UsageError: anything invalid, naming the flag to fix.
    """

    def __init__(
        self,
        *,
        cron: str | None = None,
        every_s: float | None = None,
        timezone: str = "UTC",
        misfire_grace_s: float = DEFAULT_MISFIRE_GRACE_S,
        catch_up: str = "latest",
        max_catch_up: int = DEFAULT_MAX_CATCH_UP,
        overlap: str = "skip",
        anchor: str | None = None,
    ) -> None:
        if (cron is None) == (every_s is None):
            raise UsageError("give exactly one of --cron EXPR or --every DURATION")
        if every_s is not None and every_s < MIN_INTERVAL_S:
            raise UsageError(f"--every must be at least {format_duration(MIN_INTERVAL_S)}")
        if misfire_grace_s < 0:
            raise UsageError("--misfire-grace must not be negative")
        if catch_up not in CATCH_UP_MODES:
            raise UsageError(f"--catch-up {catch_up!r} is not one of {', '.join(CATCH_UP_MODES)}")
        if overlap not in OVERLAP_MODES:
            raise UsageError(f"--overlap {overlap!r} is not one of {', '.join(OVERLAP_MODES)}")
        if not 1 <= max_catch_up <= MAX_CATCH_UP_LIMIT:
            raise UsageError(f"--max-catch-up must be between 1 and {MAX_CATCH_UP_LIMIT}")
        self.cron = " ".join(cron.split()) if cron is not None else None
        self.every_s = float(every_s) if every_s is not None else None
        self.timezone = timezone
        self.zone = _zone(timezone)
        self.misfire_grace_s = float(misfire_grace_s)
        self.catch_up: Literal["none", "latest", "all"] = catch_up  # type: ignore[assignment]
        self.max_catch_up = int(max_catch_up)
        self.overlap: Literal["skip", "queue", "parallel"] = overlap  # type: ignore[assignment]
        self.anchor = anchor or format_utc(datetime.now(UTC).replace(microsecond=0))
        try:
            parse_utc(self.anchor)
        except ValueError as exc:
            raise UsageError(f"schedule anchor {self.anchor!r} is not an ISO time") from exc
        self.fire_times = FireTimes(self)
        if self.cron is not None and next(self.fire_times.iter_after(parse_utc(self.anchor)),
                                          None) is None:
            raise UsageError(
                f"--cron {self.cron!r} never fires (no date matches it, e.g. February 30)",
                hint="check the day-of-month and month fields",
            )

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> ScheduleConfig:
        """Rebuild from an invoker's stored ``config`` dict (unknown keys are refused).

        Raises:
            UsageError: the stored config is invalid (names the key).
        """
        allowed = {"cron", "every_s", "timezone", "misfire_grace_s", "catch_up",
                   "max_catch_up", "overlap", "anchor"}
        unknown = sorted(set(config) - allowed)
        if unknown:
            raise UsageError(f"schedule config has unknown keys {unknown}")
        return cls(**config)

    def to_config(self) -> dict[str, Any]:
        """The JSON-ready dict stored in ``config_json``."""
        return {
            "cron": self.cron, "every_s": self.every_s, "timezone": self.timezone,
            "misfire_grace_s": self.misfire_grace_s, "catch_up": self.catch_up,
            "max_catch_up": self.max_catch_up, "overlap": self.overlap, "anchor": self.anchor,
        }

    def describe(self) -> str:
        """Human summary such as ``cron '30 2 * * *' (Europe/Berlin)`` or ``every 5m``."""
        if self.cron is not None:
            return f"cron '{self.cron}' ({self.timezone})"
        return f"every {format_duration(self.every_s or 0)}"


class FireTimes:
    """Fire-time calculator for one `ScheduleConfig` (APScheduler triggers, in memory only)."""

    def __init__(self, config: ScheduleConfig) -> None:
        self.config = config
        if config.cron is not None:
            self._cron = _cron_trigger(config.cron)
            self._interval = None
        else:
            from apscheduler.triggers.interval import (  # type: ignore[import-untyped]
                IntervalTrigger,
            )

            self._cron = None
            self._interval = IntervalTrigger(
                seconds=config.every_s, start_date=parse_utc(config.anchor), timezone=UTC
            )

    def iter_after(self, after: datetime) -> Iterator[datetime]:
        """Fire times strictly after `after` (aware), oldest first, as aware UTC (whole ms).

        One pass, O(number yielded): wall times map monotonically to instants under our
        DST policy, and equal instants (a collapsed gap) are yielded once.
        """
        after = after.astimezone(UTC)
        last = after
        if self._interval is not None:
            raw = self._interval.get_next_fire_time(None, after)
            while raw is not None:
                moment = _to_ms(raw)
                if moment > last:
                    yield moment
                    last = moment
                raw = self._interval.get_next_fire_time(raw, raw)
            return
        zone = self.config.zone
        wall_after = after.astimezone(zone).replace(tzinfo=None)
        # Start a little earlier on the wall clock: around a fall-back, wall times before
        # `wall_after` can map to instants after `after`; the filter drops earlier ones.
        cursor = (wall_after - _MAX_DST_SHIFT).replace(tzinfo=UTC)
        candidate = self._cron.get_next_fire_time(None, cursor)
        while candidate is not None:
            instant = _to_ms(_wall_to_instant(candidate.replace(tzinfo=None), zone))
            if instant > last:
                yield instant
                last = instant
            candidate = self._cron.get_next_fire_time(candidate, candidate)

    def next_after(self, after: datetime) -> datetime:
        """The first fire time strictly after `after` (aware), as aware UTC (whole ms).

        Raises:
            UsageError: the expression never fires again (e.g. ``0 0 30 2 *``).
        """
        moment = next(self.iter_after(after), None)
        if moment is None:
            raise UsageError(f"cron '{self.config.cron}' never fires after {format_utc(after)}")
        return moment

    def between(self, after: datetime, until: datetime, *, limit: int | None = None
                ) -> list[datetime]:
        """Fire times in (`after`, `until`], oldest first, at most `limit` of them."""
        out: list[datetime] = []
        for moment in self.iter_after(after):
            if moment > until or (limit is not None and len(out) >= limit):
                break
            out.append(moment)
        return out

    def upcoming(self, now: datetime, count: int = 5) -> list[datetime]:
        """The next `count` fire times after `now`."""
        out: list[datetime] = []
        for moment in self.iter_after(now):
            out.append(moment)
            if len(out) >= count:
                break
        return out


@dataclass(frozen=True)
class SlotDecision:
    """What to record for one due slot (see `plan_due_slots`).

    Attributes:
        scheduled: the slot's fire time (aware UTC).
        outcome: ``run`` (create and dispatch a run), ``skipped`` or ``coalesced``.
        reason: why it was skipped or coalesced (``misfired by 42 s``, ``overlap: …``).
        late_s: how late the slot was at decision time, seconds.
        into: for ``coalesced``, the scheduled time of the slot whose run covers it.
    """

    scheduled: datetime
    outcome: Literal["run", "skipped", "coalesced"]
    reason: str | None
    late_s: float
    into: datetime | None = None


def plan_due_slots(
    config: ScheduleConfig,
    due: Sequence[datetime],
    now: datetime,
    *,
    busy_run_id: str | None = None,
    disabled: bool = False,
) -> list[SlotDecision]:
    """Decide one outcome for each due slot (pure: no I/O). Implements the policy above.

    Args:
        due: the slots that came due since the last recorded one, oldest first.
        now: the decision time (aware).
        busy_run_id: a run of this invoker still queued or running (for ``overlap``).
        disabled: the invoker was disabled before these slots could fire.

    Returns:
        One `SlotDecision` per slot, in the same order.
    """
    if not due:
        return []
    late = [max(0.0, (now - slot).total_seconds()) for slot in due]
    if disabled:
        return [SlotDecision(s, "skipped", "disabled", lt) for s, lt in zip(due, late, strict=True)]
    grace = config.misfire_grace_s
    on_time = [i for i, lt in enumerate(late) if lt <= grace]
    missed = [i for i, lt in enumerate(late) if lt > grace]
    decisions: dict[int, SlotDecision] = {}
    runs: list[int] = list(on_time)
    if missed:
        if config.catch_up == "none":
            for i in missed:
                decisions[i] = SlotDecision(due[i], "skipped", f"misfired by {late[i]:.0f} s",
                                            late[i])
        elif config.catch_up == "latest":
            target = on_time[0] if on_time else missed[-1]
            if not on_time:
                runs.insert(0, target)
            for i in missed:
                if i != target:
                    decisions[i] = SlotDecision(
                        due[i], "coalesced",
                        f"misfired by {late[i]:.0f} s; coalesced (catch-up latest)",
                        late[i], into=due[target],
                    )
        else:
            keep = missed[-config.max_catch_up:]
            for i in missed:
                if i not in keep:
                    decisions[i] = SlotDecision(
                        due[i], "skipped",
                        f"misfired by {late[i]:.0f} s; over the catch-up cap of "
                        f"{config.max_catch_up}", late[i],
                    )
            runs = sorted(set(runs) | set(keep))
    busy = f"run {busy_run_id[:8]}" if busy_run_id else None
    for i in sorted(runs):
        # Overlap is judged against a run already in flight before this batch; the runs of
        # one batch (a catch-up) execute one after another unless overlap is parallel.
        if busy is not None and config.overlap == "skip":
            decisions[i] = SlotDecision(due[i], "skipped", f"overlap: {busy} still running",
                                        late[i])
            # Coalesced slots that pointed here would point at a run that never exists.
            for j, d in list(decisions.items()):
                if d.outcome == "coalesced" and d.into == due[i]:
                    decisions[j] = SlotDecision(
                        d.scheduled, "skipped",
                        f"misfired by {d.late_s:.0f} s; overlap: {busy} still running", d.late_s,
                    )
            continue
        decisions[i] = SlotDecision(due[i], "run", None, late[i])
    return [decisions[i] for i in range(len(due))]
