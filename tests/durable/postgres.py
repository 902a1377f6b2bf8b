"""A real PostgreSQL server for the tests: initdb + pg_ctl in a temporary folder, on 127.0.0.1.

Debian's ``postgresql`` package puts the binaries in ``/usr/lib/postgresql/<version>/bin``
(``.ci/run`` installs it when missing). PostgreSQL refuses to run as root: as root, the
cluster is made and run by the ``postgres`` user (``runuser``), in a folder it owns.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def find_bin_dir() -> Path | None:
    """The folder holding ``initdb`` and ``pg_ctl``, or None when PostgreSQL is absent."""
    for candidate in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True):
        if os.path.exists(os.path.join(candidate, "pg_ctl")):
            return Path(candidate)
    found = shutil.which("pg_ctl")
    return Path(found).parent if found else None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextmanager
def postgres_server() -> Iterator[str]:
    """Start a server with its data in a new temporary folder; yields its URL (user
    ``postgres``, trust authentication, database ``tau_test``); stops it (immediately) and
    removes the folder afterwards. (Not under pytest's ``tmp_path``: as root that is private
    to root, and the server runs as ``postgres``.)"""
    bin_dir = find_bin_dir()
    assert bin_dir is not None
    runner: list[str] = []
    folder = Path(tempfile.mkdtemp(prefix="tau-postgres-"))
    if os.geteuid() == 0:
        runner = ["runuser", "-u", "postgres", "--"]
        shutil.chown(folder, "postgres")
    data, socket_dir, log = folder / "data", folder / "socket", folder / "server.log"
    for path in (data, socket_dir):
        path.mkdir()
        if runner:
            shutil.chown(path, "postgres")
    port = _free_port()

    def run(*args: str) -> None:
        done = subprocess.run([*runner, *args], capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(args[:1])} failed: {done.stderr[-2000:]}")

    run(str(bin_dir / "initdb"), "-D", str(data), "-U", "postgres", "-A", "trust", "-E", "UTF8")
    options = f"-p {port} -k {socket_dir} -c listen_addresses=127.0.0.1 -c fsync=off"
    run(str(bin_dir / "pg_ctl"), "-D", str(data), "-o", options, "-l", str(log), "-w", "start")
    try:
        run(
            str(bin_dir / "createdb"),
            "-h",
            "127.0.0.1",
            "-p",
            str(port),
            "-U",
            "postgres",
            "tau_test",
        )
        yield f"postgresql://postgres@127.0.0.1:{port}/tau_test"
    finally:
        try:
            run(str(bin_dir / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop")
        finally:
            shutil.rmtree(folder, ignore_errors=True)
