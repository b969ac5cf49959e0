"""A throwaway PostgreSQL cluster for tests and benchmarks (issue 18).

`Cluster.start` runs the distribution's ``initdb`` and ``pg_ctl`` (``/usr/lib/postgresql/*/
bin``, or on PATH) in a fresh temporary folder, listening on 127.0.0.1 on a free port with
trust authentication for the local superuser ``wardian``; `Cluster.stop` removes it all.
``initdb`` refuses to run as root, so as root the cluster belongs to the ``postgres`` user
(``runuser``). Durability is switched off (fsync, synchronous commit): the data is thrown
away anyway.
"""

from __future__ import annotations

import glob
import os
import shlex
import shutil
import socket
import subprocess
import tempfile
import uuid
from dataclasses import dataclass
from pathlib import Path

USER = "wardian"


def find_bin() -> Path | None:
    """The folder holding ``initdb`` and ``pg_ctl`` (newest version first), or None."""
    for folder in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True):
        if os.access(os.path.join(folder, "initdb"), os.X_OK):
            return Path(folder)
    found = shutil.which("initdb")
    return Path(found).parent if found else None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Cluster:
    """A running cluster: its folder, port and a URL for each database created in it."""

    bindir: Path
    root: Path
    port: int
    owner: str | None

    @property
    def data(self) -> Path:
        return self.root / "data"

    def url(self, database: str = "postgres") -> str:
        """The URL of `database` in this cluster."""
        return f"postgresql://{USER}@127.0.0.1:{self.port}/{database}"

    def _run(self, *args: str) -> subprocess.CompletedProcess[str]:
        command = [str(self.bindir / args[0]), *args[1:]]
        if self.owner is not None:
            command = ["runuser", "-u", self.owner, "--", *command]
        return subprocess.run(command, capture_output=True, text=True, check=False,
                              cwd=self.root, stdin=subprocess.DEVNULL)

    @classmethod
    def start(cls, bindir: Path) -> Cluster:
        """initdb + pg_ctl start in a new temporary folder.

        Raises:
            RuntimeError: initdb or the server failed (with their output).
        """
        root = Path(tempfile.mkdtemp(prefix="wardian-pg-"))
        owner = "postgres" if os.geteuid() == 0 else None
        if owner is not None:
            shutil.chown(root, user=owner)
        cluster = cls(bindir, root, _free_port(), owner)
        done = cluster._run("initdb", "-D", str(cluster.data), "-U", USER, "-A", "trust",
                            "-E", "UTF8", "--locale=C", "--no-sync")
        if done.returncode != 0:
            cluster.remove()
            raise RuntimeError(f"initdb failed: {done.stdout}{done.stderr}")
        options = (f"-p {cluster.port} -k {root} -c listen_addresses=127.0.0.1"
                   " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
                   " -c max_connections=200 -c shared_buffers=32MB")
        done = cluster._run("pg_ctl", "start", "-w", "-t", "60", "-D", str(cluster.data),
                            "-l", str(root / "server.log"), "-o", options)
        if done.returncode != 0:
            log = (root / "server.log").read_text(errors="replace") if (
                root / "server.log").exists() else ""
            cluster.remove()
            raise RuntimeError(f"pg_ctl start failed: {done.stdout}{done.stderr}{log}")
        cluster._stop_with(os.getpid())
        return cluster

    def _stop_with(self, pid: int) -> None:
        """Stop and remove the cluster when process `pid` is gone, also when it is killed
        before its teardown runs: a detached watcher (checks every 2 s) outlives it."""
        pg_ctl = str(self.bindir / "pg_ctl")
        stop = (f"runuser -u {self.owner} -- {pg_ctl}" if self.owner else pg_ctl) + (
            f" stop -D {shlex.quote(str(self.data))} -m immediate -w")
        watcher = (f"while kill -0 {pid} 2>/dev/null && [ -d {shlex.quote(str(self.root))} ];"
                   f" do sleep 2; done; [ -d {shlex.quote(str(self.root))} ] && {{ {stop};"
                   f" rm -rf {shlex.quote(str(self.root))}; }}")
        # The outer shell returns at once; the watcher, in the background, is nobody's child.
        subprocess.run(["sh", "-c", f"nohup sh -c {shlex.quote(watcher)} >/dev/null 2>&1 &"],
                       check=False, stdin=subprocess.DEVNULL)

    def create_database(self, name: str | None = None, template: str | None = None) -> str:
        """A new empty database (optionally copied from `template`); returns its URL."""
        import psycopg

        name = name or f"t_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(self.url(), autocommit=True) as conn:
            extra = f' TEMPLATE "{template}"' if template else ""
            conn.execute(f'CREATE DATABASE "{name}"{extra}'.encode())
        return self.url(name)

    def drop_database(self, url: str) -> None:
        """Drop the database `url` names, ending its connections."""
        import psycopg

        name = url.rsplit("/", 1)[1]
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'.encode())

    def create_role(self, name: str, *, password: str | None = None) -> None:
        """A login role `name` with no privileges beyond PUBLIC's; with `password`, one
        the server asks that password of (a ``pg_hba.conf`` line for it alone, ahead of
        the trust line every other role logs in by)."""
        import time

        import psycopg

        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'CREATE ROLE "{name}" LOGIN'.encode())
            if password is not None:
                conn.execute(f"ALTER ROLE \"{name}\" PASSWORD '{password}'".encode())
        if password is None:
            return
        hba = self.data / "pg_hba.conf"
        hba.write_text(f"host all {name} 127.0.0.1/32 scram-sha-256\n" + hba.read_text())
        self._run("pg_ctl", "reload", "-D", str(self.data))
        wrong = f"postgresql://{name}:not-{password}@127.0.0.1:{self.port}/postgres"
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:  # the reload is signalled, not waited for
            try:
                psycopg.connect(wrong, connect_timeout=5).close()
            except psycopg.OperationalError:
                return
            time.sleep(0.05)
        raise RuntimeError(f"the server did not start asking {name} for a password")

    def drop_role(self, name: str, *databases: str) -> None:
        """Drop the role `name`, first what it owns or was granted in each of `databases`
        (the URLs `url` or `create_database` gave)."""
        import psycopg

        for url in databases:
            with psycopg.connect(url, autocommit=True) as conn:
                conn.execute(f'DROP OWNED BY "{name}"'.encode())
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'DROP OWNED BY "{name}"'.encode())
            conn.execute(f'DROP ROLE "{name}"'.encode())

    def stop(self) -> None:
        """Stop the server at once and remove its folder."""
        self._run("pg_ctl", "stop", "-D", str(self.data), "-m", "immediate", "-w")
        self.remove()

    def remove(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)
