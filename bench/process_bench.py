"""Whole-process CPU: what one `wardian` process costs, against a bare interpreter.

Each command runs as its own process, exactly as a user or an agent runs it (the installed
``wardian`` script; the hooks as ``wardian hooks install`` writes them), against a data dir
with agent memory on and 200 records. Per round every command runs once, next to
``python -c pass`` in the same round, and its CPU time (user + sys, from ``wait4``, so the
waited-for children count too) is taken: CPU time is what a shared, loaded machine
disturbs least. Printed: the median per command in ms, and as a ratio to the bare
interpreter's median, against the targets:

* the SessionStart and SessionEnd hooks <= 100 ms (they sit on the host's session start
  and end);
* inner ``memory save`` / ``memory recall QUERY`` and ``agent exec A -- true`` <= 150 ms;
* ``wardian --help`` <= 300 ms.

These are budgets a user feels; inside them the code uses the libraries themselves
(`typing`, the MCP SDK's transport) and keeps a fast path only where a budget needs it.

What came back is checked too (the save row, the recalled record, the hook's JSON, the exit
codes), so a fast path that answered differently fails here as well as in the tests.

The inner memory commands hold a capability minted for this process (it stands in for the
``agent exec`` supervisor, as in bench/mcp_bench.py); ``agent exec`` runs from the
operator's side. The package is byte-compiled first, as ``make`` does (the first round,
not counted, warms the caches).

Run: ``.venv/bin/python bench/process_bench.py [--rounds N] [--importtime] [--src DIR]``
(about half a minute; ``--importtime`` prints the 15 slowest imports of each command
instead, ``--profile 'memory save' [--sort tottime] [--only REGEX]`` one command's cProfile;
``--src`` runs another source tree's commands, ``--src OLD --src NEW`` two trees side by
side in the same rounds, for a before/after comparison under the same load).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

TARGETS_MS = {
    "memory save": 150.0,
    "memory recall": 150.0,
    "hook session-start": 100.0,
    "hook session-end": 100.0,
    "agent exec A -- true": 150.0,
    "wardian --help": 300.0,
}
RECORDS = 200

Check = Callable[[subprocess.CompletedProcess[str]], str | None]


def _cpu_run(argv: list[str], env: dict[str, str], cwd: Path, stdin: str,
             extra: list[str] | None = None) -> tuple[float, int, str, str]:
    """Run `argv`; (CPU ms user+sys of it and its waited-for children, exit code, out, err)."""
    with tempfile.TemporaryFile("w+", encoding="utf-8") as out, \
            tempfile.TemporaryFile("w+", encoding="utf-8") as err, \
            tempfile.TemporaryFile("w+", encoding="utf-8") as inp:
        inp.write(stdin)
        inp.seek(0)
        proc = subprocess.Popen((extra or []) + argv, stdin=inp, stdout=out, stderr=err,
                                env=env, cwd=cwd)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return ((usage.ru_utime + usage.ru_stime) * 1000, proc.returncode, out.read(),
                err.read())


Commands = dict[str, tuple[Callable[[int], list[str]], dict[str, str], Callable[[int], str],
                          Check | None]]


def main() -> int:
    """Measure, print, and return 1 when a target or a check fails."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--importtime", action="store_true")
    parser.add_argument("--profile", metavar="COMMAND",
                        help="print the cProfile of one run of COMMAND (a row name, e.g. "
                        "'memory save') instead: the 30 largest cumulative entries")
    parser.add_argument("--sort", default="cumulative", help="--profile: cumulative|tottime")
    parser.add_argument("--only", default="", metavar="REGEX",
                        help="--profile: only entries whose file:line(function) matches")
    parser.add_argument("--src", action="append",
                        help="run the commands from this source tree instead (as "
                        "`python -m wardian` with PYTHONPATH=SRC), e.g. an older checkout's "
                        "src/ for a before/after comparison under the same load; give it "
                        "twice or more to run the trees side by side in the same rounds")
    args = parser.parse_args()
    bindir = Path(sys.executable).parent
    import compileall

    import wardian as package

    trees: list[str | None] = list(args.src or [None])
    # As `make` does after installing: without bytecode (PYTHONDONTWRITEBYTECODE) every
    # process would compile the package again.
    for src in trees:
        compileall.compile_dir(Path(src or Path(package.__file__).parent.parent) / "wardian",
                               quiet=1)
    with tempfile.TemporaryDirectory(prefix="wardian-process-bench-",
                                     ignore_cleanup_errors=True) as tmp:
        home = Path(tmp) / "home"
        work = Path(tmp) / "project"
        (work / ".git").mkdir(parents=True)
        os.environ["WARDIAN_HOME"] = str(home)
        os.environ["CLAUDE_CONFIG_DIR"] = str(Path(tmp) / "claude")
        from wardian._process import current
        from wardian.config import SettingsStore, open_state_db
        from wardian.memory.capabilities import CapabilityStore
        from wardian.memory.db import open_memory_db
        from wardian.memory.models import Scope
        from wardian.memory.store import MemoryStore
        from wardian.runtime.agents import AgentRegistry
        from wardian.runtime.hook_install import install_hooks, installed_hooks

        agent = AgentRegistry(open_state_db()).add("bench", "claude", workspace=str(work))
        settings = SettingsStore(open_state_db())
        settings.set("agent_memory.enabled", "true")
        store = MemoryStore(open_memory_db())
        for i in range(RECORDS):
            store.save(agent.id, f"Bench preference number {i}: keep module m{i} small",
                       evidence=f"user said {i}", kind="stable",
                       scope=Scope.agent() if i % 2 else Scope.workspace(str(work)),
                       actor="bench")
        me = current()
        capabilities = CapabilityStore(store.conn)
        install_hooks("claude-code", agents=["bench"])
        hooks = {h.event: shlex.split(h.command) for h in installed_hooks("claude-code")}
        shell_env = {"PATH": f"{bindir}:/usr/bin:/bin", "HOME": tmp,
                     "WARDIAN_HOME": str(home)}
        for name in ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX"):
            if name in os.environ:  # as the user's shell has them
                shell_env[name] = os.environ[name]
        inner_envs: list[dict[str, str]] = []

        def payload(event: str) -> Callable[[int], str]:
            return lambda n: json.dumps({
                "session_id": f"pb-{n}", "cwd": str(work), "hook_event_name": event,
                "transcript_path": str(Path(tmp) / f"missing-{n}.jsonl"),
                "source": "startup", "reason": "other"})

        def has(text: str) -> Check:
            return lambda p: None if text in p.stdout else f"{text!r} not in {p.stdout!r}"

        def hook_json(p: subprocess.CompletedProcess[str]) -> str | None:
            ctx = json.loads(p.stdout)["hookSpecificOutput"]["additionalContext"]
            return None if "Bench preference" in ctx else "no recall in the hook's context"

        def commands_of(src: str | None, tag: str) -> Commands:
            """The rows run from `src` (None: the installed `wardian`); `tag` keeps the
            saved texts of two trees apart."""
            program = [sys.executable, "-m", "wardian"] if src else [str(bindir / "wardian")]
            base_env = dict(shell_env)
            if src:
                base_env["PYTHONPATH"] = os.path.abspath(src)
            inner_env = base_env | {"WARDIAN_AGENT_ID": agent.id}
            inner_envs.append(inner_env)
            return {
                "python -c pass": (lambda n: [sys.executable, "-c", "pass"], base_env,
                                   lambda n: "", None),
                "memory save": (lambda n: [*program, "memory", "save", "--evidence",
                                           f"bench round {n}",
                                           f"Bench round {n}{tag} saved this"],
                                inner_env, lambda n: "", has("Memory saved")),
                "memory recall": (lambda n: [*program, "memory", "recall",
                                             "module m17 small"],
                                  inner_env, lambda n: "", has("m17")),
                "hook session-start": (lambda n: hooks["session-start"], base_env,
                                       payload("SessionStart"), hook_json),
                "hook session-end": (lambda n: hooks["session-end"], base_env,
                                     payload("SessionEnd"), None),
                "agent exec A -- true": (lambda n: [*program, "agent", "exec", "bench", "--",
                                                    "true"], base_env, lambda n: "", None),
                "wardian --help": (lambda n: [*program, "--help"], base_env, lambda n: "",
                                   has("memory")),
            }

        runs = [commands_of(src, f" (tree {i})" if i else "") for i, src in enumerate(trees)]

        @contextmanager
        def with_capability(env: dict[str, str]) -> Iterator[dict[str, str]]:
            """`env`, with a live capability while it is used when it is an inner one."""
            if not any(env is inner for inner in inner_envs):
                yield env
                return
            token = capabilities.mint(agent.id, pid=me.pid, started_at=me.started_at,
                                      workspace=str(work))
            try:
                yield env | {"WARDIAN_CAPABILITY": token}
            finally:  # `agent exec` refuses below a live capability holder
                capabilities.revoke(token, reason="bench: inner command done")

        if args.importtime or args.profile:
            return _diagnose(runs[0], work, with_capability, args.profile, args.sort,
                            args.only)
        cpu: list[dict[str, list[float]]] = [{name: [] for name in run} for run in runs]
        failures: list[str] = []
        for n in range(args.rounds + 1):  # round 0 writes the bytecode cache
            for index, commands in enumerate(runs):
                # This process holds the inner commands' capability only while they run:
                # a holder of a live capability is a managed launch, and `agent exec` (an
                # operator command) refuses to run below one.
                token = ""
                for name, (argv, env, stdin, check) in commands.items():
                    if any(env is inner for inner in inner_envs):
                        token = token or capabilities.mint(agent.id, pid=me.pid,
                                                           started_at=me.started_at,
                                                           workspace=str(work))
                        env = env | {"WARDIAN_CAPABILITY": token}
                    elif token:
                        capabilities.revoke(token, reason="bench: inner commands done")
                        token = ""
                    ms, code, out, err = _cpu_run(argv(n), env, work, stdin(n))
                    if n:
                        cpu[index][name].append(ms)
                    problem = f"exit {code}: {err.strip()}" if code else None
                    if problem is None and err.strip() and \
                            not err.startswith("Memory loaded · "):
                        problem = f"stderr: {err.strip()}"  # the launch's row is its only one
                    if problem is None and check is not None:
                        problem = check(subprocess.CompletedProcess([], code, out, err))
                    if problem:
                        where = f" [{trees[index]}]" if len(trees) > 1 else ""
                        failures.append(f"{name}{where}: {problem}")
        from wardian.runtime.session_events import drain_lock

        lock = drain_lock()  # let the last detached worker finish before the dir goes
        if lock.acquire(wait_s=30):
            lock.release()
    load = os.getloadavg()[0]
    # One bare interpreter for all the trees: every round ran it once per tree.
    base = statistics.median([ms for rows in cpu for ms in rows.pop("python -c pass")])
    print(f"process bench: CPU time user+sys per whole process, median of {args.rounds} "
          f"rounds, {RECORDS} records; load average {load:.1f} on {os.cpu_count()} CPUs")
    print(f"  {'python -c pass':<22} {base:6.1f} ms  1.0x  (the bare interpreter, same rounds)")
    ok = not failures
    for index, rows in enumerate(cpu):
        if len(trees) > 1:
            print(f" tree {index}: {trees[index]}")
        for name, values in rows.items():
            median = statistics.median(values)
            target = TARGETS_MS[name]
            verdict = "ok" if median <= target else "OVER"
            ok = ok and median <= target
            print(f"  {name:<22} {median:6.1f} ms  {median / base:4.1f}x  target <= "
                  f"{target:.0f} ms ({target / base:.1f}x)  {verdict}   [min {min(values):.1f} "
                  f"max {max(values):.1f}]")
    for failure in sorted(set(failures))[:8]:
        print(f"  check failed: {failure}")
    print("PASS" if ok else "MISS")
    return 0 if ok else 1


def _diagnose(commands: Commands, work: Path,
              with_capability: Callable[[dict[str, str]],
                                        AbstractContextManager[dict[str, str]]],
              profile: str | None, sort: str, only: str) -> int:
    """Print each command's 15 slowest imports (cumulative us) from ``-X importtime``, or
    (`profile` names a command) that command's 30 first cProfile entries by `sort`
    (``cumulative``, ``tottime``), of those whose file:line(function) matches `only`.

    The inner commands hold a live capability here too, so they take their real path."""
    if profile is not None and profile not in commands:
        print(f"--profile: no command {profile!r}; one of {sorted(commands)}")
        return 2
    for name, (argv, env, stdin, _check) in commands.items():
        if profile is not None and name != profile:
            continue

        def runnable(n: int, argv: Callable[[int], list[str]] = argv) -> list[str]:
            command = argv(n)  # the `wardian` script is run by the interpreter:
            return command[1:] if Path(command[0]).name.startswith("python") else command

        with with_capability(env) as run_env, tempfile.TemporaryDirectory() as tmp:
            for warm in (-2, -1):  # other words than round 0's: a save saves anew each time
                _cpu_run(runnable(warm), run_env, work, stdin(warm), extra=[sys.executable])
            stats = Path(tmp) / "profile"
            extra = (["-m", "cProfile", "-o", str(stats)] if profile is not None
                     else ["-X", "importtime"])
            done = subprocess.run([sys.executable, *extra, *runnable(0)], input=stdin(0),
                                  text=True, capture_output=True, env=run_env, cwd=work,
                                  check=False)
            if done.returncode:  # (what came back is the timed rounds' to check)
                print(f"{name}: exit {done.returncode} {done.stderr.strip()[-300:]}")
            if profile is not None:
                import pstats

                pstats.Stats(str(stats)).sort_stats(sort).print_stats(only, 30)
                continue
        rows = []
        for line in done.stderr.splitlines():
            if line.startswith("import time:") and "|" in line:
                parts = line[len("import time:"):].split("|")
                if parts[1].strip().isdigit():
                    rows.append((int(parts[1]), parts[2].rstrip()))
        top = sorted(rows, reverse=True)[:15]
        print(f"{name}: {len(rows)} modules")
        for us, module in top:
            print(f"  {us / 1000:7.1f} ms {module}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
