"""Actions for the SIGKILL crash-recovery test, importable in a child process.

* ``test_count`` — appends one line to the file ``with.counter`` (proves how often it ran).
* ``test_block`` — counts too (``with.earlier``, an earlier step's output, is accepted and
  ignored), then, while ``with.block_marker`` exists, writes to the
  FIFO ``with.started`` (the test reads it, so it knows the step is running) and blocks
  reading the FIFO ``with.release`` (nobody writes: the process is killed meanwhile).
"""

from __future__ import annotations

import os
from typing import Any

from wardian.engine.actions import register_action

NAMES = ("test_count", "test_block")


def count(ctx: Any, counter: str) -> dict[str, Any]:
    with open(counter, "a", encoding="utf-8") as handle:
        handle.write(f"{ctx.step_id}\n")
    # long enough for a later step's input to refer to it instead of storing a copy
    return {"counted": ctx.step_id, "lines": [f"{ctx.step_id} counted once"] * 8}


def block(ctx: Any, counter: str, block_marker: str, started: str, release: str,
          earlier: Any = None) -> dict[str, Any]:
    count(ctx, counter)
    if os.path.exists(block_marker):
        with open(started, "w", encoding="utf-8") as fifo:
            fifo.write("running\n")
        with open(release, encoding="utf-8") as fifo:  # blocks until killed
            fifo.read()
    return {"blocked": False}


def register() -> None:
    register_action("test_count", replace=True)(count)
    register_action("test_block", replace=True)(block)


if __name__ == "__main__":
    import sys

    from wardian.engine.executor import execute_run

    register()
    execute_run(sys.argv[1])
