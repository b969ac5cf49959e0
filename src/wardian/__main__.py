"""`python -m wardian` runs the CLI: the hot path first (`wardian.cli.hot`), else Typer.

``python -m wardian session _drain`` is also the detached drain worker that a session-event
writer starts (`wardian.runtime.session_events.drain_command`): it runs the drain without
loading the CLI first (a cold worker would spend CPU on Typer), and is the same
command as the hidden ``wardian session _drain``. The runtime names only ``wardian``; this
module, at the top of the dependency order, picks the drain (`wardian.app.drain`).
"""

import sys

if sys.argv[1:] == ["session", "_drain"]:
    from wardian.app.drain import drain_worker

    sys.exit(drain_worker())

from wardian.cli.hot import main

main()
