"""The stop signal handler of ``wardian serve`` takes no lock.

A Python signal handler runs in the main thread between two bytecodes. When the signal
reached another thread first, the main thread notices it on waking from
``stop_event.wait`` while it still holds that event's internal lock; a handler that called
``stop_event.set()`` then waited for that lock for ever, and the daemon never stopped (the
kill harness once saw its final daemon miss the 60 s SIGTERM wait beside the parallel suite).
"""

from __future__ import annotations

import signal
import threading

from wardian.invokers.daemon import ScheduleDaemon


def test_the_handler_returns_while_stop_events_lock_is_held() -> None:
    daemon = ScheduleDaemon(drain=False)
    before = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        daemon._install_signals()
        handler = signal.getsignal(signal.SIGTERM)
        assert callable(handler)
        # The lock `stop_event.wait` holds on its way out (an Event's condition lock).
        with daemon.stop_event._cond:  # type: ignore[attr-defined]
            caller = threading.Thread(target=handler, args=(signal.SIGTERM, None))
            caller.start()
            caller.join(60)  # a deadlock guard, not a time budget
            blocked = caller.is_alive()
        caller.join()
        assert not blocked, "the signal handler waits for stop_event's lock"
        daemon._take_signals()  # what the loop does on its next pass
        assert daemon.stop_event.is_set() and not daemon.hurry_event.is_set()
        handler(signal.SIGINT, None)  # a second signal: stop waiting for running runs
        daemon._take_signals()
        assert daemon.hurry_event.is_set()
    finally:
        for sig, previous in before.items():
            signal.signal(sig, previous)
