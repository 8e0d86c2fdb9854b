"""``scripts/openstack-services.sh databases`` (the MariaDB part of ``start``) against a MariaDB
of the test's own set up as a stock Debian does it: root logs in only by ``unix_socket`` over
the local socket, and over TCP is refused (error 1698). The script gets in as root over the
socket; with no usable socket and root refused, as the ``ZUN_TEST_MARIADB_URL`` account; with
neither, it stops with a clear error. Needs mariadbd (scripts/run-tests.sh installs it) and root;
the server listens on 127.0.0.1:20420 and a socket in /tmp/zun-test-mariadb-*, removed after."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

SCRIPT = Path(__file__).resolve().parents[3] / "scripts" / "openstack-services.sh"
PORT = 20420
DATABASES = {f"zun_os_{name}" for name in ("keystone", "neutron", "placement", "glance")}


def _require() -> None:
    missing = [t for t in ("mariadbd", "mariadb-install-db", "mariadb") if not shutil.which(t)]
    why = f"needs {', '.join(missing)}" if missing else ("needs root" if os.geteuid() != 0 else "")
    if not why:
        return
    if os.environ.get("CI", "").strip().lower() in {"1", "true", "yes"}:
        pytest.fail(f"a MariaDB of the test's own {why} (CI=true: required)", pytrace=False)
    pytest.skip(f"a MariaDB of the test's own {why}")


def _sql(
    server: Any, sql: str, *args: str, env: dict[str, str] | None = None, check: bool = True
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["mariadb", "--no-defaults", *args, "-N", "-e", sql],
        capture_output=True,
        text=True,
        timeout=60,
        check=check,
        env={**os.environ, **(env or {})},
    )


@pytest.fixture(scope="module")
def debian_mariadb() -> Iterator[Any]:
    _require()
    # Not under pytest's temporary directory: that is mode 700 and mariadbd runs as mysql.
    base = Path(tempfile.mkdtemp(prefix="zun-test-mariadb-"))
    data, sock, pid = base / "data", base / "mysqld.sock", base / "mysqld.pid"
    shutil.chown(base, "mysql", "mysql")
    # --no-defaults: nothing of the machine's /etc/mysql (its socket, port and datadir).
    subprocess.run(
        [
            "mariadb-install-db",
            "--no-defaults",
            "--user=mysql",
            f"--datadir={data}",
            "--auth-root-authentication-method=socket",
            "--skip-test-db",
        ],
        check=True,
        capture_output=True,
        timeout=300,
    )
    log = (base / "mariadbd.log").open("wb")
    proc = subprocess.Popen(
        [
            "mariadbd",
            "--no-defaults",
            "--user=mysql",
            f"--datadir={data}",
            f"--socket={sock}",
            f"--port={PORT}",
            "--bind-address=127.0.0.1",
            f"--pid-file={pid}",
            "--skip-log-bin",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    server = SimpleNamespace(socket=str(sock), port=PORT, base=base)
    try:
        deadline = time.monotonic() + 60
        while (
            _sql(
                server,
                "SELECT 1",
                "--protocol=socket",
                f"--socket={sock}",
                "-u",
                "root",
                check=False,
            ).returncode
            != 0
        ):
            assert proc.poll() is None, (base / "mariadbd.log").read_text()[-2000:]
            assert time.monotonic() < deadline, "the test's MariaDB did not start"
            time.sleep(0.3)
        yield server
    finally:
        proc.terminate()
        proc.wait(timeout=60)
        log.close()
        shutil.rmtree(base, ignore_errors=True)


def _script(home: Path, server: Any, **env: str) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if k != "ZUN_TEST_MARIADB_URL"}
    base.update(
        {
            "ZUN_OS_HOME": str(home),
            "ZUN_OS_DB_PORT": str(server.port),
            "ZUN_OS_DB_SOCKET": server.socket,
        }
    )
    base.update(env)
    return subprocess.run(
        [str(SCRIPT), "databases"],
        capture_output=True,
        text=True,
        timeout=120,
        env=base,
        check=False,
    )


def _databases_as_zun_os(home: Path, server: Any) -> set[str]:
    secrets = dict(line.split("=", 1) for line in (home / "secrets.env").read_text().split())
    out = _sql(
        server,
        "SHOW DATABASES",
        "--protocol=tcp",
        "-h",
        "127.0.0.1",
        "-P",
        str(server.port),
        "-u",
        "zun_os",
        env={"MYSQL_PWD": secrets["DB_PASSWORD"]},
    )
    return set(out.stdout.split())


def test_root_by_unix_socket_as_on_a_stock_debian(debian_mariadb: Any, tmp_path: Path) -> None:
    refused = _sql(
        debian_mariadb,
        "SELECT 1",
        "--protocol=tcp",
        "-h",
        "127.0.0.1",
        "-P",
        str(debian_mariadb.port),
        "-u",
        "root",
        check=False,
    )
    assert refused.returncode != 0 and "1698" in refused.stderr  # what `mysql -u root` met
    for _ in range(2):  # idempotent
        done = _script(tmp_path, debian_mariadb)
        assert done.returncode == 0, done.stderr
    assert DATABASES <= _databases_as_zun_os(tmp_path, debian_mariadb)


def test_the_zun_test_mariadb_url_account_then_a_clear_error(
    debian_mariadb: Any, tmp_path: Path
) -> None:
    # zun_os of the previous test (another ZUN_OS_HOME, another password) goes first.
    admin = (
        "DROP USER IF EXISTS 'zun_os'@'127.0.0.1', 'zun_os'@'localhost';"
        "CREATE USER IF NOT EXISTS 'zun_os_admin'@'127.0.0.1' IDENTIFIED BY 'p@ss:w';"
        "GRANT ALL PRIVILEGES ON *.* TO 'zun_os_admin'@'127.0.0.1' WITH GRANT OPTION;"
    )
    _sql(
        debian_mariadb,
        admin,
        "--protocol=socket",
        f"--socket={debian_mariadb.socket}",
        "-u",
        "root",
    )
    no_socket = str(tmp_path / "no-such.sock")
    url = f"mysql+pymysql://zun_os_admin:p%40ss%3Aw@127.0.0.1:{debian_mariadb.port}"
    done = _script(tmp_path, debian_mariadb, ZUN_OS_DB_SOCKET=no_socket, ZUN_TEST_MARIADB_URL=url)
    assert done.returncode == 0, done.stderr
    assert DATABASES <= _databases_as_zun_os(tmp_path, debian_mariadb)

    failed = _script(tmp_path, debian_mariadb, ZUN_OS_DB_SOCKET=no_socket)
    assert failed.returncode == 1
    assert (
        "step 'create databases (as root over the socket, root over TCP: all refused)'"
        in failed.stderr
    )
    assert "1698" in failed.stderr  # the end of the log names root's refusal
