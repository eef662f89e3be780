"""A real PostgreSQL server for the tests: initdb in a temporary folder, a free port on
127.0.0.1, started once per test process and stopped at its end.

The server binaries come from Debian's ``postgresql`` package (``.ci/run`` installs it).
``initdb`` refuses to run as root, so as root the cluster belongs to the ``postgres``
system user the package creates. With ``SEF_REQUIRE_POSTGRES=1`` (CI) a missing server
fails the tests that need it instead of skipping them.

Use the ``postgres_dsn`` fixture (``tests/conftest.py``): a DSN string of a fresh
database per test (``postgresql://sef@127.0.0.1:PORT/test_xxx``). ``PostgresServer``
also has ``stop()`` / ``start()`` for tests of a server that goes away and comes back.
"""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from pathlib import Path

import pytest


def _bin(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    cands = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    return cands[-1] if cands else None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def unavailable(reason: str) -> None:
    """Skip, or fail under ``SEF_REQUIRE_POSTGRES=1`` (CI must test, not skip)."""
    if os.environ.get("SEF_REQUIRE_POSTGRES") == "1":
        pytest.fail(f"PostgreSQL required (SEF_REQUIRE_POSTGRES=1) but {reason}")
    pytest.skip(reason)


class PostgresServer:
    """One throw-away PostgreSQL cluster listening on 127.0.0.1:``port``."""

    def __init__(self) -> None:
        initdb, pg_ctl = _bin("initdb"), _bin("pg_ctl")
        if not initdb or not pg_ctl:
            unavailable("PostgreSQL server binaries (initdb, pg_ctl) not found; "
                        "apt-get install postgresql")
        self.initdb, self.pg_ctl = str(initdb), str(pg_ctl)
        self.root = Path(tempfile.mkdtemp(prefix="sef-pg-"))
        self.data = self.root / "data"
        self.port = _free_port()
        self.user = "sef"
        self._as: list[str] = []
        if os.geteuid() == 0:
            self._as = ["runuser", "-u", "postgres", "--"]
            shutil.chown(self.root, "postgres")
            os.chmod(self.root, 0o755)
        self._run([self.initdb, "-D", str(self.data), "-U", self.user, "-A", "trust",
                   "--no-sync", "-E", "UTF8", "--locale=C"])
        with open(self.data / "postgresql.conf", "a") as f:
            f.write(f"\nlisten_addresses = '127.0.0.1'\nport = {self.port}\n"
                    f"unix_socket_directories = '{self.root}'\nfsync = off\n"
                    "max_connections = 100\n")
        self.start()

    def _run(self, cmd: list[str]) -> None:
        out = subprocess.run([*self._as, *cmd], capture_output=True, text=True, timeout=120)
        if out.returncode != 0:
            raise RuntimeError(f"{cmd[0]} failed ({out.returncode}): {out.stderr[-2000:]}")

    def start(self) -> None:
        self._run([self.pg_ctl, "-D", str(self.data), "-l", str(self.root / "log"),
                   "-w", "-t", "60", "start"])
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    return
            except OSError:
                time.sleep(0.1)
        raise RuntimeError(f"PostgreSQL did not listen on port {self.port}")

    def stop(self, mode: str = "fast") -> None:
        self._run([self.pg_ctl, "-D", str(self.data), "-m", mode, "-w", "stop"])

    def dsn(self, dbname: str = "postgres") -> str:
        return f"postgresql://{self.user}@127.0.0.1:{self.port}/{dbname}"

    def create_database(self) -> str:
        """A fresh empty database; returns its DSN."""
        psycopg = pytest.importorskip("psycopg")
        name = "test_" + uuid.uuid4().hex[:12]
        with psycopg.connect(self.dsn(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.dsn(name)

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.stop("immediate")
        shutil.rmtree(self.root, ignore_errors=True)
